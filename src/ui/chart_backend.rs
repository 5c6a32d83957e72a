//! The charts' drawing backend: plotters' canvas backend, with text measured on the canvas.
//!
//! plotters-canvas leaves text measurement to plotters' web fonts, which put a `<span>` in the
//! page for every label it lays out (axis ticks, captions), read its size and take it out
//! again: each read makes the browser lay the page out, dozens of times per chart. Here the
//! canvas's own `measureText` sizes axis labels and captions, with no layout of the page (a
//! legend's few entries are still measured by plotters).

use plotters::prelude::DrawingBackend;
use plotters_backend::{BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind};
use plotters_canvas::CanvasBackend;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

type Error = DrawingErrorKind<<CanvasBackend as DrawingBackend>::ErrorType>;

/// A `<canvas>` to draw charts on: plotters' canvas backend for the drawing, the canvas's 2D
/// context for measuring text.
pub struct Canvas2d {
    inner: CanvasBackend,
    context: CanvasRenderingContext2d,
}

impl Canvas2d {
    /// The canvas's backend; `None` when the browser gives no 2D context.
    pub fn new(canvas: &HtmlCanvasElement) -> Option<Canvas2d> {
        let context = canvas.get_context("2d").ok()??.dyn_into::<CanvasRenderingContext2d>().ok()?;
        Some(Canvas2d { inner: CanvasBackend::with_canvas_object(canvas.clone())?, context })
    }
}

/// The CSS font of a text style, as plotters-canvas draws it: "normal 12px sans-serif".
fn css_font<S: BackendTextStyle>(style: &S) -> String {
    format!("{} {}px {}", style.style().as_str(), style.size(), style.family().as_str())
}

impl DrawingBackend for Canvas2d {
    type ErrorType = <CanvasBackend as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }
    fn ensure_prepared(&mut self) -> Result<(), Error> {
        self.inner.ensure_prepared()
    }
    fn present(&mut self) -> Result<(), Error> {
        self.inner.present()
    }
    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Result<(), Error> {
        self.inner.draw_pixel(point, color)
    }
    fn draw_line<S: BackendStyle>(&mut self, from: BackendCoord, to: BackendCoord, style: &S) -> Result<(), Error> {
        self.inner.draw_line(from, to, style)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Error> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), Error> {
        self.inner.draw_path(path, style)
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), Error> {
        self.inner.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), Error> {
        self.inner.fill_polygon(vert, style)
    }
    fn draw_text<S: BackendTextStyle>(&mut self, text: &str, style: &S, pos: BackendCoord) -> Result<(), Error> {
        self.inner.draw_text(text, style, pos)
    }
    fn blit_bitmap(&mut self, pos: BackendCoord, size: (u32, u32), src: &[u8]) -> Result<(), Error> {
        self.inner.blit_bitmap(pos, size, src)
    }

    /// Width and height of `text` in canvas pixels: the advance width `measureText` gives, and
    /// the font's ascent plus descent (the height of a line of it, as the page's layout gave
    /// plotters before), each rounded to whole pixels. Rotated text is measured unrotated, as
    /// plotters' own measure did.
    fn estimate_text_size<S: BackendTextStyle>(&self, text: &str, style: &S) -> Result<(u32, u32), Error> {
        self.context.set_font(&css_font(style));
        let m = self
            .context
            .measure_text(text)
            .map_err(|e| DrawingErrorKind::FontError(format!("the text could not be measured ({e:?})").into()))?;
        let height = m.font_bounding_box_ascent() + m.font_bounding_box_descent();
        Ok((m.width().round().max(0.0) as u32, height.round().max(0.0) as u32))
    }
}
