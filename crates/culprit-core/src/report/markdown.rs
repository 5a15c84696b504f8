//! The Markdown report, for trackers and web pages: the same facts as the mail, with the table as Markdown.

use super::{bisect_lines, fix_sentence, headline, opening, report_table, subject_line, value_text, ReportError, ReportInput};
use crate::compare::render::{self, RenderOptions};
use std::fmt::Write as _;

/// Escapes the characters Markdown would read as formatting in running text.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The report as Markdown.
pub fn render_markdown(input: &ReportInput) -> Result<String, ReportError> {
    let h = headline(input)?;
    let mut out = String::new();
    let _ = writeln!(out, "## {}\n", escape(&subject_line(input)?));
    let _ = writeln!(out, "{}\n", escape(&opening(input, &h)));
    let blamed = match &input.bisect {
        Some(b) if b.contributors.len() > 1 => b.contributors.iter().map(|c| c.commit.clone()).collect(),
        Some(b) if b.status == crate::bisect::Status::NotReproduced => Vec::new(),
        _ => vec![input.commit.clone()],
    };
    for c in &blamed {
        let subject = c.subject.as_deref().map(|s| format!(" (\"{}\")", escape(s))).unwrap_or_default();
        let _ = writeln!(out, "- commit: `{}`{subject}", c.sha);
    }
    let _ = writeln!(out, "- in testcase: {}", escape(&input.testcase));
    let _ = writeln!(out, "- on test machine: {}", escape(&input.machine.describe()));
    if !input.params.is_empty() {
        out.push_str("- with following parameters:\n");
        for (k, v) in &input.params {
            let _ = writeln!(out, "  - `{k}`: `{}`", v.replace('`', "'"));
        }
    }
    out.push('\n');
    if !input.reproduce.is_empty() {
        out.push_str("### To reproduce\n\n```sh\n");
        for line in &input.reproduce {
            let _ = writeln!(out, "{line}");
        }
        out.push_str("```\n\n");
        if let Some(file) = &input.job_file {
            let _ = writeln!(out, "The job file `{file}` is written next to this report.\n");
        }
    }
    out.push_str("### Details\n\n");
    let (table, left_out) = report_table(&input.comparison, &input.metric);
    out.push_str(&render::render_markdown(&table, RenderOptions { all: true }));
    if left_out > 0 {
        let _ = writeln!(out, "\n{left_out} more changed monitor or perf-profile metric(s) are in the JSON report.");
    }
    out.push('\n');
    if let Some(sentence) = fix_sentence(input, &h) {
        let _ = writeln!(out, "{}\n", escape(&sentence));
    }
    if let Some(b) = &input.bisect {
        out.push_str("### Bisect\n\n");
        for line in bisect_lines(b) {
            let _ = writeln!(out, "- {}", escape(&line));
        }
        out.push('\n');
    }
    if input.trend.len() > 2 {
        let _ = writeln!(out, "### {} over the tested commits\n", escape(&input.metric));
        out.push_str("| commit | runs | mean | stddev | subject |\n|---|---:|---:|---:|---|\n");
        for p in &input.trend {
            let mean = p.mean.map(value_text).unwrap_or_else(|| "untestable".to_string());
            let sd = p.stddev.filter(|s| s.is_finite()).map(value_text).unwrap_or_default();
            let subject = escape(p.commit.subject.as_deref().unwrap_or(""));
            let _ = writeln!(out, "| `{}` | {} | {mean} | {sd} | {subject} |", p.commit.short(), p.runs);
        }
        out.push('\n');
    }
    if let Some(yaml) = super::inline_job(input) {
        // A fence longer than any run of backticks in the job (a shell command may hold some) cannot end early.
        let longest = yaml.split(|c| c != '`').map(str::len).max().unwrap_or(0);
        let fence = "`".repeat(longest.max(2) + 1);
        let _ = writeln!(out, "### {}\n\n{fence}yaml\n{}\n{fence}", escape(super::JOB_FILE), yaml.trim_end());
    }
    Ok(out)
}
