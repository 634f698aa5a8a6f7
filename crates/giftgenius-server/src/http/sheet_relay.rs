//! `POST /preview/sheet/delegate` (docs/acp.md §14.4): the preview host's emulated payment
//! sheet turns test card fields into a vault token here. The server holds the sandbox
//! provider's delegate-payment key and calls its `delegate_payment` with an allowance for one
//! charge of the session's total, so the page never sees the key (and a browser could not
//! reach the loopback-guarded provider anyway). Local only, like every `/preview` route.

use std::path::Path;
use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use giftgenius_pay_api::delegate::{API_VERSION_HEADER, DELEGATE_PAYMENT_PATH, SUPPORTED_VERSIONS};
use giftgenius_pay_api::token::DelegateKey;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::config::Config;
use crate::state::AppState;

/// How long a relayed token may be used.
const TOKEN_TTL_MS: i64 = 15 * 60 * 1000;

/// Where delegate_payment is and the key it takes.
pub struct SheetRelay {
    url: String,
    key: DelegateKey,
    merchant_id: String,
    http: reqwest::Client,
}

impl SheetRelay {
    /// The sandbox provider this server started, else the one `--payments-url` names, whose
    /// key the provider writes beside its secret (`<token file>.delegate-key`'s stem, its
    /// default). `None`: no key, so the relay answers 503.
    pub fn of(config: &Config, app: &AppState) -> Option<Arc<SheetRelay>> {
        let (url, key) = match (&app.sandbox, &config.payments_url, &config.payments_token_file) {
            (Some(sandbox), _, _) => (sandbox.url.clone(), sandbox.delegate_key.clone()),
            (None, Some(url), Some(token_file)) => (url.clone(), key_beside(token_file)?),
            _ => return None,
        };
        let http = reqwest::Client::builder().timeout(std::time::Duration::from_secs(10)).build().ok()?;
        Some(Arc::new(SheetRelay { url, key, merchant_id: config.acp_merchant_id.clone(), http }))
    }
}

fn key_beside(token_file: &Path) -> Option<DelegateKey> {
    DelegateKey::read(&token_file.with_extension("delegate-key"))
        .inspect_err(|e| tracing::info!(error = %e, "the preview's sheet relay has no delegate-payment key"))
        .ok()
}

/// What the emulated sheet sends: the session it pays and a test card.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelayRequest {
    pub checkout_session_id: String,
    /// The session's total in minor units, and its currency: the allowance's ceiling.
    pub max_amount: i64,
    pub currency: String,
    pub number: String,
    pub exp_month: String,
    pub exp_year: String,
    pub cvc: String,
    #[serde(default)]
    pub name: Option<String>,
}

/// The relay itself: a `vt_…` token, or the provider's refusal passed on (its status and body
/// carry no secret).
pub async fn delegate(State(relay): State<Option<Arc<SheetRelay>>>, Json(card): Json<RelayRequest>) -> Response {
    let Some(relay) = relay else {
        return (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"error": "no sandbox payment provider key"})))
            .into_response();
    };
    let digits: String = card.number.chars().filter(char::is_ascii_digit).collect();
    if digits.len() < 12 {
        return (StatusCode::BAD_REQUEST, Json(json!({"error": "the card number is too short"}))).into_response();
    }
    let expires = giftgenius_pay_api::delegate::rfc3339::now_ms() + TOKEN_TTL_MS;
    let body = json!({
        "payment_method": {
            "type": "card",
            "card_number_type": "fpan",
            "virtual": false,
            "number": digits,
            "exp_month": card.exp_month,
            "exp_year": card.exp_year,
            "name": card.name.clone().unwrap_or_default(),
            "cvc": card.cvc,
            "checks_performed": ["cvv"],
            "display_card_funding_type": "credit",
            "display_brand": "visa",
            "display_last4": &digits[digits.len() - 4..],
            "metadata": {"card_origin": "preview_sheet"}
        },
        "allowance": {
            "reason": "one_time",
            "max_amount": card.max_amount,
            "currency": card.currency.to_ascii_lowercase(),
            "checkout_session_id": card.checkout_session_id,
            "merchant_id": relay.merchant_id,
            "expires_at": giftgenius_pay_api::delegate::rfc3339::format_ms(expires)
        },
        "risk_signals": [{"type": "card_testing", "score": 0, "action": "authorized"}],
        "metadata": {"source": "giftgenius_preview_sheet"}
    });
    let sent = relay
        .http
        .post(format!("{}{DELEGATE_PAYMENT_PATH}", relay.url))
        .header(reqwest::header::AUTHORIZATION, relay.key.bearer())
        .header(API_VERSION_HEADER, SUPPORTED_VERSIONS[0])
        .header("Idempotency-Key", format!("sheet_{}", uuid::Uuid::new_v4().simple()))
        .json(&body)
        .send()
        .await;
    let response = match sent {
        Ok(response) => response,
        Err(e) => {
            tracing::warn!(error = %e, "the preview's sheet relay could not reach the payment provider");
            return (StatusCode::BAD_GATEWAY, Json(json!({"error": "the payment provider did not answer"})))
                .into_response();
        }
    };
    let status = response.status();
    let answer: Value = response.json().await.unwrap_or(Value::Null);
    if status.is_success()
        && let Some(token) = answer["id"].as_str()
    {
        return Json(json!({"token": token})).into_response();
    }
    let code = StatusCode::from_u16(status.as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let message = answer["message"].as_str().unwrap_or("the card was refused").to_string();
    (code, Json(json!({"error": message, "code": answer["code"].clone()}))).into_response()
}
