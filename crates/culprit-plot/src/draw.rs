//! Drawing both chart kinds on any plotters backend (the SVG one in `svg.rs`, the bitmap one for PNG).
//!
//! Input is sanitised before plotters sees it: NaN and infinite values are left out, empty and zero-width ranges
//! are widened, so no value can make the renderer panic or draw an unreadable chart.

use crate::{ChangeKind, ChangeMark, Chart, MeanStd, PlotError, Segment, SweepPlot, TrackPlot, HEIGHT};
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

/// Draws `chart` on a backend of [`crate::size_of`] the chart: the plot in the top [`HEIGHT`] pixels, its legend in
/// the band under it. Under the plot, not over it: in the plot's corner the legend of a track with a change or two
/// hid the runs of the first commits (QA 57), and no corner is free of data on every history.
pub fn chart<DB: DrawingBackend>(backend: DB, chart: &Chart, family: &str) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let root = backend.into_drawing_area();
    root.fill(&WHITE).map_err(failed)?;
    let (plot, _) = root.split_vertically(HEIGHT);
    let x_pixels = match chart {
        Chart::Sweep(s) => sweep(&plot, s, family)?,
        Chart::Track(t) => track(&plot, t, family)?,
    };
    draw_legend(&root, x_pixels.start, HEIGHT as i32, &legend_entries(chart), family)?;
    root.present().map_err(failed)
}

/// Pixels between the plot and the legend's frame, and from the frame to the image's bottom edge.
const LEGEND_GAP: u32 = 6;
/// The height of one legend entry.
const LEGEND_LINE: u32 = 20;

/// The height of the band under the plot that the legend of `entries` rows takes (none without entries).
pub fn legend_band(entries: usize) -> u32 {
    match entries {
        0 => 0,
        n => LEGEND_GAP + LEGEND_LINE * n as u32 + 8 + LEGEND_GAP,
    }
}

/// The legend's entries, in the order drawn: a sweep's curves; a track's runs, means, fitted segments and each
/// change point.
pub fn legend_entries(chart: &Chart) -> Vec<(Mark, String)> {
    match chart {
        Chart::Sweep(s) => s
            .curves
            .iter()
            .enumerate()
            .map(|(k, curve)| (Mark::Swatch(rgb(curve_color(k))), curve.label.clone()))
            .collect(),
        Chart::Track(t) => {
            let mut legend = vec![
                (Mark::Dot(rgb(RUN_COLOR).mix(0.35), 3), "runs".to_string()),
                (Mark::Dot(rgb(MEAN_COLOR).to_rgba(), 4), "mean per commit".to_string()),
            ];
            if !drawable_segments(t).is_empty() {
                legend.push((Mark::Line(rgb(SEGMENT_COLOR)), "fitted segments".to_string()));
            }
            let n = t.runs.len();
            for mark in drawable_changes(t) {
                let mut text = format!("{}: {}", mark.kind.word(), mark.text);
                if let Some((low, high)) = band(mark, n) {
                    let label = |i: usize| t.labels.get(i).map(|l| short_label(l)).unwrap_or_default();
                    text.push_str(&format!(" (shaded, 90%: from {} to {})", label(low), label(high)));
                }
                legend.push((Mark::Bar(rgb(change_color(mark.kind))), text));
            }
            legend
        }
    }
}

/// A track's fitted segments that can be drawn: a finite level over commits on the chart.
fn drawable_segments(t: &TrackPlot) -> Vec<Segment> {
    let n = t.runs.len();
    t.segments.iter().filter(|s| s.level.is_finite() && s.first <= s.last && s.last < n).copied().collect()
}

/// A track's change points whose commits are on the chart.
fn drawable_changes(t: &TrackPlot) -> Vec<&ChangeMark> {
    let n = t.runs.len();
    t.changes.iter().filter(|c| c.before_index < n && c.index < n).collect()
}

