//! The knobs a plan has beyond its parallel degrees: the settings tried per plan shape
//! (micro-batch, ZeRO stage, sequence parallelism, interleaving, recomputation), the overlap
//! options, placements on the node hierarchy and collective algorithms; the refinements of the
//! best plans, and brute-force sweeps that try every setting on every plan (what the explorer
//! is checked against). The staged search's passes are in `staged.rs`.

use super::*;

/// The shape of a plan the training settings depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanShape {
    /// Samples per GPU per iteration.
    pub local: u64,
    /// Pipeline stages.
    pub stages: u64,
    /// Tensor-parallel degree.
    pub tp: u64,
    /// Context-parallel degree.
    pub cp: u64,
    /// Plain (not sharded) data-parallel ranks.
    pub replicas: u64,
    /// Data-parallel ranks that shard the weights (fsdp levels: ZeRO-3).
    pub sharded: u64,
    /// Transformer layers of the model.
    pub layers: u64,
    /// Whether the model is a mixture of experts (its experts may be left whole on each
    /// tensor-parallel rank, or spread over the context-parallel ranks).
    pub moe: bool,
}

impl PlanShape {
    /// The shape of a transformer plan `t` at `local` samples per GPU, for the model `d` (none:
    /// not a transformer).
    pub fn of(t: &Spec, local: u64, d: Option<&Dims>) -> PlanShape {
        PlanShape {
            local,
            stages: t.product_of(&[Strategy::Pp]),
            tp: t.product_of(&[Strategy::Tp]),
            cp: t.product_of(&[Strategy::Cp]),
            replicas: t.product_of(&[Strategy::Ddp]),
            sharded: t.product_of(&[Strategy::Fsdp]),
            layers: d.map_or(0, |d| d.layers),
            moe: d.is_some_and(Dims::is_moe),
        }
    }

    /// The shape of `plan`'s transformer plan for the model `d`; `None` for a plan without one
    /// (or without its local batch).
    pub fn of_plan(plan: &Plan, d: Option<&Dims>) -> Option<PlanShape> {
        Some(PlanShape::of(plan.transformer.as_ref()?, plan.local_transformer_batch?, d))
    }

    /// The expert tensor parallelism and the context-parallel ranks holding different experts
    /// a plan of this shape is tried with (`(expert_tp, expert_cp)`): with a mixture of experts
    /// on tensor parallelism, every rank splitting each expert (`None`) and each holding whole
    /// experts (1, Megatron-core's recipes for large mixtures of experts); on context
    /// parallelism, every context-parallel rank holding the same experts (`None`) and each
    /// different ones (cp, Megatron-core's folding); otherwise `base`'s. The rules drop what a
    /// plan does not allow (sequence parallelism off, experts the ranks do not divide).
    fn expert_choices(&self, base: &Setup) -> Vec<(Option<u64>, Option<u64>)> {
        let etp = if self.moe && self.tp > 1 { vec![None, Some(1)] } else { vec![base.expert_tp] };
        let ecp = if self.moe && self.cp > 1 { vec![None, Some(self.cp)] } else { vec![base.expert_cp] };
        etp.iter().flat_map(|&t| ecp.iter().map(move |&c| (t, c))).collect()
    }

    /// The chunks per GPU the explorer tries on a pipeline: 1 (plain 1F1B), and each count
    /// from 2 to 8 that gives every stage's chunks a layer (the rules' bound: stages x chunks
    /// within the layers) and, where the layers split evenly over the stages, splits every
    /// stage's layers evenly, as Megatron-LM's interleaved schedule requires; where they do not
    /// (Megatron-core's uneven layouts), makes the busiest stage's largest chunk smaller than
    /// any fewer chunks do. The largest chunk paces the schedule ([`crate::engine::extended`]'s
    /// bubble: 8 chunks over 10 layers run as 5 chunks of 2), so a count that leaves it as it
    /// was only adds point-to-point transfers.
    pub fn chunk_choices(&self) -> Vec<u64> {
        let mut out = vec![1];
        if self.stages < 2 {
            return out;
        }
        let even = self.layers.is_multiple_of(self.stages);
        let busiest = self.layers.div_ceil(self.stages);
        let mut largest = busiest;
        for v in 2..=8u64 {
            let chunk = busiest.div_ceil(v);
            let paced = if even { busiest.is_multiple_of(v) } else { chunk < largest };
            if self.stages.saturating_mul(v) <= self.layers && paced {
                out.push(v);
                largest = chunk;
            }
        }
        out
    }
}

