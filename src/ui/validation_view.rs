//! The validation page: every measured run that ships with madmax, predicted now by the default
//! model, with the summary per source, filters, a predicted-vs-measured chart and a table whose
//! rows open in the calculator. The numbers are [`crate::accuracy::shipped`]'s, the same as
//! `madmax validate`'s.

use super::background::use_background;
use super::canvas::{Canvas, Draw};
use super::charts;
use super::dom;
use super::fetched::{self, Fetched, Loading};
use super::state::{Action, ServingMark, Yardstick};
use crate::accuracy::{self, Metric, RowResult, RunSet, Stats};
use crate::doc::Doc;
use crate::engine::extended::calibration::{GEMM_BW_A100, GEMM_BW_H100};
use crate::{share, units};
use serde_json::Value;
use std::rc::Rc;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub dispatch: Callback<Action>,
    pub width: u32,
    /// The kind of plan and GPU family to open filtered on (the calculator's "runs like this").
    #[prop_or_default]
    pub initial: Option<(String, &'static str)>,
}

/// The filters: source, GPU and kinds of parallelism (empty = all), and the order.
#[derive(Clone, Default, PartialEq)]
struct Filter {
    source: String,
    gpu: String,
    parallelism: String,
    /// Largest absolute error first instead of the files' order.
    worst_first: bool,
    /// Every row in the table, not only the first [`TABLE_ROWS`].
    all_rows: bool,
}

/// Rows the table lists until the reader asks for all of them: hundreds of rows would make the
/// page tens of thousands of pixels long (the chart and the summary show every row).
const TABLE_ROWS: usize = 100;

impl Filter {
    /// `gpu` is a row's GPU cell (`a100-40g`) or a GPU family (`A100`).
    fn keeps(&self, r: &RowResult) -> bool {
        (self.source.is_empty() || r.source == self.source)
            && (self.gpu.is_empty() || r.gpu == self.gpu || accuracy::gpu_family(&r.gpu) == Some(self.gpu.as_str()))
            && (self.parallelism.is_empty() || r.parallelism == self.parallelism)
    }
}

/// A row's metric's name and unit for people (empty for a row whose metric is unknown).
fn metric_label(metric: Option<Metric>) -> &'static str {
    metric.map_or("", Metric::label)
}

/// A value in its row's unit, four significant figures.
fn value(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let d = (3 - x.abs().log10().floor() as i32).max(0) as usize;
    format!("{x:.d$}")
}

/// The doc of a row's scenario (`{"model", "system", "task"}`).
fn doc_of(v: &Value) -> Option<Doc> {
    let part = |k: &str| v.get(k)?.as_object().cloned();
    Some(Doc::new([part("model")?, part("system")?, part("task")?]))
}

/// Distinct values of a column, in first-seen order.
fn distinct(rows: &[RowResult], f: impl Fn(&RowResult) -> &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in rows {
        if !out.iter().any(|x| x == f(r)) {
            out.push(f(r).to_owned());
        }
    }
    out
}

/// A table's header row: the column names, and a last column named for screen readers only
/// (it holds buttons).
pub(super) fn head(names: &[&str], hidden: &str) -> Html {
    html! {
        <thead><tr>
            { for names.iter().map(|n| html! { <th scope="col">{ *n }</th> }) }
            <th scope="col"><span class="sr-only">{ hidden.to_owned() }</span></th>
        </tr></thead>
    }
}

fn stats_row(name: &str, s: &Stats) -> Html {
    html! {
        <tr>
            <th scope="row">{ name }</th>
            <td class="num">{ units::grouped(s.rows as u64) }</td>
            <td class="num">{ units::percent(s.median_abs_error) }</td>
            <td class="num">{ units::percent(s.mean_abs_error) }</td>
            <td class="num">{ units::percent(s.max_abs_error) }<br /><span class="sub">{ &s.worst }</span></td>
        </tr>
    }
}

