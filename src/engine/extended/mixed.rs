//! Clusters of two GPU types (the default model). Every GPU of a synchronous step (a
//! data-parallel, tensor-parallel or pipeline step, with the collectives that join them) waits
//! for the slowest one before the step ends, so the cluster runs at its slower type's pace:
//! each type is evaluated as if it made up the whole cluster (the same nodes, network and
//! plan; its own NVLinks),
//! and the slower one's timeline is the cluster's. Every GPU holds the same share of the work,
//! so the memory figure is the tighter type's (the one closest to, or over, its HBM), and
//! utilisation is counted against every GPU's own peak ([`paced`]). A pipeline that is the
//! plan's outermost level, each stage on one type, is placed by speed instead
//! ([`StagesByType`]): the faster GPUs' stages hold more layers.

use super::super::report::{peak_flops_per_s, Limit, Report};
use super::super::scenario::{Arch, Scenario};

/// The scenario of the type that paces a cluster of two GPU types (every GPU of that type)
/// and the cluster's report; `None` when the cluster has one type.
pub fn paced(s: &Scenario, evaluate: impl Fn(&Scenario) -> Report) -> Option<(Scenario, Report)> {
    if s.system.second.is_none() || places_by_speed(s) {
        return None;
    }
    let second = Scenario { system: s.system.all_second()?, ..s.clone() };
    let first = Scenario { system: s.system.all_first(), ..s.clone() };
    let mean_peak = mean_peak_flops_per_s(s);
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

/// True when `s` is a transformer whose pipeline is placed by speed on two GPU types
/// ([`StagesByType`]): its stages run at their own types' rates, and nothing is paced.
pub fn places_by_speed(s: &Scenario) -> bool {
    let transformer = !s.model.arch.family().is_dlrm() && !matches!(s.model.arch, Arch::Cnn(_));
    transformer && super::shape::Dims::of(&s.model).is_some_and(|d| StagesByType::of(s, d.layers).is_some())
}

/// A GPU type's rates, as a [`super::training::TrainingCx`] runs at them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rates {
    /// Effective FLOP rate at the model's precision (peak x utilisation), FLOP/s.
    pub flops_per_s: f64,
    /// Datasheet peak at the model's precision, FLOP/s.
    pub peak_flops_per_s: f64,
    /// FP8 GEMM rate with FP8 training, FLOP/s.
    pub fp8_flops_per_s: Option<f64>,
    /// Effective HBM bandwidth, bytes/s.
    pub hbm_bytes_per_s: f64,
    /// HBM bandwidth a GEMM reaches, bytes/s.
    pub gemm_hbm_bytes_per_s: f64,
    /// Streaming multiprocessors; `None`: not known.
    pub sms: Option<u64>,
    /// HBM capacity, bytes.
    pub mem_cap_bytes: f64,
    /// Its links (its own NVLinks, the cluster's network).
    pub links: super::collective::Links,
}

impl Rates {
    /// The rates of every GPU of `s`'s cluster taken as its first type (`second` false) or
    /// its second.
    pub fn of(s: &Scenario, second: bool) -> Option<Rates> {
        let sys = if second { s.system.all_second()? } else { s.system.all_first() };
        let peak = peak_flops_per_s(&Scenario { system: sys.clone(), ..s.clone() });
        let fp8 = sys.fp8_flops_per_s.filter(|_| s.task.setup.fp8);
        Some(Rates {
            flops_per_s: peak * sys.flops_util,
            peak_flops_per_s: peak,
            fp8_flops_per_s: fp8.map(|f| f * sys.flops_util * super::calibration::FP8_GEMM_EFFICIENCY),
            hbm_bytes_per_s: sys.mem_bw_bytes_per_s * sys.mem_bw_util,
            gemm_hbm_bytes_per_s: sys.mem_bw_bytes_per_s * sys.gemm_bw_fraction(),
            sms: sys.sm_count,
            mem_cap_bytes: sys.mem_cap_bytes,
            links: super::collective::Links::of(&sys),
        })
    }
}

