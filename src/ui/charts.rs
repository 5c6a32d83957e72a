//! Charts drawn with plotters on a `<canvas>`: the time breakdown, the two-stream timeline,
//! throughput sweeps and memory per GPU. Each takes plain data from the report; errors become
//! text the page shows, never a panic.
//!
//! One job: drawing the charts.

use super::canvas::PlacedPoints;
use super::chart_backend::Canvas2d;
use super::pick::{clear_labels, LabelBox};
use super::state::ServingMark;
use super::sweep::{Point, ServePoint};
use super::timeline::{critical_bars, Lanes};
use crate::engine::critical::CriticalPath;
use crate::engine::ops::{Category, Stream};
use crate::engine::report::{MemPart, Report};
use crate::stories::ScalePoint;
use crate::units;
use plotters::chart::MeshStyle;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use web_sys::HtmlCanvasElement;

/// One colour per op kind, the same in every chart and legend (Okabe-Ito palette: readable by
/// colour-blind people, on light and dark backgrounds).
pub fn category_rgb(c: Category) -> (u8, u8, u8) {
    match c {
        Category::Gemm => (0, 114, 178),
        Category::Emb => (0, 158, 115),
        Category::AllToAll => (230, 159, 0),
        Category::AllReduce => (213, 94, 0),
        Category::AllGather => (204, 121, 167),
        Category::ReduceScatter => (86, 180, 233),
        Category::Optimizer => (240, 228, 66),
        Category::P2p => (153, 102, 51),
        Category::Idle => (205, 205, 205),
    }
}

/// Exposed communication (the compute stream waiting).
pub const EXPOSED_RGB: (u8, u8, u8) = (150, 150, 150);

/// CSS colour of an RGB triple.
pub fn css(rgb: (u8, u8, u8)) -> String {
    format!("rgb({}, {}, {})", rgb.0, rgb.1, rgb.2)
}

fn color(rgb: (u8, u8, u8)) -> RGBColor {
    RGBColor(rgb.0, rgb.1, rgb.2)
}

/// Colours and sizes for the current theme and pixel density.
#[derive(Clone, Copy)]
pub struct Theme {
    pub dark: bool,
    pub ratio: f64,
}

impl Theme {
    /// The theme the browser asks for, at its pixel density.
    pub fn current() -> Theme {
        Theme { dark: super::dom::prefers_dark(), ratio: super::dom::pixel_ratio() }
    }
    fn text(&self) -> RGBColor {
        if self.dark {
            RGBColor(230, 237, 243)
        } else {
            RGBColor(27, 31, 36)
        }
    }
    fn grid(&self) -> RGBColor {
        if self.dark {
            RGBColor(60, 66, 74)
        } else {
            RGBColor(222, 226, 230)
        }
    }
    fn px(&self, css_px: f64) -> u32 {
        (css_px * self.ratio).round() as u32
    }
    fn font(&self, css_px: f64) -> TextStyle<'static> {
        ("sans-serif", css_px * self.ratio).into_font().color(&self.text())
    }
}

type Area = DrawingArea<Canvas2d, Shift>;

/// The theme's look for a chart's mesh (labels, axes, grid): one place for every chart.
trait Themed {
    fn themed(&mut self, theme: &Theme) -> &mut Self;
}

impl<X, Y, XT, YT> Themed for MeshStyle<'_, '_, X, Y, Canvas2d>
where
    X: Ranged<ValueType = XT> + ValueFormatter<XT>,
    Y: Ranged<ValueType = YT> + ValueFormatter<YT>,
{
    fn themed(&mut self, theme: &Theme) -> &mut Self {
        self.label_style(theme.font(12.0))
            .axis_desc_style(theme.font(12.0))
            .axis_style(theme.text())
            .bold_line_style(theme.grid())
            .light_line_style(TRANSPARENT)
    }
}

/// Sizes the canvas's backing store to its CSS box times the pixel ratio, and wraps it.
fn area(canvas: &HtmlCanvasElement, theme: &Theme, css_height: u32) -> Result<Area, String> {
    let css_width = canvas.client_width().max(200) as f64;
    canvas.set_width((css_width * theme.ratio).round() as u32);
    canvas.set_height((css_height as f64 * theme.ratio).round() as u32);
    let backend = Canvas2d::new(canvas).ok_or("this browser gave no 2D canvas")?;
    Ok(backend.into_drawing_area())
}

/// The index an axis value stands for when the data sit on whole numbers (groups, rows): the
/// whole number within 0.01 of it, if it is not negative.
fn whole_index(v: f64) -> Option<usize> {
    let i = v.round();
    ((v - i).abs() < 0.01 && i >= 0.0).then_some(i as usize)
}

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("the chart could not be drawn ({e:?})")
}

/// A time unit for an axis: scale (value x scale) and label.
fn time_unit(max_s: f64) -> (f64, &'static str) {
    if max_s >= 1.0 {
        (1.0, "s")
    } else if max_s >= 1e-3 {
        (1e3, "ms")
    } else {
        (1e6, "\u{b5}s")
    }
}

