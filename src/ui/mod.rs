//! The web page. State, actions, the field table and plan fitting are plain Rust (tested
//! natively); the Yew components and charts are compiled for wasm32 only. A thin face: it
//! formats and draws what the engine reports and computes nothing of its own.

pub mod explorer;
pub mod export;
pub mod fields;
pub mod lessons;
pub mod offload;
pub mod pick;
pub mod plan;
pub mod state;
pub mod sweep;
pub mod timeline;

#[cfg(target_arch = "wasm32")]
mod app;
#[cfg(target_arch = "wasm32")]
mod background;
#[cfg(target_arch = "wasm32")]
mod canvas;
#[cfg(target_arch = "wasm32")]
mod chart_backend;
#[cfg(target_arch = "wasm32")]
mod chart_views;
#[cfg(target_arch = "wasm32")]
mod charts;
#[cfg(target_arch = "wasm32")]
mod dom;
#[cfg(target_arch = "wasm32")]
mod explorer_view;
#[cfg(target_arch = "wasm32")]
mod fetched;
#[cfg(target_arch = "wasm32")]
mod handover;
#[cfg(target_arch = "wasm32")]
mod inputs;
#[cfg(target_arch = "wasm32")]
mod learn_view;
#[cfg(target_arch = "wasm32")]
mod paper_view;
#[cfg(target_arch = "wasm32")]
mod picker;
#[cfg(target_arch = "wasm32")]
mod pool;
#[cfg(target_arch = "wasm32")]
mod results;
#[cfg(target_arch = "wasm32")]
mod stories_view;
#[cfg(target_arch = "wasm32")]
mod validation_view;
#[cfg(target_arch = "wasm32")]
pub use app::{start_page, start_views};
