//! Saved cards on the confirm card, with Stripe (`--payments stripe`): which card a Confirm
//! charges and the hosted card page's link, in `prepare_order`'s (and `reopen_order_draft`'s)
//! widget-only `_meta` ([`META_PAYMENT_CARD`]); and `remove_saved_card` (app-only), which
//! detaches the caller's cards at Stripe and shows the draft again. With the sandbox provider
//! none of this exists: no `_meta`, and the tool only shows the draft again.

use giftgenius_types::wire::META_PAYMENT_CARD;
use giftgenius_types::{ErrorCode, PrepareOrderData, RemoveSavedCardInput, ReopenOrderDraftInput, ToolError};
use serde_json::{Map, Value, json};

use super::Checkout;
use super::card_links::CardLinks;
use crate::context::CallContext;
use crate::error::internal;
use crate::outcome::{Answer, Outcome};
use giftgenius_commerce::payments::PaymentError;
use giftgenius_commerce::store::Usage;

/// What the hosted card page needs besides the Stripe client: its links, the publishable key
/// Stripe.js takes, and where Stripe.js is (the page's CSP names its origin).
#[derive(Debug)]
pub struct CardPage {
    pub links: CardLinks,
    pub publishable_key: String,
    pub js_url: String,
}

impl Checkout {
    /// `answer` with the card a Confirm would charge and the card page's link, when Stripe
    /// charges. Stripe not answering leaves them out (the card then shows neither): a draft is
    /// never refused for it, and a Confirm still asks Stripe itself.
    pub(super) async fn with_payment_card(
        &self,
        call: &CallContext,
        answer: Answer<PrepareOrderData>,
    ) -> Answer<PrepareOrderData> {
        let (Some(stripe), Some(page)) = (self.payments.stripe_cards(), self.card_page.as_deref()) else {
            return answer;
        };
        let looked_up = self
            .payments
            .within("the saved card", async {
                let customer = stripe.customer_for(&call.subject).await?;
                Ok((stripe.card_to_charge(&customer).await?, customer))
            })
            .await;
        if !self.remember_account_name(call).await {
            return answer;
        }
        match looked_up {
            Ok((card, customer)) => {
                let card = card.map(|c| json!({ "brand": c.brand, "last4": c.last4 })).unwrap_or(Value::Null);
                answer.with_widget_meta(META_PAYMENT_CARD, self.payment_card(page, &customer, card))
            }
            Err(e) => {
                tracing::warn!(reference = call.reference, error = ?e, "saved card not shown: Stripe did not answer");
                answer
            }
        }
    }

    /// The payment card `_meta` the widget reads (`CardOnFile`): `card`, the card a Confirm
    /// charges (`null`: none), and the card page's link for `customer`, minted now.
    fn payment_card(&self, page: &CardPage, customer: &str, card: Value) -> Value {
        json!({ "card": card, "add_url": page.links.url(customer, self.now()) })
    }

    /// `NO_SAVED_CARD`, with the card page's link in the widget-only `_meta` as the confirm card
    /// has it (the error view offers Add a card). Stripe not answering, or no account name to
    /// show on the page, leaves the link out; the error stands.
    pub(super) async fn no_saved_card<T>(&self, call: &CallContext) -> Outcome<T> {
        let error = ToolError::new(
            ErrorCode::NoSavedCard,
            "No card is saved for this account, so nothing was charged. The user adds one with Add a card in the \
             widget, then presses Confirm again.",
            &call.reference,
        );
        let mut meta = Map::new();
        if let (Some(stripe), Some(page)) = (self.payments.stripe_cards(), self.card_page.as_deref()) {
            match self.payments.within("the Stripe customer", stripe.customer_for(&call.subject)).await {
                Ok(customer) if self.remember_account_name(call).await => {
                    meta.insert(META_PAYMENT_CARD.into(), self.payment_card(page, &customer, Value::Null));
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(reference = call.reference, error = ?e, "no Add a card link: Stripe did not answer")
                }
            }
        }
        Outcome::error_with_meta(error, meta)
    }

    /// Records what the caller signed in as, for the card page to show whose account a card is
    /// saved to ([`crate::http::card_page`]): before any card page link for the account is
    /// handed out. False (logged) when it could not be recorded: then no link is given.
    pub(super) async fn remember_account_name(&self, call: &CallContext) -> bool {
        let Some(name) = call.account_name.as_deref() else {
            tracing::warn!(reference = call.reference, "no account name to show on the card page; no link");
            return false;
        };
        match self.store.keep_account_name(&call.subject, name, self.now()).await {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(reference = call.reference, error = %e, "the account name was not recorded; no link");
                false
            }
        }
    }

    /// Counted against `--hourly-payment-lookup-limit` once (the draft it shows again included).
    pub async fn remove_saved_card(
        &self,
        call: &CallContext,
        input: &RemoveSavedCardInput,
    ) -> Outcome<PrepareOrderData> {
        if let Err(error) = self.limits.take(call, Usage::PaymentLookups).await {
            return Err::<Answer<PrepareOrderData>, _>(error).into();
        }
        if let Some(stripe) = self.payments.stripe_cards() {
            let removed = self.payments.within("removing the card", stripe.remove_cards(&call.subject)).await;
            match removed {
                Ok(count) => tracing::info!(reference = call.reference, count, "saved cards detached"),
                Err(PaymentError::Unavailable(detail)) => {
                    tracing::warn!(reference = call.reference, detail, "removing the card failed");
                    let message = "The card could not be removed right now; nothing changed. Try again in a moment.";
                    let error = ToolError::new(ErrorCode::PaymentProviderUnavailable, message, &call.reference);
                    return Err::<Answer<PrepareOrderData>, _>(error).into();
                }
                Err(e) => return Err::<Answer<PrepareOrderData>, _>(internal(call, &format!("{e:?}"))).into(),
            }
        }
        self.reopen(call, &ReopenOrderDraftInput { draft_id: input.draft_id.clone() }).await.into()
    }
}
