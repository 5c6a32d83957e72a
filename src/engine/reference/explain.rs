//! Reference mode: why an op takes the time it takes. For any op of a scenario's timeline, the
//! formula MAD-Max uses, each term with its value and unit, and the result. Plain data: the
//! faces format it ("all-gather of one layer's weights: 2 x 67.1 M params x 2 B / 120 GB/s").

use super::network::LevelBw;
use super::quantities::int;
use super::{Batch, Part, ReferenceCx};
use crate::engine::num::Num;
use crate::engine::ops::{Block, OpKind, OpName, Phase};
use crate::engine::scenario::{Arch, Scenario, Strategy};
use serde::Serialize;
use std::borrow::Cow;

/// What a term measures, so a face can format it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Unit {
    /// A plain number (degrees, counts, samples).
    Count,
    Params,
    Bytes,
    BytesPerElement,
    Flops,
    FlopsPerS,
    BytesPerS,
    Seconds,
}

/// One named input of a formula.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Term {
    pub symbol: &'static str,
    pub meaning: &'static str,
    pub value: f64,
    pub unit: Unit,
}

/// How an op's duration comes about.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Explanation {
    /// What the op is, in words.
    pub what: String,
    /// The formula over the terms' symbols.
    pub formula: Cow<'static, str>,
    pub terms: Vec<Term>,
    /// The duration the formula gives, s (equal to the op's duration in the timeline).
    pub seconds: f64,
    /// A remark on MAD-Max's modelling, when this op shows one of its quirks.
    pub note: Option<&'static str>,
}

fn term(symbol: &'static str, meaning: &'static str, value: f64, unit: Unit) -> Term {
    Term { symbol, meaning, value, unit }
}

fn block_words(b: Block) -> &'static str {
    match b {
        Block::Emb => "embedding",
        Block::MlpBot => "bottom MLP",
        Block::MlpTop => "top MLP",
        Block::Attn => "attention",
        Block::Fc => "feed-forward (FC)",
        Block::Moe => "mixture-of-experts",
        Block::Head => "output (logits)",
        Block::Pipeline => "pipeline",
        Block::Optimizer => "optimizer",
        Block::Input => "input pipeline",
        Block::Interaction => "feature interaction",
        Block::Decode => "decode step",
        Block::Conv => "convolution block",
    }
}

