//! The HTTP handlers of `api.rs`'s routes, behind `guard.rs`'s checks. Errors are answered in
//! the API's own shape; what went wrong inside (a database failure) goes to the log, never into
//! an answer.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::answer::error;
use crate::api::{
    CHARGES_PATH, ChargeList, ChargeRequest, ChargeStatus, HEALTH_PATH, IDEMPOTENCY_KEY_HEADER, MAX_KEY_LEN, MAX_PAGE,
    REFUNDS_PATH, REPLAYED_HEADER, RefundList, RefundRequest, SETTINGS_PATH, SettingsUpdate, TOKEN_CHECK_PATH,
    TokenCheck,
};
use crate::faults::{Fault, FaultPlan};
use crate::guard::{Keys, guard};
use crate::ledger::{Begin, ChargeRow, Ledger, RefundOutcome, RefundRow, Settled};
use crate::vault::{check, failure_message};

/// The largest request body taken (a charge request is a few hundred bytes).
const MAX_BODY_BYTES: usize = 16 * 1024;
/// How long a `timeout` fault keeps the charged request unanswered: longer than any client waits.
const TIMEOUT_HANG: Duration = Duration::from_secs(120);
const DEFAULT_PAGE: usize = 100;
const MAX_DESCRIPTION_CHARS: usize = 1000;
/// The longest vault token id, session id or merchant id a charge may name (the allowance's).
const MAX_TOKEN_FIELD_CHARS: usize = 256;
/// Stripe's largest amount is eight digits; ours is generous but finite.
const MAX_AMOUNT: i64 = 1_000_000_000_000;

/// Every route, each behind [`guard`] (loopback `Host`, no `Origin`, the path's key, JSON
/// bodies); ACP's delegate_payment is `delegate::routes`.
pub fn router(ledger: Ledger, keys: Keys) -> Router {
    let delegate = crate::delegate::routes::router(ledger.clone(), keys.delegate.clone());
    Router::new()
        .route(HEALTH_PATH, get(|| async { "ok" }))
        .route(CHARGES_PATH, get(list_charges).post(create_charge))
        .route(&format!("{CHARGES_PATH}/{{id}}"), get(get_charge))
        .route(TOKEN_CHECK_PATH, post(check_token))
        .route(REFUNDS_PATH, get(list_refunds).post(create_refund))
        .route(SETTINGS_PATH, get(get_settings).post(update_settings))
        .with_state(ledger)
        .merge(delegate)
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn_with_state(Arc::new(keys), guard))
        .layer(axum::middleware::from_fn(crate::traces::span_per_request))
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

fn invalid(message: &str) -> Response {
    error(StatusCode::BAD_REQUEST, "invalid_request_error", None, message, None)
}

/// A database failure: logged, answered as a plain 500.
fn internal(e: &sqlx::Error) -> Response {
    tracing::error!(error = %e, "sandbox ledger failed");
    error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "api_error",
        None,
        "An error occurred on our side; nothing was charged by this request.",
        None,
    )
}

fn in_use() -> Response {
    error(
        StatusCode::CONFLICT,
        "idempotency_error",
        Some("idempotency_key_in_use"),
        "A request with this idempotency key is still being processed; retry it shortly.",
        None,
    )
}

/// The answer a decided charge gives: 200 with the charge, or 402 with its decline (or its
/// vault token's refusal).
fn decided(row: &ChargeRow, replayed: bool) -> Response {
    let mut response = match row.status() {
        ChargeStatus::Succeeded => (StatusCode::OK, axum::Json(row.to_api())).into_response(),
        ChargeStatus::Failed => {
            let code = row.failure_code.as_deref().unwrap_or("card_declined");
            error(StatusCode::PAYMENT_REQUIRED, "card_error", Some(code), failure_message(code), Some(&row.id))
        }
        ChargeStatus::Processing => return in_use(),
    };
    if replayed {
        response.headers_mut().insert(REPLAYED_HEADER, HeaderValue::from_static("true"));
    }
    response
}

/// The request's `Idempotency-Key`, or why not.
fn idempotency_key(headers: &HeaderMap) -> Result<String, &'static str> {
    let key = headers
        .get(IDEMPOTENCY_KEY_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .ok_or("The Idempotency-Key header is required: this provider refunds only idempotently.")?;
    if key.len() > MAX_KEY_LEN || key.chars().any(|c| c.is_control()) {
        return Err("The Idempotency-Key header must be at most 255 printable characters.");
    }
    Ok(key.to_string())
}

