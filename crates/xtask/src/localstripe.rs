//! localstripe, the third-party Stripe emulator (PyPI) the API tests run the Stripe provider
//! against: installed from PyPI with pip into a venv of its own,
//! `<tools>/localstripe-<version>/`, exactly the versions `tools/localstripe/requirements.txt`
//! pins (localstripe and everything it imports); see `pyvenv.rs`.

use crate::pyvenv;
use anyhow::{Result, bail};
use std::path::{Path, PathBuf};

/// The pins, relative to the workspace root.
pub const REQUIREMENTS: &str = "tools/localstripe/requirements.txt";

/// Installs (when missing or different) and returns the `localstripe` executable.
pub fn ensure(root: &Path, tools: &Path) -> Result<PathBuf> {
    let bin =
        pyvenv::ensure(root, tools, REQUIREMENTS, "localstripe", |pins| match pyvenv::version(pins, "localstripe") {
            Some(version) => Ok(format!("localstripe-{version}")),
            None => bail!("{REQUIREMENTS} pins no localstripe==VERSION"),
        })?;
    Ok(bin.join("localstripe"))
}
