//! Accounts: the caller is the account of a verified access token from a real authorization
//! server (oidc-provider), never a client hint. The full sign-in a host runs, then purchases as
//! that account; another account's token, forged hints and bad tokens; the tools that ask to
//! sign in; a purchase that survives the death of the replica it started on; the startup rules.

use crate::support::with_recipient;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rmcp::RoleClient;
use rmcp::ServiceExt;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use crate::postgres::TestDb;
use crate::support::oidc::{self, Oidc, TestKey};
use crate::support::{
    INIT, SandboxPay, ServerProcess, TOKEN, TestApp, call, call_as, charges, commit_args, meta_of, orders, post,
    request, spawn_app_with, start_server_binary, text_of, token_secret_file, unused_port, widget_path,
};

const BOTH: &str = "orders:read orders:write";

/// An authorization server with one signing key, and a token secret file for the apps.
pub(crate) struct Accounts {
    dir: tempfile::TempDir,
    pub(crate) key: TestKey,
    oidc: Oidc,
}

impl Accounts {
    pub(crate) fn start() -> Accounts {
        let dir = tempfile::tempdir().expect("temp dir");
        let key = oidc::generate_keys(dir.path(), &[("rsa-1", "rsa")]).remove(0);
        let jwks = dir.path().join("jwks.json");
        oidc::write_jwks(&jwks, &[&key]);
        let oidc = Oidc::start(&jwks, 0);
        std::fs::write(dir.path().join("token-secret"), "k1 0123456789abcdef0123456789abcdef-test-only\n").unwrap();
        Accounts { dir, key, oidc }
    }

    pub(crate) fn issuer(&self) -> String {
        self.oidc.issuer.clone()
    }

    pub(crate) fn secret_file(&self) -> PathBuf {
        self.dir.path().join("token-secret")
    }

    /// The server binary's flags for verified mode with this authorization server, and `extra`.
    fn server_flags(&self, extra: &[&str]) -> Vec<String> {
        let secret = self.secret_file().to_string_lossy().into_owned();
        let mut flags = vec!["--auth-issuer".to_string(), self.issuer(), "--token-secret-file".into(), secret];
        flags.extend(extra.iter().map(|f| f.to_string()));
        flags
    }

    /// The app in verified mode: tokens of our authorization server for its own `/mcp`.
    async fn app(&self) -> TestApp {
        let (issuer, secret) = (self.issuer(), self.secret_file());
        spawn_app_with(move |c| {
            c.auth_issuer = Some(issuer);
            c.token_secret_file = Some(secret);
        })
        .await
    }
}

fn resource_metadata_url(app: &TestApp) -> String {
    format!("{}/.well-known/oauth-protected-resource/mcp", app.local_url)
}

/// An MCP client that sends `token` as its bearer token.
async fn client_with(url: &str, token: &str) -> RunningService<RoleClient, ()> {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_string()).auth_header(token.to_string());
    ().serve(StreamableHttpClientTransport::from_config(config)).await.expect("MCP client connects with a token")
}

/// Signs `user` in through the app's metadata, as a host does, and connects with the token.
async fn signed_in(app: &TestApp, user: &str, scope: &str) -> RunningService<RoleClient, ()> {
    let token = oidc::sign_in(&resource_metadata_url(app), user, scope).await;
    client_with(&app.mcp_url(), &token.access_token).await
}

async fn prepare(client: &RunningService<RoleClient, ()>, gift: &str) -> (String, String) {
    let (result, sc) = call(client, "prepare_order", with_recipient(json!({"gift_id": gift}))).await;
    assert_eq!(sc["ok"], true, "{sc}");
    let token = meta_of(&result, TOKEN).and_then(Value::as_str).expect("token").to_string();
    (sc["draft"]["id"].as_str().unwrap().to_string(), token)
}