/// The paragraph on the GEMMs profiled one by one: the model's GEMM time against each kernel,
/// per GPU (SOURCES.md section 9).
fn gemm_check(kernels: &Result<Vec<accuracy::GemmCheck>, String>) -> Html {
    let checks = match kernels {
        Ok(c) if !c.is_empty() => c,
        Ok(_) => return html! {},
        Err(e) => return html! { <p class="help" id="validation-kernels">{ format!("GEMMs: {e}.") }</p> },
    };
    html! {
        <div class="help" id="validation-kernels">
            <p>
                <strong>{ "GEMMs. " }</strong>
                { format!(
                    "Besides the runs, a check of one mechanism: the model's time for a GEMM (its tiles, their waves over the SMs, split-K, and the bound of reading its operands) against {} GEMMs of transformer layers (Llama 2 7B and 70B, CodeLlama 34B; 1 to 16,384 tokens, tensor parallelism 1 to 8) that vidur profiled one by one. Each GPU's GEMMs stream at the share of HBM bandwidth where these kernels' reading the weights is timed right at the median ({} of the A100 80GB's, {} of the H100's: the system key gemm_bw_util), so that part is zero by construction and the rest is the check. Error = measured / predicted \u{2212} 1:",
                    crate::engine::extended::rules::grouped(checks.iter().map(|c| c.kernels as u64).sum()),
                    GEMM_BW_A100,
                    GEMM_BW_H100
                ) }
            </p>
            <ul>{ for checks.iter().map(|c| html! { <li>{ accuracy::gemm_check_sentence(c) }</li> }) }</ul>
            <p>{ "So where serving runs take longer than predicted, the time goes elsewhere than the layers' GEMMs: the engine's host work between steps, attention over long contexts, the HTTP server." }</p>
        </div>
    }
}

thread_local! {
    /// The shipped rows once predicted, and the check of the GEMMs profiled one by one: they do
    /// not change while the page is open.
    static SHIPPED: std::cell::RefCell<Option<(Rc<Vec<RowResult>>, Kernels)>> = const { std::cell::RefCell::new(None) };
    /// The filters and order last chosen, kept while the reader visits other views.
    static FILTER: std::cell::RefCell<Filter> = std::cell::RefCell::new(Filter::default());
}

/// The page: the shipped rows, fetched ([`fetched::use_data`]) the first time, then predicted
/// ([`PredictedRows`]).
#[function_component(ValidationView)]
pub fn validation_view(p: &Props) -> Html {
    let data = fetched::use_data();
    if let Some((rows, kernels)) = SHIPPED.with(|c| c.borrow().clone()) {
        return html! {
            <ValidationTable {rows} {kernels} dispatch={p.dispatch.clone()} width={p.width} initial={p.initial.clone()} />
        };
    }
    match data {
        Loading::Ready(data) => html! {
            <PredictedRows {data} dispatch={p.dispatch.clone()} width={p.width} initial={p.initial.clone()} />
        },
        Loading::Failed(e) => waiting(html! { <p class="error-msg" role="alert" id="validation-failed">{ e }</p> }),
        Loading::Pending => waiting(html! {
            <p role="status" id="validation-computing">{ "Loading the published runs that ship with madmax..." }</p>
        }),
    }
}

