//! Simulated A/A false alarms: two sets of runs of the same code (synthetic, perf-profile heavy), compared under
//! Culprit's rules and under lkp's rules; every flagged metric is a false alarm. Prints a Markdown table.
//! Run with `cargo run --release -p culprit-core --example aa_false_alarms`.

use culprit_core::compare::aa::{count_false_alarms, synthetic_columns, SyntheticSpec};
use culprit_core::compare::{CompareOptions, LkpOptions};

fn main() {
    let trials = 10u64;
    let metrics = 5_000;
    println!("| runs a side | metrics per trial | trials | flagged, Culprit (mean per trial) | flagged, lkp rules (mean per trial) | lkp rules with `more` |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for runs in [3usize, 5, 10, 20] {
        let (mut ours, mut theirs, mut theirs_more) = (0usize, 0usize, 0usize);
        for trial in 0..trials {
            let spec = SyntheticSpec { metrics, runs, profile_share: 0.8, shifted: 0, shift: 0.0 };
            let (a, b) = synthetic_columns(1000 + trial * 7919 + runs as u64, &spec);
            let culprit = CompareOptions { seed: trial, ..CompareOptions::default() };
            let counts = match count_false_alarms(&a, &b, &culprit, &LkpOptions::default()) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("comparison failed: {e}");
                    std::process::exit(1);
                }
            };
            let more = count_false_alarms(&a, &b, &culprit, &LkpOptions { more: true, ..LkpOptions::default() });
            ours += counts.flagged_culprit;
            theirs += counts.flagged_lkp;
            theirs_more += more.map(|c| c.flagged_lkp).unwrap_or(0);
        }
        let per = |x: usize| x as f64 / trials as f64;
        println!("| {runs} | {metrics} | {trials} | {:.1} | {:.1} | {:.1} |", per(ours), per(theirs), per(theirs_more));
    }
}
