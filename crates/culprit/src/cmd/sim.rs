//! `culprit sim`: the bisect engine and two baselines against synthetic noisy histories, side by side.

use crate::cli::SimArgs;
use crate::output;
use anyhow::{bail, Result};
use culprit_core::bisect::sim::{self, Noise, SimConfig, Strategy};

pub fn run(args: &SimArgs) -> Result<()> {
    let Some(noise) = Noise::parse(&args.noise) else {
        bail!("--noise must be gaussian, outliers, drift or bursts, got '{}'", args.noise);
    };
    if args.commits < 2 {
        bail!("--commits must be at least 2");
    }
    if args.trials == 0 {
        bail!("--trials must be at least 1");
    }
    if !(0.0..1.0).contains(&args.untestable) {
        bail!("--untestable is a share of commits in [0, 1), got {}", args.untestable);
    }
    if args.step.iter().any(|s| !s.is_finite() || *s < 0.0) {
        bail!("--step takes non-negative sizes in sigma, e.g. 1.5 or 0.5,0.5,0.5");
    }
    let steps: Vec<f64> = args.step.iter().copied().filter(|s| *s > 0.0).collect();
    let mut reports = Vec::new();
    for name in &args.strategy {
        let Some(strategy) = Strategy::parse(name) else {
            bail!("--strategy takes culprit, fixed or pinpoint, got '{name}'");
        };
        let config = SimConfig {
            commits: args.commits,
            steps: steps.clone(),
            noise,
            untestable_frac: args.untestable,
            trials: args.trials,
            seed: args.seed,
            strategy,
        };
        reports.push(sim::run(&config));
    }
    if args.json {
        let value = if reports.len() == 1 {
            serde_json::to_value(&reports[0])?
        } else {
            serde_json::to_value(&reports)?
        };
        output::println(&serde_json::to_string_pretty(&value)?)
    } else {
        output::print(&sim::render_comparison(&reports))
    }
}
