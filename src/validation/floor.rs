//! How close can any model come to every row? Measured runs disagree with each other, and
//! some disagreements no physical model can follow.
//!
//! Two runs that differ only in their micro-batch size, without pipeline parallelism, do the same
//! work: the same FLOPs and the same bytes over every link, split into fewer or more micro-batches.
//! Fewer, larger micro-batches run larger GEMMs, launch fewer kernels, send fewer and larger
//! messages and hide more of the gradient all-reduce behind the last backward pass, and there is
//! no pipeline bubble that their number could change: no model built from those costs predicts
//! them slower. Where the measurements say the larger micro-batch was slower (time `slow` against
//! `fast`), a model that predicts it no slower misses one of the two by at least
//! `(slow - fast) / (slow + fast)`: predicting both at the same time `p`, one run's error
//! `1 - p / slow` and the other's `p / fast - 1` are equal at `p = 2 slow fast / (slow + fast)`, and
//! moving `p` or splitting it only makes one of them larger. That bound, over the worst such pair,
//! is the floor under the largest error any such model can reach on a set of rows.

use super::{higher_is_faster, RowResult};
use crate::units;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// One run of a same-work pair, as measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Run {
    pub id: String,
    /// Sequences per micro-batch.
    pub micro_batch: u64,
    /// Micro-batches per data-parallel rank per iteration.
    pub micro_batches: u64,
    /// The row's measurement, in its metric (`iteration_s`: s).
    pub measured: f64,
}

/// Two runs that do the same work, where the one with fewer, larger micro-batches measured
/// slower, and the smallest largest error any model that predicts it no slower can have on them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Floor {
    /// `(slow - fast) / (slow + fast)` in the rows' metric (a fraction).
    pub error: f64,
    /// The run with fewer, larger micro-batches (measured slower).
    pub larger: Run,
    /// The run with more, smaller micro-batches (measured faster).
    pub smaller: Run,
    pub metric: String,
    /// Pairs of rows that do the same work, whether their measurements agree or not.
    pub pairs: usize,
}

/// The row's scenario without what a same-work pair may differ in (its name and micro-batch
/// size), its micro-batch size and the sequences per data-parallel rank; `None` for rows with a
/// pipeline (whose bubble depends on the number of micro-batches) and rows without a scenario.
fn work(r: &RowResult) -> Option<(Value, u64, u64)> {
    let mut doc = r.scenario.clone()?;
    let task = doc.get_mut("task")?.as_object_mut()?;
    let levels = task.get("transformer_parallel")?.as_array()?;
    if levels.iter().any(|l| l == "pp") {
        return None;
    }
    let micro = task.remove("micro_batch")?.as_u64().filter(|m| *m > 0)?;
    let local = task.get("local_transformer_bs")?.as_u64()?;
    task.remove("name");
    Some((doc, micro, local))
}

/// Two rows that do the same work: `larger` runs fewer, larger micro-batches than `smaller`.
#[derive(Clone, Copy, Debug)]
pub struct Pair<'a> {
    pub larger: &'a RowResult,
    pub smaller: &'a RowResult,
    larger_micro: u64,
    smaller_micro: u64,
    /// Sequences per data-parallel rank per iteration.
    local: u64,
}

/// Every pair of `rows` that do the same work, whatever their measurements say, grouped by work
/// (the scenario's text) so that a thousand rows cost a sort, not a million comparisons.
pub fn same_work_pairs(rows: &[RowResult]) -> Vec<Pair<'_>> {
    let mut groups: BTreeMap<String, Vec<(&RowResult, u64, u64)>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.skipped.is_none()) {
        if let Some((doc, micro, local)) = work(r) {
            groups.entry(format!("{}|{doc}", r.metric)).or_default().push((r, micro, local));
        }
    }
    let mut out = Vec::new();
    for runs in groups.values() {
        for &(a, micro_a, local) in runs {
            for &(b, micro_b, _) in runs {
                if micro_a > micro_b {
                    out.push(Pair { larger: a, smaller: b, larger_micro: micro_a, smaller_micro: micro_b, local });
                }
            }
        }
    }
    out
}

/// The worst pair of `rows` (see the module text), or `None` when no two rows that do the same
/// work contradict each other.
pub fn floor(rows: &[RowResult]) -> Option<Floor> {
    let mut worst: Option<Floor> = None;
    let pairs = same_work_pairs(rows);
    for p in &pairs {
        let (a, b) = (p.larger, p.smaller);
        let (slow, fast) =
            if higher_is_faster(&a.metric) { (b.measured, a.measured) } else { (a.measured, b.measured) };
        let bound = (slow - fast) / (slow + fast);
        if bound > 0.0 && worst.as_ref().is_none_or(|w| bound > w.error) {
            let run = |r: &RowResult, micro: u64| Run {
                id: r.id.clone(),
                micro_batch: micro,
                micro_batches: p.local / micro,
                measured: r.measured,
            };
            worst = Some(Floor {
                error: bound,
                larger: run(a, p.larger_micro),
                smaller: run(b, p.smaller_micro),
                metric: a.metric.clone(),
                pairs: pairs.len(),
            });
        }
    }
    worst
}

