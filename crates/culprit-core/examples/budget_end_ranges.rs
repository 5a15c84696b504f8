//! Prints the table of docs/statistics.md, "When the budget ends": simulated jobs that a small budget ends
//! inconclusive, how many report a range, how many of those hold every step and at least one, and their mean width.
//!
//! `cargo run --release -p culprit-core --example budget_end_ranges`

use culprit_core::bisect::sim::{
    self,
    Noise::{Bursts, Gaussian, Layout, Wander},
};
use culprit_core::bisect::{BisectConfig, Status};
use culprit_core::rng::Rng;

fn main() {
    let cases: [(usize, &[f64], sim::Noise, usize); 8] = [
        (100, &[1.5], Gaussian, 40),
        (100, &[1.5], Gaussian, 60),
        (300, &[1.0], Gaussian, 100),
        (300, &[1.0], Bursts, 100),
        (300, &[1.0], Layout, 100),
        (300, &[1.0], Wander, 100),
        (300, &[1.0, 1.0], Gaussian, 100),
        (24, &[5.0], Gaussian, 10),
    ];
    println!(
        "| commits | steps | noise | budget | inconclusive | ranges | hold every step | hold a step | mean width |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (commits, steps, noise, budget) in cases {
        let (mut inconclusive, mut ranges, mut every, mut some, mut width) = (0, 0, 0, 0, 0);
        for trial in 0..300u64 {
            let mut rng = Rng::new(trial * 7 + 1);
            let history = sim::History::generate(commits, steps, 0.0, &mut rng);
            let mut oracle = sim::Oracle::new(&history, noise, trial + 99);
            let config = BisectConfig { max_runs: budget, ..BisectConfig::default() };
            let result = sim::run_culprit(&history, &mut oracle, &config);
            if result.status != Status::Inconclusive {
                continue;
            }
            inconclusive += 1;
            if let Some(c) = result.culprits.first() {
                let inside: Vec<bool> = history.steps.iter().map(|&(s, _)| c.after < s && s <= c.commit).collect();
                ranges += 1;
                every += usize::from(inside.iter().all(|&i| i));
                some += usize::from(inside.iter().any(|&i| i));
                width += c.commit - c.after;
            }
        }
        let steps: Vec<String> = steps.iter().map(|s| s.to_string()).collect();
        println!(
            "| {commits} | {} | {noise:?} | {budget} | {inconclusive} | {ranges} | {every} | {some} | {:.0} |",
            steps.join("+"),
            width as f64 / ranges.max(1) as f64
        );
    }
}
