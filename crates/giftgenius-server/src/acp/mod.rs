//! GiftGenius as an Agentic Commerce Protocol merchant (issue 25, docs/acp.md): the checkout
//! REST API at `/acp/checkout_sessions` for the agent platforms of `--acp-platforms`, the same
//! operations as MCP tools at `/acp/mcp`, and `/.well-known/acp.json`. Sessions go
//! `not_ready_for_payment` ⇄ `ready_for_payment` → `completed` (paid with a delegated-payment
//! vault token) / `canceled` / `expired`.
//!
//! - `buyer_data.rs`: deleting an ACP buyer's personal data (which sessions are theirs).
//! - `platforms.rs`: the platforms and their bearer keys (hashed, compared in constant time).
//! - `routes.rs`: each operation once, for both transports (the key's claim and its answers:
//!   replay, 409, 422; the work; the fenced finish), and the REST side: header checks in the
//!   documented order, the body limit and the response headers.
//! - `mcp/`: the MCP binding: `{meta, id, payload}` tool arguments onto the same operations.
//! - `session.rs`: what a session is made of and how it is shown (prices, stock, options,
//!   totals, messages, status) from the catalog.
//! - `complete.rs`: paying a ready session and placing its order, exactly once.
//! - `order.rs`: the ACP `Order` of one of our orders (the complete answer's, every event's).
//! - `fingerprint.rs`: the `acp1` canonical body fingerprint.
//! - `words.rs`: the session's human text in English, Spanish and Portuguese.
//! - `error.rs`: the one error, [`error::AcpFailure`], as ACP's `Error` object.
//!
//! The work of each POST runs here, between the routes' key claim and the store step that
//! writes the session and finishes the key in one transaction.

pub mod buyer_data;
pub mod complete;
pub mod error;
pub mod events;
pub mod fingerprint;
pub mod mcp;
pub mod order;
pub mod platforms;
pub mod routes;
pub mod session;
pub mod words;

use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use giftgenius_types::acp::{
    AcpCancelRequest, AcpCheckoutSession, AcpCreateRequest, AcpPatch, AcpSessionStatus, AcpUpdateRequest,
};

use crate::permalink::Permalinks;
use error::AcpFailure;
use giftgenius_catalog::live::LiveCatalog;
use giftgenius_commerce::clock::Clock;
use giftgenius_commerce::order::Order;
use giftgenius_commerce::payments::Payments;
use giftgenius_commerce::store::{NewOrderEvent, OrderStatusColumn, PlatformSessionRow, Store};
use platforms::Platforms;
use session::{Offer, SessionState, Stored};

/// The ACP merchant: built once at startup when `--acp-platforms` is given.
#[derive(Debug)]
pub struct Acp {
    pub store: Store,
    pub catalog: Arc<LiveCatalog>,
    pub clock: Clock,
    pub platforms: Platforms,
    /// Base URL clients reach us at (no trailing slash).
    pub public_url: String,
    /// `--acp-session-ttl`.
    pub session_ttl: Duration,
    /// The idempotency keys (shared with the tools: one claim, one lease, one count).
    pub keys: giftgenius_commerce::idempotency::Idempotency,
    /// `--acp-tax-bps`: tax by destination country (none listed: no tax line).
    pub tax_rates: session::TaxRates,
    /// `--acp-merchant-id`: what a vault token's allowance must name.
    pub merchant_id: String,
    /// The payment provider that charges vault tokens.
    pub payments: Arc<Payments>,
    /// Every order's status page link.
    pub permalinks: Arc<Permalinks>,
    /// Where a test may kill the process mid-complete (`--failpoints`).
    pub failpoints: giftgenius_commerce::failpoints::Failpoints,
    /// How long a session is kept after it expired (the idempotency keys' retention, so a
    /// replayed answer never names a session that is gone sooner than the key).
    pub retention: Duration,
    /// Builds the `order_create` event a paid session's order writes with its payment.
    pub events: Arc<giftgenius_commerce::outbox::OrderEvents>,
    /// Key claims and refused platform keys (`/metrics`).
    pub metrics: Arc<crate::metrics::Metrics>,
}

