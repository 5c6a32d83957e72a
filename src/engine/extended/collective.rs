//! The default model's collective cost model: latency plus bandwidth (alpha-beta) terms that
//! depend on the collective, the group's size, how its members sit on nodes, the algorithm and
//! the links that carry the bytes.
//!
//! Bandwidths are per GPU and one direction. Across nodes a GPU gets its share of the node's
//! NICs (every GPU of a node communicates at once in a data-parallel or pipeline step). Sources:
//! Thakur, Rabenseifner and Gropp 2005 (ring and tree costs), Sergeev/NCCL (double binary
//! trees), Cho et al. 2019 (PowerAI DDL's hierarchical multi-ring), Sapio et al. 2021
//! (SwitchML: in-network aggregation halves an all-reduce's bytes per host).

use super::calibration::{
    Protocol, COLLECTIVE_BASE_S, CUSTOM_ALL_REDUCE_BASE_S, CUSTOM_ALL_REDUCE_MAX_BYTES, CUSTOM_ALL_REDUCE_PEER_S,
    DEEPEP_RDMA_SHARE, PROTOCOLS, TREE_BW_SHARE,
};
use crate::engine::scenario::Algorithm;

/// A collective operation. Sizes are the bytes one rank holds: for an all-reduce its buffer,
/// for an all-gather the gathered result, for a reduce-scatter its input, for an all-to-all
/// what it sends in total, for a point-to-point transfer what it sends, for a broadcast what
/// its root sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collective {
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    PointToPoint,
    Broadcast,
}

/// A communication group: `size` ranks, of which `per_node` share each node and `per_site`
/// each site (a datacenter, building or home; the whole group on a cluster of one site).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group {
    pub size: u64,
    pub per_node: u64,
    pub per_site: u64,
}

impl Group {
    /// A group of one: nothing to communicate.
    pub const ONE: Group = Group::new(1, 1);

    /// A group of `size` ranks, `per_node` on each node, all in one site.
    pub const fn new(size: u64, per_node: u64) -> Group {
        Group { size, per_node, per_site: size }
    }

    /// Nodes the group spans.
    pub fn nodes(&self) -> u64 {
        (self.size / self.per_node.max(1)).max(1)
    }

    /// Sites the group spans.
    pub fn sites(&self) -> u64 {
        (self.size / self.per_site.max(1)).max(1)
    }

    /// True when every member is in one node.
    pub fn within_node(&self) -> bool {
        self.nodes() == 1
    }

    /// The group formed by this group's members and `inner`'s together (their levels are
    /// nested).
    pub fn with(self, inner: Group) -> Group {
        let size = self.size.saturating_mul(inner.size);
        let per = |a: u64, b: u64| a.saturating_mul(b).min(size);
        Group { size, per_node: per(self.per_node, inner.per_node), per_site: per(self.per_site, inner.per_site) }
    }

    /// The group of this group's first `n` members (its innermost part), `n` dividing its size.
    pub fn inner(self, n: u64) -> Group {
        Group { size: n, per_node: self.per_node.min(n), per_site: self.per_site.min(n) }
    }

    /// The group of every `n`-th member (what is left of it outside [`Group::inner`]`(n)`).
    pub fn outer(self, n: u64) -> Group {
        let size = (self.size / n.max(1)).max(1);
        let per = |within: u64| (within / n.max(1)).clamp(1, size);
        Group { size, per_node: per(self.per_node), per_site: per(self.per_site) }
    }

    /// Two neighbouring members (adjacent pipeline stages): on one node, or one site, when
    /// the group has two members there.
    pub fn neighbours(self) -> Group {
        Group { size: 2, per_node: self.per_node.min(2), per_site: self.per_site.min(2) }
    }
}

/// How a cluster's GPUs sit: `per_node` on each node, `per_site` on each site.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    pub per_node: u64,
    pub per_site: u64,
}

impl Placement {
    /// Nodes of `per_node` GPUs, all in one site.
    pub const fn one_site(per_node: u64) -> Placement {
        Placement { per_node, per_site: u64::MAX }
    }

    /// The placement of `sys`'s GPUs.
    pub fn of(sys: &crate::engine::scenario::System) -> Placement {
        Placement { per_node: sys.devices_per_node(), per_site: sys.devices_per_site() }
    }

    /// The group of `degree` ranks `stride` GPUs apart (a plan's level, its inner levels'
    /// degrees multiplied being `stride`): as many share a node (a site) as fit in its span.
    pub fn group(self, degree: u64, stride: u64) -> Group {
        let within = |span: u64| if stride >= span { 1 } else { (span / stride).clamp(1, degree) };
        Group { size: degree, per_node: within(self.per_node), per_site: within(self.per_site) }
    }
}

/// The links a GPU communicates over.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Links {
    /// NVLink (or PCIe) bandwidth per GPU within a node, one direction, bytes/s.
    pub intra_bytes_per_s: f64,
    /// A GPU's share of its node's NIC bandwidth, one direction, bytes/s.
    pub inter_bytes_per_s: f64,
    /// Latency every hop between nodes adds to the protocol's own, s
    /// ([`crate::engine::scenario::System::nic_latency_s`]).
    pub inter_latency_s: f64,
    /// Latency every hop within a node adds to the protocol's own, s
    /// ([`crate::engine::scenario::System::nvlink_latency_s`]).
    pub intra_latency_s: f64,
    /// A GPU's share of its site's wide-area bandwidth, one direction, bytes/s (infinite on a
    /// cluster of one site).
    pub wan_bytes_per_s: f64,
    /// Latency every hop between sites adds to the protocol's network hop, s (in place of
    /// `inter_latency_s`).
    pub wan_latency_s: f64,
}

impl Links {
    /// A GPU's links on `sys`, after the utilisation factors: NVLink per GPU, its share of its
    /// node's NICs and of its site's wide-area link (every GPU communicates at once in a
    /// data-parallel step). The wide-area bandwidth is taken as stated: the rate transfers
    /// reach, with no utilisation factor.
    pub fn of(sys: &crate::engine::scenario::System) -> Links {
        let (wan_bytes_per_s, wan_latency_s) = match &sys.wan {
            Some(w) => (w.bytes_per_s / sys.devices_per_site() as f64, w.latency_s),
            None => (f64::INFINITY, 0.0),
        };
        Links {
            intra_bytes_per_s: sys.num_nvlinks * (sys.bw_per_nvlink_bytes_per_s / 2.0) * sys.nvlink_util,
            inter_bytes_per_s: sys.num_ibroce_ports * (sys.ibroce_bw_bytes_per_s / 2.0) * sys.ibroce_util
                / sys.devices_per_node() as f64,
            inter_latency_s: sys.nic_latency_s,
            intra_latency_s: sys.nvlink_latency_s,
            wan_bytes_per_s,
            wan_latency_s,
        }
    }
}

