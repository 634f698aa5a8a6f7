//! Embeddings kept by their text's content hash, saved to one file, so a catalog reload (or a
//! restart) embeds only the texts it has not seen before.
//!
//! The file: `GGEMBED\0`, format version (u32), dimension (u32), the model id's length (u32) and
//! bytes, the entry count (u64), then per entry the text's key (u64) and [`DIM`] f32 values, and
//! last a 64-bit FNV-1a of everything before it. All little-endian. A file of another version,
//! model or length, or with a wrong checksum, is refused as a whole with a [`CacheError`]; the
//! caller then starts empty and embeds everything again.

use crate::embedding::{DIM, Embedding};
use crate::model::{Fnv, Model};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"GGEMBED\0";
const VERSION: u32 = 1;
const ENTRY_BYTES: usize = 8 + DIM * 4;

/// The stable 64-bit key of a text: FNV-1a of its exact UTF-8 bytes, the same on every run,
/// platform and Rust version (std's hasher promises none of that).
pub fn text_key(text: &str) -> u64 {
    let mut h = Fnv::new();
    h.write(text.as_bytes());
    h.finish()
}

/// Why a cache file was not loaded or not saved.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("reading or writing {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not an embedding cache this version can read: {reason}")]
    Corrupt { path: PathBuf, reason: String },
    #[error("{path} holds embeddings of model {found}, not {expected}")]
    OtherModel { path: PathBuf, found: String, expected: String },
}

/// Embeddings by text key, for one model.
pub struct EmbeddingCache {
    model_id: String,
    entries: HashMap<u64, Embedding>,
}

impl EmbeddingCache {
    /// An empty cache for the model whose [`Model::id`] is `model_id`.
    pub fn new(model_id: &str) -> EmbeddingCache {
        EmbeddingCache { model_id: model_id.to_string(), entries: HashMap::new() }
    }

    /// The number of embeddings held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no embedding is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The embedding stored for `text`, if any.
    pub fn get(&self, text: &str) -> Option<&Embedding> {
        self.entries.get(&text_key(text))
    }

    /// Stores `text`'s embedding.
    pub fn insert(&mut self, text: &str, embedding: Embedding) {
        self.entries.insert(text_key(text), embedding);
    }

    /// Every text's embedding, in order: the cached ones as stored, the others computed with
    /// `model` in one [`Model::embed_many`] and stored. Returns them with the number computed.
    pub fn embed_all(&mut self, model: &Model, texts: &[&str]) -> (Vec<Embedding>, usize) {
        let mut missing: Vec<&str> = texts.iter().copied().filter(|t| self.get(t).is_none()).collect();
        missing.sort_unstable();
        missing.dedup();
        let computed = model.embed_many(&missing);
        let count = computed.len();
        for (text, e) in missing.iter().zip(computed) {
            self.insert(text, e);
        }
        let all = texts.iter().map(|t| self.get(t).cloned().unwrap_or(Embedding([0.0; DIM]))).collect();
        (all, count)
    }

    /// Drops every entry whose text is not in `texts` (after a reload removed gifts).
    pub fn retain_texts(&mut self, texts: &[&str]) {
        let keep: std::collections::HashSet<u64> = texts.iter().map(|t| text_key(t)).collect();
        self.entries.retain(|k, _| keep.contains(k));
    }

    /// Writes the cache to `path` (through a temporary file renamed over it, so a crash never
    /// leaves half a file under the real name).
    pub fn save(&self, path: &Path) -> Result<(), CacheError> {
        let mut bytes = Vec::with_capacity(64 + self.model_id.len() + self.entries.len() * ENTRY_BYTES);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&VERSION.to_le_bytes());
        bytes.extend_from_slice(&(DIM as u32).to_le_bytes());
        bytes.extend_from_slice(&(self.model_id.len() as u32).to_le_bytes());
        bytes.extend_from_slice(self.model_id.as_bytes());
        bytes.extend_from_slice(&(self.entries.len() as u64).to_le_bytes());
        // Sorted by key: the same cache always gives the same bytes.
        let mut keys: Vec<&u64> = self.entries.keys().collect();
        keys.sort_unstable();
        for key in keys {
            bytes.extend_from_slice(&key.to_le_bytes());
            for v in self.entries[key].values() {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
        }
        let mut h = Fnv::new();
        h.write(&bytes);
        bytes.extend_from_slice(&h.finish().to_le_bytes());
        let io = |source| CacheError::Io { path: path.to_path_buf(), source };
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(format!(".tmp{}", std::process::id()));
        std::fs::write(&tmp, &bytes).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io(e)
        })
    }

    /// Reads a cache saved by [`EmbeddingCache::save`] for the model `model_id`.
    pub fn load(path: &Path, model_id: &str) -> Result<EmbeddingCache, CacheError> {
        let bytes = std::fs::read(path).map_err(|source| CacheError::Io { path: path.to_path_buf(), source })?;
        Self::parse(path, &bytes, model_id)
    }

    /// The cache in `bytes`, read from `path` (named in errors).
    fn parse(path: &Path, bytes: &[u8], model_id: &str) -> Result<EmbeddingCache, CacheError> {
        let corrupt = |reason: &str| CacheError::Corrupt { path: path.to_path_buf(), reason: reason.to_string() };
        let Some((body, sum)) = bytes.split_last_chunk::<8>() else { return Err(corrupt("shorter than a header")) };
        let mut h = Fnv::new();
        h.write(body);
        if h.finish() != u64::from_le_bytes(*sum) {
            return Err(corrupt("checksum mismatch (truncated or damaged)"));
        }
        let mut r = Reader(body);
        if r.take(8) != Some(MAGIC.as_slice()) {
            return Err(corrupt("not an embedding cache (magic)"));
        }
        if r.u32() != Some(VERSION) || r.u32() != Some(DIM as u32) {
            return Err(corrupt("another format version or dimension"));
        }
        let id_len = r.u32().ok_or_else(|| corrupt("no model id"))? as usize;
        let found = r.take(id_len).and_then(|b| std::str::from_utf8(b).ok()).ok_or_else(|| corrupt("bad model id"))?;
        if found != model_id {
            return Err(CacheError::OtherModel {
                path: path.to_path_buf(),
                found: found.into(),
                expected: model_id.into(),
            });
        }
        let count = r.u64().ok_or_else(|| corrupt("no entry count"))?;
        if Some(r.0.len()) != usize::try_from(count).ok().and_then(|c| c.checked_mul(ENTRY_BYTES)) {
            return Err(corrupt("the entry count does not match the file's length"));
        }
        let mut entries = HashMap::with_capacity(r.0.len() / ENTRY_BYTES);
        for entry in r.0.chunks_exact(ENTRY_BYTES) {
            let (key, values) = entry.split_at(8);
            let key = u64::from_le_bytes(key.try_into().map_err(|_| corrupt("entry"))?);
            let mut v = [0f32; DIM];
            for (x, b) in v.iter_mut().zip(values.chunks_exact(4)) {
                *x = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
            if !v.iter().all(|x| x.is_finite()) {
                return Err(corrupt("a value is not a finite number"));
            }
            entries.insert(key, Embedding(v));
        }
        Ok(EmbeddingCache { model_id: model_id.to_string(), entries })
    }
}

