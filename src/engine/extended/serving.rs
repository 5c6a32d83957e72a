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
//! One job: LLM serving in the default model.

use super::calibration::{
    GRAPH_KERNEL_OVERHEAD_S, GRAPH_MAX_TOKENS, KERNELS_PER_BLOCK, KERNEL_OVERHEAD_S, PREFILL_MICRO_TOKENS,
    WORKSPACE_BYTES,
};
use super::collective::{engine_all_reduce, time_s, AllReduceKernel, Collective};
use super::iteration::{self, name, Timeline};
use super::training::TrainingCx;
use crate::engine::ops::{Block, OpKind, OpName, Phase};
use crate::engine::reference::explain::{Explanation, Term, Unit};
use crate::engine::report::{
    LayerWork, Limit, MemPart, Memory, Mode, ModelStats, Parts, Percentiles, Report, Serving, Utilization, Work,
};
use crate::engine::scenario::{Arch, Batching, Precision, RequestClass, Scenario, TaskKind};

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
    /// FLOP rate of the GEMMs at the weights' format (fp8/int8 weights use the 8-bit peak),
    /// after utilisation.
    pub rate: f64,
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

/// The steady state of in-flight batching ([`ServingCx::steady`]), per replica.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Steady {
    /// Requests in flight.
    pub concurrency: f64,
    /// Requests decoding a token in each step, on average.
    pub decoding: f64,
    /// Prompt tokens prefilled per step, on average.
    pub prefill_tokens: f64,
    /// Requests finishing per second (and starting: the steady state).
    pub requests_per_s: f64,
    /// A step that carries a prompt chunk (every step when nothing decodes).
    pub chunk: EngineStep,
    /// The mean step: the time between two tokens of a request, s.
    pub tpot_s: f64,
    /// Time to first token: queueing for the prefill and its chunk steps, s.
    pub ttft_s: f64,
    /// From arrival to the last token, s.
    pub e2e_s: f64,
    /// A step without a prompt chunk, s, and the share of steps that carry one: a request's
    /// tokens come that far apart.
    pub plain_s: f64,
    pub chunk_share: f64,
    /// The share of the chunk capacity (the steps' room for prompt tokens) prompts use, 0..1.
    pub prefill_load: f64,
    /// One prompt's chunk steps, s: its prefill when it need not wait (with a request mix, their
    /// mean square over their mean: what a queue's wait grows with).
    pub prompt_s: f64,
    /// A step's room for prompt tokens: the budget less the tokens decoding.
    pub room: f64,
}

/// Percentiles reported ([`Steady::percentiles`]): the median, the 90th and the 99th.
pub const PERCENTILES: [f64; 3] = [0.5, 0.9, 0.99];

impl Steady {
    /// The mean time a prompt waits for the chunk capacity when requests arrive at random
    /// (`poisson`: a Poisson stream, as `request_rate` sets; otherwise a finished request's slot
    /// is refilled at once and nothing waits), s: an M/D/1 queue (Pollaczek-Khinchine):
    /// `rho x S / (2 (1 - rho))` for load `rho` ([`Steady::prefill_load`]) and service `S`
    /// ([`Steady::prompt_s`]).
    pub fn mean_wait_s(&self, poisson: bool) -> f64 {
        let rho = self.prefill_load;
        if !poisson || rho <= 0.0 {
            return 0.0;
        }
        if rho >= 1.0 {
            return f64::INFINITY;
        }
        rho * self.prompt_s / (2.0 * (1.0 - rho))
    }

    /// The `q`-quantile of that wait, s: a prompt waits with probability `rho`, and then for an
    /// exponentially distributed time of mean `S / (2 (1 - rho))` (Kingman's heavy-traffic
    /// approximation, exact in its mean): `P(W > t) = rho x exp(-t rho / mean wait)`.
    pub fn wait_quantile_s(&self, q: f64, poisson: bool) -> f64 {
        let (mean, rho) = (self.mean_wait_s(poisson), self.prefill_load);
        if mean <= 0.0 || 1.0 - q >= rho {
            return 0.0;
        }
        mean / rho * (rho / (1.0 - q)).ln()
    }
}

/// The steps of a steady state with a given number of requests decoding ([`ServingCx::steady`]).
struct StepMix {
    /// A step that carries a prompt chunk, the mean step and a step without one (s).
    chunk: EngineStep,
    mean_s: f64,
    plain_s: f64,
    /// The share of steps that carry a chunk.
    with_chunk: f64,
    /// Prompt tokens per step, on average; the chunk steps of one prompt, on average and
    /// weighted by themselves (mean square over mean); a step's room for prompt tokens.
    prefill_tokens: f64,
    chunks: f64,
    chunks_weighted: f64,
    room: f64,
}

/// One engine step of one pipeline group (`ServingCx::engine_step`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EngineStep {
    /// One layer's tokens, and its times.
    pub pass: Pass,
    pub layer: Step,
    /// Rows of logits: the decoding requests and the prompts that finish.
    pub rows: f64,
    /// The step through every stage, s.
    pub seconds: f64,
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

