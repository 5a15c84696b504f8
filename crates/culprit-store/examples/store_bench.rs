//! Measures the store (SQLite, or PostgreSQL given a URL) on perf-profile-heavy runs: saving one run with 20,000
//! metrics, and fetching the samples of 2 revisions x 20 runs x 20,000 metrics, as `culprit compare` does.
//!
//! Run with: `cargo run --release -p culprit-store --example store_bench [-- DB_PATH | POSTGRES_URL]`
//! (default: a fresh file in a temporary directory; a `postgresql://` URL must name an empty database or schema).
//! The figures go into crates/culprit-store/README.md.

use culprit_core::model::{Machine, Revision, RunOutcome, RunRecord};
use culprit_store::{is_postgres_url, PostgresStore, SampleQuery, SqliteStore, Store};
use std::collections::BTreeMap;
use std::time::Instant;

const METRICS: usize = 20_000;
const RUNS_PER_REVISION: usize = 20;

fn record(sha: &str, run: usize) -> RunRecord {
    let mut metrics = BTreeMap::new();
    metrics.insert("fio.write_iops".to_string(), 1000.0 + run as f64);
    for i in 0..METRICS - 1 {
        metrics.insert(
            format!("perf-profile.children.cycles-pp.kernel_function_number_{i:05}"),
            ((i * 7 + run * 13) % 1000) as f64 / 10.0,
        );
    }
    RunRecord {
        job_id: "bench-job".into(),
        job_name: "fio-basic-4k-randwrite".into(),
        testcase: "fio-basic".into(),
        params: vec![("runtime".into(), "300s".into())],
        job_yaml: "runtime: 300s\n".into(),
        revision: Revision::Commit { sha: sha.into(), describe: None, subject: None },
        machine: Machine { hostname: "bench".into(), ..Machine::default() },
        started_at: 1_700_000_000.0 + run as f64,
        ended_at: 1_700_000_300.0 + run as f64,
        outcome: RunOutcome::Ok,
        exit_code: Some(0),
        metrics,
        monitors: Vec::new(),
        raw_outputs: Vec::new(),
        stderr: String::new(),
        scratch: None,
    }
}

fn open(given: &str, path: &std::path::Path) -> Result<Box<dyn Store>, Box<dyn std::error::Error>> {
    Ok(if is_postgres_url(given) { Box::new(PostgresStore::connect(given)?) } else { Box::new(SqliteStore::open(path)?) })
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times.get(times.len() / 2).copied().unwrap_or(0.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let temporary = std::env::temp_dir().join(format!("culprit-store-bench-{}", std::process::id()));
    let given = std::env::args().nth(1).unwrap_or_default();
    let path = if given.is_empty() { temporary.join("bench.db") } else { std::path::PathBuf::from(&given) };
    let mut store = open(&given, &path)?;
    let shas = ["a".repeat(40), "b".repeat(40)];

    let mut save_times = Vec::new();
    for sha in &shas {
        for run in 0..RUNS_PER_REVISION {
            let record = record(sha, run);
            let start = Instant::now();
            store.save_run(&record)?;
            save_times.push(start.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let first = save_times.first().copied().unwrap_or(0.0);
    let later = median(save_times.iter().skip(1).copied().collect());
    println!("save 1 run x {METRICS} metrics: first (new metric names) {first:.1} ms, later runs median {later:.1} ms");
    drop(store);

    // `culprit run` saves from a new process: the names are stored but the handle's name cache is empty. These
    // runs go to a third revision so the fetches below still see 2 x 20 runs.
    let mut fresh_save_times = Vec::new();
    for run in 0..5 {
        let mut store = open(&given, &path)?;
        let record = record(&"c".repeat(40), run);
        let start = Instant::now();
        store.save_run(&record)?;
        fresh_save_times.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    println!("save 1 run x {METRICS} metrics from a new handle (names stored): median {:.1} ms", median(fresh_save_times));

    // `culprit compare` is a new process too: each fetch uses a new handle (opening it is not timed).
    let query = SampleQuery { revision_keys: shas.to_vec(), ..Default::default() };
    let mut fetch_times = Vec::new();
    for _ in 0..5 {
        let store = open(&given, &path)?;
        let start = Instant::now();
        let samples = store.samples(&query)?;
        fetch_times.push(start.elapsed().as_secs_f64() * 1000.0);
        let values: usize = samples.iter().flat_map(|s| s.metrics.values()).map(Vec::len).sum();
        assert_eq!(values, 2 * RUNS_PER_REVISION * METRICS);
    }
    let fastest = fetch_times.iter().copied().fold(f64::INFINITY, f64::min);
    println!(
        "fetch samples 2 revisions x {RUNS_PER_REVISION} runs x {METRICS} metrics, new handle: median {:.1} ms (min {fastest:.1} ms)",
        median(fetch_times)
    );

    let store = open(&given, &path)?;
    let start = Instant::now();
    let filtered = store.samples(&SampleQuery { metric_regex: Some("^fio\\.".into()), ..query })?;
    println!(
        "fetch with metric regex ^fio\\. ({} metric): {:.1} ms",
        filtered.first().map_or(0, |s| s.metrics.len()),
        start.elapsed().as_secs_f64() * 1000.0
    );
    let start = Instant::now();
    let read = store.run(culprit_store::RunId(2))?;
    println!("read back 1 run with {} metrics: {:.1} ms", read.metrics.len(), start.elapsed().as_secs_f64() * 1000.0);
    if !is_postgres_url(&given) {
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        println!("database size after {} runs: {:.1} MiB", 2 * RUNS_PER_REVISION + 5, size as f64 / (1024.0 * 1024.0));
    }
    drop(store);
    if given.is_empty() {
        let _ = std::fs::remove_dir_all(&temporary);
    }
    Ok(())
}