/// Explains an op of the scenario's timeline; `None` for a name the scenario cannot have.
pub fn explain(s: &Scenario, op: &OpName) -> Option<Explanation> {
    let cx = ReferenceCx::new(s);
    let dlrm_t = matches!(s.model.arch, Arch::DlrmTransformer(..));
    let is_mlp = matches!(op.block, Block::MlpBot | Block::MlpTop)
        || (op.block == Block::Moe && matches!(s.model.arch, Arch::DlrmMoe(..)));
    let part: Part = match op.block {
        Block::Emb => cx.emb,
        _ if is_mlp => cx.mlp?,
        _ => cx.transformer?,
    };
    let l = &cx.counts.layers;
    let (w, layer_flops, batch) = match op.block {
        Block::MlpBot => (l.mlp_block, l.mlp_flops, Batch::Mlp),
        Block::MlpTop => (l.top_mlp_block, l.top_mlp_flops, Batch::Mlp),
        Block::Attn => (l.attn_block, l.attn_flops, Batch::Transformer),
        Block::Fc => (l.fc_block, l.fc_flops, Batch::Transformer),
        Block::Moe => (l.fc_block, l.fc_flops, if is_mlp { Batch::Mlp } else { Batch::Transformer }),
        Block::Emb => (Num::Int(0), Num::Int(0), Batch::Emb),
        // The default model's blocks: reference mode emits none of them.
        Block::Head
        | Block::Pipeline
        | Block::Optimizer
        | Block::Input
        | Block::Interaction
        | Block::Decode
        | Block::Conv => return None,
    };
    let b = cx.b.f64();
    let pass = if op.phase == Phase::Forward { "forward" } else { "backward" };
    let layer = op.layer;
    let words = block_words(op.block);
    let level_of = |st: Strategy| part.levels().iter().position(|x| x.strategy == st);
    let bw = |v: &LevelBw, spec_len: usize, level: usize| v.sel(spec_len, level);
    let lambda = cx.lookup_bytes_per_device;
    let lambda_terms = || {
        vec![
            term("lookup", "embedding bytes read per sample", cx.counts.lookup_bytes.f64(), Unit::Bytes),
            term("B_E", "embedding batch per GPU", cx.batch(Batch::Emb) as f64, Unit::Count),
            term("shard_E", "table shards (product of mp degrees)", part.f.shard as f64, Unit::Count),
        ]
    };
    let ex = match (op.kind, op.block) {
        (OpKind::Compute, Block::Emb) => {
            let mut terms = lambda_terms();
            terms.push(term("B_mem", "effective HBM bandwidth", cx.net.mem_bw_bytes_per_s, Unit::BytesPerS));
            Explanation {
                what: format!("Embedding lookups ({pass}): the rows this GPU reads from HBM"),
                formula: "(lookup x B_E / shard_E) / B_mem".into(),
                terms,
                seconds: cx.emb_lookup_s(),
                note: None,
            }
        }
        (OpKind::Compute, _) => {
            let phi = cx.local_flops(layer_flops, batch, &part);
            let terms = vec![
                term("FLOPs", "forward FLOPs of the layer per sample", layer_flops.f64(), Unit::Flops),
                term("B", "local batch", cx.batch(batch) as f64, Unit::Count),
                term("tp", "tensor-parallel degree", part.f.tp as f64, Unit::Count),
                term(
                    "F",
                    "effective FLOP rate per GPU (datasheet peak x utilisation)",
                    cx.flops_per_s,
                    Unit::FlopsPerS,
                ),
            ];
            let (formula, seconds) = if op.phase == Phase::Forward {
                ("(FLOPs x B / tp) / F", cx.fwd_s(phi))
            } else {
                ("2 x (FLOPs x B / tp) / F", cx.bwd_s(phi))
            };
            Explanation {
                what: format!("GEMMs of {words} layer {layer}, {pass} pass (backward: twice the forward FLOPs)"),
                formula: formula.into(),
                terms,
                seconds,
                note: None,
            }
        }
        (OpKind::EmbAllToAll, _) => {
            let level = level_of(Strategy::Mp)?;
            let g = part.levels()[level].degree;
            let mut terms = lambda_terms();
            terms.push(term("g", "mp degree of the level", g as f64, Unit::Count));
            terms.push(term(
                "A2A",
                "all-to-all bandwidth of the level",
                bw(&cx.net.all2all, part.len(), level),
                Unit::BytesPerS,
            ));
            Explanation {
                what: format!("All-to-all of looked-up embedding rows ({pass}): sharded tables send each GPU its rows"),
                formula: "2 x ((lookup x B_E / shard_E) / g) / A2A".into(),
                terms,
                seconds: cx.emb_all2all_s(level),
                note: None,
            }
        }
        (OpKind::EmbAllReduce, _) => {
            let level = level_of(Strategy::Ddp).unwrap_or(0);
            let ar = bw(&cx.net.allreduce, part.len(), level);
            let mut terms = lambda_terms();
            terms.push(term("AR", "all-reduce bandwidth of the level", ar, Unit::BytesPerS));
            Explanation {
                what: "All-reduce of embedding gradients (data-parallel tables)".to_owned(),
                formula: "(lookup x B_E / shard_E) / AR".into(),
                terms,
                seconds: lambda / ar,
                note: Some("MAD-Max sizes this all-reduce by the bytes looked up, not by the table size (quirk Q8)."),
            }
        }
        (OpKind::WeightAllGather, _) => {
            let terms = vec![
                term("W", "parameters of the layer's weight block", w.f64(), Unit::Params),
                term("shard", "weight shards (product of fsdp, tp, pp degrees)", part.f.shard as f64, Unit::Count),
                term("g0", "degree of level 0", part.first_degree() as f64, Unit::Count),
                term("b", "bytes per parameter", b, Unit::BytesPerElement),
                term("AG", "all-gather bandwidth of level 0", bw(&cx.net.allgather, part.len(), 0), Unit::BytesPerS),
            ];
            let note = (!part.first_is(Strategy::Fsdp)).then_some(
                "MAD-Max's ViT backward emits this all-gather whatever the strategy, so it moves weights that are not sharded (quirk Q2).",
            );
            Explanation {
                what: format!("All-gather of {words} layer {layer}'s weights before its {pass} GEMMs (FSDP)"),
                formula: "((W / shard) x g0) x b / AG".into(),
                terms,
                seconds: cx.allgather_s(w, &part),
                note,
            }
        }
        (OpKind::GradReduceScatter | OpKind::GradAllReduce, _) => {
            let rs = op.kind == OpKind::GradReduceScatter;
            let level = level_of(if rs { Strategy::Fsdp } else { Strategy::Ddp })?;
            let sigma = ReferenceCx::shard_factors(&part)[level];
            let link =
                if rs { bw(&cx.net.reducescatter, part.len(), 0) } else { bw(&cx.net.allreduce, part.len(), level) };
            let terms = vec![
                term("W", "parameters of the layer's weight block", w.f64(), Unit::Params),
                term("sigma", "running shard factor at this level", sigma.f64(), Unit::Count),
                term("b", "bytes per parameter", b, Unit::BytesPerElement),
                term(if rs { "RS" } else { "AR" }, "collective bandwidth of the level", link, Unit::BytesPerS),
            ];
            Explanation {
                what: format!(
                    "{} of {words} layer {layer}'s weight gradients ({})",
                    if rs { "Reduce-scatter" } else { "All-reduce" },
                    if rs { "FSDP" } else { "data parallel" }
                ),
                formula: (if rs { "(W / sigma) x b / RS" } else { "(W / sigma) x b / AR" }).into(),
                terms,
                seconds: (w / sigma * cx.b).f64() / link,
                note: Some("The shard factor runs over the levels in order, so the size depends on the order of strategies (quirk Q13)."),
            }
        }
        (OpKind::ActAllReduce, _) => {
            let level = level_of(Strategy::Tp)?;
            // Q9: DLRM_Transformer selects some of these bandwidths with the other spec's length.
            let spec_len = match (dlrm_t, op.block, op.phase) {
                (true, Block::MlpTop, Phase::Backward) => cx.transformer?.len(),
                (true, Block::Attn, Phase::Backward) => cx.mlp?.len(),
                _ => part.len(),
            };
            let ar = bw(&cx.net.allreduce, spec_len, level);
            let (bytes, mut terms, formula) = act_terms(&cx, s, is_mlp)?;
            terms.push(term("AR", "all-reduce bandwidth of the tp level", ar, Unit::BytesPerS));
            Explanation {
                what: format!(
                    "All-reduce of {words} layer {layer}'s activations across the tensor-parallel group ({pass})"
                ),
                formula: formula.into(),
                terms,
                seconds: bytes / ar,
                note: (spec_len != part.len())
                    .then_some("MAD-Max picks this bandwidth with the other component's plan length (quirk Q9)."),
            }
        }
        (OpKind::MoeDispatch | OpKind::MoeCombine, _) => {
            let level = level_of(Strategy::Tp)?;
            let experts = match &s.model.arch {
                Arch::DlrmMoe(_, m) | Arch::LlmMoe(_, m) => m.experts,
                _ => return None,
            };
            let (bytes_num, mut terms, _) = act_terms_num(&cx, s, is_mlp)?;
            let a2a = bw(&cx.net.all2all, part.len(), level);
            terms.push(term("X", "experts", experts as f64, Unit::Count));
            terms.push(term("A2A", "all-to-all bandwidth of the tp level", a2a, Unit::BytesPerS));
            Explanation {
                what: format!(
                    "MoE {} all-to-all of layer {layer} ({pass})",
                    if op.kind == OpKind::MoeDispatch { "dispatch" } else { "combine" }
                ),
                formula: (if is_mlp { "((B x d x b) / X) / A2A" } else { "((B x s x a x b) / X) / A2A" }).into(),
                terms,
                seconds: (bytes_num / int(experts)).f64() / a2a,
                note: Some("MAD-Max sizes MoE all-to-alls by activations / experts and emits them only with tensor parallelism (quirk Q19)."),
            }
        }
        // The default model's kinds: reference mode emits none of them.
        (OpKind::ActAllGather | OpKind::ActReduceScatter | OpKind::PipeTransfer | OpKind::KvRing | OpKind::Idle, _) => {
            return None
        }
    };
    Some(ex)
}

