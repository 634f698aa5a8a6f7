//! Failing closed (issue 23, item 7): an access token must say it is one (`typ: at+jwt`, RFC
//! 9068) unless the operator passes `--accept-plain-jwt`; and no log filter brings back the
//! libraries' whole-message logging (tokens, addresses). The tool call without HTTP request
//! parts in verified mode is unit-tested in `auth/caller.rs`.

use std::process::Stdio;

use giftgenius_types::wire::META_CONFIRMATION_TOKEN;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

use crate::accounts::Accounts;
use crate::support::oidc;
use crate::support::{
    INIT, SandboxPay, TestApp, commit_args, connect, meta_of, post, request, spawn_app_with, start_server_binary,
    with_recipient,
};

/// The app in verified mode with `issuer`; `accept_plain_jwt` as given.
async fn app(issuer: &Accounts, accept_plain_jwt: bool) -> TestApp {
    let (url, secret) = (issuer.issuer(), issuer.secret_file());
    spawn_app_with(move |c| {
        c.auth_issuer = Some(url);
        c.token_secret_file = Some(secret);
        c.accept_plain_jwt = accept_plain_jwt;
    })
    .await
}

/// A valid access token for `app`, signed with `issuer`'s key, with header `typ`.
fn token(issuer: &Accounts, app: &TestApp, typ: Option<&str>) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let claims = json!({"iss": issuer.issuer(), "sub": "alice", "aud": format!("{}/mcp", app.base_url),
        "iat": now, "exp": now + 600, "scope": "orders:read orders:write", "client_id": oidc::CLIENT_ID});
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(issuer.key.kid.clone());
    header.typ = typ.map(str::to_string);
    let key = EncodingKey::from_rsa_pem(&issuer.key.private_pem).expect("test key PEM");
    jsonwebtoken::encode(&header, &claims, &key).expect("sign a test token")
}

/// The HTTP status of an `initialize` POST to `app`'s `/mcp` with `token` as its bearer token.
async fn status_with(app: &TestApp, token: &str) -> u16 {
    let url = format!("{}/mcp", app.local_url);
    let response = post(&url, None).bearer_auth(token).body(INIT).send().await.expect("the server answers");
    response.status().as_u16()
}

#[tokio::test]
async fn a_plain_jwt_is_refused_with_401_unless_the_operator_accepts_plain_jwts() {
    let issuer = Accounts::start();
    let strict = app(&issuer, false).await;
    assert_eq!(status_with(&strict, &token(&issuer, &strict, Some("at+jwt"))).await, 200);
    assert_eq!(status_with(&strict, &token(&issuer, &strict, Some("application/AT+JWT"))).await, 200);
    for plain in [Some("JWT"), None] {
        assert_eq!(status_with(&strict, &token(&issuer, &strict, plain)).await, 401, "typ {plain:?} by default");
    }
    // The preview's and the tests' authorization server (oidc-provider) issues at+jwt.
    let metadata = format!("{}/.well-known/oauth-protected-resource/mcp", strict.local_url);
    let signed_in = oidc::sign_in(&metadata, "bob", "orders:read").await;
    assert_eq!(status_with(&strict, &signed_in.access_token).await, 200);

    let lenient = app(&issuer, true).await;
    for typ in [Some("JWT"), None, Some("at+jwt")] {
        assert_eq!(status_with(&lenient, &token(&issuer, &lenient, typ)).await, 200, "typ {typ:?} with the flag");
    }
    let other = token(&issuer, &lenient, Some("dpop+jwt"));
    assert_eq!(status_with(&lenient, &other).await, 401, "other types never pass");
}

#[tokio::test]
async fn a_trace_filter_naming_the_sdk_logs_no_token_and_no_address() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("giftgenius.db");
    let log_path = dir.path().join("server.log");
    let provider = SandboxPay::start();
    let log = std::fs::File::create(&log_path).unwrap();
    let filter = "trace,rmcp=trace,rmcp::transport=trace,rmcp::service=trace,hyper=trace,reqwest=trace,h2=trace";
    let server = start_server_binary(&db, &provider.app_flags(), filter, Stdio::from(log)).await;
    let client = connect(&server.mcp_url()).await.unwrap();
    let prepared = client
        .call_tool(request(Some("u1"), "prepare_order", with_recipient(json!({"gift_id": "hh-010"}))))
        .await
        .unwrap();
    let token = meta_of(&prepared, META_CONFIRMATION_TOKEN).and_then(Value::as_str).expect("a token").to_string();
    let draft = prepared.structured_content.as_ref().unwrap()["draft"]["id"].as_str().unwrap().to_string();
    let placed =
        client.call_tool(request(Some("u1"), "commit_order", commit_args(&draft, "ik_1", &token))).await.unwrap();
    assert_eq!(placed.structured_content.unwrap()["order"]["status"], "paid");
    drop(client);
    drop(server);
    let text = std::fs::read_to_string(&log_path).unwrap();
    assert!(text.contains("order paid"), "the log ran");
    assert!(text.contains("TRACE") || text.contains("DEBUG"), "the log ran below info");
    let mac = token.rsplit('.').next().expect("the token's MAC");
    for secret in [token.as_str(), mac, "Ana Silva", "Rua Augusta", "1100-053"] {
        assert!(!text.contains(secret), "{secret:?} in the log");
    }
}
