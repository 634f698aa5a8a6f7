//! `POST /webhooks/stripe` (issue 26 item 4): Stripe's word about a payment, applied once.
//!
//! Only with `--payments stripe` and `--stripe-webhook-secret-file` (otherwise the path is a
//! bare 404). Each delivery is, in order:
//! 1. bounded ([`MAX_BODY_BYTES`]; larger is 413) and verified: `Stripe-Signature` against every
//!    secret of the file (one a line, several while one is rotated), its timestamp within
//!    `--stripe-webhook-tolerance-secs` of now either way (`signature.rs`: one MAC per secret,
//!    at most 8 `v1` entries in at most 1 KiB, so an unsigned request costs a bounded amount of
//!    CPU; the server's head limits in `http/serve.rs` bound the header before it gets here).
//!    A forged, malformed or stale delivery is **400** and changes nothing: what Stripe documents for a signature
//!    that does not verify. Stripe retries a non-2xx delivery for up to three days and then
//!    gives up; a forged one is not Stripe's, and a stale one cannot verify later either.
//! 2. deduplicated by event id (`stripe_events`): an event applied before is **200** and changes
//!    nothing (Stripe delivers at least once, and retries when our answer was lost).
//! 3. applied, then recorded with what it did, **200**:
//!    - `payment_intent.succeeded` / `payment_intent.payment_failed`: the order named by the
//!      PaymentIntent's `metadata[order_id]`, checked against the order (its recorded payment or
//!      charge, its account's Customer, its total), is settled by the same compare-and-set steps
//!      as the reconciler (`reconcile::Settler`): paid, declined (the PaymentIntent cancelled
//!      first), or left waiting (a 3-D Secure `authentication_required` is not a decline); a
//!      `succeeded` one for an order already declined here is refunded in full at Stripe
//!      (`Settler::refund_late_charge`): the buyer was told nothing was charged;
//!    - `charge.refunded`: the refunds Stripe lists for the charge's PaymentIntent that do not
//!      carry our `giftgenius_refund_key` (ours are recorded by the flows that made them) are
//!      recorded once each as the order's adjustments (`stripe:<refund id>`), with their event;
//!      one that covers all that is left of an order not shipped yet is its cancellation (the
//!      order `cancelled`, the refund its `refunds` row), as the operator's refund of everything
//!      left is;
//!    - any other type, or an object that names no order of ours: recorded as ignored, logged.
//!
//!    When applying cannot finish (the database or Stripe unreachable) the answer is **500** and
//!    nothing is recorded, so Stripe's retry applies it later.
//!
//! Webhooks come from Stripe's servers: no `Origin`, our public host in `Host`. The Host check
//! guards `/mcp` only (rmcp's allowed hosts) and CORS only answers browsers, so neither refuses
//! them; nothing else is opened by this route.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, post};
use serde::Deserialize;
use serde_json::json;

use crate::checkout::reconcile::{SettleError, Settled, Settler};
use giftgenius_commerce::order::Changed;
use giftgenius_commerce::payments::Lookup;
use giftgenius_commerce::payments::PaymentError;
use giftgenius_commerce::payments::stripe::wire::{self, IdOr};
use giftgenius_commerce::payments::stripe::{self, Listed, lookup_of};
use giftgenius_commerce::store::{OrderFacts, OrderStatusColumn, StoreError};

/// The route's path.
pub const PATH: &str = "/webhooks/stripe";
/// The largest delivery read: Stripe's payment events are a few KiB.
pub const MAX_BODY_BYTES: usize = 256 * 1024;
/// The reason recorded on a refund made in Stripe's dashboard (shown to the buyer).
const OUTSIDE_REFUND_REASON: &str = "Refunded by the merchant";
/// Rounds of reading an order's facts and writing an outside refund before giving up (500).
const ATTEMPTS: usize = 5;

/// What the webhook route needs.
pub struct StripeWebhooks {
    secrets: Vec<String>,
    tolerance_s: i64,
    settler: Settler,
}

impl std::fmt::Debug for StripeWebhooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StripeWebhooks").field("secrets", &self.secrets.len()).finish_non_exhaustive()
    }
}

