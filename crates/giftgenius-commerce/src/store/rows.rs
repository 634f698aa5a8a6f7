//! Rows as the database stores them, and the text columns that hold a closed set of values.
//!
//! A text column with a closed set (an order's status, a currency, a shipping speed, a key's
//! recovery point) maps to a Rust enum that implements `sqlx::Type`/`Encode`/`Decode` for every
//! database, so a value is checked where it is read: an unknown value in a row is a decode
//! error (the call answers `INTERNAL_ERROR` with a reference), never a silent default. The
//! enums convert to the contract's types here, so the contract crate stays free of sqlx.

use giftgenius_types::{Currency, Money, OrderStatus, RefundStatus, ShippingSpeed};

/// A Rust enum stored as one of a fixed set of strings.
macro_rules! text_column {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            pub fn parse(text: &str) -> Option<Self> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl<DB: sqlx::Database> sqlx::Type<DB> for $name
        where
            String: sqlx::Type<DB>,
        {
            fn type_info() -> DB::TypeInfo {
                <String as sqlx::Type<DB>>::type_info()
            }

            fn compatible(ty: &DB::TypeInfo) -> bool {
                <String as sqlx::Type<DB>>::compatible(ty)
            }
        }

        impl<'q, DB: sqlx::Database> sqlx::Encode<'q, DB> for $name
        where
            String: sqlx::Encode<'q, DB>,
        {
            fn encode_by_ref(
                &self,
                buf: &mut DB::ArgumentBuffer,
            ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
                <String as sqlx::Encode<'q, DB>>::encode(self.as_str().to_owned(), buf)
            }
        }

        impl<'r, DB: sqlx::Database> sqlx::Decode<'r, DB> for $name
        where
            String: sqlx::Decode<'r, DB>,
        {
            fn decode(value: DB::ValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
                let text = <String as sqlx::Decode<'r, DB>>::decode(value)?;
                Self::parse(&text)
                    .ok_or_else(|| format!("unknown {} {text:?} in a row", stringify!($name)).into())
            }
        }
    };
}

text_column! {
    /// `orders.status`.
    OrderStatusColumn {
        PendingPayment => "pending_payment",
        Paid => "paid",
        PaymentDeclined => "payment_declined",
        /// Cancelled before shipping (by the buyer before the cut-off, or by the operator
        /// refunding all of it); its refund succeeded.
        Cancelled => "cancelled",
        /// The operator marked it as being prepared.
        Processing => "processing",
        /// The operator handed it to a carrier (`carrier`, `tracking_*`).
        Shipped => "shipped",
        /// Delivered; final but for refunds.
        Completed => "completed",
    }
}

impl OrderStatusColumn {
    /// Charged and not cancelled: paid, or any step after it (processing, shipped, completed).
    pub const fn is_paid(self) -> bool {
        matches!(self, Self::Paid | Self::Processing | Self::Shipped | Self::Completed)
    }

    /// Paid and not shipped yet: what a cancellation (a refund of all of it) may still undo.
    pub const fn is_before_shipping(self) -> bool {
        matches!(self, Self::Paid | Self::Processing)
    }
}

text_column! {
    /// `refunds.status`.
    RefundStatusColumn {
        /// Recorded, asked of the provider; a retry or the reconciler finishes it.
        Pending => "pending",
        Succeeded => "succeeded",
    }
}

impl From<RefundStatusColumn> for RefundStatus {
    fn from(status: RefundStatusColumn) -> Self {
        match status {
            RefundStatusColumn::Pending => RefundStatus::Pending,
            RefundStatusColumn::Succeeded => RefundStatus::Succeeded,
        }
    }
}

text_column! {
    /// Every `currency` column (ISO 4217).
    CurrencyColumn {
        Usd => "USD",
        Eur => "EUR",
        Gbp => "GBP",
        Cad => "CAD",
        Aud => "AUD",
        Jpy => "JPY",
    }
}

text_column! {
    /// `drafts.shipping`.
    ShippingColumn {
        Standard => "standard",
        Express => "express",
    }
}

