//! The reconciler: finishes the orders nobody else will. An order stays `pending_payment` when
//! its charge request's answer was lost (a provider timeout: maybe charged, maybe not) or its
//! process died mid-commit, and only a retry of the same key used to finish it; a caller who
//! never retries left money at the provider without an order, or stock held forever.
//!
//! On a schedule (`--reconcile-interval-secs`, every replica) and on demand (`giftgenius-server
//! reconcile`), every order pending longer than `--reconcile-after-secs` whose charge request
//! cannot be in flight (no key leased, its charging window passed) is looked up at the provider
//! under its provider key, and settled in one transaction together with every unfinished
//! commit_order key pointing at it (generation bumped, so a late holder writes nothing):
//! - charged → paid, and the keys answer with the paid order (its `order_create` event is
//!   written in the same transaction, `outbox/`);
//! - declined → declined (`PAYMENT_DECLINED`), stock released;
//! - never charged → declined as abandoned (`PAYMENT_DECLINED`, "nothing was charged"), stock
//!   released; only if no charge request could still have reached the provider after it was
//!   asked (the order's charging window ended before), so a late charge cannot land on an order
//!   already given up;
//! - still processing, or the provider unreachable → left for the next pass.
//!
//! Refunds are reconciled too: a cancellation whose refund was recorded (the person's decision,
//! taken before the cut-off) but never finished (a lost answer, a dead process) is asked of the
//! provider again under the order's refund key, which can only ever find or make the same
//! refund, and then recorded: refund succeeded, order cancelled. So are the operator's partial
//! refunds (adjustments) left pending: asked again under the adjustment's own key, then recorded
//! succeeded with their event (`operator/refund.rs`).
//!
//! Replicas may reconcile at once: settling is a compare-and-set on the order's status, so the
//! second one changes nothing. Keys pointing at a pending order are never pruned (`sql.rs`).

use giftgenius_commerce::order::Order;
use giftgenius_types::{ErrorCode, ToolError, ToolName};
use serde::Serialize;

use std::sync::Arc;
use std::time::Duration;

use giftgenius_types::OrderData;

use super::commit::declined;
use super::idempotency::stored_answer;
use super::order_of;
use crate::context::{CallContext, DEFAULT_LOCALE};
use crate::metrics::{ReconcileMetrics, ReconcileOutcome};
use crate::outcome::Answer;
use giftgenius_commerce::charge::provider_key;
use giftgenius_commerce::clock::Clock;
use giftgenius_commerce::order::Changed;
use giftgenius_commerce::payments::{Charge, Lookup, OrderCharge, PaymentError, Payments};
use giftgenius_commerce::refund::{self, AdjustmentFinished, Refunded};
use giftgenius_commerce::store::{Fenced, OrderFacts, OrderStatusColumn, SettledBy, Settlement, Store, StoreResult};

/// Orders read per query.
const BATCH: i64 = 100;

/// What one pass did, by outcome (the `reconcile` command prints it as JSON).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ReconcileReport {
    /// Pending orders looked at.
    pub examined: u64,
    /// Charged at the provider: now paid.
    pub paid: u64,
    /// Declined at the provider: now declined.
    pub declined: u64,
    /// Never charged: declined as abandoned, stock released.
    pub abandoned: u64,
    /// A charge request still being processed: left for the next pass.
    pub in_flight: u64,
    /// Waiting for the person's bank (3-D Secure) inside the authentication window: left alone.
    pub awaiting_authentication: u64,
    /// The provider did not answer: left for the next pass.
    pub unreachable: u64,
    /// The provider's charge does not match the order (logged as an error for an operator).
    pub conflicts: u64,
    /// Pending refunds looked at.
    pub refunds_examined: u64,
    /// Refunds finished: the order is cancelled and refunded.
    pub refunded: u64,
    /// Partial refunds (the operator's adjustments) pending longer than the window, looked at.
    pub adjustments_examined: u64,
    /// Partial refunds finished: the provider refunded, the adjustment is recorded succeeded.
    pub adjusted: u64,
}

