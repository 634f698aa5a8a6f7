//! The SANDBOX payment provider as a real process (`giftgenius-sandbox-pay`, built by cargo with
//! the server), one per test unless a test shares one between replicas: its own port, its own
//! SQLite file, its settings (latency, faults) set through its admin endpoint, and its ledger read
//! through its API. Exactly-once is counted here, in the provider's ledger, never in responses.
//! Its secret sits in a file beside its database (`token_file`, created by the provider; replicas
//! of the app get it with `--payments-token-file`); every request made here shows it, except
//! ACP delegate_payment's, which show the delegate-payment key (also in a file the provider
//! creates beside its database).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

use giftgenius_sandbox_pay::api::{
    CHARGES_PATH, Charge, ChargeList, ChargeRequest, ChargeStatus, IDEMPOTENCY_KEY_HEADER, LISTENING_LINE,
    REFUNDS_PATH, Refund, RefundList, SETTINGS_PATH, Settings, SettingsUpdate,
};
use giftgenius_sandbox_pay::delegate::{API_VERSION_HEADER, DELEGATE_PAYMENT_PATH, SUPPORTED_VERSIONS};
use giftgenius_sandbox_pay::token::{AdminToken, DelegateKey};

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
    /// Its delegate-payment key, read from the file the provider writes beside its database
    /// (its default `--delegate-payment-key-file`).
    pub delegate_key: DelegateKey,
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
        Self::spawn(db, flags, "warn", Stdio::null())
    }

    /// A fresh provider logging everything down to `level` into the file `log`.
    pub fn start_logging(level: &str, log: &Path) -> SandboxPay {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = std::fs::File::create(log).expect("a log file");
        let flags = ["--latency-ms", "0", "--faults", ""];
        let mut provider = Self::spawn(&dir.path().join("giftgenius-sandbox-pay.db"), &flags, level, file.into());
        provider._dir = Some(dir);
        provider
    }

    fn spawn(db: &Path, flags: &[&str], log_level: &str, stderr: Stdio) -> SandboxPay {
        let token_file = db.with_extension("token");
        let mut child = Command::new(env!("CARGO_BIN_EXE_giftgenius-sandbox-pay"))
            .args(["--port", "0", "--exit-with-stdin"])
            .arg("--db")
            .arg(db)
            .arg("--admin-token-file")
            .arg(&token_file)
            .args(flags)
            .env("GIFTGENIUS_SANDBOX_PAY_LOG", log_level)
            .env_remove("GIFTGENIUS_SANDBOX_PAY_DELEGATE_KEY_FILE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("the sandbox provider starts");
        let stdin = child.stdin.take().expect("stdin");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("its first line");
        let url = line.trim().strip_prefix(LISTENING_LINE).unwrap_or_else(|| panic!("not a listening line: {line:?}"));
        let token = AdminToken::read(&token_file).expect("the provider wrote its secret");
        let delegate_key =
            DelegateKey::read(&db.with_extension("delegate-key")).expect("the provider wrote its delegate-payment key");
        let http = reqwest::Client::builder().default_headers(token.authorization()).build().expect("a client");
        SandboxPay {
            url: url.to_string(),
            child,
            _stdin: stdin,
            db: db.to_path_buf(),
            token_file,
            token,
            delegate_key,
            http,
            _dir: None,
        }
    }

    /// `POST /agentic_commerce/delegate_payment` as an ACP platform sends it: the delegate key,
    /// `API-Version` 2026-04-17, `Idempotency-Key: key`, the JSON `body`.
    pub async fn delegate(&self, key: &str, body: &serde_json::Value) -> reqwest::Response {
        self.delegate_request()
            .header(IDEMPOTENCY_KEY_HEADER, key)
            .json(body)
            .send()
            .await
            .expect("the provider answers")
    }

    /// A delegate_payment request with the delegate key and `API-Version` only, for tests that
    /// leave out or change the rest.
    pub fn delegate_request(&self) -> reqwest::RequestBuilder {
        reqwest::Client::new()
            .post(format!("{}{DELEGATE_PAYMENT_PATH}", self.url))
            .header(reqwest::header::AUTHORIZATION, self.delegate_key.bearer())
            .header(API_VERSION_HEADER, SUPPORTED_VERSIONS[0])
    }

    /// The vault token id of a delegate_payment call that must succeed (201).
    pub async fn vault_token(&self, key: &str, body: &serde_json::Value) -> String {
        let response = self.delegate(key, body).await;
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        assert_eq!(status, 201, "delegate_payment refused: {text}");
        let created: giftgenius_sandbox_pay::delegate::DelegatePaymentResponse =
            serde_json::from_str(&text).expect("a DelegatePaymentResponse");
        created.id
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

    /// Holds every charge, refund and delegate_payment request from now on in `processing` (the longest latency
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

/// The session and merchant [`delegate_body`]'s allowance is for.
pub const TEST_SESSION: &str = "acs_test_session";
pub const TEST_MERCHANT: &str = "giftgenius_test";

/// A delegate_payment body for the test card `number` (as the schema's example, CVC `7319`),
/// allowing one charge of up to 5000 usd for [`TEST_SESSION`] at [`TEST_MERCHANT`] within the
/// next 15 minutes.
pub fn delegate_body(number: &str) -> serde_json::Value {
    let expires = giftgenius_sandbox_pay::delegate::rfc3339::now_ms() + 15 * 60 * 1000;
    serde_json::json!({
        "payment_method": {
            "type": "card",
            "card_number_type": "fpan",
            "virtual": false,
            "number": number,
            "exp_month": "11",
            "exp_year": "2099",
            "name": "Jane Doe",
            "cvc": "7319",
            "checks_performed": ["avs", "cvv"],
            "display_card_funding_type": "credit",
            "display_brand": "visa",
            "display_last4": &number[number.len() - 4..],
            "metadata": {"card_origin": "manual_entry"}
        },
        "allowance": {
            "reason": "one_time",
            "max_amount": 5000,
            "currency": "usd",
            "checkout_session_id": TEST_SESSION,
            "merchant_id": TEST_MERCHANT,
            "expires_at": giftgenius_sandbox_pay::delegate::rfc3339::format_ms(expires)
        },
        "billing_address": {
            "name": "Jane Doe",
            "line_one": "185 Berry Street",
            "city": "San Francisco",
            "state": "CA",
            "country": "US",
            "postal_code": "94107"
        },
        "risk_signals": [{"type": "card_testing", "score": 5, "action": "authorized"}],
        "metadata": {"source": "agent_checkout"}
    })
}
