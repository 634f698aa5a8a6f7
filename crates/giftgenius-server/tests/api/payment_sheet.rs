//! The host's payment sheet (docs/acp.md §14): prepare_order's widget-only sheet session, a vault
//! token from the sandbox provider's delegate_payment for it, and `complete_checkout`, which pays
//! it through commit_order's path: one order and one charge per session whatever the retries.

use giftgenius_commerce::store::OrderStatusColumn;
use giftgenius_types::sheet::META_CHECKOUT_SHEET;
use serde_json::{Value, json};

use crate::support::{
    TestApp, call_as, charges, commit_args, delegate_body, meta_of, orders, prepare_as, spawn_app, spawn_app_with,
    text_of, with_recipient,
};

const GOOD: &str = "4242424242424242";
const DECLINES: &str = "4000000000000002";

/// prepare_order for `subject`; returns the sheet session from its widget-only `_meta`.
async fn sheet_session(app: &TestApp, subject: &str) -> Value {
    let client = app.client().await;
    let (result, structured) =
        call_as(&client, subject, "prepare_order", with_recipient(json!({"gift_id": "pp-001"}))).await;
    assert_eq!(structured["ok"], true, "{structured}");
    let session = meta_of(&result, META_CHECKOUT_SHEET).expect("the sheet session in _meta").clone();
    // What the model reads never names the session.
    let id = session["id"].as_str().unwrap();
    assert!(!structured.to_string().contains(id) && !text_of(&result).contains(id));
    session
}

/// A vault token for `session` (its id, merchant and total) from the test card `number`.
async fn token_for(app: &TestApp, session: &Value, number: &str, key: &str) -> String {
    let mut body = delegate_body(number);
    body["allowance"]["checkout_session_id"] = session["id"].clone();
    body["allowance"]["merchant_id"] = session["payment_provider"]["merchant_id"].clone();
    let total = session["totals"].as_array().unwrap().iter().find(|t| t["type"] == "total").unwrap();
    body["allowance"]["max_amount"] = total["amount"].clone();
    body["allowance"]["currency"] = json!(session["currency"].as_str().unwrap().to_lowercase());
    app.provider.vault_token(key, &body).await
}

fn complete_args(session: &Value, token: &str) -> Value {
    json!({
        "checkout_session_id": session["id"],
        "buyer": {"first_name": "Jane", "last_name": "Doe", "email": "jane@example.com"},
        "payment_data": {"token": token, "provider": "stripe"}
    })
}

#[tokio::test]
async fn the_sheet_session_is_the_drafts_in_the_2025_09_29_shape() {
    let app = spawn_app().await;
    let session = sheet_session(&app, "u1").await;
    assert!(session["id"].as_str().unwrap().starts_with("cs_"));
    assert_eq!(session["status"], "ready_for_payment");
    assert_eq!(session["payment_mode"], "test");
    assert_eq!(session["payment_provider"]["provider"], "stripe");
    assert_eq!(session["payment_provider"]["supported_payment_methods"], json!(["card"]));
    assert_eq!(session["line_items"][0]["item"], json!({"id": "pp-001", "quantity": 1}));
    assert_eq!(session["fulfillment_address"]["city"], "Lisboa");
    let links: Vec<&str> = session["links"].as_array().unwrap().iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(links, ["terms_of_use", "privacy_policy"]);
    // Without delivery details there is nothing to ship to, so no sheet.
    let client = app.client().await;
    let (result, structured) = call_as(&client, "u2", "prepare_order", json!({"gift_id": "pp-001"})).await;
    assert_eq!(structured["ok"], true);
    assert!(meta_of(&result, META_CHECKOUT_SHEET).is_none());
}

#[tokio::test]
async fn the_sheet_pays_once_whatever_the_retries() {
    let app = spawn_app().await;
    let session = sheet_session(&app, "u1").await;
    let token = token_for(&app, &session, GOOD, "d-1").await;
    let client = app.client().await;
    let (_, paid) = call_as(&client, "u1", "complete_checkout", complete_args(&session, &token)).await;
    assert_eq!(paid["ok"], true, "{paid}");
    assert_eq!(paid["tool"], "complete_checkout");
    let order = paid["order"]["id"].as_str().unwrap().to_string();
    assert_eq!(paid["order"]["status"], "paid");
    let (_, again) = call_as(&client, "u1", "complete_checkout", complete_args(&session, &token)).await;
    assert_eq!(again["order"]["id"], order.as_str(), "{again}");
    // Even a second token for the same session answers with the same order.
    let other = token_for(&app, &session, GOOD, "d-2").await;
    let (_, third) = call_as(&client, "u1", "complete_checkout", complete_args(&session, &other)).await;
    assert_eq!(third["order"]["id"], order.as_str(), "{third}");
    assert_eq!((charges(&app).await, orders(&app).await), (1, 1));
}

