//! `cargo xtask widget`: trunk builds the wasm widget, then we pack it into one HTML file.

use crate::pack;
use crate::tools::{self, Tools, WASM_OPT_PIN};
use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The binary that trunk builds (index.html's `data-bin`), hence its output file names.
const BIN: &str = "giftgenius-widget";
/// Trunk's output directory (Trunk.toml `[build] dist`).
const TRUNK_DIST: &str = "dist/trunk";
pub const ARTIFACT: &str = "dist/giftgenius-widget.html";

/// Next to the artifact: a hash of everything it was built from, and the artifact's own hash.
const STAMP: &str = "dist/giftgenius-widget.html.inputs";

/// Where the widget crate's `giftgenius-fallback` binary writes the fallback runtime and its
/// data for the packer (see [`fallback_input`]).
const FALLBACK_FILE: &str = "dist/giftgenius-fallback.json";

/// What the artifact is made from (files, or directories taken whole): the widget and contract
/// crates' sources, trunk's entry and config, the workspace manifest (its profiles shape the
/// wasm) and lockfile, the toolchain pin, and the packer. Tests are left out on purpose.
const INPUTS: &[&str] = &[
    "widget/Cargo.toml",
    "widget/src",
    "widget/runtime",
    "widget/style.css",
    "crates/giftgenius-types/Cargo.toml",
    "crates/giftgenius-types/src",
    "index.html",
    "Trunk.toml",
    "Cargo.toml",
    "Cargo.lock",
    "rust-toolchain.toml",
    ".cargo/config.toml",
    "crates/xtask/Cargo.toml",
    "crates/xtask/src/pack.rs",
    "crates/xtask/src/compact.rs",
    "crates/xtask/src/widget.rs",
];

/// Always builds and packs the widget (trunk, then the packer); returns the packed HTML's path.
pub fn build(root: &Path) -> Result<PathBuf> {
    // Hashed before the build: a file edited during it makes the next run build again.
    let inputs = inputs_hash(root)?;
    let tools = tools::ensure_build_tools(root)?;
    trunk_build(root, &tools)?;
    let fallback = fallback_input(root)?;
    let dist = root.join(TRUNK_DIST);
    let wasm_path = dist.join(format!("{BIN}_bg.wasm"));
    let wasm = std::fs::read(&wasm_path).with_context(|| format!("reading {}", wasm_path.display()))?;
    check_no_build_paths(root, &wasm)?;
    let out = pack_dist(root, &dist, &wasm, &fallback)?;
    let artifact = std::fs::read(&out).with_context(|| format!("reading {}", out.display()))?;
    write_atomically(&root.join(STAMP), stamp_text(&inputs, &artifact).as_bytes())?;
    Ok(out)
}

/// Like [`build`], but keeps the artifact when nothing it is made from changed since it was
/// built (trunk alone takes ~9 s even then): what `serve`, `preview` and the tests use.
pub fn build_if_changed(root: &Path) -> Result<PathBuf> {
    let out = root.join(ARTIFACT);
    let inputs = inputs_hash(root)?;
    let stamp = std::fs::read_to_string(root.join(STAMP)).ok();
    let artifact = std::fs::read(&out).ok();
    match (stamp, artifact) {
        (Some(stamp), Some(artifact)) if stamp == stamp_text(&inputs, &artifact) => {
            eprintln!("xtask: widget up to date ({}; its inputs are unchanged)", out.display());
            Ok(out)
        }
        _ => build(root),
    }
}

/// The stamp names the artifact's hash too, so a deleted or edited artifact is rebuilt.
fn stamp_text(inputs: &str, artifact: &[u8]) -> String {
    format!("inputs {inputs}\nartifact {}\n", pack::sha256_hex(artifact))
}

/// SHA-256 over the [`INPUTS`] (relative path and contents of every file, in a fixed order),
/// the pinned tool versions and the wasm32 build flags.
fn inputs_hash(root: &Path) -> Result<String> {
    let mut files = Vec::new();
    for rel in INPUTS {
        collect_files(root, Path::new(rel), &mut files)?;
    }
    files.sort();
    let mut h = Sha256::new();
    for rel in &files {
        let path = root.join(rel);
        h.update(rel.to_string_lossy().as_bytes());
        match std::fs::read(&path) {
            Ok(bytes) => {
                h.update((bytes.len() as u64).to_le_bytes());
                h.update(&bytes);
            }
            // A listed file that does not exist (.cargo/config.toml is optional) counts as such.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => h.update(b"\0missing"),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }
    let wbg = tools::wasm_bindgen_version(root)?;
    h.update(
        format!(
            "\0trunk {}\0wasm-bindgen {wbg}\0binaryen {} {WASM_OPT_PIN}\0",
            tools::TRUNK_VERSION,
            tools::BINARYEN_VERSION
        )
        .as_bytes(),
    );
    for (k, v) in wasm_build_env(root)? {
        h.update(k.as_bytes());
        h.update(v.as_encoded_bytes());
    }
    Ok(format!("{:x}", h.finalize()))
}

/// `rel` itself if it is a file (or missing), else every file below it.
fn collect_files(root: &Path, rel: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let path = root.join(rel);
    if !path.is_dir() {
        files.push(rel.to_path_buf());
        return Ok(());
    }
    for entry in std::fs::read_dir(&path).with_context(|| format!("listing {}", path.display()))? {
        let entry = entry.with_context(|| format!("listing {}", path.display()))?;
        collect_files(root, &rel.join(entry.file_name()), files)?;
    }
    Ok(())
}

/// Env for every wasm32 cargo build (trunk's and the types check), so they share one set of
/// flags: differing RUSTFLAGS would make the two rebuild each other's dependencies.
pub fn wasm_build_env(root: &Path) -> Result<Vec<(&'static str, OsString)>> {
    Ok(vec![("CARGO_ENCODED_RUSTFLAGS", remap_flags(root)?)])
}

/// `--remap-path-prefix` for every absolute directory that can end up in the wasm (panic
/// locations, `file!()`): the repo, cargo's registry, rustup's std sources and the target dir.
/// Without it the artifact leaks the builder's paths and differs between machines.
pub(crate) fn remap_flags(root: &Path) -> Result<OsString> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let env_dir = |var: &str, default: &str| {
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(default)))
    };
    let target_dir = std::env::var_os("CARGO_TARGET_DIR").filter(|v| !v.is_empty()).map(|d| {
        let d = PathBuf::from(d);
        if d.is_absolute() { d } else { root.join(d) }
    });
    let mut maps: Vec<(PathBuf, &str)> = Vec::new();
    // Cargo hands rustc workspace sources as relative paths, so the repo only reaches the wasm
    // through a target dir inside it (build-script OUT_DIRs). Remapping the repo only then keeps
    // the flags, and so CI's warm cache, independent of where the clone lives; the leak check
    // below proves no path got through either way.
    if target_dir.as_ref().is_none_or(|d| d.starts_with(root)) {
        maps.push((root.to_path_buf(), "/giftgenius"));
    }
    if let Some(d) = env_dir("CARGO_HOME", ".cargo") {
        maps.push((d, "/cargo"));
    }
    if let Some(d) = env_dir("RUSTUP_HOME", ".rustup") {
        maps.push((d, "/rustup"));
    }
    // Last match wins in rustc, so the target dir (maybe inside the repo) comes last.
    if let Some(d) = target_dir {
        maps.push((d, "/target"));
    }
    // CARGO_ENCODED_RUSTFLAGS separates flags with 0x1f, so paths with spaces survive.
    let mut flags = OsString::new();
    for (i, (from, to)) in maps.iter().enumerate() {
        if i > 0 {
            flags.push("\u{1f}");
        }
        let from = from.to_str().with_context(|| format!("non-UTF-8 path {}", from.display()))?;
        flags.push(format!("--remap-path-prefix={from}={to}"));
    }
    Ok(flags)
}

