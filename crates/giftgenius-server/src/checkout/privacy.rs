//! A person's data, and how long anything personal is kept.
//!
//! `delete_my_data` (the widget's Delete my data button; `giftgenius-server delete-my-data
//! --subject S` for an operator) deletes the account's saved address, the name it signed in with
//! (shown on the card page), drafts, idempotency keys
//! (with the answers they stored) and checkout sessions, and anonymizes its orders and refunds:
//! the recipient, address, gift message, city and the link to the account are erased; what a
//! merchant must keep stays as the financial record (order id, gift, quantity, amount, currency,
//! dates, status, payment and refund ids, destination country) for
//! `--financial-retention-days`. The widget's own view state lives in the browser; the result
//! tells the widget to forget it. An order still waiting for its payment keeps its link until
//! it is settled (the money is not final yet); a later request, or the retention, erases it.
//!
//! The widget's token is spent by its first use (`--delete-token-ttl-secs`, one hour by
//! default): the spent mark (`spent_delete_tokens`, keyed by a hash of the token, naming no
//! account) is written in the deletion's own transaction, and a retry with the same token
//! answers the first use's counts and deletes nothing, so an old token replayed never takes
//! the data made since. The mark is pruned once the token has expired.
//!
//! Retention (`Retention`, applied by the hourly pruning): orders keep their personal data for
//! `--order-retention-days`, then are anonymized; anonymized orders are deleted after
//! `--financial-retention-days`, refunds after `--refund-retention-days`, and a saved address
//! nobody used for `--address-retention-days` is deleted (so is an account's name not refreshed
//! for as long).

use std::time::Duration;

use giftgenius_types::{DeleteMyDataData, DeleteMyDataInput};

use super::Checkout;
use crate::context::CallContext;
use crate::error::internal;
use crate::outcome::{Answer, ModelText, Outcome};
use giftgenius_commerce::store::{Deleted, Retained, Store, StoreResult};

/// How often expired keys, counters and data past their retention are pruned (`startup.rs`
/// runs the pass; the privacy page states it).
pub const PRUNE_EVERY: Duration = Duration::from_secs(3600);

const DAY: Duration = Duration::from_secs(24 * 3600);

/// How long orders, refunds and saved addresses are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Personal data on orders (recipient, address, gift message, account).
    pub orders_days: u64,
    /// Anonymized orders: the financial records.
    pub financial_days: u64,
    /// Refund records.
    pub refunds_days: u64,
    /// A saved address not used again.
    pub addresses_days: u64,
}

impl Retention {
    /// One pass: anonymize, then delete what outlived its retention.
    pub async fn apply(&self, store: &Store, now_ms: i64) -> StoreResult<Retained> {
        let before = |days: u64| now_ms.saturating_sub((DAY.as_millis() as i64).saturating_mul(days as i64));
        store
            .apply_retention(
                before(self.orders_days),
                before(self.financial_days),
                before(self.refunds_days),
                before(self.addresses_days),
                now_ms,
            )
            .await
    }
}

/// The tool's answer for what the store did.
pub fn report(deleted: Deleted, retention: &Retention) -> DeleteMyDataData {
    DeleteMyDataData {
        saved_addresses_deleted: deleted.saved_addresses,
        drafts_deleted: deleted.drafts,
        idempotency_keys_deleted: deleted.idempotency_keys,
        checkout_sessions_deleted: deleted.checkout_sessions,
        orders_anonymized: deleted.orders_anonymized,
        financial_records_kept: deleted.orders_anonymized + deleted.refunds_anonymized,
        financial_records_retention_days: retention.financial_days,
    }
}

impl Checkout {
    /// `delete_my_data`: only with the token list_orders gave the widget (a person's click),
    /// once: the token is spent by its first use, and a retry with it answers what that use
    /// deleted, deleting nothing made since.
    pub async fn delete_my_data(&self, call: &CallContext, input: &DeleteMyDataInput) -> Outcome<DeleteMyDataData> {
        let now = self.now();
        let verdict = self.confirmation.verify_delete(input.confirmation_token.as_deref(), &call.subject, now);
        let token = match verdict.accepted(
            call,
            "Deleting the user's data needs their click on Delete my data in the GiftGenius widget (list_orders shows it).",
            "Show the user's orders again (list_orders) so they can press Delete my data once more.",
        ) {
            Ok(token) => token,
            Err(refused) => return refused.into(),
        };
        // The account at the payment provider first (Stripe: the Customer and its saved cards),
        // so a failure there leaves the token unspent and the person's retry does it all.
        if let Err(e) = self.payments.forget_account(&call.subject).await {
            tracing::warn!(error = ?e, "could not delete the account at the payment provider; nothing deleted yet");
            return giftgenius_types::ToolError::new(
                giftgenius_types::ErrorCode::PaymentProviderUnavailable,
                "The payment provider did not answer, so nothing was deleted yet. Try Delete my data again shortly.",
                &call.reference,
            )
            .with_retry_after_ms(1000)
            .into();
        }
        match self.store.delete_personal_data_once(&call.subject, &token.spent_key, token.expires_at_ms, now).await {
            Ok(deleted) => {
                tracing::info!(
                    addresses = deleted.saved_addresses,
                    drafts = deleted.drafts,
                    keys = deleted.idempotency_keys,
                    orders_anonymized = deleted.orders_anonymized,
                    "deleted a person's data on their request"
                );
                Answer::new(report(deleted, &self.retention)).into()
            }
            Err(e) => internal(call, &e).into(),
        }
    }
}

impl ModelText for DeleteMyDataData {
    fn model_text(answer: &Answer<Self>) -> String {
        let d = &answer.data;
        format!(
            "The user's data was deleted: {} saved address(es), {} draft(s), {} stored request(s) and {} checkout link(s). \
             {} order(s) were anonymized; {} financial record(s) (amounts, dates, payment references, destination country) \
             are kept for {} days as merchants must, without their name, address, message or account.",
            d.saved_addresses_deleted,
            d.drafts_deleted,
            d.idempotency_keys_deleted,
            d.checkout_sessions_deleted,
            d.orders_anonymized,
            d.financial_records_kept,
            d.financial_records_retention_days
        )
    }
}
