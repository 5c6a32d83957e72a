//! LLM serving in the default model: one batch of requests through prefill (the prompt, all
//! tokens at once: compute-bound, with attention's s^2 work) and decode (one token per request
//! per step: bound by reading the weights and the KV cache from HBM), on tensor, pipeline and
//! expert parallelism with data-parallel replicas.
//!
//! Each GEMM is timed by its shape as in training (`super::gemm`: bound by reading its weights
//! at small batches, by its FLOPs in whole tiles as the tokens grow), attention by the longer of
//! its score FLOPs and its KV-cache traffic (a roofline), plus element-wise traffic. The KV cache holds `2 x kv heads x head dim` elements per layer per token.
//! Sources: Pope et al. 2022 ("Efficiently Scaling Transformer Inference"), kipply 2022
//! ("Transformer Inference Arithmetic"), Kwon et al. 2023 (vLLM: the KV cache bounds the batch).
//!
//! One job: LLM serving in the default model. This file holds the costs of a pass and the
//! static batch; `inflight` the steady state of in-flight batching; `explain` the ops' words.

use super::calibration::{
    sampler_cost, FP8_GEMM_EFFICIENCY, GRAPH_KERNEL_S, GRAPH_MAX_TOKENS, KERNELS_PER_BLOCK, KERNEL_OVERHEAD_S,
    PREFILL_MICRO_TOKENS, WORKSPACE_BYTES,
};
use super::collective::{engine_all_reduce, time_s, AllReduceKernel, Collective};
use super::iteration::{self, name, Timeline};
use super::training::TrainingCx;
use crate::engine::ops::{Block, OpKind, Phase};
use crate::engine::report::{
    LayerWork, Limit, MemPart, Memory, Mode, ModelStats, Parts, Report, Serving, Utilization, Work,
};
use crate::engine::scenario::{Arch, Batching, LengthSpread, Precision, RequestClass, Scenario, Setup, TaskKind};

mod burst;
mod explain;
mod inflight;

pub use burst::{Burst, Bursts, Latency};
pub use explain::explain;
pub use inflight::{EngineStep, Steady, PERCENTILES};

/// Generated tokens per request when the task does not say.
pub const DEFAULT_OUTPUT_TOKENS: u64 = 128;

/// Most decode ops a serving timeline holds: longer generations put runs of consecutive steps in
/// one op each (their times summed), so that a timeline stays a few thousand ops and an
/// evaluation a few milliseconds, whatever the output length.
pub const MAX_DECODE_OPS: u64 = 1000;

/// Per-scenario quantities of the serving model.
#[derive(Clone, Debug)]
pub struct ServingCx<'a> {
    pub cx: TrainingCx<'a>,
    /// Prompt and generated tokens per request (with a request mix, its means, rounded).
    pub input: u64,
    pub output: u64,
    /// The kinds of request served, their shares adding up to 1: the task's request mix, or one
    /// kind of `input` and `output` tokens.
    pub classes: Vec<RequestClass>,
    /// Requests per replica.
    pub batch: f64,
    /// Bytes per weight and per KV-cache element.
    pub weight_bytes: f64,
    pub kv_bytes: f64,
    /// FLOP rate of the GEMMs at the weights' format, after utilisation: FP8 weights on FP8
    /// tensor cores at [`FP8_GEMM_EFFICIENCY`] of the FP8 peak's share (as training's FP8
    /// GEMMs), and at the 16-bit rate on a GPU without them (weight-only: vLLM runs FP8
    /// checkpoints on Ampere and Turing as W8A16 with its FP8 Marlin kernels); INT8 weights on
    /// the INT8 peak (W8A8); INT4 at the 16-bit rate (weight-only).
    pub rate: f64,
    /// The peak those GEMMs run against, FLOP/s (MFU's denominator).
    pub peak: f64,
}

/// The tokens one layer processes in one pass: prompt tokens (each attending to its prompt's
/// keys) and decoding requests (one token each, reading `context` cached tokens).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pass {
    pub prefill_tokens: f64,
    pub decode_tokens: f64,
    pub context: f64,
}

/// Durations of one layer's ops (all stages' layers alike), s.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Step {
    pub attn_s: f64,
    pub ffn_s: f64,
    /// Tensor-parallel all-reduces (two per layer) and MoE all-to-alls.
    pub comm_s: f64,
}

/// True when the default model evaluates `s` as serving: an LLM's inference.
pub fn serves(s: &Scenario) -> bool {
    matches!(s.task.kind, TaskKind::Inference) && matches!(s.model.arch, Arch::Llm(_) | Arch::LlmMoe(..))
}

/// Tokens each request generates: as the task says, else [`DEFAULT_OUTPUT_TOKENS`] (at most
/// half the model's sequence).
pub fn output_tokens(given: Option<u64>, seq: u64) -> u64 {
    given.unwrap_or(DEFAULT_OUTPUT_TOKENS.min(seq / 2).max(1))
}

/// The kinds of request a serving task serves, each with its share of the requests: the
/// task's mix; else its prompt and generated tokens (blank: the model's sequence `seq` less
/// [`output_tokens`], and [`output_tokens`]), one kind of them, or the kinds of their spread
/// ([`Setup::length_spread`]).
pub fn request_classes(setup: &Setup, seq: u64) -> Vec<RequestClass> {
    if !setup.request_mix.is_empty() {
        return setup.request_mix.clone();
    }
    let output = output_tokens(setup.output_tokens, seq);
    let input = setup.input_tokens.unwrap_or(seq.saturating_sub(output).max(1));
    match setup.length_spread {
        LengthSpread::Fixed => vec![RequestClass { input_tokens: input, output_tokens: output, share: 1.0 }],
        LengthSpread::Exponential => RequestClass::spread(input, output),
    }
}

