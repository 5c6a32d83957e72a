//! The Yew app: layout, forms, results, charts and lessons, over [`State`] and its reducer.
//! Components only render state and dispatch actions; the browser is reached through `dom`.

use super::background::use_background;
use super::canvas::{self, Canvas, Draw};
use super::charts::{self, Theme, TimelineGeometry};
use super::dom;
use super::export;
use super::fields::{self, Field};
use super::lessons;
use super::plan;
use super::state::{show_field, Action, Evaluated, State, View};
use super::sweep::{self, SweepTask};
use super::timeline::Lanes;
use crate::accuracy::Expectation;
use crate::doc::Config;
use crate::engine::ops::Category;
use crate::engine::report::{Limit, Report, Serving};
use crate::engine::scenario::Mode as ModelMode;
use crate::engine::scenario::{Batching, Family, TaskKind};
use crate::engine::{explain, Unit};
use crate::{presets, share, units};
use std::cell::Cell;
use std::rc::Rc;
use web_sys::{HtmlCanvasElement, HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement};
use yew::prelude::*;

/// Mounts the app on the page's body.
pub fn start() {
    // The page's own words while the program loaded (index.html) give way to it.
    if let Some(loading) = dom::document().and_then(|d| d.get_element_by_id("loading")) {
        loading.remove();
    }
    // Inside another site's frame, a page could be made to click for it: madmax does not run
    // there (hosts that read `_headers` refuse the frame before it loads).
    if dom::framed() {
        show_framed();
        return;
    }
    super::background::announce();
    yew::Renderer::<App>::new().render();
    // After rendering starts: Yew installs its own (console-only) panic hook when it renders.
    std::panic::set_hook(Box::new(|info| {
        web_sys::console::error_1(&info.to_string().into());
        show_crash(&info.to_string());
    }));
    // Test hook, in test builds only (`make dist-test`): `#test-panic` in the address makes the
    // page panic once it is up, so that the browser tests can see the crash notice work.
    #[cfg(feature = "test-hooks")]
    if dom::window().and_then(|w| w.location().hash().ok()).as_deref() == Some("#test-panic") {
        gloo::timers::callback::Timeout::new(300, || panic!("test panic requested by #test-panic")).forget();
    }
}

/// Says, in plain elements, that madmax runs only as its own page, with a link that opens it so.
fn show_framed() {
    let Some(doc) = dom::document() else { return };
    let Some(body) = doc.body() else { return };
    let Ok(p) = doc.create_element("p") else { return };
    p.set_id("framed");
    p.set_text_content(Some("madmax runs only as its own page, not inside another site. "));
    if let Ok(a) = doc.create_element("a") {
        a.set_text_content(Some("Open madmax"));
        let _ = a.set_attribute("href", &dom::base_url());
        let _ = a.set_attribute("target", "_blank");
        let _ = a.set_attribute("rel", "noopener");
        let _ = p.append_child(&a);
    }
    let _ = body.append_child(&p);
}

/// Writes a crash notice into the page, built from plain elements so that it works without
/// running any more WebAssembly: a link that reloads the last good scenario saved in this
/// browser, and the link of the scenario that failed, to copy into a bug report. Every DOM step
/// may fail quietly.
fn show_crash(detail: &str) {
    let Some(doc) = dom::document() else { return };
    let Some(body) = doc.body() else { return };
    let Ok(el) = doc.create_element("div") else { return };
    el.set_class_name("crash");
    el.set_id("crash");
    el.set_attribute("role", "alert").ok();
    let add = |parent: &web_sys::Element, tag: &str, text: &str| -> Option<web_sys::Element> {
        let child = doc.create_element(tag).ok()?;
        child.set_text_content(Some(text));
        parent.append_child(&child).ok()?;
        Some(child)
    };
    add(&el, "strong", "Something went wrong inside madmax and the page stopped.");
    let base = dom::base_url();
    let saved = dom::saved_scenario().unwrap_or_default();
    if let Some(a) = add(&el, "a", "Reset to the last good scenario") {
        a.set_id("crash-reset");
        a.set_attribute("href", &format!("{base}?{saved}")).ok();
    }
    // The scenario being evaluated when it failed, else the one in the address bar.
    let failing = super::state::interrupted_scenario()
        .map(|d| share::encode(&d))
        .unwrap_or_else(|| dom::query().trim_start_matches('?').to_owned());
    if !failing.is_empty() {
        add(&el, "p", "The scenario that failed (copy this link into a bug report):");
        if let Some(t) = add(&el, "textarea", &format!("{base}?{failing}")) {
            t.set_id("crash-scenario");
            t.set_attribute("readonly", "").ok();
            t.set_attribute("aria-label", "Link of the scenario that failed").ok();
        }
    }
    add(&el, "p", &format!("Details: {detail}"));
    let _ = body.append_child(&el);
}

impl Reducible for State {
    type Action = Action;
    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        Rc::new(self.next(action))
    }
}

type Dispatch = Callback<Action>;

#[function_component(App)]
fn app() -> Html {
    // The first state: what the address holds, else the scenario this browser kept.
    let state = use_reducer(|| {
        let saved = dom::saved_scenario().and_then(|q| share::decode(&q).ok());
        State::open(share::decode(&dom::query()), saved, View::from_query(&dom::query()))
    });
    let dispatch: Dispatch = {
        let s = state.clone();
        Callback::from(move |a: Action| s.dispatch(a))
    };
    // Mirror the view and the scenario into the address bar as the user edits (what is on
    // screen); a scenario too long for an address leaves only the view there. Another view
    // is a new history entry, so Back returns to the view before; an edit replaces the entry.
    use_effect_with((state.link(), state.view), |(link, view)| {
        let query = link.clone().unwrap_or_else(|| view.query(""));
        if View::of_query(&dom::query()) == *view {
            dom::replace_query(&query)
        } else {
            dom::push_query(&query)
        }
    });
    // Back and Forward change the view only: the scenario stays the one last edited, so going
    // back never undoes the user's work.
    {
        let d = dispatch.clone();
        use_effect_with((), move |_| {
            dom::manual_scroll_restoration();
            let listener = dom::window().map(|w| {
                gloo::events::EventListener::new(&w, "popstate", move |_| {
                    d.emit(Action::SetView(View::of_query(&dom::query())))
                })
            });
            move || drop(listener)
        });
    }
    // Each view opens where the user left it: its scroll position is kept as they scroll and
    // restored when they come back to it.
    {
        let scrolled = use_mut_ref(|| [0.0f64; View::ALL.len()]);
        let shown = use_mut_ref(|| state.view);
        {
            let (scrolled, shown) = (scrolled.clone(), shown.clone());
            use_effect_with((), move |_| {
                let listener = dom::window().map(|w| {
                    gloo::events::EventListener::new(&w, "scroll", move |_| {
                        scrolled.borrow_mut()[shown.borrow().index()] = dom::scroll_y()
                    })
                });
                move || drop(listener)
            });
        }
        use_effect_with(state.view, move |view| {
            // Not on the first drawing: a link to a story scrolls to it.
            if *shown.borrow() != *view {
                *shown.borrow_mut() = *view;
                dom::scroll_to_y(scrolled.borrow()[view.index()]);
            }
        });
    }
    // Keep the scenario the user last made valid in this browser (and only that).
    {
        let d = dispatch.clone();
        use_effect_with(state.keep.clone(), move |keep| {
            if let Some(doc) = keep {
                if let Err(why) = dom::save_scenario(&share::encode(doc)) {
                    d.emit(Action::Alert(format!(
                        "This browser did not keep the scenario for your next visit ({why}): export it (Share, import, export) to keep it."
                    )));
                }
            }
        });
    }
    // Redraw charts when the window size changes.
    let width = use_state(|| 0u32);
    {
        let width = width.clone();
        use_effect_with((), move |_| {
            let listener = dom::window().map(|w| {
                gloo::events::EventListener::new(&w, "resize", move |_| {
                    width
                        .set(dom::window().and_then(|w| w.inner_width().ok()).and_then(|v| v.as_f64()).unwrap_or(0.0)
                            as u32)
                })
            });
            move || drop(listener)
        });
    }

    let tab = |v: View, label: &str| {
        let d = dispatch.clone();
        let current = state.view == v;
        html! {
            <button class={classes!("tab", current.then_some("current"))} aria-pressed={current.to_string()}
                onclick={Callback::from(move |_| d.emit(Action::SetView(v)))}>{ label }</button>
        }
    };
    html! {
        <div class="app">
            <header class="top">
                <div class="brand">
                    <h1>{ "madmax" }</h1>
                    <p class="tagline">{ "What one step of a large model costs on a GPU cluster, and how much of it is communication that no computation hides." }</p>
                </div>
                <nav aria-label="Views">
                    { tab(View::Calculator, "Calculator") }
                    { tab(View::Explorer, "Explorer") }
                    { tab(View::Learn, "Learn") }
                    { tab(View::Validation, "Validation") }
                </nav>
                { match state.mode() {
                    ModelMode::Reference => html! { <span class="mode" id="mode-badge" title="The MAD-Max reference model (Hsia et al., ISCA 2024), reproduced exactly, quirks included.">{ "MAD-Max paper mode" }</span> },
                    ModelMode::Default => html! { <span class="mode" id="mode-badge" title="MAD-Max's model with its quirks fixed and extended: pipelines, ZeRO, recomputation, real collectives.">{ "default model" }</span> },
                } }
                { copy_link_button(&state, &dispatch) }
            </header>
            { notice(&state, &dispatch) }
            {
                match state.view {
                    View::Calculator => calculator(&state, &dispatch, *width),
                    View::Explorer => html! {
                        <super::explorer_view::ExplorerView good={state.good.clone()} dispatch={dispatch.clone()} width={*width} />
                    },
                    View::Learn => learn(&dispatch, *width),
                    View::Validation => html! {
                        <super::validation_view::ValidationView dispatch={dispatch.clone()} width={*width} initial={state.runs_filter.clone()} />
                    },
                }
            }
            <footer class="foot">
                { "madmax computes everything in your browser; nothing you type leaves the page. Model: MAD-Max (Hsia et al., ISCA 2024). " }
                <a href="https://arxiv.org/abs/2310.02784">{ "Paper" }</a>
            </footer>
        </div>
    }
}

