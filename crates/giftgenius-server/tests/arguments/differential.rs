//! Temporary: the `jsonschema`-based `parse_args` against the hand-written walker it replaces,
//! on generated arguments. Removed together with the walker.

use giftgenius_types::SuggestGiftsInput;
use giftgenius_types::args::Validate;
use giftgenius_types::orders::{CommitOrderInput, CreateCheckoutSessionInput, GetOrderInput, PrepareOrderInput};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

const FIELDS: &[&str] = &[
    "relationship_type",
    "age",
    "interests",
    "budget_min",
    "budget_max",
    "occasion",
    "currency",
    "limit",
    "gift_id",
    "quantity",
    "shipping",
    "draft_id",
    "idempotency_key",
    "confirmation_token",
    "order_id",
    "budget",
    "0",
    "a/b",
];

fn string() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("  ".to_string()),
        Just("friend".to_string()),
        Just("cousin".to_string()),
        Just("birthday".to_string()),
        Just("USD".to_string()),
        Just("express".to_string()),
        Just("gft 1".to_string()),
        Just("ключ".to_string()),
        Just("a\nb".to_string()),
        (0usize..300, prop_oneof![Just('a'), Just('é'), Just(' '), Just('-')])
            .prop_map(|(n, c)| c.to_string().repeat(n)),
        "[a-z_ ]{0,12}",
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop_oneof![
            Just(json!(30.0)),
            Just(json!(130.0)),
            Just(json!(-1.0)),
            Just(json!(30.5)),
            Just(json!(0)),
            Just(json!(-1)),
            Just(json!(121)),
            Just(json!(13)),
            Just(json!(1_000_001)),
            Just(json!(50.004)),
            Just(json!(u64::MAX)),
            Just(json!(i64::MIN)),
            Just(json!(1e308)),
            (-200i64..200).prop_map(Value::from),
            (-5.0f64..2e6).prop_map(Value::from),
        ],
        string().prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 12, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..13).prop_map(Value::Array),
            proptest::collection::btree_map(string(), inner, 0..3).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn arguments() -> impl Strategy<Value = Map<String, Value>> {
    proptest::collection::vec((proptest::sample::select(FIELDS), value()), 0..7)
        .prop_map(|pairs| pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn same<T>(cases: u32)
where
    T: DeserializeOwned + JsonSchema + Validate + std::fmt::Debug + 'static,
{
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    runner
        .run(&arguments(), |args| {
            let old = format!("{:?}", giftgenius_types::parse_args::<T>(&args));
            let new = format!("{:?}", giftgenius_server::arguments::parse_args::<T>(&args));
            prop_assert_eq!(old, new, "{}", Value::Object(args.clone()));
            Ok(())
        })
        .unwrap();
}

#[test]
fn the_crate_answers_exactly_like_the_walker_it_replaces() {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(3000);
    same::<SuggestGiftsInput>(cases);
    same::<PrepareOrderInput>(cases);
    same::<CommitOrderInput>(cases);
    same::<CreateCheckoutSessionInput>(cases);
    same::<GetOrderInput>(cases);
}

#[test]
fn output_checks_agree_with_the_walker() {
    use giftgenius_types::schema::output_schema;
    use giftgenius_types::{Envelope, OrderData, SuggestGiftsData};
    let suggest = output_schema::<Envelope<SuggestGiftsData>>();
    let order = output_schema::<Envelope<OrderData>>();
    for (schema, value) in [
        (&suggest, json!({"v": 1, "ok": true, "tool": "suggest_gifts"})),
        (&suggest, json!({"v": 2, "ok": true, "tool": "suggest_gifts", "gifts": [], "query": {}})),
        (&order, json!({"v": 1, "ok": false, "tool": "get_order", "error": {"code": "NOPE"}})),
        (
            &order,
            json!({"v": 1, "ok": false, "tool": "get_order", "error": {"code": "ORDER_NOT_FOUND", "category": "validation", "message": "m", "retryable": false, "reference": "r"}}),
        ),
    ] {
        let old = giftgenius_types::args::check_against_schema(schema, &value);
        let new = giftgenius_server::arguments::check_output(schema, &value);
        println!("{value}\n  old: {old:?}\n  new: {new:?}");
        assert_eq!(old, new, "{value}");
    }
}

#[test]
#[ignore = "prints the golden table"]
fn print_golden() {
    fn show<T>(name: &str, v: Value)
    where
        T: DeserializeOwned + JsonSchema + Validate + std::fmt::Debug + 'static,
    {
        let args = v.as_object().unwrap().clone();
        match giftgenius_types::parse_args::<T>(&args) {
            Ok(_) => println!("OK {name} {v}"),
            Err(errors) => {
                let list: Vec<String> = errors.iter().map(|e| format!("({:?}, {:?})", e.field, e.message)).collect();
                println!("        ({name}, json!({v}), &[{}]),", list.join(", "));
            }
        }
    }
    let s = |v: Value| show::<SuggestGiftsInput>("S", v);
    s(json!({"relationship_type": "friend", "age": -1}));
    s(json!({"relationship_type": "friend", "age": 121}));
    s(json!({"relationship_type": "friend", "age": 30.0}));
    s(json!({"relationship_type": "friend", "age": 130.0}));
    s(json!({"relationship_type": "friend", "age": 30.5}));
    s(json!({"relationship_type": "friend", "age": "thirty"}));
    s(json!({"relationship_type": "friend", "age": true}));
    s(json!({"relationship_type": "friend", "limit": 0}));
    s(json!({"relationship_type": "friend", "limit": 13}));
    s(json!({"relationship_type": "friend", "limit": [1]}));
    s(json!({"relationship_type": "friend", "budget_min": -5}));
    s(json!({"relationship_type": "friend", "budget_max": -0.01}));
    s(json!({"relationship_type": "friend", "budget_max": 1_000_001}));
    s(json!({"relationship_type": "friend", "budget_max": "NaN"}));
    s(json!({"relationship_type": "friend", "budget_min": 80, "budget_max": 50}));
    s(json!({"age": 30, "interests": ["coffee"]}));
    s(json!({"relationship_type": "cousin"}));
    s(json!({"relationship_type": 5}));
    s(json!({"relationship_type": null}));
    s(json!({"relationship_type": "friend", "currency": "XYZ"}));
    s(json!({"relationship_type": "friend", "occasion": "xmas"}));
    s(json!({"relationship_type": "friend", "occasion": 5}));
    s(json!({"relationship_type": "friend", "interests": "coffee"}));
    s(json!({"relationship_type": "friend", "interests": [1, 2]}));
    s(json!({"relationship_type": "friend", "interests": ["tea", "a".repeat(41), "", "  "]}));
    s(json!({"relationship_type": "friend", "interests": (1..=11).map(|i| format!("hobby {i}")).collect::<Vec<_>>()}));
    s(json!({"relationship_type": "friend", "interests": ["  "]}));
    s(json!({"relationship_type": "friend", "budget": 50}));
    s(json!({"zeta": 1, "age": 121, "budget": 50, "interests": [1, ""], "alpha": {"x": 1}}));
    s(json!({"relationship_type": "sibling", "interests": ["chess", "  "], "budget_min": 80, "budget_max": 50}));
    s(json!({"relationship_type": "friend", "age": 121, "budget_min": 80, "budget_max": 50}));
    s(json!({"relationship_type": "cousin", "budget_min": 80, "budget_max": 50}));
    let p = |v: Value| show::<PrepareOrderInput>("P", v);
    p(json!({"gift_id": "gft_1", "quantity": 0}));
    p(json!({"gift_id": "gft_1", "quantity": 2.0}));
    p(json!({"gift_id": "gft_1", "quantity": "two"}));
    p(json!({"gift_id": "pour over kit"}));
    p(json!({"gift_id": ""}));
    p(json!({"gift_id": "g".repeat(65)}));
    p(json!({"quantity": 2}));
    p(json!({"gift_id": "gft_1", "shipping": "overnight"}));
    p(json!({"gift_id": "gft_1", "currency": "BTC"}));
    p(json!({"gift_id": "gft_1", "price": 1}));
    let c = |v: Value| show::<CommitOrderInput>("C", v);
    c(json!({}));
    c(json!({"draft_id": "drf_1", "idempotency_key": "k".repeat(256), "confirmation_token": "t"}));
    c(json!({"draft_id": "drf 1", "idempotency_key": "ключ", "confirmation_token": "t"}));
    c(json!({"draft_id": "drf_1", "idempotency_key": 42, "confirmation_token": ""}));
    let k = |v: Value| show::<CreateCheckoutSessionInput>("K", v);
    k(json!({"gift_id": "gft_1"}));
    k(json!({"gift_id": "gft 1", "idempotency_key": "a\nb", "quantity": 2}));
    let g = |v: Value| show::<GetOrderInput>("G", v);
    g(json!({"order_id": 1042}));
    g(json!({"order_id": "ord/1", "email": "a@b.c"}));
}
