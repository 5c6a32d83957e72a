//! Reference mode: per-sample model quantities (SPEC section 4) and per-device task quantities
//! (SPEC section 5.1), as exact integers until the reference's first division.

use crate::engine::num::Num;
use crate::engine::scenario::{Arch, Dlrm, Moe, Scenario, Spec, Strategy, Transformer};

/// Integer shorthand.
pub fn int(v: u64) -> Num {
    Num::Int(v as i128)
}

/// The parallel factors of a spec (SPEC 5.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Factors {
    /// Batch replication: product of ddp and fsdp degrees.
    pub dup: u64,
    /// Weight sharding: product of tp, pp and fsdp degrees.
    pub shard: u64,
    /// Degree of the last tp level, or 1 (SPEC Q15).
    pub tp: u64,
}

impl Factors {
    pub fn of(spec: &Spec) -> Factors {
        use Strategy::*;
        Factors {
            dup: spec.product_of(&[Ddp, Fsdp]),
            shard: spec.product_of(&[Tp, Pp, Fsdp]),
            tp: spec.levels().iter().rev().find(|l| l.strategy == Tp).map_or(1, |l| l.degree),
        }
    }

    /// Embedding factors: ddp replicates, mp shards.
    pub fn of_emb(spec: &Spec) -> Factors {
        Factors { dup: spec.product_of(&[Strategy::Ddp]), shard: spec.product_of(&[Strategy::Mp]), tp: 1 }
    }
}

/// Per-sample FLOPs of each layer kind, and weight-block sizes, of one model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layers {
    /// MLP layer (DLRM) or bottom MLP layer (DLRM_MoE): `2 d^2`.
    pub mlp_flops: Num,
    /// Top MLP layer: `2 d^2`, or `2 k d^2` for DLRM_MoE.
    pub top_mlp_flops: Num,
    /// Parameters of a bottom MLP layer, `d^2`.
    pub mlp_block: Num,
    /// Parameters a top MLP layer's collectives move: `d^2`, or `X d^2` for DLRM_MoE (Q19).
    pub top_mlp_block: Num,
    /// Attention layer: `2 * 4 a^2 * s`.
    pub attn_flops: Num,
    /// Feed-forward layer: `2 * 2 a f * s`, times `k` for LLM_MoE.
    pub fc_flops: Num,
    /// Attention parameters `4 a^2`.
    pub attn_block: Num,
    /// FC parameters the collectives move: `2 a f`, or `X 2 a f` for LLM_MoE (Q19).
    pub fc_block: Num,
}

/// Model-level counts (SPEC section 4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelCounts {
    pub mlp_params: Num,
    pub emb_params: Num,
    pub transformer_params: Num,
    pub total_flops: Num,
    /// Embedding bytes read per sample.
    pub lookup_bytes: Num,
    pub layers: Layers,
}

impl ModelCounts {
    pub fn total_params(&self) -> Num {
        self.mlp_params + self.emb_params + self.transformer_params
    }
}

fn sq(v: u64) -> Num {
    int(v) * int(v)
}

fn dlrm_counts(d: &Dlrm, be: Num) -> (Num, Num, Num) {
    let d2 = sq(d.mlp_dim);
    let emb_params = int(d.num_tables) * int(d.entries_per_table) * int(d.emb_dim);
    let lookup = int(d.num_tables) * int(d.pooling_size) * int(d.emb_dim) * be;
    (d2, emb_params, lookup)
}

fn transformer_layers(t: &Transformer, active: u64, experts: u64) -> (Num, Num, Num, Num) {
    let a = int(t.attention_dim);
    let attn_block = Num::Int(4) * a * a;
    let fc = Num::Int(2) * a * int(t.fc_dim);
    let attn_flops = Num::Int(2) * attn_block * int(t.seq_len);
    let fc_flops = Num::Int(2) * int(active) * fc * int(t.seq_len);
    (attn_flops, fc_flops, attn_block, int(experts) * fc)
}

