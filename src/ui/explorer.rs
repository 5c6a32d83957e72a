//! The explorer's work on the page: a search (every plan, then co-design what-ifs) cut into
//! steps so the page stays responsive, with progress, cancel and partial results; and the
//! time, GPU-hours, dollars and energy a plan needs for a workload. Plain Rust, tested
//! natively; the page only schedules `step` calls and draws.

use crate::engine::explore::{self, Candidate, Outcome, Resource, Space, TooBig};
use crate::engine::scenario::{Scenario, Spec, Strategy, TaskKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What the best plan is compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Baseline {
    /// The plan the scenario has.
    Yours,
    /// Dense components fsdp over all GPUs (the best embedding plan with it).
    PlainFsdp,
    /// Dense components ddp over all GPUs.
    PlainDdp,
}

/// What the ranked table says after a plan's memory: nothing when it is feasible; that it does
/// not fit, or that it misses the latency limit.
pub fn verdict(o: &Outcome) -> String {
    crate::wording::misfit_mark(o).map_or(String::new(), |m| format!(" ({m})"))
}

/// The scenario a search explores: the calculator's, as pre-training or inference when the
/// explorer's task setting (`pretrain`, `inference`) says so, else as it is (`own`); what is
/// wrong with it as that task when the model's rules refuse it.
pub fn searched(s: &Scenario, task: &str) -> Result<Scenario, String> {
    let (kind, as_what) = match task {
        "pretrain" => (TaskKind::Pretrain, "pre-training"),
        "inference" => (TaskKind::Inference, "inference"),
        _ => return Ok(s.clone()),
    };
    s.with_kind(kind).map_err(|errors| {
        let why = errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; ");
        format!("as {as_what} the scenario is refused: {why}")
    })
}

/// Factors each co-design resource is scaled by.
pub use explore::CODESIGN_FACTORS as FACTORS;

/// Where a unit of work's result goes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Slot {
    Main,
    /// Index into `Job::co`.
    Co(usize),
}

/// A co-design point: one resource scaled by one factor, and the best plan found there.
#[derive(Clone, Debug, PartialEq)]
pub struct CoPoint {
    pub resource: Resource,
    pub factor: f64,
    /// GPUs of the scaled cluster.
    pub gpus: u64,
    pub best: Option<Outcome>,
}

/// One evaluation of a search: the plan, the index of the scenario it runs on ([`Job::scenarios`]:
/// the base, then each what-if) and its place in the search's queue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub at: usize,
    pub scenario: usize,
    pub candidate: Candidate,
}

/// A search in progress (or done, or cancelled). Its evaluations can run anywhere (here, or in
/// the page's workers): [`Job::hand_out`] gives them out, [`Job::accept`] takes their outcomes
/// back in any order, and the job applies them in queue order, so the result is the same as
/// [`explore::search`]'s however the work was split.
pub struct Job {
    scenarios: Vec<Scenario>,
    /// The what-ifs of `scenarios[1..]`, in order.
    what_ifs: Vec<(Resource, f64)>,
    space: Space,
    queue: Vec<(usize, Candidate, Slot)>,
    /// Queue items applied so far.
    next: usize,
    /// Queue items handed out so far (`next` and after: out, their outcomes not yet applied).
    handed: usize,
    /// Outcomes back from items handed out, by queue place, waiting for the ones before them.
    arrived: BTreeMap<usize, Outcome>,
    main: Vec<Outcome>,
    co: Vec<CoPoint>,
    cancelled: bool,
    /// Number of plans of the main search (the first items of the queue).
    main_plans: usize,
    /// The passes queued after the main search so far: 1 once its most promising plans are
    /// queued with every setting (a staged search, [`explore::settings_pass`]), 2 once its
    /// best plans are queued with their refinements ([`explore::refinements`]).
    passes: u8,
    /// Plans the settings pass tries every setting on.
    settings_plans: usize,
    /// Timeline ops the main search's first pass takes ([`explore::planned_fitted`]).
    main_ops: u64,
    /// Why the what-ifs were not run although asked for: together with the main search they
    /// would take more than one search may.
    pub codesign_skipped: Option<TooBig>,
}

