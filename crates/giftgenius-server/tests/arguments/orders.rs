//! `parse_args` for the order tools: ids, quantities and idempotency keys.

use giftgenius_types::Currency;
use giftgenius_types::orders::{
    CommitOrderInput, CreateCheckoutSessionInput, GetOrderInput, PrepareOrderInput, ShippingSpeed,
};
use serde_json::{Value, json};

use crate::helpers::{Case, accept, reject, run_cases};

fn commit(key: Value) -> Value {
    json!({"draft_id": "drf_91ab3c", "idempotency_key": key, "confirmation_token": "ct_Zq8.sig"})
}

fn checkout(key: Value) -> Value {
    json!({"gift_id": "gft_pourover_kit", "idempotency_key": key})
}

const KEY_RULE: &[&str] = &["1 to 255", "printable ASCII"];

#[test]
fn bad_prepare_order_arguments_name_the_field() {
    run_cases::<PrepareOrderInput>(&[
        Case {
            name: "quantity 0",
            args: json!({"gift_id": "gft_1", "quantity": 0}),
            field: "quantity",
            mentions: &["1", "0"],
            count: 1,
        },
        Case {
            name: "quantity 11",
            args: json!({"gift_id": "gft_1", "quantity": 11}),
            field: "quantity",
            mentions: &["10", "11"],
            count: 1,
        },
        Case {
            name: "quantity as a word",
            args: json!({"gift_id": "gft_1", "quantity": "two"}),
            field: "quantity",
            mentions: &["whole number"],
            count: 1,
        },
        Case {
            name: "gift_id with spaces",
            args: json!({"gift_id": "pour over kit"}),
            field: "gift_id",
            mentions: &["id"],
            count: 1,
        },
        Case {
            name: "gift_id with a path",
            args: json!({"gift_id": "../admin"}),
            field: "gift_id",
            mentions: &["id"],
            count: 1,
        },
        Case { name: "empty gift_id", args: json!({"gift_id": ""}), field: "gift_id", mentions: &["empty"], count: 1 },
        Case {
            name: "add_to with a path",
            args: json!({"gift_id": "gft_1", "add_to": "../drf_1"}),
            field: "add_to",
            mentions: &["id"],
            count: 1,
        },
        Case {
            name: "add_to as a number",
            args: json!({"items": [{"gift_id": "gft_1"}], "add_to": 7}),
            field: "add_to",
            mentions: &["string"],
            count: 1,
        },
        Case {
            name: "65-character gift_id",
            args: json!({"gift_id": "g".repeat(65)}),
            field: "gift_id",
            mentions: &["64"],
            count: 1,
        },
        Case {
            name: "missing gift_id",
            args: json!({"quantity": 2}),
            field: "gift_id",
            mentions: &["required"],
            count: 1,
        },
        Case {
            name: "unknown shipping",
            args: json!({"gift_id": "gft_1", "shipping": "overnight"}),
            field: "shipping",
            mentions: &["standard", "express"],
            count: 1,
        },
        Case {
            name: "unknown currency",
            args: json!({"gift_id": "gft_1", "currency": "BTC"}),
            field: "currency",
            mentions: &["USD"],
            count: 1,
        },
        Case {
            name: "needed_by that is no calendar day",
            args: json!({"gift_id": "gft_1", "needed_by": "2026-02-30"}),
            field: "needed_by",
            mentions: &["YYYY-MM-DD"],
            count: 1,
        },
        Case {
            name: "needed_by in words",
            args: json!({"gift_id": "gft_1", "needed_by": "Dec 18"}),
            field: "needed_by",
            mentions: &["YYYY-MM-DD"],
            count: 1,
        },
        Case {
            name: "unknown argument price",
            args: json!({"gift_id": "gft_1", "price": 1}),
            field: "price",
            mentions: &["gift_id", "quantity"],
            count: 1,
        },
    ]);
}

#[test]
fn prepare_order_defaults_to_one_standard_item_in_usd() {
    let input: PrepareOrderInput = accept(json!({"gift_id": "gft_pourover_kit"}));
    assert_eq!(
        input,
        PrepareOrderInput {
            gift_id: Some("gft_pourover_kit".into()),
            quantity: 1,
            items: Vec::new(),
            add_to: None,
            shipping: ShippingSpeed::Standard,
            currency: Currency::USD,
            recipient: None,
            gift_message: None,
            save_address: false,
            needed_by: None,
            gift_wrap: false,
            gift_receipt: false,
        }
    );
    let full: PrepareOrderInput =
        accept(json!({"gift_id": "gft-2_B", "quantity": 10, "shipping": "express", "currency": "GBP"}));
    assert_eq!((full.quantity, full.shipping, full.currency), (10, ShippingSpeed::Express, Currency::GBP));
    let dated: PrepareOrderInput = accept(json!({"gift_id": "gft_1", "needed_by": "2028-02-29"}));
    assert_eq!(dated.needed_by.as_deref(), Some("2028-02-29"), "a leap day is a day");
    let gift: PrepareOrderInput = accept(json!({"gift_id": "gft_1", "gift_wrap": true, "gift_receipt": true}));
    assert!(gift.gift_wrap && gift.gift_receipt);
    assert_eq!(gift.lines(), [("gft_1", 1)], "the one-gift form is a basket of one line");
}

