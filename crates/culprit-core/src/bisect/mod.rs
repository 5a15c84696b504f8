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
//!    tested commits ends the segment as several contributors when decisive; while it leans that way (for a
//!    contributor of a quarter of the change or more), the middle range gets runs, with the nearer end until that
//!    end has as many. The ends keep a share of the runs.
//! 3. *Verify*: fresh interleaved pairs at the chosen commit and its parent, analysed as pairs (differences of runs
//!    adjacent in time, so load that comes and goes cancels); blame needs a sequential ratio test against the step
//!    the levels predict to pass on the pairs alone and the posterior from every run to reach 99%. Its share of
//!    the change is estimated from every run at the two commits, against the pooled levels and against the
//!    segment's ends; a share far above the whole change is re-examined and, if it persists, never blamed. Pairs
//!    that show no step send the search back to locating. When it explains only part, or a residual step between
//!    an end and the culprit or its parent stands out, the segments before and after it are searched the same
//!    way, and every contributor is reported with its share; parts still unsearched when the budget is spent are
//!    reported as ranges when their ends differ.

pub mod baselines;
mod load;
mod model;
pub mod sim;
mod topology;

pub use model::{fit_t, fit_t_fixed_scale, mixture_information, mixture_log_ratio, one_sided_mixture_log_ratio, TFit};
pub use topology::CommitNode;

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
    /// Run each listed commit the given number of times, interleaved round-robin in the listed order (a, b, a, b,
    /// ...), recording every result as it finishes. Interleaving makes slow drift hit all commits alike.
    RunBatch(Vec<(usize, usize)>),
    Done(Outcome),
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
    /// Posterior probability that the change (of this segment) is at this commit or its untestable suspects.
    pub confidence: f64,
    /// The step itself, in the metric's units, oriented so that positive is worse.
    pub step: f64,
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
    /// Good-to-bad change in the metric's units, positive meaning worse, when it was measured.
    pub total_change: Option<f64>,
    pub evidence: Vec<CommitEvidence>,
    pub log: Vec<LogEntry>,
    /// One sentence on why the bisect ended where it did.
    pub reason: String,
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

/// The posterior over change locations within one segment.
#[derive(Debug, Clone)]
pub(crate) struct Posterior {
    /// Hypotheses: the commit where the change enters, in segment order.
    hypotheses: Vec<usize>,
    /// Probability of each hypothesis; sums to one.
    probability: Vec<f64>,
    /// The class (representative commit) of each hypothesis: hypotheses no testable commit can tell apart share it.
    class: Vec<usize>,
    /// Step between the two fitted levels of the most probable partition, positive is worse.
    delta: f64,
    /// Noise standard deviation of that fit.
    sigma: f64,
    /// Standard error of `delta`.
    delta_se: f64,
    /// Per hypothesis, the index of its partition in `fits` (hypotheses no tested commit tells apart share one).
    partition: Vec<usize>,
    /// The two-level fit of each partition.
    fits: Vec<Option<model::LevelsFit>>,
}

impl Posterior {
    fn class_masses(&self) -> BTreeMap<usize, f64> {
        let mut masses = BTreeMap::new();
        for (&class, &p) in self.class.iter().zip(&self.probability) {
            *masses.entry(class).or_insert(0.0) += p;
        }
        masses
    }

    /// The most probable class and its mass (lowest commit on ties, for determinism).
    fn best_class(&self) -> Option<(usize, f64)> {
        self.class_masses().into_iter().fold(None, |best, (class, mass)| match best {
            Some((_, m)) if m >= mass => best,
            _ => Some((class, mass)),
        })
    }
}

/// The most probable two-change fit of a segment: the tested commits `first_middle..=last_middle` sit at a
/// level between the ends'. Levels are (estimate, standard error), oriented so that positive is worse.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Staircase {
    before_middle: usize,
    first_middle: usize,
    last_middle: usize,
    after_middle: usize,
    low: (f64, f64),
    middle: (f64, f64),
    high: (f64, f64),
}

/// A residual segment next to a confirmed step: `end` is the segment's end it reaches, `inner` the parent or
/// culprit it starts from, `z` its change in standard errors.
#[derive(Debug, Clone, Copy)]
struct Residual {
    end: usize,
    inner: usize,
    segment: Segment,
    z: f64,
}

/// The bisect state machine. See the module documentation.
#[derive(Debug, Clone)]
pub struct Bisect {
    config: BisectConfig,
    topology: Topology,
    untestable: Vec<bool>,
    /// Per commit: (record index, raw value) of every valid run.
    values: Vec<Vec<(f64, f64)>>,
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
    /// How many corrected runs the log has reported (see [`Bisect::note_load_corrections`]).
    load_noted: usize,
    /// Per record index, the load offset of the runs around it (see [`Bisect::time_offsets`]); zero where none
    /// stands out. Set at every decision from every run.
    offsets: Vec<f64>,
    /// +1 when higher is worse, -1 when lower is.
    orientation: f64,
    /// Good-to-bad change (oriented) and its standard error, once reproduced.
    total: Option<(f64, f64)>,
    reproduced: Option<bool>,
    log: Vec<LogEntry>,
    outcome: Option<Outcome>,
}

