//! The strategy explorer: every legal parallelization plan of a scenario, evaluated and
//! ranked, and hardware co-design what-ifs (scale one resource, re-search the best plan).
//!
//! Plans follow the model's rules (reference mode: what MAD-Max accepts: at most two levels,
//! level 0 within a node, fsdp first, no repeated strategy, degrees of at least 2, global
//! batches that agree; the default model: N-D plans of tensor, context, expert, data (plain,
//! fully sharded, or, without a pipeline, hybrid: sharded within a node and replicated across nodes) and pipeline
//! parallelism in Megatron's nesting order, tensor parallelism within a node and dividing the
//! heads); illegal plans are never evaluated. Plans whose weights do not fit in HBM are kept and marked, not dropped. Pure: no clock, no I/O; callers chunk the work.
//!
//! One job: finding and ranking plans (the co-design what-ifs re-run the same search).

use super::extended::{self, collective::Placement, shape::Dims};
use super::raw::{RawScenario, RawValue};
use super::reference::rules;
use super::report::Report;
use super::scenario::{
    Algorithm, BotMlpPlacement, ConvLayout, EmbSharding, Family, Level, Plan, Precision, Recompute, RecomputeModules,
    Scenario, Setup, Spec, Strategy, Task,
};
use super::validate::{validate, FieldError};
use super::{evaluate, uses_default_model};
use serde::{Deserialize, Serialize};

mod codesign;
mod describe;
mod settings;
mod staged;

pub use codesign::{scaled, Resource, CODESIGN_FACTORS};
use describe::MEGATRON_ORDER;
pub use describe::{describe, describe_outcome};
pub use settings::{
    brute_force, brute_force_everywhere, every_setting, knob_settings, placements, refined, refinements, PlanShape,
    REFINED_PER_PLAN, REFINED_PLANS,
};
pub use staged::{
    settings_pass, settings_searched, SettingsSearched, INTERLEAVED_PLANS, MICRO_BATCHES_PER_STAGE, SETTINGS_PASS_PLANS,
};

/// How local batches are chosen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Batches {
    /// Every plan processes this many samples per iteration; local batches follow from each
    /// plan's data-parallel degrees (plans where they do not divide evenly are skipped).
    FixedGlobal(u64),
    /// The primary component's local batch takes each of these values; the global batch is
    /// whatever results.
    Local(Vec<u64>),
}

/// What a search covers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Space {
    pub batches: Batches,
    /// LLM serving: plans whose time per output token exceeds this are infeasible, s.
    pub max_tpot_s: Option<f64>,
    /// LLM serving: plans whose time to first token exceeds this are infeasible, s.
    pub max_ttft_s: Option<f64>,
    /// Whether each parallel plan of a default-model transformer in training is also tried
    /// with every micro-batch and recomputation ([`knob_settings`]); else the scenario's.
    pub knobs: bool,
    /// Whether, with `knobs` off, the first pass runs each plan with the settings that cost no
    /// time ([`staged::first_pass`]) and a second pass tries every setting on the most
    /// promising parallel plans of the first ([`settings_pass`]): [`planned_fitted`] stages a
    /// search this way when trying every setting on every plan would take more than
    /// [`STAGE_OPS`].
    pub staged: bool,
    /// LLM serving: the weight and KV-cache formats each plan is tried with, every pair of
    /// them; empty: the scenario's own ([`searches_formats`]).
    pub formats: Formats,
}

/// The number formats a serving search tries ([`Space::formats`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Formats {
    pub weights: Vec<Precision>,
    pub kv: Vec<Precision>,
}

impl Formats {
    /// A comma-separated list of formats by their config names (`fp16, fp8, int4`), each once,
    /// in the order given; blank: none. Else a sentence saying which item is not a format.
    pub fn parse_list(text: &str) -> Result<Vec<Precision>, String> {
        let mut out = Vec::new();
        for item in text.split(',').map(str::trim).filter(|x| !x.is_empty()) {
            let Some(p) = Precision::ALL.iter().find(|p| p.config_name().eq_ignore_ascii_case(item)) else {
                let names: Vec<&str> = Precision::ALL.iter().map(|p| p.config_name()).collect();
                return Err(format!(
                    "\"{}\" is not a number format: use {}",
                    crate::engine::raw::short(item),
                    names.join(", ")
                ));
            };
            if !out.contains(p) {
                out.push(*p);
            }
        }
        Ok(out)
    }

    /// Every (weights, KV cache) pair to try, the scenario's own format standing in for a list
    /// left empty; `None` when both are empty (the scenario's formats only).
    fn pairs(&self, own: &Setup) -> Option<Vec<(Option<Precision>, Option<Precision>)>> {
        if self.weights.is_empty() && self.kv.is_empty() {
            return None;
        }
        let or_own = |list: &[Precision], own: Option<Precision>| -> Vec<Option<Precision>> {
            if list.is_empty() {
                vec![own]
            } else {
                list.iter().map(|&p| Some(p)).collect()
            }
        };
        let kv = or_own(&self.kv, own.kv_format);
        Some(
            or_own(&self.weights, own.weight_format)
                .into_iter()
                .flat_map(|w| kv.iter().map(move |&k| (w, k)))
                .collect(),
        )
    }
}

impl Space {
    /// The paper's comparison: the scenario's own global batch, fixed.
    pub fn fixed_global(s: &Scenario) -> Space {
        Space {
            batches: Batches::FixedGlobal(scenario_global_batch(s)),
            max_tpot_s: None,
            max_ttft_s: None,
            knobs: true,
            staged: false,
            formats: Formats::default(),
        }
    }

    /// These local batches (each once); the global batch is whatever results.
    pub fn local(mut batches: Vec<u64>) -> Space {
        super::order::sort(&mut batches);
        batches.dedup();
        Space {
            batches: Batches::Local(batches),
            max_tpot_s: None,
            max_ttft_s: None,
            knobs: true,
            staged: false,
            formats: Formats::default(),
        }
    }
}

/// A plan the explorer evaluates: the parallel plan and the settings it runs with (the
/// scenario's, with the explorer's knobs applied).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub plan: Plan,
    pub setup: Setup,
}

/// The smallest micro-batch sizes a pipeline is tried with ([`knob_settings`]), besides its
/// largest.
pub const MICRO_BATCH_CHOICES: usize = 4;

/// Whether the explorer tries training settings for this scenario ([`knob_settings`]): a
/// default-model transformer in training.
pub fn searches_settings(s: &Scenario) -> bool {
    uses_default_model(s) && Dims::of(&s.model).is_some() && s.task.kind.trains()
}

/// Whether the search tries each way of sharding embedding tables (table-, row- and
/// column-wise), and each placement of the bottom MLP, where tables are split over GPUs: the
/// default model's recommendation families, which cost each ([`extended::dlrm`]).
pub fn searches_emb_sharding(s: &Scenario) -> bool {
    uses_default_model(s) && s.model.arch.family().is_dlrm()
}

/// Whether a search of `space` tries number formats for this scenario: LLM serving in the
/// default model, with formats to try ([`Space::formats`]).
pub fn searches_formats(s: &Scenario, space: &Space) -> bool {
    serves_in_default_model(s) && !(space.formats.weights.is_empty() && space.formats.kv.is_empty())
}

/// True for LLM serving in the default model: its plans run with number formats.
pub fn serves_in_default_model(s: &Scenario) -> bool {
    uses_default_model(s) && extended::serving::serves(s)
}

/// One evaluated plan.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Outcome {
    pub plan: Plan,
    /// The settings it ran with ([`Candidate::setup`]).
    pub setup: Setup,
    pub iteration_s: f64,
    pub throughput_samples_per_s: f64,
    pub global_batch: u64,
    pub exposed_share: f64,
    /// Weights per GPU (reference mode counts weights only), bytes.
    pub memory_bytes: f64,
    pub capacity_bytes: f64,
    /// LLM serving: time per output token, s.
    pub tpot_s: Option<f64>,
    /// LLM serving: time to first token, s.
    pub ttft_s: Option<f64>,
    /// Language models: tokens per second (samples/s x sequence length).
    pub tokens_per_s: Option<f64>,
    /// Model FLOPs utilisation ([`Report::mfu`]), 0..1.
    pub mfu: f64,
    /// LLM serving: the plan's time per output token, or to its first token, exceeds the
    /// search's limit.
    pub over_tpot: bool,
    pub over_ttft: bool,
}

impl Outcome {
    /// True when the plan is feasible: it fits in the GPU's memory (and meets the search's
    /// latency limits, if any).
    pub fn fits(&self) -> bool {
        self.memory_bytes <= self.capacity_bytes && self.meets_limit()
    }

    /// False when the plan misses one of the search's latency limits.
    pub fn meets_limit(&self) -> bool {
        !self.over_tpot && !self.over_ttft
    }

    fn of(s: &Scenario, c: &Candidate, r: &Report, space: &Space) -> Outcome {
        let tpot_s = r.serving.as_ref().map(|s| s.tpot_s);
        let ttft_s = r.serving.as_ref().map(|s| s.ttft_s);
        let over = |value: Option<f64>, limit: Option<f64>| matches!((value, limit), (Some(v), Some(l)) if v > l);
        Outcome {
            plan: c.plan.clone(),
            setup: c.setup.clone(),
            iteration_s: r.iteration_s,
            throughput_samples_per_s: r.throughput_samples_per_s,
            global_batch: r.global_batch,
            exposed_share: r.exposed_share(),
            memory_bytes: r.memory.total_bytes,
            capacity_bytes: r.memory.capacity_bytes,
            tpot_s,
            ttft_s,
            tokens_per_s: r.tokens_per_s(s),
            mfu: r.mfu(s),
            over_tpot: over(tpot_s, space.max_tpot_s),
            over_ttft: over(ttft_s, space.max_ttft_s),
        }
    }
}

/// Global batch of a plan in reference mode (every component agrees after validation; the
/// embeddings' is used).
pub fn global_batch(p: &Plan) -> u64 {
    p.local_emb_batch * p.emb.product_of(&[Strategy::Ddp])
}

/// Global batch of a scenario: in the default model, the transformer's local batch times its
/// data-parallel ranks (ddp, fsdp and ep levels); in reference mode, [`global_batch`].
pub fn scenario_global_batch(s: &Scenario) -> u64 {
    match (&s.task.plan.transformer, uses_default_model(s)) {
        (Some(t), true) => s.task.plan.local_transformer_batch.unwrap_or(1).saturating_mul(default_dp(t)),
        _ => global_batch(&s.task.plan),
    }
}

/// Data-parallel ranks of a default-model transformer spec: ddp x fsdp x ep.
fn default_dp(t: &Spec) -> u64 {
    t.product_of(&[Strategy::Ddp, Strategy::Fsdp, Strategy::Ep])
}

/// Powers of two from 1 to `max` that `keep` accepts.
fn powers(max: u64, keep: impl Fn(u64) -> bool) -> Vec<u64> {
    let mut v = Vec::new();
    let mut x = 1u64;
    while x <= max {
        if keep(x) {
            v.push(x);
        }
        x *= 2;
    }
    v
}

