//! `POST /acp/checkout_sessions/{id}/complete` (docs/acp.md §5, §8): pays a ready session with
//! a delegated-payment vault token and places its order, exactly once.
//!
//! A session's order is an ordinary order (the `orders` table, `draft_id` = the session id, so
//! the one-live-order-per-draft index makes it one order per session) charged the way
//! `commit_order` charges: the order row is created with the request's key pointing at it, the
//! order is marked as charging, the provider is asked under `gg_<order id>` (one order, one
//! charge, whoever asks), and the outcome is recorded with the key's answer in one transaction
//! (`routes.rs`, `finish`). The vault token travels with the charge; the provider checks it
//! against its allowance (amount, currency, session, merchant, expiry, single use).
//!
//! A crash anywhere is resumed by the next complete, under any key: it finds the session's
//! pending order, asks the provider what happened under the order's key, and settles it (paid:
//! the session is completed; declined or never charged: the order is given up and this request
//! pays afresh). Orders nobody completes again are finished by the reconciler.

use axum::http::StatusCode;
use giftgenius_commerce::order::Order;
use giftgenius_pay_api::api::PaymentToken;
use giftgenius_types::acp::{
    ACP_CARD_HANDLER, AcpCheckoutSession, AcpCodedMessage, AcpCompleteRequest, AcpContentType, AcpErrorType,
    AcpInstrument, AcpMessage, AcpMessageCode, AcpOrder, AcpPaymentTerms, AcpResolution, AcpSessionStatus,
    AcpTotalType,
};
use giftgenius_types::delivery::{Address, DeliveryDetails, Recipient};

use super::error::AcpFailure;
use super::order::{OrderLinks, PaidFor, acp_order};
use super::session::SessionState;
use super::words::{Word, text};
use super::{Acp, Done, SessionWrite};
use giftgenius_catalog::CatalogGift;
use giftgenius_commerce::arrival;
use giftgenius_commerce::charge::provider_key;
use giftgenius_commerce::charge::{ChargeStep, Charged};
use giftgenius_commerce::failpoints::AFTER_ORDER_CREATED;
use giftgenius_commerce::order::NewOrder;
use giftgenius_commerce::payments::{Lookup, OrderCharge, PaymentError};
use giftgenius_commerce::store::{
    CreateOrder, Fence, Fenced, NewOrderEvent, OrderChange, OrderFacts, OrderLineRow, OrderStatusColumn,
    PlatformSessionRow, SettledBy, Settlement, Stock,
};

/// The claimed key a complete works under: its fence and when its lease ends.
pub struct Held<'a> {
    pub fence: &'a Fence,
    pub lease_until_ms: i64,
}

impl Acp {
    /// `POST /acp/checkout_sessions/{id}/complete`.
    pub async fn complete(
        &self,
        platform: &str,
        id: &str,
        request: AcpCompleteRequest,
        held: Held<'_>,
        request_id: &str,
    ) -> Result<Done, AcpFailure> {
        let internal = |e: &dyn std::fmt::Display| AcpFailure::internal(request_id, e);
        let payment = payment(&request, id, &self.merchant_id)?;
        let (mut row, status, mut state) = self.load(platform, id, request_id).await?;
        if let Some(order) = self.store.live_order_for_draft(id).await.map_err(|e| internal(&e))? {
            if order.status != OrderStatusColumn::PendingPayment {
                // Completed already: the same order, whatever the key or the token.
                let session = self.completed(&row, &state, &order, request_id).await?;
                return Ok(Done { status: StatusCode::OK, session, write: SessionWrite::Nothing });
            }
            if let Some(done) = self.resume(&row, &state, order, &held, request_id).await? {
                return Ok(done);
            }
        }
        let now = self.clock.now_ms();
        if let Some(done) = self.closed(&mut row, status, &state, now, request_id).await? {
            return Ok(done);
        }
        if let Some(buyer) = request.buyer {
            state.buyer = Some(buyer);
        }
        if let Some(notes) = request.order_notes {
            state.order_notes = Some(notes);
        }
        row.updated_at_ms = now;
        let session = self.show_state(&row, status, &state, request_id).await?;
        if session.status != AcpSessionStatus::ReadyForPayment {
            // Nothing to pay for yet: the session says what is missing.
            self.fill_row(&mut row, session.status, &state, request_id)?;
            return Ok(Done { status: StatusCode::OK, session, write: SessionWrite::Session(row) });
        }
        let token = match payment {
            Payment::Card(token) => token,
            Payment::NotOffered { param, word } => {
                // A way of paying we do not offer: the session as it is, saying so; nothing charged.
                self.fill_row(&mut row, session.status, &state, request_id)?;
                let mut session = session;
                session.messages.push(AcpMessage::Error(AcpCodedMessage {
                    code: AcpMessageCode::Unsupported,
                    content_type: AcpContentType::Plain,
                    content: text(state.lang(), word).into(),
                    param: Some(param.into()),
                    resolution: Some(AcpResolution::RequiresBuyerInput),
                }));
                return Ok(Done { status: StatusCode::OK, session, write: SessionWrite::Session(row) });
            }
        };
        self.pay(row, state, session, token, &held, request_id).await
    }