impl Job {
    /// Prepares every evaluation: all plans of `base`, then all plans of each scaled scenario;
    /// refuses a main search bigger than one search may be ([`explore::planned`]), and drops the
    /// what-ifs (saying so) when they would take the whole past that.
    pub fn new(base: &Scenario, space: &Space, codesign: bool) -> Result<Job, TooBig> {
        let mut scenarios = vec![base.clone()];
        let (space, main, main_ops) = explore::planned_fitted(base, space)?;
        let mut budget = main_ops;
        let space = &space;
        let mut queue: Vec<(usize, Candidate, Slot)> = main.into_iter().map(|p| (0, p, Slot::Main)).collect();
        let main_plans = queue.len();
        let mut co = Vec::new();
        let mut done_what_ifs = Vec::new();
        let mut codesign_skipped = None;
        if codesign {
            let mut what_ifs = Vec::new();
            let mut plans = main_plans;
            // The what-ifs re-search the parallel plans with the scenario's settings: trying
            // every micro-batch and recomputation at 25 hardware points would take 12 times
            // as long.
            let co_space = Space { knobs: false, ..space.clone() };
            for r in Resource::ALL {
                for f in FACTORS {
                    let Some(s) = explore::scaled(base, r, f) else { continue };
                    let list = explore::plans(&s, &co_space);
                    budget = budget.saturating_add(explore::cost(&s, &list));
                    plans += list.len();
                    what_ifs.push((r, f, s, list));
                }
            }
            if budget > explore::MAX_SEARCH_OPS || plans > explore::MAX_PLANS {
                codesign_skipped = Some(TooBig { plans, ops: budget });
            } else {
                for (r, f, s, list) in what_ifs {
                    let idx = co.len();
                    co.push(CoPoint { resource: r, factor: f, gpus: s.system().num_devices, best: None });
                    let si = scenarios.len();
                    queue.extend(list.into_iter().map(|p| (si, p, Slot::Co(idx))));
                    scenarios.push(s);
                    done_what_ifs.push((r, f));
                }
            }
        }
        Ok(Job {
            scenarios,
            what_ifs: done_what_ifs,
            space: space.clone(),
            queue,
            next: 0,
            handed: 0,
            arrived: BTreeMap::new(),
            main: Vec::with_capacity(main_plans),
            co,
            cancelled: false,
            main_plans,
            passes: 0,
            settings_plans: 0,
            main_ops,
            codesign_skipped,
        })
    }

    /// Evaluates up to `n` more plans here; returns how many it did (fewer at the end of a
    /// pass, when the plans out elsewhere must come back first).
    pub fn step(&mut self, n: usize) -> usize {
        let items = self.hand_out(n);
        for it in &items {
            let o = self.evaluate(it);
            self.accept(it.at, o);
        }
        items.len()
    }

    /// Evaluates one item handed out ([`Job::hand_out`]) here.
    pub fn evaluate(&self, it: &Item) -> Outcome {
        explore::evaluate_plan(&self.scenarios[it.scenario], &it.candidate, &self.space)
    }

    /// Hands out up to `n` evaluations not yet handed out, in queue order. A pass of the main
    /// search is queued only once every plan before it is back (it starts from their ranking),
    /// so at the end of a pass this gives out nothing until the plans out are accepted.
    pub fn hand_out(&mut self, n: usize) -> Vec<Item> {
        self.refine_when_due();
        if self.cancelled {
            return Vec::new();
        }
        let end = if self.passes < 2 { self.main_plans } else { self.queue.len() };
        let to = end.min(self.handed.saturating_add(n));
        let items = (self.handed..to)
            .map(|at| {
                let (scenario, candidate, _) = &self.queue[at];
                Item { at, scenario: *scenario, candidate: candidate.clone() }
            })
            .collect::<Vec<_>>();
        self.handed = self.handed.max(to);
        items
    }

