//! `cargo xtask …`: builds, serves and tests GiftGenius with pinned, locally installed tools.
//!
//! The commands and their flags are in `cli.rs` (`cargo xtask help`, `cargo xtask help
//! COMMAND`): setup, widget, errors, serve, preview, test, fuzz, chat, browser-test, conformance,
//! eval, alerts, bench-peers, bench-widget. xtask links none of the crates it builds except the contract
//! (`giftgenius-types`, for the error table), so it starts without compiling Leptos: the widget
//! build asks the widget crate for what the packer needs (`widget.rs`). Every binary it starts
//! comes from one `cargo build` per profile, the same for every command (`bins.rs`).
//!
//! Server arguments pass through untouched; xtask's own choices go in `GIFTGENIUS_*` variables
//! (see `server.rs`). Works from any directory: the workspace root comes from this crate's
//! manifest location.

mod alerts;
mod bins;
mod budget;
mod chat;
mod cli;
mod cluster;
mod cmd;
mod compact;
mod conformance;
mod errors;
mod fuzz;
mod image;
mod kube;
mod localstripe;
mod pack;
mod preview;
mod pyvenv;
mod server;
mod test_env;
mod tools;
mod widget;

use anyhow::{Context, Result, bail};
use clap::Parser as _;
use cli::{Cli, ClusterAction, Command};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    // Help, a missing or unknown command and bad flags exit here, the way clap reports them.
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: Command) -> Result<()> {
    let root = workspace_root()?;
    match command {
        Command::Setup { browser } => {
            tools::ensure_build_tools(&root)?;
            tools::ensure_prometheus()?;
            localstripe::ensure(&root, &tools::tools_root()?)?;
            tools::ensure_cargo_fuzz(&tools::tools_root()?, &root)?;
            tools::ensure_model()?;
            if browser {
                tools::ensure_chromium()?;
                preview::ensure_npm_deps(&root)?;
                preview::ensure_oidc_deps(&root)?;
                conformance::ensure_deps(&root)?;
            }
            eprintln!("xtask: setup done");
            Ok(())
        }
        Command::Widget => widget::build(&root).map(|_| ()),
        Command::Serve { args } => serve(&root, &args),
        Command::Preview { auth, args } => preview::run(&root, &args, auth),
        Command::Chat { args } => chat::run(&root, &args),
        Command::Test => test(&root),
        Command::BrowserTest => {
            let html = widget::build_if_changed(&root)?;
            preview::browser_tests(&root, &html)
        }
        Command::Conformance => {
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
        Command::BenchPeers => {
            let server = bins::build(&root, bins::Profile::Release)?.path(bins::SERVER);
            let mut script = std::process::Command::new("bash");
            script.arg(root.join("scripts/bench-peers.sh")).current_dir(&root).env("GIFTGENIUS_SERVER_BIN", server);
            cmd::run(&mut script)
        }
        Command::BenchWidget => {
            let html = widget::build_if_changed(&root)?;
            preview::bench_widget(&root, &html)
        }
        Command::Eval { args } => eval(&root, &args),
        Command::Errors => errors::run(&root),
        Command::Fuzz { long, seconds, target } => {
            let length = match long {
                true => fuzz::Length::Long { seconds: seconds.unwrap_or(fuzz::LONG_SECONDS) },
                false => fuzz::Length::Short,
            };
            fuzz::run(&root, length, target.as_deref())
        }
        Command::Alerts => alerts::check(&root, &tools::ensure_prometheus()?),
        Command::Image { tag, source, registry_name } => {
            let engine = image::ensure_engine(&root)?;
            image::app(&root, &engine, &image::AppOptions { tag, source, server_name: registry_name }).map(|_| ())
        }
        Command::Cluster { action, long } => match action {
            ClusterAction::Up => cluster::Cluster::prepare(&root, &image::AppOptions::default())?.up(),
            ClusterAction::Down => cluster::Cluster::attach(&root)?.down(),
            ClusterAction::Status => cluster::Cluster::attach(&root)?.status(),
            ClusterAction::Chaos => {
                let cluster = cluster::Cluster::prepare(&root, &image::AppOptions::default())?;
                cluster.up_fresh()?;
                cluster.chaos(long)
            }
        },
        Command::Kube => kube::run(&root),
    }
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

fn serve(root: &Path, server_args: &[String]) -> Result<()> {
    let model = tools::ensure_model()?;
    let bins = bins::build(root, bins::Profile::Release)?;
    let mut server = std::process::Command::new(bins.path(bins::SERVER));
    server.current_dir(root).env(tools::MODEL_DIR_ENV, model);
    server::provide_widget(root, server_args, &mut server)?;
    server.args(server_args);
    cmd::run_interactive(&mut server)
}

/// The quality harness in the dev profile (the build every test shares; ranking a set takes
/// milliseconds even unoptimized), its arguments as given.
fn eval(root: &Path, args: &[String]) -> Result<()> {
    let model = tools::ensure_model()?;
    let mut harness = cmd::cargo();
    harness.args(["run", "--quiet", "-p", "giftgenius-eval", "--bin", "giftgenius-eval"]).current_dir(root);
    harness.env(tools::MODEL_DIR_ENV, model);
    locked_in_ci(&mut harness);
    harness.arg("--").args(args);
    cmd::run(&mut harness)
}

fn test(root: &Path) -> Result<()> {
    // Formatting and lints first: they fail fast, before the widget build and the long tests.
    let mut fmt = cmd::cargo();
    fmt.args(["fmt", "--all", "--check"]).current_dir(root);
    cmd::run(&mut fmt).context("the code is not formatted; run `cargo fmt --all`")?;
    // fuzz/ is a workspace of its own, which `cargo fmt --all` does not reach.
    let mut fmt_fuzz = cmd::cargo();
    fmt_fuzz.args(["fmt", "--all", "--check", "--manifest-path", "fuzz/Cargo.toml"]).current_dir(root);
    cmd::run(&mut fmt_fuzz).context("fuzz/ is not formatted; run `cargo fmt --all --manifest-path fuzz/Cargo.toml`")?;
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

    // The auth tests run a real authorization server (oidc-provider on Node.js), and the metrics
    // test a real Prometheus.
    preview::ensure_oidc_deps(root)?;
    let prometheus = tools::ensure_prometheus()?;
    // The Stripe provider's tests run against localstripe.
    localstripe::ensure(root, &tools::tools_root()?)?;
    // The embedding model's tests (and the ranking that uses it) load its weights.
    let model = tools::ensure_model()?;

    // Server tests compare the served resource with these exact bytes.
    let mut tests = cmd::cargo();
    tests.args(["test", "--workspace"]).current_dir(root).env("GIFTGENIUS_WIDGET_HTML", &html);
    tests.env(tools::MODEL_DIR_ENV, &model);
    locked_in_ci(&mut tests);
    test_env::pin(&mut tests);
    cmd::run(&mut tests)?;

    // The widget runtime's own tests (node's test runner, no packages): the decision language
    // of the markup against the schema the Rust types generate.
    let mut runtime = std::process::Command::new("node");
    runtime.args(["--test", "widget/runtime/tests/"]).current_dir(root);
    test_env::pin(&mut runtime);
    cmd::run(&mut runtime).context("the widget runtime's tests (node --test widget/runtime/tests/)")?;

    // Every parser of untrusted input under libFuzzer: the regression cases, then a short,
    // fixed-seed run of each target (fuzz.rs).
    fuzz::run(root, fuzz::Length::Short, None)?;

    // The alert rules, by Prometheus' own promtool.
    alerts::check(root, &prometheus)?;

    // The official MCP suites against the real server (before the browser tests: faster, and a
    // protocol failure explains a browser failure better than the other way round).
    conformance::run(root, &html)?;

    // The packed widget in headless Chromium inside the preview host, against the real server.
    preview::browser_tests(root, &html)?;

    // The deployment (issue 45), last: it is the slowest step after a server change (the image's
    // static binaries relink with fat LTO) and the one that needs a container engine, so a
    // failure of the app itself is reported first. The Kubernetes manifests against the schemas,
    // the image, the compose deployment under the small chaos run and a rolling restart, the
    // Deployment under `podman kube play`; podman is installed if missing, and a failure to run
    // it fails here.
    deployment_check(root)?;
    eprintln!("xtask: test passed");
    Ok(())
}

/// The test command's deployment step (`cluster.rs`'s module docs): the manifests validated,
/// a fresh compose cluster under the small chaos run and a rolling restart, then the Deployment
/// under `podman kube play`; the cluster is removed after, pass or fail.
fn deployment_check(root: &Path) -> Result<()> {
    let started = std::time::Instant::now();
    kube::validate(root)?;
    let cluster = cluster::Cluster::prepare(root, &image::AppOptions::default())?;
    let result =
        cluster.up_fresh().and_then(|()| cluster.chaos(false)).and_then(|()| kube::play(root, &cluster.engine));
    let down = cluster.down();
    if let (Err(_), Err(e)) = (&result, &down) {
        // The first failure is the one returned; the cleanup's must not vanish with it.
        eprintln!("xtask: taking the cluster down also failed: {e:#}");
    }
    result?;
    down?;
    eprintln!("xtask: deployment checks passed in {:.1?}", started.elapsed());
    Ok(())
}
