//! The bisect engine: a pure, deterministic state machine that finds the commit(s) behind a performance change
//! under noise, and the simulator that measures it against classic baselines.
//!
//! The machine never runs anything. It is given the candidate commits (good at index 0, bad last, parents as
//! indices), asks for runs with [`Bisect::next_action`], and is told their results with [`Bisect::record`]. Its
//! whole state is a function of the recorded samples in order, so resuming after a crash is constructing it again
//! and replaying the stored samples ([`Bisect::replay`]).
//!
//! How it decides, in three phases per segment of history (the whole range first):
//! 1. *Reproduce*: interleaved runs at the segment's ends until a mixture sequential test says they differ (valid
//!    under any number of looks), or a futility rule or budget says they do not; never name a commit for noise.
//! 2. *Locate*: a Bayesian posterior over where the change sits, under a piecewise-constant model whose two levels
//!    and noise are integrated out analytically (every run at every commit is evidence for the levels; runs far
//!    from their own commit's robust level are down-weighted), after removing a drift slope estimated within
//!    commits. A tested commit measurably between the two levels ends the search as several contributors, reported
//!    as ranges with their shares. The next runs go where expected information per unit cost is highest
//!    (a new commit costs a build, another run at a built commit does not), each partition of the posterior
//!    predicting the measured commit at its own levels, so runs that refine a level count too.
//!    A model comparison of one change against two (a middle level between the ends) over every partition of the
//!    tested commits (after merges, every pair of change positions, the two changes adding) ends the segment as
//!    several contributors when decisive and the middle level also shows against both ends in runs adjacent in
//!    time (else they get interleaved pairs first); while it leans that way (for a contributor of a quarter of the
//!    change or more), the middle range gets runs, with the nearer end until that end has as many. The ends keep a
//!    share of the runs.
//! 3. *Verify*: fresh interleaved pairs at the chosen commit and its parent, analysed as pairs (differences of runs
//!    adjacent in time, so load that comes and goes cancels); blame needs a sequential ratio test against the step
//!    the levels predict to pass on the pairs alone and the posterior from every run to reach 99%. Its share of
//!    the change is estimated from every run at the two commits, against the pooled levels and against the
//!    segment's ends; a share far above the whole change is re-examined and, if it persists, never blamed. Pairs
//!    that show no step send the search back to locating. When it explains only part, or a residual step between
//!    an end and the culprit or its parent stands out, the segments before and after it are searched the same
//!    way, and every contributor is reported with its share (where a commit is named among several, the shares of
//!    the outcome are read on one set of levels, so that they add up to the change); parts still unsearched when the
//!    budget is spent are reported as ranges when their ends differ. A whole range still being located when the
//!    budget is spent (or whose search gave up) names no commit, but reports the narrowest range its tested commits
//!    already place the change in, when there is one (`outcome`). Before the machine settles with budget left, a
//!    stretch outside everything named whose end commits' runs show more of the change (`outside`) is searched the
//!    same way, once, from fresh runs at its ends.
//!
//! Code map: this file holds the machine's state, its public types and the decision loop; `reproduce`,
//! `locate` and `verify` are the three phases; `posterior` the location model they share; `staircase` the test
//! for several contributors and its probing; `corrections` how runs are read (drift, and load from the model in
//! `load`); `outcome` how the machine ends and reports; `progress` what it has spent and the estimate of what is
//! left, which no decision reads. `model` is the statistics, `topology` the commit graph, `sim` and `baselines` the
//! simulator.

pub mod baselines;
mod corrections;
mod load;
mod locate;
mod model;
mod outcome;
mod outside;
mod posterior;
mod progress;
mod replicate;
mod reproduce;
mod sensitivity;
pub mod sim;
mod spread;
mod staircase;
mod topology;
mod verify;

pub use progress::{estimate_left, Estimate, Progress, Stage};
pub use model::{fit_t, fit_t_fixed_scale, mixture_information, mixture_log_ratio, one_sided_mixture_log_ratio, TFit};
pub use outside::{open_stretches, stretches_said, OpenStretch};
pub use sensitivity::Sensitivity;
pub use spread::BuildSpread;
pub use topology::CommitNode;

