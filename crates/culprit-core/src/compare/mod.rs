//! The comparison engine: per metric and per column, summaries against the base column, two-sample tests,
//! false-discovery control across all metrics, a bootstrap interval of the ratio, the direction, and THE verdict.
//!
//! The flow is [`Comparison`] (columns of samples) → [`compare`] → [`CompareResult`] (rows of [`Change`]s), which
//! the renderers in [`render`] print as lkp's ncompare table, JSON, Markdown, CSV or one-line headlines. Every
//! renderer reads [`Change::verdict`]; the verdict itself is computed only in [`verdict`].
//!
//! The method and its reasons are written up in `docs/statistics.md` (section "Compare").

pub mod aa;
pub mod direction;
pub mod idle;
pub mod lkp_rules;
pub mod printf;
pub mod profiled;
pub mod render;
pub mod sweep;

use crate::model::MetricClass;
use crate::rng::Rng;
use crate::stats::{self, ConfidenceInterval, RankTables, SampleProblem};
use direction::{direction_of, Direction};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

pub use lkp_rules::LkpOptions;

/// The name of the synthetic pass/fail row that counts failed runs per column.
pub const FAILED_RUNS_METRIC: &str = "culprit.failed_runs";

/// Ends the metric name in a row key that also names something else (a sweep's point, see [`sweep`]): a row's
/// class, kind and direction are read from the name before it, since the tables of names that decide them match
/// whole names. A unit separator, which no parser, capture or imported stat name holds.
pub(crate) const KEY_SEPARATOR: char = '\u{1f}';

/// The metric name of a row key: the whole key, or what precedes [`KEY_SEPARATOR`].
pub(crate) fn metric_of_key(key: &str) -> &str {
    key.split_once(KEY_SEPARATOR).map_or(key, |(name, _)| name)
}

/// One column of the table: one commit or label and the samples of its successful runs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Column {
    /// What the column header and the `commit:` list show: a full SHA (lkp truncates it in the header) or a label.
    pub label: String,
    /// The commit subject, shown in the `commit:` list as `label ("subject")` when present.
    pub subject: Option<String>,
    /// Per metric, one value per successful run.
    pub metrics: BTreeMap<String, Vec<f64>>,
    /// Runs of this column that failed (no metrics); they are counted in the `culprit.failed_runs` row.
    pub failed_runs: usize,
}

impl Column {
    pub fn new(label: impl Into<String>) -> Column {
        Column { label: label.into(), ..Column::default() }
    }

    /// Adds (or replaces) one metric's samples; returns `self` for chaining in tests and callers.
    pub fn with_metric(mut self, name: impl Into<String>, samples: Vec<f64>) -> Column {
        self.metrics.insert(name.into(), samples);
        self
    }

    /// The number of successful runs: the longest sample vector (a metric a run did not report is shorter).
    pub fn ok_runs(&self) -> usize {
        self.metrics.values().map(Vec::len).max().unwrap_or(0)
    }
}

/// What to compare: the base column first, then every other column, plus the table header's axes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Comparison {
    /// The params common to every column, for the `axes:` lines, in the order they are printed: lkp's, every key
    /// sorted by name (`class/compiler/.../tbox_group/test/testcase/...`).
    pub axes: Vec<(String, String)>,
    /// The axis the columns differ in: `commit` for commits, or e.g. `label`.
    pub compare_axis: String,
    pub columns: Vec<Column>,
}

impl Comparison {
    /// A comparison of commits without header axes.
    pub fn new(columns: Vec<Column>) -> Comparison {
        Comparison { axes: Vec::new(), compare_axis: "commit".to_string(), columns }
    }
}

/// Which rule decides that a metric changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum DecisionRule {
    /// Culprit's statistics: BH q-value, a practical-size floor and the bootstrap interval (see [`verdict`]).
    Culprit,
    /// lkp-tests' own change rules (`--lkp-rules`), see [`lkp_rules`].
    Lkp(LkpOptions),
}

/// Knobs of the comparison. [`CompareOptions::default`] is what `culprit compare` uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareOptions {
    pub rule: DecisionRule,
    /// False-discovery rate: a change needs q <= this.
    pub fdr: f64,
    /// Fewer successful runs than this on a side makes the Culprit verdict inconclusive.
    pub min_runs: usize,
    /// Smallest relative change that counts, in percent (criterion calls smaller changes noise).
    pub min_change_pct: f64,
    /// Smallest absolute change that counts for perf-profile and `%` metrics, in their own unit (percentage
    /// points), and for pass/fail rows (percentage points of reproduction).
    pub min_abs_change: f64,
    /// Bootstrap rounds for the ratio interval; 0 disables the bootstrap.
    pub bootstrap_resamples: usize,
    /// Coverage of the bootstrap interval.
    pub confidence: f64,
    /// Seed of the bootstrap; each metric derives its own stream from it and its name.
    pub seed: u64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            rule: DecisionRule::Culprit,
            fdr: 0.05,
            min_runs: 3,
            min_change_pct: 1.0,
            min_abs_change: 0.1,
            bootstrap_resamples: 1000,
            confidence: 0.95,
            seed: 0x5eed_c0de,
        }
    }
}

impl CompareOptions {
    /// The practical floor a change must reach to count: `min_abs_change` for a metric whose change is absolute,
    /// else `min_change_pct`.
    pub fn floor(&self, absolute: bool) -> f64 {
        if absolute {
            self.min_abs_change
        } else {
            self.min_change_pct
        }
    }
}

/// Errors that stop a comparison as a whole (row-level problems become inconclusive verdicts instead).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    #[error("a comparison needs a base column and at least one other column, got {got} column(s)")]
    TooFewColumns { got: usize },
    #[error(
        "nothing in common: column {label:?} shares no metric with the base column {base:?}; check that both \
         ran the same job (filters for job, testcase or metric may be too narrow)"
    )]
    NothingInCommon { base: String, label: String },
    #[error("invalid option {option}: {why}")]
    InvalidOption { option: &'static str, why: String },
}

/// Which side of a pair a problem is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Base,
    Other,
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Side::Base => "base",
            Side::Other => "other",
        })
    }
}

/// Why a pair has no verdict.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum InconclusiveReason {
    /// Fewer successful runs than `CompareOptions::min_runs` on a side.
    TooFewRuns { base: usize, other: usize, needed: usize },
    /// A sample is NaN or infinite (or the side is empty).
    BadSamples { side: Side, problem: SampleProblem },
    /// Every run of that side failed.
    NoSuccessfulRuns { side: Side },
    /// The metric was not reported on that side although it has successful runs.
    Missing { side: Side },
}

impl std::fmt::Display for InconclusiveReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InconclusiveReason::TooFewRuns { base, other, needed } => {
                write!(f, "fewer than {needed} runs a side ({base} vs {other})")
            }
            InconclusiveReason::BadSamples { side, problem } => write!(f, "{problem} on the {side} side"),
            InconclusiveReason::NoSuccessfulRuns { side } => write!(f, "every run failed on the {side} side"),
            InconclusiveReason::Missing { side } => write!(f, "metric missing on the {side} side"),
        }
    }
}

