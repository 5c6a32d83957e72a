//! The default model's transformer: parameters, FLOPs, element-wise traffic and activation
//! memory per token, as models are trained today (attention's s^2 terms, causal or not,
//! grouped-query attention, SwiGLU or GELU feed-forward, the output layer, tied embeddings,
//! mixture-of-experts feed-forward).
//!
//! Everything here is per token and for the whole model (no parallelism); the builder divides
//! by tensor-parallel degrees. Sources: Narayanan et al. 2021 (Megatron-LM's FLOPs, eq. 3),
//! Korthikanti et al. 2022 (activation memory, section 4), Shazeer 2020 (GLU variants),
//! Ainslie et al. 2023 (GQA), Dao et al. 2022 (FlashAttention).
//!
//! One job: a transformer's quantities per token, before any parallelism divides them.

use super::calibration::{
    DispatchCost, BIAS_GRAD_PASSES, DROPOUT_PASSES, EAGER_DISPATCH, EAGER_NORM_FP32_PASSES, EAGER_NORM_KERNELS,
    EAGER_NORM_PASSES, EAGER_SWIGLU_KERNELS, EAGER_SWIGLU_PASSES, FLASH1_EFFICIENCY, FLASH1_H100_EFFICIENCY,
    FLASH2_EFFICIENCY, FLASH2_H100_EFFICIENCY, FP32_BYTES, FUSED_DISPATCH, GELU_GRAD_PASSES, HIDDEN_PASSES,
    NORM_INPUT_GRAD_PASSES, NORM_PASSES, NORM_WEIGHT_GRAD_PASSES, POSITION_ADD_PASSES, QKV_GRAD_COPY_PASSES,
    RELATIVE_POSITION_BUCKETS, RESIDUAL_JOIN_GRAD_PASSES, ROPE_FUSED_PASSES, ROPE_UNFUSED_PASSES, SCORE_ELEMENT_PASSES,
    SOFTMAX_GRAD_PASSES, SWIGLU_GRAD_PASSES,
};
use super::gemm::{Gemm, GemmGpu};
use crate::engine::ops::Block;
use crate::engine::scenario::{Arch, Attention, Elementwise, Ffn, Llm, Model, MoeDispatch, Positions};

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
    /// Whether the projections and the feed-forward matrices add biases (their gradients'
    /// reductions are timed; their weights, under 0.1%, are not counted).
    pub biases: bool,
    /// How positions are encoded: a learned table's weights and add, or rotary embeddings'
    /// passes over the queries and keys ([`Dims::rope_bytes`]).
    pub positions: Positions,
    /// Bytes per weight and per activation element e.
    pub elem_bytes: f64,
    /// An encoder-decoder's encoder layers: the first `encoder_layers` of `layers`, which read
    /// `cross_seq` tokens per sample with bidirectional self-attention and no cross-attention
    /// ([`Dims::stack_at`]). 0 for every other model.
    pub encoder_layers: u64,
    /// Tokens per sample of the encoder output each decoder token attends to in its
    /// cross-attention block (an encoder-decoder's input length); 0: no cross-attention.
    pub cross_seq: f64,
    /// Weights per hidden unit of each normalisation layer: 2 for LayerNorm's scale and bias,
    /// 1 for T5's RMSNorm, which has a scale only.
    pub norm_params: f64,
    /// How the norms and a gated activation run: fused, or as eager PyTorch operations
    /// ([`Elementwise::Eager`]: more passes, more kernels, FP32 copies kept; [`Dims::eager`]).
    pub elementwise: Elementwise,
    /// How a mixture of experts' token dispatch runs ([`Dims::dispatch_bytes`]).
    pub moe_dispatch: MoeDispatch,
}

