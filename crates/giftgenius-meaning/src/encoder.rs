//! The BERT encoder and the sentence-transformers head: token, position and type embeddings, N
//! layers of self-attention and a GELU feed-forward block (each followed by a residual
//! LayerNorm), then the mean of the token vectors, scaled to unit length.
//!
//! Several sequences run together: their tokens are stacked into one matrix, so every dense
//! layer reads its weights once for all of them, and only attention looks at one sequence at a
//! time (a token attends to the tokens of its own text). No padding is ever computed.

use crate::embedding::{DIM, dot};
use crate::error::ModelError;
use crate::linear::Linear;
use crate::weights::Weights;

/// The encoder's sizes, from `config.json`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    pub(crate) vocab: usize,
    pub(crate) max_positions: usize,
    pub(crate) type_vocab: usize,
    pub(crate) layers: usize,
    pub(crate) heads: usize,
    pub(crate) intermediate: usize,
    pub(crate) eps: f32,
}

struct Norm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
    eps: f32,
}

impl Norm {
    fn load(w: &mut Weights, prefix: &str, eps: f32) -> Result<Norm, ModelError> {
        Ok(Norm {
            gamma: w.tensor(&format!("{prefix}.weight"), &[DIM])?,
            beta: w.tensor(&format!("{prefix}.bias"), &[DIM])?,
            eps,
        })
    }

    /// LayerNorm of each row of `x`, in place.
    fn apply(&self, x: &mut [f32]) {
        for row in x.chunks_exact_mut(DIM) {
            let mean = row.iter().sum::<f32>() / DIM as f32;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / DIM as f32;
            let scale = 1.0 / (var + self.eps).sqrt();
            for ((v, g), b) in row.iter_mut().zip(&self.gamma).zip(&self.beta) {
                *v = (*v - mean) * scale * g + b;
            }
        }
    }
}

struct Layer {
    /// Query, key and value side by side: 3 × DIM outputs.
    qkv: Linear,
    attention_out: Linear,
    attention_norm: Norm,
    up: Linear,
    down: Linear,
    output_norm: Norm,
}

/// The loaded encoder.
pub(crate) struct Encoder {
    word: Vec<f32>,
    position: Vec<f32>,
    /// Type 0's vector: every token of a single text is type 0.
    type0: Vec<f32>,
    embedding_norm: Norm,
    layers: Vec<Layer>,
    heads: usize,
}

fn linear(w: &mut Weights, prefix: &str, inp: usize, out: usize) -> Result<Linear, ModelError> {
    let weight = w.tensor(&format!("{prefix}.weight"), &[out, inp])?;
    let bias = w.tensor(&format!("{prefix}.bias"), &[out])?;
    Ok(Linear::new(weight, bias, inp, out))
}

impl Encoder {
    /// Reads every tensor of a BERT model of `shape` (hidden size [`DIM`]), checking each one's
    /// type and shape.
    pub(crate) fn load(w: &mut Weights, shape: Shape) -> Result<Encoder, ModelError> {
        let e = "embeddings";
        let types = w.tensor(&format!("{e}.token_type_embeddings.weight"), &[shape.type_vocab, DIM])?;
        let mut encoder = Encoder {
            word: w.tensor(&format!("{e}.word_embeddings.weight"), &[shape.vocab, DIM])?,
            position: w.tensor(&format!("{e}.position_embeddings.weight"), &[shape.max_positions, DIM])?,
            type0: types[..DIM].to_vec(),
            embedding_norm: Norm::load(w, &format!("{e}.LayerNorm"), shape.eps)?,
            layers: Vec::with_capacity(shape.layers),
            heads: shape.heads,
        };
        for i in 0..shape.layers {
            let p = format!("encoder.layer.{i}");
            let qkv = ["query", "key", "value"]
                .into_iter()
                .map(|part| linear(w, &format!("{p}.attention.self.{part}"), DIM, DIM))
                .collect::<Result<Vec<_>, _>>()?;
            encoder.layers.push(Layer {
                qkv: Linear::concat(qkv),
                attention_out: linear(w, &format!("{p}.attention.output.dense"), DIM, DIM)?,
                attention_norm: Norm::load(w, &format!("{p}.attention.output.LayerNorm"), shape.eps)?,
                up: linear(w, &format!("{p}.intermediate.dense"), DIM, shape.intermediate)?,
                down: linear(w, &format!("{p}.output.dense"), shape.intermediate, DIM)?,
                output_norm: Norm::load(w, &format!("{p}.output.LayerNorm"), shape.eps)?,
            });
        }
        Ok(encoder)
    }

    /// The number of token ids the embedding table holds (every id passed in must be below it).
    pub(crate) fn vocab(&self) -> usize {
        self.word.len() / DIM
    }

    /// The number of positions (every sequence passed in must be at most this long).
    pub(crate) fn max_positions(&self) -> usize {
        self.position.len() / DIM
    }

