//! The model's invariants, over every golden scenario in both models and over variations of
//! them (faster hardware, other batches):
//!
//! - each stream runs one op at a time, and every op starts after its dependencies end;
//! - exposed communication <= total communication; overlapped >= 0 (up to rounding);
//! - iteration >= the busier stream (compute + idle, or communication) and <= all in series;
//! - throughput = global batch / iteration time;
//! - more FLOP/s, HBM, NVLink or NIC bandwidth never makes an iteration slower (every start
//!   time is a max-plus expression of durations, so shorter ops cannot delay anything);
//! - memory per GPU is finite and not negative.
//!
//! Where the two models agree: on nothing exactly, by design. The default model counts every
//! GEMM MAD-Max counts and adds what it leaves out (attention's s^2 GEMMs, the output layer), so
//! for a language model its forward FLOPs per sample are never below the reference's: that
//! relation is checked.

use crate::support::{case_files, raw_of, read_json};
use madmax::engine::ops::Stream;
use madmax::engine::report::Report;
use madmax::engine::{evaluate, validate};
use serde_json::{json, Value};

const EPS: f64 = 1e-9;

fn check(name: &str, r: &Report) {
    for s in [Stream::Computation, Stream::Communication] {
        let mut end = 0.0f64;
        for op in r.stream(s) {
            assert!(op.start_s >= end - EPS * end.abs(), "{name}: {} overlaps its predecessor", op.name);
            end = op.end_s();
        }
    }
    for op in &r.timeline {
        for d in op.deps.ids() {
            let dep = r.timeline[d as usize].end_s();
            assert!(op.start_s >= dep - EPS * dep.abs(), "{name}: {} starts before its dependency", op.name);
        }
    }
    let tol = EPS * r.iteration_s.max(1e-30);
    assert!(r.exposed_comm_s <= r.comm_s + tol, "{name}: exposed {} > comm {}", r.exposed_comm_s, r.comm_s);
    assert!(r.overlapped_comm_s >= -tol, "{name}: overlapped {}", r.overlapped_comm_s);
    // The default model reports rounding below zero as zero (reference mode keeps it, Q28).
    if r.mode == madmax::engine::scenario::Mode::Default {
        assert!(r.overlapped_comm_s >= 0.0 && r.exposed_comm_s >= 0.0, "{name}: a negative share in the default model");
    }
    assert!(r.iteration_s + tol >= r.compute_s + r.idle_s, "{name}: iteration below compute + idle");
    // Each communication stream runs one op at a time within the iteration (the default
    // model's data-parallel stream runs beside the other, so their sum may exceed it).
    for stream in [Stream::Communication, Stream::DataParallel] {
        let busy_s: f64 = r.stream(stream).map(|op| op.duration_s).sum();
        assert!(r.iteration_s + tol >= busy_s, "{name}: iteration below its {stream:?} stream's communication");
    }
    if r.mode == madmax::engine::scenario::Mode::Reference {
        assert!(r.stream(Stream::DataParallel).next().is_none(), "{name}: reference mode has two streams");
    }
    assert!(
        r.iteration_s <= (r.compute_s + r.idle_s + r.comm_s) * (1.0 + 1e-9) + 1e-15,
        "{name}: iteration above all in series"
    );
    let want = r.global_batch as f64 / r.iteration_s;
    assert!((r.throughput_samples_per_s - want).abs() <= 1e-9 * want, "{name}: throughput");
    assert!(r.memory.total_bytes.is_finite() && r.memory.total_bytes >= 0.0, "{name}: memory");
    assert!(r.memory.parts.iter().all(|p| p.1 >= 0.0), "{name}: a negative memory part");
    critical_path_explains_the_end(name, r);
}

/// The critical path's ops, end to end, take the whole timeline: the scheduler starts every op
/// when something it waits for ends, so no wait is left over; no op has negative slack, and
/// none on the path has any.
fn critical_path_explains_the_end(name: &str, r: &Report) {
    let cp = r.critical_path();
    let end = r.timeline.iter().map(|op| op.end_s()).fold(0.0, f64::max);
    let tol = 1e-9 * end.max(1e-30);
    let t = cp.time(&r.timeline);
    let path = t.computation_s + t.communication_s + t.idle_s;
    assert!((path + cp.wait_s - end).abs() <= tol, "{name}: path {t:?} + wait {} != end {end}", cp.wait_s);
    // The path's communication is the end less its computation and idle time, so at least the
    // exposed communication (the end less all of it): more where computation has slack.
    assert!(t.communication_s + tol >= r.exposed_comm_s, "{name}: less communication on the path than exposed");
    assert!(cp.wait_s <= tol, "{name}: {} s of the path is waiting", cp.wait_s);
    assert!(cp.slack_s.iter().all(|s| *s >= 0.0), "{name}: negative slack");
    assert!(cp.ops.iter().all(|&i| cp.slack_s[i as usize] == 0.0), "{name}: slack on the path");
    assert!(cp.ops.windows(2).all(|w| w[0] < w[1]), "{name}: the path goes back in emission order");
    // Replayed with the same durations, the timeline ends where it ends. The end is the longest
    // chain of durations, so halving an op with slack leaves it, and halving one on the path
    // saves at most half the op.
    let same = r.end_with(|_, op| op.duration_s);
    assert!((same - end).abs() <= tol, "{name}: replayed {same} vs {end}");
    let half = |k: usize| r.end_with(move |i, op| if i == k { op.duration_s / 2.0 } else { op.duration_s });
    let longest_on_path = cp
        .ops
        .iter()
        .map(|&i| i as usize)
        .max_by(|a, b| r.timeline[*a].duration_s.total_cmp(&r.timeline[*b].duration_s));
    if let Some(k) = longest_on_path {
        let t = half(k);
        assert!(t <= end + tol && t >= end - r.timeline[k].duration_s / 2.0 - tol, "{name}: halving {k}: {t} vs {end}");
    }
    if let Some(k) = (0..r.timeline.len())
        .filter(|&i| cp.slack_s[i] > 0.0)
        .max_by(|a, b| r.timeline[*a].duration_s.total_cmp(&r.timeline[*b].duration_s))
    {
        let t = half(k);
        assert!((t - end).abs() <= tol, "{name}: halving {k} with slack {} moved the end: {t} vs {end}", cp.slack_s[k]);
    }
}

