//! The default model's transformer: parameters, FLOPs, element-wise traffic and activation
//! memory per token, as models are trained today (attention's s^2 terms, causal or not,
//! grouped-query attention, SwiGLU or GELU feed-forward, the output layer, tied embeddings,
//! mixture-of-experts feed-forward).
//!
//! Everything here is per token and for the whole model (no parallelism); the builder divides
//! by tensor-parallel degrees. Sources: Narayanan et al. 2021 (Megatron-LM's FLOPs, eq. 3),
//! Korthikanti et al. 2022 (activation memory, section 4), Shazeer 2020 (GLU variants),
//! Ainslie et al. 2023 (GQA), Dao et al. 2022 (FlashAttention).

use super::calibration::{
    DROPOUT_PASSES, FLASH1_EFFICIENCY, FLASH1_H100_EFFICIENCY, FLASH2_EFFICIENCY, HIDDEN_PASSES, SCORE_ELEMENT_PASSES,
};
use super::gemm::Gemm;
use crate::engine::ops::Block;
use crate::engine::scenario::{Arch, Attention, Ffn, Model};

/// A transformer's dimensions as the default model uses them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dims {
    pub layers: u64,
    /// Hidden size h.
    pub hidden: f64,
    /// Query heads a.
    pub heads: f64,
    /// Key/value heads (grouped-query attention); `heads` without GQA.
    pub kv_heads: f64,
    /// Width of each head when the model states it; `None`: `hidden / heads`.
    pub head_size: Option<f64>,
    /// Feed-forward inner width f.
    pub ffn: f64,
    pub ffn_kind: Ffn,
    /// Output classes of the logits layer V (0: no output layer, as for ViT here).
    pub vocab: f64,
    /// Input width of a patch projection (ViT: 3 p^2; 0 for token embeddings).
    pub patch_inputs: f64,
    /// Tokens per sample s.
    pub seq: f64,
    /// Experts per feed-forward layer (1: dense).
    pub experts: f64,
    /// Experts each token visits (1: dense).
    pub active: f64,
    pub capacity_factor: f64,
    /// True when causal masking halves the score work (causal attention in a fused kernel).
    pub causal_skip: bool,
    /// How attention scores are computed: through HBM, or in a fused kernel (which one).
    pub attention: Attention,
    pub tied_embeddings: bool,
    /// Whether the model trains with dropout (its masks are stored, its passes timed).
    pub dropout: bool,
    /// Bytes per weight and per activation element e.
    pub elem_bytes: f64,
}

/// Forward FLOPs per token of one layer, split by block.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayerFlops {
    /// Q, K, V and output projections: `2 h (q + 2 kv d_head) + 2 q h`, q = `a d_head` (= h
    /// unless the heads are wider).
    pub attn_linear: f64,
    /// Scores `Q K^T` and context `P V`: `4 s q` (halved when causal work is skipped).
    pub attn_scores: f64,
    /// Feed-forward GEMMs of the experts a token visits: `2 m h f x active x capacity`,
    /// m = 2 (GELU) or 3 (SwiGLU), plus the router `2 h X`.
    pub ffn: f64,
}

impl LayerFlops {
    pub fn total(&self) -> f64 {
        self.attn_linear + self.attn_scores + self.ffn
    }
}

