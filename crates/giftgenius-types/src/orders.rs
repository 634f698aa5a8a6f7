//! Buying a gift: `prepare_order` (a draft), `commit_order` (the charge, after a human
//! click), `create_checkout_session` (a hosted checkout) and `get_order`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::args::{FieldError, Validate};
use crate::delivery::{Destination, Recipient, check_gift_message};
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
    /// The gift's id from a suggest_gifts result: the one-gift form. For several gifts in one
    /// order use `items` instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub gift_id: Option<String>,
    /// How many of `gift_id` to buy (1-10). Defaults to 1. With `items`, each item says its own.
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 10))]
    pub quantity: i64,
    /// A basket: several gifts (each once, at most 10), each with how many, bought as one order
    /// with one payment and one confirmation, in the order given. Instead of `gift_id`; only
    /// when the user wants several gifts together.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 10))]
    pub items: Vec<BasketItem>,
    /// Add to a basket: the id of this user's earlier draft, whose lines come first, then
    /// `gift_id` or `items` (a gift already there adds its quantity). Only its lines are taken:
    /// recipient, shipping and the rest are this call's. A draft already ordered, or gone, is
    /// not added to: the gifts start a new basket (the draft's `lines` say what is in it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub add_to: Option<String>,
    /// Shipping speed. Defaults to standard.
    #[serde(default)]
    pub shipping: ShippingSpeed,
    /// Currency to price the order in. Defaults to USD.
    #[serde(default)]
    pub currency: Currency,
    /// Who receives the gift and where, as the user said it. Left out: the user's saved address
    /// if they have one; either way the user reviews and may edit it on the card before Confirm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipient: Option<Recipient>,
    /// A short note for the recipient, plain text (at most 300 characters, 8 lines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 300))]
    pub gift_message: Option<String>,
    /// Keep this recipient as the user's saved address for next time. Only when the user said so.
    #[serde(default)]
    pub save_address: bool,
    /// The day the gift is needed by, `YYYY-MM-DD`, only when the user said one ("for her
    /// birthday on the 18th"): the draft then says which shipping options arrive in time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needed_by: Option<String>,
    /// Gift-wrap each unit (the merchant's price per gift, a line of its own in the totals).
    /// Only when the user asked; the draft's `gift_wrap_price` says whether and at what price
    /// its merchant wraps.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gift_wrap: bool,
    /// A gift receipt: the recipient's packing slip and order page show no prices. Only when
    /// the user asked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gift_receipt: bool,
}

/// One gift of a basket and how many.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BasketItem {
    /// The gift's id from a suggest_gifts result.
    #[schemars(length(min = 1, max = 64))]
    pub gift_id: String,
    /// How many (1-10). Defaults to 1.
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 10))]
    pub quantity: i64,
}

/// Arguments of `checkout_session`, ChatGPT's product checkout entry (OpenAI's "product checkout
/// conversion spec"): the products a person picked in ChatGPT's shopping results, by our feed's
/// ids. Its shape is that contract's, not ours.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProductCheckoutInput {
    /// What the person is checking out: the products they picked, by our product feed's ids.
    pub checkout_session: ProductCheckoutCart,
}

/// What is to be checked out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProductCheckoutCart {
    /// The products, by the product feed's ids (1 to 10; an id given twice counts once with the
    /// quantities added).
    #[schemars(length(min = 1, max = 10))]
    pub items: Vec<ProductCheckoutItem>,
}

/// One product of a product checkout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProductCheckoutItem {
    /// The product's id in our product feed (a gift's id).
    #[schemars(length(min = 1, max = 64))]
    pub id: String,
    /// How many (1-10). Defaults to 1.
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 10))]
    pub quantity: i64,
    /// The feed's offer (variant) id, when the product came with one: our feed has one offer
    /// per product, with the product's own id.
    #[serde(default, rename = "offerId", skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub offer_id: Option<String>,
}

impl ProductCheckoutInput {
    /// The same purchase as `prepare_order`'s basket: each product once (an id given twice
    /// adds its quantities), in the order first given, priced in USD (the feed's currency).
    pub fn basket(&self) -> PrepareOrderInput {
        let mut items: Vec<BasketItem> = Vec::new();
        for item in &self.checkout_session.items {
            match items.iter_mut().find(|line| line.gift_id == item.id) {
                Some(line) => line.quantity += item.quantity,
                None => items.push(BasketItem { gift_id: item.id.clone(), quantity: item.quantity }),
            }
        }
        PrepareOrderInput {
            gift_id: None,
            quantity: 1,
            items,
            add_to: None,
            shipping: ShippingSpeed::Standard,
            currency: Currency::USD,
            recipient: None,
            gift_message: None,
            save_address: false,
            needed_by: None,
            gift_wrap: false,
            gift_receipt: false,
        }
    }
}

