//! Realistic values shared by the contract tests, and helpers for argument tests.

use giftgenius_types::args::Validate;
use giftgenius_types::envelope::NoticeCode;
use giftgenius_types::orders::{Order, OrderData, OrderStatus};
use giftgenius_types::{
    Currency, ErrorCategory, ErrorCode, FailedSource, GiftCard, Merchant, Money, Notice, Occasion, Partial,
    RelationshipType, SuggestGiftsData, SuggestGiftsQuery, Suggestion, ToolError, parse_args,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

pub const REFERENCE: &str = "req_test";

pub fn pour_over_kit() -> GiftCard {
    GiftCard {
        id: "gft_pourover_kit".into(),
        title: "Pour-over coffee kit".into(),
        description: "Ceramic dripper, gooseneck kettle and 250 g of single-origin beans.".into(),
        price: Money::new(4999, Currency::USD),
        merchant: Merchant { id: "m_bean_and_brew".into(), name: "Bean & Brew".into() },
        tags: vec!["coffee".into(), "kitchen".into()],
        reasons: vec!["loves coffee".into(), "within the $30–$60 budget".into()],
        in_stock: true,
        image_url: "/images/gft_pourover_kit.webp".into(),
    }
}

pub fn trail_map_print() -> GiftCard {
    GiftCard {
        id: "gft_trail_map_print".into(),
        title: "Custom trail map print".into(),
        description: "A framed print of a favourite hiking trail, 30×40 cm.".into(),
        price: Money::new(3450, Currency::USD),
        merchant: Merchant { id: "m_paper_peaks".into(), name: "Paper Peaks".into() },
        tags: vec!["hiking".into(), "decor".into()],
        reasons: vec!["loves hiking".into()],
        in_stock: false,
        image_url: "/images/gft_trail_map_print.webp".into(),
    }
}

pub fn query() -> SuggestGiftsQuery {
    SuggestGiftsQuery {
        relationship_type: RelationshipType::Friend,
        age: Some(34),
        interests: vec!["coffee".into(), "hiking".into()],
        budget_min: Some(Money::new(3000, Currency::USD)),
        budget_max: Some(Money::new(6000, Currency::USD)),
        occasion: Some(Occasion::Birthday),
        currency: Currency::USD,
        limit: 6,
    }
}

pub fn suggest_data() -> SuggestGiftsData {
    SuggestGiftsData { query: query(), gifts: vec![pour_over_kit(), trail_map_print()] }
}

pub fn few_matches_notice() -> Notice {
    let mut set_arguments = Map::new();
    set_arguments.insert("budget_max".into(), json!(80));
    Notice {
        code: NoticeCode::FewMatches,
        message: "Only 2 gifts match; 9 match if budget_max is 80.".into(),
        suggestions: vec![Suggestion {
            message: "9 gifts match if budget_max is 80".into(),
            set_arguments,
            matches: 9,
        }],
    }
}

pub fn one_catalog_timed_out() -> Partial {
    Partial {
        message: "One gift catalog did not answer; these results may be incomplete.".into(),
        failed_sources: vec![FailedSource {
            source: "catalog_artisan".into(),
            code: ErrorCode::UpstreamTimeout,
            message: "did not answer within 2 seconds".into(),
        }],
    }
}

pub fn order_data() -> OrderData {
    OrderData {
        order: Order {
            id: "ord_7QX2KD".into(),
            draft_id: "drf_91ab3c".into(),
            gift_id: "gft_pourover_kit".into(),
            gift_title: "Pour-over coffee kit".into(),
            merchant: "Bean & Brew".into(),
            quantity: 2,
            total: Money::new(10498, Currency::USD),
            status: OrderStatus::Paid,
            created_at: "2025-11-03T14:22:05Z".into(),
        },
    }
}

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
