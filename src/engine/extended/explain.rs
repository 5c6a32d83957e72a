//! The default model: why an op takes the time it takes. For any op of a default-model
//! timeline, the formula, each term with its value and unit, and the result.
//!
//! One job: explaining a transformer training op (one arm per kind of op; serving's ops are
//! explained in `serving/explain.rs`, DLRM's and CNNs' beside their models).

use super::calibration::{
    ADAM_BYTES_PER_PARAM, DEEPEP_RDMA_SHARE, HOST_BLOCK_S, NIC_STEP_S, NVLINK_STEP_S, POSITION_ADD_PASSES,
};
use super::collective::{nodes_per_token, Group, Links};
use super::training::TrainingCx;
use crate::engine::ops::{Block, OpKind, OpName, Phase};
use crate::engine::reference::explain::{Explanation, Term, Unit};
use crate::engine::scenario::{Attention, MoeDispatch, Recompute};

/// What a ZeRO-3 layer's weight gather does in the backward pass, as the model runs it: issued a
/// layer ahead but queued behind the previous layer's gradient reduce-scatter on the one
/// communication stream. FSDP issues it before that reduce-scatter; issued that way, the
/// published FSDP runs come out further from their measurements (SOURCES.md section 5: the
/// caveat on FSDP, and the OLMo-core rows), so this wait stands in for time the model misses
/// elsewhere on them.
const BACKWARD_GATHER_NOTE: &str = "Prefetched one layer ahead, but the model queues it behind the previous layer's gradient reduce-scatter (of the layer the backward pass ran just before, if any) on its one communication stream, so the layer waits for both. FSDP issues it before that reduce-scatter (FSDP2 and PyTorch's default when the previous layer starts its backward pass, hidden behind its computation; Composer's default when that layer ends, so only the gather waits). The model keeps the longer wait because without it published FSDP runs come out further from their measured times: it stands in for time missed elsewhere, such as computation slowed by the communication it overlaps.";

/// A term of a default-model explanation (every op's, the CNN's and the input wait's).
pub(super) fn term(symbol: &'static str, meaning: &'static str, value: f64, unit: Unit) -> Term {
    Term { symbol, meaning, value, unit }
}

/// The term of a GEMM's share of HBM bandwidth, `B_gemm`, at `bytes_per_s` (every
/// explanation of a GEMM shows it: [`crate::engine::scenario::System::gemm_bw_util`]).
pub(super) fn gemm_bandwidth_term(bytes_per_s: f64) -> Term {
    term(
        "B_gemm",
        "HBM bandwidth a GEMM's own reads and writes reach per GPU: mem_bw x gemm_bw_util (x mem_bw_util where the system does not set it); decoding's thin GEMMs stream their weights at it",
        bytes_per_s,
        Unit::BytesPerS,
    )
}

/// What selective recomputation runs again in a block's backward pass, in words
/// ([`crate::engine::scenario::Setup::recompute_modules`]): the attention block's scores and
/// norm (and a fused attention kernel's Q K^T besides), the feed-forward block's forward pass
/// (a recomputed module), or its norm and experts' activation.
fn selective_words(cx: &TrainingCx, attn: bool, fused: bool) -> &'static str {
    let m = cx.setup.recompute_modules;
    let moe = cx.d.is_moe();
    if attn {
        return match (m.core_attn, m.layernorm, fused) {
            (true, false, false) => "selective recomputation: the scores again, t_s and their element-wise work",
            (true, true, false) => "selective recomputation: the scores again, t_s and their element-wise work, and the norm's forward pass",
            (true, false, true) => "selective recomputation: t_s again (the scores), and t_s / 2 (Q K^T again in the fused kernel's backward)",
            (true, true, true) => "selective recomputation: t_s again (the scores) and the norm's forward pass, and t_s / 2 (Q K^T again in the fused kernel's backward)",
            (false, true, false) => "selective recomputation: the norm's forward pass",
            (false, true, true) => "selective recomputation: the norm's forward pass, and t_s / 2 (Q K^T again in the fused kernel's backward)",
            (false, false, true) => "t_s / 2 (Q K^T again in the fused kernel's backward; selective recomputation recomputes nothing here)",
            (false, false, false) => "selective recomputation: nothing in this block",
        };
    }
    match (m.ffn(moe), m.layernorm, moe && m.moe_act) {
        (true, _, _) => "selective recomputation: the block's forward pass again (GEMMs and element-wise work; its collectives and all-to-alls run again too)",
        (false, true, true) => "selective recomputation: the norm's forward pass and the experts' activation",
        (false, true, false) => "selective recomputation: the norm's forward pass",
        (false, false, true) => "selective recomputation: the experts' activation",
        (false, false, false) => "selective recomputation: nothing in this block",
    }
}

