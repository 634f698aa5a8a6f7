//! The hosted checkout page a `create_checkout_session` link opens. With the sandbox it shows
//! what would be paid and says plainly that no real payment happens here; with Stripe it sends
//! the browser on to the card page of the session's account (`card_page.rs`), where the card
//! its confirmed orders are charged to is saved. It speaks the
//! browser's first `Accept-Language` (English, Spanish or Portuguese, as the widget does).

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use giftgenius_words::format::format_money;
use giftgenius_words::i18n::{Lang, Msg, words};
use std::sync::Arc;

use super::escape;
use crate::context::new_reference;
use crate::state::AppState;
use giftgenius_commerce::clock::rfc3339;

/// The first language tag of `Accept-Language` ("pt-BR,pt;q=0.9,en;q=0.8" → "pt-BR").
pub fn browser_locale(headers: &HeaderMap) -> String {
    let first = headers
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(',').next())
        .map(|tag| tag.split(';').next().unwrap_or("").trim())
        .unwrap_or("");
    let plausible =
        !first.is_empty() && first.len() <= 35 && first.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if plausible { first.to_string() } else { "en-US".to_string() }
}

/// `GET /checkout/{id}`
pub async fn checkout_page(State(app): State<Arc<AppState>>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let locale = browser_locale(&headers);
    let lang = Lang::from_locale(&locale);
    let session = match app.checkout.store.checkout_session(&id).await {
        Ok(Some(session)) => session,
        Ok(None) => return (StatusCode::NOT_FOUND, lang.t(Msg::CheckoutPageMissing)).into_response(),
        Err(e) => {
            let reference = new_reference();
            tracing::error!(reference, error = %e, "checkout page failed");
            return (StatusCode::INTERNAL_SERVER_ERROR, lang.f(Msg::SomethingWrongRef, &[("reference", &reference)]))
                .into_response();
        }
    };
    if let (Some(stripe), Some(page)) = (app.checkout.payments.stripe_cards(), app.checkout.card_page.as_deref()) {
        // With Stripe the page saves the card the session's account pays with: the card page,
        // under a capability minted now for that account's Customer (never for the browser's say).
        let now = app.checkout.clock.now_ms();
        if session.expires_at_ms <= now {
            return (StatusCode::NOT_FOUND, lang.t(Msg::CheckoutPageMissing)).into_response();
        }
        let customer = app.checkout.payments.within("the customer", stripe.customer_for(&session.subject)).await;
        return match customer {
            Ok(customer) => {
                let link = page.links.url(&customer, now);
                let mut response = StatusCode::SEE_OTHER.into_response();
                if let Ok(location) = header::HeaderValue::from_str(&link) {
                    response.headers_mut().insert(header::LOCATION, location);
                }
                response.headers_mut().insert(header::REFERRER_POLICY, header::HeaderValue::from_static("no-referrer"));
                response.headers_mut().insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-store"));
                response
            }
            Err(e) => {
                let reference = new_reference();
                tracing::error!(reference, error = ?e, "checkout page: no Stripe customer");
                (StatusCode::SERVICE_UNAVAILABLE, lang.f(Msg::SomethingWrongRef, &[("reference", &reference)]))
                    .into_response()
            }
        };
    }
    let title =
        app.catalog.get(&session.gift_id).map(|g| g.title.to_string()).unwrap_or_else(|| session.gift_id.clone());
    let amount = format_money(&session.amount(), &locale);
    let expires = words::date(lang, &rfc3339(session.expires_at_ms));
    let html = format!(
        "<!doctype html><html lang=\"{}\"><head><meta charset=\"utf-8\"><title>{heading}</title>\
         <meta name=\"viewport\" content=\"width=device-width\"></head><body style=\"font-family:sans-serif;max-width:32rem;margin:2rem auto\">\
         <h1>{heading}</h1><p><strong>{}</strong></p><p>{}</p><p>{}</p>\
         <p><em>{}</em></p></body></html>",
        lang.code(),
        escape(&title),
        escape(&lang.f(Msg::CheckoutPageAmount, &[("amount", &amount)])),
        escape(&lang.f(Msg::CheckoutPageExpires, &[("id", &session.id), ("date", &expires)])),
        escape(lang.t(Msg::CheckoutPageSandbox)),
        heading = escape(lang.t(Msg::CheckoutPageTitle)),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_browser_locale_is_the_first_plausible_tag() {
        let with = |value: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::ACCEPT_LANGUAGE, value.parse().unwrap());
            browser_locale(&h)
        };
        assert_eq!(with("pt-BR,pt;q=0.9,en;q=0.8"), "pt-BR");
        assert_eq!(with("es;q=0.7"), "es");
        assert_eq!(with("<script>"), "en-US");
        assert_eq!(browser_locale(&HeaderMap::new()), "en-US");
    }
}
