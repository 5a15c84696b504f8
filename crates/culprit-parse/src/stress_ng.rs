//! Parser for stress-ng output: the per-stressor metrics table and the "miscellaneous metrics" lines.
//!
//! Format read: stress-ng's stdout+stderr (its log lines `stress-ng: info:  [pid] ...` / `stress-ng: metrc: ...`),
//! as lkp-tests runs it (`programs/stress-ng/run`):
//!
//! ```text
//! stress-ng --timeout $testtime --times --verify --metrics --no-rand-seed --$test $nr_threads 2>&1
//! ```
//!
//! (older lkp runs used `--metrics-brief`; both print the same table, `--metrics` adds two columns). The table
//! starts after the `(secs) (secs) (secs)` header line and ends at the `for a <N>s run time:` line that `--times`
//! prints.
//!
//! Metrics (lkp names, prefix `stress-ng.`), per stressor `<s>` in output order:
//! - `<s>.pass: 1`, `<s>.ops: <bogo ops>`, `<s>.ops_per_sec: <bogo ops/s (real time)>` when bogo ops is non-zero,
//!   else `<s>.fail: 1`. Values are copied as stress-ng printed them (`2637.00`).
//! - For each miscellaneous metric line such as `memrate 4640.01 write128 MB/sec (average per stressor)`:
//!   `<s>.<unit>.pass: 1` and `<s>.<unit>: <value>` (or `<s>.<unit>.fail: 1` for a zero value), where `<unit>` is
//!   the description normalized as lkp does (`write128_MB/sec`, `nanosecs_per_flock_lock_call`).
//! - `sigaction.fail: 1` when stress-ng could not install its signal handlers.
//!
//! Errors: a value that reads as NaN or an infinity (stress-ng prints `nan` for a stressor whose time is 0) is
//! [`ParseError::Malformed`], naming the metric, where lkp copies it; no table (empty, garbage, a stressor not implemented on this system, a run killed before the table) is
//! [`ParseError::NoResults`]; a table that never reaches the `run time:` line is [`ParseError::Truncated`] (this
//! needs `--times`, which lkp and Culprit always pass).

use crate::dbench::ruby_num;
use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};
use regex::Regex;
use std::sync::OnceLock;

pub struct StressNg;

const PROGRAM: &str = "stress-ng";

impl Parser for StressNg {
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
    not_run: Regex,
    sigaction: Regex,
    table_header: Regex,
    miscellaneous: Regex,
    aggregate_suffix: Regex,
    normalize_separators: Regex,
    normalize_dots: Regex,
}

fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    PATTERNS.get_or_init(|| Patterns {
        not_run: Regex::new(r"(this stressor is not implemented on this system)|(No stress workers invoked)")
            .expect("static regex"),
        sigaction: Regex::new(r"stress-ng: fail:.*sigaction signal").expect("static regex"),
        table_header: Regex::new(r"\(secs\)\s+\(secs\)\s+\(secs\)").expect("static regex"),
        miscellaneous: Regex::new(r"stress-ng: (info|metrc):.*\((average|geometr?ic mean|harmonic mean|total)")
            .expect("static regex"),
        aggregate_suffix: Regex::new(r"(?m) \((average|geometr?ic mean|harmonic mean|total).*\)$")
            .expect("static regex"),
        normalize_separators: Regex::new(r#"[\t\n\x0b\x0c\r ,"_\[\]():]+"#).expect("static regex"),
        normalize_dots: Regex::new(r"\.{4,}").expect("static regex"),
    })
}

/// lkp's `LKP::Stats.normalize`: separators (whitespace, `,"_[]():`) become one `_`, no `_` at either end.
pub fn normalize(name: &str) -> String {
    let p = patterns();
    let trimmed = name.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r' | '\0'));
    let joined = p.normalize_separators.replace_all(trimmed, "_");
    let stripped = joined.trim_matches('_');
    p.normalize_dots.replace_all(stripped, ".").into_owned()
}

