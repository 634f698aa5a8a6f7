//! The model as the rest of GiftGenius sees it: load a directory, embed texts.

use crate::embedding::{DIM, Embedding};
use crate::encoder::{Encoder, Shape};
use crate::error::ModelError;
use crate::tokenizer::Tokenizer;
use crate::weights::Weights;
use std::path::{Path, PathBuf};

/// The model this crate runs.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// The variable naming the model directory; `cargo xtask` sets it for what it runs.
pub const MODEL_DIR_ENV: &str = "GIFTGENIUS_MODEL_DIR";
/// Tokens per text, `[CLS]` and `[SEP]` included: the model's `tokenizer.json` cuts there, and a
/// gift's title and description say what matters before it.
pub const MAX_TOKENS: usize = 128;
/// Changes whenever this crate would give other vectors for the same files (tokenizer or
/// encoder fixes), so a saved [`crate::EmbeddingCache`] from before is not reused.
const PIPELINE_REVISION: u32 = 1;
/// Tokens per encoder call in [`Model::embed_many`]: enough rows that each weight read from
/// memory serves many tokens, few enough that the activations stay in cache.
const BATCH_TOKENS: usize = 256;

/// `$GIFTGENIUS_MODEL_DIR`, else `$HOME/.cache/giftgenius/models/all-MiniLM-L6-v2` (where
/// `cargo xtask setup` installs it).
pub fn default_dir() -> Result<PathBuf, ModelError> {
    if let Some(dir) = std::env::var_os(MODEL_DIR_ENV).filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(".cache/giftgenius/models").join(MODEL_NAME)),
        None => {
            Err(ModelError::MissingDir { dir: PathBuf::from(format!("(neither {MODEL_DIR_ENV} nor HOME is set)")) })
        }
    }
}

/// A loaded sentence-embedding model. Immutable: share it between threads by reference.
pub struct Model {
    tokenizer: Tokenizer,
    encoder: Encoder,
    id: String,
}

impl Model {
    /// Loads `model.safetensors`, `tokenizer.json` and `config.json` from `dir`, checking every
    /// tensor's type and shape (about 0.1–0.3 s; 90 MB of weights held in memory).
    pub fn load(dir: &Path) -> Result<Model, ModelError> {
        if !dir.is_dir() {
            return Err(ModelError::MissingDir { dir: dir.to_path_buf() });
        }
        let (config_path, config_bytes, config) = read_json(&dir.join("config.json"))?;
        let shape = shape(&config).map_err(|reason| ModelError::Malformed { path: config_path, reason })?;
        let (tokenizer_path, tokenizer_bytes, tokenizer_json) = read_json(&dir.join("tokenizer.json"))?;
        let tokenizer = Tokenizer::from_json(&tokenizer_json)
            .map_err(|reason| ModelError::Malformed { path: tokenizer_path.clone(), reason })?;
        let mut weights = Weights::open(&dir.join("model.safetensors"))?;
        let encoder = Encoder::load(&mut weights, shape)?;
        // Every id the tokenizer can give must have a row: checked once here, so embedding
        // never indexes outside the table.
        if let Some(max) = tokenizer.max_id().filter(|&m| m as usize >= encoder.vocab()) {
            return Err(ModelError::Malformed {
                path: tokenizer_path,
                reason: format!("token id {max} is outside the model's {} embeddings", encoder.vocab()),
            });
        }
        let mut hash = Fnv::new();
        for part in [&config_bytes, &tokenizer_bytes, &weights.header_bytes] {
            hash.write(&(part.len() as u64).to_le_bytes());
            hash.write(part);
        }
        let id = format!("{MODEL_NAME}:{:016x}:r{PIPELINE_REVISION}", hash.finish());
        Ok(Model { tokenizer, encoder, id })
    }

    /// Names these files and this code: equal ids give equal embeddings. The hash covers
    /// config.json, tokenizer.json and the weights' header (names, shapes, offsets), not the 90 MB
    /// of weights themselves, which `cargo xtask setup` checks by sha256.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The token ids the encoder reads for `text` (`[CLS]` … `[SEP]`, at most [`MAX_TOKENS`]).
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text, self.max_tokens())
    }

    /// The embedding of one text (a few milliseconds for a short phrase on one core).
    pub fn embed(&self, text: &str) -> Embedding {
        let ids = self.token_ids(text);
        let vectors = self.encoder.embed(&[&ids]);
        Embedding(vectors.into_iter().next().unwrap_or([0.0; DIM]))
    }

    /// The embeddings of many texts, in order: texts run together through the encoder (each
    /// weight read once per batch) on every available core.
    pub fn embed_many(&self, texts: &[&str]) -> Vec<Embedding> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(texts.len().div_ceil(8)).max(1);
        if threads == 1 {
            return self.embed_serial(texts);
        }
        let per_thread = texts.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let handles: Vec<_> =
                texts.chunks(per_thread).map(|part| scope.spawn(move || self.embed_serial(part))).collect();
            // A panic in a worker is a bug of ours; propagate it rather than lose texts.
            handles.into_iter().flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
        })
    }

    fn embed_serial(&self, texts: &[&str]) -> Vec<Embedding> {
        let mut out = Vec::with_capacity(texts.len());
        let mut batch: Vec<Vec<u32>> = Vec::new();
        let mut tokens = 0;
        let flush = |batch: &mut Vec<Vec<u32>>, out: &mut Vec<Embedding>| {
            let seqs: Vec<&[u32]> = batch.iter().map(|s| s.as_slice()).collect();
            out.extend(self.encoder.embed(&seqs).into_iter().map(Embedding));
            batch.clear();
        };
        for text in texts {
            let ids = self.token_ids(text);
            if tokens + ids.len() > BATCH_TOKENS && !batch.is_empty() {
                flush(&mut batch, &mut out);
                tokens = 0;
            }
            tokens += ids.len();
            batch.push(ids);
        }
        if !batch.is_empty() {
            flush(&mut batch, &mut out);
        }
        out
    }

    fn max_tokens(&self) -> usize {
        MAX_TOKENS.min(self.encoder.max_positions())
    }
}