/// A chart of horizontal lanes over time from 0 to `x.0` in the unit `x.1`, its mesh drawn: lane
/// k spans y from k to k + 1, `lanes` names them bottom first.
fn lanes_chart<'a>(
    root: &'a Area,
    theme: &Theme,
    title: &str,
    x: (f64, &str),
    lanes: &[&'static str],
    label_width_px: f64,
) -> Result<ChartContext<'a, Canvas2d, Cartesian2d<RangedCoordf64, RangedCoordf64>>, String> {
    let n = lanes.len().max(1);
    let mut chart = ChartBuilder::on(root)
        .margin(theme.px(8.0))
        .caption(title, theme.font(15.0))
        .x_label_area_size(theme.px(36.0))
        .y_label_area_size(theme.px(label_width_px))
        .build_cartesian_2d(0.0..x.0.max(1e-12), 0.0..n as f64)
        .map_err(err)?;
    // Labels every half lane, named at each lane's middle only.
    let name = |y: &f64| {
        let middle = (y - y.floor() - 0.5).abs() < 1e-6;
        let lane = lanes.get((y.max(0.0) as usize).min(n - 1)).copied().unwrap_or("");
        if middle {
            lane.to_owned()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(2 * n + 1)
        .y_label_formatter(&name)
        .x_desc(format!("time ({})", x.1))
        .themed(theme)
        .draw()
        .map_err(err)?;
    Ok(chart)
}

/// Serialized vs overlapped time: every op back to back, against what the two streams achieve.
pub fn breakdown(canvas: &HtmlCanvasElement, theme: &Theme, r: &Report) -> Result<(), String> {
    let root = area(canvas, theme, 190)?;
    let serial = r.compute_s + r.comm_s;
    // The overlapped bar holds idle time (a pipeline's bubble, waiting for input) that the
    // serialized one does not: the axis covers the longer of the two.
    let longest = serial.max(r.compute_s + r.exposed_comm_s.max(0.0) + r.idle_s);
    let (scale, unit) = time_unit(longest);
    let xmax = longest * scale * 1.04;
    let mut chart = lanes_chart(
        &root,
        theme,
        &format!("Serialized vs overlapped time per {}", crate::wording::timeline_span(r)),
        (xmax, unit),
        &["overlapped", "serialized"],
        92.0,
    )?;
    let mut bars = Vec::new();
    let mut x = 0.0;
    for c in Category::ALL.into_iter().filter(|c| *c != Category::Idle) {
        let w = r.totals.get(c) * scale;
        bars.push(Rectangle::new([(x, 1.15), (x + w, 1.85)], color(category_rgb(c)).filled()));
        x += w;
    }
    let mut x = 0.0;
    for (w, rgb) in [
        (r.totals.gemm_s * scale, category_rgb(Category::Gemm)),
        (r.totals.emb_s * scale, category_rgb(Category::Emb)),
        (r.totals.optimizer_s * scale, category_rgb(Category::Optimizer)),
        (r.exposed_comm_s.max(0.0) * scale, EXPOSED_RGB),
        (r.idle_s * scale, category_rgb(Category::Idle)),
    ] {
        bars.push(Rectangle::new([(x, 0.15), (x + w, 0.85)], color(rgb).filled()));
        x += w;
    }
    chart.draw_series(bars).map_err(err)?;
    root.present().map_err(err)
}

/// Where the timeline chart's plotting area lies, to map the pointer back to an op.
#[derive(Clone, Copy, Debug, Default)]
pub struct TimelineGeometry {
    /// Plotting area in canvas pixels.
    pub x0: f64,
    pub x1: f64,
    pub y0: f64,
    pub y1: f64,
    pub end_s: f64,
    /// The lanes drawn, top first: the first this many of [`Stream::ALL`].
    pub lanes: usize,
}

impl TimelineGeometry {
    /// The op under canvas pixel (x, y), if any: the plotting area holds the lanes in equal
    /// bands, computation on top, then communication, then the data-parallel stream when
    /// drawn; two pixels of slack for thin ops.
    pub fn hit(&self, r: &Report, lanes: &Lanes, x: f64, y: f64) -> Option<usize> {
        if x < self.x0 || x > self.x1 || y < self.y0 || y > self.y1 || self.x1 <= self.x0 || self.y1 <= self.y0 {
            return None;
        }
        let t = (x - self.x0) / (self.x1 - self.x0) * self.end_s;
        let n = self.lanes.clamp(1, Stream::ALL.len());
        let band = (((y - self.y0) / (self.y1 - self.y0) * n as f64) as usize).min(n - 1);
        lanes.hit(r, Stream::ALL[band], t, 2.0 / (self.x1 - self.x0) * self.end_s)
    }
}

/// The streams over one iteration (two, or three with the data-parallel stream), coloured by kind: ops a pixel wide or more as
/// themselves, narrower ones merged ([`Lanes::bars`]); the critical path, once found, as a
/// line in the text colour along each lane's outer edge ([`critical_bars`]).
pub fn timeline(
    canvas: &HtmlCanvasElement,
    theme: &Theme,
    r: &Report,
    lanes: &Lanes,
    critical: Option<&CriticalPath>,
    selected: Option<usize>,
) -> Result<TimelineGeometry, String> {
    // The data-parallel stream gets a lane only where the model ran one.
    let n = if lanes.has(Stream::DataParallel) { 3 } else { 2 };
    let root = area(canvas, theme, if n == 3 { 220 } else { 170 })?;
    let (scale, unit) = time_unit(r.iteration_s);
    let xmax = (r.iteration_s * scale).max(1e-12);
    let names: &[&'static str] =
        if n == 3 { &["data-parallel", "communication", "computation"] } else { &["communication", "computation"] };
    let mut chart = lanes_chart(
        &root,
        theme,
        &format!(
            "{} timeline of one {}",
            if n == 3 { "Three-stream" } else { "Two-stream" },
            crate::wording::timeline_span(r)
        ),
        (xmax, unit),
        names,
        104.0,
    )?;
    // Lane k of Stream::ALL from the top: the band from n - 1 - k to n - k.
    let base = |s: Stream| (n - 1 - Stream::ALL.iter().position(|x| *x == s).unwrap_or(0).min(n - 1)) as f64;
    let lane = |s: Stream| (base(s) + 0.1, base(s) + 0.9);
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let bars = lanes.bars(r, (xr.end - xr.start) as f64);
    chart
        .draw_series(bars.iter().map(|b| {
            let (y0, y1) = lane(b.stream);
            Rectangle::new([(b.start_s * scale, y0), (b.end_s * scale, y1)], color(category_rgb(b.category)).filled())
        }))
        .map_err(err)?;
    // The critical path runs along the top lane's top edge and the other lanes' bottom edges.
    let edge = |s: Stream| {
        if s == Stream::Computation {
            (base(s) + 0.91, base(s) + 0.99)
        } else {
            (base(s) + 0.01, base(s) + 0.09)
        }
    };
    if let Some(cp) = critical {
        chart
            .draw_series(critical_bars(r, cp, (xr.end - xr.start) as f64).iter().map(|b| {
                let (y0, y1) = edge(b.stream);
                Rectangle::new([(b.start_s * scale, y0), (b.end_s * scale, y1)], theme.text().filled())
            }))
            .map_err(err)?;
    }
    if let Some(o) = selected.and_then(|i| r.timeline.get(i)) {
        let (y0, y1) = lane(o.name.stream());
        let mark = theme.text().stroke_width(theme.px(2.0));
        chart
            .draw_series([Rectangle::new([(o.start_s * scale, y0 - 0.05), (o.end_s() * scale, y1 + 0.05)], mark)])
            .map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(TimelineGeometry {
        x0: xr.start as f64,
        x1: xr.end as f64,
        y0: yr.start as f64,
        y1: yr.end as f64,
        end_s: r.iteration_s,
        lanes: n,
    })
}

/// A chart's place with one line of text in it (while its numbers are being computed).
pub fn message(canvas: &HtmlCanvasElement, theme: &Theme, css_height: u32, text: &str) -> Result<(), String> {
    let root = area(canvas, theme, css_height)?;
    root.draw(&Text::new(text.to_owned(), (theme.px(10.0) as i32, theme.px(30.0) as i32), theme.font(13.0)))
        .map_err(err)?;
    root.present().map_err(err)
}

/// A throughput sweep's title, x-axis text, colour, and whether to draw perfect scaling.
#[derive(Clone, Copy)]
pub struct SweepLook<'a> {
    pub title: &'a str,
    pub x_desc: &'a str,
    pub rgb: (u8, u8, u8),
    pub ideal: bool,
}

/// Throughput against a swept quantity. The sizes are powers of two apart, so they sit at even
/// spacing (a log-2 axis) with their exact values as labels; the configured point is ringed.
/// With `ideal`, a dashed line of perfect scaling from the first size that runs: throughput in
/// proportion to `x` (the x axis doubles at each step, so a straight rise is not linear
/// scaling; the line shows what would be).
pub fn sweep(
    canvas: &HtmlCanvasElement,
    theme: &Theme,
    look: &SweepLook,
    points: &[Point],
    placed: &PlacedPoints,
) -> Result<(), String> {
    let SweepLook { title, x_desc, rgb, ideal } = *look;
    let root = area(canvas, theme, 220)?;
    let first = points.iter().enumerate().find_map(|(i, p)| Some((i, p.x, p.samples_per_s?))).filter(|f| f.1 > 0.0);
    let perfect: Vec<(f64, f64)> = match first {
        Some((i0, x0, y0)) if ideal => {
            points.iter().enumerate().skip(i0).map(|(i, p)| (i as f64, y0 * p.x / x0)).collect()
        }
        _ => Vec::new(),
    };
    let ymax =
        points.iter().filter_map(|p| p.samples_per_s).chain(perfect.iter().map(|p| p.1)).fold(0.0, f64::max) * 1.15;
    if points.is_empty() || ymax <= 0.0 {
        root.draw(&Text::new(
            "no valid plan at these sizes",
            (theme.px(10.0) as i32, theme.px(30.0) as i32),
            theme.font(13.0),
        ))
        .map_err(err)?;
        return root.present().map_err(err);
    }
    let n = points.len();
    // Exact sizes (256, 2048) unless they get long.
    let labels: Vec<String> = points
        .iter()
        .map(|p| if p.x < 1e5 { format!("{}", p.x) } else { units::count(p.x).replace(' ', "") })
        .collect();
    let mut chart = ChartBuilder::on(&root)
        .margin(theme.px(8.0))
        .caption(title, theme.font(15.0))
        .x_label_area_size(theme.px(38.0))
        .y_label_area_size(theme.px(64.0))
        .build_cartesian_2d(-0.5..(n as f64 - 0.5), 0.0..ymax)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("samples/s")
        .x_labels(n)
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                labels.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_labels(6)
        .y_label_formatter(&|y| units::si(*y, "").trim().to_owned())
        .disable_x_mesh()
        .themed(theme)
        .draw()
        .map_err(err)?;
    let c = color(rgb);
    if perfect.len() > 1 {
        let style = theme.text().mix(0.6).stroke_width(theme.px(1.5));
        chart
            .draw_series(DashedLineSeries::new(perfect.iter().copied(), theme.px(6.0), theme.px(4.0), style))
            .map_err(err)?
            .label("perfect scaling")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], style));
    }
    let valid: Vec<(f64, f64)> =
        points.iter().enumerate().filter_map(|(i, p)| Some((i as f64, p.samples_per_s?))).collect();
    chart.draw_series(LineSeries::new(valid.iter().copied(), c.stroke_width(theme.px(2.0)))).map_err(err)?;
    chart.draw_series(valid.iter().map(|&(x, y)| Circle::new((x, y), theme.px(3.5), c.filled()))).map_err(err)?;
    for (i, p) in points.iter().enumerate().filter(|(_, p)| p.current) {
        if let Some(y) = p.samples_per_s {
            chart
                .draw_series([Circle::new((i as f64, y), theme.px(7.0), theme.text().stroke_width(theme.px(2.0)))])
                .map_err(err)?;
        }
    }
    if perfect.len() > 1 {
        legend_box(&mut chart, theme, SeriesLabelPosition::UpperLeft)?;
    }
    let at = points.iter().enumerate().map(|(i, p)| p.samples_per_s.map(|y| (i as f64, y)));
    place_points(chart.plotting_area(), at, theme, placed);
    root.present().map_err(err)
}

