//! The bisect simulator: synthetic histories with known steps, noisy runs, untestable commits, and the three
//! strategies (Culprit's machine and two classic baselines) scored in the same harness.
//!
//! Definitions used in the report:
//! - A *history* has `commits` candidate commits after the good commit (index 0), the last being bad. Each step
//!   adds its size (in noise standard deviations) to every commit that contains it; higher is worse. Step commits
//!   are always testable (a commit that cannot be built cannot be blamed); any other commit fails to build with
//!   probability `untestable_frac`. With `topics` > 0 the history has merges, as a kernel merge window has: that
//!   many topic branches, forked from good or from a mainline commit, each merged into the mainline (see
//!   [`History::generate_with_topics`]); steps sit on commits that are not merges.
//! - *Accuracy*: the fraction of trials whose named (located) culprits are exactly the step commits: the step
//!   commit alone for one step, every contributor for several steps, and no commit at all when there is no step.
//! - *False-culprit rate*: the fraction of trials naming at least one commit that is not a step (with no step,
//!   any named commit is false).
//! - *Multiple rate*: the fraction of trials reporting two or more contributors (located commits or ranges).
//! - *Same answer*: each trial is run twice on the same history with fresh noise; the fraction where status and
//!   named commits agree.
//! - *Runs* counts valid runs; *builds* counts distinct commits built, failed builds included.

use super::{baselines, topology, Action, Bisect, BisectConfig, CommitNode, Sample, Status};
use crate::rng::Rng;
use serde::{Deserialize, Serialize};

/// Noise added to each run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Noise {
    /// Standard normal.
    Gaussian,
    /// Standard normal, and 5% of runs 5 sigma worse (an interfering job, a cold cache).
    Outliers,
    /// Standard normal plus a slow linear drift of 0.01 sigma per run, in the worse direction, over the whole job.
    Drift,
    /// Standard normal plus bursts of load: a two-state Markov process that enters a burst with probability 0.02
    /// per run and leaves it with probability 1/12 (bursts of about 5 to 20 runs, about a fifth of all runs),
    /// adding 3 sigma during a burst. Heavy-tailed and time-correlated, like wall time on a busy machine.
    Bursts,
    /// Standard normal plus a fixed offset per commit, normal with [`LAYOUT_SIGMA`] noise sigmas: each build lays
    /// the code out anew, and a change that touches no hot path still moves a benchmark by a percent or two (a real
    /// 2% slowdown of the end-to-end program measured offsets of 1-2% between unrelated commits). Every commit,
    /// good and bad included, then sits at a level of its own; only the steps are changes worth a bisect.
    Layout,
    /// Standard normal plus a level of the machine's own that holds for a while and then moves: before each run, with
    /// probability 1/25, a new level normal with [`WANDER_SIGMA`] noise sigmas. Wall time on a shared host: a real
    /// bisect of the README's demo measured good about 1.2 noise sigmas slower in its second visit than in its first,
    /// and every commit of that half of the job with it. Commits measured at different times differ for that alone.
    Wander,
    /// Standard normal plus a warm-up: the job's first runs read [`WARMUP_SIGMA`] noise sigmas worse, the excess
    /// decaying by a factor e every [`WARMUP_RUNS`] runs (a cold page cache, a CPU clocking up, a machine settling
    /// after a build). The runs that reproduce the change at good and bad are the ones it falls on.
    Warmup,
}

/// How much worse [`Noise::Warmup`]'s first run reads, in noise sigmas.
pub const WARMUP_SIGMA: f64 = 3.0;

/// How many runs [`Noise::Warmup`]'s excess takes to fall by a factor e.
pub const WARMUP_RUNS: f64 = 4.0;

/// The standard deviation of [`Noise::Wander`]'s levels, in noise sigmas.
pub const WANDER_SIGMA: f64 = 0.8;

/// The chance, before each run, that [`Noise::Wander`]'s level moves.
const WANDER_MOVE: f64 = 1.0 / 25.0;

