//! Parser for pgbench output: PostgreSQL's TPC-B-like benchmark summary (`tps = ...`, `latency average = ...`).
//!
//! Format read: the summary pgbench prints to stdout at the end of a run, as lkp-tests runs it
//! (`pgbench -n -T <runtime> -c <nr_task> -j <worker_threads>`, `programs/pgbench-setup/setup`):
//!
//! ```text
//! pgbench (15.18 (Debian 15.18-0+deb12u1))
//! transaction type: <builtin: TPC-B (sort of)>
//! ...
//! number of transactions actually processed: 907
//! number of failed transactions: 0 (0.000%)
//! latency average = 6.609 ms
//! initial connection time = 11.319 ms
//! tps = 302.595078 (without initial connection time)
//! ```
//!
//! Metrics (prefix `pgbench.`), one line per matching output line, in output order as lkp prints them:
//!
//! | output line | key | source |
//! |---|---|---|
//! | `number of transactions actually processed: N` (also `N/M` with `-t`) | `transactions` | lkp |
//! | `latency average = X ms` (or `us`, converted to ms) | `latency_ms` | lkp |
//! | `tps = X (including connections establishing)` (PostgreSQL 13 and older) | `tps` | lkp |
//! | `tps = X (excluding connections establishing)` (PostgreSQL 13 and older) | `tps_exclude_connect` | lkp |
//! | `tps = X (without initial connection time)` (PostgreSQL 14 and newer) | `tps` | Culprit |
//! | `number of failed transactions: N (...)` (PostgreSQL 15 and newer) | `failed_transactions` | Culprit |
//! | `latency stddev = X ms` (with `-P`, `-R` or `-L`) | `latency_stddev_ms` | Culprit |
//! | `initial connection time = X ms` (PostgreSQL 14 and newer) | `initial_connection_time_ms` | Culprit |
//!
//! Where Culprit differs from lkp's `programs/pgbench/parse`, deliberately:
//! - PostgreSQL 14 replaced the two `tps` lines by one, `tps = X (without initial connection time)`, which lkp's
//!   parser does not recognise, so on any current PostgreSQL lkp reports no throughput at all. Culprit names that
//!   line's figure `tps`, because it is the only throughput pgbench prints; note that it excludes connection set-up,
//!   like the old `tps_exclude_connect`, so `tps` from PostgreSQL 13 and from 14+ are not comparable.
//! - The Culprit keys above come from lines lkp ignores; they never appear in output of the PostgreSQL versions
//!   whose summary lkp's parser was written for, except `latency stddev` with `-P`/`-R`/`-L`. They are pushed as
//!   Culprit's own ([`ParseOutput::push_own`]), so `culprit parse` prints lkp's lines alone and names them apart.
//! - lkp prints whatever it found; Culprit reports an output without a `tps` line as [`ParseError::Truncated`]
//!   (pgbench started but never finished its summary, e.g. killed) or [`ParseError::NoResults`] (not pgbench
//!   output), and a number lkp's Ruby would choke on (`Float("1.")`) as [`ParseError::Malformed`].
//!
//! Values are printed as lkp prints them: `transactions` and the `tps` figures as the digits pgbench wrote,
//! the millisecond figures as Ruby prints a `Float`.

use crate::rubyfmt;
use crate::{digit_prefix, number_prefix};
use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};

pub struct Pgbench;

const PROGRAM: &str = "pgbench";

impl Parser for Pgbench {
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

/// A decimal number as pgbench prints it (`302.595078`, `907`): digits with at most one dot that has digits on
/// both sides. Anything else (`1.`, `.5`, `1.2.3`) is an error in lkp's `Float()` too.
fn decimal(text: &str, line: usize, what: &str) -> Result<f64, ParseError> {
    let well_formed = match text.split_once('.') {
        Some((whole, fraction)) => {
            !whole.is_empty()
                && !fraction.is_empty()
                && whole.bytes().all(|b| b.is_ascii_digit())
                && fraction.bytes().all(|b| b.is_ascii_digit())
        }
        None => !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()),
    };
    let value = if well_formed { text.parse::<f64>().ok().filter(|v| v.is_finite()) } else { None };
    value.ok_or_else(|| ParseError::Malformed {
        program: PROGRAM,
        line,
        detail: format!("{what}: expected a decimal number such as 302.595078, got {}", crate::excerpt(text)),
    })
}

/// The text after `marker` on `line`, when the line holds it (lkp's patterns are unanchored).
fn after<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    line.find(marker).and_then(|at| line.get(at + marker.len()..))
}

/// A `<label> = X ms` figure in milliseconds, or `None` when the unit is not `ms`/`us` (lkp skips such lines).
fn milliseconds(rest: &str, line: usize, what: &str) -> Result<Option<f64>, ParseError> {
    let digits = number_prefix(rest);
    let unit = rest.get(digits.len()..).unwrap_or_default();
    if digits.is_empty() {
        return Ok(None);
    }
    let divisor = if unit.starts_with(" ms") {
        1.0
    } else if unit.starts_with(" us") {
        1000.0
    } else {
        return Ok(None);
    };
    Ok(Some(decimal(digits, line, what)? / divisor))
}

