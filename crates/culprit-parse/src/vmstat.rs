//! Parser for vmstat monitor output, the import format of lkp-tests' `programs/vmstat/parse`.
//!
//! Input: what `vmstat --timestamp -n 1` (procps) prints, which is what lkp's vmstat monitor runs:
//!
//! ```text
//! procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----
//!  r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC
//!  2  0      0 224636  33636 6760228    0    0    54   141  129   23  1  1 98  0  0 2015-01-11 20:18:35
//! ```
//!
//! Output: one record per sample line, `time: <epoch>` first (the timestamp columns read as UTC, as lkp does;
//! absent without `-t`), then the columns in order as `procs.r`, `procs.b`, `memory.swpd`, `memory.free`,
//! `memory.buff`, `memory.cache`, `swap.si`, `swap.so`, `io.bi`, `io.bo`, `system.in`, `system.cs`, `cpu.us`,
//! `cpu.sy`, `cpu.id`, `cpu.wa`, `cpu.st` and, with procps 4's guest column, `cpu.gu`. Values are printed as vmstat
//! wrote them.
//!
//! Stricter than lkp on purpose: lkp prints any line with a digit in it, so garbage becomes nonsense metrics. Here a
//! sample line must hold only unsigned integers (plus the timestamp), at most 18 of them and as many as the first
//! sample; header lines are skipped even when a timezone name such as `+03` holds a digit.

use crate::vm_scalability::ruby;
use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};

const PROGRAM: &str = "vmstat";

/// lkp's names for vmstat's columns, in vmstat's order.
const KEYS: [&str; 18] = [
    "procs.r",
    "procs.b",
    "memory.swpd",
    "memory.free",
    "memory.buff",
    "memory.cache",
    "swap.si",
    "swap.so",
    "io.bi",
    "io.bo",
    "system.in",
    "system.cs",
    "cpu.us",
    "cpu.sy",
    "cpu.id",
    "cpu.wa",
    "cpu.st",
    "cpu.gu",
];

pub struct Vmstat;

impl Parser for Vmstat {
    fn name(&self) -> &'static str {
        PROGRAM
    }
    fn kind(&self) -> Kind {
        Kind::Monitor
    }
    fn read_output(&self, input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        parse_text(input.main)
    }
}

fn is_clock(token: &str) -> bool {
    // lkp's test is `/\d\d:\d\d:\d\d/` anywhere in the last column.
    token.as_bytes().windows(8).any(|w| {
        w[0].is_ascii_digit()
            && w[1].is_ascii_digit()
            && w[2] == b':'
            && w[3].is_ascii_digit()
            && w[4].is_ascii_digit()
            && w[5] == b':'
            && w[6].is_ascii_digit()
            && w[7].is_ascii_digit()
    })
}

fn parse_text(text: &str) -> Result<ParseOutput, ParseError> {
    let mut out = ParseOutput::default();
    let mut columns: Option<usize> = None;
    for (index, raw_line) in ruby::gets_lines(text).enumerate() {
        let line_no = index + 1;
        if !raw_line.bytes().any(|b| b.is_ascii_digit()) {
            continue;
        }
        let mut fields = ruby::split_ws(raw_line);
        if matches!(fields.first(), Some(&"r") | Some(&"procs")) {
            continue;
        }
        let mut time = None;
        if fields.last().is_some_and(|t| is_clock(t)) {
            let malformed_time = || ParseError::Malformed {
                program: PROGRAM,
                line: line_no,
                detail: "expected the timestamp columns `YYYY-MM-DD HH:MM:SS` of `vmstat -t`".into(),
            };
            let clock = fields.pop().ok_or_else(malformed_time)?;
            let date = fields.pop().ok_or_else(malformed_time)?;
            time = Some(ruby::utc_epoch(date, clock).ok_or_else(malformed_time)?);
        }
        if fields.is_empty() || fields.len() > KEYS.len() {
            return Err(ParseError::Malformed {
                program: PROGRAM,
                line: line_no,
                detail: format!("expected 1 to {} numeric vmstat columns, found {}", KEYS.len(), fields.len()),
            });
        }
        if let Some(bad) = fields.iter().find(|f| !f.bytes().all(|b| b.is_ascii_digit())) {
            return Err(ParseError::Malformed {
                program: PROGRAM,
                line: line_no,
                detail: format!("expected unsigned integer vmstat columns, found {}", crate::excerpt(bad)),
            });
        }
        let expected = *columns.get_or_insert(fields.len());
        if fields.len() != expected {
            let detail = format!("line {line_no} has {} columns where the first sample had {expected}", fields.len());
            return Err(if fields.len() < expected {
                ParseError::Truncated { program: PROGRAM, detail }
            } else {
                ParseError::Malformed { program: PROGRAM, line: line_no, detail }
            });
        }
        if let Some(epoch) = time {
            out.push("time", epoch.to_string());
        }
        for (key, value) in KEYS.iter().zip(&fields) {
            out.push(*key, *value);
        }
    }
    if out.lines.is_empty() {
        return Err(ParseError::NoResults {
            program: PROGRAM,
            hint: "expected `vmstat -n -t 1` output: a header and sample lines of integers ending in a timestamp"
                .into(),
        });
    }
    Ok(out)
}
