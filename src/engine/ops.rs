//! Ops and the op graph: what runs on which stream, for how long, after what.
//!
//! An op is a GEMM, an embedding lookup or a collective, on the computation stream or the
//! communication stream. Names are structured ([`OpName`]) and only rendered to text on demand,
//! so building thousands of ops allocates nothing per op. Dependencies are resolved to op indices
//! while the graph is built ([`GraphBuilder::emit`]); the scheduler never looks at names.
//! This module knows nothing about models, systems or the reference's quirks.

use super::schedule::{later, Schedule, Scheduler};
use serde::{Serialize, Serializer};
use std::fmt;

/// The two streams of a GPU in the MAD-Max model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Stream {
    Computation,
    Communication,
}

/// Forward or backward. Each phase starts once every op of the previous phase has ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Phase {
    Forward,
    Backward,
}

/// The model block an op belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Block {
    /// Embedding tables (DLRM) or word/patch embeddings (transformers).
    Emb,
    MlpBot,
    MlpTop,
    Attn,
    /// A transformer's feed-forward (FC) layers.
    Fc,
    /// Mixture-of-experts token routing.
    Moe,
    /// The output (logits) layer and its loss (default model).
    Head,
    /// The pipeline as a whole: fill and drain idle time (default model).
    Pipeline,
    /// The optimizer step (default model).
    Optimizer,
    /// The input pipeline (data loader; default model).
    Input,
    /// DLRM's feature interaction (pairwise dot products; default model).
    Interaction,
    /// One decode step of LLM serving, all layers together (default model).
    Decode,
}

/// What an op does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum OpKind {
    /// GEMMs of a layer, or an embedding lookup.
    Compute,
    /// FSDP all-gather of a block's weights.
    WeightAllGather,
    /// Data-parallel all-reduce of a block's weight gradients.
    GradAllReduce,
    /// FSDP reduce-scatter of a block's weight gradients.
    GradReduceScatter,
    /// Tensor-parallel all-reduce of activations.
    ActAllReduce,
    /// Model-parallel embedding all-to-all.
    EmbAllToAll,
    /// All-reduce of embedding gradients.
    EmbAllReduce,
    /// MoE dispatch all-to-all (before the experts).
    MoeDispatch,
    /// MoE combine all-to-all (after the experts).
    MoeCombine,
    /// Sequence-parallel all-gather of activations (default model).
    ActAllGather,
    /// Sequence-parallel reduce-scatter of activations (default model).
    ActReduceScatter,
    /// Point-to-point transfer of activations or their gradients between pipeline stages.
    PipeTransfer,
    /// Context-parallel ring exchange of key/value blocks (ring attention).
    KvRing,
    /// Time the computation stream waits with nothing to do: pipeline fill or drain, input.
    Idle,
}

/// The time accumulator an op adds to (SPEC section 6, "Accumulators").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Category {
    Gemm,
    Emb,
    /// The optimizer step (memory-bound; default model).
    Optimizer,
    AllToAll,
    AllReduce,
    AllGather,
    ReduceScatter,
    /// Pipeline point-to-point and ring transfers (default model).
    P2p,
    /// Computation-stream idle time that is not waiting on communication: the pipeline
    /// bubble, a slow input pipeline (default model).
    Idle,
}

impl Category {
    pub const ALL: [Category; 9] = [
        Category::Gemm,
        Category::Emb,
        Category::Optimizer,
        Category::AllToAll,
        Category::AllReduce,
        Category::AllGather,
        Category::ReduceScatter,
        Category::P2p,
        Category::Idle,
    ];

    /// A label for people.
    pub fn label(self) -> &'static str {
        match self {
            Category::Gemm => "GEMM",
            Category::Emb => "EMB",
            Category::AllToAll => "All-to-All",
            Category::AllReduce => "AllReduce",
            Category::AllGather => "AllGather",
            Category::ReduceScatter => "ReduceScatter",
            Category::Optimizer => "Optimizer",
            Category::P2p => "P2P",
            Category::Idle => "Idle",
        }
    }

    /// True for communication categories.
    pub fn is_comm(self) -> bool {
        !matches!(self, Category::Gemm | Category::Emb | Category::Optimizer | Category::Idle)
    }

    /// True for work on the computation stream (not idle, not communication).
    pub fn is_compute(self) -> bool {
        matches!(self, Category::Gemm | Category::Emb | Category::Optimizer)
    }
}

