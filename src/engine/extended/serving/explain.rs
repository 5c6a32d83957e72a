//! What each op of a serving timeline is, in words, with its formula and terms: the static
//! batch's prefill, pipeline, logits and decode ops, and an in-flight engine step's.

use super::{Pass, ServingCx};
use crate::engine::extended::calibration::{sampler_cost, KERNELS_PER_BLOCK, KERNEL_OVERHEAD_S};
use crate::engine::extended::explain::gemm_bandwidth_term;
use crate::engine::ops::{Block, OpKind, OpName};
use crate::engine::reference::explain::{Explanation, Term, Unit};
use crate::engine::scenario::{Batching, PrefillSteps, Sampling};

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

/// The fixed time of each kernel of pass `p` ([`ServingCx::kernel_s`]) and the kernels of a
/// block, as terms of a layer's formula (`n_k x t_k`).
fn kernel_terms(sv: &ServingCx, p: Pass) -> [Term; 2] {
    let meaning = if sv.replays_graph(p) {
        "GPU time of each kernel beyond its bytes and FLOPs: a small kernel's run, replayed from a CUDA graph"
    } else {
        "GPU time of each kernel beyond its bytes and FLOPs: a launch from the host (no CUDA graph for this step)"
    };
    [
        Term {
            symbol: "n_k",
            meaning: "kernels of a block (attention or feed-forward): a norm, the GEMMs, attention or the activation, adds, the collective",
            value: KERNELS_PER_BLOCK,
            unit: Unit::Count,
        },
        Term { symbol: "t_k", meaning, value: sv.kernel_s(p), unit: Unit::Seconds },
    ]
}

/// The output layer's formula: its GEMM, the logits' all-gather over tensor parallelism and
/// the sampler ([`ServingCx::logits_for`]).
const HEAD_FORMULA: &str =
    "max(rows x 2 h V / tp / F, h V / tp x bytes / B_gemm) + t_gather + rows x V x b_s / B_mem + k_s x t_launch";

/// The terms of [`HEAD_FORMULA`] for `rows` tokens, with the tensor-parallel degree, the GEMM
/// rate and the HBM rates (element-wise, GEMMs).
fn head_terms(sv: &ServingCx, rows: Term, [tp, rate, hbm, gemm_hbm]: [Term; 4]) -> Vec<Term> {
    let cost = sampler_cost(sv.cx.setup.sampling);
    vec![
        rows.clone(),
        Term { symbol: "h", meaning: "hidden size", value: sv.cx.d.hidden, unit: Unit::Count },
        Term { symbol: "V", meaning: "vocabulary (logits per token)", value: sv.cx.d.vocab, unit: Unit::Count },
        tp,
        rate,
        Term { symbol: "bytes", meaning: "bytes per weight (the weights' format)", value: sv.weight_bytes, unit: Unit::BytesPerElement },
        gemm_hbm,
        Term {
            symbol: "t_gather",
            meaning: "all-gather of the logits, so that every GPU of the tensor-parallel group has the whole vocabulary's (0 on one GPU)",
            value: sv.logits_gather_s(rows.value),
            unit: Unit::Seconds,
        },
        Term { symbol: "b_s", meaning: "bytes the sampler reads and writes per logit", value: cost.bytes_per_logit, unit: Unit::Bytes },
        hbm,
        Term { symbol: "k_s", meaning: "kernels the sampler launches", value: cost.kernels, unit: Unit::Count },
        Term { symbol: "t_launch", meaning: "GPU time of each kernel launched from the host (the sampler runs outside the CUDA graph)", value: KERNEL_OVERHEAD_S, unit: Unit::Seconds },
    ]
}

/// What the sampler does, by the task's way of sampling.
fn sampling_note(sv: &ServingCx) -> &'static str {
    match sv.cx.setup.sampling {
        Sampling::Greedy => "Greedy sampling: the logits cast to FP32 and their argmax, a pass over every logit of the step.",
        Sampling::Random => "Random sampling at a temperature: a softmax over the vocabulary and a draw from it, several passes over every logit of the step.",
        Sampling::TopP => "Top-p sampling by sorting: every request's logits sorted over the whole vocabulary before the nucleus is cut and drawn from, some 256 bytes moved per logit; engines with sorting-free kernels (FlashInfer's) spend a quarter to a third of that.",
    }
}

