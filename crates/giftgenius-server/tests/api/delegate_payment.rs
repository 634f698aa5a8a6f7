//! ACP delegated payment on the SANDBOX provider (docs/acp.md §8), over real HTTP against the
//! real process: `POST /agentic_commerce/delegate_payment` makes a vault token (201 and its
//! shape), refuses with ACP's flat errors at the right status and JSONPath, keeps its own
//! idempotency (replay with the same status, conflict, in flight), takes only the delegate key,
//! and never keeps or logs the card number or CVC.

use std::time::Duration;

use futures::future::Either;
use giftgenius_sandbox_pay::api::{CHARGES_PATH, SETTINGS_PATH};
use giftgenius_sandbox_pay::delegate::{DELEGATE_PAYMENT_PATH, DelegateError, DelegatePaymentResponse, rfc3339};
use serde_json::{Value, json};

use crate::support::{SandboxPay, TEST_MERCHANT, delegate_body};

const PAN: &str = "4242424242424242";
const CVC: &str = "7319";

fn replayed(response: &reqwest::Response) -> bool {
    response.headers().get("idempotent-replayed").is_some_and(|v| v == "true")
}

fn header<'a>(response: &'a reqwest::Response, name: &str) -> Option<&'a str> {
    response.headers().get(name).and_then(|v| v.to_str().ok())
}

/// Status, code and param of an error answer (which must be a flat ACP error).
async fn refusal(response: reqwest::Response) -> (u16, String, Option<String>) {
    let status = response.status().as_u16();
    let error: DelegateError = response.json().await.expect("a flat ACP error");
    assert_eq!(error.kind, "invalid_request", "{error:?}");
    (status, error.code, error.param)
}

/// `delegate_body(PAN)` with `value` at `path` (array indexes as numbers).
fn with(path: &[&str], value: Value) -> Value {
    let mut body = delegate_body(PAN);
    let (last, parents) = path.split_last().unwrap();
    let mut at = &mut body;
    for p in parents {
        at = match p.parse::<usize>() {
            Ok(i) => &mut at[i],
            Err(_) => &mut at[*p],
        };
    }
    at[*last] = value;
    body
}

#[tokio::test]
async fn a_card_becomes_a_vault_token_with_the_rfcs_shape_and_headers() {
    let provider = SandboxPay::start();
    let before = rfc3339::now_ms();
    let response = provider
        .delegate_request()
        .header("idempotency-key", "dp-1")
        .header("request-id", "req_caller_1")
        .json(&delegate_body(PAN))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    assert_eq!(header(&response, "request-id"), Some("req_caller_1"));
    assert_eq!(header(&response, "idempotency-key"), Some("dp-1"));
    assert!(!replayed(&response));
    let body: Value = response.json().await.unwrap();
    let created: DelegatePaymentResponse =
        serde_json::from_value(body.clone()).expect("exactly {id, created, metadata}");
    let hex = created.id.strip_prefix("vt_").expect("vt_…");
    assert!(hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()), "128 bits in hex: {}", created.id);
    let at = rfc3339::parse_ms(&created.created).expect("RFC 3339");
    assert!(at >= before - 1000 && at <= rfc3339::now_ms(), "{}", created.created);
    let metadata: Vec<(&str, &str)> = created.metadata.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(metadata, [("idempotency_key", "dp-1"), ("merchant_id", TEST_MERCHANT), ("source", "agent_checkout")]);

    // Without a Request-Id, one is made up; the 2025-09-29 version is spoken too.
    let fresh = provider
        .delegate_request()
        .header("api-version", "2025-09-29")
        .header("idempotency-key", "dp-2")
        .json(&delegate_body(PAN))
        .send()
        .await
        .unwrap();
    assert_eq!(fresh.status(), 201);
    assert!(header(&fresh, "request-id").is_some_and(|id| id.starts_with("req_")), "{:?}", fresh.headers());
    let second: DelegatePaymentResponse = fresh.json().await.unwrap();
    assert_ne!(second.id, created.id, "each key its own token");
}

