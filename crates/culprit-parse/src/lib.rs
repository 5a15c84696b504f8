//! Parsers that turn benchmark and monitor outputs into lkp-tests metrics, byte for byte as lkp's own parsers print.
//!
//! One module per program, one [`Parser`] trait, one [`registry`]. A parser takes text (never a path) and returns the
//! `key: value` lines lkp-tests' `stats/<program>` script prints for it, without the `<program>.` prefix. The values
//! are kept as the text lkp prints (Ruby's number formatting) so `culprit parse` can be compared byte for byte with
//! the fixtures, and are converted to `f64` metrics in one place ([`ParseOutput::metrics`]).

use std::borrow::Cow;
use std::collections::BTreeMap;
use thiserror::Error;

pub mod rubyfmt;

pub mod dbench;
pub mod fio;
pub mod fsmark;
pub mod hackbench;
pub mod iperf;
pub mod mpstat;
pub mod netperf;
pub mod oltp;
pub mod perf_bench;
pub mod perf_profile;
pub mod perf_stat;
pub mod pgbench;
pub mod stress_ng;
pub mod sysbench;
pub mod unixbench;
pub mod vm_scalability;
pub mod vmstat;
pub mod will_it_scale;

/// Why an output could not be parsed. The message says what was expected, and where.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ParseError {
    /// The output holds none of the lines or fields the parser looks for (empty, garbage, wrong program).
    #[error("no {program} results found: {hint}")]
    NoResults { program: &'static str, hint: String },
    /// The output starts right but stops early, e.g. a benchmark killed mid-run.
    #[error("{program} output is truncated: {detail}")]
    Truncated { program: &'static str, detail: String },
    /// A line or field has the wrong shape.
    #[error("{program} output, line {line}: {detail}")]
    Malformed { program: &'static str, line: usize, detail: String },
    /// A JSON document (fio) did not parse.
    #[error("{program} JSON: {detail}")]
    Json { program: &'static str, detail: String },
    /// A metric came out as NaN or an infinity (a `nan` printed by the benchmark, a division by a printed zero).
    /// Such a value is never a measurement, and stored it would poison every mean and test it enters.
    #[error(
        "{program} output: {key} is {value}, which is not a finite number; the benchmark printed nan, inf or a zero \
         where a measurement belongs, so this output cannot be used (look at the raw output for the cause)"
    )]
    NotFinite { program: &'static str, key: String, value: String },
}

/// What a parser says of a result line the output stops inside (no end of line after it): a benchmark killed while it
/// printed, whose last number may be cut short (`Time: 0.1` of `Time: 0.110`), so no figure of the line is taken.
pub(crate) fn cut_in_its_last_line(line: &str) -> String {
    format!(
        "the output stops inside its last line, {}, with no end of line after it, so its numbers may be cut short; the \
         run was killed or its output cut while it printed",
        excerpt(line)
    )
}

/// At most this many characters of an input are quoted in an error message.
const EXCERPT_CHARS: usize = 80;

/// A piece of the input quoted for an error message: at most 80 characters, in double quotes, with control and
/// other non-printable characters escaped, so a binary file cannot flood the terminal with garbage.
pub fn excerpt(text: &str) -> String {
    let mut out = String::from("\"");
    let mut chars = text.chars();
    for c in chars.by_ref().take(EXCERPT_CHARS) {
        out.extend(c.escape_debug());
    }
    out.push('"');
    let rest = chars.count();
    if rest > 0 {
        out.push_str(&format!(" (and {rest} more characters)"));
    }
    out
}

/// The leading run of `[0-9.]` characters of `text`, as lkp's `([0-9.]+)` captures it (empty when there is none).
pub(crate) fn number_prefix(text: &str) -> &str {
    let end = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    text.get(..end).unwrap_or_default()
}

/// The leading digits of `text`, as lkp's `(\d+)` captures it (empty when there are none).
pub(crate) fn digit_prefix(text: &str) -> &str {
    let end = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    text.get(..end).unwrap_or_default()
}

/// What a parser reads: the main output text, plus any sibling files of a result root it may need
/// (fio's `fio.output.N` per instance), by file name. The caller does the reading.
#[derive(Debug, Clone, Default)]
pub struct ParseInput<'a> {
    pub main: &'a str,
    pub files: BTreeMap<String, String>,
}

impl<'a> ParseInput<'a> {
    pub fn text(main: &'a str) -> Self {
        ParseInput { main, files: BTreeMap::new() }
    }
}

/// One output line: a `key: value` pair, or a `# comment` (vm-scalability prints those).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    Pair { key: String, value: String },
    Comment(String),
}

