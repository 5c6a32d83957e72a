//! What each set of measured runs holds, in words the validation page lists: the sources of
//! each set with their run counts, read from the rows (so the list cannot fall behind a row
//! moving from one set to the other), and for each calibration source the choice of the default
//! model it informed. SOURCES.md gives the whole account of each.

use super::{RowResult, RunKind, RunSet};

/// Why each source's runs are in the calibration set: what they informed. Keyed by the source's
/// short name as `madmax validate` prints it ([`RowResult::source`]). A test checks that every
/// shipped calibration source has an entry and that no other source has one, so a source whose
/// runs move to the calibration set needs its reason written here.
pub const CALIBRATION_WHY: [(&str, &str); 29] = [
    ("vTrain", "the shared set the model was first built against"),
    ("Korthikanti et al. 2022", "the shared set"),
    ("Narayanan et al. 2021", "the shared set"),
    ("kipply", "the shared set"),
    ("vTrain single-node ground truth: odd rows", "the host time per block was fitted on them"),
    (
        "vTrain single-node ground truth: even rows",
        "the host time per block was tested on them, and they informed changes made after it",
    ),
    (
        "MosaicML llm-foundry MPT training benchmarks",
        "the fused-attention speeds and kernel classes were chosen after seeing their errors",
    ),
    ("MosaicML MPT benchmarks at other sequence lengths", "as MosaicML's other MPT runs"),
    ("FlagPerf", "their stated memory led to fp32 gradients"),
    (
        "FlagPerf's DeepSpeed ZeRO-3 runs of Hugging Face models",
        "their gap, 8-23% too fast with a third too little memory, led to modelling eager norms and activation",
    ),
    (
        "OLMo-core's README throughput table",
        "their gap, 9-20% too fast, led to FlashAttention-2's own speed on an H100, the kernel their PyTorch runs",
    ),
    (
        "FlagPerf's Mixtral 8x7B run",
        "its gap, 39% too fast with 29% too little memory, led to counting a mixture of experts' token dispatch",
    ),
    (
        "NVIDIA DeepLearningExamples PyTorch DLRM",
        "their gap on eight GPUs against one led to costing table-wise embedding sharding at the GPU with the most whole tables",
    ),
    ("NVIDIA DeepLearningExamples TensorFlow2 DLRM", "TensorFlow's code led to Horovod's launch cycle"),
    (
        "NVIDIA DeepLearningExamples PyTorch ResNet50 v1.5",
        "their TF32 runs, 64-70% too fast, led to transposing channels-first activations around tensor-core convolutions",
    ),
    (
        "vLLM pull request #2192",
        "their missing 12-22 ms a step led to the host's time per step, taken from vidur's profile of that vLLM",
    ),
    (
        "NVIDIA FasterTransformer GPT guide: TP 8 x PP 3",
        "it led to prefilling a static batch through a pipeline in micro-batches",
    ),
    (
        "GPUStack performance lab: Qwen3 8B at 1 to 8 in flight",
        "their time per token led to costing each kernel of a CUDA graph at a small kernel's measured run",
    ),
    ("GPUStack performance lab", "these bursts of requests led to running a burst step by step"),
    (
        "SGLang's benchmark of SGLang 0.3 and vLLM 0.6",
        "they led to prefilling in steps of their own, to multi-step rounds and to spreading ShareGPT's lengths around their means",
    ),
    (
        "SGLang's benchmark of SGLang 0.3 and vLLM 0.6: vLLM's offline bursts",
        "with GPUStack's bursts, they led to running a burst step by step",
    ),
    (
        "Azure AI benchmarking guide: FP8 on H100s and H200s",
        "their gap, 20-42% too fast, led to running serving's FP8 GEMMs at the share of their peak training's keep",
    ),
    (
        "Megatron-MoE-ModelZoo's Qwen3-235B-A22B runs on H100s with recomputation",
        "the modules they recompute led to modelling Megatron-core's recomputed modules, and a recomputed mixture of experts' all-to-alls",
    ),
    (
        "MLPerf Training v5.1: Llama 3.1 8B pretraining",
        "their context-parallel runs, 40-61% too slow, led to reduce-scattering ZeRO-1's gradients during the backward pass, as Megatron-core's distributed optimizer does, then with the GPT-3 runs to the fp8_param_gather and overlap_param_gather columns",
    ),
    (
        "Megatron-MoE-ModelZoo's Qwen3-235B-A22B long-context runs on H100s",
        "predicted not to fit (131 GB of 85.5) while the model could not recompute modules, they led to modelling Megatron-core's recomputed modules",
    ),
    (
        "MLPerf Training v4.0: GPT-3 175B",
        "12-42% too slow with their tensor-parallel collectives blocking, they led to the overlap_tp_comm column that says their configs overlap them with the GEMMs, then with v5.1's Llama runs to the fp8_param_gather and overlap_param_gather columns, and to reducing each interleaved chunk's gradients once its last micro-batch is through",
    ),
    (
        "InternLM's training performance tables",
        "their error, growing with the ZeRO-1 group to 37% too fast at 1,024 GPUs, led to modelling the per-rank broadcasts by which InternLM's optimizer returns the updated weights (zero1_broadcast)",
    ),
    (
        "MLPerf Training v4.1: GPT-3 175B",
        "12-28% too slow with their tensor-parallel collectives blocking, they led, with v4.0's, to the overlap_tp_comm column",
    ),
    (
        "MLPerf Training v5.0: Llama 3.1 405B pretraining with each replica in one GB200 rack",
        "the model's pipelines crossing racks where their configs keep each replica in one led to the tp_pp_dp_mapping column",
    ),
];

