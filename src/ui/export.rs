//! What the page exports, as text: the results and the op timeline as CSV, the headline
//! figures derived from a report (throughput in tokens, model FLOPs utilisation). Plain Rust.

use crate::engine::ops::{Category, Stream};
use crate::engine::report::Report;
use crate::engine::scenario::{Arch, Scenario, TaskKind};
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
    if let Some(t) = tokens_per_s(s, r) {
        row("throughput", t, "tokens/s");
    }
    row("global batch", r.global_batch as f64, "samples");
    row("model FLOPs utilisation", mfu(s, r), "fraction");
    for (c, b) in &r.memory.parts {
        row(&format!("{} weights per GPU", c.label()), *b, "bytes");
    }
    row("memory per GPU", r.memory.total_bytes, "bytes");
    row("HBM capacity per GPU", r.memory.capacity_bytes, "bytes");
    o
}

/// The op timeline as CSV: `stream,op,start_s,duration_s,end_s,category`.
pub fn timeline_csv(r: &Report) -> String {
    let mut o = String::from("stream,op,start_s,duration_s,end_s,category\n");
    for op in &r.timeline {
        let stream = match op.name.stream() {
            Stream::Computation => "computation",
            Stream::Communication => "communication",
        };
        let _ = writeln!(
            o,
            "{stream},{},{},{},{},{}",
            op.name,
            op.start_s,
            op.duration_s,
            op.end_s(),
            op.name.category().label()
        );
    }
    o
}

/// Tokens per second for language models (samples x sequence length); None otherwise.
pub fn tokens_per_s(s: &Scenario, r: &Report) -> Option<f64> {
    match &s.model.arch {
        Arch::Llm(l) | Arch::LlmMoe(l, _) => Some(r.throughput_samples_per_s * l.transformer.seq_len as f64),
        _ => None,
    }
}

/// Peak FLOP/s per GPU for the model's precision, before MAD-Max's utilisation factor.
pub fn peak_flops_per_s(s: &Scenario) -> f64 {
    let sys = &s.system;
    match s.model.bytes_per_dense_param.f64() as i64 {
        8 => sys.f64_flops_per_s,
        4 => sys.f32_flops_per_s,
        1 => sys.i8_ops_per_s,
        _ => sys.f16_flops_per_s,
    }
}

/// Model FLOPs utilisation: the model's FLOPs per iteration (forward per sample x global batch,
/// x3 when training: the backward pass costs twice the forward) over what the GPUs could do at
/// peak in the iteration time. MAD-Max's FLOP count omits attention's s^2 terms.
pub fn mfu(s: &Scenario, r: &Report) -> f64 {
    // The default model counts model FLOPs itself (fine-tuning's skipped gradients included).
    if let Some(u) = &r.utilization {
        return u.mfu;
    }
    let passes = if matches!(s.task.kind, TaskKind::Inference) { 1.0 } else { 3.0 };
    let model_flops = r.model.flops_per_sample * r.global_batch as f64 * passes;
    let capacity = r.iteration_s * peak_flops_per_s(s) * s.system.num_devices as f64;
    if capacity > 0.0 {
        model_flops / capacity
    } else {
        0.0
    }
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
        let t = timeline_csv(&g.report);
        assert_eq!(t.lines().count(), g.report.timeline.len() + 1);
        // The default model names each micro-batch's ops.
        assert!(t.contains("computation,Attn0_f. mb1,"), "{}", &t[..t.len().min(600)]);
    }

    #[test]
    fn mfu_is_a_fraction_and_tokens_scale_with_sequence_length() {
        let s = State::initial();
        let g = s.good.as_ref().expect("good");
        let m = mfu(&g.scenario, &g.report);
        assert!(m > 0.0 && m < 1.0, "{m}");
        let t = tokens_per_s(&g.scenario, &g.report).expect("an LLM");
        assert_eq!(t, g.report.throughput_samples_per_s * 4096.0);
    }
}
