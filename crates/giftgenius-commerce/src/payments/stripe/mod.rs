//! The Stripe provider (`--payments stripe`): Stripe's REST API behind [`PaymentProvider`].
//!
//! - **Customers** (`customer_for`): each subject's Stripe Customer, created on the first need
//!   with an idempotency key derived from the subject and kept in `accounts` (the first one
//!   recorded wins, so two replicas end up charging the same Customer).
//! - **Charge**: one PaymentIntent per order, created and confirmed in one call (`amount`,
//!   `currency`, `customer`, the saved `payment_method`, `off_session=true`, `confirm=true`,
//!   `metadata[order_id]`) under our provider key as Stripe's `Idempotency-Key`. Before creating
//!   one we look for the order's PaymentIntent among the Customer's (the reconciler's lookup), so
//!   a retry after a lost answer finds the first one even where idempotency keys are not replayed
//!   (localstripe ignores them; Stripe keeps them 24 hours). The lease and the order's charging
//!   window (`commit.rs`) already keep a second request from starting while one may be in flight.
//! - **Declines** (402) are `PaymentError::Declined`; Stripe's code and decline code are logged
//!   here and go nowhere else.
//! - **Saved cards** (`cards.rs`): which card pays, saving one through a SetupIntent confirmed
//!   by Stripe.js on the hosted card page, removing them. An account with none is
//!   `PaymentError::NoSavedCard` before anything is asked of Stripe (not a decline: no bank said
//!   no, and the person's next step is to add a card, not to try another).
//! - **Lookup**: the Customer's Charges with their PaymentIntent expanded, the one whose
//!   `metadata[order_id]` is ours (localstripe's PaymentIntent list takes no `customer` filter;
//!   its Charge list does, as Stripe's).
//! - **Refund**: `POST /v1/refunds` for the PaymentIntent under the refund's own key, which also
//!   goes into the refund's metadata: a refund already made under the key is found first.
//!
//! The secret key is sent as `Authorization: Bearer` (a header marked sensitive) and is never in
//! a log line, a span, an answer or an error: errors carry Stripe's status, type and code only.

pub mod cards;
pub mod signature;
pub mod wire;

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use giftgenius_types::{Currency, Money};
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use sha2::{Digest, Sha256};

use crate::clock::Clock;
use crate::payments::{
    Authentication, Charge, ChargeRequest, Lookup, OrderCharge, PaymentError, PaymentProvider, ProviderRefund,
};
use crate::store::Store;
use wire::{ErrorBody, List, PaymentIntent, form};

/// Stripe's idempotency header.
const IDEMPOTENCY_KEY: &str = "Idempotency-Key";
/// The metadata key of our order id on a PaymentIntent.
pub const ORDER_ID: &str = "order_id";
/// The metadata key of our refund key on a Refund.
const REFUND_KEY: &str = "giftgenius_refund_key";
/// Stripe's largest page.
const PAGE: &str = "100";

/// Stripe's REST API for the checkout.
pub struct StripeClient {
    http: reqwest::Client,
    /// Base URL, no trailing slash.
    base: String,
    store: Store,
    clock: Clock,
    /// `--stripe-publishable-key`: what the hosted pages load Stripe.js with.
    publishable_key: Option<String>,
}

impl std::fmt::Debug for StripeClient {
    // Never the headers: they hold the secret key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StripeClient").field("base", &self.base).finish_non_exhaustive()
    }
}

/// The first line of `file`: the secret key.
pub fn read_secret_key(file: &Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let key = text.lines().next().unwrap_or("").trim().to_string();
    if !(key.starts_with("sk_") || key.starts_with("rk_")) || key.len() < 8 {
        anyhow::bail!("{} does not hold a Stripe secret key (sk_… or rk_…) on its first line", file.display());
    }
    Ok(key)
}

/// The idempotency key of `subject`'s Customer: the same for every replica and retry, naming
/// no one (a hash).
fn customer_key(subject: &str) -> String {
    format!("ggc_{}", &account_ref(subject)[..32])
}

/// What Stripe learns of the subject: a hash, in the Customer's metadata.
fn account_ref(subject: &str) -> String {
    hex::encode(Sha256::digest(format!("giftgenius account {subject}").as_bytes()))
}

