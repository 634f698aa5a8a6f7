//! What every request must show before a handler sees it. The provider listens on loopback, but
//! a web page the developer visits can still send requests there: a "no-cors" form POST
//! (`text/plain`, with an `Origin`) to switch the fault plan, or, after DNS rebinding, a read of
//! the ledger under its own host name. So, in this order:
//!
//! 1. The TCP peer must be loopback ([`is_loopback_peer`]) and `Host` a loopback name
//!    ([`is_loopback_host`]): else 403. `Host` is the client's to choose, so with `--host
//!    0.0.0.0` another machine could send `Host: localhost`; a rebinding page runs on this
//!    machine but its requests carry its own name.
//! 2. No `Origin` header at all: else 403 (browsers add one to cross-origin requests and to
//!    every POST; no client of this API is a browser).
//! 3. `Authorization: Bearer SECRET` (`token.rs`) on every route but `GET /healthz`: else 401.
//!    The delegate-payment path takes the delegate key and nothing else; every other path takes
//!    the admin secret and nothing else.
//! 4. A request other than GET/HEAD must say `Content-Type: application/json`: else 415 (a
//!    no-cors POST can only say `text/plain`, a form or multipart).
//!
//! Refusals on the delegate-payment path are ACP error objects (`delegate::DelegateError`);
//! elsewhere, the Stripe-shaped `api::ErrorBody`.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use crate::answer::error;
use crate::api::HEALTH_PATH;
use crate::delegate::DELEGATE_PAYMENT_PATH;
use crate::token::{AdminToken, DelegateKey};
pub use giftgenius_pay_api::loopback::{is_loopback_host, is_loopback_peer, request_host};

/// The secrets requests are checked against, each for its own paths.
#[derive(Debug, Clone)]
pub struct Keys {
    pub admin: AdminToken,
    pub delegate: DelegateKey,
}

/// Whether a `Content-Type` is JSON (`application/json`, any parameters).
fn is_json(content_type: Option<&HeaderValue>) -> bool {
    content_type
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// The checks of the module docs, as a layer over every route.
pub async fn guard(State(keys): State<Arc<Keys>>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_string();
    let delegate = path == DELEGATE_PAYMENT_PATH;
    let refused = |status: StatusCode, code: &str, message: &str| {
        tracing::info!(path, code, "request refused");
        if delegate {
            crate::delegate::routes::refused(request.headers(), status, code, message)
        } else {
            error(status, "invalid_request_error", Some(code), message, None)
        }
    };
    if !is_loopback_peer(&request) {
        return refused(
            StatusCode::FORBIDDEN,
            "peer_not_allowed",
            "This provider answers only requests from this machine.",
        );
    }
    if !request_host(&request).is_some_and(is_loopback_host) {
        return refused(
            StatusCode::FORBIDDEN,
            "host_not_allowed",
            "This provider answers only requests addressed to localhost or a loopback address.",
        );
    }
    if request.headers().contains_key(header::ORIGIN) {
        return refused(StatusCode::FORBIDDEN, "origin_not_allowed", "This provider does not answer web pages.");
    }
    let open = path == HEALTH_PATH && matches!(*request.method(), Method::GET | Method::HEAD);
    let authorization = request.headers().get(header::AUTHORIZATION);
    let admitted = if delegate { keys.delegate.admits(authorization) } else { keys.admin.admits(authorization) };
    if !open && !admitted {
        let mut response = refused(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            if delegate {
                "Send the delegate-payment key (the provider's --delegate-payment-key-file) as `Authorization: Bearer KEY`."
            } else {
                "Send the provider's secret (its --admin-token-file) as `Authorization: Bearer SECRET`."
            },
        );
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return response;
    }
    let reads = matches!(*request.method(), Method::GET | Method::HEAD);
    if !reads && !is_json(request.headers().get(header::CONTENT_TYPE)) {
        return refused(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "Request bodies must be JSON, sent as `Content-Type: application/json`.",
        );
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use axum::extract::ConnectInfo;

    use super::*;

    async fn health_status(peer: Option<&str>, host: &str) -> StatusCode {
        use tower::ServiceExt;
        let keys = Keys { admin: AdminToken::generate(), delegate: DelegateKey::generate() };
        let app = axum::Router::new()
            .route(HEALTH_PATH, axum::routing::get(|| async { "ok" }))
            .layer(axum::middleware::from_fn_with_state(Arc::new(keys), guard));
        let mut request =
            Request::builder().uri(HEALTH_PATH).header(header::HOST, host).body(axum::body::Body::empty()).unwrap();
        if let Some(peer) = peer {
            request.extensions_mut().insert(ConnectInfo(peer.parse::<SocketAddr>().unwrap()));
        }
        app.oneshot(request).await.unwrap().status()
    }

    #[tokio::test]
    async fn a_loopback_host_name_from_another_machine_is_refused() {
        // `--host 0.0.0.0` and a client on the network that sends `Host: localhost`.
        for peer in ["192.0.2.1:40000", "[2001:db8::1]:40000", "[::ffff:192.0.2.1]:40000"] {
            assert_eq!(health_status(Some(peer), "localhost:8100").await, StatusCode::FORBIDDEN, "{peer}");
        }
        assert_eq!(health_status(None, "localhost:8100").await, StatusCode::FORBIDDEN, "no peer: fail closed");
        for peer in ["127.0.0.1:40000", "[::1]:40000", "[::ffff:127.0.0.1]:40000"] {
            assert_eq!(health_status(Some(peer), "localhost:8100").await, StatusCode::OK, "{peer}");
            assert_eq!(health_status(Some(peer), "attacker.example").await, StatusCode::FORBIDDEN, "{peer}");
        }
    }

    #[test]
    fn json_is_json_whatever_its_parameters() {
        assert!(is_json(Some(&HeaderValue::from_static("application/json"))));
        assert!(is_json(Some(&HeaderValue::from_static("Application/JSON; charset=utf-8"))));
        for other in
            ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx"]
        {
            assert!(!is_json(Some(&HeaderValue::from_static(other))), "{other}");
        }
        assert!(!is_json(None));
    }
}
