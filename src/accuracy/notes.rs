//! What the calculator and the CLI say about the default model's accuracy, each sentence a
//! constant (so the page need not predict hundreds of runs to print it) that a test recomputes
//! from the shipped rows, so it cannot go stale: on LLM training runs, on recommendation
//! models, on serving, and on 8-way tensor parallelism of small GPTs.

#[cfg(not(target_arch = "wasm32"))]
use super::{shipped, summarize, RowResult, RunKind};

/// Every shipped LLM training row, predicted now, each in its set ([`shipped`] less the serving
/// and the recommendation rows).
#[cfg(not(target_arch = "wasm32"))]
pub(super) fn training_rows() -> Option<Vec<RowResult>> {
    let rows: Vec<RowResult> = shipped().into_iter().filter(|r| r.kind() == Some(RunKind::LlmTraining)).collect();
    (!rows.is_empty()).then_some(rows)
}

/// What the calculator and the CLI say about a recommendation model's predicted throughput, for
/// a scenario on one GPU (`[0]`) and on more (`[1]`), from every published run of one: NVIDIA's
/// DLRM in PyTorch and TensorFlow on one and eight A100s (calibration since they informed
/// costing table-wise sharding at its busiest GPU, placing NVIDIA's bottom MLP on one GPU and
/// Horovod's launch cycle) and TensorFlow's on one to sixteen V100s (held out). A test
/// recomputes both from the shipped rows ([`recommendation_note`]).
pub const RECOMMENDATION_NOTES: [&str; 2] = [
    "On the 10 published runs of a recommendation model on 1 GPU it was checked against (NVIDIA's DLRM in PyTorch and TensorFlow on A100s and V100s, those on V100s held out), the default model predicted from 10% fewer to 26% more samples/s than measured (median error 11%): PyTorch DLRM from 2% fewer to 26% more, TensorFlow2 DLRM 11% to 21% more, TensorFlow2 DLRM on V100s from 10% fewer to 17% more.",
    "On the 16 published runs of a recommendation model on 8 and 16 GPUs it was checked against (NVIDIA's DLRM in PyTorch and TensorFlow on A100s and V100s, those on V100s held out), the default model predicted from 8% fewer to 44% more samples/s than measured (median error 8%): PyTorch DLRM from 8% fewer to 3% more, TensorFlow2 DLRM 7% to 21% more, TensorFlow2 DLRM on V100s from 2% fewer to 44% more.",
];

/// [`RECOMMENDATION_NOTES`]`[several as usize]` as the shipped rows make it now: the runs on one
/// GPU, or on more than one.
#[cfg(not(target_arch = "wasm32"))]
pub fn recommendation_note(several: bool) -> Option<String> {
    let rows: Vec<RowResult> =
        shipped().into_iter().filter(|r| r.recommendation && r.error.is_some() && (r.n_gpus > 1) == several).collect();
    let stats = summarize(&rows)?;
    let (least, most) = error_range(rows.iter().filter_map(|r| r.error));
    // The GPUs the runs ran on ("A100s and V100s"), and which of them are held out.
    let families = |keep: &dyn Fn(&RowResult) -> bool| {
        let mut f: Vec<&str> = rows.iter().filter(|r| keep(r)).filter_map(|r| super::gpu_family(&r.gpu)).collect();
        crate::engine::order::sort(&mut f);
        f.dedup();
        crate::wording::listed(&f.iter().map(|f| format!("{f}s")).collect::<Vec<_>>())
    };
    let on = families(&|_| true);
    let held = if rows.iter().all(RowResult::held_out) {
        ", held out".to_owned()
    } else if rows.iter().any(RowResult::held_out) {
        format!(", those on {} held out", families(&|r| r.held_out()))
    } else {
        String::new()
    };
    let bound = if least > 0.0 {
        Some("an upper")
    } else if most < 0.0 {
        Some("a lower")
    } else {
        None
    };
    let spread = if let Some(bound) = bound {
        format!(
            "predicted {} samples/s than measured (median {:.0}%): read its DLRM throughput as {bound} bound",
            range_words((least, most)),
            stats.all.median_abs_error * 100.0
        )
    } else {
        // Runs on both sides: say which source is where.
        let mut sources: Vec<&str> = rows.iter().map(|r| source_name(&r.source)).collect();
        crate::engine::order::sort(&mut sources);
        sources.dedup();
        let common = common_prefix(&sources);
        let each: Vec<String> = sources
            .iter()
            .map(|name| {
                let own = rows.iter().filter(|r| source_name(&r.source) == *name).filter_map(|r| r.error);
                format!("{} {}", &name[common..], range_words(error_range(own)))
            })
            .collect();
        format!(
            "predicted {} samples/s than measured (median error {:.0}%): {}",
            range_words((least, most)),
            stats.all.median_abs_error * 100.0,
            each.join(", ")
        )
    };
    let mut gpus: Vec<u64> = rows.iter().map(|r| r.n_gpus).collect();
    crate::engine::order::sort(&mut gpus);
    gpus.dedup();
    let gpus = crate::wording::listed(&gpus.iter().map(u64::to_string).collect::<Vec<_>>());
    let plural = if several { "GPUs" } else { "GPU" };
    Some(format!(
        "On the {} published runs of a recommendation model on {gpus} {plural} it was checked against (NVIDIA's DLRM in PyTorch and TensorFlow on {on}{held}), the default model {spread}.",
        rows.len()
    ))
}

