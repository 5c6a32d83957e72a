//! The default model's collective cost model: latency plus bandwidth (alpha-beta) terms that
//! depend on the collective, the group's size, how its members sit on nodes, the algorithm and
//! the links that carry the bytes.
//!
//! Bandwidths are per GPU and one direction. Across nodes a GPU gets its share of the node's
//! NICs (every GPU of a node communicates at once in a data-parallel or pipeline step). Sources:
//! Thakur, Rabenseifner and Gropp 2005 (ring and tree costs), Sergeev/NCCL (double binary
//! trees), Cho et al. 2019 (PowerAI DDL's hierarchical multi-ring), Sapio et al. 2021
//! (SwitchML: in-network aggregation halves an all-reduce's bytes per host).

use super::calibration::{COLLECTIVE_BASE_S, NIC_STEP_S, NVLINK_STEP_S};
use crate::engine::scenario::Algorithm;

/// A collective operation. Sizes are the bytes one rank holds: for an all-reduce its buffer,
/// for an all-gather the gathered result, for a reduce-scatter its input, for an all-to-all
/// what it sends in total, for a point-to-point transfer what it sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collective {
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    PointToPoint,
}

/// A communication group: `size` ranks, of which `per_node` share each node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group {
    pub size: u64,
    pub per_node: u64,
}

impl Group {
    /// A group of one: nothing to communicate.
    pub const ONE: Group = Group { size: 1, per_node: 1 };

    /// Nodes the group spans.
    pub fn nodes(&self) -> u64 {
        (self.size / self.per_node.max(1)).max(1)
    }

    /// True when every member is in one node.
    pub fn within_node(&self) -> bool {
        self.nodes() == 1
    }
}

/// The links a GPU communicates over.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Links {
    /// NVLink (or PCIe) bandwidth per GPU within a node, one direction, bytes/s.
    pub intra_bytes_per_s: f64,
    /// A GPU's share of its node's NIC bandwidth, one direction, bytes/s.
    pub inter_bytes_per_s: f64,
}

/// The time of a collective, s: a launch cost plus, per stage, `steps x alpha + bytes /
/// bandwidth`.
pub fn time_s(c: Collective, bytes: f64, g: Group, links: &Links, alg: Algorithm) -> f64 {
    if g.size <= 1 || bytes <= 0.0 {
        return 0.0;
    }
    COLLECTIVE_BASE_S + transfer_s(c, bytes, g, links, alg)
}

/// A collective's time without its launch cost, s.
fn transfer_s(c: Collective, bytes: f64, g: Group, links: &Links, alg: Algorithm) -> f64 {
    let (bi, bx) = (links.intra_bytes_per_s, links.inter_bytes_per_s);
    let d = g.size as f64;
    let k = g.per_node.clamp(1, g.size) as f64;
    let m = g.nodes() as f64;
    match c {
        Collective::PointToPoint => {
            if g.within_node() {
                bytes / bi + NVLINK_STEP_S
            } else {
                bytes / bx + NIC_STEP_S
            }
        }
        Collective::AllToAll => {
            // Each rank keeps 1/d, sends (k-1)/d over NVLink and (d-k)/d over the NICs; the two
            // links work at once.
            let intra = bytes * (k - 1.0) / d / bi + (k - 1.0) * NVLINK_STEP_S;
            let inter = if m > 1.0 { bytes * (d - k) / d / bx + (m - 1.0) * NIC_STEP_S } else { 0.0 };
            intra.max(inter)
        }
        Collective::AllReduce | Collective::AllGather | Collective::ReduceScatter => {
            // An all-reduce is a reduce-scatter then an all-gather: twice the traffic.
            let twice = if c == Collective::AllReduce { 2.0 } else { 1.0 };
            if m <= 1.0 {
                return twice * ((d - 1.0) / d * bytes / bi + steps(alg, d) * NVLINK_STEP_S);
            }
            match alg {
                Algorithm::Ring => {
                    // One ring through every member: each node's NICs carry every byte once per
                    // ring, shared by the node's n/k concurrent groups, so a member's effective
                    // bandwidth is k times its NIC share (capped by NVLink).
                    let bw = (k * bx).min(bi);
                    twice * ((d - 1.0) / d * bytes / bw + (d - 1.0) * NIC_STEP_S)
                }
                Algorithm::Tree | Algorithm::Hierarchical | Algorithm::InNetwork => {
                    // Within the node on the full data, across nodes on 1/k of it.
                    let intra = twice * ((k - 1.0) / k * bytes / bi + steps(alg, k) * NVLINK_STEP_S);
                    let share = bytes / k;
                    let inter = if alg == Algorithm::InNetwork && c == Collective::AllReduce {
                        // The switch reduces: each host sends its share once and receives the
                        // sum once, instead of 2 (m-1)/m of it each way.
                        share / bx + 2.0 * NIC_STEP_S
                    } else {
                        twice * ((m - 1.0) / m * share / bx + steps(alg, m) * NIC_STEP_S)
                    };
                    intra + inter
                }
            }
        }
    }
}

