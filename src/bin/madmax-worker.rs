//! The explorer's Web Worker (wasm32, built by Trunk as a worker): evaluates the plans the page
//! hands it ([`madmax::ui::offload`]). On a native target it only explains.

#[cfg(target_arch = "wasm32")]
fn main() {
    madmax::ui::offload::serve();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("madmax-worker is the browser build's explorer worker: run `make serve` (Trunk builds it for wasm32).");
}
