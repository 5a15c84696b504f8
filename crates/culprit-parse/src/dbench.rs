//! Parser for dbench output: the `Throughput ... MB/sec  N clients  N procs  max_latency=... ms` summary.
//!
//! Format read: the text dbench 4.x writes to stdout, as lkp-tests runs it (`programs/dbench/run`):
//!
//! ```text
//! dbench $nr_threads -c $load_file          # lkp: loadfiles/client.load; Debian: /usr/share/dbench/client.txt
//! ```
//!
//! Only the final summary line counts; every progress line before it is ignored. If the output holds several
//! summaries (several runs concatenated), the throughput and latency are averaged.
//!
//! Metrics (lkp names, prefix `dbench.`):
//! - `throughput_MB/s`, `throughput_MB/s_harmonic_mean`: arithmetic and harmonic mean of the summaries' MB/sec,
//!   rounded to 2 decimals as Ruby's `Float#round(2)` does.
//! - `clients`, `procs`: integers from the last summary.
//! - `max_latency`, `max_latency_harmonic_mean`: the summaries' `max_latency` in ms, averaged the same way.
//!
//! A summary whose throughput, clients, procs or max_latency is missing or not a number (dbench prints `nan` when
//! it cannot time itself) is [`ParseError::Malformed`], where lkp would print 0 for it: a deliberate difference,
//! since a 0 would be stored as a plausible measurement.
//!
//! A run killed before dbench printed its summary (progress lines but no `Throughput` line) is reported as
//! [`ParseError::Truncated`]; output without any dbench line is [`ParseError::NoResults`].
//!
//! This module also hosts [`ruby_num`], the Ruby number semantics (`String#to_f`, `Array#sum`, `Float#round`)
//! that several lkp parsers depend on for byte-identical output.

use crate::rubyfmt;
use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};

pub struct Dbench;

const PROGRAM: &str = "dbench";

impl Parser for Dbench {
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

fn parse_text(text: &str) -> Result<ParseOutput, ParseError> {
    let mut throughput = Vec::new();
    let mut max_latency = Vec::new();
    let mut clients: i128 = 0;
    let mut procs: i128 = 0;
    let mut saw_progress = false;
    for (index, line) in ruby_num::lines(text).enumerate() {
        // lkp matches `/^Throughput*/`, i.e. any line that starts with "Throughpu".
        if !line.starts_with("Throughpu") {
            if line.contains("MB/sec") || line.contains("processes prepared for launch") {
                saw_progress = true;
            }
            continue;
        }
        // The output stops inside this line: `max_latency=8` may be the start of `max_latency=8.083 ms` (QA 58).
        if !line.ends_with('\n') {
            return Err(ParseError::Truncated { program: PROGRAM, detail: crate::cut_in_its_last_line(line) });
        }
        let mut halves = line.split('=');
        let before = halves.next().unwrap_or_default();
        let Some(after) = halves.next() else {
            return Err(ParseError::Malformed {
                program: PROGRAM,
                line: index + 1,
                detail: format!(
                    "expected `Throughput <MB/sec> MB/sec  <n> clients  <n> procs  max_latency=<ms> ms`, got {}",
                    crate::excerpt(line.trim_end())
                ),
            });
        };
        let words = ruby_num::split_whitespace(before);
        let latency_words = ruby_num::split_whitespace(after);
        // lkp reads a missing or non-numeric figure (dbench prints `nan` when its clock fails) as 0, which would be
        // stored as a plausible measurement; here it is an error naming the figure.
        let field = |what: &str, word: Option<&&str>| ParseError::Malformed {
            program: PROGRAM,
            line: index + 1,
            detail: format!(
                "{what} is {}, not a number; expected `Throughput <MB/sec> MB/sec  <n> clients  <n> procs  \
                 max_latency=<ms> ms`",
                word.map_or_else(|| "missing".to_string(), |w| crate::excerpt(w))
            ),
        };
        let word = words.get(1);
        throughput.push(word.and_then(|w| ruby_num::number(w)).ok_or_else(|| field("the throughput", word))?);
        let word = words.get(3);
        clients = word.and_then(|w| ruby_num::integer(w)).ok_or_else(|| field("the number of clients", word))?;
        let word = words.get(5);
        procs = word.and_then(|w| ruby_num::integer(w)).ok_or_else(|| field("the number of procs", word))?;
        let word = latency_words.first();
        max_latency.push(word.and_then(|w| ruby_num::number(w)).ok_or_else(|| field("max_latency", word))?);
    }
    if throughput.is_empty() {
        return Err(if saw_progress {
            ParseError::Truncated {
                program: PROGRAM,
                detail: "dbench started but never printed its final `Throughput <MB/sec> MB/sec ... \
                         max_latency=<ms> ms` line; the run was probably killed or timed out"
                    .into(),
            }
        } else {
            ParseError::NoResults {
                program: PROGRAM,
                hint: "expected a `Throughput <MB/sec> MB/sec  <n> clients  <n> procs  max_latency=<ms> ms` line \
                       as printed by `dbench <clients> -c client.txt`"
                    .into(),
            }
        });
    }
    let mut out = ParseOutput::default();
    push_means(&mut out, "throughput_MB/s", &throughput);
    out.push("clients", clients.to_string());
    out.push("procs", procs.to_string());
    push_means(&mut out, "max_latency", &max_latency);
    Ok(out)
}

fn push_means(out: &mut ParseOutput, key: &str, values: &[f64]) {
    let average = ruby_num::sum(values) / values.len() as f64;
    out.push(key, rubyfmt::float(ruby_num::round(average, 2)));
    out.push(format!("{key}_harmonic_mean"), rubyfmt::float(ruby_num::round(ruby_num::harmonic_mean(values), 2)));
}

/// Ruby's number semantics that lkp's parsers rely on, so that Culprit's output matches theirs byte for byte.
///
/// These live here because the crate's shared `rubyfmt` module belongs to another author; they would sit well
/// next to `rubyfmt::float`.
pub(crate) mod ruby_num {
    /// Ruby's `gets` loop: lines split after each `\n`, the newline kept (it matters for `$` anchors).
    pub fn lines(text: &str) -> impl Iterator<Item = &str> {
        text.split_inclusive('\n')
    }

