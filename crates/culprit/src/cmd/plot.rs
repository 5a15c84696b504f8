//! The charts of `culprit compare --by PARAM --plot FILE` and `culprit track --plot FILE`: the values the text
//! output is made of, handed to `culprit-plot`, which draws them as SVG or PNG by the file's extension.
//!
//! Several tracked series go to one file each, `FILE-<metric>.svg` (see [`culprit_plot::numbered_path`]); one
//! series goes to FILE itself.

use crate::cmd::track::Series;
use anyhow::{bail, Context, Result};
use culprit_core::changepoint::Analysis;
use culprit_core::compare::sweep::{Sweep, SweepRow};
use culprit_core::compare::Verdict;
use culprit_core::model::{prose_short, MetricClass};
use culprit_plot::{ChangeKind, ChangeMark, Chart, MeanStd, Segment, SweepCurve, SweepPlot, TrackPlot};
use std::path::{Path, PathBuf};

/// Checks that `--plot` can write `path`: an .svg or .png name in a directory that exists and this user may write.
/// `track` and `compare --by` check it before their work (a long history's analysis, a pass's builds and runs, a
/// sweep's comparisons), whose results a bad name would otherwise lose after the fact; both say it in these words.
pub fn check_path(path: &Path) -> Result<()> {
    culprit_plot::ImageFormat::of_path(path)?;
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !parent.is_dir() {
        bail!(
            "--plot {}: the directory {} does not exist; create it or name another",
            path.display(),
            parent.display()
        );
    }
    if !crate::cmd::writable_by_this_user(parent) {
        bail!("--plot {}: the directory {} is not writable; name another", path.display(), parent.display());
    }
    Ok(())
}

/// The sweep as curves: one per column, one point per row where the column has runs. Each error bar is the `±` the
/// table beside it prints, lkp's `%stddev` (the population standard deviation) of the mean: the sample standard
/// deviation drew bars the table did not give, ±36% under "1469 ± 25%" for two runs.
pub fn sweep_chart(sweep: &Sweep, rows: &[SweepRow]) -> Chart {
    let curves = sweep
        .columns
        .iter()
        .enumerate()
        .map(|(k, label)| SweepCurve {
            label: label.clone(),
            points: rows
                .iter()
                .map(|row| {
                    row.sides
                        .get(k)
                        .filter(|side| side.present && side.n > 0)
                        .map(|side| MeanStd {
                            mean: side.mean,
                            stddev: side.rel_stddev_pct.map_or(0.0, |pct| pct * side.mean.abs() / 100.0),
                        })
                })
                .collect(),
        })
        .collect();
    Chart::Sweep(SweepPlot {
        metric: sweep.metric.clone(),
        param: sweep.param.clone(),
        values: rows.iter().map(|r| r.value.clone()).collect(),
        curves,
    })
}

/// Sweeps of one metric as one chart: one curve per column and combination of the other differing params
/// (labelled with their values when there are several), over the values of all of them in the sweeps' order.
fn sweeps_chart(sweeps: &[&Sweep], rows: &[&Vec<SweepRow>], order: &[&str]) -> Chart {
    if let ([sweep], [rows]) = (sweeps, rows) {
        return sweep_chart(sweep, rows);
    }
    let values: Vec<String> = order
        .iter()
        .filter(|v| rows.iter().flat_map(|r| r.iter()).any(|row| row.value == **v))
        .map(|v| v.to_string())
        .collect();
    let mut curves = Vec::new();
    for (sweep, rows) in sweeps.iter().zip(rows) {
        let fixed: Vec<String> = sweep.group.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let chart = sweep_chart(sweep, rows);
        let Chart::Sweep(plot) = chart else { continue };
        for curve in plot.curves {
            let points = values
                .iter()
                .map(|v| plot.values.iter().position(|x| x == v).and_then(|i| curve.points.get(i).copied().flatten()))
                .collect();
            curves.push(SweepCurve { label: format!("{} {}", curve.label, fixed.join(" ")), points });
        }
    }
    let first = sweeps.first();
    Chart::Sweep(SweepPlot {
        metric: first.map(|s| s.metric.clone()).unwrap_or_default(),
        param: first.map(|s| s.param.clone()).unwrap_or_default(),
        values,
        curves,
    })
}

