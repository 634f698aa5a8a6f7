//! `cancel_order`: a person cancels a paid (or processing) order before its fulfilment cut-off,
//! and the money goes back through the payment provider (all that is left of it, when the
//! merchant refunded part of it already). A shipped order cannot be cancelled. Built like `commit_order`, in atomic phases recorded
//! as recovery points of the call's idempotency key:
//! 1. check the widget's cancel token (only `get_order` / `list_orders` hand it to the widget,
//!    so the model cannot cancel on its own) and claim the key                -> `Started`
//! 2. check the order (the caller's own, paid, before the cut-off) and record its refund as
//!    pending, in one transaction with the key's move                           -> `ResourceCreated`
//! 3. ask the provider to refund the charge under the key `ggr_<order id>`: derived from the
//!    order, so every retry (or the reconciler) asks for the *same* refund
//! 4. record the refund succeeded, the order cancelled (with its `order_update` event, `outbox/`)
//!    and the answer, in one transaction -> `Finished`
//!
//! Once the refund is recorded (phase 2) the cancellation goes through whatever the clock says:
//! the decision was taken before the cut-off. After the cut-off, with nothing recorded, the
//! answer is `ORDER_NOT_CANCELLABLE` saying why. An order cancelled under another key answers
//! as cancelled; a refund nobody retries is finished by the reconciler.

use giftgenius_commerce::order::Order;
use giftgenius_types::{CancelOrderInput, ErrorCode, OrderData, RefundStatus, ToolError};
use serde_json::{Map, Value};

use super::Checkout;
use super::idempotency::{Lease, fingerprint};
use crate::context::CallContext;
use crate::error::internal;
use crate::outcome::{Answer, Outcome};
use giftgenius_commerce::clock::rfc3339;
use giftgenius_commerce::failpoints::{AFTER_REFUND_RECORDED, AFTER_REFUNDED};
use giftgenius_commerce::payments::LEASE_MARGIN;
use giftgenius_commerce::refund::{self, Refunded};
use giftgenius_commerce::store::{BeginRefund, Fenced, OrderStatusColumn, RefundRow, StoreError};

pub use giftgenius_commerce::refund::refund_key;

/// ORDER_NOT_CANCELLABLE, saying why.
fn not_cancellable(call: &CallContext, why: String) -> ToolError {
    ToolError::new(ErrorCode::OrderNotCancellable, why, &call.reference)
}

/// Why `order` cannot be cancelled (not paid, shipped, or nothing left to refund).
fn not_paid(call: &CallContext, order: &Order) -> ToolError {
    let why = match order.status {
        OrderStatusColumn::PendingPayment => "its payment is not confirmed yet; try again in a few minutes",
        OrderStatusColumn::PaymentDeclined => "it was never placed: the payment was declined and nothing was charged",
        OrderStatusColumn::Shipped => {
            "it has already shipped. Nothing was changed or refunded; the merchant can help with a return"
        }
        OrderStatusColumn::Completed => {
            "it was already delivered. Nothing was changed or refunded; the merchant can help with a return"
        }
        OrderStatusColumn::Paid | OrderStatusColumn::Processing => "everything it cost was already refunded",
        OrderStatusColumn::Cancelled => "it is not paid",
    };
    not_cancellable(call, format!("Order {} cannot be cancelled: {why}.", order.id))
}

impl Checkout {
    pub async fn cancel_order(
        &self,
        call: &CallContext,
        input: &CancelOrderInput,
        arguments: &Map<String, Value>,
    ) -> Outcome<OrderData> {
        let verdict = self.confirmation.verify_cancel(
            input.confirmation_token.as_deref(),
            &input.order_id,
            &call.subject,
            self.now(),
        );
        let fingerprint = fingerprint(arguments);
        match verdict.accepted(
            call,
            "Cancelling needs the user's click on Cancel order in the GiftGenius widget (get_order or list_orders shows it).",
            "Show the order again (get_order or list_orders) so the user can press Cancel order once more.",
        ) {
            Ok(_) => {}
            Err(expired) if expired.code == ErrorCode::ConfirmationExpired => {
                let done = self.cancelled_already(call, &input.idempotency_key, &fingerprint, &input.order_id).await;
                return done.unwrap_or_else(|| expired.into());
            }
            Err(refused) => return refused.into(),
        }
        self.idempotency
            .keyed(call, &input.idempotency_key, &fingerprint, async |lease| {
                match self.refund_phase(call, &input.order_id, &lease).await {
                    Ok(RefundStep::Ready(order, refund)) => self.provider_phase(call, lease, order, refund).await,
                    Ok(RefundStep::Answered(result)) => lease.answer(call, result).await,
                    Ok(RefundStep::Lost) => lease.settled(call).await,
                    Err(e) => lease.fail(call, &e).await.into(),
                }
            })
            .await
    }

    /// For a genuine but expired cancel token, which starts nothing: what already happened, if
    /// anything did (the key's stored answer, else the order cancelled meanwhile, say by the
    /// reconciler finishing a refund whose answer was lost).
    async fn cancelled_already(
        &self,
        call: &CallContext,
        key: &str,
        fingerprint: &str,
        order_id: &str,
    ) -> Option<Outcome<OrderData>> {
        match self.idempotency.finished(call, key, fingerprint).await {
            Ok(Some(replayed)) => return Some(replayed),
            Ok(None) => {}
            Err(e) => return Some(internal(call, &e).into()),
        }
        match self.store.order(&call.subject, order_id).await {
            Ok(Some(order)) if order.status == OrderStatusColumn::Cancelled => {
                Some(self.order_answer(call, &order).await.into())
            }
            Ok(_) => None,
            Err(e) => Some(internal(call, &e).into()),
        }
    }

