//! The report: everything an evaluation found, as plain data (no formatting, no HashMap).
//!
//! Units: seconds (`_s`), bytes (`_bytes`), FLOPs (`_flops`, counts), rates per second. Faces
//! (CLI, web page) format these; the engine never does.

use super::ops::{Category, Op, Stream};
pub use super::scenario::Mode;
use super::scenario::{Arch, Batching, PrefillSteps, Scenario, TaskKind};
use super::schedule::{Schedule, Totals};
use serde::Serialize;

/// The result of [`crate::engine::evaluate`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// Samples per iteration over the whole cluster.
    pub global_batch: u64,
    /// Busy time per category (GEMM, EMB, each collective), s.
    #[serde(serialize_with = "totals_as_map")]
    pub totals: Totals,
    /// Which model produced this report.
    pub mode: Mode,
    /// GEMM + EMB (+ optimizer step) time, s.
    pub compute_s: f64,
    /// Sum of all collective times, s.
    pub comm_s: f64,
    /// Iteration time minus compute time minus idle time: every gap of the computation stream
    /// that waits on communication, s. (MAD-Max's definition, SPEC Q21; reference mode has no
    /// idle time.)
    pub exposed_comm_s: f64,
    /// Computation-stream time with nothing to do that is not communication: the pipeline
    /// bubble (fill and drain) and waiting for input, s (default model).
    pub idle_s: f64,
    /// Communication hidden behind computation: `comm_s - exposed_comm_s`, s. It can be a tiny
    /// negative number from rounding when all communication is exposed (SPEC Q28).
    pub overlapped_comm_s: f64,
    /// Time of one iteration (forward, and backward when training), s.
    pub iteration_s: f64,
    /// Samples per second: `(1 / iteration_s) * global_batch` (SPEC Q25).
    pub throughput_samples_per_s: f64,
    pub memory: Memory,
    pub work: Work,
    pub model: ModelStats,
    pub system: SystemStats,
    /// Model FLOPs utilisation and friends (default model; `None` in reference mode).
    pub utilization: Option<Utilization>,
    /// What limits or invalidates the result (does not fit, input-bound); empty when nothing.
    pub limits: Vec<Limit>,
    /// LLM serving figures (default model, LLM inference); `None` otherwise.
    pub serving: Option<Serving>,
    /// Every op of every stream, in emission order, with start times.
    pub timeline: Vec<Op>,
    /// The collectives whose duration includes a wait for the host thread that launches them
    /// (Horovod's cycle, `task.collective_cycle_ms`): (index in [`Report::timeline`], the wait,
    /// s), by index. A faster link would not shorten that part.
    pub launch_waits: Vec<(u32, f64)>,
}

/// How much of the GPUs' peak the iteration uses (default model).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Utilization {
    /// Model FLOPs of one iteration (forward + backward, no recomputation), whole cluster.
    pub model_flops: f64,
    /// FLOPs the hardware executes in one iteration, recomputation included, whole cluster.
    pub hardware_flops: f64,
    /// Datasheet peak FLOP/s of one GPU at the model's precision.
    pub peak_flops_per_s: f64,
    /// Model FLOPs utilisation: `model_flops / (iteration_s x GPUs x peak)`, 0..1.
    pub mfu: f64,
    /// Hardware FLOPs utilisation: the same with `hardware_flops`, 0..1.
    pub hfu: f64,
    /// Achieved model FLOP/s per GPU.
    pub model_flops_per_s_per_gpu: f64,
    /// The formula, in words.
    pub formula: &'static str,
}

