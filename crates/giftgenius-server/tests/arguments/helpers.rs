//! Helpers for the argument tests: accept/reject wrappers and table-driven cases.

use giftgenius_server::mcp::arguments::parse_args;
use giftgenius_types::args::Validate;
use giftgenius_types::{ErrorCategory, ErrorCode, ToolError};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

pub const REFERENCE: &str = "req_test";

/// `json!({...})` as the argument map a tool call carries.
pub fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("tool arguments must be a JSON object, not {other}"),
    }
}

/// Parses arguments that must be accepted, showing the field errors if they are not.
pub fn accept<T>(value: Value) -> T
where
    T: DeserializeOwned + JsonSchema + Validate + 'static,
{
    let shown = value.to_string();
    match parse_args::<T>(&args(value)) {
        Ok(input) => input,
        Err(errors) => panic!("{shown} was rejected: {errors:#?}"),
    }
}

/// Parses arguments that must be rejected and wraps the problems as the server does.
pub fn reject<T>(value: Value) -> ToolError
where
    T: DeserializeOwned + JsonSchema + Validate + std::fmt::Debug + 'static,
{
    let shown = value.to_string();
    match parse_args::<T>(&args(value)) {
        Ok(input) => panic!("{shown} was accepted as {input:?}"),
        Err(errors) => ToolError::validation(errors, REFERENCE),
    }
}

/// One rejected-arguments case of a table-driven test.
pub struct Case {
    pub name: &'static str,
    pub args: Value,
    /// A field the error must name exactly (`interests[0]` for list items).
    pub field: &'static str,
    /// Words the message for that field must contain, so the model can act on it.
    pub mentions: &'static [&'static str],
    /// How many field errors the call must report.
    pub count: usize,
}

/// Runs each case and checks the error is a well-formed validation error naming the field.
pub fn run_cases<T>(cases: &[Case])
where
    T: DeserializeOwned + JsonSchema + Validate + std::fmt::Debug + 'static,
{
    let mut failures = Vec::new();
    for case in cases {
        let error = reject::<T>(case.args.clone());
        if let Err(why) = check_case(case, &error) {
            failures.push(format!("{}: {why}\n  error: {}", case.name, serde_json::to_string(&error).unwrap()));
        }
    }
    assert!(failures.is_empty(), "{} case(s) failed:\n{}", failures.len(), failures.join("\n"));
}

fn check_case(case: &Case, error: &ToolError) -> Result<(), String> {
    assert_is_validation_error(error)?;
    let named = error.field_errors.iter().find(|e| e.field == case.field).ok_or_else(|| {
        let fields: Vec<&str> = error.field_errors.iter().map(|e| e.field.as_str()).collect();
        format!("field `{}` is not named; field_errors name {fields:?}", case.field)
    })?;
    for word in case.mentions {
        if !named.message.contains(word) {
            return Err(format!("message {:?} does not mention {word:?}", named.message));
        }
    }
    if error.field_errors.len() != case.count {
        return Err(format!("expected {} field error(s), got {}", case.count, error.field_errors.len()));
    }
    if !error.message.contains(case.field) {
        return Err(format!("top-level message {:?} does not name `{}`", error.message, case.field));
    }
    Ok(())
}

/// What every invalid-arguments error must look like, whatever the tool.
pub fn assert_is_validation_error(error: &ToolError) -> Result<(), String> {
    let checks = [
        (error.code == ErrorCode::ValidationError, "code is VALIDATION_ERROR"),
        (error.category == ErrorCategory::Validation, "category is validation"),
        (!error.retryable, "retryable is false"),
        (error.reference == REFERENCE, "reference is kept"),
        (!error.field_errors.is_empty(), "field_errors is not empty"),
        (error.field_errors.iter().all(|e| !e.message.trim().is_empty()), "every field error has a message"),
        (error.retry_after_ms.is_none() && error.partial_results.is_none(), "no retry_after_ms or partial_results"),
    ];
    match checks.iter().find(|(ok, _)| !ok) {
        Some((_, what)) => Err(format!("expected: {what}")),
        None => Ok(()),
    }
}
