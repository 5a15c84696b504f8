//! Parser for sysbench's OLTP report (`oltp_read_only`, `oltp_read_write`, ...), with lkp-tests' `oltp` metric names.
//!
//! lkp's `programs/oltp` runs `sysbench ... oltp_read_only.lua run` against MySQL; Culprit runs the same sysbench
//! tests against a throwaway MariaDB or PostgreSQL server (`culprit-run`'s oltp program). The report is sysbench's
//! whichever driver it used (`tests/data/real/oltp/` holds runs of both):
//!
//! ```text
//! SQL statistics:
//!     queries performed:
//!         read:                            14392
//!         write:                           4085
//!         other:                           2071
//!         total:                           20548
//!     transactions:                        1022   (507.45 per sec.)
//!     queries:                             20548  (10202.55 per sec.)
//!     ignored errors:                      6      (2.98 per sec.)
//! ...
//! Latency (ms):
//!          min:                                    0.74
//!          avg:                                    3.91
//! ...
//! Threads fairness:
//!     events (avg/stddev):           511.0000/9.00
//!     execution time (avg/stddev):   2.0000/0.00
//! ```
//!
//! Metrics (prefix `oltp.`), one line per matching output line in output order, as lkp's `programs/oltp/parse`
//! prints them (each line is matched against lkp's patterns in its order, the first that matches wins):
//!
//! | output line | keys |
//! |---|---|
//! | `read: N`, `write: N`, `other: N` | `read`, `write`, `other` (queries of each kind) |
//! | `transactions: N (X per sec.)` | `transactions`, `transactions/s` |
//! | `queries: N (X per sec.)` | `queries`, `queries/s` |
//! | `min:`, `avg:`, `max:`, `95th percentile:`, `sum:` (ms) | `latency_min_ms`, `latency_avg_ms`, `latency_max_ms`, `latency_95th_ms`, `latency_sum_ms` |
//! | `events (avg/stddev): A/S` | `thread_events_stddev%` = S * 100 / A |
//! | `execution time (avg/stddev): A/S` | `thread_time_stddev%` = S * 100 / A |
//! | `ignored errors: N (...)` | `ignored_errors` (Culprit's: the transactions PostgreSQL aborted, deadlocks among them, which sysbench retried) |
//!
//! sysbench 0.4 and 0.5 (still in old distributions and in mail threads of kernel regressions) print the report as
//! `OLTP test statistics:`, without a `queries:` line, and 0.4 its latencies under `per-request statistics:` with
//! the 95th percentile as `approx.  95 percentile: 41.30ms`. As Culprit extensions, which lkp's parser lacks:
//!
//! | output line | keys |
//! |---|---|
//! | `total: N` of `queries performed:`, then `read/write requests: N (X per sec.)` and `other operations: N (Y per sec.)` | `queries` (N of `total:`), `queries/s` (X + Y, two decimals), when `other operations:` is read |
//! | `approx.  95 percentile: Tms` | `latency_95th_ms` (another percentile, from `--percentile`, gives nothing) |
//! | `deadlocks: N (...)` (0.4) | `ignored_errors`: 0.4's count of transactions that met a deadlock and were retried |
//!
//! Numbers are copied as sysbench printed them; the two shares are Ruby floats. Where Culprit is stricter than lkp,
//! which prints whatever it found: an output without a `transactions` line is [`ParseError::Truncated`] when
//! sysbench started its threads (a killed run) and [`ParseError::NoResults`] otherwise (sysbench could not connect,
//! or the output is not sysbench's); a fairness line with an average of 0 (no event at all) is malformed, where
//! lkp would print NaN.

use crate::rubyfmt;
use crate::{digit_prefix, number_prefix};
use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};

pub struct Oltp;

const PROGRAM: &str = "oltp";

impl Parser for Oltp {
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

/// The digits `text` starts with after blanks (lkp's `\s+(\d+)`), when there are any.
fn digits(text: &str) -> Option<&str> {
    Some(digit_prefix(text.trim_start())).filter(|d| !d.is_empty())
}

/// The `[0-9.]` run `text` starts with after blanks (lkp's `\s+([\d.]+)`), when there is one.
fn decimal(text: &str) -> Option<&str> {
    Some(number_prefix(text.trim_start())).filter(|d| !d.is_empty())
}

/// What follows `marker` on `line`, when the line holds it and at least one blank follows (lkp's `marker\s+`).
fn after<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    let rest = &line[line.find(marker)? + marker.len()..];
    rest.starts_with(char::is_whitespace).then_some(rest)
}

