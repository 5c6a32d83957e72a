//! The `madmax` command line: a thin face over the engine. It parses arguments, reads files,
//! prints reports and times the engine; it computes nothing itself.

use madmax::engine::ops::Stream;
use madmax::engine::report::Report;
use madmax::engine::{evaluate, validate, FieldError, RawFile, RawScenario, Scenario};
use madmax::input::printable;
use madmax::units;
use serde_json::{json, Value};
use std::process::ExitCode;
use std::time::Instant;

const USAGE: &str = "\
madmax: performance of large ML models on GPU clusters (the MAD-Max model)

Usage:
  madmax eval FILE [--json] [--timeline] [--mode default|reference]
      FILE holds {\"model\": {...}, \"system\": {...}, \"task\": {...}} in the MAD-Max config
      format, or is a golden case file (configs under \"inputs\"). Use - for standard input.
      --json       print one JSON object (times in ms, throughput in samples/s)
      --timeline   with --json, add every op of both streams: [name, start_s, duration_s]
      --mode       which model evaluates FILE: the default model, or MAD-Max paper mode
                   (reference). Without it, task.mode decides; a MAD-Max config without a
                   mode key is evaluated in reference mode, as the paper's code would
  madmax explore FILE [--json] [--top N] [--local-batches 1,2,4,8] [--mode default|reference]
                 [--max-tpot-ms MS] [--max-ttft-ms MS]
      search every parallelization plan the model accepts for FILE's model on its cluster
      (MAD-Max paper mode: what the reference accepts; the default model: N-D plans of
      tensor, context, expert, data and pipeline parallelism, each trained with up to four
      micro-batch sizes, no, selective or full recomputation (more only where less does not
      fit), ZeRO 0 or 1 with plain data parallelism (and 2 without a pipeline), sequence
      parallelism with tensor parallelism, and 1 to 8 pipeline chunks per GPU where they
      split the stages evenly); for LLM serving,
      --max-tpot-ms marks plans slower than MS per output token as infeasible, and
      --max-ttft-ms plans whose first token comes after MS
      (global batch fixed at the task's own unless --local-batches is given), rank them by
      throughput, and show the best against the task's own plan; plans whose memory does
      not fit in HBM are listed, marked. A search takes at most 100,000 plans and 50 million
      timeline ops (exit 2 saying how to shrink it); --local-batches at most 64 values
  madmax validate [FILE.csv ...] [--json]
      predict every row of CSVs of measured runs (schema of validation/SOURCES.md; - reads
      one from standard input; no FILE: the runs that ship with madmax) with the default
      model; print predicted vs measured, the signed error and a summary (median, mean and
      max absolute error, per set where rows have a set column: calibration, runs some
      choice of the model looked at, and held out, runs no choice looked at; per source), the
      spread of measured over predicted time per kind of plan and GPU (what the calculator
      quotes for runs like these), and the floor: how close any model can come to every row
      when two rows that do the same work measured a larger micro-batch slower; blank cells
      take documented defaults and each row lists the ones it used; rows it cannot model
      are skipped with the reason.
      --json: {\"rows\": [{id, predicted, measured, error, ...}], \"summary\", \"bands\", \"floor\"}
      A CSV holds at most 200,000 rows (256 MB); exit 2 when no row could be predicted.
  madmax stories [--json]
      the library of famous runs: for each story, what its source reported, what the model
      predicts for the same setting and the signed difference, with the citation.
      --json: [{id, title, metric, unit, reported, predicted, difference, citation}]
  madmax bench DIR [--min-ms N] [--explore DIR]
      time validate + evaluate on every case file in DIR and compare with the reference's own
      time (the case's ref_wall_s.median): N ms of repetitions per case (default 20), spread
      over 5 rounds through all cases; each case reports the mean of its quietest round;
      then the explorer's plans/s on the paper's flagship run in both modes
      --explore DIR: also, for each scenario file in DIR, the explorer's plans per search,
      plans/s and full-search time in the default model, and its best plan that fits
      against a brute-force sweep of every training setting
  madmax --help | --version

Exit status: 0 on success, 2 on invalid input or usage, 1 on other failures.";

/// Writes text to standard output, made safe for a terminal ([`printable`]). A closed pipe
/// (`madmax explore ... | head -1`) ends the program quietly, as Unix tools do; another write
/// error ends it with status 1.
fn out(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(printable(text).as_bytes()).and_then(|()| stdout.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        let _ = writeln!(std::io::stderr(), "madmax: cannot write the output: {e}");
        std::process::exit(1);
    }
}

/// Writes a JSON value and a newline to standard output, with the characters a terminal would
/// act on escaped the JSON way ([`madmax::input::printable_json`]).
fn out_json(v: &Value) {
    out(&madmax::input::printable_json(&v.to_string()));
    out("\n");
}

/// Writes text to standard error, made safe for a terminal; write errors are ignored.
fn err(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(printable(text).as_bytes());
}

macro_rules! outln {
    () => { out("\n") };
    ($($t:tt)*) => { out(&format!("{}\n", format_args!($($t)*))) };
}
macro_rules! outp {
    ($($t:tt)*) => { out(&format!($($t)*)) };
}
macro_rules! errln {
    ($($t:tt)*) => { err(&format!("{}\n", format_args!($($t)*))) };
}

/// Reads a file (standard input for `-`) of at most `max` bytes: a larger one is refused
/// before it is read.
fn read_bounded(path: &str, max: usize) -> Result<String, String> {
    use std::io::Read;
    let too_big = |n: usize| {
        format!("the file is {}, more than the {} madmax reads", units::bytes(n as f64), units::bytes(max as f64))
    };
    let mut bytes = Vec::new();
    let read = if path == "-" {
        std::io::stdin().lock().take(max as u64 + 1).read_to_end(&mut bytes)
    } else {
        let file = std::fs::File::open(path).map_err(|e| format!("cannot read the file: {e}"))?;
        if let Ok(m) = file.metadata() {
            if m.len() > max as u64 {
                return Err(too_big(m.len() as usize));
            }
        }
        file.take(max as u64 + 1).read_to_end(&mut bytes)
    };
    read.map_err(|e| format!("cannot read the file: {e}"))?;
    if bytes.len() > max {
        return Err(too_big(bytes.len()));
    }
    String::from_utf8(bytes).map_err(|e| format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("eval") => eval(&args[1..]),
        Some("bench") => bench(&args[1..]),
        Some("explore") => explore(&args[1..]),
        Some("validate") => validate_csv(&args[1..]),
        Some("stories") => stories(&args[1..]),
        Some("--version" | "-V") => {
            outln!("madmax {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Some("--help" | "-h" | "help") => {
            outln!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some(other) => usage_error(&format!("unknown command '{other}'")),
        None => usage_error("missing command"),
    }
}

fn usage_error(msg: &str) -> ExitCode {
    errln!("madmax: {msg}\n\n{USAGE}");
    ExitCode::from(2)
}

/// An input problem: where, and what.
struct InputError {
    field: String,
    message: String,
    reference: Option<String>,
    more: usize,
}

impl InputError {
    fn from_fields(errors: &[FieldError]) -> InputError {
        match errors.first() {
            Some(e) => InputError {
                field: e.field.clone(),
                message: e.message.clone(),
                reference: e.reference.clone(),
                more: errors.len() - 1,
            },
            None => InputError { field: String::new(), message: "invalid input".to_owned(), reference: None, more: 0 },
        }
    }

    fn line(&self) -> String {
        let more = match self.more {
            0 => String::new(),
            1 => " (and 1 more problem)".to_owned(),
            n => format!(" (and {n} more problems)"),
        };
        let reference = match &self.reference {
            Some(r) if !r.is_empty() => format!(" [MAD-Max: {r}]"),
            _ => String::new(),
        };
        if self.field.is_empty() {
            format!("{}{more}{reference}", self.message)
        } else {
            format!("{}: {}{more}{reference}", self.field, self.message)
        }
    }
}

/// Reads and parses a scenario file; errors name the file or the JSON path.
fn read_scenario(path: &str) -> Result<RawScenario, InputError> {
    let text = read_bounded(path, madmax::input::MAX_JSON_BYTES).map_err(|message| InputError {
        field: path.to_owned(),
        message,
        reference: None,
        more: 0,
    })?;
    parse_scenario(&text)
}

fn parse_scenario(text: &str) -> Result<RawScenario, InputError> {
    let fail = |field: String, message: String| InputError { field, message, reference: None, more: 0 };
    let value = madmax::input::parse_json(text).map_err(|e| fail(String::new(), e))?;
    if !value.is_object() {
        return Err(fail(
            String::new(),
            "the file must hold a JSON object with \"model\", \"system\" and \"task\" (or a case file with \"inputs\")"
                .to_owned(),
        ));
    }
    match serde_path_to_error::deserialize::<_, RawFile>(&value) {
        Ok(file) => file.into_scenario().map_err(|e| fail(String::new(), e)),
        Err(e) => {
            let field = e.path().to_string();
            Err(fail(field, format!("must be a MAD-Max config object: {}", e.into_inner())))
        }
    }
}

/// Reads, parses and validates a scenario file; `mode` (default or reference) overrides the
/// file's `task.mode`.
fn load(path: &str, mode: Option<&str>) -> Result<Scenario, InputError> {
    let mut raw = read_scenario(path)?;
    if let (Some(m), Some(task)) = (mode, raw.task.as_mut()) {
        task.mode = Some(madmax::engine::RawValue::Str(m.into()));
    }
    validate(&raw).map_err(|errors| InputError::from_fields(&errors))
}

/// The value of `--mode`, if it is one.
fn mode_arg(v: Option<&String>) -> Option<String> {
    v.filter(|m| *m == "default" || *m == "reference").cloned()
}

fn eval(args: &[String]) -> ExitCode {
    let mut json_out = false;
    let mut timeline = false;
    let mut file = None;
    let mut mode = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => json_out = true,
            "--timeline" => timeline = true,
            "--mode" => match mode_arg(it.next()) {
                Some(m) => mode = Some(m),
                None => return usage_error("eval: --mode takes default or reference"),
            },
            f if file.is_none() && (!f.starts_with('-') || f == "-") => file = Some(f.to_owned()),
            other => return usage_error(&format!("eval: unexpected argument '{other}'")),
        }
    }
    let Some(file) = file else {
        return usage_error("eval: missing FILE");
    };
    match load(&file, mode.as_deref()) {
        Ok(scenario) => {
            let report = evaluate(&scenario);
            if json_out {
                let mut v = report_json(&scenario, &report);
                if timeline {
                    v["timeline"] = timeline_json(&report);
                }
                out_json(&v);
            } else {
                outp!("{}", text_report(&scenario, &report));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            errln!("madmax: {}", e.line());
            if json_out {
                let mut v = json!({"error": e.line(), "field": e.field});
                if let Some(r) = &e.reference {
                    v["reference_message"] = json!(r);
                }
                out_json(&v);
            }
            ExitCode::from(2)
        }
    }
}

/// Most local batches `explore --local-batches` takes (each one multiplies the plans).
const MAX_LOCAL_BATCHES: usize = 64;

fn explore(args: &[String]) -> ExitCode {
    use madmax::engine::explore::{self, Space};
    let mut json_out = false;
    let mut top = 15usize;
    let mut locals: Option<Vec<u64>> = None;
    let mut file = None;
    let mut mode = None;
    let (mut max_tpot_s, mut max_ttft_s) = (None, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => json_out = true,
            "--mode" => match mode_arg(it.next()) {
                Some(m) => mode = Some(m),
                None => return usage_error("explore: --mode takes default or reference"),
            },
            limit @ ("--max-tpot-ms" | "--max-ttft-ms") => {
                match it.next().and_then(|v| v.parse::<f64>().ok()).filter(|x| x.is_finite() && *x > 0.0) {
                    Some(ms) if limit == "--max-tpot-ms" => max_tpot_s = Some(ms / 1e3),
                    Some(ms) => max_ttft_s = Some(ms / 1e3),
                    None => return usage_error(&format!("explore: {limit} needs a positive number of milliseconds")),
                }
            }
            "--top" => match it.next().and_then(|v| v.parse().ok()) {
                Some(n) => top = n,
                None => return usage_error("explore: --top needs a number"),
            },
            "--local-batches" => {
                let list: Option<Vec<u64>> = it
                    .next()
                    .and_then(|v| v.split(',').map(|x| x.trim().parse::<u64>().ok().filter(|n| *n > 0)).collect());
                match list {
                    Some(l) if !l.is_empty() && l.len() <= MAX_LOCAL_BATCHES => locals = Some(l),
                    _ => {
                        return usage_error(&format!(
                            "explore: --local-batches needs a list of 1 to {MAX_LOCAL_BATCHES} counts like 1,2,4,8"
                        ))
                    }
                }
            }
            f if file.is_none() && (!f.starts_with('-') || f == "-") => file = Some(f.to_owned()),
            other => return usage_error(&format!("explore: unexpected argument '{other}'")),
        }
    }
    let Some(file) = file else {
        return usage_error("explore: missing FILE");
    };
    let scenario = match load(&file, mode.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            errln!("madmax: {}", e.line());
            if json_out {
                out_json(&json!({"error": e.line(), "field": e.field}));
            }
            return ExitCode::from(2);
        }
    };
    let mut space = match locals {
        Some(l) => Space::local(l),
        None => Space::fixed_global(&scenario),
    };
    space.max_tpot_s = max_tpot_s;
    space.max_ttft_s = max_ttft_s;
    let started = Instant::now();
    let summary = match explore::search(&scenario, &space) {
        Ok(s) => s,
        Err(too_big) => {
            let line = format!("explore: {too_big}");
            errln!("madmax: {line}");
            if json_out {
                out_json(&json!({"error": line, "plans": too_big.plans, "ops": too_big.ops}));
            }
            return ExitCode::from(2);
        }
    };
    let elapsed = started.elapsed().as_secs_f64();
    let outcome_json = |o: &explore::Outcome| {
        json!({
            "plan": explore::describe_outcome(&scenario, o),
            "iteration_ms": o.iteration_s * 1e3,
            "throughput": o.throughput_samples_per_s,
            "tokens_per_s": o.tokens_per_s,
            "mfu": o.mfu,
            "global_batch": o.global_batch,
            "exposed_share": o.exposed_share,
            "memory_per_device_bytes": o.memory_bytes,
            "fits": o.fits(),
            "tpot_ms": o.tpot_s.map(|t| t * 1e3),
            "ttft_ms": o.ttft_s.map(|t| t * 1e3),
            "meets_latency_limit": o.meets_limit(),
            "task": madmax::doc::plan_task_keys(&scenario, o),
        })
    };
    if json_out {
        let v = json!({
            "baseline": outcome_json(&summary.baseline),
            "best": summary.ranked.first().map(outcome_json),
            "speedup": summary.speedup,
            "settings_searched": summary.settings_searched && explore::searches_settings(&scenario),
            "plans_evaluated": summary.ranked.len(),
            "plans": summary.ranked.iter().take(top).map(outcome_json).collect::<Vec<_>>(),
        });
        out_json(&v);
        return ExitCode::SUCCESS;
    }
    outln!(
        "{} on {} GPUs: {} plans evaluated in {}",
        scenario.model.name,
        scenario.system.num_devices,
        summary.ranked.len(),
        units::duration(elapsed)
    );
    if explore::searches_settings(&scenario) && !summary.settings_searched {
        outln!(
            "(each with the task's own micro-batch, recomputation, ZeRO stage and schedule: trying them all would take more than one search may)"
        );
    }
    let b = &summary.baseline;
    let memory = if madmax::engine::uses_default_model(&scenario) { "memory" } else { "weights" };
    outln!(
        "your plan:  {}  ->  {}, {memory} {} of {} per GPU{}",
        explore::describe_outcome(&scenario, b),
        speed(b),
        units::bytes(b.memory_bytes),
        units::bytes(b.capacity_bytes),
        misfit(b)
    );
    outln!();
    // Serving plans show their latencies where training plans show iteration and exposure.
    let serving = b.tpot_s.is_some();
    let (third, fourth) = if serving { ("first token", "per token") } else { ("iteration", "exposed") };
    outln!(
        "{:>4}  {:>14} {:>14} {:>6} {:>11} {:>10} {:>10}  plan",
        "rank",
        "throughput",
        "tokens/s",
        "MFU",
        third,
        fourth,
        memory
    );
    for (i, o) in summary.ranked.iter().take(top).enumerate() {
        let (c, d) = match (o.ttft_s, o.tpot_s) {
            (Some(ttft), Some(tpot)) => (units::duration(ttft), units::duration(tpot)),
            _ => (units::duration(o.iteration_s), units::percent(o.exposed_share)),
        };
        outln!(
            "{:>4}  {:>14} {:>14} {:>6} {:>11} {:>10} {:>10}  {}{}",
            i + 1,
            units::si(o.throughput_samples_per_s, if serving { "requests/s" } else { "samples/s" }),
            o.tokens_per_s.map_or("n/a".to_owned(), |t| units::si(t, "tokens/s")),
            format!("{:.0} %", o.mfu * 100.0),
            c,
            d,
            units::bytes(o.memory_bytes),
            explore::describe_outcome(&scenario, o),
            misfit(o)
        );
    }
    outln!();
    let best = summary.ranked.first().filter(|o| o.fits());
    match (best, summary.speedup) {
        (Some(best), Some(x)) if x > 1.0 => {
            outln!("best speed-up over your plan: {x:.2}x ({})", explore::describe_outcome(&scenario, best))
        }
        (Some(_), Some(_)) => outln!("your plan is already the best one"),
        (Some(best), None) => outln!(
            "your plan cannot run: {}. The best plan that fits: {}, {}, {memory} {} per GPU.",
            why_not(b),
            explore::describe_outcome(&scenario, best),
            speed(best),
            units::bytes(best.memory_bytes)
        ),
        (None, _) if !b.fits() => outln!("your plan cannot run: {}, and no plan searched fits either", why_not(b)),
        (None, _) => outln!("no other plan fits in HBM"),
    }
    ExitCode::SUCCESS
}

/// How fast an explored plan runs, as a clause: throughput and iteration time, or for serving
/// requests/s and its latencies.
fn speed(o: &madmax::engine::explore::Outcome) -> String {
    match (o.ttft_s, o.tpot_s) {
        (Some(ttft), Some(tpot)) => format!(
            "{}, first token {}, {} per token",
            units::si(o.throughput_samples_per_s, "requests/s"),
            units::duration(ttft),
            units::duration(tpot)
        ),
        _ => format!(
            "{}, iteration {}",
            units::si(o.throughput_samples_per_s, "samples/s"),
            units::duration(o.iteration_s)
        ),
    }
}

/// Why a plan that does not fit cannot run, as a clause.
fn why_not(o: &madmax::engine::explore::Outcome) -> String {
    madmax::wording::cannot_run(o).unwrap_or_default()
}

/// Why an explored plan cannot run, after two spaces; empty when it can.
fn misfit(o: &madmax::engine::explore::Outcome) -> String {
    madmax::wording::misfit_mark(o).map_or(String::new(), |m| format!("  ({m})"))
}

/// The JSON contract of `eval --json` (times in ms, throughput in samples/s).
fn report_json(s: &madmax::engine::Scenario, r: &Report) -> Value {
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
    v["mfu"] = json!(r.mfu(s));
    v["tokens_per_s"] = json!(r.tokens_per_s(s));
    if let Some(u) = &r.utilization {
        v["hfu"] = json!(u.hfu);
        v["model_flops_per_iteration"] = json!(u.model_flops);
    }
    if let Some(sv) = &r.serving {
        v["serving"] = json!({
            "batching": sv.batching.config_name(),
            "request_rate": sv.request_rate,
            "input_tokens": sv.input_tokens,
            "output_tokens": sv.output_tokens,
            "batch": sv.batch,
            "in_flight": sv.in_flight,
            "replicas": sv.replicas,
            "ttft_ms": ms(sv.ttft_s),
            "tpot_ms": ms(sv.tpot_s),
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

fn timeline_json(r: &Report) -> Value {
    let lane = |s: Stream| -> Vec<Value> {
        r.stream(s).map(|op| json!([op.name.to_string(), op.start_s, op.duration_s])).collect()
    };
    json!({
        "format": "[name, t_start_s, duration_s]",
        "computation": lane(Stream::Computation),
        "communication": lane(Stream::Communication),
    })
}

/// The readable report of `eval`.
fn text_report(s: &Scenario, r: &Report) -> String {
    use madmax::engine::ops::Category;
    use std::fmt::Write;
    let mut o = String::new();
    let m = &r.model;
    let sys = &r.system;
    let plan = &s.task.plan;
    let _ = writeln!(o, "Model   {} ({})", s.model.name, s.model.arch.family());
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
        s.system.name,
        sys.devices,
        units::things(sys.nodes, "node"),
        sys.devices_per_node
    );
    let _ = writeln!(
        o,
        "        {} per GPU (effective), HBM {}, NVLink {} and network {} per GPU (one direction)",
        units::si(sys.flops_per_s, "FLOP/s"),
        units::bytes_per_s(sys.mem_bw_bytes_per_s),
        units::bytes_per_s(sys.intra_node_bytes_per_s),
        units::bytes_per_s(sys.inter_node_bytes_per_s),
    );
    let _ = write!(o, "Task    {} ({})", s.task.kind.config_name(), s.task.name);
    if let madmax::engine::scenario::TaskKind::Finetune(f) = &s.task.kind {
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
    if let (Some(spec), Some(b)) = (&plan.mlp, plan.local_mlp_batch) {
        let _ = writeln!(o, "        MLP plan: {spec}, local batch {b}");
    }
    if r.mode == madmax::engine::scenario::Mode::Reference || s.model.arch.family().is_dlrm() {
        let _ = writeln!(o, "        embedding plan: {}, local batch {}", plan.emb, plan.local_emb_batch);
    }
    if let (Some(spec), Some(b)) = (&plan.transformer, plan.local_transformer_batch) {
        let _ = writeln!(o, "        transformer plan: {spec}, local batch {b}");
    }
    let _ = writeln!(o, "        global batch {} samples", r.global_batch);
    let _ = writeln!(o, "Mode    {}", r.mode.label());
    if r.mode == madmax::engine::scenario::Mode::Default {
        let st = &s.task.setup;
        let _ = writeln!(
            o,
            "        micro-batch {}, pipeline chunks per GPU {}, ZeRO stage {}, recompute {}, sequence parallel {}, {} collectives",
            st.micro_batch.map_or("= local batch".to_owned(), |m| m.to_string()),
            st.virtual_stages,
            st.zero_stage,
            st.recompute.config_name(),
            if st.sequence_parallel { "on" } else { "off" },
            st.collective.config_name()
        );
    } else if s.task.mode == madmax::engine::scenario::Mode::Default {
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
    let share = r.exposed_share();
    let _ = writeln!(
        o,
        "Exposed communication {} ({} of communication)",
        units::duration(r.exposed_comm_s),
        units::percent(share)
    );
    let _ = writeln!(
        o,
        "Overlapped            {} ({})",
        units::duration(r.overlapped_comm_s),
        units::percent(if share > 0.0 { 1.0 - share } else { 0.0 })
    );
    if r.idle_s > 0.0 {
        let _ = writeln!(
            o,
            "Idle (pipeline bubble, input) {} ({} of the iteration)",
            units::duration(r.idle_s),
            units::percent(r.idle_s / r.iteration_s)
        );
    }
    let _ = writeln!(o, "Iteration time        {}", units::duration(r.iteration_s));
    // Requests when serving; tokens for language models (generated ones when serving).
    let unit = if r.serving.is_some() { "requests/s" } else { "samples/s" };
    let tokens = r.tokens_per_s(s).map_or(String::new(), |t| format!(" ({})", units::si(t, "tokens/s")));
    let _ = writeln!(o, "Throughput            {}{tokens}", units::si(r.throughput_samples_per_s, unit));
    if let Some(sv) = &r.serving {
        let _ = writeln!(
            o,
            "Serving               {} requests x {}, {} prompt + {} generated tokens each",
            sv.in_flight,
            units::things(sv.replicas, "replica"),
            sv.input_tokens,
            sv.output_tokens
        );
        let _ = writeln!(o, "  {}", madmax::wording::batching(sv));
        let _ = writeln!(o, "  time to first token {}", units::duration(sv.ttft_s));
        let _ = writeln!(o, "  time per output token {}", units::duration(sv.tpot_s));
        let _ = writeln!(o, "  end to end          {}", units::duration(sv.e2e_s));
        let _ = writeln!(
            o,
            "  output tokens/s     {} ({} per GPU), {}",
            units::si(sv.output_tokens_per_s, "tokens/s"),
            units::si(sv.output_tokens_per_s_per_gpu, "tokens/s"),
            units::si(sv.requests_per_s, "requests/s")
        );
        let _ = writeln!(
            o,
            "  KV cache            {} per token per GPU; {}: {} requests",
            units::bytes(sv.kv_bytes_per_token),
            match sv.batching {
                madmax::engine::scenario::Batching::Static => "largest batch that fits",
                madmax::engine::scenario::Batching::InFlight => "most requests in flight that fit",
            },
            sv.max_batch
        );
    }
    if let Some(u) = &r.utilization {
        // Both bases stated: sources print TFLOP/s on either (model FLOPs, or what ran).
        let _ = writeln!(
            o,
            "MFU                   {}: {} per GPU of model FLOPs",
            units::percent(u.mfu),
            units::si(u.model_flops_per_s_per_gpu, "FLOP/s")
        );
        let _ = writeln!(
            o,
            "HFU                   {}: {} per GPU of FLOPs run (recomputation included)",
            units::percent(u.hfu),
            units::si(u.hfu * u.peak_flops_per_s, "FLOP/s")
        );
        let _ = writeln!(o, "                      {}", u.formula);
    } else {
        let _ = writeln!(
            o,
            "MFU                   {} (MAD-Max's FLOPs per sample x global batch x 3 in training, over peak FLOP/s x GPUs x iteration time)",
            units::percent(r.mfu(s))
        );
    }
    let parts: Vec<String> =
        r.memory.parts.iter().map(|(c, b)| format!("{} {}", c.label(), units::bytes(*b))).collect();
    let what = if r.mode == madmax::engine::scenario::Mode::Default { "Memory per GPU" } else { "Weights per GPU" };
    let _ = writeln!(
        o,
        "{what:<21} {} ({}) of {} HBM{}",
        units::bytes(r.memory.total_bytes),
        parts.join(", "),
        units::bytes(r.memory.capacity_bytes),
        if r.memory.fits() { "" } else { ": DOES NOT FIT" }
    );
    for l in &r.limits {
        let _ = match l {
            madmax::engine::report::Limit::DoesNotFit { need_bytes, capacity_bytes, largest, largest_bytes } => {
                writeln!(
                    o,
                    "Limit                 needs {} per GPU, the GPU has {}; the largest part is {} ({})",
                    units::bytes(*need_bytes),
                    units::bytes(*capacity_bytes),
                    largest.label().to_lowercase(),
                    units::bytes(*largest_bytes)
                )
            }
            madmax::engine::report::Limit::InputBound { loader_samples_per_s, compute_samples_per_s } => writeln!(
                o,
                "Limit                 input-bound: the data loader delivers {}, the GPUs could take {}",
                units::si(*loader_samples_per_s, "samples/s"),
                units::si(*compute_samples_per_s, "samples/s")
            ),
            madmax::engine::report::Limit::Overloaded { asked_per_s, most_per_s } => {
                writeln!(o, "Limit                 {}", madmax::wording::overloaded(*asked_per_s, *most_per_s))
            }
            madmax::engine::report::Limit::HostBound { gpu_s, host_s, tp } => writeln!(
                o,
                "Limit                 host-bound: a layer gives the GPU {} of work and takes the host {} to issue{}",
                units::duration(*gpu_s),
                units::duration(*host_s),
                if *tp == 8 {
                    format!("\n                      {}", madmax::accuracy::TP8_HOST_NOTE)
                } else {
                    String::new()
                }
            ),
        };
    }
    if let Some(e) = madmax::accuracy::expectation(s, r) {
        let _ = writeln!(o, "Runs like this        {}", e.sentence(s.system.flops_util, r.iteration_s));
    }
    o
}

/// One case of `bench`.
struct BenchCase {
    name: String,
    raw: RawScenario,
    ref_s: f64,
}

fn bench(args: &[String]) -> ExitCode {
    let mut dir = None;
    let mut explore_dir = None;
    let mut min_ms = 20.0;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--min-ms" => match it.next().and_then(|v| v.parse::<f64>().ok()) {
                Some(v) if v > 0.0 => min_ms = v,
                _ => return usage_error("bench: --min-ms needs a positive number"),
            },
            "--explore" => match it.next() {
                Some(d) => explore_dir = Some(d.clone()),
                None => return usage_error("bench: --explore needs a folder of scenarios"),
            },
            d if dir.is_none() && !d.starts_with('-') => dir = Some(d.to_owned()),
            other => return usage_error(&format!("bench: unexpected argument '{other}'")),
        }
    }
    let Some(dir) = dir else {
        return usage_error("bench: missing DIR");
    };
    let cases = match load_bench_cases(&dir) {
        Ok(c) if !c.is_empty() => c,
        Ok(_) => {
            errln!("madmax: bench: no case files (JSON with inputs and ref_wall_s) in {dir}");
            return ExitCode::from(2);
        }
        Err(e) => {
            errln!("madmax: bench: {e}");
            return ExitCode::from(2);
        }
    };
    // Validate every case once (and warm up) before timing.
    for c in &cases {
        match validate(&c.raw) {
            Ok(s) => {
                std::hint::black_box(evaluate(&s));
            }
            Err(e) => {
                errln!("madmax: bench: {}: {}", c.name, InputError::from_fields(&e).line());
                return ExitCode::from(2);
            }
        }
    }
    // Rounds over all cases: a burst of unrelated load on the machine slows one round, and
    // each case keeps the mean of its quietest round.
    let batch_s = min_ms / 1e3 / ROUNDS as f64;
    let mut best = vec![f64::INFINITY; cases.len()];
    for _ in 0..ROUNDS {
        for (c, b) in cases.iter().zip(best.iter_mut()) {
            *b = b.min(time_batch(&c.raw, batch_s));
        }
    }
    outln!("{:<82} {:>10} {:>11} {:>9}", "case", "ours", "reference", "ratio");
    let mut ours_total = 0.0;
    let mut ref_total = 0.0;
    let mut rows = Vec::with_capacity(cases.len());
    for (c, &per_eval_s) in cases.iter().zip(&best) {
        ours_total += per_eval_s;
        ref_total += c.ref_s;
        outln!(
            "{:<82} {:>10} {:>11} {:>8.0}x",
            c.name,
            units::duration(per_eval_s),
            units::duration(c.ref_s),
            c.ref_s / per_eval_s
        );
        rows.push((c, per_eval_s));
    }
    outln!();
    outln!(
        "total over {} cases: ours {}, reference {}, ratio {:.0}x",
        cases.len(),
        units::duration(ours_total),
        units::duration(ref_total),
        ref_total / ours_total
    );
    if let Some((c, ours)) = rows.iter().max_by(|a, b| a.0.ref_s.total_cmp(&b.0.ref_s)) {
        outln!(
            "slowest reference case: {}: ours {}, reference {}, ratio {:.0}x",
            c.name,
            units::duration(*ours),
            units::duration(c.ref_s),
            c.ref_s / ours
        );
    }
    // The explorer on the paper's flagship run: plans evaluated per second on one core, in
    // MAD-Max paper mode and in the default model (whose search tries training settings too).
    let flagship =
        cases.iter().find(|c| c.name == EXPLORE_BENCH_CASE).and_then(|c| validate(&c.raw).ok().map(|s| (c, s)));
    outln!();
    for (c, s, mode) in flagship.into_iter().flat_map(|(c, s)| {
        let mut default = s.clone();
        default.task.mode = madmax::engine::scenario::Mode::Default;
        [(c, s, "MAD-Max paper mode"), (c, default, "default model")]
    }) {
        outln!("explorer, {mode}: {}: {}", c.name, time_search(&s, min_ms));
    }
    // The explorer on the scenarios: its time, and its best plan against a brute-force
    // sweep of every setting (`explore::brute_force`).
    if let Some(dir) = explore_dir {
        let scenarios = match load_scenarios(&dir) {
            Ok(s) => s,
            Err(e) => {
                errln!("madmax: bench: {e}");
                return ExitCode::from(2);
            }
        };
        outln!();
        for (name, s) in scenarios {
            use madmax::engine::explore;
            let space = explore::Space::fixed_global(&s);
            let best = |ranked: &[explore::Outcome]| {
                ranked.first().filter(|o| o.fits()).map_or(0.0, |o| o.throughput_samples_per_s)
            };
            let found = explore::search(&s, &space).map_or(0.0, |r| best(&r.ranked));
            let start = Instant::now();
            let sweep = explore::brute_force(&s, &space);
            let sweep_s = start.elapsed().as_secs_f64();
            outln!("explorer, default model: {name}: {}", time_search(&s, min_ms));
            outln!(
                "  best plan that fits {:.1} samples/s; a brute-force sweep of {} plans ({}) finds {:.1}: {:.3}x",
                found,
                sweep.len(),
                units::duration(sweep_s),
                best(&sweep),
                if best(&sweep) > 0.0 { found / best(&sweep) } else { 1.0 }
            );
        }
    }
    ExitCode::SUCCESS
}

/// Plans per search, plans evaluated per second on one core and the time of a full search of
/// `s` (the quietest of [`ROUNDS`]), as a sentence.
fn time_search(s: &madmax::engine::Scenario, min_ms: f64) -> String {
    use madmax::engine::explore;
    let space = explore::Space::fixed_global(s);
    let mut plans = 0usize;
    let mut best = f64::INFINITY;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let mut n = 0usize;
        while start.elapsed().as_secs_f64() * 1e3 < min_ms.max(20.0) {
            n += std::hint::black_box(explore::search(s, &space)).map_or(1, |r| r.ranked.len());
        }
        best = best.min(start.elapsed().as_secs_f64() / n as f64);
        plans = std::hint::black_box(explore::search(s, &space)).map_or(0, |r| r.ranked.len());
    }
    format!(
        "{plans} plans per search, {:.0} plans/s on one core, a full search in {}",
        1.0 / best,
        units::duration(best * plans as f64)
    )
}

/// The scenario files of a folder (`{"model", "system", "task"}`), by file name.
fn load_scenarios(dir: &str) -> Result<Vec<(String, madmax::engine::Scenario)>, String> {
    let mut out = Vec::new();
    for p in json_files(dir)? {
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let raw = parse_scenario(&text).map_err(|e| format!("{}: {}", p.display(), e.line()))?;
        let s = validate(&raw).map_err(|e| format!("{}: {}", p.display(), InputError::from_fields(&e).line()))?;
        let name = p.file_stem().map_or(String::new(), |n| n.to_string_lossy().into_owned());
        out.push((name, s));
    }
    Ok(out)
}

/// The `.json` files of a folder, sorted.
fn json_files(dir: &str) -> Result<Vec<std::path::PathBuf>, String> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {dir}: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    Ok(paths)
}

fn load_bench_cases(dir: &str) -> Result<Vec<BenchCase>, String> {
    let mut cases = Vec::new();
    for p in json_files(dir)? {
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?;
        let Some(ref_s) = v.pointer("/ref_wall_s/median").and_then(Value::as_f64) else {
            continue;
        };
        let raw = parse_scenario(&text).map_err(|e| format!("{}: {}", p.display(), e.line()))?;
        let name = v.get("case").and_then(Value::as_str).map(str::to_owned).unwrap_or_else(|| p.display().to_string());
        cases.push(BenchCase { name, raw, ref_s });
    }
    Ok(cases)
}

/// The case the explorer benchmark searches: LLaMA2-70B pre-training on 2,048 GPUs.
const EXPLORE_BENCH_CASE: &str = "llm__llama2_70b__dc_A_2048__llm_train";

/// Timing rounds over all cases (see `bench`).
const ROUNDS: u32 = 5;

/// Mean seconds of one `validate` + `evaluate` of a valid scenario, repeated for `batch_s`.
fn time_batch(raw: &RawScenario, batch_s: f64) -> f64 {
    let mut n: u64 = 0;
    let start = Instant::now();
    loop {
        for _ in 0..16 {
            if let Ok(s) = validate(std::hint::black_box(raw)) {
                std::hint::black_box(evaluate(&s));
            }
        }
        n += 16;
        let el = start.elapsed().as_secs_f64();
        if el >= batch_s {
            return el / n as f64;
        }
    }
}

/// `madmax stories [--json]`: the famous runs against their sources.
fn stories(args: &[String]) -> ExitCode {
    let json_out = match args {
        [] => false,
        [a] if a == "--json" => true,
        [other, ..] => return usage_error(&format!("stories: unexpected argument '{other}'")),
    };
    let list = match madmax::stories::all() {
        Ok(l) => l,
        Err(e) => {
            errln!("madmax: {e}");
            return ExitCode::from(1);
        }
    };
    if json_out {
        let rows: Vec<serde_json::Value> = list
            .iter()
            .map(|s| {
                let r = &s.spec.reported;
                serde_json::json!({
                    "id": s.spec.id, "title": s.spec.title, "metric": r.metric, "unit": r.unit,
                    "reported": r.value, "predicted": s.predicted, "difference": s.difference(),
                    "citation": r.citation.and_then(|i| s.spec.citations.get(i)).map(|c| &c.text),
                })
            })
            .collect();
        out_json(&serde_json::Value::Array(rows));
        return ExitCode::SUCCESS;
    }
    outln!("{:<16} {:>14} {:>14} {:>9}  unit", "story", "reported", "predicted", "diff");
    for s in &list {
        let r = &s.spec.reported;
        let p = s.predicted.map_or("-".to_owned(), |p| format!("{p:.4}"));
        let d = s.difference().map_or("-".to_owned(), |d| format!("{:+.1}%", d * 100.0));
        outln!("{:<16} {:>14.4} {:>14} {:>9}  {}", s.spec.id, r.value, p, d, r.unit);
    }
    ExitCode::SUCCESS
}

fn validate_csv(args: &[String]) -> ExitCode {
    let mut json_out = false;
    let mut files = Vec::new();
    for a in args {
        match a.as_str() {
            "--json" => json_out = true,
            f if !f.starts_with('-') || f == "-" => files.push(f.to_owned()),
            other => return usage_error(&format!("validate: unexpected argument '{other}'")),
        }
    }
    // Rows are read one at a time and keep only what is printed: a long file is never held as
    // cells or scenarios (the floor's groups take each row's work as it comes).
    let mut rows = Vec::new();
    let mut same_work = madmax::accuracy::SameWork::default();
    if files.is_empty() {
        // The runs that ship with madmax, each in its set.
        for mut r in madmax::accuracy::shipped() {
            same_work.add(rows.len(), &r);
            (r.scenario, r.notes, r.citation) = (None, String::new(), String::new());
            rows.push(r);
        }
    }
    for file in &files {
        let text = match read_bounded(file, madmax::input::MAX_CSV_BYTES) {
            Ok(t) => t,
            Err(e) => {
                errln!("madmax: {}: {e}", printable(file));
                return ExitCode::from(2);
            }
        };
        let read = madmax::accuracy::for_each_row(&text, |mut r| {
            same_work.add(rows.len(), &r);
            r.scenario = None;
            r.notes = String::new();
            r.citation = String::new();
            rows.push(r);
        });
        if let Err(e) = read {
            errln!("madmax: {}: {e}", printable(file));
            return ExitCode::from(2);
        }
    }
    let floor = same_work.floor(&rows);
    if rows.iter().all(|r| r.predicted.is_none()) {
        errln!(
            "madmax: no row could be predicted{}",
            match rows.first().and_then(|r| r.skipped.as_deref()) {
                Some(why) => format!(" (the first row: {})", printable(why)),
                None => " (the CSV has a header and no rows)".to_owned(),
            }
        );
        if json_out {
            out_json(&madmax::accuracy::to_json(&rows, floor.as_ref()));
        }
        return ExitCode::from(2);
    }
    if json_out {
        out_json(&madmax::accuracy::to_json(&rows, floor.as_ref()));
        return ExitCode::SUCCESS;
    }
    outln!("{:<34} {:>14} {:>12} {:>12} {:>8}  memory/GPU", "row", "metric", "predicted", "measured", "error");
    for r in &rows {
        match (r.predicted, r.error) {
            (Some(p), Some(e)) => {
                let mem = match (r.memory_bytes, r.capacity_bytes) {
                    (Some(m), Some(c)) => {
                        format!(
                            "{} of {}{}",
                            units::bytes(m),
                            units::bytes(c),
                            if m > c { " (does not fit)" } else { "" }
                        )
                    }
                    _ => String::new(),
                };
                let stated = match (r.measured_memory_bytes, r.memory_error) {
                    (Some(m), Some(e)) => format!(" (stated {}: {:+.0}%)", units::bytes(m), e * 100.0),
                    _ => String::new(),
                };
                outln!(
                    "{:<34} {:>14} {:>12.4} {:>12.4} {:>+7.1}%  {mem}{stated}",
                    r.id,
                    r.metric,
                    p,
                    r.measured,
                    e * 100.0
                )
            }
            _ => outln!("{:<34} skipped: {}", r.id, r.skipped.as_deref().unwrap_or("")),
        }
    }
    let mut defaults: Vec<&str> = rows.iter().flat_map(|r| r.defaults.iter().map(String::as_str)).collect();
    defaults.sort_unstable();
    defaults.dedup();
    if !defaults.is_empty() {
        outln!("\nDefaults for blank cells:");
        for d in defaults {
            let n = rows.iter().filter(|r| r.defaults.iter().any(|x| x == d)).count();
            outln!("  {d} ({n} rows)");
        }
    }
    match madmax::accuracy::summarize(&rows) {
        Some(s) => {
            // With sets known, a source says its set when all its rows share one (one pass: a
            // file may hold 100,000 sources).
            let mut sets: std::collections::BTreeMap<&str, Option<madmax::accuracy::RunSet>> =
                std::collections::BTreeMap::new();
            for r in &rows {
                let e = sets.entry(r.source.as_str()).or_insert(r.set);
                if *e != r.set {
                    *e = None;
                }
            }
            let set_of = |src: &str| sets.get(src).copied().flatten().filter(|_| !s.by_set.is_empty());
            let mut lines = vec![("all".to_owned(), &s.all)];
            lines.extend(s.by_set.iter().map(|(set, st)| (format!("{} set", set.label()), st)));
            lines.extend(s.by_source.iter().map(|(src, st)| match set_of(src) {
                Some(set) => (format!("{src} [{}]", set.label()), st),
                None => (src.clone(), st),
            }));
            // Names are aligned on the longest.
            let width = lines.iter().map(|(n, _)| n.chars().count()).max().unwrap_or(0).max(28);
            outln!("\nAbsolute error of the default model:");
            for (name, st) in lines {
                outln!(
                    "  {name:<width$} {:>4} rows  median {:>5.1}%  mean {:>5.1}%  max {:>5.1}% ({})",
                    st.rows,
                    st.median_abs_error * 100.0,
                    st.mean_abs_error * 100.0,
                    st.max_abs_error * 100.0,
                    st.worst
                );
            }
            if s.skipped > 0 {
                outln!("  {} rows skipped", s.skipped);
            }
            if let Some(m) = &s.memory {
                outln!(
                    "\nMemory per GPU against what sources state ({} rows): median {:.1}%, mean {:.1}%, max {:.1}% ({})",
                    m.rows,
                    m.median_abs_error * 100.0,
                    m.mean_abs_error * 100.0,
                    m.max_abs_error * 100.0,
                    m.worst
                );
            }
        }
        None => outln!("\nno row could be predicted"),
    }
    if let Some(f) = &floor {
        outln!("\nFloor: {}", printable(&madmax::accuracy::floor_sentence(f)));
        outln!("  (the worst of {} pairs of rows that do the same work in more or fewer micro-batches)", f.pairs);
    }
    if let Some(bands) = madmax::accuracy::bands_in(&rows) {
        outln!(
            "\nMeasured / predicted time by kind of plan ({} runs or more; 10th, 50th, 90th percentile):",
            madmax::accuracy::MIN_RUNS
        );
        for b in bands {
            outln!(
                "  {:<10} {:<5} {:>4} runs  {:.2}  {:.2}  {:.2}",
                b.parallelism,
                b.gpu,
                b.runs,
                b.low,
                b.median,
                b.high
            );
        }
    }
    ExitCode::SUCCESS
}
