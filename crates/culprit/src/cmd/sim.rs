//! `culprit sim`: the bisect engine and two baselines against synthetic noisy histories, side by side.

use crate::cli::{SimArgs, MAX_SIM_COMMITS, MAX_SIM_TRIALS, MAX_STEP_SIGMA};
use crate::output;
use anyhow::{bail, Result};
use culprit_core::bisect::sim::{self, Noise, SimConfig, Strategy};

pub fn run(args: &SimArgs) -> Result<()> {
    let Some(noise) = Noise::parse(&args.noise) else {
        bail!("--noise must be gaussian, outliers, drift, bursts, layout, wander or warmup, got '{}'", args.noise);
    };
    // The command line bounds these already (see `cli::SimArgs`); a plan made in code gets the same limits, which
    // keep every simulated history and its per-trial tallies small enough to allocate.
    if !(2..=MAX_SIM_COMMITS).contains(&(args.commits as u64)) {
        bail!("--commits must be from 2 to {MAX_SIM_COMMITS}, got {}", args.commits);
    }
    if !(1..=MAX_SIM_TRIALS).contains(&(args.trials as u64)) {
        bail!("--trials must be from 1 to {MAX_SIM_TRIALS}, got {}", args.trials);
    }
    if !(0.0..1.0).contains(&args.untestable) {
        bail!("--untestable is a share of commits in [0, 1), got {}", args.untestable);
    }
    if let Some(bad) = args.step.iter().find(|s| !(0.0..=MAX_STEP_SIGMA).contains(*s)) {
        bail!("--step takes sizes from 0 to {MAX_STEP_SIGMA} sigma, e.g. 1.5 or 0.5,0.5,0.5; got {bad}");
    }
    // The offsets are layout noise's alone: given with any other noise they would be ignored, and the table would
    // print rows that look measured under offsets that never were.
    if args.layout_sigma.is_some() && noise != Noise::Layout {
        bail!("--layout-sigma sizes the offsets of --noise layout; give --noise layout with it, or leave it out");
    }
    let layout_sigma = args.layout_sigma.unwrap_or(sim::LAYOUT_SIGMA);
    if !(0.0..=MAX_STEP_SIGMA).contains(&layout_sigma) {
        bail!("--layout-sigma takes offsets from 0 to {MAX_STEP_SIGMA} sigma, e.g. 0.3 or 0.6; got {layout_sigma}");
    }
    let steps: Vec<f64> = args.step.iter().copied().filter(|s| *s > 0.0).collect();
    // Each step sits at a commit of its own, so there cannot be more steps than commits.
    if steps.len() > args.commits {
        bail!(
            "--step gives {} steps but --commits is {}: each step needs a commit of its own; give fewer steps or more commits",
            steps.len(),
            args.commits
        );
    }
    // Every strategy name is checked before the first simulation, which can take minutes.
    let mut strategies = Vec::new();
    let all = ["culprit", "fixed", "pinpoint"].map(String::from).to_vec();
    let names = match (args.strategy.is_empty(), args.topics > 0) {
        (true, true) => vec!["culprit".to_string()],
        (true, false) => all,
        (false, _) => args.strategy.clone(),
    };
    for name in &names {
        let Some(strategy) = Strategy::parse(name) else {
            bail!("--strategy takes culprit, fixed or pinpoint, got '{name}'");
        };
        if args.topics > 0 && strategy != Strategy::Culprit {
            bail!(
                "--topics {}: the {name} baseline bisects by index, which a history with merges does not allow; give \
                 --strategy culprit",
                args.topics
            );
        }
        strategies.push(strategy);
    }
    if args.topics > args.commits / 2 {
        bail!("--topics is at most half of --commits (each topic needs a commit and its merge), got {}", args.topics);
    }
    let mut reports = Vec::new();
    for strategy in strategies {
        let config = SimConfig {
            commits: args.commits,
            steps: steps.clone(),
            noise,
            untestable_frac: args.untestable,
            trials: args.trials,
            seed: args.seed,
            strategy,
            layout_sigma,
            topics: args.topics,
        };
        reports.push(sim::run(&config));
    }
    if args.json {
        let value =
            if reports.len() == 1 { serde_json::to_value(&reports[0])? } else { serde_json::to_value(&reports)? };
        output::println(&serde_json::to_string_pretty(&value)?)
    } else {
        output::print(&sim::render_comparison(&reports))
    }
}
