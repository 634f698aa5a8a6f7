//! The Agentic Commerce Protocol (ACP, API version 2026-04-17) objects GiftGenius serves:
//! the checkout session of `/acp/checkout_sessions`, its requests (complete's payment data
//! too), its order, its `Error` object and the discovery document. Our own summary of the spec is `docs/acp.md`;
//! every name here carries `Acp` because "checkout session" already names one of our tools.
//!
//! Requests are closed (`deny_unknown_fields`): an unknown field is a 400 `invalid`. Money is
//! an integer in minor units; currencies are lowercase ISO 4217.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// The one API version we speak (`API-Version` header, `protocol.version`).
pub const ACP_API_VERSION: &str = "2026-04-17";
/// Every version we accept, oldest first.
pub const ACP_SUPPORTED_VERSIONS: [&str; 1] = [ACP_API_VERSION];
/// Most units of one line (our draft rule).
pub const ACP_MAX_QUANTITY: u32 = 10;

// ---------------------------------------------------------------- requests

/// A field of an update request: absent (leave it), `null` (clear it) or a value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum AcpPatch<T> {
    #[default]
    Absent,
    Null,
    Value(T),
}

impl<T> AcpPatch<T> {
    pub fn is_absent(&self) -> bool {
        matches!(self, AcpPatch::Absent)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for AcpPatch<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Option::<T>::deserialize(deserializer)?.map_or(AcpPatch::Null, AcpPatch::Value))
    }
}

impl<T: JsonSchema> JsonSchema for AcpPatch<T> {
    fn schema_name() -> Cow<'static, str> {
        Option::<T>::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        Option::<T>::json_schema(generator)
    }
}

/// One unit of a catalog item (`line_items[]` of a request). The 2026-04-17 schema has no
/// quantity: the same `id` twice means two units.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcpItem {
    /// Our catalog gift id (e.g. `hh-001`), or [`GIFT_WRAP_ITEM`]: one gift of the session
    /// gift-wrapped (its merchant's price per gift; a child line of the gift it wraps).
    #[schemars(length(min = 1, max = 64))]
    pub id: String,
    /// What the agent believes the item is called; never trusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What the agent believes one unit costs, in minor units; a difference from our price is
    /// a `price_change` warning, never the price charged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit_amount: Option<i64>,
}

/// The item id that asks for one of the session's gifts to be gift-wrapped.
pub const GIFT_WRAP_ITEM: &str = "gift_wrap";

/// A postal address (ACP `Address`). `state` and `postal_code` are required by ACP: an empty
/// string where the country's rules have none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcpAddress {
    pub name: String,
    pub line_one: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_two: Option<String>,
    pub city: String,
    /// The state or province code (US, CA, BR); `""` where the country has none.
    pub state: String,
    /// ISO 3166-1 alpha-2.
    pub country: String,
    /// `""` only in countries without postal codes.
    pub postal_code: String,
    /// Accepted and ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub company: Option<String>,
}

/// Where and to whom the order goes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcpFulfillmentDetails {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<AcpAddress>,
}

/// The person buying. Account fields the spec allows (`customer_id`, `loyalty`, …) are
/// accepted and dropped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcpBuyer {
    pub email: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<String>,
    #[serde(default, skip_serializing)]
    pub customer_id: Option<Value>,
    #[serde(default, skip_serializing)]
    pub account_type: Option<Value>,
    #[serde(default, skip_serializing)]
    pub authentication_status: Option<Value>,
    #[serde(default, skip_serializing)]
    pub company: Option<Value>,
    #[serde(default, skip_serializing)]
    pub loyalty: Option<Value>,
    #[serde(default, skip_serializing)]
    pub tax_exemption: Option<Value>,
}

/// The tools of ACP's MCP binding (2026-04-17), the checkout's operations as MCP tools: what
/// the server's `/acp/mcp` lists, and the values of its metrics' `tool` label.
pub const ACP_MCP_TOOLS: &[&str] = &[
    "create_checkout_session",
    "get_checkout_session",
    "update_checkout_session",
    "complete_checkout_session",
    "cancel_checkout_session",
];

