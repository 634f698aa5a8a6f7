//! The Stripe provider (`--payments stripe`) against localstripe: a saved card pays with one
//! succeeded PaymentIntent; the card that saves but declines on charge is PAYMENT_DECLINED with
//! nothing paid; a cancellation refunds once; twenty identical commits at once make one
//! PaymentIntent; a process killed between Stripe's charge and our record ends, through the
//! reconciler, in one paid order and one PaymentIntent. Cards are attached through the API (the
//! hosted page's Stripe.js flow is a later slice).

use std::process::Stdio;
use std::time::Duration;

use futures::future::join_all;
use giftgenius_server::auth::caller::LOCAL_SUBJECT;
use giftgenius_server::checkout::stripe::StripeClient;
use giftgenius_server::clock::Clock;
use giftgenius_server::config::PaymentsKind;
use giftgenius_server::failpoints;
use giftgenius_server::store::{OrderStatusColumn, Store};
use giftgenius_types::wire::{META_CANCEL_TOKENS, META_REPLAYED};
use rmcp::RoleClient;
use rmcp::service::RunningService;
use serde_json::{Value, json};

use crate::support::{
    LocalStripe, STRIPE_PUBLISHABLE_KEY, STRIPE_TEST_KEY, TestApp, call_as, commit_args, connect, meta_of, prepare,
    prepare_as, reconcile_command, request, spawn_app_with, spawn_server_binary, start_server_binary,
    successes_or_in_progress,
};

/// Visa, always succeeds.
const VISA: &str = "4242424242424242";
/// Saves, then declines every charge.
const DECLINES_ON_CHARGE: &str = "4000000000000341";

/// The account subject a test's `_meta["openai/subject"]` hint becomes in local mode.
fn subject(hint: &str) -> String {
    format!("{LOCAL_SUBJECT}:{hint}")
}

pub(crate) async fn app_on(stripe: &LocalStripe) -> TestApp {
    let (url, key, js) = (stripe.url.clone(), stripe.key_file().to_string(), stripe.js_url());
    spawn_app_with(move |c| {
        c.payments = PaymentsKind::Stripe;
        c.payments_url = None;
        c.payments_token_file = None;
        c.stripe_api_base = url;
        c.stripe_secret_key_file = Some(key.into());
        c.stripe_publishable_key = Some(STRIPE_PUBLISHABLE_KEY.into());
        c.stripe_js_url = js;
    })
    .await
}

/// The account's Stripe Customer (created by our code, as on the first need) with `card` saved.
async fn save_card(stripe: &LocalStripe, store: &Store, hint: &str, card: &str) -> String {
    let client =
        StripeClient::new(&stripe.url, STRIPE_TEST_KEY, Duration::from_secs(10), store.clone(), Clock::System).unwrap();
    let customer = client.customer_for(&subject(hint)).await.expect("a Customer");
    assert_eq!(client.customer_for(&subject(hint)).await.unwrap(), customer, "one Customer per account");
    stripe.save_card(&customer, card).await;
    customer
}

/// A shop charging a fresh localstripe, `u1` with `card` saved and a draft of `gift` prepared:
/// (localstripe, app, a client, draft id, confirmation token).
async fn shop(card: &str, gift: &str) -> (LocalStripe, TestApp, RunningService<RoleClient, ()>, String, String) {
    let stripe = LocalStripe::start().await;
    let app = app_on(&stripe).await;
    save_card(&stripe, &app.state.store, "u1", card).await;
    let client = app.client().await;
    let (draft, token) = prepare_as(&client, "u1", gift).await;
    (stripe, app, client, draft, token)
}

/// PaymentIntents for `order` in localstripe.
async fn intents_of(stripe: &LocalStripe, order: &str) -> Vec<Value> {
    stripe.payment_intents().await.into_iter().filter(|pi| pi["metadata"]["order_id"] == order).collect()
}

#[tokio::test]
async fn a_saved_card_pays_with_one_succeeded_payment_intent_and_a_replay_charges_nothing_more() {
    let (stripe, app, client, draft, token) = shop(VISA, "tr-001").await;
    let customer = app.state.store.stripe_customer(&subject("u1")).await.unwrap().expect("the Customer");
    let (_, paid) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_1", &token)).await;
    assert_eq!(paid["order"]["status"], "paid", "{paid}");
    let order = paid["order"]["id"].as_str().unwrap();

    let intents = stripe.payment_intents().await;
    assert_eq!(intents.len(), 1, "{intents:?}");
    let intent = &intents[0];
    assert_eq!(intent["status"], "succeeded");
    assert_eq!(intent["customer"], customer.as_str());
    assert_eq!(intent["metadata"]["order_id"], order);
    assert_eq!(intent["amount"], paid["order"]["total"]["amount_minor"], "{paid}");
    let row = app.state.store.order_by_id(order).await.unwrap().unwrap();
    assert_eq!(row.charge_id.as_deref(), intent["id"].as_str(), "the order keeps its PaymentIntent");

    let (again, replay) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_1", &token)).await;
    assert_eq!(replay.to_string(), paid.to_string());
    assert_eq!(meta_of(&again, META_REPLAYED), Some(&json!(true)));
    assert_eq!(stripe.payment_intents().await.len(), 1, "nothing charged again");
}

