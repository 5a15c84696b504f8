//! Renderers of a [`CompareResult`]: lkp's ncompare table (the layout kernel developers read in the robot's
//! mails), JSON, Markdown, CSV, and one-line headlines. Every renderer reads the verdict stored in each
//! [`Change`]; none decides anything itself.

use super::printf;
use super::{Change, CompareResult, InconclusiveReason, MetricRow, RowKind, Side, SideStats, Verdict};
use crate::model::table_short;
use std::fmt::Write as _;

/// lkp's column widths: the mean, the ` ±NN%` field, and the change field.
const ABS_WIDTH: usize = 10;
const ERR_WIDTH: usize = 6;
pub(crate) const REL_WIDTH: usize = 10;
/// The first column is mean + stddev wide; every other column adds a change field and a space.
const FIRST_WIDTH: usize = ABS_WIDTH + ERR_WIDTH;
const OTHER_WIDTH: usize = FIRST_WIDTH + REL_WIDTH + 1;

/// What to include in rendered output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RenderOptions {
    /// Every row, not only the rows with a change in some column (`--all`).
    pub all: bool,
}

/// The rows a renderer shows: every row with `all`, otherwise the rows where some column changed.
pub fn shown_rows(result: &CompareResult, options: RenderOptions) -> impl Iterator<Item = &MetricRow> {
    result.rows.iter().filter(move |r| options.all || r.any_change())
}

/// lkp's mean field: `%10.2f` below 1000, `%10.4g` above 1e8, `%10d` (truncated) otherwise; with one deliberate
/// difference: a nonzero mean below 0.1 gets `%.3g`. lkp's `%.2f` prints 0.004 s as `0.00`, which reads as zero
/// next to its `+50%`, and 0.0476 s against 0.0606 s as `0.05` against `0.06` (a `--run` of a fast command).
pub fn format_mean(avg: f64) -> String {
    let text = if avg != 0.0 && avg.abs() < 0.1 {
        printf::general(avg, 3, false)
    } else if avg.abs() < 1000.0 {
        printf::fixed(avg, 2, false)
    } else if avg.abs() > 100_000_000.0 {
        printf::general(avg, 4, false)
    } else {
        printf::int_trunc(avg)
    };
    format!("{text:>ABS_WIDTH$}")
}

/// [`format_mean`] of a side, or `-` for a side without the metric (missing, or every run failed): its mean is
/// unknown, not 0.
pub(crate) fn format_side_mean(side: &SideStats) -> String {
    if side.present {
        format_mean(side.mean)
    } else {
        format!("{:>ABS_WIDTH$}", "-")
    }
}

/// lkp's `%stddev` field: ` ±%3d%%` (truncated) when the relative stddev is above 2%, blanks otherwise. Relative to
/// the mean's magnitude, where lkp divides by the signed mean and so prints nothing for a negative one.
pub fn format_stddev(side: &SideStats) -> String {
    match side.rel_stddev_pct {
        Some(rel) if rel > 2.0 => format!(" ±{:>3}%", printf::int_trunc(rel)),
        _ => " ".repeat(ERR_WIDTH),
    }
}

/// lkp's change field: `%+10.1f%% ` (or `%+10.2g` from 100,000 up), or the same number and two spaces for an
/// absolute difference. An infinite relative change (base mean 0) prints as lkp computes it, over 1e-100.
pub fn format_change(change: &Change, base_mean: f64, other_mean: f64) -> String {
    let mut p = change.change;
    if p.is_infinite() {
        p = 100.0 * (other_mean - base_mean) / 1e-100;
    }
    let number = if p.abs() < 100_000.0 { printf::fixed(p, 1, true) } else { printf::general(p, 2, true) };
    if change.absolute {
        format!("{number:>REL_WIDTH$}  ")
    } else {
        format!("{number:>REL_WIDTH$}% ")
    }
}

/// The table in lkp ncompare's layout. Rows: changed ones unless `options.all`; pass/fail rows in their own
/// block first, as lkp prints them. Lines after the table (starting with `#`) say what was left out and why.
pub fn render_table(result: &CompareResult, options: RenderOptions) -> String {
    let mut out = String::new();
    render_preamble(result, &mut out);
    out.push_str(&render_table_body(result, options));
    out
}

