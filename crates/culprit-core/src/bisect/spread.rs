//! Builds that differ: whether commits the outcome puts at one level differ from each other by more than their runs
//! explain, the sign of per-build offsets (code layout) or of load that came and went.
//!
//! A build's code layout can move a benchmark by a percent or two where nothing it runs has changed (docs/kernel.md,
//! "Code layout"). The machine's model has one level per side of a change, so such offsets are read as noise when they
//! are small and as steps when one commit's build happens to differ from its parent's: the simulator's layout noise
//! (`--noise layout`) named a false culprit that way in about one job in twelve (one in twenty with the replication of
//! `replicate.rs`). The outcome cannot tell the two apart from the culprit and its parent alone, but the other commits
//! it measured can: commits on one side of every reported step should sit at one level, and when their means scatter
//! more than their runs allow, the outcome says so, with the size of the scatter, so that a maintainer reads a step of
//! that size with suspicion and rebuilds with a fixed alignment before acting on it. The caveat itself decides nothing;
//! the same test at a looser level, on the runs taken when a candidate is about to be blamed, is what has the candidate
//! replicated on the builds beside it first (`replicate.rs`).

use super::posterior::WeightedRuns;
use super::*;

/// The significance at which the commits of one side are said to differ by more than their runs explain.
const SPREAD_ALPHA: f64 = 0.01;

/// The most one commit adds to Q (a 3 standard error deviation): an outlier in a commit of one run cannot be
/// down-weighted by its own commit's runs, and without the cap one such run decided the test.
const SPREAD_MAX_SQUARE: f64 = 9.0;

/// Runs within commits (beyond one per commit) needed before the run-to-run noise is trusted for the test.
const SPREAD_MIN_WITHIN_DOF: f64 = 8.0;

/// Runs of one commit recorded at most this many records apart belong to one visit: interleaved runs (pairs, the
/// ends with a middle commit, the four builds of a replication) take turns, so one request's runs of a commit sit
/// up to four records apart.
const VISIT_GAP: f64 = 4.0;

/// Runs a commit needs to take part in the replication's trigger: one run cannot tell its build's offset from a
/// spike of the machine's (wall time on a shared host), and on the README's demo such runs alone fired it.
const TRIGGER_MIN_RUNS: usize = 2;

/// The significance at which one commit's visits are said to differ by more than their runs explain: the machine's
/// level moved between them, so commits measured at different times differ for that reason too.
const VISITS_DIFFER_P: f64 = 0.05;

/// Commits that the outcome puts at one level but whose means differ by more than their runs explain.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BuildSpread {
    /// Commits with runs that took part in the test.
    pub commits: usize,
    /// The estimated standard deviation of a commit's own offset, in the metric's units (method of moments; the cap
    /// on each commit's part of Q makes it an underestimate when commits differ by several standard errors).
    pub spread: f64,
    /// The run-to-run standard deviation within commits, in the metric's units, of the runs as the machine reads
    /// them (corrected for drift and load, outliers down-weighted), so it can be below a commit's raw spread.
    pub noise: f64,
    /// The test's p-value: the chance of a scatter at least this large if every side sat at one level.
    pub p_value: f64,
}

impl Bisect {
    /// The test of [`BuildSpread`] on the finished outcome's `culprits`: `None` when there are none, when too few
    /// runs were repeated to know the noise, or when the scatter is within what the runs explain.
    ///
    /// Each tested commit is put on a side by which reported steps it contains; commits strictly inside an
    /// unlocated range are left out (their side is unknown). Within a side, a commit's mean is weighed by its runs;
    /// Q, the weighed squares of the means around their side's mean in units of the run-to-run variance, is
    /// compared with the F distribution (the variance is estimated from the runs within commits). Runs are read as
    /// the posterior reads them: drift- and load-corrected, outliers down-weighted.
    pub(super) fn build_spread(&self, culprits: &[Culprit]) -> Option<BuildSpread> {
        self.build_spread_at(culprits, SPREAD_ALPHA)
    }

