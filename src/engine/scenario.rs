//! The validated scenario: a model, a GPU cluster and a task (with its parallelization plan).
//!
//! Only [`crate::engine::validate()`] builds a [`Scenario`], so everything downstream can trust it:
//! counts are at least 1, rates are positive and finite, plans multiply to the GPU count, and
//! the reference's structural rules hold. Units: bytes, seconds, FLOPs and FLOP/s, bytes/s.
//! This module does not compute anything.
//!
//! One job: the types of a validated scenario and what they derive.

use super::num::Num;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// One run to evaluate. Only [`crate::engine::validate()`] can build one (see [`Validated`]).
/// Its parts are the engine's: the faces (page, CLI, measured runs) read them through
/// [`Scenario::model`], [`Scenario::system`] and [`Scenario::task`], and derive another
/// scenario only through the checked methods beside [`crate::engine::validate()`]
/// (`with_kind`, `with_mode`, `with_batch`, `with_fractions`), so no scenario that skipped the
/// checks reaches the model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scenario {
    pub(in crate::engine) model: Model,
    pub(in crate::engine) system: System,
    pub(in crate::engine) task: Task,
    #[serde(skip)]
    pub(in crate::engine) _validated: Validated,
}

/// Proof that a [`Scenario`] passed validation: it has no constructor outside the engine, so
/// no other code can assemble a scenario that skipped the checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Validated(pub(in crate::engine) ());

impl Scenario {
    /// The model.
    pub fn model(&self) -> &Model {
        &self.model
    }
    /// The GPU cluster.
    pub fn system(&self) -> &System {
        &self.system
    }
    /// The task and its plan.
    pub fn task(&self) -> &Task {
        &self.task
    }
}

/// A model: its family's dimensions and its number formats.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Model {
    pub name: Arc<str>,
    /// Bytes per dense (non-embedding) parameter and per activation element; 8, 4, 2 or 1. It
    /// also selects the FLOP rate (FP64, FP32, FP16/BF16, INT8), as in MAD-Max.
    #[serde(serialize_with = "num_as_f64")]
    pub bytes_per_dense_param: Num,
    /// Bytes per embedding element.
    #[serde(serialize_with = "num_as_f64")]
    pub bytes_per_emb_param: Num,
    pub arch: Arch,
    /// Transformer details the default model uses and MAD-Max ignores.
    pub shape: Shape,
}

/// Transformer details of the default model (MAD-Max has none of them, SPEC Q26). Every field
/// has a default, so a MAD-Max model config is complete without them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Shape {
    /// Key/value heads (grouped-query attention); `None`: as many as query heads.
    pub kv_heads: Option<u64>,
    /// Width of each attention head; `None`: the hidden size over the heads. Some models' heads
    /// together are wider than the hidden size (Qwen3-32B: 64 heads of 128 on 5,120).
    pub head_dim: Option<u64>,
    pub ffn: Ffn,
    /// Whether the output layer reuses the input embedding matrix (no separate weights).
    pub tied_embeddings: bool,
    pub attention: Attention,
    /// Whether attention is causal (decoders). With a fused kernel the masked half of the
    /// score and context GEMMs is skipped.
    pub causal: bool,
    /// MoE capacity factor: tokens an expert takes, relative to an even split (>= 1).
    pub capacity_factor: f64,
    /// Whether the model trains with dropout (after attention and the feed-forward block, and
    /// on materialized attention scores): its masks are kept for the backward pass and its
    /// passes cost HBM time. GPT-3 and Megatron-LM's GPT use it; LLaMA and MPT train without.
    pub dropout: bool,
    /// Whether the attention projections and feed-forward matrices add biases: their
    /// gradients' reductions cost HBM time in the backward pass. Defaults to the feed-forward
    /// kind's usual practice: GELU models have them (GPT-2 and GPT-3, Megatron-LM's GPT, MPT as
    /// llm-foundry benchmarks it, BLOOM, ViT), SwiGLU models do not (LLaMA, Mistral, Qwen).
    pub biases: bool,
    /// How the model tells positions apart; the default follows the family's usual practice
    /// (see [`Positions`]).
    pub positions: Positions,
    /// How the norms and a gated feed-forward activation run (see [`Elementwise`]).
    pub elementwise: Elementwise,
    /// How a mixture of experts' token dispatch runs (see [`MoeDispatch`]).
    pub moe_dispatch: MoeDispatch,
}

/// How a mixture-of-experts layer copies its tokens to the experts and back (its token
/// dispatch around the experts' GEMMs), and what that costs the default model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum MoeDispatch {
    /// As eager PyTorch operations, as Megatron-core 0.6's dispatcher runs it: the routed copies
    /// gathered, sorted, scattered back, weighed and summed over many kernels
    /// ([`crate::engine::extended::calibration::MOE_DISPATCH_COPY_PASSES`]).
    Eager,
    /// By Transformer Engine's fused permute and unpermute kernels, as Megatron-core runs it
    /// with `--moe-permute-fusion`: each copy written once and read back once, the routing
    /// probabilities applied in the experts' fused activation
    /// ([`crate::engine::extended::calibration::FUSED_DISPATCH`]).
    Fused,
    /// Fused permutation as [`MoeDispatch::Fused`], with DeepEP's all-to-all kernels
    /// (Megatron-core's `--moe-token-dispatcher-type flex --moe-enable-deepep`): across nodes a
    /// token goes once to each node that holds one of its experts, over RDMA, and is forwarded
    /// within the node over NVLink
    /// ([`crate::engine::extended::collective::deepep_all_to_all_s`]).
    DeepEp,
}

/// How a transformer's norms and gated feed-forward activation are computed, and what that
/// costs the default model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Elementwise {
    /// One kernel each (Megatron-LM, Transformer Engine, apex, Liger, serving engines, a
    /// compiled model; PyTorch's own LayerNorm and GELU are single kernels too).
    Fused,
    /// RMSNorm and the gated activation as eager PyTorch operations, as Hugging Face's
    /// modelling code for LLaMA, Mistral, Qwen, ChatGLM and T5 writes them: the norm computes in
    /// an FP32 copy of its input, which it keeps for the backward pass, over eight kernels
    /// ([`crate::engine::extended::calibration::EAGER_NORM_PASSES`]); `silu(gate) * up` runs
    /// two kernels and keeps the SiLU's output too
    /// ([`crate::engine::extended::calibration::EAGER_SWIGLU_PASSES`]).
    Eager,
}

/// How a transformer encodes token positions, and what that costs the default model. Serving
/// charges the rotary embeddings' passes over each step's queries and keys (vLLM and SGLang run
/// them as a kernel of their own, which vidur's profiles time at 4-5 us for one token and 149 us
/// for 4,096 prompt tokens of Llama 2 7B on an A100; the kernels' launches are counted with the
/// block's), and no learned table: its add is a rounding error of a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Positions {
    /// A learned table of `seq x h` position embeddings added to the input (GPT-2 and GPT-3,
    /// Megatron-LM's `learned_absolute` default, OPT, MPT as llm-foundry benchmarks it, ViT):
    /// its weights, and the add in the embedding's forward pass.
    Learned,
    /// Rotary embeddings (Su et al. 2021) applied to the queries and keys by one fused kernel
    /// (Transformer Engine and Megatron-core's RoPE fusion, flash-attn's rotary kernel, serving
    /// engines): it reads and writes them once in each direction.
    Rope,
    /// Rotary embeddings as eager PyTorch computes them (Hugging Face's `q * cos +
    /// rotate_half(q) * sin`, torchtitan's and Meta's complex product in FP32, Megatron-LM
    /// without its fusion): about ten passes over the queries and keys in each direction.
    RopeUnfused,
    /// Nothing outside attention: ALiBi's bias inside a fused kernel, T5's relative position
    /// bias (counted with its weights), or no position signal.
    None,
}

/// The feed-forward block of a transformer layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Ffn {
    /// Two matrices, h x f and f x h, with GELU between (GPT, ViT).
    Gelu,
    /// Three matrices: gate and up (h x f each), down (f x h) (LLaMA).
    Swiglu,
}

impl Ffn {
    /// Weight matrices of the block.
    pub fn matrices(self) -> u64 {
        match self {
            Ffn::Gelu => 2,
            Ffn::Swiglu => 3,
        }
    }
}

/// How attention scores are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Attention {
    /// Scores are written to HBM, softmaxed and read back (Megatron-LM 2021-22): the s^2
    /// element-wise traffic and activation memory of Korthikanti et al.
    Materialized,
    /// Fused on chip by FlashAttention-2 or later (on an H100 by a kernel written for it,
    /// FlashAttention-3 or cuDNN's): no s^2 traffic or memory; causal masking skips work.
    Flash,
    /// Fused on chip by the first FlashAttention or a Triton port of it (2022-23): as
    /// [`Attention::Flash`], at a lower share of peak.
    Flash1,
    /// [`Attention::Flash1`]'s kernels run on an H100, which they were not written for: a
    /// still lower share of its peak.
    Flash1H100,
    /// FlashAttention-2's kernels run on an H100, which they were not written for (PyTorch's
    /// `scaled_dot_product_attention` picks them there): about half the share of peak of
    /// [`Attention::Flash`]'s FlashAttention-3.
    Flash2H100,
}

