//! Issue 9's auth building blocks against a real authorization server (oidc-provider from
//! `preview/oidc`, started per test on a free port) over real HTTP: the host's sign-in flow, every
//! kind of bad token, the key refresh on an unknown `kid`, discovery fallbacks, and the `/mcp`
//! middleware mounted on a tiny axum router (and in front of rmcp's Streamable HTTP service).
//!
//! Needs node and `npm ci --prefix preview/oidc`. The verification benchmark is an ignored test:
//! `cargo test --release -p giftgenius-server --test auth -- --ignored --nocapture bench`.

#[path = "../api/support/oidc.rs"]
mod oidc;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, header};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use giftgenius_catalog::Catalog;
use giftgenius_catalog::live::LiveCatalog;
use giftgenius_commerce::clock::Clock;
use giftgenius_server::auth::jwks::JwksOptions;
use giftgenius_server::auth::metadata::{protected_resource_metadata, resource_metadata_url};
use giftgenius_server::auth::middleware::{AuthState, authenticate};
use giftgenius_server::auth::{AuthError, Caller, Issuer, Verifier, metadata, required_scope};
use giftgenius_server::metrics::Metrics;
use jsonwebtoken::Algorithm;
use oidc::{CLIENT_ID, Oidc, TestKey};
use serde_json::{Value, json};
use tempfile::TempDir;

// ---------------------------------------------------------------------------------------------
// Fixtures

/// Keys (rsa-1 and ec-1 published by the provider; rsa-2 not yet; rogue never) and a running
/// provider.
struct Fixture {
    dir: TempDir,
    rsa1: TestKey,
    ec1: TestKey,
    rsa2: TestKey,
    rogue: TestKey,
    oidc: Oidc,
}

impl Fixture {
    fn start() -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let keys =
            oidc::generate_keys(dir.path(), &[("rsa-1", "rsa"), ("ec-1", "ec"), ("rsa-2", "rsa"), ("rogue", "rsa")]);
        let [rsa1, ec1, rsa2, rogue] = <[TestKey; 4]>::try_from(keys).expect("four keys");
        let jwks = dir.path().join("jwks.json");
        oidc::write_jwks(&jwks, &[&rsa1, &ec1]);
        let oidc = Oidc::start(&jwks, 0);
        Fixture { dir, rsa1, ec1, rsa2, rogue, oidc }
    }

    fn issuer(&self) -> &str {
        &self.oidc.issuer
    }

    /// Publishes rsa-2 too: restarts the provider on the same port with a larger JWKS.
    fn publish_rsa2(&mut self) {
        let jwks = self.dir.path().join("jwks-rotated.json");
        oidc::write_jwks(&jwks, &[&self.rsa1, &self.ec1, &self.rsa2]);
        self.oidc.restart(&jwks);
    }
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_secs()
}

/// The refresh rate limit of these tests; their key cache runs on a manual clock, so a test
/// is inside or past it exactly when it says, however long its steps take.
const REFRESH_INTERVAL: Duration = Duration::from_secs(1);

/// Options with a short rate limit, on `clock` (a manual clock the test moves).
fn fast_options(clock: &Clock) -> JwksOptions {
    JwksOptions {
        min_refresh_interval: REFRESH_INTERVAL,
        failure_backoff: Duration::from_millis(200),
        clock: clock.clone(),
        ..Default::default()
    }
}

/// Just past the refresh rate limit.
fn past_the_interval(clock: &Clock) {
    clock.advance(REFRESH_INTERVAL + Duration::from_millis(1));
}

/// A tiny resource server on 127.0.0.1:0: `/mcp` behind the middleware answers what it saw;
/// the protected resource metadata is served next to it.
struct Resource {
    mcp: String,
    prm_url: String,
    verifier: Arc<Verifier>,
    /// What `/metrics` would show: the middleware counts its refusals here.
    metrics: Arc<Metrics>,
}

#[derive(Clone, Copy)]
enum Mode {
    Verified,
    Local,
    SingleUser,
}