/// What a POST did: the answer's status and session, and what to write with the key's answer.
#[derive(Debug)]
pub struct Done {
    pub status: StatusCode,
    pub session: AcpCheckoutSession,
    pub write: SessionWrite,
}

/// What is written in the transaction that stores a POST's answer.
#[derive(Debug)]
pub enum SessionWrite {
    /// Nothing changed.
    Nothing,
    /// The session row, as it is now.
    Session(PlatformSessionRow),
    /// The session's order was charged: it is paid, and announces itself with `event` (when
    /// its platform takes events).
    Paid { order_id: String, charge_id: String, event: Option<NewOrderEvent> },
    /// The session's order was declined (or its token refused): its stock is free again.
    Declined { order_id: String },
}

impl Acp {
    /// `POST /acp/checkout_sessions`; `accept_language` (the header, `meta.accept_language`)
    /// picks the session's language when the body names no `locale`.
    pub async fn create(
        &self,
        platform: &str,
        request: AcpCreateRequest,
        accept_language: Option<&str>,
        request_id: &str,
    ) -> Result<Done, AcpFailure> {
        self.failpoints
            .panic_if(giftgenius_commerce::failpoints::ACP_CREATE_PANICS, request.order_notes.as_deref().unwrap_or(""));
        let currency = session::currency(&request.currency)?;
        session::check_items(&request.line_items, |id| self.catalog.get(id).is_some())?;
        let discount_codes = match request.discounts {
            Some(discounts) => session::check_codes(discounts.codes, "$.discounts.codes")?,
            None => Vec::new(),
        };
        let coupon_codes = session::check_codes(request.coupons.unwrap_or_default(), "$.coupons")?;
        let language = words::session_lang(request.locale.as_deref(), accept_language).code().to_string();
        let state = SessionState {
            currency,
            discount_codes,
            coupon_codes,
            items: request.line_items,
            fulfillment_details: request.fulfillment_details,
            buyer: request.buyer,
            selected_option: None,
            other_fulfillment: Vec::new(),
            order_notes: request.order_notes,
            metadata: request.metadata,
            locale: request.locale,
            language: Some(language),
            intent_trace: None,
            at_payment: None,
        };
        let now = self.clock.now_ms();
        let id = format!("acs_{}", &uuid::Uuid::new_v4().simple().to_string()[..20]);
        let mut row = PlatformSessionRow {
            id,
            platform: platform.to_string(),
            status: String::new(),
            state: String::new(),
            created_at_ms: now,
            updated_at_ms: now,
            expires_at_ms: now.saturating_add(self.session_ttl.as_millis() as i64),
        };
        let session = self.show_state(&row, AcpSessionStatus::NotReadyForPayment, &state, request_id).await?;
        self.fill_row(&mut row, session.status, &state, request_id)?;
        Ok(Done { status: StatusCode::CREATED, session, write: SessionWrite::Session(row) })
    }

    /// Deletes sessions expired longer than the retention ago; returns how many.
    pub async fn prune(&self) -> giftgenius_commerce::store::StoreResult<u64> {
        let before = self.clock.now_ms().saturating_sub(self.retention.as_millis() as i64);
        self.store.prune_platform_sessions(before).await
    }

    /// `GET /acp/checkout_sessions/{id}`.
    pub async fn get(&self, platform: &str, id: &str, request_id: &str) -> Result<AcpCheckoutSession, AcpFailure> {
        let (row, status, state) = self.load(platform, id, request_id).await?;
        match self.order_of(id, request_id).await? {
            Some(order) => self.completed(&row, &state, &order, request_id).await,
            None => self.show_state(&row, status, &state, request_id).await,
        }
    }