fn parse_text(text: &str) -> Result<ParseOutput, ParseError> {
    let p = patterns();
    let mut out = ParseOutput::default();
    let mut in_table = false;
    let mut saw_table = false;
    let mut finished = false;
    let mut not_run_reason = None;
    // What stress-ng said before it ran nothing: why it skipped a stressor ("rdrand stressor will be skipped, not a
    // recognised Intel CPU") is on an info line of its own, and "No stress workers invoked" alone does not say it.
    let mut said_before: Vec<&str> = Vec::new();
    for (index, line) in ruby_num::lines(text).enumerate() {
        if let Some(c) = p.not_run.captures(line) {
            let matched = c.get(1).or_else(|| c.get(2));
            not_run_reason = matched.map(|m| {
                // The rest of the line says which way ("(one or more were unsupported)").
                let reason = format!("{}{}", m.as_str(), line[m.end()..].trim_end());
                if said_before.is_empty() {
                    reason
                } else {
                    format!("{reason}: {}", said_before.join("; "))
                }
            });
            finished = true;
            break;
        }
        if let Some(said) = line.strip_prefix("stress-ng: info:").and_then(|rest| rest.split_once("] ")) {
            let said = said.1.trim();
            let boilerplate = ["setting to a", "dispatching hogs", "defaulting to"];
            if !said.is_empty() && !boilerplate.iter().any(|b| said.starts_with(b)) {
                said_before.push(said);
            }
        }
        if line.contains("all bogo-op counters are zero, data may be incorrect") {
            // The zero counters show up in the table itself as `<s>.fail`.
            continue;
        }
        if p.sigaction.is_match(line) {
            out.push("sigaction.fail", "1");
            finished = true;
            break;
        }
        if line.contains("fail:") || line.contains("warn:") {
            continue;
        }
        if p.table_header.is_match(line) {
            in_table = true;
            saw_table = true;
            continue;
        }
        if line.contains("run time:") {
            finished = true;
            break;
        }
        if in_table {
            if p.miscellaneous.is_match(line) {
                miscellaneous_metric(&mut out, line, index + 1)?;
            } else {
                major_metric(&mut out, line, index + 1)?;
            }
        }
    }
    if let Some(reason) = not_run_reason {
        if out.lines.is_empty() {
            return Err(ParseError::NoResults { program: PROGRAM, hint: format!("stress-ng reported: {reason}") });
        }
    }
    if saw_table && !finished {
        return Err(ParseError::Truncated {
            program: PROGRAM,
            detail: "the metrics table never reached the `for a <N>s run time:` line that `stress-ng --times` prints \
                     at the end; the run was killed or the output cut short"
                .into(),
        });
    }
    if out.lines.is_empty() {
        return Err(ParseError::NoResults {
            program: PROGRAM,
            hint: "expected the metrics table (`stress-ng: metrc: [pid] stressor  bogo ops real time ...` header, a \
                   `(secs) (secs) (secs)` line, then one line per stressor) printed by `stress-ng --metrics --times`"
                .into(),
        });
    }
    Ok(out)
}

/// A table row: `stress-ng: info: [pid] <stressor> <bogo ops> <real> <usr> <sys> <ops/s real> <ops/s usr+sys>`
/// (10 fields), plus `<CPU %> <RSS KB>` with `--metrics` (12 fields). Other lines are ignored, as lkp does.
fn major_metric(out: &mut ParseOutput, line: &str, line_number: usize) -> Result<(), ParseError> {
    let items = ruby_num::split_whitespace(line);
    if items.len() != 10 && items.len() != 12 {
        return Ok(());
    }
    let (Some(stressor), Some(bogo_ops), Some(ops_per_sec)) = (items.get(3), items.get(4), items.get(8)) else {
        return Ok(());
    };
    finite(bogo_ops, &format!("{stressor}.ops (bogo ops)"), line_number)?;
    finite(ops_per_sec, &format!("{stressor}.ops_per_sec (bogo ops/s real time)"), line_number)?;
    if *bogo_ops == "0" {
        out.push(format!("{stressor}.fail"), "1");
    } else {
        out.push(format!("{stressor}.pass"), "1");
        out.push(format!("{stressor}.ops"), *bogo_ops);
        out.push(format!("{stressor}.ops_per_sec"), *ops_per_sec);
    }
    Ok(())
}

/// Refuses a value that reads as NaN or an infinity (stress-ng prints `nan` when a stressor's time is 0), naming
/// the metric and the line; lkp copies such a value into its output.
fn finite(value: &str, metric: &str, line_number: usize) -> Result<(), ParseError> {
    if value.parse::<f64>().is_ok_and(|v| !v.is_finite()) {
        return Err(ParseError::Malformed {
            program: PROGRAM,
            line: line_number,
            detail: format!("{metric} is {}, which is not a finite number", crate::excerpt(value)),
        });
    }
    Ok(())
}

