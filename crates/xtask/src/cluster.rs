//! `cargo xtask cluster up|down|status|chaos [--long]`: `deploy/compose.yaml` on this machine
//! with podman and pinned podman-compose (issue 45).
//!
//! `up` builds (or reuses) the three images, all FROM scratch: the app's (`image.rs`),
//! PostgreSQL's and HAProxy's from the files of Debian's packages (nothing can be pulled here);
//! writes the secrets (fresh random ones on the first `up`, one file each, readable only by the
//! user id of the container that reads it); then starts PostgreSQL, waits for it, runs the
//! migration step to its end, starts the providers, the replicas and HAProxy, and waits until
//! HAProxy has every replica in rotation. `status` prints the containers and HAProxy's view of
//! each replica. `chaos` runs the money chaos test against the running cluster
//! (`crates/giftgenius-server/tests/api/chaos.rs`, `containers_*`): buyers through HAProxy
//! while replicas are SIGKILLed and started again, then a rolling restart, on a deployment
//! started afresh (empty volumes). `down` removes the containers and their volumes.
//!
//! [`check`] is the test command's step: the manifests' validation, the small chaos run and
//! rolling restart against a fresh deployment, `podman kube play`, then `down`.

use crate::image::{self, Context, Engine};
use crate::{bins, cmd, pyvenv, tools};
use anyhow::{Context as _, Result, bail};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The compose project (compose.yaml's `name`), which prefixes every container and volume.
pub const PROJECT: &str = "giftgenius";
/// The pinned deployment tools, relative to the workspace root.
pub const REQUIREMENTS: &str = "tools/deploy/requirements.txt";
/// Where HAProxy listens on this machine's loopback, its statistics, and PostgreSQL.
pub const PORT: u16 = 18000;
pub const STATS_PORT: u16 = 18404;
pub const PG_PORT: u16 = 15432;
/// The replicas' containers, in HAProxy's order (`replica1` is `app1`, …).
pub const REPLICAS: [&str; 3] = ["giftgenius_app1_1", "giftgenius_app2_1", "giftgenius_app3_1"];
/// The image tags of the two images xtask makes from Debian's packages.
const POSTGRES_IMAGE: &str = "localhost/giftgenius-postgres:15";
const HAPROXY_IMAGE: &str = "localhost/giftgenius-haproxy:2.6";
/// The user ids of the containers that read each secret (compose.yaml, the Containerfiles).
const POSTGRES_UID: u32 = 70;

/// The venv's `bin/` with podman-compose and kubernetes-validate, as pinned.
pub fn ensure_tools(root: &Path) -> Result<PathBuf> {
    pyvenv::ensure(root, &tools::tools_root()?, REQUIREMENTS, "podman-compose and kubernetes-validate", |pins| {
        match (pyvenv::version(pins, "podman-compose"), pyvenv::version(pins, "kubernetes-validate")) {
            (Some(compose), Some(validate)) => Ok(format!("deploy-compose-{compose}-validate-{validate}")),
            _ => bail!("{REQUIREMENTS} must pin podman-compose and kubernetes-validate"),
        }
    })
}

/// What `up` and the tests need to reach the running cluster.
pub struct Cluster {
    pub engine: Engine,
    compose: PathBuf,
    env: Vec<(&'static str, String)>,
    root: PathBuf,
}

impl Cluster {
    /// Everything `up` needs (images, secrets, tools), without starting anything.
    pub fn prepare(root: &Path, app: &image::AppOptions) -> Result<Cluster> {
        let engine = image::ensure_engine(root)?;
        if !engine.is_podman() {
            bail!("the compose deployment runs with podman (podman-compose); docker is here instead: install podman");
        }
        let compose = ensure_tools(root)?.join("podman-compose");
        let app = image::app(root, &engine, app)?;
        let postgres = postgres_image(root, &engine)?;
        let haproxy = haproxy_image(root, &engine)?;
        let model = tools::ensure_model()?;
        let mut env = vec![
            ("GG_IMAGE", app.reference),
            ("GG_POSTGRES_IMAGE", postgres.reference),
            ("GG_HAPROXY_IMAGE", haproxy.reference),
            ("GG_MODEL_DIR", model.display().to_string()),
        ];
        env.extend(places(root)?);
        Ok(Cluster { engine, compose, env, root: root.to_path_buf() })
    }

    /// Only the engine and the compose tool: for `down` and `status`, which build nothing.
    pub fn attach(root: &Path) -> Result<Cluster> {
        let engine = image::ensure_engine(root)?;
        let compose = ensure_tools(root)?.join("podman-compose");
        let mut env = vec![("GG_MODEL_DIR", tools::model_dir()?.display().to_string())];
        env.extend(places(root)?);
        Ok(Cluster { engine, compose, env, root: root.to_path_buf() })
    }

    fn compose(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.compose);
        command.args(["--project-name", PROJECT, "--file", "deploy/compose.yaml"]).args(args).current_dir(&self.root);
        if let Some(conf) = self.engine.conf() {
            command.env("CONTAINERS_CONF", conf);
        }
        for (k, v) in &self.env {
            command.env(k, v);
        }
        command
    }

    /// Starts the deployment in order; a running one whose replicas are all in rotation is kept.
    pub fn up(&self) -> Result<()> {
        let started = Instant::now();
        if self.in_rotation().is_ok_and(|up| up == REPLICAS.len()) && self.images_current()? {
            eprintln!("xtask: cluster already up with these images: every replica in rotation");
            return Ok(());
        }
        // A cluster of other images (or half started) is replaced; its volumes are kept.
        cmd::run(&mut self.compose(&["down"]))?;
        cmd::run(&mut self.compose(&["up", "-d", "postgres"]))?;
        self.wait("PostgreSQL to accept connections", Duration::from_secs(60), || {
            Ok(self
                .engine
                .output(&["exec", "giftgenius_postgres_1", "pg_isready", "-h", "127.0.0.1", "-U", "giftgenius"])
                .is_ok())
        })?;
        cmd::run(&mut self.compose(&["up", "-d", "--no-deps", "pay1", "pay2", "pay3"]))?;
        cmd::run(&mut self.compose(&["up", "-d", "--no-deps", "migrate"]))?;
        let status = self.engine.output(&["wait", "giftgenius_migrate_1"])?;
        let log = self.engine.output(&["logs", "giftgenius_migrate_1"]).unwrap_or_default();
        if status.trim() != "0" {
            bail!("the migration step exited {status}:\n{log}");
        }
        eprintln!("xtask: migration step: {}", log.lines().last().unwrap_or_default());
        cmd::run(&mut self.compose(&["up", "-d", "--no-deps", "app1", "app2", "app3", "haproxy"]))?;
        self.wait("HAProxy to have every replica in rotation", Duration::from_secs(120), || {
            Ok(self.in_rotation().is_ok_and(|up| up == REPLICAS.len()))
        })?;
        eprintln!("xtask: cluster up in {:.1?}: http://127.0.0.1:{PORT}/mcp", started.elapsed());
        Ok(())
    }

    /// Whether the replicas run the image `up` would give them.
    fn images_current(&self) -> Result<bool> {
        let Some((_, wanted)) = self.env.iter().find(|(k, _)| *k == "GG_IMAGE") else { return Ok(true) };
        let wanted = self.engine.output(&["image", "inspect", "--format", "{{.Id}}", wanted])?;
        Ok(REPLICAS.iter().all(|name| {
            self.engine.output(&["container", "inspect", "--format", "{{.Image}}", name]).is_ok_and(|id| id == wanted)
        }))
    }

    /// Polls `ready` every half second until it holds or `limit` passes.
    fn wait(&self, what: &str, limit: Duration, mut ready: impl FnMut() -> Result<bool>) -> Result<()> {
        eprintln!("xtask: waiting for {what}");
        let until = Instant::now() + limit;
        while !ready()? {
            if Instant::now() > until {
                let _ = cmd::run(&mut self.compose(&["ps"]));
                bail!("waited {limit:?} for {what}; `cargo xtask cluster status` and `podman logs` tell why");
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        Ok(())
    }

    /// How many replicas HAProxy has in rotation (`UP`).
    pub fn in_rotation(&self) -> Result<usize> {
        Ok(haproxy_view()?.iter().filter(|(_, status)| status == "UP").count())
    }

    /// A deployment from empty volumes: the chaos test counts every order and charge there is,
    /// and the stock it sells from must be the catalog's.
    pub fn up_fresh(&self) -> Result<()> {
        self.down()?;
        self.up()
    }

    /// Removes the containers, then the volumes and the network. podman-compose 1.0.6's `down --volumes` leaves
    /// what it fails to remove without a word: it removes a provider before the replica in its
    /// network namespace (which podman refuses), and then that provider's volume (seen: the
    /// ledger of an earlier run stayed). What is left is removed here, and must go.
    pub fn down(&self) -> Result<()> {
        cmd::run(&mut self.compose(&["down", "--volumes"]))?;
        let label = format!("label=io.podman.compose.project={PROJECT}");
        let containers = self.engine.output(&["ps", "--all", "--quiet", "--filter", &label])?;
        for container in containers.split_whitespace() {
            self.engine.output(&["rm", "--force", container])?;
        }
        let volumes = self.engine.output(&["volume", "ls", "--quiet", "--filter", &label])?;
        for volume in volumes.split_whitespace() {
            self.engine.output(&["volume", "rm", volume])?;
        }
        // The network too: one made before podman's DNS plugin was installed keeps a
        // configuration without it, and its replicas could never find postgres by name.
        let networks = self.engine.output(&["network", "ls", "--quiet", "--filter", &label])?;
        for network in networks.split_whitespace() {
            self.engine.output(&["network", "rm", network])?;
        }
        Ok(())
    }

    /// The containers, then HAProxy's view of each replica and the service's readiness.
    pub fn status(&self) -> Result<()> {
        cmd::run(&mut self.compose(&["ps"]))?;
        match haproxy_view() {
            Ok(view) => {
                for (replica, status) in view {
                    println!("haproxy: {replica} {status}");
                }
            }
            Err(e) => println!("haproxy: not answering ({e:#})"),
        }
        match http_get(PORT, "/readyz") {
            Ok((status, body)) => println!("http://127.0.0.1:{PORT}/readyz through haproxy: {status} {}", body.trim()),
            Err(e) => println!("http://127.0.0.1:{PORT}/readyz: no answer ({e:#})"),
        }
        Ok(())
    }

    /// The chaos test against the running cluster (`containers_small`, or `containers_long`).
    pub fn chaos(&self, long: bool) -> Result<()> {
        let ledger = self.engine.output(&["volume", "inspect", "--format", "{{.Mountpoint}}", "giftgenius_ledger"])?;
        // The database as this machine reaches it, in a file of root's (never on a command line).
        let secrets = secrets(&self.root)?;
        let db_url = std::fs::read_to_string(secrets.join("db_url"))?;
        let host_db = secrets.join("db_url_from_host");
        std::fs::write(&host_db, db_url.trim().replace("@postgres:5432/", &format!("@127.0.0.1:{PG_PORT}/")))?;
        let mut test = cmd::cargo();
        let name = if long { "chaos::containers_long" } else { "chaos::containers_small" };
        // --workspace, as `cargo test --workspace` builds it: the same features, so the test
        // command's build of the api tests is reused, not compiled again for one package.
        test.args(["test", "--workspace", "--test", "api"]);
        // Before the `--`: after it, the flag would go to the test binary, which refuses it.
        crate::locked_in_ci(&mut test);
        test.args([name, "--", "--ignored", "--exact", "--nocapture"]);
        test.current_dir(&self.root);
        crate::test_env::pin(&mut test);
        test.env("GIFTGENIUS_CLUSTER_URL", format!("http://127.0.0.1:{PORT}"))
            .env("GIFTGENIUS_CLUSTER_STATS", format!("http://127.0.0.1:{STATS_PORT}/stats;csv"))
            .env("GIFTGENIUS_CLUSTER_DB_FILE", &host_db)
            .env("GIFTGENIUS_CLUSTER_LEDGER", Path::new(&ledger).join("giftgenius-sandbox-pay.db"))
            .env("GIFTGENIUS_CLUSTER_REPLICAS", REPLICAS.join(","));
        if let Some(conf) = self.engine.conf() {
            test.env("CONTAINERS_CONF", conf);
        }
        cmd::run(&mut test)
    }
}

/// The variables compose.yaml reads besides the images and the model: the secrets' folder (its
/// files written if missing) and the ports.
fn places(root: &Path) -> Result<Vec<(&'static str, String)>> {
    Ok(vec![
        ("GG_SECRETS", secrets(root)?.display().to_string()),
        ("GG_PORT", PORT.to_string()),
        ("GG_STATS_PORT", STATS_PORT.to_string()),
        ("GG_PG_PORT", PG_PORT.to_string()),
    ])
}

/// HAProxy's statistics (CSV): each replica of backend `replicas` with its status.
fn haproxy_view() -> Result<Vec<(String, String)>> {
    let (status, body) = http_get(STATS_PORT, "/stats;csv")?;
    if status != 200 {
        bail!("haproxy's statistics answered {status}");
    }
    Ok(body
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            (fields.len() > 17 && fields[0] == "replicas" && fields[1].starts_with("replica"))
                .then(|| (fields[1].to_string(), fields[17].to_string()))
        })
        .collect())
}

/// A plain HTTP/1.0 GET to this machine's loopback: (status, body).
fn http_get(port: u16, path: &str) -> Result<(u16, String)> {
    http(port, "GET", path, "")
}

/// A plain HTTP/1.0 request to this machine's loopback (a JSON `body` when not empty):
/// (status, body).
pub fn http(port: u16, method: &str, path: &str, body: &str) -> Result<(u16, String)> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let headers = if body.is_empty() {
        String::new()
    } else {
        format!(
            "content-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\n",
            body.len()
        )
    };
    write!(stream, "{method} {path} HTTP/1.0\r\nhost: 127.0.0.1:{port}\r\n{headers}\r\n{body}")?;
    let mut text = String::new();
    stream.read_to_string(&mut text)?;
    let status = text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).context("no HTTP status line")?;
    Ok((status, text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default()))
}

