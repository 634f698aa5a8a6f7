//! The provider's HTTP API as types: what a client sends and what it gets back. Shaped after
//! Stripe's charges API, so code written against it reads like code written against a real
//! provider: a charge is created with an `Idempotency-Key` header, errors are
//! `{"error": {"type", "code", "message"}}` with the HTTP status that classifies them, and a
//! replayed answer carries `Idempotent-Replayed: true`.
//!
//! | request | answer |
//! |---|---|
//! | `POST /v1/charges` + `Idempotency-Key`, body [`ChargeRequest`] | 200 [`Charge`] (succeeded); 402 `card_error` (declined, with the charge's id: `card_declined`, `insufficient_funds`, or a vault token refused, [`TOKEN_REFUSALS`]); 400 `idempotency_error` (the key was used with another body, vault token included); 409 `idempotency_key_in_use` (the first request with this key is still being processed); 503 `api_error` (nothing was charged) |
//! | `GET /v1/charges/{id}` | 200 [`Charge`]; 404 `resource_missing` |
//! | `GET /v1/charges?idempotency_key=K&limit=N&starting_after=ID` | 200 [`ChargeList`], oldest first: "what happened to the charge requested under K", or the whole ledger page by page |
//! | `POST /v1/refunds` + `Idempotency-Key`, body [`RefundRequest`] | 200 [`Refund`]; 400 `idempotency_error` (the key was used with another body); 400 `charge_already_refunded` (nothing left to refund); 404 `resource_missing` (no such succeeded charge); 503 `api_error` (nothing refunded). Faults apply as to charges (`decline` does not: a refund is not a card payment) |
//! | `GET /v1/refunds?idempotency_key=K&limit=N&starting_after=ID` | 200 [`RefundList`], oldest first |
//! | `POST /v1/payment_tokens/check`, body [`ChargeRequest`] with its `payment_token` | 200 [`TokenCheck`] (the token would be taken for that charge); 402 `card_error` with a [`TOKEN_REFUSALS`] code. Nothing is recorded and no money moves: a merchant asks before it creates an order, so a made-up token costs neither an order nor a ledger row |
//! | `GET/POST /admin/settings`, body [`SettingsUpdate`] | 200 [`Settings`]: latency and injected faults, stored in the provider's database so every process serving it shares them |
//! | `POST /agentic_commerce/delegate_payment` + `API-Version` + `Idempotency-Key`, body `delegate::DelegatePaymentRequest` (ACP, docs/acp.md §8) | 201 `delegate::DelegatePaymentResponse` (a vault token `vt_…` for [`PaymentToken`]); flat ACP errors `delegate::DelegateError`: 400 `invalid_card` + `param`, `idempotency_key_required`, `missing_api_version`/`unsupported_api_version`; 401 `unauthorized`; 409 `idempotency_in_flight`; 422 `invalid_card` + `param`, `idempotency_conflict`; 500 `processing_error`. A replay keeps its status and says `Idempotent-Replayed: true` |
//! | `GET /healthz` | `ok` |
//!
//! Every request must be addressed to a loopback name (`Host: localhost`, `*.localhost`,
//! `127.0.0.1`, `[::1]`) and carry no `Origin` (else 403); every one but `GET /healthz` carries
//! a key as `Authorization: Bearer KEY` (else 401, see `token.rs`): the delegate-payment key on
//! `delegate_payment`, the provider's admin secret everywhere else, never the other one; a body
//! is `Content-Type: application/json` (else 415). See the provider's `guard.rs`.
//!
//! A charge that names a vault token ([`ChargeRequest::payment_token`]) is decided by the token
//! (the provider's `ledger/vault.rs`): refused before any money moves when it breaks its allowance (unknown, expired,
//! used by another charge, amount over `max_amount`, another currency, session or merchant),
//! else its test card approves (the token is then used) or declines (it is not).

use serde::{Deserialize, Serialize};

pub const CHARGES_PATH: &str = "/v1/charges";
pub const TOKEN_CHECK_PATH: &str = "/v1/payment_tokens/check";
pub const REFUNDS_PATH: &str = "/v1/refunds";
pub const SETTINGS_PATH: &str = "/admin/settings";
pub const HEALTH_PATH: &str = "/healthz";
/// The request header that makes a charge idempotent.
pub const IDEMPOTENCY_KEY_HEADER: &str = "Idempotency-Key";
/// Set to `true` on an answer replayed from an earlier request with the same key.
pub const REPLAYED_HEADER: &str = "Idempotent-Replayed";
/// What the provider prints as the first line on stdout once it listens, followed by its base URL.
pub const LISTENING_LINE: &str = "giftgenius-sandbox-pay listening on ";

/// Longest idempotency key accepted (Stripe's limit).
pub const MAX_KEY_LEN: usize = 255;
/// The most charges one list page holds.
pub const MAX_PAGE: usize = 1000;