/// Which performance model evaluates a scenario.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum Mode {
    /// The MAD-Max Python code's behaviour, quirks included ("MAD-Max paper mode"). A MAD-Max
    /// config without a `mode` key means this.
    #[default]
    Reference,
    /// The default model: quirks fixed, pipelines, ZeRO, recomputation, real collectives.
    Default,
}

impl Mode {
    /// The config spelling (`task.mode`).
    pub fn config_name(self) -> &'static str {
        match self {
            Mode::Reference => "reference",
            Mode::Default => "default",
        }
    }

    /// A label for people.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Reference => "MAD-Max paper mode",
            Mode::Default => "default model",
        }
    }
}

/// How a training step runs, in the default model (reference mode ignores all of it). Every
/// field has a default, so a MAD-Max task config is complete without them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    /// Samples per micro-batch; `None`: the whole local batch in one micro-batch, or one sample
    /// per micro-batch when there is a pipeline (it needs several to fill its stages).
    pub micro_batch: Option<u64>,
    /// Pipeline chunks per GPU: 1 is plain 1F1B, more is Megatron's interleaved schedule.
    pub virtual_stages: u64,
    /// ZeRO stage of the data-parallel levels: 0 plain, 1 optimizer states sharded, 2 and
    /// gradients, 3 and weights. An fsdp level is stage 3 over its group whatever this says.
    pub zero_stage: u8,
    /// ZeRO stage 1 over part of the data-parallel ranks: how many of the innermost ranks that
    /// hold the same weights share one copy of the optimizer states, each copy replicated over
    /// the other ranks (InternLM's hybrid ZeRO `zero1`, Megatron-core's
    /// `--num-distributed-optimizer-instances` as data-parallel ranks / instances). Gradients
    /// are then all-reduced over every data-parallel rank and the updated weights gathered
    /// within the group only. `None`: all of them.
    pub zero_shard_ranks: Option<u64>,
    /// ZeRO stage 1 over every rank that holds the same weights sums the gradients with an
    /// all-reduce, every rank receiving the whole sum, as InternLM's and Colossal-AI's ZeRO-1 do
    /// (their low-level ZeRO optimizer reduces to a destination rank only at stage 2). `false`:
    /// a reduce-scatter, each rank receiving the sum of the shard it updates: Megatron-core's
    /// distributed optimizer, and DeepSpeed's ZeRO-1 (`reduce_scatter` on by default). Read
    /// with ZeRO-1 only: plain data parallelism always all-reduces, stages 2 and 3 always
    /// reduce-scatter, and a ZeRO-1 group ([`Setup::zero_shard_ranks`]) all-reduces.
    pub zero1_all_reduce: bool,
    /// ZeRO 1/2 returns the weights each rank updated by one broadcast from every rank of the
    /// group, each of its own shard, as InternLM's hybrid ZeRO (`broadcast_params`, 2023) and
    /// Colossal-AI's low-level ZeRO of the time do: NCCL runs them one after another, each
    /// paying the ring's latency, so over hundreds of ranks they take far longer than the one
    /// all-gather of the same bytes that Megatron-core and DeepSpeed run (`false`). Applies to
    /// what is gathered after the optimizer step; read with ZeRO 1 and 2 only.
    pub zero1_broadcast: bool,
    pub recompute: Recompute,
    /// Megatron sequence parallelism: tensor-parallel all-reduces become reduce-scatter +
    /// all-gather, and the norm/dropout activations are split over the tp group.
    pub sequence_parallel: bool,
    /// Expert tensor parallelism (Megatron-core's `--expert-tensor-parallel-size`): the ranks of
    /// a tensor-parallel group that split each expert of a mixture-of-experts layer; the other
    /// `tp / expert_tp` join expert parallelism, each routing its sequence-parallel share of the
    /// tokens to whole experts. `None`: the tensor-parallel degree (every expert split as the
    /// dense layers are).
    pub expert_tp: Option<u64>,
    /// Expert parallelism over context-parallel ranks (Megatron-core's MoE parallel folding):
    /// how many ranks of each context-parallel group hold different experts, joining expert
    /// parallelism with the ep level and the tensor-parallel ranks that hold whole experts.
    /// Each already routes tokens of its own (its share of the sequence). `None`: 1, every
    /// context-parallel rank holds the same experts (expert parallelism carved from the
    /// data-parallel ranks only, as before Megatron-core 0.10).
    pub expert_cp: Option<u64>,
    /// Under selective recomputation, the modules recomputed (Megatron-core's
    /// `--recompute-modules`); the default, the core attention only.
    pub recompute_modules: RecomputeModules,
    pub collective: Algorithm,
    /// Reduce gradients in buckets during the backward pass instead of after it.
    pub overlap_grad_reduce: bool,
    /// Gather weights ahead of the forward pass, one layer ahead, while the previous layer
    /// computes: with ZeRO-3/FSDP each layer's weights before each pass
    /// ([`Setup::prefetches_sharded_weights`], FSDP's prefetch); with ZeRO 1/2 each layer's
    /// updated weights during the first micro-batch's forward pass instead of all of them after
    /// the optimizer step ([`Setup::gathers_updated_weights_in_forward`], Megatron-core's
    /// `--overlap-param-gather`). `None`: each framework's default, yes for ZeRO-3, no for
    /// ZeRO 1/2.
    pub overlap_param_gather: Option<bool>,
    /// Overlap tensor-parallel communication with independent GEMM work (comm/GEMM overlap).
    pub overlap_tp_comm: bool,
    /// The loss is computed by a fused cross-entropy kernel over the 16-bit logits (flash-attn's,
    /// as llm-foundry uses by default): no fp32 copy of the logits is kept.
    pub fused_loss: bool,
    /// Cross-entropy losses the training loop computes again over each micro-batch's logits, for
    /// the metrics it logs, after the backward pass: 0 for Megatron-LM and most trainers (they
    /// log the loss they computed); 2 for MosaicML Composer with llm-foundry's models, whose
    /// `LanguageCrossEntropy` and `LanguagePerplexity` each recompute it in fp32
    /// ([`crate::engine::extended::calibration::METRIC_LOG_SOFTMAX_BYTES`]).
    pub metric_losses: u8,
    /// Transformer Engine's FP8 training: the transformer blocks' GEMMs run in FP8 (at the
    /// system's FP8 peak), each 16-bit activation operand cast first; weights, activations,
    /// gradients, communication and attention stay 16-bit.
    pub fp8: bool,
    /// With [`Setup::fp8`] and ZeRO stage 1 to 3: the blocks' weights are kept and gathered in
    /// FP8 (Megatron-core's `--fp8-param-gather`, NeMo's `fp8_params`, torchao's FSDP float8
    /// all-gather): the weight all-gathers move 1 byte per block parameter instead of 2, and
    /// under ZeRO 1/2 no 16-bit copy of the blocks' weights is kept beside the FP8 ones (the
    /// optimizer keeps the fp32 master weights). Ignored otherwise.
    pub fp8_param_gather: bool,
    /// Gradients are accumulated and reduced in fp32 (4 bytes each), as Megatron-LM does for
    /// bf16 training and DeepSpeed's bf16 optimizer.
    pub fp32_grads: bool,
    /// The input pipeline: a rate the user measured, a model of decoding and of reading
    /// storage, or none of them (unlimited).
    pub loader: Loader,
    /// How model-parallel (mp) levels split DLRM embedding tables.
    pub emb_sharding: EmbSharding,
    /// Where a DLRM's bottom MLP runs.
    pub bot_mlp: BotMlpPlacement,
    /// How a convolutional network's activations are laid out in memory.
    pub conv_layout: ConvLayout,
    /// Period of the host thread that launches collectives, s; 0 when the framework enqueues
    /// them itself. Horovod's background thread wakes every `HOROVOD_CYCLE_TIME` (1 ms by
    /// default since 0.21, 5 ms before; `horovod/common/operations.cc`) and starts the collectives whose
    /// inputs every rank has ready; PyTorch, Megatron-LM and DeepSpeed call NCCL directly.
    /// Training timelines start each collective half a cycle after its inputs are ready (the
    /// mean wait for a thread in a random phase), `super::extended::timeline::Timeline`.
    pub collective_cycle_s: f64,
    /// LLM serving: prompt tokens per request; `None`: the model's sequence length less the
    /// output.
    pub input_tokens: Option<u64>,
    /// LLM serving: generated tokens per request; `None`: 128 (at most half the sequence).
    pub output_tokens: Option<u64>,
    /// LLM serving: the weights' number format; `None`: the model's bytes per parameter.
    pub weight_format: Option<Precision>,
    /// LLM serving: the KV cache's number format; `None`: the model's bytes per parameter.
    pub kv_format: Option<Precision>,
    /// LLM serving: how the engine batches requests.
    pub batching: Batching,
    /// LLM serving with in-flight batching: tokens per page of the paged KV cache (vLLM's
    /// block size, 16 by default).
    pub kv_page_tokens: u64,
    /// LLM serving with in-flight batching: tokens one engine step processes at most, decode
    /// tokens and prefill chunks together (vLLM's `max_num_batched_tokens`, Sarathi-Serve's
    /// token budget).
    pub step_tokens: u64,
    /// LLM serving with in-flight batching: where prompts are prefilled (in the decode steps'
    /// token budget, or in steps of their own).
    pub prefill_steps: PrefillSteps,
    /// LLM serving with in-flight batching and prompts in steps of their own: decode steps per
    /// scheduling round (vLLM 0.6's `--num-scheduler-steps`, SGLang's
    /// `--num-continuous-decode-steps`); prompts start only between rounds, and a round's
    /// tokens reach the client together. 1: every step is scheduled.
    pub scheduler_steps: u64,
    /// LLM serving: host time per engine step that the GPU waits for, s: scheduling, preparing
    /// the inputs, sampling, processing the outputs and sending the step to the workers, where
    /// the engine does not overlap them with the GPU's work (vLLM before 0.6: vidur's profile,
    /// `microsoft/vidur` `data/profiling/a100/cpu_overheads.csv`); a fixed part, and a part per
    /// request in the step ([`Setup::host_request_s`]). 0: overlapped or negligible (vLLM's V1
    /// engine, SGLang's overlap scheduler, TensorRT-LLM's C++ runtime).
    pub host_step_s: f64,
    /// LLM serving: host time per engine step and per request in it, s ([`Setup::host_step_s`]).
    pub host_request_s: f64,
    /// LLM serving with in-flight batching: requests arriving per second over the whole
    /// cluster; `None`: as many as the batch keeps in flight (a closed loop at full load).
    pub request_rate: Option<f64>,
    /// LLM serving with in-flight batching: requests sent all at once, as throughput benchmarks
    /// send them (`vllm bench serve --num-prompts N` without a rate); the figures are then the
    /// burst's, run step by step until its last request finishes
    /// ([`crate::engine::extended::serving::Burst`]); `None`: the steady state.
    pub burst_requests: Option<u64>,
    /// LLM serving with in-flight batching: the kinds of requests served, each with its share of
    /// the requests; empty: every request has `input_tokens` and `output_tokens`.
    pub request_mix: Vec<RequestClass>,
    /// LLM serving with in-flight batching: how the requests' lengths vary around
    /// `input_tokens` and `output_tokens` (their means).
    pub length_spread: LengthSpread,
    /// LLM serving: engine steps of up to
    /// [`GRAPH_MAX_TOKENS`](crate::engine::extended::calibration::GRAPH_MAX_TOKENS) tokens replay
    /// a captured CUDA graph, so each kernel costs the GPU
    /// [`GRAPH_KERNEL_S`](crate::engine::extended::calibration::GRAPH_KERNEL_S)
    /// instead of a host launch each (vLLM, SGLang and TensorRT-LLM capture them; Hugging Face
    /// eager and FasterTransformer do not). Larger steps (a batch's prefill) run eagerly.
    pub cuda_graphs: bool,
    /// LLM serving: tensor-parallel all-reduces within a node take the fastest of NCCL and the
    /// engines' own one-shot and two-shot kernels (vLLM, SGLang, TensorRT-LLM: a GPU reads its
    /// peers' buffers over NVLink directly); off: NCCL's alone.
    pub custom_all_reduce: bool,
    /// LLM serving: how the engine picks each next token from the logits, which every step
    /// pays for after the output layer.
    pub sampling: Sampling,
}