/// A pipeline placed by speed on a cluster of two GPU types: each stage wholly on one type
/// (the pipeline is the plan's outermost level, and the types meet between two stages), and
/// the layers split in inverse proportion to a layer's time on each type, so the faster GPUs
/// hold more of them and the stages take about as long (as heterogeneity-aware pipeline
/// planners do, e.g. HetPipe, Park et al. 2020).
#[derive(Clone, Debug, PartialEq)]
pub struct StagesByType {
    /// The first stage on the second type (the second type holds the last nodes).
    pub first_second_stage: u64,
    /// Where each stage's layers start, then the layer count: stages + 1 indices.
    pub starts: Vec<u64>,
    /// The first type's rates, then the second's.
    pub rates: [Rates; 2],
}

impl StagesByType {
    /// The placement of `s`'s pipeline with its layers split evenly (as [`Self::split`]
    /// leaves them until a layer's time on each type is known), `None` where it does not
    /// apply: one type, no pipeline, the pipeline not outermost, or a stage on both types.
    pub fn of(s: &Scenario, layers: u64) -> Option<StagesByType> {
        let second = s.system.second.as_ref()?;
        let spec = s.task.plan.transformer.as_ref()?;
        let p = spec.outermost_pipeline().filter(|p| layers >= *p)?;
        let n = s.system.num_devices;
        let per_stage = n / p;
        let first_gpus = n.checked_sub(second.nodes.saturating_mul(s.system.devices_per_node()))?;
        if per_stage == 0 || first_gpus == 0 || !first_gpus.is_multiple_of(per_stage) {
            return None;
        }
        let first_second_stage = first_gpus / per_stage;
        let rates = [Rates::of(s, false)?, Rates::of(s, true)?];
        let starts = (0..=p).map(|j| j * layers / p).collect();
        Some(StagesByType { first_second_stage, starts, rates })
    }

    /// Splits the layers so that each stage's share is inversely proportional to a layer's
    /// time on its type, `layer_s` (the first type's, then the second's), s: each share
    /// rounded down, the layers left over to the stages short of theirs by most (the
    /// earlier on a tie), at least one layer a stage.
    pub fn split(&mut self, layer_s: [f64; 2]) {
        let p = self.starts.len().saturating_sub(1) as u64;
        let layers = self.starts.last().copied().unwrap_or(0);
        let weight = |stage: u64| 1.0 / layer_s[usize::from(stage >= self.first_second_stage)].max(f64::MIN_POSITIVE);
        let total: f64 = (0..p).map(weight).sum();
        let ideal: Vec<f64> = (0..p).map(|j| layers as f64 * weight(j) / total).collect();
        let mut counts: Vec<u64> = ideal.iter().map(|x| (x.floor() as u64).max(1)).collect();
        // At least one layer each can overshoot: take back from the stages most over theirs.
        while counts.iter().sum::<u64>() > layers {
            let over = |j: usize| counts[j] as f64 - ideal[j];
            let Some(j) = (0..counts.len()).filter(|&j| counts[j] > 1).max_by(|&a, &b| over(a).total_cmp(&over(b)))
            else {
                break;
            };
            counts[j] -= 1;
        }
        while counts.iter().sum::<u64>() < layers {
            let short = |j: usize| ideal[j] - counts[j] as f64;
            // The first of the stages shortest of their share.
            let j = (0..counts.len()).rev().max_by(|&a, &b| short(a).total_cmp(&short(b))).unwrap_or(0);
            counts[j] += 1;
        }
        let mut start = 0;
        for (j, c) in counts.iter().enumerate() {
            self.starts[j] = start;
            start += c;
        }
    }

    /// The rates of stage `stage`'s GPUs.
    pub fn rates_of(&self, stage: u64) -> Rates {
        self.rates[usize::from(stage >= self.first_second_stage)]
    }
}

