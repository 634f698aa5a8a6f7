//! An order's life after payment (issue 25 item 5) through the operator's API
//! (`/operator/orders/{id}/…`, real HTTP against the app) and its `orders` command (the real
//! binary): each status change answers the order and writes one `order_update` event (posted to a
//! real receiver, and a valid ACP `Order` by the spec's own closed schema), shows in get_order and
//! list_orders; partial refunds reach the sandbox provider's ledger once per adjustment however
//! often they are sent; an answer the provider lost is finished by the reconciler; a shipped order
//! is no longer the buyer's to cancel; the token guards it all. The same on PostgreSQL.

use std::path::Path;
use std::time::Duration;

use giftgenius_commerce::clock::Clock;
use giftgenius_commerce::store::{OutboxRow, OutboxStatus};
use giftgenius_server::config::Config;
use giftgenius_types::wire::META_CANCEL_TOKENS;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::postgres::TestDb;
use crate::support::{
    Receiver, SandboxPay, TOKEN, TestApp, call_as, commit_args, meta_of, recipient, server_command, spawn_app_on,
    spawn_app_with,
};

const TOKEN_VALUE: &str = "op_0123456789abcdef0123456789abcdef0123456789";
const SECRET: &str = "whsec_operator_test_0123456789abcdef";
const TRACKING: &str = "https://ctt.example/track?n=RR123456789PT";

/// The schema of our ACP Order type (the spec's closed `Order` as docs/acp.md §4.3 maps it):
/// what every event's `data` must satisfy. The spec's own JSON Schema is public and is never
/// copied into this repository; recorded bodies are checked against it out of tree (docs/acp.md
/// §12 says how).
fn acp_order_schema() -> jsonschema::Validator {
    let schema = serde_json::to_value(schemars::schema_for!(giftgenius_types::acp::AcpOrder)).expect("a schema");
    jsonschema::draft202012::new(&schema).expect("our Order's schema compiles")
}

/// A file holding `text` (removed on drop).
pub(crate) fn file_with(text: &str) -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), format!("{text}\n")).expect("write");
    file
}

/// The operator's API on, app orders' events posted to `receiver` (polling every 20 ms).
fn operated(config: &mut Config, token_file: &Path, receiver: Option<(&str, &Path)>) {
    config.operator_token_file = Some(token_file.to_path_buf());
    if let Some((url, secret)) = receiver {
        config.order_webhook_url = Some(url.to_string());
        config.order_webhook_secret_file = Some(secret.to_path_buf());
        config.webhook_poll_ms = 20;
    }
}

/// An app with the operator's API and a receiver of its orders' events.
struct Operated {
    app: TestApp,
    receiver: Receiver,
    _files: (tempfile::NamedTempFile, tempfile::NamedTempFile),
}

async fn operated_app(customize: impl FnOnce(&mut Config)) -> Operated {
    let receiver = Receiver::start(SECRET, Clock::System).await;
    let (token, secret) = (file_with(TOKEN_VALUE), file_with(SECRET));
    let url = receiver.url.clone();
    let app = spawn_app_with(|c| {
        operated(c, token.path(), Some((&url, secret.path())));
        customize(c);
    })
    .await;
    receiver.set_clock(app.clock.clone());
    Operated { app, receiver, _files: (token, secret) }
}

/// A paid order of `subject` for `gift` (express shipping): its id and total in minor units.
async fn place(app: &TestApp, subject: &str, gift: &str) -> (String, i64) {
    let client = app.client().await;
    let arguments = json!({"gift_id": gift, "recipient": recipient(), "shipping": "express"});
    let (prepared, draft) = call_as(&client, subject, "prepare_order", arguments).await;
    assert_eq!(draft["ok"], true, "{draft}");
    let token = meta_of(&prepared, TOKEN).and_then(Value::as_str).expect("token").to_string();
    let draft_id = draft["draft"]["id"].as_str().unwrap().to_string();
    let key = format!("ik_{draft_id}");
    let (_, sc) = call_as(&client, subject, "commit_order", commit_args(&draft_id, &key, &token)).await;
    assert_eq!(sc["order"]["status"], "paid", "{sc}");
    (sc["order"]["id"].as_str().unwrap().to_string(), sc["order"]["total"]["amount_minor"].as_i64().unwrap())
}

