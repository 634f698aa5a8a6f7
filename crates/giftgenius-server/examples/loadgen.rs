//! Load generator for the benchmarks in docs/benchmarks.md (run it with the command below).
//!
//! Starts the real server in-process on 127.0.0.1:0 with a fresh SQLite file (and the SANDBOX
//! payment provider beside it, a process of its own: `cargo build --release -p giftgenius-server
//! --bins` first, so it is next to this example), connects N MCP
//! clients over Streamable HTTP, and drives one scenario for a fixed number of calls per
//! client, printing calls/s and latency percentiles. Loopback only; bounded in count.
//!
//!   cargo run --release -p giftgenius-server --example loadgen -- <scenario> <clients> <calls-per-client> [--auth] [--stateless]
//!
//! `--auth` runs the scenario twice in one process: in local mode, then signed in (verified mode:
//! a real oidc-provider from preview/oidc issues one JWT per client through the PKCE flow a host
//! runs, and every call's token is verified), and prints both lines and the difference, so the
//! cost of token validation per call is measured in one run. It needs `npm ci --prefix preview/oidc`.
//!
//! Clients initialize a session (MCP 2025-11-25), as every client did before 2026-07-28.
//! `--stateless` runs the scenario a second time in the same process with 2026-07-28 clients
//! (`server/discover` once, then no session: every request carries its version and capabilities)
//! and prints both lines and the ratio, so sessioned and stateless serving are compared in one run.
//!
//! `--traces` then measures the cost of exporting traces: the scenario in fresh processes of this
//! example, alternating three times "logs" (the log subscriber at its default level, as the
//! server runs, no export) and "export" (the same plus OTLP/HTTP export to a collector in the
//! process that takes and drops every batch), and prints every line and the ratio of the medians.
//! The first line has no subscriber at all, as the other lines here. Each side also reports the
//! CPU time its process used per call, which a loaded machine disturbs far less than calls/s.
//!
//! Scenarios: `suggest` (suggest_gifts, varied arguments), `commit-unique` (prepare + commit
//! with a fresh draft and key per call; only commit is timed), `commit-storm` (every client
//! commits the SAME draft with the SAME key; after the storm the ledger must hold one charge).
//!
//! `LOADGEN_DB=postgres://USER@HOST/DB` runs on that (empty) PostgreSQL database instead of a
//! fresh SQLite file; the durability settings are printed either way.
//!
//! Limits: the usage limits (daily suggestions, hourly drafts and checkout links) and the
//! per-address rate limit are turned off, since one address drives all the load; the
//! header-read and request timeouts, the connection cap and the catalog cache keep their
//! defaults. Every result line says so.

use std::time::{Duration, Instant};

use futures::future::join_all;
// The tests' helper for the real authorization server (it allows its own unused parts).
#[path = "../tests/api/support/oidc.rs"]
mod oidc;
use giftgenius_server::config::Config;
use giftgenius_server::startup::Application;
use giftgenius_types::wire::META_CONFIRMATION_TOKEN;
use rmcp::model::ProtocolVersion;
use rmcp::model::{CallToolRequestParams, CallToolResult, MetaObject, RequestMetaObject};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt, service::RunningService};
use serde_json::{Map, Value, json};

type Client = RunningService<RoleClient, ()>;

