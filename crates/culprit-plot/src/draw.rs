//! Drawing both chart kinds on any plotters backend (the SVG one in `svg.rs`, the bitmap one for PNG).
//!
//! Input is sanitised before plotters sees it: NaN and infinite values are left out, empty and zero-width ranges
//! are widened, so no value can make the renderer panic or draw an unreadable chart.

use crate::{ChangeKind, ChangeMark, Chart, MeanStd, PlotError, SweepPlot, TrackPlot};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Curve colours, distinguishable on white and for the common colour-vision deficiencies (Okabe-Ito order).
pub const PALETTE: [(u8, u8, u8); 8] = [
    (0, 114, 178),
    (213, 94, 0),
    (0, 158, 115),
    (204, 121, 167),
    (86, 180, 233),
    (230, 159, 0),
    (0, 0, 0),
    (240, 228, 66),
];

/// Colours of the track chart.
pub const RUN_COLOR: (u8, u8, u8) = (120, 120, 120);
pub const MEAN_COLOR: (u8, u8, u8) = (0, 114, 178);
pub const SEGMENT_COLOR: (u8, u8, u8) = (40, 40, 40);
pub const REGRESSION_COLOR: (u8, u8, u8) = (200, 30, 30);
pub const IMPROVEMENT_COLOR: (u8, u8, u8) = (0, 150, 60);
pub const CHANGE_COLOR: (u8, u8, u8) = (230, 140, 0);

/// The colour of a change point's mark and of its interval's band.
fn change_color(kind: ChangeKind) -> (u8, u8, u8) {
    match kind {
        ChangeKind::Regression => REGRESSION_COLOR,
        ChangeKind::Improvement => IMPROVEMENT_COLOR,
        ChangeKind::Change => CHANGE_COLOR,
    }
}

fn rgb(c: (u8, u8, u8)) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
}

pub fn curve_color(k: usize) -> (u8, u8, u8) {
    PALETTE[k % PALETTE.len()]
}

fn failed<E: std::fmt::Display>(e: E) -> PlotError {
    PlotError::Draw(e.to_string())
}

pub fn chart<DB: DrawingBackend>(backend: DB, chart: &Chart, family: &str) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let root = backend.into_drawing_area();
    root.fill(&WHITE).map_err(failed)?;
    match chart {
        Chart::Sweep(s) => sweep(&root, s, family)?,
        Chart::Track(t) => track(&root, t, family)?,
    }
    root.present().map_err(failed)
}

/// How param values map to x.
#[derive(Debug, Clone, Copy, PartialEq)]
enum XAxis {
    /// Values that are not all numbers: one slot per value, in the given order.
    Categories,
    Linear,
    /// Positive numbers spanning more than a factor of 16 (threads 1..256): x = log2(value).
    Log2,
}

impl XAxis {
    fn of(values: &[String]) -> XAxis {
        let numbers: Vec<f64> = values.iter().filter_map(|v| v.trim().parse::<f64>().ok()).filter(|x| x.is_finite()).collect();
        if numbers.is_empty() || numbers.len() != values.len() {
            return XAxis::Categories;
        }
        let (low, high) = bounds(&numbers).unwrap_or((0.0, 0.0));
        if low > 0.0 && high / low >= 16.0 && numbers.len() >= 3 {
            XAxis::Log2
        } else {
            XAxis::Linear
        }
    }

    fn position(self, index: usize, value: &str) -> f64 {
        let number = value.trim().parse::<f64>().unwrap_or(index as f64);
        match self {
            XAxis::Categories => index as f64,
            XAxis::Linear => number,
            XAxis::Log2 => number.log2(),
        }
    }

    fn label(self, x: f64, values: &[String]) -> String {
        let near_integer = (x - x.round()).abs() < 1e-6;
        match self {
            XAxis::Categories if near_integer && x >= 0.0 => values.get(x.round() as usize).cloned().unwrap_or_default(),
            XAxis::Categories => String::new(),
            XAxis::Linear => number_text(x),
            XAxis::Log2 if near_integer => number_text(2f64.powf(x.round())),
            XAxis::Log2 => String::new(),
        }
    }
}

