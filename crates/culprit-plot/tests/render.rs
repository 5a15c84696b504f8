//! Rendering tests: the SVG text holds the curves, labels, segments and change marks the values ask for; the PNG
//! is a real PNG of the chart's size whose pixels are not blank.

use culprit_plot::*;
use std::path::Path;

fn seed004_sweep() -> SweepPlot {
    // The shape of seed 004's sysbench-by-threads table: two kernels, threads 1..64.
    let values: Vec<String> = ["1", "2", "4", "8", "16", "32", "64"].iter().map(|s| s.to_string()).collect();
    let base = [980.0, 1950.0, 3900.0, 7700.0, 14800.0, 15100.0, 15000.0];
    let curves = ["v6.8", "v6.9-rc1"]
        .iter()
        .enumerate()
        .map(|(k, label)| SweepCurve {
            label: label.to_string(),
            points: base
                .iter()
                .map(|&b| Some(MeanStd { mean: b * (1.0 - 0.1 * k as f64), stddev: b * 0.02 }))
                .collect(),
        })
        .collect();
    SweepPlot { metric: "sysbench-threads.events_per_second".into(), param: "nr_threads".into(), values, curves }
}

fn history() -> TrackPlot {
    let mut runs = Vec::new();
    for i in 0..12 {
        let level = if i < 7 { 100.0 } else { 130.0 };
        runs.push(vec![level - 1.0, level, level + 1.5]);
    }
    TrackPlot {
        metric: "command.user_time".into(),
        subtitle: "bench on box1".into(),
        labels: (0..12).map(|i| format!("{:040x}", i + 0xabc)).collect(),
        points: "tested commits, oldest first".into(),
        runs,
        segments: vec![Segment { first: 0, last: 6, level: 100.1 }, Segment { first: 7, last: 11, level: 130.1 }],
        changes: vec![ChangeMark {
            before_index: 6,
            index: 7,
            interval: None,
            kind: ChangeKind::Regression,
            text: "+30.0% at 000000000ac3".into(),
        }],
    }
}

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

/// The text of every `<text ...>TEXT</text>` element.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text").skip(1).filter_map(|t| t.split_once('>').and_then(|(_, rest)| rest.split_once("</text>")).map(|(s, _)| s.trim().to_string())).collect()
}

/// Polylines drawn in the colour `#RRGGBB`.
fn polylines_in(svg: &str, color: (u8, u8, u8)) -> usize {
    let hex = format!("#{:02X}{:02X}{:02X}", color.0, color.1, color.2);
    svg.split("<polyline").skip(1).filter(|p| p.split('>').next().is_some_and(|attrs| attrs.to_uppercase().contains(&hex))).count()
}

#[test]
fn sweep_svg_has_one_curve_per_column_with_error_bars_axis_labels_and_the_metric_as_title() {
    let plot = seed004_sweep();
    let svg = render_svg(&Chart::Sweep(plot.clone())).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..100]);
    assert!(svg.trim_end().ends_with("</svg>"));
    let t = texts(&svg);
    assert_eq!(t.first().map(String::as_str), Some("sysbench-threads.events_per_second"), "the title comes first: {t:?}");
    assert!(t.iter().any(|s| s == "nr_threads (log scale)"), "{t:?}");
    for label in ["v6.8", "v6.9-rc1"] {
        assert_eq!(t.iter().filter(|s| *s == label).count(), 1, "one legend entry for {label}: {t:?}");
    }
    // Numeric axis: the param values are tick labels.
    for value in ["1", "2", "4", "8", "16", "32", "64"] {
        assert!(t.iter().any(|s| s == value), "tick {value} missing: {t:?}");
    }
    // Per curve: its line and one error bar per point, in its own colour; a third colour is not used.
    for k in 0..2 {
        assert_eq!(polylines_in(&svg, draw_color(k)), 1 + 7, "curve {k}");
    }
    assert_eq!(polylines_in(&svg, draw_color(2)), 0);
    assert_eq!(count(&svg, "<circle"), 14, "one marker per point");
}

fn draw_color(k: usize) -> (u8, u8, u8) {
    [(0, 114, 178), (213, 94, 0), (0, 158, 115)][k]
}