/// Weights per GPU, by component, against the GPU's HBM capacity.
pub fn memory(
    canvas: &HtmlCanvasElement,
    theme: &Theme,
    r: &Report,
    placed: &super::canvas::Placed,
) -> Result<(), String> {
    let root = area(canvas, theme, 130)?;
    let m = &r.memory;
    let xmax = m.total_bytes.max(m.capacity_bytes) * 1.08 / 1e9;
    let mut chart = ChartBuilder::on(&root)
        .margin(theme.px(8.0))
        .caption("Memory per GPU vs HBM capacity", theme.font(15.0))
        .x_label_area_size(theme.px(36.0))
        .y_label_area_size(theme.px(20.0))
        .build_cartesian_2d(0.0..xmax.max(1e-9), 0.0..1.0)
        .map_err(err)?;
    chart.configure_mesh().disable_y_mesh().y_labels(0).x_desc("GB").themed(theme).draw().map_err(err)?;
    let mut x = 0.0;
    let mut bars = Vec::new();
    for (c, bytes) in &m.parts {
        let w = bytes / 1e9;
        bars.push(Rectangle::new([(x, 0.2), (x + w, 0.8)], color(component_rgb(*c)).filled()));
        x += w;
    }
    chart.draw_series(bars).map_err(err)?;
    // Each part's segment, in the order of the parts.
    let area = chart.plotting_area();
    let mut x = 0.0;
    *placed.borrow_mut() = m
        .parts
        .iter()
        .map(|(_, bytes)| {
            let w = bytes / 1e9;
            let rect = css_rect(area.map_coordinate(&(x, 0.2)), area.map_coordinate(&(x + w, 0.8)), theme);
            x += w;
            rect
        })
        .collect();
    let cap = m.capacity_bytes / 1e9;
    let over = m.total_bytes > m.capacity_bytes;
    let line = if over { RGBColor(213, 94, 0) } else { theme.text() };
    chart
        .draw_series([PathElement::new(vec![(cap, 0.05), (cap, 0.95)], line.stroke_width(theme.px(2.0)))])
        .map_err(err)?;
    root.present().map_err(err)
}