    /// Ruby's `String#split` with no argument: splits on ASCII whitespace runs, no empty fields.
    pub fn split_whitespace(text: &str) -> Vec<&str> {
        text.split([' ', '\t', '\n', '\x0b', '\x0c', '\r']).filter(|w| !w.is_empty()).collect()
    }

    /// The longest prefix of `text` (after leading whitespace) that Ruby's `String#to_f` reads as a number,
    /// with underscores between digits removed.
    fn numeric_prefix(text: &str, allow_fraction: bool) -> String {
        let bytes = text.trim_start_matches(|c: char| c.is_ascii_whitespace()).as_bytes();
        let mut out = String::new();
        let mut i = 0;
        if let Some(&sign) = bytes.first() {
            if sign == b'+' || sign == b'-' {
                out.push(sign as char);
                i = 1;
            }
        }
        let digits = |i: &mut usize, out: &mut String| -> bool {
            let start = *i;
            while let Some(&c) = bytes.get(*i) {
                if c.is_ascii_digit() {
                    out.push(c as char);
                    *i += 1;
                } else if c == b'_' && *i > start && bytes.get(*i + 1).is_some_and(|n| n.is_ascii_digit()) {
                    *i += 1;
                } else {
                    break;
                }
            }
            *i > start
        };
        let has_integer = digits(&mut i, &mut out);
        if !allow_fraction {
            return if has_integer { out } else { String::new() };
        }
        let mut has_fraction = false;
        if bytes.get(i) == Some(&b'.') && bytes.get(i + 1).is_some_and(|c| c.is_ascii_digit()) {
            let mut fraction = String::from(".");
            let mut j = i + 1;
            if digits(&mut j, &mut fraction) {
                out.push_str(&fraction);
                i = j;
                has_fraction = true;
            }
        }
        if !has_integer && !has_fraction {
            return String::new();
        }
        if matches!(bytes.get(i), Some(b'e') | Some(b'E')) {
            let mut exponent = String::from("e");
            let mut j = i + 1;
            if let Some(&sign) = bytes.get(j) {
                if sign == b'+' || sign == b'-' {
                    exponent.push(sign as char);
                    j += 1;
                }
            }
            if digits(&mut j, &mut exponent) {
                out.push_str(&exponent);
            }
        }
        out
    }

    /// Ruby's `String#to_f`: the leading number, or 0.0 when there is none (`"abc".to_f == 0.0`).
    pub fn to_f(text: &str) -> f64 {
        let prefix = numeric_prefix(text, true);
        if prefix.is_empty() || prefix == "+" || prefix == "-" {
            return 0.0;
        }
        prefix.parse().unwrap_or(0.0)
    }

