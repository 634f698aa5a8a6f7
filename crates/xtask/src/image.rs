//! `cargo xtask image`: the container image (issue 45), and the two images the compose
//! deployment needs beside it (PostgreSQL and HAProxy), all `FROM scratch`.
//!
//! No base image can be pulled here (no image registry is reachable), and the image should be
//! small anyway, so nothing is built inside a container: xtask builds the server and the sandbox
//! provider as static musl executables (`--profile image`, `--target x86_64-unknown-linux-musl`,
//! cached in the target directory like every build), copies them with the widget artifact and
//! Debian's CA bundle into a build context, and `deploy/Containerfile` only COPYs that context.
//! The built-in catalog is compiled into the server. Reproducible: the same flags that keep
//! build paths out of the widget (`--remap-path-prefix`, `widget::remap_flags`), and every
//! timestamp the image holds set to `SOURCE_DATE_EPOCH` (the last commit's time unless set), so
//! two builds of one commit have the same digest. An image whose inputs (the context's bytes,
//! the Containerfile, the labels) have not changed is reused, not rebuilt.
//!
//! The engine is podman or docker, whichever runs; with neither, Debian's podman and runc are
//! installed with apt-get. podman 4.3 as root here needs runc and explicit limits
//! (`setrlimit: operation not permitted` otherwise): every podman command xtask runs reads
//! [`containers_conf`], which sets both.

use crate::{bins, cmd, tools, widget};
use anyhow::{Context as _, Result, bail};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The musl target every image binary is built for.
pub const TARGET: &str = "x86_64-unknown-linux-musl";
/// The image's user: not root, no name needed (nothing in the image looks one up).
pub const UID: u32 = 10001;
/// The repository default for the image's name and tag.
pub const APP_REPOSITORY: &str = "localhost/giftgenius";
/// The labels' defaults: where the source lives, the MCP registry name (set your own).
pub const DEFAULT_SOURCE: &str = "https://github.com/OWNER/giftgenius";
pub const DEFAULT_SERVER_NAME: &str = "io.github.OWNER/giftgenius";
/// The label under which xtask records an image's inputs (see [`reuse`]).
const INPUTS_LABEL: &str = "dev.giftgenius.inputs";
/// The largest image issue 45 accepts.
pub const MAX_BYTES: u64 = 40_000_000;

/// The container engine: podman (preferred) or a docker whose engine answers.
#[derive(Debug, Clone)]
pub struct Engine {
    pub program: &'static str,
    conf: Option<PathBuf>,
}

impl Engine {
    /// A command of the engine, with xtask's containers.conf for podman.
    pub fn command(&self) -> Command {
        let mut command = Command::new(self.program);
        if let Some(conf) = &self.conf {
            command.env("CONTAINERS_CONF", conf);
        }
        command
    }