/// LLM serving: one batch of requests through prefill and decode (static batching), or the
/// steady state of in-flight batching.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Serving {
    /// How the engine batches requests: the figures are a static batch's or a steady state's.
    pub batching: Batching,
    /// Prompt tokens per request.
    pub input_tokens: u64,
    /// Generated tokens per request.
    pub output_tokens: u64,
    /// The task's batch per model replica: the static batch, or the most requests the
    /// in-flight engine admits.
    pub batch: u64,
    /// Requests in flight per replica: the static batch, or (in flight) the batch capped by
    /// what the KV cache holds.
    pub in_flight: f64,
    /// Micro-batches a static batch's prompts go through a pipeline in (1 without a pipeline,
    /// and in flight, where prompts are chunked into the engine's steps instead).
    pub prefill_micro_batches: u64,
    /// Model replicas (data-parallel ranks).
    pub replicas: u64,
    /// Time to first token: the prefill of the prompts (in flight: queueing for the prefill and
    /// its chunks), s.
    pub ttft_s: f64,
    /// Mean time per output token after the first (in flight: one engine step), s.
    pub tpot_s: f64,
    /// Prefill plus every decode step (in flight: from arrival to the last token), s.
    pub e2e_s: f64,
    /// Output tokens per second over the whole cluster.
    pub output_tokens_per_s: f64,
    pub output_tokens_per_s_per_gpu: f64,
    pub requests_per_s: f64,
    /// KV-cache bytes per token of context on one GPU: layers x 2 x kv heads x head dim x bytes,
    /// divided by tensor and pipeline parallelism.
    pub kv_bytes_per_token: f64,
    /// The largest batch per replica whose KV cache fits next to the weights (in flight: the
    /// most requests whose KV pages fit, at their average length).
    pub max_batch: u64,
    /// Bytes per weight and per KV-cache element used.
    pub weight_bytes: f64,
    pub kv_bytes: f64,
    /// In flight: tokens one engine step processes at most, and tokens per KV page.
    pub step_tokens: u64,
    pub kv_page_tokens: u64,
    /// In flight: where prompts are prefilled (in the decode steps, or in steps of their own),
    /// and decode steps per scheduling round.
    pub prefill_steps: PrefillSteps,
    pub scheduler_steps: u64,
    /// In flight: the arrival rate the figures are for (requests/s over the cluster); `None`:
    /// full load, the batch in flight.
    pub request_rate: Option<f64>,
    /// In flight: the requests of a burst sent at once, and the time from its arrival to its
    /// last token, s; the other figures are then the burst's (its output tokens over that
    /// time; means and percentiles over its requests). `None`: the steady state.
    pub burst_requests: Option<u64>,
    pub makespan_s: Option<f64>,
    /// A burst: tokens prefilled again after preemptions (the KV cache ran out of pages as the
    /// requests admitted for their prompts grew), over the cluster.
    pub recomputed_tokens: f64,
    /// In flight: the latencies' percentiles (`None` for a static batch, or when the engine
    /// cannot keep up with the rate).
    pub percentiles: Option<Percentiles>,
    /// In flight: the kinds of request served (empty: all of `input_tokens` and
    /// `output_tokens`, which are otherwise the mix's means, rounded).
    pub request_mix: Vec<crate::engine::scenario::RequestClass>,
    /// In flight: how the requests' lengths vary around `input_tokens` and `output_tokens`.
    pub length_spread: crate::engine::scenario::LengthSpread,
}

impl Serving {
    /// Whether `input_tokens` and `output_tokens` are means over requests of several lengths
    /// (a request mix, or lengths spread around them) rather than every request's.
    pub fn lengths_vary(&self) -> bool {
        !self.request_mix.is_empty() || self.length_spread != crate::engine::scenario::LengthSpread::Fixed
    }
}

/// The median, 90th and 99th percentiles of a serving engine's latencies, s.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Percentiles {
    /// Time to first token.
    pub ttft_s: [f64; 3],
    /// Time between two tokens of a request (a burst: each request's mean time per output
    /// token after the first).
    pub tpot_s: [f64; 3],
    /// From arrival to the last token.
    pub e2e_s: [f64; 3],
}

/// Which part of the input pipeline sets its rate (`extended::loader`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum LoaderBound {
    /// The rate the user gave.
    Given,
    /// Decoding the samples' frames.
    Decoding,
    /// Reading them from storage.
    Storage,
}

