//! A CSV row of a measured run, typed: [`RunRow::read`] parses and checks every cell its
//! schema's scenario needs (training, serving or recommendation: [`TrainingRow`],
//! [`InferenceRow`], [`RecommendationRow`]) once, blank cells at their documented defaults, and
//! [`RunRow::scenario`] builds the `{"model", "system", "task"}` MAD-Max configs it ran from the
//! typed fields. Also the GPUs a row may name and the FLOP count a `tflops_per_gpu` row used.

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

/// The three schemas of the measured runs' CSVs (SOURCES.md, "Schema"), told apart by the
/// header.
#[derive(Clone, Copy, PartialEq, Eq)]
#[cfg_attr(test, derive(Debug))]
pub(super) enum Schema {
    /// LLM training (`training.csv`, `added.csv`).
    Training,
    /// LLM serving (`inference.csv`, `added_inference.csv`): the header has `input_len`.
    Serving,
    /// Recommendation training (`recommendation.csv`): a DLRM's MLP widths and tables instead
    /// of a transformer's (SOURCES.md section 7).
    Recommendation,
}

impl Schema {
    /// The schema of a row's file.
    pub(super) fn of(r: &Row) -> Schema {
        if r.has(Col::InputLen) {
            Schema::Serving
        } else if r.has(Col::TopMlpWidths) {
            Schema::Recommendation
        } else {
            Schema::Training
        }
    }
}

/// A measured run's row, read by its schema: every cell the scenario needs, parsed and
/// checked, blank cells already at their defaults.
#[cfg_attr(test, derive(Debug))]
pub(super) enum RunRow {
    Training(TrainingRow),
    Serving(InferenceRow),
    Recommendation(RecommendationRow),
}

impl RunRow {
    /// Reads a row by its file's schema, with the defaults its blank cells took (in words), or
    /// the first cell that is wrong.
    pub(super) fn read(r: &Row) -> Result<(RunRow, Vec<String>), String> {
        let mut defaults = Vec::new();
        let row = match Schema::of(r) {
            Schema::Training => RunRow::Training(TrainingRow::read(r, &mut defaults)?),
            Schema::Serving => RunRow::Serving(InferenceRow::read(r, &mut defaults)?),
            Schema::Recommendation => RunRow::Recommendation(RecommendationRow::read(r, &mut defaults)?),
        };
        Ok((row, defaults))
    }

    /// The scenario the row ran: `{"model", "system", "task"}` configs of the default model.
    pub(super) fn scenario(&self) -> Value {
        match self {
            RunRow::Training(t) => t.scenario(),
            RunRow::Serving(s) => s.scenario(),
            RunRow::Recommendation(d) => d.scenario(),
        }
    }
}

/// A transformer as a row states it (`layers` to `vocab`, and `head_dim` where a file has it).
#[cfg_attr(test, derive(Debug))]
pub(super) struct Shape {
    pub(super) layers: u64,
    pub(super) hidden: u64,
    pub(super) heads: u64,
    /// Key/value heads (grouped-query attention); `heads` when blank.
    pub(super) kv_heads: u64,
    /// Width of each head where the row states it (wider or narrower than hidden / heads).
    pub(super) head_dim: Option<u64>,
    pub(super) ffn_hidden: u64,
    /// `gelu` or `swiglu`.
    pub(super) ffn_kind: &'static str,
    pub(super) vocab: u64,
}

impl Shape {
    /// Reads the shape; a blank `ffn_kind` is `gelu`, said in `defaults` when `say_blank`.
    fn read(r: &Row, defaults: &mut Vec<String>, say_blank: bool) -> Result<Shape, String> {
        let layers = r.need(Col::Layers)?;
        let heads = r.need(Col::Heads)?;
        let kv_heads = r.count(Col::KvHeads)?.unwrap_or(heads);
        let ffn_kind = match r.get(Col::FfnKind) {
            "" => {
                if say_blank {
                    defaults.push("ffn_kind blank: gelu".into());
                }
                "gelu"
            }
            "gelu" => "gelu",
            "swiglu" => "swiglu",
            other => return Err(format!("ffn_kind \"{}\" is not gelu or swiglu", short(other))),
        };
        let head_dim = match r.count(Col::HeadDim)? {
            Some(0) => return Err("column head_dim must be at least 1".into()),
            d => d,
        };
        Ok(Shape {
            layers,
            hidden: r.need(Col::Hidden)?,
            heads,
            kv_heads,
            head_dim,
            ffn_hidden: r.need(Col::FfnHidden)?,
            ffn_kind,
            vocab: r.need(Col::Vocab)?,
        })
    }