/// The table without its preamble (the rule, the axes and the list of compared commits): the column labels, the
/// rows and the footnotes, for a second table of the same commits under the first, which says those already (the
/// report's table of the bisect's confirmation).
pub fn render_table_body(result: &CompareResult, options: RenderOptions) -> String {
    let mut out = String::new();
    render_column_labels(result, &mut out);
    let rows: Vec<&MetricRow> = shown_rows(result, options).collect();
    let n = result.columns.len().saturating_sub(1);
    let (pass_fail, measurements): (Vec<&MetricRow>, Vec<&MetricRow>) =
        rows.iter().partition(|r| r.kind == RowKind::PassFail);
    if !pass_fail.is_empty() {
        let _ = writeln!(out, "       fail:runs{}", "  %reproduction    fail:runs".repeat(n));
        let _ = writeln!(out, "           |    {}", "         |             |    ".repeat(n));
        for row in pass_fail {
            render_pass_fail_row(row, &mut out);
        }
    }
    if !measurements.is_empty() {
        let _ = writeln!(out, "         %stddev{}", "     %change         %stddev".repeat(n));
        let _ = writeln!(out, "             \\  {}", "        |                \\  ".repeat(n));
        for row in measurements {
            render_measurement_row(row, &mut out);
        }
    }
    out.push('\n');
    render_footnotes(result, options, &mut out);
    // lkp lists its pass stats among the failure stats, under "fail:runs"; "5:5 stress-ng.cpu.pass" there read as
    // five failures to QA 51.
    if rows.iter().any(|r| r.kind == RowKind::PassFail && r.metric.ends_with(".pass")) {
        let _ = writeln!(out, "# a .pass row counts the runs that passed, not failures (lkp lists them under fail:runs)");
    }
    out
}

fn render_preamble(result: &CompareResult, out: &mut String) {
    out.push_str(&"=".repeat(89));
    out.push('\n');
    if !result.axes.is_empty() {
        let keys: Vec<&str> = result.axes.iter().map(|(k, _)| k.as_str()).collect();
        let values: Vec<&str> = result.axes.iter().map(|(_, v)| v.as_str()).collect();
        // The values line is not indented, as in the robot's mails (seed 001's, byte for byte): lkp's ncompare
        // prints it two spaces in, but the mails carry it flush left under the keys, and so does this table.
        let _ = writeln!(out, "{}:", keys.join("/"));
        let _ = writeln!(out, "{}\n", values.join("/"));
    }
    let _ = writeln!(out, "{}: ", result.compare_axis);
    for c in &result.columns {
        match &c.subject {
            Some(s) => {
                let short: String = c.label.chars().take(10).collect();
                let _ = writeln!(out, "  {short} (\"{s}\")");
            }
            None => {
                let _ = writeln!(out, "  {}", c.label);
            }
        }
    }
    out.push('\n');
}

fn render_column_labels(result: &CompareResult, out: &mut String) {
    for (i, c) in result.columns.iter().enumerate() {
        let width = if i == 0 { FIRST_WIDTH } else { OTHER_WIDTH };
        let label: String = c.label.chars().take(width).collect();
        let _ = write!(out, "{label:>width$} ");
    }
    out.push('\n');
    for i in 0..result.columns.len() {
        let width = if i == 0 { FIRST_WIDTH } else { OTHER_WIDTH };
        let _ = write!(out, "{} ", "-".repeat(width));
    }
    out.push('\n');
}

fn render_measurement_row(row: &MetricRow, out: &mut String) {
    let base = row.sides.first();
    let base_mean = base.map(|s| s.mean).unwrap_or(0.0);
    let base_present = base.is_some_and(|s| s.present);
    for (i, side) in row.sides.iter().enumerate() {
        if i > 0 {
            match row.changes.get(i - 1) {
                Some(change) if base_present && side.present => {
                    out.push_str(&format_change(change, base_mean, side.mean))
                }
                Some(_) => out.push_str(&" ".repeat(REL_WIDTH + 2)),
                None => {}
            }
        }
        out.push_str(&format_side_mean(side));
        out.push_str(&format_stddev(side));
    }
    let _ = writeln!(out, "  {}", row.metric);
}

