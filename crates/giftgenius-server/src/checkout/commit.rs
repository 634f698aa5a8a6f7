//! `commit_order`: charge once and place the order for a draft the person confirmed.
//!
//! The call runs in atomic phases, each recorded as a recovery point of its idempotency key
//! together with its work:
//! 1. claim the key                                                 -> `Started`
//! 2. create the order row (pending payment), in one transaction    -> `ResourceCreated` (the order)
//! 3. mark the order as charging (until the provider's timeout has passed), then charge the
//!    provider with the key `gg_<order id>`: derived from the key's order, so a retry after any
//!    crash asks the provider for the *same* charge
//! 4. mark the order paid (or declined) and store the answer, in one transaction -> `Finished`;
//!    a paid order's `order_create` event is written in that transaction too (`outbox/`)
//!
//! The plain purchase (a new key, a draft that can be ordered now, no order for it yet) does 1
//! and 2 in one transaction with the draft's read, the order created with its charging window
//! (`store/purchases.rs`), so it costs two transactions in all, with the charge between them
//! outside any; every other case (a retry, a replay, a key reused, an expired or unknown draft,
//! out of stock, another key's order) writes nothing there and takes the phases one by one.
//!
//! The key's fingerprint covers the draft's delivery details as well as the arguments: the same
//! key for a draft with another recipient or address is IDEMPOTENCY_KEY_REUSED. A draft without
//! delivery details is refused (VALIDATION_ERROR on `recipient`): nothing ships nowhere.
//!
//! A crash between any two phases is resumed by the next retry with the same key; an order
//! nobody retries is finished by the reconciler (`reconcile.rs`). Every step that writes is
//! fenced by the key's generation: a call whose lease ran out and was taken over writes nothing
//! and answers from what the key says now. A draft has at most one live order; a commit under
//! another key adopts it rather than creating a second.

use giftgenius_commerce::order::Order;
use giftgenius_pay_api::api::PaymentToken;
use giftgenius_types::{CommitOrderInput, ErrorCode, FieldError, FieldRule, OrderData, ToolError};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::idempotency::{Lease, fingerprint};
use super::{Checkout, delivery_of};
use crate::context::CallContext;
use crate::error::internal;
use crate::outcome::{Answer, Outcome};
use giftgenius_catalog::CatalogGift;
use giftgenius_commerce::arrival;
use giftgenius_commerce::charge::Charged;
use giftgenius_commerce::clock::rfc3339;
use giftgenius_commerce::failpoints::{
    AFTER_KEY_CLAIMED, AFTER_ORDER_CREATED, AFTER_RESPONSE_STORED, COMMIT_ORDER_PANICS,
};
use giftgenius_commerce::order::{Changed, NewOrder};
use giftgenius_commerce::payments::LEASE_MARGIN;
use giftgenius_commerce::store::{
    CreateOrder, DraftRow, Fenced, OrderFacts, OrderLineRow, OrderStatusColumn, PurchaseBegun, PurchasePlan,
    RecoveryPoint, SettledBy, Settlement, Stock, StoreError,
};
use giftgenius_types::DeliveryDetails;

/// Where the order phase left the call.
enum OrderStep {
    /// The order exists (created now, or left by an earlier holder or another key): charge it.
    /// With the end of the charging window it was created with, when it was created now.
    Ready(Order, Option<i64>),
    /// A definitive answer that needs no charge (no such draft, expired, out of stock, already
    /// paid): store it as the key's answer.
    Answered(Result<Answer<OrderData>, ToolError>),
    /// The key was taken over meanwhile: answer from what it says now.
    Lost,
    /// A token payment that may not touch the draft's order (another key's, or awaiting the
    /// person's bank): this answer, not stored (the key is released), the order untouched.
    Refused(ToolError),
}

