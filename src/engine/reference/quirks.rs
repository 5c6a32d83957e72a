//! The reference's quirks (SPEC section 10), each with where reference mode reproduces it.
//!
//! Reference mode reproduces the MAD-Max Python code *exactly*, including behaviour that looks
//! like a bug, so that a researcher gets the paper's numbers. Every such behaviour is listed
//! here once. The default model (a later addition) fixes the bugs in its own op builders; the
//! scheduler, the report and the validation front door are shared and contain no quirk.
//!
//! | # | what the reference does | where it lives here |
//! |---|---|---|
//! | Q1 | `dlrm_transformer_tasks.py` cannot be imported (`typing.Any` missing), so every DLRM_Transformer run of the shipped code fails. | **Not reproduced**: a bug of the reference, not a model property. [`super::dlrm_transformer`] simply works (the goldens used a no-op import fix). |
//! | Q2 | ViT's backward always emits an all-gather of the last FC layer, whatever the strategy, sized `2af/shard*g0*b`. | [`super::transformer`], `Stack::backward`, post-optimized branch. |
//! | Q3 | LLM uses the pre-optimized task module, ViT the post-optimized one. | [`super::transformer`], `BackwardStyle`. |
//! | Q4 | The shipped `llm_moe_train.json` has inconsistent batches and always fails. | Rejected by the batch rule in [`super::rules`] (`task.local_transformer_bs`). |
//! | Q5 | A 2-level spec's first degree must equal the GPUs per node (or all GPUs); level 0 always gets intra-node bandwidth. | [`super::rules`] (2D restriction); [`super::network::LevelBw::sel`]. |
//! | Q6 | The README names a path that does not exist. | Nothing to reproduce (the CLI reads files by the path given). |
//! | Q7 | The embedding all-reduce branch tests the *first* level's strategy, not the current one. | [`super::ReferenceCx::emb_backward_comm`]. |
//! | Q8 | The embedding gradient all-reduce is sized by lookup bytes, not table size. | [`super::ReferenceCx::emb_backward_comm`]. |
//! | Q9a | DLRM_T top-MLP backward TP all-reduce selects bandwidth with the transformer spec's length. | [`super::dlrm_transformer::build`] passes `k_t` to `Mlp::top_backward`. |
//! | Q9b | DLRM_T attention backward TP all-reduce selects bandwidth with the MLP spec's length. | [`super::dlrm_transformer::build`], `act_ar_s(k_m, ..)`. |
//! | Q10 | DLRM's bottom-MLP backward all-gather waits for `MLPBot{j+2}_b` (a computed set is discarded). | [`super::dlrm::build`]. |
//! | Q11 | DLRM_MoE names a dependency `MLPTop{i-1}_f_c_act_MoE.` that is never emitted. | Omitted in `Mlp::top_forward_with` ([`super::dlrm`]): it matches nothing. |
//! | Q12 | DLRM_T attention backward waits for the FC all-reduce of the layer *above*. | [`super::dlrm_transformer::build`]. |
//! | Q13 | Gradient collective sizes use a running shard factor, so they depend on level order. | [`super::ReferenceCx::grad_walk`]. |
//! | Q14 | DLRM_T bottom-MLP backward all-gather reuses a stale dependency set; its `elif` compares the wrong loop index. | [`super::dlrm_transformer::build`], the `bottom_backward` closure. |
//! | Q15 | FLOPs are divided by the *last* tp level's degree. | [`super::quantities::Factors::of`]. |
//! | Q16 | `pp` only shards weight memory: no pipeline ops, bubbles or FLOP division. | [`super::quantities::Factors::of`] (`shard`), [`super::ReferenceCx::grad_walk`] (no step). |
//! | Q17 | Dependencies on ops of the *same* stream are inert. | [`super::graph::GraphBuilder`]: a dependency resolves only on the other stream. |
//! | Q18 | Dependencies with out-of-range layer indices match nothing. | [`super::graph::GraphBuilder`] (slots outside the layer range resolve to nothing); `MLPTop1_b.` in [`super::dlrm_transformer`]. |
//! | Q19 | MoE weight collectives move all X experts; MoE all-to-alls are sized `activations/X` and exist only with a tp level. | [`super::quantities`] (`top_mlp_block`, `fc_block`); `moe_a2a_s` in [`super::dlrm`] and [`super::transformer`]. |
//! | Q20 | A task module for "Seamless" is listed but does not exist. | Unreachable: `model.type` "Seamless" is rejected by validation. |
//! | Q21 | A hard barrier separates forward and backward; exposed communication counts every compute-stream gap. | [`crate::engine::schedule::Scheduler::with_phase_barrier`], [`crate::engine::report::Report::assemble`] (shared: this *is* the MAD-Max definition). |
//! | Q22 | Freezing removes only weight-gradient communication; frozen layers still pay backward GEMMs and TP all-reduces (DLRM bottom/embedding parts are skipped). | [`super::dlrm`], [`super::transformer`], [`super::dlrm_transformer`] (freeze gates). |
//! | Q23 | `mem_cap` is never compared with memory use; memory is weights only. | [`super::ReferenceCx`] `memory()`; the report carries the capacity for faces to compare. |
//! | Q24 | DLRM MLP TP all-reduces fire after odd layers forward, even layers backward; transformers after every block. Tp MLPs need even layer counts. | [`super::dlrm`]; [`super::rules`]. |
//! | Q25 | Throughput is `(1 / t_end) * global_bs`. | [`crate::engine::report::Report::assemble`]. |
//! | Q26 | Heads are unused; attention FLOPs ignore the s^2 terms; ViT has no class token and a `3p^2` vocabulary. | [`super::quantities`]; [`crate::engine::scenario::Vit`]. |
//! | Q27 | AG and RS bandwidths are twice the AR vector; 1-level all-to-all uses pure inter-node bandwidth. | [`super::network::Network::new`]. |
//! | Q28 | Overlapped communication can be a tiny negative number. | [`crate::engine::report::Report::assemble`] (not clamped in reference mode; the default model clamps it). |
//! | Q29 | No shipped finetune configs; shipped configs rarely exercise tp/pp. | Nothing to reproduce: the goldens cover these. |
//! | Q30 | Dependencies match by substring; only `EMB_*_c` and dot-less names rely on it. | [`super::graph::Dep::EmbComm`] and structured names ([`crate::engine::ops::OpName`]). |
