//! Reference mode: op list of DLRM_Transformer (SPEC 8.3): embeddings and bottom MLP, a
//! transformer stack, then the top MLP. The reference module cannot even be imported (Q1);
//! that is a bug of the reference, not of the model, so this family simply works here.

use super::dlrm::Mlp;
use super::graph::{Dep, GraphBuilder};
use super::{int, name, on, Batch, ReferenceCx, Step};
use crate::engine::ops::{Block, OpKind, Phase};
use crate::engine::scenario::{Arch, Strategy};

use Block::{Attn, Fc, MlpBot, MlpTop};
use OpKind::{ActAllReduce, Compute, GradAllReduce, GradReduceScatter, WeightAllGather};
use Phase::{Backward, Forward};

/// Builds the op graph of a DLRM_Transformer task.
pub fn build(cx: &ReferenceCx, g: &mut GraphBuilder) {
    let Arch::DlrmTransformer(dlrm, t) = &cx.s.model.arch else { return };
    let (Some(ts), Some(ms), Some(m)) = (cx.transformer, cx.mlp, Mlp::new(cx)) else { return };
    let l_b = dlrm.bot_mlp_layers as i64;
    let l_t = t.layers as i64;
    let k_t = ts.len();
    let k_m = ms.len();
    let fsdp = ts.first_is(Strategy::Fsdp);
    let l = &cx.counts.layers;
    let attn_phi = cx.local_flops(l.attn_flops, Batch::Transformer, &ts);
    let fc_phi = cx.local_flops(l.fc_flops, Batch::Transformer, &ts);
    let (attn_fwd_s, attn_bwd_s) = (cx.fwd_s(attn_phi), cx.bwd_s(attn_phi));
    let (fc_fwd_s, fc_bwd_s) = (cx.fwd_s(fc_phi), cx.bwd_s(fc_phi));
    let attn_ag_s = cx.allgather_s(l.attn_block, &ts);
    let fc_ag_s = cx.allgather_s(l.fc_block, &ts);
    let act_bytes = (int(cx.batch(Batch::Transformer)) * int(t.seq_len) * int(t.attention_dim) * cx.b).f64();
    // Activation all-reduce at `level`, with the bandwidth selected by a spec of `len` levels.
    let act_ar_s = |len: usize, level: usize| act_bytes / cx.net.allreduce.sel(len, level);
    let tp_levels = || ReferenceCx::levels(ts.spec, Strategy::Tp);

    // Forward.
    cx.emb_forward(g);
    m.bottom_forward(g);
    for l in 0..l_t {
        if fsdp {
            let after = if l == 0 { on(MlpBot, l_b - 2, Forward, Compute) } else { on(Attn, l - 1, Forward, Compute) };
            g.emit(name(Attn, l, Forward, WeightAllGather), attn_ag_s, &[after]);
        }
        let deps = if l == 0 {
            [
                Dep::EmbComm(Forward),
                on(MlpBot, l_b - 1, Forward, Compute),
                on(MlpBot, l_b - 1, Forward, ActAllReduce),
                on(Attn, 0, Forward, WeightAllGather),
            ]
        } else {
            [
                on(Fc, l - 1, Forward, Compute),
                on(Fc, l - 1, Forward, ActAllReduce),
                on(Attn, l, Forward, WeightAllGather),
                Dep::Nothing,
            ]
        };
        g.emit(name(Attn, l, Forward, Compute), attn_fwd_s, &deps);
        for level in tp_levels() {
            g.emit(name(Attn, l, Forward, ActAllReduce), act_ar_s(k_t, level), &[on(Attn, l, Forward, Compute)]);
        }
        if fsdp {
            let after = if l == 0 { on(MlpBot, l_b - 1, Forward, Compute) } else { on(Fc, l - 1, Forward, Compute) };
            g.emit(name(Fc, l, Forward, WeightAllGather), fc_ag_s, &[after]);
        }
        g.emit(
            name(Fc, l, Forward, Compute),
            fc_fwd_s,
            &[on(Attn, l, Forward, Compute), on(Attn, l, Forward, ActAllReduce), on(Fc, l, Forward, WeightAllGather)],
        );
        for level in tp_levels() {
            g.emit(name(Fc, l, Forward, ActAllReduce), act_ar_s(k_t, level), &[on(Fc, l, Forward, Compute)]);
        }
    }
    let first = [on(Fc, l_t - 1, Forward, Compute), on(Fc, l_t - 1, Forward, ActAllReduce), Dep::Nothing];
    m.top_forward_with(
        g,
        |i| match i {
            0 => on(Attn, l_t - 1, Forward, Compute),
            1 => on(Fc, l_t - 1, Forward, Compute),
            _ => on(MlpTop, i - 2, Forward, Compute),
        },
        first,
    );
    if !cx.trains {
        return;
    }

    // Backward.
    let fz = &cx.freeze;
    m.top_backward(g, k_t); // Q9a: bandwidth selected with the transformer spec's length
    if !fz.bot_mlp || !fz.emb || !fz.transformer {
        let attn_walk = cx.grad_walk(l.attn_block, &ts);
        let fc_walk = cx.grad_walk(l.fc_block, &ts);
        for l in (0..l_t).rev() {
            if fsdp {
                let after = if l == l_t - 1 {
                    on(MlpTop, 1, Backward, Compute) // hard-coded in the reference (Q18)
                } else {
                    on(Fc, l + 1, Backward, Compute)
                };
                g.emit(name(Fc, l, Backward, WeightAllGather), fc_ag_s, &[after]);
            }
            let deps = if l == l_t - 1 {
                [
                    on(MlpTop, 0, Backward, Compute),
                    on(MlpTop, 0, Backward, ActAllReduce),
                    on(Fc, l, Backward, WeightAllGather),
                ]
            } else {
                [
                    on(Attn, l + 1, Backward, Compute),
                    on(Attn, l + 1, Backward, ActAllReduce),
                    on(Fc, l, Backward, WeightAllGather),
                ]
            };
            g.emit(name(Fc, l, Backward, Compute), fc_bwd_s, &deps);
            let me = on(Fc, l, Backward, Compute);
            for step in fc_walk.iter() {
                match step {
                    Step::AllReduce(s) if !fz.transformer => g.emit(name(Fc, l, Backward, GradAllReduce), s, &[me]),
                    Step::ReduceScatter(s) if !fz.transformer => {
                        g.emit(name(Fc, l, Backward, GradReduceScatter), s, &[me])
                    }
                    Step::Tp(level) => g.emit(name(Fc, l, Backward, ActAllReduce), act_ar_s(k_t, level), &[me]),
                    _ => {}
                }
            }
            if fsdp {
                let after =
                    if l == l_t - 1 { on(MlpTop, 0, Backward, Compute) } else { on(Attn, l + 1, Backward, Compute) };
                g.emit(name(Attn, l, Backward, WeightAllGather), attn_ag_s, &[after]);
            }
            // Q12: waits for the FC all-reduce of the layer *above*, not its own.
            g.emit(
                name(Attn, l, Backward, Compute),
                attn_bwd_s,
                &[
                    on(Fc, l + 1, Backward, Compute),
                    on(Fc, l + 1, Backward, ActAllReduce),
                    on(Attn, l, Backward, WeightAllGather),
                ],
            );
            let me = on(Attn, l, Backward, Compute);
            for step in attn_walk.iter() {
                match step {
                    Step::AllReduce(s) if !fz.transformer => g.emit(name(Attn, l, Backward, GradAllReduce), s, &[me]),
                    Step::ReduceScatter(s) if !fz.transformer => {
                        g.emit(name(Attn, l, Backward, GradReduceScatter), s, &[me])
                    }
                    // Q9b: bandwidth selected with the MLP spec's length.
                    Step::Tp(level) => g.emit(name(Attn, l, Backward, ActAllReduce), act_ar_s(k_m, level), &[me]),
                    _ => {}
                }
            }
        }
    }
    if !fz.emb {
        cx.emb_backward_comm(g, &[on(Attn, 0, Backward, Compute), on(Attn, 0, Backward, ActAllReduce)]);
    }
    if !fz.bot_mlp {
        // Q14: the all-gather's dependencies come from a stale variable; the `elif` compares the
        // top-MLP loop index (0 once that loop is done) with L_b - 2.
        m.bottom_backward(g, |j| {
            if j == l_b - 1 {
                [on(Fc, 0, Backward, Compute), Dep::Nothing, Dep::Nothing]
            } else if l_b == 2 {
                [on(Attn, 0, Backward, Compute), Dep::Nothing, Dep::Nothing]
            } else if j == l_b - 2 {
                [
                    on(MlpTop, 0, Backward, Compute),
                    on(MlpTop, 0, Backward, ActAllReduce),
                    on(MlpBot, l_b - 1, Backward, WeightAllGather),
                ]
            } else {
                [
                    on(MlpBot, j + 2, Backward, Compute),
                    on(MlpBot, j + 2, Backward, ActAllReduce),
                    on(MlpBot, j + 1, Backward, WeightAllGather),
                ]
            }
        });
    }
    if !fz.emb {
        cx.emb_backward_compute(g);
    }
}