async fn echo(Extension(caller): Extension<Caller>, headers: HeaderMap, body: Bytes) -> Json<Value> {
    let kind = match &caller {
        Caller::SignedOut => "signed_out",
        Caller::Verified(_) => "verified",
        Caller::Local => "local",
        Caller::SingleUser => "single_user",
    };
    Json(json!({
        "caller": kind,
        "subject": caller.subject(None),
        "scopes": match &caller { Caller::Verified(p) => json!(p.scopes), _ => json!(null) },
        "authorization_seen": headers.contains_key(header::AUTHORIZATION),
        "body": String::from_utf8_lossy(&body),
    }))
}

async fn serve(router: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, router).await.expect("serve") });
    addr
}

async fn resource(issuer: &str, options: JwksOptions, mode: Mode) -> Resource {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let mcp = format!("http://{addr}/mcp");
    let prm_url = resource_metadata_url(&mcp);
    let verifier =
        Arc::new(Verifier::new(Issuer::parse(issuer).expect("issuer"), mcp.clone(), options).expect("verifier"));
    let metrics = Arc::new(Metrics::new(LiveCatalog::fixed(Catalog::from_gifts(Vec::new()))));
    let state = match mode {
        Mode::Verified => AuthState::verified(verifier.clone(), prm_url.clone(), required_scope)
            .counting_into(metrics.refusals.clone()),
        Mode::Local => AuthState::local(),
        Mode::SingleUser => AuthState::single_user(),
    };
    let router = Router::new()
        .route("/mcp", post(echo).get(echo))
        .layer(axum::middleware::from_fn_with_state(state, authenticate))
        .merge(metadata::router(protected_resource_metadata(&mcp, issuer, "GiftGenius (test)")));
    tokio::spawn(async move { axum::serve(listener, router).await.expect("serve") });
    Resource { mcp, prm_url, verifier, metrics }
}

fn tools_call(tool: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool, "arguments": {"x": 1}}})
        .to_string()
}

struct Answer {
    status: StatusCode,
    www_authenticate: Option<String>,
    retry_after: Option<String>,
    json: Value,
}

async fn call(url: &str, headers: &[(&str, &str)], body: String) -> Answer {
    let mut request = reqwest::Client::new().post(url).header(header::CONTENT_TYPE, "application/json").body(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("request");
    let status = response.status();
    let header = |name| response.headers().get(name).map(|v| v.to_str().expect("ascii header").to_string());
    let www_authenticate = header(header::WWW_AUTHENTICATE);
    let retry_after = header(header::RETRY_AFTER);
    let json = response.json().await.unwrap_or(Value::Null);
    Answer { status, www_authenticate, retry_after, json }
}

fn claims(issuer: &str, audience: &str, sub: &str) -> Value {
    let now = now();
    json!({
        "iss": issuer, "sub": sub, "aud": audience, "iat": now, "exp": now + 600,
        "scope": "orders:read orders:write", "client_id": CLIENT_ID, "jti": uuid::Uuid::new_v4().to_string(),
    })
}

fn with(mut base: Value, patch: Value) -> Value {
    for (k, v) in patch.as_object().expect("patch object") {
        if v.is_null() {
            base.as_object_mut().expect("claims").remove(k);
        } else {
            base[k] = v.clone();
        }
    }
    base
}

// ---------------------------------------------------------------------------------------------
// The host's flow

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_signs_in_and_its_token_names_the_account() {
    let f = Fixture::start();
    let r = resource(f.issuer(), JwksOptions::default(), Mode::Verified).await;

    let alice = oidc::sign_in(&r.prm_url, "alice", "orders:read orders:write").await;
    assert_eq!(alice.resource, r.mcp);
    assert_eq!(alice.issuer, f.issuer());
    let principal = r.verifier.verify(&alice.access_token).await.expect("the provider's token verifies");
    assert_eq!(principal.subject, format!("{}#alice", f.issuer()));
    assert_eq!(principal.scopes, BTreeSet::from(["orders:read".to_string(), "orders:write".to_string()]));
    assert_eq!(principal.client_id.as_deref(), Some(CLIENT_ID));

    // Through the middleware: the tool call passes with the body unchanged and the
    // Authorization header gone.
    let bearer = format!("Bearer {}", alice.access_token);
    let body = tools_call("commit_order");
    let answer = call(&r.mcp, &[("authorization", &bearer)], body.clone()).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.json);
    assert_eq!(answer.json["caller"], "verified");
    assert_eq!(answer.json["subject"], format!("{}#alice", f.issuer()));
    assert_eq!(answer.json["authorization_seen"], false, "nothing behind the middleware sees the token");
    assert_eq!(answer.json["body"], body);

    // Another user, another subject; a forged openai/subject in the body changes nothing.
    let bob = oidc::sign_in(&r.prm_url, "bob", "orders:read orders:write").await;
    let forged = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "get_order", "arguments": {}, "_meta": {"openai/subject": "alice"}}})
    .to_string();
    let answer = call(&r.mcp, &[("authorization", &format!("Bearer {}", bob.access_token))], forged).await;
    assert_eq!(answer.json["subject"], format!("{}#bob", f.issuer()));
}

