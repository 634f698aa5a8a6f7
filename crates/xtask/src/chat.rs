//! `cargo xtask chat [-- CHAT ARGS…]`: the terminal MCP host with a real model
//! (`crates/giftgenius-chat`). Its arguments pass through untouched. Without `--mcp` (or
//! `GIFTGENIUS_CHAT_MCP`) it talks to the local GiftGenius at `http://127.0.0.1:8000/mcp`, and if
//! nothing answers there it starts one the way `serve` does (the widget if changed, the release
//! server with its SANDBOX provider), logging to `target/chat/server.log`, and stops it when the
//! chat ends.
//!
//! [`Panel`] is the same binary for `cargo xtask preview`'s chat panel: `giftgenius-chat --listen
//! 127.0.0.1:PORT` on a free loopback port, which the server relays `/preview/chat/*` to. Provider,
//! model and base URL come from the usual `GIFTGENIUS_CHAT_*` variables and the key from
//! `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`, inherited by that process only.

use crate::bins::{self, Bins};
use crate::server::{self, user_value};
use crate::{cmd, widget};
use anyhow::{Context, Result, bail};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where `serve` listens by default, and the chat's default MCP endpoint.
const LOCAL_ADDR: &str = "127.0.0.1:8000";

pub fn run(root: &Path, chat_args: &[String]) -> Result<()> {
    // The release set, as `serve` builds it: after `serve` nothing is compiled again.
    let bins = bins::build(root, bins::Profile::Release)?;
    let _server = match user_value(chat_args, "--mcp", "GIFTGENIUS_CHAT_MCP") {
        Some(url) => {
            eprintln!("xtask: chat: using the MCP server you chose ({url})");
            None
        }
        None if healthy(LOCAL_ADDR) => {
            eprintln!("xtask: chat: GiftGenius already answers at http://{LOCAL_ADDR}");
            None
        }
        None => Some(LocalServer::start(root, &bins)?),
    };
    let mut chat = Command::new(bins.path(bins::CHAT));
    chat.current_dir(root).args(chat_args);
    cmd::run_interactive(&mut chat)
}

/// `GET /healthz` answers 200 at `addr`.
fn healthy(addr: &str) -> bool {
    let Ok(addr) = addr.parse::<SocketAddr>() else { return false };
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(300)) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").is_err() {
        return false;
    }
    let mut head = [0u8; 16];
    let n = stream.read(&mut head).unwrap_or(0);
    head[..n].starts_with(b"HTTP/1.1 200")
}

/// The local GiftGenius started for the chat; killed on drop.
struct LocalServer {
    child: Child,
}

impl LocalServer {
    fn start(root: &Path, bins: &Bins) -> Result<Self> {
        eprintln!("xtask: chat: nothing answers at http://{LOCAL_ADDR}; starting GiftGenius as `serve` does");
        let bin = bins.path(bins::SERVER);
        let mut server = Command::new(&bin);
        server.current_dir(root);
        if user_value(&[], "--widget-html", server::WIDGET_HTML_ENV).is_none() {
            server.env(server::WIDGET_HTML_ENV, widget::build_if_changed(root)?);
        }
        let log = root.join("target/chat/server.log");
        std::fs::create_dir_all(log.parent().expect("has a parent")).context("creating target/chat")?;
        let stderr = std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
        let child = server
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .with_context(|| format!("could not start {}", bin.display()))?;
        let mut local = LocalServer { child };
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(60) {
            if healthy(LOCAL_ADDR) {
                eprintln!("xtask: chat: GiftGenius is up (its log: {})", log.display());
                return Ok(local);
            }
            if let Ok(Some(status)) = local.child.try_wait() {
                bail!(
                    "the server exited ({status}); its log {}:\n{}",
                    log.display(),
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        bail!("the server did not answer /healthz within 60 s; its log: {}", log.display())
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The chat process behind the preview's chat panel; killed on drop.
pub struct Panel {
    child: Child,
    /// `http://127.0.0.1:PORT`, for the server's `--preview-chat-url`.
    pub url: String,
    pub log: std::path::PathBuf,
}

impl Panel {
    /// Starts the built `giftgenius-chat` with `--listen` on a free loopback port, talking to
    /// `mcp_url` (it connects once the server answers).
    pub fn start(root: &Path, bins: &Bins, mcp_url: &str) -> Result<Panel> {
        let bin = bins.path(bins::CHAT);
        // A free port now; the chat binds it a moment later (nothing else here races for it).
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .context("finding a free port for the chat process")?
            .port();
        let log = root.join("target/preview/chat.log");
        std::fs::create_dir_all(log.parent().expect("has a parent")).context("creating target/preview")?;
        let stderr = std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
        let child = Command::new(&bin)
            .args(["--listen", &format!("127.0.0.1:{port}"), "--mcp", mcp_url])
            .current_dir(root)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .with_context(|| format!("could not start {}", bin.display()))?;
        Ok(Panel { child, url: format!("http://127.0.0.1:{port}"), log })
    }
}

impl Drop for Panel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
