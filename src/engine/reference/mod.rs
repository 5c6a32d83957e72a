//! Reference mode: the MAD-Max Python code's behaviour, reproduced exactly, quirks included.
//!
//! This is the one place where the reference's model lives: its derived quantities
//! ([`quantities`], [`network`]), its op lists per model family ([`dlrm`], [`transformer`],
//! [`dlrm_transformer`]) and the catalogue of its quirks ([`quirks`]). It produces an op graph and
//! the figures for the report; the shared scheduler and report do the rest. Formulas are
//! evaluated in the reference's order with Python number semantics ([`Num`]), so results are
//! bit-for-bit those of the reference (SPEC sections 3-9).

pub mod dlrm;
pub mod dlrm_transformer;
pub mod explain;
pub mod graph;
pub mod network;
pub mod quantities;
pub mod quirks;
pub mod rules;
pub mod transformer;

use super::num::Num;
use super::ops::{Block, OpKind, OpName, Phase};
use super::report::{LayerWork, MemPart, Memory, ModelStats, Parts, SystemStats, Work};
use super::scenario::{Arch, Freeze, Scenario, Spec, Strategy, TaskKind, MAX_LEVELS};
use graph::{Dep, GraphBuilder};
use network::Network;
use quantities::{int, model_counts, Factors, ModelCounts};

/// Builds the reference op graph and figures for a validated scenario.
pub fn build(s: &Scenario) -> Parts {
    let cx = ReferenceCx::new(s);
    let capacity = cx.op_estimate();
    let mut g = GraphBuilder::new(cx.max_layers(), capacity);
    match &s.model.arch {
        Arch::Dlrm(_) | Arch::DlrmMoe(..) => dlrm::build(&cx, &mut g),
        Arch::DlrmTransformer(..) => dlrm_transformer::build(&cx, &mut g),
        Arch::Llm(_) | Arch::LlmMoe(..) | Arch::Vit(_) => transformer::build(&cx, &mut g),
        // MAD-Max has no CNNs or encoder-decoders: validation refuses them in paper mode.
        Arch::Cnn(_) | Arch::EncDec(_) => {}
    }
    let (ops, schedule) = g.finish();
    Parts {
        ops,
        schedule,
        global_batch: cx.global_batch,
        memory: cx.memory(),
        work: cx.work(),
        model: cx.model_stats(),
        system: cx.system_stats(),
    }
}

/// Per-scenario quantities every family builder reads.
pub struct ReferenceCx<'a> {
    pub s: &'a Scenario,
    pub net: Network,
    pub counts: ModelCounts,
    /// Bytes per dense parameter and activation element (`b`).
    pub b: Num,
    /// The FLOP rate for `b`, FLOP/s.
    pub flops_per_s: f64,
    /// Embedding bytes one device reads, `(lookup_bytes * B_E) / shard_E` (lambda).
    pub lookup_bytes_per_device: f64,
    pub emb: Part<'a>,
    pub mlp: Option<Part<'a>>,
    pub transformer: Option<Part<'a>>,
    pub freeze: Freeze,
    pub trains: bool,
    pub global_batch: u64,
}