/// Copies the link of the scenario on screen (with its view: a link copied on the validation
/// page opens it).
fn copy_link_button(state: &State, d: &Dispatch) -> Html {
    let link = state.link().map(|q| format!("{}?{q}", dom::base_url()));
    let d = d.clone();
    let onclick = Callback::from(move |_| match &link {
        Some(link) => {
            dom::copy_text(link);
            d.emit(Action::Notify("Link copied. Anyone who opens it sees this scenario and these numbers.".into()));
        }
        None => d.emit(Action::Alert(super::state::TOO_LONG_FOR_A_LINK.into())),
    });
    html! { <button id="copy-link" class="copy" {onclick} title="Copy a link that reproduces this view and scenario">{ "Copy link" }</button> }
}

fn notice(state: &State, d: &Dispatch) -> Html {
    let Some(n) = &state.notice else { return html! {} };
    let d = d.clone();
    html! {
        <div class={classes!("notice", n.is_error.then_some("is-error"))} role={if n.is_error { "alert" } else { "status" }}>
            <span>{ &n.text }</span>
            <button class="link" onclick={Callback::from(move |_| d.emit(Action::DismissNotice))} aria-label="Dismiss">{ "Dismiss" }</button>
        </div>
    }
}

fn calculator(state: &State, d: &Dispatch, width: u32) -> Html {
    html! {
        <main class="layout">
            <section class="inputs" aria-label="Scenario">
                { mini_summary(state) }
                { mode_switch(state, d) }
                { scenario_picker(state, d) }
                { problems(state) }
                { model_form(state, d) }
                { system_form(state, d) }
                { task_form(state, d) }
                { import_export(state, d) }
            </section>
            <section class={classes!("outputs", state.stale().then_some("stale"))} aria-label="Results">
                { results(state, d, width) }
            </section>
        </main>
    }
}

/// On a narrow screen the results come before the form: this line of the main figures stays
/// at the top of the window while the user scrolls through the form (hidden on wide screens,
/// where the results column stays in view).
fn mini_summary(state: &State) -> Html {
    let Some(g) = &state.good else { return html! {} };
    let r = &g.report;
    let mem = &r.memory;
    html! {
        <p class={classes!("mini-summary", state.stale().then_some("stale"))} id="mini-summary" aria-hidden="true">
            <span>{ format!("iteration {}", units::duration(r.iteration_s)) }</span>
            <span>{ units::si(r.throughput_samples_per_s, "samples/s") }</span>
            <span class={classes!((!mem.fits()).then_some("bad"))}>{ format!("{} of {} per GPU", units::bytes(mem.total_bytes), units::bytes(mem.capacity_bytes)) }</span>
            { if state.stale() { html! { <span>{ "stale" }</span> } } else { html! {} } }
        </p>
    }
}

// ---------------------------------------------------------------------------------------------
// Inputs

/// Which model evaluates the scenario: the default model or MAD-Max paper mode.
fn mode_switch(state: &State, d: &Dispatch) -> Html {
    let mode = state.mode();
    let option = |m: ModelMode, title: &'static str, help: &'static str| {
        let d = d.clone();
        let id = format!("mode-{}", m.config_name());
        html! {
            <label class={classes!("mode", (mode == m).then_some("current"))} for={id.clone()} title={help}>
                <input type="radio" name="mode" id={id} checked={mode == m}
                    onchange={Callback::from(move |_| d.emit(Action::SetMode(m)))} />
                { title }
            </label>
        }
    };
    html! {
        <div class="card mode-switch" role="radiogroup" aria-label="Performance model">
            { option(ModelMode::Default, "Default model", "Quirks fixed; pipelines, ZeRO, recomputation, attention's s^2, real collectives; memory checked against HBM. Validated on published Megatron-LM runs.") }
            { option(ModelMode::Reference, "MAD-Max paper mode", "The MAD-Max code's behaviour, quirks included: the paper's numbers.") }
            { match mode {
                ModelMode::Default => {
                    let d = d.clone();
                    html! { <p class="help" id="mode-help">
                        { "Default model: MAD-Max's two-stream model with its bugs fixed, extended with pipeline schedules, ZeRO, activation recomputation, attention's s² work and latency-bandwidth collectives. " }
                        { crate::accuracy::ACCURACY_NOTE }{ " " }
                        <button class="link" id="to-validation" onclick={Callback::from(move |_| d.emit(Action::SetView(View::Validation)))}>{ "See every run" }</button>
                    </p> }
                }
                ModelMode::Reference => html! { <p class="help" id="mode-help">{ "MAD-Max paper mode: the paper's Python code reproduced exactly, quirks included, so you get the paper's numbers." }</p> },
            } }
        </div>
    }
}

fn on_select(d: &Dispatch, f: impl Fn(String) -> Action + 'static) -> Callback<Event> {
    let d = d.clone();
    Callback::from(move |e: Event| {
        if let Some(s) = e.target_dyn_into::<HtmlSelectElement>() {
            d.emit(f(s.value()));
        }
    })
}

/// A text field's change (the user leaves it or presses Enter): its action, at once (what was
/// waiting for a pause in typing there is dropped: this is newer).
fn on_text(d: &Dispatch, f: impl Fn(String) -> Action + 'static) -> Callback<Event> {
    let d = d.clone();
    Callback::from(move |e: Event| {
        if let Some(i) = e.target_dyn_into::<HtmlInputElement>() {
            settle_typing(Some(&i.id()));
            d.emit(f(i.value()));
        }
    })
}

/// Milliseconds of pause in typing after which a text field's value is applied.
const TYPING_PAUSE_MS: u32 = 400;

/// A typed value waiting for a pause ([`on_typing`]).
struct Typing {
    /// The input's id.
    field: String,
    /// Dropping it cancels the wait.
    _wait: gloo::timers::callback::Timeout,
    /// Applies the typed value.
    emit: Rc<dyn Fn()>,
}

thread_local! {
    static TYPING: std::cell::RefCell<Option<Typing>> = const { std::cell::RefCell::new(None) };
}

/// Ends the wait for a pause in typing: what was typed is applied now, unless it was typed in
/// field `newer` (whose newer value replaces it); either way the wait is cancelled.
fn settle_typing(newer: Option<&str>) {
    let waiting = TYPING.with(|t| t.borrow_mut().take());
    if let Some(p) = waiting.filter(|p| Some(p.field.as_str()) != newer) {
        (p.emit)();
    }
}

/// A text field's typing: its action once the user pauses ([`TYPING_PAUSE_MS`]), so results
/// follow what is typed without waiting for Tab or Enter. Typing in another field, or leaving
/// this one ([`on_leave`]), applies it at once; a change event replaces it.
fn on_typing(d: &Dispatch, f: impl Fn(String) -> Action + 'static) -> Callback<InputEvent> {
    let d = d.clone();
    let f = Rc::new(f);
    Callback::from(move |e: InputEvent| {
        let Some(i) = e.target_dyn_into::<HtmlInputElement>() else { return };
        let (d, f, value, field) = (d.clone(), f.clone(), i.value(), i.id());
        let emit: Rc<dyn Fn()> = Rc::new(move || d.emit(f(value.clone())));
        let wait = gloo::timers::callback::Timeout::new(TYPING_PAUSE_MS, move || {
            // The wait has fired: forget it rather than drop the closure that runs now.
            if let Some(p) = TYPING.with(|t| t.borrow_mut().take()) {
                let Typing { _wait, emit, .. } = p;
                _wait.forget();
                emit();
            }
        });
        // Another field's value still waiting is applied, not lost.
        settle_typing(Some(&field));
        TYPING.with(|t| *t.borrow_mut() = Some(Typing { field, _wait: wait, emit }));
    })
}

/// Leaving a text field applies what was typed there (a field whose value went back to what it
/// was fires no change event).
fn on_leave() -> Callback<FocusEvent> {
    Callback::from(|_| settle_typing(None))
}

fn scenario_picker(state: &State, d: &Dispatch) -> Html {
    let Ok(p) = presets::all() else { return html! { <p class="error">{ "The presets could not be read." }</p> } };
    let current = state.preset.clone().unwrap_or_default();
    let group = |label: &str, reference: bool| {
        html! {
            <optgroup label={label.to_owned()}>
                { for p.scenarios.iter().filter(|s| s.source.starts_with("MAD-Max") == reference).map(|s| html! {
                    <option value={s.id.clone()} selected={s.id == current}>{ &s.label }</option>
                }) }
            </optgroup>
        }
    };
    html! {
        <div class="card">
            <div class="field">
                <label for="scenario">{ "Scenario" }</label>
                <select id="scenario" onchange={on_select(d, Action::LoadScenario)}>
                    { if state.preset.is_none() { html! { <option value="" selected=true>{ "Custom scenario (edited)" }</option> } } else { html! {} } }
                    { group("Current hardware", false) }
                    { group("MAD-Max reference runs (golden cases)", true) }
                </select>
                <p class="help">{ "Start from a run of the MAD-Max paper or one on current GPUs, then change anything below. Every edit recomputes at once." }</p>
            </div>
        </div>
    }
}

fn problems(state: &State) -> Html {
    if state.errors.is_empty() {
        return html! {};
    }
    html! {
        <div class="card problems" role="alert" id="problems">
            <h2>{ format!("{} problem{} to fix", state.errors.len(), if state.errors.len() == 1 { "" } else { "s" }) }</h2>
            <p class="help">{ "The results on the right are from the last valid scenario and are marked stale until these are fixed." }</p>
            <ul>{ for state.errors.iter().map(|e| match fields::field_of_path(&e.field) {
                // The field as the form names it, a link to it, then the config key.
                Some((label, id)) => html! { <li>
                    { match id { Some(id) => html! { <a href={format!("#{id}")}>{ label }</a> }, None => html! { <strong>{ label }</strong> } } }
                    { ": " }{ &e.message }{ " " }<code class="sub">{ &e.field }</code>
                </li> },
                None => html! { <li><code>{ &e.field }</code>{ ": " }{ &e.message }</li> },
            }) }</ul>
        </div>
    }
}