    /// `POST /acp/checkout_sessions/{id}`: absent fields stay, `null` clears, values replace.
    pub async fn update(
        &self,
        platform: &str,
        id: &str,
        request: AcpUpdateRequest,
        request_id: &str,
    ) -> Result<Done, AcpFailure> {
        let (mut row, status, mut state) = self.load(platform, id, request_id).await?;
        self.refuse_if_ordered(id, "session_completed", request_id).await?;
        let now = self.clock.now_ms();
        if let Some(done) = self.closed(&mut row, status, &state, now, request_id).await? {
            return Ok(done);
        }
        match request.line_items {
            AcpPatch::Absent => {}
            AcpPatch::Null => {
                return Err(AcpFailure::field("invalid", "$.line_items", "line_items cannot be cleared"));
            }
            AcpPatch::Value(items) => {
                session::check_items(&items, |id| self.catalog.get(id).is_some())?;
                state.items = items;
            }
        }
        patch(&mut state.buyer, request.buyer);
        patch(&mut state.fulfillment_details, request.fulfillment_details);
        patch(&mut state.order_notes, request.order_notes);
        if let Some(discounts) = request.discounts {
            state.discount_codes = session::check_codes(discounts.codes, "$.discounts.codes")?;
        }
        if let Some(coupons) = request.coupons {
            state.coupon_codes = session::check_codes(coupons, "$.coupons")?;
        }
        match request.selected_fulfillment_options {
            AcpPatch::Absent => {}
            AcpPatch::Null => {
                state.selected_option = None;
                state.other_fulfillment.clear();
            }
            AcpPatch::Value(selected) => {
                (state.selected_option, state.other_fulfillment) =
                    session::check_selection(&selected, &session::lines(&state.items))?;
            }
        }
        row.updated_at_ms = now;
        let session = self.show_state(&row, status, &state, request_id).await?;
        self.fill_row(&mut row, session.status, &state, request_id)?;
        Ok(Done { status: StatusCode::OK, session, write: SessionWrite::Session(row) })
    }

    /// `POST /acp/checkout_sessions/{id}/cancel`.
    pub async fn cancel(
        &self,
        platform: &str,
        id: &str,
        request: AcpCancelRequest,
        request_id: &str,
    ) -> Result<Done, AcpFailure> {
        let (mut row, status, mut state) = self.load(platform, id, request_id).await?;
        self.refuse_if_ordered(id, "session_not_cancelable", request_id).await?;
        let now = self.clock.now_ms();
        if status.is_final() || now >= row.expires_at_ms {
            return Err(AcpFailure::not_allowed(
                "session_not_cancelable",
                "This checkout session is already canceled or expired.",
            ));
        }
        state.intent_trace = request.intent_trace;
        row.updated_at_ms = now;
        let session = self.show_state(&row, AcpSessionStatus::Canceled, &state, request_id).await?;
        self.fill_row(&mut row, AcpSessionStatus::Canceled, &state, request_id)?;
        Ok(Done { status: StatusCode::OK, session, write: SessionWrite::Session(row) })
    }

    /// For a request that would change the session: 405 `session_canceled` once it is canceled;
    /// once it is past `expires_at`, the answer is the session as it is, marked expired (and
    /// stored so), and the request is ignored. `None`: the session is open.
    async fn closed(
        &self,
        row: &mut PlatformSessionRow,
        status: AcpSessionStatus,
        state: &SessionState,
        now_ms: i64,
        request_id: &str,
    ) -> Result<Option<Done>, AcpFailure> {
        if status == AcpSessionStatus::Canceled {
            return Err(AcpFailure::not_allowed("session_canceled", "This checkout session was canceled."));
        }
        if status != AcpSessionStatus::Expired && now_ms < row.expires_at_ms {
            return Ok(None);
        }
        let session = self.show_state(row, AcpSessionStatus::Expired, state, request_id).await?;
        self.fill_row(row, AcpSessionStatus::Expired, state, request_id)?;
        Ok(Some(Done { status: StatusCode::OK, session, write: SessionWrite::Session(row.clone()) }))
    }

