//! The hosted 3-D Secure page, with Stripe: where a person confirms with their bank an order's
//! payment that Stripe held for authentication (`checkout::authenticate`).
//!
//! - `GET /pay/authenticate/{capability}`: the order awaiting authentication → what is paid
//!   and "Confirm with my bank", which runs Stripe.js `confirmCardPayment(client_secret)`
//!   (`/pay/authenticate.js`; localstripe's stand-in shows its own 3-D Secure dialog, Stripe's
//!   the bank's). An order that no longer waits → its status; a link not ours → one 404 page.
//! - `GET /pay/authenticate/{capability}/done`: after Stripe.js finished, the order is settled on
//!   Stripe's word (`Checkout::settle_authentication` asks Stripe's API, as a verified webhook or
//!   the reconciler would), never the browser's: the page then says it is paid, or that the bank
//!   confirmed it and the order shows paid once Stripe tells us.
//!
//! Same headers, languages and CSP as the card page (`card_page.rs`).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use giftgenius_types::{Order, OrderStatus};
use giftgenius_words::format::format_money;
use giftgenius_words::i18n::{Lang, Msg};

use super::card_page::page;
use super::checkout_page::browser_locale;
use super::escape;
use crate::checkout::authenticate::AuthenticationPage;
use crate::context::new_reference;
use crate::state::AppState;

/// The route of the page's script.
pub const SCRIPT_PATH: &str = "/pay/authenticate.js";

/// `confirmCardPayment`, then the `done` route; text only (`textContent`).
const SCRIPT: &str = r##""use strict";
(function () {
  var form = document.getElementById("gg-auth-form");
  if (!form || typeof Stripe !== "function") return;
  var d = form.dataset, status = document.getElementById("gg-auth-status"), button = form.querySelector("button");
  var stripe = Stripe(d.key);
  button.disabled = false;
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    button.disabled = true;
    status.textContent = d.working;
    stripe.confirmCardPayment(d.secret).then(function (result) {
      if (result.error) {
        status.textContent = d.failed;
        button.disabled = false;
        return;
      }
      window.location.assign(d.done);
    });
  });
})();
"##;

fn status_words(status: OrderStatus, lang: Lang) -> &'static str {
    lang.t(match status {
        OrderStatus::Paid => Msg::StatusPaid,
        OrderStatus::Processing => Msg::StatusProcessing,
        OrderStatus::Shipped => Msg::StatusShipped,
        OrderStatus::Completed => Msg::StatusCompleted,
        OrderStatus::PendingPayment => Msg::StatusPending,
        OrderStatus::AwaitingAuthentication => Msg::StatusAwaitingAuthentication,
        OrderStatus::PaymentDeclined => Msg::StatusDeclined,
        OrderStatus::Cancelled => Msg::StatusCancelled,
    })
}

/// The order's line: "{gift} ×n — total" (a basket's gifts joined).
fn order_line(order: &Order, lang: Lang, locale: &str) -> String {
    let gifts: Vec<&str> = order.lines.iter().map(|line| line.gift_title.as_str()).collect();
    lang.f(Msg::AuthPageIntro, &[("amount", &format_money(&order.total, locale)), ("gift", &gifts.join(", "))])
}

