//! The default model for the recommendation families (DLRM, DLRM_MoE, DLRM_Transformer): one
//! iteration of embedding lookups, bottom MLP, feature interaction, (transformer,) top MLP and
//! their backward passes on the shared scheduler, with MAD-Max's bugs fixed:
//!
//! - the embedding level walk uses each level's own strategy and group (Q7), and data-parallel
//!   tables all-reduce their *table* gradients, not the looked-up bytes (Q8);
//! - every collective uses its own level's links (Q9) and waits for its own layer (Q12, Q14);
//! - gradient sizes are the weights each GPU holds, whatever the level order (Q13);
//! - mixture-of-experts top MLPs compute the active experts and need no all-to-all when every
//!   GPU holds every expert (Q19);
//! - frozen parts compute no weight gradients, and nothing below them runs backward unless it
//!   trains (Q22); memory counts training state and is checked (Q23);
//! - every MLP layer and DLRM_Transformer's transformer layers are GEMMs costed by their shapes
//!   (`super::gemm`), not FLOPs at one rate.
//!
//! Embedding tables can be split table-wise (MAD-Max's mp), row-wise or column-wise over the mp
//! levels (TorchRec's sharding types), or replicated by ddp levels. Sources: Naumov et al. 2019
//! (DLRM), Mudigere et al. 2022 (ZionEX, TorchRec sharding), Rajbhandari et al. 2020 (ZeRO).
//!
//! One job: the default model of the recommendation families.

use super::calibration::{
    ADAM_BYTES_PER_PARAM, EMB_BACKWARD_PASSES, EMB_STATE_BYTES_PER_ROW, KERNEL_OVERHEAD_S, MLP_ELEMENTWISE_PASSES,
    OPTIMIZER_BYTES_PER_PARAM, WORKSPACE_BYTES,
};
use super::collective::{time_s, Collective, Group, Links, Placement};
use super::gemm::{Gemm, GemmGpu};
use super::iteration::{self, name, Timeline};
use super::layout::Layout;
use super::shape::Dims;
use crate::engine::ops::{Block, OpKind, OpName, Phase};
use crate::engine::reference::explain::{Explanation, Term, Unit};
use crate::engine::report::{LayerWork, MemPart, Memory, ModelStats, Parts, Report, Work};
use crate::engine::scenario::{
    Arch, BotMlpPlacement, Dlrm, EmbSharding, Freeze, Scenario, Setup, Spec, Strategy, TaskKind,
};

/// The embedding groups of a spec: the GPUs a table is split over (mp levels) and the replicas
/// of each shard (ddp levels).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EmbLayout {
    pub shard: Group,
    pub replicas: Group,
}

impl EmbLayout {
    fn of(spec: &Spec, at: Placement) -> EmbLayout {
        let mut shard = Group::ONE;
        let mut replicas = Group::ONE;
        let mut stride = 1u64;
        for l in spec.levels() {
            let g = at.group(l.degree, stride);
            let target = if l.strategy == Strategy::Mp { &mut shard } else { &mut replicas };
            *target = target.with(g);
            stride = stride.saturating_mul(l.degree);
        }
        EmbLayout { shard, replicas }
    }
}

/// Per-scenario quantities of the DLRM default model.
#[derive(Clone, Debug)]
pub struct DlrmCx<'a> {
    pub s: &'a Scenario,
    pub m: &'a Dlrm,
    /// (experts, active) of a MoE top MLP.
    pub moe: Option<(f64, f64)>,
    /// The transformer of DLRM_Transformer, and its groups.
    pub tr: Option<(Dims, Layout)>,
    pub mlp: Layout,
    pub emb: EmbLayout,
    pub links: Links,
    pub setup: &'a Setup,
    pub freeze: Freeze,
    pub trains: bool,
    pub flops_per_s: f64,
    pub peak_flops_per_s: f64,
    pub hbm_bytes_per_s: f64,
    /// HBM bandwidth a GEMM's own reads and writes reach, bytes/s (`gemm_bw_util`).
    pub gemm_hbm_bytes_per_s: f64,
    /// Bytes per dense weight and activation element.
    pub e: f64,
    /// Bytes per embedding element.
    pub eb: f64,
    /// Samples per MLP data-parallel rank.
    pub local_batch: f64,
    pub global_batch: u64,
}

