//! The catalog serving uses right now: the built-in merchants and the `--catalog` files, loaded
//! and indexed, swapped whole when a file changes or the process gets SIGHUP.
//!
//! A swap is one atomic pointer store: calls in flight keep the `Arc<Catalog>` they started
//! with and finish on it, new calls see the new one. A new catalog that cannot be used (a file
//! gone or unreadable, no valid rows, bad rows under `--catalog-bad-rows refuse`) is not
//! swapped in: the old one keeps serving and the log says why. Files are watched by polling
//! their size, modification time and inode, and a change is loaded once it has held still for
//! one poll, so a file being written is not read half-way.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail};
use arc_swap::ArcSwap;
use tokio_util::sync::CancellationToken;

use super::import::{self, Merchants, Parsed};
use super::{Catalog, CatalogGift, builtin_gifts};
use crate::meaning::Meaning;

/// What to do with a bad row in a catalog file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BadRows {
    /// Log it (file, line, field) and load the other rows.
    Skip,
    /// Refuse the whole catalog (at start: do not start; on reload: keep the old one).
    Refuse,
}

/// Where the catalog comes from.
#[derive(Debug, Clone)]
pub struct CatalogSpec {
    pub builtin: bool,
    pub files: Vec<PathBuf>,
    pub bad_rows: BadRows,
    /// The embedding model every loaded catalog's words are embedded with, if any.
    pub meaning: Option<Arc<Meaning>>,
}

/// What identifies one version of a file without reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileVersion {
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
}

fn versions(files: &[PathBuf]) -> Vec<Option<FileVersion>> {
    files
        .iter()
        .map(|path| {
            let meta = std::fs::metadata(path).ok()?;
            #[cfg(unix)]
            let inode = std::os::unix::fs::MetadataExt::ino(&meta);
            #[cfg(not(unix))]
            let inode = 0;
            Some(FileVersion { len: meta.len(), modified: meta.modified().ok(), inode })
        })
        .collect()
}

/// The current catalog and how to make the next one.
pub struct LiveCatalog {
    current: ArcSwap<Catalog>,
    spec: CatalogSpec,
    builtin: Vec<CatalogGift>,
    /// The file versions the current catalog was loaded from (or last failed to load from).
    loaded: Mutex<Vec<Option<FileVersion>>>,
    /// Serializes reloads (a SIGHUP during a poll's reload waits for it).
    reloading: tokio::sync::Mutex<()>,
    /// Reloads refused so far (the old catalog kept): what shows a broken file was looked at.
    refused_reloads: AtomicU64,
}

impl std::fmt::Debug for LiveCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveCatalog").field("gifts", &self.current.load().len()).field("spec", &self.spec).finish()
    }
}

/// What one load found, for the log.
#[derive(Debug)]
pub struct Loaded {
    pub catalog: Catalog,
    pub bad_rows: usize,
    pub took: Duration,
}

/// Reads and indexes every file of `spec` (plus the built-in gifts when asked).
pub fn load(spec: &CatalogSpec, builtin: &[CatalogGift]) -> anyhow::Result<Loaded> {
    let started = Instant::now();
    let loaded = load_files(spec, builtin);
    // Everything the load used besides the catalog is freed by now.
    give_back_freed_memory();
    let (catalog, bad_rows) = loaded?;
    Ok(Loaded { catalog, bad_rows, took: started.elapsed() })
}

/// Returns the memory freed so far to the system now. mimalloc keeps freed pages for a second
/// (`purge_delay`) and only gives them back on a later call into the allocator, so after a load
/// the read windows, the duplicate check and the vectors outgrown while parsing and indexing
/// stayed resident while the server waited for requests (issue 28: ~90 MiB at a million gifts).
/// Harmless when mimalloc is not the global allocator (its own heap is then empty).
fn give_back_freed_memory() {
    // `mi_collect` is mimalloc's public C API (linked through the `mimalloc` crate, whose
    // bindings only declare it with a feature that needs a crate outside our tree).
    unsafe extern "C" {
        fn mi_collect(force: bool);
    }
    // Keeps the crate, and so the library with `mi_collect`, linked into every binary.
    let _ = std::hint::black_box(std::mem::size_of::<mimalloc::MiMalloc>());
    // SAFETY: `mi_collect` takes no pointers and may be called at any time from any thread.
    unsafe { mi_collect(true) }
}

