//! `madmax validate`: the default model against CSVs of measured runs (or those that ship
//! with madmax): each row predicted, the errors summarised per set and per source, the floor
//! no model can beat, and the spread per kind of plan.

use crate::args::ValidateArgs;
use crate::io::{out_json, read_bounded};
use madmax::input::printable;
use madmax::units;
use std::process::ExitCode;

/// A line of `madmax validate`'s report, added to `$text`.
macro_rules! wln {
    ($text:ident, $($t:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($text, $($t)*);
    }};
}

/// `madmax validate`: the default model against measured runs.
pub fn run(a: &ValidateArgs) -> ExitCode {
    let (files, json_out) = (&a.files, a.json);
    // Rows keep only what is printed: a long file is never held as cells or scenarios. Each
    // row's work (for the floor's groups) is taken, and its scenario, notes and citation
    // dropped, as it comes (on the thread that predicted it, for a file).
    let lean = |r: madmax::accuracy::RowResult| {
        let work = madmax::accuracy::Work::of(&r);
        (work, madmax::accuracy::RowResult { scenario: None, notes: String::new(), citation: String::new(), ..r })
    };
    let mut rows = Vec::new();
    let mut same_work = madmax::accuracy::SameWork::default();
    let mut keep = |(work, r)| {
        same_work.add_work(rows.len(), work);
        rows.push(r);
    };
    if files.is_empty() {
        // The runs that ship with madmax, each in its set.
        madmax::accuracy::shipped().into_iter().map(lean).for_each(&mut keep);
    }
    for file in files {
        let text = match read_bounded(file, madmax::input::MAX_CSV_BYTES) {
            Ok(t) => t,
            Err(e) => {
                errln!("madmax: {}: {e}", printable(file));
                return ExitCode::from(2);
            }
        };
        let read = madmax::accuracy::for_each_row(&text, lean, &mut keep);
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
    // The shipped runs come with the GEMMs profiled one by one, a check of the model's GEMM
    // times (SOURCES.md section 9).
    let kernels = files.is_empty().then(|| madmax::accuracy::gemm_check(madmax::accuracy::GEMM_KERNELS_CSV));
    if json_out {
        let mut v = madmax::accuracy::to_json(&rows, floor.as_ref());
        if let (Some(Ok(k)), Some(m)) = (&kernels, v.as_object_mut()) {
            m.insert("kernels".into(), serde_json::json!(k));
        }
        out_json(&v);
        return ExitCode::SUCCESS;
    }
    // The report is written once at the end: written line by line, each of a long file's
    // 100,000 lines would be a write of its own.
    let mut text = String::new();
    wln!(text, "{:<34} {:>14} {:>12} {:>12} {:>8}  memory/GPU", "row", "metric", "predicted", "measured", "error");
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
                let stated = match (r.measured_memory_bytes, r.memory_shown_bytes, r.memory_error) {
                    (Some(m), Some(shown), Some(e)) => format!(
                        " (as nvidia-smi shows it: {} predicted, {} stated, {:+.0}%)",
                        units::bytes(shown),
                        units::bytes(m),
                        e * 100.0
                    ),
                    _ => String::new(),
                };
                wln!(
                    text,
                    "{:<34} {:>14} {:>12.4} {:>12.4} {:>+7.1}%  {mem}{stated}",
                    r.id,
                    r.metric.map_or("", madmax::accuracy::Metric::cell),
                    p,
                    r.measured,
                    e * 100.0
                )
            }
            _ => wln!(text, "{:<34} skipped: {}", r.id, r.skipped.as_deref().unwrap_or("")),
        }
    }
    let mut defaults: Vec<&str> = rows.iter().flat_map(|r| r.defaults.iter().map(String::as_str)).collect();
    madmax::engine::order::sort(&mut defaults);
    defaults.dedup();
    if !defaults.is_empty() {
        wln!(text, "\nDefaults for blank cells:");
        for d in defaults {
            let n = rows.iter().filter(|r| r.defaults.iter().any(|x| x == d)).count();
            wln!(text, "  {d} ({n} rows)");
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
            lines
                .extend(s.by_kind.iter().map(|(kind, set, st)| (format!("{}, {} set", kind.label(), set.label()), st)));
            lines.extend(s.by_source.iter().map(|(src, st)| match set_of(src) {
                Some(set) => (format!("{src} [{}]", set.label()), st),
                None => (src.clone(), st),
            }));
            // Names are aligned on the longest.
            let width = lines.iter().map(|(n, _)| n.chars().count()).max().unwrap_or(0).max(28);
            wln!(text, "\nAbsolute error of the default model:");
            for (name, st) in lines {
                wln!(
                    text,
                    "  {name:<width$} {:>4} rows  median {:>5.1}%  mean {:>5.1}%  max {:>5.1}% ({})",
                    st.rows,
                    st.median_abs_error * 100.0,
                    st.mean_abs_error * 100.0,
                    st.max_abs_error * 100.0,
                    st.worst
                );
            }
            if s.skipped > 0 {
                wln!(text, "  {} rows skipped", s.skipped);
            }
            if let Some(m) = &s.memory {
                wln!(
                    text,
                    "\nMemory per GPU as nvidia-smi shows it (the allocator's reserve) against what sources state ({} rows): median {:.1}%, mean {:.1}%, max {:.1}% ({})",
                    m.rows,
                    m.median_abs_error * 100.0,
                    m.mean_abs_error * 100.0,
                    m.max_abs_error * 100.0,
                    m.worst
                );
            }
        }
        None => wln!(text, "\nno row could be predicted"),
    }
    match kernels {
        Some(Ok(checks)) => {
            wln!(
                text,
                "\nGEMM times against {} GEMMs of transformer layers profiled one by one (vidur; error = measured / predicted - 1):",
                madmax::engine::extended::rules::grouped(checks.iter().map(|c| c.kernels as u64).sum())
            );
            for c in &checks {
                wln!(text, "  {}", madmax::accuracy::gemm_check_sentence(c));
            }
        }
        Some(Err(e)) => wln!(text, "\nGEMM check: {e}"),
        None => {}
    }
    if let Some(f) = &floor {
        wln!(text, "\nFloor: {}", printable(&madmax::accuracy::floor_sentence(f)));
        wln!(text, "  (the worst of {} pairs of rows that do the same work in more or fewer micro-batches)", f.pairs);
    }
    if let Some(bands) = madmax::accuracy::bands_in(&rows) {
        wln!(
            text,
            "\nMeasured / predicted time by kind of plan (training: an iteration; static serving, kernels launched one by one: the batch end to end; {} runs or more; 10th, 50th, 90th percentile):",
            madmax::accuracy::MIN_RUNS
        );
        for b in bands {
            wln!(
                text,
                "  {:<28} {:<5} {:>4} runs  {:.2}  {:.2}  {:.2}",
                b.plan_label(),
                b.gpu,
                b.runs,
                b.low,
                b.median,
                b.high
            );
        }
    }
    crate::io::out(&text);
    ExitCode::SUCCESS
}
