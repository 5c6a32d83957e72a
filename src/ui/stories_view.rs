//! The library of famous runs (on the Learn page): each story with what its source reported,
//! what the model predicts and the difference, its what-ifs, a scaling chart where it has one,
//! its assumptions and citations, and buttons that open it in the calculator or the explorer.

use super::canvas::{point_pick, Canvas, Draw, PlacedPoints};
use super::charts;
use super::dom;
use super::fetched::{self, Fetched, Loading};
use super::state::{Action, View, Yardstick};
use crate::accuracy;
use crate::engine::report::Report;
use crate::stories::{self, Metric, Outcome, ScalePoint, Story};
use crate::{share, units};
use std::rc::Rc;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub dispatch: Callback<Action>,
    pub width: u32,
}

/// A metric's value for people, in the reported unit.
fn show(metric: Metric, x: f64, unit: &str) -> String {
    match metric {
        Metric::Mfu | Metric::ScalingEfficiency => units::percent(x),
        Metric::Speedup | Metric::ScalingSpeedup => format!("{}x", units::sig3(x)),
        // A measured run's figure in its own unit, with a prefix where it is large (13.3 M
        // samples/s, not 13310000).
        Metric::SamplesPerS | Metric::ValidationRow => units::si(x, unit),
        Metric::ParamsB => format!("{} {unit}", units::sig3(x)),
    }
}

/// A throughput; below one sample per second without a milli prefix (`0.131 samples/s`).
fn rate(x: f64) -> String {
    if x < 1.0 {
        format!("{} samples/s", units::sig3(x))
    } else {
        units::si(x, "samples/s")
    }
}

/// Iteration time, throughput and memory of one scenario of a story.
fn figures(r: &Report) -> (String, String, String) {
    (
        units::duration(r.iteration_s),
        rate(r.throughput_samples_per_s),
        format!("{} of {}", units::bytes(r.memory.total_bytes), units::bytes(r.memory.capacity_bytes)),
    )
}

/// What limits a scenario, in a few words (the calculator says more).
fn limits(o: &Outcome) -> Html {
    let Ok(r) = &o.report else { return html! {} };
    let words: Vec<String> = r.limits.iter().map(crate::wording::limit_brief).collect();
    if words.is_empty() {
        return html! {};
    }
    html! { <><br /><span class="warn-text">{ words.join("; ") }</span></> }
}

/// The library: its data fetched ([`fetched::use_data`]) the first time, then the stories.
#[function_component(StoriesSection)]
pub fn stories_section(p: &Props) -> Html {
    let status = match fetched::use_data() {
        Loading::Ready(data) => return html! { <Library {data} dispatch={p.dispatch.clone()} width={p.width} /> },
        Loading::Failed(e) => html! { <p class="error-msg" role="alert" id="stories-failed">{ e }</p> },
        Loading::Pending => {
            html! { <p role="status" id="stories-loading">{ "Loading the library of famous runs..." }</p> }
        }
    };
    html! {
        <section class="stories" aria-labelledby="stories-title">
            <h2 id="stories-title">{ "Famous runs" }</h2>
            { status }
        </section>
    }
}

#[derive(Properties, PartialEq)]
struct LibraryProps {
    data: Fetched,
    dispatch: Callback<Action>,
    width: u32,
}

#[function_component(Library)]
fn library(p: &LibraryProps) -> Html {
    let stories = use_memo(p.data.clone(), |d| stories::all_of(&d.0.stories, &accuracy::rows_of(&d.0.csv_texts())));
    // A link to `#story-<id>` scrolls to the story once the library is drawn.
    use_effect_with((), |_| {
        let hash = dom::window().and_then(|w| w.location().hash().ok()).unwrap_or_default();
        if let Some(el) = hash
            .strip_prefix('#')
            .filter(|h| h.starts_with("story-"))
            .and_then(|id| dom::document()?.get_element_by_id(id))
        {
            el.scroll_into_view();
        }
    });
    match &*stories {
        Err(e) => html! { <p class="error-msg">{ format!("The library could not be read: {e}") }</p> },
        Ok(list) => html! {
            <section class="stories" aria-labelledby="stories-title">
                <h2 id="stories-title">{ "Famous runs" }</h2>
                <p class="lead">{ "Published runs and claims, from the seed papers to today's largest jobs. Each states what its source reported, what the model predicts for the same setting, and the difference; every number from a source carries its citation. Open one to see the timeline behind it." }</p>
                <nav class="story-index" aria-label="Famous runs">
                    <ul>{ for list.iter().map(|s| html! { <li><a href={format!("#story-{}", s.spec.id)}>{ &s.spec.title }</a></li> }) }</ul>
                </nav>
                { for list.iter().map(|s| story_card(s, &p.dispatch, p.width)) }
            </section>
        },
    }
}

