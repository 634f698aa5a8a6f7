//! Issue 23's network edge over real sockets: local mode only for this machine (tried from a
//! real second address: a network namespace joined to this one by a veth pair), the client
//! address taken from the one header the operator names, the per-peer connection cap, and the
//! rate limit counting every request until its token has verified.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::routing::get;
use giftgenius_server::config::Config;
use giftgenius_server::http::client_addr::ClientAddressHeader;
use giftgenius_server::startup::Application;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::support::{
    INIT, TestApp, oidc, post, spawn_app, spawn_app_with, token_secret_file, unused_port, widget_path,
};

// ---------------------------------------------------------------------------------------------
// A second address: a network namespace of the test's own

/// A network namespace joined to this one by a veth pair, with a /30 of its own: this side
/// `host_addr`, the namespace `ns_addr`. Deleted on drop (with the pair), also when a test fails.
struct Namespace {
    name: String,
    host_link: String,
    host_addr: Ipv4Addr,
    ns_addr: Ipv4Addr,
}

fn ip(args: &[&str]) -> Result<(), String> {
    let output = Command::new("ip").args(args).output().map_err(|e| format!("cannot run `ip`: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!("`ip {}` failed: {}", args.join(" "), String::from_utf8_lossy(&output.stderr).trim()))
    }
}

impl Namespace {
    /// The namespace, or why this machine cannot make one (not root, no iproute2).
    fn create() -> Result<Namespace, String> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        // Interface names have at most 15 bytes; the /30 is 10.(200+pid%50).(n*4%256).0/30.
        let tag = format!("{}{}", pid % 100_000, n);
        let (second, third) = (200 + (pid % 50) as u8, ((n * 4) % 256) as u8);
        let namespace = Namespace {
            name: format!("gg-edge-{tag}"),
            host_link: format!("gge{tag}h"),
            host_addr: Ipv4Addr::new(10, second, third, 1),
            ns_addr: Ipv4Addr::new(10, second, third, 2),
        };
        ip(&["netns", "add", &namespace.name])?;
        // From here on, Drop cleans up whatever the steps below made.
        let ns_link = format!("gge{tag}n");
        let (host_cidr, ns_cidr) = (format!("{}/30", namespace.host_addr), format!("{}/30", namespace.ns_addr));
        ip(&["link", "add", &namespace.host_link, "type", "veth", "peer", "name", &ns_link, "netns", &namespace.name])?;
        ip(&["addr", "add", &host_cidr, "dev", &namespace.host_link])?;
        ip(&["link", "set", &namespace.host_link, "up"])?;
        let inside = |args: &[&str]| {
            let mut all = vec!["netns", "exec", &namespace.name, "ip"];
            all.extend_from_slice(args);
            ip(&all)
        };
        inside(&["addr", "add", &ns_cidr, "dev", &ns_link])?;
        inside(&["link", "set", &ns_link, "up"])?;
        inside(&["link", "set", "lo", "up"])?;
        Ok(namespace)
    }

    /// Sends `request` (a whole HTTP/1.1 request with `Connection: close`) from inside the
    /// namespace to `addr` and returns what came back (empty when the connection failed).
    async fn send(&self, addr: SocketAddr, request: String) -> String {
        let (name, host, port) = (self.name.clone(), addr.ip().to_string(), addr.port().to_string());
        // bash's /dev/tcp: no client program to install inside the namespace.
        let script = r#"exec 3<>"/dev/tcp/$1/$2" || exit 1; printf '%s' "$3" >&3; cat <&3"#;
        let output = tokio::task::spawn_blocking(move || {
            Command::new("ip")
                .args(["netns", "exec", &name, "timeout", "20", "bash", "-c", script, "client"])
                .args([&host, &port, &request])
                .output()
        })
        .await
        .expect("the client thread")
        .expect("cannot run the client in the namespace");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        // Deleting the namespace deletes its end of the pair, and so the pair.
        let _ = ip(&["netns", "del", &self.name]);
        let _ = ip(&["link", "del", &self.host_link]);
    }
}

/// A namespace, or `None` after printing why this machine cannot make one.
fn namespace_or_skip(test: &str) -> Option<Namespace> {
    match Namespace::create() {
        Ok(namespace) => Some(namespace),
        Err(why) => {
            eprintln!("SKIPPED {test}: cannot make a network namespace for a second address ({why})");
            None
        }
    }
}

/// An `initialize` POST to `/mcp` claiming to be for `host`, as the attack sends it.
fn raw_initialize(host: &str, extra_headers: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, \
         text/event-stream\r\n{extra_headers}Content-Length: {}\r\nConnection: close\r\n\r\n{INIT}",
        INIT.len()
    )
}

