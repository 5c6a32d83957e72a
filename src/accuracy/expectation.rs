//! What the published runs say about one scenario's predicted time: for a default-model
//! pre-training scenario of a dense LLM on A100s or H100s, the spread of measured against
//! predicted time over the shipped runs with the same kinds of parallelism on the same GPU
//! ([`BANDS`]), turned into an expected range of iteration time; for a static batch of LLM
//! serving launched kernel by kernel, the same over the shipped static batches served with the
//! same tensor and pipeline degrees on the same GPU, turned into a range of end-to-end latency;
//! for a recommendation model, what the published DLRM runs on as many GPUs say
//! ([`super::RECOMMENDATION_NOTES`]); for other LLM serving, what the published serving runs
//! batched as it is say ([`super::SERVING_NOTES`]); for anything else the shipped runs do not
//! cover, a sentence saying its accuracy is unknown.
//!
//! The runs were predicted at the default model's calibrated fractions of peak (`family_util`), so
//! the range is taken around this scenario's time at those fractions; a scenario with other
//! factors (the presets carry MAD-Max's own 70.5% GEMM figure) says so.

use super::rows::family_util;
use super::{gpu_family, Metric, RowResult};
use crate::engine::evaluate;
use crate::engine::report::{Limit, LoaderBound, Report};
use crate::engine::scenario::{Arch, Batching, Mode, Precision, Scenario, Strategy, System, TaskKind};
use crate::units;

/// Which shipped runs a band spreads over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum BandRuns {
    /// LLM pre-training runs, by kinds of parallelism: the time is an iteration's.
    Training,
    /// Static batches of LLM serving whose kernels were launched one by one (no CUDA graphs),
    /// by tensor- and pipeline-parallel degrees: the time is the batch's, end to end.
    StaticServing,
}

impl BandRuns {
    /// The runs' name, as `madmax validate --json` (`runs_of`) and the bands' labels write it.
    pub fn label(self) -> &'static str {
        match self {
            BandRuns::Training => "training",
            BandRuns::StaticServing => "static serving",
        }
    }
}

/// The spread of measured over predicted time on the shipped runs (the calibration set and the
/// held-out set) of one kind of plan on one GPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Band<S = &'static str> {
    pub of: BandRuns,
    /// Training: the kinds of parallelism above degree 1, as the validation page names them
    /// (`TP+PP+DP`). Static serving: the tensor- and pipeline-parallel degrees above 1 as the
    /// rows name their plans (`TP 8`, `TP 8 × PP 3`), or `one GPU`.
    pub parallelism: S,
    /// `A100` or `H100`.
    pub gpu: &'static str,
    pub runs: usize,
    /// 10th, 50th and 90th percentile (nearest rank) of measured / predicted time, to 0.01.
    pub low: f64,
    pub median: f64,
    pub high: f64,
}

/// Kinds of plan with at least this many shipped runs get a band.
pub const MIN_RUNS: usize = 20;

/// Every band of the shipped runs. A test recomputes them ([`bands_in`]), so they cannot go stale;
/// they are constants only so the calculator does not predict 1,200 runs to show one.
pub const BANDS: &[Band] = &[
    training("DP", "A100", 235, [0.95, 1.03, 1.15]),
    training("DP", "H100", 70, [1.00, 1.08, 1.13]),
    training("PP", "A100", 44, [0.90, 0.99, 1.10]),
    training("PP+DP", "A100", 69, [0.95, 1.01, 1.09]),
    training("TP", "A100", 81, [0.92, 1.08, 1.47]),
    training("TP+DP", "A100", 110, [0.91, 1.03, 1.22]),
    training("TP+PP", "A100", 77, [0.91, 1.01, 1.21]),
    training("TP+PP+DP", "A100", 101, [0.95, 1.00, 1.24]),
    static_serving("one GPU", "A100", 84, [0.95, 1.07, 1.58]),
    static_serving("TP 2", "A100", 44, [1.07, 1.13, 1.19]),
    static_serving("TP 4", "A100", 45, [1.14, 1.23, 1.26]),
    static_serving("TP 8", "A100", 74, [1.17, 1.30, 1.49]),
    static_serving("TP 16", "A100", 24, [0.94, 1.06, 1.24]),
    static_serving("TP 8 \u{d7} PP 3", "A100", 27, [1.02, 1.07, 1.19]),
    static_serving("TP 32", "A100", 27, [0.87, 0.98, 1.25]),
];

/// A training band of [`BANDS`]: its kinds of parallelism, GPU, runs and percentiles.
const fn training(parallelism: &'static str, gpu: &'static str, runs: usize, [low, median, high]: [f64; 3]) -> Band {
    Band { of: BandRuns::Training, parallelism, gpu, runs, low, median, high }
}

