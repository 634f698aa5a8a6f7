//! `cargo xtask fuzz`: the cargo-fuzz targets of `fuzz/` (docs/fuzzing.md), one libFuzzer binary
//! per parser of untrusted input.
//!
//! One build serves every target: the pinned toolchain (rust-toolchain.toml), no sanitizer (every
//! line under test is safe Rust: a panic, an overflow or a failed property aborts the run without
//! one, and that needs no nightly compiler), debug assertions and overflow checks on. The build goes
//! to `$CARGO_TARGET_DIR/fuzz` (CI's cached target dir), else `target/fuzz`.
//!
//! The short run (in `cargo xtask test`) replays every file under `fuzz/regressions/<target>/`,
//! then fuzzes each target for [`SHORT_RUNS`] executions from seed 1 over the committed corpus
//! `fuzz/corpus/<target>/`, into a scratch corpus emptied first: the same inputs on every run.
//! The long run (`--long`) fuzzes each target for a while from a random seed into a scratch corpus
//! that is kept, so long runs build on each other. A crash fails either, naming the input to keep.

use crate::{cmd, locked_in_ci, tools};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Executions of each target in the short run.
pub const SHORT_RUNS: u32 = 50_000;
/// Seconds of each target in the long run, unless `--seconds` says otherwise.
pub const LONG_SECONDS: u32 = 600;
/// The largest input libFuzzer makes: a few KiB reach every branch of these parsers.
const MAX_LEN: u32 = 4096;
/// The target triple cargo-fuzz builds for (and names the output directory after).
const TRIPLE: &str = "x86_64-unknown-linux-gnu";

/// How long to fuzz.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    /// [`SHORT_RUNS`] executions from a fixed seed: the test command's step.
    Short,
    /// This many seconds per target from a random seed.
    Long { seconds: u32 },
}

/// Builds the targets, then runs `only` (or every target) for `length`.
pub fn run(root: &Path, length: Length, only: Option<&str>) -> Result<()> {
    let cargo_fuzz = tools::ensure_cargo_fuzz(&tools::tools_root()?, root)?;
    let target_dir = target_dir(root);
    build(root, &cargo_fuzz, &target_dir)?;
    let all = targets(root, &cargo_fuzz)?;
    let chosen: Vec<&String> = match only {
        Some(name) => match all.iter().find(|t| *t == name) {
            Some(t) => vec![t],
            None => bail!("no fuzz target {name}; the targets are: {}", all.join(", ")),
        },
        None => all.iter().collect(),
    };
    for target in chosen {
        let binary = target_dir.join(TRIPLE).join("release").join(target);
        replay_regressions(root, &binary, &target_dir, target)?;
        fuzz(root, &binary, &target_dir, target, length)?;
    }
    eprintln!("xtask: fuzzing passed");
    Ok(())
}

/// `$CARGO_TARGET_DIR/fuzz`, else `<root>/target/fuzz`: apart from the main builds, whose
/// flags differ (coverage instrumentation), so neither rebuilds the other.
fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => root.join(dir).join("fuzz"),
        None => root.join("target/fuzz"),
    }
}

fn cargo_fuzz(root: &Path, bin: &Path) -> Command {
    let mut command = Command::new(bin);
    cmd::forget_xtask(&mut command);
    command.current_dir(root);
    command
}

fn build(root: &Path, bin: &Path, target_dir: &Path) -> Result<()> {
    // cargo-fuzz has no --locked: in CI, `cargo metadata --locked` fails first if fuzz/Cargo.lock
    // would change.
    let mut metadata = cmd::cargo();
    metadata.args(["metadata", "--format-version", "1", "--manifest-path", "fuzz/Cargo.toml"]).current_dir(root);
    locked_in_ci(&mut metadata);
    metadata.stdout(std::process::Stdio::null());
    cmd::run(&mut metadata).context(
        "fuzz/Cargo.lock does not match fuzz/Cargo.toml and the crates it builds: run `cargo xtask fuzz` \
         outside CI (it updates the lock) and commit fuzz/Cargo.lock",
    )?;
    let mut build = cargo_fuzz(root, bin);
    build
        .args(["build", "--release", "--debug-assertions", "--sanitizer", "none", "--codegen-units", "16"])
        .arg("--target-dir")
        .arg(target_dir);
    cmd::run(&mut build).context("building the fuzz targets")
}