/// One kind of request in a serving mix ([`Setup::request_mix`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RequestClass {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Its share of the requests, 0..1 (the shares of a mix add up to 1).
    pub share: f64,
}

/// Most kinds of request a mix lists.
pub const MAX_REQUEST_CLASSES: usize = 16;

impl RequestClass {
    /// A mix written as `prompt/generated[:weight]` items separated by commas, such as
    /// `512/128:3, 2048/256:1` (a weight of 1 when left out), with the weights scaled to shares
    /// that add up to 1; else a sentence saying what is wrong.
    pub fn parse_mix(text: &str) -> Result<Vec<RequestClass>, String> {
        let example = "use prompt/generated tokens with an optional weight, such as 512/128:3, 2048/256:1";
        let mut mix = Vec::new();
        for item in text.split(',').map(str::trim).filter(|x| !x.is_empty()) {
            let (lengths, weight) = item.split_once(':').unwrap_or((item, "1"));
            let tokens = |t: &str| t.trim().parse::<u64>().ok().filter(|n| *n >= 1);
            let class = lengths.split_once('/').and_then(|(i, o)| {
                let share = weight.trim().parse::<f64>().ok().filter(|w| w.is_finite() && *w > 0.0)?;
                Some(RequestClass { input_tokens: tokens(i)?, output_tokens: tokens(o)?, share })
            });
            let Some(class) = class else {
                return Err(format!("\"{}\" is not a kind of request: {example}", crate::engine::raw::short(item)));
            };
            mix.push(class);
        }
        if mix.is_empty() {
            return Err(format!("no kind of request: {example}"));
        }
        if mix.len() > MAX_REQUEST_CLASSES {
            return Err(format!("{} kinds of request: at most {MAX_REQUEST_CLASSES}", mix.len()));
        }
        let total: f64 = mix.iter().map(|c| c.share).sum();
        Ok(mix.into_iter().map(|c| RequestClass { share: c.share / total, ..c }).collect())
    }

    /// A mix in the form [`RequestClass::parse_mix`] reads, shares as percentages.
    pub fn mix_text(mix: &[RequestClass]) -> String {
        let items: Vec<String> = mix
            .iter()
            .map(|c| format!("{}/{}:{}", c.input_tokens, c.output_tokens, (c.share * 1000.0).round() / 10.0))
            .collect();
        items.join(", ")
    }

    /// The kinds of request of an exponential spread ([`LengthSpread::Exponential`]) of prompts
    /// of mean `input` tokens and answers of mean `output`: each length cut into [`SPREAD_BINS`]
    /// bins of equal probability, each bin served at its mean ([`exponential_bin_means`], in
    /// whole tokens that keep the given means exactly: `whole_tokens`), every pair of a prompt
    /// bin and an answer bin one kind of equal share. They are listed in the order of the first
    /// two dimensions of a Sobol sequence (answer bins from the van der Corput sequence, prompt
    /// bins from the second dimension, whose generator is Pascal's triangle mod 2), so that any
    /// aligned run of [`SPREAD_BINS`] of them holds every answer bin and every prompt bin once,
    /// as evenly paired as a run that short allows: an engine sent a burst admits the kinds in
    /// this order.
    pub fn spread(input: u64, output: u64) -> Vec<RequestClass> {
        let bins = exponential_bin_means();
        let tokens = |mean: u64| whole_tokens(&bins.map(|m| m * mean as f64), mean);
        let (inputs, outputs) = (tokens(input), tokens(output));
        let bits = SPREAD_BINS.trailing_zeros() as usize;
        let share = 1.0 / (SPREAD_BINS * SPREAD_BINS) as f64;
        (0..SPREAD_BINS * SPREAD_BINS)
            .map(|n| {
                // Digit i (from the most significant) of the point's two coordinates: n's bit i
                // (van der Corput), and the parity of n's bits j whose set bits include i's
                // (Lucas: binomial(j, i) is odd), over all 2 x `bits` digits.
                let digit = |i: usize| (n >> i) & 1;
                let sobol = |i: usize| (i..2 * bits).filter(|j| j & i == i).fold(0, |d, j| d ^ digit(j));
                let bin = |d: &dyn Fn(usize) -> usize| (0..bits).fold(0, |b, i| (b << 1) | d(i));
                RequestClass { input_tokens: inputs[bin(&sobol)], output_tokens: outputs[bin(&digit)], share }
            })
            .collect()
    }
}

/// Lengths `exact` (each at least 1) in whole tokens that average exactly `mean` (at least 1):
/// each rounded, at least 1, then the total brought to `mean` per bin a token at a time, added
/// where rounding took the most and taken where it added the most (the first such bin on ties).
/// A mean of one token leaves every bin at 1: a spread cannot go below a token.
fn whole_tokens(exact: &[f64], mean: u64) -> Vec<u64> {
    let mut out: Vec<u64> = exact.iter().map(|x| (x.round() as u64).max(1)).collect();
    let want = mean.max(1).saturating_mul(exact.len() as u64);
    loop {
        let total: u64 = out.iter().sum();
        if total == want {
            return out;
        }
        // What rounding took from each bin (negative: what it added); `min_by` keeps the first.
        let taken = |k: &usize| exact[*k] - out[*k] as f64;
        let k = if total < want {
            (0..out.len()).min_by(|a, b| taken(b).total_cmp(&taken(a)))
        } else {
            (0..out.len()).filter(|k| out[*k] > 1).min_by(|a, b| taken(a).total_cmp(&taken(b)))
        };
        match k {
            Some(k) if total < want => out[k] += 1,
            Some(k) => out[k] -= 1,
            None => return out,
        }
    }
}

/// The means of the [`SPREAD_BINS`] equal-probability bins of an exponential distribution of
/// mean 1, shortest first: bin `j` spans the quantiles `j / n` to `(j + 1) / n`, where
/// `x(q) = -ln(1 - q)`, and its mean is `1 + (x_a (1 - q_a) - x_b (1 - q_b)) / (q_b - q_a)`
/// (the last bin's, to infinity: `1 + x_a`); they average to 1.
pub fn exponential_bin_means() -> [f64; SPREAD_BINS] {
    let n = SPREAD_BINS as f64;
    std::array::from_fn(|j| {
        let (qa, qb) = (j as f64 / n, (j + 1) as f64 / n);
        let xa = -(1.0 - qa).ln();
        if j + 1 == SPREAD_BINS {
            1.0 + xa
        } else {
            let xb = -(1.0 - qb).ln();
            1.0 + (xa * (1.0 - qa) - xb * (1.0 - qb)) / (qb - qa)
        }
    })
}