/// The deployment's secrets, one per file in `<target>/deploy/secrets/` (kept between runs):
/// PostgreSQL's password, the database URL holding it, the provider's secret, the
/// confirmation-token keys. Each is owned by
/// the user id of the one container that reads it, mode 0400; the folder is root's alone.
pub fn secrets(root: &Path) -> Result<PathBuf> {
    use std::os::unix::fs::{PermissionsExt, chown};
    let dir = bins::target_dir(root).join("deploy/secrets");
    std::fs::create_dir_all(&dir)?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
    let password_file = dir.join("pg_password");
    if !password_file.is_file() {
        std::fs::write(&password_file, random_hex()?)?;
    }
    let password = std::fs::read_to_string(&password_file)?;
    let files = [
        ("pg_password", password.clone(), POSTGRES_UID),
        ("db_url", format!("postgres://giftgenius:{}@postgres:5432/giftgenius", password.trim()), image::UID),
        ("pay_token", String::new(), image::UID),
        ("token_keys", String::new(), image::UID),
    ];
    for (name, content, uid) in files {
        let path = dir.join(name);
        if !content.is_empty() {
            std::fs::write(&path, content)?;
        } else if !path.is_file() {
            // The confirmation-token keys are `KEY_ID SECRET` lines (--token-secret-file).
            let prefix = if name == "token_keys" { "k1 " } else { "" };
            std::fs::write(&path, format!("{prefix}{}\n", random_hex()?))?;
        }
        chown(&path, Some(uid), Some(uid)).with_context(|| format!("chown {} (run as root)", path.display()))?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o400))?;
    }
    Ok(dir)
}

