//! Whole tasks: a three-turn task whose arguments build on earlier results (both formats), the
//! turn limit, and provider failures retried or reported.

use std::sync::{Arc, Mutex};

use giftgenius_chat::agent::TaskEnd;
use serde_json::json;

use crate::support::{Format, Person, Step, field, session, spawn_app};

/// The order JSON a HOST NOTE carries.
fn order_id_in_note(text: &str) -> String {
    let note = &text[text.find("Order: ").expect("a HOST NOTE with the order")..];
    field(note, "id")
}

async fn three_turn_task(format: Format) {
    let app = spawn_app(|_| {}).await;
    let chosen = Arc::new(Mutex::new(String::new()));
    let chosen_in_script = chosen.clone();
    let model = crate::support::ScriptedModel::start(format, move |r| match r.index {
        0 => {
            assert!(!r.tools.contains(&"commit_order".to_string()), "offered {:?}", r.tools);
            Step::Calls(vec![("suggest_gifts", json!({"relationship_type": "parent", "interests": ["coffee"], "budget_max": 60, "occasion": "birthday"}))])
        }
        1 => {
            let gift = field(&r.result(0).content, "id");
            *chosen_in_script.lock().unwrap() = gift.clone();
            Step::Calls(vec![("prepare_order", json!({"gift_id": gift, "recipient": crate::support::recipient()}))])
        }
        2 => {
            let order = order_id_in_note(&r.result(0).content);
            Step::Calls(vec![("get_order", json!({"order_id": order}))])
        }
        3 => Step::Answer(format!("Done: your dad's gift is ordered and {}.", field(&r.result(0).content, "status"))),
        n => panic!("unexpected request {n}"),
    })
    .await;
    let mut person = Person::answering(&["yes"]);
    let mut chat = session(&app, &model, &[]).await;
    let end = chat.run_task(&mut person, "a birthday gift for my dad, he likes coffee, under $60").await.unwrap();
    println!("--- transcript ({format:?}) ---\n{}\n---", person.transcript());

    assert_eq!(end, TaskEnd::Answered("Done: your dad's gift is ordered and paid.".into()));
    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    // Each call was built on the previous result: the gift suggested first is the one prepared,
    // and the order read back is the one the host placed.
    let first_gift = chosen.lock().unwrap().clone();
    assert!(person.lines[0].starts_with("[turn 1] calls suggest_gifts {"), "{}", person.transcript());
    let prepared = json!({"gift_id": first_gift, "recipient": crate::support::recipient()});
    assert_eq!(person.lines[1], format!("[turn 2] calls prepare_order {prepared}"));
    assert!(
        person.lines.iter().any(|l| l.starts_with("[turn 3] calls get_order {\"order_id\":\"")),
        "{}",
        person.transcript()
    );
    assert!(person.transcript().contains("Final answer:\nDone"));
    assert_eq!(app.charges().await, 1);
    assert_eq!(app.orders().await, 1);
    assert!(model.violations().is_empty(), "{:?}", model.violations());
    for body in &requests {
        assert!(!body.to_string().contains("confirmation_token"), "the model saw the token or commit_order: {body}");
    }
}

#[tokio::test]
async fn a_three_turn_task_builds_each_call_on_the_last_result_over_chat_completions() {
    three_turn_task(Format::Openai).await;
}

#[tokio::test]
async fn a_three_turn_task_builds_each_call_on_the_last_result_over_anthropic_messages() {
    three_turn_task(Format::Anthropic).await;
}

#[tokio::test]
async fn a_model_that_never_stops_meets_the_turn_limit() {
    let app = spawn_app(|_| {}).await;
    let model = crate::support::ScriptedModel::start(Format::Anthropic, |r| {
        // New arguments every time, so only the turn limit can stop it.
        Step::Calls(vec![("suggest_gifts", json!({"relationship_type": "friend", "limit": 1 + r.index}))])
    })
    .await;
    let mut person = Person::default();
    let mut chat = session(&app, &model, &["--max-turns", "3"]).await;
    let end = chat.run_task(&mut person, "gift ideas").await.unwrap();
    assert_eq!(end, TaskEnd::TurnLimit(3));
    assert_eq!(model.requests().len(), 3, "no request after the limit");
    let last = person.lines.last().unwrap();
    assert!(last.contains("still calling tools after 3 turns (--max-turns 3)"), "{last}");
    assert!(model.violations().is_empty());
}

#[tokio::test]
async fn a_rate_limited_or_failing_provider_is_retried_until_it_answers() {
    let app = spawn_app(|_| {}).await;
    let model = crate::support::ScriptedModel::start(Format::Openai, |r| match r.index {
        0 => Step::Status(429, Some(0)),
        1 => Step::Status(503, None),
        _ => Step::Answer("hello".into()),
    })
    .await;
    let mut chat = session(&app, &model, &[]).await;
    let end = chat.run_task(&mut Person::default(), "hi").await.unwrap();
    assert_eq!(end, TaskEnd::Answered("hello".into()));
    assert_eq!(model.requests().len(), 3);
}

#[tokio::test]
async fn a_refused_request_is_reported_without_retrying() {
    let app = spawn_app(|_| {}).await;
    let model = crate::support::ScriptedModel::start(Format::Anthropic, |_| Step::Status(401, None)).await;
    let mut chat = session(&app, &model, &[]).await;
    let error = chat.run_task(&mut Person::default(), "hi").await.unwrap_err();
    assert!(error.to_string().contains("HTTP 401"), "{error}");
    assert_eq!(model.requests().len(), 1, "401 is not retryable");
}

#[tokio::test]
async fn retries_end_after_the_configured_number() {
    let app = spawn_app(|_| {}).await;
    let model = crate::support::ScriptedModel::start(Format::Openai, |_| Step::Status(500, None)).await;
    let mut chat = session(&app, &model, &["--provider-retries", "2"]).await;
    let error = chat.run_task(&mut Person::default(), "hi").await.unwrap_err();
    assert!(error.to_string().contains("HTTP 500"), "{error}");
    assert_eq!(model.requests().len(), 3, "the first try and two retries");
}
