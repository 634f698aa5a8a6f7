//! An order's status page, `GET /o/{token}`: the ACP order's `permalink_url` (issue 25). Anyone
//! holding the link sees the order's status, the gift, the total, when it was placed and, once
//! shipped, the carrier and tracking number (a link to the carrier's page), in the
//! browser's language (English, Spanish or Portuguese); never the recipient's name, address or
//! message. It is the page a buyer may forward to the recipient, so an order with a gift
//! receipt shows no price on it. The link is unguessable (`permalink.rs`), so the page asks for no login;
//! it is kept out of search engines and its URL out of `Referer` headers.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use giftgenius_words::format::format_money;
use giftgenius_words::i18n::{Lang, Msg, words};

use super::checkout_page::browser_locale;
use super::escape;
use crate::context::new_reference;
use crate::state::AppState;
use giftgenius_commerce::clock::rfc3339;
use giftgenius_commerce::store::OrderStatusColumn;

/// `GET /o/{token}`
pub async fn order_page(State(app): State<Arc<AppState>>, Path(token): Path<String>, headers: HeaderMap) -> Response {
    let locale = browser_locale(&headers);
    let lang = Lang::from_locale(&locale);
    let missing = || page(StatusCode::NOT_FOUND, lang, &format!("<p>{}</p>", escape(lang.t(Msg::OrderPageMissing))));
    let Some(order_id) = app.checkout.permalinks.order_id(&token) else { return missing() };
    let order = match app.checkout.store.order_by_id(order_id).await {
        Ok(Some(order)) => order,
        Ok(None) => return missing(),
        Err(e) => {
            let reference = new_reference();
            tracing::error!(reference, error = %e, "order page failed");
            let body = format!("<p>{}</p>", escape(&lang.f(Msg::SomethingWrongRef, &[("reference", &reference)])));
            return page(StatusCode::INTERNAL_SERVER_ERROR, lang, &body);
        }
    };
    let status = match order.status {
        OrderStatusColumn::Paid => lang.t(Msg::OrderPageConfirmed),
        OrderStatusColumn::PendingPayment => lang.t(Msg::StatusPending),
        OrderStatusColumn::PaymentDeclined => lang.t(Msg::StatusDeclined),
        OrderStatusColumn::Cancelled => lang.t(Msg::StatusCancelled),
        OrderStatusColumn::Processing => lang.t(Msg::StatusProcessing),
        OrderStatusColumn::Shipped => lang.t(Msg::StatusShipped),
        OrderStatusColumn::Completed => lang.t(Msg::StatusCompleted),
    };
    // Every line of the order, one per row (a basket has several).
    let lines = order
        .lines()
        .iter()
        .map(|line| {
            escape(&lang.f(
                Msg::OrderFrom,
                &[("gift", &line.gift_title), ("quantity", &line.quantity.to_string()), ("merchant", &line.merchant)],
            ))
        })
        .collect::<Vec<_>>()
        .join("<br>");
    // The page a buyer may forward to the recipient: with a gift receipt it shows no price.
    let total = if order.gift_receipt != 0 {
        format!("<p data-gift-receipt>{}</p>", escape(lang.t(Msg::GiftReceipt)))
    } else {
        format!(
            "<dl><dt>{}</dt><dd data-total>{}</dd></dl>",
            escape(lang.t(Msg::Total)),
            escape(&format_money(&order.total(), &locale))
        )
    };
    // While it is on its way: the days it was promised when it was placed.
    let arrives = match (&order.arrives_earliest, &order.arrives_latest, order.status) {
        (
            Some(earliest),
            Some(latest),
            OrderStatusColumn::Paid | OrderStatusColumn::Processing | OrderStatusColumn::Shipped,
        ) => format!(
            "<dt>{}</dt><dd data-arrives>{}</dd>",
            escape(lang.t(Msg::Arrives)),
            escape(&words::days(lang, earliest, latest))
        ),
        _ => String::new(),
    };
    let wrapped =
        order.gift_wrap_minor.is_some().then(|| format!("<p data-gift-wrap>{}</p>", escape(lang.t(Msg::GiftWrap))));
    let body = format!(
        "<p><strong>{}</strong></p><dl><dt>{}</dt><dd>{}</dd><dt>{}</dt><dd data-status=\"{}\">{}</dd>{}{}</dl>\
         {}{}<p>{}</p>",
        lines,
        escape(lang.t(Msg::Order)),
        escape(&order.id),
        escape(lang.t(Msg::Status)),
        order.status.as_str(),
        escape(status),
        arrives,
        shipment(&order, lang),
        wrapped.unwrap_or_default(),
        total,
        escape(&lang.f(Msg::OrderPagePlaced, &[("date", &words::date(lang, &rfc3339(order.created_at_ms)))])),
    );
    page(StatusCode::OK, lang, &body)
}

/// Once shipped (and after): when, with which carrier, and the tracking number linking to the
/// carrier's page — labelled "Shipped" in the page's language; the carrier's name and number
/// are the operator's data and need no translation. Empty before shipping.
fn shipment(order: &giftgenius_commerce::order::Order, lang: Lang) -> String {
    let shipped = &order.fulfilment;
    let Some(shipped_at) = shipped.shipped_at_ms else { return String::new() };
    let mut parts = vec![escape(&words::date(lang, &rfc3339(shipped_at)))];
    if let Some(carrier) = &shipped.carrier {
        parts.push(escape(carrier));
    }
    match (&shipped.tracking_number, &shipped.tracking_url) {
        // The URL was checked to be https when it was stored, so it is a link, never a script.
        (Some(number), Some(url)) => parts.push(format!(
            "<a href=\"{}\" rel=\"noopener noreferrer\" data-tracking>{}</a>",
            escape(url),
            escape(number)
        )),
        (Some(number), None) => parts.push(format!("<span data-tracking>{}</span>", escape(number))),
        _ => {}
    }
    format!("<dt>{}</dt><dd data-shipment>{}</dd>", escape(lang.t(Msg::StatusShipped)), parts.join(" · "))
}

/// The page around `body` (already escaped), with the headers every status page carries.
fn page(status: StatusCode, lang: Lang, body: &str) -> Response {
    let heading = escape(lang.t(Msg::OrderPageTitle));
    let html = format!(
        "<!doctype html><html lang=\"{}\"><head><meta charset=\"utf-8\"><title>{heading}</title>\
         <meta name=\"viewport\" content=\"width=device-width\"><meta name=\"robots\" content=\"noindex\"></head>\
         <body style=\"font-family:sans-serif;max-width:32rem;margin:2rem auto\"><h1>{heading}</h1>{body}</body></html>",
        lang.code(),
    );
    let mut response = (status, html).into_response();
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_TYPE, "text/html; charset=utf-8"),
        (header::CONTENT_SECURITY_POLICY, "default-src 'none'; style-src 'unsafe-inline'"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CACHE_CONTROL, "no-store"),
        (header::HeaderName::from_static("x-robots-tag"), "noindex"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}
