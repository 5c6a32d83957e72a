//! The default model: MAD-Max's two-stream model with its quirks fixed and extended to the way
//! large transformers are trained today: N-D parallelism (tensor with or without sequence
//! parallelism, pipeline with 1F1B or interleaved schedules, data with ZeRO 1-3 or FSDP,
//! context, expert), activation memory with recomputation, alpha-beta collectives over the
//! network hierarchy, the optimizer step and an input-pipeline bound.
//!
//! It shares the scheduler ([`crate::engine::schedule`]), the op names
//! ([`crate::engine::ops`]) and the report with reference mode. Transformer families (LLM,
//! LLM_MoE, ViT) are modelled in [`iteration`], the recommendation families (DLRM, DLRM_MoE,
//! DLRM_Transformer) in [`dlrm`], convolutional networks (CNN) in [`cnn`].
//!
//! Module map: [`shape`] (parameters, FLOPs, bytes per token), [`gemm`] (a GEMM's time from its shape), [`layout`] (where groups sit on
//! nodes), [`collective`] (alpha-beta costs), [`iteration`] (the timeline and the figures),
//! [`rules`] (what a default-model plan must satisfy), [`explain`] (why an op takes its time),
//! [`calibration`] (every constant, with its source).

pub mod calibration;
pub mod cnn;
pub mod collective;
pub mod dlrm;
pub mod explain;
pub mod gemm;
pub mod iteration;
pub mod layout;
pub mod loader;
pub mod mixed;
pub mod rules;
pub mod serving;
pub mod shape;
pub mod training;

use super::scenario::Scenario;

/// True when the default model (not the reference's formulas) evaluates this scenario's family.
pub fn covers(s: &Scenario) -> bool {
    let family = s.model.arch.family();
    if family.is_dlrm() || family == super::scenario::Family::Cnn {
        s.task.plan.mlp.is_some()
    } else {
        shape::Dims::of(&s.model).is_some() && s.task.plan.transformer.is_some()
    }
}
