//! `prepare_order`: check stock and price for one gift and return a draft (the same request
//! returns the same draft while it is valid), with the confirmation token in widget-only `_meta`.
//! `reopen_order_draft` (app-only): the same draft again by id, with a fresh token.
//!
//! The delivery details (recipient, address, gift message) are part of the draft: another
//! address is another draft. Without a recipient in the call, the person's saved address is
//! used if they kept one. The full details go to the widget only (`_meta`); the draft the
//! model reads says city and country. A reloaded card that lost its token asks for the draft
//! by id (`reopen_order_draft`), so the host's widget state, which the model can read, never
//! needs the details.
//!
//! A draft that knows where it goes lists every shipping option with its arrival dates
//! (`giftgenius_commerce::arrival`), and with the person's `needed_by`, which ones make it.
//! Its gift options are part of it too: the wrap (its merchant's price per gift,
//! `giftgenius_commerce::gift_wrap`, a line of the total) and the gift receipt.

use giftgenius_types::delivery::normalized_gift_message;
use giftgenius_types::wire::{META_CONFIRMATION_TOKEN, META_DELIVERY};
use giftgenius_types::{
    Currency, DeliveryDetails, DeliveryOption, ErrorCode, FieldError, FieldRule, Money, OrderDraft, PrepareOrderData,
    PrepareOrderInput, Recipient, ReopenOrderDraftInput, ToolError,
};
use serde_json::json;
use sha2::{Digest, Sha256};

use super::{Checkout, delivery_of, random_id, shipping_cost, wrap_price};
use crate::context::CallContext;
use crate::error::internal;
use crate::outcome::{Answer, Outcome};
use giftgenius_catalog::{CatalogGift, price_in};
use giftgenius_commerce::arrival;
use giftgenius_commerce::clock::rfc3339;
use giftgenius_commerce::store::{DraftRow, Usage};

impl Checkout {
    pub async fn prepare_order(&self, call: &CallContext, input: &PrepareOrderInput) -> Outcome<PrepareOrderData> {
        self.prepare(call, input).await.into()
    }

    async fn prepare(
        &self,
        call: &CallContext,
        input: &PrepareOrderInput,
    ) -> Result<Answer<PrepareOrderData>, ToolError> {
        let gift = self.gift(call, &input.gift_id)?;
        self.limits.take(call, Usage::Drafts).await?;
        let stock = i64::from(gift.stock);
        // The stock is checked in the draft's own transaction. A request refused before its
        // draft exists (delivery details, a total that overflows) is checked against the stock
        // first, so that a gift sold out answers as such whatever else is wrong.
        let (candidate, delivery) = match self.candidate(call, input, &gift).await {
            Ok(candidate) => candidate,
            Err(not_drafted) => {
                let sold = self.store.units_sold(&gift.id).await.map_err(|e| internal(call, &e))?;
                if sold + input.quantity > stock {
                    return Err(self.unavailable(call, &gift, input.currency));
                }
                return Err(not_drafted.answer(call));
            }
        };
        let now = candidate.created_at_ms;
        let row = self.store.draft_for_request(&candidate, stock, now).await.map_err(|e| internal(call, &e))?;
        let Some(row) = row else {
            return Err(self.unavailable(call, &gift, input.currency));
        };
        let answer = self.draft_answer(call, &row, &gift, delivery, now)?;
        Ok(self.with_payment_card(call, answer).await)
    }

