//! The form's fields: label, unit, scale to the MAD-Max config unit, and help text with a
//! typical value and where the number comes from. One table, read by one generic input
//! component; plain data, no DOM.
//!
//! One job: the form's table of fields (what each is, its unit and help, which ones a family's
//! form shows).

use crate::doc::Config;
use crate::engine::scenario::Family;

/// How a field's text becomes a config value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A whole number (layers, dimensions, counts).
    Count,
    /// Any number; the shown value times `scale` is stored.
    Number,
    /// A whole number that may be left empty (the key is then removed: the default applies).
    OptionalCount,
    /// A number that may be left empty.
    OptionalNumber,
    /// One of a few spellings: (config value, label).
    Choice(&'static [(&'static str, &'static str)]),
    /// Yes or no (stored as true or false).
    Flag,
    /// Text that may be left empty (a list the engine reads, such as a request mix).
    OptionalText,
}

impl Kind {
    /// The options of a drop-down field (config value, label); `None` for text inputs.
    pub fn options(self) -> Option<&'static [(&'static str, &'static str)]> {
        match self {
            Kind::Choice(o) => Some(o),
            Kind::Flag => Some(YES_NO),
            _ => None,
        }
    }
}

/// One form field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Field {
    pub config: Config,
    /// The MAD-Max config key.
    pub key: &'static str,
    pub label: &'static str,
    /// The unit shown (empty for plain counts).
    pub unit: &'static str,
    /// Config value = shown value x scale.
    pub scale: f64,
    pub kind: Kind,
    pub help: &'static str,
    /// What applies when the key is absent, as shown (empty: the key is required).
    pub default: &'static str,
}

impl Field {
    /// The field path validation errors use (`system.mem_bw`).
    pub fn path(&self) -> String {
        format!("{}.{}", self.config.key(), self.key)
    }
}

const fn count(config: Config, key: &'static str, label: &'static str, help: &'static str) -> Field {
    Field { config, key, label, unit: "", scale: 1.0, kind: Kind::Count, help, default: "" }
}

/// A field of the default model: optional, with the default that applies when absent.
const fn extra(
    config: Config,
    key: &'static str,
    label: &'static str,
    kind: Kind,
    default: &'static str,
    help: &'static str,
) -> Field {
    Field { config, key, label, unit: "", scale: 1.0, kind, help, default }
}

const fn number(
    config: Config,
    key: &'static str,
    label: &'static str,
    unit: &'static str,
    scale: f64,
    help: &'static str,
) -> Field {
    Field { config, key, label, unit, scale, kind: Kind::Number, help, default: "" }
}

use Config::{Model as M, System as S, Task as T};

const BYTES_DENSE: Field = count(
    M,
    "bytes_per_nonemb_param",
    "Bytes per dense parameter",
    "Bytes per weight and activation element outside the embeddings: 2 for FP16/BF16 (typical), 4 for FP32, 1 for INT8, 8 for FP64. It also picks the GPU's FLOP rate, as in MAD-Max.",
);
const BYTES_EMB: Field = number(
    M,
    "bytes_per_emb_param",
    "Bytes per embedding element",
    "B",
    1.0,
    "Bytes per embedding table entry element: 2 (FP16) in the reference models; 4 for FP32, 1 for INT8 tables.",
);
const LAYERS: Field = count(
    M,
    "num_transformer_layers",
    "Transformer layers",
    "Number of transformer blocks (attention + feed-forward): 32 for LLaMA-7B, 80 for LLaMA2-70B, 96 for GPT-3 175B.",
);
const HEADS: Field = count(
    M,
    "num_transformer_heads",
    "Attention heads",
    "Attention heads per layer: 64 for LLaMA2-70B. MAD-Max reads it but its formulas do not use it.",
);
const ATTN_DIM: Field = count(
    M,
    "attention_dim",
    "Hidden size",
    "Width of the model (attention dimension): 4096 for LLaMA-7B, 8192 for LLaMA2-70B, 12288 for GPT-3 175B.",
);
const FC_DIM: Field = count(
    M,
    "transformer_fc_dim",
    "Feed-forward size",
    "Inner width of each feed-forward layer: usually 4x (GELU) or about 2.7x (SwiGLU, 21846 in LLaMA2-70B's MAD-Max config) the hidden size.",
);
const SEQ: Field = count(
    M,
    "transformer_seq_len",
    "Sequence length",
    "Tokens per sample: 2048 (LLaMA), 4096 (LLaMA2), 8k-32k for long-context runs.",
);
const VOCAB: Field = count(
    M,
    "entries_per_table",
    "Vocabulary size",
    "Tokens in the vocabulary (rows of the word embedding): 50257 in the MAD-Max LLM configs, 32000 for LLaMA.",
);
const ENC_LAYERS: Field = count(
    M,
    "num_encoder_layers",
    "Encoder layers",
    "Layers of the encoder stack, which reads the input with bidirectional self-attention: 12 in T5-Base and mT5-Base, 24 in T5-Large to T5-11B and mT5-Large to mT5-XXL.",
);
const DEC_LAYERS: Field = count(
    M,
    "num_decoder_layers",
    "Decoder layers",
    "Layers of the decoder stack. Each has causal self-attention over the target, then cross-attention to the encoder's output, then the feed-forward layer: as many as the encoder's in T5 and mT5.",
);
const INPUT_SEQ: Field = count(
    M,
    "transformer_seq_len",
    "Input tokens",
    "Tokens per sample the encoder reads: 512 in T5's and mT5's pre-training (a span-corrupted C4 text). The encoder's work and its cross-attention keys grow with it.",
);
const TARGET_SEQ: Field = count(
    M,
    "target_seq_len",
    "Target tokens",
    "Tokens per sample the decoder reads and predicts: 114 in T5's pre-training (the dropped-out spans, with their sentinels), as long as the input in translation-like fine-tuning. The loss and the output layer run on these only.",
);
const EXPERTS: Field = count(
    M,
    "num_experts",
    "Experts per MoE layer",
    "Experts in each mixture-of-experts layer: 16 in the GPT-4-like 1.8T config, 8 in Mixtral.",
);
const ACTIVE: Field = count(
    M,
    "num_active_experts",
    "Active experts per token",
    "Experts each token (or sample) runs: 2 is typical. Compute scales with this; weight traffic with all experts.",
);
const BOT: Field = count(
    M,
    "num_bot_mlp_layers",
    "Bottom MLP layers",
    "Dense layers before the feature interaction: 10 in DLRM-A. Must be even with tensor-parallel MLPs.",
);
const TOP: Field = count(
    M,
    "num_top_mlp_layers",
    "Top MLP layers",
    "Dense layers after the feature interaction: 10 in DLRM-A. Must be even with tensor-parallel MLPs.",
);
const MLP_DIM: Field = count(
    M,
    "mlp_dim",
    "MLP width",
    "Width of every (square) MLP layer: 3994 in DLRM-A. In the default model, the bottom and top MLP widths under Architecture details replace it when given.",
);
const TABLES: Field = count(M, "num_tables", "Embedding tables", "Number of sparse-feature tables: 4096 in DLRM-A.");
const ROWS: Field =
    count(M, "entries_per_table", "Rows per table", "Entries in each embedding table: 2,080,000 in DLRM-A.");
const EMB_DIM: Field = count(M, "emb_dim", "Embedding width", "Elements per embedding row: 94 in DLRM-A.");
const POOL: Field = count(
    M,
    "pooling_size",
    "Lookups per table",
    "Rows read (and pooled) per table per sample: 15 in DLRM-A. Sets the embedding traffic.",
);
const IMAGE: Field = count(M, "image_size", "Image side", "Pixels per image side: 224 for ViT-L, 518 for DINOv2.");
const PATCH: Field =
    count(M, "patch_dim", "Patch side", "Pixels per patch side: 14 or 16. Sequence length = (image / patch)^2.");