fn render_pass_fail_row(row: &MetricRow, out: &mut String) {
    for (i, side) in row.sides.iter().enumerate() {
        if i > 0 {
            match row.changes.get(i - 1).map(|c| c.change) {
                Some(change) if !change.is_nan() => {
                    let _ = write!(out, "{:>REL_WIDTH$}% ", printf::fixed(change, 0, false));
                }
                // A side with no successful run has no share of failures to compare: blank, as lkp leaves it.
                _ => out.push_str(&" ".repeat(REL_WIDTH + 2)),
            }
        }
        let fails = side.fails.unwrap_or(0);
        if fails == 0 {
            out.push_str(&" ".repeat(ABS_WIDTH + 1));
        } else {
            let _ = write!(out, "{:>width$}", fails, width = ABS_WIDTH + 1);
        }
        let _ = write!(out, ":{:<width$}", side.n, width = ERR_WIDTH - 2);
    }
    let _ = writeln!(out, "  {}", row.metric);
}

/// Lines after the table: inconclusive pairs grouped by reason, and what the default view hid.
fn render_footnotes(result: &CompareResult, options: RenderOptions, out: &mut String) {
    let mut reasons: Vec<(String, usize)> = Vec::new();
    for row in &result.rows {
        for c in &row.changes {
            if let Verdict::Inconclusive { reason } = c.verdict {
                let label = result.columns.get(c.column).map(|c| table_short(&c.label)).unwrap_or_default();
                let key = format!("{label}: {}", reason_at(&reason, result, c.column));
                match reasons.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, n)) => *n += 1,
                    None => reasons.push((key, 1)),
                }
            }
        }
    }
    for (key, n) in reasons {
        let _ = writeln!(out, "# {n} metric(s) inconclusive on {key}");
    }
    for line in kpis_needing_runs(result) {
        let _ = writeln!(out, "# {line}");
    }
    for line in moved_beside_lines(result) {
        let _ = writeln!(out, "# {line}");
    }
    let changed = result.rows.iter().filter(|r| r.any_change()).count();
    if !options.all {
        if changed == 0 {
            let _ = writeln!(out, "# {} (--all shows every row)", nothing_changed(result));
        } else if changed < result.rows.len() {
            let _ = writeln!(out, "# {changed} of {} metrics changed; --all shows every row", result.rows.len());
        }
    }
}

/// One line per KPI whose change the runs could not tell from the noise though more runs would
/// ([`super::runs_to_tell`]): `stress-ng.cpu.ops_per_sec: -22.3% not significant over 3 runs a side; about 21 a side
/// would show it (1786 metrics tested)`. KPIs only (a `command` job's wall time when it has none): the test's own
/// measure is what a reader runs again for.
fn kpis_needing_runs(result: &CompareResult) -> Vec<String> {
    let multi = result.columns.len() > 2;
    let mut lines = Vec::new();
    let primary = primary_metrics_of(result);
    for row in result.rows.iter().filter(|r| primary.contains(&r.metric.as_str())) {
        for c in &row.changes {
            let Some(runs) = super::runs_to_tell(result, row, c) else { continue };
            let on = match result.columns.get(c.column) {
                Some(column) if multi => format!(" on {}", table_short(&column.label)),
                _ => String::new(),
            };
            // A metric fixed before its runs is tested alone: "1 metric tested", not "1 metrics".
            let tested = match runs.tested {
                1 => "1 metric tested".to_string(),
                n => format!("{n} metrics tested"),
            };
            lines.push(format!(
                "{}{on}: {} not significant over {}; about {} a side would show it ({tested})",
                row.metric,
                change_amount(c),
                runs.runs(),
                runs.needed,
            ));
        }
    }
    lines
}