#[test]
fn sweep_with_text_values_uses_categories_in_the_given_order() {
    let plot = SweepPlot {
        metric: "fio.write_bw_MBps".into(),
        param: "bs".into(),
        values: vec!["4k".into(), "64k".into(), "1m".into()],
        curves: vec![SweepCurve {
            label: "base".into(),
            points: vec![Some(MeanStd { mean: 10.0, stddev: 0.0 }), None, Some(MeanStd { mean: f64::NAN, stddev: 1.0 })],
        }],
    };
    let svg = render_svg(&Chart::Sweep(plot)).unwrap();
    let t = texts(&svg);
    let positions: Vec<usize> = ["4k", "64k", "1m"].iter().map(|v| t.iter().position(|s| s == v).unwrap()).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{t:?}");
    assert!(t.iter().any(|s| s == "bs"), "{t:?}");
    // Only the one finite point is drawn; without stddev it has no error bar.
    assert_eq!(count(&svg, "<circle"), 1);
    assert_eq!(polylines_in(&svg, draw_color(0)), 1);
}

#[test]
fn track_svg_shows_runs_means_segments_and_the_change_point() {
    let svg = render_svg(&Chart::Track(history())).unwrap();
    let t = texts(&svg);
    assert_eq!(t.first().map(String::as_str), Some("command.user_time"), "{t:?}");
    assert!(t.iter().any(|s| s.contains("bench on box1")), "{t:?}");
    assert!(t.iter().any(|s| s == "regression: +30.0% at 000000000ac3"), "{t:?}");
    assert!(t.iter().any(|s| s == "fitted segments"), "{t:?}");
    // 36 runs as faint dots and 12 means, plus the two round legend markers.
    assert_eq!(count(&svg, "<circle"), 36 + 12 + 2);
    // Two segments and their legend sample; one change line and its legend sample.
    assert_eq!(polylines_in(&svg, (40, 40, 40)), 2 + 1);
    assert_eq!(polylines_in(&svg, (200, 30, 30)), 1 + 1);
}

/// The faint rectangles of a chart: the change points' location intervals.
fn bands(svg: &str) -> usize {
    svg.split("<rect").skip(1).filter(|r| r.split('>').next().is_some_and(|a| a.contains("opacity=\"0.15\""))).count()
}

#[test]
fn a_location_interval_wider_than_the_pair_is_a_shaded_band_named_in_the_legend() {
    let mut h = history();
    h.changes[0].interval = Some((4, 9));
    let svg = render_svg(&Chart::Track(h.clone())).unwrap();
    assert_eq!(bands(&svg), 1, "{svg}");
    // The interval's ends are named as the axis names commits: a full SHA by its first 12 characters.
    let (low, high) = (&h.labels[4][..12], &h.labels[9][..12]);
    let legend = format!("regression: +30.0% at 000000000ac3 (shaded, 90%: from {low} to {high})");
    assert!(texts(&svg).contains(&legend), "{:?}", texts(&svg));
    // No band for an interval that is the pair itself, that does not hold the pair, or that leaves the chart.
    for interval in [Some((6, 7)), Some((7, 9)), Some((4, 12)), None] {
        h.changes[0].interval = interval;
        let svg = render_svg(&Chart::Track(h.clone())).unwrap();
        assert_eq!(bands(&svg), 0, "{interval:?}: {svg}");
        assert!(!svg.contains("shaded"), "{interval:?}");
    }
}

#[test]
fn nothing_finite_to_draw_is_an_error_not_a_panic() {
    let mut plot = seed004_sweep();
    for c in &mut plot.curves {
        for p in &mut c.points {
            *p = Some(MeanStd { mean: f64::INFINITY, stddev: 0.0 });
        }
    }
    assert!(matches!(render_svg(&Chart::Sweep(plot)), Err(PlotError::Empty(_))));
    let mut h = history();
    h.runs = vec![vec![f64::NAN]; 3];
    assert!(matches!(render_svg(&Chart::Track(h)), Err(PlotError::Empty(_))));
    // Out-of-range segment and change indices are left out rather than drawn off the chart.
    let mut h = history();
    h.segments.push(Segment { first: 5, last: 99, level: 1.0 });
    let mark = ChangeMark { before_index: 50, index: 51, interval: None, kind: ChangeKind::Change, text: "x".into() };
    h.changes.push(mark);
    let svg = render_svg(&Chart::Track(h)).unwrap();
    assert!(!texts(&svg).iter().any(|s| s == "change: x"));
}

/// Width and height from the IHDR chunk, after checking the signature.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