fn currency_of(code: &str) -> Option<Currency> {
    Currency::ALL.into_iter().find(|c| c.code().eq_ignore_ascii_case(code))
}

/// A succeeded PaymentIntent as our charge (its id is what a refund names).
fn charge_of(intent: &PaymentIntent) -> Option<Charge> {
    Some(Charge { id: intent.id.clone(), amount: Money::new(intent.amount, currency_of(&intent.currency)?) })
}

/// Whether a PaymentIntent waits for the person's bank (3-D Secure): `requires_action`
/// (localstripe, and Stripe on-session), or real Stripe's off-session answer, left in
/// `requires_payment_method` with `last_payment_error.code = authentication_required`.
fn awaits_authentication(intent: &PaymentIntent) -> bool {
    let code = intent.last_payment_error.as_ref().and_then(|e| e.code.as_deref());
    intent.status == "requires_action"
        || (intent.status == "requires_payment_method" && code == Some("authentication_required"))
}

/// What a PaymentIntent's status says happened.
pub fn lookup_of(intent: &PaymentIntent) -> Result<Lookup, PaymentError> {
    if awaits_authentication(intent) {
        return Ok(Lookup::AwaitingAuthentication { payment: intent.id.clone() });
    }
    Ok(match intent.status.as_str() {
        "succeeded" => Lookup::Succeeded(charge_of(intent).ok_or(PaymentError::KeyMismatch)?),
        // A decline (or a failed authentication) leaves it waiting for another payment method;
        // we never give it one.
        "requires_payment_method" | "canceled" => Lookup::Declined,
        // processing, requires_confirmation, requires_capture…
        _ => Lookup::Processing,
    })
}

fn unavailable(what: &str, detail: impl std::fmt::Display) -> PaymentError {
    PaymentError::Unavailable(format!("stripe {what}: {detail}"))
}