/// The decision for one metric in one column against the base.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// Changed in the worse direction.
    Regression,
    /// Changed in the better direction.
    Improvement,
    /// Changed, and the direction table does not know which way is better.
    Changed,
    Unchanged,
    Inconclusive {
        reason: InconclusiveReason,
    },
}

impl Verdict {
    /// Whether the verdict is a change of any kind (the rows shown by default).
    pub fn is_change(&self) -> bool {
        matches!(self, Verdict::Regression | Verdict::Improvement | Verdict::Changed)
    }

    /// The lowercase word used in headlines, CSV and Markdown.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::Changed => "changed",
            Verdict::Unchanged => "unchanged",
            Verdict::Inconclusive { .. } => "inconclusive",
        }
    }
}

/// What showed a change: a reader of a change whose q-value is large wants to know why it is called one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeBasis {
    /// The q-value cleared the false-discovery level (with the practical floor and the ratio interval).
    Test,
    /// Each side gave one value in every run and the sides differ ([`sides_constant_and_apart`]); the rank test
    /// alone may not have called it at these run counts.
    ConstantSides,
    /// lkp's range and ratio rules (`--lkp-rules`), whatever the p-value.
    LkpRules,
}

impl ChangeBasis {
    /// The name CSV and JSON carry (`test`, `constant-sides`, `lkp-rules`).
    pub fn key(self) -> &'static str {
        match self {
            ChangeBasis::Test => "test",
            ChangeBasis::ConstantSides => "constant-sides",
            ChangeBasis::LkpRules => "lkp-rules",
        }
    }
}

/// Whether a row holds measurements or pass/fail counts (lkp's "failure" stats: `*.fail`, `dmesg.*`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RowKind {
    PassFail,
    Measurement,
}

/// lkp's failure and pass stats (its `etc/failure` and `etc/pass` lists, restricted to what Culprit reports):
/// per-run counts whose interesting summary is "in how many runs did it happen".
pub fn is_pass_fail_metric(metric: &str) -> bool {
    if metric == FAILED_RUNS_METRIC {
        return true;
    }
    if metric.contains(".time.") || metric.contains(".timestamp:") || metric.contains(".bootstage:") {
        return false;
    }
    let last = metric.rsplit('.').next().unwrap_or("");
    ["dmesg.", "kmsg.", "last_state.", "stderr."].iter().any(|p| metric.starts_with(p))
        || metric.contains("killed_by")
        || last == "pass"
        || ["fail", "error", "warn"].iter().any(|w| last.starts_with(w) && !last.contains('_'))
}

/// Whether lkp shows this metric's change as an absolute difference rather than a percentage: perf-profile
/// metrics (already percentages of samples) and metrics whose name ends in `%`.
pub fn uses_absolute_change(metric: &str) -> bool {
    metric.starts_with("perf-profile") || metric.ends_with('%')
}

/// The smallest difference of means, in seconds, that a user or system CPU time can show.
///
/// The kernel measures a process's total CPU time to the nanosecond but splits it into user and system time by
/// which mode the scheduler tick found it in (`cputime_adjust`), and the tick comes every 1 to 10 ms by
/// `CONFIG_HZ` (4 ms on Debian's kernels, `HZ=250`). A process that runs for less than a few ticks reads all user or
/// all system time by chance: `echo` reads 0.7 ms of user time and 0 of system in one run and the reverse in the
/// next, and three runs of each kind on the two sides were two constant, different samples, a certain change (an
/// infinite one from a base of 0; a constant from 0 is now the rank test's too). A difference below one of Debian's
/// ticks is not read as a change. The floor is no higher: a benchmark of 45 ms of user time that does 21% more
/// work differs by 9.5 ms, which the runs' own scatter (under 1%) shows plainly, and a floor of 10 ms hid it.
pub const CPU_TIME_RESOLUTION_SECS: f64 = 0.004;

/// Whether the means `base` and `other` of `metric` are closer than the metric can measure: a user or system CPU
/// time ([`CPU_TIME_RESOLUTION_SECS`]) whose means differ by less than that. Such a difference is never a change.
pub fn below_resolution(metric: &str, base: f64, other: f64) -> bool {
    // The time monitor's rows by lkp's names (`stress-ng.time.user_time`) and by the bare ones stored before QA 47.
    let cpu_time_split = matches!(metric, "command.user_time" | "command.system_time")
        || matches!(crate::model::time_field(metric), Some("user_time" | "system_time"));
    cpu_time_split && (other - base).abs() < CPU_TIME_RESOLUTION_SECS
}

/// One column's view of one metric.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SideStats {
    /// Number of samples (for pass/fail rows: number of runs).
    pub n: usize,
    /// Mean (for pass/fail rows: the share of runs that failed, in [0, 1]).
    pub mean: f64,
    /// Sample stddev (n - 1); `None` with fewer than two samples.
    pub stddev: Option<f64>,
    /// 100 * population stddev / |mean|, lkp's `%stddev` (lkp divides by n); `None` when undefined. In JSON it is
    /// `population_rel_stddev_pct`: beside the sample `stddev` of the same object, `rel_stddev_pct` read as
    /// `100 * stddev / mean`, which it is not (QA 45 8b); the old name is still read.
    #[serde(rename = "population_rel_stddev_pct", alias = "rel_stddev_pct")]
    pub rel_stddev_pct: Option<f64>,
    pub min: f64,
    pub max: f64,
    /// For pass/fail rows: the number of runs in which it happened.
    pub fails: Option<usize>,
    /// Whether the metric was present for this column (filled-in zeros count as present).
    pub present: bool,
}

impl SideStats {
    fn absent() -> SideStats {
        SideStats {
            n: 0,
            mean: 0.0,
            stddev: None,
            rel_stddev_pct: None,
            min: 0.0,
            max: 0.0,
            fails: None,
            present: false,
        }
    }

    fn of_samples(xs: &[f64]) -> SideStats {
        let mean = stats::mean(xs).unwrap_or(0.0);
        let stddev = stats::sample_stddev(xs);
        // The printed %stddev is lkp's: the population standard deviation over the mean's magnitude.
        let rel =
            stats::population_stddev(xs).and_then(|s| if mean != 0.0 { Some(100.0 * s / mean.abs()) } else { None });
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        for &x in xs {
            min = min.min(x);
            max = max.max(x);
        }
        if xs.is_empty() {
            min = 0.0;
            max = 0.0;
        }
        SideStats { n: xs.len(), mean, stddev, rel_stddev_pct: rel, min, max, fails: None, present: true }
    }

    fn of_pass_fail(fails: usize, runs: usize) -> SideStats {
        let mean = if runs > 0 { fails as f64 / runs as f64 } else { 0.0 };
        SideStats {
            n: runs,
            mean,
            stddev: None,
            rel_stddev_pct: None,
            min: 0.0,
            max: 0.0,
            fails: Some(fails),
            present: true,
        }
    }
}