/// Something that limits or invalidates a result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Limit {
    /// The plan needs more memory per GPU than the GPU has.
    DoesNotFit {
        need_bytes: f64,
        capacity_bytes: f64,
        /// The largest part of the memory, and its size.
        largest: MemPart,
        largest_bytes: f64,
    },
    /// The input pipeline delivers fewer samples per second than the GPUs could process; `by`
    /// says which of its parts sets its rate.
    InputBound { loader_samples_per_s: f64, compute_samples_per_s: f64, by: LoaderBound },
    /// Every transformer block gives the GPU less work than the host needs to issue it, so the
    /// GPU waits for the host: `gpu_s` of GPU work per layer's forward pass (both blocks, with
    /// the collectives they wait for) against `host_s` to issue it; `tp` is the blocks'
    /// tensor-parallel degree (published runs put 8-way splits furthest from the model).
    HostBound { gpu_s: f64, host_s: f64, tp: u64 },
    /// In-flight serving at a request rate the engine cannot keep up with: requests arrive
    /// at `asked_per_s` and at most `most_per_s` complete (the cluster's); the queue grows
    /// without bound, and the figures are those at full load.
    Overloaded { asked_per_s: f64, most_per_s: f64 },
    /// A cluster of two GPU types runs at its slower type's pace: the second type's nodes
    /// (`second_gpu`) when `second_paces`, else the first type's, set every step's length; the
    /// other type's alone would take `other_iteration_s` and wait the rest of the time.
    PacedBy { second_paces: bool, second_gpu: std::sync::Arc<str>, other_iteration_s: f64 },
}

/// What a model hands to [`Report::assemble`]: its scheduled ops and the figures it derived.
pub struct Parts {
    /// The op graph, scheduled.
    pub ops: Vec<Op>,
    pub schedule: Schedule,
    pub global_batch: u64,
    pub memory: Memory,
    pub work: Work,
    pub model: ModelStats,
    pub system: SystemStats,
}

impl Report {
    /// Assembles a report from a scheduled op list and the figures a model derived, in `mode`.
    /// Both modes take MAD-Max's definitions (SPEC Q21, Q25); reference mode keeps its
    /// rounding too (overlapped communication a hair below zero when all of it is exposed,
    /// Q28), the default model reports that as zero.
    pub fn assemble(p: Parts, mode: Mode) -> Report {
        let Parts { ops, schedule, global_batch, memory, work, model, system } = p;
        let t = schedule.totals;
        // Reference order first (bit-exact with MAD-Max); the default model's categories add
        // zeros in reference mode.
        let comm_s = (((t.all2all_s + t.allreduce_s) + t.allgather_s) + t.reducescatter_s) + t.p2p_s;
        let compute_s = (t.gemm_s + t.emb_s) + t.optimizer_s;
        let iteration_s = schedule.end_s;
        let exposed_comm_s = (iteration_s - compute_s) - t.idle_s;
        let overlapped_comm_s = comm_s - exposed_comm_s;
        let (exposed_comm_s, overlapped_comm_s) = match mode {
            Mode::Reference => (exposed_comm_s, overlapped_comm_s),
            Mode::Default => (exposed_comm_s.max(0.0), overlapped_comm_s.max(0.0)),
        };
        Report {
            global_batch,
            totals: t,
            mode,
            compute_s,
            comm_s,
            exposed_comm_s,
            idle_s: t.idle_s,
            overlapped_comm_s,
            iteration_s,
            throughput_samples_per_s: (1.0 / iteration_s) * global_batch as f64,
            memory,
            work,
            model,
            system,
            utilization: None,
            limits: Vec::new(),
            serving: None,
            timeline: ops,
            launch_waits: Vec::new(),
        }
    }

    /// Of op `i`'s duration, the part it waited for the host thread that launches collectives
    /// ([`Report::launch_waits`]), s; 0 for every other op.
    pub fn launch_wait_s(&self, i: usize) -> f64 {
        self.launch_waits.binary_search_by_key(&i, |w| w.0 as usize).map_or(0.0, |k| self.launch_waits[k].1)
    }

    /// The ops of one stream, in order.
    pub fn stream(&self, s: Stream) -> impl Iterator<Item = &Op> {
        self.timeline.iter().filter(move |op| op.name.stream() == s)
    }

    /// A fresh scheduler of the kind that placed the timeline: MAD-Max's, with the phase
    /// barrier (SPEC Q21), in paper mode; the default model's, without it.
    fn scheduler(&self) -> super::schedule::Scheduler {
        match self.mode {
            Mode::Reference => super::reference::graph::scheduler(),
            Mode::Default => super::schedule::Scheduler::without_barrier(),
        }
    }

