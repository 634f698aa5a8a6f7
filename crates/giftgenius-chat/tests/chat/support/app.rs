//! The real GiftGenius for one test, in-process on 127.0.0.1:0 with a fresh SQLite file, charging
//! a real SANDBOX payment provider (in-process too, on a port of its own), whose ledger is where
//! charges are counted. Also: a catalog that accepts connections and never answers (slow tools).

use std::sync::Arc;

use clap::Parser;
use std::time::Duration;

use giftgenius_sandbox_pay::token::AdminToken;
use giftgenius_server::config::Config;
use giftgenius_server::startup::Application;
use giftgenius_server::state::AppState;
use tokio_util::sync::CancellationToken;

pub struct App {
    pub mcp_url: String,
    pub provider_url: String,
    /// The provider's secret: every request to it but /healthz shows it.
    pub provider_token: AdminToken,
    pub state: Arc<AppState>,
    shutdown: CancellationToken,
    _dir: tempfile::TempDir,
}

impl Drop for App {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A sandbox provider and the app, ready; `customize` adjusts the app's config.
pub async fn spawn_app(customize: impl FnOnce(&mut Config)) -> App {
    let dir = tempfile::tempdir().expect("temp dir");
    let port = free_port();
    let pay_db = dir.path().join("pay.db");
    let pay_token = dir.path().join("pay.token");
    let pay = giftgenius_sandbox_pay::Config::parse_from([
        "giftgenius-sandbox-pay",
        "--port",
        &port.to_string(),
        "--db",
        &pay_db.to_string_lossy(),
        "--latency-ms",
        "0",
        "--faults",
        "",
        "--admin-token-file",
        &pay_token.to_string_lossy(),
    ]);
    // Its future is not Send (it logs across awaits), so it gets a thread and a runtime of its own,
    // which end with the test process.
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        let _ = runtime.block_on(giftgenius_sandbox_pay::run(pay));
    });
    let provider_url = format!("http://127.0.0.1:{port}");
    for _ in 0..200 {
        if reqwest::get(format!("{provider_url}/healthz")).await.is_ok_and(|r| r.status().is_success()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }

    // Any HTML will do: these tests never render the widget.
    let widget = dir.path().join("widget.html");
    std::fs::write(&widget, "<!doctype html><title>widget</title>").unwrap();
    let mut config = Config::for_tests(dir.path());
    config.widget_html = Some(widget);
    config.payments_url = Some(provider_url.clone());
    config.payments_token_file = Some(pay_token.clone());
    config.sandbox_latency_ms = None;
    customize(&mut config);
    let app = Application::build(config).await.expect("the app builds");
    let state = app.state();
    let mcp_url = format!("http://127.0.0.1:{}/mcp", app.port());
    let shutdown = app.shutdown_token();
    tokio::spawn(app.run_until_stopped());
    // Written by the provider before it listens, so it is there once /healthz answers.
    let provider_token = AdminToken::read(&pay_token).expect("the provider's secret");
    App { mcp_url, provider_url, provider_token, state, shutdown, _dir: dir }
}

impl App {
    /// Charges in the provider's ledger.
    pub async fn charges(&self) -> usize {
        let list: serde_json::Value = reqwest::Client::new()
            .get(format!("{}/v1/charges?limit=1000", self.provider_url))
            .headers(self.provider_token.authorization())
            .send()
            .await
            .expect("the ledger answers")
            .json()
            .await
            .expect("a charge list");
        list["data"].as_array().expect("data").len()
    }

    /// Orders in the app's store, whatever their status.
    pub async fn orders(&self) -> i64 {
        self.state.store.order_count().await.expect("orders")
    }

    /// Stops the server and returns once its port refuses connections (its MCP endpoint is
    /// gone), so what the test does next meets a stopped server, however slow the machine.
    pub async fn stop(&self) {
        self.shutdown.cancel();
        let address = self.mcp_url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
        for _ in 0..1000 {
            if tokio::net::TcpStream::connect(&address).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the server on {address} still accepts connections 10 s after it was stopped");
    }
}

/// A catalog URL whose server accepts connections and never answers.
pub async fn hanging_catalog() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/catalog.json", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    url
}