/// The id a field's input gets.
fn field_id(f: &Field) -> String {
    format!("f-{}-{}", f.config.key(), f.key)
}

/// One labelled input with unit, help and inline error.
fn input(state: &State, d: &Dispatch, f: Field) -> Html {
    let path = f.path();
    let err = state.error_for(&path);
    let id = field_id(&f);
    let help_id = format!("{id}-help");
    let label = if f.unit.is_empty() { f.label.to_owned() } else { format!("{} ({})", f.label, f.unit) };
    if let Some(options) = f.kind.options() {
        let current = show_field(&state.doc, &f);
        return html! {
            <div class={classes!("field", err.map(|_| "invalid"))}>
                <label for={id.clone()}>{ label }</label>
                <select id={id} aria-invalid={err.is_some().to_string()} aria-describedby={help_id.clone()}
                    onchange={on_select(d, move |v| Action::SetField(f, v))}>
                    <option value="" selected={current.is_empty()}>{ format!("default: {}", f.default) }</option>
                    { for options.iter().map(|(v, l)| html! { <option value={*v} selected={current == *v}>{ *l }</option> }) }
                </select>
                { error_line(err.map(|e| e.message.as_str())) }
                <p class="help" id={help_id}>{ f.help }</p>
            </div>
        };
    }
    let placeholder = if f.default.is_empty() { String::new() } else { format!("default: {}", f.default) };
    html! {
        <div class={classes!("field", err.map(|_| "invalid"))}>
            <label for={id.clone()}>{ label }</label>
            <input id={id} type="text" inputmode="decimal" autocomplete="off" value={show_field(&state.doc, &f)} placeholder={placeholder}
                aria-invalid={err.is_some().to_string()} aria-describedby={help_id.clone()}
                onchange={on_text(d, move |v| Action::SetField(f, v))}
                oninput={on_typing(d, move |v| Action::SetField(f, v))} onblur={on_leave()} />
            { error_line(err.map(|e| e.message.as_str())) }
            <p class="help" id={help_id}>{ f.help }</p>
        </div>
    }
}

fn error_line(msg: Option<&str>) -> Html {
    match msg {
        Some(m) => html! { <p class="error-msg" role="alert">{ m }</p> },
        None => html! {},
    }
}

fn model_form(state: &State, d: &Dispatch) -> Html {
    let Ok(p) = presets::all() else { return html! {} };
    let current = p.models.iter().find(|m| m.config == state.doc.model).map(|m| m.id.clone()).unwrap_or_default();
    let family = state.family();
    html! {
        <details class="card" open=true>
            <summary><h2>{ "Model" }</h2><span class="sub">{ family.map(|f| f.config_name()).unwrap_or("?") }</span></summary>
            <div class="field">
                <label for="model-preset">{ "Model preset" }</label>
                <select id="model-preset" onchange={on_select(d, Action::SetModel)}>
                    { if current.is_empty() { html! { <option value="" selected=true>{ "As configured" }</option> } } else { html! {} } }
                    { for Family::ALL.iter().map(|fam| html! {
                        <optgroup label={fam.config_name()}>
                            { for p.models.iter().filter(|m| m.config.get("type").and_then(|t| t.as_str()) == Some(fam.config_name())).map(|m| html! {
                                <option value={m.id.clone()} selected={m.id == current}>{ &m.label }</option>
                            }) }
                        </optgroup>
                    }) }
                </select>
                <p class="help">{ "The model family decides which fields follow: DLRMs (MLPs and embedding tables), LLMs (with or without mixture of experts), vision transformers. Dimensions are the MAD-Max reference configs." }</p>
            </div>
            { error_line(state.error_for("model.type").map(|e| e.message.as_str())) }
            { for family.map(fields::model_fields).unwrap_or_default().into_iter().map(|f| input(state, d, f)) }
            { match family {
                Some(f) if state.mode() == ModelMode::Default && !f.is_dlrm() => html! {
                    <fieldset class="spec" id="default-model-details">
                        <legend>{ "Architecture details (default model)" }</legend>
                        { for fields::default_model_fields(f).into_iter().map(|x| input(state, d, x)) }
                    </fieldset>
                },
                _ => html! {},
            } }
        </details>
    }
}

fn system_form(state: &State, d: &Dispatch) -> Html {
    let Ok(p) = presets::all() else { return html! {} };
    let current = p.systems.iter().find(|s| s.config == state.doc.system).map(|s| s.id.clone()).unwrap_or_default();
    let num = |k: &str| state.doc.num(Config::System, k);
    let gpu = p
        .gpus
        .iter()
        .find(|g| {
            num("f16_flops") == Some(g.f16_flops)
                && num("mem_cap") == Some(g.mem_cap)
                && num("mem_bw") == Some(g.mem_bw)
        })
        .map(|g| g.id.clone())
        .unwrap_or_default();
    let per_node = state.per_node_draft.clone().or_else(|| state.per_node().map(|n| n.to_string())).unwrap_or_default();
    let nodes = state.nodes_draft.clone().unwrap_or_else(|| show_field(&state.doc, &NODES));
    let total = state.doc.count(Config::System, "num_devices");
    // Network fields up front; datasheet figures and calibrations folded (open on a problem).
    let (links, details): (Vec<Field>, Vec<Field>) = fields::system_fields()
        .into_iter()
        .partition(|f| matches!(f.key, "num_nvlinks" | "bw_per_nvlink" | "num_ibroce_ports" | "ibroce_bw"));
    let details_open = details.iter().any(|f| state.error_for(&f.path()).is_some());
    let shape_err = state
        .error_for("system.gpus_per_node")
        .or_else(|| state.error_for("system.num_nodes"))
        .or_else(|| state.error_for("system.num_devices"));
    html! {
        <details class="card" open=true>
            <summary><h2>{ "Hardware" }</h2><span class="sub">{ total.map(|t| format!("{t} GPUs")).unwrap_or_default() }</span></summary>
            <div class="field">
                <label for="system-preset">{ "Cluster preset" }</label>
                <select id="system-preset" onchange={on_select(d, Action::SetSystem)}>
                    { if current.is_empty() { html! { <option value="" selected=true>{ "As configured" }</option> } } else { html! {} } }
                    { for p.systems.iter().map(|s| html! { <option value={s.id.clone()} selected={s.id == current}>{ &s.label }</option> }) }
                </select>
                <p class="help">{ "A MAD-Max reference system, or a cluster of current GPUs built from vendor datasheets. The plan follows the GPU count." }</p>
            </div>
            <div class="field">
                <label for="gpu-type">{ "GPU type" }</label>
                <select id="gpu-type" onchange={on_select(d, Action::SetGpu)}>
                    { if gpu.is_empty() { html! { <option value="" selected=true>{ "As configured" }</option> } } else { html! {} } }
                    { for p.gpus.iter().map(|g| html! { <option value={g.id.clone()} selected={g.id == gpu} title={g.source.clone()}>{ &g.label }</option> }) }
                </select>
                <p class="help">{ "Sets peak FLOP/s, HBM capacity and bandwidth, and NVLinks from the GPU's datasheet; utilisation factors stay." }</p>
            </div>
            <div class="row">
                <div class={classes!("field", shape_err.map(|_| "invalid"))}>
                    <label for="f-system-gpus_per_node">{ "GPUs per node" }</label>
                    <input id="f-system-gpus_per_node" type="text" inputmode="numeric" value={per_node}
                        onchange={on_text(d, Action::SetPerNode)} oninput={on_typing(d, Action::SetPerNode)} onblur={on_leave()} />
                    <p class="help">{ "GPUs joined by NVLink in one server: 8 on DGX/HGX nodes, 4 or 16 on some cloud instances, 1 for a PC." }</p>
                </div>
                <div class={classes!("field", shape_err.map(|_| "invalid"))}>
                    <label for="f-system-num_nodes">{ "Nodes" }</label>
                    <input id="f-system-num_nodes" type="text" inputmode="numeric" value={nodes}
                        onchange={on_text(d, Action::SetNodes)} oninput={on_typing(d, Action::SetNodes)} onblur={on_leave()} />
                    <p class="help">{ "Servers joined by the network (InfiniBand, RoCE or Ethernet)." }</p>
                </div>
            </div>
            { error_line(shape_err.map(|e| e.message.as_str())) }
            { for links.into_iter().map(|f| input(state, d, f)) }
            <details class="sub-card" open={details_open}>
                <summary>{ "GPU figures and utilisation factors" }</summary>
                { for details.into_iter().map(|f| input(state, d, f)) }
            </details>
        </details>
    }
}

const NODES: Field = Field {
    config: Config::System,
    key: "num_nodes",
    label: "Nodes",
    unit: "",
    scale: 1.0,
    kind: fields::Kind::Count,
    help: "",
    default: "",
};

fn task_form(state: &State, d: &Dispatch) -> Html {
    let Some(family) = state.family() else {
        return html! { <div class="card"><h2>{ "Task" }</h2><p class="help">{ "Choose a valid model type first." }</p></div> };
    };
    let kind = state.doc.text(Config::Task, "type").unwrap_or("").to_owned();
    let kinds =
        [("pretrain", "Pre-training"), ("finetune", "Fine-tuning"), ("inference", "Inference (forward pass only)")];
    let default_transformer = state.mode() == ModelMode::Default && !family.is_dlrm();
    html! {
        <details class="card" open=true>
            <summary><h2>{ "Task and plan" }</h2><span class="sub">{ kind.clone() }</span></summary>
            <div class="field">
                <label for="task-type">{ "Task" }</label>
                <select id="task-type" onchange={on_select(d, Action::SetTaskKind)}>
                    { for kinds.iter().map(|(v, l)| html! { <option value={*v} selected={*v == kind}>{ *l }</option> }) }
                </select>
                <p class="help">{ "Training runs a forward and a backward pass with gradient communication; inference only the forward pass." }</p>
                { error_line(state.error_for("task.type").map(|e| e.message.as_str())) }
            </div>
            { for plan::spec_keys(family).iter().filter(|k| !(default_transformer && **k == "emb_parallel")).map(|k| spec_editor(state, d, k)) }
            { if kind == "finetune" { freeze_editor(state, d, family) } else { html! {} } }
            { if state.mode() == ModelMode::Default { html! {
                <fieldset class="spec" id="default-settings">
                    <legend>{ if kind == "inference" { "How serving runs (default model)" } else { "How training runs (default model)" } }</legend>
                    { for fields::default_task_fields(family, kind == "inference").into_iter().map(|f| input(state, d, f)) }
                </fieldset>
            } } else { html! {} } }
        </details>
    }
}

