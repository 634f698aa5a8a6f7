//! One attempt to post an order event (docs/acp.md §10.2): `Content-Type: application/json`,
//! `Merchant-Signature`, `Request-Id` (the event id, the receiver's dedupe key) and `Timestamp`
//! headers, the body exactly as it was frozen; then what the answer means for the event.
//!
//! Limits: the whole request (connect, send, answer) within the timeout; redirects are not
//! followed (a 3xx means the URL is wrong: permanent); no cookies, no referrer; at most
//! [`MAX_RESPONSE_BYTES`] of the answer are read, for the operator's `last_error`.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, HeaderValue, RETRY_AFTER};

use super::receivers::Webhook;
use super::signature::merchant_signature;
use crate::clock::rfc3339;

/// How much of a receiver's answer is read (the rest is dropped unread).
pub const MAX_RESPONSE_BYTES: usize = 1024;
/// How much of it an event keeps as its `last_error`.
const ERROR_SNIPPET_CHARS: usize = 200;

/// What an attempt means for the event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// 2xx.
    Delivered,
    /// Timeouts, connection errors, 408, 429, 5xx: try again later (`retry_after`: the
    /// receiver's `Retry-After`, if any).
    Retry { error: String, retry_after: Option<Duration> },
    /// Any other answer (401 for a bad signature, 400, 404, a redirect): trying again cannot
    /// help until an operator fixes something; then they redeliver.
    Permanent { error: String },
}

/// Posts events; one client for every receiver.
#[derive(Debug, Clone)]
pub struct Poster {
    client: reqwest::Client,
    timeout: Duration,
}

impl Poster {
    pub fn new(timeout: Duration) -> anyhow::Result<Self> {
        let client = client(timeout, concat!("giftgenius-webhooks/", env!("CARGO_PKG_VERSION")))?;
        Ok(Self { client, timeout })
    }

    /// How long one attempt may take at most.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Posts `body` as event `event_id` to `receiver`, signed at `now_ms`.
    pub async fn post(&self, receiver: &Webhook, event_id: &str, body: &str, now_ms: i64) -> Verdict {
        // The client's own timeout covers the request; this one also bounds reading the answer.
        match tokio::time::timeout(self.timeout, self.post_unbounded(receiver, event_id, body, now_ms)).await {
            Ok(verdict) => verdict,
            Err(_) => Verdict::Retry { error: "timed out".into(), retry_after: None },
        }
    }

    async fn post_unbounded(&self, receiver: &Webhook, event_id: &str, body: &str, now_ms: i64) -> Verdict {
        let t = now_ms.div_euclid(1000);
        let request = self
            .client
            .post(receiver.url.clone())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .header("Merchant-Signature", merchant_signature(receiver.secret.as_bytes(), t, body.as_bytes()))
            .header("Request-Id", event_id)
            .header("Timestamp", rfc3339(t.saturating_mul(1000)))
            .body(body.to_string());
        let mut response = match request.send().await {
            Ok(response) => response,
            Err(e) if e.is_timeout() => return Verdict::Retry { error: "timed out".into(), retry_after: None },
            Err(e) => return Verdict::Retry { error: network_error(&e), retry_after: None },
        };
        let status = response.status();
        let retry_after = response.headers().get(RETRY_AFTER).and_then(|v| v.to_str().ok()).and_then(retry_after);
        let read = read_answer(&mut response, MAX_RESPONSE_BYTES).await;
        judge(status, &read, retry_after)
    }
}

/// A client for posting to receivers the operator configured: no redirects followed, no
/// referrer, `timeout` for connecting and for the whole request.
pub fn client(timeout: Duration, user_agent: &'static str) -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .referer(false)
        .connect_timeout(timeout)
        .timeout(timeout)
        .user_agent(user_agent)
        .build()
}

/// Up to `max` bytes of `response`'s body (the rest is dropped unread).
pub async fn read_answer(response: &mut reqwest::Response, max: usize) -> Vec<u8> {
    let mut read = Vec::new();
    while read.len() < max {
        match response.chunk().await {
            Ok(Some(chunk)) => read.extend_from_slice(&chunk[..chunk.len().min(max - read.len())]),
            // A body cut short says nothing more about the status.
            Ok(None) | Err(_) => break,
        }
    }
    read
}

/// What `status` (with up to [`MAX_RESPONSE_BYTES`] of its body) means for the event.
pub fn judge(status: StatusCode, body: &[u8], retry_after: Option<Duration>) -> Verdict {
    if status.is_success() {
        return Verdict::Delivered;
    }
    let error = format!("HTTP {}{}", status.as_u16(), snippet(body));
    if status == StatusCode::REQUEST_TIMEOUT || status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
        Verdict::Retry { error, retry_after }
    } else {
        Verdict::Permanent { error }
    }
}

/// `Retry-After` as a wait: delta-seconds, or an HTTP date (from the system clock, as the
/// receiver wrote it). Unreadable values are ignored.
pub fn retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(std::time::SystemTime::now()).unwrap_or(Duration::ZERO))
}

/// ": <the start of the answer>" in printable characters, or nothing.
fn snippet(body: &[u8]) -> String {
    let text: String = String::from_utf8_lossy(body)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(ERROR_SNIPPET_CHARS)
        .collect();
    let text = text.trim();
    if text.is_empty() { String::new() } else { format!(": {text}") }
}

/// The chain of a transport error, without the URL (it is in the configuration already).
pub fn network_error(e: &reqwest::Error) -> String {
    let mut text = if e.is_connect() { "cannot connect".to_string() } else { "network error".to_string() };
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn success_delivers_and_only_timeouts_throttling_and_server_errors_retry() {
        assert_eq!(judge(StatusCode::OK, b"", None), Verdict::Delivered);
        assert_eq!(judge(StatusCode::ACCEPTED, b"", None), Verdict::Delivered);
        for retried in [408, 429, 500, 502, 503, 504] {
            let status = StatusCode::from_u16(retried).unwrap();
            assert!(matches!(judge(status, b"", None), Verdict::Retry { .. }), "{retried}");
        }
        for permanent in [301, 302, 400, 401, 403, 404, 409, 410, 422] {
            let status = StatusCode::from_u16(permanent).unwrap();
            assert!(matches!(judge(status, b"", None), Verdict::Permanent { .. }), "{permanent}");
        }
    }

    #[test]
    fn the_error_names_the_status_and_the_start_of_the_answer() {
        let Verdict::Permanent { error } = judge(StatusCode::UNAUTHORIZED, b"{\"code\":\"invalid_signature\"}\n", None)
        else {
            panic!("401 is permanent");
        };
        assert_eq!(error, r#"HTTP 401: {"code":"invalid_signature"}"#);
        let long = vec![b'x'; 5000];
        let Verdict::Retry { error, .. } = judge(StatusCode::SERVICE_UNAVAILABLE, &long, None) else { panic!() };
        assert_eq!(error.len(), "HTTP 503: ".len() + ERROR_SNIPPET_CHARS);
    }

    #[test]
    fn retry_after_takes_seconds_or_a_date() {
        assert_eq!(retry_after("120"), Some(Duration::from_secs(120)));
        assert_eq!(retry_after(" 0 "), Some(Duration::ZERO));
        assert_eq!(retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), Some(Duration::ZERO), "a date past");
        let later = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(600));
        assert!(retry_after(&later).is_some_and(|d| d > Duration::from_secs(590)));
        assert_eq!(retry_after("soon"), None);
    }
}