/// How the lengths of an LLM serving engine's requests vary around their means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LengthSpread {
    /// Every request has the given prompt and generated tokens (benchmarks' random datasets:
    /// `vllm bench serve --dataset-name random`).
    Fixed,
    /// Prompt and generated tokens each spread as an exponential distribution with the given
    /// mean, independently: the most even spread a length with nothing known but its mean can
    /// have (the maximum-entropy distribution on `[0, inf)` with a given mean), and long-tailed,
    /// as chat traffic is (ShareGPT conversations: most answers short, a few very long).
    /// Served as [`SPREAD_BINS`] x [`SPREAD_BINS`] kinds of request of equal share
    /// ([`RequestClass::spread`]).
    Exponential,
}

impl LengthSpread {
    pub const ALL: [LengthSpread; 2] = [LengthSpread::Fixed, LengthSpread::Exponential];

    pub fn config_name(self) -> &'static str {
        match self {
            LengthSpread::Fixed => "fixed",
            LengthSpread::Exponential => "exponential",
        }
    }
}

/// Equal-probability bins each spread length is cut into ([`LengthSpread::Exponential`]):
/// enough that a median falls within a sixteenth of the distribution.
pub const SPREAD_BINS: usize = 16;

// The kinds' order takes bins from base-2 digits: a power of two.
const _: () = assert!(SPREAD_BINS.is_power_of_two() && SPREAD_BINS > 1);

/// How an LLM serving engine batches requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Batching {
    /// One batch of requests starts together, prefills together and decodes until the longest
    /// is done (FasterTransformer, early Hugging Face serving).
    Static,
    /// Continuous batching (Orca, vLLM, TensorRT-LLM, SGLang): requests join and leave at every
    /// step, as many as the paged KV cache holds, prompts prefilled in chunks mixed into the
    /// decode steps; figures are the steady state.
    InFlight,
}

impl Batching {
    pub const ALL: [Batching; 2] = [Batching::Static, Batching::InFlight];

    pub fn config_name(self) -> &'static str {
        match self {
            Batching::Static => "static",
            Batching::InFlight => "inflight",
        }
    }
}

/// How an LLM serving engine picks each next token from the logits (a decoding strategy: what
/// the requests ask for and how the engine's sampler computes it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Sampling {
    /// The most likely token (temperature 0): an argmax over the vocabulary, what serving
    /// benchmarks ask for (`vllm bench serve`, SGLang's `bench_serving`, TensorRT-LLM's
    /// benchmarks).
    Greedy,
    /// A draw from the softmax of the logits over a temperature, with no top-p or top-k cut
    /// (vLLM's offline throughput and latency scripts: temperature 1, top-p 1).
    Random,
    /// Nucleus (top-p) sampling by sorting each request's logits over the whole vocabulary, as
    /// PyTorch's sampler (vLLM's without FlashInfer, Hugging Face's) and FasterTransformer's do.
    TopP,
}

impl Sampling {
    pub const ALL: [Sampling; 3] = [Sampling::Greedy, Sampling::Random, Sampling::TopP];

    pub fn config_name(self) -> &'static str {
        match self {
            Sampling::Greedy => "greedy",
            Sampling::Random => "random",
            Sampling::TopP => "top-p",
        }
    }
}

/// Where an engine batching in flight prefills its prompts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PrefillSteps {
    /// Prompt chunks fill the token budget of the decode steps (Sarathi-Serve's chunked
    /// prefill: vLLM's V1 engine, TensorRT-LLM, SGLang with `--enable-mixed-chunk`).
    Mixed,
    /// Prompts run in steps of their own, ahead of the decode steps, which wait for them
    /// (SGLang's default, whose scheduler takes a waiting prefill batch before decoding; vLLM
    /// before its V1 engine without chunked prefill, whose scheduler runs waiting prompts first).
    Separate,
}

impl PrefillSteps {
    pub const ALL: [PrefillSteps; 2] = [PrefillSteps::Mixed, PrefillSteps::Separate];

    pub fn config_name(self) -> &'static str {
        match self {
            PrefillSteps::Mixed => "mixed",
            PrefillSteps::Separate => "separate",
        }
    }
}

/// A number format for weights or the KV cache in serving.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Precision {
    Fp16,
    Bf16,
    Fp8,
    Int8,
    /// 4-bit weights (GPTQ/AWQ-style), computed in 16 bits.
    Int4,
}

impl Precision {
    pub const ALL: [Precision; 5] =
        [Precision::Fp16, Precision::Bf16, Precision::Fp8, Precision::Int8, Precision::Int4];

    pub fn config_name(self) -> &'static str {
        match self {
            Precision::Fp16 => "fp16",
            Precision::Bf16 => "bf16",
            Precision::Fp8 => "fp8",
            Precision::Int8 => "int8",
            Precision::Int4 => "int4",
        }
    }

    /// The format's name for people: `FP8`, `INT4`.
    pub fn label(self) -> &'static str {
        match self {
            Precision::Fp16 => "FP16",
            Precision::Bf16 => "BF16",
            Precision::Fp8 => "FP8",
            Precision::Int8 => "INT8",
            Precision::Int4 => "INT4",
        }
    }

    /// Bytes per element.
    pub fn bytes(self) -> f64 {
        match self {
            Precision::Fp16 | Precision::Bf16 => 2.0,
            Precision::Fp8 | Precision::Int8 => 1.0,
            Precision::Int4 => 0.5,
        }
    }
}

/// How a DLRM's model-parallel embedding levels split the tables (TorchRec's sharding types).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EmbSharding {
    /// Whole tables per GPU; pooled embeddings travel by all-to-all (MAD-Max's mp).
    Table,
    /// Each table's rows spread over the GPUs; partial pools are reduce-scattered.
    Row,
    /// Each table's columns spread over the GPUs; column slices travel by all-to-all.
    Column,
}

impl EmbSharding {
    pub const ALL: [EmbSharding; 3] = [EmbSharding::Table, EmbSharding::Row, EmbSharding::Column];

    pub fn config_name(self) -> &'static str {
        match self {
            EmbSharding::Table => "table",
            EmbSharding::Row => "row",
            EmbSharding::Column => "column",
        }
    }
}

/// Where a DLRM's bottom MLP runs when its tables are split over GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BotMlpPlacement {
    /// On every GPU for its own samples, like the top MLP (TorchRec, MAD-Max).
    DataParallel,
    /// On one GPU of each table group for all the group's samples, its output sent with the
    /// pooled embeddings as one more feature; on more than 4 GPUs that GPU holds no tables.
    /// NVIDIA's DLRM examples (PyTorch, and TensorFlow 2 before Merlin Distributed
    /// Embeddings) place it so: README, "Embedding table placement and load balancing".
    OneGpu,
}

impl BotMlpPlacement {
    pub const ALL: [BotMlpPlacement; 2] = [BotMlpPlacement::DataParallel, BotMlpPlacement::OneGpu];

    pub fn config_name(self) -> &'static str {
        match self {
            BotMlpPlacement::DataParallel => "data_parallel",
            BotMlpPlacement::OneGpu => "one_gpu",
        }
    }
}

/// The memory layout of a convolutional network's activations. Tensor cores compute
/// convolutions on channels-last (NHWC) tensors: given channels-first (NCHW) ones, cuDNN
/// transposes each operand into NHWC before the convolution and its result back after it
/// (NVIDIA's cuDNN and "Convolutional Layers User's Guide"; MosaicML's Channels Last method
/// card: about 30% on ResNet-50 on V100s and A100s, mixed precision). GPUs without tensor cores
/// for the precision (32-bit floats on a V100) run NCHW natively.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConvLayout {
    /// Channels last (PyTorch's `channels_last`, TensorFlow's default, MXNet's `NHWC`
    /// layouts): no transposes.
    Nhwc,
    /// Channels first (PyTorch's and MXNet's default): on tensor cores, every convolution
    /// kernel transposes its two activation operands.
    Nchw,
}

impl ConvLayout {
    pub const ALL: [ConvLayout; 2] = [ConvLayout::Nhwc, ConvLayout::Nchw];

    pub fn config_name(self) -> &'static str {
        match self {
            ConvLayout::Nhwc => "nhwc",
            ConvLayout::Nchw => "nchw",
        }
    }
}

impl Setup {
    /// Whether ZeRO-3/FSDP gathers the next layer's weights while this layer computes
    /// ([`Setup::overlap_param_gather`]; yes unless the task says no).
    pub fn prefetches_sharded_weights(&self) -> bool {
        self.overlap_param_gather.unwrap_or(true)
    }