/// What the published convolutional-network runs say of the default model (the calculator's and
/// the CLI's "runs like this" for a CNN), as [`vision_note`] computes it (a test checks).
pub const VISION_NOTE: &str = "On the 26 published ResNet-50 runs it was checked against (NVIDIA's PyTorch and MXNet training on 1 to 16 A100s and V100s, 18 of them held out), the default model predicted from 17% fewer to 44% more images/s than measured (median error 13%): in 32-bit floats on V100s 2% to 17% fewer, in mixed precision from 10% fewer to 44% more, in TF32 on A100s 1% to 14% more.";

/// [`VISION_NOTE`] as the shipped rows make it now.
#[cfg(not(target_arch = "wasm32"))]
pub fn vision_note() -> Option<String> {
    let rows: Vec<RowResult> = shipped().into_iter().filter(|r| r.vision && r.error.is_some()).collect();
    let stats = summarize(&rows)?;
    let range = |keep: &dyn Fn(&RowResult) -> bool| {
        range_words(error_range(rows.iter().filter(|r| keep(r)).filter_map(|r| r.error)))
    };
    let bytes = |r: &RowResult, b: u64| r.scenario.as_ref().is_some_and(|s| s["model"]["bytes_per_nonemb_param"] == b);
    let fp32_v100 = range(&|r| bytes(r, 4) && super::gpu_family(&r.gpu) == Some("V100"));
    let tf32_a100 = range(&|r| bytes(r, 4) && super::gpu_family(&r.gpu) == Some("A100"));
    let mixed = range(&|r| bytes(r, 2));
    let gpus = rows.iter().map(|r| r.n_gpus);
    let (fewest, most) = (gpus.clone().min()?, gpus.max()?);
    let held = rows.iter().filter(|r| r.held_out()).count();
    let held = if held == rows.len() { "held out".to_owned() } else { format!("{held} of them held out") };
    Some(format!(
        "On the {} published ResNet-50 runs it was checked against (NVIDIA's PyTorch and MXNet training on {fewest} to {most} A100s and V100s, {held}), the default model predicted {} images/s than measured (median error {:.0}%): in 32-bit floats on V100s {fp32_v100}, in mixed precision {mixed}, in TF32 on A100s {tf32_a100}.",
        rows.len(),
        range_words(error_range(rows.iter().filter_map(|r| r.error))),
        stats.all.median_abs_error * 100.0
    ))
}

/// The least and the largest of signed `errors`.
#[cfg(not(target_arch = "wasm32"))]
fn error_range(errors: impl Iterator<Item = f64>) -> (f64, f64) {
    errors.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), e| (lo.min(e), hi.max(e)))
}

/// A range of errors in words: "from 3% fewer to 12% more", "66% to 88% more".
#[cfg(not(target_arch = "wasm32"))]
fn range_words(range: (f64, f64)) -> String {
    range_words_as(range, "fewer")
}

