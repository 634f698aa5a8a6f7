//! Widget tokens that expire (issue 23, item 6): a confirmation, cancel or Delete my data token
//! past its lifetime starts nothing and says so (`CONFIRMATION_EXPIRED`); a fresh token for the
//! same draft or order is the same request under the same idempotency key; a Delete my data token
//! is spent by its first use, and replayed it deletes nothing made since. Time moves on the
//! app's injected clock, never by sleeping.

use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use giftgenius_server::config::Config;
use giftgenius_types::wire::{META_CANCEL_TOKENS, META_DELETE_DATA_TOKEN, META_REPLAYED};
use rmcp::RoleClient;
use rmcp::service::RunningService;
use serde_json::{Value, json};

use crate::postgres::TestDb;
use crate::support::{
    SandboxPay, TOKEN, TestApp, call_as, charges, commit_args, meta_of, orders, spawn_app_on, spawn_app_with,
    with_recipient,
};

const HOUR: Duration = Duration::from_secs(3600);

/// prepare_order for `subject`; returns (draft id, confirmation token).
async fn prepare(client: &RunningService<RoleClient, ()>, subject: &str, gift: &str) -> (String, String) {
    let (result, sc) = call_as(client, subject, "prepare_order", with_recipient(json!({"gift_id": gift}))).await;
    assert_eq!(sc["ok"], true, "{sc}");
    let token = meta_of(&result, TOKEN).and_then(Value::as_str).expect("a confirmation token").to_string();
    (sc["draft"]["id"].as_str().expect("a draft id").to_string(), token)
}

/// The cancel token get_order hands the widget for `order`.
async fn cancel_token(client: &RunningService<RoleClient, ()>, subject: &str, order: &str) -> String {
    let (result, _) = call_as(client, subject, "get_order", json!({"order_id": order})).await;
    meta_of(&result, META_CANCEL_TOKENS).and_then(|m| m[order].as_str()).expect("a cancel token").to_string()
}

/// The Delete my data token list_orders hands the widget.
async fn delete_token(client: &RunningService<RoleClient, ()>, subject: &str) -> String {
    let (result, _) = call_as(client, subject, "list_orders", json!({})).await;
    meta_of(&result, META_DELETE_DATA_TOKEN).and_then(Value::as_str).expect("a delete token").to_string()
}

fn assert_expired(sc: &Value) {
    assert_eq!(sc["ok"], false, "{sc}");
    assert_eq!(sc["error"]["code"], "CONFIRMATION_EXPIRED", "{sc}");
    assert_eq!(sc["error"]["category"], "permission", "{sc}");
    assert_eq!(sc["error"]["retryable"], false, "{sc}");
}

#[tokio::test]
async fn an_expired_confirmation_token_charges_nothing_and_a_fresh_one_for_the_same_draft_is_the_same_request() {
    // Drafts outlive the token here, so what refuses the commit is the token alone.
    let app = spawn_app_with(|c| {
        c.draft_ttl_secs = 4 * 3600;
        c.confirmation_token_ttl_secs = 1800;
    })
    .await;
    let client = app.client().await;
    let (draft, token) = prepare(&client, "u1", "hh-010").await;
    app.clock.advance(Duration::from_secs(1800));

    let (_, expired) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_draft", &token)).await;
    assert_expired(&expired);
    assert_eq!((charges(&app).await, orders(&app).await), (0, 0), "nothing charged, no order");

    // The widget prepares again: the same draft with a fresh token, under the same key.
    let (again, fresh) = prepare(&client, "u1", "hh-010").await;
    assert_eq!(again, draft, "the same request is the same draft while it is valid");
    assert_ne!(fresh, token);
    let (_, placed) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_draft", &fresh)).await;
    assert_eq!(placed["order"]["status"], "paid", "{placed}");
    assert_eq!(charges(&app).await, 1);

    // A retry after the answer was lost, with the token long expired: what happened, no new charge.
    app.clock.advance(2 * HOUR);
    let (late, replay) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_draft", &fresh)).await;
    assert_eq!(replay["order"]["id"], placed["order"]["id"], "{replay}");
    assert_eq!(meta_of(&late, META_REPLAYED), Some(&json!(true)));
    assert_eq!(charges(&app).await, 1);
}

