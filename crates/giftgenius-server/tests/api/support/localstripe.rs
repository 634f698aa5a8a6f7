//! localstripe (a third-party Stripe emulator, PyPI) as a child process on a free port, for the
//! Stripe provider's tests: installed, pinned, by `cargo xtask setup` (and `cargo xtask test`)
//! into `<tools>/localstripe-<version>/` from `tools/localstripe/requirements.txt`, the one
//! place its version is written. What localstripe holds is read through its own API.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::ports::unused_port;
use super::stripe_transcript::{Recorder, transcript_dir};

/// The secret key the app and the tests show localstripe (it takes any `sk_…`).
pub const STRIPE_TEST_KEY: &str = "sk_test_giftgenius_localstripe";
/// The publishable key the card page gives localstripe's Stripe.js (it takes any `pk_…`).
pub const STRIPE_PUBLISHABLE_KEY: &str = "pk_test_giftgenius_localstripe";

const REQUIREMENTS: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tools/localstripe/requirements.txt"));

/// Where `cargo xtask setup` installs localstripe.
fn executable() -> PathBuf {
    let version = REQUIREMENTS
        .lines()
        .find_map(|l| l.trim().strip_prefix("localstripe=="))
        .expect("tools/localstripe/requirements.txt pins localstripe==VERSION");
    let tools =
        std::env::var_os("GIFTGENIUS_TOOLS").filter(|d| !d.is_empty()).map(PathBuf::from).unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME or GIFTGENIUS_TOOLS")).join(".cache/giftgenius/tools")
        });
    tools.join(format!("localstripe-{version}/bin/localstripe"))
}

/// A running localstripe, killed on drop.
pub struct LocalStripe {
    child: Child,
    pub url: String,
    http: reqwest::Client,
    /// The secret key file the app reads (`--stripe-secret-key-file`).
    key_file: tempfile::NamedTempFile,
    /// The recording proxy our server talks to instead, when transcripts are asked for.
    recorder: Option<Recorder>,
}

