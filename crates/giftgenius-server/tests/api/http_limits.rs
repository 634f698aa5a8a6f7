//! The HTTP server under slow and hostile clients: headers sent a byte at a time, idle
//! connections, bodies that never finish, more connections than the cap, and more requests
//! from one address than the rate limit, with and without a trusted proxy in front.

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::{INIT, RawSession, post, spawn_app_with, token_secret_file};

/// Reads from `stream` until the server closes it or `within` passes; returns what arrived and
/// whether the server closed (EOF or reset) in time.
async fn read_until_closed(stream: &mut TcpStream, within: Duration) -> (String, bool) {
    let mut got = Vec::new();
    let deadline = tokio::time::Instant::now() + within;
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Err(_) => return (String::from_utf8_lossy(&got).into_owned(), false),
            Ok(Ok(0)) | Ok(Err(_)) => return (String::from_utf8_lossy(&got).into_owned(), true),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
        }
    }
}

fn host_of(url: &str) -> String {
    url.trim_start_matches("http://").to_string()
}

#[tokio::test]
async fn a_client_sending_its_headers_slower_than_the_header_timeout_is_disconnected() {
    let app = spawn_app_with(|c| c.header_read_timeout_ms = 400).await;
    let host = host_of(&app.local_url);
    let mut slow = TcpStream::connect(&host).await.unwrap();
    // A header line that never ends (600 bytes at one per 50 ms at least: 30 s), so the request
    // is never complete however late the server acts, and only its timeout can end it.
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {host}\r\nX-Padding: {}", "a".repeat(600));
    let started = Instant::now();
    let mut closed_after = None;
    for byte in request.as_bytes() {
        if slow.write_all(&[*byte]).await.is_err() {
            closed_after = Some(started.elapsed());
            break;
        }
        // Peek for the server's goodbye between bytes.
        let mut buf = [0u8; 64];
        match tokio::time::timeout(Duration::from_millis(50), slow.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                closed_after = Some(started.elapsed());
                break;
            }
            Ok(Ok(n)) => {
                panic!("the server answered a request it never fully got: {}", String::from_utf8_lossy(&buf[..n]))
            }
            Err(_) => {}
        }
    }
    let closed_after = closed_after.expect("the server kept a slowloris connection open");
    assert!(closed_after >= Duration::from_millis(350), "closed before the timeout: {closed_after:?}");
    // Its 400 ms, not the 10 s default: far apart, so a loaded machine cannot blur them.
    assert!(closed_after < Duration::from_secs(8), "closed long after the timeout: {closed_after:?}");

    // A connection that sends nothing at all is closed the same way.
    let mut idle = TcpStream::connect(&host).await.unwrap();
    let (_, closed) = read_until_closed(&mut idle, Duration::from_secs(3)).await;
    assert!(closed, "an idle connection stayed open past the header timeout");

    // A normal client is served meanwhile.
    let ok = reqwest::get(format!("{}/healthz", app.local_url)).await.unwrap();
    assert_eq!(ok.status(), 200);
}

