//! Parser for vm-scalability output, the import format of lkp-tests' `programs/vm-scalability/parse`.
//!
//! Input: the text lkp's vm-scalability runner writes, i.e. the output of the `./case-*` scripts of
//! <https://git.kernel.org/pub/scm/linux/kernel/git/wfg/vm-scalability.git> with a `./case-<name>` marker line per
//! sample. The sample lines it understands are `N bytes / N usecs = N KB/s` (usemem), dd's `N bytes (...) copied,
//! S s, R MB/s`, `N bytes truncated in T1-T0 seconds`, `N bytes faulted in T1-T0 seconds`,
//! `N * N bytes migrated, N usecs, N MB/s`, `N bytes remapped, N usecs, N MB/s` and `N usecs to free memory`.
//!
//! Output, in lkp's order: one `# <count> <sum>` comment per sample group, `migrate_mbps` lines, then
//! `throughput` (KB/s, integer), `stddev%`, `free_time` (seconds, when freeing was timed), `median`,
//! `median_stddev%`, `workload` (KiB moved), and, when pages were faulted separately, `throughput_fault`,
//! `stddev_fault%`, `median_fault`, `median_fault_stddev%`. Numbers are printed with lkp's printf formats
//! (`%d` truncates, `%g` keeps six significant digits).
//!
//! The private `ruby` module holds the pieces of Ruby's number semantics that several import parsers need to be
//! byte-exact (Integer versus Float arithmetic, `Array#sum`, `String#to_f`, `printf`).

use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};
use regex::Regex;
use std::sync::OnceLock;

use ruby::Num;

const PROGRAM: &str = "vm-scalability";

pub struct VmScalability;

impl Parser for VmScalability {
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

/// The sample-line shapes, tried in lkp's order (the first that matches a line wins).
struct Patterns {
    usemem: Regex,
    dd_copied: Regex,
    truncated: Regex,
    faulted: Regex,
    migrated: Regex,
    remapped: Regex,
    freed: Regex,
    case_marker: Regex,
}

fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        // The patterns are constants, so a compile failure is a programming error caught by every test.
        let re = |p: &str| Regex::new(p).expect("constant vm-scalability pattern compiles");
        Patterns {
            usemem: re(r"^\.*([0-9]+) bytes / ([0-9]+) usecs = ([0-9]+) KB.s"),
            dd_copied: re(r"([0-9]+) bytes \([0-9.]+ .B(?:, [0-9.]+ .iB)?\) copied, ([0-9.]+) s, ([0-9.]+) .B.s"),
            truncated: re(r"([0-9]+) bytes truncated in ([0-9.]+)-([0-9.]+) seconds"),
            faulted: re(r"([0-9]+) bytes faulted in ([0-9.]+)-([0-9.]+) seconds"),
            migrated: re(r"[0-9]+ \* [0-9]+ bytes migrated, [0-9]+ usecs, ([0-9]+) MB.s"),
            remapped: re(r"([0-9]+) bytes remapped, ([0-9]+) usecs, ([0-9]+) MB.s"),
            freed: re(r"([0-9]+) usecs to free memory"),
            case_marker: re(r"\./case-[a-z-]+"),
        }
    })
}

/// Samples of one kind (plain or fault): the KB/s figures of the current group, and per finished group its sum
/// and median.
#[derive(Default)]
struct Series {
    kbps: Vec<Num>,
    throughput: Vec<Num>,
    median: Vec<Num>,
}

impl Series {
    /// Closes the current group as lkp's `add_one_sample` does: the group's sum is a throughput sample, its
    /// middle element (after sorting) a median sample, and a `# count sum` comment is printed.
    fn close_group(&mut self, out: &mut ParseOutput) -> Result<(), ParseError> {
        if self.kbps.is_empty() {
            return Ok(());
        }
        self.throughput.push(ruby::sum(&self.kbps));
        ruby::sort(&mut self.kbps).map_err(|detail| ParseError::Malformed { program: PROGRAM, line: 0, detail })?;
        if let Some(middle) = self.kbps.get(self.kbps.len() / 2) {
            self.median.push(*middle);
        }
        // lkp sums again after sorting; for floats the compensated sum can differ in the last digit.
        out.comment(format!("# {} {}", self.kbps.len(), ruby::sum(&self.kbps).to_ruby_string()));
        Ok(())
    }
}