/// The signing secrets in `file`: every non-empty line (`whsec_…`), several while one rotates.
pub fn read_secrets(file: &Path) -> anyhow::Result<Vec<String>> {
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let secrets: Vec<String> = text.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect();
    if secrets.is_empty() || secrets.iter().any(|s| !s.starts_with("whsec_") || s.len() < 10) {
        anyhow::bail!("{} must hold Stripe webhook signing secrets (whsec_…), one a line", file.display());
    }
    Ok(secrets)
}

impl StripeWebhooks {
    pub fn new(secrets: Vec<String>, tolerance_s: u64, settler: Settler) -> Self {
        Self { secrets, tolerance_s: i64::try_from(tolerance_s).unwrap_or(i64::MAX), settler }
    }
}

/// The route, when webhooks are configured; otherwise [`absent`].
pub fn router(hooks: Option<Arc<StripeWebhooks>>) -> Router {
    match hooks {
        Some(hooks) => Router::new()
            .route(PATH, post(receive))
            .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
            .with_state(hooks)
            .merge(absent_rest()),
        None => absent(),
    }
}

/// Every `/webhooks/…` path answers a bare 404 (not the `/mcp` fallback's answer).
fn absent() -> Router {
    Router::new().route(PATH, any(|| async { StatusCode::NOT_FOUND })).merge(absent_rest())
}

fn absent_rest() -> Router {
    Router::new().route("/webhooks/{*rest}", any(|| async { StatusCode::NOT_FOUND }))
}

/// The parts of an event we read.
#[derive(Debug, Deserialize)]
struct Event {
    id: String,
    #[serde(rename = "type")]
    kind: String,
    data: EventData,
}

#[derive(Debug, Deserialize)]
struct EventData {
    object: serde_json::Value,
}

fn answer(status: StatusCode, body: serde_json::Value) -> Response {
    (status, axum::Json(body)).into_response()
}

async fn receive(State(hooks): State<Arc<StripeWebhooks>>, headers: HeaderMap, body: Bytes) -> Response {
    let Some(header) = headers.get("stripe-signature").and_then(|v| v.to_str().ok()) else {
        tracing::warn!("stripe webhook without a Stripe-Signature header refused");
        return answer(StatusCode::BAD_REQUEST, json!({"error": "signature"}));
    };
    let now_s = hooks.settler.clock.now_ms().div_euclid(1000);
    if let Err(refused) = stripe::signature::verify(header, &body, &hooks.secrets, now_s, hooks.tolerance_s) {
        tracing::warn!(reason = ?refused, "stripe webhook refused: its signature does not verify");
        return answer(StatusCode::BAD_REQUEST, json!({"error": "signature"}));
    }
    let event: Event = match serde_json::from_slice(&body) {
        Ok(event) => event,
        Err(_) => {
            tracing::warn!("a signed stripe webhook is not an event");
            return answer(StatusCode::BAD_REQUEST, json!({"error": "event"}));
        }
    };
    let store = &hooks.settler.store;
    match store.stripe_event(&event.id).await {
        Ok(Some(outcome)) => {
            tracing::info!(event = event.id, kind = event.kind, outcome, "stripe webhook replayed; nothing changes");
            return answer(StatusCode::OK, json!({"received": true, "duplicate": true}));
        }
        Ok(None) => {}
        Err(e) => return failed(&event, &e),
    }
    let outcome = match hooks.apply(&event).await {
        Ok(outcome) => outcome,
        Err(Failure::Store(e)) => return failed(&event, &e),
        Err(Failure::Provider(e)) => return failed(&event, &format!("{e:?}")),
    };
    match store.record_stripe_event(&event.id, &event.kind, &outcome, hooks.settler.clock.now_ms()).await {
        Ok(_) => {
            tracing::info!(event = event.id, kind = event.kind, outcome, "stripe webhook applied");
            answer(StatusCode::OK, json!({"received": true}))
        }
        Err(e) => failed(&event, &e),
    }
}

