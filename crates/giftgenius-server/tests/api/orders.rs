//! Orders a person can send and manage (issue 16): delivery details on the draft (widget-only,
//! city and country for the model), field errors per country, the saved address with consent,
//! list_orders, cancel_order with a refund in the provider's ledger (replays, the cut-off, a lost
//! answer finished by a retry and by the reconciler), delete_my_data, retention, and no address
//! or gift message in any log line.

use std::process::Stdio;
use std::time::Duration;

use giftgenius_types::wire::{
    META_CANCEL_TOKENS, META_DELETE_DATA_TOKEN, META_DELIVERIES, META_DELIVERY, META_HTML, META_REPLAYED,
};
use rmcp::RoleClient;
use rmcp::model::CallToolResult;
use rmcp::service::RunningService;
use serde_json::{Value, json};
use sqlx::{Connection, Row};

use crate::support::{
    SandboxPay, TOKEN, TestApp, call_as, charges, commit_args, connect, meta_of, recipient, request, spawn_app,
    spawn_app_with, start_server_binary, text_of,
};

const MESSAGE: &str = "Feliz aniversário, Ana! Com carinho, Rui";

/// A paid order for `subject` (prepare with `arguments`, commit under `key`); returns its id.
async fn place(
    app: &TestApp,
    client: &RunningService<RoleClient, ()>,
    subject: &str,
    arguments: Value,
    key: &str,
) -> String {
    let (prepared, draft) = call_as(client, subject, "prepare_order", arguments).await;
    assert_eq!(draft["ok"], true, "{draft}");
    let token = meta_of(&prepared, TOKEN).and_then(Value::as_str).expect("token").to_string();
    let draft_id = draft["draft"]["id"].as_str().unwrap();
    let (_, sc) = call_as(client, subject, "commit_order", commit_args(draft_id, key, &token)).await;
    assert_eq!(sc["order"]["status"], "paid", "{sc}");
    let _ = app;
    sc["order"]["id"].as_str().unwrap().to_string()
}

fn lisbon_order(gift: &str) -> Value {
    json!({"gift_id": gift, "recipient": recipient(), "gift_message": MESSAGE})
}

/// The cancel token get_order hands the widget for `order`.
async fn cancel_token(client: &RunningService<RoleClient, ()>, subject: &str, order: &str) -> Option<String> {
    let (result, _) = call_as(client, subject, "get_order", json!({"order_id": order})).await;
    meta_of(&result, META_CANCEL_TOKENS).and_then(|m| m[order].as_str()).map(str::to_string)
}

fn cancel_args(order: &str, key: &str, token: &str) -> Value {
    json!({"order_id": order, "idempotency_key": key, "confirmation_token": token})
}

/// The text and structuredContent the model reads, as one string.
fn model_view(result: &CallToolResult, structured: &Value) -> String {
    format!("{}\n{}", text_of(result), structured)
}

