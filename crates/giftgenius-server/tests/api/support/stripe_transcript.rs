//! The Stripe flows' transcripts (issue 26's "Must show"; docs/stripe.md "Transcripts"): with
//! `GIFTGENIUS_STRIPE_TRANSCRIPT_DIR=<folder>`, [`LocalStripe`](super::LocalStripe) puts a
//! recording proxy in front of localstripe and the tests point `--stripe-api-base` at it. It
//! forwards every request and answer verbatim and writes down what our server asked Stripe —
//! method, path with query, `Idempotency-Key`, the form fields, the status and what the answer
//! was about — never a header's value otherwise (the secret key is the `Authorization` header).
//! A flow test ends with [`Recorder::write`]: `<name>.md`, the requests in order (with the
//! test's step marks between them) and what localstripe holds afterwards, read from its API.
//! Without the variable there is no proxy and the tests talk to localstripe directly.
//!
//! The proxy runs on its own thread and runtime: some flows block the test's runtime on a child
//! process (`reconcile_command`) that talks to Stripe through it.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{CONNECTION, CONTENT_LENGTH, HOST, TRANSFER_ENCODING};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::Value;

/// The folder transcripts are written to, when set.
const TRANSCRIPT_DIR_ENV: &str = "GIFTGENIUS_STRIPE_TRANSCRIPT_DIR";

/// The folder to write transcripts to, if the run asks for them.
pub fn transcript_dir() -> Option<PathBuf> {
    std::env::var_os(TRANSCRIPT_DIR_ENV).filter(|d| !d.is_empty()).map(PathBuf::from)
}

/// One line of the record: a request our server made, or a step the test marked.
enum Entry {
    Step(String),
    Request {
        method: String,
        path: String,
        idempotency_key: Option<String>,
        form: Vec<(String, String)>,
        answer: String,
    },
}

struct Shared {
    upstream: String,
    http: reqwest::Client,
    entries: Mutex<Vec<Entry>>,
}

