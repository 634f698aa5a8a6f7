//! The charge step, written once for every way to pay (`commit_order` and `complete_checkout`
//! over MCP, ACP's complete): with the key's lease long enough for the whole request, the order
//! marked as being charged under the key's fence (a charging window the reconciler leaves
//! alone), the provider asked under the order's own key ([`provider_key`]), and a decline kept
//! only once the order's own provider payment, if any, is cancelled. What the caller answers
//! and writes with it (its key's answer, the order paid or declined, the event) stays with the
//! caller: [`Charged`] says what happened, in no transport's words.

use crate::order::Order;
use giftgenius_pay_api::api::PaymentToken;

use crate::clock::Clock;
use crate::failpoints::{AFTER_PAYMENT_CHARGED, Failpoints};
use crate::payments::{Charge, ChargeRequest, LEASE_MARGIN, PaymentError, Payments};
use crate::store::{ChargeStart, Fence, Fenced, Store};

/// The provider's idempotency key for an order: one order, one charge, whoever asks.
pub fn provider_key(order_id: &str) -> String {
    format!("gg_{order_id}")
}

/// What the provider is asked to charge for an order (the same text every time: the provider
/// refuses a key reused with another request).
pub fn charge_description(order: &Order) -> String {
    let lines: Vec<String> =
        order.lines().iter().map(|line| format!("{} × {}", line.quantity, line.gift_title)).collect();
    format!("GiftGenius order {}: {}", order.id, lines.join(", "))
}

/// How much of [`LEASE_MARGIN`] (clock differences between replicas, the store steps around the
/// call) the charging window an order was created with must still have beyond the charge
/// request's own end for the step to send the request without marking it again: the few
/// milliseconds between creating the order and the request come out of the margin's other half.
const MARK_AGAIN_BELOW: std::time::Duration = std::time::Duration::from_millis(LEASE_MARGIN.as_millis() as u64 / 2);

/// What the services the step needs.
pub struct ChargeStep<'a> {
    pub payments: &'a Payments,
    pub store: &'a Store,
    pub clock: &'a Clock,
    pub failpoints: &'a Failpoints,
}

/// What asking for an order's money came to.
#[derive(Debug)]
pub enum Charged {
    /// The provider charged it; `paid_at_ms` is when (the time recorded with the order).
    Paid { charge: Charge, paid_at_ms: i64 },
    /// The card was declined (and the order's own payment, if any, cancelled).
    Declined,
    /// The account has no saved card to charge (Stripe); nothing was asked of a bank. The order
    /// may be charged once a card is saved: release the key, do not settle.
    NoSavedCard,
    /// The provider refused the payment token before any money moved (its code).
    Refused(String),
    /// The card's bank asks the person to confirm (3-D Secure) the provider payment `payment`.
    AuthenticationRequired { payment: String },
    /// Paid or declined meanwhile (under another key, or by the reconciler): read the order.
    Settled,
    /// The key has a newer holder: nothing was asked; answer from what the key says now.
    Stale,
    /// Nothing is known to have moved and a retry with the same key may go through (the
    /// provider did not answer, or the lease is too short for a request now): release the key.
    Unavailable(String),
    /// A failure no retry mends by itself (the store, a provider key reused with another
    /// request): log it, release the key, answer an internal error.
    Failed(String),
}

impl ChargeStep<'_> {
    /// Charges `order` under `fence`, whose lease runs until `lease_until_ms`. `window_until_ms`:
    /// the charging window the order was created with in this same call, if it was (then it
    /// need not be marked again while it still covers the request).
    pub async fn run(
        &self,
        fence: &Fence,
        lease_until_ms: i64,
        order: &Order,
        token: Option<PaymentToken>,
        window_until_ms: Option<i64>,
    ) -> Charged {
        // The request must end (answered or timed out) while we still hold the key, so that no
        // retry takes the key over and asks the provider beside us.
        let in_flight = self.payments.timeout() + LEASE_MARGIN;
        let now = self.clock.now_ms();
        if lease_until_ms - now < in_flight.as_millis() as i64 {
            return Charged::Unavailable("the lease is too short for a charge request now".into());
        }
        let request_end = now + self.payments.timeout().as_millis() as i64;
        let marked = window_until_ms.is_some_and(|until| until - request_end >= MARK_AGAIN_BELOW.as_millis() as i64);
        if !marked {
            let needed_until = now + in_flight.as_millis() as i64;
            match self.store.begin_charge(fence, &order.id, needed_until, now).await {
                Ok(Fenced::Written(ChargeStart::Ready)) => {}
                Ok(Fenced::Written(ChargeStart::Settled)) => return Charged::Settled,
                Ok(Fenced::Stale) => return Charged::Stale,
                Err(e) => return Charged::Failed(e.to_string()),
            }
        }
        let key = provider_key(&order.id);
        let request = ChargeRequest {
            key: &key,
            order_id: &order.id,
            subject: &order.subject,
            amount: order.total(),
            description: &charge_description(order),
            token,
        };
        let charged = self.payments.charge(request).await;
        match self.payments.settled_decline(order.payment_ref.as_deref(), charged).await {
            Ok(charge) => {
                self.failpoints.hit(AFTER_PAYMENT_CHARGED);
                Charged::Paid { charge, paid_at_ms: self.clock.now_ms() }
            }
            Err(PaymentError::Declined) => Charged::Declined,
            Err(PaymentError::NoSavedCard) => Charged::NoSavedCard,
            Err(PaymentError::Refused(code)) => Charged::Refused(code),
            Err(PaymentError::AuthenticationRequired { payment }) => Charged::AuthenticationRequired { payment },
            Err(PaymentError::Unavailable(detail)) => {
                tracing::warn!(order = order.id, detail, "payment provider unavailable during a charge");
                Charged::Unavailable(detail)
            }
            Err(PaymentError::KeyMismatch) => {
                Charged::Failed(format!("provider key {key} reused with another request"))
            }
        }
    }
}