/// Peak FLOP/s per GPU of `s`'s cluster at the model's precision: with two types, the mean of
/// each GPU's own.
pub fn mean_peak_flops_per_s(s: &Scenario) -> f64 {
    let Some(second) = s.system.all_second() else { return peak_flops_per_s(s) };
    let n = s.system.num_devices as f64;
    let second_gpus =
        s.system.second.as_ref().map_or(0, |g| g.nodes.saturating_mul(s.system.devices_per_node())) as f64;
    let first = Scenario { system: s.system.all_first(), ..s.clone() };
    let second = Scenario { system: second, ..s.clone() };
    ((n - second_gpus) * peak_flops_per_s(&first) + second_gpus * peak_flops_per_s(&second)) / n
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
    fn each_type_runs_its_gemms_over_its_own_sms() {
        // 132 SMs on the H100s, 108 on the A100s: each type's rates carry its own count, and a
        // second type without one charges no waves (its SM count is not the first type's).
        let mut sys = a100s(8, 85.5e9);
        sys["sm_count"] = json!(132);
        sys["second_sm_count"] = json!(108);
        let s = checked(doc(sys.clone(), json!({}))).expect("valid");
        let sms = |s: &Scenario, second: bool| super::Rates::of(s, second).expect("rates").sms;
        assert_eq!((sms(&s, false), sms(&s, true)), (Some(132), Some(108)));
        sys.as_object_mut().expect("object").remove("second_sm_count");
        let s = checked(doc(sys, json!({}))).expect("valid");
        assert_eq!((sms(&s, false), sms(&s, true)), (Some(132), None));
        assert_eq!(s.system.all_second().expect("second").sm_count, None);
    }

    #[test]
    fn the_second_type_runs_on_its_own_nvlinks() {
        // An A100 has 12 NVLinks to an H100's 18: its tensor-parallel all-reduces take longer.
        let mut own = a100s(8, 85.5e9);
        own["second_num_nvlinks"] = json!(12);
        own["second_bw_per_nvlink"] = json!(50e9);
        let s = checked(doc(own, json!({}))).expect("valid");
        assert_eq!(s.system.all_second().map(|a| a.num_nvlinks), Some(12.0));
        assert_eq!(s.system.all_first().num_nvlinks, 18.0);
        let shared = evaluate(&checked(doc(a100s(8, 85.5e9), json!({}))).expect("valid"));
        let r = evaluate(&s);
        assert!(r.totals.allreduce_s > shared.totals.allreduce_s && r.iteration_s > shared.iteration_s);
        // In a pipeline placed by speed, each stage on its own type's NVLinks.
        let piped = json!({"transformer_parallel": ["tp", "ddp", "pp"], "transformer_parallel_degree": [8, 4, 4],
            "local_transformer_bs": 32, "micro_batch": 4});
        let mut own = a100s(8, 85.5e9);
        own["second_num_nvlinks"] = json!(12);
        own["second_bw_per_nvlink"] = json!(50e9);
        let s = checked(doc(own, piped)).expect("valid");
        let cx = crate::engine::extended::training::TrainingCx::new(&s).expect("transformer");
        let nvlink = |stage: u64| cx.on_stage(stage).links.intra_bytes_per_s;
        assert_eq!(nvlink(3) / nvlink(0), 12.0 / 18.0);
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
        // Its NVLinks: both keys or neither.
        let mut half = a100s(4, 85.5e9);
        half["second_num_nvlinks"] = json!(12);
        let e = said(half, json!({}));
        assert!(e.len() == 1 && e[0].starts_with("system.second_bw_per_nvlink"), "{e:?}");
        // Zero nodes of it: one type.
        let one = checked(doc(json!({"second_gpu_nodes": 0}), json!({}))).expect("one type");
        assert_eq!(one.system.second, None);
    }

    #[test]
    fn a_pipeline_across_the_types_gives_the_faster_gpus_more_layers() {
        use super::places_by_speed;
        use crate::engine::extended::training::TrainingCx;
        // tp 8 x dp 4 x pp 4: each stage on 4 nodes; the A100s on the last 8 hold stages 2-3.
        let piped = json!({"transformer_parallel": ["tp", "ddp", "pp"], "transformer_parallel_degree": [8, 4, 4],
            "local_transformer_bs": 32, "micro_batch": 4});
        let s = checked(doc(a100s(8, 85.5e9), piped.clone())).expect("valid");
        assert!(places_by_speed(&s));
        let cx = TrainingCx::new(&s).expect("transformer");
        let t = cx.by_type.as_deref().expect("by type").clone();
        assert_eq!(t.first_second_stage, 2);
        // The H100 stages take more of the 32 layers, about in proportion to their speed.
        let held: Vec<u64> = t.starts.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(held.iter().sum::<u64>(), 32);
        assert!(held[0] == held[1] && held[2] == held[3] && held[0] >= 2 * held[2], "{held:?}");
        assert_eq!((t.rates_of(1).flops_per_s, t.rates_of(2).flops_per_s), (989.5e12 * 0.75, 312e12 * 0.75));
        // The drawn stage is the slowest, at its own GPUs' rate.
        let pass = |stage: u64| {
            let (f, b) = cx.on_stage(stage).pass_times();
            f + b
        };
        assert!((0..4).all(|k| pass(k) <= pass(cx.stage)), "stage {}", cx.stage);
        assert_eq!(cx.flops_per_s, t.rates_of(cx.stage).flops_per_s);
        // Faster than the same plan paced by A100s (the pipeline inside the data parallelism:
        // every stage spans both types), and no line says a type paces it.
        let r = evaluate(&s);
        let inner = json!({"transformer_parallel": ["tp", "pp", "ddp"], "transformer_parallel_degree": [8, 4, 4],
            "local_transformer_bs": 32, "micro_batch": 4});
        let paced = evaluate(&checked(doc(a100s(8, 85.5e9), inner)).expect("valid"));
        assert!(paced.limits.iter().any(|l| matches!(l, Limit::PacedBy { .. })));
        // Between a cluster of H100s and one of A100s running the same plan.
        let mut all_a100 = s.clone();
        all_a100.system = s.system.all_second().expect("second");
        let all_h100 = Scenario { system: s.system.all_first(), ..s.clone() };
        let (ra, rh) = (evaluate(&all_a100), evaluate(&all_h100));
        assert!(!r.limits.iter().any(|l| matches!(l, Limit::PacedBy { .. })), "{:?}", r.limits);
        assert!(
            rh.iteration_s < r.iteration_s && r.iteration_s < ra.iteration_s.min(paced.iteration_s),
            "{} < {} < {} and {}",
            rh.iteration_s,
            r.iteration_s,
            ra.iteration_s,
            paced.iteration_s
        );
        let u = r.utilization.as_ref().expect("mfu");
        assert_eq!(u.peak_flops_per_s, (989.5e12 + 312e12) / 2.0);
        // The types meeting inside a stage: paced instead.
        let mid = checked(doc(a100s(2, 85.5e9), piped)).expect("valid");
        assert!(!places_by_speed(&mid));
        assert!(evaluate(&mid).limits.iter().any(|l| matches!(l, Limit::PacedBy { second_paces: true, .. })));
    }

    #[test]
    fn layers_split_in_inverse_proportion_to_a_layers_time() {
        use super::{Rates, StagesByType};
        let links = crate::engine::extended::collective::Links {
            intra_bytes_per_s: 1.0,
            inter_bytes_per_s: 1.0,
            inter_latency_s: 0.0,
            intra_latency_s: 0.0,
            wan_bytes_per_s: f64::INFINITY,
            wan_latency_s: 0.0,
        };
        let r = Rates {
            flops_per_s: 1.0,
            peak_flops_per_s: 1.0,
            fp8_flops_per_s: None,
            hbm_bytes_per_s: 1.0,
            gemm_hbm_bytes_per_s: 1.0,
            sms: None,
            mem_cap_bytes: 1.0,
            links,
        };
        let even = StagesByType { first_second_stage: 2, starts: vec![0, 8, 16, 24, 32], rates: [r, r] };
        let split = |layer_s| {
            let mut t = even.clone();
            t.split(layer_s);
            t.starts
        };
        // Three times slower: a third of the layers (12, 12, 4, 4).
        assert_eq!(split([1.0, 3.0]), vec![0, 12, 24, 28, 32]);
        // Alike: even.
        assert_eq!(split([2.0, 2.0]), vec![0, 8, 16, 24, 32]);
        // Far slower: one layer each, never none.
        assert_eq!(split([1.0, 1e9]), vec![0, 15, 30, 31, 32]);
        // 2.5 times slower: 11.4 and 4.6 each; the shortest take what is left (11, 11, 5, 5).
        assert_eq!(split([1.0, 2.5]), vec![0, 11, 22, 27, 32]);
    }
}
