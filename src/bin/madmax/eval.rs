//! `madmax eval`: a scenario's report, as readable text or as the JSON contract that
//! `../shared/reference/check.py` checks.

use crate::args::EvalArgs;
use crate::io::{input_failed, load, out_json};
use madmax::engine::critical::CriticalPath;
use madmax::engine::ops::Stream;
use madmax::engine::report::Report;
use madmax::engine::{evaluate, Scenario};
use madmax::figures;
use madmax::units;
use serde_json::{json, Value};
use std::process::ExitCode;

/// `madmax eval`: one scenario's report, as text or JSON.
pub fn run(a: &EvalArgs) -> ExitCode {
    match load(&a.file, a.mode) {
        Ok(scenario) => {
            let report = evaluate(&scenario);
            if a.json {
                let mut v = report_json(&scenario, &report);
                if a.timeline {
                    v["timeline"] = timeline_json(&report, &report.critical_path());
                }
                out_json(&v);
            } else {
                outp!("{}", text_report(&scenario, &report));
            }
            ExitCode::SUCCESS
        }
        Err(e) => input_failed(&e, a.json),
    }
}

/// The JSON contract of `eval --json` (times in ms, throughput in samples/s), and the headline
/// figures (`figures`: `{id, label, value, raw, detail, help}` each, raw in base units).
fn report_json(s: &Scenario, r: &Report) -> Value {
    let t = &r.totals;
    let ms = |s: f64| s * 1e3;
    let parts: serde_json::Map<String, Value> =
        r.memory.parts.iter().map(|(c, b)| (c.label().to_owned(), json!(b))).collect();
    let limits: Vec<Value> = r.limits.iter().map(|l| json!(l)).collect();
    let mut v = json!({
        "mode": r.mode.config_name(),
        "gemm_ms": ms(t.gemm_s),
        "emb_ms": ms(t.emb_s),
        "optimizer_ms": ms(t.optimizer_s),
        "p2p_ms": ms(t.p2p_s),
        "idle_ms": ms(r.idle_s),
        "all2all_ms": ms(t.all2all_s),
        "allreduce_ms": ms(t.allreduce_s),
        "allgather_ms": ms(t.allgather_s),
        "reducescatter_ms": ms(t.reducescatter_s),
        "compute_ms": ms(r.compute_s),
        "comm_ms": ms(r.comm_s),
        "exposed_comm_ms": ms(r.exposed_comm_s),
        "overlapped_comm_ms": ms(r.overlapped_comm_s),
        "iteration_ms": ms(r.iteration_s),
        "throughput": r.throughput_samples_per_s,
        "global_batch": r.global_batch,
        "global_bs": r.global_batch,
        "memory_per_device_bytes": r.memory.total_bytes,
        "memory_parts_bytes": parts,
        "memory_capacity_bytes": r.memory.capacity_bytes,
        "local_total_flops": r.work.local_total_flops,
        "global_total_flops": r.work.global_total_flops,
        "lookup_bytes_per_device": r.work.lookup_bytes_per_device,
        "fits": r.memory.fits(),
        "limits": limits,
    });
    let cp = r.critical_path();
    let path = cp.time(&r.timeline);
    v["critical_path"] = json!({
        "ops": cp.ops.len(),
        "computation_ms": ms(path.computation_s),
        "communication_ms": ms(path.communication_s),
        "idle_ms": ms(path.idle_s),
    });
    v["mfu"] = json!(r.mfu(s));
    v["tokens_per_s"] = json!(r.tokens_per_s(s));
    if let Some(u) = &r.utilization {
        v["hfu"] = json!(u.hfu);
        v["model_flops_per_iteration"] = json!(u.model_flops);
    }
    // The headline figures as the text and the calculator show them (with the serving ones).
    let serving = r.serving.as_ref().map(figures::serving).unwrap_or_default();
    v["figures"] = Value::Array(figures::headline(s, r).iter().chain(&serving).map(figures::Figure::json).collect());
    if let Some(sv) = &r.serving {
        v["serving"] = json!({
            "batching": sv.batching.config_name(),
            "prefill_steps": sv.prefill_steps.config_name(),
            "scheduler_steps": sv.scheduler_steps,
            "request_mix": sv.request_mix,
            "length_spread": sv.length_spread.config_name(),
            "request_rate": sv.request_rate,
            "burst_requests": sv.burst_requests,
            "makespan_ms": sv.makespan_s.map(ms),
            "recomputed_tokens": sv.recomputed_tokens,
            "input_tokens": sv.input_tokens,
            "output_tokens": sv.output_tokens,
            "batch": sv.batch,
            "in_flight": sv.in_flight,
            "replicas": sv.replicas,
            "ttft_ms": ms(sv.ttft_s),
            "tpot_ms": ms(sv.tpot_s),
            "percentiles_ms": sv.percentiles.as_ref().map(|p| json!({
                "quantiles": madmax::engine::extended::serving::PERCENTILES,
                "ttft": p.ttft_s.map(ms),
                "between_tokens": p.tpot_s.map(ms),
                "e2e": p.e2e_s.map(ms),
            })),
            "e2e_ms": ms(sv.e2e_s),
            "output_tokens_per_s": sv.output_tokens_per_s,
            "output_tokens_per_s_per_gpu": sv.output_tokens_per_s_per_gpu,
            "requests_per_s": sv.requests_per_s,
            "kv_cache_bytes_per_token": sv.kv_bytes_per_token,
            "max_batch": sv.max_batch,
        });
    }
    v
}