#[tokio::test]
async fn the_card_that_declines_on_charge_is_payment_declined_and_nothing_is_paid() {
    let (stripe, app, client, draft, token) = shop(DECLINES_ON_CHARGE, "tr-001").await;
    let (result, declined) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_1", &token)).await;
    assert_eq!(declined["error"]["code"], "PAYMENT_DECLINED", "{declined}");
    let said = format!("{declined} {:?}", result.content);
    assert!(!said.contains("card_declined") && !said.contains("ch_"), "Stripe's reasons stay server-side: {said}");

    let intents = stripe.payment_intents().await;
    assert_eq!(intents.len(), 1, "one attempt: {intents:?}");
    assert_ne!(intents[0]["status"], "succeeded");
    assert!(app.state.store.orders_with_status(OrderStatusColumn::Paid).await.unwrap().is_empty());
    let (_, replay) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_1", &token)).await;
    assert_eq!(replay["error"]["code"], "PAYMENT_DECLINED");
    assert_eq!(stripe.payment_intents().await.len(), 1, "the replay asked Stripe for nothing");
}

#[tokio::test]
async fn without_a_saved_card_nothing_is_charged() {
    let stripe = LocalStripe::start().await;
    let app = app_on(&stripe).await;
    let (draft, token) = prepare(&app, "u1", "tr-001").await;
    let client = app.client().await;
    let (_, declined) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_1", &token)).await;
    assert_eq!(declined["error"]["code"], "PAYMENT_DECLINED", "{declined}");
    assert!(stripe.payment_intents().await.is_empty());
    let customer = app.state.store.stripe_customer(&subject("u1")).await.unwrap().expect("created on the first need");
    assert!(customer.starts_with("cus_"));
}

#[tokio::test]
async fn a_cancellation_refunds_the_payment_intent_once() {
    let (stripe, _app, client, draft, token) = shop(VISA, "hh-010").await;
    let (_, paid) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_1", &token)).await;
    let order = paid["order"]["id"].as_str().expect("paid").to_string();
    let (got, _) = call_as(&client, "u1", "get_order", json!({"order_id": order})).await;
    let cancel =
        meta_of(&got, META_CANCEL_TOKENS).and_then(|m| m[&order].as_str()).expect("a cancel token").to_string();
    let args = json!({"order_id": order, "idempotency_key": "ck_1", "confirmation_token": cancel});
    let (_, cancelled) = call_as(&client, "u1", "cancel_order", args.clone()).await;
    assert_eq!(cancelled["order"]["status"], "cancelled", "{cancelled}");
    assert_eq!(cancelled["order"]["refund"]["status"], "succeeded");

    let intent = intents_of(&stripe, &order).await.remove(0);
    let refunds = stripe.refunds_of(intent["id"].as_str().unwrap()).await;
    assert_eq!(refunds.len(), 1, "{refunds:?}");
    assert_eq!(refunds[0]["amount"], intent["amount"], "all of it back");
    let (_, replay) = call_as(&client, "u1", "cancel_order", args).await;
    assert_eq!(replay.to_string(), cancelled.to_string());
    let other_key = json!({"order_id": order, "idempotency_key": "ck_2", "confirmation_token": cancel});
    let (_, again) = call_as(&client, "u1", "cancel_order", other_key).await;
    assert_eq!(again["order"]["status"], "cancelled", "{again}");
    assert_eq!(stripe.refunds_of(intent["id"].as_str().unwrap()).await.len(), 1, "one refund, whatever the keys");
}

