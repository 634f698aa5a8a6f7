//! Related terms: the catalog words an interest can be met through besides its own.
//!
//! Two producers feed the plan (`fit.rs`): the built-in [`Vocabulary`] (`related.txt`: what
//! people say in English, Spanish and Portuguese → the English words catalogs use), always on;
//! and a [`RelatedTerms`] hook held by the `Catalog` (a sentence-embedding model that answers
//! the catalog's own words nearest in meaning), none until one is wired. Either answers surface
//! words ("astronomy", "board games"), which the plan analyses like any text, so they meet the
//! index's terms exactly as the gift's own words do.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::text;

/// Catalog terms related to an interest, nearest in meaning first: the embedding side.
///
/// `related(interest)` answers `(term, cosine)` pairs: `term` a word or whole tag of the catalog
/// as [`super::Index::vocabulary`] lists it (lower-case surface form, a tag's '-' as a space),
/// `cosine` the model's similarity (~0.3–0.9). The plan maps a cosine to a weight with
/// [`weight_of_cosine`], keeps the [`super::fit::MAX_RELATED`] strongest, and weights every
/// related match below an exact match of the interest's own words in the same field. Called once
/// per interest per query: an implementation caches what it embeds. It must not block for long
/// (it runs on the ranking path) and must answer the same for the same interest.
pub trait RelatedTerms: Send + Sync {
    fn related(&self, interest: &str) -> Vec<(String, f32)>;
    /// The same for a text asked once and never to be remembered (what the person said about
    /// the recipient, `about`): an implementation must not cache or log it.
    fn related_once(&self, text: &str) -> Vec<(String, f32)> {
        self.related(text)
    }
}

/// A model's cosine as a related term's weight, 0–1: nothing below 0.35 (unrelated words of
/// short phrases score that much), all from 0.85.
pub fn weight_of_cosine(cosine: f32) -> f32 {
    ((cosine - 0.35) / 0.5).clamp(0.0, 1.0)
}

/// The built-in vocabulary of `related.txt`.
#[derive(Debug, Default)]
pub struct Vocabulary {
    /// Key (the interest's analysed words) → related terms and weights.
    entries: HashMap<String, Vec<(String, f32)>>,
}

/// Spanish and Portuguese function words, dropped from a key (English ones are stopwords).
const FUNCTION_WORDS: &[&str] = &[
    "de", "del", "la", "las", "el", "los", "y", "en", "un", "una", "con", "para", "por", "mi", "da", "do", "das",
    "dos", "os", "em", "um", "uma", "com", "meu", "minha", "gusta", "gosta", "le", "lhe",
];

impl Vocabulary {
    /// The one built into the binary.
    pub fn builtin() -> &'static Vocabulary {
        static BUILTIN: LazyLock<Vocabulary> = LazyLock::new(|| Vocabulary::parse(include_str!("related.txt")));
        &BUILTIN
    }

    /// Reads lines `key | key ...: term weight, term weight` (`#` starts a comment). A line that
    /// does not parse is skipped (a test checks the built-in file has none).
    pub fn parse(source: &str) -> Vocabulary {
        let mut entries: HashMap<String, Vec<(String, f32)>> = HashMap::new();
        for line in source.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            let Some((keys, terms)) = line.split_once(':') else { continue };
            let terms: Vec<(String, f32)> = terms.split(',').filter_map(parse_term).collect();
            for key in keys.split('|').map(key_of).filter(|k| !k.is_empty()) {
                entries.entry(key).or_default().extend(terms.iter().cloned());
            }
        }
        Vocabulary { entries }
    }

    /// The lines of `source` that say something but do not parse (for the test of the file).
    #[cfg(test)]
    fn bad_lines(source: &str) -> Vec<&str> {
        source
            .lines()
            .filter(|l| {
                let l = l.split('#').next().unwrap_or("").trim();
                !l.is_empty()
                    && l.split_once(':').is_none_or(|(keys, terms)| {
                        keys.trim().is_empty() || terms.split(',').any(|t| parse_term(t).is_none())
                    })
            })
            .collect()
    }

    fn lookup(&self, key: &str) -> &[(String, f32)] {
        self.entries.get(key).map_or(&[], Vec::as_slice)
    }
}

impl RelatedTerms for Vocabulary {
    /// The entry of the whole interest; else of each of its words, a little weaker (one word of
    /// several says less about the whole).
    fn related(&self, interest: &str) -> Vec<(String, f32)> {
        let key = key_of(interest);
        let whole = self.lookup(&key);
        if !whole.is_empty() {
            return whole.to_vec();
        }
        let words: Vec<&str> = key.split(' ').collect();
        if words.len() < 2 {
            return Vec::new();
        }
        words.iter().flat_map(|w| self.lookup(w)).map(|(t, w)| (t.clone(), w * 0.8)).collect()
    }
}

/// "hiking 1.0" → ("hiking", 1.0); "hiking" alone weighs 1.
fn parse_term(term: &str) -> Option<(String, f32)> {
    let term = term.trim();
    if term.is_empty() {
        return None;
    }
    match term.rsplit_once(' ') {
        Some((words, weight)) if weight.parse::<f32>().is_ok() => {
            let weight: f32 = weight.parse().ok()?;
            (0.0..=1.0).contains(&weight).then(|| (words.trim().to_string(), weight))
        }
        _ => Some((term.to_string(), 1.0)),
    }
}

/// A key as lookups and the file agree on: the stems of its content words, accents folded,
/// Spanish and Portuguese function words dropped.
fn key_of(text: &str) -> String {
    let folded = text::fold(&text.to_lowercase());
    let kept: Vec<&str> =
        folded.split(|c: char| !c.is_alphanumeric()).filter(|w| !FUNCTION_WORDS.contains(w)).collect();
    text::stems(&kept.join(" ")).join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_file_parses_whole() {
        assert_eq!(Vocabulary::bad_lines(include_str!("related.txt")), Vec::<&str>::new());
        assert!(Vocabulary::builtin().entries.len() >= 200, "{}", Vocabulary::builtin().entries.len());
    }

    #[test]
    fn interests_in_three_languages_meet_the_catalogs_words() {
        let v = Vocabulary::builtin();
        let has = |interest: &str, term: &str| v.related(interest).iter().any(|(t, _)| t == term);
        assert!(has("senderismo", "hiking"));
        assert!(has("caminhada", "hiking"));
        assert!(has("Café", "coffee"));
        assert!(has("cafe", "coffee"));
        assert!(has("jardinería", "gardening"));
        assert!(has("cozinhar", "cooking"));
        assert!(has("loves stargazing", "astronomy"));
        assert!(v.related("zyzzyva").is_empty());
    }

    #[test]
    fn a_cosine_becomes_a_weight_from_zero_to_one() {
        assert_eq!(weight_of_cosine(0.2), 0.0);
        assert_eq!(weight_of_cosine(0.95), 1.0);
        assert!(weight_of_cosine(0.5) > 0.0 && weight_of_cosine(0.5) < weight_of_cosine(0.7));
    }
}
