//! Parser for hackbench output (rt-tests' `hackbench`), one or more executions, optionally several instances.
//!
//! Format read: what lkp-tests (`programs/hackbench/run`) collects: an `Instance: <id>` line, then for every
//! execution of
//!
//! ```text
//! hackbench -g $nr_threads -f $fds --$mode [--pipe] -l $loops -s $datasize
//! ```
//!
//! the lines `Running in <mode> mode with <g> groups using <fds> file descriptors each (== <tasks> tasks)`,
//! `Each sender will pass <messages> messages of <bytes> bytes` and `Time: <seconds>`. Instance outputs of a
//! multi-instance job are concatenated, each starting with its `Instance:` line. Plain hackbench output without
//! `Instance:` lines is instance 1.
//!
//! Metrics (lkp names, prefix `hackbench.`), with `kb = (tasks * messages * bytes) >> 10` from the last header seen:
//! - `throughput`, `throughput_best`: `kb / fastest time` (the historical meaning of `throughput`).
//! - `throughput_avg`: `kb / mean time`, rounded to 2 decimals.
//! - `throughput_worst`: `kb / slowest time`.
//! - With more than one instance: `throughput.instance<N>`, `throughput_avg.instance<N>`,
//!   `throughput_worst.instance<N>` per instance, from that instance's own header and times.
//!
//! An execution that printed its header but no `Time:` line was killed: [`ParseError::Truncated`].
//!
//! Stricter than lkp on purpose: a `Time:` line without a positive number of seconds (`Time: `, `Time: 0`,
//! `Time: nan`) is [`ParseError::Malformed`], and a header saying no data was passed (`(== 0 tasks)`, 0 messages)
//! is [`ParseError::NoResults`]; lkp would divide by the zero and print an infinite or NaN throughput.

use crate::dbench::ruby_num;
use crate::rubyfmt;
use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};
use regex::Regex;
use std::collections::BTreeMap;
use std::sync::OnceLock;

pub struct Hackbench;

const PROGRAM: &str = "hackbench";

impl Parser for Hackbench {
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
    instance: Regex,
    running: Regex,
    sender: Regex,
}

fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    PATTERNS.get_or_init(|| Patterns {
        instance: Regex::new(r"^Instance: ([0-9]+)").expect("static regex"),
        running: Regex::new(
            r"^Running in .* mode with ([0-9]+) groups using ([0-9]+) file descriptors each \(== ([0-9]+) tasks\)",
        )
        .expect("static regex"),
        sender: Regex::new(
            r"^Each sender will pass ([0-9]+) messages of ([0-9]+) bytes|^Each sender passed ([0-9]+) messages of ([0-9]+) bytes in average",
        )
        .expect("static regex"),
    })
}

/// One instance's figures, in the order lkp collects them.
#[derive(Default)]
struct InstanceStats {
    tasks: Option<i128>,
    messages: Option<i128>,
    bytes: Option<i128>,
    times: Vec<f64>,
    /// Whether the latest execution printed its header but not yet its `Time:` line.
    awaiting_time: bool,
}