    /// The leading number of `text` as [`to_f`] reads it, or `None` where `to_f` would quietly give 0.0 for a
    /// missing number (`""`, `"nan"`, `"abc"`) or the number is too large for a finite float. Parsers use it where
    /// lkp's 0.0 would be stored as a plausible but invented measurement.
    pub fn number(text: &str) -> Option<f64> {
        let prefix = numeric_prefix(text, true);
        if prefix.is_empty() || prefix == "+" || prefix == "-" {
            return None;
        }
        prefix.parse::<f64>().ok().filter(|v| v.is_finite())
    }

    /// The leading integer of `text` as [`to_i`] reads it, or `None` where `to_i` would quietly give 0.
    pub fn integer(text: &str) -> Option<i128> {
        let prefix = numeric_prefix(text, false);
        if prefix.is_empty() || prefix == "+" || prefix == "-" {
            return None;
        }
        Some(to_i(&prefix))
    }

    /// Ruby's `String#to_i`: the leading integer, or 0 when there is none. Values beyond `i128` saturate
    /// (Ruby would switch to a Bignum; no benchmark prints such counts).
    pub fn to_i(text: &str) -> i128 {
        let prefix = numeric_prefix(text, false);
        if prefix.is_empty() || prefix == "+" || prefix == "-" {
            return 0;
        }
        prefix.parse().unwrap_or(if prefix.starts_with('-') { i128::MIN } else { i128::MAX })
    }

    /// Ruby's `Array#sum` over floats: Kahan-Babuska compensated summation, with Ruby's NaN and infinity rules.
    pub fn sum(values: &[f64]) -> f64 {
        let mut total = 0.0_f64;
        let mut compensation = 0.0_f64;
        for &x in values {
            if total.is_nan() {
                continue;
            }
            if x.is_nan() {
                total = x;
                continue;
            }
            if x.is_infinite() {
                total =
                    if total.is_infinite() && x.is_sign_negative() != total.is_sign_negative() { f64::NAN } else { x };
                continue;
            }
            if total.is_infinite() {
                continue;
            }
            let t = total + x;
            if total.abs() >= x.abs() {
                compensation += (total - t) + x;
            } else {
                compensation += (x - t) + total;
            }
            total = t;
        }
        total + compensation
    }

    /// lkp's `Enumerable#harmonic_mean`: `length / inject(0) { |s, x| s + 1 / x }` (plain, uncompensated sum).
    pub fn harmonic_mean(values: &[f64]) -> f64 {
        let inverse_sum = values.iter().fold(0.0_f64, |acc, x| acc + 1.0 / x);
        values.len() as f64 / inverse_sum
    }

    /// C's `frexp` exponent: `x = m * 2^e` with `0.5 <= |m| < 1`.
    fn binary_exponent(x: f64) -> i32 {
        let bits = x.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as i32;
        if biased == 0 {
            // Subnormal: scale into the normal range first.
            return binary_exponent(x * 2f64.powi(54)) - 54;
        }
        biased - 1022
    }