    /// Whether ZeRO 1/2 gathers each layer's updated weights during the first micro-batch's
    /// forward pass, one layer ahead, as Megatron-core's distributed optimizer does with
    /// `--overlap-param-gather` (`finish_param_sync` waits for a bucket and dispatches the
    /// next), instead of all of them after the optimizer step ([`Setup::overlap_param_gather`];
    /// no unless the task says yes).
    pub fn gathers_updated_weights_in_forward(&self) -> bool {
        self.overlap_param_gather.unwrap_or(false)
    }

    /// The ranks of a `tp`-way tensor-parallel group that split each expert
    /// ([`Setup::expert_tp`]): all `tp` when it is not given; fewer leave the others whole experts.
    pub fn experts_split_by(&self, tp: u64) -> u64 {
        self.expert_tp.unwrap_or(tp)
    }

    /// The ranks of a context-parallel group that hold different experts
    /// ([`Setup::expert_cp`]): 1 when it is not given.
    pub fn experts_spread_over_cp(&self) -> u64 {
        self.expert_cp.unwrap_or(1)
    }
}

impl Default for Setup {
    fn default() -> Setup {
        Setup {
            micro_batch: None,
            virtual_stages: 1,
            zero_stage: 0,
            recompute: Recompute::None,
            sequence_parallel: false,
            expert_tp: None,
            expert_cp: None,
            zero_shard_ranks: None,
            zero1_all_reduce: false,
            zero1_broadcast: false,
            recompute_modules: RecomputeModules::default(),
            collective: Algorithm::Hierarchical,
            overlap_grad_reduce: false,
            overlap_param_gather: None,
            overlap_tp_comm: false,
            fused_loss: false,
            metric_losses: 0,
            fp8: false,
            fp8_param_gather: false,
            fp32_grads: false,
            loader: Loader::default(),
            emb_sharding: EmbSharding::Table,
            bot_mlp: BotMlpPlacement::DataParallel,
            conv_layout: ConvLayout::Nhwc,
            collective_cycle_s: 0.0,
            input_tokens: None,
            output_tokens: None,
            weight_format: None,
            kv_format: None,
            batching: Batching::Static,
            kv_page_tokens: 16,
            step_tokens: 2048,
            prefill_steps: PrefillSteps::Mixed,
            scheduler_steps: 1,
            host_step_s: 0.0,
            host_request_s: 0.0,
            request_rate: None,
            burst_requests: None,
            cuda_graphs: true,
            custom_all_reduce: true,
            sampling: Sampling::Greedy,
            request_mix: Vec::new(),
            length_spread: LengthSpread::Fixed,
        }
    }
}

/// Activation recomputation (Korthikanti et al. 2022).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Recompute {
    /// Keep every activation.
    None,
    /// Recompute the attention score/softmax/context part only.
    Selective,
    /// Keep only each layer's input; recompute the whole layer in the backward pass.
    Full,
}

impl Recompute {
    pub fn config_name(self) -> &'static str {
        match self {
            Recompute::None => "none",
            Recompute::Selective => "selective",
            Recompute::Full => "full",
        }
    }
}

/// The modules selective recomputation drops after the forward pass and computes again in
/// the backward pass (Megatron-core's `--recompute-modules`): their outputs are not kept, only
/// their inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecomputeModules {
    /// The attention scores, softmax and context (Korthikanti et al.'s selective
    /// recomputation; Megatron-core's default).
    pub core_attn: bool,
    /// Both norms of each layer: their outputs, the inputs of the QKV and first feed-forward
    /// GEMMs.
    pub layernorm: bool,
    /// A dense feed-forward block, all but its input.
    pub mlp: bool,
    /// A mixture of experts' feed-forward block, all but its input: the dispatched copies,
    /// the experts' activations, and the all-to-alls run again.
    pub moe: bool,
    /// The experts' activation function: its output, the second expert GEMM's input.
    pub moe_act: bool,
}

impl RecomputeModules {
    /// Each module's name as Megatron-core spells it.
    pub const NAMES: [&'static str; 5] = ["core_attn", "layernorm", "mlp", "moe", "moe_act"];

    /// Each module's flag, in the order of [`RecomputeModules::NAMES`].
    fn flags_mut(&mut self) -> [&mut bool; 5] {
        [&mut self.core_attn, &mut self.layernorm, &mut self.mlp, &mut self.moe, &mut self.moe_act]
    }

    /// Modules named in `text`, separated by commas or spaces (`"layernorm, moe"`).
    pub fn parse(text: &str) -> Result<RecomputeModules, String> {
        let mut m = RecomputeModules { core_attn: false, layernorm: false, mlp: false, moe: false, moe_act: false };
        let mut any = false;
        for name in text.split(|c: char| c == ',' || c.is_whitespace()).filter(|n| !n.is_empty()) {
            let Some(i) = Self::NAMES.iter().position(|n| *n == name) else {
                let shown: String = name.chars().take(24).collect();
                return Err(format!("\"{shown}\" is not a module; use {}", Self::NAMES.join(", ")));
            };
            *m.flags_mut()[i] = true;
            any = true;
        }
        if any {
            Ok(m)
        } else {
            Err(format!("names no module; use some of {}, separated by commas", Self::NAMES.join(", ")))
        }
    }

    /// The modules as the task key writes them (`"layernorm, moe"`), the form
    /// [`RecomputeModules::parse`] reads.
    pub fn config_text(mut self) -> String {
        let on = self.flags_mut().map(|f| *f);
        Self::NAMES.iter().zip(on).filter(|(_, on)| *on).map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
    }

    /// Whether the feed-forward block runs its forward pass again (a dense one, or a mixture
    /// of experts').
    pub fn ffn(self, moe: bool) -> bool {
        if moe {
            self.moe
        } else {
            self.mlp
        }
    }
}

impl Default for RecomputeModules {
    /// Megatron-core's default: the core attention only.
    fn default() -> RecomputeModules {
        RecomputeModules { core_attn: true, layernorm: false, mlp: false, moe: false, moe_act: false }
    }
}

/// How a collective moves its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Algorithm {
    /// One ring over every member: bandwidth-optimal, latency grows with the group.
    Ring,
    /// NCCL's tree for all-reduces across nodes: a chain in each node, a double binary tree
    /// across nodes (latency grows with the log of the node count), 0.9 of the bandwidth and
    /// less at medium sizes, as NCCL's tuner costs it. Within a node, and for all-gathers and
    /// reduce-scatters, NCCL builds no tree: they run as [`Algorithm::Hierarchical`].
    Tree,
    /// Two levels: within each node over NVLink, then across nodes on 1/k of the data
    /// (PowerAI DDL's multi-ring, NCCL's default across nodes). All-gathers and
    /// reduce-scatters pay a ring's latency: NCCL runs them as rings.
    Hierarchical,
    /// The switch sums the data (SwitchML, SHARP): each host sends its data once instead of
    /// twice for an all-reduce.
    InNetwork,
}

impl Algorithm {
    pub const ALL: [Algorithm; 4] = [Algorithm::Ring, Algorithm::Tree, Algorithm::Hierarchical, Algorithm::InNetwork];

    pub fn config_name(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::Tree => "tree",
            Algorithm::Hierarchical => "hierarchical",
            Algorithm::InNetwork => "in_network",
        }
    }
}

fn num_as_f64<S: serde::Serializer>(n: &Num, s: S) -> Result<S::Ok, S::Error> {
    match n {
        Num::Int(i) => s.serialize_i128(*i),
        Num::Float(f) => s.serialize_f64(*f),
    }
}

/// The six model families of MAD-Max, and the convolutional networks of the default model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Arch {
    Dlrm(Dlrm),
    DlrmMoe(Dlrm, Moe),
    DlrmTransformer(Dlrm, Transformer),
    Llm(Llm),
    LlmMoe(Llm, Moe),
    Vit(Vit),
    Cnn(Cnn),
    EncDec(EncDec),
}

impl Arch {
    /// The MAD-Max `type` string of this family.
    pub fn family(&self) -> Family {
        match self {
            Arch::Dlrm(_) => Family::Dlrm,
            Arch::DlrmMoe(..) => Family::DlrmMoe,
            Arch::DlrmTransformer(..) => Family::DlrmTransformer,
            Arch::Llm(_) => Family::Llm,
            Arch::LlmMoe(..) => Family::LlmMoe,
            Arch::Vit(_) => Family::Vit,
            Arch::Cnn(_) => Family::Cnn,
            Arch::EncDec(_) => Family::EncDec,
        }
    }
}

/// A model family, named as in MAD-Max configs (`CNN`: the default model's own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Family {
    Dlrm,
    DlrmMoe,
    DlrmTransformer,
    Llm,
    LlmMoe,
    Vit,
    Cnn,
    EncDec,
}

impl Family {
    pub const ALL: [Family; 8] = [
        Family::Dlrm,
        Family::DlrmMoe,
        Family::DlrmTransformer,
        Family::Llm,
        Family::LlmMoe,
        Family::Vit,
        Family::Cnn,
        Family::EncDec,
    ];

