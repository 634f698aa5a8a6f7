//! Order events (issue 25 item 5, docs/acp.md §10) against a real receiver (`support::receiver`:
//! an HTTP server in the test that checks signatures with its own HMAC): a paid app order posts
//! one signed `order_create` with the full order, its cancellation an `order_update`, in that
//! order; failures are retried with back-off on the manual clock until the receiver takes the
//! event, `Retry-After` holds a retry back, a refused signature is dead at once, a receiver gone
//! past the horizon is dead until the operator's `outbox redeliver` (the real binary) sends it;
//! kill -9 before and after posting loses nothing (real processes); two PostgreSQL replicas post
//! each event once; an ACP order settled by the reconciler goes to its platform's webhook.
//!
//! ACP complete itself needs a delegated-payment vault token, which the sandbox provider hands
//! out on another branch: here the ACP order is placed as complete would place it and paid by
//! the reconciler (the same event builder from the database), and the routing is unit-tested in
//! `outbox::receivers`.

use giftgenius_commerce::order::Order;
use giftgenius_commerce::payments::ChargeRequest;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use giftgenius_commerce::clock::Clock;
use giftgenius_commerce::failpoints;
use giftgenius_commerce::store::{
    Claim, CreateOrder, CurrencyColumn, Fence, Fenced, OrderStatusColumn, OutboxRow, OutboxStatus, Scope,
};
use giftgenius_server::config::Config;
use giftgenius_types::wire::META_CANCEL_TOKENS;
use serde_json::{Value, json};

use crate::postgres::TestDb;
use crate::support::{
    Receiver, Reply, SandboxPay, ServerProcess, TOKEN, TestApp, call_as, commit_args, connect, execute_sql, meta_of,
    recipient, request, spawn_app_on, spawn_app_with, spawn_server_binary, start_server_binary, unused_port,
};

const SECRET: &str = "whsec_order_events_test_0123456789";
const MESSAGE: &str = "Feliz aniversário, Ana!";

/// A `--order-webhook-secret-file` holding `secret` (read at startup; removed on drop).
fn secret_file(secret: &str) -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), format!("{secret}\n")).expect("write the secret");
    file
}

/// `config` posting app orders' events to `url`, signed with the secret in `secret_file`,
/// polling every 20 ms.
fn with_app_webhook(config: &mut Config, url: &str, secret_file: &Path) {
    config.order_webhook_url = Some(url.to_string());
    config.order_webhook_secret_file = Some(secret_file.to_path_buf());
    config.webhook_poll_ms = 20;
}

/// A receiver checking signatures with `receiver_secret`, and an app posting app orders'
/// events to it signed with `app_secret` (then `customize`d); the receiver reads the app's clock.
async fn with_receiver(
    app_secret: &str,
    receiver_secret: &str,
    customize: impl FnOnce(&mut Config),
) -> (TestApp, Receiver) {
    let receiver = Receiver::start(receiver_secret, Clock::System).await;
    let (url, secret) = (receiver.url.clone(), secret_file(app_secret));
    let app = spawn_app_with(|c| {
        with_app_webhook(c, &url, secret.path());
        customize(c);
    })
    .await;
    receiver.set_clock(app.clock.clone());
    (app, receiver)
}

/// A paid order for `subject` with a gift message, committed under `key`: its id and draft id.
async fn place(app: &TestApp, subject: &str, gift: &str, key: &str) -> (String, String) {
    let client = app.client().await;
    let arguments = json!({"gift_id": gift, "recipient": recipient(), "gift_message": MESSAGE, "shipping": "express"});
    let (prepared, draft) = call_as(&client, subject, "prepare_order", arguments).await;
    assert_eq!(draft["ok"], true, "{draft}");
    let token = meta_of(&prepared, TOKEN).and_then(Value::as_str).expect("token").to_string();
    let draft_id = draft["draft"]["id"].as_str().unwrap().to_string();
    let (_, sc) = call_as(&client, subject, "commit_order", commit_args(&draft_id, key, &token)).await;
    assert_eq!(sc["order"]["status"], "paid", "{sc}");
    (sc["order"]["id"].as_str().unwrap().to_string(), draft_id)
}