impl Validate for ProductCheckoutInput {
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        let items = &self.checkout_session.items;
        if items.is_empty() || items.len() > MAX_BASKET_ITEMS {
            errors.push(FieldError::new(
                "checkout_session.items",
                format!("must hold 1 to {MAX_BASKET_ITEMS} products (got {})", items.len()),
            ));
        }
        for (i, item) in items.iter().enumerate() {
            let field = |name: &str| format!("checkout_session.items[{i}].{name}");
            check_id(&field("id"), &item.id, &mut errors);
            check_quantity(&field("quantity"), item.quantity, &mut errors);
            if let Some(offer) = &item.offer_id
                && *offer != item.id
            {
                errors.push(FieldError::new(
                    field("offerId"),
                    format!(
                        "is no offer of product {}: our feed has one offer per product, with the product's id",
                        item.id
                    ),
                ));
            }
        }
        for (id, total) in self.basket().items.iter().map(|line| (&line.gift_id, line.quantity)) {
            if total > MAX_QUANTITY && items.iter().filter(|item| item.id == *id).count() > 1 {
                errors.push(FieldError::new(
                    "checkout_session.items",
                    format!("asks for {total} of {id} in all: at most {MAX_QUANTITY} of one product"),
                ));
            }
        }
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }
}

/// At most this many lines in a basket.
pub const MAX_BASKET_ITEMS: usize = 10;

fn one() -> i64 {
    1
}

/// At most this many of one gift in an order.
pub const MAX_QUANTITY: i64 = 10;

fn check_quantity(field: &str, quantity: i64, errors: &mut Vec<FieldError>) {
    if !(1..=MAX_QUANTITY).contains(&quantity) {
        errors.push(FieldError::new(field, format!("must be between 1 and 10 (got {quantity})")));
    }
}

impl PrepareOrderInput {
    /// What it asks to buy, as (gift id, quantity) lines in the order given: its `items`, or
    /// its one `gift_id` (valid input has exactly one of them).
    pub fn lines(&self) -> Vec<(&str, i64)> {
        match &self.gift_id {
            Some(gift_id) if self.items.is_empty() => vec![(gift_id.as_str(), self.quantity)],
            _ => self.items.iter().map(|item| (item.gift_id.as_str(), item.quantity)).collect(),
        }
    }
}

impl Validate for PrepareOrderInput {
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        match (&self.gift_id, self.items.is_empty()) {
            (Some(gift_id), true) => {
                check_id("gift_id", gift_id, &mut errors);
                check_quantity("quantity", self.quantity, &mut errors);
            }
            (None, true) => errors.push(FieldError::new(
                "gift_id",
                "is required (or items, for several gifts): the id of a gift from suggest_gifts",
            )),
            (Some(_), false) => errors.push(FieldError::new(
                "items",
                "goes without gift_id: put every gift of the order in items, or give one gift_id",
            )),
            (None, false) => {
                if self.quantity != 1 {
                    errors.push(FieldError::new("quantity", "is for gift_id; with items, give each item its quantity"));
                }
                if self.items.len() > MAX_BASKET_ITEMS {
                    errors.push(FieldError::new(
                        "items",
                        format!("holds at most {MAX_BASKET_ITEMS} gifts (got {})", self.items.len()),
                    ));
                }
                for (i, item) in self.items.iter().enumerate() {
                    check_id(&format!("items[{i}].gift_id"), &item.gift_id, &mut errors);
                    check_quantity(&format!("items[{i}].quantity"), item.quantity, &mut errors);
                    if self.items[..i].iter().any(|earlier| earlier.gift_id == item.gift_id) {
                        errors.push(FieldError::new(
                            format!("items[{i}].gift_id"),
                            "names a gift already in items: give it once, with the quantity in all",
                        ));
                    }
                }
            }
        }
        if let Some(draft_id) = &self.add_to {
            check_id("add_to", draft_id, &mut errors);
        }
        if let Some(recipient) = &self.recipient {
            recipient.check("recipient", &mut errors);
        }
        if let Some(message) = &self.gift_message {
            check_gift_message("gift_message", message, &mut errors);
        }
        if let Some(day) = &self.needed_by
            && calendar_date(day).is_none()
        {
            errors.push(FieldError::new("needed_by", "must be a calendar date as YYYY-MM-DD (e.g. 2026-12-18)"));
        }
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }
}