/// One line per column where monitor rows moved beside the benchmark's change without being significant
/// ([`super::moved_beside`]): `beside it, every run of one side beyond every run of the other (p <= 0.01), yet not
/// significant among the 59 monitor metrics, where about 0.6 would be so by chance:`, then a line per row,
/// `  sysbench-cpu.time.percent_of_cpu_this_job_got -56.3% (q 0.055)`.
fn moved_beside_lines(result: &CompareResult) -> Vec<String> {
    let multi = result.columns.len() > 2;
    let mut lines = Vec::new();
    for column in 1..result.columns.len() {
        let moved = super::moved_beside(result, column);
        let Some((_, first)) = moved.first() else { continue };
        let tested = super::family_size(result, crate::model::MetricClass::Monitor, first);
        let on = match result.columns.get(column) {
            Some(c) if multi => format!(" on {}", table_short(&c.label)),
            _ => String::new(),
        };
        // What chance alone gives: a p <= 0.01 in about 1 of 100 unchanged metrics.
        let chance = tested as f64 * super::MOVED_BESIDE_P;
        lines.push(format!(
            "beside it{on}, every run of one side beyond every run of the other (p <= {}), yet not significant \
             among the {tested} monitor metrics, where about {} would be so by chance:",
            super::MOVED_BESIDE_P,
            if chance < 10.0 { format!("{chance:.1}") } else { format!("{chance:.0}") }
        ));
        for (row, c) in moved {
            // Three decimals: 0.055 printed as 0.05 read as passing the 0.05 bar.
            let q = c.q.map(|q| if q < 0.01 { format_p(q) } else { format!("{q:.3}") });
            lines.push(match q {
                Some(q) => format!("  {} {} (q {q})", row.metric, change_amount(c)),
                None => format!("  {} {}", row.metric, change_amount(c)),
            });
        }
    }
    lines
}

/// The metrics the notes and headlines lead with: the job's KPIs, else a `command` job's wall time
/// ([`crate::report::primary_metrics`], the metrics bisect, track and the report follow a job by). By
/// `compare::direction::is_kpi` alone, a command job without a capture had none: its -29% wall time not significant
/// over 3 runs got no "about N a side would show it" line (QA 57).
fn primary_metrics_of(result: &CompareResult) -> Vec<&str> {
    crate::report::primary_metrics(result.rows.iter().map(|r| r.metric.as_str()))
}

/// What a table with no changed row says, text and Markdown alike: how many metrics were compared, and how many of
/// those no test could decide, so that a table whose one side failed every run (every row inconclusive) does not
/// read as "nothing changed".
fn nothing_changed(result: &CompareResult) -> String {
    let undecided = result
        .rows
        .iter()
        .filter(|r| {
            !r.changes.is_empty() && r.changes.iter().all(|c| matches!(c.verdict, Verdict::Inconclusive { .. }))
        })
        .count();
    match undecided {
        0 => format!("no metric changed among {} compared", result.rows.len()),
        n => format!("no metric changed among {} compared, {n} of them inconclusive", result.rows.len()),
    }
}

/// Why a pair of `result` is inconclusive, naming its sides by their labels. A reason's own words say "the base
/// side" or "the other side", which in a footnote on column X read as the side opposite X even when X is the side
/// meant ("inconclusive on X: every run failed on the other side" of a column X whose every run failed).
fn reason_at(reason: &InconclusiveReason, result: &CompareResult, column: usize) -> String {
    let label = |i: usize| result.columns.get(i).map(|c| table_short(&c.label).to_string()).unwrap_or_default();
    let side = |side: &Side| match side {
        Side::Base => format!("{} (the base)", label(0)),
        Side::Other => label(column),
    };
    match reason {
        InconclusiveReason::TooFewRuns { base, other, needed } => {
            format!("fewer than {needed} runs a side ({base} at {} vs {other} at {})", label(0), label(column))
        }
        InconclusiveReason::BadSamples { side: s, problem } => format!("{problem} at {}", side(s)),
        InconclusiveReason::NoSuccessfulRuns { side: s } => format!("every run at {} failed", side(s)),
        InconclusiveReason::Missing { side: s } => format!("metric missing at {}", side(s)),
    }
}

/// A p-value for people: one significant digit in scientific notation when small (`2e-9`), else two decimals.
pub fn format_p(p: f64) -> String {
    if p == 0.0 {
        "0".to_string()
    } else if p < 0.01 {
        format!("{p:.0e}")
    } else {
        format!("{p:.2}")
    }
}