    /// Records what is being paid for, creates the order and charges it.
    async fn pay(
        &self,
        mut row: PlatformSessionRow,
        mut state: SessionState,
        session: AcpCheckoutSession,
        token: PaymentToken,
        held: &Held<'_>,
        request_id: &str,
    ) -> Result<Done, AcpFailure> {
        let internal = |e: &dyn std::fmt::Display| AcpFailure::internal(request_id, e);
        let now = self.clock.now_ms();
        let line = session.line_items.first().ok_or_else(|| internal(&"a ready session without a line"))?;
        let gift = self.catalog.get(&line.item.id).ok_or_else(|| internal(&"a ready session's item is gone"))?;
        let total = session.totals.iter().find(|t| t.kind == AcpTotalType::Total).map(|t| t.amount);
        let total = total.ok_or_else(|| internal(&"a session without a total"))?;
        let new = NewOrder {
            subject: format!("acp:{}", row.platform),
            draft_id: row.id.clone(),
            // A session sells one gift (its gift wrap is a child line, a total of its own).
            first_line: OrderLineRow {
                gift_id: gift.id.to_string(),
                gift_title: gift.title.to_string(),
                merchant: gift.merchant().name,
                quantity: i64::from(line.quantity),
                subtotal_minor: line.unit_amount.checked_mul(i64::from(line.quantity)),
                gift_wrap_minor: session.totals.iter().find(|t| t.kind == AcpTotalType::GiftWrap).map(|t| t.amount),
            },
            more_lines: Vec::new(),
            currency: state.currency.into(),
            total_minor: total,
            delivery: None,
            destination: None,
            gift_wrap_minor: session.totals.iter().find(|t| t.kind == AcpTotalType::GiftWrap).map(|t| t.amount),
            gift_receipt: false,
            arrives: promised_arrival(&gift, &session, now),
        };
        let order = Order::pending(new, now);
        let order = with_delivery(order, &session, &state).map_err(|e| internal(&e))?;
        // What is paid for, as shown now: a completed session answers with it (prices as charged).
        state.at_payment = Some(Box::new(session.clone()));
        self.fill_row(&mut row, session.status, &state, request_id)?;
        let fenced = |written: Fenced| written == Fenced::Written(());
        if !fenced(self.store.put_platform_session(held.fence, &row, now).await.map_err(|e| internal(&e))?) {
            return Err(AcpFailure::in_flight(1));
        }
        let stock = Stock::from([(gift.id.to_string(), i64::from(gift.stock))]);
        let created = self.store.create_order(held.fence, &order, &stock, now).await;
        match created.map_err(|e| internal(&e))? {
            Fenced::Stale => Err(AcpFailure::in_flight(1)),
            Fenced::Written(CreateOrder::Created) => {
                self.failpoints.hit(AFTER_ORDER_CREATED);
                self.charge(&row, &state, order, token, held, request_id).await
            }
            Fenced::Written(CreateOrder::OutOfStock(_)) => {
                let session = self.show_state(&row, AcpSessionStatus::ReadyForPayment, &state, request_id).await?;
                self.fill_row(&mut row, session.status, &state, request_id)?;
                Ok(Done { status: StatusCode::OK, session, write: SessionWrite::Session(row) })
            }
            // Another complete of this session got there first.
            Fenced::Written(CreateOrder::DraftAlreadyOrdered(existing)) => {
                if existing.status == OrderStatusColumn::PendingPayment {
                    return Err(in_progress());
                }
                let session = self.completed(&row, &state, &existing, request_id).await?;
                Ok(Done { status: StatusCode::OK, session, write: SessionWrite::Nothing })
            }
        }
    }