fn trunk_build(root: &Path, tools: &Tools) -> Result<()> {
    // `offline = true` makes trunk run `cargo build --offline`, which cannot download a crate
    // that was just added to Cargo.lock; fetching first keeps that a non-event.
    let mut fetch = crate::cmd::cargo();
    fetch.arg("fetch").current_dir(root);
    crate::locked_in_ci(&mut fetch);
    crate::cmd::run(&mut fetch)?;

    // Our tool directories first, so trunk's `which` finds exactly these versions.
    let mut path = tools.path_dirs.clone();
    path.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    let path = std::env::join_paths(path).context("PATH contains an unusable directory")?;
    let mut trunk = Command::new(&tools.trunk);
    trunk
        .args(["build", "--release"])
        .current_dir(root)
        .env("PATH", path)
        // Env pins override Trunk.toml; Cargo.lock stays the one source of the bindgen version.
        .env("TRUNK_TOOLS_WASM_BINDGEN", &tools.wasm_bindgen_version)
        .env("TRUNK_TOOLS_WASM_OPT", WASM_OPT_PIN)
        .env("TRUNK_OFFLINE", "true")
        // CI has no terminal; keep trunk's log plain.
        .env("NO_COLOR", "true");
    for (k, v) in wasm_build_env(root)? {
        trunk.env(k, v);
    }
    crate::cmd::run(&mut trunk)
}

