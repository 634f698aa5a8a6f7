//! The result envelope on the wire: what it looks like, and which mixed shapes it refuses.

use giftgenius_types::orders::OrderData;
use giftgenius_types::{CONTRACT_VERSION, Envelope, ErrorCode, FieldError, SuggestGiftsData, ToolError, ToolName};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::fixtures::{few_matches_notice, one_catalog_timed_out, order_data, pour_over_kit, query, suggest_data};

fn round_trip<T>(envelope: &Envelope<T>) -> Envelope<T>
where
    T: Serialize + DeserializeOwned,
{
    let text = serde_json::to_string(envelope).expect("an envelope serialises");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}\ndoes not deserialise back: {e}"))
}

fn wire<T: Serialize>(envelope: &Envelope<T>) -> Value {
    serde_json::to_value(envelope).expect("an envelope serialises")
}

fn keys(value: &Value) -> Vec<&str> {
    value.as_object().expect("an object").keys().map(String::as_str).collect()
}

fn upstream_unavailable() -> ToolError {
    ToolError::new(ErrorCode::UpstreamUnavailable, "No gift catalog is answering right now.", "req_01JB6ZQ4")
        .with_attempted(serde_json::to_value(query()).unwrap())
        .with_retry_after_ms(2_000)
}

fn gift_unavailable() -> ToolError {
    ToolError::new(ErrorCode::GiftUnavailable, "The pour-over coffee kit is out of stock.", "req_01JB6ZR9")
        .with_partial_results(vec![serde_json::to_value(pour_over_kit()).unwrap()])
}

fn budget_order_error() -> ToolError {
    ToolError::validation(
        vec![FieldError::new("budget_min", "budget_min (80) is greater than budget_max (50)")],
        "req_01JB6ZS2",
    )
}

#[test]
fn an_ok_suggest_gifts_envelope_with_notice_and_partial_survives_a_round_trip() {
    let envelope = Envelope::Ok {
        tool: ToolName::SuggestGifts,
        data: suggest_data(),
        notice: Some(few_matches_notice()),
        partial: Some(one_catalog_timed_out()),
    };
    assert_eq!(round_trip(&envelope), envelope);
}

#[test]
fn an_ok_envelope_without_notice_or_partial_survives_a_round_trip() {
    let envelope = Envelope::ok(ToolName::SuggestGifts, suggest_data());
    assert_eq!(round_trip(&envelope), envelope);
    let empty = Envelope::ok(ToolName::SuggestGifts, SuggestGiftsData { query: query(), gifts: vec![] });
    assert_eq!(round_trip(&empty), empty);
}

#[test]
fn an_ok_order_envelope_survives_a_round_trip() {
    for tool in [ToolName::CommitOrder, ToolName::GetOrder] {
        let envelope = Envelope::ok(tool, order_data());
        assert_eq!(round_trip(&envelope), envelope);
    }
}

#[test]
fn error_envelopes_survive_a_round_trip_with_every_optional_field() {
    for error in [upstream_unavailable(), gift_unavailable(), budget_order_error()] {
        let suggest: Envelope<SuggestGiftsData> = Envelope::err(ToolName::SuggestGifts, error.clone());
        assert_eq!(round_trip(&suggest), suggest);
        let order: Envelope<OrderData> = Envelope::err(ToolName::CommitOrder, error);
        assert_eq!(round_trip(&order), order);
    }
}

#[test]
fn an_ok_envelope_carries_version_ok_and_tool_with_the_data_fields_at_the_top_level() {
    let json = wire(&Envelope::ok(ToolName::SuggestGifts, suggest_data()));
    assert_eq!(json["v"], json!(6));
    assert_eq!(json["v"], json!(CONTRACT_VERSION));
    assert_eq!(json["ok"], json!(true));
    assert_eq!(json["tool"], json!("suggest_gifts"));
    assert_eq!(json["query"], serde_json::to_value(query()).unwrap());
    assert_eq!(json["gifts"][0]["id"], json!("gft_pourover_kit"));
    assert_eq!(json["gifts"][0]["price"], json!({"amount_minor": 4999, "currency": "USD"}));
    let mut fields = keys(&json);
    fields.sort_unstable();
    // No `data` wrapper, no `error`, and `notice`/`partial` are absent (not null) when None.
    assert_eq!(fields, ["gifts", "ok", "query", "tool", "v"]);
}

