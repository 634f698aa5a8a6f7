//! The dense layer `y = x·Wᵀ + b`, where nearly all of an embedding's time goes.
//!
//! `W` stays in the file's layout, one row of `in` weights per output, so each output is a dot
//! product of two contiguous rows. The kernel computes a tile of several tokens × several
//! outputs at once: each weight loaded serves every token of the tile, each token value every
//! output, and each (token, output) pair keeps [`LANES`] partial sums in SIMD registers.
//! Outputs are taken in blocks whose weights fit in the core's L2 cache, so a batch of many
//! tokens reads each weight from memory once. Two or three tokens short of a tile repeat the
//! last one; a single leftover token takes a one-row tile.
//!
//! The weights are kept as bfloat16 (the top 16 bits of an f32, rounded to nearest): a short
//! text's embedding is bound by reading the weights from memory, and half the bytes made it
//! about 1.5× faster; products and sums stay f32. The cost in accuracy, measured against a
//! float64 forward pass with the original weights: cosine ≥ 0.99998 (f32 weights: 0.999999),
//! far below any difference in meaning.
//!
//! The tiles are written with the CPU's vector instructions (`std::arch`): left to the
//! compiler's auto-vectoriser, the same loops became fast or scalar code (3–5× slower)
//! depending on their surroundings. On x86-64, AVX2 + FMA (4 tokens × 3 outputs) when the CPU
//! has them, checked at run time, else SSE2 (2 × 2), which every x86-64 CPU has; elsewhere,
//! plain Rust. Measured on this project's 2-core AMD EPYC, the 24 layers of one text (the
//! ignored `linear_timing` test): AVX2 about 3 ms for 1–4 tokens, 4.5 ms for 8, and 15–26
//! GMAC/s on batches; SSE2 about half that speed. The `unsafe` blocks are the calls into the
//! feature-gated code (after the check) and the unaligned vector loads from references to
//! exactly the bytes loaded.

/// Bytes of weights per output block: well inside a 512 KB–1 MB L2.
const BLOCK_BYTES: usize = 96 << 10;
/// Partial sums per (token, output) pair: one AVX register, or two SSE registers, of f32.
const LANES: usize = 8;

/// A dense layer: `out` rows of `inp` weights, and `out` biases.
pub(crate) struct Linear {
    /// bfloat16 bits.
    w: Vec<u16>,
    b: Vec<f32>,
    pub(crate) inp: usize,
    pub(crate) out: usize,
}