/// The time of a collective, s: a launch cost plus, per stage, `steps x alpha + bytes /
/// bandwidth`, with the NCCL protocol that makes it shortest ([`PROTOCOLS`]) for all-reduces,
/// all-gathers and reduce-scatters (LL128 within a node only); point-to-point transfers and
/// all-to-alls use Simple.
pub fn time_s(c: Collective, bytes: f64, g: Group, links: &Links, alg: Algorithm) -> f64 {
    if g.size <= 1 || bytes <= 0.0 {
        return 0.0;
    }
    match c {
        Collective::PointToPoint | Collective::AllToAll => {
            COLLECTIVE_BASE_S + transfer_s(c, bytes, g, links, alg, &PROTOCOLS[0])
        }
        _ => PROTOCOLS
            .iter()
            .filter(|p| g.within_node() || !p.within_node_only)
            .map(|p| p.base_s + transfer_s(c, bytes, g, links, alg, p))
            .fold(f64::INFINITY, f64::min),
    }
}

/// A mixture of experts' routing across nodes: the expected number of nodes, its own included,
/// that hold at least one of a token's `active` experts, the `experts` spread evenly over `nodes`
/// and chosen uniformly without repetition: `m (1 - C(E - E/m, a) / C(E, a))`.
pub fn nodes_per_token(experts: f64, active: f64, nodes: f64) -> f64 {
    if nodes <= 1.0 {
        return 1.0;
    }
    let elsewhere = experts - experts / nodes;
    // The chance that none of the token's experts sits on a given node.
    let none =
        (0..active.max(0.0) as u64).map(|i| ((elsewhere - i as f64) / (experts - i as f64)).max(0.0)).product::<f64>();
    nodes * (1.0 - none)
}

/// The time of one all-to-all of a mixture of experts' dispatch or combine by DeepEP's normal
/// kernels, s: `routed_bytes` per rank, the copies of its tokens, one per expert each visits
/// (`active` of `experts`). Within a node it is timed as NCCL's ([`time_s`]). Across nodes a
/// token goes once to each node holding one of its experts ([`nodes_per_token`]), to the rank
/// of the same local index, which forwards it over NVLink: the pairs at [`DEEPEP_RDMA_SHARE`]
/// of the NIC's line rate `nic_line_bytes_per_s` per GPU (DeepEP counts the own node's pairs
/// in that rate), or the copies over NVLink, whichever takes longer, plus a launch.
pub fn deepep_all_to_all_s(
    routed_bytes: f64,
    (experts, active): (f64, f64),
    g: Group,
    links: &Links,
    nic_line_bytes_per_s: f64,
) -> f64 {
    if g.within_node() {
        return time_s(Collective::AllToAll, routed_bytes, g, links, Algorithm::Ring);
    }
    let pairs_bytes = routed_bytes / active * nodes_per_token(experts, active, g.nodes() as f64);
    let rdma_s = pairs_bytes / (nic_line_bytes_per_s * DEEPEP_RDMA_SHARE);
    COLLECTIVE_BASE_S + rdma_s.max(routed_bytes / links.intra_bytes_per_s)
}

/// The time of an all-reduce of `bytes` per rank in a serving engine that has its own kernels
/// (vLLM, SGLang, TensorRT-LLM), s, and the kernel it runs: within a node and up to
/// [`CUSTOM_ALL_REDUCE_MAX_BYTES`], the fastest of NCCL ([`time_s`]) and the engines' one-shot
/// and two-shot kernels; otherwise NCCL's. One-shot is one phase in which
/// every GPU reads all `p - 1` peers' buffers; two-shot is two phases (reduce-scatter, then
/// all-gather) moving `(p - 1)/p` of the buffer each. A phase costs
/// [`CUSTOM_ALL_REDUCE_BASE_S`] plus [`CUSTOM_ALL_REDUCE_PEER_S`] per peer: one flag exchange
/// where NCCL's ring pays a hop per GPU, so small messages (a decode step's) finish several
/// times sooner.
pub fn engine_all_reduce(bytes: f64, g: Group, links: &Links, alg: Algorithm) -> (f64, AllReduceKernel) {
    let nccl = (time_s(Collective::AllReduce, bytes, g, links, alg), AllReduceKernel::Nccl);
    if g.size <= 1 || bytes <= 0.0 || bytes > CUSTOM_ALL_REDUCE_MAX_BYTES || !g.within_node() {
        return nccl;
    }
    let p = g.size as f64;
    let phase_s = CUSTOM_ALL_REDUCE_BASE_S + (p - 1.0) * CUSTOM_ALL_REDUCE_PEER_S + links.intra_latency_s;
    let one_shot = phase_s + (p - 1.0) * bytes / links.intra_bytes_per_s;
    let two_shot = 2.0 * (phase_s + (p - 1.0) / p * bytes / links.intra_bytes_per_s);
    [(one_shot, AllReduceKernel::OneShot), (two_shot, AllReduceKernel::TwoShot)].into_iter().fold(nccl, |best, k| {
        if k.0 < best.0 {
            k
        } else {
            best
        }
    })
}

/// The kernel a serving engine's all-reduce runs ([`engine_all_reduce`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllReduceKernel {
    Nccl,
    OneShot,
    TwoShot,
}

impl AllReduceKernel {
    /// What the kernel does, in words.
    pub fn words(self) -> &'static str {
        match self {
            AllReduceKernel::Nccl => "NCCL's ring or tree is the fastest for this message",
            AllReduceKernel::OneShot => {
                "The engine's one-shot kernel is the fastest for this message: every GPU reads all its peers' buffers over NVLink and sums them, one phase of latency instead of a ring hop per GPU"
            }
            AllReduceKernel::TwoShot => {
                "The engine's two-shot kernel is the fastest for this message: each GPU sums its share of every peer's buffer, then gathers the other shares, two phases of latency and the ring's bytes"
            }
        }
    }
}