fn story_card(s: &Story, d: &Callback<Action>, width: u32) -> Html {
    let spec = &s.spec;
    let rep = &spec.reported;
    let cite = |i: Option<usize>| match i.and_then(|i| spec.citations.get(i).map(|c| (i, c))) {
        Some((i, c)) => {
            html! { <sup><a href={c.url.clone()} title={c.text.clone()}>{ format!("[{}]", i + 1) }</a></sup> }
        }
        None => html! {},
    };
    // The base scenario opens with what the source reported for it beside the model's figure.
    let measured = Yardstick {
        source: spec.title.clone(),
        metric: match rep.metric {
            Metric::ValidationRow => crate::wording::capitalised(&rep.unit),
            Metric::Mfu => "MFU".into(),
            Metric::SamplesPerS => "Throughput".into(),
            Metric::ParamsB => "Parameters".into(),
            Metric::Speedup => "The speed-up of the first variant".into(),
            Metric::ScalingSpeedup => "The speed-up from the smallest to the largest cluster".into(),
            Metric::ScalingEfficiency => "Weak-scaling efficiency".into(),
        },
        verb: "reported",
        measured: show(rep.metric, rep.value, &rep.unit),
        predicted: s.predicted.map(|p| show(rep.metric, p, &rep.unit)),
        difference: s.difference(),
        serving: None,
    };
    let open = |doc: crate::doc::Doc, view: View, yardstick: Option<Yardstick>| {
        let d = d.clone();
        Callback::from(move |_| {
            match &yardstick {
                Some(y) => d.emit(Action::LoadMeasured(doc.clone(), y.clone())),
                None => d.emit(Action::LoadDoc(doc.clone())),
            }
            if view != View::Calculator {
                d.emit(Action::SetView(view));
            }
        })
    };
    let explorer = spec.open_in == "explorer";
    let base_view = if explorer { View::Explorer } else { View::Calculator };
    let link = format!("{}?{}", dom::base_url(), base_view.query(&share::encode(&s.base.doc)));
    let story_link = format!("{}?view=learn#story-{}", dom::base_url(), spec.id);
    let diff = s.difference();
    let base_thr = s.base.report.as_ref().ok().map(|r| r.throughput_samples_per_s);
    let row = |o: &Outcome, is_base: bool| {
        let cells = match &o.report {
            Ok(r) => {
                let (it, thr, mem) = figures(r);
                let vs = match (base_thr, is_base) {
                    (_, true) => "1x (base)".to_owned(),
                    (Some(b), false) if b > 0.0 => format!("{}x", units::sig3(r.throughput_samples_per_s / b)),
                    _ => String::new(),
                };
                html! { <>{ for [it, thr, vs, mem].into_iter().map(|x| html! { <td class="num">{ x }</td> }) }</> }
            }
            Err(e) => html! { <td colspan="4" class="error-msg">{ e }</td> },
        };
        html! {
            <tr>
                <th scope="row">{ &o.label }{ limits(o) }</th>
                { cells }
                <td><button class="secondary" onclick={open(o.doc.clone(), View::Calculator, is_base.then(|| measured.clone()))}
                    aria-label={format!("Open {} in the calculator", o.label)}>{ "Open" }</button></td>
            </tr>
        }
    };
    html! {
        <article class="card story" id={format!("story-{}", spec.id)} data-story={spec.id.clone()}
            data-predicted={s.predicted.map(|x| x.to_string()).unwrap_or_default()}
            data-reported={rep.value.to_string()}>
            <h3>{ &spec.title }</h3>
            <p class="teaser">{ &spec.teaser }</p>
            <p>{ &spec.story }{ for (0..spec.citations.len()).map(|i| cite(Some(i))) }</p>
            <table class="comparison">
                <tbody>
                    <tr><th scope="row">{ "The source reported" }</th><td>{ &rep.text }{ cite(rep.citation) }</td></tr>
                    <tr><th scope="row">{ "Compared figure, source" }</th><td class="num reported">{ show(rep.metric, rep.value, &rep.unit) }</td></tr>
                    <tr><th scope="row">{ "The model predicts" }</th><td class="num predicted">{ s.predicted.map(|p| show(rep.metric, p, &rep.unit)).unwrap_or_else(|| "no figure".into()) }</td></tr>
                    <tr><th scope="row">{ "Difference" }</th><td class="num difference">{ diff.map(|x| format!("{:+.1} %", x * 100.0)).unwrap_or_default() }</td></tr>
                </tbody>
            </table>
            <div class="table-wrap" tabindex="0" role="region" aria-label={format!("Scenarios of {}", spec.title)}>
                <table class="rows">
                    { super::validation_view::head(&["scenario", "iteration", "throughput", "vs base", "memory per GPU"], "open") }
                    <tbody>
                        { row(&s.base, true) }
                        { for s.variants.iter().map(|v| row(v, false)) }
                    </tbody>
                </table>
            </div>
            { if s.scaling.is_empty() { html! {} } else { scaling_chart(&spec.id, &s.scaling, width) } }
            <details class="assumptions">
                <summary>{ "Assumptions" }</summary>
                <ul>{ for spec.assumptions.iter().map(|a| html! { <li>{ a }</li> }) }</ul>
            </details>
            <div class="story-actions">
                <button onclick={open(s.base.doc.clone(), base_view, Some(measured.clone()))}>{ if explorer { "Open in explorer" } else { "Open in calculator" } }</button>
                <a href={link}>{ "Link to the scenario" }</a>
                <a href={story_link}>{ "Link to this story" }</a>
            </div>
            { if spec.citations.is_empty() { html! {} } else { html! {
                <ol class="citations">{ for spec.citations.iter().map(|c| html! { <li><a href={c.url.clone()}>{ &c.text }</a></li> }) }</ol>
            } } }
        </article>
    }
}