fn inputs(path: &std::path::Path, mode: &str) -> Value {
    let mut v = read_json(path)["inputs"].clone();
    v["task"]["mode"] = json!(mode);
    v
}

fn run(v: &Value) -> Option<Report> {
    validate(&raw_of(&json!({ "inputs": v }))).ok().map(|s| evaluate(&s))
}

#[test]
fn invariants_hold_on_every_golden_case_in_both_models() {
    let mut checked = 0;
    for f in case_files() {
        for mode in ["reference", "default"] {
            let Some(r) = run(&inputs(&f, mode)) else { continue };
            check(&format!("{} ({mode})", f.display()), &r);
            checked += 1;
        }
    }
    assert!(checked >= 280, "{checked}");
}

#[test]
fn faster_hardware_never_slows_an_iteration() {
    let keys: [&[&str]; 4] =
        [&["f64_flops", "f32_flops", "f16_flops", "i8_ops"], &["mem_bw"], &["bw_per_nvlink"], &["ibroce_bw"]];
    for f in case_files().iter().step_by(3) {
        for mode in ["reference", "default"] {
            let v = inputs(f, mode);
            let Some(before) = run(&v) else { continue };
            for group in keys {
                let mut w = v.clone();
                for k in group {
                    let x = w["system"][*k].as_f64().unwrap_or(1.0);
                    w["system"][*k] = json!(x * 2.0);
                }
                let Some(after) = run(&w) else { continue };
                assert!(
                    after.iteration_s <= before.iteration_s * (1.0 + 1e-12),
                    "{} ({mode}): doubling {group:?} went from {} to {} s",
                    f.display(),
                    before.iteration_s,
                    after.iteration_s
                );
                check(&format!("{} ({mode}, faster {group:?})", f.display()), &after);
            }
        }
    }
}

#[test]
fn the_default_model_counts_at_least_the_reference_flops() {
    for f in case_files() {
        let family = read_json(&f)["inputs"]["model"]["type"].as_str().unwrap_or("").to_owned();
        if !matches!(family.as_str(), "LLM" | "LLM_MoE") {
            continue;
        }
        let (Some(r), Some(d)) = (run(&inputs(&f, "reference")), run(&inputs(&f, "default"))) else { continue };
        if d.serving.is_some() {
            continue;
        }
        assert!(
            d.model.flops_per_sample >= r.model.flops_per_sample * (1.0 - 1e-9),
            "{}: {} < {}",
            f.display(),
            d.model.flops_per_sample,
            r.model.flops_per_sample
        );
    }
}

/// The cost estimate budgets rely on: never below the real op count, and not far above it, on
/// every golden case and scenario preset in both models (and each as inference).
#[test]
fn estimated_ops_bound_the_timeline_from_above_and_closely() {
    use madmax::engine::estimated_ops;
    let p = madmax::presets::all().expect("presets");
    let mut scenarios: Vec<Value> = case_files().iter().map(|f| read_json(f)["inputs"].clone()).collect();
    for sc in &p.scenarios {
        let [m, s, t] = p.configs(sc).expect("configs");
        scenarios.push(json!({"model": m, "system": s, "task": t}));
    }
    let mut worst = 1.0f64;
    let mut checked = 0;
    for v in &scenarios {
        for mode in ["reference", "default"] {
            for kind in [None, Some("inference")] {
                let mut w = v.clone();
                w["task"]["mode"] = json!(mode);
                if let Some(k) = kind {
                    w["task"]["type"] = json!(k);
                }
                let Ok(s) = validate(&raw_of(&json!({ "inputs": w }))) else { continue };
                let (n, est) = (evaluate(&s).timeline.len() as u64, estimated_ops(&s));
                assert!(n <= est, "{} ({mode}): {n} ops, estimated {est}", s.model().name);
                // Small timelines cost nothing either way; large ones must be estimated closely.
                if n >= 1000 {
                    worst = worst.max(est as f64 / n as f64);
                }
                assert!(est <= 32 * n + 200, "{} ({mode}): {n} ops, estimated {est}", s.model().name);
                checked += 1;
            }
        }
    }
    assert!(checked >= 500, "{checked}");
    assert!(worst < 3.0, "a timeline of 1,000 ops or more estimated {worst:.1} times its real count");
}
