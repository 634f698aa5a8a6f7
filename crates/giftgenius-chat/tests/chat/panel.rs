//! The chat panel's HTTP API (`--listen`), driven as the preview server drives it: a message, the
//! turns as they come, the draft's view result with its token (for the widget), the widget's
//! commit through the host's own MCP connection, the page's report, and exactly one charge.

use std::net::SocketAddr;
use std::time::Duration;

use giftgenius_chat::mcp::Mcp;
use giftgenius_types::wire::META_CONFIRMATION_TOKEN;
use serde_json::{Value, json};

use crate::support::{App, Format, ScriptedModel, Step, field, spawn_app};

/// The API on a free loopback port, against `app` and `model`.
async fn panel(app: &App, model: &ScriptedModel) -> String {
    let config = crate::support::config(app, model, &["--listen", "127.0.0.1:0"]);
    let addr: SocketAddr = config.listen.expect("--listen");
    let (local, server) = giftgenius_chat::panel::bind(config, addr).await.expect("the API binds");
    tokio::spawn(server);
    format!("http://{local}")
}

async fn state(api: &str) -> Value {
    reqwest::get(format!("{api}/api/state")).await.unwrap().json().await.unwrap()
}

/// Polls the state until `done` holds (at most 20 s).
async fn wait_for(api: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..400 {
        let s = state(api).await;
        if done(&s) {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}: {}", state(api).await)
}

fn turns_of<'a>(s: &'a Value, kind: &str) -> Vec<&'a Value> {
    s["turns"].as_array().unwrap().iter().filter(|t| t["kind"] == kind).collect()
}

#[tokio::test]
async fn a_message_runs_the_loop_and_the_views_confirm_places_one_order_the_model_hears_of() {
    let app = spawn_app(|_| {}).await;
    let model = ScriptedModel::start(Format::Openai, |r| match r.index {
        0 => Step::Calls(vec![("suggest_gifts", json!({"relationship_type": "partner", "budget_max": 80}))]),
        1 => Step::Calls(vec![(
            "prepare_order",
            json!({"gift_id": field(&r.result(0).content, "id"), "recipient": crate::support::recipient()}),
        )]),
        _ => {
            assert!(r.result(0).content.contains("HOST NOTE: the person confirmed"), "{}", r.result(0).content);
            Step::Answer(format!("Ordered: {}.", field(&r.result(0).content, "status")))
        }
    })
    .await;
    let api = panel(&app, &model).await;
    let http = reqwest::Client::new();

    // Only the server may call it: a browser's request (it always names its Origin) is refused.
    let from_a_page = http
        .post(format!("{api}/api/messages"))
        .header("origin", "http://evil.example")
        .json(&json!({"text": "buy something"}))
        .send()
        .await
        .unwrap();
    assert_eq!(from_a_page.status(), 403);
    assert!(turns_of(&state(&api).await, "user").is_empty(), "a refused request starts nothing");

    let sent = http
        .post(format!("{api}/api/messages"))
        .json(&json!({"text": "a gift for my partner under $80, and buy it"}))
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), 202);

    // The loop stops at the draft and waits for the person.
    let s = wait_for(&api, "the pending draft", |s| !s["pending"].is_null()).await;
    assert_eq!(s["busy"], true);
    let busy = http.post(format!("{api}/api/messages")).json(&json!({"text": "another"})).send().await.unwrap();
    assert_eq!(busy.status(), 409, "one task at a time");
    let calls: Vec<&str> = turns_of(&s, "call").iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(calls, ["suggest_gifts", "prepare_order"]);
    let results = turns_of(&s, "result");
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r["has_view"] == true), "both tools declare the widget");
    let prepared = &results[1]["result"];
    let draft_id = prepared["structuredContent"]["draft"]["id"].as_str().unwrap().to_string();
    let token = prepared["_meta"][META_CONFIRMATION_TOKEN].as_str().expect("the view gets the token").to_string();
    assert_eq!(s["pending"]["draft_id"], draft_id.as_str());
    assert_eq!(turns_of(&s, "confirm")[0]["draft_id"], draft_id.as_str());
    assert_eq!(app.charges().await, 0, "nothing is charged before the person confirms");

    // The widget's Confirm: commit_order through the host's bridge (here: an MCP connection of
    // the test's own, as the page's is), then the page reports the order.
    let widget = Mcp::connect(&app.mcp_url, None).await.unwrap();
    let Value::Object(arguments) = json!({"draft_id": draft_id, "idempotency_key": "ik_0123456789abcdef0123456789abcdef", "confirmation_token": token})
    else {
        unreachable!()
    };
    let committed = widget.call("commit_order", arguments, Duration::from_secs(10)).await.unwrap();
    assert_ne!(committed.is_error, Some(true), "{committed:?}");
    let order_id = committed.structured_content.as_ref().unwrap()["order"]["id"].as_str().unwrap().to_string();

    let unknown = http
        .post(format!("{api}/api/purchases/d_not_pending"))
        .json(&json!({"decision": "placed", "order_id": order_id}))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
    let reported = http
        .post(format!("{api}/api/purchases/{draft_id}"))
        .json(&json!({"decision": "placed", "order_id": order_id}))
        .send()
        .await
        .unwrap();
    assert_eq!(reported.status(), 200);

    let s = wait_for(&api, "the answer", |s| s["busy"] == false).await;
    let placed = turns_of(&s, "purchase");
    assert_eq!(placed.len(), 1);
    assert!(placed[0]["text"].as_str().unwrap().starts_with(&format!("Order placed: {order_id} ")), "{}", placed[0]);
    let answers = turns_of(&s, "answer");
    assert_eq!(answers.len(), 1, "{s}");
    assert!(answers[0]["text"].as_str().unwrap().starts_with("Ordered: "), "{}", answers[0]);
    assert!(s["pending"].is_null());

    // One click, one commit: the host read the order back and committed nothing itself.
    assert_eq!(app.charges().await, 1);
    assert_eq!(app.orders().await, 1);
    assert!(model.violations().is_empty(), "{:?}", model.violations());
    for body in model.requests() {
        assert!(!body.to_string().contains(&token), "the model never sees the token");
    }
}

