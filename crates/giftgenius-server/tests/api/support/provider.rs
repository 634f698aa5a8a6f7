//! The SANDBOX payment provider as a real process (`giftgenius-sandbox-pay`, built by cargo with
//! the server), one per test unless a test shares one between replicas: its own port, its own
//! SQLite file, its settings (latency, faults) set through its admin endpoint, and its ledger read
//! through its API. Exactly-once is counted here, in the provider's ledger, never in responses.
//! Its secret sits in a file beside its database (`token_file`, created by the provider; replicas
//! of the app get it with `--payments-token-file`); every request made here shows it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

use giftgenius_sandbox_pay::api::{
    CHARGES_PATH, Charge, ChargeList, ChargeRequest, ChargeStatus, IDEMPOTENCY_KEY_HEADER, LISTENING_LINE,
    REFUNDS_PATH, Refund, RefundList, SETTINGS_PATH, Settings, SettingsUpdate,
};
use giftgenius_sandbox_pay::token::AdminToken;

/// The longest latency the provider takes: how long [`SandboxPay::hold`] can hold a request.
const MAX_LATENCY_MS: u64 = giftgenius_sandbox_pay::ledger::MAX_LATENCY_MS;

/// A provider process; killed and reaped on drop (and it exits by itself when our end of its
/// stdin closes, should the test process die first).
pub struct SandboxPay {
    child: Child,
    _stdin: ChildStdin,
    pub url: String,
    pub db: PathBuf,
    /// The file holding its secret (`--admin-token-file`; the app's `--payments-token-file`).
    pub token_file: PathBuf,
    pub token: AdminToken,
    http: reqwest::Client,
    _dir: Option<tempfile::TempDir>,
}

impl Drop for SandboxPay {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl SandboxPay {
    /// A fresh provider on a database of its own, without latency or faults.
    pub fn start() -> SandboxPay {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut provider =
            Self::start_on(&dir.path().join("giftgenius-sandbox-pay.db"), &["--latency-ms", "0", "--faults", ""]);
        provider._dir = Some(dir);
        provider
    }

    /// A provider process on `db` (which another process may serve too), with `flags`.
    pub fn start_on(db: &Path, flags: &[&str]) -> SandboxPay {
        let token_file = db.with_extension("token");
        let mut child = Command::new(env!("CARGO_BIN_EXE_giftgenius-sandbox-pay"))
            .args(["--port", "0", "--exit-with-stdin"])
            .arg("--db")
            .arg(db)
            .arg("--admin-token-file")
            .arg(&token_file)
            .args(flags)
            .env("GIFTGENIUS_SANDBOX_PAY_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the sandbox provider starts");
        let stdin = child.stdin.take().expect("stdin");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("its first line");
        let url = line.trim().strip_prefix(LISTENING_LINE).unwrap_or_else(|| panic!("not a listening line: {line:?}"));
        let token = AdminToken::read(&token_file).expect("the provider wrote its secret");
        let http = reqwest::Client::builder().default_headers(token.authorization()).build().expect("a client");
        SandboxPay {
            url: url.to_string(),
            child,
            _stdin: stdin,
            db: db.to_path_buf(),
            token_file,
            token,
            http,
            _dir: None,
        }
    }

    /// A client builder for raw requests to this provider (they show its secret).
    pub fn client_builder(&self) -> reqwest::ClientBuilder {
        reqwest::Client::builder().default_headers(self.token.authorization())
    }

    /// A client for raw requests to this provider (they show its secret).
    pub fn client(&self) -> reqwest::Client {
        self.http.clone()
    }

    /// The flags that point an app at this provider: its URL and its secret's file.
    pub fn app_flags(&self) -> [&str; 4] {
        ["--payments-url", &self.url, "--payments-token-file", self.token_file()]
    }

    /// `--payments-token-file`'s value for an app charging this provider.
    pub fn token_file(&self) -> &str {
        self.token_file.to_str().expect("a UTF-8 temp path")
    }

