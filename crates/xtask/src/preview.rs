//! `cargo xtask preview` (the local host emulator) and the browser tests (`browser-tests/`, run
//! by `cargo xtask test` after the cargo tests, or alone by `cargo xtask browser-test`).
//!
//! `preview --auth` also starts the local authorization server (`preview/oidc/server.mjs`,
//! oidc-provider; any username signs in) and runs the server in verified mode against it, so the
//! host page signs in with the authorization-code + PKCE flow a real host runs. Its signing keys
//! and the confirmation-token secret are made once under `target/preview/oidc/` and reused, so a
//! restarted preview keeps accepting the tokens and drafts of the last one.
//!
//! Without `--auth` it also starts the chat panel's process (`giftgenius-chat --listen`, see
//! `chat.rs`) and points the server's `--preview-chat-url` at it.
//!
//! Browser tests use Debian's Chromium (installed by `tools::ensure_chromium`) driven by the
//! exactly pinned playwright-core from `browser-tests/package-lock.json` (`npm ci`); no tool
//! ever downloads a browser.

use crate::bins::{self, target_dir};
use crate::server::{self, user_value};
use crate::{cmd, tools};
use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const TESTS_DIR: &str = "browser-tests";
/// Written into node_modules after a successful `npm ci`: the lockfile's hash it installed.
const NPM_STAMP: &str = "node_modules/.giftgenius-lock.sha256";

