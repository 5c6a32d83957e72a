//! The findings view (`?view=paper`): the MAD-Max paper's findings computed on its workload
//! suite in both models ([`crate::paper`], the numbers `madmax paper` prints), beside what the
//! paper reported. The work (an explorer search per workload, plans a few at a time) runs in
//! slices of about 12 ms once the view first opens, and goes on while another view is shown.

use crate::engine::explore::Space;
use crate::engine::scenario::Mode;
use crate::paper::{self, Compared, Findings, Measured, Spread, Workload};
use crate::ui::canvas::{point_pick, Canvas, Draw, PlacedPoints};
use crate::ui::charts::{self, FactorLine, Strips};
use crate::ui::explorer::{Baseline, Job};
use crate::ui::pool::Offload;
use crate::units;
use gloo::timers::callback::Timeout;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use yew::prelude::*;

/// One model's run over the suite.
struct Run {
    mode: Mode,
    suite: Vec<Workload>,
    /// The suite's presets this model refuses.
    refused: Vec<paper::Refused>,
    measured: Vec<Measured>,
    /// The search of the next workload, once started, and its use of the page's workers.
    job: Option<(Job, Offload)>,
    /// The findings, once every workload is measured (summarized once, not on every redraw).
    findings: Option<Findings>,
}

impl Run {
    fn done(&self) -> bool {
        self.measured.len() >= self.suite.len()
    }

    /// Works on the next workload until `deadline_ms` (ms since the epoch): starts its search,
    /// or takes back what the workers did and hands them more, or (when no worker can take it)
    /// evaluates a few plans here; once the search has ended, measures the workload's own plan.
    /// Returns true while the page's workers are busy with the search (they wake the view).
    fn step(&mut self, deadline_ms: f64) -> bool {
        let Some(w) = self.suite.get(self.measured.len()) else { return false };
        let compared = match self.job.as_mut() {
            None => match Job::new(&w.scenario, &Space::fixed_global(&w.scenario), false) {
                Ok(j) => {
                    let offload = Offload::new(&j, w.file.clone(), "as-configured", schedule);
                    self.job = Some((j, offload));
                    None
                }
                Err(_) => Some(Compared::TooBig),
            },
            Some((job, offload)) => {
                if offload.turn(job) > 0 {
                    return true;
                }
                while !job.finished() && js_sys::Date::now() < deadline_ms {
                    job.step(1);
                }
                job.finished().then(|| paper::compared(&w.scenario, Some(&job.summary(Baseline::Yours))))
            }
        };
        let Some(compared) = compared else { return false };
        self.measured.push(Measured::of(w, compared));
        self.job = None;
        if self.done() {
            self.findings = paper::summarize(self.mode, &self.suite, &self.refused, &self.measured);
        }
        false
    }
}

#[derive(Default)]
struct Session {
    runs: Vec<Run>,
    problem: Option<String>,
    started: bool,
    /// Redraws the view while it is on screen.
    redraw: Option<Callback<()>>,
    /// When the view was last redrawn, ms since the epoch.
    drawn_ms: f64,
}

thread_local! {
    static SESSION: RefCell<Session> = RefCell::new(Session::default());
}

/// Starts the runs once per page: paper mode first (it takes well under a second), then the
/// default model.
fn start() {
    let begin = SESSION.with(|s| {
        let mut s = s.borrow_mut();
        if s.started {
            return false;
        }
        s.started = true;
        for mode in [Mode::Reference, Mode::Default] {
            match paper::suite(mode) {
                Ok(suite) => s.runs.push(Run {
                    mode,
                    suite: suite.workloads,
                    refused: suite.refused,
                    measured: Vec::new(),
                    job: None,
                    findings: None,
                }),
                Err(e) => s.problem = Some(e),
            }
        }
        true
    });
    if begin {
        schedule();
    }
}

thread_local! {
    /// Whether a turn of the runs is already scheduled.
    static SCHEDULED: Cell<bool> = const { Cell::new(false) };
}

/// How often the view redraws while the runs go on, ms.
const REDRAW_MS: f64 = 250.0;

