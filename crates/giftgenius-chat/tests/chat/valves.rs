//! The loop's safety valves, one test each: the repeated-call valve, unknown and hidden tools,
//! arguments that are not JSON or break the schema, a tool that times out, a server that went
//! away, and results too long for the model. Every call gets exactly one result: the scripted
//! model refuses any request where that does not hold, and each test asserts no such refusal.

use giftgenius_chat::agent::TaskEnd;
use serde_json::json;

use crate::support::{Format, Person, ScriptedModel, Step, hanging_catalog, log_lines, session, spawn_app};

fn tool_results(log: &[serde_json::Value], tool: &str) -> usize {
    log.iter().filter(|l| l["event"] == "tool_result" && l["tool"] == tool).count()
}

#[tokio::test]
async fn the_third_identical_call_is_not_run_and_the_model_is_told_to_change_approach() {
    let app = spawn_app(|_| {}).await;
    let model = ScriptedModel::start(Format::Anthropic, |r| match r.index {
        0 | 1 => Step::Calls(vec![("suggest_gifts", json!({"relationship_type": "friend", "interests": ["tea"]}))]),
        // The same call with its keys in another order is the same call.
        2 => Step::Calls(vec![("suggest_gifts", json!({"interests": ["tea"], "relationship_type": "friend"}))]),
        3 => {
            let third = r.result(0);
            assert!(third.is_error, "{third:?}");
            assert!(
                third.content.contains("Not run") && third.content.contains("Do not repeat it"),
                "{}",
                third.content
            );
            Step::Answer("Here are the tea gifts I found.".into())
        }
        n => panic!("unexpected request {n}"),
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("chat.jsonl");
    let mut chat = session(&app, &model, &["--log", log.to_str().unwrap()]).await;
    let mut person = Person::default();
    let end = chat.run_task(&mut person, "tea gifts for a friend").await.unwrap();
    assert!(matches!(end, TaskEnd::Answered(_)));
    let log = log_lines(&log);
    assert_eq!(tool_results(&log, "suggest_gifts"), 2, "the third call never reached the server");
    assert_eq!(log.iter().filter(|l| l["event"] == "refused").count(), 1);
    assert!(person.lines[2].starts_with("[turn 3] calls suggest_gifts"), "{}", person.transcript());
    assert!(person.lines[3].contains("not run: Not run"), "{}", person.transcript());
    assert!(model.violations().is_empty(), "{:?}", model.violations());
}

#[tokio::test]
async fn unknown_and_hidden_tools_get_error_results_in_the_same_turn_as_a_real_call() {
    let app = spawn_app(|_| {}).await;
    let model = ScriptedModel::start(Format::Openai, |r| match r.index {
        // Three calls in one turn: each must get its own result, in order.
        0 => Step::Calls(vec![
            ("find_gifts", json!({"query": "tea"})),
            ("suggest_gifts", json!({"relationship_type": "friend"})),
            ("commit_order", json!({"draft_id": "d_x", "idempotency_key": "ik_1"})),
        ]),
        1 => {
            let ids: Vec<&str> = r.results.iter().map(|x| x.call_id.as_str()).collect();
            assert_eq!(ids, ["call_1_0", "call_1_1", "call_1_2"], "one result per call, in order");
            let unknown = r.result(0);
            assert!(unknown.is_error);
            assert!(unknown.content.contains("no tool named \"find_gifts\""), "{}", unknown.content);
            assert!(
                unknown.content.contains("suggest_gifts") && !unknown.content.contains("commit_order"),
                "{}",
                unknown.content
            );
            assert!(!r.result(1).is_error, "{}", r.result(1).content);
            let hidden = r.result(2);
            assert!(
                hidden.is_error && hidden.content.contains("commit_order is not available to you"),
                "{}",
                hidden.content
            );
            Step::Answer("ok".into())
        }
        n => panic!("unexpected request {n}"),
    })
    .await;
    let mut chat = session(&app, &model, &[]).await;
    chat.run_task(&mut Person::default(), "tea").await.unwrap();
    assert_eq!(model.requests().len(), 2);
    assert!(model.violations().is_empty(), "{:?}", model.violations());
}

#[tokio::test]
async fn arguments_that_break_the_schema_or_are_not_json_are_answered_without_running_the_tool() {
    let app = spawn_app(|_| {}).await;
    let model = ScriptedModel::start(Format::Openai, |r| match r.index {
        0 => Step::Calls(vec![("prepare_order", json!({"gift_id": 42, "quantity": 99, "gift": "mug"}))]),
        1 => {
            let bad = r.result(0);
            assert!(bad.is_error);
            for named in ["inputSchema of prepare_order", "gift_id:", "quantity:", "nothing was run"] {
                assert!(bad.content.contains(named), "{named:?} missing from {}", bad.content);
            }
            Step::RawCall("suggest_gifts", "{\"relationship_type\": \"friend\"")
        }
        2 => {
            let raw = r.result(0);
            assert!(raw.is_error && raw.content.contains("not valid JSON"), "{}", raw.content);
            Step::Answer("sorry".into())
        }
        n => panic!("unexpected request {n}"),
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("chat.jsonl");
    let mut chat = session(&app, &model, &["--log", log.to_str().unwrap()]).await;
    chat.run_task(&mut Person::default(), "buy a mug").await.unwrap();
    let log = log_lines(&log);
    assert_eq!(log.iter().filter(|l| l["event"] == "tool_result").count(), 0, "nothing reached the server");
    assert_eq!(app.orders().await, 0);
    assert!(model.violations().is_empty(), "{:?}", model.violations());
}

#[tokio::test]
async fn a_tool_that_does_not_answer_in_time_gets_an_error_result_and_the_loop_goes_on() {
    let slow = hanging_catalog().await;
    let app = spawn_app(|c| {
        c.catalog_urls = vec![slow];
        c.source_timeout_ms = 10_000;
        c.suggest_deadline_ms = 10_000;
    })
    .await;
    let model = ScriptedModel::start(Format::Anthropic, |r| match r.index {
        0 => Step::Calls(vec![("suggest_gifts", json!({"relationship_type": "friend"}))]),
        1 => {
            let late = r.result(0);
            assert!(late.is_error);
            assert!(late.content.contains("did not answer within 300 ms"), "{}", late.content);
            Step::Answer("The gift service is slow right now.".into())
        }
        n => panic!("unexpected request {n}"),
    })
    .await;
    // The host's 300 ms (not the catalog's 10 s, which says "10000 ms") is what the model hears
    // of: the result's words say which timer ended the call, with no stopwatch.
    let mut chat = session(&app, &model, &["--tool-timeout-ms", "300"]).await;
    let end = chat.run_task(&mut Person::default(), "a gift").await.unwrap();
    assert_eq!(end, TaskEnd::Answered("The gift service is slow right now.".into()));
    assert!(model.violations().is_empty());
}

#[tokio::test]
async fn a_server_that_went_away_gives_an_error_result_not_a_crash() {
    let app = spawn_app(|_| {}).await;
    let model = ScriptedModel::start(Format::Openai, |r| match r.index {
        0 => Step::Calls(vec![("suggest_gifts", json!({"relationship_type": "friend"}))]),
        1 => {
            let gone = r.result(0);
            assert!(gone.is_error, "{gone:?}");
            Step::Answer("The service is unavailable.".into())
        }
        n => panic!("unexpected request {n}"),
    })
    .await;
    let mut chat = session(&app, &model, &["--tool-timeout-ms", "3000"]).await;
    app.stop().await;
    let end = chat.run_task(&mut Person::default(), "a gift").await.unwrap();
    assert_eq!(end, TaskEnd::Answered("The service is unavailable.".into()));
    assert!(model.violations().is_empty());
}

#[tokio::test]
async fn a_long_result_is_cut_with_a_note_saying_so() {
    let app = spawn_app(|_| {}).await;
    let model = ScriptedModel::start(Format::Anthropic, |r| match r.index {
        0 => Step::Calls(vec![("suggest_gifts", json!({"relationship_type": "friend", "limit": 12}))]),
        1 => {
            let cut = &r.result(0).content;
            assert!(cut.contains("[truncated by the host: the result had"), "{cut}");
            assert!(cut.contains("only the first 300 are shown]"), "{cut}");
            assert!(cut.chars().count() < 300 + 120, "{}", cut.chars().count());
            Step::Answer("ok".into())
        }
        n => panic!("unexpected request {n}"),
    })
    .await;
    let mut chat = session(&app, &model, &["--max-result-chars", "300"]).await;
    chat.run_task(&mut Person::default(), "many gifts").await.unwrap();
}
