//! Local mode's guard: every request must come from this machine.
//!
//! Local mode lets a call name any local user (`_meta["openai/subject"]`), so it is safe only
//! when nobody else can reach the server. Startup already refuses local mode on a non-loopback
//! bind (`auth/mode.rs`); this guard holds per request, whatever the `Host` header says:
//!
//! - the TCP peer must be loopback (`127.0.0.0/8`, `::1`, or IPv4-mapped loopback), else 403;
//! - a request carrying `Forwarded` or `X-Forwarded-For` is refused (403) even from loopback: it
//!   came through a proxy or tunnel on this machine (ngrok, cloudflared, a reverse proxy), so
//!   its real sender is somewhere else. Expose the server with `--auth-issuer` (or
//!   `--single-user`) instead.
//!
//! A request without a peer (never crossed a socket) is refused too: fail closed.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::auth::mode::is_loopback_ip;

/// Middleware: `axum::middleware::from_fn(loopback_peers_only)`, in local mode only.
pub async fn loopback_peers_only(request: Request, next: Next) -> Response {
    let peer = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip());
    let loopback_peer = peer.is_some_and(is_loopback_ip);
    let forwarded =
        request.headers().contains_key(header::FORWARDED) || request.headers().contains_key("x-forwarded-for");
    if loopback_peer && !forwarded {
        return next.run(request).await;
    }
    let (error, description) = if loopback_peer {
        ("forwarded_request", "a request relayed by a proxy or tunnel is refused in local mode")
    } else {
        ("not_loopback", "this server runs in local mode and answers this machine only")
    };
    tracing::info!(peer = ?peer, forwarded, "local mode refused a request from outside this machine");
    let body = json!({
        "error": error,
        "error_description": format!(
            "{description}; the operator must start it with --auth-issuer (or --single-user) to serve others"
        ),
    });
    (StatusCode::FORBIDDEN, axum::Json(body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::body::Body;
    use axum::routing::get;
    use tower::ServiceExt;

    async fn status(peer: Option<&str>, headers: &[(&str, &str)]) -> StatusCode {
        let app =
            Router::new().route("/x", get(|| async { "ok" })).layer(axum::middleware::from_fn(loopback_peers_only));
        let mut request = Request::builder().uri("/x").header("host", "127.0.0.1:8000");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let mut request = request.body(Body::empty()).unwrap();
        if let Some(peer) = peer {
            request.extensions_mut().insert(ConnectInfo(peer.parse::<SocketAddr>().unwrap()));
        }
        app.oneshot(request).await.unwrap().status()
    }

    #[tokio::test]
    async fn only_loopback_peers_without_forwarding_headers_pass() {
        for peer in ["127.0.0.1:5000", "127.9.9.9:5000", "[::1]:5000", "[::ffff:127.0.0.1]:5000"] {
            assert_eq!(status(Some(peer), &[]).await, StatusCode::OK, "{peer}");
        }
        for peer in ["192.168.1.9:5000", "[2001:db8::1]:5000", "[::ffff:10.0.0.1]:5000", "0.0.0.0:1"] {
            assert_eq!(status(Some(peer), &[]).await, StatusCode::FORBIDDEN, "{peer}");
        }
        assert_eq!(status(None, &[]).await, StatusCode::FORBIDDEN, "no peer: fail closed");
        for header in [("x-forwarded-for", "127.0.0.1"), ("forwarded", "for=127.0.0.1")] {
            assert_eq!(status(Some("127.0.0.1:5000"), &[header]).await, StatusCode::FORBIDDEN, "{header:?}");
        }
    }
}
