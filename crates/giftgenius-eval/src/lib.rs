//! Suggestion quality, measured: the judged request sets (`sets/*.json`), the measures, the
//! rankings compared (today's `suggest_gifts`, a BM25 baseline, embeddings once wired) and the
//! table `cargo xtask eval` prints. How the sets were made and what each figure means:
//! `docs/quality.md`.

pub mod bm25;
pub mod metrics;
pub mod rankings;
pub mod report;
pub mod sets;
