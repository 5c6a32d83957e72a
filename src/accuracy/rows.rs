//! A CSV row of a measured run -> the scenario it ran (`{"model", "system", "task"}` MAD-Max
//! configs), with the documented defaults its blank cells took: the training schema and the
//! serving schema, the GPUs a row may name, and the FLOP count a `tflops_per_gpu` row used.

use super::columns::{Col, Row};
use super::Metric;
use crate::engine::extended::calibration::{self, UTIL};
use crate::engine::raw::short;
use crate::presets::{self, Utilisation};
use serde_json::{json, Value};

/// Bytes in a GiB: sources state memory per GPU as `nvidia-smi` prints it.
pub(super) const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// The GPUs a CSV `gpu` cell can name (the form `<gpu>-<memory>g`): the cell, the preset it
/// runs on (datasheet peaks, memory and links), and its family (the validation page's GPU
/// filter and the bands of [`BANDS`] group rows by it).
pub(super) const GPUS: [(&str, &str, &str); 9] = [
    ("v100-32g", "v100_sxm2_32", "V100"),
    ("a100-40g", "a100_40", "A100"),
    ("a100-80g", "a100_80", "A100"),
    ("h100-80g", "h100_sxm", "H100"),
    ("h100-94g", "h100_nvl", "H100 NVL"),
    ("h100-96g", "gh200_96", "GH200"),
    ("h200-141g", "h200_sxm", "H200"),
    ("b200-192g", "b200_192", "B200"),
    ("mi300x-192g", "mi300x", "MI300X"),
];

/// A CSV `gpu` cell as people name the GPU ("a100-80g": "A100 SXM 80GB"): its preset's label
/// without the vendor; the cell itself when no preset has it.
pub fn gpu_label(gpu_cell: &str) -> String {
    GPUS.iter()
        .find(|g| g.0 == gpu_cell)
        .and_then(|g| crate::presets::all().ok()?.gpu(g.1))
        .map(|p| p.label.trim_start_matches("NVIDIA ").trim_start_matches("AMD ").to_owned())
        .unwrap_or_else(|| gpu_cell.to_owned())
}

/// The cells [`GPUS`] knows, for messages.
pub(super) fn gpu_cells() -> String {
    GPUS.iter().map(|g| g.0).collect::<Vec<_>>().join(", ")
}

/// The preset GPU of a CSV `gpu` cell, or which cells there are.
fn row_gpu(cell: &str) -> Result<presets::GpuPreset, String> {
    let ps = presets::all().map_err(str::to_owned)?;
    GPUS.iter()
        .find(|g| g.0 == cell)
        .and_then(|g| ps.gpu(g.1))
        .cloned()
        .ok_or_else(|| format!("gpu \"{}\" is not one of {}", short(cell), gpu_cells()))
}

/// The GPU family of a `gpu` cell: `V100`, `A100` (either memory size), `H100` (SXM 80 GB), `H100 NVL`,
/// `GH200`, `H200`, `B200` or `MI300X`.
pub fn gpu_family(gpu_cell: &str) -> Option<&'static str> {
    GPUS.iter().find(|g| g.0 == gpu_cell).map(|g| g.2)
}

/// The achievable fractions every row on a GPU of `family` uses: [`UTIL`], with the GEMM
/// fraction scaled by how much of its peak the family's best matmul reaches against the A100's
/// ([`calibration::gemm_util`]).
pub(super) fn family_util(family: Option<&str>) -> Utilisation {
    let flops = family.map_or(UTIL.flops, calibration::gemm_util);
    Utilisation { flops, mem_bw: UTIL.mem_bw, nvlink: UTIL.nvlink, nic: UTIL.nic, ar_perc_intra: 0.5 }
}

/// The achievable fractions every row on `gpu_cell` uses ([`family_util`]).
pub(super) fn row_util(gpu_cell: &str) -> Utilisation {
    family_util(gpu_family(gpu_cell))
}