impl<'a> ReferenceCx<'a> {
    pub(crate) fn new(s: &'a Scenario) -> ReferenceCx<'a> {
        let net = Network::new(&s.system);
        let counts = model_counts(s);
        let plan = &s.task.plan;
        let emb_f = Factors::of_emb(&plan.emb);
        let lookup_bytes_per_device = (counts.lookup_bytes * int(plan.local_emb_batch) / int(emb_f.shard)).f64();
        let freeze = match &s.task.kind {
            TaskKind::Finetune(f) => f.clone(),
            _ => Freeze::default(),
        };
        ReferenceCx {
            s,
            net,
            counts,
            b: s.model.bytes_per_dense_param,
            flops_per_s: net.flops_for(s.model.bytes_per_dense_param),
            lookup_bytes_per_device,
            emb: Part { spec: &plan.emb, f: emb_f },
            mlp: plan.mlp.as_ref().map(Part::new),
            transformer: plan.transformer.as_ref().map(Part::new),
            freeze,
            trains: s.task.kind.trains(),
            global_batch: plan.local_emb_batch * emb_f.dup,
        }
    }

    fn max_layers(&self) -> u64 {
        match &self.s.model.arch {
            Arch::Dlrm(d) | Arch::DlrmMoe(d, _) => d.bot_mlp_layers.max(d.top_mlp_layers),
            Arch::DlrmTransformer(d, t) => d.bot_mlp_layers.max(d.top_mlp_layers).max(t.layers),
            Arch::Llm(l) | Arch::LlmMoe(l, _) => l.transformer.layers,
            Arch::Vit(v) => v.layers,
            Arch::Cnn(_) | Arch::EncDec(_) => 0,
        }
    }

    /// A generous guess of the op count, to allocate once.
    fn op_estimate(&self) -> usize {
        let layers = match &self.s.model.arch {
            Arch::Dlrm(d) | Arch::DlrmMoe(d, _) => d.bot_mlp_layers + d.top_mlp_layers,
            Arch::DlrmTransformer(d, t) => d.bot_mlp_layers + d.top_mlp_layers + 2 * t.layers,
            Arch::Llm(l) | Arch::LlmMoe(l, _) => 2 * l.transformer.layers,
            Arch::Vit(v) => 2 * v.layers,
            Arch::Cnn(_) | Arch::EncDec(_) => 0,
        };
        (layers as usize) * 9 + 8
    }

    /// Local batch of a component.
    pub fn batch(&self, which: Batch) -> u64 {
        let p = &self.s.task.plan;
        match which {
            Batch::Mlp => p.local_mlp_batch.unwrap_or(p.local_emb_batch),
            Batch::Emb => p.local_emb_batch,
            Batch::Transformer => p.local_transformer_batch.unwrap_or(p.local_emb_batch),
        }
    }

    /// Local per-layer FLOPs: `(layer_flops * B) / tp` (phi, SPEC 5.1).
    pub fn local_flops(&self, layer_flops: Num, batch: Batch, part: &Part) -> f64 {
        (layer_flops * int(self.batch(batch)) / int(part.f.tp)).f64()
    }

    /// Forward GEMM time of a layer, s: `phi / F`.
    pub fn fwd_s(&self, phi: f64) -> f64 {
        phi / self.flops_per_s
    }

    /// Backward GEMM time of a layer, s: `(2 phi) / F`.
    pub fn bwd_s(&self, phi: f64) -> f64 {
        (2.0 * phi) / self.flops_per_s
    }

    /// Embedding lookup time, s: `lambda / B_mem`.
    pub fn emb_lookup_s(&self) -> f64 {
        self.lookup_bytes_per_device / self.net.mem_bw_bytes_per_s
    }

    /// FSDP all-gather of a block of `w` parameters, s:
    /// `(((w / shard) * g0) * b) / AG(0)` (SPEC 7, "Weight collectives").
    pub fn allgather_s(&self, w: Num, part: &Part) -> f64 {
        let bytes = w / int(part.f.shard) * int(part.first_degree()) * self.b;
        bytes.f64() / self.net.allgather.sel(part.len(), 0)
    }

    /// The running shard factor after each level of a spec (SPEC 7, "Running shard factor"):
    /// starts at `shard(S)`, divided by the degree at fsdp and tp levels (Q13).
    pub fn shard_factors(part: &Part) -> [Num; MAX_LEVELS] {
        let mut sigma = int(part.f.shard);
        let mut out = [sigma; MAX_LEVELS];
        for (level, l) in part.levels().iter().enumerate() {
            if matches!(l.strategy, Strategy::Fsdp | Strategy::Tp) {
                sigma = sigma / int(l.degree);
            }
            out[level] = sigma;
        }
        out
    }

    /// The backward level walk of one block of `w` parameters: the gradient collectives in
    /// level order, sized by the running shard factor, with tensor-parallel levels left to the
    /// caller. Reduce-scatters use level 0's bandwidth (FSDP is always level 0).
    pub fn grad_walk(&self, w: Num, part: &Part) -> Walk {
        let sigma = ReferenceCx::shard_factors(part);
        let k = part.len();
        let mut steps = Walk::default();
        for (level, l) in part.levels().iter().enumerate() {
            let bytes = || (w / sigma[level] * self.b).f64();
            match l.strategy {
                Strategy::Fsdp => steps.push(Step::ReduceScatter(bytes() / self.net.reducescatter.sel(k, 0))),
                Strategy::Tp => steps.push(Step::Tp(level)),
                Strategy::Ddp => steps.push(Step::AllReduce(bytes() / self.net.allreduce.sel(k, level))),
                // cp and ep exist only in the default model; reference rules reject them.
                Strategy::Pp | Strategy::Mp | Strategy::Cp | Strategy::Ep => {}
            }
        }
        steps
    }

    /// `bytes / bw(level)` for every level of a spec of `spec_len` levels, s (a collective's
    /// duration per level, computed once rather than per op).
    pub fn per_level(bytes: f64, bw: &network::LevelBw, spec_len: usize) -> [f64; MAX_LEVELS] {
        let mut out = [0.0; MAX_LEVELS];
        for (level, d) in out.iter_mut().enumerate().take(spec_len.max(1)) {
            *d = bytes / bw.sel(spec_len, level);
        }
        out
    }

    /// Levels of a spec with the given strategy, as level indices.
    pub fn levels(spec: &Spec, strategy: Strategy) -> impl Iterator<Item = usize> + '_ {
        spec.levels().iter().enumerate().filter(move |(_, l)| l.strategy == strategy).map(|(i, _)| i)
    }

