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
//!
//! An incomplete last record is dropped, as lkp's `dump-stat` drops it ("Last record seems incomplete"): a vmstat
//! killed while it wrote, or a file copied short, ends in the start of a line. The last sample line is taken for
//! such a start when it is a prefix of a record (its integer columns, then possibly the start of the timestamp) that
//! stops short of the first record's columns, or inside or before the timestamp the records carry. The output's
//! [`ParseOutput::notes`] say which line was dropped. Anything else that does not read, on any line, is an error
//! naming the line.

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
    fn reads_an_unended_last_line(&self) -> bool {
        true
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

/// Whether `token` is the start of `pattern`, where `d` stands for a digit and any other character for itself.
fn starts_like(token: &str, pattern: &str) -> bool {
    token.len() <= pattern.len()
        && token.bytes().zip(pattern.bytes()).all(|(t, p)| if p == b'd' { t.is_ascii_digit() } else { t == p })
}

/// Whether the fields of the last sample line are the start of a record that was cut off: integer columns, then
/// at most the start of vmstat's `YYYY-MM-DD HH:MM:SS` timestamp, and short of a whole record. A whole record has
/// `columns` integers (those of the first sample; unknown when the line is the only one) and a timestamp when
/// `timestamped` (the records before carry one). A cut right after the columns or inside the last one cannot be
/// told from a whole record without a timestamp, and such a line is read as whole, as lkp reads it.
fn is_cut_record(fields: &[&str], columns: Option<usize>, timestamped: bool) -> bool {
    const DATE: &str = "dddd-dd-dd";
    const CLOCK: &str = "dd:dd:dd";
    let numeric = fields.iter().take_while(|f| f.bytes().all(|b| b.is_ascii_digit())).count();
    let rest = fields.get(numeric..).unwrap_or_default();
    if let (Some(columns), []) = (columns, rest) {
        // A cut inside the year leaves one short integer after the columns: the start of the date.
        if timestamped && numeric == columns + 1 {
            return fields.get(columns).is_some_and(|year| starts_like(year, DATE));
        }
    }
    // Whatever follows the integers must follow all of them, and a record has at most KEYS.len() of them.
    let whole_columns = columns.map_or(numeric <= KEYS.len(), |c| numeric == c);
    if numeric == 0 || columns.is_some_and(|c| numeric > c) {
        return false;
    }
    match rest {
        [] => columns.is_some_and(|c| numeric < c || timestamped),
        [date] => whole_columns && starts_like(date, DATE),
        [date, clock] => {
            whole_columns
                && date.len() == DATE.len()
                && starts_like(date, DATE)
                && clock.len() < CLOCK.len()
                && starts_like(clock, CLOCK)
        }
        _ => false,
    }
}

fn parse_text(text: &str) -> Result<ParseOutput, ParseError> {
    let mut out = ParseOutput::default();
    let mut columns: Option<usize> = None;
    let mut timestamped = false;
    let lines: Vec<&str> = ruby::gets_lines(text).collect();
    // The last line that could hold a sample: only it may be the incomplete end of a record.
    let last_sample_line = lines.iter().rposition(|line| {
        line.bytes().any(|b| b.is_ascii_digit()) && !matches!(ruby::split_ws(line).first(), Some(&"r" | &"procs"))
    });
    // The columns and timestamp the header names, which judge a cut record before any whole one is read (a vmstat
    // killed in its first sample line): its first few columns read as a whole record of those columns.
    let (mut header_columns, mut header_timestamped) = (None, false);
    for (index, raw_line) in lines.iter().enumerate() {
        let line_no = index + 1;
        let mut fields = ruby::split_ws(raw_line);
        match fields.first() {
            Some(&"r") => {
                // vmstat's own names for its columns are the last part of lkp's (`r` of `procs.r`).
                let is_column = |name: &&str| KEYS.iter().any(|key| key.rsplit('.').next() == Some(*name));
                let named = fields.iter().filter(|name| is_column(name)).count();
                header_columns = Some(named);
                // `vmstat -t` names its timestamp's zone after the columns.
                header_timestamped |= fields.len() > named;
                continue;
            }
            Some(&"procs") => {
                header_timestamped |= raw_line.contains("timestamp");
                continue;
            }
            _ => {}
        }
        if !raw_line.bytes().any(|b| b.is_ascii_digit()) {
            continue;
        }
        let judged_by = match columns {
            Some(_) => (columns, timestamped),
            None => (header_columns, header_timestamped),
        };
        if Some(index) == last_sample_line && is_cut_record(&fields, judged_by.0, judged_by.1) {
            out.note(format!(
                "line {line_no}, the last, is an incomplete record ({} of a sample line) and was dropped, as lkp \
                 drops an incomplete last record; the output was cut short, e.g. vmstat was killed while it wrote",
                crate::excerpt(raw_line.trim_end())
            ));
            if out.lines.is_empty() {
                return Err(ParseError::Truncated {
                    program: PROGRAM,
                    detail: format!(
                        "the only sample line, line {line_no}, is incomplete ({}); expected whole lines of \
                         `vmstat -n -t 1`",
                        crate::excerpt(raw_line.trim_end())
                    ),
                });
            }
            break;
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
            // A short line before the last is no cut-off end of the output: the file is damaged there.
            return Err(ParseError::Malformed {
                program: PROGRAM,
                line: line_no,
                detail: format!("{} columns where the first sample had {expected}", fields.len()),
            });
        }
        timestamped |= time.is_some();
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
