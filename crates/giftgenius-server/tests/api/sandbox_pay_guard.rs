//! What the SANDBOX provider asks of every request (its `guard.rs`): a web page the developer
//! visits cannot switch its fault plan with a no-cors POST, a DNS-rebinding page cannot read its
//! ledger, nothing but `/healthz` answers without its secret; and the app hands the provider it
//! starts a secret without showing it to anyone else.

use std::io::Read;
use std::process::{Command, Stdio};

use giftgenius_sandbox_pay::api::{CHARGES_PATH, ErrorBody, LISTENING_LINE, REFUNDS_PATH, SETTINGS_PATH, Settings};
use giftgenius_sandbox_pay::delegate::DELEGATE_PAYMENT_PATH;
use giftgenius_server::startup::Application;
use reqwest::header::HeaderValue;
use serde_json::json;

use crate::support::{SandboxPay, delegate_body, spawn_app_with, widget_path};

/// The provider's settings, read with its secret.
async fn settings(provider: &SandboxPay) -> Settings {
    provider.client().get(format!("{}{SETTINGS_PATH}", provider.url)).send().await.unwrap().json().await.unwrap()
}

async fn code_of(response: reqwest::Response) -> (u16, Option<String>) {
    let status = response.status().as_u16();
    (status, response.json::<ErrorBody>().await.ok().and_then(|b| b.error.code))
}

#[tokio::test]
async fn a_no_cors_post_from_a_web_page_changes_no_setting() {
    let provider = SandboxPay::start();
    provider.set_faults("decline*1").await;
    let before = settings(&provider).await;
    let url = format!("{}{SETTINGS_PATH}", provider.url);
    let attack = r#"{"faults":"5xx","latency_ms":60000}"#;
    let plain = reqwest::Client::new();

    // What a page's `fetch(url, {method: "POST", mode: "no-cors", body})` sends: text/plain, an
    // Origin, no secret.
    let no_cors = plain
        .post(&url)
        .header("origin", "https://attacker.example")
        .header("content-type", "text/plain;charset=UTF-8")
        .body(attack)
        .send()
        .await
        .unwrap();
    assert_eq!(code_of(no_cors).await, (403, Some("origin_not_allowed".into())));
    // Each check holds alone: no Origin but no secret; the secret but a form body; JSON from a page.
    let no_secret = plain.post(&url).header("content-type", "application/json").body(attack).send().await.unwrap();
    assert_eq!(code_of(no_secret).await, (401, Some("unauthorized".into())));
    let wrong = plain
        .post(&url)
        .bearer_auth("0123456789abcdef0123456789abcdef0123456789abcdef")
        .header("content-type", "application/json")
        .body(attack)
        .send()
        .await
        .unwrap();
    assert_eq!(code_of(wrong).await, (401, Some("unauthorized".into())));
    for content_type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"] {
        let form = provider.client().post(&url).header("content-type", content_type).body(attack).send().await.unwrap();
        assert_eq!(code_of(form).await, (415, Some("unsupported_media_type".into())), "{content_type}");
    }
    let from_a_page =
        provider.client().post(&url).header("origin", "http://localhost:8000").json(&json!({"faults": "5xx"}));
    assert_eq!(code_of(from_a_page.send().await.unwrap()).await.0, 403);
    assert_eq!(settings(&provider).await, before, "the fault plan and latency are unchanged");

    // The secret and JSON: the change is made.
    let allowed = provider.client().post(&url).json(&json!({"faults": "5xx*1"})).send().await.unwrap();
    assert_eq!(allowed.status(), 200);
    assert_eq!(settings(&provider).await.faults, "5xx*1");
}

#[tokio::test]
async fn a_rebinding_host_name_reads_nothing() {
    let provider = SandboxPay::start();
    let port = provider.url.rsplit(':').next().unwrap().to_string();
    for path in [CHARGES_PATH, REFUNDS_PATH, SETTINGS_PATH, "/v1/charges/ch_1", "/healthz"] {
        for host in ["attacker.example".to_string(), format!("attacker.example:{port}"), format!("10.0.0.7:{port}")] {
            // Even with the secret: the name alone refuses.
            let response =
                provider.client().get(format!("{}{path}", provider.url)).header("host", &host).send().await.unwrap();
            assert_eq!(code_of(response).await, (403, Some("host_not_allowed".into())), "{path} as {host}");
        }
    }
    for host in [format!("localhost:{port}"), format!("sandbox.localhost:{port}"), format!("[::1]:{port}")] {
        let response = provider
            .client()
            .get(format!("{}{CHARGES_PATH}", provider.url))
            .header("host", &host)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{host}");
    }
}