/// An op's name, structured. `Display` renders the reference's spelling, e.g. `Attn3_f.`,
/// `TransformerFC3_b_c_wg_rs`, `MLPTop0_b_c_wg_ar`, `EMB_f_c_all2all.`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpName {
    pub block: Block,
    /// Layer index (0 for embeddings). May be out of range in a dependency, which then matches
    /// nothing, as in the reference (SPEC Q18). Decode ops: the last decode step of the run
    /// of steps the op stands for (its first is `micro`).
    pub layer: i32,
    pub phase: Phase,
    pub kind: OpKind,
    /// Pipeline micro-batch, counted from 1; 0 when the model has no micro-batches (reference
    /// mode, and the default model's once-per-iteration ops).
    pub micro: u32,
}

impl OpName {
    /// A name without a micro-batch.
    pub const fn new(block: Block, layer: i32, phase: Phase, kind: OpKind) -> OpName {
        OpName { block, layer, phase, kind, micro: 0 }
    }

    /// The same name for micro-batch `micro` (from 1).
    pub const fn micro(self, micro: u32) -> OpName {
        OpName { micro, ..self }
    }

    /// The stream this op runs on.
    pub fn stream(&self) -> Stream {
        match self.kind {
            OpKind::Compute | OpKind::Idle => Stream::Computation,
            _ => Stream::Communication,
        }
    }

    /// The accumulator this op adds to.
    pub fn category(&self) -> Category {
        // A table, not a match: this runs once per op on the hot path.
        const BY_KIND: [Category; 14] = [
            Category::Gemm,          // Compute (Emb and Optimizer blocks: below)
            Category::AllGather,     // WeightAllGather
            Category::AllReduce,     // GradAllReduce
            Category::ReduceScatter, // GradReduceScatter
            Category::AllReduce,     // ActAllReduce
            Category::AllToAll,      // EmbAllToAll
            Category::AllReduce,     // EmbAllReduce
            Category::AllToAll,      // MoeDispatch
            Category::AllToAll,      // MoeCombine
            Category::AllGather,     // ActAllGather
            Category::ReduceScatter, // ActReduceScatter
            Category::P2p,           // PipeTransfer
            Category::P2p,           // KvRing
            Category::Idle,          // Idle
        ];
        match (self.kind, self.block) {
            (OpKind::Compute, Block::Emb) => Category::Emb,
            (OpKind::Compute, Block::Optimizer) => Category::Optimizer,
            _ => BY_KIND[self.kind as usize],
        }
    }
}

impl fmt::Display for OpName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = match self.block {
            Block::Emb => "EMB",
            Block::MlpBot => "MLPBot",
            Block::MlpTop => "MLPTop",
            Block::Attn => "Attn",
            Block::Fc => "TransformerFC",
            Block::Moe => "MoE",
            Block::Head => "Logits",
            Block::Pipeline => "Pipeline",
            Block::Optimizer => "Optimizer",
            Block::Input => "Input",
            Block::Interaction => "Interaction",
            Block::Decode => "Decode",
        };
        // The default model's once-per-iteration and pipeline ops have plain names.
        let plain = match (self.block, self.kind, self.phase) {
            (Block::Optimizer, OpKind::Compute, _) => Some("OptimizerStep"),
            (Block::Optimizer, OpKind::GradAllReduce, _) => Some("GradAllReduce"),
            (Block::Optimizer, OpKind::GradReduceScatter, _) => Some("GradReduceScatter"),
            (Block::Optimizer, OpKind::WeightAllGather, _) => Some("WeightAllGather"),
            (Block::Pipeline, OpKind::PipeTransfer, Phase::Forward) => Some("PipeRecv"),
            (Block::Pipeline, OpKind::PipeTransfer, Phase::Backward) => Some("PipeSend"),
            _ => None,
        };
        if self.block == Block::Decode {
            // The first decode step rides in `micro`, the last of a run of steps in `layer`.
            let what = match self.kind {
                OpKind::Compute => "",
                OpKind::PipeTransfer => "_c_p2p",
                OpKind::MoeDispatch | OpKind::MoeCombine => "_c_all2all",
                _ => "_c_act_ar",
            };
            let last = self.layer.max(0) as u32;
            return if last > self.micro {
                write!(f, "DecodeSteps{}-{last}{what}", self.micro)
            } else {
                write!(f, "DecodeStep{}{what}", self.micro)
            };
        }
        if let Some(p) = plain {
            f.write_str(p)?;
            if self.micro > 0 {
                write!(f, " mb{}", self.micro)?;
            }
            return Ok(());
        }
        if self.kind == OpKind::Idle {
            let what = match (self.block, self.phase) {
                (Block::Pipeline, Phase::Forward) => "PipelineFill",
                (Block::Pipeline, Phase::Backward) => "PipelineDrain",
                _ => "InputWait",
            };
            return f.write_str(what);
        }
        f.write_str(prefix)?;
        if !matches!(
            self.block,
            Block::Emb
                | Block::Head
                | Block::Pipeline
                | Block::Optimizer
                | Block::Input
                | Block::Interaction
                | Block::Decode
        ) {
            write!(f, "{}", self.layer)?;
        }
        f.write_str(match self.phase {
            Phase::Forward => "_f",
            Phase::Backward => "_b",
        })?;
        let mlp = matches!(self.block, Block::MlpBot | Block::MlpTop);
        f.write_str(match self.kind {
            OpKind::Compute => ".",
            OpKind::WeightAllGather => "_c_wgt_ag.",
            OpKind::GradAllReduce => "_c_wg_ar",
            // The reference spells the MLP reduce-scatter with a dot, the transformer one without.
            OpKind::GradReduceScatter if mlp => "_c_wg_rs.",
            OpKind::GradReduceScatter => "_c_wg_rs",
            OpKind::ActAllReduce => "_c_act_ar.",
            OpKind::EmbAllToAll => "_c_all2all.",
            OpKind::EmbAllReduce => "_c_ar.",
            OpKind::MoeDispatch => "_c_act_all2all1.",
            OpKind::MoeCombine => "_c_act_all2all2.",
            OpKind::ActAllGather => "_c_act_ag.",
            OpKind::ActReduceScatter => "_c_act_rs.",
            OpKind::PipeTransfer => "_c_p2p.",
            OpKind::KvRing => "_c_kv_ring.",
            OpKind::Idle => "",
        })?;
        if self.micro > 0 {
            write!(f, " mb{}", self.micro)?;
        }
        Ok(())
    }
}