/// What a token's page shows, after the checkout said what it is.
fn answer(
    found: Result<AuthenticationPage, giftgenius_commerce::store::StoreError>,
    token: &str,
    headers: &HeaderMap,
    done: bool,
    stripe_js: Option<&str>,
) -> Response {
    let locale = browser_locale(headers);
    let lang = Lang::from_locale(&locale);
    let said = |key: Msg| format!("<p>{}</p>", escape(lang.t(key)));
    match found {
        Ok(AuthenticationPage::Unknown) => {
            page(StatusCode::NOT_FOUND, lang, Msg::AuthPageTitle, None, &said(Msg::AuthPageGone))
        }
        Ok(AuthenticationPage::Settled(order)) => {
            let body = match order.status {
                OrderStatus::Paid | OrderStatus::Processing | OrderStatus::Shipped | OrderStatus::Completed => {
                    format!(
                        "<p data-order-status=\"{}\">{}</p>",
                        order.status.as_str(),
                        escape(lang.t(Msg::AuthPagePaid))
                    )
                }
                status => format!(
                    "<p data-order-status=\"{}\">{}</p>",
                    status.as_str(),
                    escape(&lang.f(Msg::AuthPageSettled, &[("status", status_words(status, lang))]))
                ),
            };
            page(StatusCode::OK, lang, Msg::AuthPageTitle, None, &body)
        }
        // Back from Stripe.js, still waiting on Stripe's word: say so, never "paid".
        Ok(AuthenticationPage::Ready { .. }) if done => {
            let body = format!(
                "<p data-order-status=\"awaiting_authentication\">{}</p>",
                escape(lang.t(Msg::AuthPageConfirmed))
            );
            page(StatusCode::OK, lang, Msg::AuthPageTitle, None, &body)
        }
        Ok(AuthenticationPage::Ready { order, authentication }) => {
            let body = format!(
                "<p>{intro}</p>\
                 <form id=\"gg-auth-form\" data-key=\"{key}\" data-secret=\"{secret}\" data-done=\"{done}\" \
                 data-working=\"{working}\" data-failed=\"{failed}\">\
                 <button type=\"submit\" disabled>{button}</button></form>\
                 <p id=\"gg-auth-status\" role=\"status\" aria-live=\"polite\"></p>",
                intro = escape(&order_line(&order, lang, &locale)),
                key = escape(&authentication.publishable_key),
                secret = escape(&authentication.client_secret),
                done = escape(&format!("/pay/authenticate/{token}/done")),
                working = escape(lang.t(Msg::AuthPageWorking)),
                failed = escape(lang.t(Msg::AuthPageFailed)),
                button = escape(lang.t(Msg::AuthPageButton)),
            );
            match stripe_js {
                Some(stripe_js) => {
                    page(StatusCode::OK, lang, Msg::AuthPageTitle, Some((stripe_js, SCRIPT_PATH)), &body)
                }
                None => {
                    page(StatusCode::SERVICE_UNAVAILABLE, lang, Msg::AuthPageTitle, None, &said(Msg::AuthPageFailed))
                }
            }
        }
        Ok(AuthenticationPage::Unavailable) | Err(_) => {
            let reference = new_reference();
            if let Err(e) = &found {
                tracing::error!(reference, error = %e, "authentication page failed");
            } else {
                tracing::warn!(reference, "authentication page: the provider did not answer");
            }
            let body = format!("<p>{}</p>", escape(&lang.f(Msg::SomethingWrongRef, &[("reference", &reference)])));
            page(StatusCode::SERVICE_UNAVAILABLE, lang, Msg::AuthPageTitle, None, &body)
        }
    }
}

/// `GET /pay/authenticate/{token}`
pub async fn authenticate_page(
    State(app): State<Arc<AppState>>,
    Path(token): Path<String>,
    headers: HeaderMap,
) -> Response {
    let found = app.checkout.authentication_page(&token).await;
    answer(found, &token, &headers, false, app.checkout.card_page.as_ref().map(|p| p.js_url.as_str()))
}

/// `GET /pay/authenticate/{token}/done`
pub async fn authenticate_done(
    State(app): State<Arc<AppState>>,
    Path(token): Path<String>,
    headers: HeaderMap,
) -> Response {
    let found = app.checkout.settle_authentication(&token).await;
    answer(found, &token, &headers, true, app.checkout.card_page.as_ref().map(|p| p.js_url.as_str()))
}

/// `GET /pay/authenticate.js`
pub async fn authenticate_script() -> Response {
    let headers = [
        (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
        (header::CACHE_CONTROL, "public, max-age=300"),
        (header::HeaderName::from_static("x-content-type-options"), "nosniff"),
    ];
    (headers, SCRIPT).into_response()
}