/// The kind of a fulfilment option. We only ship: the options we offer are all `shipping`, and
/// a selection of another kind is answered with a message in the session (never a parse error:
/// the spec defines them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AcpFulfillmentType {
    Shipping,
    Digital,
    Pickup,
    LocalDelivery,
}

impl AcpFulfillmentType {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Shipping => "shipping",
            Self::Digital => "digital",
            Self::Pickup => "pickup",
            Self::LocalDelivery => "local_delivery",
        }
    }
}

/// The option the buyer chose, for the items it covers (we apply one option to the session).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcpSelectedFulfillmentOption {
    #[serde(rename = "type")]
    pub kind: AcpFulfillmentType,
    /// `fo_standard` or `fo_express`.
    pub option_id: String,
    /// Line item ids (`li_…`) of the session.
    pub item_ids: Vec<String>,
}

/// `POST /acp/checkout_sessions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcpCreateRequest {
    #[schemars(length(min = 1))]
    pub line_items: Vec<AcpItem>,
    /// Lowercase ISO 4217: usd, eur, gbp, cad, aud or jpy.
    pub currency: String,
    /// The agent's capabilities; accepted (`{}` is fine), we answer with ours.
    pub capabilities: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buyer: Option<AcpBuyer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fulfillment_details: Option<AcpFulfillmentDetails>,
    /// The gift message (at most 300 characters in 8 lines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_notes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Discount codes (deprecated by the spec in favour of `discounts.codes`): we honour none,
    /// so each is answered `discount_code_invalid` (docs/acp.md §4.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coupons: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discounts: Option<AcpDiscountsRequest>,
    /// Accepted and ignored (no groups, affiliates or quotes).
    #[serde(default, skip_serializing)]
    pub fulfillment_groups: Option<Value>,
    #[serde(default, skip_serializing)]
    pub affiliate_attribution: Option<Value>,
    #[serde(default, skip_serializing)]
    pub quote_id: Option<Value>,
}

/// `discounts` of a create or update request: the codes to apply (they replace the codes sent
/// before; `[]` clears them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcpDiscountsRequest {
    #[serde(default)]
    pub codes: Vec<String>,
}

/// Why a discount code was not applied (the spec's `DiscountErrorCode`; we only ever say
/// `discount_code_invalid`: we run no promotions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AcpDiscountErrorCode {
    DiscountCodeInvalid,
}

/// A submitted code that was not applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpRejectedDiscount {
    pub code: String,
    pub reason: AcpDiscountErrorCode,
    pub message: String,
}

/// The session's `discounts`: the codes as submitted and why each was not applied (`applied`
/// is never sent: nothing is).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpDiscounts {
    pub codes: Vec<String>,
    pub rejected: Vec<AcpRejectedDiscount>,
}

/// `POST /acp/checkout_sessions/{id}`: absent leaves a field, `null` clears it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcpUpdateRequest {
    /// Replaces the whole list; `null` or `[]` is refused (a session needs a line).
    #[serde(default, skip_serializing_if = "AcpPatch::is_absent")]
    pub line_items: AcpPatch<Vec<AcpItem>>,
    #[serde(default, skip_serializing_if = "AcpPatch::is_absent")]
    pub buyer: AcpPatch<AcpBuyer>,
    #[serde(default, skip_serializing_if = "AcpPatch::is_absent")]
    pub fulfillment_details: AcpPatch<AcpFulfillmentDetails>,
    #[serde(default, skip_serializing_if = "AcpPatch::is_absent")]
    pub selected_fulfillment_options: AcpPatch<Vec<AcpSelectedFulfillmentOption>>,
    #[serde(default, skip_serializing_if = "AcpPatch::is_absent")]
    pub order_notes: AcpPatch<String>,
    /// Replace the codes sent before (see [`AcpCreateRequest::coupons`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coupons: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discounts: Option<AcpDiscountsRequest>,
    #[serde(default, skip_serializing)]
    pub fulfillment_groups: Option<Value>,
}