/// Schedules a turn of the runs: slices of about 12 ms between the browser's tasks, except
/// while the page's workers search, whose answers schedule the next turn.
fn schedule() {
    if SCHEDULED.with(|s| s.replace(true)) {
        return;
    }
    Timeout::new(0, move || {
        SCHEDULED.with(|s| s.set(false));
        let deadline = js_sys::Date::now() + 12.0;
        let (more, waiting, redraw) = SESSION.with(|s| {
            let mut s = s.borrow_mut();
            let mut waiting = false;
            if let Some(run) = s.runs.iter_mut().find(|r| !r.done()) {
                while !run.done() && js_sys::Date::now() < deadline {
                    waiting = run.step(deadline);
                    if waiting {
                        break;
                    }
                }
            }
            let more = s.runs.iter().any(|r| !r.done());
            let now = js_sys::Date::now();
            let draw = !more || now - s.drawn_ms >= REDRAW_MS;
            if draw {
                s.drawn_ms = now;
            }
            (more, waiting, s.redraw.clone().filter(|_| draw))
        });
        if let Some(r) = redraw {
            r.emit(());
        }
        if more && !waiting {
            schedule();
        }
    })
    .forget();
}

#[derive(Properties, PartialEq)]
pub struct Props {
    /// The page's width, CSS px: the charts redraw when it changes.
    pub width: u32,
}

#[function_component(PaperView)]
pub fn paper_view(p: &Props) -> Html {
    let version = use_state(|| 0u64);
    {
        let version = version.clone();
        use_effect_with((), move |_| {
            let redraw = Callback::from(move |_| version.set(js_sys::Date::now() as u64));
            SESSION.with(|s| s.borrow_mut().redraw = Some(redraw));
            start();
            || SESSION.with(|s| s.borrow_mut().redraw = None)
        });
    }
    SESSION.with(|s| view(&s.borrow(), p.width))
}

fn view(s: &Session, width: u32) -> Html {
    let total: usize = s.runs.iter().map(|r| r.suite.len()).sum();
    let done: usize = s.runs.iter().map(|r| r.measured.len().min(r.suite.len())).sum();
    let finished = !s.runs.is_empty() && done == total;
    let findings: Vec<Findings> = s.runs.iter().filter_map(|r| r.findings.clone()).collect();
    let status = if finished {
        format!("Computed on {total} workload runs (each workload in both models).")
    } else {
        format!("Computing: {done} of {total} workload runs (each workload's plans searched in both models)…")
    };
    html! {
        <main class="paper-view">
            <section class="card">
                <h2>{ "The paper's findings, computed here" }</h2>
                <p class="help">{ "MAD-Max (Hsia et al., ISCA 2024) reports that 14-32% of the GPU hours of large training jobs are communication that no computation hides, and that better parallelization strategies raise throughput up to 2.24x in pre-training and 5.27x in inference. Below, the same three questions on its workload suite: the scenario presets taken from the reference's golden cases (its models, systems and tasks), in MAD-Max paper mode and in the default model, one iteration each. The paper measured production traces; these are configurations, unweighted, so the shares are not the same population." }</p>
                <p id="paper-status" class="help" role="status" data-finished={finished.to_string()}>{ status }</p>
                { s.problem.as_ref().map(|p| html! { <p class="error-msg">{ p }</p> }).unwrap_or_default() }
                { for findings.iter().flat_map(|f| f.refused.iter().map(move |r| html! {
                    <p class="help refused">{ format!("Not run in the {}: {} ({}).", model(f.mode), r.workload, r.why) }</p>
                })) }
            </section>
            { if findings.is_empty() { html! {} } else { html! { <>
                { exposed(&findings, exposed_chart(s, &findings, width, done)) }
                { speedups(&findings) }
                { codesign(&findings, width, done) }
            </> } } }
        </main>
    }
}

/// A column head per model.
fn heads(findings: &[Findings]) -> Html {
    findings.iter().map(|f| html! { <th scope="col">{ model(f.mode) }</th> }).collect::<Html>()
}