/// Why a token payment (the sheet) leaves `order` alone: it was created under another key (whose
/// request may be at the provider, and a second request under the order's provider key with
/// another token is a conflict, not a replay), or it awaits the person's bank (3-D Secure), which
/// only they finish. Retryable: the answer changes once that payment is settled.
pub(super) fn another_payment(call: &CallContext, order: &Order) -> ToolError {
    let (message, retry_after_ms) = if order.payment_ref.is_some() {
        (
            "This order is waiting for the user to confirm the payment with their bank (the widget shows the \
             link); the payment sheet cannot pay it and nothing was charged. Ask again once the user has finished.",
            10_000,
        )
    } else {
        ("Another payment of this order is still running; ask again in a moment for its outcome.", 1000)
    };
    ToolError::new(ErrorCode::RequestInProgress, message, &call.reference).with_retry_after_ms(retry_after_ms)
}

/// The definitive answer of a declined payment.
pub(super) fn declined(call: &CallContext) -> ToolError {
    ToolError::new(
        ErrorCode::PaymentDeclined,
        "The payment was declined; nothing was charged. The user may try another payment method.",
        &call.reference,
    )
}

impl Checkout {
    pub async fn commit_order(
        &self,
        call: &CallContext,
        input: &CommitOrderInput,
        arguments: &Map<String, Value>,
    ) -> Outcome<OrderData> {
        let verdict =
            self.confirmation.verify(input.confirmation_token.as_deref(), &input.draft_id, &call.subject, self.now());
        let expired = match verdict.accepted(
            call,
            "This purchase has not been confirmed by the user. Only the Confirm button in the GiftGenius widget can place the order.",
            "The user presses Confirm in the widget again.",
        ) {
            Ok(_) => None,
            Err(expired) if expired.code == ErrorCode::ConfirmationExpired => Some(expired),
            Err(refused) => return refused.into(),
        };
        let draft = if expired.is_none() {
            // The plain purchase (a new key, a draft that can be ordered): claim, draft and order
            // in one transaction, then the charge; anything else goes the general way below,
            // with the draft that transaction read.
            match self.begin_purchase(call, input, arguments).await {
                Ok(Begun::Created(lease, order, charging_until)) => {
                    return self
                        .idempotency
                        .run(call, lease, async |lease| {
                            self.failpoints.hit(AFTER_KEY_CLAIMED);
                            self.failpoints.panic_if(COMMIT_ORDER_PANICS, &input.idempotency_key);
                            self.failpoints.hit(AFTER_ORDER_CREATED);
                            self.charge_phase(call, lease, *order, None, charging_until).await
                        })
                        .await;
                }
                Ok(Begun::NotHere(draft)) => draft,
                Err(e) => return internal(call, &e).into(),
            }
        } else {
            match self.store.draft(&call.subject, &input.draft_id).await {
                Ok(draft) => draft,
                Err(e) => return internal(call, &e).into(),
            }
        };
        let fingerprint = commit_fingerprint(arguments, draft.as_ref());
        if let Some(expired) = expired {
            let done = self.bought_already(call, &input.idempotency_key, &fingerprint, draft.as_ref()).await;
            return done.unwrap_or_else(|| expired.into());
        }
        self.idempotency
            .keyed(call, &input.idempotency_key, &fingerprint, async |lease| {
                self.failpoints.hit(AFTER_KEY_CLAIMED);
                self.failpoints.panic_if(COMMIT_ORDER_PANICS, &input.idempotency_key);
                self.run_commit(call, input, lease, None, draft).await
            })
            .await
    }

    /// The host's payment sheet (`sheet.rs`): the same keyed path as [`Checkout::commit_order`],
    /// charged with the sheet's vault token. The person's confirmation is the sheet itself; the
    /// draft must still be the caller's (`order_phase` reads it by the caller's subject).
    pub(super) async fn pay_with_token(
        &self,
        call: &CallContext,
        input: &CommitOrderInput,
        token: PaymentToken,
        draft: DraftRow,
    ) -> Outcome<OrderData> {
        let draft = Some(draft);
        let delivery = draft.as_ref().and_then(|d| d.delivery.clone());
        let mut fingerprinted = Map::new();
        fingerprinted.insert("draft_id".into(), Value::String(input.draft_id.clone()));
        fingerprinted.insert("sheet".into(), Value::Bool(true));
        fingerprinted.insert(
            "delivery".into(),
            Value::String(hex::encode(Sha256::digest(delivery.as_deref().unwrap_or("").as_bytes()))),
        );
        let fingerprint = fingerprint(&fingerprinted);
        self.idempotency
            .keyed(call, &input.idempotency_key, &fingerprint, async |lease| {
                self.failpoints.hit(AFTER_KEY_CLAIMED);
                self.run_commit(call, input, lease, Some(token), draft).await
            })
            .await
    }

