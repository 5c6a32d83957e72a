//! Fuzzing without a nightly toolchain: seeded random and mutated inputs for every entry point
//! that reads outside data. No input may panic, and none may take longer than `SLOW_S`.
//!
//! Targets: the share-link decoder, the MAD-Max JSON importer, the CSV reader of `madmax
//! validate`, `validate` + `evaluate` on arbitrary scenarios (both models), and the page's
//! reducer: sequences of what a person does in the form (any text in any field, 0, negatives,
//! huge numbers, imports with extreme values) with, after each, everything the page reads to
//! draw the state. `FUZZ_INPUTS`
//! sets the inputs per target (default 2,000: the short run of `make test`); `make fuzz` runs
//! 1,000,000 per target and prints the figures the README quotes.

use madmax::doc::Doc;
use madmax::engine::{evaluate, validate, RawFile};
use madmax::{accuracy, share};
use serde_json::{json, Map, Value};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::Instant;

/// The slowest any single input may be, s.
const SLOW_S: f64 = 2.0;

/// xorshift64*: small, fast, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

fn inputs_per_target() -> usize {
    std::env::var("FUZZ_INPUTS").ok().and_then(|v| v.parse().ok()).unwrap_or(2_000)
}

/// Runs `f` on `n` inputs from `gen`; fails on a panic or a slow input, and prints the figures
/// (with how many inputs got all the way through: `f` returns true for those).
fn fuzz(name: &str, seed: u64, mut gen: impl FnMut(&mut Rng) -> String, f: impl Fn(&str) -> bool) {
    let n = inputs_per_target();
    let mut rng = Rng(seed);
    let started = Instant::now();
    let mut slowest = 0.0f64;
    let mut deep = 0usize;
    for i in 0..n {
        let input = gen(&mut rng);
        let t0 = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| f(&input)));
        let dt = t0.elapsed().as_secs_f64();
        slowest = slowest.max(dt);
        match outcome {
            Ok(true) => deep += 1,
            Ok(false) => {}
            Err(_) => panic!("{name}: input {i} panicked:\n{}", input.chars().take(4000).collect::<String>()),
        }
        assert!(dt < SLOW_S, "{name}: input {i} took {dt:.2} s:\n{}", input.chars().take(4000).collect::<String>());
    }
    eprintln!(
        "fuzz {name}: {n} inputs, 0 panics, {deep} went all the way through, slowest {:.1} ms, {:.1} s in all",
        slowest * 1e3,
        started.elapsed().as_secs_f64()
    );
}

/// Golden case inputs (a sample), as raw JSON.
fn corpus() -> Vec<Value> {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let files = |dir: &str| {
        let mut f: Vec<_> =
            std::fs::read_dir(data.join(dir)).expect("data").filter_map(|e| e.ok().map(|e| e.path())).collect();
        f.sort();
        f
    };
    let read = |p: &Path| serde_json::from_str::<Value>(&std::fs::read_to_string(p).ok()?).ok();
    let mut docs: Vec<Value> =
        files("reference/cases").iter().step_by(3).filter_map(|p| read(p)).map(|v| v["inputs"].clone()).collect();
    // The default model's own families (a CNN, an encoder-decoder) and clusters (two GPU
    // types, several sites), which no golden case has.
    docs.extend(files("cnn").iter().chain(&files("encdec")).chain(&files("clusters")).filter_map(|p| read(p)));
    // Every fourth published run the validation predicts: the serving engines' in-flight
    // batching and bursts, FP8 training, the CNNs and DLRMs as the rows set them up.
    docs.extend(accuracy::shipped().into_iter().step_by(4).filter_map(|r| r.scenario));
    docs
}

