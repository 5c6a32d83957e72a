//! The explorer page: search settings, a chunked search with progress and cancel, the best plan
//! against the user's, ranked plans, Pareto and co-design charts, cost and energy.
//!
//! One job: the explorer page (its settings, its search, and the views of the plans it found).

use super::canvas::{Canvas, Draw};
use super::charts::{self, Theme};
use super::explorer::{self, CostInputs, Job, FACTORS};
use super::pool::Offload;
use super::state::{Action, Evaluated};
use crate::engine::explore::{self, Formats, Outcome, Resource, Space};
use crate::engine::report;
use crate::engine::scenario::Scenario;
use crate::{presets, units};
use gloo::timers::callback::Timeout;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use web_sys::{HtmlCanvasElement, HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct ExplorerProps {
    pub good: Option<Rc<Evaluated>>,
    pub dispatch: Callback<Action>,
    pub width: u32,
}

/// Settings of the next search.
#[derive(Clone, PartialEq)]
struct Settings {
    /// "as-configured", "pretrain" or "inference".
    task: String,
    /// Empty: the global batch stays the scenario's; else a list of local batches.
    local_batches: String,
    /// LLM serving: the latency limits, ms per output token and ms to the first token (empty:
    /// none).
    max_tpot_ms: String,
    max_ttft_ms: String,
    /// LLM serving: the weight and KV-cache formats to try, comma-separated (empty: the
    /// scenario's).
    weight_formats: String,
    kv_formats: String,
    codesign: bool,
    usd_per_gpu_hour: f64,
    watts_per_gpu: f64,
    /// Workload size (tokens for language models, samples otherwise).
    workload: f64,
    baseline: explorer::Baseline,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            task: "as-configured".into(),
            local_batches: String::new(),
            max_tpot_ms: String::new(),
            max_ttft_ms: String::new(),
            weight_formats: String::new(),
            kv_formats: String::new(),
            codesign: true,
            usd_per_gpu_hour: 4.10,
            watts_per_gpu: 812.5,
            workload: 1e12,
            baseline: explorer::Baseline::Yours,
        }
    }
}

/// What the explorer keeps while the page is open, across visits to other views: the last
/// search (running or finished) with its settings and clock. The view on screen draws it.
#[derive(Default)]
struct Session {
    job: Option<Job>,
    settings: Settings,
    /// When the search started and ended (0 while it runs), ms since the epoch.
    clock: (f64, f64),
    problem: Option<String>,
    /// The scenario the calculator had when the search started.
    searched: Option<Scenario>,
    /// The running search's use of the page's workers.
    offload: Option<Offload>,
    /// Workers the last finished search ran on (0: the page itself).
    threads: usize,
    /// Redraws the explorer while it is on screen.
    redraw: Option<Callback<()>>,
    /// Counts changes, so the charts know when to draw again.
    version: u64,
    /// When the explorer was last drawn, ms since the epoch.
    drawn_ms: f64,
}

thread_local! {
    static SESSION: RefCell<Session> = RefCell::new(Session::default());
}

/// Reads or changes the session; the explorer is drawn again afterwards (outside the borrow,
/// since drawing reads it).
fn change<R>(f: impl FnOnce(&mut Session) -> R) -> R {
    update(|s| (f(s), true))
}

/// Changes the session; `f` also says whether to draw the explorer again.
fn update<R>(f: impl FnOnce(&mut Session) -> (R, bool)) -> R {
    let (out, redraw) = SESSION.with(|s| {
        let mut s = s.borrow_mut();
        let (out, draw) = f(&mut s);
        if draw {
            s.version += 1;
            s.drawn_ms = js_sys::Date::now();
        }
        (out, s.redraw.clone().filter(|_| draw))
    });
    if let Some(r) = redraw {
        r.emit(());
    }
    out
}

/// How often a running search redraws its progress and partial results, ms: drawing them
/// takes the page tens of ms, which would otherwise delay the workers' next batches.
const REDRAW_MS: f64 = 250.0;

thread_local! {
    /// Whether a turn of the search is already scheduled.
    static SCHEDULED: Cell<bool> = const { Cell::new(false) };
}

/// Schedules a turn of the search: the page's workers' answers taken back and more handed to
/// them, or, when no worker can take it, slices of about 12 ms on the page, yielding to the
/// browser between them. It goes on while another view is on screen.
fn schedule() {
    if SCHEDULED.with(|s| s.replace(true)) {
        return;
    }
    Timeout::new(0, move || {
        SCHEDULED.with(|s| s.set(false));
        let t0 = js_sys::Date::now();
        let again = update(|s| {
            let Some(j) = s.job.as_mut() else { return (false, true) };
            let busy = s.offload.as_ref().map_or(0, |o| o.turn(j));
            if busy == 0 {
                // One plan at a time: a slice ends within one evaluation of 12 ms.
                while js_sys::Date::now() - t0 < 12.0 && !j.finished() {
                    j.step(1);
                }
            }
            if j.finished() {
                s.clock.1 = js_sys::Date::now();
                s.threads = s.offload.as_ref().map_or(0, Offload::workers);
                s.offload = None;
            }
            let draw = j.finished() || js_sys::Date::now() - s.drawn_ms >= REDRAW_MS;
            // With workers busy, their answers wake the search.
            (busy == 0 && !j.finished(), draw)
        });
        if again {
            schedule();
        }
    })
    .forget();
}