    /// For a genuine but expired confirmation, which starts nothing: what already happened, if
    /// anything did (the key's stored answer, else the draft's paid order), so a late retry of a
    /// purchase whose answer was lost is never told it failed.
    async fn bought_already(
        &self,
        call: &CallContext,
        key: &str,
        fingerprint: &str,
        draft: Option<&giftgenius_commerce::store::DraftRow>,
    ) -> Option<Outcome<OrderData>> {
        match self.idempotency.finished(call, key, fingerprint).await {
            Ok(Some(replayed)) => return Some(replayed),
            Ok(None) => {}
            Err(e) => return Some(internal(call, &e).into()),
        }
        match self.store.live_order_for_draft(&draft?.id).await {
            Ok(Some(paid)) if paid.status.is_paid() => Some(self.order_answer(call, &paid).await.into()),
            Ok(_) => None,
            Err(e) => Some(internal(call, &e).into()),
        }
    }

    /// The keyed work of a commit. `draft` is the caller's draft as read just before the key
    /// was claimed (the fingerprint covers its delivery details): the order is made from it.
    async fn run_commit(
        &self,
        call: &CallContext,
        input: &CommitOrderInput,
        mut lease: Lease,
        token: Option<PaymentToken>,
        draft: Option<DraftRow>,
    ) -> Outcome<OrderData> {
        let step = match (lease.resume_from(), lease.resource_id()) {
            (RecoveryPoint::ResourceCreated, Some(order_id)) => match self.store.order_by_id(order_id).await {
                Ok(Some(order)) => Ok(OrderStep::Ready(order, None)),
                Ok(None) => Err(vanished(order_id)),
                Err(e) => Err(e),
            },
            _ => self.order_phase(call, input, draft, &mut lease, token.is_some()).await,
        };
        match step {
            Ok(OrderStep::Ready(order, charging_until)) => {
                self.charge_phase(call, lease, order, token, charging_until).await
            }
            Ok(OrderStep::Answered(result)) => lease.answer(call, result).await,
            Ok(OrderStep::Lost) => lease.settled(call).await,
            Ok(OrderStep::Refused(error)) => {
                lease.release().await;
                error.into()
            }
            Err(e) => lease.fail(call, &e).await.into(),
        }
    }