/// `POST /v1/refunds`: recorded and decided in one step, after the latency; faults apply like
/// to charges (`5xx`: nothing refunded; `timeout`: refunded, the answer withheld), except
/// `decline`.
async fn create_refund(State(ledger): State<Ledger>, headers: HeaderMap, body: Bytes) -> Response {
    let key = match idempotency_key(&headers) {
        Ok(key) => key,
        Err(why) => return invalid(why),
    };
    let Ok(request) = serde_json::from_slice::<RefundRequest>(&body) else {
        return invalid("The body must be JSON: {charge, amount?, reason?}.");
    };
    if request.amount.is_some_and(|a| !(1..=MAX_AMOUNT).contains(&a)) {
        return invalid("amount must be a positive integer of minor units.");
    }
    if request.reason.as_deref().is_some_and(|r| !["requested_by_customer", "duplicate", "fraudulent"].contains(&r)) {
        return invalid("reason must be requested_by_customer, duplicate or fraudulent.");
    }
    // A replay answers at once, whatever faults are queued (as a charge replay does).
    match ledger.refund_by_key(&key).await {
        Ok(Some(_)) => {
            return match ledger.refund(&key, &request, now_ms()).await {
                Ok(outcome) => refund_outcome(outcome),
                Err(e) => internal(&e),
            };
        }
        Ok(None) => {}
        Err(e) => return internal(&e),
    }
    let decided = async {
        ledger.wait_latency(tokio::time::Instant::now()).await?;
        let fault = ledger.take_fault().await?;
        if fault == Some(Fault::ServerError) {
            return Ok::<_, sqlx::Error>(None);
        }
        Ok(Some((ledger.refund(&key, &request, now_ms()).await?, fault)))
    };
    match decided.await {
        Err(e) => internal(&e),
        Ok(None) => {
            tracing::info!(key, "injected fault: 503, nothing refunded");
            error(
                StatusCode::SERVICE_UNAVAILABLE,
                "api_error",
                None,
                "The sandbox provider is unavailable (injected); nothing was refunded.",
                None,
            )
        }
        Ok(Some((outcome, fault))) => {
            let created = matches!(outcome, RefundOutcome::Created(_));
            let response = refund_outcome(outcome);
            if created && fault == Some(Fault::Timeout) {
                tracing::info!(key, "injected fault: refunded, answer withheld");
                tokio::time::sleep(TIMEOUT_HANG).await;
                return error(StatusCode::GATEWAY_TIMEOUT, "api_error", None, "The answer was lost (injected).", None);
            }
            response
        }
    }
}

/// The HTTP answer for what a refund request came to; a replay carries `Idempotent-Replayed`.
fn refund_outcome(outcome: RefundOutcome) -> Response {
    match outcome {
        RefundOutcome::Created(row) => {
            tracing::info!(refund = row.id, charge = row.charge, amount = row.amount, "refund succeeded");
            (StatusCode::OK, axum::Json(row.to_api())).into_response()
        }
        RefundOutcome::Replayed(row) => {
            let mut response = (StatusCode::OK, axum::Json(row.to_api())).into_response();
            response.headers_mut().insert(REPLAYED_HEADER, HeaderValue::from_static("true"));
            response
        }
        RefundOutcome::KeyReused => error(
            StatusCode::BAD_REQUEST,
            "idempotency_error",
            None,
            "Keys for idempotent requests can only be used with the same parameters they were first used with.",
            None,
        ),
        RefundOutcome::NoSuchCharge => error(
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            Some("resource_missing"),
            "No such succeeded charge.",
            None,
        ),
        RefundOutcome::AlreadyRefunded => error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            Some("charge_already_refunded"),
            "This charge has nothing left to refund.",
            None,
        ),
    }
}

