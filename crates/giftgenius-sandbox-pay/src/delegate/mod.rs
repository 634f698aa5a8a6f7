//! ACP delegated payment (docs/acp.md §8): `POST /agentic_commerce/delegate_payment` turns a
//! card into a vault token (`vt_…`) that one merchant may charge once, for one checkout session,
//! up to an amount, in one currency, until a time (the token's *allowance*). The merchant then
//! names the token in `POST /v1/charges` (`api::PaymentToken`), where `ledger/vault.rs` checks it.
//!
//! This file is the endpoint's contract as types, shaped after the ACP JSON Schema
//! (`spec/2026-04-17/json-schema/schema.delegate_payment.json`): every object is closed
//! (`deny_unknown_fields`), errors are flat objects. What the schema cannot say is checked in
//! `validate.rs`; the rest of the endpoint:
//!
//! - `crate::card` (`card.rs`, beside the ledger's vault that reads it too): Luhn, brand, the sandbox's test cards and what each one does when charged.
//! - `validate.rs`: the body → a token to store, or the ACP error with its JSONPath.
//! - `fingerprint.rs`: "the same body" for the endpoint's idempotency.
//! - `rfc3339.rs`: the times the endpoint reads and writes.
//! - `store.rs`: its idempotency keys, in the provider's database.
//! - `routes.rs`: the handler (headers, idempotency, answers).
//!
//! The card number, CVC and cryptogram are [`Sensitive`]: their `Debug` is redacted, so no log
//! line can show them, and nothing here writes them to the database.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

pub use crate::card;
pub mod fingerprint;
pub use giftgenius_pay_api::delegate::rfc3339;
pub(crate) mod routes;
pub(crate) mod store;
pub mod validate;

pub use giftgenius_pay_api::delegate::{API_VERSION_HEADER, DELEGATE_PAYMENT_PATH, SUPPORTED_VERSIONS};
/// Echoed on every answer (the caller's, or a fresh `req_…`).
pub const REQUEST_ID_HEADER: &str = "Request-Id";
/// How long after its creation an allowance may end at the latest (ours).
pub const MAX_ALLOWANCE_MS: i64 = 24 * 60 * 60 * 1000;

/// `POST /agentic_commerce/delegate_payment` (`DelegatePaymentRequest`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DelegatePaymentRequest {
    pub payment_method: PaymentMethodCard,
    pub allowance: Allowance,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub billing_address: Option<Address>,
    /// One or more (the RFC; the schema has no `minItems`, docs/acp.md D23).
    pub risk_signals: Vec<RiskSignal>,
    pub metadata: BTreeMap<String, String>,
}

/// A text that must never reach a log line: its `Debug` is redacted. Serialized as itself (a
/// client sends it).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Sensitive(pub String);

impl std::fmt::Debug for Sensitive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PaymentMethodType {
    Card,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CardNumberType {
    Fpan,
    NetworkToken,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckPerformed {
    Avs,
    Cvv,
    Ani,
    Auth0,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Funding {
    Credit,
    Debit,
    Prepaid,
}

impl Funding {
    pub const fn as_str(self) -> &'static str {
        match self {
            Funding::Credit => "credit",
            Funding::Debit => "debit",
            Funding::Prepaid => "prepaid",
        }
    }
}

/// `PaymentMethodCard`. Optional fields are omitted when absent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaymentMethodCard {
    #[serde(rename = "type")]
    pub kind: PaymentMethodType,
    pub card_number_type: CardNumberType,
    /// 12–19 digits passing Luhn (ours).
    pub number: Sensitive,
    /// Required by the RFC, optional in the schema (D22): absent means `false`.
    #[serde(rename = "virtual", default, skip_serializing_if = "Option::is_none")]
    pub is_virtual: Option<bool>,
    /// `"01"`–`"12"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exp_month: Option<String>,
    /// Four digits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exp_year: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// 3–4 digits (ours; the schema says at most 4 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cvc: Option<Sensitive>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cryptogram: Option<Sensitive>,
    /// At most 2 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eci_value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks_performed: Option<Vec<CheckPerformed>>,
    /// At most 8 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iin: Option<String>,
    pub display_card_funding_type: Funding,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_wallet_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_brand: Option<String>,
    /// Exactly 4 digits, the number's last four (ours).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_last4: Option<String>,
    pub metadata: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AllowanceReason {
    OneTime,
}

/// `Allowance`: what the token may be used for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allowance {
    pub reason: AllowanceReason,
    /// Minor units, > 0 (ours).
    #[serde(deserialize_with = "integer")]
    pub max_amount: i64,
    /// `^[a-z]{3}$`.
    pub currency: String,
    pub checkout_session_id: String,
    /// At most 256 characters.
    pub merchant_id: String,
    /// RFC 3339, in the future and at most [`MAX_ALLOWANCE_MS`] ahead (ours).
    pub expires_at: String,
}

/// `Address` (billing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Address {
    pub name: String,
    pub line_one: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_two: Option<String>,
    pub city: String,
    pub state: String,
    pub country: String,
    pub postal_code: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RiskSignalType {
    CardTesting,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RiskAction {
    Blocked,
    ManualReview,
    Authorized,
}

/// `RiskSignal`. A `blocked` one refuses the request (422).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RiskSignal {
    #[serde(rename = "type")]
    pub kind: RiskSignalType,
    #[serde(deserialize_with = "integer")]
    pub score: i64,
    pub action: RiskAction,
}

/// 201: the vault token (`DelegatePaymentResponse`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DelegatePaymentResponse {
    /// `vt_` + 128 random bits in hex.
    pub id: String,
    /// RFC 3339.
    pub created: String,
    /// The request's `metadata` plus `merchant_id` and `idempotency_key` (the RFC's correlation
    /// echo; these two win over request keys of the same name).
    pub metadata: BTreeMap<String, String>,
}

/// Every error of the endpoint: a flat object (no envelope).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DelegateError {
    /// `invalid_request`, `rate_limit_exceeded`, `processing_error`, `service_unavailable`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `invalid_card`, `idempotency_conflict`, `idempotency_key_required`,
    /// `idempotency_in_flight`; off the schema's enum: `unauthorized`, `missing_api_version`,
    /// `unsupported_api_version` (docs/acp.md D20, D21), and `payload_too_large`,
    /// `host_not_allowed`, `origin_not_allowed`, `unsupported_media_type` (the provider's guard).
    pub code: String,
    pub message: String,
    /// The JSONPath of the field at fault.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    /// On version errors only, newest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supported_versions: Option<Vec<String>>,
}

/// A JSON Schema `integer`: any JSON number with no fraction (`5000` and `5000.0` alike).
fn integer<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    let number = serde_json::Number::deserialize(deserializer)?;
    if let Some(n) = number.as_i64() {
        return Ok(n);
    }
    match number.as_f64() {
        // Within f64's exact integers, so the conversion is exact.
        Some(f) if f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0 => Ok(f as i64),
        _ => Err(serde::de::Error::custom("expected an integer")),
    }
}
