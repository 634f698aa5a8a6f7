//! The purchase benchmark with the load generator in its own process (issue 41 item 5): the
//! server runs as its real binary, this process drives it over Streamable HTTP MCP as N
//! clients, and the CPU each side used comes from `/proc/<pid>/stat`, so the server's figure is
//! the server's and not the clients'. See docs/performance.md ("Item 5: a cheaper purchase").
//!
//!   cargo build --release -p giftgenius-server --bins --example purchasebench
//!   target/release/examples/purchasebench [--server BIN] [--db sqlite|postgres://USER@HOST:PORT]
//!       [--clients 32] [--purchases 40] [--count 100] [--label TEXT] [--show-statements]
//!
//! - `--server`: the server binary (default: `giftgenius-server` one folder up from this
//!   example, where cargo puts it); `giftgenius-sandbox-pay` must be beside it (the server
//!   starts it as its child, a process of its own, with its ledger in a fresh folder).
//! - `--db postgres://USER@HOST:PORT`: a fresh database is created on that server for each
//!   pass and dropped after it; `sqlite` (the default) is a fresh file in a temporary folder.
//! - A purchase is what the widget does: `prepare_order` (with a recipient) then `commit_order`
//!   (a fresh user, draft and key each time). Every client does one untimed purchase first (the
//!   connections and the pool warm up); then `--purchases` each, all clients at once.
//!
//! It runs two passes, each on a fresh server and database:
//! 1. counting (`--count` purchases, one client, unless 0): the server logs every statement
//!    (`GIFTGENIUS_LOG=…,sqlx::query=debug`, JSON) and the statements logged during the
//!    purchases are counted (data statements: sqlx logs BEGIN, COMMIT and ROLLBACK on some
//!    paths only, so those are left out on both; `--show-statements` lists them by text); on
//!    PostgreSQL, transactions are
//!    `pg_stat_database.xact_commit + xact_rollback` of the bench database, read once the
//!    backends have reported (PostgreSQL flushes a busy backend's counters up to 10 s late, so
//!    the pass waits 11 s before and after), less what the server's pollers made meanwhile (the
//!    rate of an idle window of 11 s before the purchases). Reads count as transactions there.
//! 2. timed (`--clients` × `--purchases`, normal logging): purchases/s, the latency of the
//!    whole purchase and of `commit_order` alone (p50 / p99), and CPU per purchase (user +
//!    system) of the server, of the provider (the server's child processes), of PostgreSQL (the
//!    bench database's backends and the WAL writer, checkpointer and background writer), of
//!    this process, and of everything else on the machine (`/proc/stat`), which says how
//!    shared the machine was.
//!
//! Every purchase must succeed (the run stops otherwise). Loopback only; bounded in count.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::future::join_all;
use giftgenius_types::wire::META_CONFIRMATION_TOKEN;
use rmcp::model::{CallToolRequestParams, CallToolResult, MetaObject, RequestMetaObject};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt, service::RunningService};
use serde_json::{Map, Value, json};
use sqlx::Connection;

type Client = RunningService<RoleClient, ()>;

/// The allocator the server binary uses, so this process costs what it would anyway.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Clock ticks per second in `/proc/<pid>/stat` (USER_HZ, 100 on every Linux we run).
const TICKS_PER_S: f64 = 100.0;

/// How long PostgreSQL may keep a backend's counters before reporting them (PGSTAT_IDLE_INTERVAL
/// is 10 s), plus a second.
const PG_STATS_SETTLE: Duration = Duration::from_secs(11);

struct Options {
    server: PathBuf,
    db: String,
    clients: usize,
    purchases: usize,
    count: usize,
    label: String,
    show_statements: bool,
}