/// The fallback runtime and its data come from the widget crate, which renders markup with
/// Leptos natively: its `giftgenius-fallback` binary writes them to [`FALLBACK_FILE`], so xtask
/// links neither and starts without compiling Leptos. The debug set (`bins.rs`), like the tests':
/// whatever command builds the widget, the fallback's bytes come from the same build.
fn fallback_input(root: &Path) -> Result<pack::Fallback> {
    let out = root.join(FALLBACK_FILE);
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let bins = crate::bins::build(root, crate::bins::Profile::Debug)?;
    let mut run = Command::new(bins.path(crate::bins::FALLBACK));
    run.current_dir(root).arg(&out);
    crate::cmd::run(&mut run)?;
    let text = std::fs::read_to_string(&out).with_context(|| format!("reading {}", out.display()))?;
    pack::Fallback::from_json(&text).with_context(|| format!("reading {}", out.display()))
}

/// The remap flags should leave no absolute build path in the wasm; prove it on every build.
pub(crate) fn check_no_build_paths(root: &Path, wasm: &[u8]) -> Result<()> {
    let mut needles: Vec<String> = vec![root.display().to_string()];
    // `$HOME/` catches ~/.cargo, ~/.rustup and a target dir under home; skip a bare `/` home.
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from).filter(|h| h.components().count() > 1) {
        needles.push(format!("{}/", home.display()));
    }
    for needle in needles {
        if let Some(at) = find(wasm, needle.as_bytes()) {
            let end = (at + 120).min(wasm.len());
            bail!(
                "the build output contains the build path `{needle}` (at byte {at}: {:?}); a --remap-path-prefix is missing",
                String::from_utf8_lossy(&wasm[at..end])
            );
        }
    }
    Ok(())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Reads trunk's dist, packs it, writes the artifact and its `.sha256`, prints sizes.
fn pack_dist(root: &Path, dist: &Path, wasm: &[u8], fallback: &pack::Fallback) -> Result<PathBuf> {
    if dist.join("snippets").exists() {
        bail!("{} has JS snippets; the packer cannot inline those yet", dist.display());
    }
    let glue_path = dist.join(format!("{BIN}.js"));
    let glue = std::fs::read_to_string(&glue_path).with_context(|| format!("reading {}", glue_path.display()))?;
    // Sorted so the order (and thus the bytes) never depends on the file system.
    let mut css_paths: Vec<PathBuf> = std::fs::read_dir(dist)
        .with_context(|| format!("listing {}", dist.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "css"))
        .collect();
    css_paths.sort();
    let css = css_paths
        .iter()
        .map(|p| std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display())))
        .collect::<Result<Vec<_>>>()?;

    let packed = pack::pack(&pack::Inputs { css: &css, glue_js: &glue, wasm, fallback })
        .with_context(|| format!("packing {}", dist.display()))?;
    let out = root.join(ARTIFACT);
    write_atomically(&out, packed.html.as_bytes())?;
    let hex = pack::sha256_hex(packed.html.as_bytes());
    let sha_path = root.join(format!("{ARTIFACT}.sha256"));
    write_atomically(&sha_path, format!("{hex}\n").as_bytes())?;

    let sizes = crate::budget::Sizes::of(packed.html.as_bytes())?;
    let css_len: usize = css.iter().map(String::len).sum();
    eprintln!(
        "xtask: packed {} from {css_len} bytes css ({} files), {} bytes js glue, {} bytes wasm ({} deflated, {} gzip -9 alone)",
        out.display(),
        css_paths.len(),
        glue.len(),
        wasm.len(),
        packed.wasm_deflated,
        pack::gzip_len(wasm)?,
    );
    eprintln!(
        "xtask:   size: {} bytes raw ({:.1} KiB), {} bytes gzip -9 ({:.1} KiB)",
        sizes.raw,
        kib(sizes.raw),
        sizes.gzip,
        kib(sizes.gzip)
    );
    // Printed, not enforced, here: `cargo xtask test` fails over the budget.
    match crate::budget::load(root) {
        Ok(budget) => {
            eprintln!("xtask:   budget ({}): {}", crate::budget::FILE, crate::budget::describe(sizes, budget))
        }
        Err(e) => eprintln!("xtask:   budget: {e:#}"),
    }
    eprintln!("xtask:   sha256: {hex}");
    eprintln!("xtask:   CSP script-src hashes: {}", packed.script_hashes.join(" "));
    Ok(out)
}

