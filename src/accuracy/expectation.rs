//! What the published runs say about one scenario's predicted time: for a default-model
//! pre-training scenario of a dense LLM on A100s or H100s, the spread of measured against
//! predicted time over the shipped runs with the same kinds of parallelism on the same GPU
//! ([`BANDS`]), turned into an expected range of iteration time; for a recommendation model,
//! what the published DLRM runs on as many GPUs say ([`super::RECOMMENDATION_NOTES`]); for LLM
//! serving, what the published serving runs batched as it is say ([`super::SERVING_NOTES`]); for anything else the
//! shipped runs do not cover, a sentence saying its accuracy is unknown.
//!
//! The runs were predicted at the default model's calibrated fractions of peak (`family_util`), so
//! the range is taken around this scenario's time at those fractions; a scenario with other
//! factors (the presets carry MAD-Max's own 70.5% GEMM figure) says so.

use super::rows::family_util;
use super::{gpu_family, Metric, RowResult};
use crate::engine::evaluate;
use crate::engine::report::{Limit, LoaderBound, Report};
use crate::engine::scenario::{Arch, Mode, Scenario, Strategy, System, TaskKind};
use crate::units;

/// The spread of measured over predicted iteration time on the shipped training runs (the
/// calibration set and the held-out set) of one kind of plan on one GPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Band<S = &'static str> {
    /// The kinds of parallelism above degree 1, as the validation page names them (`TP+PP+DP`).
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
/// they are constants only so the calculator does not predict 700 runs to show one.
pub const BANDS: &[Band] = &[
    Band { parallelism: "DP", gpu: "A100", runs: 235, low: 0.95, median: 1.03, high: 1.16 },
    Band { parallelism: "DP", gpu: "H100", runs: 69, low: 1.00, median: 1.08, high: 1.13 },
    Band { parallelism: "PP", gpu: "A100", runs: 44, low: 0.90, median: 0.99, high: 1.10 },
    Band { parallelism: "PP+DP", gpu: "A100", runs: 69, low: 0.95, median: 1.01, high: 1.09 },
    Band { parallelism: "TP", gpu: "A100", runs: 81, low: 0.92, median: 1.08, high: 1.47 },
    Band { parallelism: "TP+DP", gpu: "A100", runs: 110, low: 0.91, median: 1.03, high: 1.23 },
    Band { parallelism: "TP+PP", gpu: "A100", runs: 77, low: 0.91, median: 1.01, high: 1.21 },
    Band { parallelism: "TP+PP+DP", gpu: "A100", runs: 101, low: 0.95, median: 1.00, high: 1.24 },
];