/// `N (X per sec.)`: the count and the rate, as lkp's `(\d+)\s+\(([\d.]+) per sec.\)` captures them.
fn count_and_rate(rest: &str) -> Option<(&str, &str)> {
    let count = digits(rest)?;
    let after_count = rest.trim_start()[count.len()..].trim_start().strip_prefix('(')?;
    let rate = decimal(after_count)?;
    after_count[rate.len()..].starts_with(" per sec.").then_some((count, rate))
}

/// `A/S` of a fairness line, as the share S * 100 / A in percent.
fn stddev_share(rest: &str, line: usize, what: &str) -> Result<Option<String>, ParseError> {
    let Some(average) = decimal(rest) else { return Ok(None) };
    let Some(stddev) = rest.trim_start()[average.len()..].strip_prefix('/').and_then(decimal) else {
        return Ok(None);
    };
    let number = |text: &str| {
        text.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| ParseError::Malformed {
            program: PROGRAM,
            line,
            detail: format!("{what}: expected a number such as 511.0000, got {}", crate::excerpt(text)),
        })
    };
    let (average, stddev) = (number(average)?, number(stddev)?);
    if average == 0.0 {
        return Err(ParseError::Malformed {
            program: PROGRAM,
            line,
            detail: format!("{what}: an average of 0 (no thread ran an event), so no share of it"),
        });
    }
    Ok(Some(rubyfmt::float(stddev * 100.0 / average)))
}

