//! Prints the bisect targets table (Culprit and the two baselines side by side), or one simulation when given
//! flags like `culprit sim`: --commits N --step S[,S...] --noise gaussian|outliers|drift|bursts|layout|wander|warmup
//! --untestable F --trials T --layout-sigma S --topics N --seed S --strategy culprit|fixed|pinpoint --json. Run in
//! release mode: `cargo run --release -p culprit-core --example bisect_sim`.

use culprit_core::bisect::sim::{render_comparison, run, Noise, SimConfig, Strategy};

/// `println!` that ends the program quietly when stdout is gone (piped into `head`, say): a closed pipe means the
/// reader has what it wanted, not that the simulation failed.
macro_rules! say {
    ($($arg:tt)*) => {
        if std::io::Write::write_fmt(&mut std::io::stdout(), format_args!("{}\n", format_args!($($arg)*))).is_err() {
            std::process::exit(0);
        }
    };
}

fn parse_args(args: &[String]) -> Result<(SimConfig, bool, Vec<Strategy>), String> {
    let mut config = SimConfig::default();
    let mut json = false;
    let mut strategies = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let flag = args[i].as_str();
        if flag == "--json" {
            json = true;
            i += 1;
            continue;
        }
        let value = args.get(i + 1).ok_or_else(|| format!("{flag} needs a value"))?;
        let bad = |what: &str| format!("{flag}: cannot read {what} from {value:?}");
        match flag {
            "--commits" => config.commits = value.parse().map_err(|_| bad("a count"))?,
            "--step" => {
                config.steps = if value == "none" || value == "0" {
                    Vec::new()
                } else {
                    value
                        .split(',')
                        .map(|s| s.trim().parse::<f64>())
                        .collect::<Result<_, _>>()
                        .map_err(|_| bad("sigmas"))?
                }
            }
            "--noise" => config.noise = Noise::parse(value).ok_or_else(|| bad("a noise kind"))?,
            "--untestable" => config.untestable_frac = value.parse().map_err(|_| bad("a fraction"))?,
            "--trials" => config.trials = value.parse().map_err(|_| bad("a count"))?,
            "--seed" => config.seed = value.parse().map_err(|_| bad("a seed"))?,
            "--layout-sigma" => config.layout_sigma = value.parse().map_err(|_| bad("sigmas"))?,
            "--topics" => config.topics = value.parse().map_err(|_| bad("a count"))?,
            "--strategy" => strategies.push(Strategy::parse(value).ok_or_else(|| bad("a strategy"))?),
            _ => return Err(format!("unknown flag {flag}")),
        }
        i += 2;
    }
    if strategies.is_empty() {
        strategies = if config.topics > 0 {
            vec![Strategy::Culprit]
        } else {
            vec![Strategy::Culprit, Strategy::Fixed, Strategy::Pinpoint]
        };
    }
    if config.topics > 0 && strategies.iter().any(|&s| s != Strategy::Culprit) {
        return Err("--topics: only the culprit strategy bisects a history with merges".into());
    }
    Ok((config, json, strategies))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--trace") {
        trace(&args[1..]);
        return;
    }
    if args.first().map(String::as_str) == Some("--breakdown") {
        breakdown(&args[1..]);
        return;
    }
    if !args.is_empty() {
        match parse_args(&args) {
            Ok((config, json, strategies)) => {
                let reports: Vec<_> =
                    strategies.iter().map(|&strategy| run(&SimConfig { strategy, ..config.clone() })).collect();
                if json {
                    say!("{}", serde_json::to_string_pretty(&reports).unwrap_or_default());
                } else {
                    // The table ends with its own newline, which `say!` adds back.
                    say!("{}", render_comparison(&reports).trim_end_matches('\n'));
                }
            }
            Err(message) => {
                eprintln!("bisect_sim: {message}");
                std::process::exit(2);
            }
        }
        return;
    }
    // The targets: each scenario for the three strategies.
    let scenarios: Vec<(&str, SimConfig)> = vec![
        ("one 1.5 sigma step in 1,000 commits", SimConfig::default()),
        ("no regression", SimConfig { steps: vec![], ..SimConfig::default() }),
        ("1.5 sigma split in three 0.5 sigma steps", SimConfig { steps: vec![0.5, 0.5, 0.5], ..SimConfig::default() }),
        ("5% outliers of 5 sigma", SimConfig { noise: Noise::Outliers, ..SimConfig::default() }),
        ("slow drift", SimConfig { noise: Noise::Drift, ..SimConfig::default() }),
        ("10% untestable", SimConfig { untestable_frac: 0.1, ..SimConfig::default() }),
        ("bursts of load (3 sigma, about a fifth of runs)", SimConfig { noise: Noise::Bursts, ..SimConfig::default() }),
    ];
    for (title, config) in scenarios {
        let reports: Vec<_> = [Strategy::Culprit, Strategy::Fixed, Strategy::Pinpoint]
            .iter()
            .map(|&strategy| run(&SimConfig { strategy, ..config.clone() }))
            .collect();
        say!("### {title}\n");
        say!("{}", render_comparison(&reports));
    }
}

