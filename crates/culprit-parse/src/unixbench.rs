//! Parser for UnixBench output, the import format of lkp-tests' `programs/unixbench/parse`.
//!
//! Input: the report of byte-unixbench's `./Run <test>` (one test per run, as lkp runs it):
//!
//! ```text
//! Benchmark Run: Mon Jan 08 2024 07:40:42 - 07:46:52
//! File Write 1024 bufsize 2000 maxblocks      3121976.0 KBps  (30.0 s, 7 samples)
//! System Benchmarks Partial Index              BASELINE       RESULT    INDEX
//! File Copy 1024 bufsize 2000 maxblocks          3960.0    1675624.0   4231.4
//! System Benchmarks Index Score (Partial Only)                         4231.4
//! ```
//!
//! Output: `score` (the index score, when the report has one), `throughput` (the test's result: the RESULT column
//! of the index table, else the figure of its `KBps`/`lps`/`lpm`/`score` line), `workload` (throughput times the
//! run's duration in seconds, from the `Benchmark Run:` clock times) and `test.pass: 1`; all numbers as Ruby
//! prints Floats. When UnixBench reports a graphics test aborting or the X server crashing and there is no result,
//! the output is lkp's `test.fail: 1`. Output without a result for another reason (empty, garbage, cut short) is an
//! error here, where lkp would print `test.fail: 1` and a warning. So is a result or score that is not a number,
//! which lkp would read as 0.

use crate::vm_scalability::ruby;
use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};
use regex::Regex;
use std::sync::OnceLock;

const PROGRAM: &str = "unixbench";

pub struct Unixbench;

impl Parser for Unixbench {
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

struct Patterns {
    run: Regex,
    index_header: Regex,
    result: Regex,
    score: Regex,
    graphics_failed: Regex,
    server_crashed: Regex,
}

fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        // The patterns are constants, so a compile failure is a programming error caught by every test.
        let re = |p: &str| Regex::new(p).expect("constant unixbench pattern compiles");
        Patterns {
            run: re(r"^Benchmark Run: .+ ([0-9]+:[0-9]+:[0-9]+) - ([0-9]+:[0-9]+:[0-9]+)$"),
            index_header: re(r"^.+ Benchmarks .*Index .* INDEX$"),
            result: re(r"^.+? ([0-9.]+) (KBps|lps|lpm|score)[ \t\n\x0B\x0C\r]+\([0-9.]+ s, [0-9]+ samples?\)"),
            score: re(r"^.+ Benchmarks Index Score .* ([0-9.]+)$"),
            graphics_failed: re(r"Run: .+ graphics: .+ (aborting|broken)"),
            server_crashed: re(r"Caught signal .+ Server aborting"),
        }
    })
}

/// Seconds since midnight of `H:M:S`, or `None` when it is not a valid clock time.
fn seconds_of_day(clock: &str) -> Option<f64> {
    let mut parts = clock.split(':');
    let h: u32 = parts.next()?.parse().ok()?;
    let m: u32 = parts.next()?.parse().ok()?;
    let s: u32 = parts.next()?.parse().ok()?;
    if h > 23 || m > 59 || s > 59 {
        return None;
    }
    Some(f64::from(h * 3600 + m * 60 + s))
}

/// A figure of the report as Ruby's `to_f` reads it, or an error naming it where `to_f` would quietly read a
/// missing or non-numeric figure (`---`, `nan`, a lone `.`) as 0, which would be stored as a measurement.
fn figure(text: &str, what: &str, line: usize) -> Result<f64, ParseError> {
    if crate::dbench::ruby_num::number(text).is_none() {
        return Err(ParseError::Malformed {
            program: PROGRAM,
            line,
            detail: format!("{what} is {}, not a number", crate::excerpt(text)),
        });
    }
    Ok(ruby::to_f(text))
}

fn parse_text(text: &str) -> Result<ParseOutput, ParseError> {
    let p = patterns();
    let mut duration: Option<f64> = None;
    let mut throughput: Option<f64> = None;
    let mut score: Option<f64> = None;
    let mut failed = false;
    let mut saw_unixbench = false;

    let mut lines = ruby::gets_lines(text).enumerate();
    while let Some((index, raw_line)) = lines.next() {
        let line_no = index + 1;
        let line = ruby::chomp(raw_line);
        if let Some(c) = p.run.captures(line) {
            saw_unixbench = true;
            let (Some(start), Some(end)) = (seconds_of_day(&c[1]), seconds_of_day(&c[2])) else {
                return Err(ParseError::Malformed {
                    program: PROGRAM,
                    line: line_no,
                    detail: "expected `Benchmark Run: <date> HH:MM:SS - HH:MM:SS` with valid clock times".into(),
                });
            };
            // Only the clock times matter; an end before the start means the run crossed midnight.
            duration = Some(if end > start { end - start } else { end + 86_400.0 - start });
        } else if p.index_header.is_match(line) {
            saw_unixbench = true;
            let Some((_, next)) = lines.next() else {
                return Err(ParseError::Truncated {
                    program: PROGRAM,
                    detail: format!("the index table header on line {line_no} is the last line; its row is missing"),
                });
            };
            let next = ruby::chomp(next);
            if !next.is_empty() {
                let fields = ruby::split_ws(next);
                let result = fields.len().checked_sub(2).and_then(|i| fields.get(i)).copied().unwrap_or("");
                throughput = Some(figure(result, "the RESULT column of the index table", line_no + 1)?);
            }
        } else if let Some(c) = p.result.captures(line) {
            saw_unixbench = true;
            throughput = Some(figure(&c[1], "the test result", line_no)?);
        } else if let Some(c) = p.score.captures(line) {
            saw_unixbench = true;
            score = Some(figure(&c[1], "the index score", line_no)?);
        } else if p.graphics_failed.is_match(line) || p.server_crashed.is_match(line) {
            saw_unixbench = true;
            failed = true;
        }
    }

    let mut out = ParseOutput::default();
    let (Some(duration), Some(throughput)) = (duration, throughput) else {
        if failed {
            out.push("test.fail", "1");
            return Ok(out);
        }
        let missing = if duration.is_none() { "`Benchmark Run: ... HH:MM:SS - HH:MM:SS` line" } else { "result line" };
        return Err(if saw_unixbench {
            ParseError::Truncated {
                program: PROGRAM,
                detail: format!("found no {missing} (lkp would record test.fail: 1)"),
            }
        } else {
            ParseError::NoResults {
                program: PROGRAM,
                hint: "expected a UnixBench report with `Benchmark Run:` and a result line such as \
                       `... 3121976.0 KBps  (30.0 s, 7 samples)`"
                    .into(),
            }
        });
    };
    if let Some(score) = score {
        out.push("score", crate::rubyfmt::float(score));
    }
    out.push("throughput", crate::rubyfmt::float(throughput));
    out.push("workload", crate::rubyfmt::float(duration * throughput));
    out.push("test.pass", "1");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unixbench_non_numeric_result_is_an_error() {
        let text = "Benchmark Run: Mon Jan 08 2024 07:40:42 - 07:46:52\n\
                    System Benchmarks Partial Index              BASELINE       RESULT    INDEX\n\
                    File Copy 1024 bufsize 2000 maxblocks          3960.0    nan   4231.4\n";
        match parse_text(text) {
            Err(ParseError::Malformed { line: 3, detail, .. }) => assert!(detail.contains("RESULT"), "{detail}"),
            other => panic!("{other:?}"),
        }
    }
}
