//! Internal failures (a handler panic, a broken database) become `INTERNAL_ERROR` results with a
//! reference; the detail goes only to the server log under that reference; the server goes on.

use crate::support::with_recipient;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use giftgenius_commerce::failpoints::{ACP_CREATE_PANICS, COMMIT_ORDER_PANICS, SUGGEST_GIFTS_PANICS};
use giftgenius_server::panics::WITHHELD;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use crate::acp::{KEY_ONE, VERSION, create_body};
use crate::support::{
    ServerProcess, TOKEN, assert_no_leak, call, commit_args, connect, execute_sql, meta_of, spawn_app_with,
    start_server_binary, text_of,
};

/// Input no log line may hold: the injected panics below quote it in their messages, as std's
/// own panics quote the text a slice cut.
const MARKER: &str = "Zq7-input-marker";

/// The checks every internal failure must pass, whatever caused it.
fn assert_internal_error(result: &CallToolResult, sc: &Value, hidden: &[&str]) -> String {
    assert_eq!(sc["ok"], false, "{sc}");
    assert_eq!(result.is_error, Some(true));
    let error = &sc["error"];
    assert_eq!(error["code"], "INTERNAL_ERROR", "{sc}");
    assert_eq!(error["category"], "other", "{sc}");
    assert_eq!(error["retryable"], true, "{sc}");
    let reference = error["reference"].as_str().expect("a reference").to_string();
    assert!(reference.starts_with("req_") && reference.len() > 4, "{reference}");
    assert!(text_of(result).contains(&reference), "the text for the model quotes the reference");
    assert_no_leak(result, sc, hidden);
    reference
}

/// Renames a table behind the server's back, through its own connection to the same file.
async fn rename_table(db: &str, from: &str, to: &str) {
    execute_sql(db, format!("ALTER TABLE {from} RENAME TO {to}"), &[]).await;
}

#[tokio::test]
async fn a_panicking_handler_becomes_internal_error_and_the_server_keeps_serving() {
    let app = spawn_app_with(|c| c.failpoints = SUGGEST_GIFTS_PANICS.into()).await;
    let client = app.client().await;
    let (result, sc) = call(&client, "suggest_gifts", json!({"relationship_type": "friend"})).await;
    assert_internal_error(&result, &sc, &["injected", "failpoint", "panicked", "failpoints.rs"]);

    // The same session, the same handler and the other tools all still answer.
    let (result, sc) = call(&client, "suggest_gifts", json!({"relationship_type": "parent"})).await;
    assert_internal_error(&result, &sc, &["injected"]);
    let (_, sc) = call(&client, "prepare_order", with_recipient(json!({"gift_id": "hh-010"}))).await;
    assert_eq!(sc["ok"], true, "{sc}");
}

#[tokio::test]
async fn a_failing_database_becomes_internal_error_and_the_server_recovers_with_it() {
    let mut db = String::new();
    let app = spawn_app_with(|c| db = c.db.clone()).await;
    let client = app.client().await;
    let (_, sc) = call(&client, "prepare_order", with_recipient(json!({"gift_id": "hh-010"}))).await;
    assert_eq!(sc["ok"], true, "{sc}");

    rename_table(&db, "orders", "orders_elsewhere").await;
    let (result, sc) =
        call(&client, "prepare_order", with_recipient(json!({"gift_id": "hh-010", "quantity": 2}))).await;
    assert_internal_error(&result, &sc, &["no such table", "orders_elsewhere", "database", "SQL"]);
    // Calls that do not need the missing table keep working meanwhile.
    let (_, sc) = call(&client, "suggest_gifts", json!({"relationship_type": "friend"})).await;
    assert_eq!(sc["ok"], true, "{sc}");

    rename_table(&db, "orders_elsewhere", "orders").await;
    let (_, sc) = call(&client, "prepare_order", with_recipient(json!({"gift_id": "hh-010", "quantity": 3}))).await;
    assert_eq!(sc["ok"], true, "the database is back, so is prepare_order: {sc}");
}

// ----- the real binary, its JSON logs ------------------------------------------------------------

/// A directory for one server's database and its log: (the directory, the database, the log).
fn scratch() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (db, log) = (dir.path().join("giftgenius.db"), dir.path().join("stderr.log"));
    (dir, db, log)
}

async fn start_logging_server(db: &Path, log: &Path, failpoints: &str) -> ServerProcess {
    start_logging_server_with(db, log, failpoints, &[]).await
}

