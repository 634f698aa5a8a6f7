//! Buying a gift: `prepare_order` (a draft), `commit_order` (the charge, after a human
//! click), `create_checkout_session` (a hosted checkout) and `get_order`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::args::{FieldError, Validate};
use crate::gifts::GiftCard;
use crate::money::{Currency, Money};

/// How fast the gift ships.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ShippingSpeed {
    #[default]
    Standard,
    Express,
}

impl ShippingSpeed {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Standard => "standard",
            Self::Express => "express",
        }
    }
}

/// Validates an idempotency key: 1-255 printable ASCII characters.
pub fn check_idempotency_key(field: &str, key: &str, errors: &mut Vec<FieldError>) {
    if key.is_empty() || key.len() > 255 || !key.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        errors.push(FieldError::new(field, "must be 1 to 255 printable ASCII characters"));
    }
}

fn check_id(field: &str, id: &str, errors: &mut Vec<FieldError>) {
    if id.is_empty() || id.len() > 64 || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
        errors.push(FieldError::new(field, "must be an id as returned by a previous GiftGenius tool call"));
    }
}

/// Arguments of `prepare_order`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrepareOrderInput {
    /// The gift's id from a suggest_gifts result.
    #[schemars(length(min = 1, max = 64))]
    pub gift_id: String,
    /// How many to buy (1-10). Defaults to 1.
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 10))]
    pub quantity: i64,
    /// Shipping speed. Defaults to standard.
    #[serde(default)]
    pub shipping: ShippingSpeed,
    /// Currency to price the order in. Defaults to USD.
    #[serde(default)]
    pub currency: Currency,
}

fn one() -> i64 {
    1
}

impl Validate for PrepareOrderInput {
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        check_id("gift_id", &self.gift_id, &mut errors);
        if !(1..=10).contains(&self.quantity) {
            errors.push(FieldError::new("quantity", format!("must be between 1 and 10 (got {})", self.quantity)));
        }
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }
}

/// A priced, stock-checked order that has not been paid. Expires at `expires_at`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderDraft {
    pub id: String,
    pub gift: GiftCard,
    pub quantity: u32,
    pub shipping: ShippingSpeed,
    pub subtotal: Money,
    pub shipping_cost: Money,
    pub total: Money,
    /// RFC 3339 UTC.
    pub expires_at: String,
}

/// The data of a successful `prepare_order` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrepareOrderData {
    pub draft: OrderDraft,
}

/// Arguments of `commit_order` (called by the widget's Confirm button, never by the model).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommitOrderInput {
    /// The draft the user confirmed.
    #[schemars(length(min = 1, max = 64))]
    pub draft_id: String,
    /// Minted once per draft by the widget; the same key on every retry.
    #[schemars(length(min = 1, max = 255))]
    pub idempotency_key: String,
    /// The token prepare_order handed to the widget; proves a person confirmed (without it: CONFIRMATION_REQUIRED).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(min = 1, max = 512))]
    pub confirmation_token: Option<String>,
}

impl Validate for CommitOrderInput {
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        check_id("draft_id", &self.draft_id, &mut errors);
        check_idempotency_key("idempotency_key", &self.idempotency_key, &mut errors);
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }
}

/// Where an order stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OrderStatus {
    /// Recorded, payment not yet confirmed (a retry of the same commit finishes it).
    PendingPayment,
    /// Charged and recorded; the merchant will ship it.
    Paid,
    /// The payment was declined; nothing was charged.
    PaymentDeclined,
}

impl OrderStatus {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::PendingPayment => "pending_payment",
            Self::Paid => "paid",
            Self::PaymentDeclined => "payment_declined",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::PendingPayment, Self::Paid, Self::PaymentDeclined].into_iter().find(|v| v.as_str() == s)
    }
}

/// A placed order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Order {
    pub id: String,
    pub draft_id: String,
    pub gift_id: String,
    pub gift_title: String,
    pub merchant: String,
    pub quantity: u32,
    pub total: Money,
    pub status: OrderStatus,
    /// RFC 3339 UTC.
    pub created_at: String,
}

/// The data of `commit_order` and `get_order` results.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderData {
    pub order: Order,
}

/// Arguments of `get_order`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetOrderInput {
    /// An order id returned by commit_order.
    #[schemars(length(min = 1, max = 64))]
    pub order_id: String,
}

impl Validate for GetOrderInput {
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        check_id("order_id", &self.order_id, &mut errors);
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }
}

/// Arguments of `create_checkout_session`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateCheckoutSessionInput {
    /// The gift's id from a suggest_gifts result.
    #[schemars(length(min = 1, max = 64))]
    pub gift_id: String,
    /// A unique key for this checkout; reuse the same key when retrying.
    #[schemars(length(min = 1, max = 255))]
    pub idempotency_key: String,
    /// Currency of the session. Defaults to USD.
    #[serde(default)]
    pub currency: Currency,
}

impl Validate for CreateCheckoutSessionInput {
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        check_id("gift_id", &self.gift_id, &mut errors);
        check_idempotency_key("idempotency_key", &self.idempotency_key, &mut errors);
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }
}

/// A hosted checkout page for one gift.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckoutSession {
    pub id: String,
    pub gift_id: String,
    pub amount: Money,
    /// A page on the GiftGenius server where the user pays.
    pub checkout_url: String,
    /// RFC 3339 UTC.
    pub expires_at: String,
}

/// The data of a successful `create_checkout_session` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckoutData {
    pub checkout: CheckoutSession,
}