/// A number as an axis label: integers without a fraction, others with up to 4 significant digits.
fn number_text(x: f64) -> String {
    if x == x.round() && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        let text = format!("{x:.4}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn bounds(values: &[f64]) -> Option<(f64, f64)> {
    let mut finite = values.iter().copied().filter(|v| v.is_finite());
    let first = finite.next()?;
    Some(finite.fold((first, first), |(lo, hi), v| (lo.min(v), hi.max(v))))
}

/// A range around `low..high` with a margin, never empty.
fn padded(low: f64, high: f64, share: f64) -> std::ops::Range<f64> {
    let span = high - low;
    let pad = if span > 0.0 { span * share } else if low != 0.0 { low.abs() * 0.05 } else { 1.0 };
    (low - pad)..(high + pad)
}

fn finite_point(p: &Option<MeanStd>) -> Option<MeanStd> {
    let p = (*p)?;
    if !p.mean.is_finite() {
        return None;
    }
    let stddev = if p.stddev.is_finite() && p.stddev > 0.0 { p.stddev } else { 0.0 };
    Some(MeanStd { mean: p.mean, stddev })
}

fn sweep<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, s: &SweepPlot, family: &str) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let axis = XAxis::of(&s.values);
    let xs: Vec<f64> = s.values.iter().enumerate().map(|(i, v)| axis.position(i, v)).collect();
    let mut ys = Vec::new();
    for curve in &s.curves {
        for p in curve.points.iter().filter_map(finite_point) {
            ys.push(p.mean - p.stddev);
            ys.push(p.mean + p.stddev);
        }
    }
    let (y_low, y_high) = bounds(&ys).ok_or_else(|| PlotError::Empty(format!("the sweep of {} has no finite mean", s.metric)))?;
    let (x_range, slots) = match axis {
        XAxis::Categories => ((-0.5)..(s.values.len() as f64 - 0.5), s.values.len()),
        _ => {
            let (low, high) = bounds(&xs).unwrap_or((0.0, 1.0));
            (padded(low, high, 0.05), (high - low).round() as usize + 1)
        }
    };
    let cap = (x_range.end - x_range.start) * 0.006;
    let x_desc = match axis {
        XAxis::Log2 => format!("{} (log scale)", s.param),
        _ => s.param.clone(),
    };
    let mut chart = ChartBuilder::on(root)
        .caption(&s.metric, (family, 24))
        .margin(18)
        .x_label_area_size(50)
        .y_label_area_size(100)
        .build_cartesian_2d(x_range, padded(y_low, y_high, 0.08))
        .map_err(failed)?;
    let values = s.values.clone();
    let label_x = move |x: &f64| axis.label(*x, &values);
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x_desc).y_desc(&s.metric).label_style((family, 14)).axis_desc_style((family, 16)).x_label_formatter(&label_x);
    if axis != XAxis::Linear {
        mesh.x_labels(slots.clamp(2, 24));
    }
    mesh.draw().map_err(failed)?;
    let mut legend = Vec::new();
    for (k, curve) in s.curves.iter().enumerate() {
        let color = rgb(curve_color(k));
        let points: Vec<(f64, MeanStd)> =
            xs.iter().zip(&curve.points).filter_map(|(&x, p)| finite_point(p).map(|p| (x, p))).collect();
        chart
            .draw_series(LineSeries::new(points.iter().map(|&(x, p)| (x, p.mean)), color.stroke_width(2)))
            .map_err(failed)?;
        legend.push((Mark::Swatch(color), curve.label.clone()));
        chart.draw_series(points.iter().map(|&(x, p)| Circle::new((x, p.mean), 4, color.filled()))).map_err(failed)?;
        // An error bar with caps, as one path: bottom cap, the bar, top cap.
        chart
            .draw_series(points.iter().filter(|(_, p)| p.stddev > 0.0).map(|&(x, p)| {
                let (low, high) = (p.mean - p.stddev, p.mean + p.stddev);
                PathElement::new(
                    vec![(x - cap, low), (x + cap, low), (x, low), (x, high), (x - cap, high), (x + cap, high)],
                    color.stroke_width(1),
                )
            }))
            .map_err(failed)?;
    }
    draw_legend(root, chart.plotting_area().get_pixel_range(), &legend, family)
}

/// The sample drawn before a legend entry.
enum Mark {
    /// A filled square: a curve.
    Swatch(RGBColor),
    /// A dot of a radius: runs and means.
    Dot(RGBAColor, u32),
    /// A horizontal line: fitted segments.
    Line(RGBColor),
    /// A vertical line: a change point.
    Bar(RGBColor),
}