async fn call(client: &Client, subject: &str, tool: &'static str, arguments: Value) -> CallToolResult {
    let mut params =
        CallToolRequestParams::new(tool).with_arguments(arguments.as_object().cloned().unwrap_or_default());
    let mut meta = Map::new();
    meta.insert("openai/subject".into(), json!(subject));
    params.meta = Some(RequestMetaObject(MetaObject(meta)));
    client.call_tool(params).await.expect("tool call")
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

const INTERESTS: [&str; 8] = ["coffee", "hiking", "reading", "gardening", "gaming", "cooking", "music", "yoga"];
const RELATIONS: [&str; 6] = ["friend", "parent", "partner", "colleague", "sibling", "grandparent"];

/// What one run measured.
struct Stats {
    line: String,
    p50: Duration,
    calls_per_s: f64,
}

/// Signed in: the authorization server and the per-client tokens (kept alive for the run).
struct SignedIn {
    _dir: tempfile::TempDir,
    _oidc: oidc::Oidc,
    issuer: String,
    secret: std::path::PathBuf,
}

fn start_authorization_server() -> SignedIn {
    let dir = tempfile::tempdir().expect("temp dir");
    let key = oidc::generate_keys(dir.path(), &[("rsa-1", "rsa")]);
    let jwks = dir.path().join("jwks.json");
    oidc::write_jwks(&jwks, &[&key[0]]);
    let server = oidc::Oidc::start(&jwks, 0);
    let secret = dir.path().join("token-secret");
    std::fs::write(&secret, "k1 loadgen-only-secret-0123456789abcdef0123\n").expect("secret file");
    SignedIn { issuer: server.issuer.clone(), _oidc: server, _dir: dir, secret }
}

/// The server's own allocator (`src/main.rs`), so the server measured here allocates as the
/// binary does: with glibc malloc, its arenas were 3-5 % of this process's CPU in a commit run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // rmcp's client TLS may be on without a provider when built with the whole workspace (the
    // chat crate asks for ring, not aws-lc-rs): install ring before any client is built.
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    let argv: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let auth = std::env::args().any(|a| a == "--auth");
    let stateless = std::env::args().any(|a| a == "--stateless");
    let traces = std::env::args().any(|a| a == "--traces");
    let scenario = argv.first().map(String::as_str).unwrap_or("suggest").to_string();
    let clients: usize = argv.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let per_client: usize = argv.get(2).and_then(|s| s.parse().ok()).unwrap_or(200);
    if let Some(phase) = std::env::args().find_map(|a| a.strip_prefix("--trace-phase=").map(str::to_string)) {
        return trace_phase(&phase, &scenario, clients, per_client).await;
    }
    let local = run(&scenario, clients, per_client, None, Lifecycle::Session).await?;
    println!("{}", local.line);
    if stateless {
        let modern = run(&scenario, clients, per_client, None, Lifecycle::Stateless).await?;
        println!("{}", modern.line);
        println!(
            "stateless serving: p50 {:+.3} ms per call, throughput {:.1}% of sessioned serving",
            (modern.p50.as_secs_f64() - local.p50.as_secs_f64()) * 1e3,
            modern.calls_per_s / local.calls_per_s * 100.0
        );
    }
    if traces {
        trace_overhead(&scenario, clients, per_client)?;
    }
    if auth {
        let signed_in = start_authorization_server();
        let verified = run(&scenario, clients, per_client, Some(&signed_in), Lifecycle::Session).await?;
        println!("{}", verified.line);
        println!(
            "token validation: p50 {:+.3} ms per call, throughput {:.1}% of local mode (usage limits and rate limit off in both)",
            (verified.p50.as_secs_f64() - local.p50.as_secs_f64()) * 1e3,
            verified.calls_per_s / local.calls_per_s * 100.0
        );
    }
    Ok(())
}

/// Rounds of the `--traces` comparison: each runs "logs" then "export" in fresh processes.
const TRACE_ROUNDS: usize = 3;

