//! `POST /agentic_commerce/delegate_payment` (docs/acp.md §8), behind `guard.rs` (loopback
//! `Host`, no `Origin`, the delegate key, a JSON body). Then, stopping at the first failure:
//! `API-Version` (400 with `supported_versions`), `Idempotency-Key` (400), the body as JSON (400),
//! the key's claim (replay with its status and `Idempotent-Replayed: true`, 409 in flight with
//! `Retry-After`, 422 conflict), the body's checks (400/422, stored for the key), the provider's
//! latency (so a test can hold a request in flight), then the token and the 201, stored with
//! the key in one transaction. A 5xx is never stored. Every answer echoes `Request-Id` (or
//! brings a fresh one) and the `Idempotency-Key` it was given.
//!
//! Nothing here logs a request body or a card field; log lines carry the request id, the
//! token id, the brand and the last four.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::Value;
use tokio::time::Instant;

use super::fingerprint::{fingerprint, identity};
use super::rfc3339::{format_ms, now_ms};
use super::store::Claim;
use super::validate::{Invalid, Tokenize, validate};
use super::{
    API_VERSION_HEADER, DELEGATE_PAYMENT_PATH, DelegateError, DelegatePaymentResponse, REQUEST_ID_HEADER,
    SUPPORTED_VERSIONS,
};
use crate::api::{IDEMPOTENCY_KEY_HEADER, MAX_KEY_LEN, REPLAYED_HEADER};
use crate::ledger::Ledger;
use crate::token::DelegateKey;
use crate::vault::NewVaultToken;

/// What the endpoint needs: the database and the key its callers show.
struct Service {
    ledger: Ledger,
    key: DelegateKey,
    /// [`identity`] of `key`: the idempotency scope.
    identity: String,
}

/// The endpoint's route, with its own state.
pub(crate) fn router(ledger: Ledger, key: DelegateKey) -> Router {
    let identity = identity(&key);
    Router::new().route(DELEGATE_PAYMENT_PATH, post(delegate_payment)).with_state(Arc::new(Service {
        ledger,
        key,
        identity,
    }))
}

/// An answer before the headers every answer carries.
#[derive(Debug)]
struct Answer {
    status: StatusCode,
    /// JSON.
    body: String,
    replayed: bool,
    retry_after: bool,
}

impl Answer {
    fn json(status: StatusCode, body: &impl serde::Serialize) -> Self {
        // Our own types always serialize.
        let body = serde_json::to_string(body).unwrap_or_else(|_| "{}".into());
        Self { status, body, replayed: false, retry_after: false }
    }

    fn error(status: StatusCode, kind: &str, code: &str, message: &str) -> Self {
        Self::json(status, &error_body(kind, code, message))
    }

    fn invalid_request(status: StatusCode, code: &str, message: &str) -> Self {
        Self::error(status, "invalid_request", code, message)
    }

    /// A field that failed its check: `invalid_card` with its JSONPath.
    fn invalid_card(status: StatusCode, param: &str, message: &str) -> Self {
        let mut body = error_body("invalid_request", "invalid_card", message);
        body.param = Some(param.into());
        Self::json(status, &body)
    }

    fn field(invalid: &Invalid) -> Self {
        let status = if invalid.unprocessable { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::BAD_REQUEST };
        Self::invalid_card(status, &invalid.param, &invalid.message)
    }

    fn in_flight() -> Self {
        let mut answer = Self::invalid_request(
            StatusCode::CONFLICT,
            "idempotency_in_flight",
            "A request with this Idempotency-Key is currently being processed; retry it shortly.",
        );
        answer.retry_after = true;
        answer
    }

    /// Something failed on our side (logged by the caller with the request id).
    fn internal() -> Self {
        Self::error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "processing_error",
            "processing_error",
            "An error occurred on our side; no token was made by this request. Retry it.",
        )
    }
}

fn error_body(kind: &str, code: &str, message: &str) -> DelegateError {
    DelegateError {
        kind: kind.into(),
        code: code.into(),
        message: message.into(),
        param: None,
        supported_versions: None,
    }
}