#[tokio::test]
async fn a_host_signs_in_with_pkce_and_the_account_prepares_commits_and_reads_its_order() {
    let accounts = Accounts::start();
    let app = accounts.app().await;
    let alice = signed_in(&app, "alice", BOTH).await;

    let (draft, token) = prepare(&alice, "hh-010").await;
    let (_, placed) = call(&alice, "commit_order", commit_args(&draft, "ik_alice_1", &token)).await;
    assert_eq!(placed["order"]["status"], "paid", "{placed}");
    let order_id = placed["order"]["id"].as_str().unwrap();
    let (_, read) = call(&alice, "get_order", json!({"order_id": order_id})).await;
    assert_eq!(read["order"]["id"], order_id, "{read}");

    // The order belongs to the token's issuer + subject, nothing the client said.
    let subject = format!("{}#alice", accounts.issuer());
    let row = app.state.store.order(&subject, order_id).await.unwrap();
    assert!(row.is_some(), "the order is stored under {subject}");
    assert_eq!((charges(&app).await, orders(&app).await), (1, 1));
}

#[tokio::test]
async fn another_account_cannot_read_reuse_or_commit_and_a_forged_subject_changes_nothing() {
    let accounts = Accounts::start();
    let app = accounts.app().await;
    let alice = signed_in(&app, "alice", BOTH).await;
    let bob_token = oidc::sign_in(&resource_metadata_url(&app), "bob", BOTH).await.access_token;
    let alice_subject = format!("{}#alice", accounts.issuer());

    let (draft, token) = prepare(&alice, "hh-010").await;
    let (_, placed) = call(&alice, "commit_order", commit_args(&draft, "ik_shared", &token)).await;
    let order_id = placed["order"]["id"].as_str().unwrap().to_string();

    for hint in [None, Some(alice_subject.as_str()), Some("alice")] {
        // A new MCP session each time, as a host reconnecting would open.
        let bob = client_with(&app.mcp_url(), &bob_token).await;
        let as_bob = |tool: &'static str, args: Value| {
            let bob = &bob;
            async move {
                match hint {
                    Some(hint) => call_as(bob, hint, tool, args).await,
                    None => call(bob, tool, args).await,
                }
            }
        };
        let (_, read) = as_bob("get_order", json!({"order_id": order_id})).await;
        assert_eq!(read["error"]["code"], "ORDER_NOT_FOUND", "{hint:?}: {read}");
        // Alice's key and token, replayed by Bob: not Alice's answer, and nothing charged.
        let (_, reused) = as_bob("commit_order", commit_args(&draft, "ik_shared", &token)).await;
        assert_eq!(reused["error"]["code"], "CONFIRMATION_REQUIRED", "{hint:?}: {reused}");
        assert!(reused.get("order").is_none(), "{hint:?}: Bob never sees Alice's order");
    }
    // Bob's own draft of the same gift is his, with his own token.
    let bob = client_with(&app.mcp_url(), &bob_token).await;
    let (bob_draft, _) = prepare(&bob, "hh-010").await;
    assert_ne!(bob_draft, draft);
    assert_eq!((charges(&app).await, orders(&app).await), (1, 1));
}

#[tokio::test]
async fn signed_out_suggestions_work_and_the_order_tools_ask_the_user_to_sign_in() {
    let accounts = Accounts::start();
    let app = accounts.app().await;
    let anonymous = app.client().await;

    let (_, suggestions) = call(&anonymous, "suggest_gifts", json!({"relationship_type": "friend"})).await;
    assert_eq!(suggestions["ok"], true, "{suggestions}");

    for (tool, args, scope) in [
        ("prepare_order", with_recipient(json!({"gift_id": "hh-010"})), "orders:write"),
        ("get_order", json!({"order_id": "ord_1"}), "orders:read"),
        ("commit_order", commit_args("drf_1", "ik_1", "ct_k1.00"), "orders:write"),
    ] {
        // A forged hint is no account either.
        let (result, sc) = call_as(&anonymous, "alice", tool, args).await;
        assert_eq!(result.is_error, Some(true), "{tool}");
        assert_eq!(sc["error"]["code"], "AUTH_REQUIRED", "{tool}: {sc}");
        assert_eq!(sc["error"]["category"], "permission", "{tool}");
        assert_eq!(sc["error"]["retryable"], false, "{tool}");
        assert!(text_of(&result).contains("connect their GiftGenius account"), "{tool}: the model is told what to do");
        let challenge = meta_of(&result, "mcp/www_authenticate").expect("a challenge for the host").to_string();
        assert!(challenge.contains(&resource_metadata_url(&app)), "{challenge}");
        assert!(challenge.contains(&format!("scope=\\\"{scope}\\\"")), "{challenge}");
    }
    assert_eq!((charges(&app).await, orders(&app).await), (0, 0));
}