const NETWORK: Field = extra(
    M,
    "network",
    "Network",
    Kind::Choice(&[
        ("resnet18", "ResNet-18 (11.7M weights)"),
        ("resnet34", "ResNet-34 (21.8M weights)"),
        ("resnet50", "ResNet-50 (25.6M weights)"),
        ("resnet101", "ResNet-101 (44.5M weights)"),
        ("resnet152", "ResNet-152 (60.2M weights)"),
        ("googlenet", "GoogLeNet (7.0M weights)"),
        ("nin", "Network-in-Network (7.6M weights)"),
    ]),
    "",
    "The convolutional network, layer by layer as published: the ResNets as torchvision builds them (batch norm after every convolution; the bottleneck nets stride in their 3x3 convolution, v1.5), GoogLeNet as in its paper's Table 1 (without the auxiliary classifiers), and Network-in-Network for ImageNet as its authors' Caffe model. Every convolution runs as an implicit GEMM; the default model only (MAD-Max has no CNNs).",
);
const CNN_IMAGE: Field =
    count(M, "image_size", "Image side", "Pixels per side of the square input: 224 for ImageNet training. Compute and activations grow with its square; the weights do not change.");
const CLASSES: Field = extra(M, "num_classes", "Classes", Kind::OptionalCount, "1000", "Outputs of the classifier: 1,000 for ImageNet-1k, 21,841 for ImageNet-22k (PowerAI DDL's ResNet-101). It sizes the last layer.");

/// The model fields of a family, in form order.
pub fn model_fields(family: Family) -> Vec<Field> {
    let transformer = [LAYERS, HEADS, ATTN_DIM, FC_DIM];
    let dlrm = [BOT, TOP, MLP_DIM, TABLES, ROWS, EMB_DIM, POOL];
    let mut v = Vec::new();
    match family {
        Family::Llm | Family::LlmMoe => {
            v.extend(transformer);
            v.extend([SEQ, VOCAB]);
            if family == Family::LlmMoe {
                v.extend([EXPERTS, ACTIVE]);
            }
        }
        Family::Vit => {
            v.extend(transformer);
            v.extend([IMAGE, PATCH]);
        }
        Family::Cnn => return vec![NETWORK, CNN_IMAGE, CLASSES, BYTES_DENSE],
        Family::EncDec => v.extend([ENC_LAYERS, DEC_LAYERS, HEADS, ATTN_DIM, FC_DIM, INPUT_SEQ, TARGET_SEQ, VOCAB]),
        Family::Dlrm | Family::DlrmMoe | Family::DlrmTransformer => {
            v.extend(dlrm);
            if family == Family::DlrmMoe {
                v.extend([EXPERTS, ACTIVE]);
            }
            if family == Family::DlrmTransformer {
                v.extend(transformer);
                v.push(SEQ);
            }
        }
    }
    v.extend([BYTES_DENSE, BYTES_EMB]);
    v
}

/// The options of a flag field.
pub const YES_NO: &[(&str, &str)] = &[("true", "yes"), ("false", "no")];

/// The default model's model fields (MAD-Max paper mode ignores them).
pub fn default_model_fields(family: Family) -> Vec<Field> {
    if family == Family::Cnn {
        return Vec::new();
    }
    if family.is_dlrm() {
        return vec![
            extra(M, "bot_mlp_widths", "Bottom MLP widths", Kind::OptionalText, "every layer as wide as the MLP width",
                "The bottom MLP's input features, then each layer's output width, as the DLRM code's --arch-mlp-bot takes them: 13-512-256-128 in NVIDIA's DLRM for Criteo (13 dense features). The last width must equal the embedding width (the dot interaction pairs them), and the widths after the first count the bottom layers. Give both MLPs' widths or neither; paper mode always times square layers of the MLP width."),
            extra(M, "top_mlp_widths", "Top MLP widths", Kind::OptionalText, "every layer as wide as the MLP width",
                "Each top layer's output width, as --arch-mlp-top takes them: 1024-1024-512-256-1 in NVIDIA's DLRM (its last layer gives one click probability). The first layer reads the interaction's output: the dot product of every pair of the tables' embeddings and the bottom MLP's output, beside that output (479 values for 26 tables of 128)."),
        ];
    }
    let mut v = vec![
        extra(M, "num_kv_heads", "Key/value heads", Kind::OptionalCount, "as many as attention heads",
            "Grouped-query attention shares each key/value head among several query heads: 8 in LLaMA2-70B and LLaMA 3, as many as the attention heads in GPT-3. Fewer K/V heads mean smaller K/V projections and a smaller context-parallel ring. Leave empty for plain multi-head attention."),
        extra(M, "head_dim", "Head size", Kind::OptionalCount, "hidden size / attention heads",
            "Width of each attention head. Most models split the hidden size evenly over the heads (LLaMA2-70B: 8192 / 64 = 128); some use wider heads, so that the query and output projections are wider than the hidden size: Qwen3-32B has 64 heads of 128 on a hidden size of 5120. It sets the projections' sizes, the attention FLOPs and the KV cache per token. Leave empty for hidden size / heads."),
        extra(M, "ffn_kind", "Feed-forward kind", Kind::Choice(&[("gelu", "GELU: 2 matrices"), ("swiglu", "SwiGLU: 3 matrices")]), "gelu",
            "GELU feed-forward layers have two weight matrices (GPT-3, ViT); SwiGLU has three, gate, up and down (LLaMA, Mixtral), so the same feed-forward size costs 1.5x the FLOPs and weights."),
        extra(M, "attention", "Attention kernel", Kind::Choice(&[("flash", "fused: FlashAttention-2 on A100, -3 or cuDNN on H100"), ("flash2-h100", "fused: FlashAttention-2 on H100 (PyTorch SDPA)"), ("flash1", "fused: FlashAttention-1/Triton on A100"), ("flash1-h100", "fused: FlashAttention-1/Triton on H100"), ("materialized", "scores in HBM (Megatron 2021-22)")]), "flash",
            "A fused kernel keeps the s x s attention scores on chip; without it they are written to HBM, softmaxed and read back, which costs memory traffic and activation memory growing with the square of the sequence. A fused kernel's FLOPs run slower than plain GEMMs and its backward pass computes the scores again, which matters most at long sequences. On an A100, FlashAttention-2 reaches 50-73% of peak, the first FlashAttention and its Triton ports (MosaicML's MPT) 25-40%. Kernels written for the A100 lose speed on an H100: FlashAttention-3 and cuDNN's kernel, written for it, reach up to 75% of its peak (the first choice), FlashAttention-2 only 35% (Shah et al. 2024; the second choice). PyTorch's scaled_dot_product_attention runs FlashAttention-2 on an H100 unless asked for cuDNN's kernel (PyTorch 2.2 to 2.10, but 2.5.0); Megatron-LM with Transformer Engine runs cuDNN's. The fourth choice is the first FlashAttention or Triton on an H100, assumed to lose as much as FlashAttention-2 does (about 18% of peak)."),
        extra(M, "causal", "Causal attention", Kind::Flag, "yes for LLMs, no for ViTs",
            "Decoders attend only to earlier tokens. With a fused kernel the masked half of the score and context GEMMs is skipped."),
        extra(M, "tied_embeddings", "Output layer tied to the embedding", Kind::Flag, "no",
            "Whether the logits layer reuses the input word embedding (GPT-2/3, Megatron GPT) instead of its own vocabulary x hidden matrix (LLaMA)."),
        extra(M, "dropout", "Dropout", Kind::Flag, "yes",
            "Whether training applies dropout after attention and the feed-forward block (and to attention scores written to HBM). Its 1-byte masks are kept for the backward pass and its passes cost HBM time. GPT-3 and Megatron-LM's GPT train with it; LLaMA, MPT and most recent LLMs without, which saves about 2 bytes per token and hidden unit per layer."),
        extra(M, "biases", "Biases", Kind::Flag, "yes for GELU, no for SwiGLU",
            "Whether the attention projections and feed-forward matrices add a bias. Their weights are negligible, but in training each bias gradient is a sum over the micro-batch's tokens that reads its projection's output gradient once more: about 18 bytes per token and hidden unit per layer in 16 bits with a 4x feed-forward, at HBM speed. GPT-2 and GPT-3, Megatron-LM's GPT, BLOOM, ViT and MPT as llm-foundry benchmarks it have biases; LLaMA, Mistral and T5 do not."),
        extra(M, "positions", "Position encoding", Kind::Choice(&[("learned", "learned table (GPT-3, MPT, ViT)"), ("rope", "rotary, one fused kernel"), ("rope-unfused", "rotary, eager PyTorch"), ("none", "none outside attention (ALiBi, T5)")]), "rotary (fused) for SwiGLU, learned for GELU, none for T5",
            "How the model tells token positions apart, and what that costs. A learned table (GPT-2 and GPT-3, Megatron-LM's default, OPT, MPT as llm-foundry benchmarks it, ViT) adds sequence x hidden weights, whole on every tensor-parallel GPU, and an add to the input embedding. Rotary embeddings (LLaMA, Mistral, Qwen, GPT-NeoX) rotate the queries and keys in every layer: one fused kernel (Transformer Engine, Megatron-core's RoPE fusion, serving engines) reads and writes them once each way; eager PyTorch (Hugging Face's modelling code, torchtitan without compiling) takes about ten passes each way, a few percent of a small model's step. None: ALiBi (BLOOM) or T5's relative bias, computed inside attention. Serving charges the rotation's passes over each step's queries and keys (vLLM and SGLang run it as a kernel of its own), and no table."),
        extra(M, "elementwise", "Norms and activation", Kind::Choice(&[("fused", "fused kernels"), ("eager", "eager PyTorch (Hugging Face)")]), "fused",
            "How the RMSNorms and a SwiGLU feed-forward's activation run. Megatron-LM, Transformer Engine, apex, Liger kernels, torch.compile and serving engines run each as one kernel (PyTorch's own LayerNorm and GELU are single kernels too). Hugging Face's modelling code for LLaMA, Mistral, Qwen, ChatGLM and T5 writes RMSNorm as eager PyTorch operations: it casts the input to an FP32 copy, squares, averages, takes the reciprocal root and multiplies, eight kernels over 36 bytes per hidden unit in 16 bits where a fused norm moves 4, and it keeps the FP32 copy for the backward pass; silu(gate) * up runs two kernels and keeps the SiLU's output too. For LLaMA 2 7B without recomputation that is about 55 kB more kept per token and layer, some 40% more activation memory, and more HBM traffic in both passes. Choose eager for a Hugging Face model trained without fused kernels or compilation (for example with DeepSpeed or FSDP from the Trainer)."),
    ];
    if family == Family::LlmMoe {
        v.push(extra(M, "capacity_factor", "MoE capacity factor", Kind::OptionalNumber, "1",
            "Tokens an expert accepts relative to an even split: 1.0 to 1.25 is typical. Padding to capacity adds expert GEMM work and all-to-all bytes."));
        v.push(extra(M, "moe_dispatch", "Token dispatch", Kind::Choice(&[("eager", "eager PyTorch (Megatron-core 0.6)"), ("fused", "fused permute (Transformer Engine)"), ("deepep", "fused permute, DeepEP all-to-all")]), "eager",
            "Training: how each token's copies reach the experts and come back, around the experts' GEMMs, on every tensor-parallel GPU over all of a micro-batch's tokens (serving charges no such dispatch: engines run their own fused MoE kernels). Megatron-core 0.6 ran it as eager PyTorch operations: the copies gathered, sorted by expert, scattered back, weighed by the router's probabilities and summed, 12 passes over each copy forward and 15 backward in 31 and 15 kernels with the router's, keeping the experts' outputs too. Transformer Engine's fused permute and unpermute (Megatron-core's --moe-permute-fusion) write each copy once and read it back once, 2 passes forward and 3 backward in 18 and 10 kernels, the experts' activation applying the probabilities. For Mixtral 8x7B with 8-way tensor parallelism on H100s the eager dispatch of a forward pass takes about half as long as the experts' GEMMs, the fused one a sixth. DeepEP (Megatron-core's --moe-enable-deepep) permutes as the fused one does and replaces NCCL's all-to-all across nodes: a token crosses to each node holding one of its experts once, at about the NIC's line rate, and NVLink forwards it to the experts there; with 8 experts of 128 over 4 nodes that is about 2.2 times fewer bytes through the NICs."));
    }
    v
}

