//! A row of the LLM training schema, typed: the model's shape, the cluster and the plan, and the
//! FLOP count a `tflops_per_gpu` row's source used.

use super::{scenario_doc, task_config, Cluster, Shape};
use crate::accuracy::columns::{Col, Row};
use crate::accuracy::rows::gpu_family;
use crate::accuracy::Metric;
use crate::engine::raw::short;
use crate::engine::validate::MAX_METRIC_LOSSES;
use serde_json::{json, Value};

/// A row of the LLM training schema.
#[cfg_attr(test, derive(Debug))]
pub(in crate::accuracy) struct TrainingRow<'a> {
    pub(in crate::accuracy) id: &'a str,
    pub(in crate::accuracy) model: &'a str,
    pub(in crate::accuracy) shape: Shape,
    pub(in crate::accuracy) seq_len: u64,
    pub(in crate::accuracy) cluster: Cluster<'a>,
    pub(in crate::accuracy) plan: TrainingPlan,
    /// Transformer Engine's FP8 training of a 16-bit model (the engine refuses it on GPUs
    /// without FP8 tensor cores).
    pub(in crate::accuracy) fp8: bool,
    /// The blocks' weights kept and gathered in FP8 (`fp8_param_gather`: NeMo's `fp8_params` or
    /// `FP8_PARAM_GATHER`, Megatron-LM's `--fp8-param-gather`; blank: 0, 16-bit).
    pub(in crate::accuracy) fp8_param_gather: bool,
    /// Weights gathered one layer ahead (`overlap_param_gather`: with ZeRO 1/2 Megatron-core's
    /// `--overlap-param-gather`, NeMo's `OVERLAP_PARAM_GATHER` or Apex's `overlap_param_sync`;
    /// with ZeRO-3 FSDP's prefetch); blank: the engine's default for the stage.
    pub(in crate::accuracy) overlap_param_gather: Option<bool>,
    /// The attention kernel's name as the engine takes it (the engine names its kernels when it
    /// is none of them).
    pub(in crate::accuracy) attention: &'a str,
    pub(in crate::accuracy) dropout: bool,
    /// Whether the projections add biases; blank: the engine's default for the feed-forward
    /// kind (GELU models have them, SwiGLU models do not).
    pub(in crate::accuracy) biases: Option<bool>,
    /// How the model encodes positions, as the engine takes it (`model.positions`); blank:
    /// the engine's default (SwiGLU models rotary, GELU models a learned table).
    pub(in crate::accuracy) positions: &'a str,
    /// How the norms and a gated activation run, as the engine takes it
    /// (`model.elementwise`); blank: fused.
    pub(in crate::accuracy) elementwise: &'a str,
    /// How a mixture of experts' tokens reach the experts, as the engine takes it
    /// (`model.moe_dispatch`); blank: eager (Megatron-core 0.6).
    pub(in crate::accuracy) moe_dispatch: &'a str,
    pub(in crate::accuracy) fused_loss: bool,
    /// Cross-entropy losses the training loop computes again per micro-batch for its metrics
    /// (Composer's two); blank: 0.
    pub(in crate::accuracy) metric_losses: u64,
    pub(in crate::accuracy) fp32_grads: bool,
    /// Gradients reduced in buckets during the backward pass (`overlap_grad_reduce`; blank: 0,
    /// after it).
    pub(in crate::accuracy) overlap_grad_reduce: bool,
    /// Which FLOP count a `tflops_per_gpu` row's source used; `None` for the other metrics.
    pub(in crate::accuracy) flops_basis: Option<FlopsBasis>,
}