text_column! {
    /// `idempotency_keys.recovery_point`: where a keyed call got to, recorded atomically with
    /// the work it marks (see `checkout::idempotency`).
    RecoveryPoint {
        /// Key claimed; nothing else done.
        Started => "started",
        /// The call's resource exists (`resource_id`); what it stands for is the tool's business.
        ResourceCreated => "resource_created",
        /// The answer is stored.
        Finished => "finished",
    }
}

text_column! {
    /// `usage_counters.usage`: what a usage limit counts.
    Usage {
        /// suggest_gifts calls, per UTC day.
        Suggestions => "suggestions",
        /// prepare_order calls, per hour.
        Drafts => "drafts",
        /// create_checkout_session calls, per hour.
        CheckoutSessions => "checkout_sessions",
        /// Calls that ask the payment provider about an account's saved cards, per hour:
        /// reopen_order_draft, remove_saved_card, the card page.
        PaymentLookups => "payment_lookups",
        /// complete_checkout calls, per account and draft, per hour (`limits.rs`).
        SheetPayments => "sheet_payments",
    }
}

text_column! {
    /// `order_outbox.status`: where an order event is on its way to its receiver.
    OutboxStatus {
        /// Waiting for its next attempt (or being posted, while a worker's lease holds it).
        Pending => "pending",
        /// The receiver answered 2xx.
        Delivered => "delivered",
        /// Given up: refused for good, or still failing at the retry horizon. An operator may
        /// redeliver it.
        Dead => "dead",
    }
}

text_column! {
    /// `order_outbox.change`: the order change an event announces. One event per order per
    /// change, whoever records the change (a request, a retry, the reconciler).
    OrderChange {
        /// Paid: the order exists for the buyer (`order_create`).
        Paid => "paid",
        /// Cancelled and refunded (`order_update`).
        Cancelled => "cancelled",
        /// The operator marked it processing (`order_update`).
        Processing => "processing",
        /// The operator shipped it (`order_update`).
        Shipped => "shipped",
        /// The operator marked it completed (`order_update`).
        Completed => "completed",
        /// One of its adjustments (a partial refund) succeeded (`order_update`; one event per
        /// adjustment, told apart by the event's `change_key`).
        Refunded => "refunded",
    }
}

impl OrderChange {
    /// The ACP event type announcing this change (docs/acp.md §10.1): the first event of an
    /// order is `order_create`, every later one `order_update`.
    pub const fn event_type(self) -> &'static str {
        match self {
            OrderChange::Paid => "order_create",
            OrderChange::Cancelled
            | OrderChange::Processing
            | OrderChange::Shipped
            | OrderChange::Completed
            | OrderChange::Refunded => "order_update",
        }
    }
}

impl From<OrderStatusColumn> for OrderStatus {
    fn from(status: OrderStatusColumn) -> Self {
        match status {
            OrderStatusColumn::PendingPayment => OrderStatus::PendingPayment,
            OrderStatusColumn::Paid => OrderStatus::Paid,
            OrderStatusColumn::PaymentDeclined => OrderStatus::PaymentDeclined,
            OrderStatusColumn::Cancelled => OrderStatus::Cancelled,
            OrderStatusColumn::Processing => OrderStatus::Processing,
            OrderStatusColumn::Shipped => OrderStatus::Shipped,
            OrderStatusColumn::Completed => OrderStatus::Completed,
        }
    }
}

impl From<CurrencyColumn> for Currency {
    fn from(currency: CurrencyColumn) -> Self {
        match currency {
            CurrencyColumn::Usd => Currency::USD,
            CurrencyColumn::Eur => Currency::EUR,
            CurrencyColumn::Gbp => Currency::GBP,
            CurrencyColumn::Cad => Currency::CAD,
            CurrencyColumn::Aud => Currency::AUD,
            CurrencyColumn::Jpy => Currency::JPY,
        }
    }
}