#[tokio::test]
async fn the_same_key_and_body_replay_with_the_same_status_and_another_body_conflicts() {
    let provider = SandboxPay::start();
    let body = delegate_body(PAN);
    let first = provider.delegate("dp-replay", &body).await;
    assert_eq!(first.status(), 201);
    let first: Value = first.json().await.unwrap();

    // Semantically the same body: keys in another order, an integer written as 5000.0.
    let mut same = serde_json::Map::new();
    for key in ["metadata", "risk_signals", "billing_address", "allowance", "payment_method"] {
        same.insert(key.into(), body[key].clone());
    }
    let mut same = Value::Object(same);
    same["allowance"]["max_amount"] = json!(5000.0);
    let again = provider.delegate("dp-replay", &same).await;
    assert_eq!(again.status(), 201, "the same status");
    assert!(replayed(&again));
    assert_eq!(header(&again, "idempotency-key"), Some("dp-replay"));
    assert_eq!(again.json::<Value>().await.unwrap(), first, "the same token, not a new one");

    let other = provider.delegate("dp-replay", &with(&["allowance", "max_amount"], json!(5001))).await;
    assert_eq!(refusal(other).await, (422, "idempotency_conflict".into(), None));

    // A refusal is stored too: replayed with its own status.
    let expired = with(&["payment_method", "exp_year"], json!("2001"));
    assert_eq!(provider.delegate("dp-bad", &expired).await.status(), 422);
    let replay = provider.delegate("dp-bad", &expired).await;
    assert!(replayed(&replay));
    assert_eq!(refusal(replay).await, (422, "invalid_card".into(), Some("$.payment_method.exp_year".into())));
}

#[tokio::test]
async fn only_the_delegate_key_opens_the_endpoint_and_it_opens_nothing_else() {
    let provider = SandboxPay::start();
    let url = format!("{}{DELEGATE_PAYMENT_PATH}", provider.url);
    let plain = reqwest::Client::new();
    let send = |auth: Option<String>| {
        let mut request = plain
            .post(&url)
            .header("api-version", "2026-04-17")
            .header("idempotency-key", "dp-auth")
            .json(&delegate_body(PAN));
        if let Some(auth) = auth {
            request = request.header("authorization", auth);
        }
        request.send()
    };
    for auth in [None, Some(format!("Bearer {}", provider.token.expose())), Some("Bearer nope".into())] {
        let response = send(auth.clone()).await.unwrap();
        assert_eq!(header(&response, "www-authenticate"), Some("Bearer"));
        assert!(header(&response, "request-id").is_some());
        assert_eq!(refusal(response).await, (401, "unauthorized".into(), None), "{auth:?}");
    }
    // The delegate key is no admin secret.
    let delegate_auth = format!("Bearer {}", provider.delegate_key.expose());
    for path in [CHARGES_PATH, SETTINGS_PATH] {
        let response = plain.get(format!("{}{path}", provider.url)).header("authorization", &delegate_auth);
        assert_eq!(response.send().await.unwrap().status(), 401, "{path}");
    }
    let charge = plain
        .post(format!("{}{CHARGES_PATH}", provider.url))
        .header("authorization", &delegate_auth)
        .header("idempotency-key", "k1")
        .json(&json!({"amount": 100, "currency": "usd"}))
        .send()
        .await
        .unwrap();
    assert_eq!(charge.status(), 401);
    assert!(provider.ledger().await.is_empty(), "nothing was charged");

    // The loopback guard holds here too, in ACP's shape.
    let from_a_page = provider.delegate_request().header("origin", "https://attacker.example");
    let response = from_a_page.header("idempotency-key", "dp-o").json(&delegate_body(PAN)).send().await.unwrap();
    assert_eq!(refusal(response).await, (403, "origin_not_allowed".into(), None));
    let form = provider.delegate_request().header("idempotency-key", "dp-f").header("content-type", "text/plain");
    assert_eq!(refusal(form.body("{}").send().await.unwrap()).await.0, 415);

    // None of those refusals touched the key.
    assert_eq!(send(Some(delegate_auth)).await.unwrap().status(), 201);
}

