//! The Markdown report, for trackers and web pages: the same facts as the mail, with the table as Markdown.
//!
//! Every piece of text that comes from the user (labels, commit subjects, metric names, params, the reproduce
//! commands) is escaped where it is put: GitHub renders inline HTML, so an unescaped `<img onerror=...>` label would
//! run in the reader's browser, and an unescaped `|` would split a table cell.

use super::{
    bisect_lines, fix_sentence, headline, opening, report_table, subject_line, value_text, ReportError, ReportInput,
};
use crate::compare::render::{self, RenderOptions};
use std::fmt::Write as _;

/// Escapes the characters Markdown would read as formatting or HTML in running text and table cells. A line break
/// becomes a space, since one would end the table row or start a block of its own.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.push(' ');
            continue;
        }
        if matches!(c, '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' | '&') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Culprit's own prose, whose commands are in backticks (`culprit report 7 --culprit N`): the text between each pair
/// of backticks becomes a code span and the rest is escaped, so the commands read as code rather than as
/// backslashed backticks (QA 59). Text with an odd number of backticks is escaped whole.
pub(crate) fn prose(text: &str) -> String {
    if text.matches('`').count() % 2 == 1 {
        return escape(text);
    }
    text.split('`')
        .enumerate()
        .map(|(i, piece)| if i % 2 == 0 { escape(piece) } else { code(piece, false) })
        .collect()
}