/// A parser's output, in the order lkp prints it. Monitors print repeated records that each start with
/// `time: <epoch>`; a key that repeats is a series of samples.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParseOutput {
    pub lines: Vec<Line>,
    /// What the parser left out of an input it still read, in sentences for the user (vmstat's incomplete last
    /// record). They are not part of the `key: value` text, which stays what lkp's parser would print, so callers
    /// show them apart: `culprit parse` on standard error.
    pub notes: Vec<String>,
    /// The indices in `lines` of Culprit's own keys: figures lkp's parser does not print for this output (a line its
    /// patterns do not match, such as PostgreSQL 14's `tps` line). Culprit's runs store them beside lkp's keys;
    /// `culprit parse` prints lkp's lines alone ([`ParseOutput::render_lkp`]) and names these apart.
    pub own: std::collections::BTreeSet<usize>,
}

impl ParseOutput {
    /// Adds one of Culprit's own keys, which lkp's parser does not print for this output.
    pub fn push_own(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.own.insert(self.lines.len());
        self.push(key, value);
    }

    /// The text lkp's own parser prints: [`ParseOutput::render`] without Culprit's own keys.
    pub fn render_lkp(&self) -> String {
        let lkp_s = self.lines.iter().enumerate().filter(|(i, _)| !self.own.contains(i));
        let lkp = ParseOutput { lines: lkp_s.map(|(_, line)| line.clone()).collect(), ..ParseOutput::default() };
        lkp.render()
    }

    /// Culprit's own `key: value` lines, in output order.
    pub fn own_lines(&self) -> Vec<String> {
        let own = self.lines.iter().enumerate().filter(|(i, _)| self.own.contains(i));
        own.filter_map(|(_, line)| match line {
            Line::Pair { key, value } => Some(format!("{key}: {value}")),
            Line::Comment(_) => None,
        })
        .collect()
    }

    pub fn note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }

    pub fn push(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.lines.push(Line::Pair { key: key.into(), value: value.into() });
    }

    pub fn comment(&mut self, text: impl Into<String>) {
        self.lines.push(Line::Comment(text.into()));
    }

    /// The exact text lkp's parser prints: one line per entry, no trailing newline after the last.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (i, line) in self.lines.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            match line {
                Line::Pair { key, value } => {
                    out.push_str(key);
                    out.push_str(": ");
                    out.push_str(value);
                }
                Line::Comment(text) => out.push_str(text),
            }
        }
        out
    }

    /// Checks that no value reads as NaN or an infinity (with Rust's reading, which [`ParseOutput::samples`] uses
    /// and which accepts `nan`, `inf` and Ruby's `NaN` and `Infinity`), so that every parser refuses such an
    /// output even where its own line-by-line checks missed a case.
    pub fn check_finite(self, program: &'static str) -> Result<Self, ParseError> {
        for line in &self.lines {
            if let Line::Pair { key, value } = line {
                if value.trim().parse::<f64>().is_ok_and(|v| !v.is_finite()) {
                    return Err(ParseError::NotFinite { program, key: key.clone(), value: value.trim().to_string() });
                }
            }
        }
        Ok(self)
    }

    /// Every numeric key with all its samples in output order (`time` excluded). Values that are not numbers
    /// (lkp prints a few strings) are left out.
    pub fn samples(&self) -> BTreeMap<String, Vec<f64>> {
        let mut map: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for line in &self.lines {
            if let Line::Pair { key, value } = line {
                if key == "time" {
                    continue;
                }
                if let Ok(v) = value.trim().parse::<f64>() {
                    map.entry(key.clone()).or_default().push(v);
                }
            }
        }
        map
    }

    /// The `time` of each record, in output order: a monitor's records each start with it, as lkp's parsers print
    /// them; [`ParseOutput::samples`] holds the other keys. A `time` that is not a number is left out.
    pub fn times(&self) -> Vec<f64> {
        let time = |line: &Line| match line {
            Line::Pair { key, value } if key == "time" => value.trim().parse().ok(),
            _ => None,
        };
        self.lines.iter().filter_map(time).collect()
    }

    /// The per-run scalar metrics, named `<program>.<key>`: a key printed once keeps its value; a key printed
    /// several times (a monitor's samples, or a multi-instance benchmark) is reduced to its mean, as lkp's
    /// `stats.json` does for a run.
    ///
    /// lkp's `dump-stat` also pads a key that first appears in a later record with zeros for the records before,
    /// and its mean divides by the number of records; this does neither. That matters for mpstat, whose parser
    /// prints `max_utilization_pct` and `max_utilization.seconds` once, after the last record, multiplied by the
    /// number of records so that lkp's padded mean gives the plain figure: here they come out that many times too
    /// large. Culprit reduces no mpstat output with this (mpstat is an import format, and `culprit parse` prints the
    /// text), and perf-stat, whose per-interval ratios some intervals lack, has lkp's reduction in
    /// [`perf_stat::run_metrics`].
    pub fn metrics(&self, program: &str) -> BTreeMap<String, f64> {
        self.samples()
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| (format!("{program}.{k}"), v.iter().sum::<f64>() / v.len() as f64))
            .collect()
    }
}

