//! Installs and checks the build tools in a versioned per-user cache.
//!
//! Trunk must never download tools (the machines have no internet beyond the package
//! registries, and a downloaded wasm-opt could differ from the one we tested), so every tool is
//! installed here from a registry into `<tools>/<name>-<version>/` and handed to trunk on PATH.
//! Each step is idempotent: a binary that exists and reports the right version is kept.

use crate::cmd::{self, probe};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

pub const TRUNK_VERSION: &str = "0.21.14";
/// Debian's `prometheus` package (it brings `promtool` too): the metrics test scrapes the server
/// with it and `cargo xtask test` checks the alert rules with its promtool.
pub const PROMETHEUS_DEB_VERSION: &str = "2.42.0+ds-5+deb12u1";
/// npm's binaryen package; Debian's binaryen 108 miscompiles Leptos (Table.set errors).
pub const BINARYEN_VERSION: &str = "132.0.0";
/// cargo-fuzz, the libFuzzer driver of `cargo xtask fuzz` (fuzz.rs).
pub const CARGO_FUZZ_VERSION: &str = "0.13.2";
/// How trunk names that wasm-opt version in `[tools] wasm_opt` / `TRUNK_TOOLS_WASM_OPT`.
pub const WASM_OPT_PIN: &str = "version_132";
const WASM_TARGET: &str = "wasm32-unknown-unknown";

/// Where the tools live and which versions they are.
pub struct Tools {
    pub trunk: PathBuf,
    /// Directories to put first on PATH for trunk (wasm-bindgen's and wasm-opt's).
    pub path_dirs: Vec<PathBuf>,
    pub wasm_bindgen_version: String,
}

/// `$GIFTGENIUS_TOOLS`, else `$HOME/.cache/giftgenius/tools`.
pub fn tools_root() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("GIFTGENIUS_TOOLS").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .context("neither GIFTGENIUS_TOOLS nor HOME is set; set GIFTGENIUS_TOOLS to a cache directory")?;
    Ok(PathBuf::from(home).join(".cache/giftgenius/tools"))
}

/// Checks (and installs when missing) everything `trunk build` needs.
pub fn ensure_build_tools(root: &Path) -> Result<Tools> {
    let tools = tools_root()?;
    let wbg_version = wasm_bindgen_version(root)?;
    check_trunk_toml(root, &wbg_version)?;
    ensure_wasm32_target(root)?;
    let trunk = ensure_trunk(&tools, root)?;
    let wbg_dir = ensure_wasm_bindgen(&tools, root, &wbg_version)?;
    let opt_dir = ensure_wasm_opt(&tools)?;
    Ok(Tools { trunk, path_dirs: vec![wbg_dir, opt_dir], wasm_bindgen_version: wbg_version })
}

/// The single wasm-bindgen version in Cargo.lock: the CLI must match it exactly.
pub fn wasm_bindgen_version(root: &Path) -> Result<String> {
    let lock_path = root.join("Cargo.lock");
    let lock = std::fs::read_to_string(&lock_path).with_context(|| format!("reading {}", lock_path.display()))?;
    let mut versions: Vec<String> = Vec::new();
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == r#"name = "wasm-bindgen""# {
            let version = lines
                .next()
                .and_then(|l| l.trim().strip_prefix("version = \""))
                .and_then(|v| v.strip_suffix('"'))
                .with_context(|| format!("{}: no version after wasm-bindgen", lock_path.display()))?;
            if !versions.iter().any(|v| v == version) {
                versions.push(version.to_string());
            }
        }
    }
    match versions.as_slice() {
        [one] => Ok(one.clone()),
        [] => bail!("{} has no wasm-bindgen package; run `cargo generate-lockfile`", lock_path.display()),
        many => bail!(
            "{} has several wasm-bindgen versions ({}); the CLI can only match one",
            lock_path.display(),
            many.join(", ")
        ),
    }
}

/// Trunk.toml pins the tools for people who run trunk by hand; keep them equal to ours.
fn check_trunk_toml(root: &Path, wbg_version: &str) -> Result<()> {
    let path = root.join("Trunk.toml");
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let pin = |key: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == key).then(|| v.split('#').next().unwrap_or("").trim().trim_matches('"').to_string())
        })
    };
    for (key, want) in [("wasm_bindgen", wbg_version), ("wasm_opt", WASM_OPT_PIN)] {
        match pin(key) {
            Some(have) if have == want => {}
            Some(have) => bail!(
                "{} pins [tools] {key} = \"{have}\" but the build needs \"{want}\" (from {}); update Trunk.toml",
                path.display(),
                if key == "wasm_bindgen" { "Cargo.lock" } else { "xtask" }
            ),
            None => bail!("{} lacks [tools] {key} = \"{want}\"", path.display()),
        }
    }
    Ok(())
}