fn spec_editor(state: &State, d: &Dispatch, key: &'static str) -> Html {
    let strategies: Vec<String> = state
        .doc
        .get(Config::Task, key)
        .and_then(|v| v.as_array())
        .map(|a| a.iter().map(|v| v.as_str().unwrap_or("").to_owned()).collect())
        .unwrap_or_default();
    let degree_key = format!("{key}_degree");
    let degrees: Vec<String> = state
        .doc
        .get(Config::Task, &degree_key)
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .map(|v| v.as_u64().map(|n| n.to_string()).unwrap_or_else(|| v.as_str().unwrap_or("").to_owned()))
                .collect()
        })
        .unwrap_or_default();
    let spec_err = state.error_for(&format!("task.{key}")).or_else(|| state.error_for(&format!("task.{degree_key}")));
    let n_levels = strategies.len().max(degrees.len());
    let level_names = |i: usize, n: usize| match (n, i) {
        (1, _) => "all GPUs",
        (_, 0) => "within a node",
        (_, 1) => "across nodes",
        _ => "extra level",
    };
    // Past what any plan may have, levels are counted, not drawn (an import may hold thousands).
    let drawn = n_levels.min(crate::engine::scenario::MAX_LEVELS + 1);
    let rows = (0..drawn).map(|i| {
        let s = strategies.get(i).cloned().unwrap_or_default();
        let g = degrees.get(i).cloned().unwrap_or_default();
        let s_err = state.error_for(&format!("task.{key}[{i}]"));
        let g_err = state.error_for(&format!("task.{degree_key}[{i}]"));
        let id = format!("{key}-{i}");
        let remove = {
            let d = d.clone();
            Callback::from(move |_| d.emit(Action::RemoveLevel(key, i)))
        };
        html! {
            <div class={classes!("level", (s_err.is_some() || g_err.is_some()).then_some("invalid"))}>
                <span class="level-name">{ format!("Level {i} ({})", level_names(i, n_levels)) }</span>
                <label class="sr-only" for={format!("{id}-strategy")}>{ format!("Strategy of level {i}") }</label>
                <select id={format!("{id}-strategy")} onchange={on_select(d, move |v| Action::SetStrategy { spec: key, level: i, strategy: v })}>
                    { for plan::strategies(key, state.mode()).iter().map(|st| html! { <option value={*st} selected={*st == s} title={fields::strategy_help(st)}>{ *st }</option> }) }
                    { if !plan::strategies(key, state.mode()).contains(&s.as_str()) { html! { <option value={s.clone()} selected=true>{ s.clone() }</option> } } else { html! {} } }
                </select>
                <label class="sr-only" for={format!("{id}-degree")}>{ format!("Degree of level {i}") }</label>
                <input id={format!("{id}-degree")} class="degree" type="text" inputmode="numeric" value={g}
                    aria-invalid={g_err.is_some().to_string()}
                    onchange={on_text(d, move |v| Action::SetDegree { spec: key, level: i, text: v })}
                    oninput={on_typing(d, move |v| Action::SetDegree { spec: key, level: i, text: v })} onblur={on_leave()} />
                { if n_levels > 1 { html! { <button class="link" onclick={remove} aria-label={format!("Remove level {i}")}>{ "remove" }</button> } } else { html! {} } }
                { error_line(s_err.or(g_err).map(|e| e.message.as_str())) }
            </div>
        }
    });
    let add = {
        let d = d.clone();
        Callback::from(move |_| d.emit(Action::AddLevel(key)))
    };
    html! {
        <fieldset class={classes!("spec", spec_err.map(|_| "invalid"))} id={format!("spec-{key}")}>
            <legend>{ fields::spec_label(key) }</legend>
            { for rows }
            { if n_levels > drawn { html! { <p class="error-msg">{ format!("... and {} more levels, not shown: a plan has at most {} (remove levels above, or import a config with fewer).", n_levels - drawn, crate::engine::scenario::MAX_LEVELS) }</p> } } else { html! {} } }
            <button class="link" onclick={add}>{ "+ add level" }</button>
            { error_line(spec_err.map(|e| e.message.as_str())) }
            <p class="help">{ "Degrees multiply to the GPU count. With two levels, level 0 spans the GPUs of a node (NVLink) and level 1 the nodes (network). " }
                { for plan::strategies(key, state.mode()).iter().map(|s| html! { <span class="strategy-help">{ fields::strategy_help(s) }{ " " }</span> }) }
            </p>
            { input(state, d, fields::batch_field(key)) }
        </fieldset>
    }
}

fn freeze_editor(state: &State, d: &Dispatch, family: Family) -> Html {
    let flags = fields::freeze_fields(family).into_iter().map(|(key, label)| {
        let on = state.doc.get(Config::Task, key).and_then(|v| v.as_bool()).unwrap_or(false);
        let d = d.clone();
        let onchange = Callback::from(move |e: Event| {
            if let Some(i) = e.target_dyn_into::<HtmlInputElement>() {
                d.emit(Action::SetFlag(key, i.checked()));
            }
        });
        html! {
            <label class="check"><input type="checkbox" id={format!("f-task-{key}")} checked={on} {onchange} />{ label }</label>
        }
    });
    let transformer = !matches!(family, Family::Dlrm | Family::DlrmMoe | Family::DlrmTransformer);
    html! {
        <fieldset class="spec">
            <legend>{ "Fine-tuning" }</legend>
            { for flags }
            { error_line(state.error_for("task.freeze_emb").map(|e| e.message.as_str())) }
            <p class="help">{ "Frozen parts send no weight gradients. In MAD-Max paper mode, frozen top MLPs and transformer layers still run their backward GEMMs (quirk Q22)." }</p>
            { if transformer { input(state, d, fields::MIN_FROZEN) } else { html! {} } }
        </fieldset>
    }
}

fn import_export(state: &State, d: &Dispatch) -> Html {
    let import = {
        let d = d.clone();
        Callback::from(move |_| {
            let value = dom::document()
                .and_then(|doc| doc.get_element_by_id("import-text"))
                .and_then(|e| wasm_bindgen::JsCast::dyn_into::<HtmlTextAreaElement>(e).ok())
                .map(|t| t.value())
                .unwrap_or_default();
            d.emit(Action::Import(value));
        })
    };
    let upload = {
        let d = d.clone();
        Callback::from(move |e: Event| {
            let Some(input) = e.target_dyn_into::<HtmlInputElement>() else { return };
            let Some(file) = input.files().and_then(|f| f.get(0)) else { return };
            let d = d.clone();
            let file = gloo::file::File::from(file);
            // Refused before it is read: a large file would take the page's memory.
            if file.size() > crate::input::MAX_JSON_BYTES as u64 {
                d.emit(Action::Alert(format!(
                    "Could not import: the file is {}, more than the {} a scenario may take.",
                    units::bytes(file.size() as f64),
                    units::bytes(crate::input::MAX_JSON_BYTES as f64)
                )));
                return;
            }
            wasm_bindgen_futures::spawn_local(async move {
                match gloo::file::futures::read_as_text(&file).await {
                    Ok(text) => d.emit(Action::Import(text)),
                    Err(e) => d.emit(Action::Import(format!("unreadable file: {e}"))),
                }
            });
        })
    };
    let doc_json = state.doc.to_json().to_string();
    let export_scenario =
        Callback::from(move |_| dom::download_text("madmax-scenario.json", "application/json", &doc_json));
    let good = state.good.clone();
    let export_results = {
        let good = good.clone();
        Callback::from(move |_| {
            if let Some(g) = &good {
                dom::download_text("madmax-results.csv", "text/csv", &export::results_csv(&g.scenario, &g.report));
            }
        })
    };
    let export_timeline = Callback::from(move |_| {
        if let Some(g) = &good {
            dom::download_text("madmax-timeline.csv", "text/csv", &export::timeline_csv(&g.report));
        }
    });
    let link = state.link().map_or_else(
        || "(too long for a link: export the scenario as JSON)".to_owned(),
        |q| format!("{}?{q}", dom::base_url()),
    );
    html! {
        <details class="card">
            <summary><h2>{ "Share, import, export" }</h2></summary>
            <div class="field">
                <label for="share-link">{ "Link to this scenario" }</label>
                <input id="share-link" type="text" readonly=true value={link} />
                <p class="help">{ "The whole scenario lives in the address: bookmark it or send it (\"Copy link\" at the top). It also updates as you edit." }</p>
            </div>
            <div class="field">
                <label for="import-text">{ "Paste MAD-Max JSON" }</label>
                <textarea id="import-text" rows="5" placeholder={"{\"model\": {...}, \"system\": {...}, \"task\": {...}}"} />
                <div class="row">
                    <button id="import-button" onclick={import}>{ "Import" }</button>
                    <label class="button" for="import-file">{ "Upload file" }</label>
                    <input id="import-file" class="sr-only" type="file" accept=".json,application/json" onchange={upload} />
                </div>
                <p class="help">{ "A model, system or task config from the MAD-Max repository (replaces that part), all three as {\"model\", \"system\", \"task\"}, or a golden case file. The numbers then equal the reference's and the CLI's." }</p>
            </div>
            <div class="row wrap">
                <button onclick={export_scenario}>{ "Scenario (JSON)" }</button>
                <button onclick={export_results}>{ "Results (CSV)" }</button>
                <button onclick={export_timeline}>{ "Op timeline (CSV)" }</button>
            </div>
        </details>
    }
}

// ---------------------------------------------------------------------------------------------
// Results