impl ReconcileReport {
    /// How many orders or refunds the pass settled each way, for its metrics.
    pub fn settled(&self) -> [(ReconcileOutcome, u64); 7] {
        [
            (ReconcileOutcome::Paid, self.paid),
            (ReconcileOutcome::Declined, self.declined),
            (ReconcileOutcome::Abandoned, self.abandoned),
            (ReconcileOutcome::InFlight, self.in_flight),
            (ReconcileOutcome::Unreachable, self.unreachable),
            (ReconcileOutcome::Conflict, self.conflicts),
            (ReconcileOutcome::Refunded, self.refunded),
        ]
    }

    /// Whether the pass changed or found anything worth a log line.
    pub fn is_quiet(&self) -> bool {
        self.examined == 0 && self.refunds_examined == 0 && self.adjustments_examined == 0
    }
}

/// The answer a key of an order that was never charged gives from now on.
fn abandoned(call: &CallContext) -> ToolError {
    ToolError::new(
        ErrorCode::PaymentDeclined,
        "The payment did not go through and nothing was charged. Prepare the order again if the user still wants it.",
        &call.reference,
    )
}

/// What a reconcile pass needs: the database, the provider, the time, and the window.
#[derive(Debug, Clone)]
pub struct Reconciler {
    pub store: Store,
    pub payments: Arc<Payments>,
    pub clock: Clock,
    /// How long an order may stay pending before it is looked up.
    pub after: Duration,
    /// Builds the events the orders it settles write with their change (`outbox/`).
    pub events: Arc<giftgenius_commerce::outbox::OrderEvents>,
    /// Passes and what they settled (`/metrics`).
    pub metrics: ReconcileMetrics,
}

impl Reconciler {
    fn now(&self) -> i64 {
        self.clock.now_ms()
    }

    /// One pass over the orders pending longer than the window, then the refunds.
    pub async fn run_once(&self) -> StoreResult<ReconcileReport> {
        let pass = self.pass().await;
        let settled = pass.as_ref().ok().map(ReconcileReport::settled);
        self.metrics.pass(settled.as_ref().map(|s| s.as_slice()));
        pass
    }

    async fn pass(&self) -> StoreResult<ReconcileReport> {
        let mut report = self.run_orders().await?;
        self.run_refunds(&mut report).await?;
        self.run_adjustments(&mut report).await?;
        Ok(report)
    }

    /// Finishes the operator's partial refunds recorded longer than the window ago and still
    /// pending (their answer was lost): asked of the provider again under the adjustment's key,
    /// which can only find or make the same refund, then recorded with their event.
    async fn run_adjustments(&self, report: &mut ReconcileReport) -> StoreResult<()> {
        let cutoff = self.now() - self.after.as_millis() as i64;
        for adjustment in self.store.adjustments_pending(cutoff, BATCH).await? {
            report.adjustments_examined += 1;
            let Some(facts) = self.store.order_facts(&adjustment.order_id).await? else { continue };
            let finished = refund::finish_adjustment(
                &self.payments,
                &self.store,
                &self.events,
                &self.clock,
                facts,
                &adjustment.id,
            );
            match finished.await {
                Ok(AdjustmentFinished::Done { changed: true, .. }) => {
                    report.adjusted += 1;
                    tracing::info!(
                        order = adjustment.order_id,
                        adjustment = adjustment.id,
                        "reconcile: partial refund finished"
                    );
                }
                Ok(AdjustmentFinished::Done { changed: false, .. }) => {}
                Ok(AdjustmentFinished::Unavailable) => report.unreachable += 1,
                Ok(AdjustmentFinished::Busy) => {
                    report.conflicts += 1;
                    tracing::error!(
                        order = adjustment.order_id,
                        adjustment = adjustment.id,
                        "reconcile: a partial refund could not be finished: the order kept changing"
                    );
                }
                Ok(AdjustmentFinished::Failed(e)) => {
                    report.conflicts += 1;
                    tracing::error!(
                        order = adjustment.order_id,
                        adjustment = adjustment.id,
                        error = e,
                        "reconcile: a partial refund could not be finished"
                    );
                }
                Err(e) => {
                    report.conflicts += 1;
                    tracing::error!(order = adjustment.order_id, adjustment = adjustment.id, error = %e, "reconcile: a partial refund could not be finished");
                }
            }
        }
        Ok(())
    }

