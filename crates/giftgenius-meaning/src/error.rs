//! Why a model could not be loaded: each variant names the file and what is wrong with it, so
//! the message tells the operator what to fix (usually: run `cargo xtask setup`).

use std::path::PathBuf;

/// A model directory that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The directory itself is not there.
    #[error(
        "model directory {dir} does not exist: run `cargo xtask setup`, which installs all-MiniLM-L6-v2 into \
         $GIFTGENIUS_MODEL_DIR or else ~/.cache/giftgenius/models/all-MiniLM-L6-v2 (the files needed: \
         model.safetensors, tokenizer.json and config.json)"
    )]
    MissingDir { dir: PathBuf },
    /// A file the model needs is not in the directory.
    #[error("{path} is missing: run `cargo xtask setup` to install the model again")]
    MissingFile { path: PathBuf },
    /// A file exists but could not be read.
    #[error("reading {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file's content is not what the model needs (bad JSON, a bad safetensors header, an
    /// unsupported setting).
    #[error("{path}: {reason}")]
    Malformed { path: PathBuf, reason: String },
    /// A tensor is absent, of the wrong type or shape, or outside the file.
    #[error("{path}: tensor `{name}`: {reason}")]
    Tensor { path: PathBuf, name: String, reason: String },
}