    pub async fn settings(&self, update: SettingsUpdate) -> Settings {
        let response =
            self.http.post(format!("{}{SETTINGS_PATH}", self.url)).json(&update).send().await.expect("settings");
        assert!(response.status().is_success(), "settings refused: {}", response.text().await.unwrap_or_default());
        response.json().await.expect("settings JSON")
    }

    /// Injected faults from now on, e.g. `timeout*1`, `decline`, `5xx*2`.
    pub async fn set_faults(&self, plan: &str) {
        self.settings(SettingsUpdate { latency_ms: None, faults: Some(plan.into()) }).await;
    }

    pub async fn set_latency_ms(&self, ms: u64) {
        self.settings(SettingsUpdate { latency_ms: Some(ms), faults: None }).await;
    }

    /// Holds every charge and refund request from now on in `processing` (the longest latency
    /// there is, [`MAX_LATENCY_MS`]) until [`SandboxPay::release`]: a test's steps then happen
    /// while the provider is still deciding, however slow the machine, without guessing a
    /// latency they fit in.
    pub async fn hold(&self) {
        self.set_latency_ms(MAX_LATENCY_MS).await;
    }

    /// Lets the held requests be decided now (and the next ones at once).
    pub async fn release(&self) {
        self.set_latency_ms(0).await;
    }

    /// Waits until the ledger satisfies `done` (polled; a request that reached the provider is in
    /// it as `processing` at once), and returns it. Panics naming `what` after [`MAX_LATENCY_MS`].
    pub async fn wait_for(&self, what: &str, done: impl Fn(&[Charge]) -> bool) -> Vec<Charge> {
        let give_up = std::time::Instant::now() + std::time::Duration::from_millis(MAX_LATENCY_MS);
        loop {
            let ledger = self.ledger().await;
            if done(&ledger) {
                return ledger;
            }
            assert!(std::time::Instant::now() < give_up, "the provider's ledger never showed {what}: {ledger:?}");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// The whole ledger, declines included.
    pub async fn ledger(&self) -> Vec<Charge> {
        let list: ChargeList = self
            .http
            .get(format!("{}{CHARGES_PATH}?limit=1000", self.url))
            .send()
            .await
            .expect("ledger")
            .json()
            .await
            .expect("ledger JSON");
        assert!(!list.has_more, "a test's ledger fits one page");
        list.data
    }

    /// Charges where money moved.
    pub async fn charges(&self) -> usize {
        self.ledger().await.iter().filter(|c| c.status == ChargeStatus::Succeeded).count()
    }

    /// Every refund in the provider's ledger.
    pub async fn refunds(&self) -> Vec<Refund> {
        let list: RefundList = self
            .http
            .get(format!("{}{REFUNDS_PATH}?limit=1000", self.url))
            .send()
            .await
            .expect("refunds")
            .json()
            .await
            .expect("refunds JSON");
        assert!(!list.has_more, "a test's refunds fit one page");
        list.data
    }

    /// POST /v1/charges under `key`, as any client would.
    pub async fn charge(&self, key: &str, request: &ChargeRequest) -> reqwest::Response {
        self.http
            .post(format!("{}{CHARGES_PATH}", self.url))
            .header(IDEMPOTENCY_KEY_HEADER, key)
            .json(request)
            .send()
            .await
            .expect("the provider answers")
    }

    /// GET /v1/charges?idempotency_key=K: the charge under `key`, if any.
    pub async fn charge_under(&self, key: &str) -> Option<Charge> {
        let list: ChargeList = self
            .http
            .get(format!("{}{CHARGES_PATH}", self.url))
            .query(&[("idempotency_key", key)])
            .send()
            .await
            .expect("lookup")
            .json()
            .await
            .expect("lookup JSON");
        list.data.into_iter().next()
    }
}