impl Dims {
    /// The default model's view of a transformer model; `None` for the DLRM families.
    pub fn of(m: &Model) -> Option<Dims> {
        let elem_bytes = m.bytes_per_dense_param.f64();
        let (t, vocab, patch_inputs, seq, moe) = match &m.arch {
            Arch::Llm(l) => (&l.transformer, l.vocab as f64, 0.0, l.transformer.seq_len as f64, None),
            Arch::LlmMoe(l, moe) => (&l.transformer, l.vocab as f64, 0.0, l.transformer.seq_len as f64, Some(moe)),
            Arch::Vit(v) => {
                // MAD-Max's ViT omits the class token (SPEC Q26); the default model counts it.
                return Some(Dims {
                    layers: v.layers,
                    hidden: v.attention_dim as f64,
                    heads: v.heads as f64,
                    kv_heads: m.shape.kv_heads.unwrap_or(v.heads) as f64,
                    head_size: m.shape.head_dim.map(|d| d as f64),
                    ffn: v.fc_dim as f64,
                    ffn_kind: m.shape.ffn,
                    vocab: 0.0,
                    patch_inputs: v.vocab() as f64,
                    seq: v.seq_len() as f64 + 1.0,
                    experts: 1.0,
                    active: 1.0,
                    capacity_factor: 1.0,
                    causal_skip: m.shape.causal && m.shape.attention != Attention::Materialized,
                    attention: m.shape.attention,
                    tied_embeddings: false,
                    dropout: m.shape.dropout,
                    elem_bytes,
                });
            }
            _ => return None,
        };
        let (experts, active) = moe.map_or((1.0, 1.0), |x| (x.experts as f64, x.active_experts as f64));
        Some(Dims {
            layers: t.layers,
            hidden: t.attention_dim as f64,
            heads: t.heads as f64,
            kv_heads: m.shape.kv_heads.unwrap_or(t.heads) as f64,
            head_size: m.shape.head_dim.map(|d| d as f64),
            ffn: t.fc_dim as f64,
            ffn_kind: m.shape.ffn,
            vocab,
            patch_inputs,
            seq,
            experts,
            active,
            capacity_factor: if moe.is_some() { m.shape.capacity_factor } else { 1.0 },
            causal_skip: m.shape.causal && m.shape.attention != Attention::Materialized,
            attention: m.shape.attention,
            tied_embeddings: m.shape.tied_embeddings,
            dropout: m.shape.dropout,
            elem_bytes,
        })
    }

    /// True for a mixture-of-experts model.
    pub fn is_moe(&self) -> bool {
        self.experts > 1.0
    }

    /// Width of each attention head d_head: as stated, else `h / a`.
    pub fn head_dim(&self) -> f64 {
        self.head_size.unwrap_or(self.hidden / self.heads)
    }

    /// Width of the queries, and of the attention's output before its projection: `a d_head`,
    /// the hidden size h unless the model states wider (or narrower) heads.
    pub fn q_width(&self) -> f64 {
        self.head_size.map_or(self.hidden, |d| self.heads * d)
    }

    /// Width of the fused Q, K, V projection's output: `a d_head + 2 kv d_head`.
    pub fn qkv_width(&self) -> f64 {
        self.q_width() + 2.0 * self.kv_heads * self.head_dim()
    }

    /// Forward FLOPs per token of one layer.
    pub fn layer_flops(&self) -> LayerFlops {
        let h = self.hidden;
        let score_tokens = if self.causal_skip { self.seq / 2.0 } else { self.seq };
        let routed = self.active * self.capacity_factor;
        let router = if self.is_moe() { 2.0 * h * self.experts } else { 0.0 };
        LayerFlops {
            attn_linear: 2.0 * h * self.qkv_width() + 2.0 * self.q_width() * h,
            attn_scores: 4.0 * score_tokens * self.q_width(),
            ffn: 2.0 * self.ffn_kind.matrices() as f64 * h * self.ffn * routed + router,
        }
    }

    /// True when attention scores go through HBM (no fused kernel).
    pub fn materialized(&self) -> bool {
        self.attention == Attention::Materialized
    }

    /// GEMM-rate FLOPs one attention-score FLOP costs in time: 1 when the scores are batched
    /// GEMMs, `1 / efficiency` in a fused kernel ([`FLASH2_EFFICIENCY`],
    /// [`FLASH1_EFFICIENCY`], [`FLASH1_H100_EFFICIENCY`]).
    pub fn score_cost(&self) -> f64 {
        match self.attention {
            Attention::Materialized => 1.0,
            Attention::Flash => 1.0 / FLASH2_EFFICIENCY,
            Attention::Flash1 => 1.0 / FLASH1_EFFICIENCY,
            Attention::Flash1H100 => 1.0 / FLASH1_H100_EFFICIENCY,
        }
    }

