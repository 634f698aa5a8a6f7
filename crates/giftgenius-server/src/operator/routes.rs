//! The operator's HTTP API, only with `--operator-token-file` (without it the routes do not
//! exist: 404, as `/acp` without platforms):
//!
//! | route | body | answer |
//! |---|---|---|
//! | `GET /operator/orders/{id}` | — | 200 `{changed: false, order}` |
//! | `GET /operator/orders/{id}/packing-slip` | — | 200 the printable slip (HTML); 409 `not_to_ship`, `delivery_details_erased` |
//! | `POST /operator/orders/{id}/processing` | `{}` or none | 200 `{changed, order}` |
//! | `POST /operator/orders/{id}/ship` | `{carrier, tracking_number, tracking_url}` | 200 `{changed, order}` |
//! | `POST /operator/orders/{id}/complete` | `{}` or none | 200 `{changed, order}` |
//! | `POST /operator/orders/{id}/refund` | `{amount, reason, idempotency_key}` | 200 `{changed, order}` |
//!
//! `order` is the order as get_order shows it. Every request shows `Authorization: Bearer
//! <token>` (the file's first line, compared in constant time), else 401 with
//! `WWW-Authenticate: Bearer realm="operator"`. Errors are `{"error": {code, message, …}}`:
//! 400 `invalid_request` with `field_errors`; 404 `order_not_found`; 409 `illegal_transition`
//! (with `current_status`), `cancellation_in_progress`, `amount_exceeds_refundable` (with
//! `refundable`), `idempotency_key_reused`, `order_busy`; 503 `payment_provider_unavailable`
//! (with `Retry-After`); 500 `internal_error` with only a `reference`.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use giftgenius_pay_api::token::{Secret, SecretKind};
use giftgenius_types::FieldError;
use serde_json::{Value, json};

use super::input;
use super::service::{Done, Operator, OperatorError};
use giftgenius_commerce::order::Step;

/// Where the routes live.
pub const OPERATOR_PATH: &str = "/operator/orders";

/// The largest body a request may have (a shipment or a refund is a few hundred bytes).
const MAX_BODY_BYTES: usize = 16 * 1024;

/// Marks the operator's token (its `Debug` hides the value, as every secret's does).
#[derive(Debug, Clone, Copy)]
pub enum OperatorKind {}

impl SecretKind for OperatorKind {
    const NAME: &'static str = "OperatorToken";
}

/// `--operator-token-file`'s token: its first line, at least 32 printable characters.
pub type OperatorToken = Secret<OperatorKind>;

/// The routes, behind `token`.
pub fn router(operator: Arc<Operator>, token: OperatorToken) -> Router {
    Router::new()
        .route(&format!("{OPERATOR_PATH}/{{id}}"), get(show))
        .route(&format!("{OPERATOR_PATH}/{{id}}/packing-slip"), get(packing_slip))
        .route(&format!("{OPERATOR_PATH}/{{id}}/processing"), post(processing))
        .route(&format!("{OPERATOR_PATH}/{{id}}/ship"), post(ship))
        .route(&format!("{OPERATOR_PATH}/{{id}}/complete"), post(complete))
        .route(&format!("{OPERATOR_PATH}/{{id}}/refund"), post(refund))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .route_layer(from_fn_with_state(Arc::new(token), authorized))
        .with_state(operator)
        .merge(absent())
}

/// Every `/operator/…` path that is no route of the API (all of them without
/// `--operator-token-file`) answers a bare 404, whatever the method: not left to the router's
/// fallback, which `/mcp`'s JSON-RPC check also guards.
pub fn absent() -> Router {
    Router::new().route("/operator/{*rest}", axum::routing::any(|| async { StatusCode::NOT_FOUND }))
}