/// What a calibration source informed ([`CALIBRATION_WHY`]); `None` for a source without an
/// entry.
pub fn calibration_why(source: &str) -> Option<&'static str> {
    CALIBRATION_WHY.iter().find(|(name, _)| *name == source).map(|(_, why)| *why)
}

/// The sources of one set's rows, each with its number of rows, in the rows' order. A row
/// without a set (the shared set read without the shipped default) is calibration, as
/// [`super::ShippedRow::predict`] makes it.
pub fn sources_in(rows: &[RowResult], set: RunSet) -> Vec<(&str, usize)> {
    let mut out: Vec<(&str, usize)> = Vec::new();
    for r in rows.iter().filter(|r| r.set.unwrap_or(RunSet::Calibration) == set) {
        match out.iter_mut().find(|(name, _)| *name == r.source) {
            Some((_, n)) => *n += 1,
            None => out.push((&r.source, 1)),
        }
    }
    out
}

/// Which rows the model misses by more than 25%, and what they have in common: the calibration
/// set's misses by kind of run, then the held-out set's: the validation page's sentence.
pub fn misses(rows: &[RowResult]) -> String {
    let far = |held_out: bool| -> Vec<&RowResult> {
        rows.iter().filter(|r| r.held_out() == held_out && r.error.is_some_and(|e| e.abs() > 0.25)).collect()
    };
    let (fit, mut held) = (far(false), far(true));
    if fit.is_empty() && held.is_empty() {
        return "Every row is within 25%.".to_owned();
    }
    let rows_word = |n: usize| if n == 1 { "row" } else { "rows" };
    let mut text = "Where it misses:".to_owned();
    if !fit.is_empty() {
        // Each kind's misses, the worst three named, then what each kind's have in common.
        let mut parts = Vec::new();
        let mut why = Vec::new();
        for kind in RunKind::ALL {
            let mut of_kind: Vec<&RowResult> = fit.iter().copied().filter(|r| r.kind() == Some(kind)).collect();
            if of_kind.is_empty() {
                continue;
            }
            worst_first(&mut of_kind);
            let named: Vec<&str> = of_kind.iter().take(3).map(|r| r.id.as_str()).collect();
            let more = if of_kind.len() > named.len() { ", \u{2026}" } else { "" };
            parts.push(format!("{} {} ({}{more})", of_kind.len(), kind.label(), named.join(", ")));
            let single_node = of_kind.iter().any(|r| r.source.starts_with("vTrain single-node"));
            why.push(match kind {
                RunKind::LlmTraining => format!(
                    "Training: runs whose measured time is far from their neighbours with the same plan (a micro-batch of 64 taking twice as long as two of 32, micro-batches of 2, tensor parallelism of 2 on 8-16 pipeline stages), which the model has no term for{}.",
                    if single_node {
                        ", and small GPTs split 4 or 8 ways by tensor parallelism on one node, slower than the host's time and the collectives' latencies explain (and not in the order of their micro-batch sizes)"
                    } else {
                        ""
                    }
                ),
                RunKind::LlmServing => "Serving: runs timed at the client, through each engine's HTTP server (chat template, tokeniser, streaming), including the engine's host work between GPU steps, which the model has only where a source profiled it: their first tokens and times per token come out short and their throughput high, most on bursts of hundreds of requests sent at once, which the API server paces.".to_owned(),
                RunKind::Recommendation => "Recommendation: DLRMs on one GPU in 16-bit, less bound by the HBM than the model makes them (measured, an A100 80GB runs them little faster than an A100 40GB).".to_owned(),
                RunKind::Vision => "Vision: ResNet-50 in mixed precision, the fastest per GPU: on eight GPUs its measured images/s per GPU fall 13-16% below one GPU's where the model hides the gradient reduction (the CPUs' JPEG decoding, inside the measurement, would explain it).".to_owned(),
            });
        }
        text += &format!(
            " {} calibration {} beyond 25%: {}. {} No row-specific factor hides them.",
            fit.len(),
            rows_word(fit.len()),
            crate::wording::listed(&parts),
            why.join(" ")
        );
    }
    if !held.is_empty() {
        let total = rows.iter().filter(|r| r.held_out() && r.error.is_some()).count();
        let faster = held.iter().filter(|r| r.error.is_some_and(|e| e < 0.0)).count();
        worst_first(&mut held);
        let named: Vec<&str> = held.iter().take(3).map(|r| r.id.as_str()).collect();
        text += &format!(
            " Held out: {} of {total} rows beyond 25%, {} predicted faster than measured (worst: {}). On those runs time went somewhere the model has no term for; expect it to be optimistic on similar jobs (order by largest error to see them).",
            held.len(),
            if faster == held.len() { "all".to_owned() } else { format!("{faster} of them") },
            named.join(", ")
        );
    }
    text + " Open a row to see what the model assumes."
}