/// A band of static batches of serving of [`BANDS`]: its plan, GPU, runs and percentiles.
const fn static_serving(plan: &'static str, gpu: &'static str, runs: usize, [low, median, high]: [f64; 3]) -> Band {
    Band { of: BandRuns::StaticServing, parallelism: plan, gpu, runs, low, median, high }
}

/// The bands of `rows`, sorted by the runs they spread over, then parallelism, then GPU: what
/// [`BANDS`] holds for the shipped rows. A row counts in the band of its [`band_of`].
pub fn bands_in(rows: &[RowResult]) -> Option<Vec<Band<String>>> {
    let mut groups: Vec<(BandKey, Vec<f64>)> = Vec::new();
    for r in rows {
        let (Some(key), Some(ratio)) = (band_of(r), time_ratio(r)) else { continue };
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(ratio),
            None => groups.push((key, vec![ratio])),
        }
    }
    // Serving plans by their GPUs per replica, then name (TP 2 before TP 16).
    let order = |k: &BandKey| (k.0, if k.0 == BandRuns::StaticServing { plan_gpus(&k.1) } else { 0 }, k.1.clone(), k.2);
    crate::engine::order::sort_by(&mut groups, |a, b| order(&a.0).cmp(&order(&b.0)));
    let mut out = Vec::new();
    for ((of, parallelism, gpu), mut v) in groups {
        if v.len() < MIN_RUNS {
            continue;
        }
        let [low, median, high] = deciles(&mut v);
        out.push(Band { of, parallelism, gpu, runs: v.len(), low, median, high });
    }
    (!out.is_empty()).then_some(out)
}

/// The 10th, 50th and 90th percentile (nearest rank) of `v`, to 0.01: what 8 in 10 of the
/// runs fall between, and their middle. Sorts `v`, which must not be empty.
pub(super) fn deciles(v: &mut [f64]) -> [f64; 3] {
    crate::engine::order::sort_f64(v);
    let at = |p: f64| (v[(p * (v.len() - 1) as f64).round() as usize] * 100.0).round() / 100.0;
    [at(0.1), at(0.5), at(0.9)]
}

/// Which band a row counts in: the runs, the kinds of parallelism or the serving plan, the GPU
/// family.
pub type BandKey = (BandRuns, String, &'static str);

/// The band a shipped row counts in, whatever its size: (the runs, its kinds of parallelism or
/// its serving plan, its GPU family). A training row by its kinds of parallelism; a static batch
/// of LLM serving launched kernel by kernel by its tensor- and pipeline-parallel degrees
/// ([`super::ServingRun::plan`]); `None` for other rows (in-flight batching, CUDA graphs, other
/// families) and rows on GPUs of no family.
pub fn band_of(r: &RowResult) -> Option<BandKey> {
    let gpu = gpu_family(&r.gpu)?;
    match r.metric? {
        m if m.is_training() => Some((BandRuns::Training, r.parallelism.clone(), gpu)),
        _ => {
            // Only LLM serving rows have a run.
            let run = r.serving.as_ref()?;
            (!run.in_flight && !run.cuda_graphs).then(|| (BandRuns::StaticServing, run.plan.clone(), gpu))
        }
    }
}

/// How an LLM serving scenario runs ([`super::ServingRun`]); `None` for other scenarios.
pub(super) fn serving_run(s: &Scenario) -> Option<super::ServingRun> {
    let setup = &s.task().setup;
    let serving = matches!(s.model().arch, Arch::Llm(_)) && matches!(s.task().kind, TaskKind::Inference);
    serving.then(|| super::ServingRun {
        in_flight: setup.batching == Batching::InFlight,
        cuda_graphs: setup.cuda_graphs,
        plan: serving_plan(s),
    })
}

/// A serving scenario's plan as a serving band names it: its degrees above 1 but data
/// parallelism (replicas serve apart: each replica's batch takes the time of one), named as the
/// rows name their plans (`TP 8 × PP 3`), or `one GPU`.
fn serving_plan(s: &Scenario) -> String {
    let Some(spec) = &s.task().plan.transformer else { return ONE_GPU.to_owned() };
    let degrees: Vec<String> = [("TP", Strategy::Tp), ("PP", Strategy::Pp), ("CP", Strategy::Cp), ("EP", Strategy::Ep)]
        .into_iter()
        .map(|(label, st)| (label, spec.product_of(&[st])))
        .filter(|(_, d)| *d > 1)
        .map(|(label, d)| format!("{label} {d}"))
        .collect();
    if degrees.is_empty() {
        ONE_GPU.to_owned()
    } else {
        degrees.join(" \u{d7} ")
    }
}

/// How a serving band names a replica of one GPU.
const ONE_GPU: &str = "one GPU";

/// The GPUs of a serving plan (`TP 8 × PP 3`: 24; `one GPU`: 1): the product of its degrees.
fn plan_gpus(plan: &str) -> u64 {
    plan.split(" \u{d7} ").filter_map(|d| d.split_whitespace().nth(1)?.parse::<u64>().ok()).product()
}

/// Measured over predicted time of a row: its error inverted for a time metric (an
/// iteration's, a static batch's end to end), as is for a rate (TFLOP/s per GPU, MFU, output
/// tokens/s), whose time goes as its inverse. `None` for parts of a serving run's time (the
/// first token, the time per output token) and in-flight medians: a serving band ranges a
/// static batch's end-to-end latency.
fn time_ratio(r: &RowResult) -> Option<f64> {
    match r.metric? {
        Metric::IterationS | Metric::LatencyMs | Metric::OutputTokensPerS | Metric::OutputTokensPerSPerGpu => {
            measured_over_predicted_time(r)
        }
        m if m.is_training() => measured_over_predicted_time(r),
        _ => None,
    }
}

/// Measured over predicted time of any row: its error inverted for a time (an iteration, a
/// latency, a time per token), as is for a rate, whose time goes as its inverse.
pub(super) fn measured_over_predicted_time(r: &RowResult) -> Option<f64> {
    let e = r.error?;
    Some(if r.metric?.higher_is_faster() { 1.0 + e } else { 1.0 / (1.0 + e) })
}

/// The GPU family of a system by its datasheet figures: an A100 has a 16-bit peak of
/// 312 TFLOP/s (either memory size), an H100 SXM 989.5 TFLOP/s at 3.35 TB/s (an H200 has the
/// same peak with faster memory, and no shipped run).
fn system_gpu(s: &System) -> Option<&'static str> {
    if s.f16_flops_per_s == 312e12 {
        Some("A100")
    } else if s.f16_flops_per_s == 989.5e12 && s.mem_bw_bytes_per_s == 3.35e12 {
        Some("H100")
    } else {
        None
    }
}

