//! `cargo xtask kube`: the Kubernetes manifests of `deploy/kubernetes/` (issue 45), checked two
//! ways on a machine without a cluster.
//!
//! 1. Every manifest against the Kubernetes API schemas, offline, by pinned
//!    kubernetes-validate (`tools/deploy/requirements.txt`), strict (an unknown or misspelt
//!    field fails), for Kubernetes 1.30 (the oldest release still common) and 1.37 (the newest
//!    it ships). A manifest with a misspelt field must fail, so a validator that passes
//!    everything cannot pass here.
//! 2. The Deployment and the Service as written, under `podman kube play`, with the app image
//!    built by `image.rs`: only what a cluster would supply is the test's own: the ConfigMap
//!    and Secrets it references (PostgreSQL of the compose deployment, whose network the pod
//!    joins; localstripe on this machine as Stripe; the demo's single-user mode), the model's
//!    volume, and the port (podman 4.3 publishes a containerPort on the host at its own number,
//!    whatever the Service says: 18080 instead of 8000). The pod must become ready (its probes'
//!    paths answering 200) and answer MCP on that port, as the non-root, read-only, capability-less
//!    container the Deployment describes.

use crate::cluster::{self, Cluster, http};
use crate::image::{self, Engine};
use crate::{bins, cmd, localstripe, tools};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The Kubernetes releases the manifests are validated against.
pub const VERSIONS: [&str; 2] = ["1.30.0", "1.37.0"];
/// The podman network of the compose deployment, which the played pod joins.
const NETWORK: &str = "giftgenius_default";
/// Its gateway: this machine, as the pod sees it (compose.yaml's subnet).
const GATEWAY: &str = "10.89.45.1";
/// The model's volume (the claim's name in deployment.yaml: podman makes a volume of it).
const MODEL_VOLUME: &str = "giftgenius-model";
/// The Secrets the Deployment references (made podman secrets for the play, removed after).
const SECRETS: [&str; 3] = ["giftgenius-db", "giftgenius-stripe", "giftgenius-tokens"];
/// The port the played pod listens on and podman publishes on this machine. podman 4.3 publishes
/// every containerPort on the host at its own number (0.0.0.0), whatever the Service says, so the
/// test moves the server off 8000 (a developer's `cargo xtask serve`).
const PLAY_PORT: u16 = 18080;

/// Both checks (the cluster is started first if it is not up: the pod uses its PostgreSQL).
pub fn run(root: &Path) -> Result<()> {
    validate(root)?;
    let cluster = Cluster::prepare(root, &image::AppOptions::default())?;
    cluster.up()?;
    play(root, &cluster.engine)
}

/// The manifests of `deploy/kubernetes/`, sorted.
fn manifests(root: &Path) -> Result<Vec<PathBuf>> {
    let dir = root.join("deploy/kubernetes");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    Ok(files)
}

/// kubernetes-validate, strict, for each of [`VERSIONS`]; then the misspelt control.
pub fn validate(root: &Path) -> Result<()> {
    let validator = cluster::ensure_tools(root)?.join("kubernetes-validate");
    let files = manifests(root)?;
    if files.len() < 8 {
        bail!("deploy/kubernetes/ holds {} manifests; expected at least 8", files.len());
    }
    for version in VERSIONS {
        let mut check = Command::new(&validator);
        check.args(["--strict", "--kubernetes-version", version]).args(&files).current_dir(root);
        cmd::run(&mut check).with_context(|| format!("a manifest is not valid for Kubernetes {version}"))?;
    }
    // The control: the Deployment with one field misspelt must be refused.
    let deployment = std::fs::read_to_string(root.join("deploy/kubernetes/deployment.yaml"))?;
    let broken = deployment.replacen("  replicas: 3", "  replica: 3", 1);
    if broken == deployment {
        bail!("deployment.yaml has no `  replicas: 3` line for the validator's control");
    }
    let control = bins::target_dir(root).join("deploy/misspelt-deployment.yaml");
    std::fs::create_dir_all(control.parent().unwrap_or(Path::new(".")))?;
    std::fs::write(&control, broken)?;
    let refused = Command::new(&validator)
        .args(["--strict", "--quiet", "--kubernetes-version", VERSIONS[0]])
        .arg(&control)
        .output()
        .with_context(|| format!("running {}", validator.display()))?;
    if refused.status.success() {
        bail!("kubernetes-validate passed a Deployment with `replica:` misspelt; it would pass anything");
    }
    eprintln!(
        "xtask: {} manifests valid (strict) for Kubernetes {}; a misspelt field is refused",
        files.len(),
        VERSIONS.join(" and ")
    );
    Ok(())
}