#[tokio::test]
async fn version_and_key_are_required_and_a_body_must_be_json() {
    let provider = SandboxPay::start();
    let url = format!("{}{DELEGATE_PAYMENT_PATH}", provider.url);
    let bearer = format!("Bearer {}", provider.delegate_key.expose());
    let http = reqwest::Client::new();
    for version in [None, Some("2026-01-16")] {
        let mut request = http.post(&url).header("authorization", &bearer).header("idempotency-key", "dp-v");
        if let Some(version) = version {
            request = request.header("api-version", version);
        }
        let response = request.json(&delegate_body(PAN)).send().await.unwrap();
        assert_eq!(response.status(), 400);
        let error: DelegateError = response.json().await.unwrap();
        let code = if version.is_some() { "unsupported_api_version" } else { "missing_api_version" };
        assert_eq!(error.code, code);
        assert_eq!(error.supported_versions, Some(vec!["2026-04-17".to_string(), "2025-09-29".to_string()]));
    }
    let no_key = provider.delegate_request().json(&delegate_body(PAN)).send().await.unwrap();
    assert_eq!(refusal(no_key).await, (400, "idempotency_key_required".into(), None));
    let long_key = provider.delegate_request().header("idempotency-key", "k".repeat(256));
    assert_eq!(refusal(long_key.json(&delegate_body(PAN)).send().await.unwrap()).await.1, "idempotency_key_required");
    let not_json =
        provider.delegate_request().header("idempotency-key", "dp-j").header("content-type", "application/json");
    assert_eq!(
        refusal(not_json.body("{\"payment_method\":").send().await.unwrap()).await,
        (400, "invalid_card".into(), Some("$".into()))
    );
    // Nothing of that was stored: the same keys now work.
    assert_eq!(provider.delegate("dp-v", &delegate_body(PAN)).await.status(), 201);
    assert_eq!(provider.delegate("dp-j", &delegate_body(PAN)).await.status(), 201);
}

#[tokio::test]
async fn a_malformed_field_is_400_invalid_card_at_its_path() {
    let provider = SandboxPay::start();
    let mut no_metadata = delegate_body(PAN);
    no_metadata.as_object_mut().unwrap().remove("metadata");
    let cases = [
        (with(&["payment_method", "surprise"], json!("x")), "$.payment_method.surprise"),
        (with(&["allowance", "extra"], json!(1)), "$.allowance.extra"),
        (with(&["payment_method", "number"], json!(4242424242424242u64)), "$.payment_method.number"),
        (with(&["payment_method", "number"], json!("4242-4242-4242-4242")), "$.payment_method.number"),
        (with(&["payment_method", "exp_month"], json!("13")), "$.payment_method.exp_month"),
        (with(&["payment_method", "cvc"], json!("12345")), "$.payment_method.cvc"),
        (with(&["payment_method", "card_number_type"], json!("dpan")), "$.payment_method.card_number_type"),
        (with(&["allowance", "currency"], json!("USD")), "$.allowance.currency"),
        (with(&["allowance", "max_amount"], json!(0)), "$.allowance.max_amount"),
        (with(&["allowance", "expires_at"], json!("in an hour")), "$.allowance.expires_at"),
        (with(&["risk_signals"], json!([])), "$.risk_signals"),
        (with(&["billing_address", "country"], json!("USA")), "$.billing_address.country"),
        (no_metadata, "$.metadata"),
    ];
    for (i, (body, param)) in cases.into_iter().enumerate() {
        let response = provider.delegate(&format!("dp-shape-{i}"), &body).await;
        assert_eq!(refusal(response).await, (400, "invalid_card".into(), Some(param.into())), "{param}");
    }
}

#[tokio::test]
async fn an_unacceptable_card_or_allowance_is_422_invalid_card_at_its_path() {
    let provider = SandboxPay::start();
    let soon = |ms: i64| json!(rfc3339::format_ms(rfc3339::now_ms() + ms));
    let cases = [
        (with(&["payment_method", "exp_year"], json!("2020")), "$.payment_method.exp_year"),
        (with(&["payment_method", "number"], json!("4242424242424241")), "$.payment_method.number"),
        (with(&["payment_method", "display_last4"], json!("4241")), "$.payment_method.display_last4"),
        (with(&["risk_signals", "0", "action"], json!("blocked")), "$.risk_signals[0].action"),
        (with(&["allowance", "expires_at"], soon(-60_000)), "$.allowance.expires_at"),
        (with(&["allowance", "expires_at"], soon(25 * 3_600_000)), "$.allowance.expires_at"),
    ];
    for (i, (body, param)) in cases.into_iter().enumerate() {
        let response = provider.delegate(&format!("dp-422-{i}"), &body).await;
        assert_eq!(refusal(response).await, (422, "invalid_card".into(), Some(param.into())), "{param}");
    }
}