/// [`range_words`] with `fewer` the word for below measured ("less" for time); a range of one
/// value (one run) says it once: "26% less".
#[cfg(not(target_arch = "wasm32"))]
fn range_words_as((least, most): (f64, f64), fewer: &str) -> String {
    let pct = |x: f64| format!("{:.0}%", x.abs() * 100.0);
    let one = |x: f64, word: &str| format!("{} {word}", pct(x));
    if least >= 0.0 && pct(least) == pct(most) {
        one(most, "more")
    } else if least >= 0.0 {
        format!("{} to {} more", pct(least), pct(most))
    } else if most <= 0.0 && pct(least) == pct(most) {
        one(most, fewer)
    } else if most <= 0.0 {
        format!("{} to {} {fewer}", pct(most), pct(least))
    } else {
        format!("from {} {fewer} to {} more", pct(least), pct(most))
    }
}

/// A source's name without its details: "NVIDIA DeepLearningExamples PyTorch DLRM" of
/// "NVIDIA DeepLearningExamples PyTorch DLRM (README, ...)".
#[cfg(not(target_arch = "wasm32"))]
fn source_name(source: &str) -> &str {
    source.split(" (").next().unwrap_or(source).trim()
}

/// Bytes the names share at their start, up to a word boundary (0 for a single name).
#[cfg(not(target_arch = "wasm32"))]
fn common_prefix(names: &[&str]) -> usize {
    let (Some(first), true) = (names.first(), names.len() > 1) else { return 0 };
    let mut end = 0;
    for (i, _) in first.match_indices(' ') {
        let prefix = &first[..=i];
        if names.iter().all(|n| n.starts_with(prefix)) {
            end = i + 1;
        }
    }
    end
}

/// What the calculator and the CLI say about a serving scenario's predicted times: how the
/// default model did on the published serving runs batched as the scenario is, static
/// (`[0]`) or in flight (`[1]`). A test recomputes them from the shipped rows
/// ([`serving_note`]).
pub const SERVING_NOTES: [&str; 2] = [
    "On the 354 published serving runs of static batches it was checked against (FasterTransformer, TensorRT-LLM and vLLM on A100s, TensorRT-LLM on H100s and H200s, vLLM on MI300Xs, 307 of them held out), the default model predicted less time than measured on 294 of them, median error 16%. Read its serving times as a lower bound.",
    "On the 70 published serving runs of in-flight batching it was checked against (vLLM 0.6 and 0.11 and SGLang 0.3 serving Llama 3.1 8B to 405B and Qwen3 8B and 14B on one to eight A100s, H100s or MI300Xs, 8 of them held out), the default model predicted less time than measured on 67 of them, median error 24%; measured over predicted time, 8 in 10 runs fell within 1.05\u{d7} to 1.48\u{d7} for the time per output token (median 1.23\u{d7}, 26 runs), 1.23\u{d7} to 7.36\u{d7} for the first token (median 1.60\u{d7}, 12 runs) and 1.08\u{d7} to 2.14\u{d7} for whole requests and throughput (median 1.37\u{d7}, 32 runs). Read its serving times as a lower bound.",
];

