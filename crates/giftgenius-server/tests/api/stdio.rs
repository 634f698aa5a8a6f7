//! `--stdio`: the same server over stdin/stdout, spoken to as a host would spawn it, with the
//! HTTP side still serving the links its results contain.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::widget_path;

#[test]
fn stdio_mode_answers_initialize_tools_list_and_a_tool_call() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_giftgenius-server"))
        .arg("--stdio")
        .args(["--port", "0"])
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
    let gifts = call["result"]["structuredContent"]["gifts"].as_array().unwrap();
    assert!(!gifts.is_empty());

    // The links in results work in stdio mode too: the HTTP side serves the pictures.
    let image_url = gifts[0]["image_url"].as_str().unwrap().to_string();
    let image = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let response = reqwest::get(&image_url).await.expect("the image URL answers");
        (response.status().as_u16(), response.text().await.unwrap_or_default())
    });
    assert_eq!(image.0, 200, "{image_url}");
    assert!(image.1.starts_with("<svg"), "{image_url}: {}", image.1);

    let _ = child.kill();
    let _ = child.wait();
}
