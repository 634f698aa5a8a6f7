//! Every tool's schemas compile, and `check_output` sees what the policy layer must catch.

use giftgenius_server::mcp::arguments::{check_output, parse_args};
use giftgenius_types::orders::{
    CheckoutData, CommitOrderInput, CreateCheckoutSessionInput, GetOrderInput, OrderData, PrepareOrderData,
    PrepareOrderInput,
};
use giftgenius_types::schema::output_schema;
use giftgenius_types::{
    Currency, Envelope, ErrorCode, GiftCard, MatchVia, Merchant, Money, Reason, RelationshipType, SuggestGiftsData,
    SuggestGiftsInput, ToolError, ToolName, Why,
};
use serde_json::{Map, Value, json};

#[test]
fn every_input_schema_compiles_and_names_what_is_missing() {
    let nothing = Map::new();
    let missing = |errors: Vec<giftgenius_types::FieldError>| -> Vec<String> {
        errors.into_iter().map(|e| format!("{}: {}", e.field, e.message)).collect()
    };
    assert_eq!(
        missing(parse_args::<SuggestGiftsInput>(&nothing).unwrap_err()),
        ["relationship_type: is required; one of: partner, parent, child, sibling, grandparent, grandchild, friend, \
          colleague, boss, teacher, neighbor, other"]
    );
    assert_eq!(
        missing(parse_args::<PrepareOrderInput>(&nothing).unwrap_err()),
        ["gift_id: is required (or items, for several gifts): the id of a gift from suggest_gifts"]
    );
    assert_eq!(
        missing(parse_args::<CommitOrderInput>(&nothing).unwrap_err()),
        ["draft_id: is required", "idempotency_key: is required"]
    );
    assert_eq!(
        missing(parse_args::<CreateCheckoutSessionInput>(&nothing).unwrap_err()),
        ["gift_id: is required", "idempotency_key: is required"]
    );
    assert_eq!(missing(parse_args::<GetOrderInput>(&nothing).unwrap_err()), ["order_id: is required"]);
}

fn gift() -> GiftCard {
    GiftCard {
        id: "gft_pourover_kit".into(),
        title: "Pour-over coffee kit".into(),
        description: "Ceramic dripper and kettle.".into(),
        price: Money::new(4999, Currency::USD),
        merchant: Merchant { id: "m_bean".into(), name: "Bean & Brew".into() },
        tags: vec!["coffee".into()],
        reasons: vec![Reason {
            text: "Matches their interest in coffee (tagged “coffee”)".into(),
            why: Why::Interest { interest: "coffee".into(), via: MatchVia::Tag, term: "coffee".into() },
        }],
        in_stock: true,
        image_url: "http://127.0.0.1:8000/images/gft_pourover_kit.svg".into(),
    }
}

fn json_of<T: serde::Serialize>(envelope: Envelope<T>) -> Value {
    Value::Object(envelope.to_json().unwrap())
}

#[test]
fn real_results_conform_to_their_output_schemas() {
    let query = SuggestGiftsInput::for_relationship(RelationshipType::Friend).normalize();
    let suggest = output_schema::<Envelope<SuggestGiftsData>>();
    let ok = json_of(Envelope::ok(ToolName::SuggestGifts, SuggestGiftsData { query, gifts: vec![gift()] }));
    assert_eq!(check_output(&suggest, &ok), []);
    let mut error =
        ToolError::validation(vec![giftgenius_types::FieldError::new("age", "must be at most 120 (got 121)")], "req_1");
    error = error.with_attempted(json!({"age": 121})).with_partial_results(vec![json!({"any": "thing"})]);
    let failed = json_of(Envelope::<SuggestGiftsData>::err(ToolName::SuggestGifts, error));
    assert_eq!(check_output(&suggest, &failed), []);
    for schema in [
        output_schema::<Envelope<PrepareOrderData>>(),
        output_schema::<Envelope<OrderData>>(),
        output_schema::<Envelope<CheckoutData>>(),
    ] {
        let error = ToolError::new(ErrorCode::InternalError, "Something went wrong.", "req_2");
        let value = json_of(Envelope::<OrderData>::err(ToolName::GetOrder, error));
        assert_eq!(check_output(&schema, &value), []);
    }
}

#[test]
fn broken_results_are_caught_and_named() {
    let suggest = output_schema::<Envelope<SuggestGiftsData>>();
    let shown = |value: Value| -> Vec<String> {
        check_output(&suggest, &value).into_iter().map(|e| format!("{}: {}", e.field, e.message)).collect()
    };
    // `ok: true` without the `gifts` and `query` the schema requires.
    assert_eq!(
        shown(json!({"v": 6, "ok": true, "tool": "suggest_gifts"})),
        ["query: is required", "gifts: is required"]
    );
    // A `oneOf` no branch of which matches is explained by its first branch (here: the success shape).
    assert_eq!(
        shown(json!({"v": 7, "ok": false, "tool": "suggest_gifts", "error": {
            "code": "NOPE", "category": "validation", "message": "m", "retryable": false, "reference": "r"}})),
        ["query: is required", "gifts: is required", "ok: must be true (got false)", "v: must be 6 (got 7)"]
    );
    // Inside the error shape, a code that is not in the table.
    let order = output_schema::<Envelope<OrderData>>();
    let error = json!({"v": 6, "ok": false, "tool": "get_order", "error": {
        "code": "NOPE", "category": "validation", "message": "m", "retryable": false, "reference": "r"}});
    assert!(!check_output(&order, &error).is_empty());
}