/// A recording proxy in front of localstripe; stopped on drop.
pub struct Recorder {
    pub url: String,
    dir: PathBuf,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Recorder {
    /// A proxy forwarding to `upstream` (localstripe's base URL), writing into `dir`.
    pub fn start(upstream: &str, dir: PathBuf) -> Recorder {
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        listener.set_nonblocking(true).expect("a non-blocking listener");
        let url = format!("http://{}", listener.local_addr().expect("its address"));
        let http = reqwest::Client::builder().no_proxy().build().expect("an HTTP client");
        let shared = Arc::new(Shared { upstream: upstream.to_string(), http, entries: Mutex::new(Vec::new()) });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let state = shared.clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
                let app = axum::Router::new().fallback(forward).with_state(state);
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        let _ = stopped.await;
                    })
                    .await;
            });
        });
        Recorder { url, dir, shared, stop: Some(stop) }
    }

    /// Marks a step of the flow between the requests.
    pub fn step(&self, text: &str) {
        self.shared.entries.lock().unwrap().push(Entry::Step(text.to_string()));
    }

    /// Writes `<name>.md`: `title`, `intro`, the requests so far and what localstripe holds.
    pub async fn write(&self, name: &str, title: &str, intro: &str) {
        let mut md = format!("# {title}\n\n{intro}\n\n## Requests our server made to Stripe, in order\n");
        let (mut n, mut quiet_step) = (0, false);
        for entry in self.shared.entries.lock().unwrap().iter() {
            match entry {
                Entry::Step(text) => {
                    if quiet_step {
                        md.push_str("(no request to Stripe)\n");
                    }
                    let _ = write!(md, "\n### {text}\n\n");
                    quiet_step = true;
                }
                Entry::Request { method, path, idempotency_key, form, answer } => {
                    n += 1;
                    quiet_step = false;
                    let key =
                        idempotency_key.as_deref().map(|k| format!(" · Idempotency-Key `{k}`")).unwrap_or_default();
                    let _ = writeln!(md, "{n}. `{method} {path}`{key} → {answer}");
                    for (field, value) in form {
                        let _ = writeln!(md, "   - `{field}` = `{value}`");
                    }
                }
            }
        }
        if quiet_step || n == 0 {
            md.push_str("(no request to Stripe)\n");
        }
        md.push_str("\n## What localstripe holds afterwards\n");
        md.push_str(&self.holdings().await);
        let path = self.dir.join(format!("{name}.md"));
        std::fs::write(&path, md).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    }

    /// localstripe's Customers, their cards and charges, SetupIntents, PaymentIntents and their
    /// refunds, as Markdown tables.
    async fn holdings(&self) -> String {
        let customers = self.list("/v1/customers", &[]).await;
        let mut md = table(
            "Customers",
            &["id", "metadata", "default payment method"],
            customers.iter().map(|c| {
                vec![code(&c["id"]), code_json(&c["metadata"]), code(&c["invoice_settings"]["default_payment_method"])]
            }),
        );
        let (mut cards, mut charges) = (Vec::new(), Vec::new());
        for customer in &customers {
            let id = customer["id"].as_str().unwrap_or_default();
            cards.extend(self.list("/v1/payment_methods", &[("customer", id), ("type", "card")]).await);
            charges.extend(self.list("/v1/charges", &[("customer", id)]).await);
        }
        md += &table(
            "PaymentMethods attached",
            &["id", "customer", "card"],
            cards.iter().map(|p| {
                let card = format!("{} •••• {}", text(&p["card"]["brand"]), text(&p["card"]["last4"]));
                vec![code(&p["id"]), code(&p["customer"]), card]
            }),
        );
        let setups = self.list("/v1/setup_intents", &[]).await;
        md += &table(
            "SetupIntents",
            &["id", "status", "customer", "usage", "payment method"],
            setups.iter().map(|s| {
                vec![
                    code(&s["id"]),
                    text(&s["status"]),
                    code(&s["customer"]),
                    text(&s["usage"]),
                    code(&s["payment_method"]),
                ]
            }),
        );
        let intents = self.list("/v1/payment_intents", &[]).await;
        md += &table(
            "PaymentIntents",
            &["id", "status", "amount", "currency", "customer", "payment method", "metadata"],
            intents.iter().map(|p| {
                vec![
                    code(&p["id"]),
                    text(&p["status"]),
                    text(&p["amount"]),
                    text(&p["currency"]),
                    code(&p["customer"]),
                    code(&p["payment_method"]),
                    code_json(&p["metadata"]),
                ]
            }),
        );
        md += &table(
            "Charges",
            &["id", "payment intent", "status", "amount", "amount refunded"],
            charges.iter().map(|c| {
                vec![
                    code(&c["id"]),
                    code(&c["payment_intent"]),
                    text(&c["status"]),
                    text(&c["amount"]),
                    text(&c["amount_refunded"]),
                ]
            }),
        );
        let mut refunds = Vec::new();
        for intent in &intents {
            let id = intent["id"].as_str().unwrap_or_default();
            refunds.extend(self.list("/v1/refunds", &[("payment_intent", id)]).await);
        }
        md += &table(
            "Refunds",
            &["id", "payment intent", "status", "amount", "metadata"],
            refunds.iter().map(|r| {
                vec![
                    code(&r["id"]),
                    code(&r["payment_intent"]),
                    text(&r["status"]),
                    text(&r["amount"]),
                    code_json(&r["metadata"]),
                ]
            }),
        );
        md
    }

    /// Every object of a list endpoint (localstripe directly, not recorded); none when it does
    /// not answer with a list.
    async fn list(&self, path: &str, query: &[(&str, &str)]) -> Vec<Value> {
        let request = self
            .shared
            .http
            .get(format!("{}{path}", self.shared.upstream))
            .query(query)
            .query(&[("limit", "100")])
            .bearer_auth(super::STRIPE_TEST_KEY);
        let Ok(response) = request.send().await else { return Vec::new() };
        let page: Value = response.json().await.unwrap_or(Value::Null);
        page["data"].as_array().cloned().unwrap_or_default()
    }
}