/// `day` as (year, month, day) when it is a real calendar date written `YYYY-MM-DD` (years
/// 2000–2999: a day a gift can be needed by).
pub fn calendar_date(day: &str) -> Option<(i32, u32, u32)> {
    let b = day.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let number = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = day.get(range)?;
        part.bytes().all(|c| c.is_ascii_digit()).then(|| part.parse().ok()).flatten()
    };
    let (year, month, date) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    ((2000..3000).contains(&year) && (1..=days).contains(&date)).then_some((year as i32, month, date))
}

/// When one shipping option gets the gift there, in the recipient's calendar (the merchant's
/// handling days and cut-off, the carrier's business days to that country).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeliveryOption {
    pub shipping: ShippingSpeed,
    pub cost: Money,
    /// The first day it may arrive, `YYYY-MM-DD`.
    pub earliest: String,
    /// The last day it may arrive, `YYYY-MM-DD`.
    pub latest: String,
    /// Whether it surely arrives by the draft's `needed_by` (its `latest` is on or before it);
    /// absent when no `needed_by` was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_time: Option<bool>,
}

/// One line of a draft: a gift, how many, and what they cost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DraftLine {
    pub gift: GiftCard,
    pub quantity: u32,
    /// The gift's price times the quantity.
    pub subtotal: Money,
    /// The wrap of every unit of the line, when asked for (included in the draft's
    /// `gift_wrap_cost`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gift_wrap_cost: Option<Money>,
}

/// A priced, stock-checked order that has not been paid. Expires at `expires_at`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderDraft {
    pub id: String,
    /// The first line's gift and quantity (the whole draft when it holds one gift).
    pub gift: GiftCard,
    pub quantity: u32,
    /// Every line, first to last (one for a single gift; a basket's gifts otherwise).
    pub lines: Vec<DraftLine>,
    pub shipping: ShippingSpeed,
    pub subtotal: Money,
    pub shipping_cost: Money,
    pub total: Money,
    /// RFC 3339 UTC.
    pub expires_at: String,
    /// Where it goes (city and country; the full address is for the widget only). Absent: no
    /// recipient yet, and the order cannot be placed until the user adds one on the card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destination: Option<Destination>,
    /// Whether a gift message goes with it (its text is for the widget only).
    #[serde(default)]
    pub has_gift_message: bool,
    /// The day the person needs it by, as asked (`YYYY-MM-DD`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needed_by: Option<String>,
    /// Every shipping option with its cost and arrival dates, and whether it makes `needed_by`;
    /// empty until the draft knows where it goes. When `shipping` is not `in_time` and another
    /// option is, tell the user: only they may switch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delivery_options: Vec<DeliveryOption>,
    /// What the merchant charges to gift-wrap one unit; absent: this merchant does not wrap
    /// (in a basket: one of its merchants does not, so the basket cannot be wrapped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gift_wrap_price: Option<Money>,
    /// The gift wrap, when asked for: every unit's, included in `total`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gift_wrap_cost: Option<Money>,
    /// Whether the packing slip and the recipient's order page leave out the prices.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gift_receipt: bool,
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

/// Arguments of `reopen_order_draft` (called by the widget, never by the model): the draft a
/// reloaded confirmation card shows, again with a fresh confirmation token and its delivery
/// details in widget-only `_meta`, so the card needs no personal data in the host's widget state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReopenOrderDraftInput {
    /// The draft the card shows (from prepare_order).
    #[schemars(length(min = 1, max = 64))]
    pub draft_id: String,
}

impl Validate for ReopenOrderDraftInput {
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        check_id("draft_id", &self.draft_id, &mut errors);
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }
}

/// Arguments of `remove_saved_card` (called by the widget's Remove card, never by the model):
/// the draft whose confirm card the button is on, shown again without the card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveSavedCardInput {
    /// The draft the card shows (from prepare_order).
    #[schemars(length(min = 1, max = 64))]
    pub draft_id: String,
}

impl Validate for RemoveSavedCardInput {
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        check_id("draft_id", &self.draft_id, &mut errors);
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }
}

