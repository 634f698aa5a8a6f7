//! Suggestion quality, measured: the judged request sets (`sets/*.json`), the measures, the
//! rankings compared (today's `suggest_gifts`, a BM25 baseline, embeddings once wired) and the
//! table `cargo xtask eval` prints. How the sets were made and what each figure means:
//! `docs/quality.md`.

pub mod bm25;
pub mod metrics;
pub mod rankings;
pub mod report;
pub mod sets;

/// The embedding model for the tests: they fail with what to run when it is missing.
#[cfg(test)]
pub(crate) fn model_for_tests() -> std::sync::Arc<giftgenius_catalog::meaning::Meaning> {
    let dir = giftgenius_meaning::default_dir().expect("a model directory");
    giftgenius_catalog::meaning::Meaning::shared(&dir, None).unwrap_or_else(|e| {
        panic!("{e}: the embedding model is installed by `cargo xtask setup` (and `cargo xtask test`)")
    })
}