/// Explains the GPU's wait for the host between engine steps ([`ServingCx::host_s`]), for a
/// step of `requests` requests.
fn explain_host(sv: &ServingCx, requests: f64) -> Explanation {
    let setup = &sv.cx.setup;
    Explanation {
        what: "The GPU waits for the host: scheduling the step, preparing its inputs, sampling and processing its outputs".into(),
        formula: "h_step + h_req x requests".into(),
        terms: vec![
            Term { symbol: "h_step", meaning: "host time per engine step", value: setup.host_step_s, unit: Unit::Seconds },
            Term { symbol: "h_req", meaning: "host time per request in the step", value: setup.host_request_s, unit: Unit::Seconds },
            Term { symbol: "requests", meaning: "requests in the step (per replica)", value: requests, unit: Unit::Count },
        ],
        seconds: sv.host_s(requests),
        note: Some("Engines that run their scheduler and output processing in Python between GPU steps (vLLM before 0.6, with Ray workers) leave the GPU idle meanwhile; those that overlap them with the GPU's work (vLLM's V1 engine, SGLang's overlap scheduler, TensorRT-LLM) do not."),
    }
}

/// Explains an op of an in-flight engine step ([`ServingCx::steady`]): the step that carries a
/// prompt chunk.
fn explain_step(sv: &ServingCx, op: &OpName, [tp, rate, hbm, gemm_hbm]: [Term; 4]) -> Option<Explanation> {
    let step = sv.steady_at_load().0.drawn;
    if (op.block, op.kind) == (Block::Input, OpKind::Idle) {
        return Some(explain_host(sv, step.requests));
    }
    let term =
        |symbol: &'static str, meaning: &'static str, value: f64, unit: Unit| Term { symbol, meaning, value, unit };
    let decoding =
        term("n_d", "requests decoding a token this step (per pipeline group)", step.pass.decode_tokens, Unit::Count);
    let chunk = term("n_p", "prompt tokens of the chunk this step carries", step.pass.prefill_tokens, Unit::Count);
    let ctx = term("ctx", "tokens in a decoding request's KV cache, on average", step.pass.context, Unit::Count);
    let separate = sv.cx.setup.prefill_steps == PrefillSteps::Separate;
    let (what, formula, terms, seconds, note) = match (op.block, op.kind) {
        (Block::Attn | Block::Fc, OpKind::Compute) => (
            if separate {
                format!("Layer {}'s {} in one decode step: a token for every decoding request (prompts are prefilled in steps of their own)", op.layer, block_words(op.block))
            } else {
                format!("Layer {}'s {} in one engine step: a token for every decoding request and a prompt chunk", op.layer, block_words(op.block))
            },
            "sum over its GEMMs of n_d + n_p tokens of max(2 m n k / F in whole tiles + output / B_gemm, (weights + tokens) / B_gemm) + max(score FLOPs / F, KV read and written / B_mem) + element-wise / B_mem + n_k x t_k",
            vec![decoding, chunk, ctx, tp, rate, hbm, gemm_hbm.clone()].into_iter().chain(kernel_terms(sv, step.pass)).collect(),
            if op.block == Block::Attn { step.layer.attn_s } else { step.layer.ffn_s },
            Some(if separate {
                "Prompts run in steps of their own between decode steps: every decoding request waits for them, and each reads every weight again, where a prompt chunk mixed into a decode step would ride on the weight reads it pays for anyway."
            } else {
                "The prompt chunk rides on the weight reads the decoding requests pay for anyway: that is why in-flight batching beats a static batch."
            }),
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
            "Logits of the step's new tokens and their sampling: one per decoding request, and the first token of each prompt that completes".into(),
            HEAD_FORMULA,
            head_terms(sv, term("rows", "tokens that need logits", step.rows, Unit::Count), [tp, rate, hbm, gemm_hbm]),
            sv.logits_for(step.rows),
            Some(sampling_note(sv)),
        ),
        _ => return None,
    };
    Some(Explanation { what, formula: formula.into(), terms, seconds, note })
}

