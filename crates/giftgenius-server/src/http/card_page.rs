//! The hosted card page, with Stripe (`--payments stripe`): where a person saves the card their
//! confirmed orders are charged to, in a plain browser, with Stripe.js Elements. The card number
//! goes from Stripe's Card Element to Stripe only, never to this server or the widget.
//!
//! - `GET /pay/card/{capability}`: the capability (`checkout::card_links`) names the account's
//!   Stripe Customer. The link is a bearer link shown where someone else could copy it, so the
//!   page first says whose account the card goes to (the name or email the account signed in
//!   with, recorded when the link was made: `Checkout::remember_account_name`) and asks the
//!   person to tick "This is my account (…)" and go on. Nothing is created at Stripe yet.
//! - `POST /pay/card/{capability}` (`account_confirmed=yes`, from this page only: the browser's
//!   `Sec-Fetch-Site: same-origin` or our own `Origin`): without the tick it is the same page
//!   again (422), nothing created; with it, a fresh SetupIntent (`usage=off_session`, card,
//!   marked as confirmed in its metadata) under an idempotency key derived from the link, and
//!   the page: the Card Element and Save card. `card.js` confirms the SetupIntent with
//!   `stripe.confirmCardSetup` and then opens the next route.
//! - `GET /pay/card/{capability}/saved?setup_intent=seti_…`: the SetupIntent read from Stripe
//!   with our secret key (it must be the Customer's, `succeeded` and confirmed), its card attached and made
//!   the one charged, and the page says which card was saved — as Stripe reports it, whatever
//!   the browser claimed.
//! - `GET /pay/card.js`: the page's own script (no inline script, so the CSP needs no nonce).
//!
//! An expired, tampered or made-up link is one 404 page saying the link is not valid, without
//! saying why. The pages speak the browser's first `Accept-Language` (en/es/pt), are kept out
//! of search engines, caches and `Referer` headers, and carry a CSP that allows scripts only
//! from this server and Stripe.js's origin ([`content_security_policy`]).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use giftgenius_words::i18n::{Lang, Msg, words};
use sha2::{Digest, Sha256};

use super::checkout_page::browser_locale;
use super::escape;
use crate::checkout::cards::CardPage;
use crate::context::new_reference;
use crate::state::AppState;
use giftgenius_commerce::payments::stripe::StripeClient;
use giftgenius_commerce::payments::stripe::cards::SetupRefused;

/// The form field the person ticks to confirm the account is theirs.
const CONFIRM_FIELD: &str = "account_confirmed";

/// The route of the page's script.
pub const SCRIPT_PATH: &str = "/pay/card.js";

/// The page's script: Stripe.js's Card Element, `confirmCardSetup`, then the `saved` route.
/// Everything it needs is in the form's `data-` attributes; it writes text only (`textContent`).
const SCRIPT: &str = r##""use strict";
(function () {
  var form = document.getElementById("gg-card-form");
  if (!form || typeof Stripe !== "function") return;
  var d = form.dataset, status = document.getElementById("gg-card-status"), button = form.querySelector("button");
  var stripe = Stripe(d.key), card = stripe.elements().create("card");
  card.mount("#gg-card-element");
  button.disabled = false;
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    button.disabled = true;
    status.textContent = d.saving;
    stripe.confirmCardSetup(d.secret, { payment_method: { card: card } }).then(function (result) {
      if (result.error || !result.setupIntent) {
        status.textContent = d.failed;
        button.disabled = false;
        return;
      }
      window.location.assign(d.saved + "?setup_intent=" + encodeURIComponent(result.setupIntent.id));
    });
  });
})();
"##;