fn group_terms(g: Group, links: &Links) -> Vec<Term> {
    let mut t = vec![
        term("d", "ranks in the group", g.size as f64, Unit::Count),
        term("k", "ranks of the group per node", g.per_node as f64, Unit::Count),
    ];
    if g.within_node() {
        t.push(term(
            "B_nvl",
            "NVLink bandwidth per GPU, one direction, after utilisation",
            links.intra_bytes_per_s,
            Unit::BytesPerS,
        ));
        t.push(term(
            "alpha",
            "latency per step within a node (NCCL's Simple protocol, plus the system's NVLink latency; smaller messages take LL128 or LL, with less latency and less bandwidth, when that is faster)",
            NVLINK_STEP_S + links.intra_latency_s,
            Unit::Seconds,
        ));
    } else {
        t.push(term(
            "B_nvl",
            "NVLink bandwidth per GPU, one direction, after utilisation",
            links.intra_bytes_per_s,
            Unit::BytesPerS,
        ));
        t.push(term(
            "B_nic",
            "a GPU's share of its node's NICs, one direction, after utilisation",
            links.inter_bytes_per_s,
            Unit::BytesPerS,
        ));
        t.push(term(
            "alpha",
            "latency per step across nodes (NCCL's Simple protocol, plus the system's link latency; small messages take LL, with less latency and a quarter of the bandwidth, when that is faster)",
            NIC_STEP_S + links.inter_latency_s,
            Unit::Seconds,
        ));
    }
    if g.sites() > 1 {
        t.push(term("s", "ranks of the group per site", g.per_site as f64, Unit::Count));
        t.push(term(
            "B_wan",
            "a GPU's share of its site's wide-area link, one direction",
            links.wan_bytes_per_s,
            Unit::BytesPerS,
        ));
        t.push(term(
            "alpha_wan",
            "latency per step between sites (a network step plus the wide-area link's latency)",
            NIC_STEP_S + links.wan_latency_s,
            Unit::Seconds,
        ));
    }
    t
}

/// How an explanation names layer `l`: "layer 3", or in an encoder-decoder "layer 30 (decoder
/// layer 6)".
fn layer_name(cx: &TrainingCx, l: u64) -> String {
    let e = cx.d.encoder_layers;
    match (cx.d.is_encoder_decoder(), l < e) {
        (false, _) => format!("layer {l}"),
        (true, true) => format!("layer {l} (encoder layer {l})"),
        (true, false) => format!("layer {l} (decoder layer {})", l - e),
    }
}

