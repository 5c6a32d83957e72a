//! Reference mode: op lists of DLRM and DLRM_MoE (SPEC 8.1, 8.2), and the MLP parts that
//! DLRM_Transformer shares with them.

use super::graph::{Dep, GraphBuilder};
use super::{name, on, when, Batch, Part, ReferenceCx, Step, Walk};
use crate::engine::ops::{Block, OpKind, Phase};
use crate::engine::scenario::{Arch, Dlrm, Strategy, MAX_LEVELS};

use Block::{MlpBot, MlpTop, Moe};
use OpKind::{ActAllReduce, Compute, GradAllReduce, GradReduceScatter, MoeCombine, MoeDispatch, WeightAllGather};
use Phase::{Backward, Forward};

/// DLRM or DLRM_MoE: embeddings and bottom MLP, top MLP; backward in reverse.
pub fn build(cx: &ReferenceCx, g: &mut GraphBuilder) {
    let Some(m) = Mlp::new(cx) else { return };
    cx.emb_forward(g);
    m.bottom_forward(g);
    let l_b = m.dlrm.bot_mlp_layers as i64;
    m.top_forward(g, |i| match i {
        0 => on(MlpBot, l_b - 2, Forward, Compute),
        1 => on(MlpBot, l_b - 1, Forward, Compute),
        _ => on(MlpTop, i - 2, Forward, Compute),
    });
    if !cx.trains {
        return;
    }
    m.top_backward(g, m.spec.len());
    if !cx.freeze.emb {
        cx.emb_backward_comm(g, &[on(MlpTop, 0, Backward, Compute), on(MlpTop, 0, Backward, ActAllReduce)]);
    }
    if !cx.freeze.bot_mlp {
        // Q10: the all-gather waits for MLPBot{j+2}_b (the code builds another set, unused).
        m.bottom_backward(g, |j| [on(MlpBot, j + 2, Backward, Compute), Dep::Nothing, Dep::Nothing]);
    }
    if !cx.freeze.emb {
        cx.emb_backward_compute(g);
    }
}

/// The MLP stack of a DLRM-family model, with its per-layer durations computed once.
pub struct Mlp<'a, 'c> {
    cx: &'a ReferenceCx<'c>,
    pub dlrm: &'a Dlrm,
    pub spec: Part<'a>,
    /// MoE top layers: the number of experts.
    experts: Option<u64>,
    fsdp: bool,
    bot_fwd_s: f64,
    bot_bwd_s: f64,
    top_fwd_s: f64,
    top_bwd_s: f64,
    bot_ag_s: f64,
    top_ag_s: f64,
    bot_walk: Walk,
    top_walk: Walk,
    /// Activation bytes of one MLP layer for the local batch, `(B_M * d) * b`.
    act_bytes: f64,
    /// Tensor-parallel activation all-reduce per level of the MLP spec, s: `act_bytes / AR`.
    act_ar_s: [f64; MAX_LEVELS],
    /// MoE all-to-all per level, s: `(act_bytes / X) / A2A(level)` (Q19).
    moe_a2a_s: [f64; MAX_LEVELS],
}

impl<'a, 'c> Mlp<'a, 'c> {
    /// The MLP stack of a DLRM-family scenario (`None` for other families).
    pub fn new(cx: &'a ReferenceCx<'c>) -> Option<Mlp<'a, 'c>> {
        let (dlrm, experts) = match &cx.s.model.arch {
            Arch::Dlrm(d) | Arch::DlrmTransformer(d, _) => (d, None),
            Arch::DlrmMoe(d, moe) => (d, Some(moe.experts)),
            Arch::Llm(_) | Arch::LlmMoe(..) | Arch::Vit(_) | Arch::Cnn(_) | Arch::EncDec(_) => return None,
        };
        let spec = cx.mlp?;
        let l = &cx.counts.layers;
        let bot_phi = cx.local_flops(l.mlp_flops, Batch::Mlp, &spec);
        let top_phi = cx.local_flops(l.top_mlp_flops, Batch::Mlp, &spec);
        let act = super::int(cx.batch(Batch::Mlp)) * super::int(dlrm.mlp_dim) * cx.b;
        Some(Mlp {
            cx,
            dlrm,
            spec,
            experts,
            fsdp: spec.first_is(Strategy::Fsdp),
            bot_fwd_s: cx.fwd_s(bot_phi),
            bot_bwd_s: cx.bwd_s(bot_phi),
            top_fwd_s: cx.fwd_s(top_phi),
            top_bwd_s: cx.bwd_s(top_phi),
            bot_ag_s: cx.allgather_s(l.mlp_block, &spec),
            top_ag_s: cx.allgather_s(l.top_mlp_block, &spec),
            bot_walk: cx.grad_walk(l.mlp_block, &spec),
            top_walk: cx.grad_walk(l.top_mlp_block, &spec),
            act_bytes: act.f64(),
            act_ar_s: ReferenceCx::per_level(act.f64(), &cx.net.allreduce, spec.len()),
            moe_a2a_s: ReferenceCx::per_level(
                (act / super::int(experts.unwrap_or(1))).f64(),
                &cx.net.all2all,
                spec.len(),
            ),
        })
    }

