//! The calculator's chart components: each chart's canvas from the report (or from points
//! computed in the background), its pointer tooltips and its table of numbers.

use super::app::Dispatch;
use super::background::use_background;
use super::canvas::{self, Canvas, Draw};
use super::charts::{self, Theme, TimelineGeometry};
use super::dom;
use super::state::{Action, Evaluated, ServingMark};
use super::sweep::{self, SweepTask};
use super::timeline::Lanes;
use crate::engine::ops::{Category, Stream};
use crate::units;
use std::cell::Cell;
use std::rc::Rc;
use web_sys::HtmlCanvasElement;
use yew::prelude::*;

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Axis {
    Gpus,
    Batch,
}

/// A chart drawn from the report alone.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum ChartKind {
    Breakdown,
    Memory,
}

#[derive(Properties, PartialEq)]
pub(super) struct ChartProps {
    pub(super) kind: ChartKind,
    pub(super) good: Rc<Evaluated>,
    pub(super) width: u32,
}

#[function_component(Chart)]
pub(super) fn chart(p: &ChartProps) -> Html {
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
pub(super) struct SweepProps {
    pub(super) task: SweepTask,
    pub(super) axis: Axis,
    pub(super) good: Rc<Evaluated>,
    pub(super) width: u32,
}

fn sweep_probes((good, task, axis): &(Rc<Evaluated>, SweepTask, Axis)) -> Vec<sweep::Probe> {
    match axis {
        Axis::Gpus => sweep::vs_gpus(&good.doc, *task),
        Axis::Batch => sweep::vs_batch(&good.doc, *task),
    }
}

/// Throughput at other cluster sizes or batches, evaluated in the background.
#[function_component(SweepChart)]
pub(super) fn sweep_chart(p: &SweepProps) -> Html {
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
pub(super) struct ServingProps {
    pub(super) good: Rc<Evaluated>,
    pub(super) width: u32,
    /// What a source measured for this scenario, when it is a serving figure: drawn as a line.
    pub(super) measured: Option<(ServingMark, Rc<str>)>,
}

/// LLM serving: output tokens/s against time per output token, one point per batch, evaluated
/// in the background.
#[function_component(ServingChart)]
pub(super) fn serving_chart(p: &ServingProps) -> Html {
    let points = use_background(p.good.clone(), |g: &Rc<Evaluated>| sweep::serving(&g.doc), sweep::serve_point);
    let curve = use_memo((p.good.clone(), points.clone()), |(good, points)| {
        points.as_ref().map(|pts| sweep::serving_curve(&sweep::serving(&good.doc), pts))
    });
    let version = *use_memo((p.good.clone(), points.is_some()), |_| canvas::next_version());
    let placed = (*use_memo(version, |_| Rc::new(canvas::PlacedPoints::default()))).clone();
    let drawn = (curve.clone(), placed.clone(), p.measured.as_ref().map(|m| m.0));
    let draw: Draw = Rc::new(move |c, t| match drawn.0.as_ref() {
        Some(points) => charts::serving(c, t, points, drawn.2, &drawn.1),
        None => charts::message(c, t, 260, COMPUTING),
    });
    let said: Vec<String> = curve.as_ref().as_ref().map_or(Vec::new(), |pts| sweep::serve_sentences(pts));
    let pick = canvas::point_pick(placed, said);
    let mut rows: Vec<Vec<String>> = curve
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
    if let Some((mark, source)) = &p.measured {
        let (tpot, tokens) = match *mark {
            ServingMark::OutputTokensPerS(x) => ("-".to_owned(), units::si(x, "tokens/s")),
            ServingMark::TimePerTokenS(x) => (units::duration(x), "-".to_owned()),
        };
        rows.push(vec![format!("measured ({source})"), tpot, tokens, String::new()]);
    }
    html! {
        <Canvas id="chart-serving" label={AttrValue::from(if p.measured.is_some() { "Output tokens per second against time per output token, one point per batch size; the ringed point is the current batch; the dashed line is what the source measured." } else { "Output tokens per second against time per output token, one point per batch size; the ringed point is the current batch." })} {draw} {version} width={p.width} {pick}>
            { numbers(&["batch", "time per output token", "output tokens/s", "fits"], &rows) }
        </Canvas>
    }
}

#[derive(Properties, PartialEq)]
pub(super) struct TimelineProps {
    pub(super) good: Rc<Evaluated>,
    pub(super) selected: Option<usize>,
    pub(super) dispatch: Dispatch,
    pub(super) width: u32,
}

#[function_component(TimelineChart)]
pub(super) fn timeline_chart(p: &TimelineProps) -> Html {
    let canvas = use_node_ref();
    let lanes = use_memo(p.good.clone(), |g| Lanes::new(&g.report));
    // The critical path, found in a task of its own after the chart is first drawn (which
    // draws the chart again).
    super::background::use_background(
        p.good.clone(),
        |g| vec![g.clone()],
        |g| {
            g.critical();
        },
    );
    let critical = p.good.critical_if_found();
    let found = critical.is_some();
    let geometry = use_mut_ref(TimelineGeometry::default);
    let hover = use_state(|| None::<(usize, f64, f64)>);
    let problem = use_state(|| None::<String>);
    {
        let canvas = canvas.clone();
        let geometry = geometry.clone();
        let problem = problem.clone();
        let lanes = lanes.clone();
        use_effect_with((p.good.clone(), p.selected, p.width, found), move |(good, selected, _, _)| {
            if let Some(c) = canvas.cast::<HtmlCanvasElement>() {
                match charts::timeline(&c, &Theme::current(), &good.report, &lanes, good.critical_if_found(), *selected)
                {
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
                { format!("{}: starts {}, lasts {}", op.name.category().label(), units::duration(op.start_s), units::duration(op.duration_s)) }<br/>
                { critical.and_then(|c| c.slack_s.get(i)).map(|s| crate::wording::slack(*s, &p.good.report)).unwrap_or_default() }
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
    let path =
        critical.map(|c| format!(" Critical path: {}.", crate::wording::critical_path(r, c))).unwrap_or_default();
    let data_parallel_s: f64 = r.stream(Stream::DataParallel).map(|op| op.duration_s).sum();
    let beside = if data_parallel_s > 0.0 {
        format!(
            " ({} of it on the data-parallel stream, beside the tensor-parallel and pipeline transfers)",
            units::duration(data_parallel_s)
        )
    } else {
        String::new()
    };
    let label = format!(
        "Timeline of {} ops: computation {} busy, communication {} busy{beside}, iteration {}.{path}",
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
            { critical.map(|c| html! {
                <figcaption class="help" id="critical-path">
                    <span class="critical-key" aria-hidden="true"></span>
                    { format!("The dark line along the lanes is the critical path, the chain of ops that sets the {}'s length (each waits for the one before it): {}", crate::wording::timeline_span(r), crate::wording::critical_path(r, c)) }
                </figcaption>
            }).unwrap_or_default() }
        </figure>
    }
}