impl<'a> ServingCx<'a> {
    /// The serving model of an LLM inference scenario; `None` for other families and tasks.
    pub fn new(s: &'a Scenario) -> Option<ServingCx<'a>> {
        if !serves(s) {
            return None;
        }
        let cx = TrainingCx::new(s)?;
        let setup = &s.task.setup;
        let classes = request_classes(setup, cx.d.seq as u64);
        let mean = |f: fn(&RequestClass) -> u64| classes.iter().map(|c| c.share * f(c) as f64).sum::<f64>();
        let input = (mean(|c| c.input_tokens).round() as u64).max(1);
        let output = (mean(|c| c.output_tokens).round() as u64).max(1);
        let model_bytes = cx.d.elem_bytes;
        let weight_bytes = setup.weight_format.map_or(model_bytes, Precision::bytes);
        let kv_bytes = setup.kv_format.map_or(model_bytes, Precision::bytes);
        let sys = &s.system;
        // (peak, the share of `flops_util` its GEMMs keep), by format as `rate` says.
        let (peak, share) = match (setup.weight_format, sys.fp8_flops_per_s) {
            (Some(Precision::Fp8), Some(fp8)) => (fp8, FP8_GEMM_EFFICIENCY),
            (Some(Precision::Int8), _) => (sys.i8_ops_per_s, 1.0),
            (Some(_), _) => (sys.f16_flops_per_s, 1.0),
            (None, _) => (cx.peak_flops_per_s, 1.0),
        };
        let batch = cx.local_batch as f64;
        let rate = peak * sys.flops_util * share;
        Some(ServingCx { rate, peak, cx, input, output, classes, batch, weight_bytes, kv_bytes })
    }

    /// The mean of `f` over the requests (each kind by its share).
    fn mean(&self, f: impl Fn(f64, f64) -> f64) -> f64 {
        self.classes.iter().map(|c| c.share * f(c.input_tokens as f64, c.output_tokens as f64)).sum()
    }

    /// The mean over the requests in flight of `f`: a request stays in flight about as many
    /// steps as it generates tokens, so each kind counts by its share times its output (long
    /// answers are over-represented).
    fn in_flight_mean(&self, f: impl Fn(f64, f64) -> f64) -> f64 {
        self.mean(|i, o| o * f(i, o)) / self.mean(|_, o| o)
    }

    /// A prompt token's prompt length, on average: long prompts have more tokens.
    fn prompt_tokens_length(&self) -> f64 {
        self.mean(|i, _| i * i) / self.mean(|i, _| i)
    }

    fn tp(&self) -> f64 {
        self.cx.lay.tp.size as f64
    }

    /// Key/value heads one GPU holds (replicated when tp exceeds them).
    fn kv_heads_local(&self) -> f64 {
        (self.cx.d.kv_heads / self.tp()).max(1.0)
    }

    fn head_dim(&self) -> f64 {
        self.cx.d.head_dim()
    }

    /// Layers of the busiest pipeline stage.
    fn stage_layers(&self) -> f64 {
        self.cx.d.layers.div_ceil(self.cx.lay.pp.size.max(1)) as f64
    }

    /// KV-cache bytes per token of context on one GPU: `layers/pp x 2 x kv heads/tp x head dim
    /// x bytes`.
    pub fn kv_bytes_per_token(&self) -> f64 {
        self.stage_layers() * 2.0 * self.kv_heads_local() * self.head_dim() * self.kv_bytes
    }

    fn roofline(&self, flops: f64, bytes: f64) -> f64 {
        (flops / self.rate).max(bytes / self.cx.hbm_bytes_per_s)
    }

    /// A GEMM's roofline, its bytes at the GEMMs' share of HBM bandwidth
    /// ([`crate::engine::scenario::System::gemm_bw_fraction`]).
    fn gemm_roofline(&self, flops: f64, bytes: f64) -> f64 {
        (flops / self.rate).max(bytes / self.cx.gemm_hbm_bytes_per_s)
    }

    /// One tensor-parallel all-reduce of `tokens` activations, s, and the kernel that runs it:
    /// the engine's fastest ([`engine_all_reduce`]), or NCCL's without its own kernels.
    fn tp_all_reduce(&self, tokens: f64) -> (f64, AllReduceKernel) {
        let cx = &self.cx;
        let bytes = tokens * cx.d.hidden * cx.d.elem_bytes;
        if cx.setup.custom_all_reduce {
            engine_all_reduce(bytes, cx.lay.tp, &cx.links, cx.setup.collective)
        } else {
            (time_s(Collective::AllReduce, bytes, cx.lay.tp, &cx.links, cx.setup.collective), AllReduceKernel::Nccl)
        }
    }

    fn comm(&self, tokens: f64) -> f64 {
        let cx = &self.cx;
        let act = tokens * cx.d.hidden * cx.d.elem_bytes;
        let tp = 2.0 * self.tp_all_reduce(tokens).0;
        let moe = if cx.d.is_moe() {
            2.0 * time_s(Collective::AllToAll, act * cx.d.active, cx.lay.ep, &cx.links, cx.setup.collective)
        } else {
            0.0
        };
        tp + moe
    }

    /// How a tensor-parallel all-reduce of `tokens` activations is explained: its formula, and
    /// which kernel the engine runs for it when it has its own.
    fn all_reduce_words(&self, tokens: f64) -> (&'static str, Option<&'static str>) {
        if !self.cx.setup.custom_all_reduce {
            return ("2 (tp-1)/tp x tokens x h x e / B_nvl + latency (NCCL)", None);
        }
        let (_, kernel) = self.tp_all_reduce(tokens);
        (
            "fastest of NCCL (2 (tp-1)/tp x bytes / B_nvl + a hop per GPU), one-shot ((tp-1) x bytes / B_nvl + one phase) and two-shot (2 (tp-1)/tp x bytes / B_nvl + two phases), bytes = tokens x h x e",
            Some(kernel.words()),
        )
    }

    /// A static batch's prefill micro-batches: (requests in each, how many). Without a
    /// pipeline the batch's prompts go through the layers at once. On one, they go in
    /// micro-batches of whole prompts so that the stages work at once, split as
    /// FasterTransformer and TurboMind split them ([`PREFILL_MICRO_TOKENS`]): the batch over the
    /// stages when they divide it, then halved while a micro-batch holds more than that many
    /// tokens and an even number of requests.
    pub fn prefill_micro(&self) -> (f64, u64) {
        self.pipeline_micro(self.batch, self.input)
    }

    /// A static batch's decode micro-batches: (requests in each, how many). FasterTransformer
    /// and TurboMind split a decode step on a pipeline as they split the prefill
    /// ([`ServingCx::prefill_micro`], one token per request): the batch over the stages when they
    /// divide it (then halved while over [`PREFILL_MICRO_TOKENS`] requests), else whole.
    pub fn decode_micro(&self) -> (f64, u64) {
        self.pipeline_micro(self.batch, 1)
    }

    /// Micro-batches of a pass of `tokens_each` tokens per request over a batch of `requests`
    /// on a pipeline, as FasterTransformer's `getLocalBatchSize` makes them: (requests in each,
    /// how many); the whole batch without a pipeline.
    fn pipeline_micro(&self, requests: f64, tokens_each: u64) -> (f64, u64) {
        let pp = self.cx.lay.pp.size.max(1);
        let batch = (requests as u64).max(1);
        if pp == 1 {
            return (requests, 1);
        }
        let mut local = if batch.is_multiple_of(pp) { batch / pp } else { batch };
        while local.saturating_mul(tokens_each) > PREFILL_MICRO_TOKENS && local % 2 == 0 {
            local /= 2;
        }
        (local as f64, batch / local)
    }

    /// One layer of the prefill: every prompt token of a micro-batch ([`ServingCx::prefill_micro`]:
    /// the whole batch without a pipeline) at once.
    pub fn prefill_layer(&self) -> Step {
        self.layer(self.prefill_pass())
    }

    /// The pass of one prefill micro-batch ([`ServingCx::prefill_micro`]): its prompt tokens.
    pub fn prefill_pass(&self) -> Pass {
        Pass { prefill_tokens: self.prefill_micro().0 * self.input as f64, decode_tokens: 0.0, context: 0.0 }
    }

    /// What the prefill's micro-batches after the first add, s: each one more pass through the
    /// busiest stage, while the others work on the micro-batches before and after it (0 without
    /// a pipeline, or with one micro-batch).
    pub fn prefill_pipelined_s(&self) -> f64 {
        let (_, m) = self.prefill_micro();
        let p = self.prefill_layer();
        (m.saturating_sub(1)) as f64 * self.stage_layers() * (p.attn_s + p.ffn_s + p.comm_s)
    }

    /// One layer of a decode step with `context` tokens already in the cache.
    #[cfg(test)]
    pub fn decode_layer(&self, context: f64) -> Step {
        self.layer(Pass { prefill_tokens: 0.0, decode_tokens: self.batch, context })
    }

    /// One layer of a pass over `p`'s tokens: attention, feed-forward and their collectives.
    pub fn layer(&self, p: Pass) -> Step {
        let d = &self.cx.d;
        let t = p.prefill_tokens + p.decode_tokens;
        let (outside, inside) = d.forward_bytes(Block::Fc);
        let ffn_s = self.block_gemms_s(Block::Fc, t)
            + t * (outside + inside / self.tp()) / self.cx.hbm_bytes_per_s
            + self.kernels_s(p, Block::Fc);
        Step { attn_s: self.attn_s(p), ffn_s, comm_s: self.comm(t) }
    }

    /// A block's GEMMs over `t` tokens, s, shaped as the training model shapes them
    /// ([`TrainingCx::block_gemms_of`], [`super::gemm`]): thin GEMMs (a decode step's few tokens) are
    /// bound by reading the weights, in their format; as the tokens grow they turn
    /// compute-bound, at the weights' GEMM rate, in whole tiles. A GEMM reads both operands at
    /// the weights' bytes (the activations are few where reading matters) and writes a 16-bit
    /// output.
    fn block_gemms_s(&self, block: Block, t: f64) -> f64 {
        let (e, gpu) = (self.cx.d.elem_bytes, self.cx.gemm_gpu(self.rate));
        self.cx
            .block_gemms_of(block, t)
            .iter()
            .map(|(g, count)| count * g.mixed_time_s(self.weight_bytes, e, gpu))
            .sum()
    }

    /// Keys a prompt token attends to on average: the prompt, or half of it when causal work is
    /// skipped.
    fn prompt_span(&self) -> f64 {
        let s = self.prompt_tokens_length();
        if self.cx.d.causal_skip {
            s / 2.0
        } else {
            s
        }
    }

    /// One layer's attention over `p`'s tokens, s: the projections' GEMMs
    /// ([`ServingCx::block_gemms_s`]); the scores against the roofline of the KV cache the prompt
    /// tokens write and the decoding requests read (the only part that grows with the
    /// context); element-wise traffic (the norm and residual's, and the rotary embeddings' over
    /// the queries and keys on this GPU). Where the prompt's scores go through HBM, `Q K^T`
    /// writes them and `P V` reads them (bytes of the scores' roofline, as in training,
    /// [`crate::engine::extended::shape::Dims::score_gemms_s`]) and the softmax reads and
    /// writes them (no dropout when serving).
    fn attn_s(&self, p: Pass) -> f64 {
        let d = &self.cx.d;
        let t = p.prefill_tokens + p.decode_tokens;
        let kv_token = 2.0 * self.kv_heads_local() * self.head_dim() * self.kv_bytes;
        let keys = p.prefill_tokens * self.prompt_span() + p.decode_tokens * p.context;
        let score_bytes = 2.0 * self.score_bytes(p.prefill_tokens);
        self.block_gemms_s(Block::Attn, t)
            + self.roofline(
                4.0 * keys * d.q_width() * d.score_cost() / self.tp(),
                (p.prefill_tokens + p.decode_tokens * p.context) * kv_token + score_bytes,
            )
            + (t * (d.hidden_bytes() + d.rope_bytes() / self.tp()) + score_bytes) / self.cx.hbm_bytes_per_s
            + self.kernels_s(p, Block::Attn)
    }

    /// Bytes of one layer's attention scores for `prefill_tokens` prompt tokens on this GPU's
    /// heads, each over its prompt, where they go through HBM ([`crate::engine::extended::shape::Dims::materialized`]); 0 where a
    /// fused kernel keeps them on chip.
    fn score_bytes(&self, prefill_tokens: f64) -> f64 {
        let d = &self.cx.d;
        if d.materialized() {
            prefill_tokens * d.heads / self.tp() * self.prompt_tokens_length() * d.elem_bytes
        } else {
            0.0
        }
    }

    /// The time one block's kernels take beyond their bytes and FLOPs in pass `p`, s:
    /// [`KERNELS_PER_BLOCK`] of [`ServingCx::kernel_s`], and eager norms' and activation's
    /// more ([`crate::engine::extended::shape::Dims::eager_kernels`]).
    fn kernels_s(&self, p: Pass, block: Block) -> f64 {
        (KERNELS_PER_BLOCK + self.cx.d.eager_kernels(block)[0]) * self.kernel_s(p)
    }

    /// Whether pass `p` replays a captured CUDA graph: the engine captures graphs
    /// ([`crate::engine::scenario::Setup::cuda_graphs`]) and the pass carries at most
    /// [`GRAPH_MAX_TOKENS`] tokens.
    pub fn replays_graph(&self, p: Pass) -> bool {
        self.cx.setup.cuda_graphs && p.prefill_tokens + p.decode_tokens <= GRAPH_MAX_TOKENS
    }

    /// The time each kernel of pass `p` takes beyond its bytes and FLOPs, s: a small kernel's run
    /// when the pass replays a graph ([`ServingCx::replays_graph`]), else a host launch.
    pub fn kernel_s(&self, p: Pass) -> f64 {
        if self.replays_graph(p) {
            GRAPH_KERNEL_S
        } else {
            KERNEL_OVERHEAD_S
        }
    }

    /// A decode step's attention in one layer with `context` tokens in the cache, s.
    #[cfg(test)]
    fn decode_attn_s(&self, context: f64) -> f64 {
        self.attn_s(Pass { prefill_tokens: 0.0, decode_tokens: self.batch, context })
    }

    /// The output layer for one token per request (prefill's last token, or a decode step), s.
    pub fn logits_s(&self) -> f64 {
        self.logits_for(self.batch)
    }

    /// The host's time to run an engine step of `requests` requests that the GPU waits for, s:
    /// [`crate::engine::scenario::Setup::host_step_s`] plus
    /// [`crate::engine::scenario::Setup::host_request_s`] per request (0 unless the task says).
    pub fn host_s(&self, requests: f64) -> f64 {
        self.cx.setup.host_step_s + self.cx.setup.host_request_s * requests
    }

    /// Pushes the GPU's wait for the host after `last`, when there is one ([`ServingCx::host_s`]).
    fn push_host(&self, tl: &mut Timeline, host_s: f64, last: Option<u32>) -> Option<u32> {
        if host_s <= 0.0 {
            return last;
        }
        tl.push(name(Block::Input, 0, Phase::Forward, OpKind::Idle, 0), host_s, &[last]).or(last)
    }

    /// The output layer and the sampler for `rows` tokens, s: the logits' GEMM
    /// ([`ServingCx::logits_gemm_s`]), the all-gather that gives every GPU of a
    /// tensor-parallel group the logits of the whole vocabulary (each computed its share; NCCL's,
    /// as vLLM, SGLang, TensorRT-LLM and FasterTransformer gather them), and the sampler
    /// ([`ServingCx::sample_s`]).
    pub fn logits_for(&self, rows: f64) -> f64 {
        self.logits_gemm_s(rows) + self.logits_gather_s(rows) + self.sample_s(rows)
    }

    /// The output layer's GEMM for `rows` tokens, s: every weight read once.
    pub fn logits_gemm_s(&self, rows: f64) -> f64 {
        let d = &self.cx.d;
        let v = d.vocab / self.tp();
        self.gemm_roofline(rows * 2.0 * d.hidden * v, d.hidden * v * self.weight_bytes)
    }

    /// The all-gather of `rows` tokens' logits over the tensor-parallel group, s (none on one
    /// GPU): each GPU ends with `rows x V` logits at the activations' element size.
    pub fn logits_gather_s(&self, rows: f64) -> f64 {
        let cx = &self.cx;
        time_s(Collective::AllGather, rows * cx.d.vocab * cx.d.elem_bytes, cx.lay.tp, &cx.links, cx.setup.collective)
    }

    /// The sampler's pass over `rows` tokens' logits, s: [`sampler_cost`]'s bytes per logit at
    /// the HBM share of element-wise kernels, and its kernels, each launched from the host.
    pub fn sample_s(&self, rows: f64) -> f64 {
        if rows <= 0.0 {
            return 0.0;
        }
        let c = sampler_cost(self.cx.setup.sampling);
        rows * self.cx.d.vocab * c.bytes_per_logit / self.cx.hbm_bytes_per_s + c.kernels * KERNEL_OVERHEAD_S
    }

    /// A pipeline hop of `tokens` activations, s.
    fn hop_s(&self, tokens: f64) -> f64 {
        let cx = &self.cx;
        if cx.lay.pp.size <= 1 {
            return 0.0;
        }
        let g = cx.lay.pp.neighbours();
        time_s(
            Collective::PointToPoint,
            tokens * cx.d.hidden * cx.d.elem_bytes / self.tp(),
            g,
            &cx.links,
            cx.setup.collective,
        )
    }

    /// Pipeline hops of one pass: (p - 1) transfers, s.
    pub fn hops_s(&self, tokens: f64) -> f64 {
        (self.cx.lay.pp.size.max(1) - 1) as f64 * self.hop_s(tokens)
    }

    /// Model FLOPs of one request's prefill: every layer for every prompt token (attention over
    /// the prompt, halved when causal work is skipped), logits for the last token.
    pub fn prefill_flops(&self) -> f64 {
        self.prefill_flops_of(self.input)
    }

    fn prefill_flops_of(&self, input: u64) -> f64 {
        let d = &self.cx.d;
        let f = d.layer_flops();
        let s_att = if d.causal_skip { input as f64 / 2.0 } else { input as f64 };
        input as f64 * d.layers as f64 * (f.attn_linear + f.ffn + 4.0 * s_att * d.q_width()) + 2.0 * d.hidden * d.vocab
    }

    /// Model FLOPs of one request's decode step `i`: one token through every layer, attending to
    /// its whole context, and its logits.
    pub fn decode_flops(&self, i: u64) -> f64 {
        self.decode_flops_of(self.input, i)
    }

    fn decode_flops_of(&self, input: u64, i: u64) -> f64 {
        let d = &self.cx.d;
        let f = d.layer_flops();
        let ctx = (input + i) as f64;
        d.layers as f64 * (f.attn_linear + f.ffn + 4.0 * ctx * d.q_width()) + 2.0 * d.hidden * d.vocab
    }

    /// Time to first token, s: every layer's prefill of the first micro-batch, the hops between
    /// stages, the other micro-batches through the busiest stage ([`ServingCx::prefill_pipelined_s`]),
    /// the logits.
    pub fn ttft_s(&self) -> f64 {
        let p = self.prefill_layer();
        self.cx.d.layers as f64 * (p.attn_s + p.ffn_s + p.comm_s)
            + self.hops_s(self.prefill_micro().0 * self.input as f64)
            + self.prefill_pipelined_s()
            + self.logits_s()
            + self.host_s(self.batch)
    }

    /// Decode step `i` (1-based, after the prefill's first token): (compute, communication), s.
    pub fn decode_step(&self, i: u64) -> (f64, f64) {
        self.decode_steps(i, i)
    }

    /// Decode steps `first` to `last` together: their (compute, communication) time, s. Only
    /// attention depends on the step (its context grows by one token each time), and linearly:
    /// its score FLOPs and its KV-cache reads are both proportional to the context, so their
    /// roofline is too. Its sum over the steps is taken in closed form (a million-token answer
    /// costs a run of steps no more than one step), the rest counted once per step.
    ///
    /// A step in `m` micro-batches on `p` stages ([`ServingCx::decode_micro`]) takes `p - 1 + m`
    /// passes of a micro-batch through the busiest stage (the last micro-batch leaves the first
    /// stage after `m` of them, then crosses the others), and the last stage's `m` logits: less
    /// time than the whole batch stage after stage where the GEMMs are compute-bound, more
    /// where reading the weights sets the pace (each micro-batch reads them again).
    pub fn decode_steps(&self, first: u64, last: u64) -> (f64, f64) {
        let (micro, m) = self.decode_micro();
        let layer_passes = if m > 1 {
            (self.cx.lay.pp.size.max(1) - 1 + m) as f64 * self.stage_layers()
        } else {
            self.cx.d.layers as f64
        };
        let n = (last + 1).saturating_sub(first) as f64;
        let ctx = (self.input + first) as f64;
        let pass = |context: f64| Pass { prefill_tokens: 0.0, decode_tokens: micro, context };
        let one = self.layer(pass(ctx));
        let at_first = self.attn_s(pass(ctx));
        let per_token = self.attn_s(pass(ctx + 1.0)) - at_first;
        let attn = n * at_first + per_token * n * (n - 1.0) / 2.0;
        (
            n * (layer_passes * one.ffn_s + m as f64 * self.logits_for(micro) + self.host_s(self.batch))
                + layer_passes * attn,
            n * (layer_passes * one.comm_s + self.hops_s(micro)),
        )
    }

    /// The decode steps each op of the timeline stands for: one step per op up to
    /// [`MAX_DECODE_OPS`] steps, else runs of `ceil(steps / MAX_DECODE_OPS)` steps; each run as
    /// (first, last) step.
    pub fn decode_runs(&self) -> impl Iterator<Item = (u64, u64)> {
        let steps = self.output.saturating_sub(1);
        let per = steps.div_ceil(MAX_DECODE_OPS).max(1);
        (0..steps.div_ceil(per)).map(move |k| (1 + k * per, ((k + 1) * per).min(steps)))
    }

    /// Memory per GPU of a static batch: weights, KV cache of the batch at full length, the
    /// prefill's working activations (and fp32 logits) of one micro-batch on a pipeline
    /// ([`ServingCx::prefill_micro`]'s split; the whole batch without one), buffers.
    pub fn memory(&self, batch: f64) -> Memory {
        let micro = if batch > 0.0 { self.pipeline_micro(batch, self.input).0 } else { 0.0 };
        self.memory_of(batch * (self.input + self.output) as f64, micro * self.input as f64, micro)
    }

    /// Memory per GPU holding `kv_tokens` tokens of KV cache, with one pass of `pass_tokens`
    /// tokens at work and `logit_rows` rows of logits: weights, KV cache, activations, buffers.
    fn memory_of(&self, kv_tokens: f64, pass_tokens: f64, logit_rows: f64) -> Memory {
        let cx = &self.cx;
        let d = &cx.d;
        let (dense, expert) = cx.stage_params(cx.lay.pp.size.max(1) - 1);
        let weights = (dense + expert) * self.weight_bytes;
        let kv = kv_tokens * self.kv_bytes_per_token();
        // The pass's working set: one layer's activations for every token, the layer's scores
        // where they go through HBM (each prompt token's over its prompt, on this GPU's heads;
        // fused kernels keep them on chip), and fp32 logits for the rows that need them.
        let (outside, inside, _) = d.stored_bytes();
        let activations = pass_tokens * (outside + inside / self.tp())
            + self.score_bytes(pass_tokens)
            + logit_rows * d.vocab / self.tp() * 4.0;
        let parts = vec![
            (MemPart::Weights, weights),
            (MemPart::KvCache, kv),
            (MemPart::Activations, activations),
            (MemPart::Buffers, WORKSPACE_BYTES),
        ];
        Memory::of_parts(parts, cx.s.system.mem_cap_bytes)
    }

    /// The largest static batch per replica that fits (0 when the weights alone do not), each
    /// request costing what the first does: on a pipeline a larger batch prefills in
    /// micro-batches and needs less, so this errs small there.
    pub fn max_batch(&self) -> u64 {
        let fixed = self.memory(0.0);
        how_many_fit(&fixed, self.memory(1.0).total_bytes - fixed.total_bytes)
    }

    /// The ops of a static batch: the prefill layer by layer, the first token's logits, then
    /// the decode steps (runs of them, [`ServingCx::decode_runs`]).
    fn timeline(&self) -> (Vec<crate::engine::ops::Op>, crate::engine::schedule::Schedule) {
        let runs = self.output.saturating_sub(1).min(MAX_DECODE_OPS);
        let mut tl = Timeline::new(4 * self.cx.d.layers as usize + 2 * runs as usize + 8);
        let f = Phase::Forward;
        let hop = self.hop_s(self.prefill_micro().0 * self.input as f64);
        let (mut last, pipelined) = (self.push_layers(&mut tl, self.prefill_layer(), hop), self.prefill_pipelined_s());
        if pipelined > 0.0 {
            last = tl.push(name(Block::Pipeline, 0, f, OpKind::Compute, 0), pipelined, &[last]).or(last);
        }
        last = tl.push(name(Block::Head, 0, f, OpKind::Compute, 0), self.logits_s(), &[last]).or(last);
        last = self.push_host(&mut tl, self.host_s(self.batch), last);
        // Decode ops: the run's first step in `micro`, its last in `layer`.
        for (from, to) in self.decode_runs() {
            let (comp, comm) = self.decode_steps(from, to);
            let first = from.min(u32::MAX as u64) as u32;
            let c = tl.push(name(Block::Decode, to, f, OpKind::Compute, first), comp, &[last]);
            let k = tl.push(name(Block::Decode, to, f, OpKind::ActAllReduce, first), comm, &[c]);
            last = k.or(c).or(last);
        }
        tl.finish()
    }

    /// Pushes one pass through every layer ([`ServingCx::push_layers`]) and the logits; returns
    /// the last op.
    fn push_pass(&self, tl: &mut Timeline, p: Step, hop_s: f64, logits_s: f64) -> Option<u32> {
        let last = self.push_layers(tl, p, hop_s);
        tl.push(name(Block::Head, 0, Phase::Forward, OpKind::Compute, 0), logits_s, &[last]).or(last)
    }

    /// Pushes one pass through every layer: attention, its all-reduce, feed-forward, its
    /// all-reduce; a hop at each stage boundary. Returns the last op.
    fn push_layers(&self, tl: &mut Timeline, p: Step, hop_s: f64) -> Option<u32> {
        let f = Phase::Forward;
        let per_stage = self.cx.d.layers.div_ceil(self.cx.lay.pp.size.max(1));
        let mut last: Option<u32> = None;
        for l in 0..self.cx.d.layers {
            if l > 0 && l % per_stage == 0 {
                last = tl.push(name(Block::Pipeline, l, f, OpKind::PipeTransfer, 0), hop_s, &[last]).or(last);
            }
            let a = tl.push(name(Block::Attn, l, f, OpKind::Compute, 0), p.attn_s, &[last]);
            let ac = tl.push(name(Block::Attn, l, f, OpKind::ActAllReduce, 0), p.comm_s / 2.0, &[a]);
            let c = tl.push(name(Block::Fc, l, f, OpKind::Compute, 0), p.ffn_s, &[a, ac]);
            let fc = tl.push(name(Block::Fc, l, f, OpKind::ActAllReduce, 0), p.comm_s / 2.0, &[c]);
            last = fc.or(c);
        }
        last
    }

    /// Model FLOPs of one request: its prefill and every decode step, over the mix.
    fn request_flops(&self) -> f64 {
        self.classes.iter().map(|c| c.share * self.request_flops_of(c.input_tokens, c.output_tokens)).sum()
    }

    /// Model FLOPs of a request of `input` prompt and `output` generated tokens: the prefill and
    /// decode steps 1 to `output - 1` ([`ServingCx::decode_flops`]), whose sum is linear in the
    /// step, so it is taken in closed form: a million-token answer costs no more to count.
    fn request_flops_of(&self, input: u64, output: u64) -> f64 {
        let steps = output.saturating_sub(1) as f64;
        // decode_flops_of(input, i) = first + slope x (i - 1), for i = 1 ..= steps.
        let first = self.decode_flops_of(input, 1);
        let slope = self.decode_flops_of(input, 2) - first;
        self.prefill_flops_of(input) + steps * first + slope * steps * (steps - 1.0) / 2.0
    }
}

/// How many requests of `per_bytes` each fit in the room `fixed` leaves on its GPU (0 when
/// none does).
fn how_many_fit(fixed: &Memory, per_bytes: f64) -> u64 {
    let room = fixed.capacity_bytes - fixed.total_bytes;
    if per_bytes <= 0.0 || room <= 0.0 {
        0
    } else {
        (room / per_bytes).floor() as u64
    }
}

/// Evaluates an LLM serving scenario.
pub fn evaluate(sv: &ServingCx) -> Report {
    let cx = &sv.cx;
    let replicas = cx.lay.dense_dp.size;
    let n = cx.s.system.num_devices as f64;
    let inflight = cx.setup.batching == Batching::InFlight;
    let mut overloaded = None;
    let mut percentiles = None;
    let burst = cx.setup.burst_requests.filter(|_| inflight).map(|n| sv.burst_over_replicas(n));
    let (ops, schedule, memory, figures, requests) = if let Some(b) = &burst {
        let st = sv.steady(sv.concurrency());
        percentiles = Some(b.percentiles());
        let (ops, schedule) = sv.step_timeline(&st.drawn);
        let per_replica_s = b.requests() as f64 / replicas as f64 / b.makespan_s();
        let figures =
            (b.mean(Latency::Ttft), b.mean(Latency::Tpot), b.mean(Latency::E2e), per_replica_s, b.mean_in_flight());
        (ops, schedule, sv.inflight_memory(st.concurrency), figures, b.mean_in_flight() * replicas as f64)
    } else if inflight {
        let (st, most) = sv.steady_at_load();
        overloaded =
            most.map(|most_per_s| Limit::Overloaded { asked_per_s: cx.setup.request_rate.unwrap_or(0.0), most_per_s });
        // Requests arriving at random (a rate the engine keeps up with) wait for the prefill.
        let poisson = cx.setup.request_rate.is_some() && most.is_none();
        let wait_s = st.mean_wait_s(poisson);
        if most.is_none() {
            percentiles = Some(sv.percentiles(&st, poisson));
        }
        let (ops, schedule) = sv.step_timeline(&st.drawn);
        let figures = (st.ttft_s + wait_s, st.tpot_s, st.e2e_s + wait_s, st.requests_per_s, st.concurrency);
        (ops, schedule, sv.inflight_memory(st.concurrency), figures, st.concurrency * replicas as f64)
    } else {
        let (ops, schedule) = sv.timeline();
        let ttft = sv.ttft_s();
        let e2e = schedule.end_s;
        let steps = sv.output.saturating_sub(1);
        let tpot = if steps > 0 { (e2e - ttft) / steps as f64 } else { 0.0 };
        let figures = (ttft, tpot, e2e, sv.batch / e2e, sv.batch);
        (ops, schedule, sv.memory(sv.batch), figures, sv.batch * replicas as f64)
    };
    let (ttft, tpot, e2e, requests_per_s_per_replica, in_flight) = figures;
    // A cluster that keeps up with the rate completes the rate itself (not the replicas' share
    // of it multiplied back, which rounding can leave a hair off: plans that keep up tie).
    let kept_rate = cx.setup.request_rate.filter(|_| inflight && burst.is_none() && overloaded.is_none());
    let mut limits = Vec::new();
    limits.extend(memory.does_not_fit());
    limits.extend(overloaded);
    let requests_per_s = kept_rate.unwrap_or(requests_per_s_per_replica * replicas as f64);
    let tokens_per_s = match &burst {
        Some(b) => b.output_tokens() / b.makespan_s(),
        None => requests_per_s * sv.mean(|_, o| o),
    };
    let d = &cx.d;
    let request_flops = sv.request_flops();
    let (input, output) = d.edge_params();
    let model = ModelStats {
        params: d.params(),
        dense_params: d.params() - input - output,
        emb_params: input + output,
        flops_per_sample: request_flops,
        lookup_bytes_per_sample: 0.0,
    };
    // The model FLOPs of the report's time span: the batch's requests (static), or the requests
    // one engine step completes (in flight).
    let span_requests = if inflight { requests_per_s * schedule.end_s } else { requests };
    let model_flops = span_requests * request_flops;
    let work = Work {
        layers: vec![LayerWork {
            label: "Transformer layer (prefill)",
            local_flops: d.layer_flops().total() * sv.batch * sv.input as f64,
            global_flops: d.layer_flops().total() * requests * sv.input as f64,
        }],
        local_total_flops: model_flops / replicas as f64,
        global_total_flops: model_flops,
        lookup_bytes_per_local_batch: 0.0,
        lookup_bytes_per_global_batch: 0.0,
        lookup_bytes_per_device: 0.0,
    };
    let system = iteration::system_stats(cx.s, sv.rate, cx.hbm_bytes_per_s, &cx.links);
    let parts = Parts { ops, schedule, global_batch: requests as u64, memory, work, model, system };
    let mut r = Report::assemble(parts, Mode::Default);
    r.throughput_samples_per_s = requests_per_s;
    let denom = r.iteration_s * n * sv.peak;
    r.utilization = Some(Utilization {
        model_flops,
        hardware_flops: model_flops,
        peak_flops_per_s: sv.peak,
        mfu: model_flops / denom,
        hfu: model_flops / denom,
        model_flops_per_s_per_gpu: model_flops / (r.iteration_s * n),
        formula: if inflight {
            "MFU = FLOPs of the requests an engine step completes (each: prefill and every decode step) / (step time x GPUs x peak FLOP/s per GPU)"
        } else {
            "MFU = FLOPs of the prefill and every decode step / (end-to-end time x GPUs x peak FLOP/s per GPU)"
        },
    });
    r.serving = Some(Serving {
        batching: cx.setup.batching,
        input_tokens: sv.input,
        output_tokens: sv.output,
        batch: cx.local_batch,
        in_flight,
        prefill_micro_batches: if inflight { 1 } else { sv.prefill_micro().1 },
        replicas,
        ttft_s: ttft,
        tpot_s: tpot,
        e2e_s: e2e,
        output_tokens_per_s: tokens_per_s,
        output_tokens_per_s_per_gpu: tokens_per_s / n,
        requests_per_s,
        kv_bytes_per_token: sv.kv_bytes_per_token(),
        max_batch: if inflight { sv.inflight_limit() } else { sv.max_batch() },
        weight_bytes: sv.weight_bytes,
        kv_bytes: sv.kv_bytes,
        step_tokens: cx.setup.step_tokens,
        kv_page_tokens: cx.setup.kv_page_tokens,
        prefill_steps: cx.setup.prefill_steps,
        scheduler_steps: cx.setup.scheduler_steps,
        request_rate: cx.setup.request_rate.filter(|_| inflight),
        burst_requests: burst.as_ref().map(Bursts::requests),
        makespan_s: burst.as_ref().map(Bursts::makespan_s),
        recomputed_tokens: burst.as_ref().map_or(0.0, Bursts::recomputed_tokens),
        percentiles,
        request_mix: cx.setup.request_mix.clone(),
        length_spread: cx.setup.length_spread,
    });
    r.limits = limits;
    r
}

#[cfg(test)]
mod tests {
    use super::tests_support::{llama70, llama70_on, llama70_replicas};
    use super::*;
    use crate::engine::extended::collective::Group;
    use serde_json::json;

