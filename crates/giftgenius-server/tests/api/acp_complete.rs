//! ACP complete with delegated payment (issue 25 item 3) over real HTTP, against the real
//! sandbox provider process: a vault token from its `delegate_payment` pays a ready session
//! exactly once. Money is counted in the provider's ledger, never in responses: one charge per
//! session whatever the retries, keys or tokens; declines and refused tokens charge nothing
//! and give the stock back; a provider failure is a 503 that is never stored and a retry (any
//! key) resumes the same charge; the order's permalink opens its status page.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use giftgenius_sandbox_pay::api::ChargeStatus;
use giftgenius_server::acp::buyer_data::AcpBuyerData;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::acp::{KEY_ONE, Platform, acp_app, address, codes, json_of, total, with_platforms};
use crate::support::{Receiver, SandboxPay, ServerProcess, TestApp, spawn_app_with, start_server_binary};

/// Test cards of the sandbox provider.
pub(crate) const APPROVES: &str = "4242424242424242";
pub(crate) const DECLINES: &str = "4000000000000002";

/// A ready session for one `hh-001` ($68, standard shipping to the US): its id and total.
async fn ready_session(one: &Platform<'_>) -> (String, i64) {
    let body = json!({"line_items": [{"id": "hh-001"}], "currency": "usd", "capabilities": {},
        "fulfillment_details": {"email": "ana@example.com", "address": address("US", "CA", "94103")},
        "order_notes": "Happy birthday, Ana!"});
    let (status, session) = json_of(one.post("", &uuid(), &body).await).await;
    assert_eq!((status, session["status"].as_str()), (StatusCode::CREATED, Some("ready_for_payment")), "{session}");
    (session["id"].as_str().unwrap().to_string(), total(&session, "total").unwrap())
}

fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// `--acp-merchant-id`'s default: what every token's allowance names.
pub(crate) const MERCHANT: &str = "giftgenius";

/// RFC 3339 of the real clock plus `ahead` (the provider checks expiry on its own clock).
fn real_time_plus(ahead: Duration) -> String {
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).unwrap() + ahead;
    giftgenius_commerce::clock::rfc3339(ms.as_millis() as i64)
}

/// A vault token from the provider for `session`, up to `max_amount` US cents, paid by `card`.
pub(crate) async fn vault_token(app: &TestApp, session: &str, max_amount: i64, card: &str) -> String {
    token_from(&app.provider, session, max_amount, card).await
}

pub(crate) async fn token_from(provider: &SandboxPay, session: &str, max_amount: i64, card: &str) -> String {
    let response = provider.delegate(&uuid(), &delegate_for(session, max_amount, card)).await;
    let status = response.status();
    let answer: Value = response.json().await.expect("JSON");
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    answer["id"].as_str().expect("a vault token").to_string()
}

/// A delegate_payment body as a platform sends it for `session`: a one-time allowance of up to
/// `max_amount` US cents at our merchant for the next hour, paid by the test `card`.
pub(crate) fn delegate_for(session: &str, max_amount: i64, card: &str) -> Value {
    json!({
        "payment_method": {"type": "card", "card_number_type": "fpan", "number": card, "exp_month": "12",
            "exp_year": "2034", "display_card_funding_type": "credit", "display_last4": &card[card.len() - 4..],
            "metadata": {}},
        "allowance": {"reason": "one_time", "max_amount": max_amount, "currency": "usd",
            "checkout_session_id": session, "merchant_id": MERCHANT,
            "expires_at": real_time_plus(Duration::from_secs(3600))},
        "risk_signals": [{"type": "card_testing", "score": 3, "action": "authorized"}],
        "metadata": {"test": "acp_complete"}
    })
}

pub(crate) fn complete_body(token: &str) -> Value {
    json!({"payment_data": {"handler_id": "card_tokenized",
        "instrument": {"type": "card", "credential": {"type": "spt", "token": token}}}})
}

/// Succeeded charges in the provider's ledger.
async fn money_moved(app: &TestApp) -> Vec<i64> {
    app.provider.ledger().await.into_iter().filter(|c| c.status == ChargeStatus::Succeeded).map(|c| c.amount).collect()
}