    /// The timeline's critical path and every op's slack (computed on demand: O(ops)).
    pub fn critical_path(&self) -> super::critical::CriticalPath {
        super::critical::critical_path(&self.timeline, self.scheduler().has_phase_barrier())
    }

    /// When the timeline would end if each op took `duration_s(index, op)`, s: the same ops
    /// through the same scheduler ([`super::critical::end_with`]).
    pub fn end_with(&self, duration_s: impl Fn(usize, &Op) -> f64) -> f64 {
        super::critical::end_with(&self.timeline, self.scheduler(), duration_s)
    }

    /// Exposed share of all communication time, 0..1 (0 when there is no communication).
    pub fn exposed_share(&self) -> f64 {
        let sum = self.exposed_comm_s + self.overlapped_comm_s;
        if sum > 0.0 {
            self.exposed_comm_s / sum
        } else {
            0.0
        }
    }

    /// Model FLOPs utilisation of scenario `s` (this report's), 0..1: the model's FLOPs per
    /// iteration over what the GPUs could do at peak in the iteration time. The default model
    /// counts them itself (attention's s^2 terms and fine-tuning's skipped gradients included);
    /// for MAD-Max paper mode they are the forward FLOPs per sample x global batch, x3 when
    /// training (the backward pass costs twice the forward), as MAD-Max counts FLOPs (without
    /// attention's s^2 terms).
    pub fn mfu(&self, s: &Scenario) -> f64 {
        if let Some(u) = &self.utilization {
            return u.mfu;
        }
        let passes = if matches!(s.task.kind, TaskKind::Inference) { 1.0 } else { 3.0 };
        let model_flops = self.model.flops_per_sample * self.global_batch as f64 * passes;
        let capacity = self.iteration_s * peak_flops_per_s(s) * s.system.num_devices as f64;
        if capacity > 0.0 {
            model_flops / capacity
        } else {
            0.0
        }
    }

    /// Throughput in tokens/s of scenario `s` (this report's): samples/s x
    /// [`tokens_per_sample`]; `None` for families without tokens.
    pub fn tokens_per_s(&self, s: &Scenario) -> Option<f64> {
        tokens_per_sample(s).map(|t| self.throughput_samples_per_s * t)
    }
}

/// Tokens per sample of a language model: its sequence length, or, where the default model
/// serves it, the tokens each request generates (with a request mix, their mean), so that
/// tokens/s counts output tokens; an encoder-decoder's input tokens (T5 and mT5 count their
/// batches in them: 65,536 and 1,048,576 tokens); `None` for other families.
pub fn tokens_per_sample(s: &Scenario) -> Option<f64> {
    match &s.model.arch {
        Arch::EncDec(x) => Some(x.input_len as f64),
        Arch::Llm(l) | Arch::LlmMoe(l, _) => {
            let seq = l.transformer.seq_len;
            let setup = &s.task.setup;
            Some(if super::uses_default_model(s) && super::extended::serving::serves(s) {
                if setup.request_mix.is_empty() {
                    super::extended::serving::output_tokens(setup.output_tokens, seq) as f64
                } else {
                    setup.request_mix.iter().map(|c| c.share * c.output_tokens as f64).sum()
                }
            } else {
                seq as f64
            })
        }
        _ => None,
    }
}

/// Peak FLOP/s per GPU for the model's precision (the dense parameters' bytes), before any
/// utilisation factor.
pub fn peak_flops_per_s(s: &Scenario) -> f64 {
    let sys = &s.system;
    match s.model.bytes_per_dense_param.f64() as i64 {
        8 => sys.f64_flops_per_s,
        4 => sys.f32_flops_per_s,
        1 => sys.i8_ops_per_s,
        _ => sys.f16_flops_per_s,
    }
}

fn totals_as_map<S: serde::Serializer>(t: &Totals, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(Category::ALL.len()))?;
    for c in Category::ALL {
        m.serialize_entry(c.label(), &t.get(c))?;
    }
    m.end()
}