/// A collective's time without its launch cost with protocol `p`, s. A group crosses up to
/// three levels: NVLink within a node, the NICs between a site's nodes, and the wide-area link
/// between sites (absent on a cluster of one site, where every formula is the two-level one).
fn transfer_s(c: Collective, bytes: f64, g: Group, links: &Links, alg: Algorithm, p: &Protocol) -> f64 {
    let share = if c == Collective::AllReduce { p.all_reduce_bw_share } else { p.gather_bw_share };
    let (bi, bx, bw) =
        (links.intra_bytes_per_s * share, links.inter_bytes_per_s * share, links.wan_bytes_per_s * share);
    let h = Hops::of(g, links, p);
    let (d, k, s, m, w, ms) = (h.d, h.k, h.s, h.m, h.w, h.ms);
    match c {
        Collective::PointToPoint => {
            if g.within_node() {
                bytes / bi + h.nvl_s
            } else if w <= 1.0 {
                bytes / bx + h.nic_s
            } else {
                bytes / bx.min(bw) + h.wan_s
            }
        }
        Collective::AllToAll => {
            // Each rank keeps 1/d, sends (k-1)/d over NVLink, (d-k)/d through its NICs and
            // (d-s)/d of that over the wide-area link; the links work at once. NCCL's all-to-all
            // is a group of sends and receives to every peer at once, so the node's peers cost
            // one NVLink step, not one each as a ring's hops do: nccl-tests time a 1 KB
            // all-to-all over a node's 8 A100s at 9.34 us (NCCL 2.17.1; microsoft/mscclpp,
            // `docs/performance-ndmv4.md` at commit 85e664c), a base and a step. Across nodes
            // the model keeps a network step per other node: the same page's cross-node
            // all-to-alls (29.84 us over two nodes of one GPU, 49.75 over two of 8) take longer
            // still, about 3 us more per remote peer, which no second source measures yet.
            let intra = bytes * (k - 1.0) / d / bi + if k > 1.0 { h.nvl_s } else { 0.0 };
            let inter = if m > 1.0 { bytes * (d - k) / d / bx + (ms - 1.0) * h.nic_s } else { 0.0 };
            let wan = if w > 1.0 { bytes * (d - s) / d / bw + (w - 1.0) * h.wan_s } else { 0.0 };
            intra.max(inter).max(wan)
        }
        // NCCL broadcasts along its ring: the root's bytes cross every hop once, pipelined in
        // chunks, and pay the ring's latency, as an all-gather moves (d - 1)/d of its buffer,
        // here one d/(d - 1) times the root's bytes, charged as the model charges that
        // all-gather: on the ring asked for, else on NCCL's default path, which pays the ring's
        // latency (no tree and no switch sums a broadcast).
        Collective::Broadcast => {
            let path = if alg == Algorithm::Ring { Algorithm::Ring } else { Algorithm::Hierarchical };
            transfer_s(Collective::AllGather, bytes * d / (d - 1.0), g, links, path, p)
        }
        // NCCL's trees: all-reduces across nodes only.
        Collective::AllReduce if alg == Algorithm::Tree && !g.within_node() => tree_all_reduce_s(bytes, g, links, p),
        // NCCL builds trees to cross nodes and runs only all-reduces on them: within a node, and
        // for all-gathers and reduce-scatters, a tree asked for runs as NCCL's default path.
        Collective::AllReduce | Collective::AllGather | Collective::ReduceScatter if alg == Algorithm::Tree => {
            transfer_s(c, bytes, g, links, Algorithm::Hierarchical, p)
        }
        Collective::AllReduce | Collective::AllGather | Collective::ReduceScatter => {
            // An all-reduce is a reduce-scatter then an all-gather: twice the traffic.
            let twice = if c == Collective::AllReduce { 2.0 } else { 1.0 };
            if m <= 1.0 {
                return twice * ((d - 1.0) / d * bytes / bi + (d - 1.0) * h.nvl_s);
            }
            // A ring through every member, node after node, has d - 1 hops, m - 1 of them across
            // nodes (w - 1 of those across sites): NCCL's ring latency (`src/graph/tuning.cc`),
            // which grows with the group.
            let ring_hops_s = (w - 1.0) * h.wan_s + (m - w) * h.nic_s + (d - m) * h.nvl_s;
            if alg == Algorithm::Ring {
                // k rings in parallel, one per NIC: each node's NICs carry every byte once per
                // ring, shared by the node's n/k concurrent groups, so a member's effective
                // bandwidth is k times its NIC share (capped by NVLink); a site's wide-area
                // link likewise gives a member s times its share.
                let across_sites = if w > 1.0 { s * bw } else { f64::INFINITY };
                let ring_bw = (k * bx).min(bi).min(across_sites);
                return twice * ((d - 1.0) / d * bytes / ring_bw + ring_hops_s);
            }
            // Within the node on the full data, across a site's nodes on 1/k of it, across
            // sites on 1/s.
            let intra_bytes_s = (k - 1.0) / k * bytes / bi;
            let share = bytes / k;
            let inter_bytes_s = (ms - 1.0) / ms * share / bx;
            let wan_bytes_s = if w > 1.0 { (w - 1.0) / w * bytes / s / bw } else { 0.0 };
            if alg == Algorithm::Hierarchical && c != Collective::AllReduce {
                // NCCL has no two-level all-gather or reduce-scatter: it runs them as rings, so
                // they pay the ring's latency. Their bytes are charged as the two-level path's,
                // the path the utilisation constants were measured on.
                return intra_bytes_s + inter_bytes_s + wan_bytes_s + ring_hops_s;
            }
            let intra = twice * (intra_bytes_s + (k - 1.0) * h.nvl_s);
            let inter = if alg == Algorithm::InNetwork && c == Collective::AllReduce {
                // The switch reduces: each host sends its share once and receives the sum
                // once, instead of 2 (m-1)/m of it each way (within a site: switches do not
                // span a wide-area link).
                if ms > 1.0 {
                    share / bx + 2.0 * h.nic_s
                } else {
                    0.0
                }
            } else {
                twice * (inter_bytes_s + (ms - 1.0) * h.nic_s)
            };
            let wan = if w > 1.0 { twice * (wan_bytes_s + (w - 1.0) * h.wan_s) } else { 0.0 };
            intra + inter + wan
        }
    }
}