/// Element-wise bytes per token of a block's backward pass ([`Dims::backward_bytes`]), each
/// as (outside the tensor-parallel region, inside it): what the activation-gradient pass
/// moves, and what the weight-gradient pass moves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BackwardBytes {
    pub activation: (f64, f64),
    pub weight: (f64, f64),
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
        // A dense transformer of these widths over `seq` tokens per sample; each family then
        // sets what it has apart.
        let plain = |layers: u64, heads: u64, hidden: u64, ffn: u64, seq: f64| Dims {
            layers,
            hidden: hidden as f64,
            heads: heads as f64,
            kv_heads: m.shape.kv_heads.unwrap_or(heads) as f64,
            head_size: m.shape.head_dim.map(|d| d as f64),
            ffn: ffn as f64,
            ffn_kind: m.shape.ffn,
            vocab: 0.0,
            patch_inputs: 0.0,
            seq,
            experts: 1.0,
            active: 1.0,
            capacity_factor: 1.0,
            causal_skip: m.shape.causal && m.shape.attention != Attention::Materialized,
            attention: m.shape.attention,
            tied_embeddings: m.shape.tied_embeddings,
            dropout: m.shape.dropout,
            biases: m.shape.biases,
            positions: m.shape.positions,
            elem_bytes: m.bytes_per_dense_param.f64(),
            encoder_layers: 0,
            cross_seq: 0.0,
            norm_params: 2.0,
            elementwise: m.shape.elementwise,
            moe_dispatch: m.shape.moe_dispatch,
        };
        let lm = |l: &Llm| {
            let t = &l.transformer;
            Dims { vocab: l.vocab as f64, ..plain(t.layers, t.heads, t.attention_dim, t.fc_dim, t.seq_len as f64) }
        };
        Some(match &m.arch {
            Arch::Llm(l) => lm(l),
            Arch::LlmMoe(l, moe) => Dims {
                experts: moe.experts as f64,
                active: moe.active_experts as f64,
                capacity_factor: m.shape.capacity_factor,
                ..lm(l)
            },
            // MAD-Max's ViT omits the class token (SPEC Q26); the default model counts it.
            Arch::Vit(v) => Dims {
                patch_inputs: v.vocab() as f64,
                tied_embeddings: false,
                ..plain(v.layers, v.heads, v.attention_dim, v.fc_dim, v.seq_len() as f64 + 1.0)
            },
            // The decoder stack's view, with the encoder's layers counted in `layers`; T5's
            // norms have a scale only.
            Arch::EncDec(x) => Dims {
                vocab: x.vocab as f64,
                encoder_layers: x.encoder_layers,
                cross_seq: x.input_len as f64,
                norm_params: 1.0,
                ..plain(x.encoder_layers + x.decoder_layers, x.heads, x.attention_dim, x.fc_dim, x.target_len as f64)
            },
            _ => return None,
        })
    }

    /// True for an encoder-decoder model (layers of two kinds, [`Dims::stack_at`]).
    pub fn is_encoder_decoder(&self) -> bool {
        self.encoder_layers > 0 && self.cross_seq > 0.0
    }

    /// The stack layer `l` belongs to, as a model of alike layers: for an encoder-decoder's
    /// first `encoder_layers` layers the encoder (its input length, no causal mask, no
    /// cross-attention), for the others the decoder; the model itself otherwise. Per-token
    /// quantities ([`Dims::layer_flops`], [`Dims::layer_params`], [`Dims::block_gemms`], ...)
    /// of the result are those of layer `l`; its `layers` counts the stack's.
    pub fn stack_at(&self, l: u64) -> Dims {
        if !self.is_encoder_decoder() {
            return *self;
        }
        if l < self.encoder_layers {
            Dims {
                layers: self.encoder_layers,
                seq: self.cross_seq,
                causal_skip: false,
                encoder_layers: 0,
                cross_seq: 0.0,
                ..*self
            }
        } else {
            Dims { layers: self.layers - self.encoder_layers, encoder_layers: 0, ..*self }
        }
    }

    /// The model's stacks of alike layers: (the first layer, the stack's view): one for a
    /// decoder-only or encoder-only model, the encoder's and the decoder's for an
    /// encoder-decoder.
    pub fn stacks(&self) -> impl Iterator<Item = (u64, Dims)> + '_ {
        let stacks = if self.is_encoder_decoder() { 2 } else { 1 };
        [0, self.encoder_layers].into_iter().take(stacks).map(move |l| (l, self.stack_at(l)))
    }

    /// Encoder tokens per decoder token (the input length over the target length): what a
    /// decoder layer's cross-attention keys and values cost per decoder token; 0 without
    /// cross-attention.
    pub fn cross_ratio(&self) -> f64 {
        if self.cross_seq > 0.0 && self.seq > 0.0 {
            self.cross_seq / self.seq
        } else {
            0.0
        }
    }

    /// Residual sub-layers of a block, each with its norm, residual add and dropout: 1, or 2
    /// for a decoder layer's attention block (self-attention, then cross-attention).
    pub fn sublayers(&self, block: Block) -> f64 {
        if block == Block::Attn && self.cross_seq > 0.0 {
            2.0
        } else {
            1.0
        }
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

    /// Forward FLOPs per token of one layer of this stack ([`Dims::stack_at`]). A decoder
    /// layer's cross-attention adds its query and output projections (`4 h q`), the keys and
    /// values of the encoder's tokens (`4 h kv d_head` per encoder token, so times
    /// [`Dims::cross_ratio`] per decoder token) and scores over every encoder token
    /// (`4 s_enc q`, no mask).
    pub fn layer_flops(&self) -> LayerFlops {
        let h = self.hidden;
        let score_tokens = if self.causal_skip { self.seq / 2.0 } else { self.seq };
        let routed = self.active * self.capacity_factor;
        let router = if self.is_moe() { 2.0 * h * self.experts } else { 0.0 };
        let kv = 2.0 * self.kv_heads * self.head_dim();
        let cross_linear =
            if self.cross_seq > 0.0 { 4.0 * h * self.q_width() + 2.0 * h * kv * self.cross_ratio() } else { 0.0 };
        LayerFlops {
            attn_linear: 2.0 * h * self.qkv_width() + 2.0 * self.q_width() * h + cross_linear,
            attn_scores: 4.0 * (score_tokens + self.cross_seq) * self.q_width(),
            ffn: 2.0 * self.ffn_kind.matrices() as f64 * h * self.ffn * routed + router,
        }
    }

    /// True when attention scores go through HBM (no fused kernel).
    pub fn materialized(&self) -> bool {
        self.attention == Attention::Materialized
    }

    /// GEMM-rate FLOPs one attention-score FLOP costs in time: 1 when the scores are batched
    /// GEMMs, `1 / efficiency` in a fused kernel ([`FLASH2_EFFICIENCY`],
    /// [`FLASH2_H100_EFFICIENCY`], [`FLASH1_EFFICIENCY`], [`FLASH1_H100_EFFICIENCY`]).
    pub fn score_cost(&self) -> f64 {
        match self.attention {
            Attention::Materialized => 1.0,
            Attention::Flash => 1.0 / FLASH2_EFFICIENCY,
            Attention::Flash2H100 => 1.0 / FLASH2_H100_EFFICIENCY,
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

    /// Forward FLOPs per sample of the whole model: each stack's layers over its tokens, and
    /// the output layer over the (target) tokens.
    pub fn forward_flops_per_sample(&self) -> f64 {
        let layers: f64 = self.stacks().map(|(_, d)| d.layers as f64 * d.layer_flops().total() * d.seq).sum();
        layers + self.edge_flops() * self.seq
    }

    /// Weights of one layer of this stack: (attention + norms, one expert's feed-forward).
    /// Dense models have one expert. A decoder layer's cross-attention adds its four
    /// projections and a third norm.
    pub fn layer_params(&self) -> (f64, f64) {
        let h = self.hidden;
        let attn = h * self.qkv_width() + self.q_width() * h;
        let norms = 1.0 + self.sublayers(Block::Attn);
        let attn = self.sublayers(Block::Attn) * attn + norms * self.norm_params * h;
        let expert = self.ffn_kind.matrices() as f64 * h * self.ffn;
        let router = if self.is_moe() { h * self.experts } else { 0.0 };
        (attn + router, expert)
    }

    /// Weights of the input embedding (or patch projection) and of the output layer (0 when
    /// tied to the input embedding). An encoder-decoder's stacks share the input embedding;
    /// its other weights outside the layers, each stack's final norm and relative position
    /// bias ([`RELATIVE_POSITION_BUCKETS`] per head), count with it. Learned position
    /// embeddings add a table of `h` per position (the sequence, and an encoder's input).
    pub fn edge_params(&self) -> (f64, f64) {
        let mut input = self.hidden * (self.vocab.max(self.patch_inputs)) + self.position_params();
        if self.is_encoder_decoder() {
            input += 2.0 * (self.norm_params * self.hidden + RELATIVE_POSITION_BUCKETS * self.heads);
        }
        let output = if self.tied_embeddings || self.vocab == 0.0 { 0.0 } else { self.hidden * self.vocab };
        (input, output)
    }

    /// Weights of the learned position embeddings: `h` per position of the sequence (and of an
    /// encoder's input); 0 with other encodings. Megatron-LM keeps the table whole on every
    /// tensor-parallel rank ([`Dims::edge_params`] counts it with the input embedding).
    pub fn position_params(&self) -> f64 {
        if self.positions == Positions::Learned {
            self.hidden * (self.seq + self.cross_seq)
        } else {
            0.0
        }
    }

    /// Every weight of the model.
    pub fn params(&self) -> f64 {
        let (input, output) = self.edge_params();
        let layers: f64 = self
            .stacks()
            .map(|(_, d)| {
                let (attn, expert) = d.layer_params();
                d.layers as f64 * (attn + expert * d.experts)
            })
            .sum();
        layers + input + output
    }

    /// The GEMMs of a block's forward pass over `t` tokens on one GPU of `tp`-way tensor and
    /// `ep`-way expert parallelism, each with how many times it runs. Attention: the fused Q, K,
    /// V projection (column-parallel: `n` split by tp) and the output projection (row-parallel:
    /// `k` split by tp); its score GEMMs are timed apart ([`Dims::layer_timed_flops`]).
    /// Feed-forward: the first matrix (or the gate and up matrices together, SwiGLU) and the
    /// second, once per expert this GPU holds that the tokens visit (all of them unless the
    /// tokens are fewer, as in decoding), on the tokens routed to it, and the router.
    /// Shoeybi et al. 2019 (Megatron-LM) for the splits. A decoder layer's cross-attention adds
    /// its query projection on the `t` tokens, its key and value projection on the encoder's
    /// `t x` [`Dims::cross_ratio`] tokens, and a second output projection.
    ///
    /// A mixture of experts' experts are split by `etp` of the `tp` ranks (expert tensor
    /// parallelism, [`crate::engine::scenario::Setup::expert_tp`]; `tp` splits them as the dense
    /// layers): the other `tp / etp` hold whole experts of their own, so `ep x tp / etp` ranks
    /// share the experts, each routing its `etp / tp` share of the tokens (its sequence-parallel
    /// share, gathered over the `etp` ranks). The FLOPs per GPU are the same; the GEMMs are
    /// wider and see fewer tokens.
    pub fn block_gemms(&self, block: Block, t: f64, tp: f64, etp: f64, ep: f64) -> [(Gemm, f64); 4] {
        let h = self.hidden;
        if block == Block::Attn {
            let qkv = Gemm { m: t, n: self.qkv_width() / tp, k: h };
            let proj = Gemm { m: t, n: h, k: self.q_width() / tp };
            if self.cross_seq <= 0.0 {
                return [(qkv, 1.0), (proj, 1.0), (Gemm::NONE, 0.0), (Gemm::NONE, 0.0)];
            }
            let q = Gemm { m: t, n: self.q_width() / tp, k: h };
            let kv = Gemm { m: t * self.cross_ratio(), n: 2.0 * self.kv_heads * self.head_dim() / tp, k: h };
            return [(qkv, 1.0), (proj, 2.0), (q, 1.0), (kv, 1.0)];
        }
        let (t, split, ep) = if self.is_moe() { (t * etp / tp, etp, ep * tp / etp) } else { (t, tp, ep) };
        let f = self.ffn / split;
        let routed = t * self.active * self.capacity_factor;
        let local_experts = (self.experts / ep).min(routed);
        let m = routed / local_experts;
        let up = Gemm { m, n: (self.ffn_kind.matrices() - 1) as f64 * f, k: h };
        let down = Gemm { m, n: h, k: f };
        let router = if self.is_moe() { Gemm { m: t, n: self.experts, k: h } } else { Gemm::NONE };
        [(up, local_experts), (down, local_experts), (router, 1.0), (Gemm::NONE, 0.0)]
    }

    /// Element-wise bytes per token of one layer's forward pass outside the tensor-parallel
    /// regions (norms, dropouts, residual adds): `HIDDEN_PASSES x e x h`, less
    /// `DROPOUT_PASSES x e x h` without dropout, split between the attention and feed-forward
    /// blocks. Sequence parallelism divides it by tp.
    /// Eager norms ([`Dims::eager`]) move [`Dims::norm_bytes`] where a fused norm moves
    /// [`NORM_PASSES`].
    pub fn hidden_bytes(&self) -> f64 {
        let passes = HIDDEN_PASSES - if self.dropout { 0.0 } else { DROPOUT_PASSES };
        let eager_norm = (self.norm_bytes()[0] - NORM_PASSES * self.elem_bytes) * self.hidden;
        passes * self.elem_bytes * self.hidden / 2.0 + eager_norm
    }

    /// Whether the norms and a gated activation run as eager PyTorch operations.
    pub fn eager(&self) -> bool {
        self.elementwise == Elementwise::Eager
    }

    /// Bytes one norm moves per hidden unit of a token in (the forward pass, the
    /// activation-gradient pass, the weight-gradient pass): fused, [`NORM_PASSES`],
    /// [`NORM_INPUT_GRAD_PASSES`] and [`NORM_WEIGHT_GRAD_PASSES`] at the element size; eager
    /// ([`Dims::eager`]), [`EAGER_NORM_PASSES`] at the element size and
    /// [`EAGER_NORM_FP32_PASSES`] in FP32.
    pub fn norm_bytes(&self) -> [f64; 3] {
        let e = self.elem_bytes;
        if self.eager() {
            [0, 1, 2].map(|i| EAGER_NORM_PASSES[i] * e + EAGER_NORM_FP32_PASSES[i] * FP32_BYTES)
        } else {
            [NORM_PASSES * e, NORM_INPUT_GRAD_PASSES * e, NORM_WEIGHT_GRAD_PASSES * e]
        }
    }

    /// Kernels a block launches in (the forward pass, the activation-gradient pass, the
    /// weight-gradient pass) beyond a fused block's: with eager norms and activation
    /// ([`Dims::eager`]), each residual sub-layer's norm [`EAGER_NORM_KERNELS`] for one, and a
    /// gated feed-forward activation [`EAGER_SWIGLU_KERNELS`] for one; none fused.
    pub fn eager_kernels(&self, block: Block) -> [f64; 3] {
        if !self.eager() {
            return [0.0; 3];
        }
        let norms = EAGER_NORM_KERNELS.map(|k| self.sublayers(block) * (k - 1.0));
        let gated = block == Block::Fc && self.ffn_kind == Ffn::Swiglu;
        let act = if gated { [EAGER_SWIGLU_KERNELS[0] - 1.0, EAGER_SWIGLU_KERNELS[1] - 1.0, 0.0] } else { [0.0; 3] };
        [0, 1, 2].map(|i| norms[i] + act[i])
    }

    /// Element-wise bytes per token of a block's forward pass, as (outside the tensor-parallel
    /// region, inside it): [`Dims::hidden_bytes`] per residual sub-layer, and the scores'
    /// ([`Dims::score_bytes`]) with the rotary embeddings' ([`Dims::rope_bytes`]) or the
    /// feed-forward activation's ([`Dims::ffn_act_bytes`]).
    pub fn forward_bytes(&self, block: Block) -> (f64, f64) {
        let inside = if block == Block::Attn { self.score_bytes() + self.rope_bytes() } else { self.ffn_act_bytes() };
        (self.sublayers(block) * self.hidden_bytes(), inside)
    }

    /// Element-wise bytes per token of one layer's rotary position embeddings, in each of the
    /// forward and activation-gradient passes: [`ROPE_FUSED_PASSES`] or
    /// [`ROPE_UNFUSED_PASSES`] over the token's self-attention queries and keys, `e (a +
    /// kv) d_head`. Inside the tensor-parallel region (the heads are split). 0 without rotary
    /// embeddings.
    pub fn rope_bytes(&self) -> f64 {
        self.rope().0 * self.elem_bytes * (self.q_width() + self.kv_heads * self.head_dim())
    }

    /// Kernels the rotary embeddings launch in each of the forward and activation-gradient
    /// passes of a layer: one per tensor (queries, keys) fused, five per tensor eager (two
    /// products, the negation, the concatenation, the sum; [`ROPE_UNFUSED_PASSES`]).
    pub fn rope_kernels(&self) -> f64 {
        self.rope().1
    }

    /// The rotary embeddings' (passes, kernels) in each direction; none without them.
    fn rope(&self) -> (f64, f64) {
        match self.positions {
            Positions::Rope => (ROPE_FUSED_PASSES, 2.0),
            Positions::RopeUnfused => (ROPE_UNFUSED_PASSES, 10.0),
            Positions::Learned | Positions::None => (0.0, 0.0),
        }
    }

    /// Element-wise bytes per token that learned position embeddings add to the input
    /// embedding's forward pass: [`POSITION_ADD_PASSES`] of `e h`; 0 with other encodings.
    pub fn position_add_bytes(&self) -> f64 {
        if self.positions == Positions::Learned {
            POSITION_ADD_PASSES * self.elem_bytes * self.hidden
        } else {
            0.0
        }
    }

    /// Element-wise bytes per token of a block's backward pass, counted from its kernels rather
    /// than taken as twice the forward pass's (the activation-gradient and weight-gradient
    /// passes, [`BackwardBytes`]). Per residual sub-layer, outside the tensor-parallel region:
    /// the residual gradients' sum ([`RESIDUAL_JOIN_GRAD_PASSES`]), the norm's input gradient
    /// ([`NORM_INPUT_GRAD_PASSES`]) and dropout's (read the gradient and the 1-byte mask, write:
    /// `2 e + 1`) for the activations; the norm's weight gradients
    /// ([`NORM_WEIGHT_GRAD_PASSES`]) and the output projection's bias gradient
    /// ([`BIAS_GRAD_PASSES`]) for the weights. Inside: attention copies the query, key and value
    /// gradients into their fused projection's ([`QKV_GRAD_COPY_PASSES`], and a decoder's
    /// cross-attention the keys' and values') and, materialized, takes the softmax's
    /// ([`SOFTMAX_GRAD_PASSES`]) and dropout's gradients per score; the feed-forward block its
    /// activation's ([`GELU_GRAD_PASSES`], [`SWIGLU_GRAD_PASSES`]); their input projections'
    /// bias gradients go to the weights.
    pub fn backward_bytes(&self, block: Block) -> BackwardBytes {
        let (e, h) = (self.elem_bytes, self.hidden);
        let sub = self.sublayers(block);
        let dropout = if self.dropout { 2.0 * e + 1.0 } else { 0.0 };
        let bias = if self.biases { BIAS_GRAD_PASSES * e } else { 0.0 };
        let [_, norm_activation, norm_weight] = self.norm_bytes();
        let outside_activation = sub * (RESIDUAL_JOIN_GRAD_PASSES * e + norm_activation + dropout) * h;
        let outside_weight = sub * (norm_weight + bias) * h;
        let (inside_activation, inside_weight) = if block == Block::Attn {
            let cross_kv = 2.0 * self.kv_heads * self.head_dim() * self.cross_ratio();
            let cross_q = if self.cross_seq > 0.0 { self.q_width() } else { 0.0 };
            let keys = self.seq + self.cross_seq;
            let scores =
                if self.materialized() { self.heads * keys * (SOFTMAX_GRAD_PASSES * e + dropout) } else { 0.0 };
            let split = QKV_GRAD_COPY_PASSES * e * (self.qkv_width() + cross_kv);
            (split + scores + self.rope_bytes(), bias * (self.qkv_width() + cross_q + cross_kv))
        } else {
            let f = self.routed_ffn();
            let activation = match self.ffn_kind {
                Ffn::Gelu => GELU_GRAD_PASSES,
                Ffn::Swiglu if self.eager() => EAGER_SWIGLU_PASSES[1],
                Ffn::Swiglu => SWIGLU_GRAD_PASSES,
            };
            (activation * e * f, bias * (self.ffn_kind.matrices() - 1) as f64 * f)
        };
        BackwardBytes { activation: (outside_activation, inside_activation), weight: (outside_weight, inside_weight) }
    }

    /// Time of one layer's attention-score GEMMs on one GPU, s, as (forward pass,
    /// activation-gradient pass, weight-gradient pass): `seqs` sequences of `s_q` query tokens
    /// (the sequence, split by context parallelism), the heads split `tp` ways.
    ///
    /// Materialized, the scores are batched GEMMs, one per sequence and head, each timed by its
    /// shape ([`Gemm::batched_time_s`]; keys `s_k`: the sequence, and in a decoder layer the
    /// encoder's tokens in a second set): forward `Q K^T` (`s_q x s_k`, inner `d_head`: it
    /// writes the scores) and `P V` (`s_q x d_head`, inner `s_k`: it reads them); backward
    /// `dP = dO V^T` and `dQ = dS K` in the forward's shapes, and `dV = P^T dO`, `dK = dS^T Q`
    /// (`s_k x d_head`, inner `s_q`), counted with the weight gradients. With a head of 64 or
    /// 128 they do `d_head` FLOPs per score byte or fewer, under the A100's and H100's ridge
    /// (about 150 and 300 FLOP/byte), so the score matrix's traffic sets their time: on an
    /// A100 about 2.5 times their FLOP time at `d_head` 64, a quarter more at 128.
    ///
    /// A fused kernel keeps the scores on chip: its score FLOPs at its rate
    /// ([`Dims::layer_timed_flops`] over `gpu`'s GEMM rate), the same again in each backward
    /// pass.
    pub fn score_gemms_s(&self, seqs: f64, s_q: f64, tp: f64, gpu: GemmGpu) -> [f64; 3] {
        if !self.materialized() {
            let fwd = seqs * s_q * self.layer_timed_flops().attn_scores / tp / gpu.flops_per_s;
            return [fwd; 3];
        }
        let (e, d_head, batch) = (self.elem_bytes, self.head_dim(), seqs * self.heads / tp);
        let time = |g: Gemm| g.batched_time_s(batch, e, gpu);
        [self.seq, self.cross_seq].into_iter().filter(|&s_k| s_k > 0.0).fold([0.0; 3], |[f, a, w], s_k| {
            let scores = time(Gemm { m: s_q, n: s_k, k: d_head });
            let context = time(Gemm { m: s_q, n: d_head, k: s_k });
            let key_side = time(Gemm { m: s_k, n: d_head, k: s_q });
            [f + scores + context, a + scores + context, w + 2.0 * key_side]
        })
    }

    /// Element-wise bytes per token of the attention scores (softmax, dropout) when they go
    /// through HBM: `a s (4 e + 1)`, or `a s 2 e` for the softmax alone without dropout; 0
    /// with a fused kernel. Tensor parallelism divides it. A decoder layer's cross-attention
    /// adds its scores over the encoder's tokens (`s` + `s_enc` keys).
    pub fn score_bytes(&self) -> f64 {
        let keys = self.seq + self.cross_seq;
        if !self.materialized() {
            0.0
        } else if self.dropout {
            self.heads * keys * (SCORE_ELEMENT_PASSES * self.elem_bytes + 1.0)
        } else {
            self.heads * keys * (SCORE_ELEMENT_PASSES - 2.0) * self.elem_bytes
        }
    }

    /// Element-wise bytes per token of a mixture-of-experts layer's token dispatch, as (forward
    /// pass, backward pass): each way's passes over each of the `k` routed copies' hidden
    /// vectors (`active x capacity`) and over the token's ([`Dims::dispatch`]). Neither
    /// tensor nor sequence parallelism divides it: every GPU of a tensor-parallel group
    /// dispatches the group's tokens to its slices of the experts. 0 for a dense model.
    pub fn dispatch_bytes(&self) -> (f64, f64) {
        if !self.is_moe() {
            return (0.0, 0.0);
        }
        let copies = self.active * self.capacity_factor;
        let pass = self.elem_bytes * self.hidden;
        let way = |(per_copy, per_token): (f64, f64)| (per_copy * copies + per_token) * pass;
        let [fwd, bwd] = self.dispatch().passes;
        (way(fwd), way(bwd))
    }

    /// What the token dispatch costs as it runs: [`EAGER_DISPATCH`] or [`FUSED_DISPATCH`] (with
    /// DeepEP's all-to-all too: Megatron-core permutes the tokens the same way around it).
    pub fn dispatch(&self) -> DispatchCost {
        match self.moe_dispatch {
            MoeDispatch::Eager => EAGER_DISPATCH,
            MoeDispatch::Fused | MoeDispatch::DeepEp => FUSED_DISPATCH,
        }
    }

    /// Bytes per token a mixture-of-experts layer's dispatch keeps for the backward pass: its
    /// kept copies of each routed token ([`DispatchCost::kept_copies`]: `2 k e h` eager, `k e h`
    /// fused), undivided as [`Dims::dispatch_bytes`]. 0 for a dense model.
    pub fn dispatch_stored_bytes(&self) -> f64 {
        if !self.is_moe() {
            return 0.0;
        }
        self.dispatch().kept_copies * self.active * self.capacity_factor * self.elem_bytes * self.hidden
    }

    /// Element-wise bytes per token of the feed-forward activation (GELU reads and writes f,
    /// SwiGLU reads 2f and writes f), for the experts a token visits.
    /// Eager ([`Dims::eager`]), SwiGLU makes [`EAGER_SWIGLU_PASSES`].
    pub fn ffn_act_bytes(&self) -> f64 {
        let passes = match self.ffn_kind {
            Ffn::Gelu => 2.0,
            Ffn::Swiglu if self.eager() => EAGER_SWIGLU_PASSES[0],
            Ffn::Swiglu => 3.0,
        };
        passes * self.elem_bytes * self.routed_ffn()
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

    /// Feed-forward units a token's activations span over the experts it visits: `f x active x
    /// capacity factor` (`f` for a dense model).
    pub fn routed_ffn(&self) -> f64 {
        self.ffn * self.active * self.capacity_factor
    }

    /// Bytes per token the feed-forward block keeps inside the tensor-parallel region for the
    /// experts a token visits, FC2's input at `g` bytes: GELU its input and FC2's input; SwiGLU
    /// the gate, the up projection and FC2's input, and eager also the SiLU's output (the
    /// product keeps both its factors).
    pub fn ffn_kept_bytes(&self, g: f64) -> f64 {
        let e = self.elem_bytes;
        let f = self.routed_ffn();
        let inputs = match self.ffn_kind {
            Ffn::Gelu => e * f,
            Ffn::Swiglu if self.eager() => 3.0 * e * f,
            Ffn::Swiglu => 2.0 * e * f,
        };
        inputs + g * f
    }

    /// [`Dims::stored_bytes`] with the four GEMM inputs kept for the weight gradients (QKV and
    /// FC1 outside, the projection's and FC2's inside) at `g` bytes per element: FP8 training
    /// keeps their FP8 copies (Transformer Engine), 1 byte.
    ///
    /// A decoder layer's cross-attention keeps as much again for its sub-layer (its norm's
    /// and its query projection's inputs, a mask; the queries, the projection's input), the
    /// keys and values of the encoder's tokens (`2 kv d_head e` x [`Dims::cross_ratio`] per
    /// decoder token) and, materialized, its scores over the encoder's tokens.
    pub fn stored_bytes_with_gemm_inputs(&self, g: f64) -> (f64, f64, f64) {
        let e = self.elem_bytes;
        let h = self.hidden;
        let masks = if self.dropout { 1.0 } else { 0.0 };
        let cross = self.cross_seq > 0.0;
        let sub = self.sublayers(Block::Attn);
        // An eager norm keeps the FP32 copy of its input it computed in, beside its output.
        let fp32_copy = if self.eager() { FP32_BYTES } else { 0.0 };
        let outside = (1.0 + sub) * (e + g + masks + fp32_copy) * h;
        let cross_inside = if cross {
            (e + g) * self.q_width() + 2.0 * self.kv_heads * self.head_dim() * e * self.cross_ratio()
        } else {
            0.0
        };
        let qkv = e * self.qkv_width() + cross_inside;
        let inside = qkv + g * self.q_width() + self.ffn_kept_bytes(g);
        let per_score = if self.dropout { 2.0 * e + 1.0 } else { e };
        let keys = self.seq + self.cross_seq;
        let scores = if self.materialized() { self.heads * keys * per_score } else { 0.0 };
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
            biases: true,
            positions: Positions::Learned,
            elem_bytes: 2.0,
            encoder_layers: 0,
            cross_seq: 0.0,
            norm_params: 2.0,
            elementwise: Elementwise::Fused,
            moe_dispatch: MoeDispatch::Eager,
        }
    }

    #[test]
    fn forward_flops_match_megatrons_formula() {
        // Narayanan et al. 2021, eq. 3 without recomputation: a training iteration costs
        // 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) FLOPs, i.e. 3x the forward pass.
        let d = gpt3();
        let (l, h, s, v) = (96.0, 12288.0, 2048.0, 51200.0);
        let megatron_per_token = 72.0 * l * h * h * (1.0 + s / (6.0 * h) + v / (12.0 * l * h)) / 3.0;
        let ours = d.forward_flops_per_sample() / s;
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
    fn the_backward_pass_moves_the_bytes_its_kernels_move() {
        // GPT-3 in Megatron-LM: dropout, biases, scores through HBM. Per token and layer, in
        // bytes at e = 2 (h = 12288, f = 4h, 96 heads over 2,048 keys).
        let d = gpt3();
        let (h, f, a, s, e) = (12288.0, 4.0 * 12288.0, 96.0, 2048.0, 2.0);
        let dropout = 2.0 * e + 1.0;
        let attn = d.backward_bytes(Block::Attn);
        let ffn = d.backward_bytes(Block::Fc);
        // Activation gradients: the residual sum (3 passes) and the norm's input gradient (3),
        // dropout's; inside, Q, K, V copied into the projection's gradient (2 passes of 3h)
        // and the softmax's and dropout's gradients per score.
        assert_eq!(attn.activation, ((6.0 * e + dropout) * h, 2.0 * e * 3.0 * h + a * s * (3.0 * e + dropout)));
        // GELU's gradient reads the output's gradient and the input and writes one: 3 of f.
        assert_eq!(ffn.activation, ((6.0 * e + dropout) * h, 3.0 * e * f));
        // Weight gradients: the norm's scale and shift (2 passes), the output projection's
        // bias (1); inside, the biases of Q, K, V and of the first matrix.
        assert_eq!(attn.weight, (3.0 * e * h, e * 3.0 * h));
        assert_eq!(ffn.weight, (3.0 * e * h, e * f));
        // Without dropout and biases (LLaMA-style, SwiGLU, fused attention): no mask, no bias
        // reduction, no scores; the fused SwiGLU reads three and writes two of f.
        let plain =
            Dims { dropout: false, biases: false, ffn_kind: Ffn::Swiglu, attention: Attention::Flash, ..gpt3() };
        assert_eq!(plain.backward_bytes(Block::Attn).activation, (6.0 * e * h, 2.0 * e * 3.0 * h));
        assert_eq!(plain.backward_bytes(Block::Fc).activation, (6.0 * e * h, 5.0 * e * f));
        assert_eq!(plain.backward_bytes(Block::Fc).weight, (2.0 * e * h, 0.0));
        // Against the old rule of twice the forward pass's traffic: less outside the
        // tensor-parallel region with dropout (23 bytes against 28 per hidden unit and block,
        // the forward pass counting unfused dropout); GELU's gradient and the first matrix's
        // bias gradient move as much as two forward passes of the activation (4 passes of f).
        let (fwd_out, fwd_in) = d.forward_bytes(Block::Fc);
        assert_eq!((fwd_out, fwd_in), (7.0 * e * h, 2.0 * e * f));
        assert_eq!(ffn.activation.0 + ffn.weight.0, 23.0 * h);
        assert_eq!(ffn.activation.1 + ffn.weight.1, 2.0 * fwd_in);
    }

    #[test]
    fn eager_norms_and_activation_move_and_keep_what_their_operations_do() {
        let (h, f, e) = (4096.0, 11008.0, 2.0);
        let llama = |eager: bool| Dims {
            hidden: h,
            heads: 32.0,
            kv_heads: 32.0,
            ffn: f,
            ffn_kind: Ffn::Swiglu,
            dropout: false,
            biases: false,
            attention: Attention::Flash,
            positions: Positions::Rope,
            elementwise: if eager { Elementwise::Eager } else { Elementwise::Fused },
            ..gpt3()
        };
        let (fused, eager) = (llama(false), llama(true));
        // An eager RMSNorm: 36 bytes a hidden unit forward (a fused norm's 4), 84 in the
        // activation gradient (6) and 8 in the weight gradient (4), in 16 bits.
        assert_eq!(fused.norm_bytes(), [4.0, 6.0, 4.0]);
        assert_eq!(eager.norm_bytes(), [36.0, 84.0, 8.0]);
        // Forward: each block's one norm moves 32 bytes more a hidden unit; the gated
        // activation 2 more passes of f (5 against 3).
        let (a0, a1) = fused.forward_bytes(Block::Attn);
        assert_eq!(eager.forward_bytes(Block::Attn), (a0 + 32.0 * h, a1));
        let (c0, c1) = fused.forward_bytes(Block::Fc);
        assert_eq!(eager.forward_bytes(Block::Fc), (c0 + 32.0 * h, c1 + 2.0 * e * f));
        // Backward: 78 bytes more a hidden unit in the activation gradient and 4 in the weight
        // gradient per norm; the activation's gradient 9 passes of f against 5.
        let (fb, eb) = (fused.backward_bytes(Block::Fc), eager.backward_bytes(Block::Fc));
        assert_eq!(eb.activation, (fb.activation.0 + 78.0 * h, fb.activation.1 + 4.0 * e * f));
        assert_eq!(eb.weight, (fb.weight.0 + 4.0 * h, fb.weight.1));
        let (fa, ea) = (fused.backward_bytes(Block::Attn), eager.backward_bytes(Block::Attn));
        assert_eq!((ea.activation.1, ea.weight.1), (fa.activation.1, fa.weight.1));
        // Kept for the backward pass: each of the layer's two norms its FP32 copy (4 bytes a
        // hidden unit), the activation the SiLU's output (e f); the scores nothing more.
        let (fo, fi, fs) = fused.stored_bytes();
        assert_eq!(eager.stored_bytes(), (fo + 2.0 * 4.0 * h, fi + e * f, fs));
        // Kernels: a norm's 8, 12 and 2 against 1 in each pass, the activation's 2 and 3
        // against 1; none more fused.
        assert_eq!(eager.eager_kernels(Block::Attn), [7.0, 11.0, 1.0]);
        assert_eq!(eager.eager_kernels(Block::Fc), [8.0, 13.0, 1.0]);
        assert_eq!((fused.eager_kernels(Block::Attn), fused.eager_kernels(Block::Fc)), ([0.0; 3], [0.0; 3]));
        // GELU is one kernel in PyTorch: eager changes a GELU model's norms only.
        let gelu = |eager| Dims { ffn_kind: Ffn::Gelu, ..llama(eager) };
        assert_eq!(gelu(true).ffn_act_bytes(), gelu(false).ffn_act_bytes());
        assert_eq!(
            gelu(true).backward_bytes(Block::Fc).activation.1,
            gelu(false).backward_bytes(Block::Fc).activation.1
        );
        assert_eq!(gelu(true).eager_kernels(Block::Fc), [7.0, 11.0, 1.0]);
        assert_eq!(gelu(true).stored_bytes().1, gelu(false).stored_bytes().1);
    }

    #[test]
    fn rotary_embeddings_pass_over_the_queries_and_keys_and_a_learned_table_adds_weights() {
        // LLaMA-3-8B-like: 4,096 wide, 32 query heads and 8 key/value heads of 128, so 4,096 +
        // 1,024 query and key elements per token, 2 bytes each.
        let (h, e, qk) = (4096.0, 2.0, 4096.0 + 1024.0);
        let llama = |positions| Dims {
            hidden: h,
            heads: 32.0,
            kv_heads: 8.0,
            ffn_kind: Ffn::Swiglu,
            dropout: false,
            biases: false,
            attention: Attention::Flash,
            positions,
            ..gpt3()
        };
        let (none, fused, eager) = (llama(Positions::None), llama(Positions::Rope), llama(Positions::RopeUnfused));
        assert_eq!((none.rope_bytes(), fused.rope_bytes(), eager.rope_bytes()), (0.0, 2.0 * e * qk, 10.0 * e * qk));
        assert_eq!((none.rope_kernels(), fused.rope_kernels(), eager.rope_kernels()), (0.0, 2.0, 10.0));
        for d in [&fused, &eager] {
            // Inside the tensor-parallel region, forward and in the activation-gradient pass,
            // attention only; no weights, nothing in the weight-gradient pass.
            let (f0, f1) = none.forward_bytes(Block::Attn);
            assert_eq!(d.forward_bytes(Block::Attn), (f0, f1 + d.rope_bytes()));
            let (b0, b1) = none.backward_bytes(Block::Attn).activation;
            assert_eq!(d.backward_bytes(Block::Attn).activation, (b0, b1 + d.rope_bytes()));
            assert_eq!(d.backward_bytes(Block::Attn).weight, none.backward_bytes(Block::Attn).weight);
            assert_eq!(d.forward_bytes(Block::Fc), none.forward_bytes(Block::Fc));
            assert_eq!((d.params(), d.position_add_bytes()), (none.params(), 0.0));
        }
        // Eager rotary embeddings move more than twice the rest of the attention block's
        // forward element-wise work (here, without dropout: 2 norm and 3 residual passes of h).
        assert!(eager.rope_bytes() > 2.0 * none.forward_bytes(Block::Attn).0, "{}", eager.rope_bytes());
        // A learned table: h weights per position (2,048 here), with the input embedding,
        // and an add (read two, write one) in the embedding's forward pass.
        let learned = llama(Positions::Learned);
        assert_eq!(learned.position_params(), h * 2048.0);
        assert_eq!(learned.edge_params().0 - none.edge_params().0, h * 2048.0);
        assert_eq!(learned.params() - none.params(), h * 2048.0);
        assert_eq!((learned.position_add_bytes(), learned.rope_bytes()), (3.0 * e * h, 0.0));
        assert_eq!(none.position_params(), 0.0);
    }

    #[test]
    fn a_decoder_layer_counts_its_cross_attention_backward() {
        // t5-base with biases (as Megatron-LM's T5 has them): the decoder's attention block
        // has two residual sub-layers; the cross-attention's keys and values, over 512 / 114
        // encoder tokens per decoder token, are split from one projection (copied back), its
        // queries are not; the biases add the cross-attention's query, keys and values.
        let d = Dims { biases: true, ..t5(768.0, 3072.0, 64.0, 12.0, 12, 32128.0, false) };
        let (enc, dec) = (d.stack_at(0), d.stack_at(12));
        let (h, e, r) = (768.0, 2.0, 512.0 / 114.0);
        let enc_b = enc.backward_bytes(Block::Attn);
        let dec_b = dec.backward_bytes(Block::Attn);
        assert_eq!(dec_b.activation.0, 2.0 * enc_b.activation.0);
        let cross_kv = 2.0 * h * r;
        let extra_copy = dec_b.activation.1 - enc_b.activation.1;
        // The decoder's scores cover its own 114 tokens and the 512 encoder tokens; the
        // encoder's its 512.
        let scores = 12.0 * 114.0 * (3.0 * e + 2.0 * e + 1.0);
        assert!((extra_copy - (2.0 * e * cross_kv + scores)).abs() < 1e-6, "{extra_copy}");
        assert!((dec_b.weight.1 - e * (3.0 * h + h + cross_kv)).abs() < 1e-6, "{:?}", dec_b.weight);
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
        // 69.7% (H100_GEMM_UTIL).
        let h100 = Dims { attention: Attention::Flash1H100, ..d };
        let share: f64 = 0.325 * 0.35 / 0.615;
        assert!((share - 0.185).abs() < 5e-4, "{share}");
        let cost = share.recip() * super::super::calibration::H100_GEMM_UTIL;
        assert!((h100.layer_timed_flops().attn_scores - cost * f.attn_scores).abs() < 1e-6 * f.attn_scores);
        assert_eq!(h100.layer_flops(), f);
        // FlashAttention-2 on an H100: 61.5% x 35 / 61.5 = the 35% of peak Shah et al. measure,
        // slower than FlashAttention-3's (the default) and faster than the first FlashAttention's.
        let fa2 = Dims { attention: Attention::Flash2H100, ..d };
        let cost = 0.35f64.recip() * super::super::calibration::H100_GEMM_UTIL;
        assert!((fa2.layer_timed_flops().attn_scores - cost * f.attn_scores).abs() < 1e-6 * f.attn_scores);
        assert!(timed.attn_scores < fa2.layer_timed_flops().attn_scores);
        assert!(fa2.layer_timed_flops().attn_scores < h100.layer_timed_flops().attn_scores);
        assert_eq!((fa2.layer_flops(), fa2.score_bytes()), (f, 0.0));
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
    fn a_moe_dispatch_moves_each_routed_copy_and_keeps_two_of_them_a_dense_layer_nothing() {
        let dense = gpt3();
        assert_eq!((dense.dispatch_bytes(), dense.dispatch_stored_bytes()), ((0.0, 0.0), 0.0));
        // Top-2 of 8 experts in 16 bits: per token, 12 passes over each of the two copies and
        // one over the token forward, 15 and one backward; the copies entering the experts and
        // the experts' outputs are kept.
        let moe = Dims { experts: 8.0, active: 2.0, ..gpt3() };
        let row = 2.0 * 12288.0;
        assert_eq!(moe.dispatch_bytes(), ((12.0 * 2.0 + 1.0) * row, (15.0 * 2.0 + 1.0) * row));
        assert_eq!(moe.dispatch_stored_bytes(), 2.0 * 2.0 * row);
        // A capacity factor pads every expert's batch: more copies move.
        let padded = Dims { capacity_factor: 1.25, ..moe };
        assert_eq!(padded.dispatch_bytes().0, (12.0 * 2.5 + 1.0) * row);
        // Transformer Engine's fused permute and unpermute: forward, each token read once and
        // written to its copies, each copy read back into the token's sum (2 over each copy, 2
        // over the token); backward 3 and 1. The experts' outputs are not kept for the
        // probabilities' gradient (the experts' activation applies them); 18 and 10 kernels
        // against 31 and 15.
        let fused = Dims { moe_dispatch: MoeDispatch::Fused, ..moe };
        assert_eq!(fused.dispatch_bytes(), ((2.0 * 2.0 + 2.0) * row, (3.0 * 2.0 + 1.0) * row));
        assert_eq!(fused.dispatch_stored_bytes(), 2.0 * row);
        assert_eq!((moe.dispatch().kernels, fused.dispatch().kernels), ([31.0, 15.0], [18.0, 10.0]));
        assert_eq!(Dims { moe_dispatch: MoeDispatch::Fused, ..dense }.dispatch_bytes(), (0.0, 0.0));
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
            positions: Positions::Rope,
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
        let [_, (proj, _), ..] = qwen.block_gemms(Block::Attn, 10.0, 2.0, 2.0, 1.0);
        assert_eq!((proj.n, proj.k), (5120.0, 4096.0));
        // Without a stated head size nothing changes: h / a, and q = h.
        let plain = Dims { head_size: None, ..qwen };
        assert_eq!((plain.head_dim(), plain.q_width()), (80.0, 5120.0));
    }

    /// A T5-style encoder-decoder as released: `l` + `l` layers of width `h`, feed-forward `f`,
    /// `heads` heads of `d_kv`, vocabulary `v`; T5 v1.1 / mT5 (`v11`): gated GELU, an output
    /// layer of its own; T5 v1.0: ReLU (two matrices), output tied to the embedding.
    fn t5(h: f64, f: f64, d_kv: f64, heads: f64, l: u64, v: f64, v11: bool) -> Dims {
        Dims {
            layers: 2 * l,
            hidden: h,
            heads,
            kv_heads: heads,
            head_size: Some(d_kv),
            ffn: f,
            ffn_kind: if v11 { Ffn::Swiglu } else { Ffn::Gelu },
            vocab: v,
            patch_inputs: 0.0,
            seq: 114.0,
            experts: 1.0,
            active: 1.0,
            capacity_factor: 1.0,
            causal_skip: false,
            attention: Attention::Materialized,
            tied_embeddings: !v11,
            dropout: !v11,
            biases: false,
            positions: Positions::None,
            elem_bytes: 2.0,
            encoder_layers: l,
            cross_seq: 512.0,
            norm_params: 1.0,
            elementwise: Elementwise::Fused,
            moe_dispatch: MoeDispatch::Eager,
        }
    }

    #[test]
    fn encoder_decoder_weights_are_the_released_t5_and_mt5_models() {
        // The weights of the released checkpoints (Hugging Face's t5-* and google/mt5-*, which
        // the papers round to 220M, 770M, 3B, 11B and 580M, 3.7B, 13B): two stacks of
        // attention, cross-attention (decoder), feed-forward and scale-only norms, one shared
        // embedding, each stack's final norm and relative position bias.
        for (name, d, released) in [
            ("t5-base", t5(768.0, 3072.0, 64.0, 12.0, 12, 32128.0, false), 222_903_552.0),
            ("t5-large", t5(1024.0, 4096.0, 64.0, 16.0, 24, 32128.0, false), 737_668_096.0),
            ("t5-3b", t5(1024.0, 16384.0, 128.0, 32.0, 24, 32128.0, false), 2_851_598_336.0),
            ("t5-11b", t5(1024.0, 65536.0, 128.0, 128.0, 24, 32128.0, false), 11_307_321_344.0),
            ("mt5-base", t5(768.0, 2048.0, 64.0, 12.0, 12, 250112.0, true), 582_401_280.0),
            ("mt5-xl", t5(2048.0, 5120.0, 64.0, 32.0, 24, 250112.0, true), 3_742_619_648.0),
            ("mt5-xxl", t5(4096.0, 10240.0, 64.0, 64.0, 24, 250112.0, true), 12_921_057_280.0),
        ] {
            assert_eq!(d.params(), released, "{name}");
        }
        // A decoder layer holds a second attention's four projections and a third norm.
        let d = t5(768.0, 3072.0, 64.0, 12.0, 12, 32128.0, false);
        let (enc, dec) = (d.stack_at(0), d.stack_at(12));
        let attn = 4.0 * 768.0 * 768.0;
        assert_eq!(enc.layer_params(), (attn + 2.0 * 768.0, 2.0 * 768.0 * 3072.0));
        assert_eq!(dec.layer_params(), (2.0 * attn + 3.0 * 768.0, 2.0 * 768.0 * 3072.0));
        assert_eq!((enc.layers, enc.seq, dec.layers, dec.seq), (12, 512.0, 12, 114.0));
    }

    #[test]
    fn encoder_decoder_flops_are_twice_the_weights_each_token_meets_plus_attention() {
        // Forward FLOPs per sample: 2 FLOPs per weight per token that meets it (the encoder's
        // weights meet the input's tokens, the decoder's the targets', and the cross-attention's
        // key and value projections the encoder's output, the input's length), plus the scores
        // (4 s q per token and layer: the encoder's over its input, the decoder's over its
        // targets and, across, over the input) and the output layer over the targets.
        let d = t5(1024.0, 2816.0, 64.0, 16.0, 24, 250112.0, true); // mT5-Large
        let (h, f, l, s_in, s_out, v) = (1024.0, 2816.0, 24.0, 512.0, 114.0, 250112.0);
        let proj = 4.0 * h * h;
        let ffn = 3.0 * h * f;
        let cross_kv = 2.0 * h * h;
        let gemms = 2.0 * l * ((proj + ffn) * s_in + (2.0 * proj - cross_kv + ffn) * s_out + cross_kv * s_in);
        let scores = 4.0 * h * l * (s_in * s_in + s_out * (s_out + s_in));
        let want = gemms + scores + 2.0 * h * v * s_out;
        assert!((d.forward_flops_per_sample() / want - 1.0).abs() < 1e-12, "{}", d.forward_flops_per_sample());
        // T5 (Raffel et al. 2020, section 3.2.2): an L + L encoder-decoder has about the weights
        // of a 2L-layer language model, yet costs about what an L-layer one does on the input
        // and the target together, each stack seeing only its own tokens. Cross-attention is
        // what "about" leaves out: 1/6 more of both with a 4x feed-forward, no more.
        let ed = t5(1024.0, 4096.0, 64.0, 16.0, 24, 0.0, false);
        let ed = Dims { cross_seq: 512.0, seq: 512.0, ..ed };
        let lm = |layers: u64, seq: f64| Dims { layers, seq, encoder_layers: 0, cross_seq: 0.0, ..ed };
        let weights = ed.params() / lm(48, 512.0).params();
        let linear = |d: &Dims| {
            let per_stack = |s: Dims| s.layers as f64 * (s.layer_flops().attn_linear + s.layer_flops().ffn) * s.seq;
            d.stacks().map(|(_, s)| per_stack(s)).sum::<f64>()
        };
        let cost = linear(&ed) / linear(&lm(24, 1024.0));
        assert!((weights - 7.0 / 6.0).abs() < 1e-3 && (cost - 7.0 / 6.0).abs() < 1e-9, "{weights} {cost}");
    }

    #[test]
    fn t5_forward_flops_stand_where_the_switch_transformer_paper_puts_them() {
        // Fedus et al. 2022 (Switch Transformers), Table 9: FLOPs per sequence of T5 v1.1 Base,
        // Large and XXL (gated GELU, 12+12 or 24+24 layers, 64-wide heads), 124B, 425B and
        // 6.3T, pre-trained on 512 input and 114 target tokens (T5's span corruption). The
        // paper does not say how it counts; ours, every GEMM and the attention scores, stands
        // 11-15% above, a fifth (XXL) to two thirds (Base) of that the scores, which weight counts
        // leave out. Its section 3.3: T5-Large applies 3.5x T5-Base's FLOPs per token.
        let base = t5(768.0, 2048.0, 64.0, 12.0, 12, 32128.0, true);
        let large = t5(1024.0, 2816.0, 64.0, 16.0, 24, 32128.0, true);
        let xxl = t5(4096.0, 10240.0, 64.0, 64.0, 24, 32128.0, true);
        let scores =
            |d: &Dims| d.stacks().map(|(_, s)| s.layers as f64 * s.layer_flops().attn_scores * s.seq).sum::<f64>();
        for (name, d, table9) in [("Base", base, 124e9), ("Large", large, 425e9), ("XXL", xxl, 6.3e12)] {
            let ours = d.forward_flops_per_sample();
            let above = ours / table9 - 1.0;
            assert!((0.10..0.16).contains(&above), "T5-{name}: {ours:e} against {table9:e}");
            let without_scores = (ours - scores(&d)) / table9 - 1.0;
            assert!((0.04..0.09).contains(&without_scores), "T5-{name} without scores: {without_scores}");
        }
        let ratio = large.forward_flops_per_sample() / base.forward_flops_per_sample();
        assert!((ratio / 3.5 - 1.0).abs() < 0.02, "{ratio}");
    }

    #[test]
    fn a_decoder_layer_of_an_encoder_decoder_adds_cross_attention_work_and_memory() {
        let d = t5(1024.0, 4096.0, 64.0, 16.0, 24, 32128.0, false);
        let (enc, dec) = (d.stack_at(0), d.stack_at(24));
        // GEMMs: the decoder's attention block projects queries and outputs twice, and the
        // encoder's 512 tokens' keys and values for every 114 of its own.
        let [(qkv, 1.0), (proj, 2.0), (q, 1.0), (kv, 1.0)] = dec.block_gemms(Block::Attn, 114.0, 2.0, 2.0, 1.0) else {
            panic!("decoder attention GEMMs")
        };
        assert_eq!((qkv.n, proj.k, q.n), (1536.0, 512.0, 512.0));
        assert_eq!((kv.m, kv.n, kv.k), (512.0, 1024.0, 1024.0));
        assert_eq!(enc.block_gemms(Block::Attn, 512.0, 2.0, 2.0, 1.0)[2].1, 0.0);
        // Two residual sub-layers' element-wise work; scores over 114 + 512 keys.
        assert_eq!((dec.sublayers(Block::Attn), dec.sublayers(Block::Fc), enc.sublayers(Block::Attn)), (2.0, 1.0, 1.0));
        assert_eq!(dec.score_bytes() / enc.score_bytes(), (114.0 + 512.0) / 512.0);
        // Activations: what a layer keeps grows by the cross sub-layer and the encoder's K, V.
        let (o_enc, i_enc, _) = enc.stored_bytes();
        let (o_dec, i_dec, _) = dec.stored_bytes();
        assert_eq!(o_dec / o_enc, 1.5);
        let e = 2.0;
        assert_eq!(i_dec - i_enc, 2.0 * e * 1024.0 + 2.0 * 1024.0 * e * 512.0 / 114.0);
        // Other models keep one stack.
        assert_eq!(gpt3().stacks().count(), 1);
        assert_eq!(gpt3().stack_at(50), gpt3());
    }

    #[test]
    fn materialized_scores_cost_their_bytes_and_a_fused_kernel_its_flops() {
        // GPT-3 175B, one sequence of 2,048 tokens, 96 heads of 128 split 8 ways, on an A100.
        let gpu = GemmGpu { flops_per_s: 0.8 * 312e12, hbm_bytes_per_s: 0.836 * 2039e9, sms: None };
        let d = gpt3();
        let [fwd, act, wgt] = d.score_gemms_s(1.0, 2048.0, 8.0, gpu);
        let batch = 12.0;
        let t = |g: Gemm| g.batched_time_s(batch, 2.0, gpu);
        let (qk, pv) = (t(Gemm { m: 2048.0, n: 2048.0, k: 128.0 }), t(Gemm { m: 2048.0, n: 128.0, k: 2048.0 }));
        assert_eq!(fwd, qk + pv);
        assert_eq!(act, fwd, "dP = dO V^T and dQ = dS K have the forward's shapes");
        assert_eq!(wgt, 2.0 * t(Gemm { m: 2048.0, n: 128.0, k: 2048.0 }), "dV and dK: s_k x d_head, inner s_q");
        // Bound by the scores: a quarter more than the FLOPs at the GEMM rate (128 FLOPs per
        // byte of scores against the A100's 149).
        let flop_s = 2048.0 * d.layer_flops().attn_scores / 8.0 / gpu.flops_per_s;
        assert!((1.2..1.35).contains(&(fwd / flop_s)), "{}", fwd / flop_s);
        // A 64-wide head does half the FLOPs on as many scores: about 2.5 times its FLOP time.
        let narrow = Dims { head_size: Some(64.0), ..d };
        let narrow_flop_s = 2048.0 * narrow.layer_flops().attn_scores / 8.0 / gpu.flops_per_s;
        let ratio = narrow.score_gemms_s(1.0, 2048.0, 8.0, gpu)[0] / narrow_flop_s;
        assert!((2.2..2.6).contains(&ratio), "{ratio}");
        // A decoder layer's cross-attention adds a second set over the encoder's tokens.
        let cross = Dims { cross_seq: 512.0, ..d };
        let extra = t(Gemm { m: 2048.0, n: 512.0, k: 128.0 }) + t(Gemm { m: 2048.0, n: 128.0, k: 512.0 });
        assert!((cross.score_gemms_s(1.0, 2048.0, 8.0, gpu)[0] - fwd - extra).abs() < 1e-15);
        // A fused kernel: its FLOPs at its rate, the same in each backward pass.
        let flash = Dims { attention: Attention::Flash, ..d };
        let f = flash.score_gemms_s(1.0, 2048.0, 8.0, gpu);
        assert_eq!(f, [2048.0 * flash.layer_timed_flops().attn_scores / 8.0 / gpu.flops_per_s; 3]);
    }
}
