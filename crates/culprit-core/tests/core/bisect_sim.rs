//! Small seeded simulations: the bisect finds an easy step, names nothing without one, and the report is sound.

use culprit_core::bisect::sim::{run, Noise, SimConfig, Strategy};

fn config(steps: Vec<f64>, strategy: Strategy) -> SimConfig {
    SimConfig { commits: 50, steps, noise: Noise::Gaussian, trials: 50, seed: 7, strategy, ..SimConfig::default() }
}

#[test]
fn easy_step_is_found() {
    let report = run(&config(vec![3.0], Strategy::Culprit));
    assert!(report.accuracy >= 0.95, "{}", report.render_table());
    assert!(report.false_culprit_rate <= 0.05, "{}", report.render_table());
}

#[test]
fn no_step_names_no_culprit() {
    let report = run(&config(vec![], Strategy::Culprit));
    assert!(report.false_culprit_rate <= 0.02, "{}", report.render_table());
    // The classic bisection always names a commit: every trial is a false culprit.
    let fixed = run(&config(vec![], Strategy::Fixed));
    assert_eq!(fixed.false_culprit_rate, 1.0);
}

#[test]
fn easy_step_with_untestable_commits_and_outliers() {
    let report =
        run(&SimConfig { untestable_frac: 0.1, noise: Noise::Outliers, ..config(vec![3.0], Strategy::Culprit) });
    assert!(report.accuracy >= 0.9, "{}", report.render_table());
}

#[test]
fn report_json_has_the_documented_fields() {
    let report = run(&SimConfig { trials: 5, ..config(vec![3.0], Strategy::Pinpoint) });
    let json = serde_json::to_value(&report).expect("serializes");
    for field in
        ["accuracy", "false_culprit_rate", "mean_runs", "p95_runs", "mean_builds", "multiple_rate", "same_answer_rate"]
    {
        assert!(json.get(field).is_some(), "missing {field}");
    }
    assert!(report.mean_runs >= 20.0, "pinpoint runs at least 10 a side at good and bad");
    assert!(report.p95_runs >= report.mean_runs * 0.5);
}

#[test]
fn bursts_noise_parses_and_the_old_names_still_do() {
    for (name, noise) in [
        ("gaussian", Noise::Gaussian),
        ("outliers", Noise::Outliers),
        ("drift", Noise::Drift),
        ("bursts", Noise::Bursts),
        ("layout", Noise::Layout),
        ("wander", Noise::Wander),
    ] {
        assert_eq!(Noise::parse(name), Some(noise));
    }
    assert_eq!(Noise::parse("burst"), None);
}

#[test]
fn bursts_do_not_make_a_false_culprit_on_an_easy_step() {
    let report = run(&SimConfig { noise: Noise::Bursts, ..config(vec![3.0], Strategy::Culprit) });
    assert!(report.false_culprit_rate <= 0.04, "{}", report.render_table());
    assert!(report.accuracy >= 0.85, "{}", report.render_table());
}

#[test]
fn bursts_on_a_1_5_sigma_step_name_no_wrong_commit() {
    // Bursts of load shared by neighbouring runs: verification on interleaved pairs cancels them, so a wrong commit
    // is not blamed (the previous engine, verifying on every run, blamed one in a quarter of such jobs).
    let report =
        run(&SimConfig { commits: 100, noise: Noise::Bursts, trials: 30, ..config(vec![1.5], Strategy::Culprit) });
    assert!(report.false_culprit_rate <= 1.0 / 30.0 + 1e-9, "{}", report.render_table());
    assert!(report.accuracy >= 0.6, "{}", report.render_table());
}

#[test]
fn two_equal_steps_are_reported_as_several_contributors() {
    let report = run(&SimConfig { commits: 100, trials: 30, ..config(vec![1.0, 1.0], Strategy::Culprit) });
    assert!(report.multiple_rate >= 0.8, "{}", report.render_table());
    assert!(report.false_culprit_rate <= 1.0 / 30.0 + 1e-9, "{}", report.render_table());
}

