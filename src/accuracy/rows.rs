//! A CSV row of a measured run, typed: [`RunRow::read`] parses and checks every cell its
//! schema's scenario needs (training, serving or recommendation: [`TrainingRow`],
//! [`InferenceRow`], [`RecommendationRow`]) once, blank cells at their documented defaults, and
//! [`RunRow::scenario`] builds the `{"model", "system", "task"}` MAD-Max configs it ran from the
//! typed fields. This file holds what the schemas share (the schema, a transformer's shape, the
//! cluster, the GPUs a row may name, the config builders); `rows/training.rs`,
//! `rows/serving.rs` and `rows/recommendation.rs` each schema's own row (and, for training, the
//! FLOP count a `tflops_per_gpu` row used).

use super::columns::{Col, Row};
use crate::engine::extended::calibration::{self, UTIL};
use crate::engine::raw::short;
use crate::presets::{self, Utilisation};
use serde_json::{json, Map, Value};

mod recommendation;
mod serving;
mod training;
mod vision;
pub(super) use recommendation::RecommendationRow;
pub(super) use serving::InferenceRow;
pub use training::megatron_flops;
pub(super) use training::{FlopsBasis, TrainingRow};
pub(super) use vision::VisionRow;

/// Bytes in a GiB: sources state memory per GPU as `nvidia-smi` prints it.
pub(super) const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// The GPUs a CSV `gpu` cell can name (the form `<gpu>-<memory>g`): the cell, the preset it
/// runs on (datasheet peaks, memory and links), and its family (the validation page's GPU
/// filter and the bands of [`BANDS`] group rows by it).
pub(super) const GPUS: [(&str, &str, &str); 13] = [
    ("v100-32g", "v100_sxm2_32", "V100"),
    ("a100-40g", "a100_40", "A100"),
    ("a100-80g", "a100_80", "A100"),
    ("a800-80g", "a800_80", "A100"),
    ("h100-80g", "h100_sxm", "H100"),
    ("h800-80g", "h800_sxm", "H100"),
    ("h100-94g", "h100_nvl", "H100 NVL"),
    ("h100-96g", "gh200_96", "GH200"),
    ("h200-141g", "h200_sxm", "H200"),
    ("b200-180g", "b200", "B200"),
    ("b200-192g", "b200_192", "B200"),
    ("gb200-186g", "gb200", "GB200"),
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
pub(super) fn row_gpu(cell: &str) -> Result<presets::GpuPreset, String> {
    let ps = presets::all().map_err(str::to_owned)?;
    GPUS.iter()
        .find(|g| g.0 == cell)
        .and_then(|g| ps.gpu(g.1))
        .cloned()
        .ok_or_else(|| format!("gpu \"{}\" is not one of {}", short(cell), gpu_cells()))
}

/// The GPU family of a `gpu` cell: `V100`, `A100` (either memory size), `H100` (SXM 80 GB), `H100 NVL`,
/// `GH200`, `H200`, `B200`, `GB200` or `MI300X`.
pub fn gpu_family(gpu_cell: &str) -> Option<&'static str> {
    GPUS.iter().find(|g| g.0 == gpu_cell).map(|g| g.2)
}

/// The achievable fractions every row on a GPU of `family` with the datasheet's HBM bandwidth
/// `mem_bw` (bytes/s) uses: [`UTIL`], with the GEMM fraction scaled by how much of its peak the
/// family's best matmul reaches against the A100's ([`calibration::gemm_util`]), and GEMMs
/// streaming at the GPU's profiled share of HBM bandwidth where one is measured
/// ([`calibration::gemm_bw_util`]).
pub(super) fn family_util(family: Option<&str>, mem_bw: f64) -> Utilisation {
    let flops = family.map_or(UTIL.flops, calibration::gemm_util);
    let gemm_bw = family.and_then(|f| calibration::gemm_bw_util(f, mem_bw));
    Utilisation { flops, mem_bw: UTIL.mem_bw, nvlink: UTIL.nvlink, nic: UTIL.nic, ar_perc_intra: 0.5, gemm_bw }
}

/// The achievable fractions every row on `gpu` (the preset of its `gpu_cell`) uses
/// ([`family_util`]).
pub(super) fn row_util(gpu_cell: &str, gpu: &presets::GpuPreset) -> Utilisation {
    family_util(gpu_family(gpu_cell), gpu.mem_bw)
}