#[test]
fn a_basket_is_items_each_with_its_quantity_in_the_order_given() {
    let basket: PrepareOrderInput =
        accept(json!({"items": [{"gift_id": "gft_2", "quantity": 3}, {"gift_id": "gft_1"}], "currency": "EUR"}));
    assert_eq!(basket.gift_id, None);
    assert_eq!(basket.lines(), [("gft_2", 3), ("gft_1", 1)]);
}

#[test]
fn bad_baskets_name_the_item_and_the_field() {
    let item = |i: usize| json!({"gift_id": format!("gft_{i}")});
    run_cases::<PrepareOrderInput>(&[
        Case {
            name: "items and gift_id",
            args: json!({"gift_id": "gft_1", "items": [{"gift_id": "gft_2"}]}),
            field: "items",
            mentions: &["gift_id"],
            count: 1,
        },
        Case {
            name: "a gift twice",
            args: json!({"items": [{"gift_id": "gft_1"}, {"gift_id": "gft_2"}, {"gift_id": "gft_1", "quantity": 2}]}),
            field: "items[2].gift_id",
            mentions: &["once"],
            count: 1,
        },
        Case {
            name: "an item's quantity 11",
            args: json!({"items": [{"gift_id": "gft_1"}, {"gift_id": "gft_2", "quantity": 11}]}),
            field: "items[1].quantity",
            mentions: &["10", "11"],
            count: 1,
        },
        Case {
            name: "an item's id with a path",
            args: json!({"items": [{"gift_id": "../admin"}]}),
            field: "items[0].gift_id",
            mentions: &["id"],
            count: 1,
        },
        Case {
            name: "quantity beside items",
            args: json!({"items": [{"gift_id": "gft_1"}], "quantity": 2}),
            field: "quantity",
            mentions: &["each item"],
            count: 1,
        },
        Case {
            name: "eleven items",
            args: json!({"items": (0..11).map(item).collect::<Vec<_>>()}),
            field: "items",
            mentions: &["10"],
            count: 1,
        },
        Case {
            name: "an unknown key in an item",
            args: json!({"items": [{"gift_id": "gft_1", "price": 1}]}),
            field: "items[0].price",
            mentions: &["gift_id", "quantity"],
            count: 1,
        },
    ]);
}

#[test]
fn bad_commit_order_arguments_name_the_field() {
    run_cases::<CommitOrderInput>(&[
        Case {
            name: "empty idempotency_key",
            args: commit(json!("")),
            field: "idempotency_key",
            mentions: &["empty"],
            count: 1,
        },
        Case {
            name: "256-character idempotency_key",
            args: commit(json!("k".repeat(256))),
            field: "idempotency_key",
            mentions: &["255"],
            count: 1,
        },
        Case {
            name: "idempotency_key with a newline",
            args: commit(json!("key\n1")),
            field: "idempotency_key",
            mentions: KEY_RULE,
            count: 1,
        },
        Case {
            name: "idempotency_key with a tab",
            args: commit(json!("key\t1")),
            field: "idempotency_key",
            mentions: KEY_RULE,
            count: 1,
        },
        Case {
            name: "non-ASCII idempotency_key",
            args: commit(json!("ключ")),
            field: "idempotency_key",
            mentions: KEY_RULE,
            count: 1,
        },
        Case {
            name: "idempotency_key as a number",
            args: commit(json!(42)),
            field: "idempotency_key",
            mentions: &["string"],
            count: 1,
        },
        Case {
            name: "empty confirmation_token",
            args: json!({"draft_id": "drf_91ab3c", "idempotency_key": "k1", "confirmation_token": ""}),
            field: "confirmation_token",
            mentions: &["empty"],
            count: 1,
        },
        Case {
            name: "draft_id with spaces",
            args: json!({"draft_id": "my draft", "idempotency_key": "k1", "confirmation_token": "t"}),
            field: "draft_id",
            mentions: &["id"],
            count: 1,
        },
        Case { name: "nothing at all", args: json!({}), field: "draft_id", mentions: &["required"], count: 2 },
    ]);
}

#[test]
fn commit_order_accepts_any_printable_ascii_key_up_to_255_characters() {
    for key in ["k".repeat(255), "3f2b9c1e-7d4a-4b8e-9f0a-1c2d3e4f5a6b".into(), "order #1 ~ retry!".into()] {
        let input: CommitOrderInput = accept(commit(json!(key)));
        assert_eq!(input.idempotency_key, key);
        assert_eq!(input.draft_id, "drf_91ab3c");
    }
}

