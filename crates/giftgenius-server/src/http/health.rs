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
//!   The checks' answer is reused for [`READINESS_REUSED_FOR`], and one check runs at a time
//!   (others wait for it and take its answer): `/readyz` is open to anyone, never
//!   rate-limited, and the payments check is a request to the provider with our secret key (on
//!   Stripe, `GET /v1/customers`), so a flood of probes must not spend the merchant's rate
//!   limit at the provider and fail buyers' charges. A probe every few seconds from each load
//!   balancer is what the checks cost now, however many arrive.
//!
//! Whether the server drains is `web::drain` ([`Drain`](crate::web::drain::Drain)), which
//! `startup.rs` starts on SIGTERM.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use crate::state::AppState;

/// The probe routes: exempt from the rate limit; no route guard checks their `Host`.
pub use crate::web::PROBE_PATHS;

/// How long each readiness check may take before its part counts as failing.
pub const CHECK_WITHIN: Duration = Duration::from_secs(2);

/// How long one readiness answer is reused (on the app's clock): short against a load
/// balancer's interval (10 s by default for most), long against a flood.
pub const READINESS_REUSED_FOR: Duration = Duration::from_secs(5);

/// The last readiness answer: when it was checked (ms, the app's clock) and what failed. The
/// lock is held while checking, so one check runs at a time and the others take its answer.
#[derive(Debug, Default)]
struct Readiness(tokio::sync::Mutex<Option<(i64, Vec<&'static str>)>>);

impl Readiness {
    /// What fails now: the last answer within [`READINESS_REUSED_FOR`], else a fresh check.
    async fn failing(&self, app: &AppState) -> Vec<&'static str> {
        let mut last = self.0.lock().await;
        let now = app.checkout.clock.now_ms();
        let reused_ms = READINESS_REUSED_FOR.as_millis() as i64;
        // A clock that went back counts as stale too.
        if let Some((checked_at, failing)) = last.as_ref().filter(|(at, _)| (0..reused_ms).contains(&(now - at))) {
            tracing::trace!(checked_at, "readiness answered from the last check");
            return failing.clone();
        }
        let failing = check(app).await;
        *last = Some((app.checkout.clock.now_ms(), failing.clone()));
        failing
    }
}

/// The probe routes.
pub fn router(app: Arc<AppState>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/livez", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .with_state((app, Arc::new(Readiness::default())))
}

async fn readyz(State((app, readiness)): State<(Arc<AppState>, Arc<Readiness>)>) -> Response {
    if app.drain.is_draining() {
        return answer(StatusCode::SERVICE_UNAVAILABLE, json!({"status": "draining"}));
    }
    let failing = readiness.failing(&app).await;
    if failing.is_empty() {
        answer(StatusCode::OK, json!({"status": "ready"}))
    } else {
        answer(StatusCode::SERVICE_UNAVAILABLE, json!({"status": "not_ready", "failing": failing}))
    }
}

/// The parts failing now (each check within [`CHECK_WITHIN`]), the why logged.
async fn check(app: &AppState) -> Vec<&'static str> {
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
    failing
}

fn answer(status: StatusCode, body: serde_json::Value) -> Response {
    (status, [(header::CACHE_CONTROL, "no-store")], Json(body)).into_response()
}
