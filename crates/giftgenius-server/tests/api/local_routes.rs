//! Local-only routes: every `/preview…` route answers only requests addressed to a loopback name
//! (`localhost`, `sandbox.localhost`, `127.0.0.1`), so a DNS-rebinding page, which reaches the
//! server under its own name, can neither read the chat transcript or the ledger nor change the
//! fault plan. The README's "Routes" table says which routes are local.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{TestApp, spawn_app_with};

/// Every preview route: method, path, JSON body (POSTs), and the status it answers when served
/// (the chat routes answer 404 "panel off": no chat process in these tests).
const ROUTES: &[(&str, &str, Option<&str>, u16)] = &[
    ("GET", "/preview", None, 200),
    ("GET", "/preview/", None, 200),
    ("GET", "/preview/callback", None, 200),
    ("GET", "/preview/host.js", None, 200),
    ("GET", "/preview/host.css", None, 200),
    ("GET", "/preview/widget?csp=mcp-apps&bridge=mcp-apps", None, 200),
    ("GET", "/preview/artifact", None, 200),
    ("GET", "/preview/ledger", None, 200),
    ("POST", "/preview/faults", Some(r#"{"plan":""}"#), 200),
    ("GET", "/preview/catalog", None, 200),
    ("POST", "/preview/catalog", Some(r#"{"mode":"ok"}"#), 200),
    // An empty body is no card: refused before the provider is asked.
    ("POST", "/preview/sheet/delegate", Some(r#"{}"#), 422),
    ("GET", "/preview/chat/state", None, 404),
    ("POST", "/preview/chat/messages", Some(r#"{"text":"hello"}"#), 404),
    ("POST", "/preview/chat/purchases/d_1", Some(r#"{}"#), 404),
];

async fn send(app: &TestApp, method: &str, path: &str, body: Option<&str>, host: &str) -> (u16, String) {
    let method = Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = reqwest::Client::new().request(method, format!("{}{path}", app.local_url)).header("host", host);
    if let Some(body) = body {
        request = request.header("content-type", "application/json").body(body.to_string());
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap_or_default())
}

#[tokio::test]
async fn every_preview_route_refuses_a_foreign_host_name() {
    let app = spawn_app_with(|c| c.preview = true).await;
    for (method, path, body, _) in ROUTES {
        for host in ["attacker.example:8000", "attacker.example", "localhost.attacker.example:8000", "10.0.0.7:8000"] {
            let (status, text) = send(&app, method, path, *body, host).await;
            assert_eq!(status, 403, "{method} {path} with Host {host}: {text}");
            assert!(!text.contains("charge") && !text.contains("<html"), "nothing of the route leaks: {text}");
        }
    }
}

#[tokio::test]
async fn every_preview_route_serves_loopback_host_names() {
    let app = spawn_app_with(|c| c.preview = true).await;
    let port = app.local_url.rsplit(':').next().unwrap().to_string();
    for (method, path, body, served) in ROUTES {
        for host in [format!("localhost:{port}"), format!("sandbox.localhost:{port}"), format!("127.0.0.1:{port}")] {
            let (status, text) = send(&app, method, path, *body, &host).await;
            assert_eq!(status, *served, "{method} {path} with Host {host}: {text}");
        }
    }
    // What a rebinding page was after, served here: the ledger.
    let (_, ledger) = send(&app, "GET", "/preview/ledger", None, &format!("localhost:{port}")).await;
    let ledger: Value = serde_json::from_str(&ledger).unwrap();
    assert_eq!(ledger["count"], json!(0), "{ledger}");
}

#[tokio::test]
async fn the_public_routes_still_answer_any_host_name() {
    let app = spawn_app_with(|c| c.preview = true).await;
    let (status, _) = send(&app, "GET", "/healthz", None, "attacker.example:8000").await;
    assert_eq!(status, 200, "probes are reached by address, whatever the name");
}
