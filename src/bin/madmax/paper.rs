//! `madmax paper`: the MAD-Max paper's findings on its workload suite, beside what it reported.

use crate::io::out_json;
use madmax::engine::scenario::Mode;
use madmax::paper::{self, Findings, Spread};
use madmax::units;
use std::process::ExitCode;

/// `madmax paper [--json] [--mode M]`: the findings in each model (or the one `mode` names).
pub fn run(json: bool, mode: Option<Mode>) -> ExitCode {
    let modes = mode.map_or(vec![Mode::Reference, Mode::Default], |m| vec![m]);
    let mut all = Vec::new();
    for m in modes {
        match paper::findings(m) {
            Ok(f) => all.push(f),
            Err(e) => {
                errln!("madmax: paper: {e}");
                return ExitCode::from(1);
            }
        }
    }
    if json {
        out_json(&serde_json::json!(all));
    } else {
        for f in &all {
            outp!("{}", text(f));
        }
    }
    ExitCode::SUCCESS
}

/// A spread with each figure shown by `show`: `median 12.3 % (0 % to 68.1 %; highest id)`.
fn spread(s: &Spread, show: fn(f64) -> String) -> String {
    format!("median {} ({} to {}; highest {})", show(s.median), show(s.min), show(s.max), s.highest)
}

fn shares(s: &Spread) -> String {
    spread(s, units::percent)
}

fn ratios(s: &Spread) -> String {
    spread(s, |x| format!("{}x", units::sig3(x)))
}

fn text(f: &Findings) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let model = match f.mode {
        Mode::Reference => "MAD-Max paper mode",
        Mode::Default => "the default model",
    };
    let _ = writeln!(
        o,
        "The paper's findings in {model}, on its workload suite ({} workloads: the scenario presets taken from the reference's golden cases)",
        f.workloads
    );
    for r in &f.refused {
        let _ = writeln!(o, "  not run, this model refuses {}: {}", r.workload, r.why);
    }
    let e = &f.exposed;
    let (lo, hi) = paper::PAPER_EXPOSED_SHARE;
    let _ =
        writeln!(o, "\nExposed communication, as a share of iteration time (every GPU waits alike: of GPU hours too)");
    let _ = writeln!(o, "  {:<22} {:>2} workloads  {}", "all", e.all.workloads, shares(&e.all));
    let _ = writeln!(
        o,
        "  {:<22} {:>2} workloads  {}",
        "weighted by GPUs",
        e.all.workloads,
        units::percent(e.gpu_weighted)
    );
    for g in e.by_family.iter().chain(&e.by_gpu) {
        let _ = writeln!(o, "  {:<22} {:>2} workloads  {}", g.name, g.spread.workloads, shares(&g.spread));
    }
    let _ = writeln!(
        o,
        "  The paper: {} to {} of GPU hours in large training jobs, measured on production traces; these are configs, one iteration each, unweighted but for the line weighted by GPU count.",
        units::percent(lo),
        units::percent(hi)
    );
    let _ = writeln!(o, "  {}", paper::WHY_EXPOSED);
    let s = &f.speedups;
    let _ = writeln!(
        o,
        "\nSpeed-up the explorer finds over each workload's own plan (the best plan that fits, same global batch)"
    );
    for (what, spread, paper) in [
        ("training", &s.training, paper::PAPER_PRETRAIN_SPEEDUP),
        ("inference", &s.inference, paper::PAPER_INFERENCE_SPEEDUP),
    ] {
        match spread {
            Some(x) => {
                let _ =
                    writeln!(o, "  {what:<22} {:>2} workloads  {}; the paper: up to {paper}x", x.workloads, ratios(x));
            }
            None => {
                let _ = writeln!(o, "  {what:<22}  0 workloads  (none compared); the paper: up to {paper}x");
            }
        }
    }
    if !s.largest.is_empty() {
        let _ = writeln!(o, "  where a better plan gains most:");
        for g in &s.largest {
            let _ = writeln!(o, "    {}", madmax::wording::gain(g));
        }
    }
    let _ = writeln!(o, "  {}", paper::WHY_SPEEDUP);
    for (list, why) in [
        (&s.own_plan_cannot_run, "own plan cannot run (it does not fit in HBM or misses a latency limit)"),
        (&s.nothing_fits, "no plan fits"),
        (&s.too_big, "search too big to run"),
    ] {
        if !list.is_empty() {
            let _ = writeln!(o, "  not compared, {why}: {}", list.join(", "));
        }
    }
    let _ =
        writeln!(o, "\nCo-design: throughput with one resource scaled, over each workload's own at x1 (its own plan)");
    for w in &f.codesign {
        let _ = writeln!(o, "  {:<18} x{:<4} {}", w.resource, w.factor, ratios(&w.speedup));
    }
    let fits: Vec<String> = f.capacity.iter().map(|c| format!("x{} {} of {}", c.factor, c.fit, c.workloads)).collect();
    let _ = writeln!(
        o,
        "  HBM capacity changes which plans fit, not how fast one runs; own plans that fit: {}",
        fits.join(", ")
    );
    let _ = writeln!(o, "  {}", paper::WHY_CODESIGN);
    o
}