/// [`SERVING_NOTES`]`[inflight as usize]` as the shipped rows make it now.
#[cfg(not(target_arch = "wasm32"))]
pub fn serving_note(inflight: bool) -> Option<String> {
    let rows: Vec<RowResult> = shipped()
        .into_iter()
        .filter(|r| r.kind() == Some(RunKind::LlmServing) && r.error.is_some() && r.batched_in_flight() == inflight)
        .collect();
    let stats = summarize(&rows)?;
    // Faster than measured: a time predicted under the measured one, or a rate over it.
    let faster = |r: &RowResult| r.error.zip(r.metric).is_some_and(|(e, m)| (e > 0.0) == m.higher_is_faster());
    let fast = rows.iter().filter(|r| faster(r)).count();
    let held = rows.iter().filter(|r| r.held_out()).count();
    let held = match held {
        0 => String::new(),
        all if all == rows.len() => ", all held out".to_owned(),
        held => format!(", {held} of them held out"),
    };
    let far_slow: Vec<&RowResult> =
        rows.iter().filter(|r| !faster(r) && r.error.is_some_and(|e| e.abs() > 0.25)).collect();
    let exceptions = if far_slow.is_empty() {
        String::new()
    } else if far_slow.iter().all(|r| r.parallelism.contains("PP")) {
        format!(
            "; it predicted over 25% more time than measured only on pipeline-parallel plans ({} runs)",
            far_slow.len()
        )
    } else {
        format!(
            "; it predicted over 25% more time than measured on {}",
            crate::units::things(far_slow.len() as u64, "run")
        )
    };
    let advice = if fast * 4 >= rows.len() * 3 { ". Read its serving times as a lower bound" } else { "" };
    let figures = if inflight { by_figure(&rows) } else { String::new() };
    let (kind, what) = if inflight {
        ("in-flight batching", "vLLM 0.6 and 0.11 and SGLang 0.3 serving Llama 3.1 8B to 405B and Qwen3 8B and 14B on one to eight A100s, H100s or MI300Xs")
    } else {
        (
            "static batches",
            "FasterTransformer, TensorRT-LLM and vLLM on A100s, TensorRT-LLM on H100s and H200s, vLLM on MI300Xs",
        )
    };
    Some(format!(
        "On the {} published serving runs of {kind} it was checked against ({what}{held}), the default model predicted less time than measured on {fast} of them, median error {:.0}%{exceptions}{figures}{advice}.",
        rows.len(),
        stats.all.median_abs_error * 100.0,
    ))
}

/// How far off each serving figure runs: measured over predicted time per figure (the time per
/// output token, the first token, and whole requests with the throughput, whose time goes as its
/// inverse), 10th to 90th percentile and median, for figures with [`FIGURE_MIN_RUNS`] runs or
/// more; empty when none has.
#[cfg(not(target_arch = "wasm32"))]
fn by_figure(rows: &[RowResult]) -> String {
    use super::Metric::*;
    let figures: [(&str, &[super::Metric]); 3] = [
        ("the time per output token", &[MedianTpotMs, MedianItlMs, DecodeMsPerToken]),
        ("the first token", &[MedianTtftMs, TtftMs, PrefillMs]),
        ("whole requests and throughput", &[MedianE2eMs, LatencyMs, OutputTokensPerS, OutputTokensPerSPerGpu]),
    ];
    let spreads: Vec<String> = figures
        .iter()
        .filter_map(|(name, metrics)| {
            let mut v: Vec<f64> = rows
                .iter()
                .filter(|r| r.metric.is_some_and(|m| metrics.contains(&m)))
                .filter_map(super::expectation::measured_over_predicted_time)
                .collect();
            if v.len() < FIGURE_MIN_RUNS {
                return None;
            }
            let [low, median, high] = super::expectation::deciles(&mut v);
            Some(format!("{low:.2}\u{d7} to {high:.2}\u{d7} for {name} (median {median:.2}\u{d7}, {} runs)", v.len()))
        })
        .collect();
    if spreads.is_empty() {
        return String::new();
    }
    format!("; measured over predicted time, 8 in 10 runs fell within {}", crate::wording::listed(&spreads))
}

/// Figures of serving with at least this many runs get their spread in the serving notes.
#[cfg(not(target_arch = "wasm32"))]
const FIGURE_MIN_RUNS: usize = 5;

/// What the calculator tells users about the default model's accuracy on LLM training runs. A test
/// recomputes it from the shipped rows ([`accuracy_note`]), so it cannot go stale; it is a
/// constant only so the calculator does not predict 200 runs to print it.
pub const ACCURACY_NOTE: &str = "Median error 5% on the 616 published LLM training runs of its calibration set (runs some choice of the model looked at). On 224 runs held out from every choice (BLOOM 176B, MT-NLG 530B, Llama 3.1 405B in FP8 on 256 to 8,192 H100s, H200s, B200s and GB200s, small GPTs on one node, FSDP and FP8 training on H100s, Megatron-DeepSpeed with ZeRO-1 on A100s and A800s, a mixture of experts on 256 H100s) the median error is 6%, and it predicts faster than measured on 146 of them: it tends to be optimistic.";

