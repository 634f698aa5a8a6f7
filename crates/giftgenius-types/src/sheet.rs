//! ChatGPT's payment sheet (docs/acp.md §14): the checkout session a widget hands to the host's
//! `window.openai.requestCheckout` (the ACP 2025-09-29 shape plus the host's `payment_provider`
//! and `payment_mode`), and the arguments the host sends back to `complete_checkout`.
//!
//! The session travels in `prepare_order`'s widget-only `_meta` ([`META_CHECKOUT_SHEET`]), never
//! in what the model reads. Amounts are integers in the currency's minor unit, as in ACP.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::args::{FieldError, Validate};

/// The `_meta` key of `prepare_order`'s sheet session.
pub const META_CHECKOUT_SHEET: &str = "giftgenius/checkoutSheet";

/// Prefix of a sheet session id; the rest is the draft's id (one session per draft).
pub const SHEET_SESSION_PREFIX: &str = "cs_";

/// The sheet session id of a draft.
pub fn sheet_session_id(draft_id: &str) -> String {
    format!("{SHEET_SESSION_PREFIX}{draft_id}")
}

/// The draft a sheet session id names, if it is one.
pub fn draft_of_sheet_session(session_id: &str) -> Option<&str> {
    session_id.strip_prefix(SHEET_SESSION_PREFIX).filter(|d| !d.is_empty())
}

/// The session object `requestCheckout` takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SheetCheckoutSession {
    /// `cs_<draft id>`: the id `complete_checkout` is called with.
    pub id: String,
    pub payment_provider: SheetPaymentProvider,
    /// Always `ready_for_payment` (a draft without delivery details gets no session).
    pub status: String,
    /// ISO 4217, upper case as in OpenAI's examples.
    pub currency: String,
    pub line_items: Vec<SheetLineItem>,
    pub fulfillment_address: SheetAddress,
    pub fulfillment_option_id: String,
    pub fulfillment_options: Vec<SheetFulfillmentOption>,
    pub totals: Vec<SheetTotal>,
    pub messages: Vec<serde_json::Value>,
    pub links: Vec<SheetLink>,
    /// `test` with the sandbox provider (test cards only), `live` otherwise.
    pub payment_mode: String,
}

/// Who takes the payment and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SheetPaymentProvider {
    pub provider: String,
    /// What a vault token's allowance must name.
    pub merchant_id: String,
    pub supported_payment_methods: Vec<String>,
}

/// An ACP 2025-09-29 line item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SheetLineItem {
    pub id: String,
    pub item: SheetItem,
    pub base_amount: i64,
    pub discount: i64,
    pub subtotal: i64,
    pub tax: i64,
    pub total: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SheetItem {
    pub id: String,
    pub quantity: u32,
}

/// An ACP 2025-09-29 address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SheetAddress {
    pub name: String,
    pub line_one: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_two: Option<String>,
    pub city: String,
    pub state: String,
    pub country: String,
    pub postal_code: String,
}

/// The draft's shipping speed as the one fulfillment option.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SheetFulfillmentOption {
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
    pub title: String,
    pub subtotal: i64,
    pub tax: i64,
    pub total: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SheetTotal {
    /// `items_base_amount`, `subtotal`, `fulfillment`, `fee` (the gift wrap), `total`.
    #[serde(rename = "type")]
    pub kind: String,
    pub display_text: String,
    pub amount: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SheetLink {
    /// `terms_of_use`, `privacy_policy`.
    #[serde(rename = "type")]
    pub kind: String,
    pub url: String,
}

/// Arguments of `complete_checkout` (sent by the host's payment sheet, never by the model).
/// Lenient on what the host may add (docs/acp.md §14.1 lists what is unsure).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteCheckoutInput {
    /// The `id` of the session `prepare_order` gave the widget (`cs_…`).
    #[schemars(length(min = 1, max = 80))]
    pub checkout_session_id: String,
    /// The buyer as the sheet collected them (ACP 2025-09-29 Buyer); kept out of the order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buyer: Option<serde_json::Value>,
    pub payment_data: SheetPaymentData,
}

/// The payment the sheet collected: a delegated-payment vault token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SheetPaymentData {
    /// The vault token (`vt_…`) delegate_payment returned for this session.
    #[schemars(length(min = 1, max = 255))]
    pub token: String,
    /// The provider the token comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub billing_address: Option<serde_json::Value>,
}

impl Validate for CompleteCheckoutInput {
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        let id = &self.checkout_session_id;
        let draft_ok = draft_of_sheet_session(id)
            .is_some_and(|d| d.len() <= 64 && d.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        if !draft_ok {
            errors.push(FieldError::new("checkout_session_id", "must be the id of the session prepare_order gave"));
        }
        let token = &self.payment_data.token;
        if token.is_empty() || token.len() > 255 || !token.bytes().all(|b| b.is_ascii_graphic()) {
            errors.push(FieldError::new("payment_data.token", "must be the vault token delegate_payment returned"));
        }
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }
}