use posterior::Posterior;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use topology::Topology;

/// Why a bisect could not be set up or a sample not be recorded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BisectError {
    #[error("a bisect needs at least a good and a bad commit, got {count} commit(s)")]
    TooFewCommits { count: usize },
    #[error("commit {commit} lists parent {parent}, which does not come before it; give commits in topological order")]
    ParentNotEarlier { commit: usize, parent: usize },
    #[error("commit {commit} is not an ancestor of the bad commit (the last one); the range must end at bad")]
    NotAncestorOfBad { commit: usize },
    #[error("sample for commit {commit}, but the range has only {count} commits")]
    UnknownCommit { commit: usize, count: usize },
}

/// Which way is a regression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    HigherIsWorse,
    LowerIsWorse,
    /// Look for any change; the direction is taken from good versus bad once that difference is significant.
    Any,
}

/// Knobs of the bisect. The defaults are the ones measured in `docs/statistics.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BisectConfig {
    pub direction: Direction,
    /// Cost of building and deploying a commit not built yet, in the same unit as `run_cost` (seconds, say).
    pub build_cost: f64,
    /// Cost of one more run at a built commit.
    pub run_cost: f64,
    /// Total runs the bisect may spend before it reports what it has.
    pub max_runs: usize,
    /// False-alarm bound of the test that good and bad differ (any number of looks).
    pub alpha_reproduce: f64,
    /// A culprit is blamed only when the posterior from every run puts at least 1 - alpha_culprit on it.
    pub alpha_culprit: f64,
    /// False-alarm bound of the test, on the fresh interleaved pairs alone, that the culprit differs from its
    /// parent (any number of looks). Sessions stored before this knob existed read the default.
    #[serde(default = "default_alpha_fresh")]
    pub alpha_fresh: f64,
    /// Posterior mass one commit (with any untestable commits it cannot be told from) needs before it is verified.
    /// Verification goes back to locating when its fresh runs move the posterior, so this only says where to test.
    pub confidence: f64,
    /// A culprit whose share's lower bound (90%) reaches this explains the change: the search stops.
    pub explain_most: f64,
    /// A culprit whose share's upper bound (90%) stays below this explains only part: search for others.
    pub partial_below: f64,
    /// Fresh interleaved pairs (culprit, parent) always run before blaming.
    pub min_fresh_pairs: usize,
    /// Verification gives up after this many fresh pairs.
    pub max_verify_pairs: usize,
    /// Runs a reproduce phase may spend on one segment before calling it "no difference".
    pub max_reproduce_runs: usize,
    /// Smallest change worth bisecting, in noise standard deviations: a good/bad difference whose upper bound is
    /// below it ends the bisect as not reproduced.
    pub min_effect_sigma: f64,
    /// Smallest change worth bisecting as a fraction of good's level (0.02 for 2%), the user's own bar on top of
    /// [`BisectConfig::min_effect_sigma`]: a good/bad difference whose upper bound is below it ends the bisect as not
    /// reproduced, even when it is significant. Zero for none (the default; sessions stored before it read zero).
    #[serde(default)]
    pub min_effect_relative: f64,
    /// A candidate is replicated on the builds beside it before it is blamed when the tested commits on one side
    /// differ by more than their runs explain at this p-value (see `replicate.rs`); zero turns the check off.
    /// Sessions stored before it read zero, so that they continue as they started.
    #[serde(default)]
    pub replicate_below_p: f64,
}

fn default_alpha_fresh() -> f64 {
    BisectConfig::default().alpha_fresh
}

