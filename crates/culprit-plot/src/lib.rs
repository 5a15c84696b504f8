//! Culprit's charts: a scaling sweep (`culprit compare --by PARAM --plot`) and a tracked series with its fitted
//! segments and change points (`culprit track --plot`), drawn with `plotters` as SVG text or PNG bytes.
//!
//! The chart types hold values only; [`render_svg`] is pure (values in, text out) and needs no font, because SVG
//! text is laid out by whoever displays it. [`render_png`] rasterises glyphs, so it needs a TrueType font:
//! [`Font::system`] loads DejaVu Sans from Debian's `fonts-dejavu-core` at run time (see `font.rs`).

mod draw;
mod font;
mod svg;

pub use font::{Font, DEJAVU_SANS, FONT_PACKAGE};

use std::path::{Path, PathBuf};

/// Size of every chart's plot in pixels (SVG user units and PNG pixels alike); the legend's band is under it
/// ([`size_of`]).
pub const WIDTH: u32 = 1024;
pub const HEIGHT: u32 = 576;

/// The size of the image of `chart`: [`WIDTH`] by [`HEIGHT`] for the plot, and the legend's band under it, as tall
/// as its entries need.
pub fn size_of(chart: &Chart) -> (u32, u32) {
    (WIDTH, HEIGHT + draw::legend_band(draw::legend_entries(chart).len()))
}

/// Why a chart could not be drawn or written.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error(
        "the PNG chart needs the TrueType font {path}, which is missing ({reason}); install Debian's {package} \
         package (apt-get install {package}) or write an .svg chart instead"
    )]
    FontMissing { path: PathBuf, package: &'static str, reason: String },
    #[error("{path} is not a TrueType font the renderer can read; reinstall {package}")]
    FontUnreadable { path: PathBuf, package: &'static str },
    #[error("{path}: the chart format comes from the file name; use a name ending in .svg or .png")]
    UnknownFormat { path: PathBuf },
    #[error("nothing to draw: {0}")]
    Empty(String),
    #[error("drawing the chart failed: {0}")]
    Draw(String),
    #[error("encoding the PNG failed: {0}")]
    Encode(String),
    /// The I/O error is part of the message and deliberately not a `source`: a chain of causes would print it twice.
    #[error("cannot write the chart {path}: {error}")]
    Write { path: PathBuf, error: std::io::Error },
}

/// A mean with its standard deviation (0 when a single run).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeanStd {
    pub mean: f64,
    pub stddev: f64,
}

/// One curve of a sweep: a commit or label, with one point per param value (`None` where it has no runs).
#[derive(Debug, Clone, PartialEq)]
pub struct SweepCurve {
    pub label: String,
    /// Aligned with [`SweepPlot::values`].
    pub points: Vec<Option<MeanStd>>,
}

/// The seed-004 scaling view as curves: x is the param value, y the metric's mean with stddev error bars.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPlot {
    pub metric: String,
    pub param: String,
    /// The param values in the order to draw them; a numeric axis when all parse as numbers, else categories.
    pub values: Vec<String>,
    pub curves: Vec<SweepCurve>,
}

/// A horizontal fitted segment over points `first..=last` (indices into [`TrackPlot::runs`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    pub first: usize,
    pub last: usize,
    pub level: f64,
}

/// What a marked change point is, which picks its colour and legend entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Regression,
    Improvement,
    /// A change of a metric without a known better direction.
    Change,
}

impl ChangeKind {
    pub fn word(self) -> &'static str {
        match self {
            ChangeKind::Regression => "regression",
            ChangeKind::Improvement => "improvement",
            ChangeKind::Change => "change",
        }
    }
}

/// A change point between `before_index` (last point before) and `index` (first point after).
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeMark {
    pub before_index: usize,
    pub index: usize,
    pub kind: ChangeKind,
    /// The points the change lies between with 90% probability (its location interval's last point before and first
    /// after), drawn as a shaded band when wider than `before_index..=index`; `None` when only the pair is known.
    pub interval: Option<(usize, usize)>,
    /// Short text for the legend, e.g. `+30.1% at 3f2a1b9c0d1e`.
    pub text: String,
}

/// One metric's history: every run per tested commit, the fitted segments, and the change points.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackPlot {
    pub metric: String,
    /// A second title line, e.g. the job and the machine.
    pub subtitle: String,
    /// One label per point (a short SHA or a label), oldest first.
    pub labels: Vec<String>,
    /// What the points are, for the x axis: `tested commits, oldest first`, or `labels, in the order of their first
    /// run` for a series of labels, which a chart named as commits told untruly.
    pub points: String,
    /// Every run of each point; a point may have none (it is left out).
    pub runs: Vec<Vec<f64>>,
    pub segments: Vec<Segment>,
    pub changes: Vec<ChangeMark>,
}

