//! localstripe, the third-party Stripe emulator (PyPI) the API tests run the Stripe provider
//! against: installed from PyPI with pip into a venv of its own,
//! `<tools>/localstripe-<version>/`, exactly the versions `tools/localstripe/requirements.txt`
//! pins (localstripe and everything it imports). Idempotent: a venv whose `pip freeze` equals
//! the pins is kept. Nothing but PyPI packages is downloaded.

use crate::cmd;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The pins, relative to the workspace root.
pub const REQUIREMENTS: &str = "tools/localstripe/requirements.txt";

/// The `name==version` lines of a requirements file, lower-cased and sorted (comments dropped).
fn pins(text: &str) -> Vec<String> {
    let mut pins: Vec<String> = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_ascii_lowercase().replace('_', "-"))
        .filter(|l| !l.is_empty())
        .collect();
    pins.sort();
    pins
}

/// localstripe's pinned version.
fn version(pins: &[String]) -> Option<&str> {
    pins.iter().find_map(|p| p.strip_prefix("localstripe=="))
}

/// Installs (when missing or different) and returns the `localstripe` executable.
pub fn ensure(root: &Path, tools: &Path) -> Result<PathBuf> {
    let path = root.join(REQUIREMENTS);
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let wanted = pins(&text);
    let Some(version) = version(&wanted) else { bail!("{} pins no localstripe==VERSION", path.display()) };
    let dir = tools.join(format!("localstripe-{version}"));
    let bin = dir.join("bin/localstripe");
    let installed =
        || cmd::probe(&dir.join("bin/pip"), &["freeze", "--all", "--exclude", "pip", "--exclude", "setuptools"]);
    let ready = |freeze: Option<String>| bin.is_file() && freeze.is_some_and(|f| pins(&f) == wanted);
    if ready(installed()) {
        eprintln!("xtask: ok: localstripe {version} ({})", bin.display());
        return Ok(bin);
    }
    eprintln!("xtask: localstripe {version} not installed as pinned at {}; installing", dir.display());
    let python = ["python3.11", "python3"].into_iter().find(|p| cmd::probe(Path::new(p), &["--version"]).is_some());
    let Some(python) = python else {
        bail!("localstripe needs Python 3 with venv and pip (Debian: apt-get install -y python3 python3-venv)");
    };
    let mut venv = Command::new(python);
    venv.args(["-m", "venv", "--clear"]).arg(&dir).current_dir(root);
    // --no-deps: the file pins every dependency itself, so nothing unpinned comes along.
    let mut install = Command::new(dir.join("bin/pip"));
    install
        .args(["install", "--no-input", "--disable-pip-version-check", "--no-deps", "-r"])
        .arg(&path)
        .current_dir(root);
    let steps = cmd::run(&mut venv).and_then(|()| cmd::run(&mut install));
    if let Err(e) = steps {
        bail!(
            "{e:#}\ninstalling localstripe needs Python 3 with venv and pip, and PyPI access; fix that and run \
             `cargo xtask setup` again"
        );
    }
    match installed() {
        freeze if ready(freeze.clone()) => {
            eprintln!("xtask: ok: localstripe {version} ({})", bin.display());
            Ok(bin)
        }
        freeze => bail!(
            "after installing localstripe, the venv at {} holds {freeze:?}, not {}",
            dir.display(),
            path.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_ignore_comments_case_and_order() {
        let file = "# comment\nlocalstripe==1.15.10\n\nAiohttp==3.14.5  # why\ntyping_extensions==4.16.0\n";
        let freeze = "typing-extensions==4.16.0\naiohttp==3.14.5\nlocalstripe==1.15.10\n";
        assert_eq!(pins(file), pins(freeze));
        assert_eq!(version(&pins(file)), Some("1.15.10"));
        assert_eq!(version(&pins("aiohttp==3.14.5")), None);
    }
}
