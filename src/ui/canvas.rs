//! A chart's figure: a canvas drawn by a function of plain data (redrawn when its version or
//! the page width changes), a drawing problem as a message under it (never a panic), a PNG
//! download, and the chart's numbers as children (its text alternative).

use super::charts::Theme;
use super::dom;
use std::rc::Rc;
use web_sys::HtmlCanvasElement;
use yew::prelude::*;

/// Draws the canvas with the current theme.
pub type Draw = Rc<dyn Fn(&HtmlCanvasElement, &Theme) -> Result<(), String>>;

/// What the chart says about the point under the pointer (CSS pixels from the canvas's top
/// left), if any.
pub type Pick = Rc<dyn Fn(f64, f64) -> Option<String>>;

/// Where a chart drew its bars, as `[left, top, right, bottom]` in CSS pixels of the canvas,
/// in the order of its data: filled in by the drawing, read by its [`Pick`].
pub type Placed = std::cell::RefCell<Vec<[f64; 4]>>;

/// Where a chart drew its data points, in CSS pixels of the canvas, in the order of its data:
/// filled in by the drawing, read by its [`Pick`] ([`point_pick`]).
pub type PlacedPoints = std::cell::RefCell<Vec<(f64, f64)>>;

/// A [`Pick`] that says `said[i]` when the pointer is within 8 px of point `i` of `placed`.
pub fn point_pick(placed: Rc<PlacedPoints>, said: Vec<String>) -> Pick {
    Rc::new(move |x, y| super::pick::nearest(&placed.borrow(), x, y, 8.0).and_then(|i| said.get(i).cloned()))
}

/// A [`Pick`] that says `said[i]` when the pointer is on bar `i` of `placed`.
pub fn bar_pick(placed: Rc<Placed>, said: Vec<String>) -> Pick {
    Rc::new(move |x, y| super::pick::bar_at(&placed.borrow(), x, y).and_then(|i| said.get(i).cloned()))
}

#[derive(Properties)]
pub struct Props {
    pub id: AttrValue,
    /// The text alternative; the children (a table of the numbers) give the details.
    #[prop_or_default]
    pub label: Option<AttrValue>,
    pub draw: Draw,
    /// Redraw when this changes.
    pub version: u64,
    pub width: u32,
    #[prop_or_default]
    pub children: Html,
    /// Says what is under the pointer (or a tapped point), under the chart.
    #[prop_or_default]
    pub pick: Option<Pick>,
}

impl PartialEq for Props {
    fn eq(&self, o: &Props) -> bool {
        self.id == o.id && self.version == o.version && self.width == o.width && self.label == o.label
    }
}

#[function_component(Canvas)]
pub fn canvas(p: &Props) -> Html {
    let node = use_node_ref();
    let problem = use_state(|| None::<String>);
    {
        let node = node.clone();
        let problem = problem.clone();
        let draw = p.draw.clone();
        use_effect_with((p.version, p.width), move |_| {
            if let Some(c) = node.cast::<HtmlCanvasElement>() {
                problem.set(draw(&c, &Theme::current()).err());
            }
        });
    }
    let save = {
        let (node, id) = (node.clone(), p.id.clone());
        Callback::from(move |_| {
            if let Some(url) = node.cast::<HtmlCanvasElement>().and_then(|c| c.to_data_url().ok()) {
                dom::download_url(&format!("madmax-{id}.png"), &url);
            }
        })
    };
    let label = p.label.clone().unwrap_or_else(|| p.id.replace('-', " ").into());
    let tip = use_state(|| None::<String>);
    let (onmousemove, onmouseleave) = match &p.pick {
        Some(pick) => {
            let (pick, shown) = (pick.clone(), tip.clone());
            let moved = Callback::from(move |e: MouseEvent| {
                let said = pick(f64::from(e.offset_x()), f64::from(e.offset_y()));
                if *shown != said {
                    shown.set(said);
                }
            });
            let shown = tip.clone();
            (Some(moved), Some(Callback::from(move |_: MouseEvent| shown.set(None))))
        }
        None => (None, None),
    };
    html! {
        <figure class="chart">
            <canvas id={p.id.clone()} ref={node} role="img" aria-label={label} {onmousemove} {onmouseleave}></canvas>
            { tip.as_ref().map(|t| html! { <p class="chart-tip" id={format!("{}-tip", p.id)} role="status">{ t }</p> }).unwrap_or_default() }
            { problem.as_ref().map(|e| html! { <p class="error-msg">{ e }</p> }).unwrap_or_default() }
            <button class="link png" onclick={save}>{ "PNG" }</button>
            { p.children.clone() }
        </figure>
    }
}

/// The legend's swatch of data series `i`: its marker ([`super::charts::series_marker`]) in its
/// colour.
pub fn series_swatch(i: usize) -> Html {
    let ((r, g, b), shape) = super::charts::series_marker(i);
    html! { <span class="swatch" style={format!("color: rgb({r}, {g}, {b})")}>{ shape.glyph() }</span> }
}

/// A new version number for [`Props::version`] (each call differs).
pub fn next_version() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
