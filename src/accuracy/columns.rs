//! The columns of the measured runs' CSVs (SOURCES.md, "Schema") and a row read by them: every
//! column madmax reads is a [`Col`], so a misspelled column in a file is refused by name
//! instead of read as blank, and the code names columns the compiler checks.

use super::Metric;
use crate::engine::raw::short;
use std::fmt;

macro_rules! columns {
    ($($variant:ident = $name:literal,)*) => {
        /// A column of the validation CSVs, in the four schemas together (LLM training, LLM
        /// serving, recommendation training, convolutional network training).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(super) enum Col { $($variant,)* }

        impl Col {
            /// Every column, in the order of the schema's tables.
            pub(super) const ALL: &'static [Col] = &[$(Col::$variant,)*];

            /// The column's name in a CSV header.
            pub(super) fn name(self) -> &'static str {
                match self { $(Col::$variant => $name,)* }
            }
        }
    };
}

columns! {
    Id = "id",
    Source = "source",
    Set = "set",
    Model = "model",
    Layers = "layers",
    Hidden = "hidden",
    Heads = "heads",
    KvHeads = "kv_heads",
    HeadDim = "head_dim",
    FfnHidden = "ffn_hidden",
    FfnKind = "ffn_kind",
    Experts = "experts",
    ActiveExperts = "active_experts",
    Vocab = "vocab",
    SeqLen = "seq_len",
    Gpu = "gpu",
    GpusPerNode = "gpus_per_node",
    NvlinkGbytesS = "nvlink_gbytes_s",
    NicGbitsSPerNode = "nic_gbits_s_per_node",
    NGpus = "n_gpus",
    Tp = "tp",
    Pp = "pp",
    Dp = "dp",
    Cp = "cp",
    Ep = "ep",
    ExpertTp = "expert_tp",
    ExpertCp = "expert_cp",
    RecomputeModules = "recompute_modules",
    Vpp = "vpp",
    Microbatch = "microbatch",
    GlobalBatch = "global_batch",
    SeqParallel = "seq_parallel",
    Recompute = "recompute",
    Zero = "zero",
    ZeroShardRanks = "zero_shard_ranks",
    Zero1AllReduce = "zero1_all_reduce",
    Zero1Broadcast = "zero1_broadcast",
    TpPpDpMapping = "tp_pp_dp_mapping",
    OverlapTpComm = "overlap_tp_comm",
    Fp8ParamGather = "fp8_param_gather",
    OverlapParamGather = "overlap_param_gather",
    OverlapGradReduce = "overlap_grad_reduce",
    Dtype = "dtype",
    Attention = "attention",
    Dropout = "dropout",
    Biases = "biases",
    Positions = "positions",
    Elementwise = "elementwise",
    MoeDispatch = "moe_dispatch",
    FusedLoss = "fused_loss",
    MetricLosses = "metric_losses",
    Fp32Grads = "fp32_grads",
    FlopsBasis = "flops_basis",
    Metric = "metric",
    Measured = "measured",
    MemoryGib = "memory_gib",
    Notes = "notes",
    InputLen = "input_len",
    OutputLen = "output_len",
    Batch = "batch",
    Batching = "batching",
    StepTokens = "step_tokens",
    RequestRate = "request_rate",
    BurstRequests = "burst_requests",
    PrefillSteps = "prefill_steps",
    SchedulerSteps = "scheduler_steps",
    LengthSpread = "length_spread",
    HostStepMs = "host_step_ms",
    HostRequestMs = "host_request_ms",
    CudaGraphs = "cuda_graphs",
    CustomAllReduce = "custom_all_reduce",
    Sampling = "sampling",
    BotMlpWidths = "bot_mlp_widths",
    TopMlpWidths = "top_mlp_widths",
    Tables = "tables",
    RowsTotal = "rows_total",
    EmbDim = "emb_dim",
    Pooling = "pooling",
    EmbBytes = "emb_bytes",
    BotMlp = "bot_mlp",
    CollectiveCycleMs = "collective_cycle_ms",
    Network = "network",
    ImageSize = "image_size",
    ConvLayout = "conv_layout",
}

impl fmt::Display for Col {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where each [`Col`] is in a CSV's header (`None`: the file has no such column).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Columns {
    index: Vec<Option<usize>>,
}

