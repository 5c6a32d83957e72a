//! Every golden case of the MAD-Max reference: the result keys, memory per device, derived
//! quantities and every op of both streams, to a relative 1e-9.

use crate::support::{case_files, close, data_dir, raw_of, read_json};
use madmax::engine::ops::Stream;
use madmax::engine::report::{MemPart, Report};
use madmax::engine::{evaluate, validate};
use serde_json::Value;

const REL: f64 = 1e-9;
/// 1e-9 ms near zero, in the unit compared.
const ABS_MS: f64 = 1e-9;
const ABS_S: f64 = 1e-12;

fn evaluate_case(case: &Value) -> Report {
    let raw = raw_of(case);
    let scenario = validate(&raw).unwrap_or_else(|e| panic!("{}: rejected: {e:?}", case["case"]));
    evaluate(&scenario)
}

/// Compares one number, collecting a readable line on mismatch.
fn cmp(problems: &mut Vec<String>, what: &str, got: f64, want: f64, abs: f64) {
    if !close(got, want, REL, abs) {
        problems.push(format!("{what}: got {got:?}, want {want:?}"));
    }
}

fn check_results(case: &Value, r: &Report, problems: &mut Vec<String>) {
    let want = &case["results"];
    let t = &r.totals;
    let ms = 1e3;
    let got = [
        ("gemm_ms", t.gemm_s * ms),
        ("emb_ms", t.emb_s * ms),
        ("all2all_ms", t.all2all_s * ms),
        ("allreduce_ms", t.allreduce_s * ms),
        ("allgather_ms", t.allgather_s * ms),
        ("reducescatter_ms", t.reducescatter_s * ms),
        ("exposed_comm_ms", r.exposed_comm_s * ms),
        ("overlapped_comm_ms", r.overlapped_comm_s * ms),
        ("iteration_ms", r.iteration_s * ms),
        ("throughput", r.throughput_samples_per_s),
    ];
    for (key, g) in got {
        let w = want[key].as_f64().unwrap_or_else(|| panic!("{key} in results"));
        cmp(problems, key, g, w, ABS_MS);
    }
    assert_eq!(Some(r.global_batch), want["global_bs"].as_u64(), "global_bs");

    let mem = &case["memory_per_device_bytes"];
    cmp(problems, "memory total", r.memory.total_bytes, mem["total_cap_per_device"].as_f64().unwrap_or(f64::NAN), 0.0);
    for (c, bytes) in &r.memory.parts {
        let key = match c {
            MemPart::Mlp => "mlp_cap_per_device",
            MemPart::Emb => "emb_cap_per_device",
            MemPart::Transformer => "transformer_cap_per_device",
            other => {
                problems.push(format!("reference mode reported a default-model memory part: {other:?}"));
                continue;
            }
        };
        cmp(problems, key, *bytes, mem[key].as_f64().unwrap_or(f64::NAN), 0.0);
    }
}

/// Derived quantities the reference prints: bandwidths, rates, lookup bytes.
fn check_derived(case: &Value, r: &Report, problems: &mut Vec<String>) {
    let sys = &case["derived"]["system"];
    let s = &r.system;
    let last = |k: &str| sys[k].as_array().and_then(|a| a.last()).and_then(Value::as_f64).unwrap_or(f64::NAN);
    cmp(problems, "eff_intra_bw", s.intra_node_bytes_per_s, sys["eff_intra_bw"].as_f64().unwrap_or(f64::NAN), 0.0);
    cmp(problems, "eff_inter_bw", s.inter_node_bytes_per_s, sys["eff_inter_bw"].as_f64().unwrap_or(f64::NAN), 0.0);
    cmp(problems, "eff_mem_bw", s.mem_bw_bytes_per_s, sys["eff_mem_bw"].as_f64().unwrap_or(f64::NAN), 0.0);
    cmp(problems, "eff_all2all_bw", s.all2all_bytes_per_s, last("eff_all2all_bw"), 0.0);
    cmp(problems, "eff_allreduce_bw", s.allreduce_bytes_per_s, last("eff_allreduce_bw"), 0.0);
    cmp(problems, "eff_allgather_bw", s.allgather_bytes_per_s, last("eff_allgather_bw"), 0.0);
    cmp(problems, "eff_reducescatter_bw", s.reducescatter_bytes_per_s, last("eff_reducescatter_bw"), 0.0);
    let task = &case["derived"]["task"];
    cmp(problems, "eff_flops", s.flops_per_s, task["eff_flops"].as_f64().unwrap_or(f64::NAN), 0.0);
    cmp(
        problems,
        "lookup_bytes_per_device",
        r.work.lookup_bytes_per_device,
        task["lookup_bytes_per_device"].as_f64().unwrap_or(f64::NAN),
        0.0,
    );
    cmp(
        problems,
        "global_total_flops",
        r.work.global_total_flops,
        task["global_total_flops"].as_f64().unwrap_or(f64::NAN),
        0.0,
    );
    let model = &case["derived"]["model"];
    cmp(problems, "total_params", r.model.params, model["total_params"].as_f64().unwrap_or(f64::NAN), 0.0);
    cmp(problems, "total_flops", r.model.flops_per_sample, model["total_flops"].as_f64().unwrap_or(f64::NAN), 0.0);
}