// ---------------------------------------------------------------------------------------------
// Every bad token, refused for its own reason

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bad_token_is_refused_for_its_reason() {
    let f = Fixture::start();
    let r = resource(f.issuer(), JwksOptions::default(), Mode::Verified).await;
    let other = resource(f.issuer(), JwksOptions::default(), Mode::Verified).await;
    let good = claims(f.issuer(), &r.mcp, "mallory");
    let now = now();

    let real = oidc::sign_in(&r.prm_url, "carol", "orders:read orders:write").await.access_token;
    let for_other_resource = oidc::sign_in(&other.prm_url, "carol", "orders:read orders:write").await.access_token;
    let tampered = {
        let parts: Vec<&str> = real.split('.').collect();
        let payload = base64::Engine::encode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            with(claims(f.issuer(), &r.mcp, "admin"), json!({})).to_string(),
        );
        format!("{}.{payload}.{}", parts[0], parts[2])
    };

    let cases: Vec<(&str, String, Result<(), AuthError>)> = vec![
        ("real token from the sign-in flow", real.clone(), Ok(())),
        ("RS256, provider's key", f.rsa1.sign(&good), Ok(())),
        ("ES256, provider's EC key", f.ec1.sign(&good), Ok(())),
        (
            "expired (exp = now - 120 s)",
            f.rsa1.sign(&with(good.clone(), json!({"exp": now - 120}))),
            Err(AuthError::Expired),
        ),
        (
            "expired within leeway (exp = now - 30 s)",
            f.rsa1.sign(&with(good.clone(), json!({"exp": now - 30}))),
            Ok(()),
        ),
        (
            "not yet valid (nbf = now + 120 s)",
            f.rsa1.sign(&with(good.clone(), json!({"nbf": now + 120}))),
            Err(AuthError::NotYetValid),
        ),
        (
            "wrong audience",
            f.rsa1.sign(&with(good.clone(), json!({"aud": "https://other.example/mcp"}))),
            Err(AuthError::WrongAudience),
        ),
        ("real token for another resource", for_other_resource, Err(AuthError::WrongAudience)),
        ("no aud", f.rsa1.sign(&with(good.clone(), json!({"aud": null}))), Err(AuthError::WrongAudience)),
        (
            "aud list containing ours",
            f.rsa1.sign(&with(good.clone(), json!({"aud": ["https://x.example", &r.mcp]}))),
            Ok(()),
        ),
        (
            "wrong issuer",
            f.rsa1.sign(&with(good.clone(), json!({"iss": "https://evil.example"}))),
            Err(AuthError::WrongIssuer),
        ),
        (
            "issuer + trailing slash",
            f.rsa1.sign(&with(good.clone(), json!({"iss": format!("{}/", f.issuer())}))),
            Err(AuthError::WrongIssuer),
        ),
        (
            "bad signature (rogue key, kid rsa-1)",
            f.rogue.forge(&good, Algorithm::RS256, Some("rsa-1")),
            Err(AuthError::BadSignature),
        ),
        ("tampered payload (sub=admin)", tampered, Err(AuthError::BadSignature)),
        ("alg none, kid rsa-1", oidc::unsigned(&good, Some("rsa-1")), Err(AuthError::UnsupportedAlg)),
        ("alg none, no kid", oidc::unsigned(&good, None), Err(AuthError::UnsupportedAlg)),
        (
            "HS256 keyed with rsa-1's public PEM",
            oidc::hs256(&good, &f.rsa1.public_pem, Some("rsa-1")),
            Err(AuthError::UnsupportedAlg),
        ),
        (
            "ES256 header on RSA kid",
            f.ec1.forge(&good, Algorithm::ES256, Some("rsa-1")),
            Err(AuthError::UnsupportedAlg),
        ),
        ("RS256 header on EC kid", f.rsa1.forge(&good, Algorithm::RS256, Some("ec-1")), Err(AuthError::UnsupportedAlg)),
        (
            "PS256 on a key whose JWK says RS256",
            f.rsa1.forge(&good, Algorithm::PS256, Some("rsa-1")),
            Err(AuthError::UnsupportedAlg),
        ),
        ("unknown kid", f.rsa2.sign(&good), Err(AuthError::UnknownKey)),
        ("no exp", f.rsa1.sign(&with(good.clone(), json!({"exp": null}))), Err(AuthError::Malformed)),
        ("no sub", f.rsa1.sign(&with(good.clone(), json!({"sub": null}))), Err(AuthError::Malformed)),
        ("not a JWT", "opaque-token-123".to_string(), Err(AuthError::Malformed)),
    ];

    let mut table = String::from("| case | expected | got |\n|---|---|---|\n");
    let mut wrong = Vec::new();
    for (name, token, expected) in &cases {
        let got = r.verifier.verify(token).await.map(|_| ());
        table.push_str(&format!("| {name} | {expected:?} | {got:?} |\n"));
        if got != *expected {
            wrong.push(*name);
        }
        // No refusal ever carries the token.
        if let Err(e) = got {
            assert!(!format!("{e} {e:?}").contains(token.as_str()));
        }
    }
    println!("{table}");
    assert!(wrong.is_empty(), "unexpected results for {wrong:?}\n{table}");
}

