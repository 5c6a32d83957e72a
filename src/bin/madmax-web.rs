//! The web page's entry point (wasm32, built by Trunk): the page's own module, the calculator;
//! the other views come with `madmax-views` (src/ui/handover.rs). On a native target it only
//! explains.

#[cfg(target_arch = "wasm32")]
fn main() {
    madmax::ui::start_page();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("madmax-web is the browser build: run `make serve` (Trunk builds it for wasm32).");
}