/// The default model's plans for a transformer: tensor parallelism within a node, context
/// parallelism for long sequences, expert parallelism for MoE, pipelines up to 64 stages, and
/// the rest data parallel: plain, fully sharded, or (without a pipeline) hybrid: sharded
/// within a node, replicated across nodes. In training, levels nest as Megatron ranks GPUs: tensor innermost, then context, expert,
/// data (sharded, then replicated), and pipeline outermost ([`refinements`] tries the best plans
/// in the other [`placements`]); in serving, the replicas go outermost (they never communicate),
/// so a pipeline's stages share a node where they fit.
fn default_plans(base: &Scenario, space: &Space, d: &Dims) -> Vec<Candidate> {
    let sys = &base.system;
    let (n, total) = (sys.devices_per_node(), sys.num_devices);
    let heads = d.heads as u64;
    let seq = d.seq as u64;
    let tps = powers(n.min(total), |t| heads.is_multiple_of(t));
    // An encoder-decoder's sequences are not split (context parallelism is not modelled for it).
    let long = seq >= 8192 && !d.is_encoder_decoder();
    let cps = powers(if long { 8 } else { 1 }, |c| seq.is_multiple_of(c));
    let eps = powers(if d.is_moe() { d.experts as u64 } else { 1 }, |e| (d.experts as u64).is_multiple_of(e));
    let pps = powers(d.layers.min(64), |_| true);
    // The settings every plan runs with, unless the training knobs are tried: the scenario's
    // (in a staged search's first pass, with those that cost no time), or, when a serving
    // search lists formats, the scenario's in each pair of them.
    let knobs = space.knobs && searches_settings(base);
    let first_pass = !space.knobs && space.staged && searches_settings(base);
    let own = &base.task.setup;
    let recomputes = settings::recompute_levels(own, d.is_moe());
    let fixed: Vec<Setup> = match space.formats.pairs(own).filter(|_| searches_formats(base, space)) {
        Some(pairs) => pairs
            .into_iter()
            .map(|(weight_format, kv_format)| Setup { weight_format, kv_format, ..own.clone() })
            .collect(),
        None => vec![own.clone()],
    };
    let mut out = Vec::new();
    // One scenario for every candidate: each sets the transformer's plan, batch and settings.
    let mut candidate = base.clone();
    for &pp in &pps {
        for &ep in &eps {
            for &cp in &cps {
                for &tp in &tps {
                    let model = tp * cp * ep * pp;
                    if model > total || !total.is_multiple_of(model) {
                        continue;
                    }
                    let dp = total / model;
                    // Data parallelism plain, fully sharded, or hybrid: sharded within a node and
                    // replicated across nodes (HSDP, as PyTorch runs it: without a pipeline),
                    // which gathers weights over NVLink only. Sharded weights only pay off in
                    // training (serving replicas keep whole copies).
                    let node_share = (n / (tp * cp * ep)).max(1);
                    let mut shards = vec![1];
                    if base.task.kind.trains() && dp > 1 {
                        shards.push(dp);
                        if pp == 1 && node_share > 1 && node_share < dp && dp.is_multiple_of(node_share) {
                            shards.push(node_share);
                        }
                    }
                    for &shard in &shards {
                        let degree = |s: Strategy| match s {
                            Strategy::Tp => tp,
                            Strategy::Cp => cp,
                            Strategy::Ep => ep,
                            Strategy::Fsdp => shard,
                            Strategy::Ddp => dp / shard,
                            Strategy::Pp => pp,
                            Strategy::Mp => 1,
                        };
                        // Training nests as Megatron-LM ranks GPUs; serving replicas never talk
                        // to each other, so they go outermost and a pipeline's stages share a
                        // node where they can.
                        let mut order = MEGATRON_ORDER;
                        if !base.task.kind.trains() {
                            order.swap(4, 5);
                        }
                        let mut levels: Vec<Level> =
                            order.iter().map(|&strategy| Level { strategy, degree: degree(strategy) }).collect();
                        levels.retain(|l| l.degree > 1);
                        if levels.is_empty() {
                            levels.push(Level { strategy: Strategy::Ddp, degree: 1 });
                        }
                        let Some(spec) = Spec::new(&levels) else { continue };
                        let ranks = dp * ep;
                        let locals: Vec<u64> = match &space.batches {
                            Batches::FixedGlobal(g) if g.is_multiple_of(ranks) => vec![g / ranks],
                            Batches::FixedGlobal(_) => vec![],
                            Batches::Local(b) => b.clone(),
                        };
                        for local in locals {
                            candidate.task.plan.transformer = Some(spec);
                            candidate.task.plan.local_transformer_batch = Some(local);
                            let shape = PlanShape::of(&spec, local, Some(d));
                            let setups = if knobs {
                                knob_settings(own, shape)
                            } else if first_pass {
                                fixed.iter().map(|s| staged::first_pass(s, shape)).collect()
                            } else {
                                fixed.clone()
                            };
                            // Distinct degrees, batches and settings make distinct plans: no
                            // duplicate check.
                            for setup in setups {
                                candidate.task.setup = setup;
                                if extended::rules::check(&candidate).is_empty()
                                    && !(knobs && lighter_recompute_fits(&candidate, &recomputes))
                                {
                                    let task = &candidate.task;
                                    out.push(Candidate { plan: task.plan.clone(), setup: task.setup.clone() });
                                }
                                if out.len() > MAX_PLANS {
                                    return out;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

/// True when the plan fits in HBM with a lighter recomputation of `levels` (lightest first,
/// [`settings::recompute_levels`]) and the same everything else: the search skips it, since it
/// would run the same work and more. (Full recomputation when a selective one or none fits;
/// selective of more modules when of fewer or none fits; selective when none fits.)
fn lighter_recompute_fits(candidate: &Scenario, levels: &[(Recompute, RecomputeModules)]) -> bool {
    let own = (candidate.task.setup.recompute, candidate.task.setup.recompute_modules);
    let Some(at) = levels.iter().position(|l| *l == own) else { return false };
    levels[..at].iter().any(|&(recompute, modules)| {
        let mut s = candidate.clone();
        s.task.setup.recompute = recompute;
        s.task.setup.recompute_modules = modules;
        trains_within_hbm(&s) == Some(true)
    })
}

/// Whether a default-model transformer's training fits in its GPUs' HBM, from its memory alone
/// (no timeline); `None` where the scenario is not one.
fn trains_within_hbm(s: &Scenario) -> Option<bool> {
    extended::training::TrainingCx::new(s).map(|cx| cx.memory().total_bytes <= s.system.smallest_mem_cap_bytes())
}

/// Batch-replicating factor of a spec: ddp and fsdp levels (ddp only for embeddings).
fn dup(spec: &Spec, emb: bool) -> u64 {
    if emb {
        spec.product_of(&[Strategy::Ddp])
    } else {
        spec.product_of(&[Strategy::Ddp, Strategy::Fsdp])
    }
}

/// Every spec MAD-Max accepts for a component on `total` GPUs with `per_node` per node.
fn specs(strategies: &[Strategy], emb: bool, per_node: u64, total: u64) -> Vec<Spec> {
    let mut out = Vec::new();
    for &s in strategies {
        out.extend(Spec::new(&[Level { strategy: s, degree: total }]));
    }
    let nodes = total / per_node.max(1);
    if per_node >= 2 && nodes >= 2 && per_node * nodes == total {
        for &s0 in strategies {
            for &s1 in strategies {
                if s0 == s1 || (s1 == Strategy::Fsdp && !emb) {
                    continue;
                }
                out.extend(Spec::new(&[
                    Level { strategy: s0, degree: per_node },
                    Level { strategy: s1, degree: nodes },
                ]));
            }
        }
    }
    out
}

const DENSE: [Strategy; 4] = [Strategy::Ddp, Strategy::Fsdp, Strategy::Tp, Strategy::Pp];
const EMB: [Strategy; 2] = [Strategy::Ddp, Strategy::Mp];

/// Every legal plan for the scenario's model on its cluster, in a stable order.
pub fn plans(base: &Scenario, space: &Space) -> Vec<Candidate> {
    if uses_default_model(base) {
        if let Some(d) = Dims::of(&base.model) {
            return default_plans(base, space, &d);
        }
    }
    let sys = &base.system;
    let (n, total) = (sys.devices_per_node(), sys.num_devices);
    let family = base.model.arch.family();
    let dense = specs(&DENSE, false, n, total);
    let emb = specs(&EMB, true, n, total);
    let none = [None];
    let with_mlp = family.has_mlp_plan();
    let with_tr = family.has_transformer_plan();
    // A CNN's plan is its network's, standing for the embeddings it does not have.
    let emb = if family == Family::Cnn { dense.clone() } else { emb };
    let mlp_opts: Vec<Option<&Spec>> = if with_mlp { dense.iter().map(Some).collect() } else { none.to_vec() };
    let tr_opts: Vec<Option<&Spec>> = if with_tr { dense.iter().map(Some).collect() } else { none.to_vec() };
    let mut out = Vec::new();
    // One scenario for every candidate: each sets the whole plan and the settings it varies.
    let mut candidate = base.clone();
    for m in &mlp_opts {
        for t in &tr_opts {
            for e in &emb {
                // The primary component sets the batch: the MLP for DLRMs, else the transformer.
                let primary = m.or(*t);
                let Some(primary) = primary else { continue };
                if family == Family::Cnn && Some(e) != *m {
                    continue;
                }
                let locals: Vec<u64> = match &space.batches {
                    Batches::FixedGlobal(g) => {
                        let d = dup(primary, false);
                        if d > 0 && g.is_multiple_of(d) {
                            vec![g / d]
                        } else {
                            vec![]
                        }
                    }
                    Batches::Local(b) => b.clone(),
                };
                for local in locals {
                    let g = local * dup(primary, false);
                    let per = |spec: &Spec, emb: bool| {
                        let d = dup(spec, emb);
                        (d > 0 && g.is_multiple_of(d) && g >= d).then(|| g / d)
                    };
                    let (Some(le), mb, tb) =
                        (per(e, family != Family::Cnn), m.map(|s| per(s, false)), t.map(|s| per(s, false)))
                    else {
                        continue;
                    };
                    if mb == Some(None) || tb == Some(None) {
                        continue;
                    }
                    let plan = Plan {
                        mlp: m.copied(),
                        emb: *e,
                        transformer: t.copied(),
                        local_mlp_batch: mb.flatten(),
                        local_emb_batch: le,
                        local_transformer_batch: tb.flatten(),
                    };
                    candidate.task.plan = plan;
                    if family == Family::Cnn {
                        // A CNN's own choices: when its gradients are reduced, and how, and
                        // the activations' layout.
                        for (overlap, collective, layout) in cnn_settings(base) {
                            candidate.task.setup.overlap_grad_reduce = overlap;
                            candidate.task.setup.collective = collective;
                            candidate.task.setup.conv_layout = layout;
                            if extended::rules::check(&candidate).is_empty() {
                                out.push(Candidate {
                                    plan: candidate.task.plan.clone(),
                                    setup: candidate.task.setup.clone(),
                                });
                            }
                        }
                        continue;
                    }
                    // Tables split over GPUs (an mp level) can be split by table, row or column,
                    // each way checked on its own (a split may not divide the tables), and the
                    // bottom MLP placed data-parallel or on one GPU of each table group.
                    let split = searches_emb_sharding(base) && e.product_of(&[Strategy::Mp]) > 1;
                    let (kinds, places) = if split {
                        (&EmbSharding::ALL[..], &BotMlpPlacement::ALL[..])
                    } else {
                        (
                            std::slice::from_ref(&base.task.setup.emb_sharding),
                            std::slice::from_ref(&base.task.setup.bot_mlp),
                        )
                    };
                    for (&emb_sharding, &bot_mlp) in kinds.iter().flat_map(|k| places.iter().map(move |p| (k, p))) {
                        candidate.task.setup.emb_sharding = emb_sharding;
                        candidate.task.setup.bot_mlp = bot_mlp;
                        // The default model runs the reference's plan space for DLRMs, minus what
                        // it does not model (pipelined MLPs).
                        let ok = if uses_default_model(base) {
                            extended::rules::check(&candidate).is_empty()
                        } else {
                            rules::check(&candidate).is_empty()
                        };
                        if ok {
                            out.push(Candidate {
                                plan: candidate.task.plan.clone(),
                                setup: candidate.task.setup.clone(),
                            });
                        }
                    }
                    if out.len() > MAX_PLANS {
                        return out;
                    }
                }
            }
        }
    }
    out
}

/// The settings a CNN's search tries on each batch: gradients reduced in buckets during the
/// backward pass or all after it, with each collective algorithm where GPUs span nodes (on one
/// node every algorithm is the same ring), the base's own first; and for channels-first
/// activations whose convolutions transpose them, channels last too.
fn cnn_settings(base: &Scenario) -> Vec<(bool, Algorithm, ConvLayout)> {
    let own = base.task.setup.collective;
    let mut algorithms = vec![own];
    if base.system.num_nodes > 1 {
        algorithms
            .extend([Algorithm::Hierarchical, Algorithm::Ring, Algorithm::Tree].into_iter().filter(|a| *a != own));
    }
    let layout = base.task.setup.conv_layout;
    let mut layouts = vec![layout];
    if layout == ConvLayout::Nchw && extended::cnn::tensor_cores(base) {
        layouts.push(ConvLayout::Nhwc);
    }
    let first = base.task.setup.overlap_grad_reduce;
    let gradients: Vec<(bool, Algorithm)> =
        [first, !first].into_iter().flat_map(|o| algorithms.iter().map(move |a| (o, *a))).collect();
    layouts.into_iter().flat_map(|l| gradients.iter().map(move |(o, a)| (*o, *a, l))).collect()
}

/// Evaluates the base scenario with another plan (which must come from [`plans`]), judged
/// against the space's latency limit.
pub fn evaluate_plan(base: &Scenario, c: &Candidate, space: &Space) -> Outcome {
    Outcome::of(base, c, &evaluate(&with(base, c)), space)
}

/// The base scenario running a candidate's plan and settings.
fn with(base: &Scenario, c: &Candidate) -> Scenario {
    let t = &base.task;
    // Field by field, so the base's own plan and settings are not copied only to be replaced.
    let task =
        Task { name: t.name.clone(), kind: t.kind.clone(), plan: c.plan.clone(), mode: t.mode, setup: c.setup.clone() };
    Scenario { model: base.model.clone(), system: base.system.clone(), task, _validated: base._validated }
}

/// Sorts outcomes best first: plans that fit by throughput, then those that do not. Serving
/// plans of the same throughput (at a request rate, every plan that keeps up completes the
/// rate) come by their time per output token, then to the first token.
pub fn rank(outcomes: &mut [Outcome]) {
    let latency = |o: &Outcome, of: fn(&Outcome) -> Option<f64>| of(o).unwrap_or(0.0);
    super::order::sort_by(outcomes, |a, b| {
        b.fits()
            .cmp(&a.fits())
            .then(b.throughput_samples_per_s.total_cmp(&a.throughput_samples_per_s))
            .then(latency(a, |o| o.tpot_s).total_cmp(&latency(b, |o| o.tpot_s)))
            .then(latency(a, |o| o.ttft_s).total_cmp(&latency(b, |o| o.ttft_s)))
    });
}

/// A finished search.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Every legal plan, best first.
    pub ranked: Vec<Outcome>,
    /// The scenario's own plan, judged as the others are (memory, the latency limit).
    pub baseline: Outcome,
    /// The best plan that fits over the baseline, in throughput ([`speedup`]); `None` when the
    /// baseline itself does not fit (a speed-up over a plan that cannot run means nothing) or
    /// when no plan fits.
    pub speedup: Option<f64>,
    /// Which plans were also tried with the training settings ([`Space::knobs`], which
    /// [`planned_fitted`] may turn off, staging the search).
    pub settings: SettingsSearched,
}

/// Most plans one search lists: past this, [`plans`] stops and [`planned`] refuses.
pub const MAX_PLANS: usize = 100_000;

/// Most work one search may take, in timeline ops summed over its plans (each plan's
/// [`crate::engine::estimated_ops`], at least [`OPS_PER_PLAN`]): about a second natively, at
/// some 20 ns an op, and a few in a browser.
pub const MAX_SEARCH_OPS: u64 = 50_000_000;

/// Most work a search that tries every training setting on every plan may take, in timeline
/// ops: about half a second natively. A bigger one runs staged ([`planned_fitted`],
/// [`settings_pass`]), whose settings pass keeps the whole search about this big too.
pub const STAGE_OPS: u64 = MAX_SEARCH_OPS / 2;

/// What evaluating a plan costs beyond its timeline (validation's copy of the scenario, the
/// report's sums), in ops.
pub const OPS_PER_PLAN: u64 = 200;

/// A search too big to run: how many plans it lists and about how many timeline ops they need.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TooBig {
    pub plans: usize,
    pub ops: u64,
}

impl std::fmt::Display for TooBig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plans = if self.plans > MAX_PLANS { format!("more than {MAX_PLANS}") } else { self.plans.to_string() };
        write!(
            f,
            "this search would evaluate {plans} plans, about {} million timeline ops in all, more than the {} million one search may take (about a second): give the task a smaller global batch or bigger micro-batches (fewer ops per plan), or search fewer local batches",
            self.ops.div_ceil(1_000_000),
            MAX_SEARCH_OPS / 1_000_000
        )
    }
}

/// What evaluating `plans` of `base` costs, in timeline ops.
pub fn cost(base: &Scenario, plans: &[Candidate]) -> u64 {
    // One scenario for every plan (a clone of the base for each cost more than the estimate).
    let mut s = base.clone();
    let ops = |c: &Candidate| {
        s.task.plan.clone_from(&c.plan);
        s.task.setup.clone_from(&c.setup);
        super::estimated_ops(&s).max(OPS_PER_PLAN)
    };
    plans.iter().map(ops).fold(0u64, u64::saturating_add)
}

/// Every plan of the space ([`plans`]) and what they cost ([`cost`]) when the search fits in
/// [`MAX_SEARCH_OPS`]; else why not.
pub fn planned(base: &Scenario, space: &Space) -> Result<(Vec<Candidate>, u64), TooBig> {
    let list = plans(base, space);
    let ops = cost(base, &list);
    if list.len() > MAX_PLANS || ops > MAX_SEARCH_OPS {
        return Err(TooBig { plans: list.len(), ops });
    }
    Ok((list, ops))
}

/// [`planned`] for the space a search runs: `space`, or `space` without the training settings
/// ([`Space::knobs`]) when trying them all would take more than [`STAGE_OPS`] (or more than
/// one search may) and the plans alone would not (a model with many plans, such as a large
/// mixture of experts, or large local batches on pipelines, many micro-batches each). Returns that
/// space with its plans and their cost; when neither fits, why the full search is too big.
pub fn planned_fitted(base: &Scenario, space: &Space) -> Result<(Space, Vec<Candidate>, u64), TooBig> {
    let fewer = || {
        let fewer = Space { knobs: false, staged: true, ..space.clone() };
        planned(base, &fewer).map(|(list, ops)| (fewer, list, ops))
    };
    match planned(base, space) {
        Ok((list, ops)) if !space.knobs || ops <= STAGE_OPS => Ok((space.clone(), list, ops)),
        Ok((list, ops)) => Ok(fewer().unwrap_or((space.clone(), list, ops))),
        Err(too_big) if space.knobs => fewer().map_err(|_| too_big),
        Err(too_big) => Err(too_big),
    }
}

/// A scenario whose own transformer plan breaks the default model's rules (tensor parallelism
/// that does not divide the heads, degrees that do not multiply to the GPUs, ...), with that
/// plan replaced by plain data parallelism over every GPU at the same global batch (its local
/// batch times its data-parallel degrees), so that a search can still start from it; and the
/// first of its `problems` (what validation said of `raw`). `None` when anything else is
/// wrong (or nothing), the plan is not a transformer's in the default model, or the global
/// batch does not split over the GPUs.
pub fn rescued(raw: &RawScenario, problems: &[FieldError]) -> Option<(Scenario, FieldError)> {
    let first = problems.first()?.clone();
    if !problems.iter().all(|e| e.field.starts_with("task.transformer_parallel")) {
        return None;
    }
    let task = raw.task.as_ref()?;
    let int = |v: &RawValue| match v {
        RawValue::Int(i) => u64::try_from(*i).ok(),
        _ => None,
    };
    let (Some(RawValue::List(names)), Some(RawValue::List(degrees))) =
        (&task.transformer_parallel, &task.transformer_parallel_degree)
    else {
        return None;
    };
    let mut replicas = 1u64;
    for (name, degree) in names.iter().zip(degrees) {
        if let RawValue::Str(n) = name {
            if matches!(n.as_ref(), "ddp" | "fsdp" | "ep") {
                replicas = replicas.checked_mul(int(degree)?)?;
            }
        }
    }
    let global = int(task.local_transformer_bs.as_ref()?)?.checked_mul(replicas)?;
    let gpus = int(raw.system.as_ref()?.num_devices.as_ref()?)?;
    if gpus == 0 || !global.is_multiple_of(gpus) {
        return None;
    }
    let mut plain = raw.clone();
    let t = plain.task.as_mut()?;
    t.transformer_parallel = Some(RawValue::List(vec![RawValue::Str("ddp".into())]));
    t.transformer_parallel_degree = Some(RawValue::List(vec![RawValue::Int(i128::from(gpus))]));
    t.local_transformer_bs = Some(RawValue::Int(i128::from(global / gpus)));
    let s = validate(&plain).ok()?;
    (uses_default_model(&s) && s.task.plan.transformer.is_some()).then_some((s, first))
}

/// Searches every plan of [`planned_fitted`] at once (the CLI; the page runs [`plans`] in
/// chunks), or says why the search is too big to run.
pub fn search(base: &Scenario, space: &Space) -> Result<Summary, TooBig> {
    let (space, list, spent_ops) = planned_fitted(base, space)?;
    let space = &space;
    let mut ranked: Vec<Outcome> = list.iter().map(|p| evaluate_plan(base, p, space)).collect();
    rank(&mut ranked);
    let (settings, settings_plans) = settings_pass(base, &ranked, space, spent_ops);
    ranked.extend(settings.iter().map(|p| evaluate_plan(base, p, space)));
    rank(&mut ranked);
    let refined: Vec<Outcome> =
        refinements(base, &ranked, space).iter().map(|p| evaluate_plan(base, p, space)).collect();
    if !refined.is_empty() {
        ranked.extend(refined);
        rank(&mut ranked);
    }
    Ok(Summary { settings: settings_searched(base, space, settings_plans), ..summarize(base, ranked, space) })
}

/// The summary of ranked outcomes against the base scenario's own plan, judged against the
/// space's latency limit as the others are.
pub fn summarize(base: &Scenario, ranked: Vec<Outcome>, space: &Space) -> Summary {
    let own = Candidate { plan: base.task.plan.clone(), setup: base.task.setup.clone() };
    let baseline = Outcome::of(base, &own, &evaluate(base), space);
    let speedup = speedup(&ranked, &baseline);
    Summary { ranked, baseline, speedup, settings: settings_searched(base, space, 0) }
}

/// How much faster the best plan that fits of `ranked` (best first) runs than `baseline`: at
/// least 1 (the baseline is one of the plans); `None` when the baseline does not fit or no
/// plan does.
pub fn speedup(ranked: &[Outcome], baseline: &Outcome) -> Option<f64> {
    let best = ranked.first().filter(|o| o.fits())?;
    (baseline.fits() && baseline.throughput_samples_per_s > 0.0)
        .then(|| (best.throughput_samples_per_s / baseline.throughput_samples_per_s).max(1.0))
}

#[cfg(test)]
mod tests {
    use super::describe::out_of_megatron_order;
    use super::settings::permutations;
    use super::*;
    use crate::engine::{validate, RawFile};

    /// Nodes of eight GPUs.
    const EIGHT: Placement = Placement::one_site(8);

    /// A golden case's scenario (compiled in: the engine does no I/O, even in its tests).
    fn scenario(case_json: &str) -> Scenario {
        let raw = serde_json::from_str::<RawFile>(case_json).expect("case").into_scenario().expect("case");
        validate(&raw).expect("valid")
    }

    #[test]
    fn a_cnn_is_searched_over_its_batch_per_gpu_data_parallel() {
        let raw: crate::engine::RawScenario =
            serde_json::from_str(include_str!("../../../tests/data/cnn/resnet50_a100_8.json")).expect("scenario");
        let s = validate(&raw).expect("valid");
        // The global batch fixed: the scenario's own plan, its gradients reduced during the
        // backward pass (its own setting, first) or after it; on one node no other algorithm.
        let own = plans(&s, &Space::fixed_global(&s));
        assert_eq!(own.len(), 2);
        assert!(own.iter().all(|c| c.plan == s.task.plan && c.setup.collective == s.task.setup.collective));
        assert_eq!(own.iter().map(|c| c.setup.overlap_grad_reduce).collect::<Vec<_>>(), [true, false]);
        // Local batches: one data-parallel plan each, its network spec standing for embeddings.
        let s4 = plans(&s, &Space::local(vec![64, 128, 256, 512]));
        let batches: Vec<Option<u64>> = s4.iter().step_by(2).map(|c| c.plan.local_mlp_batch).collect();
        assert_eq!(batches, [Some(64), Some(128), Some(256), Some(512)]);
        assert!(s4.iter().all(|c| c.plan.mlp == Some(c.plan.emb) && c.plan.transformer.is_none()));
        let summary = search(&s, &Space::fixed_global(&s)).expect("a small search");
        let words: Vec<String> = summary.ranked.iter().map(|o| describe::describe_outcome(&s, o)).collect();
        assert_eq!(
            words,
            [
                "network ddp 8, local batch 256, gradients reduced during the backward pass",
                "network ddp 8, local batch 256, gradients reduced after the backward pass"
            ]
        );
        // Across nodes each algorithm is tried too; reducing during the backward pass wins.
        let mut two: serde_json::Value =
            serde_json::from_str(include_str!("../../../tests/data/cnn/resnet50_a100_8.json")).expect("scenario");
        two["system"]["num_devices"] = 16.into();
        two["system"]["num_nodes"] = 2.into();
        two["system"]["ar_perc_intra"] = 0.5.into();
        two["task"]["mlp_parallel_degree"] = serde_json::json!([16]);
        let s2 = validate(&serde_json::from_value(two).expect("raw")).expect("valid");
        let tried = plans(&s2, &Space::fixed_global(&s2));
        assert_eq!(tried.len(), 2 * 3);
        let best = &search(&s2, &Space::fixed_global(&s2)).expect("search").ranked[0];
        assert!(best.setup.overlap_grad_reduce, "{}", describe::describe_outcome(&s2, best));
        // Channels-first activations on tensor cores: channels last is tried too, and wins.
        let mut first = s.clone();
        first.task.setup.conv_layout = ConvLayout::Nchw;
        let tried = plans(&first, &Space::fixed_global(&first));
        assert_eq!(
            tried.iter().map(|c| c.setup.conv_layout).collect::<Vec<_>>(),
            [ConvLayout::Nchw, ConvLayout::Nchw, ConvLayout::Nhwc, ConvLayout::Nhwc]
        );
        let best = &search(&first, &Space::fixed_global(&first)).expect("search").ranked[0];
        assert_eq!(
            describe::describe_outcome(&first, best),
            "network ddp 8, local batch 256, gradients reduced during the backward pass, channels last (NHWC)"
        );
        assert_eq!(crate::doc::plan_task_keys(&first, best)["conv_layout"], "nhwc");
    }

    #[test]
    fn enumerated_plans_are_legal_distinct_and_include_the_baseline() {
        let s =
            scenario(include_str!("../../../tests/data/reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json"));
        let ps = plans(&s, &Space::fixed_global(&s));
        assert!(ps.len() >= 20, "{} plans", ps.len());
        assert!(ps.iter().any(|c| c.plan == s.task.plan), "the shipped plan is among them");
        for (i, p) in ps.iter().enumerate() {
            assert!(!ps[..i].contains(p), "duplicate plan {p:?}");
            let c = with(&s, p);
            assert!(rules::check(&c).is_empty());
            assert_eq!(global_batch(&p.plan), 2048);
        }
    }

    #[test]
    fn the_search_beats_the_shipped_configs() {
        for (case, json) in [
            (
                "llm__llama2_70b__dc_A_2048__llm_train",
                include_str!("../../../tests/data/reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json"),
            ),
            (
                "llm__llama2_70b_8kctx__zionex_128__vit_train",
                include_str!("../../../tests/data/reference/cases/llm__llama2_70b_8kctx__zionex_128__vit_train.json"),
            ),
            (
                "dlrm__dlrm_a__zionex_128__dlrm_train",
                include_str!("../../../tests/data/reference/cases/dlrm__dlrm_a__zionex_128__dlrm_train.json"),
            ),
        ] {
            let s = scenario(json);
            let r = search(&s, &Space::fixed_global(&s)).expect("within budget");
            assert!(
                r.speedup.is_some_and(|x| x > 1.0),
                "{case}: best {:?} vs baseline {:?}",
                r.ranked.first(),
                r.baseline
            );
            assert!(r.ranked[0].fits());
        }
    }

    #[test]
    fn a_framework_that_broadcasts_its_updated_weights_is_not_asked_to_gather_them_in_the_forward_pass() {
        // InternLM's hybrid ZeRO returns the updated weights by broadcasts after the step
        // (zero1_broadcast): its ZeRO 1/2 plans are ranked with it, never with Megatron-core's
        // gathers during the forward pass, which the rules refuse alongside it.
        let mut s =
            scenario(include_str!("../../../tests/data/reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json"));
        s.task.mode = crate::engine::scenario::Mode::Default;
        s.task.setup.zero1_broadcast = true;
        let r = search(&s, &Space::fixed_global(&s)).expect("within budget");
        let zero12 = |o: &&Outcome| {
            (1..=2).contains(&o.setup.zero_stage)
                && o.plan.transformer.as_ref().is_some_and(|t| t.product_of(&[Strategy::Ddp]) > 1)
        };
        assert!(r.ranked.iter().filter(zero12).count() > 0);
        assert!(r.ranked.iter().all(|o| o.setup.zero1_broadcast));
        assert!(r.ranked.iter().filter(zero12).all(|o| !o.setup.gathers_updated_weights_in_forward()));
        let o = r.ranked.iter().find(zero12).expect("a ZeRO 1/2 plan");
        assert!(!describe_outcome(&s, o).contains("updated weights"));
        let both = Setup { overlap_param_gather: Some(true), ..o.setup.clone() };
        let mut applied = s.clone();
        (applied.task.plan, applied.task.setup) = (o.plan.clone(), both);
        let errs = crate::engine::extended::rules::check(&applied);
        assert!(errs.iter().any(|e| e.field == "task.zero1_broadcast"), "{errs:?}");
    }

    #[test]
    fn the_best_plans_are_refined_with_the_overlap_options() {
        let mut s =
            scenario(include_str!("../../../tests/data/reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json"));
        s.task.mode = crate::engine::scenario::Mode::Default;
        let space = Space::fixed_global(&s);
        let mut first: Vec<Outcome> = plans(&s, &space).iter().map(|c| evaluate_plan(&s, c, &space)).collect();
        rank(&mut first);
        let more = refinements(&s, &first, &space);
        // Only the best plans that fit, at most two settings of each parallel plan, each with
        // its other overlap combinations (up to seven) or another collective algorithm (two),
        // each of those and its own settings with ZeRO-1 within each node where its data
        // parallelism spans nodes, and each other placement of its levels with each of those.
        let refined = super::refined(&first);
        assert_eq!(refined.len(), REFINED_PLANS);
        assert!(refined.iter().all(|o| o.fits()));
        for o in &refined {
            assert!(refined.iter().filter(|r| r.plan == o.plan).count() <= REFINED_PER_PLAN);
        }
        // Best first, skipping only settings of plans already taken twice.
        let fitting: Vec<&Outcome> = first.iter().filter(|o| o.fits()).collect();
        let last = fitting.iter().position(|o| std::ptr::eq(*o, refined[REFINED_PLANS - 1])).expect("ranked");
        let skipped: Vec<&&Outcome> =
            fitting[..last].iter().filter(|o| !refined.iter().any(|r| std::ptr::eq(*r, **o))).collect();
        assert!(skipped.iter().all(|o| refined.iter().filter(|r| r.plan == o.plan).count() == REFINED_PER_PLAN));
        let mut plans: Vec<&Plan> = Vec::new();
        for o in &refined {
            if !plans.contains(&&o.plan) {
                plans.push(&o.plan);
            }
        }
        assert!(plans.len() >= REFINED_PLANS / REFINED_PER_PLAN, "{} parallel plans", plans.len());
        let one_knob_apart = |o: &Outcome, c: &Candidate| {
            let c = &Candidate {
                setup: Setup { zero_shard_ranks: o.setup.zero_shard_ranks, ..c.setup.clone() },
                plan: c.plan.clone(),
            };
            let overlap = Setup {
                overlap_grad_reduce: o.setup.overlap_grad_reduce,
                overlap_tp_comm: o.setup.overlap_tp_comm,
                overlap_param_gather: o.setup.overlap_param_gather,
                ..c.setup.clone()
            } == o.setup;
            overlap || Setup { collective: o.setup.collective, ..c.setup.clone() } == o.setup
        };
        let placed = |o: &Outcome, c: &Candidate| {
            let (Some(t), Some(u)) = (&o.plan.transformer, &c.plan.transformer) else { return false };
            Plan { transformer: o.plan.transformer, ..c.plan.clone() } == o.plan
                && placements(t, Placement::of(&s.system)).contains(u)
        };
        assert!(more.iter().all(|c| refined
            .iter()
            .any(|o| one_knob_apart(o, c) && ((o.plan == c.plan && o.setup != c.setup) || placed(o, c)))));
        let moved = more.iter().filter(|c| refined.iter().any(|o| placed(o, c))).count();
        assert!(moved > 0 && more.len() - moved <= 19 * refined.len(), "{moved} of {}", more.len());
        // ZeRO-1 within a node: only on ZeRO-1 plans whose data-parallel ranks span nodes, the
        // group the ranks one node holds.
        let grouped: Vec<&Candidate> = more.iter().filter(|c| c.setup.zero_shard_ranks.is_some()).collect();
        assert!(!grouped.is_empty());
        for c in &grouped {
            let t = c.plan.transformer.as_ref().expect("a transformer plan");
            let g = crate::engine::extended::layout::Layout::of(t, Placement::of(&s.system)).weight_dp;
            assert!(c.setup.zero_stage == 1 && !g.within_node() && c.setup.zero_shard_ranks == Some(g.per_node));
        }
        for algorithm in [Algorithm::Ring, Algorithm::Tree] {
            assert!(more.iter().any(|c| c.setup.collective == algorithm), "{algorithm:?} is tried");
        }
        assert!(more.iter().all(|c| c.setup.collective != Algorithm::InNetwork), "it needs switches that reduce");
        // The search ranks them with the rest: never worse than without them.
        let r = search(&s, &space).expect("within budget");
        assert_eq!(r.ranked.len(), first.len() + more.len());
        assert!(r.ranked[0].throughput_samples_per_s >= first[0].throughput_samples_per_s);
        // Paper mode and fixed settings: nothing to refine.
        assert!(refinements(&s, &first, &Space { knobs: false, ..space.clone() }).is_empty());
        let o = r.ranked.iter().find(|o| o.setup.overlap_tp_comm).expect("a plan that overlaps");
        assert!(describe_outcome(&s, o).contains("tensor-parallel communication overlapped with GEMMs"));
        assert_eq!(crate::doc::plan_task_keys(&s, o)["overlap_tp_comm"], true);
        // ZeRO 1/2's updated weights gathered during the next forward pass say so, and applying
        // the plan sets it; the refinement tries them gathered after the step as well.
        let zero12 = |o: &&Outcome| {
            (1..=2).contains(&o.setup.zero_stage)
                && o.plan.transformer.as_ref().is_some_and(|t| t.product_of(&[Strategy::Ddp]) > 1)
        };
        let o = r.ranked.iter().filter(zero12).find(|o| o.setup.overlap_param_gather == Some(true));
        let o = o.expect("ZeRO 1/2 gathering during the forward pass");
        assert!(describe_outcome(&s, o).contains(", updated weights gathered during the next forward pass"));
        assert_eq!(crate::doc::plan_task_keys(&s, o)["overlap_param_gather"], true);
        let after = r.ranked.iter().filter(zero12).find(|o| o.setup.overlap_param_gather == Some(false));
        assert!(!describe_outcome(&s, after.expect("gathering after the step")).contains("updated weights"));
        // FP8 gathers (in FP8 training) say so, and applying the plan sets them.
        let in_fp8 = Outcome { setup: Setup { fp8: true, fp8_param_gather: true, ..o.setup.clone() }, ..o.clone() };
        assert!(describe_outcome(&s, &in_fp8).contains(", weights gathered in FP8"));
        assert_eq!(crate::doc::plan_task_keys(&s, &in_fp8)["fp8_param_gather"], true);
        assert!(!describe_outcome(&s, &Outcome { setup: Setup { fp8: false, ..in_fp8.setup.clone() }, ..o.clone() })
            .contains("FP8"));
        // ZeRO-3 prefetches its layers' weights unless told not to, and then says so.
        let fsdp = |o: &&Outcome| o.plan.transformer.as_ref().is_some_and(|t| t.product_of(&[Strategy::Fsdp]) > 1);
        let sharded = r.ranked.iter().find(fsdp).expect("a plan on an fsdp level");
        assert!(!describe_outcome(&s, sharded).contains("prefetch"));
        let unfetched = Setup { overlap_param_gather: Some(false), ..sharded.setup.clone() };
        let unfetched = Outcome { setup: unfetched, ..sharded.clone() };
        assert!(describe_outcome(&s, &unfetched).contains(", weights gathered without prefetch"));
        // A placement Megatron-LM would not choose says so, and applying it keeps its order.
        let o =
            r.ranked.iter().find(|o| o.plan.transformer.as_ref().is_some_and(|t| out_of_megatron_order(t).is_some()));
        let o = o.expect("a plan placed otherwise than Megatron-LM's order");
        let (inner, outer) = o.plan.transformer.as_ref().and_then(out_of_megatron_order).expect("out of order");
        assert!(describe_outcome(&s, o)
            .ends_with(&format!(", {inner} nested inside {outer} (Megatron-LM nests {outer} inside {inner})")));
        let keys = crate::doc::plan_task_keys(&s, o);
        let order: Vec<&str> = o
            .plan
            .transformer
            .as_ref()
            .map_or(vec![], |t| t.levels().iter().map(|l| l.strategy.config_name()).collect());
        assert_eq!(keys["transformer_parallel"], serde_json::json!(order));
        assert_eq!(keys["collective"], o.setup.collective.config_name());
        // ZeRO-1 within each node says so, and applying it sets it.
        let o = r.ranked.iter().find(|o| o.setup.zero_shard_ranks.is_some()).expect("a plan with ZeRO-1 per node");
        let n = o.setup.zero_shard_ranks.unwrap_or_default();
        assert!(describe_outcome(&s, o).contains(&format!(", ZeRO-1 within groups of {n} data-parallel ranks")));
        assert_eq!(crate::doc::plan_task_keys(&s, o)["zero_shard_ranks"], n);
        // Another collective algorithm says which, and applying it sets it.
        let tree = r.ranked.iter().find(|o| o.setup.collective == Algorithm::Tree).expect("a plan with trees");
        assert!(describe_outcome(&s, tree).contains(", tree all-reduces across nodes"));
        assert_eq!(crate::doc::plan_task_keys(&s, tree)["collective"], "tree");
    }

    fn levels(list: &[(Strategy, u64)]) -> Spec {
        let l: Vec<Level> = list.iter().map(|&(strategy, degree)| Level { strategy, degree }).collect();
        Spec::new(&l).expect("few levels")
    }

    #[test]
    fn serving_plans_that_all_keep_up_with_a_request_rate_rank_by_their_latency() {
        // LLaMA 7B served in flight on 8 GPUs at 2 requests/s: every plan that fits completes
        // the rate, so throughput ties; the faster token (then the sooner first token) ranks
        // first, and the scenario's own plan is judged the same way.
        let mut s = scenario(include_str!(
            "../../../tests/data/reference/cases/llm__llama_7b__zionex_8__llm_inf_tp_8x8_bs1.json"
        ));
        s.task.mode = crate::engine::scenario::Mode::Default;
        s.task.setup.batching = crate::engine::scenario::Batching::InFlight;
        s.task.setup.request_rate = Some(2.0);
        let summary = search(&s, &Space::fixed_global(&s)).expect("a small search");
        let fit: Vec<&Outcome> = summary.ranked.iter().filter(|o| o.fits()).collect();
        assert!(fit.len() > 2, "{}", fit.len());
        let rate = fit[0].throughput_samples_per_s;
        let tied: Vec<&&Outcome> = fit.iter().filter(|o| o.throughput_samples_per_s == rate).collect();
        assert!(tied.len() > 2 && (rate - 2.0).abs() < 1e-9, "{} at {rate}", tied.len());
        let key = |o: &Outcome| (o.tpot_s.unwrap_or(f64::NAN), o.ttft_s.unwrap_or(f64::NAN));
        assert!(
            tied.windows(2).all(|w| key(w[0]) <= key(w[1])),
            "{:?}",
            tied.iter().map(|o| key(o)).collect::<Vec<_>>()
        );
        // Nothing is faster than the best at the same rate: the speed-up says so.
        assert!(summary.speedup.is_some_and(|x| x >= 1.0));
    }

    #[test]
    fn serving_replicas_go_outermost_so_pipeline_stages_share_a_node() {
        use crate::engine::extended::layout::Layout;
        let mut s = scenario(include_str!(
            "../../../tests/data/reference/cases/llm__llama_65b__cloud_A_h100.80_512__llm_inf_fsdp_512x8_bs1.json"
        ));
        s.task.mode = crate::engine::scenario::Mode::Default;
        let per_node = s.system.devices_per_node();
        let piped: Vec<Spec> = plans(&s, &Space::fixed_global(&s))
            .into_iter()
            .filter_map(|c| c.plan.transformer)
            .filter(|t| t.product_of(&[Strategy::Pp]) > 1 && t.product_of(&[Strategy::Ddp]) > 1)
            .collect();
        assert!(!piped.is_empty());
        for t in &piped {
            let last = t.levels().last().map(|l| l.strategy);
            assert_eq!(last, Some(Strategy::Ddp), "{t}: replicas outermost");
            let fits_a_node = t.product_of(&[Strategy::Tp, Strategy::Pp]) <= per_node;
            assert!(
                !fits_a_node || Layout::of(t, Placement::of(&s.system)).pp.within_node(),
                "{t}: the stages share a node"
            );
        }
    }

    #[test]
    fn placements_keep_tensor_parallelism_innermost_and_differ_in_what_shares_a_node() {
        use crate::engine::extended::layout::Layout;
        use Strategy::{Ddp, Pp, Tp};
        // tp 4 x ddp 16 x pp 2 on 8-GPU nodes: Megatron-LM's order puts data-parallel pairs in
        // a node; the one other placement puts the two pipeline stages there instead.
        let megatron = levels(&[(Tp, 4), (Ddp, 16), (Pp, 2)]);
        let other = placements(&megatron, EIGHT);
        assert_eq!(other, vec![levels(&[(Tp, 4), (Pp, 2), (Ddp, 16)])]);
        let (a, b) = (Layout::of(&megatron, EIGHT), Layout::of(&other[0], EIGHT));
        assert!(!a.pp.within_node() && b.pp.within_node() && a.dp.per_node == 2 && b.dp.per_node == 1);
        // When tensor parallelism fills the node, every order places the rest the same way.
        assert!(placements(&levels(&[(Tp, 8), (Ddp, 16), (Pp, 2)]), EIGHT).is_empty());
        // Tensor parallelism stays innermost even where the plan lists it elsewhere; every
        // placement is a distinct layout, and none is the plan's own.
        let many = placements(&levels(&[(Ddp, 4), (Tp, 2), (Strategy::Cp, 2), (Pp, 4)]), EIGHT);
        assert!(!many.is_empty() && many.iter().all(|p| p.levels()[0] == Level { strategy: Tp, degree: 2 }));
        let own = Layout::of(&levels(&[(Ddp, 4), (Tp, 2), (Strategy::Cp, 2), (Pp, 4)]), EIGHT);
        let layouts: Vec<Layout> = many.iter().map(|p| Layout::of(p, EIGHT)).collect();
        // On one site tp 8 x pp 2 x ddp 4 places its pipeline and its replicas alike (each a
        // node apart); on two sites of four nodes, one of them crosses the wide-area link:
        // the other order is tried.
        let piped = levels(&[(Tp, 8), (Pp, 2), (Ddp, 4)]);
        assert!(placements(&piped, EIGHT).is_empty());
        let sites = Placement { per_node: 8, per_site: 32 };
        assert_eq!(placements(&piped, sites), vec![levels(&[(Tp, 8), (Ddp, 4), (Pp, 2)])]);
        let (a, b) = (Layout::of(&piped, sites), Layout::of(&levels(&[(Tp, 8), (Ddp, 4), (Pp, 2)]), sites));
        assert!(a.dp.sites() == 2 && a.pp.sites() == 1 && b.dp.sites() == 1 && b.pp.sites() == 2);
        assert!(layouts.iter().enumerate().all(|(i, l)| *l != own && !layouts[..i].contains(l)));
        assert_eq!(permutations(3).len(), 6);
        assert_eq!(permutations(0), vec![Vec::<usize>::new()]);
    }

    #[test]
    fn plans_that_do_not_fit_are_kept_and_marked() {
        let s = scenario(include_str!("../../../tests/data/reference/cases/dlrm__dlrm_a__zionex_128__dlrm_train.json"));
        let r = search(&s, &Space::fixed_global(&s)).expect("within budget");
        let misfits = r.ranked.iter().filter(|o| !o.fits()).count();
        assert!(misfits > 0, "replicated 1.6 TB tables do not fit");
        // Best first: every plan that fits comes before every plan that does not.
        let first_misfit = r.ranked.iter().position(|o| !o.fits()).expect("a misfit");
        assert!(r.ranked[first_misfit..].iter().all(|o| !o.fits()));
    }

    #[test]
    fn free_batches_and_co_design_what_ifs() {
        let s = scenario(include_str!(
            "../../../tests/data/reference/cases/llm__llama_7b__zionex_128__llm_pre_ddp_tp_128x8_bs1.json"
        ));
        let free = Space::local(vec![1, 2, 4]);
        assert!(plans(&s, &free).len() > plans(&s, &Space::fixed_global(&s)).len());
        let space = Space::fixed_global(&s);
        let best =
            |s: &Scenario| search(s, &space).ok().and_then(|r| r.ranked.into_iter().next().filter(Outcome::fits));
        let now = best(&s).expect("a plan fits").throughput_samples_per_s;
        let faster = scaled(&s, Resource::Compute, 2.0).and_then(|x| best(&x)).expect("fits");
        assert!(faster.throughput_samples_per_s >= now);
        let bigger = scaled(&s, Resource::ClusterSize, 2.0).expect("a cluster");
        assert_eq!(bigger.system.num_devices, 256);
        assert!(scaled(&s, Resource::ClusterSize, 0.01).is_none());
    }

    #[test]
    fn training_plans_include_hybrid_sharding_within_a_node() {
        let mut s =
            scenario(include_str!("../../../tests/data/reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json"));
        s.task.mode = crate::engine::scenario::Mode::Default;
        let n = s.system.devices_per_node();
        let degree = |spec: &Spec, st: Strategy| spec.product_of(&[st]);
        let specs: Vec<Spec> = plans(&s, &Space::fixed_global(&s)).iter().filter_map(|c| c.plan.transformer).collect();
        let hybrid: Vec<&Spec> =
            specs.iter().filter(|t| degree(t, Strategy::Fsdp) > 1 && degree(t, Strategy::Ddp) > 1).collect();
        assert!(!hybrid.is_empty(), "no hybrid plan among {}", specs.len());
        for t in &hybrid {
            // The shard group fills the node next to tensor parallelism; replicas span nodes;
            // no pipeline (as PyTorch runs HSDP).
            assert_eq!(degree(t, Strategy::Tp) * degree(t, Strategy::Cp) * degree(t, Strategy::Fsdp), n, "{t:?}");
            assert_eq!(degree(t, Strategy::Pp), 1, "{t:?}");
        }
        // Full sharding and plain data parallelism stay in the search.
        assert!(specs.iter().any(|t| degree(t, Strategy::Fsdp) > 1 && degree(t, Strategy::Ddp) == 1));
        assert!(specs.iter().any(|t| degree(t, Strategy::Fsdp) == 1 && degree(t, Strategy::Ddp) > 1));
        // Serving keeps whole copies: no sharding at all.
        let mut serve = s.clone();
        serve.task.kind = crate::engine::scenario::TaskKind::Inference;
        assert!(plans(&serve, &Space::fixed_global(&serve))
            .iter()
            .filter_map(|c| c.plan.transformer)
            .all(|t| degree(&t, Strategy::Fsdp) == 1));
    }

    #[test]
    fn recommendation_plans_try_each_way_of_sharding_tables() {
        let mut s = scenario(include_str!(
            "../../../tests/data/reference/cases/dlrm__dlrm_a__cloud_A_h100.80_64__dlrm_pre_fsdp_ddp_mp_64x8.json"
        ));
        s.task.mode = crate::engine::scenario::Mode::Default;
        let space = Space::fixed_global(&s);
        let all = plans(&s, &space);
        let split = |c: &&Candidate| c.plan.emb.product_of(&[Strategy::Mp]) > 1;
        for kind in EmbSharding::ALL {
            for place in BotMlpPlacement::ALL {
                let tried = |c: &&Candidate| c.setup.emb_sharding == kind && c.setup.bot_mlp == place;
                assert!(all.iter().filter(split).any(|c| tried(&c)), "no {kind:?} plan with {place:?}");
            }
        }
        // Replicated tables have nothing to shard, nor a group to place the bottom MLP in: one
        // plan each.
        let replicated: Vec<&Candidate> = all.iter().filter(|c| !split(c)).collect();
        assert!(replicated
            .iter()
            .all(|c| c.setup.emb_sharding == s.task.setup.emb_sharding && c.setup.bot_mlp == s.task.setup.bot_mlp));
        // The plan says its sharding and placement, and applying it sets them.
        let r = search(&s, &space).expect("within budget");
        let find = |kind: EmbSharding, place: BotMlpPlacement| {
            r.ranked.iter().find(|o| {
                o.plan.emb.product_of(&[Strategy::Mp]) > 1 && o.setup.emb_sharding == kind && o.setup.bot_mlp == place
            })
        };
        let o = find(EmbSharding::Row, BotMlpPlacement::DataParallel).expect("a row-wise plan");
        assert!(describe_outcome(&s, o).ends_with(", row-wise sharding"), "{}", describe_outcome(&s, o));
        assert_eq!(crate::doc::plan_task_keys(&s, o)["emb_sharding"], "row");
        assert_eq!(crate::doc::plan_task_keys(&s, o)["bot_mlp"], "data_parallel");
        let o = find(EmbSharding::Table, BotMlpPlacement::OneGpu).expect("a plan with the bottom MLP on one GPU");
        let said = describe_outcome(&s, o);
        assert!(said.ends_with(", table-wise sharding, bottom MLP on one GPU"), "{said}");
        assert_eq!(crate::doc::plan_task_keys(&s, o)["bot_mlp"], "one_gpu");
        // MAD-Max paper mode has one way (its mp): nothing more is searched.
        let mut paper = s.clone();
        paper.task.mode = crate::engine::scenario::Mode::Reference;
        assert!(!searches_emb_sharding(&paper));
    }

    #[test]
    fn a_search_too_big_to_run_says_so_before_it_starts() {
        let mut s = scenario(include_str!(
            "../../../tests/data/reference/cases/llm__llama_7b__zionex_128__llm_pre_ddp_tp_128x8_bs1.json"
        ));
        s.task.mode = crate::engine::scenario::Mode::Default;
        assert!(planned(&s, &Space::fixed_global(&s)).is_ok(), "the golden case searches");
        // Thousands of micro-batches of one sequence per GPU, at 64 local batches: each plan a
        // timeline of hundreds of thousands of ops.
        s.task.setup.micro_batch = Some(1);
        let space = Space::local((2000..2064).collect());
        let Err(e) = planned(&s, &space) else { panic!("a search of {} plans ran", plans(&s, &space).len()) };
        assert!(e.ops > MAX_SEARCH_OPS && e.plans > 0, "{e:?}");
        assert_eq!(e.ops, cost(&s, &plans(&s, &space)));
        assert!(e.to_string().contains("more than the 50 million"), "{e}");
        assert!(search(&s, &space).is_err());
        // Thousands of local batches: the list stops past MAX_PLANS instead of growing without
        // bound, and the search is refused.
        let mut big = s.clone();
        big.task.setup.micro_batch = None;
        let many = Space::local((1..=100_000).collect());
        assert!(plans(&big, &many).len() <= MAX_PLANS + 1);
        assert!(matches!(planned(&big, &many), Err(TooBig { plans, .. }) if plans > MAX_PLANS));
    }

    #[test]
    fn no_speed_up_is_quoted_over_a_plan_that_cannot_run() {
        let mut s =
            scenario(include_str!("../../../tests/data/reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json"));
        s.task.mode = crate::engine::scenario::Mode::Default;
        let r = search(&s, &Space::fixed_global(&s)).expect("within budget");
        // FSDP over 2,048 A100 40GB without recomputation needs more than 40 GB per GPU.
        assert!(!r.baseline.fits() && r.ranked[0].fits());
        assert_eq!(r.speedup, None);
        // The same outcome judged as fitting gets its speed-up, at least 1.
        let mut fitting = r.baseline.clone();
        fitting.memory_bytes = fitting.capacity_bytes;
        let x = speedup(&r.ranked, &fitting).expect("both fit");
        assert!((x - (r.ranked[0].throughput_samples_per_s / fitting.throughput_samples_per_s).max(1.0)).abs() < 1e-12);
        // Nothing fits: nothing to quote.
        let mut none = r.ranked.clone();
        none.iter_mut().for_each(|o| o.memory_bytes = o.capacity_bytes * 2.0);
        assert_eq!(speedup(&none, &fitting), None);
    }

    #[test]
    fn every_ranked_plan_has_an_mfu_in_both_modes() {
        // LLaMA2-70B on 2,048 A100s: MAD-Max paper mode counts model FLOPs as the forward per
        // sample x 3 (no attention s^2 terms), the default model its own count.
        let paper =
            scenario(include_str!("../../../tests/data/reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json"));
        let mut default = paper.clone();
        default.task.mode = crate::engine::scenario::Mode::Default;
        for s in [paper, default] {
            let r = search(&s, &Space::fixed_global(&s)).expect("within budget");
            assert!(r.ranked.iter().all(|o| o.mfu > 0.0 && o.mfu < 1.0), "{:?}", s.task.mode);
            // The figure is the report's.
            let own = evaluate(&s);
            assert_eq!(r.baseline.mfu, own.mfu(&s));
        }
    }

    #[test]
    fn a_staged_first_pass_runs_each_plan_with_the_settings_that_cost_no_time() {
        // Plain data parallelism: ZeRO-1 (the same bytes reduced) and the gradients reduced
        // during the backward pass; tensor parallelism: sequence parallelism and its
        // collectives overlapped with the GEMMs. A stage the task already sets is kept.
        let base = Setup::default();
        let shape =
            |tp, replicas| PlanShape { local: 32, stages: 4, tp, cp: 1, replicas, sharded: 1, layers: 16, moe: false };
        let both = staged::first_pass(&base, shape(8, 16));
        assert_eq!((both.zero_stage, both.sequence_parallel), (1, true));
        assert!(both.overlap_grad_reduce && both.overlap_tp_comm);
        // ZeRO-1 gathers its updated weights layer by layer in the next forward pass.
        assert_eq!(both.overlap_param_gather, Some(true));
        assert_eq!(
            Setup {
                zero_stage: 0,
                sequence_parallel: false,
                micro_batch: None,
                overlap_param_gather: None,
                ..both.clone()
            },
            overlapped_only(&base)
        );
        // FP8 training gathers the weights in FP8 wherever a ZeRO stage gathers them: ZeRO-1
        // over replicas, ZeRO-3 on an fsdp level (whose prefetch is on by default), not
        // without data parallelism.
        let fp8 = Setup { fp8: true, ..base.clone() };
        assert!(staged::first_pass(&fp8, shape(8, 16)).fp8_param_gather);
        let fsdp = staged::first_pass(&fp8, PlanShape { sharded: 16, ..shape(8, 1) });
        assert!(fsdp.fp8_param_gather && fsdp.overlap_param_gather.is_none());
        assert!(!staged::first_pass(&fp8, shape(8, 1)).fp8_param_gather);
        assert!(!staged::first_pass(&base, shape(8, 16)).fp8_param_gather, "FP8 weights only in FP8 training");
        let alone = staged::first_pass(&base, shape(1, 1));
        assert_eq!(alone, Setup { micro_batch: Some(2), ..base.clone() }, "nothing to shard, split or overlap");
        let two = staged::first_pass(&Setup { zero_stage: 2, ..base.clone() }, shape(1, 16));
        assert_eq!(two.zero_stage, 2);
        // A pipeline runs the largest micro-batch that leaves 4 per stage (32 samples on 4
        // stages: 2, for 16 micro-batches), or 1 where there are fewer samples; one set by the
        // task is kept, and a plan without a pipeline keeps its whole local batch (unset).
        assert_eq!(both.micro_batch, Some(2));
        let pipeline = |local, stages| PlanShape { local, stages, ..shape(1, 1) };
        assert_eq!(staged::first_pass(&base, pipeline(1024, 2)).micro_batch, Some(128));
        assert_eq!(staged::first_pass(&base, pipeline(8, 4)).micro_batch, Some(1));
        assert_eq!(staged::first_pass(&base, pipeline(32, 1)).micro_batch, None);
        let own = Setup { micro_batch: Some(8), ..base.clone() };
        assert_eq!(staged::first_pass(&own, pipeline(32, 4)).micro_batch, Some(8));
        // Each is one of the settings a full search tries on that plan.
        assert!(knob_settings(&base, shape(8, 16))
            .iter()
            .any(|k| Setup { micro_batch: None, ..k.clone() } == Setup { micro_batch: None, ..both.clone() }));
    }

    /// `base` with both overlap options on and nothing else changed.
    fn overlapped_only(base: &Setup) -> Setup {
        Setup { overlap_grad_reduce: true, overlap_tp_comm: true, ..base.clone() }
    }

    #[test]
    fn the_settings_pass_tries_only_settings_that_fit_on_plans_some_setting_fits() {
        // Llama 3 70B on 256 A100 40GB, staged: every candidate of the settings pass fits in
        // HBM (misfits are counted without a timeline and left out), and it reaches plans that
        // did not fit in the first pass.
        let raw: crate::engine::RawScenario =
            serde_json::from_str(include_str!("../../../tests/data/explore/staged/llama3_70b_a100_40g_256.json"))
                .expect("scenario");
        let s = validate(&raw).expect("valid");
        let space = Space::fixed_global(&s);
        let (staged, first, spent) = planned_fitted(&s, &space).expect("within budget");
        assert!(staged.staged);
        let mut ranked: Vec<Outcome> = first.iter().map(|c| evaluate_plan(&s, c, &staged)).collect();
        rank(&mut ranked);
        let (more, plans) = settings_pass(&s, &ranked, &staged, spent);
        assert!(plans > 0 && !more.is_empty());
        assert!(more.iter().all(|c| trains_within_hbm(&with(&s, c)) == Some(true)));
        let misfit_plans = |o: &&Outcome| !o.fits();
        assert!(ranked.iter().filter(misfit_plans).any(|o| more.iter().any(|c| c.plan == o.plan)));
        // The first pass sets a pipeline's micro-batch and leaves anything else's unset (its
        // whole local batch). Unset, a pipeline runs one sample at a time; the words say which.
        let stages = |o: &&Outcome| o.plan.transformer.as_ref().map_or(1, |t| t.product_of(&[Strategy::Pp]));
        let piped = ranked.iter().find(|o| stages(o) > 1).expect("a pipeline");
        assert!(piped.setup.micro_batch.is_some());
        let unset = Outcome { setup: Setup { micro_batch: None, ..piped.setup.clone() }, ..piped.clone() };
        assert!(describe_outcome(&s, &unset).contains(", micro-batch 1,"), "{}", describe_outcome(&s, &unset));
        let whole = ranked.iter().find(|o| stages(o) == 1 && o.setup.micro_batch.is_none()).expect("no pipeline");
        assert!(describe_outcome(&s, whole).contains(", micro-batch: the local batch,"));
    }

    #[test]
    fn training_knobs_are_tried_cheapest_first_and_only_help() {
        let base = Setup::default();
        // 32 sequences per GPU through 8 stages of 2 layers: micro-batches of 4, 2 and 1 (at
        // least one per stage), each with no recomputation, selective of the core attention,
        // selective of it and the norms, and full, each plain 1F1B and interleaved, in that
        // order.
        let shape =
            |local, stages| PlanShape { local, stages, tp: 1, cp: 1, replicas: 1, sharded: 1, layers: 16, moe: false };
        let k = knob_settings(&base, shape(32, 8));
        let got: Vec<(Option<u64>, Recompute, String, u64)> = k
            .iter()
            .map(|s| (s.micro_batch, s.recompute, s.recompute_modules.config_text(), s.virtual_stages))
            .collect();
        let mut want = Vec::new();
        for (r, modules) in [
            (Recompute::None, "core_attn"),
            (Recompute::Selective, "core_attn"),
            (Recompute::Selective, "core_attn, layernorm"),
            (Recompute::Full, "core_attn"),
        ] {
            for m in [4, 2, 1] {
                for v in [1, 2] {
                    want.push((Some(m), r, modules.to_owned(), v));
                }
            }
        }
        assert_eq!(got, want);
        // A mixture of experts adds the experts' activation to the heavier selective set; a
        // scenario whose modules already hold the norms gets no second selective set.
        let levels = |modules: &str, moe| {
            let own =
                Setup { recompute_modules: RecomputeModules::parse(modules).expect("modules"), ..Setup::default() };
            settings::recompute_levels(&own, moe).into_iter().map(|(r, m)| (r, m.config_text())).collect::<Vec<_>>()
        };
        assert_eq!(levels("core_attn", true)[2], (Recompute::Selective, "core_attn, layernorm, moe_act".to_owned()));
        assert_eq!(levels("layernorm, moe", true)[2], (Recompute::Full, "layernorm, moe".to_owned()));
        assert_eq!(levels("core_attn, layernorm", false).len(), 3);
        assert!(knob_settings(&base, shape(32, 1)).iter().all(|s| s.virtual_stages == 1), "no pipeline, no chunks");
        // Chunk counts up to 8 that split every stage's layers evenly where the stages are
        // even (10 layers a stage: 2 or 5 chunks); where they are not, each count that makes the
        // busiest stage's largest chunk smaller, a layer for every chunk (126 layers on 16
        // stages of 8 or 7: chunks of 4, 3 and 2, at most 7 chunks).
        let chunks = |layers, stages| {
            PlanShape { local: 64, stages, tp: 1, cp: 1, replicas: 1, sharded: 1, layers, moe: false }.chunk_choices()
        };
        assert_eq!(chunks(80, 8), [1, 2, 5]);
        assert_eq!(chunks(96, 8), [1, 2, 3, 4, 6]);
        assert_eq!(chunks(96, 1), [1]);
        assert_eq!(chunks(96, 64), [1]);
        assert_eq!(chunks(126, 16), [1, 2, 3, 4]);
        assert_eq!(chunks(120, 16), [1, 2, 3, 4]);
        // No pipeline: the whole local batch first, then every halving down to one sample at a
        // time (the least activation memory: the largest that fits without recomputation is
        // the one to find).
        let micro: Vec<Option<u64>> =
            knob_settings(&base, shape(1024, 1)).iter().take(11).map(|s| s.micro_batch).collect();
        let halvings: Vec<Option<u64>> = (0..=10).rev().map(|p| Some(1u64 << p)).collect();
        assert_eq!(micro, halvings);
        assert!(knob_settings(&base, shape(1, 4)).iter().all(|s| s.micro_batch == Some(1)));
        // A pipeline: its smallest micro-batches (more of them, a smaller bubble) and its
        // largest (sequences of few tokens), largest first: 128 sequences per GPU through 4
        // stages try 32, 8, 4, 2 and 1, not 16.
        let mut micro: Vec<Option<u64>> = knob_settings(&base, shape(128, 4)).iter().map(|s| s.micro_batch).collect();
        micro.dedup();
        assert_eq!(micro[..5], [Some(32), Some(8), Some(4), Some(2), Some(1)]);
        assert!(k.iter().all(|s| s.zero_stage == 0 && !s.sequence_parallel));
        assert!(k.iter().all(|s| !s.overlap_grad_reduce && !s.overlap_tp_comm), "nothing to overlap");
        // Tensor parallelism: sequence parallel; plain data parallelism: ZeRO 0, 1 and 2 each
        // (Llama 3's ZeRO-2-like FSDP ran beside a pipeline); both overlap options on.
        let tp = knob_settings(
            &base,
            PlanShape { local: 32, stages: 8, tp: 4, cp: 1, replicas: 64, sharded: 1, layers: 16, moe: false },
        );
        assert_eq!(tp.len(), 3 * k.len());
        assert!(tp.iter().all(|s| s.sequence_parallel && s.overlap_grad_reduce && s.overlap_tp_comm));
        for zero in 0..=2 {
            assert_eq!(tp.iter().filter(|s| s.zero_stage == zero).count(), k.len());
        }
        // ZeRO 1/2 gathers each layer's updated weights in the next forward pass; ZeRO 0 has
        // none to gather, and nothing is gathered in FP8 without FP8 training.
        assert!(tp.iter().all(|s| (s.overlap_param_gather == Some(true)) == (s.zero_stage > 0)));
        assert!(tp.iter().all(|s| !s.fp8_param_gather));
        // The sweep tries each off and on where it matters: the weight gathers of ZeRO 1/2,
        // and FP8 gathers in FP8 training.
        let wide = PlanShape { local: 4, stages: 1, tp: 1, cp: 1, replicas: 64, sharded: 1, layers: 16, moe: false };
        let fp8 = Setup { fp8: true, ..base.clone() };
        let every = every_setting(&fp8, wide);
        for zero in 0..=2u8 {
            let of_stage: Vec<&Setup> = every.iter().filter(|s| s.zero_stage == zero).collect();
            let count = |f: &dyn Fn(&Setup) -> bool| of_stage.iter().filter(|s| f(s)).count();
            let ahead = count(&|s| s.gathers_updated_weights_in_forward());
            let in_fp8 = count(&|s| s.fp8_param_gather);
            if zero == 0 {
                assert_eq!((ahead, in_fp8), (0, 0), "ZeRO 0 gathers nothing");
            } else {
                assert_eq!((2 * ahead, 2 * in_fp8), (of_stage.len(), of_stage.len()), "ZeRO-{zero}");
            }
        }
        assert!(every_setting(&base, wide).iter().all(|s| !s.fp8_param_gather));
        // A mixture of experts on tensor parallelism: each setting with every expert split by
        // the tensor-parallel ranks and with whole experts on each; without tensor parallelism,
        // the task's own.
        let moe = |tp| {
            knob_settings(
                &base,
                PlanShape { local: 32, stages: 8, tp, cp: 1, replicas: 64, sharded: 1, layers: 16, moe: true },
            )
        };
        let experts = moe(4);
        assert_eq!(experts.len(), 2 * tp.len());
        assert_eq!(experts.iter().filter(|s| s.expert_tp == Some(1)).count(), tp.len());
        assert!(tp.iter().chain(&moe(1)).all(|s| s.expert_tp.is_none()) && moe(1).len() == tp.len());
        // With context parallelism too: each of those with the same experts on every
        // context-parallel rank and with different ones.
        let folded = knob_settings(
            &base,
            PlanShape { local: 32, stages: 8, tp: 4, cp: 2, replicas: 64, sharded: 1, layers: 16, moe: true },
        );
        assert_eq!(folded.len(), 2 * experts.len());
        assert_eq!(folded.iter().filter(|s| s.expert_cp == Some(2)).count(), experts.len());
        assert!(experts.iter().all(|s| s.expert_cp.is_none()));
        // The settings only widen the search: its best plan that fits beats the best with the
        // scenario's own settings (LLaMA2-70B on 2,048 A100 40GB in the default model).
        let mut s =
            scenario(include_str!("../../../tests/data/reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json"));
        s.task.mode = crate::engine::scenario::Mode::Default;
        let best = |space: &Space| search(&s, space).expect("within budget").ranked.into_iter().find(Outcome::fits);
        let with_knobs = best(&Space::fixed_global(&s)).expect("a plan fits");
        let without = best(&Space { knobs: false, ..Space::fixed_global(&s) }).expect("a plan fits");
        assert!(
            with_knobs.throughput_samples_per_s > 2.0 * without.throughput_samples_per_s,
            "{with_knobs:?} vs {without:?}"
        );
        // Selective recomputation of the norms too only where the core attention's alone does
        // not fit on 40 GB, and some plans fit only so.
        let r = search(&s, &Space::fixed_global(&s)).expect("within budget");
        let normed: Vec<&Outcome> = r
            .ranked
            .iter()
            .filter(|o| o.setup.recompute == Recompute::Selective && o.setup.recompute_modules.layernorm)
            .collect();
        assert!(normed.iter().any(|o| o.fits()), "{} plans recompute the norms, none fits", normed.len());
        for o in &normed {
            let setup = Setup { recompute_modules: RecomputeModules::default(), ..o.setup.clone() };
            let lighter = with(&s, &Candidate { plan: o.plan.clone(), setup });
            let cx = extended::training::TrainingCx::new(&lighter).expect("transformer");
            assert!(cx.memory().total_bytes > s.system.smallest_mem_cap_bytes(), "{:?}", o.plan);
        }
    }

    #[test]
    fn the_search_is_at_least_as_fast_as_megatrons_own_plan_for_gpt3() {
        // GPT-3 175B on 1,024 A100 80GB (8 per node, 8 x 200 Gb/s each), global batch 1,536:
        // the plan Narayanan et al. (SC21, Table 1) ran, TP 8 x PP 16 x DP 8, micro-batch 1,
        // full recomputation. The explorer's best plan that fits is no slower in the model.
        let raw: crate::engine::RawScenario = serde_json::from_value(serde_json::json!({
            "model": {"type": "LLM", "bytes_per_nonemb_param": 2, "bytes_per_emb_param": 2,
                "entries_per_table": 51200, "num_transformer_layers": 96, "num_transformer_heads": 96,
                "attention_dim": 12288, "transformer_fc_dim": 49152, "transformer_seq_len": 2048},
            "system": {"type": "GPU", "num_devices": 1024, "num_nodes": 128, "f64_flops": 9.7e12,
                "f32_flops": 156e12, "f16_flops": 312e12, "i8_ops": 624e12, "flops_util": 0.8, "mem_cap": 80e9,
                "mem_bw": 2039e9, "mem_bw_util": 0.836, "num_nvlinks": 12, "bw_per_nvlink": 50e9,
                "nvlink_util": 0.6667, "num_ibroce_ports": 8, "ibroce_bw": 50e9, "ibroce_util": 0.56,
                "ar_perc_intra": 0.5},
            "task": {"type": "pretrain", "mode": "default", "emb_parallel": ["ddp"], "emb_parallel_degree": [8],
                "transformer_parallel": ["tp", "ddp", "pp"], "transformer_parallel_degree": [8, 8, 16],
                "local_emb_bs": 192, "local_transformer_bs": 192, "micro_batch": 1, "recompute": "full"},
        }))
        .expect("raw");
        let s = validate(&raw).expect("valid");
        let r = search(&s, &Space::fixed_global(&s)).expect("within budget");
        assert!(r.baseline.fits(), "Megatron's plan fits: {:?}", r.baseline);
        let best = r.ranked.first().filter(|o| o.fits()).expect("a plan fits");
        assert!(
            best.throughput_samples_per_s >= r.baseline.throughput_samples_per_s,
            "best {} vs Megatron's {}",
            best.throughput_samples_per_s,
            r.baseline.throughput_samples_per_s
        );
    }

    #[test]
    fn a_search_too_big_with_every_setting_tries_them_on_its_most_promising_plans() {
        // GPT-4 1.8T (MoE) on 2,048 H100s: its plans with every setting take more than one
        // search may, its plans alone do not.
        let mut s = scenario(include_str!(
            "../../../tests/data/reference/cases/llm_moe__gpt4_1.8t__cloud_A_h100.80_2048__llm_train.json"
        ));
        s.task.mode = crate::engine::scenario::Mode::Default;
        let space = Space::fixed_global(&s);
        assert!(planned(&s, &space).is_err());
        let (staged, first, first_ops) = planned_fitted(&s, &space).expect("fits without the settings");
        assert!(!staged.knobs && staged.staged && planned(&s, &staged).is_ok());
        // The first pass runs each plan with the scenario's settings and those that cost no time.
        let dims = Dims::of(&s.model);
        let first_setup = |p: &Plan| {
            let t = p.transformer.as_ref().expect("a transformer plan");
            let shape = PlanShape::of(t, p.local_transformer_batch.expect("a batch"), dims.as_ref());
            staged::first_pass(&s.task.setup, shape)
        };
        assert!(first.iter().all(|c| c.setup == first_setup(&c.plan)));
        assert!(first.iter().any(|c| c.setup != s.task.setup));
        let r = search(&s, &space).expect("runs in two passes");
        let SettingsSearched::Best(tried) = r.settings else { panic!("staged: {:?}", r.settings) };
        assert!((1..=SETTINGS_PASS_PLANS + INTERLEAVED_PLANS).contains(&tried), "{tried}");
        // Exactly that many parallel plans ran with other settings (besides the other
        // placements of the best ones), and the whole search kept to one search's budget.
        let megatron = |p: &Plan| p.transformer.as_ref().is_some_and(|t| out_of_megatron_order(t).is_none());
        let mut distinct: Vec<&Plan> = Vec::new();
        for o in r.ranked.iter().filter(|o| o.setup != first_setup(&o.plan) && megatron(&o.plan)) {
            if !distinct.contains(&&o.plan) {
                distinct.push(&o.plan);
            }
        }
        assert_eq!(distinct.len(), tried);
        let all: Vec<Candidate> =
            r.ranked.iter().map(|o| Candidate { plan: o.plan.clone(), setup: o.setup.clone() }).collect();
        assert!(cost(&s, &all) <= MAX_SEARCH_OPS && first_ops <= cost(&s, &all));
        // The settings pay: with only the first pass's (pipelines at 4 micro-batches per stage
        // or more, no recomputation) no plan fits; the settings pass finds one at 50.0
        // samples/s (45.7 when the first pass ran pipelines one sample at a time, and 27.6
        // fitted then; 7.5 with the scenario's own settings alone).
        let own_best =
            r.ranked.iter().filter(|o| o.fits() && o.setup == first_setup(&o.plan)).map(|o| o.throughput_samples_per_s);
        let own_best = own_best.fold(0.0, f64::max);
        let best = r.ranked.first().filter(|o| o.fits()).expect("a plan fits");
        assert_ne!(best.setup, first_setup(&best.plan), "found by the settings pass");
        assert!(best.throughput_samples_per_s > 1.5 * own_best, "{} vs {own_best}", best.throughput_samples_per_s);
        // A search that fits keeps every setting.
        let small =
            scenario(include_str!("../../../tests/data/reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json"));
        assert_eq!(planned_fitted(&small, &Space::fixed_global(&small)).map(|x| x.0), Ok(Space::fixed_global(&small)));
    }

    #[test]
    fn a_staged_search_finds_nearly_what_trying_every_setting_on_every_plan_finds() {
        // LLaMA2-70B on 2,048 A100s fits in one search with every setting; staged anyway, the
        // settings pass on its most promising plans comes within 2% of the full search.
        let mut s =
            scenario(include_str!("../../../tests/data/reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json"));
        s.task.mode = crate::engine::scenario::Mode::Default;
        let full = search(&s, &Space::fixed_global(&s)).expect("within budget");
        let staged = Space { knobs: false, staged: true, ..Space::fixed_global(&s) };
        let r = search(&s, &staged).expect("within budget");
        assert!(matches!(r.settings, SettingsSearched::Best(n) if n > 0));
        let best = |x: &Summary| x.ranked.first().filter(|o| o.fits()).map(|o| o.throughput_samples_per_s);
        let (full, staged) = (best(&full).expect("fits"), best(&r).expect("fits"));
        assert!(staged >= 0.98 * full && staged <= full * (1.0 + 1e-12), "staged {staged} vs full {full}");
    }

    #[test]
    fn a_plan_the_default_model_refuses_is_searched_from_data_parallelism_at_its_global_batch() {
        // LLaMA-13B's golden case asks tensor parallelism of 16 over 40 heads: the default
        // model refuses it, MAD-Max's rules accept it.
        let case = include_str!(
            "../../../tests/data/reference/cases/llm__llama_13b__cloud_A_h100.80_128__llm_pre_fsdp_tp_128x8_bs1.json"
        );
        let mut raw = serde_json::from_str::<RawFile>(case).expect("case").into_scenario().expect("case");
        assert!(
            validate(&raw).is_ok() && rescued(&raw, &[]).is_none(),
            "paper mode accepts the plan: nothing to rescue"
        );
        if let Some(t) = raw.task.as_mut() {
            t.mode = Some(RawValue::Str("default".into()));
        }
        let problems = validate(&raw).expect_err("the default model refuses the plan");
        let (s, problem) = rescued(&raw, &problems).expect("rescued");
        assert_eq!(problem.field, "task.transformer_parallel_degree");
        assert!(problem.message.contains("does not divide the 40 attention heads"), "{}", problem.message);
        // fsdp 8 x tp 16 at 16 sequences per GPU: a global batch of 128, now ddp 128 x 1.
        let t = s.task.plan.transformer.expect("a transformer plan");
        assert_eq!((t.levels().len(), t.levels()[0].strategy, t.levels()[0].degree), (1, Strategy::Ddp, 128));
        assert_eq!((s.task.plan.local_transformer_batch, scenario_global_batch(&s)), (Some(1), 128));
        // The search runs from there and finds plans the rules accept.
        let r = search(&s, &Space::fixed_global(&s)).expect("within budget");
        assert!(r.ranked.first().is_some_and(Outcome::fits));
        // Anything else wrong is not rescued.
        if let Some(m) = raw.model.as_mut() {
            m.num_transformer_layers = Some(RawValue::Int(0));
        }
        assert!(rescued(&raw, &validate(&raw).expect_err("no layers")).is_none());
    }
}