/// A change from a zero base, which no percentage states: `+inf%` or `-inf%`. lkp's own table divides by 1e-100
/// instead (`+4e+98%`); every view that is not lkp's table says what that number means with this.
pub fn infinite_change(change: f64) -> &'static str {
    if change > 0.0 {
        "+inf%"
    } else {
        "-inf%"
    }
}

/// A change as a headline says it: `-21.8%`, `+inf%` from a zero base, or `+2.0` for a metric whose change is
/// counted in its own units (a pass/fail count, a percentage metric).
pub fn change_amount(c: &Change) -> String {
    if c.absolute {
        printf::fixed(c.change, 1, true)
    } else if c.change.is_infinite() {
        infinite_change(c.change).to_string()
    } else {
        format!("{}%", printf::fixed(c.change, 1, true))
    }
}

/// One line per change, e.g. `fio.write_iops -21.8% regression (12 vs 12 runs, p=2e-9)`. A metric with no known
/// good direction that changed is worded `fio.latency_50ms% +6.0 change (...)`: the table shows its row, and a
/// maintainer reading the lines under it would otherwise take their silence for no change. With more than one
/// non-base column, the line names the column: `... regression on 8cc621d2f4 (...)`. The benchmark's KPIs (a
/// `command` job's wall time when it has none) come first, the rest after them in the table's order: sorted by name, a sysbench table's
/// `events/thread.avg` and `latency_ms.avg` lines came before its `workload` regression (QA 54).
pub fn headlines(result: &CompareResult) -> Vec<String> {
    let multi = result.columns.len() > 2;
    let mut lines = Vec::new();
    let primary = primary_metrics_of(result);
    let kpis_first = result.rows.iter().filter(|r| primary.contains(&r.metric.as_str()));
    let others = result.rows.iter().filter(|r| !primary.contains(&r.metric.as_str()));
    for row in kpis_first.chain(others) {
        for c in &row.changes {
            // The verdict's own word for a change of unknown direction is the adjective "changed"; the line's noun
            // is "change", as the report's headline has it, and says nothing of better or worse.
            let noun = match c.verdict {
                Verdict::Regression | Verdict::Improvement => c.verdict.word(),
                Verdict::Changed => "change",
                Verdict::Unchanged | Verdict::Inconclusive { .. } => continue,
            };
            let base = row.sides.first();
            let other = row.sides.get(c.column);
            let (nb, no) = (base.map(|s| s.n).unwrap_or(0), other.map(|s| s.n).unwrap_or(0));
            let amount = change_amount(c);
            let on = if multi {
                let label = result.columns.get(c.column).map(|col| table_short(&col.label)).unwrap_or_default();
                format!(" on {label}")
            } else {
                String::new()
            };
            // Under lkp's rules the verdict comes from its range and ratio rules, not from the p-value, which may well
            // be large; printing it would read as a contradiction.
            // A change the test alone would not call, shown because each side gave one value in every run, says so:
            // its p-value beside a KPI's rejected one of the same size read as two standards (QA 54: `meminfo.Shmem
            // +4.3% change (4 vs 4 runs, p=0.03)` headed a table whose -26% throughput was "not significant").
            let evidence = match c.basis {
                Some(super::ChangeBasis::LkpRules) => "by lkp's rules".to_string(),
                Some(super::ChangeBasis::ConstantSides) => "each side the same in every run".to_string(),
                Some(super::ChangeBasis::Test) | None => {
                    format!("p={}", c.p.map(format_p).unwrap_or_else(|| "n/a".to_string()))
                }
            };
            lines.push(format!("{} {amount} {noun}{on} ({nb} vs {no} runs, {evidence})", row.metric));
        }
    }
    lines
}