fn kib(n: usize) -> f64 {
    n as f64 / 1024.0
}

/// Writes via a temp file + rename so a running server never reads a half-written artifact.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().context("artifact path has no parent")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch workspace with the few files the hash reads.
    fn scratch(name: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("xtask-stamp-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("widget/src")).unwrap();
        std::fs::write(root.join("Cargo.lock"), "[[package]]\nname = \"wasm-bindgen\"\nversion = \"0.2.130\"\n")
            .unwrap();
        std::fs::write(root.join("widget/src/lib.rs"), "pub fn a() {}\n").unwrap();
        std::fs::write(root.join("index.html"), "<html></html>\n").unwrap();
        root
    }

    #[test]
    fn the_inputs_hash_follows_every_source_change() {
        let root = scratch("inputs");
        let first = inputs_hash(&root).unwrap();
        assert_eq!(inputs_hash(&root).unwrap(), first, "stable while nothing changes");

        std::fs::write(root.join("widget/src/lib.rs"), "pub fn b() {}\n").unwrap();
        let edited = inputs_hash(&root).unwrap();
        assert_ne!(edited, first, "an edited source");

        std::fs::create_dir_all(root.join("widget/runtime")).unwrap();
        std::fs::write(root.join("widget/runtime/fallback.js"), "(function () {})();\n").unwrap();
        let added = inputs_hash(&root).unwrap();
        assert_ne!(added, edited, "a new file in a listed directory");

        std::fs::write(root.join("Cargo.lock"), "[[package]]\nname = \"wasm-bindgen\"\nversion = \"0.2.131\"\n")
            .unwrap();
        assert_ne!(inputs_hash(&root).unwrap(), added, "another wasm-bindgen");

        // Files outside the inputs (tests, the artifact itself) do not count.
        let now = inputs_hash(&root).unwrap();
        std::fs::create_dir_all(root.join("widget/tests")).unwrap();
        std::fs::write(root.join("widget/tests/t.rs"), "#[test] fn t() {}\n").unwrap();
        std::fs::create_dir_all(root.join("dist")).unwrap();
        std::fs::write(root.join(ARTIFACT), "<html>packed</html>").unwrap();
        assert_eq!(inputs_hash(&root).unwrap(), now);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn an_up_to_date_artifact_is_kept_without_tools() {
        let root = scratch("fresh");
        std::fs::create_dir_all(root.join("dist")).unwrap();
        std::fs::write(root.join(ARTIFACT), "<html>packed</html>").unwrap();
        let stamp = stamp_text(&inputs_hash(&root).unwrap(), b"<html>packed</html>");
        std::fs::write(root.join(STAMP), &stamp).unwrap();
        // No trunk, no Trunk.toml here: a build would fail, so Ok means it was skipped.
        assert_eq!(build_if_changed(&root).unwrap(), root.join(ARTIFACT));
        // An edited artifact no longer matches its stamp.
        assert_ne!(stamp_text(&inputs_hash(&root).unwrap(), b"<html>edited</html>"), stamp);
        let _ = std::fs::remove_dir_all(&root);
    }
}
