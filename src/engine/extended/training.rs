//! The default model's per-scenario quantities for a transformer ([`TrainingCx`]): the rates
//! it runs at, each op's duration (GEMMs by shape, element-wise traffic, collectives, the host's
//! floor), memory per pipeline stage, and model and hardware FLOPs. The timeline that puts the
//! ops in order is [`super::iteration`]; serving and the explanations read the same context.
//!
//! One job: the durations, memory and FLOPs of a transformer's ops in the default model.

use super::calibration::{
    ADAM_BYTES_PER_PARAM, EAGER_NORM_KERNELS, FP8_CAST_WRITE_BYTES, FP8_GEMM_EFFICIENCY,
    FP8_WEIGHT_COPY_BYTES_PER_PARAM, FUSED_BACKWARD_SCORE_REPLAY, HOST_BLOCK_S, KERNELS_PER_BLOCK, KERNEL_OVERHEAD_S,
    METRIC_CAST_BYTES, METRIC_LOG_SOFTMAX_BYTES, OPTIMIZER_BYTES_PER_PARAM, WORKSPACE_BYTES,
};
use super::collective::{deepep_all_to_all_s, time_s, Collective, Group, Links, Placement};
use super::gemm::{Gemm, GemmGpu};
use super::layout::Layout;
use super::mixed::StagesByType;
use super::shape::Dims;
use crate::engine::ops::{Block, OpKind};
use crate::engine::report::{Limit, MemPart, Memory};
use crate::engine::scenario::{MoeDispatch, Recompute, Scenario, Setup, TaskKind};

/// Per-scenario quantities of the default model: everything the timeline, the memory figure
/// and the explanations read.
#[derive(Clone, Debug)]
pub struct TrainingCx<'a> {
    pub s: &'a Scenario,
    pub d: Dims,
    pub lay: Layout,
    pub links: Links,
    pub setup: &'a Setup,
    /// Effective FLOP rate per GPU at the model's precision (peak x utilisation), FLOP/s.
    pub flops_per_s: f64,
    /// Datasheet peak FLOP rate per GPU at the model's precision, FLOP/s.
    pub peak_flops_per_s: f64,
    /// With FP8 training, the FP8 GEMM rate per GPU (FP8 peak x utilisation x
    /// [`FP8_GEMM_EFFICIENCY`]), FLOP/s; `None` without.
    pub fp8_flops_per_s: Option<f64>,
    /// Effective HBM bandwidth per GPU, bytes/s.
    pub hbm_bytes_per_s: f64,
    /// HBM bandwidth a GEMM's own reads and writes reach per GPU, bytes/s: `mem_bw x
    /// gemm_bw_util` ([`crate::engine::scenario::System::gemm_bw_fraction`]).
    pub gemm_hbm_bytes_per_s: f64,
    /// Streaming multiprocessors per GPU (`system.sm_count`); `None`: not known.
    pub sms: Option<u64>,
    pub trains: bool,
    /// Samples per data-parallel rank per iteration (the local batch).
    pub local_batch: u64,
    /// Samples per micro-batch.
    pub micro_batch: u64,
    /// Micro-batches per iteration per pipeline, m.
    pub micro_batches: u64,
    /// Pipeline chunks per GPU, v.
    pub chunks: u64,
    /// The pipeline stage drawn and timed (0-based): the slowest one, which paces the others.
    pub stage: u64,
    /// Tokens one GPU processes per micro-batch: micro x s / cp.
    pub tokens: f64,
    pub global_batch: u64,
    /// How many layers train, counted from the first (fine-tuning freezes the layers from
    /// `min_frozen_layer` up, or all of them).
    pub trainable_layers: u64,
    /// Whether the embedding trains.
    pub emb_trains: bool,
    /// A pipeline placed by speed on a cluster of two GPU types (`None` otherwise): each
    /// stage's layers and rates.
    pub by_type: Option<std::sync::Arc<StagesByType>>,
}

/// A gradient synchronisation after the backward pass: `times` collectives of `bytes` each
/// over `group`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GradSync {
    pub kind: OpKind,
    pub collective: Collective,
    pub bytes: f64,
    pub group: Group,
    pub times: f64,
}

/// Durations of one layer's ops for one micro-batch, s.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LayerTimes {
    pub attn_fwd_s: f64,
    pub ffn_fwd_s: f64,
    /// Backward of the attention block, recomputation included.
    pub attn_bwd_s: f64,
    pub ffn_bwd_s: f64,
    /// One tensor-parallel collective of a block's activations (an all-reduce, or with
    /// sequence parallelism one all-gather or one reduce-scatter).
    pub tp_comm_s: f64,
    /// The same for the attention block: `tp_comm_s`, or twice that in a decoder layer of an
    /// encoder-decoder (self-attention and cross-attention each end in one).
    pub attn_tp_comm_s: f64,
    /// The same for the feed-forward block: `tp_comm_s`, or under expert tensor parallelism
    /// the gather (scatter) of its tokens over the ranks that split each expert, none when no
    /// rank does ([`TrainingCx::expert_token_share`]).
    pub ffn_tp_comm_s: f64,
    /// One MoE all-to-all (dispatch or combine).
    pub moe_a2a_s: f64,
    /// The context-parallel key/value ring of one attention forward pass.
    pub kv_ring_s: f64,
    /// One ZeRO-3 all-gather of the layer's weights.
    pub weight_gather_s: f64,
    /// ZeRO 1/2's all-gather of the layer's updated weights during the first micro-batch's
    /// forward pass ([`TrainingCx::gathers_updated_weights_in_forward`]; else 0).
    pub param_sync_s: f64,
    /// One reduce-scatter (ZeRO-2/3) or all-reduce (otherwise) of the layer's gradients.
    pub grad_sync_s: f64,
}

/// The micro-batch a training plan runs when the task sets none, samples: the whole local batch
/// at once, or one sample at a time through a pipeline of `stages`.
pub fn unset_micro_batch(stages: u64, local_batch: u64) -> u64 {
    if stages > 1 {
        1
    } else {
        local_batch
    }
}