    /// The model config of an LLM of this shape named `name`, in 16-bit weights, over
    /// sequences of `seq` tokens, with the schema's own keys (`extra`).
    fn config(&self, name: &str, seq: u64, extra: Value) -> Value {
        let model = json!({
            "name": name,
            "type": "LLM",
            "bytes_per_nonemb_param": 2,
            "bytes_per_emb_param": 2,
            "entries_per_table": self.vocab,
            "num_transformer_layers": self.layers,
            "num_transformer_heads": self.heads,
            "num_kv_heads": self.kv_heads,
            "attention_dim": self.hidden,
            "transformer_fc_dim": self.ffn_hidden,
            "transformer_seq_len": seq,
            "ffn_kind": self.ffn_kind,
        });
        let model = match self.head_dim {
            Some(d) => with_keys(model, json!({ "head_dim": d })),
            None => model,
        };
        with_keys(model, extra)
    }
}

/// A row's cluster: its `gpu` (the preset of that cell), `n_gpus` in nodes of
/// `gpus_per_node`, its NVLink and, where the schema states it, its network.
#[cfg_attr(test, derive(Debug))]
pub(super) struct Cluster {
    pub(super) gpu_cell: String,
    pub(super) gpu: presets::GpuPreset,
    pub(super) n_gpus: u64,
    /// GPUs per node, at most `n_gpus`.
    pub(super) gpus_per_node: u64,
    pub(super) nvlink_gbytes_s: f64,
    /// The network per node, Gb/s; `None` where the schema does not state it (serving).
    pub(super) nic_gbit_s_per_node: Option<f64>,
}

impl Cluster {
    /// Reads the cluster; `nic` says whether the schema has the network column.
    fn read(r: &Row, nic: bool) -> Result<Cluster, String> {
        let nic_gbit_s_per_node = if nic { Some(r.number(Col::NicGbitsSPerNode)?) } else { None };
        let gpu_cell = r.get(Col::Gpu);
        let gpu = row_gpu(gpu_cell)?;
        let n_gpus = r.positive(Col::NGpus)?;
        let gpus_per_node = r.positive(Col::GpusPerNode)?.min(n_gpus);
        if n_gpus % gpus_per_node != 0 {
            return Err(format!("{n_gpus} GPUs do not fill nodes of {gpus_per_node}"));
        }
        Ok(Cluster {
            gpu_cell: gpu_cell.to_owned(),
            gpu,
            n_gpus,
            gpus_per_node,
            nvlink_gbytes_s: r.number(Col::NvlinkGbytesS)?,
            nic_gbit_s_per_node,
        })
    }

    /// The system config named `name`: the GPU's datasheet, the row's NVLink, the GPU family's
    /// fractions of peak, and the network per node spread over one port per GPU (the split
    /// does not matter to the model), or where the schema does not state it one 200 Gb/s port
    /// per GPU.
    fn system(&self, name: &str) -> Value {
        let per_node = self.gpus_per_node;
        let per_port = self.nic_gbit_s_per_node.map_or(200.0, |g| g / per_node as f64);
        let mut system = presets::system_config(
            name,
            &self.gpu,
            per_node,
            self.n_gpus / per_node,
            (per_node, per_port),
            row_util(&self.gpu_cell),
        );
        system.insert("num_nvlinks".into(), json!(self.nvlink_gbytes_s * 1e9 / self.gpu.bw_per_nvlink));
        Value::Object(system)
    }
}

/// A row of the LLM training schema.
#[cfg_attr(test, derive(Debug))]
pub(super) struct TrainingRow {
    pub(super) id: String,
    pub(super) model: String,
    pub(super) shape: Shape,
    pub(super) seq_len: u64,
    pub(super) cluster: Cluster,
    pub(super) plan: TrainingPlan,
    /// Transformer Engine's FP8 training of a 16-bit model (the engine refuses it on GPUs
    /// without FP8 tensor cores).
    pub(super) fp8: bool,
    /// The attention kernel's name as the engine takes it (the engine names its kernels when it
    /// is none of them).
    pub(super) attention: String,
    pub(super) dropout: bool,
    pub(super) fused_loss: bool,
    pub(super) fp32_grads: bool,
    /// Which FLOP count a `tflops_per_gpu` row's source used; `None` for the other metrics.
    pub(super) flops_basis: Option<FlopsBasis>,
}