fn parse_text(text: &str) -> Result<ParseOutput, ParseError> {
    let p = patterns();
    let mut all_times = Vec::new();
    let mut instance: i128 = 1;
    let mut per_instance: BTreeMap<i128, InstanceStats> = BTreeMap::new();
    // lkp uses the values of the last header lines seen, whatever their instance.
    let mut tasks: Option<i128> = None;
    let mut messages: Option<i128> = None;
    let mut bytes: Option<i128> = None;
    for (index, line) in ruby_num::lines(text).enumerate() {
        if let Some(c) = p.instance.captures(line) {
            instance = ruby_num::to_i(c.get(1).map_or("", |m| m.as_str()));
        } else if let Some(c) = p.running.captures(line) {
            let value = ruby_num::to_i(c.get(3).map_or("", |m| m.as_str()));
            tasks = Some(value);
            let stats = per_instance.entry(instance).or_default();
            stats.tasks = Some(value);
            stats.awaiting_time = true;
        } else if let Some(c) = p.sender.captures(line) {
            let group = |a: usize, b: usize| c.get(a).or_else(|| c.get(b)).map_or("", |m| m.as_str());
            let (m, b) = (ruby_num::to_i(group(1, 3)), ruby_num::to_i(group(2, 4)));
            messages = Some(m);
            bytes = Some(b);
            let stats = per_instance.entry(instance).or_default();
            stats.messages = Some(m);
            stats.bytes = Some(b);
            stats.awaiting_time = true;
        } else if line.starts_with("Time:") && !line.ends_with('\n') {
            // The output stops inside this line: `Time: 0.1` may be the start of `Time: 0.110`, and read as it is it
            // made a throughput 10% off (QA 58).
            return Err(ParseError::Truncated { program: PROGRAM, detail: crate::cut_in_its_last_line(line) });
        } else if line.starts_with("Time:") {
            // lkp reads a missing or zero time as 0.0 and divides by it, printing an infinite throughput; a time
            // must be a positive number of seconds here.
            let word = ruby_num::split_whitespace(line).get(1).copied();
            let seconds =
                word.and_then(ruby_num::number).filter(|s| *s > 0.0).ok_or_else(|| ParseError::Malformed {
                    program: PROGRAM,
                    line: index + 1,
                    detail: format!(
                        "the execution time is {}; expected `Time: <seconds>` with a positive number of seconds, \
                         as hackbench prints it (0 or nothing means hackbench did not time the run)",
                        word.map_or_else(|| "missing".to_string(), crate::excerpt)
                    ),
                })?;
            all_times.push(seconds);
            let stats = per_instance.entry(instance).or_default();
            stats.times.push(seconds);
            stats.awaiting_time = false;
        } else if line.starts_with("Running in ") || line.starts_with("Each sender ") {
            // A header cut off mid-line: lkp ignores it, but it means an execution started and never finished.
            per_instance.entry(instance).or_default().awaiting_time = true;
        }
    }

    if let Some((id, _)) = per_instance.iter().find(|(_, s)| s.awaiting_time) {
        return Err(ParseError::Truncated {
            program: PROGRAM,
            detail: format!(
                "instance {id}: the last hackbench execution printed its `Running in ... mode` header but no \
                 `Time: <seconds>` line; it was killed or timed out"
            ),
        });
    }
    if all_times.is_empty() {
        return Err(ParseError::NoResults {
            program: PROGRAM,
            hint: "expected `Running in <mode> mode with ... (== <n> tasks)`, `Each sender will pass <n> messages of \
                   <n> bytes` and `Time: <seconds>` lines as printed by `hackbench -g <groups> -f <fds> ...`"
                .into(),
        });
    }
    let kb = kilobytes(tasks, messages, bytes, "the output")?;
    let kb = kb as f64;
    let best = fold_min(&all_times);
    let worst = fold_max(&all_times);
    let mean = ruby_num::sum(&all_times) / all_times.len() as f64;

    let mut out = ParseOutput::default();
    out.push("throughput", rubyfmt::float(kb / best));
    out.push("throughput_best", rubyfmt::float(kb / best));
    out.push("throughput_avg", rubyfmt::float(ruby_num::round(kb / mean, 2)));
    out.push("throughput_worst", rubyfmt::float(kb / worst));

    if per_instance.len() > 1 {
        for (id, stats) in &per_instance {
            if stats.times.is_empty() {
                continue;
            }
            let instance_kb = kilobytes(stats.tasks, stats.messages, stats.bytes, &format!("instance {id}"))? as f64;
            let mean = ruby_num::sum(&stats.times) / stats.times.len() as f64;
            out.push(format!("throughput.instance{id}"), rubyfmt::float(instance_kb / fold_min(&stats.times)));
            out.push(format!("throughput_avg.instance{id}"), rubyfmt::float(ruby_num::round(instance_kb / mean, 2)));
            out.push(format!("throughput_worst.instance{id}"), rubyfmt::float(instance_kb / fold_max(&stats.times)));
        }
    }
    Ok(out)
}