/// Builds the scenario of one row and the defaults it used.
fn scenario(r: &Row) -> Result<(Value, Vec<String>), String> {
    let mut defaults = Vec::new();
    if r.metric() == Some(Metric::TflopsPerGpu) {
        defaults.extend(flops_basis(r)?.1);
    }
    let layers = r.need(Col::Layers)?;
    let heads = r.need(Col::Heads)?;
    let kv = r.count(Col::KvHeads)?.unwrap_or(heads);
    let ffn_kind = match r.get(Col::FfnKind) {
        "" => {
            defaults.push("ffn_kind blank: gelu".into());
            "gelu"
        }
        "gelu" => "gelu",
        "swiglu" => "swiglu",
        other => return Err(format!("ffn_kind \"{}\" is not gelu or swiglu", short(other))),
    };
    // fp8: Transformer Engine's FP8 training of a 16-bit model (the engine refuses it on GPUs
    // without FP8 tensor cores).
    let fp8 = match r.get(Col::Dtype) {
        "bf16" | "fp16" => false,
        "" => {
            defaults.push("dtype blank: 16-bit (2 bytes, the A100/H100 fp16 and bf16 peaks are equal)".into());
            false
        }
        "fp8" => true,
        other => return Err(format!("dtype \"{}\" is not bf16, fp16 or fp8", short(other))),
    };
    // The shared schema has no attention column: its runs (2021-23 Megatron) predate
    // FlashAttention there, so scores go through HBM. Files that add the column say per row;
    // the engine checks the value against its kernels and names them if it is none of them.
    let attention = match r.get(Col::Attention) {
        "" if r.has(Col::Attention) => {
            defaults.push("attention blank: materialized (scores through HBM)".into());
            "materialized"
        }
        "" => "materialized",
        kernel => kernel,
    };
    // Blank: dropout on (Megatron-LM's GPT, the shared set's runs) and PyTorch's loss.
    let dropout = r.flag(Col::Dropout, true)?;
    let fused_loss = r.flag(Col::FusedLoss, false)?;
    let shape = (layers, heads, kv, r.need(Col::SeqLen)?, ffn_kind);
    let model = llm_config(
        r,
        shape,
        json!({
            // Megatron-LM GPT (and MPT) tie the output layer to the word embedding.
            "tied_embeddings": true,
            "attention": attention,
            "causal": true,
            "dropout": dropout,
        }),
    )?;
    let (system, n) = row_system(r, Some(r.number(Col::NicGbitsSPerNode)?))?;

    let (tp, pp, dp) = (r.positive(Col::Tp)?, r.positive(Col::Pp)?, r.positive(Col::Dp)?);
    let cp = r.positive_or(Col::Cp, 1)?;
    let ep = r.positive_or(Col::Ep, 1)?;
    let product = tp.saturating_mul(pp).saturating_mul(dp).saturating_mul(cp);
    if product != n {
        return Err(format!("tp x pp x dp x cp = {product} but n_gpus = {n}"));
    }
    let global = r.need(Col::GlobalBatch)?;
    if global % dp != 0 {
        return Err(format!("global batch {global} does not split over dp {dp}"));
    }
    let local = global / dp;
    let zero = match r.count(Col::Zero)? {
        Some(z @ 0..=3) => z,
        Some(z) => return Err(format!("column zero: ZeRO has stages 0 to 3, not {z}")),
        None => 0,
    };
    // Megatron's rank order: tensor innermost, then context, data, pipeline outermost.
    let mut levels: Vec<(&str, u64)> = Vec::new();
    if dp % ep != 0 {
        return Err(format!("expert parallelism {ep} does not divide dp {dp}"));
    }
    // Expert parallelism is carved out of the data-parallel ranks (Megatron).
    for (name, degree) in [("tp", tp), ("cp", cp), ("ep", ep), ("ddp", dp / ep), ("pp", pp)] {
        if degree > 1 {
            levels.push((if name == "ddp" && zero == 3 { "fsdp" } else { name }, degree));
        }
    }
    if levels.is_empty() {
        levels.push(("ddp", 1));
    }
    let micro = match r.count(Col::Microbatch)? {
        Some(0) => return Err("column microbatch must be at least 1".into()),
        Some(m) => m,
        None => {
            defaults.push("microbatch blank: 1 sequence (Megatron-LM's large runs)".into());
            1
        }
    };
    let stage_layers = layers.div_ceil(pp);
    let vpp = match r.count(Col::Vpp)? {
        Some(0) => return Err("column vpp must be at least 1".into()),
        Some(v) => v,
        None if pp > 1 && stage_layers >= 2 => {
            defaults.push("vpp blank: 2 chunks per GPU (the smallest interleaved schedule)".into());
            2
        }
        None => 1,
    };
    let recompute = match r.get(Col::Recompute) {
        "" => {
            defaults.push("recompute blank: none".into());
            "none"
        }
        x @ ("none" | "selective" | "full") => x,
        other => return Err(format!("recompute \"{}\" is not none, selective or full", short(other))),
    };
    let task = task_config(
        r,
        "pretrain",
        &levels,
        n,
        local,
        json!({
            "micro_batch": micro,
            "virtual_stages": vpp,
            "zero_stage": zero.min(2),
            "recompute": recompute,
            "sequence_parallel": r.get(Col::SeqParallel) == "1",
            "fused_loss": fused_loss,
            "fp8": fp8,
            "fp32_grads": r.flag(Col::Fp32Grads, false)?,
        }),
    );
    Ok((json!({ "model": model, "system": Value::Object(system), "task": task }), defaults))
}