impl Default for BisectConfig {
    fn default() -> Self {
        BisectConfig {
            direction: Direction::HigherIsWorse,
            build_cost: 3.0,
            run_cost: 1.0,
            max_runs: 600,
            alpha_reproduce: 0.05,
            alpha_culprit: 0.01,
            alpha_fresh: 0.01,
            confidence: 0.6,
            explain_most: 0.4,
            partial_below: 0.8,
            min_fresh_pairs: 2,
            max_verify_pairs: 60,
            max_reproduce_runs: 120,
            min_effect_sigma: 0.4,
            min_effect_relative: 0.0,
            replicate_below_p: 0.1,
        }
    }
}

/// The result of one run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Sample {
    Value(f64),
    /// The build, deploy or run failed: the commit cannot be tested (like `git bisect skip`).
    Untestable,
}

/// What the outer layer should do next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Action {
    /// Run each listed commit the given number of times, interleaved (a, b, a, b, ...: [`next_in_batch`] picks each
    /// run), recording every result as it finishes. Interleaving makes slow drift hit all commits alike.
    RunBatch(Vec<(usize, usize)>),
    Done(Outcome),
}

/// How many runs a step asks of one commit, in words for the log: "once", "twice", "3 times".
fn times(runs: usize) -> String {
    match runs {
        1 => "once".to_string(),
        2 => "twice".to_string(),
        n => format!("{n} times"),
    }
}

/// The commit the next run of a batch goes to: the entry with the most runs left, the first on ties (a, b, a, b for
/// equal counts). It reads only the runs left, which the machine re-derives from the stored samples, so a driver
/// resumed inside a batch takes the runs in the order the interrupted one would have; and a commit the batch no
/// longer wants (found untestable) is not run again. `None` for an empty batch.
pub fn next_in_batch(batch: &[(usize, usize)]) -> Option<usize> {
    let best = batch.iter().filter(|e| e.1 > 0).fold(None, |best: Option<&(usize, usize)>, e| match best {
        Some(b) if b.1 >= e.1 => Some(b),
        _ => Some(e),
    });
    best.map(|&(commit, _)| commit)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Found,
    Multiple,
    NotReproduced,
    Inconclusive,
}

impl Status {
    /// The word stored as a session's status and printed in `--json` (the serde name).
    pub fn word(self) -> &'static str {
        match self {
            Status::Found => "found",
            Status::Multiple => "multiple",
            Status::NotReproduced => "not-reproduced",
            Status::Inconclusive => "inconclusive",
        }
    }
}

/// A commit (or range) blamed for part or all of the change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Culprit {
    /// The blamed commit; for an unlocated range, its last commit.
    pub commit: usize,
    /// The change lies after this commit (exclusive) and up to `commit` (inclusive): for a located culprit, the
    /// tested commit it was compared against.
    pub after: usize,
    /// True when narrowed to `commit` (plus any `untestable_suspects`); false for a range where a significant part
    /// of the change sits but which the budget did not allow to narrow.
    pub located: bool,
    /// Untestable commits that cannot be told apart from `commit`: the change may be in any of them.
    pub untestable_suspects: Vec<usize>,
    /// Share of the good-to-bad change this step explains, with a 90% interval.
    pub share: f64,
    pub share_low: f64,
    pub share_high: f64,
    /// Posterior probability that the change (of this segment) is at this commit or its untestable suspects; for an
    /// unlocated range, the probability that the range holds its change where the model gives one (a staircase's
    /// ranges), else 0.
    pub confidence: f64,
    /// The step itself, in the metric's units, oriented so that positive is worse: for a lone culprit, the difference
    /// of the levels of every run before and after it (outliers down-weighted as the location posterior weighs them)
    /// while the ends agree with them, else its runs' level less its parent's (docs/statistics.md, "The step
    /// `--json` reports").
    pub step: f64,
    /// The record (the position in the session's run order, every record counted, failed runs too) at which the
    /// verification that confirmed this commit against `after` began: its fresh interleaved runs are the runs of the
    /// two at or after it, which the report shows as a table of their own, since they are the evidence the blame
    /// rests on. `None` for a range no verification confirmed (a merge confirmed over its first parent and then
    /// reported as the range it brings in keeps its own), and for an outcome serialized before it was kept (a
    /// session's report replays its runs, so it has it whenever the session was stored).
    #[serde(default)]
    pub fresh_from: Option<usize>,
}