    /// Finishes the refunds recorded longer than the window ago and still pending.
    async fn run_refunds(&self, report: &mut ReconcileReport) -> StoreResult<()> {
        let cutoff = self.now() - self.after.as_millis() as i64;
        for refund in self.store.refunds_pending(cutoff, BATCH).await? {
            report.refunds_examined += 1;
            let Some(order) = self.store.order_by_id(&refund.order_id).await? else { continue };
            match refund::ask(&self.payments, &order, &refund).await {
                Refunded::Done(provider_refund) => {
                    let now = self.now();
                    let (cancelled, refunded) = refund::succeeded(&order, &refund, &provider_refund, now);
                    let event = refund::cancelled_event(&self.store, &self.events, cancelled, refunded).await?;
                    self.store.settle_refund(&order.id, &provider_refund, event.as_ref(), now).await?;
                    report.refunded += 1;
                    tracing::info!(
                        order = order.id,
                        refund = provider_refund,
                        "reconcile: order cancelled and refunded"
                    );
                }
                Refunded::Unavailable(_) => report.unreachable += 1,
                Refunded::Failed(e) => {
                    report.conflicts += 1;
                    tracing::error!(order = order.id, error = e, "reconcile: the refund could not be finished");
                }
            }
        }
        Ok(())
    }

    async fn run_orders(&self) -> StoreResult<ReconcileReport> {
        let mut report = ReconcileReport::default();
        let mut after = (i64::MIN, String::new());
        loop {
            let now = self.now();
            let cutoff = now - self.after.as_millis() as i64;
            let batch = self.store.orders_to_reconcile(cutoff, now, (after.0, &after.1), BATCH).await?;
            for order in &batch {
                self.reconcile_order(order, &mut report).await?;
            }
            match batch.last() {
                Some(last) if batch.len() as i64 == BATCH => after = (last.created_at_ms, last.id.clone()),
                _ => return Ok(report),
            }
        }
    }

    async fn reconcile_order(&self, order: &Order, report: &mut ReconcileReport) -> StoreResult<()> {
        report.examined += 1;
        match self.settler().settle(order).await {
            Ok(Settled::Paid) => report.paid += 1,
            Ok(Settled::Declined) => report.declined += 1,
            Ok(Settled::Abandoned) => report.abandoned += 1,
            Ok(Settled::InFlight) => report.in_flight += 1,
            Ok(Settled::AwaitingAuthentication) => report.awaiting_authentication += 1,
            Ok(Settled::Conflict) => report.conflicts += 1,
            // Settled meanwhile by someone else (a webhook, a retry, another replica).
            Ok(Settled::Unchanged) => {}
            Err(SettleError::Store(e)) => return Err(e),
            Err(SettleError::Provider(PaymentError::Unavailable(detail))) => {
                report.unreachable += 1;
                tracing::warn!(order = order.id, detail, "reconcile: the payment provider did not answer");
            }
            Err(SettleError::Provider(e)) => {
                report.conflicts += 1;
                tracing::error!(order = order.id, error = ?e, "reconcile: the provider's charge is not one we know");
            }
        }
        Ok(())
    }

    fn settler(&self) -> Settler {
        Settler {
            store: self.store.clone(),
            payments: self.payments.clone(),
            clock: self.clock.clone(),
            events: self.events.clone(),
        }
    }
}

/// What settling one pending order did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// Charged at the provider: now paid.
    Paid,
    /// Declined at the provider (or its authentication failed, or its window ended and the
    /// payment was cancelled): declined, stock released.
    Declined,
    /// Never charged: declined as abandoned.
    Abandoned,
    /// A charge request still being processed: left for later.
    InFlight,
    /// Waiting for the person's bank, inside its window: left alone.
    AwaitingAuthentication,
    /// The provider's charge does not match the order: left for an operator (logged).
    Conflict,
    /// Nothing to do: the order was settled meanwhile (or a charge request may still be in
    /// flight for it, so giving it up now would be premature).
    Unchanged,
}