impl<'a> TrainingCx<'a> {
    /// The default model's quantities; `None` when the model is not a transformer.
    pub fn new(s: &'a Scenario) -> Option<TrainingCx<'a>> {
        let d = Dims::of(&s.model)?;
        let d_layers = d.layers;
        let spec = s.task.plan.transformer.as_ref()?;
        let sys = &s.system;
        let lay = Layout::of(spec, Placement::of(sys));
        let links = Links::of(sys);
        let peak = crate::engine::report::peak_flops_per_s(s);
        let setup = &s.task.setup;
        let local_batch = s.task.plan.local_transformer_batch.unwrap_or(1);
        let p = lay.pp.size.max(1);
        let micro_batch = setup.micro_batch.unwrap_or(unset_micro_batch(p, local_batch)).min(local_batch).max(1);
        let micro_batches = (local_batch / micro_batch).max(1);
        let chunks = if p > 1 { setup.virtual_stages.max(1) } else { 1 };
        let tokens = micro_batch as f64 * d.seq / lay.cp.size as f64;
        let global_batch = local_batch.saturating_mul(lay.dense_dp.size);
        let trains = s.task.kind.trains();
        let (trainable_layers, emb_trains) = match &s.task.kind {
            TaskKind::Pretrain => (d.layers, true),
            TaskKind::Inference => (0, false),
            TaskKind::Finetune(f) if f.transformer => (0, !f.emb),
            TaskKind::Finetune(f) => (f.min_frozen_layer.unwrap_or(d.layers).min(d.layers), !f.emb),
        };
        let mut cx = TrainingCx {
            s,
            d,
            lay,
            links,
            setup,
            flops_per_s: peak * sys.flops_util,
            peak_flops_per_s: peak,
            fp8_flops_per_s: sys
                .fp8_flops_per_s
                .filter(|_| setup.fp8)
                .map(|f| f * sys.flops_util * FP8_GEMM_EFFICIENCY),
            hbm_bytes_per_s: sys.mem_bw_bytes_per_s * sys.mem_bw_util,
            gemm_hbm_bytes_per_s: sys.mem_bw_bytes_per_s * sys.gemm_bw_fraction(),
            sms: sys.sm_count,
            trains,
            local_batch,
            micro_batch,
            micro_batches,
            chunks,
            stage: p - 1,
            tokens,
            global_batch,
            trainable_layers,
            emb_trains,
            by_type: None,
        };
        if let Some(mut t) = StagesByType::of(s, d_layers) {
            // A layer's forward and backward time on each type (the first layer of the first
            // and of the last stage) splits the layers.
            cx.by_type = Some(std::sync::Arc::new(t.clone()));
            let layer_s = [0, p - 1].map(|stage| {
                let on = cx.on_stage(stage);
                let lt = on.layer_times(on.stage_layers(stage).start);
                lt.attn_fwd_s + lt.ffn_fwd_s + lt.attn_bwd_s + lt.ffn_bwd_s
            });
            t.split(layer_s);
            cx.by_type = Some(std::sync::Arc::new(t));
        }
        if cx.by_type.is_some() || (p > 1 && cx.d.is_encoder_decoder()) {
            // Stages of encoder layers, of decoder layers or of both differ in their work: the
            // slowest paces the pipeline.
            // (On two GPU types, stages of each type run at their own rates.)
            let mut slowest = (0.0, p - 1);
            for stage in 0..p {
                let (f, b) = cx.on_stage(stage).pass_times();
                if f + b > slowest.0 {
                    slowest = (f + b, stage);
                }
            }
            cx = cx.on_stage(slowest.1);
        } else if p > 1 && !cx.d.layers.is_multiple_of(p) {
            // With an uneven split the first stage holds one layer more than the last, which
            // runs the output layer instead: the slower of the two paces the pipeline.
            let first = TrainingCx { stage: 0, ..cx.clone() };
            let (f0, b0) = first.pass_times();
            let (f1, b1) = cx.pass_times();
            if f0 + b0 > f1 + b1 {
                cx.stage = 0;
            }
        }
        Some(cx)
    }

    /// The layers of pipeline stage `stage` (0-based), as a range of layer indices: `L / p`
    /// each, and one more on each of the first `L mod p` stages (the last stage, which also
    /// runs the output layer, gets no extra one while any other stage can take it).
    pub fn stage_layers(&self, stage: u64) -> std::ops::Range<u64> {
        if let Some(t) = &self.by_type {
            let at = |i: u64| t.starts.get(i as usize).copied().unwrap_or(self.d.layers);
            return at(stage)..at(stage + 1);
        }
        let (l, p) = (self.d.layers, self.lay.pp.size.max(1));
        let (q, r) = (l / p, l % p);
        let start = (stage * q + stage.min(r)).min(l);
        start..(start + q + u64::from(stage < r)).min(l)
    }

    /// This context on pipeline stage `stage`, at the rates (and NVLinks) of that stage's GPUs.
    pub fn on_stage(&self, stage: u64) -> TrainingCx<'a> {
        let mut cx = TrainingCx { stage, ..self.clone() };
        if let Some(r) = self.by_type.as_ref().map(|t| t.rates_of(stage)) {
            cx.flops_per_s = r.flops_per_s;
            cx.peak_flops_per_s = r.peak_flops_per_s;
            cx.fp8_flops_per_s = r.fp8_flops_per_s;
            cx.hbm_bytes_per_s = r.hbm_bytes_per_s;
            cx.gemm_hbm_bytes_per_s = r.gemm_hbm_bytes_per_s;
            cx.sms = r.sms;
            cx.links = r.links;
        }
        cx
    }

    /// Whether the drawn stage runs the output layer (it is the last stage).
    pub(super) fn runs_head(&self) -> bool {
        self.stage + 1 == self.lay.pp.size.max(1)
    }

    fn tp(&self) -> f64 {
        self.lay.tp.size as f64
    }

    /// The tensor-parallel ranks that split each expert ([`crate::engine::scenario::Setup::expert_tp`];
    /// the tensor-parallel degree when not given).
    pub fn etp(&self) -> u64 {
        self.setup.experts_split_by(self.lay.tp.size)
    }

    /// The share of a micro-batch's tokens a GPU's experts and token dispatch see: all of them,
    /// gathered over the tensor-parallel group, when it splits each expert; under expert tensor
    /// parallelism `etp / tp`, its sequence-parallel share gathered over the `etp` ranks that
    /// split an expert. 1 for a dense model.
    pub fn expert_token_share(&self) -> f64 {
        if self.d.is_moe() {
            self.etp() as f64 / self.tp()
        } else {
            1.0
        }
    }

    /// The ranks of each context-parallel group that hold different experts
    /// ([`crate::engine::scenario::Setup::expert_cp`]; 1 when not given).
    pub fn ecp(&self) -> u64 {
        self.setup.experts_spread_over_cp()
    }

    /// The ranks outside the tensor-parallel group that hold different experts: the ep level's
    /// and the context-parallel ranks that join it ([`TrainingCx::ecp`]).
    pub fn expert_ranks(&self) -> f64 {
        (self.lay.ep.size * self.ecp()) as f64
    }

    /// The ranks a token's copies are dispatched over: the ep level's, with the context-parallel
    /// ranks that hold different experts ([`TrainingCx::ecp`]) and the tensor-parallel ranks
    /// that hold whole experts of their own (`tp / etp` of them: none join when the
    /// tensor-parallel group splits each expert).
    pub fn expert_group(&self) -> Group {
        self.lay.ep.with(self.lay.cp.inner(self.ecp())).with(self.lay.tp.outer(self.etp()))
    }

    /// Bytes of one MoE all-to-all on one GPU: the copies of its share of the micro-batch's
    /// tokens (a sequence-parallel share with sequence parallelism), one per expert a token
    /// visits, padded to the capacity factor.
    pub fn moe_routed_bytes(&self) -> f64 {
        self.tokens * self.d.hidden * self.d.elem_bytes * self.d.active * self.d.capacity_factor / self.outside_div()
    }

    /// One all-to-all of a mixture-of-experts layer (dispatch or combine) on one GPU, s: NCCL's
    /// over the routed bytes ([`TrainingCx::moe_routed_bytes`]), or DeepEP's
    /// ([`deepep_all_to_all_s`]) when the model dispatches with it; 0 for a dense model.
    pub fn moe_all_to_all_s(&self) -> f64 {
        if !self.d.is_moe() {
            return 0.0;
        }
        let (bytes, group) = (self.moe_routed_bytes(), self.expert_group());
        match self.d.moe_dispatch {
            MoeDispatch::DeepEp => deepep_all_to_all_s(
                bytes,
                (self.d.experts, self.d.active),
                group,
                &self.links,
                self.nic_line_bytes_per_s(),
            ),
            MoeDispatch::Eager | MoeDispatch::Fused => self.collective(Collective::AllToAll, bytes, group),
        }
    }