/// Why the agent cancels (stored for the operator; no effect).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AcpCancelReason {
    PriceSensitivity,
    ShippingCost,
    ShippingSpeed,
    ProductFit,
    TrustSecurity,
    ReturnsPolicy,
    PaymentOptions,
    Comparison,
    TimingDeferred,
    Other,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcpIntentTrace {
    pub reason_code: AcpCancelReason,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 500))]
    pub trace_summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// `POST /acp/checkout_sessions/{id}/cancel` (the body is optional: none ≡ `{}`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcpCancelRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent_trace: Option<AcpIntentTrace>,
}

// ---------------------------------------------------------------- the session

/// Where a session stands (docs/acp.md §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AcpSessionStatus {
    NotReadyForPayment,
    ReadyForPayment,
    /// A complete is charging, or its charge's outcome is not known yet.
    CompleteInProgress,
    Completed,
    Canceled,
    Expired,
}

impl AcpSessionStatus {
    pub const fn as_str(self) -> &'static str {
        match self {
            AcpSessionStatus::NotReadyForPayment => "not_ready_for_payment",
            AcpSessionStatus::ReadyForPayment => "ready_for_payment",
            AcpSessionStatus::CompleteInProgress => "complete_in_progress",
            AcpSessionStatus::Completed => "completed",
            AcpSessionStatus::Canceled => "canceled",
            AcpSessionStatus::Expired => "expired",
        }
    }

    /// The status named `s`, if any.
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::NotReadyForPayment,
            Self::ReadyForPayment,
            Self::CompleteInProgress,
            Self::Completed,
            Self::Canceled,
            Self::Expired,
        ]
        .into_iter()
        .find(|status| status.as_str() == s)
    }

    /// Completed, canceled and expired sessions never change again.
    pub const fn is_final(self) -> bool {
        matches!(self, AcpSessionStatus::Completed | AcpSessionStatus::Canceled | AcpSessionStatus::Expired)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpProtocol {
    pub version: String,
}

/// Our payment capabilities: the one handler we take (a card tokenized by delegated payment).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpCapabilities {
    pub payment: AcpPaymentCapability,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpPaymentCapability {
    pub handlers: Vec<AcpPaymentHandler>,
}

/// A way to pay (every field is required by the schema; docs/acp.md §4.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpPaymentHandler {
    /// [`ACP_CARD_HANDLER`]: what `payment_data.handler_id` names.
    pub id: String,
    pub name: String,
    pub display_name: String,
    pub version: String,
    pub spec: String,
    pub requires_delegate_payment: bool,
    pub requires_pci_compliance: bool,
    pub psp: String,
    pub config_schema: String,
    pub instrument_schemas: Vec<String>,
    pub config: Map<String, Value>,
}

/// The id of our card handler.
pub const ACP_CARD_HANDLER: &str = "card_tokenized";

/// `{id}` of the catalog item a line is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpItemRef {
    pub id: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpSeller {
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AcpAvailability {
    InStock,
    LowStock,
    OutOfStock,
}

/// A line of the session: one catalog item and its quantity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpLineItem {
    /// `li_<item id>`.
    pub id: String,
    pub item: AcpItemRef,
    pub quantity: u32,
    pub name: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
    /// Our price of one unit in the session's currency, minor units.
    pub unit_amount: i64,
    pub product_id: String,
    pub marketplace_seller_details: AcpSeller,
    pub availability_status: AcpAvailability,
    pub max_quantity_per_order: u32,
    /// The line this one belongs to: the gift a gift-wrap line wraps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    pub totals: Vec<AcpTotal>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AcpTotalType {
    ItemsBaseAmount,
    Subtotal,
    Fulfillment,
    Tax,
    /// The gift wrap of an app order (a session's wrap is a child line of the gift it wraps).
    GiftWrap,
    Total,
    /// Orders only: what was given back (refund adjustments), never subtracted from `total`.
    AmountRefunded,
}