    /// [`Dims::layer_flops`] with the score FLOPs weighted by [`Dims::score_cost`]: divided by
    /// the GEMM rate, they give the time.
    pub fn layer_timed_flops(&self) -> LayerFlops {
        let f = self.layer_flops();
        LayerFlops { attn_scores: f.attn_scores * self.score_cost(), ..f }
    }

    /// Forward FLOPs per token of the output layer (`2 h V`) and of a patch projection.
    pub fn edge_flops(&self) -> f64 {
        2.0 * self.hidden * (self.vocab + self.patch_inputs)
    }

    /// Forward FLOPs per token of the whole model.
    pub fn forward_flops_per_token(&self) -> f64 {
        self.layers as f64 * self.layer_flops().total() + self.edge_flops()
    }

    /// Weights of one layer: (attention + norms, one expert's feed-forward). Dense models have
    /// one expert.
    pub fn layer_params(&self) -> (f64, f64) {
        let h = self.hidden;
        let attn = h * self.qkv_width() + self.q_width() * h + 4.0 * h; // + two norms' scale and bias
        let expert = self.ffn_kind.matrices() as f64 * h * self.ffn;
        let router = if self.is_moe() { h * self.experts } else { 0.0 };
        (attn + router, expert)
    }

    /// Weights of the input embedding (or patch projection) and of the output layer (0 when
    /// tied to the input embedding).
    pub fn edge_params(&self) -> (f64, f64) {
        let input = self.hidden * (self.vocab.max(self.patch_inputs));
        let output = if self.tied_embeddings || self.vocab == 0.0 { 0.0 } else { self.hidden * self.vocab };
        (input, output)
    }

    /// Every weight of the model.
    pub fn params(&self) -> f64 {
        let (attn, expert) = self.layer_params();
        let (input, output) = self.edge_params();
        self.layers as f64 * (attn + expert * self.experts) + input + output
    }

    /// The GEMMs of a block's forward pass over `t` tokens on one GPU of `tp`-way tensor and
    /// `ep`-way expert parallelism, each with how many times it runs. Attention: the fused Q, K,
    /// V projection (column-parallel: `n` split by tp) and the output projection (row-parallel:
    /// `k` split by tp); its score GEMMs are timed apart ([`Dims::layer_timed_flops`]).
    /// Feed-forward: the first matrix (or the gate and up matrices together, SwiGLU) and the
    /// second, once per expert this GPU holds that the tokens visit (all of them unless the
    /// tokens are fewer, as in decoding), on the tokens routed to it, and the router.
    /// Shoeybi et al. 2019 (Megatron-LM) for the splits.
    pub fn block_gemms(&self, block: Block, t: f64, tp: f64, ep: f64) -> [(Gemm, f64); 3] {
        let h = self.hidden;
        if block == Block::Attn {
            let qkv = Gemm { m: t, n: self.qkv_width() / tp, k: h };
            let proj = Gemm { m: t, n: h, k: self.q_width() / tp };
            return [(qkv, 1.0), (proj, 1.0), (Gemm::NONE, 0.0)];
        }
        let f = self.ffn / tp;
        let routed = t * self.active * self.capacity_factor;
        let local_experts = (self.experts / ep).min(routed);
        let m = routed / local_experts;
        let up = Gemm { m, n: (self.ffn_kind.matrices() - 1) as f64 * f, k: h };
        let down = Gemm { m, n: h, k: f };
        let router = if self.is_moe() { Gemm { m: t, n: self.experts, k: h } } else { Gemm::NONE };
        [(up, local_experts), (down, local_experts), (router, 1.0)]
    }

    /// Element-wise bytes per token of one layer's forward pass outside the tensor-parallel
    /// regions (norms, dropouts, residual adds): `HIDDEN_PASSES x e x h`, less
    /// `DROPOUT_PASSES x e x h` without dropout, split between the attention and feed-forward
    /// blocks. Sequence parallelism divides it by tp.
    pub fn hidden_bytes(&self) -> f64 {
        let passes = HIDDEN_PASSES - if self.dropout { 0.0 } else { DROPOUT_PASSES };
        passes * self.elem_bytes * self.hidden / 2.0
    }