/// `GET /v1/refunds?idempotency_key=K` (0 or 1 refund), else every refund page by page.
async fn list_refunds(State(ledger): State<Ledger>, Query(query): Query<HashMap<String, String>>) -> Response {
    let page = if let Some(key) = query.get("idempotency_key") {
        ledger.refund_by_key(key).await.map(|row| (row.into_iter().collect(), false))
    } else {
        let limit = match query.get("limit").map(|l| l.parse::<usize>()) {
            None => DEFAULT_PAGE,
            Some(Ok(n)) if (1..=MAX_PAGE).contains(&n) => n,
            Some(_) => return invalid("limit must be between 1 and 1000."),
        };
        ledger.refund_page(query.get("starting_after").map(String::as_str), limit).await
    };
    match page {
        Ok((rows, has_more)) => {
            let list =
                RefundList { object: "list".into(), data: rows.iter().map(RefundRow::to_api).collect(), has_more };
            (StatusCode::OK, axum::Json(list)).into_response()
        }
        Err(e) => internal(&e),
    }
}

/// The request's key and body, checked and normalized (currency in lower case), or why not.
fn parse_charge(headers: &HeaderMap, body: &[u8]) -> Result<(String, ChargeRequest), &'static str> {
    let key = headers
        .get(IDEMPOTENCY_KEY_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .ok_or("The Idempotency-Key header is required: this provider charges only idempotently.")?;
    if key.len() > MAX_KEY_LEN || key.chars().any(|c| c.is_control()) {
        return Err("The Idempotency-Key header must be at most 255 printable characters.");
    }
    Ok((key.to_string(), parse_charge_body(body)?))
}

/// A charge request's body, checked and normalized (currency in lower case), or why not.
fn parse_charge_body(body: &[u8]) -> Result<ChargeRequest, &'static str> {
    let mut request: ChargeRequest =
        serde_json::from_slice(body).map_err(|_| "The body must be JSON: {amount, currency, description}.")?;
    if !(1..=MAX_AMOUNT).contains(&request.amount) {
        return Err("amount must be a positive integer of minor units.");
    }
    if request.currency.len() != 3 || !request.currency.chars().all(|c| c.is_ascii_alphabetic()) {
        return Err("currency must be a three-letter ISO 4217 code.");
    }
    request.currency = request.currency.to_ascii_lowercase();
    if request.description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err("description must be at most 1000 characters.");
    }
    if let Some(token) = &request.payment_token {
        let id_ok = |id: &str| !id.is_empty() && id.chars().count() <= MAX_TOKEN_FIELD_CHARS;
        if !id_ok(&token.token) || !id_ok(&token.checkout_session_id) || !id_ok(&token.merchant_id) {
            return Err("payment_token's token, checkout_session_id and merchant_id must be 1 to 256 characters.");
        }
    }
    Ok(request)
}

/// `POST /v1/payment_tokens/check`: whether the charge in the body could be paid with its
/// vault token (the allowance rules of `vault::check`), recording nothing.
async fn check_token(State(ledger): State<Ledger>, body: Bytes) -> Response {
    let request = match parse_charge_body(&body) {
        Ok(request) => request,
        Err(why) => return invalid(why),
    };
    let Some(token) = &request.payment_token else { return invalid("payment_token is required.") };
    let row = match ledger.vault_token(&token.token).await {
        Ok(row) => row,
        Err(e) => return internal(&e),
    };
    // No charge exists: a token used by any charge is used.
    match check(row.as_ref(), "", &request, token, now_ms()) {
        Ok(_) => {
            let answer = TokenCheck { object: "payment_token_check".into(), usable: true };
            (StatusCode::OK, axum::Json(answer)).into_response()
        }
        Err(code) => error(StatusCode::PAYMENT_REQUIRED, "card_error", Some(code), failure_message(code), None),
    }
}

