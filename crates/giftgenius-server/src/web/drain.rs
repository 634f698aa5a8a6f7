//! Draining: from SIGTERM on `/readyz` answers `503 {"status":"draining"}` (`http/health.rs`)
//! so load balancers stop sending, and shutdown waits for the requests in flight
//! ([`track_requests`] counts them) before the process ends.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Whether the server drains, and the requests it waits for when it does.
#[derive(Debug, Clone, Default)]
pub struct Drain {
    draining: CancellationToken,
    requests: TaskTracker,
}

impl Drain {
    /// From now on `/readyz` answers 503 `draining`.
    pub fn start(&self) {
        self.draining.cancel();
    }

    pub fn is_draining(&self) -> bool {
        self.draining.is_cancelled()
    }

    /// Requests being answered right now.
    pub fn in_flight(&self) -> usize {
        self.requests.len()
    }

    /// Resolves once no request is being answered (the listener no longer accepts by then).
    pub async fn requests_finished(&self) {
        self.requests.close();
        self.requests.wait().await;
    }
}

/// Middleware, outermost: counts the request as in flight until its response is ready, and a
/// call's streamed answer (an MCP session's POST answers as SSE) until its body ends. A GET's
/// stream (an MCP session's standing SSE stream) is not waited for: it ends with the session.
pub async fn track_requests(State(drain): State<Drain>, request: Request, next: Next) -> Response {
    use http_body::Body as _;
    use http_body_util::BodyExt as _;
    let token = drain.requests.token();
    let waits_for_body = request.method() != axum::http::Method::GET;
    let response = next.run(request).await;
    if !waits_for_body || response.body().size_hint().exact().is_some() {
        return response;
    }
    response.map(|body| {
        axum::body::Body::new(body.map_frame(move |frame| {
            let _in_flight = &token;
            frame
        }))
    })
}