    /// Takes back the outcome of the item at queue place `at`; outcomes are applied in queue
    /// order, as they would be had one thread evaluated them all. Ignored once cancelled, and
    /// for a place not handed out or already applied.
    pub fn accept(&mut self, at: usize, o: Outcome) {
        if self.cancelled || at < self.next || at >= self.handed {
            return;
        }
        self.arrived.insert(at, o);
        while let Some(o) = self.arrived.remove(&self.next) {
            match self.queue[self.next].2 {
                Slot::Main => self.main.push(o),
                Slot::Co(i) => {
                    let p = &mut self.co[i];
                    let better = o.fits()
                        && p.best.as_ref().is_none_or(|b| o.throughput_samples_per_s > b.throughput_samples_per_s);
                    if better {
                        p.best = Some(o);
                    }
                }
            }
            self.next += 1;
            self.refine_when_due();
        }
    }

    /// The scenarios the items run on: the searched one, then each what-if of
    /// [`Job::what_ifs`], in order.
    pub fn scenarios(&self) -> &[Scenario] {
        &self.scenarios
    }

    /// The co-design what-ifs queued (each resource and factor), in the order of
    /// [`Job::scenarios`] after the first.
    pub fn what_ifs(&self) -> &[(Resource, f64)] {
        &self.what_ifs
    }

    pub fn space(&self) -> &Space {
        &self.space
    }

    /// Each time the main search's queue is done, its next pass, as [`explore::search`] runs
    /// them, queued before the what-ifs: the settings pass of a staged search, then the best
    /// plans with the overlap options.
    fn refine_when_due(&mut self) {
        while self.passes < 2 && self.next >= self.main_plans {
            self.passes += 1;
            let base = &self.scenarios[0];
            let more = if self.passes == 1 {
                let (more, plans) = explore::settings_pass(base, &self.ranked(), &self.space, self.main_ops);
                self.settings_plans = plans;
                more
            } else {
                explore::refinements(base, &self.ranked(), &self.space)
            };
            self.main_plans += more.len();
            // Nothing after `next` is out: `hand_out` stops at the pass's end.
            let at = self.next;
            self.queue.splice(at..at, more.into_iter().map(|c| (0, c, Slot::Main)));
        }
    }

    /// Which plans are also tried with the training settings ([`explore::planned_fitted`]
    /// may have staged the search).
    pub fn settings_searched(&self) -> explore::SettingsSearched {
        explore::settings_searched(&self.scenarios[0], &self.space, self.settings_plans)
    }

    pub fn cancel(&mut self) {
        self.cancelled = true;
    }

    pub fn cancelled(&self) -> bool {
        self.cancelled
    }

    /// Evaluations done and planned.
    pub fn progress(&self) -> (usize, usize) {
        (self.next, self.queue.len())
    }

    /// True when nothing is left to do (finished or cancelled).
    pub fn finished(&self) -> bool {
        self.cancelled || self.next >= self.queue.len()
    }

    /// True when every plan of the main search has been evaluated.
    pub fn main_done(&self) -> bool {
        self.main.len() == self.main_plans
    }

    /// The main search's results so far, best first.
    pub fn ranked(&self) -> Vec<Outcome> {
        let mut v = self.main.clone();
        explore::rank(&mut v);
        v
    }

    /// The summary against a baseline (over the results so far).
    pub fn summary(&self, baseline: Baseline) -> explore::Summary {
        let mut s = explore::Summary {
            settings: self.settings_searched(),
            ..explore::summarize(&self.scenarios[0], self.ranked(), &self.space)
        };
        let plain = |st: Strategy| {
            s.ranked.iter().find(|o| {
                let one = |sp: &Option<Spec>| {
                    sp.as_ref().is_none_or(|x| x.levels().len() == 1 && x.levels()[0].strategy == st)
                };
                one(&o.plan.mlp) && one(&o.plan.transformer)
            })
        };
        let chosen = match baseline {
            Baseline::Yours => None,
            Baseline::PlainFsdp => plain(Strategy::Fsdp).cloned(),
            Baseline::PlainDdp => plain(Strategy::Ddp).cloned(),
        };
        if let Some(b) = chosen {
            s.speedup = explore::speedup(&s.ranked, &b);
            s.baseline = b;
        }
        s
    }

    /// Co-design points, with speed-ups relative to the best plan on the unscaled cluster.
    pub fn codesign(&self) -> &[CoPoint] {
        &self.co
    }