/// Everything [`verdict`] looks at for one (metric, column) pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evidence {
    /// Set when the pair cannot be judged; wins over everything else.
    pub problem: Option<InconclusiveReason>,
    /// Signed change: percent, absolute difference, or percentage points of reproduction (see `absolute`).
    /// ±inf when the base mean is 0 and the other is not.
    pub change: f64,
    /// Whether `change` is an absolute difference rather than a percentage.
    pub absolute: bool,
    /// Benjamini-Hochberg q-value of the pair's p-value within its column.
    pub q: Option<f64>,
    /// Bootstrap interval of the change ratio ([`stats::change_ratio`]: mean(other) / mean(base) for a positive
    /// base, 1 + change / 100 in general), when computed.
    pub ratio_ci: Option<ConfidenceInterval>,
    /// Under [`DecisionRule::Lkp`]: whether lkp's rules report the metric as changed.
    pub lkp_changed: Option<bool>,
    /// Whether the two means are closer than the metric can measure ([`below_resolution`]).
    pub below_resolution: bool,
    pub direction: Direction,
}

/// THE verdict. Every output (table rows, headlines, JSON, CSV, Markdown, the A/A count) reads the value this
/// function returned; nothing else decides.
///
/// 1. A problem (failed side, missing metric, NaN/inf, too few runs) → `Inconclusive` with its reason.
/// 2. Whether it changed: under [`DecisionRule::Lkp`], lkp's rules say so. Under [`DecisionRule::Culprit`], all
///    three must hold: q <= `fdr` (statistically detectable after controlling false discoveries over all
///    metrics), |change| >= the practical floor (`min_change_pct`, or `min_abs_change` for absolute metrics),
///    and the bootstrap interval of the ratio, when there is one, excludes 1; a difference below what the metric
///    can measure ([`below_resolution`]) is never a change. A ratio interval of zero width
///    (each side constant in every run, to rounding, and the sides apart; or a pass/fail row that happened in every
///    run of one side and in none of the other) stands in for the q-value: see below.
/// 3. Not changed → `Unchanged`. Changed → the sign of the change times the direction: better → `Improvement`,
///    worse → `Regression`, unknown direction → `Changed`.
pub fn verdict(e: &Evidence, options: &CompareOptions) -> Verdict {
    if let Some(reason) = e.problem {
        return Verdict::Inconclusive { reason };
    }
    let changed = match &options.rule {
        DecisionRule::Lkp(_) => e.lkp_changed.unwrap_or(false),
        DecisionRule::Culprit => {
            let significant = significant(e.q, options);
            // A difference that is the same in every run is a change, whatever the rank test says. When each side
            // gave one value in every run (to rounding) and the sides differ, the ratio interval has zero width:
            // every resample of the runs shows this very change, and no run of one side came near the other. The
            // rank test cannot go below 2 / C(m + n, n) (0.1 at 3 runs a side, 0.029 at 4), so after the false-
            // discovery correction over a table it would call such a change "unchanged" at the usual run counts,
            // which a reader takes as "no regression". The practical floor below still applies, so a constant that
            // moved by less than it (or by rounding only, which never makes the sides apart) stays unchanged.
            let deterministic = sides_constant_and_apart(e.ratio_ci);
            let large_enough = !e.below_resolution && e.change.abs() >= options.floor(e.absolute);
            let interval_agrees = !matches!(e.ratio_ci, Some(ci) if ci.contains(1.0));
            (significant || deterministic) && large_enough && interval_agrees
        }
    };
    if !changed {
        return Verdict::Unchanged;
    }
    let better = (e.change.signum() as i8) * e.direction.sign();
    if e.change == 0.0 || e.change.is_nan() || better == 0 {
        Verdict::Changed
    } else if better > 0 {
        Verdict::Improvement
    } else {
        Verdict::Regression
    }
}

/// What showed the change [`verdict`] called on this evidence: `None` when it called none. It reads the same
/// evidence and rule as [`verdict`] and decides nothing; it names which of the verdict's reasons held.
pub fn change_basis(e: &Evidence, options: &CompareOptions, verdict: Verdict) -> Option<ChangeBasis> {
    if !verdict.is_change() {
        return None;
    }
    Some(match options.rule {
        DecisionRule::Lkp(_) => ChangeBasis::LkpRules,
        DecisionRule::Culprit if significant(e.q, options) => ChangeBasis::Test,
        DecisionRule::Culprit => ChangeBasis::ConstantSides,
    })
}

/// Whether a change's q-value clears the false-discovery level: the test's half of [`verdict`]'s rule under
/// [`DecisionRule::Culprit`].
pub fn significant(q: Option<f64>, options: &CompareOptions) -> bool {
    q.is_some_and(|q| q <= options.fdr)
}

/// Whether a ratio interval says each side gave one value in every run (to rounding) and the sides differ: the
/// interval has zero width and leaves out 1. [`verdict`] takes such a change as shown whatever the rank test says.
pub fn sides_constant_and_apart(ratio_ci: Option<ConfidenceInterval>) -> bool {
    matches!(ratio_ci, Some(ci) if ci.is_point() && !ci.contains(1.0))
}

/// The outcome for one metric in one non-base column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// Index of the column (1 = first non-base column).
    pub column: usize,
    /// %change (relative metrics), absolute difference (perf-profile and `%` metrics) or percentage points of
    /// reproduction (pass/fail rows). ±inf (JSON: null) when the base mean is 0 and the other is not; NaN (JSON:
    /// null) when a side has no samples of the metric (the verdict is then inconclusive and says which side).
    pub change: f64,
    pub absolute: bool,
    /// Two-sided Mann-Whitney U p-value.
    pub p_mann_whitney: Option<f64>,
    /// Two-sided Welch t-test p-value.
    pub p_welch: Option<f64>,
    /// The pair's p-value: min(1, 2 * min(p_MW, p_Welch)) for measurements, Fisher's exact for pass/fail.
    pub p: Option<f64>,
    /// Benjamini-Hochberg q-value among the pairs of this column whose metrics are of this one's class.
    pub q: Option<f64>,
    /// How many metrics `q` was computed among: the tested pairs of this column and class when it was decided (a
    /// metric fixed before its runs is decided alone, 1). A table cut to the rows a report shows keeps it, so the
    /// runs a side more runs would need ([`runs_to_tell`]) are reckoned against the family that decided, not the rows
    /// shown. 0 in JSON written before it was stored, which [`runs_to_tell`] reads as the table's tested rows of the
    /// class.
    #[serde(default)]
    pub tested: usize,
    /// Cohen's d of other against base (pooled stddev).
    pub effect_size: Option<f64>,
    /// Cliff's delta, P(other > base) - P(other < base).
    pub cliffs_delta: Option<f64>,
    /// Bootstrap interval of the change ratio ([`stats::change_ratio`]: mean(other) / mean(base) for a positive
    /// base, 1 + change / 100 in general); computed only for candidates (see `docs/statistics.md`).
    pub ratio_ci: Option<ConfidenceInterval>,
    /// Under `--lkp-rules`: lkp's record for this metric when it reports one.
    pub lkp: Option<lkp_rules::LkpChange>,
    pub verdict: Verdict,
    /// What showed the change, for a change ([`change_basis`]); absent otherwise and in JSON written before it was
    /// stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<ChangeBasis>,
}

