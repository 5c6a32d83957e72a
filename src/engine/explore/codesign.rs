//! Hardware co-design what-ifs: one resource of the cluster scaled (compute, HBM bandwidth and
//! capacity, NVLink, NIC), for the explorer to search the best plan again.

use super::*;

/// The factors a co-design what-if scales a resource by (1: the cluster as it is).
pub const CODESIGN_FACTORS: [f64; 5] = [0.5, 1.0, 2.0, 4.0, 8.0];

/// A hardware resource a co-design what-if scales.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Resource {
    /// Peak FLOP/s of every precision.
    Compute,
    HbmBandwidth,
    /// Memory capacity: changes which plans fit.
    HbmCapacity,
    NvlinkBandwidth,
    NicBandwidth,
    /// Number of nodes (GPUs per node unchanged); the global batch stays fixed.
    ClusterSize,
}

impl Resource {
    pub const ALL: [Resource; 6] = [
        Resource::Compute,
        Resource::HbmBandwidth,
        Resource::HbmCapacity,
        Resource::NvlinkBandwidth,
        Resource::NicBandwidth,
        Resource::ClusterSize,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Resource::Compute => "compute",
            Resource::HbmBandwidth => "HBM bandwidth",
            Resource::HbmCapacity => "HBM capacity",
            Resource::NvlinkBandwidth => "NVLink bandwidth",
            Resource::NicBandwidth => "NIC bandwidth",
            Resource::ClusterSize => "cluster size",
        }
    }

    /// [`Resource::label`] in a few letters, for narrow charts.
    pub fn short_label(self) -> &'static str {
        match self {
            Resource::Compute => "FLOPs",
            Resource::HbmBandwidth => "HBM/s",
            Resource::HbmCapacity => "HBM",
            Resource::NvlinkBandwidth => "NVLink",
            Resource::NicBandwidth => "NIC",
            Resource::ClusterSize => "GPUs",
        }
    }
}

/// The scenario with one resource scaled by `factor`; `None` when the result is not a cluster
/// (fewer than one node).
pub fn scaled(base: &Scenario, r: Resource, factor: f64) -> Option<Scenario> {
    let mut s = base.clone();
    let sys = &mut s.system;
    match r {
        Resource::Compute => {
            sys.f64_flops_per_s *= factor;
            sys.f32_flops_per_s *= factor;
            sys.f16_flops_per_s *= factor;
            sys.i8_ops_per_s *= factor;
            sys.fp8_flops_per_s = sys.fp8_flops_per_s.map(|f| f * factor);
        }
        Resource::HbmBandwidth => sys.mem_bw_bytes_per_s *= factor,
        Resource::HbmCapacity => sys.mem_cap_bytes *= factor,
        Resource::NvlinkBandwidth => sys.bw_per_nvlink_bytes_per_s *= factor,
        Resource::NicBandwidth => sys.ibroce_bw_bytes_per_s *= factor,
        Resource::ClusterSize => {
            let nodes = (sys.num_nodes as f64 * factor).round();
            if nodes < 1.0 || nodes.fract() != 0.0 {
                return None;
            }
            let per = sys.devices_per_node();
            sys.num_nodes = nodes as u64;
            sys.num_devices = per * nodes as u64;
            if sys.num_nodes == 1 {
                sys.ar_perc_intra = 1.0;
            }
        }
    }
    Some(s)
}
