//! The MAD-Max paper's findings, computed live on its workload suite: the scenario presets
//! taken from the reference's golden cases (its models, systems and tasks), in either model.
//! Three analyses, each beside what the paper reported: exposed communication as a share of
//! iteration time (every GPU of a synchronous step waits alike, so it is that share of the
//! run's GPU hours), the speed-up the explorer finds over each workload's own plan, and
//! co-design what-ifs (one resource scaled, each workload's own plan). Pure: the faces format.

use crate::engine::explore::{self, Resource, Space};
use crate::engine::scenario::{Mode, Scenario, TaskKind};
use crate::engine::{evaluate, validate, RawFile};
use crate::presets;
use serde::Serialize;

/// What the paper reported (Hsia et al., "MAD-Max Beyond Single-Node", ISCA 2024, abstract):
/// 14-32% of GPU hours of large training jobs are communication no computation hides, measured
/// on production traces; better strategies raise throughput up to 2.24x in pre-training and
/// 5.27x in inference.
pub const PAPER_EXPOSED_SHARE: (f64, f64) = (0.14, 0.32);
/// See [`PAPER_EXPOSED_SHARE`].
pub const PAPER_PRETRAIN_SPEEDUP: f64 = 2.24;
/// See [`PAPER_EXPOSED_SHARE`].
pub const PAPER_INFERENCE_SPEEDUP: f64 = 5.27;

/// Why the exposed shares here differ from the paper's, in a sentence both faces print.
pub const WHY_EXPOSED: &str = "Why the shares differ from the paper's: it measured production traces of large training jobs, weighted by the GPU hours they ran; these are the reference's configurations, one iteration each, several of them set up to show a communication limit (recommendation models replicating large tables, FSDP over thousands of GPUs), so most of them expose more.";

/// Why the speed-ups here differ from the paper's.
pub const WHY_SPEEDUP: &str = "Why they differ from the paper's: its 2.24x and 5.27x are its largest gains; here are the median and the range over every workload whose own plan can run, each against its plan as configured. Gains far past 2.24x come from own plans far from any good one, such as replicated embedding tables (the largest gains below name them and their plans). The default model counts activations and optimizer states in memory, so more own plans cannot run there than in MAD-Max paper mode, which counts weights only.";

/// Why the co-design what-ifs are read per workload.
pub const WHY_CODESIGN: &str = "Each workload keeps its own plan here, so a resource helps only as far as that plan uses it; the explorer's hardware what-ifs re-search the plan, one scenario at a time.";

/// The factors a co-design what-if scales a resource by: the explorer's, less 1 (each
/// workload's own figures are the 1).
pub const FACTORS: [f64; 4] = {
    let f = explore::CODESIGN_FACTORS;
    [f[0], f[2], f[3], f[4]]
};

/// The resources the co-design what-ifs scale (memory capacity changes only which plans fit,
/// and each workload keeps its own plan here).
pub const RESOURCES: [Resource; 4] =
    [Resource::Compute, Resource::HbmBandwidth, Resource::NvlinkBandwidth, Resource::NicBandwidth];

/// One workload of the suite.
#[derive(Clone, Debug)]
pub struct Workload {
    /// The scenario preset's id (the golden case's name).
    pub id: String,
    /// The model family, as MAD-Max configs name it (`LLM`, `DLRM_MoE`, ...).
    pub family: &'static str,
    /// The GPU generation of its system, from its 16-bit peak: `V100`, `A100` or `H100`.
    pub gpu: &'static str,
    pub scenario: Scenario,
    /// The scenario as a MAD-Max file (`{"model", "system", "task"}`, the task's mode set),
    /// from which `scenario` was validated.
    pub file: serde_json::Value,
}

/// A golden case's scenario preset that a model refuses, and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Refused {
    pub workload: String,
    /// The first problem validation names (`task.transformer_parallel_degree: ...`).
    pub why: String,
}

/// The workload suite in one model.
#[derive(Clone, Debug)]
pub struct Suite {
    /// Every scenario preset taken from a golden case whose configs the model accepts.
    pub workloads: Vec<Workload>,
    /// Those it refuses (the default model checks plans against rules MAD-Max's code does not
    /// have, such as tensor parallelism dividing the heads).
    pub refused: Vec<Refused>,
}

