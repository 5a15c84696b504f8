//! Phase 2, locate: where the next runs go, chosen for expected information per unit of cost.

use super::staircase::PROBE_FROM_MASS;
use super::*;

/// Runs per visit considered when choosing where to measure next.
pub(super) const VISIT_SIZES: [usize; 6] = [1, 2, 3, 4, 6, 8];
/// Runs at one commit beyond which locating measures elsewhere.
pub(super) const LOCATE_RUNS_CAP: usize = 16;
/// Posterior mass enough to verify when the candidate and its parent have reached the runs cap.
pub(super) const SATURATED_CONFIDENCE: f64 = 0.8;
/// Each end of a segment keeps at least 1/this of the runs of the segment's interior commits.
pub(super) const END_SHARE_DIVISOR: usize = 8;

impl Bisect {
    /// Phase 2. Returns true when runs were asked for.
    pub(super) fn locate(&mut self, segment: Segment, slope: f64) -> bool {
        let Some(posterior) = self.posterior(segment.lo, segment.hi, slope) else {
            self.note("locate", "skip".into(), "empty segment".into());
            self.next_segment();
            return false;
        };
        if segment.top {
            if let Some(evidence) = self.difference_faded(segment, slope) {
                self.note("locate", "test good and bad again: the difference faded".into(), evidence);
                self.phase = Phase::Reproduce { segment, start_records: 0 };
                return false;
            }
        }
        // A residual, or a merged branch, opened by a reproduce test on a few runs a side: once its ends' runs show
        // its change surely below a residual worth a search, the search of it ends, as the reproduce test would
        // have ended it on these runs (see [`Bisect::below_residual_floor`]).
        let searched_as_such = self.narrowing.contains(&(segment.lo, segment.hi))
            || self.stretch_searches.contains(&(segment.lo, segment.hi));
        if !segment.top && !searched_as_such {
            if let Some((change, evidence)) = self.below_residual_floor(segment, slope) {
                self.no_further_contributor("locate", segment, change, evidence);
                self.next_segment();
                return false;
            }
        }
        if self.settle_staircase(segment, slope, "locate") {
            // Either the segment ended (nothing pending: decide again) or pairs were asked for.
            return !self.pending.is_empty();
        }
        let Some((best, mass)) = posterior.best_class() else {
            self.next_segment();
            return false;
        };
        // Commits that look in between are probed once one commit holds a tenth of the posterior: before that, they
        // are mostly visits of two or three runs on the way down, and probing them is what single steps paid for.
        // A range being narrowed is one side of a settled staircase's middle commit: it holds one step of the
        // series, and a commit that looks in between there is a visit's bad luck (probing inside narrowed ranges
        // cost two 1.5 sigma steps 217 runs a job instead of 201, two 1 sigma steps 255 instead of 239). Should it
        // hold two, verifying the first finds that it explains only part and the rest is searched.
        let narrowed = self.narrowing.contains(&(segment.lo, segment.hi));
        if mass >= PROBE_FROM_MASS && !narrowed && self.probe_between(segment, slope) {
            return !self.pending.is_empty();
        }
        let parent_of_best = self.reference_parent(segment, best, &posterior);
        // When the best commit and its parent have both had all the runs locating gives one commit and the mass
        // still falls short (one of them measures between the levels), fresh paired runs decide instead.
        let saturated = self.values[best].len() >= LOCATE_RUNS_CAP
            && (parent_of_best == segment.lo || self.values[parent_of_best].len() >= LOCATE_RUNS_CAP)
            && mass >= SATURATED_CONFIDENCE;
        if (mass >= self.config.confidence || saturated) && !self.untestable[best] {
            // A commit already blamed is not blamed twice: the segment's change is the step it was confirmed for.
            // After merges, a segment searched for the rest of a change can still hold a commit blamed before
            // (its history reaches past the segment's start), and one job named a commit twice.
            if self.culprits.iter().any(|c| c.located && c.commit == best) {
                self.note(
                    "locate",
                    format!("commit {best} is blamed already"),
                    format!(
                        "posterior {mass:.4} on it: the change of ({}, {}] is the step it was confirmed for",
                        segment.lo, segment.hi
                    ),
                );
                self.narrowing_ended(segment, false);
                self.next_segment();
                return false;
            }
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
        match self.next_visit(segment, &posterior) {
            Some((score, c, m, qc)) => {
                let new = if self.values[c].is_empty() { "new " } else { "" };
                self.note(
                    "locate",
                    format!("run {new}commit {c} {}", super::times(m)),
                    format!(
                        "best class {best} holds {mass:.4}; P(change by {c}) = {qc:.3}; {score:.4} bits per unit cost \
                         (step {:.2} times a run's noise)",
                        posterior.delta / posterior.sigma
                    ),
                );
                self.ask(vec![(c, m)]);
                true
            }
            None => {
                self.note("locate", "give up".into(), "no testable commit left to measure".into());
                self.segment_unresolved(segment, "no testable commit left to measure", None);
                false
            }
        }
    }

    /// The next visit locating makes: [`Bisect::information_choice`] over lo and every testable commit of the
    /// segment.
    pub(super) fn next_visit(&self, segment: Segment, posterior: &Posterior) -> Option<(f64, usize, usize, f64)> {
        let mut candidates = vec![segment.lo];
        candidates.extend(posterior.hypotheses.iter().copied().filter(|&c| !self.untestable[c]));
        if self.topology.is_linear() {
            candidates.sort_unstable();
        }
        let containment = self.containment(posterior, &candidates);
        self.information_choice(segment, posterior, &candidates, &containment)
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
    pub(super) fn information_choice(
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
}
