//! A damaged model directory is refused with an error naming the file and what is wrong,
//! never a panic: each case copies the real files into a temporary directory and breaks one.

use giftgenius_meaning::{Model, ModelError, default_dir};
use std::path::{Path, PathBuf};

const FILES: [&str; 3] = ["model.safetensors", "tokenizer.json", "config.json"];

/// A temporary copy of the model directory in which `name` holds `content` (or is absent).
fn broken(case: &str, name: &str, content: Option<Vec<u8>>) -> PathBuf {
    crate::model(); // fails first, with the setup message, when the model is missing
    let source = default_dir().expect("a model directory");
    let dir = std::env::temp_dir().join(format!("gg-meaning-load-{}-{case}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    for file in FILES.iter().filter(|f| **f != name) {
        // Hard links keep the 90 MB weights from being copied for every case.
        let (from, to) = (source.join(file), dir.join(file));
        std::fs::hard_link(&from, &to).or_else(|_| std::fs::copy(&from, &to).map(|_| ())).expect("copy");
    }
    if let Some(bytes) = content {
        std::fs::write(dir.join(name), bytes).expect("write");
    }
    dir
}

fn load(dir: &Path) -> Result<Model, ModelError> {
    let result = Model::load(dir);
    let _ = std::fs::remove_dir_all(dir);
    result
}

fn real(name: &str) -> Vec<u8> {
    std::fs::read(default_dir().expect("dir").join(name)).expect("the real file")
}

#[test]
fn a_missing_file_is_named() {
    for name in FILES {
        let err = load(&broken(&format!("missing-{name}"), name, None)).err();
        assert!(matches!(err, Some(ModelError::MissingFile { ref path }) if path.ends_with(name)), "{name}: {err:?}");
    }
}

#[test]
fn truncated_weights_are_refused_naming_a_tensor() {
    let weights = real("model.safetensors");
    // (The file ends with the pooler's weights, which a sentence embedding does not use: a cut
    // there is no loss.)
    for cut in [0, 7, 100, 20_000, weights.len() / 2, 87_000_000] {
        let err = load(&broken(&format!("cut{cut}"), "model.safetensors", Some(weights[..cut].to_vec()))).err();
        assert!(matches!(err, Some(ModelError::Malformed { .. } | ModelError::Tensor { .. })), "cut at {cut}: {err:?}");
    }
}

#[test]
fn json_files_that_are_not_json_or_not_the_expected_kind_are_malformed() {
    let cases: [(&str, &[u8]); 4] = [
        ("tokenizer.json", b"{not json"),
        ("tokenizer.json", br#"{"model": {"type": "BPE"}}"#),
        ("config.json", b"[]"),
        ("config.json", br#"{"model_type": "bert", "hidden_act": "gelu", "hidden_size": 768}"#),
    ];
    for (i, (name, bytes)) in cases.into_iter().enumerate() {
        let err = load(&broken(&format!("json{i}"), name, Some(bytes.to_vec()))).err();
        assert!(matches!(err, Some(ModelError::Malformed { ref path, .. }) if path.ends_with(name)), "{name}: {err:?}");
    }
}

#[test]
fn a_config_whose_sizes_disagree_with_the_weights_names_the_tensor() {
    let config = String::from_utf8(real("config.json")).expect("utf-8");
    let wrong = config.replace("\"intermediate_size\": 1536", "\"intermediate_size\": 1024");
    assert!(wrong != config, "the config's layout changed; update this test");
    let err = load(&broken("shape", "config.json", Some(wrong.into_bytes()))).err();
    assert!(matches!(err, Some(ModelError::Tensor { ref name, .. }) if name.contains("intermediate")), "{err:?}");
}

#[test]
fn a_vocabulary_id_outside_the_embedding_table_is_refused() {
    let tokenizer = String::from_utf8(real("tokenizer.json")).expect("utf-8");
    let wrong = tokenizer.replacen("\"[MASK]\":103", "\"[MASK]\":99999", 1);
    assert!(wrong != tokenizer, "the tokenizer's layout changed; update this test");
    let err = load(&broken("vocab", "tokenizer.json", Some(wrong.into_bytes()))).err();
    let text = err.as_ref().map(ToString::to_string).unwrap_or_default();
    assert!(text.contains("99999"), "{err:?}");
}