/// Every op of both streams: name, start and duration, in order.
fn check_streams(name: &str, r: &Report, problems: &mut Vec<String>) {
    let path = data_dir().join("reference/streams").join(format!("{name}.json"));
    let want = read_json(&path);
    for (key, stream) in [("computation", Stream::Computation), ("communication", Stream::Communication)] {
        let want = want[key].as_array().expect("stream list");
        let got: Vec<_> = r.stream(stream).collect();
        if got.len() != want.len() {
            problems.push(format!("{key}: {} ops, want {}", got.len(), want.len()));
        }
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            let (wn, ws, wd) =
                (w[0].as_str().unwrap_or(""), w[1].as_f64().unwrap_or(f64::NAN), w[2].as_f64().unwrap_or(f64::NAN));
            let gn = g.name.to_string();
            if gn != wn || !close(g.start_s, ws, REL, ABS_S) || !close(g.duration_s, wd, REL, ABS_S) {
                problems.push(format!(
                    "{key}[{i}]: got {gn} at {:?} for {:?}, want {wn} at {ws:?} for {wd:?}",
                    g.start_s, g.duration_s
                ));
                break; // the first difference explains the rest
            }
        }
    }
}

#[test]
fn all_golden_cases_match_the_reference() {
    let files = case_files();
    assert_eq!(files.len(), 150, "the 150 shared golden cases are under tests/data");
    let mut failures = Vec::new();
    for f in &files {
        let case = read_json(f);
        let name = case["case"].as_str().expect("case name").to_owned();
        let r = evaluate_case(&case);
        let mut problems = Vec::new();
        check_results(&case, &r, &mut problems);
        check_derived(&case, &r, &mut problems);
        check_streams(&name, &r, &mut problems);
        if !problems.is_empty() {
            failures.push(format!("{name}:\n  {}", problems.join("\n  ")));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases differ:\n{}", failures.len(), files.len(), failures.join("\n"));
}

#[test]
fn every_family_task_and_strategy_is_covered() {
    // Guards the coverage claim of the golden set itself (so a trimmed copy is noticed).
    let mut seen = std::collections::BTreeSet::new();
    for f in case_files() {
        let case = read_json(&f);
        let t = &case["inputs"]["task"];
        seen.insert(format!("family:{}", case["model_type"].as_str().unwrap_or("")));
        seen.insert(format!("task:{}", t["type"].as_str().unwrap_or("")));
        for key in ["mlp_parallel", "emb_parallel", "transformer_parallel"] {
            if let Some(levels) = t[key].as_array() {
                seen.insert(format!("levels:{}", levels.len()));
                for s in levels {
                    seen.insert(format!("strategy:{}", s.as_str().unwrap_or("")));
                }
            }
        }
    }
    for want in [
        "family:DLRM",
        "family:DLRM_MoE",
        "family:DLRM_Transformer",
        "family:LLM",
        "family:LLM_MoE",
        "family:ViT",
        "task:pretrain",
        "task:finetune",
        "task:inference",
        "strategy:ddp",
        "strategy:fsdp",
        "strategy:tp",
        "strategy:pp",
        "strategy:mp",
        "levels:1",
        "levels:2",
    ] {
        assert!(seen.contains(want), "golden set lacks {want}");
    }
}

#[test]
fn every_op_of_every_case_is_explained_exactly() {
    use madmax::engine::explain;
    for f in case_files() {
        let case = read_json(&f);
        let s = validate(&raw_of(&case)).expect("golden inputs are valid");
        let r = evaluate(&s);
        for op in &r.timeline {
            let e = explain(&s, &op.name).unwrap_or_else(|| panic!("{}: {} unexplained", f.display(), op.name));
            assert_eq!(e.seconds, op.duration_s, "{}: {}: {} with {:?}", f.display(), op.name, e.formula, e.terms);
            assert!(!e.terms.is_empty() && !e.what.is_empty());
        }
    }
}