#[tokio::test]
async fn concurrent_sheet_payments_charge_once() {
    let app = spawn_app().await;
    let session = sheet_session(&app, "u1").await;
    let token = token_for(&app, &session, GOOD, "d-1").await;
    let (a, b) = (app.client().await, app.client().await);
    let args = complete_args(&session, &token);
    let ((_, first), (_, second)) = tokio::join!(
        call_as(&a, "u1", "complete_checkout", args.clone()),
        call_as(&b, "u1", "complete_checkout", args.clone())
    );
    for answer in [&first, &second] {
        let ok = answer["ok"] == true || answer["error"]["code"] == "REQUEST_IN_PROGRESS";
        assert!(ok, "{answer}");
    }
    let (_, settled) = call_as(&a, "u1", "complete_checkout", args).await;
    assert_eq!(settled["ok"], true, "{settled}");
    assert_eq!((charges(&app).await, orders(&app).await), (1, 1));
}

/// Two payments of one session with two different cards at once (two sheets, or a host that
/// retried with a fresh token): their derived keys differ, so both run. The loser must get a
/// clear answer — the winner's order, or a retryable "in progress" — never an internal error,
/// and only one card is charged. Once settled, either token gets the one order.
#[tokio::test]
async fn two_payments_with_different_tokens_at_once_charge_once_and_the_loser_is_told_clearly() {
    let app = spawn_app().await;
    let session = sheet_session(&app, "u1").await;
    let first_token = token_for(&app, &session, GOOD, "d-1").await;
    let second_token = token_for(&app, &session, GOOD, "d-2").await;
    let (a, b) = (app.client().await, app.client().await);
    // The first payment is held at the provider while the second arrives.
    app.provider.hold().await;
    let first = call_as(&a, "u1", "complete_checkout", complete_args(&session, &first_token));
    let second = async {
        app.provider.wait_for("the first charge", |ledger| !ledger.is_empty()).await;
        let answer = call_as(&b, "u1", "complete_checkout", complete_args(&session, &second_token)).await;
        app.provider.release().await;
        answer
    };
    let ((_, first), (second_result, second)) = tokio::join!(first, second);
    assert_eq!(first["ok"], true, "{first}");
    let order = first["order"]["id"].as_str().unwrap().to_string();
    let clear = second["ok"] == true && second["order"]["id"] == order.as_str()
        || second["error"]["code"] == "REQUEST_IN_PROGRESS" && second["error"]["retryable"] == true;
    assert!(clear, "the loser's answer: {second}");
    assert_ne!(second["error"]["code"], "INTERNAL_ERROR", "{}", text_of(&second_result));

    // Both at the same moment, on a fresh session: one order, one charge, no internal error.
    let fresh = sheet_session(&app, "u2").await;
    let tokens = [token_for(&app, &fresh, GOOD, "d-3").await, token_for(&app, &fresh, GOOD, "d-4").await];
    app.provider.set_latency_ms(200).await;
    let ((_, x), (_, y)) = tokio::join!(
        call_as(&a, "u2", "complete_checkout", complete_args(&fresh, &tokens[0])),
        call_as(&b, "u2", "complete_checkout", complete_args(&fresh, &tokens[1]))
    );
    for answer in [&x, &y] {
        let clear = answer["ok"] == true || answer["error"]["code"] == "REQUEST_IN_PROGRESS";
        assert!(clear, "{answer}");
    }
    app.provider.set_latency_ms(0).await;

    // Settled: either token answers with the session's one order.
    for (subject, session, token) in
        [("u1", &session, &second_token), ("u2", &fresh, &tokens[0]), ("u2", &fresh, &tokens[1])]
    {
        let (_, settled) = call_as(&a, subject, "complete_checkout", complete_args(session, token)).await;
        assert_eq!(settled["ok"], true, "{settled}");
    }
    let (_, again) = call_as(&a, "u1", "complete_checkout", complete_args(&session, &second_token)).await;
    assert_eq!(again["order"]["id"], order.as_str());
    assert_eq!((charges(&app).await, orders(&app).await), (2, 2), "one charge and one order per session");
}

