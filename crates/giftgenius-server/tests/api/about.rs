//! `suggest_gifts`' `about` (what the user said about the recipient, issue 40 item 5) is used for
//! meaning only: the real server binary, logging everything it may at `trace` and exporting its
//! traces to a local OTLP receiver, is called over MCP with an `about` holding a unique marker,
//! once well and twice with mistakes; the marker must then be in no part of any result (text,
//! `structuredContent`, `_meta`), no log line, no exported span, and no byte of the database.

use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::CallToolResult;
use serde_json::json;

use crate::support::{OtlpReceiver, connect, request, start_server_binary_env};

/// In nothing the server writes but the arguments the test sent.
const MARKER: &str = "ZQX7-about-marker-41c9";

/// Everything a client gets back from one call: content, `structuredContent` and `_meta`.
fn whole(result: &CallToolResult) -> String {
    serde_json::to_string(result).expect("a result serializes")
}

/// Every byte of every file under `dir` (the database, its journal files, the log), by name.
fn files_under(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("the test's directory") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push((path.display().to_string(), bytes));
        }
    }
    out
}

#[tokio::test]
async fn what_the_user_said_about_the_recipient_is_in_no_result_log_trace_or_stored_byte() {
    let otlp = OtlpReceiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("giftgenius.db");
    let log_path = dir.path().join("server.log");
    let log_file = std::fs::File::create(&log_path).unwrap();
    let flags = ["--otlp-endpoint", &otlp.url, "--log-format", "json"];
    let envs = [("OTEL_BSP_SCHEDULE_DELAY", "100")];
    let server = start_server_binary_env(&db, &flags, &envs, "trace", Stdio::from(log_file)).await;
    let client = connect(&server.mcp_url()).await.unwrap();

    let said = format!("my sister {MARKER}: just moved into a flat with a balcony, always cooking for friends");
    // A good call: answered with cards, as without `about`.
    let good = json!({"relationship_type": "sibling", "age": 31, "interests": ["cooking"], "about": said});
    let ok = client.call_tool(request(Some("u1"), "suggest_gifts", good)).await.unwrap();
    assert_eq!(ok.is_error, Some(false), "{ok:?}");
    let structured = ok.structured_content.clone().unwrap_or_default();
    assert!(structured["gifts"].as_array().is_some_and(|g| !g.is_empty()), "{structured}");
    assert!(structured["query"].get("about").is_none(), "the echoed query has no about: {structured}");
    // Two mistakes in `about` (a line break, 301 characters) next to another broken argument:
    // the validation error names the field and hides its value in `attempted`.
    let two_lines = json!({"relationship_type": "sibling", "age": 121, "about": format!("{said}\nand more")});
    let too_long = json!({"relationship_type": "friend", "about": format!("{MARKER}{}", "x".repeat(300))});
    let mut refused = Vec::new();
    for arguments in [two_lines, too_long] {
        let result = client.call_tool(request(Some("u1"), "suggest_gifts", arguments)).await.unwrap();
        assert_eq!(result.is_error, Some(true), "{result:?}");
        let error = result.structured_content.clone().unwrap_or_default()["error"].clone();
        assert_eq!(error["code"], "VALIDATION_ERROR", "{error}");
        assert!(error["field_errors"].as_array().unwrap().iter().any(|e| e["field"] == "about"), "{error}");
        assert_eq!(error["attempted"]["about"], "(hidden)", "{error}");
        refused.push(result);
    }

    for result in std::iter::once(&ok).chain(&refused) {
        let shown = whole(result);
        assert!(!shown.contains(MARKER), "a result repeats what the user said: {shown}");
    }

    // Wait (bounded) until the three calls' server spans have been exported.
    let deadline = Instant::now() + Duration::from_secs(20);
    while otlp.spans().iter().filter(|s| s.span.name == "tools/call suggest_gifts").count() < 3 {
        assert!(Instant::now() < deadline, "the export never showed the three calls: {:#?}", otlp.spans());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(client);
    drop(server);

    let exported = otlp.everything();
    assert!(exported.contains("suggest_gifts"), "the export holds the calls");
    assert!(!exported.contains(MARKER), "a span carries what the user said");
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(log.lines().count() > 3, "the server logged at trace: {log}");
    assert!(!log.contains(MARKER), "a log line carries what the user said: {log}");
    let files = files_under(dir.path());
    assert!(files.iter().any(|(name, _)| name.ends_with("giftgenius.db")), "the database is among them");
    let marker = MARKER.as_bytes();
    for (name, bytes) in files {
        assert!(!bytes.windows(marker.len()).any(|w| w == marker), "{name} holds what the user said");
    }
}