fn model(m: Mode) -> &'static str {
    match m {
        Mode::Reference => "MAD-Max paper mode",
        Mode::Default => "default model",
    }
}

/// `median 61 % (0 % to 99.8 %)` with the workload at the top in the title.
fn cell(s: Option<&Spread>, show: fn(f64) -> String, id: String) -> Html {
    match s {
        Some(s) => html! {
            <td id={id} data-median={s.median.to_string()} title={format!("{} workloads; highest: {}; lowest: {}", s.workloads, s.highest, s.lowest)}>
                { format!("{} ({} to {})", show(s.median), show(s.min), show(s.max)) }
            </td>
        },
        None => html! { <td id={id}>{ "none compared" }</td> },
    }
}

fn ratio(x: f64) -> String {
    format!("{}x", units::sig3(x))
}

/// Every workload's exposed share, a row per model family and a mark per workload in each
/// model whose run is done, beside the paper's range.
fn exposed_chart(s: &Session, findings: &[Findings], width: u32, version: usize) -> Html {
    let Some(first) = findings.first() else { return html! {} };
    let rows: Vec<String> = first.exposed.by_family.iter().map(|g| g.name.clone()).collect();
    let runs: Vec<&Run> = s.runs.iter().filter(|r| r.findings.is_some()).collect();
    let series: Vec<&'static str> = runs.iter().map(|r| model(r.mode)).collect();
    let names = series.clone();
    let mut points = Vec::new();
    let mut said = Vec::new();
    for (si, r) in runs.iter().enumerate() {
        for (w, m) in r.suite.iter().zip(&r.measured) {
            let Some(row) = rows.iter().position(|f| f == w.family) else { continue };
            points.push((row, si, m.exposed_share));
            said.push(format!(
                "{}: {} of iteration time exposed ({})",
                w.id,
                units::percent(m.exposed_share),
                model(r.mode)
            ));
        }
    }
    let placed = Rc::new(PlacedPoints::default());
    let pick = point_pick(placed.clone(), said);
    let band = (paper::PAPER_EXPOSED_SHARE.0, paper::PAPER_EXPOSED_SHARE.1, "the paper");
    let draw: Draw = Rc::new(move |c, theme| {
        charts::strips(
            c,
            theme,
            &Strips {
                title: "Exposed communication per workload",
                rows: &rows,
                series: &series,
                points: &points,
                band: Some(band),
                placed: Some(&placed),
            },
        )
    });
    let legend = names.iter().enumerate().map(|(i, name)| {
        let side = if i % 2 == 0 { "upper" } else { "lower" };
        html! {
            <li>{ super::canvas::series_swatch(i) }{ format!("{name} ({side} marks of each row; tick: median)") }</li>
        }
    });
    html! {
        <>
            <Canvas id="chart-paper-exposed" {draw} version={version as u64} {width} {pick}
                label="Exposed communication as a share of iteration time, one mark per workload and model, by model family, with the paper's 14-32% range shaded; the table below gives the medians and ranges." />
            <ul class="chart-legend" id="paper-exposed-legend" aria-hidden="true">
                { for legend }
                <li><span class="swatch" style={format!("color: {}", charts::css(charts::SERIES_RGB[4]))}>{ "\u{25a0}" }</span>{ "the paper: 14-32 % of GPU hours, production traces" }</li>
            </ul>
        </>
    }
}