    /// Charges the session's pending order with the token; the outcome is written by `finish`
    /// together with the key's answer.
    async fn charge(
        &self,
        row: &PlatformSessionRow,
        state: &SessionState,
        order: Order,
        token: PaymentToken,
        held: &Held<'_>,
        request_id: &str,
    ) -> Result<Done, AcpFailure> {
        let internal = |e: &dyn std::fmt::Display| AcpFailure::internal(request_id, e);
        let step = ChargeStep {
            payments: &self.payments,
            store: &self.store,
            clock: &self.clock,
            failpoints: &self.failpoints,
        };
        match step.run(held.fence, held.lease_until_ms, &order, Some(token), None).await {
            Charged::Paid { charge, paid_at_ms } => {
                tracing::info!(order = order.id, charge = charge.id, session = row.id, "ACP order charged");
                let paid = order.paid(&charge.id, paid_at_ms).order;
                let session = self.completed(row, state, &paid, request_id).await?;
                let event = self.paid_event(&paid, &session, request_id)?;
                let write = SessionWrite::Paid { order_id: paid.id, charge_id: charge.id, event };
                Ok(Done { status: StatusCode::OK, session, write })
            }
            // ACP pays with a delegated vault token, never a card on file: no saved card cannot
            // happen here, and would be a payment that did not go through, as a decline.
            Charged::Declined | Charged::NoSavedCard => {
                let write = SessionWrite::Declined { order_id: order.id };
                self.declined(row, state, None, write, request_id).await
            }
            Charged::Refused(code) => {
                tracing::info!(order = order.id, code, session = row.id, "the vault token was refused");
                let write = SessionWrite::Declined { order_id: order.id };
                self.declined(row, state, Some(&code), write, request_id).await
            }
            Charged::Settled => {
                let settled = self.store.order_by_id(&order.id).await.map_err(|e| internal(&e))?;
                match settled {
                    Some(paid) if paid.status.is_paid() => {
                        let session = self.completed(row, state, &paid, request_id).await?;
                        Ok(Done { status: StatusCode::OK, session, write: SessionWrite::Nothing })
                    }
                    _ => self.declined(row, state, None, SessionWrite::Nothing, request_id).await,
                }
            }
            Charged::Stale => Err(AcpFailure::in_flight(1)),
            Charged::Unavailable(detail) => Err(unavailable(&detail)),
            Charged::Failed(e) => Err(internal(&e)),
            // The host's sheet pays with a delegated token; a provider asking the person to
            // confirm with their bank (3-D Secure) is not a flow the sheet can finish.
            Charged::AuthenticationRequired { payment } => {
                Err(internal(&format!("the provider asked for 3-D Secure on a sheet payment ({payment})")))
            }
        }
    }