#[derive(Properties, PartialEq)]
struct RowsProps {
    data: Fetched,
    dispatch: Callback<Action>,
    width: u32,
    initial: Option<(String, &'static str)>,
}

/// The fetched rows, predicted a few at a time in the background (736 predictions would block
/// the page for a third of a second), then the table; kept for the next visit.
#[function_component(PredictedRows)]
fn predicted_rows(p: &RowsProps) -> Html {
    let computed =
        use_background(p.data.clone(), |d| accuracy::rows_of(&d.0.csv_texts()), accuracy::ShippedRow::predict);
    match computed {
        Some(rows) => {
            // 1,632 GEMMs timed: well under a millisecond.
            let kernels = Rc::new(accuracy::gemm_check(&p.data.0.kernels));
            SHIPPED.with(|c| *c.borrow_mut() = Some((rows.clone(), kernels.clone())));
            html! { <ValidationTable {rows} {kernels} dispatch={p.dispatch.clone()} width={p.width} initial={p.initial.clone()} /> }
        }
        None => waiting(html! {
            <p role="status" id="validation-computing">{ "Predicting every published run that ships with madmax..." }</p>
        }),
    }
}

/// The page while the rows are on their way: its title and `status`.
fn waiting(status: Html) -> Html {
    html! {
        <main class="validation"><section class="card">
            <h2 id="validation-title">{ "Can you trust it? The default model against measured runs" }</h2>
            { status }
        </section></main>
    }
}

/// The check of the model's GEMM times against the GEMMs profiled one by one, per GPU, or why
/// the file could not be read.
type Kernels = Rc<Result<Vec<accuracy::GemmCheck>, String>>;

#[derive(Properties, PartialEq)]
struct TableProps {
    rows: Rc<Vec<RowResult>>,
    kernels: Kernels,
    dispatch: Callback<Action>,
    width: u32,
    initial: Option<(String, &'static str)>,
}

#[function_component(ValidationTable)]
fn validation_table(p: &TableProps) -> Html {
    let rows = p.rows.clone();
    let floor = {
        let rows = rows.clone();
        use_memo((), move |_| accuracy::floor(&rows))
    };
    // The filters the reader left, unless the calculator asked for runs like its own.
    let filter = use_state(|| match &p.initial {
        Some((parallelism, gpu)) => {
            Filter { parallelism: parallelism.clone(), gpu: (*gpu).to_owned(), ..Filter::default() }
        }
        None => FILTER.with(|f| f.borrow().clone()),
    });
    use_effect_with((*filter).clone(), |f| FILTER.with(|kept| *kept.borrow_mut() = f.clone()));
    let mut kept: Vec<RowResult> = rows.iter().filter(|r| filter.keeps(r)).cloned().collect();
    if filter.worst_first {
        let abs = |r: &RowResult| r.error.map_or(f64::INFINITY, f64::abs);
        crate::engine::order::sort_by(&mut kept, |a, b| abs(b).total_cmp(&abs(a)));
    }
    let shown = Rc::new(kept);
    let listed = if filter.all_rows { shown.len() } else { shown.len().min(TABLE_ROWS) };
    let summary = accuracy::summarize(&rows);
    let set = |want: RunSet| summary.as_ref().and_then(|s| s.by_set.iter().find(|x| x.0 == want)).map(|x| x.1.clone());
    let (fit, held) = (set(RunSet::Calibration), set(RunSet::HeldOut));
    let sources = distinct(&rows, |r| r.source.as_str());

    let select = |id: &'static str, label: &'static str, help: &'static str, options: Vec<String>, current: &str| {
        let filter = filter.clone();
        let onchange = Callback::from(move |e: Event| {
            let Some(sel) = e.target_dyn_into::<HtmlSelectElement>() else { return };
            let mut f = (*filter).clone();
            match id {
                "filter-source" => f.source = sel.value(),
                "filter-gpu" => f.gpu = sel.value(),
                _ => f.parallelism = sel.value(),
            }
            filter.set(f);
        });
        html! {
            <label class="field" for={id} title={help}>
                <span class="label">{ label }</span>
                <select id={id} {onchange}>
                    <option value="" selected={current.is_empty()}>{ "all" }</option>
                    { for options.into_iter().map(|o| {
                        // GPU cells read as people name the GPUs; families and other values as they are.
                        let label = if id == "filter-gpu" { accuracy::gpu_label(&o) } else { o.clone() };
                        html! { <option value={o.clone()} selected={o == current}>{ label }</option> }
                    }) }
                </select>
            </label>
        }
    };