    #[test]
    fn a_cluster_that_keeps_up_with_a_request_rate_completes_the_rate() {
        // Replicas of LLaMA-2-70B on 4 A100s each given a request rate they keep up with: each
        // serves its share, and the cluster completes the rate exactly (the share multiplied
        // back is a hair off for some counts: 2 x 1.3 / 2 was 1.3000000000000003, and plans
        // that keep up would not tie in the explorer).
        for (replicas, rate) in [(2u64, 1.3), (3, 2.0), (5, 0.7)] {
            let s = llama70_replicas(4, replicas, 64, json!({"batching": "inflight", "request_rate": rate}));
            let r = crate::engine::evaluate(&s);
            assert!(r.limits.iter().all(|l| !matches!(l, Limit::Overloaded { .. })), "{:?}", r.limits);
            assert_eq!(r.throughput_samples_per_s, rate, "{replicas} replicas");
        }
    }

    #[test]
    fn weights_formats_run_their_gemms_where_the_gpu_computes_them() {
        // FP8 weights on an H100 (an FP8 peak set): the FP8 peak at the share of the GEMM
        // fraction FP8 GEMMs keep, as FP8 training's; the peak MFU is taken against is the FP8
        // peak.
        let h100 = llama70_on(8);
        let sv = ServingCx::new(&h100).expect("serving");
        assert!((sv.rate - 1979e12 * 0.8 * FP8_GEMM_EFFICIENCY).abs() < 1.0, "{}", sv.rate);
        assert_eq!((sv.peak, sv.weight_bytes), (1979e12, 1.0));
        // The same weights on an A100 (no FP8 peak): read in 8 bits, computed in 16 (weight-only,
        // as vLLM's FP8 Marlin kernels run them), not at the INT8 peak.
        let a100 = llama70(4, 16, json!({"weight_format": "fp8"}));
        let sv = ServingCx::new(&a100).expect("serving");
        assert_eq!((sv.rate, sv.peak, sv.weight_bytes), (312e12 * 0.8, 312e12, 1.0));
        // INT8 weights on the INT8 tensor cores (W8A8); INT4 weight-only at the 16-bit rate.
        let int8 = ServingCx::new(&llama70(4, 16, json!({"weight_format": "int8"}))).map(|sv| sv.rate);
        assert_eq!(int8, Some(624e12 * 0.8));
        let int4 =
            ServingCx::new(&llama70(4, 16, json!({"weight_format": "int4"}))).map(|sv| (sv.rate, sv.weight_bytes));
        assert_eq!(int4, Some((312e12 * 0.8, 0.5)));
    }

