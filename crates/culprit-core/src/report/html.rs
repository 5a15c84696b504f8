//! The HTML report: one self-contained file (inline style, an inline SVG of the metric over the tested commits,
//! no script, no external asset), so it can be attached, archived or served as is.

use super::{
    bisect_lines, fix_sentence, headline, opening, report_table, subject_line, value_text, ReportError, ReportInput,
    TrendPoint,
};
use crate::compare::render::{format_change, format_mean, format_stddev};
use crate::compare::{CompareResult, MetricRow, Verdict};
use std::fmt::Write as _;

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:sans-serif;max-width:70em;margin:2em auto;padding:0 1em;color:#222}\
pre,code,td.num{font-family:monospace}td.num{text-align:right;white-space:pre}\
table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:2px 8px}\
.regression{color:#b00020}.improvement{color:#1b5e20}.warn{background:#fff3cd;padding:.5em}";

/// The report as one HTML document.
pub fn render_html(input: &ReportInput) -> Result<String, ReportError> {
    let h = headline(input)?;
    let subject = subject_line(input)?;
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(&subject)
    );
    let _ = writeln!(out, "<h1>{}</h1>", escape(&subject));
    let unconfirmed = input.bisect.as_ref().is_some_and(|b| !b.confirmed);
    let class = if unconfirmed { " class=\"warn\"" } else { "" };
    let _ = writeln!(out, "<p{class}>{}</p>", escape(&opening(input, &h)));
    out.push_str("<ul>\n");
    for (noun, value) in super::commit_block(input) {
        let _ = writeln!(out, "<li>{noun}: <code>{}</code></li>", escape(&value));
    }
    let _ = writeln!(out, "<li>in testcase: {}</li>", escape(&input.testcase));
    let _ = writeln!(out, "<li>on test machine: {}</li>", escape(&input.machine.describe_with(&input.host)));
    if let Some(line) = super::machines_line(input) {
        let _ = writeln!(out, "<li>{}</li>", escape(&line));
    }
    if let Some(machines) = &input.machines_differ {
        let _ = writeln!(out, "<li>{}</li>", escape(machines));
    }
    if !input.params.is_empty() {
        out.push_str("<li>with following parameters:<ul>\n");
        for (k, v) in &input.params {
            let _ = writeln!(out, "<li><code>{}: {}</code></li>", escape(k), escape(v));
        }
        out.push_str("</ul></li>\n");
        if let Some(sentence) = super::not_applied_sentence(input) {
            let _ = writeln!(out, "<li>{}</li>", escape(&sentence));
        }
    }
    let scratch = super::scratch_lines(input);
    if !scratch.is_empty() {
        let _ = writeln!(out, "<li>{}<ul>", escape(super::scratch_lead(input)));
        for (k, v) in &scratch {
            let _ = writeln!(out, "<li><code>{}: {}</code></li>", escape(k), escape(v));
        }
        out.push_str("</ul></li>\n");
        if let Some(differ) = &input.filesystems_differ {
            let _ = writeln!(out, "<li>{}</li>", escape(differ));
        }
    }
    out.push_str("</ul>\n");
    // After the list the opening leads into: a warning of swapped sides, how many runs failed.
    for paragraph in super::after_opening(input) {
        let _ = writeln!(out, "<p class=\"warn\">{}</p>", escape(&paragraph));
    }
    if let Some([ask, tag]) = super::reported_by_tag(input, &h) {
        let _ = writeln!(out, "<p>{}:</p>\n<pre>{}</pre>", escape(&ask), escape(&tag));
    }
    if !input.reproduce.is_empty() {
        out.push_str("<h2>To reproduce</h2>\n<pre>");
        for line in &input.reproduce {
            let _ = writeln!(out, "{}", escape(line));
        }
        out.push_str("</pre>\n");
        if let Some(file) = &input.job_file {
            let _ = writeln!(out, "<p>The job file <code>{}</code> is written next to this report.</p>", escape(file));
        }
        if let Some(file) = &input.patch_file {
            let file = escape(file);
            let _ = writeln!(out, "<p>The fix's patch <code>{file}</code> is written next to this report.</p>");
        }
    }
    if input.trend.iter().filter(|p| p.mean.is_some()).count() >= 2 {
        let _ = writeln!(out, "<h2>{} over the tested commits</h2>", escape(&input.metric));
        out.push_str(&trend_svg(&input.trend, &input.commit.sha, &input.metric));
    }
    out.push_str("<h2>Details</h2>\n");
    let (table, left_out) = report_table(&input.comparison, &input.metric);
    out.push_str(&html_table(&table));
    if left_out > 0 {
        let _ =
            writeln!(out, "<p>{left_out} more changed monitor or perf-profile metric(s) are in the JSON report.</p>");
    }
    if let Some(sentence) = super::lead_sentence(input) {
        let _ = writeln!(out, "<p>{}</p>", escape(&sentence));
    }
    if let Some(sentence) = super::sources_sentence(input, &table) {
        let _ = writeln!(out, "<p>{}</p>", escape(&sentence));
    }
    if let Some(sentence) = fix_sentence(input, &h) {
        let _ = writeln!(out, "<p>{}</p>", escape(&sentence));
    }
    if let Some((title, table)) = super::pooled_table(input) {
        let _ = writeln!(out, "<p>{}</p>", escape(&title));
        out.push_str(&html_table(&table));
    }
    if let Some(b) = &input.bisect {
        out.push_str("<h2>Bisect</h2>\n<ul>\n");
        for line in bisect_lines(b) {
            let _ = writeln!(out, "<li>{}</li>", escape(&line));
        }
        out.push_str("</ul>\n");
    }
    if let Some(yaml) = super::inline_job(input) {
        let title = format!("Save the job below as {}, the file the steps above run", super::JOB_FILE);
        let _ = writeln!(out, "<h2>{}</h2>\n<pre>{}</pre>", escape(&title), escape(yaml.trim_end()));
    }
    if let Some(patch) = super::inline_patch(input) {
        let title = format!("Save the patch below as {}, the fix the steps above apply", super::PATCH_FILE);
        let _ = writeln!(out, "<h2>{}</h2>\n<pre>{}</pre>", escape(&title), escape(patch.trim_end()));
    }
    out.push_str("</body>\n</html>\n");
    Ok(out)
}