/// Whether a program is a benchmark (its metrics are the point) or a monitor (sampled alongside).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Benchmark,
    Monitor,
}

/// A parser for one program's output.
pub trait Parser: Sync {
    /// The lkp program name, which is also the metric prefix: `fio`, `fsmark`, `stress-ng`, `perf-profile`, ...
    fn name(&self) -> &'static str;
    fn kind(&self) -> Kind;
    /// The parser's own reading of the output, before the check that every value is finite. Callers use
    /// [`Parser::parse`].
    fn read_output(&self, input: &ParseInput<'_>) -> Result<ParseOutput, ParseError>;
    /// The output's `key: value` lines; an error when the output is garbage, cut short or holds a value that is
    /// NaN or infinite ([`ParseError::NotFinite`]). The finite check is here, once, so that no parser can hand a
    /// NaN to the executor or to `culprit parse`, whatever case its own line checks miss.
    ///
    /// Every parser is also handed its text as plain text ([`plain_text`]): CRLF line ends read as LF, spaces and tabs
    /// at the end of a line are dropped, and so is a leading byte order mark, once here rather than in each parser's
    /// own reading of lines.
    ///
    /// A main output that stops inside a number of its last line (no end of line after it) is never read as it is:
    /// `Time: 0.1` may be the start of `Time: 0.110`. A benchmark's is an error ([`ParseError::Truncated`]); a
    /// monitor's loses that last line, with a note, as lkp drops an incomplete last record.
    fn parse(&self, input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        let plain = is_plain_text(input.main) && input.files.values().all(|text| is_plain_text(text));
        let main = plain_text(input.main);
        let plain_files =
            || input.files.iter().map(|(name, text)| (name.clone(), plain_text(text).into_owned())).collect();
        let whole = if plain {
            self.read_output(input)
        } else {
            self.read_output(&ParseInput { main: &main, files: plain_files() })
        };
        // An output the parser refuses keeps its reason (garbage ending in a digit is garbage, not a cut output).
        let cut = if self.reads_an_unended_last_line() || whole.is_err() { None } else { unended_number_line(&main) };
        let result = match (cut, self.kind()) {
            (None, _) => whole,
            (Some(start), Kind::Benchmark) => {
                let detail = cut_in_its_last_line(&main[start..]);
                return Err(ParseError::Truncated { program: self.name(), detail });
            }
            (Some(start), Kind::Monitor) => {
                self.read_output(&ParseInput { main: &main[..start], files: plain_files() }).map(|mut out| {
                    out.note(format!(
                        "the last line, {}, stops inside a number with no end of line after it, and was dropped, as \
                         lkp drops an incomplete last record; the monitor was killed or its output cut while it wrote",
                        excerpt(&main[start..])
                    ));
                    out
                })
            }
        };
        result.and_then(|out| out.check_finite(self.name()))
    }

    /// Whether the parser judges an output's unended last line itself (vmstat, whose whole record without its line
    /// end is a sample, and whose cut one it drops by its columns) rather than by [`Parser::parse`]'s rule.
    fn reads_an_unended_last_line(&self) -> bool {
        false
    }
}

/// Where the last line of `text` starts when the text stops inside a number of it: no end of line after it, and
/// a digit or a decimal point last (spaces and tabs after it aside, which [`plain_text`] drops).
fn unended_number_line(text: &str) -> Option<usize> {
    if text.is_empty() || text.ends_with('\n') {
        return None;
    }
    let start = text.rfind('\n').map_or(0, |i| i + 1);
    let last = text[start..].trim_end_matches([' ', '\t']);
    last.ends_with(|c: char| c.is_ascii_digit() || c == '.').then_some(start)
}

/// An output as plain text: CRLF line ends as LF, no spaces or tabs at the end of a line, and without a leading byte
/// order mark. An output captured through a terminal (`ssh -t`, `script`) ends its lines with CRLF, and an editor on
/// Windows may add the mark; read as they were, the CR left at a line's end changed stress-ng's metric names (its
/// `$`-anchored suffix no longer matched) and made perf-profile's report unreadable, and the mark renamed perf bench's
/// first metric. Output pasted from a terminal, or captured through a tool that pads its lines, ends every line with
/// spaces or tabs, which did the same to stress-ng's names and lost perf-stat's `metric.<unit>` keys. No format
/// Culprit reads gives trailing whitespace a meaning: the column-aligned reports (perf report, netperf, unixbench)
/// split on whitespace, and JSON (fio, iperf) allows it between tokens and never inside a string on one line. A CR
/// alone (a progress line redrawn in place) is left as it is.
pub fn plain_text(text: &str) -> Cow<'_, str> {
    let text = text.strip_prefix(BYTE_ORDER_MARK).unwrap_or(text);
    if is_plain_text(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        match line.strip_suffix('\n') {
            // A CR among the blanks before an LF goes too (the CR of a CRLF after padding, or padding after it),
            // so that what comes out is plain text that a second pass leaves as it is.
            Some(body) => {
                out.push_str(body.trim_end_matches(LINE_END_BLANKS));
                out.push('\n');
            }
            None => out.push_str(line.trim_end_matches(TRAILING_BLANKS)),
        }
    }
    Cow::Owned(out)
}