impl Linear {
    /// `w` is `out × inp` row-major (PyTorch's `nn.Linear` layout), `b` has `out` values; the
    /// caller has checked both lengths, and `inp` is a multiple of [`LANES`].
    pub(crate) fn new(w: Vec<f32>, b: Vec<f32>, inp: usize, out: usize) -> Linear {
        debug_assert!(w.len() == inp * out && b.len() == out && inp.is_multiple_of(LANES));
        Linear { w: w.into_iter().map(bf16).collect(), b, inp, out }
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
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            // SAFETY: a `#[target_feature]` function may be called when the CPU has those
            // features, which the line above has just checked.
            unsafe { self.forward_avx2_fma(x, y) };
            return;
        }
        self.forward_portable(x, y);
    }

    /// Without AVX2: SSE2, which every x86-64 CPU has, 2 tokens × 2 outputs per tile.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "sse2")]
    fn forward_sse2(&self, x: &[f32], y: &mut [f32]) {
        self.tiles::<2, 2, 1>(x, y, |xs, ws| sse2::tile::<2, 2>(xs, ws), |xs, ws| sse2::tile::<1, 2>(xs, ws));
    }

    #[cfg(target_arch = "x86_64")]
    fn forward_portable(&self, x: &[f32], y: &mut [f32]) {
        // SAFETY: SSE2 is part of the x86-64 baseline: every CPU this code runs on has it.
        unsafe { self.forward_sse2(x, y) }
    }

    /// Elsewhere: plain Rust the compiler vectorises as it can (slower: it made scalar code of
    /// this loop on x86).
    #[cfg(not(target_arch = "x86_64"))]
    fn forward_portable(&self, x: &[f32], y: &mut [f32]) {
        self.tiles::<2, 2, 1>(x, y, tile::<2, 2>, tile::<1, 2>);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn forward_avx2_fma(&self, x: &[f32], y: &mut [f32]) {
        if x.len() == self.inp {
            // One row (a neighbour search): more outputs per tile instead of repeated rows.
            self.tiles::<1, 8, 0>(x, y, |xs, ws| avx2::tile::<1, 8>(xs, ws), |xs, ws| avx2::tile::<1, 8>(xs, ws));
        } else {
            self.tiles::<4, 3, 1>(x, y, |xs, ws| avx2::tile::<4, 3>(xs, ws), |xs, ws| avx2::tile::<1, 3>(xs, ws));
        }
    }

    /// The product in tiles of `R` tokens × `O` outputs, each computed by `tile`; when at most
    /// `SMALL` tokens are left, `one` takes them one at a time.
    #[inline(always)]
    fn tiles<const R: usize, const O: usize, const SMALL: usize>(
        &self,
        x: &[f32],
        y: &mut [f32],
        tile: impl Fn([&[[f32; LANES]]; R], [&[[u16; LANES]]; O]) -> [[f32; O]; R],
        one: impl Fn([&[[f32; LANES]]; 1], [&[[u16; LANES]]; O]) -> [[f32; O]; 1],
    ) {
        let (inp, out) = (self.inp, self.out);
        let k = inp / LANES;
        let n = x.len() / inp;
        let (w, _) = self.w.as_chunks::<LANES>();
        let (x, _) = x.as_chunks::<LANES>();
        let row = |t: usize| &x[t * k..(t + 1) * k];
        let block = (BLOCK_BYTES / (inp * 4) / O * O).max(O);
        for o0 in (0..out).step_by(block) {
            let o1 = (o0 + block).min(out);
            let mut t = 0;
            while t < n {
                let rows = R.min(n - t);
                let mut o = o0;
                while o < o1 {
                    let outs = O.min(o1 - o);
                    let w_rows: [&[[u16; LANES]]; O] = std::array::from_fn(|j| &w[(o + j.min(outs - 1)) * k..][..k]);
                    let mut put = |r: usize, sums: &[f32; O]| {
                        for (j, s) in sums.iter().enumerate().take(outs) {
                            y[(t + r) * out + o + j] = s + self.b[o + j];
                        }
                    };
                    if rows <= SMALL {
                        // The last token or two of a text: one row at a time (the weights of
                        // this block are in cache by now).
                        for r in 0..rows {
                            put(r, &one([row(t + r)], w_rows)[0]);
                        }
                    } else {
                        // Fewer tokens than a tile: the missing rows repeat the last real one
                        // and their sums are dropped. Outputs past a block's end likewise.
                        let x_rows = std::array::from_fn(|r| row(t + r.min(rows - 1)));
                        for (r, sums) in tile(x_rows, w_rows).iter().enumerate().take(rows) {
                            put(r, sums);
                        }
                    }
                    o += O;
                }
                t += rows;
            }
        }
    }
}

/// The dot products of `R` token rows with `O` weight rows, all of one length, in plain Rust.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn tile<const R: usize, const O: usize>(xs: [&[[f32; LANES]]; R], ws: [&[[u16; LANES]]; O]) -> [[f32; O]; R] {
    let k = ws.iter().map(|r| r.len()).chain(xs.iter().map(|r| r.len())).min().unwrap_or(0);
    let mut acc = [[[0f32; LANES]; O]; R];
    for i in 0..k {
        let wv: [[f32; LANES]; O] = std::array::from_fn(|o| ws[o][i].map(widen));
        for r in 0..R {
            for o in 0..O {
                for l in 0..LANES {
                    acc[r][o][l] += xs[r][i][l] * wv[o][l];
                }
            }
        }
    }
    acc.map(|row| row.map(|a| a.iter().sum()))
}