// ---------------------------------------------------------------------------------------------
// Keys: refresh on an unknown kid, rate limit, coalescing

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_kid_is_accepted_once_the_provider_publishes_it() {
    let mut f = Fixture::start();
    let clock = Clock::manual(1_780_000_000_000);
    let r = resource(f.issuer(), fast_options(&clock), Mode::Verified).await;
    let keys = r.verifier.keys();
    let good = claims(f.issuer(), &r.mcp, "dave");
    let rotated = f.rsa2.sign(&good);

    r.verifier.verify(&f.rsa1.sign(&good)).await.expect("initial keys");
    assert_eq!(keys.fetch_count(), 1);
    assert_eq!(r.verifier.verify(&rotated).await, Err(AuthError::UnknownKey));
    assert_eq!(keys.fetch_count(), 1, "within the rate limit: no refetch right after the first fetch");

    past_the_interval(&clock);
    assert_eq!(r.verifier.verify(&rotated).await, Err(AuthError::UnknownKey));
    assert_eq!(keys.fetch_count(), 2, "refetched once; the provider does not publish rsa-2 yet");

    f.publish_rsa2();
    assert_eq!(r.verifier.verify(&rotated).await, Err(AuthError::UnknownKey), "rate-limited again");
    assert_eq!(keys.fetch_count(), 2);
    past_the_interval(&clock);
    let principal = r.verifier.verify(&rotated).await.expect("accepted after the refresh");
    assert_eq!(principal.subject, format!("{}#dave", f.issuer()));
    assert_eq!(keys.fetch_count(), 3);
    r.verifier.verify(&f.rsa1.sign(&good)).await.expect("the old key still works");
    assert_eq!(keys.fetch_count(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_refreshes_are_coalesced() {
    let f = Fixture::start();
    let clock = Clock::manual(1_780_000_000_000);
    let r = resource(f.issuer(), fast_options(&clock), Mode::Verified).await;
    let good = claims(f.issuer(), &r.mcp, "erin");
    let known = f.rsa1.sign(&good);
    let unknown = f.rsa2.sign(&good);

    let verify_all = |token: String| {
        let verifier = r.verifier.clone();
        async move {
            let tasks: Vec<_> = (0..20)
                .map(|_| {
                    let (verifier, token) = (verifier.clone(), token.clone());
                    tokio::spawn(async move { verifier.verify(&token).await.map(|_| ()) })
                })
                .collect();
            let mut results = Vec::new();
            for task in tasks {
                results.push(task.await.expect("task"));
            }
            results
        }
    };
    assert!(verify_all(known.clone()).await.iter().all(Result::is_ok));
    assert_eq!(r.verifier.keys().fetch_count(), 1, "20 cold verifications, one fetch");

    past_the_interval(&clock);
    assert!(verify_all(unknown.clone()).await.iter().all(|r| *r == Err(AuthError::UnknownKey)));
    assert_eq!(r.verifier.keys().fetch_count(), 2, "20 unknown kids, one refresh");
    assert!(verify_all(unknown).await.iter().all(|r| *r == Err(AuthError::UnknownKey)));
    assert_eq!(r.verifier.keys().fetch_count(), 2, "and none more inside the rate limit");
}

// ---------------------------------------------------------------------------------------------
// Discovery against hand-made authorization servers (fallback, paths, mismatches, limits)

/// Serves `documents` (path → JSON) on 127.0.0.1:0; the closure gets the base URL.
async fn fake_as(documents: impl Fn(&str) -> Vec<(String, Value)>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let mut router = Router::new();
    for (path, document) in documents(&base) {
        router = router.route(&path, get(move || async move { Json(document) }));
    }
    tokio::spawn(async move { axum::serve(listener, router).await.expect("serve") });
    base
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_falls_back_and_refuses_what_does_not_fit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let keys = oidc::generate_keys(dir.path(), &[("rsa-1", "rsa")]);
    let key = &keys[0];
    let jwks = oidc::public_jwks(&[key]);
    let audience = "http://127.0.0.1:1/mcp";
    let verify = |issuer: String, options: JwksOptions| {
        let token = key.sign(&claims(&issuer, audience, "frank"));
        async move {
            let verifier =
                Verifier::new(Issuer::parse(&issuer).expect("issuer"), audience.into(), options).expect("verifier");
            verifier.verify(&token).await.map(|p| p.subject)
        }
    };

    // Only OpenID Connect discovery (no RFC 8414 document): found by the fallback.
    let jwks_ = jwks.clone();
    let issuer = fake_as(move |base| {
        vec![
            ("/.well-known/openid-configuration".into(), json!({"issuer": base, "jwks_uri": format!("{base}/keys")})),
            ("/keys".into(), jwks_.clone()),
        ]
    })
    .await;
    assert_eq!(verify(issuer.clone(), JwksOptions::default()).await, Ok(format!("{issuer}#frank")));

    // An issuer with a path: RFC 8414 path insertion.
    let jwks_ = jwks.clone();
    let base = fake_as(move |base| {
        vec![
            (
                "/.well-known/oauth-authorization-server/tenant/7".into(),
                json!({"issuer": format!("{base}/tenant/7"), "jwks_uri": format!("{base}/tenant/7/jwks")}),
            ),
            ("/tenant/7/jwks".into(), jwks_.clone()),
        ]
    })
    .await;
    let issuer = format!("{base}/tenant/7");
    assert_eq!(verify(issuer.clone(), JwksOptions::default()).await, Ok(format!("{issuer}#frank")));

    // Metadata naming another issuer is not used (RFC 8414 §3.3).
    let jwks_ = jwks.clone();
    let issuer = fake_as(move |base| {
        vec![
            (
                "/.well-known/oauth-authorization-server".into(),
                json!({"issuer": "https://evil.example", "jwks_uri": format!("{base}/keys")}),
            ),
            ("/keys".into(), jwks_.clone()),
        ]
    })
    .await;
    assert_eq!(verify(issuer, JwksOptions::default()).await, Err(AuthError::Unreachable));

    // A JWKS larger than the limit is not read.
    let jwks_ = jwks.clone();
    let issuer = fake_as(move |base| {
        vec![
            (
                "/.well-known/oauth-authorization-server".into(),
                json!({"issuer": base, "jwks_uri": format!("{base}/keys")}),
            ),
            ("/keys".into(), jwks_.clone()),
        ]
    })
    .await;
    let tiny = JwksOptions { max_body_bytes: 200, ..Default::default() };
    assert_eq!(verify(issuer.clone(), tiny).await, Err(AuthError::Unreachable));
    assert_eq!(verify(issuer.clone(), JwksOptions::default()).await, Ok(format!("{issuer}#frank")));

    // Nobody listening: unreachable, at once (a refused connection), not after the fetch
    // timeout, which is set far beyond any machine's slowness so the two cannot be confused.
    let started = Instant::now();
    let closed = JwksOptions { timeout: Duration::from_secs(120), ..Default::default() };
    assert_eq!(verify("http://127.0.0.1:1".into(), closed).await, Err(AuthError::Unreachable));
    assert!(started.elapsed() < Duration::from_secs(60), "waited for the timeout: {:?}", started.elapsed());
}

// ---------------------------------------------------------------------------------------------
// The middleware over HTTP

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_middleware_answers_each_case_over_http() {
    let f = Fixture::start();
    let r = resource(f.issuer(), JwksOptions::default(), Mode::Verified).await;
    let prm = &r.prm_url;
    let read_only = oidc::sign_in(&r.prm_url, "grace", "orders:read").await;
    assert_eq!(read_only.scope, "orders:read");
    let read_only = format!("Bearer {}", read_only.access_token);

    // No token: signed out, the request goes on.
    let answer = call(&r.mcp, &[], tools_call("prepare_order")).await;
    assert_eq!((answer.status, answer.json["caller"].as_str()), (StatusCode::OK, Some("signed_out")));

    // An expired token: 401 with the invalid_token challenge.
    let expired = f.rsa1.sign(&with(claims(f.issuer(), &r.mcp, "x"), json!({"exp": now() - 3600})));
    let answer = call(&r.mcp, &[("authorization", &format!("Bearer {expired}"))], tools_call("suggest_gifts")).await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        answer.www_authenticate.as_deref(),
        Some(
            format!(
                r#"Bearer error="invalid_token", error_description="the access token expired", resource_metadata="{prm}""#
            )
            .as_str()
        )
    );
    assert_eq!(answer.json, json!({"error": "invalid_token", "error_description": "the access token expired"}));

    // Another scheme, or two Authorization headers: 401 with the bare challenge.
    for headers in [
        vec![("authorization", "Basic dXNlcjpwYXNz")],
        vec![("authorization", "Bearer a"), ("authorization", "Bearer b")],
    ] {
        let answer = call(&r.mcp, &headers, tools_call("suggest_gifts")).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
        assert_eq!(answer.www_authenticate, Some(format!(r#"Bearer resource_metadata="{prm}""#)));
    }

    // A read-only token calling a write tool: 403 insufficient_scope, by body or by header.
    let insufficient = format!(r#"Bearer error="insufficient_scope", scope="orders:write", resource_metadata="{prm}""#);
    let answer = call(&r.mcp, &[("authorization", &read_only)], tools_call("prepare_order")).await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    assert_eq!(answer.www_authenticate.as_deref(), Some(insufficient.as_str()));
    assert_eq!(answer.json["error"], "insufficient_scope");
    let batch = format!("[{},{}]", tools_call("get_order"), tools_call("commit_order"));
    assert_eq!(call(&r.mcp, &[("authorization", &read_only)], batch).await.status, StatusCode::FORBIDDEN);
    let by_header =
        [("authorization", read_only.as_str()), ("mcp-method", "tools/call"), ("mcp-name", "create_checkout_session")];
    let answer = call(&r.mcp, &by_header, "{not json".into()).await;
    assert_eq!(
        (answer.status, answer.www_authenticate.as_deref()),
        (StatusCode::FORBIDDEN, Some(insufficient.as_str()))
    );

    // ... and the tools it may call pass, body unchanged.
    for tool in ["get_order", "suggest_gifts"] {
        let answer = call(&r.mcp, &[("authorization", &read_only)], tools_call(tool)).await;
        assert_eq!(answer.status, StatusCode::OK, "{tool}");
        assert_eq!(answer.json["body"], tools_call(tool));
        assert_eq!(answer.json["scopes"], json!(["orders:read"]));
    }

    // A GET (the SSE stream) with a valid token goes on with its caller.
    let response = reqwest::Client::new().get(&r.mcp).header("authorization", &read_only).send().await.expect("GET");
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.json::<Value>().await.expect("json")["caller"], "verified");

    // Headers that contradict the body: 400.
    let mismatch = [("authorization", read_only.as_str()), ("mcp-method", "tools/call"), ("mcp-name", "get_order")];
    assert_eq!(call(&r.mcp, &mismatch, tools_call("suggest_gifts")).await.status, StatusCode::BAD_REQUEST);

    // A body over the limit: 413.
    let huge =
        json!({"method": "tools/call", "params": {"name": "get_order", "pad": "x".repeat(300 * 1024)}}).to_string();
    assert_eq!(call(&r.mcp, &[("authorization", &read_only)], huge).await.status, StatusCode::PAYLOAD_TOO_LARGE);

    // Every refusal above is counted by its reason, with no more detail than that.
    let shown = r.metrics.encode();
    for (reason, count) in [("invalid_token", 1), ("invalid_request", 2), ("insufficient_scope", 3)] {
        let series = format!(r#"giftgenius_auth_refusals_total{{endpoint="mcp",reason="{reason}"}} {count}"#);
        assert!(shown.lines().any(|l| l == series), "{series} in:\n{shown}");
    }

    // The protected resource metadata, at both paths.
    let base = r.mcp.trim_end_matches("/mcp");
    for path in ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"] {
        let response = reqwest::get(format!("{base}{path}")).await.expect("PRM");
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()["access-control-allow-origin"], "*");
        let doc: Value = response.json().await.expect("PRM JSON");
        assert_eq!(doc["resource"], r.mcp);
        assert_eq!(doc["authorization_servers"], json!([f.issuer()]));
        assert_eq!(doc["scopes_supported"], json!(["orders:read", "orders:write"]));
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_issuer_is_a_503_not_a_sign_in_prompt() {
    let r = resource(
        "http://127.0.0.1:1",
        JwksOptions { timeout: Duration::from_secs(2), ..Default::default() },
        Mode::Verified,
    )
    .await;
    let header =
        base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, r#"{"alg":"RS256","kid":"k"}"#);
    let token = format!("{header}.e30.c2ln"); // well-formed; its key cannot be fetched
    let answer = call(&r.mcp, &[("authorization", &format!("Bearer {token}"))], tools_call("get_order")).await;
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE, "{}", answer.json);
    assert_eq!(answer.retry_after.as_deref(), Some("5"));
    assert_eq!(answer.www_authenticate, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_and_single_user_modes_ignore_bearer_tokens() {
    for (mode, expected) in [(Mode::Local, "local"), (Mode::SingleUser, "single_user")] {
        let r = resource("http://127.0.0.1:1", JwksOptions::default(), mode).await;
        for headers in [vec![], vec![("authorization", "Bearer whatever")], vec![("authorization", "Basic eDp5")]] {
            let answer = call(&r.mcp, &headers, tools_call("commit_order")).await;
            assert_eq!(answer.status, StatusCode::OK);
            assert_eq!(answer.json["caller"], expected);
            assert_eq!(answer.json["authorization_seen"], false);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Mounted in front of rmcp's Streamable HTTP service, as the app will mount it

struct Nop;
impl rmcp::ServerHandler for Nop {}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_middleware_mounts_in_front_of_rmcp() {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

    let f = Fixture::start();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let mcp_url = format!("http://{addr}/mcp");
    let prm_url = resource_metadata_url(&mcp_url);
    let verifier =
        Arc::new(Verifier::new(Issuer::parse(f.issuer()).unwrap(), mcp_url.clone(), JwksOptions::default()).unwrap());
    let auth = AuthState::verified(verifier, prm_url.clone(), required_scope);
    let mcp = StreamableHttpService::new(
        || Ok(Nop),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    // Mounted as the app mounts it (startup.rs): the middleware as a layer over the /mcp router.
    let router =
        Router::new().nest_service("/mcp", mcp).layer(axum::middleware::from_fn_with_state(auth, authenticate));
    tokio::spawn(async move { axum::serve(listener, router).await.expect("serve") });

    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    .to_string();
    let accept = ("accept", "application/json, text/event-stream");
    let token = oidc::sign_in(&prm_url_for(&f, &mcp_url).await, "heidi", "orders:read").await.access_token;
    let bearer = format!("Bearer {token}");

    let answer = call(&mcp_url, &[accept, ("authorization", "Bearer nope")], initialize.clone()).await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    let answer = call(&mcp_url, &[accept, ("authorization", &bearer)], tools_call("commit_order")).await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    assert_eq!(
        answer.www_authenticate,
        Some(format!(r#"Bearer error="insufficient_scope", scope="orders:write", resource_metadata="{prm_url}""#))
    );
    let response = reqwest::Client::new()
        .post(&mcp_url)
        .header("accept", accept.1)
        .header("content-type", "application/json")
        .header("authorization", &bearer)
        .body(initialize)
        .send()
        .await
        .expect("initialize");
    assert_eq!(response.status(), StatusCode::OK, "rmcp got the request, body intact");
    assert!(response.text().await.expect("body").contains("\"protocolVersion\""));
}

/// A protected resource metadata URL for `mcp_url` (served by a side router, since the rmcp
/// router above has only `/mcp`).
async fn prm_url_for(f: &Fixture, mcp_url: &str) -> String {
    let addr = serve(metadata::router(protected_resource_metadata(mcp_url, f.issuer(), "t"))).await;
    format!("http://{addr}/.well-known/oauth-protected-resource/mcp")
}

// ---------------------------------------------------------------------------------------------
// Benchmark (ignored; run in release)

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: cargo test --release -p giftgenius-server --test auth -- --ignored --nocapture bench"]
async fn bench_verification() {
    let f = Fixture::start();
    let audience = "http://127.0.0.1:1/mcp";
    let verifier = Verifier::new(Issuer::parse(f.issuer()).unwrap(), audience.into(), JwksOptions::default()).unwrap();
    let n = 5000;
    for (name, key) in [("RS256 (2048-bit)", &f.rsa1), ("ES256 (P-256)", &f.ec1)] {
        let token = key.sign(&claims(f.issuer(), audience, "bench"));
        verifier.verify(&token).await.expect("warm the key cache");
        let started = Instant::now();
        for _ in 0..n {
            std::hint::black_box(verifier.verify(std::hint::black_box(&token)).await.expect("valid"));
        }
        let per = started.elapsed().as_secs_f64() * 1e6 / f64::from(n);
        println!("verify {name}: {per:.1} µs/token over {n} tokens (keys cached)");
    }
}
