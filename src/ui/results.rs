//! The calculator's results: the headline figures, the serving figures, what limits a result,
//! what published runs of its kind measured, the longest ops and the explain panel.

use super::app::Dispatch;
use super::background::use_background;
use super::chart_views::{Axis, Chart, ChartKind, ServingChart, SweepChart, TimelineChart};
use super::charts;
use super::state::{Action, Evaluated, State};
use super::sweep::SweepTask;
use crate::accuracy::{BandRuns, Expectation};
use crate::engine::ops::Category;
use crate::engine::report::{Limit, Percentiles, Report, Serving};
use crate::engine::scenario::{Batching, PrefillSteps, TaskKind};
use crate::engine::{explain, Unit};
use crate::figures::{self, Figure, Piece};
use crate::units;
use std::rc::Rc;
use yew::prelude::*;

pub(super) fn results(state: &State, d: &Dispatch, width: u32) -> Html {
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
                    <ServingChart good={good.clone()} width={width} measured={state.yardstick.as_ref().and_then(|y| y.serving.map(|m| (m, Rc::<str>::from(y.source.as_str()))))} />
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

/// A headline figure ([`crate::figures`]): the number large, the unit smaller, what it is made
/// of below it, what it means on hover.
fn figure(f: &Figure) -> Html {
    let (number, unit) = f.value.split_once(' ').map_or((f.value.as_str(), ""), |(a, b)| (a, b));
    html! {
        <div class="figure" title={f.help}>
            <dt>{ f.label }</dt>
            // `elementtiming`: the browser records when the figure is first painted (Element
            // Timing), which is how `make bench` times the first result.
            <dd id={f.id} elementtiming={f.id} data-value={f.raw.to_string()}>{ number.to_owned() }<span class="unit">{ format!(" {unit}") }</span></dd>
            <dd class="figure-sub">{ for f.detail.iter().map(piece) }</dd>
        </div>
    }
}

/// A piece of a figure's detail: words, a number marked with its id and raw value, or words
/// with their exact figures on hover (in the alert colour when the result cannot run).
fn piece(p: &Piece) -> Html {
    match p {
        Piece::Text(t) => html! { { t.clone() } },
        Piece::Marked { id, text, raw } => {
            html! { <span id={*id} data-value={raw.to_string()}>{ text.clone() }</span> }
        }
        Piece::Exact { text, exact, warn } => {
            html! { <span class={classes!(warn.then_some("over"))} title={exact.clone()}>{ text.clone() }</span> }
        }
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
    let kind = super::state::task_kind_name(s);
    let sites = match s.system().sites() {
        1 => String::new(),
        n => format!(" in {n} sites"),
    };
    let what = format!(
        "{} {} on {} ({} x {}{sites}), global batch {}",
        s.model().name,
        kind,
        crate::units::things(s.system().num_devices, "GPU"),
        crate::units::things(s.system().num_nodes, "node"),
        s.system().devices_per_node(),
        r.global_batch
    );
    html! {
        <div class="card">
            <p class="scenario" id="scenario-summary">{ what }</p>
            { measured.map(yardstick).unwrap_or_default() }
            <dl class="headline">{ for figures::headline(s, r).iter().map(figure) }</dl>
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
        <span id="runs-sentence">{ e.sentence(s.system().flops_util, p.good.report.iteration_s) }</span>
        { match e {
            // The validation page's filters pick a training band's runs: its kinds of
            // parallelism on its GPU.
            Expectation::Like { band, .. } if band.of == BandRuns::Training => {
                let d = p.dispatch.clone();
                let (kind, gpu) = (band.parallelism.to_owned(), band.gpu);
                html! { <>{ " " }<button class="link" id="see-runs"
                    onclick={Callback::from(move |_| d.emit(Action::ShowRuns(kind.clone(), gpu)))}>
                    { format!("See these {} runs", band.runs) }</button></> }
            }
            Expectation::Like { .. } | Expectation::Unknown(_) => html! {},
        } }
    </p> }
}

/// The serving figures: latencies, token throughput, the batch that fits, and how the engine
/// batches.
fn serving_figures(sv: &Serving) -> Html {
    html! { <>
        <dl class="headline" id="serving-figures">{ for figures::serving(sv).iter().map(figure) }</dl>
        <p class="help" id="serving-batching">{ crate::wording::batching(sv) }</p>
        { sv.percentiles.as_ref().map(|p| percentile_table(p, sv)).unwrap_or_default() }
    </> }
}

/// The latencies' median, 90th and 99th percentiles of in-flight batching.
fn percentile_table(p: &Percentiles, sv: &Serving) -> Html {
    let burst = sv.burst_requests.is_some();
    let row = |id: &'static str, name: &'static str, v: &[f64; 3]| {
        html! { <tr id={id}><th scope="row">{ name }</th>
            { for v.iter().map(|s| html! { <td data-value={s.to_string()}>{ units::duration(*s) }</td> }) }
        </tr> }
    };
    html! { <>
        <div class="table-wrap" tabindex="0" role="region" aria-label="Latency percentiles">
            <table class="summary" id="serving-percentiles">
                <thead><tr><th scope="col">{ "latency" }</th><th scope="col">{ "median" }</th><th scope="col">{ "90th percentile" }</th><th scope="col">{ "99th percentile" }</th></tr></thead>
                <tbody>
                    { row("p-ttft", "first token", &p.ttft_s) }
                    { row("p-between", if burst { "per output token" } else { "between tokens" }, &p.tpot_s) }
                    { row("p-e2e", "end to end", &p.e2e_s) }
                </tbody>
            </table>
        </div>
        <p class="help">{ if burst {
            "Over the burst's requests. The first token mostly waits for a place among the requests in flight: the last requests sent wait for most of the burst. Per output token: each request's (last token - first token) / (tokens - 1)."
        } else if sv.prefill_steps == PrefillSteps::Separate {
            if sv.request_rate.is_some() {
                "Requests arriving at random at this rate wait for the decode step (or round of decode steps) under way to end, from nothing to the whole step, then for the prefill step that takes their prompt. Between tokens, a request waits one decode step (with rounds of several, one round: its tokens come together), and a longer one when prefill steps come between."
            } else {
                "At full load a finished request's slot is refilled when the decode step (or round) under way ends, its prompt prefilled in a step of its own. Between tokens, a request waits one decode step (with rounds of several, one round: its tokens come together), and a longer one when prefill steps come between. Set a request rate to see arrivals at random."
            }
        } else if sv.request_rate.is_some() {
            "Requests arriving at random at this rate (a Poisson stream) sometimes find the steps' room for prompt tokens taken and wait for it: an M/D/1 queue, its tail in Kingman's approximation. Between tokens, a request waits one engine step: a longer one when the step carries a prompt chunk."
        } else {
            "At full load each finished request's slot is refilled at once, so no prompt waits and every request sees the same first token. Between tokens, a request waits one engine step: a longer one when the step carries a prompt chunk. Set a request rate to see the queue."
        } }</p>
    </> }
}

/// A sentence for something that limits or invalidates the result ([`crate::wording::limit`]):
/// an alert when the figures cannot be had, a status otherwise.
fn limit_line(l: &Limit) -> Html {
    let (id, role) = match l {
        Limit::DoesNotFit { .. } => ("limit-memory", "alert"),
        Limit::Overloaded { .. } => ("limit-overloaded", "alert"),
        Limit::InputBound { .. } => ("limit-input", "status"),
        Limit::HostBound { .. } => ("limit-host", "status"),
        Limit::PacedBy { .. } => ("limit-paced", "status"),
    };
    html! { <p class="error-msg limit" id={id} role={role}>{ crate::wording::limit(l) }</p> }
}

fn legend(r: &Report) -> Html {
    // The categories this report has (reference mode has no optimizer, P2P or idle time).
    let shown = Category::ALL
        .into_iter()
        .filter(|c| r.totals.get(*c) > 0.0 || matches!(c, Category::Gemm | Category::AllReduce));
    html! {
        <ul class="legend" aria-label="Colours">
            { for shown.map(|c| html! {
                <li><span class="swatch" style={format!("background:{}", charts::css(charts::category_rgb(c)))}></span>{ if c == Category::Idle { "idle (pipeline bubble, input, other GPUs)" } else { c.label() } }</li>
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
                html! { <p class="help">{ "The default model counts, per GPU of the busiest pipeline stage: 16-bit weights and gradients (fp32 gradients where the framework keeps them so, as Megatron-LM does for bf16), Adam's fp32 master weights and two moments (12 bytes per parameter), each divided by the data-parallel degree from its ZeRO stage on (the optimizer's by the ZeRO-1 group's size where zero_shard_ranks sets one); with FP8 training, FP8 copies of the blocks' weights (2 bytes per parameter); the activations each layer keeps for the backward pass (Korthikanti et al. 2022; dropout masks only when the model trains with dropout; the GEMM inputs in 1 byte with FP8 training) times the micro-batches in flight, less what recomputation drops; the last stage's logits, with an fp32 copy unless the loss is a fused cross-entropy; communication buffers and about 2 GB of CUDA and library workspace." }</p> }
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
            <p id="op-slack">{ state.selected_op.and_then(|i| g.critical().slack_s.get(i)).map(|s| crate::wording::slack(*s, &g.report)).unwrap_or_default() }</p>
            <p id="op-what-if">{ state.selected_op.and_then(|i| crate::wording::twice_as_fast(&g.report, i)).map(|w| {
                if e.terms.iter().any(|t| t.symbol == crate::engine::LAUNCH_WAIT) { format!("{w} {}", crate::wording::LAUNCH_WAIT_CAVEAT) } else { w }
            }).unwrap_or_default() }</p>
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
    let passes = if matches!(s.task().kind, TaskKind::Inference) { 1.0 } else { 3.0 };
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
                            u.formula, units::si(u.model_flops, "FLOP"), units::duration(r.iteration_s), s.system().num_devices, units::si(u.peak_flops_per_s, "FLOP/s"), units::percent(u.mfu), units::percent(u.hfu)) }</li>
                    },
                    None => html! {
                        <li>{ format!("MFU = FLOPs per sample x global batch x {} / (iteration time x peak x GPUs) = {} x {} x {} / ({} x {} x {}) = {}.",
                            passes, units::si(r.model.flops_per_sample, "FLOP"), r.global_batch, passes, units::duration(r.iteration_s), units::si(peak, "FLOP/s"), s.system().num_devices, units::percent(r.mfu(s))) }</li>
                    },
                } }
            </ul>
            <p class="help">{ "Click any op in the timeline for its own formula. The MAD-Max model runs ops on two streams per GPU: GEMMs and embedding lookups on the computation stream, collectives on the communication stream; an op starts when its stream is free and the ops it needs have ended. Where the data-parallel ranks span nodes, the default model runs their weight gathers and gradient reductions on a third stream: they have a communicator and a CUDA stream of their own and use the NICs, so the tensor-parallel collectives on NVLink do not queue behind them." }</p>
        </details>
    }
}
