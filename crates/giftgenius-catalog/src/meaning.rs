//! The sentence-embedding model on the suggestion path (issue 40): it answers, for an interest,
//! the catalog's own words nearest in meaning, so "stargazing" meets the `astronomy` tag and
//! "making beats" a MIDI keyboard.
//!
//! What is embedded is the catalog's vocabulary (each word's most common spelling and each whole
//! tag, `Index::vocabulary`), never its gifts one by one: a gift's text is ~50 tokens (~25 ms of
//! CPU here) while a word is ~3 (~1.5 ms), and a million generated gifts share a few thousand
//! words. A query embeds each interest once (kept in a bounded memo) and asks [`Neighbours`] for
//! the nearest words; the ranking (`catalog/fit.rs`) meets those through the index like the
//! interest's own words, weighted below them.
//!
//! Words are kept by content ([`EmbeddingCache`]) for the life of the process and in one file
//! (`--embedding-cache`), so a reload or a restart embeds only the words it has not seen.
//! Interests and `about` texts are people's words: they are never written to that file nor
//! logged.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use giftgenius_meaning::{Embedding, EmbeddingCache, Model, ModelError, Neighbours};

use crate::{Catalog, RelatedTerms};

/// How many catalog words one interest may bring (the plan keeps the strongest 16 of every
/// producer together).
const NEAREST: usize = 12;
/// Below this cosine a word says nothing about an interest (unrelated words of short phrases
/// score about 0.2–0.3 with this model; `weight_of_cosine` gives 0 up to 0.35).
const MIN_COSINE: f32 = 0.35;
/// Interests remembered per catalog. A full memo is emptied, not grown: the ranking asks the
/// same few interests again and again, and an empty memo costs one embedding per interest.
const MEMO_INTERESTS: usize = 4096;

/// The loaded model and every word embedded so far.
pub struct Meaning {
    model: Model,
    words: Mutex<EmbeddingCache>,
    cache_file: Option<PathBuf>,
}

impl std::fmt::Debug for Meaning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Meaning").field("model", &self.model.id()).field("cache_file", &self.cache_file).finish()
    }
}

impl Meaning {
    /// Loads the model in `dir` once per process (every app a test process starts shares it),
    /// and the word cache from `cache_file` when there is a usable one.
    pub fn shared(dir: &Path, cache_file: Option<PathBuf>) -> Result<Arc<Meaning>, ModelError> {
        /// Model folder and cache file → the loaded model.
        type Loaded = Vec<(PathBuf, Option<PathBuf>, Arc<Meaning>)>;
        static LOADED: Mutex<Loaded> = Mutex::new(Vec::new());
        let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, _, meaning)) = loaded.iter().find(|(d, c, _)| d == dir && *c == cache_file) {
            return Ok(meaning.clone());
        }
        let meaning = Arc::new(Meaning::load(dir, cache_file)?);
        loaded.push((dir.to_path_buf(), meaning.cache_file.clone(), meaning.clone()));
        Ok(meaning)
    }

    fn load(dir: &Path, cache_file: Option<PathBuf>) -> Result<Meaning, ModelError> {
        let started = Instant::now();
        let model = Model::load(dir)?;
        let words = match &cache_file {
            Some(path) if path.exists() => EmbeddingCache::load(path, model.id()).unwrap_or_else(|e| {
                tracing::warn!(error = %e, "the embedding cache cannot be used; the catalog's words are embedded again");
                EmbeddingCache::new(model.id())
            }),
            _ => EmbeddingCache::new(model.id()),
        };
        tracing::info!(
            model = giftgenius_meaning::MODEL_NAME,
            cached_words = words.len(),
            took_ms = started.elapsed().as_millis() as u64,
            "embedding model loaded"
        );
        Ok(Meaning { model, words: Mutex::new(words), cache_file })
    }

    /// Embeds a person's text (an interest, an `about`): never cached on disk.
    pub fn embed(&self, text: &str) -> Embedding {
        self.model.embed(text)
    }

    /// The model itself (the quality harness embeds whole gifts for its baseline).
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// `catalog` with a [`RelatedTerms`] over its vocabulary: the words it has not seen are
    /// embedded now (on every core), then the cache file is rewritten if anything was new.
    pub fn attach(self: &Arc<Self>, catalog: Catalog) -> Catalog {
        let related = self.related_for(&catalog);
        catalog.with_related(related)
    }

    fn related_for(self: &Arc<Self>, catalog: &Catalog) -> Arc<dyn RelatedTerms> {
        let started = Instant::now();
        let vocabulary = catalog.index().vocabulary();
        let texts: Vec<&str> = vocabulary.iter().map(String::as_str).collect();
        let (vectors, computed) = {
            let mut words = self.words.lock().unwrap_or_else(|e| e.into_inner());
            words.embed_all(&self.model, &texts)
        };
        if computed > 0
            && let Some(path) = &self.cache_file
        {
            let words = self.words.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(dir) = path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            if let Err(e) = words.save(path) {
                tracing::warn!(error = %e, "cannot save the embedding cache; the next start embeds these words again");
            }
        }
        tracing::info!(
            words = vocabulary.len(),
            embedded_now = computed,
            took_ms = started.elapsed().as_millis() as u64,
            "catalog vocabulary embedded"
        );
        let neighbours = Neighbours::new(vocabulary.into_iter().zip(vectors).collect());
        Arc::new(CatalogWords { meaning: self.clone(), neighbours, memo: Mutex::new(HashMap::new()) })
    }
}

