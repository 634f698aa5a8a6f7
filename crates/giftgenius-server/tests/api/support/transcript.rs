//! A transcript of real HTTP traffic, for the proof of issue 25 (docs/acp.md "Transcripts"):
//! every request a test sends through [`Transcript::send`] is sent for real and written down
//! with its answer — method, path, status, the headers that matter (Idempotency-Key,
//! Idempotent-Replayed, Request-Id, …), bodies as pretty JSON — with secrets redacted (bearer
//! keys, card number and CVC, vault tokens, permalink tags: whatever the test registers with
//! [`Transcript::redact`]). Webhook requests a [`Receiver`](super::Receiver) saw are written
//! down the same way. Nothing is written unless `GIFTGENIUS_ACP_TRANSCRIPT_DIR` names a
//! folder: then [`Transcript::finish`] writes `<name>.md` (the transcript) and `<name>.json`
//! (every JSON object exchanged, with what it is, for validating against the spec's own JSON
//! Schemas out of tree). The test asserts each step itself; this only records.

use std::fmt::Write as _;
use std::sync::Mutex;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use super::receiver::Seen;

/// The folder transcripts are written to, when set.
const TRANSCRIPT_DIR_ENV: &str = "GIFTGENIUS_ACP_TRANSCRIPT_DIR";

/// Request headers worth showing (all others are transport noise).
const REQUEST_HEADERS: [&str; 8] = [
    "authorization",
    "api-version",
    "content-type",
    "idempotency-key",
    "request-id",
    "accept-language",
    "mcp-session-id",
    "accept",
];

/// Response headers worth showing.
const RESPONSE_HEADERS: [&str; 8] = [
    "content-type",
    "request-id",
    "idempotency-key",
    "idempotent-replayed",
    "retry-after",
    "www-authenticate",
    "mcp-session-id",
    "cache-control",
];

/// Object fields whose values are secrets wherever they appear (card data).
const SECRET_FIELDS: [(&str, &str); 3] = [("number", "4242…[redacted]"), ("cvc", "***"), ("cryptogram", "[redacted]")];

/// One answer, as the test needs it.
pub struct Exchange {
    pub status: StatusCode,
    pub headers: HeaderMap,
    /// The body as JSON (`null` when it was not JSON).
    pub body: Value,
}

impl Exchange {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

#[derive(Default)]
struct Inner {
    markdown: String,
    secrets: Vec<(String, String)>,
    recorded: Vec<Value>,
    rows: Vec<[String; 4]>,
}

/// A transcript being written (by several concurrent requests, hence the lock).
pub struct Transcript {
    name: String,
    inner: Mutex<Inner>,
}

impl Transcript {
    /// A transcript to be written as `<name>.md` / `<name>.json`, opening with `title` and `intro`.
    pub fn new(name: &str, title: &str, intro: &str) -> Transcript {
        let markdown = format!("# {title}\n\n{intro}\n");
        Transcript { name: name.to_string(), inner: Mutex::new(Inner { markdown, ..Inner::default() }) }
    }

    /// `secret` is written as `shown_as`, wherever it appears (before or after this call: the
    /// files are redacted as a whole when written).
    pub fn redact(&self, secret: &str, shown_as: &str) {
        if !secret.is_empty() {
            self.inner.lock().unwrap().secrets.push((secret.to_string(), shown_as.to_string()));
        }
    }

    /// A heading and a paragraph.
    pub fn step(&self, heading: &str, text: &str) {
        let mut inner = self.inner.lock().unwrap();
        let _ = write!(inner.markdown, "\n## {heading}\n\n");
        if !text.is_empty() {
            let _ = writeln!(inner.markdown, "{text}");
        }
    }

    /// A paragraph.
    pub fn note(&self, text: &str) {
        let _ = write!(self.inner.lock().unwrap().markdown, "\n{text}\n");
    }

    /// A row of the summary table (request, answer, status, what it shows).
    pub fn row(&self, request: &str, answer: &str, status: &str, shows: &str) {
        self.inner.lock().unwrap().rows.push([request, answer, status, shows].map(str::to_string));
    }

    /// Remembers `body` as a `kind` (the spec's `$defs` name it should satisfy) for validation.
    pub fn record(&self, kind: &str, step: &str, body: &Value) {
        let body = scrub(body);
        self.inner.lock().unwrap().recorded.push(json!({"kind": kind, "step": step, "body": body}));
    }