    /// A GPU's share of its node's NICs at their line rate, one direction, bytes/s: the links'
    /// share before the system's NIC utilisation (which describes NCCL's collectives).
    pub fn nic_line_bytes_per_s(&self) -> f64 {
        self.links.inter_bytes_per_s / self.s.system.ibroce_util
    }

    /// Divisor of the work outside tensor-parallel regions: tp with sequence parallelism.
    fn outside_div(&self) -> f64 {
        if self.setup.sequence_parallel {
            self.tp()
        } else {
            1.0
        }
    }

    pub(super) fn collective(&self, c: Collective, bytes: f64, g: Group) -> f64 {
        time_s(c, bytes, g, &self.links, self.setup.collective)
    }

    /// Time of one GEMM of this GPU at the model's precision, s ([`Gemm::time_s`]).
    pub fn gemm_s(&self, g: Gemm) -> f64 {
        g.time_s(self.d.elem_bytes, self.gemm_gpu(self.flops_per_s))
    }

    /// This GPU for a GEMM at `flops_per_s` (the model's precision, FP8, or the served
    /// weights' format).
    pub fn gemm_gpu(&self, flops_per_s: f64) -> GemmGpu {
        GemmGpu::new(flops_per_s, self.gemm_hbm_bytes_per_s, self.sms)
    }

    /// The GEMMs of a block's forward pass on one GPU for one micro-batch, each with how many
    /// times it runs ([`TrainingCx::block_gemms_of`] the micro-batch's tokens).
    pub fn block_gemms(&self, block: Block) -> [(Gemm, f64); 4] {
        self.block_gemms_of(block, self.tokens)
    }

    /// The GEMMs of a block's forward pass over `t` tokens on one GPU, each with how many times
    /// it runs ([`Dims::block_gemms`] at this plan's tensor and expert parallelism).
    pub fn block_gemms_of(&self, block: Block, t: f64) -> [(Gemm, f64); 4] {
        self.d.block_gemms(block, t, self.tp(), self.etp() as f64, self.expert_ranks())
    }

    /// A block's GEMM time for one micro-batch without its attention scores, s: (forward,
    /// activation gradients, weight gradients), each GEMM by [`TrainingCx::block_gemm_pass_s`].
    pub fn block_gemm_s(&self, block: Block) -> (f64, f64, f64) {
        self.block_gemms(block).iter().fold((0.0, 0.0, 0.0), |(f, d, w), (g, count)| {
            let pass = |g: Gemm, cast: bool| count * self.block_gemm_pass_s(g, cast);
            (f + pass(*g, true), d + pass(g.dgrad(), true), w + pass(g.wgrad(), false))
        })
    }

    /// One GEMM of a transformer block, s: at the model's precision ([`TrainingCx::gemm_s`]), or with
    /// FP8 training in FP8 (1-byte operands, 16-bit output, the FP8 rate) after casting its
    /// activation operand when `cast` (the forward input, or the backward pass's output
    /// gradient): the `m x k` 16-bit values read, an FP8 copy and its transpose written
    /// ([`FP8_CAST_WRITE_BYTES`]). The weight gradient reads the transposes and casts nothing.
    /// The weights' casts, once per iteration, are not counted.
    pub fn block_gemm_pass_s(&self, g: Gemm, cast: bool) -> f64 {
        let Some(fp8) = self.fp8_flops_per_s else { return self.gemm_s(g) };
        let e = self.d.elem_bytes;
        let cast_s = if cast { g.m * g.k * (e + FP8_CAST_WRITE_BYTES) / self.hbm_bytes_per_s } else { 0.0 };
        g.mixed_time_s(1.0, e, self.gemm_gpu(fp8)) + cast_s
    }

    /// The attention scores' GEMMs (`Q K^T` and `P V`) of one forward pass, s
    /// ([`TrainingCx::score_gemms_s`]).
    pub fn score_gemm_s(&self) -> f64 {
        self.score_gemms_s()[0]
    }

    /// The attention scores' GEMMs of one micro-batch in the forward, activation-gradient and
    /// weight-gradient passes, s: batched GEMMs timed by their shapes when the scores go
    /// through HBM, a fused kernel's rate otherwise ([`Dims::score_gemms_s`]).
    pub fn score_gemms_s(&self) -> [f64; 3] {
        let cp = self.lay.cp.size as f64;
        self.d.score_gemms_s(self.micro_batch as f64, self.d.seq / cp, self.tp(), self.gemm_gpu(self.flops_per_s))
    }

    /// Forward time of the attention block for one micro-batch, as (GEMM, element-wise), s:
    /// the projections by their shapes ([`TrainingCx::block_gemms`]) and the scores
    /// ([`TrainingCx::score_gemm_s`]); element-wise traffic at the effective HBM bandwidth plus the
    /// block's kernel-launch overheads.
    pub fn attn_fwd_parts(&self) -> (f64, f64) {
        (self.block_gemm_s(Block::Attn).0 + self.score_gemm_s(), self.block_ew_s(Block::Attn))
    }

    /// Forward time of the feed-forward block for one micro-batch, as (GEMM, element-wise), s.
    pub fn ffn_fwd_parts(&self) -> (f64, f64) {
        (self.block_gemm_s(Block::Fc).0, self.block_ew_s(Block::Fc))
    }

    /// A block's element-wise work in its forward pass for one micro-batch, s: its traffic
    /// (norms, residual adds, dropout; the scores' softmax or the feed-forward activation) at
    /// the effective HBM bandwidth plus its kernel-launch overheads.
    pub fn block_ew_s(&self, block: Block) -> f64 {
        self.ew_s(block, self.d.forward_bytes(block)) + self.extra_launch_s(block, 0) + self.dispatch_s(block)[0]
    }

    /// A block's element-wise work in its backward pass for one micro-batch, s, as (the
    /// activation-gradient pass, the weight-gradient pass): [`Dims::backward_bytes`] at the
    /// effective HBM bandwidth, each plus the block's kernel-launch overheads; a
    /// mixture-of-experts dispatch's gradients go with the activations'.
    pub fn block_bwd_ew_s(&self, block: Block) -> (f64, f64) {
        let b = self.d.backward_bytes(block);
        let activation = self.ew_s(block, b.activation) + self.extra_launch_s(block, 1) + self.dispatch_s(block)[1];
        (activation, self.ew_s(block, b.weight) + self.extra_launch_s(block, 2))
    }

    /// A mixture-of-experts feed-forward block's token dispatch for one micro-batch, s, as
    /// (forward pass, backward pass): [`Dims::dispatch_bytes`] over the micro-batch's tokens at
    /// the effective HBM bandwidth plus its kernels' launches ([`Dims::dispatch`]); 0 for other blocks
    /// and dense models.
    pub fn dispatch_s(&self, block: Block) -> [f64; 2] {
        if block != Block::Fc || !self.d.is_moe() {
            return [0.0; 2];
        }
        let (fwd, bwd) = self.d.dispatch_bytes();
        let [k_fwd, k_bwd] = self.d.dispatch().kernels;
        let tokens = self.tokens * self.expert_token_share();
        let way = |bytes: f64, kernels: f64| tokens * bytes / self.hbm_bytes_per_s + kernels * KERNEL_OVERHEAD_S;
        [way(fwd, k_fwd), way(bwd, k_bwd)]
    }

