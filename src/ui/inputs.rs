//! The calculator's form: the model, system and task fields with their
//! help and inline errors, the plan editors, the paper/default switch, import and export.
//! Edits dispatch actions; typing applies after a pause.

use super::app::Dispatch;
use super::dom;
use super::export;
use super::fields::{self, Field};
use super::plan;
use super::state::{show_field, Action, State, View};
use crate::doc::Config;
use crate::engine::scenario::Family;
use crate::engine::scenario::Mode as ModelMode;
use crate::{presets, units};
use std::rc::Rc;
use web_sys::{HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement};
use yew::prelude::*;

/// Which model evaluates the scenario: the default model or MAD-Max paper mode.
pub(super) fn mode_switch(state: &State, d: &Dispatch) -> Html {
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
                    // What the model is in a sentence; how far to trust it folded behind
                    // it (in full it was ten lines above the form).
                    html! { <div id="mode-help">
                        <p class="help">{ "Default model: MAD-Max's two-stream model with its bugs fixed, extended with pipelines, ZeRO, recomputation, attention's s² work and latency-bandwidth collectives." }</p>
                        <details class="help" id="mode-accuracy"><summary>{ "How accurate it is" }</summary>
                            <p class="help">{ crate::accuracy::ACCURACY_NOTE }{ " " }
                            <button class="link" id="to-validation" onclick={Callback::from(move |_| d.emit(Action::SetView(View::Validation)))}>{ "See every run" }</button></p>
                        </details>
                    </div> }
                }
                ModelMode::Reference => html! { <p class="help" id="mode-help">{ "MAD-Max paper mode: the paper's Python code reproduced exactly, quirks included, so you get the paper's numbers." }</p> },
            } }
            // A model paper mode does not have (a CNN) is refused here, where the mode is chosen.
            { error_line(state.error_for("task.mode").map(|e| e.message.as_str())) }
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