    /// The engine's stdout for `args`, or an error naming the command and its stderr.
    pub fn output(&self, args: &[&str]) -> Result<String> {
        let out = self.command().args(args).output().with_context(|| format!("running {} {args:?}", self.program))?;
        if !out.status.success() {
            bail!("`{} {}` failed: {}", self.program, args.join(" "), String::from_utf8_lossy(&out.stderr).trim());
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    pub fn is_podman(&self) -> bool {
        self.program == "podman"
    }

    /// The containers.conf this engine's commands read (podman only).
    pub fn conf(&self) -> Option<&Path> {
        self.conf.as_deref()
    }
}

/// podman's settings for this machine: runc (crun fails to set limits here) and limits under
/// the machine's hard ones. Written under the target directory; podman, podman-compose and
/// `podman kube play` all read it through `CONTAINERS_CONF`.
fn containers_conf(root: &Path) -> Result<PathBuf> {
    let dir = bins::target_dir(root).join("deploy");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join("containers.conf");
    let text = "# Written by cargo xtask (crates/xtask/src/image.rs): runc, and limits under the machine's hard ones.\n\
                [containers]\ndefault_ulimits = [\"nofile=1024:1024\", \"nproc=1024:1024\"]\n\n[engine]\nruntime = \"runc\"\n";
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text) {
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(path)
}

/// podman if it runs, else docker if its engine answers, else Debian's podman and runc
/// installed with apt-get. Fails with what to install when none can be had.
pub fn ensure_engine(root: &Path) -> Result<Engine> {
    let podman = || cmd::probe(Path::new("podman"), &["--version"]);
    if podman().is_none() && cmd::probe(Path::new("docker"), &["info", "--format", "{{.ServerVersion}}"]).is_some() {
        eprintln!("xtask: ok: docker (its engine answers)");
        return Ok(Engine { program: "docker", conf: None });
    }
    // Two packages Debian's podman does not depend on: the DNS plugin, without which its CNI
    // networks name no container (the replicas reach `postgres` by name), and catatonit, the
    // pause process of the pod `podman kube play` makes.
    const PACKAGES: [&str; 4] = ["podman", "runc", "golang-github-containernetworking-plugin-dnsname", "catatonit"];
    tools::ensure_debs(&PACKAGES).with_context(|| {
        format!(
            "the container engine: neither podman nor a running docker engine is here, and Debian's {} could not \
             be installed (run `apt-get install -y {}` as root)",
            PACKAGES.join(", "),
            PACKAGES.join(" ")
        )
    })?;
    let Some(version) = podman() else { bail!("podman was installed but `podman --version` does not run") };
    let engine = Engine { program: "podman", conf: Some(containers_conf(root)?) };
    engine.output(&["info", "--format", "{{.Host.OCIRuntime.Name}}"]).context(
        "podman is installed but cannot run here (as root, with runc); the image and deployment tests need it",
    )?;
    eprintln!("xtask: ok: {version} (runtime runc)");
    Ok(engine)
}

/// The server and the sandbox provider as static musl executables, `--profile image`.
fn static_binaries(root: &Path) -> Result<[PathBuf; 2]> {
    tools::ensure_debs(&["musl-tools"]).context("the static build needs Debian's musl-tools (musl-gcc, for SQLite)")?;
    tools::ensure_rust_target(root, TARGET)?;
    let mut build = cmd::cargo();
    build.args(["build", "--profile", "image", "--target", TARGET, "-p", "giftgenius-server"]);
    build.args(["--bin", bins::SERVER, "--bin", bins::SANDBOX_PAY]).current_dir(root);
    // With --target these reach only the target's crates, so the host build scripts stay shared.
    build.env("CARGO_ENCODED_RUSTFLAGS", widget::remap_flags(root)?);
    crate::locked_in_ci(&mut build);
    cmd::run(&mut build)?;
    let dir = bins::target_dir(root).join(TARGET).join("image");
    let paths = [dir.join(bins::SERVER), dir.join(bins::SANDBOX_PAY)];
    for path in &paths {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        widget::check_no_build_paths(root, &bytes).with_context(|| format!("in {}", path.display()))?;
    }
    Ok(paths)
}

/// Debian's CA bundle (package ca-certificates), for the server's HTTPS clients (Stripe, OIDC,
/// webhooks, OTLP).
fn ca_bundle() -> Result<PathBuf> {
    tools::ensure_debs(&["ca-certificates"])?;
    let bundle = PathBuf::from("/etc/ssl/certs/ca-certificates.crt");
    if !bundle.is_file() {
        bail!("{} is missing although ca-certificates is installed (run update-ca-certificates)", bundle.display());
    }
    Ok(bundle)
}

/// `SOURCE_DATE_EPOCH` if set, else the last commit's time: every timestamp in the image.
pub fn source_date_epoch(root: &Path) -> Result<u64> {
    if let Some(epoch) = std::env::var("SOURCE_DATE_EPOCH").ok().filter(|v| !v.is_empty()) {
        return epoch.parse().with_context(|| format!("SOURCE_DATE_EPOCH={epoch:?} is not a number of seconds"));
    }
    let out = Command::new("git").args(["log", "-1", "--format=%ct"]).current_dir(root).output();
    match out {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            text.trim().parse().with_context(|| format!("git log printed {text:?}, not a time"))
        }
        _ => bail!("no SOURCE_DATE_EPOCH and no git history to take the image's time from; set SOURCE_DATE_EPOCH"),
    }
}

/// A build context: the files to COPY (`rootfs/…`), laid out as they appear in the image.
pub struct Context {
    pub dir: PathBuf,
    files: Vec<(PathBuf, String, u32)>,
}

impl Context {
    /// An empty context at `dir` (emptied first).
    pub fn new(dir: PathBuf) -> Result<Context> {
        if dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| format!("emptying {}", dir.display()))?;
        }
        std::fs::create_dir_all(dir.join("rootfs")).with_context(|| format!("creating {}", dir.display()))?;
        Ok(Context { dir, files: Vec::new() })
    }

    /// Copies `from` to `to` (an absolute path in the image) with `mode`.
    pub fn copy(&mut self, from: &Path, to: &str, mode: u32) -> Result<()> {
        let bytes = std::fs::read(from).with_context(|| format!("reading {}", from.display()))?;
        self.write(to, &bytes, mode)
    }

    /// Writes `bytes` to `to` (an absolute path in the image) with `mode`.
    pub fn write(&mut self, to: &str, bytes: &[u8], mode: u32) -> Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let path = self.dir.join("rootfs").join(to.trim_start_matches('/'));
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))?;
        self.files.push((path, to.to_string(), mode));
        Ok(())
    }

    /// A directory of the image under rootfs/ (`to`), or, with a relative `to`, an empty
    /// folder beside rootfs/ that the Containerfile copies with an owner (`COPY --chown`).
    pub fn dir(&mut self, to: &str) -> Result<()> {
        let path = match to.strip_prefix('/') {
            Some(inside) => self.dir.join("rootfs").join(inside),
            None => self.dir.join(to),
        };
        std::fs::create_dir_all(&path).with_context(|| format!("creating {}", path.display()))?;
        self.files.push((path, format!("{to}/"), 0o755));
        Ok(())
    }

    /// SHA-256 over every file's image path, mode and bytes, and `extra` (Containerfile, labels).
    pub fn digest(&self, extra: &[&[u8]]) -> Result<String> {
        let mut files: Vec<_> = self.files.iter().collect();
        files.sort_by(|a, b| a.1.cmp(&b.1));
        let mut hash = Sha256::new();
        for (path, to, mode) in files {
            hash.update(format!("{to}\0{mode:o}\0").as_bytes());
            if !to.ends_with('/') {
                hash.update(std::fs::read(path).with_context(|| format!("reading {}", path.display()))?);
            }
            hash.update([0]);
        }
        for part in extra {
            hash.update(part);
            hash.update([0]);
        }
        Ok(hex(&hash.finalize()))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What `image` built (or reused): its reference and what the engine says about it.
#[derive(Debug, Clone)]
pub struct Built {
    pub reference: String,
    pub id: String,
    pub digest: String,
    pub size: u64,
    pub layers: usize,
    pub reused: bool,
}

/// The labels and name of the app image: `cargo xtask image` flags, with defaults.
#[derive(Debug, Clone)]
pub struct AppOptions {
    pub tag: Option<String>,
    pub source: String,
    pub server_name: String,
}

impl Default for AppOptions {
    /// What `cargo xtask image` uses without flags (and `cluster`, `kube`, `test` always).
    fn default() -> Self {
        AppOptions { tag: None, source: DEFAULT_SOURCE.into(), server_name: DEFAULT_SERVER_NAME.into() }
    }
}

/// Builds (or reuses) the app image and prints its size, digest and layers.
pub fn app(root: &Path, engine: &Engine, options: &AppOptions) -> Result<Built> {
    let html = widget::build_if_changed(root)?;
    let [server, pay] = static_binaries(root)?;
    let version = crate_version(root)?;
    let reference = options.tag.clone().unwrap_or_else(|| format!("{APP_REPOSITORY}:{version}"));
    let mut context = Context::new(bins::target_dir(root).join("deploy/context/app"))?;
    context.copy(&server, "/usr/local/bin/giftgenius-server", 0o555)?;
    context.copy(&pay, "/usr/local/bin/giftgenius-sandbox-pay", 0o555)?;
    context.copy(&html, "/usr/local/share/giftgenius/giftgenius-widget.html", 0o444)?;
    context.copy(&ca_bundle()?, "/etc/ssl/certs/ca-certificates.crt", 0o444)?;
    context.dir("data")?;
    let epoch = source_date_epoch(root)?;
    let args = [
        ("VERSION", version),
        ("SOURCE", options.source.clone()),
        ("SERVER_NAME", options.server_name.clone()),
        ("CREATED", rfc3339(epoch)),
    ];
    let built = build(engine, &context, &root.join("deploy/Containerfile"), &reference, &args, epoch)?;
    println!(
        "image {}: {} bytes ({:.1} MB), {} layer{}, digest {}, id {}{}",
        built.reference,
        built.size,
        built.size as f64 / 1e6,
        built.layers,
        if built.layers == 1 { "" } else { "s" },
        built.digest,
        built.id,
        if built.reused { " (inputs unchanged: reused)" } else { "" }
    );
    if built.size > MAX_BYTES {
        bail!("the image is {} bytes, over its budget of {MAX_BYTES}", built.size);
    }
    Ok(built)
}

/// Builds `reference` from `context` with `containerfile` unless an image of that name already
/// holds these inputs; then reports it.
pub fn build(
    engine: &Engine,
    context: &Context,
    containerfile: &Path,
    reference: &str,
    args: &[(&str, String)],
    epoch: u64,
) -> Result<Built> {
    let file = std::fs::read(containerfile).with_context(|| format!("reading {}", containerfile.display()))?;
    let arg_text: String = args.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
    let inputs = context.digest(&[&file, arg_text.as_bytes(), epoch.to_string().as_bytes()])?;
    let reused = reuse(engine, reference, &inputs);
    if !reused {
        let mut build = engine.command();
        build.arg("build").arg("--file").arg(containerfile).args(["--tag", reference]);
        build.args(["--label", &format!("{INPUTS_LABEL}={inputs}")]);
        for (k, v) in args {
            build.args(["--build-arg", &format!("{k}={v}")]);
        }
        if engine.is_podman() {
            // Every timestamp in the layers and the config. No layer cache: a cached step of an
            // earlier commit keeps that commit's time and intermediate ids, which the history
            // names (seen: after a merge, the first build's digest differed from the second's).
            let epoch = epoch.to_string();
            build.args(["--timestamp", &epoch, "--no-cache", "--format", "oci", "--pull=never"]);
        } else {
            build.args(["--build-arg", &format!("SOURCE_DATE_EPOCH={epoch}")]);
            build.args(["--output", &format!("type=docker,name={reference},rewrite-timestamp=true")]);
        }
        build.arg(&context.dir);
        cmd::run(&mut build)?;
    }
    inspect(engine, reference, reused)
}

/// Whether `reference` exists and was built from `inputs`.
fn reuse(engine: &Engine, reference: &str, inputs: &str) -> bool {
    let format = format!("{{{{index .Labels \"{INPUTS_LABEL}\"}}}}");
    engine.output(&["image", "inspect", "--format", &format, reference]).is_ok_and(|label| label == inputs)
}

/// The image's id, digest (of its manifest), size and layer count.
pub fn inspect(engine: &Engine, reference: &str, reused: bool) -> Result<Built> {
    let line = engine.output(&[
        "image",
        "inspect",
        "--format",
        "{{.Id}} {{.Digest}} {{.Size}} {{len .RootFS.Layers}}",
        reference,
    ])?;
    let parts: Vec<&str> = line.split_whitespace().collect();
    let [id, digest, size, layers] = parts[..] else { bail!("unexpected image inspect output {line:?}") };
    Ok(Built {
        reference: reference.to_string(),
        id: id.to_string(),
        digest: digest.to_string(),
        size: size.parse().with_context(|| format!("size {size:?}"))?,
        layers: layers.parse().with_context(|| format!("layers {layers:?}"))?,
        reused,
    })
}

/// The workspace's version (`[workspace.package] version`).
pub fn crate_version(root: &Path) -> Result<String> {
    let text = std::fs::read_to_string(root.join("Cargo.toml"))?;
    let mut in_package = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[workspace.package]";
        } else if in_package && let Some(v) = line.strip_prefix("version") {
            return Ok(v.trim_start_matches([' ', '=']).trim().trim_matches('"').to_string());
        }
    }
    bail!("Cargo.toml has no [workspace.package] version")
}