#[tokio::test]
async fn an_expired_cancel_token_refunds_nothing_and_a_fresh_one_cancels() {
    let app = spawn_app_with(|c| c.cancel_window_secs = 4 * 3600).await;
    let client = app.client().await;
    let (draft, token) = prepare(&client, "u1", "hh-010").await;
    let (_, placed) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_1", &token)).await;
    let order = placed["order"]["id"].as_str().expect("an order").to_string();
    let old = cancel_token(&client, "u1", &order).await;
    app.clock.advance(HOUR);

    let cancel = |token: &str| json!({"order_id": order, "idempotency_key": "ck_order", "confirmation_token": token});
    let (_, expired) = call_as(&client, "u1", "cancel_order", cancel(&old)).await;
    assert_expired(&expired);
    assert!(app.provider.refunds().await.is_empty(), "no refund");
    let (_, read) = call_as(&client, "u1", "get_order", json!({"order_id": order})).await;
    assert_eq!(read["order"]["status"], "paid", "{read}");

    let fresh = cancel_token(&client, "u1", &order).await;
    let (_, cancelled) = call_as(&client, "u1", "cancel_order", cancel(&fresh)).await;
    assert_eq!(cancelled["order"]["status"], "cancelled", "{cancelled}");
    assert_eq!(app.provider.refunds().await.len(), 1);
}

/// Drafts `subject` has in the store.
async fn draft_exists(app: &TestApp, subject: &str, draft: &str) -> bool {
    app.state.store.draft(subject, draft).await.expect("the store answers").is_some()
}

/// Delete my data twice with one token, data made in between, then the token past its life.
async fn a_delete_token_is_spent_once_and_never_takes_what_came_after(app: &TestApp) {
    let client = app.client().await;
    let (before, _) = prepare(&client, "u1", "hh-010").await;
    let token = delete_token(&client, "u1").await;

    let (_, first) = call_as(&client, "u1", "delete_my_data", json!({"confirmation_token": token})).await;
    assert_eq!(first["ok"], true, "{first}");
    assert_eq!(first["drafts_deleted"], 1, "{first}");
    assert!(!draft_exists(app, "local:u1", &before).await);

    // Made after the delete, then the old token replayed: the first answer, and the new draft stays.
    let (after, _) = prepare(&client, "u1", "hh-012").await;
    let (_, replayed) = call_as(&client, "u1", "delete_my_data", json!({"confirmation_token": token})).await;
    assert_eq!(replayed, first, "a retry answers what the first use did");
    assert!(draft_exists(app, "local:u1", &after).await, "nothing made after the delete is deleted with it");

    // Past its lifetime the token is refused outright; a fresh one deletes.
    app.clock.advance(HOUR);
    let (_, expired) = call_as(&client, "u1", "delete_my_data", json!({"confirmation_token": token})).await;
    assert_expired(&expired);
    assert!(draft_exists(app, "local:u1", &after).await);
    // The spent mark goes with the token's lifetime.
    app.state.prune().await;
    let (_, still) = call_as(&client, "u1", "delete_my_data", json!({"confirmation_token": token})).await;
    assert_expired(&still);
    let fresh = delete_token(&client, "u1").await;
    assert_ne!(fresh, token, "every list_orders hands out a new token");
    let (_, second) = call_as(&client, "u1", "delete_my_data", json!({"confirmation_token": fresh})).await;
    assert_eq!(second["drafts_deleted"], 1, "{second}");
    assert!(!draft_exists(app, "local:u1", &after).await);
}

#[tokio::test]
async fn a_delete_token_is_spent_once_on_sqlite() {
    a_delete_token_is_spent_once_and_never_takes_what_came_after(&spawn_app_with(|_| {}).await).await;
}

#[tokio::test]
async fn postgres_a_delete_token_is_spent_once() {
    let db = TestDb::create().await;
    let url = db.url.clone();
    let app = spawn_app_on(&Arc::new(SandboxPay::start()), move |c| c.db = url).await;
    a_delete_token_is_spent_once_and_never_takes_what_came_after(&app).await;
}

#[test]
fn token_lifetimes_default_to_an_hour_and_shorter_than_half_an_hour_is_refused_at_parse_time() {
    let config = Config::try_parse_from(["giftgenius-server"]).expect("defaults parse");
    let lifetimes = config.token_lifetimes();
    assert_eq!([lifetimes.confirm, lifetimes.cancel, lifetimes.delete], [HOUR; 3]);
    for flag in ["--confirmation-token-ttl-secs", "--cancel-token-ttl-secs", "--delete-token-ttl-secs"] {
        let error = Config::try_parse_from(["giftgenius-server", flag, "1799"]).expect_err(flag).to_string();
        assert!(error.contains(flag) && error.contains("at least 1800"), "{error}");
        assert!(Config::try_parse_from(["giftgenius-server", flag, "1800"]).is_ok(), "{flag} 1800");
    }
}