/// The answer with the headers every answer carries: `Request-Id` (the caller's, or a fresh
/// one), the `Idempotency-Key` it was given, and `Idempotent-Replayed` / `Retry-After` when
/// they apply.
fn respond(answer: Answer, headers: &HeaderMap, request_id: &HeaderValue) -> Response {
    let mut response = (answer.status, answer.body).into_response();
    let out = response.headers_mut();
    out.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    out.insert(REQUEST_ID_HEADER, request_id.clone());
    if let Some(key) = headers.get(IDEMPOTENCY_KEY_HEADER) {
        out.insert(IDEMPOTENCY_KEY_HEADER, key.clone());
    }
    if answer.replayed {
        out.insert(REPLAYED_HEADER, HeaderValue::from_static("true"));
    }
    if answer.retry_after {
        out.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    response
}

/// The caller's `Request-Id`, or a fresh `req_…`.
fn request_id(headers: &HeaderMap) -> HeaderValue {
    headers.get(REQUEST_ID_HEADER).cloned().unwrap_or_else(|| {
        HeaderValue::from_str(&format!("req_{}", uuid::Uuid::new_v4().simple())).expect("hex is a header value")
    })
}

/// A refusal of `guard.rs` on this path (403, 401, 415), in the endpoint's own error shape.
pub(crate) fn refused(headers: &HeaderMap, status: StatusCode, code: &str, message: &str) -> Response {
    respond(Answer::invalid_request(status, code, message), headers, &request_id(headers))
}

async fn delegate_payment(
    State(service): State<Arc<Service>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let request_id = request_id(&headers);
    let reference = String::from_utf8_lossy(request_id.as_bytes()).into_owned();
    let answer = service.answer(&headers, body, &reference).await;
    respond(answer, &headers, &request_id)
}

/// The `API-Version`, if it is one we speak.
fn check_version(headers: &HeaderMap) -> Result<(), Answer> {
    let (code, message) = match headers.get(API_VERSION_HEADER).map(|v| v.to_str().unwrap_or_default().trim()) {
        Some(version) if SUPPORTED_VERSIONS.contains(&version) => return Ok(()),
        None => ("missing_api_version", "The API-Version header is required."),
        Some(_) => ("unsupported_api_version", "This API-Version is not supported."),
    };
    let mut body = error_body("invalid_request", code, message);
    body.supported_versions = Some(SUPPORTED_VERSIONS.iter().map(|v| v.to_string()).collect());
    Err(Answer::json(StatusCode::BAD_REQUEST, &body))
}

/// The `Idempotency-Key`: 1–255 printable ASCII characters. The schema's code list has no
/// code for a malformed key, so one is answered like a missing one: a usable key is required.
fn idempotency_key(headers: &HeaderMap) -> Result<String, Answer> {
    let required = |message| Answer::invalid_request(StatusCode::BAD_REQUEST, "idempotency_key_required", message);
    let Some(value) = headers.get(IDEMPOTENCY_KEY_HEADER) else {
        return Err(required("Idempotency-Key header is required"));
    };
    match value.to_str() {
        Ok(key)
            if !key.is_empty()
                && key.len() <= MAX_KEY_LEN
                && key.bytes().all(|b| b.is_ascii_graphic() || b == b' ') =>
        {
            Ok(key.to_string())
        }
        _ => Err(required("The Idempotency-Key header must be 1 to 255 printable ASCII characters.")),
    }
}

impl Service {
    async fn answer(
        self: &Arc<Self>,
        headers: &HeaderMap,
        body: Result<Bytes, BytesRejection>,
        reference: &str,
    ) -> Answer {
        if let Err(answer) = check_version(headers) {
            return answer;
        }
        let key = match idempotency_key(headers) {
            Ok(key) => key,
            Err(answer) => return answer,
        };
        let bytes = match body {
            Ok(bytes) => bytes,
            Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                return Answer::invalid_request(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "payload_too_large",
                    "The request body is too large.",
                );
            }
            Err(_) => return Answer::invalid_card(StatusCode::BAD_REQUEST, "$", "The request body could not be read."),
        };
        let Ok(body) = serde_json::from_slice::<Value>(&bytes) else {
            return Answer::invalid_card(StatusCode::BAD_REQUEST, "$", "The request body must be JSON.");
        };
        let claim = self.ledger.claim_delegate(&self.identity, &key, &fingerprint(&self.key, &body), now_ms()).await;
        match claim {
            Err(e) => {
                tracing::error!(request_id = reference, error = %e, "delegate_payment: the database failed");
                Answer::internal()
            }
            Ok(Claim::Replay { status, body }) => Answer {
                status: StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                body,
                replayed: true,
                retry_after: false,
            },
            Ok(Claim::Conflict) => Answer::invalid_request(
                StatusCode::UNPROCESSABLE_ENTITY,
                "idempotency_conflict",
                "Idempotency-Key has already been used with a different request body",
            ),
            Ok(Claim::InFlight) => Answer::in_flight(),
            Ok(Claim::Fresh { attempt }) => {
                // Carried through in a task of its own: once claimed, the key gets its answer
                // even if the caller stops waiting, so a retry finds it instead of a stuck claim.
                let (service, reference) = (self.clone(), reference.to_string());
                let work = tokio::spawn(async move { service.finish(&key, &attempt, &body, &reference).await });
                work.await.unwrap_or_else(|e| {
                    tracing::error!(error = %e, "delegate_payment: the request's task failed");
                    Answer::internal()
                })
            }
        }
    }

    /// Checks the body, makes the token, stores the answer; a failure releases the key.
    async fn finish(&self, key: &str, attempt: &str, body: &Value, reference: &str) -> Answer {
        match self.tokenize(key, attempt, body, reference).await {
            Ok(answer) => answer,
            Err(e) => {
                tracing::error!(request_id = reference, error = format!("{e:#}"), "delegate_payment failed");
                if let Err(e) = self.ledger.release_delegate(&self.identity, key, attempt).await {
                    tracing::error!(request_id = reference, error = %e, "delegate_payment: cannot release the key");
                }
                Answer::internal()
            }
        }
    }

    async fn tokenize(&self, key: &str, attempt: &str, body: &Value, reference: &str) -> anyhow::Result<Answer> {
        let (answer, token) = match validate(body, now_ms()) {
            Err(invalid) => {
                tracing::info!(request_id = reference, param = invalid.param, "delegate_payment refused");
                (Answer::field(&invalid), None)
            }
            Ok(checked) => {
                self.ledger.wait_latency(Instant::now()).await?;
                let (response, token) = vault_token(checked, key, now_ms())?;
                (Answer::json(StatusCode::CREATED, &response), Some(token))
            }
        };
        let stored = self.ledger.finish_delegate(
            &self.identity,
            key,
            attempt,
            answer.status.as_u16(),
            &answer.body,
            token.as_ref(),
        );
        if !stored.await? {
            // Declared dead and taken over by a retry: that one answers for the key.
            return Ok(Answer::in_flight());
        }
        if let Some(token) = token {
            tracing::info!(
                request_id = reference,
                token = token.id,
                brand = token.brand,
                last4 = token.last4,
                outcome = token.outcome.as_str(),
                "vault token created"
            );
        }
        Ok(answer)
    }
}

/// The token for a checked request, and the 201 body that names it.
fn vault_token(checked: Tokenize, key: &str, now_ms: i64) -> anyhow::Result<(DelegatePaymentResponse, NewVaultToken)> {
    let mut random = [0u8; 16];
    getrandom::fill(&mut random).map_err(|e| anyhow::anyhow!("no random bytes for a token id: {e}"))?;
    let Tokenize { request, expires_at_ms, outcome, brand, last4 } = checked;
    let allowance = request.allowance;
    let id = format!("vt_{}", hex::encode(random));
    let mut metadata = request.metadata;
    metadata.insert("merchant_id".into(), allowance.merchant_id.clone());
    metadata.insert("idempotency_key".into(), key.to_string());
    let response = DelegatePaymentResponse { id: id.clone(), created: format_ms(now_ms), metadata };
    let token = NewVaultToken {
        id,
        created_at_ms: now_ms,
        max_amount: allowance.max_amount,
        currency: allowance.currency,
        checkout_session_id: allowance.checkout_session_id,
        merchant_id: allowance.merchant_id,
        expires_at_ms,
        outcome,
        brand: brand.to_string(),
        last4,
        funding: request.payment_method.display_card_funding_type.as_str().to_string(),
    };
    Ok((response, token))
}
