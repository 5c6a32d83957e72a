//! madmax: a performance calculator for large machine-learning models on GPU clusters.
//!
//! - [`engine`]: the model (MAD-Max reference mode), pure: `validate(raw) -> Scenario`, then
//!   `evaluate(&Scenario) -> Report`.
//! - [`presets`]: scenarios shipped with the tool (facts, with sources).
//! - [`units`]: how numbers are shown to people (SI prefixes, units).
//! - `ui` (wasm only): the web page, a thin face over the engine.
//!
//! The CLI (`src/bin/madmax.rs`) is the other face. Dependencies point one way: faces ->
//! presets, units -> engine.

pub mod engine;
pub mod presets;
pub mod units;

#[cfg(target_arch = "wasm32")]
pub mod ui;
