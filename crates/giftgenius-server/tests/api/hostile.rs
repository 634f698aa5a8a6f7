//! Hostile input: generated `tools/call` arguments for every tool, over real HTTP against one
//! server and one client, plus malformed JSON-RPC and oversized bodies sent raw.
//!
//! Every case must get an answer (never a protocol failure for object arguments) whose
//! `structuredContent` is the tool's envelope, with `isError == !ok`, never `INTERNAL_ERROR`,
//! and no internals (paths, SQL, panics, host names) in any message or in the text content.
//!
//! Generated text comes from an alphabet that cannot spell any of the words we look for
//! (no `/`, `:`, `'`, `l`, `k`, `x`, no ASCII capitals, not the host name's first letter), so a
//! validation error that echoes the input can never be mistaken for a leak.
//!
//! Cases per tool: 256, or `PROPTEST_CASES`. Run with `--nocapture` to see the tally.

use crate::support::with_recipient;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Instant;

use giftgenius_types::{CheckoutData, Envelope, OrderData, PrepareOrderData, SuggestGiftsData};
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, TestCaseError, TestError, TestRunner};
use rmcp::RoleClient;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use serde::de::DeserializeOwned;
use serde_json::{Map, Number, Value, json};

use crate::support::{RawSession, call, commit_args, find_leak, hostname, leak_in, prepare_in_session, spawn_app_with};

// ----- generated values ------------------------------------------------------------------------

/// ASCII that cannot spell a leak word (nor `localhost`, nor this host's name).
fn safe_ascii() -> Vec<char> {
    let host_first = hostname().chars().next().map(|c| c.to_ascii_lowercase());
    (' '..='~')
        .filter(|c| !c.is_ascii_uppercase() && !"/:'lkx".contains(*c))
        .filter(|c| Some(c.to_ascii_lowercase()) != host_first)
        .collect()
}

/// Characters that lowercase to themselves or to non-ASCII (no Kelvin sign, which lowercases to `k`).
const UNICODE: &[char] = &[
    '\u{05D0}',
    '\u{05E9}',
    '\u{0627}',
    '\u{0644}',
    '\u{200F}',
    '\u{202E}',
    '\u{202D}',
    '\u{061C}', // RTL
    '\u{200B}',
    '\u{200C}',
    '\u{200D}',
    '\u{2060}',
    '\u{FEFF}', // zero-width
    '\u{1F381}',
    '\u{1F600}',
    '\u{1F469}',
    '\u{1F3FD}',
    '\u{FE0F}',
    '\u{1F1FA}',
    '\u{1F1F8}', // emoji
    '\u{0301}',
    '\u{0338}',
    '\u{20DD}', // combining marks
    '\u{4E2D}',
    '\u{6587}',
    '\u{D55C}',
    '\u{0416}',
    '\u{00E9}',
    '\u{00DF}',
    '\u{0130}',
    '\u{03A3}', // scripts
    '\u{0001}',
    '\u{0007}',
    '\u{0008}',
    '\u{000B}',
    '\u{000C}',
    '\u{001B}',
    '\u{001F}',
    '\u{007F}', // control, no NUL
    '\u{0085}',
    '\u{2028}',
    '\u{2029}',
    '\t',
    '\n',
    '\r',
    '"',
    '\\',
    '\u{FFFD}',
    '\u{FFFF}',
    '\u{10FFFF}',
];

fn any_char() -> impl Strategy<Value = char> {
    prop_oneof![
        3 => proptest::sample::select(safe_ascii()),
        2 => proptest::sample::select(UNICODE),
    ]
}

/// Plausible ids and keys (`drf_0a1b`, `hh-010`): they pass the shape checks and reach lookups.
fn id_like() -> impl Strategy<Value = String> {
    let alphabet: Vec<char> =
        safe_ascii().into_iter().filter(|c| c.is_ascii_alphanumeric() || "_-".contains(*c)).collect();
    proptest::collection::vec(proptest::sample::select(alphabet), 1..24).prop_map(|cs| cs.into_iter().collect())
}