#[derive(Debug)]
pub enum SettleError {
    Store(giftgenius_commerce::store::StoreError),
    Provider(PaymentError),
}

impl From<giftgenius_commerce::store::StoreError> for SettleError {
    fn from(e: giftgenius_commerce::store::StoreError) -> Self {
        Self::Store(e)
    }
}

/// Settles one pending order on the provider's word: what the reconciler does for each order,
/// what a verified Stripe webhook does with the PaymentIntent it carries, and what the hosted
/// authentication page asks for after the person confirmed. Every step is a compare-and-set on
/// the pending order, so any number of them at once settle it once.
#[derive(Debug, Clone)]
pub struct Settler {
    pub store: Store,
    pub payments: Arc<Payments>,
    pub clock: Clock,
    pub events: Arc<giftgenius_commerce::outbox::OrderEvents>,
}

/// The provider's idempotency key for refunding a charge that landed on an order already
/// declined (or abandoned) here: one such refund per order, whoever asks.
pub fn late_refund_key(order_id: &str) -> String {
    format!("ggl_{order_id}")
}

/// The reason recorded (and shown to the buyer) on that refund.
const LATE_REFUND_REASON: &str = "Charged after the payment was declined; refunded in full";

/// Rounds of reading an order's facts and recording its late charge's refund.
const LATE_REFUND_ATTEMPTS: usize = 5;

impl Settler {
    fn now(&self) -> i64 {
        self.clock.now_ms()
    }

    /// `charge` succeeded at the provider for order `order_id`, which is already declined (or
    /// abandoned) here: its buyer was told nothing was charged and its stock was released, so
    /// the money goes back rather than the order coming back. Refunded in full under
    /// [`late_refund_key`] (a retry finds the same refund: the provider looks for it by key
    /// before refunding), then recorded once as the order's adjustment (that key, the
    /// provider's refund id) with its `order_update` event; the order stays declined. What was
    /// done, for the webhook's record.
    pub async fn refund_late_charge(&self, order_id: &str, charge: &Charge) -> Result<String, SettleError> {
        let key = late_refund_key(order_id);
        for _ in 0..LATE_REFUND_ATTEMPTS {
            let Some(facts) = self.store.order_facts(order_id).await? else { return Ok("unchanged: no order".into()) };
            if facts.order.status != OrderStatusColumn::PaymentDeclined {
                return Ok(format!("unchanged: {}", facts.order.status.as_str()));
            }
            if facts.adjustments.iter().any(|a| a.operator_key == key) {
                return Ok("unchanged: the late charge is refunded already".into());
            }
            tracing::error!(order = order_id, charge = charge.id, "charged for a declined order: refunding it in full");
            let refund = self.payments.refund(&key, &charge.id, charge.amount).await.map_err(SettleError::Provider)?;
            let now = self.now();
            let adjustment = facts.adjustment(&key, charge.amount.amount_minor, LATE_REFUND_REASON, Some(&refund), now);
            let after = facts.with_adjustment(adjustment.clone());
            let event = self.events.adjustment_event(&after, &adjustment.id).await?;
            if self.store.record_provider_refund(&facts, &adjustment, event.as_ref(), now).await? {
                tracing::warn!(order = order_id, refund, "a charge made after the order was declined is refunded");
                return Ok("refunded: charged after the order was declined".into());
            }
        }
        Err(SettleError::Store(giftgenius_commerce::store::StoreError::Inconsistent(format!(
            "order {order_id} kept changing while recording its late charge's refund"
        ))))
    }

