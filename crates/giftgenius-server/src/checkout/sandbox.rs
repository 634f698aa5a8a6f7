//! The SANDBOX payment provider the app starts for itself when no `--payments-url` is given, so
//! `cargo xtask serve` (or the binary alone) stays one command: `giftgenius-sandbox-pay`, found
//! next to our own executable, on a free loopback port, with its own SQLite file beside the
//! app's database (`giftgenius.db` → `giftgenius-sandbox-pay.db`). It is a child process that
//! holds the other end of our pipe on its stdin and exits when that closes, so it never outlives
//! us, even when we are killed with SIGKILL. Its log lines join ours on stderr, in our format.
//! Its secret (every request but `/healthz` and delegate_payment shows it) is generated here for
//! each start and written as the first line of that pipe, and its delegate-payment key (the one
//! ACP delegate_payment takes, docs/acp.md §8) as the second: never a command-line argument,
//! which `ps` shows to every user, and never a file left behind.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, bail};
use giftgenius_pay_api::api::LISTENING_LINE;
use giftgenius_pay_api::token::{AdminToken, DelegateKey};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};

use crate::config::LogFormat;

/// The provider's binary name (a second binary of this package).
pub const BINARY: &str = "giftgenius-sandbox-pay";

/// How long the provider may take to start listening.
const START_TIMEOUT: Duration = Duration::from_secs(15);

/// A running sandbox provider, stopped when dropped (or when this process ends).
#[derive(Debug)]
pub struct SandboxProcess {
    _child: Child,
    _stdin: ChildStdin,
    /// Its base URL (`http://127.0.0.1:PORT`).
    pub url: String,
    /// The secret it was given.
    pub token: AdminToken,
    /// The delegate-payment key it was given: what `POST /agentic_commerce/delegate_payment`
    /// takes (the app's preview relay tokenizes test cards with it).
    pub delegate_key: DelegateKey,
    pub db: PathBuf,
}

/// The provider's database for an app database: beside a SQLite file, named after it; in the
/// working directory for PostgreSQL.
pub fn db_beside(app_db: &str) -> PathBuf {
    if app_db.starts_with("postgres://") || app_db.starts_with("postgresql://") {
        return PathBuf::from(format!("{BINARY}.db"));
    }
    let path = Path::new(app_db);
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("giftgenius");
    path.with_file_name(format!("{stem}-sandbox-pay.db"))
}

/// `giftgenius-sandbox-pay` next to our executable (or one folder up, for tests and examples
/// that run from `target/<profile>/deps` or `…/examples`).
pub fn binary() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find our own executable")?;
    let dir = exe.parent().context("our executable has no folder")?;
    let candidates: Vec<PathBuf> = [Some(dir), dir.parent()]
        .into_iter()
        .flatten()
        .map(|d| d.join(BINARY).with_extension(std::env::consts::EXE_EXTENSION))
        .collect();
    candidates.iter().find(|p| p.is_file()).cloned().with_context(|| {
        format!(
            "the sandbox payment provider `{BINARY}` is not next to {} (build it with `cargo build -p giftgenius-server \
             --bins`), or give --payments-url",
            exe.display()
        )
    })
}

impl SandboxProcess {
    /// Starts the provider on `db` and waits until it listens. `latency_ms` / `faults`, when
    /// given, are stored as its settings.
    pub async fn start(
        db: &Path,
        latency_ms: Option<u64>,
        faults: Option<&str>,
        log_format: LogFormat,
    ) -> anyhow::Result<Self> {
        let bin = binary()?;
        let mut command = Command::new(&bin);
        command
            .args(["--host", "127.0.0.1", "--port", "0", "--exit-with-stdin", "--admin-token-stdin"])
            .arg("--delegate-payment-key-stdin")
            .arg("--db")
            .arg(db)
            .arg("--log-format")
            .arg(match log_format {
                LogFormat::Text => "text",
                LogFormat::Json => "json",
            });
        // The provider continues the traces our charges carry (`traceparent`), so it exports
        // where we do.
        if let Some(endpoint) = crate::traces::endpoint() {
            command.arg("--otlp-endpoint").arg(endpoint);
        }
        if let Some(ms) = latency_ms {
            command.arg("--latency-ms").arg(ms.to_string());
        }
        if let Some(faults) = faults {
            command.arg("--faults").arg(faults);
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot start {}", bin.display()))?;
        let mut stdin = child.stdin.take().context("the provider's stdin")?;
        let (token, delegate_key) = (AdminToken::generate(), DelegateKey::generate());
        stdin
            .write_all(format!("{}\n{}\n", token.expose(), delegate_key.expose()).as_bytes())
            .await
            .context("cannot hand the sandbox payment provider its secret")?;
        stdin.flush().await.context("cannot hand the sandbox payment provider its secret")?;
        let stdout = child.stdout.take().context("the provider's stdout")?;
        let first_line = async { BufReader::new(stdout).lines().next_line().await };
        let url = match tokio::time::timeout(START_TIMEOUT, first_line).await {
            Ok(Ok(Some(line))) => match line.strip_prefix(LISTENING_LINE) {
                Some(url) => url.trim().to_string(),
                None => bail!("the sandbox payment provider said {line:?} instead of its address"),
            },
            Ok(Ok(None)) | Ok(Err(_)) => {
                let status = child.wait().await.map(|s| s.to_string()).unwrap_or_default();
                bail!("the sandbox payment provider stopped before it listened ({status}); its log is above")
            }
            Err(_) => bail!("the sandbox payment provider did not listen within {START_TIMEOUT:?}"),
        };
        Ok(Self { _child: child, _stdin: stdin, url, token, delegate_key, db: db.to_path_buf() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sandbox_database_sits_beside_the_apps() {
        assert_eq!(db_beside("giftgenius.db"), PathBuf::from("giftgenius-sandbox-pay.db"));
        assert_eq!(db_beside("/var/lib/gg/shop.db"), PathBuf::from("/var/lib/gg/shop-sandbox-pay.db"));
        assert_eq!(db_beside("postgres://u@h/db"), PathBuf::from("giftgenius-sandbox-pay.db"));
    }
}
