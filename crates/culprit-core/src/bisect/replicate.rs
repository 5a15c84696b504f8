//! Replication across builds: where builds differ, a culprit's step must also separate the builds next to it, not
//! only its own build from its parent's.
//!
//! Code layout gives every build an offset of its own (docs/kernel.md, "Code layout"), so a commit can differ from
//! its parent by a few percent where nothing it changes is run, and the fresh pairs, which re-measure the same two
//! builds, confirm it. A real step moves every build after it. So when the tested commits already show builds that
//! differ (the build-spread test of `spread.rs`, at a loose level), the candidate is only blamed once the
//! [`REPLICATE_NEIGHBOURS`] testable commits after it sit above the ones before its parent, each build's mean
//! counted as one observation whose spread (builds' offsets plus their runs' noise) the builds estimate. The
//! candidate and its parent are left out of that comparison: they were chosen because they differ, so their
//! offsets are biased apart. When the neighbours do not show the step, the segment ends unresolved (the bisect is
//! inconclusive), and the outcome's caveat says how much builds differ. When the candidate or its parent sits off
//! its side's builds, measured at other times than they were, the six builds are first measured again in rounds of
//! their own and judged on those rounds' runs alone, so that load over the neighbours' runs cannot refuse the step.

use super::posterior::outlier_weighted;
use super::*;

/// Testable commits beside the candidate, and beside its parent, that must show the step.
pub(super) const REPLICATE_NEIGHBOURS: usize = 2;
/// Runs each neighbouring build gets first.
pub(super) const REPLICATE_FIRST_RUNS: usize = 4;
/// Runs a neighbouring build may get while the comparison leans towards the step without showing it: where builds
/// do not differ, more runs make the builds' means, and so the comparison, more precise.
pub(super) const REPLICATE_MAX_RUNS: usize = 12;
/// One-sided level of the test that the builds after the step sit above the builds before it.
pub(super) const REPLICATE_ALPHA: f64 = 0.05;
/// The candidate must sit among the builds after it, and its parent among the builds before it, at this two-sided
/// level: a build far from its side (a visit in a burst of load, or a commit on the other side of the step that
/// the neighbours straddle) is not the step the neighbours show. Two exceptions: a build that sits away from the
/// other side by less than the step is its own offset, and still on its side ([`BuildComparison::beyond_its_side`]);
/// one that sits towards the other side by less than [`BETWEEN_MAX_SHARE`] of the step is a level between the two,
/// one step of a series ([`BuildComparison::between_the_sides`]).
pub(super) const REPLICATE_OUTSIDE_P: f64 = 0.01;
/// How far, as a share of the step between the sides, the candidate or its parent may sit towards the other side
/// and still count as on its own: below half it is nearer its own side than the other, so the step the neighbours
/// show is still mostly the candidate's (its fresh pairs measure how much).
pub(super) const BETWEEN_MAX_SHARE: f64 = 0.5;
/// Below this p-value (the builds after sit above the builds before, if not significantly) the neighbours get more
/// runs, up to [`REPLICATE_MAX_RUNS`]; above it the candidate fails at once.
pub(super) const REPLICATE_LEANING_P: f64 = 0.5;
/// Pseudo degrees of freedom of the prior guess of a build mean's variance (its runs' noise alone): with two builds
/// a side, their own scatter is a poor estimate, and a small one must not make the step look certain.
pub(super) const REPLICATE_PRIOR_DOF: f64 = 2.0;

/// What the replication check says about a candidate.
pub(super) enum Replication {
    /// Builds do not differ beyond their runs (or the check is off, or no neighbours exist): blame as before.
    NotNeeded,
    /// Runs were asked for at the neighbouring builds.
    Asked,
    /// The step holds across builds; the evidence in words.
    Holds(String),
    /// The step held across builds when this candidate was checked before: nothing new to say.
    Held,
    /// The step does not stand out from how much builds differ; the evidence in words.
    Fails(String),
}

/// The comparison of the builds after the step with the builds before it.
pub(super) struct BuildComparison {
    /// Mean of the build means after the step minus before it, oriented (positive is worse).
    pub(super) step: f64,
    pub(super) step_se: f64,
    /// One-sided p-value of "no step".
    pub(super) p_value: f64,
    /// Estimated standard deviation of a build's own offset.
    pub(super) spread: f64,
    after_mean: f64,
    before_mean: f64,
    /// The variance of one build's mean (offset and runs) the builds show, and its degrees of freedom.
    variance: f64,
    dof: f64,
    after_builds: usize,
    before_builds: usize,
}