fn short_string() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => proptest::collection::vec(any_char(), 0..48).prop_map(|cs| cs.into_iter().collect::<String>()),
        3 => id_like(),
        1 => proptest::sample::select(vec!["NaN", "Infinity", "-Infinity", "-0", "1e308", "", " ", "null", "true", "0x10", "friend", "hh-010"])
            .prop_map(str::to_string),
    ]
}

/// Up to 100 KB (inside the 256 KiB body limit): a repeated chunk of generated text.
fn huge_string() -> impl Strategy<Value = String> {
    (proptest::collection::vec(any_char(), 1..8), 1_000usize..100_000).prop_map(|(chunk, bytes)| {
        let chunk: String = chunk.into_iter().collect();
        chunk.repeat(bytes / chunk.len().max(1) + 1)
    })
}

fn any_string() -> impl Strategy<Value = String> {
    prop_oneof![12 => short_string(), 1 => huge_string()]
}

fn edge_number() -> impl Strategy<Value = Value> {
    let edges: Vec<Value> = vec![
        json!(i64::MIN),
        json!(i64::MAX),
        json!(u64::MAX),
        json!(1e308),
        json!(-1e308),
        json!(f64::MAX),
        json!(-0.0),
        json!(f64::MIN_POSITIVE),
        json!(5e-324),
        json!(1e-300),
        json!(0),
        json!(-1),
        json!(0.5),
        json!(120),
        json!(121),
        json!(12),
        json!(13),
        json!(1_000_000),
        json!(1_000_000.01),
        json!(0.004),
        json!(50.004),
        json!(4_294_967_296_i64),
    ];
    prop_oneof![
        3 => proptest::sample::select(edges),
        1 => any::<i64>().prop_map(Value::from),
        1 => any::<u64>().prop_map(Value::from),
        1 => any::<f64>().prop_map(|f| Number::from_f64(f).map(Value::Number).unwrap_or(Value::Null)),
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
        3 => edge_number(),
        4 => any_string().prop_map(Value::String),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => short_string(),
        2 => proptest::sample::select(FIELD_NAMES).prop_map(str::to_string),
    ]
}

/// Every argument name of every tool, so generated objects hit the real fields too.
const FIELD_NAMES: &[&str] = &[
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
];

/// A value nested `depth` levels deep in alternating arrays and objects.
fn deep() -> impl Strategy<Value = Value> {
    (1usize..=64, leaf(), key()).prop_map(|(depth, mut value, key)| {
        for level in 0..depth {
            value = if level % 2 == 0 { json!([value]) } else { json!({ key.clone(): value }) };
        }
        value
    })
}

/// Arbitrary JSON: broad and shallow (recursive), or narrow and deep.
fn any_value() -> impl Strategy<Value = Value> {
    let broad = leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(key(), inner, 0..6).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    prop_oneof![6 => broad, 1 => deep()]
}

fn any_object() -> impl Strategy<Value = Map<String, Value>> {
    proptest::collection::btree_map(key(), any_value(), 0..8).prop_map(|m| m.into_iter().collect())
}