    /// A pending order of the session: in flight elsewhere (409), or settled from what the
    /// provider says happened under its key. `None`: it was never paid and is given up, so
    /// this request pays afresh.
    async fn resume(
        &self,
        row: &PlatformSessionRow,
        state: &SessionState,
        order: Order,
        held: &Held<'_>,
        request_id: &str,
    ) -> Result<Option<Done>, AcpFailure> {
        let internal = |e: &dyn std::fmt::Display| AcpFailure::internal(request_id, e);
        let asked_at = self.clock.now_ms();
        if self.store.order_in_flight(&order.id, &held.fence.scope, asked_at).await.map_err(|e| internal(&e))? {
            return Err(in_progress());
        }
        let key = provider_key(&order.id);
        match self
            .payments
            .lookup(OrderCharge {
                key: &key,
                order_id: &order.id,
                subject: &order.subject,
                payment: order.payment_ref.as_deref(),
            })
            .await
        {
            Ok(Lookup::Processing | Lookup::AwaitingAuthentication { .. }) => Err(in_progress()),
            Ok(Lookup::Succeeded(charge)) if charge.amount == order.total() => {
                let paid = order.paid(&charge.id, self.clock.now_ms()).order;
                let session = self.completed(row, state, &paid, request_id).await?;
                let event = self.paid_event(&paid, &session, request_id)?;
                let write = SessionWrite::Paid { order_id: paid.id, charge_id: charge.id, event };
                Ok(Some(Done { status: StatusCode::OK, session, write }))
            }
            Ok(Lookup::Succeeded(charge)) => Err(internal(&format!(
                "order {} was charged {} ({}) but totals {}",
                order.id,
                charge.amount.display(),
                charge.id,
                order.total().display()
            ))),
            Ok(Lookup::Declined | Lookup::NotFound) => {
                // Nothing was charged for it: give it up (its stock is free again) and pay afresh,
                // once its own provider payment, if any, can never be charged.
                match self.payments.release(order.payment_ref.as_deref()).await {
                    Ok(Lookup::Declined) => {}
                    Ok(_) | Err(_) => return Err(unavailable("the order's payment is not cancelled yet")),
                }
                let by = SettledBy::Provider { asked_at_ms: asked_at };
                let settled = self.store.settle(&order.id, Settlement::Declined, by, "null", self.clock.now_ms()).await;
                match settled.map_err(|e| internal(&e))? {
                    Fenced::Written(true) => Ok(None),
                    Fenced::Written(false) | Fenced::Stale => Err(in_progress()),
                }
            }
            Err(PaymentError::Unavailable(detail)) => {
                tracing::warn!(order = order.id, detail, "payment provider unavailable while resuming an ACP complete");
                Err(unavailable("the payment provider did not answer"))
            }
            Err(e) => Err(internal(&format!("order {}: {e:?}", order.id))),
        }
    }

    /// The session after a declined or refused payment: as it is now (ready again: the order
    /// gave its stock back) with a message on `$.payment_data`.
    async fn declined(
        &self,
        row: &PlatformSessionRow,
        state: &SessionState,
        refusal: Option<&str>,
        write: SessionWrite,
        request_id: &str,
    ) -> Result<Done, AcpFailure> {
        let mut session = self.show_state(row, AcpSessionStatus::ReadyForPayment, state, request_id).await?;
        let (code, word) = match refusal {
            Some("token_expired") => (AcpMessageCode::Expired, Word::TokenExpired),
            Some(_) => (AcpMessageCode::PaymentDeclined, Word::TokenRefused),
            None => (AcpMessageCode::PaymentDeclined, Word::PaymentDeclined),
        };
        let content = text(state.lang(), word);
        session.messages.push(AcpMessage::Error(AcpCodedMessage {
            code,
            content_type: AcpContentType::Plain,
            content: content.into(),
            param: Some("$.payment_data".into()),
            resolution: Some(AcpResolution::RequiresBuyerInput),
        }));
        Ok(Done { status: StatusCode::OK, session, write })
    }

