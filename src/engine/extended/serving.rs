//! LLM serving in the default model: one batch of requests through prefill (the prompt, all
//! tokens at once: compute-bound, with attention's s^2 work) and decode (one token per request
//! per step: bound by reading the weights and the KV cache from HBM), on tensor, pipeline and
//! expert parallelism with data-parallel replicas.
//!
//! Each op takes the longer of its GEMM time and its HBM time (a roofline), plus element-wise
//! traffic. The KV cache holds `2 x kv heads x head dim` elements per layer per token.
//! Sources: Pope et al. 2022 ("Efficiently Scaling Transformer Inference"), kipply 2022
//! ("Transformer Inference Arithmetic"), Kwon et al. 2023 (vLLM: the KV cache bounds the batch).

use super::calibration::{KERNELS_PER_BLOCK, KERNEL_OVERHEAD_S, WORKSPACE_BYTES};
use super::collective::{time_s, Collective};
use super::iteration::{self, name, Cx, Timeline};
use crate::engine::ops::{Block, OpKind, OpName, Phase};
use crate::engine::reference::explain::{Explanation, Term, Unit};
use crate::engine::report::{LayerWork, MemPart, Memory, ModelStats, Report, Serving, Utilization, Work};
use crate::engine::scenario::{Arch, Precision, Scenario, TaskKind};

/// Generated tokens per request when the task does not say.
pub const DEFAULT_OUTPUT_TOKENS: u64 = 128;

/// Most decode ops a serving timeline holds: longer generations put runs of consecutive steps in
/// one op each (their times summed), so that a timeline stays a few thousand ops and an
/// evaluation a few milliseconds, whatever the output length.
pub const MAX_DECODE_OPS: u64 = 1000;

/// Per-scenario quantities of the serving model.
#[derive(Clone, Debug)]
pub struct Serve<'a> {
    pub cx: Cx<'a>,
    pub input: u64,
    pub output: u64,
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