/// LLM serving: output tokens/s (y) against time per output token (x), one point per batch
/// size, labelled with the batch; points that do not fit in memory are grey.
pub fn serving(
    canvas: &HtmlCanvasElement,
    theme: &Theme,
    points: &[ServePoint],
    measured: Option<ServingMark>,
    placed: &PlacedPoints,
) -> Result<(), String> {
    let root = area(canvas, theme, 260)?;
    let (measured_tokens, measured_ms) = match measured {
        Some(ServingMark::OutputTokensPerS(x)) => (x, 0.0),
        Some(ServingMark::TimePerTokenS(x)) => (0.0, x * 1e3),
        None => (0.0, 0.0),
    };
    let ymax = points.iter().map(|p| p.tokens_per_s).fold(measured_tokens, f64::max) * 1.15;
    let xmax = points.iter().map(|p| p.tpot_s * 1e3).fold(measured_ms, f64::max) * 1.1;
    if points.is_empty() || ymax <= 0.0 || xmax <= 0.0 {
        root.draw(&Text::new("no serving point", (theme.px(10.0) as i32, theme.px(30.0) as i32), theme.font(13.0)))
            .map_err(err)?;
        return root.present().map_err(err);
    }
    let mut chart = ChartBuilder::on(&root)
        .margin(theme.px(8.0))
        .caption("Serving: output tokens/s vs time per output token", theme.font(15.0))
        .x_label_area_size(theme.px(38.0))
        .y_label_area_size(theme.px(64.0))
        .build_cartesian_2d(0.0..xmax, 0.0..ymax)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("time per output token (ms)")
        .y_desc("output tokens/s")
        .y_label_formatter(&|y| units::si(*y, "").trim().to_owned())
        .themed(theme)
        .draw()
        .map_err(err)?;
    let blue = color((0, 114, 178));
    let grey = RGBColor(160, 160, 160);
    let fit: Vec<(f64, f64)> = points.iter().filter(|p| p.fits).map(|p| (p.tpot_s * 1e3, p.tokens_per_s)).collect();
    chart.draw_series(LineSeries::new(fit.iter().copied(), blue.stroke_width(theme.px(2.0)))).map_err(err)?;
    // Each batch's label right of and below its marker (clear of the ring around the current
    // one), left out where it would overlap one already drawn: the current batch's first,
    // then from the smallest batch up (points crowd where the batches are small).
    let (dx, dy) = (theme.px(7.0) as i32, theme.px(2.0) as i32);
    let font_px = theme.px(11.0) as i32;
    let boxes: Vec<LabelBox> = points
        .iter()
        .map(|p| {
            let (x, y) = chart.backend_coord(&(p.tpot_s * 1e3, p.tokens_per_s));
            let w = (p.batch.to_string().len() as i32 * font_px * 3 + 4) / 5;
            LabelBox { x: x + dx, y: y + dy, w, h: font_px }
        })
        .collect();
    let order =
        points.iter().position(|p| p.current).into_iter().chain((0..points.len()).filter(|&i| !points[i].current));
    let shown = clear_labels(&boxes, order);
    for (p, show) in points.iter().zip(shown) {
        let at = (p.tpot_s * 1e3, p.tokens_per_s);
        let c = if p.fits { blue } else { grey };
        chart.draw_series([Circle::new(at, theme.px(3.5), c.filled())]).map_err(err)?;
        if show {
            let label = EmptyElement::at(at) + Text::new(p.batch.to_string(), (dx, dy), theme.font(11.0));
            chart.draw_series([label]).map_err(err)?;
        }
        if p.current {
            chart
                .draw_series([Circle::new(at, theme.px(7.0), theme.text().stroke_width(theme.px(2.0)))])
                .map_err(err)?;
        }
    }
    // What the source measured: a dashed line across the chart at its figure.
    let orange = color((213, 94, 0));
    let dashed = |from: (f64, f64), to: (f64, f64)| {
        let n = 24;
        (0..n).filter(|k| k % 2 == 0).map(move |k| {
            let at = |k: usize| {
                let f = k as f64 / n as f64;
                (from.0 + f * (to.0 - from.0), from.1 + f * (to.1 - from.1))
            };
            PathElement::new(vec![at(k), at(k + 1)], orange.stroke_width(theme.px(2.0)))
        })
    };
    match measured {
        Some(ServingMark::OutputTokensPerS(y)) => {
            chart.draw_series(dashed((0.0, y), (xmax, y))).map_err(err)?;
            let label = format!("measured: {}", units::si(y, "tokens/s"));
            // At the right end, above the line: clear of the curve's small batches on the left.
            let style = theme.font(12.0).color(&orange).pos(Pos::new(HPos::Right, VPos::Bottom));
            chart.draw_series([Text::new(label, (xmax * 0.99, y), style)]).map_err(err)?;
        }
        Some(ServingMark::TimePerTokenS(x)) => {
            let x = x * 1e3;
            chart.draw_series(dashed((x, 0.0), (x, ymax))).map_err(err)?;
            let label = format!("measured: {}", units::duration(x / 1e3));
            chart.draw_series([Text::new(label, (x, ymax * 0.95), theme.font(12.0).color(&orange))]).map_err(err)?;
        }
        None => {}
    }
    place_points(chart.plotting_area(), points.iter().map(|p| Some((p.tpot_s * 1e3, p.tokens_per_s))), theme, placed);
    root.present().map_err(err)
}

/// Colour of a part of memory.
pub fn component_rgb(c: MemPart) -> (u8, u8, u8) {
    match c {
        MemPart::Mlp | MemPart::Weights => (0, 114, 178),
        MemPart::Emb | MemPart::Activations => (0, 158, 115),
        MemPart::Transformer | MemPart::OptimizerStates => (204, 121, 167),
        MemPart::Gradients => (230, 159, 0),
        MemPart::Buffers => (150, 150, 150),
        MemPart::KvCache => (86, 180, 233),
    }
}

/// Horizontal bars: the best plans' throughput (labels are the plans), the baseline marked.
pub fn ranked(
    canvas: &HtmlCanvasElement,
    theme: &Theme,
    bars: &[(String, f64, bool)],
    baseline: f64,
    placed: &super::canvas::Placed,
) -> Result<(), String> {
    let height = 60 + 22 * bars.len() as u32;
    let root = area(canvas, theme, height)?;
    let xmax = bars.iter().map(|b| b.1).fold(baseline, f64::max) * 1.08;
    let n = bars.len().max(1) as f64;
    let names: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
    let mut chart = ChartBuilder::on(&root)
        .margin(theme.px(8.0))
        .caption("Best plans by throughput", theme.font(15.0))
        .x_label_area_size(theme.px(34.0))
        .y_label_area_size(theme.px(34.0))
        .build_cartesian_2d(0.0..xmax.max(1e-12), 0.0..n)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_desc("samples/s")
        .x_label_formatter(&|x| units::si(*x, "").trim().to_owned())
        .themed(theme)
        .draw()
        .map_err(err)?;
    let blue = color(category_rgb(Category::Gemm));
    let grey = color(EXPOSED_RGB);
    chart
        .draw_series(bars.iter().enumerate().map(|(i, (_, v, fits))| {
            let y = n - i as f64;
            Rectangle::new([(0.0, y - 0.85), (*v, y - 0.15)], if *fits { blue.filled() } else { grey.filled() })
        }))
        .map_err(err)?;
    // Each label inside its bar, cut to what the bar holds (on a phone a whole plan does not
    // fit; the table below has it).
    let (xs, _) = chart.plotting_area().get_pixel_range();
    let plot_px = f64::from(xs.end - xs.start);
    let char_px = f64::from(theme.px(11.0)) * 0.56;
    chart
        .draw_series(names.iter().zip(bars).enumerate().map(|(i, (name, bar))| {
            let y = n - i as f64 - 0.5;
            let name = name.strip_prefix("transformer ").unwrap_or(name);
            let label = format!("{}. {name}", i + 1);
            let room = ((plot_px * bar.1 / xmax - 2.0 * char_px) / char_px).max(0.0) as usize;
            let label = if label.chars().count() <= room {
                label
            } else {
                label.chars().take(room.saturating_sub(1)).chain(std::iter::once('\u{2026}')).collect()
            };
            Text::new(label, (xmax * 0.01, y + 0.25), theme.font(11.0).color(&WHITE))
        }))
        .map_err(err)?;
    let mark = color(category_rgb(Category::AllReduce)).stroke_width(theme.px(2.0));
    chart.draw_series([PathElement::new(vec![(baseline, 0.0), (baseline, n)], mark)]).map_err(err)?;
    // Each plan's row, across the whole plot (a short bar can be pointed at beside it too).
    let area = chart.plotting_area();
    *placed.borrow_mut() = (0..bars.len())
        .map(|i| {
            let y = n - i as f64;
            css_rect(area.map_coordinate(&(0.0, y - 0.05)), area.map_coordinate(&(xmax, y - 0.95)), theme)
        })
        .collect();
    root.present().map_err(err)
}

/// Records where data points landed on a plot ([`PlacedPoints`]); a point that was not drawn
/// is placed nowhere (NaN: nothing is near it).
fn place_points(
    area: &DrawingArea<Canvas2d, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    points: impl Iterator<Item = Option<(f64, f64)>>,
    theme: &Theme,
    placed: &PlacedPoints,
) {
    *placed.borrow_mut() = points
        .map(|p| match p {
            Some(p) => {
                let (x, y) = area.map_coordinate(&p);
                (f64::from(x) / theme.ratio, f64::from(y) / theme.ratio)
            }
            None => (f64::NAN, f64::NAN),
        })
        .collect();
}

/// A rectangle between two corners in canvas pixels, as `[left, top, right, bottom]` in CSS
/// pixels ([`super::canvas::Placed`]).
fn css_rect(a: (i32, i32), b: (i32, i32), theme: &Theme) -> [f64; 4] {
    let (x0, x1) = (a.0.min(b.0), a.0.max(b.0));
    let (y0, y1) = (a.1.min(b.1), a.1.max(b.1));
    [x0, y0, x1, y1].map(|v| f64::from(v) / theme.ratio)
}