impl<'a> DlrmCx<'a> {
    pub fn new(s: &'a Scenario) -> Option<DlrmCx<'a>> {
        let (m, moe, tr_dims) = match &s.model.arch {
            Arch::Dlrm(m) => (m, None, None),
            Arch::DlrmMoe(m, x) => (m, Some((x.experts as f64, x.active_experts as f64)), None),
            Arch::DlrmTransformer(m, t) => {
                let d = Dims {
                    layers: t.layers,
                    hidden: t.attention_dim as f64,
                    heads: t.heads as f64,
                    kv_heads: s.model.shape.kv_heads.unwrap_or(t.heads) as f64,
                    head_size: s.model.shape.head_dim.map(|d| d as f64),
                    ffn: t.fc_dim as f64,
                    ffn_kind: s.model.shape.ffn,
                    vocab: 0.0,
                    patch_inputs: 0.0,
                    seq: t.seq_len as f64,
                    experts: 1.0,
                    active: 1.0,
                    capacity_factor: 1.0,
                    causal_skip: false,
                    attention: s.model.shape.attention,
                    tied_embeddings: false,
                    dropout: s.model.shape.dropout,
                    biases: s.model.shape.biases,
                    positions: s.model.shape.positions,
                    elem_bytes: s.model.bytes_per_dense_param.f64(),
                    encoder_layers: 0,
                    cross_seq: 0.0,
                    norm_params: 2.0,
                    elementwise: s.model.shape.elementwise,
                    moe_dispatch: s.model.shape.moe_dispatch,
                };
                (m, None, Some(d))
            }
            _ => return None,
        };
        let plan = &s.task.plan;
        let sys = &s.system;
        let at = Placement::of(sys);
        let mlp = Layout::of(plan.mlp.as_ref()?, at);
        let tr = match (tr_dims, &plan.transformer) {
            (Some(d), Some(spec)) => Some((d, Layout::of(spec, at))),
            _ => None,
        };
        let links = Links::of(sys);
        let e = s.model.bytes_per_dense_param.f64();
        let peak = crate::engine::report::peak_flops_per_s(s);
        let local = plan.local_mlp_batch.unwrap_or(1);
        let freeze = match &s.task.kind {
            TaskKind::Finetune(f) => f.clone(),
            _ => Freeze::default(),
        };
        Some(DlrmCx {
            s,
            m,
            moe,
            tr,
            mlp,
            emb: EmbLayout::of(&plan.emb, at),
            links,
            setup: &s.task.setup,
            freeze,
            trains: s.task.kind.trains(),
            flops_per_s: peak * sys.flops_util,
            peak_flops_per_s: peak,
            hbm_bytes_per_s: sys.mem_bw_bytes_per_s * sys.mem_bw_util,
            gemm_hbm_bytes_per_s: sys.mem_bw_bytes_per_s * sys.gemm_bw_fraction(),
            e,
            eb: s.model.bytes_per_emb_param.f64(),
            local_batch: local as f64,
            global_batch: local.saturating_mul(mlp.dp.size),
        })
    }

    fn coll(&self, c: Collective, bytes: f64, g: Group) -> f64 {
        time_s(c, bytes, g, &self.links, self.setup.collective)
    }

    fn tp(&self) -> f64 {
        self.mlp.tp.size as f64
    }

    /// Whether one GPU of each table group runs the bottom MLP for all the group's samples
    /// ([`BotMlpPlacement::OneGpu`], with the tables split over more than one GPU). It then runs
    /// unsplit and alone: no tensor parallelism, no sharding, no gradient to synchronise.
    pub fn bot_on_one_gpu(&self) -> bool {
        self.setup.bot_mlp == BotMlpPlacement::OneGpu && self.emb.shard.size > 1
    }

    /// Whether the bottom MLP's GPU holds no tables: NVIDIA's placement leaves it out of a
    /// table-wise split over more than 4 GPUs (`get_device_mapping`; README, "Embedding table
    /// placement and load balancing"), so the tables' GPUs and it work side by side.
    pub fn bot_gpu_apart(&self) -> bool {
        self.bot_on_one_gpu() && self.emb.shard.size > 4 && self.setup.emb_sharding == EmbSharding::Table
    }

    /// Samples an MLP layer runs on its GPU per iteration: the data-parallel rank's, or for a
    /// bottom MLP on one GPU every sample of its table group.
    pub fn mlp_batch(&self, top: bool) -> f64 {
        if !top && self.bot_on_one_gpu() {
            self.emb_samples()
        } else {
            self.local_batch
        }
    }

    /// The tensor-parallel group of an MLP: the plan's, or none for a bottom MLP on one GPU.
    fn mlp_tp_group(&self, top: bool) -> Group {
        if !top && self.bot_on_one_gpu() {
            Group::ONE
        } else {
            self.mlp.tp
        }
    }

    /// The fully sharded (FSDP) and replicating (ddp) groups of an MLP's weights: the plan's,
    /// or none for a bottom MLP on one GPU (one copy, whole).
    fn mlp_dp_groups(&self, top: bool) -> (Group, Group) {
        if !top && self.bot_on_one_gpu() {
            (Group::ONE, Group::ONE)
        } else {
            (self.mlp.fsdp, self.mlp.ddp)
        }
    }

    /// Layers of the bottom (`top` false) or top MLP.
    fn mlp_layers(&self, top: bool) -> u64 {
        if top {
            self.m.top_mlp_layers
        } else {
            self.m.bot_mlp_layers
        }
    }

    /// `f` summed over the layers of one MLP. Square layers (no [`Dlrm::widths`]) are all
    /// alike: layers x `f(0)`, as before the widths existed.
    fn mlp_sum(&self, top: bool, f: impl Fn(u64) -> f64) -> f64 {
        let n = self.mlp_layers(top);
        match self.m.widths {
            None => n as f64 * f(0),
            Some(_) => (0..n).map(f).sum(),
        }
    }

    /// Layer `l`'s (input, output) widths ([`Dlrm::mlp_layer`]).
    fn widths(&self, top: bool, l: u64) -> (f64, f64) {
        let (i, o) = self.m.mlp_layer(top, l);
        (i as f64, o as f64)
    }

    /// Forward FLOPs per sample of MLP layer `l`: `2 i o` for `i` inputs and `o` outputs (`2 d^2`
    /// for square layers), times the active experts in a MoE top MLP (plus its router).
    pub fn mlp_layer_flops(&self, top: bool, l: u64) -> f64 {
        let (i, o) = self.widths(top, l);
        match (top, self.moe) {
            (true, Some((x, k))) => 2.0 * i * o * k + 2.0 * i * x,
            _ => 2.0 * i * o,
        }
    }

    /// Weights of MLP layer `l` (all experts of a MoE top layer).
    pub fn mlp_layer_params(&self, top: bool, l: u64) -> f64 {
        let (i, o) = self.widths(top, l);
        match (top, self.moe) {
            (true, Some((x, _))) => (i * o + o) * x + i * x,
            _ => i * o + o,
        }
    }

    /// MLP layer `l`'s GEMMs on this GPU, each with how many alike run: the layer's GEMM
    /// (`B` samples x `in` -> `out`; a MoE top layer: each of the `x` experts on its share
    /// `B k / x` of the samples, and the router), split by tensor parallelism as Megatron-LM
    /// pairs layers (even layers split their outputs, odd layers their inputs).
    pub fn mlp_gemms(&self, top: bool, l: u64) -> [(Gemm, f64); 2] {
        let b = self.mlp_batch(top);
        let (i, o) = self.widths(top, l);
        let tp = self.mlp_tp_group(top).size as f64;
        let split = |g: Gemm| if l.is_multiple_of(2) { Gemm { n: g.n / tp, ..g } } else { Gemm { k: g.k / tp, ..g } };
        match (top, self.moe) {
            (true, Some((x, k))) => [(split(Gemm { m: b * k / x, n: o, k: i }), x), (Gemm { m: b, n: x, k: i }, 1.0)],
            _ => [(split(Gemm { m: b, n: o, k: i }), 1.0), (Gemm::NONE, 0.0)],
        }
    }

    /// Time of `gemms` run forward (`pass` the identity), or their activation or weight
    /// gradients, on this GPU, s ([`Gemm::time_s`]: thin and small GEMMs run under the FLOP
    /// rate).
    fn gemms_s(&self, gemms: &[(Gemm, f64)], pass: impl Fn(Gemm) -> Gemm) -> f64 {
        gemms.iter().map(|(g, n)| n * pass(*g).time_s(self.e, self.gemm_gpu())).sum()
    }

    /// This GPU for a GEMM at the model's precision.
    pub fn gemm_gpu(&self) -> GemmGpu {
        GemmGpu::new(self.flops_per_s, self.gemm_hbm_bytes_per_s, self.s.system.sm_count)
    }

    /// MLP layer `l`'s forward pass on this GPU, s: its GEMMs by their shapes
    /// ([`DlrmCx::mlp_gemms`]), bias and ReLU of its outputs at HBM speed, and its kernels'
    /// launches.
    pub fn mlp_fwd_s(&self, top: bool, l: u64) -> f64 {
        let gemms = self.mlp_gemms(top, l);
        self.gemms_s(&gemms, |g| g) + self.mlp_elementwise_s(top, l, &gemms)
    }

    /// Bias and ReLU of MLP layer `l`'s outputs (one pass), s: HBM-bound, plus the time the
    /// pass's kernels lose to launching, [`KERNEL_OVERHEAD_S`] each, as a transformer block's
    /// do: its GEMMs and one element-wise kernel (the ReLU forward, its gradient in the
    /// activation-gradient pass, the bias gradient's sum over the batch in the weight-gradient
    /// pass). `gemms`: the layer's ([`DlrmCx::mlp_gemms`]).
    fn mlp_elementwise_s(&self, top: bool, l: u64, gemms: &[(Gemm, f64)]) -> f64 {
        let o = self.widths(top, l).1;
        let tp = self.mlp_tp_group(top).size as f64;
        let kernels = 1.0 + gemms.iter().map(|(_, n)| n).sum::<f64>();
        self.mlp_batch(top) * o * self.e * MLP_ELEMENTWISE_PASSES / tp / self.hbm_bytes_per_s
            + kernels * KERNEL_OVERHEAD_S
    }

    /// Which backward work an MLP layer does: (activation gradients, weight gradients).
    /// Bottom layers need activation gradients only above layer 0 (nothing trains below the
    /// input features); top layers pass them down when anything below trains.
    pub fn mlp_backward(&self, top: bool, l: u64) -> (bool, bool) {
        if !self.trains {
            return (false, false);
        }
        let below_trains = !self.freeze.bot_mlp || !self.freeze.emb || (self.tr.is_some() && !self.freeze.transformer);
        if top {
            (below_trains || l > 0 && !self.freeze.top_mlp, !self.freeze.top_mlp)
        } else {
            (l > 0 && !self.freeze.bot_mlp, !self.freeze.bot_mlp)
        }
    }

    /// MLP layer `l`'s two gradient passes on this GPU, s: (activation gradients: the
    /// [`Gemm::dgrad`] GEMMs, weight gradients: the [`Gemm::wgrad`] GEMMs), each with the
    /// ReLU's gradient pass at HBM speed, whether or not the layer needs them.
    pub fn mlp_grad_passes_s(&self, top: bool, l: u64) -> (f64, f64) {
        let gemms = self.mlp_gemms(top, l);
        let elementwise = self.mlp_elementwise_s(top, l, &gemms);
        (self.gemms_s(&gemms, |g| g.dgrad()) + elementwise, self.gemms_s(&gemms, |g| g.wgrad()) + elementwise)
    }

    /// MLP layer `l`'s backward pass on this GPU, s: the gradient passes it needs
    /// ([`DlrmCx::mlp_backward`], [`DlrmCx::mlp_grad_passes_s`]).
    pub fn mlp_bwd_s(&self, top: bool, l: u64) -> f64 {
        let (a, w) = self.mlp_backward(top, l);
        let (dgrad, wgrad) = self.mlp_grad_passes_s(top, l);
        (if a { dgrad } else { 0.0 }) + if w { wgrad } else { 0.0 }
    }

    /// A tensor-parallel all-reduce of an MLP pair's activations (the outputs of layer `l`, the
    /// pair's second), s (Megatron pairs a column-split layer with a row-split one: one
    /// all-reduce per two layers).
    pub fn mlp_tp_s(&self, top: bool, l: u64) -> f64 {
        let bytes = self.mlp_batch(top) * self.widths(top, l).1 * self.e;
        self.coll(Collective::AllReduce, bytes, self.mlp_tp_group(top))
    }

    /// The weights of MLP layer `l` on this GPU (after tensor parallelism), bytes.
    fn mlp_layer_bytes(&self, top: bool, l: u64) -> f64 {
        self.mlp_layer_params(top, l) / self.mlp_tp_group(top).size as f64 * self.e
    }

    /// FSDP all-gather of MLP layer `l`'s weights, s.
    pub fn mlp_gather_s(&self, top: bool, l: u64) -> f64 {
        self.coll(Collective::AllGather, self.mlp_layer_bytes(top, l), self.mlp_dp_groups(top).0)
    }

    /// Gradient synchronisation of MLP layer `l`, s: reduce-scatter over the fsdp ranks, then
    /// all-reduce of the (sharded) gradient over the ddp ranks. Sized by what this GPU holds
    /// whatever the level order (Q13).
    pub fn mlp_grad_s(&self, top: bool, l: u64) -> f64 {
        let bytes = self.mlp_layer_bytes(top, l);
        let (fsdp, ddp) = self.mlp_dp_groups(top);
        self.coll(Collective::ReduceScatter, bytes, fsdp)
            + self.coll(Collective::AllReduce, bytes / fsdp.size as f64, ddp)
    }

    /// Samples one embedding GPU serves: the global batch over the replicas of its shard.
    fn emb_samples(&self) -> f64 {
        self.global_batch as f64 / self.emb.replicas.size as f64
    }

    /// The share of the tables the busiest GPU of a shard group holds: table-wise, whole
    /// tables, so `ceil(T / g)` of the `T` tables (26 tables on 8 GPUs: 4 on the busiest, not
    /// 3.25; on 64 GPUs: 1, not 0.41), and the group runs at the pace of that GPU; row- and
    /// column-wise, an even `1 / g` of every table. A bottom MLP's GPU that holds no tables
    /// ([`DlrmCx::bot_gpu_apart`]) leaves them to `g - 1` GPUs.
    pub fn table_share(&self) -> f64 {
        let g = self.emb.shard.size.max(1) - u64::from(self.bot_gpu_apart());
        match self.setup.emb_sharding {
            EmbSharding::Table => self.m.num_tables.div_ceil(g) as f64 / self.m.num_tables.max(1) as f64,
            EmbSharding::Row | EmbSharding::Column => 1.0 / g as f64,
        }
    }

    /// Bytes the busiest GPU of the shard group reads from its embedding shard per iteration.
    pub fn lookup_bytes(&self) -> f64 {
        let m = self.m;
        let all = self.emb_samples() * (m.num_tables as f64 * m.pooling_size as f64 * m.emb_dim as f64) * self.eb;
        all * self.table_share()
    }

    /// The lookups (forward) of this GPU's shard, s: memory-bound.
    pub fn emb_fwd_s(&self) -> f64 {
        self.lookup_bytes() / self.hbm_bytes_per_s
    }

    /// Backward and row-wise update of the looked-up rows, s (0 when the tables are frozen).
    pub fn emb_bwd_s(&self) -> f64 {
        if !self.trains || self.freeze.emb {
            return 0.0;
        }
        EMB_BACKWARD_PASSES * self.emb_fwd_s()
    }

    /// Pooled embeddings the busiest GPU produces per iteration, bytes: table-wise and
    /// column-wise send their share to the samples' owners; row-wise produces partial pools of
    /// every table.
    pub fn pooled_bytes(&self) -> f64 {
        let m = self.m;
        let all = self.emb_samples() * (m.num_tables as f64 * m.emb_dim as f64) * self.eb;
        match self.setup.emb_sharding {
            EmbSharding::Row => all,
            EmbSharding::Table | EmbSharding::Column => all * self.table_share(),
        }
    }

    /// The bottom MLP's output for every sample of the table group, bytes: what its GPU sends
    /// with the pooled embeddings when it runs on one GPU (0 otherwise).
    pub fn bot_out_bytes(&self) -> f64 {
        if !self.bot_on_one_gpu() {
            return 0.0;
        }
        let last = self.m.bot_mlp_layers.checked_sub(1).map_or(0.0, |l| self.widths(false, l).1);
        self.emb_samples() * last * self.e
    }

    /// Bytes the busiest GPU sends in the exchange: its pooled embeddings, and the bottom MLP's
    /// output when it runs on one GPU (beside them on its own GPU, added to them on a GPU that
    /// holds tables too).
    pub fn exchange_bytes(&self) -> f64 {
        if self.bot_gpu_apart() {
            self.pooled_bytes().max(self.bot_out_bytes())
        } else {
            self.pooled_bytes() + self.bot_out_bytes()
        }
    }

    /// The exchange of pooled embeddings (forward; the backward exchange is the same size), s.
    pub fn emb_exchange_s(&self) -> (OpKind, f64) {
        let bytes = self.exchange_bytes();
        match self.setup.emb_sharding {
            EmbSharding::Row => (OpKind::ActReduceScatter, self.coll(Collective::ReduceScatter, bytes, self.emb.shard)),
            _ => (OpKind::EmbAllToAll, self.coll(Collective::AllToAll, bytes, self.emb.shard)),
        }
    }

    /// Embedding weights on the busiest GPU (its shard), elements.
    pub fn emb_params_local(&self) -> f64 {
        let m = self.m;
        (m.num_tables as f64 * m.entries_per_table as f64 * m.emb_dim as f64) * self.table_share()
    }

    /// All-reduce of replicated tables' gradients over the ddp replicas, s: the whole shard's
    /// gradient, not the looked-up bytes (Q8).
    pub fn emb_grad_sync_s(&self) -> f64 {
        if !self.trains || self.freeze.emb {
            return 0.0;
        }
        self.coll(Collective::AllReduce, self.emb_params_local() * self.eb, self.emb.replicas)
    }

    /// Feature interaction of one pass, s: pairwise dot products of the bottom MLP's output
    /// and the pooled embeddings, `(T+1) T D` FLOPs per sample.
    pub fn interaction_s(&self) -> f64 {
        let m = self.m;
        let f = (m.num_tables + 1) as f64;
        let flops = f * (f - 1.0) * m.emb_dim as f64;
        let bytes = f * m.emb_dim as f64 * self.e * 2.0;
        self.local_batch * (flops / self.flops_per_s + bytes / self.hbm_bytes_per_s)
    }

    /// One transformer layer's forward and backward pass (DLRM_Transformer), and its
    /// tensor-parallel all-reduce, s, costed as the LLM model costs a layer: each GEMM by its
    /// shape ([`Dims::block_gemms`], the backward's activation- and weight-gradient GEMMs by
    /// theirs), the attention scores at their kernel's rate, element-wise work at HBM speed. A
    /// frozen transformer runs only the activation-gradient pass, and only when something below
    /// it trains.
    pub fn tr_layer_s(&self) -> (f64, f64, f64) {
        let Some((d, lay)) = &self.tr else { return (0.0, 0.0, 0.0) };
        let tokens = self.local_batch * d.seq;
        let tp = lay.tp.size as f64;
        let gemms: Vec<(Gemm, f64)> =
            [Block::Attn, Block::Fc].into_iter().flat_map(|b| d.block_gemms(b, tokens, tp, tp, 1.0)).collect();
        let [scores, scores_a, scores_w] = d.score_gemms_s(self.local_batch, d.seq, tp, self.gemm_gpu());
        // Element-wise bytes of both blocks at HBM speed, the inside of the tensor-parallel
        // regions split by tp.
        let ew = |bytes: &dyn Fn(Block) -> (f64, f64)| {
            let per_token: f64 =
                [Block::Attn, Block::Fc].map(bytes).iter().map(|(out, inside)| out + inside / tp).sum();
            tokens * per_token / self.hbm_bytes_per_s
        };
        let pass = |f: fn(&Gemm) -> Gemm, scores: f64, ew: f64| self.gemms_s(&gemms, |g| f(&g)) + scores + ew;
        let fwd = pass(|g| *g, scores, ew(&|b| d.forward_bytes(b)));
        let dgrad = pass(Gemm::dgrad, scores_a, ew(&|b| d.backward_bytes(b).activation));
        let wgrad = pass(Gemm::wgrad, scores_w, ew(&|b| d.backward_bytes(b).weight));
        let bwd = if !self.trains {
            0.0
        } else if self.freeze.transformer {
            if !self.freeze.bot_mlp || !self.freeze.emb {
                dgrad
            } else {
                0.0
            }
        } else {
            dgrad + wgrad
        };
        let ar = self.coll(Collective::AllReduce, tokens * d.hidden * self.e, lay.tp);
        (fwd, bwd, ar)
    }

    /// Gradient synchronisation of one transformer layer, s.
    pub fn tr_grad_s(&self) -> f64 {
        let Some((d, lay)) = &self.tr else { return 0.0 };
        if !self.trains || self.freeze.transformer {
            return 0.0;
        }
        let (attn, ffn) = d.layer_params();
        let bytes = (attn + ffn) / lay.tp.size as f64 * self.e;
        self.coll(Collective::ReduceScatter, bytes, lay.fsdp)
            + self.coll(Collective::AllReduce, bytes / lay.fsdp.size as f64, lay.ddp)
    }

    /// Gradient synchronisation of every trainable dense layer after the backward pass, s
    /// (when it is neither overlapped nor done per layer by FSDP).
    pub fn final_grad_s(&self) -> f64 {
        let m = self.m;
        let tr_layers = self.tr.as_ref().map_or(0, |(d, _)| d.layers);
        (0..m.top_mlp_layers).filter(|l| self.mlp_backward(true, *l).1).map(|l| self.mlp_grad_s(true, l)).sum::<f64>()
            + (0..m.bot_mlp_layers)
                .filter(|l| self.mlp_backward(false, *l).1)
                .map(|l| self.mlp_grad_s(false, l))
                .sum::<f64>()
            + tr_layers as f64 * self.tr_grad_s()
    }

    /// Dense weights on this GPU: (MLPs, transformer), elements.
    fn dense_params_local(&self) -> (f64, f64) {
        let mlp = (self.mlp_sum(false, |l| self.mlp_layer_params(false, l))
            + self.mlp_sum(true, |l| self.mlp_layer_params(true, l)))
            / self.tp();
        let tr = self.tr.as_ref().map_or(0.0, |(d, lay)| {
            let (a, f) = d.layer_params();
            d.layers as f64 * (a + f) / lay.tp.size as f64
        });
        (mlp, tr)
    }

    /// The dense optimizer step (Adam, memory-bound), s.
    pub fn optimizer_step_s(&self) -> f64 {
        if !self.trains {
            return 0.0;
        }
        let (mlp, tr) = self.dense_params_local();
        let mlp_trains = !(self.freeze.top_mlp && self.freeze.bot_mlp);
        let p = if mlp_trains { mlp / self.mlp.fsdp.size as f64 } else { 0.0 }
            + if self.freeze.transformer { 0.0 } else { tr };
        p * ADAM_BYTES_PER_PARAM / self.hbm_bytes_per_s
    }

    /// Memory per GPU by part.
    pub fn memory(&self) -> Memory {
        let (mlp, tr) = self.dense_params_local();
        let dense = mlp / self.mlp.fsdp.size as f64 + tr;
        let emb = self.emb_params_local();
        let weights = dense * self.e + emb * self.eb;
        let (grads, opt) = if self.trains {
            let emb_rows = (self.m.num_tables as f64 * self.m.entries_per_table as f64) * self.table_share();
            let emb_state = if self.freeze.emb { 0.0 } else { emb_rows * EMB_STATE_BYTES_PER_ROW };
            (dense * self.e, dense * OPTIMIZER_BYTES_PER_PARAM + emb_state)
        } else {
            (0.0, 0.0)
        };
        let m = self.m;
        let b = self.local_batch;
        let layers = (m.bot_mlp_layers + m.top_mlp_layers) as f64;
        // Each layer keeps its output and its activation's (two tensors of its width). Square
        // layers sum whole numbers, exactly as `mlp_dim x layers` did.
        // A bottom MLP on one GPU keeps its table group's samples: counted with the busiest
        // table GPU's tables, an upper bound on both GPUs.
        let widths = self.mlp_batch(false) * self.mlp_sum(false, |l| self.widths(false, l).1)
            + b * self.mlp_sum(true, |l| self.widths(true, l).1);
        let mut activations = widths * self.e * 2.0 + b * ((m.num_tables + 1) as f64 * m.emb_dim as f64) * self.e * 2.0;
        if let Some((dm, lay)) = &self.tr {
            let (o, i, sc) = dm.stored_bytes();
            activations += b * dm.seq * (o + (i + sc) / lay.tp.size as f64) * dm.layers as f64;
        }
        if !self.trains {
            activations /= layers.max(1.0);
        }
        let buffers = WORKSPACE_BYTES + 2.0 * self.pooled_bytes();
        let parts = vec![
            (MemPart::Weights, weights),
            (MemPart::Gradients, grads),
            (MemPart::OptimizerStates, opt),
            (MemPart::Activations, activations),
            (MemPart::Buffers, buffers),
        ];
        Memory::of_parts(parts, self.s.system.mem_cap_bytes)
    }

    /// Forward FLOPs per sample of the whole model.
    pub fn flops_per_sample(&self) -> f64 {
        let m = self.m;
        let f = (m.num_tables + 1) as f64;
        let tr = self.tr.as_ref().map_or(0.0, |(d, _)| d.layers as f64 * d.layer_flops().total() * d.seq);
        self.mlp_sum(false, |l| self.mlp_layer_flops(false, l))
            + self.mlp_sum(true, |l| self.mlp_layer_flops(true, l))
            + f * (f - 1.0) * m.emb_dim as f64
            + tr
    }

    /// The iteration's timeline, and the launch waits in its collectives' durations.
    fn timeline(&self) -> (Vec<crate::engine::ops::Op>, crate::engine::schedule::Schedule, Vec<(u32, f64)>) {
        let m = self.m;
        let mut tl = Timeline::with_collective_cycle(
            64 + 8 * (m.bot_mlp_layers + m.top_mlp_layers) as usize,
            self.setup.collective_cycle_s,
        );
        let tp_pairs = self.mlp.tp.size > 1;
        let fsdp = self.mlp.fsdp.size > 1;
        let overlap = self.setup.overlap_grad_reduce;
        let f = Phase::Forward;
        let b = Phase::Backward;
        // Forward: lookups and their exchange overlap the bottom MLP. A bottom MLP on one GPU
        // sends its output in the exchange, which waits for it; a GPU of its own (the one this
        // timeline shows) waits for the tables' GPUs when their lookups take longer.
        let one = self.bot_on_one_gpu();
        let apart = self.bot_gpu_apart();
        let own_lookup_s = if apart { 0.0 } else { self.emb_fwd_s() };
        let lookup = tl.push(name(Block::Emb, 0, f, OpKind::Compute, 0), own_lookup_s, &[]);
        let (xkind, xs) = self.emb_exchange_s();
        let mut exchange = if one { None } else { tl.push(name(Block::Emb, 0, f, xkind, 0), xs, &[lookup]) };
        let mut compute = lookup;
        let mut gate: Option<u32> = None;
        let mlp_fwd = |tl: &mut Timeline,
                       block: Block,
                       layers: u64,
                       top: bool,
                       compute: &mut Option<u32>,
                       gate: &mut Option<u32>| {
            // FSDP prefetches one layer ahead: a layer's gather may start when the previous
            // layer starts.
            let mut lag = *compute;
            for l in 0..layers {
                let entry = *compute;
                let ag = if fsdp {
                    tl.push(name(block, l, f, OpKind::WeightAllGather, 0), self.mlp_gather_s(top, l), &[lag])
                } else {
                    None
                };
                lag = entry;
                let c = tl.push(name(block, l, f, OpKind::Compute, 0), self.mlp_fwd_s(top, l), &[*compute, *gate, ag]);
                *compute = c.or(*compute);
                *gate = None;
                if tp_pairs && (l % 2 == 1 || l + 1 == layers) {
                    *gate = tl.push(name(block, l, f, OpKind::ActAllReduce, 0), self.mlp_tp_s(top, l), &[c]);
                }
            }
        };
        mlp_fwd(&mut tl, Block::MlpBot, m.bot_mlp_layers, false, &mut compute, &mut gate);
        if one {
            let bottom_s: f64 = (0..m.bot_mlp_layers).map(|l| self.mlp_fwd_s(false, l)).sum();
            let wait_s = if apart { (self.emb_fwd_s() - bottom_s).max(0.0) } else { 0.0 };
            let wait = tl.push(name(Block::Emb, 0, f, OpKind::Idle, 0), wait_s, &[compute, gate]);
            compute = wait.or(compute);
            exchange = tl.push(name(Block::Emb, 0, f, xkind, 0), xs, &[compute, gate]);
        }
        let inter = tl.push(
            name(Block::Interaction, 0, f, OpKind::Compute, 0),
            self.interaction_s(),
            &[compute, gate, exchange],
        );
        compute = inter.or(compute);
        gate = None;
        let (tr_f, tr_b, tr_ar) = self.tr_layer_s();
        let tr_layers = self.tr.as_ref().map_or(0, |(d, _)| d.layers);
        for l in 0..tr_layers {
            let c = tl.push(name(Block::Attn, l, f, OpKind::Compute, 0), tr_f, &[compute, gate]);
            compute = c.or(compute);
            gate = tl.push(name(Block::Attn, l, f, OpKind::ActAllReduce, 0), 2.0 * tr_ar, &[c]);
        }
        mlp_fwd(&mut tl, Block::MlpTop, m.top_mlp_layers, true, &mut compute, &mut gate);
        let mut grads: Vec<Option<u32>> = Vec::new();
        if self.trains {
            // Backward: top MLP, transformer, interaction, then the embedding exchange and the
            // bottom MLP side by side.
            let mlp_bwd = |tl: &mut Timeline,
                           block: Block,
                           layers: u64,
                           top: bool,
                           compute: &mut Option<u32>,
                           gate: &mut Option<u32>,
                           grads: &mut Vec<Option<u32>>| {
                let mut lag = *compute;
                for l in (0..layers).rev() {
                    let t = self.mlp_bwd_s(top, l);
                    if t <= 0.0 {
                        continue;
                    }
                    let entry = *compute;
                    let ag = if fsdp {
                        tl.push(name(block, l, b, OpKind::WeightAllGather, 0), self.mlp_gather_s(top, l), &[lag])
                    } else {
                        None
                    };
                    lag = entry;
                    if tp_pairs && (l % 2 == 1 || l + 1 == layers) {
                        *gate = tl
                            .push(name(block, l, b, OpKind::ActAllReduce, 0), self.mlp_tp_s(top, l), &[*compute, *gate])
                            .or(*gate);
                    }
                    let c = tl.push(name(block, l, b, OpKind::Compute, 0), t, &[*compute, *gate, ag]);
                    *compute = c.or(*compute);
                    *gate = None;
                    if self.mlp_backward(top, l).1 && (overlap || fsdp) {
                        let kind = if fsdp { OpKind::GradReduceScatter } else { OpKind::GradAllReduce };
                        grads.push(tl.push(name(block, l, b, kind, 0), self.mlp_grad_s(top, l), &[c]));
                    }
                }
            };
            mlp_bwd(&mut tl, Block::MlpTop, m.top_mlp_layers, true, &mut compute, &mut gate, &mut grads);
            for l in (0..tr_layers).rev() {
                if tr_b <= 0.0 {
                    break;
                }
                let c = tl.push(name(Block::Attn, l, b, OpKind::Compute, 0), tr_b, &[compute, gate]);
                compute = c.or(compute);
                gate = tl.push(name(Block::Attn, l, b, OpKind::ActAllReduce, 0), 2.0 * tr_ar, &[c]);
                if overlap {
                    grads.push(tl.push(name(Block::Attn, l, b, OpKind::GradAllReduce, 0), self.tr_grad_s(), &[c]));
                }
            }
            let emb_trains = !self.freeze.emb;
            let below = emb_trains || !self.freeze.bot_mlp;
            let ib = if below { self.interaction_s() * 2.0 } else { 0.0 };
            let inter_b = tl.push(name(Block::Interaction, 0, b, OpKind::Compute, 0), ib, &[compute, gate]);
            compute = inter_b.or(compute);
            gate = None;
            // The gradients go back the way the features came: a bottom MLP on one GPU gets its
            // output's gradient in the exchange and starts its backward pass when it arrives.
            let xb = if emb_trains || one && below {
                tl.push(name(Block::Emb, 0, b, xkind, 0), xs, &[inter_b])
            } else {
                None
            };
            if one {
                compute = xb.or(compute);
            }
            mlp_bwd(&mut tl, Block::MlpBot, m.bot_mlp_layers, false, &mut compute, &mut gate, &mut grads);
            let own_emb_bwd_s = if apart { 0.0 } else { self.emb_bwd_s() };
            let eb = tl.push(name(Block::Emb, 0, b, OpKind::Compute, 0), own_emb_bwd_s, &[compute, xb]);
            compute = eb.or(compute);
            if apart {
                // Both sides start when the exchange brings the gradients back.
                let bottom_s: f64 = (0..m.bot_mlp_layers).map(|l| self.mlp_bwd_s(false, l)).sum();
                let wait_s = (self.emb_bwd_s() - bottom_s).max(0.0);
                compute = tl.push(name(Block::Emb, 0, b, OpKind::Idle, 0), wait_s, &[compute]).or(compute);
            }
            let eb = if apart { compute } else { eb };
            // What was not reduced during the backward pass.
            let mut after = vec![compute, gate];
            after.extend(grads.iter().copied());
            if !overlap && !fsdp {
                after.push(tl.push(
                    name(Block::Optimizer, 0, b, OpKind::GradAllReduce, 0),
                    self.final_grad_s(),
                    &after,
                ));
            }
            after.push(tl.push(name(Block::Emb, 0, b, OpKind::EmbAllReduce, 0), self.emb_grad_sync_s(), &[eb]));
            tl.push(name(Block::Optimizer, 0, b, OpKind::Compute, 0), self.optimizer_step_s(), &after);
        }
        tl.finish_with_waits()
    }
}

/// Evaluates a DLRM-family scenario with the default model.
pub fn evaluate(cx: &DlrmCx) -> Report {
    let (ops, schedule, launch_waits) = cx.timeline();
    let memory = cx.memory();
    let mut limits = Vec::new();
    limits.extend(memory.does_not_fit());
    let m = cx.m;
    let per_sample = cx.flops_per_sample();
    let lookup_per_sample = (m.num_tables as f64 * m.pooling_size as f64 * m.emb_dim as f64) * cx.eb;
    let g = cx.global_batch as f64;
    let work = Work {
        layers: vec![LayerWork {
            label: if m.widths.is_some() { "MLP layer (mean)" } else { "MLP layer" },
            local_flops: mlp_layer_mean_flops(cx) * cx.local_batch,
            global_flops: mlp_layer_mean_flops(cx) * g,
        }],
        local_total_flops: per_sample * cx.local_batch,
        global_total_flops: per_sample * g,
        lookup_bytes_per_local_batch: lookup_per_sample * cx.local_batch,
        lookup_bytes_per_global_batch: lookup_per_sample * g,
        lookup_bytes_per_device: cx.lookup_bytes(),
    };
    let emb_params = m.num_tables as f64 * m.entries_per_table as f64 * m.emb_dim as f64;
    let (mlp_local, tr_local) = cx.dense_params_local();
    let dense = mlp_local * cx.tp() + tr_local * cx.tr.as_ref().map_or(1.0, |(_, l)| l.tp.size as f64);
    let model = ModelStats {
        params: dense + emb_params,
        dense_params: dense,
        emb_params,
        flops_per_sample: per_sample,
        lookup_bytes_per_sample: lookup_per_sample,
    };
    let system = iteration::system_stats(cx.s, cx.flops_per_s, cx.hbm_bytes_per_s, &cx.links);
    let parts = Parts { ops, schedule, global_batch: cx.global_batch, memory, work, model, system };
    iteration::plain_report(
        parts,
        launch_waits,
        limits,
        per_sample,
        cx.trains,
        cx.peak_flops_per_s,
        "MFU = model FLOPs per iteration (3 x forward when training) / (iteration time x GPUs x peak FLOP/s per GPU)",
    )
}

/// Forward FLOPs per sample of an MLP layer: every layer's with square layers, the mean over
/// both MLPs' layers with [`Dlrm::widths`].
fn mlp_layer_mean_flops(cx: &DlrmCx) -> f64 {
    match cx.m.widths {
        None => cx.mlp_layer_flops(false, 0),
        Some(_) => {
            let layers = (cx.m.bot_mlp_layers + cx.m.top_mlp_layers).max(1) as f64;
            (cx.mlp_sum(false, |l| cx.mlp_layer_flops(false, l)) + cx.mlp_sum(true, |l| cx.mlp_layer_flops(true, l)))
                / layers
        }
    }
}

/// Explains an op of a DLRM-family default-model timeline.
pub fn explain(cx: &DlrmCx, op: &OpName) -> Option<Explanation> {
    let term =
        |symbol: &'static str, meaning: &'static str, value: f64, unit: Unit| Term { symbol, meaning, value, unit };
    let fwd = op.phase == Phase::Forward;
    let pass = if fwd { "forward" } else { "backward" };
    let l = op.layer.max(0) as u64;
    let top = op.block == Block::MlpTop;
    let b = term("B", "samples per MLP data-parallel rank", cx.local_batch, Unit::Count);
    let b_mlp = term(
        "B",
        "samples this MLP layer runs on this GPU (a bottom MLP on one GPU: its table group's)",
        cx.mlp_batch(top),
        Unit::Count,
    );
    let tp_mlp = term("tp", "tensor-parallel degree of this MLP", cx.mlp_tp_group(top).size as f64, Unit::Count);
    let rate = term("F", "effective FLOP rate per GPU (peak x utilisation)", cx.flops_per_s, Unit::FlopsPerS);
    let hbm = term("B_mem", "effective HBM bandwidth per GPU", cx.hbm_bytes_per_s, Unit::BytesPerS);
    let (what, formula, terms, seconds, note): (String, &'static str, Vec<Term>, f64, Option<&'static str>) = match (op.kind, op.block) {
        (OpKind::Compute, Block::Emb) => (
            format!("Embedding {} of this GPU's shard", if fwd { "lookups" } else { "backward and row-wise update" }),
            if fwd { "lookup / B_mem" } else { "3 x lookup / B_mem" },
            vec![term("lookup", "bytes this GPU reads: samples served x tables x pooling x width x bytes / shards", cx.lookup_bytes(), Unit::Bytes), hbm],
            if fwd { cx.emb_fwd_s() } else { cx.emb_bwd_s() },
            Some("Embedding work is memory-bound: it moves rows, it barely computes."),
        ),
        (OpKind::Idle, Block::Emb) => {
            let bottom_s: f64 = (0..cx.m.bot_mlp_layers).map(|l| if fwd { cx.mlp_fwd_s(false, l) } else { cx.mlp_bwd_s(false, l) }).sum();
            let tables_s = if fwd { cx.emb_fwd_s() } else { cx.emb_bwd_s() };
            (
                format!("Waiting for the GPUs that hold the tables ({pass})"),
                "max(0, t_tables - t_bottom)",
                vec![
                    term("t_tables", "the busiest table GPU's lookups (forward) or backward and update", tables_s, Unit::Seconds),
                    term("t_bottom", "this GPU's bottom MLP for every sample of its table group", bottom_s, Unit::Seconds),
                    term("g", "GPUs of the table group, this one included", cx.emb.shard.size as f64, Unit::Count),
                ],
                (tables_s - bottom_s).max(0.0),
                Some("This GPU runs the bottom MLP and holds no tables (NVIDIA's placement on more than 4 GPUs): the exchange starts, and the iteration ends, when the slower side is done."),
            )
        }
        (OpKind::EmbAllToAll | OpKind::ActReduceScatter, Block::Emb) => (
            format!("Exchange of pooled embeddings ({pass}), {} sharding", cx.setup.emb_sharding.config_name()),
            "pooled / bandwidth over the shard group (all-to-all; reduce-scatter for row-wise shards)",
            vec![term("pooled", "bytes the busiest GPU sends: its pooled embeddings (and a bottom MLP on one GPU, its output)", cx.exchange_bytes(), Unit::Bytes), term("g", "GPUs a table set is split over (mp levels)", cx.emb.shard.size as f64, Unit::Count)],
            cx.emb_exchange_s().1,
            None,
        ),
        (OpKind::EmbAllReduce, Block::Emb) => (
            "All-reduce of replicated tables' gradients across the ddp replicas".into(),
            "all-reduce of the whole shard (rows x width x bytes) over the replicas",
            vec![term("rows", "embedding elements of this GPU's shard", cx.emb_params_local(), Unit::Params), term("r", "replicas (ddp levels)", cx.emb.replicas.size as f64, Unit::Count)],
            cx.emb_grad_sync_s(),
            Some("MAD-Max sizes this by the looked-up bytes (quirk Q8); data-parallel tables reduce their whole gradient."),
        ),
        (OpKind::Compute, Block::MlpBot | Block::MlpTop) => {
            let (a, w) = cx.mlp_backward(top, l);
            let (i, o) = cx.widths(top, l);
            let mut terms = vec![term("in", "the layer's input width", i, Unit::Count), term("out", "the layer's output width", o, Unit::Count), term("FLOPs", "forward FLOPs of the layer per sample (2 x in x out; MoE: active experts)", cx.mlp_layer_flops(top, l), Unit::Flops), b_mlp, tp_mlp, rate, hbm, super::explain::gemm_bandwidth_term(cx.gemm_hbm_bytes_per_s), term("t_launch", "time each kernel loses to its launch (no CUDA graphs), as a transformer block's kernels do", KERNEL_OVERHEAD_S, Unit::Seconds)];
            if !fwd {
                terms.push(term("g", "gradient passes: activations + weights, where they are needed", (a as u8 + w as u8) as f64, Unit::Count));
            }
            (
                format!("{} MLP layer {l}, {pass} pass", if top { "Top" } else { "Bottom" }),
                if fwd {
                    "the GEMM (B x in -> out / tp) by its shape: B x FLOPs / tp / F, more for a short inner dimension, at least its matrices read and written at B_gemm; + bias and ReLU at B_mem; + t_launch per kernel launched (the GEMM and the ReLU)"
                } else {
                    "the activation-gradient GEMM (inner dimension out) and the weight-gradient GEMM (inner dimension B), each by its shape, + the ReLU's gradient at B_mem, + t_launch per kernel launched (each pass's GEMM and its element-wise kernel: the ReLU's gradient, the bias gradient's sum), for the g passes needed"
                },
                terms,
                if fwd { cx.mlp_fwd_s(top, l) } else { cx.mlp_bwd_s(top, l) },
                if fwd { None } else { Some("Frozen layers compute no weight gradients; layers with nothing trainable below pass no gradient down (MAD-Max charges both, quirk Q22).") },
            )
        }
        (OpKind::ActAllReduce, Block::MlpBot | Block::MlpTop) => (
            format!("Tensor-parallel all-reduce after MLP layers {}-{l} ({pass})", l.saturating_sub(1)),
            "2 (tp-1)/tp x B x out x e / bandwidth + latency, once per column/row-split pair",
            vec![b_mlp, term("out", "the pair's output width", cx.widths(top, l).1, Unit::Count), tp_mlp],
            cx.mlp_tp_s(top, l),
            None,
        ),
        (OpKind::WeightAllGather, Block::MlpBot | Block::MlpTop) => (
            format!("FSDP all-gather of MLP layer {l}'s weights ({pass})"),
            "(d-1)/d x layer bytes / bandwidth + latency",
            vec![term("fsdp", "fully sharded degree", cx.mlp.fsdp.size as f64, Unit::Count)],
            cx.mlp_gather_s(top, l),
            None,
        ),
        (OpKind::GradAllReduce | OpKind::GradReduceScatter, Block::MlpBot | Block::MlpTop) => (
            format!("Gradient synchronisation of MLP layer {l}"),
            "reduce-scatter over fsdp ranks + all-reduce of the shard over ddp ranks",
            vec![term("fsdp", "fully sharded degree", cx.mlp.fsdp.size as f64, Unit::Count), term("ddp", "replicating degree", cx.mlp.ddp.size as f64, Unit::Count)],
            cx.mlp_grad_s(top, l),
            Some("Sized by the weights this GPU holds, whatever the level order (MAD-Max's depends on it, quirk Q13)."),
        ),
        (OpKind::Compute, Block::Interaction) => (
            format!("Feature interaction ({pass})"),
            if fwd { "B x ((T+1) T D / F + (T+1) D e x 2 / B_mem)" } else { "2 x forward" },
            vec![b, term("T", "embedding tables", cx.m.num_tables as f64, Unit::Count), term("D", "embedding width", cx.m.emb_dim as f64, Unit::Count), rate, hbm],
            if fwd { cx.interaction_s() } else { 2.0 * cx.interaction_s() },
            Some("MAD-Max leaves the interaction out."),
        ),
        (OpKind::Compute | OpKind::ActAllReduce, Block::Attn) => {
            let (f, bw, ar) = cx.tr_layer_s();
            (
                format!("Transformer layer {l} over the embeddings ({pass})"),
                "GEMMs by their shapes (QKV, output projection, feed-forward; backward: activation- and weight-gradient GEMMs) + attention scores + element-wise at HBM speed; two tensor-parallel all-reduces",
                vec![b, rate, hbm],
                match (op.kind, fwd) {
                    (OpKind::ActAllReduce, _) => 2.0 * ar,
                    (_, true) => f,
                    _ => bw,
                },
                None,
            )
        }
        (OpKind::GradAllReduce, Block::Attn) => ("Gradient synchronisation of a transformer layer".into(), "reduce-scatter + all-reduce of the layer's gradients", vec![], cx.tr_grad_s(), None),
        (OpKind::GradAllReduce, Block::Optimizer) => (
            "Gradient synchronisation of every dense layer after the backward pass".into(),
            "sum over trainable layers of each layer's synchronisation",
            vec![term("ddp", "replicating degree of the MLPs", cx.mlp.ddp.size as f64, Unit::Count)],
            cx.final_grad_s(),
            Some("Turn on overlap_grad_reduce to run it in buckets during the backward pass."),
        ),
        (OpKind::Compute, Block::Optimizer) => (
            "Dense optimizer step (Adam), memory-bound".into(),
            "dense params on this GPU x 30 B / B_mem",
            vec![hbm],
            cx.optimizer_step_s(),
            Some("Embedding rows are updated in their backward pass (fused row-wise Adagrad)."),
        ),
        _ => return None,
    };
    Some(Explanation { what, formula: formula.into(), terms, seconds, note })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::extended::calibration::GEMM_REFERENCE_DIM;
    use crate::engine::{validate, RawFile};

    /// DLRM-A pre-training on 64 H100s in the default model, with `keys` added to its model.
    fn scenario(keys: serde_json::Value) -> Scenario {
        let mut v: serde_json::Value = serde_json::from_str(include_str!(
            "../../../tests/data/reference/cases/dlrm__dlrm_a__cloud_A_h100.80_64__dlrm_pre_fsdp_ddp_mp_64x8.json"
        ))
        .expect("case");
        v["inputs"]["task"]["mode"] = serde_json::json!("default");
        if let (Some(m), Some(keys)) = (v["inputs"]["model"].as_object_mut(), keys.as_object()) {
            m.extend(keys.clone());
        }
        let raw = serde_json::from_value::<RawFile>(v).expect("case").into_scenario().expect("case");
        validate(&raw).expect("valid")
    }

    /// NVIDIA's DLRM for Criteo: 13 dense features, 26 tables of 128-wide rows.
    fn criteo() -> serde_json::Value {
        serde_json::json!({
            "num_bot_mlp_layers": 3, "num_top_mlp_layers": 5, "num_tables": 26, "emb_dim": 128, "pooling_size": 1,
            "bot_mlp_widths": "13-512-256-128", "top_mlp_widths": [1024, 1024, 512, 256, 1],
        })
    }

    /// A DLRM_Transformer pre-training case (fp32, 8 GPUs) with its transformer's width and
    /// feed-forward width set.
    fn transformer(hidden: u64, ffn: u64) -> Scenario {
        let mut v: serde_json::Value = serde_json::from_str(include_str!(
            "../../../tests/data/reference/cases/dlrm_transformer__dlrm_a_transformer__zionex_8__dt_pre_ddp_8x8.json"
        ))
        .expect("case");
        v["inputs"]["task"]["mode"] = serde_json::json!("default");
        v["inputs"]["model"]["attention_dim"] = serde_json::json!(hidden);
        v["inputs"]["model"]["transformer_fc_dim"] = serde_json::json!(ffn);
        let raw = serde_json::from_value::<RawFile>(v).expect("case").into_scenario().expect("case");
        validate(&raw).expect("valid")
    }

    #[test]
    fn transformer_layers_cost_their_gemms_by_shape() {
        // Against the layer at the flat FLOP rate (its GEMM and score FLOPs at the GEMM rate,
        // the same element-wise work): a narrow layer's thin GEMMs run under the rate, a wide
        // layer's near it.
        let ratio = |hidden: u64| {
            let s = transformer(hidden, 4 * hidden);
            let cx = DlrmCx::new(&s).expect("a DLRM");
            let (d, _) = cx.tr.as_ref().expect("a transformer");
            let tokens = cx.local_batch * d.seq;
            let ew = tokens * (2.0 * d.hidden_bytes() + d.score_bytes() + d.ffn_act_bytes()) / cx.hbm_bytes_per_s;
            let flat = tokens * d.layer_timed_flops().total() / cx.flops_per_s + ew;
            let (fwd, bwd, _) = cx.tr_layer_s();
            // Pre-training runs both gradient passes, each about as long as the forward pass.
            assert!(bwd > 1.5 * fwd && bwd < 3.0 * fwd, "{hidden}: {fwd} s forward, {bwd} s backward");
            fwd / flat
        };
        let (narrow, wide) = (ratio(128), ratio(8192));
        assert!(narrow > 1.1 && (wide - 1.0).abs() < 0.05 && narrow > wide, "narrow {narrow}, wide {wide}");
    }

    #[test]
    fn real_widths_set_each_layers_flops_weights_and_activations() {
        let s = scenario(criteo());
        let cx = DlrmCx::new(&s).expect("a DLRM");
        let layers: [(f64, f64); 8] = [
            (13.0, 512.0),
            (512.0, 256.0),
            (256.0, 128.0),
            // 27 vectors: 351 pairwise dot products beside the bottom MLP's 128 outputs.
            (479.0, 1024.0),
            (1024.0, 1024.0),
            (1024.0, 512.0),
            (512.0, 256.0),
            (256.0, 1.0),
        ];
        let flops: f64 = layers.iter().map(|(i, o)| 2.0 * i * o).sum::<f64>() + 27.0 * 26.0 * 128.0;
        assert_eq!(cx.flops_per_sample(), flops);
        let params: f64 = layers.iter().map(|(i, o)| i * o + o).sum();
        assert_eq!(cx.dense_params_local().0, params / cx.tp());
        // Each layer is its own GEMM, costed by its shape: the thin last layer (one output)
        // is bound by reading its inputs, and the 13-wide first layer by writing its outputs;
        // both run far under the FLOP rate that the 1024 x 1024 layer nearly reaches.
        let b = cx.local_batch;
        let rate = |top: bool, l: u64| {
            let (g, n) = cx.mlp_gemms(top, l)[0];
            assert_eq!((n, cx.mlp_gemms(top, l)[1].1), (1.0, 0.0), "one GEMM, no router");
            g.flops() / g.time_s(cx.e, cx.gemm_gpu())
        };
        let (thin, _) = cx.mlp_gemms(true, 4)[0];
        assert_eq!((thin.m, thin.n, thin.k), (b, 1.0, 256.0));
        let read = (b * 256.0 + 256.0 + b) * cx.e / cx.hbm_bytes_per_s;
        assert_eq!(thin.time_s(cx.e, cx.gemm_gpu()), read);
        // 1024 x 1024: the output write's share of the gemm module, e F / (2 B) (1/k - 1/R).
        let share = cx.e * cx.flops_per_s / (2.0 * cx.hbm_bytes_per_s) * (1.0 / 1024.0 - 1.0 / GEMM_REFERENCE_DIM);
        assert!(b % 128.0 == 0.0 && (0.1..0.3).contains(&share), "{b} {share}");
        assert!((cx.flops_per_s / rate(true, 1) - 1.0 - share).abs() < 1e-9);
        assert!(rate(false, 0) < 0.2 * cx.flops_per_s && rate(true, 4) < 0.01 * cx.flops_per_s);
        // Its work is under a tenth of the square layer's; both lose two kernel launches.
        assert!(cx.mlp_fwd_s(true, 4) - 2.0 * KERNEL_OVERHEAD_S < cx.mlp_fwd_s(true, 1) / 10.0);
        // Backward: the activation and weight gradients of each GEMM, by their own shapes
        // (the first layer passes no gradient to the input features).
        let (g0, _) = cx.mlp_gemms(false, 0)[0];
        let at = |g: Gemm| g.time_s(cx.e, cx.gemm_gpu());
        // Each pass: its GEMM and one element-wise kernel, each losing a launch.
        let ew = b * 512.0 * cx.e * MLP_ELEMENTWISE_PASSES / cx.hbm_bytes_per_s + 2.0 * KERNEL_OVERHEAD_S;
        assert_eq!(cx.mlp_grad_passes_s(false, 0), (at(g0.dgrad()) + ew, at(g0.wgrad()) + ew));
        assert_eq!(cx.mlp_bwd_s(false, 0), at(g0.wgrad()) + ew);
        let (g1, _) = cx.mlp_gemms(false, 1)[0];
        let ew = b * 256.0 * cx.e * MLP_ELEMENTWISE_PASSES / cx.hbm_bytes_per_s + 2.0 * KERNEL_OVERHEAD_S;
        assert_eq!(cx.mlp_bwd_s(false, 1), at(g1.dgrad()) + ew + at(g1.wgrad()) + ew);
        // Square layers of the same model (no widths) compute more: 8 layers of 3994^2.
        let square = scenario(serde_json::json!({"num_bot_mlp_layers": 3, "num_top_mlp_layers": 5}));
        let sq = DlrmCx::new(&square).expect("a DLRM");
        assert_eq!(sq.mlp_layer_flops(false, 0), 2.0 * 3994.0 * 3994.0);
        assert!(evaluate(&sq).iteration_s > evaluate(&cx).iteration_s);
        // The explain view names the layer's widths.
        let op = OpName::new(Block::MlpTop, 0, Phase::Forward, OpKind::Compute);
        let e = explain(&cx, &op).expect("explained");
        assert!(e.terms.iter().any(|t| t.symbol == "in" && t.value == 479.0), "{:?}", e.terms);
        assert!(
            e.terms.iter().any(|t| t.symbol == "t_launch" && t.value == KERNEL_OVERHEAD_S)
                && e.formula.contains("t_launch")
        );
        assert_eq!(e.seconds, cx.mlp_fwd_s(true, 0));
    }

    #[test]
    fn table_wise_sharding_runs_at_its_busiest_gpus_pace() {
        // 26 whole tables over a shard group they do not divide: the busiest GPU holds
        // ceil(26 / g) of them, reads and sends their lookups and stores their rows.
        let s = scenario(criteo());
        let table = DlrmCx::new(&s).expect("a DLRM");
        let g = table.emb.shard.size;
        assert!(g > 1 && 26 % g != 0, "{g}");
        let busiest = 26u64.div_ceil(g) as f64;
        assert_eq!(table.table_share(), busiest / 26.0);
        let mut by_column = s.clone();
        by_column.task.setup.emb_sharding = EmbSharding::Column;
        let column = DlrmCx::new(&by_column).expect("a DLRM");
        assert_eq!(column.table_share(), 1.0 / g as f64);
        let ratio = busiest * g as f64 / 26.0;
        assert!(ratio > 1.0);
        for (t, c) in [
            (table.lookup_bytes(), column.lookup_bytes()),
            (table.pooled_bytes(), column.pooled_bytes()),
            (table.emb_params_local(), column.emb_params_local()),
        ] {
            assert!((t / c - ratio).abs() < 1e-12, "{t} / {c} against {ratio}");
        }
        let (rt, rc) = (evaluate(&table), evaluate(&column));
        assert!(rt.memory.total_bytes > rc.memory.total_bytes);
        assert!(rt.iteration_s > rc.iteration_s, "{} against {}", rt.iteration_s, rc.iteration_s);
    }

    /// NVIDIA's DLRM for Criteo (the "large" tables) pre-training on `gpus` A100s of one node:
    /// tables split table-wise over every GPU, the MLPs data-parallel, the bottom MLP placed as
    /// `bot_mlp` says, and `pooling` lookups per table.
    fn nvidia(gpus: u64, bot_mlp: &str, pooling: u64) -> Scenario {
        nvidia_with(gpus, bot_mlp, pooling, serde_json::json!({}))
    }

    /// [`nvidia`] with more task keys.
    fn nvidia_with(gpus: u64, bot_mlp: &str, pooling: u64, task: serde_json::Value) -> Scenario {
        let mut v = serde_json::json!({
            "model": {
                "type": "DLRM", "name": "Criteo", "num_tables": 26, "entries_per_table": 6159856, "emb_dim": 128,
                "pooling_size": pooling, "num_bot_mlp_layers": 3, "num_top_mlp_layers": 5, "mlp_dim": 1024,
                "bot_mlp_widths": "13-512-256-128", "top_mlp_widths": "1024-1024-512-256-1",
                "bytes_per_emb_param": 4, "bytes_per_nonemb_param": 2,
            },
            "system": {
                "type": "GPU", "name": "DGX A100", "num_devices": gpus, "num_nodes": 1, "f64_flops": 9.7e12,
                "f32_flops": 156e12, "f16_flops": 312e12, "i8_ops": 624e12, "flops_util": 0.8, "mem_cap": 85899345920u64,
                "mem_bw": 2039e9, "mem_bw_util": 0.836, "num_nvlinks": 12, "bw_per_nvlink": 50e9, "nvlink_util": 0.6667,
                "num_ibroce_ports": 8, "ibroce_bw": 50e9, "ibroce_util": 0.56, "ar_perc_intra": 1.0,
            },
            "task": {
                "type": "pretrain", "name": "hybrid", "mode": "default", "mlp_parallel": ["ddp"],
                "mlp_parallel_degree": [gpus], "emb_parallel": ["mp"], "emb_parallel_degree": [gpus],
                "local_mlp_bs": 65536 / gpus, "local_emb_bs": 65536, "emb_sharding": "table", "bot_mlp": bot_mlp,
            },
        });
        if let (Some(t), serde_json::Value::Object(extra)) = (v["task"].as_object_mut(), task) {
            t.extend(extra);
        }
        let raw = serde_json::from_value::<RawFile>(v).expect("config").into_scenario().expect("config");
        validate(&raw).expect("valid")
    }

    fn op<'r>(r: &'r Report, name: &str) -> Option<&'r crate::engine::ops::Op> {
        r.timeline.iter().find(|o| o.name.to_string() == name)
    }

    #[test]
    fn collectives_launched_by_horovods_thread_each_wait_half_a_cycle_on_the_critical_path() {
        // TensorFlow 2's DLRM (Merlin Distributed Embeddings over Horovod): the forward and
        // backward exchanges and the MLP gradients' all-reduce are each waited for, so a 1 ms
        // cycle adds 1.5 ms to the step; gradients reduced during the backward pass add only
        // the last one's wait, after the bottom MLP.
        let cycle = serde_json::json!({"collective_cycle_ms": 1});
        let direct = evaluate(&DlrmCx::new(&nvidia(8, "data_parallel", 1)).expect("a DLRM"));
        let horovod = evaluate(&DlrmCx::new(&nvidia_with(8, "data_parallel", 1, cycle.clone())).expect("a DLRM"));
        let extra_s = horovod.iteration_s - direct.iteration_s;
        assert!((extra_s - 1.5e-3).abs() < 1e-9, "{extra_s}");
        assert!((horovod.comm_s - direct.comm_s - 1.5e-3).abs() < 1e-9);
        let overlap = serde_json::json!({"collective_cycle_ms": 1, "overlap_grad_reduce": true});
        let bucketed = evaluate(&DlrmCx::new(&nvidia_with(8, "data_parallel", 1, overlap)).expect("a DLRM"));
        let plain = serde_json::json!({"overlap_grad_reduce": true});
        let bucketed_direct = evaluate(&DlrmCx::new(&nvidia_with(8, "data_parallel", 1, plain)).expect("a DLRM"));
        let extra_s = bucketed.iteration_s - bucketed_direct.iteration_s;
        assert!(extra_s > 1.0e-3 - 1e-9 && extra_s <= 1.5e-3 + 1e-9, "{extra_s}");
        // One GPU has no collective to wait for.
        let alone = evaluate(&DlrmCx::new(&nvidia(1, "data_parallel", 1)).expect("a DLRM"));
        let alone_horovod = evaluate(&DlrmCx::new(&nvidia_with(1, "data_parallel", 1, cycle)).expect("a DLRM"));
        assert_eq!(alone.iteration_s, alone_horovod.iteration_s);
    }

    #[test]
    fn a_bottom_mlp_on_one_gpu_runs_the_whole_batch_and_leaves_the_tables_to_the_others() {
        let (spread, one) = (nvidia(8, "data_parallel", 1), nvidia(8, "one_gpu", 1));
        let (a, b) = (DlrmCx::new(&spread).expect("a DLRM"), DlrmCx::new(&one).expect("a DLRM"));
        assert!(!a.bot_on_one_gpu() && b.bot_on_one_gpu() && b.bot_gpu_apart());
        // 26 tables over 7 GPUs: still 4 on the busiest; the bottom MLP's layers run 8 times
        // the samples, unsplit, with no gradient to synchronise.
        assert_eq!(b.table_share(), 4.0 / 26.0);
        assert_eq!((a.mlp_batch(false), b.mlp_batch(false), b.mlp_batch(true)), (8192.0, 65536.0, 8192.0));
        for l in 0..3 {
            assert!(b.mlp_fwd_s(false, l) > 4.0 * a.mlp_fwd_s(false, l), "layer {l}");
            assert!(a.mlp_grad_s(false, l) > 0.0 && b.mlp_grad_s(false, l) == 0.0);
        }
        // Its 128-wide output travels with the pooled embeddings: 1 vector against the
        // busiest GPU's 4, so the exchange is no larger.
        assert_eq!(b.bot_out_bytes(), 65536.0 * 128.0 * 2.0);
        assert_eq!(b.exchange_bytes(), b.pooled_bytes());
        let (ra, rb) = (evaluate(&a), evaluate(&b));
        // The exchange waits for the whole batch's bottom MLP (data-parallel, it starts after
        // the lookups and runs beside an eighth of it); this GPU looks nothing up.
        let start = |r: &Report, n: &str| op(r, n).map(|o| o.start_s);
        let bottom_end = op(&rb, "MLPBot2_f.").map(|o| o.start_s + o.duration_s);
        assert_eq!(start(&rb, "EMB_f_c_all2all."), bottom_end);
        assert!(start(&ra, "EMB_f_c_all2all.") < op(&ra, "MLPBot0_f.").map(|o| o.start_s + o.duration_s));
        assert!(op(&rb, "EMB_f.").is_none() && op(&ra, "EMB_f.").is_some());
        // Its backward pass waits for its output's gradient from the exchange.
        let xb = op(&rb, "EMB_b_c_all2all.").map(|o| o.start_s + o.duration_s);
        assert!(start(&rb, "MLPBot2_b.") >= xb && xb.is_some());
        // NVIDIA's 8 GPUs: the lookups of 4 tables take less time than the bottom MLP, so
        // this GPU never waits, and the iteration is longer than with the MLP spread.
        assert!(op(&rb, "TablesWait_f").is_none() && op(&rb, "TablesWait_b").is_none());
        assert!(rb.iteration_s > 1.1 * ra.iteration_s, "{} against {}", rb.iteration_s, ra.iteration_s);
    }

    #[test]
    fn the_bottom_mlps_gpu_waits_for_the_tables_when_their_lookups_take_longer() {
        // 64 lookups per table: the busiest table GPU's lookups outlast the bottom MLP, and the
        // bottom MLP's GPU waits for them before the exchange (and before the step).
        let s = nvidia(8, "one_gpu", 64);
        let cx = DlrmCx::new(&s).expect("a DLRM");
        let r = evaluate(&cx);
        let bottom_f: f64 = (0..3).map(|l| cx.mlp_fwd_s(false, l)).sum();
        let wait = op(&r, "TablesWait_f").expect("a wait").duration_s;
        assert!((wait - (cx.emb_fwd_s() - bottom_f)).abs() < 1e-12, "{wait}");
        let bottom_b: f64 = (0..3).map(|l| cx.mlp_bwd_s(false, l)).sum();
        let wait_b = op(&r, "TablesWait_b").expect("a wait").duration_s;
        assert!((wait_b - (cx.emb_bwd_s() - bottom_b)).abs() < 1e-9, "{wait_b}");
        let e = explain(&cx, &op(&r, "TablesWait_f").expect("a wait").name).expect("explained");
        assert!((e.seconds - wait).abs() < 1e-12 && e.what.contains("tables"), "{}", e.what);
    }

    #[test]
    fn on_four_gpus_or_one_the_bottom_mlps_gpu_holds_tables_too() {
        // Up to 4 GPUs, NVIDIA's placement spreads the tables over every GPU, the bottom MLP's
        // included: that GPU looks up its tables, then runs the bottom MLP, then sends both.
        let cx4 = nvidia(4, "one_gpu", 1);
        let b = DlrmCx::new(&cx4).expect("a DLRM");
        assert!(b.bot_on_one_gpu() && !b.bot_gpu_apart());
        assert_eq!(b.table_share(), 7.0 / 26.0);
        assert_eq!(b.exchange_bytes(), b.pooled_bytes() + b.bot_out_bytes());
        let r = evaluate(&b);
        assert!(op(&r, "EMB_f.").is_some() && op(&r, "TablesWait_f").is_none());
        // On one GPU there is nothing to place: both settings are the same run.
        let (one, spread) = (nvidia(1, "one_gpu", 1), nvidia(1, "data_parallel", 1));
        let (r1, r2) =
            (evaluate(&DlrmCx::new(&one).expect("a DLRM")), evaluate(&DlrmCx::new(&spread).expect("a DLRM")));
        assert_eq!(r1.iteration_s, r2.iteration_s);
    }
}
