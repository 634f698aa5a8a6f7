//! The payment provider, as the app sees it: an HTTP client for the SANDBOX provider's
//! Stripe-shaped API (`giftgenius-sandbox-pay`, its own process with its own database; see
//! `sandbox.rs` for how the app starts one when no `--payments-url` is given).
//!
//! Every request has a timeout, and a commit's lease always outlasts it (checked at startup,
//! [`check_lease`]): a call never loses its key while its charge is still in flight, and a retry
//! never starts a second charge request beside the first. A timeout is not a failure of the
//! charge: the provider may have charged and lost the answer, which is why every charge carries
//! an idempotency key derived from the order and why the reconciler can ask "what happened to
//! the charge under key K" later ([`Payments::lookup`]).

use std::time::Duration;

use giftgenius_sandbox_pay::api::{
    CHARGES_PATH, Charge as ApiCharge, ChargeList, ChargeRequest, ChargeStatus, ErrorBody, IDEMPOTENCY_KEY_HEADER,
    MAX_PAGE, PaymentToken, REFUNDS_PATH, Refund as ApiRefund, RefundList, RefundRequest, SETTINGS_PATH,
    SettingsUpdate, TOKEN_REFUSALS,
};
use giftgenius_sandbox_pay::token::AdminToken;
use giftgenius_types::{Currency, Money};
use reqwest::StatusCode;

use crate::metrics::{ChargeOutcome, PaymentMetrics, RefundOutcome};

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
    /// The vault token cannot pay this charge (one of the provider's `TOKEN_REFUSALS` codes:
    /// expired, used, over its allowance, for another session…). Definitive; nothing was charged.
    Refused(String),
    /// The provider failed or did not answer in time. The charge may or may not exist: retry
    /// with the same key, or ask later with [`Payments::lookup`].
    Unavailable(String),
    /// The same provider key was used for another request: our bug, never the user's.
    KeyMismatch,
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
}

/// The provider's HTTP API.
#[derive(Debug, Clone)]
pub struct Payments {
    http: reqwest::Client,
    /// Base URL, no trailing slash.
    base: String,
    timeout: Duration,
    /// Charges and refunds by outcome (`/metrics`).
    metrics: PaymentMetrics,
}

fn currency_code(currency: Currency) -> String {
    currency.code().to_ascii_lowercase()
}

/// The provider's charge as ours, if it is for an amount we know.
fn charge_of(charge: &ApiCharge) -> Option<Charge> {
    let currency = Currency::ALL.into_iter().find(|c| c.code().eq_ignore_ascii_case(&charge.currency))?;
    Some(Charge { id: charge.id.clone(), amount: Money::new(charge.amount, currency) })
}

impl Payments {
    /// A client for the provider at `base_url`, every request limited to `timeout` and showing
    /// `token`.
    pub fn new(base_url: &str, timeout: Duration, token: &AdminToken) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .default_headers(token.authorization())
            .build()?;
        Ok(Self { http, base: base_url.trim_end_matches('/').to_string(), timeout, metrics: PaymentMetrics::default() })
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

    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// Whether the provider answers its health probe within `within` (`/readyz`).
    pub async fn is_reachable(&self, within: Duration) -> bool {
        let probe = self.http.get(format!("{}{}", self.base, giftgenius_sandbox_pay::api::HEALTH_PATH));
        probe.timeout(within).send().await.is_ok_and(|r| r.status().is_success())
    }

    /// Charges `amount` once per `idempotency_key`: the same key with the same request always
    /// gets the same answer (a success or a decline), however often it is sent.
    pub async fn charge(
        &self,
        idempotency_key: &str,
        amount: Money,
        description: &str,
    ) -> Result<Charge, PaymentError> {
        self.charge_with(idempotency_key, amount, description, None).await
    }