impl From<Currency> for CurrencyColumn {
    fn from(currency: Currency) -> Self {
        match currency {
            Currency::USD => CurrencyColumn::Usd,
            Currency::EUR => CurrencyColumn::Eur,
            Currency::GBP => CurrencyColumn::Gbp,
            Currency::CAD => CurrencyColumn::Cad,
            Currency::AUD => CurrencyColumn::Aud,
            Currency::JPY => CurrencyColumn::Jpy,
        }
    }
}

impl From<ShippingColumn> for ShippingSpeed {
    fn from(shipping: ShippingColumn) -> Self {
        match shipping {
            ShippingColumn::Standard => ShippingSpeed::Standard,
            ShippingColumn::Express => ShippingSpeed::Express,
        }
    }
}

impl From<ShippingSpeed> for ShippingColumn {
    fn from(shipping: ShippingSpeed) -> Self {
        match shipping {
            ShippingSpeed::Standard => ShippingColumn::Standard,
            ShippingSpeed::Express => ShippingColumn::Express,
        }
    }
}

/// An order draft: a priced, stock-checked request for one gift, valid until it expires.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct DraftRow {
    pub id: String,
    pub subject: String,
    /// Hash of (gift, quantity, shipping, currency): the same request maps to the same draft.
    pub draft_key: String,
    pub gift_id: String,
    pub quantity: i64,
    pub shipping: ShippingColumn,
    pub currency: CurrencyColumn,
    pub subtotal_minor: i64,
    pub shipping_minor: i64,
    pub total_minor: i64,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
    /// JSON of `DeliveryDetails`; `None`: the draft has no recipient yet.
    pub delivery: Option<String>,
    /// The day the person needs it by (`YYYY-MM-DD`), if they said.
    pub needed_by: Option<String>,
    /// The gift wrap's cost (included in `total_minor`); `None`: not wrapped.
    pub gift_wrap_minor: Option<i64>,
    /// 1: a gift receipt (the packing slip and the recipient's page show no prices); 0: not.
    pub gift_receipt: i64,
    /// What the draft holds (the `lines` column); read them with [`DraftRow::lines`].
    #[sqlx(rename = "lines", try_from = "String")]
    pub stored_lines: Lines<DraftLineRow>,
}

impl DraftRow {
    /// Its lines, first to last (never empty: a row an older server wrote has its one line in
    /// the gift_id and quantity columns).
    pub fn lines(&self) -> Vec<DraftLineRow> {
        if self.stored_lines.0.is_empty() {
            vec![DraftLineRow {
                gift_id: self.gift_id.clone(),
                quantity: self.quantity,
                subtotal_minor: self.subtotal_minor,
                gift_wrap_minor: self.gift_wrap_minor,
            }]
        } else {
            self.stored_lines.0.clone()
        }
    }
}

/// One line of a draft: a gift, how many, and what they cost in the draft's currency.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DraftLineRow {
    pub gift_id: String,
    pub quantity: i64,
    /// Unit price × quantity.
    pub subtotal_minor: i64,
    /// The wrap of every unit of the line (its merchant's price × quantity); `None`: not wrapped.
    #[serde(default)]
    pub gift_wrap_minor: Option<i64>,
}

/// One line of an order: a gift, how many, what they cost, and the gift's title and merchant
/// as they were when it was placed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OrderLineRow {
    pub gift_id: String,
    pub gift_title: String,
    pub merchant: String,
    pub quantity: i64,
    /// Unit price × quantity; `None` on an order placed before baskets whose draft was gone
    /// when they came (its total says what it cost).
    #[serde(default)]
    pub subtotal_minor: Option<i64>,
    #[serde(default)]
    pub gift_wrap_minor: Option<i64>,
}

/// A `lines` column: the JSON array of a draft's or an order's lines (`[]` on a row an older
/// server wrote during an upgrade; its row type fills the one line in).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lines<L>(pub Vec<L>);

impl<L> Default for Lines<L> {
    fn default() -> Self {
        Lines(Vec::new())
    }
}

impl<L: serde::de::DeserializeOwned> TryFrom<String> for Lines<L> {
    type Error = serde_json::Error;

    fn try_from(json: String) -> Result<Self, Self::Error> {
        serde_json::from_str(&json).map(Lines)
    }
}