impl Serialize for OpName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The dependencies of an op, kept as the latest op it waits for on each stream.
///
/// Each stream runs its ops in emission order, so end times along a stream never decrease: the
/// latest dependency on a stream is the one that ends last, and it alone bounds the start time.
/// Keeping one index per stream is therefore exact for scheduling, and it names the op that
/// actually gates this one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Deps {
    /// One more than the index of the latest dependency on [computation, communication]; 0 when
    /// there is none. (Offset by one so that "none" is the smallest value: merging is a `max`.)
    latest: [u32; 2],
}

impl Deps {
    /// The dependency indices: at most one per stream, the computation stream's first.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.latest.iter().filter(|&&x| x > 0).map(|x| x - 1)
    }

    /// These dependencies and op `id` of `stream`.
    pub fn and(self, id: u32, stream: Stream) -> Deps {
        let mut latest = self.latest;
        latest[stream as usize] = latest[stream as usize].max(id + 1);
        Deps { latest }
    }

    /// The dependency indices as a vector (for display and tests).
    pub fn to_vec(&self) -> Vec<u32> {
        self.ids().collect()
    }
}

impl Serialize for Deps {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.ids())
    }
}

/// One op of the graph; `start_s` is filled in by the scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Op {
    pub name: OpName,
    pub duration_s: f64,
    /// Indices of the ops that must end before this one starts.
    pub deps: Deps,
    pub start_s: f64,
}

impl Op {
    /// End time, s.
    pub fn end_s(&self) -> f64 {
        self.start_s + self.duration_s
    }
}

/// A dependency as written in a model's op list: a name, the family of an embedding's
/// communication ops (the reference's loose pattern `EMB_f_c` / `EMB_b_c`, SPEC Q30), or
/// nothing (a placeholder that keeps dependency lists of fixed length).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dep {
    Op(OpName),
    EmbComm(Phase),
    Nothing,
}

/// Which ops a dependency may point at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visibility {
    /// MAD-Max semantics: only ops of the *other* stream, in the current phase, already emitted
    /// (SPEC section 6; same-stream dependencies are inert, Q17).
    OtherStream,
}

/// Builds an op graph in emission order, resolving each dependency to the latest matching op
/// emitted so far (the one that ends last, since each stream runs in order), and placing each
/// op on its stream with the [`Scheduler`] as it comes.
///
/// The lookup is a table indexed by (block/kind pair, phase, layer) holding the latest op of
/// that name (its index plus one). Layers from -2 to `max_layers + 1` have
/// slots; those outside `0..max_layers` are never written, nor is slot 0 (what a pair that no
/// dependency names reads), so names that match nothing (Q18) read "none" without a test. Ops
/// that no dependency names are written to the last slot, which is never read. Everything is inlined and
/// branch-light: building the graph is the engine's hot path.
pub struct GraphBuilder {
    ops: Vec<Op>,
    scheduler: Scheduler,
    latest: Vec<Entry>,
    /// Slots per (pair, phase): `max_layers + 4` (two below, two above).
    width: usize,
    visibility: Visibility,
}

