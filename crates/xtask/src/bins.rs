//! The binaries xtask starts, built by one `cargo build` per profile that is the same for every
//! command: `serve`, `chat`, `preview`, `conformance`, the browser tests, `bench-*`, the widget's
//! fallback step and `test`.
//!
//! Why always the whole set: cargo resolves features (and the debug info of crates used both at
//! build time and at run time) over what one invocation builds, so `-p giftgenius-server` alone,
//! `-p giftgenius-chat` alone and the two together compile different copies of the shared crates
//! (`cargo build --unit-graph`: after the chat's own debug build, 389 of the 544 units of the
//! browser tests' server-and-chat build were still to compile). One fixed
//! invocation compiles every crate once per profile; later commands find it fresh. The binaries
//! then run from the target directory directly instead of through `cargo run`, which would
//! resolve again for its one package.

use crate::{cmd, locked_in_ci};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// Every binary any command starts, with its package: (package, binary).
pub const SET: &[(&str, &str)] = &[
    ("giftgenius-server", SERVER),
    // The server starts its SANDBOX payment provider from next to its own binary.
    ("giftgenius-server", SANDBOX_PAY),
    ("giftgenius-chat", CHAT),
    // The widget crate's packer input (widget.rs), so xtask itself links no Leptos.
    ("giftgenius-widget", FALLBACK),
];

pub const SERVER: &str = "giftgenius-server";
pub const SANDBOX_PAY: &str = "giftgenius-sandbox-pay";
pub const CHAT: &str = "giftgenius-chat";
pub const FALLBACK: &str = "giftgenius-fallback";

/// Which of cargo's two profiles: `serve` and `chat` run optimized; the tests, the preview and
/// the widget's fallback step run the debug build (quicker to compile, and the one the tests use).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    Debug,
    Release,
}

impl Profile {
    /// The folder cargo puts this profile's binaries in, under the target directory.
    fn dir(self) -> &'static str {
        match self {
            Profile::Debug => "debug",
            Profile::Release => "release",
        }
    }
}

/// The built set of one profile: where each binary is.
#[derive(Debug)]
pub struct Bins {
    dir: PathBuf,
}

impl Bins {
    /// `name`'s path (one of [`SET`]).
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
    }
}

/// The arguments of the one `cargo build` for `profile`: every package and binary of [`SET`].
pub fn build_args(profile: Profile) -> Vec<&'static str> {
    let mut args = vec!["build"];
    if profile == Profile::Release {
        args.push("--release");
    }
    let mut packages: Vec<&str> = SET.iter().map(|(p, _)| *p).collect();
    packages.dedup();
    for p in packages {
        args.extend(["-p", p]);
    }
    for (_, bin) in SET {
        args.extend(["--bin", bin]);
    }
    args
}

/// Builds the whole set for `profile` (fresh after the first time) and says where it is.
pub fn build(root: &Path, profile: Profile) -> Result<Bins> {
    let mut build = cmd::cargo();
    build.args(build_args(profile)).current_dir(root);
    locked_in_ci(&mut build);
    cmd::run(&mut build)?;
    Ok(Bins { dir: target_dir(root).join(profile.dir()) })
}

/// `$CARGO_TARGET_DIR` (relative to the workspace root if relative), else `<root>/target`.
pub fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
        Some(d) => {
            let d = PathBuf::from(d);
            if d.is_absolute() { d } else { root.join(d) }
        }
        None => root.join("target"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_profiles_build_the_same_set_and_differ_only_by_release() {
        let debug = build_args(Profile::Debug);
        let release = build_args(Profile::Release);
        assert_eq!(debug[0], "build");
        assert_eq!(release[..2], ["build", "--release"]);
        assert_eq!(debug[1..], release[2..], "the same packages and binaries in both profiles");
        assert!(!debug.contains(&"--release"));
        for (package, bin) in SET {
            assert!(debug.windows(2).any(|w| w == ["-p", *package]), "{package} missing");
            assert!(debug.windows(2).any(|w| w == ["--bin", *bin]), "{bin} missing");
        }
        let packages = debug.iter().filter(|a| **a == "-p").count();
        assert_eq!(packages, 3, "each package once: {debug:?}");
    }

    /// The names are real: cargo's own metadata lists each binary under its package.
    #[test]
    fn every_binary_of_the_set_exists_in_its_package() {
        let root = crate::workspace_root().expect("workspace root");
        let out = cmd::cargo()
            .args(["metadata", "--no-deps", "--format-version", "1", "--offline"])
            .current_dir(&root)
            .output()
            .expect("cargo metadata runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
        for (package, bin) in SET {
            let pkg = meta["packages"]
                .as_array()
                .and_then(|ps| ps.iter().find(|p| p["name"] == *package))
                .unwrap_or_else(|| panic!("no package {package}"));
            let bins: Vec<&str> = pkg["targets"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|t| t["kind"].as_array().is_some_and(|k| k.iter().any(|k| k == "bin")))
                .filter_map(|t| t["name"].as_str())
                .collect();
            assert!(bins.contains(bin), "{package} has no binary {bin}: {bins:?}");
        }
    }

    #[test]
    fn binaries_are_found_under_the_profile_folder() {
        let bins = Bins { dir: PathBuf::from("/t/release") };
        let want = format!("/t/release/giftgenius-server{}", std::env::consts::EXE_SUFFIX);
        assert_eq!(bins.path(SERVER), PathBuf::from(want));
    }
}