    /// [`Payments::charge`], paid by `token` (a delegated-payment vault token) when given.
    pub async fn charge_with(
        &self,
        idempotency_key: &str,
        amount: Money,
        description: &str,
        token: Option<PaymentToken>,
    ) -> Result<Charge, PaymentError> {
        let result = self.request_charge(idempotency_key, amount, description, token).await;
        self.metrics.charge(match &result {
            Ok(_) => ChargeOutcome::Succeeded,
            Err(PaymentError::Declined) => ChargeOutcome::Declined,
            Err(PaymentError::Refused(_)) => ChargeOutcome::Refused,
            Err(PaymentError::Unavailable(_)) => ChargeOutcome::Unavailable,
            Err(PaymentError::KeyMismatch) => ChargeOutcome::Mismatch,
        });
        result
    }

    async fn request_charge(
        &self,
        idempotency_key: &str,
        amount: Money,
        description: &str,
        token: Option<PaymentToken>,
    ) -> Result<Charge, PaymentError> {
        let request = ChargeRequest {
            amount: amount.amount_minor,
            currency: currency_code(amount.currency),
            description: description.to_string(),
            payment_token: token,
        };
        let url = format!("{}{CHARGES_PATH}", self.base);
        let call = self.http.post(&url).header(IDEMPOTENCY_KEY_HEADER, idempotency_key).json(&request);
        let response = super::provider_call::send(call, "POST", &url)
            .await
            .map_err(|e| PaymentError::Unavailable(format!("charge request failed: {e}")))?;
        let status = response.status();
        match status {
            StatusCode::OK => {
                let charge: ApiCharge = response
                    .json()
                    .await
                    .map_err(|e| PaymentError::Unavailable(format!("charge answer unreadable: {e}")))?;
                match charge_of(&charge) {
                    Some(ours) if ours.amount == amount && charge.status == ChargeStatus::Succeeded => Ok(ours),
                    _ => Err(PaymentError::KeyMismatch),
                }
            }
            StatusCode::PAYMENT_REQUIRED => {
                let body: Option<ErrorBody> = response.json().await.ok();
                match body.and_then(|b| b.error.code).filter(|code| TOKEN_REFUSALS.contains(&code.as_str())) {
                    Some(code) => Err(PaymentError::Refused(code)),
                    None => Err(PaymentError::Declined),
                }
            }
            StatusCode::BAD_REQUEST => {
                let body: Option<ErrorBody> = response.json().await.ok();
                match body {
                    Some(body) if body.error.kind == "idempotency_error" => Err(PaymentError::KeyMismatch),
                    // Any other 400 is a request we should never have built.
                    other => Err(PaymentError::Unavailable(format!("charge refused as invalid: {other:?}"))),
                }
            }
            // 409: the first request under this key is still being processed.
            other => Err(PaymentError::Unavailable(format!("provider answered {other}"))),
        }
    }

    /// Refunds all of `charge_id` once per `idempotency_key` (the same key always gets the same
    /// refund back); returns the provider's refund id.
    pub async fn refund(&self, idempotency_key: &str, charge_id: &str, amount: Money) -> Result<String, PaymentError> {
        let result = self.request_refund(idempotency_key, charge_id, amount).await;
        self.metrics.refund(match &result {
            Ok(_) => RefundOutcome::Succeeded,
            Err(PaymentError::Unavailable(_)) => RefundOutcome::Unavailable,
            Err(_) => RefundOutcome::Mismatch,
        });
        result
    }

    async fn request_refund(
        &self,
        idempotency_key: &str,
        charge_id: &str,
        amount: Money,
    ) -> Result<String, PaymentError> {
        let request = RefundRequest {
            charge: charge_id.to_string(),
            amount: Some(amount.amount_minor),
            reason: Some("requested_by_customer".into()),
        };
        let url = format!("{}{REFUNDS_PATH}", self.base);
        let call = self.http.post(&url).header(IDEMPOTENCY_KEY_HEADER, idempotency_key).json(&request);
        let response = super::provider_call::send(call, "POST", &url)
            .await
            .map_err(|e| PaymentError::Unavailable(format!("refund request failed: {e}")))?;
        match response.status() {
            StatusCode::OK => {
                let refund: ApiRefund = response
                    .json()
                    .await
                    .map_err(|e| PaymentError::Unavailable(format!("refund answer unreadable: {e}")))?;
                if refund.charge == charge_id && refund.amount == amount.amount_minor {
                    Ok(refund.id)
                } else {
                    Err(PaymentError::KeyMismatch)
                }
            }
            // Another key refunded it, no such charge, or the key was used for another refund:
            // never the user's doing, so an operator's (logged by the caller).
            StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND => Err(PaymentError::KeyMismatch),
            other => Err(PaymentError::Unavailable(format!("provider answered {other}"))),
        }
    }