/// A group's shape and its hops' latencies with protocol `p`.
struct Hops {
    /// Ranks.
    d: f64,
    /// Ranks per node.
    k: f64,
    /// Ranks per site.
    s: f64,
    /// Nodes.
    m: f64,
    /// Sites.
    w: f64,
    /// Nodes per site.
    ms: f64,
    /// A hop within a node, across a site's nodes, and between sites, s.
    nvl_s: f64,
    nic_s: f64,
    wan_s: f64,
}

impl Hops {
    fn of(g: Group, links: &Links, p: &Protocol) -> Hops {
        let k = g.per_node.clamp(1, g.size);
        let s = g.per_site.clamp(k, g.size);
        let m = g.nodes() as f64;
        let w = (g.size / s).max(1) as f64;
        Hops {
            d: g.size as f64,
            k: k as f64,
            s: s as f64,
            m,
            w,
            ms: m / w,
            nvl_s: p.nvlink_step_s + links.intra_latency_s,
            nic_s: p.nic_step_s + links.inter_latency_s,
            wan_s: p.nic_step_s + links.wan_latency_s,
        }
    }
}

/// A tree all-reduce across nodes as NCCL's tuner costs it (`src/graph/tuning.cc`): a chain
/// through each node's GPUs and a double binary tree across nodes, reduced up and broadcast
/// down (2 (k - 1) hops over NVLink, 2 floor(log2 m) across nodes at the tree's network hop
/// latency), moving the two-level path's bytes at [`TREE_BW_SHARE`] of the protocol's
/// bandwidth, less at medium sizes (`tree_correction`). Its log latency pays across many nodes;
/// its bandwidth, never. Across sites the tree within each site is joined by one across the
/// sites (floor(log2 w) hops at the wide-area latency, the three-level path's bytes).
fn tree_all_reduce_s(bytes: f64, g: Group, links: &Links, p: &Protocol) -> f64 {
    let h = Hops::of(g, links, p);
    let (k, s, ms, w) = (h.k, h.s, h.ms, h.w);
    // NCCL's index: log2 of the size in 64-byte units, rounded down.
    let size_class = (bytes / 64.0).max(1.0).log2().floor() as usize;
    let correction = p.tree_correction.get(size_class).copied().unwrap_or(1.0);
    let share = p.all_reduce_bw_share * TREE_BW_SHARE * correction;
    let (bi, bx) = (links.intra_bytes_per_s * share, links.inter_bytes_per_s * share);
    // NCCL's tuner counts floor(log2 m) network hops each way (its `log2i`).
    let hops_s = 2.0
        * ((k - 1.0) * h.nvl_s
            + ms.log2().floor() * (p.tree_nic_step_s + links.inter_latency_s)
            + w.log2().floor() * (p.tree_nic_step_s + links.wan_latency_s));
    let wan_s = if w > 1.0 { (w - 1.0) / w * bytes / s / (links.wan_bytes_per_s * share) } else { 0.0 };
    hops_s + 2.0 * ((k - 1.0) / k * bytes / bi + (ms - 1.0) / ms * bytes / k / bx + wan_s)
}

#[cfg(test)]
mod tests {
    use super::super::calibration::{NIC_STEP_S, NVLINK_STEP_S};
    use super::*;