/// [`ACCURACY_NOTE`] as the shipped rows make it now.
#[cfg(not(target_arch = "wasm32"))]
pub fn accuracy_note() -> Option<String> {
    let rows = training_rows()?;
    let (held, fit): (Vec<RowResult>, Vec<RowResult>) = rows.into_iter().partition(RowResult::held_out);
    let fit = summarize(&fit)?;
    let held_stats = summarize(&held)?;
    let faster = held.iter().filter(|r| r.error.is_some_and(|e| e < 0.0)).count();
    let advice = if faster * 4 >= held_stats.all.rows * 3 {
        ": read its times as a lower bound"
    } else if faster * 5 >= held_stats.all.rows * 3 {
        ": it tends to be optimistic"
    } else {
        ""
    };
    Some(format!(
        "Median error {:.0}% on the {} published LLM training runs of its calibration set (runs some choice of the model looked at). On {} runs held out from every choice (BLOOM 176B, MT-NLG 530B, Llama 3.1 405B in FP8 on 256 to 8,192 H100s, H200s, B200s and GB200s, small GPTs on one node, FSDP and FP8 training on H100s, Megatron-DeepSpeed with ZeRO-1 on A100s and A800s, a mixture of experts on 256 H100s) the median error is {:.0}%, and it predicts faster than measured on {faster} of them{advice}.",
        fit.all.median_abs_error * 100.0,
        fit.all.rows,
        held_stats.all.rows,
        held_stats.all.median_abs_error * 100.0,
    ))
}

/// What the calculator and the CLI say about a mixture-of-experts LLM's training time, from every
/// published run of one (FlagPerf's Mixtral 8x7B, calibration since it led to counting the token
/// dispatch; Megatron-MoE-ModelZoo's Qwen3-235B-A22B runs, calibration but for the one that
/// recomputes nothing, since their recomputed modules were modelled). A test recomputes it from
/// the shipped rows ([`moe_note`]).
pub const MOE_NOTE: &str = "On the 13 published training runs of a mixture-of-experts LLM it was checked against (Mixtral-8x7B and Qwen3-235B-A22B on 32 H100s and 256 H100s with tensor, pipeline, context, expert and data parallelism; 12 in the calibration set, 1 held out), the default model predicted from 43% less to 95% more time than measured: read its mixture-of-experts training times as rough. 1 of them dispatched their tokens as Megatron-core 0.6 does, in eager PyTorch, 12 with Transformer Engine's fused permute and unpermute. 12 of those sent them with DeepEP's all-to-all.";

