//! The default model's GEMM times against GEMMs measured one by one: vidur's profiles of the
//! four GEMMs of a transformer layer (QKV, output projection, feed-forward up and down) of
//! Llama 2 7B, CodeLlama 34B and Llama 2 70B at 1 to 16,384 tokens and tensor parallelism 1 to
//! 8, on an A100 80GB and an H100 SXM (`gemm_kernels.csv`, SOURCES.md section 9). They check a
//! mechanism, not a run: decoding's thin GEMMs, bound by reading the weights, through the
//! ridge to prefill's compute-bound ones. One constant per GPU is taken from them: the share of
//! HBM bandwidth its streaming GEMMs reach (`calibration::GEMM_BW_A100`, `GEMM_BW_H100`), so
//! the streaming class is at zero by construction; the ridge and the compute-bound classes,
//! and every kernel's spread, remain a check.

use super::csv::Records;
use super::rows::{gpu_family, gpu_label, row_gpu, row_util};
use crate::engine::extended::calibration::{sustained_gemm_util, GRAPH_KERNEL_S, MAMF_H100, UTIL};
use crate::engine::extended::gemm::{Gemm, GemmGpu};
use serde::Serialize;

/// The file's name beside the page, which fetches it ([`crate::accuracy::SHIPPED_FILES`] are the
/// runs'); the CLI and the tests embed it ([`GEMM_KERNELS_CSV`]).
pub const GEMM_KERNELS_FILE: &str = "gemm_kernels.csv";

/// The profiled GEMMs that ship with madmax.
#[cfg(not(target_arch = "wasm32"))]
pub const GEMM_KERNELS_CSV: &str = include_str!("../presets/data/validation/gemm_kernels.csv");

/// The file's header.
const HEADER: [&str; 9] = ["gpu", "model", "tp", "tokens", "gemm", "m", "k", "n", "measured_us"];

/// How the model's GEMM times compare with the kernels profiled on one GPU. Errors are
/// measured / predicted - 1 (positive: the kernel took longer than the model says).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GemmCheck {
    /// The file's `gpu` cell.
    pub gpu: String,
    /// The GPU as people name it ("A100 SXM 80GB").
    pub label: String,
    pub kernels: usize,
    pub median_error: f64,
    /// How far apart the two typically are, either way: `exp(median |ln(measured /
    /// predicted)|) - 1`.
    pub median_abs_error: f64,
    /// Median error of the kernels bound by reading their operands (the model's compute time
    /// under a third of its streaming time: decoding).
    pub streaming_median_error: f64,
    /// Median error of the kernels near the ridge (compute and streaming within 3x).
    pub ridge_median_error: f64,
    /// Median error of the compute-bound kernels (compute over 3x streaming: prefill).
    pub computing_median_error: f64,
}

/// The GPU as the model sees a GEMM profiled alone: the preset's datasheet figures at the
/// validation's GEMM and streaming fractions (the GPU's GEMM share of HBM bandwidth, as its
/// rows take it: [`row_util`]), the H100 at its burst rate ([`MAMF_H100`]: a kernel timed for
/// milliseconds runs at the boost clock) rather than the rate it sustains through a training
/// step. The A100's two rates differ by a few percent ([`UTIL`]).
fn profiled_gpu(cell: &str) -> Result<GemmGpu, String> {
    let flops_util = match gpu_family(cell) {
        Some("A100") => UTIL.flops,
        Some("H100") => sustained_gemm_util(MAMF_H100),
        _ => return Err(format!("gpu \"{cell}\": profiled GEMMs are compared on A100s and H100s")),
    };
    let g = row_gpu(cell)?;
    // GEMMs stream at the share the validation rows on this GPU use.
    let util = row_util(cell, &g);
    Ok(GemmGpu::new(g.f16_flops * flops_util, g.mem_bw * util.gemm_bw.unwrap_or(util.mem_bw), Some(g.sm_count)))
}