    #[test]
    fn decodings_gemms_stream_at_the_gemms_share_of_hbm_and_the_rest_at_the_hbm_share() {
        // LLaMA-2-70B on 4 A100s, one request: with GEMMs at half the HBM share, a decoding
        // token's weight reads (its GEMMs and the logits) take twice as long; its KV-cache
        // reads and element-wise passes do not move.
        let plain = llama70(4, 1, json!({}));
        let halved = plain.with_gemm_bw(Some(plain.system().mem_bw_util / 2.0)).expect("valid");
        let (a, b) = (ServingCx::new(&plain).expect("serving"), ServingCx::new(&halved).expect("serving"));
        for block in [Block::Attn, Block::Fc] {
            let ratio = b.block_gemms_s(block, 1.0) / a.block_gemms_s(block, 1.0);
            assert!((ratio - 2.0).abs() < 1e-9, "{block:?}: {ratio}");
        }
        assert!((b.logits_gemm_s(1.0) / a.logits_gemm_s(1.0) - 2.0).abs() < 1e-9);
        let pass = Pass { prefill_tokens: 0.0, decode_tokens: 1.0, context: 2048.0 };
        let score = |sv: &ServingCx| sv.attn_s(pass) - sv.block_gemms_s(Block::Attn, 1.0);
        assert!((score(&b) - score(&a)).abs() < 1e-15, "{} {}", score(&a), score(&b));
        // Unset, GEMMs stream at the HBM share.
        assert_eq!(a.cx.gemm_hbm_bytes_per_s, a.cx.hbm_bytes_per_s);
    }

