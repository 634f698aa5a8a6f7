//! Local-only routes: every `/preview…` route answers only requests addressed to a loopback name
//! (`localhost`, `sandbox.localhost`, `127.0.0.1`), so a DNS-rebinding page, which reaches the
//! server under its own name, can neither read the chat transcript or the ledger nor change the
//! fault plan. The table in docs/routes.md says which routes are local.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{TestApp, spawn_app_with, token_secret_file};

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

/// `cargo xtask preview --auth -- --host 0.0.0.0` once served the ledger, the fault plan and
/// the vault-token relay to anyone on the network who sent `Host: localhost`. Now `--preview`
/// beyond loopback needs `--allow-remote-preview`, and the routes then still need a loopback peer
/// (the peer rule itself: `local_only.rs`'s unit tests, with a peer of 192.0.2.1).
#[tokio::test]
async fn preview_on_a_non_loopback_bind_refuses_to_start_unless_allowed() {
    let secret = token_secret_file();
    let dir = tempfile::tempdir().unwrap();
    let mut config = giftgenius_server::config::Config::for_tests(dir.path());
    config.widget_html = Some(crate::support::widget_path());
    config.host = "0.0.0.0".into();
    config.single_user = true;
    config.token_secret_file = Some(secret.path().to_path_buf());
    config.preview = true;
    let error = match giftgenius_server::startup::Application::build(config).await {
        Ok(_) => panic!("--preview started on 0.0.0.0 without --allow-remote-preview"),
        Err(e) => format!("{e:#}"),
    };
    assert!(error.contains("--preview") && error.contains("--allow-remote-preview"), "{error}");

    let path = secret.path().to_path_buf();
    let app = spawn_app_with(move |c| {
        c.host = "0.0.0.0".into();
        c.single_user = true;
        c.token_secret_file = Some(path);
        c.preview = true;
        c.allow_remote_preview = true;
    })
    .await;
    // This machine still gets them.
    let port = app.local_url.rsplit(':').next().unwrap().to_string();
    let (status, text) = send(&app, "GET", "/preview/ledger", None, &format!("localhost:{port}")).await;
    assert_eq!(status, 200, "{text}");
    // Relayed by a proxy on this machine: its sender is elsewhere.
    let relayed = reqwest::Client::new()
        .get(format!("{}/preview/ledger", app.local_url))
        .header("host", format!("localhost:{port}"))
        .header("x-forwarded-for", "192.0.2.1")
        .send()
        .await
        .unwrap();
    assert_eq!(relayed.status(), 403);
}