/// The SSE2 tile: each group of [`LANES`] values is two 4-wide registers.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use super::LANES;
    use std::arch::x86_64::*;

    /// `R` token rows × `O` weight rows; 2 × 2 keeps 8 accumulators, 4 weight and 2 token
    /// registers of the 16.
    #[target_feature(enable = "sse2")]
    pub(super) fn tile<const R: usize, const O: usize>(
        xs: [&[[f32; LANES]]; R],
        ws: [&[[u16; LANES]]; O],
    ) -> [[f32; O]; R] {
        let k = ws.iter().map(|r| r.len()).chain(xs.iter().map(|r| r.len())).min().unwrap_or(0);
        let xs = xs.map(|x| &x[..k]);
        let ws = ws.map(|w| &w[..k]);
        let mut acc = [[[_mm_setzero_ps(); 2]; O]; R];
        for i in 0..k {
            let mut w = [[_mm_setzero_ps(); 2]; O];
            for (w, row) in w.iter_mut().zip(&ws) {
                *w = widen(&row[i]);
            }
            for (r, x) in xs.iter().enumerate() {
                let x = load(&x[i]);
                for (a, w) in acc[r].iter_mut().zip(&w) {
                    a[0] = _mm_add_ps(a[0], _mm_mul_ps(x[0], w[0]));
                    a[1] = _mm_add_ps(a[1], _mm_mul_ps(x[1], w[1]));
                }
            }
        }
        acc.map(|row| row.map(|[lo, hi]| sum(_mm_add_ps(lo, hi))))
    }

    #[target_feature(enable = "sse2")]
    fn load(values: &[f32; LANES]) -> [__m128; 2] {
        // SAFETY: `values` is a reference to exactly 8 f32; each unaligned load reads 4 of them.
        unsafe { [_mm_loadu_ps(values.as_ptr()), _mm_loadu_ps(values.as_ptr().add(4))] }
    }

    /// Eight bfloat16 as f32: interleaving zero below each 16-bit value makes its f32 bits.
    #[target_feature(enable = "sse2")]
    fn widen(values: &[u16; LANES]) -> [__m128; 2] {
        // SAFETY: `values` is a reference to exactly 16 bytes, what the unaligned load reads.
        let packed = unsafe { _mm_loadu_si128(values.as_ptr().cast()) };
        let zero = _mm_setzero_si128();
        [_mm_castsi128_ps(_mm_unpacklo_epi16(zero, packed)), _mm_castsi128_ps(_mm_unpackhi_epi16(zero, packed))]
    }

    #[target_feature(enable = "sse2")]
    fn sum(v: __m128) -> f32 {
        let pairs = _mm_add_ps(v, _mm_movehl_ps(v, v));
        _mm_cvtss_f32(_mm_add_ss(pairs, _mm_shuffle_ps::<1>(pairs, pairs)))
    }
}

/// The AVX2 tile, written with the CPU's vector instructions: left to the compiler, the same
/// loop became fast or scalar code (3–5× slower) depending on its surroundings.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::LANES;
    use std::arch::x86_64::*;

    /// `R` token rows × `O` weight rows; 4 × 3 keeps 12 accumulators, 3 weight and 1 token
    /// register of the 16, and 1 × 8 serves a single row (a neighbour search's query).
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn tile<const R: usize, const O: usize>(
        xs: [&[[f32; LANES]]; R],
        ws: [&[[u16; LANES]]; O],
    ) -> [[f32; O]; R] {
        let k = ws.iter().map(|r| r.len()).chain(xs.iter().map(|r| r.len())).min().unwrap_or(0);
        let xs = xs.map(|x| &x[..k]);
        let ws = ws.map(|w| &w[..k]);
        let mut acc = [[_mm256_setzero_ps(); O]; R];
        for i in 0..k {
            let mut w = [_mm256_setzero_ps(); O];
            for (w, row) in w.iter_mut().zip(&ws) {
                *w = widen(&row[i]);
            }
            for (r, x) in xs.iter().enumerate() {
                let x = load(&x[i]);
                for (a, w) in acc[r].iter_mut().zip(&w) {
                    *a = _mm256_fmadd_ps(x, *w, *a);
                }
            }
        }
        acc.map(|row| row.map(|a| sum(a)))
    }

    #[target_feature(enable = "avx2,fma")]
    fn load(values: &[f32; LANES]) -> __m256 {
        // SAFETY: `values` is a reference to exactly 8 f32, what the unaligned load reads.
        unsafe { _mm256_loadu_ps(values.as_ptr()) }
    }

    /// Eight bfloat16 as f32: zero-extend each to 32 bits and shift into the high half.
    #[target_feature(enable = "avx2,fma")]
    fn widen(values: &[u16; LANES]) -> __m256 {
        // SAFETY: `values` is a reference to exactly 16 bytes, what the unaligned load reads.
        let packed = unsafe { _mm_loadu_si128(values.as_ptr().cast()) };
        _mm256_castsi256_ps(_mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(packed)))
    }

    #[target_feature(enable = "avx2,fma")]
    fn sum(v: __m256) -> f32 {
        let halves = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
        let pairs = _mm_add_ps(halves, _mm_movehl_ps(halves, halves));
        _mm_cvtss_f32(_mm_add_ss(pairs, _mm_shuffle_ps::<1>(pairs, pairs)))
    }
}

/// An f32 rounded to the nearest bfloat16 (ties to even), as its 16 bits. Finite inputs only
/// (the weights are checked at load).
fn bf16(v: f32) -> u16 {
    let bits = v.to_bits();
    ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16) as u16
}