/// `method` on the operator's `path` (after `/operator/orders/`) with `body`, showing `token`.
async fn send(
    app: &TestApp,
    method: &str,
    path: &str,
    body: Option<Value>,
    token: Option<&str>,
) -> (StatusCode, Value) {
    let url = format!("{}/operator/orders/{path}", app.local_url);
    let client = reqwest::Client::new();
    let mut request = match method {
        "GET" => client.get(url),
        _ => client.post(url),
    };
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("the API answers");
    let status = response.status();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

async fn post(app: &TestApp, path: &str, body: Value) -> (StatusCode, Value) {
    send(app, "POST", path, Some(body), Some(TOKEN_VALUE)).await
}

fn shipment(number: &str) -> Value {
    json!({"carrier": "CTT", "tracking_number": number, "tracking_url": TRACKING})
}

fn refund(amount: i64, reason: &str, key: &str) -> Value {
    json!({"amount": amount, "reason": reason, "idempotency_key": key})
}

/// `subject`'s order as get_order answers it, and its cancel token if it has one.
async fn get_order(app: &TestApp, subject: &str, order: &str) -> (Value, Option<String>) {
    let client = app.client().await;
    let (result, sc) = call_as(&client, subject, "get_order", json!({"order_id": order})).await;
    assert_eq!(sc["ok"], true, "{sc}");
    let token = meta_of(&result, META_CANCEL_TOKENS).and_then(|t| t[order].as_str()).map(str::to_string);
    (sc["order"].clone(), token)
}

/// `order`'s events as stored, once `done` holds (polled, at most 20 s).
async fn events_when(app: &TestApp, order: &str, done: impl Fn(&[OutboxRow]) -> bool) -> Vec<OutboxRow> {
    for _ in 0..1000 {
        let events = app.state.store.order_events_of(order).await.expect("events");
        if done(&events) {
            return events;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("never: {:#?}", app.state.store.order_events_of(order).await);
}

fn all_delivered(n: usize) -> impl Fn(&[OutboxRow]) -> bool {
    move |events| events.len() == n && events.iter().all(|e| e.status == OutboxStatus::Delivered)
}

fn statuses(timeline: &Value) -> Vec<&str> {
    timeline.as_array().map(|steps| steps.iter().filter_map(|s| s["status"].as_str()).collect()).unwrap_or_default()
}

#[tokio::test]
async fn an_order_goes_processing_shipped_completed_with_an_event_each_shown_by_get_and_list_orders() {
    let Operated { app, receiver, .. } = operated_app(|_| {}).await;
    let (order, _) = place(&app, "ana", "hh-010").await;

    let (status, processing) = post(&app, &format!("{order}/processing"), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{processing}");
    assert_eq!(
        (processing["changed"].as_bool(), processing["order"]["status"].as_str()),
        (Some(true), Some("processing"))
    );
    let (status, again) = post(&app, &format!("{order}/processing"), json!({})).await;
    assert_eq!((status, again["changed"].as_bool()), (StatusCode::OK, Some(false)), "the same step again: {again}");
    assert_eq!(again["order"], processing["order"], "answers the order as it is");

    let (status, shipped) = post(&app, &format!("{order}/ship"), shipment("RR123456789PT")).await;
    assert_eq!(status, StatusCode::OK, "{shipped}");
    assert_eq!(
        shipped["order"]["fulfillment"],
        json!({"carrier": "CTT", "tracking_number": "RR123456789PT", "tracking_url": TRACKING})
    );
    let (status, reshipped) = post(&app, &format!("{order}/ship"), shipment("RR123456789PT")).await;
    assert_eq!((status, reshipped["changed"].as_bool()), (StatusCode::OK, Some(false)));

    app.clock.advance(Duration::from_secs(3 * 86_400));
    let (status, completed) = send(&app, "POST", &format!("{order}/complete"), None, Some(TOKEN_VALUE)).await;
    assert_eq!(status, StatusCode::OK, "an empty body is fine: {completed}");
    assert_eq!(completed["order"]["status"], "completed");

    let (seen, _) = get_order(&app, "ana", &order).await;
    assert_eq!(seen["status"], "completed");
    assert_eq!(statuses(&seen["timeline"]), ["paid", "processing", "shipped", "completed"]);
    assert_eq!(seen["fulfillment"]["tracking_number"], "RR123456789PT");
    assert_eq!(seen, completed["order"], "the operator and the buyer see the same order");
    let client = app.client().await;
    let (_, listed) = call_as(&client, "ana", "list_orders", json!({})).await;
    assert_eq!(listed["orders"][0]["status"], "completed", "{listed}");
    assert_eq!(statuses(&listed["orders"][0]["timeline"]), ["paid", "processing", "shipped", "completed"]);
    let (_, get) = send(&app, "GET", &order, None, Some(TOKEN_VALUE)).await;
    assert_eq!(get["order"], seen);

    let events = events_when(&app, &order, all_delivered(4)).await;
    let changes: Vec<(&str, i64)> = events.iter().map(|e| (e.change.as_str(), e.seq)).collect();
    assert_eq!(changes, [("paid", 1), ("processing", 2), ("shipped", 3), ("completed", 4)], "one event per change");
    let accepted = receiver.accepted();
    let bodies: Vec<&Value> = events.iter().map(|e| &accepted[&e.id]).collect();
    let kinds: Vec<(&str, &str)> =
        bodies.iter().map(|b| (b["type"].as_str().unwrap(), b["data"]["status"].as_str().unwrap())).collect();
    assert_eq!(
        kinds,
        [
            ("order_create", "confirmed"),
            ("order_update", "processing"),
            ("order_update", "shipped"),
            ("order_update", "completed")
        ]
    );
    let schema = acp_order_schema();
    for body in &bodies {
        let problems: Vec<String> =
            schema.iter_errors(&body["data"]).map(|e| format!("{e} at {}", e.instance_path())).collect();
        assert!(problems.is_empty(), "not an ACP Order: {problems:?}\n{:#}", body["data"]);
    }
    let fulfillment = &bodies[2]["data"]["fulfillments"][0];
    assert_eq!(
        (fulfillment["type"].as_str(), fulfillment["status"].as_str(), fulfillment["carrier"].as_str()),
        (Some("shipping"), Some("shipped"), Some("CTT"))
    );
    assert_eq!(fulfillment["tracking_url"], TRACKING);
    assert_eq!(bodies[2]["data"]["line_items"][0]["status"], "fulfilled");
    assert_eq!(bodies[3]["data"]["fulfillments"][0]["status"], "delivered");
}

#[tokio::test]
async fn a_step_out_of_order_is_a_409_naming_the_current_status_and_bad_input_a_400_naming_the_fields() {
    let Operated { app, .. } = operated_app(|_| {}).await;
    let (order, _) = place(&app, "ana", "hh-010").await;

    let (status, early) = post(&app, &format!("{order}/complete"), json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{early}");
    assert_eq!(
        (early["error"]["code"].as_str(), early["error"]["current_status"].as_str()),
        (Some("illegal_transition"), Some("paid"))
    );

    for (body, fields) in [
        (json!({"carrier": "CTT", "tracking_number": "RR1"}), vec!["tracking_url"]),
        (
            json!({"carrier": "", "tracking_number": "RR1", "tracking_url": "http://ctt.example/t"}),
            vec!["carrier", "tracking_url"],
        ),
        (
            json!({"carrier": "CTT", "tracking_number": "RR1", "tracking_url": "https://ctt.example/t", "eta": 3}),
            vec!["eta"],
        ),
        (json!("ship it"), vec!["(body)", "carrier", "tracking_number", "tracking_url"]),
    ] {
        let (status, refused) = post(&app, &format!("{order}/ship"), body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {refused}");
        assert_eq!(refused["error"]["code"], "invalid_request");
        let named: Vec<&str> =
            refused["error"]["field_errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
        assert_eq!(named, fields, "{body}");
    }
    let response = reqwest::Client::new()
        .post(format!("{}/operator/orders/{order}/refund", app.local_url))
        .bearer_auth(TOKEN_VALUE)
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);

    let (status, shipped) = post(&app, &format!("{order}/ship"), shipment("RR1")).await;
    assert_eq!(status, StatusCode::OK, "paid → shipped directly: {shipped}");
    let (status, back) = post(&app, &format!("{order}/processing"), json!({})).await;
    assert_eq!((status, back["error"]["current_status"].as_str()), (StatusCode::CONFLICT, Some("shipped")));
    let (status, other) = post(&app, &format!("{order}/ship"), shipment("RR2")).await;
    assert_eq!((status, other["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("illegal_transition")));
    assert!(other["error"]["message"].as_str().unwrap().contains("other tracking"), "{other}");

    let (status, missing) = post(&app, "ord_nosuchorder/processing", json!({})).await;
    assert_eq!((status, missing["error"]["code"].as_str()), (StatusCode::NOT_FOUND, Some("order_not_found")));
    let (status, _) = post(&app, "..%2Fetc/processing", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let events = app.state.store.order_events_of(&order).await.unwrap();
    let changes: Vec<&str> = events.iter().map(|e| e.change.as_str()).collect();
    assert_eq!(changes, ["paid", "shipped"], "what was refused wrote nothing");
}

#[tokio::test]
async fn a_shipped_order_is_no_longer_the_buyers_to_cancel() {
    let Operated { app, .. } = operated_app(|_| {}).await;
    let (order, _) = place(&app, "ana", "hh-010").await;
    let (paid, token) = get_order(&app, "ana", &order).await;
    let token = token.expect("a paid order has a cancel token");
    assert!(paid["cancellable_until"].is_string());

    let (status, processing) = post(&app, &format!("{order}/processing"), json!({})).await;
    assert_eq!(status, StatusCode::OK);
    assert!(processing["order"]["cancellable_until"].is_null(), "the operator's view has no cut-off");
    let (being_prepared, still) = get_order(&app, "ana", &order).await;
    assert!(
        being_prepared["cancellable_until"].is_string() && still.is_some(),
        "processing: still the buyer's before the cut-off"
    );

    post(&app, &format!("{order}/ship"), shipment("RR1")).await;
    let (shipped, none) = get_order(&app, "ana", &order).await;
    assert!(shipped["cancellable_until"].is_null() && none.is_none(), "{shipped}");
    let client = app.client().await;
    let arguments = json!({"order_id": order, "idempotency_key": "ck_1", "confirmation_token": token});
    let (_, refused) = call_as(&client, "ana", "cancel_order", arguments).await;
    assert_eq!(refused["error"]["code"], "ORDER_NOT_CANCELLABLE", "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("already shipped") && message.contains("Nothing was changed or refunded"), "{message}");
    assert!(app.provider.refunds().await.is_empty());
}

#[tokio::test]
async fn partial_refunds_reach_the_ledger_once_per_adjustment_however_often_they_are_sent() {
    let Operated { app, receiver, .. } = operated_app(|_| {}).await;
    let (order, total) = place(&app, "ana", "hh-010").await;
    post(&app, &format!("{order}/ship"), shipment("RR1")).await;

    let (status, first) = post(&app, &format!("{order}/refund"), refund(500, "Scratched lid", "rf-1")).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(first["order"]["amount_refunded"]["amount_minor"], 500);
    assert_eq!(first["order"]["status"], "shipped", "a partial refund leaves the status");
    for _ in 0..3 {
        let (status, again) = post(&app, &format!("{order}/refund"), refund(500, "Scratched lid", "rf-1")).await;
        assert_eq!((status, again["changed"].as_bool()), (StatusCode::OK, Some(false)), "{again}");
    }
    let (status, second) = post(&app, &format!("{order}/refund"), refund(300, "Late delivery", "rf-2")).await;
    assert_eq!(status, StatusCode::OK, "{second}");
    let ledger: Vec<i64> = app.provider.refunds().await.iter().map(|r| r.amount).collect();
    assert_eq!(ledger, [500, 300], "once per adjustment");

    let (status, reused) = post(&app, &format!("{order}/refund"), refund(900, "Scratched lid", "rf-1")).await;
    assert_eq!((status, reused["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("idempotency_key_reused")));
    let (status, over) = post(&app, &format!("{order}/refund"), refund(total - 799, "Everything", "rf-3")).await;
    assert_eq!(
        (status, over["error"]["code"].as_str()),
        (StatusCode::CONFLICT, Some("amount_exceeds_refundable")),
        "{over}"
    );
    assert_eq!(over["error"]["refundable"]["amount_minor"], total - 800);
    assert_eq!(app.provider.refunds().await.len(), 2, "nothing for the refused ones");

    let (seen, _) = get_order(&app, "ana", &order).await;
    let adjustments: Vec<(i64, &str, &str)> = seen["adjustments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["amount"]["amount_minor"].as_i64().unwrap(),
                a["reason"].as_str().unwrap(),
                a["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(adjustments, [(500, "Scratched lid", "succeeded"), (300, "Late delivery", "succeeded")]);
    assert_eq!(seen["amount_refunded"]["amount_minor"], 800);
    assert_eq!(seen["total"]["amount_minor"], total, "the total stays what was charged");

    let events = events_when(&app, &order, all_delivered(4)).await;
    let changes: Vec<&str> = events.iter().map(|e| e.change.as_str()).collect();
    assert_eq!(changes, ["paid", "shipped", "refunded", "refunded"], "one event per adjustment");
    let last = &receiver.accepted()[&events[3].id]["data"];
    assert!(acp_order_schema().is_valid(last), "{last:#}");
    let refunded: Vec<(&str, i64)> = last["adjustments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["status"].as_str().unwrap(), a["amount"].as_i64().unwrap()))
        .collect();
    assert_eq!(refunded, [("completed", 500), ("completed", 300)]);
    let totals = last["totals"].as_array().unwrap();
    assert!(totals.iter().any(|t| t["type"] == "amount_refunded" && t["amount"] == 800), "{totals:?}");
    assert!(totals.iter().any(|t| t["type"] == "total" && t["amount"] == total), "{totals:?}");
}

#[tokio::test]
async fn refunding_all_that_is_left_before_shipping_cancels_the_order_as_the_buyer_would() {
    let Operated { app, .. } = operated_app(|_| {}).await;
    let (order, total) = place(&app, "ana", "hh-010").await;
    post(&app, &format!("{order}/processing"), json!({})).await;
    let (status, part) = post(&app, &format!("{order}/refund"), refund(100, "Gift wrap missing", "rf-1")).await;
    assert_eq!((status, part["order"]["status"].as_str()), (StatusCode::OK, Some("processing")));

    let (status, rest) = post(&app, &format!("{order}/refund"), refund(total - 100, "Out of stock", "rf-2")).await;
    assert_eq!(status, StatusCode::OK, "{rest}");
    let cancelled = &rest["order"];
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(cancelled["refund"]["amount"]["amount_minor"], total - 100, "the cancellation refunds what was left");
    assert_eq!(cancelled["amount_refunded"]["amount_minor"], total);
    assert_eq!(statuses(&cancelled["timeline"]), ["paid", "processing", "cancelled"]);
    let (status, again) = post(&app, &format!("{order}/refund"), refund(total - 100, "Out of stock", "rf-2")).await;
    assert_eq!((status, again["changed"].as_bool()), (StatusCode::OK, Some(false)), "{again}");
    let (status, more) = post(&app, &format!("{order}/refund"), refund(1, "More", "rf-3")).await;
    assert_eq!((status, more["error"]["current_status"].as_str()), (StatusCode::CONFLICT, Some("cancelled")));
    let ledger: Vec<i64> = app.provider.refunds().await.iter().map(|r| r.amount).collect();
    assert_eq!(ledger, [100, total - 100], "the whole charge came back, once");
    let (status, _) = post(&app, &format!("{order}/ship"), shipment("RR1")).await;
    assert_eq!(status, StatusCode::CONFLICT, "a cancelled order does not ship");
}

#[tokio::test]
async fn a_buyer_cancelling_after_a_partial_refund_gets_back_what_is_left() {
    let Operated { app, receiver, .. } = operated_app(|_| {}).await;
    let (order, total) = place(&app, "ana", "hh-010").await;
    let (_, token) = get_order(&app, "ana", &order).await;
    let (status, _) = post(&app, &format!("{order}/refund"), refund(250, "Price match", "rf-1")).await;
    assert_eq!(status, StatusCode::OK);

    let client = app.client().await;
    let arguments = json!({"order_id": order, "idempotency_key": "ck_1", "confirmation_token": token.unwrap()});
    let (_, cancelled) = call_as(&client, "ana", "cancel_order", arguments).await;
    assert_eq!(cancelled["order"]["status"], "cancelled", "{cancelled}");
    assert_eq!(cancelled["order"]["refund"]["amount"]["amount_minor"], total - 250);
    assert_eq!(cancelled["order"]["amount_refunded"]["amount_minor"], total);
    let ledger: Vec<i64> = app.provider.refunds().await.iter().map(|r| r.amount).collect();
    assert_eq!(ledger, [250, total - 250], "never more than was paid");
    let events = events_when(&app, &order, all_delivered(3)).await;
    assert_eq!(events.iter().map(|e| e.change.as_str()).collect::<Vec<_>>(), ["paid", "refunded", "cancelled"]);
    let last = &receiver.accepted()[&events[2].id]["data"];
    assert!(acp_order_schema().is_valid(last), "{last:#}");
    assert_eq!(last["adjustments"].as_array().map(Vec::len), Some(2), "the partial refund and the cancellation's");
}

#[tokio::test]
async fn a_refund_whose_answer_was_lost_is_finished_by_the_reconciler_and_a_retry_finds_it_done() {
    let Operated { app, receiver, .. } = operated_app(|c| c.payments_timeout_ms = 500).await;
    let (order, _) = place(&app, "ana", "hh-010").await;
    post(&app, &format!("{order}/ship"), shipment("RR1")).await;
    app.provider.set_faults("timeout*1").await;

    let (status, lost) = post(&app, &format!("{order}/refund"), refund(700, "Dented box", "rf-lost")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{lost}");
    assert_eq!(lost["error"]["code"], "payment_provider_unavailable");
    let (seen, _) = get_order(&app, "ana", &order).await;
    assert_eq!(seen["adjustments"][0]["status"], "pending", "recorded before the provider was asked");
    assert!(seen["amount_refunded"].is_null(), "not refunded as far as we know");

    app.clock.advance(Duration::from_secs(11 * 60));
    let report = app.state.reconciler.run_once().await.unwrap();
    assert_eq!((report.adjustments_examined, report.adjusted), (1, 1), "{report:?}");
    let (status, retried) = post(&app, &format!("{order}/refund"), refund(700, "Dented box", "rf-lost")).await;
    assert_eq!((status, retried["changed"].as_bool()), (StatusCode::OK, Some(false)), "{retried}");
    assert_eq!(retried["order"]["amount_refunded"]["amount_minor"], 700);
    assert_eq!(app.provider.refunds().await.len(), 1, "the provider refunded once");
    let events = events_when(&app, &order, all_delivered(3)).await;
    assert_eq!(events.iter().map(|e| e.change.as_str()).collect::<Vec<_>>(), ["paid", "shipped", "refunded"]);
    assert_eq!(receiver.accepted()[&events[2].id]["data"]["adjustments"][0]["status"], "completed");
}

#[tokio::test]
async fn the_api_answers_only_its_token_and_is_absent_without_a_token_file() {
    let Operated { app, .. } = operated_app(|_| {}).await;
    let (order, _) = place(&app, "ana", "hh-010").await;
    for token in [None, Some("op_wrong_0123456789abcdef0123456789abcdef0123"), Some("")] {
        for (method, path) in [("GET", order.clone()), ("POST", format!("{order}/processing"))] {
            let (status, body) = send(&app, method, &path, Some(json!({})), token).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{method} {path} {token:?}: {body}");
            assert_eq!(body["error"]["code"], "unauthorized");
        }
    }
    let response =
        reqwest::Client::new().get(format!("{}/operator/orders/{order}", app.local_url)).send().await.unwrap();
    assert_eq!(response.headers()["www-authenticate"], r#"Bearer realm="operator""#);
    let (seen, _) = get_order(&app, "ana", &order).await;
    assert_eq!(seen["status"], "paid", "nothing was changed");
    let (status, _) = post(&app, &format!("{order}/teleport"), json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "no such step");

    let plain = spawn_app_with(|_| {}).await;
    let (order, _) = place(&plain, "ana", "hh-010").await;
    for (method, path) in [("GET", order.clone()), ("POST", format!("{order}/ship"))] {
        let (status, body) = send(&plain, method, &path, Some(shipment("RR1")), Some(TOKEN_VALUE)).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "no --operator-token-file: no API ({method} {path}): {body}");
    }
}

/// `giftgenius-server orders …` on `db`, against `provider`: (exit ok, stdout JSON, stderr).
fn orders_command(db: &str, provider: &SandboxPay, args: &[&str]) -> (bool, Value, String) {
    let mut command: Vec<String> = ["orders"].iter().chain(args).map(|a| a.to_string()).collect();
    command.extend(provider.app_flags().map(str::to_string));
    command.extend(["--db".to_string(), db.to_string()]);
    server_command(&command)
}

#[tokio::test]
async fn the_orders_command_moves_and_refunds_an_order_on_the_database_and_prints_what_it_did() {
    let mut db = String::new();
    let app = spawn_app_with(|c| db = c.db.clone()).await;
    let (order, _) = place(&app, "ana", "hh-010").await;
    let provider = app.provider.clone();

    let (ok, shipped, stderr) = orders_command(
        &db,
        &provider,
        &["ship", &order, "--carrier", "CTT", "--tracking-number", "RR9", "--tracking-url", TRACKING],
    );
    assert!(ok, "{stderr}");
    assert_eq!((shipped["changed"].as_bool(), shipped["order"]["status"].as_str()), (Some(true), Some("shipped")));
    let (ok, _, stderr) = orders_command(&db, &provider, &["processing", &order]);
    assert!(!ok && stderr.contains("shipped"), "a refusal fails the command and says why: {stderr}");
    let (ok, _, stderr) = orders_command(
        &db,
        &provider,
        &["ship", &order, "--carrier", "CTT", "--tracking-number", "RR9", "--tracking-url", "http://x.example"],
    );
    assert!(!ok && stderr.contains("tracking_url"), "{stderr}");

    let args = ["refund", order.as_str(), "--amount", "250", "--reason", "Scratched", "--idempotency-key", "cli-1"];
    let (ok, refunded, stderr) = orders_command(&db, &provider, &args);
    assert!(ok, "{stderr}");
    assert_eq!(refunded["order"]["amount_refunded"]["amount_minor"], 250);
    assert_eq!(refunded["idempotency_key"], "cli-1");
    let (ok, again, _) = orders_command(&db, &provider, &args);
    assert!(ok && again["changed"] == json!(false), "{again}");
    assert_eq!(provider.refunds().await.len(), 1, "the same key is the same refund");
    let (ok, unnamed, _) = orders_command(&db, &provider, &["refund", &order, "--amount", "50", "--reason", "Late"]);
    assert!(ok && unnamed["idempotency_key"].as_str().is_some_and(|k| k.starts_with("cli_")), "{unnamed}");

    let (ok, done, stderr) = orders_command(&db, &provider, &["complete", &order]);
    assert!(ok, "{stderr}");
    assert_eq!(done["order"]["status"], "completed");
    let (ok, shown, _) = orders_command(&db, &provider, &["show", &order]);
    assert!(ok && shown["order"]["amount_refunded"]["amount_minor"] == 300, "{shown}");
    let (seen, _) = get_order(&app, "ana", &order).await;
    assert_eq!(seen, shown["order"], "the app reads what the command wrote");
}

#[tokio::test]
async fn postgres_operator_steps_and_refunds_are_checked_and_announced() {
    let pg = TestDb::create().await;
    let provider = std::sync::Arc::new(SandboxPay::start());
    let receiver = Receiver::start(SECRET, Clock::System).await;
    let (token, secret) = (file_with(TOKEN_VALUE), file_with(SECRET));
    let (url, db) = (receiver.url.clone(), pg.url.clone());
    let app = spawn_app_on(&provider, |c| {
        c.db = db;
        operated(c, token.path(), Some((&url, secret.path())));
    })
    .await;
    receiver.set_clock(app.clock.clone());
    let (order, total) = place(&app, "ana", "hh-010").await;

    let (status, _) = post(&app, &format!("{order}/processing"), json!({})).await;
    assert_eq!(status, StatusCode::OK);
    // Two refunds at once on one order: each is checked against the other under the order's lock.
    let path = format!("{order}/refund");
    let (a, b) = tokio::join!(
        post(&app, &path, refund(total - 100, "A", "pg-a")),
        post(&app, &path, refund(total - 100, "B", "pg-b"))
    );
    let codes: Vec<StatusCode> = vec![a.0, b.0];
    assert!(codes.contains(&StatusCode::OK), "{a:?} {b:?}");
    assert_eq!(app.provider.refunds().await.len(), 1, "never more than was paid: {a:?} {b:?}");
    let (status, shipped) = post(&app, &format!("{order}/ship"), shipment("PG1")).await;
    assert_eq!(status, StatusCode::OK, "{shipped}");
    let (status, rest) = post(&app, &path, refund(100, "Rest", "pg-c")).await;
    assert_eq!((status, rest["order"]["status"].as_str()), (StatusCode::OK, Some("shipped")), "{rest}");
    assert_eq!(rest["order"]["amount_refunded"]["amount_minor"], total, "all of it, after shipping: an adjustment");
    let (status, over) = post(&app, &path, refund(1, "More", "pg-d")).await;
    assert_eq!((status, over["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("amount_exceeds_refundable")));
    post(&app, &format!("{order}/complete"), json!({})).await;

    let events = events_when(&app, &order, all_delivered(6)).await;
    let changes: Vec<&str> = events.iter().map(|e| e.change.as_str()).collect();
    assert_eq!(changes, ["paid", "processing", "refunded", "shipped", "refunded", "completed"]);
    let (seen, _) = get_order(&app, "ana", &order).await;
    assert_eq!(statuses(&seen["timeline"]), ["paid", "processing", "shipped", "completed"]);
}

/// Gift options end to end: a wrapped draft costs the merchant's wrap price per gift on top (a
/// line of its own), the order keeps it and its gift receipt; the packing slip tells the packer
/// to wrap and, with the receipt, shows no price, and neither does the order's status page
/// (the page a buyer may forward); the order's event carries a `gift_wrap` total. A merchant
/// that does not wrap refuses the wrap by name.
#[tokio::test]
async fn a_gift_wrapped_order_with_a_gift_receipt_shows_no_price_in_the_parcel() {
    let Operated { app, receiver, .. } = operated_app(|_| {}).await;
    let client = app.client().await;
    let args = json!({"gift_id": "hh-010", "quantity": 2, "recipient": recipient(), "gift_message": "Happy birthday!"});
    let (_, plain) = call_as(&client, "ana", "prepare_order", args.clone()).await;
    let mut options = args.clone();
    (options["gift_wrap"], options["gift_receipt"]) = (json!(true), json!(true));
    let (prepared, wrapped) = call_as(&client, "ana", "prepare_order", options).await;
    let (plain, wrapped) = (&plain["draft"], &wrapped["draft"]);
    let minor = |v: &Value| v["amount_minor"].as_i64().unwrap();
    assert_ne!(plain["id"], wrapped["id"], "other gift options, another draft");
    assert_eq!(plain["gift_wrap_price"], json!({"amount_minor": 599, "currency": "USD"}), "{plain}");
    assert!(plain.get("gift_wrap_cost").is_none() && plain.get("gift_receipt").is_none(), "{plain}");
    assert_eq!(wrapped["gift_wrap_cost"], json!({"amount_minor": 1198, "currency": "USD"}), "{wrapped}");
    assert_eq!(wrapped["gift_receipt"], true);
    assert_eq!(minor(&wrapped["total"]), minor(&plain["total"]) + 1198, "the wrap is in the total");
    assert_eq!(wrapped["subtotal"], plain["subtotal"], "and not in the items' subtotal");
    let text = crate::support::text_of(&prepared);
    assert!(text.contains("Gift-wrapped: $11.98 in the total.") && text.contains("gift receipt"), "{text}");

    let token = meta_of(&prepared, TOKEN).and_then(Value::as_str).unwrap();
    let draft_id = wrapped["id"].as_str().unwrap();
    let (_, sc) = call_as(&client, "ana", "commit_order", commit_args(draft_id, "ik_wrapped", token)).await;
    let order = &sc["order"];
    assert_eq!((order["status"].as_str(), &order["total"]), (Some("paid"), &wrapped["total"]), "{sc}");
    assert_eq!((&order["gift_wrap_cost"], &order["gift_receipt"]), (&wrapped["gift_wrap_cost"], &json!(true)));
    let order_id = order["id"].as_str().unwrap().to_string();
    let (seen, _) = get_order(&app, "ana", &order_id).await;
    assert_eq!(seen["gift_wrap_cost"], wrapped["gift_wrap_cost"], "get_order says it too");

    let (status, slip) = send(&app, "GET", &format!("{order_id}/packing-slip"), None, Some(TOKEN_VALUE)).await;
    let slip = slip.as_str().expect("an HTML page").to_string();
    assert_eq!(status, StatusCode::OK, "{slip}");
    assert!(slip.contains("Gift-wrap each of the 2 gifts.") && slip.contains("Happy birthday!"), "{slip}");
    assert!(slip.contains("Ana Silva<br>Rua Augusta 100") && slip.contains("Gift receipt: prices left out."));
    assert!(!slip.contains('$') && !slip.contains("Total"), "no price in the parcel: {slip}");
    let (status, _) = send(&app, "GET", &format!("{order_id}/packing-slip"), None, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "the operator's token guards the slip");

    let events = events_when(&app, &order_id, all_delivered(1)).await;
    let data = &receiver.accepted()[&events[0].id]["data"];
    let totals: Vec<(&str, i64)> =
        data["totals"].as_array().unwrap().iter().map(|t| (t["type"].as_str().unwrap(), minor_of(t))).collect();
    assert!(totals.contains(&("gift_wrap", 1198)), "{totals:?}");
    assert!(acp_order_schema().is_valid(data), "{data}");
    let permalink = data["permalink_url"].as_str().unwrap().replace(&app.base_url, &app.local_url);
    let page = reqwest::get(permalink).await.unwrap().text().await.unwrap();
    assert!(page.contains("data-gift-receipt") && !page.contains('$') && !page.contains("data-total"), "{page}");

    // Trailhead does not wrap: the wrap is refused with what to do, nothing drafted.
    let (_, refused) = call_as(
        &client,
        "ana",
        "prepare_order",
        json!({"gift_id": "tr-001", "gift_wrap": true, "recipient": recipient()}),
    )
    .await;
    assert_eq!(refused["error"]["code"], "VALIDATION_ERROR", "{refused}");
    assert_eq!(refused["error"]["field_errors"][0]["field"], "gift_wrap");
    assert!(refused["error"]["field_errors"][0]["message"].as_str().unwrap().contains("does not gift-wrap"));
    let (_, unwrappable) =
        call_as(&client, "ana", "prepare_order", json!({"gift_id": "tr-001", "recipient": recipient()})).await;
    assert!(unwrappable["draft"].get("gift_wrap_price").is_none(), "{unwrappable}");
}

fn minor_of(total: &Value) -> i64 {
    total["amount"].as_i64().unwrap()
}