    /// [`Bisect::build_spread`] at significance `alpha`.
    pub(super) fn build_spread_at(&self, culprits: &[Culprit], alpha: f64) -> Option<BuildSpread> {
        let (members, sides) = self.spread_sides(culprits)?;
        let moments = self.commit_moments(&members, self.drift());
        build_spread_of(&sides, &moments, alpha)
    }

    /// The replication's trigger: whether the commits `culprits` put at one level differ by more than their runs
    /// explain at significance `alpha` ([`Bisect::build_spread_at`]), and still do when only commits with
    /// [`TRIGGER_MIN_RUNS`] runs are read and, where the same commit's visits differ, by more than its visits
    /// explain.
    ///
    /// On a machine whose level moves with time (wall time on a shared host; one real bisect of the README's demo
    /// measured good 10% slower in one visit than in another), commits measured at different times differ for
    /// that reason alone, and one run of a commit can be a spike of the machine's; the build-spread test reads
    /// both as builds that differ, and each such reading costs a replication (up to 4 more builds). Builds that
    /// differ keep their offsets from one visit to the next, so the visits of one commit tell the two apart: when
    /// they differ beyond their runs ([`VISITS_DIFFER_P`]), each commit's mean is given the variance its visits add
    /// (a variance component estimated from them), and the commits must differ beyond that.
    pub(super) fn builds_differ(&self, culprits: &[Culprit], alpha: f64) -> bool {
        let Some((members, sides)) = self.spread_sides(culprits) else {
            return false;
        };
        let (runs, visits) = self.visits(&members, self.drift());
        let totals: Vec<model::Moments> = visits.iter().map(|commit| sum_moments(commit)).collect();
        if build_spread_of(&sides, &totals, alpha).is_none() {
            return false;
        }
        let noise = match VisitNoise::estimate(&visits) {
            Some(noise) => noise,
            // Visits that agree: the runs' variance about their commits' means, and no visit variance.
            None => match pooled_variance(&totals) {
                Some((run_variance, dof)) => VisitNoise { run_variance, visit_variance: 0.0, dof },
                None => return true,
            },
        };
        // Each commit's mean, with the variance its runs and its visits give it.
        let mut grouped: BTreeMap<&[bool], Vec<(f64, f64)>> = BTreeMap::new();
        for (((side, commit), total), runs) in sides.iter().zip(&visits).zip(&totals).zip(&runs) {
            if total.w > 0.0 && runs.len() >= TRIGGER_MIN_RUNS {
                let share_squares: f64 = commit.iter().map(|v| (v.w / total.w).powi(2)).sum();
                let variance = noise.run_variance / total.w + noise.visit_variance * share_squares;
                grouped.entry(side.as_slice()).or_default().push((total.y / total.w, variance));
            }
        }
        let (mut q, mut dof) = (0.0, 0.0);
        for side in grouped.values().filter(|side| side.len() >= 2) {
            let precision: f64 = side.iter().map(|c| 1.0 / c.1).sum();
            let mean = side.iter().map(|c| c.0 / c.1).sum::<f64>() / precision;
            q += side.iter().map(|c| ((c.0 - mean).powi(2) / c.1).min(SPREAD_MAX_SQUARE)).sum::<f64>();
            dof += side.len() as f64 - 1.0;
        }
        f_upper_tail(q, dof, noise.dof).is_some_and(|p| p < alpha)
    }

    /// The variance the machine's level adds to one visit of a commit, beyond its runs' noise, from the tested
    /// commits visited more than once: zero unless their visits differ by more than their runs explain (see
    /// [`Bisect::builds_differ`]). Builds measured at different times differ by this much more.
    pub(super) fn visit_variance(&self, slope: f64) -> f64 {
        let members: Vec<usize> =
            (0..self.values.len()).filter(|&c| !self.untestable[c] && !self.values[c].is_empty()).collect();
        let (_, visits) = self.visits(&members, slope);
        VisitNoise::estimate(&visits).map_or(0.0, |noise| noise.visit_variance)
    }