    /// Phase 2: the draft's order, created in one transaction with the key's move to
    /// `ResourceCreated` (and, when the lease has room for the charge request, with its
    /// charging window, so phase 3 needs no transaction of its own).
    async fn order_phase(
        &self,
        call: &CallContext,
        input: &CommitOrderInput,
        draft: Option<DraftRow>,
        lease: &mut Lease,
        with_token: bool,
    ) -> Result<OrderStep, StoreError> {
        let answered = |error: ToolError| Ok(OrderStep::Answered(Err(error)));
        let Some(draft) = draft else {
            return answered(ToolError::new(
                ErrorCode::DraftNotFound,
                format!("There is no draft {}.", input.draft_id),
                &call.reference,
            ));
        };
        let now = self.now();
        let delivery = delivery_of(draft.delivery.as_deref());
        let gifts = self.draft_gifts(&draft);
        // A draft that was already bought answers with its order even after it expired (a
        // late retry whose key was pruned must not be told the purchase failed). A draft that
        // can still be ordered needs no look here: creating its order finds the paid one.
        if !(matches!(delivery, Ok(Some(_))) && draft.expires_at_ms > now && gifts.is_ok())
            && let Some(paid) = self.store.live_order_for_draft(&draft.id).await?.filter(|o| o.status.is_paid())
        {
            return Ok(OrderStep::Answered(self.order_answer(call, &paid).await));
        }
        let Some(delivery) = delivery? else {
            return answered(ToolError::validation(
                vec![FieldError::broke(
                    "recipient",
                    FieldRule::RecipientMissing,
                    "the draft has no recipient: add who it is for and where it goes on the card (prepare_order with recipient)",
                )],
                &call.reference,
            ));
        };
        if draft.expires_at_ms <= now {
            return answered(ToolError::new(
                ErrorCode::DraftExpired,
                format!(
                    "Draft {} expired at {}; prepare a fresh one and confirm again.",
                    draft.id,
                    rfc3339(draft.expires_at_ms)
                ),
                &call.reference,
            ));
        }
        let gifts = match gifts {
            Ok(gifts) => gifts,
            Err(gift_id) if draft.lines().len() > 1 => {
                return answered(ToolError::new(
                    ErrorCode::GiftUnavailable,
                    format!(
                        "Gift {gift_id} of this basket is no longer sold; nothing was charged. Prepare the basket again without it."
                    ),
                    &call.reference,
                ));
            }
            Err(_) => {
                return answered(ToolError::new(
                    ErrorCode::GiftUnavailable,
                    "This gift is no longer sold.",
                    &call.reference,
                ));
            }
        };
        let order = new_order(call, &draft, &gifts, &delivery, now)?;
        let charging_until = self.charging_window(lease.remaining(), now);
        let created = match self
            .store
            .create_order_charging(lease.fence(), &order, &stock_of(&gifts), now, charging_until)
            .await?
        {
            Fenced::Written(created) => created,
            Fenced::Stale => return Ok(OrderStep::Lost),
        };
        match created {
            CreateOrder::Created => {
                self.failpoints.hit(AFTER_ORDER_CREATED);
                Ok(OrderStep::Ready(order, charging_until))
            }
            CreateOrder::OutOfStock(gift_id) => match gifts.iter().find(|gift| *gift.id == *gift_id) {
                Some(gift) => answered(self.unavailable(call, gift, draft.currency.into())),
                None => {
                    Err(StoreError::Inconsistent(format!("the store found {gift_id} short, which is not in the draft")))
                }
            },
            // The draft was bought under another key: answer with that order, never a second one.
            CreateOrder::DraftAlreadyOrdered(existing) if existing.status.is_paid() => {
                Ok(OrderStep::Answered(self.order_answer(call, &existing).await))
            }
            // A token payment (the sheet) never takes over another key's order ([`another_payment`]).
            // (commit_order's requests under the order's key are all alike, so a second one simply
            // finds the same charge.)
            CreateOrder::DraftAlreadyOrdered(existing) if with_token => {
                Ok(OrderStep::Refused(another_payment(call, &existing)))
            }
            // Another key created this draft's order and has not finished it; its caller may be
            // gone for good (a reloaded widget that lost its key). The provider key belongs to
            // the order, not to either idempotency key, so finishing it under ours can only ever
            // find the same charge.
            CreateOrder::DraftAlreadyOrdered(existing) => match lease.advance(&existing.id).await? {
                Fenced::Written(()) => Ok(OrderStep::Ready(*existing, None)),
                Fenced::Stale => Ok(OrderStep::Lost),
            },
        }
    }

