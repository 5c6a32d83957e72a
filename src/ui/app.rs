//! The Yew app's shell: mounting, the crash and framing notices, the views and the calculator's
//! layout, over [`State`] and its reducer. The calculator's form is [`super::inputs`], its
//! results [`super::results`] and their charts [`super::chart_views`]; the learn view is
//! [`super::learn_view`]. Components only render state and dispatch actions; the browser is
//! reached through `dom`.

use super::dom;
use super::inputs::{import_export, mode_switch, model_form, problems, system_form, task_form};
use super::learn_view::learn;
use super::picker::scenario_picker;
use super::results::results;
use super::state::{Action, State, View};
use crate::engine::scenario::Mode as ModelMode;
use crate::{share, units};
use std::rc::Rc;
use yew::prelude::*;

/// Which views a module of the page holds (`handover.rs`): the page's own module the
/// calculator only, the views module every view. The app is generic over it, so that the page's
/// module does not link the other views' code.
pub trait Views: 'static {
    /// Whether this module holds every view.
    const ALL: bool;
    /// What shows for view `view`.
    fn view(view: View, state: &State, d: &Dispatch, width: u32) -> Html;
}

/// The page's own module: the calculator. Another view shows that it loads, with the views
/// module.
pub struct CalculatorOnly;

impl Views for CalculatorOnly {
    const ALL: bool = false;
    fn view(view: View, state: &State, d: &Dispatch, width: u32) -> Html {
        match view {
            View::Calculator => calculator(state, d, width),
            other => html! {
                <main><p class="help" id={super::handover::VIEW_LOADING} role="status">
                    { super::handover::loading(other) }
                </p></main>
            },
        }
    }
}

/// The views module: every view.
pub struct AllViews;

impl Views for AllViews {
    const ALL: bool = true;
    fn view(view: View, state: &State, d: &Dispatch, width: u32) -> Html {
        match view {
            View::Calculator => calculator(state, d, width),
            View::Explorer => {
                html! { <super::explorer_view::ExplorerView good={state.good.clone()} dispatch={d.clone()} {width} /> }
            }
            View::Learn => learn(d, width),
            View::Validation => html! {
                <super::validation_view::ValidationView dispatch={d.clone()} {width} initial={state.runs_filter.clone()} />
            },
            View::Paper => html! { <super::paper_view::PaperView {width} /> },
        }
    }
}

thread_local! {
    /// The first state, computed in the task before the app's first drawing.
    static FIRST: std::cell::RefCell<Option<State>> = const { std::cell::RefCell::new(None) };
    /// Takes this module's app off the page (in the page's module, until it hands the page over).
    static RUNNING: std::cell::RefCell<Option<Box<dyn FnOnce()>>> = const { std::cell::RefCell::new(None) };
}

/// Sends for the views module, which shows `view`: this module's app stays until the views
/// module's arrives, showing that the view loads.
fn hand_over(view: View, carried: super::handover::Carried) {
    super::handover::load(view, &carried, || {
        if let Some(leave) = RUNNING.with(|r| r.borrow_mut().take()) {
            leave();
        }
        // What this module's app left running must not touch the page any more.
        super::background::silence();
    });
}

/// Mounts the page's own module (the calculator) on the page's body.
pub fn start_page() {
    start::<CalculatorOnly>();
}

/// Mounts the views module (every view) on the page's body, in place of the page's module.
pub fn start_views() {
    start::<AllViews>();
}

fn start<V: Views>() {
    let loading = dom::document().and_then(|d| d.get_element_by_id("loading"));
    // Inside another site's frame, a page could be made to click for it: madmax does not run
    // there (hosts that read `_headers` refuse the frame before it loads).
    if dom::framed() {
        if let Some(l) = &loading {
            l.remove();
        }
        show_framed();
        return;
    }
    // The page module holds the calculator only: opened on another view, it sends for the
    // views module and leaves the loading screen up until that one starts.
    if !V::ALL && View::of_query(&dom::query()) != View::Calculator {
        super::handover::load(View::of_query(&dom::query()), &super::handover::Carried::default(), || {});
        return;
    }
    // The first result is computed in this task and drawn in the next, so that neither keeps
    // the page busy for long (a scenario near the op limit takes about as long to compute as
    // the page takes to draw).
    set_crash_hook();
    FIRST.with(|f| *f.borrow_mut() = Some(first_state()));
    gloo::timers::callback::Timeout::new(0, move || {
        // The views module takes the page over from the page module's app, if one runs; the
        // page's own words while the program loaded (index.html) give way to it.
        super::handover::take_over();
        if let Some(l) = &loading {
            l.remove();
        }
        super::background::announce();
        let app = yew::Renderer::<App<V>>::new().render();
        RUNNING.with(|r| *r.borrow_mut() = Some(Box::new(move || app.destroy())));
        // After rendering starts: Yew installs its own (console-only) panic hook when it renders.
        set_crash_hook();
    })
    .forget();
    // Test hook, in test builds only (`make dist-test`): `#test-panic` in the address makes the
    // page panic once it is up, so that the browser tests can see the crash notice work.
    #[cfg(feature = "test-hooks")]
    if dom::window().and_then(|w| w.location().hash().ok()).as_deref() == Some("#test-panic") {
        gloo::timers::callback::Timeout::new(300, || panic!("test panic requested by #test-panic")).forget();
    }
}