#[tokio::test]
async fn a_body_that_stops_arriving_gets_408_and_the_connection_closes() {
    let app = spawn_app_with(|c| c.request_timeout_ms = 400).await;
    let host = host_of(&app.local_url);
    let mut stream = TcpStream::connect(&host).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\":"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let (answer, closed) = read_until_closed(&mut stream, Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(closed, "the connection stayed open after the 408");
    assert!(started.elapsed() >= Duration::from_millis(350), "{:?}", started.elapsed());
}

#[tokio::test]
async fn the_request_timeout_does_not_cut_an_sse_stream() {
    let app = spawn_app_with(|c| c.request_timeout_ms = 300).await;
    let raw = RawSession::open(app.mcp_url()).await;
    let response = reqwest::Client::new()
        .get(app.mcp_url())
        .header("accept", "text/event-stream")
        .header("mcp-session-id", raw.session())
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut response = response;
    // The timeout had its chance at the stream: a request started after the stream did has
    // been cut with a 408 (what the stream would have met first).
    let host = host_of(&app.local_url);
    let mut younger = TcpStream::connect(&host).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{"
    );
    younger.write_all(head.as_bytes()).await.unwrap();
    let (cut, _) = read_until_closed(&mut younger, Duration::from_secs(30)).await;
    assert!(cut.starts_with("HTTP/1.1 408"), "{cut}");
    // And yet the stream is open: no end, no error (whatever was already sent has arrived).
    let next = tokio::time::timeout(Duration::from_millis(500), async {
        loop {
            match response.chunk().await {
                Ok(Some(_)) => continue, // a priming event or a keep-alive
                other => return other.map(|_| ()).map_err(|e| e.to_string()),
            }
        }
    })
    .await;
    assert!(next.is_err(), "the SSE stream ended past the request timeout: {next:?}");
}

#[tokio::test]
async fn at_the_connection_cap_new_clients_wait_until_a_connection_closes() {
    let app = spawn_app_with(|c| c.max_connections = 2).await;
    let host = host_of(&app.local_url);
    let first = TcpStream::connect(&host).await.unwrap();
    let mut second = TcpStream::connect(&host).await.unwrap();
    let healthz = format!("GET /healthz HTTP/1.1\r\nHost: {host}\r\n\r\n");
    // `second` is served: both slots are taken (connections are accepted in order).
    let answered = async |stream: &mut TcpStream| {
        stream.write_all(healthz.as_bytes()).await.unwrap();
        let mut buf = [0u8; 1024];
        let n = tokio::time::timeout(Duration::from_secs(30), stream.read(&mut buf)).await.expect("answered").unwrap();
        String::from_utf8_lossy(&buf[..n]).into_owned()
    };
    assert!(answered(&mut second).await.starts_with("HTTP/1.1 200"));
    let mut third = TcpStream::connect(&host).await.unwrap();
    third.write_all(healthz.as_bytes()).await.unwrap();
    let third = tokio::spawn(async move {
        let mut buf = [0u8; 1024];
        let n = third.read(&mut buf).await.unwrap();
        String::from_utf8_lossy(&buf[..n]).into_owned()
    });
    // The server had its chance at the third: a request sent after it was served meanwhile.
    assert!(answered(&mut second).await.starts_with("HTTP/1.1 200"));
    assert!(!third.is_finished(), "a third connection was served at a cap of 2");

    drop(first);
    let served = tokio::time::timeout(Duration::from_secs(30), third).await.expect("served once a slot is free");
    assert!(served.unwrap().starts_with("HTTP/1.1 200"));
}

/// A plain unauthenticated GET (a gift picture) from 127.0.0.1, optionally naming a client.
async fn picture(app_url: &str, forwarded_for: Option<&str>) -> reqwest::Response {
    let mut request = reqwest::Client::new().get(format!("{app_url}/images/hh-010.svg"));
    if let Some(client) = forwarded_for {
        request = request.header("x-forwarded-for", client);
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn one_address_gets_its_quota_then_429_and_forwarding_headers_from_it_are_ignored() {
    // Single-user mode: local mode refuses any request with a forwarding header (network_edge.rs).
    let secret = token_secret_file();
    let path = secret.path().to_path_buf();
    let app = spawn_app_with(|c| {
        c.rate_limit_per_minute = 3;
        c.single_user = true;
        c.token_secret_file = Some(path);
    })
    .await;
    for _ in 0..2 {
        assert_eq!(picture(&app.local_url, None).await.status(), 200);
    }
    assert_eq!(post(&app.mcp_url(), None).body(INIT).send().await.unwrap().status(), 200, "MCP counts too");
    let refused = picture(&app.local_url, None).await;
    assert_eq!(refused.status(), 429);
    let retry_after: u64 = refused.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=20).contains(&retry_after), "{retry_after}");
    let refused = post(&app.mcp_url(), None).body(INIT).send().await.unwrap();
    assert_eq!(refused.status(), 429);
    // 127.0.0.1 is no trusted proxy: naming another client changes nothing.
    assert_eq!(picture(&app.local_url, Some("203.0.113.7")).await.status(), 429);
    // Health checks are never limited.
    assert_eq!(reqwest::get(format!("{}/healthz", app.local_url)).await.unwrap().status(), 200);
}

#[tokio::test]
async fn behind_a_trusted_proxy_each_forwarded_client_has_its_own_quota() {
    let secret = token_secret_file();
    let path = secret.path().to_path_buf();
    let app = spawn_app_with(|c| {
        c.rate_limit_per_minute = 2;
        c.trusted_proxies = vec!["127.0.0.1".into(), "10.0.0.0/8".into()];
        c.single_user = true;
        c.token_secret_file = Some(path);
    })
    .await;
    let url = app.local_url.clone();
    assert_eq!(picture(&url, Some("203.0.113.1")).await.status(), 200);
    assert_eq!(picture(&url, Some("203.0.113.1, 10.1.2.3")).await.status(), 200, "the trusted hop is skipped");
    assert_eq!(picture(&url, Some("203.0.113.1")).await.status(), 429);
    // A client that writes someone else's address in front of its own is still itself.
    assert_eq!(picture(&url, Some("198.51.100.9, 203.0.113.1")).await.status(), 429);
    // Another client, its own bucket; the proxy's own requests, another.
    assert_eq!(picture(&url, Some("203.0.113.2")).await.status(), 200);
    assert_eq!(picture(&url, None).await.status(), 200);
}

#[tokio::test]
async fn the_limits_have_flags_environment_variables_and_zero_turns_them_off() {
    use clap::Parser;
    let defaults = giftgenius_server::config::Config::parse_from(["giftgenius-server"]);
    assert_eq!(
        (
            defaults.header_read_timeout_ms,
            defaults.request_timeout_ms,
            defaults.max_connections,
            defaults.rate_limit_per_minute
        ),
        (10_000, 30_000, 1024, 600)
    );
    assert_eq!((defaults.catalog_cache_ttl_secs, defaults.catalog_max_concurrent_fetches), (60, 4));
    assert_eq!((defaults.max_request_headers, defaults.max_request_header_bytes), (100, 32 * 1024));
    for (flag, refused) in [("--max-request-headers", "15"), ("--max-request-header-bytes", "8191")] {
        let parsed = giftgenius_server::config::Config::try_parse_from(["giftgenius-server", flag, refused]);
        assert!(parsed.is_err(), "{flag} {refused} is below what hyper takes or what a client needs");
    }
    assert!(defaults.trusted_proxies.is_empty());
    let off = giftgenius_server::config::Config::parse_from([
        "giftgenius-server",
        "--header-read-timeout-ms",
        "0",
        "--request-timeout-ms",
        "0",
        "--max-connections",
        "0",
        "--rate-limit-per-minute",
        "0",
        "--trusted-proxies",
        "127.0.0.1,10.0.0.0/8",
    ]);
    assert_eq!(
        (off.header_read_timeout_ms, off.request_timeout_ms, off.max_connections, off.rate_limit_per_minute),
        (0, 0, 0, 0)
    );
    assert_eq!(off.trusted_proxies, ["127.0.0.1", "10.0.0.0/8"]);
    // Everything off still serves.
    let app = spawn_app_with(|c| {
        c.header_read_timeout_ms = 0;
        c.request_timeout_ms = 0;
        c.max_connections = 0;
        c.rate_limit_per_minute = 0;
    })
    .await;
    for _ in 0..5 {
        assert_eq!(picture(&app.local_url, None).await.status(), 200);
    }
}

#[tokio::test]
async fn a_trusted_proxy_that_is_no_address_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = giftgenius_server::config::Config::for_tests(dir.path());
    config.widget_html = Some(crate::support::widget_path());
    config.trusted_proxies = vec!["proxy.example.com".into()];
    let error = match giftgenius_server::startup::Application::build(config).await {
        Ok(_) => panic!("started with a trusted proxy that is no address"),
        Err(e) => format!("{e:#}"),
    };
    assert!(error.contains("--trusted-proxies") && error.contains("proxy.example.com"), "{error}");
}