impl std::fmt::Debug for EmbeddingCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EmbeddingCache({}, {} entries)", self.model_id, self.entries.len())
    }
}

/// Reads little-endian fields off the front of a byte slice.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4).and_then(|b| b.try_into().ok()).map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8).and_then(|b| b.try_into().ok()).map(u64::from_le_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vector(seed: f32) -> Embedding {
        Embedding(std::array::from_fn(|i| seed + i as f32 / 1000.0))
    }

    fn temp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("gg-meaning-cache-{}-{name}", std::process::id()))
    }

    fn saved(name: &str) -> (PathBuf, Vec<u8>) {
        let mut cache = EmbeddingCache::new("model-a");
        cache.insert("stargazing", vector(1.0));
        cache.insert("espresso", vector(-2.0));
        let path = temp(name);
        cache.save(&path).expect("saves");
        let bytes = std::fs::read(&path).expect("written");
        (path, bytes)
    }

    #[test]
    fn a_saved_cache_loads_with_the_same_embeddings() {
        let (path, _) = saved("roundtrip");
        let loaded = EmbeddingCache::load(&path, "model-a").expect("loads");
        assert_eq!(loaded.len(), 2);
        assert_eq!(loaded.get("stargazing"), Some(&vector(1.0)));
        assert_eq!(loaded.get("espresso"), Some(&vector(-2.0)));
        assert_eq!(loaded.get("Stargazing"), None, "the key is the exact text");
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn another_models_cache_is_refused_by_name() {
        let (path, _) = saved("model");
        let err = EmbeddingCache::load(&path, "model-b");
        assert!(matches!(err, Err(CacheError::OtherModel { ref found, .. }) if found == "model-a"), "{err:?}");
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn every_truncation_and_every_flipped_byte_is_refused_without_panic() {
        let (path, bytes) = saved("corrupt");
        // In memory: thousands of file writes would only test the file system.
        assert!(EmbeddingCache::parse(&path, &bytes, "model-a").is_ok());
        for cut in 0..bytes.len() {
            let parsed = EmbeddingCache::parse(&path, &bytes[..cut], "model-a");
            assert!(matches!(parsed, Err(CacheError::Corrupt { .. })), "cut {cut}");
        }
        for at in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x40;
            let parsed = EmbeddingCache::parse(&path, &damaged, "model-a");
            assert!(matches!(parsed, Err(CacheError::Corrupt { .. })), "flip at {at}");
        }
        // A file whose checksum is right but whose count lies is refused too.
        let mut lying = bytes[..bytes.len() - 8].to_vec();
        let count_at = 8 + 4 + 4 + 4 + "model-a".len();
        lying[count_at] = 3;
        let mut h = Fnv::new();
        h.write(&lying);
        lying.extend_from_slice(&h.finish().to_le_bytes());
        let parsed = EmbeddingCache::parse(&path, &lying, "model-a");
        assert!(
            matches!(parsed, Err(CacheError::Corrupt { ref reason, .. }) if reason.contains("count")),
            "{parsed:?}"
        );
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn a_missing_file_is_an_io_error() {
        assert!(matches!(EmbeddingCache::load(&temp("absent"), "m"), Err(CacheError::Io { .. })));
    }

    #[test]
    fn saving_is_deterministic_and_retain_drops_unlisted_texts() {
        let (path, first) = saved("det");
        let (path2, second) = saved("det2");
        assert_eq!(first, second);
        let mut cache = EmbeddingCache::load(&path, "model-a").expect("loads");
        cache.retain_texts(&["espresso", "new text"]);
        assert_eq!((cache.len(), cache.get("stargazing").is_none()), (1, true));
        for p in [path, path2] {
            let _ = std::fs::remove_file(p);
        }
    }

    #[test]
    fn text_keys_are_fnv_1a_of_the_exact_bytes() {
        assert_eq!(text_key("a"), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(text_key("space"), text_key("space "));
    }
}
