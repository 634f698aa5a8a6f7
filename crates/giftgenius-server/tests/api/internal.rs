//! Internal failures (a handler panic, a broken database) become `INTERNAL_ERROR` results with a
//! reference; the detail goes only to the server log under that reference; the server goes on.

use crate::support::with_recipient;
use std::path::Path;
use std::process::Stdio;

use giftgenius_server::failpoints::SUGGEST_GIFTS_PANICS;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use crate::support::{
    ServerProcess, assert_no_leak, call, connect, execute_sql, spawn_app_with, start_server_binary, text_of,
};

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

async fn start_logging_server(db: &Path, log: &Path, failpoints: &str) -> ServerProcess {
    let flags = ["--sandbox-latency-ms", "0", "--log-format", "json", "--failpoints", failpoints];
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
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("giftgenius.db");
    let log = dir.path().join("stderr.log");
    let server = start_logging_server(&db, &log, SUGGEST_GIFTS_PANICS).await;
    let client = connect(&server.mcp_url()).await.expect("connects");

    let (result, sc) = call(&client, "suggest_gifts", json!({"relationship_type": "friend"})).await;
    let panic_ref = assert_internal_error(&result, &sc, &["injected", "failpoint"]);

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
    assert!(detail.contains("failpoint suggest_gifts_panics: injected handler panic"), "{panic_line}");
    // The panic itself (with its source location) is a structured line too, not raw stderr text.
    assert!(
        lines.iter().any(|l| l["fields"]["panic"].as_str().is_some_and(|p| p.contains("injected handler panic"))
            && l["fields"]["location"].as_str().is_some_and(|p| p.contains("failpoints.rs"))),
        "{lines:#?}"
    );

    let db_line = line_with_reference(&lines, &db_ref);
    assert_eq!(db_line["span"]["tool"], "prepare_order", "{db_line}");
    let detail = db_line["fields"]["error"].as_str().unwrap_or_default();
    assert!(detail.contains("no such table: orders"), "{db_line}");
}
