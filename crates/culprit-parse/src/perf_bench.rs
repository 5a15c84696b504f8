//! Parsers for `perf bench` (Debian package `linux-perf`): the scheduler, system-call, futex and memory benchmarks
//! lkp-tests runs as `perf-bench-sched-pipe`, `perf-bench-sched-messaging`, `perf-bench-syscall`,
//! `perf-bench-futex`, `perf-bench-mem` and `perf-bench-numa-mem`, printing what lkp's `programs/perf-bench-*/parse`
//! scripts print.
//!
//! Format read: perf bench's default output, e.g. for `perf bench sched pipe -l 20000`:
//!
//! ```text
//! # Running 'sched/pipe' benchmark:
//! # Executed 20000 pipe operations between two processes
//!
//!      Total time: 0.147 [sec]
//!
//!        7.390300 usecs/op
//!          135312 ops/sec
//! ```
//!
//! Metrics (lkp's names; the values are the printed text, as lkp's parsers print their captures):
//! - `perf-bench-sched-pipe.ops_per_sec`;
//! - `perf-bench-sched-messaging.total_time_sec` (lower is better: every group sends its messages, and the time
//!   they take is the result);
//! - `perf-bench-syscall.<call>.total_time_sec`, `.usecs_per_op`, `.ops_per_sec` (thousands separators dropped),
//!   where `<call>` is the system call the `# Executed N <call>() calls` line names (`getppid` for `basic`);
//! - `perf-bench-futex.ops/s` (hash, lock-pi), `.wokeup_time_ms` (wake), `.requeued_time_ms` (requeue),
//!   `.avg_per_thread_latency_ms` (wake-parallel), each with `.stddev%`, from the summary line of the benchmark's
//!   runs (lkp reads a wake-parallel summary only for a single-digit thread count, `waking 1/8`; here any count);
//! - `perf-bench-mem.<op>.<function>.<unit>_per_sec` (`memcpy.default.GB_per_sec`), one per function run;
//! - `perf-bench-numa-mem.secs_latency` (NUMA convergence), `.secs_slowest`, `.secs_fastest`, `.secs_avg` (thread
//!   runtimes), `.max_avg_diff` (their spread, %), `.GB_per_thread`, `.GB_total`, `.nsecs_byte_thread`,
//!   `.GB_sec_thread`, `.GB_sec_total`, from the `main, <value>, <unit>, <name>` result lines.
//!
//! Where lkp prints nothing (the benchmark was killed before its result, or the file is not perf bench's), this is an
//! error: [`ParseError::Truncated`] when perf bench's `# Running` header is there, [`ParseError::NoResults`]
//! otherwise, so that a run without a result is a failed run rather than an ok run with no metric.

use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};
use regex::Regex;
use std::sync::OnceLock;

/// One of the `perf bench` benchmarks lkp runs under its own program name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerfBenchKind {
    SchedPipe,
    SchedMessaging,
    Syscall,
    Futex,
    Mem,
    NumaMem,
}

impl PerfBenchKind {
    /// lkp's program name, the metric prefix.
    pub fn program(self) -> &'static str {
        match self {
            PerfBenchKind::SchedPipe => "perf-bench-sched-pipe",
            PerfBenchKind::SchedMessaging => "perf-bench-sched-messaging",
            PerfBenchKind::Syscall => "perf-bench-syscall",
            PerfBenchKind::Futex => "perf-bench-futex",
            PerfBenchKind::Mem => "perf-bench-mem",
            PerfBenchKind::NumaMem => "perf-bench-numa-mem",
        }
    }

    /// The `collection/benchmark` perf bench names in its `# Running '...' benchmark:` header.
    fn header(self) -> &'static str {
        match self {
            PerfBenchKind::SchedPipe => "sched/pipe",
            PerfBenchKind::SchedMessaging => "sched/messaging",
            PerfBenchKind::Syscall => "syscall/",
            PerfBenchKind::Futex => "futex/",
            PerfBenchKind::Mem => "mem/",
            PerfBenchKind::NumaMem => "numa/mem",
        }
    }
}

