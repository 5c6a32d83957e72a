//! The engine: the MAD-Max performance model, pure and deterministic.
//!
//! One front door: [`validate()`] turns raw configs into a [`Scenario`] (or field errors), then
//! [`evaluate`] turns a scenario into a [`Report`]. The engine uses std and serde only: it knows
//! nothing of the DOM, the file system, clocks or randomness, and never iterates a HashMap into
//! its output.
//!
//! Units everywhere: seconds, bytes, FLOPs (counts), FLOP/s, bytes/s.

pub mod explore;
pub mod extended;
pub mod num;
pub mod ops;
pub mod raw;
pub mod reference;
pub mod report;
pub mod scenario;
pub mod schedule;
pub mod validate;

pub use raw::{RawFile, RawModel, RawScenario, RawSystem, RawTask, RawValue};
pub use report::Report;
pub use scenario::Scenario;
pub use validate::{validate, FieldError};

pub use reference::explain::{Explanation, Term, Unit};

/// Explains an op of `s`'s timeline: the formula behind its duration, with every term's value.
pub fn explain(s: &Scenario, op: &ops::OpName) -> Option<Explanation> {
    if uses_default_model(s) {
        extended::explain::explain(s, op)
    } else {
        reference::explain::explain(s, op)
    }
}

/// True when the scenario asks for the default model and the default model covers its family
/// (transformers; the DLRM families are still evaluated with MAD-Max's formulas).
pub fn uses_default_model(s: &Scenario) -> bool {
    s.task.mode == scenario::Mode::Default && extended::covers(s)
}

/// Evaluates a validated scenario: with the default model when the scenario asks for it and
/// the default model covers its family, else with the MAD-Max reference model.
pub fn evaluate(s: &Scenario) -> Report {
    if uses_default_model(s) {
        if let Some(r) = extended::evaluate(s) {
            return r;
        }
    }
    evaluate_reference(s)
}

/// About how many ops [`evaluate`] puts on the timeline of `s`, known before it runs: an
/// evaluation's time and memory grow with it (some 20 ns and 100 bytes per op natively). At
/// least the real count plus some (a test checks every golden case and preset in both models).
/// The default model's transformers: [`extended::rules::timeline_ops`]; otherwise the ops are a
/// few per layer.
pub fn estimated_ops(s: &Scenario) -> u64 {
    use scenario::Arch;
    if uses_default_model(s) && !s.model.arch.family().is_dlrm() {
        return extended::rules::timeline_ops(s).max(64);
    }
    let layers = match &s.model.arch {
        Arch::Dlrm(d) | Arch::DlrmMoe(d, _) => d.bot_mlp_layers + d.top_mlp_layers,
        Arch::DlrmTransformer(d, t) => d.bot_mlp_layers + d.top_mlp_layers + t.layers,
        Arch::Llm(l) | Arch::LlmMoe(l, _) => l.transformer.layers,
        Arch::Vit(v) => v.layers,
    };
    layers.saturating_mul(16).saturating_add(64)
}

/// Evaluates a validated scenario with the MAD-Max reference model (reference mode).
pub fn evaluate_reference(s: &Scenario) -> Report {
    let b = reference::build(s);
    Report::assemble(b.ops, b.schedule, b.global_batch, b.memory, b.work, b.model, b.system)
}