/// The whole result as pretty JSON (serde): columns, rows, per-column changes with every statistic and verdict.
/// Infinite changes (base mean 0) serialize as `null`.
pub fn render_json(result: &CompareResult) -> String {
    serde_json::to_string_pretty(result).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// A Markdown table: one row per shown metric, per column the mean ± %stddev, and per non-base column the change
/// and the verdict. Without a row to show there is no table, only the sentence saying that nothing changed.
pub fn render_markdown(result: &CompareResult, options: RenderOptions) -> String {
    let mut out = String::new();
    let shown: Vec<&MetricRow> = shown_rows(result, options).collect();
    if shown.is_empty() {
        // A header with no rows renders as an empty grid on GitLab and GitHub, which reads as a broken table; the
        // text table prints no header either, and says the same in a footnote. A sentence of its own here, so it
        // starts with a capital ("no metric ..." is ASCII).
        let mut note = nothing_changed(result);
        note[..1].make_ascii_uppercase();
        let hint = if options.all { "" } else { " (`--all` shows every row)" };
        let _ = writeln!(out, "{note}{hint}.");
        return out;
    }
    let mut header = vec!["metric".to_string()];
    let mut rule = vec!["---".to_string()];
    for (i, c) in result.columns.iter().enumerate() {
        header.push(format!("{} (mean ± %stddev)", md_escape(table_short(&c.label))));
        rule.push("---:".to_string());
        if i > 0 {
            header.push("change".to_string());
            header.push("verdict".to_string());
            rule.push("---:".to_string());
            rule.push("---".to_string());
        }
    }
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(out, "| {} |", rule.join(" | "));
    for row in shown {
        // A `|` ends a GitHub table cell even inside a code span unless it is escaped; the report's code span does
        // that and also keeps a backtick or a line break in a metric name from ending the span or the row.
        let mut cells = vec![crate::report::markdown::code(&row.metric, true)];
        for (i, side) in row.sides.iter().enumerate() {
            cells.push(match (side.fails, side.rel_stddev_pct) {
                (Some(f), _) => format!("{f}:{}", side.n),
                (None, Some(rel)) if rel > 2.0 => {
                    format!("{} ±{}%", format_mean(side.mean).trim(), printf::int_trunc(rel))
                }
                (None, _) => format_side_mean(side).trim().to_string(),
            });
            if i > 0 {
                let base = row.sides.first();
                let both_present = side.present && base.is_some_and(|s| s.present);
                match row.changes.get(i - 1) {
                    Some(c) => {
                        // lkp's table divides a change from a zero base by 1e-100 (+4e+98%); Markdown is not lkp's
                        // format, and says what that number means, as CSV and the headlines do.
                        cells.push(if both_present && c.change.is_infinite() {
                            infinite_change(c.change).to_string()
                        } else if both_present {
                            format_change(c, base.map(|s| s.mean).unwrap_or(0.0), side.mean).trim().to_string()
                        } else {
                            String::new()
                        });
                        cells.push(match c.verdict {
                            Verdict::Inconclusive { reason } => {
                                md_escape(&format!("inconclusive: {}", reason_at(&reason, result, i)))
                            }
                            v => v.word().to_string(),
                        });
                    }
                    None => {
                        cells.push(String::new());
                        cells.push(String::new());
                    }
                }
            }
        }
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out
}

/// Escapes text for a Markdown table cell or heading: labels and parameter values come from the user, and GitHub
/// renders inline HTML and emphasis, so the same escaping as the Markdown report's (`|` included) applies.
pub(crate) fn md_escape(s: &str) -> String {
    crate::report::markdown::escape(s)
}

/// The CSV columns after `metric` (and after `job` in [`render_jobs_csv`]).
const CSV_COLUMNS: &str = "class,kind,direction,base,column,base_n,base_mean,base_stddev,n,mean,stddev,change,\
                           change_unit,p_mann_whitney,p_welch,p,q,effect_size,cliffs_delta,ratio_ci_low,ratio_ci_high,\
                           verdict,reason,basis";

/// CSV with a header line: one line per shown metric and non-base column, every statistic, empty when absent.
pub fn render_csv(result: &CompareResult, options: RenderOptions) -> String {
    let mut out = format!("metric,{CSV_COLUMNS}\n");
    csv_rows(&mut out, result, options, None);
    out
}

/// The CSV of several jobs' tables as one table: one header line, and each line's job in the `job` column after the
/// metric (as a sweep's CSV holds its other params), so that the lines of different jobs stay apart and the file
/// loads as one table rather than as tables stacked under repeated headers.
pub fn render_jobs_csv(tables: &[(&str, &CompareResult)], options: RenderOptions) -> String {
    let mut out = format!("metric,job,{CSV_COLUMNS}\n");
    for (job, result) in tables {
        csv_rows(&mut out, result, options, Some(job));
    }
    out
}

/// The CSV's `change_unit` of a change: percentage points of reproduction for pass/fail rows, else an absolute
/// difference or a percent change.
pub(crate) fn change_unit(kind: RowKind, change: &Change) -> &'static str {
    if kind == RowKind::PassFail {
        "reproduction_points"
    } else if change.absolute {
        "absolute"
    } else {
        "percent"
    }
}

/// Appends one line per shown metric and non-base column, with `job` after the metric when given.
fn csv_rows(out: &mut String, result: &CompareResult, options: RenderOptions, job: Option<&str>) {
    let num = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    let base_label = result.columns.first().map(|c| c.label.as_str()).unwrap_or("");
    for row in shown_rows(result, options) {
        let base = row.sides.first();
        for c in &row.changes {
            let other = row.sides.get(c.column);
            let label = result.columns.get(c.column).map(|c| c.label.as_str()).unwrap_or("");
            let unit = change_unit(row.kind, c);
            let reason = match c.verdict {
                Verdict::Inconclusive { reason } => reason.to_string(),
                _ => String::new(),
            };
            let mut fields = vec![csv_field(&row.metric)];
            fields.extend(job.map(csv_field));
            fields.extend([
                format!("{:?}", row.class).to_lowercase(),
                match row.kind {
                    RowKind::PassFail => "pass_fail".to_string(),
                    RowKind::Measurement => "measurement".to_string(),
                },
                row.direction.sign().to_string(),
                csv_field(base_label),
                csv_field(label),
                base.map(|s| s.n.to_string()).unwrap_or_default(),
                num(base.filter(|s| s.present).map(|s| s.mean)),
                num(base.and_then(|s| s.stddev)),
                other.map(|s| s.n.to_string()).unwrap_or_default(),
                num(other.filter(|s| s.present).map(|s| s.mean)),
                num(other.and_then(|s| s.stddev)),
                num(Some(c.change).filter(|_| base.is_some_and(|s| s.present) && other.is_some_and(|s| s.present))),
                unit.to_string(),
                num(c.p_mann_whitney),
                num(c.p_welch),
                num(c.p),
                num(c.q),
                num(c.effect_size),
                num(c.cliffs_delta),
                num(c.ratio_ci.map(|ci| ci.low)),
                num(c.ratio_ci.map(|ci| ci.high)),
                c.verdict.word().to_string(),
                csv_field(&reason),
                c.basis.map(|b| b.key().to_string()).unwrap_or_default(),
            ]);
            let _ = writeln!(out, "{}", fields.join(","));
        }
    }
}

/// Quotes a CSV field when it holds a comma, a quote or a line break (RFC 4180).
pub(crate) fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::format_mean;

    /// lkp's `%10.2f` / `%10d` / `%10.4g` fields, and the one difference: nonzero means below 0.1 keep three
    /// significant digits instead of reading as 0.00 or 0.05.
    #[test]
    fn means_are_printed_as_lkp_prints_them_except_small_ones() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0.00"),
            (0.27, "0.27"),
            (0.1, "0.10"),
            (12.345, "12.35"),
            (999.994, "999.99"),
            (1054038.7, "1054038"),
            (-2500.9, "-2500"),
            (123_456_789.0, "1.235e+08"),
            (0.0476, "0.0476"),
            (0.0999, "0.0999"),
            (0.004, "0.004"),
            (-0.0123456, "-0.0123"),
            (0.0000123, "1.23e-05"),
        ];
        for &(mean, expected) in cases {
            let field = format_mean(mean);
            assert_eq!(field.trim(), expected, "{mean}");
            assert!(field.len() >= 10, "{mean}: {field:?} is narrower than lkp's field");
        }
    }
}