/// A training row's plan: its parallel degrees and how it trains.
#[cfg_attr(test, derive(Debug))]
pub(in crate::accuracy) struct TrainingPlan {
    pub(in crate::accuracy) tp: u64,
    pub(in crate::accuracy) pp: u64,
    pub(in crate::accuracy) dp: u64,
    pub(in crate::accuracy) cp: u64,
    /// Expert parallelism as Megatron-core counts it: with expert tensor parallelism below tp,
    /// its ranks include the `tp / expert_tp` tensor-parallel ranks that hold whole experts,
    /// and the `expert_cp` context-parallel ranks that hold different experts.
    pub(in crate::accuracy) ep: u64,
    /// The tensor-parallel ranks that split each expert (`expert_tp`; blank: tp).
    pub(in crate::accuracy) expert_tp: u64,
    /// The context-parallel ranks that hold different experts (`expert_cp`; blank: 1).
    pub(in crate::accuracy) expert_cp: u64,
    /// Pipeline chunks per GPU (interleaving).
    pub(in crate::accuracy) vpp: u64,
    /// Sequences per micro-batch.
    pub(in crate::accuracy) microbatch: u64,
    /// Sequences per iteration over the whole cluster.
    pub(in crate::accuracy) global_batch: u64,
    /// ZeRO stage, 0 to 3 (3: the data-parallel ranks shard the weights, an fsdp level).
    pub(in crate::accuracy) zero: u64,
    /// With ZeRO-1, the data-parallel ranks sharing one copy of the optimizer states
    /// (`zero_shard_ranks`; blank: all of them).
    pub(in crate::accuracy) zero_shard_ranks: Option<u64>,
    /// With ZeRO-1, the gradients all-reduced, every rank receiving the whole sum
    /// (`zero1_all_reduce`: InternLM's ZeRO-1; blank: 0, reduce-scattered).
    pub(in crate::accuracy) zero1_all_reduce: bool,
    /// With ZeRO 1/2, the updated weights returned by one broadcast from each rank
    /// (`zero1_broadcast`: InternLM's hybrid ZeRO; blank: 0, one all-gather).
    pub(in crate::accuracy) zero1_broadcast: bool,
    /// The tensor-parallel collectives overlapped with the GEMMs (`overlap_tp_comm`: Transformer
    /// Engine's userbuffers, NeMo's `TP_COMM_OVERLAP`, Megatron-LM's `--tp-comm-overlap`; blank:
    /// 0, blocking, as Megatron-LM runs them by default).
    pub(in crate::accuracy) overlap_tp_comm: bool,
    /// The ranks ordered tensor, context, expert, pipeline, then data parallelism
    /// (`tp_pp_dp_mapping`: Megatron-core's `use_tp_pp_dp_mapping`, NeMo's
    /// `TP_PP_DP_MAPPING`), so a pipeline's stages are consecutive GPUs; blank: 0,
    /// Megatron-core's default order, the pipeline outermost.
    pub(in crate::accuracy) tp_pp_dp_mapping: bool,
    /// `none`, `selective` or `full`.
    pub(in crate::accuracy) recompute: &'static str,
    /// Under selective recomputation, the modules recomputed (`recompute_modules`, Megatron-core's
    /// names; blank: the task's default, the core attention).
    pub(in crate::accuracy) recompute_modules: Option<String>,
    pub(in crate::accuracy) sequence_parallel: bool,
}