/// Prints the decision log of one Culprit trial: `--trace SEED [flags]`, for understanding a bad case.
fn trace(args: &[String]) {
    use culprit_core::bisect::sim::{run_culprit, trial, Oracle};
    use culprit_core::bisect::BisectConfig;
    let seed: u64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(1);
    let (config, _, _) = parse_args(args.get(1..).unwrap_or(&[])).unwrap_or_else(|e| {
        eprintln!("bisect_sim: {e}");
        std::process::exit(2)
    });
    // The trial `seed` of `culprit sim --seed S` (S from the flags, default 1): the same history and noise.
    let (history, noise_seed, _) = trial(&config, seed);
    say!("steps {:?}", history.steps);
    let mut oracle = Oracle::for_config(&history, &config, noise_seed);
    let result = run_culprit(&history, &mut oracle, &BisectConfig::default());
    for entry in &result.log {
        say!("[{:>4}] {:<9} {} -- {}", entry.runs, entry.phase, entry.decision, entry.reason);
    }
    let nodes = history.nodes();
    for e in &result.evidence {
        // A history with merges shows each commit's parents: the bisect's "parent" is the first one.
        let parents = match &history.dag {
            Some(_) => format!(" parents {:?}", nodes.get(e.commit).map(|n| n.parents.clone()).unwrap_or_default()),
            None => String::new(),
        };
        say!(
            "commit {:>5}: n {:>3} mean {:.3} sd {:.3}{}{}",
            e.commit,
            e.runs,
            e.mean,
            e.stddev,
            if e.untestable { " untestable" } else { "" },
            parents
        );
    }
    for c in &result.culprits {
        let what =
            if c.located { format!("commit {}", c.commit) } else { format!("range ({}, {}]", c.after, c.commit) };
        say!("{what}: share {:.3} [{:.3}, {:.3}], confidence {:.4}", c.share, c.share_low, c.share_high, c.confidence);
    }
    say!("{:?} named {:?} runs {} builds {}", result.status, result.named, result.runs, result.builds);
}

