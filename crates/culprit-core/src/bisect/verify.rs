//! Phase 3, verify: fresh interleaved pairs at the chosen commit and its parent, the share of the change it
//! explains, and the residual steps around it that send the search on.

use super::outcome::UnconfirmedPairs;
use super::replicate::Replication;
use super::reproduce::UPPER_99_Z;
use super::spread::{f_upper_tail, within_squares, Scatter};
use super::*;

/// A step whose share of the change between its segment's ends is surely (90% upper bound) below this explains
/// only part of it.
pub(super) const ENDS_PARTIAL_BELOW: f64 = 0.6;
/// A merge confirmed over its first parent keeps the blame after its merged branch was searched without a commit
/// found only when the branch's change is surely (99%) below this share of the merge's step: the merge then made
/// most of the change itself (see [`Bisect::merged_branch_ended`]).
pub(super) const MERGE_OWN_STEP_SHARE: f64 = 0.5;
/// After a culprit that explains most of its segment's change, a residual segment (start to parent, culprit to
/// end) whose change reaches this many standard errors, from the runs already taken, is searched too.
pub(super) const RESIDUAL_SCREEN_Z: f64 = 2.5;
/// Below [`RESIDUAL_SCREEN_Z`] but from this many standard errors, a residual step is suggested: the segment's end
/// gets more runs when it has fewer than the commit it is compared with.
pub(super) const RESIDUAL_SUSPECT_Z: f64 = 1.0;
/// A culprit whose share's lower bound exceeds this explains far more than the whole change: the runs are not
/// what the model assumes (bursts of load, a wrong parent), so it is re-examined and never simply blamed.
pub(super) const SHARE_IMPLAUSIBLE: f64 = 1.5;
/// A lone culprit's share is read against the pooled levels while the ends' change agrees with theirs at this
/// two-sided level (2 standard errors for many runs; Student's t over the ends' runs, so that 4 runs a side, whose
/// standard error is itself a guess, need 2.45), and against the ends beyond.
pub(super) const LONE_SHARE_MODEL_P: f64 = 0.0455;
/// The significance at which the commits of one side scatter enough for a lone culprit's share interval to count
/// a build's own variance (see [`Bisect::lone_step_levels`]).
pub(super) const SHARE_BUILDS_P: f64 = 0.1;
/// A commit under verification whose posterior mass falls below this share of [`BisectConfig::confidence`] (the
/// mass that sent it there) goes back to locating.
pub(super) const VERIFY_KEEP_SHARE: f64 = 0.5;
/// Fresh pairs after which an implausible share makes the segment inconclusive.
pub(super) const IMPLAUSIBLE_MAX_PAIRS: usize = 12;
/// Pseudo degrees of freedom of the prior guess of the noise of a fresh pair's difference (sqrt 2 times the
/// within-commit noise of the segment, known from every run): the few fresh pairs' own spread is shrunk towards
/// it, so that two or three pairs that happen to agree (or not) do not make the test over- or under-confident.
pub(super) const PAIR_PRIOR_DOF: f64 = 8.0;
/// The noise of the difference of two runs adjacent in time: the pairs' own variance (`dof` degrees of freedom)
/// pooled with the variance `noise` (the within-commit noise per run) predicts for a difference, 2 `noise`^2,
/// weighted as [`PAIR_PRIOR_DOF`] degrees of freedom. Verification's fresh pairs and the staircase's paired check
/// both read it, so that a few pairs which happen to agree (or not) do not make either over- or under-confident.
pub(super) fn pooled_pair_sigma(own_variance: f64, dof: f64, noise: f64) -> f64 {
    let expected_sigma = std::f64::consts::SQRT_2 * noise;
    ((dof * own_variance + PAIR_PRIOR_DOF * expected_sigma.powi(2)) / (dof + PAIR_PRIOR_DOF)).sqrt()
}

/// The Student-t (nu = 4) location of Gaussian data has about 10% more variance than the mean: its standard
/// error is the plug-in one times this.
pub(super) const T_LOCATION_INFLATION: f64 = 1.05;
/// Runs a culprit and its parent have before the culprit is blamed, whatever the evidence: the robot's table of
/// the two (compare, report) reads their stored runs, and its rank test cannot call a change with fewer (its
/// smallest two-sided p-value with n runs a side is 2 / C(2n, n): 0.1 at 3, 0.029 at 4, 0.008 at 5). A large step
/// is otherwise confirmed after three runs a side, and the email would show the blamed change as unchanged.
pub(super) const TABLE_MIN_RUNS: usize = 5;