fn bytes_of(digits: &str, line: usize) -> Result<i128, ParseError> {
    digits.parse::<i128>().map_err(|_| ParseError::Malformed {
        program: PROGRAM,
        line,
        detail: format!("byte count {digits} is too large"),
    })
}

fn add_bytes(total: &mut i128, more: i128, line: usize) -> Result<(), ParseError> {
    *total = total.checked_add(more).ok_or_else(|| ParseError::Malformed {
        program: PROGRAM,
        line,
        detail: "total byte count overflows".into(),
    })?;
    Ok(())
}

/// A sample's elapsed time, refused when it is zero: lkp divides the bytes by it and gets an infinite KB/s (or
/// NaN, which its sort then fails on), so the error names the line instead.
fn elapsed(seconds: f64, line: usize) -> Result<f64, ParseError> {
    if seconds == 0.0 || !seconds.is_finite() {
        return Err(ParseError::Malformed {
            program: PROGRAM,
            line,
            detail: format!(
                "the sample's elapsed time is {seconds} seconds, so its KB/s would be infinite; expected a time \
                 above 0 (the timer's resolution is too coarse or the output is corrupt)"
            ),
        });
    }
    Ok(seconds)
}

fn parse_text(text: &str) -> Result<ParseOutput, ParseError> {
    let p = patterns();
    let mut out = ParseOutput::default();
    let mut bytes: i128 = 0;
    let mut bytes_fault: i128 = 0;
    let mut plain = Series::default();
    let mut fault = Series::default();
    let mut free_secs: Vec<Num> = Vec::new();
    let mut saw_case_marker = false;

    for (index, line) in ruby::gets_lines(text).enumerate() {
        let line_no = index + 1;
        if let Some(c) = p.usemem.captures(line) {
            add_bytes(&mut bytes, bytes_of(&c[1], line_no)?, line_no)?;
            plain.kbps.push(Num::Int(ruby::to_i(&c[3])));
        } else if let Some(c) = p.dd_copied.captures(line) {
            let n = bytes_of(&c[1], line_no)?;
            add_bytes(&mut bytes, n, line_no)?;
            let seconds = elapsed(ruby::to_f(&c[2]), line_no)?;
            plain.kbps.push(Num::Float((n >> 10) as f64 / seconds));
        } else if let Some(c) = p.truncated.captures(line) {
            let n = bytes_of(&c[1], line_no)?;
            add_bytes(&mut bytes, n, line_no)?;
            let seconds = elapsed(ruby::to_f(&c[2]) - ruby::to_f(&c[3]), line_no)?;
            plain.kbps.push(Num::Float((n >> 10) as f64 / seconds));
        } else if let Some(c) = p.faulted.captures(line) {
            let n = bytes_of(&c[1], line_no)?;
            add_bytes(&mut bytes_fault, n, line_no)?;
            let seconds = elapsed(ruby::to_f(&c[2]) - ruby::to_f(&c[3]), line_no)?;
            fault.kbps.push(Num::Float((n >> 10) as f64 / seconds));
        } else if let Some(c) = p.migrated.captures(line) {
            // lkp adds the MB/s figure to the byte count here; kept so `workload` matches lkp.
            add_bytes(&mut bytes, bytes_of(&c[1], line_no)?, line_no)?;
            out.push("migrate_mbps", &c[1]);
        } else if let Some(c) = p.remapped.captures(line) {
            let n = bytes_of(&c[1], line_no)?;
            add_bytes(&mut bytes, n, line_no)?;
            let usecs_per_1024 = bytes_of(&c[2], line_no)? >> 10;
            if usecs_per_1024 == 0 {
                return Err(ParseError::Malformed {
                    program: PROGRAM,
                    line: line_no,
                    detail: "remap took under 1024 usecs, lkp's KB/s formula divides by zero".into(),
                });
            }
            plain.kbps.push(Num::Int(n.div_euclid(usecs_per_1024)));
        } else if let Some(c) = p.freed.captures(line) {
            free_secs.push(Num::Float(ruby::to_i(&c[1]) as f64 / 1_000_000.0));
        } else if p.case_marker.is_match(line) {
            saw_case_marker = true;
            plain.close_group(&mut out)?;
            fault.close_group(&mut out)?;
            plain.kbps.clear();
            fault.kbps.clear();
        }
    }
    plain.close_group(&mut out)?;
    fault.close_group(&mut out)?;

    if plain.throughput.is_empty() {
        if !out.lines.is_empty() {
            // Only migrate_mbps lines: lkp prints them and nothing else.
            return Ok(out);
        }
        return Err(if saw_case_marker {
            ParseError::Truncated {
                program: PROGRAM,
                detail: "a ./case-* marker but no sample line (`N bytes / N usecs = N KB/s`, dd's `copied`, \
                         `truncated in`, ...) after it"
                    .into(),
            }
        } else {
            ParseError::NoResults {
                program: PROGRAM,
                hint: "expected ./case-* marker lines followed by sample lines such as \
                       `N bytes / N usecs = N KB/s`"
                    .into(),
            }
        });
    }

    let stddev = relative_stddev(&plain.throughput, &plain.kbps);
    let median_stddev = median_relative_stddev(&plain.median);
    out.push("throughput", printf_d("throughput", ruby::average(&plain.throughput))?);
    if plain.kbps.is_empty() {
        return Err(ParseError::Truncated {
            program: PROGRAM,
            detail: "the last ./case-* group has no sample line (lkp reports `incomplete output`)".into(),
        });
    }
    out.push("stddev%", format!("  {}", ruby::printf_g(stddev * 100.0)));
    if !free_secs.is_empty() {
        out.push("free_time", format!(" {}", ruby::printf_g(ruby::average(&free_secs))));
    }
    out.push("median", printf_d("median", ruby::average(&plain.median))?);
    out.push("median_stddev%", ruby::printf_g(median_stddev * 100.0));
    out.push("workload", ruby::printf_f(bytes as f64 / 1024.0, 2));

    if !fault.throughput.is_empty() {
        out.push("throughput_fault", printf_d("throughput_fault", ruby::average(&fault.throughput))?);
        let stddev = relative_stddev(&fault.throughput, &fault.kbps);
        out.push("stddev_fault%", format!("  {}", ruby::printf_g(stddev * 100.0)));
        out.push("median_fault", printf_d("median_fault", ruby::average(&fault.median))?);
        out.push("median_fault_stddev%", ruby::printf_g(median_relative_stddev(&fault.median) * 100.0));
    }
    // `bytes_fault` is summed by lkp but never printed.
    let _ = bytes_fault;
    Ok(out)
}

