//! The probes (`/livez`, `/readyz`, `/healthz`) and what SIGTERM does: `/readyz` answers 503
//! while the server drains, and a call in flight at SIGTERM is answered before the process
//! exits 0.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use giftgenius_server::http::health::READINESS_REUSED_FOR;

use serde_json::{Value, json};

use crate::support::{
    SandboxPay, ServerProcess, TOKEN, commit_args, connect, meta_of, request, spawn_app_with, start_server_binary,
    unused_port, with_recipient,
};

async fn get(url: &str, host: Option<&str>) -> (u16, Value) {
    let mut request = reqwest::Client::new().get(url);
    if let Some(host) = host {
        request = request.header("host", host);
    }
    let response = request.send().await.expect("the probe answers");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

#[tokio::test]
async fn the_probes_answer_any_host_name_and_are_never_rate_limited() {
    let app = spawn_app_with(|c| c.rate_limit_per_minute = 2).await;
    for _ in 0..5 {
        for host in ["attacker.example:8000", "127.0.0.1"] {
            assert_eq!(get(&format!("{}/livez", app.local_url), Some(host)).await, (200, json!("ok")), "{host}");
            assert_eq!(get(&format!("{}/healthz", app.local_url), Some(host)).await, (200, json!("ok")), "{host}");
            let ready = get(&format!("{}/readyz", app.local_url), Some(host)).await;
            assert_eq!(ready, (200, json!({"status": "ready"})), "{host}");
        }
    }
    // The limit itself still holds for other routes.
    let mut statuses = Vec::new();
    for _ in 0..4 {
        statuses.push(reqwest::get(format!("{}/privacy", app.local_url)).await.unwrap().status().as_u16());
    }
    assert!(statuses.contains(&429), "{statuses:?}");
}

#[tokio::test]
async fn readyz_names_an_unreachable_provider_and_nothing_else() {
    let port = unused_port();
    let app = spawn_app_with(|c| c.payments_url = Some(format!("http://127.0.0.1:{port}"))).await;
    let (status, body) = get(&format!("{}/readyz", app.local_url), None).await;
    assert_eq!((status, &body), (503, &json!({"status": "not_ready", "failing": ["payments"]})));
    assert_eq!(get(&format!("{}/livez", app.local_url), None).await.0, 200, "alive all the same");
}

/// A payment provider that answers its health probe and counts the probes; every other path
/// is a 404. Serves until the test's runtime ends.
async fn counting_provider() -> (String, Arc<AtomicUsize>) {
    let probes = Arc::new(AtomicUsize::new(0));
    let counted = probes.clone();
    let app = axum::Router::new().route(
        giftgenius_sandbox_pay::api::HEALTH_PATH,
        axum::routing::get(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            async { "ok" }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, probes)
}

/// `/readyz` is open to anyone and never rate-limited; each answer once cost a request to the
/// provider with our secret key (50 probes: 50 `GET /v1/customers` at Stripe). Now probes
/// within the reuse window, concurrent or one after another, share one provider probe.
#[tokio::test]
async fn readyz_asks_the_provider_once_per_window_however_many_probes_arrive() {
    let (url, probes) = counting_provider().await;
    let app = spawn_app_with(move |c| c.payments_url = Some(url)).await;
    let readyz = format!("{}/readyz", app.local_url);
    let before = probes.load(Ordering::SeqCst);
    let mut concurrent = tokio::task::JoinSet::new();
    for _ in 0..20 {
        let readyz = readyz.clone();
        concurrent.spawn(async move { get(&readyz, None).await });
    }
    while let Some(answer) = concurrent.join_next().await {
        assert_eq!(answer.unwrap(), (200, json!({"status": "ready"})));
    }
    for _ in 0..10 {
        assert_eq!(get(&readyz, None).await, (200, json!({"status": "ready"})));
    }
    assert_eq!(probes.load(Ordering::SeqCst) - before, 1, "30 probes within the window, one provider probe");
    // Past the window the next probe checks again.
    app.clock.advance(READINESS_REUSED_FOR);
    assert_eq!(get(&readyz, None).await, (200, json!({"status": "ready"})));
    assert_eq!(probes.load(Ordering::SeqCst) - before, 2);
}

async fn start(db: &std::path::Path, provider: &SandboxPay, delay_s: &str) -> ServerProcess {
    let mut flags = vec!["--shutdown-delay-secs", delay_s, "--shutdown-grace-secs", "60"];
    flags.extend(provider.app_flags());
    start_server_binary(db, &flags, "warn", Stdio::null()).await
}

/// Waits (polling) until `done` holds; panics naming `what` after a minute.
async fn wait_until<F: std::future::Future<Output = bool>>(what: &str, mut done: impl FnMut() -> F) {
    for _ in 0..3000 {
        if done().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("never happened: {what}");
}

/// SIGTERM, then waits until the server no longer accepts connections.
async fn terminate_until_the_listener_closes(server: &ServerProcess) {
    server.terminate();
    until_the_listener_closes(server).await;
}

/// Waits until the server no longer accepts connections.
async fn until_the_listener_closes(server: &ServerProcess) {
    let address = server.address().to_string();
    wait_until("the listener closes", || {
        let address = address.clone();
        async move { tokio::net::TcpStream::connect(&address).await.is_err() }
    })
    .await;
}

#[tokio::test]
async fn sigterm_turns_readyz_to_draining_while_the_rest_still_answers() {
    let dir = tempfile::tempdir().unwrap();
    let provider = SandboxPay::start();
    let mut server = start(&dir.path().join("giftgenius.db"), &provider, "600").await;
    assert_eq!(get(&format!("{}/readyz", server.url), None).await, (200, json!({"status": "ready"})));
    server.terminate();
    let readyz = format!("{}/readyz", server.url);
    wait_until("/readyz answers draining", || async { get(&readyz, None).await.0 == 503 }).await;
    assert_eq!(get(&readyz, None).await, (503, json!({"status": "draining"})));
    assert_eq!(get(&format!("{}/livez", server.url), None).await.0, 200);
    // Still serving MCP during the delay.
    let client = connect(&server.mcp_url()).await.expect("connects while draining");
    let listed = client.list_tools(None).await.expect("tools while draining");
    assert!(!listed.tools.is_empty());
    drop(client);
    // A second SIGTERM ends the delay at once; nothing was in flight, so that is a clean exit.
    server.terminate();
    let status = tokio::task::spawn_blocking(move || server.wait()).await.unwrap();
    assert!(status.success(), "{status:?}");
}

/// Ctrl-C is a person, not a load balancer: the listener closes without the delay (600 s here,
/// so waiting it out would fail the test's one-minute wait) and the process exits 0.
#[tokio::test]
async fn ctrl_c_skips_the_delay_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let provider = SandboxPay::start();
    let mut server = start(&dir.path().join("giftgenius.db"), &provider, "600").await;
    assert_eq!(get(&format!("{}/readyz", server.url), None).await.0, 200);
    server.interrupt();
    until_the_listener_closes(&server).await;
    let status = tokio::task::spawn_blocking(move || server.wait()).await.unwrap();
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn a_purchase_in_flight_at_sigterm_is_answered_before_the_process_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let provider = SandboxPay::start();
    let mut server = start(&dir.path().join("giftgenius.db"), &provider, "0").await;
    let client = connect(&server.mcp_url()).await.expect("connects");
    let prepared = client
        .call_tool(request(Some("drain-user"), "prepare_order", with_recipient(json!({"gift_id": "hh-010"}))))
        .await
        .expect("prepare");
    let draft = prepared.structured_content.clone().expect("structured");
    let token = meta_of(&prepared, TOKEN).and_then(Value::as_str).expect("token").to_string();
    let commit = commit_args(draft["draft"]["id"].as_str().expect("draft id"), "ik_drain", &token);

    provider.hold().await;
    let call = tokio::spawn(async move { client.call_tool(request(Some("drain-user"), "commit_order", commit)).await });
    provider.wait_for("the charge in processing", |ledger| ledger.len() == 1).await;

    // The listener closes (delay 0) while the charge is still held.
    terminate_until_the_listener_closes(&server).await;
    assert!(server.exited().is_none(), "the process waits for the call in flight");

    provider.release().await;
    let answered = call.await.unwrap().expect("the call in flight is answered");
    let answered = answered.structured_content.expect("structured");
    assert_eq!(answered["ok"], true, "{answered}");
    assert_eq!(answered["order"]["status"], "paid", "{answered}");
    let status = tokio::task::spawn_blocking(move || server.wait()).await.unwrap();
    assert!(status.success(), "{status:?}");
    assert_eq!(provider.charges().await, 1);
}

/// 32 purchases committed at once with the provider holding their charges; SIGTERM once at
/// least half reached it. `force`: a second SIGTERM while they are still held, so the process
/// exits with calls cut off. Then a second replica's reconciler runs on the same database, and
/// every purchase must be answered (paid) or settled by it: nothing left pending, one charge per
/// paid order, no charge without one.
async fn sigterm_during_32_purchases(force: bool) {
    const PURCHASES: usize = 32;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("giftgenius.db");
    let provider = SandboxPay::start();
    let mut server = start(&db, &provider, "0").await;
    let mut commits = Vec::new();
    for i in 0..PURCHASES {
        let subject = format!("drain-{i}");
        let client = connect(&server.mcp_url()).await.expect("connects");
        let prepared = client
            .call_tool(request(Some(&subject), "prepare_order", with_recipient(json!({"gift_id": "hh-002"}))))
            .await
            .expect("prepare");
        let draft = prepared.structured_content.clone().expect("structured");
        assert_eq!(draft["ok"], true, "{draft}");
        let token = meta_of(&prepared, TOKEN).and_then(Value::as_str).expect("token").to_string();
        let args = commit_args(draft["draft"]["id"].as_str().expect("draft id"), &format!("ik_drain_{i}"), &token);
        commits.push((client, subject, args));
    }
    provider.hold().await;
    let calls: Vec<_> = commits
        .into_iter()
        .map(|(client, subject, args)| {
            tokio::spawn(async move {
                let answer = client.call_tool(request(Some(&subject), "commit_order", args)).await;
                answer.ok().and_then(|r| r.structured_content)
            })
        })
        .collect();
    provider.wait_for("half the charges in processing", |ledger| ledger.len() >= PURCHASES / 2).await;
    terminate_until_the_listener_closes(&server).await;
    if force {
        server.terminate();
        let status = tokio::task::spawn_blocking(move || server.wait()).await.unwrap();
        assert!(!status.success(), "cut off calls in flight: {status:?}");
        provider.release().await;
    } else {
        provider.release().await;
        let status = tokio::task::spawn_blocking(move || server.wait()).await.unwrap();
        assert!(status.success(), "{status:?}");
    }
    let mut paid_answers = Vec::new();
    let mut unanswered = 0;
    // rmcp's client keeps retrying a stream its server took down; a call not answered within
    // this bound after the process exited never will be (the process is gone).
    let answered_by = tokio::time::Instant::now() + Duration::from_secs(10);
    for call in calls {
        let abort = call.abort_handle();
        let answer = match tokio::time::timeout_at(answered_by, call).await {
            Ok(answer) => answer.unwrap(),
            Err(_) => {
                abort.abort();
                None
            }
        };
        match answer {
            Some(answer) if answer["ok"] == true => {
                paid_answers.push(answer["order"]["id"].as_str().expect("order id").to_string())
            }
            Some(answer) => panic!("a purchase failed outright: {answer}"),
            None => unanswered += 1,
        }
    }

    let flags =
        [&provider.app_flags()[..], &["--reconcile-after-secs", "0", "--reconcile-interval-secs", "1"]].concat();
    let _replica = start_server_binary(&db, &flags, "warn", Stdio::null()).await;
    let store = giftgenius_commerce::store::Store::connect(&db.to_string_lossy()).await.unwrap();
    let pending = giftgenius_commerce::store::OrderStatusColumn::PendingPayment;
    wait_until("the replica settles every pending order", || {
        let store = store.clone();
        async move { store.orders_with_status(pending).await.unwrap().is_empty() }
    })
    .await;
    let paid = store.orders_with_status(giftgenius_commerce::store::OrderStatusColumn::Paid).await.unwrap();
    let mut order_charges: Vec<String> =
        paid.iter().map(|o| o.charge_id.clone().expect("a paid order's charge")).collect();
    order_charges.sort();
    let mut ledger_charges: Vec<String> = provider
        .ledger()
        .await
        .into_iter()
        .filter(|c| c.status == giftgenius_sandbox_pay::api::ChargeStatus::Succeeded)
        .map(|c| c.id)
        .collect();
    ledger_charges.sort();
    eprintln!(
        "drain (force: {force}): {} answered paid, {unanswered} unanswered, {} paid orders after reconciling, {} charges",
        paid_answers.len(),
        paid.len(),
        ledger_charges.len()
    );
    assert_eq!(order_charges, ledger_charges, "one charge per paid order, and none without one");
    for id in &paid_answers {
        assert!(paid.iter().any(|o| &o.id == id), "answered paid but not paid: {id}");
    }
    assert_eq!(paid.len(), ledger_charges.len());
    if force {
        assert!(unanswered > 0, "the second SIGTERM cut calls off");
    } else {
        assert!(paid_answers.len() >= PURCHASES / 2, "every call the server took was answered");
    }
}

#[tokio::test]
async fn sigterm_during_32_purchases_answers_every_call_it_took() {
    sigterm_during_32_purchases(false).await;
}

#[tokio::test]
async fn a_second_sigterm_during_32_purchases_leaves_only_what_a_replica_settles() {
    sigterm_during_32_purchases(true).await;
}
