//! Reference mode: op lists of LLM, LLM_MoE (the "pre-optimized" task, SPEC 8.4, 8.6) and ViT
//! (the "post-optimized" task, SPEC 8.5; Q3).

use super::graph::{Dep, GraphBuilder};
use super::{int, name, on, when, Batch, Part, ReferenceCx, Step, Walk};
use crate::engine::ops::{Block, OpKind, Phase};
use crate::engine::scenario::{Arch, Strategy, Transformer, MAX_LEVELS};

use Block::{Attn, Fc, Moe};
use OpKind::{ActAllReduce, Compute, GradAllReduce, GradReduceScatter, MoeCombine, MoeDispatch, WeightAllGather};
use Phase::{Backward, Forward};

/// Which backward all-gather schedule the family's task module uses (Q3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BackwardStyle {
    /// `llm_tasks_preoptimized.py`: each all-gather waits for the layer above (SPEC 8.4).
    PreOptimized,
    /// `vit_tasks.py`: all-gathers wait for nothing but their stream, and the last FC layer's
    /// is emitted whatever the strategy (SPEC 8.5, Q2).
    PostOptimized,
}

/// Builds the op graph of an LLM, LLM_MoE or ViT task.
pub fn build(cx: &ReferenceCx, g: &mut GraphBuilder) {
    let (t, experts, style) = match &cx.s.model.arch {
        Arch::Llm(l) => (l.transformer.clone(), None, BackwardStyle::PreOptimized),
        Arch::LlmMoe(l, m) => (l.transformer.clone(), Some(m.experts), BackwardStyle::PreOptimized),
        Arch::Vit(v) => (v.transformer(), None, BackwardStyle::PostOptimized),
        // Only transformer scenarios are dispatched here.
        _ => return,
    };
    let Some(spec) = cx.transformer else { return };
    let st = Stack::new(cx, &t, spec, experts);
    cx.emb_forward(g);
    st.forward(g);
    if !cx.trains {
        return;
    }
    st.backward(g, style);
    if !cx.freeze.emb {
        cx.emb_backward_comm(g, &[on(Attn, 0, Backward, Compute), on(Attn, 0, Backward, ActAllReduce)]);
        cx.emb_backward_compute(g);
    }
}

/// A transformer stack with its per-layer durations computed once.
struct Stack<'a, 'c> {
    cx: &'a ReferenceCx<'c>,
    layers: i64,
    spec: Part<'a>,
    experts: Option<u64>,
    fsdp: bool,
    attn_fwd_s: f64,
    attn_bwd_s: f64,
    fc_fwd_s: f64,
    fc_bwd_s: f64,
    attn_ag_s: f64,
    fc_ag_s: f64,
    /// Activation all-reduce per level, s: `(B_T * s * a * b) / AR(level)`.
    act_ar_s: [f64; MAX_LEVELS],
    /// MoE all-to-all per level, s: `((B_T * s * a * b) / X) / A2A(level)` (Q19).
    moe_a2a_s: [f64; MAX_LEVELS],
    attn_walk: Walk,
    fc_walk: Walk,
}

impl<'a, 'c> Stack<'a, 'c> {
    fn new(cx: &'a ReferenceCx<'c>, t: &Transformer, spec: Part<'a>, experts: Option<u64>) -> Stack<'a, 'c> {
        let l = &cx.counts.layers;
        let attn_phi = cx.local_flops(l.attn_flops, Batch::Transformer, &spec);
        let fc_phi = cx.local_flops(l.fc_flops, Batch::Transformer, &spec);
        let act = int(cx.batch(Batch::Transformer)) * int(t.seq_len) * int(t.attention_dim) * cx.b;
        Stack {
            cx,
            layers: t.layers as i64,
            spec,
            experts,
            fsdp: spec.first_is(Strategy::Fsdp),
            attn_fwd_s: cx.fwd_s(attn_phi),
            attn_bwd_s: cx.bwd_s(attn_phi),
            fc_fwd_s: cx.fwd_s(fc_phi),
            fc_bwd_s: cx.bwd_s(fc_phi),
            attn_ag_s: cx.allgather_s(l.attn_block, &spec),
            fc_ag_s: cx.allgather_s(l.fc_block, &spec),
            act_ar_s: ReferenceCx::per_level(act.f64(), &cx.net.allreduce, spec.len()),
            moe_a2a_s: ReferenceCx::per_level((act / int(experts.unwrap_or(1))).f64(), &cx.net.all2all, spec.len()),
            attn_walk: cx.grad_walk(l.attn_block, &spec),
            fc_walk: cx.grad_walk(l.fc_block, &spec),
        }
    }

    fn act_ar_s(&self, level: usize) -> f64 {
        self.act_ar_s[level]
    }

    /// MoE all-to-all, s: `((B_T * s * a * b) / X) / A2A(level)` (Q19).
    fn moe_a2a_s(&self, level: usize) -> f64 {
        self.moe_a2a_s[level]
    }