/// 32 random bytes as 64 hex characters, from the kernel.
fn random_hex() -> Result<String> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// PostgreSQL 15 FROM scratch: Debian's postgresql-15 files, busybox-static as /bin/sh.
fn postgres_image(root: &Path, engine: &Engine) -> Result<image::Built> {
    tools::ensure_debs(&["postgresql-15", "busybox-static", "tzdata"])?;
    let mut context = Context::new(bins::target_dir(root).join("deploy/context/postgres"))?;
    let bin = Path::new("/usr/lib/postgresql/15/bin");
    for program in ["postgres", "initdb", "pg_isready"] {
        let path = bin.join(program);
        image::copy_with_libraries(&mut context, &path, &path.to_string_lossy())?;
    }
    // The server's modules (plpgsql, the text search dictionaries initdb loads) and their
    // libraries; not the LLVM JIT (jit=off), which alone would double the image.
    for entry in walk(Path::new("/usr/lib/postgresql/15/lib"))? {
        let name = entry.to_string_lossy();
        if name.ends_with(".so") && !name.contains("llvmjit") {
            image::copy_with_libraries(&mut context, &entry, &name)?;
        }
    }
    for dir in ["/usr/share/postgresql/15", "/usr/share/zoneinfo"] {
        for entry in walk(Path::new(dir))? {
            context.copy(&entry, &entry.to_string_lossy(), 0o444)?;
        }
    }
    context.copy(Path::new("/bin/busybox"), "/bin/sh", 0o555)?;
    context.copy(&root.join("deploy/postgres/entrypoint.sh"), "/usr/local/bin/entrypoint.sh", 0o444)?;
    context.write("/etc/passwd", b"postgres:x:70:70:PostgreSQL:/var/lib/postgresql:/bin/sh\n", 0o444)?;
    context.write("/etc/group", b"postgres:x:70:\n", 0o444)?;
    context.dir("pgdata")?;
    context.dir("/tmp")?;
    let epoch = image::source_date_epoch(root)?;
    image::build(engine, &context, &root.join("deploy/postgres/Containerfile"), POSTGRES_IMAGE, &[], epoch)
}

