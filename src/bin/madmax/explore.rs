//! `madmax explore`: every plan the model accepts for a scenario's model on its cluster,
//! ranked by throughput, with the task's own plan first.

use crate::args::ExploreArgs;
use crate::io::{input_failed, load_raw, out_json, InputError};
use madmax::units;
use serde_json::json;
use std::process::ExitCode;
use std::time::Instant;

/// `madmax explore`: the plans for a scenario's model on its cluster, ranked.
pub fn run(a: &ExploreArgs) -> ExitCode {
    use madmax::engine::explore::{self, Space};
    let raw = match load_raw(&a.file, a.mode) {
        Ok(r) => r,
        Err(e) => return input_failed(&e, a.json),
    };
    // A transformer plan the default model's rules refuse: search anyway, from data
    // parallelism at the same global batch, and say first that the own plan cannot run.
    let (scenario, own_plan_problem) = match madmax::engine::validate(&raw) {
        Ok(s) => (s, None),
        Err(errors) => match explore::rescued(&raw, &errors) {
            Some((s, problem)) => (s, Some(problem)),
            None => return input_failed(&InputError::from_fields(&errors), a.json),
        },
    };
    let mut space = match a.local_batches.clone() {
        Some(l) => Space::local(l),
        None => Space::fixed_global(&scenario),
    };
    space.max_tpot_s = a.max_tpot_s;
    space.max_ttft_s = a.max_ttft_s;
    space.formats = a.formats.clone();
    let started = Instant::now();
    let summary = match explore::search(&scenario, &space) {
        Ok(s) => s,
        Err(too_big) => {
            let line = format!("explore: {too_big}");
            errln!("madmax: {line}");
            if a.json {
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
    if a.json {
        // A plan that cannot be set up is no baseline: none, and no speed-up over it.
        let rescued = own_plan_problem.is_some();
        let v = json!({
            "baseline": (!rescued).then(|| outcome_json(&summary.baseline)),
            "own_plan_problem": own_plan_problem.as_ref().map(|e| json!({"field": e.field, "error": e.message})),
            "best": summary.ranked.first().map(outcome_json),
            "speedup": summary.speedup.filter(|_| !rescued),
            "settings_searched": summary.settings == explore::SettingsSearched::Every,
            "settings_searched_plans": match summary.settings {
                explore::SettingsSearched::Best(n) => Some(n),
                _ => None,
            },
            "plans_evaluated": summary.ranked.len(),
            "plans": summary.ranked.iter().take(a.top).map(outcome_json).collect::<Vec<_>>(),
        });
        out_json(&v);
        return ExitCode::SUCCESS;
    }
    outln!(
        "{} on {} of {} HBM: {} evaluated in {}",
        scenario.model().name,
        units::things(scenario.system().num_devices, "GPU"),
        units::bytes(summary.baseline.capacity_bytes),
        units::things(summary.ranked.len() as u64, "plan"),
        units::duration(elapsed)
    );
    if let Some(note) = madmax::wording::settings_searched(summary.settings) {
        outln!("({note})");
    }
    let b = &summary.baseline;
    let memory = if madmax::engine::uses_default_model(&scenario) { "memory" } else { "weights" };
    match &own_plan_problem {
        Some(e) => outln!(
            "your plan cannot run in this model ({e}): every plan was searched at its global batch of {}",
            b.global_batch
        ),
        None => outln!(
            "your plan:  {}  ->  {}, {memory} {} of {} per GPU{}",
            explore::describe_outcome(&scenario, b),
            speed(b),
            units::bytes(b.memory_bytes),
            units::bytes(b.capacity_bytes),
            misfit(b)
        ),
    }
    outln!();
    // Serving plans show their latencies where training plans show iteration and exposure.
    let serving = b.tpot_s.is_some();
    let (third, fourth) = if serving { ("first token", "per token") } else { ("iteration", "exposed") };
    outln!(
        "{:>4}  {:>14} {:>14} {:>6} {:>11} {:>10} {:>12}  plan",
        "rank",
        "throughput",
        "tokens/s",
        "MFU",
        third,
        fourth,
        format!("{memory}/GPU")
    );
    for (i, o) in summary.ranked.iter().take(a.top).enumerate() {
        let (c, d) = match (o.ttft_s, o.tpot_s) {
            (Some(ttft), Some(tpot)) => (units::duration(ttft), units::duration(tpot)),
            _ => (units::duration(o.iteration_s), units::percent(o.exposed_share)),
        };
        outln!(
            "{:>4}  {:>14} {:>14} {:>6} {:>11} {:>10} {:>12}  {}{}",
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
    if own_plan_problem.is_some() {
        match best {
            Some(best) => outln!(
                "The best plan that fits: {}, {}, {memory} {} per GPU.",
                explore::describe_outcome(&scenario, best),
                speed(best),
                units::bytes(best.memory_bytes)
            ),
            None => outln!("no plan searched fits in HBM"),
        }
        return ExitCode::SUCCESS;
    }
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