fn results(state: &State, d: &Dispatch, width: u32) -> Html {
    let Some(good) = state.good.clone() else {
        return html! { <div class="card"><p>{ "No valid scenario yet: fix the problems on the left." }</p></div> };
    };
    let stale = if state.stale() {
        html! { <p class="stale-banner" role="status">{ "Stale: these results are for the last valid scenario. Fix the problems on the left to update them." }</p> }
    } else {
        html! {}
    };
    html! {
        <>
            { stale }
            { headline(&good, state.yardstick.as_ref(), d) }
            <div class="card charts">
                <Chart kind={ChartKind::Breakdown} good={good.clone()} width={width} />
                { legend(&good.report) }
            </div>
            <div class="card charts">
                <TimelineChart good={good.clone()} selected={state.selected_op} dispatch={d.clone()} width={width} />
                <LongestOps good={good.clone()} selected={state.selected_op} dispatch={d.clone()} />
                { op_details(state, &good) }
            </div>
            { if good.report.serving.is_some() { html! {
                <div class="card charts" id="serving">
                    <h2>{ "Serving: throughput against latency" }</h2>
                    <ServingChart good={good.clone()} width={width} />
                    <p class="help">{ if good.report.serving.as_ref().is_some_and(|sv| sv.batching == Batching::InFlight) {
                        "Each point is one batch: the most requests the engine keeps in flight. More requests share each weight read: more tokens per second, but each step, and so each request's next token, takes longer; past what the KV cache holds the engine admits no more, and past what the step's token budget prefills, prompts wait."
                    } else {
                        "Each point is one batch size (requests served together). Bigger batches share each weight read among more requests: more tokens per second, but each request's next token comes later. Grey points do not fit in memory (KV cache)."
                    } }</p>
                </div>
            } } else { html! {} } }
            <div class="card charts">
                <h2>{ "Pre-training throughput" }</h2>
                <div class="pair">
                    <SweepChart task={SweepTask::Pretrain} axis={Axis::Gpus} good={good.clone()} width={width} />
                    <SweepChart task={SweepTask::Pretrain} axis={Axis::Batch} good={good.clone()} width={width} />
                </div>
                <h2>{ "Inference throughput" }</h2>
                <div class="pair">
                    <SweepChart task={SweepTask::Inference} axis={Axis::Gpus} good={good.clone()} width={width} />
                    <SweepChart task={SweepTask::Inference} axis={Axis::Batch} good={good.clone()} width={width} />
                </div>
                <p class="help">{ "The same model and plan family at other sizes: more nodes of the same kind (the plan refitted), or another local batch (other batches follow). The ringed point is the scenario above." }</p>
            </div>
            <div class="card charts">
                <Chart kind={ChartKind::Memory} good={good.clone()} width={width} />
                { memory_note(&good) }
            </div>
            { formulas(&good) }
        </>
    }
}

fn figure(id: &'static str, label: &str, value: String, raw: f64, sub: Html, help: &'static str) -> Html {
    // "281 samples/s": the number large, the unit smaller.
    let (number, unit) =
        value.split_once(' ').map_or((value.clone(), String::new()), |(a, b)| (a.to_owned(), b.to_owned()));
    html! {
        <div class="figure" title={help}>
            <dt>{ label.to_owned() }</dt>
            <dd id={id} data-value={raw.to_string()}>{ number }<span class="unit">{ format!(" {unit}") }</span></dd>
            <dd class="figure-sub">{ sub }</dd>
        </div>
    }
}

/// What a source measured for the scenario on screen against the model's figure.
fn yardstick(y: &super::state::Yardstick) -> Html {
    let model = match (&y.predicted, y.difference) {
        (Some(p), Some(d)) => format!("the model predicts {p} ({:+.1} %).", d * 100.0),
        (Some(p), None) => format!("the model predicts {p}."),
        (None, _) => "the model has no figure for it.".to_owned(),
    };
    html! {
        <p class="yardstick" id="yardstick" role="status">
            <strong>{ format!("{}: ", y.source) }</strong>
            { format!("{} {} ", y.metric, y.verb) }<span class="num" id="yardstick-measured">{ &y.measured }</span>
            { format!("; {model} (An edit of the scenario ends this comparison: it holds for the run as published.)") }
        </p>
    }
}

fn headline(g: &Rc<Evaluated>, measured: Option<&super::state::Yardstick>, d: &Dispatch) -> Html {
    let r = &g.report;
    let s = &g.scenario;
    let tokens = r.tokens_per_s(s);
    let mfu = r.mfu(s);
    let mem = &r.memory;
    let kind = super::state::task_kind_name(s);
    let what = format!(
        "{} {} on {} GPUs ({} {} x {}), global batch {}",
        s.model.name,
        kind,
        s.system.num_devices,
        s.system.num_nodes,
        if s.system.num_nodes == 1 { "node" } else { "nodes" },
        s.system.devices_per_node(),
        r.global_batch
    );
    html! {
        <div class="card">
            <p class="scenario" id="scenario-summary">{ what }</p>
            { measured.map(yardstick).unwrap_or_default() }
            <dl class="headline">
                { match &r.serving {
                    Some(sv) => serving_headline(sv),
                    None => html! { <>
                        { figure("iteration-time", "Iteration time", units::duration(r.iteration_s), r.iteration_s,
                            html! { { if r.idle_s > 0.0 {
                                format!("compute {} + exposed communication {} + idle {}", units::duration(r.compute_s), units::duration(r.exposed_comm_s.max(0.0)), units::duration(r.idle_s))
                            } else {
                                format!("compute {} + exposed communication {}", units::duration(r.compute_s), units::duration(r.exposed_comm_s.max(0.0)))
                            } } },
                            "One step: forward pass (and backward when training) over the global batch.") }
                        { figure("throughput", "Throughput", units::si(r.throughput_samples_per_s, "samples/s"), r.throughput_samples_per_s,
                            match tokens { Some(t) => html! { <span id="tokens-per-s" data-value={t.to_string()}>{ units::si(t, "tokens/s") }</span> }, None => html! {} },
                            "Samples the whole cluster processes per second: global batch / iteration time.") }
                    </> },
                } }
                { figure("exposed-comm", "Exposed communication", units::percent(r.exposed_share()), r.exposed_share(),
                    html! { { format!("{} of {} communication is not hidden", units::duration(r.exposed_comm_s.max(0.0)), units::duration(r.comm_s)) } },
                    "Share of communication time no computation hides: it adds to the iteration time.") }
                { figure("mfu", "Model FLOPs utilisation", units::percent(mfu), mfu,
                    // Both bases, as sources quote TFLOP/s on either: model FLOPs, and what ran.
                    match &r.utilization {
                        Some(u) => html! { <span id="hfu" data-value={u.hfu.to_string()}>{ format!("{} per GPU of {} peak; HFU {} (recomputation included)",
                            units::si(u.model_flops_per_s_per_gpu, "FLOP/s"), units::si(u.peak_flops_per_s, "FLOP/s"), units::percent(u.hfu)) }</span> },
                        None => html! { { format!("of {} peak per GPU", units::si(crate::engine::report::peak_flops_per_s(s), "FLOP/s")) } },
                    },
                    match &r.utilization {
                        Some(_) if s.task.kind == TaskKind::Inference => "Model FLOPs per iteration (the forward pass, attention's s^2 included) over what the GPUs could do at datasheet peak in that time.",
                        Some(_) => "Model FLOPs per iteration (forward and backward, no recomputation, attention's s^2 included) over what the GPUs could do at datasheet peak in that time. HFU also counts recomputed FLOPs.",
                        None => "Model FLOPs per iteration over what the GPUs could do at datasheet peak in that time (FLOPs as MAD-Max counts them).",
                    }) }
                { figure("memory", "Memory per GPU", units::bytes(mem.total_bytes), mem.total_bytes,
                    html! { <span class={classes!((mem.total_bytes > mem.capacity_bytes).then_some("over"))}
                        title={format!("{} of {}", units::gib(mem.total_bytes), units::gib(mem.capacity_bytes))}>
                        { format!("of {} HBM ({})", units::bytes(mem.capacity_bytes), units::percent(mem.total_bytes / mem.capacity_bytes)) }</span> },
                    if r.utilization.is_some() { "Everything one GPU of the busiest pipeline stage holds: weights, gradients, optimizer states, activations of the micro-batches in flight, buffers." } else { "Model weights held by each GPU under this plan. MAD-Max paper mode counts weights only." }) }
            </dl>
            { match &r.serving { Some(sv) => serving_figures(sv), None => html! {} } }
            <RunsLikeThis good={g.clone()} dispatch={d.clone()} />
            { for r.limits.iter().map(limit_line) }
        </div>
    }
}

#[derive(Properties, PartialEq)]
struct RunsLikeThisProps {
    good: Rc<Evaluated>,
    dispatch: Dispatch,
}

/// What the published runs of this kind say about the scenario's time: computed in the
/// background (it may evaluate the scenario again at the calibrated fractions of peak).
#[function_component(RunsLikeThis)]
fn runs_like_this(p: &RunsLikeThisProps) -> Html {
    let e = use_background(
        p.good.clone(),
        |g: &Rc<Evaluated>| vec![g.clone()],
        |g: &Rc<Evaluated>| crate::accuracy::expectation(&g.scenario, &g.report),
    );
    let Some(Some(e)) = e.as_ref().and_then(|v| v.first()) else { return html! {} };
    let s = &p.good.scenario;
    html! { <p class="help" id="runs-like-this">
        <span id="runs-sentence">{ e.sentence(s.system.flops_util, p.good.report.iteration_s) }</span>
        { match e {
            Expectation::Like { band, .. } => {
                let d = p.dispatch.clone();
                let (kind, gpu) = (band.parallelism.to_owned(), band.gpu);
                html! { <>{ " " }<button class="link" id="see-runs"
                    onclick={Callback::from(move |_| d.emit(Action::ShowRuns(kind.clone(), gpu)))}>
                    { format!("See these {} runs", band.runs) }</button></> }
            }
            Expectation::Unknown(_) => html! {},
        } }
    </p> }
}