/// The configuration of a test app that is not started through `spawn_app_with` (because it
/// must fail to build): a fresh database in `dir`, no payment provider needed.
fn config_in(dir: &std::path::Path) -> Config {
    let mut config = Config::for_tests(dir);
    config.widget_html = Some(widget_path());
    // A provider nobody answers at, with a secret file as --payments-url requires: these
    // tests end at startup or never charge.
    config.payments_url = Some(format!("http://127.0.0.1:{}", unused_port()));
    let token_file = dir.join("provider.token");
    std::fs::write(&token_file, "an-unused-provider-secret-of-at-least-32-chars\n").unwrap();
    config.payments_token_file = Some(token_file);
    config.sandbox_latency_ms = None;
    config
}

// ---------------------------------------------------------------------------------------------
// Item 1: local mode answers this machine only

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_mode_refuses_to_listen_where_the_network_reaches_it() {
    let Some(ns) = namespace_or_skip("local_mode_refuses_to_listen_where_the_network_reaches_it") else { return };
    for host in ["0.0.0.0".to_string(), ns.host_addr.to_string()] {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config_in(dir.path());
        config.host = host.clone();
        match Application::build(config).await {
            Err(e) => {
                let message = format!("{e:#}");
                assert!(
                    message.contains("--auth-issuer") && message.contains("--single-user"),
                    "the refusal says what to pass: {message}"
                );
            }
            Ok(app) => {
                // Today's main: local mode on every interface. Show what the network gets.
                let target = SocketAddr::new(IpAddr::V4(ns.host_addr), app.port());
                let spoofed_host = format!("127.0.0.1:{}", app.port());
                let shutdown = app.shutdown_token();
                tokio::spawn(app.run_until_stopped());
                let answer = ns.send(target, raw_initialize(&spoofed_host, "")).await;
                shutdown.cancel();
                panic!(
                    "local mode started on --host {host}; from {} (another network namespace) /mcp answered:\n{}",
                    ns.ns_addr,
                    answer.lines().next().unwrap_or("(nothing)")
                );
            }
        }
    }

    // The namespace does reach a server on that address: with --single-user (not local mode) it
    // starts and answers, so the refusal above is what keeps the network out.
    let (_app, target, _secret) = single_user_on_the_pair(&ns, |_| {}).await;
    let answer = ns.send(target, healthz_request(target)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "the namespace reaches the server: {answer:?}");
}

#[tokio::test]
async fn a_stdio_server_refuses_an_issuer_and_a_non_loopback_listener() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config_in(dir.path());
    config.stdio = true;
    config.auth_issuer = Some("https://as.example".into());
    let message = match Application::build(config).await {
        Ok(_) => panic!("--stdio with --auth-issuer started (as the local user, ignoring the issuer)"),
        Err(e) => format!("{e:#}"),
    };
    assert!(message.contains("--stdio") && message.contains("--auth-issuer"), "{message}");

    let mut config = config_in(dir.path());
    config.stdio = true;
    config.host = "0.0.0.0".into();
    let message = match Application::build(config).await {
        Ok(_) => panic!("--stdio started its HTTP side in local mode on every interface"),
        Err(e) => format!("{e:#}"),
    };
    assert!(message.contains("--host 127.0.0.1"), "{message}");
}

#[tokio::test]
async fn local_mode_refuses_requests_relayed_by_a_proxy_or_tunnel() {
    let app = spawn_app().await;
    let picture = format!("{}/images/hh-010.svg", app.local_url);
    assert_eq!(reqwest::get(&picture).await.unwrap().status(), 200);
    for (name, value) in [("x-forwarded-for", "203.0.113.7"), ("forwarded", "for=203.0.113.7")] {
        let refused = reqwest::Client::new().get(&picture).header(name, value).send().await.unwrap();
        assert_eq!(refused.status(), 403, "{name}");
        let body = refused.text().await.unwrap();
        assert!(body.contains("--auth-issuer"), "the refusal says what the operator must do: {body}");
        let refused = post(&app.mcp_url(), None).header(name, value).body(INIT).send().await.unwrap();
        assert_eq!(refused.status(), 403, "{name} on /mcp");
    }
    assert_eq!(post(&app.mcp_url(), None).body(INIT).send().await.unwrap().status(), 200);
}

// ---------------------------------------------------------------------------------------------
// Item 2: the client address from the one header the operator names