impl Culprit {
    /// The commits a located culprit's change may be at, by position in the range, oldest first, each with whether
    /// it is untestable: its untestable suspects, then the commit; none for a range not narrowed, whose commits are
    /// not candidates one by one.
    pub fn candidates(&self) -> Vec<(usize, bool)> {
        if !self.located {
            return Vec::new();
        }
        let mut candidates: Vec<(usize, bool)> = self.untestable_suspects.iter().map(|&i| (i, true)).collect();
        candidates.push((self.commit, false));
        candidates.sort_by_key(|&(position, _)| position);
        candidates
    }

    /// A step located at `commit` after `after` that no verification has measured yet: shares, confidence and step
    /// unknown (NaN) until the caller fills in what it knows.
    pub(crate) fn unmeasured(commit: usize, after: usize) -> Culprit {
        Culprit {
            commit,
            after,
            located: true,
            untestable_suspects: Vec::new(),
            share: f64::NAN,
            share_low: f64::NAN,
            share_high: f64::NAN,
            confidence: f64::NAN,
            step: f64::NAN,
            fresh_from: None,
        }
    }

    /// A range (after, commit] holding part of the change (`step`, with its `share` of the whole as (estimate, low,
    /// high)) that was not narrowed to a commit; `confidence` the probability that it holds the change, or 0 where
    /// none was measured.
    pub(crate) fn unlocated_range(
        after: usize,
        commit: usize,
        (share, share_low, share_high): (f64, f64, f64),
        confidence: f64,
        step: f64,
    ) -> Culprit {
        Culprit {
            commit,
            after,
            located: false,
            untestable_suspects: Vec::new(),
            share,
            share_low,
            share_high,
            confidence,
            step,
            fresh_from: None,
        }
    }
}

/// What was measured at one commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommitEvidence {
    pub commit: usize,
    pub runs: usize,
    pub mean: f64,
    pub stddev: f64,
    pub untestable: bool,
}

/// What the machine's last decision subtracted from one run's raw value before reading it (raw units), so that a
/// reader outside can recompute the levels it decided on: the value it read is `value - warmup - drift - load`
/// (then oriented). See [`Bisect::run_corrections`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RunCorrection {
    /// The warm-up's share of the run: the excess the first runs showed, decayed to this run (zero where none stood
    /// out; see [`model::warmup_excess`]).
    #[serde(default)]
    pub warmup: f64,
    /// The slow drift's share of the run: the drift slope per run times the run's distance from the middle run.
    pub drift: f64,
    /// The offset of load that came and went around the run (zero where none stood out).
    pub load: f64,
}

