//! The time of one GEMM from its shape, as the default model charges it: the same FLOPs cost
//! more when the matrices are small or thin, for three reasons a kernel cannot avoid.
//!
//! 1. **Tile quantization.** A GEMM kernel computes its output in tiles of
//!    [`GEMM_TILE`] x [`GEMM_TILE`]; a dimension that is not a multiple of the tile computes the
//!    last tile in full. Dimensions under a tile get the smallest power-of-two tile that holds
//!    them, down to the tensor cores' 16-wide instruction (cuBLAS's kernels for thin matrices).
//!    NVIDIA, *Matrix Multiplication Background User's Guide*, "Tile quantization".
//! 2. **The output write.** Each tile accumulates its `k`-long dot products, then writes its
//!    part of the output to HBM; in a kernel that runs one tile per SM at a time (CUTLASS and
//!    cuBLAS's large-tile kernels) the SM computes nothing meanwhile. The GEMM rate `F` is
//!    measured on large square GEMMs ([`GEMM_REFERENCE_DIM`] on each side), output write
//!    included, so the main loop runs at the rate that leaves room for that write, and a GEMM
//!    costs `2 m n k / F + m n e (1 - k / R) / B`: a share `e F / (2 B) x (1/k - 1/R)` more than
//!    at `F`, none at `k` = R, 15-30% at `k` = 768 (A100, H100), a percent or two less at the
//!    tokens' length. Small hidden sizes and row-parallel GEMMs split by tensor parallelism
//!    (whose `k` is `h / tp` or `f / tp`) lose the most; weight-gradient GEMMs, whose `k` is
//!    the tokens, run a little faster than `F`.
//! 3. **Memory-bound GEMMs.** A GEMM never runs faster than reading its inputs and writing its
//!    output once: `(m k + k n + m n) e / B` (the roofline; thin GEMMs, such as decoding's
//!    few tokens, sit there).
//!
//! `F` is the GEMM rate of large square GEMMs ([`super::calibration::Util::flops`]), `B` the
//! effective HBM bandwidth. Wave quantization (the last wave of tiles over the SMs running
//! part-full) is not charged: the system configs do not say how many SMs a GPU has, and
//! cuBLAS's heuristics choose tile shapes and split-k to avoid a thin last wave.

use super::calibration::{GEMM_REFERENCE_DIM, GEMM_TILE};

/// A GEMM `C[m x n] = A[m x k] B[k x n]`; dimensions in elements.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gemm {
    pub m: f64,
    pub n: f64,
    pub k: f64,
}

impl Gemm {
    /// No GEMM: it takes no time.
    pub const NONE: Gemm = Gemm { m: 0.0, n: 0.0, k: 0.0 };

    /// FLOPs: `2 m n k`.
    pub fn flops(&self) -> f64 {
        2.0 * self.m * self.n * self.k
    }

    /// The activation gradient of `C = A B` in a backward pass: `dA = dC B^T`, m x k with
    /// inner dimension n.
    pub fn dgrad(&self) -> Gemm {
        Gemm { m: self.m, n: self.k, k: self.n }
    }

    /// The weight gradient: `dB = A^T dC`, k x n with inner dimension m (the tokens).
    pub fn wgrad(&self) -> Gemm {
        Gemm { m: self.k, n: self.n, k: self.m }
    }

    /// Time of the GEMM with `e`-byte elements at a GEMM rate of `flops_per_s` (that of a
    /// square GEMM of [`GEMM_REFERENCE_DIM`]) and an HBM bandwidth of `hbm_bytes_per_s`, s:
    /// [`Gemm::mixed_time_s`] with `e`-byte operands and output.
    pub fn time_s(&self, e: f64, flops_per_s: f64, hbm_bytes_per_s: f64) -> f64 {
        self.mixed_time_s(e, e, flops_per_s, hbm_bytes_per_s)
    }

    /// Time of the GEMM with `a`-byte operands (A and B) and an `c`-byte output, s:
    /// `max(2 m' n' k / F_main + m n c / B, ((m k + k n) a + m n c) / B)` with the main loop's
    /// rate `1 / F_main = 1 / F - c / (2 R B)` and m', n' rounded up to whole tiles (see the
    /// module documentation). An FP8 GEMM reads 1-byte operands and writes a 16-bit output.
    pub fn mixed_time_s(&self, a: f64, c: f64, flops_per_s: f64, hbm_bytes_per_s: f64) -> f64 {
        let Gemm { m, n, k } = *self;
        if m <= 0.0 || n <= 0.0 || k <= 0.0 {
            return 0.0;
        }
        let stream = ((m * k + k * n) * a + m * n * c) / hbm_bytes_per_s;
        self.compute_time_s(c, flops_per_s, hbm_bytes_per_s).max(stream)
    }

    /// The compute side of [`Gemm::mixed_time_s`] alone, s: `2 m' n' k / F_main + m n c / B`.
    /// A convolution run as an implicit GEMM (cuDNN) reads its input once, not the `k`-times
    /// larger unfolded matrix A, so it sets its own bound on streaming.
    pub fn compute_time_s(&self, c: f64, flops_per_s: f64, hbm_bytes_per_s: f64) -> f64 {
        let Gemm { m, n, k } = *self;
        if m <= 0.0 || n <= 0.0 || k <= 0.0 {
            return 0.0;
        }
        let main_s_per_flop = (1.0 / flops_per_s - c / (2.0 * GEMM_REFERENCE_DIM * hbm_bytes_per_s)).max(0.0);
        2.0 * tiled(m) * tiled(n) * k * main_s_per_flop + m * n * c / hbm_bytes_per_s
    }
}