/// Writes the sweeps' chart to `path`, or with several metrics one chart per metric to `FILE-<metric>.svg`. `values`
/// is every value of the swept param in the sweeps' order, which orders the x axis of curves that lack some.
pub fn write_sweeps(path: &Path, sweeps: &[Sweep], rows: &[Vec<SweepRow>], values: &[&str]) -> Result<()> {
    let mut metrics: Vec<&str> = Vec::new();
    for s in sweeps {
        if !metrics.contains(&s.metric.as_str()) {
            metrics.push(&s.metric);
        }
    }
    let mut written = Vec::new();
    for metric in &metrics {
        let (of_metric, their_rows): (Vec<&Sweep>, Vec<&Vec<SweepRow>>) =
            sweeps.iter().zip(rows).filter(|(s, _)| s.metric == *metric).unzip();
        let file = if metrics.len() == 1 { path.to_path_buf() } else { culprit_plot::numbered_path(path, metric) };
        let param = of_metric.first().map(|s| s.param.as_str()).unwrap_or("");
        culprit_plot::write_file(&sweeps_chart(&of_metric, &their_rows, values), &file)
            .with_context(|| format!("plotting {metric} by {param}"))?;
        written.push(file);
    }
    for file in written {
        crate::note!("culprit: wrote {}", file.display());
    }
    Ok(())
}

/// What a chart shows, for messages: `METRIC of JOB on MACHINE`, leaving out what a plain series does not have.
fn chart_description(series: &Series) -> String {
    let mut text = series.metric.clone();
    if !series.job_name.is_empty() {
        text.push_str(&format!(" of {}", series.job_name));
    }
    if !series.machine.is_empty() {
        text.push_str(&format!(" on {}", series.machine));
    }
    text
}

/// The fitted segments: the stretches between the segmentation's change points (significant or not), each at the
/// robust mean the analysis computed for it; without change points, one segment at the mean of every run.
pub fn segments(points: &[Vec<f64>], analysis: &Analysis) -> Vec<Segment> {
    let n = points.len();
    if n == 0 {
        return Vec::new();
    }
    let mut changes: Vec<_> = analysis.change_points.iter().collect();
    changes.sort_by_key(|c| c.index);
    let mut out = Vec::new();
    let mut first = 0;
    for c in &changes {
        if c.before_index >= first && c.before_index < n {
            out.push(Segment { first, last: c.before_index, level: c.mean_before });
        }
        first = c.index;
    }
    match changes.last() {
        Some(last) if first < n => out.push(Segment { first, last: n - 1, level: last.mean_after }),
        Some(_) => {}
        None => {
            let finite: Vec<f64> = points.iter().flatten().copied().filter(|v| v.is_finite()).collect();
            if !finite.is_empty() {
                out.push(Segment { first: 0, last: n - 1, level: finite.iter().sum::<f64>() / finite.len() as f64 });
            }
        }
    }
    out
}

/// One series' chart: every run, the fitted segments, and the change points that are changes.
pub fn track_chart(series: &Series, analysis: &Analysis) -> Chart {
    let label = |i: usize| series.labels.get(i).map(|l| prose_short(l).to_string()).unwrap_or_default();
    let changes = analysis
        .change_points
        .iter()
        .filter(|c| c.verdict.is_change())
        .map(|c| ChangeMark {
            before_index: c.before_index,
            index: c.index,
            interval: Some((c.before_index_low, c.index_high)),
            kind: match c.verdict {
                Verdict::Regression => ChangeKind::Regression,
                Verdict::Improvement => ChangeKind::Improvement,
                _ => ChangeKind::Change,
            },
            text: format!(
                "{} between {} and {}",
                c.change_pct.map_or_else(|| format!("{:+.6}", c.change), |p| format!("{p:+.1}%")),
                label(c.before_index),
                label(c.index)
            ),
        })
        .collect();
    let subtitle = match (series.job_name.is_empty(), series.machine.is_empty()) {
        (false, false) => format!("{} on {}", series.job_name, series.machine),
        (false, true) => series.job_name.clone(),
        _ => String::new(),
    };
    // A stored series without a place on a branch is of labels (ordered by their first run), as `track` prints it;
    // a series of no machine is `--series FILE`'s, whose points are in the file's order.
    let points = match (series.positions.iter().any(Option::is_some), series.machine.is_empty()) {
        (true, _) => "tested commits, oldest first",
        (false, true) => "points, in the order of the file",
        (false, false) => "labels, in the order of their first run",
    };
    Chart::Track(TrackPlot {
        metric: series.metric.clone(),
        subtitle,
        labels: series.labels.clone(),
        points: points.to_string(),
        runs: series.points.clone(),
        segments: segments(&series.points, analysis),
        changes,
    })
}