fn options() -> anyhow::Result<Options> {
    let exe = std::env::current_exe()?;
    let beside = exe.parent().and_then(Path::parent).unwrap_or(Path::new(".")).join("giftgenius-server");
    let mut o = Options {
        server: beside,
        db: "sqlite".into(),
        clients: 32,
        purchases: 40,
        count: 100,
        label: String::new(),
        show_statements: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| anyhow::anyhow!("{flag} needs a value"));
        match flag.as_str() {
            "--server" => o.server = value()?.into(),
            "--db" => o.db = value()?,
            "--clients" => o.clients = value()?.parse()?,
            "--purchases" => o.purchases = value()?.parse()?,
            "--count" => o.count = value()?.parse()?,
            "--label" => o.label = value()?,
            "--show-statements" => o.show_statements = true,
            other => anyhow::bail!("unknown argument {other} (see the doc comment of examples/purchasebench.rs)"),
        }
    }
    if o.label.is_empty() {
        o.label = o.server.display().to_string();
    }
    Ok(o)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    let o = options()?;
    let engine = if o.db.starts_with("postgres") { "postgres" } else { "sqlite" };
    let counted = if o.count > 0 { Some(counting_pass(&o).await?) } else { None };
    let timed = timed_pass(&o).await?;
    let n = timed.purchases as f64;
    let per = |ticks: f64| ticks / TICKS_PER_S * 1e3 / n;
    let counts = match &counted {
        Some(c) => format!(
            "statements/purchase={:.1} transactions/purchase={}",
            c.statements,
            c.transactions.map_or("n/a (sqlite)".to_string(), |t| format!("{t:.2}"))
        ),
        None => "not counted".into(),
    };
    println!(
        "{label} {engine} clients={clients} purchases={purchases} purchases/s={rate:.0} commit p50={cp50:.2}ms p99={cp99:.2}ms purchase p50={pp50:.2}ms p99={pp99:.2}ms | cpu ms/purchase: server={server:.3} provider={provider:.3} postgres={pg:.3} (server+db={sdb:.3}) loadgen={lg:.3} other={other:.3} | {counts}",
        label = o.label,
        clients = o.clients,
        purchases = timed.purchases,
        rate = n / timed.elapsed.as_secs_f64(),
        cp50 = ms(percentile(&timed.commits, 0.50)),
        cp99 = ms(percentile(&timed.commits, 0.99)),
        pp50 = ms(percentile(&timed.whole, 0.50)),
        pp99 = ms(percentile(&timed.whole, 0.99)),
        server = per(timed.cpu.server),
        provider = per(timed.cpu.provider),
        pg = per(timed.cpu.postgres),
        sdb = per(timed.cpu.server + timed.cpu.postgres),
        lg = per(timed.cpu.loadgen),
        other = per(timed.cpu.other),
    );
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// A fresh database for one pass: a SQLite file in the pass's folder, or a PostgreSQL database
/// created now (and dropped by [`Database::drop_now`]).
struct Database {
    url: String,
    /// PostgreSQL: the admin URL and the database's name.
    postgres: Option<(String, String)>,
}

impl Database {
    async fn fresh(o: &Options, dir: &Path) -> anyhow::Result<Self> {
        if !o.db.starts_with("postgres") {
            return Ok(Self { url: dir.join("giftgenius.db").display().to_string(), postgres: None });
        }
        let admin = o.db.trim_end_matches('/').to_string();
        let name = format!("gg_purchasebench_{}_{}", std::process::id(), rand_suffix());
        let mut conn = sqlx::PgConnection::connect(&format!("{admin}/postgres")).await?;
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}"))).execute(&mut conn).await?;
        Ok(Self { url: format!("{admin}/{name}"), postgres: Some((admin, name)) })
    }

    async fn drop_now(&self) -> anyhow::Result<()> {
        if let Some((admin, name)) = &self.postgres {
            let mut conn = sqlx::PgConnection::connect(&format!("{admin}/postgres")).await?;
            sqlx::raw_sql(sqlx::AssertSqlSafe(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")))
                .execute(&mut conn)
                .await?;
        }
        Ok(())
    }

    /// Transactions PostgreSQL counted for the database (committed and rolled back).
    async fn transactions(&self) -> anyhow::Result<Option<i64>> {
        let Some((_, name)) = &self.postgres else { return Ok(None) };
        let mut conn = sqlx::PgConnection::connect(&self.url).await?;
        let n: i64 =
            sqlx::query_scalar("SELECT (xact_commit + xact_rollback)::int8 FROM pg_stat_database WHERE datname = $1")
                .bind(name)
                .fetch_one(&mut conn)
                .await?;
        conn.close().await?;
        Ok(Some(n))
    }

    /// The PostgreSQL processes working for this bench: the database's backends (not `except`,
    /// our own) and the WAL writer, checkpointer and background writer.
    async fn postgres_pids(&self) -> anyhow::Result<Vec<u32>> {
        let Some((_, name)) = &self.postgres else { return Ok(Vec::new()) };
        let mut conn = sqlx::PgConnection::connect(&self.url).await?;
        let pids: Vec<i32> = sqlx::query_scalar(
            "SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND (datname = $1 \
             OR backend_type IN ('walwriter', 'checkpointer', 'background writer'))",
        )
        .bind(name)
        .fetch_all(&mut conn)
        .await?;
        conn.close().await?;
        Ok(pids.into_iter().map(|p| p as u32).collect())
    }
}

fn rand_suffix() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().subsec_nanos();
    format!("{nanos:x}")
}