fn parse_text(text: &str) -> Result<ParseOutput, ParseError> {
    let mut out = ParseOutput::default();
    let mut threads_started = false;
    let mut saw_transactions = false;
    // sysbench 0.4's and 0.5's report spells the queries out in lines of their own (see the module docs).
    let mut queries_total = None;
    let mut request_rate = None;
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = raw.trim_end_matches('\r');
        if line.contains("Threads started!") {
            threads_started = true;
        }
        // lkp's patterns in lkp's order; a line yields what its first matching pattern says.
        let plain = [("read:", "read"), ("write:", "write"), ("other:", "other")];
        if let Some((count, key)) = plain.iter().find_map(|(marker, key)| Some((digits(after(line, marker)?)?, key))) {
            out.push(*key, count);
        } else if let Some((count, rate)) = after(line, "transactions:").and_then(count_and_rate) {
            out.push("transactions", count);
            out.push("transactions/s", rate);
            saw_transactions = true;
        } else if let Some((count, rate)) = after(line, "queries:").and_then(count_and_rate) {
            out.push("queries", count);
            out.push("queries/s", rate);
        } else if let Some(value) = ["max:", "min:", "avg:", "95th percentile:", "sum:"]
            .iter()
            .find_map(|marker| after(line, marker).and_then(decimal).map(|value| (*marker, value)))
        {
            let key = match value.0 {
                "max:" => "latency_max_ms",
                "min:" => "latency_min_ms",
                "avg:" => "latency_avg_ms",
                "95th percentile:" => "latency_95th_ms",
                _ => "latency_sum_ms",
            };
            out.push(key, value.1);
        } else if let Some(rest) = after(line, "events (avg/stddev):") {
            if let Some(share) = stddev_share(rest, line_no, "events (avg/stddev)")? {
                out.push("thread_events_stddev%", share);
            }
        } else if let Some(rest) = after(line, "execution time (avg/stddev):") {
            if let Some(share) = stddev_share(rest, line_no, "execution time (avg/stddev)")? {
                out.push("thread_time_stddev%", share);
            }
        } else if let Some(count) = after(line, "ignored errors:").and_then(count_and_rate).map(|(count, _)| count) {
            out.push_own("ignored_errors", count);
        } else if let Some(count) = after(line, "deadlocks:").and_then(count_and_rate).map(|(count, _)| count) {
            out.push_own("ignored_errors", count);
        } else if let Some(count) = after(line, "total:").and_then(digits) {
            queries_total = Some(count);
        } else if let Some((_, rate)) = after(line, "read/write requests:").and_then(count_and_rate) {
            request_rate = Some(rate);
        } else if let Some((_, other_rate)) = after(line, "other operations:").and_then(count_and_rate) {
            // sysbench 0.4 and 0.5 print no `queries:` line: its count is the `total:` of `queries performed`, and
            // its rate the rates of the two kinds of statement together, as 1.0 counts them.
            if let (Some(total), Some(rate)) = (queries_total.take(), request_rate.take()) {
                if let Some(sum) = [rate, other_rate].iter().map(|r| r.parse::<f64>().ok()).sum::<Option<f64>>() {
                    out.push("queries", total);
                    out.push("queries/s", format!("{sum:.2}"));
                }
            }
        } else if let Some(value) = after(line, "approx.").and_then(|rest| after(rest, "95 percentile:")) {
            if let Some(value) = decimal(value) {
                out.push("latency_95th_ms", value);
            }
        }
    }
    if !saw_transactions {
        return Err(if threads_started {
            ParseError::Truncated {
                program: PROGRAM,
                detail: "sysbench started its threads but printed no 'transactions:' line (killed, or it stopped \
                         before its report)"
                    .into(),
            }
        } else {
            ParseError::NoResults {
                program: PROGRAM,
                hint: "expected sysbench's OLTP report ('transactions: N (X per sec.)'), found none: could sysbench \
                       reach the database? Its FATAL lines say why"
                    .into(),
            }
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lkps_patterns_match_in_lkps_order() {
        let text = "Threads started!\n    transactions:   10   (5.00 per sec.)\n    queries:   200 (100.5 per sec.)\n\
                    \x20        min:     0.74\n    execution time (avg/stddev):   2.0000/0.50\n";
        let out = parse_text(text).unwrap().render();
        let expected = "transactions: 10\ntransactions/s: 5.00\nqueries: 200\nqueries/s: 100.5\nlatency_min_ms: 0.74\n\
                        thread_time_stddev%: 25.0";
        assert_eq!(out, expected);
    }

    /// A report in sysbench 0.4's format (of 0.4.12's `oltp` test, against MySQL). The layout, labels and units are
    /// 0.4's; the numbers are made up for this test, kept consistent with one another (10000 transactions of 14
    /// reads, 4 writes and 2 other statements in 60.0012 s on 4 threads).
    const SYSBENCH_0_4: &str = "\
sysbench 0.4.12:  multi-threaded system evaluation benchmark

Running the test with following options:
Number of threads: 4

Doing OLTP test.
Running mixed OLTP test
Threads started!
Done.

OLTP test statistics:
    queries performed:
        read:                            140000
        write:                           40000
        other:                           20000
        total:                           200000
    transactions:                        10000  (166.66 per sec.)
    deadlocks:                           3      (0.05 per sec.)
    read/write requests:                 180000 (2999.94 per sec.)
    other operations:                    20000  (333.33 per sec.)

Test execution summary:
    total time:                          60.0012s
    total number of events:              10000
    total time taken by event execution: 239.7284
    per-request statistics:
         min:                                  4.12ms
         avg:                                 23.99ms
         max:                                210.55ms
         approx.  95 percentile:              41.30ms

Threads fairness:
    events (avg/stddev):           2500.0000/12.50
    execution time (avg/stddev):   59.9321/0.01

";

    /// sysbench 0.4 prints no `queries:` line and its 95th percentile as `approx.  95 percentile: 41.30ms`; read as
    /// 1.0's report was, it gave neither queries nor the percentile.
    #[test]
    fn sysbench_0_4s_report_gives_queries_and_the_95th_percentile() {
        let expected = "read: 140000\nwrite: 40000\nother: 20000\ntransactions: 10000\ntransactions/s: 166.66\n\
                        ignored_errors: 3\nqueries: 200000\nqueries/s: 3333.27\nlatency_min_ms: 4.12\n\
                        latency_avg_ms: 23.99\nlatency_max_ms: 210.55\nlatency_95th_ms: 41.30\n\
                        thread_events_stddev%: 0.5\nthread_time_stddev%: 0.016685549146450734";
        assert_eq!(parse_text(SYSBENCH_0_4).unwrap().render(), expected);
        // Another percentile than the 95th (`--percentile=99`) is not the 95th, and no queries rate is made up from
        // a report that lacks one of its two rates.
        let other = SYSBENCH_0_4.replace("approx.  95 percentile", "approx.  99 percentile");
        let other = other.replace("    read/write requests:                 180000 (2999.94 per sec.)\n", "");
        let out = parse_text(&other).unwrap().samples();
        assert!(!out.contains_key("latency_95th_ms") && !out.contains_key("queries"), "{out:?}");
        assert_eq!(out["transactions/s"], vec![166.66]);
    }

    #[test]
    fn a_report_with_no_transactions_line_is_refused_as_what_it_is() {
        assert!(matches!(parse_text("Threads started!\n"), Err(ParseError::Truncated { .. })));
        assert!(matches!(parse_text("FATAL: Connection to database failed\n"), Err(ParseError::NoResults { .. })));
        let no_events = "transactions: 0 (0.00 per sec.)\nevents (avg/stddev):           0.0000/0.00\n";
        let err = parse_text(no_events).unwrap_err();
        assert!(matches!(&err, ParseError::Malformed { line: 2, .. }), "{err}");
    }
}