/// lkp's `cal_stddev`: across groups when there are several, else within the last group scaled by its size.
fn relative_stddev(throughput: &[Num], kbps: &[Num]) -> f64 {
    if throughput.len() > 1 {
        ruby::standard_deviation(throughput) / ruby::average(throughput)
    } else {
        ruby::standard_deviation(kbps) * kbps.len() as f64 / ruby::average(kbps)
    }
}

/// lkp's `cal_median_stddev`: zero for a single group.
fn median_relative_stddev(median: &[Num]) -> f64 {
    if median.len() > 1 {
        ruby::standard_deviation(median) / ruby::average(median)
    } else {
        0.0
    }
}

fn printf_d(key: &str, x: f64) -> Result<String, ParseError> {
    ruby::printf_d(x).ok_or_else(|| ParseError::Malformed {
        program: PROGRAM,
        line: 0,
        detail: format!("{key} is {} (a sample took zero time?), which lkp cannot print as an integer", x),
    })
}

/// Ruby's number semantics, as far as lkp's import parsers rely on them for byte-exact output.
pub(crate) mod ruby {
    use std::cmp::Ordering;

    /// A Ruby number: Integer and Float print and divide differently, and lkp's output shows which one it was.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub(crate) enum Num {
        Int(i128),
        Float(f64),
    }

    impl Num {
        pub(crate) fn to_f64(self) -> f64 {
            match self {
                Num::Int(i) => i as f64,
                Num::Float(f) => f,
            }
        }

        /// `Integer#to_s` or `Float#to_s`.
        pub(crate) fn to_ruby_string(self) -> String {
            match self {
                Num::Int(i) => i.to_string(),
                Num::Float(f) => crate::rubyfmt::float(f),
            }
        }

        /// Ruby's `<=>` between two numbers; `None` when a NaN is involved (Ruby's sort then raises).
        pub(crate) fn compare(self, other: Num) -> Option<Ordering> {
            match (self, other) {
                (Num::Int(a), Num::Int(b)) => Some(a.cmp(&b)),
                (a, b) => a.to_f64().partial_cmp(&b.to_f64()),
            }
        }
    }

    /// `Array#sum`: integers are summed exactly; from the first Float on, Kahan-Babuska compensated summation.
    pub(crate) fn sum(values: &[Num]) -> Num {
        let mut int_sum: i128 = 0;
        let mut rest = values;
        while let Some((Num::Int(i), tail)) = rest.split_first() {
            int_sum = int_sum.saturating_add(*i);
            rest = tail;
        }
        if rest.is_empty() {
            return Num::Int(int_sum);
        }
        let mut f = int_sum as f64;
        let mut c = 0.0_f64;
        for value in rest {
            let x = value.to_f64();
            if f.is_nan() {
                continue;
            }
            if x.is_nan() {
                f = x;
                continue;
            }
            if x.is_infinite() {
                f = if f.is_infinite() && x.is_sign_negative() != f.is_sign_negative() { f64::NAN } else { x };
                continue;
            }
            if f.is_infinite() {
                continue;
            }
            let t = f + x;
            if f.abs() >= x.abs() {
                c += (f - t) + x;
            } else {
                c += (x - t) + f;
            }
            f = t;
        }
        Num::Float(f + c)
    }

    /// lkp's `Enumerable#average`: `sum / length.to_f` (NaN for an empty list).
    pub(crate) fn average(values: &[Num]) -> f64 {
        sum(values).to_f64() / values.len() as f64
    }

    /// lkp's `standard_deviation`: population deviation computed as `sqrt(1 / n * sum((x - avg) ** 2))`.
    pub(crate) fn standard_deviation(values: &[Num]) -> f64 {
        let avg = average(values);
        let squares = values.iter().fold(0.0_f64, |acc, v| acc + (v.to_f64() - avg).powf(2.0));
        (1.0 / values.len() as f64 * squares).sqrt()
    }

    /// `Array#sort!` on numbers; fails like Ruby when a NaN cannot be compared.
    pub(crate) fn sort(values: &mut [Num]) -> Result<(), String> {
        if values.iter().any(|v| v.to_f64().is_nan()) {
            return Err("a sample is NaN (zero elapsed time), which lkp cannot sort".into());
        }
        values.sort_by(|a, b| a.compare(*b).unwrap_or(Ordering::Equal));
        Ok(())
    }

    /// The lines `$stdin.gets` returns: each keeps its `\n`; a last line without one is returned as is.
    pub(crate) fn gets_lines(text: &str) -> impl Iterator<Item = &str> {
        text.split_inclusive('\n')
    }

    /// `String#chomp!` as a filter: the line without its terminator, or `None` when it had none (Ruby returns
    /// nil then, and a `case line.chomp!` matches nothing).
    pub(crate) fn chomp_bang(line: &str) -> Option<&str> {
        if let Some(s) = line.strip_suffix("\r\n") {
            Some(s)
        } else if let Some(s) = line.strip_suffix('\n') {
            Some(s)
        } else {
            line.strip_suffix('\r')
        }
    }

    /// `String#chomp` (always succeeds).
    pub(crate) fn chomp(line: &str) -> &str {
        chomp_bang(line).unwrap_or(line)
    }

    /// `String#split` with no argument: on runs of ASCII whitespace, ignoring leading and trailing whitespace.
    pub(crate) fn split_ws(line: &str) -> Vec<&str> {
        line.split([' ', '\t', '\n', '\u{0b}', '\u{0c}', '\r']).filter(|s| !s.is_empty()).collect()
    }

    /// `String#split(',')`: like Rust's split, but trailing empty fields are dropped (and "" gives no fields).
    pub(crate) fn split_comma(line: &str) -> Vec<&str> {
        let mut fields: Vec<&str> = line.split(',').collect();
        while fields.last().is_some_and(|f| f.is_empty()) {
            fields.pop();
        }
        fields
    }

    /// The numeric prefix Ruby's `to_f`/`to_i` read: leading whitespace, a sign, digits with single underscores
    /// between them, and (for floats) a fraction and an exponent. Returns the cleaned text (underscores removed).
    fn numeric_prefix(s: &str, allow_float: bool) -> String {
        let bytes = s.as_bytes();
        let mut i = 0;
        while i < bytes.len() && matches!(bytes[i], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
            i += 1;
        }
        let mut out = String::new();
        if i < bytes.len() && (bytes[i] == b'-' || bytes[i] == b'+') {
            out.push(bytes[i] as char);
            i += 1;
        }
        let digits = |i: &mut usize, out: &mut String| -> usize {
            let mut count = 0;
            while *i < bytes.len() {
                let b = bytes[*i];
                if b.is_ascii_digit() {
                    out.push(b as char);
                    count += 1;
                    *i += 1;
                } else if b == b'_' && count > 0 && bytes.get(*i + 1).is_some_and(|n| n.is_ascii_digit()) {
                    *i += 1;
                } else {
                    break;
                }
            }
            count
        };
        let int_digits = digits(&mut i, &mut out);
        if !allow_float {
            return if int_digits == 0 { String::new() } else { out };
        }
        if i + 1 < bytes.len() && bytes[i] == b'.' && bytes[i + 1].is_ascii_digit() {
            let mut frac = String::from(".");
            let mut j = i + 1;
            digits(&mut j, &mut frac);
            out.push_str(&frac);
            i = j;
        } else if int_digits == 0 {
            return String::new();
        }
        if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
            let mut exp = String::from("e");
            let mut j = i + 1;
            if j < bytes.len() && (bytes[j] == b'-' || bytes[j] == b'+') {
                exp.push(bytes[j] as char);
                j += 1;
            }
            if digits(&mut j, &mut exp) > 0 {
                out.push_str(&exp);
            }
        }
        out
    }

    /// `String#to_f`: the leading number, 0.0 when there is none.
    pub(crate) fn to_f(s: &str) -> f64 {
        let prefix = numeric_prefix(s, true);
        if prefix.is_empty() {
            return 0.0;
        }
        prefix.parse::<f64>().unwrap_or(0.0)
    }

    /// `String#to_i`: the leading integer, 0 when there is none. Integers beyond i128 saturate (Ruby would use a
    /// Bignum; no real benchmark output comes near).
    pub(crate) fn to_i(s: &str) -> i128 {
        let prefix = numeric_prefix(s, false);
        if prefix.is_empty() || prefix == "-" || prefix == "+" {
            return 0;
        }
        prefix.parse::<i128>().unwrap_or(if prefix.starts_with('-') { i128::MIN } else { i128::MAX })
    }

    /// `printf "%d"` of a Float: truncation toward zero; `None` for NaN and infinities (Ruby raises
    /// FloatDomainError).
    pub(crate) fn printf_d(x: f64) -> Option<String> {
        if !x.is_finite() {
            return None;
        }
        let t = x.trunc();
        // `{:.0}` prints every digit of a large integral float exactly, as Ruby's Bignum conversion does.
        Some(if t == 0.0 { "0".to_string() } else { format!("{t:.0}") })
    }

    fn non_finite(x: f64) -> Option<String> {
        if x.is_nan() {
            Some("NaN".into())
        } else if x.is_infinite() {
            Some(if x > 0.0 { "Inf".into() } else { "-Inf".into() })
        } else {
            None
        }
    }

    /// `printf "%.Nf"`.
    pub(crate) fn printf_f(x: f64, precision: usize) -> String {
        non_finite(x).unwrap_or_else(|| format!("{x:.precision$}"))
    }

    /// `printf "%g"`: six significant digits, trailing zeros removed, exponent form below 1e-4 or from 1e6.
    pub(crate) fn printf_g(x: f64) -> String {
        if let Some(s) = non_finite(x) {
            return s;
        }
        if x == 0.0 {
            return if x.is_sign_negative() { "-0".into() } else { "0".into() };
        }
        const PRECISION: i32 = 6;
        let sci = format!("{:.*e}", (PRECISION - 1) as usize, x);
        let (mantissa, exponent) = match sci.split_once('e') {
            Some(parts) => parts,
            None => return sci,
        };
        let exponent: i32 = exponent.parse().unwrap_or(0);
        if (-4..PRECISION).contains(&exponent) {
            let decimals = (PRECISION - 1 - exponent).max(0) as usize;
            strip_fraction_zeros(&format!("{x:.decimals$}"))
        } else {
            let sign = if exponent < 0 { '-' } else { '+' };
            format!("{}e{sign}{:02}", strip_fraction_zeros(mantissa), exponent.abs())
        }
    }

    fn strip_fraction_zeros(s: &str) -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    }

    /// Seconds since the epoch of `YYYY-MM-DD` and `HH:MM:SS` (optionally followed by ` AM`/` PM`) read as UTC,
    /// as lkp's `Time.parse("#{date} #{time} UTC").to_i` does for the dates monitors print.
    pub(crate) fn utc_epoch(date: &str, time: &str) -> Option<i64> {
        let mut d = date.split('-');
        let year: i64 = d.next()?.parse().ok()?;
        let month: i64 = d.next()?.parse().ok()?;
        let day: i64 = d.next()?.parse().ok()?;
        if d.next().is_some() || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
            return None;
        }
        let (clock, meridian) = match time.trim().split_once(' ') {
            Some((clock, m)) => (clock, Some(m.trim().to_ascii_uppercase())),
            None => (time.trim(), None),
        };
        let mut t = clock.split(':');
        let mut hour: i64 = t.next()?.parse().ok()?;
        let minute: i64 = t.next()?.parse().ok()?;
        let second: i64 = t.next()?.parse().ok()?;
        if t.next().is_some() || !(0..=59).contains(&minute) || !(0..=59).contains(&second) {
            return None;
        }
        match meridian.as_deref() {
            None if (0..=23).contains(&hour) => {}
            Some("AM") if (1..=12).contains(&hour) => hour %= 12,
            Some("PM") if (1..=12).contains(&hour) => hour = hour % 12 + 12,
            _ => return None,
        }
        Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
        let y = if month <= 2 { year - 1 } else { year };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let mp = (month + 9) % 12;
        let doy = (153 * mp + 2) / 5 + day - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn printf_g_matches_c() {
            for (x, want) in [
                (4.339120, "4.33912"),
                (0.0, "0"),
                (25.42351, "25.4235"),
                (1234567.0, "1.23457e+06"),
                (0.0000123, "1.23e-05"),
                (100.0, "100"),
                (0.5, "0.5"),
                (999999.5, "1e+06"),
                (f64::NAN, "NaN"),
            ] {
                assert_eq!(printf_g(x), want, "{x}");
            }
        }

        #[test]
        fn ruby_string_to_numbers() {
            assert_eq!(to_f("  12.5abc"), 12.5);
            assert_eq!(to_f("abc"), 0.0);
            assert_eq!(to_f("1_000.5"), 1000.5);
            assert_eq!(to_f("1e3x"), 1000.0);
            assert_eq!(to_f(".5"), 0.5);
            assert_eq!(to_i("12.7"), 12);
            assert_eq!(to_i("-3x"), -3);
            assert_eq!(to_i(""), 0);
        }

        #[test]
        fn array_sum_keeps_integers_exact_and_compensates_floats() {
            assert_eq!(sum(&[Num::Int(1), Num::Int(2)]), Num::Int(3));
            assert_eq!(sum(&[Num::Float(0.1), Num::Float(0.2), Num::Float(0.3)]), Num::Float(0.6));
            assert_eq!(sum(&[]), Num::Int(0));
        }

        #[test]
        fn epoch_of_utc_dates() {
            assert_eq!(utc_epoch("2015-01-11", "20:18:35"), Some(1_421_007_515));
            assert_eq!(utc_epoch("2019-03-08", "05:15:02 PM"), Some(1_552_065_302));
            assert_eq!(utc_epoch("2019-13-08", "17:15:02"), None);
            assert_eq!(utc_epoch("2019-03-08", "25:15:02"), None);
        }

        #[test]
        fn printf_d_truncates() {
            assert_eq!(printf_d(11541.9).as_deref(), Some("11541"));
            assert_eq!(printf_d(-3.9).as_deref(), Some("-3"));
            assert_eq!(printf_d(f64::INFINITY), None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_scalability_dd_in_zero_seconds_is_an_error() {
        let text = "./case-lru-file-readonce\n1048576000 bytes (1.0 GB, 1000 MiB) copied, 0 s, 3.2 GB/s\n";
        match parse_text(text) {
            Err(ParseError::Malformed { line: 2, detail, .. }) => assert!(detail.contains("infinite"), "{detail}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn vm_scalability_truncate_in_zero_seconds_is_an_error() {
        let text = "./case-truncate\n1048576 bytes truncated in 5.5-5.5 seconds\n";
        assert!(matches!(parse_text(text), Err(ParseError::Malformed { line: 2, .. })));
    }
}