#[test]
fn commit_order_reports_id_and_key_problems_together() {
    let error = reject::<CommitOrderInput>(json!({
        "draft_id": "drf 1", "idempotency_key": "ключ", "confirmation_token": "t",
    }));
    let fields: Vec<&str> = error.field_errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["draft_id", "idempotency_key"]);
}

#[test]
fn bad_get_order_arguments_name_the_field() {
    run_cases::<GetOrderInput>(&[
        Case { name: "missing order_id", args: json!({}), field: "order_id", mentions: &["required"], count: 1 },
        Case {
            name: "order_id as a number",
            args: json!({"order_id": 1042}),
            field: "order_id",
            mentions: &["string"],
            count: 1,
        },
        Case {
            name: "order_id with a slash",
            args: json!({"order_id": "ord/1"}),
            field: "order_id",
            mentions: &["id"],
            count: 1,
        },
        Case {
            name: "empty order_id",
            args: json!({"order_id": ""}),
            field: "order_id",
            mentions: &["empty"],
            count: 1,
        },
        Case {
            name: "unknown argument email",
            args: json!({"order_id": "ord_1", "email": "a@b.c"}),
            field: "email",
            mentions: &["order_id"],
            count: 1,
        },
    ]);
    let input: GetOrderInput = accept(json!({"order_id": "ord_7QX2KD"}));
    assert_eq!(input.order_id, "ord_7QX2KD");
}

#[test]
fn bad_create_checkout_session_arguments_name_the_field() {
    run_cases::<CreateCheckoutSessionInput>(&[
        Case {
            name: "missing idempotency_key",
            args: json!({"gift_id": "gft_1"}),
            field: "idempotency_key",
            mentions: &["required"],
            count: 1,
        },
        Case {
            name: "missing gift_id",
            args: json!({"idempotency_key": "k1"}),
            field: "gift_id",
            mentions: &["required"],
            count: 1,
        },
        Case {
            name: "empty idempotency_key",
            args: checkout(json!("")),
            field: "idempotency_key",
            mentions: &["empty"],
            count: 1,
        },
        Case {
            name: "non-ASCII idempotency_key",
            args: checkout(json!("ключ")),
            field: "idempotency_key",
            mentions: KEY_RULE,
            count: 1,
        },
        Case {
            name: "idempotency_key with a newline",
            args: checkout(json!("a\nb")),
            field: "idempotency_key",
            mentions: KEY_RULE,
            count: 1,
        },
        Case {
            name: "gift_id with spaces",
            args: json!({"gift_id": "gft 1", "idempotency_key": "k1"}),
            field: "gift_id",
            mentions: &["id"],
            count: 1,
        },
        Case {
            name: "unknown currency",
            args: json!({"gift_id": "gft_1", "idempotency_key": "k1", "currency": "BTC"}),
            field: "currency",
            mentions: &["USD", "BTC"],
            count: 1,
        },
        Case {
            name: "unknown argument quantity",
            args: json!({"gift_id": "gft_1", "idempotency_key": "k1", "quantity": 2}),
            field: "quantity",
            mentions: &["gift_id"],
            count: 1,
        },
    ]);
    let input: CreateCheckoutSessionInput = accept(checkout(json!("chk-2025-11-03-001")));
    assert_eq!(input.currency, Currency::USD);
    assert_eq!(input.gift_id, "gft_pourover_kit");
}

#[test]
fn id_and_key_rules_still_run_next_to_an_unknown_argument() {
    let error =
        reject::<CreateCheckoutSessionInput>(json!({"gift_id": "gft 1", "idempotency_key": "a\nb", "quantity": 2}));
    let fields: Vec<&str> = error.field_errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["quantity", "gift_id", "idempotency_key"], "{:#?}", error.field_errors);
}

#[test]
fn prepare_order_checks_the_recipient_through_the_schema_and_the_country_rules() {
    let ok: PrepareOrderInput = accept(json!({"gift_id": "g1", "save_address": true, "gift_message": "Hi!",
        "recipient": {"name": "Jo", "address": {"line1": "1 Main St", "city": "Austin", "region": "TX",
        "postal_code": "78701", "country": "US"}}}));
    assert!(ok.save_address && ok.recipient.is_some());
    // Unknown address parts are schema errors; a country rule is a cross-field one, reported with them.
    let errors = giftgenius_server::mcp::arguments::parse_args::<PrepareOrderInput>(
        json!({"gift_id": "g1", "recipient": {"name": "Jo", "address": {"line1": "1 Main St", "city": "Austin",
            "postal_code": "78701", "country": "US", "zip4": "1234"}}})
        .as_object()
        .unwrap(),
    )
    .unwrap_err();
    assert!(errors.iter().any(|e| e.field.contains("recipient")), "{errors:?}");
}
