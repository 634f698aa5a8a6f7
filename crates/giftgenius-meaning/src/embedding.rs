//! One text's meaning: a 384-dimension vector of unit length.

/// The model's output size (all-MiniLM-L6-v2's hidden size).
pub const DIM: usize = 384;

/// A sentence embedding: [`DIM`] values, L2-normalised by the model (so [`Embedding::dot`] is
/// the cosine of two model outputs).
#[derive(Clone, PartialEq)]
pub struct Embedding(pub(crate) [f32; DIM]);

impl Embedding {
    /// An embedding from its values, taken as they are (not normalised; [`Embedding::cosine`]
    /// does not need it).
    pub fn from_values(values: [f32; DIM]) -> Embedding {
        Embedding(values)
    }

    /// The values.
    pub fn values(&self) -> &[f32; DIM] {
        &self.0
    }

    /// The dot product; equal to the cosine for two model outputs (both of unit length).
    pub fn dot(&self, other: &Embedding) -> f32 {
        dot(&self.0, &other.0)
    }

    /// The cosine similarity, in [-1, 1]; 0 when either vector is zero.
    pub fn cosine(&self, other: &Embedding) -> f32 {
        let norms = dot(&self.0, &self.0).sqrt() * dot(&other.0, &other.0).sqrt();
        if norms > 0.0 { (self.dot(other) / norms).clamp(-1.0, 1.0) } else { 0.0 }
    }
}

impl std::fmt::Debug for Embedding {
    // 384 numbers help nobody in a failed assertion; the first few identify the vector.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Embedding({:?}, …)", &self.0[..4])
    }
}

/// A dot product the compiler vectorises: eight independent partial sums (a single running sum
/// is a dependency chain it may not reorder).
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (a8, b8) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a8.remainder().iter().zip(b8.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in a8.zip(b8) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    acc.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(i: usize, v: f32) -> Embedding {
        let mut a = [0f32; DIM];
        a[i] = v;
        Embedding(a)
    }

    #[test]
    fn cosine_ignores_length_and_dot_does_not() {
        let (a, b) = (axis(3, 2.0), axis(3, 0.5));
        assert_eq!(a.cosine(&b), 1.0);
        assert_eq!(a.dot(&b), 1.0);
        assert_eq!(axis(3, 1.0).cosine(&axis(4, 1.0)), 0.0);
        assert_eq!(axis(3, 1.0).cosine(&axis(3, -1.0)), -1.0);
    }

    #[test]
    fn a_zero_vector_has_cosine_zero_not_nan() {
        assert_eq!(Embedding([0.0; DIM]).cosine(&axis(0, 1.0)), 0.0);
    }

    #[test]
    fn dot_counts_every_element_including_a_tail_shorter_than_a_lane() {
        let a: Vec<f32> = (0..13).map(|i| i as f32).collect();
        let expected: f32 = a.iter().map(|x| x * x).sum();
        assert_eq!(dot(&a, &a), expected);
    }
}