#[test]
fn an_order_envelope_puts_the_order_at_the_top_level() {
    let json = wire(&Envelope::ok(ToolName::GetOrder, order_data()));
    assert_eq!(json["tool"], json!("get_order"));
    assert_eq!(json["order"]["id"], json!("ord_7QX2KD"));
    assert_eq!(json["order"]["status"], json!("paid"));
    assert_eq!(json["order"]["total"], json!({"amount_minor": 10498, "currency": "USD"}));
    let mut fields = keys(&json);
    fields.sort_unstable();
    assert_eq!(fields, ["ok", "order", "tool", "v"]);
}

#[test]
fn notice_and_partial_appear_on_the_wire_only_when_present() {
    let json = wire(&Envelope::Ok {
        tool: ToolName::SuggestGifts,
        data: suggest_data(),
        notice: Some(few_matches_notice()),
        partial: Some(one_catalog_timed_out()),
    });
    assert_eq!(json["notice"]["code"], json!("FEW_MATCHES"));
    assert_eq!(json["notice"]["suggestions"][0]["set_arguments"], json!({"budget_max": 80}));
    assert_eq!(json["notice"]["suggestions"][0]["matches"], json!(9));
    assert_eq!(json["partial"]["failed_sources"][0]["code"], json!("UPSTREAM_TIMEOUT"));
    assert_eq!(json["partial"]["failed_sources"][0]["source"], json!("catalog_artisan"));
}

#[test]
fn an_error_envelope_carries_only_version_ok_tool_and_error() {
    let envelope: Envelope<SuggestGiftsData> = Envelope::err(ToolName::SuggestGifts, upstream_unavailable());
    let json = wire(&envelope);
    let mut fields = keys(&json);
    fields.sort_unstable();
    assert_eq!(fields, ["error", "ok", "tool", "v"]);
    assert_eq!(json["v"], json!(6));
    assert_eq!(json["ok"], json!(false));
    let error = &json["error"];
    assert_eq!(error["code"], json!("UPSTREAM_UNAVAILABLE"));
    assert_eq!(error["category"], json!("transient"));
    assert_eq!(error["retryable"], json!(true));
    assert_eq!(error["retry_after_ms"], json!(2000));
    assert_eq!(error["reference"], json!("req_01JB6ZQ4"));
    assert_eq!(error["attempted"]["budget_max"], json!({"amount_minor": 6000, "currency": "USD"}));
    // Empty and absent optional parts are left out, never sent as null or [].
    assert!(error.get("field_errors").is_none(), "{error}");
    assert!(error.get("partial_results").is_none(), "{error}");
}

#[test]
fn a_validation_error_envelope_lists_its_field_errors() {
    let envelope: Envelope<SuggestGiftsData> = Envelope::err(ToolName::SuggestGifts, budget_order_error());
    let error = &wire(&envelope)["error"];
    assert_eq!(error["code"], json!("VALIDATION_ERROR"));
    assert_eq!(error["category"], json!("validation"));
    assert_eq!(error["retryable"], json!(false));
    assert_eq!(
        error["field_errors"],
        json!([{"field": "budget_min", "message": "budget_min (80) is greater than budget_max (50)"}])
    );
    assert!(error.get("retry_after_ms").is_none() && error.get("attempted").is_none(), "{error}");
}

#[test]
fn the_accessors_tell_ok_from_error() {
    let ok = Envelope::ok(ToolName::GetOrder, order_data());
    assert!(ok.is_ok());
    assert_eq!(ok.tool(), ToolName::GetOrder);
    assert_eq!(ok.data(), Some(&order_data()));
    assert_eq!(ok.error(), None);

    let err: Envelope<OrderData> = Envelope::err(ToolName::CommitOrder, gift_unavailable());
    assert!(!err.is_ok());
    assert_eq!(err.tool(), ToolName::CommitOrder);
    assert_eq!(err.data(), None);
    assert_eq!(err.error(), Some(&gift_unavailable()));
}