/// The bands of `rows` (training rows; others are passed over), sorted by parallelism then
/// GPU: what [`BANDS`] holds for the shipped rows.
pub fn bands_in(rows: &[RowResult]) -> Option<Vec<Band<String>>> {
    let mut groups: Vec<((String, &'static str), Vec<f64>)> = Vec::new();
    for r in rows {
        let (Some(gpu), Some(ratio)) = (gpu_family(&r.gpu), time_ratio(r)) else { continue };
        let key = (r.parallelism.clone(), gpu);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(ratio),
            None => groups.push((key, vec![ratio])),
        }
    }
    crate::engine::order::sort_by(&mut groups, |a, b| a.0.cmp(&b.0));
    let mut out = Vec::new();
    for ((parallelism, gpu), mut v) in groups {
        if v.len() < MIN_RUNS {
            continue;
        }
        crate::engine::order::sort_f64(&mut v);
        let at = |p: f64| (v[(p * (v.len() - 1) as f64).round() as usize] * 100.0).round() / 100.0;
        out.push(Band { parallelism, gpu, runs: v.len(), low: at(0.1), median: at(0.5), high: at(0.9) });
    }
    (!out.is_empty()).then_some(out)
}

/// Measured over predicted iteration time of a training row: its error inverted for the time
/// metric, as is for a throughput metric (TFLOP/s per GPU, MFU), whose time goes as its
/// inverse; `None` for serving rows.
fn time_ratio(r: &RowResult) -> Option<f64> {
    let e = r.error?;
    match r.metric? {
        Metric::IterationS => Some(1.0 / (1.0 + e)),
        m if m.is_training() && m.higher_is_faster() => Some(1.0 + e),
        _ => None,
    }
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
/// for a training plan like the published runs that does not fit in memory or waits for its
/// data loader (no published run did).
pub fn expectation(s: &Scenario, r: &Report) -> Option<Expectation> {
    if s.task().mode != Mode::Default {
        return None;
    }
    let unknown = |what: &str| {
        Some(Expectation::Unknown(format!(
            "No published run validates the default model on {what}: its accuracy here is unknown."
        )))
    };
    // A modelled input pipeline that paces the step: its rate, not the GPUs', is the figure.
    let modelled_input = |l: &Limit| matches!(l, Limit::InputBound { by, .. } if *by != LoaderBound::Given);
    if r.limits.iter().any(modelled_input) {
        return unknown("an input pipeline's decoding and storage (its decoding rates are decoder benchmarks', not training runs'; measure yours)");
    }
    match &s.model().arch {
        Arch::Llm(_) if matches!(s.task().kind, TaskKind::Inference) => {
            let inflight = s.task().setup.batching == crate::engine::scenario::Batching::InFlight;
            return Some(Expectation::Unknown(super::SERVING_NOTES[inflight as usize].into()));
        }
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
    if s.system().nic_latency_s > 0.0 {
        return unknown("nodes far apart (every published run is on one datacenter network)");
    }
    if s.system().nvlink_latency_s > 0.0 {
        return unknown("links within a node slower to answer than NVLink (every published run is on NVLink)");
    }
    if s.system().wan.is_some() {
        return unknown("sites joined by a wide-area link (every published run is on one datacenter network)");
    }
    if !matches!(s.task().kind, TaskKind::Pretrain) {
        return unknown("fine-tuning (the published runs are pre-training)");
    }
    if s.model().bytes_per_dense_param.f64() != 2.0 {
        return unknown("this precision (the published runs are in 16-bit floating point)");
    }
    let Some(gpu) = system_gpu(s.system()) else {
        return unknown("this GPU (the published runs are on A100s and H100s)");
    };
    let kinds = plan_kinds(s);
    let Some(band) = BANDS.iter().find(|b| b.parallelism == kinds && b.gpu == gpu) else {
        return unknown(&format!("{kinds} plans on {gpu}s (fewer than {MIN_RUNS} shipped runs)"));
    };
    if r.limits.iter().any(|l| matches!(l, Limit::DoesNotFit { .. } | Limit::InputBound { .. })) {
        return None;
    }
    let util = family_util(Some(gpu), s.system().mem_bw_bytes_per_s);
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

impl Expectation {
    /// The sentence the calculator and the CLI show, for a scenario whose GEMM fraction is
    /// `gemm_util` and predicted time `iteration_s`.
    pub fn sentence(&self, gemm_util: f64, iteration_s: f64) -> String {
        match self {
            Expectation::Unknown(s) => s.clone(),
            Expectation::Like { band, calibrated_s, calibrated_gemm } => {
                let spread = format!(
                    "on {} published {} runs on {}s, 8 in 10 took {:.2}\u{d7} to {:.2}\u{d7} the model's time (median {:.2}\u{d7})",
                    band.runs, band.parallelism, band.gpu, band.low, band.high, band.median
                );
                let range = format!(
                    "{} to {}",
                    units::duration(band.low * calibrated_s),
                    units::duration(band.high * calibrated_s)
                );
                // Where the GEMM fraction barely matters (host-bound plans), the two times read
                // the same: one is enough.
                if units::duration(*calibrated_s) == units::duration(iteration_s) {
                    format!("Expect {range}: {spread}.")
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
            .ends_with(": on 235 published DP runs on A100s, 8 in 10 took 0.95\u{d7} to 1.16\u{d7} the model's time (median 1.03\u{d7})."));
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
        assert!(unknown("current__gpt3_175b__b200_128__tp_ddp").contains("this GPU"));
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

    #[test]
    fn the_bands_say_what_the_rows_say() {
        let now = bands_in(&super::super::notes::training_rows().expect("the shipped rows predict")).expect("bands");
        // The validation page finds the same among every shipped row, serving ones included.
        assert_eq!(bands_in(&super::super::shipped()), Some(now.clone()));
        let shipped: Vec<Band<String>> = BANDS
            .iter()
            .map(|b| Band {
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
