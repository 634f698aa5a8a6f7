//! [`Operator`]: the status changes of `giftgenius_commerce::order` and the refunds of `refund.rs`, as one
//! service the HTTP routes and the CLI share. Each step reads the order's facts (the order, its
//! cancellation's refund, its adjustments), decides, builds the event from the facts as they
//! will be, and asks the store to write the change and the event only if the facts are still the
//! ones it read (`store/fulfilment.rs`); if they changed meanwhile it reads again, a few times.
//!
//! Answers are the order as get_order shows it (the contract's `Order`), and whether the step
//! changed anything: the same step again answers the order as it is (`changed: false`).

use std::sync::Arc;

use giftgenius_types::{FieldError, Money, Order, OrderStatus};
use serde::Serialize;

use crate::checkout::order_view_of;
use giftgenius_commerce::clock::Clock;
use giftgenius_commerce::order::{Changed, Decision, Step, decide};
use giftgenius_commerce::outbox::OrderEvents;
use giftgenius_commerce::payments::Payments;
use giftgenius_commerce::store::{OrderFacts, RefundStatusColumn, Store, StoreError};

/// How often a step reads the order again when another change overtook it before giving up.
pub(super) const ATTEMPTS: usize = 5;

/// The operator's service.
#[derive(Debug, Clone)]
pub struct Operator {
    pub store: Store,
    /// Refunds go through the provider (a cancellation's and every adjustment's).
    pub payments: Arc<Payments>,
    /// Builds the `order_update` event each change writes.
    pub events: Arc<OrderEvents>,
    pub clock: Clock,
}

/// What a step did: the order as it is now, and whether the step changed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Done {
    pub changed: bool,
    pub order: Order,
}

/// Why a step did nothing. Its text is for the operator (no internal detail: an internal
/// failure says only its reference; the detail is in the log under it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OperatorError {
    #[error("there is no order {0}")]
    NotFound(String),
    #[error("the request has problems: {}", .0.iter().map(|e| format!("{} {}", e.field, e.message)).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<FieldError>),
    /// The order is not where the step can start from.
    #[error("{message}")]
    IllegalTransition { current: OrderStatus, message: String },
    /// A cancellation's refund is under way: nothing else changes the order until it is done.
    #[error("order {0} is being cancelled (its refund is in progress); try again once it is cancelled")]
    CancellationInProgress(String),
    #[error("the refund is more than can still be refunded ({} of {})", .refundable.display(), .total.display())]
    ExceedsRefundable { refundable: Money, total: Money },
    /// The idempotency key was used on this order for another refund.
    #[error("idempotency key {0} was already used on this order for another refund")]
    KeyReused(String),
    /// Other changes kept overtaking this one.
    #[error("the order kept changing while this step was written; try again")]
    Busy,
    /// The payment provider did not answer; the refund is recorded and the same request (same
    /// key) finishes it, as does the reconciler.
    #[error("the payment provider did not answer; nothing was refunded twice: send the same request again")]
    ProviderUnavailable,
    #[error("something went wrong on our side (reference {reference})")]
    Internal { reference: String },
}

impl OperatorError {
    /// An internal failure: logged with its detail under a fresh reference, which is all the
    /// operator sees.
    pub fn internal(detail: &dyn std::fmt::Display) -> Self {
        let reference = crate::context::new_reference();
        tracing::error!(reference, error = %detail, "operator step failed");
        OperatorError::Internal { reference }
    }
}

impl From<StoreError> for OperatorError {
    fn from(e: StoreError) -> Self {
        OperatorError::internal(&e)
    }
}

impl Operator {
    pub(super) fn now(&self) -> i64 {
        self.clock.now_ms()
    }

    /// Order `order_id`'s facts, or `NotFound`.
    pub(super) async fn facts(&self, order_id: &str) -> Result<OrderFacts, OperatorError> {
        if !super::input::is_order_id(order_id) {
            return Err(OperatorError::NotFound(order_id.to_string()));
        }
        self.store.order_facts(order_id).await?.ok_or_else(|| OperatorError::NotFound(order_id.to_string()))
    }

    /// The answer for `facts`.
    pub(super) fn done(changed: bool, facts: &OrderFacts) -> Result<Done, OperatorError> {
        Ok(Done { changed, order: order_view_of(facts)? })
    }

    /// Order `order_id` as it is.
    pub async fn order(&self, order_id: &str) -> Result<Done, OperatorError> {
        Self::done(false, &self.facts(order_id).await?)
    }

    /// Moves order `order_id` by `step` (processing, ship, complete), with its event.
    pub async fn advance(&self, order_id: &str, step: &Step) -> Result<Done, OperatorError> {
        for _ in 0..ATTEMPTS {
            let facts = self.facts(order_id).await?;
            if facts.refund.as_ref().is_some_and(|r| r.status == RefundStatusColumn::Pending) {
                return Err(OperatorError::CancellationInProgress(order_id.to_string()));
            }
            match decide(&facts.order, step) {
                Decision::Already => return Self::done(false, &facts),
                Decision::Refused(message) => {
                    return Err(OperatorError::IllegalTransition { current: facts.order.status.into(), message });
                }
                Decision::Move => {
                    let now = self.now();
                    let Changed { order, change } = facts.order.clone().took(step, now);
                    let after = OrderFacts { order, ..facts.clone() };
                    let event = self.events.event(&after, change).await?;
                    if self.store.advance_order(&facts, &after.order, event.as_ref(), now).await? {
                        tracing::info!(
                            order = order_id,
                            status = after.order.status.as_str(),
                            "order advanced by the operator"
                        );
                        return Self::done(true, &after);
                    }
                }
            }
        }
        Err(OperatorError::Busy)
    }
}