/// The recomputations a plan is tried with, lightest first ([`knob_settings`]): none; selective
/// of the scenario's modules (Megatron-core's default, the core attention); selective of those
/// with both norms and, for a mixture of experts, the experts' activation (`layernorm` and
/// `moe_act`, as Megatron-core's recipes for large mixtures of experts add them: their outputs,
/// the inputs of the next GEMMs, dropped for a few element-wise passes again); full. The heavier
/// selective set is left out when the scenario's modules already hold it.
pub fn recompute_levels(base: &Setup, moe: bool) -> Vec<(Recompute, RecomputeModules)> {
    let own = base.recompute_modules;
    let heavier = RecomputeModules { layernorm: true, moe_act: own.moe_act || (moe && !own.moe), ..own };
    let mut levels = vec![(Recompute::None, own), (Recompute::Selective, own)];
    if heavier != own {
        levels.push((Recompute::Selective, heavier));
    }
    levels.push((Recompute::Full, own));
    levels
}

/// The settings a default-model transformer plan is tried with in training:
/// - each recomputation of [`recompute_levels`] (none, selective, selective of more modules,
///   full);
/// - power-of-two micro-batches that divide the local batch and leave at least one
///   micro-batch per stage (a pipeline can fill): without a pipeline every one (larger ones
///   run fewer, larger GEMMs; smaller ones trade time for activation memory, and the largest
///   that fits without recomputation is often the fastest), with one the
///   [`MICRO_BATCH_CHOICES`] smallest (more micro-batches shrink the bubble) and the largest
///   as well (sequences of few tokens need several to a micro-batch for GEMMs that run at
///   their rate);
/// - with plain data parallelism, ZeRO stages 0, 1 (the distributed optimizer: the same bytes
///   reduced, a data-parallel share of the optimizer states) and 2 (a share of the gradients
///   too, reduced in every micro-batch; beside a pipeline as Llama 3's FSDP ran);
/// - with tensor parallelism, sequence parallelism (Megatron-LM's advice: the same bytes as
///   the all-reduces, the norms' work and activations split by tp), and for a mixture of
///   experts each expert split by every tensor-parallel rank or whole on each, and with
///   context parallelism the same experts on each context-parallel rank or different ones
///   ([`PlanShape::expert_choices`]);
/// - with a pipeline, the plain 1F1B schedule and Megatron's interleaved one with each number
///   of chunks per GPU of [`PlanShape::chunk_choices`] (v chunks: a v-th of the bubble, v times
///   the point-to-point transfers; the rules keep only splits it allows);
/// - each with the overlap options on where the plan has what they overlap, and FP8 weight
///   gathers in FP8 training where a ZeRO stage gathers weights ([`overlapped`]).
///
/// Cheapest first, so that among plans equally fast the one with the least recomputation and
/// the fewest micro-batches ranks first.
pub fn knob_settings(base: &Setup, shape: PlanShape) -> Vec<Setup> {
    let largest = (shape.local / shape.stages.max(1)).max(1);
    let fitting = powers(largest, |m| shape.local.is_multiple_of(m));
    // Without a pipeline, every one: the largest that fits without recomputation (a third more
    // compute) is the one to find, and the smallest hold the least activation memory. With
    // one, the smallest and the largest: where a sequence holds few tokens (a vision
    // transformer's patches), the GEMMs of the smallest run far below their rate.
    let mut micro: Vec<u64> = if shape.stages > 1 {
        let mut v: Vec<u64> = fitting.iter().take(MICRO_BATCH_CHOICES).copied().collect();
        v.extend(fitting.last().filter(|m| !v.contains(m)));
        v
    } else {
        fitting
    };
    // Largest first: among plans equally fast, the fewest micro-batches rank first.
    micro.reverse();
    let zeros: &[u8] =
        if shape.replicas > 1 && base.zero_stage == 0 { &[0, 1, 2] } else { std::slice::from_ref(&base.zero_stage) };
    let sequence_parallel = sequence_parallel(base, shape);
    let chunks =
        if shape.stages > 1 && base.virtual_stages == 1 { shape.chunk_choices() } else { vec![base.virtual_stages] };
    let experts = shape.expert_choices(base);
    let all = settings_product(
        base,
        &recompute_levels(base, shape.moe),
        &micro,
        zeros,
        &[sequence_parallel],
        &chunks,
        &experts,
    );
    all.iter().map(|s| overlapped(s, shape)).collect()
}