/// Forwards one request to localstripe verbatim and writes it down.
async fn forward(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, 1 << 20).await.unwrap_or_default();
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str()).to_string();
    let form = url::form_urlencoded::parse(&body).into_owned().collect();
    let idempotency_key = parts.headers.get("idempotency-key").and_then(|v| v.to_str().ok()).map(str::to_string);
    let index = {
        let mut entries = shared.entries.lock().unwrap();
        let answer = "(no answer)".to_string();
        entries.push(Entry::Request {
            method: parts.method.to_string(),
            path: path.clone(),
            idempotency_key,
            form,
            answer,
        });
        entries.len() - 1
    };
    let mut headers = parts.headers.clone();
    for hop in [HOST, CONTENT_LENGTH, CONNECTION, TRANSFER_ENCODING] {
        headers.remove(hop);
    }
    let sent = shared
        .http
        .request(parts.method.clone(), format!("{}{path}", shared.upstream))
        .headers(headers)
        .body(body)
        .send()
        .await;
    let (status, headers, bytes) = match sent {
        Ok(answer) => {
            let (status, headers) = (answer.status(), answer.headers().clone());
            (status, headers, answer.bytes().await.unwrap_or_default())
        }
        Err(_) => (StatusCode::BAD_GATEWAY, HeaderMap::new(), Default::default()),
    };
    if let Some(Entry::Request { answer, .. }) = shared.entries.lock().unwrap().get_mut(index) {
        *answer = summary(status, &bytes);
    }
    let mut response = Response::new(Body::from(bytes));
    *response.status_mut() = status;
    for (name, value) in &headers {
        if ![CONTENT_LENGTH, CONNECTION, TRANSFER_ENCODING].contains(name) {
            response.headers_mut().append(name, value.clone());
        }
    }
    response
}

/// The status and what the answer was about: the object and its status, or Stripe's error.
fn summary(status: StatusCode, body: &[u8]) -> String {
    let json: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let about = if let Some(error) = json.get("error") {
        let codes = [&error["type"], &error["code"], &error["decline_code"]];
        codes.iter().filter_map(|c| c.as_str()).collect::<Vec<_>>().join(" / ")
    } else if json["object"] == "list" {
        let ids: Vec<String> = json["data"].as_array().into_iter().flatten().map(|o| code(&o["id"])).collect();
        format!("list [{}]", ids.join(", "))
    } else {
        let mut about = code(&json["id"]);
        if let Some(status) = json["status"].as_str() {
            let _ = write!(about, " {status}");
        }
        if json["deleted"] == true {
            about.push_str(" deleted");
        }
        about
    };
    format!("**{}** {about}", status.as_u16()).trim_end().to_string()
}

fn text(value: &Value) -> String {
    match value {
        Value::Null => "—".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn code(value: &Value) -> String {
    match value {
        Value::Null => "—".into(),
        other => format!("`{}`", text(other)),
    }
}

fn code_json(value: &Value) -> String {
    match value {
        Value::Object(o) if o.is_empty() => "—".into(),
        Value::Null => "—".into(),
        other => format!("`{other}`"),
    }
}

/// A Markdown table under a heading (`(none)` when empty).
fn table(heading: &str, columns: &[&str], rows: impl Iterator<Item = Vec<String>>) -> String {
    let mut md = format!("\n### {heading}\n\n| {} |\n|{}\n", columns.join(" | "), "---|".repeat(columns.len()));
    let mut any = false;
    for row in rows {
        any = true;
        let _ = writeln!(md, "| {} |", row.join(" | ").replace('\n', " "));
    }
    if !any {
        md = format!("\n### {heading}\n\n(none)\n");
    }
    md
}