impl<L: serde::Serialize> Lines<L> {
    /// The column's text.
    pub fn json(&self) -> String {
        // Plain structs of strings and integers: serializing them cannot fail.
        serde_json::to_string(&self.0).unwrap_or_else(|_| "[]".into())
    }
}

/// Where a keyed call stands; see `checkout::idempotency`.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct KeyRow {
    pub fingerprint: String,
    pub recovery_point: RecoveryPoint,
    pub locked_until_ms: Option<i64>,
    /// The fencing token: which holder may write (see `sql.rs`).
    pub generation: i64,
    pub resource_id: Option<String>,
    pub response: Option<String>,
}

/// An order: what was bought, by whom, for how much, and where it stands (its status, its
/// charge, its timeline). The store reads and writes it as the `orders` row (its fields are the
/// columns: money in minor units with its currency, times in ms); what it may become is the
/// methods of `crate::order`, each giving the order after the change.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Order {
    pub id: String,
    pub subject: String,
    pub draft_id: String,
    pub gift_id: String,
    pub gift_title: String,
    pub merchant: String,
    pub quantity: i64,
    pub currency: CurrencyColumn,
    pub total_minor: i64,
    pub status: OrderStatusColumn,
    pub charge_id: Option<String>,
    pub created_at_ms: i64,
    /// JSON of `DeliveryDetails`; `None` once anonymized (or for orders placed before delivery
    /// details existed).
    pub delivery: Option<String>,
    pub destination_city: Option<String>,
    pub destination_country: Option<String>,
    pub cancelled_at_ms: Option<i64>,
    pub anonymized_at_ms: Option<i64>,
    /// The provider's payment its charge request was answered with before it settled (Stripe:
    /// the PaymentIntent id), e.g. one awaiting 3-D Secure.
    pub payment_ref: Option<String>,
    /// Set while it awaits the person's confirmation with their bank (3-D Secure): until when
    /// the reconciler leaves it pending (`--authentication-window-secs`).
    pub authentication_until_ms: Option<i64>,
    /// The gift wrap's cost (included in `total_minor`); `None`: not wrapped.
    pub gift_wrap_minor: Option<i64>,
    /// 1: a gift receipt (the packing slip and the recipient's page show no prices); 0: not.
    pub gift_receipt: i64,
    /// The first and last day it was promised to arrive (`YYYY-MM-DD`, the recipient's
    /// calendar), as computed when it was placed; `None` on older orders.
    pub arrives_earliest: Option<String>,
    pub arrives_latest: Option<String>,
    /// What was bought (the `lines` column); read them with [`Order::lines`]. The gift_id,
    /// gift_title, merchant and quantity fields are its first line.
    #[sqlx(rename = "lines", try_from = "String")]
    pub stored_lines: Lines<OrderLineRow>,
    /// What happened to it after it was paid.
    #[sqlx(flatten)]
    pub fulfilment: Fulfilment,
}

impl Order {
    /// Its lines, first to last (never empty: an order an older server wrote has its one line
    /// in the gift_id, gift_title, merchant and quantity columns).
    pub fn lines(&self) -> Vec<OrderLineRow> {
        if self.stored_lines.0.is_empty() {
            vec![OrderLineRow {
                gift_id: self.gift_id.clone(),
                gift_title: self.gift_title.clone(),
                merchant: self.merchant.clone(),
                quantity: self.quantity,
                subtotal_minor: None,
                gift_wrap_minor: self.gift_wrap_minor,
            }]
        } else {
            self.stored_lines.0.clone()
        }
    }

    /// How many units of each gift it holds, by gift id (a gift on two lines counted once).
    pub fn units(&self) -> std::collections::BTreeMap<String, i64> {
        let mut units = std::collections::BTreeMap::new();
        for line in self.lines() {
            *units.entry(line.gift_id).or_insert(0) += line.quantity;
        }
        units
    }

    pub fn total(&self) -> Money {
        Money::new(self.total_minor, self.currency.into())
    }

