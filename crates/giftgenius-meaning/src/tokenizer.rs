//! BERT's WordPiece tokenizer, written from the model's `tokenizer.json`, giving the same ids as
//! Hugging Face `tokenizers` with that file (the reference test checks tricky strings).
//!
//! The steps, in the reference's order:
//! 1. the special tokens (`[CLS]`, `[UNK]`, …) written literally in the text are kept whole;
//! 2. the rest is normalised: control characters dropped, whitespace made a space, each CJK
//!    ideograph padded with spaces, accents stripped (NFD, then nonspacing marks dropped),
//!    lowercased;
//! 3. split on whitespace, and every punctuation character becomes a word of its own;
//! 4. each word becomes the longest vocabulary pieces from the left (`##` marks a piece inside a
//!    word); a word longer than 100 characters, or one some part of which no piece matches, is
//!    `[UNK]`;
//! 5. `[CLS]` … `[SEP]`, cut to at most [`crate::MAX_TOKENS`] ids in all.

use std::collections::HashMap;
use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

/// The tokenizer's data: the vocabulary split by position in a word.
pub(crate) struct Tokenizer {
    /// Pieces that start a word.
    first: HashMap<Box<str>, u32>,
    /// Pieces inside a word, stored without their `##`.
    inner: HashMap<Box<str>, u32>,
    /// Special tokens matched literally in the raw text, e.g. `("[CLS]", 101)`.
    specials: Vec<(Box<str>, u32)>,
    unk: u32,
    cls: u32,
    sep: u32,
    max_word_chars: usize,
}

impl Tokenizer {
    /// Reads a `tokenizer.json` of the BERT kind; the `Err` says what is missing or unsupported.
    pub(crate) fn from_json(json: &serde_json::Value) -> Result<Tokenizer, String> {
        let model = json.get("model").ok_or("no `model`")?;
        let kind = model.get("type").and_then(|t| t.as_str());
        if kind != Some("WordPiece") {
            return Err(format!("model type {kind:?}, expected \"WordPiece\""));
        }
        let prefix = model.get("continuing_subword_prefix").and_then(|p| p.as_str()).unwrap_or("##");
        let max_word_chars = model.get("max_input_chars_per_word").and_then(|m| m.as_u64()).unwrap_or(100) as usize;
        let vocab = model.get("vocab").and_then(|v| v.as_object()).ok_or("no `model.vocab` object")?;
        let mut first = HashMap::with_capacity(vocab.len());
        let mut inner = HashMap::new();
        for (piece, id) in vocab {
            let id =
                id.as_u64().and_then(|i| u32::try_from(i).ok()).ok_or_else(|| format!("vocab `{piece}`: id {id}"))?;
            match piece.strip_prefix(prefix) {
                Some(rest) if !rest.is_empty() => inner.insert(rest.into(), id),
                _ => first.insert(piece.as_str().into(), id),
            };
        }
        let normalizer = json.get("normalizer").ok_or("no `normalizer`")?;
        let flag = |name: &str| normalizer.get(name).and_then(|v| v.as_bool());
        // What this code implements; anything else would silently tokenize differently.
        let kind = normalizer.get("type").and_then(|t| t.as_str());
        let lowercase = flag("lowercase") == Some(true);
        let strip = flag("strip_accents").unwrap_or(lowercase);
        if kind != Some("BertNormalizer")
            || flag("clean_text") != Some(true)
            || flag("handle_chinese_chars") != Some(true)
            || !lowercase
            || !strip
        {
            return Err(format!(
                "normalizer {normalizer}: only a lowercasing, accent-stripping BertNormalizer is supported"
            ));
        }
        let mut specials = Vec::new();
        for token in json.get("added_tokens").and_then(|a| a.as_array()).into_iter().flatten() {
            let content = token.get("content").and_then(|c| c.as_str()).filter(|c| !c.is_empty());
            let id = token.get("id").and_then(|i| i.as_u64()).and_then(|i| u32::try_from(i).ok());
            if let (Some(content), Some(id)) = (content, id) {
                specials.push((content.into(), id));
            }
        }
        let special = |name: &str| first.get(name).copied().ok_or_else(|| format!("the vocabulary has no {name}"));
        Ok(Tokenizer {
            unk: special("[UNK]")?,
            cls: special("[CLS]")?,
            sep: special("[SEP]")?,
            first,
            inner,
            specials,
            max_word_chars,
        })
    }

