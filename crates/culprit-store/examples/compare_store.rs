//! Writes a store for timing `culprit compare` end to end: 2 revisions x 20 runs x 20,000 metrics, the exact
//! samples of culprit-core's `compare_bench` (its `synthetic_columns` with seed 42: 80% perf-profile keys, 60% of
//! them all-zero, 200 real -10% shifts), so the end-to-end time and the statistics-only time are comparable.
//!
//! Run with: `cargo run --release -p culprit-store --example compare_store -- STORE.db` (or a `postgresql://`
//! URL naming an empty database or schema), then
//! `hyperfine 'culprit --db STORE.db compare aaaa bbbb --format json > /dev/null'`.
//! The figures go into docs/statistics.md (`### Speed`).

use culprit_core::compare::aa::{synthetic_columns, SyntheticSpec};
use culprit_core::compare::Column;
use culprit_core::model::{Machine, Revision, RunOutcome, RunRecord};
use culprit_store::{is_postgres_url, PostgresStore, SqliteStore, Store};

/// Run `index` of a column: the `index`-th sample of every metric.
fn run_of(column: &Column, index: usize) -> RunRecord {
    RunRecord {
        job_id: "compare-bench-job".into(),
        job_name: "fio-basic-4k-randwrite".into(),
        testcase: "fio-basic".into(),
        params: vec![("runtime".into(), "300s".into())],
        job_yaml: "runtime: 300s\n".into(),
        revision: Revision::Commit { sha: column.label.clone(), describe: None, subject: None },
        machine: Machine { hostname: "bench".into(), ..Machine::default() },
        started_at: 1_700_000_000.0 + index as f64 * 400.0,
        ended_at: 1_700_000_300.0 + index as f64 * 400.0,
        outcome: RunOutcome::Ok,
        exit_code: Some(0),
        metrics: column
            .metrics
            .iter()
            .filter_map(|(name, samples)| samples.get(index).map(|value| (name.clone(), *value)))
            .collect(),
        monitors: Vec::new(),
        raw_outputs: Vec::new(),
        stderr: String::new(),
        scratch: None,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(target) = std::env::args().nth(1) else {
        return Err("give the store to write: a new SQLite file or an empty postgresql:// database".into());
    };
    let mut store: Box<dyn Store> =
        if is_postgres_url(&target) { Box::new(PostgresStore::connect(&target)?) } else { Box::new(SqliteStore::open(&target)?) };
    let spec = SyntheticSpec { metrics: 20_000, runs: 20, profile_share: 0.8, shifted: 200, shift: -0.10 };
    let (base, other) = synthetic_columns(42, &spec);
    // Interleaved, as `culprit run` stores the runs of an A/B measurement.
    for index in 0..spec.runs {
        for column in [&base, &other] {
            store.save_run(&run_of(column, index))?;
        }
    }
    println!("stored 2 x {} runs x {} metrics in {}: compare {} {}", spec.runs, spec.metrics, store.location(), base.label, other.label);
    Ok(())
}
