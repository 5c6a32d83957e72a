//! The web page (wasm32 only): a thin Yew face over the engine.
//!
//! This first page evaluates the default preset (LLaMA2-70B pre-training on DC_A-2048) in the
//! browser and shows its headline figures; the full calculator builds on it. The page never
//! panics on data: errors are shown as text. A panic hook still replaces the page with a
//! readable notice, since a panic in wasm would otherwise leave a dead page.

use crate::engine::report::Report;
use crate::engine::{evaluate, validate, Scenario};
use crate::{presets, units};
use yew::prelude::*;

/// Mounts the app on the page's body.
pub fn start() {
    std::panic::set_hook(Box::new(|info| show_crash(&info.to_string())));
    yew::Renderer::<App>::new().render();
}

/// Writes a crash notice into the page (best effort: every DOM step may fail quietly).
fn show_crash(detail: &str) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else { return };
    let Some(body) = doc.body() else { return };
    if let Ok(el) = doc.create_element("div") {
        el.set_class_name("crash");
        el.set_text_content(Some(&format!(
            "Something went wrong inside madmax and the page stopped. Reload to start again. ({detail})"
        )));
        let _ = body.append_child(&el);
    }
}

/// Evaluates the default preset.
fn default_result() -> Result<(Scenario, Report), String> {
    let raw = presets::default_scenario()?;
    let scenario =
        validate(&raw).map_err(|errors| errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; "))?;
    let report = evaluate(&scenario);
    Ok((scenario, report))
}

#[function_component(App)]
fn app() -> Html {
    let result = use_memo((), |_| default_result());
    let body = match &*result {
        Ok((s, r)) => headline(s, r),
        Err(e) => html! { <p class="error" role="alert">{ format!("The preset could not be evaluated: {e}") }</p> },
    };
    html! {
        <main>
            <header>
                <h1>{ "madmax" }</h1>
                <p class="tagline">{ "How long one training or inference step of a large model takes on a GPU cluster, and how much of it is communication no computation hides (the MAD-Max model, ISCA 2024)." }</p>
            </header>
            { body }
        </main>
    }
}

fn headline(s: &Scenario, r: &Report) -> Html {
    let figure = |id: &'static str, label: &'static str, value: String, raw: f64, help: &'static str| {
        html! {
            <div class="figure">
                <dt>{ label }</dt>
                <dd id={id} data-value={raw.to_string()} title={help}>{ value }</dd>
            </div>
        }
    };
    html! {
        <section class="results" aria-label="Results">
            <p class="scenario">
                { format!(
                    "{} {} on {} ({} GPUs, {} nodes), MAD-Max paper mode",
                    s.model.name,
                    s.task.kind.config_name(),
                    s.system.name,
                    s.system.num_devices,
                    s.system.num_nodes
                ) }
            </p>
            <dl class="headline">
                { figure("iteration-time", "Iteration time", units::duration(r.iteration_s), r.iteration_s,
                    "Time of one training step: forward and backward passes over the global batch.") }
                { figure("throughput", "Throughput", units::si(r.throughput_samples_per_s, "samples/s"), r.throughput_samples_per_s,
                    "Samples processed per second by the whole cluster.") }
                { figure("exposed-comm", "Exposed communication", units::percent(r.exposed_share()), r.exposed_share(),
                    "Share of communication time that no computation hides (it adds to the iteration time).") }
                { figure("memory", "Weights per GPU", units::bytes(r.memory.total_bytes), r.memory.total_bytes,
                    "Model weights stored on each GPU under this plan (MAD-Max counts weights only).") }
            </dl>
        </section>
    }
}