/// localstripe on every address of this machine (the pod reaches it at the gateway), killed
/// on drop.
struct Stripe(Child);

impl Drop for Stripe {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The Deployment and Service under `podman kube play`, probed, then removed.
pub fn play(root: &Path, engine: &Engine) -> Result<()> {
    if !engine.is_podman() {
        bail!("`podman kube play` needs podman; docker is here instead: install podman");
    }
    let started = Instant::now();
    let app = image::app(root, engine, &image::AppOptions::default())?;
    fill_model_volume(engine)?;
    let stripe_bin = localstripe::ensure(root, &tools::tools_root()?)?;
    let stripe_port = free_port()?;
    let stripe = Stripe(
        Command::new(&stripe_bin)
            .args(["--port", &stripe_port.to_string(), "--from-scratch"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", stripe_bin.display()))?,
    );
    let secrets = cluster::secrets(root)?;
    // PostgreSQL by its address on the network: the pod's resolv.conf lists this machine's
    // nameserver after the network's, and musl asks both at once (compose.yaml's `dns`).
    let postgres = engine.output(&[
        "container",
        "inspect",
        "--format",
        &format!("{{{{(index .NetworkSettings.Networks \"{NETWORK}\").IPAddress}}}}"),
        "giftgenius_postgres_1",
    ])?;
    let db_url = std::fs::read_to_string(secrets.join("db_url"))?.replace("@postgres:", &format!("@{postgres}:"));
    let token_keys = std::fs::read_to_string(secrets.join("token_keys"))?;
    let kube = |name: &str| std::fs::read_to_string(root.join("deploy/kubernetes").join(name));
    let deployment = kube("deployment.yaml")?;
    let image_line = "image: ghcr.io/OWNER/giftgenius:0.1.0";
    if !deployment.contains(image_line) {
        bail!("deployment.yaml has no `{image_line}` line to point at the local image");
    }
    // One replica is enough to prove the pod spec; the image is the one just built.
    let deployment = deployment.replace(image_line, &format!("image: {}", app.reference)).replacen(
        "  replicas: 3",
        "  replicas: 1",
        1,
    );
    let deployment = deployment.replace("containerPort: 8000", &format!("containerPort: {PLAY_PORT}"));
    // podman 4.3 takes Secrets as podman secrets holding the Secret's YAML, not from the played
    // file, and writes each `data` value into its file as written (undecoded; `stringData` it
    // ignores): so the values go under `data` in clear, in files of root's deleted at once.
    let secrets_yaml = [
        ("giftgenius-db", vec![("db-url", db_url.trim().to_string())]),
        (
            "giftgenius-stripe",
            vec![
                ("secret-key", "sk_test_giftgenius_kube".to_string()),
                ("webhook-secret", "whsec_giftgenius_kube_0123456789abcdef".to_string()),
            ],
        ),
        ("giftgenius-tokens", vec![("confirmation-keys", token_keys.trim().to_string())]),
    ];
    let dir = bins::target_dir(root).join("deploy");
    for (name, entries) in secrets_yaml {
        let path = dir.join(format!("{name}.secret.yaml"));
        std::fs::write(&path, secret(name, &entries))?;
        let _ = engine.output(&["secret", "rm", name]);
        engine.output(&["secret", "create", name, &path.to_string_lossy()])?;
        std::fs::remove_file(&path)?;
    }
    // The Service as written (podman accepts it; see PLAY_PORT for what it publishes).
    let service = kube("service.yaml")?;
    let file = bins::target_dir(root).join("deploy/kube-play.yaml");
    std::fs::write(&file, format!("{}\n---\n{deployment}---\n{service}", config_map(stripe_port)))?;
    let file_arg = file.to_string_lossy().into_owned();
    let _ = engine.output(&["kube", "down", &file_arg]);
    let mut play = engine.command();
    play.args(["kube", "play", "--network", NETWORK, &file_arg]);
    cmd::run(&mut play)?;
    let result = probe(engine);
    let logs = engine.output(&["logs", "--tail", "20", "giftgenius-pod-0-server"]).unwrap_or_else(|e| format!("{e:#}"));
    let down = engine.output(&["kube", "down", &file_arg]);
    // The podman secrets hold the database's password: they go with the pod.
    for name in SECRETS {
        let _ = engine.output(&["secret", "rm", name]);
    }
    drop(stripe);
    if let Err(e) = result {
        bail!("{e:#}\nthe played pod's last log lines:\n{logs}");
    }
    down?;
    eprintln!("xtask: kube play: Deployment and Service ran and answered in {:.1?}", started.elapsed());
    Ok(())
}

/// Waits for the played pod to be ready, then checks it through the Service's port.
fn probe(engine: &Engine) -> Result<()> {
    let until = Instant::now() + Duration::from_secs(120);
    loop {
        let ready = http(PLAY_PORT, "GET", "/readyz", "").map(|(status, _)| status == 200).unwrap_or(false);
        if ready {
            break;
        }
        if Instant::now() > until {
            let _ = cmd::run(engine.command().args(["pod", "ps"]));
            bail!("the played pod was not ready on its published port {PLAY_PORT} within 120 s");
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    println!("{}", engine.output(&["pod", "ps", "--filter", "name=giftgenius-pod"])?);
    let inspect = engine.output(&[
        "container",
        "inspect",
        "--format",
        "user={{.Config.User}} read-only-root={{.HostConfig.ReadonlyRootfs}} caps-dropped={{.HostConfig.CapDrop}} \
         no-new-privileges={{.HostConfig.SecurityOpt}}",
        "giftgenius-pod-0-server",
    ])?;
    println!("kube play: server container: {inspect}");
    for path in ["/livez", "/readyz"] {
        let (status, body) = http(PLAY_PORT, "GET", path, "")?;
        println!("kube play: GET {path} on the published port → {status} {}", body.trim());
    }
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"xtask","version":"1"}}}"#;
    let (status, body) = http(PLAY_PORT, "POST", "/mcp", call)?;
    println!("kube play: POST /mcp initialize on the published port → {status}");
    if status != 200 || !body.contains("serverInfo") {
        bail!("initialize on the played pod answered {status}: {body}");
    }
    Ok(())
}

/// The ConfigMap the Deployment reads, for this test: the demo's single-user mode on the
/// Service's port, Stripe at localstripe.
fn config_map(stripe_port: u16) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: giftgenius-config\ndata:\n  \
         GIFTGENIUS_PORT: \"{PLAY_PORT}\"\n  GIFTGENIUS_PUBLIC_URL: http://127.0.0.1:{PLAY_PORT}\n  GIFTGENIUS_SINGLE_USER: \"true\"\n  \
         GIFTGENIUS_PAYMENTS: stripe\n  GIFTGENIUS_STRIPE_API_BASE: http://{GATEWAY}:{stripe_port}\n  \
         GIFTGENIUS_STRIPE_PUBLISHABLE_KEY: pk_test_giftgenius_kube\n"
    )
}