/// The latest op of a name: its index plus one (0: none). Small and zero-initialised, so that
/// a fresh table comes straight from the allocator.
type Entry = u32;

/// Padding slots below layer 0 (dependencies name layers down to -2).
const PAD: i64 = 2;

impl GraphBuilder {
    /// A builder for a model whose blocks have at most `max_layers` layers, expecting about
    /// `capacity` ops.
    pub fn new(max_layers: u64, capacity: usize, visibility: Visibility) -> GraphBuilder {
        let width = max_layers as usize + 2 * PAD as usize;
        GraphBuilder {
            ops: Vec::with_capacity(capacity),
            scheduler: Scheduler::default(),
            latest: vec![0; 2 + NAMEABLE_PAIRS * 2 * width],
            width,
            visibility,
        }
    }

    /// Appends an op that waits for `deps` (resolved now, against the ops emitted so far) and
    /// places it on its stream.
    #[inline(always)]
    pub fn emit(&mut self, name: OpName, duration_s: f64, deps: &[Dep]) {
        let own = name.stream() as usize;
        let mut ids = [0u32; 2];
        let mut ready_s = 0.0;
        for dep in deps {
            let (slot, stream) = match *dep {
                Dep::Op(n) => (self.slot(nameable(n.block, n.kind), n.phase, n.layer), n.stream() as usize),
                Dep::EmbComm(phase) => (self.slot(EMB_COMM, phase, 0), Stream::Communication as usize),
                Dep::Nothing => (0, own),
            };
            let visible = match self.visibility {
                Visibility::OtherStream => stream != own,
            };
            let id1 = if visible { self.latest[slot] } else { 0 };
            ids[stream] = ids[stream].max(id1);
            if let Some(op) = self.ops.get((id1 as usize).wrapping_sub(1)) {
                ready_s = later(ready_s, op.end_s());
            }
        }
        let deps = Deps { latest: ids };
        let start_s = self.scheduler.place(name, duration_s, ready_s);
        // Ops no dependency names go to the last slot, which is never read.
        let pair = nameable(name.block, name.kind);
        let own_slot = if pair == NO { self.latest.len() - 1 } else { self.slot(pair, name.phase, name.layer) };
        self.latest[own_slot] = self.ops.len() as u32 + 1;
        self.ops.push(Op { name, duration_s, deps, start_s });
    }

    /// The finished graph, in emission order, with start times; and its schedule.
    pub fn finish(self) -> (Vec<Op>, Schedule) {
        let schedule = self.scheduler.finish();
        (self.ops, schedule)
    }

    /// The table slot of a name; 0 (never written) for a pair no dependency names.
    #[inline(always)]
    fn slot(&self, pair: u8, phase: Phase, layer: i32) -> usize {
        // Layers outside the padded range clamp onto a padding slot, which is never written.
        let l = (layer as i64 + PAD).clamp(0, self.width as i64 - 1) as usize;
        let s = 1 + (pair as usize * 2 + phase as usize) * self.width + l;
        if pair == NO {
            0
        } else {
            s
        }
    }
}

/// The slot family of each block/kind pair a dependency can name, by `[block][kind]`; `NO` for
/// ops no dependency ever names (gradient collectives). The embedding's collectives share one
/// family: dependencies name them together (`EMB_*_c`, SPEC Q30).
const NO: u8 = u8::MAX;
const EMB_COMM: u8 = 15;
const NAMEABLE_PAIRS: usize = 16;
#[rustfmt::skip]
const PAIR: [[u8; 9]; 6] = [
    // Compute WgtAG GradAR GradRS ActAR EmbA2A EmbAR MoeDisp MoeComb
    [14, NO, NO, NO, NO, EMB_COMM, EMB_COMM, NO, NO], // Emb
    [0, 1, NO, NO, 2, NO, NO, NO, NO],                 // MlpBot
    [3, 4, NO, NO, 5, NO, NO, NO, NO],                 // MlpTop
    [6, 7, NO, NO, 8, NO, NO, NO, NO],                 // Attn
    [9, 10, NO, NO, 11, NO, NO, NO, NO],               // Fc
    [NO, NO, NO, NO, NO, NO, NO, 12, 13],              // Moe
];

