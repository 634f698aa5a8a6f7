//! The dense layer `y = x·Wᵀ + b`, where nearly all of an embedding's time goes.
//!
//! `W` stays in the file's layout, one row of `in` weights per output, so each output is a dot
//! product of two contiguous rows. The kernel takes four tokens per pass over a weight row (a
//! short query has 3–10 tokens: the weights, 90 MB in all, are read from memory once or twice
//! per layer instead of once per token) and keeps eight partial sums per token, which the
//! compiler turns into SIMD registers. Outputs are taken in blocks whose weights fit in the
//! core's L2 cache, so a batch of many tokens reads each weight from memory once.

/// Bytes of weights per output block: well inside a 512 KB–1 MB L2.
const BLOCK_BYTES: usize = 96 << 10;
/// Tokens per pass over a weight row.
const ROWS: usize = 4;
/// Partial sums per token (two SSE or one AVX register of f32).
const LANES: usize = 8;

/// A dense layer: `out` rows of `inp` weights, and `out` biases.
pub(crate) struct Linear {
    w: Vec<f32>,
    b: Vec<f32>,
    pub(crate) inp: usize,
    pub(crate) out: usize,
}

impl Linear {
    /// `w` is `out × inp` row-major (PyTorch's `nn.Linear` layout), `b` has `out` values; the
    /// caller has checked both lengths, and `inp` is a multiple of [`LANES`].
    pub(crate) fn new(w: Vec<f32>, b: Vec<f32>, inp: usize, out: usize) -> Linear {
        debug_assert!(w.len() == inp * out && b.len() == out && inp.is_multiple_of(LANES));
        Linear { w, b, inp, out }
    }

    /// Joins layers reading the same input (query, key, value) into one, whose outputs are
    /// theirs side by side: one pass over the input instead of three.
    pub(crate) fn concat(parts: Vec<Linear>) -> Linear {
        let inp = parts.first().map_or(0, |p| p.inp);
        let mut joined = Linear { w: Vec::new(), b: Vec::new(), inp, out: 0 };
        for p in parts {
            debug_assert_eq!(p.inp, inp);
            joined.w.extend(p.w);
            joined.b.extend(p.b);
            joined.out += p.out;
        }
        joined
    }

    /// `y[t] = x[t]·Wᵀ + b` for the `x.len() / inp` rows of `x`; `y` holds as many rows of `out`.
    pub(crate) fn forward(&self, x: &[f32], y: &mut [f32]) {
        let (inp, out) = (self.inp, self.out);
        let n = x.len() / inp;
        debug_assert_eq!(y.len(), n * out);
        let block = (BLOCK_BYTES / (inp * 4)).max(1);
        for o0 in (0..out).step_by(block) {
            let o1 = (o0 + block).min(out);
            let mut t = 0;
            while t + ROWS <= n {
                let xs: [&[f32]; ROWS] = std::array::from_fn(|r| &x[(t + r) * inp..(t + r + 1) * inp]);
                for o in o0..o1 {
                    let sums = dot_rows(&xs, &self.w[o * inp..(o + 1) * inp]);
                    for (r, s) in sums.into_iter().enumerate() {
                        y[(t + r) * out + o] = s + self.b[o];
                    }
                }
                t += ROWS;
            }
            for t in t..n {
                let xs = [&x[t * inp..(t + 1) * inp]];
                for o in o0..o1 {
                    y[t * out + o] = dot_rows(&xs, &self.w[o * inp..(o + 1) * inp])[0] + self.b[o];
                }
            }
        }
    }
}

/// The dot products of each of `R` rows with `w`, all of one length, a multiple of [`LANES`].
#[inline(always)]
fn dot_rows<const R: usize>(xs: &[&[f32]; R], w: &[f32]) -> [f32; R] {
    let mut acc = [[0f32; LANES]; R];
    for (i, wc) in w.chunks_exact(LANES).enumerate() {
        for r in 0..R {
            let xc = &xs[r][i * LANES..(i + 1) * LANES];
            for l in 0..LANES {
                acc[r][l] += xc[l] * wc[l];
            }
        }
    }
    acc.map(|a| a.iter().sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain definition, one multiply-add at a time.
    fn naive(x: &[f32], w: &[f32], b: &[f32], inp: usize, out: usize) -> Vec<f32> {
        let n = x.len() / inp;
        let mut y = vec![0f32; n * out];
        for t in 0..n {
            for o in 0..out {
                y[t * out + o] = b[o] + (0..inp).map(|i| x[t * inp + i] * w[o * inp + i]).sum::<f32>();
            }
        }
        y
    }

    #[test]
    fn every_row_count_and_block_edge_gives_the_plain_product() {
        // 2,000 outputs of 16 inputs cross an output-block edge; 1..=9 rows cover full passes
        // of four and the leftover rows.
        let (inp, out) = (16, 2000);
        let w: Vec<f32> = (0..inp * out).map(|i| ((i * 37 % 101) as f32 - 50.0) / 64.0).collect();
        let b: Vec<f32> = (0..out).map(|o| o as f32 / 1000.0).collect();
        let layer = Linear::new(w.clone(), b.clone(), inp, out);
        for n in 1..=9 {
            let x: Vec<f32> = (0..n * inp).map(|i| ((i * 13 % 29) as f32 - 14.0) / 8.0).collect();
            let mut y = vec![f32::NAN; n * out];
            layer.forward(&x, &mut y);
            let expected = naive(&x, &w, &b, inp, out);
            for (i, (a, e)) in y.iter().zip(&expected).enumerate() {
                assert!((a - e).abs() <= 1e-4 * e.abs().max(1.0), "rows {n}, value {i}: {a} vs {e}");
            }
        }
    }

    #[test]
    fn concat_puts_outputs_side_by_side() {
        let a = Linear::new(vec![1.0; 8], vec![0.5], 8, 1);
        let b = Linear::new(vec![2.0; 16], vec![0.0, 1.0], 8, 2);
        let joined = Linear::concat(vec![a, b]);
        let mut y = vec![0.0; 3];
        joined.forward(&[1.0; 8], &mut y);
        assert_eq!(y, [8.5, 16.0, 17.0]);
    }
}