/// Whether a plan of `shape` runs with sequence parallelism: `base`'s choice, and always with
/// tensor parallelism (Megatron-LM's advice: the all-reduces' bytes, the norms' work and
/// activations split by tp), in the full search ([`knob_settings`]) and a staged first pass
/// alike.
pub(super) fn sequence_parallel(base: &Setup, shape: PlanShape) -> bool {
    base.sequence_parallel || shape.tp > 1
}

/// `setup` with the options that hide or shrink communication on where a plan of `shape` has
/// it: the gradients reduced during the backward pass with plain data parallelism, the
/// tensor-parallel collectives overlapped with GEMMs with tensor parallelism, each layer's
/// updated weights gathered one layer ahead in the next forward pass where ZeRO 1/2 gathers
/// them ([`gathers_updated_weights`]: Megatron-core's `--overlap-param-gather`; ZeRO-3
/// prefetches by default), and with FP8 training the blocks' weights gathered in FP8 wherever a
/// ZeRO stage gathers them ([`gathers_weights`]: `--fp8-param-gather`, half the bytes). They
/// move no memory, or save some, so the explorer ranks plans with them first
/// ([`knob_settings`]) and tries the overlaps off on the best plans ([`refinements`]): ranked
/// without them, a plan whose time they cut most (one without a pipeline, whose reduction all
/// of the backward pass can hide) would sit below plans they help less, and the refinement of
/// the best few would never reach it. FP8 gathers are not tried off: fewer bytes on the same
/// ops never delay an op of the timeline (each starts when its stream and its inputs are
/// done), and they hold less memory; the brute-force sweep tries them off ([`every_setting`]).
pub(super) fn overlapped(setup: &Setup, shape: PlanShape) -> Setup {
    Setup {
        overlap_grad_reduce: setup.overlap_grad_reduce || shape.replicas > 1,
        overlap_tp_comm: setup.overlap_tp_comm || shape.tp > 1,
        overlap_param_gather: if gathers_updated_weights(setup, shape) {
            Some(true)
        } else {
            setup.overlap_param_gather
        },
        fp8_param_gather: setup.fp8_param_gather || (setup.fp8 && gathers_weights(setup, shape)),
        ..setup.clone()
    }
}

/// Whether a plan of `shape` run with `setup` gathers weights over its data-parallel ranks:
/// ZeRO-3 on an fsdp level, or ZeRO 1 to 3 over plain data-parallel replicas.
pub(super) fn gathers_weights(setup: &Setup, shape: PlanShape) -> bool {
    shape.sharded > 1 || (shape.replicas > 1 && setup.zero_stage >= 1)
}

/// Whether a plan of `shape` run with `setup` gathers the weights its ranks updated after each
/// step (ZeRO 1/2 over plain data-parallel replicas, no fsdp level), so that when it gathers
/// them matters ([`Setup::gathers_updated_weights_in_forward`]); not where the framework
/// broadcasts them after the step instead ([`Setup::zero1_broadcast`]).
pub(super) fn gathers_updated_weights(setup: &Setup, shape: PlanShape) -> bool {
    shape.sharded <= 1 && shape.replicas > 1 && (1..=2).contains(&setup.zero_stage) && !setup.zero1_broadcast
}

/// `base` with every combination of the given micro-batches, ZeRO stages, sequence
/// parallelism, chunks per GPU and expert tensor parallelism, under each recomputation of
/// `levels` (with its modules): cheapest recomputation first, then in the order given.
fn settings_product(
    base: &Setup,
    levels: &[(Recompute, RecomputeModules)],
    micro: &[u64],
    zeros: &[u8],
    sequence: &[bool],
    chunks: &[u64],
    experts: &[(Option<u64>, Option<u64>)],
) -> Vec<Setup> {
    let mut out = Vec::new();
    for &(recompute, recompute_modules) in levels {
        for &micro_batch in micro {
            for &zero_stage in zeros {
                for &sequence_parallel in sequence {
                    for &virtual_stages in chunks {
                        for &(expert_tp, expert_cp) in experts {
                            out.push(Setup {
                                micro_batch: Some(micro_batch),
                                recompute,
                                recompute_modules,
                                zero_stage,
                                sequence_parallel,
                                virtual_stages,
                                expert_tp,
                                expert_cp,
                                ..base.clone()
                            });
                        }
                    }
                }
            }
        }
    }
    out
}