    pub fn base(&self) -> &Scenario {
        &self.scenarios[0]
    }
}

/// Speed-up of a co-design point over the unscaled best (factor 1 of the same resource).
pub fn speedup(points: &[CoPoint], p: &CoPoint) -> Option<f64> {
    let base = points.iter().find(|q| q.resource == p.resource && q.factor == 1.0)?.best.as_ref()?;
    Some(p.best.as_ref()?.throughput_samples_per_s / base.throughput_samples_per_s)
}

/// Cost inputs: price and power per GPU, and the workload.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostInputs {
    pub usd_per_gpu_hour: f64,
    pub watts_per_gpu: f64,
    /// Samples to process (for language models the page converts tokens to samples).
    pub samples: f64,
}

/// What processing the workload costs with a plan.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Costs {
    pub time_s: f64,
    pub gpu_hours: f64,
    pub usd: f64,
    pub kwh: f64,
}

/// The MAD-Max artifact's formulas: time = samples / throughput; GPU-hours = time x GPUs;
/// cost = GPU-hours x price; energy = GPU-hours x power.
pub fn costs(throughput: f64, gpus: u64, c: &CostInputs) -> Costs {
    let time_s = if throughput > 0.0 { c.samples / throughput } else { f64::INFINITY };
    let gpu_hours = time_s * gpus as f64 / 3600.0;
    Costs { time_s, gpu_hours, usd: gpu_hours * c.usd_per_gpu_hour, kwh: gpu_hours * c.watts_per_gpu / 1000.0 }
}