/// The floor in words, for the CLI and the validation page.
pub fn sentence(f: &Floor) -> String {
    let value = |x: f64| match f.metric.as_str() {
        "iteration_s" => units::duration(x),
        "tflops_per_gpu" => format!("{} TFLOP/s per GPU", units::sig3(x)),
        "mfu" => format!("{} MFU", units::percent(x)),
        _ => units::sig3(x),
    };
    let plural = |n: u64| if n == 1 { "micro-batch" } else { "micro-batches" };
    format!(
        "No model in which the same work in fewer, larger micro-batches runs no slower can come within {} of every row: {} ({} {} of {} per data-parallel rank) measured {}, {} ({} {} of {}, the same work) {}.",
        units::percent(f.error),
        f.larger.id,
        f.larger.micro_batches,
        plural(f.larger.micro_batches),
        f.larger.micro_batch,
        value(f.larger.measured),
        f.smaller.id,
        f.smaller.micro_batches,
        plural(f.smaller.micro_batches),
        f.smaller.micro_batch,
        value(f.smaller.measured),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(id: &str, micro: u64, pp: bool, measured: f64, metric: &str) -> RowResult {
        let levels: Vec<&str> = if pp { vec!["tp", "pp"] } else { vec!["tp", "ddp"] };
        RowResult {
            id: id.into(),
            source: "test".into(),
            metric: metric.into(),
            measured,
            predicted: Some(measured),
            error: Some(0.0),
            skipped: None,
            defaults: vec![],
            iteration_s: Some(measured),
            memory_bytes: None,
            capacity_bytes: None,
            model: "m".into(),
            gpu: "a100-80g".into(),
            n_gpus: 16,
            plan: String::new(),
            parallelism: String::new(),
            notes: String::new(),
            held_out: false,
            citation: String::new(),
            scenario: Some(json!({
                "model": {"name": "m"},
                "task": {"name": id, "micro_batch": micro, "local_transformer_bs": 64, "transformer_parallel": levels},
            })),
        }
    }

    #[test]
    fn a_larger_micro_batch_measured_slower_sets_the_floor() {
        let rows = [
            row("a", 64, false, 9.0, "iteration_s"),
            row("b", 32, false, 5.0, "iteration_s"),
            row("c", 16, false, 5.5, "iteration_s"),
        ];
        let f = floor(&rows).expect("a contradiction");
        assert_eq!((f.larger.id.as_str(), f.smaller.id.as_str()), ("a", "b"));
        assert!((f.error - 4.0 / 14.0).abs() < 1e-12);
        assert_eq!((f.larger.micro_batches, f.smaller.micro_batches), (1, 2));
        assert_eq!(
            sentence(&f),
            "No model in which the same work in fewer, larger micro-batches runs no slower can come within 28.6 % of every row: a (1 micro-batch of 64 per data-parallel rank) measured 9.00 s, b (2 micro-batches of 32, the same work) 5.00 s."
        );
    }

    #[test]
    fn no_model_that_obeys_the_law_does_better_than_the_floor() {
        let (slow, fast) = (9.0_f64, 5.0_f64);
        let bound = (slow - fast) / (slow + fast);
        // Every prediction pair with p_larger <= p_smaller on a grid misses one run by at least the
        // bound, and the pair at p = 2 slow fast / (slow + fast) reaches it.
        let mut best = f64::INFINITY;
        for i in 1..400 {
            for j in i..400 {
                let (p_larger, p_smaller) = (i as f64 * 0.05, j as f64 * 0.05);
                let worst = ((p_larger - slow) / slow).abs().max(((p_smaller - fast) / fast).abs());
                assert!(worst >= bound - 1e-12, "{p_larger} {p_smaller}");
                best = best.min(worst);
            }
        }
        let p = 2.0 * slow * fast / (slow + fast);
        assert!((((slow - p) / slow) - bound).abs() < 1e-12 && (((p - fast) / fast) - bound).abs() < 1e-12);
        assert!(best - bound < 0.01);
    }

    #[test]
    fn consistent_runs_pipelines_other_work_and_throughputs_are_read_right() {
        // Larger micro-batch faster: no floor.
        assert!(floor(&[row("a", 8, false, 4.0, "iteration_s"), row("b", 4, false, 5.0, "iteration_s")]).is_none());
        // With a pipeline the number of micro-batches sets the bubble: not the same work.
        assert!(floor(&[row("a", 8, true, 9.0, "iteration_s"), row("b", 4, true, 5.0, "iteration_s")]).is_none());
        // Different work (another model) never pairs.
        let mut other = row("b", 4, false, 5.0, "iteration_s");
        if let Some(m) = other.scenario.as_mut().and_then(|s| s.get_mut("model")) {
            m["name"] = json!("n");
        }
        assert!(floor(&[row("a", 8, false, 9.0, "iteration_s"), other]).is_none());
        // Throughput: the larger micro-batch delivering fewer TFLOP/s is the contradiction.
        let f = floor(&[row("a", 8, false, 100.0, "tflops_per_gpu"), row("b", 4, false, 150.0, "tflops_per_gpu")])
            .expect("a contradiction");
        assert!((f.error - 0.2).abs() < 1e-12);
        assert!(floor(&[row("a", 8, false, 150.0, "tflops_per_gpu"), row("b", 4, false, 100.0, "tflops_per_gpu")])
            .is_none());
        // Skipped rows take no part.
        let mut skipped = row("b", 4, false, 5.0, "iteration_s");
        skipped.skipped = Some("no preset".into());
        assert!(floor(&[row("a", 8, false, 9.0, "iteration_s"), skipped]).is_none());
    }
}