/// Runs per visit considered when choosing where to measure next.
const VISIT_SIZES: [usize; 6] = [1, 2, 3, 4, 6, 8];
/// Runs a side the reproduce phase starts with.
const INITIAL_RUNS_PER_SIDE: usize = 4;
/// Runs at one commit beyond which locating measures elsewhere.
const LOCATE_RUNS_CAP: usize = 16;
/// Posterior mass enough to verify when the candidate and its parent have reached the runs cap.
const SATURATED_CONFIDENCE: f64 = 0.8;
/// A step whose share of the change between its segment's ends is surely (90% upper bound) below this explains
/// only part of it.
const ENDS_PARTIAL_BELOW: f64 = 0.6;
/// After a culprit that explains most of its segment's change, a residual segment (start to parent, culprit to
/// end) whose change reaches this many standard errors, from the runs already taken, is searched too.
const RESIDUAL_SCREEN_Z: f64 = 2.5;
/// A segment still being searched when the budget is spent is reported as a range holding part of the change when
/// its ends differ by this many standard errors.
const UNSETTLED_MIN_Z: f64 = 3.0;
/// Below [`RESIDUAL_SCREEN_Z`] but from this many standard errors, a residual step is suggested: the segment's end
/// gets more runs when it has fewer than the commit it is compared with.
const RESIDUAL_SUSPECT_Z: f64 = 1.0;
/// Each end of a segment keeps at least 1/this of the runs of the segment's interior commits.
const END_SHARE_DIVISOR: usize = 8;
/// Two-sided z of the 90% share interval.
const SHARE_Z: f64 = 1.645;
/// A residual segment whose change is surely below this share of the total holds no further contributor.
const RESIDUAL_MIN_SHARE: f64 = 0.15;
/// The smallest contributor worth a search, as a share of the whole change: a staircase whose middle level sits
/// closer than this to an end is not probed for, and a residual segment is closed by Wald's test of a change this
/// large against none. A series of three equal steps (the target) has shares of one third. Measured with the
/// probing of the middle range, before the information choice and the stricter residual tests (single steps on
/// seeds 1 and 4, 500 trials; three 0.5 sigma steps, 300): 0.2, 122-123 runs and 96% of staircases as several;
/// 0.25, 118-122 runs and 95% (kept); 0.3, 114-121 runs and 95%, but 99.2% right on seed 1.
const CONTRIBUTOR_MIN_SHARE: f64 = 0.25;
/// Risk of closing a residual segment that holds a contributor of [`CONTRIBUTOR_MIN_SHARE`].
const NO_CONTRIBUTOR_BETA: f64 = 0.05;
/// False-alarm bound of the test that the ends of a segment below the top differ: those ends hold the runs that
/// chose the segment, so the 5% of the first test let one single-step job in a hundred search a residual that was
/// not there until the budget was spent.
const RESIDUAL_ALPHA: f64 = 0.01;
/// A commit whose level differs from both ends of its segment by this many standard errors sits between them: the
/// change is shared by several commits (a staircase), reported as such.
const BETWEEN_Z: f64 = 4.0;
/// Below [`BETWEEN_Z`] but above this, a commit is suspected to sit between the levels when the staircase model
/// comparison also leans to two changes (log Bayes factor of at least [`STAIRCASE_LEAN_LOG_BAYES`]); the middle range
/// of the most probable staircase then gets runs (see [`Bisect::probe_between`]) until the suspicion is settled. These
/// runs are what lets the comparison decide. Probing on the z-score alone (from 1.5 standard errors) cost single steps
/// about 30 runs a job, most of them on commits that looked in between after 3 runs by chance; see docs/statistics.md
/// for the measurements.
const BETWEEN_LEANING_Z: f64 = 1.0;
/// The lean of the staircase comparison (log Bayes factor, two changes against one) from which a commit that
/// looks in between is probed, once the posterior holds [`PROBE_FROM_MASS`] on one commit. Measured (single 1.5
/// sigma steps on two seeds of 500 trials / three 0.5 sigma steps, 300 / two 1 sigma steps in 100 commits, 200):
/// probing from the start of locating with a lean of 0.5, 124-127 runs / 91% / 91.5%, and a same answer of 97.4%
/// on one seed; waiting for 10% of the mass with a lean of 0.5, 118 runs / 91% / 86.5%; waiting with a lean of
/// 0, 125-137 runs / 93% / 93.5%, same answer 98.4-99.2% (kept). Again with the middle-range probing and the
/// information choice: a lean of 0.5, 105-107 runs / 94.6% / 93.5%, but drift jobs 98.8% right (5 of 500 reported
/// as several contributors, against 1); of 1, 102-107 runs / 91% / 91%; 0 (kept), 109-113 runs / 94.6% / 93%.
const STAIRCASE_LEAN_LOG_BAYES: f64 = 0.0;
/// Posterior mass one commit must hold before commits that look in between are probed.
const PROBE_FROM_MASS: f64 = 0.1;
/// Runs a commit needs before it can be judged in between, and runs each end needs.
const BETWEEN_MIN_RUNS: usize = 6;
const BETWEEN_MIN_END_RUNS: usize = 10;
/// Runs a suspected in-between commit may get before the suspicion is dropped.
const BETWEEN_MAX_RUNS: usize = 100;
/// A culprit whose share's lower bound exceeds this explains far more than the whole change: the runs are not
/// what the model assumes (bursts of load, a wrong parent), so it is re-examined and never simply blamed.
const SHARE_IMPLAUSIBLE: f64 = 1.5;
/// A lone culprit's share is read against the pooled levels while the ends' change agrees with theirs at this
/// two-sided level (2 standard errors for many runs; Student's t over the ends' runs, so that 4 runs a side, whose
/// standard error is itself a guess, need 2.45), and against the ends beyond.
const LONE_SHARE_MODEL_P: f64 = 0.0455;
/// Fresh pairs after which an implausible share makes the segment inconclusive.
const IMPLAUSIBLE_MAX_PAIRS: usize = 12;
/// Log Bayes factor of "two changes with a level between" against "one change" at which a segment is reported
/// as several contributors (a staircase): about 500 to 1. The check is repeated at every decision and the probing
/// runs go to commits that look in between, so a lower bar fires on single steps more often. Measured (300
/// staircase trials; single steps on two seeds of 500): ln 250 reported 93% of staircases as several and 0.6-1.2%
/// of single steps; this, 91% and 0.6-1.0%; ln 1000, 89% and 0.4-1.0%.
const STAIRCASE_LOG_BAYES: f64 = 6.2;
/// Pseudo degrees of freedom of the prior guess of the noise of a fresh pair's difference (sqrt 2 times the
/// within-commit noise of the segment, known from every run): the few fresh pairs' own spread is shrunk towards
/// it, so that two or three pairs that happen to agree (or not) do not make the test over- or under-confident.
const PAIR_PRIOR_DOF: f64 = 8.0;
/// The Student-t (nu = 4) location of Gaussian data has about 10% more variance than the mean: its standard
/// error is the plug-in one times this.
const T_LOCATION_INFLATION: f64 = 1.05;
/// Runs a culprit and its parent have before the culprit is blamed, whatever the evidence: the robot's table of
/// the two (compare, report) reads their stored runs, and its rank test cannot call a change with fewer (its
/// smallest two-sided p-value with n runs a side is 2 / C(2n, n): 0.1 at 3, 0.029 at 4, 0.008 at 5). A large step
/// is otherwise confirmed after three runs a side, and the email would show the blamed change as unchanged.
const TABLE_MIN_RUNS: usize = 5;
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
            touched: vec![false; count],
            records: 0,
            runs: 0,
            pending: Vec::new(),
            phase: Phase::Reproduce { segment: top, start_records: 0 },
            queue: Vec::new(),
            culprits: Vec::new(),
            part_explained: false,
            fresh_only: Vec::new(),
            load_noted: 0,
            offsets: Vec::new(),
            orientation,
            total: None,
            reproduced: None,
            log: Vec::new(),
            outcome: None,
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
        self.touched[commit] = true;
        let value = match sample {
            Sample::Value(v) if v.is_finite() => Some(v),
            _ => None,
        };
        match value {
            Some(v) => {
                self.values[commit].push((index, v));
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

    fn ask(&mut self, batch: Vec<(usize, usize)>) {
        self.pending = batch.into_iter().filter(|&(_, n)| n > 0).collect();
    }

    /// Oriented, drift-corrected values of a commit (empty when untestable).
    fn adjusted(&self, commit: usize, slope: f64) -> Vec<f64> {
        self.adjusted_since(commit, slope, 0)
    }

    /// The (record index, raw value) of `commit`'s runs recorded at or after record `since`: the fresh runs of a
    /// test that started then.
    fn runs_since(&self, commit: usize, since: usize) -> impl Iterator<Item = &(f64, f64)> {
        self.values[commit].iter().filter(move |(t, _)| *t >= since as f64)
    }

    /// As [`Bisect::adjusted`], only the runs recorded at or after record `since`.
    fn adjusted_since(&self, commit: usize, slope: f64, since: usize) -> Vec<f64> {
        if self.untestable.get(commit).copied().unwrap_or(true) {
            return Vec::new();
        }
        let centre = self.records as f64 / 2.0;
        self.runs_since(commit, since)
            .map(|&(t, v)| self.orientation * (v - slope * (t - centre) - self.offset(t)))
            .collect()
    }

    /// Says in the log when more runs than before are corrected for load, with the runs (1-based, in the order
    /// they finished) and the offset, so that `bisect log` shows why a visit's level moved.
    fn note_load_corrections(&mut self) {
        let corrected: Vec<usize> = (0..self.offsets.len()).filter(|&t| self.offsets[t] != 0.0).collect();
        if corrected.len() <= self.load_noted {
            return;
        }
        self.load_noted = corrected.len();
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        for &t in &corrected {
            match ranges.last_mut() {
                Some(last) if last.1 + 1 == t => last.1 = t,
                _ => ranges.push((t, t)),
            }
        }
        let text: Vec<String> = ranges
            .iter()
            .map(|&(a, b)| if a == b { format!("{}", a + 1) } else { format!("{}-{}", a + 1, b + 1) })
            .collect();
        // Every loaded run gets the one fitted offset (see [`Bisect::time_offsets`]).
        let offset = corrected.first().map_or(0.0, |&t| self.offsets[t]);
        self.note(
            "load",
            format!("{} run(s) corrected for load", corrected.len()),
            format!(
                "runs {} fall in loaded time: the commits measured then and at other times too read worse together (offset {offset:.4})",
                text.join(", ")
            ),
        );
    }

    fn offset(&self, record: f64) -> f64 {
        self.offsets.get(record as usize).copied().unwrap_or(0.0)
    }

    /// Load that comes and goes (a burst over several runs, a job that starts or stops) moves every run of its time
    /// alike, whatever the commit, and a visit that falls in it reads as a level (the t weights cannot see it: all
    /// its runs agree). The runs, in the order they finished, are fitted with [`load::fit`]: commit levels plus an
    /// offset while the machine is loaded, the loaded state a Markov chain over run order. When load stands out
    /// ([`load::LoadFit::stands_out`]), every record more likely loaded than not gets the fitted offset, zero
    /// otherwise. Load makes runs worse; for a metric whose worse direction is not known yet, both are fitted and
    /// the better fit is kept. Offsets are in the metric's raw units (before orientation).
    fn time_offsets(&self, slope: f64) -> Vec<f64> {
        let records = self.records;
        let centre = records as f64 / 2.0;
        let mut offsets = vec![0.0; records];
        let signs: &[f64] = if self.config.direction == Direction::Any { &[1.0, -1.0] } else { &[1.0] };
        let best = signs
            .iter()
            .map(|&sign| sign * self.orientation)
            .filter_map(|worse| {
                // Groups are numbered over the commits with runs only: the fit's work per group then scales with
                // the commits measured, not with the range.
                let measured = self.values.iter().enumerate().filter(|&(c, vs)| !self.untestable[c] && !vs.is_empty());
                let runs: Vec<load::Run> = measured
                    .enumerate()
                    .flat_map(|(group, (_, vs))| {
                        vs.iter().map(move |&(t, v)| load::Run {
                            record: t as usize,
                            group,
                            value: worse * (v - slope * (t - centre)),
                        })
                    })
                    .collect();
                let groups = runs.iter().map(|r| r.group + 1).max().unwrap_or(0);
                load::fit(&runs, records, groups).map(|fit| (worse, fit))
            })
            .filter(|(_, fit)| fit.stands_out())
            .max_by(|a, b| a.1.gain.total_cmp(&b.1.gain));
        if let Some((worse, fit)) = best {
            for (offset, &p) in offsets.iter_mut().zip(&fit.loaded) {
                if p > 0.5 {
                    *offset = worse * fit.load;
                }
            }
        }
        offsets
    }

    fn drift(&self) -> f64 {
        let all: Vec<(usize, f64, f64)> = self
            .values
            .iter()
            .enumerate()
            .filter(|(c, _)| !self.untestable[*c])
            .flat_map(|(c, vs)| vs.iter().map(move |&(t, v)| (c, t, v)))
            .collect();
        model::drift_slope(&all, self.values.len())
    }

    fn decide(&mut self) {
        self.pending.clear();
        // No run is recorded while deciding: the drift and the load offsets are read once, before the first pass,
        // so that every pass (and a budget's end, which reports shares) reads the runs the same way.
        let slope = self.drift();
        self.offsets = self.time_offsets(slope);
        self.note_load_corrections();
        for _ in 0..MAX_DECISION_PASSES {
            if self.outcome.is_some() {
                return;
            }
            if self.runs >= self.config.max_runs {
                self.report_unsettled_parts();
                let reason = format!("the budget of {} runs is spent", self.config.max_runs);
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

    /// Phase 1. Returns true when runs were asked for.
    fn reproduce(&mut self, segment: Segment, start_records: usize, slope: f64) -> bool {
        let (lo, hi) = (segment.lo, segment.hi);
        if self.untestable[lo] || self.untestable[hi] {
            let which = if self.untestable[lo] { lo } else { hi };
            if segment.top {
                self.reproduced = Some(false);
                let reason = format!("commit {which} (an end of the range) is untestable");
                self.note("reproduce", "stop".into(), reason.clone());
                self.finish(reason);
            } else {
                self.note("reproduce", format!("skip segment ({lo}, {hi}]"), format!("commit {which} is untestable"));
                self.next_segment();
            }
            return false;
        }
        // A residual that stood out did so in the runs already taken at its ends, some of them long ago: load that
        // changed since (a job on the machine that stopped) shows as a step between a commit measured now and an
        // end measured then. Its test reads fresh interleaved runs only. On real bisects of the e2e slowdown under
        // stress-ng that started or stopped mid-bisect, 2 of 75 searched such a residual to the end of the budget
        // (500-600 runs) and one blamed the bad end for a share of 0.
        let since = if !segment.top && self.fresh_only.contains(&(lo, hi)) { start_records } else { 0 };
        let a = self.adjusted_since(lo, slope, since);
        let b = self.adjusted_since(hi, slope, since);
        let (n_lo, n_hi) = (a.len(), b.len());
        if n_lo < INITIAL_RUNS_PER_SIDE || n_hi < INITIAL_RUNS_PER_SIDE {
            let want = INITIAL_RUNS_PER_SIDE;
            self.note(
                "reproduce",
                format!("run {lo} and {hi} interleaved"),
                format!("need {want} runs a side before testing ({n_lo} and {n_hi} so far)"),
            );
            self.ask(vec![(lo, want.saturating_sub(n_lo)), (hi, want.saturating_sub(n_hi))]);
            return true;
        }
        let Some(fit) = fit_t(&[&a, &b]) else {
            self.interleaved_pairs(lo, hi, 2);
            return true;
        };
        let diff = fit.locations[1] - fit.locations[0];
        let se = (fit.standard_error(0).powi(2) + fit.standard_error(1).powi(2)).sqrt();
        let sigma = fit.sigma();
        let two_sided = segment.top && self.config.direction == Direction::Any;
        let log_ratio = if two_sided {
            mixture_log_ratio(diff, se, sigma)
        } else {
            model::one_sided_mixture_log_ratio(diff, se, sigma)
        };
        // A segment below the top was chosen by the runs already taken (a residual that stood out, or the rest of a
        // change a culprit explains only part of), and its ends hold those runs: its test is the stricter one.
        let alpha =
            if segment.top { self.config.alpha_reproduce } else { RESIDUAL_ALPHA.min(self.config.alpha_reproduce) };
        let threshold = (1.0 / alpha).ln();
        let evidence = format!(
            "difference {diff:.4} ± {se:.4} ({:.2} sigma), log ratio {log_ratio:.2} of {threshold:.2}",
            diff / sigma
        );
        if log_ratio >= threshold && (diff > 0.0 || two_sided) {
            if two_sided && diff < 0.0 {
                self.orientation = -self.orientation;
            }
            if segment.top {
                self.reproduced = Some(true);
                self.total = Some((diff.abs(), se));
            }
            self.note("reproduce", format!("({lo}, {hi}] differs: locate the change"), evidence);
            self.phase = Phase::Locate { segment };
            return false;
        }
        let spent = self.runs_since(lo, start_records).count() + self.runs_since(hi, start_records).count();
        let upper = diff.abs() + 2.326 * se;
        let floor = match (segment.top, self.total) {
            (false, Some((total, _))) => (RESIDUAL_MIN_SHARE * total).max(0.0),
            _ => self.config.min_effect_sigma * sigma,
        };
        let enough = n_lo >= 8 && n_hi >= 8;
        // Below the top, the search is for contributors of at least CONTRIBUTOR_MIN_SHARE of the change: Wald's
        // sequential test of that change against none ends a segment without one long before the interval above
        // could rule out a smaller change (which took up to the whole reproduce budget).
        let smallest = self.total.filter(|_| !segment.top && se > 0.0).map(|(total, _)| CONTRIBUTOR_MIN_SHARE * total);
        let no_contributor =
            smallest.is_some_and(|d| (diff * d - 0.5 * d * d) / (se * se) <= -(1.0 / NO_CONTRIBUTOR_BETA).ln());
        if (enough && (upper < floor || no_contributor)) || spent >= self.config.max_reproduce_runs {
            let why = if upper < floor {
                format!("{evidence}; any change is below {floor:.4}")
            } else if enough && no_contributor {
                format!(
                    "{evidence}; no change of {:.4} ({:.0}% of the whole) or more",
                    smallest.unwrap_or(0.0),
                    CONTRIBUTOR_MIN_SHARE * 100.0
                )
            } else {
                format!("{evidence}; {spent} runs spent without a significant difference")
            };
            if segment.top {
                self.reproduced = Some(false);
                self.note("reproduce", "not reproduced".into(), why.clone());
                self.finish(format!("good and bad do not differ reproducibly: {why}"));
            } else {
                self.note("reproduce", format!("no further contributor in ({lo}, {hi}]"), why);
                self.next_segment();
            }
            return false;
        }
        self.note("reproduce", format!("two more interleaved pairs at {lo} and {hi}"), evidence);
        self.interleaved_pairs(lo, hi, 2);
        true
    }

    /// Per commit, the weighted moments of its runs (oriented, drift-corrected). A run far from its own commit's robust
    /// level is down-weighted (see [`model::outlier_weight`]), so a burst or an outlier cannot pass for a level; a
    /// commit with one run cannot be checked this way, and the partition evidence bounds what one run can do.
    fn commit_moments(&self, members: &[usize], slope: f64) -> Vec<model::Moments> {
        // `adjusted` is empty for an untestable commit, so its moments stay empty.
        let groups: Vec<Vec<f64>> = members.iter().map(|&c| self.adjusted(c, slope)).collect();
        let refs: Vec<&[f64]> = groups.iter().map(|g| g.as_slice()).collect();
        let robust = fit_t(&refs);
        // Values are centred on the first member's level so sums of squares keep their precision for any metric.
        let origin = groups.first().and_then(|g| g.first()).copied().unwrap_or(0.0);
        groups
            .iter()
            .enumerate()
            .map(|(i, group)| {
                let mut m = model::Moments::default();
                for &adjusted in group {
                    let weight = match &robust {
                        Some(fit) if group.len() >= 2 => model::outlier_weight(adjusted - fit.locations[i], fit.scale),
                        _ => 1.0,
                    };
                    m.add(weight, adjusted - origin);
                }
                m
            })
            .collect()
    }

    /// The posterior over change locations in (lo, hi].
    pub(crate) fn posterior(&self, lo: usize, hi: usize, slope: f64) -> Option<Posterior> {
        let hypotheses = self.topology.segment(lo, hi);
        if hypotheses.is_empty() {
            return None;
        }
        // Tested commits of the segment. lo is always before the change, hi always after.
        let tested: Vec<usize> =
            hypotheses.iter().copied().filter(|&c| !self.untestable[c] && !self.values[c].is_empty()).collect();
        let mut members: Vec<usize> = vec![lo];
        members.extend(tested.iter().copied());
        let moments = self.commit_moments(&members, slope);
        let lo_moments = moments.first().copied().unwrap_or_default();
        let tested_moments = moments.get(1..).unwrap_or(&[]);
        // Group hypotheses by which tested commits contain them: one fit per distinct partition.
        let mut signature_of: Vec<usize> = Vec::with_capacity(hypotheses.len());
        let mut fits: Vec<Option<model::LevelsFit>> = Vec::new();
        if self.topology.is_linear() {
            // Tested commits are in index order; hypothesis k is contained by exactly the tested c >= k, so the
            // partition "the first `before` tested commits are good" has prefix sums for its groups.
            for &k in &hypotheses {
                signature_of.push(tested.partition_point(|&c| c < k));
            }
            let all = tested_moments.iter().fold(lo_moments, |acc, m| acc.plus(m));
            let mut good = lo_moments;
            for before in 0..=tested.len() {
                if before > 0 {
                    good = good.plus(&tested_moments[before - 1]);
                }
                fits.push(model::fit_levels(&good, &all.minus(&good)));
            }
        } else {
            let mut index: std::collections::HashMap<Vec<bool>, usize> = std::collections::HashMap::new();
            for &k in &hypotheses {
                let signature: Vec<bool> = tested.iter().map(|&c| self.topology.contains(k, c)).collect();
                let next = index.len();
                let id = *index.entry(signature.clone()).or_insert_with(|| {
                    let (mut good, mut bad) = (lo_moments, model::Moments::default());
                    for (m, &contains) in tested_moments.iter().zip(&signature) {
                        if contains {
                            bad = bad.plus(m);
                        } else {
                            good = good.plus(m);
                        }
                    }
                    fits.push(model::fit_levels(&good, &bad));
                    next
                });
                signature_of.push(id);
            }
        }
        let logliks: Vec<f64> = fits.iter().map(|f| f.map(|f| f.log_evidence).unwrap_or(f64::NEG_INFINITY)).collect();
        let max = logliks.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut probability: Vec<f64> = if max.is_finite() {
            signature_of.iter().map(|&s| (logliks[s] - max).exp()).collect()
        } else {
            vec![1.0; hypotheses.len()]
        };
        let sum: f64 = probability.iter().sum();
        if !(sum > 0.0) || !sum.is_finite() {
            probability = vec![1.0; hypotheses.len()];
        }
        let sum: f64 = probability.iter().sum();
        for p in probability.iter_mut() {
            *p /= sum;
        }
        // The fit of the most probable partition gives the step and noise used to value the next measurement.
        let mut partition_mass = vec![0.0; fits.len()];
        for (&s, &p) in signature_of.iter().zip(&probability) {
            partition_mass[s] += p;
        }
        let best_partition =
            (0..fits.len()).filter(|&s| fits[s].is_some()).fold(None, |best: Option<usize>, s| match best {
                Some(b) if partition_mass[b] >= partition_mass[s] => Some(b),
                _ => Some(s),
            });
        let (delta, sigma, delta_se) = match best_partition.and_then(|s| fits[s]) {
            Some(fit) => (fit.after - fit.before, fit.sigma, fit.step_se),
            None => (0.0, 1.0, f64::INFINITY),
        };
        let class = self.classes(hi, &hypotheses);
        Some(Posterior { hypotheses, probability, class, delta, sigma, delta_se, partition: signature_of, fits })
    }

    /// For each hypothesis, the representative of the hypotheses no testable commit can tell apart from it: itself
    /// when testable, otherwise the testable commit it is bound to (in a linear history, the next testable one).
    fn classes(&self, hi: usize, hypotheses: &[usize]) -> Vec<usize> {
        if self.topology.is_linear() {
            let mut class = vec![hi; hypotheses.len()];
            let mut next_testable = hi;
            for (i, &k) in hypotheses.iter().enumerate().rev() {
                if !self.untestable[k] {
                    next_testable = k;
                }
                class[i] = next_testable;
            }
            return class;
        }
        // In a DAG, two hypotheses are indistinguishable when the same testable commits of the segment contain them.
        let testable: Vec<usize> = hypotheses.iter().copied().filter(|&c| !self.untestable[c]).collect();
        let mut by_signature: BTreeMap<Vec<bool>, usize> = BTreeMap::new();
        let signatures: Vec<Vec<bool>> =
            hypotheses.iter().map(|&k| testable.iter().map(|&c| self.topology.contains(k, c)).collect()).collect();
        for (&k, signature) in hypotheses.iter().zip(&signatures) {
            let entry = by_signature.entry(signature.clone()).or_insert(k);
            // The testable member, if any, represents the class.
            if !self.untestable[k] && self.untestable[*entry] {
                *entry = k;
            }
        }
        signatures.iter().map(|s| by_signature.get(s).copied().unwrap_or(hi)).collect()
    }

    /// P(the change is contained in commit c), for every commit of the segment and lo.
    fn containment(&self, posterior: &Posterior, candidates: &[usize]) -> Vec<f64> {
        if self.topology.is_linear() {
            // Candidates and hypotheses are sorted; accumulate.
            let mut out = Vec::with_capacity(candidates.len());
            let mut acc = 0.0;
            let mut h = 0;
            for &c in candidates {
                while h < posterior.hypotheses.len() && posterior.hypotheses[h] <= c {
                    acc += posterior.probability[h];
                    h += 1;
                }
                out.push(acc.min(1.0));
            }
            return out;
        }
        candidates
            .iter()
            .map(|&c| {
                posterior
                    .hypotheses
                    .iter()
                    .zip(&posterior.probability)
                    .filter(|(&k, _)| self.topology.contains(k, c))
                    .map(|(_, p)| p)
                    .sum::<f64>()
                    .min(1.0)
            })
            .collect()
    }

    /// The tested commit just before the class of `commit`: walk first parents past untestable class members.
    fn reference_parent(&self, segment: Segment, commit: usize, posterior: &Posterior) -> usize {
        let class_of: BTreeMap<usize, usize> =
            posterior.hypotheses.iter().copied().zip(posterior.class.iter().copied()).collect();
        let mut current = commit;
        while let Some(parent) = self.topology.first_parent(current) {
            if !self.topology.in_segment(parent, segment.lo, segment.hi) {
                return segment.lo;
            }
            let same_class = class_of.get(&parent) == Some(&commit);
            if !same_class && !self.untestable[parent] {
                return parent;
            }
            current = parent;
        }
        segment.lo
    }

    /// The run-to-run noise (Gaussian-equivalent sigma) within commits, pooled over every commit of the segment
    /// and its lo: it does not depend on any partition, so a staircase does not inflate it.
    fn within_noise(&self, segment: Segment, slope: f64) -> f64 {
        let mut groups = vec![self.adjusted(segment.lo, slope)];
        groups.extend(self.topology.segment(segment.lo, segment.hi).into_iter().map(|c| self.adjusted(c, slope)));
        let refs: Vec<&[f64]> = groups.iter().filter(|g| !g.is_empty()).map(|g| g.as_slice()).collect();
        fit_t(&refs).map(|f| f.sigma()).unwrap_or(0.0)
    }

    /// The tested interior commit of the segment that sits most clearly between the levels of its two ends, with
    /// its score: the smaller of its two z-scores (against lo and against hi, robust t fits of the three commits).
    /// The noise is the larger of the three commits' own estimate and `noise` (within commits, from every run), so
    /// that a few runs which happen to agree closely cannot make a commit look in between.
    fn between_commit(&self, segment: Segment, slope: f64, noise: f64) -> Option<(usize, f64)> {
        let lo_values = self.adjusted(segment.lo, slope);
        let hi_values = self.adjusted(segment.hi, slope);
        let mut best: Option<(usize, f64)> = None;
        for c in self.topology.segment(segment.lo, segment.hi) {
            if c == segment.hi || self.untestable[c] || self.values[c].len() < INITIAL_RUNS_PER_SIDE {
                continue;
            }
            let values = self.adjusted(c, slope);
            let Some(fit) = fit_t(&[&lo_values, &values, &hi_values]) else {
                continue;
            };
            let inflate = if fit.sigma() > 0.0 { (noise / fit.sigma()).max(1.0) } else { 1.0 };
            let [se_lo, se_c, se_hi] = [0, 1, 2].map(|g| fit.standard_error(g) * inflate);
            let z_lo = (fit.locations[1] - fit.locations[0]) / (se_c * se_c + se_lo * se_lo).sqrt();
            let z_hi = (fit.locations[2] - fit.locations[1]) / (se_c * se_c + se_hi * se_hi).sqrt();
            let score = z_lo.min(z_hi);
            if score.is_finite() && best.is_none_or(|(_, s)| score > s) {
                best = Some((c, score));
            }
        }
        best
    }

    /// A tested commit measurably between the two levels of the segment means the change is shared by several
    /// commits. At 4 standard errors from both ends it ends the segment as two ranges with their shares (reporting
    /// them is honest and cheap; narrowing each small step would cost far more runs than the budget holds, and
    /// confirming one of them alone would hide the others). Below that, while a commit looks in between and the
    /// staircase model comparison leans to two changes (log Bayes factor >= [`STAIRCASE_LEAN_LOG_BAYES`], middle
    /// level at least [`CONTRIBUTOR_MIN_SHARE`] from either end), the middle range gets runs, and the nearer end
    /// with it while the end has fewer: those runs are what lets the comparison decide. Returns true when it acted
    /// (asked for runs, or settled the segment).
    fn probe_between(&mut self, segment: Segment, slope: f64) -> bool {
        let Some((c, score)) = self.between_commit(segment, slope, self.within_noise(segment, slope)) else {
            return false;
        };
        let settled = self.values[c].len() >= BETWEEN_MIN_RUNS
            && self.values[segment.lo].len() >= BETWEEN_MIN_END_RUNS
            && self.values[segment.hi].len() >= BETWEEN_MIN_END_RUNS;
        if score >= BETWEEN_Z && settled {
            self.note(
                "locate",
                format!("several contributors: commit {c} sits between {} and {}", segment.lo, segment.hi),
                format!("its level differs from both ends by at least {score:.2} standard errors"),
            );
            self.push_range(Segment { lo: segment.lo, hi: c, top: false });
            self.push_range(Segment { lo: c, hi: segment.hi, top: false });
            self.next_segment();
            return true;
        }
        // The lean is judged for contributors worth the search: a middle level within CONTRIBUTOR_MIN_SHARE of an
        // end is no staircase to look for (one end that measures a little off kept single steps probing for
        // hundreds of runs).
        let stair =
            if score >= BETWEEN_LEANING_Z { self.staircase(segment, slope, CONTRIBUTOR_MIN_SHARE) } else { None };
        let Some((_, stair)) = stair.filter(|(bayes, _)| *bayes >= STAIRCASE_LEAN_LOG_BAYES) else {
            return false;
        };
        // A real middle level shows on every commit of the middle range, one commit's bad luck only on that commit:
        // the runs go to the middle commit with the fewest, so the comparison pools many commits.
        let middle: Vec<usize> = (stair.first_middle..=stair.last_middle)
            .filter(|&m| !self.untestable[m] && !self.values[m].is_empty())
            .collect();
        let probed = middle.iter().copied().min_by_key(|&m| self.values[m].len()).unwrap_or(c);
        if self.values[probed].len() >= BETWEEN_MAX_RUNS {
            return false;
        }
        // The comparison that decides is the one with the nearer end (the smaller difference). That end gets runs
        // while it has fewer than the middle range (a difference of two means is measured best with equal runs a
        // side); after that, more runs there would only pin its level down further.
        let near = self.nearer_end(segment, probed, slope);
        let middle_runs: usize = middle.iter().map(|&m| self.values[m].len()).sum();
        self.note(
            "locate",
            format!("interleaved runs at {probed} and {near}"),
            format!(
                "commits {}..={} may sit between the levels (commit {c} is {score:.2} standard errors from each end)",
                stair.first_middle, stair.last_middle
            ),
        );
        if self.values[near].len() < middle_runs.max(self.values[probed].len()) {
            self.ask(vec![(probed, 2), (near, 2)]);
        } else {
            self.ask(vec![(probed, 2)]);
        }
        true
    }

    /// The end of the segment whose level is closer to commit `c`'s (robust t fits of the three).
    fn nearer_end(&self, segment: Segment, c: usize, slope: f64) -> usize {
        let (lo, mid, hi) =
            (self.adjusted(segment.lo, slope), self.adjusted(c, slope), self.adjusted(segment.hi, slope));
        match fit_t(&[&lo, &mid, &hi]) {
            Some(fit) if (fit.locations[1] - fit.locations[0]).abs() > (fit.locations[2] - fit.locations[1]).abs() => {
                segment.hi
            }
            _ => segment.lo,
        }
    }

    /// Model comparison of "one change in the segment" against "two changes, with the runs between them at a
    /// level of their own between the two ends'" (a staircase), over every partition of the tested commits, from
    /// every run (weighted as in the posterior). Both models spread their change positions uniformly over the
    /// segment's commits; the middle level of the second gets a uniform prior between the outer two, which is what
    /// makes the comparison proper (the extra level pays for itself only when the data need it). With `margin` > 0
    /// that prior leaves out the share `margin` of the change next to each end: the question becomes "two changes
    /// of at least that share each". Returns the log Bayes factor (two changes against one) and the most probable
    /// staircase. Linear histories only.
    fn staircase(&self, segment: Segment, slope: f64, margin: f64) -> Option<(f64, Staircase)> {
        if !self.topology.is_linear() {
            return None;
        }
        let hypotheses = self.topology.segment(segment.lo, segment.hi);
        let mut members = vec![segment.lo];
        members.extend(hypotheses.iter().copied().filter(|&c| !self.untestable[c] && !self.values[c].is_empty()));
        let moments = self.commit_moments(&members, slope);
        let count = members.len();
        if count < 3 || members.last() != Some(&segment.hi) {
            return None;
        }
        let mut prefix = vec![model::Moments::default()];
        for m in &moments {
            let last = prefix.last().copied().unwrap_or_default();
            prefix.push(last.plus(m));
        }
        let range = |a: usize, b: usize| prefix[b].minus(&prefix[a]);
        let commits = hypotheses.len() as f64;
        let pairs = (commits * (commits - 1.0) / 2.0).max(1.0);
        // Split s: members[..s] before the change, members[s..] after; the change lies in (members[s-1], members[s]].
        let gap = |s: usize| (members[s] - members[s - 1]) as f64;
        let mut one = Vec::new();
        let mut two = Vec::new();
        let mut best: Option<(f64, Staircase)> = None;
        for s in 1..count {
            let Some((ev, _)) = model::levels_log_evidence(&[range(0, s), range(s, count)]) else {
                continue;
            };
            one.push(ev + (gap(s) / commits).ln());
            if gap(s) >= 2.0 {
                two.push(ev + (gap(s) * (gap(s) - 1.0) / 2.0 / pairs).ln());
            }
        }
        for s1 in 1..count {
            for s2 in s1 + 1..count {
                let groups = [range(0, s1), range(s1, s2), range(s2, count)];
                let Some((ev, sigma)) = model::levels_log_evidence(&groups) else {
                    continue;
                };
                let [low, middle, high] = groups.map(|g| g.y / g.w);
                if !(high > low) {
                    continue;
                }
                let se_middle = sigma / groups[1].w.sqrt();
                let (lo_b, hi_b) = (low + margin * (high - low), high - margin * (high - low));
                let inside = crate::stats::normal_cdf((hi_b - middle) / se_middle)
                    - crate::stats::normal_cdf((lo_b - middle) / se_middle);
                if !(inside > 0.0) {
                    continue;
                }
                let log = ev + inside.ln() - (hi_b - lo_b).ln() + (gap(s1) * gap(s2) / pairs).ln();
                two.push(log);
                if best.as_ref().is_none_or(|(b, _)| log > *b) {
                    let se = |g: &model::Moments| sigma / g.w.sqrt();
                    best = Some((
                        log,
                        Staircase {
                            before_middle: members[s1 - 1],
                            first_middle: members[s1],
                            last_middle: members[s2 - 1],
                            after_middle: members[s2],
                            low: (low, se(&groups[0])),
                            middle: (middle, se_middle),
                            high: (high, se(&groups[2])),
                        },
                    ));
                }
            }
        }
        let log_sum = |v: &[f64]| {
            let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if max.is_finite() {
                max + v.iter().map(|x| (x - max).exp()).sum::<f64>().ln()
            } else {
                f64::NEG_INFINITY
            }
        };
        let bayes = log_sum(&two) - log_sum(&one);
        best.filter(|_| bayes.is_finite()).map(|(_, staircase)| (bayes, staircase))
    }

    /// Ends the segment as several contributors when the staircase model is decisively better than one change
    /// (see [`Bisect::staircase`]). Returns true when it did.
    fn settle_staircase(&mut self, segment: Segment, slope: f64, phase: &str) -> bool {
        let Some((bayes, stair)) = self.staircase(segment, slope, 0.0) else {
            return false;
        };
        // As for one commit in between: the ends and the middle need runs enough that their levels are not the
        // luck of a few runs (the check is repeated at every decision).
        let middle_runs: usize = (stair.first_middle..=stair.last_middle)
            .filter(|&c| !self.untestable[c])
            .map(|c| self.values[c].len())
            .sum();
        let settled = middle_runs >= BETWEEN_MIN_RUNS
            && self.values[segment.lo].len() >= BETWEEN_MIN_END_RUNS
            && self.values[segment.hi].len() >= BETWEEN_MIN_END_RUNS;
        if bayes < STAIRCASE_LOG_BAYES || !settled {
            return false;
        }
        self.note(
            phase,
            format!(
                "several contributors: commits {}..={} sit between {} and {}",
                stair.first_middle, stair.last_middle, segment.lo, segment.hi
            ),
            format!(
                "two changes against one: log Bayes factor {bayes:.2}; levels {:.4}, {:.4}, {:.4}",
                stair.low.0, stair.middle.0, stair.high.0
            ),
        );
        self.push_staircase(&stair);
        self.next_segment();
        true
    }

    /// Phase 2. Returns true when runs were asked for.
    fn locate(&mut self, segment: Segment, slope: f64) -> bool {
        let Some(posterior) = self.posterior(segment.lo, segment.hi, slope) else {
            self.note("locate", "skip".into(), "empty segment".into());
            self.next_segment();
            return false;
        };
        if self.settle_staircase(segment, slope, "locate") {
            return false;
        }
        let Some((best, mass)) = posterior.best_class() else {
            self.next_segment();
            return false;
        };
        // Commits that look in between are probed once one commit holds a tenth of the posterior: before that, they
        // are mostly visits of two or three runs on the way down, and probing them is what single steps paid for.
        if mass >= PROBE_FROM_MASS && self.probe_between(segment, slope) {
            return !self.pending.is_empty();
        }
        let parent_of_best = self.reference_parent(segment, best, &posterior);
        // When the best commit and its parent have both had all the runs locating gives one commit and the mass
        // still falls short (one of them measures between the levels), fresh paired runs decide instead.
        let saturated = self.values[best].len() >= LOCATE_RUNS_CAP
            && (parent_of_best == segment.lo || self.values[parent_of_best].len() >= LOCATE_RUNS_CAP)
            && mass >= SATURATED_CONFIDENCE;
        if (mass >= self.config.confidence || saturated) && !self.untestable[best] {
            let parent = parent_of_best;
            self.note(
                "locate",
                format!("verify commit {best} against {parent}"),
                format!(
                    "posterior {mass:.4} on commit {best} (step {:.4}, noise {:.4})",
                    posterior.delta, posterior.sigma
                ),
            );
            self.phase = Phase::Verify { segment, commit: best, parent, start_records: self.records };
            return false;
        }
        // The levels are only as good as the runs at the two ends: when an interior commit has far more runs than an
        // end, its runs would set a level on their own (and a commit sitting between the levels then looks like
        // either), so the ends are topped up first, interleaved. The ends also keep a share of all the segment's
        // runs: when the change sits next to an end, that end is the only measured commit on its side, and a few
        // unlucky runs there would otherwise set that side's level for good (the search then wanders elsewhere
        // until the budget is spent).
        let interior: Vec<usize> = posterior
            .hypotheses
            .iter()
            .filter(|&&c| c != segment.hi)
            .map(|&c| if self.untestable[c] { 0 } else { self.values[c].len() })
            .collect();
        let busiest = interior.iter().copied().max().unwrap_or(0);
        let floor = (busiest / 2).max(INITIAL_RUNS_PER_SIDE).max(interior.iter().sum::<usize>() / END_SHARE_DIVISOR);
        let (n_lo, n_hi) = (self.values[segment.lo].len(), self.values[segment.hi].len());
        if n_lo < floor || n_hi < floor {
            self.note(
                "locate",
                format!("one more interleaved pair at {} and {}", segment.lo, segment.hi),
                format!("the ends have {n_lo} and {n_hi} runs, an interior commit {busiest}: refine the levels"),
            );
            self.interleaved_pairs(segment.lo, segment.hi, 1);
            return true;
        }
        // Candidates: lo and every testable commit of the segment.
        let mut candidates = vec![segment.lo];
        candidates.extend(posterior.hypotheses.iter().copied().filter(|&c| !self.untestable[c]));
        if self.topology.is_linear() {
            candidates.sort_unstable();
        }
        let q = self.containment(&posterior, &candidates);
        let best_choice = self.information_choice(segment, &posterior, &candidates, &q);
        match best_choice {
            Some((score, c, m, qc)) => {
                let new = if self.values[c].is_empty() { "new " } else { "" };
                self.note(
                    "locate",
                    format!("run {new}commit {c} {m} time(s)"),
                    format!(
                        "best class {best} holds {mass:.4}; P(change by {c}) = {qc:.3}; {score:.4} bits per unit cost (step {:.2} sigma)",
                        posterior.delta / posterior.sigma
                    ),
                );
                self.ask(vec![(c, m)]);
                true
            }
            None => {
                self.note("locate", "give up".into(), "no testable commit left to measure".into());
                self.segment_unresolved(segment, "no testable commit left to measure");
                false
            }
        }
    }

    /// The next measurement: the commit and number of runs with the most expected information about where the
    /// change lies per unit of cost (a new build costs `build_cost`, each run `run_cost`). Each partition of the
    /// posterior predicts the measured commit at its own fitted level (before or after its change, with that
    /// level's standard error), so runs that tell partitions apart by their levels count too: an end, when the
    /// partitions disagree about the level on its side, is worth measuring again, which a single plug-in step (the
    /// rule this replaced) could not see; a search misled by a few unlucky visits used to wander for hundreds of
    /// runs. Candidates are lo, every tested commit below [`LOCATE_RUNS_CAP`] runs and the two ends whatever their
    /// runs, and of the untested commits the one that splits each partition's mass most evenly (in a DAG, the one
    /// whose containment is nearest one half). Returns (bits per unit cost, commit, runs, containment), `None`
    /// when no candidate is worth anything.
    fn information_choice(
        &self,
        segment: Segment,
        posterior: &Posterior,
        candidates: &[usize],
        containment: &[f64],
    ) -> Option<(f64, usize, usize, f64)> {
        let linear = self.topology.is_linear();
        let partitions = posterior.fits.len();
        let mut partition_mass = vec![0.0; partitions];
        for (&s, &p) in posterior.partition.iter().zip(&posterior.probability) {
            partition_mass[s] += p;
        }
        let mut measured: Vec<(usize, f64)> = Vec::new();
        // Untested: per partition (linear), (distance of the cumulative mass from half, commit, containment).
        let mut even_split: Vec<Option<(f64, usize, f64)>> = vec![None; partitions];
        let mut cumulative = vec![0.0; partitions];
        let mut nearest_half: Option<(f64, usize, f64)> = None;
        for (&c, &qc) in candidates.iter().zip(containment) {
            let is_end = c == segment.lo || c == segment.hi;
            if !self.values[c].is_empty() || c == segment.lo {
                // A commit still uncertain after this many runs sits between the levels or the levels are off:
                // more of the same teaches little. The ends carry the levels and are exempt.
                if is_end || self.values[c].len() < LOCATE_RUNS_CAP {
                    measured.push((c, qc));
                }
                continue;
            }
            // In a linear history the hypotheses are in commit order.
            match (linear, posterior.hypotheses.binary_search(&c)) {
                (true, Ok(i)) => {
                    let s = posterior.partition[i];
                    cumulative[s] += posterior.probability[i];
                    let distance = (cumulative[s] - partition_mass[s] / 2.0).abs();
                    if even_split[s].is_none_or(|(d, _, _)| distance < d) {
                        even_split[s] = Some((distance, c, qc));
                    }
                }
                _ => {
                    let distance = (qc - 0.5).abs();
                    if nearest_half.is_none_or(|(d, _, _)| distance < d) {
                        nearest_half = Some((distance, c, qc));
                    }
                }
            }
        }
        measured.extend(even_split.iter().flatten().chain(nearest_half.iter()).map(|&(_, c, qc)| (c, qc)));
        let mut best: Option<(f64, usize, usize, f64)> = None;
        for (c, qc) in measured {
            // The posterior mass of each (partition, side of the change commit c is on).
            let mut mass: BTreeMap<(usize, bool), f64> = BTreeMap::new();
            for ((&k, &s), &p) in posterior.hypotheses.iter().zip(&posterior.partition).zip(&posterior.probability) {
                let contains = c != segment.lo && if linear { k <= c } else { self.topology.contains(k, c) };
                *mass.entry((s, contains)).or_insert(0.0) += p;
            }
            // (weight, level, run variance, level variance). Components below 1e-4 of the mass change the
            // information by less than that and cost time.
            let levels: Vec<(f64, f64, f64, f64)> = mass
                .iter()
                .filter(|(_, &w)| w >= 1e-4)
                .filter_map(|(&(s, contains), &w)| {
                    let fit = posterior.fits.get(s).copied().flatten()?;
                    let (level, se) = if contains { (fit.after, fit.after_se) } else { (fit.before, fit.before_se) };
                    Some((w, level, fit.sigma * fit.sigma, se * se))
                })
                .collect();
            let build = if self.values[c].is_empty() && c != segment.lo { self.config.build_cost } else { 0.0 };
            for &m in &VISIT_SIZES {
                let components: Vec<(f64, f64, f64)> =
                    levels.iter().map(|&(w, level, run, level_var)| (w, level, run / m as f64 + level_var)).collect();
                let score = model::mixture_information(&components) / (build + m as f64 * self.config.run_cost);
                if score > 0.0 && best.is_none_or(|(b, ..)| score > b) {
                    best = Some((score, c, m, qc));
                }
            }
        }
        best
    }

    fn segment_unresolved(&mut self, segment: Segment, why: &str) {
        if segment.top {
            self.finish(format!("the change could not be located: {why}"));
        } else {
            self.push_range(segment);
            self.next_segment();
        }
    }

    /// Records the two ranges of a staircase (before and after its middle level) as unlocated contributors, with
    /// their shares of the good-to-bad change from the three fitted levels.
    fn push_staircase(&mut self, stair: &Staircase) {
        let slope = self.drift();
        let (total, total_se) = self.top_change(slope).unwrap_or((stair.high.0 - stair.low.0, stair.high.1));
        for ((after, commit), (a, b)) in [
            ((stair.before_middle, stair.first_middle), (stair.low, stair.middle)),
            ((stair.last_middle, stair.after_middle), (stair.middle, stair.high)),
        ] {
            let step = b.0 - a.0;
            let se = (a.1 * a.1 + b.1 * b.1).sqrt();
            let (share, share_low, share_high) = model::ratio_interval(step, se, total, total_se, SHARE_Z);
            self.culprits.push(Culprit {
                commit,
                after,
                located: false,
                untestable_suspects: Vec::new(),
                share,
                share_low,
                share_high,
                confidence: 0.0,
                step,
            });
        }
    }

    /// When the budget ends the search, the parts of the change still being searched (the current segment and the
    /// queued ones, after a culprit that explains only part) are reported as unlocated ranges when the runs at their
    /// ends show a change ([`UNSETTLED_MIN_Z`] standard errors or more in the regression's direction): the maintainer
    /// learns where the rest of the change lies even though it was not narrowed.
    fn report_unsettled_parts(&mut self) {
        let current = match self.phase {
            Phase::Reproduce { segment, .. } | Phase::Locate { segment } | Phase::Verify { segment, .. } => {
                Some(segment)
            }
            Phase::Finished => None,
        };
        let slope = self.drift();
        let unsettled: Vec<Segment> = current.into_iter().chain(self.queue.drain(..)).filter(|s| !s.top).collect();
        for segment in unsettled {
            let shows_change = self
                .segment_change(segment, slope)
                .is_some_and(|(change, se)| se > 0.0 && change / se >= UNSETTLED_MIN_Z);
            if shows_change {
                self.note(
                    "done",
                    format!("part of the change lies in ({}, {}]", segment.lo, segment.hi),
                    "not narrowed within the budget".into(),
                );
                self.push_range(segment);
            }
        }
    }

    /// Records a residual segment that holds part of the change but was not narrowed down.
    fn push_range(&mut self, segment: Segment) {
        let slope = self.drift();
        if let (Some((diff, se)), Some((total, total_se))) = (self.segment_change(segment, slope), self.total) {
            let (share, low, high) = model::ratio_interval(diff, se, total, total_se, SHARE_Z);
            self.culprits.push(Culprit {
                commit: segment.hi,
                after: segment.lo,
                located: false,
                untestable_suspects: Vec::new(),
                share,
                share_low: low,
                share_high: high,
                confidence: 0.0,
                step: diff,
            });
        }
    }

    /// Phase 3. Returns true when runs were asked for.
    fn verify(&mut self, segment: Segment, commit: usize, parent: usize, start: usize, slope: f64) -> bool {
        let fresh = |c: usize| self.runs_since(c, start).count();
        let pairs = fresh(commit).min(fresh(parent));
        if self.untestable[commit] || self.untestable[parent] {
            self.note("verify", "back to locate".into(), format!("commit {commit} or {parent} became untestable"));
            self.phase = Phase::Locate { segment };
            return false;
        }
        if pairs < self.config.min_fresh_pairs {
            let want = self.config.min_fresh_pairs - pairs;
            self.note(
                "verify",
                format!("{want} fresh interleaved pair(s) at {parent} and {commit}"),
                "a culprit is only blamed after fresh runs against its parent".into(),
            );
            self.interleaved_pairs(parent, commit, want);
            return true;
        }
        if self.settle_staircase(segment, slope, "verify") {
            return false;
        }
        let Some(posterior) = self.posterior(segment.lo, segment.hi, slope) else {
            self.next_segment();
            return false;
        };
        let (best, mass) = posterior.best_class().unwrap_or((commit, 0.0));
        if best != commit {
            self.note(
                "verify",
                "back to locate".into(),
                format!("fresh runs moved the posterior to commit {best} ({mass:.4})"),
            );
            self.phase = Phase::Locate { segment };
            return false;
        }
        // The segment's change is measured by the two pooled levels of the most probable partition: every run
        // before and after the step, not only the two ends, so the share is known well enough to decide early.
        let (seg_change, se_seg) = (posterior.delta, posterior.delta_se);
        let threshold = (1.0 / self.config.alpha_culprit).ln();
        let noise = self.within_noise(segment, slope);
        // The step is measured on the fresh interleaved pairs analysed as pairs, each difference taken between two
        // runs adjacent in time, so load that comes and goes (a burst covering several runs) shifts both sides
        // alike and cancels. Runs from locating are not used: a visit that fell in a burst moves a commit's level by
        // several sigma, and that is exactly what got wrong commits blamed after two fresh pairs in a quarter of
        // bursty jobs. (Reusing them when the residuals show no correlation in time was tried: the check misses
        // bursts that fall on one visit, and false culprits came back at 8.5%.) The test is a sequential
        // probability ratio test of "no step" against the step the segment's levels predict (or half of it, in
        // case load inflated them): the alternative comes from the pooled levels, almost all of whose runs precede the
        // pairs, the statistic from the fresh pairs only.
        let Some((step, se_step, sigma_pair)) = self.paired_step(parent, commit, start, slope, noise) else {
            self.interleaved_pairs(parent, commit, 2);
            return true;
        };
        let expected = seg_change.max(0.5 * sigma_pair);
        let (log_ratio, best_log_ratio) = model::step_log_ratio(step, se_step, expected);
        if best_log_ratio <= -threshold && pairs >= 2 * self.config.min_fresh_pairs {
            self.note(
                "verify",
                "back to locate".into(),
                format!("the fresh pairs show no step of the size the levels predict at commit {commit}: step {step:.4} ± {se_step:.4}, log ratio {best_log_ratio:.2}"),
            );
            self.phase = Phase::Locate { segment };
            return false;
        }
        // Blame needs both: the posterior from every run puts at least 1 - alpha_culprit on this commit, and the
        // fresh pairs on their own show the step (their test at alpha_fresh). The posterior is the evidence of the
        // whole search; the fresh pairs are the check that does not depend on the runs that chose the commit.
        let fresh_threshold = (1.0 / self.config.alpha_fresh).ln();
        let significant = step > 0.0 && log_ratio >= fresh_threshold && mass >= 1.0 - self.config.alpha_culprit;
        // How much of the change the step explains is a question of magnitude, not of blame: every run at the two
        // commits answers it (fresh and from locating), so it is known long before the fresh pairs alone would know it.
        let (size, se_size) =
            self.segment_change(Segment { lo: parent, hi: commit, top: false }, slope).unwrap_or((step, se_step));
        // The decision about other contributors uses this segment's change; the reported share uses good-to-bad.
        let (f, f_low, f_high) = model::ratio_interval(size, se_size, seg_change, se_seg, SHARE_Z);
        let (total, total_se) = self.top_change(slope).unwrap_or((seg_change, se_seg));
        let (share, share_low, share_high) = model::ratio_interval(step, se_step, total, total_se, SHARE_Z);
        let evidence = format!(
            "paired step {step:.4} ± {se_step:.4}, log ratio {log_ratio:.2} (against {expected:.4}); explains {f:.2} [{f_low:.2}, {f_high:.2}] of its segment, posterior {mass:.4}"
        );
        if significant && share_low > SHARE_IMPLAUSIBLE {
            // More than the whole change at one commit: bursts of load or a wrong comparison, not a culprit.
            if pairs >= IMPLAUSIBLE_MAX_PAIRS {
                self.note("verify", format!("commit {commit} not blamed: implausible share"), evidence.clone());
                self.segment_unresolved(
                    segment,
                    &format!(
                        "commit {commit} would explain {:.0}% (at least {:.0}%) of the change: {evidence}",
                        share * 100.0,
                        share_low * 100.0
                    ),
                );
                return false;
            }
            self.note(
                "verify",
                format!("re-examine {parent} and {commit} with the ends {} and {}", segment.lo, segment.hi),
                format!(
                    "share {:.0}% [{:.0}%, {:.0}%] is above the whole change: {evidence}",
                    share * 100.0,
                    share_low * 100.0,
                    share_high * 100.0
                ),
            );
            self.ask(vec![(parent, 2), (commit, 2), (segment.lo, 1), (segment.hi, 1)]);
            return true;
        }
        // The pooled levels understate the change of a segment with several steps (each side mixes the levels of
        // its steps), so one of two equal steps can look like most of the pooled change. The segment's ends
        // measure its whole change: a step clearly short of that explains only part, whatever the pooled levels
        // say. The bar is lower than for the pooled share because the ends' change is known less precisely, and a
        // single step must not be sent looking for contributors that are not there.
        let (_, _, ends_high) = match self.segment_change(segment, slope) {
            Some((change, change_se)) => model::ratio_interval(size, se_size, change, change_se, SHARE_Z),
            None => (f, f_low, f_high),
        };
        let explains_part = f_high < self.config.partial_below || ends_high < ENDS_PARTIAL_BELOW;
        let explains_all = f_low >= self.config.explain_most && !explains_part;
        let out_of_pairs = pairs >= self.config.max_verify_pairs;
        // Explaining most of the pooled change does not rule out a second contributor (the pooled levels mix the
        // steps of a series). Before the search stops, the parent must still sit at the segment's start level and
        // the culprit at its end level, judged from every run taken: a residual step that stands out is searched
        // like any segment. When one is only suggested and the end has fewer runs than the commit it is compared
        // with, the end gets two more runs (the pairs are not touched) and the question is asked again.
        let stops_here = significant && !explains_part && (explains_all || out_of_pairs);
        let residuals = if stops_here { self.residual_steps(segment, parent, commit, slope) } else { Vec::new() };
        let suspected = residuals.iter().filter(|_| explains_all && !out_of_pairs).find(|r| {
            (RESIDUAL_SUSPECT_Z..RESIDUAL_SCREEN_Z).contains(&r.z)
                && self.values[r.end].len() < self.values[r.inner].len()
        });
        if let Some(r) = suspected {
            self.note(
                "verify",
                format!("two more runs at {}", r.end),
                format!(
                    "the change from {} to {} is {:.2} standard errors: is commit {commit} all of it?",
                    r.segment.lo, r.segment.hi, r.z
                ),
            );
            self.ask(vec![(r.end, 2)]);
            return true;
        }
        let short = [parent, commit].into_iter().any(|c| self.values[c].len() < TABLE_MIN_RUNS);
        if significant && short && !out_of_pairs {
            self.note(
                "verify",
                format!("one more interleaved pair at {parent} and {commit}"),
                format!("the robot's table of the two needs {TABLE_MIN_RUNS} runs a side: {evidence}"),
            );
            self.interleaved_pairs(parent, commit, 1);
            return true;
        }
        if significant && (explains_all || explains_part || out_of_pairs) {
            let suspects: Vec<usize> = posterior
                .hypotheses
                .iter()
                .zip(&posterior.class)
                .filter(|(&k, &class)| class == commit && k != commit)
                .map(|(&k, _)| k)
                .collect();
            self.culprits.push(Culprit {
                commit,
                after: parent,
                located: true,
                untestable_suspects: suspects,
                share,
                share_low,
                share_high,
                confidence: mass,
                step,
            });
            if explains_part {
                self.part_explained = true;
                let before = Segment { lo: segment.lo, hi: parent, top: false };
                let after = Segment { lo: commit, hi: segment.hi, top: false };
                for s in [before, after] {
                    if s.lo != s.hi && !self.topology.segment(s.lo, s.hi).is_empty() {
                        self.queue.push(s);
                    }
                }
                self.note("verify", format!("commit {commit} confirmed, explains part: search the rest"), evidence);
            } else {
                let residual: Vec<Segment> =
                    residuals.iter().filter(|r| r.z >= RESIDUAL_SCREEN_Z).map(|r| r.segment).collect();
                let note = if residual.is_empty() {
                    format!("commit {commit} confirmed")
                } else {
                    format!("commit {commit} confirmed; a residual step stands out: search it")
                };
                self.fresh_only.extend(residual.iter().map(|r| (r.lo, r.hi)));
                self.queue.extend(residual);
                self.note("verify", note, evidence);
            }
            self.next_segment();
            return false;
        }
        if out_of_pairs {
            self.note("verify", format!("commit {commit} not confirmed"), evidence.clone());
            self.segment_unresolved(segment, &format!("commit {commit} did not differ from {parent}: {evidence}"));
            return false;
        }
        self.note("verify", format!("two more interleaved pairs at {parent} and {commit}"), evidence);
        self.interleaved_pairs(parent, commit, 2);
        true
    }

    /// The step from `parent` to `commit` measured on the runs recorded since `start`, paired in order (the i-th
    /// fresh run of each, adjacent in time since verification asks for them interleaved): the robust (t) location
    /// of the differences, its standard error, and the per-run noise used as the test's prior scale. The noise of
    /// a difference is the pairs' own spread pooled with sqrt(2) times `noise` (the within-commit noise of the whole
    /// segment, weighted as [`PAIR_PRIOR_DOF`] degrees of freedom), so that a few differences which happen to agree
    /// cannot make a step look certain. `None` with fewer than two
    /// pairs.
    fn paired_step(
        &self,
        parent: usize,
        commit: usize,
        start: usize,
        slope: f64,
        noise: f64,
    ) -> Option<(f64, f64, f64)> {
        let centre = self.records as f64 / 2.0;
        let fresh = |c: usize| -> Vec<f64> {
            self.runs_since(c, start).map(|&(t, v)| self.orientation * (v - slope * (t - centre))).collect()
        };
        let differences: Vec<f64> = fresh(commit).iter().zip(fresh(parent).iter()).map(|(c, p)| c - p).collect();
        if differences.len() < 2 {
            return None;
        }
        let fit = fit_t(&[&differences])?;
        let expected_sigma = std::f64::consts::SQRT_2 * noise;
        let dof = differences.len() as f64 - 1.0;
        let pair_sigma =
            ((dof * fit.sigma().powi(2) + PAIR_PRIOR_DOF * expected_sigma.powi(2)) / (dof + PAIR_PRIOR_DOF)).sqrt();
        let se = pair_sigma * T_LOCATION_INFLATION / (differences.len() as f64).sqrt();
        let location = fit.locations.first().copied()?;
        Some((location, se, pair_sigma / std::f64::consts::SQRT_2))
    }

    /// The two residual segments around a confirmed step (the segment's start to the parent, the culprit to the
    /// segment's end) that hold commits, each with its change in standard errors from the runs already taken.
    fn residual_steps(&self, segment: Segment, parent: usize, commit: usize, slope: f64) -> Vec<Residual> {
        [(segment.lo, parent, segment.lo, parent), (segment.hi, commit, commit, segment.hi)]
            .into_iter()
            .filter(|&(_, _, lo, hi)| lo != hi && !self.topology.segment(lo, hi).is_empty())
            .filter_map(|(end, inner, lo, hi)| {
                let residual = Segment { lo, hi, top: false };
                let (change, se) = self.segment_change(residual, slope)?;
                let z = if se > 0.0 { change / se } else { 0.0 };
                Some(Residual { end, inner, segment: residual, z })
            })
            .collect()
    }

    /// The change (oriented) from a segment's lo to its hi and its standard error, from every run at the two.
    fn segment_change(&self, segment: Segment, slope: f64) -> Option<(f64, f64)> {
        let a = self.adjusted(segment.lo, slope);
        let b = self.adjusted(segment.hi, slope);
        let fit = fit_t(&[&a, &b])?;
        let se = (fit.standard_error(0).powi(2) + fit.standard_error(1).powi(2)).sqrt();
        Some((fit.locations[1] - fit.locations[0], se))
    }

    /// Good-to-bad change (oriented) and its standard error from every run at the two ends.
    fn top_change(&self, slope: f64) -> Option<(f64, f64)> {
        self.segment_change(Segment { lo: 0, hi: self.values.len() - 1, top: true }, slope)
    }

    /// The share of good-to-bad a lone culprit explains, when the whole range is best described by its one step:
    /// every run at the culprit and its parent against the two levels of every run before and after the step. The
    /// shares reported while verifying divide the fresh pairs' step by the change between the two ends alone. That
    /// is right for a series of steps (the pooled levels would mix them), but for one step it leaves out most of
    /// the runs: on a real 30% slowdown bisected with 4-8 runs at each end, that share scattered from 0.8 to 1.37
    /// (the machine's run times are bimodal); read this way, its spread over 75 real bisects fell from 0.06-0.08 to
    /// 0.037-0.048 (docs/statistics.md). The pooled levels are used only while the ends agree with them. `None`
    /// when the posterior of the whole range puts its step elsewhere, or when the culprit was found to explain only
    /// part of its segment (the search for the rest found nothing it could name, but the pooled levels would hide
    /// it).
    fn lone_culprit_share(&self, culprit: &Culprit) -> Option<(f64, f64, f64)> {
        if !culprit.located || self.part_explained {
            return None;
        }
        let slope = self.drift();
        let posterior = self.posterior(0, self.values.len() - 1, slope)?;
        if posterior.best_class()?.0 != culprit.commit {
            return None;
        }
        let (size, se_size) =
            self.segment_change(Segment { lo: culprit.after, hi: culprit.commit, top: false }, slope)?;
        // The pooled levels are the single step's reading of good-to-bad. The two ends measure it without the model:
        // where they disagree with it, the model misses something (small steps elsewhere that no test could name),
        // and the ends' change is the one the share is of.
        // A real bisect of a 30% slowdown on a loaded CI host reported 1.34 [1.07, 1.60] when 4 runs at the bad end,
        // one of them low, put the ends 2.0 standard errors from the levels: a z of 2 treated that estimated standard
        // error as known.
        let (total, total_se) = self.top_change(slope)?;
        let end_runs = self.values[0].len() + self.values[self.values.len() - 1].len();
        let discrepancy = (total - posterior.delta).abs();
        let agrees = if total_se > 0.0 {
            let dof = (end_runs as f64 - 2.0).max(1.0);
            crate::stats::student_t_two_sided_p(discrepancy / total_se, dof) >= LONE_SHARE_MODEL_P
        } else {
            discrepancy == 0.0
        };
        let share = if agrees {
            model::ratio_interval(size, se_size, posterior.delta, posterior.delta_se, SHARE_Z)
        } else {
            model::ratio_interval(size, se_size, total, total_se, SHARE_Z)
        };
        share.0.is_finite().then_some(share)
    }

    fn finish(&mut self, reason: String) {
        let located = self.culprits.iter().filter(|c| c.located).count();
        let status = if self.reproduced == Some(false) {
            Status::NotReproduced
        } else if self.culprits.len() >= 2 {
            // Several contributors, located or not: a staircase reported as ranges is still several.
            Status::Multiple
        } else if located == 1 {
            Status::Found
        } else {
            Status::Inconclusive
        };
        let evidence = self
            .values
            .iter()
            .enumerate()
            .filter(|(c, _)| self.touched[*c])
            .map(|(commit, vs)| {
                let raw: Vec<f64> = vs.iter().map(|&(_, v)| v).collect();
                CommitEvidence {
                    commit,
                    runs: raw.len(),
                    mean: crate::stats::mean(&raw).unwrap_or(f64::NAN),
                    stddev: crate::stats::sample_stddev(&raw).unwrap_or(f64::NAN),
                    untestable: self.untestable[commit],
                }
            })
            .collect();
        let mut culprits = self.culprits.clone();
        if let (Status::Found, [culprit]) = (status, culprits.as_mut_slice()) {
            if let Some((share, low, high)) = self.lone_culprit_share(culprit) {
                (culprit.share, culprit.share_low, culprit.share_high) = (share, low, high);
            }
        }
        culprits.sort_by_key(|a| a.commit);
        self.note("done", format!("{status:?}"), reason.clone());
        self.phase = Phase::Finished;
        self.pending.clear();
        self.outcome = Some(Outcome {
            status,
            culprits,
            runs: self.runs,
            builds: self.builds(),
            total_change: self.total.map(|(t, _)| t * self.orientation),
            evidence,
            log: self.log.clone(),
            reason,
        });
    }
}

#[cfg(test)]
mod tests;