    #[test]
    fn each_step_gathers_its_logits_and_samples_them_as_asked() {
        // LLaMA-2-70B (vocabulary 32,000), 64 requests: on one GPU nothing is gathered; on 4
        // the logits of the whole vocabulary are, 64 x 32,000 x 2 bytes per GPU.
        let scenarios = [(1, "greedy"), (4, "greedy"), (4, "random"), (4, "top-p")]
            .map(|(tp, sampling)| llama70(tp, 64, json!({"sampling": sampling})));
        let on = |tp: u64, sampling: &str| {
            let s = scenarios
                .iter()
                .find(|s| s.system().num_devices == tp && s.task().setup.sampling.config_name() == sampling);
            ServingCx::new(s.expect("built above")).expect("serving")
        };
        let (one, four) = (on(1, "greedy"), on(4, "greedy"));
        assert_eq!(one.logits_gather_s(64.0), 0.0);
        let gathered = time_s(
            Collective::AllGather,
            64.0 * 32000.0 * 2.0,
            four.cx.lay.tp,
            &four.cx.links,
            four.cx.setup.collective,
        );
        assert!(gathered > 0.0 && four.logits_gather_s(64.0) == gathered);
        // The sampler reads every logit: greedy 10 bytes each and 2 kernels, top-p 256 and 20.
        let hbm = four.cx.hbm_bytes_per_s;
        for (sampling, bytes, kernels) in [("greedy", 10.0, 2.0), ("random", 46.0, 6.0), ("top-p", 256.0, 20.0)] {
            let sv = on(4, sampling);
            let want = 64.0 * 32000.0 * bytes / hbm + kernels * KERNEL_OVERHEAD_S;
            assert!((sv.sample_s(64.0) - want).abs() < 1e-15, "{sampling}: {} against {want}", sv.sample_s(64.0));
            assert_eq!(sv.logits_for(64.0), sv.logits_gemm_s(64.0) + gathered + want);
            assert_eq!(sv.sample_s(0.0), 0.0);
        }
        // A decode step pays the difference, and so does the first token.
        let (greedy, top_p) = (on(4, "greedy"), on(4, "top-p"));
        let more = top_p.sample_s(64.0) - greedy.sample_s(64.0);
        assert!((top_p.decode_step(1).0 - greedy.decode_step(1).0 - more).abs() < 1e-12);
        assert!((top_p.ttft_s() - greedy.ttft_s() - more).abs() < 1e-12);
        // About 0.37 ms a step more on A100s at 64 requests: a few percent of a 70B model's step.
        assert!(more > 0.3e-3 && more < 0.45e-3 && more < 0.1 * greedy.decode_step(1).0, "{more}");
    }