/// The default model's task fields of a family: how training (or serving) runs.
pub fn default_task_fields(family: Family, inference: bool) -> Vec<Field> {
    let keep: &[&str] = if inference && matches!(family, Family::Llm | Family::LlmMoe) {
        &[
            "batching",
            "input_tokens",
            "output_tokens",
            "weight_format",
            "kv_format",
            "kv_page_tokens",
            "step_tokens",
            "prefill_steps",
            "scheduler_steps",
            "request_rate",
            "burst_requests",
            "request_mix",
            "length_spread",
            "cuda_graphs",
            "custom_all_reduce",
            "sampling",
            "host_step_ms",
            "host_request_ms",
            "collective",
        ]
    } else if family == Family::Cnn {
        &[
            "conv_layout",
            "collective",
            "overlap_grad_reduce",
            "fp32_grads",
            "collective_cycle_ms",
            "data_loader_samples_per_s",
        ]
    } else if family.is_dlrm() {
        &[
            "emb_sharding",
            "bot_mlp",
            "collective",
            "overlap_grad_reduce",
            "collective_cycle_ms",
            "data_loader_samples_per_s",
        ]
    } else {
        &[
            "micro_batch",
            "virtual_stages",
            "zero_stage",
            "zero_shard_ranks",
            "zero1_all_reduce",
            "zero1_broadcast",
            "recompute",
            "recompute_modules",
            "sequence_parallel",
            "expert_tp",
            "expert_cp",
            "collective",
            "overlap_grad_reduce",
            "overlap_param_gather",
            "overlap_tp_comm",
            "fused_loss",
            "metric_losses",
            "fp8",
            "fp8_param_gather",
            "fp32_grads",
            "collective_cycle_ms",
            "data_loader_samples_per_s",
        ]
    };
    // Images and video clips: their decoding and storage can be modelled.
    let frames = !inference && matches!(family, Family::Vit | Family::Cnn);
    // Expert tensor parallelism splits a mixture of experts' experts; context-parallel ranks
    // can hold different ones.
    let experts_only = |key: &str| matches!(key, "expert_tp" | "expert_cp");
    let offered = |f: &Field| keep.contains(&f.key) && (!experts_only(f.key) || family == Family::LlmMoe);
    all_task_fields().into_iter().filter(|f| offered(f) || (frames && is_loader(f))).collect()
}

fn is_loader(f: &Field) -> bool {
    f.key.starts_with("loader_")
}

/// The default model's task fields in the form's two groups: how training (or serving) runs,
/// and the input pipeline (the measured rate, decoding and storage, with those a key left from
/// another family sets: `loader_fields_set`).
pub fn task_field_groups(family: Family, inference: bool, set: impl Fn(&str) -> bool) -> (Vec<Field>, Vec<Field>) {
    let (mut input, how): (Vec<Field>, Vec<Field>) = default_task_fields(family, inference)
        .into_iter()
        .partition(|f| f.key == "data_loader_samples_per_s" || is_loader(f));
    input.extend(loader_fields_set(family, inference, set));
    (how, input)
}

/// The input pipeline's decoding and storage fields that `set` says a scenario has although
/// its family's form does not offer them (an LLM's training with a clip decoder left from a
/// ViT): shown, so the user can see and clear what the engine reads. Serving reads none.
fn loader_fields_set(family: Family, inference: bool, set: impl Fn(&str) -> bool) -> Vec<Field> {
    if inference {
        return Vec::new();
    }
    let offered = default_task_fields(family, inference);
    all_task_fields().into_iter().filter(|f| is_loader(f) && set(f.key) && !offered.contains(f)).collect()
}

const FORMATS: &[(&str, &str)] = &[
    ("fp16", "FP16 (2 bytes)"),
    ("bf16", "BF16 (2 bytes)"),
    ("fp8", "FP8 (1 byte)"),
    ("int8", "INT8 (1 byte)"),
    ("int4", "INT4 (half a byte)"),
];