/// Seconds since the epoch as an RFC 3339 UTC time (the OCI `created` label).
pub fn rfc3339(epoch: u64) -> String {
    let days = (epoch / 86_400) as i64;
    let secs = epoch % 86_400;
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", secs / 3600, secs / 60 % 60, secs % 60)
}

/// A program from a Debian package with every shared library it loads (`ldd`), and the
/// dynamic loader: what a `FROM scratch` image needs to run it. Libraries keep their paths.
pub fn copy_with_libraries(context: &mut Context, program: &Path, to: &str) -> Result<()> {
    context.copy(program, to, 0o555)?;
    for library in shared_libraries(program)? {
        let to = library.to_string_lossy().into_owned();
        // Executable: the dynamic loader among them runs as a program.
        if !context.files.iter().any(|(_, t, _)| *t == to) {
            context.copy(&library, &to, 0o555)?;
        }
    }
    Ok(())
}

/// The absolute paths `ldd` resolves for `program` (the loader included).
fn shared_libraries(program: &Path) -> Result<Vec<PathBuf>> {
    let out = Command::new("ldd").arg(program).output().with_context(|| format!("ldd {}", program.display()))?;
    if !out.status.success() {
        bail!("ldd {} failed: {}", program.display(), String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().find(|w| w.starts_with('/')).map(PathBuf::from))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_796_515_200 + 3_723), "2026-12-06T01:02:03Z");
    }

    #[test]
    fn the_version_is_the_workspace_s() {
        let root = crate::workspace_root().unwrap();
        assert_eq!(crate_version(&root).unwrap(), env!("CARGO_PKG_VERSION"));
    }

    #[test]
    fn the_inputs_digest_changes_with_a_byte_a_mode_or_a_label_and_not_with_order() {
        let dir = tempfile_dir("digest");
        let mut a = Context::new(dir.join("a")).unwrap();
        a.write("/x", b"1", 0o444).unwrap();
        a.write("/y", b"2", 0o444).unwrap();
        let mut b = Context::new(dir.join("b")).unwrap();
        b.write("/y", b"2", 0o444).unwrap();
        b.write("/x", b"1", 0o444).unwrap();
        assert_eq!(a.digest(&[b"l"]).unwrap(), b.digest(&[b"l"]).unwrap());
        assert_ne!(a.digest(&[b"l"]).unwrap(), a.digest(&[b"m"]).unwrap());
        let mut c = Context::new(dir.join("c")).unwrap();
        c.write("/x", b"1", 0o555).unwrap();
        c.write("/y", b"2", 0o444).unwrap();
        assert_ne!(a.digest(&[]).unwrap(), c.digest(&[]).unwrap());
        std::fs::remove_dir_all(dir).unwrap();
    }

    fn tempfile_dir(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("xtask-image-{name}-{}", std::process::id()))
    }
}
