//! The HTTP endpoint itself: the Host and Origin checks. (Malformed JSON-RPC and oversized
//! bodies are in hostile.rs.)

use crate::support::{INIT, post, spawn_app, spawn_app_with, token_secret_file};

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
    // An exposed public URL needs a mode that tells callers apart (or says they are one).
    let secret = token_secret_file();
    let path = secret.path().to_path_buf();
    let app = spawn_app_with(move |c| {
        c.public_url = Some("https://gifts.example.com".into());
        c.single_user = true;
        c.token_secret_file = Some(path);
    })
    .await;
    let ours = post(&app.mcp_url(), None).header("host", "gifts.example.com").body(INIT).send().await.unwrap();
    assert_eq!(ours.status(), 200);
    let theirs = post(&app.mcp_url(), None).header("host", "gifts.example.org").body(INIT).send().await.unwrap();
    assert_eq!(theirs.status(), 403);
}
