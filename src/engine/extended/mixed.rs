//! Clusters of two GPU types (the default model). Every GPU of a synchronous step (a
//! data-parallel, tensor-parallel or pipeline step, with the collectives that join them) waits
//! for the slowest one before the step ends, so the cluster runs at its slower type's pace:
//! each type is evaluated as if it made up the whole cluster (the same nodes, links and plan),
//! and the slower one's timeline is the cluster's. Every GPU holds the same share of the work,
//! so the memory figure is the tighter type's (the one closest to, or over, its HBM), and
//! utilisation is counted against every GPU's own peak.

use super::super::report::{peak_flops_per_s, Limit, Report};
use super::super::scenario::Scenario;

/// The scenario of the type that paces a cluster of two GPU types (every GPU of that type)
/// and the cluster's report; `None` when the cluster has one type.
pub fn paced(s: &Scenario, evaluate: impl Fn(&Scenario) -> Report) -> Option<(Scenario, Report)> {
    let second = Scenario { system: s.system.all_second()?, ..s.clone() };
    let first = Scenario { system: s.system.all_first(), ..s.clone() };
    // Per GPU, the cluster's mean peak: each type's own, by its share of the GPUs.
    let n = s.system.num_devices as f64;
    let second_gpus =
        s.system.second.as_ref().map_or(0, |g| g.nodes.saturating_mul(s.system.devices_per_node())) as f64;
    let mean_peak = ((n - second_gpus) * peak_flops_per_s(&first) + second_gpus * peak_flops_per_s(&second)) / n;
    let second_gpu = s.system.second.as_ref().map(|g| g.name.clone()).unwrap_or_default();
    let (a, b) = (evaluate(&first), evaluate(&second));
    let second_paces = b.iteration_s > a.iteration_s;
    let ((slow_s, mut slow), fast) = if second_paces { ((second, b), a) } else { ((first, a), b) };
    let fullness = |r: &Report| r.memory.total_bytes / r.memory.capacity_bytes;
    if fullness(&fast) > fullness(&slow) {
        slow.limits.retain(|l| !matches!(l, Limit::DoesNotFit { .. }));
        slow.limits.extend(fast.memory.does_not_fit());
        slow.memory = fast.memory.clone();
    }
    if fast.iteration_s < slow.iteration_s {
        slow.limits.push(Limit::PacedBy { second_paces, second_gpu, other_iteration_s: fast.iteration_s });
    }
    if let Some(u) = &mut slow.utilization {
        let scale = u.peak_flops_per_s / mean_peak;
        u.peak_flops_per_s = mean_peak;
        u.mfu *= scale;
        u.hfu *= scale;
    }
    Some((slow_s, slow))
}

#[cfg(test)]
mod tests {
    use crate::engine::report::{Limit, MemPart};
    use crate::engine::scenario::Scenario;
    use crate::engine::{evaluate, explain, validate, RawScenario};
    use serde_json::{json, Value};

    /// A GPT-like model on 16 nodes of 8 H100s, tp 8 x dp 16, with system and task keys
    /// merged in.
    fn doc(system: Value, task: Value) -> Value {
        let mut d = json!({
            "model": {"type": "LLM", "bytes_per_nonemb_param": 2, "bytes_per_emb_param": 2,
                "entries_per_table": 51200, "num_transformer_layers": 32, "num_transformer_heads": 32,
                "attention_dim": 4096, "transformer_fc_dim": 16384, "transformer_seq_len": 2048},
            "system": {"type": "GPU", "name": "H100", "num_devices": 128, "num_nodes": 16, "f64_flops": 67e12,
                "f32_flops": 495e12, "f16_flops": 989.5e12, "i8_ops": 1979e12, "fp8_flops": 1979e12,
                "flops_util": 0.75, "mem_cap": 85.5e9, "mem_bw": 3350e9, "mem_bw_util": 0.836,
                "num_nvlinks": 18, "bw_per_nvlink": 50e9, "nvlink_util": 0.6667, "num_ibroce_ports": 8,
                "ibroce_bw": 100e9, "ibroce_util": 0.56, "ar_perc_intra": 0.5},
            "task": {"type": "pretrain", "mode": "default", "transformer_parallel": ["tp", "ddp"],
                "transformer_parallel_degree": [8, 16], "emb_parallel": ["ddp"], "emb_parallel_degree": [128],
                "local_transformer_bs": 8, "local_emb_bs": 8, "micro_batch": 1, "recompute": "selective"},
        });
        for (config, keys) in [("system", system), ("task", task)] {
            if let (Some(c), Value::Object(k)) = (d[config].as_object_mut(), keys) {
                c.extend(k);
            }
        }
        d
    }

    fn checked(d: Value) -> Result<Scenario, Vec<String>> {
        let raw: RawScenario = serde_json::from_value(d).expect("raw");
        validate(&raw).map_err(|e| e.iter().map(|e| e.to_string()).collect())
    }