fn all_task_fields() -> Vec<Field> {
    vec![
        extra(T, "batching", "Batching", Kind::Choice(&[("static", "static: one batch start to end"), ("inflight", "in-flight: requests join and leave every step")]), "static",
            "How the engine batches requests. A static batch (FasterTransformer) starts its requests together, prefills them together and decodes until the last one ends. In-flight (continuous) batching, as vLLM, TensorRT-LLM and SGLang run, admits a request as soon as its KV pages fit and decodes every request in flight each step; the figures are its steady state, with the batch as the most requests in flight, and new prompts prefilled in chunks inside the decode steps, as vLLM's V1 engine and TensorRT-LLM do, or a burst of requests sent at once when Requests sent at once is set (a throughput benchmark's run). Engines that prefill in steps of their own (SGLang by default, vLLM up to 0.6) are modelled with Prefill steps set to separate."),
        extra(T, "input_tokens", "Prompt tokens", Kind::OptionalCount, "sequence length less the output",
            "Tokens in each request's prompt. The prefill processes them all at once (compute-bound); they stay in the KV cache while the answer is generated."),
        extra(T, "output_tokens", "Generated tokens", Kind::OptionalCount, "128",
            "Tokens generated per request, one decode step each. Every step reads all weights and the whole KV cache: at small batches it is bound by HBM bandwidth."),
        extra(T, "weight_format", "Weight format", Kind::Choice(FORMATS), "the model's bytes per parameter",
            "How the weights are stored for serving. FP8 and INT8 halve the bytes each decode step reads. FP8 GEMMs run on FP8 tensor cores where the GPU has them (a Peak FP8 is set; H100: 1979 TFLOP/s), else in 16 bits on weights read in 8 (as vLLM runs FP8 on an A100); INT8 GEMMs run at the INT8 peak; INT4 weights are read at a quarter of FP16 and computed in 16 bits."),
        extra(T, "kv_format", "KV-cache format", Kind::Choice(FORMATS), "the model's bytes per parameter",
            "How keys and values are cached. An FP8 cache holds twice the tokens: a larger batch fits."),
        extra(T, "kv_page_tokens", "KV page", Kind::OptionalCount, "16 tokens",
            "In-flight batching: tokens per page of the paged KV cache (vLLM's block size). A request holds whole pages, so on average half a page per request is lost; bigger pages lose more."),
        extra(T, "step_tokens", "Tokens per step", Kind::OptionalCount, "2048",
            "In-flight batching: the most tokens one engine step processes, decode tokens and prompt chunks together (vLLM's max_num_batched_tokens, Sarathi-Serve's token budget). A smaller budget keeps steps short (a faster token for everyone) but splits long prompts into more chunks (a later first token)."),
        extra(T, "prefill_steps", "Prefill steps", Kind::Choice(&[("mixed", "mixed: prompt chunks ride in the decode steps"), ("separate", "separate: prompts in steps of their own")]), "mixed",
            "In-flight batching: where the engine prefills new prompts. Mixed: chunks of them fill each decode step's token budget (vLLM's V1 engine, TensorRT-LLM, SGLang with --enable-mixed-chunk), riding on the weight reads the decode step pays for anyway. Separate: a step of prompts alone, ahead of decoding, which waits for it (SGLang's default; vLLM before V1 without chunked prefill): the first token comes sooner, but each such step reads every weight again and holds every decoding request back, so tokens come further apart."),
        extra(T, "scheduler_steps", "Decode steps per round", Kind::OptionalCount, "1",
            "In-flight batching with prompts in steps of their own: decode steps the engine runs per scheduling round (vLLM 0.6's --num-scheduler-steps, SGLang's --num-continuous-decode-steps). New prompts start only between rounds, so a first token waits for the round under way, and a round's tokens reach the client together; the scheduler's work is paid once per round. 1: every step is scheduled."),
        extra(T, "request_rate", "Request rate (requests/s)", Kind::OptionalNumber, "full load: the batch in flight",
            "In-flight batching: requests arriving per second over the whole cluster. The figures are then for that load: as many requests stay in flight as the rate times their time in the system (Little's law), so a light load gets fast tokens and a heavy one queues. Above what the engine can complete, the page says it is overloaded."),
        extra(T, "burst_requests", "Requests sent at once", Kind::OptionalCount, "none: the steady state",
            "In-flight batching: a burst of this many requests sent together, as throughput benchmarks send them (vllm bench serve --num-prompts N without a rate, offline throughput scripts). The engine runs it step by step until the last request finishes: the first prompts are prefilled before anything decodes, the others wait for a place, and at the end fewer and fewer requests decode. The figures are then the burst's: its output tokens over its duration, means and percentiles over its requests. Requests of one length (a benchmark's random prompts) finish together, in waves; give a request mix when their lengths vary, as a dataset's do. Leave it empty for the steady state; it cannot be combined with a request rate."),
        extra(T, "request_mix", "Request mix", Kind::OptionalText, "every request of the prompt and generated tokens above",
            "In-flight batching: the kinds of request served, as prompt/generated tokens with a weight, such as 256/128:3, 4096/512:1 (three short chats for one long document). The engine runs at the mix's mean lengths, and the first-token and end-to-end latencies spread over the kinds (their percentiles are shown). Clear the prompt and generated tokens above when you set a mix."),
        extra(T, "length_spread", "Length spread", Kind::Choice(&[("fixed", "fixed: every request of these lengths"), ("exponential", "exponential: long-tailed, as chat traffic")]), "fixed",
            "In-flight batching: how the requests' prompt and generated tokens vary around the lengths above, which are then their means. Fixed: every request alike (a benchmark's random dataset). Exponential: each length spread as an exponential distribution, the most even spread a length with only its mean known can have, and long-tailed as chat traffic is (ShareGPT): half the answers are shorter than 0.69 of the mean and one in a hundred longer than 4.6 means. The throughput stays the mean's; the median request ends sooner, the slowest much later (the percentiles show it), long answers hold the KV cache longer, and a burst drains on its longest answers."),
        extra(T, "cuda_graphs", "CUDA graphs", Kind::Flag, "yes",
            "Whether the engine replays each decode step from a captured CUDA graph (vLLM, SGLang and TensorRT-LLM do; Hugging Face eager and FasterTransformer do not). From a graph each small kernel costs the GPU about 3 us (its launch from the GPU's own queue and its short run) instead of a host launch of about 4 us: at small batches, where a decode step is hundreds of short kernels, those microseconds are a large part of the time per token. Steps of more than 512 tokens (a batch's prefill, large prompt chunks) run eagerly, as vLLM runs them."),
        extra(T, "custom_all_reduce", "Engine all-reduce kernels", Kind::Flag, "yes",
            "Whether tensor-parallel all-reduces within a node may use the engine's own one-shot and two-shot kernels (vLLM, SGLang, TensorRT-LLM), which read the peers' buffers directly over NVLink in one or two phases, where NCCL's ring pays a hop per GPU. The fastest of them and NCCL is taken for each message: a decode step's few kilobytes finish several times sooner. Across nodes NCCL is used. Engines turn them off on PCIe-only machines."),
        extra(T, "sampling", "Sampling", Kind::Choice(&[("greedy", "greedy: the most likely token"), ("random", "random: a draw at a temperature"), ("top-p", "top-p: nucleus, by sorting the vocabulary")]), "greedy",
            "How each next token is picked from the logits, which the engine's sampler pays for after the output layer in every step, on every GPU of a tensor-parallel group (the logits of the whole vocabulary are gathered to each first). Greedy (temperature 0, what serving benchmarks ask for): the logits cast to FP32 and an argmax, 10 bytes read and written per logit. Random (a temperature, no top-p or top-k): a softmax and a draw, about 46 bytes. Top-p as PyTorch's sampler (vLLM without FlashInfer, Hugging Face) and FasterTransformer compute it: each request's logits sorted over the whole vocabulary first, about 256 bytes per logit in some 20 kernels: with 128 requests and a 128K vocabulary about 1.6 ms a step on an H100, which vLLM measured costing 15% of a benchmark's throughput. Engines with sorting-free kernels (FlashInfer's) spend a quarter to a third of that; choose random for them."),
        extra(T, "host_step_ms", "Host time per step (ms)", Kind::OptionalNumber, "0",
            "The engine's host time per step that the GPU waits for: scheduling, preparing the inputs, processing the outputs and sending the step to its workers (the sampler's GPU kernels are counted by Sampling). Engines that do this in Python between GPU steps (vLLM before 0.6, with Ray workers) leave the GPU idle meanwhile: vidur's profile of that vLLM measured about 3.4 ms a step plus 0.23 ms per request for Llama 2 70B on 4 A100s, 18 ms at 64 requests. Leave 0 for engines that overlap it with the GPU's work (vLLM's V1 engine, SGLang's overlap scheduler, TensorRT-LLM)."),
        extra(T, "host_request_ms", "Host time per request per step (ms)", Kind::OptionalNumber, "0",
            "The part of the host's time per step that grows with the requests in it (processing each one's output, detokenizing, sending its state): added to the host time per step for every request in the step."),
        extra(T, "emb_sharding", "Embedding sharding", Kind::Choice(&[("table", "table-wise: whole tables per GPU"), ("row", "row-wise: each table's rows spread"), ("column", "column-wise: each table's columns spread")]), "table",
            "How the mp levels split the embedding tables (TorchRec's sharding types). Table-wise sends each GPU's pooled embeddings by all-to-all (MAD-Max's mp); row-wise balances huge tables but reduce-scatters partial pools of every table; column-wise splits wide tables and all-to-alls the column slices."),
        extra(T, "bot_mlp", "Bottom MLP placement", Kind::Choice(&[("data_parallel", "data-parallel: on every GPU"), ("one_gpu", "one GPU: all samples, no tables there")]), "data_parallel",
            "Where the bottom MLP (the dense features' layers) runs once the tables are split over GPUs. Data-parallel: every GPU runs it on its own samples, as TorchRec does. One GPU: NVIDIA's DLRM examples run it on GPU 0 for every sample of the batch and send its output with the pooled embeddings; on more than 4 GPUs that GPU holds no table. No gradient to synchronise, but that GPU does the whole batch's bottom MLP, and the exchange waits for it."),
        extra(T, "conv_layout", "Convolution layout", Kind::Choice(&[("nhwc", "NHWC: channels last"), ("nchw", "NCHW: channels first")]), "nhwc",
            "How the activations are laid out in memory. Tensor cores compute convolutions on channels-last (NHWC) tensors: given channels-first (NCHW) ones, PyTorch's and MXNet's default, cuDNN transposes each convolution's input and output (and their gradients) to NHWC and back, reading and writing them once more. With 16-bit math on V100 and later and TF32 on A100 and later that is most of a ResNet's time in HBM traffic; GPUs without tensor cores for the precision (FP32 on a V100) run NCHW as fast. PyTorch's channels_last memory format (NVIDIA's mixed-precision examples use it) or TensorFlow's default avoids it."),
        extra(T, "micro_batch", "Micro-batch", Kind::OptionalCount, "the whole batch per GPU; 1 with a pipeline",
            "Samples per micro-batch. The batch per GPU is split into micro-batches that run one after another (gradient accumulation); a pipeline needs several to fill its stages. Smaller micro-batches need less activation memory."),
        extra(T, "virtual_stages", "Pipeline chunks per GPU", Kind::OptionalCount, "1",
            "1 runs the plain 1F1B schedule; 2 or more is Megatron's interleaved schedule, which cuts the pipeline bubble by that factor at the cost of more point-to-point transfers. Needs a pp level."),
        extra(T, "zero_stage", "ZeRO stage", Kind::Choice(&[("0", "0: replicate everything"), ("1", "1: shard optimizer states"), ("2", "2: and gradients"), ("3", "3: and weights (FSDP)")]), "0",
            "How data-parallel ranks share the training state (Rajbhandari et al. 2020). Each stage divides one more of optimizer states (12 bytes per parameter), gradients (2) and weights (2) by the data-parallel degree; stage 3 all-gathers weights before each layer. An fsdp level is stage 3 over its group."),
        extra(T, "zero_shard_ranks", "ZeRO-1 group", Kind::OptionalCount, "every data-parallel rank",
            "With ZeRO stage 1: how many data-parallel ranks (the innermost, usually one node's) share one copy of the optimizer states; the copies are replicated across the groups (InternLM's zero1, Megatron-core's distributed-optimizer instances). Empty: all of them. A group within a node gathers the updated weights over NVLink instead of the network, and the gradients are all-reduced over every rank rather than reduce-scattered; each GPU holds and updates more of the optimizer states (12 bytes per parameter over the group). Must divide the ranks that hold the same weights (data, expert and context parallelism)."),
        extra(T, "zero1_all_reduce", "ZeRO-1 all-reduces gradients", Kind::Flag, "no",
            "With ZeRO stage 1 over every data-parallel rank: sum the gradients with an all-reduce, every rank receiving all of them, as InternLM's and Colossal-AI's ZeRO-1 do, instead of a reduce-scatter that sends each rank only the sum of the shard it updates (Megatron-LM's distributed optimizer, DeepSpeed's ZeRO-1). An all-reduce moves twice the bytes. Other ZeRO stages ignore it: plain data parallelism always all-reduces, stages 2 and 3 always reduce-scatter."),
        extra(T, "zero1_broadcast", "ZeRO-1/2 broadcasts updated weights", Kind::Flag, "no",
            "With ZeRO stage 1 or 2: after the optimizer step, each rank of the ZeRO group sends the weights it updated by a broadcast of its own, the ranks one after another, as InternLM's hybrid ZeRO and Colossal-AI's early low-level ZeRO do, instead of one all-gather of the same bytes (Megatron-LM's distributed optimizer, DeepSpeed). Each broadcast pays the ring's latency, so the time grows with the square of the group: negligible within a node, seconds over a thousand GPUs."),
        extra(T, "recompute", "Activation recomputation", Kind::Choice(&[("none", "none: keep every activation"), ("selective", "selective: recompute attention scores"), ("full", "full: recompute each layer")]), "none",
            "Keep activations for the backward pass, or recompute them (Korthikanti et al. 2022). Full recomputation keeps only each layer's input and repeats the forward pass (about 33% more compute); selective recomputes only the attention scores, which dominate memory at long sequences."),
        extra(T, "recompute_modules", "Recomputed modules", Kind::OptionalText, "core_attn",
            "With selective recomputation, the modules whose outputs are dropped after the forward pass and computed again in the backward pass (Megatron-core's --recompute-modules), separated by commas: core_attn (the attention scores), layernorm (both norms: their outputs are the next GEMMs' inputs), mlp (a dense feed-forward block, all but its input), moe (a mixture of experts' feed-forward block: its dispatched copies and experts' activations, the forward GEMMs and all-to-alls run again) and moe_act (the experts' activation function's output). Empty: core_attn, Megatron-core's default."),
        extra(T, "sequence_parallel", "Sequence parallelism", Kind::Flag, "no",
            "With tensor parallelism, split the norm and dropout work and activations along the sequence too: each all-reduce becomes a reduce-scatter plus an all-gather (same bytes), and those activations take 1/tp of the memory."),
        extra(T, "expert_tp", "Expert tensor parallelism", Kind::OptionalCount, "the tensor-parallel degree",
            "Training a mixture of experts with tensor parallelism: how many ranks of each tensor-parallel group split an expert (Megatron-core's --expert-tensor-parallel-size). Empty: all of them, as they split the dense layers. Fewer, such as 1: the other ranks hold whole experts of their own and join expert parallelism (tp / etp x ep ranks share the experts), each routing its own sequence-parallel share of the tokens, so the experts' GEMMs are wider on fewer tokens (the same FLOPs), no tensor-parallel gather and scatter surround them, the token dispatch works on fewer tokens, and the all-to-all spans more GPUs (mostly within the node). Megatron-core's DeepSeek-V3 and Qwen3 recipes use 1. Needs sequence parallelism, a divisor of the tensor-parallel degree, and tp / etp x ep dividing the experts."),
        extra(T, "expert_cp", "Experts over context-parallel ranks", Kind::OptionalCount, "1",
            "Training a mixture of experts with context parallelism (a cp level): how many ranks of each context-parallel group hold different experts and join expert parallelism (Megatron-core's MoE parallel folding, which forms the expert-parallel group from the tensor- and context-parallel ranks first). Empty or 1: each context-parallel rank holds the same experts, as the data-parallel replicas do. More: each GPU holds fewer experts (less memory), each over more ranks' tokens (wider GEMMs, the same FLOPs), and the all-to-all spans those ranks, usually within the node. Each rank routes its own share of the sequence either way. A divisor of the context-parallel degree; with the ep level (and the tensor-parallel ranks holding whole experts) it must divide the experts."),
        extra(T, "collective", "Collective algorithm", Kind::Choice(&[("hierarchical", "hierarchical: node, then network"), ("ring", "ring over every GPU"), ("tree", "tree across nodes (log latency, less bandwidth)"), ("in_network", "in-network aggregation (SwitchML, SHARP)")]), "hierarchical",
            "How all-reduces and gathers move bytes across nodes. Hierarchical (NCCL's default, PowerAI DDL) reduces within the node over NVLink, then across nodes on 1/k of the data; NCCL runs all-gathers and reduce-scatters (ZeRO, FSDP) as rings through every GPU, whose latency grows with the group: at a thousand GPUs it can outweigh a small per-GPU batch. A tree (NCCL's, for all-reduces across nodes) cuts latency to the log of the node count but keeps less bandwidth, so it pays for small messages on many nodes; in-network aggregation has the switch sum the data, halving what each host sends."),
        extra(T, "overlap_grad_reduce", "Overlap gradient reduction", Kind::Flag, "no",
            "Reduce gradients in buckets while the backward pass runs (PyTorch DDP, Megatron's overlap_grad_reduce) instead of after it."),
        extra(T, "overlap_param_gather", "Gather weights ahead", Kind::Flag, "ZeRO-3 yes, ZeRO 1/2 no",
            "Gather each layer's weights one layer ahead, while the previous layer computes. With ZeRO-3 or FSDP: the weights every layer gathers before each pass (FSDP prefetches by default). With ZeRO 1 or 2: the weights the other ranks updated, gathered during the next iteration's first forward pass instead of all at once after the optimizer step (Megatron-LM's --overlap-param-gather, off by default there); the first layer's gather, and any that takes longer than the layer before it computes, still delays the step."),
        extra(T, "overlap_tp_comm", "Overlap tensor-parallel communication", Kind::Flag, "no",
            "Hide tensor-parallel collectives behind independent GEMM work (comm/GEMM overlap, as in Transformer Engine); off, the next GEMM waits for them as in Megatron-LM."),
        extra(T, "fused_loss", "Fused cross-entropy", Kind::Flag, "no",
            "Compute the loss in one fused kernel over the 16-bit logits (flash-attn's cross-entropy, llm-foundry's default) instead of PyTorch's or Megatron-LM's, which keep an fp32 copy of the logits. With a large vocabulary and many tokens per GPU the logits are gigabytes: the fused kernel holds 4 bytes per logit instead of 6."),
        extra(T, "metric_losses", "Training metrics over the logits", Kind::OptionalCount, "0",
            "How many times the training loop computes the cross-entropy again over each micro-batch's logits to log metrics: 0 for Megatron-LM, DeepSpeed and most loops, which log the loss they computed; 2 for MosaicML Composer with llm-foundry's models (LanguageCrossEntropy and LanguagePerplexity, after every micro-batch). Each one casts the logits to fp32 and takes their log-softmax, about 22 bytes of HBM traffic per logit: with a small model and a large vocabulary that is a tenth of the step or more."),
        extra(T, "fp8", "FP8 training", Kind::Flag, "no",
            "Run the transformer blocks' GEMMs in FP8 as Transformer Engine does (Megatron-LM's --fp8-format hybrid): at the FP8 peak, about 1.8x the BF16 GEMM rate on an H100, but every GEMM input and output gradient is cast first, attention, norms and communication stay BF16, and FP8 copies of the weights take 2 bytes per parameter. Needs a GPU with FP8 tensor cores (H100 or later); the gain end to end is well under 2x."),
        extra(T, "fp8_param_gather", "FP8 weights gathered", Kind::Flag, "no",
            "With FP8 training and ZeRO stage 1, 2 or 3: keep and gather the transformer blocks' weights in FP8 (Megatron-LM's --fp8-param-gather, NeMo's fp8_params, torchao's float8 all-gather for FSDP). Each weight all-gather moves 1 byte per block parameter instead of 2, and with ZeRO 1 or 2 no 16-bit copy of the blocks' weights is kept beside the FP8 one (the optimizer keeps the fp32 master weights). Ignored without FP8 training or without ZeRO."),
        extra(T, "fp32_grads", "FP32 gradients", Kind::Flag, "no",
            "Accumulate and reduce gradients in fp32, 4 bytes each: Megatron-LM always does for bf16 training (accumulate_allreduce_grads_in_fp32), and so does DeepSpeed's bf16 optimizer. Twice the gradient memory and twice the bytes of every gradient all-reduce or reduce-scatter of 16-bit gradients; no is PyTorch DDP's and FSDP's way with 16-bit gradients."),
        extra(T, "collective_cycle_ms", "Collective launch cycle (ms)", Kind::OptionalNumber, "0: launched directly",
            "How often a host thread launches the collectives, in ms. Horovod (TensorFlow and older PyTorch jobs, NVIDIA's TensorFlow 2 DLRM) hands each all-reduce and all-to-all to a background thread that wakes every HOROVOD_CYCLE_TIME, 1 ms by default, and starts those every GPU has ready: a collective waits half a cycle on average, and a short step that waits on three of them loses about 1.5 ms. PyTorch DDP and FSDP, Megatron-LM and DeepSpeed call NCCL directly: leave it empty."),
        extra(T, "data_loader_samples_per_s", "Input rate, measured (samples/s)", Kind::OptionalNumber, "unlimited",
            "Samples per second your data loader delivers to the whole job, if you measured it. Throughput cannot exceed it. Leave empty when input is not a bottleneck, or model the decoding and storage below instead (the slowest of them sets the rate)."),
        extra(T, "loader_frames_per_sample", "Frames per sample", Kind::OptionalCount, "none: decoding not modelled",
            "Frames the loader decodes into each sample: 1 for an image, 16 for a 16-frame video clip. Setting it models the decoding: the job decodes nodes x (CPU cores x their rate + GPUs x their decoders' rate) pixels per second, and each sample costs its frames' pixels."),
        extra(T, "loader_frame_width", "Frame width (pixels)", Kind::OptionalCount, "needed to model decoding",
            "Width of the stored frames (before any crop or resize): 1920 for 1080p video, 569 for 16:9 video re-encoded to 320 lines, about 470 for ImageNet's JPEGs (their average). Decoding costs every stored pixel."),
        extra(T, "loader_frame_height", "Frame height (pixels)", Kind::OptionalCount, "needed to model decoding",
            "Height of the stored frames: 1080 for 1080p, 320 for video re-encoded to a 320-pixel short side (as AVION re-encodes Kinetics), about 390 for ImageNet (its average)."),
        extra(T, "loader_frame_stride", "Frames between sampled frames", Kind::OptionalCount, "1: consecutive frames",
            "A clip samples every s-th frame of the video: 4 in VideoMAE's 16-frame Kinetics clips. The decoder still decodes the frames in between (it cannot skip them), unless jumping to the next keyframe is cheaper."),
        extra(T, "loader_keyframe_interval", "Keyframe interval (frames)", Kind::OptionalCount, "250 for clips (x264's default), 1 for images",
            "Frames from one keyframe to the next in the stored video. A decoder must start at the keyframe before a clip, so on average (interval - 1) / 2 frames are decoded and thrown away per clip: with x264's default of 250, more than a clip's own 61 frames. Re-encoding with short intervals (ffmpeg -g 16) cuts that waste; images and all-intra video have 1."),
        extra(T, "loader_cores_per_node", "CPU cores decoding per node", Kind::OptionalCount, "0",
            "CPU cores per node that decode samples (the DataLoader's worker processes): a DGX A100 has 128. Cores that also run the training processes and augmentations decode less."),
        Field { kind: Kind::OptionalNumber, default: "199 (TorchCodec's benchmark)", ..number(T, "loader_core_pixels_per_s", "Decoding rate per core", "Mpixel/s", 1e6,
            "Pixels one CPU core decodes per second. The default is from TorchCodec's published decoder benchmark: single-threaded FFmpeg decoders of 1080p H.264 (libx264) at 96 frames/s each on a 22-CPU machine. Measure your own codec and CPU with ffmpeg -threads 1 -benchmark.") },
        Field { kind: Kind::OptionalNumber, default: "0: not used", ..number(T, "loader_gpu_pixels_per_s", "GPU decoding rate per GPU", "Mpixel/s", 1e6,
            "Pixels each GPU's hardware video decoders (NVDEC) decode per second, if the loader uses them (torchcodec or DALI on CUDA): about 5,440 on an A100 (TorchCodec's benchmark: 2,624 frames of 1080p per second). NVDEC runs beside the SMs, so training does not slow it.") },
        Field { kind: Kind::OptionalNumber, default: "none: storage not modelled", ..number(T, "loader_bytes_per_sample", "Bytes read per sample", "MB", 1e6,
            "Bytes the loader reads from storage per sample: Kinetics-400's 450 GB over its 260,000 ten-second videos is 1.7 MB a clip; about 110 KB for an ImageNet JPEG.") },
        Field { kind: Kind::OptionalNumber, default: "none: storage not modelled", ..number(T, "loader_storage_bytes_per_s", "Storage read rate per node", "GB/s", 1e9,
            "Bytes per second each node reads from its storage (local NVMe drives or a network file system, with both keys set): the job reads nodes x this over the bytes per sample.") },
    ]
}