impl Drop for LocalStripe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl LocalStripe {
    /// Starts localstripe with an empty store and waits until it answers.
    pub async fn start() -> Self {
        let bin = executable();
        assert!(
            bin.is_file(),
            "localstripe is not installed at {}: run `cargo xtask setup` (it installs the pinned version from PyPI)",
            bin.display()
        );
        let port = unused_port();
        #[allow(clippy::zombie_processes)] // killed and waited for in Drop
        let child = Command::new(&bin)
            .args(["--port", &port.to_string(), "--from-scratch"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}; run `cargo xtask setup`", bin.display()));
        let key_file = tempfile::NamedTempFile::new().expect("temp file");
        std::fs::write(key_file.path(), format!("{STRIPE_TEST_KEY}\n")).expect("write the key");
        let url = format!("http://127.0.0.1:{port}");
        let recorder = transcript_dir().map(|dir| Recorder::start(&url, dir));
        let stripe = Self { child, url, http: reqwest::Client::new(), key_file, recorder };
        // Up to 30 s: a Python process starting beside a full test run on two cores once took
        // longer than 10 s (CI's 2026-12-07 run); a localstripe that never answers still fails.
        for _ in 0..600 {
            let probe = stripe.http.get(format!("{}/v1/customers", stripe.url)).bearer_auth(STRIPE_TEST_KEY);
            if probe.send().await.is_ok_and(|r| r.status().is_success()) {
                return stripe;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("localstripe on {} did not answer", stripe.url);
    }

    pub fn key_file(&self) -> &str {
        self.key_file.path().to_str().expect("a UTF-8 temp path")
    }

    /// The `--stripe-api-base` our server is given: localstripe, or the recording proxy in
    /// front of it when transcripts are asked for (the test's own requests go to [`Self::url`]).
    pub fn api_base(&self) -> String {
        self.recorder.as_ref().map_or(&self.url, |r| &r.url).clone()
    }

    /// Marks a step of the flow in its transcript (nothing without one).
    pub fn step(&self, text: &str) {
        if let Some(recorder) = &self.recorder {
            recorder.step(text);
        }
    }

    /// Writes the flow's transcript, `<name>.md`, when transcripts are asked for.
    pub async fn write_transcript(&self, name: &str, title: &str, intro: &str) {
        if let Some(recorder) = &self.recorder {
            recorder.write(name, title, intro).await;
        }
    }

    /// localstripe's stand-in for Stripe.js.
    pub fn js_url(&self) -> String {
        format!("{}/js.stripe.com/v3/", self.url)
    }

    /// The server flags that make it charge this localstripe (and its card page load
    /// localstripe's Stripe.js).
    pub fn app_flags(&self) -> Vec<String> {
        let (js, api) = (self.js_url(), self.api_base());
        [
            "--payments",
            "stripe",
            "--stripe-api-base",
            &api,
            "--stripe-secret-key-file",
            self.key_file(),
            "--stripe-publishable-key",
            STRIPE_PUBLISHABLE_KEY,
            "--stripe-js-url",
            &js,
        ]
        .map(str::to_string)
        .to_vec()
    }

    /// `GET path?query`, answered 200 with JSON.
    pub async fn get(&self, path: &str, query: &[(&str, &str)]) -> Value {
        let response = self
            .http
            .get(format!("{}{path}", self.url))
            .query(query)
            .bearer_auth(STRIPE_TEST_KEY)
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success(), "GET {path}: {}", response.status());
        response.json().await.unwrap()
    }

    /// `POST path` with a form, answered 200 with JSON.
    pub async fn post(&self, path: &str, form: &[(&str, &str)]) -> Value {
        let response =
            self.http.post(format!("{}{path}", self.url)).form(form).bearer_auth(STRIPE_TEST_KEY).send().await.unwrap();
        assert!(response.status().is_success(), "POST {path}: {}", response.status());
        response.json().await.unwrap()
    }

    /// Saves test card `number` for `customer` (a PaymentMethod attached through the API, as
    /// the hosted page's SetupIntent would leave it); returns its id.
    pub async fn save_card(&self, customer: &str, number: &str) -> String {
        let card = self
            .post(
                "/v1/payment_methods",
                &[
                    ("type", "card"),
                    ("card[number]", number),
                    ("card[exp_month]", "12"),
                    ("card[exp_year]", "2034"),
                    ("card[cvc]", "123"),
                ],
            )
            .await;
        let id = card["id"].as_str().expect("a PaymentMethod id").to_string();
        self.post(&format!("/v1/payment_methods/{id}/attach"), &[("customer", customer)]).await;
        id
    }

    /// The HTTP status localstripe answers `GET path` with (a deleted object: 404).
    pub async fn status_of(&self, path: &str) -> u16 {
        let response = self.http.get(format!("{}{path}", self.url)).bearer_auth(STRIPE_TEST_KEY).send().await.unwrap();
        response.status().as_u16()
    }

    /// Completes PaymentIntent `id`'s 3-D Secure as localstripe's Stripe.js stand-in does for
    /// `confirmCardPayment` (`POST /v1/payment_intents/{id}/_authenticate` with the client
    /// secret): the person confirmed with their bank.
    pub async fn authenticate(&self, id: &str, client_secret: &str) -> Value {
        self.post(
            &format!("/v1/payment_intents/{id}/_authenticate"),
            &[("client_secret", client_secret), ("success", "true")],
        )
        .await
    }

    /// Every PaymentIntent localstripe holds.
    pub async fn payment_intents(&self) -> Vec<Value> {
        self.list("/v1/payment_intents", &[]).await
    }

    /// Every refund of `payment_intent`.
    pub async fn refunds_of(&self, payment_intent: &str) -> Vec<Value> {
        self.list("/v1/refunds", &[("payment_intent", payment_intent)]).await
    }

    async fn list(&self, path: &str, query: &[(&str, &str)]) -> Vec<Value> {
        let page = self.get(path, &[query, &[("limit", "100")]].concat()).await;
        assert_eq!(page["has_more"], false, "more than one page of {path}");
        page["data"].as_array().cloned().unwrap_or_default()
    }
}