    /// The completed session: what was paid for (as shown when it was paid) and its order.
    pub(super) async fn completed(
        &self,
        row: &PlatformSessionRow,
        state: &SessionState,
        order: &Order,
        request_id: &str,
    ) -> Result<AcpCheckoutSession, AcpFailure> {
        let mut session = match &state.at_payment {
            Some(at_payment) => (**at_payment).clone(),
            None => self.show_state(row, AcpSessionStatus::ReadyForPayment, state, request_id).await?,
        };
        session.status = if order.status == OrderStatusColumn::PendingPayment {
            AcpSessionStatus::CompleteInProgress
        } else {
            AcpSessionStatus::Completed
        };
        session.messages.clear();
        session.updated_at = giftgenius_commerce::clock::rfc3339(row.updated_at_ms);
        if session.status == AcpSessionStatus::Completed {
            session.order = Some(self.order_view(&session, order));
        }
        Ok(session)
    }

    /// The `order_create` event of the session's order, now `paid`: the order the completed
    /// `session` shows (`None` when its platform takes no events).
    fn paid_event(
        &self,
        paid: &Order,
        session: &AcpCheckoutSession,
        request_id: &str,
    ) -> Result<Option<NewOrderEvent>, AcpFailure> {
        let order = session
            .order
            .clone()
            .ok_or_else(|| AcpFailure::internal(request_id, &"a completed session without its order"))?;
        let body =
            super::events::webhook_body(OrderChange::Paid, order).map_err(|e| AcpFailure::internal(request_id, &e))?;
        Ok(self.events.event_with_body(paid, OrderChange::Paid, body))
    }

    /// The ACP `Order` of a session's order (`order.rs`; its events carry the same).
    pub fn order_view(&self, session: &AcpCheckoutSession, order: &Order) -> AcpOrder {
        let links = OrderLinks {
            permalink_url: self.permalinks.url(&order.id),
            help_center_url: format!("{}/support", self.public_url),
        };
        // The order as the session shows it: its status and shipment (its row); a partial
        // refund shows in the order's events and in get_order, not here.
        acp_order(&OrderFacts::of(order.clone()), &PaidFor::of_session(session), links)
    }
}

/// How a complete request would pay: a card we charge, or a way of paying the spec defines and
/// we do not offer (answered in the session's messages, nothing charged).
enum Payment {
    Card(PaymentToken),
    NotOffered { param: &'static str, word: Word },
}

/// What a complete request pays with, or 400 with the field at fault for a request the spec
/// itself refuses (neither a card nor a purchase order, a card without its handler). We take one
/// handler, a card tokenized by delegated payment, paid when the order is placed: a purchase
/// order (alone, or beside half a card: the schema's `anyOf` accepts that as a purchase order),
/// payment terms other than `immediate` and an approval to wait for are spec-valid and
/// [`Payment::NotOffered`]; a purchase order number beside a whole card is only a reference.
fn payment(request: &AcpCompleteRequest, session_id: &str, merchant_id: &str) -> Result<Payment, AcpFailure> {
    let data = &request.payment_data;
    let card = match (&data.handler_id, &data.instrument) {
        (Some(handler_id), Some(instrument)) => Some((handler_id, instrument)),
        (_, _) if data.purchase_order_number.is_some() => None,
        (None, None) => {
            return Err(AcpFailure::field(
                "invalid",
                "$.payment_data",
                "payment_data needs handler_id and instrument (a card), or a purchase_order_number",
            ));
        }
        (None, Some(_)) => {
            return Err(AcpFailure::field(
                "invalid",
                "$.payment_data.handler_id",
                "handler_id is required with instrument",
            ));
        }
        (Some(_), None) => {
            return Err(AcpFailure::field(
                "invalid",
                "$.payment_data.instrument",
                "instrument is required with handler_id",
            ));
        }
    };
    let not_offered = |param, word| Ok(Payment::NotOffered { param, word });
    if data.payment_terms.is_some_and(|terms| terms != AcpPaymentTerms::Immediate) {
        return not_offered("$.payment_data.payment_terms", Word::TermsNotOffered);
    }
    if data.approval_required == Some(true) {
        return not_offered("$.payment_data.approval_required", Word::ApprovalNotOffered);
    }
    let Some((handler_id, instrument)) = card else {
        return not_offered("$.payment_data.purchase_order_number", Word::PurchaseOrderNotOffered);
    };
    payment_token(handler_id, instrument, session_id, merchant_id).map(Payment::Card)
}

/// The vault token of a card, with what it must pay for, or 400 with the field at fault.
fn payment_token(
    handler_id: &str,
    instrument: &AcpInstrument,
    session_id: &str,
    merchant_id: &str,
) -> Result<PaymentToken, AcpFailure> {
    if handler_id != ACP_CARD_HANDLER {
        return Err(AcpFailure::field(
            "invalid",
            "$.payment_data.handler_id",
            format!("handler_id must be {ACP_CARD_HANDLER}, the handler in capabilities.payment.handlers"),
        ));
    }
    if instrument.kind != "card" {
        return Err(AcpFailure::field("invalid", "$.payment_data.instrument.type", "instrument.type must be card"));
    }
    if instrument.credential.kind != "spt" {
        return Err(AcpFailure::field(
            "invalid",
            "$.payment_data.instrument.credential.type",
            "credential.type must be spt (a delegated-payment vault token)",
        ));
    }
    let token = instrument.credential.token.trim();
    if token.is_empty() || token.len() > 255 || !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(AcpFailure::field(
            "invalid",
            "$.payment_data.instrument.credential.token",
            "credential.token must be the vault token (vt_…) delegate_payment returned",
        ));
    }
    Ok(PaymentToken {
        token: token.to_string(),
        checkout_session_id: session_id.to_string(),
        merchant_id: merchant_id.to_string(),
    })
}