/// A row's cluster (its `gpu` on the preset's datasheet, `n_gpus` in nodes of `gpus_per_node`,
/// its `nvlink_gbytes_s`, the GPU family's fractions of peak) and its GPU count. The network:
/// `nic_gbit_per_node` spread over one port per GPU (the split does not matter to the model),
/// or, where the schema does not state it (serving), one 200 Gb/s port per GPU.
fn row_system(r: &Row, nic_gbit_per_node: Option<f64>) -> Result<(serde_json::Map<String, Value>, u64), String> {
    let gpu_cell = r.get(Col::Gpu);
    let gpu = &row_gpu(gpu_cell)?;
    let n = r.positive(Col::NGpus)?;
    let per_node = r.positive(Col::GpusPerNode)?.min(n);
    if n % per_node != 0 {
        return Err(format!("{n} GPUs do not fill nodes of {per_node}"));
    }
    let per_port = nic_gbit_per_node.map_or(200.0, |g| g / per_node as f64);
    let mut system = presets::system_config(
        r.get(Col::Model),
        gpu,
        per_node,
        n / per_node,
        (per_node, per_port),
        row_util(gpu_cell),
    );
    system.insert("num_nvlinks".into(), json!(r.number(Col::NvlinkGbytesS)? * 1e9 / gpu.bw_per_nvlink));
    Ok((system, n))
}

/// Which FLOP count a `tflops_per_gpu` row's source divided by its time (the `flops_basis`
/// column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FlopsBasis {
    /// `sc21`: Narayanan et al. 2021, eq. 3 ([`megatron_flops`]), which counts the forward pass
    /// that full recomputation repeats: the basis of Megatron-LM's 2021-23 TFLOP/s figures.
    Sc21,
    /// `model`: the model's FLOPs, forward and backward, no recomputation (the basis of MFU and
    /// of Megatron-LM's later `num_floating_point_operations`), as the default model counts them.
    Model,
    /// `hardware`: what the GPUs execute, recomputation included (the basis of HFU).
    Hardware,
}

