//! Tables whose perf rows come from other runs than the rest: the profiling runs `culprit bisect --profile` takes
//! of a culprit and its parent with perf-profile and perf-stat attached.
//!
//! Perf makes a benchmark several times slower, so a profiling run's benchmark numbers (throughput, elapsed time)
//! and its other monitors are not comparable with a plain run's: mixed into one column they move its mean and
//! inflate its spread. They are what the profile rows are for, though. So a table is compared from two sets of runs
//! kept apart: every row from the plain runs, except the rows of a profiling monitor that no plain run carries,
//! which come from the profiling runs alone. A job that monitors perf-stat itself keeps its own perf-stat rows,
//! measured on every run the bisect took, and the rows of one monitor never mix the two kinds of runs.
//!
//! Each set is decided as a family of its own (false discoveries are controlled among the rows of one set of
//! runs); every verdict is still [`super::verdict`]'s.

use super::{compare, metric_of_key, Column, CompareError, CompareOptions, CompareResult, Comparison};

/// The monitors a profiling run adds to the job's: their metrics are named `<monitor>.<...>`.
pub const PROFILING_MONITORS: &[&str] = &["perf-profile", "perf-stat"];

/// The profiling monitor whose metric this is (`perf-stat.i.cpu-clock` is perf-stat's), if any.
pub fn profiling_monitor(metric: &str) -> Option<&'static str> {
    let metric = metric_of_key(metric);
    PROFILING_MONITORS
        .iter()
        .copied()
        .find(|monitor| metric.strip_prefix(monitor).is_some_and(|rest| rest.starts_with('.')))
}

/// Whether some column of `comparison` has a metric of the profiling `monitor`.
fn carried_by(comparison: &Comparison, monitor: &str) -> bool {
    let columns = comparison.columns.iter();
    columns.flat_map(|c| c.metrics.keys()).any(|metric| profiling_monitor(metric) == Some(monitor))
}

/// The profiling monitors whose rows `profiled` gives a table of `plain`: those with a metric in some column of
/// `profiled` and in no column of `plain`, in [`PROFILING_MONITORS`] order.
pub fn supplied_monitors(plain: &Comparison, profiled: &Comparison) -> Vec<&'static str> {
    PROFILING_MONITORS
        .iter()
        .copied()
        .filter(|monitor| carried_by(profiled, monitor) && !carried_by(plain, monitor))
        .collect()
}

/// The profiling monitors of which neither `profiled` nor `plain` has a metric in any column: perf recorded nothing
/// for them in the profiling runs (a run shorter than perf's interval, perf not permitted; each run's stderr says
/// which), so a table of the two has none of their rows. In [`PROFILING_MONITORS`] order.
pub fn silent_monitors(plain: &Comparison, profiled: &Comparison) -> Vec<&'static str> {
    PROFILING_MONITORS
        .iter()
        .copied()
        .filter(|monitor| !carried_by(profiled, monitor) && !carried_by(plain, monitor))
        .collect()
}

/// `profiled` narrowed to the rows it gives a table of `plain` (see [`supplied_monitors`]), or `None` when it gives
/// none. Its failed runs are left out: they are profiling runs that failed, not failures of the benchmark the
/// table's `culprit.failed_runs` row counts, and a column's runs are those that recorded perf's rows.
pub fn profiling_rows(plain: &Comparison, profiled: &Comparison) -> Option<Comparison> {
    let supplied = supplied_monitors(plain, profiled);
    if supplied.is_empty() {
        return None;
    }
    let columns = profiled
        .columns
        .iter()
        .map(|column| Column {
            metrics: column
                .metrics
                .iter()
                .filter(|(metric, _)| profiling_monitor(metric).is_some_and(|m| supplied.contains(&m)))
                .map(|(metric, values)| (metric.clone(), values.clone()))
                .collect(),
            failed_runs: 0,
            ..column.clone()
        })
        .collect();
    Some(Comparison { columns, ..profiled.clone() })
}

/// Adds the rows of `extra` (a comparison of the same columns from other runs) to `result`, in the table's order
/// (program metrics, monitors, perf-profile, then by name, as [`compare`] orders them). The columns' run counts
/// stay `result`'s.
pub fn add_rows(result: &mut CompareResult, extra: CompareResult) {
    result.rows.extend(extra.rows);
    result.rows.sort_by(|a, b| (a.class, &a.metric).cmp(&(b.class, &b.metric)));
}

