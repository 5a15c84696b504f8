//! Which way is better for a metric: the direction table that turns a significant change into "regression" or
//! "improvement" (lkp keeps the same knowledge in `etc/index-perf-all.yaml` and `etc/index-latency-all.yaml`).
//!
//! Patterns are globs over the whole metric name, where `*` matches any run of characters (dots included).
//! The FIRST matching pattern wins, so specific patterns come before the general fallbacks at the end.
//! A metric no pattern matches has an unknown direction, and its significant changes are reported as "changed".

use serde::{Deserialize, Serialize};

/// Whether larger values of a metric are better, worse, or neither is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// +1: throughput, operations per second, bandwidth, scores.
    HigherIsBetter,
    /// -1: latency, elapsed time, overhead, failures.
    LowerIsBetter,
    /// No rule: the change is reported without a judgement.
    Unknown,
}

impl Direction {
    /// +1, -1 or 0, as lkp writes it.
    pub fn sign(self) -> i8 {
        match self {
            Direction::HigherIsBetter => 1,
            Direction::LowerIsBetter => -1,
            Direction::Unknown => 0,
        }
    }

    fn from_sign(sign: i8) -> Direction {
        match sign {
            s if s > 0 => Direction::HigherIsBetter,
            s if s < 0 => Direction::LowerIsBetter,
            _ => Direction::Unknown,
        }
    }
}

