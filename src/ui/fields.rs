//! The form's fields: label, unit, scale to the MAD-Max config unit, and help text with a
//! typical value and where the number comes from. One table, read by one generic input
//! component; plain data, no DOM.

use crate::doc::Config;
use crate::engine::scenario::Family;

/// How a field's text becomes a config value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A whole number (layers, dimensions, counts).
    Count,
    /// Any number; the shown value times `scale` is stored.
    Number,
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
}

impl Field {
    /// The field path validation errors use (`system.mem_bw`).
    pub fn path(&self) -> String {
        format!("{}.{}", self.config.key(), self.key)
    }
}

const fn count(config: Config, key: &'static str, label: &'static str, help: &'static str) -> Field {
    Field { config, key, label, unit: "", scale: 1.0, kind: Kind::Count, help }
}

const fn number(
    config: Config,
    key: &'static str,
    label: &'static str,
    unit: &'static str,
    scale: f64,
    help: &'static str,
) -> Field {
    Field { config, key, label, unit, scale, kind: Kind::Number, help }
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
const MLP_DIM: Field = count(M, "mlp_dim", "MLP width", "Width of every (square) MLP layer: 3994 in DLRM-A.");
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

/// The system fields besides the cluster shape (GPUs per node, nodes) and the GPU type.
pub fn system_fields() -> Vec<Field> {
    vec![
        number(S, "f16_flops", "Peak FP16/BF16", "TFLOP/s", 1e12, "Dense tensor-core peak per GPU, from the datasheet: 312 (A100), 989 (H100 SXM), 2250 (B200). Used when the model has 2 bytes per parameter."),
        number(S, "f32_flops", "Peak FP32 (TF32)", "TFLOP/s", 1e12, "Per-GPU peak for 4-byte models (TF32 tensor cores): 156 (A100), 495 (H100 SXM)."),
        number(S, "f64_flops", "Peak FP64", "TFLOP/s", 1e12, "Per-GPU peak for 8-byte models: 9.7 (A100), 34 (H100 SXM)."),
        number(S, "i8_ops", "Peak INT8", "TOP/s", 1e12, "Per-GPU peak for 1-byte models: 624 (A100), 1979 (H100 SXM)."),
        number(S, "flops_util", "Compute utilisation", "", 1.0, "Share of peak FLOP/s that GEMMs reach: 0.705 in the MAD-Max calibration (ZionEX)."),
        number(S, "mem_cap", "HBM capacity", "GB", 1e9, "Memory per GPU: 40 or 80 (A100), 80 (H100), 141 (H200), 192 (MI300X)."),
        number(S, "mem_bw", "HBM bandwidth", "GB/s", 1e9, "Memory bandwidth per GPU: 1555 (A100 40GB), 3350 (H100 SXM). Embedding lookups are bound by it."),
        number(S, "mem_bw_util", "HBM utilisation", "", 1.0, "Share of HBM bandwidth reached: 0.836 in the MAD-Max calibration."),
        number(S, "num_nvlinks", "NVLinks per GPU", "", 1.0, "Links per GPU within a node: 12 (A100), 18 (H100); PCIe-only GPUs: 1 link at PCIe speed."),
        number(S, "bw_per_nvlink", "Speed per NVLink", "GB/s", 1e9, "Both directions together, as MAD-Max counts it: 50 GB/s per NVLink 3/4 link, 100 for NVLink 5, 64 for PCIe 4.0 x16."),
        number(S, "nvlink_util", "NVLink utilisation", "", 1.0, "Share of NVLink bandwidth collectives reach: 0.6667 in the MAD-Max calibration."),
        number(S, "num_ibroce_ports", "NICs per node", "", 1.0, "Network ports per node: 8 on DGX-class nodes (one per GPU), 1 on a PC."),
        number(S, "ibroce_bw", "Speed per NIC", "Gb/s", NIC_SCALE, "Line rate of each port, one direction, as vendors quote it: 200 (HDR), 400 (NDR), 10 or 1 (Ethernet)."),
        number(S, "ibroce_util", "NIC utilisation", "", 1.0, "Share of NIC bandwidth collectives reach: 0.56 in the MAD-Max calibration."),
        number(S, "ar_perc_intra", "All-reduce intra share", "", 1.0, "MAD-Max mixes intra- and inter-node bandwidth for cluster-wide all-reduces with this weight: 0.2746 (ZionEX); 1 on a single node."),
    ]
}

/// A NIC speed of 1 Gb/s each way in MAD-Max's unit (bytes/s, both directions).
pub const NIC_SCALE: f64 = 2.0 / 8.0 * 1e9;

/// The batch field of a spec key.
pub fn batch_field(spec_key: &str) -> Field {
    match spec_key {
        "mlp_parallel" => count(T, "local_mlp_bs", "MLP batch per GPU", "Samples each GPU's MLP processes per iteration: 512 in the DLRM tasks. The global batch is this times the data-parallel degrees."),
        "emb_parallel" => count(T, "local_emb_bs", "Embedding batch per GPU", "Samples each GPU's embedding part processes. With model-parallel (mp) tables it is the global batch; it follows the other batches automatically when the cluster changes."),
        _ => count(T, "local_transformer_bs", "Transformer batch per GPU", "Samples (sequences or images) each GPU's transformer processes per iteration: 1 for large LLMs, 16 for ViTs."),
    }
}

/// Labels of spec keys.
pub fn spec_label(spec_key: &str) -> &'static str {
    match spec_key {
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
        "pp" => "pp: pipeline parallel. In MAD-Max paper mode it only divides weight memory (no pipeline ops).",
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
        Family::Llm | Family::LlmMoe | Family::Vit => {
            vec![("freeze_emb", "Freeze embeddings"), ("freeze_transformer", "Freeze transformer")]
        }
    }
}

pub const MIN_FROZEN: Field = count(
    T,
    "min_frozen_layer",
    "First frozen layer",
    "Layers from this index on send no weight gradients (they still run their backward GEMMs in MAD-Max). Set it to the layer count to train every layer.",
);