/// How a valid argument object is damaged.
#[derive(Debug, Clone)]
enum Mutation {
    /// Replace the value of the n-th field (modulo the field count).
    Replace(usize, Value),
    /// Drop the fields whose bit is set.
    Drop(Vec<bool>),
    /// Add unknown (or duplicate-named) fields.
    Add(Vec<(String, Value)>),
    /// All three at once.
    All(usize, Value, Vec<bool>, Vec<(String, Value)>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let extra = || proptest::collection::vec((short_string(), any_value()), 1..4);
    prop_oneof![
        4 => (any::<usize>(), any_value()).prop_map(|(i, v)| Mutation::Replace(i, v)),
        2 => proptest::collection::vec(any::<bool>(), 8).prop_map(Mutation::Drop),
        2 => extra().prop_map(Mutation::Add),
        1 => (any::<usize>(), any_value(), proptest::collection::vec(any::<bool>(), 8), extra())
            .prop_map(|(i, v, d, a)| Mutation::All(i, v, d, a)),
    ]
}

fn apply(valid: &Map<String, Value>, mutation: &Mutation) -> Map<String, Value> {
    let mut out = valid.clone();
    let keys: Vec<String> = valid.keys().cloned().collect();
    let replace = |out: &mut Map<String, Value>, i: usize, v: &Value| {
        if !keys.is_empty() {
            out.insert(keys[i % keys.len()].clone(), v.clone());
        }
    };
    let drop = |out: &mut Map<String, Value>, mask: &[bool]| {
        for (k, gone) in keys.iter().zip(mask) {
            if *gone {
                out.remove(k);
            }
        }
    };
    match mutation {
        Mutation::Replace(i, v) => replace(&mut out, *i, v),
        Mutation::Drop(mask) => drop(&mut out, mask),
        Mutation::Add(extra) => out.extend(extra.iter().cloned()),
        Mutation::All(i, v, mask, extra) => {
            replace(&mut out, *i, v);
            drop(&mut out, mask);
            out.extend(extra.iter().cloned());
        }
    }
    out
}

/// What the generated arguments may take of the 256 KiB body limit (the request around them
/// and JSON escapes of control characters need the rest; bigger bodies are the 413 test's job).
const ARGUMENTS_BUDGET: usize = 200 * 1024;

/// Arguments for a tool: arbitrary objects, or a valid call with one thing broken.
fn arguments(valid: Map<String, Value>) -> impl Strategy<Value = Map<String, Value>> {
    prop_oneof![
        1 => any_object(),
        1 => mutation().prop_map(move |m| apply(&valid, &m)),
    ]
    .prop_filter("fits the body limit", |args| serde_json::to_string(args).is_ok_and(|s| s.len() <= ARGUMENTS_BUDGET))
}

// ----- the property -----------------------------------------------------------------------------

fn check_envelope<T: DeserializeOwned>(structured: &Value) -> Result<(), String> {
    serde_json::from_value::<Envelope<T>>(structured.clone())
        .map(|_| ())
        .map_err(|e| format!("structuredContent is not this tool's envelope ({e}): {structured}"))
}

async fn one_case(
    client: &RunningService<RoleClient, ()>,
    tool: &'static str,
    arguments: Map<String, Value>,
) -> Result<String, String> {
    let result = client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
        .await
        .map_err(|e| format!("tools/call failed at the protocol level: {e}"))?;
    let structured = result.structured_content.clone().ok_or("the result has no structuredContent")?;
    match tool {
        "suggest_gifts" => check_envelope::<SuggestGiftsData>(&structured)?,
        "prepare_order" => check_envelope::<PrepareOrderData>(&structured)?,
        "commit_order" | "get_order" => check_envelope::<OrderData>(&structured)?,
        "create_checkout_session" => check_envelope::<CheckoutData>(&structured)?,
        other => unreachable!("no envelope type for {other}"),
    }
    let ok = structured["ok"].as_bool().ok_or("ok is not a boolean")?;
    if result.is_error != Some(!ok) {
        return Err(format!("isError is {:?} but ok is {ok}", result.is_error));
    }
    find_leak(&result, &structured, &[])?;
    let outcome = if ok { "ok".to_string() } else { structured["error"]["code"].as_str().unwrap_or("?").to_string() };
    if outcome == "INTERNAL_ERROR" {
        return Err(format!("hostile arguments caused INTERNAL_ERROR: {structured}"));
    }
    Ok(outcome)
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(256)
}

#[test]
fn hostile_arguments_to_every_tool_get_a_valid_envelope_that_leaks_nothing() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    // Unlimited suggestions: the daily limit would otherwise turn most cases into the same error.
    let app = rt.block_on(spawn_app_with(|c| c.daily_suggestion_limit = 0));
    let client = rt.block_on(app.client());