/// A scatter chart's content: points `(x, y, fits)`, its Pareto front (indices into
/// `points`), axis texts and formats, and an optional vertical limit line.
pub struct Scatter<'a> {
    pub title: &'a str,
    pub axes: (&'a str, &'a str),
    pub points: &'a [(f64, f64, bool)],
    pub front: &'a [usize],
    pub formats: (&'a dyn Fn(f64) -> String, &'a dyn Fn(f64) -> String),
    pub limit_x: Option<f64>,
    /// Where the drawing leaves the points on the canvas, for pointing at them.
    pub placed: Option<&'a PlacedPoints>,
}

/// A scatter of plans with its Pareto front drawn as a line.
pub fn pareto(canvas: &HtmlCanvasElement, theme: &Theme, sc: &Scatter) -> Result<(), String> {
    let Scatter { title, axes: (x_desc, y_desc), points, front, formats: (x_fmt, y_fmt), limit_x, placed } = *sc;
    let root = area(canvas, theme, 240)?;
    if points.is_empty() {
        return root.present().map_err(err);
    }
    // With a capacity line, plans far beyond it would squeeze the ones that fit into a corner:
    // the axis ends at twice the larger of the capacity and the plans that fit, and plans
    // beyond sit on its edge, counted.
    let all_xmax = points.iter().map(|p| p.0).chain(limit_x).fold(0.0, f64::max);
    let xmax = match limit_x {
        Some(cap) => all_xmax.min(2.0 * points.iter().filter(|p| p.2).map(|p| p.0).fold(cap, f64::max)),
        None => all_xmax,
    } * 1.08;
    let edge = xmax / 1.08;
    let beyond = points.iter().filter(|p| p.0 > edge).count();
    let ymax = points.iter().map(|p| p.1).fold(0.0, f64::max) * 1.12;
    let mut chart = ChartBuilder::on(&root)
        .margin(theme.px(8.0))
        .caption(title, theme.font(15.0))
        .x_label_area_size(theme.px(38.0))
        .y_label_area_size(theme.px(64.0))
        .build_cartesian_2d(0.0..xmax.max(1e-12), 0.0..ymax.max(1e-12))
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_labels(6)
        .y_labels(6)
        .x_label_formatter(&|x| x_fmt(*x))
        .y_label_formatter(&|y| y_fmt(*y))
        .themed(theme)
        .draw()
        .map_err(err)?;
    let blue = color(category_rgb(Category::Gemm));
    let grey = color(EXPOSED_RGB);
    chart
        .draw_series(points.iter().map(|&(x, y, fits)| {
            Circle::new(
                (x.min(edge), y),
                theme.px(4.0),
                if fits { blue.mix(0.7).filled() } else { grey.mix(0.7).filled() },
            )
        }))
        .map_err(err)?;
    if let Some(placed) = placed {
        place_points(chart.plotting_area(), points.iter().map(|&(x, y, _)| Some((x.min(edge), y))), theme, placed);
    }
    if beyond > 0 {
        let text = format!("{beyond} plans beyond, up to {} \u{2192}", x_fmt(all_xmax));
        let style = theme.font(11.0).pos(Pos::new(HPos::Right, VPos::Bottom));
        chart.draw_series([Text::new(text, (edge, ymax * 0.03), style)]).map_err(err)?;
    }
    if let Some(x) = limit_x {
        let style = theme.text().stroke_width(theme.px(1.5));
        chart.draw_series([PathElement::new(vec![(x, 0.0), (x, ymax)], style)]).map_err(err)?;
        chart.draw_series([Text::new("HBM capacity", (x, ymax * 0.97), theme.font(11.0))]).map_err(err)?;
    }
    let orange = color(category_rgb(Category::AllReduce));
    let line: Vec<(f64, f64)> = front.iter().filter_map(|&i| points.get(i)).map(|p| (p.0, p.1)).collect();
    chart.draw_series(LineSeries::new(line.iter().copied(), orange.stroke_width(theme.px(2.0)))).map_err(err)?;
    chart
        .draw_series(line.iter().map(|&p| Circle::new(p, theme.px(5.0), orange.stroke_width(theme.px(2.0)))))
        .map_err(err)?;
    root.present().map_err(err)
}

/// One group of the co-design chart: a resource's name and short name, and its
/// (factor, speed-up) bars.
pub type SpeedupGroup = (&'static str, &'static str, Vec<(f64, Option<f64>)>);

/// Grouped bars: for each resource, the speed-up of the best plan at each scale factor;
/// `placed` gets where each bar landed (groups in order, bars with a speed-up only).
pub fn codesign(
    canvas: &HtmlCanvasElement,
    theme: &Theme,
    groups: &[SpeedupGroup],
    placed: &super::canvas::Placed,
) -> Result<(), String> {
    let root = area(canvas, theme, 260)?;
    let ymax = groups.iter().flat_map(|g| g.2.iter().filter_map(|p| p.1)).fold(1.0, f64::max) * 1.12;
    let n = groups.len().max(1);
    // Short names where the long ones would overprint (a phone): about 16 characters per group.
    let room_px = f64::from(canvas.width()) / n as f64;
    let short = room_px < f64::from(theme.px(11.0)) * 0.6 * 17.0;
    let names: Vec<String> = groups.iter().map(|g| if short { g.1 } else { g.0 }.to_owned()).collect();
    let mut chart = ChartBuilder::on(&root)
        .margin(theme.px(8.0))
        .caption("Speed-up when one resource is scaled", theme.font(15.0))
        .x_label_area_size(theme.px(40.0))
        .y_label_area_size(theme.px(48.0))
        .build_cartesian_2d(-0.5..(n as f64 - 0.5), 0.0..ymax)
        .map_err(err)?;
    // Groups are centred on whole numbers, where the axis puts its labels.
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&|x| whole_index(*x).and_then(|i| names.get(i).cloned()).unwrap_or_default())
        .y_desc("speed-up (x)")
        .y_label_formatter(&|y| format!("{y:.1}"))
        .themed(theme)
        .draw()
        .map_err(err)?;
    let mut bars = Vec::new();
    let mut at = Vec::new();
    for (gi, (_, _, pts)) in groups.iter().enumerate() {
        let w = 0.8 / pts.len().max(1) as f64;
        for (pi, (factor, up)) in pts.iter().enumerate() {
            let Some(up) = up else { continue };
            let x0 = gi as f64 - 0.4 + pi as f64 * w;
            bars.push(Rectangle::new([(x0, 0.0), (x0 + w * 0.9, *up)], factor_rgb(*factor).filled()));
            let area = chart.plotting_area();
            at.push(css_rect(area.map_coordinate(&(x0, 0.0)), area.map_coordinate(&(x0 + w * 0.9, *up)), theme));
        }
    }
    *placed.borrow_mut() = at;
    chart.draw_series(bars).map_err(err)?;
    let one = theme.text().stroke_width(theme.px(1.0));
    chart.draw_series([PathElement::new(vec![(-0.5, 1.0), (n as f64 - 0.5, 1.0)], one)]).map_err(err)?;
    // The legend: which shade is which factor.
    let factors: Vec<f64> = groups.first().map(|g| g.2.iter().map(|p| p.0).collect()).unwrap_or_default();
    for factor in factors {
        let rgb = factor_rgb(factor);
        chart
            .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())
            .map_err(err)?
            .label(format!("x{factor}"))
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], rgb.filled()));
    }
    // Where the groups are narrow the legend would cover bars; the help text under the chart
    // says the shades.
    if !short {
        legend_box(&mut chart, theme, SeriesLabelPosition::UpperLeft)?;
    }
    root.present().map_err(err)
}

