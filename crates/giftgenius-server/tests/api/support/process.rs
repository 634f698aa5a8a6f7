//! The real `giftgenius-server` binary as a child process: for crashes (a failpoint aborts it)
//! and for what only the process shows (its stderr logs).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::app::widget_path;
use super::ports::unused_port;

/// The real server binary, started on a free port; killed and reaped on drop.
pub struct ServerProcess {
    child: Child,
    pub url: String,
}

impl ServerProcess {
    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.url)
    }

    /// Waits for the process to exit (after a failpoint aborted it).
    pub fn wait(&mut self) -> std::process::ExitStatus {
        self.child.wait().expect("wait for the server process")
    }

    /// Sends it SIGTERM, as an orchestrator stopping it does.
    pub fn terminate(&self) {
        self.signal("-TERM");
    }

    /// Ctrl-C, as a person at the terminal would.
    pub fn interrupt(&self) {
        self.signal("-INT");
    }

    fn signal(&self, which: &str) {
        let status = Command::new("kill").args([which, &self.child.id().to_string()]).status().expect("kill runs");
        assert!(status.success(), "kill {which} failed");
    }

    /// Its exit status once it has exited, without waiting.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().expect("try_wait")
    }

    /// `host:port` it listens on.
    pub fn address(&self) -> &str {
        self.url.trim_start_matches("http://")
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `giftgenius-server` on a free port with `db`, the built widget and `flags`, logging
/// at `log_level` to `stderr`, and waits until it answers /healthz.
pub async fn start_server_binary(db: &Path, flags: &[&str], log_level: &str, stderr: Stdio) -> ServerProcess {
    start_server_binary_env(db, flags, &[], log_level, stderr).await
}

/// Like [`start_server_binary`], with `envs` set in its environment.
pub async fn start_server_binary_env(
    db: &Path,
    flags: &[&str],
    envs: &[(&str, &str)],
    log_level: &str,
    stderr: Stdio,
) -> ServerProcess {
    let server = spawn_server_binary_env(db, flags, envs, log_level, stderr);
    let url = server.url.clone();
    for _ in 0..200 {
        if reqwest::get(format!("{url}/healthz")).await.is_ok_and(|r| r.status().is_success()) {
            return server;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("server on {url} did not become healthy");
}

/// Like [`start_server_binary`], without waiting for it to answer: for a process whose
/// background work may abort it (a failpoint) before it ever serves a request.
pub fn spawn_server_binary(db: &Path, flags: &[&str], log_level: &str, stderr: Stdio) -> ServerProcess {
    spawn_server_binary_env(db, flags, &[], log_level, stderr)
}

/// Like [`spawn_server_binary`], with `envs` set in its environment.
pub fn spawn_server_binary_env(
    db: &Path,
    flags: &[&str],
    envs: &[(&str, &str)],
    log_level: &str,
    stderr: Stdio,
) -> ServerProcess {
    let port = unused_port();
    #[allow(clippy::zombie_processes)] // killed and waited for in Drop
    let child = Command::new(env!("CARGO_BIN_EXE_giftgenius-server"))
        .args(["--port", &port.to_string(), "--db", &db.to_string_lossy()])
        .arg("--widget-html")
        .arg(widget_path())
        .args(flags)
        .env("GIFTGENIUS_LOG", log_level)
        .envs(envs.iter().copied())
        .env_remove("RUST_BACKTRACE")
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("server binary starts");
    ServerProcess { child, url: format!("http://127.0.0.1:{port}") }
}

/// `giftgenius-server ARGS` run to its end, logging warnings only: whether it exited 0, what it
/// printed on stdout as JSON (`null` if not JSON), and its stderr.
pub fn server_command<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> (bool, serde_json::Value, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_giftgenius-server"))
        .args(args)
        .env("GIFTGENIUS_LOG", "warn")
        .output()
        .expect("the command runs");
    let stdout = serde_json::from_slice(&output.stdout).unwrap_or(serde_json::Value::Null);
    (output.status.success(), stdout, String::from_utf8_lossy(&output.stderr).into_owned())
}

/// One pass of `giftgenius-server reconcile --reconcile-after-secs 0` on `db` with `flags` (the
/// payment provider's); the JSON report it prints.
pub fn reconcile_command<S: AsRef<std::ffi::OsStr>>(db: &Path, flags: &[S]) -> serde_json::Value {
    let output = Command::new(env!("CARGO_BIN_EXE_giftgenius-server"))
        .arg("reconcile")
        .args(flags)
        .args(["--reconcile-after-secs", "0"])
        .arg("--db")
        .arg(db)
        .env("GIFTGENIUS_LOG", "warn")
        .output()
        .expect("the command runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("a JSON report")
}