/// The slot family of a name; the default model's blocks and kinds are never named by a
/// reference dependency.
fn nameable(block: Block, kind: OpKind) -> u8 {
    match PAIR.get(block as usize).and_then(|row| row.get(kind as usize)) {
        Some(&p) => p,
        None => NO,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(block: Block, layer: i32, phase: Phase, kind: OpKind) -> OpName {
        OpName::new(block, layer, phase, kind)
    }

    #[test]
    fn names_render_like_the_reference() {
        use Block::*;
        use OpKind::*;
        use Phase::*;
        let cases = [
            (name(Emb, 0, Forward, Compute), "EMB_f."),
            (name(Emb, 0, Forward, EmbAllToAll), "EMB_f_c_all2all."),
            (name(Emb, 0, Backward, EmbAllReduce), "EMB_b_c_ar."),
            (name(MlpBot, 3, Forward, WeightAllGather), "MLPBot3_f_c_wgt_ag."),
            (name(MlpTop, 2, Backward, GradAllReduce), "MLPTop2_b_c_wg_ar"),
            (name(MlpTop, 2, Backward, GradReduceScatter), "MLPTop2_b_c_wg_rs."),
            (name(Fc, 11, Backward, GradReduceScatter), "TransformerFC11_b_c_wg_rs"),
            (name(Attn, 0, Forward, ActAllReduce), "Attn0_f_c_act_ar."),
            (name(Moe, 5, Backward, MoeDispatch), "MoE5_b_c_act_all2all1."),
            (name(Moe, 5, Forward, MoeCombine), "MoE5_f_c_act_all2all2."),
        ];
        for (n, want) in cases {
            assert_eq!(n.to_string(), want);
        }
    }

    #[test]
    fn dependencies_resolve_to_the_latest_op_of_the_other_stream_only() {
        use Block::*;
        use OpKind::*;
        use Phase::*;
        let mut b = GraphBuilder::new(4, 8, Visibility::OtherStream);
        let ag0 = name(Attn, 0, Forward, WeightAllGather);
        let c0 = name(Attn, 0, Forward, Compute);
        let c1 = name(Attn, 1, Forward, Compute);
        b.emit(ag0, 1.0, &[Dep::Op(name(Attn, -1, Forward, Compute))]); // index 0: matches nothing
        b.emit(c0, 1.0, &[Dep::Op(ag0)]); // 1: waits for 0
        b.emit(c1, 1.0, &[Dep::Op(c0), Dep::Op(name(Attn, 1, Forward, WeightAllGather))]); // 2
        let (ops, _) = b.finish();
        assert_eq!(ops[0].deps.to_vec(), Vec::<u32>::new());
        assert_eq!(ops[1].deps.to_vec(), vec![0]);
        // Same-stream dependency (c0) is inert; the all-gather of layer 1 was never emitted.
        assert_eq!(ops[2].deps.to_vec(), Vec::<u32>::new());
    }

    #[test]
    fn emb_comm_family_matches_both_collectives() {
        use Block::*;
        use OpKind::*;
        use Phase::*;
        let mut b = GraphBuilder::new(1, 4, Visibility::OtherStream);
        b.emit(name(Emb, 0, Backward, EmbAllReduce), 1.0, &[]);
        b.emit(name(Emb, 0, Backward, EmbAllToAll), 1.0, &[]);
        b.emit(name(Emb, 0, Backward, Compute), 1.0, &[Dep::EmbComm(Backward)]);
        assert_eq!(b.finish().0[2].deps.to_vec(), vec![1]);
    }

    #[test]
    fn only_the_latest_dependency_per_stream_is_kept() {
        use Block::*;
        use OpKind::*;
        use Phase::*;
        let mut b = GraphBuilder::new(4, 8, Visibility::OtherStream);
        b.emit(name(Attn, 0, Forward, Compute), 1.0, &[]); // 0
        b.emit(name(Attn, 0, Forward, ActAllReduce), 1.0, &[]); // 1
        b.emit(name(Fc, 0, Forward, Compute), 1.0, &[]); // 2
        b.emit(name(Fc, 0, Forward, ActAllReduce), 5.0, &[]); // 3
                                                              // Waits on two comm ops and nothing: only the later comm op is kept.
        let deps =
            [Dep::Op(name(Fc, 0, Forward, ActAllReduce)), Dep::Nothing, Dep::Op(name(Attn, 0, Forward, ActAllReduce))];
        b.emit(name(Attn, 1, Forward, Compute), 1.0, &deps);
        let (ops, _) = b.finish();
        assert_eq!(ops[4].deps.to_vec(), vec![3]);
        assert_eq!(ops[4].start_s, ops[3].end_s());
    }
}
