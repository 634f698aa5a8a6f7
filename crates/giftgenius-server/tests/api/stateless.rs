//! Stateless serving for MCP 2026-07-28 clients: no `initialize`, no session; the protocol
//! version, client info and capabilities ride in each request's `_meta` and in the
//! `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers. Any replica answers any request.

use crate::support::with_recipient;
use serde_json::{Value, json};

use crate::postgres::TestDb;
use crate::support::{SandboxPay, TOKEN, TestApp, charges, commit_args, spawn_app, spawn_app_on};

const VERSION: &str = "2026-07-28";

/// The `_meta` a 2026-07-28 client puts in every request, plus `extra` (e.g. the ChatGPT subject).
fn meta(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "stateless-test", "version": "1.0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    if let (Some(meta), Value::Object(extra)) = (meta.as_object_mut(), extra) {
        meta.extend(extra);
    }
    meta
}

/// A 2026-07-28 request to `url`: no session header, the standard headers, `params._meta` set.
/// Returns the status, the `Mcp-Session-Id` header if any, and the JSON-RPC message.
async fn send(url: &str, id: u64, method: &str, name: Option<&str>, params: Value) -> (u16, Option<String>, Value) {
    let (status, session, text) = exchange(url, id, method, name, params).await.expect("request sent");
    let message = jsonrpc_of(&text).unwrap_or_else(|| panic!("no JSON-RPC in {text}"));
    (status, session, message)
}

/// [`send`] without asserting anything: Err when no answer came (the chaos test's replicas die).
async fn exchange(
    url: &str,
    id: u64,
    method: &str,
    name: Option<&str>,
    mut params: Value,
) -> Result<(u16, Option<String>, String), String> {
    params["_meta"] = meta(params.get("_meta").cloned().unwrap_or(Value::Null));
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", VERSION)
        .header("mcp-method", method);
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    let response = request.body(body.to_string()).send().await.map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let session = response.headers().get("mcp-session-id").map(|v| v.to_str().unwrap_or_default().to_string());
    let text = response.text().await.map_err(|e| e.to_string())?;
    Ok((status, session, text))
}

/// A JSON reply, or the last `data:` line of an SSE stream.
fn jsonrpc_of(text: &str) -> Option<Value> {
    serde_json::from_str(text).ok().or_else(|| {
        let mut data = text.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).filter(|l| !l.is_empty());
        data.next_back().and_then(|l| serde_json::from_str(l).ok())
    })
}

/// `tools/call` of `tool` as the ChatGPT user `subject` to the server at `base` (its `/mcp`),
/// 2026-07-28 style: (status, the JSON-RPC message, or the body as a string when it is none).
/// Err when no answer came at all. For callers behind a load balancer (the chaos test).
pub async fn post(base: &str, tool: &str, arguments: Value, subject: &str) -> Result<(u16, Value), String> {
    let params = json!({"name": tool, "arguments": arguments, "_meta": {"openai/subject": subject}});
    let (status, _, text) = exchange(&format!("{base}/mcp"), 1, "tools/call", Some(tool), params).await?;
    Ok((status, jsonrpc_of(&text).unwrap_or(Value::String(text))))
}

/// `tools/call` of `tool` as the ChatGPT user `subject`; returns the result.
async fn call_tool(app: &TestApp, id: u64, subject: &str, tool: &str, arguments: Value) -> Value {
    let params = json!({"name": tool, "arguments": arguments, "_meta": {"openai/subject": subject}});
    let (status, session, message) = send(&app.mcp_url(), id, "tools/call", Some(tool), params).await;
    assert_eq!(status, 200, "{message}");
    assert_eq!(session, None, "a 2026-07-28 request opens no session");
    assert_eq!(message["id"], id, "{message}");
    message["result"].clone()
}

#[tokio::test]
async fn stateless_tools_call_is_answered_as_the_very_first_request() {
    let app = spawn_app().await;
    let result = call_tool(&app, 7, "u-stateless", "suggest_gifts", json!({"relationship_type": "friend"})).await;
    assert_eq!(result["structuredContent"]["ok"], true, "{result}");
    assert!(!result["structuredContent"]["gifts"].as_array().expect("gifts").is_empty(), "{result}");
}

#[tokio::test]
async fn stateless_tools_call_is_answered_in_plain_json_when_the_client_accepts_it() {
    let app = spawn_app().await;
    let params =
        json!({"name": "suggest_gifts", "arguments": {"relationship_type": "friend"}, "_meta": meta(Value::Null)});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let response = reqwest::Client::new()
        .post(app.mcp_url())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", VERSION)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "suggest_gifts")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"].to_str().unwrap().to_string();
    assert!(content_type.starts_with("application/json"), "{content_type}");
    let message: Value = response.json().await.unwrap();
    assert_eq!(message["result"]["structuredContent"]["ok"], true, "{message}");
}

#[tokio::test]
async fn server_discover_names_the_server_and_its_capabilities() {
    let app = spawn_app().await;
    let (status, session, message) = send(&app.mcp_url(), 1, "server/discover", None, json!({})).await;
    assert_eq!(status, 200, "{message}");
    assert_eq!(session, None);
    let result = &message["result"];
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "giftgenius", "{result}");
    assert!(result["capabilities"]["tools"].is_object(), "{result}");
    assert!(result["capabilities"]["resources"].is_object(), "{result}");
    let versions = result["supportedVersions"].as_array().expect("supportedVersions");
    assert!(versions.contains(&json!(VERSION)), "{result}");
    assert!(result["instructions"].as_str().is_some_and(|i| i.contains("suggest_gifts")), "{result}");
}