/// Whether `--host` listens on this machine only. `0.0.0.0` and `::` do not: they listen on
/// every interface.
fn is_loopback_host(host: &str) -> bool {
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The public client the preview host page signs in as (`preview --auth`).
pub const PREVIEW_CLIENT_ID: &str = "giftgenius-preview";

/// Builds the widget if it changed, then runs the server (debug build: results are checked
/// against their output schemas) with `--preview` and a preview catalog source, and prints the
/// page's URL. The user's server flags pass through as given (see `server.rs`). With `auth`, the
/// local authorization server runs beside it (see the module docs) until the preview ends.
pub fn run(root: &Path, server_args: &[String], auth: bool) -> Result<()> {
    let host = user_value(server_args, "--host", "GIFTGENIUS_HOST").unwrap_or_else(|| "127.0.0.1".into());
    let port = user_value(server_args, "--port", "GIFTGENIUS_PORT").unwrap_or_else(|| "8000".into());
    if port == "0" {
        bail!("preview: pass a fixed --port (the preview catalog source needs to know it)");
    }
    // `0.0.0.0` and `::` listen on every interface: not loopback (the server refuses local mode
    // and --preview there without more flags), though the page is still browsed at 127.0.0.1.
    let loopback = is_loopback_host(&host);
    let wildcard = ["0.0.0.0", "::"].contains(&host.as_str());
    // A boolean server flag, given after `--` or as its variable.
    let flag_set = |flag: &str, var: &str| {
        server_args.iter().any(|a| a == flag) || std::env::var(var).is_ok_and(|v| !v.is_empty() && v != "false")
    };
    let identified = auth
        || user_value(server_args, "--auth-issuer", "GIFTGENIUS_AUTH_ISSUER").is_some()
        || flag_set("--single-user", "GIFTGENIUS_SINGLE_USER");
    if !loopback && !identified {
        bail!(
            "preview: --host {host} is reachable from the network, and local mode would let anyone there act as any \
             local user: pass --auth (signed-in mode with the local authorization server), or --host 127.0.0.1"
        );
    }
    // The server refuses --preview on a non-loopback bind without --allow-remote-preview, and
    // even with it the /preview routes answer loopback peers only: say so before building.
    let remote_allowed = wildcard && flag_set("--allow-remote-preview", "GIFTGENIUS_ALLOW_REMOTE_PREVIEW");
    if !loopback && !remote_allowed {
        bail!(
            "preview: --host {host} is reachable from the network, but the /preview pages (the ledger, the fault \
             plan, the payment sheet) answer this machine only: use --host 127.0.0.1, or --host 0.0.0.0 with \
             `-- --allow-remote-preview` to also serve /mcp to the network while you browse the preview here"
        );
    }
    // Loopback or every interface (checked above): the page is browsed from this machine.
    let base = format!("http://127.0.0.1:{port}");
    let bins = bins::build(root, bins::Profile::Debug)?;
    let mut server = Command::new(bins.path(bins::SERVER));
    server.current_dir(root);
    server::provide_widget(root, server_args, &mut server)?;
    // `--preview` given again by the user is harmless: the flag wins over the variable.
    server.env("GIFTGENIUS_PREVIEW", "true");
    // Its own database, so preview charges and drafts never mix with `serve`'s.
    let db = root.join("target/preview/giftgenius-preview.db");
    std::fs::create_dir_all(db.parent().expect("has a parent")).context("creating target/preview")?;
    server::default_env(&mut server, server_args, "--db", "GIFTGENIUS_DB", &db);
    server::default_env(
        &mut server,
        server_args,
        "--catalog-url",
        "GIFTGENIUS_CATALOG_URLS",
        format!("{base}/preview/catalog"),
    );
    // Killed when this function returns (the Drop of `Oidc`); on Ctrl-C the terminal's SIGINT
    // reaches it directly (same process group), and server.mjs exits on it.
    let oidc = if auth {
        let mut redirect_uris = vec![
            format!("http://localhost:{port}/preview/callback"),
            format!("http://127.0.0.1:{port}/preview/callback"),
        ];
        if !loopback {
            redirect_uris.push(format!("{base}/preview/callback"));
        }
        let public_url =
            user_value(server_args, "--public-url", "GIFTGENIUS_PUBLIC_URL").unwrap_or_else(|| base.clone());
        let resource = format!("{}/mcp", public_url.trim_end_matches('/'));
        let oidc = Oidc::start(root, &redirect_uris, &resource)?;
        // Variables, not flags: a user's own --auth-issuer / --token-secret-file still wins.
        server::default_env(&mut server, server_args, "--auth-issuer", "GIFTGENIUS_AUTH_ISSUER", &oidc.issuer);
        server::default_env(
            &mut server,
            server_args,
            "--token-secret-file",
            "GIFTGENIUS_TOKEN_SECRET_FILE",
            &oidc.token_secret_file,
        );
        Some(oidc)
    } else {
        None
    };
    // The chat panel's process (see chat.rs), in local mode only: with --auth the page and the
    // chat would be two different accounts, and the chat's drafts not the page's to confirm.
    let chat = if auth {
        eprintln!("xtask: preview: the chat panel is off with --auth (it runs in local mode only)");
        None
    } else {
        let panel = crate::chat::Panel::start(root, &bins, &format!("{base}/mcp"))?;
        server::default_env(&mut server, server_args, "--preview-chat-url", "GIFTGENIUS_PREVIEW_CHAT_URL", &panel.url);
        Some(panel)
    };
    server.arg("--").args(server_args);
    eprintln!();
    // From localhost the MCP Apps view runs at sandbox.localhost: another origin, same site.
    let page = if loopback { format!("http://localhost:{port}/preview") } else { format!("{base}/preview") };
    eprintln!("xtask: preview: open {page}   (MCP endpoint: {base}/mcp)");
    if let Some(oidc) = &oidc {
        eprintln!(
            "xtask: preview: signed-in mode: authorization server {} (client {PREVIEW_CLIENT_ID}; any username \
             signs in; its log: {})",
            oidc.issuer,
            oidc.log.display()
        );
    }
    if let Some(chat) = &chat {
        eprintln!(
            "xtask: preview: chat panel: giftgenius-chat at {} (model from GIFTGENIUS_CHAT_PROVIDER/_BASE_URL/_MODEL, \
             key from OPENAI_API_KEY/ANTHROPIC_API_KEY; its log: {})",
            chat.url,
            chat.log.display()
        );
    }
    eprintln!("xtask: preview: after `cargo xtask widget` in another terminal the page reloads the widget by itself");
    eprintln!();
    let result = cmd::run_interactive(&mut server);
    drop(chat);
    drop(oidc);
    result
}

/// The local authorization server of `preview --auth`; killed on drop.
struct Oidc {
    child: Child,
    /// `http://127.0.0.1:PORT`, from its first stdout line.
    issuer: String,
    token_secret_file: PathBuf,
    log: PathBuf,
}

impl Oidc {
    /// Makes the keys and the token secret (once), starts server.mjs on a free loopback port and
    /// waits for its `listening ISSUER` line.
    fn start(root: &Path, redirect_uris: &[String], resource: &str) -> Result<Oidc> {
        let oidc_dir = ensure_oidc_deps(root)?;
        let dir = root.join("target/preview/oidc");
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let jwks = dir.join("jwks.json");
        if !jwks.is_file() {
            let mut keys = Command::new("node");
            keys.arg(oidc_dir.join("keys.mjs")).arg(&dir).arg("rsa-1:rsa");
            cmd::run(&mut keys)?;
        }
        let token_secret_file = dir.join("token-secret");
        if !token_secret_file.is_file() {
            let mut secret = [0u8; 32];
            std::fs::File::open("/dev/urandom")
                .and_then(|mut f| f.read_exact(&mut secret))
                .context("reading /dev/urandom for the preview's token secret")?;
            let hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
            std::fs::write(&token_secret_file, format!("preview-1 {hex}\n"))
                .with_context(|| format!("writing {}", token_secret_file.display()))?;
        }
        let log = dir.join("oidc.log");
        let stderr = std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
        let mut node = Command::new("node");
        node.arg(oidc_dir.join("server.mjs")).arg("--jwks").arg(&jwks).args([
            "--port",
            "0",
            "--client-id",
            PREVIEW_CLIENT_ID,
            "--resource",
            resource,
        ]);
        for uri in redirect_uris {
            node.args(["--redirect-uri", uri]);
        }
        eprintln!("xtask: $ node {}", node.get_args().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" "));
        let mut child = node
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .context("could not start node (the signed-in preview needs Node.js 20+)")?;
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let _ = tx.send(lines.next().and_then(Result::ok));
            for _ in lines {} // keep the pipe drained
        });
        let line = rx.recv_timeout(Duration::from_secs(30)).ok().flatten();
        let issuer = match line.as_deref().and_then(|l| l.strip_prefix("listening ")) {
            Some(issuer) => issuer.trim().to_string(),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                bail!(
                    "the authorization server did not start (first line {line:?}); its log {}:\n{}",
                    log.display(),
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
        };
        Ok(Oidc { child, issuer, token_secret_file, log })
    }
}