    /// Still pending, waiting for the person to confirm the payment with their bank.
    pub fn awaits_authentication(&self) -> bool {
        self.status == OrderStatusColumn::PendingPayment && self.authentication_until_ms.is_some()
    }

    /// Its status as the tools say it: pending payment reads as awaiting authentication while
    /// the person's bank waits for them (the column stays `pending_payment`, so every
    /// compare-and-set on a pending order holds for it too).
    pub fn status_view(&self) -> giftgenius_types::OrderStatus {
        if self.awaits_authentication() {
            giftgenius_types::OrderStatus::AwaitingAuthentication
        } else {
            self.status.into()
        }
    }
}

/// An order's life after payment, as its row keeps it: when each step happened (its timeline)
/// and, once shipped, the shipment.
#[derive(Debug, Clone, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct Fulfilment {
    pub paid_at_ms: Option<i64>,
    pub processing_at_ms: Option<i64>,
    pub shipped_at_ms: Option<i64>,
    pub completed_at_ms: Option<i64>,
    pub carrier: Option<String>,
    pub tracking_number: Option<String>,
    /// An https URL (checked before it is stored).
    pub tracking_url: Option<String>,
}

/// A partial refund of an order by the operator (`order_adjustments`).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct AdjustmentRow {
    pub id: String,
    pub order_id: String,
    /// Its place among the order's adjustments: 1, 2, …
    pub seq: i64,
    /// The operator's idempotency key: the same key on the same order is this adjustment.
    pub operator_key: String,
    pub amount_minor: i64,
    pub currency: CurrencyColumn,
    pub reason: String,
    pub status: RefundStatusColumn,
    pub provider_refund_id: Option<String>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

impl AdjustmentRow {
    pub fn amount(&self) -> Money {
        Money::new(self.amount_minor, self.currency.into())
    }
}

/// Everything an order's answers and events are built from: the order, its cancellation's
/// refund, and its adjustments (oldest first). The operator's steps check, under the order's
/// lock, that these are still what their event was built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderFacts {
    pub order: Order,
    pub refund: Option<RefundRow>,
    pub adjustments: Vec<AdjustmentRow>,
}

impl OrderFacts {
    /// An order without refunds or adjustments (one just paid).
    pub fn of(order: Order) -> Self {
        Self { order, refund: None, adjustments: Vec::new() }
    }

    /// Money given back or being given back: the cancellation's refund and every adjustment,
    /// pending ones included (a pending refund is a decision already taken).
    pub fn committed_refunds_minor(&self) -> i64 {
        let refund = self.refund.as_ref().map_or(0, |r| r.amount_minor);
        self.adjustments.iter().fold(refund, |sum, a| sum.saturating_add(a.amount_minor))
    }

    /// What may still be refunded: the total charged minus [`Self::committed_refunds_minor`].
    pub fn refundable_minor(&self) -> i64 {
        self.order.total_minor.saturating_sub(self.committed_refunds_minor()).max(0)
    }

    /// Money given back: the refunds and adjustments that succeeded.
    pub fn amount_refunded_minor(&self) -> i64 {
        let refund =
            self.refund.as_ref().filter(|r| r.status == RefundStatusColumn::Succeeded).map_or(0, |r| r.amount_minor);
        self.adjustments
            .iter()
            .filter(|a| a.status == RefundStatusColumn::Succeeded)
            .fold(refund, |sum, a| sum.saturating_add(a.amount_minor))
    }
}

/// The refund of a cancelled order (all that was left of its total).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RefundRow {
    pub id: String,
    pub order_id: String,
    pub subject: String,
    pub amount_minor: i64,
    pub currency: CurrencyColumn,
    pub status: RefundStatusColumn,
    pub provider_refund_id: Option<String>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    /// `None`: the buyer cancelled (cancel_order); else the operator's idempotency key of the
    /// refund request that cancelled it.
    pub operator_key: Option<String>,
}