    fn tp_levels(&self) -> impl Iterator<Item = usize> + '_ {
        ReferenceCx::levels(self.spec.spec, Strategy::Tp)
    }

    fn forward(&self, g: &mut GraphBuilder) {
        let moe = self.experts.is_some();
        for l in 0..self.layers {
            if self.fsdp {
                g.emit(name(Attn, l, Forward, WeightAllGather), self.attn_ag_s, &[on(Attn, l - 1, Forward, Compute)]);
            }
            let deps = if l == 0 {
                [Dep::EmbComm(Forward), on(Attn, 0, Forward, WeightAllGather), Dep::Nothing, Dep::Nothing]
            } else {
                [
                    on(Fc, l - 1, Forward, Compute),
                    on(Fc, l - 1, Forward, ActAllReduce),
                    on(Attn, l, Forward, WeightAllGather),
                    when(moe, on(Moe, l - 1, Forward, MoeCombine)),
                ]
            };
            g.emit(name(Attn, l, Forward, Compute), self.attn_fwd_s, &deps);
            for level in self.tp_levels() {
                g.emit(name(Attn, l, Forward, ActAllReduce), self.act_ar_s(level), &[on(Attn, l, Forward, Compute)]);
            }
            if self.fsdp {
                g.emit(name(Fc, l, Forward, WeightAllGather), self.fc_ag_s, &[on(Fc, l - 1, Forward, Compute)]);
            }
            if moe {
                for level in self.tp_levels() {
                    g.emit(
                        name(Moe, l, Forward, MoeDispatch),
                        self.moe_a2a_s(level),
                        &[on(Attn, l, Forward, ActAllReduce)],
                    );
                }
            }
            let deps = [
                on(Attn, l, Forward, Compute),
                on(Attn, l, Forward, ActAllReduce),
                on(Fc, l, Forward, WeightAllGather),
                when(moe, on(Moe, l, Forward, MoeDispatch)),
            ];
            g.emit(name(Fc, l, Forward, Compute), self.fc_fwd_s, &deps);
            for level in self.tp_levels() {
                g.emit(name(Fc, l, Forward, ActAllReduce), self.act_ar_s(level), &[on(Fc, l, Forward, Compute)]);
                if moe {
                    g.emit(
                        name(Moe, l, Forward, MoeCombine),
                        self.moe_a2a_s(level),
                        &[on(Fc, l, Forward, Compute), on(Fc, l, Forward, ActAllReduce)],
                    );
                }
            }
        }
    }

    fn backward(&self, g: &mut GraphBuilder, style: BackwardStyle) {
        let moe = self.experts.is_some();
        let top = self.layers - 1;
        let post = style == BackwardStyle::PostOptimized;
        for l in (0..self.layers).rev() {
            // Gradient communication only for trainable layers (Q22: frozen ones still pay
            // their backward GEMMs and activation all-reduces).
            let trains =
                !self.cx.freeze.transformer && self.cx.freeze.min_frozen_layer.is_none_or(|mu| (l as u64) < mu);
            if post {
                if l == top {
                    // Q2: emitted whatever the strategy, sized as an FSDP all-gather.
                    g.emit(name(Fc, top, Backward, WeightAllGather), self.fc_ag_s, &[]);
                }
                if self.fsdp {
                    g.emit(name(Attn, l, Backward, WeightAllGather), self.attn_ag_s, &[]);
                }
            } else if self.fsdp {
                g.emit(name(Fc, l, Backward, WeightAllGather), self.fc_ag_s, &[on(Fc, l + 1, Backward, Compute)]);
            }
            if moe {
                for level in self.tp_levels() {
                    g.emit(
                        name(Moe, l, Backward, MoeDispatch),
                        self.moe_a2a_s(level),
                        &[on(Attn, l + 1, Backward, ActAllReduce)],
                    );
                }
            }
            let deps = [
                on(Attn, l + 1, Backward, Compute),
                on(Attn, l + 1, Backward, ActAllReduce),
                on(Fc, l, Backward, WeightAllGather),
                when(moe, on(Moe, l, Backward, MoeDispatch)),
            ];
            g.emit(name(Fc, l, Backward, Compute), self.fc_bwd_s, &deps);
            self.level_ops(g, Fc, l, &self.fc_walk, trains, moe);

            if post {
                if self.fsdp && l > 0 {
                    // Prefetch of the next layer's FC weights.
                    g.emit(name(Fc, l - 1, Backward, WeightAllGather), self.fc_ag_s, &[]);
                }
            } else if self.fsdp {
                g.emit(name(Attn, l, Backward, WeightAllGather), self.attn_ag_s, &[on(Attn, l + 1, Backward, Compute)]);
            }
            let deps = [
                on(Fc, l, Backward, Compute),
                on(Fc, l, Backward, ActAllReduce),
                on(Attn, l, Backward, WeightAllGather),
                when(moe, on(Moe, l, Backward, MoeCombine)),
            ];
            g.emit(name(Attn, l, Backward, Compute), self.attn_bwd_s, &deps);
            self.level_ops(g, Attn, l, &self.attn_walk, trains, false);
        }
    }

    /// The collectives after a block's backward GEMMs, level by level: gradient all-reduce or
    /// reduce-scatter (when the layer trains), activation all-reduce at the tp level (always),
    /// then the MoE combine (`combine`, LLM_MoE's FC blocks).
    fn level_ops(&self, g: &mut GraphBuilder, block: Block, l: i64, walk: &Walk, trains: bool, combine: bool) {
        let me = on(block, l, Backward, Compute);
        for step in walk.iter() {
            match step {
                Step::AllReduce(s) if trains => g.emit(name(block, l, Backward, GradAllReduce), s, &[me]),
                Step::ReduceScatter(s) if trains => g.emit(name(block, l, Backward, GradReduceScatter), s, &[me]),
                Step::Tp(level) => {
                    g.emit(name(block, l, Backward, ActAllReduce), self.act_ar_s(level), &[me]);
                    if combine {
                        g.emit(
                            name(Moe, l, Backward, MoeCombine),
                            self.moe_a2a_s(level),
                            &[me, on(block, l, Backward, ActAllReduce)],
                        );
                    }
                }
                _ => {}
            }
        }
    }
}
