//! The error-code table: the one place a code's spelling, layer, retryability and guidance live.

use std::collections::HashSet;

use giftgenius_types::{ErrorCategory, ErrorCode, FieldError, ToolError};
use serde_json::json;

use ErrorCategory::{Business, Other, Permission, Transient, Validation};

/// Every code with the category and retryability the model is promised. A new code must be
/// added here on purpose: the test fails until it is.
const EXPECTED: &[(ErrorCode, &str, ErrorCategory, bool)] = &[
    (ErrorCode::ValidationError, "VALIDATION_ERROR", Validation, false),
    (ErrorCode::IdempotencyKeyReused, "IDEMPOTENCY_KEY_REUSED", Validation, false),
    (ErrorCode::GiftNotFound, "GIFT_NOT_FOUND", Validation, false),
    (ErrorCode::DraftNotFound, "DRAFT_NOT_FOUND", Validation, false),
    (ErrorCode::OrderNotFound, "ORDER_NOT_FOUND", Validation, false),
    (ErrorCode::RequestInProgress, "REQUEST_IN_PROGRESS", Transient, true),
    (ErrorCode::UpstreamTimeout, "UPSTREAM_TIMEOUT", Transient, true),
    (ErrorCode::UpstreamUnavailable, "UPSTREAM_UNAVAILABLE", Transient, true),
    (ErrorCode::PaymentProviderUnavailable, "PAYMENT_PROVIDER_UNAVAILABLE", Transient, true),
    (ErrorCode::DailyLimitExceeded, "DAILY_LIMIT_EXCEEDED", Business, false),
    (ErrorCode::HourlyLimitExceeded, "HOURLY_LIMIT_EXCEEDED", Business, false),
    (ErrorCode::GiftUnavailable, "GIFT_UNAVAILABLE", Business, false),
    (ErrorCode::DraftExpired, "DRAFT_EXPIRED", Business, false),
    (ErrorCode::OrderNotCancellable, "ORDER_NOT_CANCELLABLE", Business, false),
    (ErrorCode::PaymentDeclined, "PAYMENT_DECLINED", Business, false),
    (ErrorCode::NoSavedCard, "NO_SAVED_CARD", Business, false),
    (ErrorCode::ConfirmationRequired, "CONFIRMATION_REQUIRED", Permission, false),
    (ErrorCode::ConfirmationExpired, "CONFIRMATION_EXPIRED", Permission, false),
    (ErrorCode::AuthRequired, "AUTH_REQUIRED", Permission, false),
    (ErrorCode::InternalError, "INTERNAL_ERROR", Other, true),
];

#[test]
fn the_expected_table_covers_every_code_exactly_once() {
    let expected: Vec<ErrorCode> = EXPECTED.iter().map(|(code, ..)| *code).collect();
    assert_eq!(expected, ErrorCode::ALL, "ErrorCode::ALL and this test's table differ");
}

#[test]
fn every_code_is_spelled_the_same_by_as_str_serde_and_display() {
    for &(code, spelling, ..) in EXPECTED {
        assert_eq!(code.as_str(), spelling);
        assert_eq!(serde_json::to_value(code).unwrap(), json!(spelling));
        assert_eq!(serde_json::from_value::<ErrorCode>(json!(spelling)).unwrap(), code);
        assert_eq!(code.to_string(), spelling);
    }
}

#[test]
fn every_code_is_upper_snake_case_and_unique() {
    let mut seen = HashSet::new();
    for code in ErrorCode::ALL {
        let s = code.as_str();
        assert!(s.chars().all(|c| c.is_ascii_uppercase() || c == '_') && !s.starts_with('_'), "{s}");
        assert!(seen.insert(s), "{s} appears twice");
    }
    assert_eq!(seen.len(), ErrorCode::ALL.len());
}

#[test]
fn every_code_has_its_fixed_category_and_retryability() {
    for &(code, spelling, category, retryable) in EXPECTED {
        assert_eq!(code.category(), category, "{spelling}");
        assert_eq!(code.retryable(), retryable, "{spelling}");
    }
}

#[test]
fn only_transient_and_internal_errors_are_retryable() {
    for &code in ErrorCode::ALL {
        let expected = matches!(code.category(), Transient | Other);
        assert_eq!(code.retryable(), expected, "{code}: a {:?} error", code.category());
    }
}

#[test]
fn tool_error_new_copies_the_codes_category_and_retryability() {
    for &code in ErrorCode::ALL {
        let error = ToolError::new(code, "Something happened.", "req_42");
        assert_eq!(error.code, code);
        assert_eq!(error.category, code.category(), "{code}");
        assert_eq!(error.retryable, code.retryable(), "{code}");
        assert_eq!(error.message, "Something happened.");
        assert_eq!(error.reference, "req_42");
        assert!(error.field_errors.is_empty() && error.attempted.is_none());
        assert!(error.partial_results.is_none() && error.retry_after_ms.is_none());
    }
}

#[test]
fn every_code_explains_its_meaning_and_the_next_step() {
    for &code in ErrorCode::ALL {
        let meaning = code.meaning();
        let next = code.next_step();
        assert!(!meaning.trim().is_empty(), "{code} has no meaning");
        assert!(!next.trim().is_empty(), "{code} has no next step");
        assert_eq!(meaning, meaning.trim(), "{code}: meaning has stray whitespace");
        assert!(meaning.ends_with('.') && next.ends_with('.'), "{code}: full sentences");
        assert_ne!(meaning, next, "{code}");
    }
}

#[test]
fn categories_serialise_in_snake_case() {
    let spelled: Vec<_> = [Transient, Validation, Business, Permission, Other]
        .into_iter()
        .map(|c| serde_json::to_value(c).unwrap())
        .collect();
    assert_eq!(
        spelled,
        [json!("transient"), json!("validation"), json!("business"), json!("permission"), json!("other")]
    );
}

#[test]
fn a_validation_error_summarises_its_field_errors_in_the_message() {
    let none = ToolError::validation(vec![], "req_1");
    assert_eq!(none.message, "The arguments are invalid.");

    let one = ToolError::validation(vec![FieldError::new("age", "must be at most 120 (got 121)")], "req_1");
    assert_eq!(one.message, "Invalid argument age: must be at most 120 (got 121)");

    let three = ToolError::validation(
        vec![
            FieldError::new("relationship_type", "is required"),
            FieldError::new("age", "must be at most 120 (got 121)"),
            FieldError::new("budget", "is not a known argument"),
        ],
        "req_1",
    );
    assert_eq!(three.message, "3 invalid arguments: relationship_type, age, budget");
    assert_eq!(three.field_errors.len(), 3);
    for error in [none, one, three] {
        assert_eq!((error.code, error.category, error.retryable), (ErrorCode::ValidationError, Validation, false));
    }
}

#[test]
fn the_builders_fill_the_optional_parts() {
    let error = ToolError::new(ErrorCode::RequestInProgress, "The same order is still being placed.", "req_9")
        .with_retry_after_ms(500)
        .with_attempted(json!({"draft_id": "drf_1"}))
        .with_partial_results(vec![json!({"id": "gft_1"})]);
    assert_eq!(error.retry_after_ms, Some(500));
    assert_eq!(error.attempted, Some(json!({"draft_id": "drf_1"})));
    assert_eq!(error.partial_results, Some(vec![json!({"id": "gft_1"})]));
    assert!(error.retryable);
}
