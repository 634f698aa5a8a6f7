//! Buying a gift: `prepare_order` (a priced, stock-checked draft and a confirmation token for
//! the widget), `commit_order` (charge once, after a human click), `get_order`, and the seed's
//! one-step `create_checkout_session`.
//!
//! commit_order runs in atomic phases, each recorded as a recovery point with its work:
//! 1. claim the idempotency key                                    -> `started`
//! 2. create the order row (pending payment), in one transaction   -> `order_created`
//! 3. charge the provider with the key `gg_<order id>`: derived from our key's order, so a
//!    retry after any crash asks the provider for the *same* charge
//! 4. mark the order paid and store the response, in one transaction -> `finished`
//!
//! A crash between any two phases is resumed by the next retry with the same key. A draft has
//! at most one live order; a commit under another key adopts it rather than creating a second.

use std::sync::Arc;
use std::time::Duration;

use giftgenius_types::envelope::ToolName;
use giftgenius_types::{
    CheckoutData, CheckoutSession, CommitOrderInput, CreateCheckoutSessionInput, Currency, Envelope, ErrorCode,
    GetOrderInput, Money, Order, OrderData, OrderDraft, OrderStatus, PrepareOrderData, PrepareOrderInput,
    ShippingSpeed, ToolError,
};
use hmac::{Hmac, Mac};
use rmcp::model::CallToolResult;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::catalog::{Catalog, CatalogGift, price_in};
use crate::clock::{Clock, rfc3339};
use crate::failpoints::{self, Failpoints};
use crate::idempotency::{Begin, Idempotency, RecoveryPoint, StoredResponse, fingerprint};
use crate::payments::{PaymentError, SandboxPayments};
use crate::reply::{error_result, tool_result};
use crate::store::{CheckoutRow, CreateOrder, DraftRow, OrderRow, Scope, Store, StoreError};

/// Where the widget finds the confirmation token in a prepare_order result's `_meta`.
pub const CONFIRMATION_TOKEN_META: &str = "giftgenius/confirmation_token";

/// The checkout service: everything the order tools need.
pub struct Checkout {
    pub store: Arc<dyn Store>,
    pub catalog: Arc<Catalog>,
    pub payments: Arc<SandboxPayments>,
    pub idempotency: Idempotency,
    pub failpoints: Failpoints,
    pub clock: Clock,
    pub draft_ttl: Duration,
    pub public_url: String,
    /// Key for confirmation tokens; shared by replicas through the database.
    pub token_secret: Vec<u8>,
}

impl std::fmt::Debug for Checkout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkout").finish_non_exhaustive()
    }
}

/// Result of a phase: either the final answer (already stored when definitive) or an error.
type Phase<T> = Result<T, CallToolResult>;

fn tool_of(scope: &Scope) -> ToolName {
    ToolName::parse(scope.tool).unwrap_or(ToolName::CommitOrder)
}

fn random_id(prefix: &str) -> String {
    format!("{prefix}_{}", &uuid::Uuid::new_v4().simple().to_string()[..20])
}

pub fn money_of(amount_minor: i64, currency: &str) -> Money {
    Money::new(amount_minor, currency_of(currency))
}

fn currency_of(code: &str) -> Currency {
    serde_json::from_value(Value::String(code.to_string())).unwrap_or_default()
}

fn shipping_cost(speed: ShippingSpeed, currency: Currency) -> Money {
    match speed {
        ShippingSpeed::Standard => Money::new(0, currency),
        ShippingSpeed::Express => price_in(1200, currency),
    }
}

pub fn order_of(row: &OrderRow) -> Order {
    Order {
        id: row.id.clone(),
        draft_id: row.draft_id.clone(),
        gift_id: row.gift_id.clone(),
        gift_title: row.gift_title.clone(),
        merchant: row.merchant.clone(),
        quantity: row.quantity as u32,
        total: Money::new(row.total_minor, currency_of(&row.currency)),
        status: OrderStatus::parse(&row.status).unwrap_or(OrderStatus::PendingPayment),
        created_at: rfc3339(row.created_at_ms),
    }
}

fn order_summary(order: &Order) -> String {
    let status = match order.status {
        OrderStatus::Paid => "placed and paid",
        OrderStatus::PendingPayment => "waiting for payment confirmation",
        OrderStatus::PaymentDeclined => "not placed: the payment was declined",
    };
    format!(
        "Order {} {}: {} × {} from {}, total {}.",
        order.id,
        status,
        order.quantity,
        order.gift_title,
        order.merchant,
        order.total.display()
    )
}