/// One decision of the machine, with its reason, for `culprit bisect log`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    /// Valid runs recorded when the decision was taken.
    pub runs: usize,
    pub phase: String,
    pub decision: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub status: Status,
    pub culprits: Vec<Culprit>,
    /// Valid runs spent (untestable attempts not included).
    pub runs: usize,
    /// Distinct commits built (including those that failed to build).
    pub builds: usize,
    /// Good-to-bad change in the metric's units, positive meaning worse, when it was measured: the difference of the
    /// two ends' robust levels (Student-t locations, nu = 4, of all their drift- and load-corrected runs when the
    /// bisect ended, not only those the reproduce test passed on), not of the plain means the evidence lists (QA 23
    /// recomputed both from `bisect log --json`: 7.168 against the plain means' 6.329 on a synthetic bisect whose bad
    /// end had one low run). A lone culprit's share is read against the levels either side of it while the ends agree
    /// with them (docs/statistics.md), so it need not be `step` over this.
    pub total_change: Option<f64>,
    pub evidence: Vec<CommitEvidence>,
    pub log: Vec<LogEntry>,
    /// One sentence on why the bisect ended where it did.
    pub reason: String,
    /// Set when commits the outcome puts at one level differ by more than their runs explain (a caveat on the
    /// culprits, see [`BuildSpread`]); for outcomes that name culprits, and for inconclusive ones on their most
    /// probable step.
    #[serde(default)]
    pub build_spread: Option<BuildSpread>,
    /// Set on a `NotReproduced` outcome whose bad end differed from good the other way than [`BisectConfig::direction`]
    /// searches, beyond doubt: better than good when a regression is searched for (the name's case), worse when the
    /// caller flipped the direction to search an improvement. The caller, which knows which it asked for, words it.
    #[serde(default)]
    pub improved: bool,
    /// Set on a `NotReproduced` outcome whose good and bad surely differ by less than `--min-change` (the user's
    /// bar, [`BisectConfig::min_effect_relative`]): the change may well be real, only smaller than asked for.
    #[serde(default)]
    pub below_min_change: bool,
    /// Set on a `NotReproduced` outcome whose reproduce test ran out of runs or ruled the change out: how noisy the
    /// runs at good and bad were and the smallest change they would have caught, so that a change they could have
    /// missed is reported as not confirmed rather than absent (QA 48). Outcomes stored before it read none.
    #[serde(default)]
    pub sensitivity: Option<Sensitivity>,
    /// On an outcome that names culprits or ranges in a linear history: the stretches outside them, with the share of
    /// the change their end commits' runs differ by (QA 48: ranges that left a real contributor out said nothing of
    /// the commits outside them). Outcomes stored before it read none.
    #[serde(default)]
    pub open_stretches: Vec<OpenStretch>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Segment {
    lo: usize,
    hi: usize,
    top: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Phase {
    Reproduce { segment: Segment, start_records: usize },
    Locate { segment: Segment },
    Verify { segment: Segment, commit: usize, parent: usize, start_records: usize },
    Finished,
}

/// The bisect state machine. See the module documentation.
#[derive(Debug, Clone)]
pub struct Bisect {
    config: BisectConfig,
    topology: Topology,
    untestable: Vec<bool>,
    /// Per commit: (record index, value) of every valid run, less the warm-up the last decision read in the runs
    /// ([`Bisect::settle_warmup`]): what every test reads.
    values: Vec<Vec<(f64, f64)>>,
    /// Per commit: (record index, value) of every valid run as it was measured.
    measured: Vec<Vec<(f64, f64)>>,
    /// The first run's warm-up excess the last decision read (see [`model::warmup_excess`]); 0 when none stands out.
    warmup: f64,
    touched: Vec<bool>,
    /// Every record so far, valid or not; its count is the run index used for drift.
    records: usize,
    runs: usize,
    pending: Vec<(usize, usize)>,
    phase: Phase,
    queue: Vec<Segment>,
    culprits: Vec<Culprit>,
    /// A culprit was confirmed as explaining only part of its segment's change: the pooled levels of the whole
    /// range then mix its step with the rest, and its share is the one measured against the ends.
    part_explained: bool,
    /// Residual segments (lo, hi) queued because the runs already taken at their ends stood out: their reproduce
    /// test reads only runs taken since it started (see [`Bisect::reproduce`]).
    fresh_only: Vec<(usize, usize)>,
    /// Staircase ranges (lo, hi) queued to be narrowed to a commit (see [`Bisect::record_staircase`]).
    narrowing: Vec<(usize, usize)>,
    /// Per staircase of which one range is being narrowed and the other was reported unlocated: the narrowed range,
    /// the reported one (as its culprit's `after` and `commit`), and the range to search for the whole change when
    /// the narrowed one holds no step after all (see [`Bisect::narrowing_ended`]).
    staircase_siblings: Vec<staircase::StaircaseSibling>,
    /// Per merge confirmed as a step over its first parent: the segment (merge base, merged parent] searched for
    /// the commit of the merged branch that made the step, and the merge, whose blame that commit takes over (see
    /// [`Bisect::search_merged_branches`]).
    merge_sides: Vec<(Segment, usize)>,
    /// Per commit whose verification ended without its fresh pairs showing the step (back to locating, or given
    /// up): what the pairs measured. A range they cover is not reported as placed (see [`Bisect::bracket`]).
    unconfirmed: Vec<outcome::UnconfirmedPairs>,
    /// Open stretches (after, upto] searched because their runs showed more of the change when every segment was
    /// settled (see [`Bisect::search_open_stretches`]): each is searched once, and one whose search ends without
    /// naming a commit is left to the outcome's open stretches, not reported as a range.
    stretch_searches: Vec<(usize, usize)>,
    /// How many corrected runs the log has reported (see [`Bisect::note_load_corrections`]).
    load_noted: usize,
    /// Per record index, the load offset of the runs around it (see [`Bisect::time_offsets`]); zero where none
    /// stands out. Set at every decision from every run.
    offsets: Vec<f64>,
    /// The drift slope per run the last decision read the runs with, and how many records there were then (the
    /// drift is measured from their middle); see [`Bisect::run_corrections`].
    decided_drift: (f64, usize),
    /// +1 when higher is worse, -1 when lower is.
    orientation: f64,
    /// Good-to-bad change (oriented) and its standard error, once reproduced.
    total: Option<(f64, f64)>,
    reproduced: Option<bool>,
    /// Whether good and bad differ the other way than searched (see [`Outcome::improved`]).
    improved: bool,
    /// Whether the bisect ended because good and bad differ by less than `--min-change` (see
    /// [`Outcome::below_min_change`]).
    below_min_change: bool,
    /// What the runs at good and bad could have seen when the reproduce test ended "not reproduced" (see
    /// [`Outcome::sensitivity`]).
    sensitivity: Option<Sensitivity>,
    /// The candidate whose step is being replicated on the builds beside it (see [`Bisect::replication`]), and,
    /// once its builds are compared again in rounds of their own, the record those rounds start at.
    replicating: Option<usize>,
    replicating_since: Option<usize>,
    /// The candidate whose step held across the builds beside it.
    replicated: Option<usize>,
    log: Vec<LogEntry>,
    outcome: Option<Outcome>,
    /// What each phase has spent, for the estimate of what is left ([`Bisect::progress`]); no decision reads it.
    spent: progress::Spent,
}

/// Runs a side the reproduce phase starts with.
pub const INITIAL_RUNS_PER_SIDE: usize = 4;
/// Two-sided z of the 90% share interval.
const SHARE_Z: f64 = 1.645;
/// The coverage of the share intervals reported with every culprit.
const SHARE_LEVEL: f64 = 0.9;

/// The two-sided z of a [`SHARE_LEVEL`] share interval whose standard error is estimated with `dof` degrees of
/// freedom: Student's t, or [`SHARE_Z`] where `dof` is no valid count.
fn share_z_with(dof: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    StudentsT::new(0.0, 1.0, dof).map_or(SHARE_Z, |t| t.inverse_cdf(0.5 + SHARE_LEVEL / 2.0))
}
/// The smallest contributor worth a search, as a share of the whole change: a staircase whose middle level sits
/// closer than this to an end is not probed for, and a residual segment is closed by Wald's test of a change this
/// large against none. A series of three equal steps (the target) has shares of one third. Measured with the
/// probing of the middle range, before the information choice and the stricter residual tests (single steps on
/// seeds 1 and 4, 500 trials; three 0.5 sigma steps, 300): 0.2, 122-123 runs and 96% of staircases as several;
/// 0.25, 118-122 runs and 95% (kept); 0.3, 114-121 runs and 95%, but 99.2% right on seed 1.
pub const CONTRIBUTOR_MIN_SHARE: f64 = 0.25;
/// A guard against a decision loop that makes no progress; each pass either asks for runs or changes phase.
const MAX_DECISION_PASSES: usize = 64;

impl Bisect {
    /// Sets up the machine over `commits` (good at 0, bad last) and decides the first batch of runs.
    pub fn new(config: BisectConfig, commits: &[CommitNode]) -> Result<Bisect, BisectError> {
        let topology = Topology::new(commits)?;
        let count = commits.len();
        let orientation = if config.direction == Direction::LowerIsWorse { -1.0 } else { 1.0 };
        let top = Segment { lo: 0, hi: count - 1, top: true };
        let mut machine = Bisect {
            config,
            topology,
            untestable: commits.iter().map(|c| c.untestable).collect(),
            values: vec![Vec::new(); count],
            measured: vec![Vec::new(); count],
            warmup: 0.0,
            touched: vec![false; count],
            records: 0,
            runs: 0,
            pending: Vec::new(),
            phase: Phase::Reproduce { segment: top, start_records: 0 },
            queue: Vec::new(),
            culprits: Vec::new(),
            part_explained: false,
            fresh_only: Vec::new(),
            narrowing: Vec::new(),
            staircase_siblings: Vec::new(),
            merge_sides: Vec::new(),
            unconfirmed: Vec::new(),
            stretch_searches: Vec::new(),
            load_noted: 0,
            decided_drift: (0.0, 0),
            offsets: Vec::new(),
            orientation,
            total: None,
            reproduced: None,
            improved: false,
            below_min_change: false,
            sensitivity: None,
            replicating: None,
            replicating_since: None,
            replicated: None,
            log: Vec::new(),
            outcome: None,
            spent: progress::Spent::default(),
        };
        machine.decide();
        Ok(machine)
    }

    /// Rebuilds the machine from stored samples, in the order they were recorded: the resume after a crash.
    pub fn replay(
        config: BisectConfig,
        commits: &[CommitNode],
        samples: &[(usize, Sample)],
    ) -> Result<Bisect, BisectError> {
        let mut machine = Bisect::new(config, commits)?;
        for &(commit, sample) in samples {
            machine.record(commit, sample)?;
        }
        Ok(machine)
    }

    /// The runs still wanted from the current batch, or the outcome.
    pub fn next_action(&self) -> Action {
        if let Some(outcome) = &self.outcome {
            return Action::Done(outcome.clone());
        }
        Action::RunBatch(self.pending.iter().copied().filter(|&(_, n)| n > 0).collect())
    }

    /// The outcome once done.
    pub fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    /// Every decision so far.
    pub fn log(&self) -> &[LogEntry] {
        &self.log
    }

    /// Per record, in the order runs were recorded (failed ones included, with their corrections as if valid),
    /// what the last decision subtracted from the run before reading it: warm-up, drift and load, in raw units. Records
    /// after that decision (runs a stopped session had not yet read) are not listed. With the recorded values,
    /// these recompute every level the machine decided on.
    pub fn run_corrections(&self) -> Vec<RunCorrection> {
        let (slope, records) = self.decided_drift;
        let centre = records as f64 / 2.0;
        let correction = |t: usize| RunCorrection {
            warmup: self.warmup * model::warmup_shape(t as f64),
            drift: slope * (t as f64 - centre),
            load: self.offset(t as f64),
        };
        (0..records).map(correction).collect()
    }

    /// Valid runs recorded so far.
    pub fn runs(&self) -> usize {
        self.runs
    }

    /// Distinct commits built so far.
    pub fn builds(&self) -> usize {
        self.touched.iter().filter(|&&t| t).count()
    }

    /// Records one run's result. A NaN or infinite value counts as an untestable run. When the current batch is
    /// complete, the next decision is taken at once, so the state depends only on the sequence of samples.
    /// Samples recorded after the outcome are ignored.
    pub fn record(&mut self, commit: usize, sample: Sample) -> Result<(), BisectError> {
        let count = self.values.len();
        if commit >= count {
            return Err(BisectError::UnknownCommit { commit, count });
        }
        if self.outcome.is_some() {
            return Ok(());
        }
        let index = self.records as f64;
        self.records += 1;
        let new_build = !self.touched[commit];
        self.touched[commit] = true;
        let value = match sample {
            Sample::Value(v) if v.is_finite() => Some(v),
            _ => None,
        };
        self.spent.count(&self.phase, self.reproduced, value.is_some(), new_build);
        match value {
            Some(v) => {
                self.values[commit].push((index, v - self.warmup * model::warmup_shape(index)));
                self.measured[commit].push((index, v));
                self.runs += 1;
                if let Some(entry) = self.pending.iter_mut().find(|(c, n)| *c == commit && *n > 0) {
                    entry.1 -= 1;
                }
            }
            None => {
                self.untestable[commit] = true;
                for entry in self.pending.iter_mut().filter(|(c, _)| *c == commit) {
                    entry.1 = 0;
                }
            }
        }
        if self.pending.iter().all(|&(_, n)| n == 0) {
            self.decide();
        }
        Ok(())
    }

    fn note(&mut self, phase: &str, decision: String, reason: String) {
        self.log.push(LogEntry { runs: self.runs, phase: phase.to_string(), decision, reason });
    }

    /// Asks for `batch`, cut to the runs the budget has left: `--max-runs N` is at most N runs, so a pair or a
    /// confirmation asked one run before the end gets that one run (the largest counts are cut first, so what is
    /// left stays as even between the commits as it can). The decision after it finds the budget spent.
    fn ask(&mut self, batch: Vec<(usize, usize)>) {
        let mut batch: Vec<(usize, usize)> = batch.into_iter().filter(|&(_, n)| n > 0).collect();
        let left = self.config.max_runs.saturating_sub(self.runs).max(1);
        while batch.iter().map(|&(_, n)| n).sum::<usize>() > left {
            // The last of the largest counts, so that a pair (a, 1), (b, 1) keeps its first commit.
            let Some(largest) = batch.iter().map(|&(_, n)| n).max() else { break };
            if let Some(entry) = batch.iter_mut().rev().find(|(_, n)| *n == largest) {
                entry.1 -= 1;
            }
            batch.retain(|&(_, n)| n > 0);
        }
        self.pending = batch;
    }

    fn decide(&mut self) {
        self.pending.clear();
        // No run is recorded while deciding: the drift and the load offsets are read once, before the first pass,
        // so that every pass (and a budget's end, which reports shares) reads the runs the same way.
        self.settle_warmup();
        let slope = self.drift();
        self.decided_drift = (slope, self.records);
        self.offsets = self.time_offsets(slope);
        self.note_load_corrections();
        for _ in 0..MAX_DECISION_PASSES {
            if self.outcome.is_some() {
                return;
            }
            if self.runs >= self.config.max_runs {
                let placed = self.report_unsettled_parts();
                let placed = placed.unwrap_or_default();
                let reason = format!("the budget of {} runs is spent{placed}", self.config.max_runs);
                self.finish(reason);
                return;
            }
            let asked = match self.phase.clone() {
                Phase::Reproduce { segment, start_records } => self.reproduce(segment, start_records, slope),
                Phase::Locate { segment } => self.locate(segment, slope),
                Phase::Verify { segment, commit, parent, start_records } => {
                    self.verify(segment, commit, parent, start_records, slope)
                }
                Phase::Finished => {
                    if self.search_open_stretches(slope) {
                        continue;
                    }
                    self.finish("every segment is settled".to_string());
                    return;
                }
            };
            if asked {
                return;
            }
        }
        self.finish("no decision could make progress (internal guard)".to_string());
    }

    /// Moves to the next queued segment, or finishes.
    fn next_segment(&mut self) {
        // However a merged branch's search ends, the merge that sent it is judged (a commit found on it has taken
        // over already; a branch ruled out was judged with its measured change).
        if let Phase::Reproduce { segment, .. } | Phase::Locate { segment } | Phase::Verify { segment, .. } = self.phase
        {
            self.merged_branch_ended(segment, None);
        }
        if self.queue.is_empty() {
            self.phase = Phase::Finished;
        } else {
            let segment = self.queue.remove(0);
            self.phase = Phase::Reproduce { segment, start_records: self.records };
        }
    }

    fn interleaved_pairs(&mut self, a: usize, b: usize, pairs: usize) {
        self.ask(vec![(a, pairs), (b, pairs)]);
    }
}

#[cfg(test)]
mod tests;