/// Explains an op of a default-model training timeline (transformers); `None` for a name the
/// scenario cannot have.
pub fn explain(whole: &TrainingCx, op: &OpName) -> Option<Explanation> {
    let layer = op.layer.max(0) as u64;
    // A layer's ops are explained in its stack's terms (an encoder-decoder's encoder or
    // decoder: its tokens, FLOPs and weights); the iteration's ops in the whole model's.
    let in_stack;
    let cx = if matches!(op.block, Block::Attn | Block::Fc | Block::Moe) {
        in_stack = whole.at(layer);
        &in_stack
    } else {
        whole
    };
    let t = cx.layer_times(layer);
    let l = layer;
    let layer = layer_name(whole, l);
    let cross = cx.d.cross_seq > 0.0;
    let pass = if op.phase == Phase::Forward { "forward" } else { "backward" };
    let alg = cx.setup.collective.config_name();
    let tokens = term("T", "tokens per GPU per micro-batch (micro-batch x sequence / cp)", cx.tokens, Unit::Count);
    let tp = term("tp", "tensor-parallel degree", cx.lay.tp.size as f64, Unit::Count);
    let rate = term("F", "effective FLOP rate per GPU (peak x utilisation)", cx.flops_per_s, Unit::FlopsPerS);
    let hbm = term("B_mem", "effective HBM bandwidth per GPU", cx.hbm_bytes_per_s, Unit::BytesPerS);
    let act_bytes = cx.tokens * cx.d.hidden * cx.d.elem_bytes;
    let f = cx.d.layer_flops();
    let ex = match (op.kind, op.block) {
        (OpKind::Compute, Block::Attn) | (OpKind::Compute, Block::Fc) => {
            let attn = op.block == Block::Attn;
            let block = op.block;
            // The collective the block's pass waits for (the feed-forward's is its experts').
            let block_tp_comm_s = if attn { t.tp_comm_s } else { t.ffn_tp_comm_s };
            let (fwd, dgrad, wgrad) = cx.block_gemm_s(block);
            let mut terms = vec![term(
                "t_gemm",
                "GEMM time of the block's weights in the forward pass: for each GEMM (m x k times k x n), 2 m n k / F on whole 128 x 128 output tiles, plus writing its output, m n e (1 - k / 8192) / B_gemm (F is taken on 8,192-wide square GEMMs, their write included: a shorter k costs more, a longer one less), and never less than reading and writing its matrices once at B_gemm",
                fwd,
                Unit::Seconds,
            )];
            if op.phase == Phase::Backward {
                terms.push(term(
                    "t_dgrad",
                    "the same GEMMs' activation gradients (m x n times n x k: inner dimension n)",
                    dgrad,
                    Unit::Seconds,
                ));
                terms.push(term(
                    "t_wgrad",
                    "their weight gradients (k x m times m x n: inner dimension the tokens)",
                    wgrad,
                    Unit::Seconds,
                ));
            }
            if let Some(sms) = cx.sms {
                terms.push(term(
                    "SMs",
                    "streaming multiprocessors per GPU: they compute a GEMM's 128 x 128 output tiles in waves, one tile each at a time, and a last wave that fills only some of them leaves the others idle, so each GEMM's 2 m n k / F is divided by the share waves / ceil(waves) of their time its tiles keep busy; an output under one wave splits its inner dimension into as many slices as fill the SMs, each writing FP32 partial sums that a reduction reads back",
                    sms as f64,
                    Unit::Count,
                ));
            }
            if let Some(fp8) = cx.fp8_flops_per_s {
                terms.push(term(
                    "F_fp8",
                    "FP8 training: these GEMMs run at the FP8 rate (FP8 peak x utilisation x 0.91, FP8 kernels' share of what 16-bit ones reach) on 1-byte operands with a 16-bit output, each after casting its activation operand (the forward input, the output gradient): m x k elements read at e bytes, an FP8 copy and its transpose written; the weight gradients read the transposes. Scores, norms and the logits stay at F",
                    fp8,
                    Unit::FlopsPerS,
                ));
            }
            if attn {
                let [t_s, t_s_a, t_s_w] = cx.score_gemms_s();
                terms.push(term("FLOPs_s", "score and context FLOPs per token", f.attn_scores, Unit::Flops));
                if cx.d.materialized() {
                    terms.push(term(
                        "t_s",
                        "the scores' GEMMs, batched one per sequence and head: Q K^T writes the s x s scores and P V reads them, each max(FLOPs / F, bytes read and written / B_gemm); with a head of 64 or 128 the score matrix's bytes set the time",
                        t_s,
                        Unit::Seconds,
                    ));
                } else {
                    terms.extend([
                        term("k", kernel_speed(cx.d.attention), 1.0 / cx.d.score_cost(), Unit::Count),
                        term("t_s", "the scores' GEMMs: T x FLOPs_s / k / tp / F", t_s, Unit::Seconds),
                    ]);
                }
                if op.phase == Phase::Backward && cx.d.materialized() {
                    terms.extend([
                        term(
                            "t_s_a",
                            "the scores' backward GEMMs with the activation gradients: dP = dO V^T (writes the scores' gradient) and dQ = dS K (reads it)",
                            t_s_a,
                            Unit::Seconds,
                        ),
                        term(
                            "t_s_w",
                            "the scores' backward GEMMs with the weight gradients: dV = P^T dO and dK = dS^T Q (each reads an s x s matrix)",
                            t_s_w,
                            Unit::Seconds,
                        ),
                    ]);
                }
            }
            if !attn && cx.expert_token_share() < 1.0 {
                terms.push(term(
                    "etp",
                    "expert tensor parallelism: the tensor-parallel ranks that split each expert; the other tp / etp hold whole experts of their own, each GPU's experts computing over its etp / tp share of the tokens (wider GEMMs on fewer tokens, the same FLOPs) with no tensor-parallel collective around them when etp is 1",
                    cx.etp() as f64,
                    Unit::Count,
                ));
            }
            if !attn && cx.d.is_moe() && cx.ecp() > 1 {
                terms.push(term(
                    "ecp",
                    "context-parallel ranks holding different experts (Megatron-core's MoE parallel folding): they join expert parallelism, so each GPU holds 1 / ecp of the experts it would otherwise, each over ecp times the tokens (wider GEMMs, the same FLOPs)",
                    cx.ecp() as f64,
                    Unit::Count,
                ));
            }
            if attn && cross {
                terms.push(term(
                    "s_enc",
                    "encoder tokens per sample each target token attends to in cross-attention: its scores cover them, and t_gemm adds the cross-attention's query and output projections and the keys and values of the micro-batch's encoder tokens",
                    cx.d.cross_seq,
                    Unit::Count,
                ));
            }
            let ew_terms = if op.phase == Phase::Forward {
                vec![term(
                    "t_ew",
                    "element-wise kernels (norms, residual adds, dropout, softmax, activation; in attention, rotary position embeddings: one fused kernel's 2 passes over the queries and keys, eager PyTorch's 10; with eager norms and activation, each RMSNorm 8 kernels moving 36 bytes a hidden unit in 16 bits against a fused one's 1 and 4, and SwiGLU 2 kernels and 5 passes of f against 1 and 3) at HBM speed",
                    cx.block_ew_s(block),
                    Unit::Seconds,
                )]
            } else {
                let (activation, weight) = cx.block_bwd_ew_s(block);
                vec![
                    term(
                        "t_ew_a",
                        "the activation gradients' element-wise kernels at HBM speed, counted from the kernels: the two residual gradients summed (3 passes), the norm's input gradient (3) and, with dropout, its gradient (the gradient and the 1-byte mask read, one written); in attention, the query, key and value gradients copied into their fused projection's (2), with scores in HBM the softmax's (3 per score) and with rotary position embeddings theirs (2 passes of the queries and keys fused, 10 eager); in the feed-forward block, the activation's (GELU 3, SwiGLU 5 passes of f); with eager norms and activation, each RMSNorm's 12 kernels move 84 bytes a hidden unit in 16 bits where a fused norm's input gradient moves 6, and SwiGLU's 3 kernels 9 passes of f",
                        activation,
                        Unit::Seconds,
                    ),
                    term(
                        "t_ew_w",
                        "the weight gradients' element-wise kernels at HBM speed: the norm's scale and shift gradients (2 passes; an eager RMSNorm's product and sum, 4) and, with biases, each bias gradient's reduction over the tokens (1 pass of its projection's output)",
                        weight,
                        Unit::Seconds,
                    ),
                ]
            };
            terms.extend([tokens, tp, rate]);
            terms.extend(ew_terms);
            let dispatch = cx.dispatch_s(block)[usize::from(op.phase != Phase::Forward)];
            if dispatch > 0.0 {
                terms.push(term("t_dispatch", dispatch_meaning(cx.d.moe_dispatch), dispatch, Unit::Seconds));
            }
            terms.extend([
                hbm,
                gemm_bandwidth_term(cx.gemm_hbm_bytes_per_s),
                term("e", "bytes per element", cx.d.elem_bytes, Unit::Count),
                term(
                    "t_host",
                    "time the host needs to issue a block pass (Python, PyTorch, the framework); the GPU waits for it when its work is shorter",
                    HOST_BLOCK_S,
                    Unit::Seconds,
                ),
                term(
                    "t_tp",
                    "tensor-parallel collectives the pass waits for, while the host issues the next kernels",
                    cx.blocking_tp_comm_s(block_tp_comm_s),
                    Unit::Seconds,
                ),
            ]);
            let fused = attn && !cx.d.materialized();
            let (formula, seconds, what) = if op.phase == Phase::Forward {
                let formula =
                    if attn { "max(t_gemm + t_s + t_ew, t_host - t_tp)" } else { "max(t_gemm + t_ew, t_host - t_tp)" }
                        .to_string();
                (formula, if attn { t.attn_fwd_s } else { t.ffn_fwd_s }, "forward pass")
            } else {
                let (act, wgt) = cx.backward_work(l);
                // The scores' backward GEMMs: a fused kernel's t_s in each pass, materialized
                // scores' own in each.
                let (sa, sw) = match (attn, fused) {
                    (false, _) => ("", ""),
                    (true, true) => (" + t_s", " + t_s"),
                    (true, false) => (" + t_s_a", " + t_s_w"),
                };
                let a = format!("max(t_dgrad{sa} + t_ew_a, t_host - t_tp)");
                let w = format!("max(t_wgrad{sw} + t_ew_w, t_host - t_tp)");
                let formula = match (act, wgt) {
                    (true, true) => format!("{a} + {w} + t_rec"),
                    (true, false) => format!("{a} + t_rec (frozen weights: no weight gradients)"),
                    (false, true) => format!("{w} + t_rec (nothing below trains)"),
                    (false, false) => "0 (nothing at or below this layer trains)".to_string(),
                };
                let seconds = if attn { t.attn_bwd_s } else { t.ffn_bwd_s };
                let rec = match (cx.setup.recompute, fused) {
                    _ if !(act || wgt) => "recomputation: none (no backward pass here)",
                    (Recompute::Selective, _) => selective_words(cx, attn, fused),
                    (Recompute::Full, false) => "the forward pass again (full recomputation)",
                    (Recompute::Full, true) => {
                        "the forward pass again (full recomputation), and t_s / 2 (the fused kernel computes Q K^T again)"
                    }
                    (Recompute::None, true) => "t_s / 2 (the fused kernel computes Q K^T again)",
                    _ => "recomputation: none",
                };
                let passes =
                    cx.gradient_passes_s(block, (act, wgt), (fwd, dgrad, wgrad), cx.host_floor_s(block_tp_comm_s));
                terms.push(term("t_rec", rec, seconds - passes, Unit::Seconds));
                (formula, seconds, "backward pass")
            };
            let block_name = match (attn, cross) {
                (false, _) => "Feed-forward",
                (true, false) => "Attention",
                (true, true) => "Attention (self-attention, then cross-attention to the encoder's output)",
            };
            Explanation {
                what: format!("{block_name} block of {layer}, {what}, one micro-batch"),
                formula: formula.into(),
                terms,
                seconds,
                note: Some(if attn {
                    "The default model times each GEMM by its shape (the short inner dimension of the output projection under tensor parallelism costs more per FLOP), counts attention's s^2 GEMMs, grouped-query K/V and the element-wise work that MAD-Max leaves out (quirk Q26)."
                } else {
                    "The default model times each GEMM by its shape (a short inner dimension, such as the second matrix's under tensor parallelism, costs more per FLOP) and counts the element-wise work that MAD-Max leaves out (quirk Q26)."
                }),
            }
        }
        (OpKind::ActAllReduce | OpKind::ActAllGather | OpKind::ActReduceScatter, _) => {
            let mut terms = vec![term("S", "activations of the micro-batch: T x h x e", act_bytes, Unit::Bytes)];
            terms.extend(group_terms(cx.lay.tp, &cx.links));
            let one = if op.block == Block::Attn { t.attn_tp_comm_s } else { t.ffn_tp_comm_s };
            let again = op.phase == Phase::Backward && cx.replays_forward_comm(op.block);
            let seconds = if again { 2.0 * one } else { one };
            Explanation {
                what: format!("Tensor-parallel {} of the activations of {layer} ({pass})", match op.kind { OpKind::ActAllReduce => "all-reduce", OpKind::ActAllGather => "all-gather (sequence parallel)", _ => "reduce-scatter (sequence parallel)" }),
                formula: if op.block == Block::Attn && cross {
                    "twice (the self-attention and the cross-attention sub-layers each end in one) a ring within the node: 2 (d-1)/d x S / B_nvl + 2 (d-1) alpha (all-reduce; half for gather or scatter); doubled in a backward pass that recomputes the block (full recomputation, or a recomputed feed-forward module)"
                } else {
                    "ring within the node: 2 (d-1)/d x S / B_nvl + 2 (d-1) alpha (all-reduce; half for gather or scatter); doubled in a backward pass that recomputes the block (full recomputation, or a recomputed feed-forward module)"
                }
                .into(),
                terms,
                seconds,
                note: Some(if cx.setup.overlap_tp_comm { "Overlapped with GEMMs (comm/GEMM overlap is on)." } else { "Blocking: the next GEMM waits for it, as in Megatron-LM." }),
            }
        }
        (OpKind::WeightAllGather, Block::Optimizer) => {
            let (dense, expert) = cx.stage_params(cx.stage);
            let (blocks, _) = cx.stage_layer_params(cx.stage);
            let mut terms = vec![term("P", "parameters on this GPU", dense + expert, Unit::Params)];
            let formula = if cx.gathers_updated_weights_in_forward() {
                terms.push(term(
                    "P_b",
                    "of them the blocks' weights, gathered during the next forward pass instead",
                    blocks,
                    Unit::Params,
                ));
                "(P - P_b) x e"
            } else if cx.fp8_params() {
                terms.push(term(
                    "P_b",
                    "of them the blocks' weights, gathered in FP8 (fp8_param_gather)",
                    blocks,
                    Unit::Params,
                ));
                "(P_b x 1 byte + (P - P_b) x e)"
            } else {
                "P x e"
            };
            let (formula, note) = if cx.setup.zero1_broadcast {
                (
                    format!("d x ({formula} / d / bandwidth + latency)"),
                    Some("One broadcast from each rank of the group of the shard it updated (zero1_broadcast, as InternLM's hybrid ZeRO returns them): NCCL runs them one after another on its ring, each paying the ring's latency of d - 1 hops, where one all-gather of the same bytes pays it once."),
                )
            } else {
                (format!("(d-1)/d x {formula} / bandwidth + latency"), None)
            };
            terms.extend(group_terms(cx.zero_group(), &cx.links));
            let what = if cx.zero_group() == cx.lay.weight_dp {
                "ZeRO-1/2: gather the weights the other data-parallel ranks updated"
            } else {
                "Hybrid ZeRO-1: gather the weights the other ranks of this GPU's ZeRO group updated (zero_shard_ranks; each group holds a whole copy of the optimizer states)"
            };
            Explanation { what: what.into(), formula: formula.into(), terms, seconds: cx.param_gather_s(), note }
        }
        (OpKind::WeightAllGather, _) if cx.gathers_updated_weights_in_forward() => {
            let layer_bytes = cx.layer_params_on_gpu() * cx.gathered_bytes_per_param();
            let mut terms = vec![term(
                "W",
                "the layer's weights after tensor and expert parallelism, as the optimizer updated them",
                layer_bytes,
                Unit::Bytes,
            )];
            terms.extend(group_terms(cx.zero_group(), &cx.links));
            Explanation {
                what: format!("ZeRO-1/2: gather the updated weights of {layer} during the first micro-batch's forward pass"),
                formula: "(d-1)/d x W / bandwidth + latency".into(),
                terms,
                seconds: t.param_sync_s,
                note: Some("Gathered one layer ahead, while the previous layer computes (overlap_param_gather, Megatron-LM's --overlap-param-gather: each layer's forward pass waits for its gather and starts the next), instead of after the optimizer step."),
            }
        }
        (OpKind::WeightAllGather, _) => {
            let layer_bytes = cx.layer_params_on_gpu() * cx.gathered_bytes_per_param();
            let mut terms = vec![term(
                "W",
                if cx.fp8_params() {
                    "the layer's weights after tensor and expert parallelism, gathered in FP8 (fp8_param_gather)"
                } else {
                    "the layer's weights after tensor and expert parallelism, gathered"
                },
                layer_bytes,
                Unit::Bytes,
            )];
            terms.extend(group_terms(cx.zero3_group(), &cx.links));
            Explanation {
                what: format!("ZeRO-3 / FSDP all-gather of the weights of {layer} ({pass})"),
                formula: if cx.zero3_group().sites() > 1 {
                    "(d-1)/d x W / bandwidth + latency: within the node over NVLink, then 1/k of it over the NICs, then 1/s of it over the wide-area link (B_wan); a ring of d-1 hops, m-1 of them between nodes (14 us each, 3.4 us over NVLink), w-1 of those between sites (alpha_wan each), as NCCL runs it"
                } else {
                    "(d-1)/d x W / bandwidth + latency: within the node over NVLink, then 1/k of it over the NICs; a ring of d-1 hops, m-1 of them between nodes (14 us each, 3.4 us over NVLink), as NCCL runs it"
                }
                .into(),
                terms,
                seconds: t.weight_gather_s,
                note: Some(if !cx.setup.prefetches_sharded_weights() {
                    "Not prefetched: the layer waits for it."
                } else if op.phase == Phase::Backward && cx.reduces_every_micro_batch() {
                    BACKWARD_GATHER_NOTE
                } else {
                    "Prefetched one layer ahead: it runs while the previous layer computes."
                }),
            }
        }
        (OpKind::GradAllReduce | OpKind::GradReduceScatter, Block::Optimizer) => {
            let Some(g) = cx.final_grad_sync_plan() else {
                return Some(Explanation {
                    what: "Data-parallel gradient synchronisation after the backward pass".into(),
                    formula: "0: nothing is left to reduce".into(),
                    terms: Vec::new(),
                    seconds: 0.0,
                    note: Some("The gradients were reduced during the backward pass (or nothing trains, or one replica holds them all)."),
                });
            };
            let e = cx.grad_bytes();
            let per_micro_batch = g.times > 1.0;
            let replicas = cx.zero3_group().size > 1;
            let (what, params, formula, note) = if per_micro_batch {
                (
                    "ZeRO-2: the embeddings' and the output layer's gradients, reduce-scattered once per micro-batch",
                    "the embeddings' and the output layer's parameters on this GPU (the layers' gradients were reduce-scattered in each micro-batch's backward pass)",
                    "m x (P x e bytes reduce-scattered with the chosen algorithm); see the collective model",
                    "With ZeRO-2 a GPU keeps only its shard of the gradients, so every micro-batch reduces its own.",
                )
            } else if replicas {
                (
                    "Hybrid sharding: each GPU's shard of the gradients all-reduced across the replicas",
                    "parameters in this GPU's shard (the stage's over the sharding group)",
                    "P x e bytes all-reduced over the replicas with the chosen algorithm; see the collective model",
                    "The shards were reduce-scattered within the sharding group during the backward pass.",
                )
            } else {
                (
                    "Data-parallel gradient synchronisation after the backward pass",
                    "parameters on this GPU",
                    "P x e bytes with the chosen algorithm; see the collective model",
                    "Turn on overlap_grad_reduce to run it in buckets during the backward pass.",
                )
            };
            let mut terms = vec![
                term("P", params, g.bytes / e, Unit::Params),
                term("e", "bytes per gradient (4 with fp32 gradients)", e, Unit::BytesPerElement),
            ];
            if per_micro_batch {
                terms.push(term("m", "micro-batches per iteration", g.times, Unit::Count));
            }
            terms.extend(group_terms(g.group, &cx.links));
            Explanation {
                what: what.into(),
                formula: formula.into(),
                terms,
                seconds: cx.final_grad_sync().1,
                note: Some(note),
            }
        }
        (OpKind::GradAllReduce | OpKind::GradReduceScatter, _) => {
            let mut terms = vec![];
            terms.extend(group_terms(cx.lay.weight_dp, &cx.links));
            Explanation {
                what: format!("Gradients of {layer} reduced over the data-parallel ranks ({alg})"),
                formula: if op.kind == OpKind::GradReduceScatter {
                    "reduce-scatter of the layer's gradients, each rank receiving the sum of the shard it updates (ZeRO-1 over every rank holding the same weights, as Megatron-core's distributed optimizer, ZeRO-2 and 3)"
                } else {
                    "all-reduce of the layer's gradients, every rank receiving the whole sum (plain data parallelism, ZeRO-1 in groups, or all-reducing as InternLM's, zero1_all_reduce)"
                }
                .into(),
                terms,
                seconds: t.grad_sync_s,
                note: cx.reduces_every_micro_batch().then_some(
                    "In every micro-batch: with ZeRO-2 or 3 a GPU keeps only its shard of the gradients, so it cannot accumulate the other shards until the last micro-batch.",
                ),
            }
        }
        (OpKind::MoeDispatch | OpKind::MoeCombine, _) => {
            let mut terms = vec![term(
                "S",
                "routed activations: T x h x e x active experts x capacity factor, over tp with sequence parallelism (each rank routes its own share of the tokens)",
                cx.moe_routed_bytes(),
                Unit::Bytes,
            )];
            let again = op.phase == Phase::Backward && cx.replays_forward_comm(Block::Fc);
            let group = cx.expert_group();
            let deepep = cx.d.moe_dispatch == MoeDispatch::DeepEp && !group.within_node();
            if deepep {
                let (experts, active, m) = (cx.d.experts, cx.d.active, group.nodes() as f64);
                terms.extend([
                    term("a", "experts each token visits", active, Unit::Count),
                    term("m", "nodes the expert-parallel group spans", m, Unit::Count),
                    term("n_tok", "nodes holding at least one of a token's experts, its own included: m (1 - C(E - E/m, a) / C(E, a)), the E experts spread evenly and chosen uniformly", nodes_per_token(experts, active, m), Unit::Count),
                    term("r", "DeepEP's bandwidth across nodes as a share of the NIC's line rate, over the (token, node) pairs it sends (deepseek-ai/DeepEP's table: 43, 58 and 51 GB/s on 50 GB/s NICs)", DEEPEP_RDMA_SHARE, Unit::Count),
                    term("B_line", "a GPU's share of its node's NICs at their line rate, one direction", cx.nic_line_bytes_per_s(), Unit::BytesPerS),
                    term("B_nvl", "NVLink bandwidth per GPU, one direction, after utilisation", cx.links.intra_bytes_per_s, Unit::BytesPerS),
                ]);
            } else {
                terms.extend(group_terms(group, &cx.links));
            }
            let formula = if deepep {
                "DeepEP: max(S / a x n_tok / (r x B_line), S / B_nvl) + launch: each token crosses to a node once, then NVLink forwards it to its experts"
            } else {
                "max(S (k-1)/d / B_nvl, S (d-k)/d / B_nic) + launch and latency: the node's peers all at once (one NVLink step), a network step per other node"
            };
            Explanation {
                what: format!("Expert-parallel all-to-all of {layer} ({})", if op.kind == OpKind::MoeDispatch { "dispatch" } else { "combine" }),
                formula: if again {
                    format!("twice (the recomputed forward pass's, then the gradients'): {formula}").into()
                } else {
                    formula.into()
                },
                terms,
                seconds: if again { 2.0 * t.moe_a2a_s } else { t.moe_a2a_s },
                note: Some("Sized by the experts each token visits and the capacity factor (MAD-Max divides by all experts, quirk Q19)."),
            }
        }
        (OpKind::KvRing, _) => {
            let mut terms = vec![term("cp", "context-parallel degree", cx.lay.cp.size as f64, Unit::Count)];
            terms.extend(group_terms(cx.lay.cp, &cx.links));
            Explanation {
                what: format!(
                    "Ring attention of {layer}: keys and values passed around the context-parallel ring ({pass})"
                ),
                formula: "(cp-1) x (2 x T x kv x d_head x e / tp) / bandwidth; overlapped with the attention GEMMs"
                    .into(),
                terms,
                seconds: if op.phase == Phase::Forward { t.kv_ring_s } else { 2.0 * t.kv_ring_s },
                note: None,
            }
        }
        (OpKind::PipeTransfer, _) => Explanation {
            what: format!(
                "Pipeline {} of one micro-batch between stages",
                if op.phase == Phase::Forward { "receive of activations" } else { "send of activation gradients" }
            ),
            formula: "T x h x e / tp / bandwidth + alpha (each tensor-parallel rank sends its slice)".into(),
            terms: vec![tokens, term("h", "hidden size", cx.d.hidden, Unit::Count), tp],
            seconds: cx.p2p_s(),
            note: None,
        },
        (OpKind::Idle, Block::Pipeline) => {
            let (t_f, t_b) = cx.pass_times();
            let pass = if op.phase == Phase::Forward { t_f } else { t_b };
            let p = cx.lay.pp.size as f64;
            let m = cx.micro_batches as f64;
            let (first, chunk) = cx.drawn_layers();
            let stage = cx.stage_layers(cx.stage).end - first;
            Explanation {
                what: format!(
                    "Pipeline {}: this stage has nothing to do",
                    if op.phase == Phase::Forward {
                        "fill (waiting for the first micro-batch)"
                    } else {
                        "drain (waiting for the first stage to finish)"
                    }
                ),
                formula: "(p-1) x l_chunk / l_stage x t_pass".into(),
                terms: vec![
                    term("p", "pipeline stages", p, Unit::Count),
                    term("m", "micro-batches per iteration", m, Unit::Count),
                    term("v", "chunks per GPU (interleaving)", cx.chunks as f64, Unit::Count),
                    term("l_chunk", "layers in this stage's largest chunk", chunk as f64, Unit::Count),
                    term("l_stage", "layers on this stage", stage as f64, Unit::Count),
                    term(
                        "t_pass",
                        "one micro-batch's forward (fill) or backward (drain) pass on this stage",
                        pass,
                        Unit::Seconds,
                    ),
                ],
                seconds: cx.bubble_passes() * pass,
                note: Some(BUBBLE_NOTE),
            }
        }
        (OpKind::Idle, _) => {
            let r = super::iteration::evaluate(cx);
            let wait = r.timeline.iter().find(|o| o.name == *op).map_or(0.0, |o| o.duration_s);
            cx.setup.loader.explain_wait(cx.s, cx.global_batch, wait)
        }
        (OpKind::Compute, Block::Optimizer) => {
            let (dense, expert) = cx.stage_params(cx.stage);
            let owned = if cx.zero_stage() >= 1 { cx.zero_group().size as f64 } else { 1.0 };
            Explanation {
                what: "Optimizer step (mixed-precision Adam), memory-bound".into(),
                formula: "P x share / owners x bytes / B_mem".into(),
                terms: vec![
                    term("P", "parameters on this GPU", dense + expert, Unit::Params),
                    term("share", "share of them that trains", cx.trainable_share(), Unit::Count),
                    term("owners", "ranks that split the step (from ZeRO-1 on, the data-parallel ranks that share one copy of the optimizer states: all of them, or zero_shard_ranks)", owned, Unit::Count),
                    term("bytes", "bytes moved per parameter: read master weight, moments and gradient, write them and the 16-bit weight", ADAM_BYTES_PER_PARAM, Unit::Bytes),
                    hbm,
                ],
                seconds: cx.optimizer_step_s(),
                note: None,
            }
        }
        (OpKind::Compute, Block::Head) => {
            let (fwd, bwd) = cx.edge_times();
            let metrics = op.phase != Phase::Forward && cx.setup.metric_losses > 0;
            let mut terms = vec![tokens, term("V", "vocabulary", cx.d.vocab, Unit::Count), tp, rate, hbm];
            if metrics {
                terms.push(term(
                    "m",
                    "bytes per logit of the training metrics' cross-entropies, each an fp32 cast and a log-softmax",
                    cx.metric_bytes_per_logit(),
                    Unit::Bytes,
                ));
            }
            Explanation {
                what: format!("Output layer (logits) and loss, {pass}"),
                formula: if metrics {
                    "its two gradient GEMMs (T x h times h x V / tp) by their shapes + logits traffic / B_mem + T x V / tp x m / B_mem (the training metrics, after the backward pass)"
                } else {
                    "the logits GEMM (T x h times h x V / tp) by its shape + logits traffic / B_mem (backward: its two gradient GEMMs + the traffic)"
                }
                .into(),
                terms,
                seconds: if op.phase == Phase::Forward { fwd } else { bwd },
                note: Some("MAD-Max has no output layer; Megatron's V/(16 l h) term."),
            }
        }
        (OpKind::Compute, Block::Emb) => Explanation {
            what: "Input embedding lookup (or ViT patch projection)".into(),
            formula: {
                let base = "the patch projection GEMM (T x patch inputs times patch inputs x h / tp) by its shape + T x h x e x";
                if cx.d.position_add_bytes() > 0.0 {
                    format!("{base} (2 + {POSITION_ADD_PASSES}) / B_mem (the lookup's write and read, and the learned position embeddings' add: read two, write one)").into()
                } else {
                    format!("{base} 2 / B_mem").into()
                }
            },
            terms: vec![tokens, tp, rate, hbm],
            seconds: cx.input_time(),
            note: None,
        },
        _ => return None,
    };
    Some(ex)
}

