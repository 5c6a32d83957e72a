//! A row of the recommendation schema, typed: a DLRM's MLP widths and tables, the cluster and
//! where the bottom MLP runs.

use super::{dense_bytes, scenario_doc, split_batch, Cluster};
use crate::accuracy::columns::{Col, Row};
use serde_json::{json, Value};

/// A row of the recommendation schema: a DLRM of the row's MLP widths and tables.
#[cfg_attr(test, derive(Debug))]
pub(in crate::accuracy) struct RecommendationRow<'a> {
    pub(in crate::accuracy) id: &'a str,
    pub(in crate::accuracy) model: &'a str,
    /// Bytes per dense weight: 2 (fp16, automatic mixed precision) or 4 (tf32, fp32).
    pub(in crate::accuracy) dense_bytes: u64,
    pub(in crate::accuracy) emb_bytes: u64,
    /// The MLPs' widths as the engine reads them, `13-512-256-128` (input first for the
    /// bottom MLP).
    pub(in crate::accuracy) bot_mlp_widths: &'a str,
    pub(in crate::accuracy) top_mlp_widths: &'a str,
    pub(in crate::accuracy) tables: u64,
    /// Rows of all tables together.
    pub(in crate::accuracy) rows_total: u64,
    pub(in crate::accuracy) emb_dim: u64,
    /// Rows looked up per table per sample.
    pub(in crate::accuracy) pooling: u64,
    pub(in crate::accuracy) cluster: Cluster<'a>,
    pub(in crate::accuracy) global_batch: u64,
    /// Where the bottom MLP runs: `data_parallel` or `one_gpu` (the engine checks the name).
    pub(in crate::accuracy) bot_mlp: &'a str,
    /// Horovod's launch cycle, ms (0: collectives called directly).
    pub(in crate::accuracy) collective_cycle_ms: f64,
}

impl<'a> RecommendationRow<'a> {
    pub(super) fn read(r: &Row<'a>, defaults: &mut Vec<String>) -> Result<RecommendationRow<'a>, String> {
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
        let dense_bytes = dense_bytes(r)?;
        let emb_bytes = r.positive(Col::EmbBytes)?;
        let emb_dim = r.positive(Col::EmbDim)?;
        let pooling = r.positive(Col::Pooling)?;
        let cluster = Cluster::read(r, true)?;
        let global_batch = split_batch(r, &cluster)?;
        Ok(RecommendationRow {
            id: r.get(Col::Id),
            model: r.get(Col::Model),
            dense_bytes,
            emb_bytes,
            bot_mlp_widths: r.get(Col::BotMlpWidths),
            top_mlp_widths: r.get(Col::TopMlpWidths),
            tables,
            rows_total,
            emb_dim,
            pooling,
            cluster,
            global_batch,
            bot_mlp,
            collective_cycle_ms,
        })
    }

    /// The scenario: trained the way NVIDIA's and TorchRec's DLRMs train on one node or more:
    /// every table whole on one GPU (table-wise model parallelism over all GPUs, pooled
    /// embeddings exchanged by all-to-all) and the MLPs data-parallel over all GPUs, or the
    /// bottom MLP on one GPU where the `bot_mlp` cell says `one_gpu` (NVIDIA's DLRM examples).
    pub(super) fn scenario(&self) -> Value {
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
        scenario_doc(model, self.cluster.system(self.model), task)
    }
}
