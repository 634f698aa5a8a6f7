//! The layer over the routes only this machine may use (every `/preview…` route): a request must
//! be addressed to a loopback name (`localhost`, `*.localhost` such as the preview's
//! `sandbox.localhost`, `127.0.0.1`, `[::1]`, any port), else 403. A DNS-rebinding page reaches
//! the server under its own name and so could otherwise read what these routes show (the chat
//! transcript with its tokens and addresses, the payment ledger) or change the fault plan. The
//! rule is the SANDBOX provider's (`giftgenius_sandbox_pay::guard::is_loopback_host`): one
//! definition of "a loopback name" for both. README "Routes" lists which routes are local,
//! which are public and which are probes.

use axum::Json;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use giftgenius_sandbox_pay::guard::{is_loopback_host, request_host};
use serde_json::json;

/// Passes requests addressed to a loopback name; answers 403 to the rest.
pub async fn local_only(request: Request, next: Next) -> Response {
    if request_host(&request).is_some_and(is_loopback_host) {
        return next.run(request).await;
    }
    tracing::info!(path = request.uri().path(), "refused a local-only route addressed to another host name");
    (
        StatusCode::FORBIDDEN,
        Json(json!({"error": "This route answers only on this machine: open it at http://localhost:PORT/."})),
    )
        .into_response()
}