    #[test]
    fn a_prompts_materialized_scores_are_written_read_and_softmaxed_in_hbm() {
        // LLaMA-2-70B on 4 A100s, 4,096 prompt tokens of one request in a pass.
        let s = llama70(4, 1, json!({"input_tokens": 4096}));
        let mut sv = ServingCx::new(&s).expect("serving");
        let p = Pass { prefill_tokens: 4096.0, decode_tokens: 0.0, context: 0.0 };
        let fused = sv.attn_s(p);
        let fused_memory = sv.memory(1.0).total_bytes;
        sv.cx.d.attention = crate::engine::scenario::Attention::Materialized;
        let d = sv.cx.d;
        let b = sv.cx.hbm_bytes_per_s;
        // 4,096 x 4,096 scores for each of the GPU's 16 heads, 2 bytes each: Q K^T writes them
        // and P V reads them, the softmax reads and writes them (no dropout mask).
        let scores = 4096.0 * 16.0 * 4096.0;
        assert_eq!(sv.prompt_tokens_length(), 4096.0);
        let kv = 4096.0 * 2.0 * 2.0 * 128.0 * 2.0;
        // The rotary embeddings read and write the GPU's queries and keys.
        let rest = sv.block_gemms_s(Block::Attn, 4096.0)
            + 4096.0 * (d.hidden_bytes() + d.rope_bytes() / 4.0) / b
            + sv.kernels_s(p, Block::Attn);
        // At 128 FLOPs per score byte under the A100's 149, the scores' bytes set the roofline.
        let flops_s = 4.0 * 4096.0 * 4096.0 * d.q_width() / 4.0 / sv.rate;
        assert!(flops_s < (kv + 2.0 * 2.0 * scores) / b);
        let want = rest + (kv + 2.0 * 2.0 * scores) / b + 2.0 * 2.0 * scores / b;
        assert!((sv.attn_s(p) - want).abs() < 1e-12 * want, "{} vs {want}", sv.attn_s(p));
        // A fused kernel keeps them on chip: less than the softmax's traffic alone adds.
        assert!(fused + 2.0 * 2.0 * scores / b < sv.attn_s(p), "{fused}");
        // And the prefill holds one layer's scores in HBM: 4,096 x 16 x 4,096 x 2 bytes, 537 MB.
        let more = sv.memory(1.0).total_bytes - fused_memory;
        assert!((more - 2.0 * scores).abs() < 1e-9 * more, "{more}");
    }

    #[test]
    fn a_decode_step_on_a_pipeline_goes_in_micro_batches_when_the_stages_divide_the_batch() {
        // LLaMA-2-70B on tp 2 x pp 4 (20 layers a stage), prompts of 128 tokens.
        let on_pipeline = |batch: u64| {
            let pipeline = json!({"transformer_parallel": ["tp", "pp"], "transformer_parallel_degree": [2, 4], "input_tokens": 128});
            llama70(8, batch, pipeline)
        };
        let micro = |batch: u64| ServingCx::new(&on_pipeline(batch)).expect("serving").decode_micro();
        // FasterTransformer's split with one token a request: the batch over the 4 stages when
        // they divide it, else whole; halved while a micro-batch holds over 1,024 requests.
        assert_eq!(micro(64), (16.0, 4));
        assert_eq!(micro(6), (6.0, 1));
        assert_eq!(micro(8192), (1024.0, 8));
        // The whole batch stage after stage: 80 layers of `batch` requests, one logits.
        let whole = |sv: &ServingCx, batch: f64| {
            let w = sv.layer(Pass { prefill_tokens: 0.0, decode_tokens: batch, context: 129.0 });
            80.0 * (w.ffn_s + w.attn_s) + sv.logits_for(batch)
        };
        // A step in 4 micro-batches of 16: 4 - 1 + 4 = 7 passes of a micro-batch through a
        // stage of 20 layers, 4 logits of 16 rows, 3 hops of a micro-batch.
        let s = on_pipeline(64);
        let sv = ServingCx::new(&s).expect("serving");
        let one = sv.layer(Pass { prefill_tokens: 0.0, decode_tokens: 16.0, context: 129.0 });
        let (comp, comm) = sv.decode_steps(1, 1);
        assert!((comp - (7.0 * 20.0 * (one.ffn_s + one.attn_s) + 4.0 * sv.logits_for(16.0))).abs() < 1e-12 * comp);
        assert!((comm - (7.0 * 20.0 * one.comm_s + sv.hops_s(16.0))).abs() < 1e-12 * comm);
        // At 64 requests a step reads the weights: micro-batches, reading them 4 times, take
        // longer. At 4,096 the GEMMs are compute-bound: micro-batches keep every stage busy.
        assert!(comp > 1.3 * whole(&sv, 64.0), "{comp} against {}", whole(&sv, 64.0));
        let s = on_pipeline(4096);
        let sv = ServingCx::new(&s).expect("serving");
        let big = sv.decode_steps(1, 1).0;
        assert!(big < 0.7 * whole(&sv, 4096.0), "{big} against {}", whole(&sv, 4096.0));
        // Without a pipeline nothing splits.
        let flat = llama70(8, 64, json!({}));
        assert_eq!(ServingCx::new(&flat).expect("serving").decode_micro(), (64.0, 1));
    }

    #[test]
    fn a_static_batch_on_a_pipeline_holds_one_prefill_micro_batchs_activations() {
        // LLaMA-2-70B on tp 2 x pp 4, 256 prompts of 128 tokens: 32 micro-batches of 8.
        let s = llama70(
            8,
            256,
            json!({"transformer_parallel": ["tp", "pp"], "transformer_parallel_degree": [2, 4], "input_tokens": 128}),
        );
        let sv = ServingCx::new(&s).expect("serving");
        assert_eq!(sv.prefill_micro(), (8.0, 32));
        let part = |m: &Memory, p: MemPart| m.parts.iter().find(|x| x.0 == p).map_or(0.0, |x| x.1);
        let held = sv.memory(256.0);
        // The whole batch's working set at once, as the memory was counted before.
        let whole = sv.memory_of(256.0 * (128 + sv.output) as f64, 256.0 * 128.0, 256.0);
        let (a, w) = (part(&held, MemPart::Activations), part(&whole, MemPart::Activations));
        assert!(a > 0.0 && (a * 32.0 - w).abs() < 1e-6 * w, "{a} against {w}");
        assert_eq!(part(&held, MemPart::KvCache), part(&whole, MemPart::KvCache));
        // The largest batch counts each request as the first one, which prefills alone: at most
        // what fits, never more.
        let most = sv.max_batch();
        assert!(sv.memory(most as f64).fits() && most > 0);
    }

    #[test]
    fn a_static_batch_prefills_through_a_pipeline_in_micro_batches() {
        // LLaMA-2-70B on tp 2 x pp 4: 80 layers, 20 a stage.
        let on_pipeline = |batch: u64, input: u64| {
            llama70(
                8,
                batch,
                json!({"transformer_parallel": ["tp", "pp"], "transformer_parallel_degree": [2, 4], "input_tokens": input}),
            )
        };
        let micro = |batch, input| ServingCx::new(&on_pipeline(batch, input)).expect("serving").prefill_micro();
        // FasterTransformer's split: the batch over the 4 stages when they divide it, then
        // halved while a micro-batch holds more than 1,024 tokens and an even count.
        assert_eq!(micro(256, 128), (8.0, 32));
        assert_eq!(micro(12, 200), (3.0, 4));
        assert_eq!(micro(6, 100), (6.0, 1));
        assert_eq!(micro(6, 1000), (3.0, 2));
        assert_eq!(micro(1, 4096), (1.0, 1));
        // Without a pipeline the prompts go at once.
        let flat = llama70(8, 256, json!({"input_tokens": 128}));
        let flat = ServingCx::new(&flat).expect("serving");
        assert_eq!((flat.prefill_micro(), flat.prefill_pipelined_s()), ((256.0, 1), 0.0));
        // The first micro-batch crosses all 80 layers and 3 hops; each of the other 31 adds a
        // pass through a stage of 20 layers.
        let s = on_pipeline(256, 128);
        let sv = ServingCx::new(&s).expect("serving");
        let p = sv.prefill_layer();
        let layer = p.attn_s + p.ffn_s + p.comm_s;
        let want = 80.0 * layer + 3.0 * sv.hop_s(8.0 * 128.0) + 31.0 * 20.0 * layer + sv.logits_s();
        assert!((sv.ttft_s() - want).abs() < 1e-12 * want, "{} {want}", sv.ttft_s());
        // Faster than the whole batch through the stages in turn, slower than a quarter of it.
        let whole = sv.layer(Pass { prefill_tokens: 256.0 * 128.0, decode_tokens: 0.0, context: 0.0 });
        let serial = 80.0 * (whole.attn_s + whole.ffn_s + whole.comm_s);
        assert!(sv.ttft_s() < 0.5 * serial && sv.ttft_s() > serial / 4.0, "{} {serial}", sv.ttft_s());
        // The timeline shows the other micro-batches as one op, and its first token comes at the
        // time to first token.
        let r = evaluate(&sv);
        let pipelined: Vec<&crate::engine::ops::Op> =
            r.timeline.iter().filter(|o| o.name.block == Block::Pipeline && o.name.kind == OpKind::Compute).collect();
        assert!(pipelined.len() == 1 && pipelined[0].duration_s == sv.prefill_pipelined_s(), "{pipelined:?}");
        let head = r.timeline.iter().find(|o| o.name.block == Block::Head).expect("the logits");
        assert!((head.end_s() - sv.ttft_s()).abs() < 1e-9 * sv.ttft_s(), "{} {}", head.end_s(), sv.ttft_s());
        let serving = r.serving.as_ref().expect("serving");
        assert_eq!((serving.ttft_s, serving.prefill_micro_batches), (sv.ttft_s(), 32));
        let words = crate::wording::batching(serving);
        assert!(words.contains("prefill in 32 micro-batches of 8 requests"), "{words}");
        assert_eq!(pipelined[0].name.to_string(), "PrefillMicroBatches");
        let flat_report = evaluate(&flat);
        assert_eq!(flat_report.serving.as_ref().map(|s| s.prefill_micro_batches), Some(1));
        // Its explanation says what it is.
        let e = explain(&sv, &pipelined[0].name).expect("explained");
        assert!(
            e.what.starts_with("Prefill micro-batches 2 to 32") && e.seconds == pipelined[0].duration_s,
            "{}",
            e.what
        );
    }

