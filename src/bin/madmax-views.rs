//! The page's views module (wasm32, built by Trunk): the app with every view, fetched by the
//! page when a view other than the calculator first opens (src/ui/handover.rs). On a native
//! target it only explains.

#[cfg(target_arch = "wasm32")]
fn main() {
    madmax::ui::start_views();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("madmax-views is part of the browser build: run `make serve` (Trunk builds it for wasm32).");
}
