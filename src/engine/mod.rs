//! The engine: the MAD-Max performance model, pure and deterministic.
//!
//! One front door: [`validate()`] turns raw configs into a [`Scenario`] (or field errors), then
//! [`evaluate`] turns a scenario into a [`Report`]. The engine uses std and serde only: it knows
//! nothing of the DOM, the file system, clocks or randomness, and never iterates a HashMap into
//! its output.
//!
//! Units everywhere: seconds, bytes, FLOPs (counts), FLOP/s, bytes/s.

pub mod critical;
pub mod explore;
pub mod extended;
pub mod num;
pub mod ops;
pub mod order;
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

/// Which model evaluates a valid scenario, with the context it evaluates it in. Built once
/// from the scenario ([`Evaluator::of`]); [`evaluate`], [`explain`] and
/// [`uses_default_model`] all match on it, so they cannot disagree.
pub enum Evaluator<'a> {
    /// MAD-Max paper mode (the reference model, quirks included), or a scenario the default
    /// model does not cover.
    Reference,
    /// The default model's recommendation families (DLRM, DLRM_MoE, DLRM_Transformer).
    Dlrm(extended::dlrm::DlrmCx<'a>),
    /// The default model's LLM serving (inference of LLM and LLM_MoE).
    Serving(extended::serving::ServingCx<'a>),
    /// The default model's transformer training (and ViT inference).
    Training(extended::training::TrainingCx<'a>),
    /// The default model's convolutional networks.
    Cnn(extended::cnn::CnnCx<'a>),
}

impl<'a> Evaluator<'a> {
    /// The evaluator of `s`: the default model when the scenario asks for it and the default
    /// model covers it, else the reference.
    pub fn of(s: &'a Scenario) -> Evaluator<'a> {
        if s.task.mode != scenario::Mode::Default || !extended::covers(s) {
            return Evaluator::Reference;
        }
        let built = if let scenario::Arch::Cnn(c) = &s.model.arch {
            extended::cnn::CnnCx::new(s, c).map(Evaluator::Cnn)
        } else if s.model.arch.family().is_dlrm() {
            extended::dlrm::DlrmCx::new(s).map(Evaluator::Dlrm)
        } else if extended::serving::serves(s) {
            extended::serving::ServingCx::new(s).map(Evaluator::Serving)
        } else {
            extended::training::TrainingCx::new(s).map(Evaluator::Training)
        };
        built.unwrap_or(Evaluator::Reference)
    }

    /// Evaluates `s`, which this evaluator was built from.
    pub fn evaluate(&self, s: &Scenario) -> Report {
        match self {
            Evaluator::Reference => evaluate_reference(s),
            Evaluator::Dlrm(cx) => extended::dlrm::evaluate(cx),
            Evaluator::Serving(sv) => extended::serving::evaluate(sv),
            Evaluator::Training(cx) => extended::iteration::evaluate(cx),
            Evaluator::Cnn(cx) => extended::cnn::evaluate(cx),
        }
    }

    /// Explains an op of `s`'s timeline (`s` as for [`Evaluator::evaluate`]).
    pub fn explain(&self, s: &Scenario, op: &ops::OpName) -> Option<Explanation> {
        match self {
            Evaluator::Reference => reference::explain::explain(s, op),
            Evaluator::Dlrm(cx) => extended::dlrm::explain(cx, op).map(|e| self.with_launch_wait(s, op, e)),
            Evaluator::Serving(sv) => extended::serving::explain(sv, op),
            Evaluator::Training(cx) => extended::explain::explain(cx, op).map(|e| self.with_launch_wait(s, op, e)),
            Evaluator::Cnn(cx) => extended::cnn::explain(cx, op).map(|e| self.with_launch_wait(s, op, e)),
        }
    }

    /// A collective launched by a host thread ([`scenario::Setup::collective_cycle_s`]) lasts
    /// its formula's time plus its wait for that thread; the explanation adds the wait as
    /// [`LAUNCH_WAIT`].
    fn with_launch_wait(&self, s: &Scenario, op: &ops::OpName, mut e: Explanation) -> Explanation {
        if s.task.setup.collective_cycle_s <= 0.0 || !op.stream().communicates() {
            return e;
        }
        let r = self.evaluate(s);
        let Some(k) = r.timeline.iter().position(|o| o.name == *op) else {
            return e;
        };
        let wait_s = r.launch_wait_s(k);
        if wait_s > 0.0 {
            e.formula = format!("{}, plus {LAUNCH_WAIT}", e.formula).into();
            e.terms.push(Term {
                symbol: LAUNCH_WAIT,
                meaning: "wait for the host thread that launches collectives: half its cycle (task.collective_cycle_ms) after the inputs are ready, less any time spent queued behind another collective",
                value: wait_s,
                unit: Unit::Seconds,
            });
            e.seconds += wait_s;
        }
        e
    }
}

/// The symbol of a collective's wait for the host thread that launches it, in its explanation.
pub const LAUNCH_WAIT: &str = "w_launch";

/// Explains an op of `s`'s timeline: the formula behind its duration, with every term's value
/// (on a cluster of two GPU types, in the terms of the type that paces it).
pub fn explain(s: &Scenario, op: &ops::OpName) -> Option<Explanation> {
    match extended::mixed::paced(s, |k| Evaluator::of(k).evaluate(k)) {
        Some((paced, _)) => Evaluator::of(&paced).explain(&paced, op),
        None => Evaluator::of(s).explain(s, op),
    }
}

/// True when the default model evaluates the scenario ([`Evaluator::of`]): it asks for the
/// default model, which covers every family (transformers, their serving, and the
/// recommendation models) when the plan gives it what it needs.
pub fn uses_default_model(s: &Scenario) -> bool {
    !matches!(Evaluator::of(s), Evaluator::Reference)
}

/// Evaluates a validated scenario with its [`Evaluator`] (a cluster of two GPU types at its
/// slower type's pace: [`extended::mixed`]).
pub fn evaluate(s: &Scenario) -> Report {
    match extended::mixed::paced(s, |k| Evaluator::of(k).evaluate(k)) {
        Some((_, r)) => r,
        None => Evaluator::of(s).evaluate(s),
    }
}

/// About how many ops [`evaluate`] puts on the timeline of `s`, known before it runs: an
/// evaluation's time and memory grow with it (some 20 ns and 100 bytes per op natively). At
/// least the real count plus some (a test checks every golden case and preset in both models).
/// The default model's transformers: [`extended::rules::timeline_ops`]; otherwise the ops are a
/// few per layer.
pub fn estimated_ops(s: &Scenario) -> u64 {
    use scenario::Arch;
    if let Evaluator::Cnn(cx) = Evaluator::of(s) {
        return (cx.blocks() as u64).saturating_mul(8).saturating_add(64);
    }
    if uses_default_model(s) && !s.model.arch.family().is_dlrm() {
        return extended::rules::timeline_ops(s).max(64);
    }
    let layers = match &s.model.arch {
        Arch::Dlrm(d) | Arch::DlrmMoe(d, _) => d.bot_mlp_layers + d.top_mlp_layers,
        Arch::DlrmTransformer(d, t) => d.bot_mlp_layers + d.top_mlp_layers + t.layers,
        Arch::Llm(l) | Arch::LlmMoe(l, _) => l.transformer.layers,
        Arch::Vit(v) => v.layers,
        Arch::Cnn(_) => 0,
        Arch::EncDec(x) => x.encoder_layers + x.decoder_layers,
    };
    layers.saturating_mul(16).saturating_add(64)
}

/// Evaluates a validated scenario with the MAD-Max reference model (reference mode).
pub fn evaluate_reference(s: &Scenario) -> Report {
    Report::assemble(reference::build(s), scenario::Mode::Reference)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A golden case's scenario in `mode`.
    fn case(text: &str, mode: &str) -> Scenario {
        let mut v: serde_json::Value = serde_json::from_str(text).expect("case");
        v["inputs"]["task"]["mode"] = mode.into();
        let raw = serde_json::from_value::<RawFile>(v).expect("case").into_scenario().expect("case");
        validate(&raw).unwrap_or_else(|e| panic!("{e:?}"))
    }

    #[test]
    fn one_evaluator_decides_which_model_runs_and_everything_follows_it() {
        let train = include_str!("../../tests/data/reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json");
        let serve = include_str!("../../tests/data/reference/cases/llm__llama_7b__zionex_8__llm_inf_tp_8x8_bs1.json");
        let dlrm = include_str!("../../tests/data/reference/cases/dlrm__dlrm_a__zionex_128__dlrm_train.json");
        let kind = |e: &Evaluator| match e {
            Evaluator::Reference => "reference",
            Evaluator::Dlrm(_) => "dlrm",
            Evaluator::Serving(_) => "serving",
            Evaluator::Training(_) => "training",
            Evaluator::Cnn(_) => "cnn",
        };
        for (text, mode, want) in [
            (train, "reference", "reference"),
            (train, "default", "training"),
            (serve, "default", "serving"),
            (serve, "reference", "reference"),
            (dlrm, "default", "dlrm"),
        ] {
            let s = case(text, mode);
            let e = Evaluator::of(&s);
            assert_eq!(kind(&e), want, "{mode}");
            // The report, the explanations and the faces' question all follow it.
            let r = evaluate(&s);
            let default = want != "reference";
            assert_eq!(r.mode == scenario::Mode::Default, default, "{want}");
            assert_eq!(uses_default_model(&s), default, "{want}");
            assert_eq!(r.serving.is_some(), want == "serving");
            let op = &r.timeline[0].name;
            assert_eq!(explain(&s, op).map(|x| x.seconds), e.explain(&s, op).map(|x| x.seconds));
        }
    }
}