impl<'a> ServingCx<'a> {
    /// The serving model of an LLM inference scenario; `None` for other families and tasks.
    pub fn new(s: &'a Scenario) -> Option<ServingCx<'a>> {
        if !serves(s) {
            return None;
        }
        let cx = TrainingCx::new(s)?;
        let setup = &s.task.setup;
        let seq = cx.d.seq as u64;
        let classes = if setup.request_mix.is_empty() {
            let output = output_tokens(setup.output_tokens, seq);
            let input = setup.input_tokens.unwrap_or(seq.saturating_sub(output).max(1));
            vec![RequestClass { input_tokens: input, output_tokens: output, share: 1.0 }]
        } else {
            setup.request_mix.clone()
        };
        let mean = |f: fn(&RequestClass) -> u64| classes.iter().map(|c| c.share * f(c) as f64).sum::<f64>();
        let input = (mean(|c| c.input_tokens).round() as u64).max(1);
        let output = (mean(|c| c.output_tokens).round() as u64).max(1);
        let model_bytes = cx.d.elem_bytes;
        let weight_bytes = setup.weight_format.map_or(model_bytes, Precision::bytes);
        let kv_bytes = setup.kv_format.map_or(model_bytes, Precision::bytes);
        let sys = &s.system;
        let peak = match setup.weight_format {
            Some(Precision::Fp8 | Precision::Int8) => sys.i8_ops_per_s,
            Some(_) => sys.f16_flops_per_s,
            None => cx.peak_flops_per_s,
        };
        let batch = cx.local_batch as f64;
        Some(ServingCx { rate: peak * sys.flops_util, peak, cx, input, output, classes, batch, weight_bytes, kv_bytes })
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
        self.cx.d.hidden / self.cx.d.heads
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
        let pp = self.cx.lay.pp.size.max(1);
        let batch = (self.batch as u64).max(1);
        if pp == 1 {
            return (self.batch, 1);
        }
        let mut local = if batch.is_multiple_of(pp) { batch / pp } else { batch };
        while local.saturating_mul(self.input) > PREFILL_MICRO_TOKENS && local % 2 == 0 {
            local /= 2;
        }
        (local as f64, batch / local)
    }

    /// One layer of the prefill: every prompt token of a micro-batch ([`ServingCx::prefill_micro`]:
    /// the whole batch without a pipeline) at once.
    pub fn prefill_layer(&self) -> Step {
        let tokens = self.prefill_micro().0 * self.input as f64;
        self.layer(Pass { prefill_tokens: tokens, decode_tokens: 0.0, context: 0.0 })
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
    pub fn decode_layer(&self, context: f64) -> Step {
        self.layer(Pass { prefill_tokens: 0.0, decode_tokens: self.batch, context })
    }

    /// One layer of a pass over `p`'s tokens: attention, feed-forward and their collectives.
    pub fn layer(&self, p: Pass) -> Step {
        let d = &self.cx.d;
        let t = p.prefill_tokens + p.decode_tokens;
        let ffn_s = self.block_gemms_s(Block::Fc, t)
            + t * (d.hidden_bytes() + d.ffn_act_bytes() / self.tp()) / self.cx.hbm_bytes_per_s
            + self.launch_s(p);
        Step { attn_s: self.attn_s(p), ffn_s, comm_s: self.comm(t) }
    }

    /// A block's GEMMs over `t` tokens, s, shaped as the training model shapes them
    /// ([`TrainingCx::block_gemms_of`], [`super::gemm`]): thin GEMMs (a decode step's few tokens) are
    /// bound by reading the weights, in their format; as the tokens grow they turn
    /// compute-bound, at the weights' GEMM rate, in whole tiles. A GEMM reads both operands at
    /// the weights' bytes (the activations are few where reading matters) and writes a 16-bit
    /// output.
    fn block_gemms_s(&self, block: Block, t: f64) -> f64 {
        let (e, hbm) = (self.cx.d.elem_bytes, self.cx.hbm_bytes_per_s);
        self.cx
            .block_gemms_of(block, t)
            .iter()
            .map(|(g, count)| count * g.mixed_time_s(self.weight_bytes, e, self.rate, hbm))
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
    /// context); element-wise traffic (and the prompt's scores where they go through HBM).
    fn attn_s(&self, p: Pass) -> f64 {
        let d = &self.cx.d;
        let t = p.prefill_tokens + p.decode_tokens;
        let kv_token = 2.0 * self.kv_heads_local() * self.head_dim() * self.kv_bytes;
        let keys = p.prefill_tokens * self.prompt_span() + p.decode_tokens * p.context;
        let scores = if d.materialized() {
            p.prefill_tokens * d.heads * self.prompt_tokens_length() * (4.0 * d.elem_bytes + 1.0) / self.tp()
        } else {
            0.0
        };
        self.block_gemms_s(Block::Attn, t)
            + self.roofline(
                4.0 * keys * d.hidden * d.score_cost() / self.tp(),
                (p.prefill_tokens + p.decode_tokens * p.context) * kv_token,
            )
            + (t * d.hidden_bytes() + scores) / self.cx.hbm_bytes_per_s
            + self.launch_s(p)
    }

    /// The time one block's kernels lose to launching in pass `p`, s: a captured CUDA graph's
    /// per-node cost when the engine captures graphs
    /// ([`crate::engine::scenario::Setup::cuda_graphs`]) and the pass carries at most
    /// [`GRAPH_MAX_TOKENS`] tokens, else a launch per kernel.
    fn launch_s(&self, p: Pass) -> f64 {
        let graph = p.prefill_tokens + p.decode_tokens <= GRAPH_MAX_TOKENS;
        let per_kernel = if self.cx.setup.cuda_graphs && graph { GRAPH_KERNEL_OVERHEAD_S } else { KERNEL_OVERHEAD_S };
        KERNELS_PER_BLOCK * per_kernel
    }

    /// A decode step's attention in one layer with `context` tokens in the cache, s.
    fn decode_attn_s(&self, context: f64) -> f64 {
        self.attn_s(Pass { prefill_tokens: 0.0, decode_tokens: self.batch, context })
    }

    /// The output layer for one token per request (prefill's last token, or a decode step), s.
    pub fn logits_s(&self) -> f64 {
        self.logits_for(self.batch)
    }

    /// The output layer for `rows` tokens, s: every weight read once.
    fn logits_for(&self, rows: f64) -> f64 {
        let d = &self.cx.d;
        let v = d.vocab / self.tp();
        self.roofline(rows * 2.0 * d.hidden * v, d.hidden * v * self.weight_bytes)
    }

    /// A pipeline hop of `tokens` activations, s.
    fn hop_s(&self, tokens: f64) -> f64 {
        let cx = &self.cx;
        if cx.lay.pp.size <= 1 {
            return 0.0;
        }
        let g = crate::engine::extended::collective::Group { size: 2, per_node: cx.lay.pp.per_node.min(2) };
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
        input as f64 * d.layers as f64 * (f.attn_linear + f.ffn + 4.0 * s_att * d.hidden) + 2.0 * d.hidden * d.vocab
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
        d.layers as f64 * (f.attn_linear + f.ffn + 4.0 * ctx * d.hidden) + 2.0 * d.hidden * d.vocab
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
    pub fn decode_steps(&self, first: u64, last: u64) -> (f64, f64) {
        let layers = self.cx.d.layers as f64;
        let n = (last + 1).saturating_sub(first) as f64;
        let ctx = (self.input + first) as f64;
        let one = self.decode_layer(ctx);
        let at_first = self.decode_attn_s(ctx);
        let per_token = self.decode_attn_s(ctx + 1.0) - at_first;
        let attn = n * at_first + per_token * n * (n - 1.0) / 2.0;
        (
            n * (layers * one.ffn_s + self.logits_s()) + layers * attn,
            n * (layers * one.comm_s + self.hops_s(self.batch)),
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
    /// prefill's working activations, buffers.
    pub fn memory(&self, batch: f64) -> Memory {
        self.memory_of(batch * (self.input + self.output) as f64, batch * self.input as f64, batch)
    }

    /// Memory per GPU holding `kv_tokens` tokens of KV cache, with one pass of `pass_tokens`
    /// tokens at work and `logit_rows` rows of logits: weights, KV cache, activations, buffers.
    fn memory_of(&self, kv_tokens: f64, pass_tokens: f64, logit_rows: f64) -> Memory {
        let cx = &self.cx;
        let d = &cx.d;
        let (dense, expert) = cx.stage_params(cx.lay.pp.size.max(1) - 1);
        let weights = (dense + expert) * self.weight_bytes;
        let kv = kv_tokens * self.kv_bytes_per_token();
        // The pass's working set: one layer's activations for every token (scores stay on chip
        // or are freed layer by layer), and fp32 logits for the rows that need them.
        let (outside, inside, _) = d.stored_bytes();
        let activations = pass_tokens * (outside + inside / self.tp()) + logit_rows * d.vocab / self.tp() * 4.0;
        let parts = vec![
            (MemPart::Weights, weights),
            (MemPart::KvCache, kv),
            (MemPart::Activations, activations),
            (MemPart::Buffers, WORKSPACE_BYTES),
        ];
        Memory::of_parts(parts, cx.s.system.mem_cap_bytes)
    }

    /// The largest static batch per replica that fits (0 when the weights alone do not).
    pub fn max_batch(&self) -> u64 {
        let fixed = self.memory(0.0);
        how_many_fit(&fixed, self.memory(1.0).total_bytes - fixed.total_bytes)
    }

    /// Tokens of KV cache an in-flight request holds on average in the steady state: its prompt,
    /// half of its output (requests are spread evenly over their generation), and half a page
    /// lost to rounding up to whole pages (paged attention, Kwon et al. 2023).
    pub fn held_tokens(&self) -> f64 {
        let page = self.cx.setup.kv_page_tokens as f64;
        self.in_flight_mean(|i, o| i + (o - 1.0).max(0.0) / 2.0) + (page - 1.0) / 2.0
    }

    /// Memory per GPU of in-flight batching with `concurrency` requests in flight: their KV
    /// pages, and activations for a full engine step ([`Setup::step_tokens`]), as engines size
    /// their buffers.
    fn inflight_memory(&self, concurrency: f64) -> Memory {
        let budget = self.cx.setup.step_tokens as f64;
        self.memory_of(concurrency * self.held_tokens(), budget, self.batch.min(budget))
    }

    /// Requests per replica whose KV pages fit next to the weights and a full step's
    /// activations with in-flight batching: the most the engine can keep in flight (0 when
    /// not even one fits).
    pub fn inflight_limit(&self) -> u64 {
        how_many_fit(&self.inflight_memory(0.0), self.held_tokens() * self.kv_bytes_per_token())
    }

    /// The steady state of in-flight batching (Orca, vLLM, Sarathi-Serve): `concurrency`
    /// requests in flight per replica; every step decodes one token for each request past its
    /// prompt, and steps that carry a prompt chunk fill the rest of the token budget with it.
    ///
    /// A prompt of `I` tokens takes `D = ceil(I / (budget - others decoding))` chunk steps; a request
    /// then decodes `O - 1` tokens at the mean step time. The share of the requests decoding
    /// is the share of its time a request spends decoding, and the requests that finish must be
    /// replaced: `decoding / (O - 1)` prompts per step. When those prompts exceed the budget,
    /// prefill paces the engine, every step carries a chunk and requests queue for it. Little's
    /// law gives the end-to-end latency: requests in flight over requests finished per second.
    /// With `p` pipeline stages, `p` groups of requests take turns, each step of a group going
    /// through every stage.
    pub fn steady(&self, concurrency: f64) -> Steady {
        // A request's prompt tokens and decode steps, on average over the mix.
        let (i, od) = (self.mean(|i, _| i), self.mean(|_, o| (o - 1.0).max(0.0)));
        let budget = self.cx.setup.step_tokens as f64;
        let c = concurrency;
        // The chunk steps of a prompt with `room` tokens per step: their mean over the
        // requests, and their mean square over their mean (the queue's service time weighs long
        // prompts by their length).
        let chunk_steps = |room: f64| {
            let mean = self.mean(|i, _| (i / room).ceil());
            (mean, self.mean(|i, _| (i / room).ceil().powi(2)) / mean)
        };
        if od <= 0.0 {
            // No decoding: every step prefills prompts, a whole budget when enough are waiting.
            let tokens = budget.min(c * i);
            let step = self.engine_step(0.0, tokens, tokens / i);
            let requests_per_s = tokens / i / step.seconds;
            let e2e_s = c / requests_per_s;
            return Steady {
                concurrency: c,
                decoding: 0.0,
                prefill_tokens: tokens,
                requests_per_s,
                chunk: step,
                tpot_s: 0.0,
                ttft_s: e2e_s,
                e2e_s,
                plain_s: 0.0,
                chunk_share: 1.0,
                prefill_load: tokens / budget,
                prompt_s: chunk_steps(budget).1 * step.seconds,
                room: budget,
            };
        }
        // The steps with `decoding` requests decoding: the step that carries a chunk, the mean
        // step, the prompt tokens per step, and the chunk steps of one prompt.
        let at = |decoding: f64| {
            // A prompt's own request is not decoding while it prefills.
            let room = (budget - decoding.min((c - 1.0).max(0.0))).max(1.0);
            let (chunks, chunks_weighted) = chunk_steps(room);
            let prefill_tokens = i * decoding / od;
            // A chunk step carries one prompt's chunk, or more when prompts arrive faster.
            let chunk_tokens = (i / chunks).max(prefill_tokens).min(room);
            let with_chunk = (prefill_tokens / chunk_tokens).min(1.0);
            let finishing = decoding / od;
            let chunk = self.engine_step(decoding, chunk_tokens, finishing / with_chunk);
            let plain_s = self.engine_step(decoding, 0.0, 0.0).seconds;
            let mean_s = with_chunk * chunk.seconds + (1.0 - with_chunk) * plain_s;
            StepMix { chunk, mean_s, plain_s, with_chunk, prefill_tokens, chunks, chunks_weighted, room }
        };
        // The share decoding is the share of its time a request decodes; the budget caps it.
        let mut decoding = c * od / (od + 1.0);
        for _ in 0..16 {
            let m = at(decoding);
            let next = c * od * m.mean_s / (m.chunks * m.chunk.seconds + od * m.mean_s);
            decoding = next.min(budget * od / (i + od));
        }
        let m = at(decoding);
        let tpot_s = m.mean_s;
        let requests_per_s = decoding / od / tpot_s;
        let e2e_s = c / requests_per_s;
        Steady {
            concurrency: c,
            decoding,
            prefill_tokens: m.prefill_tokens,
            requests_per_s,
            chunk: m.chunk,
            tpot_s,
            ttft_s: e2e_s - od * tpot_s,
            e2e_s,
            plain_s: m.plain_s,
            chunk_share: m.with_chunk,
            prefill_load: (m.prefill_tokens / m.room).min(1.0),
            prompt_s: m.chunks_weighted * m.chunk.seconds,
            room: m.room,
        }
    }

    /// The [`PERCENTILES`] of the time to first token, of the time between two tokens of a
    /// request, and of the end-to-end latency in the steady state `st`, s. The first token: each
    /// kind of request's chunk steps (and the queueing beyond them when prompts pace the engine)
    /// after the wait ([`Steady::wait_quantile_s`]), over the mix of kinds. Between tokens: a
    /// step with a chunk ([`Steady::chunk_share`] of them) or without. End to end: the first
    /// token, then the kind's generated tokens at the mean time per token (over many tokens the
    /// steps average out).
    pub fn percentiles(&self, st: &Steady, poisson: bool) -> Percentiles {
        let chunks = |i: f64| (i / st.room).ceil();
        let extra = (st.ttft_s - self.mean(|i, _| chunks(i)) * st.chunk.seconds).max(0.0);
        let first = |i: f64| chunks(i) * st.chunk.seconds + extra;
        let kinds: Vec<(f64, f64, f64)> = self
            .classes
            .iter()
            .map(|c| {
                let (i, o) = (c.input_tokens as f64, c.output_tokens as f64);
                (c.share, first(i), first(i) + (o - 1.0).max(0.0) * st.tpot_s)
            })
            .collect();
        let (mean_wait, rho) = (st.mean_wait_s(poisson), st.prefill_load);
        // The share of requests done by `t` (`at`: their first token, or their last).
        let done_by = |t: f64, at: &dyn Fn(&(f64, f64, f64)) -> f64| -> f64 {
            kinds
                .iter()
                .map(|k| {
                    let w = t - at(k);
                    let waited = if w < 0.0 {
                        0.0
                    } else if mean_wait > 0.0 {
                        1.0 - rho * (-w * rho / mean_wait).exp()
                    } else {
                        1.0
                    };
                    k.0 * waited
                })
                .sum()
        };
        let quantile = |q: f64, at: &dyn Fn(&(f64, f64, f64)) -> f64| -> f64 {
            let (mut lo, mut hi) =
                kinds.iter().map(at).fold((f64::INFINITY, 0.0_f64), |(a, b), x| (a.min(x), b.max(x)));
            lo = lo.min(hi);
            hi += st.wait_quantile_s(1.0 - 1e-9, poisson);
            for _ in 0..100 {
                let mid = 0.5 * (lo + hi);
                if done_by(mid, at) < q {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            hi
        };
        let (slow, fast) = (st.chunk.seconds.max(st.plain_s), st.chunk.seconds.min(st.plain_s));
        let slow_share = if st.chunk.seconds >= st.plain_s { st.chunk_share } else { 1.0 - st.chunk_share };
        Percentiles {
            ttft_s: PERCENTILES.map(|q| quantile(q, &|k| k.1)),
            tpot_s: PERCENTILES.map(|q| {
                if st.tpot_s <= 0.0 {
                    0.0
                } else if q <= 1.0 - slow_share {
                    fast
                } else {
                    slow
                }
            }),
            e2e_s: PERCENTILES.map(|q| quantile(q, &|k| k.2)),
        }
    }

    /// One engine step with `decoding` requests decoding, `prefill_tokens` prompt tokens and
    /// `finishing` prompts completing (their first token's logits), all per replica.
    fn engine_step(&self, decoding: f64, prefill_tokens: f64, finishing: f64) -> EngineStep {
        let groups = self.cx.lay.pp.size.max(1) as f64;
        let pass = Pass {
            prefill_tokens: prefill_tokens / groups,
            decode_tokens: decoding / groups,
            context: self.in_flight_mean(|i, o| i + o / 2.0),
        };
        let layer = self.layer(pass);
        let rows = (decoding + finishing) / groups;
        let seconds = self.cx.d.layers as f64 * (layer.attn_s + layer.ffn_s + layer.comm_s)
            + self.hops_s(pass.prefill_tokens + pass.decode_tokens)
            + self.logits_for(rows);
        EngineStep { pass, layer, rows, seconds }
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

    /// The ops of one in-flight engine step of one pipeline group: a step that carries a prompt
    /// chunk.
    fn step_timeline(&self, step: &EngineStep) -> (Vec<crate::engine::ops::Op>, crate::engine::schedule::Schedule) {
        let mut tl = Timeline::new(4 * self.cx.d.layers as usize + 8);
        let hop = self.hop_s(step.pass.prefill_tokens + step.pass.decode_tokens);
        self.push_pass(&mut tl, step.layer, hop, self.logits_for(step.rows));
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

    /// Requests in flight per replica with in-flight batching: the batch, or fewer when the KV
    /// cache holds fewer; the batch when not even one fits (the memory then says so).
    pub fn concurrency(&self) -> f64 {
        match self.inflight_limit() {
            0 => self.batch,
            limit => self.batch.min(limit as f64),
        }
    }

    /// The steady state of in-flight batching with requests arriving at the task's rate
    /// ([`crate::engine::scenario::Setup::request_rate`], over the cluster), and the most requests per second it can
    /// complete when it cannot keep up (`None` when it can). Requests in flight settle where
    /// the requests completed per second equal the arrivals (Little's law: in flight = rate x
    /// time in the system); they grow with the load up to what the KV cache holds. Without a
    /// rate, the batch (or what the KV cache holds) is in flight.
    pub fn steady_at_load(&self) -> (Steady, Option<f64>) {
        let full = self.steady(self.concurrency());
        let Some(rate) = self.cx.setup.request_rate else { return (full, None) };
        let replicas = self.cx.lay.dense_dp.size as f64;
        let per_replica = rate / replicas;
        if per_replica >= full.requests_per_s {
            return (full, Some(full.requests_per_s * replicas));
        }
        // Requests completed per second grow with those in flight: bisect for the arrivals.
        let (mut lo, mut hi) = (0.0, full.concurrency);
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            if self.steady(mid).requests_per_s < per_replica {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (self.steady(hi), None)
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
    let (ops, schedule, memory, figures, requests) = if inflight {
        let (st, most) = sv.steady_at_load();
        overloaded =
            most.map(|most_per_s| Limit::Overloaded { asked_per_s: cx.setup.request_rate.unwrap_or(0.0), most_per_s });
        // Requests arriving at random (a rate the engine keeps up with) wait for the prefill.
        let poisson = cx.setup.request_rate.is_some() && most.is_none();
        let wait_s = st.mean_wait_s(poisson);
        if most.is_none() {
            percentiles = Some(sv.percentiles(&st, poisson));
        }
        let (ops, schedule) = sv.step_timeline(&st.chunk);
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
    let mut limits = Vec::new();
    limits.extend(memory.does_not_fit());
    limits.extend(overloaded);
    let requests_per_s = requests_per_s_per_replica * replicas as f64;
    let tokens_per_s = requests_per_s * sv.mean(|_, o| o);
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
        request_rate: cx.setup.request_rate.filter(|_| inflight),
        percentiles,
        request_mix: cx.setup.request_mix.clone(),
    });
    r.limits = limits;
    r
}

/// The decode steps a decode op stands for: first (in `micro`) and last (in `layer`).
fn decode_run(op: &OpName) -> (u64, u64) {
    let first = op.micro as u64;
    (first, (op.layer.max(0) as u64).max(first))
}

/// "Decode step 7", or "Decode steps 1 to 1000".
fn steps_words(from: u64, to: u64) -> String {
    if from == to {
        format!("Decode step {from}")
    } else {
        format!("Decode steps {from} to {to}")
    }
}

/// "attention" or "feed-forward".
fn block_words(block: Block) -> &'static str {
    if block == Block::Attn {
        "attention"
    } else {
        "feed-forward"
    }
}

/// Explains an op of an in-flight engine step ([`ServingCx::steady`]): the step that carries a
/// prompt chunk.
fn explain_step(sv: &ServingCx, op: &OpName, [tp, rate, hbm]: [Term; 3]) -> Option<Explanation> {
    let step = sv.steady_at_load().0.chunk;
    let term =
        |symbol: &'static str, meaning: &'static str, value: f64, unit: Unit| Term { symbol, meaning, value, unit };
    let decoding =
        term("n_d", "requests decoding a token this step (per pipeline group)", step.pass.decode_tokens, Unit::Count);
    let chunk = term("n_p", "prompt tokens of the chunk this step carries", step.pass.prefill_tokens, Unit::Count);
    let ctx = term("ctx", "tokens in a decoding request's KV cache, on average", step.pass.context, Unit::Count);
    let (what, formula, terms, seconds, note) = match (op.block, op.kind) {
        (Block::Attn | Block::Fc, OpKind::Compute) => (
            format!("Layer {}'s {} in one engine step: a token for every decoding request and a prompt chunk", op.layer, block_words(op.block)),
            "sum over its GEMMs of n_d + n_p tokens of max(2 m n k / F in whole tiles + output / B_mem, (weights + tokens) / B_mem) + max(score FLOPs / F, KV read and written / B_mem) + element-wise / B_mem",
            vec![decoding, chunk, ctx, tp, rate, hbm],
            if op.block == Block::Attn { step.layer.attn_s } else { step.layer.ffn_s },
            Some("The prompt chunk rides on the weight reads the decoding requests pay for anyway: that is why in-flight batching beats a static batch."),
        ),
        (Block::Attn | Block::Fc, OpKind::ActAllReduce) => {
            let (formula, note) = sv.all_reduce_words(step.pass.decode_tokens + step.pass.prefill_tokens);
            (
                format!("Tensor-parallel all-reduce after layer {}'s {}", op.layer, block_words(op.block)),
                formula,
                vec![term("tokens", "tokens of the step (n_d + n_p)", step.pass.decode_tokens + step.pass.prefill_tokens, Unit::Count), tp],
                step.layer.comm_s / 2.0,
                note,
            )
        }
        (Block::Pipeline, OpKind::PipeTransfer) => (
            "The step's activations handed to the next pipeline stage".into(),
            "(n_d + n_p) x h x e / tp / bandwidth + latency",
            vec![decoding, chunk, tp],
            sv.hop_s(step.pass.prefill_tokens + step.pass.decode_tokens),
            None,
        ),
        (Block::Head, OpKind::Compute) => (
            "Logits of the step's new tokens: one per decoding request, and the first token of each prompt that completes".into(),
            "max(rows x 2 h V / tp / F, h V / tp x bytes / B_mem)",
            vec![term("rows", "tokens that need logits", step.rows, Unit::Count), tp, rate, hbm],
            sv.logits_for(step.rows),
            None,
        ),
        _ => return None,
    };
    Some(Explanation { what, formula, terms, seconds, note })
}

/// Explains an op of a serving timeline.
pub fn explain(sv: &ServingCx, op: &OpName) -> Option<Explanation> {
    let cx = &sv.cx;
    let term =
        |symbol: &'static str, meaning: &'static str, value: f64, unit: Unit| Term { symbol, meaning, value, unit };
    let tp = term("tp", "tensor-parallel degree", sv.tp(), Unit::Count);
    let rate = term("F", "effective FLOP rate per GPU at the weights' format", sv.rate, Unit::FlopsPerS);
    let hbm = term("B_mem", "effective HBM bandwidth per GPU", cx.hbm_bytes_per_s, Unit::BytesPerS);
    let b = term("B", "requests in the batch (per replica)", sv.batch, Unit::Count);
    if cx.setup.batching == Batching::InFlight {
        return explain_step(sv, op, [tp, rate, hbm]);
    }
    let p = sv.prefill_layer();
    let (micro, m) = sv.prefill_micro();
    // The prefill's ops are one micro-batch's (the whole batch without a pipeline).
    let b_prefill =
        if m > 1 { term("b", "requests in each prefill micro-batch", micro, Unit::Count) } else { b.clone() };
    let (what, formula, terms, seconds, note): (String, &'static str, Vec<Term>, f64, Option<&'static str>) = match (
        op.block, op.kind,
    ) {
        (Block::Attn | Block::Fc, OpKind::Compute) => (
            format!(
                "Prefill of layer {}: {} for every prompt token{}",
                op.layer,
                block_words(op.block),
                if m > 1 { " of the first micro-batch" } else { "" }
            ),
            "sum over its GEMMs of max(2 m n k / F in whole tiles + output / B_mem, operands and output / B_mem) + max(score FLOPs / F, KV written / B_mem) + element-wise / B_mem",
            vec![b_prefill, term("s_in", "prompt tokens per request", sv.input as f64, Unit::Count), tp, rate, hbm],
            if op.block == Block::Attn { p.attn_s } else { p.ffn_s },
            Some("Prefill is compute-bound: many tokens share each weight read."),
        ),
        (Block::Attn | Block::Fc, OpKind::ActAllReduce) => {
            let tokens = micro * sv.input as f64;
            let (formula, note) = sv.all_reduce_words(tokens);
            (
                format!("Tensor-parallel all-reduce after layer {}'s {}", op.layer, block_words(op.block)),
                formula,
                vec![term("tokens", "prompt tokens of the batch (or of a prefill micro-batch)", tokens, Unit::Count), tp],
                p.comm_s / 2.0,
                note,
            )
        }
        (Block::Pipeline, OpKind::PipeTransfer) => (
            "Prompt activations handed to the next pipeline stage".into(),
            "tokens x h x e / tp / bandwidth + latency",
            vec![tp],
            sv.hop_s(micro * sv.input as f64),
            None,
        ),
        (Block::Pipeline, OpKind::Compute) => (
            format!("Prefill micro-batches 2 to {m}, each through the busiest stage after the one before it"),
            "(m - 1) x layers per stage x (attention + feed-forward + all-reduces of one micro-batch)",
            vec![
                term("m", "prefill micro-batches (whole prompts, at most 1,024 tokens each when the batch splits evenly)", m as f64, Unit::Count),
                b_prefill,
                term("L_s", "layers of the busiest stage", sv.stage_layers(), Unit::Count),
            ],
            sv.prefill_pipelined_s(),
            Some("On a pipeline the prompts go through the stages in micro-batches, so that every stage works at once: after the first micro-batch has crossed every stage, each further one adds a pass through the busiest stage. Decode steps keep the whole batch together."),
        ),
        (Block::Head, OpKind::Compute) => (
            "Logits of the prompt's last token (the first output token)".into(),
            "max(B x 2 h V / tp / F, h V / tp x bytes / B_mem)",
            vec![b, tp, rate, hbm],
            sv.logits_s(),
            None,
        ),
        (Block::Decode, OpKind::Compute) => {
            let (from, to) = decode_run(op);
            let ctx = (sv.input + from) as f64;
            (
                format!("{}: one token for each request per step, all layers", steps_words(from, to)),
                if from == to {
                    "layers x (GEMMs, each bound by reading its weights or by its FLOPs in whole tiles, + max(score FLOPs / F, KV cache / B_mem) + element-wise) + logits"
                } else {
                    "sum over the steps of layers x (GEMMs, each bound by reading its weights or by its FLOPs in whole tiles, + max(score FLOPs / F, KV cache / B_mem) + element-wise) + logits (the KV cache grows a token per step)"
                },
                vec![
                    b,
                    term("ctx", "tokens in each request's KV cache at the first step", ctx, Unit::Count),
                    term("kv", "KV-cache bytes per token on this GPU (all its layers)", sv.kv_bytes_per_token(), Unit::Bytes),
                    term("w", "bytes per weight", sv.weight_bytes, Unit::BytesPerElement),
                    rate,
                    hbm,
                ],
                sv.decode_steps(from, to).0,
                Some("Decode is memory-bound at small batches: every step reads all the weights and the whole KV cache once; a bigger batch shares the weight reads."),
            )
        }
        (Block::Decode, _) => {
            let (from, to) = decode_run(op);
            let (_, note) = sv.all_reduce_words(sv.batch);
            (
                format!("{}: tensor-parallel all-reduces (two per layer) and pipeline hops", steps_words(from, to)),
                if from == to {
                    "layers x 2 x all-reduce(B x h x e) + (p-1) hops: latency-bound at small batches"
                } else {
                    "steps x (layers x 2 x all-reduce(B x h x e) + (p-1) hops): latency-bound at small batches"
                },
                vec![b, tp],
                sv.decode_steps(from, to).1,
                note,
            )
        }
        _ => return None,
    };
    Some(Explanation { what, formula, terms, seconds, note })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::extended::collective::Group;
    use crate::engine::{validate, RawScenario};
    use serde_json::json;

    /// LLaMA-2-70B (GQA: 8 KV heads of 128) served on `tp` A100-80GB GPUs of one node.
    fn llama70(tp: u64, batch: u64, extra: serde_json::Value) -> Scenario {
        let mut task = json!({"type": "inference", "mode": "default",
            "transformer_parallel": ["tp"], "transformer_parallel_degree": [tp],
            "emb_parallel": ["ddp"], "emb_parallel_degree": [tp], "local_emb_bs": batch, "local_transformer_bs": batch,
            "input_tokens": 1024, "output_tokens": 256});
        if let (Some(t), serde_json::Value::Object(x)) = (task.as_object_mut(), extra) {
            t.extend(x);
        }
        let doc = json!({
            "model": {"type": "LLM", "bytes_per_nonemb_param": 2, "bytes_per_emb_param": 2, "entries_per_table": 32000,
                "num_transformer_layers": 80, "num_transformer_heads": 64, "num_kv_heads": 8, "attention_dim": 8192,
                "transformer_fc_dim": 28672, "ffn_kind": "swiglu", "transformer_seq_len": 4096},
            "system": {"type": "GPU", "num_devices": tp, "num_nodes": 1, "f64_flops": 9.7e12, "f32_flops": 156e12,
                "f16_flops": 312e12, "i8_ops": 624e12, "flops_util": 0.8, "mem_cap": 80e9, "mem_bw": 2039e9,
                "mem_bw_util": 0.836, "num_nvlinks": 12, "bw_per_nvlink": 50e9, "nvlink_util": 0.6667,
                "num_ibroce_ports": 8, "ibroce_bw": 50e9, "ibroce_util": 0.56, "ar_perc_intra": 1},
            "task": task,
        });
        let raw: RawScenario = serde_json::from_value(doc).expect("raw");
        validate(&raw).unwrap_or_else(|e| panic!("{e:?}"))
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
        // Its kernels replay from a CUDA graph (the default): a fraction of a microsecond each.
        let ew = 14.0 * h * 2.0 / 2.0 / hbm + KERNELS_PER_BLOCK * GRAPH_KERNEL_OVERHEAD_S;
        let want = (qkv + proj) / hbm + kv / hbm + ew;
        assert!((l.attn_s - want).abs() < 1e-12, "{} vs {want}", l.attn_s);
        // Launched one by one, each costs a host launch.
        let eager = ServingCx::new(&llama70(2, 1, json!({"cuda_graphs": false}))).expect("serving").decode_layer(ctx);
        let launches = KERNELS_PER_BLOCK * (KERNEL_OVERHEAD_S - GRAPH_KERNEL_OVERHEAD_S);
        assert!((eager.attn_s - l.attn_s - launches).abs() < 1e-12);
        assert!((eager.ffn_s - l.ffn_s - launches).abs() < 1e-12);
        // So does a step of more tokens than engines capture graphs for: a prefill of 1,024.
        let big = Pass { prefill_tokens: 0.0, decode_tokens: 513.0, context: ctx };
        assert_eq!(sv.launch_s(big), KERNELS_PER_BLOCK * KERNEL_OVERHEAD_S);
        let eager_prefill =
            ServingCx::new(&llama70(2, 1, json!({"cuda_graphs": false}))).expect("serving").prefill_layer();
        assert_eq!(sv.prefill_layer(), eager_prefill);
        // A step of a few decode tokens and a small prompt chunk replays a graph too.
        let mixed = Pass { prefill_tokens: 256.0, decode_tokens: 256.0, context: ctx };
        assert_eq!(sv.launch_s(mixed), KERNELS_PER_BLOCK * GRAPH_KERNEL_OVERHEAD_S);
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
        let g = Group { size: 4, per_node: 4 };
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
    fn the_explanation_names_the_all_reduce_kernel_the_engine_runs() {
        let note_of = |extra: serde_json::Value| {
            let s = llama70(4, 1, extra);
            let r = crate::engine::evaluate(&s);
            let op = r.timeline.iter().find(|o| o.name.block == Block::Decode && o.name.kind == OpKind::ActAllReduce);
            crate::engine::explain(&s, &op.expect("a decode all-reduce").name).expect("explained").note
        };
        // One token's 16 kB: the one-shot kernel.
        let note = note_of(json!({}));
        assert!(note.is_some_and(|n| n.contains("one-shot")), "{note:?}");
        // NCCL alone: no choice to explain.
        assert_eq!(note_of(json!({"custom_all_reduce": false})), None);
        // The prefill's all-reduce (a batch's prompts, megabytes) says its formula too.
        let s = llama70(4, 1, json!({}));
        let r = crate::engine::evaluate(&s);
        let op = r.timeline.iter().find(|o| o.name.block == Block::Attn && o.name.kind == OpKind::ActAllReduce);
        let e = crate::engine::explain(&s, &op.expect("a prefill all-reduce").name).expect("explained");
        assert!(e.formula.contains("one-shot") && e.note.is_some(), "{}", e.formula);
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

    /// In-flight batching of LLaMA-2-70B on 4 A100s: `batch` requests admitted at most.
    fn inflight(batch: u64, extra: serde_json::Value) -> Scenario {
        let mut task = json!({"batching": "inflight"});
        if let (Some(t), serde_json::Value::Object(x)) = (task.as_object_mut(), extra) {
            t.extend(x);
        }
        llama70(4, batch, task)
    }

    #[test]
    fn the_kv_pages_left_after_weights_and_a_full_step_bound_the_requests_in_flight() {
        let s = inflight(4096, json!({}));
        let sv = ServingCx::new(&s).expect("serving");
        // A request holds its prompt, half its output on average, and half a page of rounding.
        assert_eq!(sv.held_tokens(), 1024.0 + 255.0 / 2.0 + 15.0 / 2.0);
        let fixed = sv.inflight_memory(0.0);
        let per = sv.held_tokens() * sv.kv_bytes_per_token();
        let limit = sv.inflight_limit();
        assert_eq!(limit, ((fixed.capacity_bytes - fixed.total_bytes) / per).floor() as u64);
        assert!(sv.inflight_memory(limit as f64).fits() && !sv.inflight_memory(limit as f64 + 1.0).fits());
        // Asking for 4,096 admits only what fits, and the report says both.
        let r = crate::engine::evaluate(&s);
        let figures = r.serving.as_ref().expect("serving");
        assert_eq!((figures.in_flight, figures.batch, figures.max_batch), (limit as f64, 4096, limit));
        assert!(r.memory.fits());
        // Bigger pages waste more per request: fewer fit.
        let big_pages =
            ServingCx::new(&inflight(4096, json!({"kv_page_tokens": 256}))).expect("serving").inflight_limit();
        assert!(big_pages < limit, "{big_pages} vs {limit}");
        // Below the limit the batch is what is in flight.
        assert_eq!(ServingCx::new(&inflight(8, json!({}))).expect("serving").concurrency(), 8.0);
    }

    #[test]
    fn a_prompt_longer_than_the_step_budget_is_prefilled_in_chunks() {
        // One request: its 4,096-token prompt over steps of 1,024 tokens takes 4 chunk steps.
        let s = inflight(1, json!({"input_tokens": 4096, "step_tokens": 1024}));
        let sv = ServingCx::new(&s).expect("serving");
        let st = sv.steady(1.0);
        assert_eq!(st.chunk.pass.prefill_tokens, 1024.0);
        assert!((st.ttft_s - 4.0 * st.chunk.seconds).abs() < 1e-12 * st.ttft_s, "{st:?}");
        // A budget that takes the prompt at once: one step, longer than a chunk, shorter than four.
        let s = inflight(1, json!({"input_tokens": 4096, "step_tokens": 8192}));
        let one = ServingCx::new(&s).expect("serving").steady(1.0);
        assert!((one.ttft_s - one.chunk.seconds).abs() < 1e-12 * one.ttft_s);
        assert!(one.ttft_s > st.chunk.seconds && one.ttft_s < st.ttft_s);
    }

    #[test]
    fn the_steady_state_obeys_littles_law_and_saturates_when_prefill_fills_the_steps() {
        let sv_of = |batch: u64| crate::engine::evaluate(&inflight(batch, json!({}))).serving.expect("serving");
        let mut last_tokens = 0.0;
        for batch in [1, 8, 64, 256] {
            let sv = sv_of(batch);
            // Requests in flight = requests finished per second x time in the system.
            let replica_rate = sv.requests_per_s / sv.replicas as f64;
            assert!((replica_rate * sv.e2e_s - sv.in_flight).abs() < 1e-9 * sv.in_flight, "{sv:?}");
            assert!((sv.e2e_s - (sv.ttft_s + 255.0 * sv.tpot_s)).abs() < 1e-9 * sv.e2e_s);
            // More requests in flight: more tokens per second, each token later.
            assert!(sv.output_tokens_per_s > last_tokens, "{batch}: {sv:?}");
            last_tokens = sv.output_tokens_per_s;
        }
        // With 1,024-token prompts, steps of 2,048 tokens hold at most 2,048 x 255 / 1,279 = 408
        // decoding requests: beyond that, prompts wait for the budget and the first token
        // comes late, while throughput hardly grows.
        let s = inflight(2000, json!({"kv_format": "fp8", "weight_format": "fp8"}));
        let sv = ServingCx::new(&s).expect("serving");
        let st = sv.steady(sv.concurrency());
        assert!(sv.concurrency() > 1000.0, "{}", sv.concurrency());
        assert!((st.decoding - 2048.0 * 255.0 / 1279.0).abs() < 1e-9, "{st:?}");
        let below = sv.steady(400.0);
        assert!(st.ttft_s > 2.0 * below.ttft_s, "{} vs {}", st.ttft_s, below.ttft_s);
        assert!(st.requests_per_s < 1.1 * below.requests_per_s);
    }

    #[test]
    fn at_a_request_rate_the_requests_in_flight_are_those_littles_law_keeps() {
        let at = |rate: f64| crate::engine::evaluate(&inflight(64, json!({"request_rate": rate})));
        let full = crate::engine::evaluate(&inflight(64, json!({}))).serving.expect("serving");
        // A light load: the engine completes what arrives, with fewer requests in flight and a
        // faster token than at full load.
        let light = at(0.5 * full.requests_per_s);
        let sv = light.serving.as_ref().expect("serving");
        assert!((sv.requests_per_s / (0.5 * full.requests_per_s) - 1.0).abs() < 1e-6, "{sv:?}");
        // Little's law over the time in flight; arriving at random, a request also waits for
        // the prefill first (the queue holds the rest).
        let light_s = inflight(64, json!({"request_rate": 0.5 * full.requests_per_s}));
        let lsv = ServingCx::new(&light_s).expect("serving");
        let (st, _) = lsv.steady_at_load();
        let wait_s = st.mean_wait_s(true);
        assert!(
            wait_s > 0.0
                && (sv.e2e_s - st.e2e_s - wait_s).abs() < 1e-12
                && (sv.ttft_s - st.ttft_s - wait_s).abs() < 1e-12
        );
        assert!((sv.requests_per_s * (sv.e2e_s - wait_s) - sv.in_flight).abs() < 1e-6 * sv.in_flight);
        assert!(sv.in_flight < full.in_flight && sv.tpot_s < full.tpot_s && light.limits.is_empty());
        assert_eq!(sv.request_rate, Some(0.5 * full.requests_per_s));
        // More than it can complete: full load's figures, and a limit that says so.
        let heavy = at(2.0 * full.requests_per_s);
        assert_eq!(heavy.serving.as_ref().map(|s| s.in_flight), Some(full.in_flight));
        let over = heavy.limits.iter().find_map(|l| match l {
            Limit::Overloaded { asked_per_s, most_per_s } => Some((*asked_per_s, *most_per_s)),
            _ => None,
        });
        assert_eq!(over, Some((2.0 * full.requests_per_s, full.requests_per_s)));
        // A static batch has no arrival rate: refused on the field.
        let mut s = llama70(4, 8, json!({}));
        s.task.setup.request_rate = Some(1.0);
        let errors = super::super::rules::check(&s);
        assert!(errors.iter().any(|e| e.field == "task.request_rate"), "{errors:?}");
    }

    #[test]
    fn latency_percentiles_come_from_the_steps_and_the_prefill_queue() {
        // The wait of an M/D/1 queue at load 1/2 and service 1 s: 0.5 s on average, none for
        // half the prompts, ln(50) s for the 99th percentile.
        let s = inflight(64, json!({}));
        let sv = ServingCx::new(&s).expect("serving");
        let mut st = sv.steady(sv.concurrency());
        let full = sv.percentiles(&st, false);
        // At full load nothing waits: every request's first token at the mean; between tokens,
        // a step with a prompt chunk or one without.
        assert!(full.ttft_s.iter().all(|t| *t == st.ttft_s) && full.e2e_s.iter().all(|t| *t == st.e2e_s));
        let (slow, fast) = (st.chunk.seconds.max(st.plain_s), st.chunk.seconds.min(st.plain_s));
        assert!(full.tpot_s.iter().all(|t| *t == slow || *t == fast) && full.tpot_s[2] == slow, "{full:?} {st:?}");
        assert!(full.tpot_s[0] <= st.tpot_s && st.tpot_s <= full.tpot_s[2]);
        (st.prefill_load, st.prompt_s) = (0.5, 1.0);
        assert!((st.mean_wait_s(true) - 0.5).abs() < 1e-12 && st.mean_wait_s(false) == 0.0);
        assert_eq!(st.wait_quantile_s(0.5, true), 0.0);
        assert!((st.wait_quantile_s(0.99, true) - 50f64.ln()).abs() < 1e-12);
        // The report: percentiles in flight, rising toward the engine's capacity; none for a
        // static batch or an overloaded engine.
        let most = crate::engine::evaluate(&inflight(64, json!({}))).serving.expect("serving").requests_per_s;
        let at = |share: f64| {
            let r = crate::engine::evaluate(&inflight(64, json!({"request_rate": share * most})));
            r.serving.and_then(|s| s.percentiles)
        };
        let (light, busy) = (at(0.3).expect("percentiles"), at(0.9).expect("percentiles"));
        for p in [&light, &busy] {
            assert!(p.ttft_s[0] <= p.ttft_s[1] && p.ttft_s[1] <= p.ttft_s[2] && p.e2e_s[0] <= p.e2e_s[2]);
        }
        assert!(busy.ttft_s[2] > light.ttft_s[2], "{busy:?} vs {light:?}");
        assert_eq!(at(2.0), None);
        assert_eq!(crate::engine::evaluate(&llama70(4, 8, json!({}))).serving.expect("serving").percentiles, None);
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

    #[test]
    fn a_request_mix_is_served_at_its_mean_and_spreads_the_latencies() {
        // Three short chats for one long document: 3/4 of the requests 256/128 tokens, 1/4
        // 4,096/512.
        let mix = |extra: serde_json::Value| {
            let mut task = json!({"request_mix": "256/128:3, 4096/512:1", "input_tokens": null, "output_tokens": null});
            if let (Some(t), serde_json::Value::Object(x)) = (task.as_object_mut(), extra) {
                t.extend(x);
            }
            let mut s = inflight(64, task);
            s.task.setup.input_tokens = None;
            s.task.setup.output_tokens = None;
            s
        };
        let s = mix(json!({}));
        assert_eq!(s.task.setup.request_mix.len(), 2);
        let sv = ServingCx::new(&s).expect("serving");
        // The report's lengths are the means: (3 x 256 + 4096) / 4 = 1,216 and 224.
        assert_eq!((sv.input, sv.output), (1216, 224));
        let r = crate::engine::evaluate(&s);
        let out = r.serving.as_ref().expect("serving");
        assert!((out.output_tokens_per_s - out.requests_per_s * 224.0).abs() < 1e-9 * out.output_tokens_per_s);
        assert_eq!(r.tokens_per_s(&s), Some(r.throughput_samples_per_s * 224.0));
        // A request in flight is more often a long one: it stays longer.
        let kind = |input: f64| sv.in_flight_mean(|i, _| if i == input { 1.0 } else { 0.0 });
        let shares = [kind(256.0), kind(4096.0)];
        assert!((shares[1] - 512.0 / (3.0 * 128.0 + 512.0)).abs() < 1e-12, "{shares:?}");
        assert!((sv.held_tokens() - (shares[0] * (256.0 + 63.5) + shares[1] * (4096.0 + 255.5) + 7.5)).abs() < 1e-9);
        // The first tokens and the end-to-end latencies spread over the kinds: the chats'
        // median, the documents' 90th and 99th percentiles.
        let p = out.percentiles.as_ref().expect("percentiles");
        assert!(p.ttft_s[0] < p.ttft_s[2] && p.e2e_s[0] < 0.5 * p.e2e_s[2], "{p:?}");
        // One kind of request is the same as no mix.
        let one = mix(json!({"request_mix": "1024/256"}));
        let plain = inflight(64, json!({}));
        let (a, b) = (crate::engine::evaluate(&one).serving, crate::engine::evaluate(&plain).serving);
        let (a, b) = (a.expect("serving"), b.expect("serving"));
        assert!(
            (a.e2e_s - b.e2e_s).abs() < 1e-12 * b.e2e_s
                && (a.output_tokens_per_s - b.output_tokens_per_s).abs() < 1e-9 * b.output_tokens_per_s
        );
        assert_eq!(a.percentiles, b.percentiles);
        // Mixes that cannot be read or served are refused on the field.
        for (mix_text, words) in [
            ("256/128, 4096", "\"4096\" is not a kind of request"),
            ("256/0", "not a kind"),
            (" , ", "no kind of request"),
            ("1/1:0", "not a kind"),
        ] {
            let e = RequestClass::parse_mix(mix_text).expect_err(mix_text);
            assert!(e.contains(words), "{mix_text}: {e}");
        }
        let mut static_mix = llama70(4, 8, json!({}));
        static_mix.task.setup.request_mix = s.task.setup.request_mix.clone();
        let errors = super::super::rules::check(&static_mix);
        assert!(errors.iter().any(|e| e.field == "task.request_mix" && e.message.contains("in-flight")), "{errors:?}");
        assert!(
            errors.iter().any(|e| e.field == "task.request_mix" && e.message.contains("clear the prompt")),
            "{errors:?}"
        );
        assert_eq!(RequestClass::mix_text(&s.task.setup.request_mix), "256/128:75, 4096/512:25");
    }

    #[test]
    fn in_flight_batching_hides_the_prefill_that_stalls_a_static_batch() {
        // The same 64 requests: a static batch decodes nothing while it prefills, in flight the
        // prompt chunks share the decode steps' weight reads. (Both launch every kernel: the
        // static batch's decode steps would replay CUDA graphs, the in-flight steps of 2,048
        // tokens would not.)
        let eager = || json!({"cuda_graphs": false});
        let static_batch = crate::engine::evaluate(&llama70(4, 64, eager())).serving.expect("serving");
        let in_flight = crate::engine::evaluate(&inflight(64, eager())).serving.expect("serving");
        assert_eq!(static_batch.batching, Batching::Static);
        assert!(in_flight.output_tokens_per_s > static_batch.output_tokens_per_s, "{in_flight:?} {static_batch:?}");
        // Its first token comes after one prompt's prefill, not the whole batch's.
        assert!(in_flight.ttft_s < static_batch.ttft_s / 10.0);
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
mod tests_support {
    use crate::engine::scenario::Scenario;
    use crate::engine::{validate, RawScenario};
    use serde_json::json;

    /// LLaMA-2-70B served in FP8 on `n` H100s of one node, tp 8 as configured.
    pub fn llama70_on(n: u64) -> Scenario {
        let doc = json!({
            "model": {"type": "LLM", "bytes_per_nonemb_param": 2, "bytes_per_emb_param": 2, "entries_per_table": 32000,
                "num_transformer_layers": 80, "num_transformer_heads": 64, "num_kv_heads": 8, "attention_dim": 8192,
                "transformer_fc_dim": 28672, "ffn_kind": "swiglu", "transformer_seq_len": 4096},
            "system": {"type": "GPU", "num_devices": n, "num_nodes": 1, "f64_flops": 34e12, "f32_flops": 494.5e12,
                "f16_flops": 989.5e12, "i8_ops": 1979e12, "flops_util": 0.8, "mem_cap": 80e9, "mem_bw": 3350e9,
                "mem_bw_util": 0.836, "num_nvlinks": 18, "bw_per_nvlink": 50e9, "nvlink_util": 0.6667,
                "num_ibroce_ports": 8, "ibroce_bw": 100e9, "ibroce_util": 0.56, "ar_perc_intra": 1},
            "task": {"type": "inference", "mode": "default", "transformer_parallel": ["tp"], "transformer_parallel_degree": [n],
                "emb_parallel": ["ddp"], "emb_parallel_degree": [n], "local_emb_bs": 2, "local_transformer_bs": 16,
                "input_tokens": 1024, "output_tokens": 256, "weight_format": "fp8", "kv_format": "fp8"},
        });
        let raw: RawScenario = serde_json::from_value(doc).expect("raw");
        validate(&raw).unwrap_or_else(|e| panic!("{e:?}"))
    }
}
