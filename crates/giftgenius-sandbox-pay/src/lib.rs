//! The GiftGenius SANDBOX payment provider: a process of its own, with its own port and its own
//! SQLite file, that behaves like a real provider and takes no real money.
//!
//! - `api`: the HTTP API as types (Stripe-shaped), with `token` and the delegate endpoint's
//!   constants from `giftgenius-pay-api`, the wire contract the app's client uses too.
//! - `routes`: the handlers; `ledger`: its database (charges per idempotency key, settings),
//!   whose charge writes are committed in groups by `ledger::group`, and the vault of tokens;
//!   `faults`: injected failures; `config`: its flags.
//! - `guard`: what every request must show (a loopback `Host`, no `Origin`, the secret of
//!   `token`, JSON bodies): a web page the developer visits cannot use the provider.
//! - `delegate`: ACP delegated payment (`POST /agentic_commerce/delegate_payment`), which turns
//!   a test card into a vault token with an allowance; `vault`: those tokens, checked and used
//!   by a charge that names one.
//!
//! What makes it a provider and not a mock: it honours its own idempotency key (the same key and
//! body get the same answer, replayed; another body gets a 400), records declines and replays
//! them for the key, answers "what happened to the charge under key K" at any time, takes time,
//! and fails on demand (503 before charging; a timeout after charging; a decline), with the
//! settings in its database so every process serving it, and every app replica asking it, sees
//! the same ones.

mod answer;
pub use giftgenius_pay_api::api;
pub mod card;
pub mod config;
pub mod delegate;
pub mod faults;
pub mod guard;
pub mod ledger;
mod routes;
pub use giftgenius_pay_api::token;
pub mod traces;
/// The vault of delegated-payment tokens, kept by the ledger (its charges use them).
pub use ledger::vault;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines, Stdin};
use tokio_util::sync::CancellationToken;

pub use config::Config;

use crate::api::SettingsUpdate;
use crate::faults::FaultPlan;
use crate::guard::Keys;
use crate::ledger::Ledger;
use crate::token::{AdminToken, DelegateKey, Secret, SecretKind};

/// How long in-flight requests get to finish after a shutdown signal (a `timeout` fault's
/// withheld answer would otherwise hold the process for minutes).
const DRAIN: Duration = Duration::from_secs(2);