/// Cancels `subject`'s paid `order` as the widget would (its cancel token from get_order).
async fn cancel(app: &TestApp, subject: &str, order: &str) {
    let client = app.client().await;
    let (read, _) = call_as(&client, subject, "get_order", json!({"order_id": order})).await;
    let token = meta_of(&read, META_CANCEL_TOKENS).and_then(|t| t[order].as_str()).expect("a cancel token");
    let arguments = json!({"order_id": order, "idempotency_key": format!("ck_{order}"), "confirmation_token": token});
    let (_, sc) = call_as(&client, subject, "cancel_order", arguments).await;
    assert_eq!(sc["order"]["status"], "cancelled", "{sc}");
}

/// `order`'s events as stored, once `done` holds for them (polled, at most 20 s).
async fn events_when(app: &TestApp, order: &str, what: &str, done: impl Fn(&[OutboxRow]) -> bool) -> Vec<OutboxRow> {
    for _ in 0..1000 {
        let events = app.state.store.order_events_of(order).await.expect("events");
        if done(&events) {
            return events;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{what} never happened: {:#?}", app.state.store.order_events_of(order).await);
}

fn delivered(events: &[OutboxRow]) -> bool {
    !events.is_empty() && events.iter().all(|e| e.status == OutboxStatus::Delivered)
}

/// Not leased at the app's time: the last attempt's outcome is recorded.
fn settled(event: &OutboxRow, now_ms: i64) -> bool {
    event.locked_until_ms.is_none_or(|until| until <= now_ms)
}

/// (type, status, order id) of what a receiver accepted, in arrival order.
fn summary(seen: &[crate::support::Seen]) -> Vec<(String, String, String)> {
    seen.iter()
        .filter(|s| s.signature_ok && s.answered == 200)
        .map(|s| {
            let text = |v: &Value| v.as_str().unwrap_or("").to_string();
            (text(&s.body["type"]), text(&s.body["data"]["status"]), text(&s.body["data"]["id"]))
        })
        .collect()
}

#[tokio::test]
async fn a_paid_then_cancelled_app_order_posts_a_signed_order_create_then_an_order_update() {
    let (app, receiver) = with_receiver(SECRET, SECRET, |_| {}).await;
    let (order, draft) = place(&app, "ana", "hh-010", "ik_events").await;

    let events = events_when(&app, &order, "the order_create delivered", delivered).await;
    assert_eq!(events.len(), 1, "one event for one payment: {events:#?}");
    let created = &events[0];
    assert_eq!((created.receiver.as_str(), created.seq, created.attempts), ("app", 1, 1));
    let seen = receiver.seen();
    assert_eq!(seen.len(), 1, "posted once: {seen:#?}");
    let request = &seen[0];
    assert!(request.signature_ok, "signed with the secret, at the app's time: {request:?}");
    assert_eq!(request.request_id, created.id, "Request-Id is the event id (the receiver's dedupe key)");
    assert!(request.request_id.starts_with("evt_"));
    assert_eq!(request.content_type, "application/json");
    assert_eq!(request.timestamp_header, giftgenius_commerce::clock::rfc3339(request.t * 1000), "Timestamp is t");
    assert_eq!(request.raw, created.body, "the bytes frozen in the outbox are the bytes signed and sent");

    let body = &request.body;
    assert_eq!(body["type"], "order_create");
    let data = &body["data"];
    assert_eq!(data["type"], "order");
    assert_eq!(data["id"], order.as_str());
    assert_eq!(data["checkout_session_id"], draft.as_str(), "an app order's session is its draft");
    assert_eq!(data["status"], "confirmed");
    let permalink = data["permalink_url"].as_str().unwrap();
    assert!(permalink.starts_with(&format!("{}/o/{order}.", app.base_url)), "{permalink}");
    let page = reqwest::get(permalink.replace(&app.base_url, &app.local_url)).await.unwrap();
    assert_eq!(page.status(), 200, "the permalink opens the order's page");
    assert!(
        data.get("currency").is_none(),
        "the spec's Order is closed: no currency (its totals are in the session's)"
    );
    assert!(!request.raw.contains(MESSAGE), "no gift message in an event: {}", request.raw);
    assert_eq!(data["support"]["help_center_url"], format!("{}/support", app.base_url));
    let line = &data["line_items"][0];
    assert_eq!(line["id"], "li_hh-010");
    assert_eq!(line["product_id"], "hh-010");
    assert_eq!(line["quantity"], json!({"ordered": 1, "current": 1, "fulfilled": 0}));
    assert_eq!(line["status"], "processing");
    let totals: Vec<(String, i64)> = data["totals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["type"].as_str().unwrap().to_string(), t["amount"].as_i64().unwrap()))
        .collect();
    let paid = app.state.store.order_by_id(&order).await.unwrap().unwrap();
    let unit = line["unit_price"].as_i64().unwrap();
    assert_eq!(
        totals,
        [
            ("subtotal".to_string(), unit),
            ("fulfillment".to_string(), paid.total_minor - unit),
            ("total".to_string(), paid.total_minor)
        ],
        "express shipping is the fulfillment line"
    );
    assert!(paid.total_minor > unit, "express shipping costs something");
    assert_eq!(data["adjustments"], json!([]));

    cancel(&app, "ana", &order).await;
    let events = events_when(&app, &order, "the order_update delivered", |e| e.len() == 2 && delivered(e)).await;
    assert_eq!((events[1].seq, events[1].change.as_str()), (2, "cancelled"));
    let seen = receiver.seen();
    assert_eq!(
        summary(&seen),
        [
            ("order_create".to_string(), "confirmed".to_string(), order.clone()),
            ("order_update".to_string(), "canceled".to_string(), order.clone())
        ],
        "in the order they happened"
    );
    let update = &seen[1].body["data"];
    assert_eq!(update["line_items"][0]["quantity"]["current"], 0);
    assert_eq!(update["line_items"][0]["status"], "removed");
    let refund = &update["adjustments"][0];
    assert_eq!((refund["type"].as_str(), refund["status"].as_str()), (Some("refund"), Some("completed")));
    assert_eq!((refund["amount"].as_i64(), refund["currency"].as_str()), (Some(paid.total_minor), Some("usd")));
    let last_total = update["totals"].as_array().unwrap().last().unwrap();
    assert_eq!(
        (last_total["type"].as_str(), last_total["amount"].as_i64()),
        (Some("amount_refunded"), Some(paid.total_minor))
    );
    assert_eq!(
        update["totals"].as_array().unwrap().iter().find(|t| t["type"] == "total").unwrap()["amount"],
        paid.total_minor,
        "the total stays what was charged"
    );
    assert_ne!(seen[0].request_id, seen[1].request_id, "one id per event");
}

#[tokio::test]
async fn a_receiver_answering_503_gets_the_event_again_until_it_takes_it_once() {
    let (app, receiver) = with_receiver(SECRET, SECRET, |_| {}).await;
    receiver.script([Reply::Status(503); 3]);
    let (order, _) = place(&app, "ana", "hh-010", "ik_retry").await;
    for failures in 1..=3 {
        receiver.wait_until(&format!("{failures} attempts"), |seen| seen.len() >= failures).await;
        // Its failure recorded (the lease ended), the clock moves past any back-off (≤ 1 h).
        events_when(&app, &order, "the failure recorded", |e| {
            e[0].attempts as usize >= failures && settled(&e[0], app.clock.now_ms())
        })
        .await;
        app.clock.advance(Duration::from_secs(3600));
    }
    let events = events_when(&app, &order, "delivered after the retries", delivered).await;
    let seen = receiver.seen();
    let answers: Vec<u16> = seen.iter().map(|s| s.answered).collect();
    assert_eq!(answers, [503, 503, 503, 200], "tried until it was taken, then never again");
    assert!(seen.iter().all(|s| s.request_id == events[0].id), "every attempt carries the same Request-Id");
    assert!(seen.iter().all(|s| s.raw == seen[0].raw), "the same bytes every time");
    assert_eq!(receiver.accepted().len(), 1);
    assert_eq!(events[0].attempts, 4);
    assert!(events[0].last_error.as_deref().is_some_and(|e| e.starts_with("HTTP 503")), "{:?}", events[0].last_error);
}

#[tokio::test]
async fn retry_after_holds_the_next_attempt_back() {
    // Rounds driven here, one per step of the clock.
    let (app, receiver) = with_receiver(SECRET, SECRET, |c| c.webhook_poll_ms = 0).await;
    receiver.script([Reply::RetryAfter(429, 7200)]);
    let (order, _) = place(&app, "ana", "hh-010", "ik_later").await;
    let outbox = &app.state.outbox;
    let round = outbox.run_once().await.unwrap();
    assert_eq!((round.claimed, round.retried), (1, 1));
    let event = app.state.store.order_events_of(&order).await.unwrap().remove(0);
    assert_eq!(event.next_attempt_at_ms, app.clock.now_ms() + 7_200_000, "the receiver asked for two hours");
    assert!(event.last_error.as_deref().is_some_and(|e| e.starts_with("HTTP 429")), "{:?}", event.last_error);
    app.clock.advance(Duration::from_secs(3600));
    assert_eq!(outbox.run_once().await.unwrap().claimed, 0, "not after one hour");
    app.clock.advance(Duration::from_secs(3600));
    let round = outbox.run_once().await.unwrap();
    assert_eq!((round.claimed, round.delivered), (1, 1), "after two");
    assert_eq!(receiver.seen().iter().map(|s| s.answered).collect::<Vec<_>>(), [429, 200]);
}

#[tokio::test]
async fn a_signature_the_receiver_refuses_makes_the_event_dead_at_once() {
    let (app, receiver) = with_receiver("not-the-receivers-secret-0123456789abcdef", SECRET, |_| {}).await;
    let (order, _) = place(&app, "ana", "hh-010", "ik_bad_secret").await;
    let events =
        events_when(&app, &order, "the event dead", |e| e.first().is_some_and(|e| e.status == OutboxStatus::Dead))
            .await;
    assert_eq!(events[0].attempts, 1, "a 401 is not retried");
    let error = events[0].last_error.as_deref().unwrap_or("");
    assert!(error.starts_with("HTTP 401") && error.contains("invalid_signature"), "{error}");
    let seen = receiver.seen();
    assert_eq!(seen.len(), 1);
    assert!(!seen[0].signature_ok && seen[0].answered == 401, "{seen:?}");
    // Nothing is due again, however long it waits: only an operator brings it back.
    app.clock.advance(Duration::from_secs(48 * 3600));
    assert_eq!(app.state.outbox.run_once().await.unwrap().claimed, 0);
    assert!(receiver.accepted().is_empty());
}

/// `giftgenius-server --db DB outbox ARGS…` (the operator's command, the real binary): its stdout.
async fn outbox_command(db: &Path, args: &[&str]) -> String {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_giftgenius-server"))
        .arg("--db")
        .arg(db)
        .arg("outbox")
        .args(args)
        .env("GIFTGENIUS_LOG", "warn")
        .output()
        .await
        .expect("the command runs");
    assert!(output.status.success(), "outbox {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("UTF-8")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_receiver_down_past_the_horizon_leaves_the_event_dead_until_the_operator_redelivers_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("giftgenius.db");
    // Nobody listens there yet.
    let port = unused_port();
    let (url, secret) = (format!("http://127.0.0.1:{port}/order-events"), secret_file(SECRET));
    let app = spawn_app_with(|c| {
        c.db = db.to_string_lossy().into_owned();
        with_app_webhook(c, &url, secret.path());
        c.webhook_poll_ms = 0;
        c.webhook_retry_horizon = Duration::from_secs(3 * 3600);
    })
    .await;
    let (order, _) = place(&app, "ana", "hh-010", "ik_down").await;

    // One round per hour of the clock: every back-off (10 s, 20 s, 40 s) is over by then.
    let mut attempts = 0;
    loop {
        let round = app.state.outbox.run_once().await.unwrap();
        assert_eq!(round.claimed, 1, "due again after an hour: {round:?}");
        attempts += 1;
        if round.dead == 1 {
            break;
        }
        assert!(round.retried == 1 && attempts < 10, "{round:?}");
        app.clock.advance(Duration::from_secs(3600));
    }
    assert_eq!(attempts, 4, "tried at 0 h, 1 h, 2 h, and at the 3 h horizon");
    let event = app.state.store.order_events_of(&order).await.unwrap().remove(0);
    assert_eq!(event.status, OutboxStatus::Dead);
    assert!(event.last_error.as_deref().is_some_and(|e| e.contains("connect")), "{:?}", event.last_error);

    // The operator finds it…
    let listed = outbox_command(&db, &["list", "--status", "dead"]).await;
    let lines: Vec<Value> = listed.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect();
    assert_eq!(lines.len(), 1, "{listed}");
    let line = &lines[0];
    assert_eq!((line["id"].as_str(), line["order_id"].as_str()), (Some(event.id.as_str()), Some(order.as_str())));
    assert_eq!(
        (line["type"].as_str(), line["status"].as_str(), line["attempts"].as_i64()),
        (Some("order_create"), Some("dead"), Some(4))
    );
    assert!(line["last_error"].is_string() && line.get("body").is_none(), "no body (personal data): {line}");
    assert_eq!(outbox_command(&db, &["list", "--status", "pending"]).await, "");

    // …and once the receiver is back, sends it again.
    let receiver = Receiver::start_on(port, SECRET, app.clock.clone()).await;
    let answer = outbox_command(&db, &["redeliver", &event.id, "evt_nothing"]).await;
    let answer: Value = serde_json::from_str(&answer).expect("JSON");
    assert_eq!(answer, json!({"redelivered": [event.id], "unknown": ["evt_nothing"]}));
    // The command ran on the wall clock: the app's manual clock catches up with it.
    let behind = Clock::System.now_ms() - app.clock.now_ms();
    app.clock.advance(Duration::from_millis(behind.max(0) as u64));
    let round = app.state.outbox.run_once().await.unwrap();
    assert_eq!((round.claimed, round.delivered), (1, 1), "{round:?}");
    assert_eq!(receiver.accepted().keys().collect::<Vec<_>>(), [&event.id]);
    let event = app.state.store.order_event(&event.id).await.unwrap().unwrap();
    assert_eq!((event.status, event.attempts), (OutboxStatus::Delivered, 1), "attempts counted afresh");
}

#[tokio::test]
async fn an_acp_order_goes_to_its_platforms_webhook_signed_with_the_platforms_secret() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("giftgenius.db");
    let receiver = Receiver::start("platform-webhook-secret-0123456789abcdef", Clock::System).await;
    let platforms = dir.path().join("platforms.json");
    let list = json!([{"name": "chat", "api_key": "chat-platform-key-0123456789abcdef", "webhook_url": receiver.url,
        "webhook_secret": "platform-webhook-secret-0123456789abcdef"}]);
    std::fs::write(&platforms, list.to_string()).unwrap();
    let app = spawn_app_with(|c| {
        c.db = db.to_string_lossy().into_owned();
        c.acp_platforms = Some(platforms.clone());
        c.webhook_poll_ms = 20;
    })
    .await;
    receiver.set_clock(app.clock.clone());

    // Without --order-webhook-url an app order on the same server announces nothing.
    let (app_order, _) = place(&app, "ana", "hh-010", "ik_app").await;
    assert!(app.state.store.order_events_of(&app_order).await.unwrap().is_empty());

    // A ready session, and its order as complete places it: the session as shown at payment
    // recorded in its state, a pending order under the session's id.
    let chat = crate::acp::Platform::new(&app, "chat-platform-key-0123456789abcdef");
    let body = json!({"line_items": [{"id": "hh-001"}], "currency": "usd", "capabilities": {},
        "fulfillment_details": {"email": "ana@example.com", "address": crate::acp::address("US", "CA", "94103")},
        "order_notes": "Happy birthday, Ana!"});
    let (_, session) = crate::acp::json_of(chat.post("", "create-1", &body).await).await;
    assert_eq!(session["status"], "ready_for_payment", "{session}");
    let session_id = session["id"].as_str().unwrap().to_string();
    let sql = "UPDATE acp_checkout_sessions SET state = json_set(state, '$.at_payment', json($1)) WHERE id = $2";
    execute_sql(&db.to_string_lossy(), sql, &[&session.to_string(), &session_id]).await;
    let total = session["totals"].as_array().unwrap().iter().find(|t| t["type"] == "total").unwrap()["amount"]
        .as_i64()
        .unwrap();
    let line = &session["line_items"][0];
    let now = app.clock.now_ms();
    let order = Order {
        id: "ord_acp_events_1".into(),
        subject: "acp:chat".into(),
        draft_id: session_id.clone(),
        gift_id: "hh-001".into(),
        gift_title: line["name"].as_str().unwrap().into(),
        merchant: line["marketplace_seller_details"]["name"].as_str().unwrap().into(),
        quantity: 1,
        currency: CurrencyColumn::Usd,
        total_minor: total,
        status: OrderStatusColumn::PendingPayment,
        charge_id: None,
        created_at_ms: now,
        delivery: Some(
            json!({"recipient": {"name": "Ana Lima", "address": {"line1": "1 Main St", "city": "Springfield",
                "region": "CA", "postal_code": "94103", "country": "US"}}, "gift_message": "Happy birthday, Ana!"})
            .to_string(),
        ),
        destination_city: Some("Springfield".into()),
        destination_country: Some("US".into()),
        cancelled_at_ms: None,
        anonymized_at_ms: None,
        payment_ref: None,
        authentication_until_ms: None,
        gift_wrap_minor: None,
        gift_receipt: 0,
        arrives_earliest: None,
        arrives_latest: None,
        // Its one line is the columns above (as an order written before baskets).
        stored_lines: Default::default(),
        fulfilment: Default::default(),
    };
    let store = &app.state.store;
    let scope = Scope {
        subject: "acp:chat".into(),
        tool: "acp POST /checkout_sessions/{id}/complete",
        key: format!("{session_id} key-1"),
    };
    assert_eq!(store.claim_key(&scope, "fingerprint", now + 30_000, now).await.unwrap(), Claim::New);
    let fence = Fence { scope, generation: 1 };
    assert_eq!(
        store.create_order(&fence, &order, &[("hh-001".to_string(), 100)].into(), now).await.unwrap(),
        Fenced::Written(CreateOrder::Created)
    );
    assert_eq!(store.release_key(&fence, now).await.unwrap(), Fenced::Written(()));
    // The provider charged it and the answer was lost: the reconciler finds the charge.
    let key = giftgenius_commerce::charge::provider_key(&order.id);
    let description = giftgenius_commerce::charge::charge_description(&order);
    let request = ChargeRequest {
        key: &key,
        order_id: &order.id,
        subject: &order.subject,
        amount: order.total(),
        description: &description,
        token: None,
    };
    app.state.reconciler.payments.charge(request).await.expect("charged");
    app.clock.advance(Duration::from_secs(601));
    assert_eq!(app.state.reconciler.run_once().await.unwrap().paid, 1);

    let events = events_when(&app, &order.id, "the ACP order's event delivered", delivered).await;
    assert_eq!((events.len(), events[0].receiver.as_str()), (1, "acp:chat"));
    let seen = receiver.seen();
    assert_eq!(seen.len(), 1, "{seen:#?}");
    assert!(seen[0].signature_ok, "signed with the platform's secret");
    let event = &seen[0].body;
    assert_eq!(event["type"], "order_create");
    let data = &event["data"];
    assert_eq!((data["id"].as_str(), data["status"].as_str()), (Some(order.id.as_str()), Some("confirmed")));
    assert_eq!(data["checkout_session_id"], session_id.as_str());
    let ordered = &data["line_items"][0];
    assert_eq!(
        (&ordered["id"], &ordered["title"], &ordered["product_id"]),
        (&line["id"], &line["name"], &line["product_id"])
    );
    assert_eq!(ordered["unit_price"], line["unit_amount"], "the price shown at payment");
    let paid_totals: Vec<Value> =
        session["totals"].as_array().unwrap().iter().filter(|t| t["type"] != "items_base_amount").cloned().collect();
    assert_eq!(data["totals"], Value::Array(paid_totals), "the session's totals as charged");
    assert!(!data.to_string().contains("Happy birthday"), "no gift message in an event: {data}");
}

/// How a test starts the server binary.
#[derive(Clone, Copy)]
struct Start<'a> {
    /// `--webhook-poll-ms` (0: this process posts nothing).
    poll_ms: &'a str,
    failpoint: &'a str,
    /// Wait until it answers /healthz (not for one a failpoint may abort as it starts).
    ready: bool,
}

/// The server binary on `db` posting app orders' events to `receiver`.
async fn events_server(
    db: &Path,
    provider: &SandboxPay,
    receiver: &Receiver,
    secret: &Path,
    start: Start<'_>,
) -> ServerProcess {
    let secret = secret.to_string_lossy();
    let flags = [
        "--payments-url",
        &provider.url,
        "--payments-token-file",
        provider.token_file(),
        "--order-webhook-url",
        &receiver.url,
        "--order-webhook-secret-file",
        &secret,
        "--webhook-poll-ms",
        start.poll_ms,
        "--webhook-timeout-ms",
        "1000",
        "--failpoints",
        start.failpoint,
    ];
    if start.ready {
        start_server_binary(db, &flags, "warn", Stdio::null()).await
    } else {
        spawn_server_binary(db, &flags, "warn", Stdio::null())
    }
}

/// Waits (at most 20 s) for `server` to have died.
async fn died(server: &mut ServerProcess, what: &str) {
    for _ in 0..1000 {
        if let Some(status) = server.exited() {
            assert!(!status.success(), "{what}: the process aborted");
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{what}: the server is still alive");
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_9_before_and_after_posting_loses_no_event() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("giftgenius.db");
    let secret = secret_file(SECRET);
    let provider = SandboxPay::start();
    let receiver = Receiver::start(SECRET, Clock::System).await;

    // 1. The process dies right after the order is recorded paid: its event is in the outbox,
    //    written in that transaction, never posted (this process posts nothing, so that is sure).
    let start = Start { poll_ms: "0", failpoint: failpoints::AFTER_RESPONSE_STORED, ready: true };
    let mut first = events_server(&db, &provider, &receiver, secret.path(), start).await;
    let client = connect(&first.mcp_url()).await.expect("connects");
    let arguments = json!({"gift_id": "hh-010", "recipient": recipient()});
    let prepared = client.call_tool(request(Some("ana"), "prepare_order", arguments)).await.expect("prepare");
    let draft = prepared.structured_content.clone().unwrap();
    let token = meta_of(&prepared, TOKEN).and_then(Value::as_str).expect("token").to_string();
    let commit = commit_args(draft["draft"]["id"].as_str().unwrap(), "ik_crash", &token);
    let crashed =
        tokio::time::timeout(Duration::from_secs(5), client.call_tool(request(Some("ana"), "commit_order", commit)))
            .await;
    assert!(!matches!(crashed, Ok(Ok(_))), "the server should have died mid-call: {crashed:?}");
    died(&mut first, "after the payment was recorded").await;
    let store = giftgenius_commerce::store::Store::connect(&db.to_string_lossy()).await.expect("open the database");
    let paid = store.orders_with_status(OrderStatusColumn::Paid).await.unwrap();
    assert_eq!(paid.len(), 1, "the order is paid");
    let order = paid[0].id.clone();
    let written = store.order_events_of(&order).await.unwrap();
    assert_eq!((written.len(), written[0].status, written[0].attempts), (1, OutboxStatus::Pending, 0));
    assert!(receiver.seen().is_empty());

    // 2. The next process posts it as it starts (maybe before it serves anything, so not waited
    //    for) and dies as the receiver's 200 arrives, before recording it.
    let start = Start { poll_ms: "50", failpoint: failpoints::AFTER_WEBHOOK_DELIVERED, ready: false };
    let mut second = events_server(&db, &provider, &receiver, secret.path(), start).await;
    receiver.wait_until("the first post", |seen| seen.iter().any(|s| s.answered == 200)).await;
    died(&mut second, "after the receiver took the event").await;
    let unrecorded = store.order_event(&written[0].id).await.unwrap().unwrap();
    assert_eq!(unrecorded.status, OutboxStatus::Pending, "taken by the receiver, not recorded as delivered");

    // 3. A process without failpoints posts it again once the dead one's lease is over.
    let start = Start { poll_ms: "50", failpoint: "", ready: true };
    let _third = events_server(&db, &provider, &receiver, secret.path(), start).await;
    let seen = receiver.wait_until("the event posted again", |seen| seen.len() >= 2).await;
    for _ in 0..1000 {
        if store.order_event(&written[0].id).await.unwrap().is_some_and(|e| e.status == OutboxStatus::Delivered) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let event = store.order_event(&written[0].id).await.unwrap().unwrap();
    assert_eq!(event.status, OutboxStatus::Delivered);
    assert!(seen.iter().all(|s| s.signature_ok && s.request_id == event.id), "the same event both times: {seen:#?}");
    let accepted = receiver.accepted();
    assert_eq!(accepted.len(), 1, "after dedupe by Request-Id, exactly the one event");
    let body = &accepted[&event.id];
    assert_eq!((body["type"].as_str(), body["data"]["id"].as_str()), (Some("order_create"), Some(order.as_str())));
    assert_eq!(provider.charges().await, 1);
}

#[tokio::test]
async fn postgres_two_replicas_post_each_event_once_and_each_orders_events_in_order() {
    let db = TestDb::create().await;
    let provider = std::sync::Arc::new(SandboxPay::start());
    let receiver = Receiver::start(SECRET, Clock::System).await;
    let secret = secret_file(SECRET);
    let replica = || {
        let (url, db_url, secret) = (receiver.url.clone(), db.url.clone(), secret.path().to_path_buf());
        spawn_app_on(&provider, move |c| {
            c.db = db_url;
            with_app_webhook(c, &url, &secret);
        })
    };
    let a = replica().await;
    let b = replica().await;
    // Both replicas' manual clocks stand at the same time.
    receiver.set_clock(a.clock.clone());

    let (first, _) = place(&a, "ana", "hh-010", "ik_pg_1").await;
    let (second, _) = place(&b, "rui", "hh-001", "ik_pg_2").await;
    cancel(&b, "ana", &first).await;
    let (third, _) = place(&a, "rui", "tr-001", "ik_pg_3").await;
    let seen = receiver.wait_until("four events", |seen| seen.len() >= 4).await;
    for order in [&first, &second, &third] {
        events_when(&a, order, "delivered", delivered).await;
    }
    let ids: std::collections::BTreeSet<&str> = seen.iter().map(|s| s.request_id.as_str()).collect();
    assert_eq!((seen.len(), ids.len()), (4, 4), "each event posted once by one of the two workers: {seen:#?}");
    let of_first: Vec<&str> = summary(&seen)
        .iter()
        .filter(|(_, _, id)| *id == first)
        .map(|(kind, _, _)| match kind.as_str() {
            "order_create" => "create",
            _ => "update",
        })
        .collect();
    assert_eq!(of_first, ["create", "update"], "an order's events in the order they happened");
}

#[tokio::test]
async fn a_receiver_that_never_answers_is_cut_off_at_the_timeout_and_tried_again() {
    let (app, receiver) = with_receiver(SECRET, SECRET, |c| {
        c.webhook_poll_ms = 0;
        c.webhook_timeout_ms = 300;
    })
    .await;
    receiver.script([Reply::Hang]);
    let (order, _) = place(&app, "ana", "hh-010", "ik_hang").await;
    let round = app.state.outbox.run_once().await.unwrap();
    assert_eq!((round.claimed, round.retried), (1, 1), "{round:?}");
    let event = app.state.store.order_events_of(&order).await.unwrap().remove(0);
    assert_eq!(event.last_error.as_deref(), Some("timed out"));
    app.clock.advance(Duration::from_secs(3600));
    let round = app.state.outbox.run_once().await.unwrap();
    assert_eq!((round.claimed, round.delivered), (1, 1), "{round:?}");
    assert_eq!(receiver.seen().iter().map(|s| s.answered).collect::<Vec<_>>(), [0, 200]);
}

#[tokio::test]
async fn metrics_show_the_outbox_backlog_and_how_old_it_is() {
    let (app, receiver) = with_receiver(SECRET, SECRET, |_| {}).await;
    receiver.script([Reply::Status(503)]);
    let (order, _) = place(&app, "ana", "hh-010", "ik_backlog").await;
    events_when(&app, &order, "the first attempt failed", |e| {
        e.iter().any(|e| e.attempts == 1 && settled(e, app.clock.now_ms()))
    })
    .await;
    app.clock.advance(Duration::from_secs(5));
    let metrics = || async {
        let text = reqwest::get(format!("{}/metrics", app.local_url)).await.unwrap().text().await.unwrap();
        let value =
            |series: &str| text.lines().find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse::<f64>().ok());
        (value("giftgenius_outbox_backlog"), value("giftgenius_outbox_oldest_age_seconds"))
    };
    let (backlog, age) = metrics().await;
    assert_eq!(backlog, Some(1.0));
    assert!(age.is_some_and(|age| age >= 5.0), "{age:?}");
    // The next attempt (past the back-off) is answered: nothing waits any more.
    app.clock.advance(Duration::from_secs(3600));
    events_when(&app, &order, "the event delivered", delivered).await;
    assert_eq!(metrics().await, (Some(0.0), Some(0.0)));
}
