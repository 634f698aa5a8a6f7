//! Okapi BM25, the textbook lexical baseline (k1 = 1.2, b = 0.75): one text per document,
//! lower-cased words, no stemming and no stop words (`docs/quality.md`).

use std::collections::HashMap;

pub const K1: f64 = 1.2;
pub const B: f64 = 0.75;

/// The words of a text: runs of letters or digits, lower-cased ("Hand-thrown" → "hand", "thrown").
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase)
}

/// The index: per document its term counts and length, and per term how many documents hold it.
#[derive(Debug)]
pub struct Bm25 {
    counts: Vec<HashMap<String, u32>>,
    lengths: Vec<u32>,
    holding: HashMap<String, u32>,
    average_length: f64,
}

impl Bm25 {
    pub fn new<S: AsRef<str>>(texts: impl IntoIterator<Item = S>) -> Bm25 {
        let mut counts = Vec::new();
        let mut lengths = Vec::new();
        let mut holding: HashMap<String, u32> = HashMap::new();
        for text in texts {
            let mut count: HashMap<String, u32> = HashMap::new();
            let mut length = 0;
            for word in words(text.as_ref()) {
                *count.entry(word).or_default() += 1;
                length += 1;
            }
            for term in count.keys() {
                *holding.entry(term.clone()).or_default() += 1;
            }
            counts.push(count);
            lengths.push(length);
        }
        let average_length = if lengths.is_empty() {
            0.0
        } else {
            lengths.iter().map(|&l| f64::from(l)).sum::<f64>() / lengths.len() as f64
        };
        Bm25 { counts, lengths, holding, average_length }
    }

    pub fn len(&self) -> usize {
        self.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// ln(1 + (N − n + 0.5) / (n + 0.5)): the form that stays positive for a term in most
    /// documents (Lucene's), where the original ln((N − n + 0.5) / (n + 0.5)) turns negative.
    pub fn idf(&self, term: &str) -> f64 {
        let n = f64::from(self.holding.get(term).copied().unwrap_or(0));
        let all = self.counts.len() as f64;
        (1.0 + (all - n + 0.5) / (n + 0.5)).ln()
    }

    /// The score of document `doc` for the query `terms` (each distinct term counted once).
    pub fn score(&self, doc: usize, terms: &[String]) -> f64 {
        let (Some(counts), Some(&length)) = (self.counts.get(doc), self.lengths.get(doc)) else { return 0.0 };
        let mut seen: Vec<&str> = Vec::with_capacity(terms.len());
        let mut score = 0.0;
        for term in terms {
            if seen.contains(&term.as_str()) {
                continue;
            }
            seen.push(term);
            let Some(&tf) = counts.get(term) else { continue };
            let tf = f64::from(tf);
            let norm = 1.0 - B + B * f64::from(length) / self.average_length;
            score += self.idf(term) * tf * (K1 + 1.0) / (tf + K1 * norm);
        }
        score
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        words(text).collect()
    }

    #[test]
    fn words_are_lower_cased_runs_of_letters_and_digits() {
        assert_eq!(
            terms("Hand-thrown Pour-Over SET, 2 cups; café"),
            ["hand", "thrown", "pour", "over", "set", "2", "cups", "café"]
        );
    }

    #[test]
    fn scores_match_the_okapi_formula_worked_by_hand() {
        // Two documents of 2 and 3 words: average length 2.5.
        let index = Bm25::new(["a b", "a c c"]);
        // "c" is in one of two documents: idf = ln(1 + 1.5 / 1.5) = ln 2. In the second document
        // tf = 2, length 3: ln 2 × 2 × 2.2 / (2 + 1.2 × (0.25 + 0.75 × 3 / 2.5)) = 0.902322.
        assert!((index.score(1, &terms("c")) - 0.902322).abs() < 1e-6);
        // "a" is in both: idf = ln(1 + 0.5 / 2.5) = 0.182322; first document tf 1, length 2:
        // 0.182322 × 2.2 / (1 + 1.2 × (0.25 + 0.75 × 2 / 2.5)) = 0.198568.
        assert!((index.score(0, &terms("a")) - 0.198568).abs() < 1e-6);
        assert_eq!(index.score(0, &terms("c")), 0.0, "a term the document lacks adds nothing");
        assert_eq!(index.score(1, &terms("c c")), index.score(1, &terms("c")), "a repeated query term counts once");
        assert_eq!(index.score(9, &terms("a")), 0.0, "no such document");
    }

    #[test]
    fn a_rarer_term_and_a_shorter_document_score_higher() {
        let index =
            Bm25::new(["coffee mug", "coffee grinder with a walnut handle and steel burrs", "tea kettle coffee"]);
        assert!(index.idf("walnut") > index.idf("coffee"));
        assert!(index.score(0, &terms("coffee")) > index.score(1, &terms("coffee")));
        assert!(index.idf("coffee") > 0.0, "a term in every document still counts a little");
    }
}