    let shown_stats = accuracy::summarize(&shown);
    html! {
        <main class="validation">
            <section class="card" aria-labelledby="validation-title">
                <h2 id="validation-title">{ "Can you trust it? The default model against measured runs" }</h2>
                // The sets in a sentence, what each holds behind it (on a phone the whole account
                // filled the first screens above the figures).
                <p>{ format!("{} published runs, each predicted right now by the default model with the same constants for every row. The calibration set holds the runs some choice of the model looked at; the held-out runs were predicted once before any change they could inform. These are the numbers ", units::grouped(rows.len() as u64)) }
                    <code>{ "madmax validate" }</code>{ " prints; open a row's name for the source's caveats and the defaults used for blank cells." }</p>
                <details class="help" id="validation-sets"><summary>{ "Which runs, and what each set holds" }</summary>
                    { sets(&rows) }
                </details>
                { match &summary {
                    Some(s) => html! {
                        <div class="table-wrap" tabindex="0" role="region" aria-label="Error per source">
                        <table class="summary" id="validation-summary">
                            <caption>{ "Absolute error |predicted - measured| / measured" }</caption>
                            <thead><tr>
                                <th scope="col">{ "source" }</th><th scope="col">{ "rows" }</th>
                                <th scope="col">{ "median" }</th><th scope="col">{ "mean" }</th><th scope="col">{ "max (row)" }</th>
                            </tr></thead>
                            <tbody>
                                { stats_row("all", &s.all) }
                                { for fit.iter().map(|f| stats_row("calibration set (all)", f)) }
                                { for held.iter().map(|h| stats_row("held out (all)", h)) }
                                { for s.by_kind.iter().map(|(kind, set, st)| {
                                    let set = if *set == RunSet::HeldOut { "held out" } else { "calibration set" };
                                    stats_row(&format!("{}, {set}", kind.label()), st)
                                }) }
                                { for s.by_source.iter().map(|(name, st)| {
                                    let out = rows.iter().any(|r| &r.source == name && r.held_out());
                                    stats_row(&if out { format!("{name} (held out)") } else { name.clone() }, st)
                                }) }
                            </tbody>
                        </table>
                        </div>
                    },
                    None => html! { <p class="error-msg">{ "No row could be predicted." }</p> },
                } }
                { for floor.as_ref().as_ref().map(|f| html! {
                    <p class="help" id="validation-floor">
                        <strong>{ "How close can a model get? " }</strong>
                        { accuracy::floor_sentence(f) }
                        { format!(" Two runs that differ only in micro-batch size, without a pipeline, do the same work: fewer, larger micro-batches run larger GEMMs, launch fewer kernels and send fewer, larger messages, so a model built from those costs predicts them no slower (this one does not, on any of the {} such pairs here) and, where the measurements say otherwise, misses one of the two by at least (slow \u{2212} fast) / (slow + fast).", f.pairs) }
                    </p>
                }) }
                { for summary.as_ref().and_then(|s| s.memory.as_ref()).map(|m| html! {
                    <p class="help" id="validation-memory">
                        <strong>{ "Memory. " }</strong>
                        { format!(
                            "On the {} runs whose source states memory per GPU (as nvidia-smi shows it: the CUDA context and workspaces, and what PyTorch's caching allocator reserves, which holds 15% more than the live tensors need on average, GMLake measured), the predicted memory as nvidia-smi would show it is off by {} at the median and {} at most ({}). Whether a plan fits is judged on the live tensors' peak. Open a row's name to see the figures.",
                            m.rows,
                            units::percent(m.median_abs_error),
                            units::percent(m.max_abs_error),
                            m.worst
                        ) }
                    </p>
                }) }
                { gemm_check(&p.kernels) }
                { bands(&rows) }
                <details class="assumptions">
                    <summary>{ "Sources" }</summary>
                    <ul>{ for sources.iter().filter_map(|name| rows.iter().find(|r| &r.source == name)).map(|r| html! {
                        <li><strong>{ &r.source }</strong>{ ": " }{ &r.citation }</li>
                    }) }</ul>
                </details>
                <p class="help" id="validation-misses">{ accuracy::misses(&rows) }</p>
            </section>
            <section class="card" aria-label="Rows">
                <div class="filters">
                    { select("filter-source", "Source", "Show the rows of one publication.", sources, &filter.source) }
                    { select("filter-gpu", "GPU", "Show the rows measured on one GPU model (A100 and H100: every memory size).", gpu_options(&rows), &filter.gpu) }
                    { select("filter-parallelism", "Parallelism", "Show the rows whose plan combines exactly these kinds of parallelism (TP tensor, PP pipeline, DP data).", distinct(&rows, |r| r.parallelism.as_str()), &filter.parallelism) }
                    { order(&filter) }
                </div>
                <p id="validation-shown" role="status">{ match &shown_stats {
                    Some(s) => format!("{} of {} rows shown: median error {}, max {}.", units::grouped(shown.len() as u64), units::grouped(rows.len() as u64), units::percent(s.all.median_abs_error), units::percent(s.all.max_abs_error)),
                    None => format!("{} of {} rows shown.", units::grouped(shown.len() as u64), units::grouped(rows.len() as u64)),
                } }</p>
                { chart(&shown, distinct(&rows, |r| r.source.as_str()), &filter, p.width) }
                { table(&shown[..listed], &p.dispatch) }
                { more_rows(&filter, shown.len()) }
            </section>
        </main>
    }
}

/// The GPU filter's choices: the families the bands use, then every GPU cell.
fn gpu_options(rows: &[RowResult]) -> Vec<String> {
    let families = distinct(rows, |r| accuracy::gpu_family(&r.gpu).unwrap_or(""));
    families.into_iter().filter(|f| !f.is_empty()).chain(distinct(rows, |r| r.gpu.as_str())).collect()
}

/// The spread of measured over predicted time per kind of plan and GPU: what the calculator
/// quotes as the range to expect.
fn bands(rows: &[RowResult]) -> Html {
    let Some(bands) = accuracy::bands_in(rows) else { return html! {} };
    let ratio = |x: f64| format!("{x:.2}\u{d7}");
    html! {
        <div class="table-wrap" tabindex="0" role="region" aria-label="Measured over predicted time per kind of plan">
        <table class="summary" id="validation-bands">
            <caption>{ "Measured / predicted time, by kind of plan (training: its kinds of parallelism; static batches of serving, kernels launched one by one: their tensor- and pipeline-parallel degrees, the batch's time end to end): 8 in 10 runs fall between the 10th and 90th percentile, and the calculator quotes that range for a plan of the same kind on the same GPU" }</caption>
            <thead><tr>
                <th scope="col">{ "plan" }</th><th scope="col">{ "GPU" }</th><th scope="col">{ "runs" }</th>
                <th scope="col">{ "10th percentile" }</th><th scope="col">{ "median" }</th><th scope="col">{ "90th percentile" }</th>
            </tr></thead>
            <tbody>{ for bands.iter().map(|b| html! {
                <tr>
                    <th scope="row">{ b.plan_label() }</th><td>{ b.gpu }</td><td class="num">{ b.runs }</td>
                    <td class="num">{ ratio(b.low) }</td><td class="num">{ ratio(b.median) }</td><td class="num">{ ratio(b.high) }</td>
                </tr>
            }) }</tbody>
        </table>
        </div>
    }
}

/// What each set holds, from the rows themselves: the sources of the calibration set, each with
/// what it informed ([`accuracy::CALIBRATION_WHY`]), and those of the held-out set.
fn sets(rows: &[RowResult]) -> Html {
    let (calibration, held) =
        (accuracy::sources_in(rows, RunSet::Calibration), accuracy::sources_in(rows, RunSet::HeldOut));
    let count = |sources: &[(&str, usize)]| sources.iter().map(|(_, n)| *n as u64).sum::<u64>();
    let runs = |n: usize| if n == 1 { "1 run".to_owned() } else { format!("{} runs", units::grouped(n as u64)) };
    let families: Vec<String> =
        distinct(rows, |r| accuracy::gpu_family(&r.gpu).unwrap_or("")).into_iter().filter(|f| !f.is_empty()).collect();
    html! { <>
        <p>{ format!(
            "{} published runs measured on {} GPUs, each predicted right now by the default model with the same constants for every row: achievable fractions of peak FLOP/s, HBM and link bandwidth, collective latencies. Nothing is fitted per row, but the rows fall in two sets.",
            units::grouped(rows.len() as u64),
            crate::wording::listed(&families)
        ) }</p>
        <p>{ format!("The calibration set, {} runs, holds every run some choice of the model looked at:", units::grouped(count(&calibration))) }</p>
        <ul id="validation-calibration-sources">{ for calibration.iter().map(|&(name, n)| html! {
            <li><strong>{ name }</strong>{ format!(" ({}): {}", runs(n), accuracy::calibration_why(name).unwrap_or("")) }</li>
        }) }</ul>
        <p>{ format!("The held-out set, {} runs, was added and predicted once before any change it could inform, and no change since was chosen by it: it shows how the model does on runs it was not tuned on.", units::grouped(count(&held))) }</p>
        <ul id="validation-held-out-sources">{ for held.iter().map(|&(name, n)| html! {
            <li><strong>{ name }</strong>{ format!(" ({})", runs(n)) }</li>
        }) }</ul>
    </> }
}

/// A button that lists every row, when the table shows only the first [`TABLE_ROWS`].
fn more_rows(filter: &UseStateHandle<Filter>, shown: usize) -> Html {
    if filter.all_rows || shown <= TABLE_ROWS {
        return html! {};
    }
    let f = filter.clone();
    let onclick = Callback::from(move |_| f.set(Filter { all_rows: true, ..(*f).clone() }));
    html! {
        <p class="more-rows">
            { format!("The table lists the first {TABLE_ROWS} of these {} rows. ", units::grouped(shown as u64)) }
            <button id="show-all-rows" {onclick}>{ format!("Show all {} rows", units::grouped(shown as u64)) }</button>
        </p>
    }
}

/// The order of the rows: as the files list them, or largest error first.
fn order(filter: &UseStateHandle<Filter>) -> Html {
    let f = filter.clone();
    let onchange = Callback::from(move |e: Event| {
        let Some(sel) = e.target_dyn_into::<HtmlSelectElement>() else { return };
        f.set(Filter { worst_first: sel.value() == "worst", ..(*f).clone() });
    });
    html! {
        <label class="field" for="filter-order" title="List the rows in the order of the data files, or those the model misses most first.">
            <span class="label">{ "Order" }</span>
            <select id="filter-order" {onchange}>
                <option value="file" selected={!filter.worst_first}>{ "as published" }</option>
                <option value="worst" selected={filter.worst_first}>{ "largest error first" }</option>
            </select>
        </label>
    }
}

/// Predicted against measured for the rows shown, one colour per source (every source keeps
/// its colour when others are filtered out).
fn chart(rows: &[RowResult], sources: Vec<String>, filter: &Filter, width: u32) -> Html {
    // Samples/s (a DLRM's tens of millions) in millions, so that they sit among the other rows'
    // figures instead of stretching the axes over four more decades.
    let millions = |r: &RowResult| r.metric == Some(Metric::SamplesPerS);
    let plotted = |r: &RowResult, x: f64| if millions(r) { x / 1e6 } else { x };
    let shown: Vec<(&RowResult, (f64, f64, usize))> = rows
        .iter()
        .filter_map(|r| {
            let series = sources.iter().position(|s| *s == r.source)?;
            Some((r, (plotted(r, r.measured), plotted(r, r.predicted?), series)))
        })
        .collect();
    let points: Vec<(f64, f64, usize)> = shown.iter().map(|x| x.1).collect();
    // Pointing at a point names its row and both figures.
    let said: Vec<String> = shown
        .iter()
        .map(|(r, (m, p, _))| {
            let error = r.error.map_or(String::new(), |e| format!(", {:+.1} %", e * 100.0));
            let unit = if millions(r) { " M samples/s" } else { "" };
            format!("{}: measured {}{unit}, predicted {}{unit}{error}", r.id, units::sig3(*m), units::sig3(*p))
        })
        .collect();
    let placed = Rc::new(super::canvas::PlacedPoints::default());
    let pick = super::canvas::point_pick(placed.clone(), said);
    // The filters decide which rows are drawn.
    let key = [&filter.source, &filter.gpu, &filter.parallelism]
        .iter()
        .fold(points.len() as u64, |h, s| s.bytes().fold(h, |h, b| h.wrapping_mul(31).wrapping_add(b as u64)));
    let any_millions = shown.iter().any(|(r, _)| millions(r));
    let shown: Vec<bool> = (0..sources.len()).map(|i| points.iter().any(|p| p.2 == i)).collect();
    let names = sources.clone();
    let draw: Draw = Rc::new(move |c, theme| charts::predicted_vs_measured(c, theme, &points, &sources, &placed));
    html! {
        <>
            <Canvas id="chart-validation" {draw} version={key} {width} {pick}
                label="Predicted against measured for the rows shown, log-log, with the line where they are equal and a band of plus or minus 10 percent. The table below lists every point." />
            <ul class="chart-legend" id="validation-legend" aria-hidden="true">
                <li><span class="swatch line"></span>{ "predicted = measured (shaded: \u{b1}10 %)" }</li>
                if any_millions {
                    <li id="validation-millions">{ "samples/s (recommendation models) in millions" }</li>
                }
                { for names.iter().enumerate().filter(|(i, _)| shown[*i]).map(|(i, name)| {
                    html! {
                        <li>{ super::canvas::series_swatch(i) }{ name }</li>
                    }
                }) }
            </ul>
        </>
    }
}

fn table(rows: &[RowResult], d: &Callback<Action>) -> Html {
    let base = dom::base_url();
    let row = |r: &RowResult| {
        let doc = r.scenario.as_ref().and_then(doc_of);
        let open = doc.clone().map(|doc| {
            let d = d.clone();
            let measured = Yardstick {
                source: format!("{}, run {}", r.source, r.id),
                metric: crate::wording::capitalised(metric_label(r.metric)),
                verb: "measured",
                measured: value(r.measured),
                predicted: r.predicted.map(value),
                difference: r.error,
                serving: match r.metric {
                    Some(Metric::DecodeMsPerToken | Metric::MedianTpotMs) => {
                        Some(ServingMark::TimePerTokenS(r.measured / 1e3))
                    }
                    _ => r.measured_output_tokens_per_s().map(ServingMark::OutputTokensPerS),
                },
            };
            Callback::from(move |_| d.emit(Action::LoadMeasured(doc.clone(), measured.clone())))
        });
        let link = doc.as_ref().map(|doc| format!("{base}?{}", share::encode(doc)));
        let err_class = match r.error {
            Some(e) if e.abs() > 0.25 => "num bad",
            Some(e) if e.abs() > 0.10 => "num warn",
            _ => "num",
        };
        let predicted = match (&r.predicted, &r.skipped) {
            (Some(p), _) => ("num", value(*p)),
            (None, why) => ("error-msg", format!("skipped: {}", why.clone().unwrap_or_default())),
        };
        let cells = [
            ("", if r.held_out() { format!("{} (held out)", r.source) } else { r.source.clone() }),
            ("", r.model.clone()),
            ("", accuracy::gpu_label(&r.gpu)),
            ("num", r.n_gpus.to_string()),
            ("", r.plan.clone()),
            ("", metric_label(r.metric).to_owned()),
            ("num", value(r.measured)),
            predicted,
            (err_class, r.error.map(|e| format!("{:+.1} %", e * 100.0)).unwrap_or_default()),
        ];
        html! {
            <tr data-id={r.id.clone()} data-predicted={r.predicted.map(|x| x.to_string()).unwrap_or_default()}
                data-measured={r.measured.to_string()} data-error={r.error.map(|x| x.to_string()).unwrap_or_default()}
                data-iteration={r.iteration_s.map(|x| x.to_string()).unwrap_or_default()}>
                <th scope="row">
                    <details class="row-notes">
                        <summary>{ &r.id }</summary>
                        <p>{ &r.notes }</p>
                        { if r.defaults.is_empty() { html! {} } else { html! { <p>{ format!("Defaults for blank cells: {}.", r.defaults.join("; ")) }</p> } } }
                        { for r.measured_memory_bytes.zip(r.memory_bytes.zip(r.memory_shown_bytes)).zip(r.memory_error).map(|((stated, (peak, shown)), error)| html! {
                            <p class="memory-stated">{ format!(
                                "Memory per GPU: {} of live tensors at the peak predicted, about {} as nvidia-smi shows it (PyTorch's caching allocator keeps more), against {} stated by the source ({:+.0} %).",
                                units::bytes(peak),
                                units::bytes(shown),
                                units::bytes(stated),
                                error * 100.0
                            ) }</p>
                        }) }
                    </details>
                </th>
                { for cells.into_iter().map(|(class, text)| html! { <td class={class}>{ text }</td> }) }
                <td class="actions">
                    { match (open, link) {
                        (Some(open), Some(link)) => html! { <>
                            <button class="open" onclick={open} aria-label={format!("Open {} in the calculator", r.id)}>{ "Open" }</button>
                            <a href={link} aria-label={format!("Link to {}", r.id)}>{ "Link" }</a>
                        </> },
                        _ => html! {},
                    } }
                </td>
            </tr>
        }
    };
    html! {
        <div class="table-wrap" tabindex="0" role="region" aria-label="Measured runs, predicted and measured">
            <table class="rows" id="validation-rows">
                { head(&["row", "source", "model", "GPU", "GPUs", "plan", "metric", "measured", "predicted", "error"], "actions") }
                <tbody>{ for rows.iter().map(row) }</tbody>
            </table>
        </div>
    }
}
