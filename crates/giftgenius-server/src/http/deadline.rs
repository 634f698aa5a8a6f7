//! The request timeout (`--request-timeout-ms`): how long a request may take from the end of
//! its headers until the head of its response is ready.
//!
//! That covers reading the body (a client that trickles its body holds a connection and a
//! task) and handling the request. It does not cover what streams after the head: an SSE
//! stream on `GET /mcp`, or a `POST /mcp` answer that rmcp streams as SSE, sends its head at
//! once and then lives as long as the client listens (rmcp's keep-alive notices a client
//! that left, and shutdown ends the stream); cutting those would break the protocol, not
//! protect the server. The headers themselves are bounded by the connection's header-read
//! timeout (`serve.rs`).
//!
//! The answer says whose side was slow: `408 Request Timeout` (and the connection closes)
//! when the body had not fully arrived, `503 Service Unavailable` when it had and the server
//! did not answer in time. What a timed-out request started may still finish (or stop at
//! an await); every side effect is recorded in steps a retry with the same idempotency key
//! resumes, so a client that retries gets the one result.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::{Body as _, Frame, SizeHint};
use serde_json::json;

/// Middleware: `axum::middleware::from_fn_with_state(timeout, deadline)`.
pub async fn deadline(State(timeout): State<Duration>, request: Request, next: Next) -> Response {
    // A request without a body (GET, `Content-Length: 0`) has all of it from the start.
    let received = Arc::new(AtomicBool::new(request.body().is_end_stream()));
    let request = request.map(|body| Body::new(Watched { inner: body, received: received.clone() }));
    match tokio::time::timeout(timeout, next.run(request)).await {
        Ok(response) => response,
        Err(_) if received.load(Ordering::Acquire) => {
            tracing::warn!(
                timeout_ms = timeout.as_millis() as u64,
                "a request was not answered within the request timeout"
            );
            refusal(StatusCode::SERVICE_UNAVAILABLE, "the server did not answer in time; try again")
        }
        Err(_) => {
            let mut response =
                refusal(StatusCode::REQUEST_TIMEOUT, "the request body did not arrive within the request timeout");
            response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            response
        }
    }
}

fn refusal(status: StatusCode, description: &str) -> Response {
    let error = if status == StatusCode::REQUEST_TIMEOUT { "request_timeout" } else { "temporarily_unavailable" };
    (status, axum::Json(json!({"error": error, "error_description": description}))).into_response()
}

/// A request body that records when it has been read to its end.
struct Watched {
    inner: Body,
    received: Arc<AtomicBool>,
}

impl http_body::Body for Watched {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || self.inner.is_end_stream() {
            self.received.store(true, Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        let end = self.inner.is_end_stream();
        if end {
            self.received.store(true, Ordering::Release);
        }
        end
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::routing::{get, post};
    use tower::ServiceExt;

    fn app(timeout: Duration) -> Router {
        Router::new()
            .route("/slow", get(|| async { tokio::time::sleep(Duration::from_secs(60)).await }))
            .route("/fast", get(|| async { "ok" }))
            .route("/upload", post(|body: Bytes| async move { body.len().to_string() }))
            .layer(axum::middleware::from_fn_with_state(timeout, deadline))
    }

    #[tokio::test]
    async fn a_slow_handler_gets_503_and_a_fast_one_its_answer() {
        let response =
            app(Duration::from_millis(200)).oneshot(Request::get("/slow").body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        let response =
            app(Duration::from_secs(1)).oneshot(Request::get("/fast").body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }

    #[tokio::test]
    async fn a_body_that_never_ends_gets_408_and_closes_the_connection() {
        let endless = Body::from_stream(futures::stream::pending::<Result<Bytes, std::io::Error>>());
        let response =
            app(Duration::from_millis(200)).oneshot(Request::post("/upload").body(endless).unwrap()).await.unwrap();
        assert_eq!(response.status(), StatusCode::REQUEST_TIMEOUT);
        assert_eq!(response.headers()[header::CONNECTION], "close");
    }

    #[tokio::test]
    async fn a_complete_body_is_passed_on_unchanged() {
        let response = app(Duration::from_secs(1))
            .oneshot(Request::post("/upload").body(Body::from("12345")).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let body = axum::body::to_bytes(response.into_body(), 100).await.unwrap();
        assert_eq!(&body[..], b"5");
    }
}
