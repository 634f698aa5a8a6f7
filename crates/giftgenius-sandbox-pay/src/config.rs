//! The provider's flags, each with an environment variable of its own (`GIFTGENIUS_SANDBOX_PAY_*`,
//! so the app's `GIFTGENIUS_*` settings never leak into it).

use std::path::{Path, PathBuf};

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
    /// Address to listen on. Keep it on loopback: requests are answered only when addressed to a
    /// loopback name (Host `localhost`, `127.0.0.1`, `[::1]`).
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
    /// The file holding the secret every request but `GET /healthz` must carry as
    /// `Authorization: Bearer SECRET` (its first line, at least 32 characters). Created with a
    /// fresh secret, readable by its owner only, when it does not exist; give the app the same
    /// file (`--payments-token-file`). Default: beside --db, named after it (`pay.db` →
    /// `pay.token`).
    #[arg(long, env = "GIFTGENIUS_SANDBOX_PAY_ADMIN_TOKEN_FILE")]
    pub admin_token_file: Option<PathBuf>,
    /// Take the secret from the first line of stdin instead of a file (how the app hands one to
    /// the provider it starts: never on the command line, which every user can read in `ps`).
    #[arg(long, hide = true)]
    pub admin_token_stdin: bool,
    /// The file holding the key an ACP agent platform shows on `POST
    /// /agentic_commerce/delegate_payment` (and on no other path; the admin secret is not
    /// taken there). Created like the secret file when missing. Default: beside --db, named
    /// after it (`pay.db` → `pay.delegate-key`).
    #[arg(long, env = "GIFTGENIUS_SANDBOX_PAY_DELEGATE_KEY_FILE")]
    pub delegate_payment_key_file: Option<PathBuf>,
    /// Take the delegate-payment key from the next line of stdin (the second, after the admin
    /// secret of --admin-token-stdin): how the app hands one to the provider it starts.
    #[arg(long, hide = true)]
    pub delegate_payment_key_stdin: bool,
    /// Log format on stderr; filter with GIFTGENIUS_SANDBOX_PAY_LOG (else GIFTGENIUS_LOG).
    #[arg(long, env = "GIFTGENIUS_SANDBOX_PAY_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Export traces over OTLP/HTTP (protobuf) to this collector (`/v1/traces` is added to a URL
    /// without a path); each request continues the trace of its `traceparent` header.
    #[arg(long, env = "GIFTGENIUS_SANDBOX_PAY_OTLP_ENDPOINT")]
    pub otlp_endpoint: Option<String>,
}

impl Config {
    /// `--admin-token-file`, or its default beside the database.
    pub fn admin_token_path(&self) -> PathBuf {
        self.admin_token_file.clone().unwrap_or_else(|| Path::new(&self.db).with_extension("token"))
    }

    /// `--delegate-payment-key-file`, or its default beside the database.
    pub fn delegate_key_path(&self) -> PathBuf {
        self.delegate_payment_key_file.clone().unwrap_or_else(|| Path::new(&self.db).with_extension("delegate-key"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_sits_beside_the_database_unless_a_file_is_named() {
        let config = Config::parse_from(["giftgenius-sandbox-pay", "--db", "/tmp/x/pay.db"]);
        assert_eq!(config.admin_token_path(), PathBuf::from("/tmp/x/pay.token"));
        assert_eq!(config.delegate_key_path(), PathBuf::from("/tmp/x/pay.delegate-key"));
        let config = Config::parse_from(["giftgenius-sandbox-pay", "--admin-token-file", "/run/s"]);
        assert_eq!(config.admin_token_path(), PathBuf::from("/run/s"));
        let config = Config::parse_from(["giftgenius-sandbox-pay", "--delegate-payment-key-file", "/run/d"]);
        assert_eq!(config.delegate_key_path(), PathBuf::from("/run/d"));
    }
}