#[tokio::test]
async fn a_declined_card_charges_nothing_and_another_card_pays() {
    let app = spawn_app().await;
    let session = sheet_session(&app, "u1").await;
    let declining = token_for(&app, &session, DECLINES, "d-1").await;
    let client = app.client().await;
    let (result, declined) = call_as(&client, "u1", "complete_checkout", complete_args(&session, &declining)).await;
    assert_eq!(declined["ok"], false, "{declined}");
    assert_eq!(declined["error"]["code"], "PAYMENT_DECLINED");
    assert_eq!(result.is_error, Some(true));
    assert!(!text_of(&result).contains(&declining), "the token is never echoed");
    assert_eq!(charges(&app).await, 0);
    let good = token_for(&app, &session, GOOD, "d-2").await;
    let (_, paid) = call_as(&client, "u1", "complete_checkout", complete_args(&session, &good)).await;
    assert_eq!(paid["ok"], true, "{paid}");
    assert_eq!(charges(&app).await, 1);
}

#[tokio::test]
async fn a_token_for_another_session_or_another_users_draft_pays_nothing() {
    let app = spawn_app().await;
    let mine = sheet_session(&app, "u1").await;
    let theirs = sheet_session(&app, "u2").await;
    let client = app.client().await;
    // u2's token presented for u1's session: the provider refuses it.
    let foreign = token_for(&app, &theirs, GOOD, "d-1").await;
    let (_, refused) = call_as(&client, "u1", "complete_checkout", complete_args(&mine, &foreign)).await;
    assert_eq!(refused["error"]["code"], "PAYMENT_DECLINED", "{refused}");
    // u1 paying u2's session: not theirs, so there is no such draft.
    let token = token_for(&app, &theirs, GOOD, "d-2").await;
    let (_, not_theirs) = call_as(&client, "u1", "complete_checkout", complete_args(&theirs, &token)).await;
    assert_eq!(not_theirs["error"]["code"], "DRAFT_NOT_FOUND", "{not_theirs}");
    assert_eq!(charges(&app).await, 0);
}

/// Issue 39 item 5: a made-up token costs nothing. Each is refused before an order exists (the
/// provider's token check records nothing): five of them leave no order and no row in the
/// provider's ledger. An account has five attempts per draft per hour; the sixth is
/// HOURLY_LIMIT_EXCEEDED with `retry_after_ms`, even with a real token, and charges nothing;
/// after that wait the real token pays exactly once.
#[tokio::test]
async fn made_up_tokens_make_no_order_and_no_charge_and_attempts_per_draft_are_limited() {
    let app = spawn_app_with(|c| c.draft_ttl_secs = 4 * 3600).await;
    let session = sheet_session(&app, "u1").await;
    let client = app.client().await;
    for n in 0..5 {
        let made_up = format!("vt_made_up_{n}");
        let (result, refused) = call_as(&client, "u1", "complete_checkout", complete_args(&session, &made_up)).await;
        assert_eq!(refused["error"]["code"], "PAYMENT_DECLINED", "{refused}");
        assert!(!text_of(&result).contains(&made_up), "the token is never echoed");
    }
    assert_eq!(orders(&app).await, 0, "no order for a made-up token");
    assert_eq!(app.provider.ledger().await.len(), 0, "no charge request reached the provider");

    let real = token_for(&app, &session, GOOD, "d-1").await;
    let (_, limited) = call_as(&client, "u1", "complete_checkout", complete_args(&session, &real)).await;
    assert_eq!(limited["error"]["code"], "HOURLY_LIMIT_EXCEEDED", "{limited}");
    let wait = limited["error"]["retry_after_ms"].as_u64().expect("retry_after_ms");
    assert!(wait > 0 && wait <= 3_600_000, "{wait}");
    assert_eq!((orders(&app).await, app.provider.ledger().await.len()), (0, 0));
    // Another account's attempts on its own draft are its own.
    let theirs = sheet_session(&app, "u2").await;
    let (_, other) = call_as(&client, "u2", "complete_checkout", complete_args(&theirs, "vt_made_up_x")).await;
    assert_eq!(other["error"]["code"], "PAYMENT_DECLINED", "{other}");

    app.clock.advance(std::time::Duration::from_millis(wait));
    let (_, paid) = call_as(&client, "u1", "complete_checkout", complete_args(&session, &real)).await;
    assert_eq!(paid["order"]["status"], "paid", "{paid}");
    let (_, again) = call_as(&client, "u1", "complete_checkout", complete_args(&session, &real)).await;
    assert_eq!(again["order"]["id"], paid["order"]["id"], "{again}");
    assert_eq!((charges(&app).await, orders(&app).await, app.provider.ledger().await.len()), (1, 1, 1));
}