    /// The forward pass of a block's norms for one micro-batch, s, as selective recomputation
    /// runs them again: [`Dims::norm_bytes`] over the micro-batch's tokens at the effective HBM
    /// bandwidth, plus each norm's kernels.
    pub fn norm_fwd_s(&self, block: Block) -> f64 {
        let norms = self.d.sublayers(block);
        let kernels = if self.d.eager() { EAGER_NORM_KERNELS[0] } else { 1.0 };
        norms
            * (self.tokens * self.d.norm_bytes()[0] * self.d.hidden / self.outside_div() / self.hbm_bytes_per_s
                + kernels * KERNEL_OVERHEAD_S)
    }

    /// The feed-forward activation's forward pass for one micro-batch, s, as recomputing it
    /// runs it again: [`Dims::ffn_act_bytes`] over the micro-batch's tokens (split by tensor
    /// parallelism) at the effective HBM bandwidth, plus one kernel.
    pub fn act_fwd_s(&self) -> f64 {
        self.tokens * self.d.ffn_act_bytes() / self.tp() / self.hbm_bytes_per_s + KERNEL_OVERHEAD_S
    }

    /// Whether a block's backward pass runs its forward pass's communication again: every
    /// block's under full recomputation, the feed-forward block's when selective recomputation
    /// recomputes it (its tensor-parallel collectives and a mixture of experts' all-to-alls).
    pub fn replays_forward_comm(&self, block: Block) -> bool {
        match self.setup.recompute {
            Recompute::Full => true,
            Recompute::Selective => block == Block::Fc && self.setup.recompute_modules.ffn(self.d.is_moe()),
            Recompute::None => false,
        }
    }

    /// Launch overheads of the kernels a block launches beyond [`KERNELS_PER_BLOCK`] in its
    /// forward (`pass` 0), activation-gradient (1) or weight-gradient (2) pass, s: the rotary
    /// embeddings' in attention's first two ([`Dims::rope_kernels`]) and eager norms' and
    /// activation's ([`Dims::eager_kernels`]).
    fn extra_launch_s(&self, block: Block, pass: usize) -> f64 {
        let rope = if block == Block::Attn && pass < 2 { self.d.rope_kernels() } else { 0.0 };
        (rope + self.d.eager_kernels(block)[pass]) * KERNEL_OVERHEAD_S
    }

    /// Element-wise bytes per token (outside the tensor-parallel region, inside it) of one of
    /// `block`'s passes over this micro-batch, s, plus the block's kernel-launch overheads.
    fn ew_s(&self, block: Block, (outside, inside): (f64, f64)) -> f64 {
        self.tokens * (outside / self.outside_div() + inside / self.tp()) / self.hbm_bytes_per_s
            + self.d.sublayers(block) * KERNELS_PER_BLOCK * KERNEL_OVERHEAD_S
    }

    /// A block's gradient passes for one micro-batch, s, without recomputation: the
    /// activation-gradient pass and the weight-gradient pass where they run (`work`, as
    /// [`TrainingCx::backward_work`] gives it), each its GEMMs (`gemms`, as [`TrainingCx::block_gemm_s`] gives
    /// them), the scores' backward in attention and its element-wise work
    /// ([`TrainingCx::block_bwd_ew_s`]), and each at least `floor` (the host time to issue it,
    /// [`TrainingCx::host_floor_s`]).
    pub fn gradient_passes_s(&self, block: Block, work: (bool, bool), gemms: (f64, f64, f64), floor: f64) -> f64 {
        let [_, scores_a, scores_w] = if block == Block::Attn { self.score_gemms_s() } else { [0.0; 3] };
        let (activation_ew, weight_ew) = self.block_bwd_ew_s(block);
        let pass = |on: bool, gemm_s: f64, ew: f64| if on { (gemm_s + ew).max(floor) } else { 0.0 };
        pass(work.0, gemms.1 + scores_a, activation_ew) + pass(work.1, gemms.2 + scores_w, weight_ew)
    }

    /// Whether the backward pass must go through layer `l` at all, and whether it computes
    /// weight gradients there: (activation gradients, weight gradients).
    pub fn backward_work(&self, l: u64) -> (bool, bool) {
        if !self.trains {
            return (false, false);
        }
        let weights = l < self.trainable_layers;
        // Activation gradients flow down through l when anything below it trains.
        let below = self.emb_trains || (l > 0 && self.trainable_layers > 0);
        (below, weights)
    }

    /// The tensor-parallel collectives a block pass waits for, s: one all-reduce, or with
    /// sequence parallelism a gather and a scatter of `tp_comm_s` each; none when they overlap
    /// the GEMMs.
    pub fn blocking_tp_comm_s(&self, tp_comm_s: f64) -> f64 {
        if self.setup.overlap_tp_comm {
            0.0
        } else if self.setup.sequence_parallel {
            2.0 * tp_comm_s
        } else {
            tp_comm_s
        }
    }

    /// The least time a block pass's compute op takes, s: the host needs [`HOST_BLOCK_S`] to
    /// issue the pass and the GPU waits for it, less the pass's blocking tensor-parallel
    /// collectives, during which the host is already issuing the next kernels.
    pub fn host_floor_s(&self, tp_comm_s: f64) -> f64 {
        (HOST_BLOCK_S - self.blocking_tp_comm_s(tp_comm_s)).max(0.0)
    }

    /// [`Limit::HostBound`] when both blocks of a layer give the GPU less work than the host
    /// needs to issue them: of the drawn stage's layers, or of the first stack there that is
    /// so (an encoder-decoder's encoder or decoder).
    pub fn host_bound(&self) -> Option<Limit> {
        if self.d.is_encoder_decoder() {
            let r = self.stage_layers(self.stage);
            let e = self.d.encoder_layers;
            let firsts = [r.start, r.start.max(e)].into_iter().filter(|&l| l < r.end);
            return firsts.filter_map(|l| self.at(l).host_bound()).next();
        }
        let l = self.layer_times(0);
        let blocking = self.blocking_tp_comm_s(l.tp_comm_s);
        let floor = self.host_floor_s(l.tp_comm_s);
        let ((ag, ae), (fg, fe)) = (self.attn_fwd_parts(), self.ffn_fwd_parts());
        (ag + ae < floor && fg + fe < floor).then_some(Limit::HostBound {
            gpu_s: ag + ae + fg + fe + 2.0 * blocking,
            host_s: 2.0 * HOST_BLOCK_S,
            tp: self.lay.tp.size,
        })
    }