/// Whether `text` is plain text already ([`plain_text`] gives it back as it is): no byte order mark, and no line
/// ending in a CR before its LF or in a space or tab.
fn is_plain_text(text: &str) -> bool {
    if text.starts_with(BYTE_ORDER_MARK) {
        return false;
    }
    let mut lines = text.split('\n');
    // `split` yields at least one piece; the last is the text after the last LF, whose CR is not part of a CRLF.
    let last = lines.next_back().unwrap_or_default();
    !last.ends_with(TRAILING_BLANKS) && lines.all(|line| !line.ends_with(LINE_END_BLANKS))
}

/// The characters [`plain_text`] drops at the end of the text: the padding terminals and tools add.
const TRAILING_BLANKS: [char; 2] = [' ', '\t'];

/// The characters [`plain_text`] drops before an LF: the padding, and the CR of a CRLF.
const LINE_END_BLANKS: [char; 3] = [' ', '\t', '\r'];

/// The byte order mark an editor may put before a text.
const BYTE_ORDER_MARK: char = '\u{feff}';

/// Every parser Culprit has, in one place.
pub fn registry() -> &'static [&'static dyn Parser] {
    &REGISTRY
}

static SYSBENCH_CPU: sysbench::SysbenchProgram = sysbench::SysbenchProgram(sysbench::SysbenchTest::Cpu);
static SYSBENCH_MEMORY: sysbench::SysbenchProgram = sysbench::SysbenchProgram(sysbench::SysbenchTest::Memory);
static SYSBENCH_THREADS: sysbench::SysbenchProgram = sysbench::SysbenchProgram(sysbench::SysbenchTest::Threads);
static SYSBENCH_MUTEX: sysbench::SysbenchProgram = sysbench::SysbenchProgram(sysbench::SysbenchTest::Mutex);
static SYSBENCH_FILEIO: sysbench::SysbenchProgram = sysbench::SysbenchProgram(sysbench::SysbenchTest::Fileio);

