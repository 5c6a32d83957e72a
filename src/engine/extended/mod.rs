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
pub mod timeline;
pub mod training;

use super::report::Memory;
use super::scenario::Scenario;

/// Memory per GPU as `nvidia-smi` would show it for a job of the default model, bytes: the
/// workspaces ([`calibration::WORKSPACE_BYTES`]) plus what PyTorch's caching allocator
/// reserves for the rest, the peak of live tensors over `1 -`
/// [`calibration::ALLOCATOR_FRAGMENTATION`]; never more than the GPU's HBM (the allocator frees
/// its cached blocks and retries before it runs out), nor less than the peak itself. The fit
/// against HBM is judged on the peak ([`Memory::fits`]).
pub fn shown_memory_bytes(m: &Memory) -> f64 {
    let tensors = (m.total_bytes - calibration::WORKSPACE_BYTES).max(0.0);
    let reserved =
        m.total_bytes.min(calibration::WORKSPACE_BYTES) + tensors / (1.0 - calibration::ALLOCATOR_FRAGMENTATION);
    reserved.min(m.capacity_bytes).max(m.total_bytes)
}

/// True when the default model (not the reference's formulas) evaluates this scenario's family.
pub fn covers(s: &Scenario) -> bool {
    let family = s.model.arch.family();
    if family.is_dlrm() || family == super::scenario::Family::Cnn {
        s.task.plan.mlp.is_some()
    } else {
        shape::Dims::of(&s.model).is_some() && s.task.plan.transformer.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::calibration::{ALLOCATOR_FRAGMENTATION, WORKSPACE_BYTES};
    use super::*;
    use crate::engine::report::MemPart;

    #[test]
    fn nvidia_smi_shows_the_allocators_reserve_up_to_the_gpus_memory() {
        let memory = |tensors: f64, capacity: f64| {
            Memory::of_parts(vec![(MemPart::Weights, tensors), (MemPart::Buffers, WORKSPACE_BYTES)], capacity)
        };
        // 42.5 GB of tensors in a reserve that leaves 15% unused: 50 GB, plus 2 GB of workspaces.
        assert_eq!(ALLOCATOR_FRAGMENTATION, 0.15);
        let m = memory(42.5e9, 80e9);
        assert!((shown_memory_bytes(&m) - 52e9).abs() < 1.0, "{}", shown_memory_bytes(&m));
        // Never past the GPU's memory: the allocator frees its cache before it runs out.
        let tight = memory(76e9, 80e9);
        assert!(tight.fits() && shown_memory_bytes(&tight) == 80e9);
        // A plan that does not fit shows its own peak.
        let over = memory(90e9, 80e9);
        assert_eq!(shown_memory_bytes(&over), 92e9);
        // Less than the workspaces: nothing for the allocator to fragment.
        let tiny = Memory::of_parts(vec![(MemPart::Buffers, 1e9)], 80e9);
        assert_eq!(shown_memory_bytes(&tiny), 1e9);
    }
}