/// The kinds of parallelism above degree 1 of a transformer plan, named and ordered as the
/// validation rows name theirs (`plan`): TP, PP, CP, EP, then DP for replicated or sharded data
/// parallelism.
fn plan_kinds(s: &Scenario) -> String {
    let Some(spec) = &s.task().plan.transformer else { return String::new() };
    let has = |f: &dyn Fn(Strategy) -> bool| spec.levels().iter().any(|l| l.degree > 1 && f(l.strategy));
    // Tensor-parallel ranks that hold whole experts, and context-parallel ranks that hold
    // different experts, are expert-parallel ones too; the ep level's ranks are data-parallel
    // for the dense weights, as Megatron-core counts them.
    let tp = spec.product_of(&[Strategy::Tp]);
    let setup = &s.task().setup;
    let whole_experts = setup.experts_split_by(tp) < tp || setup.experts_spread_over_cp() > 1;
    let kinds = [
        ("TP", has(&|st| st == Strategy::Tp)),
        ("PP", has(&|st| st == Strategy::Pp)),
        ("CP", has(&|st| st == Strategy::Cp)),
        ("EP", whole_experts || has(&|st| st == Strategy::Ep)),
        ("DP", has(&|st| matches!(st, Strategy::Ddp | Strategy::Fsdp | Strategy::Mp | Strategy::Ep))),
    ];
    let named: Vec<&str> = kinds.iter().filter(|(_, on)| *on).map(|(k, _)| *k).collect();
    if named.is_empty() {
        "single GPU".into()
    } else {
        named.join("+")
    }
}

/// What the published runs say about a scenario's time.
#[derive(Clone, Debug, PartialEq)]
pub enum Expectation {
    /// Runs like this one were measured at `band`'s spread around the model's time;
    /// `calibrated_s` is this scenario's iteration time at the fractions of peak they were
    /// predicted with, `calibrated_gemm` that GEMM fraction.
    Like { band: Band, calibrated_s: f64, calibrated_gemm: f64 },
    /// No shipped run covers it; the sentence says what is missing.
    Unknown(String),
}

