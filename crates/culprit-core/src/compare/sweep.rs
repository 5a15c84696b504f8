//! The scaling-sweep view (`culprit compare --by PARAM`): one row per value of a param (threads, clients, block
//! size), one column per commit or label, with the mean, %stddev and the change against the first column, as in
//! seed 004's sysbench-by-threads tables.
//!
//! Each cell's verdict comes from the comparison engine: the whole sweep is one comparison whose metrics are the
//! sweep points, so false-discovery control covers all points of the curve together. Several sweeps (one per metric,
//! and one per combination of the other params that differ between the jobs, which a sweep holds fixed rather than
//! pooling different configurations into one point) are compared together by [`sweeps_rows`] for the same reason.

use super::printf::int_trunc;
use super::render::{
    csv_field, format_change, format_mean, format_side_mean, format_stddev, infinite_change, md_escape, REL_WIDTH,
};
use super::{compare, Change, Column, CompareError, CompareOptions, Comparison, SideStats, Verdict, KEY_SEPARATOR};
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
    /// The other params that differ between the jobs, with the values this sweep holds them at (empty when the
    /// swept param is the only one that differs).
    pub group: Vec<(String, String)>,
    /// Column labels, base first.
    pub columns: Vec<String>,
    pub points: Vec<SweepPoint>,
}