/// Computes the model counts of a scenario's model.
pub fn model_counts(s: &Scenario) -> ModelCounts {
    let be = s.model.bytes_per_emb_param;
    let zero = Num::Int(0);
    let mut layers = Layers {
        mlp_flops: zero,
        top_mlp_flops: zero,
        mlp_block: zero,
        top_mlp_block: zero,
        attn_flops: zero,
        fc_flops: zero,
        attn_block: zero,
        fc_block: zero,
    };
    match &s.model.arch {
        Arch::Dlrm(d) | Arch::DlrmTransformer(d, _) => {
            let (d2, emb_params, lookup) = dlrm_counts(d, be);
            let l_mlp = int(d.bot_mlp_layers + d.top_mlp_layers);
            layers.mlp_flops = Num::Int(2) * d2;
            layers.top_mlp_flops = layers.mlp_flops;
            layers.mlp_block = d2;
            layers.top_mlp_block = d2;
            let mut total_flops = layers.mlp_flops * l_mlp;
            let mut transformer_params = zero;
            if let Arch::DlrmTransformer(_, t) = &s.model.arch {
                let (af, ff, ab, fb) = transformer_layers(t, 1, 1);
                layers.attn_flops = af;
                layers.fc_flops = ff;
                layers.attn_block = ab;
                layers.fc_block = fb;
                transformer_params = int(t.layers) * (ab + fb);
                total_flops = total_flops + (af + ff) * int(t.layers);
            }
            ModelCounts {
                mlp_params: l_mlp * d2,
                emb_params,
                transformer_params,
                total_flops,
                lookup_bytes: lookup,
                layers,
            }
        }
        Arch::DlrmMoe(d, m) => {
            let (d2, emb_params, lookup) = dlrm_counts(d, be);
            let bot = int(d.bot_mlp_layers);
            let top = int(d.top_mlp_layers);
            layers.mlp_flops = Num::Int(2) * d2;
            layers.top_mlp_flops = Num::Int(2) * int(m.active_experts) * d2;
            layers.mlp_block = d2;
            layers.top_mlp_block = int(m.experts) * d2;
            ModelCounts {
                mlp_params: bot * d2 + int(m.experts) * top * d2,
                emb_params,
                transformer_params: zero,
                total_flops: layers.mlp_flops * bot + layers.top_mlp_flops * top,
                lookup_bytes: lookup,
                layers,
            }
        }
        Arch::Llm(l) => lm_counts(l.vocab, &l.transformer, None, be),
        Arch::LlmMoe(l, m) => lm_counts(l.vocab, &l.transformer, Some(m), be),
        Arch::Vit(v) => lm_counts(v.vocab(), &v.transformer(), None, be),
        // MAD-Max has no CNNs or encoder-decoders: validation refuses them in paper mode.
        Arch::Cnn(_) | Arch::EncDec(_) => ModelCounts {
            mlp_params: zero,
            emb_params: zero,
            transformer_params: zero,
            total_flops: zero,
            lookup_bytes: zero,
            layers,
        },
    }
}

/// LLM, LLM_MoE and ViT (SPEC 4.4-4.6).
fn lm_counts(vocab: u64, t: &Transformer, moe: Option<&Moe>, be: Num) -> ModelCounts {
    let (active, experts) = moe.map_or((1, 1), |m| (m.active_experts, m.experts));
    let (attn_flops, fc_flops, attn_block, fc_block) = transformer_layers(t, active, experts);
    let zero = Num::Int(0);
    let a = int(t.attention_dim);
    let s_len = int(t.seq_len);
    ModelCounts {
        mlp_params: zero,
        emb_params: int(vocab) * a + s_len * a,
        transformer_params: int(t.layers) * (attn_block + fc_block),
        total_flops: (attn_flops + fc_flops) * int(t.layers),
        lookup_bytes: Num::Int(2) * s_len * a * be,
        layers: Layers {
            mlp_flops: zero,
            top_mlp_flops: zero,
            mlp_block: zero,
            top_mlp_block: zero,
            attn_flops,
            fc_flops,
            attn_block,
            fc_block,
        },
    }
}
