//! madmax: a performance calculator for large machine-learning models on GPU clusters.
//!
//! - [`engine`]: the model (MAD-Max reference mode), pure: `validate(raw) -> Scenario`, then
//!   `evaluate(&Scenario) -> Report`.
//! - [`presets`]: scenarios shipped with the tool (facts, with sources).
//! - [`doc`]: the editable scenario document (three MAD-Max configs); [`share`]: its versioned
//!   URL codec.
//! - [`accuracy`]: the default model against published measured runs (`madmax validate`, the
//!   validation page); not to be confused with [`engine::validate()`], which checks input.
//! - [`units`]: how numbers are shown to people (SI prefixes, units).
//! - [`input`]: text from outside (files, links, pasted JSON, CSVs) read within bounds.
//! - [`ui`]: the web page (state natively testable; Yew components on wasm32 only).
//!
//! The CLI (`src/bin/madmax/`) is the other face. Dependencies point one way: faces ->
//! presets, units -> engine.

pub mod accuracy;
pub mod doc;
pub mod engine;
pub mod figures;
pub mod input;
pub mod paper;
pub mod presets;
pub mod share;
pub mod stories;
pub mod ui;
pub mod units;
pub mod wording;