/// One metric across all columns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricRow {
    pub metric: String,
    pub class: MetricClass,
    pub kind: RowKind,
    pub direction: Direction,
    /// One entry per column, base first.
    pub sides: Vec<SideStats>,
    /// One entry per non-base column.
    pub changes: Vec<Change>,
}

impl MetricRow {
    /// Whether any column changed (the default table shows only such rows).
    pub fn any_change(&self) -> bool {
        self.changes.iter().any(|c| c.verdict.is_change())
    }
}

/// A change the test could not tell from the noise although it clears the practical floor: how many runs a side
/// would show a true change of its size, against the runs there are. See [`runs_to_tell`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunsToTell {
    /// Runs a side at which the table's test would call a true change of this size four times in five.
    pub needed: usize,
    /// The runs of the side with fewer.
    pub now: usize,
    /// The runs of the base and of the other side, which a sentence names when they differ ([`RunsToTell::runs`]).
    pub sides: (usize, usize),
    /// The metrics tested in the column, whose false-discovery control the change has to clear.
    pub tested: usize,
}

/// How many metrics `change` (of a row of `class`) was decided among: its [`Change::tested`], the family it was
/// decided in, which is not the table's rows when the table was cut to a report's rows or holds a row decided alone;
/// for JSON written before that was stored (0), the table's tested rows of the class in the change's column.
pub fn family_size(result: &CompareResult, class: MetricClass, change: &Change) -> usize {
    match change.tested {
        0 => result
            .rows
            .iter()
            .filter(|r| r.class == class && r.changes.iter().any(|c| c.column == change.column && c.p.is_some()))
            .count(),
        n => n,
    }
}

/// At most this many monitor rows are named beside a change ([`moved_beside`]).
pub const MAX_MOVED_BESIDE: usize = 5;

/// The largest p of a monitor row named beside a change ([`moved_beside`]). Every run of one side beyond every run
/// of the other alone is weak at a few runs a side: at 4 runs a side it happens to 2 in 70 unchanged metrics, 1.7 of
/// a table's 59 monitor metrics by chance; with p <= 0.01 as well, about 0.6.
pub const MOVED_BESIDE_P: f64 = 0.01;

/// The monitor rows of `column` that moved beside a change of the benchmark's own metrics there without being
/// significant themselves: unchanged by the verdict, yet every run of one side beyond every run of the other (Cliff's
/// delta of +1 or -1) with p <= [`MOVED_BESIDE_P`] and by at least the practical floor, the smallest p first, at most
/// [`MAX_MOVED_BESIDE`]. A CPU
/// hog's -56% throughput over 4 runs a side came with idle 33.6% -> 0 and the benchmark's CPU share 99% -> 43% in
/// every run, neither significant among 59 monitor metrics (q 0.37 and 0.055), so the table showed the drop with
/// nothing that explains it (QA 59). They are evidence to read, not changes: the verdict stays theirs, and nothing
/// decides by this. Empty under lkp's rules (which show such rows themselves), and when no benchmark row of the
/// column changed.
pub fn moved_beside(result: &CompareResult, column: usize) -> Vec<(&MetricRow, &Change)> {
    let options = &result.options;
    fn at(row: &MetricRow, column: usize) -> Option<&Change> {
        row.changes.iter().find(|c| c.column == column)
    }
    let benchmark_changed = result
        .rows
        .iter()
        .any(|r| r.class == MetricClass::Program && at(r, column).is_some_and(|c| c.verdict.is_change()));
    if options.rule != DecisionRule::Culprit || !benchmark_changed {
        return Vec::new();
    }
    let mut moved: Vec<(&MetricRow, &Change)> = result
        .rows
        .iter()
        .filter(|r| r.class == MetricClass::Monitor && r.kind == RowKind::Measurement)
        .filter_map(|r| at(r, column).map(|c| (r, c)))
        .filter(|(_, c)| {
            c.verdict == Verdict::Unchanged
                && c.cliffs_delta.is_some_and(|d| d.abs() == 1.0)
                && c.p.is_some_and(|p| p <= MOVED_BESIDE_P)
                && c.change.abs() >= options.floor(c.absolute)
        })
        .collect();
    moved.sort_by(|(a, x), (b, y)| {
        x.p.unwrap_or(1.0).total_cmp(&y.p.unwrap_or(1.0)).then_with(|| a.metric.cmp(&b.metric))
    });
    moved.truncate(MAX_MOVED_BESIDE);
    moved
}

/// For a pair whose verdict is unchanged and whose change clears the practical floor (`min_change_pct`, or
/// `min_abs_change` for absolute metrics): the runs a side that would tell a true change of that size from the
/// noise in this table. The bar is the one a lone change meets under Benjamini-Hochberg, q = p m <= `fdr` over
/// the m metrics the change was decided among ([`Change::tested`]), with the pair's p twice the smaller of Welch's
/// and the rank test's: Welch's test at level fdr / (2 m), power 0.8, on the sides' own scatter
/// ([`crate::stats::runs_to_detect`]). Changes that move together (a throughput and its idle time) clear the
/// control with fewer, so this is an upper figure.
/// `None` under lkp's rules, for any verdict but unchanged, for pass/fail rows, for a change no more runs would
/// call one (below the floor, or more than 1,000 runs a side needed), and when the sides already have that many
/// (the test fell short by chance, and more runs are not the advice). The table's footnotes (for KPIs) and a
/// report's headline read it; nothing decides by it.
pub fn runs_to_tell(result: &CompareResult, row: &MetricRow, change: &Change) -> Option<RunsToTell> {
    let options = &result.options;
    let floor = options.floor(change.absolute);
    if options.rule != DecisionRule::Culprit || change.verdict != Verdict::Unchanged || !(change.change.abs() >= floor)
    {
        return None;
    }
    let (base, other) = (row.sides.first()?, row.sides.get(change.column)?);
    if base.fails.is_some() || other.fails.is_some() {
        return None;
    }
    let tested = family_size(result, row.class, change).max(1);
    let alpha = options.fdr / (2.0 * tested as f64);
    let needed =
        crate::stats::runs_to_detect(other.mean - base.mean, base.stddev?, other.stddev?, alpha, 0.8, 1000)?;
    let now = base.n.min(other.n);
    (needed > now).then_some(RunsToTell { needed, now, sides: (base.n, other.n), tested })
}