    /// The embedding's forward ops: the lookup, then an all-to-all per `mp` level.
    pub fn emb_forward(&self, g: &mut GraphBuilder) {
        g.emit(emb(Phase::Forward, OpKind::Compute), self.emb_lookup_s(), &[]);
        for (level, l) in self.emb.levels().iter().enumerate() {
            if l.strategy == Strategy::Mp {
                g.emit(
                    emb(Phase::Forward, OpKind::EmbAllToAll),
                    self.emb_all2all_s(level),
                    &[Dep::Op(emb(Phase::Forward, OpKind::Compute))],
                );
            }
        }
    }

    /// The embedding's backward collectives, each waiting for `after` (SPEC 8.1 step 2): an
    /// all-to-all per `mp` level; an all-reduce per other level, but only when the *first*
    /// level is ddp (Q7), sized by the lookup bytes (Q8).
    pub fn emb_backward_comm(&self, g: &mut GraphBuilder, after: &[Dep]) {
        let first_is_ddp = self.emb.first_is(Strategy::Ddp);
        for (level, l) in self.emb.levels().iter().enumerate() {
            if l.strategy == Strategy::Mp {
                g.emit(emb(Phase::Backward, OpKind::EmbAllToAll), self.emb_all2all_s(level), after);
            } else if first_is_ddp {
                let ar = self.net.allreduce.sel(self.emb.len(), level);
                g.emit(emb(Phase::Backward, OpKind::EmbAllReduce), self.lookup_bytes_per_device / ar, after);
            }
        }
    }

    /// The embedding's backward lookup, after its collectives.
    pub fn emb_backward_compute(&self, g: &mut GraphBuilder) {
        g.emit(emb(Phase::Backward, OpKind::Compute), self.emb_lookup_s(), &[Dep::EmbComm(Phase::Backward)]);
    }

    /// Embedding all-to-all at level `level`, s: `(2 * (lambda / g)) / A2A(level)`.
    pub(crate) fn emb_all2all_s(&self, level: usize) -> f64 {
        let g = self.emb.levels()[level].degree as f64;
        2.0 * (self.lookup_bytes_per_device / g) / self.net.all2all.sel(self.emb.len(), level)
    }

    fn memory(&self) -> Memory {
        let mut parts = Vec::with_capacity(3);
        if let Some(mlp) = &self.mlp {
            let cap = self.counts.mlp_params * self.b / int(mlp.f.shard);
            parts.push((MemPart::Mlp, cap.f64()));
        }
        let emb_cap = self.counts.emb_params * self.s.model.bytes_per_emb_param / int(self.emb.f.shard);
        parts.push((MemPart::Emb, emb_cap.f64()));
        if let Some(t) = &self.transformer {
            let cap = self.counts.transformer_params * self.b / int(t.f.shard);
            parts.push((MemPart::Transformer, cap.f64()));
        }
        Memory::of_parts(parts, self.s.system.mem_cap_bytes)
    }