#[tokio::test]
async fn bad_tokens_get_401_with_the_challenge_and_a_missing_scope_403() {
    let accounts = Accounts::start();
    let app = accounts.app().await;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let claims = |exp: u64| {
        json!({"iss": accounts.issuer(), "sub": "mallory", "aud": format!("{}/mcp", app.base_url),
               "exp": exp, "iat": now - 600, "scope": BOTH})
    };
    let expired = accounts.key.sign(&claims(now - 300));
    let unsigned = oidc::unsigned(&claims(now + 300), Some("rsa-1"));
    for (what, token) in [("garbage", "not-a-jwt".to_string()), ("expired", expired), ("alg none", unsigned)] {
        let response =
            post(&app.mcp_url(), None).header("authorization", format!("Bearer {token}")).body(INIT).send().await;
        let response = response.unwrap();
        assert_eq!(response.status(), 401, "{what}");
        let challenge = response.headers()["www-authenticate"].to_str().unwrap().to_string();
        assert!(
            challenge.starts_with("Bearer ") && challenge.contains("error=\"invalid_token\""),
            "{what}: {challenge}"
        );
        assert!(challenge.contains("resource_metadata=\""), "{what}: {challenge}");
        let body = response.text().await.unwrap();
        assert!(!body.contains(&token) || token.len() < 12, "{what}: the token is never echoed");
    }

    // A valid token without orders:write may suggest, but not prepare.
    let reader = oidc::sign_in(&resource_metadata_url(&app), "rita", "orders:read").await.access_token;
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"prepare_order","arguments":{"gift_id":"hh-010"}}}"#;
    let response =
        post(&app.mcp_url(), None).header("authorization", format!("Bearer {reader}")).body(call).send().await;
    let response = response.unwrap();
    assert_eq!(response.status(), 403);
    let challenge = response.headers()["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.contains("error=\"insufficient_scope\"") && challenge.contains("scope=\"orders:write\""),
        "{challenge}"
    );
}

#[tokio::test]
async fn the_protected_resource_metadata_and_the_tools_tell_a_host_how_to_sign_in() {
    let accounts = Accounts::start();
    let app = accounts.app().await;
    for path in ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"] {
        let document: Value = reqwest::get(format!("{}{path}", app.local_url)).await.unwrap().json().await.unwrap();
        assert_eq!(document["resource"], format!("{}/mcp", app.base_url), "{path}");
        assert_eq!(document["authorization_servers"], json!([accounts.issuer()]), "{path}");
        assert_eq!(document["scopes_supported"], json!(["orders:read", "orders:write"]), "{path}");
        assert_eq!(document["bearer_methods_supported"], json!(["header"]), "{path}");
    }
    let client = app.client().await;
    let tools = client.list_all_tools().await.unwrap();
    let schemes = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        tool.meta.as_ref().unwrap().0["securitySchemes"].clone()
    };
    assert_eq!(schemes("suggest_gifts"), json!([{"type": "noauth"}, {"type": "oauth2", "scopes": []}]));
    for tool in ["prepare_order", "commit_order", "create_checkout_session"] {
        assert_eq!(schemes(tool), json!([{"type": "oauth2", "scopes": ["orders:write"]}]), "{tool}");
    }
    assert_eq!(schemes("get_order"), json!([{"type": "oauth2", "scopes": ["orders:read"]}]));
}

