//! The HTTP endpoint itself: Host/Origin checks and protocol errors.

use crate::support::{INIT, post, spawn_app, spawn_app_with};

#[tokio::test]
async fn a_foreign_host_header_is_refused() {
    let app = spawn_app().await;
    let response = post(&app.mcp_url(), None).header("host", "evil.example.com").body(INIT).send().await.unwrap();
    assert_eq!(response.status(), 403);
    let ok = post(&app.mcp_url(), None).body(INIT).send().await.unwrap();
    assert_eq!(ok.status(), 200);
}

#[tokio::test]
async fn a_foreign_origin_is_refused() {
    let app = spawn_app().await;
    let response =
        post(&app.mcp_url(), None).header("origin", "https://evil.example.com").body(INIT).send().await.unwrap();
    assert_eq!(response.status(), 403);
}

#[tokio::test]
async fn the_configured_public_host_is_accepted() {
    let app = spawn_app_with(|c| c.public_url = Some("https://gifts.example.com".into())).await;
    let ours = post(&app.mcp_url(), None).header("host", "gifts.example.com").body(INIT).send().await.unwrap();
    assert_eq!(ours.status(), 200);
    let theirs = post(&app.mcp_url(), None).header("host", "gifts.example.org").body(INIT).send().await.unwrap();
    assert_eq!(theirs.status(), 403);
}

#[tokio::test]
async fn malformed_json_rpc_gets_a_protocol_error_and_the_server_keeps_serving() {
    let app = spawn_app().await;
    let garbage = post(&app.mcp_url(), None).body("{not json").send().await.unwrap();
    assert!(garbage.status().is_client_error(), "status {}", garbage.status());
    let body = garbage.text().await.unwrap();
    assert!(!body.contains("/root") && !body.contains("panicked"), "{body}");
    let ok = post(&app.mcp_url(), None).body(INIT).send().await.unwrap();
    assert_eq!(ok.status(), 200);
}

#[tokio::test]
async fn an_oversized_body_is_refused_with_a_clear_status() {
    let app = spawn_app().await;
    let huge =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"pad":"{}"}}}}"#, "x".repeat(1024 * 1024));
    let response = post(&app.mcp_url(), None).body(huge).send().await.unwrap();
    assert_eq!(response.status(), 413);
}