impl RunsToTell {
    /// The runs there are, as a sentence names them: "4 runs a side", or "8 and 4 runs" when the sides differ (QA
    /// 54: a table of 8 runs against 4 said "over 4 runs a side").
    pub fn runs(&self) -> String {
        match self.sides {
            (base, other) if base == other => format!("{base} runs a side"),
            _ => format!("{} runs", self.counts()),
        }
    }

    /// The sides' run counts as a number: "4" when they are alike, else "8 and 4".
    pub fn counts(&self) -> String {
        match self.sides {
            (base, other) if base == other => base.to_string(),
            (base, other) => format!("{base} and {other}"),
        }
    }
}

/// Header facts of one column, echoed in the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnInfo {
    pub label: String,
    pub subject: Option<String>,
    pub ok_runs: usize,
    pub failed_runs: usize,
}

/// The whole comparison, ready to render.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareResult {
    pub axes: Vec<(String, String)>,
    pub compare_axis: String,
    pub columns: Vec<ColumnInfo>,
    /// Pass/fail rows and measurement rows, ordered program metrics, monitors, perf-profile, then by name.
    pub rows: Vec<MetricRow>,
    pub options: CompareOptions,
}

/// A sample vector as the engine sees it for one column: present, filled with zeros, or unavailable.
enum Samples<'a> {
    Present(Cow<'a, [f64]>),
    Unavailable(InconclusiveReason),
}

/// Whether a metric that a successful run did not report was 0 in that run rather than not measured: perf-profile
/// entries (perf drops symbols below its cutoff), pass/fail counts (a dmesg pattern that did not occur is not
/// printed), and perf-stat's sums of perf's own metric column per unit (`perf-stat.i.metric.K/sec`), which exist
/// only in runs where some event's rate was printed in that unit: perf picks `/sec`, `K/sec` or `M/sec` by the
/// rate's size, so a run whose page faults stayed under 1,000 a second has no `K/sec` line to sum.
fn absent_means_zero(metric: &str, kind: RowKind, class: MetricClass) -> bool {
    let perf_stat_unit_sum = metric.starts_with("perf-stat.") && metric.contains(".metric.");
    kind == RowKind::PassFail || class == MetricClass::Profile || perf_stat_unit_sum
}

/// Whether `metric` was 0 in a successful run that did not report it (see [`absent_means_zero`]): what a caller
/// that assembles samples itself, as `compare --by` does for each point, fills such a run with.
pub fn missing_means_zero(metric: &str) -> bool {
    let kind = if is_pass_fail_metric(metric) { RowKind::PassFail } else { RowKind::Measurement };
    absent_means_zero(metric, kind, MetricClass::of(metric))
}

/// Resolves a column's samples for a metric, where `runs` is the column's [`Column::ok_runs`]. A metric that is 0
/// where a run did not report it ([`absent_means_zero`]) is filled with zeros, as lkp fills its matrix, in a column
/// that reported it in some runs as in one that reported it in none: the mean of the runs that did would overstate
/// it, and be tested as fewer runs than there were. Any other missing metric is unavailable. A sweep's point (a key
/// with [`KEY_SEPARATOR`]) is never filled: its samples are its own job's runs, while the column's runs are those of
/// the point with the most, so 3 runs of 2.0 beside a point of 6 runs read as 1.00 of 6, and a revision without a
/// run at a point as 0.00; the caller fills a point to its job's runs ([`missing_means_zero`]).
///
/// The zeros fill the runs in which the metric's source (perf-profile, perf-stat: [`source_of`]) reported anything,
/// `fill_to` of them, not every successful run: a run whose perf monitor failed (perf refused by
/// `perf_event_paranoid`, killed) measured no function at all rather than every function at 0%, and a side where perf
/// never ran has its perf rows missing, not a profile of zeros that reads as "+inf%" against the other side.
fn resolve<'a>(
    column: &'a Column,
    runs: usize,
    fill_to: usize,
    metric: &str,
    kind: RowKind,
    class: MetricClass,
    side: Side,
) -> Samples<'a> {
    let zero_filled = !metric.contains(KEY_SEPARATOR) && absent_means_zero(metric, kind, class);
    // An empty sample vector (what `compare --by` holds for a revision without runs at a point) is a metric no run
    // reported, not runs that measured nothing: read as present, it printed a mean of 0 and a change of -100%.
    if let Some(xs) = column.metrics.get(metric).filter(|xs| !xs.is_empty()) {
        if zero_filled && xs.len() < fill_to {
            let mut filled = xs.clone();
            filled.resize(fill_to, 0.0);
            return Samples::Present(Cow::Owned(filled));
        }
        return Samples::Present(Cow::Borrowed(xs.as_slice()));
    }
    if runs == 0 {
        return Samples::Unavailable(InconclusiveReason::NoSuccessfulRuns { side });
    }
    if zero_filled && fill_to > 0 {
        return Samples::Present(Cow::Owned(vec![0.0; fill_to]));
    }
    Samples::Unavailable(InconclusiveReason::Missing { side })
}

/// The source of a metric: its program or monitor, the text before its first `.` (`perf-profile`, `perf-stat`).
fn source_of(metric: &str) -> &str {
    let name = metric_of_key(metric);
    name.split_once('.').map_or(name, |(source, _)| source)
}

/// For each source of a column's metrics ([`source_of`]), in how many of its runs the source reported anything: the
/// most samples any of its metrics has. perf-profile and perf-stat report some key in every run they ran in (the
/// functions taking time there, the events counted), so this is the number of runs in which they ran.
fn runs_reporting_each_source(column: &Column) -> BTreeMap<&str, usize> {
    let mut runs: BTreeMap<&str, usize> = BTreeMap::new();
    for (metric, samples) in &column.metrics {
        let most = runs.entry(source_of(metric)).or_default();
        *most = (*most).max(samples.len());
    }
    runs
}

/// A stable 64-bit FNV-1a hash, so each metric's bootstrap stream depends only on the seed and its name.
fn fnv1a(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The relative change in percent, ±inf when the base mean is 0 and the other is not, 0 when both are 0.
fn percent_change(base: f64, other: f64) -> f64 {
    if base == 0.0 {
        if other == 0.0 {
            0.0
        } else {
            f64::INFINITY.copysign(other)
        }
    } else {
        100.0 * (other - base) / base.abs()
    }
}

/// The smallest share of perf's samples, in percent over both sides' runs together, that a perf-profile key must
/// hold to be tested.
///
/// A profile has thousands of keys (2,806 in QA 46's fio job), nearly all a few samples of a thousand: one sample of
/// another process's build read as a constant 0.12% on one side and 0 on the other, while in the same family of
/// tests `iowrite16`, at 5.18% on ext4 and 0 on tmpfs (p 0.0125), could not pass the false-discovery bar over 2,806
/// keys (q 0.66) and the table never explained the change by its profile. The keys below 0.5% (5 samples in 1,000)
/// are left out of the family before the correction, as independent filtering does (Bourgon, Gentleman and Huber,
/// 2010): the filter reads the pooled runs of both sides, which under "no change" tells nothing of how they split
/// between the sides, so the family's false-discovery rate holds while its size falls to the keys a test can speak
/// of. A key left out is unchanged.
pub const PROFILE_SHARE_TESTED: f64 = 0.5;

/// The mean of two samples taken together.
fn pooled_mean(a: &[f64], b: &[f64]) -> f64 {
    let count = a.len() + b.len();
    if count == 0 {
        return 0.0;
    }
    a.iter().chain(b).sum::<f64>() / count as f64
}

/// Work kept between the passes of [`compare`] for one (row, column) pair.
struct Pending<'a> {
    row: usize,
    column: usize,
    problem: Option<InconclusiveReason>,
    change: f64,
    absolute: bool,
    tests: PairTests,
    /// The pair's samples (borrowed from the input), kept while a bootstrap may still need them.
    samples: Option<SamplePair<'a>>,
}