/// The workload suite in `mode`.
pub fn suite(mode: Mode) -> Result<Suite, String> {
    let p = presets::all().map_err(str::to_owned)?;
    let mut out = Vec::new();
    let mut refused = Vec::new();
    for sp in p.scenarios.iter().filter(|s| s.source.starts_with("MAD-Max golden case")) {
        let [model, system, task] = p.configs(sp).ok_or(format!("{}: a missing preset", sp.id))?;
        let mut file = serde_json::json!({ "model": model, "system": system, "task": task });
        file["task"]["mode"] = serde_json::Value::from(mode.config_name());
        let raw = serde_json::from_value::<RawFile>(file.clone()).map_err(|e| e.to_string())?.into_scenario()?;
        let scenario = match validate(&raw) {
            Ok(s) => s,
            Err(problems) => {
                let why = problems.first().map_or_else(|| "refused".to_owned(), |e| e.to_string());
                refused.push(Refused { workload: sp.id.clone(), why });
                continue;
            }
        };
        let gpu = match scenario.system().f16_flops_per_s {
            f if f < 200e12 => "V100",
            f if f < 500e12 => "A100",
            _ => "H100",
        };
        out.push(Workload {
            id: sp.id.clone(),
            family: scenario.model().arch.family().config_name(),
            gpu,
            scenario,
            file,
        });
    }
    Ok(Suite { workloads: out, refused })
}

/// How a figure spreads over workloads.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Spread {
    pub workloads: usize,
    pub min: f64,
    pub median: f64,
    pub max: f64,
    /// The workloads at the two ends.
    pub lowest: String,
    pub highest: String,
}

impl Spread {
    /// The spread of `(workload, value)` pairs; `None` when there are none.
    pub fn of(values: &[(String, f64)]) -> Option<Spread> {
        let mut v: Vec<&(String, f64)> = values.iter().filter(|x| x.1.is_finite()).collect();
        crate::engine::order::sort_by(&mut v, |a, b| a.1.total_cmp(&b.1));
        let n = v.len();
        let (first, last) = (v.first()?, v.last()?);
        let median = if n % 2 == 1 { v[n / 2].1 } else { (v[n / 2 - 1].1 + v[n / 2].1) / 2.0 };
        Some(Spread {
            workloads: n,
            min: first.1,
            median,
            max: last.1,
            lowest: first.0.clone(),
            highest: last.0.clone(),
        })
    }
}

/// A spread over one group of workloads (a family, a GPU generation).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Group {
    pub name: String,
    pub spread: Spread,
}

/// Exposed communication as a share of iteration time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Exposed {
    pub all: Spread,
    pub by_family: Vec<Group>,
    pub by_gpu: Vec<Group>,
    /// The share over all workloads weighted by their GPU count, 0..1: the share of the
    /// suite's GPU hours if every workload ran for the same time (a job's GPU hours grow with
    /// its GPUs; the unweighted median counts a 8-GPU job as much as a 2,048-GPU one).
    pub gpu_weighted: f64,
}

/// The explorer's speed-ups over each workload's own plan (the best plan that fits at the same
/// global batch, over the given plan's throughput).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Speedups {
    /// Pre-training and fine-tuning workloads.
    pub training: Option<Spread>,
    pub inference: Option<Spread>,
    /// The workloads where the best plan gains most ([`LARGEST_GAINS`] of training and of
    /// inference, largest first, each at least 1%): what their own plan and the best one are,
    /// so that an outlier explains itself.
    pub largest: Vec<Gain>,
    /// Workloads whose own plan does not fit in HBM or misses a latency limit (a speed-up over
    /// a plan that cannot run means nothing).
    pub own_plan_cannot_run: Vec<String>,
    /// Workloads with no plan that fits.
    pub nothing_fits: Vec<String>,
    /// Workloads whose search would be too big to run.
    pub too_big: Vec<String>,
}