/// An amount of the session, a line or an option, in minor units.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpTotal {
    #[serde(rename = "type")]
    pub kind: AcpTotalType,
    pub display_text: String,
    pub amount: i64,
}

/// A way to ship the session (`fo_standard`, `fo_express`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpFulfillmentOption {
    #[serde(rename = "type")]
    pub kind: AcpFulfillmentType,
    pub id: String,
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// When it may arrive at the earliest and the latest (RFC 3339): the start of the first day
    /// and the end of the last, in the destination's time zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earliest_delivery_time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_delivery_time: Option<String>,
    pub totals: Vec<AcpTotal>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AcpContentType {
    Plain,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AcpResolution {
    Recoverable,
    RequiresBuyerInput,
    RequiresBuyerReview,
}

/// What a warning is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AcpWarningCode {
    LowStock,
    PriceChange,
    DiscountCodeInvalid,
}

/// What an error message is about (something the buyer can fix, unlike an `AcpError`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AcpMessageCode {
    Missing,
    Invalid,
    OutOfStock,
    QuantityExceeded,
    Unsupported,
    Expired,
    PaymentDeclined,
}

/// A message with its code: `C` is [`AcpWarningCode`] or [`AcpMessageCode`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpCodedMessage<C> {
    pub code: C,
    pub content_type: AcpContentType,
    pub content: String,
    /// RFC 9535 JSONPath into the request body (`$.fulfillment_details.address.postal_code`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<AcpResolution>,
}

/// An entry of the session's `messages[]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AcpMessage {
    Warning(AcpCodedMessage<AcpWarningCode>),
    Error(AcpCodedMessage<AcpMessageCode>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AcpLinkType {
    TermsOfUse,
    PrivacyPolicy,
    Support,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpLink {
    #[serde(rename = "type")]
    pub kind: AcpLinkType,
    pub url: String,
}

/// A checkout session as every `/acp/checkout_sessions` route answers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AcpCheckoutSession {
    /// `acs_…`.
    pub id: String,
    pub protocol: AcpProtocol,
    pub capabilities: AcpCapabilities,
    pub status: AcpSessionStatus,
    pub currency: String,
    pub line_items: Vec<AcpLineItem>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fulfillment_details: Option<AcpFulfillmentDetails>,
    pub fulfillment_options: Vec<AcpFulfillmentOption>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selected_fulfillment_options: Vec<AcpSelectedFulfillmentOption>,
    pub totals: Vec<AcpTotal>,
    pub messages: Vec<AcpMessage>,
    pub links: Vec<AcpLink>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buyer: Option<AcpBuyer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    /// RFC 3339.
    pub created_at: String,
    pub updated_at: String,
    pub expires_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// The discount codes the platform sent, none applied (absent when none were sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discounts: Option<AcpDiscounts>,
    /// The order, once `completed` (`CheckoutSessionWithOrder`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<AcpOrder>,
}

// ---------------------------------------------------------------- complete and the order

/// `POST /acp/checkout_sessions/{id}/complete`. 3-D Secure, affiliates and marketing consents
/// are accepted and ignored (we offer none of them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcpCompleteRequest {
    pub payment_data: AcpPaymentData,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buyer: Option<AcpBuyer>,
    /// The gift message (docs/acp.md §13.5); replaces the session's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 5000))]
    pub order_notes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk_signals: Option<Map<String, Value>>,
    #[serde(default, skip_serializing)]
    pub authentication_result: Option<Value>,
    #[serde(default, skip_serializing)]
    pub affiliate_attribution: Option<Value>,
    #[serde(default, skip_serializing)]
    pub marketing_consents: Option<Value>,
}

