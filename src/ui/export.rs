//! What the page exports, as text: the results and the op timeline as CSV, the headline
//! figures derived from a report (throughput in tokens, model FLOPs utilisation). Plain Rust.

use crate::engine::critical::CriticalPath;
use crate::engine::ops::{Category, Stream};
use crate::engine::report::Report;
use crate::engine::scenario::Scenario;
use std::fmt::Write;

/// Results as CSV: one `quantity,value,unit` row per figure.
pub fn results_csv(s: &Scenario, r: &Report) -> String {
    let mut o = String::from("quantity,value,unit\n");
    let mut row = |q: &str, v: f64, u: &str| {
        let _ = writeln!(o, "{q},{v},{u}");
    };
    for c in Category::ALL {
        row(&format!("{} time", c.label()), r.totals.get(c), "s");
    }
    row("compute time", r.compute_s, "s");
    row("communication time", r.comm_s, "s");
    row("exposed communication", r.exposed_comm_s, "s");
    row("overlapped communication", r.overlapped_comm_s, "s");
    row("iteration time", r.iteration_s, "s");
    row("throughput", r.throughput_samples_per_s, "samples/s");
    if let Some(t) = r.tokens_per_s(s) {
        row("throughput", t, "tokens/s");
    }
    row("global batch", r.global_batch as f64, "samples");
    row("model FLOPs utilisation", r.mfu(s), "fraction");
    for (c, b) in &r.memory.parts {
        row(&format!("{} weights per GPU", c.label()), *b, "bytes");
    }
    row("memory per GPU", r.memory.total_bytes, "bytes");
    row("HBM capacity per GPU", r.memory.capacity_bytes, "bytes");
    o
}

/// The op timeline as CSV: `stream,op,start_s,duration_s,end_s,category,slack_s` (slack: how
/// much later the op could end without delaying the end; 0 on the critical path).
pub fn timeline_csv(r: &Report, critical: &CriticalPath) -> String {
    let mut o = String::from("stream,op,start_s,duration_s,end_s,category,slack_s\n");
    for (op, slack) in r.timeline.iter().zip(&critical.slack_s) {
        let stream = match op.name.stream() {
            Stream::Computation => "computation",
            Stream::Communication => "communication",
            Stream::DataParallel => "data-parallel",
        };
        let _ = writeln!(
            o,
            "{stream},{},{},{},{},{},{slack}",
            op.name,
            op.start_s,
            op.duration_s,
            op.end_s(),
            op.name.category().label()
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::state::State;

    #[test]
    fn csv_exports_carry_every_figure_and_op() {
        let s = State::initial();
        let g = s.good.as_ref().expect("good");
        let csv = results_csv(&g.scenario, &g.report);
        assert!(csv.starts_with("quantity,value,unit\n"));
        assert!(csv.contains(&format!("iteration time,{},s", g.report.iteration_s)));
        assert!(csv.contains("tokens/s"));
        let t = timeline_csv(&g.report, g.critical());
        assert_eq!(t.lines().count(), g.report.timeline.len() + 1);
        // Each op's slack closes its line: none on the critical path, some off it.
        let none = t.lines().skip(1).filter(|l| l.ends_with(",0")).count();
        assert!(none >= g.critical().ops.len() && none < g.report.timeline.len(), "{none}");
        // The default model names each micro-batch's ops.
        assert!(t.contains("computation,Attn0_f. mb1,"), "{}", &t[..t.len().min(600)]);
    }

    #[test]
    fn mfu_is_a_fraction_and_tokens_scale_with_sequence_length() {
        let s = State::initial();
        let g = s.good.as_ref().expect("good");
        let m = g.report.mfu(&g.scenario);
        assert!(m > 0.0 && m < 1.0, "{m}");
        let t = g.report.tokens_per_s(&g.scenario).expect("an LLM");
        assert_eq!(t, g.report.throughput_samples_per_s * 4096.0);
    }
}