/// A co-design bar's colour: darker for larger factors (x0.5 lightest, x8 darkest).
fn factor_rgb(factor: f64) -> RGBColor {
    let shade = (factor.log2() + 1.0) / 4.0;
    let c = category_rgb(Category::Gemm);
    let tint = |v: u8| (255.0 - (255.0 - v as f64) * (0.3 + 0.7 * shade)) as u8;
    RGBColor(tint(c.0), tint(c.1), tint(c.2))
}

/// The legend of a chart's labelled series, where the data leaves room, on the theme's background.
fn legend_box<CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'_, Canvas2d, CT>,
    theme: &Theme,
    at: SeriesLabelPosition,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(at)
        // Room for the 16 px line or dot before each label, at any pixel density.
        .legend_area_size(theme.px(22.0))
        .background_style(if theme.dark { RGBColor(22, 27, 34).mix(0.9) } else { WHITE.mix(0.9) })
        .border_style(theme.grid())
        .label_font(theme.font(12.0))
        .draw()
        .map_err(err)
}

/// Colours of data series (sources, stories), Okabe-Ito order.
pub const SERIES_RGB: [(u8, u8, u8); 6] =
    [(0, 114, 178), (213, 94, 0), (0, 158, 115), (204, 121, 167), (230, 159, 0), (86, 180, 233)];

/// Predicted against measured on log-log axes: one point per run `(measured, predicted,
/// series)`, the y = x line and the +/-10% band around it, a legend of the series. The axes
/// are linear in log10 of the values (the same coordinate type as the other charts, which
/// keeps the page small), labelled at powers of ten.
pub fn predicted_vs_measured(
    canvas: &HtmlCanvasElement,
    theme: &Theme,
    points: &[(f64, f64, usize)],
    series: &[String],
    placed: &PlacedPoints,
) -> Result<(), String> {
    let root = area(canvas, theme, 520)?;
    let values = points.iter().flat_map(|p| [p.0, p.1]).filter(|v| *v > 0.0 && v.is_finite());
    let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if !(lo > 0.0 && hi >= lo) {
        root.draw(&Text::new("no rows to plot", (theme.px(10.0) as i32, theme.px(30.0) as i32), theme.font(13.0)))
            .map_err(err)?;
        return root.present().map_err(err);
    }
    let (lo, hi) = ((lo / 1.4).log10(), (hi * 1.4).log10());
    let mut chart = ChartBuilder::on(&root)
        .margin(theme.px(10.0))
        .caption("Predicted vs measured (each in its row's unit)", theme.font(15.0))
        .x_label_area_size(theme.px(38.0))
        .y_label_area_size(theme.px(52.0))
        .build_cartesian_2d(lo..hi, lo..hi)
        .map_err(err)?;
    // Plain numbers at the powers of ten (0.01, 1, 100, 10000): an SI prefix would read as a
    // unit ("100 m") on axes whose rows carry different units. Rows within two decades of one
    // another (one source, a filter) get every tick labelled, as there may be no power of ten
    // among them.
    let narrow = hi - lo < 2.0;
    let decade = |v: &f64| {
        let k = v.round();
        if narrow {
            units::sig3(10f64.powf(*v))
        } else if (v - k).abs() > 1e-9 {
            String::new()
        } else if (-3.0..=5.0).contains(&k) {
            format!("{}", 10f64.powi(k as i32))
        } else {
            format!("1e{k}")
        }
    };
    chart
        .configure_mesh()
        .x_desc("measured (log scale)")
        .y_desc("predicted (log scale)")
        .x_label_formatter(&decade)
        .y_label_formatter(&decade)
        .themed(theme)
        .draw()
        .map_err(err)?;
    // The +/-10% band, then y = x.
    let (down, up) = (0.9f64.log10(), 1.1f64.log10());
    let band = [(lo, lo + down), (hi, hi + down), (hi, hi + up), (lo, lo + up)];
    chart.draw_series([Polygon::new(band.to_vec(), theme.text().mix(0.16).filled())]).map_err(err)?;
    chart
        .draw_series([PathElement::new(vec![(lo, lo), (hi, hi)], theme.text().stroke_width(theme.px(1.5)))])
        .map_err(err)?;
    for i in 0..series.len() {
        let (rgb, shape) = series_marker(i);
        let pts = points.iter().filter(|p| p.2 == i && p.0 > 0.0 && p.1 > 0.0).map(|p| (p.0.log10(), p.1.log10()));
        draw_markers(&mut chart, pts, shape, theme.px(3.5), color(rgb).mix(0.8).filled())?;
    }
    let drawn = |p: &(f64, f64, usize)| (p.0 > 0.0 && p.1 > 0.0).then(|| (p.0.log10(), p.1.log10()));
    place_points(chart.plotting_area(), points.iter().map(drawn), theme, placed);
    // The legend is the page's, under the chart: drawn here it covered the points on a phone.
    root.present().map_err(err)
}

/// The shape of a data series' markers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Circle,
    Triangle,
    Square,
    Diamond,
    TriangleDown,
    Star,
    Cross,
    Ring,
}

impl Shape {
    /// The character a legend shows for it.
    pub fn glyph(self) -> &'static str {
        match self {
            Shape::Circle => "\u{25cf}",
            Shape::Triangle => "\u{25b2}",
            Shape::Square => "\u{25a0}",
            Shape::Diamond => "\u{25c6}",
            Shape::TriangleDown => "\u{25bc}",
            Shape::Star => "\u{2605}",
            Shape::Cross => "\u{2716}",
            Shape::Ring => "\u{25cb}",
        }
    }
}

/// The marker of data series `i`: its colour and its shape. Past the palette the colours come
/// round again in the next shape, so 48 series are each told apart.
pub fn series_marker(i: usize) -> ((u8, u8, u8), Shape) {
    const SHAPES: [Shape; 8] = [
        Shape::Circle,
        Shape::Triangle,
        Shape::Square,
        Shape::Diamond,
        Shape::TriangleDown,
        Shape::Star,
        Shape::Cross,
        Shape::Ring,
    ];
    (SERIES_RGB[i % SERIES_RGB.len()], SHAPES[(i / SERIES_RGB.len()) % SHAPES.len()])
}