/// The direction table: (glob pattern, +1 better higher / -1 better lower / 0 explicitly unknown).
///
/// Kept as data so `docs/statistics.md` can show it and tests can check every entry is reachable.
pub const DIRECTION_TABLE: &[(&str, i8)] = &[
    // The time monitor's rows, named as lkp names them after the program (`sysbench-cpu.time.user_time`), first: a
    // program's own patterns (`sysbench*.time*`) must not claim them. The wall time is better shorter; CPU time over
    // the whole run has no better side: a benchmark that runs for a fixed time (fio's time_based, stress-ng's
    // testtime, sysbench's --time, pgbench's -T) spends more of it when it does more work, so fio's +198% user time
    // beside +1688% IOPS is no regression (QA 46); page faults and context switches neither. A `command` job's fixed
    // work has its own per-execution CPU times below.
    ("*.time.elapsed_time*", -1),
    ("*.time.*", 0),
    // fio latency histograms (`fio.latency_50ms%`) are the share of I/Os in one bucket: a shift from the
    // 50 ms bucket to the 10 ms bucket raises one and lowers the other, so neither direction is "better".
    ("fio.latency_*%", 0),
    ("fio.*_iops", 1),
    ("fio.*_bw_MBps", 1),
    ("fio.*_bw", 1),
    ("fio.workload", 1),
    ("fio.*clat*", -1),
    ("fio.*slat*", -1),
    ("fio.*lat*", -1),
    ("fsmark.files_per_sec", 1),
    ("fsmark.app_overhead", -1),
    ("stress-ng.*.ops_per_sec", 1),
    ("stress-ng.*_per_sec", 1),
    ("stress-ng.*.ops", 1),
    // A stressor's own figures beside its ops (QA 59: `switch.nanosecs_per_context_switch_pipe_method` had no
    // direction): times per operation are better shorter, data rates (`write128_MB/sec`) higher.
    ("stress-ng.*.nanosecs_per_*", -1),
    ("stress-ng.*/sec", 1),
    // `throughput` and its `_avg`, `_best`, `_worst` and per-instance forms (see the hackbench parser) are rates.
    ("hackbench.throughput*", 1),
    // perf bench: the pipe and syscall benchmarks print rates and times per operation; messaging the time its
    // fixed number of messages took.
    ("perf-bench-*.ops_per_sec", 1),
    ("perf-bench-*.usecs_per_op", -1),
    ("perf-bench-*total_time_sec", -1),
    ("perf-bench-futex.ops/s", 1),
    ("perf-bench-futex.*_ms", -1),
    // The futex benchmarks' spread over their own repetitions, in percent: not a performance either way.
    ("perf-bench-futex.stddev%", 0),
    ("perf-bench-mem.*_per_sec", 1),
    // lkp's index-perf and index-latency: the speeds are better higher, the convergence latency and the thread
    // runtimes lower; the runtimes' spread is a description of the run, not a performance either way.
    ("perf-bench-numa-mem.GB_sec_*", 1),
    ("perf-bench-numa-mem.secs_*", -1),
    ("perf-bench-numa-mem.nsecs_byte_thread", -1),
    ("sysbench*latency*", -1),
    ("sysbench*.time*", -1),
    ("sysbench*throughput*", 1),
    ("sysbench*per_sec*", 1),
    ("sysbench*/s", 1),
    ("sysbench*.events", 1),
    // The cpu, threads and memory tests run for `--time` seconds, so their event count is their rate (the cpu
    // test's own "events per second" line is not one of lkp's metrics). The mutex test runs a fixed count instead.
    ("sysbench-cpu.workload", 1),
    ("sysbench-threads.workload", 1),
    ("sysbench-memory.workload", 1),
    // Their events per thread are the same count shared among the threads, a rate too (QA 54: a throughput drop's
    // `events/thread.avg` read "changed" beside the workload's "regression"); its spread is no performance.
    ("sysbench-cpu.events/thread.avg", 1),
    ("sysbench-threads.events/thread.avg", 1),
    ("sysbench-memory.events/thread.avg", 1),
    ("sysbench*.transactions", 1),
    ("sysbench*.queries", 1),
    ("dbench.throughput*", 1),
    ("dbench.max_latency", -1),
    ("will-it-scale.per_*_ops", 1),
    ("will-it-scale.*_ops", 1),
    ("will-it-scale.scalability", 1),
    ("unixbench.score", 1),
    ("netperf.Throughput_*", 1),
    ("iperf.*bps", 1),
    ("aim7.jobs-per-min", 1),
    ("reaim.jobs_per_min", 1),
    ("pgbench.tps", 1),
    ("pgbench.tps_exclude_connect", 1),
    ("pgbench.transactions", 1),
    ("pgbench.failed_transactions", -1),
    ("pgbench.latency*", -1),
    ("pgbench.initial_connection_time_ms", -1),
    // sysbench's OLTP tests (lkp's `oltp`): lkp's index-perf takes every `/s` rate as better higher and
    // index-latency every `_ms` as better lower; the fairness shares describe the run, and an aborted transaction
    // (a deadlock PostgreSQL broke, which sysbench retried) is work lost.
    ("oltp.*/s", 1),
    ("oltp.latency_*_ms", -1),
    ("oltp.thread_*_stddev%", 0),
    ("oltp.ignored_errors", -1),
    ("vm-scalability.median", 1),
    ("vm-scalability.throughput", 1),
    ("vm-scalability.stddev", -1),
    ("fxmark.*.works/sec", 1),
    ("ebizzy.throughput", 1),
    // The bare names Culprit gave the time monitor's rows before QA 47 (a plain series may still be named so).
    ("time.elapsed_time*", -1),
    // A `command` job measures time and memory per execution: less is better.
    ("command.elapsed_time", -1),
    ("command.user_time", -1),
    ("command.system_time", -1),
    ("command.max_resident_set_size", -1),
    ("culprit.failed_runs", -1),
    // General fallbacks, after every specific rule.
    ("*.throughput", 1),
    ("*latency*", -1),
    ("*_us", -1),
    ("*_ns", -1),
    ("*_ms", -1),
    ("*_per_sec", 1),
    ("*_iops", 1),
    ("*.fail", -1),
    ("*.error", -1),
    ("*.warn", -1),
    ("*.pass", 1),
    ("dmesg.*", -1),
    ("kmsg.*", -1),
];