#[tokio::test]
async fn every_route_but_healthz_needs_the_secret() {
    let provider = SandboxPay::start();
    let plain = reqwest::Client::new();
    for path in [CHARGES_PATH, "/v1/charges/ch_1", REFUNDS_PATH, SETTINGS_PATH] {
        let response = plain.get(format!("{}{path}", provider.url)).send().await.unwrap();
        assert_eq!(response.headers().get("www-authenticate").map(|v| v.to_str().unwrap()), Some("Bearer"), "{path}");
        assert_eq!(code_of(response).await, (401, Some("unauthorized".into())), "{path}");
    }
    let charge = plain
        .post(format!("{}{CHARGES_PATH}", provider.url))
        .header("idempotency-key", "k1")
        .json(&json!({"amount": 100, "currency": "usd"}))
        .send()
        .await
        .unwrap();
    assert_eq!(code_of(charge).await.0, 401);
    assert!(provider.ledger().await.is_empty(), "nothing was charged");

    let health = plain.get(format!("{}/healthz", provider.url)).send().await.unwrap();
    assert_eq!(health.status(), 200);
    assert_eq!(health.text().await.unwrap(), "ok");
}

#[tokio::test]
async fn the_provider_run_by_hand_writes_its_secret_beside_its_database_and_logs_only_where() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_giftgenius-sandbox-pay"))
        .args(["--port", "0", "--exit-with-stdin", "--db"])
        .arg(dir.path().join("pay.db"))
        .env_remove("GIFTGENIUS_SANDBOX_PAY_ADMIN_TOKEN_FILE")
        .env_remove("GIFTGENIUS_SANDBOX_PAY_DELEGATE_KEY_FILE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; LISTENING_LINE.len()];
    stdout.read_exact(&mut first).expect("it listens");
    drop(child.stdin.take()); // it exits when stdin closes
    let mut log = String::new();
    child.stderr.take().unwrap().read_to_string(&mut log).unwrap();
    child.wait().unwrap();

    let token_file = dir.path().join("pay.token");
    let secret = std::fs::read_to_string(&token_file).expect("the secret file beside the database");
    let secret = secret.trim();
    assert!(secret.len() >= 32, "{secret:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&token_file).unwrap().permissions().mode() & 0o777, 0o600);
    }
    assert!(log.contains(&token_file.display().to_string()), "the log says where: {log}");
    assert!(!log.contains(secret), "the log never shows the secret: {log}");

    // The delegate-payment key likewise, a different one, in its own file.
    let key_file = dir.path().join("pay.delegate-key");
    let key = std::fs::read_to_string(&key_file).expect("the delegate-payment key file beside the database");
    let key = key.trim();
    assert!(key.len() >= 32 && key != secret, "{key:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&key_file).unwrap().permissions().mode() & 0o777, 0o600);
    }
    assert!(log.contains(&key_file.display().to_string()), "the log says where: {log}");
    assert!(!log.contains(key), "the log never shows the key: {log}");
}

#[tokio::test]
async fn the_app_needs_the_secret_of_a_provider_it_is_given() {
    let provider = SandboxPay::start();
    let dir = tempfile::tempdir().unwrap();
    let mut config = giftgenius_server::config::Config::for_tests(dir.path());
    config.widget_html = Some(widget_path());
    config.payments_url = Some(provider.url.clone());
    config.sandbox_latency_ms = None;
    let refused = Application::build(config).await.err().expect("refused without the secret");
    assert!(refused.to_string().contains("--payments-token-file"), "{refused}");
}

#[tokio::test]
async fn the_provider_the_app_starts_gets_a_secret_nobody_else_sees() {
    // No --payments-url: the app starts its own provider and pipes it a fresh secret.
    let app = spawn_app_with(|c| {
        c.payments_url = None;
        c.payments_token_file = None;
        c.sandbox_latency_ms = Some(0);
    })
    .await;
    let sandbox = app.state.sandbox.as_ref().expect("the app started its provider");
    let payments = &app.state.checkout.payments;
    payments.set_faults("decline*1").await.expect("the app's client shows the secret");
    assert!(payments.ledger().await.expect("and reads the ledger").is_empty());
    let plain = reqwest::Client::new().get(format!("{}{CHARGES_PATH}", sandbox.url)).send().await.unwrap();
    assert_eq!(plain.status(), 401, "anyone else is refused");

    // Its delegate-payment key, piped the same way, opens delegate_payment (for the preview
    // relay), and the admin secret does not.
    let delegate = |bearer: HeaderValue| {
        reqwest::Client::new()
            .post(format!("{}{DELEGATE_PAYMENT_PATH}", sandbox.url))
            .header("authorization", bearer)
            .header("api-version", "2026-04-17")
            .header("idempotency-key", "dp-app")
            .json(&delegate_body("4242424242424242"))
            .send()
    };
    assert_eq!(delegate(sandbox.delegate_key.bearer()).await.unwrap().status(), 201);
    assert_eq!(delegate(sandbox.token.bearer()).await.unwrap().status(), 401);

    // Not on any command line (`ps` shows those to every user), not in any file beside the database.
    for secret in [sandbox.token.expose(), sandbox.delegate_key.expose()] {
        #[cfg(target_os = "linux")]
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
                assert!(!String::from_utf8_lossy(&cmdline).contains(secret), "on a command line: {:?}", entry.path());
            }
        }
        for entry in std::fs::read_dir(sandbox.db.parent().unwrap()).unwrap().flatten() {
            let text = std::fs::read(entry.path()).unwrap_or_default();
            assert!(!String::from_utf8_lossy(&text).contains(secret), "in {:?}", entry.path());
        }
    }
}