/// The four schemas of the measured runs' CSVs (SOURCES.md, "Schema"), told apart by the
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
    /// Convolutional network training (`vision.csv`): a network by name and its image size
    /// (SOURCES.md section 8).
    Vision,
}

impl Schema {
    /// The schema of a row's file.
    pub(super) fn of(r: &Row) -> Schema {
        if r.has(Col::InputLen) {
            Schema::Serving
        } else if r.has(Col::TopMlpWidths) {
            Schema::Recommendation
        } else if r.has(Col::Network) {
            Schema::Vision
        } else {
            Schema::Training
        }
    }
}

/// Bytes per dense weight of a row's `dtype` (the recommendation and vision schemas): 4-byte
/// weights run at the presets' f32 figure, an A100's TF32 tensor-core peak (`tf32`) or a V100's
/// FP32 peak (`fp32`, no TF32 there); `fp16` is automatic mixed precision (16-bit GEMMs).
fn dense_bytes(r: &Row) -> Result<u64, String> {
    match r.get(Col::Dtype) {
        "fp16" => Ok(2),
        "tf32" | "fp32" => Ok(4),
        other => Err(format!("dtype \"{}\" is not fp16, tf32 or fp32", short(other))),
    }
}

/// The global batch of a row that splits it evenly over its cluster's GPUs.
fn split_batch(r: &Row, cluster: &Cluster) -> Result<u64, String> {
    let global_batch = r.positive(Col::GlobalBatch)?;
    if global_batch % cluster.n_gpus != 0 {
        return Err(format!("global batch {global_batch} does not split over {} GPUs", cluster.n_gpus));
    }
    Ok(global_batch)
}

