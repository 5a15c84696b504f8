//! How a bisect ends: segments left unresolved, parts still unsettled when the budget is spent reported as
//! ranges, and the outcome assembled from the culprits.

use super::*;

/// A segment still being searched when the budget is spent is reported as a range holding part of the change when
/// its ends differ by this many standard errors.
pub(super) const UNSETTLED_MIN_Z: f64 = 3.0;

impl Bisect {
    pub(super) fn segment_unresolved(&mut self, segment: Segment, why: &str) {
        if segment.top {
            self.finish(format!("the change could not be located: {why}"));
        } else {
            // A staircase range being narrowed is reported only when its ends differ (see `narrowing_ended`).
            if !self.narrowing_ended(segment) {
                self.push_range(segment);
            }
            self.next_segment();
        }
    }

    /// When the budget ends the search, the parts of the change still being searched (the current segment and the
    /// queued ones, after a culprit that explains only part) are reported as unlocated ranges when the runs at their
    /// ends show a change ([`UNSETTLED_MIN_Z`] standard errors or more in the regression's direction): the maintainer
    /// learns where the rest of the change lies even though it was not narrowed.
    pub(super) fn report_unsettled_parts(&mut self) {
        let current = match self.phase {
            Phase::Reproduce { segment, .. } | Phase::Locate { segment } | Phase::Verify { segment, .. } => {
                Some(segment)
            }
            Phase::Finished => None,
        };
        let slope = self.drift();
        let unsettled: Vec<Segment> = current.into_iter().chain(self.queue.drain(..)).filter(|s| !s.top).collect();
        // A staircase range still being narrowed is one of these too: no commit of it was named yet.
        for segment in unsettled {
            if self.shows_change(segment, slope) {
                self.note(
                    "done",
                    format!("part of the change lies in ({}, {}]", segment.lo, segment.hi),
                    "not narrowed within the budget".into(),
                );
                self.push_range(segment);
            }
            self.merged_branch_ended(segment, None);
        }
    }

    /// Whether the runs at the ends of `segment` show a change of [`UNSETTLED_MIN_Z`] standard errors or more in the
    /// regression's direction.
    pub(super) fn shows_change(&self, segment: Segment, slope: f64) -> bool {
        self.segment_change(segment, slope).is_some_and(|(change, se)| se > 0.0 && change / se >= UNSETTLED_MIN_Z)
    }

    /// Records a residual segment that holds part of the change but was not narrowed down; says whether it could
    /// (its change and the whole change are measured).
    pub(super) fn push_range(&mut self, segment: Segment) -> bool {
        let slope = self.drift();
        let (Some((diff, se)), Some((total, total_se))) = (self.segment_change(segment, slope), self.total) else {
            return false;
        };
        // The range and good-to-bad share the runs of an end the range reaches (see `covariance_with_ends`).
        let covariance = self.covariance_with_ends(segment.lo, segment.hi, slope);
        let z = self.share_z(segment.lo, segment.hi);
        let (share, low, high) = model::ratio_interval_correlated(diff, se, total, total_se, covariance, z);
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
        true
    }

    pub(super) fn finish(&mut self, reason: String) {
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
        let build_spread = match status {
            Status::Found | Status::Multiple => self.build_spread(&culprits),
            // An inconclusive end names no step, but the most probable one still splits the commits into two sides;
            // builds that differ are often why it ended so (a step of more than the whole change, say).
            Status::Inconclusive => self.most_probable_step().and_then(|step| self.build_spread(&[step])),
            Status::NotReproduced => None,
        };
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
            build_spread,
            improved: self.improved,
            below_min_change: self.below_min_change,
        });
    }
}
