//! The CLI contract: `madmax eval FILE [--json]` and `madmax bench DIR`, run as a process.

use crate::support::{case_files, close, data_dir, madmax, madmax_stdin, read_json};
use madmax::accuracy::BandRuns;
use serde_json::Value;
use std::process::Output;

fn stdout_json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", String::from_utf8_lossy(&o.stdout)))
}

const KEYS: [&str; 10] = [
    "gemm_ms",
    "emb_ms",
    "all2all_ms",
    "allreduce_ms",
    "allgather_ms",
    "reducescatter_ms",
    "exposed_comm_ms",
    "overlapped_comm_ms",
    "iteration_ms",
    "throughput",
];

#[test]
fn eval_json_prints_the_contract_keys_for_a_case_file_and_a_plain_scenario() {
    let case_path = data_dir().join("reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json");
    let case = read_json(&case_path);
    let from_case = madmax(&["eval", "--json", case_path.to_str().expect("utf-8 path")]);
    assert!(from_case.status.success(), "{}", String::from_utf8_lossy(&from_case.stderr));
    let got = stdout_json(&from_case);
    for k in KEYS {
        let (g, w) = (got[k].as_f64(), case["results"][k].as_f64());
        assert!(matches!((g, w), (Some(g), Some(w)) if close(g, w, 1e-9, 1e-9)), "{k}: {g:?} vs {w:?}");
    }
    assert_eq!(got["global_batch"], 2048);
    let mem = case["memory_per_device_bytes"]["total_cap_per_device"].as_f64();
    assert_eq!(got["memory_per_device_bytes"].as_f64(), mem);

    // The same configs as {"model", "system", "task"} on standard input give the same numbers.
    let plain = serde_json::json!({
        "model": case["inputs"]["model"], "system": case["inputs"]["system"], "task": case["inputs"]["task"]
    });
    let from_stdin = madmax_stdin(&["eval", "-", "--json"], plain.to_string().as_bytes());
    assert!(from_stdin.status.success());
    assert_eq!(stdout_json(&from_stdin), got);
}