/// A reloaded card asks for its draft by id: the same draft, a fresh token and the same widget
/// `_meta` as prepare_order; nothing of anyone else's, nothing expired; the fresh token commits
/// once, under the key kept for the draft.
#[tokio::test]
async fn reopen_order_draft_gives_the_same_draft_a_fresh_token_and_the_same_widget_meta() {
    let app = spawn_app().await;
    let client = app.client().await;
    let (prepared, sc) = call_as(&client, "u1", "prepare_order", lisbon_order("hh-010")).await;
    let draft_id = sc["draft"]["id"].as_str().unwrap().to_string();
    let first_token = meta_of(&prepared, TOKEN).and_then(Value::as_str).unwrap().to_string();
    let (reopened, again) = call_as(&client, "u1", "reopen_order_draft", json!({"draft_id": draft_id})).await;
    assert_eq!(reopened.is_error, Some(false), "{again}");
    assert_eq!(again["tool"], "reopen_order_draft");
    assert_eq!(again["draft"], sc["draft"], "the same draft: id, price, details, expiry");
    let token = meta_of(&reopened, TOKEN).and_then(Value::as_str).expect("a fresh token").to_string();
    assert_ne!(token, first_token, "a fresh token");
    assert_eq!(
        meta_of(&reopened, META_DELIVERY),
        meta_of(&prepared, META_DELIVERY),
        "the full details, for the widget"
    );
    assert_eq!(meta_of(&reopened, META_HTML), meta_of(&prepared, META_HTML), "the same card");
    let seen = model_view(&reopened, &again);
    for private in ["Ana Silva", "Rua Augusta", "1100-053", "Feliz"] {
        assert!(!seen.contains(private), "the model reads {private:?}: {seen}");
    }

    // Another person's draft, or one that never was: the same answer, nothing revealed.
    let (_, theirs) = call_as(&client, "u2", "reopen_order_draft", json!({"draft_id": draft_id})).await;
    let (_, none) = call_as(&client, "u1", "reopen_order_draft", json!({"draft_id": "drf_nothing"})).await;
    assert_eq!(theirs["error"]["code"], "DRAFT_EXPIRED", "{theirs}");
    assert_eq!(none["error"]["code"], "DRAFT_EXPIRED", "{none}");
    let without_id = |sc: &Value, id: &str| sc["error"]["message"].as_str().unwrap().replace(id, "ID");
    assert_eq!(without_id(&theirs, &draft_id), without_id(&none, "drf_nothing"), "the same words either way");
    assert!(!theirs.to_string().contains("Lisboa") && !theirs.to_string().contains("hh-010"), "{theirs}");

    // The fresh token commits, once.
    let (_, order) = call_as(&client, "u1", "commit_order", commit_args(&draft_id, "ik_reopen", &token)).await;
    assert_eq!(order["order"]["status"], "paid", "{order}");
    let (_, replay) = call_as(&client, "u1", "commit_order", commit_args(&draft_id, "ik_reopen", &token)).await;
    assert_eq!(replay["order"]["id"], order["order"]["id"]);
    assert_eq!(charges(&app).await, 1, "one charge");

    // Past its 30 minutes the draft is not shown again.
    app.clock.advance(Duration::from_secs(31 * 60));
    let (expired, late) = call_as(&client, "u1", "reopen_order_draft", json!({"draft_id": draft_id})).await;
    assert_eq!(expired.is_error, Some(true));
    assert_eq!(late["error"]["code"], "DRAFT_EXPIRED", "{late}");
    assert_eq!(meta_of(&expired, TOKEN), None, "no token for an expired draft");
}

#[tokio::test]
async fn the_model_reads_city_and_country_while_the_widget_gets_every_delivery_detail() {
    let app = spawn_app().await;
    let client = app.client().await;
    let (result, sc) = call_as(&client, "u1", "prepare_order", lisbon_order("hh-010")).await;
    assert_eq!(sc["draft"]["destination"], json!({"city": "Lisboa", "country": "PT"}), "{sc}");
    assert_eq!(sc["draft"]["has_gift_message"], true);
    let seen = model_view(&result, &sc);
    assert!(seen.contains("Lisboa, PT"), "{seen}");
    for private in ["Ana Silva", "Rua Augusta", "1100-053", "3º esq.", "Feliz"] {
        assert!(!seen.contains(private), "the model reads {private:?}: {seen}");
    }
    let delivery = meta_of(&result, META_DELIVERY).expect("delivery details for the widget");
    assert_eq!(delivery["recipient"]["name"], "Ana Silva");
    assert_eq!(delivery["recipient"]["address"]["postal_code"], "1100-053");
    assert_eq!(delivery["gift_message"], MESSAGE);
    assert_eq!(delivery["save_address"], false);

    // Placed, the order reads the same way: city and country for the model, the rest in _meta.
    let token = meta_of(&result, TOKEN).and_then(Value::as_str).unwrap();
    let (placed, order) =
        call_as(&client, "u1", "commit_order", commit_args(sc["draft"]["id"].as_str().unwrap(), "ik_1", token)).await;
    let seen = model_view(&placed, &order);
    assert!(seen.contains("to Lisboa, PT"), "{seen}");
    assert!(!seen.contains("Rua Augusta") && !seen.contains("Feliz"), "{seen}");
    let id = order["order"]["id"].as_str().unwrap();
    assert_eq!(meta_of(&placed, META_DELIVERIES).unwrap()[id]["recipient"]["address"]["line1"], "Rua Augusta 100");
    assert!(order["order"]["cancellable_until"].is_string(), "{order}");
}