    /// The `type` string MAD-Max configs use.
    pub fn config_name(self) -> &'static str {
        match self {
            Family::Dlrm => "DLRM",
            Family::DlrmMoe => "DLRM_MoE",
            Family::DlrmTransformer => "DLRM_Transformer",
            Family::Llm => "LLM",
            Family::LlmMoe => "LLM_MoE",
            Family::Vit => "ViT",
            Family::Cnn => "CNN",
            Family::EncDec => "EncoderDecoder",
        }
    }

    /// Whether only the default model has this family (CNNs and encoder-decoders: MAD-Max has
    /// neither), so a config without a mode key is evaluated by it.
    pub fn default_model_only(self) -> bool {
        matches!(self, Family::Cnn | Family::EncDec)
    }

    /// True for the recommendation models (MLPs + embedding tables).
    pub fn is_dlrm(self) -> bool {
        matches!(self, Family::Dlrm | Family::DlrmMoe | Family::DlrmTransformer)
    }

    /// Whether its task has an MLP plan (`mlp_parallel`, `local_mlp_bs`): the recommendation
    /// models, and a CNN, whose whole network it plans (it has no embeddings to plan).
    pub fn has_mlp_plan(self) -> bool {
        self.is_dlrm() || self == Family::Cnn
    }

    /// Whether its task has a transformer plan (`transformer_parallel`, `local_transformer_bs`).
    pub fn has_transformer_plan(self) -> bool {
        !matches!(self, Family::Dlrm | Family::DlrmMoe | Family::Cnn)
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.config_name())
    }
}

/// DLRM dimensions: MLP layers and pooled embedding tables.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Dlrm {
    pub bot_mlp_layers: u64,
    pub top_mlp_layers: u64,
    /// Every MLP layer is a `mlp_dim x mlp_dim` GEMM (MAD-Max's MLPs; the default model uses
    /// [`Dlrm::widths`] instead when given).
    pub mlp_dim: u64,
    pub num_tables: u64,
    pub entries_per_table: u64,
    pub emb_dim: u64,
    /// Lookups per table per sample.
    pub pooling_size: u64,
    /// The MLPs' real layer widths (the default model only; paper mode keeps square layers).
    pub widths: Option<MlpWidths>,
}

/// The layer widths of a DLRM's MLPs, as the DLRM reference code's `--arch-mlp-bot` and
/// `--arch-mlp-top` give them (Naumov et al. 2019): the bottom MLP from its dense input features
/// through each layer's output (`13-512-256-128`), the top MLP by each layer's output
/// (`1024-1024-512-256-1`); its input is the feature interaction's output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MlpWidths {
    /// Input features, then each bottom layer's output width; the last equals `emb_dim` (the
    /// dot interaction pairs it with the embeddings).
    pub bottom: Vec<u64>,
    /// Each top layer's output width.
    pub top: Vec<u64>,
}

impl Dlrm {
    /// Layer `l` of the bottom (`top` false) or top MLP: (input width, output width). Without
    /// [`Dlrm::widths`], `(mlp_dim, mlp_dim)`. The top MLP's first layer takes the interaction's
    /// output: the `F (F - 1) / 2` dot products of the `F = tables + 1` vectors, and the bottom
    /// MLP's output beside them (Naumov et al. 2019, section 3).
    pub fn mlp_layer(&self, top: bool, l: u64) -> (u64, u64) {
        let Some(w) = &self.widths else { return (self.mlp_dim, self.mlp_dim) };
        let at = |v: &[u64], i: u64| v.get(i as usize).copied().unwrap_or(0);
        match (top, l) {
            (false, l) => (at(&w.bottom, l), at(&w.bottom, l + 1)),
            (true, 0) => {
                let f = self.num_tables.saturating_add(1);
                let pairs = f.saturating_mul(f.saturating_sub(1)) / 2;
                (pairs.saturating_add(self.emb_dim), at(&w.top, 0))
            }
            (true, l) => (at(&w.top, l - 1), at(&w.top, l)),
        }
    }
}

/// Mixture-of-experts: every top-MLP (DLRM) or feed-forward (LLM) layer has `experts` experts,
/// of which `active_experts` run per sample.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Moe {
    pub experts: u64,
    pub active_experts: u64,
}

/// Transformer dimensions as MAD-Max describes them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Transformer {
    pub layers: u64,
    /// Read but unused by the MAD-Max formulas (SPEC Q26).
    pub heads: u64,
    pub attention_dim: u64,
    pub fc_dim: u64,
    pub seq_len: u64,
}

/// A decoder LLM: a transformer plus word and position embeddings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Llm {
    pub vocab: u64,
    pub transformer: Transformer,
}

/// A vision transformer: images cut into `patch_dim x patch_dim` RGB patches.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Vit {
    pub image_size: u64,
    pub patch_dim: u64,
    pub layers: u64,
    pub heads: u64,
    pub attention_dim: u64,
    pub fc_dim: u64,
}

impl Vit {
    /// The patch "vocabulary" `3 p^2` (SPEC 2.1).
    pub fn vocab(&self) -> u64 {
        3 * self.patch_dim * self.patch_dim
    }

    /// Patches per image, `ceil(I / p)^2` (no class token; SPEC 2.1, Q26).
    pub fn seq_len(&self) -> u64 {
        // Python: math.ceil(I / p) on a float quotient; exact for the validated range.
        let side = (self.image_size as f64 / self.patch_dim as f64).ceil() as u64;
        side * side
    }

    /// The transformer view of this model.
    pub fn transformer(&self) -> Transformer {
        Transformer {
            layers: self.layers,
            heads: self.heads,
            attention_dim: self.attention_dim,
            fc_dim: self.fc_dim,
            seq_len: self.seq_len(),
        }
    }
}

/// An encoder-decoder transformer (T5, mT5, BART; the default model only, MAD-Max has none):
/// an encoder stack reads the input tokens with bidirectional self-attention; a decoder stack
/// reads the target tokens with causal self-attention and attends to the encoder's output in a
/// cross-attention block in every layer (Vaswani et al. 2017; Raffel et al. 2020, T5). Both
/// stacks have the same widths, and share one token embedding.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EncDec {
    /// Token embedding rows (the vocabulary).
    pub vocab: u64,
    pub encoder_layers: u64,
    pub decoder_layers: u64,
    pub heads: u64,
    /// Hidden size (T5's `d_model`).
    pub attention_dim: u64,
    /// Feed-forward inner width (T5's `d_ff`).
    pub fc_dim: u64,
    /// Tokens per sample the encoder reads (the input length).
    pub input_len: u64,
    /// Tokens per sample the decoder reads and predicts (the target length).
    pub target_len: u64,
}

/// A convolutional network (the default model only; MAD-Max has none): a published
/// architecture at an input size, trained or served data parallel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cnn {
    pub network: Network,
    /// Pixels per side of the square RGB input.
    pub image_size: u64,
    /// Outputs of the classifier.
    pub classes: u64,
}

/// A published convolutional network; [`crate::engine::extended::cnn::layers`] lists its layers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Network {
    /// He et al. 2016 (arXiv 1512.03385), Table 1, as torchvision builds them (v1.5: a
    /// bottleneck downsamples in its 3x3 convolution).
    ResNet18,
    ResNet34,
    ResNet50,
    ResNet101,
    ResNet152,
    /// Szegedy et al. 2015 (arXiv 1409.4842), Table 1, without the auxiliary classifiers.
    GoogLeNet,
    /// Network-in-Network for ImageNet (Lin et al. 2014, arXiv 1312.4400), as the authors'
    /// Caffe model defines it: four mlpconv blocks and global average pooling.
    Nin,
}

impl Network {
    /// The networks and their config spellings (`model.network`).
    pub const ALL: [(&'static str, Network); 7] = [
        ("resnet18", Network::ResNet18),
        ("resnet34", Network::ResNet34),
        ("resnet50", Network::ResNet50),
        ("resnet101", Network::ResNet101),
        ("resnet152", Network::ResNet152),
        ("googlenet", Network::GoogLeNet),
        ("nin", Network::Nin),
    ];
}

/// A GPU cluster as MAD-Max describes it. Rates are peak values; `*_util` scale them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct System {
    pub name: Arc<str>,
    pub num_devices: u64,
    pub num_nodes: u64,
    pub f64_flops_per_s: f64,
    pub f32_flops_per_s: f64,
    pub f16_flops_per_s: f64,
    pub i8_ops_per_s: f64,
    /// Dense FP8 tensor-core peak per device, FLOP/s; `None`: no FP8 tensor cores (A100 and
    /// older), so FP8 training is refused.
    pub fp8_flops_per_s: Option<f64>,
    /// Streaming multiprocessors per device (AMD: compute units), from the GPU's whitepaper
    /// (config key `sm_count`, optional): the default model charges a GEMM's last, part-full
    /// wave of tiles over them ([`crate::engine::extended::gemm`]); `None` charges none.
    /// MAD-Max has no such term.
    pub sm_count: Option<u64>,
    pub flops_util: f64,
    /// HBM capacity per device, bytes.
    pub mem_cap_bytes: f64,
    /// HBM bandwidth per device, bytes/s.
    pub mem_bw_bytes_per_s: f64,
    pub mem_bw_util: f64,
    /// Share of the HBM bandwidth a GEMM's own reads and writes reach (config key
    /// `gemm_bw_util`, optional; `None`: [`System::mem_bw_util`]): decoding's thin GEMMs, which
    /// stream their weights, run at it. cuBLAS's GEMV-like kernels reach a share of their own
    /// per GPU (the default model's validation takes the A100's and the H100's from profiled
    /// kernels, `calibration::gemm_bw_util`). The default model only; MAD-Max has one HBM share.
    pub gemm_bw_util: Option<f64>,
    pub num_nvlinks: f64,
    /// Bidirectional bytes/s per NVLink.
    pub bw_per_nvlink_bytes_per_s: f64,
    pub nvlink_util: f64,
    /// NIC ports per node.
    pub num_ibroce_ports: f64,
    /// Bidirectional bytes/s per NIC port.
    pub ibroce_bw_bytes_per_s: f64,
    pub ibroce_util: f64,
    /// Share of the multi-node all-reduce bandwidth mix taken from the intra-node bandwidth.
    pub ar_perc_intra: f64,
    /// One-way latency each hop between nodes adds to a datacenter network's, s (config key
    /// `nic_latency_s`, optional, 0 by default): the distance of a wide-area link between
    /// sites or homes. The default model adds it to every network step of a collective and
    /// to every point-to-point transfer between nodes; MAD-Max has no latency term.
    pub nic_latency_s: f64,
    /// Latency each hop within a node adds to NCCL's own, s (config key `nvlink_latency_s`,
    /// optional, 0 by default): for links slower to answer than NVLink. The default model
    /// adds it to every step of a collective within a node.
    pub nvlink_latency_s: f64,
    /// The wide-area level between sites, `None` on a cluster of one site (config keys
    /// `num_sites`, `wan_bw`, `wan_latency_s`). The default model only; MAD-Max has one
    /// network level between nodes.
    pub wan: Option<Wan>,
    /// A second GPU type on some of the nodes, `None` when every GPU is alike (config keys
    /// `second_gpu_nodes`, `second_gpu_name`, `second_f16_flops`, ...). The default model only.
    pub second: Option<SecondGpu>,
}