#[tokio::test]
async fn a_declined_draft_charges_nothing_and_a_made_up_order_is_not_believed() {
    let app = spawn_app(|_| {}).await;
    let model = ScriptedModel::start(Format::Anthropic, |r| match r.index {
        0 => Step::Calls(vec![("suggest_gifts", json!({"relationship_type": "friend", "budget_max": 80}))]),
        1 | 3 => {
            Step::Calls(vec![("prepare_order", json!({"gift_id": "tr-007", "recipient": crate::support::recipient()}))])
        }
        2 => {
            assert!(r.result(0).content.contains("declined it. Nothing was ordered"), "{}", r.result(0).content);
            Step::Answer("Not bought.".into())
        }
        _ => {
            assert!(r.result(0).content.contains("but placing the order failed"), "{}", r.result(0).content);
            Step::Answer("It did not go through.".into())
        }
    })
    .await;
    let api = panel(&app, &model).await;
    let http = reqwest::Client::new();

    http.post(format!("{api}/api/messages")).json(&json!({"text": "gift"})).send().await.unwrap();
    let s = wait_for(&api, "the first draft", |s| !s["pending"].is_null()).await;
    let draft_id = s["pending"]["draft_id"].as_str().unwrap().to_string();
    let declined = http
        .post(format!("{api}/api/purchases/{draft_id}"))
        .json(&json!({"decision": "declined"}))
        .send()
        .await
        .unwrap();
    assert_eq!(declined.status(), 200);
    let s = wait_for(&api, "the first answer", |s| s["busy"] == false).await;
    assert_eq!(turns_of(&s, "purchase")[0]["text"], "Not bought: nothing was ordered or charged.");

    // A page that claims an order that does not exist: the host reads it back and tells the
    // model it failed; nothing is charged.
    http.post(format!("{api}/api/messages")).json(&json!({"text": "buy it after all"})).send().await.unwrap();
    let s = wait_for(&api, "the second draft", |s| !s["pending"].is_null()).await;
    let draft_id = s["pending"]["draft_id"].as_str().unwrap().to_string();
    http.post(format!("{api}/api/purchases/{draft_id}"))
        .json(&json!({"decision": "placed", "order_id": "ord_made_up"}))
        .send()
        .await
        .unwrap();
    let s = wait_for(&api, "the second answer", |s| s["busy"] == false).await;
    let purchases = turns_of(&s, "purchase");
    assert!(purchases[1]["text"].as_str().unwrap().starts_with("The order could not be placed"), "{}", purchases[1]);
    assert_eq!(turns_of(&s, "answer").len(), 2, "{s}");
    assert_eq!(app.charges().await, 0);
    assert_eq!(app.orders().await, 0);
}