/// The targets, as fuzz/Cargo.toml declares them.
fn targets(root: &Path, bin: &Path) -> Result<Vec<String>> {
    let mut list = cargo_fuzz(root, bin);
    list.arg("list");
    let out = list.output().with_context(|| format!("running {} list", bin.display()))?;
    if !out.status.success() {
        bail!("`{} list` failed: {}", bin.display(), String::from_utf8_lossy(&out.stderr));
    }
    let names: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
    if names.is_empty() {
        bail!("fuzz/Cargo.toml declares no fuzz target");
    }
    Ok(names)
}

/// The files of `dir`, sorted (none when it does not exist).
fn files(dir: &Path) -> Result<Vec<PathBuf>> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(Vec::new()) };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.with_context(|| format!("reading {}", dir.display()))?.path();
        if path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Every crash found so far, run once each: fixed ones stay fixed.
fn replay_regressions(root: &Path, binary: &Path, target_dir: &Path, target: &str) -> Result<()> {
    let cases = files(&root.join("fuzz/regressions").join(target))?;
    if cases.is_empty() {
        return Ok(());
    }
    let mut replay = Command::new(binary);
    replay.args(&cases).current_dir(root);
    let log = log_path(target_dir, target, "regressions");
    libfuzzer(&mut replay, &log).with_context(|| format!("a regression case of {target} fails again"))?;
    eprintln!("xtask: fuzz {target}: {} regression case(s) pass", cases.len());
    Ok(())
}

/// Where one run's libFuzzer output goes: `<target dir>/logs/<target>-<what>.log`.
fn log_path(target_dir: &Path, target: &str, what: &str) -> PathBuf {
    target_dir.join("logs").join(format!("{target}-{what}.log"))
}

/// Runs a libFuzzer binary with its (long) output in `log`; on failure, the output's end.
fn libfuzzer(command: &mut Command, log: &Path) -> Result<String> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let file = std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
    let err = file.try_clone().with_context(|| format!("opening {}", log.display()))?;
    command.stdout(file).stderr(err);
    let result = cmd::run(command);
    let output = std::fs::read_to_string(log).unwrap_or_default();
    if let Err(e) = result {
        let lines: Vec<&str> = output.lines().collect();
        let tail = lines[lines.len().saturating_sub(60)..].join("\n");
        bail!("{e:#}\n--- the end of {} ---\n{tail}", log.display());
    }
    Ok(output)
}

/// libFuzzer's closing line and the coverage it reached: `Done 50000 runs in 2 second(s), cov 1234`.
fn summary(output: &str) -> String {
    let done = output.lines().rev().find(|l| l.starts_with("Done ")).unwrap_or("no closing line");
    let cov = output
        .lines()
        .rev()
        .find_map(|l| l.split_once(" cov: ").and_then(|(_, rest)| rest.split_whitespace().next()))
        .unwrap_or("?");
    format!("{done}, cov {cov}")
}

fn fuzz(root: &Path, binary: &Path, target_dir: &Path, target: &str, length: Length) -> Result<()> {
    let seeds = root.join("fuzz/corpus").join(target);
    let (scratch, mut flags) = match length {
        Length::Short => {
            (target_dir.join("corpus-short").join(target), vec!["-seed=1".to_string(), format!("-runs={SHORT_RUNS}")])
        }
        Length::Long { seconds } => {
            (target_dir.join("corpus-long").join(target), vec![format!("-max_total_time={seconds}")])
        }
    };
    if length == Length::Short && scratch.exists() {
        std::fs::remove_dir_all(&scratch).with_context(|| format!("emptying {}", scratch.display()))?;
    }
    let artifacts = target_dir.join("artifacts").join(target);
    for dir in [&scratch, &artifacts] {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    flags.push(format!("-max_len={MAX_LEN}"));
    // A hang or a runaway allocation is a finding too.
    flags.extend(["-timeout=10".to_string(), "-rss_limit_mb=2048".to_string()]);
    flags.push(format!("-artifact_prefix={}/", artifacts.display()));
    let mut run = Command::new(binary);
    // New inputs go to the first directory; the committed seeds are only read.
    run.args(&flags).arg(&scratch).arg(&seeds).current_dir(root);
    let log = log_path(target_dir, target, "run");
    let output = libfuzzer(&mut run, &log).map_err(|e| {
        anyhow::anyhow!(
            "{e:#}\nfuzz target {target} failed on the input saved under {} (crash-…, oom-… or timeout-…): \
             copy it to fuzz/regressions/{target}/, fix the code with a unit test, and run `cargo xtask fuzz {target}`",
            artifacts.display()
        )
    })?;
    eprintln!("xtask: fuzz {target}: {} ({})", summary(&output), log.display());
    Ok(())
}