    /// Element-wise bytes per token of the attention scores (softmax, dropout) when they go
    /// through HBM: `a s (4 e + 1)`, or `a s 2 e` for the softmax alone without dropout; 0
    /// with a fused kernel. Tensor parallelism divides it.
    pub fn score_bytes(&self) -> f64 {
        if !self.materialized() {
            0.0
        } else if self.dropout {
            self.heads * self.seq * (SCORE_ELEMENT_PASSES * self.elem_bytes + 1.0)
        } else {
            self.heads * self.seq * (SCORE_ELEMENT_PASSES - 2.0) * self.elem_bytes
        }
    }

    /// Element-wise bytes per token of the feed-forward activation (GELU reads and writes f,
    /// SwiGLU reads 2f and writes f), for the experts a token visits.
    pub fn ffn_act_bytes(&self) -> f64 {
        let passes = match self.ffn_kind {
            Ffn::Gelu => 2.0,
            Ffn::Swiglu => 3.0,
        };
        passes * self.elem_bytes * self.ffn * self.active * self.capacity_factor
    }

    /// Activation bytes one layer keeps per token for the backward pass without
    /// recomputation, as (outside tensor-parallel regions, inside them, attention scores).
    /// Korthikanti et al.'s `34 s b h + 5 a s^2 b` at e = 2, h = f/4, kv = a, generalised:
    /// outside: two norm inputs, the QKV and FC1 inputs (4e) and two dropout masks (2);
    /// inside: Q, K, V, the projection input, the FFN activations; scores: softmax output,
    /// dropout mask and output (`a s (e + 1 + e)`). Without dropout, no masks and no dropout
    /// output: `4 e h` outside and `a s e` of scores.
    pub fn stored_bytes(&self) -> (f64, f64, f64) {
        self.stored_bytes_with_gemm_inputs(self.elem_bytes)
    }

