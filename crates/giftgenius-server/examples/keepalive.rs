//! What `TCP_NODELAY` saves on kept-alive connections, measured in one run.
//!
//! Starts the real server in-process twice on 127.0.0.1:0 (with Nagle's algorithm on, as before
//! the fix, then as it serves: `TCP_NODELAY` on every accepted socket), opens ONE kept-alive
//! HTTP/1.1 connection to each, initializes an MCP session and sends `tools/list` on it N
//! times, one after the other, as a host does. Prints calls/s and latency percentiles of both.
//! Loopback only; bounded in count.
//!
//!   cargo run --release -p giftgenius-server --example keepalive -- [calls]   (default 200)

use std::time::{Duration, Instant};

use giftgenius_server::config::Config;
use giftgenius_server::startup::Application;
use serde_json::json;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

async fn run(nagle: bool, calls: usize, widget: &std::path::Path) -> anyhow::Result<String> {
    let dir = tempfile::tempdir()?;
    let mut config = Config::for_tests(dir.path());
    config.widget_html = Some(widget.to_path_buf());
    config.daily_suggestion_limit = 0;
    config.rate_limit_per_minute = 0;
    let mut app = Application::build(config).await?;
    if nagle {
        app = app.with_nagle_for_benchmarks();
    }
    let url = app.mcp_url();
    let shutdown = app.shutdown_token();
    tokio::spawn(app.run_until_stopped());

    // One connection, kept alive, as a host keeps it.
    let http = reqwest::Client::builder().pool_max_idle_per_host(1).build()?;
    let post = |body: serde_json::Value, session: Option<&str>| {
        let mut request = http
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-11-25");
        if let Some(id) = session {
            request = request.header("Mcp-Session-Id", id);
        }
        request.json(&body).send()
    };
    let init = post(
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"keepalive","version":"1"}}}),
        None,
    )
    .await?;
    let session = init.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_string);
    init.text().await?;
    post(json!({"jsonrpc":"2.0","method":"notifications/initialized"}), session.as_deref()).await?.text().await?;

    let mut latencies = Vec::with_capacity(calls);
    let started = Instant::now();
    for i in 0..calls {
        let t = Instant::now();
        let body =
            post(json!({"jsonrpc":"2.0","id":i + 1,"method":"tools/list"}), session.as_deref()).await?.text().await?;
        anyhow::ensure!(body.contains("suggest_gifts"), "not a tools/list answer: {body:.200}");
        latencies.push(t.elapsed());
    }
    let wall = started.elapsed();
    shutdown.cancel();
    latencies.sort();
    Ok(format!(
        "{:<28} {calls} calls on one connection: {:>8.1} calls/s  p50 {:>7.2} ms  p99 {:>7.2} ms",
        if nagle { "Nagle on (before the fix)" } else { "TCP_NODELAY (as served)" },
        calls as f64 / wall.as_secs_f64(),
        percentile(&latencies, 0.50).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
    ))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let calls: usize = std::env::args().nth(1).map(|a| a.parse()).transpose()?.unwrap_or(200);
    let widget = tempfile::NamedTempFile::new()?;
    std::fs::write(widget.path(), "<!doctype html><title>benchmark placeholder widget</title>")?;
    // Quiet: the servers' logs are not the measurement.
    let before = run(true, calls, widget.path()).await?;
    let after = run(false, calls, widget.path()).await?;
    println!("{before}\n{after}");
    Ok(())
}
