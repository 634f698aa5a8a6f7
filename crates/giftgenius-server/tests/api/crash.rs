//! Crash recovery with real processes: the server binary is started with a failpoint that
//! aborts it mid-commit, then started again on the same database file and the same payment
//! provider (a process of its own, which outlives the crash), and the client retries with the
//! same key. Whatever point it died at, the provider's ledger must show one charge and the
//! database one order; for a cancellation, one refund and the order cancelled.

use crate::support::with_recipient;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use giftgenius_commerce::failpoints;
use giftgenius_commerce::store::Store;
use giftgenius_types::wire::META_CANCEL_TOKENS;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use crate::support::{SandboxPay, ServerProcess, TOKEN, commit_args, connect, meta_of, request, start_server_binary};

async fn start_server(db: &Path, provider: &SandboxPay, failpoint: &str) -> ServerProcess {
    let flags = [
        "--idempotency-lease-ms",
        "2500",
        "--payments-timeout-ms",
        "500",
        "--payments-url",
        &provider.url,
        "--payments-token-file",
        provider.token_file(),
        "--failpoints",
        failpoint,
    ];
    start_server_binary(db, &flags, "warn", Stdio::null()).await
}

async fn call(server: &ServerProcess, tool: &'static str, arguments: Value) -> Result<(CallToolResult, Value), String> {
    call_within(server, tool, arguments, Duration::from_secs(10)).await
}

/// The client keeps retrying a dead connection for a while; a crashed call is judged sooner.
async fn call_within(
    server: &ServerProcess,
    tool: &'static str,
    arguments: Value,
    limit: Duration,
) -> Result<(CallToolResult, Value), String> {
    let client = connect(&server.mcp_url()).await?;
    let params = request(Some("crash-test-user"), tool, arguments);
    let result = tokio::time::timeout(limit, client.call_tool(params))
        .await
        .map_err(|_| "timed out".to_string())?
        .map_err(|e| e.to_string())?;
    let structured = result.structured_content.clone().unwrap_or(Value::Null);
    Ok((result, structured))
}

async fn crash_then_retry(failpoint: &'static str) {
    crash_then_retry_buying(failpoint, json!({"gift_id": "hh-010"})).await;
}

/// [`crash_then_retry`] for what `what` (prepare_order's arguments without the recipient)
/// asks for; returns the paid order.
async fn crash_then_retry_buying(failpoint: &'static str, what: Value) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("giftgenius.db");

    let provider = SandboxPay::start();
    let mut doomed = start_server(&db, &provider, failpoint).await;
    let (prepared, draft) = call(&doomed, "prepare_order", with_recipient(what)).await.expect("prepare");
    let token = meta_of(&prepared, TOKEN).and_then(Value::as_str).expect("token");
    let commit = commit_args(draft["draft"]["id"].as_str().expect("draft id"), "ik_crash", token);

    let outcome = call_within(&doomed, "commit_order", commit.clone(), Duration::from_secs(2)).await;
    assert!(outcome.is_err(), "{failpoint}: the server should have died mid-call, got {outcome:?}");
    let status = doomed.wait();
    assert!(!status.success(), "{failpoint}: the process aborted");

    let restarted = start_server(&db, &provider, "").await;
    let mut final_result = None;
    for _ in 0..40 {
        let (_, sc) = call(&restarted, "commit_order", commit.clone()).await.expect("retry answers");
        if sc["error"]["code"] == "REQUEST_IN_PROGRESS" {
            let wait = sc["error"]["retry_after_ms"].as_u64().unwrap_or(100);
            tokio::time::sleep(Duration::from_millis(wait)).await;
            continue;
        }
        final_result = Some(sc);
        break;
    }
    let sc = final_result.unwrap_or_else(|| panic!("{failpoint}: the retry never got past REQUEST_IN_PROGRESS"));
    assert_eq!(sc["ok"], true, "{failpoint}: {sc}");
    assert_eq!(sc["order"]["status"], "paid", "{failpoint}");

    let store = Store::connect(&db.to_string_lossy()).await.expect("open the database");
    assert_eq!(provider.charges().await, 1, "{failpoint}: exactly one charge");
    assert_eq!(store.order_count().await.unwrap(), 1, "{failpoint}: exactly one order");

    // And one more retry is a plain replay.
    let (_, again) = call(&restarted, "commit_order", commit).await.expect("replay");
    assert_eq!(again.to_string(), sc.to_string(), "{failpoint}");
    drop(restarted);
    sc["order"].clone()
}