    // Real ids for the valid calls: a draft, its token, and a placed order.
    let (draft_id, token, order_id) = rt.block_on(async {
        let (draft_id, token) = prepare_in_session(&client, "hh-010").await;
        let (_, order) = call(&client, "commit_order", commit_args(&draft_id, "ik_hostile_setup", &token)).await;
        assert_eq!(order["ok"], true, "{order}");
        (draft_id, token, order["order"]["id"].clone())
    });
    let valid: [(&'static str, Value); 5] = [
        (
            "suggest_gifts",
            json!({"relationship_type": "friend", "age": 30, "interests": ["coffee", "hiking"], "budget_min": 10,
                   "budget_max": 80, "occasion": "birthday", "currency": "USD", "limit": 6}),
        ),
        (
            "prepare_order",
            with_recipient(json!({"gift_id": "hh-010", "quantity": 1, "shipping": "standard", "currency": "USD"})),
        ),
        ("commit_order", commit_args(&draft_id, "ik_hostile", &token)),
        (
            "create_checkout_session",
            json!({"gift_id": "hh-010", "idempotency_key": "ik_hostile_cs", "currency": "EUR"}),
        ),
        ("get_order", json!({"order_id": order_id})),
    ];

    let mut report = Vec::new();
    for (tool, valid_args) in valid {
        let Value::Object(valid_args) = valid_args else { unreachable!() };
        let config = ProptestConfig {
            cases: cases(),
            failure_persistence: None,
            max_shrink_iters: 256,
            ..ProptestConfig::default()
        };
        let mut runner = TestRunner::new(config);
        let tally: RefCell<BTreeMap<String, u32>> = RefCell::default();
        let started = Instant::now();
        let outcome = runner.run(&arguments(valid_args), |args| {
            let outcome = rt.block_on(one_case(&client, tool, args)).map_err(TestCaseError::fail)?;
            *tally.borrow_mut().entry(outcome).or_default() += 1;
            Ok(())
        });
        if let Err(e) = outcome {
            match e {
                TestError::Fail(why, args) => {
                    let shown = serde_json::to_string(&args).unwrap_or_default();
                    let shown: String = shown.chars().take(2_000).collect();
                    panic!("{tool}: {why}\nminimal arguments: {shown}");
                }
                other => panic!("{tool}: {other}"),
            }
        }
        let tally = tally.into_inner();
        let ran: u32 = tally.values().sum();
        report.push(format!("{tool}: {ran} cases in {:.1?}, outcomes {tally:?}", started.elapsed()));
    }
    eprintln!("hostile input:\n  {}", report.join("\n  "));

    // Still serving.
    rt.block_on(async {
        let (_, sc) =
            call(&client, "suggest_gifts", json!({"relationship_type": "parent", "interests": ["tea"]})).await;
        assert_eq!(sc["ok"], true, "{sc}");
    });
}

#[test]
fn the_leak_check_catches_what_it_looks_for_and_generated_text_cannot_spell_it() {
    for leak in ["at src/mcp.rs:42", "/root/.cargo", "sqlx::error", "thread 'tokio' panicked", "SELECT * FROM orders"] {
        assert!(leak_in(leak, &[]).is_some(), "{leak}");
    }
    assert!(leak_in("connect to localhost failed", &[]).is_some());
    assert!(leak_in("GET /hang timed out", &["/hang"]).is_some(), "a test's own words count too");
    let host = hostname();
    if !host.is_empty() {
        assert!(leak_in(&format!("dial {host}:5432"), &[]).is_some());
    }
    assert_eq!(leak_in("budget_min (80) is greater than budget_max (50)", &[]), None);
    let alphabet: String = safe_ascii().into_iter().chain(UNICODE.iter().copied()).collect();
    assert_eq!(leak_in(&alphabet, &[]), None);
    // Interests are lowercased before they are echoed: no character may lowercase into a banned one.
    let lowered: String = UNICODE.iter().flat_map(|c| c.to_lowercase()).collect();
    assert!(!lowered.contains(['l', 'k', 'x', '/', ':', '\'']), "{lowered}");
}

// ----- raw HTTP: malformed JSON-RPC and oversized bodies -----------------------------------------

/// A protocol-level refusal: a 4xx status, or a JSON-RPC error object.
fn assert_protocol_error(what: &str, status: u16, body: &str) {
    let json_rpc_error =
        serde_json::from_str::<Value>(body).ok().is_some_and(|v| v.get("error").is_some_and(|e| e["code"].is_i64()));
    assert!(
        (400..500).contains(&status) || json_rpc_error,
        "{what}: expected a 4xx status or a JSON-RPC error, got {status}: {body}"
    );
    assert!(leak_in(body, &[]).is_none(), "{what}: the answer leaks internals: {body}");
}

#[tokio::test]
async fn malformed_json_rpc_gets_protocol_errors_and_never_a_crash() {
    let app = spawn_app_with(|_| {}).await;
    let raw = RawSession::open(app.mcp_url()).await;
    let deep = format!("{}1{}", "[".repeat(5_000), "]".repeat(5_000));
    let cases: Vec<(&str, String)> = vec![
        ("garbage body", "\u{1}\u{2}not json at all".into()),
        ("empty body", String::new()),
        ("truncated JSON", r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"suggest_gifts""#.into()),
        ("JSON that is not an object", "[1,2,3]".into()),
        ("wrong jsonrpc version", r#"{"jsonrpc":"1.0","id":7,"method":"tools/list"}"#.into()),
        ("missing jsonrpc version", r#"{"id":7,"method":"tools/list"}"#.into()),
        (
            "arguments that are a string",
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"suggest_gifts","arguments":"friend"}}"#.into(),
        ),
        (
            "arguments that are a list",
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"prepare_order","arguments":["hh-010"]}}"#.into(),
        ),
        (
            "arguments that are a number out of range",
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"suggest_gifts","arguments":{"age":1e400}}}"#.into(),
        ),
        ("a method that does not exist", r#"{"jsonrpc":"2.0","id":7,"method":"gifts/steal","params":{}}"#.into()),
        (
            "a tool that does not exist",
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"drop_tables","arguments":{}}}"#.into(),
        ),
        ("nesting far beyond any parser's limit", format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"get_order","arguments":{{"order_id":{deep}}}}}}}"#)),
    ];
    for (what, body) in cases {
        let (status, answer) = raw.send(body).await;
        eprintln!("{what}: {status} {}", answer.chars().take(120).collect::<String>());
        assert_protocol_error(what, status, &answer);
    }

    // Still serving, in the same session.
    let call = r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"suggest_gifts","arguments":{"relationship_type":"friend"}}}"#;
    let (status, answer) = raw.send(call).await;
    assert_eq!(status, 200, "{answer}");
    let answer: Value = serde_json::from_str(&answer).expect("a JSON-RPC response");
    assert_eq!(answer["result"]["structuredContent"]["ok"], true, "{answer}");
}