/// How the buyer pays: our handler and a delegated-payment vault token, or (the spec's B2B
/// form) a purchase order. Every field the spec defines is accepted; what we cannot honour (a
/// purchase order without a card, payment terms other than `immediate`, an approval to wait
/// for) is answered in the session's `messages`, nothing charged (docs/acp.md §14.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcpPaymentData {
    /// [`ACP_CARD_HANDLER`]; with `instrument`, unless a `purchase_order_number` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handler_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instrument: Option<AcpInstrument>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub billing_address: Option<AcpAddress>,
    /// The buyer's purchase order reference: kept out of the order; alone it cannot pay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purchase_order_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_terms: Option<AcpPaymentTerms>,
    /// RFC 3339; only meaningful with payment terms, which we do not offer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_date: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_required: Option<bool>,
}

/// B2B payment terms (`payment_data.payment_terms`). We are paid when the order is placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AcpPaymentTerms {
    Immediate,
    #[serde(rename = "net_15")]
    Net15,
    #[serde(rename = "net_30")]
    Net30,
    #[serde(rename = "net_60")]
    Net60,
    #[serde(rename = "net_90")]
    Net90,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcpInstrument {
    /// `card`.
    #[serde(rename = "type")]
    pub kind: String,
    pub credential: AcpCredential,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcpCredential {
    /// `spt` (a shared payment token: our provider's `vt_…`).
    #[serde(rename = "type")]
    pub kind: String,
    pub token: String,
}

/// The order a completed session made (docs/acp.md §4.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpOrder {
    /// Always `order`.
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
    pub checkout_session_id: String,
    /// The status page behind an unguessable link.
    pub permalink_url: String,
    /// Open string: `confirmed`, `processing`, `shipped`, `completed`, `canceled`.
    pub status: String,
    pub line_items: Vec<AcpOrderLineItem>,
    pub fulfillments: Vec<AcpFulfillment>,
    pub adjustments: Vec<AcpAdjustment>,
    pub totals: Vec<AcpTotal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<AcpOrderConfirmation>,
    pub support: AcpSupport,
    /// When it was promised to arrive (while it is on its way).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_delivery: Option<AcpEstimatedDelivery>,
}

/// The spec's `EstimatedDelivery`: RFC 3339 instants, the start of the first day and the end of
/// the last in the destination's time zone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcpEstimatedDelivery {
    pub earliest: String,
    pub latest: String,
}

/// How an order is delivered (docs/acp.md §4.3, §10.3): we emit one `shipping` fulfillment
/// once the order is processing, with every line in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpFulfillment {
    pub id: String,
    /// `shipping`.
    #[serde(rename = "type")]
    pub kind: AcpFulfillmentType,
    /// Open string: we emit `processing`, `shipped`, `delivered`, `canceled`.
    pub status: String,
    pub line_items: Vec<AcpLineItemReference>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carrier: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracking_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracking_url: Option<String>,
    /// Append-only, oldest first.
    pub events: Vec<AcpFulfillmentEvent>,
}

/// A line (and how many of it) in a fulfillment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpLineItemReference {
    pub id: String,
    pub quantity: u32,
}

/// One step of a fulfillment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpFulfillmentEvent {
    pub id: String,
    /// Open string: we emit `processing`, `shipped`, `delivered`, `canceled`.
    #[serde(rename = "type")]
    pub kind: String,
    /// RFC 3339.
    pub occurred_at: String,
}