/// A residual segment next to a confirmed step: `end` is the segment's end it reaches, `inner` the parent or
/// culprit it starts from, `z` its change in standard errors.
#[derive(Debug, Clone, Copy)]
pub(super) struct Residual {
    pub(super) end: usize,
    pub(super) inner: usize,
    pub(super) segment: Segment,
    pub(super) z: f64,
}

impl Bisect {
    /// Phase 3. Returns true when runs were asked for.
    pub(super) fn verify(&mut self, segment: Segment, commit: usize, parent: usize, start: usize, slope: f64) -> bool {
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
            // Either the segment ended (nothing pending: decide again) or pairs were asked for.
            return !self.pending.is_empty();
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
            self.keep_unconfirmed(segment, commit, parent, start, slope, posterior.delta);
            self.phase = Phase::Locate { segment };
            return false;
        }
        // Fresh runs that spread the posterior out leave the commit the most probable of many unlikely ones: QA 59's
        // bisect verified a commit for 54 pairs while its mass fell from 0.90 to 0.05, the fresh pairs showing no
        // step (0.0002 ± 0.0029) but never rejecting the step the ever smaller pooled levels predicted. Below half
        // the mass that sends a commit to verification it is no longer the candidate: locating decides where to run.
        if mass < VERIFY_KEEP_SHARE * self.config.confidence && pairs >= 2 * self.config.min_fresh_pairs {
            self.note(
                "verify",
                "back to locate".into(),
                format!(
                    "fresh runs left commit {commit} a posterior of {mass:.4}, below {:.2} (half of what sends a \
                     commit to verification)",
                    VERIFY_KEEP_SHARE * self.config.confidence
                ),
            );
            self.keep_unconfirmed(segment, commit, parent, start, slope, posterior.delta);
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
            self.keep_unconfirmed(segment, commit, parent, start, slope, seg_change);
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
            // More than the whole change at one commit: bursts of load or a wrong comparison, not a culprit; or
            // builds that differ, good's or bad's own build sitting off its side, which a step that holds across
            // the builds beside it shows (see `replicate.rs`): that one is blamed, with the caveat.
            match self.replication(segment, commit, parent, slope, noise) {
                Replication::Asked => return true,
                Replication::Fails(why) => return self.not_replicated(segment, commit, why),
                Replication::Holds(why) => self.note(
                    "verify",
                    format!("the step at commit {commit} holds across builds; the ends' builds explain its share"),
                    why,
                ),
                Replication::Held => {}
                Replication::NotNeeded => {
                    let shares = (share, share_low, share_high);
                    return self.implausible_share(segment, commit, parent, pairs, shares, &evidence);
                }
            }
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
            // Where builds differ, the step must also separate the builds beside the two (see `replicate.rs`).
            match self.replication(segment, commit, parent, slope, noise) {
                Replication::NotNeeded | Replication::Held => {}
                Replication::Asked => return true,
                Replication::Holds(why) => {
                    self.note("verify", format!("the step at commit {commit} holds across builds"), why)
                }
                Replication::Fails(why) => return self.not_replicated(segment, commit, why),
            }
            let suspects: Vec<usize> = posterior
                .hypotheses
                .iter()
                .zip(&posterior.class)
                .filter(|(&k, &class)| class == commit && k != commit)
                .map(|(&k, _)| k)
                .collect();
            // A commit found on a merged branch takes over the blame of the merge that brought it in.
            if let Some(merge) = self.take_merge_side(segment) {
                // Located, or reported as the range it brings in when another of its branches ended unsettled.
                self.culprits.retain(|c| c.commit != merge);
                self.note(
                    "verify",
                    format!("commit {commit} takes over from merge {merge}"),
                    format!("the step the merge brought in enters at commit {commit} of the merged branch"),
                );
            }
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
                // The verification that confirmed it began here: the start of this Verify phase, which a return to
                // locating and a new verification of the commit moves on to the later one.
                fresh_from: Some(start),
            });
            self.search_merged_branches(commit);
            if explains_part {
                self.part_explained = true;
                let before = Segment { lo: segment.lo, hi: parent, top: false };
                // The rest of the change was placed before and after the commit by the runs already taken, so, as
                // for a residual, each part's test reads fresh runs only: a burst of load in the runs at good once
                // passed for a contributor before the culprit, and its search spent the budget while the real
                // second step after the culprit went unsearched (2 of 1,000 bursty series jobs did so, 5 before; on
                // CI, a real series bisect).
                for s in std::iter::once(before).chain(self.parts_after(commit, segment.hi)) {
                    if s.lo != s.hi && !self.topology.segment(s.lo, s.hi).is_empty() {
                        self.fresh_only.extend([(s.lo, s.hi)]);
                        self.queue.push(s);
                    }
                }
                self.note("verify", format!("commit {commit} confirmed, explains part: search the rest"), evidence);
            } else {
                // The residual after the commit is measured between its ends (a valid test of the change left
                // there, whatever the history's shape), but searched in the parts that can be read against their
                // starts.
                let residual: Vec<Segment> = residuals
                    .iter()
                    .filter(|r| r.z >= RESIDUAL_SCREEN_Z)
                    .flat_map(|r| {
                        if r.segment.lo == commit {
                            self.parts_after(commit, r.segment.hi)
                        } else {
                            vec![r.segment]
                        }
                    })
                    .collect();
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
        // A merge whose fresh pairs show the step while the posterior from every run still doubts that it enters
        // at the merge: the doubt lies on the merged branch, which the pairs with the first parent do not measure,
        // so more pairs cannot settle it (its commit measured a few times by chance at the level before; simulated
        // histories with 300 merges in 1,000 commits: 12 of 300 jobs paired such a merge with its first parent for
        // 60 pairs and ended inconclusive). The runs go where locating would send them; the pairs taken so far stay
        // fresh. Only merges: in a line, the posterior's doubt while the pairs show a step comes from builds that
        // differ (the replication above is measuring it), and sending runs elsewhere then led an end-to-end bisect
        // of such builds to a false staircase instead of its honest "inconclusive".
        let pairs_show_step = step > 0.0 && log_ratio >= fresh_threshold;
        let merge = !self.topology.merged_parents(commit).is_empty();
        if merge && pairs_show_step && mass < 1.0 - self.config.alpha_culprit && !out_of_pairs {
            // Where locating would measure next, unless that is the pair verification measures itself.
            let elsewhere = self.next_visit(segment, &posterior).filter(|&(_, c, ..)| c != commit && c != parent);
            if let Some((_, c, m, _)) = elsewhere {
                self.note(
                    "verify",
                    format!("run commit {c} {}", super::times(m)),
                    format!("the pairs show a step, but the posterior doubts it enters at commit {commit}: {evidence}"),
                );
                self.ask(vec![(c, m)]);
                return true;
            }
        }
        if out_of_pairs {
            self.note("verify", format!("commit {commit} not confirmed"), evidence.clone());
            self.keep_unconfirmed(segment, commit, parent, start, slope, seg_change);
            self.segment_unresolved(
                segment,
                &format!("commit {commit} did not differ from commit {parent}: {evidence}"),
                Some(commit),
            );
            return false;
        }
        // One pair at a time: the sequential test may stop after any pair, and asking for two overshot its bar by
        // half a pair on average. Measured (`bisect_sim --trials 300`, seed 1 unless said): single 1.5 sigma steps
        // 108.8 -> 107.8 runs (seed 2: 103.3 -> 100.1; seed 4, 500 trials: 111.8 -> 109.5), staircases reported as
        // several 92.3% -> 94.3%, bursts, drift and outliers within a run of before, accuracy unchanged.
        self.note("verify", format!("one more interleaved pair at {parent} and {commit}"), evidence);
        self.interleaved_pairs(parent, commit, 1);
        true
    }

    /// Keeps what the fresh pairs of `commit` and `parent` (taken since record `start`) measured when its
    /// verification ends without blaming it, unless the pairs on their own showed the step (their test at
    /// `alpha_fresh` against the step `expected` of the segment's levels, as [`Bisect::verify`] reads them): the
    /// runs from locating that chose the commit may still place the change there, and a range the check that does
    /// not depend on them did not confirm is not reported as placed (see [`Bisect::bracket`]). A later verification
    /// of the same pair replaces it.
    pub(super) fn keep_unconfirmed(
        &mut self,
        segment: Segment,
        commit: usize,
        parent: usize,
        start: usize,
        slope: f64,
        expected: f64,
    ) {
        let noise = self.within_noise(segment, slope);
        let pairs = self.runs_since(commit, start).count().min(self.runs_since(parent, start).count());
        let Some((step, se, sigma_pair)) = self.paired_step(parent, commit, start, slope, noise) else {
            return;
        };
        let (log_ratio, _) = model::step_log_ratio(step, se, expected.max(0.5 * sigma_pair));
        self.unconfirmed.retain(|u| (u.parent, u.commit) != (parent, commit));
        if step > 0.0 && log_ratio >= (1.0 / self.config.alpha_fresh).ln() {
            return;
        }
        self.unconfirmed.push(UnconfirmedPairs { parent, commit, step, se, pairs });
    }

    /// The segments in which to search what is left of a segment ending at `hi` after its commit `commit`:
    /// (commit, hi] cut where a merge brought the commit in (see [`Topology::pieces_after`]).
    pub(super) fn parts_after(&self, commit: usize, hi: usize) -> Vec<Segment> {
        let pieces = self.topology.pieces_after(commit, hi);
        pieces.into_iter().map(|(lo, hi)| Segment { lo, hi, top: false }).collect()
    }

    /// A merge confirmed as a step over its first parent brought the change in from another parent's branch (or
    /// made it itself, resolving a conflict): each merged branch, from the merge base to the merged parent, is
    /// searched like any segment, on fresh runs (its ends' runs chose nothing yet, but the merge's did), and a
    /// commit found there takes over the merge's blame. Without this, a second change on a topic branch was blamed
    /// on the merge that brought it in: the segment after the first culprit holds that branch's commits, but
    /// they lack the first change, so they read at neither of the segment's levels (simulated histories with 100
    /// merges in 1,000 commits and two 3 sigma steps: the merge named instead of the step in 29 of 50 jobs).
    /// Nothing happens in a linear history.
    pub(super) fn search_merged_branches(&mut self, merge: usize) {
        let Some(first) = self.topology.first_parent(merge) else { return };
        for side in self.topology.merged_parents(merge).to_vec() {
            let Some(base) = self.topology.merge_base(first, side) else { continue };
            if base == side || self.topology.segment(base, side).is_empty() {
                continue;
            }
            let segment = Segment { lo: base, hi: side, top: false };
            self.note(
                "verify",
                format!("search the merged branch ({base}, {side}]"),
                format!("commit {merge} is a merge: the step it brings in may enter on the branch it merges"),
            );
            self.fresh_only.push((base, side));
            self.merge_sides.push((segment, merge));
            self.queue.push(segment);
        }
    }

    /// When `segment` is a merged branch being searched (see [`Bisect::search_merged_branches`]), takes it off the
    /// list and returns the merge that sent it.
    fn take_merge_side(&mut self, segment: Segment) -> Option<usize> {
        let i = self.merge_sides.iter().position(|(side, _)| (side.lo, side.hi) == (segment.lo, segment.hi))?;
        Some(self.merge_sides.remove(i).1)
    }

    /// A merged branch's search ended without a commit of it taking over the merge's blame (see
    /// [`Bisect::search_merged_branches`]). The merge stays blamed only when the branch is shown not to carry its
    /// step: `branch_change` (the branch's change from its merge base and its standard error, oriented, when its
    /// reproduce test closed it) has a 99% upper bound below [`MERGE_OWN_STEP_SHARE`] of the merge's step, so the
    /// merge made the change itself (a conflict resolved, two branches that only slow down together). When
    /// contributors were reported on the branch instead (a staircase's ranges, an unresolved range), they replace
    /// the merge. Otherwise, the branch was searched without an answer (its step too small for the reproduce
    /// budget, its search cut short by the overall budget), and the merge is reported as the range it brings in,
    /// (first parent, merge]: the change enters there, on the branch or at the merge. Blaming the merge then named
    /// a commit that changed nothing: three 0.5 sigma steps in 1,000 commits with 100 merges, 4 of 40 jobs named
    /// the merge of a branch whose 0.5 sigma step its search could not reproduce in 120 runs.
    pub(super) fn merged_branch_ended(&mut self, segment: Segment, branch_change: Option<(f64, f64)>) {
        let Some(merge) = self.take_merge_side(segment) else {
            return;
        };
        let Some(blamed) = self.culprits.iter().position(|c| c.located && c.commit == merge) else {
            return;
        };
        let on_branch = self
            .culprits
            .iter()
            .any(|c| c.commit != merge && self.topology.in_segment(c.commit, segment.lo, segment.hi));
        if on_branch {
            self.culprits.remove(blamed);
            self.note(
                "verify",
                format!("merge {merge} not blamed"),
                format!("the contributors found on its branch ({}, {}] take over", segment.lo, segment.hi),
            );
            return;
        }
        let merge_step = self.culprits[blamed].step;
        let bound = MERGE_OWN_STEP_SHARE * merge_step;
        if let Some((diff, se)) = branch_change.filter(|&(diff, se)| diff + UPPER_99_Z * se < bound) {
            self.note(
                "verify",
                format!("merge {merge} made the step itself"),
                format!(
                    "its branch ({}, {}] changed by {diff:.4} ± {se:.4}, surely below half its step of {merge_step:.4}",
                    segment.lo, segment.hi
                ),
            );
            return;
        }
        let culprit = &mut self.culprits[blamed];
        culprit.located = false;
        culprit.confidence = 0.0;
        let after = culprit.after;
        self.note(
            "verify",
            format!("the change enters with merge {merge}: ({after}, {merge}]"),
            format!(
                "the search of its branch ({}, {}] found no commit and did not rule the branch out, so the merge is \
                 reported as the range it brings in",
                segment.lo, segment.hi
            ),
        );
    }

    /// A share above the whole change that the builds beside the commit did not explain: its parent, itself and
    /// the segment's ends get fresh runs, and after [`IMPLAUSIBLE_MAX_PAIRS`] pairs the segment is unresolved.
    /// Returns true when runs were asked for.
    fn implausible_share(
        &mut self,
        segment: Segment,
        commit: usize,
        parent: usize,
        pairs: usize,
        (share, share_low, share_high): (f64, f64, f64),
        evidence: &str,
    ) -> bool {
        // More than the whole change at one commit: bursts of load or a wrong comparison, not a culprit.
        if pairs >= IMPLAUSIBLE_MAX_PAIRS {
            self.note("verify", format!("commit {commit} not blamed: implausible share"), evidence.to_string());
            self.segment_unresolved(
                segment,
                &format!(
                    "commit {commit} would explain {:.0}% (at least {:.0}%) of the change: {evidence}",
                    share * 100.0,
                    share_low * 100.0
                ),
                Some(commit),
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
        true
    }

    /// A candidate whose step did not hold across the builds beside it is not blamed: its segment ends unresolved.
    fn not_replicated(&mut self, segment: Segment, commit: usize, why: String) -> bool {
        self.note("verify", format!("commit {commit} not blamed: the step does not hold across builds"), why.clone());
        self.segment_unresolved(
            segment,
            &format!("the step at commit {commit} does not stand out from how much builds differ: {why}"),
            Some(commit),
        );
        false
    }

    /// The step from `parent` to `commit` measured on the runs recorded since `start`, paired in order (the i-th
    /// fresh run of each, adjacent in time since verification asks for them interleaved): the robust (t) location
    /// of the differences, its standard error, and the per-run noise used as the test's prior scale. The noise of
    /// a difference is the pairs' own spread pooled with sqrt(2) times `noise` (the within-commit noise of the whole
    /// segment, weighted as [`PAIR_PRIOR_DOF`] degrees of freedom), so that a few differences which happen to agree
    /// cannot make a step look certain. `None` with fewer than two
    /// pairs.
    pub(super) fn paired_step(
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
        let pair_sigma = pooled_pair_sigma(fit.sigma().powi(2), differences.len() as f64 - 1.0, noise);
        let se = pair_sigma * T_LOCATION_INFLATION / (differences.len() as f64).sqrt();
        let location = fit.locations.first().copied()?;
        Some((location, se, pair_sigma / std::f64::consts::SQRT_2))
    }

    /// The two residual segments around a confirmed step (the segment's start to the parent, the culprit to the
    /// segment's end) that hold commits, each with its change in standard errors from the runs already taken.
    pub(super) fn residual_steps(&self, segment: Segment, parent: usize, commit: usize, slope: f64) -> Vec<Residual> {
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
    pub(super) fn segment_change(&self, segment: Segment, slope: f64) -> Option<(f64, f64)> {
        let a = self.adjusted(segment.lo, slope);
        let b = self.adjusted(segment.hi, slope);
        Some(fit_t(&[&a, &b])?.difference(0, 1))
    }

    /// The covariance of the change from `lo` to `hi` (read on their runs, [`Bisect::segment_change`]) with the
    /// change from good to bad ([`Bisect::top_change`]): the two share runs only where `lo` is good or `hi` is bad,
    /// and then move together by the variance of that end's level.
    pub(super) fn covariance_with_ends(&self, lo: usize, hi: usize, slope: f64) -> f64 {
        let last = self.values.len() - 1;
        if lo != 0 && hi != last {
            return 0.0;
        }
        let (good, bad) = (self.adjusted(0, slope), self.adjusted(last, slope));
        let Some(fit) = fit_t(&[&good, &bad]) else {
            return 0.0;
        };
        let shared = |is_end: bool, group: usize| if is_end { fit.standard_error(group).powi(2) } else { 0.0 };
        shared(lo == 0, 0) + shared(hi == last, 1)
    }

    /// The two-sided z of a 90% share interval for a change read on the runs of `lo` and `hi`: Student's t over
    /// their runs, since the standard error is estimated from them (with [`SHARE_Z`], the normal's, a step's share
    /// read on 4 runs a side held the true share in 84% of simulated jobs rather than 90%).
    pub(super) fn share_z(&self, lo: usize, hi: usize) -> f64 {
        let dof = (self.values[lo].len() + self.values[hi].len()) as f64 - 2.0;
        share_z_with(dof.max(1.0))
    }

    /// Good-to-bad change (oriented) and its standard error as the outcome reports it, once reproduced: read on
    /// every run at the ends now ([`Bisect::top_change`]), not only on those the reproduce test passed on, which the
    /// search keeps for its own decisions (`total`).
    pub(super) fn reported_total(&self, slope: f64) -> Option<(f64, f64)> {
        self.total.map(|early| self.top_change(slope).unwrap_or(early))
    }

    /// Good-to-bad change (oriented) and its standard error from every run at the two ends.
    pub(super) fn top_change(&self, slope: f64) -> Option<(f64, f64)> {
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
    ///
    /// Returns the share with its 90% interval and the step the outcome reports: the pooled levels' difference while
    /// the ends agree with them, else the culprit's runs less its parent's. The fresh pairs' step stops as soon as
    /// the step shows, so it reads high: 1.17 times the true step of one 1.5 sigma step in 1,000 simulated commits,
    /// 1.11 for the culprit's and parent's runs alone, 1.06 for the pooled levels (docs/statistics.md).
    pub(super) fn lone_culprit_share(&self, culprit: &Culprit) -> Option<((f64, f64, f64), f64)> {
        if !culprit.located || self.part_explained {
            return None;
        }
        let slope = self.drift();
        let posterior = self.posterior(0, self.values.len() - 1, slope)?;
        if posterior.best_class()?.0 != culprit.commit {
            return None;
        }
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
        let z = self.share_z(culprit.after, culprit.commit);
        // Where the ends disagree, something moved the level on a side besides the step, and that side's commits
        // are read around the two levels of their best split rather than taken for builds that differ (QA 49).
        let levels = self.lone_step_levels(culprit, slope, !agrees)?;
        let (change, var_change, covariance) = if agrees { levels.pooled } else { levels.ends };
        let share = model::ratio_interval_correlated(
            levels.size,
            levels.var_size.sqrt(),
            change,
            var_change.sqrt(),
            covariance,
            z,
        );
        share.0.is_finite().then_some((share, if agrees { change } else { levels.size }))
    }

    /// A lone culprit's step and the two changes its share may be read against, from every run of the commits on
    /// either side of it (drift- and load-corrected, outliers down-weighted, as the posterior reads them), with
    /// their variances and their covariance with the step.
    ///
    /// The step and the change it is divided by share runs, so they move together, and their ratio is known better
    /// than two independent estimates would allow: treated as independent, a lone culprit's 90% interval held the
    /// true share in 97% of simulated jobs. The pooled levels hold the parent's runs before the step and the
    /// culprit's after it; the ends share runs with the step only where the parent is good or the culprit is bad.
    /// Builds that differ (code layout, docs/kernel.md) give every commit's mean a variance of its own beyond its
    /// runs' (a variance component, estimated from how the means of one side scatter): the culprit's step carries
    /// two builds' worth of it, the pooled levels a share per build. Without it, a real bisect whose bad end sat 4%
    /// below the culprit's build would read 1.03 [1.01, 1.05] for a slowdown that was the culprit's alone.
    ///
    /// With `split_sides` (the ends disagree with the single step's levels, so something else moved the level), each
    /// side's scatter is read around the levels of its best split in two, in history order, so that a second, real
    /// step on that side is not read as builds that differ. QA 49 bisected a 40% step that a later commit took half
    /// back: the culprit's runs and its parent's were tight (sd 0.001 on 0.03), yet the drop from the culprit's
    /// level to bad's, read as one build's offset, gave every mean a variance of its own so large that the share of
    /// 208% came with a 90% interval of -16% to 431%, and the words said "within the noise".
    pub(super) fn lone_step_levels(&self, culprit: &Culprit, slope: f64, split_sides: bool) -> Option<LoneStepLevels> {
        let (members, sides) = self.spread_sides(std::slice::from_ref(culprit))?;
        let moments = self.commit_moments(&members, slope);
        let index = |c: usize| members.iter().position(|&m| m == c);
        let (parent, commit) = (moments[index(culprit.after)?], moments[index(culprit.commit)?]);
        let last = self.values.len() - 1;
        let (good, bad) = (moments[index(0)?], moments[index(last)?]);
        // The run variance within commits, over every commit with two runs or more.
        let (within, within_dof) = within_squares(&moments);
        if !(within_dof > 0.0 && parent.w > 0.0 && commit.w > 0.0) {
            return None;
        }
        let variance = within / within_dof;
        // The variance of a build's own level: the method of moments (DerSimonian and Laird) on each side's means,
        // as the build-spread test reads them but with no cap on what one commit adds.
        let (mut q, mut dof, mut weight) = (0.0, 0.0, 0.0);
        let mut levels = [(0.0, 0.0, 0.0); 2];
        for after in [false, true] {
            let side: Vec<model::Moments> =
                sides.iter().zip(&moments).filter(|(s, m)| s[0] == after && m.w > 0.0).map(|(_, m)| *m).collect();
            let total: f64 = side.iter().map(|m| m.w).sum();
            if !(total > 0.0) {
                return None;
            }
            let scatter = match split_sides {
                true => Scatter::split_in_two(&side, variance),
                false => Scatter::capped(&side, variance, f64::INFINITY),
            };
            (q, dof, weight) = (q + scatter.q, dof + scatter.dof, weight + scatter.weight);
            let mean = side.iter().map(|m| m.y).sum::<f64>() / total;
            let squared_shares: f64 = side.iter().map(|m| (m.w / total).powi(2)).sum();
            levels[usize::from(after)] = (mean, total, squared_shares);
        }
        // Counted only where the means scatter beyond their runs at SHARE_BUILDS_P: the estimate is positive
        // whenever the means happen to scatter a little, and counted always it widened the intervals of simulated
        // jobs whose builds do not differ at all to hold the true share in 95.5% of them rather than 90%.
        let scatters = f_upper_tail(q, dof, within_dof).is_some_and(|p| p < SHARE_BUILDS_P);
        let build_variance = if scatters && weight > 0.0 { (q - dof).max(0.0) * variance / weight } else { 0.0 };
        let mean_variance = |m: &model::Moments| variance / m.w + build_variance;
        let mean = |m: &model::Moments| m.y / m.w;
        let size = mean(&commit) - mean(&parent);
        let var_size = mean_variance(&commit) + mean_variance(&parent);
        let [(low, low_weight, low_squares), (high, high_weight, high_squares)] = levels;
        let var_delta =
            variance * (1.0 / low_weight + 1.0 / high_weight) + build_variance * (low_squares + high_squares);
        let covariance_pooled =
            mean_variance(&commit) * commit.w / high_weight + mean_variance(&parent) * parent.w / low_weight;
        let shared = |is_end: bool, m: &model::Moments| if is_end { mean_variance(m) } else { 0.0 };
        let covariance_ends = shared(culprit.after == 0, &good) + shared(culprit.commit == last, &bad);
        Some(LoneStepLevels {
            size,
            var_size,
            pooled: (high - low, var_delta, covariance_pooled),
            ends: (mean(&bad) - mean(&good), mean_variance(&good) + mean_variance(&bad), covariance_ends),
        })
    }
}

/// See [`Bisect::lone_step_levels`]: the step, its variance, and the pooled levels' and the ends' changes, each with
/// its variance and its covariance with the step.
pub(super) struct LoneStepLevels {
    pub(super) size: f64,
    pub(super) var_size: f64,
    pub(super) pooled: (f64, f64, f64),
    pub(super) ends: (f64, f64, f64),
}