/// Issue 39 item 4: a token never pays an order another key created. Confirm's commit finds the
/// provider down (the order stays pending under its key); later, past its charging window, a
/// sheet payment of the same draft is REQUEST_IN_PROGRESS (retryable), charges nothing and
/// leaves the order as it was; the commit's own retry then pays it once.
#[tokio::test]
async fn a_token_never_takes_over_an_order_another_key_left_pending() {
    let app = spawn_app().await;
    let client = app.client().await;
    let (draft, confirmation) = prepare_as(&client, "u1", "pp-001").await;
    let session = sheet_session(&app, "u1").await;
    assert_eq!(session["id"], format!("cs_{draft}").as_str(), "the same draft");
    app.provider.set_faults("5xx*1").await;
    let (_, down) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_1", &confirmation)).await;
    assert_eq!(down["error"]["code"], "PAYMENT_PROVIDER_UNAVAILABLE", "{down}");
    app.clock.advance(std::time::Duration::from_secs(20));

    let token = token_for(&app, &session, GOOD, "d-1").await;
    let (_, refused) = call_as(&client, "u1", "complete_checkout", complete_args(&session, &token)).await;
    assert_eq!(refused["error"]["code"], "REQUEST_IN_PROGRESS", "{refused}");
    assert_eq!(refused["error"]["retryable"], true, "{refused}");
    let pending = app.state.store.orders_with_status(OrderStatusColumn::PendingPayment).await.unwrap();
    assert_eq!(pending.len(), 1, "the order is left pending, as it was");
    assert_eq!(charges(&app).await, 0, "the token charged nothing");

    let (_, paid) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_1", &confirmation)).await;
    assert_eq!(paid["order"]["status"], "paid", "{paid}");
    assert_eq!(paid["order"]["id"], pending[0].id.as_str());
    assert_eq!((charges(&app).await, orders(&app).await), (1, 1));
}

#[tokio::test]
async fn complete_checkout_is_listed_for_the_app_only() {
    let app = spawn_app().await;
    let client = app.client().await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let tool = tools.iter().find(|t| t.name == "complete_checkout").expect("listed for the host");
    let meta = tool.meta.as_ref().expect("_meta");
    assert_eq!(meta.0["openai/visibility"], "private");
    assert_eq!(meta.0["ui"]["visibility"], json!(["app"]));
}

/// The preview's sheet relay: card fields in, a vault token for the session out.
async fn relay(app: &TestApp, host: &str, session: &Value, number: &str) -> (u16, Value) {
    let total = session["totals"].as_array().unwrap().iter().find(|t| t["type"] == "total").unwrap();
    let body = json!({
        "checkout_session_id": session["id"], "max_amount": total["amount"], "currency": session["currency"],
        "number": number, "exp_month": "12", "exp_year": "2099", "cvc": "123", "name": "Jane Doe"
    });
    let response = reqwest::Client::new()
        .post(format!("{}/preview/sheet/delegate", app.local_url))
        .header("host", host)
        .json(&body)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn the_preview_relay_gives_a_usable_token_on_loopback_only() {
    let app = spawn_app_with(|c| c.preview = true).await;
    let session = sheet_session(&app, "u1").await;
    let (status, refused) = relay(&app, "attacker.example", &session, GOOD).await;
    assert_eq!(status, 403, "{refused}");
    let port = app.local_url.rsplit(':').next().unwrap().to_string();
    let (status, relayed) = relay(&app, &format!("localhost:{port}"), &session, GOOD).await;
    assert_eq!(status, 200, "{relayed}");
    let token = relayed["token"].as_str().expect("a vault token");
    assert!(token.starts_with("vt_"), "{relayed}");
    assert!(!relayed.to_string().contains(app.provider.delegate_key.expose()), "the key stays on the server");
    let client = app.client().await;
    let (_, paid) = call_as(&client, "u1", "complete_checkout", complete_args(&session, token)).await;
    assert_eq!(paid["ok"], true, "{paid}");
    assert_eq!(charges(&app).await, 1);
}
