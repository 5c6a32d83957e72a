//! The default model's GEMM times against GEMMs measured one by one: vidur's profiles of the
//! four GEMMs of a transformer layer (QKV, output projection, feed-forward up and down) of
//! Llama 2 7B, CodeLlama 34B and Llama 2 70B at 1 to 16,384 tokens and tensor parallelism 1 to
//! 8, on an A100 80GB and an H100 SXM: 1,632 kernels from decoding's thin GEMMs, bound by
//! reading the weights, to prefill's compute-bound ones (`tests/data/kernels/`, whose
//! README says what was taken). No constant of the model was taken from them.

use crate::support::data_dir;
use madmax::engine::extended::calibration::{sustained_gemm_util, GRAPH_KERNEL_S, MAMF_H100, UTIL};
use madmax::engine::extended::gemm::{Gemm, GemmGpu};
use madmax::presets;

/// One profiled GEMM: `m` tokens by `k` by `n`, and its measured kernel time, s.
struct Profiled {
    gpu: String,
    gemm: Gemm,
    measured_s: f64,
}

fn profiled() -> Vec<Profiled> {
    let text = std::fs::read_to_string(data_dir().join("kernels/vidur_gemms.csv")).expect("the profile is shipped");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("gpu,model,tp,tokens,gemm,m,k,n,measured_us"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let num = |i: usize| f[i].parse::<f64>().unwrap_or_else(|e| panic!("{l}: {e}"));
            Profiled { gpu: f[0].to_owned(), gemm: Gemm { m: num(5), k: num(6), n: num(7) }, measured_s: num(8) * 1e-6 }
        })
        .collect()
}

/// The GPU as the model sees a GEMM profiled alone: the preset's datasheet figures at the
/// validation's GEMM and streaming fractions, the H100 at its burst rate (a kernel timed for
/// a few milliseconds runs at the boost clock; [`MAMF_H100`]) rather than the rate it sustains
/// through a training step.
fn gemm_gpu(id: &str) -> GemmGpu {
    let (preset, flops_util) = match id {
        "a100" => ("a100_80", UTIL.flops),
        "h100" => ("h100_sxm", sustained_gemm_util(MAMF_H100)),
        other => panic!("no GPU {other}"),
    };
    let g = presets::all().expect("presets").gpu(preset).expect("GPU preset");
    GemmGpu::new(g.f16_flops * flops_util, g.mem_bw * UTIL.mem_bw, Some(g.sm_count))
}

fn median(mut v: Vec<f64>) -> f64 {
    madmax::engine::order::sort_f64(&mut v);
    v[v.len() / 2]
}

#[test]
fn gemm_times_agree_with_profiled_kernels_from_decoding_to_prefill() {
    let rows = profiled();
    assert_eq!(rows.len(), 1632);
    for gpu in ["a100", "h100"] {
        let g = gemm_gpu(gpu);
        // log(measured / predicted) per kernel, by where it sits on the roofline: reading the
        // weights (decoding), near the ridge, computing (prefill).
        let (mut all, mut streaming, mut ridge, mut computing) = (vec![], vec![], vec![], vec![]);
        for p in rows.iter().filter(|p| p.gpu == gpu) {
            let Gemm { m, n, k } = p.gemm;
            // A kernel's run beyond its bytes and FLOPs, as the model charges each kernel of a
            // captured graph: the profile times kernels on the GPU, not their launches.
            let predicted_s = p.gemm.time_s(2.0, g) + GRAPH_KERNEL_S;
            let e = (p.measured_s / predicted_s).ln();
            let compute_s = p.gemm.compute_time_s(2.0, g);
            let stream_s = (m * k + k * n + m * n) * 2.0 / g.hbm_bytes_per_s;
            all.push(e);
            if compute_s < stream_s / 3.0 {
                streaming.push(e);
            } else if compute_s > 3.0 * stream_s {
                computing.push(e);
            } else {
                ridge.push(e);
            }
        }
        let abs_median = median(all.iter().map(|e| e.abs()).collect());
        let pct = |e: f64| 100.0 * (e.exp() - 1.0);
        let regimes = [("streaming", streaming), ("near the ridge", ridge), ("computing", computing)];
        for (what, v) in &regimes {
            assert!(v.len() > 100, "{gpu}: {} kernels {what}", v.len());
        }
        let medians = regimes.map(|(what, v)| (what, median(v)));
        let overall = median(all);
        println!(
            "{gpu}: measured / model median {:+.1}%, median |error| {:.1}%; {}",
            pct(overall),
            pct(abs_median),
            medians.map(|(w, e)| format!("{w} {:+.1}%", pct(e))).join(", ")
        );
        // No bias overall, each kernel within about a tenth, and no part of the roofline off by
        // more than about a seventh: the same formula holds from one token to sixteen thousand.
        assert!(overall.abs() < 0.08, "{gpu}: median {:+.1}%", pct(overall));
        assert!(abs_median < 0.10, "{gpu}: median |error| {:.1}%", pct(abs_median));
        for (what, e) in medians {
            assert!(e.abs() < 0.15, "{gpu}: {what} median {:+.1}%", pct(e));
        }
    }
}
