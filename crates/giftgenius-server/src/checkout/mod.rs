//! Buying a gift: `prepare_order` (a priced, stock-checked draft and a confirmation token for
//! the widget), `commit_order` (charge once, after a human click), `get_order`, and the seed's
//! one-step `create_checkout_session`.
//!
//! - `prepare.rs`, `commit.rs`, `session.rs`: the tools' services; `get_order` is below.
//! - `list.rs`: `list_orders`, and what an order shows the widget (delivery, cancel tokens).
//! - `cancel.rs`: `cancel_order` (a refund through the provider, before the fulfilment cut-off).
//! - `privacy.rs`: `delete_my_data` and the retention of orders, addresses and refunds.
//! - `confirmation.rs`: the token that proves a person clicked Confirm.
//! - `idempotency.rs`: the tools' side of the keys (`giftgenius_commerce::idempotency`): outcomes as tool
//!   errors, answers stored and replayed as envelopes, the [`idempotency::Lease`] a call works
//!   under.
//! - `charge.rs`: the one charge step (MCP's commit and sheet, ACP's complete);
//!   `refund.rs`: the one refund step of a cancellation (`cancel_order`, the reconciler, the
//!   operator).
//! - `payments.rs`: the payment provider as the checkout sees it (one trait, whichever runs);
//!   `sandbox_client.rs`: the SANDBOX provider's HTTP client; `sandbox.rs`: starting the SANDBOX
//!   provider process when no `--payments-url` is given; `stripe/`: Stripe's API
//!   (`--payments stripe`).
//! - `cards.rs`, `card_links.rs`: with Stripe, the saved card on the confirm card, Remove card
//!   (`remove_saved_card`), and the hosted card page's capability links.
//! - `sheet.rs`: the host's payment sheet: its session in `prepare_order`'s `_meta`, and
//!   `complete_checkout`, which pays it through `commit_order`'s path with a vault token.
//! - `reconcile.rs`: finishes orders left pending (a lost answer, a dead process) from the
//!   provider's own record.

pub mod authenticate;
pub mod cancel;
pub mod card_links;
pub mod cards;
pub mod commit;
pub mod confirmation;
pub mod idempotency;
mod list;
mod prepare;
pub mod privacy;
pub mod reconcile;
pub mod sandbox;
mod session;
pub mod sheet;
pub mod stripe_webhook;

use std::sync::Arc;
use std::time::Duration;

use giftgenius_types::wire::{META_AUTHENTICATION_URLS, META_CANCEL_TOKENS, META_DELIVERIES};
use giftgenius_types::{
    Adjustment, CheckoutData, Currency, DeliveryDetails, DeliveryWindow, Destination, ErrorCode, Fulfillment,
    GetOrderInput, Money, Order, OrderData, OrderDraft, OrderLine, OrderStatus, OrderStep, PrepareOrderData, Reason,
    Refund, ShippingSpeed, ToolError, Why,
};
use serde_json::Value;

use crate::context::CallContext;
use crate::error::internal;
use crate::limits::Limits;
use crate::outcome::{Answer, ModelText, Outcome};
use confirmation::ConfirmationKeys;
use giftgenius_catalog::live::LiveCatalog;
use giftgenius_catalog::{CatalogGift, price_in};
use giftgenius_commerce::clock::{Clock, rfc3339};
use giftgenius_commerce::failpoints::Failpoints;
use giftgenius_commerce::order;
use giftgenius_commerce::payments::Payments;
use giftgenius_commerce::store::{
    AdjustmentRow, OrderFacts, OrderStatusColumn, RefundRow, Store, StoreError, StoreResult,
};
use idempotency::ToolKeys;

/// The checkout service: everything the order tools need.
pub struct Checkout {
    pub store: Store,
    /// The local catalog as it is now (it may be swapped between calls).
    pub catalog: Arc<LiveCatalog>,
    pub payments: Arc<Payments>,
    pub idempotency: ToolKeys,
    pub failpoints: Failpoints,
    pub clock: Clock,
    pub draft_ttl: Duration,
    pub public_url: String,
    pub confirmation: ConfirmationKeys,
    /// Drafts and checkout links per account per hour.
    pub limits: Limits,
    /// The fulfilment cut-off: a paid order may be cancelled until this long after it was placed.
    pub cancel_window: Duration,
    /// How long orders, refunds and saved addresses are kept (`privacy.rs`).
    pub retention: privacy::Retention,
    /// Every order's status page link (`permalink.rs`).
    pub permalinks: Arc<crate::permalink::Permalinks>,
    /// Builds the events paid and cancelled orders write with their change (`outbox/`).
    pub events: Arc<giftgenius_commerce::outbox::OrderEvents>,
    /// `--acp-merchant-id`: what a sheet payment's vault token must name (`sheet.rs`).
    pub merchant_id: String,
    /// The hosted card page (`cards.rs`, `http::card_page`), when Stripe charges.
    pub card_page: Option<Arc<cards::CardPage>>,
    /// How long an order may await the person's confirmation with their bank (3-D Secure).
    pub authentication_window: Duration,
}

