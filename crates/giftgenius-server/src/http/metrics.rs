//! `GET /metrics`: every metric of `crate::metrics` in Prometheus' text exposition format
//! (0.0.4), for a Prometheus scrape. Reached by address like the probes (`health.rs`): any
//! `Host`, never rate-limited, so a scraper polling by IP is served and never throttled.
//!
//! With `--metrics-token-file` it asks for `Authorization: Bearer <token>`, compared in
//! constant time; anything else is `401` with `WWW-Authenticate: Bearer realm="metrics"`
//! (counted in `giftgenius_auth_refusals_total{endpoint="metrics"}`). Without it, anyone who
//! reaches the port reads the metrics, which hold counts only: no ids, subjects or text.
//!
//! Each scrape reads the pending orders from the database (one indexed query) and the outbox's
//! backlog, each within a short timeout (`metrics::Readings`); the rest are counters in memory.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::metrics::{AuthEndpoint, AuthRefusal, CONTENT_TYPE};
use crate::state::AppState;

/// Where Prometheus scrapes.
pub use crate::web::METRICS_PATH;

pub use crate::metrics::MetricsToken;

/// The route.
pub fn router(app: Arc<AppState>) -> Router {
    Router::new().route(METRICS_PATH, get(metrics)).with_state(app)
}

async fn metrics(State(app): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    if let Some(token) = &app.metrics_token
        && !token.admits(headers.get(header::AUTHORIZATION))
    {
        let reason = if headers.contains_key(header::AUTHORIZATION) {
            AuthRefusal::InvalidToken
        } else {
            AuthRefusal::InvalidRequest
        };
        app.metrics.refusals.auth_refused(AuthEndpoint::Metrics, reason);
        let mut response = (StatusCode::UNAUTHORIZED, "this endpoint needs the metrics bearer token\n").into_response();
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(r#"Bearer realm="metrics""#));
        return response;
    }
    app.metrics.readings.refresh(&app.store, &app.reconciler.clock).await;
    let text = app.metrics.encode();
    (StatusCode::OK, [(header::CONTENT_TYPE, CONTENT_TYPE), (header::CACHE_CONTROL, "no-store")], text).into_response()
}