/// Base and other samples of one pair.
type SamplePair<'a> = (Cow<'a, [f64]>, Cow<'a, [f64]>);

/// The cheap per-pair statistics computed in the first pass.
#[derive(Debug, Clone, Copy, Default)]
struct PairTests {
    /// The change ratio of the means ([`stats::change_ratio`]) when each side is constant (to rounding) and the
    /// sides are apart, or a pass/fail row happened in every run of one side and in none of the other: the ratio
    /// every bootstrap resample would give, which [`verdict`] reads as a deterministic difference.
    constant_ratio: Option<f64>,
    p: Option<f64>,
    p_mann_whitney: Option<f64>,
    p_welch: Option<f64>,
    effect_size: Option<f64>,
    cliffs_delta: Option<f64>,
}

/// Compares every column against column 0. See the module docs and [`verdict`] for the method.
///
/// Errors only for a comparison that cannot be a table at all (fewer than two columns, no metric in common
/// with the base while both have successful runs); every row-level problem is an inconclusive verdict instead.
pub fn compare(input: &Comparison, options: &CompareOptions) -> Result<CompareResult, CompareError> {
    validate_options(options)?;
    let columns = &input.columns;
    let base = match columns.first() {
        Some(b) if columns.len() >= 2 => b,
        _ => return Err(CompareError::TooFewColumns { got: columns.len() }),
    };
    for other in columns.iter().skip(1) {
        let shared = other.metrics.keys().any(|k| base.metrics.contains_key(k));
        if !shared && base.ok_runs() > 0 && other.ok_runs() > 0 {
            return Err(CompareError::NothingInCommon { base: base.label.clone(), label: other.label.clone() });
        }
    }

    // Rows: every metric any column reported, plus the failed-runs row when any run failed.
    let mut names: BTreeSet<&str> = columns.iter().flat_map(|c| c.metrics.keys().map(String::as_str)).collect();
    if columns.iter().any(|c| c.failed_runs > 0) {
        names.insert(FAILED_RUNS_METRIC);
    }
    let mut ordered: Vec<(MetricClass, &str)> =
        names.into_iter().map(|n| (MetricClass::of(metric_of_key(n)), n)).collect();
    ordered.sort();

    // Counted once: a column's runs are the length of its longest sample vector, a scan of every metric.
    let ok_runs: Vec<usize> = columns.iter().map(Column::ok_runs).collect();
    let reporting_runs: Vec<BTreeMap<&str, usize>> = columns.iter().map(runs_reporting_each_source).collect();
    let mut rows = Vec::with_capacity(ordered.len());
    let mut pending: Vec<Pending> = Vec::new();
    let mut rank_tables = RankTables::default();

    for (class, name) in ordered {
        let metric = metric_of_key(name);
        let kind = if is_pass_fail_metric(metric) { RowKind::PassFail } else { RowKind::Measurement };
        let absolute = kind == RowKind::PassFail || uses_absolute_change(metric);
        let row_index = rows.len();
        let mut sides = Vec::with_capacity(columns.len());
        let mut resolved = Vec::with_capacity(columns.len());
        for (i, col) in columns.iter().enumerate() {
            let side = if i == 0 { Side::Base } else { Side::Other };
            if name == FAILED_RUNS_METRIC && !col.metrics.contains_key(name) {
                let runs = col.ok_runs() + col.failed_runs;
                sides.push(SideStats::of_pass_fail(col.failed_runs, runs));
                resolved.push(Samples::Present(Cow::Owned(Vec::new())));
                continue;
            }
            // perf's keys are 0 only in runs where perf ran: a run whose perf monitor failed has none of them.
            let fill_to = match kind {
                RowKind::PassFail => ok_runs[i],
                RowKind::Measurement => reporting_runs[i].get(source_of(name)).copied().unwrap_or(0),
            };
            let samples = resolve(col, ok_runs[i], fill_to, name, kind, class, side);
            sides.push(match &samples {
                // A NaN or infinite count is no evidence that the failure happened in that run (the pair is
                // inconclusive, below), so only finite nonzero counts are runs in which it happened.
                Samples::Present(xs) if kind == RowKind::PassFail => {
                    SideStats::of_pass_fail(xs.iter().filter(|&&x| x != 0.0 && x.is_finite()).count(), xs.len())
                }
                Samples::Present(xs) => SideStats::of_samples(xs),
                Samples::Unavailable(_) => SideStats::absent(),
            });
            resolved.push(samples);
        }
        let base_samples = resolved.first();
        let base_stats = sides.first().copied().unwrap_or_else(SideStats::absent);
        for (ci, other_samples) in resolved.iter().enumerate().skip(1) {
            let other_stats = sides.get(ci).copied().unwrap_or_else(SideStats::absent);
            let mut item = Pending {
                row: row_index,
                column: ci,
                problem: None,
                change: 0.0,
                absolute,
                tests: PairTests::default(),
                samples: None,
            };
            let (b, o) = match (base_samples, other_samples) {
                (Some(Samples::Present(b)), Samples::Present(o)) => (b, o),
                // A side without samples has no change to state: NaN, which JSON writes as null (a 0.0 there read
                // as "measured and unchanged"). Every table view leaves the cell blank for an absent side.
                (Some(Samples::Unavailable(r)), _) | (_, Samples::Unavailable(r)) => {
                    item.change = f64::NAN;
                    item.problem = Some(*r);
                    pending.push(item);
                    continue;
                }
                (None, _) => {
                    item.change = f64::NAN;
                    item.problem = Some(InconclusiveReason::Missing { side: Side::Base });
                    pending.push(item);
                    continue;
                }
            };
            if kind == RowKind::PassFail {
                let (fb, nb) = (base_stats.fails.unwrap_or(0), base_stats.n);
                let (fo, no) = (other_stats.fails.unwrap_or(0), other_stats.n);
                item.change = 100.0 * (other_stats.mean - base_stats.mean);
                // A count that is NaN or infinite makes the pair inconclusive, as a measurement's does: read as
                // nonzero, three NaN runs against three clean ones were a failure in every run, a regression.
                let bad = [(Side::Base, b), (Side::Other, o)].into_iter().find_map(|(side, xs)| {
                    stats::check_samples(xs).filter(|p| *p != SampleProblem::Empty).map(|problem| (side, problem))
                });
                if nb == 0 || no == 0 {
                    item.change = f64::NAN;
                    let side = if nb == 0 { Side::Base } else { Side::Other };
                    item.problem = Some(InconclusiveReason::NoSuccessfulRuns { side });
                } else if let Some((side, problem)) = bad {
                    item.change = f64::NAN;
                    item.problem = Some(InconclusiveReason::BadSamples { side, problem });
                } else {
                    item.tests.p = Some(stats::fisher_exact(fo, no, fb, nb));
                    // Failed in every run of one side and in none of the other: as with two constant measurements
                    // apart, every resample of the runs gives this ratio of shares, and no run of one side looked
                    // like the other, while Fisher's test cannot go below 2 / C(m + n, n) (0.1 at 3 runs a side).
                    // Pass/fail rows are tested at any run count, so the minimum that keeps a measurement's chance
                    // constancy rare applies here too: one run a side is all or none whatever happened.
                    let all_or_none =
                        |fails: usize, runs: usize| (fails == 0 || fails == runs) && runs >= options.min_runs;
                    if all_or_none(fb, nb) && all_or_none(fo, no) && (fb == 0) != (fo == 0) {
                        item.tests.constant_ratio = Some(other_stats.mean / base_stats.mean);
                    }
                }
                pending.push(item);
                continue;
            }
            item.problem = pair_problem(b, o, options);
            item.change = if absolute {
                other_stats.mean - base_stats.mean
            } else {
                percent_change(base_stats.mean, other_stats.mean)
            };
            if item.problem.is_none() {
                item.tests = pair_tests(b, o, &mut rank_tables);
                if class == MetricClass::Profile && pooled_mean(b, o) < PROFILE_SHARE_TESTED {
                    // Not tested, and not counted in the profile's false-discovery family (see the constant).
                    item.tests.p = None;
                    item.tests.constant_ratio = None;
                }
                item.samples = Some((b.clone(), o.clone()));
            }
            pending.push(item);
        }
        rows.push(MetricRow {
            metric: name.to_string(),
            class,
            kind,
            direction: direction_of(metric),
            sides,
            changes: Vec::with_capacity(columns.len().saturating_sub(1)),
        });
    }

    // Benjamini-Hochberg within each non-base column and each class of metric: the benchmark's own metrics are one
    // family, the monitors' another, perf-profile's a third. One family of all of them made the benchmark's verdict
    // depend on how many monitors ran beside it: a fio job's 20 metrics sat among proc-vmstat's 180 and
    // perf-profile's thousands, and its -22% over 3 runs a side needed a p that many times smaller to count. Each
    // family keeps the expected share of false alarms among its flagged rows at the FDR, answering its own question
    // (did the benchmark change; which counters moved with it; which functions).
    let mut q_of = vec![None; pending.len()];
    // How many pairs each change's q-value was computed among, kept with it ([`Change::tested`]).
    let mut family_of = vec![0; pending.len()];
    let class_of = |i: usize| rows.get(pending[i].row).map(|row| row.class);
    for column in 1..columns.len() {
        for class in [MetricClass::Program, MetricClass::Monitor, MetricClass::Profile] {
            let members: Vec<usize> = (0..pending.len())
                .filter(|&i| pending[i].column == column && pending[i].tests.p.is_some() && class_of(i) == Some(class))
                .collect();
            let ps: Vec<f64> = members.iter().map(|&i| pending[i].tests.p.unwrap_or(1.0)).collect();
            for (&i, q) in members.iter().zip(stats::benjamini_hochberg(&ps)) {
                q_of[i] = Some(q);
                family_of[i] = members.len();
            }
        }
    }

    let lkp_changed = lkp_decisions(input, options);

    for (i, item) in pending.into_iter().enumerate() {
        let q = q_of.get(i).copied().flatten();
        let Some(row) = rows.get_mut(item.row) else { continue };
        let mut ratio_ci = None;
        if let Some(ratio) = item.tests.constant_ratio {
            // Every resample of two constant sides gives this ratio: the interval is that one point.
            ratio_ci = Some(ConfidenceInterval { low: ratio, high: ratio, level: options.confidence });
        } else if let Some((b, o)) = &item.samples {
            // The bootstrap is the expensive part, and only decides between "changed" and "unchanged" for
            // pairs that already passed the cheap tests: run it for those candidates only.
            let candidate = significant(q, options) && item.change.abs() >= options.floor(item.absolute);
            if candidate && options.bootstrap_resamples > 0 {
                let mut rng = Rng::new(options.seed ^ fnv1a(&row.metric) ^ (item.column as u64).rotate_left(32));
                ratio_ci = stats::bootstrap_ratio_ci(b, o, &mut rng, options.bootstrap_resamples, options.confidence);
            }
        }
        let lkp_record =
            lkp_changed.as_ref().and_then(|per_col| per_col.get(item.column)).and_then(|m| m.get(&row.metric));
        let evidence = Evidence {
            problem: item.problem,
            change: item.change,
            absolute: item.absolute,
            q,
            ratio_ci,
            lkp_changed: lkp_changed.as_ref().map(|_| lkp_record.is_some()),
            below_resolution: match (row.sides.first(), row.sides.get(item.column)) {
                (Some(base), Some(other)) => below_resolution(metric_of_key(&row.metric), base.mean, other.mean),
                _ => false,
            },
            direction: if row.kind == RowKind::PassFail && row.direction == Direction::Unknown {
                // A pass/fail row counts occurrences of a failure unless the table says otherwise.
                Direction::LowerIsBetter
            } else {
                row.direction
            },
        };
        let v = verdict(&evidence, options);
        row.changes.push(Change {
            column: item.column,
            change: item.change,
            absolute: item.absolute,
            p_mann_whitney: item.tests.p_mann_whitney,
            p_welch: item.tests.p_welch,
            p: item.tests.p,
            q,
            tested: family_of.get(i).copied().unwrap_or_default(),
            effect_size: item.tests.effect_size,
            cliffs_delta: item.tests.cliffs_delta,
            ratio_ci,
            lkp: lkp_record.cloned(),
            verdict: v,
            basis: change_basis(&evidence, options, v),
        });
    }

    Ok(CompareResult {
        axes: input.axes.clone(),
        compare_axis: input.compare_axis.clone(),
        columns: columns
            .iter()
            .map(|c| ColumnInfo {
                label: c.label.clone(),
                subject: c.subject.clone(),
                ok_runs: c.ok_runs(),
                failed_runs: c.failed_runs,
            })
            .collect(),
        rows,
        options: options.clone(),
    })
}

