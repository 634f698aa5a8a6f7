//! A real Prometheus (Debian's `prometheus` package, installed by `cargo xtask setup`) as a
//! child process: its own configuration and storage in a temporary directory, a free port,
//! one scrape job named `giftgenius` for a test server, and its HTTP API for queries. It is
//! killed and reaped on drop.
//!
//! A missing Prometheus fails the test, naming the command that installs it: a metrics test
//! that skips itself would pass on a machine that checked nothing.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::ports::unused_port;

/// Where Debian puts it; `GIFTGENIUS_PROMETHEUS` names another binary.
const DEFAULT_BINARY: &str = "/usr/bin/prometheus";

/// How often the test's Prometheus scrapes (and evaluates the alert rules).
pub const SCRAPE_INTERVAL: &str = "250ms";

pub struct Prometheus {
    child: Child,
    pub url: String,
    http: reqwest::Client,
    _dir: tempfile::TempDir,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What one scrape job reads: the server's address, and the bearer token file if it asks for one.
pub struct Target<'a> {
    pub address: &'a str,
    pub token_file: Option<&'a Path>,
}

fn binary() -> PathBuf {
    let binary = std::env::var_os("GIFTGENIUS_PROMETHEUS").map_or_else(|| PathBuf::from(DEFAULT_BINARY), PathBuf::from);
    assert!(
        binary.is_file(),
        "Prometheus is not installed ({} is missing): run `cargo xtask setup`, which installs Debian's prometheus \
         package (or set GIFTGENIUS_PROMETHEUS to a prometheus binary)",
        binary.display()
    );
    binary
}

impl Prometheus {
    /// Starts Prometheus scraping `target` every [`SCRAPE_INTERVAL`] with the `rule_files` loaded,
    /// and waits until it is ready.
    pub async fn start(target: Target<'_>, rule_files: &[&Path]) -> Prometheus {
        let binary = binary();
        let dir = tempfile::tempdir().expect("temp dir");
        let authorization = match target.token_file {
            Some(file) => format!("    authorization:\n      credentials_file: {}\n", file.display()),
            None => String::new(),
        };
        let rules: String = rule_files.iter().map(|f| format!("  - {}\n", f.display())).collect();
        let config = format!(
            "global:\n  scrape_interval: {SCRAPE_INTERVAL}\n  scrape_timeout: {SCRAPE_INTERVAL}\n  \
             evaluation_interval: {SCRAPE_INTERVAL}\nrule_files:\n{rules}scrape_configs:\n  - job_name: giftgenius\n    \
             metrics_path: /metrics\n{authorization}    static_configs:\n      - targets: ['{}']\n",
            target.address
        );
        let config_file = dir.path().join("prometheus.yml");
        std::fs::write(&config_file, config).expect("write prometheus.yml");
        let port = unused_port();
        let log = std::fs::File::create(dir.path().join("prometheus.log")).expect("log file");
        let child = Command::new(&binary)
            .arg(format!("--config.file={}", config_file.display()))
            .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let prometheus =
            Prometheus { child, url: format!("http://127.0.0.1:{port}"), http: reqwest::Client::new(), _dir: dir };
        let ready = format!("{}/-/ready", prometheus.url);
        for _ in 0..POLLS {
            if prometheus.http.get(&ready).send().await.is_ok_and(|r| r.status().is_success()) {
                return prometheus;
            }
            tokio::time::sleep(POLL_EVERY).await;
        }
        panic!("Prometheus never became ready; its log:\n{}", read(&prometheus._dir.path().join("prometheus.log")));
    }

    /// `GET /api/v1/<path>?query=…`'s `data`, or `None` if it failed.
    pub async fn api(&self, path: &str, query: &str) -> Option<Value> {
        let response =
            self.http.get(format!("{}/api/v1/{path}", self.url)).query(&[("query", query)]).send().await.ok()?;
        let body: Value = response.json().await.ok()?;
        (body["status"] == "success").then(|| body["data"].clone())
    }

    /// The value of an instant query that answers with exactly one series (`None`: no series yet,
    /// or several).
    pub async fn value(&self, query: &str) -> Option<f64> {
        let data = self.api("query", query).await?;
        match data["result"].as_array()?.as_slice() {
            [one] => one["value"][1].as_str()?.parse().ok(),
            _ => None,
        }
    }

    /// Polls `query` until its one value satisfies `expected`, and returns it; panics naming the
    /// query and the last value after the bound.
    pub async fn until(&self, query: &str, expected: impl Fn(f64) -> bool) -> f64 {
        let mut last = None;
        for _ in 0..POLLS {
            last = self.value(query).await;
            if let Some(value) = last.filter(|v| expected(*v)) {
                return value;
            }
            tokio::time::sleep(POLL_EVERY).await;
        }
        panic!("Prometheus never answered `{query}` as expected within a minute; last value: {last:?}")
    }
}

/// Polls every `POLL_EVERY`, at most `POLLS` times (a minute).
const POLL_EVERY: Duration = Duration::from_millis(100);
const POLLS: usize = 600;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}