/// Compares the plain runs' `plain`, with the rows [`profiling_rows`] takes from the profiling runs' `profiled`
/// (the same columns) when there are any.
pub fn compare_profiled(
    plain: &Comparison,
    profiled: Option<&Comparison>,
    options: &CompareOptions,
) -> Result<CompareResult, CompareError> {
    let mut result = compare(plain, options)?;
    if let Some(rows) = profiled.and_then(|profiled| profiling_rows(plain, profiled)) {
        add_rows(&mut result, compare(&rows, options)?);
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MetricClass;

    fn column(label: &str, metrics: &[(&str, Vec<f64>)]) -> Column {
        metrics.iter().fold(Column::new(label), |c, (name, values)| c.with_metric(*name, values.clone()))
    }

    fn comparison(columns: Vec<Column>) -> Comparison {
        Comparison { axes: Vec::new(), compare_axis: "commit".into(), columns }
    }

    #[test]
    fn only_the_prefixes_of_the_profiling_monitors_name_them() {
        assert_eq!(profiling_monitor("perf-profile.self.cycles-pp.memcpy"), Some("perf-profile"));
        assert_eq!(profiling_monitor("perf-stat.i.cpu-clock"), Some("perf-stat"));
        assert_eq!(profiling_monitor("perf-statistics.x"), None);
        assert_eq!(profiling_monitor("perf-stat"), None);
        assert_eq!(profiling_monitor("fio.write_iops"), None);
    }

    /// The plain runs hold 1000 and 800 ops; the profiling runs read 100,000 more (perf's overhead, made plain) and
    /// carry perf-profile and perf-stat. The table's ops row reads the plain runs alone, with their run counts; the
    /// perf rows read the profiling runs, perf-profile's zero-filled only up to the profiling runs' count.
    #[test]
    fn the_perf_rows_come_from_the_profiling_runs_and_every_other_row_from_the_plain_ones() {
        let plain = comparison(vec![
            column("base", &[("bench.ops", vec![1000.0, 1002.0, 998.0, 1001.0, 999.0])]),
            column("bad", &[("bench.ops", vec![800.0, 802.0, 798.0, 801.0, 799.0, 800.0])]),
        ]);
        let profiling = |ops: f64, memcpy: Vec<f64>| {
            column(
                "x",
                &[
                    ("bench.ops", vec![ops + 100_000.0; 3]),
                    ("perf-stat.i.cpu-clock", vec![1990.0, 1995.0, 2000.0]),
                    ("perf-profile.self.cpu-clock.memcpy", memcpy),
                    // A symbol in every profiling run: how the runs in which perf ran are counted.
                    ("perf-profile.children.cpu-clock.main", vec![90.0; 3]),
                ],
            )
        };
        let mut profiled =
            comparison(vec![profiling(1000.0, vec![10.0, 10.2, 9.8]), profiling(800.0, vec![30.0, 31.0])]);
        profiled.columns[1].failed_runs = 1;
        let result = compare_profiled(&plain, Some(&profiled), &CompareOptions::default()).unwrap();
        let row = |metric: &str| result.rows.iter().find(|r| r.metric == metric).unwrap();
        let ops = row("bench.ops");
        assert_eq!((ops.sides[0].n, ops.sides[0].mean), (5, 1000.0));
        assert_eq!((ops.sides[1].n, ops.sides[1].mean), (6, 800.0));
        assert!(ops.changes[0].verdict.is_change());
        let memcpy = row("perf-profile.self.cpu-clock.memcpy");
        // Two of the bad side's three profiling runs have the symbol; the third had it at 0 (below perf's cutoff).
        assert_eq!((memcpy.sides[1].n, memcpy.sides[1].mean), (3, 61.0 / 3.0));
        assert_eq!(row("perf-stat.i.cpu-clock").sides[0].n, 3);
        assert!(result.rows.iter().all(|r| r.metric != crate::compare::FAILED_RUNS_METRIC));
        assert_eq!(result.columns.iter().map(|c| c.ok_runs).collect::<Vec<_>>(), vec![5, 6]);
        let order: Vec<(MetricClass, &str)> = result.rows.iter().map(|r| (r.class, r.metric.as_str())).collect();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(order, sorted, "program rows, then monitors, then perf-profile");
        assert_eq!(result.rows.len(), 4);
    }

    #[test]
    fn a_monitor_the_plain_runs_carry_keeps_their_rows() {
        let plain = comparison(vec![
            column("base", &[("bench.ops", vec![1.0, 2.0, 3.0]), ("perf-stat.i.cpu-clock", vec![5.0, 5.0, 5.0])]),
            column("bad", &[("bench.ops", vec![1.0, 2.0, 3.0]), ("perf-stat.i.cpu-clock", vec![5.0, 5.0, 5.0])]),
        ]);
        let perf = [("perf-stat.i.cpu-clock", vec![9.0; 3]), ("perf-profile.self.cpu-clock.f", vec![1.0; 3])];
        let profiled = comparison(vec![column("base", &perf), column("bad", &perf)]);
        assert_eq!(supplied_monitors(&plain, &profiled), vec!["perf-profile"]);
        let result = compare_profiled(&plain, Some(&profiled), &CompareOptions::default()).unwrap();
        let cpu = result.rows.iter().find(|r| r.metric == "perf-stat.i.cpu-clock").unwrap();
        assert_eq!(cpu.sides[0].mean, 5.0);
        assert_eq!(result.rows.iter().filter(|r| r.metric == "perf-stat.i.cpu-clock").count(), 1);
        // Profiling runs that add nothing the plain runs lack add no row.
        let only_stat = comparison(vec![column("base", &perf[..1]), column("bad", &perf[..1])]);
        assert!(profiling_rows(&plain, &only_stat).is_none());
        assert_eq!(compare_profiled(&plain, Some(&only_stat), &CompareOptions::default()).unwrap(), {
            compare(&plain, &CompareOptions::default()).unwrap()
        });
    }
}