impl BuildComparison {
    /// Compares build means `after` and `before` (each a mean and its runs' weight) where runs vary by `noise`
    /// within a build. `None` with fewer than two builds a side.
    pub(super) fn new(after: &[(f64, f64)], before: &[(f64, f64)], noise: f64) -> Option<BuildComparison> {
        if after.len() < 2 || before.len() < 2 {
            return None;
        }
        let mean = |side: &[(f64, f64)]| side.iter().map(|b| b.0).sum::<f64>() / side.len() as f64;
        let squares = |side: &[(f64, f64)], m: f64| side.iter().map(|b| (b.0 - m).powi(2)).sum::<f64>();
        let (after_mean, before_mean) = (mean(after), mean(before));
        let builds = (after.len() + before.len()) as f64;
        let dof = builds - 2.0;
        // What a build mean varies by from its runs alone: the floor of the prior guess.
        let run_part = noise * noise * after.iter().chain(before).map(|b| 1.0 / b.1).sum::<f64>() / builds;
        let variance = (squares(after, after_mean) + squares(before, before_mean) + REPLICATE_PRIOR_DOF * run_part)
            / (dof + REPLICATE_PRIOR_DOF);
        let step = after_mean - before_mean;
        let step_se = (variance * (1.0 / after.len() as f64 + 1.0 / before.len() as f64)).sqrt();
        let t = statrs::distribution::StudentsT::new(0.0, 1.0, dof + REPLICATE_PRIOR_DOF).ok()?;
        let p_value = 1.0 - statrs::distribution::ContinuousCDF::cdf(&t, step / step_se);
        Some(BuildComparison {
            step,
            step_se,
            p_value,
            spread: (variance - run_part).max(0.0).sqrt(),
            after_mean,
            before_mean,
            variance,
            dof: dof + REPLICATE_PRIOR_DOF,
            after_builds: after.len(),
            before_builds: before.len(),
        })
    }

    /// How far one more build's `mean` sits from the builds after the step (`after`) or before it, in standard
    /// errors of the difference: the builds' own spread, plus the side mean's, plus, where the machine's level moves
    /// between visits by `visit_variance`, that of the build's visits and of the one visit that measured the side's
    /// builds together.
    pub(super) fn distance(&self, mean: f64, after: bool, visit_variance: f64) -> f64 {
        let (side_mean, builds) =
            if after { (self.after_mean, self.after_builds) } else { (self.before_mean, self.before_builds) };
        (mean - side_mean) / (self.variance * (1.0 + 1.0 / builds as f64) + 2.0 * visit_variance).sqrt()
    }

    /// Whether a build's `mean`, off the builds of its side (`after` the step, or before it), sits beyond them, away
    /// from the other side, by less than the step between the sides: then it cannot belong to the other side (it
    /// would be further from that side's builds than from its own, by the whole step), so the step the neighbours
    /// show is still between the candidate and its parent, and the build's distance is an offset of its own. A real
    /// bisect's parent read 7% below the builds before it, whose step to the builds after was 25%, and the two-sided
    /// check alone ended it inconclusive. A build further away than the step is not placed by this: its own offset
    /// is then larger than the change being bisected, and nothing says which side it belongs to.
    pub(super) fn beyond_its_side(&self, mean: f64, after: bool) -> bool {
        let (side_mean, outward) = if after { (self.after_mean, 1.0) } else { (self.before_mean, -1.0) };
        let offset = (mean - side_mean) * outward;
        self.step > 0.0 && offset > 0.0 && offset < self.step
    }

    /// Whether a build's `mean`, off the builds of its side, sits towards the other side by less than
    /// [`BETWEEN_MAX_SHARE`] of the step: a level between the two sides, nearer its own. That is how a series of
    /// steps looks when the candidate's parent is an earlier step of it (or the candidate is followed by a later
    /// one): a real bisect of a 3% step just before a 33% one found the 33% commit, then read its parent 8.3
    /// standard errors above the builds before it, by 14% of the step, and ended inconclusive in one of six jobs.
    /// The candidate is still a contributor, its share measured by its fresh pairs against its parent, and the rest
    /// of the change is searched as after any culprit that explains only part. A build nearer the other side is not
    /// placed by this: the step the neighbours show may then be mostly its own.
    pub(super) fn between_the_sides(&self, mean: f64, after: bool) -> bool {
        let (side_mean, inward) = if after { (self.after_mean, -1.0) } else { (self.before_mean, 1.0) };
        let offset = (mean - side_mean) * inward;
        self.step > 0.0 && offset > 0.0 && offset < BETWEEN_MAX_SHARE * self.step
    }