impl StripeClient {
    /// A client for Stripe at `base_url` with `secret_key`, every request limited to `timeout`.
    pub fn new(
        base_url: &str,
        secret_key: &str,
        timeout: Duration,
        store: Store,
        clock: Clock,
    ) -> anyhow::Result<Self> {
        let mut auth = HeaderValue::from_str(&format!("Bearer {secret_key}"))
            .map_err(|_| anyhow::anyhow!("the Stripe secret key is not a valid header value"))?;
        auth.set_sensitive(true);
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, auth);
        let http =
            reqwest::Client::builder().timeout(timeout).connect_timeout(timeout).default_headers(headers).build()?;
        Ok(Self { http, base: base_url.trim_end_matches('/').to_string(), store, clock, publishable_key: None })
    }

    /// The publishable key (`pk_…`) the hosted pages give Stripe.js.
    pub fn with_publishable_key(mut self, key: Option<String>) -> Self {
        self.publishable_key = key.filter(|k| !k.is_empty());
        self
    }

    async fn delete(&self, path: &str) -> reqwest::Result<reqwest::Response> {
        let url = format!("{}{path}", self.base);
        super::provider_call::send(self.http.delete(&url), "DELETE", &url).await
    }

    /// `GET path?query` as it came back (the caller reads the status).
    async fn fetch(&self, path: &str, query: &[(&str, &str)]) -> Result<reqwest::Response, PaymentError> {
        let url = format!("{}{path}", self.base);
        super::provider_call::send(self.http.get(&url).query(query), "GET", &url)
            .await
            .map_err(|e| unavailable("request failed", e.without_url()))
    }

    /// PaymentIntent `id`, if Stripe has it.
    async fn intent(&self, id: &str) -> Result<Option<PaymentIntent>, PaymentError> {
        if !id.starts_with("pi_") || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Ok(None);
        }
        let response = self.fetch(&format!("/v1/payment_intents/{id}"), &[]).await?;
        match response.status() {
            StatusCode::NOT_FOUND => Ok(None),
            status if status.is_success() => {
                Ok(Some(response.json().await.map_err(|e| unavailable("answer unreadable", e.without_url()))?))
            }
            other => Err(unavailable("answered", other)),
        }
    }

    async fn post(&self, path: &str, key: Option<&str>, fields: &[(&str, &str)]) -> reqwest::Result<reqwest::Response> {
        let url = format!("{}{path}", self.base);
        let mut request =
            self.http.post(&url).header(CONTENT_TYPE, "application/x-www-form-urlencoded").body(form(fields));
        if let Some(key) = key {
            request = request.header(IDEMPOTENCY_KEY, key);
        }
        super::provider_call::send(request, "POST", &url).await
    }

    async fn get<T: serde::de::DeserializeOwned>(&self, path: &str, query: &[(&str, &str)]) -> Result<T, PaymentError> {
        let response = self.fetch(path, query).await?;
        if !response.status().is_success() {
            return Err(unavailable("answered", response.status()));
        }
        response.json().await.map_err(|e| unavailable("answer unreadable", e.without_url()))
    }

    /// Every page of a list endpoint, in Stripe's order.
    async fn list_all<T: serde::de::DeserializeOwned + HasId>(
        &self,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<Vec<T>, PaymentError> {
        match self.list_unless_refused(path, query).await? {
            Some(all) => Ok(all),
            None => Err(unavailable("refused a list", StatusCode::BAD_REQUEST)),
        }
    }

    /// Every page of a list endpoint, or `None` when Stripe refuses the query itself (400 on
    /// the first page: a filter this API does not take).
    async fn list_unless_refused<T: serde::de::DeserializeOwned + HasId>(
        &self,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<Option<Vec<T>>, PaymentError> {
        let mut all: Vec<T> = Vec::new();
        loop {
            let after = all.last().map(|item| item.id().to_string());
            let mut page_query = query.to_vec();
            page_query.push(("limit", PAGE));
            if let Some(after) = after.as_deref() {
                page_query.push(("starting_after", after));
            }
            let response = self.fetch(path, &page_query).await?;
            if response.status() == StatusCode::BAD_REQUEST && all.is_empty() {
                return Ok(None);
            }
            if !response.status().is_success() {
                return Err(unavailable("answered", response.status()));
            }
            let page: List<T> = response.json().await.map_err(|e| unavailable("answer unreadable", e.without_url()))?;
            let more = page.has_more && !page.data.is_empty();
            all.extend(page.data);
            if !more {
                return Ok(Some(all));
            }
        }
    }

    /// `subject`'s Stripe Customer id: the one recorded, else one created now (under the
    /// subject's idempotency key) and recorded unless another was recorded first.
    pub async fn customer_for(&self, subject: &str) -> Result<String, PaymentError> {
        if let Some(id) = self.known_customer(subject).await? {
            return Ok(id);
        }
        let account = account_ref(subject);
        let response = self
            .post("/v1/customers", Some(&customer_key(subject)), &[("metadata[giftgenius_account]", &account)])
            .await
            .map_err(|e| unavailable("customer request failed", e.without_url()))?;
        if !response.status().is_success() {
            return Err(unavailable("customer refused", response.status()));
        }
        let customer: wire::Customer =
            response.json().await.map_err(|e| unavailable("customer answer unreadable", e.without_url()))?;
        let kept = self.store.keep_stripe_customer(subject, &customer.id, self.clock.now_ms()).await;
        let kept = kept.map_err(|e| unavailable("customer not recorded", e))?;
        if kept != customer.id {
            tracing::info!(
                created = customer.id,
                kept,
                "another replica recorded this account's Stripe Customer first"
            );
        }
        Ok(kept)
    }

    async fn known_customer(&self, subject: &str) -> Result<Option<String>, PaymentError> {
        self.store.stripe_customer(subject).await.map_err(|e| unavailable("accounts unreadable", e))
    }

    /// The PaymentIntent of `order_id` among `customer`'s, if one was ever created (charged,
    /// declined, or waiting for 3-D Secure without any Charge). Stripe lists a Customer's
    /// PaymentIntents (`customer=`); localstripe refuses that filter (400), so then every
    /// PaymentIntent is listed and the Customer compared here. Lists are strongly consistent
    /// (the search API is not, which is why it is not used).
    async fn intent_of(&self, customer: &str, order_id: &str) -> Result<Option<PaymentIntent>, PaymentError> {
        let (intents, filtered): (Vec<Listed>, bool) =
            match self.list_unless_refused("/v1/payment_intents", &[("customer", customer)]).await? {
                Some(intents) => (intents, true),
                None => (self.list_all("/v1/payment_intents", &[]).await?, false),
            };
        Ok(intents.into_iter().find_map(|listed| {
            let ours = listed.intent.metadata.get(ORDER_ID).map(String::as_str) == Some(order_id);
            let theirs = filtered || listed.customer.as_deref() == Some(customer);
            (ours && theirs).then_some(listed.intent)
        }))
    }

    /// What an already existing PaymentIntent answers a charge request with.
    fn answer_of(intent: &PaymentIntent, amount: Money) -> Result<Charge, PaymentError> {
        match lookup_of(intent)? {
            Lookup::Succeeded(charge) if charge.amount == amount => Ok(charge),
            Lookup::Succeeded(_) => Err(PaymentError::KeyMismatch),
            Lookup::Declined => Err(PaymentError::Declined),
            Lookup::AwaitingAuthentication { payment } => Err(PaymentError::AuthenticationRequired { payment }),
            Lookup::Processing | Lookup::NotFound => Err(unavailable("payment intent", intent.status.as_str())),
        }
    }

    async fn create_intent(&self, request: &ChargeRequest<'_>, customer: &str) -> Result<Charge, PaymentError> {
        let Some(card) = self.card_to_charge(customer).await? else {
            // Nothing to charge: a definitive answer, and nothing moved.
            tracing::info!(order = request.order_id, "no saved card for this account; nothing asked of Stripe");
            return Err(PaymentError::NoSavedCard);
        };
        // No `description`: localstripe refuses the parameter; the order id in the metadata names it.
        let amount = request.amount.amount_minor.to_string();
        let currency = request.amount.currency.code().to_ascii_lowercase();
        let fields = [
            ("amount", amount.as_str()),
            ("currency", currency.as_str()),
            ("customer", customer),
            ("payment_method", card.id.as_str()),
            ("off_session", "true"),
            ("confirm", "true"),
            ("metadata[order_id]", request.order_id),
        ];
        let response = self
            .post("/v1/payment_intents", Some(request.key), &fields)
            .await
            .map_err(|e| unavailable("charge request failed", e.without_url()))?;
        match response.status() {
            StatusCode::OK => {
                let intent: PaymentIntent =
                    response.json().await.map_err(|e| unavailable("charge answer unreadable", e.without_url()))?;
                if intent.metadata.get(ORDER_ID).map(String::as_str) != Some(request.order_id) {
                    return Err(PaymentError::KeyMismatch);
                }
                Self::answer_of(&intent, request.amount)
            }
            StatusCode::PAYMENT_REQUIRED => {
                let body: ErrorBody = response.json().await.unwrap_or_default();
                // Real Stripe's off-session 3-D Secure: not a decline; the person confirms it.
                if body.error.code.as_deref() == Some("authentication_required")
                    && let Some(intent) = body.error.payment_intent.as_deref()
                    && intent.metadata.get(ORDER_ID).map(String::as_str) == Some(request.order_id)
                {
                    tracing::info!(order = request.order_id, "stripe asks for 3-D Secure");
                    return Err(PaymentError::AuthenticationRequired { payment: intent.id.clone() });
                }
                // Stripe's reasons stay here: the person hears "declined", nothing more.
                tracing::info!(
                    order = request.order_id,
                    code = body.error.code.as_deref().unwrap_or(""),
                    decline_code = body.error.decline_code.as_deref().unwrap_or(""),
                    "stripe declined the charge"
                );
                Err(PaymentError::Declined)
            }
            StatusCode::BAD_REQUEST => {
                let body: ErrorBody = response.json().await.unwrap_or_default();
                match body.error.kind.as_deref() {
                    Some("idempotency_error") => Err(PaymentError::KeyMismatch),
                    kind => Err(unavailable("refused the charge as invalid", kind.unwrap_or("?"))),
                }
            }
            // 409: a request under the same key is being processed.
            other => Err(unavailable("answered", other)),
        }
    }

    async fn refund_made(&self, key: &str, intent: &str) -> Result<Option<wire::Refund>, PaymentError> {
        let refunds: Vec<wire::Refund> = self.list_all("/v1/refunds", &[("payment_intent", intent)]).await?;
        Ok(refunds.into_iter().find(|r| r.metadata.get(REFUND_KEY).map(String::as_str) == Some(key)))
    }
}

/// List items have ids (pagination goes by them).
trait HasId {
    fn id(&self) -> &str;
}

/// A listed PaymentIntent with its Customer (compared when the list could not be filtered).
#[derive(serde::Deserialize)]
pub struct Listed {
    #[serde(flatten)]
    pub intent: PaymentIntent,
    #[serde(default)]
    pub customer: Option<String>,
}

impl HasId for Listed {
    fn id(&self) -> &str {
        &self.intent.id
    }
}

impl HasId for wire::Refund {
    fn id(&self) -> &str {
        &self.id
    }
}

#[async_trait::async_trait]
impl PaymentProvider for StripeClient {
    async fn charge(&self, request: ChargeRequest<'_>) -> Result<Charge, PaymentError> {
        if request.token.is_some() {
            // The host's delegated-payment vault tokens are the sandbox's; Stripe charges saved cards.
            return Err(PaymentError::Refused(crate::payments::VAULT_TOKENS_NOT_TAKEN.into()));
        }
        let customer = self.customer_for(request.subject).await?;
        if let Some(intent) = self.intent_of(&customer, request.order_id).await? {
            return Self::answer_of(&intent, request.amount);
        }
        self.create_intent(&request, &customer).await
    }

    async fn refund(&self, key: &str, charge_id: &str, amount: Money) -> Result<String, PaymentError> {
        let refund = match self.refund_made(key, charge_id).await? {
            Some(made) => made,
            None => {
                // No `reason`: localstripe refuses the parameter.
                let minor = amount.amount_minor.to_string();
                let fields = [
                    ("payment_intent", charge_id),
                    ("amount", minor.as_str()),
                    ("metadata[giftgenius_refund_key]", key),
                ];
                let response = self
                    .post("/v1/refunds", Some(key), &fields)
                    .await
                    .map_err(|e| unavailable("refund request failed", e.without_url()))?;
                match response.status() {
                    StatusCode::OK => {
                        response.json().await.map_err(|e| unavailable("refund answer unreadable", e.without_url()))?
                    }
                    // Already refunded, no such payment, the key used for another refund: an operator's.
                    StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND => return Err(PaymentError::KeyMismatch),
                    other => return Err(unavailable("answered a refund", other)),
                }
            }
        };
        if refund.amount == amount.amount_minor { Ok(refund.id) } else { Err(PaymentError::KeyMismatch) }
    }

    async fn lookup(&self, order: OrderCharge<'_>) -> Result<Lookup, PaymentError> {
        // The PaymentIntent recorded on the order (awaiting authentication): asked directly.
        if let Some(payment) = order.payment {
            return match self.intent(payment).await? {
                Some(intent) if intent.metadata.get(ORDER_ID).map(String::as_str) == Some(order.order_id) => {
                    lookup_of(&intent)
                }
                Some(_) => Err(PaymentError::KeyMismatch),
                None => Ok(Lookup::NotFound),
            };
        }
        // No Customer yet: nothing was ever charged for this account.
        let Some(customer) = self.known_customer(order.subject).await? else { return Ok(Lookup::NotFound) };
        match self.intent_of(&customer, order.order_id).await? {
            Some(intent) => lookup_of(&intent),
            None => Ok(Lookup::NotFound),
        }
    }

    async fn is_reachable(&self, within: Duration) -> bool {
        let url = format!("{}/v1/customers", self.base);
        let probe = self.http.get(url).query(&[("limit", "1")]).timeout(within);
        probe.send().await.is_ok_and(|r| r.status().is_success())
    }

    async fn authentication(&self, payment: &str) -> Result<Option<Authentication>, PaymentError> {
        let Some(publishable_key) = self.publishable_key.clone() else {
            tracing::warn!("a payment awaits 3-D Secure but --stripe-publishable-key is not set");
            return Ok(None);
        };
        Ok(self.intent(payment).await?.and_then(|intent| {
            let client_secret = intent.client_secret?.0;
            Some(Authentication { payment: intent.id, client_secret, publishable_key })
        }))
    }

    async fn cancel_payment(&self, payment: &str) -> Result<Lookup, PaymentError> {
        let Some(intent) = self.intent(payment).await? else { return Ok(Lookup::Declined) };
        if matches!(lookup_of(&intent)?, Lookup::Succeeded(_)) || intent.status == "canceled" {
            return lookup_of(&intent);
        }
        let path = format!("/v1/payment_intents/{}/cancel", intent.id);
        let response = self
            .post(&path, Some(&format!("ggx_{}", intent.id)), &[])
            .await
            .map_err(|e| unavailable("cancel request failed", e.without_url()))?;
        let status = response.status();
        if status.is_success() {
            return Ok(Lookup::Declined);
        }
        // Refused (it moved on meanwhile, e.g. charged): what it is now is the answer.
        match self.intent(payment).await? {
            Some(now) if now.status == "canceled" => Ok(Lookup::Declined),
            Some(now) => match lookup_of(&now)? {
                charged @ Lookup::Succeeded(_) => Ok(charged),
                _ => Err(unavailable("refused to cancel", status)),
            },
            None => Ok(Lookup::Declined),
        }
    }

    async fn forget_account(&self, subject: &str) -> Result<(), PaymentError> {
        let Some(customer) = self.known_customer(subject).await? else { return Ok(()) };
        let response = self
            .delete(&format!("/v1/customers/{customer}"))
            .await
            .map_err(|e| unavailable("customer deletion failed", e.without_url()))?;
        // 404: deleted already (an earlier attempt whose record was lost).
        if !(response.status().is_success() || response.status() == StatusCode::NOT_FOUND) {
            return Err(unavailable("refused the customer's deletion", response.status()));
        }
        self.store.forget_stripe_customer(subject).await.map_err(|e| unavailable("accounts not updated", e))?;
        tracing::info!("the account's Stripe Customer is deleted");
        Ok(())
    }

    async fn refunds_of(&self, charge_id: &str) -> Result<Vec<ProviderRefund>, PaymentError> {
        let refunds: Vec<wire::Refund> = self.list_all("/v1/refunds", &[("payment_intent", charge_id)]).await?;
        Ok(refunds
            .into_iter()
            .map(|r| ProviderRefund { key: r.metadata.get(REFUND_KEY).cloned(), id: r.id, amount_minor: r.amount })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_customer_key_is_stable_and_names_no_one() {
        assert_eq!(customer_key("local:u1"), customer_key("local:u1"));
        assert_ne!(customer_key("local:u1"), customer_key("local:u2"));
        assert!(!customer_key("local:u1").contains("u1"));
    }

    #[test]
    fn a_payment_intent_status_says_what_happened() {
        let intent = |status: &str| PaymentIntent {
            id: "pi_1".into(),
            amount: 4500,
            currency: "eur".into(),
            status: status.into(),
            metadata: Default::default(),
            client_secret: None,
            last_payment_error: None,
        };
        assert_eq!(
            lookup_of(&intent("succeeded")),
            Ok(Lookup::Succeeded(Charge { id: "pi_1".into(), amount: Money::new(4500, Currency::EUR) }))
        );
        assert_eq!(lookup_of(&intent("requires_payment_method")), Ok(Lookup::Declined));
        assert_eq!(lookup_of(&intent("processing")), Ok(Lookup::Processing));
        assert_eq!(
            lookup_of(&intent("requires_action")),
            Ok(Lookup::AwaitingAuthentication { payment: "pi_1".into() })
        );
        // Real Stripe's off-session 3-D Secure answer is not a decline.
        let mut off_session = intent("requires_payment_method");
        off_session.last_payment_error =
            Some(wire::ApiError { code: Some("authentication_required".into()), ..Default::default() });
        assert_eq!(lookup_of(&off_session), Ok(Lookup::AwaitingAuthentication { payment: "pi_1".into() }));
    }
}