/// Keeps a tool whose `--version` output passes `ok`, otherwise runs `install` and re-checks.
fn ensure_tool(
    name: &str,
    bin: &Path,
    ok: impl Fn(&str) -> bool,
    install: &mut Command,
    prerequisite: &str,
) -> Result<()> {
    match probe(bin, &["--version"]) {
        Some(v) if ok(&v) => {
            eprintln!("xtask: ok: {v} ({})", bin.display());
            return Ok(());
        }
        Some(v) => eprintln!("xtask: {} reports `{v}`; reinstalling {name}", bin.display()),
        None => eprintln!("xtask: {name} not found at {}; installing", bin.display()),
    }
    if let Err(e) = cmd::run(install) {
        bail!("{e:#}\ninstalling {name} needs {prerequisite}; fix that and run the command above again");
    }
    match probe(bin, &["--version"]) {
        Some(v) if ok(&v) => {
            eprintln!("xtask: ok: {v} ({})", bin.display());
            Ok(())
        }
        other => {
            bail!("after installing {name}, `{} --version` gives {:?}, not the expected version", bin.display(), other)
        }
    }
}

/// `nth` whitespace-separated word of a `--version` line equals `want`.
fn word_is(out: &str, nth: usize, want: &str) -> bool {
    out.split_whitespace().nth(nth) == Some(want)
}

fn ensure_trunk(tools: &Path, root: &Path) -> Result<PathBuf> {
    let dir = tools.join(format!("trunk-{TRUNK_VERSION}"));
    let bin = dir.join("bin/trunk");
    let mut install = cmd::cargo();
    install.args(["install", "trunk", "--version", TRUNK_VERSION, "--locked", "--root"]).arg(&dir).current_dir(root);
    ensure_tool(
        "trunk",
        &bin,
        |v| word_is(v, 1, TRUNK_VERSION),
        &mut install,
        "crates.io access and a C compiler (~10 min on 2 cores)",
    )?;
    Ok(bin)
}

fn ensure_wasm_bindgen(tools: &Path, root: &Path, version: &str) -> Result<PathBuf> {
    let dir = tools.join(format!("wasm-bindgen-cli-{version}"));
    let mut install = cmd::cargo();
    // No --locked: the CLI's own lockfile pins a crate version the registry no longer has.
    install.args(["install", "wasm-bindgen-cli", "--version", version, "--root"]).arg(&dir).current_dir(root);
    ensure_tool(
        "wasm-bindgen-cli",
        &dir.join("bin/wasm-bindgen"),
        |v| word_is(v, 1, version),
        &mut install,
        "crates.io access (~3 min on 2 cores)",
    )?;
    Ok(dir.join("bin"))
}

/// cargo-fuzz at [`CARGO_FUZZ_VERSION`]; returns its binary (run as it is: `cargo-fuzz build`).
pub fn ensure_cargo_fuzz(tools: &Path, root: &Path) -> Result<PathBuf> {
    let dir = tools.join(format!("cargo-fuzz-{CARGO_FUZZ_VERSION}"));
    let mut install = cmd::cargo();
    install
        .args(["install", "cargo-fuzz", "--version", CARGO_FUZZ_VERSION, "--locked", "--root"])
        .arg(&dir)
        .current_dir(root);
    let bin = dir.join("bin/cargo-fuzz");
    ensure_tool(
        "cargo-fuzz",
        &bin,
        |v| word_is(v, 1, CARGO_FUZZ_VERSION),
        &mut install,
        "crates.io access (~1.5 min on 2 cores)",
    )?;
    Ok(bin)
}

fn ensure_wasm_opt(tools: &Path) -> Result<PathBuf> {
    let dir = tools.join(format!("binaryen-{BINARYEN_VERSION}"));
    let bin_dir = dir.join("node_modules/binaryen/bin");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut install = Command::new("npm");
    install.args(["install", "--no-audit", "--no-fund", &format!("binaryen@{BINARYEN_VERSION}")]).current_dir(&dir);
    let major = BINARYEN_VERSION.split('.').next().unwrap_or(BINARYEN_VERSION);
    // It is a node script: this probe also proves that `node` runs it.
    ensure_tool(
        "wasm-opt (npm binaryen)",
        &bin_dir.join("wasm-opt"),
        |v| word_is(v, 2, major),
        &mut install,
        "Node.js and npm with npm registry access (Debian: apt-get install -y nodejs npm)",
    )?;
    Ok(bin_dir)
}