#[test]
fn eval_prints_a_readable_report_with_units() {
    let case_path = data_dir().join("reference/cases/dlrm__dlrm_a__zionex_128__dlrm_train.json");
    let o = madmax(&["eval", case_path.to_str().expect("utf-8 path")]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    for want in [
        "Model   DLRM_A (DLRM)",
        "System  ZionEX-128: 128 GPUs = 16 nodes x 8",
        "Task    pretrain",
        "MLP plan: fsdp 128",
        "Exposed communication",
        "Overlapped",
        "Iteration time",
        "Critical path",
        "samples/s",
        "Weights per GPU",
    ] {
        assert!(text.contains(want), "report lacks {want:?}:\n{text}");
    }
}

#[test]
fn eval_timeline_lists_every_op_of_both_streams() {
    let name = "vit__dinov2_l__zionex_8__llm_pre_tp_8x8_bs16";
    let path = data_dir().join(format!("reference/cases/{name}.json"));
    let o = madmax(&["eval", "--json", "--timeline", path.to_str().expect("utf-8 path")]);
    assert!(o.status.success());
    let got = stdout_json(&o);
    let want = read_json(&data_dir().join(format!("reference/streams/{name}.json")));
    for lane in ["computation", "communication"] {
        let (g, w) = (got["timeline"][lane].as_array(), want[lane].as_array());
        let (g, w) = (g.expect("lane"), w.expect("lane"));
        assert_eq!(g.len(), w.len(), "{lane}");
        assert_eq!(g.first().map(|o| &o[0]), w.first().map(|o| &o[0]));
        assert_eq!(g.last().map(|o| &o[0]), w.last().map(|o| &o[0]));
    }
}

#[test]
fn eval_timeline_gives_each_op_its_slack() {
    // FSDP on 2,048 GPUs: weight gathers run ahead of the computation, some with room to spare.
    let path = data_dir().join("reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json");
    let o = madmax(&["eval", "--json", "--timeline", path.to_str().expect("utf-8 path")]);
    assert!(o.status.success());
    let got = stdout_json(&o);
    // None on the critical path, whose ops take the whole iteration, as the JSON summary
    // splits it.
    assert_eq!(got["timeline"]["format"], "[name, t_start_s, duration_s, slack_s]");
    let ops: Vec<&Value> =
        ["computation", "communication"].iter().flat_map(|l| got["timeline"][*l].as_array().expect("lane")).collect();
    let num = |v: &Value| v.as_f64().expect("number");
    assert!(ops.iter().all(|o| num(&o[3]) >= 0.0));
    let critical: Vec<&&Value> = ops.iter().filter(|o| num(&o[3]) == 0.0).collect();
    let on_path: f64 = critical.iter().map(|o| num(&o[2])).sum::<f64>() * 1e3;
    let cp = &got["critical_path"];
    let split = num(&cp["computation_ms"]) + num(&cp["communication_ms"]) + num(&cp["idle_ms"]);
    let iteration = num(&got["iteration_ms"]);
    assert!((split - iteration).abs() < 1e-9 * iteration, "{split} vs {iteration}");
    assert!(critical.len() >= cp["ops"].as_u64().expect("ops") as usize && on_path >= iteration * (1.0 - 1e-9));
    assert!(critical.len() < ops.len(), "some op has slack");
}

/// Runs `eval --json` on text and checks the rejection contract; returns the error's field.
fn rejected(input: &str) -> String {
    let o = madmax_stdin(&["eval", "-", "--json"], input.as_bytes());
    assert_eq!(o.status.code(), Some(2), "input {input:.200}: stderr {}", String::from_utf8_lossy(&o.stderr));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line on stderr: {stderr}");
    assert!(stderr.starts_with("madmax: "), "{stderr}");
    let v = stdout_json(&o);
    assert!(v["error"].as_str().is_some_and(|e| !e.is_empty()), "{v}");
    // explore says the same, key for key (its JSON once dropped the reference's message).
    let e = madmax_stdin(&["explore", "-", "--json"], input.as_bytes());
    assert_eq!((e.status.code(), stdout_json(&e)), (Some(2), v.clone()), "explore on {input:.200}");
    v["field"].as_str().unwrap_or("").to_owned()
}

fn good_inputs() -> Value {
    let case = read_json(&data_dir().join("reference/cases/llm__llama_7b__zionex_8__llm_pre_fsdp_8x8_bs1.json"));
    serde_json::json!({"model": case["inputs"]["model"], "system": case["inputs"]["system"], "task": case["inputs"]["task"]})
}

#[test]
fn malformed_input_is_rejected_with_the_field_named() {
    // Not JSON at all, or not an object.
    assert_eq!(rejected("this is not json"), "");
    assert_eq!(rejected(""), "");
    assert_eq!(rejected("[1, 2, 3]"), "");
    // NaN is not JSON; Python would read it, we say why we do not.
    let nan = good_inputs().to_string().replace("\"mem_bw\":1555000000000.0", "\"mem_bw\":NaN");
    assert!(nan.contains("NaN"));
    rejected(&nan);
    // A config that is not an object.
    let mut v = good_inputs();
    v["system"] = Value::String("DC_A".into());
    assert_eq!(rejected(&v.to_string()), "system");

    let cases: &[(&str, &str, Value, &str)] = &[
        ("system", "num_devices", serde_json::json!("eight"), "system.num_devices"),
        ("system", "num_devices", serde_json::json!(0), "system.num_devices"),
        ("system", "num_devices", serde_json::json!(-8), "system.num_devices"),
        ("system", "num_devices", serde_json::json!(8.5), "system.num_devices"),
        ("system", "mem_bw", serde_json::json!(-1.0), "system.mem_bw"),
        ("system", "flops_util", serde_json::json!(1.5), "system.flops_util"),
        ("system", "flops_util", serde_json::json!(0), "system.flops_util"),
        ("system", "ar_perc_intra", serde_json::json!(null), "system.ar_perc_intra"),
        ("model", "attention_dim", serde_json::json!(0), "model.attention_dim"),
        ("model", "num_transformer_layers", serde_json::json!(1_000_000), "model.num_transformer_layers"),
        ("model", "bytes_per_emb_param", serde_json::json!(-2), "model.bytes_per_emb_param"),
        ("model", "type", serde_json::json!(7), "model.type"),
        ("task", "local_transformer_bs", serde_json::json!(0), "task.local_transformer_bs"),
        ("task", "transformer_parallel", serde_json::json!("fsdp"), "task.transformer_parallel"),
        ("task", "transformer_parallel_degree", serde_json::json!([8, 1]), "task.transformer_parallel_degree"),
        ("task", "transformer_parallel_degree", serde_json::json!(["8"]), "task.transformer_parallel_degree[0]"),
        ("task", "emb_parallel", serde_json::json!([]), "task.emb_parallel"),
    ];
    for (config, key, value, field) in cases {
        let mut v = good_inputs();
        v[config][key] = value.clone();
        assert_eq!(rejected(&v.to_string()), *field, "{config}.{key} = {value}");
    }
    // A missing key is reported by name.
    let mut v = good_inputs();
    v["system"].as_object_mut().expect("object").remove("num_nodes");
    assert_eq!(rejected(&v.to_string()), "system.num_nodes");
}

#[test]
fn missing_files_and_bad_arguments_exit_2() {
    let o = madmax(&["eval", "/no/such/file.json", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/no/such/file.json"));
    assert_eq!(madmax(&[]).status.code(), Some(2));
    assert_eq!(madmax(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(madmax(&["eval"]).status.code(), Some(2));
    assert!(madmax(&["--help"]).status.success());
}

#[test]
fn bench_prints_ours_and_the_reference_side_by_side() {
    let dir = std::env::temp_dir().join(format!("madmax-bench-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for f in case_files().iter().take(3) {
        std::fs::copy(f, dir.join(f.file_name().expect("file name"))).expect("copy case");
    }
    let o = madmax(&["bench", dir.to_str().expect("utf-8 path"), "--min-ms", "1"]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("total over 3 cases"), "{text}");
    assert!(text.contains("slowest reference case"), "{text}");
    assert_eq!(text.lines().filter(|l| l.trim_end().ends_with('x')).count(), 3 + 2, "{text}");
}

#[test]
fn explore_ranks_plans_and_beats_the_shipped_config() {
    let path = data_dir().join("reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json");
    let o = madmax(&["explore", path.to_str().expect("utf-8 path"), "--json", "--top", "5"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = stdout_json(&o);
    assert!(v["speedup"].as_f64().is_some_and(|x| x > 1.0), "{v}");
    assert_eq!(v["plans"].as_array().map(Vec::len), Some(5));
    let best = &v["best"];
    assert!(best["throughput"].as_f64() > v["baseline"]["throughput"].as_f64());
    // The best plan, put back into the task config, evaluates to the same numbers.
    let case = read_json(&path);
    let mut task = case["inputs"]["task"].clone();
    for (k, val) in best["task"].as_object().expect("task keys") {
        task[k] = val.clone();
    }
    let scenario =
        serde_json::json!({"model": case["inputs"]["model"], "system": case["inputs"]["system"], "task": task});
    let e = madmax_stdin(&["eval", "-", "--json"], scenario.to_string().as_bytes());
    assert!(e.status.success());
    assert_eq!(stdout_json(&e)["throughput"], best["throughput"]);
    // Text output names the speed-up, and the memory column what it is measured against: the
    // case's 40 GB A100s.
    let t = madmax(&["explore", path.to_str().expect("utf-8 path")]);
    let text = String::from_utf8_lossy(&t.stdout);
    assert!(text.contains("best speed-up over your plan"));
    assert!(text.lines().next().is_some_and(|l| l.contains("on 2048 GPUs of 40.0 GB HBM: ")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("rank") && l.contains("weights/GPU")), "{text}");
}

#[test]
fn explore_says_when_the_given_plan_cannot_run_and_quotes_no_speed_up_over_it() {
    // In the default model, FSDP over 2,048 A100 40GB at one sequence each without
    // recomputation needs more than 40 GB per GPU; plans with tensor and pipeline parallelism fit.
    let path = data_dir().join("reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json");
    let path = path.to_str().expect("utf-8 path");
    let v = stdout_json(&madmax(&["explore", path, "--json", "--mode", "default"]));
    assert_eq!((v["baseline"]["fits"].as_bool(), v["best"]["fits"].as_bool()), (Some(false), Some(true)), "{v}");
    // Every row: tokens/s (4,096 tokens per sample) and MFU.
    let best_tput = v["best"]["throughput"].as_f64().expect("throughput");
    let tokens = v["best"]["tokens_per_s"].as_f64().expect("tokens/s");
    assert!((tokens / (best_tput * 4096.0) - 1.0).abs() < 1e-12, "{tokens} vs {best_tput} x 4096");
    assert!(v["best"]["mfu"].as_f64().is_some_and(|m| m > 0.0 && m < 1.0), "{v}");
    assert!(v["speedup"].is_null(), "{v}");
    let text = String::from_utf8_lossy(&madmax(&["explore", path, "--mode", "default"]).stdout).into_owned();
    let best = v["best"]["plan"].as_str().expect("plan");
    let last = text.lines().last().unwrap_or("");
    assert!(last.starts_with("your plan cannot run: it needs ") && last.contains(best), "{text}");
    assert!(!text.contains("already the best") && !text.contains("speed-up"), "{text}");
    // The best plan's task keys carry every setting the explorer chose; put back into the task
    // config, they evaluate to the same numbers.
    let keys = v["best"]["task"].as_object().expect("task keys");
    for k in ["micro_batch", "recompute", "zero_stage", "sequence_parallel", "transformer_parallel"] {
        assert!(keys.contains_key(k), "{k} missing: {keys:?}");
    }
    let case = read_json(std::path::Path::new(path));
    let mut task = case["inputs"]["task"].clone();
    task["mode"] = serde_json::json!("default");
    for (k, val) in keys {
        task[k] = val.clone();
    }
    let scenario =
        serde_json::json!({"model": case["inputs"]["model"], "system": case["inputs"]["system"], "task": task});
    let e = madmax_stdin(&["eval", "-", "--json"], scenario.to_string().as_bytes());
    assert!(e.status.success(), "{}", String::from_utf8_lossy(&e.stderr));
    assert_eq!(stdout_json(&e)["throughput"], v["best"]["throughput"]);
    // A model no plan can hold: it says that too. GPT-4 1.8T served on one node of 8 H100s
    // (3.6 TB of weights over 640 GB): on 512 GPUs a pipeline's prefill micro-batches leave
    // room for plans that fit.
    let path =
        data_dir().join("reference/cases/llm_moe__gpt4_1.8t__cloud_A_h100.80_512__llm_inf_tp_ddp_512x8_bs1.json");
    let mut one_node = read_json(&path)["inputs"].clone();
    one_node["system"]["num_devices"] = serde_json::json!(8);
    one_node["system"]["num_nodes"] = serde_json::json!(1);
    one_node["system"]["ar_perc_intra"] = serde_json::json!(1);
    one_node["task"]["transformer_parallel_degree"] = serde_json::json!([8, 1]);
    one_node["task"]["emb_parallel_degree"] = serde_json::json!([8]);
    let o = madmax_stdin(&["explore", "-", "--mode", "default"], one_node.to_string().as_bytes());
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(text.trim_end().ends_with("and no plan searched fits either"), "{text}");
    // Training a model with too many plans to try every setting on each: the search runs in
    // two passes, the settings tried on the most promising plans, and says so.
    let path = data_dir().join("reference/cases/llm_moe__gpt4_1.8t__cloud_A_h100.80_2048__llm_train.json");
    let path = path.to_str().expect("utf-8");
    let o = madmax(&["explore", path, "--mode", "default"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = stdout_json(&madmax(&["explore", path, "--mode", "default", "--json"]));
    assert_eq!(v["settings_searched"], false);
    let tried = v["settings_searched_plans"].as_u64().expect("a count");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(&format!(
            "those that cost no time (the overlap options, sequence parallelism, ZeRO-1; a pipeline at 4 micro-batches per stage or more), and the {tried} most promising"
        )),
        "{text}"
    );
    assert!(v["best"]["fits"].as_bool().expect("fits") && v["best"]["task"]["micro_batch"].is_u64(), "{v}");
    let v = stdout_json(&madmax(&[
        "explore",
        data_dir().join("reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json").to_str().expect("utf-8"),
        "--mode",
        "default",
        "--json",
    ]));
    assert_eq!(v["settings_searched"], true);
    assert!(v["settings_searched_plans"].is_null());
}

#[test]
fn eval_mode_switches_between_the_reference_and_the_default_model() {
    let case = data_dir().join("reference/cases/llm__llama_7b__zionex_8__llm_pre_fsdp_8x8_bs1.json");
    let path = case.to_str().expect("utf-8 path");
    let reference = stdout_json(&madmax(&["eval", path, "--json"]));
    assert_eq!(reference["mode"], "reference");
    let golden = read_json(&case);
    let want = golden["results"]["iteration_ms"].as_f64().expect("golden iteration");
    assert!(close(reference["iteration_ms"].as_f64().unwrap_or(f64::NAN), want, 1e-9, 0.0));
    // Both modes print an MFU (the page shows the same figure).
    assert!(reference["mfu"].as_f64().is_some_and(|m| m > 0.0 && m < 1.0), "{reference}");
    let paper_text = String::from_utf8_lossy(&madmax(&["eval", path]).stdout).into_owned();
    assert!(paper_text.contains("\nModel FLOPs utilisation "), "{paper_text}");
    let default = stdout_json(&madmax(&["eval", path, "--json", "--mode", "default"]));
    assert_eq!(default["mode"], "default");
    assert!(default["mfu"].as_f64().is_some_and(|m| m > 0.0 && m < 1.0));
    assert!(default["iteration_ms"].as_f64() != reference["iteration_ms"].as_f64());
    let text = String::from_utf8_lossy(&madmax(&["eval", path, "--mode", "default"]).stdout).into_owned();
    assert!(text.contains("Mode    default model") && text.contains("MFU"), "{text}");
    let bad = madmax(&["eval", path, "--mode", "fast"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn a_cnn_is_evaluated_by_the_default_model_and_refused_in_paper_mode() {
    // A config without a mode key: MAD-Max has no CNNs, so the default model evaluates it.
    let case = data_dir().join("cnn/resnet50_a100_8.json");
    let path = case.to_str().expect("utf-8 path");
    let r = stdout_json(&madmax(&["eval", path, "--json"]));
    assert_eq!(r["mode"], "default");
    // 256 images on each of 8 GPUs; 3 x 8.18 GFLOP per image at an MFU between 20% and 60%
    // (ResNet-50 on A100s: NVIDIA's and MLPerf's runs are near 30%).
    let images_per_s = r["throughput"].as_f64().unwrap_or(f64::NAN);
    assert!(close(r["iteration_ms"].as_f64().unwrap_or(f64::NAN) / 1e3 * images_per_s, 2048.0, 1e-9, 0.0), "{r}");
    assert!(r["mfu"].as_f64().is_some_and(|m| m > 0.2 && m < 0.6), "{r}");
    let text = String::from_utf8_lossy(&madmax(&["eval", path]).stdout).into_owned();
    assert!(text.contains("network plan: ddp 8, local batch 256") && text.contains("25.6 M parameters"), "{text}");
    let paper = madmax(&["eval", path, "--json", "--mode", "reference"]);
    assert_eq!(paper.status.code(), Some(2));
    let e = stdout_json(&paper);
    assert_eq!(e["field"], "task.mode", "{e}");
    assert!(e["error"].as_str().is_some_and(|m| m.contains("no CNNs")), "{e}");
}

#[test]
fn an_encoder_decoder_is_evaluated_by_the_default_model_and_what_it_cannot_do_is_named() {
    // mT5-XL pre-training on 64 A100s (ZeRO-2), without a mode key: MAD-Max has no
    // encoder-decoders, so the default model evaluates it.
    let case = data_dir().join("encdec/mt5_xl_a100_64.json");
    let path = case.to_str().expect("utf-8 path");
    let r = stdout_json(&madmax(&["eval", path, "--json"]));
    assert_eq!(r["mode"], "default");
    // Tokens are counted as mT5 counts its batches: the 1,024 input tokens of each sample.
    let (tokens, samples) = (r["tokens_per_s"].as_f64(), r["throughput"].as_f64());
    assert!(matches!((tokens, samples), (Some(t), Some(s)) if close(t, s * 1024.0, 1e-12, 0.0)), "{r}");
    assert!(r["mfu"].as_f64().is_some_and(|m| m > 0.2 && m < 0.6), "{r}");
    let text = String::from_utf8_lossy(&madmax(&["eval", path]).stdout).into_owned();
    assert!(text.contains("3.74 B parameters") && text.contains("EncoderDecoder"), "{text}");
    assert!(text.contains("encoder-decoder models (T5, mT5)"), "{text}");
    // The explorer searches only plans the default model runs for it (no context or expert
    // parallelism) at the same global batch, and its best plan fits.
    let e = stdout_json(&madmax(&["explore", path, "--json", "--top", "40"]));
    let plans = e["plans"].as_array().map_or(&[][..], Vec::as_slice);
    assert!(!plans.is_empty() && e["best"]["fits"] == true, "{e}");
    for p in plans {
        let levels = p["task"]["transformer_parallel"].as_array().map_or(&[][..], Vec::as_slice);
        assert!(levels.iter().all(|s| ["ddp", "fsdp", "tp", "pp"].contains(&s.as_str().unwrap_or(""))), "{p}");
        assert_eq!(p["global_batch"], 1024, "{p}");
    }
    // What it refuses, each naming its field.
    let doc = read_json(&case);
    let with = |f: &dyn Fn(&mut Value)| {
        let mut d = doc.clone();
        f(&mut d);
        d.to_string()
    };
    let paper = with(&|d| d["task"]["mode"] = "reference".into());
    assert_eq!(rejected(&paper), "task.mode");
    let serve = with(&|d| d["task"]["type"] = "inference".into());
    assert_eq!(rejected(&serve), "task.type");
    let cp = with(&|d| {
        d["task"]["transformer_parallel"] = serde_json::json!(["cp", "ddp"]);
        d["task"]["transformer_parallel_degree"] = serde_json::json!([2, 32]);
    });
    // (The explorer searches from data parallelism instead, saying why: its own test.)
    let o = madmax_stdin(&["eval", "-", "--json"], cp.as_bytes());
    assert_eq!((o.status.code(), &stdout_json(&o)["field"]), (Some(2), &Value::from("task.transformer_parallel")));
    let no_target = with(&|d| {
        d["model"].as_object_mut().map(|m| m.remove("target_seq_len"));
    });
    assert_eq!(rejected(&no_target), "model.target_seq_len");
}

#[test]
fn a_modelled_input_pipeline_says_what_a_clip_costs_and_which_part_sets_the_pace() {
    let clips = data_dir().join("loader/vit_l_clips_1080p.json");
    let clips = clips.to_str().expect("utf-8 path");
    // ViT-L on 8 A100s reading 16-frame 1080p clips decoded by 128 cores: decoding paces it.
    let r = stdout_json(&madmax(&["eval", clips, "--json"]));
    let bound = &r["limits"][0]["InputBound"];
    assert_eq!(bound["by"], "Decoding", "{r}");
    let rate = bound["loader_samples_per_s"].as_f64().expect("a rate");
    assert!((rate - 66.2).abs() < 0.1 && (r["throughput"].as_f64().expect("throughput") - rate).abs() < 1e-6, "{r}");
    let text = String::from_utf8_lossy(&madmax(&["eval", clips]).stdout).into_owned();
    assert!(
        text.contains("input: 16 frames of 2.07 M pixels per sample, 186 frames decoded (keyframe every 250 frames, every 4th frame sampled), by 128 CPU cores per node at 199 M pixel/s each: 66.2 samples/s"),
        "{text}"
    );
    assert!(text.contains("(as fast as its decoders go)"), "{text}");
    // Storage slower still: it sets the pace, and the limit says so.
    let mut doc = read_json(std::path::Path::new(clips));
    doc["task"]["loader_bytes_per_sample"] = 1.7e6.into();
    doc["task"]["loader_storage_bytes_per_s"] = 50e6.into();
    let o = stdout_json(&madmax_stdin(&["eval", "-", "--json"], doc.to_string().as_bytes()));
    assert_eq!(o["limits"][0]["InputBound"]["by"], "Storage", "{o}");
    assert!((o["limits"][0]["InputBound"]["loader_samples_per_s"].as_f64().expect("rate") - 50e6 / 1.7e6).abs() < 1e-9);
    // Half of storage's keys is refused under the missing one.
    doc["task"]["loader_storage_bytes_per_s"] = Value::Null;
    assert_eq!(rejected(&doc.to_string()), "task.loader_storage_bytes_per_s");
}

#[test]
fn clusters_of_two_gpu_types_and_of_several_sites_are_evaluated_searched_and_refused_in_paper_mode() {
    let mixed = data_dir().join("clusters/h100_a100_pipeline.json");
    let sites = data_dir().join("clusters/h100_two_sites.json");
    let (mixed, sites) = (mixed.to_str().expect("utf-8 path"), sites.to_str().expect("utf-8 path"));
    // 8 H100 nodes and 8 A100 nodes, the pipeline outermost: its stages are placed by speed,
    // so no type paces it, and MFU counts each GPU's own peak.
    let r = stdout_json(&madmax(&["eval", mixed, "--json"]));
    let limits = r["limits"].to_string();
    assert!(!limits.contains("PacedBy") && r["mfu"].as_f64().is_some_and(|m| m > 0.0), "{r}");
    let text = String::from_utf8_lossy(&madmax(&["eval", mixed]).stdout).into_owned();
    assert!(text.contains("the last 8 nodes hold A100 80GB GPUs: the pipeline's stages placed by speed"), "{text}");
    // The pipeline inside the data parallelism: every stage spans both types, the A100s pace.
    let doc = read_json(std::path::Path::new(mixed));
    let mut inner = doc.clone();
    inner["task"]["transformer_parallel"] = serde_json::json!(["tp", "pp", "ddp"]);
    let o = madmax_stdin(&["eval", "-", "--json"], inner.to_string().as_bytes());
    let paced = stdout_json(&o);
    assert!(paced["limits"].to_string().contains(r#"{"PacedBy":{"other_iteration_s":"#), "{paced}");
    assert_eq!(
        paced["limits"].as_array().and_then(|l| l.last()).map(|l| l["PacedBy"]["second_gpu"].clone()),
        Some("A100 80GB".into())
    );
    assert!(paced["iteration_ms"].as_f64() > r["iteration_ms"].as_f64(), "{paced} {r}");
    // Two sites: the explorer searches them, and its best plan fits and is no slower than
    // the given one.
    let r = stdout_json(&madmax(&["eval", sites, "--json"]));
    let e = stdout_json(&madmax(&["explore", sites, "--json", "--top", "5"]));
    assert!(e["best"]["fits"] == true && e["best"]["iteration_ms"].as_f64() <= r["iteration_ms"].as_f64(), "{e}");
    // Paper mode has neither, and says so under the field.
    for (doc, field) in [(doc, "system.second_gpu_nodes"), (read_json(std::path::Path::new(sites)), "system.num_sites")]
    {
        let mut d = doc;
        d["task"]["mode"] = "reference".into();
        assert_eq!(rejected(&d.to_string()), field);
    }
}

/// The display conventions (#22 item 6): tokens/s next to a language model's samples/s,
/// counts in the singular for one, MFU and HFU on stated bases, and an inference MFU that counts the forward pass only
/// (durations under a nanosecond read 0: `units`' tests).
#[test]
fn eval_text_follows_the_display_conventions() {
    let text = |case: &str, extra: &[&str]| {
        let path = data_dir().join("reference/cases").join(case);
        let mut args = vec!["eval", path.to_str().expect("utf-8 path")];
        args.extend_from_slice(extra);
        let o = madmax(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let train = text("llm__llama2_70b__dc_A_2048__llm_train.json", &[]);
    assert!(train.contains("Throughput            281 samples/s (1.15 M tokens/s)"), "{train}");
    let json = stdout_json(&madmax(&[
        "eval",
        "--json",
        data_dir().join("reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json").to_str().expect("utf-8"),
    ]));
    let (tokens, samples) = (json["tokens_per_s"].as_f64(), json["throughput"].as_f64());
    assert!(matches!((tokens, samples), (Some(t), Some(s)) if close(t, s * 4096.0, 1e-12, 0.0)), "{json}");

    let serve = text("llm__llama_7b__zionex_8__llm_inf_tp_8x8_bs1.json", &["--mode", "default"]);
    assert!(serve.contains("= 1 node x 8") && serve.contains("x 1 replica,"), "{serve}");
    assert!(serve.contains("\nRequests ") && serve.contains("requests/s ("), "{serve}");
    assert!(serve.contains("\nOutput tokens/s ") && serve.contains("tokens/s per GPU"), "{serve}");

    // MFU and HFU each with its FLOP/s, so a source's TFLOP/s can be matched on its basis.
    let default = text("llm__llama2_70b__dc_A_2048__llm_train.json", &["--mode", "default"]);
    assert!(default.contains("per GPU of model FLOPs") && default.contains("; HFU "), "{default}");
    assert!(default.contains("TFLOP/s with recomputation"), "{default}");

    let vit = text("vit__vit_10b__cloud_B_a100.40_128__vit_inference.json", &["--mode", "default"]);
    assert!(vit.contains("(the forward pass)") && !vit.contains("forward + backward"), "{vit}");
    assert!(!vit.contains("tokens/s"), "a vision model has no tokens: {vit}");
}

/// The headline figures are one structure (`madmax::figures`, #22 item 3): the text prints each
/// as a line, the JSON carries the same figures (the calculator draws them from it too, which
/// the browser tests check against this JSON).
#[test]
fn eval_text_and_json_print_the_same_headline_figures() {
    for (case, mode) in [
        ("llm__llama2_70b__dc_A_2048__llm_train.json", "default"),
        ("llm__llama2_70b__dc_A_2048__llm_train.json", "reference"),
        ("llm__llama_7b__zionex_8__llm_inf_tp_8x8_bs1.json", "default"),
        ("dlrm__dlrm_a__zionex_128__dlrm_train.json", "default"),
    ] {
        let path = data_dir().join("reference/cases").join(case);
        let path = path.to_str().expect("utf-8 path");
        let text = String::from_utf8_lossy(&madmax(&["eval", path, "--mode", mode]).stdout).into_owned();
        let json = stdout_json(&madmax(&["eval", path, "--mode", mode, "--json"]));
        let figures = json["figures"].as_array().expect("figures");
        let ids: Vec<&str> = figures.iter().filter_map(|f| f["id"].as_str()).collect();
        assert_eq!(ids[..5], ["iteration-time", "throughput", "exposed-comm", "mfu", "memory"], "{case} {mode}");
        assert_eq!(figures[0]["raw"].as_f64(), json["iteration_ms"].as_f64().map(|ms| ms / 1e3), "{case} {mode}");
        for f in figures {
            let field = |k: &str| f[k].as_str().unwrap_or_default().to_owned();
            let line = match field("detail") {
                d if d.is_empty() => format!("{:<21} {}", field("label"), field("value")),
                d => format!("{:<21} {} ({d})", field("label"), field("value")),
            };
            assert!(text.lines().any(|l| l == line), "{case} {mode}: no line {line:?} in\n{text}");
        }
    }
}

#[test]
fn validate_prints_rows_and_a_summary_and_json_with_signed_errors() {
    let csv = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/presets/data/validation/training.csv");
    let path = csv.to_str().expect("utf-8 path");
    let o = madmax(&["validate", path]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("vtrain-m-001") && text.contains("Absolute error of the default model"), "{text}");
    assert!(text.contains("microbatch blank"), "defaults are listed");
    let v = stdout_json(&madmax(&["validate", path, "--json"]));
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 127);
    for r in rows {
        let (p, m, e) = (r["predicted"].as_f64(), r["measured"].as_f64(), r["error"].as_f64());
        let (p, m, e) = (p.expect("predicted"), m.expect("measured"), e.expect("error"));
        assert!(((p - m) / m - e).abs() < 1e-12, "{}", r["id"]);
    }
    assert!(v["summary"]["all"]["median_abs_error"].as_f64().is_some_and(|x| x <= 0.10));
    // The floor: the two runs that do the same work, the larger micro-batch measured slower.
    let floor = &v["floor"];
    let measured = |id: &serde_json::Value| {
        rows.iter().find(|r| &r["id"] == id).and_then(|r| r["measured"].as_f64()).expect("a row of the file")
    };
    let (slow, fast) = (measured(&floor["larger"]["id"]), measured(&floor["smaller"]["id"]));
    assert!(floor["larger"]["micro_batch"].as_u64() > floor["smaller"]["micro_batch"].as_u64(), "{floor}");
    assert!(floor["error"].as_f64().is_some_and(|e| (e - (slow - fast) / (slow + fast)).abs() < 1e-12), "{floor}");
    assert!(v["summary"]["all"]["max_abs_error"].as_f64() >= floor["error"].as_f64());
    assert!(text.contains("\nFloor: No model in which the same work in fewer, larger micro-batches runs no slower can come within 32.9 % of every row: vtrain-m-016 (1 micro-batch of 64 per data-parallel rank) measured 9.84 s, vtrain-m-017"), "{text}");
    // The same sweep without the run of 64: consistent, no floor.
    let sweep: String = std::fs::read_to_string(&csv)
        .expect("csv")
        .lines()
        .filter(|l| {
            l.starts_with("id,")
                || ["017", "018", "019", "020"].iter().any(|n| l.starts_with(&format!("vtrain-m-{n},")))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let sweep_path = std::env::temp_dir().join(format!("madmax-floor-test-{}.csv", std::process::id()));
    std::fs::write(&sweep_path, sweep).expect("temp csv");
    let sweep_path = sweep_path.to_str().expect("utf-8 path");
    let o = madmax(&["validate", sweep_path]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("Floor:"));
    let v = stdout_json(&madmax(&["validate", sweep_path, "--json"]));
    assert_eq!((v["rows"].as_array().map(Vec::len), &v["floor"]), (Some(4), &serde_json::Value::Null));
    let _ = std::fs::remove_file(sweep_path);
    let missing = madmax(&["validate", "/nonexistent.csv"]);
    assert_eq!(missing.status.code(), Some(2));
    // Several files at once, as the shipped training runs: the spread per kind of plan that
    // the calculator quotes, as text and as JSON.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/presets/data/validation");
    let files: Vec<String> =
        ["training.csv", "added.csv"].iter().map(|f| dir.join(f).to_str().expect("utf-8 path").to_owned()).collect();
    let mut args = vec!["validate"];
    args.extend(files.iter().map(String::as_str));
    let o = madmax(&args);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    let band_line = |b: &madmax::accuracy::Band| {
        format!("{:<28} {:<5} {:>4} runs  {:.2}  {:.2}  {:.2}", b.plan_label(), b.gpu, b.runs, b.low, b.median, b.high)
    };
    // The training files give the training bands.
    let training: Vec<_> = madmax::accuracy::BANDS.iter().filter(|b| b.of == BandRuns::Training).collect();
    for b in &training {
        assert!(text.contains(&band_line(b)), "{}\n{text}", band_line(b));
    }
    args.push("--json");
    let bands = stdout_json(&madmax(&args))["bands"].as_array().expect("bands").clone();
    assert_eq!(bands.len(), training.len());
    assert!(bands.iter().zip(&training).all(|(j, b)| j["parallelism"] == b.parallelism
        && j["runs_of"] == "training"
        && j["runs"].as_u64() == Some(b.runs as u64)
        && j["high"].as_f64() == Some(b.high)));
    // Without a file: the shipped runs, summarised per set with the figures the library computes,
    // and every band, static batches of serving included.
    let o = madmax(&["validate"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    for b in madmax::accuracy::BANDS {
        assert!(text.contains(&band_line(b)), "{}\n{text}", band_line(b));
    }
    assert!(text.contains("  static serving, TP 8         A100    74 runs  1.17  1.30  1.49\n"), "{text}");
    let summary = madmax::accuracy::summarize(&madmax::accuracy::shipped()).expect("summary");
    // Each line with its rows and median: per set, then per kind of run and set (LLM training
    // and serving are judged apart).
    let printed = |line: String, st: &madmax::accuracy::Stats| {
        let found =
            text.lines().find(|l| l.trim_start().starts_with(&line)).unwrap_or_else(|| panic!("{line}\n{text}"));
        assert!(found.contains(&format!("{} rows  median {:>5.1}%", st.rows, st.median_abs_error * 100.0)), "{found}");
    };
    assert!(summary.by_set.len() == 2 && summary.by_kind.len() == 8);
    for (set, st) in &summary.by_set {
        printed(format!("{} set", set.label()), st);
    }
    for (kind, set, st) in &summary.by_kind {
        printed(format!("{}, {} set", kind.label(), set.label()), st);
    }
    assert!(text.contains("BigScience BLOOM 176B training [held-out]"), "{text}");
    // The GEMMs profiled one by one come with the shipped runs only: a line per GPU, the
    // library's sentence, and the same figures in JSON.
    let checks = madmax::accuracy::gemm_check(madmax::accuracy::GEMM_KERNELS_CSV).expect("the GEMM check");
    assert!(text.contains("\nGEMM times against 1,632 GEMMs of transformer layers profiled one by one"), "{text}");
    for c in &checks {
        assert!(text.contains(&format!("  {}\n", madmax::accuracy::gemm_check_sentence(c))), "{text}");
    }
    let v = stdout_json(&madmax(&["validate", "--json"]));
    assert_eq!(v["kernels"], serde_json::json!(checks));
    assert!(!String::from_utf8_lossy(&madmax(&["validate", &files[0]]).stdout).contains("GEMM times"));
    assert_eq!(stdout_json(&madmax(&["validate", &files[0], "--json"]))["kernels"], serde_json::Value::Null);
    assert_eq!(v["summary"]["by_set"][1][0], "held-out");
    assert_eq!(v["summary"]["by_kind"][2][0], "llm-serving");
    assert_eq!(v["summary"]["by_kind"][2][1], "calibration");
    // One missing file among several is named.
    let o = madmax(&["validate", &files[0], "/nonexistent.csv"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent.csv"));
}

#[test]
fn stories_list_each_famous_run_against_its_source() {
    let o = madmax(&["stories"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("megatron-1t") && text.contains("llama3-405b"), "{text}");
    let v = stdout_json(&madmax(&["stories", "--json"]));
    let rows = v.as_array().expect("a list");
    assert!(rows.len() >= 10);
    for r in rows {
        let (p, rep, d) = (r["predicted"].as_f64(), r["reported"].as_f64(), r["difference"].as_f64());
        let (p, rep, d) = (p.expect("predicted"), rep.expect("reported"), d.expect("difference"));
        assert!(((p - rep) / rep - d).abs() < 1e-12, "{}", r["id"]);
    }
    let megatron = rows.iter().find(|r| r["id"] == "megatron-1t").expect("story");
    assert!(megatron["citation"].as_str().is_some_and(|c| c.contains("Narayanan")));
    assert_eq!(madmax(&["stories", "--bogus"]).status.code(), Some(2));
}

/// The corpus of malformed inputs (`tests/data/invalid/`; add every input that ever broke
/// something): JSON scenarios exit 2 with one line naming the problem, in both models; CSV files
/// exit 2 or list their bad rows as skipped. A panic (exit 101) fails.
#[test]
fn every_malformed_input_of_the_corpus_exits_2_with_a_message() {
    let dir = data_dir().join("invalid");
    let mut files: Vec<_> = std::fs::read_dir(&dir).expect("corpus").filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    assert!(files.len() >= 15, "{} files", files.len());
    for f in &files {
        let path = f.to_str().expect("utf-8 path");
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(".json") {
            // (--mode overrides the file's mode, which one corpus file gets wrong on purpose.)
            let mut runs = vec![vec!["eval", path], vec!["eval", path, "--json"]];
            if name != "unknown_mode.json" {
                runs.push(vec!["eval", path, "--mode", "default"]);
            }
            for args in runs {
                let o = madmax(&args);
                assert_ne!(o.status.code(), Some(101), "{name} {args:?}: panicked");
                assert_eq!(o.status.code(), Some(2), "{name} {args:?}: {}", String::from_utf8_lossy(&o.stdout));
                let err = String::from_utf8_lossy(&o.stderr);
                assert!(err.starts_with("madmax: ") && err.lines().count() == 1, "{name}: {err}");
            }
        } else if name.ends_with(".csv") {
            let o = madmax(&["validate", path]);
            assert_ne!(o.status.code(), Some(101), "{name}: panicked");
            let out = String::from_utf8_lossy(&o.stdout);
            assert!(o.status.code() == Some(2) || out.contains("skipped"), "{name}: {out}");
        }
    }
}

/// A small GPT split 8 ways by tensor parallelism with one short sequence per micro-batch: the
/// report says it is host-bound, and adds what published runs of that kind measured; split 4
/// ways it is host-bound without that note.
#[test]
fn a_host_bound_eight_way_split_carries_what_published_runs_measured() {
    let eval = |tp: u64| {
        let mut v = good_inputs();
        v["model"]["attention_dim"] = serde_json::json!(1024);
        v["model"]["transformer_fc_dim"] = serde_json::json!(4096);
        v["model"]["num_transformer_heads"] = serde_json::json!(16);
        v["model"]["num_kv_heads"] = serde_json::json!(16);
        v["model"]["transformer_seq_len"] = serde_json::json!(1024);
        let n = v["system"]["num_devices"].as_u64().expect("devices");
        v["task"]["mode"] = serde_json::json!("default");
        v["task"]["transformer_parallel"] = serde_json::json!(["tp", "ddp"]);
        v["task"]["transformer_parallel_degree"] = serde_json::json!([tp, n / tp]);
        v["task"]["micro_batch"] = serde_json::json!(1);
        v["task"]["local_transformer_bs"] = serde_json::json!(1);
        let o = madmax_stdin(&["eval", "-"], v.to_string().as_bytes());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let eight = eval(8);
    assert!(eight.contains("Limit                 Host-bound: "), "{eight}");
    assert!(eight.contains(madmax::accuracy::TP8_HOST_NOTE), "{eight}");
    let four = eval(4);
    assert!(
        four.contains("Limit                 Host-bound: ") && !four.contains("published runs like this"),
        "{four}"
    );
}

/// A default-model pre-training run of a dense LLM on A100s says what published runs of its kind
/// measured: a range around its time at the GEMM fraction they were predicted with (0.80; the
/// case's system carries MAD-Max's 0.705). Paper mode says nothing of the kind.
#[test]
fn a_validated_kind_of_run_gives_the_range_its_published_kind_measured() {
    let inputs = |mode: &str, flops_util: f64| {
        let mut v = good_inputs();
        v["task"]["mode"] = serde_json::json!(mode);
        v["task"]["recompute"] = serde_json::json!("full");
        v["system"]["flops_util"] = serde_json::json!(flops_util);
        v.to_string()
    };
    let out = |args: &[&str], stdin: &str| {
        let o = madmax_stdin(args, stdin.as_bytes());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let text = out(&["eval", "-"], &inputs("default", 0.705));
    let calibrated: Value =
        serde_json::from_str(&out(&["eval", "-", "--json"], &inputs("default", 0.80))).expect("json");
    let calibrated_s = calibrated["iteration_ms"].as_f64().expect("iteration_ms") / 1e3;
    // LLaMA-7B, FSDP over 8 A100s: the data-parallel band.
    let band = madmax::accuracy::BANDS.iter().find(|b| b.parallelism == "DP" && b.gpu == "A100").expect("band");
    let line = text.lines().find(|l| l.starts_with("Runs like this")).unwrap_or_else(|| panic!("{text}"));
    let range = format!(
        "Expect {} to {}: on {} published DP runs on A100s",
        madmax::units::duration(band.low * calibrated_s),
        madmax::units::duration(band.high * calibrated_s),
        band.runs
    );
    assert!(line.contains(&range), "{line}\n{range}");
    assert!(line.contains(&format!("where this scenario takes {}", madmax::units::duration(calibrated_s))), "{line}");
    // At the calibrated fraction the range is around the time shown.
    let at_080 = out(&["eval", "-"], &inputs("default", 0.80));
    assert!(at_080.contains(&range) && at_080.contains(&format!("(median {:.2}\u{d7}).\n", band.median)), "{at_080}");
    let paper = out(&["eval", "-"], &inputs("reference", 0.705));
    assert!(!paper.contains("Runs like this"), "{paper}");
    // LLM serving in the default model: what the published serving runs say.
    let case = read_json(&data_dir().join("reference/cases/llm__llama_65b__cloud_C_a100.40m_2048__llm_inference.json"));
    let mut serving = serde_json::json!({"model": case["inputs"]["model"], "system": case["inputs"]["system"], "task": case["inputs"]["task"]});
    serving["task"]["mode"] = serde_json::json!("default");
    let text = out(&["eval", "-"], &serving.to_string());
    assert!(text.contains(&format!("Runs like this        {}\n", madmax::accuracy::SERVING_NOTES[0])), "{text}");
}

#[test]
fn paper_computes_the_findings_on_the_workload_suite_beside_the_papers() {
    let o = madmax(&["paper", "--json", "--mode", "reference"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = stdout_json(&o);
    let f = &v[0];
    assert_eq!((v.as_array().map(Vec::len), f["mode"].as_str()), (Some(1), Some("reference")));
    let n = f["workloads"].as_u64().expect("workloads");
    assert!(n >= 60, "{n}");
    let all = &f["exposed"]["all"];
    let share = |k: &str| all[k].as_f64().expect("share");
    assert!(
        0.0 <= share("min")
            && share("min") <= share("median")
            && share("median") <= share("max")
            && share("max") <= 1.0
    );
    assert_eq!(all["workloads"].as_u64(), Some(n));
    // Every workload is either compared or said why not.
    let s = &f["speedups"];
    let count = |k: &str| s[k]["workloads"].as_u64().unwrap_or(0) + s[k].as_array().map_or(0, |a| a.len() as u64);
    let compared = count("training") + count("inference");
    let apart = count("own_plan_cannot_run") + count("nothing_fits") + count("too_big");
    assert_eq!(compared + apart, n);
    assert!(s["training"]["min"].as_f64().expect("speed-up") >= 1.0);
    assert_eq!(f["codesign"].as_array().map(Vec::len), Some(16));
    // The text says what the paper reported next to each analysis.
    let text = String::from_utf8_lossy(&madmax(&["paper", "--mode", "reference"]).stdout).into_owned();
    for want in [
        "The paper: 14.0 % to 32.0 % of GPU hours",
        "the paper: up to 2.24x",
        "the paper: up to 5.27x",
        "NIC bandwidth      x8",
        madmax::paper::WHY_EXPOSED,
        madmax::paper::WHY_SPEEDUP,
        madmax::paper::WHY_CODESIGN,
    ] {
        assert!(text.contains(want), "{want:?} not in:\n{text}");
    }
}

#[test]
fn the_explorer_help_quotes_the_searchs_own_limits() {
    // The usage text and the explorer page say how many plans each pass tries and how many
    // micro-batches a staged first pass gives a pipeline; they quote the constants the search
    // uses.
    use madmax::engine::explore::{INTERLEAVED_PLANS, MICRO_BATCHES_PER_STAGE, REFINED_PLANS, SETTINGS_PASS_PLANS};
    let usage = String::from_utf8_lossy(&madmax(&["--help"]).stdout).replace("\n      ", " ");
    let page = std::fs::read_to_string(env!("CARGO_MANIFEST_DIR").to_owned() + "/src/ui/explorer_view.rs")
        .expect("the explorer view's source");
    for text in [&usage, &page] {
        assert!(text.contains(&format!("best {REFINED_PLANS} ")), "{text}");
        assert!(text.contains(&format!("the {SETTINGS_PASS_PLANS} most promising with every one")), "{text}");
        assert!(text.contains(&format!("then the {INTERLEAVED_PLANS} pipelines that do not fit")), "{text}");
        assert!(text.contains(&format!("a pipeline at {MICRO_BATCHES_PER_STAGE} micro-batches per stage or more")));
    }
}

#[test]
fn explore_searches_anyway_when_the_default_model_refuses_the_plan_and_says_so_first() {
    // Tensor parallelism of 16 over LLaMA-13B's 40 heads: eval refuses it in the default model;
    // explore searches from data parallelism at the same global batch, quotes no speed-up
    // over a plan that cannot be set up, and says why first.
    let case = data_dir().join("reference/cases/llm__llama_13b__cloud_A_h100.80_128__llm_pre_fsdp_tp_128x8_bs1.json");
    let path = case.to_str().expect("utf-8");
    assert_eq!(madmax(&["eval", path, "--mode", "default"]).status.code(), Some(2));
    let o = madmax(&["explore", path, "--mode", "default"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let second = text.lines().nth(1).unwrap_or_default();
    assert!(
        second.starts_with(
            "your plan cannot run in this model (task.transformer_parallel_degree: tensor parallelism of 16"
        ) && second.ends_with("every plan was searched at its global batch of 128"),
        "{text}"
    );
    assert!(text.contains("The best plan that fits: ") && !text.contains("speed-up"), "{text}");
    let v = stdout_json(&madmax(&["explore", path, "--mode", "default", "--json"]));
    assert!(v["baseline"].is_null() && v["speedup"].is_null(), "{v}");
    assert_eq!(v["own_plan_problem"]["field"], "task.transformer_parallel_degree");
    assert_eq!(v["best"]["fits"], true);
    assert_eq!(v["best"]["global_batch"], 128);
    // A problem that is not the plan's still stops it.
    let bad = madmax_stdin(&["explore", "-", "--mode", "default"], br#"{"model": {}, "system": {}, "task": {}}"#);
    assert_eq!(bad.status.code(), Some(2));
}