/// Draws a marker of `shape` at each of `points`, about `r` pixels from its centre to its edge.
fn draw_markers(
    chart: &mut ChartContext<'_, Canvas2d, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    points: impl Iterator<Item = (f64, f64)>,
    shape: Shape,
    r: u32,
    style: ShapeStyle,
) -> Result<(), String> {
    let r = r.max(1) as i32;
    match shape {
        Shape::Circle => chart.draw_series(points.map(|p| Circle::new(p, r, style))).map(|_| ()),
        // A hollow circle: the marker's colour as a ring as wide as a third of its radius.
        Shape::Ring => {
            let ring = ShapeStyle { filled: false, stroke_width: (r as u32 / 3).max(2), ..style };
            chart.draw_series(points.map(|p| Circle::new(p, r + 1, ring))).map(|_| ())
        }
        Shape::Triangle => chart.draw_series(points.map(|p| TriangleMarker::new(p, r + r / 2, style))).map(|_| ()),
        Shape::Square => chart
            .draw_series(
                points.map(|p| EmptyElement::at(p) + Rectangle::new([(-r + 1, -r + 1), (r - 1, r - 1)], style)),
            )
            .map(|_| ()),
        Shape::Diamond => chart
            .draw_series(points.map(|p| {
                EmptyElement::at(p) + Polygon::new(vec![(0, -r - 1), (r + 1, 0), (0, r + 1), (-r - 1, 0)], style)
            }))
            .map(|_| ()),
        Shape::TriangleDown => chart
            .draw_series(
                points.map(|p| EmptyElement::at(p) + Polygon::new(vec![(-r - 1, -r), (r + 1, -r), (0, r + 1)], style)),
            )
            .map(|_| ()),
        Shape::Star => {
            // Five points at r + 2 from the centre, the notches between them at 45% of that.
            let star: Vec<(i32, i32)> = (0..10)
                .map(|k| {
                    let reach = if k % 2 == 0 { f64::from(r + 2) } else { 0.45 * f64::from(r + 2) };
                    let angle = std::f64::consts::PI * (f64::from(k) / 5.0 - 0.5);
                    ((reach * angle.cos()).round() as i32, (reach * angle.sin()).round() as i32)
                })
                .collect();
            chart.draw_series(points.map(|p| EmptyElement::at(p) + Polygon::new(star.clone(), style))).map(|_| ())
        }
        Shape::Cross => {
            // A plus of arms r + 2 long and about r / 3 wide, turned by 45 degrees.
            let (arm, reach) = (f64::from((r / 3).max(1)), f64::from(r + 2));
            let plus = [
                (-arm, -reach),
                (arm, -reach),
                (arm, -arm),
                (reach, -arm),
                (reach, arm),
                (arm, arm),
                (arm, reach),
                (-arm, reach),
                (-arm, arm),
                (-reach, arm),
                (-reach, -arm),
                (-arm, -arm),
            ];
            let half = std::f64::consts::FRAC_1_SQRT_2;
            let cross: Vec<(i32, i32)> =
                plus.iter().map(|(x, y)| (((x - y) * half).round() as i32, ((x + y) * half).round() as i32)).collect();
            chart.draw_series(points.map(|p| EmptyElement::at(p) + Polygon::new(cross.clone(), style))).map(|_| ())
        }
    }
    .map_err(err)
}

/// Scaling: speed-up over the smallest GPU count against GPUs (log-log, axes linear in log2
/// and labelled at powers of two), weak and strong scaling, and the ideal line
/// `speed-up = GPUs / smallest count`, dashed.
/// `placed` gets where the points landed: the weak-scaling points, then the strong ones, each
/// where the series has a figure.
pub fn scaling(
    canvas: &HtmlCanvasElement,
    theme: &Theme,
    points: &[ScalePoint],
    placed: &PlacedPoints,
) -> Result<(), String> {
    let root = area(canvas, theme, 260)?;
    let n0 = points.first().map_or(1, |p| p.gpus.max(1)) as f64;
    let n1 = points.last().map_or(1, |p| p.gpus.max(1)) as f64;
    let ideal = (n1 / n0).log2();
    if points.len() < 2 || ideal <= 0.0 {
        return root.present().map_err(err);
    }
    let (x0, x1) = (n0.log2(), n1.log2());
    let mut chart = ChartBuilder::on(&root)
        .margin(theme.px(10.0))
        .caption("Speed-up vs GPUs (dashed: ideal, linear)", theme.font(15.0))
        .x_label_area_size(theme.px(38.0))
        .y_label_area_size(theme.px(48.0))
        .build_cartesian_2d((x0 - 0.3)..(x1 + 0.3), -0.3..(ideal + 0.4))
        .map_err(err)?;
    let power = |v: &f64| {
        if (v - v.round()).abs() < 1e-9 && *v >= 0.0 {
            let x = 2f64.powf(v.round());
            if x >= 1e5 {
                units::si(x, "").trim().to_owned()
            } else {
                format!("{x:.0}")
            }
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .x_desc("GPUs (log scale)")
        .y_desc("speed-up (x, log scale)")
        .x_labels(((x1 - x0).ceil() as usize + 2).min(16))
        .y_labels((ideal.ceil() as usize + 2).min(16))
        .x_label_formatter(&power)
        .y_label_formatter(&power)
        .themed(theme)
        .draw()
        .map_err(err)?;
    let ink = theme.text();
    let dash = theme.px(16.0) as i32;
    let weak: fn(&ScalePoint) -> Option<f64> = |p| p.weak;
    let strong: fn(&ScalePoint) -> Option<f64> = |p| p.strong;
    let series = [
        ("weak scaling (same batch per GPU)", SERIES_RGB[0], weak),
        ("strong scaling (same global batch)", SERIES_RGB[1], strong),
    ];
    let mut at = Vec::new();
    for (label, rgb, get) in series {
        let pts: Vec<(f64, f64)> = points.iter().filter_map(|p| Some((p.gpus as f64, get(p)?))).collect();
        let Some(&(first_n, t0)) = pts.first() else { continue };
        // Relative to the smallest count that has a figure, scaled to the ideal there.
        let base = first_n / n0;
        let rel: Vec<(f64, f64)> = pts.iter().map(|&(n, t)| (n.log2(), (base * t / t0).log2())).collect();
        let c = color(rgb);
        let r = theme.px(3.5);
        chart
            .draw_series(LineSeries::new(rel.iter().copied(), c.stroke_width(theme.px(2.0))))
            .map_err(err)?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + dash, y)], c.stroke_width(3)));
        chart.draw_series(rel.iter().map(|&p| Circle::new(p, r, c.filled()))).map_err(err)?;
        at.extend(rel);
    }
    place_points(chart.plotting_area(), at.into_iter().map(Some), theme, placed);
    // The ideal line, dashed so that a curve on it still shows it.
    let (on, off) = (theme.px(6.0), theme.px(5.0));
    chart
        .draw_series(DashedLineSeries::new([(x0, 0.0), (x1, ideal)], on, off, ink.stroke_width(theme.px(1.5))))
        .map_err(err)?
        .label("ideal (linear)")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + dash, y)], ink.stroke_width(2)));
    // The curves rise from bottom left to top right: the bottom right is free.
    legend_box(&mut chart, theme, SeriesLabelPosition::LowerRight)?;
    root.present().map_err(err)
}

/// A strip chart's content: rows of items, each item a value from 0 to 1 (shown as a
/// percentage) in one of the series (their legend is the page's); a shaded reference band
/// with its label.
pub struct Strips<'a> {
    pub title: &'a str,
    pub rows: &'a [String],
    pub series: &'a [&'a str],
    /// `(row, series, value)`.
    pub points: &'a [(usize, usize, f64)],
    pub band: Option<(f64, f64, &'a str)>,
    /// Where the drawing leaves the points on the canvas, for pointing at them.
    pub placed: Option<&'a PlacedPoints>,
}