impl Sweep {
    /// Whether every value of the sweep, at every point and in every column, is 0: a curve with nothing on it, such
    /// as fio's read bandwidth in a randwrite job, which fio reports (as 0) for the direction the job never used.
    /// A point without samples counts for nothing either way. A single 0 among other values is a measurement (a
    /// throughput that fell to 0 at one thread count) and keeps its sweep.
    pub fn reads_zero_everywhere(&self) -> bool {
        self.points.iter().flat_map(|p| p.samples.iter().flatten()).all(|x| *x == 0.0)
    }
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

/// Compares every sweep point across the columns. Errors as [`compare`] does (e.g. no column); a sweep of one
/// column has its points' statistics and no changes.
pub fn sweep_rows(sweep: &Sweep, options: &CompareOptions) -> Result<Vec<SweepRow>, CompareError> {
    Ok(sweeps_rows(std::slice::from_ref(sweep), options)?.pop().unwrap_or_default())
}

/// Compares the points of several sweeps over the same columns as one comparison, so that false-discovery control
/// covers every point shown together; returns each sweep's rows in its order.
pub fn sweeps_rows(sweeps: &[Sweep], options: &CompareOptions) -> Result<Vec<Vec<SweepRow>>, CompareError> {
    let ordered: Vec<Vec<&SweepPoint>> = sweeps.iter().map(|s| ordered_points(&s.points)).collect();
    // The metric name leads the key, up to the separator the engine reads it up to, so each point is judged as
    // its metric is (direction, pass/fail or measurement, percent or absolute change); the sweep and point
    // numbers after it keep the keys of different sweeps apart.
    let key = |s: usize, i: usize| format!("{}{KEY_SEPARATOR}{:04}.{:08}", sweeps[s].metric, s, i);
    let labels = sweeps.first().map(|s| s.columns.clone()).unwrap_or_default();
    let mut columns: Vec<Column> = labels.iter().map(Column::new).collect();
    for (s, points) in ordered.iter().enumerate() {
        for (i, point) in points.iter().enumerate() {
            for (c, column) in columns.iter_mut().enumerate() {
                if let Some(samples) = point.samples.get(c) {
                    column.metrics.insert(key(s, i), samples.clone());
                }
            }
        }
    }
    // One column is one revision's scaling curve (`compare v6.8 --by nr_threads`): there is nothing to judge, but
    // each point's statistics are the engine's (filled-in zeros, pass/fail shares, absent points), so they are read
    // from the column compared with itself, and the self-comparison's changes are dropped.
    let single = columns.len() == 1;
    if single {
        columns.push(columns[0].clone());
    }
    let mut result = compare(&Comparison::new(columns), options)?;
    if single {
        for row in &mut result.rows {
            row.sides.truncate(1);
            row.changes.clear();
        }
    }
    let mut all = Vec::with_capacity(sweeps.len());
    for (s, points) in ordered.iter().enumerate() {
        let mut rows = Vec::with_capacity(points.len());
        for (i, point) in points.iter().enumerate() {
            let name = key(s, i);
            if let Some(row) = result.rows.iter().find(|r| r.metric == name) {
                let mut changes = row.changes.clone();
                // lkp's record names its stat by the key; the point is the row's value, the stat is the metric.
                for lkp in changes.iter_mut().filter_map(|c| c.lkp.as_mut()) {
                    lkp.stat = sweeps[s].metric.clone();
                }
                rows.push(SweepRow { value: point.value.clone(), sides: row.sides.clone(), changes });
            }
        }
        all.push(rows);
    }
    Ok(all)
}

/// A sweep's title: `METRIC by PARAM`, then the values it holds the other differing params at.
pub fn sweep_title(sweep: &Sweep) -> String {
    let mut title = format!("{} by {}", sweep.metric, sweep.param);
    if !sweep.group.is_empty() {
        let fixed: Vec<String> = sweep.group.iter().map(|(k, v)| format!("{k}={v}")).collect();
        title.push_str(&format!(" ({})", fixed.join(", ")));
    }
    title
}

/// The sweep as text: a title line, a header with the param name and the column labels, one line per value.
/// Cells use the ncompare fields (mean, ` ±NN%`, `%+.1f%%` change) so the two views read alike. A line ends with
/// its verdicts when a change is one; when a change shows with no word after it, a last line says it is not
/// significant (QA 54: `-9.7%` at each point, and nothing said it was within the noise).
pub fn render_sweep(sweep: &Sweep, rows: &[SweepRow]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", sweep_title(sweep));
    let value_width =
        rows.iter().map(|r| r.value.chars().count()).chain([sweep.param.chars().count()]).max().unwrap_or(1);
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
        let base_present = row.sides.first().is_some_and(|s| s.present);
        for (i, side) in row.sides.iter().enumerate() {
            if i > 0 {
                // As in the table: a side without runs at this point has no mean, and no change against the base.
                match row.changes.get(i - 1) {
                    Some(c) if base_present && side.present => out.push_str(&format_change(c, base_mean, side.mean)),
                    Some(_) => out.push_str(&" ".repeat(REL_WIDTH + 2)),
                    None => {}
                }
            }
            out.push_str(&format_side_mean(side));
            out.push_str(&format_stddev(side));
        }
        let verdicts: Vec<&str> = row.changes.iter().map(|c| c.verdict.word()).filter(|w| *w != "unchanged").collect();
        if !verdicts.is_empty() {
            let _ = write!(out, "  {}", verdicts.join(","));
        }
        out.push('\n');
    }
    let shown_unchanged = rows.iter().any(|row| {
        let base_present = row.sides.first().is_some_and(|s| s.present);
        row.changes.iter().enumerate().any(|(i, c)| {
            c.verdict == Verdict::Unchanged && base_present && row.sides.get(i + 1).is_some_and(|s| s.present)
        })
    });
    if shown_unchanged {
        out.push_str("# a change with no verdict after it is not significant\n");
    }
    // Why a point is inconclusive, once per reason, as the table's notes and the sweep's Markdown and CSV say it (QA
    // 57: the text said "inconclusive" at a +37.5% point and never that a third run a side would decide it).
    let mut reasons: Vec<String> = Vec::new();
    for change in rows.iter().flat_map(|row| &row.changes) {
        if let Verdict::Inconclusive { .. } = change.verdict {
            let text = verdict_text(change.verdict);
            if !reasons.contains(&text) {
                reasons.push(text);
            }
        }
    }
    for reason in reasons {
        let _ = writeln!(out, "# {reason}");
    }
    out
}

/// A verdict as a cell: the word, and for an inconclusive one its reason.
fn verdict_text(verdict: Verdict) -> String {
    match verdict {
        Verdict::Inconclusive { reason } => format!("inconclusive: {reason}"),
        v => v.word().to_string(),
    }
}