#[tokio::test]
async fn a_delegated_token_pays_a_ready_session_once() {
    let app = acp_app().await;
    let one = Platform::new(&app, KEY_ONE);
    let (id, amount) = ready_session(&one).await;
    assert_eq!(amount, 6800);
    let token = vault_token(&app, &id, amount, APPROVES).await;

    let (status, done) = json_of(one.post(&format!("/{id}/complete"), "pay-1", &complete_body(&token)).await).await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["messages"], json!([]));
    let order = &done["order"];
    assert_eq!(order["type"], "order");
    assert_eq!(order["checkout_session_id"], id.as_str());
    assert_eq!(order["status"], "confirmed");
    assert_eq!(order["line_items"][0]["quantity"], json!({"ordered": 1, "current": 1, "fulfilled": 0}));
    assert!(order.get("confirmation").is_none(), "no gift message on the order: {order}");
    assert!(!order.to_string().contains("Ana"), "no personal data on the order: {order}");
    assert_eq!(total(order, "total"), Some(6800));
    assert_eq!(money_moved(&app).await, [6800]);
    let capabilities = &done["capabilities"]["payment"]["handlers"][0];
    assert_eq!(
        (capabilities["id"].as_str(), capabilities["config"]["merchant_id"].as_str()),
        (Some("card_tokenized"), Some("giftgenius"))
    );

    // GET shows the same completed session and order.
    let (_, got) = json_of(one.get(&id).await).await;
    assert_eq!(got["status"], "completed");
    assert_eq!(got["order"], done["order"]);

    // The same key replays; another key (and another token) gets the same order: nothing more moves.
    let replay = one.post(&format!("/{id}/complete"), "pay-1", &complete_body(&token)).await;
    assert_eq!(replay.headers().get("idempotent-replayed").map(|v| v.to_str().unwrap()), Some("true"));
    let (_, replayed) = json_of(replay).await;
    assert_eq!(replayed, done);
    let fresh = vault_token(&app, &id, amount, APPROVES).await;
    let (status, again) = json_of(one.post(&format!("/{id}/complete"), "pay-2", &complete_body(&fresh)).await).await;
    assert_eq!((status, &again["order"]["id"]), (StatusCode::OK, &order["id"]));
    assert_eq!(money_moved(&app).await, [6800], "one session, one charge");

    // A completed session takes no update and no cancel.
    let (status, refused) = json_of(one.post(&format!("/{id}"), "late", &json!({"order_notes": "x"})).await).await;
    assert_eq!((status, refused["code"].as_str()), (StatusCode::METHOD_NOT_ALLOWED, Some("session_completed")));
    let (status, refused) = json_of(one.post(&format!("/{id}/cancel"), "late-cancel", &json!({})).await).await;
    assert_eq!((status, refused["code"].as_str()), (StatusCode::METHOD_NOT_ALLOWED, Some("session_not_cancelable")));

    // The permalink opens the order's status page (in the browser's language); a forged one does not.
    let permalink = order["permalink_url"].as_str().expect("a permalink").to_string();
    let local = permalink.replacen(&app.base_url, &app.local_url, 1);
    let page = reqwest::Client::new().get(&local).header("Accept-Language", "es-ES").send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(page.headers()["referrer-policy"], "no-referrer");
    assert_eq!(page.headers()["x-robots-tag"], "noindex");
    let html = page.text().await.unwrap();
    assert!(html.contains("Tu pedido de GiftGenius") && html.contains("data-status=\"paid\""), "{html}");
    assert!(!html.contains("Ana Lima") && !html.contains("Main St"), "no recipient on the page: {html}");
    let forged = format!("{}0", &local[..local.len() - 1]);
    let forged = if forged == local { format!("{}1", &local[..local.len() - 1]) } else { forged };
    assert_eq!(reqwest::get(&forged).await.unwrap().status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_decline_charges_nothing_and_the_buyer_can_pay_again() {
    let app = acp_app().await;
    let one = Platform::new(&app, KEY_ONE);
    let (id, amount) = ready_session(&one).await;
    let declining = vault_token(&app, &id, amount, DECLINES).await;
    let (status, declined) =
        json_of(one.post(&format!("/{id}/complete"), "pay-1", &complete_body(&declining)).await).await;
    assert_eq!(status, StatusCode::OK, "{declined}");
    assert_eq!(declined["status"], "ready_for_payment");
    assert_eq!(codes(&declined), [("payment_declined".to_string(), "$.payment_data".to_string())]);
    assert!(declined.get("order").is_none());
    assert!(money_moved(&app).await.is_empty());
    assert_eq!(app.state.store.units_sold("hh-001").await.unwrap(), 0, "a declined order holds no stock");

    let paying = vault_token(&app, &id, amount, APPROVES).await;
    let (_, done) = json_of(one.post(&format!("/{id}/complete"), "pay-2", &complete_body(&paying)).await).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(money_moved(&app).await, [6800]);
}

#[tokio::test]
async fn a_token_that_cannot_pay_this_session_charges_nothing() {
    let app = acp_app().await;
    let one = Platform::new(&app, KEY_ONE);
    let (id, amount) = ready_session(&one).await;
    let (other, _) = ready_session(&one).await;
    for (label, token) in [
        ("below the total", vault_token(&app, &id, amount - 1, APPROVES).await),
        ("for another session", vault_token(&app, &other, amount, APPROVES).await),
        ("unknown", "vt_00000000000000000000000000000000".to_string()),
    ] {
        let (status, refused) =
            json_of(one.post(&format!("/{id}/complete"), &uuid(), &complete_body(&token)).await).await;
        assert_eq!(
            (status, refused["status"].as_str()),
            (StatusCode::OK, Some("ready_for_payment")),
            "{label}: {refused}"
        );
        assert_eq!(codes(&refused), [("payment_declined".to_string(), "$.payment_data".to_string())], "{label}");
    }
    assert!(money_moved(&app).await.is_empty());
    assert_eq!(app.state.store.units_sold("hh-001").await.unwrap(), 0);

    // A token that paid once pays nothing else: the other session cannot use it.
    let token = vault_token(&app, &id, amount, APPROVES).await;
    let (_, done) = json_of(one.post(&format!("/{id}/complete"), &uuid(), &complete_body(&token)).await).await;
    assert_eq!(done["status"], "completed");
    let (_, refused) = json_of(one.post(&format!("/{other}/complete"), &uuid(), &complete_body(&token)).await).await;
    assert_eq!(codes(&refused), [("payment_declined".to_string(), "$.payment_data".to_string())]);
    assert_eq!(money_moved(&app).await, [6800]);
}

#[tokio::test]
async fn only_a_ready_open_session_is_paid_and_only_with_our_handler() {
    let app = acp_app().await;
    let one = Platform::new(&app, KEY_ONE);
    // Not ready (no address): the session says what is missing; nothing is charged.
    let body = json!({"line_items": [{"id": "hh-001"}], "currency": "usd", "capabilities": {}});
    let (_, created) = json_of(one.post("", &uuid(), &body).await).await;
    let unready = created["id"].as_str().unwrap().to_string();
    let token = vault_token(&app, &unready, 10_000, APPROVES).await;
    let (status, answer) =
        json_of(one.post(&format!("/{unready}/complete"), &uuid(), &complete_body(&token)).await).await;
    assert_eq!((status, answer["status"].as_str()), (StatusCode::OK, Some("not_ready_for_payment")));
    assert_eq!(codes(&answer), [("missing".to_string(), "$.fulfillment_details.address".to_string())]);

    // Another handler, instrument or credential: 400 naming the field.
    let (id, amount) = ready_session(&one).await;
    let token = vault_token(&app, &id, amount, APPROVES).await;
    for (path, value) in [
        (
            "$.payment_data.handler_id",
            json!({"handler_id": "paypal", "instrument": {"type": "card", "credential": {"type": "spt", "token": token}}}),
        ),
        (
            "$.payment_data.instrument.type",
            json!({"handler_id": "card_tokenized", "instrument": {"type": "wallet", "credential": {"type": "spt", "token": token}}}),
        ),
        (
            "$.payment_data.instrument.credential.type",
            json!({"handler_id": "card_tokenized", "instrument": {"type": "card", "credential": {"type": "pan", "token": token}}}),
        ),
        ("$.payment_data", json!({"billing_address": address("US", "CA", "94103")})),
        ("$.payment_data.instrument", json!({"handler_id": "card_tokenized"})),
    ] {
        let (status, error) =
            json_of(one.post(&format!("/{id}/complete"), &uuid(), &json!({"payment_data": value})).await).await;
        assert_eq!((status, error["param"].as_str()), (StatusCode::BAD_REQUEST, Some(path)), "{error}");
    }

    // Canceled: 405; expired: the session says so. Neither charges.
    let (_, _) = json_of(one.post(&format!("/{id}/cancel"), &uuid(), &json!({})).await).await;
    let (status, error) = json_of(one.post(&format!("/{id}/complete"), &uuid(), &complete_body(&token)).await).await;
    assert_eq!((status, error["code"].as_str()), (StatusCode::METHOD_NOT_ALLOWED, Some("session_canceled")));
    let (late, amount) = ready_session(&one).await;
    let token = vault_token(&app, &late, amount, APPROVES).await;
    app.clock.advance(Duration::from_secs(2 * 3600));
    let (status, expired) =
        json_of(one.post(&format!("/{late}/complete"), &uuid(), &complete_body(&token)).await).await;
    assert_eq!((status, expired["status"].as_str()), (StatusCode::OK, Some("expired")), "{expired}");
    assert!(money_moved(&app).await.is_empty());
}

/// The 2026-04-17 B2B fields of `payment_data` are spec-valid: accepted, and what we cannot
/// honour (a purchase order alone, payment terms, an approval to wait for) is answered in the
/// session's messages with nothing charged; a purchase order number beside a card is only a
/// reference, and the card pays.
#[tokio::test]
async fn purchase_orders_and_payment_terms_are_answered_in_the_session_and_a_card_still_pays() {
    let app = acp_app().await;
    let one = Platform::new(&app, KEY_ONE);
    let (id, amount) = ready_session(&one).await;
    let token = vault_token(&app, &id, amount, APPROVES).await;
    let card = json!({"type": "card", "credential": {"type": "spt", "token": token}});
    for (param, data) in [
        (
            "$.payment_data.purchase_order_number",
            json!({"purchase_order_number": "PO-77", "payment_terms": "immediate"}),
        ),
        // Half a card beside a purchase order is a purchase order by the schema's `anyOf`
        // (found by scripts/acp-fuzz.py: it was a 400).
        (
            "$.payment_data.purchase_order_number",
            json!({"purchase_order_number": "PO-78", "handler_id": "card_tokenized"}),
        ),
        (
            "$.payment_data.payment_terms",
            json!({"handler_id": "card_tokenized", "instrument": card, "purchase_order_number": "PO-77",
                "payment_terms": "net_30", "due_date": "2026-07-01T00:00:00Z"}),
        ),
        (
            "$.payment_data.approval_required",
            json!({"handler_id": "card_tokenized", "instrument": card, "approval_required": true}),
        ),
    ] {
        let (status, session) =
            json_of(one.post(&format!("/{id}/complete"), &uuid(), &json!({"payment_data": data})).await).await;
        assert_eq!(status, StatusCode::OK, "{session}");
        assert_eq!(session["status"], "ready_for_payment", "the session can still be paid by card: {session}");
        assert_eq!(codes(&session), [("unsupported".to_string(), param.to_string())], "{session}");
        assert!(session.get("order").is_none_or(Value::is_null));
    }
    assert!(money_moved(&app).await.is_empty(), "nothing charged");
    // A card with a purchase order number, immediate terms and approval not required: paid once.
    let data = json!({"handler_id": "card_tokenized", "instrument": card, "purchase_order_number": "PO-77",
        "payment_terms": "immediate", "approval_required": false});
    let (status, paid) =
        json_of(one.post(&format!("/{id}/complete"), &uuid(), &json!({"payment_data": data})).await).await;
    assert_eq!((status, paid["status"].as_str()), (StatusCode::OK, Some("completed")), "{paid}");
    assert_eq!(money_moved(&app).await, [amount]);
}

#[tokio::test]
async fn a_provider_failure_is_a_503_never_stored_and_the_retry_charges_once() {
    let app = acp_app().await;
    let one = Platform::new(&app, KEY_ONE);
    let (id, amount) = ready_session(&one).await;
    let token = vault_token(&app, &id, amount, APPROVES).await;
    app.provider.set_faults("5xx*1").await;
    let failed = one.post(&format!("/{id}/complete"), "pay-1", &complete_body(&token)).await;
    assert_eq!(failed.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(failed.headers().contains_key("retry-after"));
    let (_, error) = json_of(failed).await;
    assert_eq!(
        (error["type"].as_str(), error["code"].as_str()),
        (Some("service_unavailable"), Some("service_unavailable"))
    );
    // GET meanwhile: the charge's outcome is not known, so the session is in progress.
    let (_, meanwhile) = json_of(one.get(&id).await).await;
    assert_eq!(meanwhile["status"], "complete_in_progress", "{meanwhile}");

    // The retry (same key) is a fresh request: it resumes the same order and charges once.
    app.clock.advance(Duration::from_secs(60));
    let (status, done) = json_of(one.post(&format!("/{id}/complete"), "pay-1", &complete_body(&token)).await).await;
    assert_eq!((status, done["status"].as_str()), (StatusCode::OK, Some("completed")), "{done}");
    assert_eq!(money_moved(&app).await, [6800]);
}

#[tokio::test]
async fn a_lost_answer_is_resumed_by_another_key_without_a_second_charge() {
    let app = spawn_app_with(|config| {
        with_platforms(config);
        config.payments_timeout_ms = 1500;
    })
    .await;
    let one = Platform::new(&app, KEY_ONE);
    let (id, amount) = ready_session(&one).await;
    let token = vault_token(&app, &id, amount, APPROVES).await;
    // The provider charges and its answer never arrives.
    app.provider.set_faults("timeout*1").await;
    let lost = one.post(&format!("/{id}/complete"), "pay-1", &complete_body(&token)).await;
    assert_eq!(lost.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(money_moved(&app).await, [6800], "the provider did charge");

    // While the charge could still be in flight, another complete waits, and so do an update and
    // a cancel: neither may change or drop a session that may be paid.
    let (status, busy) = json_of(one.post(&format!("/{id}/complete"), "pay-2", &complete_body(&token)).await).await;
    assert_eq!((status, busy["code"].as_str()), (StatusCode::CONFLICT, Some("session_complete_in_progress")));
    let update = json!({"order_notes": "changed my mind"});
    let (status, busy) = json_of(one.post(&format!("/{id}"), "update-1", &update).await).await;
    assert_eq!((status, busy["code"].as_str()), (StatusCode::CONFLICT, Some("session_complete_in_progress")), "{busy}");
    let (status, busy) = json_of(one.post(&format!("/{id}/cancel"), "cancel-1", &json!({})).await).await;
    assert_eq!((status, busy["code"].as_str()), (StatusCode::CONFLICT, Some("session_complete_in_progress")), "{busy}");
    // Afterwards, another key (the platform lost its own) finds the charge and completes the session.
    app.clock.advance(Duration::from_secs(120));
    let (status, done) = json_of(one.post(&format!("/{id}/complete"), "pay-3", &complete_body(&token)).await).await;
    assert_eq!((status, done["status"].as_str()), (StatusCode::OK, Some("completed")), "{done}");
    assert_eq!(money_moved(&app).await, [6800], "resumed, not charged again");
}

#[tokio::test]
async fn concurrent_completes_of_one_session_charge_once() {
    let app = acp_app().await;
    let one = Platform::new(&app, KEY_ONE);
    let (id, amount) = ready_session(&one).await;
    let token = vault_token(&app, &id, amount, APPROVES).await;
    app.provider.set_latency_ms(200).await;
    let path = format!("/{id}/complete");
    let body = complete_body(&token);
    let answers = futures::future::join_all((0..8).map(|i| {
        let (one, path, body) = (&one, &path, &body);
        async move { json_of(one.post(path, &format!("race-{}", i % 4), body).await).await }
    }))
    .await;
    let mut orders = Vec::new();
    for (status, answer) in &answers {
        match status.as_u16() {
            200 => orders.push(answer["order"]["id"].clone()),
            409 => assert!(
                ["session_complete_in_progress", "idempotency_in_flight"]
                    .contains(&answer["code"].as_str().unwrap_or("")),
                "{answer}"
            ),
            other => panic!("unexpected {other}: {answer}"),
        }
    }
    assert!(!orders.is_empty());
    orders.dedup();
    assert_eq!(orders.len(), 1, "one order: {orders:?}");
    assert_eq!(money_moved(&app).await, [6800]);
}

/// Two ready sessions want the last units of tr-055 (3 in stock: one session all three, the
/// other one) and complete at once: stock is taken when the order is created, so exactly one
/// is paid; the other is told `out_of_stock` and charged nothing.
#[tokio::test]
async fn two_sessions_completing_for_the_last_units_sell_them_once() {
    let app = acp_app().await;
    let one = Platform::new(&app, KEY_ONE);
    let mut sessions = Vec::new();
    for (key, units) in [("all-three", 3), ("just-one", 1)] {
        let body = json!({"line_items": vec![json!({"id": "tr-055"}); units], "currency": "usd", "capabilities": {},
            "fulfillment_details": {"address": address("US", "CA", "94103")}});
        let (status, session) = json_of(one.post("", key, &body).await).await;
        assert_eq!((status, session["status"].as_str()), (StatusCode::CREATED, Some("ready_for_payment")), "{session}");
        let id = session["id"].as_str().unwrap().to_string();
        let amount = total(&session, "total").unwrap();
        sessions.push((id.clone(), amount, vault_token(&app, &id, amount, APPROVES).await));
    }
    app.provider.set_latency_ms(100).await;
    let answers = futures::future::join_all(sessions.iter().map(|(id, _, token)| {
        let one = &one;
        async move { json_of(one.post(&format!("/{id}/complete"), "pay", &complete_body(token)).await).await }
    }))
    .await;
    let completed: Vec<usize> = (0..2).filter(|&i| answers[i].1["status"] == "completed").collect();
    assert_eq!(completed.len(), 1, "exactly one session is paid: {answers:?}");
    let (winner, loser) = (completed[0], 1 - completed[0]);
    let (status, refused) = &answers[loser];
    assert_eq!((*status, refused["status"].as_str()), (StatusCode::OK, Some("not_ready_for_payment")), "{refused}");
    assert!(codes(refused).iter().any(|(code, _)| code == "out_of_stock"), "{refused}");
    assert!(refused.get("order").is_none(), "{refused}");
    assert_eq!(money_moved(&app).await, [sessions[winner].1], "one charge, the winner's");
}

/// The server binary with ACP on (platform `one`), charging `provider`, dying at `failpoint`.
async fn acp_server(db: &Path, provider: &SandboxPay, failpoint: &str) -> ServerProcess {
    let platforms = db.with_file_name("platforms.json");
    let list = json!([{"name": "one", "api_key": KEY_ONE, "webhook_url": "https://one.example/hooks", "webhook_secret": "whsec_one_0123456789abcdef0123456789"}]);
    std::fs::write(&platforms, list.to_string()).unwrap();
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
        "--acp-platforms",
        &platforms.to_string_lossy(),
    ];
    start_server_binary(db, &flags, "warn", Stdio::null()).await
}

/// A POST to `server`'s ACP API: the status and JSON body, or the transport's error.
async fn acp_post(server: &ServerProcess, path: &str, key: &str, body: &Value) -> Result<(StatusCode, Value), String> {
    let response = reqwest::Client::new()
        .post(format!("{}/acp/checkout_sessions{path}", server.url))
        .bearer_auth(KEY_ONE)
        .header("API-Version", "2026-04-17")
        .header("Idempotency-Key", key)
        .json(body)
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status();
    Ok((status, response.json().await.map_err(|e| e.to_string())?))
}

/// Kills the server (SIGABRT at `failpoint`) mid-complete, restarts it on the same database,
/// and retries with `retry_key`: one paid order, one charge.
async fn crash_mid_complete(failpoint: &'static str, retry_key: &str) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("giftgenius.db");
    let provider = SandboxPay::start();
    let mut doomed = acp_server(&db, &provider, failpoint).await;
    let create = json!({"line_items": [{"id": "hh-010"}], "currency": "usd", "capabilities": {},
        "fulfillment_details": {"address": address("US", "CA", "94103")}});
    let (status, session) = acp_post(&doomed, "", "create", &create).await.expect("create");
    assert_eq!((status, session["status"].as_str()), (StatusCode::CREATED, Some("ready_for_payment")), "{session}");
    let id = session["id"].as_str().unwrap().to_string();
    let token = token_from(&provider, &id, total(&session, "total").unwrap(), APPROVES).await;
    let complete = complete_body(&token);
    let path = format!("/{id}/complete");

    let outcome = acp_post(&doomed, &path, "pay-1", &complete).await;
    assert!(outcome.is_err(), "{failpoint}: the server should have died mid-complete, got {outcome:?}");
    assert!(!doomed.wait().success(), "{failpoint}: the process aborted");

    let restarted = acp_server(&db, &provider, "").await;
    let mut last = None;
    // The lease (2.5 s) and the charging window (0.5 s + 1 s) bound how long a retry waits.
    for _ in 0..100 {
        let (status, answer) = acp_post(&restarted, &path, retry_key, &complete).await.expect("the retry answers");
        if status == StatusCode::CONFLICT {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        last = Some((status, answer));
        break;
    }
    let (status, answer) = last.unwrap_or_else(|| panic!("{failpoint}: the retry never got past 409"));
    assert_eq!((status, answer["status"].as_str()), (StatusCode::OK, Some("completed")), "{failpoint}: {answer}");
    assert_eq!(provider.charges().await, 1, "{failpoint}: exactly one charge");
    let store = giftgenius_commerce::store::Store::connect(&db.to_string_lossy()).await.unwrap();
    let paid = store.orders_with_status(giftgenius_commerce::store::OrderStatusColumn::Paid).await.unwrap();
    assert_eq!(paid.len(), 1, "{failpoint}: exactly one paid order");
    assert_eq!(answer["order"]["id"], paid[0].id.as_str());
}

#[tokio::test]
async fn a_crash_after_the_order_is_created_then_a_retry_charges_once() {
    crash_mid_complete(giftgenius_commerce::failpoints::AFTER_ORDER_CREATED, "pay-1").await;
}

#[tokio::test]
async fn a_crash_after_the_provider_charged_then_a_retry_charges_once() {
    crash_mid_complete(giftgenius_commerce::failpoints::AFTER_PAYMENT_CHARGED, "pay-1").await;
}

#[tokio::test]
async fn a_crash_after_the_provider_charged_then_another_key_finds_the_charge() {
    crash_mid_complete(giftgenius_commerce::failpoints::AFTER_PAYMENT_CHARGED, "pay-after-crash").await;
}

#[tokio::test]
async fn a_completed_session_announces_its_order_to_the_platforms_webhook_signed() {
    let receiver =
        Receiver::start("whsec_one_0123456789abcdef0123456789", giftgenius_commerce::clock::Clock::System).await;
    let dir = tempfile::tempdir().unwrap();
    let platforms = dir.path().join("platforms.json");
    let list = json!([{"name": "one", "api_key": KEY_ONE, "webhook_url": receiver.url, "webhook_secret": "whsec_one_0123456789abcdef0123456789"}]);
    std::fs::write(&platforms, list.to_string()).unwrap();
    let app = spawn_app_with(|config| {
        config.acp_platforms = Some(platforms.clone());
        config.webhook_poll_ms = 20;
    })
    .await;
    receiver.set_clock(app.clock.clone());
    let one = Platform::new(&app, KEY_ONE);
    let (id, amount) = ready_session(&one).await;
    let token = vault_token(&app, &id, amount, APPROVES).await;
    let (_, done) = json_of(one.post(&format!("/{id}/complete"), "pay-1", &complete_body(&token)).await).await;
    assert_eq!(done["status"], "completed", "{done}");
    // A retry and a second complete announce nothing more: one order, one order_create.
    let (_, _) = json_of(one.post(&format!("/{id}/complete"), "pay-2", &complete_body(&token)).await).await;

    let seen = receiver.wait_until("the order_create", |seen| seen.iter().any(|s| s.answered == 200)).await;
    let events = receiver.accepted();
    assert_eq!(events.len(), 1, "{seen:#?}");
    let event = &seen[0];
    assert!(event.signature_ok, "Merchant-Signature verifies under the platform's secret");
    assert_eq!(event.body["type"], "order_create");
    assert_eq!(event.body["data"], done["order"], "the event carries the order the complete answered");
}

#[tokio::test]
async fn an_acp_buyers_data_is_deleted_on_request_and_the_financial_record_stays() {
    let app = acp_app().await;
    let one = Platform::new(&app, KEY_ONE);
    let (id, amount) = ready_session(&one).await;
    let token = vault_token(&app, &id, amount, APPROVES).await;
    let (_, done) = json_of(one.post(&format!("/{id}/complete"), "pay-1", &complete_body(&token)).await).await;
    let order = done["order"]["id"].as_str().unwrap().to_string();
    // Another buyer's session stays.
    let other = json!({"line_items": [{"id": "hh-001"}], "currency": "usd", "capabilities": {},
        "buyer": {"email": "bo@example.com"}});
    let (_, kept) = json_of(one.post("", "other", &other).await).await;

    let store = &app.state.store;
    let deleted = store.delete_acp_buyer_data(" ANA@Example.com ", app.clock.now_ms()).await.unwrap();
    assert_eq!((deleted.checkout_sessions, deleted.orders_anonymized), (1, 1), "{deleted:?}");
    assert!(deleted.idempotency_keys >= 2, "the create's and the complete's stored answers: {deleted:?}");
    // The session and every stored answer that showed it are gone: no replay shows the address.
    let (status, _) = json_of(one.get(&id).await).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, again) = json_of(one.post(&format!("/{id}/complete"), "pay-1", &complete_body(&token)).await).await;
    assert_eq!((status, again["code"].as_str()), (StatusCode::NOT_FOUND, Some("session_not_found")));
    // The order is a financial record now: no delivery details, still paid, its page still opens.
    let row = store.order_by_id(&order).await.unwrap().unwrap();
    assert_eq!((row.delivery, row.destination_city, row.total_minor), (None, None, 6800));
    assert!(row.anonymized_at_ms.is_some());
    let (status, other_session) = json_of(one.get(kept["id"].as_str().unwrap()).await).await;
    assert_eq!((status, &other_session["buyer"]["email"]), (StatusCode::OK, &json!("bo@example.com")));
    assert_eq!(money_moved(&app).await, [6800]);
}

/// Gift wrap in ACP: `gift_wrap` items are one wrapped gift each, answered as a child line of
/// the gift (`parent_id`) at the merchant's price per gift with a `gift_wrap` total in the
/// session's total; more wraps than gifts, or a merchant that does not wrap, is a message the
/// buyer can act on; a wrapped session is paid once at its total and its order keeps the wrap.
#[tokio::test]
async fn gift_wrap_is_a_child_line_of_the_gift_and_paid_with_it() {
    let app = acp_app().await;
    let one = Platform::new(&app, KEY_ONE);
    let ship_to = json!({"email": "ana@example.com", "address": address("US", "CA", "94103")});
    let body = json!({"line_items": [{"id": "hh-001"}, {"id": "gift_wrap"}, {"id": "hh-001"}], "currency": "usd",
        "capabilities": {}, "fulfillment_details": ship_to});
    let (status, session) = json_of(one.post("", &uuid(), &body).await).await;
    assert_eq!((status, session["status"].as_str()), (StatusCode::CREATED, Some("ready_for_payment")), "{session}");
    let lines = session["line_items"].as_array().unwrap();
    assert_eq!(lines.len(), 2, "{session}");
    let (gift, wrap) = (&lines[0], &lines[1]);
    assert_eq!((gift["id"].as_str(), gift["quantity"].as_i64()), (Some("li_hh-001"), Some(2)));
    assert_eq!(wrap["item"]["id"], "gift_wrap");
    assert_eq!((wrap["parent_id"].as_str(), wrap["quantity"].as_i64()), (Some("li_hh-001"), Some(1)), "{wrap}");
    assert_eq!(wrap["unit_amount"], 599, "Hearth & Home's price per gift");
    assert_eq!(total(&session, "gift_wrap"), Some(599));
    assert_eq!(total(&session, "total"), Some(2 * 6800 + 599), "items, wrap, free standard shipping");
    assert!(gift.get("parent_id").is_none());

    // Three wraps for two gifts: a message on the wrap, not ready.
    let three = json!({"line_items": [{"id": "hh-001"}, {"id": "hh-001"}, {"id": "gift_wrap"}, {"id": "gift_wrap"},
        {"id": "gift_wrap"}]});
    let id = session["id"].as_str().unwrap().to_string();
    let (_, too_many) = json_of(one.post(&format!("/{id}"), &uuid(), &three).await).await;
    assert_eq!(too_many["status"], "not_ready_for_payment", "{too_many}");
    assert!(codes(&too_many).contains(&("invalid".into(), "$.line_items[2]".into())), "{too_many}");
    // Trailhead does not wrap; wrap alone is no order.
    let tent = json!({"line_items": [{"id": "tr-001"}, {"id": "gift_wrap"}], "currency": "usd", "capabilities": {},
        "fulfillment_details": ship_to});
    let (_, unwrapped) = json_of(one.post("", &uuid(), &tent).await).await;
    assert!(codes(&unwrapped).contains(&("unsupported".into(), "$.line_items[1]".into())), "{unwrapped}");
    assert!(unwrapped["messages"][0]["content"].as_str().unwrap().contains("does not gift-wrap"), "{unwrapped}");
    let alone = json!({"line_items": [{"id": "gift_wrap"}], "currency": "usd", "capabilities": {}});
    let (status, refused) = json_of(one.post("", &uuid(), &alone).await).await;
    assert_eq!((status, refused["param"].as_str()), (StatusCode::BAD_REQUEST, Some("$.line_items")), "{refused}");

    // Back to one wrap for the two gifts, then paid: one charge at the total, the order keeps the wrap.
    let (_, ready) =
        json_of(one.post(&format!("/{id}"), &uuid(), &json!({"line_items": body["line_items"]})).await).await;
    let amount = total(&ready, "total").unwrap();
    assert_eq!((ready["status"].as_str(), amount), (Some("ready_for_payment"), 2 * 6800 + 599), "{ready}");
    let token = vault_token(&app, &id, amount, APPROVES).await;
    let (status, done) = json_of(one.post(&format!("/{id}/complete"), "pay-wrap", &complete_body(&token)).await).await;
    assert_eq!((status, done["status"].as_str()), (StatusCode::OK, Some("completed")), "{done}");
    assert_eq!(total(&done["order"], "gift_wrap"), Some(599), "{done}");
    let estimated = &done["order"]["estimated_delivery"];
    let selected = done["fulfillment_options"].as_array().unwrap().iter().find(|o| o["id"] == "fo_standard").unwrap();
    assert_eq!(
        (&estimated["earliest"], &estimated["latest"]),
        (&selected["earliest_delivery_time"], &selected["latest_delivery_time"]),
        "the order promises what the chosen option said: {done}"
    );
    assert_eq!(money_moved(&app).await, [amount]);
    let order_id = done["order"]["id"].as_str().unwrap();
    let order = app.state.store.order_by_id(order_id).await.unwrap().unwrap();
    assert_eq!((order.gift_wrap_minor, order.quantity, order.total_minor), (Some(599), 2, amount));
}