/// The page's first state: what the address holds, else the scenario this browser kept, with
/// what the page module handed over, if it did.
fn first_state() -> State {
    let saved = dom::saved_scenario().and_then(|q| share::decode(&q).ok());
    let mut s = State::open(share::decode(&dom::query()), saved, View::from_query(&dom::query()));
    if let Some(carried) = super::handover::received() {
        s.carry_over(carried.runs, carried.notice, carried.good.and_then(|q| share::decode(&q).ok()));
    }
    s
}

/// Shows the crash notice on a panic (and says it on the console).
fn set_crash_hook() {
    std::panic::set_hook(Box::new(|info| {
        web_sys::console::error_1(&info.to_string().into());
        show_crash(&info.to_string());
    }));
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

pub(super) type Dispatch = Callback<Action>;

#[function_component(App)]
fn app<V: Views>() -> Html {
    let state = use_reducer(|| FIRST.with(|f| f.borrow_mut().take()).unwrap_or_else(first_state));
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
    // Another view than the calculator, in the page module: the views module takes the page
    // over (the effect above has put the view in the address).
    let good = state.good.clone();
    use_effect_with((state.view, state.runs_filter.clone(), state.notice.clone()), move |(view, runs, notice)| {
        if !V::ALL && *view != View::Calculator {
            let runs = runs.clone().map(|(kind, gpu)| (kind, gpu.to_owned()));
            let notice = notice.clone().map(|n| (n.text, n.is_error));
            let good = good.map(|g| share::encode(&g.doc));
            hand_over(*view, super::handover::Carried { runs, notice, good });
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
    // Each view opens where the user left it. The component runs before the new view is drawn,
    // so the page still shows the view being left: its scroll position is read then, not from
    // scroll events, which arrive a frame late and could be credited to the next view.
    {
        let scrolled = use_mut_ref(|| [0.0f64; View::ALL.len()]);
        let shown = use_mut_ref(|| state.view);
        let leaving = *shown.borrow();
        if leaving != state.view {
            scrolled.borrow_mut()[leaving.index()] = dom::scroll_y();
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
                    { tab(View::Paper, "Findings") }
                </nav>
                { match state.mode() {
                    ModelMode::Reference => html! { <span class="mode" id="mode-badge" title="The MAD-Max reference model (Hsia et al., ISCA 2024), reproduced exactly, quirks included.">{ "MAD-Max paper mode" }</span> },
                    ModelMode::Default => html! { <span class="mode" id="mode-badge" title="MAD-Max's model with its quirks fixed and extended: pipelines, ZeRO, recomputation, real collectives.">{ "default model" }</span> },
                } }
                { copy_link_button(&state, &dispatch) }
            </header>
            { notice(&state, &dispatch) }
            {
                V::view(state.view, &state, &dispatch, *width)
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
                { scenario_picker(state, d) }
                { mode_switch(state, d) }
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
/// The figures are the headline's ([`crate::figures`]): a serving scenario's latency and
/// requests, not a step time and samples.
fn mini_summary(state: &State) -> Html {
    let Some(g) = &state.good else { return html! {} };
    let figures = crate::figures::headline(&g.scenario, &g.report);
    // Short: the first figure named by its label's first word ("iteration", "end-to-end"),
    // the throughput by its unit, memory against the GPU's.
    let mem = &g.report.memory;
    let span = |id: &str| {
        figures.iter().find(|f| f.id == id).map(|f| match id {
            "iteration-time" => {
                let word = f.label.split(' ').next().unwrap_or_default().to_lowercase();
                html! { <span>{ format!("{word} {}", f.value) }</span> }
            }
            "memory" => html! { <span class={classes!((!mem.fits()).then_some("bad"))}>{ format!("{} of {} per GPU", f.value, units::bytes(mem.capacity_bytes)) }</span> },
            _ => html! { <span>{ f.value.clone() }</span> },
        })
    };
    html! {
        <p class={classes!("mini-summary", state.stale().then_some("stale"))} id="mini-summary" aria-hidden="true">
            { for ["iteration-time", "throughput", "memory"].into_iter().filter_map(span) }
            { if state.stale() { html! { <span>{ "stale" }</span> } } else { html! {} } }
        </p>
    }
}