    /// Phases 3 and 4: charge the provider, then record the outcome with the key's answer.
    /// `charging_until`: the charging window the order was created with just now, if any.
    async fn charge_phase(
        &self,
        call: &CallContext,
        lease: Lease,
        order: Order,
        token: Option<PaymentToken>,
        charging_until: Option<i64>,
    ) -> Outcome<OrderData> {
        // A token never pays an order that has a provider payment of its own (3-D Secure).
        if token.is_some() && order.payment_ref.is_some() {
            lease.release().await;
            return another_payment(call, &order).into();
        }
        let with_token = token.is_some();
        let charged = self.charge_step().run(lease.fence(), lease.until_ms(), &order, token, charging_until).await;
        match charged {
            Charged::Paid { charge, paid_at_ms: paid_at } => {
                let was_pending = order.status == OrderStatusColumn::PendingPayment;
                // The time it is recorded paid, in the answer and in the row alike.
                let Changed { order: paid, change } = order.paid(&charge.id, paid_at);
                // An order that was pending has no refunds and no adjustments (both need a paid
                // order), and it is written paid below only if it still is pending: there is
                // nothing to read for its answer.
                let result = if was_pending {
                    self.order_answer_of(call, &paid, OrderFacts::of(paid.clone()))
                } else {
                    self.order_answer(call, &paid).await
                };
                lease
                    .finish(call, result, async |fence, answer| {
                        let event = self.events.event(&OrderFacts::of(paid.clone()), change).await?;
                        let settlement = Settlement::Paid { charge_id: &charge.id, event: event.as_ref() };
                        let written = self
                            .store
                            .settle(&paid.id, settlement, SettledBy::KeyHolder(fence), answer, paid_at)
                            .await?
                            .map(drop);
                        if written == Fenced::Written(()) {
                            self.failpoints.hit(AFTER_RESPONSE_STORED);
                            tracing::info!(order = paid.id, charge = charge.id, "order paid");
                            self.remember_address(call, &paid).await;
                        }
                        Ok(written)
                    })
                    .await
            }
            Charged::Declined => {
                lease
                    .finish(call, Err(declined(call)), async |fence, answer| {
                        self.store
                            .settle(&order.id, Settlement::Declined, SettledBy::KeyHolder(fence), answer, self.now())
                            .await
                            .map(|w| w.map(drop))
                    })
                    .await
            }
            // No card on file (Stripe): nothing was asked of a bank. The key is released, not
            // finished, and the order stays pending: the same Confirm (the same draft, so the
            // same key) charges it once a card is saved. Left alone, the reconciler gives the
            // order up as never charged (`--reconcile-after-secs`) and frees its stock.
            Charged::NoSavedCard => {
                lease.release().await;
                self.no_saved_card(call).await
            }
            Charged::Settled => self.settled_order_answer(call, lease, &order.id).await,
            Charged::Stale => lease.settled(call).await,
            Charged::Unavailable(detail) => {
                lease.release().await;
                unavailable(call, &detail)
            }
            Charged::Failed(e) => lease.fail(call, &e).await.into(),
            // The sheet's token was refused before any money moved: a definitive answer, as a decline.
            Charged::Refused(code) if with_token => {
                tracing::info!(order = order.id, code, "the sheet's vault token was refused");
                lease
                    .finish(call, Err(super::sheet::token_refused(call)), async |fence, answer| {
                        self.store
                            .settle(&order.id, Settlement::Declined, SettledBy::KeyHolder(fence), answer, self.now())
                            .await
                            .map(|w| w.map(drop))
                    })
                    .await
            }
            // The card's bank asks the person to confirm (3-D Secure): the order waits, the key
            // stays unfinished (a retry asks the provider again and answers the same), and the
            // answer carries the hosted page's link for the widget. Only the provider's word
            // (its answer, a verified webhook, the reconciler's retrieve) ever pays it.
            Charged::AuthenticationRequired { payment } => {
                let now = self.now();
                let until =
                    order.authentication_until_ms.unwrap_or(now + self.authentication_window.as_millis() as i64);
                match self.store.await_authentication(lease.fence(), &order.id, &payment, until, now).await {
                    Ok(Fenced::Written(true)) => {
                        tracing::info!(order = order.id, "the payment awaits the person's bank (3-D Secure)");
                        let waiting = order.awaiting_authentication(payment, until);
                        let result = self.order_answer(call, &waiting).await;
                        lease.release().await;
                        result.into()
                    }
                    Ok(Fenced::Written(false)) => self.settled_order_answer(call, lease, &order.id).await,
                    Ok(Fenced::Stale) => lease.settled(call).await,
                    Err(e) => lease.fail(call, &e).await.into(),
                }
            }
            // A token refusal needs a token, and an app commit never sends one.
            Charged::Refused(code) => {
                lease.fail(call, &format!("provider refused a token ({code}) for a charge without one")).await.into()
            }
        }
    }