fn font() -> Font {
    Font::system().unwrap_or_else(|e| panic!("{e} (scripts/debian-packages.sh installs it)"))
}

#[test]
fn png_is_a_real_png_of_the_chart_size_with_text_and_curves() {
    for chart in [Chart::Sweep(seed004_sweep()), Chart::Track(history())] {
        let bytes = render_png(&chart, &font()).unwrap();
        let (width, height) = size_of(&chart);
        assert!(width == WIDTH && height > HEIGHT, "{width}x{height}: the plot and the legend's band under it");
        assert_eq!(png_size(&bytes), (width, height));
        let decoder = png::Decoder::new(std::io::Cursor::new(&bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut pixels = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut pixels).unwrap();
        assert_eq!((info.width, info.height), (width, height));
        let pixels = &pixels[..info.buffer_size()];
        // Mostly white background, but a good share drawn: axes, text, curves.
        let non_white = pixels.chunks(3).filter(|p| p != &[255, 255, 255]).count();
        let total = (width * height) as usize;
        assert!(non_white > total / 100 && non_white < total / 2, "{non_white} of {total}");
        // The legend is drawn in the band under the plot.
        let band = &pixels[(HEIGHT * width * 3) as usize..];
        assert!(band.chunks(3).filter(|p| p != &[255, 255, 255]).count() > 500);
    }
    // The first curve's colour is present in the sweep.
    let bytes = render_png(&Chart::Sweep(seed004_sweep()), &font()).unwrap();
    let mut reader = png::Decoder::new(std::io::Cursor::new(&bytes)).read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    reader.next_frame(&mut pixels).unwrap();
    assert!(pixels.chunks(3).any(|p| p == [0, 114, 178]));
}

#[test]
fn write_file_picks_the_format_from_the_name() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("s.svg");
    write_file(&Chart::Sweep(seed004_sweep()), &svg).unwrap();
    assert!(std::fs::read_to_string(&svg).unwrap().contains("v6.9-rc1"));
    let png = dir.path().join("t.png");
    write_file(&Chart::Track(history()), &png).unwrap();
    assert_eq!(png_size(&std::fs::read(&png).unwrap()), size_of(&Chart::Track(history())));
    assert!(matches!(write_file(&Chart::Track(history()), Path::new("t.gif")), Err(PlotError::UnknownFormat { .. })));
    if let Ok(dir) = std::env::var("CULPRIT_PLOT_SAMPLES") {
        // For looking at the charts by eye.
        write_file(&Chart::Sweep(seed004_sweep()), &Path::new(&dir).join("sweep.png")).unwrap();
        write_file(&Chart::Track(history()), &Path::new(&dir).join("track.png")).unwrap();
        write_file(&Chart::Sweep(seed004_sweep()), &Path::new(&dir).join("sweep.svg")).unwrap();
    }
}

/// QA 57: the legend sat in the plot's upper left corner, over the runs of the first commits. Every entry is now in
/// the band under the plot, which grows with the entries, and the plot keeps its size.
#[test]
fn the_legend_is_under_the_plot_not_over_its_data() {
    let track = Chart::Track(history());
    let svg = render_svg(&track).unwrap();
    let (_, height) = size_of(&track);
    assert!(svg.contains(&format!("height=\"{height}\"")), "{}", &svg[..200]);
    // Each `<text x=".." y=".." ...>TEXT</text>` element's y and text.
    let placed: Vec<(f64, String)> = svg
        .split("<text")
        .skip(1)
        .filter_map(|element| {
            let (attributes, rest) = element.split_once('>')?;
            let y = attributes.split(" y=\"").nth(1)?.split('"').next()?.parse().ok()?;
            Some((y, rest.split_once("</text>")?.0.trim().to_string()))
        })
        .collect();
    for entry in ["runs", "mean per commit", "fitted segments", "regression: +30.0% at 000000000ac3"] {
        let (y, _) = placed.iter().find(|(_, text)| text == entry).unwrap_or_else(|| panic!("{entry}: {placed:?}"));
        assert!(*y > HEIGHT as f64 && *y < height as f64, "{entry} at y {y}");
    }
    // One more change point, one more line of legend: the band grows, the plot does not shrink.
    let mut more = history();
    more.changes.push(ChangeMark { index: 2, before_index: 1, ..more.changes[0].clone() });
    assert_eq!(size_of(&Chart::Track(more)).1, height + 20);
}