/// A training row's plan: its parallel degrees and how it trains.
#[cfg_attr(test, derive(Debug))]
pub(super) struct TrainingPlan {
    pub(super) tp: u64,
    pub(super) pp: u64,
    pub(super) dp: u64,
    pub(super) cp: u64,
    pub(super) ep: u64,
    /// Pipeline chunks per GPU (interleaving).
    pub(super) vpp: u64,
    /// Sequences per micro-batch.
    pub(super) microbatch: u64,
    /// Sequences per iteration over the whole cluster.
    pub(super) global_batch: u64,
    /// ZeRO stage, 0 to 3 (3: the data-parallel ranks shard the weights, an fsdp level).
    pub(super) zero: u64,
    /// `none`, `selective` or `full`.
    pub(super) recompute: &'static str,
    pub(super) sequence_parallel: bool,
}

impl TrainingRow {
    fn read(r: &Row, defaults: &mut Vec<String>) -> Result<TrainingRow, String> {
        let flops_basis = if r.metric() == Some(Metric::TflopsPerGpu) {
            let (basis, default) = flops_basis(r)?;
            defaults.extend(default);
            Some(basis)
        } else {
            None
        };
        let shape = Shape::read(r, defaults, true)?;
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
        // FlashAttention there, so scores go through HBM. Files that add the column say per row.
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
        let seq_len = r.need(Col::SeqLen)?;
        let cluster = Cluster::read(r, true)?;
        let plan = TrainingPlan::read(r, &shape, cluster.n_gpus, defaults)?;
        Ok(TrainingRow {
            id: r.get(Col::Id).to_owned(),
            model: r.get(Col::Model).to_owned(),
            shape,
            seq_len,
            cluster,
            plan,
            fp8,
            attention: attention.to_owned(),
            dropout,
            fused_loss,
            fp32_grads: r.flag(Col::Fp32Grads, false)?,
            flops_basis,
        })
    }

    fn scenario(&self) -> Value {
        let model = self.shape.config(
            &self.model,
            self.seq_len,
            json!({
                // Megatron-LM GPT (and MPT) tie the output layer to the word embedding.
                "tied_embeddings": true,
                "attention": self.attention,
                "causal": true,
                "dropout": self.dropout,
            }),
        );
        let p = &self.plan;
        let task = task_config(
            &self.id,
            "pretrain",
            &p.levels(),
            self.cluster.n_gpus,
            p.global_batch / p.dp,
            json!({
                "micro_batch": p.microbatch,
                "virtual_stages": p.vpp,
                "zero_stage": p.zero.min(2),
                "recompute": p.recompute,
                "sequence_parallel": p.sequence_parallel,
                "fused_loss": self.fused_loss,
                "fp8": self.fp8,
                "fp32_grads": self.fp32_grads,
            }),
        );
        json!({ "model": model, "system": self.cluster.system(&self.model), "task": task })
    }
}

