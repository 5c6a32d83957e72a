//! Error statistics over predicted rows: per set, per kind of run and set, per source, and
//! memory against what sources state.

use super::{RowResult, RunKind, RunSet};
use serde::Serialize;

/// Error statistics over rows (absolute errors, as fractions).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stats {
    pub rows: usize,
    pub median_abs_error: f64,
    pub mean_abs_error: f64,
    pub max_abs_error: f64,
    /// The row with the largest error.
    pub worst: String,
}

/// The whole comparison.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub all: Stats,
    /// Per set (calibration, then held out), for the rows whose set is known.
    pub by_set: Vec<(RunSet, Stats)>,
    /// Per kind of run and set, when the rows are of more than one kind (LLM training and
    /// serving, recommendation models, vision), for the rows whose kind and set are known.
    pub by_kind: Vec<(RunKind, RunSet, Stats)>,
    /// Per source (the `source` column up to its first parenthesis or comma).
    pub by_source: Vec<(String, Stats)>,
    /// Predicted memory per GPU against what the sources state, over the rows that state it.
    pub memory: Option<Stats>,
    pub skipped: usize,
}

fn stats<'a>(rows: impl Iterator<Item = &'a RowResult>) -> Option<Stats> {
    stats_of(rows, |r| r.error)
}

/// [`Stats`] of the errors `error` gives, over the rows that have one.
fn stats_of<'a>(rows: impl Iterator<Item = &'a RowResult>, error: impl Fn(&RowResult) -> Option<f64>) -> Option<Stats> {
    let mut errs: Vec<(f64, &str)> = rows.filter_map(|r| error(r).map(|e| (e.abs(), r.id.as_str()))).collect();
    if errs.is_empty() {
        return None;
    }
    crate::engine::order::sort_by(&mut errs, |a, b| a.0.total_cmp(&b.0));
    let n = errs.len();
    let median = if n % 2 == 1 { errs[n / 2].0 } else { (errs[n / 2 - 1].0 + errs[n / 2].0) / 2.0 };
    let (max, worst) = errs[n - 1];
    Some(Stats {
        rows: n,
        median_abs_error: median,
        mean_abs_error: errs.iter().map(|e| e.0).sum::<f64>() / n as f64,
        max_abs_error: max,
        worst: worst.to_owned(),
    })
}

/// Error statistics over all rows and per source.
pub fn summarize(rows: &[RowResult]) -> Option<Summary> {
    let all = stats(rows.iter())?;
    // Rows by source, in the order of each source's first row.
    let mut index: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    let mut sources: Vec<(&str, Vec<&RowResult>)> = Vec::new();
    for r in rows {
        let i = *index.entry(&r.source).or_insert_with(|| {
            sources.push((&r.source, Vec::new()));
            sources.len() - 1
        });
        sources[i].1.push(r);
    }
    let by_source =
        sources.into_iter().filter_map(|(s, rs)| stats(rs.into_iter()).map(|st| (s.to_owned(), st))).collect();
    let by_set = [RunSet::Calibration, RunSet::HeldOut]
        .into_iter()
        .filter_map(|set| stats(rows.iter().filter(|r| r.set == Some(set))).map(|st| (set, st)))
        .collect();
    let present = RunKind::ALL.iter().filter(|k| rows.iter().any(|r| r.kind() == Some(**k))).count();
    let by_kind = if present > 1 {
        RunKind::ALL
            .into_iter()
            .flat_map(|k| [RunSet::Calibration, RunSet::HeldOut].map(|set| (k, set)))
            .filter_map(|(k, set)| {
                stats(rows.iter().filter(|r| r.kind() == Some(k) && r.set == Some(set))).map(|st| (k, set, st))
            })
            .collect()
    } else {
        Vec::new()
    };
    let memory = stats_of(rows.iter(), |r| r.memory_error);
    let skipped = rows.iter().filter(|r| r.skipped.is_some()).count();
    Some(Summary { all, by_set, by_kind, by_source, memory, skipped })
}
