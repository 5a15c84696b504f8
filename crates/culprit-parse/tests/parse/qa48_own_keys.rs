//! Regressions of QA pass 48 in the parsers: the keys Culprit reads where lkp's parser reads nothing (PostgreSQL 14's
//! `tps` line, oltp's `ignored errors`, sysbench 1.0's fileio report, a spaced sysbench rate) are marked as Culprit's
//! own, so that `culprit parse` prints exactly lkp's lines, while a run still stores them. The lkp lines expected here
//! are what lkp-tests' own `programs/<program>/parse` (bbbc29c4) printed for these recorded outputs.

use culprit_parse::{lookup, ParseInput, ParseOutput};
use std::path::Path;

fn parsed(program: &str, file: &str) -> ParseOutput {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/real").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    lookup(program).unwrap().parse(&ParseInput::text(&text)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

#[test]
fn qa48_pgbench_14_output_prints_lkp_s_keys_and_keeps_culprit_s_apart() {
    let out = parsed("pgbench", "pgbench/tpcb-like-2-clients-3s");
    assert_eq!(out.render_lkp(), "transactions: 907\nlatency_ms: 6.609");
    assert_eq!(
        out.own_lines(),
        ["failed_transactions: 0", "initial_connection_time_ms: 11.319", "tps: 302.595078"]
    );
    // A run stores both: lkp's keys and Culprit's own.
    let metrics = out.metrics("pgbench");
    assert_eq!(metrics.get("pgbench.tps"), Some(&302.595078));
    assert_eq!(metrics.get("pgbench.transactions"), Some(&907.0));
}

#[test]
fn qa48_pgbench_13_tps_lines_are_lkp_s() {
    let text = "pgbench (13.1)\nnumber of transactions actually processed: 10\nlatency average = 1.5 ms\n\
                tps = 600.1 (including connections establishing)\ntps = 610.2 (excluding connections establishing)\n";
    let out = lookup("pgbench").unwrap().parse(&ParseInput::text(text)).unwrap();
    assert!(out.own.is_empty(), "{:?}", out.own_lines());
    assert_eq!(out.render_lkp(), "transactions: 10\nlatency_ms: 1.5\ntps: 600.1\ntps_exclude_connect: 610.2");
}

#[test]
fn qa48_other_parsers_mark_what_lkp_does_not_print() {
    let oltp = parsed("oltp", "oltp/read-write-2-threads-2-tables");
    assert_eq!(oltp.own_lines(), ["ignored_errors: 6"]);
    assert!(!oltp.render_lkp().contains("ignored_errors"));
    let fileio = parsed("sysbench-fileio", "sysbench/fileio");
    assert_eq!(fileio.own_lines().len(), 7, "{:?}", fileio.own_lines());
    assert!(fileio.render_lkp().starts_with("latency_"), "{}", fileio.render_lkp());
    let memory = parsed("sysbench-memory", "sysbench/memory-4M-blocks");
    assert_eq!(memory.own_lines(), ["throughput_ops/s: 3542.47"]);
    // Where lkp's pattern reads the rate, it is lkp's.
    let unspaced = parsed("sysbench-memory", "sysbench/memory");
    assert!(unspaced.own.is_empty(), "{:?}", unspaced.own_lines());
    assert!(unspaced.render_lkp().contains("throughput_ops/s: "), "{}", unspaced.render_lkp());
}

#[test]
fn qa48_a_wake_parallel_summary_lkp_does_not_read_is_culprit_s() {
    let futex = lookup("perf-bench-futex").unwrap();
    let line = |waking: &str| format!("Avg per-thread latency (waking {waking} threads) in 0.0123 ms (+-12.34%)\n");
    let single = futex.parse(&ParseInput::text(&line("1/8"))).unwrap();
    assert!(single.own.is_empty(), "{:?}", single.own_lines());
    let many = futex.parse(&ParseInput::text(&line("16/64"))).unwrap();
    assert_eq!(many.own_lines(), ["avg_per_thread_latency_ms: 0.0123", "stddev%: 12.34"]);
    assert_eq!(many.render_lkp(), "");
}