#[tokio::test]
async fn a_second_request_while_the_first_is_held_is_told_it_is_in_flight() {
    let provider = SandboxPay::start();
    provider.hold().await;
    let body = delegate_body(PAN);
    let a = std::pin::pin!(provider.delegate("dp-held", &body));
    let b = std::pin::pin!(provider.delegate("dp-held", &body));
    // Whichever claims the key first is held (30 s); the other is answered at once.
    let first = tokio::time::timeout(Duration::from_secs(15), futures::future::select(a, b))
        .await
        .expect("the second request is answered while the first is held");
    let (told, held) = match first {
        Either::Left((told, held)) | Either::Right((told, held)) => (told, held),
    };
    assert_eq!(header(&told, "retry-after"), Some("1"));
    assert_eq!(header(&told, "idempotency-key"), Some("dp-held"));
    assert_eq!(refusal(told).await, (409, "idempotency_in_flight".into(), None));

    provider.release().await;
    let done = tokio::time::timeout(Duration::from_secs(15), held).await.expect("decided once released");
    assert_eq!(done.status(), 201);
    let token: DelegatePaymentResponse = done.json().await.unwrap();
    let replay = provider.delegate("dp-held", &body).await;
    assert!(replayed(&replay));
    assert_eq!(replay.json::<DelegatePaymentResponse>().await.unwrap(), token);
}

/// Whether `needle` occurs in `haystack` other than inside a longer run of letters and digits
/// (ids, hashes and timestamps are such runs, and may hold four given digits by chance).
fn occurs_alone(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).enumerate().any(|(i, window)| {
        let before = i.checked_sub(1).map(|j| haystack[j]);
        let after = haystack.get(i + needle.len()).copied();
        window == needle
            && !before.is_some_and(|b| b.is_ascii_alphanumeric())
            && !after.is_some_and(|b| b.is_ascii_alphanumeric())
    })
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[tokio::test]
async fn the_providers_database_never_holds_the_card_number_or_cvc() {
    let provider = SandboxPay::start();
    let token = provider.vault_token("dp-db", &delegate_body(PAN)).await;
    assert_eq!(provider.delegate("dp-db", &delegate_body(PAN)).await.status(), 201, "replayed");
    // A refused body (stored for its key) and a declining card too.
    let expired = with(&["payment_method", "exp_year"], json!("2001"));
    assert_eq!(provider.delegate("dp-db-422", &expired).await.status(), 422);
    provider.vault_token("dp-db-decline", &delegate_body("4000000000000002")).await;

    // WAL mode: what is not yet in the main file is in its -wal beside it.
    let stored: Vec<u8> = ["", "-wal", "-shm"]
        .iter()
        .flat_map(|suffix| std::fs::read(format!("{}{suffix}", provider.db.display())).unwrap_or_default())
        .collect();
    assert!(contains(&stored, token.as_bytes()), "the token is stored where the check looks");
    for pan in [PAN, "4000000000000002"] {
        assert!(!contains(&stored, pan.as_bytes()), "the database holds a card number");
    }
    assert!(!occurs_alone(&stored, CVC.as_bytes()), "the database holds the CVC");
}

#[tokio::test]
async fn no_log_line_shows_the_card_number_or_cvc_even_at_trace_level() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("provider.log");
    let provider = SandboxPay::start_logging("trace", &log_path);
    let token = provider.vault_token("dp-log", &delegate_body(PAN)).await;
    for (key, body) in [
        ("dp-log-400", with(&["payment_method", "number"], json!(4242424242424242u64))),
        ("dp-log-422", with(&["payment_method", "exp_year"], json!("2001"))),
    ] {
        assert!(provider.delegate(key, &body).await.status().is_client_error());
    }
    drop(provider);
    let log = std::fs::read(&log_path).unwrap();
    assert!(contains(&log, b"vault token created"), "the provider logged: {}", String::from_utf8_lossy(&log));
    assert!(contains(&log, token.as_bytes()), "with the token's id");
    assert!(!contains(&log, PAN.as_bytes()), "no card number in the log");
    assert!(!occurs_alone(&log, CVC.as_bytes()), "no CVC in the log");
}