/// Every training setting a brute-force sweep tries on a plan: a superset of
/// [`knob_settings`] that checks its choices (a test and `madmax bench` compare the two):
/// every micro-batch that divides the local batch and leaves at least one micro-batch per
/// stage, each recomputation, ZeRO 0, 1 and 2 with plain data parallelism, sequence
/// parallelism off and on with tensor parallelism, 1 to 8 pipeline chunks per GPU, even
/// or not, and a mixture of experts' two expert tensor parallelisms and two spreads over the
/// context-parallel ranks (the rules drop what a plan does not allow); each with every
/// combination of the overlap options that matter ([`overlap_variants`]), and in FP8 training
/// with the weights gathered in FP8 and not where a ZeRO stage gathers them.
pub fn every_setting(base: &Setup, shape: PlanShape) -> Vec<Setup> {
    let largest = (shape.local / shape.stages.max(1)).max(1);
    let micro: Vec<u64> = (1..=largest).filter(|m| shape.local.is_multiple_of(*m)).collect();
    let zeros: &[u8] = if shape.replicas > 1 { &[0, 1, 2] } else { &[base.zero_stage] };
    let sequence_parallel: &[bool] = if shape.tp > 1 { &[false, true] } else { &[base.sequence_parallel] };
    let chunks: &[u64] = if shape.stages > 1 { &[1, 2, 3, 4, 5, 6, 7, 8] } else { &[base.virtual_stages] };
    let levels = recompute_levels(base, shape.moe);
    settings_product(base, &levels, &micro, zeros, sequence_parallel, chunks, &shape.expert_choices(base))
        .into_iter()
        .flat_map(|s| overlap_variants(&s, shape).into_iter().chain(std::iter::once(s)))
        .flat_map(|s| {
            // FP8 gathers where they apply, as the explorer sets them ([`overlapped`]), and not.
            let fp8 = s.fp8 && gathers_weights(&s, shape);
            let other = fp8.then(|| Setup { fp8_param_gather: !s.fp8_param_gather, ..s.clone() });
            other.into_iter().chain(std::iter::once(s))
        })
        .collect()
}

/// Most plans the explorer refines ([`refinements`]): with the overlap options off, the other
/// collective algorithms, ZeRO-1 groups and placements.
pub const REFINED_PLANS: usize = 16;

/// `setup` with each other combination of the overlap options that matter for a plan of
/// `shape`: gradients reduced during the backward pass (Megatron-LM's `--overlap-grad-reduce`,
/// with plain data parallelism), tensor-parallel collectives overlapped with GEMMs
/// (Transformer Engine's comm/GEMM overlap, with tensor parallelism) and ZeRO 1/2's updated
/// weights gathered during the next forward pass (Megatron-core's `--overlap-param-gather`),
/// each off and on.
fn overlap_variants(setup: &Setup, shape: PlanShape) -> Vec<Setup> {
    let grads: &[bool] =
        if shape.replicas > 1 { &[false, true] } else { std::slice::from_ref(&setup.overlap_grad_reduce) };
    let tp: &[bool] = if shape.tp > 1 { &[false, true] } else { std::slice::from_ref(&setup.overlap_tp_comm) };
    // The setup's own and the other (unset reads as off for ZeRO 1/2).
    let own = setup.overlap_param_gather;
    let params = if gathers_updated_weights(setup, shape) {
        vec![own, Some(!setup.gathers_updated_weights_in_forward())]
    } else {
        vec![own]
    };
    let mut out = Vec::new();
    for &overlap_grad_reduce in grads {
        for &overlap_tp_comm in tp {
            for &overlap_param_gather in &params {
                let v = Setup { overlap_grad_reduce, overlap_tp_comm, overlap_param_gather, ..setup.clone() };
                if v != *setup {
                    out.push(v);
                }
            }
        }
    }
    out
}