impl<'a> TrainingRow<'a> {
    pub(super) fn read(r: &Row<'a>, defaults: &mut Vec<String>) -> Result<TrainingRow<'a>, String> {
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
        let biases = if r.get(Col::Biases).is_empty() { None } else { Some(r.flag(Col::Biases, false)?) };
        let positions = r.get(Col::Positions);
        let elementwise = r.get(Col::Elementwise);
        let moe_dispatch = r.get(Col::MoeDispatch);
        let fused_loss = r.flag(Col::FusedLoss, false)?;
        let metric_losses = r.count(Col::MetricLosses)?.unwrap_or(0);
        if metric_losses > MAX_METRIC_LOSSES {
            return Err(format!("column metric_losses must be at most {MAX_METRIC_LOSSES}"));
        }
        let seq_len = r.need(Col::SeqLen)?;
        let cluster = Cluster::read(r, true)?;
        let plan = TrainingPlan::read(r, &shape, cluster.n_gpus, defaults)?;
        let fp8_param_gather = r.flag(Col::Fp8ParamGather, false)?;
        if fp8_param_gather && (!fp8 || plan.zero == 0) {
            return Err(format!(
                "fp8_param_gather 1 gathers FP8 weights, which needs dtype fp8 and a ZeRO stage; this row has dtype {} and zero {}",
                r.get(Col::Dtype),
                plan.zero
            ));
        }
        let overlap_param_gather = if r.get(Col::OverlapParamGather).is_empty() {
            None
        } else {
            Some(r.flag(Col::OverlapParamGather, false)?)
        };
        Ok(TrainingRow {
            id: r.get(Col::Id),
            model: r.get(Col::Model),
            shape,
            seq_len,
            cluster,
            plan,
            fp8,
            fp8_param_gather,
            overlap_param_gather,
            attention,
            dropout,
            biases,
            positions,
            elementwise,
            moe_dispatch,
            fused_loss,
            metric_losses,
            fp32_grads: r.flag(Col::Fp32Grads, false)?,
            overlap_grad_reduce: r.flag(Col::OverlapGradReduce, false)?,
            flops_basis,
        })
    }

    pub(super) fn scenario(&self) -> Value {
        let mut extra = json!({
            // Megatron-LM GPT (and MPT) tie the output layer to the word embedding.
            "tied_embeddings": true,
            "attention": self.attention,
            "causal": true,
            "dropout": self.dropout,
        });
        if let Some(b) = self.biases {
            extra["biases"] = json!(b);
        }
        if !self.positions.is_empty() {
            extra["positions"] = json!(self.positions);
        }
        if !self.elementwise.is_empty() {
            extra["elementwise"] = json!(self.elementwise);
        }
        if !self.moe_dispatch.is_empty() {
            extra["moe_dispatch"] = json!(self.moe_dispatch);
        }
        let model = self.shape.config(self.model, self.seq_len, extra);
        let p = &self.plan;
        let mut task = task_config(
            self.id,
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
                "metric_losses": self.metric_losses,
                "fp8": self.fp8,
                "fp32_grads": self.fp32_grads,
                "overlap_grad_reduce": self.overlap_grad_reduce,
            }),
        );
        if p.expert_tp < p.tp {
            task["expert_tp"] = json!(p.expert_tp);
        }
        if p.expert_cp > 1 {
            task["expert_cp"] = json!(p.expert_cp);
        }
        if let Some(m) = &p.recompute_modules {
            task["recompute_modules"] = json!(m);
        }
        if let Some(n) = p.zero_shard_ranks {
            task["zero_shard_ranks"] = json!(n);
        }
        if p.zero1_all_reduce {
            task["zero1_all_reduce"] = json!(true);
        }
        if p.zero1_broadcast {
            task["zero1_broadcast"] = json!(true);
        }
        if p.overlap_tp_comm {
            task["overlap_tp_comm"] = json!(true);
        }
        if self.fp8_param_gather {
            task["fp8_param_gather"] = json!(true);
        }
        if let Some(o) = self.overlap_param_gather {
            task["overlap_param_gather"] = json!(o);
        }
        scenario_doc(model, self.cluster.system(self.model), task)
    }
}