/// Activation bytes of a layer for the local batch, with their terms and formula.
fn act_terms(cx: &ReferenceCx, s: &Scenario, mlp: bool) -> Option<(f64, Vec<Term>, &'static str)> {
    let (n, t, f) = act_terms_num(cx, s, mlp)?;
    Some((n.f64(), t, f))
}

fn act_terms_num(cx: &ReferenceCx, s: &Scenario, mlp: bool) -> Option<(Num, Vec<Term>, &'static str)> {
    let b = cx.b;
    if mlp {
        let d = match &s.model.arch {
            Arch::Dlrm(d) | Arch::DlrmMoe(d, _) | Arch::DlrmTransformer(d, _) => d.mlp_dim,
            _ => return None,
        };
        let bm = cx.batch(Batch::Mlp);
        let terms = vec![
            term("B", "MLP batch per GPU", bm as f64, Unit::Count),
            term("d", "MLP width", d as f64, Unit::Count),
            term("b", "bytes per element", b.f64(), Unit::BytesPerElement),
        ];
        Some((int(bm) * int(d) * b, terms, "(B x d x b) / AR"))
    } else {
        let t = match &s.model.arch {
            Arch::DlrmTransformer(_, t) => t.clone(),
            Arch::Llm(l) | Arch::LlmMoe(l, _) => l.transformer.clone(),
            Arch::Vit(v) => v.transformer(),
            _ => return None,
        };
        let bt = cx.batch(Batch::Transformer);
        let terms = vec![
            term("B", "transformer batch per GPU", bt as f64, Unit::Count),
            term("s", "sequence length", t.seq_len as f64, Unit::Count),
            term("a", "hidden size", t.attention_dim as f64, Unit::Count),
            term("b", "bytes per element", b.f64(), Unit::BytesPerElement),
        ];
        Some((int(bt) * int(t.seq_len) * int(t.attention_dim) * b, terms, "(B x s x a x b) / AR"))
    }
}
