//! Scenarios shipped with madmax (facts, not code): MAD-Max configs as the reference ships them.
//!
//! Source: the MAD-Max reference configs (facebookresearch/ScaleExplorer, `madmax/model_cfgs`,
//! `system_cfgs`, `task_cfgs`), as inlined in the golden cases.

use crate::engine::RawScenario;

/// LLaMA2-70B pre-training on DC_A-2048 (256 nodes of 8 A100-40GB, FSDP over 2048 GPUs):
/// the page opens on it.
pub const DEFAULT_SCENARIO_JSON: &str = include_str!("llama2_70b__dc_A_2048__llm_train.json");

/// The default scenario's raw configs.
pub fn default_scenario() -> Result<RawScenario, String> {
    serde_json::from_str(DEFAULT_SCENARIO_JSON).map_err(|e| format!("default scenario: {e}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_default_scenario_validates() {
        let raw = super::default_scenario().expect("shipped preset parses");
        assert!(crate::engine::validate(&raw).is_ok());
    }
}
