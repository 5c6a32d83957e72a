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

use super::{Metric, RowResult};
use crate::units;
use serde::Serialize;
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
    pub metric: Metric,
    /// Pairs of rows that do the same work, whether their measurements agree or not.
    pub pairs: usize,
}

/// What [`SameWork`] needs of a row, taken from its scenario: the work as bytes of text (its
/// metric and scenario without what a same-work pair may differ in: its name and micro-batch
/// size), its micro-batch size and the sequences per data-parallel rank. A caller that drops
/// rows' scenarios takes it first ([`Work::of`], then [`SameWork::add_work`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Work {
    key: Vec<u8>,
    micro: u64,
    local: u64,
}

impl Work {
    /// The row's work; `None` for skipped rows, rows with a pipeline (whose bubble depends on
    /// the number of micro-batches) and rows without a scenario.
    pub fn of(r: &RowResult) -> Option<Work> {
        if r.skipped.is_some() {
            return None;
        }
        let doc = r.scenario.as_ref()?.as_object()?;
        let task = doc.get("task")?.as_object()?;
        let levels = task.get("transformer_parallel")?.as_array()?;
        if levels.iter().any(|l| l == "pp") {
            return None;
        }
        let micro = task.get("micro_batch")?.as_u64().filter(|m| *m > 0)?;
        let local = task.get("local_transformer_bs")?.as_u64()?;
        // Written from the borrowed scenario, each value as JSON (self-delimiting), the task's in
        // its own key order without the two keys: copying the scenario to remove them took longer
        // than the rest of `validate`'s grouping on a long file.
        let mut key = format!("{}|", r.metric?.cell()).into_bytes();
        for (part, value) in doc {
            key.extend_from_slice(part.as_bytes());
            key.push(b'=');
            if part == "task" {
                for (k, v) in task.iter().filter(|(k, _)| !matches!(k.as_str(), "micro_batch" | "name")) {
                    serde_json::to_writer(&mut key, k).ok()?;
                    key.push(b':');
                    serde_json::to_writer(&mut key, v).ok()?;
                    key.push(b',');
                }
            } else {
                serde_json::to_writer(&mut key, value).ok()?;
            }
            key.push(b';');
        }
        Some(Work { key, micro, local })
    }
}

/// Two rows that do the same work: `larger` runs fewer, larger micro-batches than `smaller`.
#[derive(Clone, Copy, Debug)]
pub struct Pair<'a> {
    pub larger: &'a RowResult,
    pub smaller: &'a RowResult,
}

/// A row of a same-work group: its index, micro-batch size and sequences per data-parallel
/// rank.
#[derive(Clone, Copy, Debug)]
struct Member {
    row: usize,
    micro: u64,
    local: u64,
}

/// Rows grouped by the work they do, in the order of each group's first row, built one row at
/// a time: a caller may drop a row's scenario once it is added, or once its [`Work`] is taken
/// (`madmax validate` on a long file does).
#[derive(Debug, Default)]
pub struct SameWork {
    index: BTreeMap<Vec<u8>, usize>,
    groups: Vec<Vec<Member>>,
}

impl SameWork {
    /// The groups of `rows`.
    pub fn of(rows: &[RowResult]) -> SameWork {
        let mut g = SameWork::default();
        for (i, r) in rows.iter().enumerate() {
            g.add(i, r);
        }
        g
    }

    /// Adds row number `row` (`r`), if it does work that a pair can share.
    pub fn add(&mut self, row: usize, r: &RowResult) {
        self.add_work(row, Work::of(r));
    }

    /// Adds row number `row` by its work ([`Work::of`]); `None` adds nothing.
    pub fn add_work(&mut self, row: usize, work: Option<Work>) {
        let Some(Work { key, micro, local }) = work else { return };
        let groups = &mut self.groups;
        let i = *self.index.entry(key).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        self.groups[i].push(Member { row, micro, local });
    }