/// A second GPU type on the last `nodes` nodes of a cluster: its datasheet figures. The nodes
/// share the cluster's NIC and utilisation figures, and its NVLinks unless they have their own.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SecondGpu {
    pub name: Arc<str>,
    /// Nodes of this type, at least 1 and fewer than the cluster's.
    pub nodes: u64,
    pub f64_flops_per_s: f64,
    pub f32_flops_per_s: f64,
    pub f16_flops_per_s: f64,
    pub i8_ops_per_s: f64,
    /// Dense FP8 peak, FLOP/s; `None`: no FP8 tensor cores.
    pub fp8_flops_per_s: Option<f64>,
    /// Streaming multiprocessors per device; `None`: not known (no wave quantization).
    pub sm_count: Option<u64>,
    /// HBM capacity per device, bytes.
    pub mem_cap_bytes: f64,
    /// HBM bandwidth per device, bytes/s.
    pub mem_bw_bytes_per_s: f64,
    /// NVLinks per device and each one's bidirectional bytes/s; `None`: the cluster's.
    pub nvlinks: Option<(f64, f64)>,
}

/// A wide-area link between the sites of a cluster (datacenters, buildings or homes), each
/// holding the same number of its nodes, consecutive nodes together.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Wan {
    /// Sites, at least 2; they divide the nodes evenly.
    pub sites: u64,
    /// Each site's wide-area bandwidth, one direction, bytes/s: the rate a transfer reaches
    /// (no utilisation factor applies).
    pub bytes_per_s: f64,
    /// One-way latency of a hop between sites, s (in place of `nic_latency_s` on that hop).
    pub latency_s: f64,
}

/// The input pipeline (default model): what delivers samples to the GPUs. Each part it has
/// caps the samples per second; the slowest one is the pipeline's rate
/// (`extended::loader`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Loader {
    /// Samples per second the user measured for the whole job (`data_loader_samples_per_s`).
    pub given_samples_per_s: Option<f64>,
    /// Decoding images or video clips on the nodes' CPU cores and the GPUs' hardware decoders.
    pub decode: Option<Decode>,
    /// Reading the samples' bytes from storage.
    pub storage: Option<Storage>,
}

/// Decoding the frames of each sample (an image is one frame, a clip several).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decode {
    /// Frames a sample holds (1 for an image, 16 for a 16-frame clip).
    pub frames_per_sample: u64,
    /// Frames of the video between two frames of a sample (1: consecutive).
    pub frame_stride: u64,
    /// Frames from one keyframe to the next (x264's default is 250; 1 for images or
    /// all-intra video): a decoder starts at the keyframe before the frame it needs.
    pub keyframe_interval: u64,
    /// Pixels of a stored frame (width x height).
    pub frame_pixels: f64,
    /// CPU cores per node that decode.
    pub cores_per_node: u64,
    /// Pixels one core decodes per second.
    pub core_pixels_per_s: f64,
    /// Pixels each GPU's hardware decoders (NVDEC) decode per second; 0: not used.
    pub gpu_pixels_per_s: f64,
}

/// Reading the samples from storage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Storage {
    /// Bytes read per sample (a clip's or an image's file).
    pub bytes_per_sample: f64,
    /// Bytes per second each node reads from storage.
    pub bytes_per_s_per_node: f64,
}

impl System {
    /// Devices per node.
    pub fn devices_per_node(&self) -> u64 {
        self.num_devices / self.num_nodes
    }

    /// Sites the cluster spans (1 without a wide-area level).
    pub fn sites(&self) -> u64 {
        self.wan.as_ref().map_or(1, |w| w.sites)
    }

    /// Devices per site.
    pub fn devices_per_site(&self) -> u64 {
        self.num_devices / self.sites()
    }

    /// The cluster as if every GPU were of its second type (`None` without one): a
    /// synchronous step runs at its slower type's pace.
    pub fn all_second(&self) -> Option<System> {
        let g = self.second.as_ref()?;
        Some(System {
            name: Arc::clone(&g.name),
            f64_flops_per_s: g.f64_flops_per_s,
            f32_flops_per_s: g.f32_flops_per_s,
            f16_flops_per_s: g.f16_flops_per_s,
            i8_ops_per_s: g.i8_ops_per_s,
            fp8_flops_per_s: g.fp8_flops_per_s,
            sm_count: g.sm_count,
            mem_cap_bytes: g.mem_cap_bytes,
            mem_bw_bytes_per_s: g.mem_bw_bytes_per_s,
            num_nvlinks: g.nvlinks.map_or(self.num_nvlinks, |l| l.0),
            bw_per_nvlink_bytes_per_s: g.nvlinks.map_or(self.bw_per_nvlink_bytes_per_s, |l| l.1),
            second: None,
            ..self.clone()
        })
    }

    /// The cluster as if every GPU were of its first type (without a second type: itself).
    pub fn all_first(&self) -> System {
        System { second: None, ..self.clone() }
    }

    /// The share of HBM bandwidth a GEMM reaches: [`System::gemm_bw_util`], else
    /// [`System::mem_bw_util`].
    pub fn gemm_bw_fraction(&self) -> f64 {
        self.gemm_bw_util.unwrap_or(self.mem_bw_util)
    }

    /// The smallest HBM capacity of the cluster's GPUs, bytes.
    pub fn smallest_mem_cap_bytes(&self) -> f64 {
        self.second.as_ref().map_or(self.mem_cap_bytes, |g| g.mem_cap_bytes.min(self.mem_cap_bytes))
    }
}

/// What the run does.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Task {
    pub name: Arc<str>,
    pub kind: TaskKind,
    pub plan: Plan,
    /// Which model evaluates the scenario.
    pub mode: Mode,
    /// How training runs, in the default model.
    pub setup: Setup,
}

/// Pre-training, fine-tuning (with what is frozen) or inference.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum TaskKind {
    Pretrain,
    Finetune(Freeze),
    Inference,
}

impl TaskKind {
    /// The MAD-Max `type` string.
    pub fn config_name(&self) -> &'static str {
        match self {
            TaskKind::Pretrain => "pretrain",
            TaskKind::Finetune(_) => "finetune",
            TaskKind::Inference => "inference",
        }
    }

    /// True when the run has a backward pass.
    pub fn trains(&self) -> bool {
        !matches!(self, TaskKind::Inference)
    }
}

/// Which components a fine-tuning run freezes. Flags a family does not have are `false`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Freeze {
    pub top_mlp: bool,
    pub bot_mlp: bool,
    pub emb: bool,
    pub transformer: bool,
    /// Transformer layers with index >= this get no weight-gradient communication
    /// (LLM, LLM_MoE and ViT); `None` for the DLRM families.
    pub min_frozen_layer: Option<u64>,
}

/// How each component is parallelized, and the per-device batch sizes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// MLP spec (DLRM families only).
    pub mlp: Option<Spec>,
    pub emb: Spec,
    /// Transformer spec (DLRM_Transformer, LLM, LLM_MoE, ViT).
    pub transformer: Option<Spec>,
    pub local_mlp_batch: Option<u64>,
    pub local_emb_batch: u64,
    pub local_transformer_batch: Option<u64>,
}

/// Most levels a parallel spec can have.
pub const MAX_LEVELS: usize = 8;

/// A hierarchical parallel spec: level 0 first. In a 2-level spec, level 0 is within a node and
/// level 1 across nodes; a 1-level spec spans every device. Held inline (no allocation).
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    levels: [Level; MAX_LEVELS],
    len: u8,
}

