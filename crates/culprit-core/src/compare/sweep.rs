//! The scaling-sweep view (`culprit compare --by PARAM`): one row per value of a param (threads, clients, block
//! size), one column per commit or label, with the mean, %stddev and the change against the first column, as in
//! seed 004's sysbench-by-threads tables.
//!
//! Each cell's verdict comes from the comparison engine: the whole sweep is one comparison whose metrics are the
//! sweep points, so false-discovery control covers all points of the curve together.

use super::render::{format_change, format_mean, format_stddev};
use super::{compare, Change, Column, CompareError, CompareOptions, Comparison, SideStats};
use std::fmt::Write as _;

/// The samples of one param value: one sample vector per column (same order as [`Sweep::columns`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPoint {
    /// The param value as the job spells it, e.g. `16` or `4k`.
    pub value: String,
    pub samples: Vec<Vec<f64>>,
}

/// A sweep of one metric over one param.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    pub param: String,
    pub metric: String,
    /// Column labels, base first.
    pub columns: Vec<String>,
    pub points: Vec<SweepPoint>,
}

/// One rendered row: a param value and, per column, its statistics; per non-base column the change.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SweepRow {
    pub value: String,
    pub sides: Vec<SideStats>,
    pub changes: Vec<Change>,
}

/// Orders param values numerically when they all parse as numbers (1, 2, 4, ..., 256), otherwise keeps the
/// input order (values such as `4k`, `1m` are left as the caller ordered them).
fn ordered_points(points: &[SweepPoint]) -> Vec<&SweepPoint> {
    let mut refs: Vec<&SweepPoint> = points.iter().collect();
    if refs.iter().all(|p| p.value.trim().parse::<f64>().is_ok()) {
        refs.sort_by(|a, b| {
            let x = a.value.trim().parse::<f64>().unwrap_or(0.0);
            let y = b.value.trim().parse::<f64>().unwrap_or(0.0);
            x.total_cmp(&y)
        });
    }
    refs
}

/// Compares every sweep point across the columns. Errors as [`compare`] does (e.g. fewer than two columns).
pub fn sweep_rows(sweep: &Sweep, options: &CompareOptions) -> Result<Vec<SweepRow>, CompareError> {
    let points = ordered_points(&sweep.points);
    // Metric names that sort in point order, so the engine's rows come back in the same order.
    let key = |i: usize| format!("{}@{:08}", sweep.metric, i);
    let mut columns: Vec<Column> = sweep.columns.iter().map(Column::new).collect();
    for (i, point) in points.iter().enumerate() {
        for (c, column) in columns.iter_mut().enumerate() {
            if let Some(samples) = point.samples.get(c) {
                column.metrics.insert(key(i), samples.clone());
            }
        }
    }
    let result = compare(&Comparison::new(columns), options)?;
    let mut rows = Vec::with_capacity(points.len());
    for (i, point) in points.iter().enumerate() {
        let name = key(i);
        if let Some(row) = result.rows.iter().find(|r| r.metric == name) {
            rows.push(SweepRow { value: point.value.clone(), sides: row.sides.clone(), changes: row.changes.clone() });
        }
    }
    Ok(rows)
}

/// The sweep as text: a title line, a header with the param name and the column labels, one line per value.
/// Cells use the ncompare fields (mean, ` ±NN%`, `%+.1f%%` change) so the two views read alike.
pub fn render_sweep(sweep: &Sweep, rows: &[SweepRow]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} by {}", sweep.metric, sweep.param);
    let value_width = rows.iter().map(|r| r.value.chars().count()).chain([sweep.param.chars().count()]).max().unwrap_or(1);
    let _ = write!(out, "{:>value_width$}", sweep.param);
    for (i, label) in sweep.columns.iter().enumerate() {
        let width = if i == 0 { 16 } else { 27 };
        let short: String = label.chars().take(width).collect();
        let _ = write!(out, " {short:>width$}");
    }
    out.push('\n');
    for row in rows {
        let _ = write!(out, "{:>value_width$} ", row.value);
        let base_mean = row.sides.first().map(|s| s.mean).unwrap_or(0.0);
        for (i, side) in row.sides.iter().enumerate() {
            if i > 0 {
                if let Some(c) = row.changes.get(i - 1) {
                    out.push_str(&format_change(c, base_mean, side.mean));
                }
            }
            out.push_str(&format_mean(side.mean));
            out.push_str(&format_stddev(side));
        }
        let verdicts: Vec<&str> = row.changes.iter().map(|c| c.verdict.word()).filter(|w| *w != "unchanged").collect();
        if !verdicts.is_empty() {
            let _ = write!(out, "  {}", verdicts.join(","));
        }
        out.push('\n');
    }
    out
}