fn validate_options(o: &CompareOptions) -> Result<(), CompareError> {
    let bad = |option: &'static str, why: &str| Err(CompareError::InvalidOption { option, why: why.to_string() });
    if !(o.fdr > 0.0 && o.fdr < 1.0) {
        return bad("fdr", "must be between 0 and 1, e.g. 0.05");
    }
    if !(o.confidence > 0.0 && o.confidence < 1.0) {
        return bad("confidence", "must be between 0 and 1, e.g. 0.95");
    }
    if !(o.min_change_pct >= 0.0 && o.min_abs_change >= 0.0) {
        return bad("min_change_pct/min_abs_change", "must be zero or positive");
    }
    Ok(())
}

/// Checks a measurement pair before testing: NaN/inf samples, then too few runs under Culprit's rule.
fn pair_problem(b: &[f64], o: &[f64], options: &CompareOptions) -> Option<InconclusiveReason> {
    if let Some(problem) = stats::check_samples(b) {
        return Some(match problem {
            SampleProblem::Empty => InconclusiveReason::NoSuccessfulRuns { side: Side::Base },
            p => InconclusiveReason::BadSamples { side: Side::Base, problem: p },
        });
    }
    if let Some(problem) = stats::check_samples(o) {
        return Some(match problem {
            SampleProblem::Empty => InconclusiveReason::NoSuccessfulRuns { side: Side::Other },
            p => InconclusiveReason::BadSamples { side: Side::Other, problem: p },
        });
    }
    if matches!(options.rule, DecisionRule::Culprit) && (b.len() < options.min_runs || o.len() < options.min_runs) {
        return Some(InconclusiveReason::TooFewRuns { base: b.len(), other: o.len(), needed: options.min_runs });
    }
    None
}