impl Drop for Oidc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `npm ci` in browser-tests/ (playwright-core, axe-core for the accessibility checks, and
/// ext-apps 2.x and 1.x with esbuild for the runs under their `AppBridge`) unless it is already
/// done.
pub fn ensure_npm_deps(root: &Path) -> Result<PathBuf> {
    npm_ci(
        &root.join(TESTS_DIR),
        &["playwright-core", "axe-core", "ext-apps-2", "ext-apps-1", "esbuild"],
        "the browser tests",
    )
}

/// `npm ci` in preview/oidc/ (oidc-provider, the authorization server of the auth tests and
/// `preview --auth`) unless it is already done.
pub fn ensure_oidc_deps(root: &Path) -> Result<PathBuf> {
    npm_ci(&root.join("preview/oidc"), &["oidc-provider"], "the auth tests")
}

/// `npm ci` in `dir` unless its node_modules already holds exactly the locked packages (a stamp
/// with the lockfile's hash, and every one of `packages` installed). Install scripts never run,
/// so nothing (a browser, a binary) is downloaded beside the registry's packages.
pub(crate) fn npm_ci(dir: &Path, packages: &[&str], needed_by: &str) -> Result<PathBuf> {
    let lock_path = dir.join("package-lock.json");
    let lock = std::fs::read(&lock_path).with_context(|| format!("reading {}", lock_path.display()))?;
    let want = format!("{:x}", Sha256::digest(&lock));
    let stamp = dir.join(NPM_STAMP);
    let installed = std::fs::read_to_string(&stamp).ok();
    if installed.as_deref().map(str::trim) == Some(want.as_str())
        && packages.iter().all(|p| dir.join("node_modules").join(p).is_dir())
    {
        eprintln!("xtask: ok: {}/node_modules matches package-lock.json", dir.display());
        return Ok(dir.to_path_buf());
    }
    let mut npm = Command::new("npm");
    npm.args(["ci", "--no-audit", "--no-fund", "--ignore-scripts"])
        .current_dir(dir)
        .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1");
    cmd::run(&mut npm).map_err(|e| {
        anyhow::anyhow!("{e:#}\n{needed_by} need Node.js 20+ and npm with npm registry access (Debian: apt-get install -y nodejs npm)")
    })?;
    std::fs::write(&stamp, format!("{want}\n")).with_context(|| format!("writing {}", stamp.display()))?;
    Ok(dir.to_path_buf())
}

/// `cargo xtask bench-widget`: `scripts/bench-widget.sh` (the React peer's render loop with the
/// packed widget and a real suggest_gifts result, then `browser-tests/bench.mjs`).
pub fn bench_widget(root: &Path, html: &Path) -> Result<()> {
    let chromium = tools::ensure_chromium()?;
    ensure_npm_deps(root)?;
    let bins = bins::build(root, bins::Profile::Debug)?;
    let mut script = Command::new("bash");
    script
        .arg(root.join("scripts/bench-widget.sh"))
        .current_dir(root)
        .env("GIFTGENIUS_SERVER_BIN", bins.path(bins::SERVER))
        .env("GIFTGENIUS_WIDGET_HTML", html)
        .env("GIFTGENIUS_CHROMIUM", &chromium)
        .env(
            "BENCH_DIR",
            std::env::var_os("BENCH_DIR").unwrap_or_else(|| target_dir(root).join("bench-widget").into()),
        );
    cmd::run(&mut script)
}

/// Chromium, npm deps (browser-tests/ and preview/oidc/), localstripe, the binaries, then
/// `node --test` over browser-tests/tests.
pub fn browser_tests(root: &Path, html: &Path) -> Result<()> {
    let chromium = tools::ensure_chromium()?;
    let dir = ensure_npm_deps(root)?;
    // tests/auth.test.mjs signs in against the local authorization server.
    ensure_oidc_deps(root)?;
    // tests/stripe-card.test.mjs saves cards against localstripe (and its Stripe.js stand-in).
    let tools_dir = tools::tools_root()?;
    crate::localstripe::ensure(root, &tools_dir)?;
    let bins = bins::build(root, bins::Profile::Debug)?;
    let bin = bins.path(bins::SERVER);
    let artifacts = target_dir(root).join("browser-artifacts");
    // Start empty, so a FAILED-* screenshot always belongs to this run.
    if artifacts.exists() {
        std::fs::remove_dir_all(&artifacts).with_context(|| format!("clearing {}", artifacts.display()))?;
    }
    std::fs::create_dir_all(&artifacts).with_context(|| format!("creating {}", artifacts.display()))?;

    let tests = dir.join("tests");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&tests)
        .with_context(|| format!("listing {}", tests.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(".test.mjs")))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("no *.test.mjs files in {}", tests.display());
    }
    let mut node = Command::new("node");
    // One file at a time: each starts its own server and Chromium, on a 2-core machine.
    node.args(["--test", "--test-concurrency=1", "--test-reporter=spec"])
        .args(files.iter().map(|f| f.strip_prefix(&dir).unwrap_or(f)))
        .current_dir(&dir)
        .env("GIFTGENIUS_SERVER_BIN", &bin)
        .env("GIFTGENIUS_CHAT_BIN", bins.path(bins::CHAT))
        .env("GIFTGENIUS_WIDGET_HTML", html)
        .env("GIFTGENIUS_CHROMIUM", &chromium)
        .env("GIFTGENIUS_BROWSER_ARTIFACTS", &artifacts)
        .env("GIFTGENIUS_TOOLS", &tools_dir);
    crate::test_env::pin(&mut node);
    cmd::run(&mut node)?;
    eprintln!("xtask: browser tests passed; screenshots in {}", artifacts.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The browser tests' packages are pinned to exact versions and the lockfile installs those;
    /// ext-apps twice, by npm alias: the host-side AppBridge at 2.0.4 and at 1.7.5.
    #[test]
    fn browser_tests_pin_exact_versions_and_both_ext_apps() {
        let manifest: serde_json::Value =
            serde_json::from_str(include_str!("../../../browser-tests/package.json")).expect("package.json");
        let lock: serde_json::Value =
            serde_json::from_str(include_str!("../../../browser-tests/package-lock.json")).expect("package-lock.json");
        let deps = manifest["devDependencies"].as_object().expect("devDependencies");
        for (name, spec) in deps {
            let spec = spec.as_str().expect("a version string");
            let (package, want) = match spec.strip_prefix("npm:") {
                Some(alias) => alias.rsplit_once('@').expect("npm:<package>@<version>"),
                None => (name.as_str(), spec),
            };
            assert!(want.chars().all(|c| c.is_ascii_digit() || c == '.'), "{name} is not pinned exactly: {spec}");
            let locked = &lock["packages"][format!("node_modules/{name}")];
            assert_eq!(locked["version"].as_str(), Some(want), "the lockfile installs another {name}");
            if package != name {
                assert_eq!(locked["name"].as_str(), Some(package), "the alias {name} installs another package");
            }
            assert!(
                locked["integrity"].as_str().is_some_and(|i| i.starts_with("sha512-")),
                "{name} has no integrity hash"
            );
        }
        assert_eq!(deps["ext-apps-2"], "npm:@modelcontextprotocol/ext-apps@2.0.4");
        assert_eq!(deps["ext-apps-1"], "npm:@modelcontextprotocol/ext-apps@1.7.5");
    }

    #[test]
    fn only_loopback_hosts_are_loopback_not_the_wildcards() {
        for host in ["127.0.0.1", "127.0.0.2", "localhost", "::1"] {
            assert!(super::is_loopback_host(host), "{host}");
        }
        for host in ["0.0.0.0", "::", "192.168.1.5", "example.com"] {
            assert!(!super::is_loopback_host(host), "{host}");
        }
    }
}