/// Runs the provider until Ctrl-C, SIGTERM or (with `--exit-with-stdin`) the end of stdin.
/// Prints [`api::LISTENING_LINE`] and the base URL on stdout once it listens.
pub async fn run(config: Config) -> anyhow::Result<()> {
    let mut stdin = BufReader::new(tokio::io::stdin()).lines();
    // In this order: the admin secret is the first line of stdin, the delegate key the next.
    let (token, token_file): (AdminToken, _) = secret(
        &mut stdin,
        config.admin_token_stdin.then_some("--admin-token-stdin"),
        &config.admin_token_path(),
        "--admin-token-file: the provider's secret (every request but /healthz and delegate_payment shows it)",
    )
    .await?;
    let (delegate, delegate_file): (DelegateKey, _) = secret(
        &mut stdin,
        config.delegate_payment_key_stdin.then_some("--delegate-payment-key-stdin"),
        &config.delegate_key_path(),
        "--delegate-payment-key-file: the key ACP delegate_payment requests show",
    )
    .await?;
    if delegate.expose() == token.expose() {
        anyhow::bail!("the delegate-payment key must differ from the admin secret: each opens its own paths only");
    }
    let plan = config.faults.as_deref().map(FaultPlan::parse).transpose().map_err(anyhow::Error::msg)?;
    let ledger =
        Ledger::open(&config.db).await.with_context(|| format!("cannot open the sandbox ledger {}", config.db))?;
    if config.latency_ms.is_some() || plan.is_some() {
        let update = SettingsUpdate { latency_ms: config.latency_ms, faults: config.faults.clone() };
        ledger.update_settings(&update, plan.as_ref()).await.context("cannot store the settings")?;
    }
    let listener = tokio::net::TcpListener::bind((config.host.as_str(), config.port))
        .await
        .with_context(|| format!("cannot listen on {}:{}", config.host, config.port))?;
    let addr = listener.local_addr()?;
    let url = format!("http://{addr}");
    let settings = ledger.settings().await?;
    tracing::warn!(
        url,
        db = config.db,
        secret_file = token_file.as_ref().map_or_else(|| "(given on stdin)".to_string(), |f| f.display().to_string()),
        delegate_key_file =
            delegate_file.as_ref().map_or_else(|| "(given on stdin)".to_string(), |f| f.display().to_string()),
        latency_ms = settings.latency_ms,
        faults = settings.faults,
        charges = ledger.count().await?,
        "SANDBOX payment provider: no real money moves here"
    );
    let mut stdout = tokio::io::stdout();
    stdout.write_all(format!("{}{url}\n", api::LISTENING_LINE).as_bytes()).await?;
    stdout.flush().await?;

    let stop = CancellationToken::new();
    tokio::spawn({
        let stop = stop.clone();
        let exit_with_stdin = config.exit_with_stdin;
        async move {
            tokio::select! {
                _ = shutdown_signal() => {}
                _ = stdin_closed(stdin), if exit_with_stdin => tracing::info!("stdin closed: the process that started us is gone"),
            }
            stop.cancel();
        }
    });
    // Every request carries its peer: the guard answers loopback peers only.
    let service = routes::router(ledger, Keys { admin: token, delegate })
        .into_make_service_with_connect_info::<std::net::SocketAddr>();
    let serve = axum::serve(listener, service).with_graceful_shutdown({
        let stop = stop.clone();
        async move { stop.cancelled().await }
    });
    tokio::select! {
        served = serve => served.context("server error"),
        _ = async { stop.cancelled().await; tokio::time::sleep(DRAIN).await } => Ok(()),
    }
}

/// A secret from the next line of stdin (when `stdin_flag` names the flag that asked for it),
/// else from the file at `path`, created with a fresh secret when missing. Returns the file it
/// came from, if any.
async fn secret<K: SecretKind>(
    stdin: &mut Lines<BufReader<Stdin>>,
    stdin_flag: Option<&str>,
    path: &Path,
    what: &'static str,
) -> anyhow::Result<(Secret<K>, Option<PathBuf>)> {
    if let Some(flag) = stdin_flag {
        let line = stdin.next_line().await.with_context(|| format!("{flag}: cannot read stdin"))?.unwrap_or_default();
        return Ok((Secret::parse(&line).map_err(|why| anyhow::anyhow!("{flag}: {why}"))?, None));
    }
    let (secret, created) = Secret::read_or_create(path).context(what)?;
    if created {
        tracing::warn!(file = %path.display(), kind = K::NAME, "wrote a new secret for this provider's clients");
    }
    Ok((secret, Some(path.to_path_buf())))
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = terminate => {} }
}

/// Resolves when stdin reaches its end (or fails).
async fn stdin_closed(mut lines: Lines<BufReader<Stdin>>) {
    while let Ok(Some(_)) = lines.next_line().await {}
}

/// Logs on stderr (text or JSON), filtered by GIFTGENIUS_SANDBOX_PAY_LOG, else GIFTGENIUS_LOG;
/// and traces to `otlp_endpoint` when one is given (`traces.rs`).
pub fn init_logs(format: config::LogFormat, otlp_endpoint: Option<&str>) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::{EnvFilter, Layer, fmt};
    let filter = EnvFilter::try_from_env("GIFTGENIUS_SANDBOX_PAY_LOG")
        .or_else(|_| EnvFilter::try_from_env("GIFTGENIUS_LOG"))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    let lines = fmt::layer().with_writer(std::io::stderr).with_ansi(false);
    let lines = match format {
        config::LogFormat::Text => lines.boxed(),
        config::LogFormat::Json => lines.json().boxed(),
    };
    let traces = otlp_endpoint.and_then(traces::start).map(|t| tracing_opentelemetry::layer().with_tracer(t));
    let _ = tracing_subscriber::registry().with(filter).with(traces).with(lines).try_init();
}