/// Changes one setting of the next search.
fn edit_settings(f: impl FnOnce(&mut Settings)) {
    change(|s| f(&mut s.settings));
}

/// Starts a search of `good`'s scenario with the session's settings.
fn start_search(good: &Evaluated) {
    let settings = SESSION.with(|s| s.borrow().settings.clone());
    let problem = |text: &str| change(|s| s.problem = Some(text.to_owned()));
    let base = match explorer::searched(&good.scenario, &settings.task) {
        Ok(base) => base,
        Err(why) => return problem(&format!("Not searched: {why}.")),
    };
    // A latency limit in ms: empty is none, anything but a positive number is a problem.
    let limit_s = |text: &str| -> Result<Option<f64>, ()> {
        match text.trim() {
            "" => Ok(None),
            t => t.parse::<f64>().ok().filter(|ms| ms.is_finite() && *ms > 0.0).map(|ms| Some(ms / 1e3)).ok_or(()),
        }
    };
    let Ok(max_tpot_s) = limit_s(&settings.max_tpot_ms) else {
        return problem("Latency limit: a positive number of milliseconds per output token, such as 50.");
    };
    let Ok(max_ttft_s) = limit_s(&settings.max_ttft_ms) else {
        return problem("First-token limit: a positive number of milliseconds, such as 2000.");
    };
    let space = if settings.local_batches.trim().is_empty() {
        Space::fixed_global(&base)
    } else {
        let list: Option<Vec<u64>> = settings
            .local_batches
            .split(',')
            .map(|x| x.trim().parse::<u64>().ok().filter(|n| *n >= 1 && *n <= 1 << 24))
            .collect();
        match list {
            Some(l) if !l.is_empty() && l.len() <= 16 => Space::local(l),
            _ => {
                return problem("Local batches: a comma-separated list of up to 16 whole numbers, such as 1, 2, 4, 8.")
            }
        }
    };
    let (weights, kv) = match (Formats::parse_list(&settings.weight_formats), Formats::parse_list(&settings.kv_formats))
    {
        (Ok(w), Ok(k)) => (w, k),
        (Err(e), _) => return problem(&format!("Weight formats to try: {e}.")),
        (_, Err(e)) => return problem(&format!("KV-cache formats to try: {e}.")),
    };
    let space = Space { max_tpot_s, max_ttft_s, formats: Formats { weights, kv }, ..space };
    let job = Job::new(&base, &space, settings.codesign);
    let started = change(|s| {
        if let Some(j) = s.job.as_mut() {
            j.cancel();
        }
        s.searched = Some(good.scenario.clone());
        match job {
            Ok(j) => {
                s.offload = Some(Offload::new(&j, good.doc.to_json(), &settings.task, schedule));
                s.job = Some(j);
                s.problem = None;
                s.clock = (js_sys::Date::now(), 0.0);
                true
            }
            Err(too_big) => {
                s.problem = Some(format!("Not searched: {too_big}."));
                s.job = None;
                s.offload = None;
                false
            }
        }
    });
    if started {
        schedule();
    }
}

#[function_component(ExplorerView)]
pub fn explorer_view(p: &ExplorerProps) -> Html {
    // Drawn again when the session changes, while on screen.
    let update = use_force_update();
    use_effect_with((), move |_| {
        super::pool::warm();
        SESSION.with(|s| s.borrow_mut().redraw = Some(Callback::from(move |_| update.force_update())));
        || SESSION.with(|s| s.borrow_mut().redraw = None)
    });

    let Some(good) = p.good.clone() else {
        return html! { <main class="explorer"><div class="card"><p>{ "Make the scenario valid in the calculator first." }</p></div></main> };
    };
    let start = {
        let good = good.clone();
        Callback::from(move |_| start_search(&good))
    };
    let cancel = Callback::from(move |_| {
        change(|s| {
            if let Some(j) = s.job.as_mut() {
                j.cancel();
            }
            s.offload = None;
            s.clock.1 = js_sys::Date::now();
        })
    });

    SESSION.with(|session| {
        let s = session.borrow();
        let results = match s.job.as_ref() {
            None => {
                html! { <div class="card"><p class="help">{ "Press \"Search every plan\" to evaluate every parallelization plan the model accepts for this model on this cluster, and see which one is fastest." }</p></div> }
            }
            Some(j) => {
                // The results stay while the user visits other views; say when the scenario has
                // changed since (an edit, or a plan applied).
                let changed = s.searched.as_ref().is_some_and(|sc| *sc != good.scenario);
                html! {
                    <>
                        { if changed { html! {
                            <div class="card"><p class="help" id="explore-earlier" role="status">{ "These results are for the scenario as it was when you searched; it has changed since (an edit or an applied plan). Search again to explore the current one." }</p></div>
                        } } else { html! {} } }
                        { results(j, &s.settings, (s.clock, s.threads), &p.dispatch, s.version, p.width) }
                    </>
                }
            }
        };
        let running = s.job.as_ref().is_some_and(|j| !j.finished());
        html! {
            <main class="explorer">
                { settings_card(&s.settings, &good, start, cancel, running, s.problem.as_deref()) }
                { results }
            </main>
        }
    })
}