impl Spec {
    /// A spec of these levels; `None` when there are more than [`MAX_LEVELS`].
    pub fn new(levels: &[Level]) -> Option<Spec> {
        if levels.len() > MAX_LEVELS {
            return None;
        }
        let mut s = Spec { levels: [Level { strategy: Strategy::Ddp, degree: 1 }; MAX_LEVELS], len: 0 };
        s.levels[..levels.len()].copy_from_slice(levels);
        s.len = levels.len() as u8;
        Some(s)
    }

    /// The levels, level 0 first.
    pub fn levels(&self) -> &[Level] {
        &self.levels[..self.len as usize]
    }
}

impl PartialEq for Spec {
    fn eq(&self, o: &Spec) -> bool {
        self.levels() == o.levels()
    }
}

impl Serialize for Spec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.levels().serialize(s)
    }
}

/// A spec read back from its list of levels (the explorer's workers receive plans this way);
/// more than [`MAX_LEVELS`] levels is an error.
impl<'de> Deserialize<'de> for Spec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Spec, D::Error> {
        let levels = Vec::<Level>::deserialize(d)?;
        Spec::new(&levels)
            .ok_or_else(|| serde::de::Error::custom(format!("{} levels: at most {MAX_LEVELS}", levels.len())))
    }
}

/// One level of a parallel spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Level {
    pub strategy: Strategy,
    pub degree: u64,
}

/// A parallelization strategy (SPEC 2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Strategy {
    /// Data parallel: replicate weights, all-reduce gradients.
    Ddp,
    /// Fully sharded data parallel: all-gather weights before use, reduce-scatter gradients.
    Fsdp,
    /// Tensor parallel: split each layer's GEMMs, all-reduce activations.
    Tp,
    /// Pipeline parallel (MAD-Max: shards weight memory only, Q16).
    Pp,
    /// Model parallel embeddings: shard tables, all-to-all the lookups.
    Mp,
    /// Context parallel (default model): split the sequence, ring-exchange keys and values.
    Cp,
    /// Expert parallel (default model, MoE): spread the experts, all-to-all the tokens.
    Ep,
}

impl Strategy {
    /// The config spelling.
    pub fn config_name(self) -> &'static str {
        match self {
            Strategy::Ddp => "ddp",
            Strategy::Fsdp => "fsdp",
            Strategy::Tp => "tp",
            Strategy::Pp => "pp",
            Strategy::Mp => "mp",
            Strategy::Cp => "cp",
            Strategy::Ep => "ep",
        }
    }

    /// Parses a config spelling.
    pub fn parse(s: &str) -> Option<Strategy> {
        match s {
            "ddp" => Some(Strategy::Ddp),
            "fsdp" => Some(Strategy::Fsdp),
            "tp" => Some(Strategy::Tp),
            "pp" => Some(Strategy::Pp),
            "mp" => Some(Strategy::Mp),
            "cp" => Some(Strategy::Cp),
            "ep" => Some(Strategy::Ep),
            _ => None,
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.config_name())
    }
}

impl Spec {
    /// Number of levels.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True when the spec has no level (never after validation).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True when the first level is FSDP (the reference's `fsdp?` test).
    pub fn first_is(&self, s: Strategy) -> bool {
        self.levels().first().map(|l| l.strategy) == Some(s)
    }

    /// Product of the degrees of levels whose strategy is in `set` (saturating: a product past
    /// `u64::MAX` cannot equal any device count, and validation says so).
    pub fn product_of(&self, set: &[Strategy]) -> u64 {
        self.levels().iter().filter(|l| set.contains(&l.strategy)).fold(1u64, |p, l| p.saturating_mul(l.degree))
    }

    /// The pipeline's degree when the pipeline is the plan's outermost level (and its only
    /// pipeline level, of degree 2 or more): its stages then hold consecutive blocks of the
    /// cluster's GPUs, the first stage the first `1/pp` of them. `None` otherwise.
    pub fn outermost_pipeline(&self) -> Option<u64> {
        let p = self.product_of(&[Strategy::Pp]);
        let last = self.levels().last()?;
        (p > 1 && last.strategy == Strategy::Pp && last.degree == p).then_some(p)
    }

    /// Degree of the first level (1 for an empty spec).
    pub fn first_degree(&self) -> u64 {
        self.levels().first().map_or(1, |l| l.degree)
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, l) in self.levels().iter().enumerate() {
            if i > 0 {
                write!(f, " x ")?;
            }
            write!(f, "{} {}", l.strategy, l.degree)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recompute_modules_read_and_write_the_same_names() {
        let m = RecomputeModules::parse("layernorm,  moe_act core_attn").expect("modules");
        assert_eq!((m.core_attn, m.layernorm, m.mlp, m.moe, m.moe_act), (true, true, false, false, true));
        assert_eq!(m.config_text(), "core_attn, layernorm, moe_act");
        assert_eq!(RecomputeModules::parse(&m.config_text()), Ok(m));
        assert_eq!(RecomputeModules::default().config_text(), "core_attn");
        assert!(RecomputeModules::parse("moe, attn").is_err_and(|e| e.starts_with("\"attn\" is not a module")));
        assert!(RecomputeModules::parse(" , ").is_err_and(|e| e.starts_with("names no module")));
    }

    #[test]
    fn an_exponential_spread_keeps_the_means_and_its_bins_are_its_sixteenths() {
        let bins = exponential_bin_means();
        let mean = bins.iter().sum::<f64>() / SPREAD_BINS as f64;
        assert!((mean - 1.0).abs() < 1e-12, "{mean}");
        assert!(bins.windows(2).all(|w| w[0] < w[1]), "{bins:?}");
        // The first bin, quantiles 0 to 1/16 of Exp(1): its mean by integration.
        let xb = -(15.0_f64 / 16.0).ln();
        assert!((bins[0] - 16.0 * (1.0 - (15.0 / 16.0) * (1.0 + xb))).abs() < 1e-12, "{}", bins[0]);
        // The last: memoryless, 1 beyond its start.
        assert!((bins[15] - (1.0 + 16.0_f64.ln())).abs() < 1e-12);
        // The median of Exp(1) is ln 2: between the 8th and the 9th bins' means.
        assert!(bins[7] < 2.0_f64.ln() && 2.0_f64.ln() < bins[8]);

        let kinds = RequestClass::spread(230, 203);
        assert_eq!(kinds.len(), SPREAD_BINS * SPREAD_BINS);
        assert!((kinds.iter().map(|k| k.share).sum::<f64>() - 1.0).abs() < 1e-12);
        let mean = |f: fn(&RequestClass) -> u64| kinds.iter().map(|k| k.share * f(k) as f64).sum::<f64>();
        // In whole tokens, the means are still the given ones.
        assert!((mean(|k| k.input_tokens) - 230.0).abs() < 1e-9, "{}", mean(|k| k.input_tokens));
        assert!((mean(|k| k.output_tokens) - 203.0).abs() < 1e-9, "{}", mean(|k| k.output_tokens));
        for m in [1, 2, 3, 7, 100, 1_000_000] {
            let lengths = whole_tokens(&exponential_bin_means().map(|b| b * m as f64), m);
            assert_eq!(lengths.iter().sum::<u64>(), 16 * m, "{m}: {lengths:?}");
            assert!(lengths.iter().all(|l| *l >= 1) && lengths.windows(2).all(|w| w[0] <= w[1]), "{m}: {lengths:?}");
        }
        // Every pair of bins once.
        let mut pairs: Vec<(u64, u64)> = kinds.iter().map(|k| (k.input_tokens, k.output_tokens)).collect();
        pairs.sort_unstable();
        pairs.dedup();
        assert_eq!(pairs.len(), SPREAD_BINS * SPREAD_BINS);
        // Any aligned run of 16 in order holds every answer bin and every prompt bin once, its
        // first half the shorter half of each as often as the longer, and each quarter of the
        // 4 x 4 quarters of the bins once (a (0, 4, 2)-net).
        let order = |f: fn(&RequestClass) -> u64| -> Vec<usize> {
            let mut sorted: Vec<u64> = kinds.iter().map(f).collect();
            sorted.sort_unstable();
            sorted.dedup();
            kinds.iter().map(|k| sorted.binary_search(&f(k)).expect("a bin")).collect()
        };
        let (prompt, answer) = (order(|k| k.input_tokens), order(|k| k.output_tokens));
        for run in 0..SPREAD_BINS {
            let at = run * SPREAD_BINS..(run + 1) * SPREAD_BINS;
            for bins in [&prompt[at.clone()], &answer[at.clone()]] {
                let mut seen = bins.to_vec();
                seen.sort_unstable();
                assert_eq!(seen, (0..SPREAD_BINS).collect::<Vec<_>>());
                assert_eq!(bins[..8].iter().filter(|b| **b < 8).count(), 4, "{bins:?}");
            }
            let mut quarters: Vec<(usize, usize)> = at.map(|k| (prompt[k] / 4, answer[k] / 4)).collect();
            quarters.sort_unstable();
            quarters.dedup();
            assert_eq!(quarters.len(), 16, "run {run}");
        }
        // A request has a token at least: a mean of one leaves no room to spread.
        assert!(RequestClass::spread(1, 1).iter().all(|k| (k.input_tokens, k.output_tokens) == (1, 1)));
    }
}