static PERF_BENCH_SCHED_PIPE: perf_bench::PerfBench = perf_bench::PerfBench(perf_bench::PerfBenchKind::SchedPipe);
static PERF_BENCH_SCHED_MESSAGING: perf_bench::PerfBench =
    perf_bench::PerfBench(perf_bench::PerfBenchKind::SchedMessaging);
static PERF_BENCH_SYSCALL: perf_bench::PerfBench = perf_bench::PerfBench(perf_bench::PerfBenchKind::Syscall);
static PERF_BENCH_FUTEX: perf_bench::PerfBench = perf_bench::PerfBench(perf_bench::PerfBenchKind::Futex);
static PERF_BENCH_MEM: perf_bench::PerfBench = perf_bench::PerfBench(perf_bench::PerfBenchKind::Mem);
static PERF_BENCH_NUMA_MEM: perf_bench::PerfBench = perf_bench::PerfBench(perf_bench::PerfBenchKind::NumaMem);

static REGISTRY: [&dyn Parser; 28] = [
    &dbench::Dbench,
    &fio::Fio,
    &fsmark::Fsmark,
    &hackbench::Hackbench,
    &iperf::Iperf,
    &mpstat::Mpstat,
    &netperf::Netperf,
    &oltp::Oltp,
    &PERF_BENCH_FUTEX,
    &PERF_BENCH_MEM,
    &PERF_BENCH_NUMA_MEM,
    &PERF_BENCH_SCHED_MESSAGING,
    &PERF_BENCH_SCHED_PIPE,
    &PERF_BENCH_SYSCALL,
    &perf_profile::PerfProfile,
    &perf_stat::PerfStat,
    &pgbench::Pgbench,
    &stress_ng::StressNg,
    &sysbench::Sysbench,
    &SYSBENCH_CPU,
    &SYSBENCH_FILEIO,
    &SYSBENCH_MEMORY,
    &SYSBENCH_MUTEX,
    &SYSBENCH_THREADS,
    &unixbench::Unixbench,
    &vm_scalability::VmScalability,
    &vmstat::Vmstat,
    &will_it_scale::WillItScale,
];

/// The parser for a program name (`fs_mark` is accepted for `fsmark`).
pub fn lookup(program: &str) -> Option<&'static dyn Parser> {
    let program = match program {
        "fs_mark" => "fsmark",
        "perf_profile" => "perf-profile",
        "perf_stat" => "perf-stat",
        "stress_ng" => "stress-ng",
        "vm_scalability" => "vm-scalability",
        "will_it_scale" => "will-it-scale",
        other => other,
    };
    registry().iter().copied().find(|p| p.name() == program)
}