/// 500: not applied (or not recorded), so Stripe delivers it again later.
fn failed(event: &Event, e: &(dyn std::fmt::Display + Sync)) -> Response {
    tracing::warn!(event = event.id, kind = event.kind, error = %e, "stripe webhook not applied; Stripe will retry");
    answer(StatusCode::INTERNAL_SERVER_ERROR, json!({"error": "retry"}))
}

enum Failure {
    Store(StoreError),
    Provider(PaymentError),
}

impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

impl From<SettleError> for Failure {
    fn from(e: SettleError) -> Self {
        match e {
            SettleError::Store(e) => Self::Store(e),
            SettleError::Provider(e) => Self::Provider(e),
        }
    }
}

/// What was recorded for an event that names nothing of ours.
fn ignored(why: &str) -> Result<String, Failure> {
    Ok(format!("ignored: {why}"))
}

impl StripeWebhooks {
    async fn apply(&self, event: &Event) -> Result<String, Failure> {
        match event.kind.as_str() {
            "payment_intent.succeeded" | "payment_intent.payment_failed" => self.payment_intent(event).await,
            "charge.refunded" => self.charge_refunded(event).await,
            other => {
                tracing::info!(event = event.id, kind = other, "stripe webhook of a type we do not use; ignored");
                ignored("type")
            }
        }
    }

    async fn payment_intent(&self, event: &Event) -> Result<String, Failure> {
        let Ok(listed) = serde_json::from_value::<Listed>(event.data.object.clone()) else {
            return ignored("not a PaymentIntent");
        };
        let intent = &listed.intent;
        let Some(order_id) = intent.metadata.get(stripe::ORDER_ID) else { return ignored("no order id") };
        let Some(order) = self.settler.store.order_by_id(order_id).await? else { return ignored("no such order") };
        // The PaymentIntent must be the order's: its recorded payment or charge, its account's
        // Customer. (Signed by Stripe, but the metadata is only as good as who wrote it.)
        let recorded = order.payment_ref.as_deref().or(order.charge_id.as_deref());
        let customer = self.settler.store.stripe_customer(&order.subject).await?;
        if recorded.is_some_and(|r| r != intent.id) || listed.customer.is_none() || listed.customer != customer {
            tracing::error!(
                order = order.id,
                payment = intent.id,
                "a PaymentIntent names an order that is not its own"
            );
            return Ok("conflict: not the order's payment".into());
        }
        if order.status != OrderStatusColumn::PendingPayment {
            if order.status == OrderStatusColumn::PaymentDeclined
                && let Ok(Lookup::Succeeded(charge)) = lookup_of(intent)
            {
                // The buyer was told nothing was charged, and the stock is gone: make that true.
                return Ok(self.settler.refund_late_charge(&order.id, &charge).await?);
            }
            return Ok(format!("unchanged: {}", order.status.as_str()));
        }
        let lookup = match lookup_of(intent) {
            Ok(lookup) => lookup,
            Err(_) => return Ok("conflict: unreadable PaymentIntent".into()),
        };
        let settled = self.settler.apply(&order, lookup, self.settler.clock.now_ms()).await?;
        Ok(match settled {
            Settled::Paid => "paid",
            Settled::Declined => "declined",
            Settled::Abandoned => "abandoned",
            Settled::InFlight => "unchanged: in flight",
            Settled::AwaitingAuthentication => "unchanged: awaiting authentication",
            Settled::Conflict => "conflict: another amount",
            Settled::Unchanged => "unchanged",
        }
        .to_string())
    }