/// A comparison as an HTML table: the report's main table, and the pooled one of every stored run in the same columns.
fn html_table(table: &CompareResult) -> String {
    let mut out = String::from("<table>\n<tr><th>metric</th>");
    for (i, c) in table.columns.iter().enumerate() {
        if i > 0 {
            out.push_str("<th>%change</th>");
        }
        let title = c.subject.as_deref().unwrap_or("");
        let short: String = if c.label.len() == 40 { c.label.chars().take(10).collect() } else { c.label.clone() };
        let _ = write!(out, "<th title=\"{}\">{}</th>", escape(title), escape(&short));
    }
    out.push_str("<th>verdict</th></tr>\n");
    for row in &table.rows {
        out.push_str(&table_row(row));
    }
    out.push_str("</table>\n");
    out
}

fn table_row(row: &MetricRow) -> String {
    let mut out = format!("<tr><td><code>{}</code></td>", escape(&row.metric));
    let base = row.sides.first();
    let base_mean = base.map(|s| s.mean).unwrap_or(0.0);
    for (i, side) in row.sides.iter().enumerate() {
        if i > 0 {
            // A side without the metric (missing, or every run failed) has no mean, so no change either: an empty
            // cell, as the text and Markdown tables print it, rather than +0.0% from a mean of 0.
            let both_present = side.present && base.is_some_and(|s| s.present);
            let change = row.changes.get(i - 1).filter(|_| both_present);
            let cell = change.map(|c| format_change(c, base_mean, side.mean)).unwrap_or_default();
            let _ = write!(out, "<td class=\"num\">{}</td>", escape(cell.trim()));
        }
        let cell = if side.present {
            format!("{}{}", format_mean(side.mean).trim(), format_stddev(side).trim_end())
        } else {
            "-".to_string()
        };
        let _ = write!(out, "<td class=\"num\">{}</td>", escape(&cell));
    }
    let verdicts: Vec<String> = row
        .changes
        .iter()
        .map(|c| match c.verdict {
            Verdict::Regression => "<span class=\"regression\">regression</span>".to_string(),
            Verdict::Improvement => "<span class=\"improvement\">improvement</span>".to_string(),
            Verdict::Inconclusive { reason } => format!("inconclusive: {}", escape(&reason.to_string())),
            v => v.word().to_string(),
        })
        .collect();
    let _ = writeln!(out, "<td>{}</td></tr>", verdicts.join(" / "));
    out
}