/// The names of every parser, for error messages.
pub fn names() -> Vec<&'static str> {
    registry().iter().map(|p| p.name()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_is_short_and_escaped() {
        assert_eq!(excerpt("12ab"), "\"12ab\"");
        assert_eq!(excerpt("a\u{1}\u{1b}b\n"), "\"a\\u{1}\\u{1b}b\\n\"");
        let long = "x".repeat(300);
        let quoted = excerpt(&long);
        assert_eq!(quoted, format!("\"{}\" (and 220 more characters)", "x".repeat(80)));
    }

    #[test]
    fn check_finite_names_the_key_and_value() {
        let mut out = ParseOutput::default();
        out.push("ok", "1.5");
        out.push("text", "not a number");
        out.push("rate", "NaN");
        match out.check_finite("x") {
            Err(ParseError::NotFinite { key, value, .. }) => {
                assert_eq!((key.as_str(), value.as_str()), ("rate", "NaN"))
            }
            other => panic!("{other:?}"),
        }
        for bad in ["inf", "-Infinity", "nan", " 1e999"] {
            let mut out = ParseOutput::default();
            out.push("v", bad);
            let message = out.check_finite("x").map(|_| String::new()).unwrap_or_else(|e| e.to_string());
            assert!(message.contains("v is") && message.contains("not a finite number"), "{bad}: {message}");
        }
        let mut fine = ParseOutput::default();
        fine.push("v", "0");
        fine.comment("# 1 nan");
        assert!(fine.check_finite("x").is_ok());
    }

    #[test]
    fn plain_text_drops_line_end_blanks_crs_and_the_mark_and_is_stable() {
        let cases = [
            ("a  \nb\t\n", "a\nb\n"),
            ("a \t\r\nb \r\n\t\n", "a\nb\n\n"),
            ("a\r \nlast \t", "a\nlast"),
            ("\u{feff}x: 1 \n", "x: 1\n"),
            // A CR inside a line, or ending the text without an LF, is a progress line redrawn, not a line end.
            ("50%\r100%\n", "50%\r100%\n"),
            ("a\nb\r", "a\nb\r"),
            ("  indented\n", "  indented\n"),
            ("", ""),
        ];
        for (text, want) in cases {
            let once = plain_text(text);
            assert_eq!(once, want, "{text:?}");
            assert!(is_plain_text(&once), "{text:?} gave {once:?}, which is not plain text");
            assert!(matches!(plain_text(&once), Cow::Borrowed(_)), "{text:?}: a second pass changed {once:?}");
        }
        assert!(is_plain_text("a\nb\n") && !is_plain_text("a \nb\n") && !is_plain_text("a\nb\t"));
    }

    /// A parser whose own reading lets a NaN through, to prove `Parser::parse` refuses it for every parser.
    struct Leaky;

    impl Parser for Leaky {
        fn name(&self) -> &'static str {
            "leaky"
        }
        fn kind(&self) -> Kind {
            Kind::Benchmark
        }
        fn read_output(&self, input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
            let mut out = ParseOutput::default();
            out.push("throughput", input.main);
            Ok(out)
        }
    }

    #[test]
    fn parse_refuses_non_finite_values_whatever_the_parser() {
        assert!(matches!(Leaky.parse(&ParseInput::text("nan")), Err(ParseError::NotFinite { program: "leaky", .. })));
        assert!(Leaky.parse(&ParseInput::text("12\n")).is_ok());
    }

    /// A monitor that reads every number it is given, as [`Leaky`] does for a benchmark.
    struct Counting;

    impl Parser for Counting {
        fn name(&self) -> &'static str {
            "counting"
        }
        fn kind(&self) -> Kind {
            Kind::Monitor
        }
        fn read_output(&self, input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
            let mut out = ParseOutput::default();
            for line in input.main.lines() {
                out.push("value", line);
            }
            Ok(out)
        }
    }

    #[test]
    fn a_number_the_output_stops_inside_is_never_read() {
        let cases: &[(&str, Option<usize>)] = &[
            ("Time: 0.110\n", None),
            ("Time: 0.1", Some(0)),
            ("a\nTime: 0.", Some(2)),
            ("a\nmax: 32 \t", Some(2)),
            ("a\nTime:", None),
            ("{\"jobs\": []}", None),
            ("", None),
        ];
        for (text, start) in cases {
            assert_eq!(unended_number_line(text), *start, "{text:?}");
        }
        // A benchmark's is an error saying where it stops.
        match Leaky.parse(&ParseInput::text("Time: 0.1")) {
            Err(ParseError::Truncated { program: "leaky", detail }) => {
                assert!(detail.contains("Time: 0.1"), "{detail}");
            }
            other => panic!("{other:?}"),
        }
        // A monitor's last sample is dropped, with a note; CRLF line ends are read first.
        let out = Counting.parse(&ParseInput::text("1\r\n2\r\n3")).unwrap();
        assert_eq!(out.samples().get("value"), Some(&vec![1.0, 2.0]));
        assert!(out.notes[0].contains("the last line, \"3\", stops inside a number"), "{:?}", out.notes);
    }
}