    /// Every pair that does the same work, whatever their measurements say. Its length is
    /// quadratic in a group's size: for tests over the shipped rows; [`SameWork::floor`] does
    /// not list them.
    pub fn pairs<'a>(&self, rows: &'a [RowResult]) -> Vec<Pair<'a>> {
        let mut out = Vec::new();
        for runs in &self.groups {
            for a in runs {
                for b in runs.iter().filter(|b| a.micro > b.micro) {
                    out.push(Pair { larger: &rows[a.row], smaller: &rows[b.row] });
                }
            }
        }
        out
    }

    /// The worst pair (see the module text), or `None` when no two rows that do the same work
    /// contradict each other; of equal pairs, the first in row order. `rows` are the rows added
    /// (their scenarios no longer needed). Time `n log n`: within a group sorted by micro-batch
    /// size, each row's worst partner is the fastest (in the metric's sense) of the rows with
    /// smaller micro-batches, kept as a running best.
    pub fn floor(&self, rows: &[RowResult]) -> Option<Floor> {
        let mut worst: Option<(f64, Member, Member)> = None;
        let mut pairs = 0usize;
        for runs in &self.groups {
            let higher = rows[runs[0].row].metric.is_some_and(Metric::higher_is_faster);
            let measured = |m: &Member| rows[m.row].measured;
            // `x` beats `best` as the faster partner (the earlier row on a tie).
            let faster = |x: &Member, best: &Member| {
                let (a, b) = (measured(x), measured(best));
                (if higher { a > b } else { a < b }) || (a == b && x.row < best.row)
            };
            let mut by_micro: Vec<usize> = (0..runs.len()).collect();
            crate::engine::order::sort_by_key(&mut by_micro, |&i| (runs[i].micro, runs[i].row));
            // For each member: the fastest member with a smaller micro-batch.
            let mut partner: Vec<Option<Member>> = vec![None; runs.len()];
            let mut best: Option<Member> = None;
            let (mut k, mut before) = (0, 0);
            while k < by_micro.len() {
                let micro = runs[by_micro[k]].micro;
                let end = k + by_micro[k..].iter().take_while(|&&i| runs[i].micro == micro).count();
                for &i in &by_micro[k..end] {
                    partner[i] = best;
                    pairs += before;
                }
                for &i in &by_micro[k..end] {
                    if best.as_ref().is_none_or(|b| faster(&runs[i], b)) {
                        best = Some(runs[i]);
                    }
                }
                before += end - k;
                k = end;
            }
            // Members in row order, so that the first of equal pairs wins.
            for (a, b) in runs.iter().zip(partner).filter_map(|(a, b)| Some((*a, b?))) {
                let (slow, fast) = if higher { (measured(&b), measured(&a)) } else { (measured(&a), measured(&b)) };
                let bound = (slow - fast) / (slow + fast);
                if bound > 0.0 && worst.as_ref().is_none_or(|w| bound > w.0) {
                    worst = Some((bound, a, b));
                }
            }
        }
        let (error, a, b) = worst?;
        let run = |m: Member| Run {
            id: rows[m.row].id.clone(),
            micro_batch: m.micro,
            micro_batches: m.local / m.micro,
            measured: rows[m.row].measured,
        };
        Some(Floor { error, larger: run(a), smaller: run(b), metric: rows[a.row].metric?, pairs })
    }
}

/// Every pair of `rows` that do the same work ([`SameWork::pairs`]).
pub fn same_work_pairs(rows: &[RowResult]) -> Vec<Pair<'_>> {
    SameWork::of(rows).pairs(rows)
}

/// The worst pair of `rows` ([`SameWork::floor`]).
pub fn floor(rows: &[RowResult]) -> Option<Floor> {
    SameWork::of(rows).floor(rows)
}

/// The floor in words, for the CLI and the validation page.
pub fn sentence(f: &Floor) -> String {
    let value = |x: f64| match f.metric {
        Metric::IterationS => units::duration(x),
        Metric::TflopsPerGpu => format!("{} TFLOP/s per GPU", units::sig3(x)),
        Metric::Mfu => format!("{} MFU", units::percent(x)),
        Metric::Hfu => format!("{} HFU", units::percent(x)),
        m => format!("{} {}", units::sig3(x), m.label()),
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
            metric: Metric::of_cell(metric),
            measured,
            predicted: Some(measured),
            error: Some(0.0),
            iteration_s: Some(measured),
            model: "m".into(),
            gpu: "a100-80g".into(),
            n_gpus: 16,
            scenario: Some(json!({
                "model": {"name": "m"},
                "task": {"name": id, "micro_batch": micro, "local_transformer_bs": 64, "transformer_parallel": levels},
            })),
            ..RowResult::default()
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

    /// The floor by the definition: every pair, the worst (first on a tie).
    fn brute_force(rows: &[RowResult]) -> Option<(f64, String, String, usize)> {
        let pairs = same_work_pairs(rows);
        let mut worst: Option<(f64, String, String, usize)> = None;
        for p in &pairs {
            let (a, b) = (p.larger, p.smaller);
            let (slow, fast) = if a.metric.is_some_and(Metric::higher_is_faster) {
                (b.measured, a.measured)
            } else {
                (a.measured, b.measured)
            };
            let bound = (slow - fast) / (slow + fast);
            if bound > 0.0 && worst.as_ref().is_none_or(|w| bound > w.0) {
                worst = Some((bound, a.id.clone(), b.id.clone(), pairs.len()));
            }
        }
        worst
    }

    #[test]
    fn the_floor_equals_the_worst_of_all_pairs_without_listing_them() {
        // Seeded rows: two works, micro-batches 1 to 8, measurements with ties.
        let mut x = 12345u64;
        let mut next = |n: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        for metric in ["iteration_s", "tflops_per_gpu"] {
            for _ in 0..40 {
                let rows: Vec<RowResult> = (0..30)
                    .map(|i| {
                        let mut r = row(&format!("r{i}"), 1 << next(4), false, 1.0 + next(6) as f64, metric);
                        if next(2) == 0 {
                            if let Some(m) = r.scenario.as_mut().and_then(|s| s.get_mut("model")) {
                                m["name"] = json!("other");
                            }
                        }
                        r
                    })
                    .collect();
                let fast = floor(&rows).map(|f| (f.error, f.larger.id, f.smaller.id, f.pairs));
                assert_eq!(fast, brute_force(&rows));
            }
        }
    }

    #[test]
    fn ten_thousand_rows_of_one_run_take_a_sort_not_fifty_million_pairs() {
        let rows: Vec<RowResult> = (0..10_000)
            .map(|i| row(&format!("r{i}"), [8, 4][i % 2], false, 3.0 + (i % 7) as f64, "iteration_s"))
            .collect();
        let f = floor(&rows).expect("a contradiction");
        assert_eq!(f.pairs, 5_000 * 5_000);
        assert!((f.error - (9.0 - 3.0) / 12.0).abs() < 1e-12, "{}", f.error);
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