/// Rows by their absolute error, largest first (rows without one last).
fn worst_first(rows: &mut [&RowResult]) {
    crate::engine::order::sort_by(rows, |a, b| b.error.map_or(0.0, f64::abs).total_cmp(&a.error.map_or(0.0, f64::abs)));
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::accuracy::shipped;

    #[test]
    fn every_calibration_source_says_why_and_no_other_source_does() {
        let rows = shipped();
        let calibration = sources_in(&rows, RunSet::Calibration);
        let held = sources_in(&rows, RunSet::HeldOut);
        for (name, _) in &calibration {
            assert!(calibration_why(name).is_some(), "calibration source {name:?} says nothing of why");
        }
        for (name, _) in CALIBRATION_WHY {
            assert!(calibration.iter().any(|(c, _)| *c == name), "{name:?} has a reason but no calibration rows");
            assert!(!held.iter().any(|(h, _)| *h == name), "{name:?} has held-out rows");
        }
        // Each source is in one set, so the page's two lists do not share a name.
        assert!(calibration.iter().all(|(c, _)| !held.iter().any(|(h, _)| h == c)));
        // Every row counted once.
        let counted: usize = calibration.iter().chain(&held).map(|(_, n)| n).sum();
        assert_eq!(counted, rows.len());
    }

    #[test]
    fn sources_are_listed_in_the_rows_order_with_their_counts() {
        let row =
            |source: &str, set: Option<RunSet>| RowResult { source: source.to_owned(), set, ..RowResult::default() };
        let rows = [
            row("b", Some(RunSet::HeldOut)),
            row("a", None),
            row("b", Some(RunSet::HeldOut)),
            row("c", Some(RunSet::Calibration)),
            row("a", Some(RunSet::Calibration)),
        ];
        assert_eq!(sources_in(&rows, RunSet::Calibration), [("a", 2), ("c", 1)]);
        assert_eq!(sources_in(&rows, RunSet::HeldOut), [("b", 2)]);
    }

    #[test]
    fn the_misses_are_counted_by_kind_worst_first_and_each_kind_says_why() {
        let row = |id: &str, source: &str, metric: &str, error: f64, set: RunSet| RowResult {
            id: id.to_owned(),
            source: source.to_owned(),
            metric: crate::accuracy::Metric::of_cell(metric),
            error: Some(error),
            set: Some(set),
            ..RowResult::default()
        };
        let near = [row("a", "vTrain", "iteration_s", 0.1, RunSet::Calibration)];
        assert_eq!(misses(&near), "Every row is within 25%.");
        let rows = [
            row("t1", "vTrain", "iteration_s", -0.3, RunSet::Calibration),
            row("t2", "vTrain single-node ground truth: odd rows", "iteration_s", -0.4, RunSet::Calibration),
            row("s1", "GPUStack performance lab", "ttft_ms", -0.8, RunSet::Calibration),
            row("h1", "OLMo-core", "iteration_s", -0.3, RunSet::HeldOut),
            row("h2", "OLMo-core", "iteration_s", 0.1, RunSet::HeldOut),
        ];
        let text = misses(&rows);
        assert!(
            text.starts_with(
                "Where it misses: 3 calibration rows beyond 25%: 2 LLM training (t2, t1) and 1 LLM serving (s1)."
            ),
            "{text}"
        );
        // Each kind with misses says what its runs have in common; the single-node GPTs only
        // when they are among them.
        assert!(text.contains("Training: ") && text.contains("small GPTs") && text.contains("Serving: "), "{text}");
        assert!(!text.contains("Recommendation: "), "{text}");
        assert!(
            text.contains("Held out: 1 of 2 rows beyond 25%, all predicted faster than measured (worst: h1)."),
            "{text}"
        );
        let multi_node = misses(&rows[..1]);
        assert!(
            multi_node.contains("1 calibration row beyond 25%: 1 LLM training (t1).")
                && !multi_node.contains("small GPTs"),
            "{multi_node}"
        );
    }
}