/// The server binary, running.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    async fn start(o: &Options, dir: &Path, db: &Database, log: Option<&Path>) -> anyhow::Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let widget = match std::env::var_os("GIFTGENIUS_WIDGET_HTML") {
            Some(path) => PathBuf::from(path),
            None => {
                let path = dir.join("widget.html");
                std::fs::write(&path, "<!doctype html><html><body>purchasebench</body></html>")?;
                path
            }
        };
        let mut command = Command::new(&o.server);
        command
            .current_dir(dir)
            .args(["--port", &port.to_string(), "--db", &db.url, "--widget-html"])
            .arg(&widget)
            .args([
                "--without-model",
                "--daily-suggestion-limit",
                "0",
                "--hourly-draft-limit",
                "0",
                "--hourly-checkout-limit",
                "0",
                "--rate-limit-per-minute",
                "0",
                "--sandbox-latency-ms",
                "0",
                "--shutdown-delay-secs",
                "0",
                "--log-format",
                "json",
            ])
            .env_remove("GIFTGENIUS_MODEL_DIR")
            .stdout(Stdio::null());
        match log {
            Some(path) => {
                // The server's statements only: the provider (its child) logs to the same stderr.
                command.env("GIFTGENIUS_LOG", "info,rmcp=warn,sqlx::query=debug");
                command.env("GIFTGENIUS_SANDBOX_PAY_LOG", "warn");
                command.stderr(std::fs::File::create(path)?);
            }
            None => {
                command.env_remove("GIFTGENIUS_LOG");
                command.stderr(std::fs::File::create(dir.join("server.log"))?);
            }
        }
        let child = command.spawn().map_err(|e| anyhow::anyhow!("cannot start {}: {e}", o.server.display()))?;
        let mut server = Server { child, url: format!("http://127.0.0.1:{port}") };
        let http = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(r) = http.get(format!("{}/readyz", server.url)).send().await
                && r.status().is_success()
            {
                return Ok(server);
            }
            if let Some(status) = server.child.try_wait()? {
                anyhow::bail!("the server exited with {status} (its log is in {})", dir.display());
            }
            anyhow::ensure!(Instant::now() < deadline, "the server was not ready within 60 s");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGTERM, and wait for it (and so for its provider child) to exit.
    fn stop(mut self) -> anyhow::Result<()> {
        let _ = Command::new("kill").arg("-TERM").arg(self.pid().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait()?.is_none() {
            if Instant::now() > deadline {
                self.child.kill()?;
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }
}

/// CPU ticks (user + system) of one process, 0 if it is gone.
fn process_ticks(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let field = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    field(11) + field(12)
}

/// Child processes of `pid` (the provider of the server).
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    tasks
        .flatten()
        .flat_map(|task| {
            std::fs::read_to_string(task.path().join("children"))
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Busy ticks of the whole machine (every CPU: all but idle and iowait).
fn machine_busy_ticks() -> f64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let Some(cpu) = stat.lines().find(|l| l.starts_with("cpu ")) else { return 0.0 };
    let v: Vec<f64> = cpu.split_whitespace().skip(1).filter_map(|f| f.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal
    v.iter().take(8).enumerate().filter(|(i, _)| *i != 3 && *i != 4).map(|(_, t)| t).sum()
}

#[derive(Default, Clone, Copy)]
struct Cpu {
    server: f64,
    provider: f64,
    postgres: f64,
    loadgen: f64,
    other: f64,
}

struct Snapshot {
    server: f64,
    provider: Vec<(u32, f64)>,
    postgres: Vec<(u32, f64)>,
    loadgen: f64,
    machine: f64,
}

async fn snapshot(server: &Server, db: &Database) -> anyhow::Result<Snapshot> {
    let postgres = db.postgres_pids().await?.into_iter().map(|p| (p, process_ticks(p))).collect();
    Ok(Snapshot {
        server: process_ticks(server.pid()),
        provider: children(server.pid()).into_iter().map(|p| (p, process_ticks(p))).collect(),
        postgres,
        loadgen: process_ticks(std::process::id()),
        machine: machine_busy_ticks(),
    })
}

/// Ticks used between two snapshots by a group of processes (one that started meanwhile counts
/// from 0).
fn group(before: &[(u32, f64)], after: &[(u32, f64)]) -> f64 {
    after.iter().map(|(pid, t)| t - before.iter().find(|(p, _)| p == pid).map_or(0.0, |(_, t0)| *t0)).sum()
}

fn used(before: &Snapshot, after: &Snapshot) -> Cpu {
    let server = after.server - before.server;
    let provider = group(&before.provider, &after.provider);
    let postgres = group(&before.postgres, &after.postgres);
    let loadgen = after.loadgen - before.loadgen;
    let machine = after.machine - before.machine;
    Cpu { server, provider, postgres, loadgen, other: (machine - server - provider - postgres - loadgen).max(0.0) }
}

async fn call(client: &Client, subject: &str, tool: &'static str, arguments: Value) -> anyhow::Result<CallToolResult> {
    let mut params =
        CallToolRequestParams::new(tool).with_arguments(arguments.as_object().cloned().unwrap_or_default());
    let mut meta = Map::new();
    meta.insert("openai/subject".into(), json!(subject));
    params.meta = Some(RequestMetaObject(MetaObject(meta)));
    Ok(client.call_tool(params).await?)
}

/// Gifts with plenty of stock, so purchases never sell out.
fn stocked_gifts() -> Vec<String> {
    giftgenius_catalog::builtin_gifts().into_iter().filter(|g| g.stock >= 150).map(|g| g.id.to_string()).collect()
}

/// One purchase (prepare, then commit): the time it took, and how long the commit took.
async fn purchase(client: &Client, gift: &str, who: &str) -> anyhow::Result<(Duration, Duration)> {
    let started = Instant::now();
    let prepared = call(
        client,
        who,
        "prepare_order",
        json!({"gift_id": gift, "quantity": 1, "recipient": {"name": "Bench Recipient", "address": {"line1": "1 Main St",
            "city": "Springfield", "region": "IL", "postal_code": "62701", "country": "US"}}}),
    )
    .await?;
    let token = prepared.meta.as_ref().and_then(|m| m.0.get(META_CONFIRMATION_TOKEN)).cloned().unwrap_or_default();
    let structured = prepared.structured_content.unwrap_or_default();
    anyhow::ensure!(structured["ok"] == true, "prepare_order failed: {structured}");
    let draft = structured["draft"]["id"].clone();
    let key = format!("ik_{who}");
    let commit_started = Instant::now();
    let committed = call(
        client,
        who,
        "commit_order",
        json!({"draft_id": draft, "idempotency_key": key, "confirmation_token": token}),
    )
    .await?;
    let commit = commit_started.elapsed();
    let structured = committed.structured_content.unwrap_or_default();
    anyhow::ensure!(structured["ok"] == true, "commit_order failed: {structured}");
    Ok((started.elapsed(), commit))
}

async fn connect(server: &Server, clients: usize) -> anyhow::Result<Vec<Client>> {
    let url = format!("{}/mcp", server.url);
    let connected = join_all((0..clients).map(|_| {
        let transport = StreamableHttpClientTransport::from_uri(url.clone());
        ().serve(transport)
    }))
    .await;
    Ok(connected.into_iter().collect::<Result<_, _>>()?)
}

/// `clients` clients making `each` purchases at once; `round` keeps users and keys apart.
async fn purchases(
    clients: &[Client],
    gifts: &[String],
    round: &str,
    each: usize,
) -> anyhow::Result<Vec<(Duration, Duration)>> {
    let runs = clients.iter().enumerate().map(|(c, client)| async move {
        let mut done = Vec::with_capacity(each);
        for i in 0..each {
            let gift = &gifts[(c * 31 + i) % gifts.len()];
            done.push(purchase(client, gift, &format!("bench-{round}-{c}-{i}")).await?);
        }
        anyhow::Ok(done)
    });
    let mut all = Vec::new();
    for run in join_all(runs).await {
        all.extend(run?);
    }
    Ok(all)
}

/// The text of the statement a log line says sqlx ran, unless it is BEGIN, COMMIT or ROLLBACK
/// (sqlx logs those on some paths and not on others, so they are left out everywhere).
fn data_statement(line: &str) -> Option<String> {
    let event = serde_json::from_str::<Value>(line).ok()?;
    if event["target"] != "sqlx::query" {
        return None;
    }
    let fields = &event["fields"];
    let text = fields["db.statement"].as_str().filter(|t| !t.trim().is_empty()).or(fields["summary"].as_str())?;
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let upper = text.to_ascii_uppercase();
    (!["BEGIN", "COMMIT", "ROLLBACK"].iter().any(|word| upper.starts_with(word))).then_some(text)
}

struct Counted {
    statements: f64,
    transactions: Option<f64>,
}

/// Pass 1: statements (and on PostgreSQL transactions) per purchase, one client.
async fn counting_pass(o: &Options) -> anyhow::Result<Counted> {
    let dir = tempfile::tempdir()?;
    let db = Database::fresh(o, dir.path()).await?;
    let log = dir.path().join("statements.log");
    let server = Server::start(o, dir.path(), &db, Some(&log)).await?;
    let result = async {
        let gifts = stocked_gifts();
        let clients = connect(&server, 1).await?;
        purchases(&clients, &gifts, "warm", 3).await?;
        // On PostgreSQL, an idle window first: the server's own pollers (the outbox worker…)
        // make transactions with or without purchases, at a rate subtracted below.
        let mut idle = None;
        if db.postgres.is_some() {
            tokio::time::sleep(PG_STATS_SETTLE).await;
            let start = db.transactions().await?;
            tokio::time::sleep(PG_STATS_SETTLE).await;
            idle = start.zip(db.transactions().await?);
        }
        let xact_before = idle.map(|(_, end)| end);
        let started = Instant::now();
        let log_before = std::fs::metadata(&log)?.len();
        purchases(&clients, &gifts, "count", o.count).await?;
        let log_after = std::fs::metadata(&log)?.len();
        if db.postgres.is_some() {
            tokio::time::sleep(PG_STATS_SETTLE).await;
        }
        let xact_after = db.transactions().await?;
        let window = started.elapsed();
        let text = std::fs::read(&log)?;
        let logged = String::from_utf8_lossy(&text[log_before as usize..log_after as usize]);
        let mut by_text = std::collections::BTreeMap::<String, usize>::new();
        for text in logged.lines().filter_map(data_statement) {
            *by_text.entry(text).or_default() += 1;
        }
        let statements: usize = by_text.values().sum();
        if o.show_statements {
            for (text, n) in &by_text {
                println!("{:>8.2} per purchase: {text}", *n as f64 / o.count as f64);
            }
        }
        for client in clients {
            let _ = client.cancel().await;
        }
        // Each interval between two reads of the counters holds the earlier read itself (1).
        let transactions = match (idle, xact_before, xact_after) {
            (Some((idle_start, idle_end)), Some(before), Some(after)) => {
                let idle_per_s = (idle_end - idle_start - 1) as f64 / PG_STATS_SETTLE.as_secs_f64();
                let background = idle_per_s * window.as_secs_f64();
                Some(((after - before - 1) as f64 - background) / o.count as f64)
            }
            _ => None,
        };
        anyhow::Ok(Counted { statements: statements as f64 / o.count as f64, transactions })
    }
    .await;
    server.stop()?;
    db.drop_now().await?;
    result
}

struct Timed {
    purchases: usize,
    elapsed: Duration,
    commits: Vec<Duration>,
    whole: Vec<Duration>,
    cpu: Cpu,
}

/// Pass 2: the timed run.
async fn timed_pass(o: &Options) -> anyhow::Result<Timed> {
    let dir = tempfile::tempdir()?;
    let db = Database::fresh(o, dir.path()).await?;
    let server = Server::start(o, dir.path(), &db, None).await?;
    let result = async {
        let gifts = stocked_gifts();
        let clients = connect(&server, o.clients).await?;
        purchases(&clients, &gifts, "warm", 1).await?;
        let before = snapshot(&server, &db).await?;
        let started = Instant::now();
        let done = purchases(&clients, &gifts, "timed", o.purchases).await?;
        let elapsed = started.elapsed();
        let after = snapshot(&server, &db).await?;
        for client in clients {
            let _ = client.cancel().await;
        }
        let mut commits: Vec<Duration> = done.iter().map(|d| d.1).collect();
        let mut whole: Vec<Duration> = done.iter().map(|d| d.0).collect();
        commits.sort();
        whole.sort();
        anyhow::Ok(Timed { purchases: done.len(), elapsed, commits, whole, cpu: used(&before, &after) })
    }
    .await;
    server.stop()?;
    db.drop_now().await?;
    result
}
