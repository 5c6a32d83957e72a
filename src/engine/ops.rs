//! Ops and the op graph: what runs on which stream, for how long, after what.
//!
//! An op is a GEMM, an embedding lookup or a collective, on the computation stream or the
//! communication stream. Names are structured ([`OpName`]) and only rendered to text on demand,
//! so building thousands of ops allocates nothing per op. Dependencies are op indices ([`Deps`]),
//! resolved while the graph is built (by name in reference mode,
//! [`crate::engine::reference::graph::GraphBuilder::emit`]); the scheduler never looks at names.
//! This module knows nothing about models, systems or the reference's quirks.

use serde::{Serialize, Serializer};
use std::fmt;

/// The streams of a GPU: MAD-Max's two, and in the default model a third for the
/// data-parallel collectives of a plan whose data-parallel ranks span nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Stream {
    Computation,
    Communication,
    /// The weight gathers and gradient reductions of the data-parallel ranks, where they cross
    /// nodes (default model): they run on a communicator and a CUDA stream of their own (each
    /// process group has one in PyTorch) and over the NICs, while the tensor-parallel,
    /// expert and pipeline transfers run over NVLink on theirs, so neither waits behind the
    /// other ([`OpName::data_parallel_stream`]).
    DataParallel,
}

impl Stream {
    /// Every stream, in lane order.
    pub const ALL: [Stream; 3] = [Stream::Computation, Stream::Communication, Stream::DataParallel];

    /// Whether the stream runs collectives and transfers.
    pub fn communicates(self) -> bool {
        self != Stream::Computation
    }
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
    /// A convolutional network's block: its stem, a residual block, an inception module or an
    /// mlpconv block, or its classifier (default model).
    Conv,
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

impl OpKind {
    /// Whether the op is a collective of the data-parallel ranks: a weight gather (ZeRO-3,
    /// FSDP) or a gradient reduction.
    pub fn is_data_parallel(self) -> bool {
        matches!(self, OpKind::WeightAllGather | OpKind::GradAllReduce | OpKind::GradReduceScatter)
    }
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
    /// Whether the op runs on the data-parallel stream ([`Stream::DataParallel`]); never in
    /// reference mode.
    pub data_parallel_stream: bool,
}

impl OpName {
    /// A name without a micro-batch.
    pub const fn new(block: Block, layer: i32, phase: Phase, kind: OpKind) -> OpName {
        OpName { block, layer, phase, kind, micro: 0, data_parallel_stream: false }
    }

    /// The same name for micro-batch `micro` (from 1).
    pub const fn micro(self, micro: u32) -> OpName {
        OpName { micro, ..self }
    }

    /// The same name on the data-parallel stream ([`Stream::DataParallel`]).
    pub const fn on_data_parallel_stream(self) -> OpName {
        OpName { data_parallel_stream: true, ..self }
    }

    /// The stream this op runs on.
    pub fn stream(&self) -> Stream {
        if self.data_parallel_stream {
            return Stream::DataParallel;
        }
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
            Block::Conv => "Conv",
        };
        // The default model's once-per-iteration and pipeline ops have plain names.
        let plain = match (self.block, self.kind, self.phase) {
            (Block::Optimizer, OpKind::Compute, _) => Some("OptimizerStep"),
            (Block::Optimizer, OpKind::GradAllReduce, _) => Some("GradAllReduce"),
            (Block::Optimizer, OpKind::GradReduceScatter, _) => Some("GradReduceScatter"),
            (Block::Optimizer, OpKind::WeightAllGather, _) => Some("WeightAllGather"),
            (Block::Pipeline, OpKind::PipeTransfer, Phase::Forward) => Some("PipeRecv"),
            (Block::Pipeline, OpKind::PipeTransfer, Phase::Backward) => Some("PipeSend"),
            (Block::Pipeline, OpKind::Compute, Phase::Forward) => Some("PrefillMicroBatches"),
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
                (Block::Emb, Phase::Forward) => "TablesWait_f",
                (Block::Emb, Phase::Backward) => "TablesWait_b",
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
    /// One more than the index of the latest dependency on each stream ([`Stream::ALL`]); 0
    /// when there is none. (Offset by one so that "none" is the smallest value: merging is a
    /// `max`.)
    latest: [u32; 3],
}

impl Deps {
    /// Dependencies given as one more than the index of the latest op on [computation,
    /// communication], 0 for none (a graph builder's lookup table holds them so).
    pub fn of_latest([computation, communication]: [u32; 2]) -> Deps {
        Deps { latest: [computation, communication, 0] }
    }

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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An op name (shorter to write in tests; the graph builder's and the scheduler's use it).
    pub(crate) fn name(block: Block, layer: i32, phase: Phase, kind: OpKind) -> OpName {
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
}