/// Every op of each stream with its slack (0 on the critical path).
fn timeline_json(r: &Report, cp: &CriticalPath) -> Value {
    let lane = |s: Stream| -> Vec<Value> {
        r.timeline
            .iter()
            .zip(&cp.slack_s)
            .filter(|(op, _)| op.name.stream() == s)
            .map(|(op, slack)| json!([op.name.to_string(), op.start_s, op.duration_s, slack]))
            .collect()
    };
    let mut v = json!({
        "format": "[name, t_start_s, duration_s, slack_s]",
        "computation": lane(Stream::Computation),
        "communication": lane(Stream::Communication),
    });
    // The default model's data-parallel stream, where it ran one.
    let data_parallel = lane(Stream::DataParallel);
    if !data_parallel.is_empty() {
        v["data_parallel"] = Value::Array(data_parallel);
    }
    v
}

/// The readable report of `eval`.
fn text_report(s: &Scenario, r: &Report) -> String {
    use madmax::engine::ops::Category;
    use std::fmt::Write;
    let mut o = String::new();
    let m = &r.model;
    let sys = &r.system;
    let plan = &s.task().plan;
    let _ = writeln!(o, "Model   {} ({})", s.model().name, s.model().arch.family());
    let _ = writeln!(
        o,
        "        {} parameters ({} dense, {} embedding), {} per sample, {} of embedding lookups per sample",
        units::count(m.params),
        units::count(m.dense_params),
        units::count(m.emb_params),
        units::si(m.flops_per_sample, "FLOP"),
        units::bytes(m.lookup_bytes_per_sample),
    );
    let _ = writeln!(
        o,
        "System  {}: {} GPUs = {} x {}",
        s.system().name,
        sys.devices,
        units::things(sys.nodes, "node"),
        sys.devices_per_node
    );
    if let Some(g) = &s.system().second {
        let how = if madmax::engine::extended::mixed::places_by_speed(s) {
            "the pipeline's stages placed by speed"
        } else {
            "the slower type paces every step"
        };
        let _ = writeln!(o, "        the last {} hold {} GPUs: {how}", units::things(g.nodes, "node"), g.name);
    }
    if let Some(w) = &s.system().wan {
        let _ = writeln!(
            o,
            "        in {} sites joined by {} each way per site, {} one way between them",
            w.sites,
            units::bytes_per_s(w.bytes_per_s),
            units::duration(w.latency_s)
        );
    }
    // On two GPU types the figures are those of the GPUs timed.
    let whose = match &s.system().second {
        None => "",
        Some(_) if madmax::engine::extended::mixed::places_by_speed(s) => " (the drawn stage's GPUs)",
        Some(_) => " (the pacing type's GPUs)",
    };
    let _ = writeln!(
        o,
        "        {} per GPU (effective), HBM {}, NVLink {} and network {} per GPU (one direction){whose}",
        units::si(sys.flops_per_s, "FLOP/s"),
        units::bytes_per_s(sys.mem_bw_bytes_per_s),
        units::bytes_per_s(sys.intra_node_bytes_per_s),
        units::bytes_per_s(sys.inter_node_bytes_per_s),
    );
    let _ = write!(o, "Task    {} ({})", s.task().kind.config_name(), s.task().name);
    if let madmax::engine::scenario::TaskKind::Finetune(f) = &s.task().kind {
        let _ = write!(
            o,
            ", frozen: top MLP {}, bottom MLP {}, embeddings {}, transformer {}",
            f.top_mlp, f.bot_mlp, f.emb, f.transformer
        );
        if let Some(mu) = f.min_frozen_layer {
            let _ = write!(o, ", layers from {mu} on");
        }
    }
    let _ = writeln!(o);
    let cnn = s.model().arch.family() == madmax::engine::scenario::Family::Cnn;
    if let (Some(spec), Some(b)) = (&plan.mlp, plan.local_mlp_batch) {
        let what = if cnn { "network plan" } else { "MLP plan" };
        let _ = writeln!(o, "        {what}: {spec}, local batch {b}");
    }
    if !cnn && (r.mode == madmax::engine::scenario::Mode::Reference || s.model().arch.family().is_dlrm()) {
        let _ = writeln!(o, "        embedding plan: {}, local batch {}", plan.emb, plan.local_emb_batch);
    }
    if let (Some(spec), Some(b)) = (&plan.transformer, plan.local_transformer_batch) {
        let _ = writeln!(o, "        transformer plan: {spec}, local batch {b}");
    }
    let _ = writeln!(o, "        global batch {} samples", r.global_batch);
    if r.mode == madmax::engine::scenario::Mode::Default {
        input_lines(&mut o, s);
    }
    let _ = writeln!(o, "Mode    {}", r.mode.label());
    if r.mode == madmax::engine::scenario::Mode::Default && cnn {
        let st = &s.task().setup;
        let _ = writeln!(
            o,
            "        {} collectives, gradients reduced {}",
            st.collective.config_name(),
            if st.overlap_grad_reduce {
                "in 25 MiB buckets during the backward pass"
            } else {
                "after the backward pass"
            }
        );
    } else if r.mode == madmax::engine::scenario::Mode::Default {
        let st = &s.task().setup;
        let _ = writeln!(
            o,
            "        micro-batch {}, pipeline chunks per GPU {}, ZeRO stage {}, recompute {}, sequence parallel {}, {} collectives{}",
            st.micro_batch.map_or("= local batch".to_owned(), |m| m.to_string()),
            st.virtual_stages,
            match st.zero_shard_ranks {
                Some(n) => format!("{} within groups of {n} data-parallel ranks", st.zero_stage),
                None => st.zero_stage.to_string(),
            },
            st.recompute.config_name(),
            if st.sequence_parallel { "on" } else { "off" },
            st.collective.config_name(),
            if st.collective_cycle_s > 0.0 {
                format!(" launched by a host thread every {}", units::duration(st.collective_cycle_s))
            } else {
                String::new()
            }
        );
    } else if s.task().mode == madmax::engine::scenario::Mode::Default {
        let _ =
            writeln!(o, "        (the default model covers transformer families; this one uses MAD-Max's formulas)");
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "Compute time          {}", units::duration(r.compute_s));
    for c in Category::ALL.into_iter().filter(|c| c.is_compute()) {
        if c != Category::Optimizer || r.totals.get(c) > 0.0 {
            let _ = writeln!(o, "  {:<19} {}", c.label(), units::duration(r.totals.get(c)));
        }
    }
    let _ = writeln!(o, "Communication time    {}", units::duration(r.comm_s));
    for c in Category::ALL.into_iter().filter(|c| c.is_comm()) {
        if c != Category::P2p || r.totals.get(c) > 0.0 {
            let _ = writeln!(o, "  {:<19} {}", c.label(), units::duration(r.totals.get(c)));
        }
    }
    // The headline figures, as the calculator shows them, each with the lines it has here.
    let indent = " ".repeat(22);
    for f in figures::headline(s, r) {
        let _ = writeln!(o, "{}", f.line());
        match f.id {
            "iteration-time" => {
                if r.idle_s > 0.0 {
                    let _ = writeln!(
                        o,
                        "Idle (pipeline bubble, input, other GPUs) {} ({} of the {})",
                        units::duration(r.idle_s),
                        units::percent(r.idle_s / r.iteration_s),
                        madmax::wording::timeline_span(r)
                    );
                }
                let cp = r.critical_path();
                let _ = writeln!(o, "Critical path         {}", madmax::wording::critical_path(r, &cp));
            }
            "exposed-comm" => {
                let share = r.exposed_share();
                let _ = writeln!(
                    o,
                    "Overlapped            {} ({} of communication)",
                    units::duration(r.overlapped_comm_s),
                    units::percent(if share > 0.0 { 1.0 - share } else { 0.0 })
                );
            }
            // The basis of MFU and HFU, in words.
            "mfu" => {
                let _ = writeln!(o, "{indent}{}", r.utilization.as_ref().map_or(f.help, |u| u.formula));
            }
            "memory" => {
                let parts: Vec<String> =
                    r.memory.parts.iter().map(|(c, b)| format!("{} {}", c.label(), units::bytes(*b))).collect();
                let _ = writeln!(o, "{indent}{}; capacity {}", parts.join(", "), units::gib(r.memory.capacity_bytes));
            }
            _ => {}
        }
    }
    if let Some(sv) = &r.serving {
        let _ = writeln!(
            o,
            "Serving               {} requests x {}, {} prompt + {} generated tokens {}",
            units::sig3(sv.in_flight),
            units::things(sv.replicas, "replica"),
            sv.input_tokens,
            sv.output_tokens,
            match (sv.lengths_vary(), sv.request_mix.is_empty()) {
                (false, _) => "each",
                (true, false) => "on average (a request mix)",
                (true, true) => "on average (spread exponentially)",
            }
        );
        let _ = writeln!(o, "{indent}{}", madmax::wording::batching(sv));
        for f in figures::serving(sv) {
            let _ = writeln!(o, "{}", f.line());
        }
        if let Some(p) = &sv.percentiles {
            let row = |name: &str, v: &[f64; 3]| format!("  {name:<20}{}", v.map(units::duration).join(" / "));
            let _ = writeln!(o, "  percentiles         median / 90th / 99th");
            let _ = writeln!(o, "{}", row("first token", &p.ttft_s));
            let _ = writeln!(o, "{}", row("between tokens", &p.tpot_s));
            let _ = writeln!(o, "{}", row("end to end", &p.e2e_s));
        }
    }
    for l in &r.limits {
        let _ = writeln!(o, "Limit                 {}", madmax::wording::limit(l));
    }
    if let Some(e) = madmax::accuracy::expectation(s, r) {
        let _ = writeln!(o, "Runs like this        {}", e.sentence(s.system().flops_util, r.iteration_s));
    }
    o
}

