//! The SANDBOX provider's client: its Stripe-shaped HTTP API (`giftgenius-sandbox-pay`, its own
//! process with its own database; see `sandbox.rs` for how the app starts one when no
//! `--payments-url` is given), as a [`PaymentProvider`], plus what only the sandbox offers: its
//! ledger and injected faults, for the preview and the tests.

use std::time::Duration;

use giftgenius_pay_api::api::{
    CHARGES_PATH, Charge as ApiCharge, ChargeList, ChargeRequest as ApiChargeRequest, ChargeStatus, ErrorBody,
    IDEMPOTENCY_KEY_HEADER, MAX_PAGE, PaymentToken, REFUNDS_PATH, Refund as ApiRefund, RefundList, RefundRequest,
    SETTINGS_PATH, SettingsUpdate, TOKEN_CHECK_PATH, TOKEN_REFUSALS,
};
use giftgenius_pay_api::token::AdminToken;
use giftgenius_types::{Currency, Money};
use reqwest::StatusCode;

use crate::payments::{Charge, ChargeRequest, Lookup, OrderCharge, PaymentError, PaymentProvider};

/// The sandbox provider's HTTP API.
#[derive(Debug, Clone)]
pub struct SandboxClient {
    http: reqwest::Client,
    /// Base URL, no trailing slash.
    base: String,
    timeout: Duration,
}

fn currency_code(currency: Currency) -> String {
    currency.code().to_ascii_lowercase()
}

/// The provider's charge as ours, if it is for an amount we know.
fn charge_of(charge: &ApiCharge) -> Option<Charge> {
    let currency = Currency::ALL.into_iter().find(|c| c.code().eq_ignore_ascii_case(&charge.currency))?;
    Some(Charge { id: charge.id.clone(), amount: Money::new(charge.amount, currency) })
}

/// A 402's reason: a vault token's refusal (one of `TOKEN_REFUSALS`), else a decline.
async fn refusal_of(response: reqwest::Response) -> PaymentError {
    let body: Option<ErrorBody> = response.json().await.ok();
    match body.and_then(|b| b.error.code).filter(|code| TOKEN_REFUSALS.contains(&code.as_str())) {
        Some(code) => PaymentError::Refused(code),
        None => PaymentError::Declined,
    }
}

impl SandboxClient {
    /// A client for the provider at `base_url`, every request limited to `timeout` and showing
    /// `token`.
    pub fn new(base_url: &str, timeout: Duration, token: &AdminToken) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .default_headers(token.authorization())
            .build()?;
        Ok(Self { http, base: base_url.trim_end_matches('/').to_string(), timeout })
    }

    /// How long one request may take.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    pub fn base_url(&self) -> &str {
        &self.base
    }

    async fn request_charge(
        &self,
        idempotency_key: &str,
        amount: Money,
        description: &str,
        token: Option<PaymentToken>,
    ) -> Result<Charge, PaymentError> {
        let request = ApiChargeRequest {
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
            StatusCode::PAYMENT_REQUIRED => Err(refusal_of(response).await),
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
    async fn lookup_key(&self, idempotency_key: &str) -> Result<Lookup, PaymentError> {
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

#[async_trait::async_trait]
impl PaymentProvider for SandboxClient {
    async fn charge(&self, request: ChargeRequest<'_>) -> Result<Charge, PaymentError> {
        self.request_charge(request.key, request.amount, request.description, request.token).await
    }

    async fn refund(&self, key: &str, charge_id: &str, amount: Money) -> Result<String, PaymentError> {
        self.request_refund(key, charge_id, amount).await
    }

    /// The sandbox keeps each charge under its idempotency key: the order's key finds it.
    async fn lookup(&self, order: OrderCharge<'_>) -> Result<Lookup, PaymentError> {
        self.lookup_key(order.key).await
    }

    fn takes_vault_tokens(&self) -> bool {
        true
    }

    /// `POST /v1/payment_tokens/check`: the provider's own allowance rules, nothing recorded.
    async fn check_token(&self, token: &PaymentToken, amount: Money) -> Result<(), PaymentError> {
        let request = ApiChargeRequest {
            amount: amount.amount_minor,
            currency: currency_code(amount.currency),
            description: String::new(),
            payment_token: Some(token.clone()),
        };
        let url = format!("{}{TOKEN_CHECK_PATH}", self.base);
        let response = super::provider_call::send(self.http.post(&url).json(&request), "POST", &url)
            .await
            .map_err(|e| PaymentError::Unavailable(format!("token check failed: {e}")))?;
        match response.status() {
            StatusCode::OK => Ok(()),
            StatusCode::PAYMENT_REQUIRED => match refusal_of(response).await {
                refused @ PaymentError::Refused(_) => Err(refused),
                _ => Err(PaymentError::Unavailable("the token check answered a decline".into())),
            },
            other => Err(PaymentError::Unavailable(format!("token check answered {other}"))),
        }
    }

    async fn is_reachable(&self, within: Duration) -> bool {
        let probe = self.http.get(format!("{}{}", self.base, giftgenius_pay_api::api::HEALTH_PATH));
        probe.timeout(within).send().await.is_ok_and(|r| r.status().is_success())
    }
}
