//! Parser for will-it-scale output, the import format of lkp-tests' `programs/will-it-scale/parse`.
//!
//! Input: the CSV that will-it-scale's `runtest.py <test> <duration> <mode> <tasks>` prints (as lkp runs it), a
//! header `tasks,processes,processes_idle,threads,threads_idle,linear` followed by one row per task count, plus any
//! `... Assertion `...' failed.` lines the test wrote to stderr:
//!
//! ```text
//! tasks,processes,processes_idle,threads,threads_idle,linear
//! 0,0,100,0,100,0
//! 104,1200363,0.04,0,0.00,0
//! ```
//!
//! Output: per row (rows of 0 tasks and rows where both processes and threads are 0 are skipped, as lkp does)
//! `<tasks>.<column>: <value>` for every header column after `tasks`; per assertion line
//! `<Assertion_text_>: 1`; then `scalability` (`%f`, when `linear` is non-zero), `per_process_ops`,
//! `per_thread_ops` (mean operations per task, truncated) and `workload` (total operations, truncated).
//! Like lkp, a last line without a newline is ignored.

use crate::vm_scalability::ruby;
use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};

const PROGRAM: &str = "will-it-scale";

pub struct WillItScale;

impl Parser for WillItScale {
    fn name(&self) -> &'static str {
        PROGRAM
    }
    fn kind(&self) -> Kind {
        Kind::Benchmark
    }
    fn read_output(&self, input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        parse_text(input.main)
    }
}

fn is_header(line: &str) -> bool {
    !line.is_empty() && line.bytes().all(|b| b.is_ascii_lowercase() || b == b'_' || b == b',')
}

fn is_row(line: &str) -> bool {
    !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b',')
}

/// lkp's metric name for an assertion failure: the text after the last `: `, every character outside
/// `[a-zA-Z0-9<>!=]` mapped to `_`, runs of `_` squeezed.
fn assertion_key(line: &str) -> Option<String> {
    let start = line.find("Assertion ")?;
    let end = line.rfind(" failed")?;
    if end < start + "Assertion ".len() {
        return None;
    }
    let matched = line.get(start..end + " failed".len())?;
    let tail = match matched.rfind(": ") {
        Some(pos) => matched.get(pos + 2..).unwrap_or(""),
        None => matched,
    };
    let mut key = String::with_capacity(tail.len());
    for c in tail.chars() {
        let keep = c.is_ascii_alphanumeric() || matches!(c, '<' | '>' | '!' | '=');
        let c = if keep { c } else { '_' };
        if !(c == '_' && key.ends_with('_')) {
            key.push(c);
        }
    }
    Some(key)
}

fn parse_text(text: &str) -> Result<ParseOutput, ParseError> {
    let mut out = ParseOutput::default();
    let mut names: Option<Vec<String>> = None;
    let mut scalability: Vec<f64> = Vec::new();
    let mut per_process: Vec<ruby::Num> = Vec::new();
    let mut per_thread: Vec<ruby::Num> = Vec::new();
    let mut workload = 0.0_f64;
    let mut saw_header_or_row = false;

    for (index, raw_line) in ruby::gets_lines(text).enumerate() {
        let line_no = index + 1;
        let Some(line) = ruby::chomp_bang(raw_line) else {
            continue;
        };
        if is_header(line) {
            saw_header_or_row = true;
            names = Some(ruby::split_comma(line).into_iter().skip(1).map(str::to_string).collect());
        } else if is_row(line) {
            saw_header_or_row = true;
            let fields = ruby::split_comma(line);
            let Some((&nr_task, values)) = fields.split_first() else {
                continue;
            };
            if nr_task == "0" {
                continue;
            }
            let field = |i: usize| values.get(i).copied().unwrap_or("");
            let processes = ruby::to_i(field(0));
            let threads = ruby::to_i(field(2));
            // A row of zeros is a failed sample (the test asserted); lkp drops it.
            if processes == 0 && threads == 0 {
                continue;
            }
            let tasks = ruby::to_i(nr_task);
            if tasks == 0 {
                return Err(ParseError::Malformed {
                    program: PROGRAM,
                    line: line_no,
                    detail: format!(
                        "task count {} is zero; operations per task are undefined",
                        crate::excerpt(nr_task)
                    ),
                });
            }
            let linear = ruby::to_i(values.last().copied().unwrap_or(""));
            if linear != 0 && nr_task != "1" {
                scalability.push(ruby::to_f(field(0)) / linear as f64);
            }
            per_process.push(ruby::Num::Float(processes as f64 / tasks as f64));
            workload += processes as f64;
            per_thread.push(ruby::Num::Float(threads as f64 / tasks as f64));
            workload += threads as f64;
            let Some(names) = &names else {
                return Err(ParseError::Malformed {
                    program: PROGRAM,
                    line: line_no,
                    detail: "a result row before the `tasks,processes,...` header line".into(),
                });
            };
            for (i, name) in names.iter().enumerate() {
                out.push(format!("{nr_task}.{name}"), field(i));
            }
        } else if let Some(key) = assertion_key(line) {
            out.push(key, "1");
        }
    }

    if let Some(last) = scalability.last() {
        out.push("scalability", ruby::printf_f(*last, 6));
    }
    if !per_process.is_empty() {
        out.push("per_process_ops", printf_d("per_process_ops", ruby::average(&per_process))?);
    }
    if !per_thread.is_empty() {
        out.push("per_thread_ops", printf_d("per_thread_ops", ruby::average(&per_thread))?);
    }
    if workload != 0.0 {
        out.push("workload", printf_d("workload", workload)?);
    }
    if out.lines.is_empty() {
        return Err(if saw_header_or_row {
            ParseError::Truncated {
                program: PROGRAM,
                detail: "the CSV header is there but no row with a non-zero task count and non-zero operations".into(),
            }
        } else {
            ParseError::NoResults {
                program: PROGRAM,
                hint: "expected the CSV `tasks,processes,processes_idle,threads,threads_idle,linear` and its rows"
                    .into(),
            }
        });
    }
    Ok(out)
}

fn printf_d(key: &str, x: f64) -> Result<String, ParseError> {
    ruby::printf_d(x).ok_or_else(|| ParseError::Malformed {
        program: PROGRAM,
        line: 0,
        detail: format!("{key} is {x}, which lkp cannot print as an integer"),
    })
}