/// How many of the largest gains [`Speedups::largest`] lists, of training and of inference.
pub const LARGEST_GAINS: usize = 3;

/// A workload where a better plan gains much: the speed-up and the two plans.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Gain {
    pub workload: String,
    /// `training` or `inference`.
    pub task: &'static str,
    pub speedup: f64,
    pub plans: Plans,
}

/// One co-design what-if: every workload's own plan on hardware with one resource scaled.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WhatIf {
    pub resource: &'static str,
    pub factor: f64,
    /// Throughput over the workload's own at 1x.
    pub speedup: Spread,
}

/// The three analyses in one model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Findings {
    /// The model, named as `task.mode` names it (`reference`, `default`).
    #[serde(serialize_with = "mode_name")]
    pub mode: Mode,
    pub workloads: usize,
    /// The suite's workloads this model refuses, so not among `workloads`.
    pub refused: Vec<Refused>,
    pub exposed: Exposed,
    pub speedups: Speedups,
    pub codesign: Vec<WhatIf>,
    /// HBM capacity what-ifs: how many workloads' own plans fit at each of the explorer's
    /// factors (more memory changes which plans fit, not how fast one runs).
    pub capacity: Vec<Capacity>,
}

/// How many workloads' own plans fit in HBM scaled by `factor`, of those evaluated.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Capacity {
    pub factor: f64,
    pub fit: usize,
    pub workloads: usize,
}

fn mode_name<S: serde::Serializer>(m: &Mode, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(m.config_name())
}

/// The findings on the workload suite in `mode`: about 70 evaluations per what-if and one
/// explorer search per workload (seconds natively in the default model).
pub fn findings(mode: Mode) -> Result<Findings, String> {
    let s = suite(mode)?;
    findings_of(mode, &s.workloads, &s.refused).ok_or_else(|| "no workload of the suite runs in this model".to_owned())
}

/// [`findings`] over given workloads (and the suite's `refused`); `None` when there are none.
pub fn findings_of(mode: Mode, suite: &[Workload], refused: &[Refused]) -> Option<Findings> {
    let measured: Vec<Measured> = suite
        .iter()
        .map(|w| {
            let search = explore::search(&w.scenario, &Space::fixed_global(&w.scenario));
            Measured::of(w, compared(&w.scenario, search.as_ref().ok()))
        })
        .collect();
    summarize(mode, suite, refused, &measured)
}

/// How a workload's own plan compares with the best the explorer finds.
#[derive(Clone, Debug, PartialEq)]
pub enum Compared {
    /// The best plan that fits over the own plan, in throughput (at least 1), and the two
    /// plans.
    Speedup(f64, Plans),
    /// The own plan does not fit in HBM or misses a latency limit.
    OwnPlanCannotRun,
    NothingFits,
    /// The search would be too big to run.
    TooBig,
}

/// A workload's own plan and the best plan that fits, each described as the explorer does,
/// with its throughput.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Plans {
    pub own: String,
    pub own_samples_per_s: f64,
    /// The share of the own plan's communication that no computation hides, 0..1.
    pub own_exposed_share: f64,
    pub best: String,
    pub best_samples_per_s: f64,
    pub best_exposed_share: f64,
}

/// What a finished search of `base` (`None`: too big to run) says about its own plan.
pub fn compared(base: &Scenario, search: Option<&explore::Summary>) -> Compared {
    match search {
        None => Compared::TooBig,
        Some(s) => match (s.speedup, s.ranked.first()) {
            (Some(x), Some(best)) => Compared::Speedup(
                x,
                Plans {
                    own: explore::describe_outcome(base, &s.baseline),
                    own_samples_per_s: s.baseline.throughput_samples_per_s,
                    own_exposed_share: s.baseline.exposed_share,
                    best: explore::describe_outcome(base, best),
                    best_samples_per_s: best.throughput_samples_per_s,
                    best_exposed_share: best.exposed_share,
                },
            ),
            _ if !(s.baseline.fits() && s.baseline.meets_limit()) => Compared::OwnPlanCannotRun,
            _ => Compared::NothingFits,
        },
    }
}