/// The first two headline figures of a serving scenario: how long a request takes, and how many
/// the cluster completes.
fn serving_headline(sv: &Serving) -> Html {
    let inflight = sv.batching == Batching::InFlight;
    html! { <>
        { figure("iteration-time", "End-to-end latency", units::duration(sv.e2e_s), sv.e2e_s,
            html! { { format!("first token {} + {} tokens x {}", units::duration(sv.ttft_s), sv.output_tokens.saturating_sub(1), units::duration(sv.tpot_s)) } },
            if inflight {
                "From a request's arrival to its last token in the steady state: its wait and prefill, then one engine step per generated token."
            } else {
                "From the batch's start to its last token: the prefill of every prompt, then one decode step per generated token."
            }) }
        { figure("throughput", "Requests", units::si(sv.requests_per_s, "requests/s"), sv.requests_per_s,
            html! { { format!("{} in flight per replica, {}", units::count(sv.in_flight), units::things(sv.replicas, "replica")) } },
            if inflight {
                "Requests the whole cluster completes per second: requests in flight / end-to-end latency (Little's law), over every replica."
            } else {
                "Requests the whole cluster completes per second: batch x replicas / end-to-end latency (static batching)."
            }) }
    </> }
}

/// The serving figures: latencies, token throughput, the batch that fits, and how the engine
/// batches.
fn serving_figures(sv: &Serving) -> Html {
    let inflight = sv.batching == Batching::InFlight;
    html! { <>
        <dl class="headline" id="serving-figures">
            { figure("ttft", "Time to first token", units::duration(sv.ttft_s), sv.ttft_s,
                html! { { if inflight {
                    format!("{} prompt tokens in chunks of at most {} per step", sv.input_tokens, sv.step_tokens)
                } else {
                    format!("prefill of {} prompt tokens x {} requests", sv.input_tokens, sv.batch)
                } } },
                if inflight {
                    "How long a request waits for its first token: the engine steps that carry its prompt's chunks, plus the wait when prompts arrive faster than the steps' token budget takes them."
                } else {
                    "How long a request waits for its first token: the prefill of every prompt in the batch."
                }) }
            { figure("tpot", "Time per output token", units::duration(sv.tpot_s), sv.tpot_s,
                html! { { format!("{} tokens, end to end {}", sv.output_tokens, units::duration(sv.e2e_s)) } },
                if inflight {
                    "Mean time between two generated tokens of a request: one engine step, which decodes a token for every request in flight and sometimes carries a prompt chunk."
                } else {
                    "Mean time between two generated tokens of a request: one decode step (every weight and the KV cache read once)."
                }) }
            { figure("output-tokens", "Output tokens/s", units::si(sv.output_tokens_per_s, "tokens/s"), sv.output_tokens_per_s,
                html! { <span id="output-tokens-per-gpu" data-value={sv.output_tokens_per_s_per_gpu.to_string()}>{ format!("{} per GPU, {}", units::si(sv.output_tokens_per_s_per_gpu, "tokens/s"), units::si(sv.requests_per_s, "requests/s")) }</span> },
                "Generated tokens per second over the whole cluster: requests completed per second x output tokens.") }
            { if inflight {
                figure("in-flight", "Requests in flight", format!("{} requests", units::count(sv.in_flight)), sv.in_flight,
                    html! { { format!("of {} asked; the KV cache holds {} ({} per token per GPU)", sv.batch, sv.max_batch, units::bytes(sv.kv_bytes_per_token)) } },
                    "Requests per replica the engine keeps in flight: the batch, or fewer when the KV pages left after the weights and one full step's activations hold fewer (at their average length).")
            } else {
                figure("max-batch", "Largest batch that fits", format!("{} requests", sv.max_batch), sv.max_batch as f64,
                    html! { { format!("KV cache {} per token per GPU", units::bytes(sv.kv_bytes_per_token)) } },
                    "Requests per replica whose KV cache (prompt + output tokens) fits in HBM next to the weights.")
            } }
        </dl>
        <p class="help" id="serving-batching">{ crate::wording::batching(sv) }</p>
    </> }
}

/// A sentence for something that limits or invalidates the result.
fn limit_line(l: &Limit) -> Html {
    match l {
        Limit::DoesNotFit { need_bytes, capacity_bytes, largest, largest_bytes } => {
            html! {
                <p class="error-msg limit" id="limit-memory" role="alert">{ format!(
                    "Does not fit: this plan needs {} per GPU and the GPU has {}. The largest part is {} ({}). Try activation recomputation, a smaller micro-batch, a higher ZeRO stage, or more tensor or pipeline parallelism.",
                    units::bytes(*need_bytes), units::bytes(*capacity_bytes), largest.label().to_lowercase(), units::bytes(*largest_bytes)) }</p>
            }
        }
        Limit::Overloaded { asked_per_s, most_per_s } => html! {
            <p class="error-msg limit" id="limit-overloaded" role="alert">{ crate::wording::overloaded(*asked_per_s, *most_per_s) }</p>
        },
        Limit::InputBound { loader_samples_per_s, compute_samples_per_s } => html! {
            <p class="error-msg limit" id="limit-input" role="status">{ format!(
                "Input-bound: the data loader delivers {} and the GPUs could process {}; the GPUs wait for data.",
                units::si(*loader_samples_per_s, "samples/s"), units::si(*compute_samples_per_s, "samples/s")) }</p>
        },
        Limit::HostBound { gpu_s, host_s, tp } => html! {
            <p class="error-msg limit" id="limit-host" role="status">{ format!(
                "Host-bound: a layer's forward pass gives each GPU {} of work, and the host needs {} to issue it (Python, PyTorch, the framework), so the GPUs wait. A larger micro-batch or less tensor parallelism gives each block more work; CUDA graphs or a compiled model issue it faster.{}",
                units::duration(*gpu_s), units::duration(*host_s),
                if *tp == 8 { format!(" {}", crate::accuracy::TP8_HOST_NOTE) } else { String::new() }) }</p>
        },
    }
}

fn legend(r: &Report) -> Html {
    // The categories this report has (reference mode has no optimizer, P2P or idle time).
    let shown = Category::ALL
        .into_iter()
        .filter(|c| r.totals.get(*c) > 0.0 || matches!(c, Category::Gemm | Category::AllReduce));
    html! {
        <ul class="legend" aria-label="Colours">
            { for shown.map(|c| html! {
                <li><span class="swatch" style={format!("background:{}", charts::css(charts::category_rgb(c)))}></span>{ if c == Category::Idle { "idle (pipeline bubble, input)" } else { c.label() } }</li>
            }) }
            <li><span class="swatch" style={format!("background:{}", charts::css(charts::EXPOSED_RGB))}></span>{ "exposed communication" }</li>
        </ul>
    }
}

fn memory_note(g: &Evaluated) -> Html {
    let m = &g.report.memory;
    html! {
        <>
            <ul class="legend">
                { for m.parts.iter().map(|(c, b)| html! {
                    <li><span class="swatch" style={format!("background:{}", charts::css(charts::component_rgb(*c)))}></span>{ format!("{} {}", c.label(), units::bytes(*b)) }</li>
                }) }
                <li><span class="swatch line"></span>{ format!("capacity {}", units::bytes(m.capacity_bytes)) }</li>
            </ul>
            { if m.total_bytes > m.capacity_bytes && g.report.utilization.is_none() {
                html! { <p class="error-msg">{ "The weights alone exceed this GPU's memory: such a plan would not run (MAD-Max paper mode does not check it, quirk Q23)." }</p>
            } } else { html! {} } }
            { if g.report.utilization.is_some() {
                html! { <p class="help">{ "The default model counts, per GPU of the busiest pipeline stage: 16-bit weights and gradients (fp32 gradients where the framework keeps them so, as Megatron-LM does for bf16), Adam's fp32 master weights and two moments (12 bytes per parameter), each divided by the data-parallel degree from its ZeRO stage on; with FP8 training, FP8 copies of the blocks' weights (2 bytes per parameter); the activations each layer keeps for the backward pass (Korthikanti et al. 2022; dropout masks only when the model trains with dropout; the GEMM inputs in 1 byte with FP8 training) times the micro-batches in flight, less what recomputation drops; the last stage's logits, with an fp32 copy unless the loss is a fused cross-entropy; communication buffers and about 2 GB of CUDA and library workspace." }</p> }
            } else { html! {} } }
        </>
    }
}

#[derive(Properties, PartialEq)]
struct LongestProps {
    good: Rc<Evaluated>,
    selected: Option<usize>,
    dispatch: Dispatch,
}

/// The longest op of each kind (block, op kind, pass) as buttons: a keyboard way into the
/// explain view, and a first answer to "what takes the time" (found once per evaluation).
#[function_component(LongestOps)]
fn longest_ops(p: &LongestProps) -> Html {
    let idx = use_memo(p.good.clone(), |g| super::timeline::longest_of_each_kind(&g.report));
    html! {
        <div class="longest" aria-label="Longest ops">
            <span class="help">{ "Longest op of each kind: " }</span>
            { for idx.iter().take(8).map(|&i| {
                let op = &p.good.report.timeline[i];
                let d = p.dispatch.clone();
                let current = p.selected == Some(i);
                html! {
                    <button class={classes!("chip", current.then_some("current"))} aria-pressed={current.to_string()}
                        onclick={Callback::from(move |_| d.emit(Action::SelectOp(Some(i))))}>
                        <span class="swatch" style={format!("background:{}", charts::css(charts::category_rgb(op.name.category())))}></span>
                        { format!("{} {}", op.name, units::duration(op.duration_s)) }
                    </button>
                }
            }) }
        </div>
    }
}