fn read_json(path: &Path) -> Result<(PathBuf, Vec<u8>, serde_json::Value), ModelError> {
    let bytes = std::fs::read(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => ModelError::MissingFile { path: path.to_path_buf() },
        _ => ModelError::Io { path: path.to_path_buf(), source },
    })?;
    let json = serde_json::from_slice(&bytes)
        .map_err(|e| ModelError::Malformed { path: path.to_path_buf(), reason: format!("not JSON: {e}") })?;
    Ok((path.to_path_buf(), bytes, json))
}

/// The encoder's sizes from `config.json`, refusing what this code does not implement.
fn shape(config: &serde_json::Value) -> Result<Shape, String> {
    let size = |key: &str| {
        config
            .get(key)
            .and_then(|v| v.as_u64())
            .and_then(|v| usize::try_from(v).ok())
            .filter(|&v| v > 0)
            .ok_or_else(|| format!("`{key}` is missing or not a positive integer"))
    };
    let text = |key: &str| config.get(key).and_then(|v| v.as_str()).unwrap_or("");
    if text("model_type") != "bert" {
        return Err(format!("model_type {:?}, expected \"bert\"", config.get("model_type")));
    }
    if text("hidden_act") != "gelu" {
        return Err(format!("hidden_act {:?}: only \"gelu\" (the erf form) is implemented", config.get("hidden_act")));
    }
    if !matches!(config.get("position_embedding_type").and_then(|v| v.as_str()), None | Some("absolute")) {
        return Err("only absolute position embeddings are implemented".into());
    }
    let hidden = size("hidden_size")?;
    if hidden != DIM {
        return Err(format!("hidden_size {hidden}, expected {DIM}"));
    }
    let heads = size("num_attention_heads")?;
    let intermediate = size("intermediate_size")?;
    if !DIM.is_multiple_of(heads) || !intermediate.is_multiple_of(8) {
        return Err(format!("{heads} heads or intermediate size {intermediate} do not divide evenly"));
    }
    let eps = config.get("layer_norm_eps").and_then(|v| v.as_f64()).unwrap_or(1e-12) as f32;
    let max_positions = size("max_position_embeddings")?;
    if max_positions < 2 {
        return Err("max_position_embeddings must be at least 2 ([CLS] and [SEP])".into());
    }
    Ok(Shape {
        vocab: size("vocab_size")?,
        max_positions,
        type_vocab: size("type_vocab_size")?,
        layers: size("num_hidden_layers")?,
        heads,
        intermediate,
        eps,
    })
}

/// 64-bit FNV-1a: tiny, and the same on every platform, run and version (unlike std's hasher).
pub(crate) struct Fnv(u64);

impl Fnv {
    pub(crate) fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    pub(crate) fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> serde_json::Value {
        serde_json::json!({
            "model_type": "bert", "hidden_act": "gelu", "hidden_size": 384, "num_attention_heads": 12,
            "intermediate_size": 1536, "num_hidden_layers": 6, "vocab_size": 30522,
            "max_position_embeddings": 512, "type_vocab_size": 2, "layer_norm_eps": 1e-12
        })
    }

    #[test]
    fn the_minilm_config_is_accepted() {
        let s = shape(&config()).expect("accepted");
        assert_eq!((s.layers, s.heads, s.intermediate, s.vocab), (6, 12, 1536, 30522));
    }

    #[test]
    fn an_unimplemented_config_is_refused_naming_the_setting() {
        for (key, value, named) in [
            ("hidden_size", serde_json::json!(768), "hidden_size"),
            ("hidden_act", serde_json::json!("relu"), "hidden_act"),
            ("num_attention_heads", serde_json::json!(7), "heads"),
            ("vocab_size", serde_json::json!("many"), "vocab_size"),
            ("model_type", serde_json::json!("gpt2"), "model_type"),
        ] {
            let mut c = config();
            c[key] = value;
            let err = shape(&c).err().unwrap_or_default();
            assert!(err.contains(named), "{key}: {err}");
        }
    }

    #[test]
    fn fnv_1a_matches_its_published_test_vectors() {
        let hash = |s: &str| {
            let mut h = Fnv::new();
            h.write(s.as_bytes());
            h.finish()
        };
        assert_eq!(hash(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(hash("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(hash("foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn a_missing_directory_is_named_with_the_setup_command() {
        let dir = Path::new("/nonexistent/giftgenius-model");
        let err = Model::load(dir).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("/nonexistent/giftgenius-model") && err.contains("cargo xtask setup"), "{err}");
    }
}