#[tokio::test]
async fn the_no_wasm_card_shows_every_delivery_detail_and_the_list_a_cancel_button_but_no_token() {
    let app = spawn_app().await;
    let client = app.client().await;
    let (result, _) = call_as(&client, "u1", "prepare_order", lisbon_order("hh-010")).await;
    // The server-rendered card (widget-only `_meta`, for hosts that refuse WebAssembly) has the
    // full details in its form, so the person can check and edit them there too.
    let html = meta_of(&result, META_HTML).and_then(Value::as_str).expect("fallback HTML");
    for detail in ["Ana Silva", "Rua Augusta 100", "1100-053", "Lisboa", "Feliz"] {
        assert!(html.contains(detail), "the card lacks {detail:?}");
    }
    assert!(html.contains(r#"name="recipient.address.postal_code""#), "an editable field per part");
    let token = meta_of(&result, TOKEN).and_then(Value::as_str).unwrap();
    assert!(!html.contains(token), "the confirmation token never reaches markup");

    let draft = result.structured_content.as_ref().unwrap()["draft"]["id"].as_str().unwrap().to_string();
    call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_html", token)).await;
    let (list, _) = call_as(&client, "u1", "list_orders", json!({})).await;
    let html = meta_of(&list, META_HTML).and_then(Value::as_str).expect("fallback HTML");
    assert_eq!(html.matches(r#"data-action="ask-cancel-order""#).count(), 1, "a Cancel button for the paid order");
    assert!(html.contains(r#"data-action="ask-delete-data""#));
    for (_, token) in meta_of(&list, META_CANCEL_TOKENS).and_then(Value::as_object).expect("cancel tokens") {
        assert!(!html.contains(token.as_str().unwrap()), "a cancel token in the markup");
    }
}

#[tokio::test]
async fn delivery_errors_name_each_part_a_country_requires_without_echoing_the_address() {
    let app = spawn_app().await;
    let client = app.client().await;
    let cases = [
        (
            json!({"name": "Jo", "address": {"line1": "1 Main St", "city": "Austin", "postal_code": "7870", "country": "US"}}),
            vec![("recipient.address.region", "is required in US"), ("recipient.address.postal_code", "5 digits")],
        ),
        (
            json!({"name": "Jo", "address": {"line1": "10 Downing St", "city": "London", "postal_code": "SW1A1AA", "country": "GB"}}),
            vec![("recipient.address.postal_code", "UK postcode")],
        ),
        (
            json!({"name": " ", "address": {"line1": "Unter den Linden 1", "city": "Berlin", "country": "DE"}}),
            vec![("recipient.name", "is required"), ("recipient.address.postal_code", "is required in DE")],
        ),
        (
            json!({"name": "Jo", "address": {"line1": "Av. Paulista 1", "city": "São Paulo", "region": "XX", "postal_code": "01310-100", "country": "BR"}}),
            vec![("recipient.address.region", "state or province of BR")],
        ),
        (
            json!({"name": "Jo", "address": {"line1": "1 Rue", "city": "Paris", "postal_code": "75001", "country": "FX"}}),
            vec![("recipient.address.country", "ISO 3166-1 alpha-2")],
        ),
    ];
    for (recipient, expected) in cases {
        let (result, sc) =
            call_as(&client, "u1", "prepare_order", json!({"gift_id": "hh-010", "recipient": recipient})).await;
        assert_eq!(sc["error"]["code"], "VALIDATION_ERROR", "{sc}");
        let errors = sc["error"]["field_errors"].as_array().unwrap();
        assert_eq!(errors.len(), expected.len(), "{sc}");
        for (field, words) in expected {
            let found = errors.iter().find(|e| e["field"] == field).unwrap_or_else(|| panic!("{field} in {sc}"));
            assert!(found["message"].as_str().unwrap().contains(words), "{found}");
        }
        assert_eq!(sc["error"]["attempted"]["recipient"], "(hidden)", "{sc}");
        assert!(!model_view(&result, &sc).contains("Main St") && !model_view(&result, &sc).contains("Downing"));
    }
    let (_, sc) =
        call_as(&client, "u1", "prepare_order", json!({"gift_id": "hh-010", "gift_message": "x".repeat(301)})).await;
    assert_eq!(sc["error"]["field_errors"][0]["field"], "gift_message", "{sc}");
}

#[tokio::test]
async fn a_draft_without_a_recipient_cannot_be_committed_and_charges_nothing() {
    let app = spawn_app().await;
    let client = app.client().await;
    let (result, sc) = call_as(&client, "u1", "prepare_order", json!({"gift_id": "hh-010"})).await;
    assert!(sc["draft"].get("destination").is_none(), "{sc}");
    assert!(text_of(&result).contains("no recipient yet"), "{}", text_of(&result));
    let token = meta_of(&result, TOKEN).and_then(Value::as_str).unwrap();
    let (_, refused) =
        call_as(&client, "u1", "commit_order", commit_args(sc["draft"]["id"].as_str().unwrap(), "ik_1", token)).await;
    assert_eq!(refused["error"]["code"], "VALIDATION_ERROR", "{refused}");
    assert_eq!(refused["error"]["field_errors"][0]["field"], "recipient");
    assert_eq!(charges(&app).await, 0);
}

#[tokio::test]
async fn the_same_key_with_another_address_is_idempotency_key_reused() {
    let app = spawn_app().await;
    let client = app.client().await;
    let (first, a) = call_as(&client, "u1", "prepare_order", lisbon_order("hh-010")).await;
    let mut elsewhere = lisbon_order("hh-010");
    elsewhere["recipient"]["address"]["line1"] = json!("Rua do Ouro 7");
    let (second, b) = call_as(&client, "u1", "prepare_order", elsewhere).await;
    assert_ne!(a["draft"]["id"], b["draft"]["id"], "another address is another draft");
    let token_a = meta_of(&first, TOKEN).and_then(Value::as_str).unwrap();
    let token_b = meta_of(&second, TOKEN).and_then(Value::as_str).unwrap();
    let (_, ok) =
        call_as(&client, "u1", "commit_order", commit_args(a["draft"]["id"].as_str().unwrap(), "ik_same", token_a))
            .await;
    assert_eq!(ok["ok"], true, "{ok}");
    let (_, reused) =
        call_as(&client, "u1", "commit_order", commit_args(b["draft"]["id"].as_str().unwrap(), "ik_same", token_b))
            .await;
    assert_eq!(reused["error"]["code"], "IDEMPOTENCY_KEY_REUSED", "{reused}");
    assert_eq!(charges(&app).await, 1);
}

#[tokio::test]
async fn an_address_is_saved_only_with_consent_and_then_offered_on_the_next_draft() {
    let app = spawn_app().await;
    let client = app.client().await;
    place(&app, &client, "u1", lisbon_order("hh-010"), "ik_1").await;
    let (_, none) = call_as(&client, "u1", "prepare_order", json!({"gift_id": "hh-012"})).await;
    assert!(none["draft"].get("destination").is_none(), "no consent, nothing saved: {none}");

    let mut consent = lisbon_order("hh-010");
    consent["save_address"] = json!(true);
    consent["quantity"] = json!(2);
    place(&app, &client, "u1", consent, "ik_2").await;
    let (result, offered) = call_as(&client, "u1", "prepare_order", json!({"gift_id": "hh-012"})).await;
    assert_eq!(offered["draft"]["destination"], json!({"city": "Lisboa", "country": "PT"}), "{offered}");
    let delivery = meta_of(&result, META_DELIVERY).unwrap();
    assert_eq!(delivery["from_saved_address"], true);
    assert_eq!(delivery["recipient"]["name"], "Ana Silva");
    assert!(delivery.get("gift_message").is_none(), "a message is never saved");
    // Another account does not get it.
    let (_, other) = call_as(&client, "u2", "prepare_order", json!({"gift_id": "hh-012"})).await;
    assert!(other["draft"].get("destination").is_none(), "{other}");
}

#[tokio::test]
async fn list_orders_shows_only_my_orders_newest_first_page_by_page() {
    let app = spawn_app().await;
    let client = app.client().await;
    let mut mine = Vec::new();
    for (n, gift) in ["hh-010", "hh-012", "tr-001"].into_iter().enumerate() {
        mine.push(place(&app, &client, "u1", lisbon_order(gift), &format!("ik_{n}")).await);
        app.clock.advance(Duration::from_secs(1));
    }
    let theirs = place(&app, &client, "u2", lisbon_order("hh-001"), "ik_x").await;

    let (result, page1) = call_as(&client, "u1", "list_orders", json!({"limit": 2})).await;
    assert_eq!(result.is_error, Some(false));
    let ids: Vec<&str> = page1["orders"].as_array().unwrap().iter().map(|o| o["id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec![mine[2].as_str(), mine[1].as_str()], "newest first");
    let cursor = page1["next_cursor"].as_str().expect("another page").to_string();
    let tokens = meta_of(&result, META_CANCEL_TOKENS).unwrap();
    assert!(tokens[&mine[2]].is_string() && tokens[&mine[1]].is_string(), "{tokens}");
    assert!(meta_of(&result, META_DELETE_DATA_TOKEN).unwrap().is_string());
    assert_eq!(meta_of(&result, META_DELIVERIES).unwrap()[&mine[2]]["recipient"]["name"], "Ana Silva");
    assert!(!model_view(&result, &page1).contains("Rua Augusta"));
    assert!(!page1.to_string().contains(&theirs));

    let (_, page2) = call_as(&client, "u1", "list_orders", json!({"limit": 2, "cursor": cursor})).await;
    let ids: Vec<&str> = page2["orders"].as_array().unwrap().iter().map(|o| o["id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec![mine[0].as_str()]);
    assert!(page2.get("next_cursor").is_none(), "{page2}");

    let (_, other) = call_as(&client, "u2", "list_orders", json!({})).await;
    assert_eq!(other["orders"].as_array().unwrap().len(), 1);
    assert_eq!(other["orders"][0]["id"], theirs.as_str());
    let (_, junk) = call_as(&client, "u1", "list_orders", json!({"cursor": "zz"})).await;
    assert_eq!(junk["error"]["field_errors"][0]["field"], "cursor", "{junk}");
}

#[tokio::test]
async fn cancel_needs_the_widget_token_refunds_once_and_replays() {
    let app = spawn_app().await;
    let client = app.client().await;
    let order = place(&app, &client, "u1", lisbon_order("hh-010"), "ik_1").await;
    let token = cancel_token(&client, "u1", &order).await.expect("a cancel token for a paid order");

    let (_, unconfirmed) =
        call_as(&client, "u1", "cancel_order", json!({"order_id": order, "idempotency_key": "ck_1"})).await;
    assert_eq!(unconfirmed["error"]["code"], "CONFIRMATION_REQUIRED", "{unconfirmed}");
    let (_, stolen) = call_as(&client, "u2", "cancel_order", cancel_args(&order, "ck_1", &token)).await;
    assert_eq!(stolen["error"]["code"], "CONFIRMATION_REQUIRED", "another account's token: {stolen}");
    assert!(app.provider.refunds().await.is_empty());

    let (first, cancelled) = call_as(&client, "u1", "cancel_order", cancel_args(&order, "ck_1", &token)).await;
    assert_eq!(cancelled["order"]["status"], "cancelled", "{cancelled}");
    assert_eq!(cancelled["order"]["refund"]["status"], "succeeded");
    assert!(text_of(&first).contains("cancelled and refunded"), "{}", text_of(&first));
    let refunds = app.provider.refunds().await;
    assert_eq!(refunds.len(), 1);
    let charge = app.provider.ledger().await.into_iter().find(|c| c.id == refunds[0].charge).expect("the charge");
    assert_eq!(refunds[0].amount, charge.amount, "all of it back");
    assert_eq!(refunds[0].idempotency_key, format!("ggr_{order}"));

    let (again, replay) = call_as(&client, "u1", "cancel_order", cancel_args(&order, "ck_1", &token)).await;
    assert_eq!(replay.to_string(), cancelled.to_string(), "the second cancel replays the first answer");
    assert_eq!(meta_of(&again, META_REPLAYED), Some(&json!(true)));
    let (_, other_key) = call_as(&client, "u1", "cancel_order", cancel_args(&order, "ck_2", &token)).await;
    assert_eq!(other_key["order"]["status"], "cancelled", "{other_key}");
    assert_eq!(app.provider.refunds().await.len(), 1, "one refund, whatever the keys");
    assert_eq!(cancel_token(&client, "u1", &order).await, None, "nothing left to cancel");
    // Its stock is free again, and the model reads the refund.
    let (got, read) = call_as(&client, "u1", "get_order", json!({"order_id": order})).await;
    assert_eq!(read["order"]["status"], "cancelled");
    assert!(text_of(&got).contains("Refund rfd_"), "{}", text_of(&got));
}

#[tokio::test]
async fn after_the_cut_off_a_cancel_is_a_business_error_saying_why() {
    let app = spawn_app_with(|c| c.cancel_window_secs = 600).await;
    let client = app.client().await;
    let order = place(&app, &client, "u1", lisbon_order("hh-010"), "ik_1").await;
    let token = cancel_token(&client, "u1", &order).await.unwrap();
    app.clock.advance(Duration::from_secs(601));
    assert_eq!(cancel_token(&client, "u1", &order).await, None, "no token after the cut-off");
    let (_, read) = call_as(&client, "u1", "get_order", json!({"order_id": order})).await;
    assert!(read["order"].get("cancellable_until").is_none(), "{read}");
    let (result, late) = call_as(&client, "u1", "cancel_order", cancel_args(&order, "ck_1", &token)).await;
    assert_eq!(late["error"]["code"], "ORDER_NOT_CANCELLABLE", "{late}");
    assert_eq!(late["error"]["category"], "business");
    assert!(text_of(&result).contains("cancellation window closed"), "{}", text_of(&result));
    assert!(app.provider.refunds().await.is_empty());
    let (_, still) = call_as(&client, "u1", "get_order", json!({"order_id": order})).await;
    assert_eq!(still["order"]["status"], "paid");
}

#[tokio::test]
async fn a_refund_whose_answer_was_lost_is_finished_by_a_retry_or_by_the_reconciler() {
    let app = spawn_app_with(|c| c.payments_timeout_ms = 500).await;
    let client = app.client().await;
    let retried = place(&app, &client, "u1", lisbon_order("hh-010"), "ik_1").await;
    let left = place(&app, &client, "u1", lisbon_order("hh-012"), "ik_2").await;

    app.provider.set_faults("timeout*1").await;
    let token = cancel_token(&client, "u1", &retried).await.unwrap();
    let (_, lost) = call_as(&client, "u1", "cancel_order", cancel_args(&retried, "ck_1", &token)).await;
    assert_eq!(lost["error"]["code"], "PAYMENT_PROVIDER_UNAVAILABLE", "{lost}");
    assert_eq!(app.provider.refunds().await.len(), 1, "refunded; the answer was lost");
    let (_, retry) = call_as(&client, "u1", "cancel_order", cancel_args(&retried, "ck_1", &token)).await;
    assert_eq!(retry["order"]["status"], "cancelled", "{retry}");
    assert_eq!(app.provider.refunds().await.len(), 1, "the retry found the same refund");

    app.provider.set_faults("timeout*1").await;
    let token = cancel_token(&client, "u1", &left).await.unwrap();
    let (_, lost) = call_as(&client, "u1", "cancel_order", cancel_args(&left, "ck_2", &token)).await;
    assert_eq!(lost["error"]["code"], "PAYMENT_PROVIDER_UNAVAILABLE", "{lost}");
    // Nobody retries; the cut-off passes; the reconciler finishes what the person decided.
    app.clock.advance(Duration::from_secs(7200));
    let report = app.state.reconciler.run_once().await.unwrap();
    assert_eq!((report.refunds_examined, report.refunded), (1, 1), "{report:?}");
    let (_, read) = call_as(&client, "u1", "get_order", json!({"order_id": left})).await;
    assert_eq!(read["order"]["status"], "cancelled", "{read}");
    assert_eq!(app.provider.refunds().await.len(), 2);
    let (_, late_retry) = call_as(&client, "u1", "cancel_order", cancel_args(&left, "ck_2", &token)).await;
    assert_eq!(late_retry["order"]["status"], "cancelled", "{late_retry}");
    assert_eq!(app.provider.refunds().await.len(), 2);
}

/// A count from the app's database: a SQLite file, or a PostgreSQL URL.
async fn count(db: &str, sql: &str, bind: &str) -> i64 {
    let sql = sqlx::AssertSqlSafe(sql.to_string());
    if db.starts_with("postgres") {
        let mut conn = sqlx::PgConnection::connect(db).await.unwrap();
        let n: i64 = sqlx::query(sql).bind(bind).fetch_one(&mut conn).await.unwrap().get(0);
        conn.close().await.unwrap();
        return n;
    }
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{db}")).await.unwrap();
    let n: i64 = sqlx::query(sql).bind(bind).fetch_one(&mut conn).await.unwrap().get(0);
    conn.close().await.unwrap();
    n
}

#[tokio::test]
async fn delete_my_data_erases_personal_data_and_keeps_the_financial_records() {
    let mut db = String::new();
    let app = spawn_app_with(|c| db = c.db.clone()).await;
    let client = app.client().await;
    let mut consent = lisbon_order("hh-010");
    consent["save_address"] = json!(true);
    let kept = place(&app, &client, "u1", consent, "ik_1").await;
    let cancelled = place(&app, &client, "u1", lisbon_order("hh-012"), "ik_2").await;
    let token = cancel_token(&client, "u1", &cancelled).await.unwrap();
    call_as(&client, "u1", "cancel_order", cancel_args(&cancelled, "ck_1", &token)).await;
    let _ = call_as(&client, "u1", "prepare_order", json!({"gift_id": "tr-001"})).await;
    let theirs = place(&app, &client, "u2", lisbon_order("hh-001"), "ik_x").await;

    let (_, refused) = call_as(&client, "u1", "delete_my_data", json!({})).await;
    assert_eq!(refused["error"]["code"], "CONFIRMATION_REQUIRED", "{refused}");
    let (listed, _) = call_as(&client, "u1", "list_orders", json!({})).await;
    let delete_token = meta_of(&listed, META_DELETE_DATA_TOKEN).and_then(Value::as_str).unwrap().to_string();
    let (_, not_theirs) = call_as(&client, "u2", "delete_my_data", json!({"confirmation_token": delete_token})).await;
    assert_eq!(not_theirs["error"]["code"], "CONFIRMATION_REQUIRED", "a token is for one account");

    let (result, deleted) = call_as(&client, "u1", "delete_my_data", json!({"confirmation_token": delete_token})).await;
    assert_eq!(deleted["ok"], true, "{deleted}");
    assert_eq!(deleted["saved_addresses_deleted"], 1);
    assert_eq!(deleted["drafts_deleted"], 3);
    assert_eq!(deleted["idempotency_keys_deleted"], 3, "two commits and one cancel");
    assert_eq!(deleted["orders_anonymized"], 2);
    assert_eq!(deleted["financial_records_kept"], 3, "two orders and one refund");
    assert_eq!(deleted["financial_records_retention_days"], 3650);
    assert!(text_of(&result).contains("anonymized"), "{}", text_of(&result));

    let subject = "local:u1";
    for (table, column) in [
        ("saved_addresses", "subject"),
        ("drafts", "subject"),
        ("idempotency_keys", "subject"),
        ("orders", "subject"),
        ("refunds", "subject"),
    ] {
        assert_eq!(
            count(&db, &format!("SELECT COUNT(*) FROM {table} WHERE {column} = $1"), subject).await,
            0,
            "{table}"
        );
    }
    for order in [&kept, &cancelled] {
        let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{db}")).await.unwrap();
        let row = sqlx::query("SELECT subject, delivery, destination_city, destination_country, total_minor, charge_id, status FROM orders WHERE id = $1")
            .bind(order.as_str())
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(row.get::<String, _>(0), "erased");
        assert_eq!(row.get::<Option<String>, _>(1), None, "no recipient, address or message");
        assert_eq!(row.get::<Option<String>, _>(2), None, "no city");
        assert_eq!(row.get::<Option<String>, _>(3).as_deref(), Some("PT"), "the country stays (tax)");
        assert!(row.get::<i64, _>(4) > 0 && row.get::<Option<String>, _>(5).is_some(), "amount and charge stay");
        conn.close().await.unwrap();
    }
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM refunds WHERE order_id = $1 AND subject = 'erased'", &cancelled).await,
        1
    );
    let (_, after) = call_as(&client, "u1", "list_orders", json!({})).await;
    assert_eq!(after["orders"], json!([]), "{after}");
    let (_, untouched) = call_as(&client, "u2", "get_order", json!({"order_id": theirs})).await;
    assert_eq!(untouched["order"]["destination"]["city"], "Lisboa", "another account keeps its data");
    assert_eq!(app.provider.refunds().await.len(), 1, "deleting data moves no money");
}

#[tokio::test]
async fn retention_anonymizes_old_orders_then_deletes_financial_records_and_unused_addresses() {
    let mut db = String::new();
    let app = spawn_app_with(|c| db = c.db.clone()).await;
    retention_passes(&app, &db).await;
}

/// A year on, an order's personal data is gone (its refund's account too) and its saved
/// address; ten more, the financial records. `db` is the app's database (SQLite or PostgreSQL).
pub(crate) async fn retention_passes(app: &TestApp, db: &str) {
    let db = db.to_string();
    let client = app.client().await;
    let mut consent = lisbon_order("hh-010");
    consent["save_address"] = json!(true);
    let order = place(app, &client, "u1", consent, "ik_1").await;
    let token = cancel_token(&client, "u1", &order).await.unwrap();
    call_as(&client, "u1", "cancel_order", cancel_args(&order, "ck_1", &token)).await;

    app.clock.advance(Duration::from_secs(366 * 24 * 3600));
    app.state.prune().await;
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM orders WHERE id = $1 AND subject = 'erased' AND delivery IS NULL", &order)
            .await,
        1
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM saved_addresses WHERE subject = $1", "local:u1").await, 0);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM refunds WHERE order_id = $1", &order).await, 1, "refunds stay longer");
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM refunds WHERE order_id = $1 AND subject = 'erased'", &order).await,
        1,
        "a refund no longer names the account"
    );

    app.clock.advance(Duration::from_secs(3650 * 24 * 3600));
    app.state.prune().await;
    assert_eq!(count(&db, "SELECT COUNT(*) FROM orders WHERE id = $1", &order).await, 0);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM refunds WHERE order_id = $1", &order).await, 0);
}

#[tokio::test]
async fn the_operator_command_deletes_one_accounts_data() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("giftgenius.db");
    let provider = SandboxPay::start();
    {
        let server = start_server_binary(&db, &provider.app_flags(), "warn", Stdio::null()).await;
        let client = connect(&server.mcp_url()).await.unwrap();
        let prepared = client.call_tool(request(Some("u9"), "prepare_order", lisbon_order("hh-010"))).await.unwrap();
        let token = meta_of(&prepared, TOKEN).and_then(Value::as_str).unwrap();
        let draft = prepared.structured_content.as_ref().unwrap()["draft"]["id"].as_str().unwrap().to_string();
        let placed =
            client.call_tool(request(Some("u9"), "commit_order", commit_args(&draft, "ik_1", token))).await.unwrap();
        assert_eq!(placed.structured_content.unwrap()["order"]["status"], "paid");
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_giftgenius-server"))
        .args(["delete-my-data", "--db", &db.to_string_lossy(), "--subject", "local:u9"])
        .output()
        .expect("the command runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(report["orders_anonymized"], 1, "{report}");
    assert_eq!(report["drafts_deleted"], 1, "{report}");
    assert_eq!(count(&db.to_string_lossy(), "SELECT COUNT(*) FROM orders WHERE subject = $1", "erased").await, 1);
}

#[tokio::test]
async fn no_address_or_gift_message_reaches_any_log_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("giftgenius.db");
    let log_path = dir.path().join("server.log");
    let provider = SandboxPay::start();
    let log = std::fs::File::create(&log_path).unwrap();
    let server = start_server_binary(&db, &provider.app_flags(), "trace", Stdio::from(log)).await;
    let client = connect(&server.mcp_url()).await.unwrap();
    let mut consent = lisbon_order("hh-010");
    consent["save_address"] = json!(true);
    let prepared = client.call_tool(request(Some("u1"), "prepare_order", consent)).await.unwrap();
    let token = meta_of(&prepared, TOKEN).and_then(Value::as_str).unwrap();
    let draft = prepared.structured_content.as_ref().unwrap()["draft"]["id"].as_str().unwrap().to_string();
    let placed =
        client.call_tool(request(Some("u1"), "commit_order", commit_args(&draft, "ik_1", token))).await.unwrap();
    let order = placed.structured_content.unwrap()["order"]["id"].as_str().unwrap().to_string();
    let listed = client.call_tool(request(Some("u1"), "list_orders", json!({}))).await.unwrap();
    let cancel = meta_of(&listed, META_CANCEL_TOKENS).unwrap()[&order].as_str().unwrap().to_string();
    client.call_tool(request(Some("u1"), "cancel_order", cancel_args(&order, "ck_1", &cancel))).await.unwrap();
    let bad = json!({"gift_id": "hh-010", "gift_message": MESSAGE, "recipient": {"name": "Ana Silva",
        "address": {"line1": "Rua Augusta 100", "city": "Lisboa", "postal_code": "999", "country": "PT"}}});
    client.call_tool(request(Some("u1"), "prepare_order", bad)).await.unwrap();
    drop(client);
    drop(server);
    let text = std::fs::read_to_string(&log_path).unwrap();
    assert!(text.contains("order cancelled and refunded"), "the log ran at trace level");
    for private in ["Ana Silva", "Rua Augusta", "1100-053", "3º esq", "Feliz", "carinho"] {
        assert!(!text.contains(private), "{private:?} in the log");
    }
}
