//! `prepare_order`: check stock and price for one gift, or a basket of several (`items`), and
//! return a draft (the same request returns the same draft while it is valid), with the
//! confirmation token in widget-only `_meta`. A basket is one draft: one recipient, one
//! shipping option, one total, one confirmation; its lines keep the order they were given in.
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
//! Its gift options are part of it too: the wrap (each line's merchant's price per gift,
//! `giftgenius_commerce::gift_wrap`, a line of the total) and the gift receipt. A parcel with
//! several merchants' gifts arrives when the slowest merchant's part does (`arrival`).

use giftgenius_types::delivery::normalized_gift_message;
use giftgenius_types::orders::{MAX_BASKET_ITEMS, MAX_QUANTITY};
use giftgenius_types::wire::{META_CONFIRMATION_TOKEN, META_DELIVERY};
use giftgenius_types::{
    Currency, DeliveryDetails, DeliveryOption, DraftLine, ErrorCode, FieldError, FieldRule, Money, OrderDraft,
    PrepareOrderData, PrepareOrderInput, Recipient, ReopenOrderDraftInput, ToolError,
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
use giftgenius_commerce::store::{DraftLineRow, DraftRow, Drafted, Lines, Stock, Usage};

impl Checkout {
    pub async fn prepare_order(&self, call: &CallContext, input: &PrepareOrderInput) -> Outcome<PrepareOrderData> {
        self.prepare(call, input).await.into()
    }

    async fn prepare(
        &self,
        call: &CallContext,
        input: &PrepareOrderInput,
    ) -> Result<Answer<PrepareOrderData>, ToolError> {
        let wanted = self.wanted(call, input).await?;
        let basket = self.basket(call, input, &wanted)?;
        self.limits.take(call, Usage::Drafts).await?;
        let stock: Stock = basket.iter().map(|(gift, _)| (gift.id.to_string(), i64::from(gift.stock))).collect();
        // The stock is checked in the draft's own transaction. A request refused before its
        // draft exists (delivery details, a total that overflows) is checked against the stock
        // first, so that a gift sold out answers as such whatever else is wrong.
        let (candidate, delivery) = match self.candidate(call, input, &basket).await {
            Ok(candidate) => candidate,
            Err(not_drafted) => {
                for (gift, quantity) in &basket {
                    let sold = self.store.units_sold(&gift.id).await.map_err(|e| internal(call, &e))?;
                    if sold + quantity > i64::from(gift.stock) {
                        return Err(self.unavailable(call, gift, input.currency));
                    }
                }
                return Err(not_drafted.answer(call));
            }
        };
        let now = candidate.created_at_ms;
        let row = match self.store.draft_for_request(&candidate, &stock, now).await.map_err(|e| internal(call, &e))? {
            Drafted::Draft(row) => row,
            Drafted::OutOfStock(gift_id) => {
                let gift = basket.iter().map(|(gift, _)| gift).find(|gift| *gift.id == *gift_id);
                return Err(match gift {
                    Some(gift) => self.unavailable(call, gift, input.currency),
                    None => internal(call, &format!("the store found {gift_id} short, which is not in the basket")),
                });
            }
        };
        let answer = self.draft_answer(call, &row, delivery, now)?;
        Ok(self.with_payment_card(call, answer).await)
    }

    /// The lines `input` asks for, in order: with `add_to`, that basket's lines first (while it
    /// is open: the caller's, neither ordered nor pruned), then the call's own; a gift already
    /// there adds its quantity. A basket that would hold more than 10 gifts, or more than 10 of
    /// one, is a field error naming what is already in it.
    async fn wanted(&self, call: &CallContext, input: &PrepareOrderInput) -> Result<Vec<Wanted>, ToolError> {
        let mut wanted: Vec<Wanted> = Vec::new();
        if let Some(draft_id) = &input.add_to {
            let row = self.store.draft(&call.subject, draft_id).await.map_err(|e| internal(call, &e))?;
            let open = match row {
                Some(row) => self
                    .store
                    .live_order_for_draft(&row.id)
                    .await
                    .map_err(|e| internal(call, &e))?
                    .is_none()
                    .then_some(row),
                None => None,
            };
            if let Some(row) = open {
                let named = format!("in the basket {draft_id}");
                wanted.extend(row.lines().into_iter().map(|line| Wanted {
                    gift_id: line.gift_id,
                    quantity: line.quantity,
                    named: named.clone(),
                }));
            }
        }
        let already = wanted.len();
        let several = !input.items.is_empty();
        let mut errors = Vec::new();
        for (i, (gift_id, quantity)) in input.lines().into_iter().enumerate() {
            let field = if several { format!("items[{i}].quantity") } else { "quantity".to_string() };
            match wanted.iter_mut().find(|line| line.gift_id == gift_id) {
                Some(line) if line.quantity + quantity > MAX_QUANTITY => errors.push(FieldError::new(
                    field,
                    format!(
                        "would make {} of {gift_id} in the basket ({} already in {}): at most {MAX_QUANTITY} of one gift",
                        line.quantity + quantity,
                        line.quantity,
                        input.add_to.as_deref().unwrap_or("it"),
                    ),
                )),
                Some(line) => line.quantity += quantity,
                None => wanted.push(Wanted {
                    gift_id: gift_id.to_string(),
                    quantity,
                    named: if several { format!("items[{i}]") } else { "gift_id".to_string() },
                }),
            }
        }
        if wanted.len() > MAX_BASKET_ITEMS {
            errors.push(FieldError::new(
                if several { "items" } else { "gift_id" },
                format!(
                    "would make {} gifts in the basket ({already} already in {}): a basket holds at most {MAX_BASKET_ITEMS}",
                    wanted.len(),
                    input.add_to.as_deref().unwrap_or("it"),
                ),
            ));
        }
        if errors.is_empty() { Ok(wanted) } else { Err(ToolError::validation(errors, &call.reference)) }
    }

    /// The catalog's gift of each wanted line, with its quantity; GIFT_NOT_FOUND for an id the
    /// catalog does not hold (naming the item in a basket; a line of the basket added to that a
    /// catalog reload dropped, naming `add_to`).
    fn basket(
        &self,
        call: &CallContext,
        input: &PrepareOrderInput,
        wanted: &[Wanted],
    ) -> Result<Vec<(CatalogGift, i64)>, ToolError> {
        let several = wanted.len() > 1 || !input.items.is_empty();
        wanted
            .iter()
            .map(|line| match self.gift(call, &line.gift_id) {
                Ok(gift) => Ok((gift, line.quantity)),
                Err(_) if several => Err(ToolError::new(
                    ErrorCode::GiftNotFound,
                    format!(
                        "There is no gift with id {} ({}); the other items were not drafted either.",
                        line.gift_id, line.named
                    ),
                    &call.reference,
                )),
                Err(error) => Err(error),
            })
            .collect()
    }

    /// The draft `input` asks for (not stored yet), with its delivery details.
    async fn candidate(
        &self,
        call: &CallContext,
        input: &PrepareOrderInput,
        basket: &[(CatalogGift, i64)],
    ) -> Result<(DraftRow, Option<DeliveryDetails>), NotDrafted> {
        let overflow = |what: &str| NotDrafted::Failed(format!("order total overflows at {what}"));
        let mut lines = Vec::with_capacity(basket.len());
        for (gift, quantity) in basket {
            let units = u32::try_from(*quantity).map_err(|_| NotDrafted::Failed("quantity outside u32".into()))?;
            let subtotal = price_in(gift.price_cents, input.currency).times(units).ok_or_else(|| overflow("a line"))?;
            let wrap = match (input.gift_wrap, wrap_price(gift, input.currency)) {
                (false, _) => None,
                (true, Some(price)) => Some(price.times(units).ok_or_else(|| overflow("a line's wrap"))?),
                (true, None) => {
                    return Err(NotDrafted::Refused(ToolError::validation(
                        vec![FieldError::new(
                            "gift_wrap",
                            if basket.len() > 1 {
                                format!(
                                    "{} does not gift-wrap ({}); leave gift_wrap out, or buy that gift apart (a gift message and a gift receipt are still possible)",
                                    gift.merchant.name, gift.title
                                )
                            } else {
                                format!(
                                    "{} does not gift-wrap; leave gift_wrap out (a gift message and a gift receipt are still possible)",
                                    gift.merchant.name
                                )
                            },
                        )],
                        &call.reference,
                    )));
                }
            };
            lines.push(DraftLineRow {
                gift_id: gift.id.to_string(),
                quantity: *quantity,
                subtotal_minor: subtotal.amount_minor,
                gift_wrap_minor: wrap.map(|w| w.amount_minor),
            });
        }
        let shipping = shipping_cost(input.shipping, input.currency);
        let sum = |of: &dyn Fn(&DraftLineRow) -> i64| -> Option<i64> {
            lines.iter().try_fold(0i64, |sum, line| sum.checked_add(of(line)))
        };
        let subtotal = sum(&|line| line.subtotal_minor).ok_or_else(|| overflow("the subtotal"))?;
        let wrap = if input.gift_wrap {
            Some(sum(&|line| line.gift_wrap_minor.unwrap_or(0)).ok_or_else(|| overflow("the wrap"))?)
        } else {
            None
        };
        let total = subtotal
            .checked_add(shipping.amount_minor)
            .and_then(|total| total.checked_add(wrap.unwrap_or(0)))
            .ok_or_else(|| overflow("the total"))?;
        let delivery = self.delivery(call, input).await?;
        let delivery_json = delivery
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| NotDrafted::Failed(format!("delivery not serializable: {e}")))?;
        let now = self.now();
        let what = lines.iter().map(|line| format!("{}×{}", line.gift_id, line.quantity)).collect::<Vec<_>>().join(",");
        let draft_key = hex::encode(Sha256::digest(
            format!(
                "{}\n{}\n{}\n{}\n{}\n{}\n{}",
                what,
                input.shipping.as_str(),
                input.currency,
                delivery_json.as_deref().unwrap_or(""),
                input.needed_by.as_deref().unwrap_or(""),
                input.gift_wrap,
                input.gift_receipt
            )
            .as_bytes(),
        ));
        let first = lines.first().ok_or_else(|| NotDrafted::Failed("a basket without lines".into()))?.clone();
        let candidate = DraftRow {
            id: random_id("drf"),
            subject: call.subject.clone(),
            draft_key,
            gift_id: first.gift_id,
            quantity: first.quantity,
            shipping: input.shipping.into(),
            currency: input.currency.into(),
            subtotal_minor: subtotal,
            shipping_minor: shipping.amount_minor,
            total_minor: total,
            created_at_ms: now,
            expires_at_ms: now + self.draft_ttl.as_millis() as i64,
            delivery: delivery_json,
            needed_by: input.needed_by.clone(),
            gift_wrap_minor: wrap,
            gift_receipt: i64::from(input.gift_receipt),
            stored_lines: Lines(lines),
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
        let delivery = delivery_of(row.delivery.as_deref()).map_err(|e| internal(call, &e))?;
        let answer = self.draft_answer(call, &row, delivery, now)?;
        Ok(self.with_payment_card(call, answer).await)
    }

    /// A stored draft as the contract shows it: the model's part (city and country), and the
    /// widget's (a fresh confirmation token, the full delivery details) in `_meta`. Each line's
    /// gift as the catalog has it now (GIFT_NOT_FOUND if a reload dropped one).
    fn draft_answer(
        &self,
        call: &CallContext,
        row: &DraftRow,
        delivery: Option<DeliveryDetails>,
        now: i64,
    ) -> Result<Answer<PrepareOrderData>, ToolError> {
        let currency = Currency::from(row.currency);
        let stored = row.lines();
        let mut gifts = Vec::with_capacity(stored.len());
        let mut lines = Vec::with_capacity(stored.len());
        for line in &stored {
            let gift = self.gift(call, &line.gift_id)?;
            let quantity =
                u32::try_from(line.quantity).map_err(|_| internal(call, &"draft line quantity outside u32"))?;
            lines.push(DraftLine {
                gift: gift.card(currency, vec![], &self.public_url),
                quantity,
                subtotal: Money::new(line.subtotal_minor, currency),
                gift_wrap_cost: line.gift_wrap_minor.map(|minor| Money::new(minor, currency)),
            });
            gifts.push(gift);
        }
        let first = lines.first().ok_or_else(|| internal(call, &"a stored draft without lines"))?;
        let draft = OrderDraft {
            id: row.id.clone(),
            gift: first.gift.clone(),
            quantity: first.quantity,
            lines,
            shipping: row.shipping.into(),
            subtotal: Money::new(row.subtotal_minor, currency),
            shipping_cost: Money::new(row.shipping_minor, currency),
            total: Money::new(row.total_minor, currency),
            expires_at: rfc3339(row.expires_at_ms),
            destination: delivery.as_ref().map(|d| d.recipient.destination()),
            has_gift_message: delivery.as_ref().is_some_and(|d| d.gift_message.is_some()),
            needed_by: row.needed_by.clone(),
            delivery_options: self.delivery_options(call, &gifts, delivery.as_ref(), row, now),
            gift_wrap_price: basket_wrap_price(&gifts, currency),
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
    /// (dates move as the clock passes a cut-off), for a parcel of `gifts`' merchants; none
    /// while it has no recipient. The tables cover every zone they name (`arrival`'s tests), so
    /// a failure is a bug: logged, and the draft goes out without dates rather than not at all.
    fn delivery_options(
        &self,
        call: &CallContext,
        gifts: &[CatalogGift],
        delivery: Option<&DeliveryDetails>,
        row: &DraftRow,
        now: i64,
    ) -> Vec<DeliveryOption> {
        let Some(delivery) = delivery else { return Vec::new() };
        let currency = Currency::from(row.currency);
        let country = &delivery.recipient.address.country;
        let merchants: Vec<&str> = gifts.iter().map(|gift| &*gift.merchant.id).collect();
        arrival::delivery_options(&merchants, country, row.needed_by.as_deref(), now, |speed| {
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

/// What wrapping one unit of the basket costs: its merchant's price for one gift; for several,
/// the dearest of their merchants' prices (what a unit costs at most: the draft's
/// `gift_wrap_cost`, once asked for, says exactly). `None` when a merchant of the basket does
/// not wrap: the basket cannot be wrapped.
fn basket_wrap_price(gifts: &[CatalogGift], currency: Currency) -> Option<Money> {
    let mut dearest: Option<Money> = None;
    for gift in gifts {
        let price = wrap_price(gift, currency)?;
        if dearest.is_none_or(|d| price.amount_minor > d.amount_minor) {
            dearest = Some(price);
        }
    }
    dearest
}

/// One line a call asks for: a gift, how many, and where the call named it (`items[1]`,
/// `gift_id`, or the basket it adds to), for an answer about it.
struct Wanted {
    gift_id: String,
    quantity: i64,
    named: String,
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