/// 401 unless the request shows the operator's token.
async fn authorized(State(token): State<Arc<OperatorToken>>, request: Request, next: Next) -> Response {
    if token.admits(request.headers().get(header::AUTHORIZATION)) {
        return next.run(request).await;
    }
    let mut response = error(
        StatusCode::UNAUTHORIZED,
        json!({"code": "unauthorized", "message": "This API needs the operator's bearer token."}),
    );
    response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(r#"Bearer realm="operator""#));
    response
}

async fn show(State(operator): State<Arc<Operator>>, Path(id): Path<String>) -> Response {
    answer(operator.order(&id).await)
}

async fn packing_slip(State(operator): State<Arc<Operator>>, Path(id): Path<String>) -> Response {
    super::packing_slip::answer(operator.packing_slip(&id).await)
}

async fn processing(State(operator): State<Arc<Operator>>, Path(id): Path<String>, body: Bytes) -> Response {
    match body_of(&body).and_then(|body| input::no_fields(&body)) {
        Ok(()) => answer(operator.advance(&id, &Step::Processing).await),
        Err(errors) => answer(Err(OperatorError::Invalid(errors))),
    }
}

async fn ship(State(operator): State<Arc<Operator>>, Path(id): Path<String>, body: Bytes) -> Response {
    match body_of(&body).and_then(|body| input::shipment(&body)) {
        Ok(shipment) => answer(operator.advance(&id, &Step::Ship(shipment)).await),
        Err(errors) => answer(Err(OperatorError::Invalid(errors))),
    }
}

async fn complete(State(operator): State<Arc<Operator>>, Path(id): Path<String>, body: Bytes) -> Response {
    match body_of(&body).and_then(|body| input::no_fields(&body)) {
        Ok(()) => answer(operator.advance(&id, &Step::Complete).await),
        Err(errors) => answer(Err(OperatorError::Invalid(errors))),
    }
}

async fn refund(State(operator): State<Arc<Operator>>, Path(id): Path<String>, body: Bytes) -> Response {
    match body_of(&body).and_then(|body| input::refund(&body)) {
        Ok(ask) => answer(operator.refund(&id, &ask).await),
        Err(errors) => answer(Err(OperatorError::Invalid(errors))),
    }
}

/// The body as JSON (`null` when empty), or a field error saying it is not JSON.
fn body_of(body: &[u8]) -> Result<Value, Vec<FieldError>> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    serde_json::from_slice(body).map_err(|_| vec![FieldError::new("(body)", "must be JSON")])
}

fn error(status: StatusCode, error: Value) -> Response {
    (status, [(header::CACHE_CONTROL, "no-store")], axum::Json(json!({ "error": error }))).into_response()
}

/// The HTTP answer of a step.
pub(super) fn answer(result: Result<Done, OperatorError>) -> Response {
    let e = match result {
        Ok(done) => return (StatusCode::OK, [(header::CACHE_CONTROL, "no-store")], axum::Json(done)).into_response(),
        Err(e) => e,
    };
    let message = e.to_string();
    let (status, body) = match &e {
        OperatorError::NotFound(_) => (StatusCode::NOT_FOUND, json!({"code": "order_not_found", "message": message})),
        OperatorError::Invalid(errors) => {
            (StatusCode::BAD_REQUEST, json!({"code": "invalid_request", "message": message, "field_errors": errors}))
        }
        OperatorError::IllegalTransition { current, .. } => {
            (StatusCode::CONFLICT, json!({"code": "illegal_transition", "message": message, "current_status": current}))
        }
        OperatorError::CancellationInProgress(_) => {
            (StatusCode::CONFLICT, json!({"code": "cancellation_in_progress", "message": message}))
        }
        OperatorError::ExceedsRefundable { refundable, .. } => (
            StatusCode::CONFLICT,
            json!({"code": "amount_exceeds_refundable", "message": message, "refundable": refundable}),
        ),
        OperatorError::KeyReused(_) => {
            (StatusCode::CONFLICT, json!({"code": "idempotency_key_reused", "message": message}))
        }
        OperatorError::Busy => (StatusCode::CONFLICT, json!({"code": "order_busy", "message": message})),
        OperatorError::ProviderUnavailable => {
            let mut response = error(
                StatusCode::SERVICE_UNAVAILABLE,
                json!({"code": "payment_provider_unavailable", "message": message}),
            );
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return response;
        }
        OperatorError::Internal { reference } => (
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"code": "internal_error", "message": message, "reference": reference}),
        ),
    };
    error(status, body)
}
