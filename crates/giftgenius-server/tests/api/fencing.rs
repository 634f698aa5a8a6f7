//! Fenced leases: a call whose lease ran out (the clock moves past it mid-call) and whose key
//! was taken over writes nothing: no answer over the new holder's, no release of the new
//! holder's lease, no second checkout session, no order marked paid. It answers from what the
//! key says now. And the server refuses a lease the provider call could outlast.

use std::process::{Command, Stdio};
use std::time::Duration;

use giftgenius_commerce::clock::Clock;
use giftgenius_commerce::store::{CheckoutRow, CurrencyColumn, Fenced, OrderStatusColumn};
use giftgenius_sandbox_pay::api::ChargeStatus;
use giftgenius_server::checkout::idempotency::Begin;
use giftgenius_server::config::Config;
use giftgenius_server::context::CallContext;
use giftgenius_server::outcome::Answer;
use giftgenius_server::startup::Application;
use giftgenius_types::wire::META_REPLAYED;
use giftgenius_types::{GetOrderInput, ToolName};
use serde_json::json;

use crate::support::{
    SandboxPay, TestApp, call_as, charges, commit_args, meta_of, orders, prepare, spawn_app, spawn_app_with,
    widget_path,
};

/// The lease of the apps in these tests (Config's default).
const LEASE: Duration = Duration::from_millis(30_000);

async fn proceed(app: &TestApp, call: &CallContext, key: &str) -> giftgenius_server::checkout::idempotency::Lease {
    match app.state.checkout.idempotency.begin::<GetOrderInput>(call, key, "fingerprint").await.expect("begin") {
        Begin::Proceed(lease) => lease,
        other => panic!("expected to hold the key, got {other:?}"),
    }
}

fn answer(order_id: &str) -> Answer<GetOrderInput> {
    Answer::new(GetOrderInput { order_id: order_id.into() })
}

/// A holder, its lease run out, the key taken over: every write of the old holder is refused,
/// and the key ends with the new holder's answer. Run on either store.
pub async fn a_stale_holder_writes_nothing(app: &TestApp) {
    let keys = &app.state.checkout.idempotency;
    let store = &app.state.store;
    let call = CallContext::new(ToolName::CreateCheckoutSession, "fence-user", "en-US");
    let stale = proceed(app, &call, "ik_fenced").await;
    app.clock.advance(LEASE + Duration::from_millis(1));
    let fresh = proceed(app, &call, "ik_fenced").await;
    assert_eq!(fresh.fence().generation, stale.fence().generation + 1, "a take-over is a new generation");

    let now = app.clock.now_ms();
    assert_eq!(store.release_key(stale.fence(), now).await.unwrap(), Fenced::Stale, "no release of the new lease");
    match keys.begin::<GetOrderInput>(&call, "ik_fenced", "fingerprint").await.unwrap() {
        Begin::Reject(error) => assert_eq!(error.code.as_str(), "REQUEST_IN_PROGRESS", "the new holder still holds it"),
        other => panic!("the new holder's lease must stand: {other:?}"),
    }
    let session = CheckoutRow {
        id: "cs_stale".into(),
        subject: "fence-user".into(),
        gift_id: "pp-003".into(),
        currency: CurrencyColumn::Usd,
        amount_minor: 100,
        created_at_ms: now,
        expires_at_ms: now + 1,
    };
    let inserted = store.create_checkout_and_finish(stale.fence(), &session, "{}", now).await.unwrap();
    assert_eq!(inserted, Fenced::Stale);
    assert_eq!(store.checkout_session("cs_stale").await.unwrap(), None, "no second session for the key");
    assert_eq!(store.finish_key(stale.fence(), "{}", now).await.unwrap(), Fenced::Stale);

    // The stale holder's own answer is not stored; it answers what the key says now.
    let told = stale.answer(&call, Ok(answer("stale"))).await;
    assert_eq!(told.result.unwrap_err().code.as_str(), "REQUEST_IN_PROGRESS");
    let fresh_answer = fresh.answer(&call, Ok(answer("fresh"))).await;
    assert_eq!(fresh_answer.result.unwrap().data.order_id, "fresh");
    match keys.begin::<GetOrderInput>(&call, "ik_fenced", "fingerprint").await.unwrap() {
        Begin::Replay(outcome) => assert_eq!(outcome.result.unwrap().data.order_id, "fresh", "the winner's answer"),
        other => panic!("the key is finished: {other:?}"),
    }
}