/// The key performance indicators: the metrics a suite's result is judged by, which the robot's subject lines
/// name (`fio.write_iops -21.8% regression`, `stress-ng.xattr.ops_per_sec 58.4% improvement`). `fio.workload`
/// moves with `fio.write_iops` (it is the I/O count of the run), but the mails lead with the rate. A report leads
/// with a KPI, and a bisect without `--metric` bisects one, whenever one changed.
pub const KPI_PATTERNS: &[&str] = &[
    "fio.*_iops",
    "fsmark.files_per_sec",
    "stress-ng.*.ops_per_sec",
    "hackbench.throughput",
    "perf-bench-sched-pipe.ops_per_sec",
    "perf-bench-sched-messaging.total_time_sec",
    "perf-bench-syscall.*.ops_per_sec",
    "perf-bench-futex.ops/s",
    "perf-bench-mem.*_per_sec",
    "perf-bench-numa-mem.GB_sec_total",
    "dbench.throughput_MB/s",
    "pgbench.tps",
    "oltp.transactions/s",
    "sysbench-*.throughput_ops/s",
    "sysbench-cpu.workload",
    "sysbench-threads.workload",
    "sysbench-fileio.*_operations/s",
    "will-it-scale.per_*_ops",
    "unixbench.score",
    "netperf.Throughput_*",
    "iperf.*bps",
    "vm-scalability.throughput",
    "aim7.jobs-per-min",
    "reaim.jobs_per_min",
    "ebizzy.throughput",
    "fxmark.*.works/sec",
];

/// Whether `metric` is a key performance indicator: it matches [`KPI_PATTERNS`], or it is a number a `command` job
/// captures from its output (the job's author named it; the times and memory measured beside it are not KPIs, and
/// without a capture the choice falls back to the most significant change).
pub fn is_kpi(metric: &str) -> bool {
    // The time monitor's rows are no program's KPI (lkp's `kpi_stat?` leaves `<program>.time.*` out too), a
    // `command` job's `command.time.minor_page_faults` included.
    if crate::model::time_field(metric).is_some() {
        return false;
    }
    if let Some(name) = metric.strip_prefix("command.") {
        return !matches!(name, "elapsed_time" | "user_time" | "system_time" | "max_resident_set_size");
    }
    KPI_PATTERNS.iter().any(|pattern| glob_match(pattern, metric))
}

/// The direction of `metric` by the first matching entry of [`DIRECTION_TABLE`].
pub fn direction_of(metric: &str) -> Direction {
    // perf-profile keys (most rows of a comparison) are shares of CPU cycles spent in one function: more or less
    // of it is neither better nor worse on its own, and no table entry can match them, so skip the scan.
    if metric.starts_with("perf-profile.") {
        return Direction::Unknown;
    }
    DIRECTION_TABLE
        .iter()
        .find(|(pattern, _)| glob_match(pattern, metric))
        .map(|&(_, sign)| Direction::from_sign(sign))
        .unwrap_or(Direction::Unknown)
}