/// The order with where it goes: the session's address and its gift message (`order_notes`).
fn with_delivery(order: Order, session: &AcpCheckoutSession, state: &SessionState) -> Result<Order, serde_json::Error> {
    let Some(address) = session.fulfillment_details.as_ref().and_then(|d| d.address.as_ref()) else {
        return Ok(order);
    };
    let details = DeliveryDetails {
        recipient: Recipient {
            name: address.name.clone(),
            address: Address {
                line1: address.line_one.clone(),
                line2: address.line_two.clone(),
                city: address.city.clone(),
                region: Some(address.state.clone()).filter(|s| !s.is_empty()),
                postal_code: Some(address.postal_code.clone()).filter(|s| !s.is_empty()),
                country: address.country.clone(),
            },
        },
        gift_message: state.order_notes.clone(),
        save_address: false,
        from_saved_address: false,
    };
    Ok(Order {
        destination_city: Some(address.city.clone()),
        destination_country: Some(address.country.clone()),
        delivery: Some(serde_json::to_string(&details)?),
        ..order
    })
}

/// The days the session's gift is promised to arrive between, paid now with its selected
/// option, to its address; none (logged) if the tables cannot say.
fn promised_arrival(gift: &CatalogGift, session: &AcpCheckoutSession, now: i64) -> Option<(String, String)> {
    let country = &session.fulfillment_details.as_ref()?.address.as_ref()?.country;
    let speed = super::session::speed_of(&session.selected_fulfillment_options.first()?.option_id)?;
    arrival::promised(&[&gift.merchant.id], country, speed, now)
        .inspect_err(|e| tracing::error!(error = %e, "ACP order arrival not computed"))
        .ok()
}

/// 409: another complete of this session is charging.
fn in_progress() -> AcpFailure {
    let mut failure = AcpFailure::invalid_request(
        StatusCode::CONFLICT,
        "session_complete_in_progress",
        "Another complete of this checkout session is being processed; retry after Retry-After seconds.",
    );
    failure.retry_after_secs = Some(2);
    failure
}

/// 503: the charge's outcome is not known yet; a retry (any key) resumes it, never charging twice.
fn unavailable(detail: &str) -> AcpFailure {
    tracing::debug!(detail, "answering service_unavailable to an ACP complete");
    let mut failure = AcpFailure::new(
        StatusCode::SERVICE_UNAVAILABLE,
        AcpErrorType::ServiceUnavailable,
        "service_unavailable",
        "The payment could not be confirmed yet; nothing is charged twice. Retry the complete after Retry-After seconds.",
    );
    failure.retry_after_secs = Some(1);
    failure
}