    /// Sends `request`, writes it and its answer down; `kinds` names what the request and the
    /// answer's bodies are (`None` = do not record that side for validation).
    pub async fn send(&self, request: reqwest::RequestBuilder, kinds: (Option<&str>, Option<&str>)) -> Exchange {
        let (client, request) = request.build_split();
        let request = request.expect("a well-formed request");
        let sent_body: Option<Value> =
            request.body().and_then(|b| b.as_bytes()).map(|b| serde_json::from_slice(b).unwrap_or(Value::Null));
        let line = format!("{} {}", request.method(), path_of(request.url()));
        let sent_headers = headers(request.headers(), &REQUEST_HEADERS);
        let response = client.execute(request).await.expect("the request is answered");
        let status = response.status();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap_or_default();
        let body = json_of_text(&text);
        let mut out = format!("```http\n{line}\n{sent_headers}");
        if let Some(sent) = &sent_body {
            let _ = write!(out, "\n{}\n", pretty(sent));
        }
        let _ = write!(out, "```\n\n```http\nHTTP/1.1 {status}\n{}", self::headers(&headers, &RESPONSE_HEADERS));
        if !text.is_empty() {
            let _ = write!(out, "\n{}\n", if body.is_null() { text.clone() } else { pretty(&body) });
        }
        out.push_str("```\n");
        let step = line.clone();
        if let (Some(kind), Some(sent)) = (kinds.0, &sent_body) {
            self.record(kind, &step, sent);
        }
        if let Some(kind) = kinds.1 {
            self.record(kind, &format!("{step} → {}", status.as_u16()), &body);
        }
        let _ = write!(self.inner.lock().unwrap().markdown, "\n{out}");
        Exchange { status, headers, body }
    }

    /// A webhook request the receiver saw, how it was verified and answered.
    pub fn webhook(&self, seen: &Seen, secret_name: &str) {
        let body = pretty(&seen.body);
        let verified = if seen.signature_ok {
            format!(
                "Receiver: `v1` = hex(HMAC-SHA256({secret_name}, \"{}.\" + raw body)) ✓ (recomputed with the `hmac` \
                 crate, not the server's code); `t` within ±300 s of the receiver's clock ✓; answered **{}**.",
                seen.t, seen.answered
            )
        } else {
            format!("Receiver: signature **not** verified; answered {}.", seen.answered)
        };
        let out = format!(
            "```http\nPOST /order-events\ncontent-type: {}\nmerchant-signature: {}\nrequest-id: {}\ntimestamp: {}\n\n{body}\n```\n\n{verified}\n",
            seen.content_type, seen.signature, seen.request_id, seen.timestamp_header
        );
        let _ = write!(self.inner.lock().unwrap().markdown, "\n{out}");
        self.record("OrderWebhookEvent", &format!("webhook {}", seen.body["type"]), &seen.body);
    }

    /// Writes the files when [`TRANSCRIPT_DIR_ENV`] is set; returns the markdown in any case.
    pub fn finish(self) -> String {
        let inner = self.inner.into_inner().unwrap();
        let redact =
            |text: String| inner.secrets.iter().fold(text, |text, (secret, shown)| text.replace(secret, shown));
        let mut markdown = inner.markdown;
        if !inner.rows.is_empty() {
            let mut table =
                String::from("\n## Summary\n\n| # | request | answer | status | shows |\n|---|---|---|---|---|\n");
            for (i, [request, answer, status, shows]) in inner.rows.iter().enumerate() {
                let _ = writeln!(table, "| {} | {request} | {answer} | {status} | {shows} |", i + 1);
            }
            // The summary goes right after the introduction.
            let at = markdown.find("\n## ").unwrap_or(markdown.len());
            markdown.insert_str(at, &table);
        }
        let markdown = redact(markdown);
        if let Some(dir) = std::env::var_os(TRANSCRIPT_DIR_ENV) {
            let dir = std::path::PathBuf::from(dir);
            std::fs::create_dir_all(&dir).expect("the transcript folder");
            std::fs::write(dir.join(format!("{}.md", self.name)), &markdown).expect("write the transcript");
            let recorded = redact(serde_json::to_string_pretty(&inner.recorded).expect("JSON"));
            std::fs::write(dir.join(format!("{}.json", self.name)), recorded).expect("write the recorded objects");
        }
        markdown
    }
}

/// The `shown` headers of `headers`, one a line (the bearer key never).
fn headers(headers: &HeaderMap, shown: &[&str]) -> String {
    let mut out = String::new();
    for name in shown {
        for value in headers.get_all(*name) {
            let value = value.to_str().unwrap_or("(not text)");
            let value = if *name == "authorization" { "Bearer [redacted]" } else { value };
            let _ = writeln!(out, "{name}: {value}");
        }
    }
    out
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(&scrub(value)).expect("JSON")
}

/// `value` with its card fields masked, wherever they are.
fn scrub(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| match SECRET_FIELDS.iter().find(|(field, _)| field == k) {
                    Some((_, shown)) if v.is_string() => (k.clone(), Value::String((*shown).to_string())),
                    _ => (k.clone(), scrub(v)),
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(scrub).collect()),
        other => other.clone(),
    }
}

/// The path and query of `url` (the host is a random local port, noise in a transcript).
fn path_of(url: &reqwest::Url) -> String {
    match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_string(),
    }
}

/// JSON of a body: plain JSON, or the `data:` lines of an SSE stream (an MCP answer).
fn json_of_text(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| {
        let data: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).collect();
        data.iter().rev().find_map(|d| serde_json::from_str(d).ok()).unwrap_or(Value::Null)
    })
}