/// `x` rounded up to whole tiles: of [`GEMM_TILE`], or under a tile the smallest power of two
/// (at least 16) that holds it.
fn tiled(x: f64) -> f64 {
    let tile = if x >= GEMM_TILE { GEMM_TILE } else { x.max(16.0).log2().ceil().exp2() };
    (x / tile).ceil() * tile
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An A100 at the default model's rates: 80% of 312 TFLOP/s, 83.6% of 2,039 GB/s.
    const F: f64 = 0.8 * 312e12;
    const B: f64 = 0.836 * 2039e9;

    fn rate(g: Gemm) -> f64 {
        g.flops() / g.time_s(2.0, F, B)
    }

    #[test]
    fn a_square_gemm_of_the_reference_size_runs_at_the_gemm_rate_and_a_short_inner_dimension_slower() {
        let r = GEMM_REFERENCE_DIM;
        let square = Gemm { m: r, n: r, k: r };
        assert!((rate(square) / F - 1.0).abs() < 1e-12, "{}", rate(square) / F);
        // k = 768 (GPT-2 small): e F / (2 B) x (1/768 - 1/8192) = 17% more time.
        let small = Gemm { k: 768.0, ..square };
        let share = 2.0 * F / (2.0 * B) * (1.0 / 768.0 - 1.0 / r);
        assert!((F / rate(small) - 1.0 - share).abs() < 1e-12);
        assert!((0.15..0.20).contains(&share), "{share}");
        // A longer inner dimension spreads the output write thinner: a little faster than F.
        let long = Gemm { k: 4.0 * r, ..square };
        assert!(rate(long) > F && rate(long) < 1.02 * F, "{}", rate(long) / F);
    }

    #[test]
    fn dimensions_off_the_tile_compute_whole_tiles() {
        // 50,257 (GPT-2's vocabulary) computes 50,304 columns; 50,304 itself is whole tiles.
        let odd = Gemm { m: 4096.0, n: 50257.0, k: 4096.0 };
        let even = Gemm { n: 50304.0, ..odd };
        let t = |g: Gemm| g.time_s(2.0, F, B);
        assert!(t(odd) < t(even), "the output write still counts only real elements");
        assert!((t(even) - t(odd)) / t(even) < 1e-3);
        assert_eq!(tiled(50257.0), 50304.0);
        assert_eq!(tiled(200.0), 256.0);
        // Under a tile: the smallest power-of-two tile, at least the 16-wide instruction.
        assert_eq!((tiled(1.0), tiled(16.0), tiled(17.0), tiled(100.0)), (16.0, 16.0, 32.0, 128.0));
    }

    #[test]
    fn a_thin_gemm_is_bound_by_reading_its_weights() {
        // One token through a 8,192 x 8,192 weight: it reads 134 MB of weights.
        let g = Gemm { m: 1.0, n: 8192.0, k: 8192.0 };
        let t = g.time_s(2.0, F, B);
        let read = (8192.0 + 8192.0 * 8192.0 + 8192.0) * 2.0 / B;
        assert_eq!(t, read);
        // Doubling the tokens barely costs more until the FLOPs catch up (about 150 tokens).
        let g8 = Gemm { m: 8.0, ..g };
        assert!(g8.time_s(2.0, F, B) < 1.01 * t);
    }

    #[test]
    fn gradients_swap_the_dimensions_and_the_weight_gradient_pays_no_output_penalty() {
        let fwd = Gemm { m: 16384.0, n: 2304.0, k: 768.0 };
        let (d, w) = (fwd.dgrad(), fwd.wgrad());
        assert_eq!((d.m, d.n, d.k), (16384.0, 768.0, 2304.0));
        assert_eq!((w.m, w.n, w.k), (768.0, 2304.0, 16384.0));
        assert_eq!((d.flops(), w.flops()), (fwd.flops(), fwd.flops()));
        // The weight gradient's inner dimension is the tokens: it runs fastest.
        assert!(rate(w) > rate(d) && rate(d) > rate(fwd));
        assert!(rate(w) > F);
        // Nothing to compute costs nothing.
        assert_eq!(Gemm { m: 0.0, ..fwd }.time_s(2.0, F, B), 0.0);
    }

    #[test]
    fn one_byte_operands_halve_what_a_thin_gemm_reads_but_not_its_16_bit_output() {
        let g = Gemm { m: 1.0, n: 8192.0, k: 8192.0 };
        let fp8 = g.mixed_time_s(1.0, 2.0, 2.0 * F, B);
        assert_eq!(fp8, ((8192.0 + 8192.0 * 8192.0) * 1.0 + 8192.0 * 2.0) / B);
        assert!((fp8 / g.time_s(2.0, F, B) - 0.5).abs() < 1e-3);
        // A GEMM of the reference depth is compute-bound: twice the rate, half the time (its
        // 16-bit output write is part of the rate either way).
        let big = Gemm { m: 16384.0, n: 8192.0, k: GEMM_REFERENCE_DIM };
        let ratio = big.mixed_time_s(1.0, 2.0, 2.0 * F, B) / big.time_s(2.0, F, B);
        assert!((ratio - 0.5).abs() < 1e-9, "{ratio}");
    }
}
