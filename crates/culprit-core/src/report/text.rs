//! The plain-text report: the kernel test robot's mail, line for line in its wording, ready to send.

use super::{
    bisect_lines, fix_sentence, headline, opening, report_table, sources_sentence, subject_line, value_text, wrap,
    ReportError, ReportInput,
};
use crate::compare::render::{render_table, render_table_body, RenderOptions};
use crate::words::counted;
use std::fmt::Write as _;

/// The indentation of commands and list items, as the robot's mails have it.
const INDENT: &str = "        ";

/// The robot's separator before the details (kept within the mail width).
pub(crate) const DETAILS_RULE: &str =
    "----------------------------------------------------------------------------------------->";

/// The mail as plain text.
pub fn render_text(input: &ReportInput) -> Result<String, ReportError> {
    let h = headline(input)?;
    let mut out = String::new();
    let _ = writeln!(out, "{}\n", subject_line(input)?);
    out.push_str("Greeting,\n\n");
    out.push_str(&wrap(&opening(input, &h), ""));
    out.push_str("\n\n");
    let block = super::commit_block(input);
    for (noun, value) in &block {
        let _ = writeln!(out, "{noun}: {value}");
    }
    // The robot's two blank lines close the commit block; with no commit blamed there is no block to close.
    if !block.is_empty() {
        out.push_str("\n\n");
    }
    // After the block the opening leads into: a warning of swapped sides, how many runs failed.
    for paragraph in super::after_opening(input) {
        out.push_str(&wrap(&paragraph, ""));
        out.push_str("\n\n");
    }
    let _ = writeln!(out, "in testcase: {}", input.testcase);
    // Like the commit line, the machine line is a fact the robot never breaks, even past the mail width.
    let _ = writeln!(out, "on test machine: {}", input.machine.describe_with(&input.host));
    if let Some(line) = super::machines_line(input) {
        out.push_str(&wrap(&line, ""));
    }
    if let Some(machines) = &input.machines_differ {
        out.push_str(&wrap(&format!("({machines})"), ""));
    }
    if !input.params.is_empty() {
        out.push_str("with following parameters:\n\n");
        for (k, v) in &input.params {
            let _ = writeln!(out, "\t{k}: {v}");
        }
        if let Some(sentence) = super::not_applied_sentence(input) {
            out.push('\n');
            out.push_str(&wrap(&sentence, ""));
        }
    }
    // Where the files were is a fact of the runs, not a param of the job (whose `fs:` Culprit does not apply): it
    // has a block of its own, in the params' style.
    let scratch = super::scratch_lines(input);
    if !scratch.is_empty() {
        let _ = writeln!(out, "{}{}\n", if input.params.is_empty() { "" } else { "\n" }, super::scratch_lead(input));
        for (k, v) in &scratch {
            let _ = writeln!(out, "\t{k}: {v}");
        }
        if let Some(differ) = &input.filesystems_differ {
            out.push('\n');
            out.push_str(&wrap(&format!("({differ})"), ""));
        }
    }
    out.push_str("\n\n");
    if let Some([ask, tag]) = super::reported_by_tag(input, &h) {
        let _ = writeln!(out, "{ask}\n{tag}\n\n");
    }
    if !input.reproduce.is_empty() {
        out.push_str("To reproduce:\n\n");
        if super::inline_job(input).is_some() {
            let _ = writeln!(out, "{INDENT}# save the job at the end of this mail as {}", super::JOB_FILE);
        }
        if super::inline_patch(input).is_some() {
            let file = super::PATCH_FILE;
            let _ = writeln!(out, "{INDENT}# and the patch at its very end as {file}, in the same directory");
        }
        for line in &input.reproduce {
            out.push_str(&super::break_command(line, INDENT));
        }
        out.push('\n');
    }
    if let Some(file) = &input.job_file {
        let _ = writeln!(out, "The job file {file} is written next to this report.\n");
    }
    if let Some(file) = &input.patch_file {
        let _ = writeln!(out, "The fix's patch {file} is written next to this report.\n");
    }
    out.push_str("Details are as below:\n");
    out.push_str(DETAILS_RULE);
    out.push_str("\n\n");
    let (table, left_out) = report_table(&input.comparison, &input.metric);
    out.push_str(&render_table(&table, RenderOptions { all: true }));
    if left_out > 0 {
        let _ = writeln!(out, "# {left_out} more changed monitor or perf-profile metric(s); the json format has them all");
    }
    out.push('\n');
    if let Some(sentence) = super::lead_sentence(input) {
        out.push_str(&wrap(&sentence, ""));
        out.push('\n');
    }
    if let Some(sentence) = sources_sentence(input, &table) {
        out.push_str(&wrap(&sentence, ""));
        out.push('\n');
    }
    if let Some(sentence) = fix_sentence(input, &h) {
        out.push_str(&wrap(&sentence, ""));
        out.push('\n');
    }
    if let Some((title, table)) = super::pooled_table(input) {
        out.push_str(&wrap(&title, ""));
        out.push('\n');
        out.push_str(&render_table_body(&table, RenderOptions { all: true }));
        out.push('\n');
    }
    if let Some(b) = &input.bisect {
        for line in bisect_lines(b) {
            out.push_str(&wrap(&line, ""));
        }
        out.push('\n');
    }
    if input.trend.len() > 2 {
        let _ = writeln!(out, "{} over the tested commits (oldest first):\n", input.metric);
        let width = input.trend.iter().map(|p| p.commit.short().len()).max().unwrap_or(10);
        for p in &input.trend {
            let subject = p.commit.subject.as_deref().unwrap_or("");
            // Mean, spread and runs in columns of their own, so the list reads down them whatever the digits.
            let short = p.commit.short();
            let line = match p.mean {
                None => format!("{INDENT}{short:<width$}  {:>8} {:<8} {:>7}  {subject}", "untestable", "", ""),
                Some(mean) => {
                    let sd = p
                        .stddev
                        .filter(|s| s.is_finite())
                        .map(|s| format!("±{}", super::printf::general(s, 2, false)))
                        .unwrap_or_default();
                    let runs = counted(p.runs, "run");
                    format!("{INDENT}{short:<width$}  {:>8} {sd:<8} {runs:>7}  {subject}", value_text(mean))
                }
            };
            // A long subject is cut rather than wrapped: the list is read down its columns.
            let cut: String = line.chars().take(super::LINE_WIDTH).collect();
            let _ = writeln!(out, "{}", cut.trim_end());
        }
        out.push('\n');
    }
    if let Some(yaml) = super::inline_job(input) {
        let _ = writeln!(out, "Save the job below as {}, the file the steps above run:\n", super::JOB_FILE);
        out.push_str(yaml);
        if !yaml.ends_with('\n') {
            out.push('\n');
        }
    }
    if let Some(patch) = super::inline_patch(input) {
        let _ = writeln!(out, "\nSave the patch below as {}, the fix the steps above apply:\n", super::PATCH_FILE);
        out.push_str(patch);
        if !patch.ends_with('\n') {
            out.push('\n');
        }
    }
    Ok(out)
}