/// An inline SVG line chart of the metric's mean at each tested commit (oldest left), with ±1 stddev bars, the
/// blamed commit in red and untestable commits marked with a cross on the axis.
pub(crate) fn trend_svg(points: &[TrendPoint], blamed_sha: &str, metric: &str) -> String {
    const W: f64 = 720.0;
    const H: f64 = 260.0;
    const LEFT: f64 = 80.0;
    const RIGHT: f64 = 20.0;
    const TOP: f64 = 20.0;
    const BOTTOM: f64 = 60.0;
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for p in points {
        if let Some(m) = p.mean.filter(|m| m.is_finite()) {
            let sd = p.stddev.filter(|s| s.is_finite()).unwrap_or(0.0);
            lo = lo.min(m - sd);
            hi = hi.max(m + sd);
        }
    }
    if !lo.is_finite() || !hi.is_finite() {
        return String::new();
    }
    if hi - lo < f64::EPSILON * hi.abs().max(1.0) {
        lo -= 1.0;
        hi += 1.0;
    }
    let pad = (hi - lo) * 0.08;
    let (lo, hi) = (lo - pad, hi + pad);
    let n = points.len().max(2);
    let x = |i: usize| LEFT + (W - LEFT - RIGHT) * i as f64 / (n - 1) as f64;
    let y = |v: f64| TOP + (H - TOP - BOTTOM) * (hi - v) / (hi - lo);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" role=\"img\" \
         aria-label=\"{} over the tested commits\">\n",
        escape(metric)
    );
    let _ = writeln!(
        svg,
        "<line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{:.1}\" stroke=\"#888\"/><line x1=\"{LEFT}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#888\"/>",
        H - BOTTOM,
        H - BOTTOM,
        W - RIGHT,
        H - BOTTOM
    );
    for v in [lo + pad, (lo + hi) / 2.0, hi - pad] {
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{}</text>",
            LEFT - 6.0,
            y(v) + 4.0,
            escape(&value_text(v))
        );
    }
    let mut path = String::new();
    for (i, p) in points.iter().enumerate() {
        if let Some(m) = p.mean.filter(|m| m.is_finite()) {
            let _ = write!(path, "{}{:.1},{:.1} ", if path.is_empty() { "M" } else { "L" }, x(i), y(m));
        }
    }
    let _ = writeln!(svg, "<path d=\"{}\" fill=\"none\" stroke=\"#1565c0\" stroke-width=\"1.5\"/>", path.trim_end());
    for (i, p) in points.iter().enumerate() {
        let blamed = p.commit.sha == blamed_sha;
        let color = if blamed { "#b00020" } else { "#1565c0" };
        let title = escape(&format!(
            "{} {}: {}",
            p.commit.short(),
            p.commit.subject.as_deref().unwrap_or(""),
            p.mean.map(value_text).unwrap_or_else(|| "untestable".to_string())
        ));
        match p.mean.filter(|m| m.is_finite()) {
            Some(m) => {
                if let Some(sd) = p.stddev.filter(|s| s.is_finite() && *s > 0.0) {
                    let _ = writeln!(
                        svg,
                        "<line x1=\"{0:.1}\" y1=\"{1:.1}\" x2=\"{0:.1}\" y2=\"{2:.1}\" stroke=\"{color}\" opacity=\"0.5\"/>",
                        x(i),
                        y(m + sd),
                        y(m - sd)
                    );
                }
                let _ = writeln!(
                    svg,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"{}\" fill=\"{color}\"><title>{title}</title></circle>",
                    x(i),
                    y(m),
                    if blamed { 5 } else { 3 }
                );
            }
            None => {
                let (cx, cy) = (x(i), H - BOTTOM);
                let _ = writeln!(
                    svg,
                    "<path d=\"M{:.1},{:.1} L{:.1},{:.1} M{:.1},{:.1} L{:.1},{:.1}\" stroke=\"#888\"><title>{title}</title></path>",
                    cx - 4.0,
                    cy - 4.0,
                    cx + 4.0,
                    cy + 4.0,
                    cx - 4.0,
                    cy + 4.0,
                    cx + 4.0,
                    cy - 4.0
                );
            }
        }
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" transform=\"rotate(-40 {:.1} {:.1})\" text-anchor=\"end\" fill=\"{color}\">{}</text>",
            x(i),
            H - BOTTOM + 14.0,
            x(i),
            H - BOTTOM + 14.0,
            escape(&p.commit.short().chars().take(7).collect::<String>())
        );
    }
    svg.push_str("</svg>\n");
    svg
}
