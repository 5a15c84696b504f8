//! SVG output without a font: plotters' SVG backend, with text sizes estimated from character counts.
//!
//! Why: plotters measures text (to place axis labels, the caption and the legend) through the glyph renderer,
//! which would make even an SVG chart need a font file. An SVG viewer lays its `<text>` out itself, so a
//! measurement good to a few pixels is all the layout needs, and the SVG stays a pure function of the values.

use crate::{draw, Chart, PlotError};
use plotters::backend::SVGBackend;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};

/// Average advance of a character in ems for common sans-serif fonts (DejaVu Sans, Helvetica, Arial).
const CHAR_WIDTH_EM: f64 = 0.58;

/// The SVG backend with font-free text measurement; everything else is delegated.
struct MeasuredSvg<'a>(SVGBackend<'a>);

type Outcome<E> = Result<(), DrawingErrorKind<E>>;

impl<'a> DrawingBackend for MeasuredSvg<'a> {
    type ErrorType = <SVGBackend<'a> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }
    fn ensure_prepared(&mut self) -> Outcome<Self::ErrorType> {
        self.0.ensure_prepared()
    }
    fn present(&mut self) -> Outcome<Self::ErrorType> {
        self.0.present()
    }
    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Outcome<Self::ErrorType> {
        self.0.draw_pixel(point, color)
    }
    fn draw_line<S: BackendStyle>(&mut self, from: BackendCoord, to: BackendCoord, style: &S) -> Outcome<Self::ErrorType> {
        self.0.draw_line(from, to, style)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Outcome<Self::ErrorType> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(&mut self, path: I, style: &S) -> Outcome<Self::ErrorType> {
        self.0.draw_path(path, style)
    }
    fn draw_circle<S: BackendStyle>(&mut self, center: BackendCoord, radius: u32, style: &S, fill: bool) -> Outcome<Self::ErrorType> {
        self.0.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(&mut self, vert: I, style: &S) -> Outcome<Self::ErrorType> {
        self.0.fill_polygon(vert, style)
    }
    fn draw_text<T: BackendTextStyle>(&mut self, text: &str, style: &T, pos: BackendCoord) -> Outcome<Self::ErrorType> {
        self.0.draw_text(text, style, pos)
    }
    fn estimate_text_size<T: BackendTextStyle>(&self, text: &str, style: &T) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        // The SVG backend writes font-size = size / 1.24; measure in the same unit.
        let em = style.size() / 1.24;
        let width = em * CHAR_WIDTH_EM * text.chars().count() as f64;
        Ok((width.round().max(0.0) as u32, em.round().max(1.0) as u32))
    }
    fn blit_bitmap(&mut self, pos: BackendCoord, size: (u32, u32), src: &[u8]) -> Outcome<Self::ErrorType> {
        self.0.blit_bitmap(pos, size, src)
    }
}

/// The family SVG text asks the viewer for.
const SVG_FAMILY: &str = "sans-serif";

pub fn render(chart: &Chart) -> Result<String, PlotError> {
    let mut out = String::new();
    {
        let backend = MeasuredSvg(SVGBackend::with_string(&mut out, crate::size_of(chart)));
        draw::chart(backend, chart, SVG_FAMILY)?;
    }
    Ok(out)
}