fn op_details(state: &State, g: &Evaluated) -> Html {
    let Some(op) = state.selected_op.and_then(|i| g.report.timeline.get(i)) else {
        return html! { <p class="help" id="op-details">{ "Point at an op in the timeline to see it; click it (or one of the longest ops) to see how its duration is computed." }</p> };
    };
    let Some(e) = explain(&g.scenario, &op.name) else { return html! {} };
    let show = |v: f64, u: Unit| match u {
        Unit::Count => units::count(v),
        Unit::Params => format!("{} params", units::count(v)),
        Unit::Bytes => units::bytes(v),
        Unit::BytesPerElement => format!("{v} B"),
        Unit::Flops => units::si(v, "FLOP"),
        Unit::FlopsPerS => units::si(v, "FLOP/s"),
        Unit::BytesPerS => units::bytes_per_s(v),
        Unit::Seconds => units::duration(v),
    };
    // The formula with the numbers in place of the symbols.
    let mut substituted = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if let Some(t) = e.terms.iter().find(|t| t.symbol == word.as_str()) {
            out.push_str(&show(t.value, t.unit));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for ch in e.formula.chars() {
        if ch.is_alphanumeric() || ch == '_' {
            word.push(ch);
        } else {
            flush(&mut word, &mut substituted);
            substituted.push(ch);
        }
    }
    flush(&mut word, &mut substituted);
    html! {
        <div class="explain" id="op-details">
            <h3><code>{ op.name.to_string() }</code>{ format!(": {}", e.what) }</h3>
            <p>{ format!("starts at {}, lasts {}, ends at {}", units::duration(op.start_s), units::duration(op.duration_s), units::duration(op.end_s())) }</p>
            <p class="formula"><code>{ e.formula }</code></p>
            <p class="formula" id="op-formula">{ format!("= {substituted} = {}", units::duration(e.seconds)) }</p>
            <table class="terms">
                <tbody>{ for e.terms.iter().map(|t| html! { <tr><th><code>{ t.symbol }</code></th><td>{ show(t.value, t.unit) }</td><td>{ t.meaning }</td></tr> }) }</tbody>
            </table>
            { e.note.map(|n| html! { <p class="help">{ n }</p> }).unwrap_or_default() }
        </div>
    }
}

fn formulas(g: &Evaluated) -> Html {
    let r = &g.report;
    let s = &g.scenario;
    let passes = if matches!(s.task.kind, TaskKind::Inference) { 1.0 } else { 3.0 };
    let peak = crate::engine::report::peak_flops_per_s(s);
    html! {
        <details class="card" id="how">
            <summary><h2>{ "How these numbers come about" }</h2></summary>
            <ul class="derivation">
                <li>{ format!("Iteration time = when the last op of either stream ends = {}.", units::duration(r.iteration_s)) }</li>
                { if r.idle_s > 0.0 { html! {
                    <li>{ format!("Exposed communication = iteration time - compute time - idle time = {} - {} - {} = {} (every moment the computation stream waits for communication). Idle time is the pipeline bubble and any wait for input.",
                        units::duration(r.iteration_s), units::duration(r.compute_s), units::duration(r.idle_s), units::duration(r.exposed_comm_s)) }</li>
                } } else { html! {
                    <li>{ format!("Exposed communication = iteration time - compute time = {} - {} = {} (every moment the computation stream waits).",
                        units::duration(r.iteration_s), units::duration(r.compute_s), units::duration(r.exposed_comm_s)) }</li>
                } } }
                <li>{ format!("Overlapped communication = communication - exposed = {} - {} = {}.",
                    units::duration(r.comm_s), units::duration(r.exposed_comm_s), units::duration(r.overlapped_comm_s)) }</li>
                <li>{ format!("Throughput = global batch / iteration time = {} / {} = {}.",
                    r.global_batch, units::duration(r.iteration_s), units::si(r.throughput_samples_per_s, "samples/s")) }</li>
                { match &r.utilization {
                    Some(u) => html! {
                        <li>{ format!("{} = {} / ({} x {} x {}) = {} (hardware FLOPs utilisation, recomputation included: {}).",
                            u.formula, units::si(u.model_flops, "FLOP"), units::duration(r.iteration_s), s.system.num_devices, units::si(u.peak_flops_per_s, "FLOP/s"), units::percent(u.mfu), units::percent(u.hfu)) }</li>
                    },
                    None => html! {
                        <li>{ format!("MFU = FLOPs per sample x global batch x {} / (iteration time x peak x GPUs) = {} x {} x {} / ({} x {} x {}) = {}.",
                            passes, units::si(r.model.flops_per_sample, "FLOP"), r.global_batch, passes, units::duration(r.iteration_s), units::si(peak, "FLOP/s"), s.system.num_devices, units::percent(r.mfu(s))) }</li>
                    },
                } }
            </ul>
            <p class="help">{ "Click any op in the timeline for its own formula. The MAD-Max model runs ops on two streams per GPU: GEMMs and embedding lookups on the computation stream, collectives on the communication stream; an op starts when its stream is free and the ops it needs have ended." }</p>
        </details>
    }
}

// ---------------------------------------------------------------------------------------------
// Charts

#[derive(Clone, Copy, PartialEq)]
enum Axis {
    Gpus,
    Batch,
}

/// A chart drawn from the report alone.
#[derive(Clone, Copy, PartialEq)]
enum ChartKind {
    Breakdown,
    Memory,
}

#[derive(Properties, PartialEq)]
struct ChartProps {
    kind: ChartKind,
    good: Rc<Evaluated>,
    width: u32,
}

#[function_component(Chart)]
fn chart(p: &ChartProps) -> Html {
    let version = *use_memo(p.good.clone(), |_| canvas::next_version());
    // Where the memory chart drew each part, for pointing at it.
    let placed = (*use_memo(version, |_| Rc::new(canvas::Placed::default()))).clone();
    let (kind, good) = (p.kind, p.good.clone());
    let drawn = placed.clone();
    let draw: Draw = Rc::new(move |c, t| match kind {
        ChartKind::Breakdown => charts::breakdown(c, t, &good.report),
        ChartKind::Memory => charts::memory(c, t, &good.report, &drawn),
    });
    let r = &p.good.report;
    // Pointing at a part of the memory bar says what it is and how much.
    let pick = (p.kind == ChartKind::Memory).then(|| {
        let said = r
            .memory
            .parts
            .iter()
            .map(|(part, bytes)| {
                format!(
                    "{}: {} per GPU, {} of the GPU's {}",
                    part.label(),
                    units::bytes(*bytes),
                    units::percent(bytes / r.memory.capacity_bytes),
                    units::bytes(r.memory.capacity_bytes)
                )
            })
            .collect();
        canvas::bar_pick(placed.clone(), said)
    });
    let (id, label, head, rows): (&str, String, Vec<&str>, Vec<Vec<String>>) = match p.kind {
        ChartKind::Breakdown => (
            "chart-breakdown",
            "Bars: all op times back to back, and the iteration as overlapped on two streams.".to_owned(),
            vec!["time", "s", "share of the iteration"],
            Category::ALL
                .into_iter()
                .filter(|c| r.totals.get(*c) > 0.0)
                .map(|c| (c.label(), r.totals.get(c)))
                .chain([("exposed communication", r.exposed_comm_s.max(0.0)), ("iteration", r.iteration_s)])
                .map(|(l, t)| vec![l.to_owned(), units::duration(t), units::percent(t / r.iteration_s)])
                .collect(),
        ),
        ChartKind::Memory => (
            "chart-memory",
            format!(
                "Weights per GPU {} of {} HBM.",
                units::bytes(r.memory.total_bytes),
                units::bytes(r.memory.capacity_bytes)
            ),
            vec!["part", "bytes per GPU"],
            r.memory
                .parts
                .iter()
                .map(|(p, b)| vec![p.label().to_owned(), units::bytes(*b)])
                .chain([vec!["HBM capacity".to_owned(), units::bytes(r.memory.capacity_bytes)]])
                .collect(),
        ),
    };
    html! {
        <Canvas id={id} label={AttrValue::from(label)} {draw} {version} width={p.width} {pick}>
            { numbers(&head, &rows) }
        </Canvas>
    }
}

/// The numbers a chart plots, as a table (the chart's text alternative).
fn numbers(head: &[&str], rows: &[Vec<String>]) -> Html {
    html! {
        <details class="chart-data">
            <summary>{ "The numbers" }</summary>
            <table>
                <thead><tr>{ for head.iter().map(|h| html! { <th scope="col">{ *h }</th> }) }</tr></thead>
                <tbody>{ for rows.iter().map(|row| html! { <tr>{ for row.iter().map(|c| html! { <td>{ c }</td> }) }</tr> }) }</tbody>
            </table>
        </details>
    }
}

/// What a chart of computed points says while they are computed in the background.
const COMPUTING: &str = "computing the other sizes...";

#[derive(Properties, PartialEq)]
struct SweepProps {
    task: SweepTask,
    axis: Axis,
    good: Rc<Evaluated>,
    width: u32,
}

fn sweep_probes((good, task, axis): &(Rc<Evaluated>, SweepTask, Axis)) -> Vec<sweep::Probe> {
    match axis {
        Axis::Gpus => sweep::vs_gpus(&good.doc, *task),
        Axis::Batch => sweep::vs_batch(&good.doc, *task),
    }
}

/// Throughput at other cluster sizes or batches, evaluated in the background.
#[function_component(SweepChart)]
fn sweep_chart(p: &SweepProps) -> Html {
    let points = use_background((p.good.clone(), p.task, p.axis), sweep_probes, sweep::throughput);
    let version = *use_memo((p.good.clone(), points.is_some()), |_| canvas::next_version());
    let (task, axis) = (p.task, p.axis);
    let (id, title, rgb) = match (task, axis) {
        (SweepTask::Pretrain, Axis::Gpus) => ("chart-pretrain-gpus", "Pre-training: throughput vs GPUs", (0, 114, 178)),
        (SweepTask::Pretrain, Axis::Batch) => {
            ("chart-pretrain-batch", "Pre-training: throughput vs batch", (0, 114, 178))
        }
        (SweepTask::Inference, Axis::Gpus) => ("chart-inference-gpus", "Inference: throughput vs GPUs", (213, 94, 0)),
        (SweepTask::Inference, Axis::Batch) => {
            ("chart-inference-batch", "Inference: throughput vs batch", (213, 94, 0))
        }
    };
    let x_desc = if axis == Axis::Gpus { "GPUs" } else { "local batch per GPU" };
    let placed = (*use_memo(version, |_| Rc::new(canvas::PlacedPoints::default()))).clone();
    let drawn = (points.clone(), placed.clone());
    let draw: Draw = Rc::new(move |c, t| match &drawn.0 {
        Some(points) => {
            let look = charts::SweepLook { title, x_desc, rgb, ideal: axis == Axis::Gpus };
            charts::sweep(c, t, &look, points, &drawn.1)
        }
        None => charts::message(c, t, 220, COMPUTING),
    });
    // Pointing at a point says its size and throughput (and, over GPUs, its scaling efficiency).
    let said: Vec<String> = points.as_ref().map_or(Vec::new(), |pts| sweep::point_sentences(pts, axis == Axis::Gpus));
    let pick = canvas::point_pick(placed, said);
    let rows: Vec<Vec<String>> = points
        .iter()
        .flat_map(|v| v.iter())
        .map(|p| {
            vec![
                format!("{}{}", p.x, if p.current { " (this scenario)" } else { "" }),
                p.samples_per_s.map_or("no valid plan".to_owned(), |t| units::si(t, "samples/s")),
            ]
        })
        .collect();
    html! {
        <Canvas id={id} label={AttrValue::from("Throughput at other sizes; the ringed point is the current scenario.")} {draw} {version} width={p.width} {pick}>
            { numbers(&[if axis == Axis::Gpus { "GPUs" } else { "local batch" }, "samples/s"], &rows) }
        </Canvas>
    }
}

#[derive(Properties, PartialEq)]
struct ServingProps {
    good: Rc<Evaluated>,
    width: u32,
}

/// LLM serving: output tokens/s against time per output token, one point per batch, evaluated
/// in the background.
#[function_component(ServingChart)]
fn serving_chart(p: &ServingProps) -> Html {
    let points = use_background(p.good.clone(), |g: &Rc<Evaluated>| sweep::serving(&g.doc), sweep::serve_point);
    let curve = use_memo((p.good.clone(), points.clone()), |(good, points)| {
        points.as_ref().map(|pts| sweep::serving_curve(&sweep::serving(&good.doc), pts))
    });
    let version = *use_memo((p.good.clone(), points.is_some()), |_| canvas::next_version());
    let placed = (*use_memo(version, |_| Rc::new(canvas::PlacedPoints::default()))).clone();
    let drawn = (curve.clone(), placed.clone());
    let draw: Draw = Rc::new(move |c, t| match drawn.0.as_ref() {
        Some(points) => charts::serving(c, t, points, &drawn.1),
        None => charts::message(c, t, 260, COMPUTING),
    });
    let said: Vec<String> = curve.as_ref().as_ref().map_or(Vec::new(), |pts| sweep::serve_sentences(pts));
    let pick = canvas::point_pick(placed, said);
    let rows: Vec<Vec<String>> = curve
        .iter()
        .flatten()
        .map(|p| {
            vec![
                format!("{}{}", p.batch, if p.current { " (this scenario)" } else { "" }),
                units::duration(p.tpot_s),
                units::si(p.tokens_per_s, "tokens/s"),
                (if p.fits { "yes" } else { "no" }).to_owned(),
            ]
        })
        .collect();
    html! {
        <Canvas id="chart-serving" label={AttrValue::from("Output tokens per second against time per output token, one point per batch size; the ringed point is the current batch.")} {draw} {version} width={p.width} {pick}>
            { numbers(&["batch", "time per output token", "output tokens/s", "fits"], &rows) }
        </Canvas>
    }
}

#[derive(Properties, PartialEq)]
struct TimelineProps {
    good: Rc<Evaluated>,
    selected: Option<usize>,
    dispatch: Dispatch,
    width: u32,
}

#[function_component(TimelineChart)]
fn timeline_chart(p: &TimelineProps) -> Html {
    let canvas = use_node_ref();
    let lanes = use_memo(p.good.clone(), |g| Lanes::new(&g.report));
    let geometry = use_mut_ref(TimelineGeometry::default);
    let hover = use_state(|| None::<(usize, f64, f64)>);
    let problem = use_state(|| None::<String>);
    {
        let canvas = canvas.clone();
        let geometry = geometry.clone();
        let problem = problem.clone();
        let lanes = lanes.clone();
        use_effect_with((p.good.clone(), p.selected, p.width), move |(good, selected, _)| {
            if let Some(c) = canvas.cast::<HtmlCanvasElement>() {
                match charts::timeline(&c, &Theme::current(), &good.report, &lanes, *selected) {
                    Ok(g) => {
                        *geometry.borrow_mut() = g;
                        problem.set(None);
                    }
                    Err(e) => problem.set(Some(e)),
                }
            }
        });
    }
    let locate = {
        let canvas = canvas.clone();
        let geometry = geometry.clone();
        let good = p.good.clone();
        let lanes = lanes.clone();
        move |e: &MouseEvent| -> Option<(usize, f64, f64)> {
            let c = canvas.cast::<HtmlCanvasElement>()?;
            let rect = c.get_bounding_client_rect();
            let ratio = c.width() as f64 / rect.width().max(1.0);
            let x = (e.client_x() as f64 - rect.left()) * ratio;
            let y = (e.client_y() as f64 - rect.top()) * ratio;
            let i = geometry.borrow().hit(&good.report, &lanes, x, y)?;
            Some((i, e.client_x() as f64 - rect.left(), e.client_y() as f64 - rect.top()))
        }
    };
    let onmousemove = {
        let hover = hover.clone();
        let locate = locate.clone();
        Callback::from(move |e: MouseEvent| hover.set(locate(&e)))
    };
    let onmouseleave = {
        let hover = hover.clone();
        Callback::from(move |_| hover.set(None))
    };
    let onclick = {
        let d = p.dispatch.clone();
        let last = Rc::new(Cell::new(None::<usize>));
        Callback::from(move |e: MouseEvent| {
            let hit = locate(&e).map(|h| h.0);
            last.set(hit);
            d.emit(Action::SelectOp(hit));
        })
    };
    let tooltip = hover.and_then(|(i, x, y)| {
        let op = p.good.report.timeline.get(i)?;
        Some(html! {
            <div class="tooltip" role="status" style={format!("left:{}px;top:{}px", x + 12.0, y + 12.0)}>
                <strong>{ op.name.to_string() }</strong><br/>
                { format!("{}: starts {}, lasts {}", op.name.category().label(), units::duration(op.start_s), units::duration(op.duration_s)) }
            </div>
        })
    });
    let save = {
        let canvas = canvas.clone();
        Callback::from(move |_| {
            if let Some(url) = canvas.cast::<HtmlCanvasElement>().and_then(|c| c.to_data_url().ok()) {
                dom::download_url("madmax-timeline.png", &url);
            }
        })
    };
    let r = &p.good.report;
    let label = format!(
        "Timeline of {} ops: computation {} busy, communication {} busy, iteration {}.",
        r.timeline.len(),
        units::duration(r.compute_s),
        units::duration(r.comm_s),
        units::duration(r.iteration_s)
    );
    html! {
        <figure class="chart timeline">
            <canvas id="chart-timeline" ref={canvas} role="img" aria-label={label} {onmousemove} {onmouseleave} {onclick}></canvas>
            { tooltip.unwrap_or_default() }
            { problem.as_ref().map(|e| html! { <p class="error-msg">{ e }</p> }).unwrap_or_default() }
            <button class="link png" onclick={save}>{ "PNG" }</button>
        </figure>
    }
}

// ---------------------------------------------------------------------------------------------
// Learn

fn learn(d: &Dispatch, width: u32) -> Html {
    let ls = lessons::lessons();
    html! {
        <main class="learn">
            <nav class="learn-index" aria-label="On this page">
                <a href="#lessons-title">{ "Lessons: why plans behave as they do" }</a>
                <a href="#stories-title">{ "Famous runs: published numbers against the model" }</a>
            </nav>
            <section aria-labelledby="lessons-title">
                <h2 id="lessons-title">{ "Lessons" }</h2>
                <p class="lead">{ "Three short lessons, each a comparison of two plans computed right now in MAD-Max paper mode: the model of the paper, whose simpler accounting lets one effect stand alone. The calculator opens on the default model, which fixes the paper model's quirks and adds what it leaves out (activation memory, the optimizer step, pipeline bubbles, real collectives), so for the same plan it shows other numbers. Open either side in the calculator, in paper mode, to explore its timeline, then switch to the default model to see what changes." }</p>
                { for ls.into_iter().map(|l| lesson(l, d)) }
            </section>
            <super::stories_view::StoriesSection dispatch={d.clone()} {width} />
        </main>
    }
}

/// What the calculator says when a lesson's scenario opens in it.
const LESSON_OPENED: &str = "Opened in MAD-Max paper mode, as the lesson computed it. Switch to the default model above to see the same plan with the paper model's quirks fixed and what it leaves out added.";

fn lesson(l: lessons::Lesson, d: &Dispatch) -> Html {
    let cols = l.variants.iter().map(|v| {
        let open = {
            let d = d.clone();
            let doc = v.doc.clone();
            Callback::from(move |_| {
                d.emit(Action::LoadDoc(doc.clone()));
                d.emit(Action::Notify(LESSON_OPENED.into()));
            })
        };
        let body = match &v.report {
            Ok(r) => {
                let (t, share, a2a, mem) = lessons::figures(r);
                html! {
                    <dl class="lesson-figures">
                        <dt>{ "Iteration time" }</dt><dd>{ units::duration(t) }</dd>
                        <dt>{ "Exposed communication" }</dt><dd>{ units::percent(share) }</dd>
                        <dt>{ "All-to-all time" }</dt><dd>{ units::duration(a2a) }</dd>
                        <dt>{ "Memory per GPU" }</dt><dd>{ units::bytes(mem) }</dd>
                    </dl>
                }
            }
            Err(e) => html! { <p class="error-msg">{ e }</p> },
        };
        html! {
            <div class="variant">
                <h4>{ v.label }</h4>
                { body }
                <button onclick={open}>{ "Open in calculator (paper mode)" }</button>
            </div>
        }
    });
    html! {
        <article class="card lesson" id={format!("lesson-{}", l.id)}>
            <h3>{ l.title }</h3>
            <p>{ l.intro }</p>
            <div class="pair">{ for cols }</div>
            <p class="takeaway">{ l.takeaway }</p>
        </article>
    }
}