/// An optional latency limit of a serving search, in ms (empty: none).
/// An optional text setting of the search: `(id, label, placeholder)`, its value, its help.
fn text_field(
    (id, label, placeholder): (&'static str, &'static str, &'static str),
    value: &str,
    onchange: Callback<Event>,
    help: &'static str,
) -> Html {
    let inputmode = if placeholder == "no limit" { "decimal" } else { "text" };
    html! {
        <div class="field">
            <label for={id}>{ label }</label>
            <input id={id} type="text" {inputmode} {placeholder} value={value.to_owned()} {onchange} />
            <p class="help">{ help }</p>
        </div>
    }
}

/// A number typed in a setting ("2,048", "2k", "1e12"), if the text is one.
fn typed_number(text: &str) -> Option<f64> {
    super::state::plain_number(text).parse::<f64>().ok().filter(|x| x.is_finite())
}

fn settings_card(
    s: &Settings,
    good: &Evaluated,
    start: Callback<MouseEvent>,
    cancel: Callback<MouseEvent>,
    running: bool,
    problem: Option<&str>,
) -> Html {
    let set = |f: fn(&mut Settings, String)| {
        Callback::from(move |e: Event| {
            let v = e
                .target_dyn_into::<HtmlInputElement>()
                .map(|i| i.value())
                .or_else(|| e.target_dyn_into::<HtmlSelectElement>().map(|s| s.value()));
            if let Some(v) = v {
                edit_settings(|s| f(s, v));
            }
        })
    };
    let sc = &good.scenario;
    let serving = good.report.serving.is_some();
    let tokens = report::tokens_per_sample(sc).is_some();
    let prices = presets::all().map(|p| p.prices.clone()).unwrap_or_default();
    let chosen = prices
        .iter()
        .find(|p| p.usd_per_gpu_hour == s.usd_per_gpu_hour && p.watts_per_gpu == s.watts_per_gpu)
        .map(|p| p.id.as_str());
    let on_price = {
        let prices = prices.clone();
        Callback::from(move |e: Event| {
            let Some(sel) = e.target_dyn_into::<HtmlSelectElement>() else { return };
            if let Some(pr) = prices.iter().find(|p| p.id == sel.value()) {
                edit_settings(|s| {
                    s.usd_per_gpu_hour = pr.usd_per_gpu_hour;
                    s.watts_per_gpu = pr.watts_per_gpu;
                });
            }
        })
    };
    let codesign = Callback::from(move |e: Event| {
        if let Some(i) = e.target_dyn_into::<HtmlInputElement>() {
            edit_settings(|s| s.codesign = i.checked());
        }
    });
    html! {
        <div class="card explorer-settings">
            <h2>{ format!("Explore plans for {} on {} GPUs", sc.model().name, sc.system().num_devices) }</h2>
            // What the search tries: a sentence, and the whole list behind it (on a phone the
            // list would fill the first screen).
            { if sc.model().arch.family() == crate::engine::scenario::Family::Cnn { html! {
                <p class="help">{ "A convolutional network trains data parallel here: every GPU holds the whole network, so the search tries the batch per GPU (the global batch fixed, or the local batches you list), each with its gradients reduced during the backward pass or after it and, across nodes, by each collective algorithm (ring, tree, two-level). Plans that do not fit in HBM are greyed, never ranked above one that fits." }</p>
            } } else if crate::engine::uses_default_model(sc) { html! {
                <>
                    <p class="help">{ "Tries every way to split this model over these GPUs (tensor, context, expert, data and pipeline parallelism) with the settings that go with it, then the best plans again with overlap, collective and placement options. Plans that do not fit in HBM are greyed, never ranked above one that fits." }</p>
                    <details class="help" id="explore-space"><summary>{ "Everything the search tries" }</summary>
                        <p>{ "Default model: every N-D plan of tensor (within a node, dividing the heads), context (long sequences), expert (MoE), data (plain, fully sharded, or, without a pipeline, hybrid: sharded within a node and replicated across nodes) and pipeline parallelism, nested as Megatron ranks GPUs in training (serving replicas outermost, so pipeline stages share a node); in training each is tried with every power-of-two micro-batch without a pipeline (the largest that fits without recomputation is often the fastest), or with one (at least one micro-batch per stage) its four smallest, whose bubble more micro-batches shrink, and its largest too, for sequences of few tokens, no recomputation, selective (of the attention scores, then of the norms and a mixture of experts' activation too) or full (a heavier one only where a lighter one does not fit), ZeRO stage 0, 1 or 2 with plain data parallelism, sequence parallelism with tensor parallelism (and for a mixture of experts, each expert split by every tensor-parallel rank or whole on each), the plain or the interleaved pipeline schedule (2 to 8 chunks per GPU, each count that makes the busiest stage's largest chunk smaller), and the overlap options on (gradients reduced during the backward pass, tensor-parallel communication overlapped with GEMMs, ZeRO 1/2's updated weights gathered layer by layer during the next forward pass: they hide communication and cost no memory; in FP8 training, weights gathered in FP8: half the bytes), and the best 16 plans that fit (at most two settings of one parallel plan) are tried again with the overlap options off, with the other collective algorithms NCCL can be asked for (ring, tree, two-level; on more than one node), with ZeRO-1 within each node where data parallelism spans nodes (the updated weights gathered over NVLink, for more optimizer states per GPU) and with their levels placed otherwise on the nodes (tensor parallelism kept innermost; each other order that changes which groups share a node, such as the pipeline stages within a node and data parallelism across nodes); where every setting on every plan would take more than half of what one search may (large mixtures of experts, large batches on pipelines), each plan runs first with the task's own settings and those that cost no time (the overlap options, sequence parallelism, ZeRO-1; a pipeline at 4 micro-batches per stage or more), and the 64 most promising with every one (the fastest, and where none fits, the lightest too; only plans that some setting fits in HBM, at least half as fast as the fastest that fits), then the 4 pipelines that do not fit that would run fastest interleaved; recommendation models split their embedding tables table-, row- or column-wise wherever tables are spread over GPUs, with the bottom MLP data-parallel or on one GPU of each table group (as NVIDIA's DLRM runs it); serving plans run in the scenario's number formats, or in each pair of the weight and KV-cache formats you list; a convolutional network trains data parallel: its batch per GPU, when its gradients are reduced and (across nodes) how are its choices. Plans that do not fit in HBM (weights, gradients, optimizer states, activations) are shown greyed, not hidden, and never ranked above one that fits." }</p>
                    </details>
                </>
            } } else { html! {
                <p class="help">{ "MAD-Max paper mode: every plan MAD-Max accepts: each component's strategies (ddp, fsdp, tp, pp; ddp or mp for embeddings) over all GPUs, or within a node x across nodes; global batches that agree. Plans whose weights do not fit in HBM are shown greyed, not hidden." }</p>
            } } }
            <div class="row wrap">
                <div class="field">
                    <label for="explore-task">{ "Search for" }</label>
                    <select id="explore-task" onchange={set(|s, v| s.task = v)}>
                        <option value="as-configured" selected={s.task == "as-configured"}>{ format!("the task as configured ({})", sc.task().kind.config_name()) }</option>
                        <option value="pretrain" selected={s.task == "pretrain"}>{ "pre-training" }</option>
                        <option value="inference" selected={s.task == "inference"}>{ "inference" }</option>
                    </select>
                    <p class="help">{ "Pre-training and inference favour different plans." }</p>
                </div>
                <div class="field">
                    <label for="explore-batches">{ "Local batches (optional)" }</label>
                    <input id="explore-batches" type="text" placeholder={format!("global batch fixed at {}", explore::scenario_global_batch(sc))}
                        value={s.local_batches.clone()} onchange={set(|s, v| s.local_batches = v)} />
                    <p class="help">{ "Empty: every plan processes the same global batch (a fair comparison). A list such as 1, 2, 4, 8 lets the batch vary." }</p>
                </div>
                { if serving { html! { <>
                    { text_field(("explore-latency", "Latency limit (ms per output token, optional)", "no limit"), &s.max_tpot_ms, set(|s, v| s.max_tpot_ms = v),
                        "Serving: plans whose time per output token exceeds this are infeasible (greyed), so the ranking finds the highest throughput that still answers fast enough. 50 ms is about 20 tokens/s per request, faster than people read.") }
                    { text_field(("explore-ttft", "First-token limit (ms, optional)", "no limit"), &s.max_ttft_ms, set(|s, v| s.max_ttft_ms = v),
                        "Serving: plans whose time to first token exceeds this are infeasible too. Big batches and long prompts keep a request waiting for its prefill; chat services aim at about a second or less.") }
                    { text_field(("explore-weight-formats", "Weight formats to try (optional)", "the scenario's"), &s.weight_formats, set(|s, v| s.weight_formats = v),
                        "Serving: a list such as fp16, fp8, int4 tries every plan with each (and each KV-cache format below). Fewer bytes per weight make decode steps faster and leave room for a bigger batch; whether the model's answers stay good enough in FP8 or INT4 is for you to check, so the search tries them only when asked.") }
                    { text_field(("explore-kv-formats", "KV-cache formats to try (optional)", "the scenario's"), &s.kv_formats, set(|s, v| s.kv_formats = v),
                        "Serving: a list such as fp16, fp8. An FP8 cache holds twice the tokens, so more requests fit at once.") }
                </> } } else { html! {} } }
            </div>
            <div class="field">
                <label for="explore-baseline">{ "Compare with" }</label>
                <select id="explore-baseline" onchange={set(|s, v| s.baseline = match v.as_str() {
                    "fsdp" => explorer::Baseline::PlainFsdp,
                    "ddp" => explorer::Baseline::PlainDdp,
                    _ => explorer::Baseline::Yours,
                })}>
                    <option value="yours" selected={s.baseline == explorer::Baseline::Yours}>{ "your plan" }</option>
                    <option value="fsdp" selected={s.baseline == explorer::Baseline::PlainFsdp}>{ "plain FSDP over all GPUs" }</option>
                    <option value="ddp" selected={s.baseline == explorer::Baseline::PlainDdp}>{ "plain DDP over all GPUs" }</option>
                </select>
                <p class="help">{ "The paper reports speed-ups over the best of plain FSDP and DDP; your own plan is the default." }</p>
            </div>
            <label class="check"><input id="explore-codesign" type="checkbox" checked={s.codesign} onchange={codesign} />{ "Also run hardware what-ifs (each resource x0.5 to x8, best plan re-searched)" }</label>
            <div class="row wrap">
                <div class="field">
                    <label for="explore-price-preset">{ "Price preset" }</label>
                    <select id="explore-price-preset" onchange={on_price}>
                        <option value="" selected={chosen.is_none()}>{ "custom price" }</option>
                        { for prices.iter().map(|p| html! {
                            <option value={p.id.clone()} selected={chosen == Some(p.id.as_str())}>{ format!("{} ({} $/GPU-h)", p.label, p.usd_per_gpu_hour) }</option>
                        }) }
                    </select>
                    <p class="help">{ "From the MAD-Max artifact's cloud price sheet; power is each GPU's share of its node's draw." }</p>
                </div>
                <div class="field">
                    <label for="explore-price">{ "Price ($ per GPU-hour)" }</label>
                    <input id="explore-price" type="text" inputmode="decimal" value={s.usd_per_gpu_hour.to_string()}
                        onchange={set(|s, v| if let Some(x) = typed_number(&v).filter(|x| *x >= 0.0) { s.usd_per_gpu_hour = x })} />
                    <p class="help">{ "4.10 for an A100-40GB on cloud A." }</p>
                </div>
                <div class="field">
                    <label for="explore-power">{ "Power (W per GPU)" }</label>
                    <input id="explore-power" type="text" inputmode="decimal" value={s.watts_per_gpu.to_string()}
                        onchange={set(|s, v| if let Some(x) = typed_number(&v).filter(|x| *x >= 0.0) { s.watts_per_gpu = x })} />
                    <p class="help">{ "812.5 W: an A100 node's 6.5 kW over 8 GPUs." }</p>
                </div>
                <div class="field">
                    <label for="explore-workload">{ if serving { "Workload (generated tokens)" } else if tokens { "Workload (tokens)" } else { "Workload (samples)" } }</label>
                    <input id="explore-workload" type="text" inputmode="decimal" value={if s.workload.fract() == 0.0 && s.workload < 9e15 { units::grouped(s.workload as u64) } else { s.workload.to_string() }}
                        onchange={set(|s, v| if let Some(x) = typed_number(&v).filter(|x| *x > 0.0) { s.workload = x })} />
                    <p class="help">{ if serving { "Tokens to generate for users, e.g. 1e12: a trillion tokens served; the cost table says what serving them takes." } else if tokens { "1e12 tokens: a trillion-token pre-training run." } else { "Samples to process, e.g. 5e9." } }</p>
                </div>
            </div>
            { problem.map(|m| html! { <p class="error-msg">{ m }</p> }).unwrap_or_default() }
            <div class="row">
                <button id="explore-start" onclick={start} disabled={running}>{ "Search every plan" }</button>
                <button id="explore-cancel" class="secondary" onclick={cancel} disabled={!running}>{ "Cancel" }</button>
            </div>
        </div>
    }
}

fn results(
    j: &Job,
    s: &Settings,
    (clock, threads): ((f64, f64), usize),
    d: &Callback<Action>,
    tick: u64,
    width: u32,
) -> Html {
    let (done, total) = j.progress();
    let base = j.base();
    let summary = j.summary(s.baseline);
    let elapsed_ms = if clock.1 > 0.0 { clock.1 - clock.0 } else { js_sys::Date::now() - clock.0 };
    let status = if j.cancelled() {
        format!(
            "Cancelled after {} of {} evaluations ({} ms). Partial results below.",
            units::grouped(done as u64),
            units::grouped(total as u64),
            elapsed_ms.round()
        )
    } else if j.finished() {
        format!(
            "Searched {} plans and {} what-if evaluations in {} ms {}.{}{}",
            units::grouped(j.ranked().len() as u64),
            units::grouped((total - j.ranked().len()) as u64),
            elapsed_ms.round(),
            match threads {
                0 => "on the page's own thread".to_owned(),
                1 => "on 1 worker thread".to_owned(),
                n => format!("on {n} worker threads"),
            },
            crate::wording::settings_searched(j.settings_searched()).map_or(String::new(), |n| format!(" {n}")),
            j.codesign_skipped
                .as_ref()
                .map_or(String::new(), |t| format!(" Hardware what-ifs not run: with them, {t}."))
        )
    } else {
        format!("Evaluating {} of {}...", units::grouped(done as u64), units::grouped(total as u64))
    };
    let samples = s.workload / report::tokens_per_sample(base).unwrap_or(1.0);
    let inputs = CostInputs { usd_per_gpu_hour: s.usd_per_gpu_hour, watts_per_gpu: s.watts_per_gpu, samples };
    let gpus = base.system().num_devices;
    let best = summary.ranked.first().filter(|o| o.fits()).cloned();
    let apply = |o: &Outcome| {
        let d = d.clone();
        let keys = crate::doc::plan_task_keys(base, o);
        Callback::from(move |_| d.emit(Action::ApplyPlan(keys.clone())))
    };
    let cost_row = |label: &str, o: &Outcome| {
        let c = explorer::costs(o.throughput_samples_per_s, gpus, &inputs);
        html! {
            <tr><th>{ label.to_owned() }</th><td>{ units::duration(c.time_s) }</td><td>{ format!("{} GPU-h", units::count(c.gpu_hours.round())) }</td>
                <td>{ format!("$ {}", units::count(c.usd.round())) }</td><td>{ units::si(c.kwh * 1e3, "Wh") }</td></tr>
        }
    };
    let baseline_name = match s.baseline {
        explorer::Baseline::Yours => "your plan",
        explorer::Baseline::PlainFsdp => "plain FSDP",
        explorer::Baseline::PlainDdp => "plain DDP",
    };
    // Serving plans complete requests; training plans process samples.
    let per_s = if summary.baseline.tpot_s.is_some() { "requests/s" } else { "samples/s" };
    let headline = match &best {
        Some(b) if j.main_done() => html! {
            <div class="card">
                <dl class="headline">
                    { match summary.speedup {
                        Some(x) => html! {
                            <div class="figure"><dt>{ format!("Best speed-up over {baseline_name}") }</dt>
                                <dd id="speedup" data-value={x.to_string()}>{ format!("{x:.2}") }<span class="unit">{ " x" }</span></dd>
                                <dd class="figure-sub">{ format!("{} vs {}", units::si(b.throughput_samples_per_s, per_s), units::si(summary.baseline.throughput_samples_per_s, per_s)) }</dd></div>
                        },
                        // A speed-up over a plan that cannot run would mean nothing.
                        None => html! {
                            <div class="figure"><dt>{ format!("Can {baseline_name} run?") }</dt>
                                <dd id="baseline-misfit">{ "No" }</dd>
                                <dd class="figure-sub">{ why_not(&summary.baseline) }</dd></div>
                        },
                    } }
                    <div class="figure"><dt>{ "Best plan" }</dt><dd class="plan-text" id="best-plan" data-iteration={b.iteration_s.to_string()} data-throughput={b.throughput_samples_per_s.to_string()} data-tpot={b.tpot_s.map(|t| t.to_string()).unwrap_or_default()} data-ttft={b.ttft_s.map(|t| t.to_string()).unwrap_or_default()}>{ explore::describe_outcome(base, b) }</dd>
                        <dd class="figure-sub"><button id="apply-best" onclick={apply(b)}>{ "Apply in calculator" }</button></dd></div>
                </dl>
                <table class="costs">
                    <thead><tr><th></th><th>{ "time" }</th><th>{ "GPU-hours" }</th><th>{ "cost" }</th><th>{ "energy" }</th></tr></thead>
                    <tbody>{ cost_row("best plan", b) }{ if summary.baseline.fits() { cost_row("baseline", &summary.baseline) } else { html! {} } }</tbody>
                </table>
                <p class="help">{ format!("For {} {} on {gpus} GPUs at {} $/GPU-hour and {} W per GPU.", units::count(s.workload), if summary.baseline.tpot_s.is_some() { "generated tokens" } else if report::tokens_per_sample(base).is_some() { "tokens" } else { "samples" }, s.usd_per_gpu_hour, s.watts_per_gpu) }</p>
            </div>
        },
        _ => html! {},
    };
    // The baseline cannot run and no plan searched can either: say so, not a ranking of plans
    // that cannot run either.
    let headline = if best.is_none() && j.main_done() && !summary.baseline.fits() {
        html! {
            <div class="card"><p class="error-msg" id="no-plan-fits" role="status">{ format!(
                "{} cannot run ({}), and none of the {} plans searched fits either: the model needs more GPUs, GPUs with more memory, or a smaller batch.",
                crate::wording::capitalised(baseline_name),
                why_not(&summary.baseline),
                summary.ranked.len()
            ) }</p></div>
        }
    } else {
        headline
    };
    let serving = summary.baseline.tpot_s.is_some();
    let table = summary.ranked.iter().take(20).enumerate().map(|(i, o)| {
        html! {
            <tr class={classes!((!o.fits()).then_some("misfit"))}>
                <td>{ i + 1 }</td>
                <td>{ explore::describe_outcome(base, o) }</td>
                <td class="num">{ units::si(o.throughput_samples_per_s, if serving { "requests/s" } else { "samples/s" }) }{ o.tokens_per_s.map_or(String::new(), |t| format!(" ({})", units::si(t, "tokens/s"))) }</td>
                <td class="num">{ units::percent(o.mfu) }</td>
                { match (o.ttft_s, o.tpot_s) {
                    (Some(ttft), Some(tpot)) => html! { <>
                        <td class="num">{ units::duration(ttft) }</td>
                        <td class="num">{ units::duration(tpot) }</td>
                    </> },
                    _ => html! { <>
                        <td class="num">{ units::duration(o.iteration_s) }</td>
                        <td class="num">{ units::percent(o.exposed_share) }</td>
                    </> },
                } }
                <td class="num">{ units::bytes(o.memory_bytes) }{ explorer::verdict(o) }</td>
                <td><button class="link" onclick={apply(o)}>{ "apply" }</button></td>
            </tr>
        }
    });
    // Chart data.
    let ranked = summary.ranked.clone();
    let bars: Vec<(String, f64, bool)> = ranked
        .iter()
        .take(12)
        .map(|o| (explore::describe_outcome(base, o), o.throughput_samples_per_s, o.fits()))
        .collect();
    let baseline = summary.baseline.throughput_samples_per_s;
    // Pointing at a bar names its plan in full (its label is cut to the bar) and its figures.
    let bars_placed = Rc::new(super::canvas::Placed::default());
    let bar_said: Vec<String> = ranked
        .iter()
        .take(12)
        .enumerate()
        .map(|(i, o)| {
            format!(
                "{}. {}: {}{}, {} per GPU{}",
                i + 1,
                explore::describe_outcome(base, o),
                units::si(o.throughput_samples_per_s, per_s),
                o.tokens_per_s.map_or(String::new(), |t| format!(" ({})", units::si(t, "tokens/s"))),
                units::bytes(o.memory_bytes),
                explorer::verdict(o)
            )
        })
        .collect();
    let bar_pick = super::canvas::bar_pick(bars_placed.clone(), bar_said);
    let scatter: Vec<(f64, f64, bool)> =
        ranked.iter().map(|o| (o.memory_bytes / 1e9, o.throughput_samples_per_s, o.fits())).collect();
    // Pointing at a dot names its plan and its figures.
    let scatter_said: Vec<String> = ranked
        .iter()
        .map(|o| {
            format!(
                "{}: {}, {} per GPU{}",
                explore::describe_outcome(base, o),
                units::si(o.throughput_samples_per_s, "samples/s"),
                units::bytes(o.memory_bytes),
                explorer::verdict(o)
            )
        })
        .collect();
    let placed = Rc::new(super::canvas::PlacedPoints::default());
    let pick = super::canvas::point_pick(placed.clone(), scatter_said);
    // The front over plans that fit; the capacity line shows where the others lie.
    let fitting: Vec<Outcome> = ranked.iter().filter(|o| o.fits()).cloned().collect();
    let front: Vec<usize> = explorer::memory_pareto(&fitting)
        .into_iter()
        .filter_map(|i| ranked.iter().position(|o| *o == fitting[i]))
        .collect();
    let capacity_gb = base.system().mem_cap_bytes / 1e9;
    let co = j.codesign().to_vec();
    let groups: Vec<charts::SpeedupGroup> = Resource::ALL
        .iter()
        .map(|r| {
            let pts = FACTORS
                .iter()
                .map(|f| {
                    (*f, co.iter().find(|p| p.resource == *r && p.factor == *f).and_then(|p| explorer::speedup(&co, p)))
                })
                .collect();
            (r.label(), r.short_label(), pts)
        })
        .collect();
    // Pointing at a co-design bar gives its point's figures (the bars in the groups' order).
    let co_said: Vec<String> = groups
        .iter()
        .flat_map(|(name, _, pts)| {
            pts.iter().filter_map(move |(f, up)| Some(format!("{name} x{f}: {:.2}x the best plan today", (*up)?)))
        })
        .collect();
    let co_placed = Rc::new(super::canvas::Placed::default());
    let co_pick = super::canvas::bar_pick(co_placed.clone(), co_said);
    // Cost and time at each cluster size (best plan there).
    let sizes: Vec<(f64, f64, f64)> = co
        .iter()
        .filter(|p| p.resource == Resource::ClusterSize)
        .filter_map(|p| {
            let b = p.best.as_ref()?;
            let c = explorer::costs(b.throughput_samples_per_s, p.gpus, &inputs);
            Some((p.gpus as f64, c.time_s / 3600.0, c.usd))
        })
        .collect();
    // Pointing at a cluster size names its GPUs, time and cost (the same in both charts).
    let sizes_said: Vec<String> = sizes
        .iter()
        .map(|s| format!("{} GPUs: {} to train, $ {}", s.0, units::duration(s.1 * 3600.0), units::count(s.2.round())))
        .collect();
    let (gpus_placed, cost_placed) =
        (Rc::new(super::canvas::PlacedPoints::default()), Rc::new(super::canvas::PlacedPoints::default()));
    let gpus_pick = super::canvas::point_pick(gpus_placed.clone(), sizes_said.clone());
    let cost_pick = super::canvas::point_pick(cost_placed.clone(), sizes_said);
    let time_front = |pts: &[(f64, f64, bool)]| -> Vec<usize> {
        // Fewest resources for the least time: sort by x, keep points that lower the time.
        let mut idx: Vec<usize> = (0..pts.len()).collect();
        crate::engine::order::sort_by(&mut idx, |a, b| pts[*a].0.total_cmp(&pts[*b].0));
        let mut best = f64::INFINITY;
        idx.into_iter()
            .filter(|&i| {
                if pts[i].1 < best {
                    best = pts[i].1;
                    true
                } else {
                    false
                }
            })
            .collect()
    };
    let gpus_time: Vec<(f64, f64, bool)> = sizes.iter().map(|s| (s.0, s.1, true)).collect();
    let cost_time: Vec<(f64, f64, bool)> = sizes.iter().map(|s| (s.2, s.1, true)).collect();
    let f_gpu = time_front(&gpus_time);
    let f_cost = time_front(&cost_time);
    // The co-design charts' numbers, as a table (their text alternative).
    let co_rows: Vec<Vec<String>> = co
        .iter()
        .map(|p| {
            vec![
                p.resource.label().to_owned(),
                format!("x{}", p.factor),
                p.gpus.to_string(),
                p.best
                    .as_ref()
                    .map_or("no plan fits".to_owned(), |b| units::si(b.throughput_samples_per_s, "samples/s")),
                explorer::speedup(&co, p).map_or(String::new(), |x| format!("{x:.2}x")),
            ]
        })
        .collect();
    let co_table = html! {
        <details class="chart-data">
            <summary>{ "The numbers" }</summary>
            <table>
                <thead><tr>{ for ["resource", "factor", "GPUs", "best throughput", "speed-up"].iter().map(|h| html! { <th scope="col">{ *h }</th> }) }</tr></thead>
                <tbody>{ for co_rows.iter().map(|row| html! { <tr>{ for row.iter().map(|c| html! { <td>{ c }</td> }) }</tr> }) }</tbody>
            </table>
        </details>
    };
    let progress = html! {
        <div class="card">
            <progress id="explore-progress" max={total.to_string()} value={done.to_string()}></progress>
            <p id="explore-status" class="help" data-ms={elapsed_ms.to_string()} data-finished={j.finished().to_string()} data-threads={threads.to_string()}>{ status }</p>
        </div>
    };
    // Charts are drawn once the search ends (redrawing them at every slice would slow it).
    let v = tick;
    let ranked_table = html! {
        <div class="card">
            <h2>{ "Ranked plans" }</h2>
            <div class="table-wrap">
                <table class="ranked" id="ranked-plans">
                    <thead><tr><th>{ "#" }</th><th>{ "plan" }</th><th>{ "throughput" }</th><th>{ "MFU" }</th>
                        { if serving { html! { <><th>{ "first token" }</th><th>{ "per token" }</th></> } } else { html! { <><th>{ "iteration" }</th><th>{ "exposed comm." }</th></> } } }
                        <th>{ format!("memory/GPU of {}", units::bytes(summary.baseline.capacity_bytes)) }</th><th></th></tr></thead>
                    <tbody>{ for table }</tbody>
                </table>
            </div>
        </div>
    };
    if !j.finished() {
        // Results stream in: the ranking so far; charts when the search ends.
        return html! {
            <>
                { progress }
                { ranked_table }
            </>
        };
    }
    html! {
        <>
            { progress }
            { headline }
            <div class="card charts">
                <Canvas id="chart-ranked" version={v} width={width} pick={bar_pick} draw={Rc::new(move |c: &HtmlCanvasElement, t: &Theme| charts::ranked(c, t, &bars, baseline, &bars_placed)) as Draw} />
                <p class="help">{ "Blue: feasible plans; grey: they exceed HBM (or the latency limit). The orange line is your plan. Point at a bar to see its plan in full." }</p>
            </div>
            <div class="card charts">
                <Canvas id="chart-pareto-memory" version={v} width={width} pick={pick} draw={Rc::new(move |c: &HtmlCanvasElement, t: &Theme| charts::pareto(c, t, &charts::Scatter {
                    title: "Throughput vs memory per GPU",
                    axes: ("memory per GPU (GB)", "samples/s"),
                    points: &scatter,
                    front: &front,
                    formats: (&|x| units::sig3(x), &|y| units::si(y, "").trim().to_owned()),
                    limit_x: Some(capacity_gb),
                    placed: Some(&placed),
                })) as Draw} />
                <p class="help">{ "Each dot a plan: blue fits in HBM, grey does not; point at one to see which. The orange line is the Pareto front among plans that fit: none is both faster and lighter than a plan on it." }</p>
            </div>
            { if !co.is_empty() { html! {
                <>
                    <div class="card charts">
                        <Canvas id="chart-codesign" version={v} width={width} pick={co_pick} draw={Rc::new(move |c: &HtmlCanvasElement, t: &Theme| charts::codesign(c, t, &groups, &co_placed)) as Draw} />
                        <p class="help">{ "Bars from light to dark: x0.5, x1, x2, x4, x8 of one resource (on a narrow screen: FLOPs compute, HBM/s bandwidth, HBM capacity, NVLink, NIC, GPUs), everything else unchanged; speed-up of the best plan at that point, re-searched, over the best plan today. Cluster size keeps the global batch (strong scaling)." }</p>
                        { co_table }
                    </div>
                    <div class="card charts pair">
                        <Canvas id="chart-pareto-gpus" version={v} width={width} pick={gpus_pick} draw={Rc::new(move |c: &HtmlCanvasElement, t: &Theme| charts::pareto(c, t, &charts::Scatter {
                            title: "Time to train vs GPUs",
                            axes: ("GPUs", "hours"),
                            points: &gpus_time,
                            front: &f_gpu,
                            formats: (&|x| format!("{}", x.round()), &|y| units::sig3(y)),
                            limit_x: None,
                            placed: Some(&gpus_placed),
                        })) as Draw} />
                        <Canvas id="chart-pareto-cost" version={v} width={width} pick={cost_pick} draw={Rc::new(move |c: &HtmlCanvasElement, t: &Theme| charts::pareto(c, t, &charts::Scatter {
                            title: "Time to train vs cost",
                            axes: ("dollars", "hours"),
                            points: &cost_time,
                            front: &f_cost,
                            formats: (&|x| units::si(x, "").trim().to_owned(), &|y| units::sig3(y)),
                            limit_x: None,
                            placed: Some(&cost_placed),
                        })) as Draw} />
                    </div>
                </>
            } } else { html! {} } }
            { ranked_table }
        </>
    }
}

/// Why a plan that does not fit cannot run, as a clause.
fn why_not(o: &Outcome) -> String {
    crate::wording::cannot_run(o).unwrap_or_default()
}
