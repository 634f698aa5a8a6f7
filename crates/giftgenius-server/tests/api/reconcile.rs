//! The reconciler: orders left pending (the provider's answer lost, nobody retrying) are settled
//! from the provider's own record: paid with the one charge, declined, or abandoned with their
//! stock released; the key then answers consistently; keys of pending orders are never pruned;
//! it runs on a schedule and as `giftgenius-server reconcile`.

use crate::support::with_recipient;
use giftgenius_commerce::order::Order;
use std::process::Stdio;
use std::time::Duration;

use giftgenius_commerce::charge::{charge_description, provider_key};
use giftgenius_commerce::store::{OrderStatusColumn, Store};
use giftgenius_sandbox_pay::api::{ChargeRequest, ChargeStatus};
use giftgenius_server::checkout::reconcile::ReconcileReport;
use giftgenius_types::wire::META_REPLAYED;
use serde_json::{Value, json};

use crate::checkout::app_with_faults;
use crate::support::{
    SandboxPay, TOKEN, TestApp, call_as, charges, commit_args, connect, meta_of, prepare, reconcile_command, request,
    spawn_app_with, start_server_binary,
};

/// Longer than the default window (600 s).
const PAST_THE_WINDOW: Duration = Duration::from_secs(11 * 60);

async fn pending(app: &TestApp) -> Vec<Order> {
    app.state.store.orders_with_status(OrderStatusColumn::PendingPayment).await.unwrap()
}

async fn reconcile(app: &TestApp) -> ReconcileReport {
    app.state.reconciler.run_once().await.expect("a reconcile pass")
}

/// A commit of `gift` × `quantity` by `subject` under `key` that the provider does not finish;
/// returns its answer.
async fn unfinished_commit(app: &TestApp, subject: &str, gift: &str, quantity: u32, key: &str) -> (Value, Value) {
    let client = app.client().await;
    let (prepared, draft) =
        call_as(&client, subject, "prepare_order", with_recipient(json!({"gift_id": gift, "quantity": quantity})))
            .await;
    assert_eq!(draft["ok"], true, "{draft}");
    let token = meta_of(&prepared, TOKEN).and_then(Value::as_str).unwrap();
    let args = commit_args(draft["draft"]["id"].as_str().unwrap(), key, token);
    let (_, answer) = call_as(&client, subject, "commit_order", args.clone()).await;
    assert_eq!(answer["error"]["code"], "PAYMENT_PROVIDER_UNAVAILABLE", "{answer}");
    (args, answer)
}

#[tokio::test]
async fn a_charge_whose_answer_was_lost_is_settled_as_paid_with_its_one_charge() {
    let app = app_with_faults("timeout*1").await;
    let (args, _) = unfinished_commit(&app, "u1", "tr-004", 1, "ik_lost").await;
    assert_eq!(charges(&app).await, 1, "the provider charged");
    assert_eq!(pending(&app).await.len(), 1, "the order waits");
    assert_eq!(reconcile(&app).await, ReconcileReport::default(), "too young to reconcile");

    app.clock.advance(PAST_THE_WINDOW);
    let report = reconcile(&app).await;
    assert_eq!((report.examined, report.paid), (1, 1), "{report:?}");
    assert!(pending(&app).await.is_empty());

    // The key answers with the paid order, as a replay; still one charge.
    let client = app.client().await;
    let (replay, answer) = call_as(&client, "u1", "commit_order", args).await;
    assert_eq!(answer["order"]["status"], "paid", "{answer}");
    assert_eq!(meta_of(&replay, META_REPLAYED), Some(&json!(true)));
    let (_, read) = call_as(&client, "u1", "get_order", json!({"order_id": answer["order"]["id"]})).await;
    assert_eq!(read["order"]["status"], "paid");
    assert_eq!(charges(&app).await, 1, "exactly one charge");
    assert_eq!(reconcile(&app).await.examined, 0, "nothing left to do");
}

#[tokio::test]
async fn an_order_never_charged_is_abandoned_and_its_stock_sold_again() {
    // tr-055 has 3 in stock; u1's unfinished order holds all three.
    let app = app_with_faults("5xx*1").await;
    let (args, _) = unfinished_commit(&app, "u1", "tr-055", 3, "ik_gone").await;
    let client = app.client().await;
    let (_, held) = call_as(&client, "u2", "prepare_order", with_recipient(json!({"gift_id": "tr-055"}))).await;
    assert_eq!(held["error"]["code"], "GIFT_UNAVAILABLE", "the pending order holds the stock: {held}");

    app.clock.advance(PAST_THE_WINDOW);
    let report = reconcile(&app).await;
    assert_eq!((report.examined, report.abandoned), (1, 1), "{report:?}");

    let (draft, token) = prepare(&app, "u2", "tr-055").await;
    let (_, bought) = call_as(&client, "u2", "commit_order", commit_args(&draft, "ik_u2", &token)).await;
    assert_eq!(bought["order"]["status"], "paid", "the stock was released: {bought}");
    let (_, told) = call_as(&client, "u1", "commit_order", args).await;
    assert_eq!(told["error"]["code"], "PAYMENT_DECLINED", "{told}");
    assert!(told["error"]["message"].as_str().unwrap().contains("nothing was charged"), "{told}");
    assert_eq!(charges(&app).await, 1, "only u2 paid");
}