/// One catalog's words by meaning.
struct CatalogWords {
    meaning: Arc<Meaning>,
    neighbours: Neighbours,
    /// Interest → its nearest words, so a repeated interest costs no embedding.
    memo: Mutex<HashMap<String, Vec<(String, f32)>>>,
}

impl CatalogWords {
    fn nearest(&self, text: &str) -> Vec<(String, f32)> {
        let embedding = self.meaning.embed(text);
        self.neighbours
            .nearest(&embedding, NEAREST, MIN_COSINE)
            .into_iter()
            .filter_map(|(i, cosine)| Some((self.neighbours.term(i)?.to_string(), cosine)))
            .collect()
    }
}

impl RelatedTerms for CatalogWords {
    fn related(&self, interest: &str) -> Vec<(String, f32)> {
        let key = interest.trim().to_lowercase();
        if key.is_empty() {
            return Vec::new();
        }
        if let Some(found) = self.memo.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return found.clone();
        }
        let found = self.nearest(&key);
        let mut memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
        if memo.len() >= MEMO_INTERESTS {
            memo.clear();
        }
        memo.insert(key, found.clone());
        found
    }

    fn related_once(&self, text: &str) -> Vec<(String, f32)> {
        self.nearest(text.trim())
    }
}

/// Where the word cache lives unless `--embedding-cache` says: beside the model's own cache.
pub fn default_cache_file() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(
        PathBuf::from(home)
            .join(".cache/giftgenius/embeddings")
            .join(format!("{}-words.bin", giftgenius_meaning::MODEL_NAME)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meaning() -> Arc<Meaning> {
        let dir = giftgenius_meaning::default_dir().expect("a model directory");
        Meaning::shared(&dir, None).unwrap_or_else(|e| {
            panic!("{e}: the embedding model is installed by `cargo xtask setup` (and `cargo xtask test`)")
        })
    }

    #[test]
    fn an_interest_meets_the_catalog_words_nearest_in_meaning_and_not_unrelated_ones() {
        let catalog = meaning().attach(Catalog::builtin());
        let related = catalog.related().clone().expect("attached");
        let words = |interest: &str| related.related(interest).into_iter().map(|(w, _)| w).collect::<Vec<_>>();
        let space = words("outer space");
        assert!(space.iter().any(|w| w == "astronomy"), "outer space → {space:?}");
        assert!(!space.iter().any(|w| w == "cooking"), "outer space → {space:?}");
        let beats = words("making beats");
        assert!(beats.iter().any(|w| w.contains("music") || w == "midi" || w == "drum"), "making beats → {beats:?}");
        // The same interest answers the same words (the memo), best first.
        assert_eq!(related.related("outer space"), related.related("Outer Space "));
        let cosines: Vec<f32> = related.related("outer space").into_iter().map(|(_, c)| c).collect();
        assert!(cosines.windows(2).all(|w| w[0] >= w[1]) && cosines.iter().all(|&c| c >= MIN_COSINE), "{cosines:?}");
    }

    #[test]
    fn the_word_cache_file_makes_a_second_start_embed_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("words.bin");
        let model_dir = giftgenius_meaning::default_dir().expect("a model directory");
        let first = Arc::new(Meaning::load(&model_dir, Some(file.clone())).expect("model"));
        let catalog = first.attach(Catalog::builtin());
        let words = catalog.index().vocabulary().len();
        assert!(file.exists(), "the cache is written after new words");
        let second = Meaning::load(&model_dir, Some(file)).expect("model");
        assert_eq!(second.words.lock().expect("lock").len(), words, "every word comes back from the file");
    }
}
