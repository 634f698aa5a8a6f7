//! Python tools from PyPI, each set in a venv of its own under the tools directory, holding
//! exactly the versions a requirements file of the repo pins (the tool and everything it
//! imports): localstripe (`tools/localstripe/requirements.txt`), and podman-compose with
//! kubernetes-validate (`tools/deploy/requirements.txt`). Idempotent: a venv whose `pip
//! freeze` equals the pins is kept. Nothing but PyPI packages is downloaded.

use crate::cmd;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The `name==version` lines of a requirements file, lower-cased and sorted (comments dropped).
pub fn pins(text: &str) -> Vec<String> {
    let mut pins: Vec<String> = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_ascii_lowercase().replace('_', "-"))
        .filter(|l| !l.is_empty())
        .collect();
    pins.sort();
    pins
}

/// The pinned version of `package` (lower case, `-` for `_`).
pub fn version<'a>(pins: &'a [String], package: &str) -> Option<&'a str> {
    pins.iter().find_map(|p| p.strip_prefix(package)?.strip_prefix("=="))
}

/// A venv holding the pins of `requirements` (relative to the workspace root), at
/// `<tools>/<dir_name>` where `dir_name` is made from the pins (`name(pins)`); installed when
/// missing or different. `what` names the tools in messages. Returns the venv's `bin/`.
pub fn ensure(
    root: &Path,
    tools: &Path,
    requirements: &str,
    what: &str,
    name: impl FnOnce(&[String]) -> Result<String>,
) -> Result<PathBuf> {
    let path = root.join(requirements);
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let wanted = pins(&text);
    let dir = tools.join(name(&wanted)?);
    let bin = dir.join("bin");
    let installed =
        || cmd::probe(&bin.join("pip"), &["freeze", "--all", "--exclude", "pip", "--exclude", "setuptools"]);
    let ready = |freeze: Option<String>| freeze.is_some_and(|f| pins(&f) == wanted);
    if ready(installed()) {
        eprintln!("xtask: ok: {what} ({})", dir.display());
        return Ok(bin);
    }
    eprintln!("xtask: {what} not installed as pinned at {}; installing", dir.display());
    let python = ["python3.11", "python3"].into_iter().find(|p| cmd::probe(Path::new(p), &["--version"]).is_some());
    let Some(python) = python else {
        bail!("{what} needs Python 3 with venv and pip (Debian: apt-get install -y python3 python3-venv)");
    };
    let mut venv = Command::new(python);
    venv.args(["-m", "venv", "--clear"]).arg(&dir).current_dir(root);
    // --no-deps: the file pins every dependency itself, so nothing unpinned comes along.
    let mut install = Command::new(bin.join("pip"));
    install
        .args(["install", "--no-input", "--disable-pip-version-check", "--no-deps", "-r"])
        .arg(&path)
        .current_dir(root);
    let steps = cmd::run(&mut venv).and_then(|()| cmd::run(&mut install));
    if let Err(e) = steps {
        bail!(
            "{e:#}\ninstalling {what} needs Python 3 with venv and pip, and PyPI access; fix that and run `cargo xtask setup` again"
        );
    }
    match installed() {
        freeze if ready(freeze.clone()) => {
            eprintln!("xtask: ok: {what} ({})", dir.display());
            Ok(bin)
        }
        freeze => {
            bail!("after installing {what}, the venv at {} holds {freeze:?}, not {}", dir.display(), path.display())
        }
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
        assert_eq!(version(&pins(file), "localstripe"), Some("1.15.10"));
        assert_eq!(version(&pins("aiohttp==3.14.5"), "localstripe"), None);
        assert_eq!(version(&pins("localstripe-extra==2"), "localstripe"), None);
    }

    /// The deploy tools' pins name both tools.
    #[test]
    fn the_deploy_tools_are_pinned() {
        let root = crate::workspace_root().unwrap();
        let text = std::fs::read_to_string(root.join("tools/deploy/requirements.txt")).unwrap();
        let pins = pins(&text);
        assert_eq!(version(&pins, "podman-compose"), Some("1.0.6"));
        assert_eq!(version(&pins, "kubernetes-validate"), Some("1.37.0"));
    }
}