#[tokio::test]
async fn a_decline_whose_answer_was_lost_is_settled_as_declined() {
    let app = app_with_faults("5xx*1").await;
    let (args, _) = unfinished_commit(&app, "u1", "tr-004", 1, "ik_card").await;
    // The provider declines the order's charge, and that answer never reaches the app.
    let order = pending(&app).await.remove(0);
    app.provider.set_faults("decline*1").await;
    let request = ChargeRequest {
        amount: order.total_minor,
        currency: order.currency.as_str().to_ascii_lowercase(),
        description: charge_description(&order),
        payment_token: None,
    };
    assert_eq!(app.provider.charge(&provider_key(&order.id), &request).await.status(), 402);

    app.clock.advance(PAST_THE_WINDOW);
    assert_eq!(reconcile(&app).await.declined, 1);
    let (_, told) = call_as(&app.client().await, "u1", "commit_order", args).await;
    assert_eq!(told["error"]["code"], "PAYMENT_DECLINED", "{told}");
    assert!(told["error"]["message"].as_str().unwrap().contains("declined"), "{told}");
    assert_eq!(charges(&app).await, 0);
}

#[tokio::test]
async fn an_order_whose_charge_is_still_processing_is_left_for_the_next_pass() {
    // The provider holds the charge until released; the app gives up after 500 ms.
    let app = app_with_faults("").await;
    app.provider.hold().await;
    let (args, _) = unfinished_commit(&app, "u1", "tr-004", 1, "ik_slow").await;
    app.clock.advance(PAST_THE_WINDOW);
    let report = reconcile(&app).await;
    assert_eq!((report.examined, report.in_flight), (1, 1), "{report:?}");
    assert_eq!(pending(&app).await.len(), 1, "not given up while the provider still decides");

    app.provider.release().await;
    app.provider.wait_for("the charge decided", |l| l.iter().any(|c| c.status == ChargeStatus::Succeeded)).await;
    assert_eq!(reconcile(&app).await.paid, 1);
    let (_, answer) = call_as(&app.client().await, "u1", "commit_order", args).await;
    assert_eq!(answer["order"]["status"], "paid", "{answer}");
    assert_eq!(charges(&app).await, 1);
}

#[tokio::test]
async fn a_key_pointing_at_a_pending_order_is_never_pruned() {
    let app = app_with_faults("5xx*1").await;
    unfinished_commit(&app, "u1", "tr-004", 1, "ik_kept").await;
    let keys = &app.state.checkout.idempotency;
    app.clock.advance(Duration::from_secs(25 * 3600));
    assert_eq!(keys.prune().await.unwrap(), 0, "its order is not settled");
    assert_eq!(reconcile(&app).await.abandoned, 1);
    assert_eq!(keys.prune().await.unwrap(), 1, "settled, and past retention");
}

#[tokio::test]
async fn every_replica_reconciles_on_its_schedule() {
    let app = spawn_app_with(|c| {
        c.payments_timeout_ms = 500;
        c.reconcile_interval_secs = 1;
    })
    .await;
    app.provider.set_faults("timeout*1").await;
    unfinished_commit(&app, "u1", "tr-004", 1, "ik_scheduled").await;
    app.clock.advance(PAST_THE_WINDOW);
    for _ in 0..50 {
        if pending(&app).await.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let paid = app.state.store.orders_with_status(OrderStatusColumn::Paid).await.unwrap();
    assert_eq!(paid.len(), 1, "settled by the background pass");
    assert_eq!(charges(&app).await, 1);
}

#[tokio::test]
async fn the_reconcile_command_settles_pending_orders_and_prints_what_it_did() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("giftgenius.db");
    let provider = SandboxPay::start();
    provider.set_faults("timeout*1").await;
    let flags =
        [&provider.app_flags()[..], &["--payments-timeout-ms", "400", "--reconcile-interval-secs", "0"]].concat();
    let server = start_server_binary(&db, &flags, "warn", Stdio::null()).await;
    let client = connect(&server.mcp_url()).await.unwrap();
    let prepared = client
        .call_tool(request(Some("u1"), "prepare_order", with_recipient(json!({"gift_id": "tr-004"}))))
        .await
        .unwrap();
    let draft = prepared.structured_content.clone().unwrap()["draft"]["id"].as_str().unwrap().to_string();
    let token = meta_of(&prepared, TOKEN).and_then(Value::as_str).unwrap().to_string();
    let lost =
        client.call_tool(request(Some("u1"), "commit_order", commit_args(&draft, "ik_cmd", &token))).await.unwrap();
    assert_eq!(lost.structured_content.unwrap()["error"]["code"], "PAYMENT_PROVIDER_UNAVAILABLE");
    drop(client);
    drop(server);
    // Past the order's charging window (the timeout plus the margin).
    tokio::time::sleep(Duration::from_millis(1_500)).await;

    let report = reconcile_command(&db, &provider.app_flags());
    assert_eq!(report["examined"], 1, "{report}");
    assert_eq!(report["paid"], 1, "{report}");
    let store = Store::connect(&db.to_string_lossy()).await.unwrap();
    assert_eq!(store.orders_with_status(OrderStatusColumn::Paid).await.unwrap().len(), 1);
    assert_eq!(provider.charges().await, 1);
}