    /// The two-sided [`REPLICATE_OUTSIDE_P`] bound on [`BuildComparison::distance`] for a build of that side.
    pub(super) fn outside_bound(&self) -> f64 {
        statrs::distribution::StudentsT::new(0.0, 1.0, self.dof)
            .map(|t| statrs::distribution::ContinuousCDF::inverse_cdf(&t, 1.0 - REPLICATE_OUTSIDE_P / 2.0))
            .unwrap_or(f64::INFINITY)
    }
}

impl Bisect {
    /// The testable commits nearest to `commit` after it (within the segment) and nearest to `parent` before it
    /// (the segment's start included), up to [`REPLICATE_NEIGHBOURS`] each, nearest first: the builds that share
    /// the candidate's level, and its parent's, if the step is the candidate's.
    ///
    /// In a line these are the commits just after the candidate and just before its parent. After merges, "just
    /// before" follows the parent's first parents (its own line of history, as `git log --first-parent` lists it),
    /// not the commits numbered just below it: when the parent is a merge, those are the tips of the branch it
    /// merged, which may lack changes the parent has, and in a simulated series across merged branches the second
    /// patch's merge failed the check in 18 of 200 jobs on such tips, sitting 5 standard errors above them. On
    /// either side a commit is skipped when it does not hold the same blamed commits as the candidate (after) or
    /// its parent (before): its level is not theirs.
    pub(super) fn replicating_neighbours(
        &self,
        segment: Segment,
        commit: usize,
        parent: usize,
    ) -> (Vec<usize>, Vec<usize>) {
        let testable = |c: usize| !self.untestable[c];
        let blamed: Vec<usize> =
            self.culprits.iter().filter(|c| c.located && c.commit != commit).map(|c| c.commit).collect();
        let signature = |c: usize| -> Vec<bool> { blamed.iter().map(|&b| self.topology.contains(b, c)).collect() };
        let (commit_signature, parent_signature) = (signature(commit), signature(parent));
        let after: Vec<usize> = self
            .topology
            .segment(commit, segment.hi)
            .into_iter()
            .filter(|&c| self.topology.contains(commit, c))
            .filter(|&c| testable(c) && signature(c) == commit_signature)
            .take(REPLICATE_NEIGHBOURS)
            .collect();
        let mut before = Vec::new();
        let mut m = parent;
        while before.len() < REPLICATE_NEIGHBOURS {
            match self.topology.first_parent(m) {
                Some(p) if p == segment.lo || self.topology.in_segment(p, segment.lo, segment.hi) => m = p,
                _ => break,
            }
            if testable(m) && signature(m) == parent_signature {
                before.push(m);
            }
            if m == segment.lo {
                break;
            }
        }
        // A parent whose first parents leave the segment beside its start (a branch that forked before it) still
        // has the start among its ancestors: the start is then the build before it. The walk ends on the start when it
        // reaches it, and starts there when the parent is the start, so `m != lo` covers both.
        let lo = segment.lo;
        if before.len() < REPLICATE_NEIGHBOURS
            && m != lo
            && self.topology.contains(lo, parent)
            && testable(lo)
            && signature(lo) == parent_signature
        {
            before.push(lo);
        }
        (after, before)
    }

    /// Per member, the weighted moments of its runs since record `since`, the rounds of a replication:
    /// drift-corrected and outliers down-weighted as the posterior reads runs ([`Bisect::commit_moments`]), but not
    /// corrected for load. The rounds interleave every member, so load that comes and goes falls on them alike and
    /// cancels in their differences; the load model, in contrast, can only see it on the members measured before the
    /// rounds too (the candidate and its parent), and correcting those alone set them 15 standard errors off the
    /// neighbours, whose level absorbed the load. Values are centred on the first value of the first member with
    /// runs, for precision.
    fn replication_moments(&self, members: &[usize], slope: f64, since: usize) -> Vec<model::Moments> {
        let groups: Vec<Vec<f64>> = members.iter().map(|&c| self.drift_corrected_since(c, slope, since)).collect();
        let origin = groups.iter().find_map(|g| g.first()).copied().unwrap_or(0.0);
        outlier_weighted(&groups, origin)
            .iter()
            .map(|runs| {
                let mut m = model::Moments::default();
                for &(weight, value) in runs {
                    m.add(weight, value);
                }
                m
            })
            .collect()
    }