    #[test]
    fn kv_cache_per_token_is_layers_x_2_x_kv_heads_x_head_dim_x_bytes() {
        let s = llama70(1, 1, json!({}));
        let sv = ServingCx::new(&s).expect("serving");
        assert_eq!(sv.kv_bytes_per_token(), 80.0 * 2.0 * 8.0 * 128.0 * 2.0); // 320 KiB
                                                                             // Tensor parallelism splits the 8 KV heads; beyond 8 GPUs they would be replicated.
        let s = llama70(8, 1, json!({}));
        assert_eq!(ServingCx::new(&s).expect("serving").kv_bytes_per_token(), 80.0 * 2.0 * 1.0 * 128.0 * 2.0);
        // An fp8 cache halves it.
        let s = llama70(1, 1, json!({"kv_format": "fp8"}));
        assert_eq!(ServingCx::new(&s).expect("serving").kv_bytes_per_token(), 80.0 * 2.0 * 8.0 * 128.0);
    }

    #[test]
    fn decode_at_batch_1_is_bound_by_reading_weights_and_kv_cache() {
        let s = llama70(2, 1, json!({}));
        let sv = ServingCx::new(&s).expect("serving");
        let ctx = 1024.0 + 1.0;
        let l = sv.decode_layer(ctx);
        // Attention block: its two GEMMs read their weights on this GPU (QKV and the output
        // projection, split over tp 2) with the token's input and write its output; then the
        // KV cache it reads; at 0.836 x 2039 GB/s.
        let h = 8192.0;
        let qkv_n = (h + 2.0 * 8.0 * 128.0) / 2.0;
        let qkv = (h + h * qkv_n + qkv_n) * 2.0;
        let proj = (h / 2.0 + h / 2.0 * h + h) * 2.0;
        let attn_w = h * qkv_n * 2.0 + h / 2.0 * h * 2.0;
        let kv = ctx * 2.0 * 4.0 * 128.0 * 2.0;
        let hbm = 2039e9 * 0.836;
        // Its kernels replay from a CUDA graph (the default): about 3 us each, a small kernel's run.
        // The rotary embeddings read and write the token's queries and keys on this GPU.
        let rope = 2.0 * 2.0 * (h + 8.0 * 128.0) / 2.0;
        let ew = (14.0 * h * 2.0 / 2.0 + rope) / hbm + KERNELS_PER_BLOCK * GRAPH_KERNEL_S;
        let want = (qkv + proj) / hbm + kv / hbm + ew;
        assert!((l.attn_s - want).abs() < 1e-12, "{} vs {want}", l.attn_s);
        // Launched one by one, each costs a host launch.
        let eager = ServingCx::new(&llama70(2, 1, json!({"cuda_graphs": false}))).expect("serving").decode_layer(ctx);
        let launches = KERNELS_PER_BLOCK * (KERNEL_OVERHEAD_S - GRAPH_KERNEL_S);
        assert!((eager.attn_s - l.attn_s - launches).abs() < 1e-12);
        assert!((eager.ffn_s - l.ffn_s - launches).abs() < 1e-12);
        // So does a step of more tokens than engines capture graphs for: a prefill of 1,024.
        let big = Pass { prefill_tokens: 0.0, decode_tokens: 513.0, context: ctx };
        assert_eq!(sv.kernels_s(big, Block::Attn), KERNELS_PER_BLOCK * KERNEL_OVERHEAD_S);
        let eager_prefill =
            ServingCx::new(&llama70(2, 1, json!({"cuda_graphs": false}))).expect("serving").prefill_layer();
        assert_eq!(sv.prefill_layer(), eager_prefill);
        // A step of a few decode tokens and a small prompt chunk replays a graph too.
        let mixed = Pass { prefill_tokens: 256.0, decode_tokens: 256.0, context: ctx };
        assert_eq!(sv.kernels_s(mixed, Block::Fc), KERNELS_PER_BLOCK * GRAPH_KERNEL_S);
        // The FLOPs would take far less: memory-bound.
        let flops = (2.0 * h * (h + 2.0 * 8.0 * 128.0) + 2.0 * h * h + 4.0 * ctx * h) / 2.0;
        assert!(flops / (312e12 * 0.8) < 0.01 * (attn_w + kv) / hbm);
        // A batch of 64 reads the same weights once: far less than 64x the time.
        let big = ServingCx::new(&llama70(2, 64, json!({}))).expect("serving").decode_layer(ctx);
        assert!(big.ffn_s < 4.0 * l.ffn_s, "{} vs {}", big.ffn_s, l.ffn_s);
    }

    #[test]
    fn decode_gemms_read_the_weights_until_the_batch_fills_whole_tiles_of_compute() {
        // LLaMA-2-70B's feed-forward on one A100: a few tokens cost what reading the weights
        // costs; at a few hundred the GEMMs are compute-bound, in whole 128-row tiles, so 129
        // tokens cost about what 256 do.
        let s = llama70(1, 1, json!({}));
        let sv = ServingCx::new(&s).expect("serving");
        let ffn = |t: f64| sv.block_gemms_s(Block::Fc, t);
        let weights_s = 3.0 * 8192.0 * 28672.0 * 2.0 / (2039e9 * 0.836);
        assert!(ffn(1.0) > weights_s && ffn(1.0) < 1.01 * weights_s, "{} vs {weights_s}", ffn(1.0));
        assert!(ffn(16.0) < 1.01 * ffn(1.0));
        let compute_256_s = 2.0 * 256.0 * 3.0 * 8192.0 * 28672.0 / (312e12 * 0.8);
        // (Within a few percent of 2 m n k / F: long inner dimensions run a little faster.)
        assert!((ffn(256.0) / compute_256_s - 1.0).abs() < 0.05, "{} vs {compute_256_s}", ffn(256.0));
        assert!(ffn(256.0) > 1.5 * weights_s);
        assert!(ffn(129.0) > 0.95 * ffn(256.0), "{} vs {}", ffn(129.0), ffn(256.0));
    }

    #[test]
    fn each_decoded_token_costs_two_tensor_parallel_all_reduces_per_layer() {
        let g = Group::new(4, 4);
        let bytes = 8.0 * 8192.0 * 2.0;
        // The engine's own all-reduce kernels (the default), or NCCL's alone.
        for (extra, nccl_only) in [(json!({}), false), (json!({"custom_all_reduce": false}), true)] {
            let s = llama70(4, 8, extra);
            let sv = ServingCx::new(&s).expect("serving");
            let (links, alg) = (&sv.cx.links, sv.cx.setup.collective);
            let one = if nccl_only {
                time_s(Collective::AllReduce, bytes, g, links, alg)
            } else {
                engine_all_reduce(bytes, g, links, alg).0
            };
            let (_, comm) = sv.decode_step(1);
            assert!((comm - 80.0 * 2.0 * one).abs() < 1e-15, "{comm} vs {}", 160.0 * one);
        }
        // 128 kB over 4 A100s: one phase of the engine's kernels beats NCCL's six ring hops.
        let custom = ServingCx::new(&llama70(4, 8, json!({}))).expect("serving").decode_step(1).1;
        let nccl =
            ServingCx::new(&llama70(4, 8, json!({"custom_all_reduce": false}))).expect("serving").decode_step(1).1;
        assert!(custom < 0.8 * nccl, "{custom} vs {nccl}");
    }

    #[test]
    fn the_report_has_latencies_throughput_and_the_largest_batch() {
        let s = llama70(4, 16, json!({}));
        let r = crate::engine::evaluate(&s);
        let sv = r.serving.as_ref().expect("serving figures");
        assert!(sv.ttft_s > 0.0 && sv.tpot_s > 0.0);
        assert!((sv.e2e_s - (sv.ttft_s + 255.0 * sv.tpot_s)).abs() < 1e-9 * sv.e2e_s);
        assert!((sv.output_tokens_per_s - 16.0 * 256.0 / sv.e2e_s).abs() < 1e-9 * sv.output_tokens_per_s);
        // 138 GB of fp16 weights over 4 x 80 GB leaves room for a batch of some dozens at 1280
        // tokens of context.
        assert!((20..200).contains(&sv.max_batch), "{}", sv.max_batch);
        assert!(r.memory.parts.iter().any(|p| p.0 == MemPart::KvCache));
        // Twice the batch: more tokens per second, a slower token for each request.
        let r2 = crate::engine::evaluate(&llama70(4, 32, json!({})));
        let sv2 = r2.serving.as_ref().expect("serving");
        // (Not twice: a static batch also prefills twice the prompts before its first token.)
        assert!(sv2.output_tokens_per_s > 1.45 * sv.output_tokens_per_s && sv2.tpot_s > sv.tpot_s);
    }

    #[test]
    fn a_run_of_decode_steps_in_closed_form_is_the_sum_of_its_steps() {
        // Bound by reading the KV cache (a batch of 1) and by the score FLOPs (a batch of 512 at
        // a long context): either way attention grows linearly with the context.
        for batch in [1, 512] {
            let s = llama70(4, batch, json!({"input_tokens": 3000, "output_tokens": 1000}));
            let sv = ServingCx::new(&s).expect("serving");
            let (first, last) = (5, 700);
            let layers = 80.0;
            let one = sv.decode_layer((3000 + first) as f64);
            let attn: f64 = (first..=last).map(|i| sv.decode_attn_s((3000 + i) as f64)).sum();
            let n = (last + 1 - first) as f64;
            let summed = n * (layers * one.ffn_s + sv.logits_s()) + layers * attn;
            let (closed, _) = sv.decode_steps(first, last);
            assert!((closed - summed).abs() <= 1e-12 * summed, "batch {batch}: {closed} vs {summed}");
            assert_eq!(sv.decode_steps(first, first).0, sv.decode_step(first).0);
        }
    }

    #[test]
    fn a_requests_flops_in_closed_form_are_the_sum_over_its_decode_steps() {
        let s = llama70(4, 8, json!({}));
        let sv = ServingCx::new(&s).expect("serving");
        for (input, output) in [(1024, 256), (7, 1), (1, 2), (300, 1000)] {
            let summed = sv.prefill_flops_of(input) + (1..output).map(|i| sv.decode_flops_of(input, i)).sum::<f64>();
            let closed = sv.request_flops_of(input, output);
            assert!((closed - summed).abs() <= 1e-12 * summed, "{input}/{output}: {closed} vs {summed}");
        }
    }
}

#[cfg(test)]
mod explore_tests {
    use super::tests_support::llama70_on;
    use crate::engine::explore::{search, Space};