fn exposed(findings: &[Findings], chart: Html) -> Html {
    let Some(first) = findings.first() else { return html! {} };
    let mut rows: Vec<(String, String)> = vec![("all".into(), "all workloads".into())];
    rows.extend(first.exposed.by_family.iter().chain(&first.exposed.by_gpu).map(|g| (g.name.clone(), g.name.clone())));
    let spread = |f: &Findings, key: &str| -> Option<Spread> {
        if key == "all" {
            return Some(f.exposed.all.clone());
        }
        f.exposed.by_family.iter().chain(&f.exposed.by_gpu).find(|g| g.name == key).map(|g| g.spread.clone())
    };
    html! {
        <section class="card">
            <h3>{ "Exposed communication, as a share of iteration time" }</h3>
            <p class="help">{ "Every GPU of a synchronous step waits alike, so this is also the share of the run's GPU hours that communication no computation hides. Each mark is one workload (point at it for which), each tick a median; the table gives the median over the workloads with the range (point at a figure for the workloads at its ends)." }</p>
            { chart }
            <div class="table-wrap">
                <table class="ranked" id="paper-exposed">
                    <thead><tr><th scope="col">{ "workloads" }</th>{ heads(findings) }</tr></thead>
                    <tbody>
                        { for rows.iter().map(|(key, label)| html! {
                            <tr><th scope="row">{ label }</th>
                                { for findings.iter().map(|f| cell(spread(f, key).as_ref(), units::percent, format!("exposed-{}-{}", f.mode.config_name(), key))) }
                            </tr>
                        }) }
                        <tr><th scope="row" title="A job's GPU hours grow with its GPUs: this is the share of the suite's GPU hours if every workload ran for the same time.">{ "all, weighted by GPUs" }</th>
                            { for findings.iter().map(|f| html! {
                                <td id={format!("exposed-{}-weighted", f.mode.config_name())} data-value={f.exposed.gpu_weighted.to_string()}>{ units::percent(f.exposed.gpu_weighted) }</td>
                            }) }
                        </tr>
                    </tbody>
                </table>
            </div>
            <p class="help">{ format!("The paper: {} to {} of GPU hours, on production traces of large training jobs.", units::percent(paper::PAPER_EXPOSED_SHARE.0), units::percent(paper::PAPER_EXPOSED_SHARE.1)) }</p>
            <p class="help why">{ paper::WHY_EXPOSED }</p>
        </section>
    }
}

fn speedups(findings: &[Findings]) -> Html {
    let not_compared = |f: &Findings| {
        let s = &f.speedups;
        format!(
            "{}: {} not compared ({} whose own plan cannot run, {} where no plan fits, {} too big to search).",
            model(f.mode),
            s.own_plan_cannot_run.len() + s.nothing_fits.len() + s.too_big.len(),
            s.own_plan_cannot_run.len(),
            s.nothing_fits.len(),
            s.too_big.len()
        )
    };
    html! {
        <section class="card">
            <h3>{ "What a better plan gains" }</h3>
            <p class="help">{ "The explorer's best plan that fits, at the workload's own global batch, over the workload's own plan. Median over the workloads, with the range." }</p>
            <div class="table-wrap">
                <table class="ranked" id="paper-speedups">
                    <thead><tr><th scope="col">{ "task" }</th>{ heads(findings) }<th scope="col">{ "the paper" }</th></tr></thead>
                    <tbody>
                        <tr><th scope="row">{ "pre-training, fine-tuning" }</th>
                            { for findings.iter().map(|f| cell(f.speedups.training.as_ref(), ratio, format!("speedup-{}-training", f.mode.config_name()))) }
                            <td>{ format!("up to {}x", paper::PAPER_PRETRAIN_SPEEDUP) }</td></tr>
                        <tr><th scope="row">{ "inference" }</th>
                            { for findings.iter().map(|f| cell(f.speedups.inference.as_ref(), ratio, format!("speedup-{}-inference", f.mode.config_name()))) }
                            <td>{ format!("up to {}x", paper::PAPER_INFERENCE_SPEEDUP) }</td></tr>
                    </tbody>
                </table>
            </div>
            { for findings.iter().map(|f| html! { <p class="help">{ not_compared(f) }</p> }) }
            <p class="help why">{ paper::WHY_SPEEDUP }</p>
            <h4>{ "Where a better plan gains most" }</h4>
            <p class="help">{ "An outlier says more with its plans: the workload's own plan and the best that fits, in each model." }</p>
            { for findings.iter().map(|f| html! { <>
                <p class="gains-model">{ model(f.mode) }</p>
                <ul class="gains" id={format!("gains-{}", f.mode.config_name())}>
                    { for f.speedups.largest.iter().map(|g| html! { <li data-speedup={g.speedup.to_string()}>{ crate::wording::gain(g) }</li> }) }
                </ul>
            </> }) }
        </section>
    }
}

