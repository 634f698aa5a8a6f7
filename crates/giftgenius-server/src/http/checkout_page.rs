//! The hosted checkout page a `create_checkout_session` link opens. This is the sandbox: it
//! shows what would be paid and says plainly that no real payment happens here.

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

use super::escape;
use crate::clock::rfc3339;
use crate::context::new_reference;
use crate::state::AppState;

/// `GET /checkout/{id}`
pub async fn checkout_page(State(app): State<Arc<AppState>>, Path(id): Path<String>) -> Response {
    let session = match app.checkout.store.checkout_session(&id).await {
        Ok(Some(session)) => session,
        Ok(None) => return (StatusCode::NOT_FOUND, "No such checkout session.").into_response(),
        Err(e) => {
            let reference = new_reference();
            tracing::error!(reference, error = %e, "checkout page failed");
            return (StatusCode::INTERNAL_SERVER_ERROR, format!("Something went wrong. Reference: {reference}"))
                .into_response();
        }
    };
    let title = app.catalog.get(&session.gift_id).map(|g| g.title.clone()).unwrap_or_else(|| session.gift_id.clone());
    let amount = session.amount().display();
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>GiftGenius checkout</title>\
         <meta name=\"viewport\" content=\"width=device-width\"></head><body style=\"font-family:sans-serif;max-width:32rem;margin:2rem auto\">\
         <h1>GiftGenius checkout</h1><p><strong>{}</strong></p><p>Amount: {}</p><p>Session {} expires at {}.</p>\
         <p><em>Sandbox: this page does not take real payments.</em></p></body></html>",
        escape(&title),
        escape(&amount),
        escape(&session.id),
        rfc3339(session.expires_at_ms)
    );
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, "default-src 'none'; style-src 'unsafe-inline'"),
        ],
        html,
    )
        .into_response()
}
