//! Where a plan's parallel groups sit on the cluster. Levels are listed innermost first (level 0
//! varies fastest over consecutive GPUs, as in MAD-Max, where level 0 is within a node), so a
//! level's members are `stride` GPUs apart, `stride` being the product of the inner degrees.
//! A group whose stride times degree fits in a node stays on NVLink; otherwise its members are
//! spread over nodes and its collectives cross the NICs.

use super::collective::{Group, Placement};
use crate::engine::scenario::{Spec, Strategy};

/// The groups of a transformer plan.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout {
    pub tp: Group,
    pub cp: Group,
    pub pp: Group,
    pub ep: Group,
    /// Replicating data-parallel ranks (ddp levels).
    pub ddp: Group,
    /// Sharded data-parallel ranks (fsdp levels: ZeRO-3).
    pub fsdp: Group,
    /// Every data-parallel rank (ddp x fsdp): the expert weights' gradient group.
    pub dp: Group,
    /// Data-parallel ranks of the dense weights: dp x ep (experts are spread over ep, dense
    /// weights are replicated over it); each holds samples of its own.
    pub dense_dp: Group,
    /// Every rank that holds the same dense weights: `dense_dp x cp`. Context-parallel ranks
    /// hold the same weights and compute gradients from other tokens of the same samples, so
    /// their gradients are reduced together and ZeRO shards over them too (Megatron-core's
    /// data-parallel group with context parallelism, torchtitan's `dp_shard_cp` mesh,
    /// DeepSpeed-Ulysses' sequence-data-parallel group).
    pub weight_dp: Group,
}

impl Layout {
    /// The groups of `spec` on a cluster placed as `at`.
    pub fn of(spec: &Spec, at: Placement) -> Layout {
        let mut found = [Group::ONE; 6];
        let mut stride = 1u64;
        for l in spec.levels() {
            let g = at.group(l.degree, stride);
            let slot = match l.strategy {
                Strategy::Tp => 0,
                Strategy::Cp => 1,
                Strategy::Pp => 2,
                Strategy::Ep => 3,
                Strategy::Ddp | Strategy::Mp => 4,
                Strategy::Fsdp => 5,
            };
            found[slot] = found[slot].with(g);
            stride = stride.saturating_mul(l.degree);
        }
        let [tp, cp, pp, ep, ddp, fsdp] = found;
        let dp = ddp.with(fsdp);
        let dense_dp = dp.with(ep);
        Layout { tp, cp, pp, ep, ddp, fsdp, dp, dense_dp, weight_dp: dense_dp.with(cp) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::scenario::Level;

    fn spec(levels: &[(Strategy, u64)]) -> Spec {
        let l: Vec<Level> = levels.iter().map(|&(strategy, degree)| Level { strategy, degree }).collect();
        Spec::new(&l).expect("few levels")
    }

    #[test]
    fn megatron_order_keeps_tp_in_the_node_and_spreads_dp_and_pp() {
        // tp 4 x dp 16 x pp 2 on 8-GPU nodes: two tp groups per node, dp pairs within a node.
        let l = Layout::of(&spec(&[(Strategy::Tp, 4), (Strategy::Ddp, 16), (Strategy::Pp, 2)]), Placement::one_site(8));
        assert_eq!(l.tp, Group::new(4, 4));
        assert_eq!(l.dp, Group::new(16, 2));
        assert_eq!(l.pp, Group::new(2, 1));
        assert!(l.tp.within_node() && !l.dp.within_node() && !l.pp.within_node());
    }

    #[test]
    fn tp_wider_than_a_node_crosses_the_nics() {
        let l = Layout::of(&spec(&[(Strategy::Tp, 16), (Strategy::Ddp, 4)]), Placement::one_site(8));
        assert_eq!(l.tp, Group::new(16, 8));
        assert_eq!(l.tp.nodes(), 2);
        assert_eq!(l.dp.per_node, 1);
    }

    #[test]
    fn hybrid_sharding_shards_within_the_node_and_replicates_across() {
        let l = Layout::of(&spec(&[(Strategy::Fsdp, 8), (Strategy::Ddp, 32)]), Placement::one_site(8));
        assert_eq!(l.fsdp, Group::new(8, 8));
        assert_eq!(l.ddp, Group::new(32, 1));
        assert_eq!(l.dp, Group::new(256, 8));
        assert_eq!(l.dense_dp, l.dp);
    }

    #[test]
    fn sites_hold_consecutive_nodes() {
        // tp 8 x fsdp 8 x ddp 4 on 4 sites of 8 nodes of 8: the shards share a site, the
        // replicas are a site apart.
        let at = Placement { per_node: 8, per_site: 64 };
        let l = Layout::of(&spec(&[(Strategy::Tp, 8), (Strategy::Fsdp, 8), (Strategy::Ddp, 4)]), at);
        assert_eq!(l.tp, Group { size: 8, per_node: 8, per_site: 8 });
        assert_eq!(l.fsdp, Group { size: 8, per_node: 1, per_site: 8 });
        assert_eq!(l.ddp, Group { size: 4, per_node: 1, per_site: 1 });
        assert_eq!((l.dp.sites(), l.dp.nodes()), (4, 32));
        // On one site nothing crosses one.
        let one =
            Layout::of(&spec(&[(Strategy::Tp, 8), (Strategy::Fsdp, 8), (Strategy::Ddp, 4)]), Placement::one_site(8));
        assert_eq!(one.dp.sites(), 1);
    }
}