/// Where an order stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OrderStatus {
    /// Recorded, payment not yet confirmed (a retry of the same commit finishes it).
    PendingPayment,
    /// The card's bank asks the person to confirm the payment (3-D Secure): nothing is charged
    /// until they do on the hosted authentication page (the widget's link) and the payment
    /// provider says so; given up, nothing charged, once the authentication window ends.
    AwaitingAuthentication,
    /// Charged and recorded; the merchant will ship it.
    Paid,
    /// The merchant is preparing it (after paid).
    Processing,
    /// Handed to the carrier; `fulfillment` says which and how to track it. The buyer can no
    /// longer cancel it.
    Shipped,
    /// Delivered: nothing more happens to it but refunds.
    Completed,
    /// The payment was declined; nothing was charged.
    PaymentDeclined,
    /// Cancelled before shipping (by the user before the fulfilment cut-off, or by the
    /// merchant refunding all of it) and refunded.
    Cancelled,
}

impl OrderStatus {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::PendingPayment => "pending_payment",
            Self::AwaitingAuthentication => "awaiting_authentication",
            Self::Paid => "paid",
            Self::Processing => "processing",
            Self::Shipped => "shipped",
            Self::Completed => "completed",
            Self::PaymentDeclined => "payment_declined",
            Self::Cancelled => "cancelled",
        }
    }

    /// Every status, in the order an order may go through them.
    pub const ALL: [Self; 8] = [
        Self::PendingPayment,
        Self::AwaitingAuthentication,
        Self::Paid,
        Self::Processing,
        Self::Shipped,
        Self::Completed,
        Self::PaymentDeclined,
        Self::Cancelled,
    ];

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

/// One line of a placed order: a gift as it was when the order was placed, and how many.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderLine {
    pub gift_id: String,
    pub gift_title: String,
    pub merchant: String,
    pub quantity: u32,
    /// The gift's price times the quantity (absent on orders placed before baskets existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtotal: Option<Money>,
}

/// A placed order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Order {
    pub id: String,
    pub draft_id: String,
    /// The first line's gift and quantity (the whole order when it holds one gift).
    pub gift_id: String,
    pub gift_title: String,
    pub merchant: String,
    pub quantity: u32,
    /// Every line, first to last.
    pub lines: Vec<OrderLine>,
    pub total: Money,
    pub status: OrderStatus,
    /// RFC 3339 UTC.
    pub created_at: String,
    /// Where it goes (city and country; the full address is for the widget only). Absent on
    /// orders placed before delivery details existed, and on anonymized orders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destination: Option<Destination>,
    /// Until when the user may cancel it in the widget (RFC 3339 UTC): paid or processing
    /// orders before the fulfilment cut-off only (never once shipped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancellable_until: Option<String>,
    /// The refund of a cancelled order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund: Option<Refund>,
    /// How a shipped (or delivered) order travels: the carrier and its tracking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fulfillment: Option<Fulfillment>,
    /// When it was paid, then processing, shipped, completed or cancelled, oldest first
    /// (refunds have their own dates). Empty until it is paid.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<OrderStep>,
    /// Parts of the order the merchant refunded after it was placed, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adjustments: Vec<Adjustment>,
    /// All the money given back so far (the cancellation's refund and the adjustments that
    /// succeeded); never more than `total`. Absent while nothing was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount_refunded: Option<Money>,
    /// The gift wrap paid for (included in `total`), when it was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gift_wrap_cost: Option<Money>,
    /// Whether the packing slip and the recipient's order page leave out the prices.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gift_receipt: bool,
    /// When it was promised to arrive when it was placed (its shipping option's dates then).
    /// Absent on orders placed before dates were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrives: Option<DeliveryWindow>,
}

/// The first and last day a shipment may arrive, `YYYY-MM-DD` in the recipient's calendar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeliveryWindow {
    pub earliest: String,
    pub latest: String,
}

/// How a shipped order travels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fulfillment {
    /// The carrier's name, as the merchant gave it.
    pub carrier: String,
    pub tracking_number: String,
    /// The carrier's tracking page (https).
    pub tracking_url: String,
}

/// One step of an order's life: the status it reached, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderStep {
    pub status: OrderStatus,
    /// RFC 3339 UTC.
    pub at: String,
}

/// Part of an order's money the merchant gave back after it was placed (a partial refund).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Adjustment {
    pub id: String,
    pub amount: Money,
    /// Why, as the merchant wrote it.
    pub reason: String,
    pub status: RefundStatus,
    /// RFC 3339 UTC.
    pub created_at: String,
}