fn load_files(spec: &CatalogSpec, builtin: &[CatalogGift]) -> anyhow::Result<(Catalog, usize)> {
    let mut all = Parsed::default();
    if spec.builtin {
        all.gifts = builtin.to_vec();
    }
    let mut merchants = Merchants::default();
    for path in &spec.files {
        let parsed = import::parse_file(path, &mut merchants).map_err(|e| anyhow::anyhow!("{e}"))?;
        all.extend(parsed);
    }
    let shown = all.errors.len().min(20);
    for e in &all.errors[..shown] {
        tracing::warn!(file = %e.file, line = e.line, field = %e.field, problem = %e.message, "bad catalog row");
    }
    if all.bad_rows > shown {
        tracing::warn!(more = all.bad_rows - shown, "more bad catalog rows (not logged one by one)");
    }
    if all.bad_rows > 0 && spec.bad_rows == BadRows::Refuse {
        let first: Vec<String> = all.errors.iter().take(5).map(ToString::to_string).collect();
        bail!("{} bad catalog row(s), and --catalog-bad-rows is refuse; the first: {}", all.bad_rows, first.join("; "));
    }
    if all.gifts.is_empty() {
        bail!(
            "the catalog has no valid gifts ({} bad row(s)); give a --catalog file with at least one, or keep the built-in catalog",
            all.bad_rows
        );
    }
    let bad_rows = all.bad_rows;
    drop(merchants);
    let catalog = Catalog::from_gifts(all.gifts);
    let catalog = match &spec.meaning {
        Some(meaning) => meaning.attach(catalog),
        None => catalog,
    };
    Ok((catalog, bad_rows))
}

fn log_loaded(what: &str, loaded: &Loaded) {
    let (terms, postings) = loaded.catalog.index().size();
    tracing::info!(
        gifts = loaded.catalog.len(),
        bad_rows = loaded.bad_rows,
        index_terms = terms,
        index_postings = postings,
        took_ms = loaded.took.as_millis() as u64,
        "{what}"
    );
}

impl LiveCatalog {
    /// Loads the first catalog; an unusable one is an error (the server does not start).
    pub fn load(spec: CatalogSpec) -> anyhow::Result<Arc<Self>> {
        let builtin = if spec.builtin { builtin_gifts() } else { Vec::new() };
        let before = versions(&spec.files);
        let loaded = load(&spec, &builtin)?;
        if !spec.files.is_empty() {
            log_loaded("catalog loaded", &loaded);
        }
        Ok(Arc::new(LiveCatalog {
            current: ArcSwap::from_pointee(loaded.catalog),
            spec,
            builtin,
            loaded: Mutex::new(before),
            reloading: tokio::sync::Mutex::new(()),
            refused_reloads: AtomicU64::new(0),
        }))
    }

    /// A catalog of exactly these gifts, never reloaded (tests, and the preview's merges).
    pub fn fixed(catalog: Catalog) -> Arc<Self> {
        Arc::new(LiveCatalog {
            current: ArcSwap::from_pointee(catalog),
            spec: CatalogSpec { builtin: false, files: Vec::new(), bad_rows: BadRows::Skip, meaning: None },
            builtin: Vec::new(),
            loaded: Mutex::new(Vec::new()),
            reloading: tokio::sync::Mutex::new(()),
            refused_reloads: AtomicU64::new(0),
        })
    }

    /// The catalog now. Hold it for the whole call, so one call sees one catalog.
    pub fn current(&self) -> Arc<Catalog> {
        self.current.load_full()
    }

    /// One gift of the current catalog.
    pub fn get(&self, id: &str) -> Option<CatalogGift> {
        self.current.load().get(id).cloned()
    }

    pub fn files(&self) -> &[PathBuf] {
        &self.spec.files
    }

    /// How many reloads were refused (the previous catalog kept serving) since the start.
    pub fn refused_reloads(&self) -> u64 {
        self.refused_reloads.load(Ordering::SeqCst)
    }