impl TrainingPlan {
    /// Reads and checks the plan of a model of `shape` on `n` GPUs.
    fn read(r: &Row, shape: &Shape, n: u64, defaults: &mut Vec<String>) -> Result<TrainingPlan, String> {
        let (tp, pp, dp) = (r.positive(Col::Tp)?, r.positive(Col::Pp)?, r.positive(Col::Dp)?);
        let cp = r.positive_or(Col::Cp, 1)?;
        let ep = r.positive_or(Col::Ep, 1)?;
        let expert_tp = r.positive_or(Col::ExpertTp, tp)?;
        if tp % expert_tp != 0 {
            return Err(format!("expert_tp {expert_tp} does not divide tp {tp}"));
        }
        let expert_cp = r.positive_or(Col::ExpertCp, 1)?;
        if cp % expert_cp != 0 {
            return Err(format!("expert_cp {expert_cp} does not divide cp {cp}"));
        }
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
        let zero_shard_ranks = match r.count(Col::ZeroShardRanks)? {
            None => None,
            Some(n) if zero == 1 && n >= 1 && (dp * cp) % n == 0 => Some(n),
            Some(n) => return Err(format!("zero_shard_ranks {n} needs zero 1 and must divide dp x cp = {}", dp * cp)),
        };
        let zero1_all_reduce = r.flag(Col::Zero1AllReduce, false)?;
        if zero1_all_reduce && zero != 1 {
            return Err(format!("zero1_all_reduce 1 says how ZeRO-1 sums gradients; this row has zero {zero}"));
        }
        let zero1_broadcast = r.flag(Col::Zero1Broadcast, false)?;
        if zero1_broadcast && !(1..=2).contains(&zero) {
            return Err(format!(
                "zero1_broadcast 1 says how ZeRO 1 and 2 return the updated weights; this row has zero {zero}"
            ));
        }
        // The expert-parallel ranks beyond the tensor-parallel ones that hold whole experts
        // and the context-parallel ones that hold different experts come from the
        // data-parallel ranks.
        let joined = tp / expert_tp * expert_cp;
        if ep % joined != 0 || dp % (ep / joined) != 0 {
            return Err(format!(
                "expert parallelism {ep} is not {joined} tensor- and context-parallel ranks (tp / expert_tp x expert_cp) times a divisor of dp {dp}"
            ));
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
        let recompute_modules = match r.get(Col::RecomputeModules) {
            "" => None,
            m if recompute == "selective" => Some(m.to_owned()),
            _ => return Err("recompute_modules needs recompute selective".into()),
        };
        let sequence_parallel = r.flag(Col::SeqParallel, false)?;
        let overlap_tp_comm = r.flag(Col::OverlapTpComm, false)?;
        if overlap_tp_comm && tp == 1 {
            return Err(
                "overlap_tp_comm 1 overlaps tensor-parallel collectives with the GEMMs; this row has tp 1".into()
            );
        }
        let tp_pp_dp_mapping = r.flag(Col::TpPpDpMapping, false)?;
        if tp_pp_dp_mapping && (pp == 1 || dp == 1) {
            return Err(format!(
                "tp_pp_dp_mapping 1 places the pipeline's stages inside data parallelism; this row has pp {pp} and dp {dp}"
            ));
        }
        Ok(TrainingPlan {
            tp,
            pp,
            dp,
            cp,
            ep,
            expert_tp,
            expert_cp,
            vpp,
            microbatch,
            global_batch,
            zero,
            zero_shard_ranks,
            zero1_all_reduce,
            zero1_broadcast,
            overlap_tp_comm,
            tp_pp_dp_mapping,
            recompute,
            recompute_modules,
            sequence_parallel,
        })
    }

    /// The transformer plan's levels in Megatron's rank order (tensor innermost, then context,
    /// expert, data, pipeline outermost; with `tp_pp_dp_mapping`, pipeline then data
    /// outermost), those of degree 1 left out. Expert parallelism is
    /// carved out of the data-parallel ranks (Megatron), but for the tensor-parallel ranks that
    /// hold whole experts (`task.expert_tp`) and the context-parallel ranks that hold different
    /// experts (`task.expert_cp`); with ZeRO-3 the data-parallel level shards the weights
    /// (`fsdp`).
    pub(super) fn levels(&self) -> Vec<(&'static str, u64)> {
        let data = if self.zero == 3 { "fsdp" } else { "ddp" };
        let ep = self.ep / (self.tp / self.expert_tp * self.expert_cp);
        let (data, pp) = ((data, self.dp / ep), ("pp", self.pp));
        let (outer, outermost) = if self.tp_pp_dp_mapping { (pp, data) } else { (data, pp) };
        let mut levels: Vec<(&'static str, u64)> =
            [("tp", self.tp), ("cp", self.cp), ("ep", ep), outer, outermost].into_iter().filter(|l| l.1 > 1).collect();
        if levels.is_empty() {
            levels.push(("ddp", 1));
        }
        levels
    }
}

/// Which FLOP count a `tflops_per_gpu` row's source divided by its time (the `flops_basis`
/// column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::accuracy) enum FlopsBasis {
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