    /// The context of layer `l`'s stack ([`Dims::stack_at`]): an encoder-decoder's encoder or
    /// decoder dimensions, with the stack's tokens per micro-batch; the same context for other
    /// models. Whole-model figures (stage splits, memory, FLOPs) stay with `self`.
    pub fn at(&self, l: u64) -> TrainingCx<'a> {
        let d = self.d.stack_at(l);
        TrainingCx { d, tokens: self.tokens_of(d.seq), ..self.clone() }
    }

    /// Durations of layer `l`'s ops for one micro-batch.
    pub fn layer_times(&self, l: u64) -> LayerTimes {
        if self.d.is_encoder_decoder() {
            return self.at(l).layer_times(l);
        }
        let (attn, ffn) = (self.block_gemm_s(Block::Attn), self.block_gemm_s(Block::Fc));
        let score_gemm_s = self.score_gemm_s();
        let act_bytes = self.tokens * self.d.hidden * self.d.elem_bytes;
        // A block's tensor-parallel collective of `bytes` over `group`: a gather (and later a
        // scatter) with sequence parallelism, else an all-reduce.
        let tp_collective = |bytes: f64, group: Group| {
            let kind = if self.setup.sequence_parallel { Collective::AllGather } else { Collective::AllReduce };
            self.collective(kind, bytes, group)
        };
        let tp_comm_s = tp_collective(act_bytes, self.lay.tp);
        // The feed-forward block's over the ranks that split an expert: all of them (the same
        // collective) unless experts are whole on some.
        let ffn_tp_comm_s = tp_collective(act_bytes * self.expert_token_share(), self.lay.tp.inner(self.etp()));
        let floor = self.host_floor_s(tp_comm_s);
        let ffn_floor = self.host_floor_s(ffn_tp_comm_s);
        let attn_fwd_s = (attn.0 + score_gemm_s + self.block_ew_s(Block::Attn)).max(floor);
        let ffn_fwd_s = (ffn.0 + self.block_ew_s(Block::Fc)).max(ffn_floor);
        let work = self.backward_work(l);
        let any = work.0 || work.1;
        let recompute = |fwd: f64, selective: f64| match (any, self.setup.recompute) {
            (false, _) | (_, Recompute::None) => 0.0,
            (true, Recompute::Full) => fwd,
            (true, Recompute::Selective) => selective,
        };
        let score_s = score_gemm_s + self.tokens * self.d.score_bytes() / self.tp() / self.hbm_bytes_per_s;
        let m = self.setup.recompute_modules;
        let norm_s = |block: Block| if m.layernorm { self.norm_fwd_s(block) } else { 0.0 };
        let attn_selective = if m.core_attn { score_s } else { 0.0 } + norm_s(Block::Attn);
        let ffn_selective = if m.ffn(self.d.is_moe()) {
            ffn_fwd_s
        } else {
            norm_s(Block::Fc) + if m.moe_act && self.d.is_moe() { self.act_fwd_s() } else { 0.0 }
        };
        // A fused attention kernel recomputes Q K^T in its backward pass.
        let replay_s = if any && !self.d.materialized() { FUSED_BACKWARD_SCORE_REPLAY * score_gemm_s } else { 0.0 };
        let attn_bwd_s =
            self.gradient_passes_s(Block::Attn, work, attn, floor) + recompute(attn_fwd_s, attn_selective) + replay_s;
        let ffn_bwd_s = self.gradient_passes_s(Block::Fc, work, ffn, ffn_floor) + recompute(ffn_fwd_s, ffn_selective);
        let moe_a2a_s = self.moe_all_to_all_s();
        let cp = self.lay.cp.size as f64;
        let kv_block = 2.0 * self.tokens * self.d.kv_heads * self.d.head_dim() * self.d.elem_bytes / self.tp();
        let kv_ring_s = (cp - 1.0) * self.collective(Collective::PointToPoint, kv_block, self.lay.cp);
        let layer_params = self.layer_params_on_gpu();
        let layer_bytes = layer_params * self.gathered_bytes_per_param();
        let shard = self.zero3_group();
        let weight_gather_s =
            if shard.size > 1 { self.collective(Collective::AllGather, layer_bytes, shard) } else { 0.0 };
        let param_sync_s = if self.gathers_updated_weights_in_forward() {
            self.collective(Collective::AllGather, layer_bytes, self.zero_group())
        } else {
            0.0
        };
        let grad_bytes = layer_params * self.grad_bytes();
        let grad_sync_s =
            if work.1 { self.collective(self.grad_reduction().1, grad_bytes, self.lay.weight_dp) } else { 0.0 };
        LayerTimes {
            attn_fwd_s,
            ffn_fwd_s,
            attn_bwd_s,
            ffn_bwd_s,
            tp_comm_s,
            attn_tp_comm_s: tp_comm_s * self.d.sublayers(Block::Attn),
            ffn_tp_comm_s,
            moe_a2a_s,
            kv_ring_s,
            weight_gather_s,
            param_sync_s,
            grad_sync_s,
        }
    }

    /// Parameters of one layer of this stack on one GPU: its dense weights and the experts it
    /// holds, split by tensor parallelism.
    pub fn layer_params_on_gpu(&self) -> f64 {
        self.params_on_gpu(&self.d)
    }

    /// Parameters on one GPU of one layer of the stack `d` ([`TrainingCx::layer_params_on_gpu`]).
    fn params_on_gpu(&self, d: &Dims) -> f64 {
        let (dense, expert) = d.layer_params();
        (dense + expert * d.experts / self.expert_ranks()) / self.tp()
    }

    /// Stage `stage`'s layers by stack ([`Dims::stacks`]): how many of its layers each stack
    /// has there, and the stack's view; stacks without a layer there are left out.
    pub fn stage_stacks(&self, stage: u64) -> impl Iterator<Item = (f64, Dims)> + '_ {
        let r = self.stage_layers(stage);
        self.d.stacks().filter_map(move |(first, d)| {
            let n = (first + d.layers).min(r.end).saturating_sub(first.max(r.start));
            (n > 0).then_some((n as f64, d))
        })
    }

    /// Parameters on one GPU of stage `stage`'s layers, and of its largest layer (the one
    /// gathered whole under ZeRO-3).
    pub fn stage_layer_params(&self, stage: u64) -> (f64, f64) {
        self.stage_stacks(stage).fold((0.0, 0.0), |(sum, max), (n, d)| {
            let x = self.params_on_gpu(&d);
            (sum + n * x, f64::max(max, x))
        })
    }

    /// Bytes per gradient element, kept and reduced: 4 when gradients are accumulated in fp32
    /// (Megatron-LM forces it for bf16, `accumulate_allreduce_grads_in_fp32`; DeepSpeed's bf16
    /// optimizer does the same), else the model's element size.
    pub fn grad_bytes(&self) -> f64 {
        if self.setup.fp32_grads {
            4.0
        } else {
            self.d.elem_bytes
        }
    }

    /// The ZeRO stage of the data-parallel ranks: 3 with an fsdp level.
    pub fn zero_stage(&self) -> u8 {
        if self.lay.fsdp.size > 1 {
            3
        } else {
            self.setup.zero_stage
        }
    }

    /// True when gradients are reduce-scattered in every micro-batch's backward pass: with
    /// ZeRO-3, and with ZeRO-2 over several micro-batches. A GPU that keeps only its shard of
    /// the gradients cannot accumulate the other shards across micro-batches, so each
    /// micro-batch reduces its own (DeepSpeed's ZeRO-2 reduces at every micro-step, and for
    /// that reason refuses pipeline parallelism).
    pub fn reduces_every_micro_batch(&self) -> bool {
        self.zero3_group().size > 1 || (self.zero_stage() == 2 && self.micro_batches > 1 && self.lay.weight_dp.size > 1)
    }

    /// The group ZeRO-3 shards weights over: the fsdp levels with the context-parallel ranks
    /// (they hold the same weights: [`Layout::weight_dp`]), or every rank holding the same
    /// weights when ZeRO-3 is asked for without an fsdp level.
    pub fn zero3_group(&self) -> Group {
        if self.lay.fsdp.size > 1 {
            self.lay.fsdp.with(self.lay.cp)
        } else if self.setup.zero_stage == 3 {
            self.lay.weight_dp
        } else {
            Group::ONE
        }
    }

    /// The output layer's forward and backward time for one micro-batch on the last stage,
    /// plus the input embedding's (or patch projection's) when the pipeline has one stage, s.
    pub fn edge_times(&self) -> (f64, f64) {
        let t = self.tokens;
        let v = self.d.vocab / self.tp();
        let logits = Gemm { m: t, n: v, k: self.d.hidden };
        // The logits and the loss's copy of them ([`TrainingCx::logit_bytes`]): written, read back.
        let logits_bytes = t * v * self.logit_bytes() * 2.0;
        let fwd = self.gemm_s(logits) + logits_bytes / self.hbm_bytes_per_s;
        let bwd = if self.trains {
            self.gemm_s(logits.dgrad())
                + self.gemm_s(logits.wgrad())
                + (logits_bytes + t * v * self.metric_bytes_per_logit()) / self.hbm_bytes_per_s
        } else {
            0.0
        };
        (fwd, bwd)
    }

    /// Bytes per logit the output layer and the loss hold, written and read back: the 16-bit
    /// logits and an fp32 copy for the softmax and loss (PyTorch's and Megatron-LM's
    /// cross-entropy compute in fp32), or with a fused cross-entropy kernel the logits and
    /// their gradient in 16 bits (flash-attn's kernel writes the gradient next to them).
    pub fn logit_bytes(&self) -> f64 {
        if self.setup.fused_loss {
            2.0 * self.d.elem_bytes
        } else {
            self.d.elem_bytes + 4.0
        }
    }

    /// Bytes the training metrics move per logit in each micro-batch: each of
    /// [`crate::engine::scenario::Setup::metric_losses`] casts the 16-bit logits to fp32
    /// ([`METRIC_CAST_BYTES`]) and takes their log-softmax ([`METRIC_LOG_SOFTMAX_BYTES`]). The
    /// training loop computes them after the backward pass; the model charges them with the
    /// output layer's.
    pub fn metric_bytes_per_logit(&self) -> f64 {
        let copy = self.metric_copy_bytes();
        let cast = if copy > 0.0 { self.d.elem_bytes + copy } else { 0.0 };
        f64::from(self.setup.metric_losses) * (cast + METRIC_LOG_SOFTMAX_BYTES)
    }

    /// Bytes per logit of a training metric's fp32 copy of the logits: none when they are fp32
    /// already.
    fn metric_copy_bytes(&self) -> f64 {
        if self.d.elem_bytes < METRIC_CAST_BYTES {
            METRIC_CAST_BYTES
        } else {
            0.0
        }
    }

    /// Tokens one GPU processes per micro-batch of samples of `seq` tokens: micro x seq / cp.
    fn tokens_of(&self, seq: f64) -> f64 {
        self.micro_batch as f64 * seq / self.lay.cp.size as f64
    }

    /// Tokens one GPU processes per micro-batch in an encoder-decoder's encoder (of its input
    /// length); 0 for other models.
    pub fn encoder_tokens(&self) -> f64 {
        self.tokens_of(self.d.cross_seq)
    }

    /// The input embedding lookup (or patch projection) of one micro-batch, s: an
    /// encoder-decoder looks up its input and its target tokens.
    pub fn input_time(&self) -> f64 {
        let t = self.tokens + self.encoder_tokens();
        let proj = self.gemm_s(Gemm { m: t, n: self.d.hidden / self.tp(), k: self.d.patch_inputs });
        proj + t * (self.d.hidden * self.d.elem_bytes * 2.0 + self.d.position_add_bytes()) / self.hbm_bytes_per_s
    }

    /// One point-to-point transfer of a micro-batch's activations between stages, s. With
    /// tensor parallelism each rank sends its 1/tp slice (Megatron's scatter/gather).
    pub fn p2p_s(&self) -> f64 {
        if self.lay.pp.size <= 1 {
            return 0.0;
        }
        // An encoder-decoder's stages pass the encoder's output on to the decoder's stages,
        // whose own activations travel beside it.
        let decoder = self.stage_layers(self.stage).end > self.d.encoder_layers;
        let tokens = if self.d.is_encoder_decoder() {
            self.encoder_tokens() + if decoder { self.tokens } else { 0.0 }
        } else {
            self.tokens
        };
        let bytes = tokens * self.d.hidden * self.d.elem_bytes / self.tp();
        self.collective(Collective::PointToPoint, bytes, self.lay.pp.neighbours())
    }

    /// Parameters on one GPU of stage `stage` (0-based): (dense, expert).
    pub fn stage_params(&self, stage: u64) -> (f64, f64) {
        let p = self.lay.pp.size.max(1);
        let (input, output) = self.d.edge_params();
        // The learned position table is not split by tensor parallelism.
        let positions = if stage == 0 { self.d.position_params() } else { 0.0 };
        let (mut dense, mut experts) = (0.0, 0.0);
        for (n, d) in self.stage_stacks(stage) {
            let (attn, expert) = d.layer_params();
            dense += n * attn;
            experts += n * expert * d.experts / self.expert_ranks();
        }
        if stage == 0 {
            dense += input - positions;
        }
        if stage + 1 == p {
            // A tied output layer still needs the embedding on the last stage when the
            // pipeline has several (Megatron keeps a copy and all-reduces its gradient).
            let embedding = self.d.hidden * self.d.vocab;
            dense += if output == 0.0 && p > 1 && self.d.vocab > 0.0 { embedding } else { output };
        }
        (dense / self.tp() + positions, experts / self.tp())
    }

    /// What the gradient synchronisation after the backward pass reduces; `None` when nothing
    /// is left to reduce then (it ran per layer during the backward pass, or nothing trains).
    /// Plain data parallelism all-reduces the stage's gradients; ZeRO-1/2 reduce-scatters
    /// them; ZeRO-2 over several micro-batches, which reduced the layers' gradients in each
    /// micro-batch's backward pass, reduce-scatters the embeddings' and the output layer's
    /// once per micro-batch; hybrid sharding all-reduces each shard across the replicas.
    pub fn final_grad_sync_plan(&self) -> Option<GradSync> {
        let zero3 = self.zero3_group().size > 1;
        let share = self.trainable_share();
        if !self.trains || share <= 0.0 || (self.setup.overlap_grad_reduce && !zero3) {
            return None;
        }
        let (dense, expert) = self.stage_params(self.stage);
        let bytes = (dense + expert) * share * self.grad_bytes();
        let sync = |kind, collective, bytes, group, times| Some(GradSync { kind, collective, bytes, group, times });
        if !zero3 && self.reduces_every_micro_batch() {
            let layers = self.stage_layer_params(self.stage).0;
            let edges = (bytes - layers * share * self.grad_bytes()).max(0.0);
            let m = self.micro_batches as f64;
            return sync(OpKind::GradReduceScatter, Collective::ReduceScatter, edges, self.lay.weight_dp, m);
        }
        if zero3 {
            if self.lay.ddp.size <= 1 {
                return None;
            }
            let shard = bytes / self.zero3_group().size as f64;
            return sync(OpKind::GradAllReduce, Collective::AllReduce, shard, self.lay.ddp, 1.0);
        }
        let (kind, collective) = self.grad_reduction();
        sync(kind, collective, bytes, self.lay.weight_dp, 1.0)
    }

    /// How the ranks holding the same weights sum gradients, after the backward pass or in
    /// buckets during it: reduce-scatter where each rank keeps only the sum of its own shard
    /// (ZeRO-2 and 3, and ZeRO-1 over all of them: Megatron-core's distributed optimizer
    /// reduce-scatters every gradient bucket, `_ParamAndGradBucketGroup` in
    /// `megatron/core/distributed/param_and_grad_buffer.py`, with `--overlap-grad-reduce` too),
    /// else all-reduce (plain data parallelism, ZeRO-1 in groups within the ranks, each of
    /// which needs the whole sum of its group's shard, and ZeRO-1 that all-reduces,
    /// [`Setup::zero1_all_reduce`](crate::engine::scenario::Setup)).
    pub fn grad_reduction(&self) -> (OpKind, Collective) {
        let zero = self.zero_stage();
        let zero1_scatters = zero == 1 && self.zero_group() == self.lay.weight_dp && !self.setup.zero1_all_reduce;
        if zero >= 2 || zero1_scatters {
            (OpKind::GradReduceScatter, Collective::ReduceScatter)
        } else {
            (OpKind::GradAllReduce, Collective::AllReduce)
        }
    }

    /// The gradient synchronisation after the backward pass ([`TrainingCx::final_grad_sync_plan`]):
    /// its kind and duration, s.
    pub fn final_grad_sync(&self) -> (OpKind, f64) {
        match self.final_grad_sync_plan() {
            Some(g) => (g.kind, g.times * self.collective(g.collective, g.bytes, g.group)),
            None => (OpKind::GradAllReduce, 0.0),
        }
    }

    /// The optimizer step: mixed-precision Adam, memory-bound, over the parameters this GPU
    /// updates (1/dp of them from ZeRO-1 on), s.
    pub fn optimizer_step_s(&self) -> f64 {
        if !self.trains {
            return 0.0;
        }
        let (dense, expert) = self.stage_params(self.stage);
        let owned = if self.zero_stage() >= 1 { self.zero_group().size as f64 } else { 1.0 };
        (dense + expert) * self.trainable_share() / owned * ADAM_BYTES_PER_PARAM / self.hbm_bytes_per_s
    }

    /// The ranks that share one copy of the optimizer states under ZeRO 1 and 2: every rank
    /// holding the same weights ([`Layout::weight_dp`](super::layout::Layout)), or its innermost
    /// [`Setup::zero_shard_ranks`](crate::engine::scenario::Setup) (hybrid ZeRO-1: the copies
    /// are replicated over the other ranks).
    pub fn zero_group(&self) -> Group {
        match self.setup.zero_shard_ranks {
            Some(n) if n < self.lay.weight_dp.size => self.lay.weight_dp.inner(n),
            _ => self.lay.weight_dp,
        }
    }

    /// ZeRO-1/2: the all-gather after the optimizer step of the weights the other ranks of the
    /// ZeRO group ([`TrainingCx::zero_group`]) updated, s (0 otherwise): all of them, or those
    /// outside the blocks when the blocks' are gathered during the forward pass
    /// ([`TrainingCx::gathers_updated_weights_in_forward`]). With
    /// [`Setup::zero1_broadcast`](crate::engine::scenario::Setup) the same bytes come back by one
    /// broadcast of its shard from each rank of the group, one after another.
    pub fn param_gather_s(&self) -> f64 {
        if !self.gathers_updated_weights() {
            return 0.0;
        }
        let (dense, expert) = self.stage_params(self.stage);
        let (blocks, _) = self.stage_layer_params(self.stage);
        // The blocks' weights gathered during the forward pass are not gathered here.
        let after_step = if self.gathers_updated_weights_in_forward() { 0.0 } else { blocks };
        let bytes = after_step * self.gathered_bytes_per_param() + (dense + expert - blocks) * self.d.elem_bytes;
        let g = self.zero_group();
        if self.setup.zero1_broadcast {
            let ranks = g.size as f64;
            return ranks * self.collective(Collective::Broadcast, bytes / ranks, g);
        }
        self.collective(Collective::AllGather, bytes, g)
    }

    /// Whether ZeRO 1/2 gathers the weights the other ranks updated: in training, with
    /// something trainable.
    fn gathers_updated_weights(&self) -> bool {
        self.trains && (1..3).contains(&self.zero_stage()) && self.trainable_share() > 0.0
    }

    /// Whether ZeRO 1/2 gathers each layer's updated weights during the first micro-batch's
    /// forward pass, one layer ahead ([`Setup::gathers_updated_weights_in_forward`]), leaving
    /// only the weights outside the blocks to gather after the step.
    pub fn gathers_updated_weights_in_forward(&self) -> bool {
        self.gathers_updated_weights() && self.setup.gathers_updated_weights_in_forward()
    }

    /// Whether the blocks' weights are kept and gathered in FP8 ([`Setup::fp8_param_gather`]):
    /// FP8 training with a ZeRO stage that gathers weights.
    pub fn fp8_params(&self) -> bool {
        self.setup.fp8_param_gather && self.fp8_flops_per_s.is_some() && self.zero_stage() >= 1
    }

    /// Bytes per parameter of a block's weights in a ZeRO all-gather: 1 when they are gathered
    /// in FP8 ([`TrainingCx::fp8_params`]), else the model's element size. Embeddings and
    /// norms are gathered at the element size either way.
    pub fn gathered_bytes_per_param(&self) -> f64 {
        if self.fp8_params() {
            1.0
        } else {
            self.d.elem_bytes
        }
    }

    /// Trainable share of the stage's parameters (fine-tuning freezes some layers).
    pub fn trainable_share(&self) -> f64 {
        self.trainable_layers as f64 / self.d.layers.max(1) as f64
    }

    /// Memory per GPU of stage `stage`, by part.
    pub fn stage_memory(&self, stage: u64) -> Vec<(MemPart, f64)> {
        let e = self.d.elem_bytes;
        let (dense, expert) = self.stage_params(stage);
        let params = dense + expert;
        let zero = self.zero_stage();
        let dp = self.lay.weight_dp.size as f64;
        let shard3 = self.zero3_group().size as f64;
        let (stage_layer_params, layer_params) = self.stage_layer_params(stage);
        // FP8 training keeps FP8 copies of the blocks' weights: of the stage's layers, or with
        // ZeRO-3 of the gathered ones.
        let fp8_copy = if self.fp8_flops_per_s.is_some() { FP8_WEIGHT_COPY_BYTES_PER_PARAM } else { 0.0 };
        // With FP8 parameters under ZeRO 1/2 the FP8 copies are the blocks' weights: no 16-bit
        // copy beside them.
        let sixteen_bit = if self.fp8_params() && shard3 <= 1.0 { params - stage_layer_params } else { params };
        let weights = sixteen_bit * e / if zero >= 3 { shard3 } else { 1.0 }
            + if shard3 > 1.0 { 0.0 } else { stage_layer_params * fp8_copy };
        let train_share = if self.trains { self.trainable_share() } else { 0.0 };
        let grads = params * train_share * self.grad_bytes() / if zero >= 2 { dp } else { 1.0 };
        let owners = self.zero_group().size as f64;
        let optimizer = params * train_share * OPTIMIZER_BYTES_PER_PARAM / if zero >= 1 { owners } else { 1.0 };
        let activations = self.stage_activations(stage);
        // ZeRO-3 gathers two layers at a time (the one computing, the one prefetched), in FP8
        // with FP8 parameters (cast from the 16-bit shards before the gather).
        let gathered_e = if self.fp8_params() { 0.0 } else { e };
        let gathered = if shard3 > 1.0 { 2.0 * layer_params * (gathered_e + fp8_copy) } else { 0.0 };
        let tokens = self.tokens.max(self.encoder_tokens());
        let tp_buffer = if self.lay.tp.size > 1 { 2.0 * tokens * self.d.hidden * e } else { 0.0 };
        let buffers = WORKSPACE_BYTES + gathered + tp_buffer;
        vec![
            (MemPart::Weights, weights),
            (MemPart::Gradients, grads),
            (MemPart::OptimizerStates, optimizer),
            (MemPart::Activations, activations),
            (MemPart::Buffers, buffers),
        ]
    }

    /// Activation bytes stage `stage` holds at its peak: the micro-batches in flight, each with
    /// what its layers keep for the backward pass (Korthikanti et al. 2022), plus the working
    /// set of one layer being recomputed and the output layer's logits on the last stage. An
    /// encoder-decoder's layers keep what their stack's layers keep over its tokens.
    pub fn stage_activations(&self, stage: u64) -> f64 {
        let p = self.lay.pp.size.max(1);
        let gemm_inputs = if self.fp8_flops_per_s.is_some() { 1.0 } else { self.d.elem_bytes };
        let tp = self.tp();
        // Per layer of each stack there: (kept for the backward pass, the whole working set,
        // what selective recomputation computes again for one layer's backward pass).
        let per_layer = |d: &Dims| {
            let t = self.tokens_of(d.seq);
            let (outside, inside, scores) = d.stored_bytes_with_gemm_inputs(gemm_inputs);
            let dispatch = d.dispatch_stored_bytes() * self.expert_token_share();
            let full_layer = t * (outside / self.outside_div() + inside / tp + scores / tp + dispatch);
            let (kept, recomputed) = match self.setup.recompute {
                Recompute::None => (full_layer, 0.0),
                Recompute::Selective => {
                    let m = self.setup.recompute_modules;
                    let scores = if m.core_attn { 0.0 } else { scores / tp };
                    // A recomputed norm's output, the next GEMM's input, is not kept.
                    let sub = d.sublayers(Block::Attn);
                    let norms =
                        if m.layernorm { (1.0 + sub) * gemm_inputs * d.hidden / self.outside_div() } else { 0.0 };
                    // A recomputed feed-forward block keeps only its input; a recomputed
                    // activation, not its output (the second GEMM's input).
                    let ffn = if m.ffn(d.is_moe()) {
                        d.ffn_kept_bytes(gemm_inputs) / tp + dispatch
                    } else if m.moe_act && d.is_moe() {
                        gemm_inputs * d.routed_ffn() / tp
                    } else {
                        0.0
                    };
                    (
                        t * (outside / self.outside_div() + inside / tp + dispatch + scores - norms - ffn),
                        t * (norms + ffn),
                    )
                }
                Recompute::Full => (t * d.hidden * d.elem_bytes / self.outside_div(), full_layer),
            };
            (kept, full_layer, recomputed)
        };
        let (kept, full_layer, recomputed) =
            self.stage_stacks(stage).fold((0.0, 0.0, 0.0), |(kept, full, again), (n, d)| {
                let (k, f, r) = per_layer(&d);
                (kept + n * k, f64::max(full, f), f64::max(again, r))
            });
        let t = self.tokens;
        let last = stage + 1 == p && self.d.vocab > 0.0;
        let logits_of = |bytes: f64| if last { t * self.d.vocab / tp * bytes } else { 0.0 };
        let logits = logits_of(self.logit_bytes());
        if !self.trains {
            // Inference keeps nothing: one layer's working set.
            return full_layer + logits;
        }
        // The backward pass of a layer holds what it recomputed: the whole layer under full
        // recomputation, the recomputed modules' outputs under selective.
        let working = recomputed;
        // 1F1B: stage k holds min(m, p - k) micro-batches; interleaving holds more.
        let in_flight = self.micro_batches.min(p - stage.min(p - 1)) as f64;
        // Interleaving keeps (p - 1)/p of a largest chunk's micro-batches more in flight.
        let interleave =
            if self.chunks > 1 { 1.0 + self.of_largest_chunk(stage, (p as f64 - 1.0) / p as f64) } else { 1.0 };
        let training = kept * in_flight * interleave + working + logits;
        if self.setup.metric_losses == 0 {
            return training;
        }
        // After a micro-batch's backward pass its activations are gone but its 16-bit logits are
        // not: a training metric's fp32 copy and fp32 log-probabilities sit beside them (and the
        // other micro-batches still in flight on a pipeline).
        let held = self.d.elem_bytes + self.metric_copy_bytes() + METRIC_CAST_BYTES;
        training.max(kept * (in_flight * interleave - 1.0) + logits_of(held))
    }

    /// The busiest stage's memory: the larger of the first and the last stage (of any stage
    /// for an encoder-decoder, whose stages hold layers of two kinds).
    pub fn memory(&self) -> Memory {
        let p = self.lay.pp.size.max(1);
        let every = self.d.is_encoder_decoder() || self.by_type.is_some();
        let stages: &mut dyn Iterator<Item = u64> = if every { &mut (0..p) } else { &mut [0, p - 1].into_iter() };
        // On two GPU types, each stage against its own GPUs' memory: the fullest is shown.
        let cap =
            |stage: u64| self.by_type.as_ref().map_or(self.s.system.mem_cap_bytes, |t| t.rates_of(stage).mem_cap_bytes);
        let mut busiest: Option<Memory> = None;
        for stage in stages {
            let m = Memory::of_parts(self.stage_memory(stage), cap(stage));
            let fuller = |b: &Memory| m.total_bytes * b.capacity_bytes > b.total_bytes * m.capacity_bytes;
            if busiest.as_ref().is_none_or(fuller) {
                busiest = Some(m);
            }
        }
        busiest.unwrap_or_else(|| Memory::of_parts(self.stage_memory(0), cap(0)))
    }

    /// Model FLOPs per sample of one iteration: forward, and twice that backward when training
    /// (Narayanan et al.'s 3x; fine-tuning counts what it computes).
    pub fn model_flops_per_sample(&self) -> f64 {
        let fwd = self.d.forward_flops_per_sample();
        if !self.trains {
            return fwd;
        }
        let mut bwd = 0.0;
        for (first, d) in self.d.stacks() {
            let lf = d.layer_flops().total() * d.seq;
            for l in first..first + d.layers {
                let (act, wgt) = self.backward_work(l);
                bwd += (act as u8 + wgt as u8) as f64 * lf;
            }
        }
        bwd += 2.0 * self.d.edge_flops() * self.d.seq;
        fwd + bwd
    }

    /// FLOPs the hardware executes per sample: model FLOPs plus recomputation (and the score
    /// GEMMs a fused attention kernel's backward pass recomputes).
    pub fn hardware_flops_per_sample(&self) -> f64 {
        let extra: f64 = self
            .d
            .stacks()
            .map(|(_, d)| {
                let f = d.layer_flops();
                let replay =
                    if self.trains && !d.materialized() { FUSED_BACKWARD_SCORE_REPLAY * f.attn_scores } else { 0.0 };
                let m = self.setup.recompute_modules;
                let recomputed = match (self.trains, self.setup.recompute) {
                    (false, _) | (_, Recompute::None) => 0.0,
                    (true, Recompute::Full) => f.total(),
                    (true, Recompute::Selective) => {
                        let scores = if m.core_attn { f.attn_scores } else { 0.0 };
                        scores + if m.ffn(d.is_moe()) { f.ffn } else { 0.0 }
                    }
                };
                (replay + recomputed) * d.seq * d.layers as f64
            })
            .sum();
        self.model_flops_per_sample() + extra
    }
}