#[tokio::test]
async fn a_body_over_256_kib_is_refused_with_413_naming_the_limit() {
    let app = spawn_app_with(|_| {}).await;
    let raw = RawSession::open(app.mcp_url()).await;
    let limit = giftgenius_server::startup::MAX_REQUEST_BODY_BYTES;
    let pad = "a".repeat(limit);
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"suggest_gifts","arguments":{{"relationship_type":"friend","interests":["{pad}"]}}}}}}"#
    );
    let (status, answer) = raw.send(body).await;
    assert_eq!(status, 413, "{answer}");
    assert!(answer.contains(&limit.to_string()), "the refusal names the limit: {answer}");
    assert!(leak_in(&answer, &[]).is_none(), "{answer}");

    // Just under the limit is an ordinary call (a validation error for the long interest).
    let pad = "a".repeat(limit - 1_024);
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{{"name":"suggest_gifts","arguments":{{"relationship_type":"friend","interests":["{pad}"]}}}}}}"#
    );
    let (status, answer) = raw.send(body).await;
    assert_eq!(status, 200, "{}", &answer[..answer.len().min(300)]);
    let answer: Value = serde_json::from_str(&answer).expect("a JSON-RPC response");
    assert_eq!(answer["result"]["structuredContent"]["error"]["code"], "VALIDATION_ERROR");
}