/// The origin (`scheme://host[:port]`) of a URL, if it has one.
fn origin(url: &str) -> Option<String> {
    let url = url::Url::parse(url).ok()?;
    let origin = url.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

/// The page's CSP: scripts from this server and Stripe.js's origin only, no inline script;
/// Stripe.js may talk to and frame what it needs. For Stripe's own Stripe.js that is Stripe's
/// documented set (`api.stripe.com`, and `hooks.stripe.com` frames for 3-D Secure); for
/// another (an emulator such as localstripe, whose stand-in calls the API on its own origin)
/// that origin alone.
/// Without Stripe.js (the pages that only say something): no script at all.
pub fn content_security_policy(js_url: Option<&str>) -> String {
    const STATIC: &str =
        "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    let Some(js) = js_url.and_then(origin) else { return STATIC.to_string() };
    let (connect, frame) = if js == "https://js.stripe.com" {
        ("https://api.stripe.com".to_string(), "https://js.stripe.com https://hooks.stripe.com".to_string())
    } else {
        (js.clone(), js.clone())
    };
    format!(
        "default-src 'none'; script-src 'self' {js}; connect-src {connect}; frame-src {frame}; \
         style-src 'unsafe-inline'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
}

/// What the card page needs, or the page that says the link is not valid.
struct Opened<'a> {
    stripe: &'a StripeClient,
    page: &'a CardPage,
    customer: String,
    /// Whose account the card is saved to, as they signed in (shown escaped).
    account: String,
    lang: Lang,
}

/// The link's account and what the page needs; else the page to answer (the link is gone, or
/// its account used up `--hourly-payment-lookup-limit`: every load counts, as the confirmed one
/// asks Stripe).
async fn open<'a>(app: &'a AppState, token: &str, headers: &HeaderMap) -> Result<Opened<'a>, Response> {
    let lang = Lang::from_locale(&browser_locale(headers));
    let gone = || {
        page(
            StatusCode::NOT_FOUND,
            lang,
            Msg::CardPageTitle,
            None,
            &format!("<p>{}</p>", escape(lang.t(Msg::CardPageGone))),
        )
    };
    let (Some(stripe), Some(page)) = (app.checkout.payments.stripe_cards(), app.checkout.card_page.as_deref()) else {
        return Err(gone());
    };
    let Some(customer) = page.links.customer(token, app.checkout.clock.now_ms()) else { return Err(gone()) };
    match app.limits.take_page_lookup(&format!("stripe-customer:{customer}")).await {
        Ok(None) => {}
        Ok(Some(wait)) => return Err(too_many_loads(lang, wait)),
        Err(e) => return Err(failed(lang, "card page: the lookup limit could not be counted", e)),
    }
    // Without a name to show, the person could not tell whose account it is: not valid.
    let account = match app.checkout.store.account_name_of_customer(customer).await {
        Ok(Some(account)) => account,
        Ok(None) => return Err(gone()),
        Err(e) => return Err(failed(lang, "card page: the account's name unreadable", e)),
    };
    Ok(Opened { stripe, page, customer: customer.to_string(), account, lang })
}

/// Whether a form post comes from our own page: the browser says so (`Sec-Fetch-Site:
/// same-origin`), or, from a browser that sends no fetch metadata, its `Origin` is ours (the
/// confirmation page's `Referrer-Policy: same-origin` keeps that header from being `null`).
fn from_our_page(headers: &HeaderMap, public_url: &str) -> bool {
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    match text(header::HeaderName::from_static("sec-fetch-site")) {
        Some(site) => site == "same-origin",
        None => text(header::ORIGIN).is_some_and(|sent| origin(public_url).is_some_and(|ours| ours == sent)),
    }
}

/// The page that says whose account the card goes to and asks the person to confirm it is
/// theirs (`refused`: they went on without, or from another site, and are asked again). It
/// posts to itself.
fn confirmation_page(status: StatusCode, opened: &Opened<'_>, refused: bool) -> Response {
    let lang = opened.lang;
    let account: &str = &opened.account;
    let again = if refused {
        format!("<p role=\"alert\" data-confirm-first>{}</p>", escape(lang.t(Msg::CardPageConfirmFirst)))
    } else {
        String::new()
    };
    let body = format!(
        "<p>{intro}</p><p data-account=\"{shown}\"><strong>{whose}</strong></p>{again}\
         <form id=\"gg-account-form\" method=\"post\"><p><label><input type=\"checkbox\" id=\"gg-account-confirm\" \
         name=\"{CONFIRM_FIELD}\" value=\"yes\" required> {mine}</label></p>\
         <p><button type=\"submit\">{next}</button></p></form>",
        intro = escape(lang.t(Msg::CardPageIntro)),
        shown = escape(account),
        whose = escape(&lang.f(Msg::CardPageAccount, &[("account", account)])),
        mine = escape(&lang.f(Msg::CardPageConfirmAccount, &[("account", account)])),
        next = escape(lang.t(Msg::CardPageContinue)),
    );
    let mut response = page(status, lang, Msg::CardPageTitle, None, &body);
    let headers = response.headers_mut();
    // Its one form posts here; `same-origin` so the browser's Origin on that post is ours, not `null`.
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    if let Ok(csp) =
        HeaderValue::from_str(&content_security_policy(None).replace("form-action 'none'", "form-action 'self'"))
    {
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    response
}

/// 429 with `Retry-After`: this account's card page loads (and lookups) of the hour are used up.
fn too_many_loads(lang: Lang, wait: std::time::Duration) -> Response {
    tracing::info!("card page: the account's hourly payment lookups are used up");
    let resets = lang.f(Msg::ResetsIn, &[("wait", &words::wait_phrase(lang, wait.as_millis() as u64))]);
    let body = format!("<p data-rate-limited>{} {}</p>", escape(lang.t(Msg::ErrHourlyLimit)), escape(&resets));
    let mut response = page(StatusCode::TOO_MANY_REQUESTS, lang, Msg::CardPageTitle, None, &body);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from((wait.as_millis().div_ceil(1000) as u64).max(1)));
    response
}