/// Where the runs go, averaged over trials: `--breakdown TRIALS [flags]` prints the mean runs spent before the
/// first locate decision, before the first verify decision and in total, the statuses, the runs each kind of
/// decision asked for, the jobs that probed for a staircase against the others, how often the reported 90% share
/// intervals hold the true share (of located culprits at a true step, and of unlocated ranges), what the shares of a
/// job with several contributors add to, how the steps measured at located culprits compare with the true ones, and
/// the trials with a wrong answer (the trial numbers `--trace` takes, same `--seed`).
/// `BISECT_<FIELD>=value` in the environment overrides a field of `BisectConfig` (ALPHA_CULPRIT, ALPHA_FRESH,
/// ALPHA_REPRODUCE, CONFIDENCE, BUILD_COST, EXPLAIN_MOST, REPLICATE_BELOW_P) for experiments.
fn breakdown(args: &[String]) {
    use culprit_core::bisect::sim::{run_culprit_watched, trial, Oracle};
    use culprit_core::bisect::{estimate_left, BisectConfig, Estimate, Stage};
    let trials: u64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(100);
    let (config, _, _) = parse_args(args.get(1..).unwrap_or(&[])).unwrap_or_else(|e| {
        eprintln!("bisect_sim: {e}");
        std::process::exit(2)
    });
    let (mut reproduce, mut locate, mut total, mut builds) = (0usize, 0usize, 0usize, 0usize);
    let mut wrong = Vec::new();
    // Experiments on the knobs of `BisectConfig` without a rebuild: BISECT_<FIELD>=value in the environment.
    let mut bisect_config = BisectConfig::default();
    let env = |name: &str| std::env::var(format!("BISECT_{name}")).ok().and_then(|v| v.parse::<f64>().ok());
    for (name, field) in [
        ("ALPHA_CULPRIT", &mut bisect_config.alpha_culprit),
        ("ALPHA_FRESH", &mut bisect_config.alpha_fresh),
        ("ALPHA_REPRODUCE", &mut bisect_config.alpha_reproduce),
        ("CONFIDENCE", &mut bisect_config.confidence),
        ("BUILD_COST", &mut bisect_config.build_cost),
        ("EXPLAIN_MOST", &mut bisect_config.explain_most),
        ("REPLICATE_BELOW_P", &mut bisect_config.replicate_below_p),
    ] {
        if let Some(v) = env(name) {
            *field = v;
        }
    }
    let mut multiple = 0usize;
    // (flagged, jobs) for the "builds differ" caveat: among jobs naming a commit, those naming a false one, and the
    // inconclusive ones.
    let (mut spread_named, mut spread_false, mut spread_inconclusive) = ((0, 0), (0, 0), (0usize, 0usize));
    let mut statuses: std::collections::BTreeMap<String, usize> = Default::default();
    let mut kinds: std::collections::BTreeMap<String, usize> = Default::default();
    let mut runs_all = Vec::new();
    // (jobs whose first reproduce test passed, runs at that pass, all their runs, passes at the first look).
    let mut passed = (0usize, 0usize, 0usize, 0usize);
    // (true steps outside everything reported, jobs with one, those jobs stating 0.95 or more for each report).
    let (mut outside, mut outside_seeds) = ((0usize, 0usize, 0usize), Vec::new());
    // (missed steps in a stretch showing more, in one leaving room, jobs missing none, of which flagging one showing
    // more, leaving room).
    // Then the steps left out in a stretch the outcome speaks of, and the jobs missing none that speak of one.
    let mut stretch_counts = (0usize, 0usize, 0usize, 0usize, 0usize, 0usize, 0usize);
    // (jobs, probing runs, all runs) of the jobs that probed for a staircase and of the others.
    let (mut probing, mut not_probing) = ((0usize, 0usize, 0usize), (0usize, 0usize, 0usize));
    // The reported 90% share intervals of culprits named at a true step, and of the unlocated ranges of a linear
    // history, whose true share is that of the steps inside them.
    let (mut shares, mut range_shares) = (Coverage::default(), Coverage::default());
    // The shares of jobs with several contributors: how many such jobs, the sum of each job's point estimates, and
    // the jobs whose shares add to more than 110% (the whole change and a tenth, which a maintainer reads as a
    // contradiction).
    let (mut several_jobs, mut share_sums, mut sums_above) = (0usize, 0.0, 0usize);
    // The same for the jobs whose contributors are all located commits (no range), whose shares the QA run read.
    let (mut located_jobs, mut located_sums, mut located_above) = (0usize, 0.0, 0usize);
    // Located culprits at a true step: the sum of their measured steps and of the steps' true sizes (both in noise
    // sigmas, as the simulator's runs are), so that a numerator read high shows apart from a denominator read low.
    let (mut measured_steps, mut true_steps) = (0.0, 0.0);
    // Unlocated ranges that hold no step at all, the jobs that reported one, and the ranges' commits.
    let (mut empty_ranges, mut jobs_with_empty_range, mut range_commits) = (0usize, 0usize, 0usize);
    let (mut estimates_first, mut estimates_half) = (EstimateErrors::default(), EstimateErrors::default());
    for seed in 0..trials {
        let (history, noise_seed, _) = trial(&config, seed);
        let mut oracle = Oracle::for_config(&history, &config, noise_seed);
        // The estimate of what is left ([`estimate_left`]) when locating begins, and when half the bits are learned,
        // with the runs and builds spent by then, to set against what the trial then spent.
        let mut first_look: Option<(Estimate, usize, usize)> = None;
        let mut halfway: Option<(Estimate, usize, usize)> = None;
        let mut watch = |machine: &culprit_core::bisect::Bisect| {
            if halfway.is_some() {
                return;
            }
            let progress = machine.progress();
            if progress.stage != Stage::Locating {
                return;
            }
            let seen = Some((estimate_left(&progress), machine.runs(), machine.builds()));
            if first_look.is_none() {
                first_look = seen;
            } else if progress.bits_learned >= progress.bits_left {
                halfway = seen;
            }
        };
        let result = run_culprit_watched(&history, &mut oracle, &bisect_config, &mut watch);
        for (look, errors) in [(first_look, &mut estimates_first), (halfway, &mut estimates_half)] {
            if let Some((Estimate::Left { runs, builds }, runs_then, builds_then)) = look {
                errors.add(runs, result.runs - runs_then, builds, result.builds - builds_then);
            }
        }
        if result.status == culprit_core::bisect::Status::Multiple {
            multiple += 1;
        }
        *statuses
            .entry(format!(
                "{:?}{}",
                result.status,
                if result.runs >= bisect_config.max_runs { " (budget)" } else { "" }
            ))
            .or_insert(0usize) += 1;
        runs_all.push(result.runs);
        // Probing for a staircase: the runs asked for by the locate phase's "interleaved runs at <middle> and <end>".
        let probe_runs: usize = result
            .log
            .windows(2)
            .filter(|p| p[0].phase == "locate" && p[0].decision.starts_with("interleaved runs at"))
            .map(|p| p[1].runs - p[0].runs)
            .sum();
        // The first pass of the reproduce test: how many jobs went on to locate, after how many runs, and what
        // those jobs spent in all (with no step, each such job is a false alarm of the first test).
        if let Some(pass) = result.log.iter().find(|e| e.phase == "reproduce" && e.decision.contains("differs: locate"))
        {
            passed.0 += 1;
            passed.1 += pass.runs;
            passed.2 += result.runs;
            passed.3 += usize::from(pass.runs <= 2 * culprit_core::bisect::INITIAL_RUNS_PER_SIDE);
        }
        let group = if probe_runs > 0 { &mut probing } else { &mut not_probing };
        group.0 += 1;
        group.1 += probe_runs;
        group.2 += result.runs;
        for pair in result.log.windows(2) {
            let key: String = format!(
                "{} {}",
                pair[0].phase,
                pair[0]
                    .decision
                    .split_whitespace()
                    .filter(|w| !w.bytes().any(|b| b.is_ascii_digit()))
                    .take(4)
                    .collect::<Vec<_>>()
                    .join(" ")
            );
            *kinds.entry(key).or_insert(0usize) += pair[1].runs - pair[0].runs;
        }
        let first = |phase: &str| result.log.iter().find(|e| e.phase == phase).map(|e| e.runs).unwrap_or(result.runs);
        reproduce += first("locate");
        locate += first("verify");
        total += result.runs;
        builds += result.builds;
        let truth: Vec<usize> = history.steps.iter().map(|s| s.0).collect();
        let whole: f64 = history.steps.iter().map(|s| s.1).sum();
        for culprit in result.culprits.iter().filter(|c| c.located && c.share_low.is_finite()) {
            if let Some(&(_, size)) = history.steps.iter().find(|s| s.0 == culprit.commit) {
                shares.add(culprit, size / whole);
            }
        }
        for culprit in result.culprits.iter().filter(|c| c.located && c.step.is_finite()) {
            if let Some(&(_, size)) = history.steps.iter().find(|s| s.0 == culprit.commit) {
                (measured_steps, true_steps) = (measured_steps + culprit.step, true_steps + size);
            }
        }
        if result.culprits.len() >= 2 && result.culprits.iter().all(|c| c.share.is_finite()) {
            let sum: f64 = result.culprits.iter().map(|c| c.share).sum();
            (several_jobs, share_sums) = (several_jobs + 1, share_sums + sum);
            sums_above += usize::from(sum > 1.1);
            if result.culprits.iter().all(|c| c.located) {
                (located_jobs, located_sums) = (located_jobs + 1, located_sums + sum);
                located_above += usize::from(sum > 1.1);
            }
        }
        let mut job_has_empty_range = false;
        for culprit in result.culprits.iter().filter(|c| !c.located && c.share_low.is_finite() && config.topics == 0) {
            let inside = |k: usize| culprit.after < k && k <= culprit.commit;
            let empty = !history.steps.iter().any(|s| inside(s.0));
            empty_ranges += usize::from(empty);
            job_has_empty_range |= empty;
            range_commits += culprit.commit - culprit.after;
            range_shares.add(culprit, history.steps.iter().filter(|s| inside(s.0)).map(|s| s.1).sum::<f64>() / whole);
        }
        jobs_with_empty_range += usize::from(job_has_empty_range);
        // True steps that no reported culprit or range holds, in jobs that report something: what a maintainer reading
        // the ranges would never look at, and the least confidence the job states for what it reports.
        if !result.culprits.is_empty() && config.topics == 0 {
            let held = |k: usize| {
                result.culprits.iter().any(|c| if c.located { c.commit == k } else { c.after < k && k <= c.commit })
            };
            let missed = history.steps.iter().filter(|s| !held(s.0)).count();
            // The outcome's open stretches: those showing more of the change or leaving room for it, whether they
            // hold a step no culprit holds, and jobs with nothing missed that flag one anyway.
            let in_stretch = |k: usize, t: &culprit_core::bisect::OpenStretch| t.after < k && k <= t.upto;
            for step in history.steps.iter().filter(|s| !held(s.0)) {
                let holding = result.open_stretches.iter().find(|t| in_stretch(step.0, t));
                stretch_counts.0 += usize::from(holding.is_some_and(|t| t.shows_more()));
                stretch_counts.1 += usize::from(holding.is_some_and(|t| t.leaves_room()));
            }
            let said = culprit_core::bisect::stretches_said(result.status, &result.culprits, &result.open_stretches);
            for step in history.steps.iter().filter(|s| !held(s.0)) {
                stretch_counts.5 += usize::from(said.iter().any(|t| in_stretch(step.0, t)));
            }
            if missed == 0 {
                stretch_counts.2 += 1;
                stretch_counts.3 += usize::from(result.open_stretches.iter().any(|t| t.shows_more()));
                stretch_counts.4 += usize::from(result.open_stretches.iter().any(|t| t.leaves_room()));
                stretch_counts.6 += usize::from(!said.is_empty());
            }
            if missed > 0 {
                outside.0 += missed;
                outside.1 += 1;
                let least = result.culprits.iter().map(|c| c.confidence).fold(f64::INFINITY, f64::min);
                outside.2 += usize::from(least >= 0.95);
                if outside_seeds.len() < 8 {
                    outside_seeds.push(seed);
                }
            }
        }
        let flagged = result.build_spread.is_some();
        let false_culprit = result.named.iter().any(|c| !truth.contains(c));
        let inconclusive = result.status == culprit_core::bisect::Status::Inconclusive;
        for (counts, counted) in [
            (&mut spread_named, !result.named.is_empty()),
            (&mut spread_false, false_culprit),
            (&mut spread_inconclusive, inconclusive),
        ] {
            if counted {
                counts.0 += usize::from(flagged);
                counts.1 += 1;
            }
        }
        if result.named != truth {
            let spread = if flagged { " [builds differ]" } else { "" };
            wrong.push((seed, format!("{:?} {:?}{spread}", result.status, result.named), truth, result.runs));
        }
    }
    let n = trials as f64;
    say!(
        "reproduce {:.1}, locate {:.1}, verify and after {:.1}, total {:.1}, builds {:.1}",
        reproduce as f64 / n,
        (locate - reproduce) as f64 / n,
        (total - locate) as f64 / n,
        total as f64 / n,
        builds as f64 / n
    );
    runs_all.sort_unstable();
    let p95 = runs_all.get((runs_all.len() * 95 / 100).min(runs_all.len().saturating_sub(1))).copied().unwrap_or(0);
    say!("wrong {} of {trials}, multiple {multiple}, p95 runs {p95}", wrong.len());
    say!("  statuses {statuses:?}");
    say!(
        "  true steps outside every reported culprit and range: {} in {} jobs ({} of them stating 0.95 or more for \
         everything they report; seeds {outside_seeds:?})",
        outside.0,
        outside.1,
        outside.2
    );
    say!(
        "  open stretches: of those steps, {} in a stretch whose runs show more of the change, {} in one leaving room \
         for it, {} in one the outcome speaks of; of {} jobs missing none, {} flag a stretch showing more, {} one \
         leaving room, {} speak of one",
        stretch_counts.0,
        stretch_counts.1,
        stretch_counts.5,
        stretch_counts.2,
        stretch_counts.3,
        stretch_counts.4,
        stretch_counts.6
    );
    say!(
        "  reproduce passed in {} of {trials} jobs ({} at the first look), at {:.1} runs, {:.1} runs in all each",
        passed.0,
        passed.3,
        if passed.0 > 0 { passed.1 as f64 / passed.0 as f64 } else { 0.0 },
        if passed.0 > 0 { passed.2 as f64 / passed.0 as f64 } else { 0.0 }
    );
    let per = |sum: usize, jobs: usize| if jobs > 0 { sum as f64 / jobs as f64 } else { 0.0 };
    say!(
        "  probed for a staircase: {} of {trials} jobs, {:.1} probing runs and {:.1} runs in all each; the others {:.1} runs",
        probing.0,
        per(probing.1, probing.0),
        per(probing.2, probing.0),
        per(not_probing.2, not_probing.0)
    );
    say!(
        "  builds differ (the caveat) in {} of {} jobs naming a commit, {} of {} naming a false one, {} of {} inconclusive",
        spread_named.0,
        spread_named.1,
        spread_false.0,
        spread_false.1,
        spread_inconclusive.0,
        spread_inconclusive.1
    );
    say!("  share intervals (90%) of culprits at a true step: {}", shares.describe());
    say!("  share intervals (90%) of unlocated ranges: {}", range_shares.describe());
    say!(
        "  shares of several contributors: {several_jobs} jobs, mean sum {:.3}, {sums_above} add to more than 1.1",
        if several_jobs > 0 { share_sums / several_jobs as f64 } else { f64::NAN }
    );
    say!(
        "    of which every one located: {located_jobs} jobs, mean sum {:.3}, {located_above} add to more than 1.1",
        if located_jobs > 0 { located_sums / located_jobs as f64 } else { f64::NAN }
    );
    say!(
        "  steps of located culprits at a true step: measured over true {:.3}",
        if true_steps > 0.0 { measured_steps / true_steps } else { f64::NAN }
    );
    say!(
        "  unlocated ranges holding no step: {empty_ranges} of {}, in {jobs_with_empty_range} of {trials} jobs; {:.1} commits a range",
        range_shares.intervals,
        per(range_commits, range_shares.intervals)
    );
    say!("  estimate of runs left at the first locate step: {}", estimates_first.describe());
    say!("  estimate of runs left when half the bits are learned: {}", estimates_half.describe());
    for (k, v) in &kinds {
        say!("  {:>7.1}  {k}", *v as f64 / n);
    }
    for (seed, named, truth, runs) in wrong {
        say!("seed {seed}: named {named}, truth {truth:?}, runs {runs}");
    }
}