    fn work(&self) -> Work {
        let l = &self.counts.layers;
        let mut layers = Vec::new();
        let mut local_total = 0.0;
        let g = int(self.global_batch);
        let mut add = |label: &'static str, flops: Num, batch: Batch, part: &Part, count: u64| {
            let local = self.local_flops(flops, batch, part);
            local_total += local * count as f64;
            layers.push(LayerWork { label, local_flops: local, global_flops: (flops * g).f64() });
        };
        match &self.s.model.arch {
            Arch::Dlrm(d) | Arch::DlrmTransformer(d, _) => {
                if let Some(m) = &self.mlp {
                    add("MLP layer", l.mlp_flops, Batch::Mlp, m, d.bot_mlp_layers + d.top_mlp_layers);
                }
            }
            Arch::DlrmMoe(d, _) => {
                if let Some(m) = &self.mlp {
                    add("Bottom MLP layer", l.mlp_flops, Batch::Mlp, m, d.bot_mlp_layers);
                    add("Top MLP (MoE) layer", l.top_mlp_flops, Batch::Mlp, m, d.top_mlp_layers);
                }
            }
            _ => {}
        }
        if let Some(t) = &self.transformer {
            let n = self.transformer_layers();
            add("Attention layer", l.attn_flops, Batch::Transformer, t, n);
            add("Transformer FC layer", l.fc_flops, Batch::Transformer, t, n);
        }
        let plan = &self.s.task.plan;
        let lookup = self.counts.lookup_bytes;
        Work {
            layers,
            local_total_flops: local_total,
            global_total_flops: (self.counts.total_flops * g).f64(),
            lookup_bytes_per_local_batch: (lookup * int(plan.local_emb_batch)).f64(),
            lookup_bytes_per_global_batch: (lookup * g).f64(),
            lookup_bytes_per_device: self.lookup_bytes_per_device,
        }
    }

    /// Transformer layer count (0 for pure DLRMs).
    pub fn transformer_layers(&self) -> u64 {
        match &self.s.model.arch {
            Arch::DlrmTransformer(_, t) => t.layers,
            Arch::Llm(l) | Arch::LlmMoe(l, _) => l.transformer.layers,
            Arch::Vit(v) => v.layers,
            Arch::Dlrm(_) | Arch::DlrmMoe(..) | Arch::Cnn(_) | Arch::EncDec(_) => 0,
        }
    }

    fn model_stats(&self) -> ModelStats {
        let c = &self.counts;
        ModelStats {
            params: c.total_params().f64(),
            dense_params: (c.mlp_params + c.transformer_params).f64(),
            emb_params: c.emb_params.f64(),
            flops_per_sample: c.total_flops.f64(),
            lookup_bytes_per_sample: c.lookup_bytes.f64(),
        }
    }

    fn system_stats(&self) -> SystemStats {
        let n = &self.net;
        SystemStats {
            devices: self.s.system.num_devices,
            nodes: self.s.system.num_nodes,
            devices_per_node: n.devices_per_node,
            flops_per_s: self.flops_per_s,
            mem_bw_bytes_per_s: n.mem_bw_bytes_per_s,
            intra_node_bytes_per_s: n.intra_bytes_per_s,
            inter_node_bytes_per_s: n.inter_bytes_per_s,
            all2all_bytes_per_s: n.all2all.last(),
            allreduce_bytes_per_s: n.allreduce.last(),
            allgather_bytes_per_s: n.allgather.last(),
            reducescatter_bytes_per_s: n.reducescatter.last(),
        }
    }
}

/// One component's parallel spec with its factors, computed once.
#[derive(Clone, Copy, Debug)]
pub struct Part<'a> {
    pub spec: &'a Spec,
    pub f: Factors,
}

impl<'a> Part<'a> {
    fn new(spec: &'a Spec) -> Part<'a> {
        Part { spec, f: Factors::of(spec) }
    }
}

impl std::ops::Deref for Part<'_> {
    type Target = Spec;
    fn deref(&self) -> &Spec {
        self.spec
    }
}

/// Which local batch a quantity uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Batch {
    Mlp,
    Emb,
    Transformer,
}

/// The steps of a backward level walk, one per level at most (no allocation).
#[derive(Clone, Copy, Debug, Default)]
pub struct Walk {
    steps: [Option<Step>; MAX_WALK],
    len: usize,
}

/// Levels a walk holds; reference-mode specs have at most two.
const MAX_WALK: usize = 4;

impl Walk {
    fn push(&mut self, s: Step) {
        if self.len < MAX_WALK {
            self.steps[self.len] = Some(s);
            self.len += 1;
        }
    }

    /// The steps in level order.
    pub fn iter(&self) -> impl Iterator<Item = Step> + '_ {
        self.steps[..self.len].iter().flatten().copied()
    }
}

/// One step of a backward level walk.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// DDP gradient all-reduce, s.
    AllReduce(f64),
    /// FSDP gradient reduce-scatter, s.
    ReduceScatter(f64),
    /// A tensor-parallel level (its index): the caller emits activation collectives.
    Tp(usize),
}

/// An op name.
pub fn name(block: Block, layer: i64, phase: Phase, kind: OpKind) -> OpName {
    OpName::new(block, layer.clamp(i32::MIN as i64, i32::MAX as i64) as i32, phase, kind)
}

/// A dependency on a named op.
pub fn on(block: Block, layer: i64, phase: Phase, kind: OpKind) -> Dep {
    Dep::Op(name(block, layer, phase, kind))
}

/// `dep` when `cond` holds, else nothing (keeps dependency lists of fixed length).
pub fn when(cond: bool, dep: Dep) -> Dep {
    if cond {
        dep
    } else {
        Dep::Nothing
    }
}

/// An embedding op name.
pub fn emb(phase: Phase, kind: OpKind) -> OpName {
    name(Block::Emb, 0, phase, kind)
}