fn order_result(tool: ToolName, row: &OrderRow) -> CallToolResult {
    let order = order_of(row);
    let text = order_summary(&order);
    tool_result(&Envelope::ok(tool, OrderData { order }), || text, Map::new())
}

impl Checkout {
    fn now(&self) -> i64 {
        self.clock.now_ms()
    }

    /// HMAC of (draft, subject): proves the caller saw this draft's confirmation card.
    pub fn confirmation_token(&self, draft_id: &str, subject: &str) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.token_secret).expect("HMAC takes any key length");
        mac.update(format!("confirm\n{draft_id}\n{subject}").as_bytes());
        format!("ct_{}", hex::encode(mac.finalize().into_bytes()))
    }

    fn token_is_valid(&self, token: &str, draft_id: &str, subject: &str) -> bool {
        let Some(hex_part) = token.strip_prefix("ct_") else { return false };
        let Ok(bytes) = hex::decode(hex_part) else { return false };
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.token_secret).expect("HMAC takes any key length");
        mac.update(format!("confirm\n{draft_id}\n{subject}").as_bytes());
        mac.verify_slice(&bytes).is_ok()
    }

    fn internal(&self, tool: ToolName, reference: &str, e: &dyn std::fmt::Display) -> CallToolResult {
        error_result(tool, crate::error::internal(reference, tool.as_str(), e))
    }

    /// In-stock gifts like `gift` (shared tags, similar price), as cards for `partial_results`.
    fn alternatives(&self, gift: &CatalogGift, currency: Currency) -> Vec<Value> {
        let mut candidates: Vec<(i64, &CatalogGift)> = self
            .catalog
            .gifts()
            .iter()
            .filter(|g| g.id != gift.id && g.stock > 0)
            .map(|g| {
                let shared = g.tags.iter().filter(|t| gift.tags.contains(t)).count() as i64;
                let price_gap = (g.price_cents - gift.price_cents).abs() / 500;
                (shared * 10 - price_gap, g)
            })
            .filter(|(score, _)| *score > 0)
            .collect();
        candidates.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.id.cmp(&b.1.id)));
        candidates
            .into_iter()
            .take(3)
            .map(|(_, g)| {
                let card = g.card(currency, vec![format!("Similar to {}", gift.title)], &self.public_url);
                serde_json::to_value(card).unwrap_or(Value::Null)
            })
            .collect()
    }

    fn unavailable(&self, gift: &CatalogGift, currency: Currency, reference: &str) -> ToolError {
        let alternatives = self.alternatives(gift, currency);
        ToolError::new(ErrorCode::GiftUnavailable, format!("{} is out of stock.", gift.title), reference)
            .with_partial_results(alternatives)
    }

    // ----- prepare_order -------------------------------------------------------------------

    pub async fn prepare_order(&self, subject: &str, input: &PrepareOrderInput, reference: &str) -> CallToolResult {
        let tool = ToolName::PrepareOrder;
        let Some(gift) = self.catalog.get(&input.gift_id) else {
            let error = ToolError::new(
                ErrorCode::GiftNotFound,
                format!("There is no gift with id {}.", input.gift_id),
                reference,
            );
            return error_result(tool, error);
        };
        let sold = match self.store.units_sold(&gift.id).await {
            Ok(n) => n,
            Err(e) => return self.internal(tool, reference, &e),
        };
        if sold + input.quantity > gift.stock as i64 {
            return error_result(tool, self.unavailable(gift, input.currency, reference));
        }
        let now = self.now();
        let unit = price_in(gift.price_cents, input.currency);
        let quantity = input.quantity as u32;
        let subtotal = unit.times(quantity).unwrap_or(unit);
        let shipping = shipping_cost(input.shipping, input.currency);
        let total = Money::new(subtotal.amount_minor + shipping.amount_minor, input.currency);
        let draft_key = hex::encode(Sha256::digest(
            format!("{}\n{}\n{}\n{}", gift.id, quantity, input.shipping.as_str(), input.currency).as_bytes(),
        ));
        let candidate = DraftRow {
            id: random_id("drf"),
            subject: subject.to_string(),
            draft_key,
            gift_id: gift.id.clone(),
            quantity: quantity as i64,
            shipping: input.shipping.as_str().to_string(),
            currency: input.currency.code().to_string(),
            subtotal_minor: subtotal.amount_minor,
            shipping_minor: shipping.amount_minor,
            total_minor: total.amount_minor,
            created_at_ms: now,
            expires_at_ms: now + self.draft_ttl.as_millis() as i64,
        };
        let row = match self.store.draft_for_request(&candidate, now).await {
            Ok(row) => row,
            Err(e) => return self.internal(tool, reference, &e),
        };
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
        let text = format!(
            "Draft {} ready: {} × {} from {}, total {} (shipping {}). Nothing is bought yet: the user must review it and press Confirm in the widget. The draft expires at {}.",
            draft.id,
            draft.quantity,
            draft.gift.title,
            draft.gift.merchant.name,
            draft.total.display(),
            draft.shipping_cost.display(),
            draft.expires_at
        );
        let mut meta = Map::new();
        // Widget-only: hosts hand `_meta` to the widget, never to the model.
        meta.insert(CONFIRMATION_TOKEN_META.into(), json!(self.confirmation_token(&row.id, subject)));
        tool_result(&Envelope::ok(tool, PrepareOrderData { draft }), || text, meta)
    }

    // ----- commit_order --------------------------------------------------------------------

    pub async fn commit_order(
        &self,
        subject: &str,
        input: &CommitOrderInput,
        arguments: &Map<String, Value>,
        reference: &str,
    ) -> CallToolResult {
        let tool = ToolName::CommitOrder;
        if !self.token_is_valid(&input.confirmation_token, &input.draft_id, subject) {
            let error = ToolError::new(
                ErrorCode::ConfirmationRequired,
                "This purchase has not been confirmed by the user. Only the Confirm button in the GiftGenius widget can place the order.",
                reference,
            );
            return error_result(tool, error);
        }
        let scope = Scope { subject: subject.to_string(), tool: tool.as_str(), key: input.idempotency_key.clone() };
        let fp = fingerprint(arguments, "idempotency_key");
        let (resume_from, order_id) = match self.idempotency.begin(self.store.as_ref(), &scope, &fp, reference).await {
            Ok(Begin::Proceed { resume_from, order_id }) => (resume_from, order_id),
            Ok(Begin::Replay(result)) => return result,
            Ok(Begin::Reject(error)) => return error_result(tool, error),
            Err(e) => return self.internal(tool, reference, &e),
        };
        self.failpoints.hit(failpoints::AFTER_KEY_CLAIMED);
        match self.run_commit(&scope, input, resume_from, order_id, reference).await {
            Ok(result) | Err(result) => result,
        }
    }

    /// Finishes the key with a definitive result and returns it.
    async fn finish(&self, scope: &Scope, result: CallToolResult, reference: &str) -> CallToolResult {
        let stored = StoredResponse::from_result(&result).to_json();
        match self.store.finish_key(scope, &stored, self.now()).await {
            Ok(()) => result,
            Err(e) => self.internal(tool_of(scope), reference, &e),
        }
    }

    /// Drops the lease so the retry resumes, and returns a transient error.
    async fn transient(&self, scope: &Scope, error: ToolError) -> CallToolResult {
        if let Err(e) = self.store.release_key(scope, self.now()).await {
            tracing::warn!(reference = error.reference, error = %e, "could not release an idempotency key; its lease will expire");
        }
        error_result(tool_of(scope), error)
    }

    async fn internal_released(&self, scope: &Scope, reference: &str, e: &StoreError) -> CallToolResult {
        let _ = self.store.release_key(scope, self.now()).await;
        self.internal(tool_of(scope), reference, e)
    }

    async fn create_order_phase(&self, scope: &Scope, input: &CommitOrderInput, reference: &str) -> Phase<OrderRow> {
        let tool = ToolName::CommitOrder;
        let draft = match self.store.draft(&scope.subject, &input.draft_id).await {
            Ok(Some(draft)) => draft,
            Ok(None) => {
                let error = ToolError::new(
                    ErrorCode::DraftNotFound,
                    format!("There is no draft {}.", input.draft_id),
                    reference,
                );
                return Err(self.finish(scope, error_result(tool, error), reference).await);
            }
            Err(e) => return Err(self.internal_released(scope, reference, &e).await),
        };
        let now = self.now();
        // A draft that was already bought answers with its order even after it expired (a
        // late retry whose key was pruned must not be told the purchase failed).
        let paid = match self.store.live_order_for_draft(&draft.id).await {
            Ok(order) => order.filter(|o| o.status == OrderStatus::Paid.as_str()),
            Err(e) => return Err(self.internal_released(scope, reference, &e).await),
        };
        if let Some(order) = paid {
            return Err(self.finish(scope, order_result(tool, &order), reference).await);
        }
        if draft.expires_at_ms <= now {
            let error = ToolError::new(
                ErrorCode::DraftExpired,
                format!(
                    "Draft {} expired at {}; prepare a fresh one and confirm again.",
                    draft.id,
                    rfc3339(draft.expires_at_ms)
                ),
                reference,
            );
            return Err(self.finish(scope, error_result(tool, error), reference).await);
        }
        let currency = currency_of(&draft.currency);
        let Some(gift) = self.catalog.get(&draft.gift_id) else {
            let error = ToolError::new(ErrorCode::GiftUnavailable, "This gift is no longer sold.", reference);
            return Err(self.finish(scope, error_result(tool, error), reference).await);
        };
        let row = OrderRow {
            id: random_id("ord"),
            subject: scope.subject.clone(),
            draft_id: draft.id.clone(),
            gift_id: gift.id.clone(),
            gift_title: gift.title.clone(),
            merchant: gift.merchant().name,
            quantity: draft.quantity,
            currency: draft.currency.clone(),
            total_minor: draft.total_minor,
            status: OrderStatus::PendingPayment.as_str().into(),
            charge_id: None,
            created_at_ms: now,
        };
        match self.store.create_order(scope, &row, gift.stock as i64, now).await {
            Ok(CreateOrder::Created) => Ok(row),
            Ok(CreateOrder::OutOfStock) => {
                let error = self.unavailable(gift, currency, reference);
                Err(self.finish(scope, error_result(tool, error), reference).await)
            }
            Ok(CreateOrder::DraftAlreadyOrdered(existing)) if existing.status == OrderStatus::Paid.as_str() => {
                // The draft was bought under another key: answer with that order, never a second one.
                Err(self.finish(scope, order_result(tool, &existing), reference).await)
            }
            Ok(CreateOrder::DraftAlreadyOrdered(existing)) => {
                // Another key created this draft's order and has not finished it; its caller may
                // be gone for good (a reloaded widget that lost its key). The provider key belongs
                // to the order, not to either idempotency key, so finishing it under ours can only
                // ever find the same charge.
                match self.store.adopt_order(scope, &existing.id, self.now()).await {
                    Ok(()) => Ok(*existing),
                    Err(e) => Err(self.internal_released(scope, reference, &e).await),
                }
            }
            Err(e) => Err(self.internal_released(scope, reference, &e).await),
        }
    }

    async fn run_commit(
        &self,
        scope: &Scope,
        input: &CommitOrderInput,
        resume_from: RecoveryPoint,
        order_id: Option<String>,
        reference: &str,
    ) -> Phase<CallToolResult> {
        let tool = ToolName::CommitOrder;
        let order = match (resume_from, order_id) {
            (RecoveryPoint::OrderCreated, Some(id)) => match self.store.order_by_id(&id).await {
                Ok(Some(order)) => order,
                Ok(None) => {
                    return Err(self
                        .internal_released(scope, reference, &StoreError(format!("order {id} vanished")))
                        .await);
                }
                Err(e) => return Err(self.internal_released(scope, reference, &e).await),
            },
            _ => {
                let order = self.create_order_phase(scope, input, reference).await?;
                self.failpoints.hit(failpoints::AFTER_ORDER_CREATED);
                order
            }
        };
        let amount = Money::new(order.total_minor, currency_of(&order.currency));
        let payment_key = format!("gg_{}", order.id);
        let description = format!("GiftGenius order {}: {} × {}", order.id, order.quantity, order.gift_title);
        match self.payments.charge(&payment_key, amount, &description).await {
            Ok(charge) => {
                self.failpoints.hit(failpoints::AFTER_PAYMENT_CHARGED);
                let paid =
                    OrderRow { status: OrderStatus::Paid.as_str().into(), charge_id: Some(charge.id.clone()), ..order };
                let result = order_result(tool, &paid);
                let stored = StoredResponse::from_result(&result).to_json();
                if let Err(e) = self.store.mark_paid_and_finish(scope, &paid.id, &charge.id, &stored, self.now()).await
                {
                    return Err(self.internal_released(scope, reference, &e).await);
                }
                self.failpoints.hit(failpoints::AFTER_RESPONSE_STORED);
                tracing::info!(reference, order = paid.id, charge = charge.id, "order paid");
                Ok(result)
            }
            Err(PaymentError::Declined) => {
                let error = ToolError::new(
                    ErrorCode::PaymentDeclined,
                    "The payment was declined; nothing was charged. The user may try another payment method.",
                    reference,
                );
                let result = error_result(tool, error);
                let stored = StoredResponse::from_result(&result).to_json();
                match self.store.mark_declined_and_finish(scope, &order.id, &stored, self.now()).await {
                    Ok(()) => Ok(result),
                    Err(e) => Err(self.internal_released(scope, reference, &e).await),
                }
            }
            Err(PaymentError::Unavailable(detail)) => {
                tracing::warn!(reference, order = order.id, detail, "payment provider unavailable");
                let error = ToolError::new(
                    ErrorCode::PaymentProviderUnavailable,
                    "The payment provider did not answer. Nothing was charged twice: try again with the same key.",
                    reference,
                )
                .with_retry_after_ms(1000);
                Err(self.transient(scope, error).await)
            }
            Err(PaymentError::KeyMismatch) => Err(self
                .internal_released(
                    scope,
                    reference,
                    &StoreError(format!("provider key {payment_key} reused with another amount")),
                )
                .await),
        }
    }

    // ----- get_order -----------------------------------------------------------------------

    pub async fn get_order(&self, subject: &str, input: &GetOrderInput, reference: &str) -> CallToolResult {
        let tool = ToolName::GetOrder;
        match self.store.order(subject, &input.order_id).await {
            Ok(Some(row)) => order_result(tool, &row),
            Ok(None) => error_result(
                tool,
                ToolError::new(
                    ErrorCode::OrderNotFound,
                    format!("There is no order {} for this user.", input.order_id),
                    reference,
                ),
            ),
            Err(e) => self.internal(tool, reference, &e),
        }
    }

    // ----- create_checkout_session ---------------------------------------------------------

    pub async fn create_checkout_session(
        &self,
        subject: &str,
        input: &CreateCheckoutSessionInput,
        arguments: &Map<String, Value>,
        reference: &str,
    ) -> CallToolResult {
        let tool = ToolName::CreateCheckoutSession;
        let scope = Scope { subject: subject.to_string(), tool: tool.as_str(), key: input.idempotency_key.clone() };
        let fp = fingerprint(arguments, "idempotency_key");
        match self.idempotency.begin(self.store.as_ref(), &scope, &fp, reference).await {
            Ok(Begin::Proceed { .. }) => {}
            Ok(Begin::Replay(result)) => return result,
            Ok(Begin::Reject(error)) => return error_result(tool, error),
            Err(e) => return self.internal(tool, reference, &e),
        }
        let definitive = |error: ToolError| error_result(tool, error);
        let Some(gift) = self.catalog.get(&input.gift_id) else {
            let error = ToolError::new(
                ErrorCode::GiftNotFound,
                format!("There is no gift with id {}.", input.gift_id),
                reference,
            );
            return self.finish(&scope, definitive(error), reference).await;
        };
        let sold = match self.store.units_sold(&gift.id).await {
            Ok(n) => n,
            Err(e) => return self.internal_released(&scope, reference, &e).await,
        };
        if sold >= gift.stock as i64 {
            let error = self.unavailable(gift, input.currency, reference);
            return self.finish(&scope, definitive(error), reference).await;
        }
        let now = self.now();
        let row = CheckoutRow {
            id: random_id("cs"),
            subject: subject.to_string(),
            gift_id: gift.id.clone(),
            currency: input.currency.code().to_string(),
            amount_minor: price_in(gift.price_cents, input.currency).amount_minor,
            created_at_ms: now,
            expires_at_ms: now + self.draft_ttl.as_millis() as i64,
        };
        let session = CheckoutSession {
            id: row.id.clone(),
            gift_id: gift.id.clone(),
            amount: Money::new(row.amount_minor, input.currency),
            checkout_url: format!("{}/checkout/{}", self.public_url, row.id),
            expires_at: rfc3339(row.expires_at_ms),
        };
        let text = format!(
            "Checkout session {} for {} ({}). Give the user this link to pay: {} (it expires at {}). Nothing is charged until the user pays on that page.",
            session.id,
            gift.title,
            session.amount.display(),
            session.checkout_url,
            session.expires_at
        );
        let result = tool_result(&Envelope::ok(tool, CheckoutData { checkout: session }), || text, Map::new());
        let stored = StoredResponse::from_result(&result).to_json();
        match self.store.create_checkout_and_finish(&scope, &row, &stored, now).await {
            Ok(()) => result,
            Err(e) => self.internal_released(&scope, reference, &e).await,
        }
    }
}