    /// Every refund the provider recorded, oldest first.
    pub async fn refunds(&self) -> Result<Vec<ApiRefund>, PaymentError> {
        let mut all: Vec<ApiRefund> = Vec::new();
        loop {
            let limit = MAX_PAGE.to_string();
            let mut query = vec![("limit", limit.as_str())];
            let after = all.last().map(|r| r.id.clone());
            if let Some(after) = after.as_deref() {
                query.push(("starting_after", after));
            }
            let page: RefundList = self.get_json(&format!("{}{REFUNDS_PATH}", self.base), &query).await?;
            all.extend(page.data);
            if !page.has_more {
                return Ok(all);
            }
        }
    }

    /// What happened to the charge requested under `idempotency_key`.
    pub async fn lookup(&self, idempotency_key: &str) -> Result<Lookup, PaymentError> {
        let list: ChargeList =
            self.get_json(&format!("{}{CHARGES_PATH}", self.base), &[("idempotency_key", idempotency_key)]).await?;
        let Some(charge) = list.data.into_iter().find(|c| c.idempotency_key == idempotency_key) else {
            return Ok(Lookup::NotFound);
        };
        Ok(match charge.status {
            ChargeStatus::Processing => Lookup::Processing,
            ChargeStatus::Failed => Lookup::Declined,
            ChargeStatus::Succeeded => Lookup::Succeeded(charge_of(&charge).ok_or(PaymentError::KeyMismatch)?),
        })
    }

    /// Every charge the provider recorded, declines included, oldest first (the ledger the
    /// invariants are checked against).
    pub async fn ledger(&self) -> Result<Vec<ApiCharge>, PaymentError> {
        let mut all: Vec<ApiCharge> = Vec::new();
        loop {
            let limit = MAX_PAGE.to_string();
            let mut query = vec![("limit", limit.as_str())];
            let after = all.last().map(|c| c.id.clone());
            if let Some(after) = after.as_deref() {
                query.push(("starting_after", after));
            }
            let page: ChargeList = self.get_json(&format!("{}{CHARGES_PATH}", self.base), &query).await?;
            all.extend(page.data);
            if !page.has_more {
                return Ok(all);
            }
        }
    }

    /// The charges where money moved (the ledger without declines and requests in flight).
    pub async fn charges(&self) -> Result<Vec<ApiCharge>, PaymentError> {
        Ok(self.ledger().await?.into_iter().filter(|c| c.status == ChargeStatus::Succeeded).collect())
    }

    /// Replaces the provider's injected faults (`5xx*1`, `timeout*2`, `decline`); for the local
    /// preview and tests. The provider checks the plan; its refusal comes back as the error.
    pub async fn set_faults(&self, plan: &str) -> Result<(), String> {
        let update = SettingsUpdate { latency_ms: None, faults: Some(plan.to_string()) };
        let response = self
            .http
            .post(format!("{}{SETTINGS_PATH}", self.base))
            .json(&update)
            .send()
            .await
            .map_err(|e| format!("the payment provider did not answer: {e}"))?;
        if response.status().is_success() {
            return Ok(());
        }
        let body: Option<ErrorBody> = response.json().await.ok();
        Err(body.map(|b| b.error.message).unwrap_or_else(|| "the payment provider refused the plan".into()))
    }

    async fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
        query: &[(&str, &str)],
    ) -> Result<T, PaymentError> {
        let response = self
            .http
            .get(url)
            .query(query)
            .send()
            .await
            .map_err(|e| PaymentError::Unavailable(format!("provider request failed: {e}")))?;
        if !response.status().is_success() {
            return Err(PaymentError::Unavailable(format!("provider answered {}", response.status())));
        }
        response.json().await.map_err(|e| PaymentError::Unavailable(format!("provider answer unreadable: {e}")))
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