/// The median of `v` (the upper one of an even count).
fn median(mut v: Vec<f64>) -> f64 {
    crate::engine::order::sort_f64(&mut v);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The comparison per GPU, in the file's order of GPUs, or what is wrong with the file.
pub fn gemm_check(csv: &str) -> Result<Vec<GemmCheck>, String> {
    check_on(csv, profiled_gpu)
}

/// [`gemm_check`] with the model's view of each GPU from `gpu_of`.
fn check_on(csv: &str, gpu_of: impl Fn(&str) -> Result<GemmGpu, String>) -> Result<Vec<GemmCheck>, String> {
    let mut records = Records::new(csv);
    if records.next().is_none_or(|h| h != HEADER) {
        return Err(format!("{GEMM_KERNELS_FILE}: the header is not {}", HEADER.join(",")));
    }
    let mut by_gpu: Vec<OnGpu> = Vec::new();
    for (i, cells) in records.enumerate() {
        let line = i + 2;
        let [gpu, _, _, _, _, m, k, n, us] = cells.as_slice() else {
            return Err(format!("{GEMM_KERNELS_FILE} line {line}: {} cells, not 9", cells.len()));
        };
        // Dimensions up to ten million elements and times up to ten seconds: beyond any GEMM.
        let num = |c: &str| c.parse::<f64>().ok().filter(|x| *x > 0.0 && *x <= 1e7);
        let (Some(m), Some(k), Some(n), Some(us)) = (num(m), num(k), num(n), num(us)) else {
            return Err(format!(
                "{GEMM_KERNELS_FILE} line {line}: m, k, n and measured_us must be positive numbers up to 10,000,000"
            ));
        };
        let at = match by_gpu.iter().position(|o| &o.gpu == gpu) {
            Some(at) => at,
            None => {
                let gemm_gpu = gpu_of(gpu).map_err(|e| format!("{GEMM_KERNELS_FILE} line {line}: {e}"))?;
                by_gpu.push(OnGpu { gpu: gpu.clone(), gemm_gpu, errors: vec![] });
                by_gpu.len() - 1
            }
        };
        let OnGpu { gemm_gpu: g, errors, .. } = &mut by_gpu[at];
        let gemm = Gemm { m, n, k };
        // A kernel's run beyond its bytes and FLOPs, as the model charges each kernel of a
        // captured graph: the profile sums the kernels' GPU time, not their launches.
        let predicted_s = gemm.time_s(2.0, *g) + GRAPH_KERNEL_S;
        let (compute_s, stream_s) = (gemm.compute_time_s(2.0, *g), gemm.stream_time_s(2.0, 2.0, *g));
        let regime = if compute_s < stream_s / 3.0 {
            Regime::Streaming
        } else if compute_s > 3.0 * stream_s {
            Regime::Computing
        } else {
            Regime::Ridge
        };
        errors.push(((us * 1e-6 / predicted_s).ln(), regime));
    }
    Ok(by_gpu
        .into_iter()
        .map(|OnGpu { gpu, errors, .. }| {
            let of = |r: Regime| median(errors.iter().filter(|e| e.1 == r).map(|e| e.0).collect()).exp_m1();
            GemmCheck {
                label: gpu_label(&gpu),
                kernels: errors.len(),
                median_error: median(errors.iter().map(|e| e.0).collect()).exp_m1(),
                median_abs_error: median(errors.iter().map(|e| e.0.abs()).collect()).exp_m1(),
                streaming_median_error: of(Regime::Streaming),
                ridge_median_error: of(Regime::Ridge),
                computing_median_error: of(Regime::Computing),
                gpu,
            }
        })
        .collect())
}

/// The kernels profiled on one GPU as they are read: the GPU as the model sees it, and
/// log(measured / predicted) of each kernel with where it sits on the roofline.
struct OnGpu {
    gpu: String,
    gemm_gpu: GemmGpu,
    errors: Vec<(f64, Regime)>,
}

/// Where a GEMM sits on the roofline ([`GemmCheck`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Regime {
    Streaming,
    Ridge,
    Computing,
}