/// A basket killed between its one charge and the record: one charge, one paid order with
/// every line, and every line's units held by it.
#[tokio::test]
async fn crash_after_a_basket_was_charged_then_retry_charges_once_with_every_line() {
    let basket = json!({"items": [{"gift_id": "hh-010", "quantity": 2}, {"gift_id": "pp-001"}]});
    let order = crash_then_retry_buying(failpoints::AFTER_PAYMENT_CHARGED, basket).await;
    let lines: Vec<(&str, u64)> = order["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| (l["gift_id"].as_str().unwrap(), l["quantity"].as_u64().unwrap()))
        .collect();
    assert_eq!(lines, [("hh-010", 2), ("pp-001", 1)], "{order}");
}

#[tokio::test]
async fn crash_after_the_key_is_claimed_then_retry_charges_once() {
    crash_then_retry(failpoints::AFTER_KEY_CLAIMED).await;
}

#[tokio::test]
async fn crash_after_the_order_is_created_then_retry_charges_once() {
    crash_then_retry(failpoints::AFTER_ORDER_CREATED).await;
}

#[tokio::test]
async fn crash_after_the_provider_charged_then_retry_charges_once() {
    crash_then_retry(failpoints::AFTER_PAYMENT_CHARGED).await;
}

#[tokio::test]
async fn crash_after_the_response_is_stored_then_retry_replays_it() {
    crash_then_retry(failpoints::AFTER_RESPONSE_STORED).await;
}

/// A paid order's cancellation, crashed at `failpoint`, then retried after a restart with the
/// same key: the provider's ledger must show one refund, and the order is cancelled.
async fn crash_cancel_then_retry(failpoint: &'static str) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("giftgenius.db");
    let provider = SandboxPay::start();

    let (order, cancel_token) = {
        let server = start_server(&db, &provider, "").await;
        let (prepared, draft) =
            call(&server, "prepare_order", with_recipient(json!({"gift_id": "hh-010"}))).await.expect("prepare");
        let token = meta_of(&prepared, TOKEN).and_then(Value::as_str).expect("token");
        let commit = commit_args(draft["draft"]["id"].as_str().expect("draft id"), "ik_paid", token);
        let (_, placed) = call(&server, "commit_order", commit).await.expect("commit");
        let order = placed["order"]["id"].as_str().expect("paid").to_string();
        let (read, _) = call(&server, "get_order", json!({"order_id": order})).await.expect("get_order");
        let cancel_token = meta_of(&read, META_CANCEL_TOKENS).and_then(|t| t[&order].as_str()).expect("a token");
        (order.clone(), cancel_token.to_string())
    };
    let cancel = json!({"order_id": order, "idempotency_key": "ck_crash", "confirmation_token": cancel_token});

    let mut doomed = start_server(&db, &provider, failpoint).await;
    let outcome = call_within(&doomed, "cancel_order", cancel.clone(), Duration::from_secs(2)).await;
    assert!(outcome.is_err(), "{failpoint}: the server should have died mid-call, got {outcome:?}");
    assert!(!doomed.wait().success(), "{failpoint}: the process aborted");

    let restarted = start_server(&db, &provider, "").await;
    let mut answer = None;
    for _ in 0..40 {
        let (_, sc) = call(&restarted, "cancel_order", cancel.clone()).await.expect("retry answers");
        if sc["error"]["code"] == "REQUEST_IN_PROGRESS" {
            tokio::time::sleep(Duration::from_millis(sc["error"]["retry_after_ms"].as_u64().unwrap_or(100))).await;
            continue;
        }
        answer = Some(sc);
        break;
    }
    let sc = answer.unwrap_or_else(|| panic!("{failpoint}: the retry never got past REQUEST_IN_PROGRESS"));
    assert_eq!(sc["order"]["status"], "cancelled", "{failpoint}: {sc}");
    let refunds = provider.refunds().await;
    assert_eq!(refunds.len(), 1, "{failpoint}: exactly one refund");
    assert_eq!(refunds[0].idempotency_key, format!("ggr_{order}"));
    let (_, again) = call(&restarted, "cancel_order", cancel).await.expect("replay");
    assert_eq!(again.to_string(), sc.to_string(), "{failpoint}");
}

#[tokio::test]
async fn crash_after_the_refund_is_recorded_then_retry_refunds_once() {
    crash_cancel_then_retry(failpoints::AFTER_REFUND_RECORDED).await;
}

#[tokio::test]
async fn crash_after_the_provider_refunded_then_retry_refunds_once() {
    crash_cancel_then_retry(failpoints::AFTER_REFUNDED).await;
}