/// A part of a GPU's memory: the weights of a model component (reference mode counts only
/// these, SPEC Q23), or one of what training also keeps (default model).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum MemPart {
    /// Weights of the MLPs (reference mode).
    Mlp,
    /// Weights of the embedding tables (reference mode).
    Emb,
    /// Weights of the transformer layers (reference mode).
    Transformer,
    /// Model weights in the training precision (default model).
    Weights,
    /// Weight gradients (default model).
    Gradients,
    /// Optimizer state: fp32 master weights and Adam's two moments (default model).
    OptimizerStates,
    /// Activations kept for the backward pass, all micro-batches in flight (default model).
    Activations,
    /// Communication buffers, gathered weights and library workspaces (default model).
    Buffers,
    /// Keys and values of every token in flight (LLM serving; default model).
    KvCache,
}

impl MemPart {
    pub fn label(self) -> &'static str {
        match self {
            MemPart::Mlp => "MLP",
            MemPart::Emb => "EMB",
            MemPart::Transformer => "Transformer",
            MemPart::Weights => "Weights",
            MemPart::Gradients => "Gradients",
            MemPart::OptimizerStates => "Optimizer states",
            MemPart::Activations => "Activations",
            MemPart::Buffers => "Buffers",
            MemPart::KvCache => "KV cache",
        }
    }
}

/// Memory per device.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Memory {
    /// Bytes per part on one device (reference mode: weights only, SPEC Q23).
    pub parts: Vec<(MemPart, f64)>,
    pub total_bytes: f64,
    /// HBM capacity of one device, bytes.
    pub capacity_bytes: f64,
}

impl Memory {
    /// Memory of these parts against a capacity, bytes; the total is their sum in order.
    pub fn of_parts(parts: Vec<(MemPart, f64)>, capacity_bytes: f64) -> Memory {
        Memory { total_bytes: parts.iter().map(|p| p.1).sum(), parts, capacity_bytes }
    }

    /// The limit to report when the parts exceed the capacity, naming the largest part.
    pub fn does_not_fit(&self) -> Option<Limit> {
        if self.fits() {
            return None;
        }
        let (largest, largest_bytes) =
            self.parts.iter().copied().fold((MemPart::Weights, 0.0), |a, b| if b.1 > a.1 { b } else { a });
        Some(Limit::DoesNotFit {
            need_bytes: self.total_bytes,
            capacity_bytes: self.capacity_bytes,
            largest,
            largest_bytes,
        })
    }

    /// True when everything fits in the GPU's memory.
    pub fn fits(&self) -> bool {
        self.total_bytes <= self.capacity_bytes
    }
}

/// FLOPs and embedding traffic of one iteration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Work {
    /// Per layer kind: FLOPs of one layer for one device's batch and for the global batch.
    pub layers: Vec<LayerWork>,
    /// FLOPs of the forward pass for one device's batch (after tensor-parallel division).
    pub local_total_flops: f64,
    /// FLOPs of the forward pass for the global batch.
    pub global_total_flops: f64,
    pub lookup_bytes_per_local_batch: f64,
    pub lookup_bytes_per_global_batch: f64,
    /// Embedding bytes one device reads per iteration.
    pub lookup_bytes_per_device: f64,
}

/// FLOPs of one layer kind.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LayerWork {
    pub label: &'static str,
    pub local_flops: f64,
    pub global_flops: f64,
}

/// Model-level figures, per sample.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelStats {
    pub params: f64,
    pub dense_params: f64,
    pub emb_params: f64,
    /// Forward FLOPs per sample.
    pub flops_per_sample: f64,
    /// Embedding bytes read per sample.
    pub lookup_bytes_per_sample: f64,
}

/// Effective per-device rates the model used.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SystemStats {
    pub devices: u64,
    pub nodes: u64,
    pub devices_per_node: u64,
    /// The FLOP rate the model's precision runs at (after utilisation), FLOP/s.
    pub flops_per_s: f64,
    pub mem_bw_bytes_per_s: f64,
    /// Unidirectional bandwidth per device within a node, bytes/s.
    pub intra_node_bytes_per_s: f64,
    /// Unidirectional bandwidth per device across nodes, bytes/s.
    pub inter_node_bytes_per_s: f64,
    /// Effective collective bandwidths of a 1-level spec (the widest level), bytes/s.
    pub all2all_bytes_per_s: f64,
    pub allreduce_bytes_per_s: f64,
    pub allgather_bytes_per_s: f64,
    pub reducescatter_bytes_per_s: f64,
}