/// What the pipeline bubble is, in words (the numbers are in the terms).
const BUBBLE_NOTE: &str = "The 1F1B bubble: each stage idles (p-1)/v passes while the pipeline fills and drains, a share (p-1)/(v m + p - 1) of the pipeline time; more micro-batches (m) or interleaving (v) shrink it.";

/// What the mixture of experts' dispatch term counts, by how the dispatch runs (its passes and
/// kernels are calibration.rs's `EAGER_DISPATCH` and `FUSED_DISPATCH`).
fn dispatch_meaning(d: MoeDispatch) -> &'static str {
    match d {
        MoeDispatch::Eager => "of the element-wise time above, the mixture of experts' token dispatch (Megatron-core 0.6's, eager PyTorch), on every tensor-parallel GPU over all the micro-batch's tokens (under expert tensor parallelism, its etp / tp share): forward, each token's routed copies gathered and sorted by expert, then scattered back, weighed by the router's probabilities and summed (12 passes over each copy, 1 over the token, 31 kernels); backward, their gradients (15 and 1, 15 kernels)",
        MoeDispatch::Fused => "of the element-wise time above, the mixture of experts' token dispatch by Transformer Engine's fused permute and unpermute (Megatron-core's --moe-permute-fusion), on every tensor-parallel GPU over all the micro-batch's tokens (under expert tensor parallelism, its etp / tp share): forward, each token read once and written to each of its routed copies, then each copy read back into the token's sum (2 passes over each copy, 2 over the token, 18 kernels with the router's); backward, their gradients (3 and 1, 10 kernels); the experts' activation applies the router's probabilities",
        MoeDispatch::DeepEp => "of the element-wise time above, the mixture of experts' token dispatch permuted as Transformer Engine's fused permute and unpermute do it (around DeepEP's all-to-all), on every tensor-parallel GPU over all the micro-batch's tokens (under expert tensor parallelism, its etp / tp share): forward, each token read once and written to each of its routed copies, then each copy read back into the token's sum (2 passes over each copy, 2 over the token, 18 kernels with the router's); backward, their gradients (3 and 1, 10 kernels); the experts' activation applies the router's probabilities",
    }
}

/// What the fused-kernel speed term `k` stands for, by kernel: the published share of peak
/// behind it (calibration.rs).
fn kernel_speed(a: Attention) -> &'static str {
    match a {
        Attention::Flash => "speed of the fused attention kernel's FLOPs relative to the GEMMs' (FlashAttention-2 on an A100 or -3 on an H100: about 61% of peak)",
        Attention::Flash2H100 => "speed of the fused attention kernel's FLOPs relative to the GEMMs' (FlashAttention-2 on an H100, which it was not written for, as PyTorch's scaled_dot_product_attention runs it there: about 35% of its peak)",
        Attention::Flash1 => "speed of the fused attention kernel's FLOPs relative to the GEMMs' (FlashAttention-1 or Triton on an A100: about 33% of its peak)",
        Attention::Flash1H100 => "speed of the fused attention kernel's FLOPs relative to the GEMMs' (FlashAttention-1 or Triton on an H100, which they were not written for: about 18% of its peak)",
        Attention::Materialized => "speed of the attention score FLOPs relative to the GEMMs' (batched GEMMs: the same)",
    }
}