fn failed(lang: Lang, what: &str, error: impl std::fmt::Debug) -> Response {
    let reference = new_reference();
    tracing::error!(reference, error = ?error, "{what}");
    let body = format!("<p>{}</p>", escape(&lang.f(Msg::SomethingWrongRef, &[("reference", &reference)])));
    page(StatusCode::SERVICE_UNAVAILABLE, lang, Msg::CardPageTitle, None, &body)
}

/// `GET /pay/card/{token}`: whose account, and the confirmation.
pub async fn card_page(State(app): State<Arc<AppState>>, Path(token): Path<String>, headers: HeaderMap) -> Response {
    match open(&app, &token, &headers).await {
        Ok(opened) => confirmation_page(StatusCode::OK, &opened, false),
        Err(gone) => gone,
    }
}

/// `POST /pay/card/{token}`: with the person's confirmation from our page, the card form.
pub async fn card_confirmed(
    State(app): State<Arc<AppState>>,
    Path(token): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let opened = match open(&app, &token, &headers).await {
        Ok(opened) => opened,
        Err(gone) => return gone,
    };
    if !from_our_page(&headers, &app.checkout.public_url) {
        tracing::warn!("card page: a confirmation posted from another site refused");
        return confirmation_page(StatusCode::FORBIDDEN, &opened, true);
    }
    let confirmed = url::form_urlencoded::parse(&body).any(|(name, value)| name == CONFIRM_FIELD && value == "yes");
    if !confirmed {
        return confirmation_page(StatusCode::UNPROCESSABLE_ENTITY, &opened, true);
    }
    let Opened { stripe, page: card_page, customer, lang, .. } = opened;
    // One SetupIntent per link at Stripe (a reload replays it); the key names no one.
    let key = format!("ggsc_{}", &hex::encode(Sha256::digest(token.as_bytes()))[..32]);
    let setup = match app.checkout.payments.within("the setup intent", stripe.create_setup(&customer, &key)).await {
        Ok(setup) => setup,
        Err(e) => return failed(lang, "card page: no setup intent", e),
    };
    let body = format!(
        "<p>{intro}</p>\
         <form id=\"gg-card-form\" data-key=\"{key}\" data-secret=\"{secret}\" data-saved=\"{saved}\" \
         data-saving=\"{saving}\" data-failed=\"{failed}\">\
         <div id=\"gg-card-element\" style=\"padding:.75rem;border:1px solid #999;border-radius:.4rem;margin:1rem 0\"></div>\
         <button type=\"submit\" disabled>{save}</button></form>\
         <p id=\"gg-card-status\" role=\"status\" aria-live=\"polite\"></p>",
        intro = escape(lang.t(Msg::CardPageIntro)),
        key = escape(&card_page.publishable_key),
        secret = escape(&setup.client_secret),
        saved = escape(&format!("{}{token}/saved", giftgenius_types::wire::CARD_PAGE_PATH)),
        saving = escape(lang.t(Msg::CardPageSaving)),
        failed = escape(lang.t(Msg::CardPageNotSaved)),
        save = escape(lang.t(Msg::CardPageSave)),
    );
    page(StatusCode::OK, lang, Msg::CardPageTitle, Some((&card_page.js_url, SCRIPT_PATH)), &body)
}