    /// The unit-length mean-pooled embedding of each sequence of token ids. The caller
    /// guarantees ids below [`Encoder::vocab`] and lengths from 1 to [`Encoder::max_positions`].
    pub(crate) fn embed(&self, seqs: &[&[u32]]) -> Vec<[f32; DIM]> {
        let n: usize = seqs.iter().map(|s| s.len()).sum();
        let mut x = Vec::with_capacity(n * DIM);
        for seq in seqs {
            for (pos, &id) in seq.iter().enumerate() {
                let word = &self.word[id as usize * DIM..][..DIM];
                let position = &self.position[pos * DIM..][..DIM];
                x.extend(word.iter().zip(position).zip(&self.type0).map(|((a, b), c)| a + b + c));
            }
        }
        self.embedding_norm.apply(&mut x);
        let mut qkv = vec![0f32; n * 3 * DIM];
        let mut context = vec![0f32; n * DIM];
        let mut projected = vec![0f32; n * DIM];
        let intermediate_size = self.layers.first().map_or(0, |l| l.up.out);
        let mut intermediate = vec![0f32; n * intermediate_size];
        let mut scores = Vec::new();
        for layer in &self.layers {
            layer.qkv.forward(&x, &mut qkv);
            let mut start = 0;
            for seq in seqs {
                let rows = start..start + seq.len();
                self.attend(&qkv, rows, &mut context, &mut scores);
                start += seq.len();
            }
            layer.attention_out.forward(&context, &mut projected);
            add(&mut x, &projected);
            layer.attention_norm.apply(&mut x);
            layer.up.forward(&x, &mut intermediate);
            intermediate.iter_mut().for_each(|v| *v = gelu(*v));
            layer.down.forward(&intermediate, &mut projected);
            add(&mut x, &projected);
            layer.output_norm.apply(&mut x);
        }
        let mut out = Vec::with_capacity(seqs.len());
        let mut start = 0;
        for seq in seqs {
            let mut mean = [0f32; DIM];
            for row in x[start * DIM..(start + seq.len()) * DIM].chunks_exact(DIM) {
                add(&mut mean, row);
            }
            start += seq.len();
            // Dividing by the count would not change the direction; only the length matters.
            let norm = dot(&mean, &mean).sqrt().max(1e-12);
            mean.iter_mut().for_each(|v| *v /= norm);
            out.push(mean);
        }
        out
    }

    /// Multi-head self-attention among the tokens `rows` of one sequence: each head's
    /// softmax(q·kᵀ/√d)·v goes into that head's columns of `context`.
    fn attend(&self, qkv: &[f32], rows: std::ops::Range<usize>, context: &mut [f32], scores: &mut Vec<f32>) {
        let d = DIM / self.heads;
        let scale = 1.0 / (d as f32).sqrt();
        for h in 0..self.heads {
            let column = |t: usize, part: usize| &qkv[t * 3 * DIM + part * DIM + h * d..][..d];
            for i in rows.clone() {
                let q = column(i, 0);
                scores.clear();
                scores.extend(rows.clone().map(|j| dot(q, column(j, 1)) * scale));
                let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let mut total = 0.0;
                for s in scores.iter_mut() {
                    *s = (*s - max).exp();
                    total += *s;
                }
                let out = &mut context[i * DIM + h * d..][..d];
                out.fill(0.0);
                for (j, s) in rows.clone().zip(scores.iter()) {
                    let weight = s / total;
                    for (o, v) in out.iter_mut().zip(column(j, 2)) {
                        *o += weight * v;
                    }
                }
            }
        }
    }
}

fn add(x: &mut [f32], y: &[f32]) {
    x.iter_mut().zip(y).for_each(|(a, b)| *a += b);
}

/// GELU as BERT defines it, with the exact error function: x·Φ(x) = x·(1 − erfc(x/√2)/2).
fn gelu(x: f32) -> f32 {
    x * (1.0 - 0.5 * erfc(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// The complementary error function, relative error below 1.2e-7 everywhere (Numerical
/// Recipes' Chebyshev fit, `erfcc`); std has no erf.
fn erfc(x: f32) -> f32 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    // Coefficients c0..c9 of the fit, innermost last; rounded to f32's precision.
    const C: [f32; 10] = [
        -1.265_512,
        1.000_024,
        0.374_092,
        0.096_784_18,
        -0.186_288_1,
        0.278_868_1,
        -1.135_204,
        1.488_516,
        -0.822_152_2,
        0.170_872_8,
    ];
    let poly = C.iter().rev().fold(0.0, |acc, &c| acc * t + c) - z * z;
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gelu_matches_known_values_of_x_phi_x() {
        // x·Φ(x) from the normal distribution's table (to 7 digits).
        for (x, expected) in
            [(0.0, 0.0), (1.0, 0.841_344_7), (-1.0, -0.158_655_3), (2.5, 2.484_476), (-3.0, -0.004_049_5)]
        {
            let got = gelu(x);
            assert!((got - expected).abs() < 2e-6, "gelu({x}) = {got}, expected {expected}");
        }
    }

    #[test]
    fn layer_norm_gives_zero_mean_unit_variance_before_scale_and_shift() {
        let norm = Norm { gamma: vec![2.0; DIM], beta: vec![1.0; DIM], eps: 1e-12 };
        let mut row: Vec<f32> = (0..DIM).map(|i| i as f32).collect();
        norm.apply(&mut row);
        let mean = row.iter().sum::<f32>() / DIM as f32;
        let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f32>() / DIM as f32;
        assert!((mean - 1.0).abs() < 1e-4 && (var - 4.0).abs() < 1e-3, "mean {mean}, var {var}");
    }
}