/// One workload's figures: what [`summarize`] gathers over the suite.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// Exposed communication over iteration time, 0..1.
    pub exposed_share: f64,
    pub compared: Compared,
    /// Throughput at each co-design point ([`RESOURCES`] x [`FACTORS`], in that order) over
    /// the workload's own; `None` where the scaled system is not a cluster.
    pub codesign: Vec<Option<f64>>,
    /// Whether the own plan fits in HBM scaled by each of [`explore::CODESIGN_FACTORS`];
    /// `None` where the scaled system is not a cluster.
    pub fits_at: Vec<Option<bool>>,
}

impl Measured {
    /// The workload's exposed share and co-design ratios (its own plan evaluated 22 times),
    /// with what its search found.
    pub fn of(w: &Workload, compared: Compared) -> Measured {
        let base = evaluate(&w.scenario);
        let exposed_share = if base.iteration_s > 0.0 { base.exposed_comm_s.max(0.0) / base.iteration_s } else { 0.0 };
        let codesign = RESOURCES
            .iter()
            .flat_map(|&r| FACTORS.iter().map(move |&f| (r, f)))
            .map(|(r, f)| {
                let after = evaluate(&explore::scaled(&w.scenario, r, f)?);
                Some(after.throughput_samples_per_s / base.throughput_samples_per_s)
            })
            .collect();
        let fits_at = explore::CODESIGN_FACTORS
            .iter()
            .map(|&f| {
                let r = evaluate(&explore::scaled(&w.scenario, Resource::HbmCapacity, f)?);
                Some(r.memory.total_bytes <= r.memory.capacity_bytes)
            })
            .collect();
        Measured { exposed_share, compared, codesign, fits_at }
    }
}