/// Indices of the Pareto front (most throughput for least memory) among outcomes, ordered by
/// memory.
pub fn memory_pareto(outcomes: &[Outcome]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..outcomes.len()).collect();
    crate::engine::order::sort_by(&mut idx, |a, b| {
        outcomes[*a]
            .memory_bytes
            .total_cmp(&outcomes[*b].memory_bytes)
            .then(outcomes[*b].throughput_samples_per_s.total_cmp(&outcomes[*a].throughput_samples_per_s))
    });
    let mut front = Vec::new();
    let mut best = f64::NEG_INFINITY;
    for i in idx {
        if outcomes[i].throughput_samples_per_s > best {
            best = outcomes[i].throughput_samples_per_s;
            front.push(i);
        }
    }
    front
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::state::{Action, State};

    #[test]
    fn a_chunked_job_equals_the_one_shot_search() {
        // MAD-Max paper mode: its plan space and the speed-ups the paper reports.
        let s = State::initial().next(crate::ui::state::Action::SetMode(crate::engine::scenario::Mode::Reference));
        let base = &s.good.as_ref().expect("good").scenario;
        let space = Space::fixed_global(base);
        let mut job = Job::new(base, &space, false).expect("within budget");
        let (_, total) = job.progress();
        let mut steps = 0;
        while !job.finished() {
            job.step(7);
            steps += 1;
        }
        assert!(steps > 1);
        assert_eq!(job.progress(), (total, total));
        assert_eq!(Ok(job.summary(Baseline::Yours)), explore::search(base, &space));
        // LLaMA2-70B's shipped plan is FSDP; plain FSDP takes the best embedding plan with it,
        // so the speed-up over it can only be smaller.
        let fsdp = job.summary(Baseline::PlainFsdp);
        assert_eq!(fsdp.baseline.plan.transformer.map(|t| t.levels()[0].strategy), Some(Strategy::Fsdp));
        let (yours, plain) = (job.summary(Baseline::Yours).speedup.expect("fits"), fsdp.speedup.expect("fits"));
        assert!(plain <= yours && plain > 1.0);
        let ddp = job.summary(Baseline::PlainDdp);
        assert_eq!(ddp.baseline.plan.transformer.map(|t| t.levels()[0].strategy), Some(Strategy::Ddp));
    }

    #[test]
    fn a_chunked_job_refines_its_best_plans_as_the_one_shot_search_does() {
        // The default model in training: the best plans again with the overlap options, after
        // the main search and before the what-ifs.
        let s = State::initial();
        let base = &s.good.as_ref().expect("good").scenario;
        let space = Space::fixed_global(base);
        // Without the what-ifs too: the refinement is queued when the last plan is done.
        let mut bare = Job::new(base, &space, false).expect("within budget");
        while !bare.finished() {
            bare.step(1);
        }
        assert_eq!(bare.summary(Baseline::Yours), explore::search(base, &space).expect("within budget"));
        let mut job = Job::new(base, &space, true).expect("within budget");
        let (_, before) = job.progress();
        while !job.finished() {
            job.step(101);
        }
        let (done, total) = job.progress();
        let search = explore::search(base, &space).expect("within budget");
        assert!(done == total && total > before, "{before} planned, {total} evaluated");
        assert_eq!(job.summary(Baseline::Yours), search);
        assert!(job.ranked().iter().any(|o| o.setup.overlap_grad_reduce || o.setup.overlap_tp_comm));
    }

    #[test]
    fn a_chunked_staged_search_equals_the_one_shot_search() {
        // A staged search (LLaMA2-70B staged on purpose, as too big a search would be): its
        // settings pass is queued when the first pass is done, then the overlap pass, as
        // explore::search runs them.
        let s = State::initial();
        let base = &s.good.as_ref().expect("good").scenario;
        let space = Space { knobs: false, staged: true, ..Space::fixed_global(base) };
        let mut job = Job::new(base, &space, false).expect("within budget");
        let (_, first) = job.progress();
        while !job.finished() {
            job.step(37);
        }
        let (done, total) = job.progress();
        assert!(done == total && total > first, "{first} planned, {total} evaluated");
        let search = explore::search(base, &space).expect("within budget");
        assert!(matches!(search.settings, explore::SettingsSearched::Best(n) if n > 0), "{:?}", search.settings);
        assert_eq!(job.summary(Baseline::Yours), search);
    }

    #[test]
    fn a_plan_over_its_gpus_memory_does_not_fit() {
        let s = State::initial();
        let base = &s.good.as_ref().expect("good").scenario;
        let mut o = explore::search(base, &Space::fixed_global(base)).expect("within budget").baseline;
        o.capacity_bytes = 80e9;
        o.memory_bytes = 80e9;
        assert_eq!(verdict(&o), "");
        o.memory_bytes = 81e9;
        assert_eq!(verdict(&o), " (does not fit in HBM)");
        o.memory_bytes = 10e9;
        o.over_tpot = true;
        o.tpot_s = Some(0.05);
        assert!(verdict(&o).starts_with(" (over the latency limit: 50"), "{}", verdict(&o));
    }

    #[test]
    fn a_pass_is_handed_out_only_once_the_one_before_is_back() {
        // The main search's plans, then nothing until they are back: the next pass starts from
        // their ranking. Outcomes taken back out of order, twice, or for places never handed out
        // change nothing.
        let s = State::initial();
        let base = &s.good.as_ref().expect("good").scenario;
        let space = Space::fixed_global(base);
        let mut job = Job::new(base, &space, false).expect("within budget");
        let (_, main) = job.progress();
        let all = job.hand_out(usize::MAX);
        assert_eq!(all.len(), main);
        assert!(job.hand_out(5).is_empty(), "the overlap pass waits for the main search");
        let outcomes: Vec<Outcome> = all.iter().map(|it| job.evaluate(it)).collect();
        job.accept(main + 3, outcomes[0].clone());
        for (it, o) in all.iter().zip(&outcomes).rev() {
            job.accept(it.at, o.clone());
            job.accept(it.at, o.clone());
        }
        assert_eq!(job.progress().0, main);
        let refinements = job.hand_out(usize::MAX);
        assert!(!refinements.is_empty() && refinements[0].at == main, "{}", refinements.len());
        for it in &refinements {
            let o = job.evaluate(it);
            job.accept(it.at, o);
        }
        assert!(job.finished());
        assert_eq!(job.summary(Baseline::Yours), explore::search(base, &space).expect("within budget"));
    }

    #[test]
    fn cancel_stops_with_partial_results() {
        let s = State::initial();
        let base = &s.good.as_ref().expect("good").scenario;
        let mut job = Job::new(base, &Space::fixed_global(base), true).expect("within budget");
        job.step(10);
        job.cancel();
        assert_eq!(job.step(10), 0);
        assert!(job.finished() && job.cancelled());
        assert_eq!(job.ranked().len(), 10);
    }

    #[test]
    fn codesign_finds_what_pays() {
        let s = State::initial();
        let base = &s.good.as_ref().expect("good").scenario;
        let mut job = Job::new(base, &Space::fixed_global(base), true).expect("within budget");
        while !job.finished() {
            job.step(500);
        }
        let pts = job.codesign();
        assert_eq!(pts.len(), Resource::ALL.len() * FACTORS.len());
        let compute2 = pts.iter().find(|p| p.resource == Resource::Compute && p.factor == 2.0).expect("point");
        let up = speedup(pts, compute2).expect("speed-up");
        assert!(up > 1.0 && up <= 2.0 + 1e-9, "doubling compute helps at most 2x: {up}");
        let cap = pts.iter().find(|p| p.resource == Resource::HbmCapacity && p.factor == 8.0).expect("point");
        assert!(speedup(pts, cap).expect("speed-up") >= 1.0 - 1e-12);
    }

    #[test]
    fn what_ifs_too_big_to_run_are_skipped_and_say_so() {
        // The first scenario with ever more micro-batches of one sequence, until its search costs
        // a fifth of the budget: the search runs, its 30 hardware what-ifs would not fit.
        let s = State::initial();
        let good = &s.good.as_ref().expect("good").scenario;
        let mut local = 1;
        let (base, space, main) = loop {
            let base = good.with_batch(local, Some(1)).expect("a valid batch");
            // The scenario's micro-batch of one, not the explorer's choices of micro-batch.
            let space = Space { knobs: false, ..Space::fixed_global(&base) };
            let main = explore::cost(&base, &explore::plans(&base, &space));
            if main * 5 > explore::MAX_SEARCH_OPS {
                break (base, space, main);
            }
            local *= 2;
        };
        assert!(main <= explore::MAX_SEARCH_OPS, "{main}");
        let job = Job::new(&base, &space, true).expect("the main search runs");
        let skipped = job.codesign_skipped.as_ref().expect("what-ifs skipped");
        assert!(skipped.ops > explore::MAX_SEARCH_OPS, "{skipped:?}");
        assert!(job.codesign().is_empty() && job.progress().1 > 0);
    }

    #[test]
    fn costs_follow_the_artifact_formulas() {
        let c = costs(100.0, 8, &CostInputs { usd_per_gpu_hour: 4.0, watts_per_gpu: 500.0, samples: 3.6e6 });
        assert_eq!(c.time_s, 36_000.0);
        assert_eq!(c.gpu_hours, 80.0);
        assert_eq!(c.usd, 320.0);
        assert_eq!(c.kwh, 40.0);
    }

    #[test]
    fn the_pareto_front_keeps_only_undominated_plans() {
        let s = State::initial();
        let base = &s.good.as_ref().expect("good").scenario;
        let r = explore::search(base, &Space::fixed_global(base)).expect("within budget").ranked;
        let front = memory_pareto(&r);
        assert!(!front.is_empty());
        for &i in &front {
            let dominated = r.iter().any(|o| {
                o.memory_bytes <= r[i].memory_bytes
                    && o.throughput_samples_per_s >= r[i].throughput_samples_per_s
                    && (o.memory_bytes < r[i].memory_bytes
                        || o.throughput_samples_per_s > r[i].throughput_samples_per_s)
            });
            assert!(!dominated, "front point {i} is dominated");
        }
    }

    #[test]
    fn applying_a_plan_gives_the_explorer_numbers() {
        let s = State::initial();
        let base = s.good.as_ref().expect("good").scenario.clone();
        let best = explore::search(&base, &Space::fixed_global(&base)).expect("within budget").ranked[0].clone();
        let s = s.next(Action::ApplyPlan(crate::doc::plan_task_keys(&base, &best)));
        assert!(!s.stale(), "{:?}", s.errors);
        assert_eq!(s.good.as_ref().map(|g| g.report.throughput_samples_per_s), Some(best.throughput_samples_per_s));
        // The page says what changed, before and after.
        let said = s.notice.as_ref().map(|n| (n.is_error, n.text.clone()));
        assert!(
            matches!(&said, Some((false, t)) if t.starts_with("Plan applied: ") && t.contains(&crate::units::si(best.throughput_samples_per_s, "samples/s"))),
            "{said:?}"
        );
    }

    #[test]
    fn applying_a_mixture_of_experts_plan_carries_its_expert_and_recomputation_settings() {
        // Mixtral 8x7B on 128 H100s, recomputing its norms and MoE layers under selective
        // recomputation: plans with whole experts on each tensor-parallel rank, and plans with
        // each recomputation, applied in the calculator give the explorer's numbers (a plan
        // without selective recomputation drops the modules, which would not validate).
        let file = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/explore/mixtral_8x7b_h100_128.json"
        ))
        .expect("scenario file");
        let mut doc: serde_json::Value = serde_json::from_str(&file).expect("json");
        doc["task"]["recompute"] = serde_json::json!("selective");
        doc["task"]["recompute_modules"] = serde_json::json!("core_attn, layernorm, moe");
        let s = State::initial().next(Action::Import(doc.to_string()));
        let base = s.good.as_ref().unwrap_or_else(|| panic!("{:?}", s.errors)).scenario.clone();
        let ranked = explore::search(&base, &Space::fixed_global(&base)).expect("within budget").ranked;
        let picks = [
            ranked.iter().find(|o| o.setup.expert_tp == Some(1)).expect("whole experts tried"),
            ranked
                .iter()
                .find(|o| o.setup.recompute == crate::engine::scenario::Recompute::Selective)
                .expect("selective"),
            ranked.iter().find(|o| o.setup.recompute == crate::engine::scenario::Recompute::None).expect("none"),
        ];
        // The plan's words name the modules selective recomputation recomputes.
        let words = |o: &Outcome| explore::describe_outcome(&base, o);
        assert!(
            words(picks[1]).contains("selective recomputation of core_attn, layernorm, moe"),
            "{}",
            words(picks[1])
        );
        assert!(words(picks[2]).contains("no recomputation") && !words(picks[2]).contains(" of core_attn"));
        for o in picks {
            let keys = crate::doc::plan_task_keys(&base, o);
            let applied = s.clone().next(Action::ApplyPlan(keys));
            assert!(!applied.stale(), "{:?}", applied.errors);
            let good = applied.good.as_ref().expect("applied");
            assert_eq!(good.report.throughput_samples_per_s, o.throughput_samples_per_s, "{:?}", o.setup);
            assert_eq!(
                (good.scenario.task().setup.expert_tp, good.scenario.task().setup.recompute),
                (o.setup.expert_tp, o.setup.recompute)
            );
        }
    }

    #[test]
    fn applying_a_cnn_plan_sets_its_batch_and_gradient_settings() {
        let cnn = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/cnn/resnet50_a100_8.json"))
            .expect("CNN file");
        let s = State::initial().next(Action::Import(cnn));
        let base = s.good.as_ref().expect("good").scenario.clone();
        let ranked = explore::search(&base, &Space::local(vec![128])).expect("within budget").ranked;
        // The plan reducing its gradients after the backward pass, with a batch of its own.
        let after = ranked.iter().find(|o| !o.setup.overlap_grad_reduce).expect("tried");
        let keys = crate::doc::plan_task_keys(&base, after);
        assert!(!keys.contains_key("emb_parallel") && !keys.contains_key("local_emb_bs"), "{keys:?}");
        let s = s.next(Action::ApplyPlan(keys));
        assert!(!s.stale(), "{:?}", s.errors);
        assert_eq!(s.doc.get(crate::doc::Config::Task, "overlap_grad_reduce"), Some(&serde_json::json!(false)));
        assert_eq!(s.doc.get(crate::doc::Config::Task, "local_mlp_bs"), Some(&serde_json::json!(128)));
        assert_eq!(s.good.as_ref().map(|g| g.report.throughput_samples_per_s), Some(after.throughput_samples_per_s));
    }
}