/// Latency steps of one reduce-scatter or all-gather over `n` ranks.
fn steps(alg: Algorithm, n: f64) -> f64 {
    match alg {
        Algorithm::Tree => n.log2().ceil().max(1.0),
        _ => n - 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINKS: Links = Links { intra_bytes_per_s: 200e9, inter_bytes_per_s: 10e9 };

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() <= 1e-12 * b.abs().max(1e-9), "{a} vs {b}");
    }

    #[test]
    fn ring_all_reduce_within_a_node_is_two_times_d_minus_1_over_d() {
        let g = Group { size: 8, per_node: 8 };
        let t = time_s(Collective::AllReduce, 1e9, g, &LINKS, Algorithm::Ring);
        close(t, COLLECTIVE_BASE_S + 2.0 * 7.0 / 8.0 * 1e9 / 200e9 + 2.0 * 7.0 * NVLINK_STEP_S);
        // Reduce-scatter and all-gather move half of it.
        let rs = time_s(Collective::ReduceScatter, 1e9, g, &LINKS, Algorithm::Ring);
        close(2.0 * (rs - COLLECTIVE_BASE_S), t - COLLECTIVE_BASE_S);
    }

    #[test]
    fn hierarchical_all_reduce_sends_one_kth_across_nodes() {
        // 4 nodes of 8: within the node on 1 GB, across nodes on 1/8 GB.
        let g = Group { size: 32, per_node: 8 };
        let t = time_s(Collective::AllReduce, 1e9, g, &LINKS, Algorithm::Hierarchical);
        let intra = 2.0 * (7.0 / 8.0 * 1e9 / 200e9 + 7.0 * NVLINK_STEP_S);
        let inter = 2.0 * (3.0 / 4.0 * 1e9 / 8.0 / 10e9 + 3.0 * NIC_STEP_S);
        close(t, COLLECTIVE_BASE_S + intra + inter);
    }

    #[test]
    fn in_network_aggregation_halves_the_bytes_each_host_sends() {
        // One GPU per node, many nodes: ring sends ~2x the data, the switch 1x.
        let g = Group { size: 64, per_node: 1 };
        let ring = time_s(Collective::AllReduce, 1e9, g, &LINKS, Algorithm::Hierarchical);
        let switch = time_s(Collective::AllReduce, 1e9, g, &LINKS, Algorithm::InNetwork);
        let ratio = ring / switch;
        assert!((1.9..2.0).contains(&ratio), "ratio {ratio}");
    }

    #[test]
    fn tree_latency_grows_with_the_log_of_the_group() {
        let g = Group { size: 1024, per_node: 1 };
        let tiny = 1.0; // latency-bound
        let ring = time_s(Collective::AllReduce, tiny, g, &LINKS, Algorithm::Ring);
        let tree = time_s(Collective::AllReduce, tiny, g, &LINKS, Algorithm::Tree);
        close(ring, COLLECTIVE_BASE_S + 2.0 * (1023.0 / 1024.0 * tiny / 10e9 + 1023.0 * NIC_STEP_S));
        assert!(tree < ring / 50.0, "tree {tree} ring {ring}");
    }

    #[test]
    fn a_group_of_one_or_no_bytes_costs_nothing() {
        assert_eq!(time_s(Collective::AllReduce, 1e9, Group::ONE, &LINKS, Algorithm::Ring), 0.0);
        let g = Group { size: 8, per_node: 8 };
        assert_eq!(time_s(Collective::AllGather, 0.0, g, &LINKS, Algorithm::Ring), 0.0);
    }

    #[test]
    fn all_to_all_uses_both_links_at_once() {
        let g = Group { size: 16, per_node: 8 };
        let t = time_s(Collective::AllToAll, 1.6e9, g, &LINKS, Algorithm::Ring);
        let intra = 1.6e9 * 7.0 / 16.0 / 200e9 + 7.0 * NVLINK_STEP_S;
        let inter = 1.6e9 * 8.0 / 16.0 / 10e9 + NIC_STEP_S;
        close(t, COLLECTIVE_BASE_S + intra.max(inter));
    }
}