    #[test]
    fn a_latency_limit_trades_throughput_for_faster_tokens() {
        let s = llama70_on(8);
        let free = search(&s, &Space::local(vec![4, 16, 64, 256])).expect("within budget");
        let best_free = free.ranked.first().expect("a plan");
        assert!(best_free.fits());
        // A limit only the quicker plans meet: 20% above the fastest token of any plan that fits.
        let fastest = free.ranked.iter().filter(|o| o.fits()).filter_map(|o| o.tpot_s).fold(f64::INFINITY, f64::min);
        let limit = fastest * 1.2;
        assert!(best_free.tpot_s.is_some_and(|t| t > limit), "the free best is a slow, big batch");
        let limited = search(&s, &Space { max_tpot_s: Some(limit), ..Space::local(vec![4, 16, 64, 256]) })
            .expect("within budget");
        let best = limited.ranked.first().expect("a plan");
        assert!(best.fits() && best.tpot_s.is_some_and(|t| t <= limit), "{best:?}");
        assert!(best.throughput_samples_per_s < best_free.throughput_samples_per_s);
        // Everything ranked as feasible meets the limit; the rest is marked, not dropped.
        assert!(limited.ranked.iter().filter(|o| o.fits()).all(|o| o.tpot_s.is_some_and(|t| t <= limit)));
        assert!(limited.ranked.iter().any(|o| !o.meets_limit()));
        assert_eq!(limited.ranked.len(), free.ranked.len());
    }

    #[test]
    fn the_search_tries_every_pair_of_weight_and_kv_formats_it_is_given() {
        use crate::engine::explore::{describe_outcome, plans, searches_formats, Formats};
        use crate::engine::scenario::Precision::{Fp16, Fp8, Int4};
        let s = llama70_on(8);
        let own = Space::local(vec![16]);
        assert!(!searches_formats(&s, &own));
        let formats = Formats { weights: vec![Fp16, Fp8, Int4], kv: vec![Fp16, Fp8] };
        let space = Space { formats, ..own.clone() };
        assert!(searches_formats(&s, &space));
        // Six pairs for every plan.
        assert_eq!(plans(&s, &space).len(), 6 * plans(&s, &own).len());
        let r = search(&s, &space).expect("within budget");
        let pairs: std::collections::BTreeSet<String> =
            r.ranked.iter().map(|o| format!("{:?}/{:?}", o.setup.weight_format, o.setup.kv_format)).collect();
        assert_eq!(pairs.len(), 6, "{pairs:?}");
        // At a batch of 16 decode reads the weights: FP16 weights run slower than FP8 on the
        // same plan, and the description and the task keys say which formats a plan uses.
        let on = |w, k| {
            r.ranked
                .iter()
                .find(|o| {
                    o.plan.transformer == s.task.plan.transformer
                        && o.setup.weight_format == Some(w)
                        && o.setup.kv_format == Some(k)
                })
                .expect("the plan in these formats")
        };
        assert!(on(Fp16, Fp8).tpot_s > on(Fp8, Fp8).tpot_s);
        let best = &r.ranked[0];
        let text = describe_outcome(&s, best);
        assert!(text.ends_with(" KV cache") && text.contains(" weights, "), "{text}");
        let keys = crate::doc::plan_task_keys(&s, on(Int4, Fp16));
        assert_eq!((keys["weight_format"].as_str(), keys["kv_format"].as_str()), (Some("int4"), Some("fp16")));
        // One list alone keeps the task's other format.
        let weights_only = Space { formats: Formats { weights: vec![Fp16], kv: vec![] }, ..own };
        assert!(plans(&s, &weights_only)
            .iter()
            .all(|c| c.setup.weight_format == Some(Fp16) && c.setup.kv_format == Some(Fp8)));
        // Formats that do not name one: a sentence saying so.
        assert_eq!(Formats::parse_list("fp8, int4 ,FP8"), Ok(vec![Fp8, Int4]));
        assert!(Formats::parse_list("fp8,fp4").is_err_and(|e| e.contains("\"fp4\" is not a number format")));
    }

    #[test]
    fn a_first_token_limit_rules_out_the_batches_whose_prefill_keeps_requests_waiting() {
        let s = llama70_on(8);
        let space = Space::local(vec![4, 16, 64, 256]);
        let free = search(&s, &space).expect("within budget");
        let best_free = free.ranked.first().expect("a plan");
        let limit = best_free.ttft_s.expect("serving") / 2.0;
        let limited = search(&s, &Space { max_ttft_s: Some(limit), ..space }).expect("within budget");
        let best = limited.ranked.first().expect("a plan");
        assert!(best.fits() && best.ttft_s.is_some_and(|t| t <= limit), "{best:?}");
        assert!(best.throughput_samples_per_s < best_free.throughput_samples_per_s);
        // The plans over it are marked for their first token, not their per-token time.
        let over: Vec<_> = limited.ranked.iter().filter(|o| o.over_ttft).collect();
        assert!(!over.is_empty() && over.iter().all(|o| !o.fits() && !o.over_tpot && o.ttft_s > Some(limit)));
        // Tokens per second count generated tokens: requests/s x 256.
        assert!(limited.ranked.iter().all(|o| o.tokens_per_s == Some(o.throughput_samples_per_s * 256.0)));
    }
}

#[cfg(test)]
pub(super) mod tests_support {
    use crate::engine::scenario::Scenario;
    use crate::engine::{validate, RawScenario};
    use serde_json::{json, Value};

    /// `base` with `extra`'s keys added (or replaced).
    fn with(mut base: Value, extra: Value) -> Value {
        if let (Some(b), Value::Object(x)) = (base.as_object_mut(), extra) {
            b.extend(x);
        }
        base
    }

    /// LLaMA-2-70B (GQA: 8 KV heads of 128) served on `system` with `task`.
    fn llama70_scenario(system: Value, task: Value) -> Scenario {
        let doc = json!({
            "model": {"type": "LLM", "bytes_per_nonemb_param": 2, "bytes_per_emb_param": 2, "entries_per_table": 32000,
                "num_transformer_layers": 80, "num_transformer_heads": 64, "num_kv_heads": 8, "attention_dim": 8192,
                "transformer_fc_dim": 28672, "ffn_kind": "swiglu", "transformer_seq_len": 4096},
            "system": system,
            "task": task,
        });
        let raw: RawScenario = serde_json::from_value(doc).expect("raw");
        validate(&raw).unwrap_or_else(|e| panic!("{e:?}"))
    }

    /// An inference task over `n` GPUs of tensor parallelism, `batch` requests per replica, 1,024
    /// prompt and 256 generated tokens.
    fn tp_task(n: u64, batch: u64) -> Value {
        json!({"type": "inference", "mode": "default",
            "transformer_parallel": ["tp"], "transformer_parallel_degree": [n],
            "emb_parallel": ["ddp"], "emb_parallel_degree": [n], "local_emb_bs": batch, "local_transformer_bs": batch,
            "input_tokens": 1024, "output_tokens": 256})
    }

    /// One node of `devices` A100-80GB GPUs.
    fn a100_node(devices: u64) -> Value {
        json!({"type": "GPU", "num_devices": devices, "num_nodes": 1, "f64_flops": 9.7e12, "f32_flops": 156e12,
            "f16_flops": 312e12, "i8_ops": 624e12, "flops_util": 0.8, "mem_cap": 80e9, "mem_bw": 2039e9,
            "mem_bw_util": 0.836, "num_nvlinks": 12, "bw_per_nvlink": 50e9, "nvlink_util": 0.6667,
            "num_ibroce_ports": 8, "ibroce_bw": 50e9, "ibroce_util": 0.56, "ar_perc_intra": 1})
    }

    /// LLaMA-2-70B served on `tp` A100-80GB GPUs of one node, with `extra` task keys.
    pub fn llama70(tp: u64, batch: u64, extra: Value) -> Scenario {
        llama70_scenario(a100_node(tp), with(tp_task(tp, batch), extra))
    }

    /// LLaMA-2-70B served by `replicas` replicas of `tp` A100-80GB GPUs each on one node, with
    /// `extra` task keys.
    pub fn llama70_replicas(tp: u64, replicas: u64, batch: u64, extra: Value) -> Scenario {
        let plan = json!({"transformer_parallel": ["tp", "ddp"], "transformer_parallel_degree": [tp, replicas],
            "emb_parallel_degree": [tp * replicas]});
        llama70_scenario(a100_node(tp * replicas), with(with(tp_task(tp, batch), plan), extra))
    }

    /// In-flight batching of LLaMA-2-70B on 4 A100s: `batch` requests admitted at most.
    pub fn inflight(batch: u64, extra: Value) -> Scenario {
        llama70(4, batch, with(json!({"batching": "inflight"}), extra))
    }

    /// LLaMA-2-70B served in FP8 on `n` H100s of one node, tp 8 as configured.
    pub fn llama70_on(n: u64) -> Scenario {
        let system = json!({"type": "GPU", "num_devices": n, "num_nodes": 1, "f64_flops": 34e12, "f32_flops": 494.5e12,
            "f16_flops": 989.5e12, "i8_ops": 1979e12, "fp8_flops": 1979e12, "flops_util": 0.8, "mem_cap": 80e9, "mem_bw": 3350e9,
            "mem_bw_util": 0.836, "num_nvlinks": 18, "bw_per_nvlink": 50e9, "nvlink_util": 0.6667,
            "num_ibroce_ports": 8, "ibroce_bw": 100e9, "ibroce_util": 0.56, "ar_perc_intra": 1});
        let task = with(tp_task(n, 16), json!({"local_emb_bs": 2, "weight_format": "fp8", "kv_format": "fp8"}));
        llama70_scenario(system, task)
    }
}