    /// Per member, its runs as the posterior reads them ([`Bisect::weighted_runs`]) and their visits' moments
    /// ([`visit_moments`]).
    fn visits(&self, members: &[usize], slope: f64) -> (WeightedRuns, Vec<Vec<model::Moments>>) {
        let runs = self.weighted_runs(members, slope);
        let visits = runs.iter().map(|commit| visit_moments(commit)).collect();
        (runs, visits)
    }

    /// The tested commits the build-spread tests read, with each one's side of `culprits` (which of them it
    /// contains); commits strictly inside an unlocated range are left out. `None` without culprits.
    pub(super) fn spread_sides(&self, culprits: &[Culprit]) -> Option<(Vec<usize>, Vec<Vec<bool>>)> {
        if culprits.is_empty() {
            return None;
        }
        let inside_a_range = |c: usize| {
            culprits
                .iter()
                .filter(|k| !k.located)
                .any(|k| c != k.commit && self.topology.in_segment(c, k.after, k.commit))
        };
        let members: Vec<usize> = (0..self.values.len())
            .filter(|&c| !self.untestable[c] && !self.values[c].is_empty() && !inside_a_range(c))
            .collect();
        let sides =
            members.iter().map(|&c| culprits.iter().map(|k| self.topology.contains(k.commit, c)).collect()).collect();
        Some((members, sides))
    }

    /// The most probable change location over the whole range, as an unconfirmed culprit: the split an inconclusive
    /// outcome's caveat is tested on.
    pub(super) fn most_probable_step(&self) -> Option<Culprit> {
        let (lo, hi) = (0, self.values.len().checked_sub(1)?);
        let posterior = self.posterior(lo, hi, self.drift())?;
        let (commit, confidence) = posterior.best_class()?;
        let after = self.topology.first_parent(commit).unwrap_or(lo);
        Some(Culprit { confidence, step: posterior.delta, ..Culprit::unmeasured(commit, after) })
    }
}

/// How many times the spread between builds a located step must be for the caution to be left out of the summary
/// and the mail: two builds' offsets differ with a standard deviation of sqrt(2) times the spread, so a step this
/// size would be an offset difference of over 7 of those, and "a step a few times that size can be a build's own"
/// does not apply. The demo's real bisect printed the caution beside a step 68.5 times the spread (its commits
/// differed by 0.2 ms on a 52 ms run, the step was 15 ms). `--json` keeps `build_spread` whatever the ratio.
pub const CAVEAT_STEP_RATIO: f64 = 10.0;

impl Outcome {
    /// The caveat on this outcome's culprits (or on its most probable step, when inconclusive), in words, when builds
    /// differ (see [`BuildSpread::caveat`]) by enough to matter beside the smallest located step
    /// ([`BuildSpread::dwarfed_by`]).
    pub fn caveat(&self) -> Option<String> {
        let smallest = self.culprits.iter().filter(|c| c.located).map(|c| c.step.abs()).min_by(f64::total_cmp);
        let spread = self.build_spread?;
        if smallest.is_some_and(|step| spread.dwarfed_by(step)) {
            return None;
        }
        Some(spread.caveat(smallest))
    }
}

impl BuildSpread {
    /// Whether a step of `step` (in the metric's units) stands [`CAVEAT_STEP_RATIO`] times or more above the spread
    /// between builds, so that no build's offset could be it.
    pub fn dwarfed_by(&self, step: f64) -> bool {
        self.spread > 0.0 && step.abs() >= CAVEAT_STEP_RATIO * self.spread
    }