/// `POST /v1/charges`: charge `amount` minor units of `currency` (ISO 4217, any case).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChargeRequest {
    pub amount: i64,
    pub currency: String,
    #[serde(default)]
    pub description: String,
    /// What pays: absent for the sandbox's own test card, or a vault token (`vt_…`) from
    /// `POST /agentic_commerce/delegate_payment` (ACP delegated payment), which must fit its
    /// allowance; refusals are 402 `card_error` with a [`TOKEN_REFUSALS`] code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_token: Option<PaymentToken>,
}

/// A vault token and what the merchant says the charge is for; the provider checks both against
/// the token's allowance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaymentToken {
    /// `vt_…`
    pub token: String,
    pub checkout_session_id: String,
    pub merchant_id: String,
}

/// The `code`s of a 402 that refuses a vault token before any money moves (recorded as a
/// failed charge under the key, like a decline; the token stays as it was).
pub const TOKEN_REFUSALS: [&str; 7] = [
    "token_unknown",
    "token_expired",
    "token_used",
    "token_over_allowance",
    "token_wrong_session",
    "token_wrong_merchant",
    "token_wrong_currency",
];

/// `POST /v1/payment_tokens/check`'s answer when the token fits the charge (its card may still
/// decline it: only the charge tells).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenCheck {
    /// Always `"payment_token_check"`.
    pub object: String,
    /// Always true (a token that does not fit is a 402).
    pub usable: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChargeStatus {
    /// A request with this key is being processed right now: ask again later.
    Processing,
    /// The money moved.
    Succeeded,
    /// The card was declined; no money moved. Replayed for the same key forever.
    Failed,
}

impl ChargeStatus {
    pub const fn as_str(self) -> &'static str {
        match self {
            ChargeStatus::Processing => "processing",
            ChargeStatus::Succeeded => "succeeded",
            ChargeStatus::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "processing" => Some(ChargeStatus::Processing),
            "succeeded" => Some(ChargeStatus::Succeeded),
            "failed" => Some(ChargeStatus::Failed),
            _ => None,
        }
    }
}

/// A charge: what happened to the request made under one idempotency key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Charge {
    /// `ch_…`
    pub id: String,
    /// Always `"charge"`.
    pub object: String,
    pub amount: i64,
    /// Lower case, as Stripe writes it.
    pub currency: String,
    pub description: String,
    pub status: ChargeStatus,
    /// Why a failed charge failed (`card_declined`).
    pub failure_code: Option<String>,
    pub idempotency_key: String,
    /// Unix milliseconds.
    pub created: i64,
}

/// A page of charges, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChargeList {
    /// Always `"list"`.
    pub object: String,
    pub data: Vec<Charge>,
    pub has_more: bool,
}

/// `POST /v1/refunds`: give back `amount` (default: all that is left) of the succeeded charge `charge`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefundRequest {
    pub charge: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<i64>,
    /// `requested_by_customer`, `duplicate` or `fraudulent`, as at Stripe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A refund: money given back from one charge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refund {
    /// `re_…`
    pub id: String,
    /// Always `"refund"`.
    pub object: String,
    pub amount: i64,
    pub currency: String,
    /// The charge's id.
    pub charge: String,
    pub reason: String,
    /// Always `succeeded` here (a real provider may answer `pending` first).
    pub status: String,
    pub idempotency_key: String,
    /// Unix milliseconds.
    pub created: i64,
}

/// A page of refunds, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefundList {
    /// Always `"list"`.
    pub object: String,
    pub data: Vec<Refund>,
    pub has_more: bool,
}

/// Every error answer: `{"error": {...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: ApiError,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    /// `card_error`, `idempotency_error`, `invalid_request_error`, `api_error`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `card_declined`, `idempotency_key_in_use`, `resource_missing`, …
    pub code: Option<String>,
    pub message: String,
    /// The failed charge's id (declines only).
    pub charge: Option<String>,
}

/// `GET /admin/settings`: what every process serving this database does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// How long each charge request takes before it is decided. A change applies to the
    /// requests the process that took it is already holding (0 releases them at once).
    pub latency_ms: u64,
    /// The faults still to come, in the syntax [`SettingsUpdate::faults`] takes
    /// (`"5xx*1,timeout*2,decline"`); empty when every request succeeds.
    pub faults: String,
}

/// `POST /admin/settings`: what to change; an absent field stays as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingsUpdate {
    pub latency_ms: Option<u64>,
    /// Replaces the injected faults. `KIND*N` queues N one-off faults (taken by the next
    /// requests, in order); a `KIND` without a count applies to every request after the queue.
    /// Kinds: `5xx` (HTTP 503, nothing charged), `timeout` (charged, then no answer until the
    /// client gives up: the case idempotency exists for), `decline` (HTTP 402, recorded).
    pub faults: Option<String>,
}
