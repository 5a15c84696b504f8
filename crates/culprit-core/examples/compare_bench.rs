//! Speed benchmark of `compare`: 2 sides x 20 runs x 20,000 metrics, perf-profile heavy, bootstrap included.
//! Run with `cargo run --release -p culprit-core --example compare_bench`; the figure goes in docs/statistics.md.

use culprit_core::compare::aa::{synthetic_columns, SyntheticSpec};
use culprit_core::compare::render::{render_table, RenderOptions};
use culprit_core::compare::{compare, CompareOptions, Comparison};
use std::time::{Duration, Instant};

/// Times `f` `reps` times and returns (median, min).
fn time<F: FnMut()>(reps: usize, mut f: F) -> (Duration, Duration) {
    let mut times: Vec<Duration> = (0..reps)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    (times[times.len() / 2], times[0])
}

/// Times `compare` on `input` and prints its table row.
fn time_row(name: &str, input: &Comparison, options: &CompareOptions, runs: usize, reps: usize) {
    let result = match compare(input, options) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("compare failed: {e}");
            std::process::exit(1);
        }
    };
    let bootstrapped = result.rows.iter().flat_map(|r| &r.changes).filter(|c| c.ratio_ci.is_some()).count();
    let changed = result.rows.iter().filter(|r| r.any_change()).count();
    let (median, min) = time(reps, || {
        let _ = compare(input, options);
    });
    println!(
        "| {name} | {} | {runs} | {bootstrapped} | {changed} | {:.1} | {:.1} |",
        result.rows.len(),
        median.as_secs_f64() * 1e3,
        min.as_secs_f64() * 1e3
    );
}

fn main() {
    // 80% perf-profile keys (60% of them all-zero, the rest rounded small percentages), 20% program and monitor
    // metrics, 200 of which really shift by -10%.
    let spec = SyntheticSpec { metrics: 20_000, runs: 20, profile_share: 0.8, shifted: 200, shift: -0.10 };
    let (base, other) = synthetic_columns(42, &spec);
    let input = Comparison::new(vec![base, other]);
    let reps = 7;

    println!("| configuration | metrics | runs a side | bootstrapped pairs | changed | median ms | min ms |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (name, options) in [
        ("default (bootstrap 1000 for candidates)", CompareOptions::default()),
        ("bootstrap off", CompareOptions { bootstrap_resamples: 0, ..CompareOptions::default() }),
    ] {
        time_row(name, &input, &options, spec.runs, reps);
    }
    // Fewer runs a side, as most comparisons have: tied metrics get exact p-values up to 10 runs a side, whose
    // tables are built per tie pattern.
    for runs in [10, 5] {
        let (base, other) = synthetic_columns(42, &SyntheticSpec { runs, ..spec });
        time_row("default", &Comparison::new(vec![base, other]), &CompareOptions::default(), runs, reps);
    }
    let result = compare(&input, &CompareOptions::default()).ok();
    if let Some(result) = result {
        let (median, _) = time(reps, || {
            let _ = render_table(&result, RenderOptions { all: true });
        });
        println!("| render_table --all (not part of the target) | {} | {} | - | - | {:.1} | - |", result.rows.len(), spec.runs, median.as_secs_f64() * 1e3);
    }
}