    /// The caveat in words, for the bisect's summary and the report's mail alike; `smallest_step` is the smallest
    /// step among the located culprits, in the metric's units, when there is one.
    pub fn caveat(&self, smallest_step: Option<f64>) -> String {
        let amount = |x: f64| crate::compare::render::format_mean(x).trim().to_string();
        let compared = match smallest_step {
            Some(step) if self.spread > 0.0 => {
                format!("; the smallest step named is {:.1} times the spread", step.abs() / self.spread)
            }
            _ => String::new(),
        };
        format!(
            "caution: tested commits on one side of the change differ by more than their runs explain (a spread of \
             {} between commits, where runs corrected for drift and load vary by {} within a commit; {} commits, p = \
             {}). Per-build offsets such as code layout, or load that came and went, move levels this much, so a \
             step a few times that size can be a build's own{compared}. Before acting on it, rebuild with a fixed \
             function alignment (CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B=y, or -falign-functions=64) and compare \
             again (docs/kernel.md, \"Code layout\").",
            amount(self.spread),
            amount(self.noise),
            self.commits,
            crate::compare::render::format_p(self.p_value)
        )
    }
}

/// The upper tail of the F distribution with `dof` and `error_dof` degrees of freedom at `q / dof`; `None` when
/// either has fewer than one degree of freedom.
pub(super) fn f_upper_tail(q: f64, dof: f64, error_dof: f64) -> Option<f64> {
    if dof < 1.0 || error_dof < 1.0 {
        return None;
    }
    let f = statrs::distribution::FisherSnedecor::new(dof, error_dof).ok()?;
    Some(1.0 - statrs::distribution::ContinuousCDF::cdf(&f, q / dof))
}

/// One commit's runs ((record index, weight, value), in recorded order) split into visits: a new visit starts
/// where the commit's runs are more than [`VISIT_GAP`] records apart.
fn visit_moments(runs: &[(f64, f64, f64)]) -> Vec<model::Moments> {
    let mut visits: Vec<model::Moments> = Vec::new();
    let mut last: Option<f64> = None;
    for &(t, weight, value) in runs {
        if last.is_none_or(|previous| t - previous > VISIT_GAP) {
            visits.push(model::Moments::default());
        }
        if let Some(visit) = visits.last_mut() {
            visit.add(weight, value);
        }
        last = Some(t);
    }
    visits
}

/// How much a visit's level moves beyond its runs' noise, from the commits visited more than once.
#[derive(Debug, Clone, Copy, PartialEq)]
struct VisitNoise {
    /// The variance of one run about its visit's level.
    run_variance: f64,
    /// The variance of a visit's own level about its commit's (method of moments).
    visit_variance: f64,
    /// Degrees of freedom of the visits' scatter, from which `visit_variance` is known.
    dof: f64,
}

impl VisitNoise {
    /// `None` unless the visits of the same commits (`visits`, per commit) differ by more than their runs explain
    /// at [`VISITS_DIFFER_P`].
    fn estimate(visits: &[Vec<model::Moments>]) -> Option<VisitNoise> {
        let (run_variance, within_dof) = pooled_variance(visits.iter().flatten())?;
        let (mut q, mut dof, mut weight) = (0.0, 0.0, 0.0);
        for commit in visits {
            let seen: Vec<model::Moments> = commit.iter().copied().filter(|v| v.w > 0.0).collect();
            if seen.len() >= 2 {
                let scatter = Scatter::of(&seen, run_variance);
                (q, dof, weight) = (q + scatter.q, dof + scatter.dof, weight + scatter.weight);
            }
        }
        let p_value = f_upper_tail(q, dof, within_dof)?;
        (p_value < VISITS_DIFFER_P).then(|| VisitNoise {
            run_variance,
            visit_variance: (q - dof).max(0.0) * run_variance / weight,
            dof,
        })
    }
}

/// The test of [`BuildSpread`] on the tested commits' `moments`, each on its side (`sides`, as
/// [`Bisect::spread_sides`] gives them).
fn build_spread_of(sides: &[Vec<bool>], moments: &[model::Moments], alpha: f64) -> Option<BuildSpread> {
    let (variance, within_dof) = pooled_variance(moments)?;
    let mut grouped: BTreeMap<&[bool], Vec<model::Moments>> = BTreeMap::new();
    for (side, m) in sides.iter().zip(moments).filter(|(_, m)| m.w > 0.0) {
        grouped.entry(side.as_slice()).or_default().push(*m);
    }
    let (mut q, mut dof, mut weight) = (0.0, 0.0, 0.0);
    for side in grouped.values().filter(|side| side.len() >= 2) {
        let scatter = Scatter::of(side, variance);
        (q, dof, weight) = (q + scatter.q, dof + scatter.dof, weight + scatter.weight);
    }
    let p_value = f_upper_tail(q, dof, within_dof)?;
    (p_value < alpha).then(|| BuildSpread {
        commits: moments.len(),
        spread: ((q - dof).max(0.0) * variance / weight).sqrt(),
        noise: variance.sqrt(),
        p_value,
    })
}