/// A row's FLOP basis, and the default it took when the cell is blank: `sc21` on A100s (the
/// 2021-23 Megatron-LM era), `model` on H100s and later (2023 on, most sources count model
/// FLOPs).
pub(super) fn flops_basis(r: &Row) -> Result<(FlopsBasis, Option<String>), String> {
    Ok(match r.get(Col::FlopsBasis) {
        "sc21" => (FlopsBasis::Sc21, None),
        "model" => (FlopsBasis::Model, None),
        "hardware" => (FlopsBasis::Hardware, None),
        "" if gpu_family(r.get(Col::Gpu)) == Some("A100") => (
            FlopsBasis::Sc21,
            Some(
                "flops_basis blank: sc21 (on A100s, Narayanan et al.'s count with the recomputed forward pass)".into(),
            ),
        ),
        "" => (
            FlopsBasis::Model,
            Some("flops_basis blank: model (on H100s and later, model FLOPs without recomputation)".into()),
        ),
        other => return Err(format!("flops_basis \"{}\" is not sc21, model or hardware", short(other))),
    })
}

/// Megatron-LM's FLOPs of one iteration with full recomputation (Narayanan et al. 2021, eq. 3):
/// `96 B s l h^2 (1 + s/(6h) + V/(16 l h))`, the count behind its TFLOP/s figures.
pub fn megatron_flops(batch: f64, seq: f64, layers: f64, hidden: f64, vocab: f64) -> f64 {
    96.0 * batch * seq * layers * hidden * hidden * (1.0 + seq / (6.0 * hidden) + vocab / (16.0 * layers * hidden))
}

/// Builds the serving scenario of one inference row.
fn inference_scenario(r: &Row) -> Result<(Value, Vec<String>), String> {
    let mut defaults = Vec::new();
    let heads = r.need(Col::Heads)?;
    let (input, output) = (r.need(Col::InputLen)?, r.need(Col::OutputLen)?);
    let format = match r.get(Col::Dtype) {
        "" => {
            defaults.push("dtype blank: fp16".into());
            "fp16"
        }
        f @ ("fp16" | "bf16" | "fp8" | "int8" | "int4") => f,
        other => return Err(format!("dtype \"{}\" is not fp16, bf16, fp8, int8 or int4", short(other))),
    };
    let ffn_kind = if r.get(Col::FfnKind).is_empty() { "gelu" } else { r.get(Col::FfnKind) };
    let kv = r.count(Col::KvHeads)?.unwrap_or(heads);
    let model = llm_config(r, (r.need(Col::Layers)?, heads, kv, input + output, ffn_kind), json!({}))?;
    // Serving rows do not state the network.
    let (system, n) = row_system(r, None)?;
    let (tp, pp) = (r.positive(Col::Tp)?, r.positive(Col::Pp)?);
    if tp.saturating_mul(pp) != n {
        return Err(format!("tp x pp = {} but n_gpus = {n}", tp * pp));
    }
    let mut levels: Vec<(&str, u64)> = [("tp", tp), ("pp", pp)].into_iter().filter(|l| l.1 > 1).collect();
    if levels.is_empty() {
        levels.push(("ddp", 1));
    }
    let batch = r.need(Col::Batch)?;
    // How the engine batched: a static batch unless the row says otherwise. In flight, `batch`
    // is the most requests the engine keeps in flight (a benchmark's concurrency, or the
    // engine's own cap when lower) and the engine's token budget per step may be stated.
    let inflight = match r.get(Col::Batching) {
        "" | "static" => false,
        "inflight" => true,
        other => return Err(format!("batching \"{}\" is not static or inflight", short(other))),
    };
    let mut extra = json!({});
    if inflight {
        extra["batching"] = json!("inflight");
        match r.count(Col::StepTokens)? {
            Some(0) => return Err("column step_tokens must be at least 1".into()),
            Some(n) => extra["step_tokens"] = json!(n),
            None => defaults.push("step_tokens blank: 2048 tokens per engine step (vLLM's default on A100s)".into()),
        }
    }
    // The shared set's runs (FasterTransformer) launch every kernel from the host and
    // all-reduce with NCCL: blank cells say so; the calculator's defaults are today's engines'.
    let mut engine_flag = |key: Col, blank: &str| -> Result<bool, String> {
        if r.get(key).is_empty() {
            defaults.push(format!("{key} blank: {blank}"));
        }
        r.flag(key, false)
    };
    let cuda_graphs =
        engine_flag(Col::CudaGraphs, "off (each kernel launched from the host, as FasterTransformer does)")?;
    let custom_all_reduce = engine_flag(
        Col::CustomAllReduce,
        "off (NCCL all-reduces: FasterTransformer's own kernel is opt-in, --enable_custom_all_reduce)",
    )?;
    let task = task_config(
        r,
        "inference",
        &levels,
        n,
        batch,
        json!({
            "input_tokens": input,
            "output_tokens": output,
            "weight_format": format,
            "kv_format": if format == "int4" { "fp16" } else { format },
            "cuda_graphs": cuda_graphs,
            "custom_all_reduce": custom_all_reduce,
        }),
    );
    let task = with_keys(task, extra);
    Ok((json!({ "model": model, "system": Value::Object(system), "task": task }), defaults))
}