    /// The answer for an order that was settled by someone else while we held the key.
    async fn settled_order_answer(&self, call: &CallContext, lease: Lease, order_id: &str) -> Outcome<OrderData> {
        match self.store.order_by_id(order_id).await {
            Ok(Some(order)) if order.status == OrderStatusColumn::PaymentDeclined => {
                lease.answer(call, Err(declined(call))).await
            }
            Ok(Some(order)) => {
                let result = self.order_answer(call, &order).await;
                lease.answer(call, result).await
            }
            Ok(None) => lease.fail(call, &vanished(order_id)).await.into(),
            Err(e) => lease.fail(call, &e).await.into(),
        }
    }
}

/// What the purchase's first transaction came to.
enum Begun {
    /// The key is ours and points at the order, created now with this charging window.
    Created(Lease, Box<Order>, Option<i64>),
    /// Nothing written: the general way, with the caller's draft as read (`None`: none).
    NotHere(Option<DraftRow>),
}

impl Checkout {
    /// The purchase's first step in one transaction (`store::begin_purchase`): the caller's
    /// draft read, the order created from it, the key claimed pointing at the order. Only for a
    /// draft that can be ordered now; the checks are [`Checkout::order_phase`]'s, which
    /// answers every other case.
    async fn begin_purchase(
        &self,
        call: &CallContext,
        input: &CommitOrderInput,
        arguments: &Map<String, Value>,
    ) -> Result<Begun, StoreError> {
        let now = self.now();
        let lease_until = now.saturating_add(self.idempotency.lease.as_millis() as i64);
        let scope = super::idempotency::scope(call, &input.idempotency_key);
        let plan = |draft: &DraftRow| {
            let gifts = self.draft_gifts(draft).ok()?;
            let Ok(Some(delivery)) = delivery_of(draft.delivery.as_deref()) else { return None };
            if draft.expires_at_ms <= now {
                return None;
            }
            Some(PurchasePlan {
                fingerprint: commit_fingerprint(arguments, Some(draft)),
                order: new_order(call, draft, &gifts, &delivery, now).ok()?,
                stock: stock_of(&gifts),
                charging_until_ms: self.charging_window(self.idempotency.lease, now),
            })
        };
        Ok(match self.store.begin_purchase(&scope, &input.draft_id, lease_until, now, plan).await? {
            PurchaseBegun::Created(plan) => {
                let plan = *plan;
                let lease = self.idempotency.claimed_with(call, &input.idempotency_key, lease_until, &plan.order.id);
                Begun::Created(lease, Box::new(plan.order), plan.charging_until_ms)
            }
            PurchaseBegun::NotHere(draft) => Begun::NotHere(draft.map(|d| *d)),
        })
    }

    /// The charging window an order created at `now` starts with, when a lease with `remaining`
    /// left has room for the whole charge request (else the charge step marks it itself).
    fn charging_window(&self, remaining: std::time::Duration, now: i64) -> Option<i64> {
        let in_flight = self.payments.timeout() + LEASE_MARGIN;
        (remaining >= in_flight).then(|| now + in_flight.as_millis() as i64)
    }
}

/// The key's fingerprint of a commit: its arguments, and the delivery details of the draft
/// they name (what is bought includes where it goes).
fn commit_fingerprint(arguments: &Map<String, Value>, draft: Option<&DraftRow>) -> String {
    let delivery = draft.and_then(|d| d.delivery.as_deref());
    let mut fingerprinted = arguments.clone();
    fingerprinted
        .insert("delivery".into(), Value::String(hex::encode(Sha256::digest(delivery.unwrap_or("").as_bytes()))));
    fingerprint(&fingerprinted)
}