/// The variance of runs about their own group's mean, pooled over `groups` (commits, or visits), and its degrees of
/// freedom; `None` with fewer than [`SPREAD_MIN_WITHIN_DOF`] or no scatter at all.
fn pooled_variance<'a>(groups: impl IntoIterator<Item = &'a model::Moments>) -> Option<(f64, f64)> {
    let (within, within_dof) = within_squares(groups);
    (within_dof >= SPREAD_MIN_WITHIN_DOF && within > 0.0).then(|| (within / within_dof, within_dof))
}

/// The squares of runs about their own group's mean, summed over the groups of two runs or more, and their degrees
/// of freedom: [`pooled_variance`] before its bar on the degrees of freedom.
pub(super) fn within_squares<'a>(groups: impl IntoIterator<Item = &'a model::Moments>) -> (f64, f64) {
    let (mut within, mut within_dof) = (0.0, 0.0);
    for m in groups.into_iter().filter(|m| m.w > 1.0) {
        within += m.squares_about_mean();
        within_dof += m.w - 1.0;
    }
    (within, within_dof)
}

/// How far the means of `groups` scatter around their weighted mean, in units of a run's `variance`; the default is
/// no scatter at all (nothing to read it from).
#[derive(Default)]
pub(super) struct Scatter {
    /// The weighted squares, each group's capped (at [`SPREAD_MAX_SQUARE`] for the build-spread tests).
    pub(super) q: f64,
    /// Groups less one.
    pub(super) dof: f64,
    /// The weight that turns `q - dof` into a variance of the groups' own levels (method of moments).
    pub(super) weight: f64,
}

impl Scatter {
    fn of(groups: &[model::Moments], variance: f64) -> Scatter {
        Scatter::capped(groups, variance, SPREAD_MAX_SQUARE)
    }

    /// [`Scatter::of`] with each group's part of `q` capped at `cap` instead.
    pub(super) fn capped(groups: &[model::Moments], variance: f64, cap: f64) -> Scatter {
        let total: f64 = groups.iter().map(|m| m.w).sum();
        let mean = groups.iter().map(|m| m.y).sum::<f64>() / total;
        Scatter {
            q: groups.iter().map(|m| (m.w * (m.y / m.w - mean).powi(2) / variance).min(cap)).sum(),
            dof: groups.len() as f64 - 1.0,
            weight: total - groups.iter().map(|m| m.w * m.w).sum::<f64>() / total,
        }
    }

    /// The scatter of `groups` (in history order) around the levels of the split in two, between neighbours, that
    /// leaves the least: what is left once one further step among them is allowed for. A side of one or two groups
    /// has nothing left (no degrees of freedom).
    pub(super) fn split_in_two(groups: &[model::Moments], variance: f64) -> Scatter {
        let uncapped = |part: &[model::Moments]| match part {
            [] | [_] => Scatter::default(),
            _ => Scatter::capped(part, variance, f64::INFINITY),
        };
        (1..groups.len())
            .map(|at| {
                let (before, after) = (uncapped(&groups[..at]), uncapped(&groups[at..]));
                Scatter { q: before.q + after.q, dof: before.dof + after.dof, weight: before.weight + after.weight }
            })
            .min_by(|a, b| a.q.total_cmp(&b.q))
            .unwrap_or_default()
    }
}

/// The moments of all of `parts` together.
fn sum_moments(parts: &[model::Moments]) -> model::Moments {
    parts.iter().fold(model::Moments::default(), |acc, m| acc.plus(m))
}