impl TrainingPlan {
    /// Reads and checks the plan of a model of `shape` on `n` GPUs.
    fn read(r: &Row, shape: &Shape, n: u64, defaults: &mut Vec<String>) -> Result<TrainingPlan, String> {
        let (tp, pp, dp) = (r.positive(Col::Tp)?, r.positive(Col::Pp)?, r.positive(Col::Dp)?);
        let cp = r.positive_or(Col::Cp, 1)?;
        let ep = r.positive_or(Col::Ep, 1)?;
        let product = tp.saturating_mul(pp).saturating_mul(dp).saturating_mul(cp);
        if product != n {
            return Err(format!("tp x pp x dp x cp = {product} but n_gpus = {n}"));
        }
        let global_batch = r.need(Col::GlobalBatch)?;
        if global_batch % dp != 0 {
            return Err(format!("global batch {global_batch} does not split over dp {dp}"));
        }
        let zero = match r.count(Col::Zero)? {
            Some(z @ 0..=3) => z,
            Some(z) => return Err(format!("column zero: ZeRO has stages 0 to 3, not {z}")),
            None => 0,
        };
        if dp % ep != 0 {
            return Err(format!("expert parallelism {ep} does not divide dp {dp}"));
        }
        let microbatch = match r.count(Col::Microbatch)? {
            Some(0) => return Err("column microbatch must be at least 1".into()),
            Some(m) => m,
            None => {
                defaults.push("microbatch blank: 1 sequence (Megatron-LM's large runs)".into());
                1
            }
        };
        let vpp = match r.count(Col::Vpp)? {
            Some(0) => return Err("column vpp must be at least 1".into()),
            Some(v) => v,
            None if pp > 1 && shape.layers.div_ceil(pp) >= 2 => {
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
            "none" => "none",
            "selective" => "selective",
            "full" => "full",
            other => return Err(format!("recompute \"{}\" is not none, selective or full", short(other))),
        };
        let sequence_parallel = r.flag(Col::SeqParallel, false)?;
        Ok(TrainingPlan { tp, pp, dp, cp, ep, vpp, microbatch, global_batch, zero, recompute, sequence_parallel })
    }

    /// The transformer plan's levels in Megatron's rank order (tensor innermost, then context,
    /// expert, data, pipeline outermost), those of degree 1 left out. Expert parallelism is
    /// carved out of the data-parallel ranks (Megatron); with ZeRO-3 the data-parallel level
    /// shards the weights (`fsdp`).
    fn levels(&self) -> Vec<(&'static str, u64)> {
        let data = if self.zero == 3 { "fsdp" } else { "ddp" };
        let mut levels: Vec<(&'static str, u64)> =
            [("tp", self.tp), ("cp", self.cp), ("ep", self.ep), (data, self.dp / self.ep), ("pp", self.pp)]
                .into_iter()
                .filter(|l| l.1 > 1)
                .collect();
        if levels.is_empty() {
            levels.push(("ddp", 1));
        }
        levels
    }
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
fn flops_basis(r: &Row) -> Result<(FlopsBasis, Option<String>), String> {
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

/// How a serving row's engine batched.
#[derive(Clone, Copy, PartialEq, Eq)]
#[cfg_attr(test, derive(Debug))]
pub(super) enum RowBatching {
    /// A static batch: the requests start together, the batch decodes to its longest output.
    Static,
    /// In flight: `batch` is the most requests the engine keeps in flight (a benchmark's
    /// concurrency, or the engine's own cap when lower), with the engine's token budget per
    /// step where the row states it.
    InFlight { step_tokens: Option<u64> },
}

/// A row of the LLM serving schema.
#[cfg_attr(test, derive(Debug))]
pub(super) struct InferenceRow {
    pub(super) id: String,
    pub(super) model: String,
    pub(super) shape: Shape,
    pub(super) cluster: Cluster,
    pub(super) tp: u64,
    pub(super) pp: u64,
    /// Weight format: `fp16`, `bf16`, `fp8`, `int8` or `int4`.
    pub(super) format: &'static str,
    /// Requests served together (static) or kept in flight.
    pub(super) batch: u64,
    pub(super) input_len: u64,
    pub(super) output_len: u64,
    pub(super) batching: RowBatching,
    pub(super) cuda_graphs: bool,
    pub(super) custom_all_reduce: bool,
}

impl InferenceRow {
    fn read(r: &Row, defaults: &mut Vec<String>) -> Result<InferenceRow, String> {
        let (input_len, output_len) = (r.need(Col::InputLen)?, r.need(Col::OutputLen)?);
        let format = match r.get(Col::Dtype) {
            "" => {
                defaults.push("dtype blank: fp16".into());
                "fp16"
            }
            "fp16" => "fp16",
            "bf16" => "bf16",
            "fp8" => "fp8",
            "int8" => "int8",
            "int4" => "int4",
            other => return Err(format!("dtype \"{}\" is not fp16, bf16, fp8, int8 or int4", short(other))),
        };
        let shape = Shape::read(r, defaults, false)?;
        // Serving rows do not state the network.
        let cluster = Cluster::read(r, false)?;
        let (tp, pp) = (r.positive(Col::Tp)?, r.positive(Col::Pp)?);
        if tp.saturating_mul(pp) != cluster.n_gpus {
            return Err(format!("tp x pp = {} but n_gpus = {}", tp.saturating_mul(pp), cluster.n_gpus));
        }
        let batch = r.need(Col::Batch)?;
        let batching = match r.get(Col::Batching) {
            "" | "static" => RowBatching::Static,
            "inflight" => RowBatching::InFlight {
                step_tokens: match r.count(Col::StepTokens)? {
                    Some(0) => return Err("column step_tokens must be at least 1".into()),
                    Some(n) => Some(n),
                    None => {
                        defaults
                            .push("step_tokens blank: 2048 tokens per engine step (vLLM's default on A100s)".into());
                        None
                    }
                },
            },
            other => return Err(format!("batching \"{}\" is not static or inflight", short(other))),
        };
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
        Ok(InferenceRow {
            id: r.get(Col::Id).to_owned(),
            model: r.get(Col::Model).to_owned(),
            shape,
            cluster,
            tp,
            pp,
            format,
            batch,
            input_len,
            output_len,
            batching,
            cuda_graphs,
            custom_all_reduce,
        })
    }

    fn scenario(&self) -> Value {
        let model = self.shape.config(&self.model, self.input_len + self.output_len, json!({}));
        let mut levels: Vec<(&str, u64)> = [("tp", self.tp), ("pp", self.pp)].into_iter().filter(|l| l.1 > 1).collect();
        if levels.is_empty() {
            levels.push(("ddp", 1));
        }
        let task = task_config(
            &self.id,
            "inference",
            &levels,
            self.cluster.n_gpus,
            self.batch,
            json!({
                "input_tokens": self.input_len,
                "output_tokens": self.output_len,
                "weight_format": self.format,
                "kv_format": if self.format == "int4" { "fp16" } else { self.format },
                "cuda_graphs": self.cuda_graphs,
                "custom_all_reduce": self.custom_all_reduce,
            }),
        );
        let task = match self.batching {
            RowBatching::Static => task,
            RowBatching::InFlight { step_tokens: None } => with_keys(task, json!({ "batching": "inflight" })),
            RowBatching::InFlight { step_tokens: Some(n) } => {
                with_keys(task, json!({ "batching": "inflight", "step_tokens": n }))
            }
        };
        json!({ "model": model, "system": self.cluster.system(&self.model), "task": task })
    }
}

/// A row of the recommendation schema: a DLRM of the row's MLP widths and tables.
#[cfg_attr(test, derive(Debug))]
pub(super) struct RecommendationRow {
    pub(super) id: String,
    pub(super) model: String,
    /// Bytes per dense weight: 2 (fp16, automatic mixed precision) or 4 (tf32, fp32).
    pub(super) dense_bytes: u64,
    pub(super) emb_bytes: u64,
    /// The MLPs' widths as the engine reads them, `13-512-256-128` (input first for the
    /// bottom MLP).
    pub(super) bot_mlp_widths: String,
    pub(super) top_mlp_widths: String,
    pub(super) tables: u64,
    /// Rows of all tables together.
    pub(super) rows_total: u64,
    pub(super) emb_dim: u64,
    /// Rows looked up per table per sample.
    pub(super) pooling: u64,
    pub(super) cluster: Cluster,
    pub(super) global_batch: u64,
    /// Where the bottom MLP runs: `data_parallel` or `one_gpu` (the engine checks the name).
    pub(super) bot_mlp: String,
    /// Horovod's launch cycle, ms (0: collectives called directly).
    pub(super) collective_cycle_ms: f64,
}

impl RecommendationRow {
    fn read(r: &Row, defaults: &mut Vec<String>) -> Result<RecommendationRow, String> {
        let bot_mlp = match r.get(Col::BotMlp) {
            "" => {
                defaults.push("bot_mlp blank: data_parallel (the bottom MLP on every GPU, as TorchRec runs it)".into());
                "data_parallel"
            }
            cell => cell,
        };
        let collective_cycle_ms = match r.get(Col::CollectiveCycleMs) {
            "" => {
                defaults
                    .push("collective_cycle_ms blank: 0 (collectives called directly, as PyTorch calls NCCL)".into());
                0.0
            }
            _ => r.number(Col::CollectiveCycleMs)?,
        };
        let tables = r.positive(Col::Tables)?;
        let rows_total = r.positive(Col::RowsTotal)?;
        // 4-byte dense weights run at the presets' f32 figure: an A100's TF32 tensor-core peak
        // (`tf32`), a V100's FP32 peak (`fp32`, no TF32 there); fp16 is automatic mixed precision
        // (16-bit GEMMs).
        let dense_bytes = match r.get(Col::Dtype) {
            "fp16" => 2,
            "tf32" | "fp32" => 4,
            other => return Err(format!("dtype \"{}\" is not fp16, tf32 or fp32", short(other))),
        };
        let emb_bytes = r.positive(Col::EmbBytes)?;
        let emb_dim = r.positive(Col::EmbDim)?;
        let pooling = r.positive(Col::Pooling)?;
        let cluster = Cluster::read(r, true)?;
        let global_batch = r.need(Col::GlobalBatch)?;
        if global_batch % cluster.n_gpus != 0 {
            return Err(format!("global batch {global_batch} does not split over {} GPUs", cluster.n_gpus));
        }
        Ok(RecommendationRow {
            id: r.get(Col::Id).to_owned(),
            model: r.get(Col::Model).to_owned(),
            dense_bytes,
            emb_bytes,
            bot_mlp_widths: r.get(Col::BotMlpWidths).to_owned(),
            top_mlp_widths: r.get(Col::TopMlpWidths).to_owned(),
            tables,
            rows_total,
            emb_dim,
            pooling,
            cluster,
            global_batch,
            bot_mlp: bot_mlp.to_owned(),
            collective_cycle_ms,
        })
    }

    /// The scenario: trained the way NVIDIA's and TorchRec's DLRMs train on one node or more:
    /// every table whole on one GPU (table-wise model parallelism over all GPUs, pooled
    /// embeddings exchanged by all-to-all) and the MLPs data-parallel over all GPUs, or the
    /// bottom MLP on one GPU where the `bot_mlp` cell says `one_gpu` (NVIDIA's DLRM examples).
    fn scenario(&self) -> Value {
        let n = self.cluster.n_gpus;
        let model = json!({
            "name": self.model,
            "type": "DLRM",
            "bytes_per_nonemb_param": self.dense_bytes,
            "bytes_per_emb_param": self.emb_bytes,
            "num_bot_mlp_layers": self.bot_mlp_widths.split('-').count().saturating_sub(1),
            "num_top_mlp_layers": self.top_mlp_widths.split('-').count(),
            // Paper mode's square layers; the default model reads the widths.
            "mlp_dim": self.top_mlp_widths.split('-').filter_map(|w| w.parse::<u64>().ok()).max().unwrap_or(1),
            "bot_mlp_widths": self.bot_mlp_widths,
            "top_mlp_widths": self.top_mlp_widths,
            "num_tables": self.tables,
            "entries_per_table": self.rows_total.div_ceil(self.tables),
            "emb_dim": self.emb_dim,
            "pooling_size": self.pooling,
        });
        let task = json!({
            "name": self.id,
            "type": "pretrain",
            "mode": "default",
            "mlp_parallel": ["ddp"],
            "mlp_parallel_degree": [n],
            "emb_parallel": ["mp"],
            "emb_parallel_degree": [n],
            "local_mlp_bs": self.global_batch / n,
            "local_emb_bs": self.global_batch,
            "emb_sharding": "table",
            "bot_mlp": self.bot_mlp,
            "collective_cycle_ms": self.collective_cycle_ms,
        });
        json!({ "model": model, "system": self.cluster.system(&self.model), "task": task })
    }
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
fn task_config(id: &str, kind: &str, levels: &[(&str, u64)], n: u64, local: u64, extra: Value) -> Value {
    let task = json!({
        "name": id,
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

#[cfg(test)]
mod tests {
    use super::super::columns::Columns;
    use super::*;

    /// Reads one row under `header` (comma-separated names and cells).
    fn read(header: &str, cells: &str) -> Result<(RunRow, Vec<String>), String> {
        let names: Vec<String> = header.split(',').map(str::to_owned).collect();
        let cells: Vec<String> = cells.split(',').map(str::to_owned).collect();
        let columns = Columns::of(&names).expect("known columns");
        RunRow::read(&Row { columns: &columns, cells: &cells })
    }

    const TRAINING: &str = "id,model,layers,hidden,heads,kv_heads,ffn_hidden,ffn_kind,vocab,seq_len,gpu,gpus_per_node,nvlink_gbytes_s,nic_gbits_s_per_node,n_gpus,tp,pp,dp,microbatch,global_batch,seq_parallel,recompute,zero,dtype,metric,measured";

    #[test]
    fn a_training_row_reads_into_typed_fields_with_its_blank_cells_at_their_defaults() {
        let (run, defaults) = read(
            TRAINING,
            "r,GPT,24,2048,16,,8192,,51200,2048,a100-80g,8,600,1600,16,2,2,4,,64,1,,3,,tflops_per_gpu,150",
        )
        .expect("reads");
        let RunRow::Training(t) = run else { panic!("a training row: {run:?}") };
        assert_eq!((t.shape.layers, t.shape.kv_heads, t.shape.ffn_kind), (24, 16, "gelu"));
        assert_eq!((t.cluster.n_gpus, t.cluster.gpus_per_node, t.cluster.nic_gbit_s_per_node), (16, 8, Some(1600.0)));
        let p = &t.plan;
        assert_eq!((p.tp, p.pp, p.dp, p.cp, p.ep, p.microbatch, p.zero), (2, 2, 4, 1, 1, 1, 3));
        assert_eq!((p.recompute, p.sequence_parallel, t.fp8, t.dropout), ("none", true, false, true));
        // A tflops_per_gpu row on A100s with a blank basis counts Megatron's SC21 FLOPs.
        assert_eq!(t.flops_basis, Some(FlopsBasis::Sc21));
        // Pipelines of 12 layers a stage interleave two chunks when the cell is blank.
        assert_eq!(p.vpp, 2);
        let said: Vec<&str> = defaults.iter().map(|d| d.split(':').next().unwrap_or("")).collect();
        assert_eq!(
            said,
            ["flops_basis blank", "ffn_kind blank", "dtype blank", "microbatch blank", "vpp blank", "recompute blank"]
        );
        // ZeRO-3 makes the data-parallel level shard the weights; the scenario says so.
        assert_eq!(p.levels(), [("tp", 2), ("fsdp", 4), ("pp", 2)]);
        let doc = RunRow::Training(t).scenario();
        assert_eq!(doc["task"]["transformer_parallel"], json!(["tp", "fsdp", "pp"]));
        assert_eq!((&doc["task"]["local_transformer_bs"], &doc["task"]["zero_stage"]), (&json!(16), &json!(2)));
        assert_eq!(doc["system"]["num_devices"], json!(16));
    }

    #[test]
    fn cells_that_a_typed_row_cannot_hold_are_refused_by_column() {
        let row = |sp: &str| {
            format!("r,GPT,24,2048,16,,8192,gelu,51200,2048,a100-80g,8,600,1600,8,1,1,8,1,64,{sp},none,0,bf16,iteration_s,1")
        };
        assert!(read(TRAINING, &row("0")).is_ok());
        // Sequence parallelism is on or off: anything else was read as off, now it is named.
        assert_eq!(read(TRAINING, &row("yes")).map(|_| ()), Err("column seq_parallel: \"yes\" is not 0 or 1".into()));
        // A serving row's feed-forward kind is checked where the training row's is.
        let serving = "id,model,layers,hidden,heads,kv_heads,ffn_hidden,ffn_kind,vocab,gpu,gpus_per_node,nvlink_gbytes_s,n_gpus,tp,pp,dtype,batch,input_len,output_len,metric,measured";
        let cells =
            |ffn: &str| format!("s,GPT,24,2048,16,,8192,{ffn},51200,a100-80g,8,600,2,2,1,,1,128,8,latency_ms,10");
        let (run, defaults) = read(serving, &cells("")).expect("reads");
        let RunRow::Serving(s) = run else { panic!("a serving row: {run:?}") };
        assert_eq!((s.shape.ffn_kind, s.format, s.tp, s.batching), ("gelu", "fp16", 2, RowBatching::Static));
        assert_eq!(defaults[0], "dtype blank: fp16");
        assert_eq!(read(serving, &cells("relu")).map(|_| ()), Err("ffn_kind \"relu\" is not gelu or swiglu".into()));
    }
}