async fn picture_from(app_url: &str, headers: &[(&str, &str)]) -> u16 {
    let mut request = reqwest::Client::new().get(format!("{app_url}/images/hh-010.svg"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap().status().as_u16()
}

/// A single-user app (not local mode, which answers loopback only and refuses relayed
/// requests), customized; the token secret file lives as long as the returned guard.
async fn single_user_app(customize: impl FnOnce(&mut Config)) -> (TestApp, tempfile::NamedTempFile) {
    let secret = token_secret_file();
    let path = secret.path().to_path_buf();
    let app = spawn_app_with(move |c| {
        c.single_user = true;
        c.token_secret_file = Some(path);
        customize(c);
    })
    .await;
    (app, secret)
}

/// A single-user app listening on this side of the namespace's veth pair, and that address.
async fn single_user_on_the_pair(
    ns: &Namespace,
    customize: impl FnOnce(&mut Config),
) -> (TestApp, SocketAddr, tempfile::NamedTempFile) {
    let host = ns.host_addr.to_string();
    let (app, secret) = single_user_app(move |c| {
        c.host = host;
        customize(c);
    })
    .await;
    let port = url::Url::parse(&app.base_url).ok().and_then(|u| u.port()).expect("the app's port");
    (app, SocketAddr::new(IpAddr::V4(ns.host_addr), port), secret)
}

/// A single-user app behind a trusted proxy at 127.0.0.1 reading `header`.
async fn behind_a_proxy(header: Option<ClientAddressHeader>) -> (TestApp, tempfile::NamedTempFile) {
    single_user_app(move |c| {
        c.rate_limit_per_minute = 2;
        c.trusted_proxies = vec!["127.0.0.1".into()];
        c.client_address_header = header;
    })
    .await
}

#[tokio::test]
async fn behind_an_x_forwarded_for_proxy_a_client_cannot_pick_its_address_with_forwarded() {
    let (app, _secret) = behind_a_proxy(None).await;
    let url = &app.local_url;
    // The proxy appends the real client to X-Forwarded-For and passes the client's own
    // Forwarded header through: a fresh made-up address every time.
    for i in 1..=2 {
        let forged = format!("for=198.51.100.{i}");
        assert_eq!(picture_from(url, &[("x-forwarded-for", "203.0.113.1"), ("forwarded", &forged)]).await, 200);
    }
    let forged = "for=198.51.100.3";
    assert_eq!(
        picture_from(url, &[("x-forwarded-for", "203.0.113.1"), ("forwarded", forged)]).await,
        429,
        "the client is 203.0.113.1 whatever Forwarded says"
    );
}

#[tokio::test]
async fn an_ipv6_client_is_limited_by_its_64() {
    let (app, _secret) = behind_a_proxy(None).await;
    let url = &app.local_url;
    assert_eq!(picture_from(url, &[("x-forwarded-for", "2001:db8:7:7::1")]).await, 200);
    assert_eq!(picture_from(url, &[("x-forwarded-for", "2001:db8:7:7:abcd::2")]).await, 200);
    assert_eq!(picture_from(url, &[("x-forwarded-for", "2001:db8:7:7:ffff:1:2:3")]).await, 429, "same /64");
    assert_eq!(picture_from(url, &[("x-forwarded-for", "2001:db8:7:8::1")]).await, 200, "another /64");
}

#[tokio::test]
async fn a_proxy_that_writes_forwarded_is_read_by_forwarded_only() {
    let (app, _secret) = behind_a_proxy(Some(ClientAddressHeader::Forwarded)).await;
    let url = &app.local_url;
    for i in 1..=2 {
        let forged = format!("198.51.100.{i}");
        assert_eq!(picture_from(url, &[("forwarded", "for=203.0.113.1"), ("x-forwarded-for", &forged)]).await, 200);
    }
    assert_eq!(picture_from(url, &[("forwarded", "for=203.0.113.1"), ("x-forwarded-for", "198.51.100.3")]).await, 429);
}

#[tokio::test]
async fn a_client_address_header_without_trusted_proxies_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config_in(dir.path());
    config.client_address_header = Some(ClientAddressHeader::XForwardedFor);
    let message = match Application::build(config).await {
        Ok(_) => panic!("started with a header nobody is trusted to write"),
        Err(e) => format!("{e:#}"),
    };
    assert!(message.contains("--trusted-proxies"), "{message}");
}

// ---------------------------------------------------------------------------------------------
// Item 3: one peer cannot take every connection; tokens must verify to skip the rate limit

/// A connection to `to` from `source` (an address of this machine).
async fn connect_from(source: Ipv4Addr, to: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(IpAddr::V4(source), 0)).unwrap();
    socket.connect(to).await.unwrap()
}

fn healthz_request(to: SocketAddr) -> String {
    format!("GET /healthz HTTP/1.1\r\nHost: {to}\r\nConnection: close\r\n\r\n")
}

