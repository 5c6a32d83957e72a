//! Reference mode: the rates and collective bandwidth vectors MAD-Max derives from a system
//! config (SPEC section 3; `systems/system.py`, `systems/gpus.py`).

use crate::engine::num::Num;
use crate::engine::scenario::System;

/// A collective's effective bandwidth per level, bytes/s: one entry on a single node,
/// `[intra, inter-or-mixed]` otherwise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LevelBw {
    values: [f64; 2],
    len: usize,
}

impl LevelBw {
    fn one(v: f64) -> LevelBw {
        LevelBw { values: [v, v], len: 1 }
    }

    fn two(intra: f64, inter: f64) -> LevelBw {
        LevelBw { values: [intra, inter], len: 2 }
    }

    /// `sel(V, K, level) = V[level - K]` with Python's negative indexing (SPEC 3, "Level
    /// selector"): a 1-level spec reads the last entry, a 2-level spec reads entry `level`.
    /// Indices that Python would reject cannot occur after validation; they clamp here.
    pub fn sel(&self, spec_len: usize, level: usize) -> f64 {
        let idx = level as isize - spec_len as isize;
        let idx = if idx < 0 { idx + self.len as isize } else { idx };
        self.values[idx.clamp(0, self.len as isize - 1) as usize]
    }

    /// The last entry (what the reference prints).
    pub fn last(&self) -> f64 {
        self.values[self.len - 1]
    }
}

/// Everything MAD-Max derives from a system config.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Network {
    /// Devices per node, `int(N / M)`.
    pub devices_per_node: u64,
    /// Effective FLOP/s per device for FP64, FP32, FP16 and INT8: peak x `flops_util`.
    pub flops_per_s: [f64; 4],
    /// Effective HBM bandwidth, bytes/s: `mem_bw x mem_bw_util`.
    pub mem_bw_bytes_per_s: f64,
    /// Unidirectional NVLink bandwidth per device, bytes/s:
    /// `num_nvlinks x (bw_per_nvlink / 2) x nvlink_util`.
    pub intra_bytes_per_s: f64,
    /// Unidirectional NIC bandwidth per device, bytes/s:
    /// `num_ibroce_ports x (ibroce_bw / 2) x ibroce_util / devices_per_node`.
    pub inter_bytes_per_s: f64,
    pub all2all: LevelBw,
    pub allreduce: LevelBw,
    /// Twice the all-reduce vector, intra level included (SPEC Q27).
    pub allgather: LevelBw,
    pub reducescatter: LevelBw,
}

impl Network {
    /// Derives the rates and bandwidth vectors, evaluating each formula in the reference's order.
    pub fn new(s: &System) -> Network {
        let n = (s.num_devices as f64 / s.num_nodes as f64) as u64;
        let flops_per_s = [
            s.f64_flops_per_s * s.flops_util,
            s.f32_flops_per_s * s.flops_util,
            s.f16_flops_per_s * s.flops_util,
            s.i8_ops_per_s * s.flops_util,
        ];
        let intra = s.num_nvlinks * (s.bw_per_nvlink_bytes_per_s / 2.0) * s.nvlink_util;
        let inter = s.num_ibroce_ports * (s.ibroce_bw_bytes_per_s / 2.0) * s.ibroce_util / n as f64;
        let pi = s.ar_perc_intra;
        let pi_inter = 1.0 - pi;
        let mixed = pi_inter * inter + pi * intra;
        let (all2all, allreduce) = if s.num_nodes > 1 {
            (LevelBw::two(intra, inter), LevelBw::two(intra, mixed))
        } else {
            (LevelBw::one(intra), LevelBw::one(mixed))
        };
        let double = |v: LevelBw| LevelBw { values: [2.0 * v.values[0], 2.0 * v.values[1]], len: v.len };
        Network {
            devices_per_node: n,
            flops_per_s,
            mem_bw_bytes_per_s: s.mem_bw_bytes_per_s * s.mem_bw_util,
            intra_bytes_per_s: intra,
            inter_bytes_per_s: inter,
            all2all,
            allreduce,
            allgather: double(allreduce),
            reducescatter: double(allreduce),
        }
    }

    /// The FLOP rate a model runs at, chosen by its bytes per dense parameter
    /// (8: FP64, 4: FP32, 2: FP16/BF16, 1: INT8). Validation admits no other value.
    pub fn flops_for(&self, bytes_per_dense_param: Num) -> f64 {
        match bytes_per_dense_param.f64() as i64 {
            8 => self.flops_per_s[0],
            4 => self.flops_per_s[1],
            1 => self.flops_per_s[3],
            _ => self.flops_per_s[2],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_negative_indexing() {
        let v = LevelBw::two(10.0, 20.0);
        assert_eq!(v.sel(1, 0), 20.0); // 1-level spec: last entry
        assert_eq!(v.sel(2, 0), 10.0);
        assert_eq!(v.sel(2, 1), 20.0);
        // Q9b: a transformer level 1 selected with a 1-level MLP spec reads V[0].
        assert_eq!(v.sel(1, 1), 10.0);
        assert_eq!(LevelBw::one(5.0).sel(1, 0), 5.0);
    }
}