/// rust-toolchain.toml lists the target, so rustup normally has it; add it if not.
fn ensure_wasm32_target(root: &Path) -> Result<()> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if let Some(sysroot) = &sysroot {
        let lib = sysroot.join("lib/rustlib").join(WASM_TARGET);
        if lib.is_dir() {
            eprintln!("xtask: ok: rust target {WASM_TARGET} ({})", lib.display());
            return Ok(());
        }
    }
    let mut add = Command::new("rustup");
    add.args(["target", "add", WASM_TARGET]).current_dir(root);
    cmd::run(&mut add).map_err(|e| {
        anyhow::anyhow!(
            "{e:#}\nthe {WASM_TARGET} standard library is missing; it needs rustup with access to \
             static.rust-lang.org (`rustup target add {WASM_TARGET}` in {})",
            root.display()
        )
    })
}

/// Debian's Chromium for the browser tests; tools must never download their own browser.
pub fn ensure_chromium() -> Result<PathBuf> {
    let bin = PathBuf::from("/usr/bin/chromium");
    if let Some(v) = probe(&bin, &["--version"]) {
        eprintln!("xtask: ok: {v} ({})", bin.display());
        return Ok(bin);
    }
    let apt = |args: &[&str]| cmd::run(Command::new("apt-get").args(args).env("DEBIAN_FRONTEND", "noninteractive"));
    let install = || apt(&["install", "-y", "chromium"]);
    if install().is_err() {
        // A fresh machine often has no package lists yet.
        let updated = apt(&["update"]);
        if let Err(e) = updated.and_then(|()| install()) {
            bail!(
                "{e:#}\nChromium needs Debian's `chromium` package: run `apt-get update && apt-get install -y chromium` as root"
            );
        }
    }
    match probe(&bin, &["--version"]) {
        Some(v) => {
            eprintln!("xtask: ok: {v} ({})", bin.display());
            Ok(bin)
        }
        None => bail!("`apt-get install -y chromium` succeeded but {} --version does not run", bin.display()),
    }
}

/// The version of Debian package `name` that dpkg holds installed, if any.
fn installed_deb_version(name: &str) -> Option<String> {
    let out = Command::new("dpkg-query").args(["-W", "-f=${Status} ${Version}", name]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    // "install ok installed 2.42.0+ds-5+deb12u1"
    let version = text.strip_prefix("install ok installed ")?;
    (out.status.success() && !version.is_empty()).then(|| version.trim().to_string())
}

/// `apt-get install -y --no-install-recommends PACKAGE`, after `apt-get update` if the first
/// try fails (a fresh machine often has no package lists yet).
fn apt_install(package: &str) -> Result<()> {
    let apt = |args: &[&str]| cmd::run(Command::new("apt-get").args(args).env("DEBIAN_FRONTEND", "noninteractive"));
    let install = || apt(&["install", "-y", "--no-install-recommends", package]);
    if install().is_err() {
        apt(&["update"]).and_then(|()| install())?;
    }
    Ok(())
}

/// Debian's Prometheus (`prometheus` and `promtool`) at [`PROMETHEUS_DEB_VERSION`]; kept when
/// that version is installed. Returns the directory of both binaries. The package's own service
/// is never used: the test starts a Prometheus of its own on a free port with its own storage.
pub fn ensure_prometheus() -> Result<PathBuf> {
    let bin = PathBuf::from("/usr/bin");
    let ready = || {
        installed_deb_version("prometheus").filter(|v| v == PROMETHEUS_DEB_VERSION).is_some()
            && probe(&bin.join("promtool"), &["--version"]).is_some()
            && probe(&bin.join("prometheus"), &["--version"]).is_some()
    };
    if ready() {
        eprintln!("xtask: ok: prometheus and promtool {PROMETHEUS_DEB_VERSION} ({})", bin.display());
        return Ok(bin);
    }
    match installed_deb_version("prometheus") {
        Some(other) => eprintln!("xtask: prometheus {other} is installed; installing {PROMETHEUS_DEB_VERSION}"),
        None => eprintln!("xtask: prometheus not installed; installing {PROMETHEUS_DEB_VERSION}"),
    }
    if let Err(e) = apt_install(&format!("prometheus={PROMETHEUS_DEB_VERSION}")) {
        bail!(
            "{e:#}\nthe metrics test and the alert rule tests need Debian's `prometheus` package: run `apt-get update && \
             apt-get install -y --no-install-recommends prometheus={PROMETHEUS_DEB_VERSION}` as root"
        );
    }
    if !ready() {
        bail!(
            "`apt-get install prometheus={PROMETHEUS_DEB_VERSION}` succeeded but prometheus or promtool does not run"
        );
    }
    eprintln!("xtask: ok: prometheus and promtool {PROMETHEUS_DEB_VERSION} ({})", bin.display());
    Ok(bin)
}