/// A row's model config: an LLM of the row's vocabulary and widths in 16-bit weights, with
/// `(layers, heads, key/value heads, sequence, feed-forward kind)` as the schema reads them,
/// and the schema's own keys (`extra`).
fn llm_config(
    r: &Row,
    (layers, heads, kv, seq, ffn_kind): (u64, u64, u64, u64, &str),
    extra: Value,
) -> Result<Value, String> {
    let model = json!({
        "name": r.get(Col::Model),
        "type": "LLM",
        "bytes_per_nonemb_param": 2,
        "bytes_per_emb_param": 2,
        "entries_per_table": r.need(Col::Vocab)?,
        "num_transformer_layers": layers,
        "num_transformer_heads": heads,
        "num_kv_heads": kv,
        "attention_dim": r.need(Col::Hidden)?,
        "transformer_fc_dim": r.need(Col::FfnHidden)?,
        "transformer_seq_len": seq,
        "ffn_kind": ffn_kind,
    });
    // Heads wider (or narrower) than hidden / heads, where the row states them.
    let model = match r.count(Col::HeadDim)? {
        Some(0) => return Err("column head_dim must be at least 1".into()),
        Some(d) => with_keys(model, json!({ "head_dim": d })),
        None => model,
    };
    Ok(with_keys(model, extra))
}

/// A config object with `extra`'s keys added (or replaced).
fn with_keys(mut config: Value, extra: Value) -> Value {
    if let (Some(c), Value::Object(extra)) = (config.as_object_mut(), extra) {
        c.extend(extra);
    }
    config
}

/// A row's task config in the default model: its kind, its transformer plan's `levels`, data
/// parallel embeddings over its `n` GPUs, its local batch, and the kind's own keys (`extra`).
fn task_config(r: &Row, kind: &str, levels: &[(&str, u64)], n: u64, local: u64, extra: Value) -> Value {
    let task = json!({
        "name": r.get(Col::Id),
        "type": kind,
        "mode": "default",
        "transformer_parallel": levels.iter().map(|l| l.0).collect::<Vec<_>>(),
        "transformer_parallel_degree": levels.iter().map(|l| l.1).collect::<Vec<_>>(),
        "emb_parallel": ["ddp"],
        "emb_parallel_degree": [n],
        "local_emb_bs": local,
        "local_transformer_bs": local,
    });
    with_keys(task, extra)
}

/// The scenario of a row (LLM training, LLM serving or recommendation training, by the
/// header) and the defaults it used.
pub(super) fn row_scenario(r: &Row) -> Result<(Value, Vec<String>), String> {
    if r.has(Col::InputLen) {
        inference_scenario(r)
    } else if is_recommendation(r) {
        recommendation_scenario(r)
    } else {
        scenario(r)
    }
}