async fn start_logging_server_with(db: &Path, log: &Path, failpoints: &str, more: &[&str]) -> ServerProcess {
    let mut flags = vec!["--sandbox-latency-ms", "0", "--log-format", "json", "--failpoints", failpoints];
    flags.extend_from_slice(more);
    start_server_binary(db, &flags, "info", Stdio::from(std::fs::File::create(log).expect("log file"))).await
}

/// Every stderr line, each of which must be a JSON object.
fn json_log_lines(log: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(log).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str::<Value>(l)
                .unwrap_or_else(|e| panic!("with --log-format json every stderr line is JSON ({e}): {l}"))
        })
        .collect()
}

/// The line that reports the failure of the call `reference`: every line a call writes carries
/// its span (`tool_call` with `tool` and `reference`); the failure is the one with an `error`.
fn line_with_reference<'a>(lines: &'a [Value], reference: &str) -> &'a Value {
    lines
        .iter()
        .find(|l| l["span"]["reference"] == reference && l["fields"]["error"].is_string())
        .unwrap_or_else(|| panic!("no log line carries {reference}: {lines:#?}"))
}

#[tokio::test]
async fn the_detail_of_an_internal_error_is_in_the_json_log_under_its_reference_and_nowhere_else() {
    let (_dir, db, log) = scratch();
    let server = start_logging_server(&db, &log, SUGGEST_GIFTS_PANICS).await;
    let client = connect(&server.mcp_url()).await.expect("connects");

    let (result, sc) = call(&client, "suggest_gifts", json!({"relationship_type": MARKER})).await;
    let panic_ref = assert_internal_error(&result, &sc, &["injected", "failpoint", MARKER]);

    rename_table(&db.to_string_lossy(), "orders", "orders_elsewhere").await;
    let (result, sc) = call(&client, "prepare_order", with_recipient(json!({"gift_id": "hh-010"}))).await;
    let db_ref = assert_internal_error(&result, &sc, &["no such table"]);
    rename_table(&db.to_string_lossy(), "orders_elsewhere", "orders").await;
    let (_, sc) = call(&client, "prepare_order", with_recipient(json!({"gift_id": "hh-010"}))).await;
    assert_eq!(sc["ok"], true, "the server kept serving: {sc}");
    drop(client);
    drop(server);

    let lines = json_log_lines(&log);
    let panic_line = line_with_reference(&lines, &panic_ref);
    assert_eq!(panic_line["level"], "ERROR", "{panic_line}");
    assert_eq!(panic_line["span"]["tool"], "suggest_gifts", "{panic_line}");
    let detail = panic_line["fields"]["error"].as_str().unwrap_or_default();
    assert!(detail.contains("the handler panicked"), "{panic_line}");
    // The panic itself is a structured line too, not raw stderr text: its source location under
    // the call's reference, and not its message, which quotes the input.
    assert_panic_logged_without_input(&lines, &panic_ref);

    let db_line = line_with_reference(&lines, &db_ref);
    assert_eq!(db_line["span"]["tool"], "prepare_order", "{db_line}");
    let detail = db_line["fields"]["error"].as_str().unwrap_or_default();
    assert!(detail.contains("no such table: orders"), "{db_line}");
}

/// The panic hook's line for the call `reference`: where it happened, in the call's span, its
/// message withheld; and no line anywhere holds the input.
fn assert_panic_logged_without_input(lines: &[Value], reference: &str) {
    let panic_line = lines
        .iter()
        .find(|l| l["fields"]["panic"].is_string() && l["span"]["reference"] == reference)
        .unwrap_or_else(|| panic!("no panic line under {reference}: {lines:#?}"));
    assert_eq!(panic_line["fields"]["panic"], WITHHELD, "{panic_line}");
    assert!(panic_line["fields"]["location"].as_str().is_some_and(|l| l.contains("failpoints.rs")), "{panic_line}");
    assert_no_input_in(lines);
}

/// No log line holds [`MARKER`].
fn assert_no_input_in(lines: &[Value]) {
    let leaked: Vec<&Value> = lines.iter().filter(|l| l.to_string().contains(MARKER)).collect();
    assert!(leaked.is_empty(), "the log holds the input: {leaked:#?}");
}

// ----- a panic while holding an idempotency key (issue 39) -----------------------------------