#[tokio::test]
async fn a_body_that_is_not_json_or_nests_too_deep_is_a_json_rpc_parse_error_with_http_400() {
    let app = spawn_app_with(|_| {}).await;
    let raw = RawSession::open(app.mcp_url()).await;
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{{"x":{}1{}}}}}"#,
        "[".repeat(400),
        "]".repeat(400)
    );
    let cases: Vec<(&str, String)> = vec![
        ("garbage", "\u{1}\u{2}not json at all".into()),
        ("empty", String::new()),
        ("truncated", r#"{"jsonrpc":"2.0","id":7,"method":"tools/list""#.into()),
        ("nested 400 deep", deep),
    ];
    for (what, body) in cases {
        let (status, answer) = raw.send(body).await;
        assert_eq!(status, 400, "{what}: {answer}");
        let answer: Value =
            serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {answer}"));
        assert_eq!(answer["jsonrpc"], "2.0", "{what}");
        assert_eq!(answer["id"], Value::Null, "{what}");
        assert_eq!(answer["error"]["code"], -32700, "{what}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(!message.contains("line") && !message.contains("column"), "{what}: the parser's own words: {message}");
    }
    // A number JSON can write but nobody can hold: a parse error that says so.
    let (status, answer) = raw.send(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"x":1e400}}"#).await;
    assert_eq!(status, 400, "{answer}");
    assert!(answer.contains("-32700") && answer.contains("out of range"), "{answer}");
    // A method we serve with params that do not fit: invalid params, not "method not found".
    let (_, answer) = raw
        .send(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"suggest_gifts","arguments":"friend"}}"#,
        )
        .await;
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!((answer["error"]["code"].as_i64(), answer["id"].as_i64()), (Some(-32602), Some(7)), "{answer}");
    // JSON, but no JSON-RPC message: Invalid Request, keeping the id it had.
    let (status, answer) = raw.send(r#"{"jsonrpc":"1.0","id":7,"method":"tools/list"}"#).await;
    assert_eq!(status, 400, "{answer}");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!((answer["error"]["code"].as_i64(), answer["id"].as_i64()), (Some(-32600), Some(7)));

    // Not JSON at all by its own account: 415 names the type we need.
    let response = reqwest::Client::new()
        .post(app.mcp_url())
        .header("content-type", "text/plain")
        .header("accept", "application/json, text/event-stream")
        .body(crate::support::INIT)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 415);
    assert!(response.text().await.unwrap().contains("application/json"));
}

// ----- amplification: the largest answer hostile input can provoke ---------------------------------

/// Arguments that fill a `tools/call` body to just under the 256 KiB limit.
const FILL: usize = 250 * 1024;

/// `n` copies of `item` joined by commas, as many as fit in `budget` bytes.
fn repeated(item: &str, budget: usize) -> String {
    let n = budget / (item.len() + 1);
    vec![item; n].join(",")
}