/// How the estimates of what is left compare with what the trials then spent (see `breakdown`).
#[derive(Default)]
struct EstimateErrors {
    looks: Vec<Look>,
}

/// One estimate: predicted runs, actual runs, predicted builds, actual builds.
type Look = (usize, usize, usize, usize);

impl EstimateErrors {
    fn add(&mut self, runs: usize, actual_runs: usize, builds: usize, actual_builds: usize) {
        self.looks.push((runs, actual_runs, builds, actual_builds));
    }

    /// Mean predicted and actual runs and builds, the median of actual over predicted runs, and how often the actual
    /// runs fell within a factor 1.5 of the prediction (2/3 to 3/2 of it).
    fn describe(&self) -> String {
        let n = self.looks.len();
        if n == 0 {
            return "none".to_string();
        }
        let mean = |f: &dyn Fn(&Look) -> usize| {
            self.looks.iter().map(f).sum::<usize>() as f64 / n as f64
        };
        let mut ratios: Vec<f64> = self.looks.iter().map(|l| l.1 as f64 / l.0.max(1) as f64).collect();
        ratios.sort_by(f64::total_cmp);
        let within = ratios.iter().filter(|&&r| (2.0 / 3.0..=1.5).contains(&r)).count();
        format!(
            "{n} trials, predicted {:.1} runs / actual {:.1}, builds {:.1} / {:.1}; actual/predicted median {:.2} \
             (10%..90%: {:.2}..{:.2}), within a factor 1.5 in {:.0}%",
            mean(&|l| l.0),
            mean(&|l| l.1),
            mean(&|l| l.2),
            mean(&|l| l.3),
            ratios[n / 2],
            ratios[n / 10],
            ratios[(n * 9 / 10).min(n - 1)],
            100.0 * within as f64 / n as f64
        )
    }
}