/// The scaling chart of a story and its numbers.
fn scaling_chart(id: &str, points: &[ScalePoint], width: u32) -> Html {
    // The stories do not change while the page is open: one version is enough.
    let pts = points.to_vec();
    // Pointing at a point gives its throughput and efficiency, in the order the chart places
    // them: weak scaling, then strong, where each has a figure.
    let weak: fn(&ScalePoint) -> Option<f64> = |p| p.weak;
    let strong: fn(&ScalePoint) -> Option<f64> = |p| p.strong;
    let mut said = Vec::new();
    for (what, get) in [("weak scaling", weak), ("strong scaling", strong)] {
        let series: Vec<(u64, f64)> = points.iter().filter_map(|p| Some((p.gpus, get(p)?))).collect();
        let Some(&(n0, t0)) = series.first() else { continue };
        for &(n, t) in &series {
            let eff = units::percent((t / n as f64) / (t0 / n0.max(1) as f64));
            said.push(format!("{what}, {n} GPUs: {}, {eff} efficiency", units::si(t, "samples/s")));
        }
    }
    let placed = Rc::new(PlacedPoints::default());
    let pick = point_pick(placed.clone(), said);
    let draw: Draw = Rc::new(move |c, theme| charts::scaling(c, theme, &pts, &placed));
    let first = points.first().map_or(1, |x| x.gpus.max(1)) as f64;
    let efficiency = |x: &ScalePoint, t: Option<f64>, t0: Option<f64>| -> String {
        match (t, t0) {
            (Some(t), Some(t0)) => units::percent((t / x.gpus as f64) / (t0 / first)),
            _ => "-".into(),
        }
    };
    let (w0, s0) = (points.first().and_then(|x| x.weak), points.first().and_then(|x| x.strong));
    html! {
            <Canvas id={format!("chart-scaling-{id}")} {draw} version={0} {width} {pick}
                label="Speed-up against GPU count, with the ideal linear line; the table below gives every point.">
            <details class="chart-data">
                <summary>{ "The numbers" }</summary>
                <table>
                    <thead><tr>
                        <th scope="col">{ "GPUs" }</th><th scope="col">{ "weak: samples/s" }</th><th scope="col">{ "weak: efficiency" }</th>
                        <th scope="col">{ "strong: samples/s" }</th><th scope="col">{ "strong: efficiency" }</th>
                    </tr></thead>
                    <tbody>{ for points.iter().map(|x| html! {
                        <tr>
                            <td>{ x.gpus }</td>
                            <td>{ x.weak.map(rate).unwrap_or_else(|| "-".into()) }</td>
                            <td>{ efficiency(x, x.weak, w0) }</td>
                            <td>{ x.strong.map(rate).unwrap_or_else(|| "-".into()) }</td>
                            <td>{ efficiency(x, x.strong, s0) }</td>
                        </tr>
                    }) }</tbody>
                </table>
            </details>
            </Canvas>
    }
}