/// Where a refund stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RefundStatus {
    /// Asked of the payment provider; a retry (or the reconciler) finishes it.
    Pending,
    /// The money went back.
    Succeeded,
}

impl RefundStatus {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Succeeded => "succeeded",
        }
    }
}

/// The money given back for a cancelled order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Refund {
    pub id: String,
    pub amount: Money,
    pub status: RefundStatus,
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

/// Arguments of `list_orders`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListOrdersInput {
    /// `next_cursor` of the previous page; leave out for the newest orders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 200))]
    pub cursor: Option<String>,
    /// Orders per page (1-50). Defaults to 10.
    #[serde(default = "ten")]
    #[schemars(range(min = 1, max = 50))]
    pub limit: i64,
}

fn ten() -> i64 {
    10
}

impl Validate for ListOrdersInput {
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        if !(1..=50).contains(&self.limit) {
            errors.push(FieldError::new("limit", format!("must be between 1 and 50 (got {})", self.limit)));
        }
        if let Some(cursor) = &self.cursor
            && (cursor.is_empty() || cursor.len() > 200 || !cursor.bytes().all(|b| b.is_ascii_alphanumeric()))
        {
            errors.push(FieldError::new("cursor", "must be the next_cursor of a previous list_orders result"));
        }
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }
}

/// The data of a successful `list_orders` result: the caller's own orders, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListOrdersData {
    pub orders: Vec<Order>,
    /// Pass as `cursor` for the next (older) page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// Arguments of `cancel_order` (called by the widget's Cancel order button, never by the model).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelOrderInput {
    /// The order to cancel.
    #[schemars(length(min = 1, max = 64))]
    pub order_id: String,
    /// Minted once per cancellation by the widget; the same key on every retry.
    #[schemars(length(min = 1, max = 255))]
    pub idempotency_key: String,
    /// The token get_order / list_orders handed to the widget for this order; proves a person
    /// asked to cancel (without it: CONFIRMATION_REQUIRED).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(min = 1, max = 512))]
    pub confirmation_token: Option<String>,
}

impl Validate for CancelOrderInput {
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        check_id("order_id", &self.order_id, &mut errors);
        check_idempotency_key("idempotency_key", &self.idempotency_key, &mut errors);
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }
}

/// Arguments of `delete_my_data` (the widget's Delete my data button, never the model).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteMyDataInput {
    /// The token list_orders handed to the widget; proves a person asked (without it:
    /// CONFIRMATION_REQUIRED).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(min = 1, max = 512))]
    pub confirmation_token: Option<String>,
}

impl Validate for DeleteMyDataInput {
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        Ok(())
    }
}

/// What `delete_my_data` deleted and what it kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteMyDataData {
    pub saved_addresses_deleted: u64,
    pub drafts_deleted: u64,
    pub idempotency_keys_deleted: u64,
    pub checkout_sessions_deleted: u64,
    /// Orders whose recipient, address, gift message and link to the account were erased.
    pub orders_anonymized: u64,
    /// Orders kept as financial records (anonymized): amount, currency, gift, date, payment and
    /// refund ids, destination country.
    pub financial_records_kept: u64,
    /// How long the kept financial records stay before they are deleted, in days.
    pub financial_records_retention_days: u64,
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn a_needed_by_day_is_a_real_calendar_date() {
        assert_eq!(calendar_date("2026-12-18"), Some((2026, 12, 18)));
        assert_eq!(calendar_date("2028-02-29"), Some((2028, 2, 29)), "a leap day");
        for bad in ["2026-02-29", "2100-02-29", "2026-13-01", "2026-00-10", "2026-04-31", "1999-12-31", "2026-1-05"] {
            assert_eq!(calendar_date(bad), None, "{bad}");
        }
        for bad in ["", "Dec 18", "2026/12/18", "2026-12-18T00:00:00Z", "+026-12-18", "2026-12-1é"] {
            assert_eq!(calendar_date(bad), None, "{bad}");
        }
    }

    proptest! {
        /// Any text the model sends as `needed_by`: an answer, never a panic, and what is
        /// accepted is written back exactly as it was read.
        #[test]
        fn any_text_is_read_without_panicking(day in "\\PC{0,12}|[0-9]{4}-[0-9]{2}-[0-9]{2}") {
            if let Some((y, m, d)) = calendar_date(&day) {
                prop_assert_eq!(format!("{y:04}-{m:02}-{d:02}"), day);
            }
        }
    }
}
