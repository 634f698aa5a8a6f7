//! A panic is a bug, and never a dropped connection or a leak: the work that panicked answers a
//! structured internal error, and what reaches the log is where it happened, never what the
//! panic said when that may quote the request.
//!
//! - [`caught`] runs a piece of work and turns its panic into [`Panicked`]: the keyed sections
//!   (`checkout/idempotency.rs`, ACP's `handle_post`, both over `idempotency.rs`) release their key with it, so a retry is
//!   not stuck behind a lease nobody holds; the tool calls answer `INTERNAL_ERROR`.
//! - [`answer_panics`] is the same for every HTTP route: a 500 with a reference instead of a
//!   connection closed with no answer (the ACP routes answer their own `Error` first).
//! - [`loggable_message`] is what a panic's message may show: a literal of ours (`&'static str`)
//!   as is; anything formatted (`String`: `expect`, `unwrap` on an error, a slice out of
//!   bounds, `panic!("{x}")`) may quote the request, so it is withheld. The panic hook
//!   (`telemetry.rs`) logs that and the source location, inside the request's span.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;

use axum::extract::{MatchedPath, Request};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::FutureExt;

/// What is logged in place of a formatted panic message.
pub const WITHHELD: &str = "(withheld: a formatted panic message may quote the request)";

/// The part of a panic's message fit for a log: a `&'static str` payload is a literal in our
/// code; any other payload is [`WITHHELD`].
pub fn loggable_message(payload: &(dyn Any + Send)) -> &'static str {
    payload.downcast_ref::<&'static str>().copied().unwrap_or(WITHHELD)
}

/// A piece of work panicked; its `Display` is fit for the log (see [`loggable_message`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Panicked(pub &'static str);

impl fmt::Display for Panicked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the handler panicked: {} (the panic's log line has its location)", self.0)
    }
}

/// Runs `work`, answering [`Panicked`] instead of unwinding past the caller.
pub async fn caught<F: Future>(work: F) -> Result<F::Output, Panicked> {
    AssertUnwindSafe(work).catch_unwind().await.map_err(|payload| Panicked(loggable_message(payload.as_ref())))
}

/// Middleware for every route: a handler's panic answers 500 with a reference, which the log
/// line names with the method and the route template (not the path: it may hold a token).
pub async fn answer_panics(request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let route = request.extensions().get::<MatchedPath>().map(|p| p.as_str().to_string()).unwrap_or_default();
    match caught(next.run(request)).await {
        Ok(response) => response,
        Err(panicked) => {
            let reference = crate::context::new_reference();
            tracing::error!(%reference, method = %method, route, error = %panicked, "HTTP request failed");
            let message = format!(
                "Something went wrong on our side; retry, and quote reference {reference} if it keeps failing."
            );
            let body = serde_json::json!({"error": "internal_error", "message": message, "reference": reference});
            (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(body)).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_literal_panic_message_is_logged() {
        let literal = std::panic::catch_unwind(|| panic!("a literal of ours")).unwrap_err();
        assert_eq!(loggable_message(literal.as_ref()), "a literal of ours");
        let input = "1234é5678";
        let formatted = std::panic::catch_unwind(|| panic!("bad input {input}")).unwrap_err();
        assert_eq!(loggable_message(formatted.as_ref()), WITHHELD);
        let sliced = std::panic::catch_unwind(|| input.get(..5).map(str::len).unwrap_or_else(|| input[..5].len()));
        assert_eq!(loggable_message(sliced.unwrap_err().as_ref()), WITHHELD, "std's slice panic quotes the text");
    }

    #[tokio::test]
    async fn a_route_that_panics_answers_500_with_a_reference_and_the_others_answer_as_ever() {
        use axum::body::Body;
        use tower::ServiceExt;
        let app = axum::Router::new()
            .route(
                "/boom/{token}",
                axum::routing::get(|axum::extract::Path(t): axum::extract::Path<String>| async move {
                    panic!("bad token {t}");
                    #[allow(unreachable_code)]
                    ""
                }),
            )
            .route("/fine", axum::routing::get(|| async { "fine" }))
            .layer(axum::middleware::from_fn(answer_panics));
        let get = |uri: &str| axum::http::Request::get(uri).body(Body::empty()).unwrap();
        let response = app.clone().oneshot(get("/boom/MARKER")).await.unwrap();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = axum::body::to_bytes(response.into_body(), 4096).await.unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        let reference = body["reference"].as_str().expect("a reference");
        assert!(reference.starts_with("req_") && body["message"].as_str().unwrap().contains(reference), "{body}");
        assert!(!body.to_string().contains("MARKER"), "{body}");
        assert_eq!(app.oneshot(get("/fine")).await.unwrap().status(), StatusCode::OK);
    }

    #[tokio::test]
    async fn a_panicking_future_is_an_error_and_a_quiet_one_its_output() {
        assert_eq!(caught(async { 7 }).await, Ok(7));
        let marker = String::from("MARKER");
        let panicked = caught(async move { panic!("{marker}") }).await.unwrap_err();
        assert_eq!(panicked, Panicked(WITHHELD));
        assert!(!panicked.to_string().contains("MARKER"));
    }
}
