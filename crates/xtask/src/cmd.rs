//! Running child processes: every step prints what it runs, and a failure names the command.

use anyhow::{Context, Result, bail};
use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};

/// The cargo that runs xtask, so nested builds use the same toolchain (rust-toolchain.toml).
pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
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