/// Sends `GET /healthz` on `stream` and returns everything the server sent until it closed.
async fn healthz_on(mut stream: TcpStream, to: SocketAddr) -> String {
    let request = healthz_request(to);
    // The server may have closed already: a failed write is an answer too.
    let _ = stream.write_all(request.as_bytes()).await;
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut answer)).await;
    assert!(read.is_ok(), "no answer and no close within 20 s");
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_peer_holding_connections_open_cannot_take_every_slot() {
    // Loopback peers are exempt (this machine), so the peers here are the veth pair's ends.
    let Some(ns) = namespace_or_skip("one_peer_holding_connections_open_cannot_take_every_slot") else { return };
    let (_app, server, _secret) = single_user_on_the_pair(&ns, |c| {
        c.max_connections = 8;
        c.max_connections_per_peer = 2;
        // Far longer than the test: held connections stay held.
        c.header_read_timeout_ms = 120_000;
    })
    .await;
    // The attacker: this side of the pair. Two connections that never send a header.
    let attacker = ns.host_addr;
    let held = connect_from(attacker, server).await;
    let _held_too = connect_from(attacker, server).await;
    // The server accepts in arrival order, so the third is judged after the two: closed unread.
    let third = healthz_on(connect_from(attacker, server).await, server).await;
    assert_eq!(third, "", "a third connection from the same peer was served");
    // Everyone else is still served: a request from the namespace.
    let other = ns.send(server, healthz_request(server)).await;
    assert!(other.starts_with("HTTP/1.1 200"), "{other:?}");
    // When one held connection ends, the peer may open another (once the server saw it end).
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let again = healthz_on(connect_from(attacker, server).await, server).await;
        if again.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(Instant::now() < deadline, "the peer's slot never came back");
        tokio::task::yield_now().await;
    }
}

/// A verified-mode app whose issuer serves `jwks` (an authorization server of a few lines).
async fn verified_app(jwks: Value, per_minute: u32) -> (TestApp, String, tempfile::NamedTempFile) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let metadata = json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks")});
    let router = axum::Router::new()
        .route("/.well-known/oauth-authorization-server", get(move || async move { Json(metadata) }))
        .route("/jwks", get(move || async move { Json(jwks) }));
    tokio::spawn(async move { axum::serve(listener, router).await });
    let secret = token_secret_file();
    let path = secret.path().to_path_buf();
    let configured = issuer.clone();
    let app = spawn_app_with(move |c| {
        c.auth_issuer = Some(configured);
        c.token_secret_file = Some(path);
        c.rate_limit_per_minute = per_minute;
    })
    .await;
    (app, issuer, secret)
}

#[tokio::test]
async fn a_flood_with_a_garbage_token_is_rate_limited_on_mcp_and_on_images() {
    let (app, _issuer, _secret) = verified_app(json!({"keys": []}), 3).await;
    let garbage = "Bearer x";
    for i in 0..3 {
        let status = post(&app.mcp_url(), None).header("authorization", garbage).body(INIT).send().await.unwrap();
        assert_eq!(status.status(), 401, "request {i}: the token is refused, and counted");
    }
    for i in 0..5 {
        let status = post(&app.mcp_url(), None).header("authorization", garbage).body(INIT).send().await.unwrap();
        assert_eq!(status.status(), 429, "request {}: over the limit before any signature check", i + 4);
    }
    // A route that never checks a token counts every request, Authorization or not.
    let (app, _issuer, _secret) = verified_app(json!({"keys": []}), 3).await;
    for _ in 0..3 {
        assert_eq!(picture_from(&app.local_url, &[("authorization", garbage)]).await, 200);
    }
    assert_eq!(picture_from(&app.local_url, &[("authorization", garbage)]).await, 429);
}

#[tokio::test]
async fn only_a_token_that_verifies_leaves_the_rate_limit() {
    let dir = tempfile::tempdir().unwrap();
    let keys = oidc::generate_keys(dir.path(), &[("rsa-1", "rsa")]);
    let (app, issuer, _secret) = verified_app(oidc::public_jwks(&[&keys[0]]), 3).await;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
    let token = keys[0].sign(&json!({
        "iss": issuer, "sub": "dana", "aud": format!("{}/mcp", app.base_url), "iat": now, "exp": now + 600,
        "scope": "orders:read orders:write", "client_id": oidc::CLIENT_ID,
    }));
    let bearer = format!("Bearer {token}");
    for i in 0..10 {
        let response = post(&app.mcp_url(), None).header("authorization", &bearer).body(INIT).send().await.unwrap();
        assert_eq!(response.status(), 200, "verified request {i} is not counted");
    }
    // The same token on a picture: no token is checked there, so it counts.
    for _ in 0..3 {
        assert_eq!(picture_from(&app.local_url, &[("authorization", &bearer)]).await, 200);
    }
    assert_eq!(picture_from(&app.local_url, &[("authorization", &bearer)]).await, 429);
    // Over its limit, the address waits even with a good token: no signature check is spent.
    let response = post(&app.mcp_url(), None).header("authorization", &bearer).body(INIT).send().await.unwrap();
    assert_eq!(response.status(), 429);
}
