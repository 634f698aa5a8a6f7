//! The checkout from a test's side: a draft and its confirmation token, commit arguments, what
//! exactly-once is counted in (the provider's charges, the store's orders), and the scenarios
//! the SQLite and the PostgreSQL tests both run.

use giftgenius_types::wire::META_REPLAYED;
use rmcp::RoleClient;
use rmcp::model::CallToolResult;
use rmcp::service::RunningService;
use serde_json::{Value, json};

use super::app::TestApp;
use super::calls::{call, call_as, meta_of, text_of};

/// Where prepare_order puts the confirmation token (widget-only `_meta`).
pub const TOKEN: &str = giftgenius_types::wire::META_CONFIRMATION_TOKEN;

/// A recipient in Lisbon, as prepare_order takes it.
pub fn recipient() -> Value {
    json!({"name": "Ana Silva", "address": {"line1": "Rua Augusta 100", "line2": "3º esq.", "city": "Lisboa",
        "postal_code": "1100-053", "country": "PT"}})
}

/// prepare_order arguments with [`recipient`] added (a draft must say where it goes before it
/// can be committed).
pub fn with_recipient(mut arguments: Value) -> Value {
    arguments["recipient"] = recipient();
    arguments
}

/// Charges in the sandbox provider's ledger: what exactly-once is counted in.
pub async fn charges(app: &TestApp) -> usize {
    app.provider.charges().await
}

/// Orders in the store, whatever their status.
pub async fn orders(app: &TestApp) -> i64 {
    app.state.store.order_count().await.expect("orders")
}

/// prepare_order for `subject` in a client of its own; returns (draft id, confirmation token).
pub async fn prepare(app: &TestApp, subject: &str, gift: &str) -> (String, String) {
    prepare_as(&app.client().await, subject, gift).await
}

/// prepare_order for `subject` through `client` (any server's); returns (draft id, confirmation token).
pub async fn prepare_as(client: &RunningService<RoleClient, ()>, subject: &str, gift: &str) -> (String, String) {
    let (result, structured) =
        call_as(client, subject, "prepare_order", with_recipient(json!({"gift_id": gift}))).await;
    draft_and_token(&result, &structured)
}

/// prepare_order in `client`'s MCP session, with no ChatGPT subject (the session is the user);
/// returns (draft id, confirmation token).
pub async fn prepare_in_session(client: &RunningService<RoleClient, ()>, gift: &str) -> (String, String) {
    let (result, structured) = call(client, "prepare_order", with_recipient(json!({"gift_id": gift}))).await;
    draft_and_token(&result, &structured)
}

fn draft_and_token(result: &CallToolResult, structured: &Value) -> (String, String) {
    assert_eq!(structured["ok"], true, "{structured}");
    let token = meta_of(result, TOKEN).and_then(Value::as_str).expect("token in _meta").to_string();
    (structured["draft"]["id"].as_str().expect("draft id").to_string(), token)
}

/// Arguments of commit_order.
pub fn commit_args(draft: &str, key: &str, token: &str) -> Value {
    json!({"draft_id": draft, "idempotency_key": key, "confirmation_token": token})
}

/// Checks that every result of a storm of identical commits is a success or a retryable
/// REQUEST_IN_PROGRESS; returns the successes.
pub fn successes_or_in_progress(results: &[(CallToolResult, Value)]) -> usize {
    let mut successes = 0;
    for (_, sc) in results {
        match (sc["ok"].as_bool(), sc["error"]["code"].as_str()) {
            (Some(true), _) => successes += 1,
            (Some(false), Some("REQUEST_IN_PROGRESS")) => {
                assert_eq!(sc["error"]["retryable"], true);
                assert!(sc["error"]["retry_after_ms"].as_u64().is_some());
            }
            other => panic!("unexpected response {other:?}: {sc}"),
        }
    }
    successes
}

/// A commit and the same commit again, checked the same way on either store: the same request
/// prepares the same draft, the commit pays it, the replay is the first answer byte for byte
/// (marked replayed), and there is one charge and one order.
pub async fn commit_then_replay_charges_once(app: &TestApp) {
    let (draft, token) = prepare(app, "u1", "tr-001").await;
    let (again, _) = prepare(app, "u1", "tr-001").await;
    assert_eq!(draft, again, "same request, same draft");
    let client = app.client().await;
    let (first, first_sc) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_seq", &token)).await;
    let (second, second_sc) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_seq", &token)).await;
    assert_eq!(first_sc["ok"], true, "{first_sc}");
    assert_eq!(first_sc["order"]["status"], "paid");
    assert_eq!(first_sc.to_string(), second_sc.to_string(), "replay is byte-for-byte");
    assert_eq!(text_of(&first), text_of(&second));
    assert_eq!(meta_of(&first, META_REPLAYED), None);
    assert_eq!(meta_of(&second, META_REPLAYED), Some(&json!(true)));
    assert_eq!(charges(app).await, 1);
    assert_eq!(orders(app).await, 1);
}