#[tokio::test]
async fn stateless_requests_alternate_between_two_replicas_without_stickiness() {
    let db = TestDb::create().await;
    let (url_a, url_b) = (db.url.clone(), db.url.clone());
    let provider = std::sync::Arc::new(SandboxPay::start());
    let a = spawn_app_on(&provider, move |config| config.db = url_a).await;
    let b = spawn_app_on(&provider, move |config| config.db = url_b).await;
    let subject = "u-replicas";

    let prepared = call_tool(&a, 1, subject, "prepare_order", with_recipient(json!({"gift_id": "tr-001"}))).await;
    assert_eq!(prepared["structuredContent"]["ok"], true, "{prepared}");
    let draft = prepared["structuredContent"]["draft"]["id"].as_str().expect("draft id").to_string();
    let token = prepared["_meta"][TOKEN].as_str().expect("confirmation token in _meta").to_string();

    let committed = call_tool(&b, 2, subject, "commit_order", commit_args(&draft, "ik_stateless", &token)).await;
    assert_eq!(committed["structuredContent"]["ok"], true, "{committed}");
    assert_eq!(committed["structuredContent"]["order"]["status"], "paid", "{committed}");
    let order = committed["structuredContent"]["order"]["id"].as_str().expect("order id").to_string();

    let read = call_tool(&a, 3, subject, "get_order", json!({"order_id": order})).await;
    assert_eq!(read["structuredContent"]["ok"], true, "{read}");
    assert_eq!(read["structuredContent"]["order"]["status"], "paid", "{read}");
    assert_eq!(charges(&a).await, 1, "one charge");
    assert_eq!(charges(&b).await, 1, "both replicas see the one charge");
}

#[tokio::test]
async fn an_initializing_client_still_gets_a_session() {
    let app = spawn_app().await;
    let client = app.client().await;
    let (_, structured) = crate::support::call(&client, "suggest_gifts", json!({"relationship_type": "friend"})).await;
    assert_eq!(structured["ok"], true, "{structured}");
    let response = crate::support::post(&app.mcp_url(), None).body(crate::support::INIT).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers().get("mcp-session-id").is_some(), "initialize still opens a session");
}

/// Lists, reads and discovery carry deliberate cache hints: the same for every caller, so
/// `public`; the widget read (its URI changes with its content) lives longer than the lists.
#[tokio::test]
async fn lists_reads_and_discovery_carry_public_cache_hints() {
    let app = spawn_app().await;
    let mut ttl = std::collections::BTreeMap::new();
    for (id, method) in [(1, "tools/list"), (2, "resources/list"), (3, "server/discover")] {
        let (status, _, message) = send(&app.mcp_url(), id, method, None, json!({})).await;
        assert_eq!(status, 200, "{message}");
        assert_eq!(message["result"]["cacheScope"], "public", "{method}: {message}");
        ttl.insert(method, message["result"]["ttlMs"].as_u64().unwrap_or_else(|| panic!("{method}: no ttlMs")));
    }
    let (_, _, listed) = send(&app.mcp_url(), 4, "resources/list", None, json!({})).await;
    let uri = listed["result"]["resources"][0]["uri"].as_str().expect("widget uri").to_string();
    let (status, _, read) = send(&app.mcp_url(), 5, "resources/read", Some(&uri), json!({"uri": uri})).await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["result"]["cacheScope"], "public", "{read}");
    let read_ttl = read["result"]["ttlMs"].as_u64().expect("resources/read ttlMs");
    assert!(ttl.values().all(|&t| t > 0), "lists are cacheable for a while: {ttl:?}");
    assert!(read_ttl > ttl["tools/list"], "the content-addressed widget outlives the lists: {read_ttl} vs {ttl:?}");
}

/// A client of an older revision that never initializes (as the official SDKs' stateless
/// servers accept, and load harnesses do) is answered statelessly with plain JSON: no session
/// opened, none required, the same result an initialized client gets.
#[tokio::test]
async fn an_older_client_that_never_initializes_gets_a_json_answer_without_a_session() {
    let app = spawn_app().await;
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "suggest_gifts",
        "arguments": {"relationship_type": "partner", "age": 35, "interests": ["cooking", "coffee"], "limit": 6}}});
    let response = reqwest::Client::new()
        .post(app.mcp_url())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers().get("mcp-session-id").is_none(), "no session is opened");
    let content_type = response.headers()["content-type"].to_str().unwrap().to_string();
    assert!(content_type.starts_with("application/json"), "{content_type}");
    let message: Value = response.json().await.unwrap();
    assert_eq!(message["id"], 7);
    let structured = &message["result"]["structuredContent"];
    assert_eq!(structured["ok"], true, "{message}");
    assert_eq!(structured["gifts"].as_array().map(Vec::len), Some(6), "{message}");

    // A request naming a session that does not exist is still refused, as the spec says.
    let unknown =
        crate::support::post(&app.mcp_url(), Some("no-such-session")).body(body.to_string()).send().await.unwrap();
    assert_eq!(unknown.status(), 404);
}