    /// The A100 80GB's datasheet figures as a second type on `nodes` nodes.
    fn a100s(nodes: u64, mem_cap: f64) -> Value {
        json!({"second_gpu_nodes": nodes, "second_gpu_name": "A100", "second_f64_flops": 19.5e12,
            "second_f32_flops": 156e12, "second_f16_flops": 312e12, "second_i8_ops": 624e12,
            "second_mem_cap": mem_cap, "second_mem_bw": 2039e9})
    }

    #[test]
    fn the_slower_type_paces_every_step() {
        let mixed = checked(doc(a100s(8, 85.5e9), json!({}))).expect("valid");
        let h100 = checked(doc(json!({}), json!({}))).expect("valid");
        let mut a100 = h100.clone();
        a100.system = mixed.system.all_second().expect("a second type");
        let (m, h, a) = (evaluate(&mixed), evaluate(&h100), evaluate(&a100));
        assert!(a.iteration_s > h.iteration_s);
        // The A100s' timeline is the cluster's; the H100s wait.
        assert_eq!(m.iteration_s, a.iteration_s);
        assert_eq!(m.timeline, a.timeline);
        assert!(m.limits.contains(&Limit::PacedBy {
            second_paces: true,
            second_gpu: "A100".into(),
            other_iteration_s: h.iteration_s
        }));
        // Utilisation against every GPU's own peak: half the GPUs at 989.5, half at 312 TFLOP/s.
        let (mu, au) = (m.utilization.as_ref().expect("mfu"), a.utilization.as_ref().expect("mfu"));
        let mean_peak = (989.5e12 + 312e12) / 2.0;
        assert_eq!(mu.peak_flops_per_s, mean_peak);
        assert!((mu.mfu - au.mfu * 312e12 / mean_peak).abs() < 1e-12, "{} vs {}", mu.mfu, au.mfu);
        assert_eq!(mu.model_flops, au.model_flops);
        // The explanation of an op is the pacing type's.
        let op = &m.timeline[3].name;
        assert_eq!(explain(&mixed, op).map(|e| e.seconds), explain(&a100, op).map(|e| e.seconds));
        // A faster second type: the first paces.
        let mut faster = doc(a100s(8, 85.5e9), json!({}));
        faster["system"]["second_f16_flops"] = json!(2250e12);
        faster["system"]["second_mem_bw"] = json!(8000e9);
        let r = evaluate(&checked(faster).expect("valid"));
        assert_eq!(r.iteration_s, h.iteration_s);
        assert!(r.limits.iter().any(|l| matches!(l, Limit::PacedBy { second_paces: false, .. })));
    }

    #[test]
    fn memory_is_the_tighter_types() {
        // Without recomputation a GPU needs more than a 40 GB A100 holds: the cluster does not
        // fit, whichever type is slower.
        let task = json!({"recompute": "none", "micro_batch": 8});
        let roomy = evaluate(&checked(doc(json!({}), task.clone())).expect("valid"));
        assert!(roomy.memory.fits() && roomy.memory.total_bytes > 42.9e9);
        let r = evaluate(&checked(doc(a100s(8, 42.9e9), task)).expect("valid"));
        assert_eq!(r.memory.capacity_bytes, 42.9e9);
        assert_eq!(r.memory.total_bytes, roomy.memory.total_bytes);
        assert!(r.limits.iter().any(|l| matches!(l, Limit::DoesNotFit { capacity_bytes, largest: MemPart::Activations, .. } if *capacity_bytes == 42.9e9)));
    }

    #[test]
    fn a_second_type_is_checked_field_by_field() {
        let said = |system: Value, task: Value| checked(doc(system, task)).err().unwrap_or_default();
        // All nodes of the second type leave none of the first.
        let e = said(a100s(16, 85.5e9), json!({}));
        assert!(
            e.len() == 1
                && e[0].starts_with("system.second_gpu_nodes")
                && e[0].contains("fewer than the cluster's 16 nodes"),
            "{e:?}"
        );
        let mut missing = a100s(4, 85.5e9);
        missing.as_object_mut().map(|o| o.remove("second_mem_bw"));
        let e = said(missing, json!({}));
        assert!(e.len() == 1 && e[0].starts_with("system.second_mem_bw"), "{e:?}");
        // FP8 training needs FP8 tensor cores on both types.
        let e = said(a100s(4, 85.5e9), json!({"fp8": true}));
        assert!(e.len() == 1 && e[0].starts_with("task.fp8") && e[0].contains("second GPU type"), "{e:?}");
        // Paper mode has one type; serving on two is not modelled.
        let e = said(a100s(4, 85.5e9), json!({"mode": "reference"}));
        assert!(e.iter().any(|e| e.starts_with("system.second_gpu_nodes") && e.contains("default model")), "{e:?}");
        let serve = json!({"type": "inference", "transformer_parallel": ["tp", "ddp"], "local_transformer_bs": 1, "local_emb_bs": 1});
        let e = said(a100s(4, 85.5e9), serve);
        assert!(e.len() == 1 && e[0].starts_with("system.second_gpu_nodes") && e[0].contains("serving"), "{e:?}");
        // Zero nodes of it: one type.
        let one = checked(doc(json!({"second_gpu_nodes": 0}), json!({}))).expect("one type");
        assert_eq!(one.system.second, None);
    }
}