/// The system fields besides the cluster shape (GPUs per node, nodes) and the GPU type.
pub fn system_fields() -> Vec<Field> {
    vec![
        number(S, "f16_flops", "Peak FP16/BF16", "TFLOP/s", 1e12, "Dense tensor-core peak per GPU, from the datasheet: 312 (A100), 989 (H100 SXM), 2250 (B200). Used when the model has 2 bytes per parameter."),
        number(S, "f32_flops", "Peak FP32 (TF32)", "TFLOP/s", 1e12, "Per-GPU peak for 4-byte models (TF32 tensor cores): 156 (A100), 495 (H100 SXM)."),
        number(S, "f64_flops", "Peak FP64", "TFLOP/s", 1e12, "Per-GPU peak for 8-byte models: 9.7 (A100), 34 (H100 SXM)."),
        number(S, "i8_ops", "Peak INT8", "TOP/s", 1e12, "Per-GPU peak for 1-byte models: 624 (A100), 1979 (H100 SXM)."),
        Field { kind: Kind::OptionalNumber, default: "none: no FP8 tensor cores", ..number(S, "fp8_flops", "Peak FP8", "TFLOP/s", 1e12, "Dense FP8 tensor-core peak per GPU, for FP8 training and FP8 weights in serving: 1979 (H100, H200), 4500 (B200), 2615 (MI300X). Empty on GPUs without FP8 (A100 and older), which then refuse FP8 training and serve FP8 weights in 16-bit GEMMs.") },
        Field { kind: Kind::OptionalCount, default: "none: not charged", ..number(S, "sm_count", "SMs per GPU", "", 1.0, "Streaming multiprocessors per GPU (compute units on AMD), from the architecture whitepaper: 108 (A100), 132 (H100, H200), 148 (B200), 304 (MI300X), 80 (V100). The default model cuts each GEMM's output into 128 x 128 tiles that the SMs compute in waves: a last wave that fills only some SMs leaves the others idle (a 768 x 2,304 weight gradient, 108 tiles, keeps 82% of an H100's 132 SMs busy), and an output under one wave splits its inner dimension to fill them (split-K). Empty: no wave quantization charged. MAD-Max paper mode has no such term.") },
        number(S, "flops_util", "Compute utilisation", "", 1.0, "Share of peak FLOP/s that GEMMs reach: 0.705 in the MAD-Max calibration (ZionEX, an end-to-end figure, which the presets carry); the default model's validation uses 0.80 on A100s, 0.70 on H100s and H200s and 0.63 on B200s (whose power limit holds their clock well under the boost clock their peak assumes), as it counts the other kernels itself."),
        number(S, "mem_cap", "HBM capacity", "GB", 1e9, "Memory per GPU in GB (10^9 bytes), as nvidia-smi's total: a datasheet's \"80 GB\" is 80 GiB, 85.9 GB, less what the driver keeps (85.5 on an H100 SXM). A100 40 GB: 42.9; H200: 151; MI300X: 206."),
        number(S, "mem_bw", "HBM bandwidth", "GB/s", 1e9, "Memory bandwidth per GPU: 1555 (A100 40GB), 3350 (H100 SXM). Embedding lookups are bound by it."),
        number(S, "mem_bw_util", "HBM utilisation", "", 1.0, "Share of HBM bandwidth reached: 0.836 in the MAD-Max calibration."),
        Field { kind: Kind::OptionalNumber, default: "as HBM utilisation", ..number(S, "gemm_bw_util", "HBM share of GEMMs", "", 1.0, "Share of HBM bandwidth a GEMM's own reads and writes reach, where it differs from other kernels': decoding's thin GEMMs stream the weights at it, so it sets a memory-bound decode step's pace. The default model's validation uses the shares profiled GEMMs reach, 0.741 on A100s and 0.843 on H100s (vidur's kernels); empty: the HBM utilisation. MAD-Max paper mode has one HBM share.") },
        number(S, "num_nvlinks", "NVLinks per GPU", "", 1.0, "Links per GPU within a node: 12 (A100), 18 (H100); PCIe-only GPUs: 1 link at PCIe speed."),
        number(S, "bw_per_nvlink", "Speed per NVLink", "GB/s", 1e9, "Both directions together, as MAD-Max counts it: 50 GB/s per NVLink 3/4 link, 100 for NVLink 5, 64 for PCIe 4.0 x16."),
        number(S, "nvlink_util", "NVLink utilisation", "", 1.0, "Share of NVLink bandwidth collectives reach: 0.6667 in the MAD-Max calibration."),
        number(S, "num_ibroce_ports", "NICs per node", "", 1.0, "Network ports per node: 8 on DGX-class nodes (one per GPU), 1 on a PC."),
        number(S, "ibroce_bw", "Speed per NIC", "Gb/s", NIC_SCALE, "Line rate of each port, one direction, as vendors quote it: 200 (HDR), 400 (NDR), 10 or 1 (Ethernet)."),
        number(S, "ibroce_util", "NIC utilisation", "", 1.0, "Share of NIC bandwidth collectives reach: 0.56 in the MAD-Max calibration."),
        number(S, "ar_perc_intra", "All-reduce intra share", "", 1.0, "MAD-Max mixes intra- and inter-node bandwidth for cluster-wide all-reduces with this weight: 0.2746 (ZionEX); 1 on a single node."),
        Field { kind: Kind::OptionalNumber, default: "0: a datacenter network", ..number(S, "nic_latency_s", "Link latency", "ms", 1e-3, "One-way latency each hop between nodes adds, for nodes far apart: about 0.1-1 ms between buildings, 5-20 ms across a city or between homes, 30-80 ms across a continent. The default model adds it to every network step of a collective (a ring over m nodes takes m - 1 of them each way) and to every transfer between pipeline stages; empty or 0 is a datacenter network, whose switch hops NCCL's latency already counts. MAD-Max paper mode has no latency term.") },
        Field { kind: Kind::OptionalNumber, default: "0: NCCL's own", ..number(S, "nvlink_latency_s", "Latency within a node", "µs", 1e-6, "Latency each hop within a node adds to NCCL's own (about 2-4 µs over NVLink), in microseconds: a few more for GPUs that talk over PCIe or through the host. The default model adds it to every step of a collective within a node (a ring of k GPUs takes k - 1 each way) and to each phase of a serving engine's own all-reduce kernels. Empty or 0: NVLink as NCCL measures it. MAD-Max paper mode has no latency term.") },
        Field { kind: Kind::OptionalCount, default: "none", ..number(S, "second_gpu_nodes", "Nodes of the second GPU type", "", 1.0, "How many of the nodes (the last ones) hold the second GPU type; the others hold the first. Every synchronous step waits for its slowest GPU, so the cluster runs at the slower type's pace: the default model times each type as if it made up the whole cluster and shows the slower one, with the memory of the type closest to its HBM. A pipeline that is the plan's outermost level, each stage on one type, is placed by speed instead: the faster GPUs' stages take more layers, in inverse proportion to a layer's time on each. The second type's nodes have its own NVLinks (from its datasheet) and the cluster's network. MAD-Max paper mode has one GPU type.") },
        Field { kind: Kind::OptionalCount, default: "1: one site", ..number(S, "num_sites", "Sites", "", 1.0, "Sites the nodes are spread over (datacenters, buildings or homes), each with the same number of consecutive nodes, joined by a wide-area link that is slower and farther than the network inside a site. Collectives whose group spans sites gain a third level: within a node, across a site's nodes, then across sites (a ring crosses sites w - 1 times; a two-level path sends 1/s of its data over the link, s being the group's GPUs per site); a pipeline stage in another site receives its activations over the link. The default model only: MAD-Max paper mode refuses more than one site.") },
        Field { kind: Kind::OptionalNumber, default: "needed with several sites", ..number(S, "wan_bw", "Wide-area bandwidth per site", "Gb/s", 1e9 / 8.0, "Each site's link to the others, Gb/s in each direction, as the rate transfers reach (no utilisation factor applies): 0.1-1 for a home, 10-100 between buildings, 100-400 or more between datacenters. Every GPU of a site shares it when they communicate at once.") },
        Field { kind: Kind::OptionalNumber, default: "0: a network hop's own", ..number(S, "wan_latency_s", "Wide-area latency", "ms", 1e-3, "One-way latency of a hop between sites, in ms, in place of the link latency on that hop: about 1 ms between buildings of a campus, 5-20 ms across a city or between homes, 30-80 ms across a continent.") },
    ]
}

