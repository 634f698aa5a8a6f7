//! The one error of the ACP routes, [`AcpFailure`]: an HTTP status and ACP's `Error` object.
//! Internal failures log their detail under the request's id and answer a fixed sentence.

use axum::http::StatusCode;
use giftgenius_types::acp::{ACP_SUPPORTED_VERSIONS, AcpError, AcpErrorType};

/// An answer that is not a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcpFailure {
    pub status: StatusCode,
    pub error: AcpError,
    /// Whole seconds for `Retry-After`.
    pub retry_after_secs: Option<u64>,
}

impl AcpFailure {
    pub fn new(status: StatusCode, kind: AcpErrorType, code: &str, message: impl Into<String>) -> Self {
        Self {
            status,
            error: AcpError { kind, code: code.into(), message: message.into(), param: None, supported_versions: None },
            retry_after_secs: None,
        }
    }

    /// A 4xx of kind `invalid_request`.
    pub fn invalid_request(status: StatusCode, code: &str, message: impl Into<String>) -> Self {
        Self::new(status, AcpErrorType::InvalidRequest, code, message)
    }

    /// 400 `code` about the body field at `param` (a JSONPath).
    pub fn field(code: &str, param: impl Into<String>, message: impl Into<String>) -> Self {
        let mut failure = Self::invalid_request(StatusCode::BAD_REQUEST, code, message);
        failure.error.param = Some(param.into());
        failure
    }

    pub fn unauthorized() -> Self {
        Self::invalid_request(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "Send Authorization: Bearer with the API key this merchant gave your platform.",
        )
    }

    /// 400 for a missing (`present` false) or unsupported API version; `field` names where it
    /// goes (`The API-Version header`, `meta.api_version`).
    pub fn api_version(present: bool, field: &str) -> Self {
        let (code, message) = if present {
            (
                "unsupported_api_version",
                format!("{field} names a version this merchant does not support; see supported_versions."),
            )
        } else {
            ("missing_api_version", format!("{field} is required; see supported_versions."))
        };
        let mut failure = Self::invalid_request(StatusCode::BAD_REQUEST, code, message);
        failure.error.supported_versions = Some(ACP_SUPPORTED_VERSIONS.iter().map(|v| v.to_string()).collect());
        failure
    }

    pub fn session_not_found() -> Self {
        Self::invalid_request(StatusCode::NOT_FOUND, "session_not_found", "There is no such checkout session.")
    }

    /// 405: the session's status forbids the request.
    pub fn not_allowed(code: &str, message: &str) -> Self {
        Self::invalid_request(StatusCode::METHOD_NOT_ALLOWED, code, message)
    }

    /// 409 `idempotency_in_flight`.
    pub fn in_flight(retry_after_secs: u64) -> Self {
        let mut failure = Self::invalid_request(
            StatusCode::CONFLICT,
            "idempotency_in_flight",
            "A request with this Idempotency-Key is still being processed; retry after Retry-After seconds.",
        );
        failure.retry_after_secs = Some(retry_after_secs.max(1));
        failure
    }

    /// Our failure: `detail` goes to the log only.
    pub fn internal(request_id: &str, detail: &dyn std::fmt::Display) -> Self {
        tracing::error!(request_id, error = %detail, "ACP request failed");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            AcpErrorType::ProcessingError,
            "internal_error",
            format!("Something went wrong on our side; retry, and quote Request-Id {request_id} if it keeps failing."),
        )
    }
}