#[tokio::test]
async fn a_stale_lease_holder_can_neither_answer_nor_release_nor_insert_a_session() {
    a_stale_holder_writes_nothing(&spawn_app().await).await;
}

#[tokio::test]
async fn a_commit_whose_lease_ran_out_mid_charge_writes_nothing_and_the_retry_finds_the_one_charge() {
    // The provider holds the charge; meanwhile the lease runs out and a retry takes the key over.
    // The app's own timeout is far beyond the steps between (a hold, not a race).
    let app = spawn_app_with(|c| {
        c.idempotency_lease_ms = 25_000;
        c.payments_timeout_ms = 20_000;
    })
    .await;
    app.provider.hold().await;
    let (draft, token) = prepare(&app, "u1", "tr-004").await;
    let (client_a, client_b) = (app.client().await, app.client().await);
    let commit = commit_args(&draft, "ik_slow", &token);
    let first = call_as(&client_a, "u1", "commit_order", commit.clone());
    let takeover = async {
        // Once the first call's charge is at the provider, its lease runs out and a retry comes.
        app.provider.wait_for("the first charge", |l| l.iter().any(|c| c.status == ChargeStatus::Processing)).await;
        app.clock.advance(Duration::from_secs(26));
        let retried = call_as(&client_b, "u1", "commit_order", commit.clone()).await;
        app.provider.release().await;
        retried
    };
    let ((_, a), (_, b)) = tokio::join!(first, takeover);
    // The retry asked the provider while the first request was still processing there.
    assert_eq!(b["error"]["code"], "PAYMENT_PROVIDER_UNAVAILABLE", "{b}");
    // The first call got the charge, but its lease was gone: its answer was not stored and the
    // order not marked paid by it; it says "in progress", retryable.
    assert_eq!(a["error"]["code"], "REQUEST_IN_PROGRESS", "{a}");
    assert_eq!(a["error"]["retryable"], true);
    let pending = app.state.store.orders_with_status(OrderStatusColumn::PendingPayment).await.unwrap();
    assert_eq!(pending.len(), 1, "the stale holder did not mark the order paid");
    assert_eq!(charges(&app).await, 1);

    let (_, settled) = call_as(&client_a, "u1", "commit_order", commit.clone()).await;
    assert_eq!(settled["order"]["status"], "paid", "{settled}");
    let (replay, again) = call_as(&client_b, "u1", "commit_order", commit).await;
    assert_eq!(meta_of(&replay, META_REPLAYED), Some(&json!(true)));
    assert_eq!(again.to_string(), settled.to_string());
    assert_eq!(charges(&app).await, 1, "one charge");
    assert_eq!(orders(&app).await, 1, "one order");
}

#[tokio::test]
async fn the_server_refuses_a_lease_its_provider_call_could_outlast() {
    let provider = SandboxPay::start();
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::for_tests(dir.path());
    config.widget_html = Some(widget_path());
    config.payments_url = Some(provider.url.clone());
    config.sandbox_latency_ms = None;
    config.idempotency_lease_ms = 10_500;
    config.payments_timeout_ms = 10_000;
    let refused = Application::build_with_clock(config, Clock::System).await.err().expect("refused");
    assert!(refused.to_string().contains("--idempotency-lease-ms (10500) must be greater than"), "{refused}");

    // The binary says so and exits, before it listens.
    let output = Command::new(env!("CARGO_BIN_EXE_giftgenius-server"))
        .args(["--port", "0", "--idempotency-lease-ms", "500", "--payments-url", &provider.url])
        .arg("--db")
        .arg(dir.path().join("g.db"))
        .arg("--widget-html")
        .arg(widget_path())
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--idempotency-lease-ms (500) must be greater than --payments-timeout-ms (10000) + 1000 ms"),
        "{stderr}"
    );
}