/// A NIC speed of 1 Gb/s each way in MAD-Max's unit (bytes/s, both directions).
pub const NIC_SCALE: f64 = 2.0 / 8.0 * 1e9;

/// The batch field of a spec key.
pub fn batch_field(spec_key: &str, family: Option<Family>) -> Field {
    match spec_key {
        "mlp_parallel" if family == Some(Family::Cnn) => count(T, "local_mlp_bs", "Images per GPU", "Images each GPU trains on (or classifies) per iteration: 32 to 256 for ResNet-50. The global batch is this times the GPU count; activation memory grows with it."),
        "mlp_parallel" => count(T, "local_mlp_bs", "MLP batch per GPU", "Samples each GPU's MLP processes per iteration: 512 in the DLRM tasks. The global batch is this times the data-parallel degrees."),
        "emb_parallel" => count(T, "local_emb_bs", "Embedding batch per GPU", "Samples each GPU's embedding part processes. With model-parallel (mp) tables it is the global batch; it follows the other batches automatically when the cluster changes."),
        _ => count(T, "local_transformer_bs", "Transformer batch per GPU", "Samples (sequences or images) each GPU's transformer processes per iteration: 1 for large LLMs, 16 for ViTs."),
    }
}

/// What a problem's field path (`model.num_transformer_layers`,
/// `task.transformer_parallel_degree[1]`) is called on the form, and the id of the input that
/// sets it, when the form has one.
pub fn field_of_path(path: &str, family: Option<Family>) -> Option<(String, Option<String>)> {
    let (config, key) = path.split_once('.')?;
    let (base, index) = match key.split_once('[') {
        Some((b, i)) => (b, i.trim_end_matches(']').parse::<usize>().ok()),
        None => (key, None),
    };
    // The plans: which level, and its strategy or its degree.
    for spec in ["mlp_parallel", "emb_parallel", "transformer_parallel"] {
        let degree = base.strip_suffix("_degree") == Some(spec);
        if config == "task" && (base == spec || degree) {
            let part = if degree { "degree" } else { "strategy" };
            return Some(match index {
                Some(i) => (
                    format!("{}, level {} {part}", spec_label(spec, family), i + 1),
                    Some(format!("{spec}-{i}-{part}")),
                ),
                None => (format!("{} ({part} list)", spec_label(spec, family)), Some(format!("spec-{spec}"))),
            });
        }
    }
    let named = match (config, base) {
        ("system", "num_nodes") => Some("Nodes"),
        ("system", "gpus_per_node" | "num_devices") => Some("GPUs per node"),
        _ => None,
    };
    if let Some(label) = named {
        let id = if base == "num_nodes" { "f-system-num_nodes" } else { "f-system-gpus_per_node" };
        return Some((label.to_owned(), Some(id.to_owned())));
    }
    let mut all: Vec<Field> = system_fields();
    for family in Family::ALL {
        all.extend(model_fields(family));
        all.extend(default_model_fields(family));
        all.extend(default_task_fields(family, false));
        all.extend(default_task_fields(family, true));
    }
    all.extend(["mlp_parallel", "emb_parallel", "transformer_parallel"].map(|k| batch_field(k, family)));
    all.into_iter()
        .find(|f| f.config.key() == config && f.key == base)
        .map(|f| (f.label.to_owned(), Some(format!("f-{}-{}", f.config.key(), f.key))))
}