/// The findings over `suite` from each workload's [`Measured`] (in the same order); `None`
/// when there are none.
pub fn summarize(mode: Mode, suite: &[Workload], refused: &[Refused], measured: &[Measured]) -> Option<Findings> {
    let pairs = |keep: &dyn Fn(&Workload) -> bool| -> Vec<(String, f64)> {
        suite.iter().zip(measured).filter(|(w, _)| keep(w)).map(|(w, m)| (w.id.clone(), m.exposed_share)).collect()
    };
    let groups = |key: fn(&Workload) -> &'static str| -> Vec<Group> {
        let mut names: Vec<&'static str> = suite.iter().map(key).collect();
        crate::engine::order::sort(&mut names);
        names.dedup();
        names
            .into_iter()
            .filter_map(|n| Some(Group { name: n.to_owned(), spread: Spread::of(&pairs(&|w| key(w) == n))? }))
            .collect()
    };
    let gpus = |w: &Workload| w.scenario.system().num_devices as f64;
    let weighted: f64 = suite.iter().zip(measured).map(|(w, m)| gpus(w) * m.exposed_share).sum();
    let exposed = Exposed {
        all: Spread::of(&pairs(&|_| true))?,
        by_family: groups(|w| w.family),
        by_gpu: groups(|w| w.gpu),
        gpu_weighted: weighted / suite.iter().map(gpus).sum::<f64>().max(1.0),
    };

    let mut training = Vec::new();
    let mut inference = Vec::new();
    let mut gains: [Vec<Gain>; 2] = [Vec::new(), Vec::new()];
    let (mut own_plan_cannot_run, mut nothing_fits, mut too_big) = (Vec::new(), Vec::new(), Vec::new());
    for (w, m) in suite.iter().zip(measured) {
        let id = w.id.clone();
        match &m.compared {
            Compared::Speedup(x, plans) => {
                let serving = w.scenario.task().kind == TaskKind::Inference;
                if serving { &mut inference } else { &mut training }.push((id.clone(), *x));
                let task = if serving { "inference" } else { "training" };
                gains[usize::from(serving)].push(Gain { workload: id, task, speedup: *x, plans: plans.clone() });
            }
            Compared::OwnPlanCannotRun => own_plan_cannot_run.push(id),
            Compared::NothingFits => nothing_fits.push(id),
            Compared::TooBig => too_big.push(id),
        }
    }
    let largest = gains
        .into_iter()
        .flat_map(|mut g| {
            crate::engine::order::sort_by(&mut g, |a, b| b.speedup.total_cmp(&a.speedup));
            // A gain under 1% is no gain to explain.
            g.into_iter().filter(|x| x.speedup >= 1.01).take(LARGEST_GAINS)
        })
        .collect();
    let speedups = Speedups {
        training: Spread::of(&training),
        inference: Spread::of(&inference),
        largest,
        own_plan_cannot_run,
        nothing_fits,
        too_big,
    };

    let points = RESOURCES.iter().flat_map(|&r| FACTORS.iter().map(move |&f| (r, f)));
    let codesign = points
        .enumerate()
        .filter_map(|(k, (r, f))| {
            let ratios: Vec<(String, f64)> = suite
                .iter()
                .zip(measured)
                .filter_map(|(w, m)| Some((w.id.clone(), m.codesign.get(k).copied()??)))
                .collect();
            Some(WhatIf { resource: r.label(), factor: f, speedup: Spread::of(&ratios)? })
        })
        .collect();
    let capacity = explore::CODESIGN_FACTORS
        .iter()
        .enumerate()
        .map(|(k, &factor)| {
            let at: Vec<bool> = measured.iter().filter_map(|m| m.fits_at.get(k).copied().flatten()).collect();
            Capacity { factor, fit: at.iter().filter(|f| **f).count(), workloads: at.len() }
        })
        .collect();
    let refused = refused.to_vec();
    Some(Findings { mode, workloads: suite.len(), refused, exposed, speedups, codesign, capacity })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suite_is_the_papers_workloads_in_both_models() {
        let (reference, default) = (suite(Mode::Reference).expect("presets"), suite(Mode::Default).expect("presets"));
        let reference_refused = reference.refused;
        let reference = reference.workloads;
        assert!(reference.len() >= 60, "{}", reference.len());
        assert!(reference.iter().all(|w| w.scenario.task().mode == Mode::Reference));
        // Each workload's file is its scenario (the page's workers build it from the file).
        for w in reference.iter().chain(&default.workloads) {
            let raw = serde_json::from_value::<RawFile>(w.file.clone()).expect("file").into_scenario().expect("raw");
            assert_eq!(validate(&raw).as_ref(), Ok(&w.scenario), "{}", w.id);
        }
        let families: Vec<&str> = reference.iter().map(|w| w.family).collect();
        for f in ["LLM", "DLRM", "ViT"] {
            assert!(families.contains(&f), "{f}: {families:?}");
        }
        for g in ["V100", "A100", "H100"] {
            assert!(reference.iter().any(|w| w.gpu == g), "{g}");
        }
        assert!(
            default.workloads.len() >= 60 && default.workloads.iter().all(|w| w.scenario.task().mode == Mode::Default)
        );
        // Every golden-case preset is a workload or refused, saying why, in each model.
        for (mode, suite, no) in
            [(Mode::Reference, &reference, &reference_refused), (Mode::Default, &default.workloads, &default.refused)]
        {
            let cases = presets::all()
                .expect("presets")
                .scenarios
                .iter()
                .filter(|s| s.source.starts_with("MAD-Max golden case"))
                .count();
            assert_eq!(suite.len() + no.len(), cases, "{mode:?}");
            assert!(no.iter().all(|r| r.why.contains(": ") && !suite.iter().any(|w| w.id == r.workload)), "{no:?}");
        }
    }

    #[test]
    fn a_spread_names_its_ends_and_takes_the_middle() {
        let v = |x: &[(&str, f64)]| x.iter().map(|(n, v)| (n.to_string(), *v)).collect::<Vec<_>>();
        let s = Spread::of(&v(&[("b", 0.3), ("a", 0.1), ("c", 0.2), ("d", 0.5)])).expect("values");
        assert_eq!((s.workloads, s.min, s.median, s.max), (4, 0.1, 0.25, 0.5));
        assert_eq!((s.lowest.as_str(), s.highest.as_str()), ("a", "d"));
        assert_eq!(Spread::of(&[]), None);
    }

    #[test]
    fn findings_on_a_few_workloads_hold_together() {
        // A few workloads in each model: shares within 0..1, speed-ups of at least 1 (the own
        // plan is one of those searched), more of any resource never slower.
        for mode in [Mode::Reference, Mode::Default] {
            let all = super::suite(mode).expect("presets");
            let suite: Vec<Workload> = all.workloads.into_iter().step_by(12).collect();
            let f = findings_of(mode, &suite, &all.refused).expect("workloads");
            assert_eq!(f.refused, all.refused);
            assert_eq!(f.workloads, suite.len());
            let e = &f.exposed.all;
            assert!(e.min >= 0.0 && e.max <= 1.0 && e.min <= e.median && e.median <= e.max, "{e:?}");
            let w = f.exposed.gpu_weighted;
            assert!(e.min <= w && w <= e.max, "weighted {w} outside {e:?}");
            assert_eq!(f.exposed.by_family.iter().map(|g| g.spread.workloads).sum::<usize>(), suite.len());
            assert_eq!(f.exposed.by_gpu.iter().map(|g| g.spread.workloads).sum::<usize>(), suite.len());
            let s = &f.speedups;
            let compared =
                [&s.training, &s.inference].iter().filter_map(|x| x.as_ref()).map(|x| x.workloads).sum::<usize>();
            assert_eq!(compared + s.own_plan_cannot_run.len() + s.nothing_fits.len() + s.too_big.len(), suite.len());
            assert!([&s.training, &s.inference].iter().filter_map(|x| x.as_ref()).all(|x| x.min >= 1.0));
            assert_eq!(f.codesign.len(), RESOURCES.len() * FACTORS.len());
            // More memory never makes a plan stop fitting; at x1 the own plans that fit are
            // those compared or where nothing else fits.
            assert_eq!(f.capacity.len(), explore::CODESIGN_FACTORS.len());
            assert!(f.capacity.windows(2).all(|w| w[0].fit <= w[1].fit && w[0].factor < w[1].factor));
            let at_1 = f.capacity.iter().find(|c| c.factor == 1.0).expect("x1");
            assert_eq!(at_1.workloads, suite.len());
            assert!(at_1.fit + s.own_plan_cannot_run.len() >= suite.len() - s.too_big.len(), "{at_1:?}");
            // The largest gains: at most LARGEST_GAINS per task, largest first, the first the
            // spread's maximum, each the ratio of its plans' throughputs.
            for (task, spread) in [("training", &s.training), ("inference", &s.inference)] {
                let gains: Vec<&Gain> = s.largest.iter().filter(|g| g.task == task).collect();
                assert!(gains.len() <= LARGEST_GAINS && gains.windows(2).all(|w| w[0].speedup >= w[1].speedup));
                let max = spread.as_ref().map(|x| x.max).filter(|x| *x >= 1.01);
                assert_eq!(gains.first().map(|g| g.speedup), max, "{task}");
                assert!(gains.iter().all(|g| g.speedup >= 1.01));
                for g in gains {
                    let ratio = g.plans.best_samples_per_s / g.plans.own_samples_per_s;
                    assert!((g.speedup - ratio.max(1.0)).abs() <= 1e-9 * ratio, "{g:?}");
                    assert!(!g.plans.own.is_empty() && !g.plans.best.is_empty());
                }
            }
            // The explorer's factors but 1 (the workload's own figures).
            let others: Vec<f64> = explore::CODESIGN_FACTORS.into_iter().filter(|x| *x != 1.0).collect();
            assert_eq!(FACTORS.to_vec(), others);
            for w in &f.codesign {
                let x = &w.speedup;
                if w.factor > 1.0 {
                    assert!(
                        x.min >= 1.0 - 1e-12 && x.max <= w.factor * (1.0 + 1e-9),
                        "{} x{}: {x:?}",
                        w.resource,
                        w.factor
                    );
                } else {
                    assert!(x.max <= 1.0 + 1e-12, "{} x{}: {x:?}", w.resource, w.factor);
                }
            }
        }
    }
}
