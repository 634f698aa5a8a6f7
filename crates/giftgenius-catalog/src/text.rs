//! How text becomes the terms that interests and gifts meet on: whole words, lower-cased,
//! stopwords dropped, each stemmed by the English Snowball stemmer.
//!
//! One analysis for both sides, so the index, the linear scan and the reasons agree. Words, not
//! prefixes: "hip hop" never meets "hip belt" (a phrase needs all its words, `fit.rs`), "craft
//! beer" never meets the tag `crafts`, "pour-over" is "pour", never "headphones". The crude
//! suffix cut this replaced ("ing", "ers", "er", "es", "s") made "hip" of "hipster" and "new" of
//! "news".

use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// Words that say nothing about what a gift is or what a person likes: English function words
/// (Snowball's list, shortened) and the ways people wrap an interest when they speak ("loves
/// stargazing", "really into making beats", "a big fan of anime").
const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "him",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "more",
    "most",
    "my",
    "no",
    "nor",
    "not",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    // How people phrase an interest, not the interest.
    "love",
    "loves",
    "loving",
    "like",
    "likes",
    "enjoy",
    "enjoys",
    "really",
    "big",
    "huge",
    "fan",
    "fans",
    "anything",
    "everything",
    "thing",
    "things",
    "stuff",
    "kind",
    "kinds",
    "lot",
    "lots",
    "obsessed",
    "passionate",
];

/// Whether `word` (lower-case) is a stopword.
pub(super) fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(&word)
}

/// What a stem carries when Snowball took an "-ing" off its word: "knitting" is `knit~ing`, "knit"
/// and "knitted" are `knit`.
pub(super) const ING: &str = "~ing";

/// The stem of one lower-case word, an activity apart from its thing: Snowball makes one stem of
/// "knitting" and "knit", "gaming" and "game", "fishing" and "fish", "telescoping" and
/// "telescope", while in a gift's name they are different things (cable-knit socks are not for
/// knitting, a strategy board game not for gaming, a telescoping fishing rod not for stargazing,
/// fishing gear not for aquarium fish: the judged sets' rubric). So a word whose "-ing" Snowball
/// took off keeps it as [`ING`]; a word whose stem ends in "ing" itself ("ring", "earrings") is
/// as Snowball leaves it. Where the two forms mean the same for an interest, the related terms
/// say so ("camping": `camp` 1 in `related.txt`).
///
/// Each thread remembers the stems it made lately: a query
/// stems its interests, related terms and the words of the cards it explains, the same few
/// hundred words again and again (Snowball was a sixth of a query's instructions at 100,000
/// gifts). Only interests and catalog words come here, never the `about` text.
pub(super) fn stem(word: &str) -> String {
    /// Stems a thread keeps at most (then it forgets them all and starts again).
    const REMEMBERED: usize = 4096;
    thread_local! {
        static STEMS: std::cell::RefCell<foldhash::HashMap<Box<str>, Box<str>>> = Default::default();
    }
    STEMS.with_borrow_mut(|stems| {
        if let Some(stem) = stems.get(word) {
            return stem.to_string();
        }
        let mut stem = STEMMER.stem(word).into_owned();
        if (word.ends_with("ing") || word.ends_with("ings")) && !stem.ends_with("ing") {
            stem.push_str(ING);
        }
        if stems.len() >= REMEMBERED {
            stems.clear();
        }
        stems.insert(word.into(), stem.as_str().into());
        stem
    })
}

/// The words of a text as written (runs of letters and digits), each with its byte range.
pub(super) fn word_spans(text: &str) -> impl Iterator<Item = (usize, &str)> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(move |w| {
        // A piece of `split` is a slice of `text`: its offset is the distance between pointers.
        (w.as_ptr() as usize - text.as_ptr() as usize, w)
    })
}

/// Lower-cases a word, cheaply when it is ASCII.
pub(super) fn lower(word: &str) -> String {
    if word.is_ascii() { word.to_ascii_lowercase() } else { word.to_lowercase() }
}

/// Whether a lower-case word can be a term: two characters or more and not a stopword.
pub(super) fn content(word: &str) -> bool {
    word.chars().nth(1).is_some() && !is_stopword(word)
}

/// The stems of a text's content words, in order (repeats kept), accents folded ("café" meets
/// "cafe").
pub(super) fn stems(text: &str) -> Vec<String> {
    word_spans(text).map(|(_, w)| fold(&lower(w))).filter(|w| content(w)).map(|w| stem(&w)).collect()
}

/// A lower-case word without the accents of Spanish, Portuguese and French ("jardinería":
/// "jardineria"), so a word typed without them meets one written with them.
pub(super) fn fold(word: &str) -> String {
    if word.is_ascii() {
        return word.to_string();
    }
    word.chars()
        .map(|c| match c {
            'á' | 'à' | 'â' | 'ã' | 'ä' => 'a',
            'é' | 'è' | 'ê' | 'ë' => 'e',
            'í' | 'ì' | 'î' | 'ï' => 'i',
            'ó' | 'ò' | 'ô' | 'õ' | 'ö' => 'o',
            'ú' | 'ù' | 'û' | 'ü' => 'u',
            'ç' => 'c',
            'ñ' => 'n',
            other => other,
        })
        .collect()
}

/// A tag as words people say ("board-games": "board games").
pub(super) fn tag_surface(tag: &str) -> String {
    tag.replace(['-', '_'], " ").to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_meet_their_own_forms_and_no_one_elses() {
        assert_eq!(stems("Hiking hikes hiked"), ["hike~ing", "hike", "hike"]);
        assert_eq!(stems("gardening gardenings garden"), ["garden~ing", "garden~ing", "garden"]);
        assert_eq!(stems("dinner parties"), stems("dinner party"));
        assert_ne!(stems("hip"), stems("hipster"));
        assert_ne!(stems("crafts"), stems("craft beer"));
        assert_eq!(stems("self-care"), ["self", "care"]);
        assert_eq!(stems("loves stargazing"), ["stargaz~ing"]);
        assert_eq!(stems("into making beats"), ["make~ing", "beat"]);
        assert_eq!(stems("pour-over"), ["pour"]);
    }

    /// The activity is not its thing: an interest in knitting does not meet cable-knit socks, in
    /// gaming a board game, in stargazing a telescoping rod (while "telescopes" meets
    /// "telescope"). A word that ends in "ing" without Snowball taking it off stays as it is.
    #[test]
    fn an_activity_in_ing_is_not_its_thing() {
        assert_ne!(stems("knitting"), stems("Cable Knit"));
        assert_ne!(stems("knitting"), stems("knitted"));
        assert_eq!(stems("knit knitted"), ["knit", "knit"]);
        assert_ne!(stems("gaming"), stems("Board Game"));
        assert_eq!(stems("gaming"), stems("Gaming"));
        assert_ne!(stems("fishing"), stems("aquarium fish")[1..]);
        assert_ne!(stems("telescoping"), stems("telescope"));
        assert_eq!(stems("telescopes"), stems("telescope"));
        assert_eq!(stems("ring earrings string"), ["ring", "earring", "string"]);
    }

    #[test]
    fn a_tag_reads_as_people_say_it() {
        assert_eq!(tag_surface("board-games"), "board games");
        assert_eq!(stems("board-games"), ["board", "game"]);
    }

    #[test]
    fn spans_point_at_the_words_of_any_text() {
        let text = "Überraschung: café au-lait";
        let spans: Vec<(usize, &str)> = word_spans(text).collect();
        assert_eq!(spans.len(), 4);
        for (at, word) in spans {
            assert_eq!(&text[at..at + word.len()], word);
        }
    }
}