impl<'a> Serve<'a> {
    /// The serving model of an LLM inference scenario; `None` for other families and tasks.
    pub fn new(s: &'a Scenario) -> Option<Serve<'a>> {
        if !serves(s) {
            return None;
        }
        let cx = Cx::new(s)?;
        let setup = &s.task.setup;
        let seq = cx.d.seq as u64;
        let output = output_tokens(setup.output_tokens, seq);
        let input = setup.input_tokens.unwrap_or(seq.saturating_sub(output).max(1));
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
        Some(Serve { rate: peak * sys.flops_util, peak, cx, input, output, batch, weight_bytes, kv_bytes })
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

    /// Weights of one layer on one GPU: (attention and norms, the experts it holds), elements.
    fn layer_weights(&self) -> (f64, f64) {
        let (attn, expert) = self.cx.d.layer_params();
        (attn / self.tp(), expert * self.cx.d.experts / self.cx.lay.ep.size as f64 / self.tp())
    }

    /// Expert weights one decode step reads: only the experts the batch's tokens visit.
    fn experts_read(&self, tokens: f64) -> f64 {
        let d = &self.cx.d;
        let held = d.experts / self.cx.lay.ep.size as f64;
        let visited = (tokens * d.active).min(held);
        let (_, expert) = d.layer_params();
        visited * expert / self.tp()
    }

    fn roofline(&self, flops: f64, bytes: f64) -> f64 {
        (flops / self.rate).max(bytes / self.cx.hbm_bytes_per_s)
    }

    fn comm(&self, tokens: f64) -> f64 {
        let cx = &self.cx;
        let act = tokens * cx.d.hidden * cx.d.elem_bytes;
        let tp = 2.0 * time_s(Collective::AllReduce, act, cx.lay.tp, &cx.links, cx.setup.collective);
        let moe = if cx.d.is_moe() {
            2.0 * time_s(Collective::AllToAll, act * cx.d.active, cx.lay.ep, &cx.links, cx.setup.collective)
        } else {
            0.0
        };
        tp + moe
    }

    /// One layer of the prefill: every prompt token of the batch at once.
    pub fn prefill_layer(&self) -> Step {
        let d = &self.cx.d;
        let t = self.batch * self.input as f64;
        let s_att = if d.causal_skip { self.input as f64 / 2.0 } else { self.input as f64 };
        let f = d.layer_flops();
        let (attn_w, _) = self.layer_weights();
        let kv_write = t * 2.0 * self.kv_heads_local() * self.head_dim() * self.kv_bytes;
        let scores =
            if d.materialized() { d.heads * self.input as f64 * (4.0 * d.elem_bytes + 1.0) / self.tp() } else { 0.0 };
        let hbm = self.cx.hbm_bytes_per_s;
        let attn_s = self.roofline(
            t * (f.attn_linear + 4.0 * s_att * d.hidden * d.score_cost()) / self.tp(),
            attn_w * self.weight_bytes + kv_write,
        ) + t * (d.hidden_bytes() + scores) / hbm
            + KERNELS_PER_BLOCK * KERNEL_OVERHEAD_S;
        let (_, held) = self.layer_weights();
        let ffn_s = self.roofline(t * f.ffn / self.tp(), held * self.weight_bytes)
            + t * (d.hidden_bytes() + d.ffn_act_bytes() / self.tp()) / hbm
            + KERNELS_PER_BLOCK * KERNEL_OVERHEAD_S;
        Step { attn_s, ffn_s, comm_s: self.comm(t) }
    }

    /// One layer of a decode step with `context` tokens already in the cache.
    pub fn decode_layer(&self, context: f64) -> Step {
        let d = &self.cx.d;
        let b = self.batch;
        let f = d.layer_flops();
        let hbm = self.cx.hbm_bytes_per_s;
        let ffn_s = self.roofline(b * f.ffn / self.tp(), self.experts_read(b) * self.weight_bytes)
            + b * (d.hidden_bytes() + d.ffn_act_bytes() / self.tp()) / hbm
            + KERNELS_PER_BLOCK * KERNEL_OVERHEAD_S;
        Step { attn_s: self.decode_attn_s(context), ffn_s, comm_s: self.comm(b) }
    }

    /// A decode step's attention in one layer with `context` tokens in the cache: the only part
    /// of a decode step that grows with the context, s.
    fn decode_attn_s(&self, context: f64) -> f64 {
        let d = &self.cx.d;
        let b = self.batch;
        let f = d.layer_flops();
        let (attn_w, _) = self.layer_weights();
        let kv = b * context * 2.0 * self.kv_heads_local() * self.head_dim() * self.kv_bytes;
        self.roofline(
            b * (f.attn_linear + 4.0 * context * d.hidden * d.score_cost()) / self.tp(),
            attn_w * self.weight_bytes + kv,
        ) + b * d.hidden_bytes() / self.cx.hbm_bytes_per_s
            + KERNELS_PER_BLOCK * KERNEL_OVERHEAD_S
    }

    /// The output layer for one token per request (prefill's last token, or a decode step), s.
    pub fn logits_s(&self) -> f64 {
        let d = &self.cx.d;
        let v = d.vocab / self.tp();
        self.roofline(self.batch * 2.0 * d.hidden * v, d.hidden * v * self.weight_bytes)
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
        let d = &self.cx.d;
        let f = d.layer_flops();
        let s_att = if d.causal_skip { self.input as f64 / 2.0 } else { self.input as f64 };
        self.input as f64 * d.layers as f64 * (f.attn_linear + f.ffn + 4.0 * s_att * d.hidden)
            + 2.0 * d.hidden * d.vocab
    }

    /// Model FLOPs of one request's decode step `i`: one token through every layer, attending to
    /// its whole context, and its logits.
    pub fn decode_flops(&self, i: u64) -> f64 {
        let d = &self.cx.d;
        let f = d.layer_flops();
        let ctx = (self.input + i) as f64;
        d.layers as f64 * (f.attn_linear + f.ffn + 4.0 * ctx * d.hidden) + 2.0 * d.hidden * d.vocab
    }

    /// Time to first token, s: every layer's prefill, the hops between stages, the logits.
    pub fn ttft_s(&self) -> f64 {
        let p = self.prefill_layer();
        self.cx.d.layers as f64 * (p.attn_s + p.ffn_s + p.comm_s)
            + self.hops_s(self.batch * self.input as f64)
            + self.logits_s()
    }

    /// Decode step `i` (1-based, after the prefill's first token): (compute, communication), s.
    pub fn decode_step(&self, i: u64) -> (f64, f64) {
        self.decode_steps(i, i)
    }

    /// Decode steps `first` to `last` together: their (compute, communication) time, s. Only
    /// attention depends on the step (its context grows by one token each time), so one pass
    /// sums it and the rest is counted once per step.
    pub fn decode_steps(&self, first: u64, last: u64) -> (f64, f64) {
        let layers = self.cx.d.layers as f64;
        let n = (last + 1).saturating_sub(first) as f64;
        let one = self.decode_layer((self.input + first) as f64);
        let attn: f64 = (first..=last).map(|i| self.decode_attn_s((self.input + i) as f64)).sum();
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

    /// Memory per GPU: weights, KV cache of the batch at full length, the prefill's working
    /// activations, buffers.
    pub fn memory(&self, batch: f64) -> Memory {
        let cx = &self.cx;
        let d = &cx.d;
        let (dense, expert) = cx.stage_params(cx.lay.pp.size.max(1) - 1);
        let weights = (dense + expert) * self.weight_bytes;
        let kv = batch * (self.input + self.output) as f64 * self.kv_bytes_per_token();
        // The prefill's working set: one layer's activations for every prompt token (scores stay
        // on chip or are freed layer by layer), and fp32 logits for the last tokens.
        let (outside, inside, _) = d.stored_bytes();
        let t = batch * self.input as f64;
        let activations = t * (outside + inside / self.tp()) + batch * d.vocab / self.tp() * 4.0;
        let parts = vec![
            (MemPart::Weights, weights),
            (MemPart::KvCache, kv),
            (MemPart::Activations, activations),
            (MemPart::Buffers, WORKSPACE_BYTES),
        ];
        Memory::of_parts(parts, cx.s.system.mem_cap_bytes)
    }

    /// The largest batch per replica that fits (0 when the weights alone do not).
    pub fn max_batch(&self) -> u64 {
        let one = self.memory(1.0);
        let fixed = self.memory(0.0).total_bytes;
        let per = one.total_bytes - fixed;
        let room = one.capacity_bytes - fixed;
        if per <= 0.0 || room <= 0.0 {
            0
        } else {
            (room / per).floor() as u64
        }
    }

    fn timeline(&self) -> (Vec<crate::engine::ops::Op>, crate::engine::schedule::Schedule) {
        let cx = &self.cx;
        let layers = cx.d.layers;
        let runs = self.output.saturating_sub(1).min(MAX_DECODE_OPS);
        let mut tl = Timeline::new(4 * layers as usize + 2 * runs as usize + 8);
        let f = Phase::Forward;
        let p = self.prefill_layer();
        let per_stage = cx.d.layers.div_ceil(cx.lay.pp.size.max(1));
        let mut last: Option<u32> = None;
        let hop = self.hop_s(self.batch * self.input as f64);
        for l in 0..layers {
            if l > 0 && l % per_stage == 0 {
                last = tl.push(name(Block::Pipeline, l, f, OpKind::PipeTransfer, 0), hop, &[last]).or(last);
            }
            let a = tl.push(name(Block::Attn, l, f, OpKind::Compute, 0), p.attn_s, &[last]);
            let ac = tl.push(name(Block::Attn, l, f, OpKind::ActAllReduce, 0), p.comm_s / 2.0, &[a]);
            let c = tl.push(name(Block::Fc, l, f, OpKind::Compute, 0), p.ffn_s, &[a, ac]);
            let fc = tl.push(name(Block::Fc, l, f, OpKind::ActAllReduce, 0), p.comm_s / 2.0, &[c]);
            last = fc.or(c);
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
}

/// Evaluates an LLM serving scenario.
pub fn evaluate(sv: &Serve) -> Report {
    let cx = &sv.cx;
    let (ops, schedule) = sv.timeline();
    let memory = sv.memory(sv.batch);
    let mut limits = Vec::new();
    limits.extend(memory.does_not_fit());
    let replicas = cx.lay.dense_dp.size;
    let n = cx.s.system.num_devices as f64;
    let ttft = sv.ttft_s();
    let e2e = schedule.end_s;
    let steps = sv.output.saturating_sub(1);
    let tpot = if steps > 0 { (e2e - ttft) / steps as f64 } else { 0.0 };
    let requests = sv.batch * replicas as f64;
    let tokens_per_s = requests * sv.output as f64 / e2e;
    let d = &cx.d;
    let model_flops = requests * (sv.prefill_flops() + (1..=steps).map(|i| sv.decode_flops(i)).sum::<f64>());
    let (input, output) = d.edge_params();
    let model = ModelStats {
        params: d.params(),
        dense_params: d.params() - input - output,
        emb_params: input + output,
        flops_per_sample: model_flops / requests.max(1.0),
        lookup_bytes_per_sample: 0.0,
    };
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
    let mut r =
        iteration::as_default_model(Report::assemble(ops, schedule, requests as u64, memory, work, model, system));
    let denom = e2e * n * sv.peak;
    r.utilization = Some(Utilization {
        model_flops,
        hardware_flops: model_flops,
        peak_flops_per_s: sv.peak,
        mfu: model_flops / denom,
        hfu: model_flops / denom,
        model_flops_per_s_per_gpu: model_flops / (e2e * n),
        formula: "MFU = FLOPs of the prefill and every decode step / (end-to-end time x GPUs x peak FLOP/s per GPU)",
    });
    r.serving = Some(Serving {
        input_tokens: sv.input,
        output_tokens: sv.output,
        batch: cx.local_batch,
        replicas,
        ttft_s: ttft,
        tpot_s: tpot,
        e2e_s: e2e,
        output_tokens_per_s: tokens_per_s,
        output_tokens_per_s_per_gpu: tokens_per_s / n,
        requests_per_s: requests / e2e,
        kv_bytes_per_token: sv.kv_bytes_per_token(),
        max_batch: sv.max_batch(),
        weight_bytes: sv.weight_bytes,
        kv_bytes: sv.kv_bytes,
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

/// Explains an op of a serving timeline.
pub fn explain(sv: &Serve, op: &OpName) -> Option<Explanation> {
    let cx = &sv.cx;
    let term =
        |symbol: &'static str, meaning: &'static str, value: f64, unit: Unit| Term { symbol, meaning, value, unit };
    let tp = term("tp", "tensor-parallel degree", sv.tp(), Unit::Count);
    let rate = term("F", "effective FLOP rate per GPU at the weights' format", sv.rate, Unit::FlopsPerS);
    let hbm = term("B_mem", "effective HBM bandwidth per GPU", cx.hbm_bytes_per_s, Unit::BytesPerS);
    let b = term("B", "requests in the batch (per replica)", sv.batch, Unit::Count);
    let p = sv.prefill_layer();
    let (what, formula, terms, seconds, note): (String, &'static str, Vec<Term>, f64, Option<&'static str>) = match (
        op.block, op.kind,
    ) {
        (Block::Attn | Block::Fc, OpKind::Compute) => (
            format!(
                "Prefill of layer {}: {} for every prompt token",
                op.layer,
                if op.block == Block::Attn { "attention" } else { "feed-forward" }
            ),
            "max(GEMM FLOPs / F, weights (+ KV written) / B_mem) + element-wise / B_mem",
            vec![b, term("s_in", "prompt tokens per request", sv.input as f64, Unit::Count), tp, rate, hbm],
            if op.block == Block::Attn { p.attn_s } else { p.ffn_s },
            Some("Prefill is compute-bound: many tokens share each weight read."),
        ),
        (Block::Attn | Block::Fc, OpKind::ActAllReduce) => (
            format!(
                "Tensor-parallel all-reduce after layer {}'s {}",
                op.layer,
                if op.block == Block::Attn { "attention" } else { "feed-forward" }
            ),
            "2 (tp-1)/tp x tokens x h x e / B_nvl + latency",
            vec![tp],
            p.comm_s / 2.0,
            None,
        ),
        (Block::Pipeline, OpKind::PipeTransfer) => (
            "Prompt activations handed to the next pipeline stage".into(),
            "tokens x h x e / tp / bandwidth + latency",
            vec![tp],
            sv.hop_s(sv.batch * sv.input as f64),
            None,
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
                    "layers x (max(FLOPs / F, (weights + KV cache) / B_mem) + element-wise) + logits"
                } else {
                    "sum over the steps of layers x (max(FLOPs / F, (weights + KV cache) / B_mem) + element-wise) + logits (the KV cache grows a token per step)"
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
            (
                format!("{}: tensor-parallel all-reduces (two per layer) and pipeline hops", steps_words(from, to)),
                if from == to {
                    "layers x 2 x all-reduce(B x h x e) + (p-1) hops: latency-bound at small batches"
                } else {
                    "steps x (layers x 2 x all-reduce(B x h x e) + (p-1) hops): latency-bound at small batches"
                },
                vec![b, tp],
                sv.decode_steps(from, to).1,
                None,
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
    fn kv_cache_per_token_is_layers_x_2_x_kv_heads_x_head_dim_x_bytes() {
        let s = llama70(1, 1, json!({}));
        let sv = Serve::new(&s).expect("serving");
        assert_eq!(sv.kv_bytes_per_token(), 80.0 * 2.0 * 8.0 * 128.0 * 2.0); // 320 KiB
                                                                             // Tensor parallelism splits the 8 KV heads; beyond 8 GPUs they would be replicated.
        let s = llama70(8, 1, json!({}));
        assert_eq!(Serve::new(&s).expect("serving").kv_bytes_per_token(), 80.0 * 2.0 * 1.0 * 128.0 * 2.0);
        // An fp8 cache halves it.
        let s = llama70(1, 1, json!({"kv_format": "fp8"}));
        assert_eq!(Serve::new(&s).expect("serving").kv_bytes_per_token(), 80.0 * 2.0 * 8.0 * 128.0);
    }

    #[test]
    fn decode_at_batch_1_is_bound_by_reading_weights_and_kv_cache() {
        let s = llama70(2, 1, json!({}));
        let sv = Serve::new(&s).expect("serving");
        let ctx = 1024.0 + 1.0;
        let l = sv.decode_layer(ctx);
        // Attention block: its weights on this GPU (QKV + output projection + norms, split over
        // tp 2) and the KV cache it reads, at 0.836 x 2039 GB/s.
        let h = 8192.0;
        let attn_w = (h * (h + 2.0 * 8.0 * 128.0) + h * h + 4.0 * h) / 2.0 * 2.0;
        let kv = ctx * 2.0 * 4.0 * 128.0 * 2.0;
        let hbm = 2039e9 * 0.836;
        let ew = 14.0 * h * 2.0 / 2.0 / hbm + KERNELS_PER_BLOCK * KERNEL_OVERHEAD_S;
        assert!((l.attn_s - ((attn_w + kv) / hbm + ew)).abs() < 1e-12, "{}", l.attn_s);
        // The FLOPs would take far less: memory-bound.
        let flops = (2.0 * h * (h + 2.0 * 8.0 * 128.0) + 2.0 * h * h + 4.0 * ctx * h) / 2.0;
        assert!(flops / (312e12 * 0.8) < 0.01 * (attn_w + kv) / hbm);
        // A batch of 64 reads the same weights once: far less than 64x the time.
        let big = Serve::new(&llama70(2, 64, json!({}))).expect("serving").decode_layer(ctx);
        assert!(big.ffn_s < 4.0 * l.ffn_s, "{} vs {}", big.ffn_s, l.ffn_s);
    }

    #[test]
    fn each_decoded_token_costs_two_tensor_parallel_all_reduces_per_layer() {
        let s = llama70(4, 8, json!({}));
        let sv = Serve::new(&s).expect("serving");
        let one = time_s(
            Collective::AllReduce,
            8.0 * 8192.0 * 2.0,
            Group { size: 4, per_node: 4 },
            &sv.cx.links,
            sv.cx.setup.collective,
        );
        let (_, comm) = sv.decode_step(1);
        assert!((comm - 80.0 * 2.0 * one).abs() < 1e-15, "{comm} vs {}", 160.0 * one);
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
        assert!(sv2.output_tokens_per_s > 1.5 * sv.output_tokens_per_s && sv2.tpot_s > sv.tpot_s);
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
        assert!(limited.ranked.iter().any(|o| !o.meets_limit));
        assert_eq!(limited.ranked.len(), free.ranked.len());
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