/// Byte-level mutations of a text: flips, deletions, insertions, truncation, duplication.
fn mutate_text(rng: &mut Rng, text: &str) -> String {
    let mut b: Vec<u8> = text.as_bytes().to_vec();
    for _ in 0..1 + rng.below(6) {
        if b.is_empty() {
            b.push(b'{');
        }
        let i = rng.below(b.len());
        match rng.below(6) {
            0 => b[i] ^= 1 << rng.below(8),
            1 => {
                b.remove(i);
            }
            2 => b.insert(i, *rng.pick(b"{}[]\",:0123456789.-eE+ \n\r\ta=&?%\\")),
            3 => b.truncate(i),
            4 => {
                let j = (i + rng.below(64)).min(b.len());
                let chunk = b[i..j].to_vec();
                b.splice(i..i, chunk);
            }
            _ => b[i] = rng.next() as u8,
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn random_text(rng: &mut Rng) -> String {
    let n = rng.below(300);
    (0..n)
        .map(|_| {
            *rng.pick(&[
                '{', '}', '[', ']', '"', ',', ':', 'a', 'v', 's', '=', '&', '1', '0', '-', '.', 'e', ' ', '\n', 'é',
                '\u{0}',
            ])
        })
        .collect()
}

#[test]
fn share_links_never_panic() {
    let docs = corpus();
    let links: Vec<String> = docs
        .iter()
        .map(|v| {
            let obj = |k: &str| v[k].as_object().cloned().unwrap_or_default();
            share::encode(&Doc::new([obj("model"), obj("system"), obj("task")]))
        })
        .collect();
    fuzz(
        "share-link decoder",
        1,
        |rng| {
            let link = &links[rng.below(links.len())];
            match rng.below(4) {
                0 => random_text(rng),
                // Valid base64url of broken JSON.
                1 => {
                    let payload = share::base64url_decode(link.split("s=").nth(1).unwrap_or("")).unwrap_or_default();
                    let broken = mutate_text(rng, &String::from_utf8_lossy(&payload));
                    format!("v=1&s={}", share::base64url_encode(broken.as_bytes()))
                }
                _ => mutate_text(rng, link),
            }
        },
        |q| {
            // Whatever decodes goes on to validation and, if valid, evaluation.
            let Ok(doc) = share::decode(q) else { return false };
            let Ok(s) = validate(&doc.to_raw()) else { return false };
            evaluate(&s).iteration_s.is_finite()
        },
    );
}

#[test]
fn imports_never_panic() {
    let docs = corpus();
    let base = Doc::default();
    let texts: Vec<String> = docs.iter().map(|v| v.to_string()).collect();
    fuzz(
        "JSON importer",
        2,
        |rng| {
            let text = &texts[rng.below(texts.len())];
            if rng.chance(4) {
                random_text(rng)
            } else {
                mutate_text(rng, text)
            }
        },
        |t| {
            let Ok(doc) = Doc::import(t, &base) else { return false };
            let Ok(s) = validate(&doc.to_raw()) else { return false };
            evaluate(&s).iteration_s.is_finite()
        },
    );
}

/// A CSV text: `header` and 1 to `most` of `rows`, two in three mutated; one in ten times
/// random text instead.
fn csv_of_rows(rng: &mut Rng, header: &str, rows: &[&str], most: usize) -> String {
    let mut out = String::from(header);
    for _ in 0..1 + rng.below(most) {
        out.push('\n');
        let row = rows[rng.below(rows.len())];
        out.push_str(&if rng.chance(3) { row.to_owned() } else { mutate_text(rng, row) });
    }
    if rng.chance(10) {
        out = random_text(rng);
    }
    out
}

#[test]
fn csv_reading_never_panics() {
    let training = accuracy::TRAINING_CSV.to_owned();
    let inference = accuracy::INFERENCE_CSV.to_owned();
    let lines: Vec<&str> = training.lines().collect();
    fuzz(
        "CSV reader",
        3,
        |rng| {
            let header = if rng.chance(4) { inference.lines().next().unwrap_or("") } else { lines[0] };
            csv_of_rows(rng, header, &lines[1..], 3)
        },
        |csv| accuracy::run(csv).map(|rows| accuracy::summarize(&rows).is_some()).unwrap_or(false),
    );
}

#[test]
fn gemm_check_reading_never_panics() {
    // The page fetches the profiled GEMMs: a proxy's error page or a cut-off file must be
    // refused with a message, and any numbers taken must give finite figures.
    let lines: Vec<&str> = accuracy::GEMM_KERNELS_CSV.lines().collect();
    fuzz(
        "GEMM check",
        4,
        |rng| csv_of_rows(rng, lines[0], &lines[1..], 4),
        |csv| match accuracy::gemm_check(csv) {
            Ok(checks) => {
                assert!(checks.iter().all(|c| c.median_error.is_finite() && c.median_abs_error >= 0.0), "{checks:?}");
                !checks.is_empty()
            }
            Err(e) => {
                assert!(!e.is_empty());
                false
            }
        },
    );
}

/// A value for a scenario field: extreme, wrong-typed, or plausible.
fn random_value(rng: &mut Rng) -> Value {
    match rng.below(14) {
        0 => Value::Null,
        1 => json!(rng.below(3) as u64),
        2 => json!(1u64 << rng.below(41)),
        3 => json!(rng.next() as i64),
        4 => json!(-(rng.below(1000) as i64)),
        5 => json!((rng.next() as f64 / u64::MAX as f64) * 10f64.powi(rng.below(40) as i32 - 20)),
        6 => json!(*rng.pick(&[1e308, -1e308, 5e-324, 0.0, -0.0, 1.0, 0.5, 2.0])),
        7 => json!(*rng.pick(&[
            "tp",
            "ddp",
            "fsdp",
            "pp",
            "mp",
            "cp",
            "ep",
            "full",
            "selective",
            "none",
            "fp8",
            "int4",
            "row",
            "column",
            "default",
            "reference",
            "swiglu",
            "flash",
            "flash2-h100",
            "flash1",
            "flash1-h100",
            "",
            "x"
        ])),
        8 => json!(rng.chance(2)),
        9 => {
            let n = rng.below(5);
            json!((0..n).map(|_| *rng.pick(&["tp", "ddp", "fsdp", "pp", "mp", "cp", "ep"])).collect::<Vec<_>>())
        }
        10 => {
            let n = rng.below(5);
            json!((0..n).map(|_| 1u64 << rng.below(12)).collect::<Vec<_>>())
        }
        11 => json!([]),
        12 => json!({}),
        _ => json!(1u64 + rng.below(64) as u64),
    }
}

/// A plausible replacement for `old` under `key`: the number scaled (whole numbers stay whole),
/// or another valid spelling for the default model's option keys.
fn plausible(rng: &mut Rng, key: &str, old: Option<&Value>) -> Value {
    let options: &[&str] = match key {
        "mode" => &["default", "reference"],
        "ffn_kind" => &["gelu", "swiglu"],
        "attention" => &["flash", "flash2-h100", "flash1", "flash1-h100", "materialized"],
        "positions" => &["learned", "rope", "rope-unfused", "none"],
        "elementwise" => &["fused", "eager"],
        "moe_dispatch" => &["eager", "fused", "deepep"],
        "expert_tp" | "expert_cp" | "zero_shard_ranks" => return json!(1u64 << rng.below(4)),
        "recompute" => &["none", "selective", "full"],
        "recompute_modules" => &["core_attn", "layernorm, moe", "core_attn mlp", "moe_act", "x"],
        "collective" => &["ring", "tree", "hierarchical", "in_network"],
        "emb_sharding" => &["table", "row", "column"],
        "weight_format" | "kv_format" => &["fp16", "bf16", "fp8", "int8", "int4"],
        "batching" => &["static", "inflight"],
        "prefill_steps" => &["mixed", "separate"],
        "length_spread" => &["fixed", "exponential"],
        "sampling" => &["greedy", "random", "top-p"],
        "conv_layout" => &["nhwc", "nchw"],
        "causal"
        | "tied_embeddings"
        | "dropout"
        | "biases"
        | "sequence_parallel"
        | "overlap_grad_reduce"
        | "overlap_param_gather"
        | "overlap_tp_comm"
        | "cuda_graphs"
        | "custom_all_reduce"
        | "fp8"
        | "fp32_grads"
        | "fused_loss" => return json!(rng.chance(2)),
        _ => &[],
    };
    if !options.is_empty() {
        return json!(*rng.pick(options));
    }
    let factor = *rng.pick(&[0.25, 0.5, 1.0, 2.0, 4.0, 8.0]);
    match old {
        Some(Value::Number(n)) if n.is_u64() => {
            json!(((n.as_u64().unwrap_or(1) as f64 * factor).round() as u64).max(1))
        }
        Some(Value::Number(n)) => json!(n.as_f64().unwrap_or(1.0) * factor),
        _ => json!(1u64 << rng.below(6)),
    }
}

/// Keys the default model reads besides MAD-Max's.
const EXTRA_KEYS: &[(&str, &str)] = &[
    ("model", "num_encoder_layers"),
    ("model", "num_decoder_layers"),
    ("model", "target_seq_len"),
    ("model", "num_kv_heads"),
    ("model", "ffn_kind"),
    ("model", "attention"),
    ("model", "causal"),
    ("model", "tied_embeddings"),
    ("model", "dropout"),
    ("model", "biases"),
    ("model", "positions"),
    ("model", "elementwise"),
    ("model", "moe_dispatch"),
    ("model", "capacity_factor"),
    ("task", "mode"),
    ("task", "micro_batch"),
    ("task", "virtual_stages"),
    ("task", "zero_stage"),
    ("task", "recompute"),
    ("task", "recompute_modules"),
    ("task", "sequence_parallel"),
    ("task", "expert_tp"),
    ("task", "expert_cp"),
    ("task", "zero_shard_ranks"),
    ("task", "collective"),
    ("task", "overlap_grad_reduce"),
    ("task", "overlap_param_gather"),
    ("task", "overlap_tp_comm"),
    ("task", "data_loader_samples_per_s"),
    ("task", "loader_frames_per_sample"),
    ("task", "loader_frame_stride"),
    ("task", "loader_keyframe_interval"),
    ("task", "loader_frame_width"),
    ("task", "loader_frame_height"),
    ("task", "loader_cores_per_node"),
    ("task", "loader_core_pixels_per_s"),
    ("task", "loader_gpu_pixels_per_s"),
    ("task", "loader_bytes_per_sample"),
    ("task", "loader_storage_bytes_per_s"),
    ("task", "collective_cycle_ms"),
    ("task", "emb_sharding"),
    ("task", "input_tokens"),
    ("task", "output_tokens"),
    ("task", "weight_format"),
    ("task", "kv_format"),
    ("task", "batching"),
    ("task", "step_tokens"),
    ("task", "request_rate"),
    ("task", "burst_requests"),
    ("task", "prefill_steps"),
    ("task", "scheduler_steps"),
    ("task", "host_step_ms"),
    ("task", "host_request_ms"),
    ("task", "length_spread"),
    ("task", "cuda_graphs"),
    ("task", "custom_all_reduce"),
    ("task", "sampling"),
    ("task", "fp8"),
    ("task", "fp32_grads"),
    ("task", "conv_layout"),
    ("task", "kv_page_tokens"),
    ("system", "gemm_bw_util"),
    ("system", "nic_latency_s"),
    ("system", "nvlink_latency_s"),
    ("system", "num_sites"),
    ("system", "wan_bw"),
    ("system", "wan_latency_s"),
    ("system", "second_gpu_nodes"),
    ("system", "second_f16_flops"),
    ("system", "second_mem_cap"),
    ("system", "second_mem_bw"),
    ("system", "second_fp8_flops"),
];

#[test]
fn scenarios_never_panic_and_results_stay_finite() {
    let docs = corpus();
    fuzz(
        "validate + evaluate",
        4,
        |rng| {
            let mut v = docs[rng.below(docs.len())].clone();
            if rng.chance(2) {
                v["task"]["mode"] = json!("default");
            }
            for _ in 0..1 + rng.below(4) {
                let (config, key) = if rng.chance(2) {
                    let (c, k) = *rng.pick(EXTRA_KEYS);
                    (c.to_owned(), k.to_owned())
                } else {
                    let c = *rng.pick(&["model", "system", "task"]);
                    let keys: Vec<String> = v[c].as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
                    if keys.is_empty() {
                        continue;
                    }
                    (c.to_owned(), keys[rng.below(keys.len())].clone())
                };
                if let Some(o) = v[config.as_str()].as_object_mut() {
                    if rng.chance(8) {
                        o.remove(&key);
                    } else if rng.chance(2) {
                        o.insert(key, random_value(rng));
                    } else {
                        let value = plausible(rng, &key, o.get(&key));
                        o.insert(key, value);
                    }
                }
            }
            v.to_string()
        },
        |text| {
            let Ok(v) = serde_json::from_str::<Value>(text) else { return false };
            let mut file = Map::new();
            file.insert("inputs".into(), v);
            let Ok(raw) = serde_json::from_value::<RawFile>(Value::Object(file)) else { return false };
            let Ok(raw) = raw.into_scenario() else { return false };
            let ok = validate(&raw).is_ok();
            if let Ok(s) = validate(&raw) {
                let r = evaluate(&s);
                assert!(r.iteration_s.is_finite() && r.iteration_s >= 0.0, "iteration {}", r.iteration_s);
                assert!(r.throughput_samples_per_s.is_finite(), "throughput {}", r.throughput_samples_per_s);
                assert!(
                    r.memory.total_bytes.is_finite() && r.memory.total_bytes >= 0.0,
                    "memory {}",
                    r.memory.total_bytes
                );
                if let Some(sv) = &r.serving {
                    assert!(sv.ttft_s.is_finite() && sv.tpot_s.is_finite() && sv.output_tokens_per_s.is_finite());
                }
            }
            ok
        },
    );
}

/// Text a person (or a script) may type into a field: numbers of every size and sign, words,
/// nothing, and noise.
fn typed(rng: &mut Rng) -> String {
    match rng.below(8) {
        0 => (*rng.pick(&["0", "-1", "", " ", "1e308", "-0", "0.5", "1e-320", "NaN", "inf", "9007199254740993"]))
            .to_owned(),
        1 => (1u64 << rng.below(64)).to_string(),
        2 => (rng.next() as i64).to_string(),
        3 => format!("{}", rng.below(4096)),
        4 => (*rng.pick(&[
            "tp", "ddp", "fsdp", "pp", "mp", "cp", "ep", "true", "false", "full", "fp8", "flash", "gelu", "x",
        ]))
        .to_owned(),
        5 => random_text(rng),
        6 => "9".repeat(1 + rng.below(400)),
        _ => format!("{}", 1 + rng.below(64)),
    }
}

/// One user action as JSON (so that a failing sequence prints and replays).
fn random_action(rng: &mut Rng, presets: &madmax::presets::Presets) -> Value {
    use madmax::engine::scenario::Family;
    use madmax::ui::fields;
    let family = *rng.pick(&Family::ALL);
    match rng.below(19) {
        0..=2 => {
            let mut all = fields::model_fields(family);
            all.extend(fields::default_model_fields(family));
            all.extend(fields::system_fields());
            all.extend(fields::default_task_fields(family, rng.chance(2)));
            for k in ["mlp_parallel", "emb_parallel", "transformer_parallel"] {
                all.push(fields::batch_field(k, Some(family)));
            }
            all.push(fields::MIN_FROZEN);
            let f = all[rng.below(all.len())];
            json!(["field", f.config.key(), f.key, typed(rng)])
        }
        3 => json!(["per_node", typed(rng)]),
        4 => json!(["nodes", typed(rng)]),
        5 => json!([
            "degree",
            *rng.pick(&["mlp_parallel", "emb_parallel", "transformer_parallel"]),
            rng.below(10),
            typed(rng)
        ]),
        6 => json!([
            "strategy",
            *rng.pick(&["mlp_parallel", "emb_parallel", "transformer_parallel"]),
            rng.below(10),
            typed(rng)
        ]),
        7 => json!(["add_level", *rng.pick(&["mlp_parallel", "emb_parallel", "transformer_parallel"])]),
        8 => {
            json!(["remove_level", *rng.pick(&["mlp_parallel", "emb_parallel", "transformer_parallel"]), rng.below(10)])
        }
        9 => json!(["task_kind", *rng.pick(&["pretrain", "finetune", "inference", "x"])]),
        10 => json!([
            "flag",
            *rng.pick(&["freeze_emb", "freeze_top_mlp", "freeze_bot_mlp", "freeze_transformer"]),
            rng.chance(2)
        ]),
        11 => json!(["mode", rng.chance(2)]),
        12 => json!(["scenario", presets.scenarios[rng.below(presets.scenarios.len())].id]),
        13 => json!(["model", presets.models[rng.below(presets.models.len())].id]),
        14 => json!(["system", presets.systems[rng.below(presets.systems.len())].id]),
        15..=17 => {
            // An imported scenario with one key set to an extreme: the shape of the cluster and
            // of the plan most often, any key otherwise.
            let sc = &presets.scenarios[rng.below(presets.scenarios.len())];
            let [m, sys, t] = presets.configs(sc).unwrap_or_default();
            let mut v = json!({"model": m, "system": sys, "task": t});
            let (config, key) = if rng.chance(2) {
                let (c, k) = *rng.pick(&[
                    ("system", "num_nodes"),
                    ("system", "num_devices"),
                    ("model", "num_transformer_layers"),
                    ("task", "local_transformer_bs"),
                    ("task", "micro_batch"),
                    ("task", "transformer_parallel_degree"),
                ]);
                (c, k.to_owned())
            } else {
                let c = *rng.pick(&["model", "system", "task"]);
                let keys: Vec<String> = v[c].as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
                (c, keys.get(rng.below(keys.len())).cloned().unwrap_or_default())
            };
            let value = if rng.chance(4) { random_value(rng) } else { json!(*rng.pick(&[0i64, 0, 1, -1, 1 << 40])) };
            v[config][key.as_str()] = value;
            json!(["import", v.to_string()])
        }
        _ => json!(["select_op", rng.next() % 4096]),
    }
}

/// Applies an action written by [`random_action`]; `None` for a malformed one.
fn replay(s: &madmax::ui::state::State, a: &Value) -> Option<madmax::ui::state::State> {
    use madmax::engine::scenario::{Family, Mode};
    use madmax::ui::fields;
    use madmax::ui::state::Action;
    let text = |i: usize| a.get(i).and_then(Value::as_str).map(str::to_owned);
    let num = |i: usize| a.get(i).and_then(Value::as_u64).map(|n| n as usize);
    let spec = |i: usize| -> Option<&'static str> {
        let name = a.get(i)?.as_str()?;
        ["mlp_parallel", "emb_parallel", "transformer_parallel"].into_iter().find(|k| *k == name)
    };
    let action = match text(0)?.as_str() {
        "field" => {
            let (config, key) = (text(1)?, text(2)?);
            let mut all: Vec<fields::Field> = fields::system_fields();
            for f in Family::ALL {
                all.extend(fields::model_fields(f));
                all.extend(fields::default_model_fields(f));
                all.extend(fields::default_task_fields(f, false));
                all.extend(fields::default_task_fields(f, true));
            }
            for k in ["mlp_parallel", "emb_parallel", "transformer_parallel"] {
                all.push(fields::batch_field(k, None));
            }
            all.push(fields::MIN_FROZEN);
            let f = *all.iter().find(|f| f.config.key() == config && f.key == key)?;
            Action::SetField(f, text(3)?)
        }
        "per_node" => Action::SetPerNode(text(1)?),
        "nodes" => Action::SetNodes(text(1)?),
        "degree" => Action::SetDegree { spec: spec(1)?, level: num(2)?, text: text(3)? },
        "strategy" => Action::SetStrategy { spec: spec(1)?, level: num(2)?, strategy: text(3)? },
        "add_level" => Action::AddLevel(spec(1)?),
        "remove_level" => Action::RemoveLevel(spec(1)?, num(2)?),
        "task_kind" => Action::SetTaskKind(text(1)?),
        "flag" => {
            let key = ["freeze_emb", "freeze_top_mlp", "freeze_bot_mlp", "freeze_transformer"]
                .into_iter()
                .find(|k| Some(*k) == text(1).as_deref())?;
            Action::SetFlag(key, a.get(2)?.as_bool()?)
        }
        "mode" => Action::SetMode(if a.get(1)?.as_bool()? { Mode::Default } else { Mode::Reference }),
        "scenario" => Action::LoadScenario(text(1)?),
        "model" => Action::SetModel(text(1)?),
        "system" => Action::SetSystem(text(1)?),
        "select_op" => Action::SelectOp(num(1)),
        "import" => Action::Import(text(1)?),
        _ => return None,
    };
    Some(s.next(action))
}

/// Everything the page reads from a state to draw it, natively: the form, the results, the
/// timeline, the explained op, the sweeps' scenarios. A panic here is a crash of the page.
fn read_like_the_page(s: &madmax::ui::state::State) {
    use madmax::ui::{export, fields, plan, state, sweep, timeline};
    let _ = (s.per_node(), s.mode(), s.stale(), s.link());
    if let Some(f) = s.family() {
        let mut all = fields::model_fields(f);
        all.extend(fields::default_model_fields(f));
        all.extend(fields::system_fields());
        all.extend(fields::default_task_fields(f, true));
        for k in plan::spec_keys(f) {
            let _ = plan::read_spec(&s.doc.task, k);
            all.push(fields::batch_field(k, Some(f)));
        }
        for field in all {
            let _ = (state::show_field(&s.doc, &field), s.error_for(&field.path()));
        }
    }
    let Some(g) = &s.good else { return };
    let r = &g.report;
    let _ = (r.mfu(&g.scenario), r.tokens_per_s(&g.scenario), export::results_csv(&g.scenario, r));
    let lanes = timeline::Lanes::new(r);
    let _ = lanes.bars(r, 800.0);
    let _ = lanes.hit(r, madmax::engine::ops::Stream::Computation, r.iteration_s / 2.0, r.iteration_s / 400.0);
    let _ = timeline::longest_of_each_kind(r);
    if let Some(op) = s.selected_op.and_then(|i| r.timeline.get(i)) {
        let _ = madmax::engine::explain(&g.scenario, &op.name);
    }
    let _ = madmax::accuracy::expectation(&g.scenario, r);
    for mode in [sweep::SweepTask::Pretrain, sweep::SweepTask::Inference] {
        let _ = (sweep::vs_gpus(&g.doc, mode), sweep::vs_batch(&g.doc, mode));
    }
    let probes = sweep::serving(&g.doc);
    if let Some(p) = probes.first() {
        let _ = sweep::serve_point(p);
    }
}

#[test]
fn the_page_reducer_never_panics() {
    let presets = madmax::presets::all().expect("presets");
    let start = madmax::ui::state::State::initial();
    fuzz(
        "page reducer",
        5,
        |rng| {
            let n = 1 + rng.below(6);
            Value::Array((0..n).map(|_| random_action(rng, presets)).collect()).to_string()
        },
        |text| {
            let Ok(Value::Array(actions)) = serde_json::from_str::<Value>(text) else { return false };
            let mut s = start.clone();
            for a in &actions {
                let Some(next) = replay(&s, a) else { return false };
                s = next;
                read_like_the_page(&s);
            }
            s.good.is_some()
        },
    );
}