/// HAProxy FROM scratch: Debian's haproxy executable and its libraries.
fn haproxy_image(root: &Path, engine: &Engine) -> Result<image::Built> {
    tools::ensure_debs(&["haproxy"])?;
    let mut context = Context::new(bins::target_dir(root).join("deploy/context/haproxy"))?;
    image::copy_with_libraries(&mut context, Path::new("/usr/sbin/haproxy"), "/usr/sbin/haproxy")?;
    context.write("/etc/passwd", b"haproxy:x:99:99:HAProxy:/nonexistent:/nonexistent\n", 0o444)?;
    context.write("/etc/group", b"haproxy:x:99:\n", 0o444)?;
    // Name resolution through the network's DNS (aardvark), as glibc reads it.
    context.write("/etc/nsswitch.conf", b"hosts: files dns\n", 0o444)?;
    let epoch = image::source_date_epoch(root)?;
    image::build(engine, &context, &root.join("deploy/haproxy/Containerfile"), HAPROXY_IMAGE, &[], epoch)
}

/// Every file under `dir`, recursively, following no symlink (a symlinked file is read through).
fn walk(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
            let path = entry?.path();
            let meta = std::fs::symlink_metadata(&path)?;
            if meta.is_dir() {
                todo.push(path);
            } else if path.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// compose.yaml and this file agree on names: the replicas' containers, the volume of the
    /// ledger, the ports' variables, and every secret `secrets` writes.
    #[test]
    fn the_compose_file_names_what_xtask_expects() {
        let root = crate::workspace_root().unwrap();
        let text = std::fs::read_to_string(root.join("deploy/compose.yaml")).unwrap();
        assert!(text.contains(&format!("name: {PROJECT}")));
        for (i, _) in REPLICAS.iter().enumerate() {
            assert!(text.contains(&format!("  app{}:", i + 1)) && text.contains(&format!("service:pay{}", i + 1)));
        }
        for needle in
            ["ledger:", "GG_PORT", "GG_STATS_PORT", "GG_PG_PORT", "pg_password", "db_url", "pay_token", "token_keys"]
        {
            assert!(text.contains(needle), "compose.yaml lacks {needle}");
        }
        let haproxy = std::fs::read_to_string(root.join("deploy/haproxy/haproxy.cfg")).unwrap();
        for i in 1..=REPLICAS.len() {
            assert!(haproxy.contains(&format!("server replica{i} pay{i}:8000")), "haproxy.cfg lacks replica{i}");
        }
    }
}
