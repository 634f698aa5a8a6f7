//! The app in-process: started for one test on 127.0.0.1:0 with a fresh SQLite file, a manual
//! clock and the packed widget; MCP clients for it; and its database reached behind its back.

use std::path::PathBuf;
use std::sync::Arc;

use giftgenius_commerce::clock::Clock;
use giftgenius_server::config::Config;
use giftgenius_server::startup::Application;
use giftgenius_server::state::AppState;

use super::provider::SandboxPay;
use rmcp::RoleClient;
use rmcp::ServiceExt;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use sqlx::Connection;
use tokio_util::sync::CancellationToken;

pub struct TestApp {
    /// The public URL the server believes it has (its own address unless configured).
    pub base_url: String,
    /// Where the socket really listens.
    pub local_url: String,
    pub widget_path: PathBuf,
    pub state: Arc<AppState>,
    pub clock: Clock,
    /// The payment provider this app charges (a process of its own, maybe shared with replicas).
    pub provider: Arc<SandboxPay>,
    shutdown: CancellationToken,
    _dir: tempfile::TempDir,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// The packed widget the server must serve byte-for-byte. `cargo xtask test` builds it and sets
/// GIFTGENIUS_WIDGET_HTML; running `cargo test` alone needs `cargo xtask widget` first.
pub fn widget_path() -> PathBuf {
    let path = std::env::var_os("GIFTGENIUS_WIDGET_HTML")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../dist/giftgenius-widget.html")));
    assert!(
        path.is_file(),
        "the packed widget {} is missing: run `cargo xtask test` (or `cargo xtask widget` before `cargo test`)",
        path.display()
    );
    path
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

/// The app with a payment provider of its own.
pub async fn spawn_app_with(customize: impl FnOnce(&mut Config)) -> TestApp {
    spawn_app_on(&Arc::new(SandboxPay::start()), customize).await
}

/// The app charging `provider` (replicas share one, as they would share a real provider).
pub async fn spawn_app_on(provider: &Arc<SandboxPay>, customize: impl FnOnce(&mut Config)) -> TestApp {
    install_crypto_provider();
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = Config::for_tests(dir.path());
    config.widget_html = Some(widget_path());
    config.payments_url = Some(provider.url.clone());
    config.payments_token_file = Some(provider.token_file.clone());
    config.sandbox_latency_ms = None;
    customize(&mut config);
    let widget_path = config.widget_html().expect("widget artifact");
    let clock = Clock::manual(1_780_000_000_000);
    let app = Application::build_with_clock(config, clock.clone()).await.expect("app builds");
    let state = app.state();
    let base_url = app.public_url().to_string();
    let local_url = format!("http://127.0.0.1:{}", app.port());
    let shutdown = app.shutdown_token();
    tokio::spawn(app.run_until_stopped());
    TestApp { base_url, local_url, widget_path, state, clock, provider: provider.clone(), shutdown, _dir: dir }
}

impl TestApp {
    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.local_url)
    }

    /// A connected, initialized MCP client.
    pub async fn client(&self) -> RunningService<RoleClient, ()> {
        connect(&self.mcp_url()).await.expect("MCP client connects")
    }
}

/// A connected, initialized MCP client for the server at `mcp_url`.
pub async fn connect(mcp_url: &str) -> Result<RunningService<RoleClient, ()>, String> {
    install_crypto_provider();
    ().serve(StreamableHttpClientTransport::from_uri(mcp_url)).await.map_err(|e| e.to_string())
}

/// Makes ring the process's rustls provider before any MCP client is built. rmcp's client is
/// reqwest 0.13; built with the whole workspace, the chat crate turns its TLS on without a
/// provider of its own (ring instead of aws-lc-rs), and reqwest then panics at `Client::build`
/// unless the process installed one. Idempotent; harmless when TLS is off (this crate alone).
pub fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// Runs one statement on the SQLite file `db`, with `binds` for `$1`, `$2`, …, through a connection
/// of its own, behind the server's back (to break or repair what the server relies on).
pub async fn execute_sql(db: &str, sql: impl Into<String>, binds: &[&str]) {
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{db}")).await.expect("open the database");
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql.into()));
    for bind in binds {
        query = query.bind(*bind);
    }
    query.execute(&mut conn).await.expect("the statement runs");
    conn.close().await.unwrap();
}

/// A token secret file (`--token-secret-file`) for a test outside local mode; removed on drop.
pub fn token_secret_file() -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), "k1 0123456789abcdef0123456789abcdef-test-only\n").expect("write the secret");
    file
}