/// Whether `text` matches `pattern` in full, where `*` in the pattern matches any (possibly empty) run of
/// characters and every other character matches itself. Linear-time greedy matching with backtracking to the
/// last star, so long metric names cannot blow up.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    // Bytes, not chars: `*` is ASCII, and matching UTF-8 byte for byte is the same as matching characters.
    // Allocation-free because this runs for every metric of every comparison.
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while let Some(&c) = t.get(ti) {
        match p.get(pi) {
            Some(b'*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&pc) if pc == c => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..).is_some_and(|rest| rest.iter().all(|&c| c == b'*'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kpis_are_the_rates_the_mails_lead_with() {
        for kpi in [
            "fio.write_iops",
            "fio.read_iops",
            "stress-ng.xattr.ops_per_sec",
            "fsmark.files_per_sec",
            "hackbench.throughput",
            "dbench.throughput_MB/s",
            "pgbench.tps",
            "sysbench-memory.throughput_ops/s",
            "sysbench-fileio.write_operations/s",
            "perf-bench-sched-pipe.ops_per_sec",
            "perf-bench-sched-messaging.total_time_sec",
            "perf-bench-syscall.getppid.ops_per_sec",
            "perf-bench-numa-mem.GB_sec_total",
            "command.ops",
        ] {
            assert!(is_kpi(kpi), "{kpi}");
        }
        // perf bench's messaging benchmark reports the time its fixed work took: its KPI is better lower.
        for (metric, direction) in [
            ("perf-bench-sched-messaging.total_time_sec", Direction::LowerIsBetter),
            ("perf-bench-syscall.getppid.total_time_sec", Direction::LowerIsBetter),
            ("perf-bench-syscall.getppid.usecs_per_op", Direction::LowerIsBetter),
            ("perf-bench-sched-pipe.ops_per_sec", Direction::HigherIsBetter),
            ("perf-bench-futex.ops/s", Direction::HigherIsBetter),
            ("perf-bench-futex.wokeup_time_ms", Direction::LowerIsBetter),
            ("perf-bench-futex.stddev%", Direction::Unknown),
            ("perf-bench-mem.memcpy.default.GB_per_sec", Direction::HigherIsBetter),
            ("perf-bench-numa-mem.GB_sec_total", Direction::HigherIsBetter),
            ("perf-bench-numa-mem.secs_latency", Direction::LowerIsBetter),
            ("perf-bench-numa-mem.nsecs_byte_thread", Direction::LowerIsBetter),
            ("perf-bench-numa-mem.max_avg_diff", Direction::Unknown),
        ] {
            assert_eq!(direction_of(metric), direction, "{metric}");
        }
        for other in [
            "fio.workload",
            "fio.write_bw_MBps",
            "fio.write_clat_95%_ns",
            "stress-ng.xattr.ops",
            "pgbench.latency_ms",
            "command.elapsed_time",
            "command.user_time",
            "command.max_resident_set_size",
            "vmstat.cpu.id",
            "time.elapsed_time",
            "stress-ng.time.elapsed_time",
            "command.time.minor_page_faults",
        ] {
            assert!(!is_kpi(other), "{other}");
        }
        // Every KPI pattern is a higher-is-better rate in the direction table.
        for example in ["fio.x_iops", "stress-ng.x.ops_per_sec", "netperf.Throughput_Mbps", "iperf.tcp.sender.bps"] {
            assert!(is_kpi(example) && direction_of(example) == Direction::HigherIsBetter, "{example}");
        }
    }

    #[test]
    fn a_timed_sysbench_tests_event_count_is_its_rate() {
        // sysbench-cpu's only rate is its event count over `--time` (lkp names no "events per second"), which had
        // no direction: a 20% drop of it read "changed", and `compare --by` swept the 95th latency instead.
        for metric in ["sysbench-cpu.workload", "sysbench-threads.workload"] {
            assert!(is_kpi(metric) && direction_of(metric) == Direction::HigherIsBetter, "{metric}");
        }
        assert_eq!(direction_of("sysbench-memory.workload"), Direction::HigherIsBetter);
        for test in ["cpu", "threads", "memory"] {
            let per_thread = format!("sysbench-{test}.events/thread.avg");
            assert!(!is_kpi(&per_thread) && direction_of(&per_thread) == Direction::HigherIsBetter, "{per_thread}");
            assert_eq!(direction_of(&format!("sysbench-{test}.events/thread.stddev")), Direction::Unknown);
        }
        // The mutex test runs a fixed count of locks: its count says nothing of speed.
        assert!(!is_kpi("sysbench-mutex.workload"));
        assert_eq!(direction_of("sysbench-mutex.workload"), Direction::Unknown);
        assert_eq!(direction_of("sysbench-mutex.events/thread.avg"), Direction::Unknown);
    }

    #[test]
    fn qa_31_every_hackbench_throughput_is_higher_is_better() {
        // Only `hackbench.throughput` itself matched, so a significant rise of `throughput_avg` beside an
        // "improvement" of `throughput` in the same table was merely "changed".
        for metric in [
            "hackbench.throughput",
            "hackbench.throughput_avg",
            "hackbench.throughput_best",
            "hackbench.throughput_worst",
            "hackbench.throughput.instance2",
        ] {
            assert_eq!(direction_of(metric), Direction::HigherIsBetter, "{metric}");
        }
        assert!(!is_kpi("hackbench.throughput_avg"));
    }

    #[test]
    fn glob_matching() {
        assert!(glob_match("fio.*_iops", "fio.write_iops"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a*b*c", "axxbyyc"));
        assert!(!glob_match("a*b*c", "axxbyy"));
        assert!(!glob_match("fio.*_iops", "fio.write_iops_x"));
        assert!(glob_match("stress-ng.*.ops_per_sec", "stress-ng.xattr.ops_per_sec"));
    }

    #[test]
    fn direction_table_cases() {
        use Direction::*;
        let cases = [
            ("fio.write_iops", HigherIsBetter),
            ("fio.read_bw_MBps", HigherIsBetter),
            ("fio.write_bw_MBps", HigherIsBetter),
            ("fio.write_clat_mean_us", LowerIsBetter),
            ("fio.write_clat_95%_us", LowerIsBetter),
            ("fio.write_slat_stddev", LowerIsBetter),
            ("fio.latency_50ms%", Unknown),
            ("fsmark.files_per_sec", HigherIsBetter),
            ("fsmark.app_overhead", LowerIsBetter),
            ("stress-ng.xattr.ops_per_sec", HigherIsBetter),
            ("stress-ng.switch.nanosecs_per_context_switch_pipe_method", LowerIsBetter),
            ("stress-ng.flock.nanosecs_per_flock_lock_call", LowerIsBetter),
            ("stress-ng.memrate.write128_MB/sec", HigherIsBetter),
            ("hackbench.throughput", HigherIsBetter),
            ("sysbench-cpu.events_per_sec", HigherIsBetter),
            ("sysbench-fileio.latency_95th_ms", LowerIsBetter),
            ("sysbench-threads.runtime/thread.avg", Unknown),
            ("dbench.throughput-MB/sec", HigherIsBetter),
            ("pgbench.tps", HigherIsBetter),
            ("pgbench.tps_exclude_connect", HigherIsBetter),
            ("pgbench.latency_ms", LowerIsBetter),
            ("pgbench.latency_stddev_ms", LowerIsBetter),
            ("pgbench.failed_transactions", LowerIsBetter),
            ("will-it-scale.per_thread_ops", HigherIsBetter),
            ("will-it-scale.per_process_ops", HigherIsBetter),
            ("time.elapsed_time", LowerIsBetter),
            ("time.elapsed_time.max", LowerIsBetter),
            ("time.user_time", Unknown),
            ("time.system_time", Unknown),
            // lkp's names (QA 47): a sysbench test's rows are the time monitor's, not its `sysbench*.time*`.
            ("stress-ng.time.elapsed_time", LowerIsBetter),
            ("fio.time.user_time", Unknown),
            ("sysbench-cpu.time.system_time", Unknown),
            ("sysbench-cpu.time.elapsed_time", LowerIsBetter),
            ("sysbench-cpu.time.minor_page_faults", Unknown),
            ("command.user_time", LowerIsBetter),
            ("schbench.wakeup_latency_max_us", LowerIsBetter),
            ("vmstat.cpu.id", Unknown),
            ("perf-profile.self.cycles-pp.memcpy", Unknown),
        ];
        for (metric, want) in cases {
            assert_eq!(direction_of(metric), want, "{metric}");
        }
    }
}