/// The parser of one [`PerfBenchKind`]'s output.
pub struct PerfBench(pub PerfBenchKind);

impl Parser for PerfBench {
    fn name(&self) -> &'static str {
        self.0.program()
    }
    fn kind(&self) -> Kind {
        Kind::Benchmark
    }
    fn read_output(&self, input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        parse_text(self.0, input.main)
    }
}

struct Patterns {
    ops_per_sec: Regex,
    total_time: Regex,
    usecs_per_op: Regex,
    grouped_ops_per_sec: Regex,
    executed_call: Regex,
    futex_summaries: [(Regex, &'static str); 4],
    mem_op: Regex,
    mem_function: Regex,
    mem_rate: Regex,
    numa_mem_results: Vec<(Regex, &'static str)>,
}

/// lkp's wake-parallel summary: `waking N/M threads` of single digits.
fn single_digit_waking() -> &'static Regex {
    static WAKING: OnceLock<Regex> = OnceLock::new();
    WAKING.get_or_init(|| Regex::new(r"\(waking \d/\d threads\)").expect("the waking pattern is valid"))
}

fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        let compile = |pattern: &str| Regex::new(pattern).expect("the perf bench patterns are valid");
        Patterns {
            ops_per_sec: compile(r"(\d+) ops/sec"),
            total_time: compile(r"Total time:\s*([\d.]+)\s*\[sec\]"),
            usecs_per_op: compile(r"([\d.]+)\s*usecs/op"),
            grouped_ops_per_sec: compile(r"([\d,]+)\s*ops/sec"),
            executed_call: compile(r"^# Executed [\d,]+ (\w+)\(\) calls"),
            futex_summaries: [
                (compile(r"Averaged ([\d.]+) operations/sec \(\+- ([\d.]+)%\)"), "ops/s"),
                (compile(r"^Wokeup \d+ of \d+ threads in ([\d.]+) ms \(\+-([\d.]+)%\)"), "wokeup_time_ms"),
                (compile(r"^Requeued \d+ of \d+ threads in ([\d.]+) ms \(\+-([\d.]+)%\)"), "requeued_time_ms"),
                (
                    compile(r"^Avg per-thread latency \(waking \d+/\d+ threads\) in ([\d.]+) ms \(\+-([\d.]+)%\)"),
                    "avg_per_thread_latency_ms",
                ),
            ],
            mem_op: compile(r"^# Running 'mem/(\w+)' benchmark:"),
            mem_function: compile(r"^# function '([^']+)'"),
            mem_rate: compile(r"^\s*([\d.]+|inf)d?\s+(bytes|KB|MB|GB)/sec"),
            // lkp's keys and the unit and name each is printed with.
            numa_mem_results: [
                ("secs_latency", r"secs,\s*NUMA-convergence-latency"),
                ("secs_slowest", r"secs,\s*runtime-max/thread"),
                ("secs_fastest", r"secs,\s*runtime-min/thread"),
                ("secs_avg", r"secs,\s*runtime-avg/thread"),
                ("max_avg_diff", r"%,\s*spread-runtime/thread"),
                ("GB_per_thread", r"GB,\s*data/thread"),
                ("GB_total", r"GB,\s*data-total"),
                ("nsecs_byte_thread", r"nsecs,\s*runtime/byte/thread"),
                ("GB_sec_thread", r"GB/sec,\s*thread-speed"),
                ("GB_sec_total", r"GB/sec,\s*total-speed"),
            ]
            .into_iter()
            .map(|(key, result)| (compile(&format!(r"([\d.]+),\s*{result}")), key))
            .collect(),
        }
    })
}

