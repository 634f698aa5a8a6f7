//! Tests of the real model: they need its files, found through `default_dir()` (where `cargo
//! xtask setup` and `cargo xtask test` install them). A missing model fails the test with the
//! command that installs it: a test that skipped silently would prove nothing.

mod any_text;
mod load;
mod reference;
mod semantics;

use giftgenius_meaning::{Model, default_dir};
use std::sync::OnceLock;

/// The model, loaded once for every test of this binary.
pub fn model() -> &'static Model {
    static MODEL: OnceLock<Model> = OnceLock::new();
    MODEL.get_or_init(|| {
        let dir = default_dir().unwrap_or_else(|e| panic!("{e}"));
        Model::load(&dir).unwrap_or_else(|e| {
            panic!(
                "these tests need all-MiniLM-L6-v2 at {}: run `cargo xtask setup` (or `cargo xtask test`, which \
                 installs it first), or set GIFTGENIUS_MODEL_DIR to a directory holding it.\n{e}",
                dir.display()
            )
        })
    })
}
