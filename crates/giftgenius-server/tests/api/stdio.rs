//! `--stdio`: the same server over stdin/stdout, spoken to as a host would spawn it.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::helpers::widget_path;

#[test]
fn stdio_mode_answers_initialize_tools_list_and_a_tool_call() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_giftgenius-server"))
        .arg("--stdio")
        .arg("--db")
        .arg(dir.path().join("stdio.db"))
        .arg("--widget-html")
        .arg(widget_path())
        .env("GIFTGENIUS_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("server starts");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    let mut receive = || {
        let mut line = String::new();
        stdout.read_line(&mut line).expect("a response line");
        serde_json::from_str::<Value>(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    };

    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "stdio-test", "version": "1"}}}));
    let init = receive();
    assert_eq!(init["result"]["serverInfo"]["name"], "giftgenius");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let list = receive();
    let names: Vec<&str> =
        list["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    for tool in ["suggest_gifts", "prepare_order", "commit_order", "create_checkout_session", "get_order"] {
        assert!(names.contains(&tool), "{tool} missing from {names:?}");
    }

    send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "suggest_gifts", "arguments": {"relationship_type": "sibling", "interests": ["board games"]}}}));
    let call = receive();
    assert_eq!(call["result"]["isError"], false);
    assert_eq!(call["result"]["structuredContent"]["ok"], true);
    assert!(!call["result"]["structuredContent"]["gifts"].as_array().unwrap().is_empty());

    let _ = child.kill();
    let _ = child.wait();
}