impl RefundRow {
    pub fn amount(&self) -> Money {
        Money::new(self.amount_minor, self.currency.into())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct CheckoutRow {
    pub id: String,
    pub subject: String,
    pub gift_id: String,
    pub currency: CurrencyColumn,
    pub amount_minor: i64,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
}

impl CheckoutRow {
    pub fn amount(&self) -> Money {
        Money::new(self.amount_minor, self.currency.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_column_value_round_trips_and_unknown_values_are_refused() {
        for status in [
            OrderStatusColumn::PendingPayment,
            OrderStatusColumn::Paid,
            OrderStatusColumn::PaymentDeclined,
            OrderStatusColumn::Cancelled,
            OrderStatusColumn::Processing,
            OrderStatusColumn::Shipped,
            OrderStatusColumn::Completed,
        ] {
            assert_eq!(OrderStatusColumn::parse(status.as_str()), Some(status));
            assert_eq!(OrderStatus::from(status).as_str(), status.as_str());
        }
        for currency in Currency::ALL {
            let column = CurrencyColumn::from(currency);
            assert_eq!(column.as_str(), currency.code());
            assert_eq!(Currency::from(column), currency);
        }
        for speed in [ShippingSpeed::Standard, ShippingSpeed::Express] {
            assert_eq!(ShippingColumn::from(speed).as_str(), speed.as_str());
        }
        assert_eq!(CurrencyColumn::parse("XYZ"), None);
        assert_eq!(OrderStatusColumn::parse("refunded"), None);
        assert_eq!(RecoveryPoint::parse("order_created"), None, "renamed by migration 0003");
    }
}

/// An order event to write with the order change it announces (`store/outbox.rs`). Built by
/// `outbox::events` before the store step; the store only keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOrderEvent {
    /// `evt_…`, the `Request-Id` of every attempt.
    pub id: String,
    /// `app` or `acp:<platform>`.
    pub receiver: String,
    pub order_id: String,
    pub change: OrderChange,
    /// Which one of its kind: the adjustment's id for `Refunded`, empty for every other change
    /// (an order has at most one of those).
    pub change_key: String,
    /// The JSON posted, exactly as signed.
    pub body: String,
}

/// An order event as stored in `order_outbox`.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct OutboxRow {
    pub id: String,
    pub receiver: String,
    pub order_id: String,
    pub seq: i64,
    pub change: OrderChange,
    pub body: String,
    pub status: OutboxStatus,
    pub attempts: i64,
    pub next_attempt_at_ms: i64,
    pub pending_since_ms: i64,
    pub locked_until_ms: Option<i64>,
    /// The fencing token of the latest claim.
    pub claims: i64,
    pub last_error: Option<String>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    pub delivered_at_ms: Option<i64>,
}

/// An agent platform's checkout session as stored (`platform_sessions.rs`); `state` is JSON the
/// protocol's adapter owns (the store never reads it).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct PlatformSessionRow {
    pub id: String,
    pub platform: String,
    pub status: String,
    pub state: String,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    pub expires_at_ms: i64,
}

/// A product's push to a feed receiver as stored in `feed_pushes` (`feed_pushes.rs`); its
/// status is an [`OutboxStatus`]: pending, delivered or dead, as an order event's.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct FeedPushRow {
    pub receiver: String,
    pub product_id: String,
    /// The title it was last marked under.
    pub title: String,
    /// Hash of the product as last marked.
    pub fingerprint: String,
    /// Hash of the product as the receiver last accepted it.
    pub sent_fingerprint: Option<String>,
    pub status: OutboxStatus,
    /// Counts marks: a push claimed under an older mark leaves the row pending.
    pub marks: i64,
    pub attempts: i64,
    pub next_attempt_at_ms: i64,
    pub pending_since_ms: i64,
    pub locked_until_ms: Option<i64>,
    /// The fencing token of the latest claim.
    pub claims: i64,
    pub last_error: Option<String>,
    pub updated_at_ms: i64,
    pub delivered_at_ms: Option<i64>,
}

/// What a sweep found a product to be now, for one receiver: marked pending unless it was
/// marked so already.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedMark {
    pub product_id: String,
    pub title: String,
    pub fingerprint: String,
}
