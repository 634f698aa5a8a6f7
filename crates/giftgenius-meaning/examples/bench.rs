//! How fast the model is on this machine:
//! `cargo run --release -p giftgenius-meaning --example bench`
//!
//! Prints the load time, the memory after load, one short interest's embedding time (p50 and
//! p90 of 200), batch throughput for single words and 2–3 word phrases, and `nearest()` over
//! 5,000 and 50,000 terms. The words are the model's own whole-word vocabulary entries, so the
//! texts are real words of realistic token counts.

use giftgenius_meaning::{Embedding, Model, Neighbours, default_dir};
use std::time::{Duration, Instant};

const INTERESTS: [&str; 20] = [
    "stargazing",
    "making beats",
    "dinner parties",
    "pour-over coffee",
    "hip hop",
    "Minecraft",
    "new dad",
    "self-care",
    "rock climbing",
    "sourdough baking",
    "vintage vinyl records",
    "houseplants",
    "board games",
    "trail running",
    "watercolor painting",
    "jardinería",
    "música e viagens",
    "knitting",
    "craft beer",
    "birdwatching",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = default_dir()?;
    let started = Instant::now();
    let model = Model::load(&dir)?;
    println!("load: {} ms ({})", started.elapsed().as_millis(), dir.display());
    println!("RSS after load: {} MiB", rss_mib());

    // On a busy machine wall time includes waiting for a core: the minimum and the CPU time
    // say what the work itself costs.
    let c = process_cpu();
    let mut wall: Vec<Duration> = (0..200)
        .map(|i| {
            let text = INTERESTS[i % INTERESTS.len()];
            let t = Instant::now();
            std::hint::black_box(model.embed(text));
            t.elapsed()
        })
        .collect();
    let cpu = process_cpu().saturating_sub(c);
    wall.sort();
    let tokens: usize = INTERESTS.iter().map(|t| model.token_ids(t).len()).sum();
    println!(
        "short interest, one embed (200): p50 {:.2} ms, p90 {:.2} ms, min {:.2} ms; mean CPU {:.2} ms; \
         {:.1} tokens on average with [CLS] and [SEP]",
        ms(wall[100]),
        ms(wall[180]),
        ms(wall[0]),
        ms(cpu) / 200.0,
        tokens as f64 / INTERESTS.len() as f64
    );

    // Time by length: how the cost grows with the tokens of one text.
    let mut line = String::from("one embed by tokens (fastest of 50, ms):");
    for words in [1, 2, 3, 6, 10, 20, 40, 126] {
        let text = ["garden"; 126][..words].join(" ");
        let fastest = (0..50)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(model.embed(&text));
                t.elapsed()
            })
            .min()
            .unwrap_or_default();
        line += &format!(" {}→{:.2}", model.token_ids(&text).len(), ms(fastest));
    }
    println!("{line}");

    let words = vocabulary_words(&dir)?;
    let singles: Vec<&str> = words.iter().take(5_000).map(String::as_str).collect();
    let (t, c) = (Instant::now(), process_cpu());
    let single_vectors = model.embed_many(&singles);
    let (secs, cpu) = (t.elapsed().as_secs_f64(), process_cpu().saturating_sub(c).as_secs_f64());
    println!(
        "batch, single words: {:.0} terms/s ({} words in {secs:.2} s wall, {cpu:.2} s CPU: {:.0} terms per CPU second)",
        singles.len() as f64 / secs,
        singles.len(),
        singles.len() as f64 / cpu
    );

    let phrases: Vec<String> = (0..2_000)
        .map(|i| {
            let pick = |k: usize| words[(i * 7919 + k * 104_729) % words.len()].as_str();
            if i % 2 == 0 { format!("{} {}", pick(1), pick(2)) } else { format!("{} {} {}", pick(1), pick(2), pick(3)) }
        })
        .collect();
    let phrase_refs: Vec<&str> = phrases.iter().map(String::as_str).collect();
    let (t, c) = (Instant::now(), process_cpu());
    std::hint::black_box(model.embed_many(&phrase_refs));
    let (secs, cpu) = (t.elapsed().as_secs_f64(), process_cpu().saturating_sub(c).as_secs_f64());
    println!(
        "batch, 2–3 word phrases: {:.0} terms/s ({} phrases in {secs:.2} s wall, {cpu:.2} s CPU: {:.0} terms per CPU second)",
        phrases.len() as f64 / secs,
        phrases.len(),
        phrases.len() as f64 / cpu
    );

    let query = model.embed("stargazing");
    for size in [5_000, 50_000] {
        // Beyond the real 5,000, mixtures of two real vectors: the scan's cost does not depend
        // on the values.
        let terms: Vec<(String, Embedding)> = (0..size)
            .map(|i| {
                let a = single_vectors[i % single_vectors.len()].values();
                let b = single_vectors[(i * 31 + 7) % single_vectors.len()].values();
                let mix = std::array::from_fn(|d| if i < single_vectors.len() { a[d] } else { a[d] + b[d] });
                (format!("term {i}"), Embedding::from_values(mix))
            })
            .collect();
        let index = Neighbours::new(terms);
        let mut wall: Vec<Duration> = (0..50)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(index.nearest(&query, 20, 0.3));
                t.elapsed()
            })
            .collect();
        wall.sort();
        println!("nearest(k=20) over {size} terms: p50 {:.2} ms, min {:.2} ms", ms(wall[25]), ms(wall[0]));
    }
    println!("RSS at the end: {} MiB", rss_mib());
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Whole words of at least four letters from the model's vocabulary, in vocabulary order.
fn vocabulary_words(dir: &std::path::Path) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("tokenizer.json"))?)?;
    let vocab = json["model"]["vocab"].as_object().ok_or("tokenizer.json has no vocab")?;
    let mut words: Vec<(u64, &String)> = vocab
        .iter()
        .filter(|(w, _)| w.len() >= 4 && w.chars().all(|c| c.is_ascii_lowercase()))
        .map(|(w, id)| (id.as_u64().unwrap_or(0), w))
        .collect();
    words.sort();
    Ok(words.into_iter().map(|(_, w)| w.clone()).collect())
}

/// All of this process's threads' user and system time so far (clock ticks of 10 ms).
fn process_cpu() -> Duration {
    let text = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
    let fields: Vec<u64> =
        text.rsplit(')').next().unwrap_or("").split_whitespace().map(|f| f.parse().unwrap_or(0)).collect();
    let ticks = fields.get(11).copied().unwrap_or(0) + fields.get(12).copied().unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

/// This process's resident memory, from /proc (0 where there is none).
fn rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    kib / 1024
}