/// How param values map to x.
#[derive(Debug, Clone, Copy, PartialEq)]
enum XAxis {
    /// Values that are not all numbers: one slot per value, in the given order.
    Categories,
    Linear,
    /// Whole numbers over a small span (nr_threads 1 and 2): linear, labelled at whole numbers only, since a
    /// tick at 1.1 names a value the param cannot take.
    Integers,
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
        } else if numbers.iter().all(|x| x.fract() == 0.0) && high - low <= 24.0 {
            XAxis::Integers
        } else {
            XAxis::Linear
        }
    }

    fn position(self, index: usize, value: &str) -> f64 {
        let number = value.trim().parse::<f64>().unwrap_or(index as f64);
        match self {
            XAxis::Categories => index as f64,
            XAxis::Linear | XAxis::Integers => number,
            XAxis::Log2 => number.log2(),
        }
    }

    fn label(self, x: f64, values: &[String]) -> String {
        let near_integer = (x - x.round()).abs() < 1e-6;
        match self {
            XAxis::Categories if near_integer && x >= 0.0 => values.get(x.round() as usize).cloned().unwrap_or_default(),
            XAxis::Categories => String::new(),
            XAxis::Linear => number_text(x),
            XAxis::Integers if near_integer => number_text(x.round()),
            XAxis::Integers => String::new(),
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

/// Draws a sweep's plot and returns the plotting area's pixel columns, which the legend under it starts from.
fn sweep<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    s: &SweepPlot,
    family: &str,
) -> Result<std::ops::Range<i32>, PlotError>
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
    for (k, curve) in s.curves.iter().enumerate() {
        let color = rgb(curve_color(k));
        let points: Vec<(f64, MeanStd)> =
            xs.iter().zip(&curve.points).filter_map(|(&x, p)| finite_point(p).map(|p| (x, p))).collect();
        chart
            .draw_series(LineSeries::new(points.iter().map(|&(x, p)| (x, p.mean)), color.stroke_width(2)))
            .map_err(failed)?;
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
    Ok(chart.plotting_area().get_pixel_range().0)
}

/// The sample drawn before a legend entry.
pub enum Mark {
    /// A filled square: a curve.
    Swatch(RGBColor),
    /// A dot of a radius: runs and means.
    Dot(RGBAColor, u32),
    /// A horizontal line: fitted segments.
    Line(RGBColor),
    /// A vertical line: a change point.
    Bar(RGBColor),
}

/// The legend, in a frame under the plot whose top is `top`, from the plotting area's left edge `left`.
///
/// Why not plotters' own series labels: they measure text through the glyph renderer even on the SVG backend,
/// which would make SVG charts need a font file; measuring through the backend keeps SVG font-free.
fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    left: i32,
    top: i32,
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
    let line = LEGEND_LINE as i32;
    let top = top + LEGEND_GAP as i32;
    let width = 36 + widest as i32 + 10;
    let height = line * entries.len() as i32 + 8;
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

/// Draws a track's plot and returns the plotting area's pixel columns, which the legend under it starts from.
fn track<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    t: &TrackPlot,
    family: &str,
) -> Result<std::ops::Range<i32>, PlotError>
where
    DB::ErrorType: 'static,
{
    let n = t.runs.len();
    let mut ys: Vec<f64> = t.runs.iter().flatten().copied().filter(|v| v.is_finite()).collect();
    if ys.is_empty() {
        return Err(PlotError::Empty(format!("the history of {} has no finite run", t.metric)));
    }
    let segments = drawable_segments(t);
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
    let changes = drawable_changes(t);
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
    let segment_color = rgb(SEGMENT_COLOR);
    chart
        .draw_series(segments.iter().map(|s| {
            PathElement::new(vec![(s.first as f64 - 0.4, s.level), (s.last as f64 + 0.4, s.level)], segment_color.stroke_width(3))
        }))
        .map_err(failed)?;
    for mark in changes {
        let color = rgb(change_color(mark.kind));
        let x = (mark.before_index as f64 + mark.index as f64) / 2.0;
        chart
            .draw_series(std::iter::once(PathElement::new(vec![(x, y_min), (x, y_max)], color.stroke_width(2))))
            .map_err(failed)?;
    }
    Ok(chart.plotting_area().get_pixel_range().0)
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
            (&["2", "4", "6"], XAxis::Integers),
            (&["1", "2"], XAxis::Integers),
            (&["0.5", "1", "2"], XAxis::Linear),
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
        // QA 58: nr_threads 1 and 2 were ticked at 1.1, 1.2, ...
        assert_eq!(XAxis::Integers.label(1.1, &v), "");
        assert_eq!(XAxis::Integers.label(2.0000000001, &v), "2");
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