/// A strip chart: one row per group, every item a mark at its value, the series of a row
/// side by side (the first above, the next below, told apart by colour and shape), each
/// series' median a vertical tick, and the reference band shaded behind. Marks of equal value
/// spread a little up and down so that a crowd reads as one.
pub fn strips(canvas: &HtmlCanvasElement, theme: &Theme, st: &Strips) -> Result<(), String> {
    let n = st.rows.len().max(1);
    let root = area(canvas, theme, 70 + 44 * n as u32)?;
    let mut chart = ChartBuilder::on(&root)
        .margin(theme.px(8.0))
        .margin_right(theme.px(22.0))
        .caption(st.title, theme.font(15.0))
        .x_label_area_size(theme.px(36.0))
        .y_label_area_size(theme.px(132.0))
        .build_cartesian_2d(0.0..1.0, -0.5..(n as f64 - 0.5))
        .map_err(err)?;
    // Rows are centred on whole numbers, the first at the top, where the axis puts its labels.
    let rows = st.rows;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n)
        .y_label_formatter(&|y| {
            whole_index(*y).and_then(|i| rows.get(n.checked_sub(i + 1)?).cloned()).unwrap_or_default()
        })
        .x_labels(6)
        .x_label_formatter(&|x| format!("{:.0} %", x * 100.0))
        .x_desc("share of iteration time")
        .themed(theme)
        .draw()
        .map_err(err)?;
    if let Some((lo, hi, label)) = st.band {
        let shade = color(SERIES_RGB[4]).mix(0.22).filled();
        chart.draw_series([Rectangle::new([(lo, -0.5), (hi, n as f64 - 0.5)], shade)]).map_err(err)?;
        let style = theme.font(11.0).pos(Pos::new(HPos::Center, VPos::Top));
        chart.draw_series([Text::new(label.to_owned(), ((lo + hi) / 2.0, n as f64 - 0.52), style)]).map_err(err)?;
    }
    // Each series' lane in its row; items spread +/-0.08 around it, deterministically (the
    // golden ratio's fractional parts).
    let lane = |row: usize, series: usize| (n - 1 - row) as f64 + if series.is_multiple_of(2) { 0.2 } else { -0.2 };
    let y_of = |row: usize, series: usize, k: usize| lane(row, series) + ((k as f64 * 0.618_034).fract() - 0.5) * 0.16;
    let at: Vec<(f64, f64)> =
        st.points.iter().enumerate().map(|(k, &(row, series, v))| (v.clamp(0.0, 1.0), y_of(row, series, k))).collect();
    for si in 0..st.series.len() {
        let (rgb, shape) = series_marker(si);
        let pts = st.points.iter().zip(&at).filter(|(p, _)| p.1 == si).map(|(_, &xy)| xy);
        draw_markers(&mut chart, pts, shape, theme.px(3.5), color(rgb).mix(0.75).filled())?;
        // Each row's median, a tick in the text's colour across the series' lane.
        let stroke = theme.text().stroke_width(theme.px(2.5));
        for row in 0..n {
            let mut v: Vec<f64> = st.points.iter().filter(|p| p.0 == row && p.1 == si).map(|p| p.2).collect();
            if v.is_empty() {
                continue;
            }
            crate::engine::order::sort_f64(&mut v);
            let m = v.len();
            let median = if m % 2 == 1 { v[m / 2] } else { (v[m / 2 - 1] + v[m / 2]) / 2.0 };
            let y = lane(row, si);
            chart.draw_series([PathElement::new(vec![(median, y - 0.17), (median, y + 0.17)], stroke)]).map_err(err)?;
        }
    }
    if let Some(placed) = st.placed {
        place_points(chart.plotting_area(), at.iter().map(|&p| Some(p)), theme, placed);
    }
    // The legend is the page's, under the chart: marks fill every corner.
    root.present().map_err(err)
}

/// One line of a scaling chart: its name and, per factor, `(factor, median, low, high)`.
pub type FactorLine = (String, Vec<(f64, f64, f64, f64)>);

/// Throughput ratio against a scale factor, both on log2 axes (labelled x0.5, x1, x2, ...):
/// one line per resource through its medians, the range over workloads a thin bar at each
/// point (nudged apart so that lines do not hide each other's), and the 1x line.
pub fn factor_lines(
    canvas: &HtmlCanvasElement,
    theme: &Theme,
    title: &str,
    lines: &[FactorLine],
    placed: Option<&PlacedPoints>,
) -> Result<(), String> {
    let root = area(canvas, theme, 280)?;
    let values = lines.iter().flat_map(|l| l.1.iter().flat_map(|p| [p.1, p.2, p.3])).filter(|v| *v > 0.0);
    let (lo, hi) = values.fold((1.0f64, 1.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let factors = lines.iter().flat_map(|l| l.1.iter().map(|p| p.0)).filter(|f| *f > 0.0);
    let (f0, f1) = factors.fold((1.0f64, 1.0f64), |(a, b), f| (a.min(f), b.max(f)));
    let (y0, y1) = (lo.log2().floor() - 0.1, hi.log2().ceil() + 0.1);
    let mut chart = ChartBuilder::on(&root)
        .margin(theme.px(10.0))
        .caption(title, theme.font(15.0))
        .x_label_area_size(theme.px(38.0))
        .y_label_area_size(theme.px(52.0))
        .build_cartesian_2d((f0.log2() - 0.3)..(f1.log2() + 0.3), y0..y1)
        .map_err(err)?;
    // Powers of two print exactly: 0.5, 1, 2, 8.
    let power = |suffix: &'static str, prefix: &'static str| {
        move |v: &f64| {
            if (v - v.round()).abs() < 1e-9 {
                format!("{prefix}{}{suffix}", 2f64.powi(v.round() as i32))
            } else {
                String::new()
            }
        }
    };
    chart
        .configure_mesh()
        .x_desc("resource scaled by (log scale)")
        .y_desc("throughput ratio (log scale)")
        .x_labels(((f1.log2() - f0.log2()).round() as usize + 2).min(12))
        .y_labels(((y1 - y0).round() as usize + 2).min(12))
        .x_label_formatter(&power("", "x"))
        .y_label_formatter(&power("x", ""))
        .themed(theme)
        .draw()
        .map_err(err)?;
    let ink = theme.text().stroke_width(theme.px(1.0));
    let x_span = (f0.log2() - 0.3, f1.log2() + 0.3);
    chart.draw_series([PathElement::new(vec![(x_span.0, 0.0), (x_span.1, 0.0)], ink)]).map_err(err)?;
    let dash = theme.px(16.0) as i32;
    let mut at = Vec::new();
    for (i, (name, pts)) in lines.iter().enumerate() {
        let (rgb, _) = series_marker(i);
        let c = color(rgb);
        let nudge = (i as f64 - (lines.len() as f64 - 1.0) / 2.0) * 0.05;
        let xy: Vec<(f64, f64)> = pts.iter().map(|p| (p.0.log2() + nudge, p.1.max(1e-12).log2())).collect();
        for p in pts {
            let x = p.0.log2() + nudge;
            let bar = vec![(x, p.2.max(1e-12).log2()), (x, p.3.max(1e-12).log2())];
            chart.draw_series([PathElement::new(bar, c.mix(0.45).stroke_width(theme.px(2.0)))]).map_err(err)?;
        }
        chart
            .draw_series(LineSeries::new(xy.iter().copied(), c.stroke_width(theme.px(2.0))))
            .map_err(err)?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + dash, y)], c.stroke_width(3)));
        let r = theme.px(3.5);
        chart.draw_series(xy.iter().map(|&p| Circle::new(p, r, c.filled()))).map_err(err)?;
        at.extend(xy);
    }
    if let Some(placed) = placed {
        place_points(chart.plotting_area(), at.into_iter().map(Some), theme, placed);
    }
    legend_box(&mut chart, theme, SeriesLabelPosition::UpperLeft)?;
    root.present().map_err(err)
}