/// The input pipeline's model, when it has one: what each sample costs to decode and read,
/// and the rate of each part (the slowest sets the pace).
fn input_lines(o: &mut String, s: &Scenario) {
    use std::fmt::Write;
    let loader = &s.task().setup.loader;
    let (input, nodes) = (madmax::engine::extended::loader::input_nodes(s), s.system().num_nodes);
    let whose = if input < nodes {
        format!(" on the pipeline's first-stage nodes ({input} of {nodes})")
    } else {
        String::new()
    };
    if let Some(d) = &loader.decode {
        let mut decoders = Vec::new();
        if d.cores_per_node > 0 {
            decoders.push(format!(
                "{} CPU cores per node at {} each",
                d.cores_per_node,
                units::si(d.core_pixels_per_s, "pixel/s")
            ));
        }
        if d.gpu_pixels_per_s > 0.0 {
            decoders.push(format!("each GPU's decoders at {}", units::si(d.gpu_pixels_per_s, "pixel/s")));
        }
        let _ = writeln!(
            o,
            "        input: {} of {} pixels per sample, {} decoded (keyframe every {}, {}), by {}{whose}: {}",
            units::things(d.frames_per_sample, "frame"),
            units::si(d.frame_pixels, ""),
            units::si(d.frames_decoded_per_sample(), "frames"),
            units::things(d.keyframe_interval, "frame"),
            match d.frame_stride {
                1 => "consecutive frames".to_owned(),
                n => format!("every {} frame sampled", ordinal(n)),
            },
            decoders.join(" and "),
            units::si(d.samples_per_s(s), "samples/s")
        );
    }
    if let Some(st) = &loader.storage {
        let _ = writeln!(
            o,
            "        input: {} per sample read at {} per node{whose}: {}",
            units::bytes(st.bytes_per_sample),
            units::bytes_per_s(st.bytes_per_s_per_node),
            units::si(st.samples_per_s(s), "samples/s")
        );
    }
    if let Some(r) = loader.given_samples_per_s {
        let _ = writeln!(o, "        input: {} measured", units::si(r, "samples/s"));
    }
}

/// `2` as "2nd", `4` as "4th": "every 4th frame".
fn ordinal(n: u64) -> String {
    match n {
        n if n % 10 == 2 && n % 100 != 12 => format!("{n}nd"),
        n if n % 10 == 3 && n % 100 != 13 => format!("{n}rd"),
        n if n % 10 == 1 && n % 100 != 11 => format!("{n}st"),
        n => format!("{n}th"),
    }
}