#[test]
fn issue_4_three_half_sigma_steps_are_reported_as_several_and_one_step_is_not() {
    // The staircase of the issue's targets, on a shorter range so the test stays quick: most jobs report several
    // contributors, and a single step of the same total is still named alone.
    let staircase = run(&SimConfig { commits: 100, trials: 30, ..config(vec![0.5, 0.5, 0.5], Strategy::Culprit) });
    assert!(staircase.multiple_rate >= 0.7, "{}", staircase.render_table());
    assert!(staircase.p95_runs <= 600.0, "{}", staircase.render_table());
    let single = run(&SimConfig { commits: 100, trials: 30, ..config(vec![1.5], Strategy::Culprit) });
    assert!(single.accuracy >= 0.95 && single.multiple_rate <= 0.05, "{}", single.render_table());
}

#[test]
fn layout_noise_is_a_fixed_offset_per_commit_on_the_same_run_to_run_noise() {
    use culprit_core::bisect::sim::{trial, Oracle, LAYOUT_SIGMA};
    let config = SimConfig { commits: 200, noise: Noise::Layout, ..config(vec![], Strategy::Culprit) };
    let (history, noise_seed, _) = trial(&config, 0);
    let mut gaussian = Oracle::new(&history, Noise::Gaussian, noise_seed);
    let mut layout = Oracle::new(&history, Noise::Layout, noise_seed);
    let mut offsets = Vec::new();
    for commit in 0..=history.commits {
        // Three runs of each commit: the offset is the same in each, and the rest is the Gaussian kind's noise.
        let runs: Vec<f64> = (0..3).map(|_| layout.run(commit).unwrap() - gaussian.run(commit).unwrap()).collect();
        assert!(runs.iter().all(|d| (d - runs[0]).abs() < 1e-9), "commit {commit}: {runs:?}");
        offsets.push(runs[0]);
    }
    // The offsets differ between commits, with about the documented spread.
    let mean = offsets.iter().sum::<f64>() / offsets.len() as f64;
    let sd = (offsets.iter().map(|o| (o - mean).powi(2)).sum::<f64>() / (offsets.len() - 1) as f64).sqrt();
    assert!((sd / LAYOUT_SIGMA - 1.0).abs() < 0.2, "sd {sd} of {} offsets", offsets.len());
    // The report says which spread it measured, and only for layout noise.
    let report = run(&SimConfig { layout_sigma: 0.6, trials: 2, ..config.clone() });
    assert_eq!(report.layout_sigma, Some(0.6));
    assert!(report.render_table().contains("| Layout 0.6 sigma |"), "{}", report.render_table());
    assert_eq!(run(&SimConfig { noise: Noise::Gaussian, trials: 2, ..config.clone() }).layout_sigma, None);
    // `--layout-sigma` scales the same offsets: twice the spread gives every commit twice its offset.
    let mut gaussian = Oracle::new(&history, Noise::Gaussian, noise_seed);
    let mut doubled = Oracle::new(&history, Noise::Layout, noise_seed).with_layout_sigma(2.0 * LAYOUT_SIGMA);
    for (commit, offset) in offsets.iter().enumerate() {
        let twice = doubled.run(commit).unwrap() - gaussian.run(commit).unwrap();
        assert!((twice - 2.0 * offset).abs() < 1e-9, "commit {commit}: {twice} against {offset}");
    }
}

#[test]
fn wander_noise_moves_the_level_for_stretches_of_runs() {
    use culprit_core::bisect::sim::{History, Oracle};
    // Runs at one commit: under wander, the level holds for about 25 runs and then moves, so runs next to each other
    // agree more than runs far apart; Gaussian runs are independent.
    let history = History { commits: 1, steps: Vec::new(), untestable: vec![false; 2], dag: None };
    let correlation = |noise: Noise| {
        let mut oracle = Oracle::new(&history, noise, 5);
        let runs: Vec<f64> = (0..4000).map(|_| oracle.run(0).expect("testable")).collect();
        let mean = runs.iter().sum::<f64>() / runs.len() as f64;
        let variance = runs.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
        runs.windows(2).map(|w| (w[0] - mean) * (w[1] - mean)).sum::<f64>() / variance
    };
    let (wander, gaussian) = (correlation(Noise::Wander), correlation(Noise::Gaussian));
    assert!(wander > 0.25, "adjacent runs under wander correlate by {wander}");
    assert!(gaussian.abs() < 0.1, "adjacent Gaussian runs correlate by {gaussian}");
}