/// `POST /v1/charges`
async fn create_charge(State(ledger): State<Ledger>, headers: HeaderMap, body: Bytes) -> Response {
    let (key, request) = match parse_charge(&headers, &body) {
        Ok(parsed) => parsed,
        Err(why) => return invalid(why),
    };
    let (attempt, latency) = match ledger.begin(&key, &request, now_ms()).await {
        Ok(Begin::Started { attempt, latency, .. }) => (attempt, latency),
        Ok(Begin::Existing(row)) if !row.same_request(&request) => {
            return error(
                StatusCode::BAD_REQUEST,
                "idempotency_error",
                None,
                "Keys for idempotent requests can only be used with the same parameters they were first used with.",
                None,
            );
        }
        Ok(Begin::Existing(row)) => return decided(&row, true),
        Err(e) => return internal(&e),
    };
    // Decided in a task of its own: once received, a charge request is carried through even if
    // the client stops waiting (as at a real provider), so a lookup never sees it stuck. The
    // fault is taken and the charge decided (by its vault token when it names one) in one
    // write, committed with whatever other requests are deciding meanwhile (`group.rs`).
    let decision = tokio::spawn({
        let (ledger, key, request) = (ledger.clone(), key.clone(), request.clone());
        async move {
            ledger.wait_latency_from(tokio::time::Instant::now(), Some(latency)).await?;
            ledger.settle(&key, &attempt, &request, now_ms()).await
        }
    });
    let decision = match decision.await {
        Ok(decided) => decided,
        Err(e) => {
            tracing::error!(error = %e, "a charge decision failed");
            return error(StatusCode::INTERNAL_SERVER_ERROR, "api_error", None, "An error occurred on our side.", None);
        }
    };
    match decision {
        Err(e) => internal(&e),
        Ok(Settled::Abandoned) => {
            tracing::info!(key, "injected fault: 503, nothing charged");
            error(
                StatusCode::SERVICE_UNAVAILABLE,
                "api_error",
                None,
                "The sandbox provider is unavailable (injected); nothing was charged.",
                None,
            )
        }
        // Our attempt was declared dead and taken over: what it would have decided no longer counts.
        Ok(Settled::TakenOver) => in_use(),
        Ok(Settled::Decided { row, fault }) => {
            tracing::info!(
                key,
                charge = row.id,
                status = row.status().as_str(),
                failure = row.failure_code,
                amount = row.amount,
                currency = row.currency,
                "charge decided"
            );
            if fault == Some(Fault::Timeout) {
                tracing::info!(key, charge = row.id, "injected fault: charged, answer withheld");
                tokio::time::sleep(TIMEOUT_HANG).await;
                return error(StatusCode::GATEWAY_TIMEOUT, "api_error", None, "The answer was lost (injected).", None);
            }
            decided(&row, false)
        }
    }
}

/// `GET /v1/charges/{id}`
async fn get_charge(State(ledger): State<Ledger>, Path(id): Path<String>) -> Response {
    match ledger.by_id(&id).await {
        Ok(Some(row)) => (StatusCode::OK, axum::Json(row.to_api())).into_response(),
        Ok(None) => {
            error(StatusCode::NOT_FOUND, "invalid_request_error", Some("resource_missing"), "No such charge.", None)
        }
        Err(e) => internal(&e),
    }
}

/// `GET /v1/charges?idempotency_key=K` (0 or 1 charge), else the ledger page by page.
async fn list_charges(State(ledger): State<Ledger>, Query(query): Query<HashMap<String, String>>) -> Response {
    let page = if let Some(key) = query.get("idempotency_key") {
        ledger.by_key(key, now_ms()).await.map(|row| (row.into_iter().collect(), false))
    } else {
        let limit = match query.get("limit").map(|l| l.parse::<usize>()) {
            None => DEFAULT_PAGE,
            Some(Ok(n)) if (1..=MAX_PAGE).contains(&n) => n,
            Some(_) => return invalid("limit must be between 1 and 1000."),
        };
        ledger.page(query.get("starting_after").map(String::as_str), limit).await
    };
    match page {
        Ok((rows, has_more)) => {
            let list =
                ChargeList { object: "list".into(), data: rows.iter().map(ChargeRow::to_api).collect(), has_more };
            (StatusCode::OK, axum::Json(list)).into_response()
        }
        Err(e) => internal(&e),
    }
}

/// `GET /admin/settings`
async fn get_settings(State(ledger): State<Ledger>) -> Response {
    match ledger.settings().await {
        Ok(settings) => axum::Json(settings).into_response(),
        Err(e) => internal(&e),
    }
}

/// `POST /admin/settings`
async fn update_settings(State(ledger): State<Ledger>, body: Bytes) -> Response {
    let Ok(update) = serde_json::from_slice::<SettingsUpdate>(&body) else {
        return invalid("The body must be JSON: {latency_ms?, faults?}.");
    };
    let plan = match update.faults.as_deref().map(FaultPlan::parse).transpose() {
        Ok(plan) => plan,
        Err(e) => return invalid(&e),
    };
    match ledger.update_settings(&update, plan.as_ref()).await {
        Ok(settings) => {
            tracing::info!(latency_ms = settings.latency_ms, faults = settings.faults, "settings changed");
            axum::Json(settings).into_response()
        }
        Err(e) => internal(&e),
    }
}