/// What the published runs say about `s` (evaluated as `r`); `None` in MAD-Max paper mode and
/// for a plan with a band ([`BANDS`]) that does not fit in memory or waits for its data loader
/// (no published run did).
pub fn expectation(s: &Scenario, r: &Report) -> Option<Expectation> {
    if s.task().mode != Mode::Default {
        return None;
    }
    let unknown_because = |why: &str| Some(Expectation::Unknown(format!("{why}: its accuracy here is unknown.")));
    let unknown = |what: &str| unknown_because(&format!("No published run validates the default model on {what}"));
    // A modelled input pipeline that paces the step: its rate, not the GPUs', is the figure.
    let modelled_input = |l: &Limit| matches!(l, Limit::InputBound { by, .. } if *by != LoaderBound::Given);
    if r.limits.iter().any(modelled_input) {
        return unknown("an input pipeline's decoding and storage (its decoding rates are decoder benchmarks', not training runs'; measure yours)");
    }
    match &s.model().arch {
        Arch::Llm(_) if matches!(s.task().kind, TaskKind::Inference) => return serving_expectation(s, r),
        Arch::Llm(_) => {}
        Arch::LlmMoe(..) if matches!(s.task().kind, TaskKind::Pretrain) => {
            return Some(Expectation::Unknown(super::MOE_NOTE.into()));
        }
        Arch::LlmMoe(..) => return unknown("mixture-of-experts LLMs in serving or fine-tuning"),
        Arch::Vit(_) => return unknown("vision transformers"),
        Arch::EncDec(_) => return unknown("encoder-decoder models (T5, mT5)"),
        Arch::Cnn(_) => return Some(Expectation::Unknown(super::VISION_NOTE.into())),
        _ => {
            let several = s.system().num_devices > 1;
            return Some(Expectation::Unknown(super::RECOMMENDATION_NOTES[several as usize].into()));
        }
    }
    if let Some(network) = unlike_any_network(s.system()) {
        return unknown(network);
    }
    if !matches!(s.task().kind, TaskKind::Pretrain) {
        return unknown("fine-tuning (the published runs are pre-training)");
    }
    if s.model().bytes_per_dense_param.f64() != 2.0 {
        return unknown("this precision (the published runs are in 16-bit floating point)");
    }
    let Some(gpu) = system_gpu(s.system()) else {
        return unknown_because(&format!(
            "Fewer than {MIN_RUNS} published runs of any kind of plan validate the default model on this GPU (the validation page lists those there are; only A100s and H100s have more)"
        ));
    };
    let kinds = plan_kinds(s);
    let Some(band) = BANDS.iter().find(|b| b.of == BandRuns::Training && b.parallelism == kinds && b.gpu == gpu) else {
        return unknown(&format!("{kinds} plans on {gpu}s (fewer than {MIN_RUNS} shipped runs)"));
    };
    like(s, r, band)
}

/// What the published runs say about an LLM serving scenario: the band of the static batches
/// served with its tensor- and pipeline-parallel degrees on its GPU, for a static batch in 16
/// bits whose kernels are launched one by one on a network like the published runs'
/// ([`BandRuns::StaticServing`]); otherwise what the published serving runs batched as it is
/// say ([`super::SERVING_NOTES`]).
fn serving_expectation(s: &Scenario, r: &Report) -> Option<Expectation> {
    let setup = &s.task().setup;
    let inflight = setup.batching == Batching::InFlight;
    let note = Some(Expectation::Unknown(super::SERVING_NOTES[inflight as usize].into()));
    let sixteen_bit = |f: Option<Precision>| f.is_none_or(|p| p.bytes() == 2.0);
    let like_the_runs = !inflight
        && !setup.cuda_graphs
        && s.model().bytes_per_dense_param.f64() == 2.0
        && sixteen_bit(setup.weight_format)
        && sixteen_bit(setup.kv_format)
        && unlike_any_network(s.system()).is_none();
    let plan = serving_plan(s);
    let band = system_gpu(s.system()).filter(|_| like_the_runs).and_then(|gpu| {
        BANDS.iter().find(|b| b.of == BandRuns::StaticServing && b.parallelism == plan && b.gpu == gpu)
    });
    match band {
        Some(band) => like(s, r, band),
        None => note,
    }
}

/// Why no published run is like this system's network, if none is: every published run is on
/// one datacenter network with NVLink within its nodes.
fn unlike_any_network(sys: &System) -> Option<&'static str> {
    if sys.nic_latency_s > 0.0 {
        Some("nodes far apart (every published run is on one datacenter network)")
    } else if sys.nvlink_latency_s > 0.0 {
        Some("links within a node slower to answer than NVLink (every published run is on NVLink)")
    } else if sys.wan.is_some() {
        Some("sites joined by a wide-area link (every published run is on one datacenter network)")
    } else {
        None
    }
}

/// The range `band` gives `s` (evaluated as `r`, on a GPU of the band's family): around its
/// time at the fractions of peak the runs were predicted with; `None` for a plan that does not
/// fit in memory or waits for its data loader (no published run did).
fn like(s: &Scenario, r: &Report, band: &Band) -> Option<Expectation> {
    if r.limits.iter().any(|l| matches!(l, Limit::DoesNotFit { .. } | Limit::InputBound { .. })) {
        return None;
    }
    let util = family_util(Some(band.gpu), s.system().mem_bw_bytes_per_s);
    let fractions = [util.flops, util.mem_bw, util.nvlink, util.nic];
    let sys = s.system();
    let gemm_bw = util.gemm_bw.unwrap_or(util.mem_bw);
    let calibrated_s = if fractions == [sys.flops_util, sys.mem_bw_util, sys.nvlink_util, sys.ibroce_util]
        && gemm_bw == sys.gemm_bw_fraction()
    {
        r.iteration_s
    } else {
        // The shipped fractions are fractions: the derived scenario is always valid.
        evaluate(&s.with_fractions(fractions).ok()?.with_gemm_bw(util.gemm_bw).ok()?).iteration_s
    };
    Some(Expectation::Like { band: *band, calibrated_s, calibrated_gemm: util.flops })
}