#[derive(Debug, serde::Deserialize)]
pub struct SavedQuery {
    #[serde(default)]
    setup_intent: String,
}

/// `GET /pay/card/{token}/saved?setup_intent=…`
pub async fn card_saved(
    State(app): State<Arc<AppState>>,
    Path(token): Path<String>,
    Query(query): Query<SavedQuery>,
    headers: HeaderMap,
) -> Response {
    let opened = match open(&app, &token, &headers).await {
        Ok(opened) => opened,
        Err(gone) => return gone,
    };
    let Opened { stripe, customer, lang, .. } = opened;
    let finished = app
        .checkout
        .payments
        .within("the saved card", async { Ok(stripe.finish_setup(&customer, &query.setup_intent).await) })
        .await;
    match finished {
        Ok(Ok(card)) => {
            tracing::info!("a card was saved through the card page");
            let shown = words::card(&card.brand, &card.last4);
            let body = format!(
                "<p data-saved-card=\"{}\">{}</p>",
                escape(&card.last4),
                escape(&lang.f(Msg::CardPageSaved, &[("card", &shown)]))
            );
            page(StatusCode::OK, lang, Msg::CardPageTitle, None, &body)
        }
        Ok(Err(SetupRefused::NotSaved)) => {
            let body = format!("<p data-not-saved>{}</p>", escape(lang.t(Msg::CardPageNotSaved)));
            page(StatusCode::UNPROCESSABLE_ENTITY, lang, Msg::CardPageTitle, None, &body)
        }
        Ok(Err(SetupRefused::Unavailable(e))) | Err(e) => failed(lang, "card page: the saved card not taken", e),
    }
}

/// `GET /pay/card.js`
pub async fn card_script() -> Response {
    let headers = [
        (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
        (header::CACHE_CONTROL, "public, max-age=300"),
        (header::HeaderName::from_static("x-content-type-options"), "nosniff"),
    ];
    (headers, SCRIPT).into_response()
}

/// A hosted payment page around `body` (already escaped), titled `title`; `scripts`: Stripe.js's
/// URL and the page's own script, loaded in that order (the CSP allows exactly their origins).
pub(super) fn page(status: StatusCode, lang: Lang, title: Msg, scripts: Option<(&str, &str)>, body: &str) -> Response {
    let heading = escape(lang.t(title));
    let stripe_js = scripts.map(|(stripe_js, _)| stripe_js);
    let scripts = match scripts {
        Some((url, ours)) => format!("<script src=\"{}\"></script><script src=\"{ours}\"></script>", escape(url)),
        None => String::new(),
    };
    let html = format!(
        "<!doctype html><html lang=\"{}\"><head><meta charset=\"utf-8\"><title>{heading}</title>\
         <meta name=\"viewport\" content=\"width=device-width\"><meta name=\"robots\" content=\"noindex\"></head>\
         <body style=\"font-family:sans-serif;max-width:32rem;margin:2rem auto\"><h1>{heading}</h1>{body}{scripts}</body></html>",
        lang.code(),
    );
    let csp = content_security_policy(stripe_js);
    let mut response = (status, html).into_response();
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_TYPE, "text/html; charset=utf-8"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CACHE_CONTROL, "no-store"),
        (header::HeaderName::from_static("x-robots-tag"), "noindex"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    if let Ok(csp) = HeaderValue::from_str(&csp) {
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_csp_allows_scripts_from_us_and_stripe_js_only() {
        let stripe = content_security_policy(Some("https://js.stripe.com/v3/"));
        assert!(stripe.contains("script-src 'self' https://js.stripe.com;"), "{stripe}");
        assert!(stripe.contains("connect-src https://api.stripe.com;"), "{stripe}");
        assert!(stripe.contains("frame-src https://js.stripe.com https://hooks.stripe.com;"), "{stripe}");
        assert!(!stripe.contains("unsafe-eval") && !stripe.contains("script-src 'self' 'unsafe-inline'"));
        let emulator = content_security_policy(Some("http://127.0.0.1:8420/js.stripe.com/v3/"));
        assert!(emulator.contains("script-src 'self' http://127.0.0.1:8420;"), "{emulator}");
        assert!(emulator.contains("connect-src http://127.0.0.1:8420;"), "{emulator}");
        let none = content_security_policy(None);
        assert!(!none.contains("script-src") && none.starts_with("default-src 'none';"), "{none}");
    }
}
