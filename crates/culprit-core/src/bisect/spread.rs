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

use super::*;

/// The significance at which the commits of one side are said to differ by more than their runs explain.
const SPREAD_ALPHA: f64 = 0.01;

/// The most one commit adds to Q (a 3 standard error deviation): an outlier in a commit of one run cannot be
/// down-weighted by its own commit's runs, and without the cap one such run decided the test.
const SPREAD_MAX_SQUARE: f64 = 9.0;

/// Runs within commits (beyond one per commit) needed before the run-to-run noise is trusted for the test.
const SPREAD_MIN_WITHIN_DOF: f64 = 8.0;

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
        let moments = self.commit_moments(&members, self.drift());
        let (mut within, mut within_dof) = (0.0, 0.0);
        for m in moments.iter().filter(|m| m.w > 1.0) {
            within += m.squares_about_mean();
            within_dof += m.w - 1.0;
        }
        if within_dof < SPREAD_MIN_WITHIN_DOF || !(within > 0.0) {
            return None;
        }
        let variance = within / within_dof;
        let mut sides: BTreeMap<Vec<bool>, Vec<model::Moments>> = BTreeMap::new();
        for (&c, m) in members.iter().zip(&moments).filter(|(_, m)| m.w > 0.0) {
            let side = culprits.iter().map(|k| self.topology.contains(k.commit, c)).collect();
            sides.entry(side).or_default().push(*m);
        }
        let (mut q, mut dof, mut weight) = (0.0, 0.0, 0.0);
        for side in sides.values().filter(|side| side.len() >= 2) {
            let total: f64 = side.iter().map(|m| m.w).sum();
            let mean = side.iter().map(|m| m.y).sum::<f64>() / total;
            q += side.iter().map(|m| (m.w * (m.y / m.w - mean).powi(2) / variance).min(SPREAD_MAX_SQUARE)).sum::<f64>();
            dof += side.len() as f64 - 1.0;
            weight += total - side.iter().map(|m| m.w * m.w).sum::<f64>() / total;
        }
        if dof < 1.0 {
            return None;
        }
        let f = statrs::distribution::FisherSnedecor::new(dof, within_dof).ok()?;
        let p_value = 1.0 - statrs::distribution::ContinuousCDF::cdf(&f, q / dof);
        (p_value < alpha).then(|| BuildSpread {
            commits: members.len(),
            spread: ((q - dof).max(0.0) * variance / weight).sqrt(),
            noise: variance.sqrt(),
            p_value,
        })
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

impl Outcome {
    /// The caveat on this outcome's culprits (or on its most probable step, when inconclusive), in words, when builds
    /// differ (see [`BuildSpread::caveat`]).
    pub fn caveat(&self) -> Option<String> {
        let smallest = self.culprits.iter().filter(|c| c.located).map(|c| c.step.abs()).min_by(f64::total_cmp);
        self.build_spread.map(|spread| spread.caveat(smallest))
    }
}

impl BuildSpread {
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