    /// [`Dims::stored_bytes`] with the four GEMM inputs kept for the weight gradients (QKV and
    /// FC1 outside, the projection's and FC2's inside) at `g` bytes per element: FP8 training
    /// keeps their FP8 copies (Transformer Engine), 1 byte.
    pub fn stored_bytes_with_gemm_inputs(&self, g: f64) -> (f64, f64, f64) {
        let e = self.elem_bytes;
        let h = self.hidden;
        let masks = if self.dropout { 2.0 } else { 0.0 };
        let outside = (2.0 * e + 2.0 * g + masks) * h;
        let qkv = e * self.qkv_width();
        let f = self.ffn * self.active * self.capacity_factor;
        // GELU keeps its input and FC2's input; SwiGLU the gate, the up projection and FC2's input.
        let ffn_acts = match self.ffn_kind {
            Ffn::Gelu => e * f + g * f,
            Ffn::Swiglu => 2.0 * e * f + g * f,
        };
        let inside = qkv + g * self.q_width() + ffn_acts;
        let per_score = if self.dropout { 2.0 * e + 1.0 } else { e };
        let scores = if self.materialized() { self.heads * self.seq * per_score } else { 0.0 };
        (outside, inside, scores)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GPT-3 175B as Megatron-LM trains it.
    fn gpt3() -> Dims {
        Dims {
            layers: 96,
            hidden: 12288.0,
            heads: 96.0,
            kv_heads: 96.0,
            head_size: None,
            ffn: 4.0 * 12288.0,
            ffn_kind: Ffn::Gelu,
            vocab: 51200.0,
            patch_inputs: 0.0,
            seq: 2048.0,
            experts: 1.0,
            active: 1.0,
            capacity_factor: 1.0,
            causal_skip: false,
            attention: Attention::Materialized,
            tied_embeddings: true,
            dropout: true,
            elem_bytes: 2.0,
        }
    }

    #[test]
    fn forward_flops_match_megatrons_formula() {
        // Narayanan et al. 2021, eq. 3 without recomputation: a training iteration costs
        // 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) FLOPs, i.e. 3x the forward pass.
        let d = gpt3();
        let (l, h, s, v) = (96.0, 12288.0, 2048.0, 51200.0);
        let megatron_per_token = 72.0 * l * h * h * (1.0 + s / (6.0 * h) + v / (12.0 * l * h)) / 3.0;
        let ours = d.forward_flops_per_token();
        assert!((ours / megatron_per_token - 1.0).abs() < 1e-12, "{ours} vs {megatron_per_token}");
    }

    #[test]
    fn activation_memory_matches_korthikanti() {
        // 34 s b h + 5 a s^2 b bytes per layer (Korthikanti et al. 2022, eq. 1), per token.
        let d = gpt3();
        let (o, i, sc) = d.stored_bytes();
        let (h, a, s) = (12288.0, 96.0, 2048.0);
        assert_eq!(o + i, 34.0 * h);
        assert_eq!(sc, 5.0 * a * s);
        // Tensor parallel t without sequence parallelism: 10 + 24/t outside / inside.
        assert_eq!(o, 10.0 * h);
        assert_eq!(i, 24.0 * h);
    }

    #[test]
    fn a_model_trained_without_dropout_keeps_no_masks_and_makes_fewer_passes() {
        let with = gpt3();
        let without = Dims { dropout: false, ..gpt3() };
        let (h, a, s, e) = (12288.0, 96.0, 2048.0, 2.0);
        // Korthikanti's 34 s b h + 5 a s^2 b less the two 1-byte masks (2 s b h) and, of the
        // scores, the dropout mask and output (3 a s^2 b): 32 s b h + 2 a s^2 b.
        let (o, i, sc) = without.stored_bytes();
        assert_eq!((o, i, sc), (8.0 * h, 24.0 * h, 2.0 * a * s));
        assert_eq!(with.stored_bytes().1, i);
        // Element-wise traffic: 10 passes over the hidden vector instead of 14, and the
        // softmax's read and write of the scores without the dropout's.
        assert_eq!(without.hidden_bytes() / with.hidden_bytes(), 10.0 / 14.0);
        assert_eq!(without.score_bytes(), a * s * 2.0 * e);
        assert_eq!(with.score_bytes(), a * s * (4.0 * e + 1.0));
        // FLOPs and weights do not change.
        assert_eq!((without.layer_flops(), without.params()), (with.layer_flops(), with.params()));
    }

    #[test]
    fn swiglu_gqa_and_causal_flash_change_what_they_should() {
        // LLaMA-2 70B: h 8192, 64 heads, 8 kv heads, SwiGLU f 28672, vocab 32000, 80 layers.
        let d = Dims {
            layers: 80,
            hidden: 8192.0,
            heads: 64.0,
            kv_heads: 8.0,
            ffn: 28672.0,
            ffn_kind: Ffn::Swiglu,
            vocab: 32000.0,
            seq: 4096.0,
            causal_skip: true,
            attention: Attention::Flash,
            tied_embeddings: false,
            ..gpt3()
        };
        // About 69 billion parameters (Touvron et al. 2023 report 70B).
        let p = d.params();
        assert!((68.5e9..69.5e9).contains(&p), "{p}");
        let f = d.layer_flops();
        assert_eq!(f.attn_linear, 2.0 * 8192.0 * (8192.0 + 2.0 * 8.0 * 128.0) + 2.0 * 8192.0 * 8192.0);
        assert_eq!(f.attn_scores, 4.0 * 2048.0 * 8192.0); // causal: half of s
        assert_eq!(f.ffn, 2.0 * 3.0 * 8192.0 * 28672.0);
        assert_eq!(d.score_bytes(), 0.0);
        // A fused kernel's score FLOPs cost 0.8 / 0.615 GEMM FLOPs of time (FlashAttention-2),
        // 0.8 / 0.325 (the first FlashAttention); nothing else changes.
        let timed = d.layer_timed_flops();
        assert!((timed.attn_scores - 0.8 / 0.615 * f.attn_scores).abs() < 1e-6 * f.attn_scores);
        assert_eq!((timed.attn_linear, timed.ffn), (f.attn_linear, f.ffn));
        let v1 = Dims { attention: Attention::Flash1, ..d };
        assert!((v1.layer_timed_flops().attn_scores - 0.8 / 0.325 * f.attn_scores).abs() < 1e-6 * f.attn_scores);
        assert_eq!((v1.layer_flops(), v1.score_bytes()), (f, 0.0));
        // The same kernels on an H100: 32.5% x 35 / 61.5 = 18.5% of its peak, against GEMMs at
        // 74.6% (H100_GEMM_UTIL).
        let h100 = Dims { attention: Attention::Flash1H100, ..d };
        let share: f64 = 0.325 * 0.35 / 0.615;
        assert!((share - 0.185).abs() < 5e-4, "{share}");
        let cost = share.recip() * super::super::calibration::H100_GEMM_UTIL;
        assert!((h100.layer_timed_flops().attn_scores - cost * f.attn_scores).abs() < 1e-6 * f.attn_scores);
        assert_eq!(h100.layer_flops(), f);
        let batched = Dims { attention: Attention::Materialized, ..d };
        assert_eq!(batched.layer_timed_flops(), batched.layer_flops());
    }

    #[test]
    fn moe_counts_active_experts_for_flops_and_all_experts_for_weights() {
        let dense = gpt3();
        let moe = Dims { experts: 8.0, active: 2.0, ..gpt3() };
        let (_, expert) = moe.layer_params();
        let extra_params = moe.params() - dense.params();
        let router = 96.0 * 12288.0 * 8.0;
        assert!((extra_params - (96.0 * 7.0 * expert + router)).abs() < 1.0);
        let df = dense.layer_flops().ffn;
        assert_eq!(moe.layer_flops().ffn, 2.0 * df + 2.0 * 12288.0 * 8.0);
    }

    #[test]
    fn heads_wider_than_the_hidden_size_widen_the_projections_and_the_scores() {
        // Qwen3-32B (its config.json): 64 layers of 5,120, 64 query heads and 8 key/value heads
        // of 128 (8,192 wide together), SwiGLU 25,600, vocabulary 151,936, untied: Qwen's 32.8 B
        // parameters, 31.2 B of them outside the embeddings.
        let qwen = Dims {
            layers: 64,
            hidden: 5120.0,
            heads: 64.0,
            kv_heads: 8.0,
            head_size: Some(128.0),
            ffn: 25600.0,
            ffn_kind: Ffn::Swiglu,
            vocab: 151936.0,
            tied_embeddings: false,
            seq: 4096.0,
            ..gpt3()
        };
        assert_eq!((qwen.head_dim(), qwen.q_width(), qwen.qkv_width()), (128.0, 8192.0, 8192.0 + 2048.0));
        let (input, output) = qwen.edge_params();
        assert!((qwen.params() - 32.76e9).abs() < 0.01e9, "{}", qwen.params());
        assert!((qwen.params() - input - output - 31.2e9).abs() < 0.01e9);
        // Per token: projections 2 h (q + 2 kv d) + 2 q h, scores 4 s q.
        let f = qwen.layer_flops();
        assert_eq!(f.attn_linear, 2.0 * 5120.0 * 10240.0 + 2.0 * 8192.0 * 5120.0);
        assert_eq!(f.attn_scores, 4.0 * 4096.0 * 8192.0);
        // The output projection reads the 8,192-wide attention output.
        let [_, (proj, _), _] = qwen.block_gemms(Block::Attn, 10.0, 2.0, 1.0);
        assert_eq!((proj.n, proj.k), (5120.0, 4096.0));
        // Without a stated head size nothing changes: h / a, and q = h.
        let plain = Dims { head_size: None, ..qwen };
        assert_eq!((plain.head_dim(), plain.q_width()), (80.0, 5120.0));
    }
}