/// A change after the order was placed (docs/acp.md §4.3): we emit `refund`s.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpAdjustment {
    pub id: String,
    /// Open string: `refund`, `credit`, `return`, `exchange`, `price_adjustment`, `cancellation`,
    /// `dispute`.
    #[serde(rename = "type")]
    pub kind: String,
    /// RFC 3339.
    pub occurred_at: String,
    /// Open string: `pending`, `completed`, `failed`.
    pub status: String,
    /// Credited to the buyer, minor units, tax included.
    pub amount: i64,
    /// ISO 4217, lower case.
    pub currency: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// What an order event says (docs/acp.md §10.1): posted to the platform's webhook, signed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpWebhookEvent {
    /// Open string: `order_create` (an order's first event), `order_update` (every later one).
    #[serde(rename = "type")]
    pub kind: String,
    /// The full order as it was when the change happened.
    pub data: AcpOrder,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpOrderLineItem {
    pub id: String,
    pub title: String,
    pub product_id: String,
    pub quantity: AcpOrderQuantity,
    pub unit_price: i64,
    pub subtotal: i64,
    /// Open string: `processing`, `partial`, `fulfilled`, `removed`.
    pub status: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpOrderQuantity {
    pub ordered: u32,
    pub current: u32,
    pub fulfilled: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpOrderConfirmation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_notes: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpSupport {
    pub help_center_url: String,
}

// ---------------------------------------------------------------- errors

/// The kind of an ACP error; the checkout schema has exactly these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AcpErrorType {
    InvalidRequest,
    ProcessingError,
    ServiceUnavailable,
}

/// ACP's `Error`: only when no session can be returned (else the session carries a message).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpError {
    #[serde(rename = "type")]
    pub kind: AcpErrorType,
    /// Our catalogue: docs/acp.md §6.
    pub code: String,
    pub message: String,
    /// RFC 9535 JSONPath into the request body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    /// Only on `missing_api_version` / `unsupported_api_version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supported_versions: Option<Vec<String>>,
}

// ---------------------------------------------------------------- discovery

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpDiscoveryProtocol {
    /// Always `acp`.
    pub name: String,
    pub version: String,
    pub supported_versions: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AcpTransport {
    Rest,
    Mcp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AcpService {
    Checkout,
}

/// An extension the merchant supports (`capabilities.extensions[]` of discovery).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpDiscoveryExtension {
    pub name: String,
    /// URL of the extension's specification (for [`ACP_MCP_EXTENSION`]: the endpoint itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<String>,
    /// URL of the extension's JSON Schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
}

/// The discovery extension whose `spec` is the absolute URL of our ACP MCP endpoint: the
/// discovery objects are closed, and the binding leaves the endpoint to be told "out of band"
/// (docs/acp.md §11).
pub const ACP_MCP_EXTENSION: &str = "dev.giftgenius.mcp_endpoint";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpDiscoveryCapabilities {
    pub services: Vec<AcpService>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<AcpDiscoveryExtension>,
    pub supported_currencies: Vec<String>,
    pub supported_locales: Vec<String>,
}

/// `/.well-known/acp.json`: what this merchant serves now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcpDiscovery {
    pub protocol: AcpDiscoveryProtocol,
    /// `{public URL}/acp`.
    pub api_base_url: String,
    pub transports: Vec<AcpTransport>,
    pub capabilities: AcpDiscoveryCapabilities,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_update_tells_absent_from_null() {
        let update: AcpUpdateRequest = serde_json::from_value(json!({"order_notes": null})).unwrap();
        assert_eq!(update.order_notes, AcpPatch::Null);
        assert_eq!(update.buyer, AcpPatch::Absent);
        let update: AcpUpdateRequest = serde_json::from_value(json!({"order_notes": "hi"})).unwrap();
        assert_eq!(update.order_notes, AcpPatch::Value("hi".into()));
    }

    #[test]
    fn requests_are_closed() {
        assert!(serde_json::from_value::<AcpUpdateRequest>(json!({"surprise": 1})).is_err());
        assert!(serde_json::from_value::<AcpItem>(json!({"id": "hh-001", "quantity": 2})).is_err());
    }

    #[test]
    fn messages_are_tagged_by_type() {
        let message = AcpMessage::Error(AcpCodedMessage {
            code: AcpMessageCode::OutOfStock,
            content_type: AcpContentType::Plain,
            content: "gone".into(),
            param: Some("$.line_items[0]".into()),
            resolution: None,
        });
        assert_eq!(
            serde_json::to_value(&message).unwrap(),
            json!({"type": "error", "code": "out_of_stock", "content_type": "plain", "content": "gone", "param": "$.line_items[0]"})
        );
    }
}