/// The pair's tests. Its p-value is min(1, 2 * min(p_MannWhitney, p_Welch)).
///
/// Mann-Whitney holds without normality and resists outliers; Welch has more power when the runs are close to
/// normal, which benchmark noise often is, and unlike an exact rank test it can reach small p-values with 3 runs
/// a side. Taking the smaller p is the better of both, and doubling it (Bonferroni over the two tests) keeps the
/// false-alarm rate at its nominal level. Two constant, identical samples skip the tests (p = 1): the common
/// perf-profile case of a symbol at 0.00 on both sides.
/// A side whose standard deviation is at most this fraction of the values' magnitude is constant: what is left is
/// rounding in the last bits of a double, not noise.
const CONSTANT_RELATIVE_SPREAD: f64 = 1e-12;
/// Two constant sides are apart when their means differ by more than this fraction of the values' magnitude: a
/// thousand times the spread that still counts as constant, far above rounding and far below any change floor.
const CONSTANT_APART_RELATIVE: f64 = 1e-9;

fn pair_tests(b: &[f64], o: &[f64], rank_tables: &mut RankTables) -> PairTests {
    let first = b.first().copied().unwrap_or(0.0);
    if b.iter().chain(o.iter()).all(|&x| x == first) {
        return PairTests {
            constant_ratio: None,
            p: Some(1.0),
            p_mann_whitney: Some(1.0),
            p_welch: Some(1.0),
            effect_size: None,
            cliffs_delta: Some(0.0),
        };
    }
    let (m, n) = (o.len(), b.len());
    // U of the other side: the Cliff's delta is then positive when the other side is larger.
    let mw = rank_tables.mann_whitney_u(o, b);
    let p_mw = mw.map(|r| r.p);
    let cliffs_delta = mw.map(|r| r.cliffs_delta(m, n));
    // Two sides that are each constant (to rounding) leave Welch's t without a noise to divide by: it would say
    // p = 0 (or 1e-67 for a constant that is not exactly representable) and Cohen's d would be astronomical, while
    // five runs a side cannot show more than the rank test's smallest p. Only the rank test speaks then.
    let scale = stats::mean(b).unwrap_or(0.0).abs().max(stats::mean(o).unwrap_or(0.0).abs());
    let constant = |xs: &[f64]| stats::sample_variance(xs).is_none_or(|v| v.sqrt() <= CONSTANT_RELATIVE_SPREAD * scale);
    if constant(b) && constant(o) {
        // Beyond 10 runs a side the rank test runs on its normal approximation, which with ties this many goes
        // below what any permutation of the runs can show: the two sides apart is one arrangement in C(m + n, n),
        // each way.
        let arrangements = (1..=n).fold(1.0, |acc, k| acc * (m + k) as f64 / k as f64);
        let p = p_mw.map(|p| p.max((2.0 / arrangements).min(1.0)));
        // The sides are apart when their means differ by more than rounding could make them: sides equal but for
        // the last bits of a double stay a matter for the rank test (and the practical floor), not a change.
        let (mean_b, mean_o) = (stats::mean(b).unwrap_or(0.0), stats::mean(o).unwrap_or(0.0));
        let apart = (mean_o - mean_b).abs() > CONSTANT_APART_RELATIVE * scale;
        // A constant that appears from 0 or vanishes to 0 is as often a count at its quantum as a level: one
        // interrupt a run (`interrupts.IWI` 0 to 1), one perf sample in a profile of a thousand (0.10%), a clock tick
        // of CPU time. Such a pair is the rank test's alone (p = 0.1 at 3 runs a side, 0.008 at 5); only two constant
        // levels apart stand in for it.
        let levels = mean_b != 0.0 && mean_o != 0.0;
        let constant_ratio = Some(stats::change_ratio(mean_b, mean_o)).filter(|_| apart && levels);
        return PairTests { constant_ratio, p, p_mann_whitney: p_mw, p_welch: None, effect_size: None, cliffs_delta };
    }
    let welch = stats::welch_t_test(b, o);
    let p_welch = welch.map(|w| w.p);
    let best = p_mw.unwrap_or(1.0).min(p_welch.unwrap_or(1.0));
    PairTests {
        constant_ratio: None,
        p: Some((2.0 * best).min(1.0)),
        p_mann_whitney: p_mw,
        p_welch,
        effect_size: stats::cohens_d(b, o),
        cliffs_delta,
    }
}

/// lkp's changed-stat records of one column, by metric name.
type LkpRecords = BTreeMap<String, lkp_rules::LkpChange>;

/// Under `--lkp-rules`: per non-base column, lkp's changed-stat records by metric name (index 0 is unused).
fn lkp_decisions(input: &Comparison, options: &CompareOptions) -> Option<Vec<LkpRecords>> {
    let DecisionRule::Lkp(lkp_options) = &options.rule else { return None };
    let base = input.columns.first()?;
    let base_matrix: lkp_rules::Matrix = base.metrics.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let mut out = vec![BTreeMap::new()];
    for col in input.columns.iter().skip(1) {
        let matrix: lkp_rules::Matrix = col.metrics.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let changed = lkp_rules::changed_stats(&matrix, &base_matrix, false, lkp_options);
        out.push(changed.into_iter().map(|c| (c.stat.clone(), c)).collect());
    }
    Some(out)
}
