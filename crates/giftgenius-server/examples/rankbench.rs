//! Loading, indexing and ranking a big catalog file, outside the server: what `suggest_gifts`
//! costs at a million gifts without HTTP around it, and the memory it takes (issue 28).
//!
//!   cargo build --release -p giftgenius-server --example rankbench
//!   target/release/examples/rankbench CATALOG.json [QUERIES]
//!
//! Prints the load and index time, the resident memory after the load and its high-water mark
//! (VmRSS, VmHWM), then ranks the peers' bench query (`../shared/bench/peers/bench.sh`: four
//! interests, a budget, an age) QUERIES times (default 50) and prints the fastest and the median.
//! `valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*rank_queries*'` counts the
//! instructions of the queries alone (the load is not collected).
//!
//! The catalog's words are embedded with the model in `GIFTGENIUS_MODEL_DIR` (or the default
//! folder `cargo xtask setup` fills), as the server does; `RANKBENCH_WITHOUT_MODEL=1` measures
//! the word-only ranking. `RANKBENCH_EMBEDDING_CACHE=FILE` keeps the words' embeddings between
//! runs (the server's `--embedding-cache`), so a second load shows a reload's cost.
//!
//! With `RANKBENCH_JSON=FILE`, also writes what `suggest_gifts` would return (the cards with their
//! reasons, the count, the notice) for a few varied queries, one JSON line each: two builds that
//! write the same file answer the same (issue 28: the contract must not move with the memory
//! layout).

use std::time::{Duration, Instant};

use giftgenius_catalog::live::{BadRows, CatalogSpec, load};
use giftgenius_catalog::meaning::Meaning;
use giftgenius_catalog::{Catalog, rank};
use giftgenius_types::{SuggestGiftsInput, SuggestGiftsQuery};

/// The same allocator as the server, so the memory figures are the server's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The arguments of the peers' bench.sh.
const BENCH_ARGS: &str = r#"{"relationship_type":"partner","age":35,"interests":["cooking","coffee","gourmet","hiking"],"budget_min":20,"budget_max":150,"limit":6}"#;

fn status(key: &str) -> String {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix(key).map(|v| v.trim_start_matches(':').trim().to_string()))
        .unwrap_or_else(|| "?".into())
}

#[inline(never)]
fn rank_queries(catalog: &Catalog, q: &SuggestGiftsQuery, n: usize) -> (Vec<Duration>, usize, Vec<String>) {
    let mut times = Vec::with_capacity(n);
    let mut total = 0;
    let mut ids = Vec::new();
    for _ in 0..n {
        let start = Instant::now();
        let ranked = std::hint::black_box(rank(&[catalog], q, None));
        times.push(start.elapsed());
        total = ranked.total_matches;
        ids = ranked.gifts.iter().map(|(g, _)| g.id.to_string()).collect();
    }
    (times, total, ids)
}

/// Queries for the `RANKBENCH_JSON` answers: the bench query and variations of every filter
/// (occasion, currency, no interests, none matching, a tight budget, a child, a long list).
const CHECK_ARGS: &[&str] = &[
    BENCH_ARGS,
    r#"{"relationship_type":"friend","age":30,"interests":["tea","books"],"budget_max":40,"occasion":"birthday","currency":"EUR","limit":12}"#,
    r#"{"relationship_type":"child","age":9,"interests":["gaming","music","art"],"limit":8}"#,
    r#"{"relationship_type":"colleague","budget_min":10,"budget_max":25,"limit":6}"#,
    r#"{"relationship_type":"parent","age":70,"interests":["gardening"],"budget_max":9.5,"currency":"JPY","limit":3}"#,
    r#"{"relationship_type":"other","interests":["zzyzx"],"budget_max":30,"limit":6}"#,
    r#"{"relationship_type":"sibling","age":20,"interests":["hiking boots","photography","coffee"],"budget_min":100,"budget_max":101,"limit":12}"#,
];

fn write_answers(catalog: &Catalog, path: &str) {
    let mut out = String::new();
    for args in CHECK_ARGS {
        let input: SuggestGiftsInput = serde_json::from_str(args).expect("the check arguments parse");
        let q = input.normalize();
        let ranked = rank(&[catalog], &q, None);
        let cards: Vec<_> = ranked
            .gifts
            .into_iter()
            .map(|(gift, reasons)| gift.card(q.currency, reasons, "https://gg.example"))
            .collect();
        let answer = serde_json::json!({"query": q, "gifts": cards, "total_matches": ranked.total_matches, "notice": ranked.notice});
        out.push_str(&answer.to_string());
        out.push('\n');
    }
    if let Err(e) = std::fs::write(path, out) {
        eprintln!("rankbench: cannot write {path}: {e}");
        std::process::exit(1);
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(file) = args.next() else {
        eprintln!("usage: rankbench CATALOG.json [QUERIES]");
        std::process::exit(2);
    };
    let queries: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(50);
    let started = Instant::now();
    let meaning = if std::env::var_os("RANKBENCH_WITHOUT_MODEL").is_some() {
        None
    } else {
        let dir = giftgenius_meaning::default_dir().unwrap_or_else(|e| {
            eprintln!("rankbench: {e}");
            std::process::exit(1)
        });
        let cache = std::env::var_os("RANKBENCH_EMBEDDING_CACHE").map(Into::into);
        match Meaning::shared(&dir, cache) {
            Ok(meaning) => Some(meaning),
            Err(e) => {
                eprintln!("rankbench: {e} (or set RANKBENCH_WITHOUT_MODEL=1)");
                std::process::exit(1);
            }
        }
    };
    println!("model loaded in {:?}", started.elapsed());
    let spec = CatalogSpec { builtin: false, files: vec![file.into()], bad_rows: BadRows::Skip, meaning };
    let started = Instant::now();
    let loaded = match load(&spec, &[]) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("rankbench: {e:#}");
            std::process::exit(1);
        }
    };
    println!(
        "loaded {} gifts in {:?} (load+index {:?}); VmRSS {}, VmHWM {}",
        loaded.catalog.len(),
        started.elapsed(),
        loaded.took,
        status("VmRSS"),
        status("VmHWM")
    );
    if let Ok(path) = std::env::var("RANKBENCH_JSON") {
        write_answers(&loaded.catalog, &path);
    }
    let input: SuggestGiftsInput = serde_json::from_str(BENCH_ARGS).expect("the bench arguments parse");
    let q = input.normalize();
    let (mut times, total, ids) = rank_queries(&loaded.catalog, &q, queries);
    times.sort_unstable();
    println!(
        "{queries} queries: min {:?}, median {:?}; total_matches {total}; first {:?}",
        times[0],
        times[times.len() / 2],
        ids
    );
}