/// A miscellaneous metric: `stress-ng: metrc: [pid] <stressor> <value> <description> (<aggregate> ...)`.
fn miscellaneous_metric(out: &mut ParseOutput, line: &str, line_number: usize) -> Result<(), ParseError> {
    let p = patterns();
    let without_aggregate = p.aggregate_suffix.replace(line, "");
    let items = ruby_num::split_whitespace(&without_aggregate);
    let Some(description) = items.get(5..) else {
        return Err(ParseError::Malformed {
            program: PROGRAM,
            line: line_number,
            detail: format!(
                "expected `stress-ng: metrc: [pid] <stressor> <value> <description> (<average|geometric mean|...>)`, \
                 got {}",
                crate::excerpt(line.trim_end())
            ),
        });
    };
    let unit = normalize(&description.join("_"));
    let stressor = items.get(3).copied().unwrap_or_default();
    let value = items.get(4).copied().unwrap_or_default();
    finite(value, &format!("{stressor}.{unit}"), line_number)?;
    if value == "0" || value == "0.00" {
        out.push(format!("{stressor}.{unit}.fail"), "1");
    } else {
        out.push(format!("{stressor}.{unit}.pass"), "1");
        out.push(format!("{stressor}.{unit}"), value);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_matches_lkp() {
        for (raw, want) in [
            ("write128_MB/sec", "write128_MB/sec"),
            ("memory_rate_(MB_per_sec)", "memory_rate_MB_per_sec"),
            ("nanosecs_per_call_(excluding_test_overhead", "nanosecs_per_call_excluding_test_overhead"),
            ("  a, b: c  ", "a_b_c"),
            ("x.....y", "x.y"),
            ("%_sendto_calls_succeeded", "%_sendto_calls_succeeded"),
        ] {
            assert_eq!(normalize(raw), want, "{raw}");
        }
    }

    #[test]
    fn zero_bogo_ops_is_a_failure() {
        let text = "stress-ng: info:  [1]                           (secs)    (secs)    (secs)   (real time) (usr+sys time)\n\
                    stress-ng: info:  [1] splice                0      0.00      0.00      0.00         0.00         0.00\n\
                    stress-ng: info:  [1] for a 1.00s run time:\n";
        assert_eq!(parse_text(text).map(|o| o.render()).as_deref(), Ok("splice.fail: 1"));
    }

    #[test]
    fn stress_ng_nan_ops_per_sec_is_an_error() {
        let text =
            "stress-ng: info:  [1]                           (secs)    (secs)    (secs)   (real time) (usr+sys time)\n\
                    stress-ng: info:  [1] flock         470916710     60.00    128.04   1291.13   nan      331824.84\n\
                    stress-ng: info:  [1] for a 1.00s run time:\n";
        match parse_text(text) {
            Err(ParseError::Malformed { line: 2, detail, .. }) => {
                assert!(detail.contains("flock.ops_per_sec") && detail.contains("\"nan\""), "{detail}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn stress_ng_nan_miscellaneous_metric_is_an_error() {
        let text =
            "stress-ng: info:  [1]                           (secs)    (secs)    (secs)   (real time) (usr+sys time)\n\
                    stress-ng: metrc: [1] memrate nan write128 MB/sec (average per stressor)\n\
                    stress-ng: info:  [1] for a 1.00s run time:\n";
        match parse_text(text) {
            Err(ParseError::Malformed { line: 2, detail, .. }) => {
                assert!(detail.contains("memrate.write128_MB/sec"), "{detail}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn table_without_end_is_truncated() {
        let text = "stress-ng: info:  [1]                           (secs)    (secs)    (secs)   (real time) (usr+sys time)\n\
                    stress-ng: info:  [1] flock         470916710     60.00    128.04   1291.13   7848529.59      331824.84\n";
        assert!(matches!(parse_text(text), Err(ParseError::Truncated { .. })));
    }

    #[test]
    fn a_stressor_skipped_says_why() {
        let text = "stress-ng: info:  [19288] rdrand stressor will be skipped, not a recognised Intel CPU\n\
                    stress-ng: info:  [19288] setting to a 1 second run per stressor\n\
                    stress-ng: error: [19288] No stress workers invoked (one or more were unsupported)\n";
        let err = parse_text(text).err().map(|e| e.to_string()).unwrap_or_default();
        let said = "No stress workers invoked (one or more were unsupported): rdrand stressor will be skipped, not a \
                    recognised Intel CPU";
        assert!(err.contains(said) && !err.contains("setting to"), "{err}");
    }

    #[test]
    fn not_implemented_is_reported() {
        let text = "stress-ng: info:  [1] stressor: this stressor is not implemented on this system\n";
        let err = parse_text(text).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("not implemented"), "{err}");
    }
}