/// Any chart this crate draws.
#[derive(Debug, Clone, PartialEq)]
pub enum Chart {
    Sweep(SweepPlot),
    Track(TrackPlot),
}

/// The file formats, chosen by the file name's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    Svg,
    Png,
}

impl ImageFormat {
    pub fn of_path(path: &Path) -> Result<ImageFormat, PlotError> {
        let extension = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        match extension.as_deref() {
            Some("svg") => Ok(ImageFormat::Svg),
            Some("png") => Ok(ImageFormat::Png),
            _ => Err(PlotError::UnknownFormat { path: path.to_path_buf() }),
        }
    }
}

/// The chart as an SVG document. Pure: no font, file or clock is involved.
pub fn render_svg(chart: &Chart) -> Result<String, PlotError> {
    svg::render(chart)
}

/// The chart as PNG bytes, with its text drawn in `font`.
pub fn render_png(chart: &Chart, font: &Font) -> Result<Vec<u8>, PlotError> {
    let (width, height) = size_of(chart);
    let mut rgb = vec![0u8; width as usize * height as usize * 3];
    {
        let backend = plotters::backend::BitMapBackend::with_buffer(&mut rgb, (width, height));
        draw::chart(backend, chart, font.family())?;
    }
    encode_png(&rgb, width, height)
}

/// Writes the chart to `path` as SVG or PNG, by its extension (PNG loads the system font first).
pub fn write_file(chart: &Chart, path: &Path) -> Result<(), PlotError> {
    let bytes = match ImageFormat::of_path(path)? {
        ImageFormat::Svg => render_svg(chart)?.into_bytes(),
        ImageFormat::Png => render_png(chart, &Font::system()?)?,
    };
    std::fs::write(path, bytes).map_err(|error| PlotError::Write { path: path.to_path_buf(), error })
}

/// `FILE.svg` for one chart; `FILE-<name>.svg` for each of several (the name made safe for a file name).
pub fn numbered_path(path: &Path, name: &str) -> PathBuf {
    let safe: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect();
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let file = match path.extension() {
        Some(ext) => format!("{stem}-{safe}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{safe}"),
    };
    path.with_file_name(file)
}

fn encode_png(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>, PlotError> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(|e| PlotError::Encode(e.to_string()))?;
        writer.write_image_data(rgb).map_err(|e| PlotError::Encode(e.to_string()))?;
        writer.finish().map_err(|e| PlotError::Encode(e.to_string()))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_of_whole_numbers_is_labelled_at_whole_numbers() {
        // QA 58: `compare --by nr_threads` of 1 and 2 threads had ticks labelled 1.1, 1.2, ...
        let point = |mean| Some(MeanStd { mean, stddev: 1.0 });
        let chart = Chart::Sweep(SweepPlot {
            metric: "hackbench.throughput".to_string(),
            param: "nr_threads".to_string(),
            values: vec!["1".to_string(), "2".to_string()],
            curves: vec![SweepCurve { label: "base".to_string(), points: vec![point(100.0), point(180.0)] }],
        });
        let svg = render_svg(&chart).unwrap();
        let texts: Vec<&str> =
            svg.split("<text").skip(1).filter_map(|t| Some(t.split('>').nth(1)?.split('<').next()?.trim())).collect();
        assert!(texts.contains(&"1") && texts.contains(&"2"), "{texts:?}");
        assert!(!texts.iter().any(|t| t.starts_with("1.") || t.starts_with("2.")), "{texts:?}");
    }

    #[test]
    fn formats_come_from_the_extension() {
        assert_eq!(ImageFormat::of_path(Path::new("a/b.svg")).unwrap(), ImageFormat::Svg);
        assert_eq!(ImageFormat::of_path(Path::new("b.PNG")).unwrap(), ImageFormat::Png);
        assert!(matches!(ImageFormat::of_path(Path::new("b.jpg")), Err(PlotError::UnknownFormat { .. })));
        assert!(ImageFormat::of_path(Path::new("b")).is_err());
    }

    #[test]
    fn numbered_paths_keep_the_extension_and_make_names_safe() {
        assert_eq!(numbered_path(Path::new("out/t.svg"), "fio.write_iops"), PathBuf::from("out/t-fio.write_iops.svg"));
        assert_eq!(numbered_path(Path::new("t.png"), "a/b c"), PathBuf::from("t-a_b_c.png"));
    }
}
