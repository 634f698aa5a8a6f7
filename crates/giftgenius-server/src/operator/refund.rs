//! The operator's refunds. A refund of part of a paid (processing, shipped, completed) order is
//! an adjustment: recorded as pending under the order's lock (never more than what is left of
//! the total, pending refunds counted), then asked of the provider under `gga_<adjustment id>`
//! (so every retry, and the reconciler, can only find or make the same refund), then recorded
//! succeeded with its `order_update` event. A refund of everything that is left of an order not
//! shipped yet is its cancellation, exactly the buyer's: a `refunds` row (with the operator's
//! key), the provider asked under `ggr_<order id>`, the order cancelled with its event by the
//! same store step the buyer's cancellation and the reconciler use.
//!
//! The operator's idempotency key names the refund: the same key with the same amount and reason
//! answers the order as it is (finishing the refund first if its answer was lost); the same key
//! with another amount or reason is refused.

use super::input::RefundAsk;
use super::service::{ATTEMPTS, Done, Operator, OperatorError};
use giftgenius_commerce::refund::{self, AdjustmentFinished, Refunded};
use giftgenius_commerce::store::{OrderFacts, RefundStatusColumn};

pub use giftgenius_commerce::refund::adjustment_key;

/// What a refund request comes to, once the order's facts are read.
enum Plan {
    /// This key's refund exists and succeeded: the order as it is.
    Done,
    /// This key's adjustment is pending: ask the provider (again) and settle it.
    FinishAdjustment(String),
    /// This key's cancellation is pending: ask the provider (again) and cancel.
    FinishCancellation,
    /// A new adjustment.
    Adjust,
    /// A new cancellation: everything left, before shipping.
    Cancel,
}

/// What `ask` comes to on an order with `facts`, or why not.
fn plan(facts: &OrderFacts, ask: &RefundAsk) -> Result<Plan, OperatorError> {
    let order = &facts.order;
    let reused = || OperatorError::KeyReused(ask.idempotency_key.clone());
    if let Some(adjustment) = facts.adjustments.iter().find(|a| a.operator_key == ask.idempotency_key) {
        if adjustment.amount_minor != ask.amount_minor || adjustment.reason != ask.reason {
            return Err(reused());
        }
        return Ok(match adjustment.status {
            RefundStatusColumn::Succeeded => Plan::Done,
            RefundStatusColumn::Pending => Plan::FinishAdjustment(adjustment.id.clone()),
        });
    }
    if let Some(refund) = &facts.refund {
        if refund.operator_key.as_deref() == Some(ask.idempotency_key.as_str()) {
            if refund.amount_minor != ask.amount_minor {
                return Err(reused());
            }
            return Ok(match refund.status {
                RefundStatusColumn::Succeeded => Plan::Done,
                RefundStatusColumn::Pending => Plan::FinishCancellation,
            });
        }
        if refund.status == RefundStatusColumn::Pending {
            return Err(OperatorError::CancellationInProgress(order.id.clone()));
        }
    }
    if !order.status.is_paid() {
        return Err(OperatorError::IllegalTransition {
            current: order.status.into(),
            message: format!(
                "Order {} is {}; only a paid, processing, shipped or completed order can be refunded.",
                order.id,
                order.status.as_str()
            ),
        });
    }
    let refundable = facts.refundable_minor();
    if ask.amount_minor > refundable {
        return Err(OperatorError::ExceedsRefundable {
            refundable: giftgenius_types::Money::new(refundable, order.currency.into()),
            total: order.total(),
        });
    }
    Ok(if ask.amount_minor == refundable && order.status.is_before_shipping() { Plan::Cancel } else { Plan::Adjust })
}

impl Operator {
    /// Refunds `ask` of order `order_id` (see the module's doc).
    pub async fn refund(&self, order_id: &str, ask: &RefundAsk) -> Result<Done, OperatorError> {
        for _ in 0..ATTEMPTS {
            let facts = self.facts(order_id).await?;
            // A new refund is recorded (or overtaken) here; the next round finds this key's
            // refund and finishes it.
            match plan(&facts, ask)? {
                Plan::Done => return Self::done(false, &facts),
                Plan::FinishAdjustment(id) => return self.finish_adjustment(facts, &id).await,
                Plan::FinishCancellation => return self.finish_cancellation(facts).await,
                Plan::Adjust => {
                    let now = self.now();
                    let adjustment = facts.adjustment(&ask.idempotency_key, ask.amount_minor, &ask.reason, None, now);
                    self.store.begin_adjustment(&facts, &adjustment, now).await?;
                }
                Plan::Cancel => {
                    let now = self.now();
                    let refund = facts.order.cancellation(ask.amount_minor, Some(&ask.idempotency_key), None, now);
                    self.store.begin_operator_cancellation(&facts, &refund, now).await?;
                }
            }
        }
        Err(OperatorError::Busy)
    }

    /// Asks the provider for pending adjustment `adjustment_id` of the order with `facts` and
    /// records it succeeded with its event (`checkout::refund::finish_adjustment`, the step the
    /// reconciler uses too).
    pub async fn finish_adjustment(&self, facts: OrderFacts, adjustment_id: &str) -> Result<Done, OperatorError> {
        let finished =
            refund::finish_adjustment(&self.payments, &self.store, &self.events, &self.clock, facts, adjustment_id);
        match finished.await? {
            AdjustmentFinished::Done { changed, facts } => Self::done(changed, &facts),
            AdjustmentFinished::Unavailable => Err(OperatorError::ProviderUnavailable),
            AdjustmentFinished::Busy => Err(OperatorError::Busy),
            AdjustmentFinished::Failed(e) => Err(OperatorError::internal(&e)),
        }
    }

    /// Asks the provider for the order's pending cancellation refund and records the order
    /// cancelled with its event (the step the buyer's cancellation and the reconciler use too).
    async fn finish_cancellation(&self, facts: OrderFacts) -> Result<Done, OperatorError> {
        let Some(refund) = facts.refund.clone() else {
            return Err(OperatorError::internal(&format!("order {} has no cancellation to finish", facts.order.id)));
        };
        let provider_refund = match refund::ask(&self.payments, &facts.order, &refund).await {
            Refunded::Done(id) => id,
            Refunded::Unavailable(_) => return Err(OperatorError::ProviderUnavailable),
            Refunded::Failed(e) => return Err(OperatorError::internal(&e)),
        };
        let now = self.now();
        let (order, refund) = refund::succeeded(&facts.order, &refund, &provider_refund, now);
        let after = OrderFacts { order, refund: Some(refund), adjustments: facts.adjustments.clone() };
        let event = self.events.event(&after, giftgenius_commerce::store::OrderChange::Cancelled).await?;
        self.store.settle_refund(&facts.order.id, &provider_refund, event.as_ref(), now).await?;
        tracing::info!(
            order = facts.order.id,
            refund = provider_refund,
            "order cancelled and refunded by the operator"
        );
        // Read back: a cancellation finished meanwhile by someone else kept its own times.
        Self::done(true, &self.facts(&facts.order.id).await?)
    }
}