    fn tp_levels(&self) -> impl Iterator<Item = usize> + '_ {
        ReferenceCx::levels(self.spec.spec, Strategy::Tp)
    }

    /// Bottom MLP forward (SPEC 8.1 step 3).
    pub fn bottom_forward(&self, g: &mut GraphBuilder) {
        for j in 0..self.dlrm.bot_mlp_layers as i64 {
            if self.fsdp {
                g.emit(
                    name(MlpBot, j, Forward, WeightAllGather),
                    self.bot_ag_s,
                    // No trailing dot in the reference: still matches MLPBot{j-2}_f. (Q30).
                    &[on(MlpBot, j - 2, Forward, Compute)],
                );
            }
            let ag = on(MlpBot, j, Forward, WeightAllGather);
            if j == 0 {
                g.emit(name(MlpBot, j, Forward, Compute), self.bot_fwd_s, &[ag]);
            } else {
                g.emit(
                    name(MlpBot, j, Forward, Compute),
                    self.bot_fwd_s,
                    &[on(MlpBot, j - 1, Forward, Compute), on(MlpBot, j - 1, Forward, ActAllReduce), ag],
                );
            }
            // Q24: Megatron-style pairs, an all-reduce after odd layers only.
            if j % 2 == 1 {
                for level in self.tp_levels() {
                    g.emit(
                        name(MlpBot, j, Forward, ActAllReduce),
                        self.act_ar_s[level],
                        &[on(MlpBot, j, Forward, Compute)],
                    );
                }
            }
        }
    }

    /// Top MLP forward of DLRM and DLRM_MoE (SPEC 8.1 step 4, 8.2): layer 0 waits for the
    /// embedding all-to-all and the last bottom layer.
    pub fn top_forward(&self, g: &mut GraphBuilder, ag_dep: impl Fn(i64) -> Dep) {
        let l_b = self.dlrm.bot_mlp_layers as i64;
        let first =
            [Dep::EmbComm(Forward), on(MlpBot, l_b - 1, Forward, Compute), on(MlpBot, l_b - 1, Forward, ActAllReduce)];
        self.top_forward_with(g, ag_dep, first);
    }

    /// Top MLP forward with the dependencies of layer 0's compute (besides its own all-gather
    /// and MoE dispatch) given by `first_deps`.
    pub fn top_forward_with(&self, g: &mut GraphBuilder, ag_dep: impl Fn(i64) -> Dep, first_deps: [Dep; 3]) {
        for i in 0..self.dlrm.top_mlp_layers as i64 {
            if self.fsdp {
                g.emit(name(MlpTop, i, Forward, WeightAllGather), self.top_ag_s, &[ag_dep(i)]);
            }
            if self.experts.is_some() {
                for level in self.tp_levels() {
                    // Waits (inertly: same stream, Q17) for the previous layer's combine.
                    g.emit(
                        name(Moe, i, Forward, MoeDispatch),
                        self.moe_a2a_s[level],
                        &[on(Moe, i - 1, Forward, MoeCombine)],
                    );
                }
            }
            let [a, b, c] = if i == 0 {
                first_deps
            } else {
                // Q11: the MoE variant also names MLPTop{i-1}_f_c_act_MoE., which never exists.
                [on(MlpTop, i - 1, Forward, Compute), on(MlpTop, i - 1, Forward, ActAllReduce), Dep::Nothing]
            };
            let moe = self.experts.is_some();
            let deps = [a, b, c, on(MlpTop, i, Forward, WeightAllGather), when(moe, on(Moe, i, Forward, MoeDispatch))];
            g.emit(name(MlpTop, i, Forward, Compute), self.top_fwd_s, &deps);
            for level in self.tp_levels() {
                if i % 2 == 1 {
                    g.emit(
                        name(MlpTop, i, Forward, ActAllReduce),
                        self.act_ar_s[level],
                        &[on(MlpTop, i, Forward, Compute)],
                    );
                }
                if self.experts.is_some() {
                    g.emit(
                        name(Moe, i, Forward, MoeCombine),
                        self.moe_a2a_s[level],
                        &[on(MlpTop, i, Forward, Compute), on(MlpTop, i, Forward, ActAllReduce)],
                    );
                }
            }
        }
    }

    /// Top MLP backward (SPEC 8.1 step 1, 8.2). The activation all-reduce selects its bandwidth
    /// with a spec length of `ar_spec_len` (the MLP spec's; DLRM_Transformer passes the
    /// transformer spec's, Q9a).
    pub fn top_backward(&self, g: &mut GraphBuilder, ar_spec_len: usize) {
        let l_t = self.dlrm.top_mlp_layers as i64;
        let frozen = self.cx.freeze.top_mlp;
        let act_ar_s = ReferenceCx::per_level(self.act_bytes, &self.cx.net.allreduce, ar_spec_len);
        for i in (0..l_t).rev() {
            if self.fsdp {
                g.emit(
                    name(MlpTop, i, Backward, WeightAllGather),
                    self.top_ag_s,
                    &[on(MlpTop, i + 2, Backward, Compute)],
                );
            }
            if self.experts.is_some() {
                for level in self.tp_levels() {
                    g.emit(
                        name(Moe, i, Backward, MoeDispatch),
                        self.moe_a2a_s[level],
                        &[on(Moe, i + 1, Backward, MoeCombine)],
                    );
                }
            }
            let [a, b] = if i == l_t - 1 {
                [Dep::Nothing, Dep::Nothing]
            } else {
                [on(MlpTop, i + 1, Backward, Compute), on(MlpTop, i + 1, Backward, ActAllReduce)]
            };
            let moe = self.experts.is_some();
            let deps = [a, b, on(MlpTop, i, Backward, WeightAllGather), when(moe, on(Moe, i, Backward, MoeDispatch))];
            // Q22: a frozen top MLP still pays its backward GEMMs and activation all-reduces.
            g.emit(name(MlpTop, i, Backward, Compute), self.top_bwd_s, &deps);
            let me = on(MlpTop, i, Backward, Compute);
            for step in self.top_walk.iter() {
                match step {
                    Step::AllReduce(s) if !frozen => g.emit(name(MlpTop, i, Backward, GradAllReduce), s, &[me]),
                    Step::ReduceScatter(s) if !frozen => g.emit(name(MlpTop, i, Backward, GradReduceScatter), s, &[me]),
                    Step::Tp(level) => {
                        if i % 2 == 0 {
                            g.emit(name(MlpTop, i, Backward, ActAllReduce), act_ar_s[level], &[me]);
                        }
                        if self.experts.is_some() {
                            g.emit(
                                name(Moe, i, Backward, MoeCombine),
                                self.moe_a2a_s[level],
                                &[me, on(MlpTop, i, Backward, ActAllReduce)],
                            );
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// Bottom MLP backward (SPEC 8.1 step 3). `ag_deps(j)` is what layer `j`'s all-gather waits
    /// for (the families differ: Q10, Q14).
    pub fn bottom_backward(&self, g: &mut GraphBuilder, ag_deps: impl Fn(i64) -> [Dep; 3]) {
        let l_b = self.dlrm.bot_mlp_layers as i64;
        for j in (0..l_b).rev() {
            if self.fsdp {
                g.emit(name(MlpBot, j, Backward, WeightAllGather), self.bot_ag_s, &ag_deps(j));
            }
            let last = j == l_b - 1;
            let [a, b] = if last {
                [on(MlpTop, 0, Backward, Compute), on(MlpTop, 0, Backward, ActAllReduce)]
            } else {
                [on(MlpBot, j + 1, Backward, Compute), on(MlpBot, j + 1, Backward, ActAllReduce)]
            };
            let moe = last && self.experts.is_some();
            let deps = [a, b, on(MlpBot, j, Backward, WeightAllGather), when(moe, on(Moe, 0, Backward, MoeCombine))];
            g.emit(name(MlpBot, j, Backward, Compute), self.bot_bwd_s, &deps);
            let me = on(MlpBot, j, Backward, Compute);
            for step in self.bot_walk.iter() {
                match step {
                    Step::AllReduce(s) => g.emit(name(MlpBot, j, Backward, GradAllReduce), s, &[me]),
                    Step::ReduceScatter(s) => g.emit(name(MlpBot, j, Backward, GradReduceScatter), s, &[me]),
                    Step::Tp(level) if j % 2 == 0 => {
                        g.emit(name(MlpBot, j, Backward, ActAllReduce), self.act_ar_s[level], &[me])
                    }
                    Step::Tp(_) => {}
                }
            }
        }
    }
}