impl std::fmt::Debug for Checkout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkout").finish_non_exhaustive()
    }
}

pub(crate) use giftgenius_commerce::ids::random_id;

/// At most this many units left reads as few: ACP's `low_stock`, the feed's `limited_stock`,
/// "Only N left" on a gift's page.
pub(crate) const LOW_STOCK: i64 = 5;

/// What `gift`'s merchant charges to wrap one unit, in `currency`; `None`: it does not wrap.
pub(crate) fn wrap_price(gift: &CatalogGift, currency: Currency) -> Option<Money> {
    giftgenius_commerce::gift_wrap::wrap_cents(&gift.merchant.id).map(|cents| price_in(i64::from(cents), currency))
}

pub(crate) fn shipping_cost(speed: ShippingSpeed, currency: Currency) -> Money {
    match speed {
        ShippingSpeed::Standard => Money::new(0, currency),
        ShippingSpeed::Express => price_in(1200, currency),
    }
}

/// An order row as the contract's `Order`, with its shipment and timeline (no cut-off, no
/// refunds: [`order_view_of`] and [`Checkout::order_view`] add them).
pub fn order_of(row: &order::Order) -> Result<Order, StoreError> {
    let units = |quantity: i64| {
        u32::try_from(quantity)
            .map_err(|_| StoreError::Inconsistent(format!("order {} has quantity {quantity}", row.id)))
    };
    let currency = row.currency.into();
    let lines = row
        .lines()
        .into_iter()
        .map(|line| {
            Ok(OrderLine {
                quantity: units(line.quantity)?,
                subtotal: line.subtotal_minor.map(|minor| Money::new(minor, currency)),
                gift_id: line.gift_id,
                gift_title: line.gift_title,
                merchant: line.merchant,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    Ok(Order {
        id: row.id.clone(),
        draft_id: row.draft_id.clone(),
        gift_id: row.gift_id.clone(),
        gift_title: row.gift_title.clone(),
        merchant: row.merchant.clone(),
        quantity: units(row.quantity)?,
        lines,
        total: row.total(),
        status: row.status_view(),
        created_at: rfc3339(row.created_at_ms),
        destination: match (&row.destination_city, &row.destination_country) {
            (Some(city), Some(country)) => Some(Destination { city: city.clone(), country: country.clone() }),
            _ => None,
        },
        cancellable_until: None,
        refund: None,
        fulfillment: fulfillment_of(row),
        timeline: timeline_of(row),
        adjustments: Vec::new(),
        amount_refunded: None,
        gift_wrap_cost: row.gift_wrap_minor.map(|minor| Money::new(minor, row.currency.into())),
        gift_receipt: row.gift_receipt != 0,
        arrives: match (&row.arrives_earliest, &row.arrives_latest) {
            (Some(earliest), Some(latest)) => {
                Some(DeliveryWindow { earliest: earliest.clone(), latest: latest.clone() })
            }
            _ => None,
        },
    })
}

/// The shipment of a shipped (or completed) order.
fn fulfillment_of(row: &order::Order) -> Option<Fulfillment> {
    let steps = &row.fulfilment;
    Some(Fulfillment {
        carrier: steps.carrier.clone()?,
        tracking_number: steps.tracking_number.clone()?,
        tracking_url: steps.tracking_url.clone()?,
    })
}

/// When the order was paid, then processing, shipped, completed or cancelled, oldest first.
fn timeline_of(row: &order::Order) -> Vec<OrderStep> {
    let steps = &row.fulfilment;
    let mut timeline: Vec<(i64, OrderStatus)> = [
        (steps.paid_at_ms, OrderStatus::Paid),
        (steps.processing_at_ms, OrderStatus::Processing),
        (steps.shipped_at_ms, OrderStatus::Shipped),
        (steps.completed_at_ms, OrderStatus::Completed),
        (row.cancelled_at_ms, OrderStatus::Cancelled),
    ]
    .into_iter()
    .filter_map(|(at, status)| Some((at?, status)))
    .collect();
    // Stable: steps recorded in the same millisecond keep their order.
    timeline.sort_by_key(|(at, _)| *at);
    timeline.into_iter().map(|(at, status)| OrderStep { status, at: rfc3339(at) }).collect()
}

/// An order as the contract shows it from its facts: the row's status, shipment and timeline,
/// the cancellation's refund, the adjustments and what was refunded in all (no cut-off: only the
/// buyer's view has one, [`Checkout::order_view`]).
pub fn order_view_of(facts: &OrderFacts) -> Result<Order, StoreError> {
    let mut order = order_of(&facts.order)?;
    order.refund = facts.refund.as_ref().map(refund_of);
    order.adjustments = facts.adjustments.iter().map(adjustment_of).collect();
    let refunded = facts.amount_refunded_minor();
    order.amount_refunded = (refunded > 0).then(|| Money::new(refunded, facts.order.currency.into()));
    Ok(order)
}

/// An adjustment row as the contract's `Adjustment`.
fn adjustment_of(row: &AdjustmentRow) -> Adjustment {
    Adjustment {
        id: row.id.clone(),
        amount: row.amount(),
        reason: row.reason.clone(),
        status: row.status.into(),
        created_at: rfc3339(row.created_at_ms),
    }
}

/// A refund row as the contract's `Refund`.
fn refund_of(row: &RefundRow) -> Refund {
    Refund {
        id: row.id.clone(),
        amount: row.amount(),
        status: row.status.into(),
        created_at: rfc3339(row.created_at_ms),
    }
}

/// The delivery details stored with a draft or an order (JSON), if any. Unreadable details are
/// a store fault, reported without their content (personal data stays out of logs).
pub fn delivery_of(json: Option<&str>) -> Result<Option<DeliveryDetails>, StoreError> {
    json.map(serde_json::from_str).transpose().map_err(|e| {
        // Not the parser's error as the source: its text may quote the details.
        StoreError::Inconsistent(format!(
            "stored delivery details unreadable at line {} column {}",
            e.line(),
            e.column()
        ))
    })
}

impl Checkout {
    fn now(&self) -> i64 {
        self.clock.now_ms()
    }

    /// The one charge step, over this checkout's provider, store and clock.
    fn charge_step(&self) -> giftgenius_commerce::charge::ChargeStep<'_> {
        giftgenius_commerce::charge::ChargeStep {
            payments: &self.payments,
            store: &self.store,
            clock: &self.clock,
            failpoints: &self.failpoints,
        }
    }

    /// Deletes drafts and checkout sessions that expired more than the key retention ago;
    /// returns how many of each. Why that long: a key is created before its draft expires and
    /// lives for the retention, so every key is gone before the draft it was made for, and a
    /// retry within a key's life always finds its draft.
    pub async fn prune(&self) -> StoreResult<(u64, u64)> {
        let cutoff = self.now() - self.idempotency.retention.as_millis() as i64;
        Ok((self.store.prune_drafts(cutoff).await?, self.store.prune_checkout_sessions(cutoff).await?))
    }

    /// The catalog's gift `id`, or GIFT_NOT_FOUND.
    fn gift(&self, call: &CallContext, id: &str) -> Result<CatalogGift, ToolError> {
        self.catalog.get(id).ok_or_else(|| {
            ToolError::new(ErrorCode::GiftNotFound, format!("There is no gift with id {id}."), &call.reference)
        })
    }

    /// When the fulfilment cut-off of an order placed at `created_at_ms` passes.
    fn cut_off_ms(&self, created_at_ms: i64) -> i64 {
        created_at_ms.saturating_add(self.cancel_window.as_millis() as i64)
    }

    /// An order as the contract shows it now: with its cut-off while the buyer may cancel it,
    /// its refunds, its shipment and its timeline.
    async fn order_view(&self, row: &order::Order) -> StoreResult<Order> {
        let mut facts = OrderFacts::of(row.clone());
        if row.status.is_paid() || row.status == OrderStatusColumn::Cancelled {
            facts.refund = self.store.refund_of_order(&row.id).await?;
            facts.adjustments = self.store.adjustments_of(&row.id).await?;
        }
        self.order_view_from(row, &facts)
    }

    /// [`Checkout::order_view`] from `facts` already known (its refunds and adjustments).
    fn order_view_from(&self, row: &order::Order, facts: &OrderFacts) -> StoreResult<Order> {
        let mut order = order_view_of(facts)?;
        if self.cancellable(row) {
            order.cancellable_until = Some(rfc3339(self.cut_off_ms(row.created_at_ms)));
        }
        Ok(order)
    }

    /// Whether the buyer may still cancel `row` now: paid or processing (not shipped), before
    /// its fulfilment cut-off.
    fn cancellable(&self, row: &order::Order) -> bool {
        row.status.is_before_shipping() && self.now() < self.cut_off_ms(row.created_at_ms)
    }

    /// An order row as the answer of an order tool, with its delivery details for the widget.
    async fn order_answer(&self, call: &CallContext, row: &order::Order) -> Result<Answer<OrderData>, ToolError> {
        let order = self.order_view(row).await;
        self.order_answer_with(call, row, order)
    }

    /// [`Checkout::order_answer`] from `facts` already known, with nothing to read.
    fn order_answer_of(
        &self,
        call: &CallContext,
        row: &order::Order,
        facts: OrderFacts,
    ) -> Result<Answer<OrderData>, ToolError> {
        let order = self.order_view_from(row, &facts);
        self.order_answer_with(call, row, order)
    }

    fn order_answer_with(
        &self,
        call: &CallContext,
        row: &order::Order,
        order: StoreResult<Order>,
    ) -> Result<Answer<OrderData>, ToolError> {
        let order = order.map_err(|e| internal(call, &e))?;
        let mut answer = Answer::new(OrderData { order });
        let deliveries = deliveries_meta(std::slice::from_ref(row)).map_err(|e| internal(call, &e))?;
        if !deliveries.is_empty() {
            answer = answer.with_widget_meta(META_DELIVERIES, Value::Object(deliveries));
        }
        let links = self.authentication_meta(std::slice::from_ref(row));
        if !links.is_empty() {
            answer = answer.with_widget_meta(META_AUTHENTICATION_URLS, Value::Object(links));
        }
        Ok(answer)
    }

    /// The hosted authentication page of each of `rows` awaiting the person's confirmation with
    /// their bank (widget-only: a capability to complete that payment).
    fn authentication_meta(&self, rows: &[order::Order]) -> serde_json::Map<String, Value> {
        rows.iter()
            .filter(|row| row.awaits_authentication())
            .map(|row| (row.id.clone(), Value::String(self.permalinks.authentication_url(&row.id))))
            .collect()
    }

    /// The cancel tokens of the `rows` a person may still cancel (widget-only).
    fn cancel_tokens_meta(&self, call: &CallContext, rows: &[order::Order]) -> serde_json::Map<String, Value> {
        let now = self.now();
        rows.iter()
            .filter(|row| self.cancellable(row))
            .map(|row| (row.id.clone(), Value::String(self.confirmation.cancel_token(&row.id, &call.subject, now))))
            .collect()
    }

    /// In-stock gifts like `gift` (shared tags, similar price), as cards for `partial_results`.
    fn alternatives(&self, gift: &CatalogGift, currency: Currency) -> Vec<Value> {
        let catalog = self.catalog.current();
        // Only gifts that can share a tag (a score above 0 needs one), not every gift.
        let mut candidates: Vec<(i64, &CatalogGift)> = catalog
            .sharing_a_tag(gift)
            .filter(|g| g.id != gift.id && g.stock > 0)
            .map(|g| {
                let shared = g.tags.iter().filter(|t| gift.tags.contains(t)).count() as i64;
                let price_gap = (g.price_cents - gift.price_cents).abs() / 500;
                (shared * 10 - price_gap, g)
            })
            .filter(|(score, _)| *score > 0)
            .collect();
        candidates.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.id.cmp(&b.1.id)));
        candidates
            .into_iter()
            .take(3)
            .map(|(_, g)| {
                // What makes it similar: a tag the two share (every candidate shares one).
                let shared = g.tags.iter().find(|t| gift.tags.contains(t)).map(|t| t.to_string()).unwrap_or_default();
                let reason = Reason {
                    text: format!("Also a {} gift, like {}", shared.replace('-', " "), gift.title),
                    why: Why::Popular { tag: shared },
                };
                let card = g.card(currency, vec![reason], &self.public_url);
                serde_json::to_value(card).unwrap_or(Value::Null)
            })
            .collect()
    }

    /// GIFT_UNAVAILABLE, with in-stock alternatives.
    fn unavailable(&self, call: &CallContext, gift: &CatalogGift, currency: Currency) -> ToolError {
        let alternatives = self.alternatives(gift, currency);
        ToolError::new(ErrorCode::GiftUnavailable, format!("{} is out of stock.", gift.title), &call.reference)
            .with_partial_results(alternatives)
    }

    /// `get_order`: the caller's own order, never anyone else's; the widget also gets its
    /// delivery details and, while it may be cancelled, its cancel token.
    pub async fn get_order(&self, call: &CallContext, input: &GetOrderInput) -> Outcome<OrderData> {
        let row = match self.store.order(&call.subject, &input.order_id).await {
            Ok(Some(row)) => row,
            Ok(None) => {
                return ToolError::new(
                    ErrorCode::OrderNotFound,
                    format!("There is no order {} for this user.", input.order_id),
                    &call.reference,
                )
                .into();
            }
            Err(e) => return internal(call, &e).into(),
        };
        let tokens = self.cancel_tokens_meta(call, std::slice::from_ref(&row));
        self.order_answer(call, &row)
            .await
            .map(|answer| answer.with_widget_meta(META_CANCEL_TOKENS, Value::Object(tokens)))
            .into()
    }
}

/// The delivery details of `rows` that still have them, by order id (widget-only).
fn deliveries_meta(rows: &[order::Order]) -> Result<serde_json::Map<String, Value>, StoreError> {
    let mut out = serde_json::Map::new();
    for row in rows {
        if let Some(details) = delivery_of(row.delivery.as_deref())? {
            let value = serde_json::to_value(details).map_err(StoreError::json("delivery not serializable"))?;
            out.insert(row.id.clone(), value);
        }
    }
    Ok(out)
}

/// " to City, CC" for the model, or nothing.
fn destination_words(destination: Option<&Destination>) -> String {
    destination.map(|d| format!(" to {}, {}", d.city, d.country)).unwrap_or_default()
}

impl ModelText for OrderData {
    fn model_text(answer: &Answer<Self>) -> String {
        let order = &answer.data.order;
        let status = match order.status {
            OrderStatus::Paid => "placed and paid",
            OrderStatus::Processing => "paid; the merchant is preparing it",
            OrderStatus::Shipped => "shipped",
            OrderStatus::Completed => "delivered",
            OrderStatus::PendingPayment => "waiting for payment confirmation",
            OrderStatus::AwaitingAuthentication => {
                "waiting for the user to confirm the payment with their bank (the widget shows the link); nothing charged yet"
            }
            OrderStatus::PaymentDeclined => "not placed: the payment was declined",
            OrderStatus::Cancelled => "cancelled and refunded",
        };
        let mut text = format!(
            "Order {} {}: {}, total {}{}.",
            order.id,
            status,
            order_lines_text(order),
            order.total.display(),
            destination_words(order.destination.as_ref()),
        );
        if let (Some(arrives), true) =
            (&order.arrives, matches!(order.status, OrderStatus::Paid | OrderStatus::Processing | OrderStatus::Shipped))
        {
            text.push_str(&format!(" It was promised to arrive {} to {}.", arrives.earliest, arrives.latest));
        }
        if let Some(wrap) = &order.gift_wrap_cost {
            text.push_str(&format!(" Gift-wrapped ({} of the total).", wrap.display()));
        }
        if order.gift_receipt {
            text.push_str(" With a gift receipt: no prices in the parcel.");
        }
        if let Some(until) = &order.cancellable_until {
            text.push_str(&format!(
                " The user can cancel it in the widget until {until}; you cannot cancel it yourself."
            ));
        }
        if let Some(shipment) = &order.fulfillment {
            text.push_str(&format!(
                " Carrier {}, tracking number {} ({}).",
                shipment.carrier, shipment.tracking_number, shipment.tracking_url
            ));
        }
        if matches!(order.status, OrderStatus::Shipped | OrderStatus::Completed) {
            text.push_str(" It has shipped, so it can no longer be cancelled.");
        }
        if let Some(refund) = &order.refund {
            text.push_str(&format!(
                " Refund {} of {}: {}.",
                refund.id,
                refund.amount.display(),
                refund.status.as_str()
            ));
        }
        for adjustment in &order.adjustments {
            text.push_str(&format!(
                " Partial refund {} of {} ({}): {}.",
                adjustment.id,
                adjustment.amount.display(),
                adjustment.reason,
                adjustment.status.as_str()
            ));
        }
        if let Some(refunded) = &order.amount_refunded {
            text.push_str(&format!(" Refunded so far: {}.", refunded.display()));
        }
        text
    }
}

impl ModelText for PrepareOrderData {
    fn model_text(answer: &Answer<Self>) -> String {
        let draft = &answer.data.draft;
        let delivery = match &draft.destination {
            Some(d) => format!(
                " It goes to the recipient in {}, {}{}; the user sees the full address on the card and can edit it there.",
                d.city,
                d.country,
                if draft.has_gift_message { ", with a gift message" } else { "" }
            ),
            None => " It has no recipient yet: ask the user who it is for and where it goes, or let them fill it in on the card.".to_string(),
        };
        let arrival = arrival_text(draft);
        let gift_options = gift_options_text(draft);
        format!(
            "Draft {} ready: {}, total {} (shipping {}).{delivery}{arrival}{gift_options} Nothing is bought yet: the user must review it and press Confirm in the widget. The draft expires at {}.",
            draft.id,
            draft_lines_text(draft),
            draft.total.display(),
            draft.shipping_cost.display(),
            draft.expires_at
        )
    }
}

/// What an order holds, in words: "2 × Mug from Hearth & Home", its lines joined by "; ".
pub(crate) fn order_lines_text(order: &Order) -> String {
    let lines: Vec<String> =
        order.lines.iter().map(|l| format!("{} × {} from {}", l.quantity, l.gift_title, l.merchant)).collect();
    lines.join("; ")
}

/// What a draft holds, in words, as [`order_lines_text`] (a basket says so).
fn draft_lines_text(draft: &OrderDraft) -> String {
    let lines: Vec<String> = draft
        .lines
        .iter()
        .map(|l| format!("{} × {} from {}", l.quantity, l.gift.title, l.gift.merchant.name))
        .collect();
    if lines.len() > 1 { format!("a basket of {} gifts ({})", lines.len(), lines.join("; ")) } else { lines.join("; ") }
}

/// The draft's gift wrap and gift receipt, and whether its merchant would wrap: the model may
/// offer wrap only where it exists.
fn gift_options_text(draft: &OrderDraft) -> String {
    let wrap = match (&draft.gift_wrap_cost, &draft.gift_wrap_price) {
        (Some(cost), _) => format!(" Gift-wrapped: {} in the total.", cost.display()),
        (None, Some(price)) => {
            let price = if draft.lines.len() > 1 { format!("up to {}", price.display()) } else { price.display() };
            format!(" Gift wrap is available at {price} per gift (only if the user asks).")
        }
        (None, None) if draft.lines.len() > 1 => {
            " One of the basket's merchants does not gift-wrap, so the basket cannot be wrapped.".to_string()
        }
        (None, None) => " This merchant does not gift-wrap.".to_string(),
    };
    let receipt = if draft.gift_receipt { " With a gift receipt: no prices in the parcel." } else { "" };
    format!("{wrap}{receipt}")
}

/// When the draft's shipping arrives, and with `needed_by`, whether it makes it and which
/// option would: the model says so, and only the user may switch (on the card, or by asking).
fn arrival_text(draft: &OrderDraft) -> String {
    let Some(chosen) = draft.delivery_options.iter().find(|o| o.shipping == draft.shipping) else {
        return String::new();
    };
    let mut text =
        format!(" With {} shipping it arrives {} to {}.", draft.shipping.as_str(), chosen.earliest, chosen.latest);
    let Some(day) = &draft.needed_by else { return text };
    if chosen.in_time == Some(true) {
        text.push_str(&format!(" That is in time for {day}, the day it is needed by."));
        return text;
    }
    text.push_str(&format!(" It may not arrive by {day}, the day it is needed by."));
    match draft.delivery_options.iter().find(|o| o.in_time == Some(true)) {
        Some(other) => text.push_str(&format!(
            " {} shipping ({}) arrives {} to {}, in time: tell the user, who may switch on the card.",
            capitalized(other.shipping.as_str()),
            other.cost.display(),
            other.earliest,
            other.latest
        )),
        None => text.push_str(" No shipping option arrives in time: tell the user before they confirm."),
    }
    text
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

impl ModelText for CheckoutData {
    fn model_text(answer: &Answer<Self>) -> String {
        let session = &answer.data.checkout;
        format!(
            "Checkout session {} for gift {} ({}). Give the user this link to pay: {} (it expires at {}). Nothing is charged until the user pays on that page.",
            session.id,
            session.gift_id,
            session.amount.display(),
            session.checkout_url,
            session.expires_at
        )
    }
}