#[test]
fn every_tool_name_serialises_as_its_wire_name_and_parses_back() {
    for tool in ToolName::ALL {
        assert_eq!(serde_json::to_value(tool).unwrap(), json!(tool.as_str()));
        assert_eq!(ToolName::parse(tool.as_str()), Some(tool));
    }
    assert_eq!(ToolName::parse("buy_everything"), None);
}

#[test]
fn explicit_null_notice_and_partial_read_as_absent() {
    let mut json = wire(&Envelope::ok(ToolName::SuggestGifts, suggest_data()));
    json["notice"] = Value::Null;
    json["partial"] = Value::Null;
    let envelope: Envelope<SuggestGiftsData> = serde_json::from_value(json).expect("null notice/partial are accepted");
    assert_eq!(envelope, Envelope::ok(ToolName::SuggestGifts, suggest_data()));
}

/// Deserialising each mutated envelope must fail with a message containing `says`.
fn assert_rejected<T: DeserializeOwned + std::fmt::Debug>(cases: Vec<(&str, Value, &str)>) {
    let mut failures = Vec::new();
    for (name, json, says) in cases {
        match serde_json::from_value::<Envelope<T>>(json.clone()) {
            Ok(envelope) => failures.push(format!("{name}: {json} was accepted as {envelope:?}")),
            Err(e) if !e.to_string().contains(says) => {
                failures.push(format!("{name}: rejected, but the message {:?} does not say {says:?}", e.to_string()))
            }
            Err(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn with(mut json: Value, key: &str, value: Value) -> Value {
    json[key] = value;
    json
}

fn without(mut json: Value, key: &str) -> Value {
    json.as_object_mut().unwrap().remove(key);
    json
}

#[test]
fn deserialising_refuses_mixed_or_unknown_suggest_gifts_envelopes() {
    let ok = wire(&Envelope::ok(ToolName::SuggestGifts, suggest_data()));
    let err = wire(&Envelope::<SuggestGiftsData>::err(ToolName::SuggestGifts, upstream_unavailable()));
    let error = err["error"].clone();
    assert_rejected::<SuggestGiftsData>(vec![
        ("ok:true with an error", with(ok.clone(), "error", error.clone()), "must not carry an `error`"),
        ("ok:false without an error", with(without(err.clone(), "error"), "ok", json!(false)), "must carry an `error`"),
        ("ok:false flipped from a success", with(ok.clone(), "ok", json!(false)), "must carry an `error`"),
        ("ok:false with data fields", with(err.clone(), "gifts", json!([])), "must not carry `gifts`"),
        (
            "ok:false with a notice",
            with(err.clone(), "notice", json!({"code": "NO_MATCHES", "message": "x"})),
            "must not carry `notice`",
        ),
        ("unknown version 7", with(ok.clone(), "v", json!(7)), "unsupported contract version 7"),
        ("the previous version 4", with(ok.clone(), "v", json!(4)), "unsupported contract version 4"),
        ("unknown version 0", with(err.clone(), "v", json!(0)), "unsupported contract version 0"),
        ("version as a string", with(ok.clone(), "v", json!("5")), "unsupported contract version"),
        ("missing version", without(ok.clone(), "v"), "missing field `v`"),
        ("missing version on an error", without(err.clone(), "v"), "missing field `v`"),
        ("ok as a string", with(ok.clone(), "ok", json!("true")), "`ok` must be a boolean"),
        ("ok as a number", with(err.clone(), "ok", json!(0)), "`ok` must be a boolean"),
        ("ok missing", without(ok.clone(), "ok"), "missing field `ok`"),
        ("unknown tool", with(ok.clone(), "tool", json!("buy_everything")), "unknown variant `buy_everything`"),
        ("missing tool", without(err.clone(), "tool"), "missing field `tool`"),
        ("ok:true missing a data field", without(ok.clone(), "gifts"), "missing field `gifts`"),
        ("ok:true with an unknown data field", with(ok.clone(), "debug", json!("trace")), "unknown field `debug`"),
        (
            "malformed notice",
            with(ok.clone(), "notice", json!({"code": "MAYBE", "message": "?"})),
            "unknown variant `MAYBE`",
        ),
        ("an array, not an object", json!([1, true, "suggest_gifts"]), "invalid type"),
    ]);
}

#[test]
fn deserialising_refuses_mixed_or_unknown_order_envelopes() {
    let ok = wire(&Envelope::ok(ToolName::CommitOrder, order_data()));
    let err = wire(&Envelope::<OrderData>::err(ToolName::CommitOrder, gift_unavailable()));
    assert_rejected::<OrderData>(vec![
        ("ok:true with an error", with(ok.clone(), "error", err["error"].clone()), "must not carry an `error`"),
        ("ok:false without an error", with(ok.clone(), "ok", json!(false)), "must carry an `error`"),
        ("ok:false with the order", with(err.clone(), "order", ok["order"].clone()), "must not carry `order`"),
        ("unknown version 7", with(err.clone(), "v", json!(7)), "unsupported contract version 7"),
        ("the previous version 2", with(err.clone(), "v", json!(2)), "unsupported contract version 2"),
        ("missing version", without(ok.clone(), "v"), "missing field `v`"),
        ("ok as null", with(ok.clone(), "ok", Value::Null), "`ok` must be a boolean"),
        ("unknown tool", with(err.clone(), "tool", json!("refund_order")), "unknown variant `refund_order`"),
        ("error that is not an error", with(err.clone(), "error", json!("payment failed")), "invalid type"),
    ]);
}

#[test]
fn a_tool_error_refuses_unknown_fields() {
    let mut json = serde_json::to_value(upstream_unavailable()).unwrap();
    json["stack_trace"] = json!("at src/catalog.rs:42");
    let e = serde_json::from_value::<ToolError>(json.clone()).expect_err("unknown field accepted");
    assert!(e.to_string().contains("unknown field `stack_trace`"), "{e}");

    // Inside an envelope too, so a newer server's extra error field is noticed, not dropped.
    let envelope = json!({"v": 6, "ok": false, "tool": "suggest_gifts", "error": json});
    let e = serde_json::from_value::<Envelope<SuggestGiftsData>>(envelope).expect_err("unknown field accepted");
    assert!(e.to_string().contains("unknown field `stack_trace`"), "{e}");

    let field_error = json!({"field": "age", "message": "must be at most 120", "hint": "x"});
    assert!(serde_json::from_value::<FieldError>(field_error).is_err());
}

#[test]
fn a_tool_error_needs_its_code_category_retryable_message_and_reference() {
    let full = serde_json::to_value(budget_order_error()).unwrap();
    for required in ["code", "category", "message", "retryable", "reference"] {
        let json = without(full.clone(), required);
        let e = serde_json::from_value::<ToolError>(json).expect_err(required);
        assert!(e.to_string().contains(&format!("missing field `{required}`")), "{e}");
    }
    let json = with(full, "code", json!("SOMETHING_BAD"));
    assert!(serde_json::from_value::<ToolError>(json).is_err());
}

#[test]
fn serialising_refuses_data_that_would_shadow_an_envelope_field() {
    for reserved in ["v", "ok", "tool", "error", "notice", "partial"] {
        let envelope = Envelope::ok(ToolName::SuggestGifts, json!({ reserved: 1, "gifts": [] }));
        let e = envelope.to_json().expect_err(reserved);
        assert!(e.to_string().contains(&format!("`{reserved}` is reserved")), "{e}");
        assert!(serde_json::to_string(&envelope).is_err());
    }
}

#[test]
fn serialising_refuses_data_that_is_not_an_object() {
    for data in [json!([1, 2]), json!("gifts"), json!(7), Value::Null] {
        let envelope = Envelope::ok(ToolName::SuggestGifts, data.clone());
        let e = envelope.to_json().expect_err("non-object data accepted");
        assert!(e.to_string().contains("must be an object"), "{data}: {e}");
    }
}