/// Most charts `track --plot` writes. A broad `--metric` (or none) matches every monitor and perf-profile metric of a
/// job, and one file per series made hundreds of files, nearly all of flat lines; beyond this many series, only those
/// with a change point are drawn, the most significant first.
pub const MAX_TRACK_CHARTS: usize = 20;

/// The series in the order their charts are worth drawing: first those with a change point that is a regression or
/// an improvement of the benchmark's own metrics ([`MetricClass::Program`], not Culprit's `culprit.` bookkeeping),
/// then those of other metrics (monitors, profiles) with such a verdict, then those whose change points are only
/// "changed" (no known direction), each group the most significant (smallest q, else p) first; then the flat ones
/// in their own order. Host counters (meminfo, proc-vmstat) drift over wall-clock time and get smaller q than a
/// benchmark's noisier regression, so q alone filled the 20 charts with them and left out the regression the
/// robot is about; [`culprit_core::report::headline_metric`] ranks the program's verdicted metrics first for the same
/// reason. The verdicts are the analysis's; this only orders by them.
pub fn chart_order(analyses: &[(String, Analysis)]) -> Vec<usize> {
    // (group, significance): smaller is worth drawing sooner; `None` for a series without a change point.
    let rank = |k: usize| -> Option<(u8, f64)> {
        let (metric, analysis) = &analyses[k];
        let changes = analysis.change_points.iter().filter(|c| c.verdict.is_change());
        let q = changes.clone().map(|c| c.q.unwrap_or(c.p)).reduce(f64::min)?;
        let directed = changes.clone().any(|c| matches!(c.verdict, Verdict::Regression | Verdict::Improvement));
        let program = MetricClass::of(metric).is_benchmarks_own(metric);
        let group = match (directed, program) {
            (true, true) => 0,
            (true, false) => 1,
            (false, _) => 2,
        };
        Some((group, q))
    };
    let mut order: Vec<(usize, Option<(u8, f64)>)> = (0..analyses.len()).map(|k| (k, rank(k))).collect();
    // A stable sort keeps the history's order among equals, flat series among themselves above all.
    order.sort_by(|(_, a), (_, b)| match (a, b) {
        (Some((ga, qa)), Some((gb, qb))) => ga.cmp(gb).then(qa.total_cmp(qb)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    order.into_iter().map(|(k, _)| k).collect()
}

/// The series `track --plot` draws, in the history's order, and when some are left out the sentence that says how
/// many, why, and how to draw them: every series when there are at most [`MAX_TRACK_CHARTS`], else the most
/// significant of those with a change point, at most that many.
fn charted(analyses: &[(String, Analysis)]) -> (Vec<usize>, Option<String>) {
    let total = analyses.len();
    if total <= MAX_TRACK_CHARTS {
        return ((0..total).collect(), None);
    }
    let changed = |k: &usize| analyses[*k].1.change_points.iter().any(|c| c.verdict.is_change());
    let with_change = (0..total).filter(changed).count();
    let mut drawn: Vec<usize> = chart_order(analyses).into_iter().filter(changed).take(MAX_TRACK_CHARTS).collect();
    drawn.sort_unstable();
    // Only series with a change point were ever candidates; the flat ones are not "left out", and counting them
    // made a history of 333 series, 45 with a change point, say "313 left out" after drawing 20.
    let left_out = with_change - drawn.len();
    let why = if drawn.is_empty() {
        format!("drew no chart: none of the {total} series has a change point")
    } else if drawn.len() < with_change {
        format!(
            "drew the {} series whose change points matter most, of {with_change} with one among {total} series",
            drawn.len()
        )
    } else {
        format!("drew only the {} of {total} series with a change point", drawn.len())
    };
    let flat = total - with_change;
    let rest = match (left_out, flat) {
        (0, 0) => String::new(),
        (0, flat) => format!("; the {flat} without one are not drawn: a narrower --metric REGEX draws them"),
        (left_out, 0) => format!("; {left_out} with a change point left out: a narrower --metric REGEX draws them"),
        (left_out, flat) => format!(
            "; {left_out} with a change point left out (and {flat} without one not drawn): a narrower --metric \
             REGEX draws them"
        ),
    };
    let note = format!(
        "{why} (--plot draws every series only when there are at most {MAX_TRACK_CHARTS}, and of more, regressions \
         and improvements of the benchmark's own metrics first){rest}"
    );
    (drawn, Some(note))
}

/// Writes one chart per series: to `path` when there is one, else to `path`-<metric> (with a number added when a
/// metric appears in several series); of more than [`MAX_TRACK_CHARTS`] series, only those [`charted`] picks, saying
/// on standard error how many were left out. Returns the files written.
pub fn write_track(path: &Path, series: &[Series], analyses: &[(String, Analysis)]) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    if series.is_empty() {
        eprintln!("culprit: no series to plot");
        return Ok(written);
    }
    let (drawn, left_out) = charted(analyses);
    for k in drawn {
        let (Some(s), Some((_, analysis))) = (series.get(k), analyses.get(k)) else { continue };
        // A file's name depends on the whole history, not on which series are drawn, so that a series keeps its
        // file from one run to the next.
        let target = if series.len() == 1 {
            path.to_path_buf()
        } else if series.iter().filter(|other| other.metric == s.metric).count() > 1 {
            culprit_plot::numbered_path(path, &format!("{}-{k}", s.metric))
        } else {
            culprit_plot::numbered_path(path, &s.metric)
        };
        culprit_plot::write_file(&track_chart(s, analysis), &target)
            .with_context(|| format!("plotting {}", chart_description(s)))?;
        written.push(target);
    }
    match written.as_slice() {
        [] => {}
        [one] => eprintln!("culprit: wrote {}", one.display()),
        many => eprintln!(
            "culprit: wrote {} charts, {} ...",
            many.len(),
            many.first().map(|p| p.display().to_string()).unwrap_or_default()
        ),
    }
    if let Some(note) = left_out {
        eprintln!("culprit: {note}");
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use culprit_core::changepoint::{analyze, decide, TrackOptions};
    use culprit_core::compare::SideStats;

    #[test]
    fn a_sweep_s_error_bars_are_the_stddev_its_table_prints() {
        // Two runs of 1099 and 1839 transactions/s: the table prints 1469 ± 25% (lkp's population stddev, 370); the
        // chart drew the sample stddev (523), a bar of ±36%.
        let side = SideStats {
            n: 2,
            mean: 1469.0,
            stddev: Some(523.26),
            rel_stddev_pct: Some(25.19),
            min: 1099.0,
            max: 1839.0,
            fails: None,
            present: true,
        };
        let sweep = Sweep {
            param: "nr_threads".into(),
            metric: "oltp.transactions/s".into(),
            group: Vec::new(),
            columns: vec!["rc25".into()],
            points: Vec::new(),
        };
        let rows = [SweepRow { value: "1".into(), sides: vec![side], changes: Vec::new() }];
        let Chart::Sweep(plot) = sweep_chart(&sweep, &rows) else { panic!("not a sweep chart") };
        let point = plot.curves[0].points[0].unwrap();
        assert!((point.stddev - 1469.0 * 0.2519).abs() < 1e-6, "{point:?}");
    }

    /// 20 commits of 3 runs with 2% Gaussian noise, stepping from 100 to 140 at point 12.
    fn step_series() -> Vec<Vec<f64>> {
        let mut rng = culprit_core::rng::Rng::new(7);
        (0..20)
            .map(|i| {
                let level = if i < 12 { 100.0 } else { 140.0 };
                (0..3).map(|_| level + 2.0 * rng.normal()).collect()
            })
            .collect()
    }

    #[test]
    fn of_many_series_only_the_most_significant_with_a_change_point_are_charted() {
        // 25 series stepping by 10 to 130 at point 12 and 5 flat ones, in one history: over the cap, the flat ones
        // are never drawn, nor are the change points less significant than every one drawn.
        let options = TrackOptions::default();
        let mut rng = culprit_core::rng::Rng::new(11);
        let mut all: Vec<(String, Analysis)> = (0..30)
            .map(|k| {
                let step = if k < 25 { 10.0 + 5.0 * k as f64 } else { 0.0 };
                let points: Vec<Vec<f64>> = (0..20)
                    .map(|i| (0..3).map(|_| if i < 12 { 100.0 } else { 100.0 + step } + 2.0 * rng.normal()).collect())
                    .collect();
                (format!("m{k:02}"), analyze(&points, &options).unwrap())
            })
            .collect();
        decide(&mut all, &options);
        let changed = |k: usize| all[k].1.change_points.iter().any(|c| c.verdict.is_change());
        let q = |k: usize| {
            let changes = all[k].1.change_points.iter().filter(|c| c.verdict.is_change());
            changes.map(|c| c.q.unwrap_or(c.p)).fold(f64::INFINITY, f64::min)
        };
        assert_eq!((0..30).filter(|&k| changed(k)).collect::<Vec<_>>(), (0..25).collect::<Vec<_>>());
        let (drawn, note) = charted(&all);
        assert_eq!(drawn.len(), MAX_TRACK_CHARTS);
        assert!(drawn.windows(2).all(|w| w[0] < w[1]), "in the history's order: {drawn:?}");
        let least_drawn = drawn.iter().map(|&k| q(k)).fold(0.0, f64::max);
        for k in (0..30).filter(|k| !drawn.contains(k)) {
            assert!(!changed(k) || q(k) >= least_drawn, "m{k:02} (q={}) left out, q={least_drawn} drawn", q(k));
        }
        let note = note.expect("a note of what was left out");
        assert!(note.starts_with("drew the 20 series whose change points matter most, of 25"), "{note}");
        // Of the 25 with a change point, 5 are left out; the 5 flat ones were never candidates.
        assert!(
            note.ends_with("; 5 with a change point left out (and 5 without one not drawn): a narrower --metric REGEX \
                            draws them"),
            "{note}"
        );
        // At most the cap, every series is drawn and nothing is said.
        all.truncate(MAX_TRACK_CHARTS);
        assert_eq!(charted(&all), ((0..MAX_TRACK_CHARTS).collect(), None));
    }

    #[test]
    fn the_benchmark_s_regression_is_drawn_before_drifting_host_counters_of_smaller_q() {
        // QA 45b: 25 meminfo counters stepping far out of their noise (tiny q) and a command's wall time +20% at 8%
        // noise (a regression of larger q). By q alone the 20 charts were all meminfo's and the regression was
        // left out; the benchmark's own verdicted metric comes first now.
        let options = TrackOptions::default();
        let mut rng = culprit_core::rng::Rng::new(5);
        let mut step = |base: f64, to: f64, noise: f64| -> Vec<Vec<f64>> {
            (0..20)
                .map(|i| (0..3).map(|_| if i < 12 { base } else { to } * (1.0 + noise * rng.normal())).collect())
                .collect()
        };
        let mut all: Vec<(String, Analysis)> = Vec::new();
        for k in 0..25 {
            let points = step(1000.0 + k as f64, 2000.0 + k as f64, 0.001);
            all.push((format!("meminfo.Counter{k:02}"), analyze(&points, &options).unwrap()));
        }
        let elapsed = step(10.0, 12.0, 0.08);
        all.push(("command.elapsed_time".to_string(), analyze(&elapsed, &options).unwrap()));
        let flat: Vec<Vec<f64>> = (0..20).map(|_| vec![5.0, 5.0, 5.0]).collect();
        all.push(("meminfo.Flat".to_string(), analyze(&flat, &options).unwrap()));
        decide(&mut all, &options);
        let q = |k: usize| {
            let changes = all[k].1.change_points.iter().filter(|c| c.verdict.is_change());
            changes.map(|c| c.q.unwrap_or(c.p)).fold(f64::INFINITY, f64::min)
        };
        let elapsed_k = 25;
        let verdicts: Vec<Verdict> = all[elapsed_k].1.change_points.iter().map(|c| c.verdict).collect();
        assert!(verdicts.contains(&Verdict::Regression), "{verdicts:?}");
        // The premise: q alone would not have drawn it, every counter's change is more significant.
        assert!((0..25).all(|k| q(k) < q(elapsed_k)), "q {} of the regression", q(elapsed_k));
        assert_eq!(chart_order(&all)[0], elapsed_k);
        let (drawn, note) = charted(&all);
        assert_eq!(drawn.len(), MAX_TRACK_CHARTS);
        assert!(drawn.contains(&elapsed_k), "{drawn:?}");
        // 26 series with a change point, 20 drawn: 6 left out, and the flat one is not counted among them.
        let note = note.expect("a note of what was left out");
        let said = "drew the 20 series whose change points matter most, of 26 with one among 27";
        assert!(note.starts_with(said), "{note}");
        assert!(note.contains("; 6 with a change point left out (and 1 without one not drawn)"), "{note}");
    }

    #[test]
    fn a_plot_name_is_checked_before_the_work() {
        let err = format!("{:#}", check_path(Path::new("x.jpg")).unwrap_err());
        assert!(err.contains("x.jpg") && err.contains(".svg or .png"), "{err}");
        let err = format!("{:#}", check_path(Path::new("/nonexistent-culprit-dir/x.svg")).unwrap_err());
        assert!(err.contains("/nonexistent-culprit-dir does not exist"), "{err}");
        assert!(check_path(Path::new("x.svg")).is_ok());
        assert!(check_path(&std::env::temp_dir().join("x.png")).is_ok());
        // A directory without write permission, which root may write all the same (access(2) says so).
        let dir = std::env::temp_dir().join(format!("culprit-plot-check-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o555)).unwrap();
        let result = check_path(&dir.join("x.svg"));
        if crate::cmd::writable_by_this_user(&dir) {
            assert!(result.is_ok(), "{result:?}");
        } else {
            let err = format!("{:#}", result.unwrap_err());
            assert!(err.ends_with(&format!("{} is not writable; name another", dir.display())), "{err}");
        }
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn segments_follow_the_change_points_and_cover_every_point() {
        let points = step_series();
        let options = TrackOptions::default();
        let mut all = vec![("command.elapsed_time".to_string(), analyze(&points, &options).unwrap())];
        decide(&mut all, &options);
        let segs = segments(&points, &all[0].1);
        assert_eq!(segs.len(), 2, "{segs:?}");
        assert_eq!((segs[0].first, segs[0].last), (0, 11));
        assert_eq!((segs[1].first, segs[1].last), (12, 19));
        assert!((segs[0].level - 100.0).abs() < 2.0 && (segs[1].level - 140.0).abs() < 2.0, "{segs:?}");
        let series = Series {
            job_id: "id".into(),
            job_name: "bench".into(),
            machine: "box".into(),
            build: None,
            metric: "command.elapsed_time".into(),
            labels: (0..20).map(|i| i.to_string()).collect(),
            positions: vec![None; 20],
            points: points.clone(),
        };
        let Chart::Track(chart) = track_chart(&series, &all[0].1) else { panic!("not a track chart") };
        assert_eq!(chart.changes.len(), 1);
        assert_eq!(chart.changes[0].kind, ChangeKind::Regression);
        assert_eq!((chart.changes[0].before_index, chart.changes[0].index), (11, 12));
        assert!(chart.changes[0].text.ends_with("% between 11 and 12"), "{}", chart.changes[0].text);
        assert!(
            chart.changes[0].text.starts_with("+3") || chart.changes[0].text.starts_with("+4"),
            "{}",
            chart.changes[0].text
        );
        assert_eq!(chart.subtitle, "bench on box");
    }

    #[test]
    fn a_flat_series_is_one_segment_at_its_mean() {
        let points = vec![vec![1.0, 3.0], vec![2.0], vec![]];
        let analysis = Analysis {
            change_points: Vec::new(),
            points: 3,
            skipped_points: 1,
            runs: 3,
            dropped_values: 0,
            scale: 1.0,
            note: None,
        };
        assert_eq!(segments(&points, &analysis), vec![Segment { first: 0, last: 2, level: 2.0 }]);
        assert!(segments(&[], &analysis).is_empty());
    }
}