/// Two replicas of the server binary on one PostgreSQL database and one payment provider,
/// behind one public URL.
async fn replica(
    db: &str,
    provider: &SandboxPay,
    accounts: &Accounts,
    public_url: &str,
    failpoint: &str,
) -> ServerProcess {
    let flags = accounts.server_flags(&[
        "--public-url",
        public_url,
        "--payments-url",
        &provider.url,
        "--payments-token-file",
        provider.token_file(),
        "--payments-timeout-ms",
        "500",
        "--idempotency-lease-ms",
        "2500",
        "--failpoints",
        failpoint,
    ]);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    start_server_binary(Path::new(db), &flags, "warn", Stdio::null()).await
}

#[tokio::test]
async fn a_purchase_started_on_a_replica_that_dies_ends_on_the_other_with_one_charge() {
    let db = TestDb::create().await;
    let accounts = Accounts::start();
    // Both replicas answer to one public URL (a load balancer's); tokens are for its /mcp.
    let public = format!("http://127.0.0.1:{}", unused_port());
    let provider = SandboxPay::start();
    let mut doomed = replica(&db.url, &provider, &accounts, &public, "after_payment_charged").await;
    let survivor = replica(&db.url, &provider, &accounts, &public, "").await;
    let token = oidc::sign_in(&format!("{}/.well-known/oauth-protected-resource/mcp", doomed.url), "carol", BOTH)
        .await
        .access_token;

    let first = client_with(&format!("{}/mcp", doomed.url), &token).await;
    let (draft, confirmation) = prepare(&first, "hh-010").await;
    let commit = commit_args(&draft, "ik_carol", &confirmation);
    let died = tokio::time::timeout(
        std::time::Duration::from_secs(3),
        first.call_tool(request(None, "commit_order", commit.clone())),
    )
    .await;
    assert!(!matches!(died, Ok(Ok(_))), "the replica died mid-commit, without an answer");
    assert!(!doomed.wait().success(), "the first replica aborted after charging");

    // The same account, a new MCP session on the other replica: the same key finishes the order.
    let second = client_with(&format!("{}/mcp", survivor.url), &token).await;
    // Retried until the dead replica's 2.5 s lease runs out (real time: bounded by a deadline
    // far past it, not by a count of tries a slow machine could use up first).
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut answer = Value::Null;
    while std::time::Instant::now() < give_up {
        let (_, sc) = call(&second, "commit_order", commit.clone()).await;
        if sc["error"]["code"] == "REQUEST_IN_PROGRESS" {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            continue;
        }
        answer = sc;
        break;
    }
    assert_eq!(answer["order"]["status"], "paid", "{answer}");
    let store = giftgenius_commerce::store::Store::connect(&db.url).await.unwrap();
    assert_eq!(provider.charges().await, 1, "exactly one charge");
    assert_eq!(store.order_count().await.unwrap(), 1, "exactly one order");
}

#[tokio::test]
async fn no_log_line_at_any_level_carries_a_bearer_or_a_confirmation_token() {
    let accounts = Accounts::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("trace.log");
    let flags = accounts.server_flags(&["--sandbox-latency-ms", "0"]);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let server = start_server_binary(
        &dir.path().join("g.db"),
        &flags,
        "trace",
        Stdio::from(std::fs::File::create(&log).unwrap()),
    )
    .await;
    let token = oidc::sign_in(&format!("{}/.well-known/oauth-protected-resource/mcp", server.url), "dora", BOTH)
        .await
        .access_token;
    let client = client_with(&format!("{}/mcp", server.url), &token).await;
    let (draft, confirmation) = prepare(&client, "hh-010").await;
    let (_, placed) = call(&client, "commit_order", commit_args(&draft, "ik_dora", &confirmation)).await;
    assert_eq!(placed["order"]["status"], "paid", "{placed}");
    drop(client);
    drop(server);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.lines().count() > 20, "trace logging was on: {} lines", text.lines().count());
    assert!(!text.contains(&token), "the bearer token is in the log");
    let signature = confirmation.split('.').next_back().unwrap();
    assert!(!text.contains(signature), "the confirmation token is in the log");
}

/// What the binary logs once it serves (main.rs).
const SERVING: &str = "GiftGenius is serving MCP";