#[tokio::test]
async fn the_same_purchase_twenty_times_at_once_makes_one_payment_intent() {
    let (stripe, app, client, draft, token) = shop(VISA, "tr-001").await;
    let storm = (0..20).map(|_| call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_storm", &token)));
    let results = join_all(storm).await;
    assert!(successes_or_in_progress(&results) >= 1, "one of them paid");
    let mut order = None;
    for _ in 0..100 {
        let (_, answer) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_storm", &token)).await;
        if answer["ok"] == true {
            order = answer["order"]["id"].as_str().map(str::to_string);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let order = order.expect("the purchase finished");
    let intents = stripe.payment_intents().await;
    assert_eq!(intents.len(), 1, "{intents:?}");
    assert_eq!(intents[0]["metadata"]["order_id"], order.as_str());
    assert_eq!(app.state.store.order_count().await.unwrap(), 1);
}

/// The process dies right after Stripe charged (failpoint), before anything is recorded; nobody
/// retries. The reconcile command finds the PaymentIntent by the order id among the Customer's
/// and records the order paid: one order, one PaymentIntent.
#[tokio::test]
async fn a_charge_whose_process_died_before_the_record_is_settled_by_the_reconciler() {
    let stripe = LocalStripe::start().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("giftgenius.db");
    let mut flags = stripe.app_flags();
    flags.extend(["--payments-timeout-ms", "500"].map(str::to_string));
    let flag_refs: Vec<&str> = flags.iter().map(String::as_str).collect();

    // A first start migrates the database the card is saved against.
    let serving = [&flag_refs[..], &["--idempotency-lease-ms", "2500", "--reconcile-interval-secs", "0"]].concat();
    drop(start_server_binary(&db, &serving, "warn", Stdio::null()).await);
    let store = Store::connect(&db.to_string_lossy()).await.unwrap();
    save_card(&stripe, &store, "u1", VISA).await;

    let doomed_flags = [&serving[..], &["--failpoints", failpoints::AFTER_PAYMENT_CHARGED]].concat();
    let mut doomed = spawn_server_binary(&db, &doomed_flags, "warn", Stdio::null());
    let mut client = None;
    for _ in 0..200 {
        if let Ok(c) = connect(&doomed.mcp_url()).await {
            client = Some(c);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let client = client.expect("the server answers");
    let (draft, token) = prepare_as(&client, "u1", "tr-004").await;
    let commit = client.call_tool(request(Some("u1"), "commit_order", commit_args(&draft, "ik_crash", &token)));
    let outcome = tokio::time::timeout(Duration::from_secs(5), commit).await;
    assert!(!matches!(outcome, Ok(Ok(_))), "the server died mid-commit: {outcome:?}");
    assert!(!doomed.wait().success(), "the failpoint aborted it");
    let pending = store.orders_with_status(OrderStatusColumn::PendingPayment).await.unwrap();
    assert_eq!(pending.len(), 1, "charged at Stripe, pending here");
    assert_eq!(intents_of(&stripe, &pending[0].id).await.len(), 1);
    // Past the order's charging window (the timeout plus the margin).
    tokio::time::sleep(Duration::from_millis(1_600)).await;

    let report = reconcile_command(&db, &flags);
    assert_eq!((report["examined"].as_u64(), report["paid"].as_u64()), (Some(1), Some(1)), "{report}");
    let paid = store.orders_with_status(OrderStatusColumn::Paid).await.unwrap();
    assert_eq!(paid.len(), 1);
    let intents = stripe.payment_intents().await;
    assert_eq!(intents.len(), 1, "{intents:?}");
    assert_eq!(paid[0].charge_id.as_deref(), intents[0]["id"].as_str());
    assert_eq!(store.order_count().await.unwrap(), 1);
}

/// The secret key is in no log line, even at `trace` (every crate's), through a purchase, a
/// decline and a refused key.
#[tokio::test]
async fn the_secret_key_is_in_no_log_line_at_trace() {
    let stripe = LocalStripe::start().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("giftgenius.db");
    let log = dir.path().join("server.log");
    let flags = stripe.app_flags();
    let flag_refs: Vec<&str> = flags.iter().map(String::as_str).collect();
    let stderr = std::fs::File::create(&log).unwrap();
    let server = start_server_binary(&db, &flag_refs, "trace", Stdio::from(stderr)).await;
    let store = Store::connect(&db.to_string_lossy()).await.unwrap();
    save_card(&stripe, &store, "u1", VISA).await;
    save_card(&stripe, &store, "u2", DECLINES_ON_CHARGE).await;
    let client = connect(&server.mcp_url()).await.unwrap();
    for (who, expected) in [("u1", "paid"), ("u2", "PAYMENT_DECLINED")] {
        let (draft, token) = prepare_as(&client, who, "tr-001").await;
        let (_, answer) = call_as(&client, who, "commit_order", commit_args(&draft, "ik_1", &token)).await;
        let got = answer["order"]["status"].as_str().or(answer["error"]["code"].as_str()).unwrap_or_default();
        assert_eq!(got, expected, "{answer}");
        assert!(!answer.to_string().contains(STRIPE_TEST_KEY));
    }
    drop(client);
    drop(server);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("stripe declined the charge"), "the log is the one written at trace");
    assert!(!text.contains(STRIPE_TEST_KEY), "the secret key leaked into the log");
    assert!(!text.contains("Bearer sk_"), "an Authorization header leaked into the log");

    // A key file that holds no key is refused naming the file, never echoing what it holds.
    let wrong = dir.path().join("wrong.key");
    std::fs::write(&wrong, "pk_test_not_a_secret_but_quoted_nowhere\n").unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_giftgenius-server"))
        .args(["--payments", "stripe", "--stripe-secret-key-file"])
        .arg(&wrong)
        .arg("--db")
        .arg(dir.path().join("other.db"))
        .env("GIFTGENIUS_LOG", "trace")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(said.contains("does not hold a Stripe secret key"), "{said}");
    assert!(!said.contains("pk_test_not_a_secret"), "{said}");
}