/// `--traces`: the scenario in fresh processes of this example, alternating "logs" (the
/// server's log subscriber at its default level, as it runs in production, no export) and
/// "export" (the same plus OTLP/HTTP export to a collector that drops every batch), then the
/// medians. A process each, because a process has one global subscriber; alternating, so that
/// drift on a shared machine falls on both sides.
fn trace_overhead(scenario: &str, clients: usize, per_client: usize) -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    let mut measured: [Vec<(f64, f64, f64)>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..TRACE_ROUNDS {
        for (side, phase) in ["logs", "export"].into_iter().enumerate() {
            let output = std::process::Command::new(&exe)
                .args([scenario.to_string(), clients.to_string(), per_client.to_string()])
                .arg(format!("--trace-phase={phase}"))
                .stderr(std::process::Stdio::null())
                .output()?;
            let stdout = String::from_utf8_lossy(&output.stdout);
            anyhow::ensure!(output.status.success(), "the {phase} run failed: {stdout}");
            let mut numbers = stdout
                .lines()
                .find_map(|l| l.strip_prefix("phase "))
                .ok_or_else(|| anyhow::anyhow!("the {phase} run printed no result: {stdout}"))?
                .split(' ')
                .filter_map(|n| n.parse::<f64>().ok());
            let (calls_per_s, p50_ms, cpu_ms) =
                (numbers.next().unwrap_or(0.0), numbers.next().unwrap_or(0.0), numbers.next().unwrap_or(0.0));
            for line in stdout.lines().filter(|l| !l.starts_with("phase ")) {
                println!("{line}");
            }
            measured[side].push((calls_per_s, p50_ms, cpu_ms));
        }
    }
    let median = |runs: &mut Vec<(f64, f64, f64)>, pick: fn(&(f64, f64, f64)) -> f64| {
        let mut values: Vec<f64> = runs.iter().map(pick).collect();
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    let [mut logs, mut export] = measured;
    let (logs_rate, export_rate) = (median(&mut logs, |r| r.0), median(&mut export, |r| r.0));
    let (logs_p50, export_p50) = (median(&mut logs, |r| r.1), median(&mut export, |r| r.1));
    let (logs_cpu, export_cpu) = (median(&mut logs, |r| r.2), median(&mut export, |r| r.2));
    println!(
        "trace export: throughput {:.1}% of logs only ({export_rate:.0} vs {logs_rate:.0} calls/s), p50 {:+.3} ms per call, CPU {:.3} vs {:.3} ms per call ({:+.1}%; the whole process: clients, server, exporter and the dropping collector) (medians of {TRACE_ROUNDS} alternating runs each)",
        export_rate / logs_rate * 100.0,
        export_p50 - logs_p50,
        export_cpu,
        logs_cpu,
        (export_cpu / logs_cpu - 1.0) * 100.0
    );
    Ok(())
}

/// One side of `--traces`, in its own process: the subscriber, the run, and a `phase` line
/// with calls/s and p50 (ms) for the parent.
async fn trace_phase(phase: &str, scenario: &str, clients: usize, per_client: usize) -> anyhow::Result<()> {
    let collector = match phase {
        "logs" => None,
        "export" => Some(discarding_collector().await?),
        other => anyhow::bail!("--trace-phase={other}: logs or export"),
    };
    giftgenius_server::telemetry::init(
        giftgenius_server::config::LogFormat::Text,
        collector.as_deref(),
        "giftgenius-server",
    );
    let cpu_before = process_cpu_ms();
    let stats = run(scenario, clients, per_client, None, Lifecycle::Session).await?;
    let cpu_per_call = (process_cpu_ms() - cpu_before) / (clients * per_client) as f64;
    println!("{} cpu/call={cpu_per_call:.3}ms [{phase}]", stats.line);
    println!("phase {} {} {cpu_per_call}", stats.calls_per_s, stats.p50.as_secs_f64() * 1e3);
    giftgenius_server::traces::shutdown();
    Ok(())
}

/// CPU time this process has used (user + system, all threads), in ms: the cost of a run,
/// which other work on a shared machine changes far less than it changes throughput. Linux
/// only (`/proc/self/stat`, in clock ticks of 10 ms); 0 elsewhere.
fn process_cpu_ms() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces): state is the 3rd, utime the 14th.
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) * 10.0
}

/// An OTLP/HTTP collector on 127.0.0.1 that answers 200 to every export and keeps nothing;
/// returns its base URL.
async fn discarding_collector() -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let app = axum::Router::new().route("/v1/traces", axum::routing::post(|_: axum::body::Bytes| async { "" }));
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(url)
}