/// A model's co-design what-ifs as lines: per resource, the median ratio at each factor (1 at
/// x1, the workload's own hardware), the range as a bar.
fn codesign_chart(f: &Findings, width: u32, version: usize) -> Html {
    let mut lines: Vec<FactorLine> = Vec::new();
    for w in &f.codesign {
        let point = (w.factor, w.speedup.median, w.speedup.min, w.speedup.max);
        match lines.iter_mut().find(|l| l.0 == w.resource) {
            Some(l) => l.1.push(point),
            None => lines.push((w.resource.to_owned(), vec![(1.0, 1.0, 1.0, 1.0), point])),
        }
    }
    for l in &mut lines {
        crate::engine::order::sort_by(&mut l.1, |a, b| a.0.total_cmp(&b.0));
    }
    let said: Vec<String> = lines
        .iter()
        .flat_map(|(name, pts)| {
            pts.iter().map(move |p| {
                if p.0 == 1.0 {
                    format!("{name} x1: each workload's own hardware")
                } else {
                    format!("{name} x{}: median {} ({} to {})", p.0, ratio(p.1), ratio(p.2), ratio(p.3))
                }
            })
        })
        .collect();
    let placed = Rc::new(PlacedPoints::default());
    let pick = point_pick(placed.clone(), said);
    let title = model(f.mode);
    let draw: Draw = Rc::new(move |c, theme| charts::factor_lines(c, theme, title, &lines, Some(&placed)));
    html! {
        <Canvas id={format!("chart-paper-codesign-{}", f.mode.config_name())} {draw} version={version as u64} {width} {pick}
            label={format!("Co-design in the {title}: throughput ratio against the factor each resource is scaled by, medians as lines and ranges as bars; the table below gives every figure.")} />
    }
}

fn codesign(findings: &[Findings], width: u32, version: usize) -> Html {
    let Some(first) = findings.first() else { return html! {} };
    html! {
        <section class="card">
            <h3>{ "Co-design: one resource scaled" }</h3>
            <p class="help">{ "Throughput with one resource of every GPU (or link) scaled, over the workload's own, each workload keeping its own plan: a line per resource through the medians over the workloads, a bar for their range (point at a mark for its figures)." }</p>
            <div class="paper-figures">{ for findings.iter().map(|f| codesign_chart(f, width, version)) }</div>
            <p class="help why">{ paper::WHY_CODESIGN }</p>
            <p class="help">{ "HBM capacity changes which plans fit, not how fast one runs: the workloads whose own plan fits with each GPU's memory scaled." }</p>
            <div class="table-wrap">
                <table class="ranked" id="paper-capacity">
                    <thead><tr><th scope="col">{ "own plans that fit" }</th>
                        { for first.capacity.iter().map(|c| html! { <th scope="col">{ format!("HBM x{}", c.factor) }</th> }) }
                    </tr></thead>
                    <tbody>{ for findings.iter().map(|f| html! {
                        <tr><th scope="row">{ model(f.mode) }</th>
                            { for f.capacity.iter().enumerate().map(|(k, c)| html! {
                                <td id={format!("capacity-{}-{k}", f.mode.config_name())} data-fit={c.fit.to_string()}>{ format!("{} of {}", c.fit, c.workloads) }</td>
                            }) }
                        </tr>
                    }) }</tbody>
                </table>
            </div>
            <div class="table-wrap">
                <table class="ranked" id="paper-codesign">
                    <thead><tr><th scope="col">{ "resource" }</th>{ heads(findings) }</tr></thead>
                    <tbody>{ for first.codesign.iter().enumerate().map(|(k, w)| html! {
                        <tr><th scope="row">{ format!("{} x{}", w.resource, w.factor) }</th>
                            { for findings.iter().map(|f| cell(f.codesign.get(k).map(|x| &x.speedup), ratio, format!("codesign-{}-{k}", f.mode.config_name()))) }
                        </tr>
                    }) }</tbody>
                </table>
            </div>
        </section>
    }
}