/// Sweeps as Markdown: a heading per sweep (its title) and a table of one row per param value, with mean ±
/// %stddev per column and the change and verdict of each non-base column.
pub fn render_sweeps_markdown(sweeps: &[Sweep], rows: &[Vec<SweepRow>]) -> String {
    let mut out = String::new();
    for (sweep, rows) in sweeps.iter().zip(rows) {
        let _ = writeln!(out, "### {}\n", md_escape(&sweep_title(sweep)));
        let mut header = vec![md_escape(&sweep.param)];
        let mut rule = vec!["---:".to_string()];
        for (i, label) in sweep.columns.iter().enumerate() {
            header.push(format!("{} (mean ± %stddev)", md_escape(label)));
            rule.push("---:".to_string());
            if i > 0 {
                header.extend(["change".to_string(), "verdict".to_string()]);
                rule.extend(["---:".to_string(), "---".to_string()]);
            }
        }
        let _ = writeln!(out, "| {} |", header.join(" | "));
        let _ = writeln!(out, "| {} |", rule.join(" | "));
        for row in rows {
            let mut cells = vec![md_escape(&row.value)];
            let base = row.sides.first();
            for (i, side) in row.sides.iter().enumerate() {
                cells.push(match side.rel_stddev_pct {
                    Some(rel) if rel > 2.0 => format!("{} ±{}%", format_mean(side.mean).trim(), int_trunc(rel)),
                    _ => format_side_mean(side).trim().to_string(),
                });
                if i > 0 {
                    let change = row.changes.get(i - 1);
                    let both = side.present && base.is_some_and(|b| b.present);
                    cells.push(match change {
                        Some(c) if both && c.change.is_infinite() => infinite_change(c.change).to_string(),
                        Some(c) if both => format_change(c, base.map_or(0.0, |b| b.mean), side.mean).trim().to_string(),
                        _ => String::new(),
                    });
                    cells.push(change.map(|c| md_escape(&verdict_text(c.verdict))).unwrap_or_default());
                }
            }
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        out.push('\n');
    }
    out
}

/// Sweeps as CSV: one line per sweep, param value and non-base column, with the values the sweep holds the other
/// differing params at in a column each (empty where a sweep does not hold that param).
pub fn render_sweeps_csv(sweeps: &[Sweep], rows: &[Vec<SweepRow>]) -> String {
    let mut group_keys: Vec<&str> = Vec::new();
    for sweep in sweeps {
        for (k, _) in &sweep.group {
            if !group_keys.contains(&k.as_str()) {
                group_keys.push(k);
            }
        }
    }
    let mut header = vec!["metric".to_string()];
    header.extend(group_keys.iter().map(|k| csv_field(k)));
    header.extend(
        ["param", "value", "base", "column", "base_n", "base_mean", "base_stddev", "n", "mean", "stddev", "change"]
            .map(str::to_string),
    );
    header.extend(["change_unit", "p", "q", "verdict", "reason"].map(str::to_string));
    let mut out = header.join(",");
    out.push('\n');
    let num = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    for (sweep, rows) in sweeps.iter().zip(rows) {
        let base_label = sweep.columns.first().map(String::as_str).unwrap_or("");
        let kind = if super::is_pass_fail_metric(super::metric_of_key(&sweep.metric)) {
            super::RowKind::PassFail
        } else {
            super::RowKind::Measurement
        };
        for row in rows {
            let base = row.sides.first();
            // A sweep of one revision has no change: its line per point has the base's columns and the others empty.
            let changes: Vec<Option<&super::Change>> = match row.changes.is_empty() {
                true => vec![None],
                false => row.changes.iter().map(Some).collect(),
            };
            for c in changes {
                let other = c.and_then(|c| row.sides.get(c.column));
                let mut fields = vec![csv_field(&sweep.metric)];
                for key in &group_keys {
                    let value = sweep.group.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str()).unwrap_or("");
                    fields.push(csv_field(value));
                }
                let both = base.is_some_and(|s| s.present) && other.is_some_and(|s| s.present);
                let reason = match c.map(|c| c.verdict) {
                    Some(Verdict::Inconclusive { reason }) => reason.to_string(),
                    _ => String::new(),
                };
                fields.extend([
                    csv_field(&sweep.param),
                    csv_field(&row.value),
                    csv_field(base_label),
                    csv_field(c.and_then(|c| sweep.columns.get(c.column)).map(String::as_str).unwrap_or("")),
                    base.map(|s| s.n.to_string()).unwrap_or_default(),
                    num(base.filter(|s| s.present).map(|s| s.mean)),
                    num(base.and_then(|s| s.stddev)),
                    other.map(|s| s.n.to_string()).unwrap_or_default(),
                    num(other.filter(|s| s.present).map(|s| s.mean)),
                    num(other.and_then(|s| s.stddev)),
                    num(c.map(|c| c.change).filter(|_| both)),
                    c.map(|c| super::render::change_unit(kind, c)).unwrap_or_default().to_string(),
                    num(c.and_then(|c| c.p)),
                    num(c.and_then(|c| c.q)),
                    c.map(|c| c.verdict.word()).unwrap_or_default().to_string(),
                    csv_field(&reason),
                ]);
                out.push_str(&fields.join(","));
                out.push('\n');
            }
        }
    }
    out
}
