//! `prepare_order`: check stock and price for one gift and return a draft (the same request
//! returns the same draft while it is valid), with the confirmation token in widget-only `_meta`.

use giftgenius_types::wire::META_CONFIRMATION_TOKEN;
use giftgenius_types::{Money, OrderDraft, PrepareOrderData, PrepareOrderInput, ToolError};
use serde_json::json;
use sha2::{Digest, Sha256};

use super::{Checkout, random_id, shipping_cost};
use crate::clock::rfc3339;
use crate::context::CallContext;
use crate::error::internal;
use crate::outcome::{Answer, Outcome};
use crate::store::{DraftRow, Usage};
use crate::suggest::catalog::price_in;

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
        let sold = self.store.units_sold(&gift.id).await.map_err(|e| internal(call, &e))?;
        if sold + input.quantity > i64::from(gift.stock) {
            return Err(self.unavailable(call, &gift, input.currency));
        }
        let quantity = u32::try_from(input.quantity).map_err(|_| internal(call, &"quantity outside u32"))?;
        let unit = price_in(gift.price_cents, input.currency);
        let shipping = shipping_cost(input.shipping, input.currency);
        let total = unit
            .times(quantity)
            .and_then(|subtotal| Some((subtotal, subtotal.amount_minor.checked_add(shipping.amount_minor)?)))
            .map(|(subtotal, total)| (subtotal, Money::new(total, input.currency)));
        let Some((subtotal, total)) = total else {
            return Err(internal(
                call,
                &format!("order total overflows: {} × {quantity} + shipping", unit.amount_minor),
            ));
        };
        let now = self.now();
        let draft_key = hex::encode(Sha256::digest(
            format!("{}\n{}\n{}\n{}", gift.id, quantity, input.shipping.as_str(), input.currency).as_bytes(),
        ));
        let candidate = DraftRow {
            id: random_id("drf"),
            subject: call.subject.clone(),
            draft_key,
            gift_id: gift.id.clone(),
            quantity: i64::from(quantity),
            shipping: input.shipping.into(),
            currency: input.currency.into(),
            subtotal_minor: subtotal.amount_minor,
            shipping_minor: shipping.amount_minor,
            total_minor: total.amount_minor,
            created_at_ms: now,
            expires_at_ms: now + self.draft_ttl.as_millis() as i64,
        };
        let row = self.store.draft_for_request(&candidate, now).await.map_err(|e| internal(call, &e))?;
        let draft = OrderDraft {
            id: row.id.clone(),
            gift: gift.card(input.currency, vec![], &self.public_url),
            quantity,
            shipping: input.shipping,
            subtotal: Money::new(row.subtotal_minor, input.currency),
            shipping_cost: Money::new(row.shipping_minor, input.currency),
            total: Money::new(row.total_minor, input.currency),
            expires_at: rfc3339(row.expires_at_ms),
        };
        // Widget-only: hosts hand `_meta` to the widget, never to the model.
        let token = self.confirmation.token(&row.id, &call.subject);
        Ok(Answer::new(PrepareOrderData { draft }).with_widget_meta(META_CONFIRMATION_TOKEN, json!(token)))
    }
}