/// Sends `GET /healthz` with `fields` extra header fields of `value_bytes` bytes each over a raw
/// socket; returns what came back until the server closed the connection.
async fn healthz_with_headers(app_url: &str, fields: usize, value_bytes: usize) -> (String, bool) {
    let host = host_of(app_url);
    let mut stream = TcpStream::connect(&host).await.unwrap();
    let mut request = format!("GET /healthz HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for i in 0..fields {
        request.push_str(&format!("X-Field-{i}: {}\r\n", "a".repeat(value_bytes)));
    }
    request.push_str("\r\n");
    // The server may answer and close before it has read all of it: a failed write is fine.
    let _ = stream.write_all(request.as_bytes()).await;
    read_until_closed(&mut stream, Duration::from_secs(20)).await
}

/// One `Stripe-Signature` of 65,000 entries once fit in hyper's ~400 KiB head; the head limits
/// now answer 431 before any route (the webhook's signature check included) runs.
#[tokio::test]
async fn a_request_head_over_the_field_or_byte_limit_gets_431_and_the_connection_closes() {
    let app = spawn_app_with(|_| {}).await;
    // Defaults: 100 fields, 32 KiB. Within both: served.
    let (answer, _) = healthz_with_headers(&app.local_url, 90, 300).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // 40 KiB of headers, in few fields.
    let (answer, closed) = healthz_with_headers(&app.local_url, 4, 10 * 1024).await;
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    assert!(closed, "the connection is closed after a 431");
    // One Stripe-Signature of 40 KiB.
    let host = host_of(&app.local_url);
    let mut stream = TcpStream::connect(&host).await.unwrap();
    let signature = format!("t=1{}", ",v1=0".repeat(8 * 1024));
    let request = format!("POST /webhooks/stripe HTTP/1.1\r\nHost: {host}\r\nStripe-Signature: {signature}\r\n\r\n");
    let _ = stream.write_all(request.as_bytes()).await;
    let (answer, closed) = read_until_closed(&mut stream, Duration::from_secs(20)).await;
    assert!(answer.starts_with("HTTP/1.1 431") && closed, "{answer}");
    // 101 small fields.
    let (answer, closed) = healthz_with_headers(&app.local_url, 101, 1).await;
    assert!(answer.starts_with("HTTP/1.1 431") && closed, "{answer}");

    // Both are settings.
    let app = spawn_app_with(|c| {
        c.max_request_headers = 20;
        c.max_request_header_bytes = 8192;
    })
    .await;
    assert!(healthz_with_headers(&app.local_url, 15, 1).await.0.starts_with("HTTP/1.1 200"));
    assert!(healthz_with_headers(&app.local_url, 21, 1).await.0.starts_with("HTTP/1.1 431"));
    assert!(healthz_with_headers(&app.local_url, 2, 5000).await.0.starts_with("HTTP/1.1 431"));
}