/// The standard deviation of [`Noise::Layout`]'s per-commit offsets, in noise sigmas.
pub const LAYOUT_SIGMA: f64 = 0.3;

impl Noise {
    pub fn parse(text: &str) -> Option<Noise> {
        match text {
            "gaussian" => Some(Noise::Gaussian),
            "outliers" => Some(Noise::Outliers),
            "drift" => Some(Noise::Drift),
            "bursts" => Some(Noise::Bursts),
            "layout" => Some(Noise::Layout),
            "wander" => Some(Noise::Wander),
            "warmup" => Some(Noise::Warmup),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// This crate's bisect machine with its default configuration.
    Culprit,
    /// Classic bisection: 5 runs at good, bad and each midpoint; a midpoint is bad when its mean is closer to bad's.
    Fixed,
    /// Pinpoint-like: repeats 10, 20, 40, 80, 160 with a Mann-Whitney test, midpoints inserted between every pair
    /// found different.
    Pinpoint,
}

impl Strategy {
    pub fn parse(text: &str) -> Option<Strategy> {
        match text {
            "culprit" => Some(Strategy::Culprit),
            "fixed" => Some(Strategy::Fixed),
            "pinpoint" => Some(Strategy::Pinpoint),
            _ => None,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Strategy::Culprit => "culprit",
            Strategy::Fixed => "fixed",
            Strategy::Pinpoint => "pinpoint",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimConfig {
    /// Candidate commits after good (the last is bad).
    pub commits: usize,
    /// Step sizes in noise standard deviations; empty for no regression.
    pub steps: Vec<f64>,
    pub noise: Noise,
    pub untestable_frac: f64,
    pub trials: usize,
    pub seed: u64,
    pub strategy: Strategy,
    /// The standard deviation of [`Noise::Layout`]'s per-commit offsets, in noise sigmas ([`LAYOUT_SIGMA`] unless
    /// a study asks for another).
    #[serde(default = "default_layout_sigma")]
    pub layout_sigma: f64,
    /// Topic branches merged into the mainline (0: a linear history). Only Culprit bisects such a history: the
    /// baselines bisect by index, which merges do not allow.
    #[serde(default)]
    pub topics: usize,
}

fn default_layout_sigma() -> f64 {
    LAYOUT_SIGMA
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            commits: 1000,
            steps: vec![1.5],
            noise: Noise::Gaussian,
            untestable_frac: 0.0,
            trials: 500,
            seed: 1,
            strategy: Strategy::Culprit,
            layout_sigma: LAYOUT_SIGMA,
            topics: 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimReport {
    pub strategy: String,
    pub commits: usize,
    pub steps: Vec<f64>,
    pub noise: Noise,
    /// The spread of layout noise's per-commit offsets, in noise sigmas; present only for that noise kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout_sigma: Option<f64>,
    /// Topic branches merged into the mainline; present only for a history with merges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topics: Option<usize>,
    pub untestable_frac: f64,
    pub trials: usize,
    pub seed: u64,
    pub accuracy: f64,
    pub false_culprit_rate: f64,
    pub same_answer_rate: f64,
    pub multiple_rate: f64,
    pub not_reproduced_rate: f64,
    /// The mean of the valid runs a job took (the first of its two runs, not the rerun on fresh noise).
    pub mean_runs: f64,
    /// The nearest-rank 95th percentile of those runs ([`nearest_rank`]): a count some job took, not one between
    /// two jobs' counts as a linear interpolation would give.
    pub p95_runs: f64,
    pub mean_builds: f64,
}

impl SimReport {
    /// A Markdown table of this report alone.
    pub fn render_table(&self) -> String {
        render_comparison(std::slice::from_ref(self))
    }
}

/// A Markdown table with one row per report, for strategies side by side.
pub fn render_comparison(reports: &[SimReport]) -> String {
    let mut out = String::from(
        "| strategy | commits | steps (sigma) | noise | untestable | trials | accuracy | false culprit | not reproduced | same answer | multiple | runs mean | runs p95 | builds mean |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in reports {
        let steps = if r.steps.is_empty() {
            "none".to_string()
        } else {
            r.steps.iter().map(|s| format!("{s}")).collect::<Vec<_>>().join("+")
        };
        let noise = match r.layout_sigma {
            Some(sigma) => format!("{:?} {sigma} sigma", r.noise),
            None => format!("{:?}", r.noise),
        };
        let commits = match r.topics {
            Some(topics) => format!("{} ({topics} merges)", r.commits),
            None => r.commits.to_string(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {:.0}% | {} | {:.1}% | {:.1}% | {:.1}% | {:.1}% | {:.1}% | {:.1} | {:.0} | {:.1} |\n",
            r.strategy,
            commits,
            steps,
            noise,
            r.untestable_frac * 100.0,
            r.trials,
            r.accuracy * 100.0,
            r.false_culprit_rate * 100.0,
            r.not_reproduced_rate * 100.0,
            r.same_answer_rate * 100.0,
            r.multiple_rate * 100.0,
            r.mean_runs,
            r.p95_runs,
            r.mean_builds,
        ));
    }
    out
}

/// One synthetic history: list index 0 is good, `commits` is bad.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    pub commits: usize,
    /// (commit index, size in sigma), sorted by commit.
    pub steps: Vec<(usize, f64)>,
    pub untestable: Vec<bool>,
    /// The merges of a history that has them; `None` for a linear one (commit i's parent is i - 1).
    pub dag: Option<Dag>,
}

/// The shape of a history with merges: every commit's parents (in topological order, as [`CommitNode`]s) and the
/// set of commits each contains, so that a step's size reaches exactly the commits that have it.
#[derive(Debug, Clone, PartialEq)]
pub struct Dag {
    pub nodes: Vec<CommitNode>,
    /// Per commit, a bitset of it and its ancestors.
    ancestors: Vec<Vec<u64>>,
}

impl Dag {
    pub(crate) fn new(parents: Vec<Vec<usize>>) -> Dag {
        let nodes: Vec<CommitNode> =
            parents.into_iter().map(|parents| CommitNode { parents, untestable: false }).collect();
        Dag { ancestors: topology::ancestor_sets(&nodes), nodes }
    }

    /// Whether commit `c` contains commit `k` (k is c or one of its ancestors).
    fn contains(&self, k: usize, c: usize) -> bool {
        topology::set_holds(&self.ancestors, k, c)
    }
}

impl History {
    pub fn generate(commits: usize, step_sizes: &[f64], untestable_frac: f64, rng: &mut Rng) -> History {
        let commits = commits.max(1);
        let candidates: Vec<usize> = (1..=commits).collect();
        let steps = draw_steps(&candidates, step_sizes, rng);
        let untestable = untestable_draws(commits, &steps, untestable_frac, rng);
        History { commits, steps, untestable, dag: None }
    }

    /// A history with merges: `topics` topic branches (at most half the commits), each forked from good (half of
    /// them, as a merge window's branches start from the last release) or from a mainline commit already there,
    /// and merged into the mainline in turn; the last merge is bad. Every commit that is not a merge sits on a
    /// topic branch, except about one in ten that go straight onto the mainline. Steps sit on commits that are not
    /// merges. `topics` 0 is [`History::generate`].
    pub fn generate_with_topics(
        commits: usize,
        step_sizes: &[f64],
        untestable_frac: f64,
        topics: usize,
        rng: &mut Rng,
    ) -> History {
        let commits = commits.max(1);
        let topics = topics.min(commits / 2);
        if topics == 0 {
            return History::generate(commits, step_sizes, untestable_frac, rng);
        }
        // Each topic has a commit and a merge; the other commits go to topics, or one in ten to the mainline.
        let (mut topic_length, mut straight) = (vec![1usize; topics], vec![0usize; topics]);
        for _ in 0..commits - 2 * topics {
            let slot = rng.below(topics);
            if rng.next_f64() < 0.1 {
                straight[slot] += 1;
            } else {
                topic_length[slot] += 1;
            }
        }
        let mut parents: Vec<Vec<usize>> = vec![Vec::new()];
        let (mut mainline, mut merges, mut head) = (vec![0usize], Vec::new(), 0usize);
        for topic in 0..topics {
            for _ in 0..straight[topic] {
                parents.push(vec![head]);
                head = parents.len() - 1;
                mainline.push(head);
            }
            let fork = if rng.next_f64() < 0.5 { 0 } else { mainline[rng.below(mainline.len())] };
            let mut tip = fork;
            for _ in 0..topic_length[topic] {
                parents.push(vec![tip]);
                tip = parents.len() - 1;
            }
            parents.push(vec![head, tip]);
            head = parents.len() - 1;
            mainline.push(head);
            merges.push(head);
        }
        let candidates: Vec<usize> = (1..=commits).filter(|c| !merges.contains(c)).collect();
        let steps = draw_steps(&candidates, step_sizes, rng);
        let untestable = untestable_draws(commits, &steps, untestable_frac, rng);
        History { commits, steps, untestable, dag: Some(Dag::new(parents)) }
    }

    /// Whether commit `c` contains commit `k`.
    pub fn contains(&self, k: usize, c: usize) -> bool {
        match &self.dag {
            Some(dag) => dag.contains(k, c),
            None => k <= c,
        }
    }

    /// The commits as the bisect reads them (parents in topological order).
    pub fn nodes(&self) -> Vec<CommitNode> {
        match &self.dag {
            Some(dag) => dag.nodes.clone(),
            None => CommitNode::linear(self.commits + 1),
        }
    }

    /// The noiseless level of a commit, in sigma.
    pub fn level(&self, commit: usize) -> f64 {
        self.steps.iter().filter(|s| self.contains(s.0, commit)).map(|s| s.1).sum()
    }
}

/// The steps of a history: each size of `step_sizes` at a distinct commit drawn uniformly from `candidates`, sorted
/// by commit. When there are more steps than candidates, the extra steps are dropped.
fn draw_steps(candidates: &[usize], step_sizes: &[f64], rng: &mut Rng) -> Vec<(usize, f64)> {
    let mut positions: Vec<usize> = Vec::new();
    while positions.len() < step_sizes.len().min(candidates.len()) {
        let p = candidates[rng.below(candidates.len())];
        if !positions.contains(&p) {
            positions.push(p);
        }
    }
    let mut steps: Vec<(usize, f64)> = positions.into_iter().zip(step_sizes.iter().copied()).collect();
    steps.sort_by_key(|s| s.0);
    steps
}

/// Which commits fail to build: each with probability `untestable_frac`, except good, bad and the steps.
fn untestable_draws(commits: usize, steps: &[(usize, f64)], untestable_frac: f64, rng: &mut Rng) -> Vec<bool> {
    (0..=commits)
        .map(|c| {
            let protected = c == 0 || c == commits || steps.iter().any(|s| s.0 == c);
            let draw = rng.next_f64();
            !protected && draw < untestable_frac
        })
        .collect()
}

/// Produces run results for a history, counting runs and builds.
pub struct Oracle<'a> {
    history: &'a History,
    noise: Noise,
    rng: Rng,
    runs: usize,
    built: Vec<bool>,
    in_burst: bool,
    /// Per-commit offsets of [`Noise::Layout`] (empty for the other kinds), drawn from their own generator so that
    /// the run-to-run noise of a seed is the same whatever the kind.
    layout: Vec<f64>,
    /// [`Noise::Wander`]'s generator (its own, for the same reason) and current level.
    wander: Rng,
    wander_level: f64,
}

/// The level every simulated metric sits around, so values look like a real metric (and stay positive).
const BASE: f64 = 100.0;

impl<'a> Oracle<'a> {
    pub fn new(history: &'a History, noise: Noise, seed: u64) -> Oracle<'a> {
        let layout = if noise == Noise::Layout {
            let mut offsets = Rng::new(seed ^ 0x1a40_u64.rotate_left(40));
            (0..=history.commits).map(|_| LAYOUT_SIGMA * offsets.normal()).collect()
        } else {
            Vec::new()
        };
        Oracle {
            history,
            noise,
            rng: Rng::new(seed),
            runs: 0,
            built: vec![false; history.commits + 1],
            in_burst: false,
            layout,
            wander: Rng::new(seed ^ 0x3a7d_u64.rotate_left(24)),
            wander_level: 0.0,
        }
    }

    /// One run at `commit`: `None` when it does not build.
    pub fn run(&mut self, commit: usize) -> Option<f64> {
        if let Some(b) = self.built.get_mut(commit) {
            *b = true;
        }
        if self.history.untestable.get(commit).copied().unwrap_or(true) {
            return None;
        }
        let mut value = BASE + self.history.level(commit) + self.rng.normal();
        match self.noise {
            Noise::Gaussian => {}
            Noise::Outliers => {
                if self.rng.next_f64() < 0.05 {
                    value += 5.0;
                }
            }
            Noise::Drift => value += 0.01 * self.runs as f64,
            Noise::Warmup => value += WARMUP_SIGMA * (-(self.runs as f64) / WARMUP_RUNS).exp(),
            Noise::Bursts => {
                let draw = self.rng.next_f64();
                self.in_burst = if self.in_burst { draw >= 1.0 / 12.0 } else { draw < 0.02 };
                if self.in_burst {
                    value += 3.0;
                }
            }
            Noise::Layout => value += self.layout.get(commit).copied().unwrap_or(0.0),
            Noise::Wander => {
                if self.wander.next_f64() < WANDER_MOVE {
                    self.wander_level = WANDER_SIGMA * self.wander.normal();
                }
                value += self.wander_level;
            }
        }
        self.runs += 1;
        Some(value)
    }

    /// The oracle of a simulation's trial: its noise kind, and its layout offsets at the configured spread.
    pub fn for_config(history: &'a History, config: &SimConfig, seed: u64) -> Oracle<'a> {
        Oracle::new(history, config.noise, seed).with_layout_sigma(config.layout_sigma)
    }

    /// The same oracle with [`Noise::Layout`]'s offsets scaled to `sigma` noise sigmas instead of [`LAYOUT_SIGMA`]
    /// (the same draws, so a study across sizes compares like with like).
    pub fn with_layout_sigma(mut self, sigma: f64) -> Oracle<'a> {
        for offset in &mut self.layout {
            *offset *= sigma / LAYOUT_SIGMA;
        }
        self
    }

    /// Marks a commit built without running it (a build that failed still costs a build).
    pub fn build(&mut self, commit: usize) -> bool {
        if let Some(b) = self.built.get_mut(commit) {
            *b = true;
        }
        !self.history.untestable.get(commit).copied().unwrap_or(true)
    }

    pub fn runs(&self) -> usize {
        self.runs
    }

    pub fn builds(&self) -> usize {
        self.built.iter().filter(|&&b| b).count()
    }
}

/// What one simulated bisect reported.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialResult {
    pub status: Status,
    /// Located culprit commits, sorted.
    pub named: Vec<usize>,
    /// Contributors reported (located commits and unlocated ranges).
    pub contributors: usize,
    pub runs: usize,
    pub builds: usize,
    /// The machine's decision log (empty for the baselines).
    pub log: Vec<super::LogEntry>,
    /// The machine's per-commit evidence (empty for the baselines).
    pub evidence: Vec<super::CommitEvidence>,
    /// The machine's culprits with their shares (empty for the baselines).
    pub culprits: Vec<super::Culprit>,
    /// The machine's caveat that builds differ (never set by the baselines).
    pub build_spread: Option<super::BuildSpread>,
    /// The stretches outside the machine's culprits (empty for the baselines).
    pub open_stretches: Vec<super::OpenStretch>,
}

/// Runs Culprit's machine against an oracle, interleaving each batch as the driver does ([`super::next_in_batch`]).
pub fn run_culprit(history: &History, oracle: &mut Oracle, config: &BisectConfig) -> TrialResult {
    run_culprit_watched(history, oracle, config, &mut |_| {})
}

/// [`run_culprit`], showing the machine to `watch` before each run (to read its state as the driver's progress
/// line does); the watcher cannot change it.
pub fn run_culprit_watched(
    history: &History,
    oracle: &mut Oracle,
    config: &BisectConfig,
    watch: &mut dyn FnMut(&Bisect),
) -> TrialResult {
    let commits = history.nodes();
    let mut machine = match Bisect::new(config.clone(), &commits) {
        Ok(m) => m,
        Err(_) => {
            return TrialResult {
                status: Status::Inconclusive,
                named: vec![],
                contributors: 0,
                runs: 0,
                builds: 0,
                log: vec![],
                evidence: vec![],
                culprits: vec![],
                build_spread: None,
                open_stretches: vec![],
            }
        }
    };
    loop {
        match machine.next_action() {
            Action::Done(outcome) => {
                let mut named: Vec<usize> = outcome.culprits.iter().filter(|c| c.located).map(|c| c.commit).collect();
                named.sort_unstable();
                return TrialResult {
                    status: outcome.status,
                    named,
                    contributors: outcome.culprits.len(),
                    runs: outcome.runs,
                    builds: outcome.builds,
                    log: outcome.log,
                    evidence: outcome.evidence,
                    culprits: outcome.culprits,
                    build_spread: outcome.build_spread,
                    open_stretches: outcome.open_stretches,
                };
            }
            Action::RunBatch(batch) => {
                // The entry with the most runs left goes next, as the driver picks it.
                let Some(commit) = super::next_in_batch(&batch) else {
                    // An empty batch cannot happen while not done; treat it as a stop rather than spin.
                    return TrialResult {
                        status: Status::Inconclusive,
                        named: vec![],
                        contributors: 0,
                        runs: machine.runs(),
                        builds: machine.builds(),
                        log: machine.log().to_vec(),
                        evidence: vec![],
                        culprits: vec![],
                        build_spread: None,
                        open_stretches: vec![],
                    };
                };
                watch(&machine);
                let sample = match oracle.run(commit) {
                    Some(v) => Sample::Value(v),
                    None => Sample::Untestable,
                };
                if machine.record(commit, sample).is_err() {
                    return TrialResult {
                        status: Status::Inconclusive,
                        named: vec![],
                        contributors: 0,
                        runs: machine.runs(),
                        builds: machine.builds(),
                        log: machine.log().to_vec(),
                        evidence: vec![],
                        culprits: vec![],
                        build_spread: None,
                        open_stretches: vec![],
                    };
                }
            }
        }
    }
}

fn run_strategy(config: &SimConfig, history: &History, seed: u64) -> TrialResult {
    let mut oracle = Oracle::for_config(history, config, seed);
    match config.strategy {
        Strategy::Culprit => run_culprit(history, &mut oracle, &BisectConfig::default()),
        Strategy::Fixed => baselines::fixed(history, &mut oracle),
        Strategy::Pinpoint => baselines::pinpoint(history, &mut oracle),
    }
}

/// Trial `trial` of a simulation: its history and the seeds of its two noise streams (the first run and the rerun
/// on fresh noise). Every tool that replays one trial (the example's `--trace` and `--breakdown`) goes through
/// here, so it sees the same history and noise as the scored run.
pub fn trial(config: &SimConfig, trial: u64) -> (History, u64, u64) {
    let base = config.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(trial);
    let mut history_rng = Rng::new(base ^ 0x5151);
    let history = History::generate_with_topics(
        config.commits,
        &config.steps,
        config.untestable_frac,
        config.topics,
        &mut history_rng,
    );
    (history, base ^ 0xA1, base ^ 0xB2)
}

/// Runs the simulation and scores it.
pub fn run(config: &SimConfig) -> SimReport {
    let trials = config.trials.max(1);
    let truth_of = |h: &History| h.steps.iter().map(|s| s.0).collect::<Vec<usize>>();
    let (mut correct, mut false_culprit, mut same, mut multiple, mut not_reproduced) = (0, 0, 0, 0, 0);
    let mut runs: Vec<usize> = Vec::with_capacity(trials);
    let mut builds = 0usize;
    for trial in 0..trials {
        let (history, first_noise, second_noise) = self::trial(config, trial as u64);
        let truth = truth_of(&history);
        let first = run_strategy(config, &history, first_noise);
        let second = run_strategy(config, &history, second_noise);
        if first.named == truth {
            correct += 1;
        }
        if first.named.iter().any(|c| !truth.contains(c)) {
            false_culprit += 1;
        }
        if first.status == second.status && first.named == second.named {
            same += 1;
        }
        if first.contributors >= 2 {
            multiple += 1;
        }
        if first.status == Status::NotReproduced {
            not_reproduced += 1;
        }
        runs.push(first.runs);
        builds += first.builds;
    }
    runs.sort_unstable();
    let n = trials as f64;
    SimReport {
        strategy: config.strategy.name().to_string(),
        commits: config.commits,
        steps: config.steps.clone(),
        noise: config.noise,
        layout_sigma: (config.noise == Noise::Layout).then_some(config.layout_sigma),
        topics: (config.topics > 0).then_some(config.topics),
        untestable_frac: config.untestable_frac,
        trials,
        seed: config.seed,
        accuracy: correct as f64 / n,
        false_culprit_rate: false_culprit as f64 / n,
        same_answer_rate: same as f64 / n,
        multiple_rate: multiple as f64 / n,
        not_reproduced_rate: not_reproduced as f64 / n,
        mean_runs: runs.iter().sum::<usize>() as f64 / n,
        p95_runs: nearest_rank(&runs, 0.95) as f64,
        mean_builds: builds as f64 / n,
    }
}

/// The nearest-rank `q`-quantile of `sorted` counts: the ceil(q n)-th smallest, the first at least (numpy's
/// `percentile(runs, 100 * q, method='inverted_cdf')`); 0 for no counts. For q = 0.95, ceil(0.95 n) in floating point
/// equals the exact ceil(19 n / 20) for every trial count the simulator takes (up to 1,000,000), so no count is off
/// by one rank.
pub fn nearest_rank(sorted: &[usize], q: f64) -> usize {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
    sorted.get(rank - 1).copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_p95_of_runs_is_the_nearest_rank_as_numpy_reads_it() {
        // The runs of the 20 jobs of `culprit sim --trials 20 --strategy culprit` (seed 1), each from the example's
        // `bisect_sim --trace T`, sorted. numpy.percentile(runs, 95, method='inverted_cdf') gives 230, the value
        // `culprit sim --json` reported as p95_runs; numpy's default (method='linear') would give 234.15.
        let runs = [42, 53, 55, 66, 66, 81, 85, 92, 94, 94, 95, 96, 100, 113, 119, 120, 131, 147, 230, 313];
        assert_eq!(nearest_rank(&runs, 0.95), 230);
        // Seven counts, where the rank is not a whole number: numpy.percentile(range(1, 8), 95,
        // method='inverted_cdf') is 7 (the 7th of 7, ceil(6.65)), and 50 gives 4 (ceil(3.5)).
        let seven = [1, 2, 3, 4, 5, 6, 7];
        assert_eq!((nearest_rank(&seven, 0.95), nearest_rank(&seven, 0.5)), (7, 4));
        assert_eq!((nearest_rank(&[9], 0.95), nearest_rank(&[], 0.95)), (9, 0));
    }
}
