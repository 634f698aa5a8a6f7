//! `/.well-known/openai-apps-challenge`: the app directory's domain check. The directory gives
//! the operator a token and fetches it from this path to see that they control the domain; it
//! is `--apps-challenge-token`, as text/plain, and the route answers 404 when no token is set.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

pub const APPS_CHALLENGE_PATH: &str = "/.well-known/openai-apps-challenge";

/// The challenge route, answering `token` (trimmed; none or empty: 404).
pub fn router(token: Option<&str>) -> Router {
    let token: Option<Arc<str>> = token.map(str::trim).filter(|t| !t.is_empty()).map(Arc::from);
    Router::new().route(APPS_CHALLENGE_PATH, get(challenge)).with_state(token)
}

async fn challenge(State(token): State<Option<Arc<str>>>) -> Response {
    match token {
        Some(token) => (
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8"), (header::CACHE_CONTROL, "no-store")],
            token.to_string(),
        )
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