/// A bfloat16's exact f32 value (the x86 tiles widen eight at a time in registers).
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn widen(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
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

    /// The output of each build of the kernel this CPU can run.
    fn builds(layer: &Linear, x: &[f32], len: usize) -> Vec<(&'static str, Vec<f32>)> {
        let mut runs = Vec::new();
        let mut y = vec![f32::NAN; len];
        layer.forward_portable(x, &mut y);
        runs.push(("portable", y));
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            let mut y = vec![f32::NAN; len];
            // SAFETY: the CPU has the features, checked just above.
            unsafe { layer.forward_avx2_fma(x, &mut y) };
            runs.push(("avx2+fma", y));
        }
        runs
    }

    #[test]
    fn every_row_count_and_block_edge_gives_the_plain_product() {
        // 2,000 outputs of 16 inputs cross output-block edges and end in a partial tile;
        // 1..=9 rows cover full tiles and every leftover height.
        let (inp, out) = (16, 2000);
        let w: Vec<f32> = (0..inp * out).map(|i| ((i * 37 % 101) as f32 - 50.0) / 64.0).collect();
        let b: Vec<f32> = (0..out).map(|o| o as f32 / 1000.0).collect();
        let layer = Linear::new(w.clone(), b.clone(), inp, out);
        for n in 1..=9 {
            let x: Vec<f32> = (0..n * inp).map(|i| ((i * 13 % 29) as f32 - 14.0) / 8.0).collect();
            let rounded: Vec<f32> = w.iter().map(|&v| widen(bf16(v))).collect();
            let expected = naive(&x, &rounded, &b, inp, out);
            for (build, y) in builds(&layer, &x, n * out) {
                for (i, (a, e)) in y.iter().zip(&expected).enumerate() {
                    assert!((a - e).abs() <= 1e-4 * e.abs().max(1.0), "{build}, rows {n}, value {i}: {a} vs {e}");
                }
            }
        }
    }

    #[test]
    fn bfloat16_rounds_to_nearest_and_keeps_exact_values() {
        for v in [0.0, -0.0, 1.0, -2.5, 0.125, 2f32.powi(-130)] {
            assert_eq!(widen(bf16(v)).to_bits(), (v.to_bits() >> 16) << 16, "{v}");
        }
        // 1 + 2^-8 is halfway between two bfloat16 values: ties go to the even one (1.0);
        // a hair above rounds up.
        assert_eq!(widen(bf16(1.0 + 1.0 / 256.0)), 1.0);
        assert_eq!(widen(bf16(1.0 + 1.0 / 256.0 + 1.0 / 65536.0)), 1.0 + 1.0 / 128.0);
        let v = 0.123_456_79_f32;
        assert!((widen(bf16(v)) - v).abs() <= v * 2f32.powi(-9));
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

#[cfg(test)]
mod timing {
    use super::*;

    /// `cargo test --release -p giftgenius-meaning --lib -- --ignored --nocapture linear_timing`
    #[test]
    #[ignore = "a measurement, not a check"]
    fn linear_timing() {
        let shapes: Vec<(usize, usize)> =
            (0..6).flat_map(|_| [(384usize, 1152usize), (384, 384), (384, 1536), (1536, 384)]).collect();
        let layers: Vec<Linear> = shapes
            .iter()
            .map(|&(i, o)| {
                let w = (0..i * o).map(|k| ((k * 37 % 101) as f32 - 50.0) / 640.0).collect();
                Linear::new(w, vec![0.0; o], i, o)
            })
            .collect();
        type Forward = fn(&Linear, &[f32], &mut [f32]);
        let builds: [(&str, Forward); 2] = [("chosen", Linear::forward), ("portable", Linear::forward_portable)];
        for (build, forward) in builds {
            for n in [1, 2, 3, 4, 5, 8, 16, 64, 256] {
                let x: Vec<f32> = (0..n * 1536).map(|i| ((i * 13 % 29) as f32 - 14.0) / 8.0).collect();
                let mut y = vec![0f32; n * 1536];
                let mut best = f64::MAX;
                for _ in 0..(600 / n).clamp(3, 30) {
                    let t = std::time::Instant::now();
                    for (l, &(i, o)) in layers.iter().zip(&shapes) {
                        forward(l, &x[..n * i], &mut y[..n * o]);
                    }
                    best = best.min(t.elapsed().as_secs_f64());
                }
                let gmacs = (n * 10_616_832) as f64 / best / 1e9;
                println!("{build} n={n}: {:.2} ms, {gmacs:.1} GMAC/s", best * 1e3);
            }
        }
    }
}
