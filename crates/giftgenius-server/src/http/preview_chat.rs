//! The preview's chat panel, server side: `/preview/chat/*` forwards the page's requests to the
//! `giftgenius-chat --listen` process named by `--preview-chat-url` (which `cargo xtask preview`
//! starts). The server never links the chat loop and never sees a model key; it only relays JSON
//! between the page (same origin, so no CORS) and that loopback process.
//!
//! - `GET /preview/chat/state` → `GET {chat}/api/state`
//! - `POST /preview/chat/messages` → `POST {chat}/api/messages`
//! - `POST /preview/chat/purchases/{draft_id}` → `POST {chat}/api/purchases/{draft_id}`
//!
//! A POST must be JSON (so a cross-site form or a no-preflight fetch cannot reach it) and, when it
//! names an `Origin`, come from this server's own page origins. Without a chat process the routes
//! answer 404 with a hint the panel shows.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

struct Chat {
    /// `http://127.0.0.1:PORT` of the chat process; `None` when the panel is off.
    url: Option<String>,
    http: reqwest::Client,
    /// Origins the page may POST from (ours, and our loopback names; never the widget's sandbox).
    page_origins: Vec<String>,
}

/// Whether `url` is plain HTTP on a loopback host: the only place a chat process may be.
pub fn is_loopback_http(url: &str) -> bool {
    let Ok(url) = url::Url::parse(url) else { return false };
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name == "localhost",
        None => false,
    };
    url.scheme() == "http" && loopback && url.path() == "/" && url.query().is_none()
}

/// The `/preview/chat/*` routes. `page_origins`: the origins the host page is served from.
pub fn router(chat_url: Option<&str>, page_origins: Vec<String>) -> Router {
    let url = match chat_url.map(|u| u.trim().trim_end_matches('/')) {
        Some(u) if is_loopback_http(&format!("{u}/")) => Some(u.to_string()),
        Some(_) => {
            tracing::error!("--preview-chat-url must be http://127.0.0.1:PORT (loopback); the chat panel is off");
            None
        }
        None => None,
    };
    // Plain HTTP to loopback: no proxy, short timeouts (a message only starts a task).
    let http = reqwest::Client::builder()
        .no_proxy()
        .connect_timeout(Duration::from_secs(2))
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap_or_default();
    let state = Arc::new(Chat { url, http, page_origins });
    Router::new()
        .route("/preview/chat/state", get(chat_state))
        .route("/preview/chat/messages", post(message))
        .route("/preview/chat/purchases/{draft_id}", post(purchase))
        .with_state(state)
}

fn answer(status: StatusCode, body: Value) -> Response {
    let mut response = (status, Json(body)).into_response();
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn off() -> Response {
    answer(
        StatusCode::NOT_FOUND,
        json!({"error": "The chat panel is off: start the preview with `cargo xtask preview` (it runs the chat process)."}),
    )
}

/// A POST from anywhere but our page is refused.
fn foreign(c: &Chat, headers: &HeaderMap) -> bool {
    match headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) {
        Some(origin) => !c.page_origins.iter().any(|o| o == origin),
        None => false,
    }
}

async fn forward(c: &Chat, path: &str, body: Option<Value>) -> Response {
    let Some(base) = &c.url else { return off() };
    let url = format!("{base}{path}");
    let request = match body {
        Some(body) => c.http.post(&url).json(&body),
        None => c.http.get(&url),
    };
    let reply = match request.send().await {
        Ok(reply) => reply,
        Err(e) => {
            tracing::warn!(error = %e, "preview: the chat process does not answer");
            return answer(
                StatusCode::BAD_GATEWAY,
                json!({"error": "The chat process does not answer; see the preview's terminal."}),
            );
        }
    };
    let status = StatusCode::from_u16(reply.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    match reply.json::<Value>().await {
        Ok(body) => answer(status, body),
        Err(_) => answer(StatusCode::BAD_GATEWAY, json!({"error": "The chat process gave an unreadable answer."})),
    }
}

async fn chat_state(State(c): State<Arc<Chat>>) -> Response {
    forward(&c, "/api/state", None).await
}

async fn message(State(c): State<Arc<Chat>>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    if foreign(&c, &headers) {
        return answer(StatusCode::FORBIDDEN, json!({"error": "only the preview page may use the chat"}));
    }
    forward(&c, "/api/messages", Some(body)).await
}

async fn purchase(
    State(c): State<Arc<Chat>>,
    Path(draft_id): Path<String>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if foreign(&c, &headers) {
        return answer(StatusCode::FORBIDDEN, json!({"error": "only the preview page may use the chat"}));
    }
    // An id goes into the chat process's path: ids are short and plain.
    if draft_id.is_empty()
        || draft_id.len() > 64
        || !draft_id.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '-')
    {
        return answer(StatusCode::BAD_REQUEST, json!({"error": "not a draft id"}));
    }
    forward(&c, &format!("/api/purchases/{draft_id}"), Some(body)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plain_loopback_http_url_names_a_chat_process() {
        assert!(is_loopback_http("http://127.0.0.1:9000/"));
        assert!(is_loopback_http("http://localhost:9000/"));
        assert!(is_loopback_http("http://[::1]:9000/"));
        for bad in
            ["https://127.0.0.1:9000/", "http://10.0.0.5:9000/", "http://example.com/", "http://127.0.0.1:9/x", "nope"]
        {
            assert!(!is_loopback_http(bad), "{bad}");
        }
    }

    #[test]
    fn a_post_from_another_origin_is_foreign_and_one_without_an_origin_is_not() {
        let c = Chat {
            url: None,
            http: reqwest::Client::new(),
            page_origins: vec!["http://localhost:8000".into(), "http://127.0.0.1:8000".into()],
        };
        let mut h = HeaderMap::new();
        assert!(!foreign(&c, &h));
        h.insert(header::ORIGIN, HeaderValue::from_static("http://localhost:8000"));
        assert!(!foreign(&c, &h));
        h.insert(header::ORIGIN, HeaderValue::from_static("http://sandbox.localhost:8000"));
        assert!(foreign(&c, &h), "the widget's sandbox origin is not the page");
    }
}
