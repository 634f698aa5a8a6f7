//! The JSON Schemas advertised in `tools/list`: snapshotted so a breaking change shows up in
//! review, plus the invariants MCP hosts and models rely on.

use std::sync::Arc;

use giftgenius_types::orders::{
    CancelOrderInput, CheckoutData, CommitOrderInput, CreateCheckoutSessionInput, DeleteMyDataData, DeleteMyDataInput,
    GetOrderInput, ListOrdersData, ListOrdersInput, OrderData, PrepareOrderData, PrepareOrderInput,
    ProductCheckoutInput, ReopenOrderDraftInput,
};
use giftgenius_types::schema::{input_schema, output_schema};
use giftgenius_types::{Envelope, SuggestGiftsData, SuggestGiftsInput};
use serde_json::{Map, Value, json};

type Schema = Arc<Map<String, Value>>;

fn inputs() -> [(&'static str, Schema); 10] {
    [
        ("suggest_gifts", input_schema::<SuggestGiftsInput>()),
        ("prepare_order", input_schema::<PrepareOrderInput>()),
        ("commit_order", input_schema::<CommitOrderInput>()),
        ("reopen_order_draft", input_schema::<ReopenOrderDraftInput>()),
        ("get_order", input_schema::<GetOrderInput>()),
        ("create_checkout_session", input_schema::<CreateCheckoutSessionInput>()),
        ("list_orders", input_schema::<ListOrdersInput>()),
        ("cancel_order", input_schema::<CancelOrderInput>()),
        ("delete_my_data", input_schema::<DeleteMyDataInput>()),
        ("checkout_session", input_schema::<ProductCheckoutInput>()),
    ]
}

fn outputs() -> [(&'static str, Schema, &'static [&'static str]); 6] {
    [
        ("suggest_gifts", output_schema::<Envelope<SuggestGiftsData>>(), &["gifts", "query"]),
        ("prepare_order", output_schema::<Envelope<PrepareOrderData>>(), &["draft"]),
        ("order", output_schema::<Envelope<OrderData>>(), &["order"]),
        ("create_checkout_session", output_schema::<Envelope<CheckoutData>>(), &["checkout"]),
        ("list_orders", output_schema::<Envelope<ListOrdersData>>(), &["orders"]),
        (
            "delete_my_data",
            output_schema::<Envelope<DeleteMyDataData>>(),
            &[
                "checkout_sessions_deleted",
                "drafts_deleted",
                "financial_records_kept",
                "financial_records_retention_days",
                "idempotency_keys_deleted",
                "orders_anonymized",
                "saved_addresses_deleted",
            ],
        ),
    ]
}

fn required(schema: &Value) -> Vec<&str> {
    let mut names: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    names.sort_unstable();
    names
}

/// Every `required` list anywhere in a schema (root, branches, `$defs`), with where it is.
fn all_required(value: &Value, at: &str, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                if key == "required" {
                    for name in child.as_array().into_iter().flatten().filter_map(Value::as_str) {
                        out.push((at.to_string(), name.to_string()));
                    }
                } else {
                    all_required(child, &format!("{at}/{key}"), out);
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                all_required(item, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn input_schemas_match_their_snapshots() {
    for (tool, schema) in inputs() {
        insta::assert_json_snapshot!(format!("input_{tool}"), &*schema);
    }
}

#[test]
fn output_schemas_match_their_snapshots() {
    for (tool, schema, _) in outputs() {
        insta::assert_json_snapshot!(format!("output_{tool}"), &*schema);
    }
}

#[test]
fn every_schema_has_an_object_root_in_draft_2020_12() {
    let all = inputs().into_iter().chain(outputs().into_iter().map(|(tool, schema, _)| (tool, schema)));
    for (tool, schema) in all {
        assert_eq!(schema.get("type"), Some(&json!("object")), "{tool}");
        assert_eq!(schema.get("$schema"), Some(&json!("https://json-schema.org/draft/2020-12/schema")), "{tool}");
        // The wrapper type's title and doc comment are stripped: they are noise in tools/list.
        assert!(schema.get("title").is_none() && schema.get("description").is_none(), "{tool}");
    }
}

#[test]
fn input_schemas_refuse_unknown_arguments() {
    for (tool, schema) in inputs() {
        assert_eq!(schema.get("additionalProperties"), Some(&json!(false)), "{tool}");
    }
}

#[test]
fn relationship_type_is_the_only_required_suggest_gifts_argument() {
    let schema = Value::Object((*input_schema::<SuggestGiftsInput>()).clone());
    assert_eq!(required(&schema), ["relationship_type"]);
    let properties = schema["properties"].as_object().unwrap();
    let mut names: Vec<&str> = properties.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["about", "age", "budget_max", "budget_min", "currency", "interests", "limit", "occasion", "relationship_type"]
    );
}

#[test]
fn about_is_an_optional_string_of_at_most_300_characters_the_model_is_told_about() {
    let schema = Value::Object((*input_schema::<SuggestGiftsInput>()).clone());
    let about = &schema["properties"]["about"];
    assert_eq!(about["maxLength"], 300, "{about}");
    assert!(about["type"] == json!(["string", "null"]) || about["type"] == "string", "{about}");
    // The description is what the model reads: what to put there, and that it is not kept.
    let description = about["description"].as_str().unwrap_or_default();
    for words in ["about the recipient", "300 characters", "not stored", "repeated"] {
        assert!(description.contains(words), "{words:?} not in {description:?}");
    }
}

#[test]
fn the_order_inputs_require_exactly_their_ids_and_keys() {
    let expected: [&[&str]; 10] = [
        &["relationship_type"],
        // The recipient may come from the saved address; a draft without one cannot be committed.
        // Either gift_id or items names what is bought (the rule is the input's own: one of the two).
        &[],
        // A missing confirmation_token is the permission error CONFIRMATION_REQUIRED, not a
        // validation error: only the person's click in the widget can supply it.
        &["draft_id", "idempotency_key"],
        &["draft_id"],
        &["order_id"],
        &["gift_id", "idempotency_key"],
        &[],
        &["idempotency_key", "order_id"],
        &[],
        // ChatGPT's product checkout entry: the shape its contract names.
        &["checkout_session"],
    ];
    for ((tool, schema), expected) in inputs().into_iter().zip(expected) {
        assert_eq!(required(&Value::Object((*schema).clone())), expected, "{tool}");
    }
}

#[test]
fn every_input_property_is_described_for_the_model() {
    for (tool, schema) in inputs() {
        for (name, property) in schema["properties"].as_object().unwrap() {
            let description = property.get("description").and_then(Value::as_str).unwrap_or("");
            assert!(!description.trim().is_empty(), "{tool}.{name} has no description");
        }
    }
}

#[test]
fn no_schema_requires_optional_parts_that_models_would_invent() {
    // Seed 004: a required `partial_results` makes models invent entries.
    const OPTIONAL: [&str; 6] = ["partial_results", "notice", "partial", "field_errors", "attempted", "retry_after_ms"];
    let all = inputs().into_iter().chain(outputs().into_iter().map(|(tool, schema, _)| (tool, schema)));
    for (tool, schema) in all {
        let mut found = Vec::new();
        all_required(&Value::Object((*schema).clone()), "#", &mut found);
        let bad: Vec<_> = found.iter().filter(|(_, name)| OPTIONAL.contains(&name.as_str())).collect();
        assert!(bad.is_empty(), "{tool} requires {bad:?}");
    }
}

#[test]
fn output_schemas_require_version_ok_and_tool() {
    for (tool, schema, _) in outputs() {
        let schema = Value::Object((*schema).clone());
        assert_eq!(required(&schema), ["ok", "tool", "v"], "{tool}");
        assert_eq!(schema["properties"]["v"]["const"], json!(6), "{tool}");
        assert_eq!(schema["properties"]["ok"]["type"], json!("boolean"), "{tool}");
    }
}

#[test]
fn output_schemas_have_one_ok_branch_and_one_error_branch() {
    for (tool, schema, data_fields) in outputs() {
        let schema = Value::Object((*schema).clone());
        let branches = schema["oneOf"].as_array().unwrap_or_else(|| panic!("{tool}: no oneOf"));
        assert_eq!(branches.len(), 2, "{tool}");
        let ok = branches.iter().find(|b| b["properties"]["ok"]["const"] == json!(true));
        let err = branches.iter().find(|b| b["properties"]["ok"]["const"] == json!(false));
        let (ok, err) = (
            ok.unwrap_or_else(|| panic!("{tool}: no ok branch")),
            err.unwrap_or_else(|| panic!("{tool}: no error branch")),
        );

        assert_eq!(required(ok), *data_fields, "{tool}: the ok branch requires the data fields");
        for field in data_fields.iter().chain(&["notice", "partial"]) {
            assert!(ok["properties"].get(*field).is_some(), "{tool}: ok branch lacks `{field}`");
        }
        assert!(ok["properties"].get("error").is_none(), "{tool}");

        assert_eq!(required(err), ["error"], "{tool}");
        assert!(err["properties"]["error"].get("$ref").is_some(), "{tool}: error is not the ToolError schema");
        for data_field in data_fields {
            assert!(err["properties"].get(data_field).is_none(), "{tool}");
        }
    }
}

#[test]
fn the_error_schema_lists_every_error_code() {
    let schema = output_schema::<Envelope<OrderData>>();
    let defs = schema["$defs"].as_object().expect("$defs");
    let codes = serde_json::to_string(&defs["ErrorCode"]).unwrap();
    for code in giftgenius_types::ErrorCode::ALL {
        assert!(codes.contains(&format!("\"{code}\"")), "{code} missing from the ErrorCode schema");
    }
    assert_eq!(
        required(&defs["ToolError"]),
        ["category", "code", "message", "reference", "retryable"],
        "ToolError's required fields"
    );
}

#[test]
fn schemas_are_cached_and_stable() {
    let first = input_schema::<SuggestGiftsInput>();
    let second = input_schema::<SuggestGiftsInput>();
    assert!(Arc::ptr_eq(&first, &second));
    // Input and output views of the same type are cached separately.
    let as_output = output_schema::<SuggestGiftsInput>();
    assert!(!Arc::ptr_eq(&first, &as_output));
}