    /// Phase 2: the order checked and its refund recorded as pending (or found so).
    async fn refund_phase(&self, call: &CallContext, order_id: &str, lease: &Lease) -> Result<RefundStep, StoreError> {
        let Some(order) = self.store.order(&call.subject, order_id).await? else {
            return Ok(RefundStep::Answered(Err(ToolError::new(
                ErrorCode::OrderNotFound,
                format!("There is no order {order_id} for this user."),
                &call.reference,
            ))));
        };
        match order.status {
            OrderStatusColumn::Paid | OrderStatusColumn::Processing => {}
            OrderStatusColumn::Cancelled => return Ok(RefundStep::Answered(self.order_answer(call, &order).await)),
            _ => return Ok(RefundStep::Answered(Err(not_paid(call, &order)))),
        }
        let recorded = self.store.refund_of_order(&order.id).await?.is_some();
        let cut_off = self.cut_off_ms(order.created_at_ms);
        let now = self.now();
        if !recorded && now >= cut_off {
            return Ok(RefundStep::Answered(Err(not_cancellable(
                call,
                format!(
                    "Order {} can no longer be cancelled: its cancellation window closed at {} and the merchant is \
                     preparing it for shipping. Nothing was changed or refunded.",
                    order.id,
                    rfc3339(cut_off)
                ),
            ))));
        }
        // The amount is decided by the store step: all that is left once partial refunds are off.
        let candidate = order.cancellation(order.total_minor, None, None, now);
        match self.store.begin_refund(lease.fence(), &candidate, now).await? {
            Fenced::Written(BeginRefund::Ready(refund)) => {
                self.failpoints.hit(AFTER_REFUND_RECORDED);
                Ok(RefundStep::Ready(order, refund))
            }
            Fenced::Written(BeginRefund::NotPaid(now_is)) if now_is.status == OrderStatusColumn::Cancelled => {
                Ok(RefundStep::Answered(self.order_answer(call, &now_is).await))
            }
            Fenced::Written(BeginRefund::NotPaid(now_is)) => Ok(RefundStep::Answered(Err(not_paid(call, &now_is)))),
            Fenced::Stale => Ok(RefundStep::Lost),
        }
    }

    /// Phases 3 and 4: the provider refunds, then the cancellation is recorded with the answer.
    async fn provider_phase(
        &self,
        call: &CallContext,
        lease: Lease,
        order: Order,
        refund: RefundRow,
    ) -> Outcome<OrderData> {
        // As for a charge: the refund request must end while we still hold the key.
        if lease.remaining() < self.payments.timeout() + LEASE_MARGIN {
            lease.release().await;
            return unavailable(call);
        }
        match refund::ask(&self.payments, &order, &refund).await {
            Refunded::Done(provider_refund_id) => {
                self.failpoints.hit(AFTER_REFUNDED);
                let now = self.now();
                let (cancelled, refunded) = refund::succeeded(&order, &refund, &provider_refund_id, now);
                let result = self.order_answer(call, &cancelled).await.map(|mut answer: Answer<OrderData>| {
                    answer.data.order.refund = Some(giftgenius_types::Refund {
                        id: refund.id.clone(),
                        amount: refund.amount(),
                        status: RefundStatus::Succeeded,
                        created_at: rfc3339(refund.created_at_ms),
                    });
                    let order = &mut answer.data.order;
                    let adjusted: i64 = order
                        .adjustments
                        .iter()
                        .filter(|a| a.status == RefundStatus::Succeeded)
                        .map(|a| a.amount.amount_minor)
                        .sum();
                    order.amount_refunded =
                        Some(giftgenius_types::Money::new(adjusted + refund.amount_minor, refund.currency.into()));
                    answer
                });
                lease
                    .finish(call, result, async |fence, answer| {
                        let event = refund::cancelled_event(&self.store, &self.events, cancelled, refunded).await?;
                        let written = self
                            .store
                            .finish_refund(fence, &order.id, &provider_refund_id, answer, event.as_ref(), now)
                            .await?;
                        if written == Fenced::Written(()) {
                            tracing::info!(
                                order = order.id,
                                refund = provider_refund_id,
                                "order cancelled and refunded"
                            );
                        }
                        Ok(written)
                    })
                    .await
            }
            Refunded::Unavailable(_) => {
                lease.release().await;
                unavailable(call)
            }
            Refunded::Failed(e) => lease.fail(call, &e).await.into(),
        }
    }
}

/// Where the refund phase left the call.
enum RefundStep {
    /// The order and its pending refund: ask the provider.
    Ready(Order, RefundRow),
    /// A definitive answer without asking the provider.
    Answered(Result<Answer<OrderData>, ToolError>),
    /// The key was taken over meanwhile.
    Lost,
}

/// PAYMENT_PROVIDER_UNAVAILABLE for a refund: transient; the same key retried asks for the same refund.
fn unavailable(call: &CallContext) -> Outcome<OrderData> {
    ToolError::new(
        ErrorCode::PaymentProviderUnavailable,
        "The payment provider did not answer. Nothing was refunded twice: try again with the same key.",
        &call.reference,
    )
    .with_retry_after_ms(1000)
    .into()
}
