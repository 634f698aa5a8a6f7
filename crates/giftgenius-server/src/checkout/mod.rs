//! Buying a gift: `prepare_order` (a priced, stock-checked draft and a confirmation token for
//! the widget), `commit_order` (charge once, after a human click), `get_order`, and the seed's
//! one-step `create_checkout_session`.
//!
//! - `prepare.rs`, `commit.rs`, `session.rs`: the tools' services; `get_order` is below.
//! - `confirmation.rs`: the token that proves a person clicked Confirm.
//! - `idempotency.rs`: keys, fenced leases and replays (generic; knows nothing of orders).
//! - `payments.rs`: the payment provider's HTTP client; `sandbox.rs`: starting the SANDBOX
//!   provider process when no `--payments-url` is given.
//! - `reconcile.rs`: finishes orders left pending (a lost answer, a dead process) from the
//!   provider's own record.

pub mod commit;
pub mod confirmation;
pub mod idempotency;
pub mod payments;
mod prepare;
pub mod reconcile;
pub mod sandbox;
mod session;

use std::sync::Arc;
use std::time::Duration;

use giftgenius_types::{
    CheckoutData, Currency, ErrorCode, GetOrderInput, Money, Order, OrderData, OrderStatus, PrepareOrderData,
    ShippingSpeed, ToolError,
};
use serde_json::Value;

use crate::clock::{Clock, rfc3339};
use crate::context::CallContext;
use crate::error::internal;
use crate::failpoints::Failpoints;
use crate::limits::Limits;
use crate::outcome::{Answer, ModelText, Outcome};
use crate::store::{OrderRow, Store, StoreError, StoreResult};
use crate::suggest::catalog::live::LiveCatalog;
use crate::suggest::catalog::{CatalogGift, price_in};
use confirmation::ConfirmationKeys;
use idempotency::Idempotency;
use payments::Payments;

/// The checkout service: everything the order tools need.
pub struct Checkout {
    pub store: Store,
    /// The local catalog as it is now (it may be swapped between calls).
    pub catalog: Arc<LiveCatalog>,
    pub payments: Arc<Payments>,
    pub idempotency: Idempotency,
    pub failpoints: Failpoints,
    pub clock: Clock,
    pub draft_ttl: Duration,
    pub public_url: String,
    pub confirmation: ConfirmationKeys,
    /// Drafts and checkout links per account per hour.
    pub limits: Limits,
}

impl std::fmt::Debug for Checkout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkout").finish_non_exhaustive()
    }
}

fn random_id(prefix: &str) -> String {
    format!("{prefix}_{}", &uuid::Uuid::new_v4().simple().to_string()[..20])
}

fn shipping_cost(speed: ShippingSpeed, currency: Currency) -> Money {
    match speed {
        ShippingSpeed::Standard => Money::new(0, currency),
        ShippingSpeed::Express => price_in(1200, currency),
    }
}

/// An order row as the contract's `Order`.
pub fn order_of(row: &OrderRow) -> Result<Order, StoreError> {
    let quantity = u32::try_from(row.quantity)
        .map_err(|_| StoreError(format!("order {} has quantity {}", row.id, row.quantity)))?;
    Ok(Order {
        id: row.id.clone(),
        draft_id: row.draft_id.clone(),
        gift_id: row.gift_id.clone(),
        gift_title: row.gift_title.clone(),
        merchant: row.merchant.clone(),
        quantity,
        total: row.total(),
        status: row.status.into(),
        created_at: rfc3339(row.created_at_ms),
    })
}

impl Checkout {
    fn now(&self) -> i64 {
        self.clock.now_ms()
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

    /// An order row as the answer of an order tool.
    fn order_answer(&self, call: &CallContext, row: &OrderRow) -> Result<Answer<OrderData>, ToolError> {
        let order = order_of(row).map_err(|e| internal(call, &e))?;
        Ok(Answer::new(OrderData { order }))
    }

    /// In-stock gifts like `gift` (shared tags, similar price), as cards for `partial_results`.
    fn alternatives(&self, gift: &CatalogGift, currency: Currency) -> Vec<Value> {
        let catalog = self.catalog.current();
        let mut candidates: Vec<(i64, &CatalogGift)> = catalog
            .gifts()
            .iter()
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
                let card = g.card(currency, vec![format!("Similar to {}", gift.title)], &self.public_url);
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

    /// `get_order`: the caller's own order, never anyone else's.
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
        self.order_answer(call, &row).into()
    }
}

impl ModelText for OrderData {
    fn model_text(answer: &Answer<Self>) -> String {
        let order = &answer.data.order;
        let status = match order.status {
            OrderStatus::Paid => "placed and paid",
            OrderStatus::PendingPayment => "waiting for payment confirmation",
            OrderStatus::PaymentDeclined => "not placed: the payment was declined",
        };
        format!(
            "Order {} {}: {} × {} from {}, total {}.",
            order.id,
            status,
            order.quantity,
            order.gift_title,
            order.merchant,
            order.total.display()
        )
    }
}

impl ModelText for PrepareOrderData {
    fn model_text(answer: &Answer<Self>) -> String {
        let draft = &answer.data.draft;
        format!(
            "Draft {} ready: {} × {} from {}, total {} (shipping {}). Nothing is bought yet: the user must review it and press Confirm in the widget. The draft expires at {}.",
            draft.id,
            draft.quantity,
            draft.gift.title,
            draft.gift.merchant.name,
            draft.total.display(),
            draft.shipping_cost.display(),
            draft.expires_at
        )
    }
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
