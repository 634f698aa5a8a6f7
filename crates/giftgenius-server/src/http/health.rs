//! The probes, reached by address (any `Host`, never rate-limited, see `rate_limit.rs`):
//!
//! - `GET /healthz`: `ok` while the server runs (unchanged, for existing users).
//! - `GET /livez`: `ok` while the process answers; a failure means restart it.
//! - `GET /readyz`: whether this replica should get traffic: `200 {"status":"ready"}` when the
//!   database answers and holds every migration, the local catalog is loaded and the payment
//!   provider answers its health probe, each within [`CHECK_WITHIN`]; else `503
//!   {"status":"not_ready","failing":[…]}` naming the parts (`database`, `catalog`,
//!   `payments`) and nothing else (the why goes to the log). From SIGTERM on it answers `503
//!   {"status":"draining"}`, so load balancers stop sending before the listener closes.
//!
//! And the drain state those share with `startup.rs` ([`Drain`]): whether the server is
//! draining, and the requests in flight that shutdown waits for.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::state::AppState;

/// The probe routes: exempt from the rate limit; no route guard checks their `Host`.
pub const PROBE_PATHS: [&str; 3] = ["/healthz", "/livez", "/readyz"];

/// How long each readiness check may take before its part counts as failing.
pub const CHECK_WITHIN: Duration = Duration::from_secs(2);

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

/// The probe routes.
pub fn router(app: Arc<AppState>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/livez", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .with_state(app)
}

async fn readyz(State(app): State<Arc<AppState>>) -> Response {
    if app.drain.is_draining() {
        return answer(StatusCode::SERVICE_UNAVAILABLE, json!({"status": "draining"}));
    }
    let (database, payments) = tokio::join!(
        tokio::time::timeout(CHECK_WITHIN, app.store.is_migrated()),
        app.reconciler.payments.is_reachable(CHECK_WITHIN),
    );
    let mut failing = Vec::new();
    match database {
        Ok(Ok(true)) => {}
        Ok(Ok(false)) => {
            tracing::warn!("not ready: the database lacks migrations this build needs");
            failing.push("database");
        }
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "not ready: the database failed");
            failing.push("database");
        }
        Err(_) => {
            tracing::warn!(within_ms = CHECK_WITHIN.as_millis() as u64, "not ready: the database did not answer");
            failing.push("database");
        }
    }
    if app.local_catalog && app.catalog.current().is_empty() {
        tracing::warn!("not ready: the local catalog holds no gift");
        failing.push("catalog");
    }
    if !payments {
        tracing::warn!(within_ms = CHECK_WITHIN.as_millis() as u64, "not ready: the payment provider did not answer");
        failing.push("payments");
    }
    if failing.is_empty() {
        answer(StatusCode::OK, json!({"status": "ready"}))
    } else {
        answer(StatusCode::SERVICE_UNAVAILABLE, json!({"status": "not_ready", "failing": failing}))
    }
}

fn answer(status: StatusCode, body: serde_json::Value) -> Response {
    (status, [(header::CACHE_CONTROL, "no-store")], Json(body)).into_response()
}