/// How often reported share intervals hold the true share (see `breakdown`).
#[derive(Default)]
struct Coverage {
    intervals: usize,
    held: usize,
    widths: f64,
    below: usize,
    above: usize,
    /// The sum of the squared errors and of the squared errors in units of the reported standard errors (a 90%
    /// interval's half width over 1.645): their mean is near one when the intervals are as wide as the scatter.
    squares: f64,
    z_squares: f64,
}

impl Coverage {
    fn add(&mut self, culprit: &culprit_core::bisect::Culprit, true_share: f64) {
        self.intervals += 1;
        self.held += usize::from((culprit.share_low..=culprit.share_high).contains(&true_share));
        self.widths += culprit.share_high - culprit.share_low;
        self.below += usize::from(culprit.share_high < true_share);
        self.above += usize::from(culprit.share_low > true_share);
        let se = (culprit.share_high - culprit.share_low) / 2.0 / 1.645;
        self.squares += (culprit.share - true_share).powi(2);
        self.z_squares += ((culprit.share - true_share) / se).powi(2);
    }

    fn describe(&self) -> String {
        let n = self.intervals.max(1) as f64;
        format!(
            "{} of {} hold the true share, {} below it, {} above, mean width {:.3}, rms error {:.3}, rms z {:.2}",
            self.held,
            self.intervals,
            self.below,
            self.above,
            self.widths / n,
            (self.squares / n).sqrt(),
            (self.z_squares / n).sqrt()
        )
    }
}