    /// Asks the provider what happened to `order`'s charge (its recorded payment, else under its
    /// key) and settles it.
    pub async fn settle(&self, order: &Order) -> Result<Settled, SettleError> {
        let asked_at = self.now();
        let key = provider_key(&order.id);
        let charge = OrderCharge {
            key: &key,
            order_id: &order.id,
            subject: &order.subject,
            payment: order.payment_ref.as_deref(),
        };
        let lookup = self.payments.lookup(charge).await.map_err(SettleError::Provider)?;
        self.apply(order, lookup, asked_at).await
    }

    /// Settles `order` with what the provider said at `asked_at` (a lookup, or a verified
    /// webhook's object).
    pub async fn apply(&self, order: &Order, lookup: Lookup, asked_at: i64) -> Result<Settled, SettleError> {
        if order.status != OrderStatusColumn::PendingPayment {
            return Ok(Settled::Unchanged);
        }
        // The answer stored for the order's keys is what their call would have answered.
        let call = CallContext::new(ToolName::CommitOrder, order.subject.clone(), DEFAULT_LOCALE);
        let reference = call.reference.as_str();
        match lookup {
            Lookup::Processing => Ok(Settled::InFlight),
            Lookup::AwaitingAuthentication { payment } => {
                let until = order.authentication_until_ms.unwrap_or(i64::MIN);
                if self.now() < until {
                    return Ok(Settled::AwaitingAuthentication);
                }
                // The window ended: cancel the payment at the provider first, so no late
                // confirmation can charge an order we give up; settle on what cancelling says.
                let cancelled = self.payments.cancel_payment(&payment).await.map_err(SettleError::Provider)?;
                tracing::info!(order = order.id, "authentication window over: payment cancelled at the provider");
                Box::pin(self.apply(order, cancelled, asked_at)).await
            }
            Lookup::Succeeded(charge) if charge.amount != order.total() => {
                tracing::error!(
                    order = order.id,
                    charge = charge.id,
                    charged = charge.amount.display(),
                    total = order.total().display(),
                    "the provider charged another amount than the order's; left pending for an operator"
                );
                Ok(Settled::Conflict)
            }
            Lookup::Succeeded(charge) => {
                let paid_at = self.now();
                let Changed { order: paid, change } = order.clone().paid(&charge.id, paid_at);
                let result: Result<Answer<OrderData>, ToolError> =
                    Ok(Answer::new(OrderData { order: order_of(&paid)? }));
                let stored = stored_answer(&call, &result)?;
                let event = self.events.event(&OrderFacts::of(paid.clone()), change).await?;
                let paid = Settlement::Paid { charge_id: &charge.id, event: event.as_ref() };
                let by = SettledBy::Provider { asked_at_ms: asked_at };
                if self.store.settle(&order.id, paid, by, &stored, paid_at).await? == Fenced::Written(true) {
                    tracing::info!(
                        order = order.id,
                        charge = charge.id,
                        reference,
                        "order paid on the provider's word"
                    );
                    return Ok(Settled::Paid);
                }
                Ok(Settled::Unchanged)
            }
            Lookup::Declined | Lookup::NotFound => {
                // A payment the person might still confirm (a failed 3-D Secure can be retried
                // on the page) is cancelled first: a declined order is never charged later.
                if order.payment_ref.is_some() {
                    match self.payments.release(order.payment_ref.as_deref()).await.map_err(SettleError::Provider)? {
                        Lookup::Declined => {}
                        charged_after_all => return Box::pin(self.apply(order, charged_after_all, asked_at)).await,
                    }
                }
                let (answer, settled) = match lookup {
                    Lookup::NotFound => (abandoned(&call), Settled::Abandoned),
                    _ => (declined(&call), Settled::Declined),
                };
                let stored = stored_answer::<OrderData>(&call, &Err(answer))?;
                let by = SettledBy::Provider { asked_at_ms: asked_at };
                if self.store.settle(&order.id, Settlement::Declined, by, &stored, self.now()).await?
                    == Fenced::Written(true)
                {
                    tracing::info!(order = order.id, reference, outcome = ?settled, "order given up on the provider's word");
                    return Ok(settled);
                }
                Ok(Settled::Unchanged)
            }
        }
    }
}