    /// The largest id this tokenizer can give (`None` for an empty vocabulary).
    pub(crate) fn max_id(&self) -> Option<u32> {
        let specials = self.specials.iter().map(|(_, id)| *id);
        self.first.values().chain(self.inner.values()).copied().chain(specials).max()
    }

    /// The ids the model reads for `text`: `[CLS]`, the text's pieces, `[SEP]`; at most
    /// `max_len` (≥ 2) in all, the text's end cut off when longer.
    pub(crate) fn encode(&self, text: &str, max_len: usize) -> Vec<u32> {
        let mut ids = vec![self.cls];
        let mut rest = text;
        while !rest.is_empty() {
            let (before, special) = self.next_special(rest);
            self.encode_plain(&rest[..before], &mut ids);
            match special {
                Some((len, id)) => {
                    ids.push(id);
                    rest = &rest[before + len..];
                }
                None => break,
            }
        }
        ids.truncate(max_len.max(2) - 1);
        ids.push(self.sep);
        ids
    }

    /// Where the first special token written in `text` starts, with its length and id.
    fn next_special(&self, text: &str) -> (usize, Option<(usize, u32)>) {
        self.specials
            .iter()
            .filter_map(|(s, id)| text.find(&**s).map(|at| (at, s.len(), *id)))
            .min_by_key(|&(at, len, _)| (at, std::cmp::Reverse(len)))
            .map_or((text.len(), None), |(at, len, id)| (at, Some((len, id))))
    }

    fn encode_plain(&self, text: &str, ids: &mut Vec<u32>) {
        let normal = normalize(text);
        let mut word = String::new();
        for c in normal.chars() {
            if c.is_whitespace() || is_punctuation(c) {
                self.word_pieces(&word, ids);
                word.clear();
                if !c.is_whitespace() {
                    let mut buf = [0u8; 4];
                    self.word_pieces(c.encode_utf8(&mut buf), ids);
                }
            } else {
                word.push(c);
            }
        }
        self.word_pieces(&word, ids);
    }

    /// Greedy longest-match WordPiece of one word (nothing for an empty one).
    fn word_pieces(&self, word: &str, ids: &mut Vec<u32>) {
        if word.is_empty() {
            return;
        }
        if word.chars().count() > self.max_word_chars {
            ids.push(self.unk);
            return;
        }
        let start_len = ids.len();
        let mut start = 0;
        while start < word.len() {
            let vocab = if start == 0 { &self.first } else { &self.inner };
            let mut end = word.len();
            let found = loop {
                if let Some(&id) = vocab.get(&word[start..end]) {
                    break Some(id);
                }
                // The previous character boundary; none left means no piece matches.
                match word[start..end].char_indices().next_back() {
                    Some((0, _)) | None => break None,
                    Some((last, _)) => end = start + last,
                }
            };
            match found {
                Some(id) => {
                    ids.push(id);
                    start = end;
                }
                None => {
                    ids.truncate(start_len);
                    ids.push(self.unk);
                    return;
                }
            }
        }
    }
}

/// BertNormalizer with clean_text, handle_chinese_chars, strip_accents and lowercase.
fn normalize(text: &str) -> String {
    let mut cleaned = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || is_control(c) {
            continue;
        }
        if is_whitespace(c) {
            cleaned.push(' ');
        } else if is_cjk(c) {
            cleaned.push(' ');
            cleaned.push(c);
            cleaned.push(' ');
        } else {
            cleaned.push(c);
        }
    }
    let stripped = cleaned.nfd().filter(|&c| get_general_category(c) != GeneralCategory::NonspacingMark);
    stripped.flat_map(char::to_lowercase).collect()
}

fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

/// Control, format, private-use and surrogate characters, except the whitespace controls. Not
/// unassigned ones: the reference keeps those (they become `[UNK]`), and so does a character
/// assigned after its Unicode tables, such as a new emoji.
fn is_control(c: char) -> bool {
    use GeneralCategory::*;
    !matches!(c, '\t' | '\n' | '\r') && matches!(get_general_category(c), Control | Format | PrivateUse | Surrogate)
}

/// ASCII punctuation (which includes symbols such as `$`, `+`, `^`) and Unicode punctuation.
fn is_punctuation(c: char) -> bool {
    use GeneralCategory::*;
    c.is_ascii_punctuation()
        || matches!(
            get_general_category(c),
            ConnectorPunctuation
                | DashPunctuation
                | ClosePunctuation
                | FinalPunctuation
                | InitialPunctuation
                | OtherPunctuation
                | OpenPunctuation
        )
}

/// The CJK Unified Ideographs blocks BERT treats as words of their own.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B920..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A vocabulary small enough to reason about by hand.
    fn tiny() -> Tokenizer {
        let vocab = serde_json::json!({
            "[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3,
            "star": 4, "##gaz": 5, "##ing": 6, "stargaz": 7, "cafe": 8, "!": 9, "a": 10, "##a": 11
        });
        let json = serde_json::json!({
            "added_tokens": [{"id": 2, "content": "[CLS]"}, {"id": 3, "content": "[SEP]"}],
            "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                           "strip_accents": null, "lowercase": true},
            "model": {"type": "WordPiece", "vocab": vocab, "max_input_chars_per_word": 12}
        });
        Tokenizer::from_json(&json).expect("a valid tokenizer")
    }

    #[test]
    fn the_longest_piece_wins_and_inner_pieces_use_the_prefixed_vocabulary() {
        // "stargaz" beats "star" + "##gaz"; "ing" is only an inner piece.
        assert_eq!(tiny().encode("Stargazing", 128), [2, 7, 6, 3]);
    }

    #[test]
    fn accents_case_and_punctuation_are_normalised_away_or_split() {
        assert_eq!(tiny().encode("  CAFÉ!cafe\t", 128), [2, 8, 9, 8, 3]);
    }

    #[test]
    fn a_word_with_an_unmatched_part_is_one_unk() {
        assert_eq!(tiny().encode("starx a", 128), [2, 1, 10, 3]);
    }

    #[test]
    fn a_word_over_the_character_limit_is_one_unk_even_if_pieces_match() {
        let (long, limit) = ("a".repeat(13), "a".repeat(12));
        let mut expected = vec![2, 1, 10];
        expected.extend([11; 11]);
        expected.push(3);
        assert_eq!(tiny().encode(&format!("{long} {limit}"), 128), expected);
    }

    #[test]
    fn special_tokens_written_in_the_text_stay_whole() {
        assert_eq!(tiny().encode("a[SEP]a", 128), [2, 10, 3, 10, 3]);
    }

    #[test]
    fn truncation_keeps_cls_and_sep_within_the_limit() {
        assert_eq!(tiny().encode("a a a a a a", 4), [2, 10, 10, 3]);
        assert_eq!(tiny().encode("", 128), [2, 3]);
    }

    #[test]
    fn cjk_ideographs_are_words_of_their_own_and_controls_vanish() {
        // Unknown ideographs each become one [UNK]; the NUL and the soft hyphen (Cf) are dropped.
        assert_eq!(tiny().encode("星空\0a\u{ad}a", 128), [2, 1, 1, 10, 11, 3]);
    }

    #[test]
    fn a_tokenizer_of_another_kind_is_refused_with_the_reason() {
        let json = serde_json::json!({"model": {"type": "BPE", "vocab": {}}});
        let err = Tokenizer::from_json(&json).err().unwrap_or_default();
        assert!(err.contains("BPE"), "{err}");
    }
}