/// Runs the binary with `flags` until it exits (its exit code and what it logged) or says it
/// serves (then it is killed: `None`). Waits for one of those two events, not for a fixed time
/// that a slow start could outlast.
fn start_and_watch(flags: &[&str]) -> (Option<i32>, String) {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_giftgenius-server"))
        .args(["--port", "0", "--db"])
        .arg(dir.path().join("g.db"))
        .arg("--widget-html")
        .arg(widget_path())
        .args(flags)
        .env("GIFTGENIUS_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (lines, logged) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                return;
            }
        }
    });
    let mut stderr = String::new();
    let serves = loop {
        match logged.recv_timeout(std::time::Duration::from_secs(60)) {
            Ok(line) => {
                stderr.push_str(&line);
                stderr.push('\n');
                if line.contains(SERVING) {
                    break true;
                }
            }
            // Its stderr closed: it exited.
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break false,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                panic!("the server neither exited nor served within 60 s: {stderr}");
            }
        }
    };
    if serves {
        let _ = child.kill();
        let _ = child.wait();
        return (None, stderr);
    }
    (child.wait().unwrap().code(), stderr)
}

#[test]
fn an_exposed_server_needs_an_issuer_or_single_user_mode_and_says_which_mode_it_is_in() {
    let (status, stderr) = start_and_watch(&["--public-url", "https://gifts.example.com"]);
    assert_eq!(status, Some(1), "refuses to start: {stderr}");
    assert!(stderr.contains("--auth-issuer") && stderr.contains("--single-user"), "{stderr}");

    let (status, stderr) = start_and_watch(&["--public-url", "https://gifts.example.com", "--single-user"]);
    assert_eq!(status, Some(1), "single-user mode needs a token secret file: {stderr}");
    assert!(stderr.contains("--token-secret-file"), "{stderr}");

    let secret = token_secret_file();
    let secret = secret.path().to_str().unwrap().to_string();
    let (status, stderr) = start_and_watch(&[
        "--public-url",
        "https://gifts.example.com",
        "--single-user",
        "--token-secret-file",
        &secret,
    ]);
    assert_eq!(status, None, "serves: {stderr}");
    assert!(stderr.contains("SINGLE-USER MODE") && stderr.contains("WARN"), "a loud warning: {stderr}");

    let (status, stderr) = start_and_watch(&[]);
    assert_eq!(status, None, "local mode on loopback serves: {stderr}");
    assert!(stderr.contains("local mode"), "{stderr}");
}

#[tokio::test]
async fn the_preview_page_warns_loudly_in_single_user_mode_only() {
    let secret = token_secret_file();
    let path = secret.path().to_path_buf();
    let single = spawn_app_with(move |c| {
        c.public_url = Some("https://gifts.example.com".into());
        c.single_user = true;
        c.token_secret_file = Some(path);
        c.preview = true;
    })
    .await;
    let local = spawn_app_with(|c| c.preview = true).await;
    let page = |app: &TestApp| {
        let url = format!("{}/preview", app.local_url);
        async move {
            let response = reqwest::get(url).await.unwrap();
            assert!(response.headers().contains_key("content-security-policy"));
            response.text().await.unwrap()
        }
    };
    let warned = page(&single).await;
    assert!(warned.contains("SINGLE-USER MODE") && warned.contains("role=\"alert\""), "{warned}");
    assert!(!page(&local).await.contains("SINGLE-USER MODE"));
}

#[test]
fn without_the_embedding_model_the_server_does_not_start_unless_told_to_rank_by_words() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-model-here");
    let missing = missing.to_str().unwrap();
    let (status, stderr) = start_and_watch(&["--model-dir", missing]);
    assert_eq!(status, Some(1), "refuses to start: {stderr}");
    for what in [missing, "cargo xtask setup", "--model-dir", "--without-model"] {
        assert!(stderr.contains(what), "the error names {what}: {stderr}");
    }
    let (status, stderr) = start_and_watch(&["--model-dir", missing, "--without-model"]);
    assert_eq!(status, None, "serves, ranking by words: {stderr}");
    assert!(stderr.contains("--without-model: suggestions are ranked by the catalog's words only"), "{stderr}");
}