/// [`MOE_NOTE`] as the shipped rows make it now.
#[cfg(not(target_arch = "wasm32"))]
pub fn moe_note() -> Option<String> {
    let rows: Vec<RowResult> = training_rows()?
        .into_iter()
        .filter(|r| r.error.is_some() && r.scenario.as_ref().is_some_and(|s| s["model"]["type"] == "LLM_MoE"))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let (least, most) = error_range(rows.iter().filter_map(|r| r.error));
    let time = range_words_as((least, most), "less");
    let advice = if most < 0.0 {
        ": read its mixture-of-experts training times as a lower bound"
    } else if least < 0.0 {
        ": read its mixture-of-experts training times as rough"
    } else {
        ""
    };
    let mut models: Vec<&str> = rows.iter().map(|r| r.model.as_str()).collect();
    crate::engine::order::sort(&mut models);
    models.dedup();
    // Clusters smallest first.
    let mut clusters: Vec<(u64, &str)> =
        rows.iter().map(|r| (r.n_gpus, super::gpu_family(&r.gpu).unwrap_or("GPU"))).collect();
    crate::engine::order::sort(&mut clusters);
    clusters.dedup();
    let gpus: Vec<String> = clusters.iter().map(|(n, gpu)| format!("{n} {gpu}s")).collect();
    let held = rows.iter().filter(|r| r.held_out()).count();
    let set = match (rows.len() - held, held) {
        (_, 0) => "in the calibration set".to_owned(),
        (0, _) => "held out".to_owned(),
        (fit, held) => format!("{fit} in the calibration set, {held} held out"),
    };
    let runs = crate::units::things(rows.len() as u64, "published training run");
    // The kinds of parallelism the runs used, in the validation rows' order.
    let named = [("TP", "tensor"), ("PP", "pipeline"), ("CP", "context"), ("EP", "expert"), ("DP", "data")];
    let kinds: Vec<&str> = named
        .iter()
        .filter(|(k, _)| rows.iter().any(|r| r.parallelism.split('+').any(|p| p == *k)))
        .map(|(_, word)| *word)
        .collect();
    let parallelism =
        if kinds.is_empty() { "one GPU".to_owned() } else { format!("{} parallelism", crate::wording::listed(&kinds)) };
    let dispatched = |kind: &str| {
        rows.iter().filter(|r| r.scenario.as_ref().is_some_and(|s| s["model"]["moe_dispatch"] == kind)).count()
    };
    let deepep = dispatched("deepep");
    let fused = dispatched("fused") + deepep;
    const EAGER: &str = "as Megatron-core 0.6 does, in eager PyTorch";
    const FUSED: &str = "with Transformer Engine's fused permute and unpermute";
    let dispatch = match (rows.len() - fused, fused) {
        (1, 0) => format!("That run dispatched its tokens {EAGER}."),
        (_, 0) => format!("They dispatched their tokens {EAGER}."),
        (0, _) => format!("They dispatched their tokens {FUSED}."),
        (eager, fused) => format!("{eager} of them dispatched their tokens {EAGER}, {fused} {FUSED}."),
    };
    let dispatch = match deepep {
        0 => dispatch,
        n => format!("{dispatch} {n} of those sent them with DeepEP's all-to-all."),
    };
    Some(format!(
        "On the {runs} of a mixture-of-experts LLM it was checked against ({} on {} with {}; {set}), the default model predicted {time} time than measured{advice}. {dispatch}",
        crate::wording::listed(&models),
        crate::wording::listed(&gpus),
        parallelism,
    ))
}

/// What the calculator and the CLI add when a host-bound plan splits its blocks 8 ways by
/// tensor parallelism: on every published run of that kind the model predicted less time than
/// was measured (SOURCES.md section 5: the time it misses is per layer and depends on the
/// micro-batch size, not on anything the model counts). A test recomputes it from the shipped
/// rows ([`tp8_host_note`]).
pub const TP8_HOST_NOTE: &str = "On the 29 published runs like this (small GPTs split 8 ways by tensor parallelism on one node, vTrain), the model predicted 10% to 34% less time than was measured: expect this plan to run slower than shown.";

/// [`TP8_HOST_NOTE`] as the shipped rows make it now: vTrain's single-node runs with 8-way
/// tensor parallelism and nothing else.
#[cfg(not(target_arch = "wasm32"))]
pub fn tp8_host_note() -> Option<String> {
    let rows = training_rows()?;
    let errors: Vec<f64> =
        rows.iter().filter(|r| r.id.starts_with("vtrain-s-") && r.plan == "TP 8").filter_map(|r| r.error).collect();
    let (least, most) = errors.iter().fold((f64::INFINITY, 0.0_f64), |(lo, hi), e| (lo.min(-e), hi.max(-e)));
    (!errors.is_empty() && least > 0.0).then(|| {
        format!(
            "On the {} published runs like this (small GPTs split 8 ways by tensor parallelism on one node, vTrain), the model predicted {:.0}% to {:.0}% less time than was measured: expect this plan to run slower than shown.",
            errors.len(),
            least * 100.0,
            most * 100.0
        )
    })
}

#[cfg(test)]
mod tests {
    use super::super::gpu_family;
    use super::*;

    #[test]
    fn error_ranges_are_said_each_way_and_sources_by_what_sets_them_apart() {
        assert_eq!(range_words((0.04, 0.37)), "4% to 37% more");
        assert_eq!(range_words((-0.3, -0.1)), "10% to 30% fewer");
        assert_eq!(range_words((-0.028, 0.118)), "from 3% fewer to 12% more");
        // One run, or runs that round alike, say one value; time is less, not fewer.
        assert_eq!(range_words_as((-0.255, -0.255), "less"), "26% less");
        assert_eq!(range_words_as((-0.3, 0.1), "less"), "from 30% less to 10% more");
        let names = ["NVIDIA DeepLearningExamples PyTorch DLRM", "NVIDIA DeepLearningExamples TensorFlow2 DLRM"];
        assert_eq!(&names[0][common_prefix(&names)..], "PyTorch DLRM");
        assert_eq!(common_prefix(&names[..1]), 0);
        assert_eq!(source_name("vTrain (Bang et al., MICRO 2024)"), "vTrain");
    }

