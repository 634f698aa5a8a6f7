//! The payment provider, as the app sees it: [`Payments`], one client in front of whichever
//! [`PaymentProvider`] runs (`--payments sandbox|stripe`): the SANDBOX provider's HTTP API
//! (`sandbox.rs`; the provider is a process of its own, which the server starts) or Stripe's
//! (`stripe/`). Nothing above
//! this file knows which one it is: the checkout charges, refunds and asks what happened to an
//! order's charge, with the order's own keys.
//!
//! Every request has a timeout, and a commit's lease always outlasts it (checked at startup,
//! [`check_lease`]): a call never loses its key while its charge is still in flight, and a retry
//! never starts a second charge request beside the first. A timeout is not a failure of the
//! charge: the provider may have charged and lost the answer, which is why every charge carries
//! an idempotency key derived from the order and why the reconciler can ask "what happened to
//! the charge of order O" later ([`Payments::lookup`]).

use std::sync::Arc;
use std::time::Duration;

use giftgenius_pay_api::api::{Charge as ApiCharge, PaymentToken, Refund as ApiRefund};
use giftgenius_types::Money;

pub mod metrics;
mod provider_call;
pub mod sandbox;
pub mod stripe;

pub use metrics::{ChargeOutcome, PaymentMetrics, RefundOutcome};
use sandbox::SandboxClient;
use stripe::StripeClient;

/// The refusal code of a vault token shown to a provider that charges none (Stripe charges
/// saved cards; the host's delegated-payment tokens are the sandbox's).
pub const VAULT_TOKENS_NOT_TAKEN: &str = "vault_token_not_supported";

/// What a lease must have left beyond the provider's timeout: the store steps around the call
/// (recording the order paid) and clock differences between replicas.
pub const LEASE_MARGIN: Duration = Duration::from_millis(1000);

/// Refuses a lease that the provider call could outlast.
pub fn check_lease(lease: Duration, provider_timeout: Duration) -> Result<(), String> {
    if lease > provider_timeout + LEASE_MARGIN {
        return Ok(());
    }
    Err(format!(
        "--idempotency-lease-ms ({}) must be greater than --payments-timeout-ms ({}) + {} ms: a commit must be able \
         to finish its charge request inside its lease, or a retry takes the key over while the charge is in flight",
        lease.as_millis(),
        provider_timeout.as_millis(),
        LEASE_MARGIN.as_millis()
    ))
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaymentError {
    /// The card was declined. Definitive; nothing was charged.
    Declined,
    /// The account has no saved card to charge (a provider that charges a card on file:
    /// Stripe). Nothing was asked of a bank and nothing was charged; the same charge goes through
    /// once the person saves a card.
    NoSavedCard,
    /// The vault token cannot pay this charge (one of the provider's `TOKEN_REFUSALS` codes:
    /// expired, used, over its allowance, for another session…). Definitive; nothing was charged.
    Refused(String),
    /// The provider failed or did not answer in time. The charge may or may not exist: retry
    /// with the same key, or ask later with [`Payments::lookup`].
    Unavailable(String),
    /// The same provider key was used for another request: our bug, never the user's.
    KeyMismatch,
    /// The card's bank asks the person to confirm the payment (3-D Secure) before anything is
    /// charged: `payment` is the provider's payment (Stripe: the PaymentIntent id) the hosted
    /// authentication page completes. Not a failure: the order waits (`AwaitingAuthentication`).
    AuthenticationRequired { payment: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Charge {
    pub id: String,
    pub amount: Money,
}

/// What the provider knows about the charge requested under one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// Nothing was ever charged under the key (never received, or refused before charging).
    NotFound,
    /// A request under the key is being processed right now.
    Processing,
    /// The money moved.
    Succeeded(Charge),
    /// The card was declined.
    Declined,
    /// The provider's payment `payment` waits for the person to confirm it with their bank.
    AwaitingAuthentication { payment: String },
}

/// A refund as the provider lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderRefund {
    pub id: String,
    pub amount_minor: i64,
    /// The refund key we sent with it (`giftgenius_refund_key`), if it is ours.
    pub key: Option<String>,
}

/// What the hosted authentication page needs to let the person confirm a payment with their
/// bank through the provider's own script (Stripe.js `confirmCardPayment`): never sent to the
/// model, never logged (the client secret lets its holder complete that one payment).
#[derive(Clone, PartialEq, Eq)]
pub struct Authentication {
    /// The provider's payment (Stripe: the PaymentIntent id).
    pub payment: String,
    /// Stripe: the PaymentIntent's `client_secret`.
    pub client_secret: String,
    /// Stripe: `--stripe-publishable-key` (`pk_…`).
    pub publishable_key: String,
}

impl std::fmt::Debug for Authentication {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authentication").field("payment", &self.payment).finish_non_exhaustive()
    }
}