/// Bodies built to make the answer as large as possible: many bad items (one field error
/// each), many unknown arguments, huge names and strings (echoed back), deep nesting, and
/// huge names in the places the protocol layer answers for.
fn amplifying_bodies() -> Vec<(&'static str, String)> {
    let call = |tool: &str, arguments: String| {
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
        )
    };
    let huge = "q".repeat(FILL);
    let unknown_keys: String = (0..FILL / 10)
        .map(|i| format!(r#""{i}":0"#))
        .take_while({
            let mut used = 0;
            move |entry: &String| {
                used += entry.len() + 1;
                used < FILL
            }
        })
        .collect::<Vec<_>>()
        .join(",");
    let nested = format!("{}1{}", "[".repeat(120), "]".repeat(120));
    vec![
        (
            "suggest_gifts: interests = [1, 1, …] (a type error per item)",
            call("suggest_gifts", format!(r#"{{"relationship_type":"friend","interests":[{}]}}"#, repeated("1", FILL))),
        ),
        (
            "suggest_gifts: interests = [\"\", \"\", …] (an empty-string error per item)",
            call(
                "suggest_gifts",
                format!(r#"{{"relationship_type":"friend","interests":[{}]}}"#, repeated(r#""""#, FILL)),
            ),
        ),
        (
            "suggest_gifts: interests = [{}, {}, …]",
            call(
                "suggest_gifts",
                format!(r#"{{"relationship_type":"friend","interests":[{}]}}"#, repeated("{}", FILL)),
            ),
        ),
        (
            "suggest_gifts: ~25k unknown arguments",
            call("suggest_gifts", format!(r#"{{"relationship_type":"friend",{unknown_keys}}}"#)),
        ),
        (
            "suggest_gifts: one unknown argument with a 250 KiB name",
            call("suggest_gifts", format!(r#"{{"relationship_type":"friend","{huge}":1}}"#)),
        ),
        (
            "suggest_gifts: one 250 KiB interest",
            call("suggest_gifts", format!(r#"{{"relationship_type":"friend","interests":["{huge}"]}}"#)),
        ),
        (
            "suggest_gifts: a 250 KiB relationship_type",
            call("suggest_gifts", format!(r#"{{"relationship_type":"{huge}"}}"#)),
        ),
        (
            "suggest_gifts: interests nested 120 deep, repeated",
            call(
                "suggest_gifts",
                format!(r#"{{"relationship_type":"friend","interests":[{}]}}"#, repeated(&nested, FILL)),
            ),
        ),
        ("prepare_order: a 250 KiB gift_id", call("prepare_order", format!(r#"{{"gift_id":"{huge}","quantity":1}}"#))),
        (
            "commit_order: a 250 KiB idempotency key and token",
            call(
                "commit_order",
                format!(
                    r#"{{"draft_id":"{0}","idempotency_key":"{0}","confirmation_token":"{0}"}}"#,
                    "q".repeat(FILL / 3)
                ),
            ),
        ),
        ("get_order: a 250 KiB order_id", call("get_order", format!(r#"{{"order_id":"{huge}"}}"#))),
        ("tools/call: a 250 KiB tool name", call(&huge, "{}".into())),
        (
            "resources/read: a 250 KiB uri",
            format!(r#"{{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{{"uri":"ui://{huge}"}}}}"#),
        ),
        ("a 250 KiB method name", format!(r#"{{"jsonrpc":"2.0","id":3,"method":"{huge}","params":{{}}}}"#)),
    ]
}

/// What an answer to hostile input may weigh, whatever the input (the normal answers are a few KiB).
const MAX_HOSTILE_ANSWER_BYTES: usize = 64 * 1024;

#[tokio::test]
async fn the_largest_answer_hostile_input_can_provoke_is_bounded() {
    let app = spawn_app_with(|c| c.daily_suggestion_limit = 0).await;
    let raw = RawSession::open(app.mcp_url()).await;
    let mut sizes = Vec::new();
    for (what, body) in amplifying_bodies() {
        assert!(body.len() <= giftgenius_server::startup::MAX_REQUEST_BODY_BYTES, "{what}: {} bytes", body.len());
        let started = Instant::now();
        let (status, answer) = raw.send(body.clone()).await;
        eprintln!(
            "{:>10} bytes in {:>7.1?} (status {status}, request {} bytes): {what}",
            answer.len(),
            started.elapsed(),
            body.len()
        );
        assert!(leak_in(&answer, &[]).is_none(), "{what}: the answer leaks internals");
        sizes.push((answer.len(), what));
    }
    let (largest, what) = sizes.iter().max().copied().unwrap();
    eprintln!("largest answer to hostile input: {largest} bytes ({what})");
    assert!(largest <= MAX_HOSTILE_ANSWER_BYTES, "{what}: {largest} bytes");

    // Still serving.
    let call = r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"suggest_gifts","arguments":{"relationship_type":"friend"}}}"#;
    let (status, answer) = raw.send(call).await;
    assert_eq!(status, 200, "{answer}");
}