/// Text as an inline code span. Backslash escapes do not work inside one, so a backtick (which would end it) is
/// replaced by a quote and a line break by a space; in a table cell a `|` is escaped, which GitHub reads before
/// the code span and so shows as a plain `|`.
pub(crate) fn code(text: &str, in_table: bool) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('`');
    for c in text.chars() {
        match c {
            '`' => out.push('\''),
            '|' if in_table => out.push_str("\\|"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('`');
    out
}

/// A fence of backticks longer than any run of backticks in `text`, so a fenced block cannot end inside it.
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

/// The report as Markdown.
pub fn render_markdown(input: &ReportInput) -> Result<String, ReportError> {
    let h = headline(input)?;
    let mut out = String::new();
    let _ = writeln!(out, "## {}\n", escape(&subject_line(input)?));
    let _ = writeln!(out, "{}\n", escape(&opening(input, &h)));
    // The base's line, for labels, comes first (`commit_block`); every line names a commit or a label whole.
    let block = super::commit_block(input);
    let blamed = super::blamed_commits(input);
    let base = (block.len() > blamed.len()).then_some((&input.base, false));
    let refs = base.into_iter().chain(blamed.iter().map(|(c, untestable)| (c, *untestable)));
    for ((noun, _), (c, untestable)) in block.iter().zip(refs) {
        let subject = c.subject.as_deref().map(|s| format!(" (\"{}\")", escape(s))).unwrap_or_default();
        let marked = if untestable { " (untestable)" } else { "" };
        let _ = writeln!(out, "- {noun}: {}{subject}{marked}", code(&c.sha, false));
    }
    let _ = writeln!(out, "- in testcase: {}", escape(&input.testcase));
    let _ = writeln!(out, "- on test machine: {}", escape(&input.machine.describe_with(&input.host)));
    if let Some(line) = super::machines_line(input) {
        let _ = writeln!(out, "- {}", escape(&line));
    }
    if let Some(machines) = &input.machines_differ {
        let _ = writeln!(out, "- {}", escape(machines));
    }
    if !input.params.is_empty() {
        out.push_str("- with following parameters:\n");
        for (k, v) in &input.params {
            let _ = writeln!(out, "  - {}: {}", code(k, false), code(v, false));
        }
        if let Some(sentence) = super::not_applied_sentence(input) {
            let _ = writeln!(out, "- {}", escape(&sentence));
        }
    }
    let scratch = super::scratch_lines(input);
    if !scratch.is_empty() {
        let _ = writeln!(out, "- {}", escape(super::scratch_lead(input)));
        for (k, v) in &scratch {
            let _ = writeln!(out, "  - {}: {}", escape(k), code(v, false));
        }
        if let Some(differ) = &input.filesystems_differ {
            let _ = writeln!(out, "- {}", escape(differ));
        }
    }
    out.push('\n');
    // After the list the opening leads into: a warning of swapped sides, how many runs failed.
    for paragraph in super::after_opening(input) {
        let _ = writeln!(out, "{}\n", prose(&paragraph));
    }
    if let Some([ask, tag]) = super::reported_by_tag(input, &h) {
        // The tag is text to paste into a commit message: a code span keeps its angle brackets as they are.
        let _ = writeln!(out, "{}:\n\n{}\n", escape(&ask), code(&tag, false));
    }
    if !input.reproduce.is_empty() {
        // The commands name labels, which may hold backticks: the fence is longer than any run of them.
        let fence = fence_for(&input.reproduce.join("\n"));
        let _ = writeln!(out, "### To reproduce\n\n{fence}sh");
        for line in &input.reproduce {
            let _ = writeln!(out, "{line}");
        }
        let _ = writeln!(out, "{fence}\n");
        if let Some(file) = &input.job_file {
            let _ = writeln!(out, "The job file {} is written next to this report.\n", code(file, false));
        }
        if let Some(file) = &input.patch_file {
            let _ = writeln!(out, "The fix's patch {} is written next to this report.\n", code(file, false));
        }
    }
    out.push_str("### Details\n\n");
    let (table, left_out) = report_table(&input.comparison, &input.metric);
    out.push_str(&render::render_markdown(&table, RenderOptions { all: true }));
    if left_out > 0 {
        let _ = writeln!(out, "\n{left_out} more changed monitor or perf-profile metric(s) are in the JSON report.");
    }
    out.push('\n');
    if let Some(sentence) = super::lead_sentence(input) {
        let _ = writeln!(out, "{}\n", prose(&sentence));
    }
    if let Some(sentence) = super::sources_sentence(input, &table) {
        let _ = writeln!(out, "{}\n", prose(&sentence));
    }
    if let Some(sentence) = fix_sentence(input, &h) {
        let _ = writeln!(out, "{}\n", prose(&sentence));
    }
    if let Some((title, table)) = super::pooled_table(input) {
        let _ = writeln!(out, "{}\n", escape(&title));
        out.push_str(&render::render_markdown(&table, RenderOptions { all: true }));
        out.push('\n');
    }
    if let Some(b) = &input.bisect {
        out.push_str("### Bisect\n\n");
        for line in bisect_lines(b) {
            let _ = writeln!(out, "- {}", prose(&line));
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
            let _ = writeln!(out, "| {} | {} | {mean} | {sd} | {subject} |", code(&p.commit.short(), true), p.runs);
        }
        out.push('\n');
    }
    if let Some(yaml) = super::inline_job(input) {
        // A fence longer than any run of backticks in the job (a shell command may hold some) cannot end early.
        let fence = fence_for(yaml);
        let title = format!("Save the job below as {}, the file the steps above run", super::JOB_FILE);
        let _ = writeln!(out, "### {}\n\n{fence}yaml\n{}\n{fence}", escape(&title), yaml.trim_end());
    }
    if let Some(patch) = super::inline_patch(input) {
        let fence = fence_for(patch);
        let title = format!("Save the patch below as {}, the fix the steps above apply", super::PATCH_FILE);
        let _ = writeln!(out, "\n### {}\n\n{fence}diff\n{}\n{fence}", escape(&title), patch.trim_end());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qa59_commands_in_prose_are_code_spans_and_the_rest_is_escaped() {
        let cases = [
            (
                "`culprit report 7 --culprit N` makes the mail of the other (N = 2)",
                "`culprit report 7 --culprit N` makes the mail of the other (N = 2)",
            ),
            ("a <b> and `x|y` and *z*", "a \\<b\\> and `x|y` and \\*z\\*"),
            ("one ` alone", "one \\` alone"),
            ("no code", "no code"),
        ];
        for (text, expected) in cases {
            assert_eq!(prose(text), expected, "{text}");
        }
    }
}