fn parse_text(kind: PerfBenchKind, text: &str) -> Result<ParseOutput, ParseError> {
    let p = patterns();
    let mut out = ParseOutput::default();
    let mut header_seen = false;
    // perf bench syscall names its call in a line before the figures, and mem its operation and function; lkp
    // keys the figures by them.
    let mut call = String::new();
    let (mut op, mut function) = (String::new(), "default".to_string());
    for (index, line) in text.lines().enumerate() {
        if line.starts_with("# Running '") && line.contains(kind.header()) {
            header_seen = true;
        }
        let capture = |re: &Regex| re.captures(line).and_then(|c| c.get(1)).map(|m| m.as_str().to_string());
        match kind {
            PerfBenchKind::SchedPipe => {
                if let Some(ops) = capture(&p.ops_per_sec) {
                    out.push("ops_per_sec", ops);
                }
            }
            PerfBenchKind::SchedMessaging => {
                if let Some(secs) = capture(&p.total_time) {
                    out.push("total_time_sec", secs);
                }
            }
            PerfBenchKind::Syscall => {
                // lkp's case statement: the first pattern that matches a line decides it.
                if let Some(name) = capture(&p.executed_call) {
                    call = name;
                } else if let Some(secs) = capture(&p.total_time) {
                    out.push(format!("{call}.total_time_sec"), secs);
                } else if let Some(usecs) = capture(&p.usecs_per_op) {
                    out.push(format!("{call}.usecs_per_op"), usecs);
                } else if let Some(ops) = capture(&p.grouped_ops_per_sec) {
                    out.push(format!("{call}.ops_per_sec"), ops.replace(',', ""));
                }
            }
            PerfBenchKind::Futex => {
                let summary = p.futex_summaries.iter().find_map(|(re, key)| re.captures(line).map(|c| (c, *key)));
                if let Some((c, key)) = summary {
                    let text = |i: usize| c.get(i).map_or("", |m| m.as_str()).to_string();
                    // lkp's pattern reads a wake-parallel summary only of single-digit counts (`waking 1/8`).
                    let lkp_s = key != "avg_per_thread_latency_ms" || single_digit_waking().is_match(line);
                    if lkp_s {
                        out.push(key, text(1));
                        out.push("stddev%", text(2));
                    } else {
                        out.push_own(key, text(1));
                        out.push_own("stddev%", text(2));
                    }
                }
            }
            PerfBenchKind::Mem => {
                if let Some(name) = capture(&p.mem_op) {
                    op = name;
                } else if let Some(name) = capture(&p.mem_function) {
                    function = name;
                } else if let Some(c) = p.mem_rate.captures(line) {
                    let text = |i: usize| c.get(i).map_or("", |m| m.as_str());
                    // perf divides the bytes by a time its clock read as zero: a size too small to time, which
                    // more bytes or loops mend (perf 6.1 prints `inf GB/sec` for `--size 1KB`).
                    if text(1) == "inf" {
                        return Err(ParseError::Malformed {
                            program: kind.program(),
                            line: index + 1,
                            detail: format!(
                                "perf printed `inf {unit}/sec` for {op}'s function '{function}': the copy took less \
                                 time than perf's clock can tell from none; give a larger `size` or more `nr_loops`",
                                unit = text(2)
                            ),
                        });
                    }
                    out.push(format!("{op}.{function}.{}_per_sec", text(2)), text(1).to_string());
                }
            }
            PerfBenchKind::NumaMem => {
                // lkp tries every key on every line, printing each that matches.
                for (re, key) in &p.numa_mem_results {
                    if let Some(value) = capture(re) {
                        out.push(*key, value);
                    }
                }
            }
        }
    }
    if !out.samples().is_empty() {
        return Ok(out);
    }
    let program = kind.program();
    if header_seen {
        Err(ParseError::Truncated {
            program,
            detail: format!("perf bench started '{}' but printed no result (killed or stopped early?)", kind.header()),
        })
    } else {
        Err(ParseError::NoResults {
            program,
            hint: format!("expected perf bench's `# Running '{}...' benchmark:` output", kind.header()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(kind: PerfBenchKind, text: &str) -> Result<Vec<(String, String)>, ParseError> {
        let out = PerfBench(kind).parse(&ParseInput::text(text))?;
        Ok(out
            .lines
            .iter()
            .filter_map(|l| match l {
                crate::Line::Pair { key, value } => Some((key.clone(), value.clone())),
                _ => None,
            })
            .collect())
    }

    #[test]
    fn each_benchmark_prints_lkps_keys() {
        // (kind, output recorded with perf 6.1 on this machine, expected pairs)
        let pipe = "# Running 'sched/pipe' benchmark:\n# Executed 20000 pipe operations between two processes\n\n     \
                    Total time: 0.147 [sec]\n\n       7.390300 usecs/op\n         135312 ops/sec\n";
        let messaging = "# Running 'sched/messaging' benchmark:\n# 20 sender and receiver processes per group\n\
                         # 2 groups == 80 processes run\n\n     Total time: 0.080 [sec]\n";
        let syscall = "# Running 'syscall/basic' benchmark:\n# Executed 100,000 getppid() calls\n     Total time: \
                       0.024 [sec]\n\n       0.244770 usecs/op\n        4,085,467 ops/sec\n";
        let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
            list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        let cases = [
            (PerfBenchKind::SchedPipe, pipe, pairs(&[("ops_per_sec", "135312")])),
            (PerfBenchKind::SchedMessaging, messaging, pairs(&[("total_time_sec", "0.080")])),
            (
                PerfBenchKind::Syscall,
                syscall,
                pairs(&[
                    ("getppid.total_time_sec", "0.024"),
                    ("getppid.usecs_per_op", "0.244770"),
                    ("getppid.ops_per_sec", "4085467"),
                ]),
            ),
        ];
        for (kind, text, want) in cases {
            assert_eq!(parse(kind, text).expect("parses"), want, "{kind:?}");
        }
    }

    #[test]
    fn a_run_killed_before_its_result_is_truncated_and_other_text_has_no_results() {
        let started = "# Running 'sched/pipe' benchmark:\n# Executed 20000 pipe operations between two processes\n";
        assert!(matches!(parse(PerfBenchKind::SchedPipe, started), Err(ParseError::Truncated { .. })));
        let started = "# Running 'sched/messaging' benchmark:\n# 20 sender and receiver processes per group\n";
        assert!(matches!(parse(PerfBenchKind::SchedMessaging, started), Err(ParseError::Truncated { .. })));
        for kind in [PerfBenchKind::SchedPipe, PerfBenchKind::SchedMessaging, PerfBenchKind::Syscall] {
            for text in ["", "garbage\n", "Time: 0.5\n"] {
                let error = parse(kind, text).expect_err("no result");
                assert!(matches!(error, ParseError::NoResults { .. }), "{kind:?} {text:?}: {error}");
            }
        }
        // QA 58: `perf bench mem memcpy --size 1KB --nr_loops 1` (perf 6.1, this machine) times each copy as 0 and
        // prints `inf GB/sec`, which read as a run that stopped before its result.
        let too_small = "# Running 'mem/memcpy' benchmark:\n# function 'default' (Default memcpy() provided by glibc)\n\
                         # Copying 1KB bytes ...\n\n            inf GB/sec\n";
        let error = parse(PerfBenchKind::Mem, too_small).expect_err("no measurement");
        let text = error.to_string();
        assert!(matches!(error, ParseError::Malformed { line: 5, .. }), "{error:?}");
        let named = text.contains("`inf GB/sec` for memcpy's function 'default'");
        assert!(named && text.contains("larger `size`"), "{text}");
        // Another benchmark's output is not this one's result, though it has the same kind of lines.
        let messaging = "# Running 'sched/messaging' benchmark:\n     Total time: 0.080 [sec]\n";
        assert!(parse(PerfBenchKind::SchedPipe, messaging).is_err());
    }
}