fn parse_text(text: &str) -> Result<ParseOutput, ParseError> {
    let mut out = ParseOutput::default();
    let mut saw_pgbench = false;
    let mut saw_tps = false;
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = raw.trim_end_matches('\r');
        if line.starts_with("pgbench (") || line.starts_with("transaction type:") || line.starts_with("progress: ") {
            saw_pgbench = true;
        }
        if let Some(rest) = after(line, "number of transactions actually processed: ") {
            let digits = digit_prefix(rest);
            if !digits.is_empty() {
                out.push("transactions", digits);
                saw_pgbench = true;
            }
        } else if let Some(rest) = after(line, "number of failed transactions: ") {
            let digits = digit_prefix(rest);
            if !digits.is_empty() {
                out.push_own("failed_transactions", digits);
            }
        } else if let Some(rest) = after(line, "latency average = ") {
            if let Some(ms) = milliseconds(rest, line_no, "latency average")? {
                out.push("latency_ms", rubyfmt::float(ms));
            }
        } else if let Some(rest) = after(line, "latency stddev = ") {
            if let Some(ms) = milliseconds(rest, line_no, "latency stddev")? {
                out.push_own("latency_stddev_ms", rubyfmt::float(ms));
            }
        } else if let Some(rest) = after(line, "initial connection time = ") {
            if let Some(ms) = milliseconds(rest, line_no, "initial connection time")? {
                out.push_own("initial_connection_time_ms", rubyfmt::float(ms));
            }
        } else if let Some(rest) = after(line, "tps = ") {
            let digits = number_prefix(rest);
            let qualifier = rest.get(digits.len()..).unwrap_or_default();
            // PostgreSQL 14's line is no line lkp's parser matches: its `tps` is Culprit's own key.
            let (key, lkp_s) = if digits.is_empty() {
                continue;
            } else if qualifier.starts_with(" (including connections establishing)") {
                ("tps", true)
            } else if qualifier.starts_with(" (without initial connection time)") {
                ("tps", false)
            } else if qualifier.starts_with(" (excluding connections establishing)") {
                ("tps_exclude_connect", true)
            } else {
                continue;
            };
            decimal(digits, line_no, "tps")?;
            if lkp_s {
                out.push(key, digits);
            } else {
                out.push_own(key, digits);
            }
            saw_tps = true;
        }
    }
    if saw_tps {
        return Ok(out);
    }
    Err(if saw_pgbench {
        ParseError::Truncated {
            program: PROGRAM,
            detail: "pgbench started but never printed its `tps = ...` summary line; the run was probably killed, \
                     timed out or lost its server"
                .into(),
        }
    } else {
        ParseError::NoResults {
            program: PROGRAM,
            hint: "expected pgbench's summary with a `tps = <number> (without initial connection time)` line, as \
                   printed by `pgbench -c <clients> -j <threads> -T <seconds>`"
                .into(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(text: &str) -> Result<String, ParseError> {
        parse_text(text).map(|o| o.render())
    }

    #[test]
    fn old_summary_gives_lkps_four_keys() {
        // The summary of PostgreSQL 13 and older, the shape lkp's parser was written for.
        let text = "transaction type: <builtin: TPC-B (sort of)>\n\
                    number of transactions actually processed: 12000\n\
                    latency average = 1500 us\n\
                    tps = 399.123456 (including connections establishing)\n\
                    tps = 401.000001 (excluding connections establishing)\n";
        assert_eq!(
            render(text).as_deref(),
            Ok("transactions: 12000\nlatency_ms: 1.5\ntps: 399.123456\ntps_exclude_connect: 401.000001")
        );
    }

    #[test]
    fn microseconds_are_converted_as_ruby_prints_them() {
        let text = "latency average = 0.5 us\ntps = 10 (without initial connection time)\n";
        assert_eq!(render(text).as_deref(), Ok("latency_ms: 0.0005\ntps: 10"));
    }

    #[test]
    fn malformed_numbers_name_their_line() {
        for (text, line) in [
            ("pgbench (15)\ntps = 1. (without initial connection time)\n", 2),
            ("latency average = 1.2.3 ms\n", 1),
            ("x\ny\ntps = ... (excluding connections establishing)\n", 3),
        ] {
            match parse_text(text) {
                Err(ParseError::Malformed { line: got, .. }) => assert_eq!(got, line, "{text:?}"),
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn header_without_tps_is_truncated_and_other_text_has_no_results() {
        assert!(matches!(parse_text("pgbench (15.18)\n"), Err(ParseError::Truncated { .. })));
        assert!(matches!(
            parse_text("number of transactions actually processed: 5\n"),
            Err(ParseError::Truncated { .. })
        ));
        assert!(matches!(parse_text(""), Err(ParseError::NoResults { .. })));
        assert!(matches!(parse_text("tps = 5 (some future wording)\n"), Err(ParseError::NoResults { .. })));
    }

    #[test]
    fn unknown_latency_unit_is_skipped_like_lkp() {
        let text = "latency average = 3 s\ntps = 1.5 (without initial connection time)\n";
        assert_eq!(render(text).as_deref(), Ok("tps: 1.5"));
    }
}