/// One charge, as the checkout asks for it.
#[derive(Debug, Clone)]
pub struct ChargeRequest<'a> {
    /// The provider's idempotency key: derived from the order (`commit::provider_key`).
    pub key: &'a str,
    pub order_id: &'a str,
    /// Whose money: the account the provider keeps the saved card under.
    pub subject: &'a str,
    pub amount: Money,
    /// The same text for every request under the key.
    pub description: &'a str,
    /// A delegated-payment vault token (the host's payment sheet), when it pays.
    pub token: Option<PaymentToken>,
}

/// The charge of one order, as the reconciler (or a retry) asks about it.
#[derive(Debug, Clone, Copy)]
pub struct OrderCharge<'a> {
    /// The key the charge was requested under.
    pub key: &'a str,
    pub order_id: &'a str,
    pub subject: &'a str,
    /// The provider's payment recorded on the order when its charge request was answered
    /// without settling (awaiting authentication): asked about directly.
    pub payment: Option<&'a str>,
}

/// What a payment provider does for the checkout. Implemented by the sandbox client and by
/// Stripe's; chosen once at startup (`state.rs`).
#[async_trait::async_trait]
pub trait PaymentProvider: Send + Sync + std::fmt::Debug {
    /// Charges once per `request.key`: the same key with the same request always gets the same
    /// answer (a success or a decline), however often it is sent.
    async fn charge(&self, request: ChargeRequest<'_>) -> Result<Charge, PaymentError>;
    /// Refunds `amount` of `charge_id` once per `key` (the same key always gets the same refund
    /// back); returns the provider's refund id.
    async fn refund(&self, key: &str, charge_id: &str, amount: Money) -> Result<String, PaymentError>;
    /// What happened to the order's charge.
    async fn lookup(&self, order: OrderCharge<'_>) -> Result<Lookup, PaymentError>;
    /// Whether the provider answers within `within` (`/readyz`).
    async fn is_reachable(&self, within: Duration) -> bool;
    /// Whether it charges the host's delegated-payment vault tokens (the payment sheet): when
    /// not, the sheet is never offered and `complete_checkout` is refused before anything.
    fn takes_vault_tokens(&self) -> bool {
        false
    }
    /// Whether `token` would be taken for a charge of `amount` (it exists, has not expired, is
    /// unused and fits its allowance), asked before any order exists and recording nothing:
    /// `Refused(code)` when it would not. The charge checks again (this is no reservation).
    async fn check_token(&self, _token: &PaymentToken, _amount: Money) -> Result<(), PaymentError> {
        Err(PaymentError::Refused(VAULT_TOKENS_NOT_TAKEN.into()))
    }
    /// What the hosted page needs to let the person confirm `payment` with their bank; `None`
    /// for a provider without authentication (the sandbox) or a payment it does not know.
    async fn authentication(&self, _payment: &str) -> Result<Option<Authentication>, PaymentError> {
        Ok(None)
    }
    /// Cancels `payment` so it can never be charged (an authentication window ended); done
    /// already is done. Returns the payment's outcome when it was charged after all (cancelling
    /// came too late), else `Lookup::Declined`.
    async fn cancel_payment(&self, _payment: &str) -> Result<Lookup, PaymentError> {
        Ok(Lookup::Declined)
    }
    /// Every refund of `charge_id` at the provider, ours (with our key) and others' (a refund
    /// made in the provider's dashboard), for `charge.refunded`.
    async fn refunds_of(&self, _charge_id: &str) -> Result<Vec<ProviderRefund>, PaymentError> {
        Ok(Vec::new())
    }
    /// Forgets `subject`'s account at the provider (delete-my-data: Stripe deletes the
    /// Customer and its saved cards); nothing to forget is done.
    async fn forget_account(&self, _subject: &str) -> Result<(), PaymentError> {
        Ok(())
    }
}

/// The provider the app charges, counted into `/metrics`.
#[derive(Debug, Clone)]
pub struct Payments {
    provider: Arc<dyn PaymentProvider>,
    /// The same provider when it is the sandbox: its ledger and faults, for the preview and tests.
    sandbox: Option<Arc<SandboxClient>>,
    /// The same provider when it is Stripe: its saved cards, for the card page and the confirm card.
    stripe: Option<Arc<StripeClient>>,
    timeout: Duration,
    /// Charges and refunds by outcome (`/metrics`).
    metrics: PaymentMetrics,
}

/// What the sandbox-only helpers answer when another provider runs.
const NOT_SANDBOX: &str = "the payment provider is not the sandbox";

impl Payments {
    /// The sandbox provider's client.
    pub fn sandbox(client: SandboxClient) -> Self {
        let client = Arc::new(client);
        let timeout = client.timeout();
        Self {
            provider: client.clone(),
            sandbox: Some(client),
            stripe: None,
            timeout,
            metrics: PaymentMetrics::default(),
        }
    }

    /// Stripe's client (`--payments stripe`), whose every request is limited to `timeout`.
    pub fn stripe(client: StripeClient, timeout: Duration) -> Self {
        let client = Arc::new(client);
        Self {
            provider: client.clone(),
            sandbox: None,
            stripe: Some(client),
            timeout,
            metrics: PaymentMetrics::default(),
        }
    }

    /// Stripe's client when Stripe charges: saved cards exist only there.
    pub fn stripe_cards(&self) -> Option<&StripeClient> {
        self.stripe.as_deref()
    }

    /// Another provider, whose every request is limited to `timeout`.
    pub fn of(provider: Arc<dyn PaymentProvider>, timeout: Duration) -> Self {
        Self { provider, sandbox: None, stripe: None, timeout, metrics: PaymentMetrics::default() }
    }

    /// Counts charges and refunds into `metrics` (the application's registry).
    pub fn with_metrics(mut self, metrics: PaymentMetrics) -> Self {
        self.metrics = metrics;
        self
    }

    /// How long one request may take.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The provider itself (tests reach provider-specific helpers through it).
    pub fn provider(&self) -> &Arc<dyn PaymentProvider> {
        &self.provider
    }

    /// Whether the provider answers its health probe within `within` (`/readyz`).
    pub async fn is_reachable(&self, within: Duration) -> bool {
        self.provider.is_reachable(within).await
    }

    /// The whole of one provider operation inside the timeout: a provider that makes several
    /// requests for it (Stripe: the Customer, the lookup, the PaymentIntent) still ends within
    /// the time the lease was checked against, answered or given up as unavailable.
    pub async fn within<T>(
        &self,
        what: &str,
        operation: impl Future<Output = Result<T, PaymentError>>,
    ) -> Result<T, PaymentError> {
        match tokio::time::timeout(self.timeout, operation).await {
            Ok(result) => result,
            Err(_) => Err(PaymentError::Unavailable(format!("{what} did not finish within {:?}", self.timeout))),
        }
    }

    /// [`PaymentProvider::charge`], within the timeout, counted.
    pub async fn charge(&self, request: ChargeRequest<'_>) -> Result<Charge, PaymentError> {
        let result = self.within("the charge", self.provider.charge(request)).await;
        self.metrics.charge(match &result {
            Ok(_) => ChargeOutcome::Succeeded,
            // No card on file: nothing reached a bank; counted with the declines it used to be.
            Err(PaymentError::Declined | PaymentError::NoSavedCard) => ChargeOutcome::Declined,
            Err(PaymentError::Refused(_)) => ChargeOutcome::Refused,
            Err(PaymentError::Unavailable(_)) => ChargeOutcome::Unavailable,
            Err(PaymentError::KeyMismatch) => ChargeOutcome::Mismatch,
            Err(PaymentError::AuthenticationRequired { .. }) => ChargeOutcome::AuthenticationRequired,
        });
        result
    }

    /// [`PaymentProvider::refund`], within the timeout, counted.
    pub async fn refund(&self, key: &str, charge_id: &str, amount: Money) -> Result<String, PaymentError> {
        let result = self.within("the refund", self.provider.refund(key, charge_id, amount)).await;
        self.metrics.refund(match &result {
            Ok(_) => RefundOutcome::Succeeded,
            Err(PaymentError::Unavailable(_)) => RefundOutcome::Unavailable,
            Err(_) => RefundOutcome::Mismatch,
        });
        result
    }

    /// [`PaymentProvider::takes_vault_tokens`].
    pub fn takes_vault_tokens(&self) -> bool {
        self.provider.takes_vault_tokens()
    }

    /// [`PaymentProvider::check_token`], within the timeout.
    pub async fn check_token(&self, token: &PaymentToken, amount: Money) -> Result<(), PaymentError> {
        self.within("the token check", self.provider.check_token(token, amount)).await
    }

    /// [`PaymentProvider::lookup`], within the timeout.
    pub async fn lookup(&self, order: OrderCharge<'_>) -> Result<Lookup, PaymentError> {
        self.within("the lookup", self.provider.lookup(order)).await
    }

    /// [`PaymentProvider::authentication`], within the timeout.
    pub async fn authentication(&self, payment: &str) -> Result<Option<Authentication>, PaymentError> {
        self.within("the authentication lookup", self.provider.authentication(payment)).await
    }

    /// [`PaymentProvider::cancel_payment`], within the timeout.
    pub async fn cancel_payment(&self, payment: &str) -> Result<Lookup, PaymentError> {
        self.within("the payment's cancellation", self.provider.cancel_payment(payment)).await
    }

    /// What may be recorded for an order whose provider payment is `payment` (a PaymentIntent
    /// awaiting 3-D Secure), before it is declined: nothing to cancel (`None`) or cancelled now
    /// is `Lookup::Declined`; a payment that was charged after all is its `Succeeded`. Every
    /// place that declines an order asks this first, so a person who confirms with their bank
    /// later can never be charged for an order shown as declined.
    pub async fn release(&self, payment: Option<&str>) -> Result<Lookup, PaymentError> {
        match payment {
            None => Ok(Lookup::Declined),
            Some(payment) => self.cancel_payment(payment).await,
        }
    }

    /// A charge's answer for an order whose provider payment is `payment`, safe to record: a
    /// decline or a token refusal stands once that payment is released ([`Payments::release`]);
    /// one charged after all answers as that charge; one that cannot be cancelled now leaves the
    /// outcome unknown (`Unavailable`: a retry or the reconciler settles it).
    pub async fn settled_decline(
        &self,
        payment: Option<&str>,
        answer: Result<Charge, PaymentError>,
    ) -> Result<Charge, PaymentError> {
        match answer {
            Err(refusal @ (PaymentError::Declined | PaymentError::Refused(_))) if payment.is_some() => {
                match self.release(payment).await {
                    Ok(Lookup::Declined) => Err(refusal),
                    Ok(Lookup::Succeeded(charge)) => Ok(charge),
                    Ok(other) => {
                        Err(PaymentError::Unavailable(format!("the order's payment not cancelled: {other:?}")))
                    }
                    Err(e) => Err(PaymentError::Unavailable(format!("the order's payment not cancelled: {e:?}"))),
                }
            }
            answer => answer,
        }
    }

    /// [`PaymentProvider::refunds_of`], within the timeout.
    pub async fn refunds_of(&self, charge_id: &str) -> Result<Vec<ProviderRefund>, PaymentError> {
        self.within("the refunds' listing", self.provider.refunds_of(charge_id)).await
    }

    /// [`PaymentProvider::forget_account`], within the timeout.
    pub async fn forget_account(&self, subject: &str) -> Result<(), PaymentError> {
        self.within("forgetting the account", self.provider.forget_account(subject)).await
    }

    fn sandbox_client(&self) -> Result<&SandboxClient, PaymentError> {
        self.sandbox.as_deref().ok_or_else(|| PaymentError::Unavailable(NOT_SANDBOX.into()))
    }

    /// The sandbox's every charge, declines included, oldest first.
    pub async fn ledger(&self) -> Result<Vec<ApiCharge>, PaymentError> {
        self.sandbox_client()?.ledger().await
    }

    /// The sandbox's charges where money moved.
    pub async fn charges(&self) -> Result<Vec<ApiCharge>, PaymentError> {
        self.sandbox_client()?.charges().await
    }

    /// The sandbox's every refund, oldest first.
    pub async fn refunds(&self) -> Result<Vec<ApiRefund>, PaymentError> {
        self.sandbox_client()?.refunds().await
    }

    /// Replaces the sandbox's injected faults (`5xx*1`, `timeout*2`, `decline`).
    pub async fn set_faults(&self, plan: &str) -> Result<(), String> {
        match &self.sandbox {
            Some(client) => client.set_faults(plan).await,
            None => Err(NOT_SANDBOX.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_must_outlast_the_provider_call_and_the_margin() {
        let timeout = Duration::from_millis(10_000);
        assert!(check_lease(Duration::from_millis(30_000), timeout).is_ok());
        assert!(check_lease(Duration::from_millis(11_001), timeout).is_ok());
        let refused = check_lease(Duration::from_millis(11_000), timeout).unwrap_err();
        assert!(
            refused.contains("--idempotency-lease-ms (11000)") && refused.contains("--payments-timeout-ms (10000)")
        );
        assert!(check_lease(Duration::from_millis(300), timeout).is_err());
    }
}