    /// The session's order (pending or paid; a declined attempt is no order), if any.
    async fn order_of(&self, id: &str, request_id: &str) -> Result<Option<Order>, AcpFailure> {
        self.store.live_order_for_draft(id).await.map_err(|e| AcpFailure::internal(request_id, &e))
    }

    /// 405 `completed_code` once the session has an order; 409 while one is being charged.
    async fn refuse_if_ordered(&self, id: &str, completed_code: &str, request_id: &str) -> Result<(), AcpFailure> {
        match self.order_of(id, request_id).await? {
            None => Ok(()),
            Some(order) if order.status == OrderStatusColumn::PendingPayment => {
                let mut failure = AcpFailure::invalid_request(
                    StatusCode::CONFLICT,
                    "session_complete_in_progress",
                    "This checkout session is being paid; retry after Retry-After seconds.",
                );
                failure.retry_after_secs = Some(2);
                Err(failure)
            }
            Some(_) => Err(AcpFailure::not_allowed(completed_code, "This checkout session is completed.")),
        }
    }

    /// The session `id` of `platform` (another platform's is not found), its stored status and state.
    pub(super) async fn load(
        &self,
        platform: &str,
        id: &str,
        request_id: &str,
    ) -> Result<(PlatformSessionRow, AcpSessionStatus, SessionState), AcpFailure> {
        let row = self.store.platform_session(id, platform).await.map_err(|e| AcpFailure::internal(request_id, &e))?;
        let row = row.ok_or_else(AcpFailure::session_not_found)?;
        let status = AcpSessionStatus::parse(&row.status)
            .ok_or_else(|| AcpFailure::internal(request_id, &format!("session {id} has status {:?}", row.status)))?;
        let state: SessionState = serde_json::from_str(&row.state).map_err(|e| AcpFailure::internal(request_id, &e))?;
        Ok((row, status, state))
    }

    /// The session as shown now, from `row`'s times, `status` and `state`.
    pub(super) async fn show_state(
        &self,
        row: &PlatformSessionRow,
        status: AcpSessionStatus,
        state: &SessionState,
        request_id: &str,
    ) -> Result<AcpCheckoutSession, AcpFailure> {
        let mut offers = Vec::new();
        for line in session::lines(&state.items) {
            let offer = match self.catalog.get(&line.gift_id) {
                Some(gift) => {
                    let sold =
                        self.store.units_sold(&gift.id).await.map_err(|e| AcpFailure::internal(request_id, &e))?;
                    Some(Offer { available: i64::from(gift.stock) - sold, gift })
                }
                None => None,
            };
            offers.push(offer);
        }
        let stored = Stored {
            id: &row.id,
            status,
            state,
            created_at_ms: row.created_at_ms,
            updated_at_ms: row.updated_at_ms,
            expires_at_ms: row.expires_at_ms,
        };
        let merchant =
            session::Merchant { id: &self.merchant_id, public_url: &self.public_url, tax_rates: &self.tax_rates };
        Ok(session::show(&stored, &offers, &merchant, self.clock.now_ms()))
    }

    pub(super) fn fill_row(
        &self,
        row: &mut PlatformSessionRow,
        status: AcpSessionStatus,
        state: &SessionState,
        request_id: &str,
    ) -> Result<(), AcpFailure> {
        row.status = status.as_str().to_string();
        row.state = serde_json::to_string(state).map_err(|e| AcpFailure::internal(request_id, &e))?;
        Ok(())
    }
}

/// Applies an update field: absent keeps, `null` clears, a value replaces.
fn patch<T>(field: &mut Option<T>, update: AcpPatch<T>) {
    match update {
        AcpPatch::Absent => {}
        AcpPatch::Null => *field = None,
        AcpPatch::Value(value) => *field = Some(value),
    }
}
