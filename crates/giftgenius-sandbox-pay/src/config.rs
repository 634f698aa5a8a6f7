//! The provider's flags, each with an environment variable of its own (`GIFTGENIUS_SANDBOX_PAY_*`,
//! so the app's `GIFTGENIUS_*` settings never leak into it).

use clap::{Parser, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

/// GiftGenius SANDBOX payment provider: a Stripe-shaped charges API that takes no real money.
#[derive(Debug, Clone, Parser)]
#[command(name = "giftgenius-sandbox-pay", version, about)]
pub struct Config {
    /// Address to listen on. Keep it on loopback: the admin endpoint has no authentication.
    #[arg(long, env = "GIFTGENIUS_SANDBOX_PAY_HOST", default_value = "127.0.0.1")]
    pub host: String,
    /// Port to listen on (0 picks a free one; the first stdout line names the URL).
    #[arg(long, env = "GIFTGENIUS_SANDBOX_PAY_PORT", default_value_t = 8100)]
    pub port: u16,
    /// The provider's own SQLite file (created on first run). Several processes may share it.
    #[arg(long, env = "GIFTGENIUS_SANDBOX_PAY_DB", default_value = "giftgenius-sandbox-pay.db")]
    pub db: String,
    /// Sets the latency of every charge request at startup (stored: shared with every process
    /// on this database). Without it the stored value stays.
    #[arg(long, env = "GIFTGENIUS_SANDBOX_PAY_LATENCY_MS")]
    pub latency_ms: Option<u64>,
    /// Sets the injected faults at startup, e.g. "5xx*2,timeout*1" or "decline" (stored, like
    /// the latency). Without it the stored plan stays.
    #[arg(long, env = "GIFTGENIUS_SANDBOX_PAY_FAULTS")]
    pub faults: Option<String>,
    /// Exit when stdin closes: the process that started us holds the other end, so we never
    /// outlive it, however it ends (the app starts its own sandbox this way).
    #[arg(long, hide = true)]
    pub exit_with_stdin: bool,
    /// Log format on stderr; filter with GIFTGENIUS_SANDBOX_PAY_LOG (else GIFTGENIUS_LOG).
    #[arg(long, env = "GIFTGENIUS_SANDBOX_PAY_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}