impl<S: AsRef<str>> Band<S> {
    /// How the validation page and `madmax validate` name the band's kind of plan: its kinds of
    /// parallelism (`TP+DP`), or for static batches of serving their plan (`static serving,
    /// TP 8`).
    pub fn plan_label(&self) -> String {
        match self.of {
            BandRuns::Training => self.parallelism.as_ref().to_owned(),
            BandRuns::StaticServing => format!("{}, {}", self.of.label(), self.parallelism.as_ref()),
        }
    }
}

impl Expectation {
    /// The sentence the calculator and the CLI show, for a scenario whose GEMM fraction is
    /// `gemm_util` and predicted time `iteration_s`.
    pub fn sentence(&self, gemm_util: f64, iteration_s: f64) -> String {
        match self {
            Expectation::Unknown(s) => s.clone(),
            Expectation::Like { band, calibrated_s, calibrated_gemm } => {
                let runs = match band.of {
                    BandRuns::Training => format!("{} published {} runs on {}s", band.runs, band.parallelism, band.gpu),
                    BandRuns::StaticServing if band.parallelism == ONE_GPU => {
                        format!(
                            "{} published static batches, each served by one {} without CUDA graphs",
                            band.runs, band.gpu
                        )
                    }
                    BandRuns::StaticServing => {
                        format!(
                            "{} published static batches served with {} on {}s without CUDA graphs",
                            band.runs, band.parallelism, band.gpu
                        )
                    }
                };
                let spread = format!(
                    "on {runs}, 8 in 10 took {:.2}\u{d7} to {:.2}\u{d7} the model's time (median {:.2}\u{d7})",
                    band.low, band.high, band.median
                );
                // A static batch's time is its end-to-end latency.
                let whole = if band.of == BandRuns::StaticServing { " end to end" } else { "" };
                let range = format!(
                    "{} to {}{whole}",
                    units::duration(band.low * calibrated_s),
                    units::duration(band.high * calibrated_s)
                );
                // Where the GEMM fraction barely matters (host-bound plans), the two times read
                // the same: one is enough.
                if units::duration(*calibrated_s) == units::duration(iteration_s) {
                    format!("Expect {range}: {spread}.")
                } else if band.of == BandRuns::StaticServing {
                    // A batch's decode steps stream their weights: its GEMM fraction is not
                    // what moves it most.
                    format!(
                        "Expect {range}: {spread} at the fractions of peak those runs were predicted with, where this scenario takes {} ({} at its own).",
                        units::duration(*calibrated_s),
                        units::duration(iteration_s)
                    )
                } else {
                    format!(
                        "Expect {range}: {spread} with GEMMs at {} of peak, where this scenario takes {} ({} at its {}).",
                        units::percent(*calibrated_gemm),
                        units::duration(*calibrated_s),
                        units::duration(iteration_s),
                        units::percent(gemm_util)
                    )
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{validate, RawFile};
    use crate::presets;
    use serde_json::json;

    /// A scenario preset, evaluated by `mode` (`default` or `reference`).
    fn preset(id: &str, mode: &str) -> (Scenario, Report) {
        preset_with(id, mode, "none")
    }

    /// The same with activation recomputation `recompute` (`none`, `selective`, `full`).
    fn preset_with(id: &str, mode: &str, recompute: &str) -> (Scenario, Report) {
        preset_keys(id, mode, &[("task", "recompute", json!(recompute))])
    }

    /// The same with other values of some keys: (`model`, `system` or `task`, key, value).
    fn preset_keys(id: &str, mode: &str, keys: &[(&str, &str, serde_json::Value)]) -> (Scenario, Report) {
        let p = presets::all().expect("presets");
        let [mut model, mut system, mut task] = p.scenario(id).and_then(|s| p.configs(s)).expect(id);
        task.insert("mode".into(), json!(mode));
        for (config, key, value) in keys {
            let c = match *config {
                "system" => &mut system,
                "model" => &mut model,
                _ => &mut task,
            };
            c.insert((*key).into(), value.clone());
        }
        let raw = serde_json::from_value::<RawFile>(json!({"model": model, "system": system, "task": task}))
            .expect("configs")
            .into_scenario()
            .expect("configs");
        let s = validate(&raw).expect("valid");
        let r = evaluate(&s);
        (s, r)
    }

    fn row(metric: &str, error: f64) -> RowResult {
        let mut r = super::super::run("id,metric,measured\nx,m,1\n").expect("parses").remove(0);
        r.metric = Metric::of_cell(metric);
        r.error = Some(error);
        r.gpu = "a100-80g".into();
        r.parallelism = "TP".into();
        r
    }

    #[test]
    fn a_band_is_the_10th_50th_and_90th_percentile_of_measured_over_predicted_time() {
        // Measured 1.00x to 1.19x the predicted time, half as iteration times, half as
        // throughputs (predicted / measured).
        let mut rows: Vec<RowResult> = (0..20)
            .map(|i| {
                let ratio = 1.0 + i as f64 / 100.0;
                if i % 2 == 0 {
                    row("iteration_s", 1.0 / ratio - 1.0)
                } else {
                    row("tflops_per_gpu", ratio - 1.0)
                }
            })
            .collect();
        // Nineteen runs of another kind of plan are too few for a band.
        rows.extend((0..19).map(|_| RowResult { parallelism: "PP".into(), ..row("iteration_s", 0.0) }));
        // A serving row is no training run.
        rows.push(RowResult { metric: Some(Metric::PrefillMs), ..row("iteration_s", 0.0) });
        let b = bands_in(&rows).expect("one band");
        assert_eq!(b.len(), 1);
        // Nearest rank: 0.1 x 19 = 1.9 -> 2nd, 9.5 -> 10th, 17.1 -> 17th (from 0).
        assert_eq!((b[0].parallelism.as_str(), b[0].gpu, b[0].runs), ("TP", "A100", 20));
        assert_eq!(bands_in(&rows[20..]), None);
        assert_eq!((b[0].low, b[0].median, b[0].high), (1.02, 1.10, 1.17));
    }

    #[test]
    fn a_preset_at_mad_max_factors_takes_the_range_around_its_time_at_the_calibrated_ones() {
        // LLaMA2-70B on 40 GB A100s fits with full recomputation (as the calculator opens it).
        let (s, r) = preset_with(presets::PAPER_LLAMA2_70B, "default", "full");
        let Some(Expectation::Like { band, calibrated_s, calibrated_gemm }) = expectation(&s, &r) else {
            panic!("{:?}", expectation(&s, &r));
        };
        // LLaMA2-70B, FSDP over 2,048 A100s: data parallelism only.
        assert_eq!((band.parallelism, band.gpu), ("DP", "A100"));
        assert_eq!(calibrated_gemm, 0.80);
        // GEMMs at 80% of peak instead of 70.5%: faster, by less than the GEMM rates' ratio.
        assert!(
            calibrated_s < r.iteration_s && calibrated_s > r.iteration_s * 0.705 / 0.80,
            "{calibrated_s} {}",
            r.iteration_s
        );
        let e = expectation(&s, &r).expect("some");
        let text = e.sentence(s.system().flops_util, r.iteration_s);
        let expect = format!(
            "Expect {} to {}: ",
            units::duration(band.low * calibrated_s),
            units::duration(band.high * calibrated_s)
        );
        let at = format!(
            "with GEMMs at {} of peak, where this scenario takes {} ({} at its {}).",
            units::percent(0.80),
            units::duration(calibrated_s),
            units::duration(r.iteration_s),
            units::percent(0.705)
        );
        assert!(text.starts_with(&expect) && text.ends_with(&at), "{text}");
        // The same time at either fraction is said once.
        let same = e.sentence(0.5, calibrated_s * (1.0 + 1e-4));
        assert!(same.starts_with(&expect) && same.ends_with(&format!("(median {:.2}\u{d7}).", band.median)), "{same}");
        // At the calibrated factors the range is around the scenario's own time.
        let sys = s.system();
        let cal = s.with_fractions([0.80, sys.mem_bw_util, sys.nvlink_util, sys.ibroce_util]).expect("fractions");
        let cal_r = evaluate(&cal);
        let e = expectation(&cal, &cal_r).expect("some");
        assert_eq!(e, Expectation::Like { band, calibrated_s: cal_r.iteration_s, calibrated_gemm: 0.80 });
        assert!(e
            .sentence(0.80, cal_r.iteration_s)
            .ends_with(": on 235 published DP runs on A100s, 8 in 10 took 0.95\u{d7} to 1.15\u{d7} the model's time (median 1.03\u{d7})."));
    }

    #[test]
    fn what_no_shipped_run_covers_says_so_and_paper_mode_says_nothing() {
        let unknown = |id: &str| {
            let (s, r) = preset(id, "default");
            match expectation(&s, &r) {
                Some(Expectation::Unknown(why)) => why,
                other => panic!("{id}: {other:?}"),
            }
        };
        assert!(unknown("current__llama2_70b__h100_sxm_128__tp_ddp").contains("TP+DP plans on H100s"));
        let b200 = unknown("current__gpt3_175b__b200_128__tp_ddp");
        assert!(b200.starts_with("Fewer than 20 published runs") && b200.contains("this GPU"), "{b200}");
        // Recommendation models: what the published DLRM runs say, not a band.
        assert_eq!(unknown("current__dlrm_a__mi300x_128__fsdp_mp"), super::super::RECOMMENDATION_NOTES[1]);
        assert!(unknown("current__llama_7b__rtx4090_8_10gbe__finetune").contains("fine-tuning"));
        assert!(unknown("current__vit_l__rtx3080_8_1gbe__ddp").contains("vision transformers"));
        // A mixture of experts in pre-training: what its published runs say, which say how
        // they dispatched their tokens.
        let moe = "llm_moe__gpt4_1.8t__cloud_A_h100.80_2048__llm_train";
        assert_eq!(unknown(moe), super::super::MOE_NOTE);
        let (fused, _) = preset_keys(moe, "default", &[("model", "moe_dispatch", json!("fused"))]);
        let Some(Expectation::Unknown(why)) = expectation(&fused, &evaluate(&fused)) else { panic!("fused") };
        assert!(why == super::super::MOE_NOTE && why.contains("fused permute"), "{why}");
        // Nodes far apart: no published run was on such a network.
        let full = ("task", "recompute", json!("full"));
        let (far, _) = preset_keys(
            presets::PAPER_LLAMA2_70B,
            "default",
            &[full.clone(), ("system", "nic_latency_s", json!(0.01))],
        );
        let Some(Expectation::Unknown(why)) = expectation(&far, &evaluate(&far)) else { panic!("far apart") };
        assert!(why.contains("nodes far apart"), "{why}");
        let sites = [full.clone(), ("system", "num_sites", json!(2)), ("system", "wan_bw", json!(12.5e9))];
        let (split, _) = preset_keys(presets::PAPER_LLAMA2_70B, "default", &sites);
        let Some(Expectation::Unknown(why)) = expectation(&split, &evaluate(&split)) else { panic!("two sites") };
        assert!(why.contains("sites joined by a wide-area link"), "{why}");
        let (s, r) = preset(presets::PAPER_LLAMA2_70B, "reference");
        assert_eq!(expectation(&s, &r), None);
        // Without recomputation it needs twice the 40 GB: no range for a plan that cannot run.
        let (s, r) = preset(presets::PAPER_LLAMA2_70B, "default");
        assert!(r.limits.iter().any(|l| matches!(l, Limit::DoesNotFit { .. })));
        assert_eq!(expectation(&s, &r), None);
        // Nor for one that waits for its data loader.
        let (slow, r) = preset_keys(
            presets::PAPER_LLAMA2_70B,
            "default",
            &[full.clone(), ("task", "data_loader_samples_per_s", json!(1.0))],
        );
        assert!(r.limits.iter().any(|l| matches!(l, Limit::InputBound { .. })), "{:?}", r.limits);
        assert_eq!(expectation(&slow, &r), None);
        // A modelled pipeline that paces it: its decoding, which no training run validates.
        let decoding = [
            full.clone(),
            ("task", "loader_frames_per_sample", json!(1000)),
            ("task", "loader_frame_width", json!(4096)),
            ("task", "loader_frame_height", json!(4096)),
            ("task", "loader_cores_per_node", json!(1)),
        ];
        let (decoded, r) = preset_keys(presets::PAPER_LLAMA2_70B, "default", &decoding);
        let Some(Expectation::Unknown(why)) = expectation(&decoded, &r) else { panic!("decoding paces it") };
        assert!(why.contains("an input pipeline's decoding"), "{why}");
        // LLM serving: what the published serving runs batched the same way say, whatever the
        // plan.
        let name = "current__llama2_70b__h200_sxm_128__inference";
        assert_eq!(unknown(name), super::super::SERVING_NOTES[0]);
        let (inflight, r) = preset_keys(name, "default", &[("task", "batching", json!("inflight"))]);
        assert_eq!(expectation(&inflight, &r), Some(Expectation::Unknown(super::super::SERVING_NOTES[1].into())));
        let (s, r) = preset("current__llama2_70b__h200_sxm_128__inference", "reference");
        assert_eq!(expectation(&s, &r), None);
    }

    #[test]
    fn a_scenario_names_its_kinds_of_parallelism_as_its_row_does() {
        // The bands are keyed by the rows' names for their plans, a scenario finds its band by
        // its own: the two must agree on every shipped run.
        let rows = super::super::notes::training_rows().expect("the shipped rows predict");
        let mut named = 0;
        for r in rows.iter().filter(|r| r.scenario.is_some()) {
            let raw = serde_json::from_value::<crate::engine::RawScenario>(r.scenario.clone().expect("some"))
                .expect("a row's scenario reads");
            let s = validate(&raw).expect("a row's scenario is valid");
            assert_eq!(plan_kinds(&s), r.parallelism, "{}", r.id);
            named += 1;
        }
        assert!(named > 700, "{named}");
    }

    /// A shipped row's scenario, validated, with `keys` of its task set, and its report.
    fn row_scenario(id: &str, keys: &[(&str, serde_json::Value)]) -> (Scenario, Report) {
        let mut doc = super::super::shipped_row(id).and_then(|r| r.scenario).expect(id);
        for (key, value) in keys {
            doc["task"][*key] = value.clone();
        }
        let raw = serde_json::from_value::<crate::engine::RawScenario>(doc).expect("a row's scenario reads");
        let s = validate(&raw).expect("valid");
        let r = evaluate(&s);
        (s, r)
    }

    #[test]
    fn a_static_batch_launched_kernel_by_kernel_is_ranged_by_the_runs_served_with_its_plan() {
        // GPT 20B on 8 A100s, FasterTransformer: a static batch, kernels launched one by one.
        let id = "ftguide-20b-tp8-b8-i128-o20";
        let (s, r) = row_scenario(id, &[]);
        let Some(Expectation::Like { band, calibrated_s, .. }) = expectation(&s, &r) else {
            panic!("{:?}", expectation(&s, &r));
        };
        assert_eq!((band.of, band.parallelism, band.gpu), (BandRuns::StaticServing, "TP 8", "A100"));
        // The row was predicted at the calibrated fractions: the range is around its own time,
        // the batch's end to end.
        let row = super::super::shipped_row(id).expect(id);
        assert_eq!(calibrated_s, r.iteration_s);
        assert!((row.predicted.expect("predicted") / 1e3 - r.iteration_s).abs() < 1e-12);
        let text = expectation(&s, &r).expect("some").sentence(s.system().flops_util, r.iteration_s);
        assert_eq!(
            text,
            format!(
                "Expect {} to {} end to end: on 74 published static batches served with TP 8 on A100s without CUDA graphs, 8 in 10 took 1.17\u{d7} to 1.49\u{d7} the model's time (median 1.30\u{d7}).",
                units::duration(1.17 * r.iteration_s),
                units::duration(1.49 * r.iteration_s)
            )
        );
        // One GPU says so.
        let (one, r) = row_scenario("ftguide-6.7b-tp1-b8-i128-o8", &[]);
        let text = expectation(&one, &r).expect("some").sentence(one.system().flops_util, r.iteration_s);
        assert!(
            text.contains(
                "end to end: on 84 published static batches, each served by one A100 without CUDA graphs, 8 in 10"
            ),
            "{text}"
        );
        // Unlike the runs: CUDA graphs, batching in flight, 8-bit weights, or an H100 (too few
        // runs): what the published serving runs batched the same way say.
        let note = |keys: &[(&str, serde_json::Value)]| {
            let (s, r) = row_scenario(id, keys);
            match expectation(&s, &r) {
                Some(Expectation::Unknown(why)) => why,
                other => panic!("{keys:?}: {other:?}"),
            }
        };
        let static_note = super::super::SERVING_NOTES[0];
        assert_eq!(note(&[("cuda_graphs", json!(true))]), static_note);
        assert_eq!(note(&[("weight_format", json!("int8"))]), static_note);
        assert_eq!(note(&[("kv_format", json!("int8"))]), static_note);
        assert_eq!(note(&[("batching", json!("inflight"))]), super::super::SERVING_NOTES[1]);
        let (h100, r) = row_scenario(
            "azure-llama3-70b-h100-tp8-b16-i128-o8",
            &[("weight_format", json!("fp16")), ("kv_format", json!("fp16"))],
        );
        assert_eq!(expectation(&h100, &r), Some(Expectation::Unknown(static_note.into())));
    }

    #[test]
    fn a_static_batch_is_banded_by_its_rows_plan_less_its_replicas() {
        // The validation page lists a row's plan; its band names the same degrees, but data
        // parallelism (replicas serve apart), or one GPU.
        let mut banded = 0;
        for r in super::super::shipped() {
            let Some((BandRuns::StaticServing, plan, _)) = band_of(&r) else { continue };
            let kept: Vec<&str> = r.plan.split(" \u{d7} ").filter(|d| !d.starts_with("DP ")).collect();
            let want = if kept.is_empty() { ONE_GPU.to_owned() } else { kept.join(" \u{d7} ") };
            assert_eq!(plan, want, "{}", r.id);
            banded += 1;
        }
        assert!(banded > 300, "{banded}");
    }

    #[test]
    fn the_bands_say_what_the_rows_say() {
        let now = bands_in(&super::super::shipped()).expect("bands");
        // The training rows alone give the training bands.
        let training = bands_in(&super::super::notes::training_rows().expect("the shipped rows predict"));
        let of = |runs: BandRuns| now.iter().filter(|b| b.of == runs).cloned().collect::<Vec<_>>();
        assert_eq!(training, Some(of(BandRuns::Training)));
        let shipped: Vec<Band<String>> = BANDS
            .iter()
            .map(|b| Band {
                of: b.of,
                parallelism: b.parallelism.to_owned(),
                gpu: b.gpu,
                runs: b.runs,
                low: b.low,
                median: b.median,
                high: b.high,
            })
            .collect();
        assert_eq!(now, shipped, "recomputed bands:\n{now:#?}");
    }
}