impl Columns {
    /// The columns of a header; refuses a column madmax does not read (a misspelling would
    /// otherwise read as blank cells and take defaults) and a column named twice.
    pub(super) fn of(header: &[String]) -> Result<Columns, String> {
        let mut index = vec![None; Col::ALL.len()];
        for (i, h) in header.iter().enumerate() {
            let Some(c) = Col::ALL.iter().find(|c| c.name() == h.trim()) else {
                let known = Col::ALL.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ");
                return Err(format!(
                    "the CSV's column \"{}\" is not one madmax reads (is it misspelled?); the columns are {known}",
                    short(h)
                ));
            };
            if index[*c as usize].replace(i).is_some() {
                return Err(format!("the CSV names column {c} twice"));
            }
        }
        Ok(Columns { index })
    }

    pub(super) fn has(&self, c: Col) -> bool {
        self.position(c).is_some()
    }

    fn position(&self, c: Col) -> Option<usize> {
        self.index.get(c as usize).copied().flatten()
    }
}

/// A row of cells under its header's [`Columns`].
pub(super) struct Row<'a> {
    pub(super) columns: &'a Columns,
    pub(super) cells: &'a [String],
}

impl<'a> Row<'a> {
    /// The row's metric; `None` when its cell names none of the schema's.
    pub(super) fn metric(&self) -> Option<Metric> {
        Metric::of_cell(self.get(Col::Metric))
    }

    /// Whether the row's file has the column.
    pub(super) fn has(&self, key: Col) -> bool {
        self.columns.has(key)
    }

    /// The cell, trimmed; empty when blank or when the file has no such column.
    pub(super) fn get(&self, key: Col) -> &'a str {
        self.columns.position(key).and_then(|i| self.cells.get(i)).map_or("", |s| s.trim())
    }

    pub(super) fn count(&self, key: Col) -> Result<Option<u64>, String> {
        let v = self.get(key);
        if v.is_empty() {
            return Ok(None);
        }
        v.parse::<u64>().map(Some).map_err(|_| format!("column {key}: \"{}\" is not a whole number", short(v)))
    }

    pub(super) fn need(&self, key: Col) -> Result<u64, String> {
        self.count(key)?.ok_or(format!("column {key} is blank"))
    }

    /// A count that must be at least 1 (degrees, sizes).
    pub(super) fn positive(&self, key: Col) -> Result<u64, String> {
        match self.need(key)? {
            0 => Err(format!("column {key} must be at least 1")),
            n => Ok(n),
        }
    }

    /// An optional count that must be at least 1 when given.
    pub(super) fn positive_or(&self, key: Col, default: u64) -> Result<u64, String> {
        match self.count(key)? {
            None => Ok(default),
            Some(0) => Err(format!("column {key} must be at least 1")),
            Some(n) => Ok(n),
        }
    }

    /// A 0/1 column; `default` when blank or absent.
    pub(super) fn flag(&self, key: Col, default: bool) -> Result<bool, String> {
        match self.get(key) {
            "" => Ok(default),
            "0" => Ok(false),
            "1" => Ok(true),
            v => Err(format!("column {key}: \"{}\" is not 0 or 1", short(v))),
        }
    }

    pub(super) fn number(&self, key: Col) -> Result<f64, String> {
        let v = self.get(key);
        v.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("column {key}: \"{}\" is not a number", short(v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn a_header_is_read_by_name_and_a_misspelled_or_repeated_column_refused() {
        let cols = Columns::of(&header(&["id", " tp ", "metric", "measured"])).expect("known");
        let cells = header(&["r1", "8", "iteration_s", "1.5"]);
        let r = Row { columns: &cols, cells: &cells };
        assert_eq!((r.get(Col::Id), r.need(Col::Tp), r.number(Col::Measured)), ("r1", Ok(8), Ok(1.5)));
        // A column the file does not have reads as blank.
        assert!(!r.has(Col::Pp) && r.get(Col::Pp).is_empty());
        assert_eq!(r.need(Col::Pp), Err("column pp is blank".to_owned()));
        let typo = Columns::of(&header(&["id", "tensor_par", "metric"])).expect_err("refused");
        assert!(typo.starts_with("the CSV's column \"tensor_par\" is not one madmax reads"), "{typo}");
        assert!(typo.contains("tp, pp, dp"), "{typo}");
        assert_eq!(Columns::of(&header(&["id", "tp", "tp"])), Err("the CSV names column tp twice".to_owned()));
    }

    #[test]
    fn every_column_has_one_name() {
        let mut names: Vec<&str> = Col::ALL.iter().map(|c| c.name()).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n);
    }
}