    const LINKS: Links = Links {
        intra_bytes_per_s: 200e9,
        inter_bytes_per_s: 10e9,
        inter_latency_s: 0.0,
        intra_latency_s: 0.0,
        wan_bytes_per_s: f64::INFINITY,
        wan_latency_s: 0.0,
    };

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() <= 1e-12 * b.abs().max(1e-9), "{a} vs {b}");
    }

    #[test]
    fn a_token_reaches_fewer_nodes_than_it_has_experts() {
        // One node: every token stays home. One expert per token: one node.
        close(nodes_per_token(128.0, 8.0, 1.0), 1.0);
        close(nodes_per_token(128.0, 1.0, 4.0), 1.0);
        // 8 of 128 experts over 4 nodes: a node misses all 8 with probability
        // C(96, 8) / C(128, 8), about 9.5%, so about 3.63 nodes, not 8 copies.
        let none: f64 = (0..8).map(|i| (96.0 - i as f64) / (128.0 - i as f64)).product();
        close(nodes_per_token(128.0, 8.0, 4.0), 4.0 * (1.0 - none));
        assert!((nodes_per_token(128.0, 8.0, 4.0) - 3.63).abs() < 0.01);
        // As many nodes as experts: each expert on its own node, each copy its own node.
        close(nodes_per_token(8.0, 2.0, 8.0), 2.0);
        // Never more nodes than there are.
        assert!(nodes_per_token(256.0, 64.0, 4.0) <= 4.0);
    }

    #[test]
    fn deepep_sends_a_token_once_per_node_at_the_line_rate_and_is_nccls_within_a_node() {
        let (tokens, token_bytes, line) = (2048.0, 8192.0, 50e9);
        let moe = (128.0, 8.0);
        let routed = tokens * token_bytes * 8.0;
        // Within a node it is NCCL's all-to-all of every routed copy.
        let node = Group::new(8, 8);
        let within = deepep_all_to_all_s(routed, moe, node, &LINKS, line);
        close(within, time_s(Collective::AllToAll, tokens * token_bytes * 8.0, node, &LINKS, Algorithm::Ring));
        // Over 4 nodes: the (token, node) pairs at the source's share of the line rate.
        let four = Group::new(32, 8);
        let pairs = tokens * nodes_per_token(128.0, 8.0, 4.0);
        let across = deepep_all_to_all_s(routed, moe, four, &LINKS, line);
        close(across, COLLECTIVE_BASE_S + pairs * token_bytes / (line * DEEPEP_RDMA_SHARE));
        // NCCL sends each remote copy through the NICs: 6 of a token's 8 here, where DeepEP
        // sends 2.7 of its 3.6 pairs across (its rate counts all 3.6): at the same NIC rate,
        // 6 / (3.63 / 1.02), 1.7 times the time.
        let links = Links { inter_bytes_per_s: line, ..LINKS };
        let nccl = time_s(Collective::AllToAll, tokens * token_bytes * 8.0, four, &links, Algorithm::Ring);
        let deepep = deepep_all_to_all_s(routed, moe, four, &links, line);
        assert!(nccl > 1.6 * deepep && nccl < 1.8 * deepep, "{nccl} vs {deepep}");
        // Fast NICs: NVLink's forwarding of every copy bounds it.
        let fast = deepep_all_to_all_s(routed, moe, four, &LINKS, 1e15);
        close(fast, COLLECTIVE_BASE_S + tokens * token_bytes * 8.0 / LINKS.intra_bytes_per_s);
    }

    #[test]
    fn ring_all_reduce_within_a_node_is_two_times_d_minus_1_over_d() {
        let g = Group::new(8, 8);
        let t = time_s(Collective::AllReduce, 1e9, g, &LINKS, Algorithm::Ring);
        close(t, COLLECTIVE_BASE_S + 2.0 * 7.0 / 8.0 * 1e9 / 200e9 + 2.0 * 7.0 * NVLINK_STEP_S);
        // Reduce-scatter and all-gather move half of it.
        let rs = time_s(Collective::ReduceScatter, 1e9, g, &LINKS, Algorithm::Ring);
        close(2.0 * (rs - COLLECTIVE_BASE_S), t - COLLECTIVE_BASE_S);
    }

    #[test]
    fn hierarchical_all_reduce_sends_one_kth_across_nodes() {
        // 4 nodes of 8: within the node on 1 GB, across nodes on 1/8 GB.
        let g = Group::new(32, 8);
        let t = time_s(Collective::AllReduce, 1e9, g, &LINKS, Algorithm::Hierarchical);
        let intra = 2.0 * (7.0 / 8.0 * 1e9 / 200e9 + 7.0 * NVLINK_STEP_S);
        let inter = 2.0 * (3.0 / 4.0 * 1e9 / 8.0 / 10e9 + 3.0 * NIC_STEP_S);
        close(t, COLLECTIVE_BASE_S + intra + inter);
    }

    #[test]
    fn in_network_aggregation_halves_the_bytes_each_host_sends() {
        // One GPU per node, many nodes: ring sends ~2x the data, the switch 1x.
        let g = Group::new(64, 1);
        let ring = time_s(Collective::AllReduce, 1e9, g, &LINKS, Algorithm::Hierarchical);
        let switch = time_s(Collective::AllReduce, 1e9, g, &LINKS, Algorithm::InNetwork);
        let ratio = ring / switch;
        assert!((1.9..2.0).contains(&ratio), "ratio {ratio}");
    }

    /// NCCL's low-latency protocol (LL): a quarter of the bandwidth for all-reduces.
    const LL: Protocol = PROTOCOLS[2];

    #[test]
    fn tree_latency_grows_with_the_log_of_the_group() {
        let g = Group::new(1024, 1);
        let tiny = 1.0; // latency-bound: the LL protocol
        let ring = time_s(Collective::AllReduce, tiny, g, &LINKS, Algorithm::Ring);
        let tree = time_s(Collective::AllReduce, tiny, g, &LINKS, Algorithm::Tree);
        close(ring, LL.base_s + 2.0 * (1023.0 / 1024.0 * tiny / (10e9 * 0.25) + 1023.0 * LL.nic_step_s));
        // Up and down a tree of 1,024 nodes: 2 x 10 network hops at the tree's hop latency.
        let tree_bw = 10e9 * 0.25 * TREE_BW_SHARE * LL.tree_correction[0];
        close(tree, LL.base_s + 2.0 * 10.0 * LL.tree_nic_step_s + 2.0 * 1023.0 / 1024.0 * tiny / tree_bw);
        assert!(tree < ring / 50.0, "tree {tree} ring {ring}");
    }

    #[test]
    fn trees_lose_bandwidth_and_only_all_reduce_as_nccl_runs_them() {
        let nodes = Group::new(32, 8);
        // A gradient bucket across 4 nodes: the tree's 0.9 of the bandwidth makes it slower
        // than the two-level path; within a node a chain is never faster than the ring.
        let big = 1e9;
        let tree = time_s(Collective::AllReduce, big, nodes, &LINKS, Algorithm::Tree);
        let two_level = time_s(Collective::AllReduce, big, nodes, &LINKS, Algorithm::Hierarchical);
        assert!(tree > two_level && tree < two_level / 0.85, "tree {tree} two-level {two_level}");
        // Within a node NCCL builds no tree: the ring's time.
        let node = Group::new(8, 8);
        for bytes in [1e3, 1e6, 1e9] {
            let asked = time_s(Collective::AllReduce, bytes, node, &LINKS, Algorithm::Tree);
            close(asked, time_s(Collective::AllReduce, bytes, node, &LINKS, Algorithm::Ring));
        }
        // Medium messages lose more (NCCL's correction): 1 MiB is size class 14, half for Simple.
        let simple = PROTOCOLS[0];
        assert_eq!(simple.tree_correction[14], 0.5);
        let mib = 1024.0 * 1024.0;
        let t = tree_all_reduce_s(mib, nodes, &LINKS, &simple);
        let bw = |b: f64| b * TREE_BW_SHARE * 0.5;
        let hops = 2.0 * (7.0 * simple.nvlink_step_s + 2.0 * simple.tree_nic_step_s);
        close(t, hops + 2.0 * (7.0 / 8.0 * mib / bw(200e9) + 3.0 / 4.0 * mib / 8.0 / bw(10e9)));
        // All-gathers and reduce-scatters asked to run as trees run as NCCL runs them anyway.
        for c in [Collective::AllGather, Collective::ReduceScatter] {
            close(
                time_s(c, big, nodes, &LINKS, Algorithm::Tree),
                time_s(c, big, nodes, &LINKS, Algorithm::Hierarchical),
            );
        }
    }

    #[test]
    fn each_message_takes_the_nccl_protocol_that_is_fastest_for_its_size() {
        // A decode step's tensor-parallel all-reduce (one token of a 8,192-wide model, 16 kB)
        // over 8 GPUs of a node: LL, 14 hops of 0.6 us, not Simple's 3.4 us.
        let g = Group::new(8, 8);
        let small = time_s(Collective::AllReduce, 16384.0, g, &LINKS, Algorithm::Hierarchical);
        close(small, LL.base_s + 2.0 * (7.0 / 8.0 * 16384.0 / (200e9 * 0.25) + 7.0 * LL.nvlink_step_s));
        let simple = COLLECTIVE_BASE_S + 2.0 * (7.0 / 8.0 * 16384.0 / 200e9 + 7.0 * NVLINK_STEP_S);
        assert!(small < simple / 3.0, "{small} vs {simple}");
        // Megabytes within a node: LL128, which keeps 92% of the bandwidth at lower hop latency.
        let ll128 = PROTOCOLS[1];
        let mid = time_s(Collective::AllReduce, 4e6, g, &LINKS, Algorithm::Hierarchical);
        close(mid, ll128.base_s + 2.0 * (7.0 / 8.0 * 4e6 / (200e9 * 0.92) + 7.0 * ll128.nvlink_step_s));
        // A gradient bucket: Simple, the full bandwidth.
        let big = time_s(Collective::AllReduce, 1e9, g, &LINKS, Algorithm::Hierarchical);
        close(big, COLLECTIVE_BASE_S + 2.0 * (7.0 / 8.0 * 1e9 / 200e9 + 7.0 * NVLINK_STEP_S));
        // Across nodes LL128 is not used: megabytes go Simple.
        let nodes = Group::new(16, 8);
        let across = time_s(Collective::AllGather, 4e6, nodes, &LINKS, Algorithm::Ring);
        close(across, COLLECTIVE_BASE_S + 15.0 / 16.0 * 4e6 / 80e9 + NIC_STEP_S + 14.0 * NVLINK_STEP_S);
    }

    #[test]
    fn engine_all_reduce_kernels_take_a_small_message_in_one_phase() {
        use super::super::calibration::{CUSTOM_ALL_REDUCE_BASE_S as BASE, CUSTOM_ALL_REDUCE_PEER_S as PEER};
        let g = Group::new(8, 8);
        let alg = Algorithm::Hierarchical;
        // A decode step's 16 kB over 8 GPUs: one-shot, one phase of 7 peers, not NCCL's 14 hops.
        let (small, kind) = engine_all_reduce(16384.0, g, &LINKS, alg);
        assert_eq!(kind, AllReduceKernel::OneShot);
        close(small, BASE + 7.0 * PEER + 7.0 * 16384.0 / 200e9);
        assert!(small < time_s(Collective::AllReduce, 16384.0, g, &LINKS, alg) / 2.0);
        // Megabytes: two-shot, which moves 2 (p-1)/p of the buffer instead of p - 1 times it.
        let (mid, kind) = engine_all_reduce(4e6, g, &LINKS, alg);
        assert_eq!(kind, AllReduceKernel::TwoShot);
        close(mid, 2.0 * (BASE + 7.0 * PEER + 7.0 / 8.0 * 4e6 / 200e9));
        // Beyond the engines' 8 MiB buffer: NCCL.
        let (big, kind) = engine_all_reduce(9e6, g, &LINKS, alg);
        assert_eq!(kind, AllReduceKernel::Nccl);
        close(big, time_s(Collective::AllReduce, 9e6, g, &LINKS, alg));
        // Across nodes the engines fall back to NCCL.
        let nodes = Group::new(16, 8);
        let (across, _) = engine_all_reduce(16384.0, nodes, &LINKS, alg);
        close(across, time_s(Collective::AllReduce, 16384.0, nodes, &LINKS, alg));
        assert_eq!(engine_all_reduce(16384.0, Group::ONE, &LINKS, alg).0, 0.0);
    }

    #[test]
    fn engine_all_reduce_matches_a_published_h100_benchmark() {
        // vLLM PR #24111, 4 H100 SXM (NVLink 450 GB/s each way; nvlink_util 0.6667): the fastest
        // of its all-reduce kernels (custom one-/two-stage, NCCL, symmetric memory) per size, us.
        let h100 = Links { intra_bytes_per_s: 18.0 * 25e9 * 0.6667, inter_bytes_per_s: 50e9, ..LINKS };
        let g = Group::new(4, 4);
        let mib = 1024.0 * 1024.0;
        for (size_mib, best_us) in [(0.5, 10.0), (1.0, 15.0), (1.5, 19.0), (2.0, 22.0), (3.0, 25.0), (4.0, 29.0)] {
            let t_us = engine_all_reduce(size_mib * mib, g, &h100, Algorithm::Hierarchical).0 * 1e6;
            let err = t_us / best_us - 1.0;
            assert!(err.abs() <= 0.15, "{size_mib} MiB: {t_us:.1} us vs {best_us} us measured");
        }
    }

    #[test]
    fn small_nccl_collectives_match_nccl_tests_on_a100_nodes() {
        // nccl-tests on Azure's NDm A100 v4 (mscclpp's docs/performance-ndmv4.md, NCCL 2.17.1):
        // 8 A100s per node on NVLink (600 GB/s both ways, at nvlink_util 0.6667), one 200 Gb/s
        // NIC per GPU (at ibroce_util 0.56), 1 KB messages, us. The hop across nodes
        // (LL_NIC_STEP_S) is taken from the two-node pair; the other three check it and NCCL's
        // own figures within a node.
        let a100 = Links { intra_bytes_per_s: 12.0 * 25e9 * 0.6667, inter_bytes_per_s: 25e9 * 0.56, ..LINKS };
        let kib = 1024.0;
        for (c, g, measured_us, within) in [
            (Collective::AllReduce, Group::new(8, 8), 16.96, 0.15),
            (Collective::AllGather, Group::new(8, 8), 12.53, 0.15),
            (Collective::AllReduce, Group::new(2, 1), 21.27, 0.05),
            (Collective::AllReduce, Group::new(16, 8), 35.85, 0.10),
        ] {
            let t_us = time_s(c, kib, g, &a100, Algorithm::Ring) * 1e6;
            let err = t_us / measured_us - 1.0;
            assert!(err.abs() <= within, "{c:?} over {} GPUs: {t_us:.2} us vs {measured_us} us", g.size);
        }
        // NCCL's tuner's own network hop (2.7 us) would miss the two-node pair by 40%.
        let tuner_us = (LL.base_s + 2.0 * 2.7e-6) * 1e6;
        assert!(tuner_us / 21.27 - 1.0 < -0.4, "{tuner_us}");
        // A 1 KB all-to-all over the node's 8 GPUs, 9.34 us measured: a base and one step (the
        // peers at once, Simple's 3.4 us), where a step per peer, as a ring's, made it 32 us.
        let node = Group::new(8, 8);
        let a2a_us = time_s(Collective::AllToAll, kib, node, &a100, Algorithm::Ring) * 1e6;
        assert!((a2a_us / 9.34 - 1.0).abs() <= 0.3, "{a2a_us}");
    }

    #[test]
    fn a_group_of_one_or_no_bytes_costs_nothing() {
        assert_eq!(time_s(Collective::AllReduce, 1e9, Group::ONE, &LINKS, Algorithm::Ring), 0.0);
        let g = Group::new(8, 8);
        assert_eq!(time_s(Collective::AllGather, 0.0, g, &LINKS, Algorithm::Ring), 0.0);
    }

    #[test]
    fn all_to_all_uses_both_links_at_once() {
        let g = Group::new(16, 8);
        let t = time_s(Collective::AllToAll, 1.6e9, g, &LINKS, Algorithm::Ring);
        let intra = 1.6e9 * 7.0 / 16.0 / 200e9 + NVLINK_STEP_S;
        let inter = 1.6e9 * 8.0 / 16.0 / 10e9 + NIC_STEP_S;
        close(t, COLLECTIVE_BASE_S + intra.max(inter));
    }

    #[test]
    fn gathers_and_scatters_across_nodes_pay_a_ring_latency_that_grows_with_the_group() {
        // NCCL's default: all-reduces node first, all-gathers and reduce-scatters as rings.
        let (tiny, big) = (1.0, 8e9);
        let ag = |d: u64, bytes: f64| {
            time_s(Collective::AllGather, bytes, Group::new(d, 8), &LINKS, Algorithm::Hierarchical)
        };
        // 128 nodes of 8: 127 network hops and 896 NVLink hops (a byte: the LL protocol, a third
        // of the bandwidth for gathers).
        let bytes_s = |d: f64, b: f64| 7.0 / 8.0 * b / 200e9 + (d / 8.0 - 1.0) / (d / 8.0) * b / 8.0 / 10e9;
        close(
            ag(1024, tiny),
            LL.base_s + 3.0 * bytes_s(1024.0, tiny) + 127.0 * LL.nic_step_s + 896.0 * LL.nvlink_step_s,
        );
        // Latency-bound: twice the GPUs, about twice the time.
        let r = (ag(2048, tiny) - LL.base_s) / (ag(1024, tiny) - LL.base_s);
        assert!((1.99..2.01).contains(&r), "{r}");
        // Bandwidth-bound: the two-level path's bytes.
        close(ag(16, big), COLLECTIVE_BASE_S + bytes_s(16.0, big) + NIC_STEP_S + 14.0 * NVLINK_STEP_S);
        let rs = time_s(Collective::ReduceScatter, big, Group::new(16, 8), &LINKS, Algorithm::Hierarchical);
        close(rs, ag(16, big));
        // All-reduces still go node first, latency included.
        let ar = time_s(Collective::AllReduce, big, Group::new(16, 8), &LINKS, Algorithm::Hierarchical);
        let two_level = 2.0 * (bytes_s(16.0, big) + 7.0 * NVLINK_STEP_S + NIC_STEP_S);
        close(ar, COLLECTIVE_BASE_S + two_level);
        // An explicit ring pays network latency only on the hops that cross nodes.
        let ring = time_s(Collective::AllReduce, tiny, Group::new(16, 8), &LINKS, Algorithm::Ring);
        close(ring, LL.base_s + 2.0 * (15.0 / 16.0 * tiny / (80e9 * 0.25) + LL.nic_step_s + 14.0 * LL.nvlink_step_s));
    }

    #[test]
    fn a_broadcast_runs_on_nccls_ring_its_bytes_crossing_every_hop_once() {
        for g in [Group::new(8, 8), Group::new(64, 8), Group::new(1024, 8)] {
            let d = g.size as f64;
            for bytes in [1e3, 1e6, 1e9] {
                // The ring's latency and the root's bytes once: what an all-gather costs for
                // (d - 1)/d of a buffer d/(d - 1) times as large, on the ring or NCCL's default
                // path (a tree or a switch that sums asked for, it runs on that path too).
                for alg in Algorithm::ALL {
                    let path = if alg == Algorithm::Ring { Algorithm::Ring } else { Algorithm::Hierarchical };
                    let ag = time_s(Collective::AllGather, bytes * d / (d - 1.0), g, &LINKS, path);
                    close(time_s(Collective::Broadcast, bytes, g, &LINKS, alg), ag);
                    // So d broadcasts of a d-th never beat one all-gather of the whole.
                    let shards = d * time_s(Collective::Broadcast, bytes / d, g, &LINKS, alg);
                    assert!(shards >= time_s(Collective::AllGather, bytes, g, &LINKS, alg), "{g:?} {alg:?} {bytes}");
                }
            }
        }
        // Returning updated shards by one broadcast from each of d ranks moves what one
        // all-gather moves, but pays the ring's latency d times: over 1,024 GPUs a 7 GB model's
        // shards take seconds more.
        let g = Group::new(1024, 8);
        let model = 7e9;
        for alg in [Algorithm::Ring, Algorithm::Hierarchical] {
            let gather = time_s(Collective::AllGather, model, g, &LINKS, alg);
            let broadcasts = 1024.0 * time_s(Collective::Broadcast, model / 1024.0, g, &LINKS, alg);
            let latency = time_s(Collective::AllGather, 1.0, g, &LINKS, alg);
            assert!(broadcasts > gather + 1000.0 * latency, "{broadcasts} vs {gather}");
            assert!(broadcasts > gather + 1.0, "{broadcasts} vs {gather}");
        }
    }

    #[test]
    fn a_wide_area_link_adds_its_latency_to_every_network_step() {
        // 16 GPUs on 2 nodes of 8, then on 16 nodes of 1: an all-reduce's ring and two-level
        // paths cross the network 2 (m - 1) times, a transfer between nodes once, one within a
        // node never.
        let far = Links { inter_latency_s: 0.02, ..LINKS };
        for (g, crossings) in [(Group::new(16, 8), 2.0), (Group::new(16, 1), 30.0)] {
            for alg in [Algorithm::Ring, Algorithm::Hierarchical] {
                for bytes in [1e3, 1e9] {
                    let extra = time_s(Collective::AllReduce, bytes, g, &far, alg)
                        - time_s(Collective::AllReduce, bytes, g, &LINKS, alg);
                    close(extra, crossings * 0.02);
                }
            }
        }
        let across = Group::new(2, 1);
        let p2p = |l: &Links, g| time_s(Collective::PointToPoint, 1e6, g, l, Algorithm::Ring);
        close(p2p(&far, across) - p2p(&LINKS, across), 0.02);
        let within = Group::new(2, 2);
        assert_eq!(p2p(&far, within), p2p(&LINKS, within));
    }

    /// Sites 10 ms apart whose wide-area link gives each GPU 1 GB/s each way.
    const SITES: Links = Links { wan_bytes_per_s: 1e9, wan_latency_s: 0.01, ..LINKS };

    /// 64 GPUs in 4 sites of 2 nodes of 8.
    const FOUR_SITES: Group = Group { size: 64, per_node: 8, per_site: 16 };

    #[test]
    fn a_groups_inner_members_and_its_every_nth_member_keep_their_spread_over_nodes() {
        // Tensor parallelism of 8 on a node of 8: a pair of neighbours, and four ranks two apart.
        let tp = Group::new(8, 8);
        assert_eq!((tp.inner(2), tp.outer(2)), (Group::new(2, 2), Group::new(4, 4)));
        // Of 16 over two nodes: the inner 4 share a node; every 4th rank, two per node.
        let wide = Group::new(16, 8);
        assert_eq!((wide.inner(4), wide.outer(4)), (Group::new(4, 4), Group::new(4, 2)));
        assert_eq!((wide.outer(16), wide.inner(16)), (Group::new(1, 1), wide));
        // The whole group rejoins from its parts.
        assert_eq!(wide.outer(4).with(wide.inner(4)), wide);
    }

    #[test]
    fn a_group_within_one_site_never_pays_the_wide_area_link() {
        use Collective::*;
        for c in [AllReduce, AllGather, ReduceScatter, AllToAll, PointToPoint] {
            for alg in [Algorithm::Ring, Algorithm::Hierarchical, Algorithm::Tree, Algorithm::InNetwork] {
                for g in [Group::new(16, 8), Group::new(64, 1), Group::new(8, 8), Group::new(2, 1)] {
                    for bytes in [1.0, 1e6, 1e9] {
                        assert_eq!(
                            time_s(c, bytes, g, &SITES, alg),
                            time_s(c, bytes, g, &LINKS, alg),
                            "{c:?} {alg:?} {g:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn across_sites_a_two_level_all_reduce_becomes_three_levels() {
        // Within the node on all 8 GB, across a site's 2 nodes on 1/8 of it, across the 4 sites
        // on 1/16 of it, each level a reduce-scatter and an all-gather.
        let big = 8e9;
        let t = time_s(Collective::AllReduce, big, FOUR_SITES, &SITES, Algorithm::Hierarchical);
        let intra = 2.0 * (7.0 / 8.0 * big / 200e9 + 7.0 * NVLINK_STEP_S);
        let inter = 2.0 * (1.0 / 2.0 * big / 8.0 / 10e9 + NIC_STEP_S);
        let wan = 2.0 * (3.0 / 4.0 * big / 16.0 / 1e9 + 3.0 * (NIC_STEP_S + 0.01));
        close(t, COLLECTIVE_BASE_S + intra + inter + wan);
        // A ring crosses sites 3 times, a site's nodes 4 times and NVLink 56 times, at the
        // narrowest of NVLink, the node's NICs (8 rings) and the site's link (16 rings).
        let ring = time_s(Collective::AllReduce, big, FOUR_SITES, &SITES, Algorithm::Ring);
        let hops_s = 3.0 * (NIC_STEP_S + 0.01) + 4.0 * NIC_STEP_S + 56.0 * NVLINK_STEP_S;
        close(ring, COLLECTIVE_BASE_S + 2.0 * (63.0 / 64.0 * big / 16e9 + hops_s));
        // Gathers run as rings, latency included; their bytes are the three-level path's.
        let ag = time_s(Collective::AllGather, big, FOUR_SITES, &SITES, Algorithm::Hierarchical);
        close(
            ag,
            COLLECTIVE_BASE_S + (intra + inter + wan) / 2.0
                - 7.0 * NVLINK_STEP_S
                - NIC_STEP_S
                - 3.0 * (NIC_STEP_S + 0.01)
                + hops_s,
        );
        // The switches of in-network aggregation stop at the site: the wide-area level is
        // the same as a two-level path's.
        let switch = time_s(Collective::AllReduce, big, FOUR_SITES, &SITES, Algorithm::InNetwork);
        close(switch, COLLECTIVE_BASE_S + intra + big / 8.0 / 10e9 + 2.0 * NIC_STEP_S + wan);
    }

    #[test]
    fn across_sites_every_hop_between_them_pays_the_wide_area_latency() {
        let near = Links { wan_latency_s: 0.0, ..SITES };
        let tiny = 1.0;
        let extra = |alg| {
            time_s(Collective::AllReduce, tiny, FOUR_SITES, &SITES, alg)
                - time_s(Collective::AllReduce, tiny, FOUR_SITES, &near, alg)
        };
        // Rings and the two-level path: 3 hops between the 4 sites, each way; a tree across
        // the sites: log2 4 = 2 each way.
        close(extra(Algorithm::Ring), 6.0 * 0.01);
        close(extra(Algorithm::Hierarchical), 6.0 * 0.01);
        close(extra(Algorithm::Tree), 4.0 * 0.01);
        // A transfer between sites: once, at the narrower of the NIC share and the site's link.
        let between = Group { size: 2, per_node: 1, per_site: 1 };
        let p2p = time_s(Collective::PointToPoint, 1e6, between, &SITES, Algorithm::Ring);
        close(p2p, COLLECTIVE_BASE_S + 1e6 / 1e9 + NIC_STEP_S + 0.01);
        // An all-to-all sends three quarters of its bytes to other sites: the link binds.
        let a2a = time_s(Collective::AllToAll, 1e9, FOUR_SITES, &SITES, Algorithm::Ring);
        close(a2a, COLLECTIVE_BASE_S + 1e9 * 48.0 / 64.0 / 1e9 + 3.0 * (NIC_STEP_S + 0.01));
    }

    #[test]
    fn nvlink_latency_adds_to_every_hop_within_a_node() {
        let slow = Links { intra_latency_s: 1e-5, ..LINKS };
        let g = Group::new(8, 8);
        let extra = time_s(Collective::AllReduce, 1e9, g, &slow, Algorithm::Ring)
            - time_s(Collective::AllReduce, 1e9, g, &LINKS, Algorithm::Ring);
        close(extra, 2.0 * 7.0 * 1e-5);
        // An engine's own kernels pay it once per phase.
        let (one_shot, kernel) = engine_all_reduce(1e3, g, &slow, Algorithm::Ring);
        let (fast, same) = engine_all_reduce(1e3, g, &LINKS, Algorithm::Ring);
        assert_eq!(kernel, same);
        assert!(one_shot > fast);
    }
}