/// A Secret of `entries` as podman 4.3 reads one (values under `data`, not base64-encoded).
fn secret(name: &str, entries: &[(&str, String)]) -> String {
    let mut text = format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\ntype: Opaque\ndata:\n");
    for (key, value) in entries {
        text.push_str(&format!("  {key}: \"{value}\"\n"));
    }
    text
}

/// The model's volume, filled from the installed model when empty.
fn fill_model_volume(engine: &Engine) -> Result<()> {
    let model = tools::ensure_model()?;
    if engine.output(&["volume", "exists", MODEL_VOLUME]).is_err() {
        engine.output(&["volume", "create", MODEL_VOLUME])?;
    }
    let mount = engine.output(&["volume", "inspect", "--format", "{{.Mountpoint}}", MODEL_VOLUME])?;
    let mount = PathBuf::from(mount);
    for name in ["config.json", "tokenizer.json", "model.safetensors"] {
        let (from, to) = (model.join(name), mount.join(name));
        let same = std::fs::metadata(&to).is_ok_and(|m| std::fs::metadata(&from).is_ok_and(|f| f.len() == m.len()));
        if !same {
            std::fs::copy(&from, &to).with_context(|| format!("copying {} into the model volume", from.display()))?;
        }
    }
    Ok(())
}

fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind(("0.0.0.0", 0))?.local_addr()?.port())
}
