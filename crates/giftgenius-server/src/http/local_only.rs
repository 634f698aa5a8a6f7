//! The layer over the routes only this machine may use (every `/preview…` route). A request must
//!
//! 1. come from this machine: a loopback TCP peer and no `Forwarded`/`X-Forwarded-For` header
//!    (`local_mode::from_this_machine`, the rule local mode applies to every route). The `Host`
//!    header is the client's to choose, so on a server listening beyond loopback (`--host
//!    0.0.0.0 --allow-remote-preview`) anyone on the network could otherwise send `Host:
//!    localhost` and read the ledger, change the fault plan or mint a vault token. The peer is
//!    the socket's own address, never the client address a trusted proxy names.
//! 2. be addressed to a loopback name (`localhost`, `*.localhost` such as the preview's
//!    `sandbox.localhost`, `127.0.0.1`, `[::1]`, any port). A DNS-rebinding page runs in the
//!    developer's own browser (a loopback peer) and reaches the server under its own name, so
//!    could otherwise read what these routes show (the chat transcript with its tokens and
//!    addresses, the payment ledger) or change the fault plan. The rule is the SANDBOX
//!    provider's (`giftgenius_pay_api::loopback::is_loopback_host`): one definition of "a
//!    loopback name" for both.
//!
//! Else 403. docs/routes.md lists which routes are local, which are public and which are probes.

use axum::Json;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use giftgenius_pay_api::loopback::{is_loopback_host, request_host};
use serde_json::json;

use super::local_mode::from_this_machine;

/// Passes requests from this machine addressed to a loopback name; answers 403 to the rest.
pub async fn local_only(request: Request, next: Next) -> Response {
    let refused = match from_this_machine(&request) {
        Err(refused) => refused.code(),
        Ok(()) if request_host(&request).is_some_and(is_loopback_host) => return next.run(request).await,
        Ok(()) => "not_loopback_host",
    };
    tracing::info!(path = request.uri().path(), reason = refused, "refused a local-only route");
    (
        StatusCode::FORBIDDEN,
        Json(json!({"error": "This route answers only on this machine: open it at http://localhost:PORT/."})),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::super::local_mode::test_support::status_behind;
    use super::*;

    async fn status(peer: Option<&str>, host: &str, headers: &[(&str, &str)]) -> StatusCode {
        status_behind(local_only, peer, host, headers).await
    }

    #[tokio::test]
    async fn a_loopback_host_name_from_another_machine_is_refused() {
        // The attack: `--host 0.0.0.0`, a client on the network sends `Host: localhost`.
        for peer in ["192.0.2.1:40000", "[2001:db8::1]:40000", "[::ffff:192.0.2.1]:40000", "0.0.0.0:1"] {
            for host in ["localhost:8000", "127.0.0.1:8000", "sandbox.localhost:8000"] {
                assert_eq!(status(Some(peer), host, &[]).await, StatusCode::FORBIDDEN, "{peer} {host}");
            }
        }
        assert_eq!(status(None, "localhost:8000", &[]).await, StatusCode::FORBIDDEN, "no peer: fail closed");
        // Relayed by a proxy or tunnel on this machine: the sender is elsewhere.
        for header in [("x-forwarded-for", "127.0.0.1"), ("forwarded", "for=127.0.0.1")] {
            assert_eq!(status(Some("127.0.0.1:40000"), "localhost:8000", &[header]).await, StatusCode::FORBIDDEN);
        }
    }

    #[tokio::test]
    async fn this_machine_needs_a_loopback_host_name_too() {
        for peer in ["127.0.0.1:40000", "[::1]:40000", "[::ffff:127.0.0.1]:40000"] {
            for host in ["localhost:8000", "127.0.0.1:8000", "sandbox.localhost:8000", "[::1]:8000"] {
                assert_eq!(status(Some(peer), host, &[]).await, StatusCode::OK, "{peer} {host}");
            }
            // A DNS-rebinding page in the developer's browser: a loopback peer, a foreign name.
            assert_eq!(status(Some(peer), "attacker.example:8000", &[]).await, StatusCode::FORBIDDEN, "{peer}");
        }
    }
}
