//! The refund step of a cancellation, written once for `cancel_order` and the reconciler: the
//! order's refund asked of the provider under the order's own refund key ([`refund_key`]), so
//! every retry (the person's, or the reconciler's for a refund whose answer was lost) can only
//! find or make the same refund; then what the provider's refund makes of the order: cancelled,
//! the refund succeeded, and the `order_update` event written with it. How it is written (with
//! a tool's key answer, or alone) stays with the caller.

use super::payments::{PaymentError, Payments};
use crate::outbox::OrderEvents;
use crate::store::{
    NewOrderEvent, OrderChange, OrderFacts, OrderRow, OrderStatusColumn, RefundRow, RefundStatusColumn, Store,
    StoreResult,
};

/// The provider's idempotency key for an order's refund: one order, one refund, whoever asks.
pub fn refund_key(order_id: &str) -> String {
    format!("ggr_{order_id}")
}

/// What asking for a cancellation's refund came to.
#[derive(Debug)]
pub enum Refunded {
    /// The provider refunded it: its refund id.
    Done(String),
    /// The provider did not answer: a retry under the same key asks for the same refund.
    Unavailable(String),
    /// A failure no retry mends by itself (no charge to refund, the provider refused).
    Failed(String),
}

/// Asks the provider to refund `refund` of `order` (all that was left to refund when it was
/// recorded).
pub async fn ask(payments: &Payments, order: &OrderRow, refund: &RefundRow) -> Refunded {
    let Some(charge_id) = order.charge_id.as_deref() else {
        return Refunded::Failed(format!("paid order {} has no charge id", order.id));
    };
    match payments.refund(&refund_key(&order.id), charge_id, refund.amount()).await {
        Ok(provider_refund_id) => Refunded::Done(provider_refund_id),
        Err(PaymentError::Unavailable(detail)) => {
            tracing::warn!(order = order.id, detail, "payment provider unavailable for a refund");
            Refunded::Unavailable(detail)
        }
        Err(other) => Refunded::Failed(format!("the provider refused the refund of order {}: {other:?}", order.id)),
    }
}

/// The order and its refund once the provider refunded it (`provider_refund_id`, at `now`):
/// cancelled (when the cancellation was first recorded, if it was), the refund succeeded.
pub fn succeeded(order: &OrderRow, refund: &RefundRow, provider_refund_id: &str, now: i64) -> (OrderRow, RefundRow) {
    let cancelled = OrderRow {
        status: OrderStatusColumn::Cancelled,
        cancelled_at_ms: Some(order.cancelled_at_ms.unwrap_or(now)),
        ..order.clone()
    };
    let refunded = RefundRow {
        status: RefundStatusColumn::Succeeded,
        provider_refund_id: Some(provider_refund_id.to_string()),
        updated_at_ms: now,
        ..refund.clone()
    };
    (cancelled, refunded)
}

/// The `order_update` event the settled refund writes (its facts read with the order's
/// adjustments as they are now); `None` if nobody receives the order's events.
pub async fn cancelled_event(
    store: &Store,
    events: &OrderEvents,
    cancelled: OrderRow,
    refunded: RefundRow,
) -> StoreResult<Option<NewOrderEvent>> {
    let adjustments = store.adjustments_of(&cancelled.id).await?;
    let facts = OrderFacts { order: cancelled, refund: Some(refunded), adjustments };
    events.event(&facts, OrderChange::Cancelled).await
}