/// Explains an op of a serving timeline.
pub fn explain(sv: &ServingCx, op: &OpName) -> Option<Explanation> {
    let cx = &sv.cx;
    let term =
        |symbol: &'static str, meaning: &'static str, value: f64, unit: Unit| Term { symbol, meaning, value, unit };
    let tp = term("tp", "tensor-parallel degree", sv.tp(), Unit::Count);
    let rate = term("F", "effective FLOP rate per GPU at the weights' format", sv.rate, Unit::FlopsPerS);
    let hbm = term("B_mem", "effective HBM bandwidth per GPU", cx.hbm_bytes_per_s, Unit::BytesPerS);
    let gemm_hbm = gemm_bandwidth_term(cx.gemm_hbm_bytes_per_s);
    let b = term("B", "requests in the batch (per replica)", sv.batch, Unit::Count);
    if cx.setup.batching == Batching::InFlight {
        return explain_step(sv, op, [tp, rate, hbm, gemm_hbm]);
    }
    if (op.block, op.kind) == (Block::Input, OpKind::Idle) {
        return Some(explain_host(sv, sv.batch));
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
            "sum over its GEMMs of max(2 m n k / F in whole tiles + output / B_gemm, operands and output / B_gemm) + max(score FLOPs / F, KV written / B_mem) + element-wise / B_mem + n_k x t_k",
            vec![
                b_prefill,
                term("s_in", "prompt tokens per request", sv.input as f64, Unit::Count),
                tp,
                rate,
                hbm,
                gemm_hbm.clone(),
            ]
            .into_iter()
            .chain(kernel_terms(sv, sv.prefill_pass()))
            .collect(),
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
            Some("On a pipeline the prompts go through the stages in micro-batches, so that every stage works at once: after the first micro-batch has crossed every stage, each further one adds a pass through the busiest stage. Decode steps split the batch the same way when the stages divide it."),
        ),
        (Block::Head, OpKind::Compute) => (
            "Logits of the prompt's last token (the first output token) and its sampling".into(),
            HEAD_FORMULA,
            head_terms(sv, Term { symbol: "rows", meaning: "tokens that need logits: one per request", value: sv.batch, unit: Unit::Count }, [tp, rate, hbm, gemm_hbm]),
            sv.logits_s(),
            Some(sampling_note(sv)),
        ),
        (Block::Decode, OpKind::Compute) => {
            let (from, to) = decode_run(op);
            let ctx = (sv.input + from) as f64;
            let (micro, m) = sv.decode_micro();
            let mut terms = vec![
                b,
                term("ctx", "tokens in each request's KV cache at the first step", ctx, Unit::Count),
                term("kv", "KV-cache bytes per token on this GPU (all its layers)", sv.kv_bytes_per_token(), Unit::Bytes),
                term("w", "bytes per weight", sv.weight_bytes, Unit::BytesPerElement),
                rate,
                hbm,
                gemm_hbm,
            ];
            terms.extend(kernel_terms(sv, Pass { prefill_tokens: 0.0, decode_tokens: micro, context: ctx }));
            let pipelined = m > 1;
            if pipelined {
                terms.push(term("m", "decode micro-batches per step (the batch over the stages)", m as f64, Unit::Count));
                terms.push(term("b", "requests in each micro-batch", micro, Unit::Count));
                terms.push(term("L_s", "layers of the busiest stage", sv.stage_layers(), Unit::Count));
            }
            (
                format!("{}: one token for each request per step, all layers", steps_words(from, to)),
                match (pipelined, from == to) {
                    (false, true) => "layers x (GEMMs, each bound by reading its weights at B_gemm or by its FLOPs in whole tiles, + max(score FLOPs / F, KV cache / B_mem) + element-wise + 2 x n_k x t_k) + logits",
                    (false, false) => "sum over the steps of layers x (GEMMs, each bound by reading its weights at B_gemm or by its FLOPs in whole tiles, + max(score FLOPs / F, KV cache / B_mem) + element-wise + 2 x n_k x t_k) + logits (the KV cache grows a token per step)",
                    (true, _) => "per step, (p - 1 + m) x L_s x (one layer for a micro-batch of b requests: GEMMs by their shapes + attention over its KV cache + element-wise + 2 x n_k x t_k) + m x logits of b requests",
                },
                terms,
                sv.decode_steps(from, to).0,
                Some(if pipelined {
                    "On a pipeline whose stages divide the batch, each step goes through in micro-batches, as FasterTransformer runs it: the stages work at once, but each micro-batch reads the stage's weights again, so a memory-bound step takes longer than the whole batch would, a compute-bound one less."
                } else {
                    "Decode is memory-bound at small batches: every step reads all the weights and the whole KV cache once; a bigger batch shares the weight reads."
                }),
            )
        }
        (Block::Decode, _) => {
            let (from, to) = decode_run(op);
            let (micro, m) = sv.decode_micro();
            let (_, note) = sv.all_reduce_words(micro);
            (
                format!("{}: tensor-parallel all-reduces (two per layer) and pipeline hops", steps_words(from, to)),
                match (m > 1, from == to) {
                    (false, true) => "layers x 2 x all-reduce(B x h x e) + (p-1) hops: latency-bound at small batches",
                    (false, false) => "steps x (layers x 2 x all-reduce(B x h x e) + (p-1) hops): latency-bound at small batches",
                    (true, _) => "per step, (p - 1 + m) x layers per stage x 2 x all-reduce(b x h x e) + (p-1) hops of a micro-batch of b requests",
                },
                vec![b, tp],
                sv.decode_steps(from, to).1,
                note,
            )
        }
        _ => return None,
    };
    let mut e = Explanation { what, formula: formula.into(), terms, seconds, note };
    // The host's time per decode step is in the decode run's computation.
    if (op.block, op.kind) == (Block::Decode, OpKind::Compute) && sv.host_s(sv.batch) > 0.0 {
        e.formula = format!("{} + per step the host's h_step + h_req x B", e.formula).into();
        e.terms.extend(explain_host(sv, sv.batch).terms.into_iter().take(2));
    }
    Some(e)
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::llama70;
    use super::*;
    use serde_json::json;

    #[test]
    fn a_decode_step_says_what_each_kernel_costs_with_and_without_a_graph() {
        use crate::engine::extended::calibration::{GRAPH_KERNEL_S, KERNEL_OVERHEAD_S};
        let t_k = |extra: serde_json::Value, block: Block| {
            let s = llama70(2, 8, extra);
            let r = crate::engine::evaluate(&s);
            let op = r.timeline.iter().find(|o| o.name.block == block && o.name.kind == OpKind::Compute);
            let e = crate::engine::explain(&s, &op.expect("an op").name).expect("explained");
            assert!(e.formula.contains("n_k x t_k"), "{}", e.formula);
            let n_k = e.terms.iter().find(|t| t.symbol == "n_k").expect("n_k").value;
            assert_eq!(n_k, KERNELS_PER_BLOCK);
            e.terms.iter().find(|t| t.symbol == "t_k").map(|t| (t.value, t.meaning)).expect("t_k")
        };
        // Eight decoding requests replay a captured graph; launched one by one without it.
        let (graph, words) = t_k(json!({}), Block::Decode);
        assert!(graph == GRAPH_KERNEL_S && words.contains("CUDA graph"), "{graph} {words}");
        let (eager, words) = t_k(json!({"cuda_graphs": false}), Block::Decode);
        assert!(eager == KERNEL_OVERHEAD_S && words.contains("launch"), "{eager} {words}");
        // The prefill of 8 prompts is a step of thousands of tokens: eager even with graphs.
        assert_eq!(t_k(json!({}), Block::Attn).0, KERNEL_OVERHEAD_S);
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
}