/// What each of `gifts` has in stock, as the catalog says now.
fn stock_of(gifts: &[CatalogGift]) -> Stock {
    gifts.iter().map(|gift| (gift.id.to_string(), i64::from(gift.stock))).collect()
}

impl Checkout {
    /// The catalog's gift of each of `draft`'s lines, in its order; the id of the first one the
    /// catalog no longer holds.
    fn draft_gifts(&self, draft: &DraftRow) -> Result<Vec<CatalogGift>, String> {
        draft.lines().iter().map(|line| self.catalog.get(&line.gift_id).ok_or_else(|| line.gift_id.clone())).collect()
    }
}

/// The order for `draft` of `gifts` (its lines' gifts, in order), pending payment, as created
/// at `now`: each line with its gift's title and merchant as they are now.
fn new_order(
    call: &CallContext,
    draft: &DraftRow,
    gifts: &[CatalogGift],
    delivery: &DeliveryDetails,
    now: i64,
) -> Result<Order, StoreError> {
    let mut lines = draft.lines().into_iter().zip(gifts).map(|(line, gift)| OrderLineRow {
        gift_id: line.gift_id,
        gift_title: gift.title.to_string(),
        merchant: gift.merchant().name,
        quantity: line.quantity,
        subtotal_minor: Some(line.subtotal_minor),
        gift_wrap_minor: line.gift_wrap_minor,
    });
    let first_line =
        lines.next().ok_or_else(|| StoreError::Inconsistent(format!("draft {} has no lines", draft.id)))?;
    let merchants: Vec<&str> = gifts.iter().map(|gift| &*gift.merchant.id).collect();
    let new = NewOrder {
        subject: call.subject.clone(),
        draft_id: draft.id.clone(),
        first_line,
        more_lines: lines.collect(),
        currency: draft.currency,
        total_minor: draft.total_minor,
        delivery: draft.delivery.clone(),
        destination: Some((delivery.recipient.address.city.clone(), delivery.recipient.address.country.clone())),
        gift_wrap_minor: draft.gift_wrap_minor,
        gift_receipt: draft.gift_receipt != 0,
        arrives: arrival::promised(&merchants, &delivery.recipient.address.country, draft.shipping.into(), now)
            .inspect_err(|e| tracing::error!(reference = %call.reference, error = %e, "order arrival not computed"))
            .ok(),
    };
    Ok(Order::pending(new, now))
}

impl Checkout {
    /// Keeps the paid order's recipient as the person's saved address, if they agreed on the
    /// card. Best effort: the order stands either way (and a failure logs no address).
    async fn remember_address(&self, call: &CallContext, order: &Order) {
        let delivery = match delivery_of(order.delivery.as_deref()) {
            Ok(Some(delivery)) if delivery.save_address => delivery,
            Ok(_) => return,
            Err(e) => return tracing::warn!(error = %e, "not saving the address"),
        };
        let saved = match serde_json::to_string(&delivery.recipient) {
            Ok(json) => self.store.save_address(&call.subject, &json, self.now()).await,
            Err(e) => Err(StoreError::json("recipient not serializable")(e)),
        };
        if let Err(e) = saved {
            tracing::warn!(error = %e, "could not save the address the user agreed to keep");
        }
    }
}

/// The order a key points at is gone (orders are never deleted while a key may point at them).
fn vanished(order_id: &str) -> StoreError {
    StoreError::Inconsistent(format!("order {order_id} vanished"))
}

/// PAYMENT_PROVIDER_UNAVAILABLE: transient; the same key retried later finds the same charge.
pub(super) fn unavailable(call: &CallContext, detail: &str) -> Outcome<OrderData> {
    tracing::debug!(detail, "answering PAYMENT_PROVIDER_UNAVAILABLE");
    ToolError::new(
        ErrorCode::PaymentProviderUnavailable,
        "The payment provider did not answer. Nothing was charged twice: try again with the same key.",
        &call.reference,
    )
    .with_retry_after_ms(1000)
    .into()
}
