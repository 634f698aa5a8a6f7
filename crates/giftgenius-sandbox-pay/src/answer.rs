//! The Stripe-shaped error answer (`api::ErrorBody`) that the routes and the guard in front of
//! them give alike.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::api::{ApiError, ErrorBody};

/// `status` with an `ErrorBody` of `kind`, `code`, `message` and the charge it is about.
pub(crate) fn error(
    status: StatusCode,
    kind: &str,
    code: Option<&str>,
    message: &str,
    charge: Option<&str>,
) -> Response {
    let body = ErrorBody {
        error: ApiError {
            kind: kind.into(),
            code: code.map(str::to_string),
            message: message.into(),
            charge: charge.map(str::to_string),
        },
    };
    (status, axum::Json(body)).into_response()
}