    /// Loads the files again and swaps the new catalog in; on failure the old one stays and
    /// the error says why. Runs the loading on a blocking thread.
    pub async fn reload(self: &Arc<Self>, why: &str) -> anyhow::Result<()> {
        let _one_at_a_time = self.reloading.lock().await;
        let before = versions(&self.spec.files);
        let this = self.clone();
        let result = tokio::task::spawn_blocking(move || load(&this.spec, &this.builtin))
            .await
            .context("the catalog reload stopped")?;
        *self.loaded.lock().unwrap_or_else(|e| e.into_inner()) = before;
        match result {
            Ok(loaded) => {
                log_loaded(&format!("catalog reloaded ({why})"), &loaded);
                self.current.store(Arc::new(loaded.catalog));
                Ok(())
            }
            Err(e) => {
                tracing::warn!(error = %format!("{e:#}"), why, "catalog reload failed; the previous catalog keeps serving");
                self.refused_reloads.fetch_add(1, Ordering::SeqCst);
                Err(e)
            }
        }
    }

    /// Reloads on SIGHUP and, every `poll` (zero: never), when a file changed and then held
    /// still for one poll. Nothing to do without catalog files.
    pub fn spawn_reloading(self: &Arc<Self>, poll: Duration, shutdown: CancellationToken) {
        if self.spec.files.is_empty() {
            return;
        }
        let this = self.clone();
        // Listening starts now, not when the task first runs: a SIGHUP right after start
        // must reload, not end the process (its default action).
        let mut hangup = hangups();
        tokio::spawn(async move {
            let mut seen = versions(&this.spec.files);
            let mut tick = tokio::time::interval(if poll.is_zero() { Duration::from_secs(3600) } else { poll });
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    Some(()) = next_hangup(&mut hangup) => {
                        let _ = this.reload("SIGHUP").await;
                    }
                    _ = tick.tick(), if !poll.is_zero() => {
                        let now = versions(&this.spec.files);
                        let changed = *this.loaded.lock().unwrap_or_else(|e| e.into_inner()) != now;
                        if changed && now == seen {
                            let _ = this.reload("a catalog file changed").await;
                        }
                        seen = now;
                    }
                }
            }
        });
    }
}

#[cfg(unix)]
type Hangups = Option<tokio::signal::unix::Signal>;
#[cfg(not(unix))]
type Hangups = ();

#[cfg(unix)]
fn hangups() -> Hangups {
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
        Ok(signal) => Some(signal),
        Err(e) => {
            tracing::warn!(error = %e, "cannot listen for SIGHUP; catalog files reload on change only");
            None
        }
    }
}

#[cfg(not(unix))]
fn hangups() -> Hangups {}

#[cfg(unix)]
async fn next_hangup(signal: &mut Hangups) -> Option<()> {
    match signal {
        Some(signal) => signal.recv().await,
        None => std::future::pending().await,
    }
}

#[cfg(not(unix))]
async fn next_hangup(_: &mut Hangups) -> Option<()> {
    std::future::pending().await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str) -> String {
        format!(r#"{{"id":"{id}","title":"Gift {id}","price_minor":100}}"#)
    }

    #[tokio::test]
    async fn a_call_keeps_the_catalog_it_started_with_and_a_broken_reload_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("c.jsonl");
        std::fs::write(&file, row("a-1")).unwrap();
        let live = LiveCatalog::load(CatalogSpec {
            builtin: false,
            files: vec![file.clone()],
            bad_rows: BadRows::Skip,
            meaning: None,
        })
        .unwrap();
        let in_flight = live.current();

        std::fs::write(&file, [row("a-1"), row("a-2")].join("\n")).unwrap();
        live.reload("test").await.unwrap();
        assert_eq!(in_flight.len(), 1, "a call in flight finishes on the catalog it started with");
        assert_eq!(live.current().len(), 2);
        assert!(live.get("a-2").is_some());

        std::fs::write(&file, "not json\n").unwrap();
        assert_eq!(live.refused_reloads(), 0);
        assert!(live.reload("test").await.is_err());
        assert_eq!(live.current().len(), 2, "a broken catalog is not swapped in");
        assert_eq!(live.refused_reloads(), 1, "and the refusal is counted");
    }
}
