//! Starting the app for a test and talking MCP to it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use std::sync::Arc;

use giftgenius_server::clock::Clock;
use giftgenius_server::config::{Config, WidgetMime};
use giftgenius_server::startup::Application;
use giftgenius_server::state::AppState;
use rmcp::RoleClient;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, MetaObject, RequestMetaObject};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

pub struct TestApp {
    /// The public URL the server believes it has (its own address unless configured).
    pub base_url: String,
    /// Where the socket really listens.
    pub local_url: String,
    pub widget_path: PathBuf,
    pub state: Arc<AppState>,
    pub clock: Clock,
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

pub async fn spawn_app_with(customize: impl FnOnce(&mut Config)) -> TestApp {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = Config::for_tests(dir.path());
    config.widget_html = Some(widget_path());
    config.widget_mime = WidgetMime::Skybridge;
    customize(&mut config);
    let widget_path = config.widget_html().expect("widget artifact");
    let clock = Clock::manual(1_780_000_000_000);
    let app = Application::build_with_clock(config, clock.clone()).await.expect("app builds");
    let state = app.state();
    let base_url = app.public_url().to_string();
    let local_url = format!("http://127.0.0.1:{}", app.port());
    let shutdown = app.shutdown_token();
    tokio::spawn(app.run_until_stopped());
    TestApp { base_url, local_url, widget_path, state, clock, shutdown, _dir: dir }
}

impl TestApp {
    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.local_url)
    }

    /// A connected, initialized MCP client.
    pub async fn client(&self) -> RunningService<RoleClient, ()> {
        ().serve(StreamableHttpClientTransport::from_uri(self.mcp_url())).await.expect("MCP client connects")
    }
}

pub fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("arguments must be an object, got {other}"),
    }
}

/// Calls a tool and returns (result, structuredContent).
pub async fn call(
    client: &RunningService<RoleClient, ()>,
    tool: &'static str,
    arguments: Value,
) -> (CallToolResult, Value) {
    let result = client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(args(arguments)))
        .await
        .expect("tools/call answers");
    let structured = result.structured_content.clone().expect("every result carries structuredContent");
    (result, structured)
}

/// Calls a tool as the ChatGPT user `subject` (`_meta["openai/subject"]`).
pub async fn call_as(
    client: &RunningService<RoleClient, ()>,
    subject: &str,
    tool: &'static str,
    arguments: Value,
) -> (CallToolResult, Value) {
    let mut params = CallToolRequestParams::new(tool).with_arguments(args(arguments));
    let mut meta = Map::new();
    meta.insert("openai/subject".into(), Value::String(subject.to_string()));
    params.meta = Some(RequestMetaObject(MetaObject(meta)));
    let result = client.call_tool(params).await.expect("tools/call answers");
    let structured = result.structured_content.clone().expect("every result carries structuredContent");
    (result, structured)
}

/// A widget-only `_meta` value of a result.
pub fn meta_of<'a>(result: &'a CallToolResult, key: &str) -> Option<&'a Value> {
    result.meta.as_ref().and_then(|m| m.0.get(key))
}

pub fn text_of(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

/// The real server binary, started on a free port; killed and reaped on drop.
pub struct ServerProcess {
    child: Child,
    pub url: String,
}

impl ServerProcess {
    /// Waits for the process to exit (after a failpoint aborted it).
    pub fn wait(&mut self) -> std::process::ExitStatus {
        self.child.wait().expect("wait for the server process")
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `giftgenius-server` on a free port with `db`, the built widget and `flags`, logging
/// at `log_level` to `stderr`, and waits until it answers /healthz.
pub async fn start_server_binary(db: &Path, flags: &[&str], log_level: &str, stderr: Stdio) -> ServerProcess {
    let port =
        std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port");
    #[allow(clippy::zombie_processes)] // killed and waited for in Drop
    let child = Command::new(env!("CARGO_BIN_EXE_giftgenius-server"))
        .args(["--port", &port.to_string(), "--db", &db.to_string_lossy()])
        .arg("--widget-html")
        .arg(widget_path())
        .args(flags)
        .env("GIFTGENIUS_LOG", log_level)
        .env_remove("RUST_BACKTRACE")
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("server binary starts");
    let url = format!("http://127.0.0.1:{port}");
    for _ in 0..200 {
        if reqwest::get(format!("{url}/healthz")).await.is_ok_and(|r| r.status().is_success()) {
            return ServerProcess { child, url };
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("server on {url} did not become healthy");
}

/// Where prepare_order puts the confirmation token (widget-only `_meta`).
pub const TOKEN: &str = giftgenius_types::wire::META_CONFIRMATION_TOKEN;

/// Charges in the sandbox provider's ledger: what exactly-once is counted in.
pub async fn charges(app: &TestApp) -> usize {
    app.state.checkout.payments.ledger().await.expect("ledger").len()
}

/// Orders in the store, whatever their status.
pub async fn orders(app: &TestApp) -> i64 {
    app.state.store.order_count().await.expect("orders")
}

/// prepare_order for `subject`; returns (draft id, confirmation token).
pub async fn prepare(app: &TestApp, subject: &str, gift: &str) -> (String, String) {
    let client = app.client().await;
    let (result, structured) = call_as(&client, subject, "prepare_order", json!({"gift_id": gift})).await;
    assert_eq!(structured["ok"], true, "{structured}");
    let token = meta_of(&result, TOKEN).and_then(Value::as_str).expect("token in _meta").to_string();
    (structured["draft"]["id"].as_str().unwrap().to_string(), token)
}

/// Arguments of commit_order.
pub fn commit_args(draft: &str, key: &str, token: &str) -> Value {
    json!({"draft_id": draft, "idempotency_key": key, "confirmation_token": token})
}
