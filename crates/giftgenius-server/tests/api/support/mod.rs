//! What the tests share, in one place; the test modules import it from here.
//!
//! - `app`: the app in-process for one test, MCP clients for it, its database behind its back.
//! - `calls`: tool calls through the MCP client and what their results carry.
//! - `purchase`: drafts and confirmation tokens, commit arguments, charges and orders counted,
//!   and the replay scenario both stores run.
//! - `process`: the real server binary as a child process.
//! - `provider`: the SANDBOX payment provider as a child process: settings, ledger, raw requests,
//!   ACP delegate_payment calls and test-card bodies for them.
//! - `localstripe`: the Stripe emulator as a child process, and what it holds.
//! - `stripe_transcript`: a recording proxy in front of localstripe, for the Stripe flows'
//!   transcripts (issue 26).
//! - `ports`: a port nobody listens on.
//! - `prometheus`: a real Prometheus scraping a test server, and its query API.
//! - `upstream`: local upstream catalogs that answer well, badly, slowly or never.
//! - `leaks`: the one leak checker for every text a client reads.
//! - `receiver`: a webhook receiver for order events that checks signatures as a platform does.
//! - `raw_http`: JSON-RPC over plain HTTP, for requests the MCP client would never send.
//! - `otlp`: an OTLP/HTTP trace receiver that decodes what it gets.
//! - `transcript`: real requests written down with their answers, secrets redacted (the proof of
//!   issue 25).
//! - `oidc`: a real authorization server (oidc-provider), signing in as a host does, forged tokens.

mod app;
mod calls;
mod feed_receiver;
mod leaks;
mod localstripe;
pub mod oidc;
mod otlp;
mod ports;
mod process;
mod prometheus;
mod provider;
mod purchase;
mod raw_http;
mod receiver;
mod stripe_transcript;
mod transcript;
mod upstream;

pub use app::{TestApp, connect, execute_sql, spawn_app, spawn_app_on, spawn_app_with, token_secret_file, widget_path};
pub use calls::{call, call_as, call_in_locale, meta_of, request, text_of, varied_suggestion};
pub use feed_receiver::{FeedReceiver, receivers_file};
pub use leaks::{assert_no_leak, find_leak, hostname, leak_in};
pub use localstripe::{LocalStripe, STRIPE_PUBLISHABLE_KEY, STRIPE_TEST_KEY};
pub use otlp::{Exported, OtlpReceiver};
pub use ports::unused_port;
pub use process::{
    ServerProcess, reconcile_command, server_command, spawn_server_binary, start_server_binary, start_server_binary_env,
};
pub use prometheus::{Prometheus, Target};
pub use provider::{SandboxPay, TEST_MERCHANT, TEST_SESSION, delegate_body};
pub use purchase::{
    TOKEN, charges, commit_args, commit_then_replay_charges_once, orders, prepare, prepare_as, prepare_in_session,
    recipient, successes_or_in_progress, with_recipient,
};
pub use raw_http::{INIT, RawSession, post};
pub use receiver::{Receiver, Reply, Seen};
pub use transcript::{Exchange, Transcript};
pub use upstream::{Upstream, hanging_catalog, unreachable_catalog};