/// A measured run's row, read by its schema: every cell the scenario needs, parsed and
/// checked, blank cells already at their defaults.
#[cfg_attr(test, derive(Debug))]
pub(super) enum RunRow<'a> {
    Training(TrainingRow<'a>),
    Serving(InferenceRow<'a>),
    Recommendation(RecommendationRow<'a>),
    Vision(VisionRow<'a>),
}

impl<'a> RunRow<'a> {
    /// Reads a row by its file's schema, with the defaults its blank cells took (in words), or
    /// the first cell that is wrong.
    pub(super) fn read(r: &Row<'a>) -> Result<(RunRow<'a>, Vec<String>), String> {
        let mut defaults = Vec::new();
        let row = match Schema::of(r) {
            Schema::Training => RunRow::Training(TrainingRow::read(r, &mut defaults)?),
            Schema::Serving => RunRow::Serving(InferenceRow::read(r, &mut defaults)?),
            Schema::Recommendation => RunRow::Recommendation(RecommendationRow::read(r, &mut defaults)?),
            Schema::Vision => RunRow::Vision(VisionRow::read(r, &mut defaults)?),
        };
        Ok((row, defaults))
    }

    /// The scenario the row ran: `{"model", "system", "task"}` configs of the default model.
    pub(super) fn scenario(&self) -> Value {
        match self {
            RunRow::Training(t) => t.scenario(),
            RunRow::Serving(s) => s.scenario(),
            RunRow::Recommendation(d) => d.scenario(),
            RunRow::Vision(v) => v.scenario(),
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
    /// A mixture of experts where the row states one: experts per layer and experts each
    /// token is routed to (`experts`, `active_experts`), each expert a feed-forward block of
    /// `ffn_hidden`; `None`: a dense model.
    pub(super) moe: Option<(u64, u64)>,
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
        let moe = match (r.count(Col::Experts)?, r.count(Col::ActiveExperts)?) {
            (None, None) => None,
            (Some(e), Some(k)) if k >= 1 && k <= e => Some((e, k)),
            (Some(e), Some(k)) => {
                return Err(format!("column active_experts must be from 1 to experts ({e}), got {k}"))
            }
            _ => {
                return Err(
                    "columns experts and active_experts: a mixture of experts needs both; fill both or neither".into()
                )
            }
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
            moe,
        })
    }

    /// The model config of an LLM of this shape named `name`, in 16-bit weights, over
    /// sequences of `seq` tokens, with the schema's own keys (`extra`).
    fn config(&self, name: &str, seq: u64, extra: Value) -> Value {
        let model = json!({
            "name": name,
            "type": if self.moe.is_some() { "LLM_MoE" } else { "LLM" },
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
        let model = match self.moe {
            Some((experts, active)) => {
                with_keys(model, json!({ "num_experts": experts, "num_active_experts": active }))
            }
            None => model,
        };
        with_keys(model, extra)
    }
}

/// A row's cluster: its `gpu` (the preset of that cell), `n_gpus` in nodes of
/// `gpus_per_node`, its NVLink and, where the schema states it, its network.
#[cfg_attr(test, derive(Debug))]
pub(super) struct Cluster<'a> {
    pub(super) gpu_cell: &'a str,
    pub(super) gpu: presets::GpuPreset,
    pub(super) n_gpus: u64,
    /// GPUs per node, at most `n_gpus`.
    pub(super) gpus_per_node: u64,
    pub(super) nvlink_gbytes_s: f64,
    /// The network per node, Gb/s; `None` where the schema does not state it (serving).
    pub(super) nic_gbit_s_per_node: Option<f64>,
}

impl<'a> Cluster<'a> {
    /// Reads the cluster; `nic` says whether the schema has the network column.
    fn read(r: &Row<'a>, nic: bool) -> Result<Cluster<'a>, String> {
        let nic_gbit_s_per_node = if nic { Some(r.number(Col::NicGbitsSPerNode)?) } else { None };
        let gpu_cell = r.get(Col::Gpu);
        let gpu = row_gpu(gpu_cell)?;
        let n_gpus = r.positive(Col::NGpus)?;
        let gpus_per_node = r.positive(Col::GpusPerNode)?.min(n_gpus);
        if n_gpus % gpus_per_node != 0 {
            return Err(format!("{n_gpus} GPUs do not fill nodes of {gpus_per_node}"));
        }
        Ok(Cluster {
            gpu_cell,
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
            row_util(self.gpu_cell, &self.gpu),
        );
        system.insert("num_nvlinks".into(), json!(self.nvlink_gbytes_s * 1e9 / self.gpu.bw_per_nvlink));
        Value::Object(system)
    }
}

/// The scenario `{"model", "system", "task"}` of three configs, moved in (`json!` would copy each
/// through serde, which took a tenth of a long file's `validate`).
fn scenario_doc(model: Value, system: Value, task: Value) -> Value {
    let mut doc = Map::new();
    doc.insert("model".to_owned(), model);
    doc.insert("system".to_owned(), system);
    doc.insert("task".to_owned(), task);
    Value::Object(doc)
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
    use super::serving::RowBatching;
    use super::*;

    /// One row under its header, held so that its typed row can borrow the cells.
    struct Cells {
        columns: Columns,
        cells: Vec<String>,
    }

    /// The row `cells` under `header` (both comma-separated).
    fn row(header: &str, cells: &str) -> Cells {
        let names: Vec<String> = header.split(',').map(str::to_owned).collect();
        let columns = Columns::of(&names).expect("known columns");
        Cells { columns, cells: cells.split(',').map(str::to_owned).collect() }
    }

    impl Cells {
        fn read(&self) -> Result<(RunRow<'_>, Vec<String>), String> {
            RunRow::read(&Row { columns: &self.columns, cells: &self.cells })
        }
    }

    const TRAINING: &str = "id,model,layers,hidden,heads,kv_heads,ffn_hidden,ffn_kind,vocab,seq_len,gpu,gpus_per_node,nvlink_gbytes_s,nic_gbits_s_per_node,n_gpus,tp,pp,dp,microbatch,global_batch,seq_parallel,recompute,zero,dtype,metric,measured";

    #[test]
    fn a_training_row_reads_into_typed_fields_with_its_blank_cells_at_their_defaults() {
        let cells = row(
            TRAINING,
            "r,GPT,24,2048,16,,8192,,51200,2048,a100-80g,8,600,1600,16,2,2,4,,64,1,,3,,tflops_per_gpu,150",
        );
        let (run, defaults) = cells.read().expect("reads");
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
    fn tp_pp_dp_mapping_puts_the_pipeline_inside_data_parallelism() {
        let head = format!("{TRAINING},cp,tp_pp_dp_mapping");
        let plan = |pp: u64, dp: u64, mapping: &str| {
            let n = 4 * 2 * pp * dp;
            let cells = row(
                &head,
                &format!("r,GPT,24,2048,16,,8192,gelu,51200,2048,h100-80g,8,900,3200,{n},4,{pp},{dp},1,{},0,none,1,bf16,iteration_s,1,2,{mapping}", dp * 8),
            );
            cells.read().map(|(run, _)| match run {
                RunRow::Training(t) => RunRow::Training(t).scenario()["task"]["transformer_parallel"].clone(),
                other => panic!("{other:?}"),
            })
        };
        // Megatron-core's default order keeps the pipeline outermost; the mapping (NeMo's
        // TP_PP_DP_MAPPING) puts each pipeline's stages on consecutive GPUs, data parallelism
        // outermost.
        assert_eq!(plan(4, 2, ""), Ok(json!(["tp", "cp", "ddp", "pp"])));
        assert_eq!(plan(4, 2, "0"), Ok(json!(["tp", "cp", "ddp", "pp"])));
        assert_eq!(plan(4, 2, "1"), Ok(json!(["tp", "cp", "pp", "ddp"])));
        // Without a pipeline or data parallelism there is nothing to order.
        assert!(plan(1, 2, "1").is_err_and(|e| e.contains("tp_pp_dp_mapping") && e.contains("pp 1")));
        assert!(plan(4, 1, "1").is_err_and(|e| e.contains("dp 1")));
    }

    #[test]
    fn cells_that_a_typed_row_cannot_hold_are_refused_by_column() {
        let training = |sp: &str| {
            row(TRAINING, &format!("r,GPT,24,2048,16,,8192,gelu,51200,2048,a100-80g,8,600,1600,8,1,1,8,1,64,{sp},none,0,bf16,iteration_s,1"))
        };
        assert!(training("0").read().is_ok());
        // Sequence parallelism is on or off: anything else was read as off, now it is named.
        assert_eq!(training("yes").read().map(|_| ()), Err("column seq_parallel: \"yes\" is not 0 or 1".into()));
        // A serving row's feed-forward kind is checked where the training row's is.
        let serving = "id,model,layers,hidden,heads,kv_heads,ffn_hidden,ffn_kind,vocab,gpu,gpus_per_node,nvlink_gbytes_s,n_gpus,tp,pp,dtype,batch,input_len,output_len,metric,measured";
        let cells = |ffn: &str| {
            row(serving, &format!("s,GPT,24,2048,16,,8192,{ffn},51200,a100-80g,8,600,2,2,1,,1,128,8,latency_ms,10"))
        };
        let blank = cells("");
        let (run, defaults) = blank.read().expect("reads");
        let RunRow::Serving(s) = run else { panic!("a serving row: {run:?}") };
        assert_eq!((s.shape.ffn_kind, s.format, s.tp, s.batching), ("gelu", "fp16", 2, RowBatching::Static));
        assert_eq!(defaults[0], "dtype blank: fp16");
        assert_eq!(cells("relu").read().map(|_| ()), Err("ffn_kind \"relu\" is not gelu or swiglu".into()));
    }

    #[test]
    fn a_training_row_says_how_many_metric_losses_its_loop_computes() {
        let header = format!("{TRAINING},metric_losses");
        let with = |m: &str| {
            row(&header, &format!("r,GPT,24,2048,16,,8192,gelu,51200,2048,a100-80g,8,600,1600,8,1,1,8,1,64,0,none,0,bf16,iteration_s,1,{m}"))
        };
        let losses = |m: &str| {
            with(m).read().map(|(run, _)| match run {
                RunRow::Training(t) => RunRow::Training(t).scenario()["task"]["metric_losses"].clone(),
                other => panic!("a training row: {other:?}"),
            })
        };
        // Blank: the loop logs the loss it computed (Megatron-LM); Composer's rows say 2.
        assert_eq!(losses(""), Ok(json!(0)));
        assert_eq!(losses("2"), Ok(json!(2)));
        assert_eq!(losses("9"), Err("column metric_losses must be at most 8".into()));
        assert_eq!(losses("two"), Err("column metric_losses: \"two\" is not a whole number".into()));
    }

    #[test]
    fn a_row_with_experts_is_a_mixture_of_experts_and_half_a_pair_is_refused() {
        let header = format!("{TRAINING},experts,active_experts");
        let with = |e: &str, k: &str| {
            row(&header, &format!("r,Mixtral,32,4096,32,8,14336,swiglu,32000,4096,h100-80g,8,900,3200,8,8,1,1,1,8,1,selective,1,bf16,iteration_s,1,{e},{k}"))
        };
        let model = |e: &str, k: &str| {
            with(e, k).read().map(|(run, _)| match run {
                RunRow::Training(t) => RunRow::Training(t).scenario()["model"].clone(),
                other => panic!("a training row: {other:?}"),
            })
        };
        let moe = model("8", "2").expect("reads");
        assert_eq!(
            (&moe["type"], &moe["num_experts"], &moe["num_active_experts"]),
            (&json!("LLM_MoE"), &json!(8), &json!(2))
        );
        let dense = model("", "").expect("reads");
        assert_eq!((&dense["type"], dense.get("num_experts")), (&json!("LLM"), None));
        assert_eq!(
            model("8", "").map(|_| ()),
            Err("columns experts and active_experts: a mixture of experts needs both; fill both or neither".into())
        );
        assert_eq!(
            model("2", "8").map(|_| ()),
            Err("column active_experts must be from 1 to experts (2), got 8".into())
        );
        assert_eq!(
            model("8", "0").map(|_| ()),
            Err("column active_experts must be from 1 to experts (8), got 0".into())
        );
    }

    #[test]
    fn a_training_row_may_say_whether_its_model_has_biases() {
        let header = format!("{TRAINING},biases");
        let biases = |ffn: &str, b: &str| {
            let line = format!("r,GPT,24,2048,16,,8192,{ffn},51200,2048,a100-80g,8,600,1600,8,1,1,8,1,64,0,none,0,bf16,iteration_s,1,{b}");
            row(&header, &line).read().map(|(run, _)| match run {
                RunRow::Training(t) => {
                    let doc = RunRow::Training(t).scenario();
                    let raw: crate::engine::raw::RawScenario = serde_json::from_value(doc).expect("raw");
                    crate::engine::validate(&raw).expect("valid").model().shape.biases
                }
                other => panic!("a training row: {other:?}"),
            })
        };
        // Blank: the engine's default for the feed-forward kind; a cell says otherwise.
        assert_eq!((biases("gelu", ""), biases("swiglu", "")), (Ok(true), Ok(false)));
        assert_eq!((biases("gelu", "0"), biases("swiglu", "1")), (Ok(false), Ok(true)));
        assert!(biases("gelu", "maybe").is_err_and(|e| e.contains("biases")));
    }

    #[test]
    fn a_training_row_may_say_how_its_model_encodes_positions() {
        use crate::engine::scenario::Positions;
        let header = format!("{TRAINING},positions");
        let positions = |ffn: &str, p: &str| {
            let line = format!("r,GPT,24,2048,16,,8192,{ffn},51200,2048,a100-80g,8,600,1600,8,1,1,8,1,64,0,none,0,bf16,iteration_s,1,{p}");
            let cells = row(&header, &line);
            let (run, _) = cells.read().expect("a row");
            let raw: crate::engine::raw::RawScenario = serde_json::from_value(run.scenario()).expect("raw");
            crate::engine::validate(&raw).map(|s| s.model().shape.positions).map_err(|e| format!("{e:?}"))
        };
        // Blank: the engine's default for the feed-forward kind; a cell says otherwise, and the
        // engine refuses a name it does not know, naming the field.
        assert_eq!((positions("gelu", ""), positions("swiglu", "")), (Ok(Positions::Learned), Ok(Positions::Rope)));
        assert_eq!(positions("swiglu", "rope-unfused"), Ok(Positions::RopeUnfused));
        assert_eq!(positions("swiglu", "learned"), Ok(Positions::Learned));
        assert!(positions("gelu", "alibi").is_err_and(|e| e.contains("model.positions")));
    }

    #[test]
    fn a_training_row_may_say_its_norms_and_activation_run_eagerly() {
        use crate::engine::scenario::Elementwise;
        let header = format!("{TRAINING},elementwise");
        let elementwise = |cell: &str| {
            let line = format!("r,LLaMA,32,4096,32,,11008,swiglu,32000,4096,a100-80g,8,600,1600,8,1,1,8,1,8,0,none,3,bf16,iteration_s,1,{cell}");
            let cells = row(&header, &line);
            let (run, _) = cells.read().expect("a row");
            let raw: crate::engine::raw::RawScenario = serde_json::from_value(run.scenario()).expect("raw");
            crate::engine::validate(&raw).map(|s| s.model().shape.elementwise).map_err(|e| format!("{e:?}"))
        };
        // Blank: fused; the engine refuses a name it does not know, naming the field.
        assert_eq!((elementwise(""), elementwise("eager")), (Ok(Elementwise::Fused), Ok(Elementwise::Eager)));
        assert_eq!(elementwise("fused"), Ok(Elementwise::Fused));
        assert!(elementwise("compiled").is_err_and(|e| e.contains("model.elementwise")));
    }
}