/// Whether a row is of the recommendation schema (SOURCES.md section 7): a DLRM's MLP widths
/// and tables instead of a transformer's.
pub(super) fn is_recommendation(r: &Row) -> bool {
    r.has(Col::TopMlpWidths)
}

/// Builds the scenario of one recommendation row: a DLRM of the row's MLP widths and tables,
/// trained the way NVIDIA's and TorchRec's DLRMs train on one node or more: every table whole
/// on one GPU (table-wise model parallelism over all GPUs, pooled embeddings exchanged by
/// all-to-all) and the MLPs data-parallel over all GPUs, or the bottom MLP on one GPU where the
/// `bot_mlp` cell says `one_gpu` (NVIDIA's DLRM examples).
fn recommendation_scenario(r: &Row) -> Result<(Value, Vec<String>), String> {
    let mut defaults = Vec::new();
    let bot_mlp = match r.get(Col::BotMlp) {
        "" => {
            defaults.push("bot_mlp blank: data_parallel (the bottom MLP on every GPU, as TorchRec runs it)".into());
            "data_parallel"
        }
        cell => cell,
    };
    let cycle_ms = match r.get(Col::CollectiveCycleMs) {
        "" => {
            defaults.push("collective_cycle_ms blank: 0 (collectives called directly, as PyTorch calls NCCL)".into());
            0.0
        }
        _ => r.number(Col::CollectiveCycleMs)?,
    };
    let tables = r.positive(Col::Tables)?;
    let rows = r.positive(Col::RowsTotal)?;
    // 4-byte dense weights run at the presets' f32 figure: an A100's TF32 tensor-core peak
    // (`tf32`), a V100's FP32 peak (`fp32`, no TF32 there); fp16 is automatic mixed precision
    // (16-bit GEMMs).
    let dense_bytes = match r.get(Col::Dtype) {
        "fp16" => 2,
        "tf32" | "fp32" => 4,
        other => return Err(format!("dtype \"{}\" is not fp16, tf32 or fp32", short(other))),
    };
    let model = json!({
        "name": r.get(Col::Model),
        "type": "DLRM",
        "bytes_per_nonemb_param": dense_bytes,
        "bytes_per_emb_param": r.positive(Col::EmbBytes)?,
        "num_bot_mlp_layers": r.get(Col::BotMlpWidths).split('-').count().saturating_sub(1),
        "num_top_mlp_layers": r.get(Col::TopMlpWidths).split('-').count(),
        // Paper mode's square layers; the default model reads the widths.
        "mlp_dim": r.get(Col::TopMlpWidths).split('-').filter_map(|w| w.parse::<u64>().ok()).max().unwrap_or(1),
        "bot_mlp_widths": r.get(Col::BotMlpWidths),
        "top_mlp_widths": r.get(Col::TopMlpWidths),
        "num_tables": tables,
        "entries_per_table": rows.div_ceil(tables),
        "emb_dim": r.positive(Col::EmbDim)?,
        "pooling_size": r.positive(Col::Pooling)?,
    });
    let (system, n) = row_system(r, Some(r.number(Col::NicGbitsSPerNode)?))?;
    let global = r.need(Col::GlobalBatch)?;
    if global % n != 0 {
        return Err(format!("global batch {global} does not split over {n} GPUs"));
    }
    let task = json!({
        "name": r.get(Col::Id),
        "type": "pretrain",
        "mode": "default",
        "mlp_parallel": ["ddp"],
        "mlp_parallel_degree": [n],
        "emb_parallel": ["mp"],
        "emb_parallel_degree": [n],
        "local_mlp_bs": global / n,
        "local_emb_bs": global,
        "emb_sharding": "table",
        "bot_mlp": bot_mlp,
        "collective_cycle_ms": cycle_ms,
    });
    Ok((json!({ "model": model, "system": Value::Object(system), "task": task }), defaults))
}