    async fn charge_refunded(&self, event: &Event) -> Result<String, Failure> {
        let Ok(charge) = serde_json::from_value::<wire::Charge>(event.data.object.clone()) else {
            return ignored("not a Charge");
        };
        let payment = match &charge.payment_intent {
            Some(IdOr::Id(id)) => id.clone(),
            Some(IdOr::Object(intent)) => intent.id.clone(),
            None => return ignored("a charge without a PaymentIntent"),
        };
        let store = &self.settler.store;
        let Some(order) = store.order_by_charge(&payment).await? else { return ignored("no such order") };
        if order.charge_id.as_deref() != Some(payment.as_str()) {
            return Ok("unchanged: the order is not paid with it".into());
        }
        // Stripe's list, not the event's copy: complete, current, with our keys in the metadata.
        let refunds = self.settler.payments.refunds_of(&payment).await.map_err(Failure::Provider)?;
        let mut recorded = 0;
        for refund in refunds.iter().filter(|r| r.key.is_none()) {
            if self.record_outside_refund(&order.id, &refund.id, refund.amount_minor).await? {
                recorded += 1;
            }
        }
        tracing::info!(charge = charge.id, payment, recorded, "charge.refunded applied");
        Ok(format!("refunds recorded: {recorded}"))
    }

    /// Records refund `refund_id` of `amount_minor`, made at Stripe outside our tools, as an
    /// adjustment of order `order_id` (once: its key is the refund's id). True if recorded now.
    async fn record_outside_refund(&self, order_id: &str, refund_id: &str, amount_minor: i64) -> Result<bool, Failure> {
        let key = format!("stripe:{refund_id}");
        let store = &self.settler.store;
        for _ in 0..ATTEMPTS {
            let Some(facts) = store.order_facts(order_id).await? else { return Ok(false) };
            let is_ours = |k: Option<&str>| k == Some(key.as_str());
            if facts.adjustments.iter().any(|a| is_ours(Some(&a.operator_key)))
                || is_ours(facts.refund.as_ref().and_then(|r| r.operator_key.as_deref()))
            {
                return Ok(false);
            }
            let now = self.settler.clock.now_ms();
            // All that is left of an order not shipped yet: its cancellation, as the operator's
            // refund of everything left is (`operator/refund.rs`), not a partial refund.
            if facts.refund.is_none()
                && facts.order.status.is_before_shipping()
                && amount_minor >= facts.refundable_minor()
            {
                let refund = facts.order.cancellation(amount_minor, Some(&key), Some(refund_id), now);
                let Changed { order, change } = facts.order.clone().cancelled(now);
                let after = OrderFacts { order, refund: Some(refund.clone()), adjustments: facts.adjustments.clone() };
                let event = self.settler.events.event(&after, change).await?;
                if store.record_provider_cancellation(&facts, &refund, event.as_ref(), now).await? {
                    tracing::info!(order = order_id, refund = refund_id, "a refund made at Stripe cancels the order");
                    return Ok(true);
                }
                continue;
            }
            let adjustment = facts.adjustment(&key, amount_minor, OUTSIDE_REFUND_REASON, Some(refund_id), now);
            let after = facts.with_adjustment(adjustment.clone());
            let event = self.settler.events.adjustment_event(&after, &adjustment.id).await?;
            if store.record_provider_refund(&facts, &adjustment, event.as_ref(), now).await? {
                tracing::info!(order = order_id, refund = refund_id, "a refund made at Stripe is recorded");
                return Ok(true);
            }
        }
        Err(Failure::Store(StoreError::Inconsistent(format!(
            "order {order_id} kept changing while recording a refund"
        ))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use giftgenius_commerce::payments::stripe::signature::{sign, verify};

    #[test]
    fn the_secret_file_holds_one_secret_a_line_and_any_of_them_verifies() {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), "whsec_old_one\n\n  whsec_new_one  \n").unwrap();
        let secrets = read_secrets(file.path()).unwrap();
        assert_eq!(secrets, vec!["whsec_old_one".to_string(), "whsec_new_one".to_string()]);
        let body = br#"{"id":"evt_1"}"#;
        for secret in &secrets {
            assert!(verify(&sign(secret, 1_780_000_000, body), body, &secrets, 1_780_000_000, 300).is_ok());
        }
        for wrong in ["", "\n\n", "sk_test_not_a_webhook_secret\n", "whsec_ok_one\nnot_a_secret\n"] {
            std::fs::write(file.path(), wrong).unwrap();
            let refused = read_secrets(file.path()).unwrap_err().to_string();
            assert!(!refused.contains("sk_test") && !refused.contains("not_a_secret"), "{refused}");
        }
    }
}