/// `(tasks * messages * bytes) >> 10`, or an error naming what is missing.
fn kilobytes(
    tasks: Option<i128>,
    messages: Option<i128>,
    bytes: Option<i128>,
    scope: &str,
) -> Result<i128, ParseError> {
    let (Some(t), Some(m), Some(b)) = (tasks, messages, bytes) else {
        return Err(ParseError::NoResults {
            program: PROGRAM,
            hint: format!(
                "{scope} has `Time:` lines but lacks the `Running in <mode> mode with ... (== <n> tasks)` or \
                 `Each sender will pass <n> messages of <n> bytes` line needed to compute the throughput"
            ),
        });
    };
    let kb = t.checked_mul(m).and_then(|x| x.checked_mul(b)).map(|x| x >> 10).ok_or_else(|| ParseError::NoResults {
        program: PROGRAM,
        hint: format!("{scope}: tasks * messages * bytes = {t} * {m} * {b} is too large to be a real hackbench run"),
    })?;
    if kb <= 0 {
        // A throughput of 0 (or 0/0 = NaN with a zero time) is no measurement: hackbench moved no data.
        return Err(ParseError::NoResults {
            program: PROGRAM,
            hint: format!(
                "{scope}: tasks * messages * bytes = {t} * {m} * {b} is under 1 KiB, so the throughput would be 0; \
                 the `(== <n> tasks)` header or the `Each sender will pass <n> messages of <n> bytes` line says \
                 hackbench passed no data (check -g, -l and -s on its command line)"
            ),
        });
    }
    Ok(kb)
}

/// Ruby's `Array#min` on floats (the first of equal values; NaN compares as in `<=>`, which we treat as not smaller).
fn fold_min(values: &[f64]) -> f64 {
    values.iter().copied().fold(f64::INFINITY, |a, b| if b < a { b } else { a })
}

fn fold_max(values: &[f64]) -> f64 {
    values.iter().copied().fold(f64::NEG_INFINITY, |a, b| if b > a { b } else { a })
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = "Running in process mode with 2 groups using 40 file descriptors each (== 80 tasks)\n\
                       Each sender will pass 2000 messages of 100 bytes\n";

    #[test]
    fn qa58_a_result_line_the_output_stops_inside_is_truncated() {
        // Cut from a real run's output while it printed its result: read as it is, the number was taken short.
        let cut = "Running in process mode with 2 groups using 40 file descriptors each (== 80 tasks)\n\
                   Each sender will pass 300 messages of 100 bytes\nTime: 0.1";
        let error = parse_text(cut).expect_err("cut short");
        let text = error.to_string();
        assert!(matches!(error, ParseError::Truncated { .. }) && text.contains("Time: 0.1"), "{text}");
        assert!(parse_text(&format!("{cut}10\n")).is_ok(), "the whole line reads");
    }

    #[test]
    fn best_average_and_worst_time() {
        // kb = 80 * 2000 * 100 >> 10 = 15625.
        let text = format!("{RUN}Time: 1.0\n{RUN}Time: 4.0\n");
        assert_eq!(
            parse_text(&text).map(|o| o.render()).as_deref(),
            Ok("throughput: 15625.0\nthroughput_best: 15625.0\nthroughput_avg: 6250.0\nthroughput_worst: 3906.25")
        );
    }

    #[test]
    fn execution_without_time_is_truncated() {
        let text = format!("{RUN}Time: 1.0\n{RUN}");
        assert!(matches!(parse_text(&text), Err(ParseError::Truncated { .. })));
    }

    #[test]
    fn header_cut_mid_line_is_truncated() {
        let text = format!("{RUN}Time: 1.0\nRunning in process mode with 2 groups using 40 file descriptors each (==");
        assert!(matches!(parse_text(&text), Err(ParseError::Truncated { .. })));
    }

    #[test]
    fn hackbench_zero_time_is_an_error() {
        let text = format!("{RUN}Time: 0\n");
        match parse_text(&text) {
            Err(ParseError::Malformed { line: 3, detail, .. }) => assert!(detail.contains("\"0\""), "{detail}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn hackbench_empty_time_is_an_error() {
        let text = format!("{RUN}Time: \n{RUN}Time: 1.0\n");
        match parse_text(&text) {
            Err(ParseError::Malformed { line: 3, detail, .. }) => assert!(detail.contains("missing"), "{detail}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn hackbench_nan_time_is_an_error() {
        assert!(matches!(parse_text(&format!("{RUN}Time: nan\n")), Err(ParseError::Malformed { line: 3, .. })));
    }

    #[test]
    fn hackbench_zero_tasks_is_an_error() {
        let text = "Running in process mode with 0 groups using 0 file descriptors each (== 0 tasks)\n\
                    Each sender will pass 0 messages of 100 bytes\nTime: 1.0\n";
        match parse_text(text) {
            Err(ParseError::NoResults { hint, .. }) => assert!(hint.contains("0 * 0 * 100"), "{hint}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn time_without_header_is_an_error() {
        assert!(matches!(parse_text("Time: 1.0\n"), Err(ParseError::NoResults { .. })));
    }
}