/// Labels of spec keys.
pub fn spec_label(spec_key: &str, family: Option<Family>) -> &'static str {
    match spec_key {
        "mlp_parallel" if family == Some(Family::Cnn) => "Network plan",
        "mlp_parallel" => "MLP plan",
        "emb_parallel" => "Embedding plan",
        _ => "Transformer plan",
    }
}

/// What each strategy means, for help texts.
pub fn strategy_help(s: &str) -> &'static str {
    match s {
        "ddp" => "ddp: data parallel. Every GPU holds all weights and its own samples; gradients are all-reduced.",
        "fsdp" => "fsdp: fully sharded data parallel. Weights are split over GPUs and all-gathered before each layer; gradients are reduce-scattered.",
        "tp" => "tp: tensor parallel. Each layer's GEMMs are split over GPUs; activations are all-reduced after layers.",
        "pp" => "pp: pipeline parallel. Layers are split into stages that pass micro-batches along (the default model draws the bubble); in MAD-Max paper mode it only divides weight memory.",
        "cp" => "cp: context parallel (default model). The sequence is split over GPUs; keys and values circulate in a ring while attention computes.",
        "ep" => "ep: expert parallel (default model, MoE). Experts are spread over GPUs; tokens travel to their experts and back with all-to-alls.",
        "mp" => "mp: model-parallel embeddings. Tables are split over GPUs; looked-up rows are exchanged with all-to-all.",
        _ => "",
    }
}