#[tokio::test]
async fn a_tool_panicking_while_holding_its_key_answers_internal_error_frees_the_key_and_logs_no_input() {
    let (dir, db, log) = scratch();
    let server = start_logging_server(&db, &log, COMMIT_ORDER_PANICS).await;
    let client = connect(&server.mcp_url()).await.expect("connects");
    let (prepared, draft) = call(&client, "prepare_order", with_recipient(json!({"gift_id": "hh-010"}))).await;
    let token = meta_of(&prepared, TOKEN).and_then(Value::as_str).expect("a confirmation token");
    let commit = commit_args(draft["draft"]["id"].as_str().expect("a draft id"), &format!("ik_{MARKER}"), token);

    let (result, sc) = call(&client, "commit_order", commit.clone()).await;
    let reference = assert_internal_error(&result, &sc, &[MARKER, "injected", "failpoint"]);
    // The key was released: its retry runs the call again (and meets the same bug) instead of
    // REQUEST_IN_PROGRESS until the 30 s lease runs out.
    let (result, sc) = call(&client, "commit_order", commit.clone()).await;
    assert_internal_error(&result, &sc, &[MARKER]);
    drop(client);
    drop(server);
    let lines = json_log_lines(&log);
    assert_panic_logged_without_input(&lines, &reference);

    // Without the bug, the same key goes through at once.
    let server = start_logging_server(&db, &dir.path().join("after.log"), "").await;
    let client = connect(&server.mcp_url()).await.expect("connects");
    let (_, sc) = call(&client, "commit_order", commit).await;
    assert_eq!((&sc["ok"], &sc["order"]["status"]), (&json!(true), &json!("paid")), "{sc}");
}

/// An ACP create over REST under the key `key`, as platform `one`.
async fn acp_create(server: &ServerProcess, key: &str, body: &Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}/acp/checkout_sessions", server.url))
        .bearer_auth(KEY_ONE)
        .header("API-Version", VERSION)
        .header("Content-Type", "application/json")
        .header("Idempotency-Key", key)
        .json(body)
        .send()
        .await
        .expect("an answer, not a closed connection")
}

#[tokio::test]
async fn an_acp_route_panicking_while_holding_its_key_answers_its_500_frees_the_key_and_logs_no_input() {
    let (dir, db, log) = scratch();
    let platforms = dir.path().join("platforms.json");
    std::fs::write(&platforms, json!([{"name": "one", "api_key": KEY_ONE}]).to_string()).unwrap();
    let acp = ["--acp-platforms", platforms.to_str().expect("a UTF-8 path")];
    let server = start_logging_server_with(&db, &log, ACP_CREATE_PANICS, &acp).await;
    let mut body = create_body("hh-001");
    body["order_notes"] = json!(MARKER);

    let response = acp_create(&server, "k-panic", &body).await;
    assert_eq!(response.status(), reqwest::StatusCode::INTERNAL_SERVER_ERROR);
    let request_id = response.headers()["request-id"].to_str().expect("a Request-Id").to_string();
    let error: Value = response.json().await.expect("ACP's Error");
    assert_eq!((&error["type"], &error["code"]), (&json!("processing_error"), &json!("internal_error")), "{error}");
    let message = error["message"].as_str().expect("a message");
    assert!(message.contains(&request_id) && !message.contains(MARKER), "{message}");
    // The key was released: the retry is worked again, not 409 `idempotency_in_flight`.
    let retry = acp_create(&server, "k-panic", &body).await;
    assert_eq!(retry.status(), reqwest::StatusCode::INTERNAL_SERVER_ERROR);
    drop(server);
    let lines = json_log_lines(&log);
    let failed = lines
        .iter()
        .find(|l| l["fields"]["request_id"] == request_id.as_str() && l["fields"]["error"].is_string())
        .unwrap_or_else(|| panic!("no failure line for {request_id}: {lines:#?}"));
    assert!(failed["fields"]["error"].as_str().is_some_and(|e| e.contains("the handler panicked")), "{failed}");
    let panic_line = lines.iter().find(|l| l["fields"]["panic"].is_string()).expect("the panic's line");
    assert_eq!(panic_line["fields"]["panic"], WITHHELD, "{panic_line}");
    assert_no_input_in(&lines);

    // Without the bug, the same key goes through at once.
    let server = start_logging_server_with(&db, &dir.path().join("after.log"), "", &acp).await;
    let created = acp_create(&server, "k-panic", &body).await;
    assert_eq!(created.status(), reqwest::StatusCode::CREATED);
}