/// The legend, in the upper left corner of the plotting area.
///
/// Why not plotters' own series labels: they measure text through the glyph renderer even on the SVG backend,
/// which would make SVG charts need a font file; measuring through the backend keeps SVG font-free.
fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    (x_pixels, y_pixels): (std::ops::Range<i32>, std::ops::Range<i32>),
    entries: &[(Mark, String)],
    family: &str,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    if entries.is_empty() {
        return Ok(());
    }
    let style = TextStyle::from((family, 14).into_font()).color(&BLACK);
    let mut widest = 0u32;
    for (_, text) in entries {
        widest = widest.max(root.estimate_text_size(text, &style).map_err(failed)?.0);
    }
    let line = 20;
    let (left, top) = (x_pixels.start + 10, y_pixels.start + 10);
    let width = 36 + widest as i32 + 10;
    let height = line * entries.len() as i32 + 8;
    root.draw(&Rectangle::new([(left, top), (left + width, top + height)], WHITE.mix(0.85).filled())).map_err(failed)?;
    root.draw(&Rectangle::new([(left, top), (left + width, top + height)], BLACK.stroke_width(1))).map_err(failed)?;
    for (i, (mark, text)) in entries.iter().enumerate() {
        let y = top + 4 + line * i as i32 + line / 2;
        let x = left + 8;
        match mark {
            Mark::Swatch(c) => root.draw(&Rectangle::new([(x, y - 5), (x + 18, y + 5)], c.filled())),
            Mark::Dot(c, r) => root.draw(&Circle::new((x + 9, y), *r, c.filled())),
            Mark::Line(c) => root.draw(&PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(3))),
            Mark::Bar(c) => root.draw(&PathElement::new(vec![(x + 9, y - 7), (x + 9, y + 7)], c.stroke_width(2))),
        }
        .map_err(failed)?;
        root.draw(&Text::new(text.clone(), (x + 28, y), style.pos(Pos::new(HPos::Left, VPos::Center)))).map_err(failed)?;
    }
    Ok(())
}

fn short_label(label: &str) -> String {
    if label.len() == 40 && label.bytes().all(|b| b.is_ascii_hexdigit()) {
        label.chars().take(12).collect()
    } else {
        label.chars().take(16).collect()
    }
}

/// The location interval of a change to shade: its points when they hold the change's pair, are on the chart, and
/// are wider than the pair (a band over the pair alone would say nothing the mark does not).
fn band(mark: &ChangeMark, n: usize) -> Option<(usize, usize)> {
    mark.interval.filter(|&(low, high)| {
        low <= mark.before_index && mark.index <= high && high < n && (low, high) != (mark.before_index, mark.index)
    })
}