/// One line per GPU for the CLI and the page: "A100 SXM 80GB: 816 GEMMs, median error +5.8%
/// (median |error| 9.0%); reading the weights (decoding) +11.9%, ...".
pub fn gemm_check_sentence(c: &GemmCheck) -> String {
    let pct = |e: f64| format!("{:+.1}%", e * 100.0);
    format!(
        "{}: {} GEMMs, median error {} (median |error| {:.1}%); reading the weights (decoding) {}, near the ridge {}, computing (prefill) {}",
        c.label,
        c.kernels,
        pct(c.median_error),
        c.median_abs_error * 100.0,
        pct(c.streaming_median_error),
        pct(c.ridge_median_error),
        pct(c.computing_median_error)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemm_times_agree_with_profiled_kernels_from_decoding_to_prefill() {
        let checks = gemm_check(GEMM_KERNELS_CSV).expect("the shipped profile reads");
        assert_eq!(
            checks.iter().map(|c| (c.gpu.as_str(), c.kernels)).collect::<Vec<_>>(),
            [("a100-80g", 816), ("h100-80g", 816)]
        );
        for c in &checks {
            // No bias overall, each kernel within about a tenth, and no part of the roofline
            // off by more than about a seventh: the same formula holds from one token to
            // sixteen thousand.
            assert!(c.median_error.abs() < 0.08, "{}", gemm_check_sentence(c));
            assert!(c.median_abs_error < 0.10, "{}", gemm_check_sentence(c));
            for e in [c.streaming_median_error, c.ridge_median_error, c.computing_median_error] {
                assert!(e.abs() < 0.15, "{}", gemm_check_sentence(c));
            }
        }
        assert!(gemm_check_sentence(&checks[0]).starts_with("A100 SXM 80GB: 816 GEMMs, median error +"));
    }

    /// The share of HBM bandwidth at which the profiled streaming kernels of `gpu` have a median
    /// error of zero (bisection; the classes follow the share, as the check's do).
    fn streaming_root(gpu: &str) -> f64 {
        let error_at = |share: f64| {
            let checks = check_on(GEMM_KERNELS_CSV, |c| {
                let peak = row_gpu(c)?.mem_bw;
                Ok(GemmGpu { hbm_bytes_per_s: peak * share, ..profiled_gpu(c)? })
            })
            .expect("reads");
            checks.iter().find(|c| c.gpu == gpu).map(|c| c.streaming_median_error).expect("profiled")
        };
        let (mut lo, mut hi) = (0.5, 1.0);
        for _ in 0..40 {
            let mid = (lo + hi) / 2.0;
            // Too low a share predicts too slow: measured/predicted - 1 below zero.
            if error_at(mid) < 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (lo + hi) / 2.0
    }

    #[test]
    fn gemms_stream_at_the_share_of_hbm_the_profiled_kernels_reach() {
        use crate::engine::extended::calibration::{GEMM_BW_A100, GEMM_BW_H100};
        let (a100, h100) = (streaming_root("a100-80g"), streaming_root("h100-80g"));
        assert!((a100 - GEMM_BW_A100).abs() < 0.0015, "A100: {a100}");
        assert!((h100 - GEMM_BW_H100).abs() < 0.0015, "H100: {h100}");
        // So the check's streaming class sits at zero on both, by construction; the ridge and
        // compute classes stay a check.
        for c in gemm_check(GEMM_KERNELS_CSV).expect("reads") {
            assert!(c.streaming_median_error.abs() < 0.005, "{}", gemm_check_sentence(&c));
        }
    }

    #[test]
    fn the_check_fails_a_model_without_waves_of_tiles() {
        // Charging no wave quantization or split-K (no SM count) leaves the thin and middle
        // GEMMs, whose few tiles do not fill the SMs, slower than the model says.
        let flat = check_on(GEMM_KERNELS_CSV, |c| Ok(GemmGpu { sms: None, ..profiled_gpu(c)? })).expect("reads");
        assert!(flat.iter().any(|c| c.ridge_median_error > 0.15), "{flat:?}");
    }

    #[test]
    fn a_broken_file_is_refused_with_the_line() {
        assert!(gemm_check("<html>not found</html>").unwrap_err().contains("header"));
        let head = HEADER.join(",");
        let bad = format!("{head}\na100-80g,x,1,1,up,1,4096,-3,100\n");
        assert!(gemm_check(&bad).unwrap_err().contains("line 2: m, k, n"));
        let short = format!("{head}\na100-80g,x,1\n");
        assert!(gemm_check(&short).unwrap_err().contains("line 2: 3 cells"));
        let v100 = format!("{head}\nv100-32g,x,1,1,up,1,4096,4096,100\n");
        assert!(gemm_check(&v100).unwrap_err().contains("A100s and H100s"));
        assert_eq!(gemm_check(&head), Ok(vec![]));
    }
}