    /// Ruby's `Float#round(ndigits)` for 0 < ndigits <= 14 (round half up, with Ruby's correction step and its
    /// shortcuts for numbers too large or too small to change).
    pub fn round(x: f64, ndigits: i32) -> f64 {
        if x == 0.0 || !x.is_finite() {
            return x;
        }
        let binexp = binary_exponent(x);
        const FLOAT_DIG: i32 = f64::DIGITS as i32 + 2;
        let overflow_limit = FLOAT_DIG - if binexp > 0 { binexp / 4 } else { binexp / 3 - 1 };
        if ndigits >= overflow_limit {
            return x;
        }
        let underflow_limit = -(if binexp > 0 { binexp / 3 + 1 } else { binexp / 4 });
        if x > 0.0 && ndigits < underflow_limit {
            return 0.0;
        }
        let scale = 10f64.powi(ndigits);
        let mut f = (x * scale).round();
        if x > 0.0 {
            if (f + 0.5) / scale <= x {
                f += 1.0;
            }
        } else if (f - 0.5) / scale >= x {
            f -= 1.0;
        }
        f / scale
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn to_f_reads_the_leading_number_as_ruby_does() {
            for (text, want) in [
                ("9.541\n", 9.541),
                ("  12.5abc", 12.5),
                ("abc", 0.0),
                ("", 0.0),
                ("-3", -3.0),
                ("1_000.5", 1000.5),
                ("1e3x", 1000.0),
                ("5.", 5.0),
                (".5", 0.5),
                ("1.2.3", 1.2),
                ("e5", 0.0),
            ] {
                assert_eq!(to_f(text), want, "{text:?}");
            }
        }

        #[test]
        fn to_i_reads_the_leading_integer() {
            for (text, want) in [("128", 128), (" 42 clients", 42), ("x", 0), ("-7.9", -7), ("", 0)] {
                assert_eq!(to_i(text), want, "{text:?}");
            }
        }

        #[test]
        fn round_matches_ruby() {
            // Values checked against Ruby 3.1's Float#round(2).
            for (x, want) in [
                (13563.9, 13563.9),
                (53.132, 53.13),
                (2.675, 2.68), // Ruby rounds the decimal literal half up, unlike naive binary rounding.
                (1.005, 1.01),
                (-1.005, -1.01),
                (0.125, 0.13),
                (2920311.9876, 2920311.99),
                (1e-10, 0.0),
                (1e20, 1e20),
            ] {
                assert_eq!(round(x, 2), want, "{x}");
            }
        }

        #[test]
        fn sum_is_compensated() {
            // Naive left-to-right summation gives 0.6000000000000001 here; Ruby's Array#sum gives 0.6.
            assert_eq!(sum(&[0.1, 0.2, 0.3]), 0.6);
            assert_eq!(sum(&[]), 0.0);
            assert!(sum(&[f64::INFINITY, f64::NEG_INFINITY]).is_nan());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qa58_a_result_line_the_output_stops_inside_is_truncated() {
        // Cut from a real run's output while it printed its result: read as it is, the number was taken short.
        let cut = "  2     15210   654.47 MB/sec  execute   1 sec  latency 8.083 ms\n\
                   Throughput 654.469 MB/sec  2 clients  2 procs  max_latency=8";
        let error = parse_text(cut).expect_err("cut short");
        let text = error.to_string();
        assert!(matches!(error, ParseError::Truncated { .. }) && text.contains("max_latency=8"), "{text}");
        assert!(parse_text(&format!("{cut}.083 ms\n")).is_ok(), "the whole line reads");
    }

    #[test]
    fn averages_several_summaries() {
        let text = "Throughput 100 MB/sec  2 clients  2 procs  max_latency=4 ms\n\
                    Throughput 300 MB/sec  4 clients  4 procs  max_latency=2 ms\n";
        let out = parse_text(text).map(|o| o.render());
        assert_eq!(
            out.as_deref(),
            Ok("throughput_MB/s: 200.0\nthroughput_MB/s_harmonic_mean: 150.0\nclients: 4\nprocs: 4\n\
                max_latency: 3.0\nmax_latency_harmonic_mean: 2.67")
        );
    }

    #[test]
    fn dbench_nan_throughput_is_an_error() {
        // dbench prints `nan` when it cannot time itself; lkp's to_f would store 0.0, a plausible wrong value.
        let text = "Throughput nan MB/sec  2 clients  2 procs  max_latency=nan ms\n";
        match parse_text(text) {
            Err(ParseError::Malformed { line: 1, detail, .. }) => {
                assert!(detail.contains("throughput") && detail.contains("\"nan\""), "{detail}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn dbench_nan_max_latency_is_an_error() {
        let text = "Throughput 100 MB/sec  2 clients  2 procs  max_latency=nan ms\n";
        match parse_text(text) {
            Err(ParseError::Malformed { line: 1, detail, .. }) => assert!(detail.contains("max_latency"), "{detail}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn dbench_missing_clients_is_an_error() {
        let text = "Throughput 100 MB/sec  max_latency=4 ms\n";
        match parse_text(text) {
            Err(ParseError::Malformed { line: 1, detail, .. }) => assert!(detail.contains("clients"), "{detail}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn strict_numbers_refuse_what_to_f_reads_as_zero() {
        for text in ["", "nan", "inf", "abc", "-", "1e999"] {
            assert_eq!(ruby_num::number(text), None, "{text:?}");
        }
        assert_eq!(ruby_num::number("0"), Some(0.0));
        assert_eq!(ruby_num::number("12.5abc"), Some(12.5));
        assert_eq!(ruby_num::integer("x"), None);
        assert_eq!(ruby_num::integer("42 clients"), Some(42));
    }

    #[test]
    fn summary_without_latency_is_malformed() {
        assert!(matches!(
            parse_text("Throughput 100 MB/sec  2 clients  2 procs\n"),
            Err(ParseError::Malformed { line: 1, .. })
        ));
    }
}