fn track<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, t: &TrackPlot, family: &str) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let n = t.runs.len();
    let mut ys: Vec<f64> = t.runs.iter().flatten().copied().filter(|v| v.is_finite()).collect();
    if ys.is_empty() {
        return Err(PlotError::Empty(format!("the history of {} has no finite run", t.metric)));
    }
    let segments: Vec<_> =
        t.segments.iter().filter(|s| s.level.is_finite() && s.first <= s.last && s.last < n).copied().collect();
    ys.extend(segments.iter().map(|s| s.level));
    let (y_low, y_high) = bounds(&ys).unwrap_or((0.0, 1.0));
    let y_range = padded(y_low, y_high, 0.08);
    let (y_min, y_max) = (y_range.start, y_range.end);
    let mut chart = ChartBuilder::on(root)
        .caption(&t.metric, (family, 24))
        .margin(18)
        .x_label_area_size(50)
        .y_label_area_size(100)
        .build_cartesian_2d((-0.5)..(n as f64 - 0.5), y_range)
        .map_err(failed)?;
    let labels: Vec<String> = t.labels.iter().map(|l| short_label(l)).collect();
    let label_x = move |x: &f64| {
        if (x - x.round()).abs() < 1e-6 && *x >= 0.0 {
            labels.get(x.round() as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    let x_desc = if t.subtitle.is_empty() { t.points.clone() } else { format!("{}: {}", t.points, t.subtitle) };
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(&t.metric)
        .label_style((family, 13))
        .axis_desc_style((family, 16))
        .x_labels(n.clamp(2, 10))
        .x_label_formatter(&label_x)
        .draw()
        .map_err(failed)?;

    // Each change point's location interval, where wider than its pair, as a band under the runs: the change may
    // lie anywhere in it, and a bisect of the change searches all of it. Drawn first, so the runs stay on top.
    let changes: Vec<_> = t.changes.iter().filter(|c| c.before_index < n && c.index < n).collect();
    for mark in &changes {
        if let Some((low, high)) = band(mark, n) {
            let band = rgb(change_color(mark.kind)).mix(0.15).filled();
            let area = Rectangle::new([(low as f64, y_min), (high as f64, y_max)], band);
            chart.draw_series(std::iter::once(area)).map_err(failed)?;
        }
    }
    let faint = rgb(RUN_COLOR).mix(0.35);
    chart
        .draw_series(t.runs.iter().enumerate().flat_map(|(i, runs)| {
            runs.iter().filter(|v| v.is_finite()).map(move |&v| Circle::new((i as f64, v), 2, faint.filled()))
        }))
        .map_err(failed)?;
    let mut legend = vec![(Mark::Dot(faint, 3), "runs".to_string())];
    let means: Vec<(f64, f64)> = t
        .runs
        .iter()
        .enumerate()
        .filter_map(|(i, runs)| {
            let finite: Vec<f64> = runs.iter().copied().filter(|v| v.is_finite()).collect();
            (!finite.is_empty()).then(|| (i as f64, finite.iter().sum::<f64>() / finite.len() as f64))
        })
        .collect();
    let mean_color = rgb(MEAN_COLOR);
    chart.draw_series(LineSeries::new(means.iter().copied(), mean_color.mix(0.5).stroke_width(1))).map_err(failed)?;
    chart
        .draw_series(means.iter().map(|&p| Circle::new(p, 4, mean_color.filled())))
        .map_err(failed)?;
    legend.push((Mark::Dot(mean_color.to_rgba(), 4), "mean per commit".to_string()));
    let segment_color = rgb(SEGMENT_COLOR);
    chart
        .draw_series(segments.iter().map(|s| {
            PathElement::new(vec![(s.first as f64 - 0.4, s.level), (s.last as f64 + 0.4, s.level)], segment_color.stroke_width(3))
        }))
        .map_err(failed)?;
    if !segments.is_empty() {
        legend.push((Mark::Line(segment_color), "fitted segments".to_string()));
    }
    for mark in changes {
        let color = rgb(change_color(mark.kind));
        let x = (mark.before_index as f64 + mark.index as f64) / 2.0;
        chart
            .draw_series(std::iter::once(PathElement::new(vec![(x, y_min), (x, y_max)], color.stroke_width(2))))
            .map_err(failed)?;
        let mut text = format!("{}: {}", mark.kind.word(), mark.text);
        if let Some((low, high)) = band(mark, n) {
            let label = |i: usize| t.labels.get(i).map(|l| short_label(l)).unwrap_or_default();
            text.push_str(&format!(" (shaded, 90%: from {} to {})", label(low), label(high)));
        }
        legend.push((Mark::Bar(color), text));
    }
    draw_legend(root, chart.plotting_area().get_pixel_range(), &legend, family)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_x_axis_follows_the_values() {
        let cases: &[(&[&str], XAxis)] = &[
            (&["1", "2", "4", "8", "16", "32"], XAxis::Log2),
            (&["2", "4", "6"], XAxis::Linear),
            (&["1", "100"], XAxis::Linear),
            (&["4k", "64k", "1m"], XAxis::Categories),
            (&["0", "16", "256"], XAxis::Linear),
            (&["NaN", "1", "2"], XAxis::Categories),
            (&[], XAxis::Categories),
        ];
        for (given, expected) in cases {
            assert_eq!(XAxis::of(&values(given)), *expected, "{given:?}");
        }
    }

    #[test]
    fn axis_labels_name_the_values() {
        let v = values(&["4k", "64k"]);
        assert_eq!(XAxis::Categories.label(1.0, &v), "64k");
        assert_eq!(XAxis::Categories.label(0.5, &v), "");
        assert_eq!(XAxis::Categories.label(7.0, &v), "");
        assert_eq!(XAxis::Log2.label(4.0, &v), "16");
        assert_eq!(XAxis::Log2.label(4.5, &v), "");
        assert_eq!(XAxis::Linear.label(2.5, &v), "2.5");
        assert_eq!(number_text(0.125), "0.125");
    }

    #[test]
    fn ranges_are_never_empty() {
        assert_eq!(padded(5.0, 5.0, 0.1), 4.75..5.25);
        assert_eq!(padded(0.0, 0.0, 0.1), -1.0..1.0);
        assert_eq!(bounds(&[f64::NAN, 3.0, -1.0, f64::INFINITY]), Some((-1.0, 3.0)));
        assert_eq!(bounds(&[f64::NAN]), None);
    }
}