    /// The draft `input` asks for (not stored yet), with its delivery details.
    async fn candidate(
        &self,
        call: &CallContext,
        input: &PrepareOrderInput,
        gift: &CatalogGift,
    ) -> Result<(DraftRow, Option<DeliveryDetails>), NotDrafted> {
        let quantity = u32::try_from(input.quantity).map_err(|_| NotDrafted::Failed("quantity outside u32".into()))?;
        let unit = price_in(gift.price_cents, input.currency);
        let shipping = shipping_cost(input.shipping, input.currency);
        let wrap = match (input.gift_wrap, wrap_price(gift, input.currency)) {
            (false, _) => None,
            (true, Some(price)) => Some(price.times(quantity).ok_or_else(|| {
                NotDrafted::Failed(format!("gift wrap overflows: {} × {quantity}", price.amount_minor))
            })?),
            (true, None) => {
                return Err(NotDrafted::Refused(ToolError::validation(
                    vec![FieldError::new(
                        "gift_wrap",
                        format!(
                            "{} does not gift-wrap; leave gift_wrap out (a gift message and a gift receipt are still possible)",
                            gift.merchant.name
                        ),
                    )],
                    &call.reference,
                )));
            }
        };
        let total = unit
            .times(quantity)
            .and_then(|subtotal| {
                let total = subtotal
                    .amount_minor
                    .checked_add(shipping.amount_minor)?
                    .checked_add(wrap.map_or(0, |w| w.amount_minor))?;
                Some((subtotal, total))
            })
            .map(|(subtotal, total)| (subtotal, Money::new(total, input.currency)));
        let Some((subtotal, total)) = total else {
            return Err(NotDrafted::Failed(format!(
                "order total overflows: {} × {quantity} + shipping + wrap",
                unit.amount_minor
            )));
        };
        let delivery = self.delivery(call, input).await?;
        let delivery_json = delivery
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| NotDrafted::Failed(format!("delivery not serializable: {e}")))?;
        let now = self.now();
        let draft_key = hex::encode(Sha256::digest(
            format!(
                "{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}",
                gift.id,
                quantity,
                input.shipping.as_str(),
                input.currency,
                delivery_json.as_deref().unwrap_or(""),
                input.needed_by.as_deref().unwrap_or(""),
                input.gift_wrap,
                input.gift_receipt
            )
            .as_bytes(),
        ));
        let candidate = DraftRow {
            id: random_id("drf"),
            subject: call.subject.clone(),
            draft_key,
            gift_id: gift.id.to_string(),
            quantity: i64::from(quantity),
            shipping: input.shipping.into(),
            currency: input.currency.into(),
            subtotal_minor: subtotal.amount_minor,
            shipping_minor: shipping.amount_minor,
            total_minor: total.amount_minor,
            created_at_ms: now,
            expires_at_ms: now + self.draft_ttl.as_millis() as i64,
            delivery: delivery_json,
            needed_by: input.needed_by.clone(),
            gift_wrap_minor: wrap.map(|w| w.amount_minor),
            gift_receipt: i64::from(input.gift_receipt),
        };
        Ok((candidate, delivery))
    }

    /// Counted against `--hourly-payment-lookup-limit` (with Stripe it asks for the saved card).
    pub async fn reopen_order_draft(
        &self,
        call: &CallContext,
        input: &ReopenOrderDraftInput,
    ) -> Outcome<PrepareOrderData> {
        if let Err(error) = self.limits.take(call, Usage::PaymentLookups).await {
            return Err::<Answer<PrepareOrderData>, _>(error).into();
        }
        self.reopen(call, input).await.into()
    }

    /// The caller's live draft `draft_id` as prepare_order returned it, with a fresh token; no
    /// other effect. Expired, pruned, never made, or another person's: the same DRAFT_EXPIRED,
    /// so the answer never tells whether someone else's draft exists.
    pub(super) async fn reopen(
        &self,
        call: &CallContext,
        input: &ReopenOrderDraftInput,
    ) -> Result<Answer<PrepareOrderData>, ToolError> {
        let now = self.now();
        let row = self.store.draft(&call.subject, &input.draft_id).await.map_err(|e| internal(call, &e))?;
        let Some(row) = row.filter(|row| row.expires_at_ms > now) else {
            return Err(ToolError::new(
                ErrorCode::DraftExpired,
                format!(
                    "Draft {} has expired or no longer exists; the user chooses the gift again for a fresh one.",
                    input.draft_id
                ),
                &call.reference,
            ));
        };
        let gift = self.gift(call, &row.gift_id)?;
        let delivery = delivery_of(row.delivery.as_deref()).map_err(|e| internal(call, &e))?;
        let answer = self.draft_answer(call, &row, &gift, delivery, now)?;
        Ok(self.with_payment_card(call, answer).await)
    }

    /// A stored draft as the contract shows it: the model's part (city and country), and the
    /// widget's (a fresh confirmation token, the full delivery details) in `_meta`.
    fn draft_answer(
        &self,
        call: &CallContext,
        row: &DraftRow,
        gift: &CatalogGift,
        delivery: Option<DeliveryDetails>,
        now: i64,
    ) -> Result<Answer<PrepareOrderData>, ToolError> {
        let currency = Currency::from(row.currency);
        let quantity = u32::try_from(row.quantity).map_err(|_| internal(call, &"draft quantity outside u32"))?;
        let draft = OrderDraft {
            id: row.id.clone(),
            gift: gift.card(currency, vec![], &self.public_url),
            quantity,
            shipping: row.shipping.into(),
            subtotal: Money::new(row.subtotal_minor, currency),
            shipping_cost: Money::new(row.shipping_minor, currency),
            total: Money::new(row.total_minor, currency),
            expires_at: rfc3339(row.expires_at_ms),
            destination: delivery.as_ref().map(|d| d.recipient.destination()),
            has_gift_message: delivery.as_ref().is_some_and(|d| d.gift_message.is_some()),
            needed_by: row.needed_by.clone(),
            delivery_options: self.delivery_options(call, gift, delivery.as_ref(), row, now),
            gift_wrap_price: wrap_price(gift, currency),
            gift_wrap_cost: row.gift_wrap_minor.map(|minor| Money::new(minor, currency)),
            gift_receipt: row.gift_receipt != 0,
        };
        // Widget-only: hosts hand `_meta` to the widget, never to the model.
        let token = self.confirmation.token(&row.id, &call.subject, now);
        let mut answer =
            Answer::new(PrepareOrderData { draft }).with_widget_meta(META_CONFIRMATION_TOKEN, json!(token));
        // The host's payment sheet: only for a draft that knows where it goes.
        if let Some(session) = self.sheet_session(row, delivery.as_ref()) {
            answer = answer.with_widget_meta(giftgenius_types::sheet::META_CHECKOUT_SHEET, json!(session));
        }
        if let Some(delivery) = delivery {
            answer = answer.with_widget_meta(META_DELIVERY, json!(delivery));
        }
        Ok(answer)
    }

    /// Every shipping option's cost and arrival dates for the draft's destination, as of `now`
    /// (dates move as the clock passes a cut-off); none while it has no recipient. The tables
    /// cover every zone they name (`arrival`'s tests), so a failure is a bug: logged, and the
    /// draft goes out without dates rather than not at all.
    fn delivery_options(
        &self,
        call: &CallContext,
        gift: &CatalogGift,
        delivery: Option<&DeliveryDetails>,
        row: &DraftRow,
        now: i64,
    ) -> Vec<DeliveryOption> {
        let Some(delivery) = delivery else { return Vec::new() };
        let currency = Currency::from(row.currency);
        let country = &delivery.recipient.address.country;
        arrival::delivery_options(&gift.merchant.id, country, row.needed_by.as_deref(), now, |speed| {
            shipping_cost(speed, currency)
        })
        .unwrap_or_else(|e| {
            tracing::error!(reference = %call.reference, error = %e, "delivery dates not computed");
            Vec::new()
        })
    }

    /// The draft's delivery details: the call's recipient, else the person's saved address,
    /// else none yet (the card asks for them; commit_order refuses a draft without them).
    async fn delivery(
        &self,
        call: &CallContext,
        input: &PrepareOrderInput,
    ) -> Result<Option<DeliveryDetails>, NotDrafted> {
        let gift_message = normalized_gift_message(input.gift_message.as_deref());
        let (recipient, from_saved_address) = match &input.recipient {
            Some(recipient) => (recipient.normalized(), false),
            None => {
                match self.store.saved_address(&call.subject).await.map_err(|e| NotDrafted::Failed(e.to_string()))? {
                    Some(json) => match serde_json::from_str::<Recipient>(&json) {
                        Ok(saved) => (saved, true),
                        Err(e) => {
                            return Err(NotDrafted::Failed(format!(
                                "saved address unreadable at column {}",
                                e.column()
                            )));
                        }
                    },
                    None if gift_message.is_some() => {
                        return Err(NotDrafted::Refused(ToolError::validation(
                            vec![FieldError::broke(
                                "recipient",
                                FieldRule::RecipientMissing,
                                "is required with a gift_message (there is no saved address)",
                            )],
                            &call.reference,
                        )));
                    }
                    None => return Ok(None),
                }
            }
        };
        Ok(Some(DeliveryDetails { recipient, gift_message, save_address: input.save_address, from_saved_address }))
    }
}

/// Why a draft could not be made, found before the gift's stock was looked at: answered (and
/// a failure logged, as `internal` does) only after the stock check, so the checks keep their
/// order: a gift sold out answers as such whatever else is wrong.
enum NotDrafted {
    /// A definitive answer (the request's own fault).
    Refused(ToolError),
    /// A failure on our side, for the log: `INTERNAL_ERROR`.
    Failed(String),
}

impl NotDrafted {
    fn answer(self, call: &CallContext) -> ToolError {
        match self {
            NotDrafted::Refused(error) => error,
            NotDrafted::Failed(detail) => internal(call, &detail),
        }
    }
}