/// The finetune fields of a family: flags, then the first frozen layer.
pub fn freeze_fields(family: Family) -> Vec<(&'static str, &'static str)> {
    match family {
        Family::Dlrm | Family::DlrmMoe => {
            vec![
                ("freeze_top_mlp", "Freeze top MLP"),
                ("freeze_bot_mlp", "Freeze bottom MLP"),
                ("freeze_emb", "Freeze embeddings"),
            ]
        }
        Family::DlrmTransformer => vec![
            ("freeze_top_mlp", "Freeze top MLP"),
            ("freeze_bot_mlp", "Freeze bottom MLP"),
            ("freeze_emb", "Freeze embeddings"),
            ("freeze_transformer", "Freeze transformer"),
        ],
        Family::Llm | Family::LlmMoe | Family::Vit | Family::EncDec => {
            vec![("freeze_emb", "Freeze embeddings"), ("freeze_transformer", "Freeze transformer")]
        }
        Family::Cnn => Vec::new(),
    }
}

pub const MIN_FROZEN: Field = count(
    T,
    "min_frozen_layer",
    "First frozen layer",
    "Layers from this index on send no weight gradients (they still run their backward GEMMs in MAD-Max). Set it to the layer count to train every layer.",
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problem_paths_are_named_as_the_form_names_them() {
        let named = |p: &str| field_of_path(p, Some(Family::Llm));
        assert_eq!(
            named("model.num_transformer_layers"),
            Some(("Transformer layers".into(), Some("f-model-num_transformer_layers".into())))
        );
        assert_eq!(
            named("task.transformer_parallel_degree[1]"),
            Some(("Transformer plan, level 2 degree".into(), Some("transformer_parallel-1-degree".into())))
        );
        assert_eq!(named("system.num_nodes"), Some(("Nodes".into(), Some("f-system-num_nodes".into()))));
        assert_eq!(named("task.fp8").map(|x| x.0), Some("FP8 training".into()));
        assert_eq!(named("nonsense"), None);
    }

    #[test]
    fn an_input_pipeline_left_from_another_family_shows_its_fields_and_only_those() {
        let keys = |f: Vec<Field>| f.into_iter().map(|f| f.key).collect::<Vec<_>>();
        // A ViT or a CNN offers every decoding and storage field; an LLM none.
        for family in [Family::Vit, Family::Cnn] {
            assert_eq!(
                keys(default_task_fields(family, false)).iter().filter(|k| k.starts_with("loader_")).count(),
                10
            );
            assert!(keys(loader_fields_set(family, false, |_| true)).is_empty(), "offered already");
        }
        assert!(!keys(default_task_fields(Family::Llm, false)).iter().any(|k| k.starts_with("loader_")));
        // An LLM's training with a clip decoder set shows those fields; its serving reads none.
        let set = |k: &str| ["loader_frames_per_sample", "loader_cores_per_node"].contains(&k);
        assert_eq!(
            keys(loader_fields_set(Family::Llm, false, set)),
            ["loader_frames_per_sample", "loader_cores_per_node"]
        );
        assert!(loader_fields_set(Family::Llm, true, set).is_empty());
        // The form's groups: the input pipeline apart, the fields left over in it.
        let (how, input) = task_field_groups(Family::Llm, false, set);
        assert_eq!(keys(input), ["data_loader_samples_per_s", "loader_frames_per_sample", "loader_cores_per_node"]);
        assert!(how.iter().all(|f| f.key != "data_loader_samples_per_s") && how.iter().any(|f| f.key == "zero_stage"));
        // Every one has a help text and, being optional, says what applies when empty.
        for f in default_task_fields(Family::Vit, false).into_iter().filter(|f| f.key.starts_with("loader_")) {
            assert!(f.help.len() > 60 && !f.default.is_empty(), "{}", f.key);
        }
    }
}
