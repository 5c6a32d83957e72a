//! `madmax bench`: how fast the engine evaluates the golden cases against the reference's own
//! time, and how fast the explorer searches.

use crate::args::BenchArgs;
use crate::io::{parse_scenario, InputError};
use madmax::engine::{evaluate, validate, RawScenario};
use madmax::units;
use serde_json::Value;
use std::process::ExitCode;
use std::time::Instant;

/// One case of `bench`.
struct BenchCase {
    name: String,
    raw: RawScenario,
    ref_s: f64,
}

/// `madmax bench`: validate + evaluate timed against the reference's own time, then the explorer.
pub fn run(a: &BenchArgs) -> ExitCode {
    let (dir, min_ms) = (&a.dir, a.min_ms);
    let cases = match load_bench_cases(dir) {
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
        let default = s.with_mode(madmax::engine::scenario::Mode::Default).ok();
        std::iter::once((c, s, "MAD-Max paper mode")).chain(default.map(|d| (c, d, "default model")))
    }) {
        outln!("explorer, {mode}: {}: {}", c.name, time_search(&s, min_ms));
    }
    // The explorer on the scenarios: its time, and its best plan against a brute-force
    // sweep of every setting (`explore::brute_force`, in Megatron-LM's placement only: every
    // placement too would take several times as long; the explorer tries the others on its
    // best plans, so it can beat the sweep).
    if let Some(dir) = &a.explore_dir {
        let scenarios = match load_scenarios(dir) {
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
            // Staged as the search is when every setting on every plan is too much: the
            // settings tried on the most promising plans only.
            let staged = explore::Space { knobs: false, staged: true, ..space.clone() };
            let staged = explore::search(&s, &staged).map_or(0.0, |r| best(&r.ranked));
            let start = Instant::now();
            let sweep = explore::brute_force(&s, &space);
            let sweep_s = start.elapsed().as_secs_f64();
            outln!("explorer, default model: {name}: {}", time_search(&s, min_ms));
            outln!(
                "  best plan that fits {:.1} samples/s; a brute-force sweep of every setting in Megatron-LM's placement with the scenario's collective algorithm, {} plans ({}), finds {:.1}: {:.3}x",
                found,
                sweep.len(),
                units::duration(sweep_s),
                best(&sweep),
                if best(&sweep) > 0.0 { found / best(&sweep) } else { 1.0 }
            );
            outln!(
                "  staged (settings on the {} most promising plans and {} pipelines interleaved only): {:.1} samples/s, {:.3}x the full search",
                explore::SETTINGS_PASS_PLANS,
                explore::INTERLEAVED_PLANS,
                staged,
                if found > 0.0 { staged / found } else { 1.0 }
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
    madmax::engine::order::sort(&mut paths);
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
