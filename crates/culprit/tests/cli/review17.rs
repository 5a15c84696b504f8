//! End-to-end checks of review 17: numbers the scaling view (`compare --by`) prints from stored runs.

use crate::common::{culprit, stdout};
use culprit_core::model::{Machine, Revision, RunOutcome, RunRecord};
use culprit_store::{SqliteStore, Store};
use std::collections::BTreeMap;

/// A successful run of job `threads` (param `nr_threads`) at label `label`, with perf-profile symbol `foo` at
/// `symbol` when it was reported.
fn run(label: &str, threads: &str, symbol: Option<f64>) -> RunRecord {
    let mut metrics = BTreeMap::from([("bench.score".to_string(), 100.0)]);
    if let Some(value) = symbol {
        metrics.insert("perf-profile.self.cycles-pp.foo".to_string(), value);
    }
    RunRecord {
        job_id: format!("job-{threads}"),
        job_name: format!("bench-{threads}"),
        testcase: "bench".into(),
        params: vec![("testcase".into(), "bench".into()), ("nr_threads".into(), threads.into())],
        job_yaml: String::new(),
        revision: Revision::Label { name: label.into() },
        machine: Machine {
            hostname: "box".into(),
            cpu_model: "cpu".into(),
            nr_cpu: 2,
            memory_kib: 1 << 20,
            kernel: "6.1".into(),
            sockets: 1,
        },
        started_at: 1.0,
        ended_at: 2.0,
        outcome: RunOutcome::Ok,
        exit_code: Some(0),
        metrics,
        monitors: Vec::new(),
        raw_outputs: Vec::new(),
        stderr: String::new(),
        scratch: None,
    }
}

#[test]
fn review_17_a_sweep_points_perf_symbol_counts_its_own_jobs_runs() {
    // One thread: 3 runs a side at 2.0. Sixteen threads: 6 runs a side at 1.0, of which perf dropped the symbol
    // (below its cutoff: 0) in 3 of b's. A point was filled with zeros up to the runs of its column's point with the
    // most, so a's 3 runs of 2.0 at one thread read as 6 runs of mean 1, and b's 6 runs at sixteen threads (3 of
    // them without the symbol) as 3 runs of 1.0; each point now counts its own job's runs, a run without the
    // symbol as 0.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let mut store = SqliteStore::open(&db).unwrap();
    for label in ["a", "b"] {
        for _ in 0..3 {
            store.save_run(&run(label, "1", Some(2.0))).unwrap();
        }
        for k in 0..6 {
            let reported = label == "a" || k % 2 == 0;
            store.save_run(&run(label, "16", reported.then_some(1.0))).unwrap();
        }
    }
    drop(store);
    let args = ["compare", "a", "b", "--by", "nr_threads", "--metric", "perf-profile", "--format", "csv"];
    let csv = stdout(&culprit(&db, &args, dir.path()));
    // Per point: the value, then each side's runs and mean (the CSV's base_n, base_mean, n and mean).
    let points: Vec<Vec<&str>> = csv
        .lines()
        .filter(|l| l.starts_with("perf-profile."))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            vec![f[2], f[5], f[6], f[8], f[9]]
        })
        .collect();
    assert_eq!(points, [["1", "3", "2", "3", "2"], ["16", "6", "1", "6", "0.5"]], "{csv}");
}
