//! The terms nearest in meaning to a query: a brute-force scan of every term's vector.
//!
//! Brute force is simple and fast enough for a catalog's vocabulary (the bench example
//! measures 5,000 and 50,000 terms). The scan is a matrix product of the query with the terms'
//! unit vectors, done by the encoder's own dense-layer kernel: the vectors are kept as bfloat16
//! (half the memory to stream through; a cosine is then within about 0.002 of the exact one).

use crate::embedding::{DIM, Embedding, dot};
use crate::linear::Linear;

/// Terms and their embeddings, searchable by cosine similarity.
pub struct Neighbours {
    terms: Vec<String>,
    /// Output `i` is term `i`'s vector scaled to unit length, so it gives the cosine.
    vectors: Linear,
}

impl Neighbours {
    /// Indexes `terms` in the order given: [`Neighbours::nearest`] answers with these indices.
    pub fn new(terms: Vec<(String, Embedding)>) -> Neighbours {
        let mut vectors = Vec::with_capacity(terms.len() * DIM);
        let terms: Vec<String> = terms
            .into_iter()
            .map(|(term, e)| {
                vectors.extend_from_slice(&unit(e.values()).map(|v| if v.is_finite() { v } else { 0.0 }));
                term
            })
            .collect();
        let count = terms.len();
        Neighbours { terms, vectors: Linear::new(vectors, vec![0.0; count], DIM, count) }
    }

    /// The number of terms.
    pub fn len(&self) -> usize {
        self.terms.len()
    }

    /// Whether there are no terms.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Term `index`'s text, as given to [`Neighbours::new`].
    pub fn term(&self, index: usize) -> Option<&str> {
        self.terms.get(index).map(String::as_str)
    }

    /// At most `k` terms whose cosine with `query` is at least `min_cosine`, most similar first
    /// (equal similarities in index order), each as (index, cosine).
    pub fn nearest(&self, query: &Embedding, k: usize, min_cosine: f32) -> Vec<(usize, f32)> {
        // Kept sorted best first; a candidate enters when it beats the worst kept one.
        let mut best: Vec<(usize, f32)> = Vec::with_capacity(k + 1);
        if k == 0 || self.terms.is_empty() {
            return best;
        }
        let mut scores = vec![0f32; self.terms.len()];
        self.vectors.forward(&unit(query.values()), &mut scores);
        for (i, &score) in scores.iter().enumerate() {
            if score.is_nan() || score < min_cosine || (best.len() == k && score <= best[k - 1].1) {
                continue;
            }
            let at = best.partition_point(|&(_, s)| s >= score);
            best.insert(at, (i, score));
            best.truncate(k);
        }
        best
    }
}

/// `v` scaled to unit length (zero stays zero).
fn unit(v: &[f32; DIM]) -> [f32; DIM] {
    let norm = dot(v, v).sqrt();
    if norm > 0.0 { v.map(|x| x / norm) } else { *v }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A vector pointing mostly along `axis`, tilted towards axis 0 by `tilt`.
    fn toward(axis: usize, tilt: f32) -> Embedding {
        let mut v = [0f32; DIM];
        v[axis] = 1.0;
        v[0] += tilt;
        Embedding::from_values(v)
    }

    fn index() -> Neighbours {
        Neighbours::new(vec![
            ("far".into(), toward(5, 0.0)),
            ("close".into(), toward(1, 3.0)),
            ("closer".into(), toward(2, 10.0)),
            ("same as close".into(), toward(3, 3.0)),
        ])
    }

    #[test]
    fn the_most_similar_come_first_and_ties_keep_index_order() {
        let near = index().nearest(&toward(0, 0.0), 3, -1.0);
        let order: Vec<usize> = near.iter().map(|&(i, _)| i).collect();
        assert_eq!(order, [2, 1, 3]);
        assert!((near[1].1 - 3.0 / 10f32.sqrt()).abs() < 2e-3, "{near:?}");
    }

    #[test]
    fn min_cosine_and_k_both_limit_the_answer() {
        let index = index();
        let query = toward(0, 0.0);
        assert_eq!(index.nearest(&query, 10, 0.5).len(), 3);
        assert_eq!(index.nearest(&query, 10, 0.99).len(), 1);
        assert_eq!(index.nearest(&query, 10, -1.0).len(), 4);
        assert!(index.nearest(&query, 0, -1.0).is_empty());
        assert_eq!(index.term(2), Some("closer"));
    }

    #[test]
    fn a_query_of_nan_or_zeros_finds_nothing_above_zero() {
        let index = index();
        assert!(index.nearest(&Embedding::from_values([f32::NAN; DIM]), 5, -1.0).is_empty());
        assert!(index.nearest(&Embedding::from_values([0.0; DIM]), 5, 0.1).is_empty());
    }
}