    #[test]
    fn the_tensor_parallel_note_says_what_the_rows_say() {
        assert_eq!(tp8_host_note().as_deref(), Some(TP8_HOST_NOTE));
    }

    #[test]
    fn the_moe_note_says_what_the_rows_say() {
        assert_eq!(moe_note().as_deref(), Some(MOE_NOTE));
    }

    #[test]
    fn the_accuracy_note_says_what_the_rows_say() {
        assert_eq!(accuracy_note().as_deref(), Some(ACCURACY_NOTE));
    }

    #[test]
    fn the_recommendation_notes_say_what_the_rows_say() {
        assert_eq!(recommendation_note(false).as_deref(), Some(RECOMMENDATION_NOTES[0]));
        assert_eq!(recommendation_note(true).as_deref(), Some(RECOMMENDATION_NOTES[1]));
    }

    #[test]
    fn the_vision_note_says_what_the_rows_say() {
        assert_eq!(vision_note().as_deref(), Some(VISION_NOTE));
    }

    #[test]
    fn the_serving_notes_say_what_the_rows_say() {
        assert_eq!(serving_note(false).as_deref(), Some(SERVING_NOTES[0]));
        assert_eq!(serving_note(true).as_deref(), Some(SERVING_NOTES[1]));
        // What they say of the runs in words: static batches of FasterTransformer (kipply's
        // benchmarks of it, its own guide), TensorRT-LLM (Azure's guide) and vLLM on A100s,
        // TensorRT-LLM's on H100s and H200s (Azure's guide), and vLLM's of Llama 3.1 405B on
        // eight MI300Xs (Oracle's); in flight, vLLM 0.11 serving Qwen3 8B and 14B on one H100 or
        // A100 (GPUStack) and Llama 3.1 70B and 405B on eight MI300Xs (AMD's results page), and
        // SGLang 0.3 and vLLM 0.6 serving Llama 3.1 8B on one A100 and 70B on four H100s
        // (SGLang's benchmark).
        let serving: Vec<RowResult> = shipped().into_iter().filter(|r| r.kind() == Some(RunKind::LlmServing)).collect();
        for r in &serving {
            if r.batched_in_flight() {
                let engines = ["vLLM v0.11", "vLLM 0.11", "SGLang 0.3 and vLLM 0.6"];
                assert!(engines.iter().any(|e| r.citation.contains(e)), "{}: {}", r.id, r.citation);
                assert!([1, 4, 8].contains(&r.n_gpus), "{}", r.id);
                let models = ["Qwen3-8B", "Qwen3-14B", "Llama 3.1 8B", "Llama 3.1 70B", "Llama 3.1 405B"];
                assert!(models.contains(&r.model.as_str()), "{}", r.id);
                assert!(matches!(gpu_family(&r.gpu), Some("A100" | "H100" | "MI300X")), "{}", r.id);
            } else {
                // vLLM's static batches on MI300Xs are Oracle's; TensorRT-LLM's (Azure's) ran on
                // A100s, H100s and H200s; every other static batch ran on A100s.
                let family = gpu_family(&r.gpu);
                if r.citation.starts_with("Oracle") {
                    assert_eq!(family, Some("MI300X"), "{}", r.id);
                } else if r.citation.contains("TensorRT-LLM") {
                    assert!(matches!(family, Some("A100" | "H100" | "H200")), "{}", r.id);
                } else {
                    assert_eq!(family, Some("A100"), "{}", r.id);
                }
                let engine =
                    ["FasterTransformer", "kipply", "vLLM", "TensorRT-LLM"].iter().any(|e| r.citation.contains(e));
                assert!(engine, "{}: {}", r.id, r.source);
            }
        }
        assert_eq!(serving.iter().filter(|r| r.batched_in_flight()).count(), 70);
    }
}