/// The other placements of `spec`'s levels on the cluster's nodes and sites: each order of its
/// levels with tensor parallelism kept innermost (its collectives sit between every layer's
/// GEMMs, so it gains most from NVLink), one order per distinct set of groups it places
/// ([`Layout`](extended::layout::Layout)) other than `spec`'s own, in a stable order. Megatron-LM
/// ranks data parallelism inside the pipeline; putting the pipeline inside instead keeps its
/// point-to-point transfers on NVLink and sends the gradient reduction over the NICs, which
/// pays off when the gradients are few or overlapped.
pub fn placements(spec: &Spec, at: Placement) -> Vec<Spec> {
    use extended::layout::Layout;
    let (inner, rest): (Vec<Level>, Vec<Level>) = spec.levels().iter().partition(|l| l.strategy == Strategy::Tp);
    let mut seen = vec![Layout::of(spec, at)];
    let mut out = Vec::new();
    for order in permutations(rest.len()) {
        let levels: Vec<Level> = inner.iter().copied().chain(order.iter().map(|&i| rest[i])).collect();
        let Some(other) = Spec::new(&levels) else { continue };
        let layout = Layout::of(&other, at);
        if !seen.contains(&layout) {
            seen.push(layout);
            out.push(other);
        }
    }
    out
}

/// Every order of `0..n`, in lexicographic order.
pub(super) fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for first in 0..n {
        for rest in permutations(n - 1) {
            let mut order = vec![first];
            order.extend(rest.into_iter().map(|i| if i >= first { i + 1 } else { i }));
            out.push(order);
        }
    }
    out
}

/// `setup` with each other collective algorithm NCCL can be asked for (`NCCL_ALGO`: ring, tree,
/// and the two-level path), on a cluster of more than one node; in-network aggregation needs
/// switches that reduce, so it is tried only where the scenario has it.
fn algorithm_variants(setup: &Setup, base: &Scenario) -> Vec<Setup> {
    if base.system.num_devices <= base.system.devices_per_node() {
        return Vec::new();
    }
    [Algorithm::Hierarchical, Algorithm::Ring, Algorithm::Tree]
        .into_iter()
        .filter(|&a| a != setup.collective)
        .map(|collective| Setup { collective, ..setup.clone() })
        .collect()
}

/// Each of `setups` with ZeRO-1 sharded within each node only ([`Setup::zero_shard_ranks`]:
/// InternLM's hybrid ZeRO, Megatron-core's distributed-optimizer instances), where `spec` on
/// the cluster placed as `at` spreads the ranks that hold the same weights over nodes, several
/// to a node: the updated weights then come back over NVLink instead of the network, for more
/// optimizer states per GPU. Nothing for the others, nor for any where the ranks do not.
fn zero_group_variants(setups: &[Setup], spec: &Spec, at: Placement) -> Vec<Setup> {
    let group = extended::layout::Layout::of(spec, at).weight_dp;
    if group.within_node() || group.per_node < 2 {
        return Vec::new();
    }
    setups
        .iter()
        .filter(|s| s.zero_stage == 1 && s.zero_shard_ranks.is_none())
        .map(|s| Setup { zero_shard_ranks: Some(group.per_node), ..s.clone() })
        .collect()
}

/// The outcomes [`refinements`] refines: the best [`REFINED_PLANS`] that fit, of `ranked` (best
/// first), at most [`REFINED_PER_PLAN`] settings of each parallel plan, so that the refinement
/// reaches other plans than the settings of the first few: the overlap options move plans
/// unequally (a plan without a pipeline hides its data-parallel reduction behind the backward
/// pass, one with a pipeline only behind the last stage's), so a plan just below the best
/// before them can be the best after.
pub fn refined(ranked: &[Outcome]) -> Vec<&Outcome> {
    let mut out: Vec<&Outcome> = Vec::with_capacity(REFINED_PLANS);
    for o in ranked.iter().filter(|o| o.fits()) {
        if out.len() == REFINED_PLANS {
            break;
        }
        if out.iter().filter(|r| r.plan == o.plan).count() < REFINED_PER_PLAN {
            out.push(o);
        }
    }
    out
}

