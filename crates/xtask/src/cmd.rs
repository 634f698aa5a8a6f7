//! Running child processes: every step prints what it runs, and a failure names the command.

use anyhow::{Context, Result, bail};
use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};

/// The cargo that runs xtask, so nested builds use the same toolchain (rust-toolchain.toml),
/// without what `cargo run` told xtask about itself (see [`about_xtask`]).
pub fn cargo() -> Command {
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    forget_xtask(&mut cargo);
    cargo
}

/// Keeps what `cargo run` told xtask about itself from `command` and the cargo it may start
/// (cargo-fuzz runs cargo too).
pub fn forget_xtask(command: &mut Command) {
    for (key, _) in std::env::vars_os() {
        if about_xtask(&key) {
            command.env_remove(key);
        }
    }
}

/// The variables `cargo run` sets for the package it runs (xtask's name, version, manifest).
/// A nested cargo would hand them on to build scripts, and ring's watches CARGO_MANIFEST_DIR and
/// CARGO_PKG_* (`rerun-if-env-changed`): seen, a build under xtask reran ring's script and
/// recompiled ring, rustls, reqwest, rmcp and the server, and a `cargo build` in a shell then
/// did it again. Without them a nested build sees what a shell's build sees.
fn about_xtask(key: &OsStr) -> bool {
    let key = key.to_string_lossy();
    ["CARGO_PKG_", "CARGO_MANIFEST_"].iter().any(|p| key.starts_with(p))
        || ["CARGO_CRATE_NAME", "CARGO_BIN_NAME", "CARGO_PRIMARY_PACKAGE"].contains(&key.as_ref())
}

/// Prints the command (with the env vars we set on it) and its working directory.
fn describe(cmd: &Command) -> String {
    let mut s = String::new();
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            s.push_str(&format!("{}={} ", k.to_string_lossy(), shell_quote(v)));
        }
    }
    s.push_str(&shell_quote(cmd.get_program()));
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&shell_quote(a));
    }
    if let Some(dir) = cmd.get_current_dir() {
        s.push_str(&format!("    (in {})", dir.display()));
    }
    s
}

fn shell_quote(s: &OsStr) -> String {
    let s = s.to_string_lossy();
    if s.chars().any(|c| c.is_control()) {
        // Bash ANSI-C quoting keeps e.g. CARGO_ENCODED_RUSTFLAGS' 0x1f separators copy-pasteable.
        let mut q = String::from("$'");
        for c in s.chars() {
            match c {
                '\\' | '\'' => {
                    q.push('\\');
                    q.push(c);
                }
                c if c.is_control() => q.push_str(&format!("\\x{:02x}", c as u32)),
                c => q.push(c),
            }
        }
        q.push('\'');
        return q;
    }
    let plain = !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain { s.into_owned() } else { format!("'{}'", s.replace('\'', r"'\''")) }
}

/// Runs a command with inherited stdio; a non-zero exit becomes an error naming it.
pub fn run(cmd: &mut Command) -> Result<()> {
    let text = describe(cmd);
    eprintln!("xtask: $ {text}");
    let status = cmd.stdin(Stdio::null()).status().with_context(|| format!("could not start `{text}`"))?;
    if !status.success() {
        bail!("`{text}` failed ({status})");
    }
    Ok(())
}

/// Like [`run`] but keeps stdin (for `serve`, which the user may stop with Ctrl-C).
pub fn run_interactive(cmd: &mut Command) -> Result<()> {
    let text = describe(cmd);
    eprintln!("xtask: $ {text}");
    let status = cmd.status().with_context(|| format!("could not start `{text}`"))?;
    if !status.success() {
        bail!("`{text}` failed ({status})");
    }
    Ok(())
}

/// Runs `program --version`-style probes quietly; `None` if it cannot run or fails.
pub fn probe(program: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).stdin(Stdio::null()).output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_cargo_run_says_about_xtask_is_not_passed_on_and_the_rest_is() {
        for key in [
            "CARGO_MANIFEST_DIR",
            "CARGO_MANIFEST_PATH",
            "CARGO_PKG_NAME",
            "CARGO_PKG_VERSION_MAJOR",
            "CARGO_CRATE_NAME",
            "CARGO_BIN_NAME",
            "CARGO_PRIMARY_PACKAGE",
        ] {
            assert!(about_xtask(OsStr::new(key)), "{key}");
        }
        for key in ["CARGO", "CARGO_HOME", "CARGO_TARGET_DIR", "CARGO_BUILD_JOBS", "CI", "PATH"] {
            assert!(!about_xtask(OsStr::new(key)), "{key}");
        }
    }

    /// The real thing: under `cargo run` (as in `cargo test`) the manifest dir is set, and a
    /// child started through [`cargo`] does not get it.
    #[test]
    fn a_nested_cargo_does_not_see_xtask_s_manifest() {
        assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some(), "cargo sets it for tests");
        let cargo = cargo();
        let removed: Vec<_> = cargo.get_envs().filter(|(_, v)| v.is_none()).map(|(k, _)| k).collect();
        assert!(removed.contains(&OsStr::new("CARGO_MANIFEST_DIR")), "{removed:?}");
        assert!(removed.contains(&OsStr::new("CARGO_PKG_NAME")), "{removed:?}");
    }
}