pub(super) fn problems(state: &State) -> Html {
    if state.errors.is_empty() {
        return html! {};
    }
    html! {
        <div class="card problems" role="alert" id="problems">
            <h2>{ format!("{} problem{} to fix", state.errors.len(), if state.errors.len() == 1 { "" } else { "s" }) }</h2>
            <p class="help">{ "The results on the right are from the last valid scenario and are marked stale until these are fixed." }</p>
            <ul>{ for state.errors.iter().map(|e| match fields::field_of_path(&e.field, state.family()) {
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
    let inputmode = if f.kind == fields::Kind::OptionalText { "text" } else { "decimal" };
    html! {
        <div class={classes!("field", err.map(|_| "invalid"))}>
            <label for={id.clone()}>{ label }</label>
            <input id={id} type="text" {inputmode} autocomplete="off" value={show_field(&state.doc, &f)} placeholder={placeholder}
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

/// Whether the form's sections (model, hardware, task) open unfolded: on a phone they start
/// folded, so the scenario picker and the results are a screen apart, not five (a section
/// the user opens stays open, its `open` unchanged on later renders).
fn unfolded() -> bool {
    !dom::narrow()
}

pub(super) fn model_form(state: &State, d: &Dispatch) -> Html {
    let Ok(p) = presets::all() else { return html! {} };
    let current = p.models.iter().find(|m| m.config == state.doc.model).map(|m| m.id.clone()).unwrap_or_default();
    let family = state.family();
    html! {
        <details class="card" open={unfolded()}>
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
                <p class="help">{ "The model family decides which fields follow: DLRMs (MLPs and embedding tables), LLMs (with or without mixture of experts), vision transformers, and in the default model convolutional networks. Presets are the MAD-Max reference configs and published architectures." }</p>
                { p.model(&current).and_then(|m| m.versus_published.as_ref()).map(|v| html! { <p class="help" id="model-versus">{ v }</p> }).unwrap_or_default() }
            </div>
            { error_line(state.error_for("model.type").map(|e| e.message.as_str())) }
            { for family.map(fields::model_fields).unwrap_or_default().into_iter().map(|f| input(state, d, f)) }
            { match family {
                Some(f) if state.mode() == ModelMode::Default && !fields::default_model_fields(f).is_empty() => html! {
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

pub(super) fn system_form(state: &State, d: &Dispatch) -> Html {
    let Ok(p) = presets::all() else { return html! {} };
    let current = p.systems.iter().find(|s| s.config == state.doc.system).map(|s| s.id.clone()).unwrap_or_default();
    let num = |k: &str| state.doc.num(Config::System, k);
    // The GPU preset whose figures the system has (under `prefix`: "" or "second_").
    let preset = |prefix: &str| {
        let has = |key: &str, v: f64| num(&format!("{prefix}{key}")) == Some(v);
        p.gpus
            .iter()
            .find(|g| has("f16_flops", g.f16_flops) && has("mem_cap", g.mem_cap) && has("mem_bw", g.mem_bw))
            .map(|g| g.id.clone())
    };
    let gpu = preset("").unwrap_or_default();
    let second_gpu = preset("second_");
    let has_second = state.doc.get(Config::System, "second_f16_flops").is_some();
    let per_node = state.per_node_draft.clone().or_else(|| state.per_node().map(|n| n.to_string())).unwrap_or_default();
    let nodes = state.nodes_draft.clone().unwrap_or_else(|| show_field(&state.doc, &NODES));
    let total = state.doc.count(Config::System, "num_devices");
    // Network fields up front; datasheet figures and calibrations folded (open on a problem).
    let (second_nodes, fields): (Vec<Field>, Vec<Field>) =
        fields::system_fields().into_iter().partition(|f| f.key == "second_gpu_nodes");
    let (links, details): (Vec<Field>, Vec<Field>) = fields.into_iter().partition(|f| {
        matches!(
            f.key,
            "num_nvlinks"
                | "bw_per_nvlink"
                | "num_ibroce_ports"
                | "ibroce_bw"
                | "nic_latency_s"
                | "num_sites"
                | "wan_bw"
                | "wan_latency_s"
        )
    });
    let details_open = details.iter().any(|f| state.error_for(&f.path()).is_some());
    let shape_err = state
        .error_for("system.gpus_per_node")
        .or_else(|| state.error_for("system.num_nodes"))
        .or_else(|| state.error_for("system.num_devices"));
    html! {
        <details class="card" open={unfolded()}>
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
            <div class="field">
                <label for="second-gpu-type">{ "Second GPU type" }</label>
                <select id="second-gpu-type" onchange={on_select(d, Action::SetSecondGpu)}>
                    <option value="" selected={!has_second}>{ "None: every GPU alike" }</option>
                    { if has_second && second_gpu.is_none() { html! { <option value="as-configured" selected=true>{ "As configured" }</option> } } else { html! {} } }
                    { for p.gpus.iter().map(|g| html! { <option value={g.id.clone()} selected={second_gpu.as_deref() == Some(g.id.as_str())} title={g.source.clone()}>{ &g.label }</option> }) }
                </select>
                <p class="help">{ "A cluster mixing two GPU types (older nodes beside newer ones, or different cards in a consumer cluster): the second type's datasheet figures and NVLinks, on the nodes set below. The default model only." }</p>
            </div>
            // One child whether shown or not: Yew matches unkeyed children from the end, so a
            // child that comes and goes would shift the selects above onto each other's nodes.
            { match second_nodes.into_iter().find(|_| has_second) { Some(f) => input(state, d, f), None => html! {} } }
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

pub(super) fn task_form(state: &State, d: &Dispatch) -> Html {
    let Some(family) = state.family() else {
        return html! { <div class="card"><h2>{ "Task" }</h2><p class="help">{ "Choose a valid model type first." }</p></div> };
    };
    let kind = state.doc.text(Config::Task, "type").unwrap_or("").to_owned();
    let kinds =
        [("pretrain", "Pre-training"), ("finetune", "Fine-tuning"), ("inference", "Inference (forward pass only)")];
    let default_transformer = state.mode() == ModelMode::Default && !family.is_dlrm();
    // The default model's settings, and apart from them the input pipeline's.
    let (how, loader) = fields::task_field_groups(family, kind == "inference", |k| {
        state.doc.get(Config::Task, k).is_some_and(|v| !v.is_null())
    });
    html! {
        <details class="card" open={unfolded()}>
            <summary><h2>{ "Task and plan" }</h2><span class="sub">{ kind.clone() }</span></summary>
            <div class="field">
                <label for="task-type">{ "Task" }</label>
                <select id="task-type" onchange={on_select(d, Action::SetTaskKind)}>
                    // CNNs are not fine-tuned here, encoder-decoders not served.
                    { for kinds.iter().filter(|(v, _)| plan::offers(family, v)).map(|(v, l)| html! { <option value={*v} selected={*v == kind}>{ *l }</option> }) }
                </select>
                <p class="help">{ "Training runs a forward and a backward pass with gradient communication; inference only the forward pass." }</p>
                { error_line(state.error_for("task.type").map(|e| e.message.as_str())) }
            </div>
            { for plan::spec_keys(family).iter().filter(|k| !(default_transformer && **k == "emb_parallel")).map(|k| spec_editor(state, d, k)) }
            { if kind == "finetune" { freeze_editor(state, d, family) } else { html! {} } }
            { if state.mode() == ModelMode::Default { html! {
                <fieldset class="spec" id="default-settings">
                    <legend>{ if kind == "inference" { "How serving runs (default model)" } else { "How training runs (default model)" } }</legend>
                    { for how.into_iter().map(|f| input(state, d, f)) }
                    // The input pipeline's fields in a group of their own (one child slot,
                    // shown or not).
                    { if loader.is_empty() { html! {} } else { html! {
                        <fieldset class="spec" id="input-pipeline">
                            <legend>{ "Input pipeline" }</legend>
                            <p class="help">{ "What feeds the GPUs: a rate you measured, or the decoding of each sample's frames and the reading of its bytes. The slowest part sets the pace; empty, input is not a limit." }</p>
                            { for loader.into_iter().map(|f| input(state, d, f)) }
                        </fieldset>
                    } } }
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
                    { for plan::strategies(key, state.mode(), state.family()).iter().map(|st| html! { <option value={*st} selected={*st == s} title={fields::strategy_help(st)}>{ *st }</option> }) }
                    { if !plan::strategies(key, state.mode(), state.family()).contains(&s.as_str()) { html! { <option value={s.clone()} selected=true>{ s.clone() }</option> } } else { html! {} } }
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
            <legend>{ fields::spec_label(key, state.family()) }</legend>
            { for rows }
            { if n_levels > drawn { html! { <p class="error-msg">{ format!("... and {} more levels, not shown: a plan has at most {} (remove levels above, or import a config with fewer).", n_levels - drawn, crate::engine::scenario::MAX_LEVELS) }</p> } } else { html! {} } }
            <button class="link" onclick={add}>{ "+ add level" }</button>
            { error_line(spec_err.map(|e| e.message.as_str())) }
            <p class="help">{ "Degrees multiply to the GPU count. With two levels, level 0 spans the GPUs of a node (NVLink) and level 1 the nodes (network). " }
                { for plan::strategies(key, state.mode(), state.family()).iter().map(|s| html! { <span class="strategy-help">{ fields::strategy_help(s) }{ " " }</span> }) }
            </p>
            { input(state, d, fields::batch_field(key, state.family())) }
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

pub(super) fn import_export(state: &State, d: &Dispatch) -> Html {
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
            dom::download_text("madmax-timeline.csv", "text/csv", &export::timeline_csv(&g.report, g.critical()));
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