/// Most settings of one parallel plan [`refined`] takes.
pub const REFINED_PER_PLAN: usize = 2;

/// The second pass of a search that tries the training settings ([`searches_settings`],
/// [`Space::knobs`]): the plans [`refined`] takes of `ranked` (best first), each with the
/// other combinations of the overlap options ([`overlap_variants`]: off, since plans are
/// ranked with them on), the other
/// collective algorithms ([`algorithm_variants`]), ZeRO-1 within each node
/// ([`zero_group_variants`]) and the other placements of its levels on the
/// nodes ([`placements`], each with all of those) that the rules allow. These move time, not
/// memory, so only the fastest plans are worth the try: trying them on every plan would take
/// several times as long.
pub fn refinements(base: &Scenario, ranked: &[Outcome], space: &Space) -> Vec<Candidate> {
    if !((space.knobs || space.staged) && searches_settings(base)) {
        return Vec::new();
    }
    let dims = Dims::of(&base.model);
    let at = Placement::of(&base.system);
    let mut out = Vec::new();
    for o in refined(ranked) {
        let (Some(t), Some(local)) = (&o.plan.transformer, o.plan.local_transformer_batch) else { continue };
        let shape = PlanShape::of(t, local, dims.as_ref());
        let setups: Vec<Setup> = std::iter::once(o.setup.clone())
            .chain(overlap_variants(&o.setup, shape))
            .chain(algorithm_variants(&o.setup, base))
            .collect();
        let own = std::iter::once(*t).chain(placements(t, at));
        for (i, spec) in own.enumerate() {
            let plan = Plan { transformer: Some(spec), ..o.plan.clone() };
            let grouped = zero_group_variants(&setups, &spec, at);
            // The plan's own placement with its own settings is already ranked.
            for setup in setups.iter().skip(usize::from(i == 0)).chain(&grouped) {
                let c = Candidate { plan: plan.clone(), setup: setup.clone() };
                if extended::rules::check(&with(base, &c)).is_empty() {
                    out.push(c);
                }
            }
        }
    }
    out
}

/// A brute-force sweep: every parallel plan of the space ([`plans`] without settings), each
/// with [`every_setting`] where the explorer tries settings, evaluated and ranked best first.
/// Tens of times the explorer's work: for checking the explorer, not for the page.
pub fn brute_force(base: &Scenario, space: &Space) -> Vec<Outcome> {
    sweep(base, space, false)
}

/// [`brute_force`] with every placement of each plan's levels on the nodes ([`placements`]) and
/// every collective algorithm ([`algorithm_variants`]) as well, for every setting: the whole
/// decision space the explorer searches in stages. Hundreds of times the explorer's work.
pub fn brute_force_everywhere(base: &Scenario, space: &Space) -> Vec<Outcome> {
    sweep(base, space, true)
}

fn sweep(base: &Scenario, space: &Space, everywhere: bool) -> Vec<Outcome> {
    let knobs = space.knobs && searches_settings(base);
    let dims = Dims::of(&base.model);
    let at = Placement::of(&base.system);
    let mut out = Vec::new();
    for c in plans(base, &Space { knobs: false, ..space.clone() }) {
        let setups = match (&c.plan.transformer, c.plan.local_transformer_batch) {
            (Some(t), Some(local)) if knobs => every_setting(&base.task.setup, PlanShape::of(t, local, dims.as_ref())),
            _ => vec![c.setup.clone()],
        };
        let setups: Vec<Setup> = if everywhere && knobs {
            setups
                .into_iter()
                .flat_map(|s| algorithm_variants(&s, base).into_iter().chain(std::iter::once(s)))
                .collect()
        } else {
            setups
        };
        let specs: Vec<Option<Spec>> = match &c.plan.transformer {
            Some(t) if everywhere && knobs => std::iter::once(*t).chain(placements(t, at)).map(Some).collect(),
            t => vec![*t],
        };
        for spec in specs {
            let plan = Plan { transformer: spec, ..c.plan.clone() };
            for setup in &setups {
                let candidate = Candidate { plan: plan.clone(), setup: setup.clone() };
                if extended::rules::check(&with(base, &candidate)).is_empty() {
                    out.push(evaluate_plan(base, &candidate, space));
                }
            }
        }
    }
    rank(&mut out);
    out
}
