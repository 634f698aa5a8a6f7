//! `create_checkout_session`: the seed's one-step hosted checkout. One gift and an
//! idempotency key give one session with a link to a page on our own server; the same key
//! gives the same session.

use giftgenius_types::wire::CHECKOUT_PATH;
use giftgenius_types::{CheckoutData, CheckoutSession, CreateCheckoutSessionInput};
use serde_json::{Map, Value};

use super::idempotency::{Lease, fingerprint};
use super::{Checkout, random_id};
use crate::context::CallContext;
use crate::outcome::{Answer, Outcome};
use giftgenius_catalog::price_in;
use giftgenius_commerce::clock::rfc3339;
use giftgenius_commerce::store::{CheckoutRow, Usage};

impl Checkout {
    pub async fn create_checkout_session(
        &self,
        call: &CallContext,
        input: &CreateCheckoutSessionInput,
        arguments: &Map<String, Value>,
    ) -> Outcome<CheckoutData> {
        // Retries of one key come back before the limit: a replay is never refused.
        let fingerprint = fingerprint(arguments);
        self.idempotency
            .keyed(call, &input.idempotency_key, &fingerprint, async |lease| {
                if let Err(error) = self.limits.take(call, Usage::CheckoutSessions).await {
                    // Not the key's answer: once the limit resets, the same key may open the session.
                    lease.release().await;
                    return error.into();
                }
                self.open_session(call, input, lease).await
            })
            .await
    }

    async fn open_session(
        &self,
        call: &CallContext,
        input: &CreateCheckoutSessionInput,
        lease: Lease,
    ) -> Outcome<CheckoutData> {
        let gift = match self.gift(call, &input.gift_id) {
            Ok(gift) => gift,
            Err(error) => return lease.answer(call, Err(error)).await,
        };
        let sold = match self.store.units_sold(&gift.id).await {
            Ok(n) => n,
            Err(e) => return lease.fail(call, &e).await.into(),
        };
        if sold >= i64::from(gift.stock) {
            return lease.answer(call, Err(self.unavailable(call, &gift, input.currency))).await;
        }
        let now = self.now();
        let row = CheckoutRow {
            id: random_id("cs"),
            subject: call.subject.clone(),
            gift_id: gift.id.to_string(),
            currency: input.currency.into(),
            amount_minor: price_in(gift.price_cents, input.currency).amount_minor,
            created_at_ms: now,
            expires_at_ms: now + self.draft_ttl.as_millis() as i64,
        };
        let checkout = CheckoutSession {
            id: row.id.clone(),
            gift_id: gift.id.to_string(),
            amount: row.amount(),
            checkout_url: format!("{}{CHECKOUT_PATH}{}", self.public_url, row.id),
            expires_at: rfc3339(row.expires_at_ms),
        };
        // With Stripe the link opens the account's card page, which shows whose account it is.
        if self.card_page.is_some() && !self.remember_account_name(call).await {
            return lease.fail(call, &"the account name for the card page was not recorded").await.into();
        }
        let result = Ok(Answer::new(CheckoutData { checkout }));
        // Fenced: a call whose lease ran out and was taken over inserts no second session for the key.
        lease
            .finish(call, result, async |fence, answer| {
                self.store.create_checkout_and_finish(fence, &row, answer, now).await
            })
            .await
    }
}
