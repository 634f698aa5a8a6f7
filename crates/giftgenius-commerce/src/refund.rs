//! The refund steps, written once. A cancellation's (`cancel_order`, the operator's refund of
//! everything left, the reconciler): the order's refund asked of the provider under the order's
//! own refund key ([`refund_key`]), so every retry (the person's, or the reconciler's for a
//! refund whose answer was lost) can only find or make the same refund; then what the
//! provider's refund makes of the order: cancelled, the refund succeeded, and the
//! `order_update` event written with it. How it is written (with a tool's key answer, or alone)
//! stays with the caller. An adjustment's (a partial refund: the operator's, and the reconciler
//! finishing one whose answer was lost): [`finish_adjustment`], under the adjustment's own key.

use crate::clock::Clock;
use crate::order::Order;
use crate::outbox::OrderEvents;
use crate::payments::{PaymentError, Payments};
use crate::store::{NewOrderEvent, OrderChange, OrderFacts, RefundRow, RefundStatusColumn, Store, StoreResult};

/// How often a step that lost a race with another change of the same order reads it again.
const ATTEMPTS: usize = 5;

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
pub async fn ask(payments: &Payments, order: &Order, refund: &RefundRow) -> Refunded {
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
pub fn succeeded(order: &Order, refund: &RefundRow, provider_refund_id: &str, now: i64) -> (Order, RefundRow) {
    let cancelled = order.clone().cancelled(now).order;
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
    cancelled: Order,
    refunded: RefundRow,
) -> StoreResult<Option<NewOrderEvent>> {
    let adjustments = store.adjustments_of(&cancelled.id).await?;
    let facts = OrderFacts { order: cancelled, refund: Some(refunded), adjustments };
    events.event(&facts, OrderChange::Cancelled).await
}

/// The provider's idempotency key for an adjustment: one adjustment, one refund, whoever asks.
pub fn adjustment_key(adjustment_id: &str) -> String {
    format!("gga_{adjustment_id}")
}

/// What finishing a pending adjustment came to.
#[derive(Debug)]
pub enum AdjustmentFinished {
    /// The order's facts now; `changed` when this call recorded the refund (not when it had
    /// already succeeded).
    Done { changed: bool, facts: Box<OrderFacts> },
    /// The provider did not answer: a retry asks for the same refund.
    Unavailable,
    /// The order kept changing under the step (another change of it won every attempt).
    Busy,
    /// A failure no retry mends by itself (no charge, the adjustment gone, the provider refused).
    Failed(String),
}

/// Asks the provider for pending adjustment `adjustment_id` of the order with `facts` under the
/// adjustment's key and records it succeeded with its event, in one store step that checks the
/// order is still as read (else it reads the order again, a few times).
pub async fn finish_adjustment(
    payments: &Payments,
    store: &Store,
    events: &OrderEvents,
    clock: &Clock,
    mut facts: OrderFacts,
    adjustment_id: &str,
) -> StoreResult<AdjustmentFinished> {
    for _ in 0..ATTEMPTS {
        let Some(adjustment) = facts.adjustments.iter().find(|a| a.id == adjustment_id).cloned() else {
            return Ok(AdjustmentFinished::Failed(format!("adjustment {adjustment_id} vanished")));
        };
        if adjustment.status == RefundStatusColumn::Succeeded {
            return Ok(AdjustmentFinished::Done { changed: false, facts: Box::new(facts) });
        }
        let Some(charge) = facts.order.charge_id.as_deref() else {
            return Ok(AdjustmentFinished::Failed(format!("paid order {} has no charge id", facts.order.id)));
        };
        let key = adjustment_key(&adjustment.id);
        let provider_refund = match payments.refund(&key, charge, adjustment.amount()).await {
            Ok(id) => id,
            Err(PaymentError::Unavailable(detail)) => {
                tracing::warn!(
                    order = facts.order.id,
                    key,
                    detail,
                    "payment provider unavailable for a partial refund"
                );
                return Ok(AdjustmentFinished::Unavailable);
            }
            Err(other) => {
                return Ok(AdjustmentFinished::Failed(format!(
                    "the provider refused the refund {key} of order {}: {other:?}",
                    facts.order.id
                )));
            }
        };
        let now = clock.now_ms();
        let mut after = facts.clone();
        for a in after.adjustments.iter_mut().filter(|a| a.id == adjustment.id) {
            a.status = RefundStatusColumn::Succeeded;
            a.provider_refund_id = Some(provider_refund.clone());
            a.updated_at_ms = now;
        }
        let event = events.adjustment_event(&after, &adjustment.id).await?;
        if store.settle_adjustment(&facts, &adjustment.id, &provider_refund, event.as_ref(), now).await? {
            tracing::info!(
                order = facts.order.id,
                adjustment = adjustment.id,
                refund = provider_refund,
                amount = adjustment.amount().display(),
                "order partly refunded"
            );
            return Ok(AdjustmentFinished::Done { changed: true, facts: Box::new(after) });
        }
        match store.order_facts(&facts.order.id).await? {
            Some(now_is) => facts = now_is,
            None => return Ok(AdjustmentFinished::Failed(format!("order {} vanished", facts.order.id))),
        }
    }
    Ok(AdjustmentFinished::Busy)
}