/// How the clients meet the server.
#[derive(Clone, Copy)]
enum Lifecycle {
    /// `initialize`, then an `Mcp-Session-Id` on every request (2025-11-25 and earlier).
    Session,
    /// `server/discover`, then self-contained requests with no session (2026-07-28).
    Stateless,
}

async fn run(
    scenario: &str,
    clients: usize,
    per_client: usize,
    auth: Option<&SignedIn>,
    lifecycle: Lifecycle,
) -> anyhow::Result<Stats> {
    let scenario = scenario.to_string();
    let dir = tempfile::tempdir()?;
    let mut config = Config::for_tests(dir.path());
    // A benchmark measures speed, not the limits: the usage limits are off, and so is the
    // per-address rate limit (every client here is 127.0.0.1). The header-read and request
    // timeouts, the connection cap (1024, far above the clients) and the catalog cache stay on.
    config.daily_suggestion_limit = 0;
    config.hourly_draft_limit = 0;
    config.hourly_checkout_limit = 0;
    config.rate_limit_per_minute = 0;
    if let Ok(path) = std::env::var("GIFTGENIUS_WIDGET_HTML") {
        config.widget_html = Some(path.into());
    }
    // `LOADGEN_DB=postgres://…/empty_db` measures on PostgreSQL (the default is a fresh SQLite file).
    if let Ok(db) = std::env::var("LOADGEN_DB") {
        config.db = db;
    }
    config.sandbox_latency_ms =
        Some(std::env::var("LOADGEN_SANDBOX_LATENCY_MS").ok().and_then(|s| s.parse().ok()).unwrap_or(0));
    if let Some(auth) = auth {
        config.auth_issuer = Some(auth.issuer.clone());
        config.token_secret_file = Some(auth.secret.clone());
    }
    let app = Application::build(config).await?;
    let state = app.state();
    let url = format!("http://127.0.0.1:{}/mcp", app.port());
    let metadata = format!("http://127.0.0.1:{}/.well-known/oauth-protected-resource/mcp", app.port());
    let shutdown = app.shutdown_token();
    tokio::spawn(app.run_until_stopped());

    let connect = |c: usize| {
        let (url, metadata) = (url.clone(), metadata.clone());
        async move {
            let mut config =
                rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url);
            if auth.is_some() {
                let token = oidc::sign_in(&metadata, &format!("bench-user-{c}"), "orders:read orders:write").await;
                config = config.auth_header(token.access_token);
            }
            let transport = StreamableHttpClientTransport::from_config(config);
            match lifecycle {
                Lifecycle::Session => ().serve(transport).await,
                Lifecycle::Stateless => {
                    let modern =
                        ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
                    ().serve_with_lifecycle(transport, modern).await
                }
            }
        }
    };
    let connected = join_all((0..clients).map(connect)).await;
    let connected: Vec<Client> = connected.into_iter().collect::<Result<_, _>>()?;

    // The storm shares one draft and one key; prepare it once.
    let storm = if scenario == "commit-storm" {
        let r = call(&connected[0], "bench-user", "prepare_order", with_recipient(json!({"gift_id": "hh-012"}))).await;
        let token = r.meta.as_ref().and_then(|m| m.0.get(META_CONFIRMATION_TOKEN)).cloned().unwrap_or_default();
        let draft = r.structured_content.unwrap_or_default()["draft"]["id"].clone();
        Some(json!({"draft_id": draft, "idempotency_key": "ik_storm", "confirmation_token": token}))
    } else {
        None
    };

    // Gifts with plenty of stock, so unique commits measure the commit path, not sold-out errors.
    let stocked: Vec<String> =
        state.catalog.current().gifts().iter().filter(|g| g.stock >= 150).map(|g| g.id.to_string()).collect();
    let stocked = &stocked;

    // The provider's ledger may hold earlier runs' charges (on PostgreSQL it is a file in the
    // working directory, kept between runs): count only this run's.
    let ledger_before = state.checkout.payments.charges().await.map(|l| l.len()).unwrap_or(0);
    let started = Instant::now();
    let runs = connected.iter().enumerate().map(|(c, client)| {
        let scenario = scenario.clone();
        let storm = storm.clone();
        async move {
            let mut latencies = Vec::with_capacity(per_client);
            let mut outcomes: Vec<String> = Vec::new();
            for i in 0..per_client {
                let subject = format!("bench-user-{c}");
                let (t0, result) = match scenario.as_str() {
                    "suggest" => {
                        let args = json!({
                            "relationship_type": RELATIONS[(c + i) % RELATIONS.len()],
                            "interests": [INTERESTS[(c * 7 + i) % INTERESTS.len()]],
                            "budget_max": 20 + ((c + i) % 10) * 15,
                            "age": 20 + (i % 50),
                        });
                        let t0 = Instant::now();
                        (t0, call(client, &subject, "suggest_gifts", args).await)
                    }
                    "commit-unique" => {
                        // A fresh user per purchase: the same user preparing the same gift again
                        // would get the same (already paid) draft back.
                        let subject = format!("bench-user-{c}-{i}");
                        let gift = &stocked[(c * 31 + i) % stocked.len()];
                        let r = call(client, &subject, "prepare_order", with_recipient(json!({"gift_id": gift, "quantity": 1}))).await;
                        let token = r.meta.as_ref().and_then(|m| m.0.get(META_CONFIRMATION_TOKEN)).cloned().unwrap_or_default();
                        let draft = r.structured_content.unwrap_or_default()["draft"]["id"].clone();
                        let args = json!({"draft_id": draft, "idempotency_key": format!("ik_{c}_{i}"), "confirmation_token": token});
                        let t0 = Instant::now();
                        (t0, call(client, &subject, "commit_order", args).await)
                    }
                    _ => {
                        let t0 = Instant::now();
                        (t0, call(client, "bench-user", "commit_order", storm.clone().unwrap_or_default()).await)
                    }
                };
                latencies.push(t0.elapsed());
                let sc = result.structured_content.unwrap_or_default();
                outcomes.push(if sc["ok"] == true { "ok".into() } else { sc["error"]["code"].as_str().unwrap_or("?").to_string() });
            }
            (latencies, outcomes)
        }
    });
    let results = join_all(runs).await;
    let elapsed = started.elapsed();

    let mut all: Vec<Duration> = results.iter().flat_map(|(l, _)| l.iter().copied()).collect();
    all.sort();
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for (_, outcomes) in &results {
        for o in outcomes {
            *counts.entry(o.clone()).or_default() += 1;
        }
    }
    let durability = state.store.durability().await.unwrap_or_else(|e| format!("durability unknown: {e}"));
    let ledger = state.checkout.payments.charges().await.map(|l| l.len()).unwrap_or(0).saturating_sub(ledger_before);
    let orders = state.store.order_count().await.unwrap_or(0);
    let calls_per_s = all.len() as f64 / elapsed.as_secs_f64();
    let p50 = percentile(&all, 0.50);
    let mode = match (auth.is_some(), lifecycle) {
        (true, _) => "signed in",
        (false, Lifecycle::Session) => "local",
        (false, Lifecycle::Stateless) => "stateless",
    };
    let line = format!(
        "{scenario:<14} {mode:<9} clients={clients:<3} calls={:<6} calls/s={calls_per_s:<8.0} p50={:>7.2}ms p99={:>7.2}ms max={:>7.2}ms outcomes={counts:?} charges={ledger} orders={orders} ({durability}; usage limits and rate limit off)",
        all.len(),
        p50.as_secs_f64() * 1e3,
        percentile(&all, 0.99).as_secs_f64() * 1e3,
        all.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
    );
    shutdown.cancel();
    Ok(Stats { line, p50, calls_per_s })
}

/// prepare_order arguments with a recipient (a draft must say where it goes to be committed).
fn with_recipient(mut arguments: Value) -> Value {
    arguments["recipient"] = json!({"name": "Bench Recipient", "address": {"line1": "1 Main St", "city": "Springfield",
        "region": "IL", "postal_code": "62701", "country": "US"}});
    arguments
}
