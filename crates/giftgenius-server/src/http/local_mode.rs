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

use giftgenius_pay_api::loopback::is_loopback_peer;

/// Why a request did not come from this machine (the rules of the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotThisMachine {
    /// Its TCP peer is not loopback, or it has none.
    NotLoopback,
    /// From a loopback peer, but relayed: it carries `Forwarded` or `X-Forwarded-For`.
    Forwarded,
}

impl NotThisMachine {
    /// The machine-readable `error` of a refusal.
    pub fn code(self) -> &'static str {
        match self {
            NotThisMachine::NotLoopback => "not_loopback",
            NotThisMachine::Forwarded => "forwarded_request",
        }
    }
}

/// Whether `request` came from this machine: a loopback TCP peer (`ConnectInfo`, the socket's
/// own address: never a forwarded one, whatever `--trusted-proxies` says; the SANDBOX
/// provider's rule, one definition for both) and no forwarding header. Shared with the
/// local-only routes (`local_only.rs`).
pub fn from_this_machine(request: &Request) -> Result<(), NotThisMachine> {
    if !is_loopback_peer(request) {
        return Err(NotThisMachine::NotLoopback);
    }
    let headers = request.headers();
    if headers.contains_key(header::FORWARDED) || headers.contains_key("x-forwarded-for") {
        return Err(NotThisMachine::Forwarded);
    }
    Ok(())
}

/// Middleware: `axum::middleware::from_fn(loopback_peers_only)`, in local mode only.
pub async fn loopback_peers_only(request: Request, next: Next) -> Response {
    let Err(refused) = from_this_machine(&request) else { return next.run(request).await };
    let description = match refused {
        NotThisMachine::Forwarded => "a request relayed by a proxy or tunnel is refused in local mode",
        NotThisMachine::NotLoopback => "this server runs in local mode and answers this machine only",
    };
    let peer = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip());
    tracing::info!(peer = ?peer, reason = refused.code(), "local mode refused a request from outside this machine");
    let error = refused.code();
    let body = json!({
        "error": error,
        "error_description": format!(
            "{description}; the operator must start it with --auth-issuer (or --single-user) to serve others"
        ),
    });
    (StatusCode::FORBIDDEN, axum::Json(body)).into_response()
}

/// For the tests of this guard and of `local_only.rs`.
#[cfg(test)]
pub(crate) mod test_support {
    use std::net::SocketAddr;

    use axum::Router;
    use axum::body::Body;
    use axum::extract::{ConnectInfo, Request};
    use axum::http::StatusCode;
    use axum::middleware::Next;
    use axum::response::Response;
    use axum::routing::get;
    use tower::ServiceExt;

    /// The status `guard` answers a GET from `peer` (none: never crossed a socket) with `Host:
    /// host` and `headers`, in front of a route that answers 200.
    pub async fn status_behind<G, F>(guard: G, peer: Option<&str>, host: &str, headers: &[(&str, &str)]) -> StatusCode
    where
        G: Fn(Request, Next) -> F + Clone + Send + Sync + 'static,
        F: std::future::Future<Output = Response> + Send + 'static,
    {
        let app = Router::new().route("/x", get(|| async { "ok" })).layer(axum::middleware::from_fn(guard));
        let mut request = Request::builder().uri("/x").header("host", host);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let mut request = request.body(Body::empty()).unwrap();
        if let Some(peer) = peer {
            request.extensions_mut().insert(ConnectInfo(peer.parse::<SocketAddr>().unwrap()));
        }
        app.oneshot(request).await.unwrap().status()
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::status_behind;
    use super::*;

    async fn status(peer: Option<&str>, headers: &[(&str, &str)]) -> StatusCode {
        status_behind(loopback_peers_only, peer, "127.0.0.1:8000", headers).await
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