    /// The check, for `commit` confirmed against `parent` in `segment`, where runs vary by `noise` within a commit
    /// ([`Bisect::within_noise`] of the segment).
    pub(super) fn replication(
        &mut self,
        segment: Segment,
        commit: usize,
        parent: usize,
        slope: f64,
        noise: f64,
    ) -> Replication {
        if self.config.replicate_below_p <= 0.0 {
            return Replication::NotNeeded;
        }
        if self.replicated == Some(commit) {
            return Replication::Held;
        }
        let (after, before) = self.replicating_neighbours(segment, commit, parent);
        if after.is_empty() || before.is_empty() {
            return Replication::NotNeeded;
        }
        // Whether to replicate is decided once per candidate, on the runs before it: the neighbours' own runs would
        // otherwise move the trigger while they are being measured.
        if self.replicating != Some(commit) {
            let mut culprits = self.culprits.clone();
            culprits.push(Culprit::unmeasured(commit, parent));
            if !self.builds_differ(&culprits, self.config.replicate_below_p) {
                return Replication::NotNeeded;
            }
            self.replicating = Some(commit);
            self.replicating_since = None;
        }
        // Every commit is written "commit N" so that the summary and the mail can name it by its SHA.
        let names = |side: &[usize]| side.iter().map(|c| format!("commit {c}")).collect::<Vec<_>>().join(", ");
        // Asked for alternately after and before (runs are interleaved round-robin in this order), so that load
        // that comes and goes falls on both sides alike. In rounds of their own (see below), the candidate and its
        // parent run in the same rounds, and only those rounds' runs are compared.
        let rounds = self.replicating_since;
        let alternating: Vec<usize> = (0..after.len().max(before.len()))
            .flat_map(|i| [after.get(i), before.get(i)])
            .flatten()
            .copied()
            .chain(rounds.map(|_| [commit, parent]).into_iter().flatten())
            .collect();
        let neighbours: Vec<usize> = after.iter().chain(&before).copied().collect();
        let runs_of = |m: &Bisect, c: usize| rounds.map_or(m.values[c].len(), |since| m.runs_since(c, since).count());
        let first: Vec<(usize, usize)> = alternating
            .iter()
            .map(|&c| (c, REPLICATE_FIRST_RUNS.saturating_sub(runs_of(self, c))))
            .filter(|&(_, n)| n > 0)
            .collect();
        if !first.is_empty() {
            // Rounds of their own were announced when they were asked for.
            if rounds.is_none() {
                self.note(
                    "verify",
                    format!(
                        "replicate the step at commit {commit} on the builds after it ({}) and before commit {parent} \
                         ({})",
                        names(&after),
                        names(&before)
                    ),
                    format!(
                        "tested commits on one side differ by more than their runs explain (p < {}): a step between \
                         two builds may be their own offsets",
                        self.config.replicate_below_p
                    ),
                );
            }
            self.ask(first);
            return Replication::Asked;
        }
        // One call, so that every build's mean is centred on the same origin; the candidate and its parent last.
        let members: Vec<usize> = neighbours.iter().copied().chain([commit, parent]).collect();
        let moments = match rounds {
            Some(since) => self.replication_moments(&members, slope, since),
            None => self.commit_moments(&members, slope),
        };
        let means: Vec<(f64, f64)> = moments.iter().map(|m| (m.y / m.w.max(f64::MIN_POSITIVE), m.w)).collect();
        let (after_means, rest) = means.split_at(after.len());
        let (before_means, ends) = rest.split_at(before.len());
        let (candidate_mean, parent_mean) = (ends[0].0, ends[1].0);
        let keep = |side: &[(f64, f64)]| -> Vec<(f64, f64)> { side.iter().copied().filter(|b| b.1 > 0.0).collect() };
        let Some(comparison) = BuildComparison::new(&keep(after_means), &keep(before_means), noise) else {
            return Replication::NotNeeded;
        };
        let evidence = format!(
            "the builds after it ({}) read {:.4} ± {:.4} worse than the builds before its parent ({}), p = {:.4}; \
             builds differ by {:.4}, runs by {noise:.4}",
            names(&after),
            comparison.step,
            comparison.step_se,
            names(&before),
            comparison.p_value,
            comparison.spread
        );
        // The candidate and its parent were measured minutes before the neighbours: where the machine's level moves
        // between visits, they sit off their sides' builds by that much more. A real bisect whose machine's level
        // moved a few percent in between read the candidate 5.1 standard errors above the builds after it, and
        // ended inconclusive. In rounds of their own, every build is measured in the same rounds, interleaved, and
        // the level's moves between visits fall on all of them alike.
        let visit_variance = if rounds.is_some() { 0.0 } else { self.visit_variance(slope) };
        let (candidate_off, parent_off) = (
            comparison.distance(candidate_mean, true, visit_variance),
            comparison.distance(parent_mean, false, visit_variance),
        );
        let bound = comparison.outside_bound();
        let placed = |mean: f64, after: bool| {
            comparison.beyond_its_side(mean, after) || comparison.between_the_sides(mean, after)
        };
        let outside = |off: f64, mean: f64, after: bool| off.abs() > bound && !placed(mean, after);
        if outside(candidate_off, candidate_mean, true) || outside(parent_off, parent_mean, false) {
            // The candidate and its parent were measured minutes before the neighbours, and load over the
            // neighbours' runs, which no commit measured at other times too shows to the load model, sits in their
            // levels: a burst over a replication put a 2 sigma step's candidate and parent 7 standard errors below
            // their sides' builds, and the step was not blamed (the series then reported as an unlocated range and a
            // culprit, in 25 and 37 of 160 simulated jobs with one such burst, slower and faster). Before failing,
            // the six builds are compared again in rounds of their own, the candidate and its parent among them, on
            // those rounds' runs alone.
            if rounds.is_none() {
                self.replicating_since = Some(self.records);
                self.note(
                    "verify",
                    format!(
                        "replicate the step at commit {commit} again, with commit {commit} and commit {parent} in the \
                         rounds"
                    ),
                    format!(
                        "commit {commit} sits {candidate_off:.1} and commit {parent} {parent_off:.1} standard errors \
                         from the builds on their sides, measured at other times: {evidence}"
                    ),
                );
                let rounds: Vec<(usize, usize)> =
                    alternating.iter().copied().chain([commit, parent]).map(|c| (c, REPLICATE_FIRST_RUNS)).collect();
                self.ask(rounds);
                return Replication::Asked;
            }
            return Replication::Fails(format!(
                "commit {commit} sits {candidate_off:.1} and commit {parent} {parent_off:.1} standard errors from the \
                 builds on their sides: {evidence}"
            ));
        }
        if comparison.p_value < REPLICATE_ALPHA {
            self.replicated = Some(commit);
            // Said, when a build sat off its side, so that the log shows why it did not stop the blame.
            let ends = [(commit, candidate_off, candidate_mean, true), (parent, parent_off, parent_mean, false)];
            let off_side: Vec<String> = ends
                .iter()
                .filter(|(_, off, ..)| off.abs() > bound)
                .map(|&(c, off, mean, after)| {
                    let why = if comparison.between_the_sides(mean, after) {
                        "towards the other side by less than half the step: a level between the two, as a series of \
                         steps gives"
                    } else {
                        "away from the other side by less than the step: its build's own offset"
                    };
                    format!("commit {c} sits {off:.1} standard errors from its side's builds, {why}")
                })
                .collect();
            if off_side.is_empty() {
                return Replication::Holds(evidence);
            }
            return Replication::Holds(format!("{evidence}; {}", off_side.join("; ")));
        }
        // Leaning towards the step but not showing it: more runs, while they can still help.
        let fewest = neighbours.iter().map(|&c| runs_of(self, c)).min().unwrap_or(0);
        if comparison.p_value < REPLICATE_LEANING_P && fewest < REPLICATE_MAX_RUNS {
            self.note("verify", format!("two more runs at each build replicating commit {commit}"), evidence);
            self.ask(alternating.iter().map(|&c| (c, 2)).collect());
            return Replication::Asked;
        }
        Replication::Fails(evidence)
    }
}
