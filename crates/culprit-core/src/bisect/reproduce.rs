//! Phase 1, reproduce: interleaved runs at a segment's ends until a sequential test says they differ or not.

use super::*;

/// A residual segment whose change is surely below this share of the total holds no further contributor.
pub(super) const RESIDUAL_MIN_SHARE: f64 = 0.15;
/// Risk of closing a residual segment that holds a contributor of [`CONTRIBUTOR_MIN_SHARE`].
pub(super) const NO_CONTRIBUTOR_BETA: f64 = 0.05;
/// False-alarm bound of the test that the ends of a segment below the top differ: those ends hold the runs that
/// chose the segment, so the 5% of the first test let one single-step job in a hundred search a residual that was
/// not there until the budget was spent.
pub(super) const RESIDUAL_ALPHA: f64 = 0.01;
/// Runs each end of the whole range needs before locating asks again whether good and bad differ (see
/// [`Bisect::difference_faded`]). Measured (`bisect_sim --breakdown`, seed 1): from 12 runs a side the no-change
/// jobs fare the same (3 of 500 spend the budget, against 22 without the second test), and one more bursty job of
/// 500 with a real step goes back to reproducing and ends inconclusive (19 wrong; 18 from 20 runs; 17 without).
pub(super) const RECHECK_MIN_RUNS_PER_SIDE: usize = 20;
/// The reproduce test's log ratio, on every run at good and bad, below which the difference that started the
/// search has faded: the runs now favour "no difference" over the test's alternative. At -1, 7 no-change jobs of
/// 500 still spent the budget (3 at 0); real steps of 1 and 1.5 sigmas never fell below 0 in 300 to 500 jobs.
pub(super) const FADED_LOG_RATIO: f64 = 0.0;

/// False-alarm bound of the claim that bad is better than good (an improvement, which ends the bisect): stricter
/// than the test of a regression, since jobs whose ends do not differ at all would otherwise end with that claim
/// about one time in twenty.
pub(super) const IMPROVEMENT_ALPHA: f64 = 0.01;

/// One-sided 99% normal quantile: the upper bound a difference is held to when a change is ruled out.
pub(super) const UPPER_99_Z: f64 = 2.326;

impl Bisect {
    /// `--min-change` on a fit of good (group 0) and bad (group 1): the user's bar in the metric's units (that share
    /// of good's level) when the 99% upper bound of their difference is below it; `None` when it is not, or unset.
    fn below_min_change(&self, fit: &TFit) -> Option<f64> {
        let floor = self.config.min_effect_relative * fit.locations[0].abs();
        let (diff, se) = fit.difference(0, 1);
        (floor > 0.0 && diff.abs() + UPPER_99_Z * se < floor).then_some(floor)
    }

    /// While locating in the whole range: the reproduce test again, on every run at good and bad (the ends keep
    /// getting runs while locating), and the evidence when its log ratio has fallen below [`FADED_LOG_RATIO`]. The
    /// first test stops at 5% false alarms, and a job whose good and bad do not differ passes it that often: such a
    /// search then finds no change to converge on and spent the whole budget before ending inconclusive (4.4% of
    /// no-change jobs, 600 runs each). Going back to reproducing continues the same sequential test on the same
    /// runs: it passes again if the difference is real, and ends "not reproduced" by its usual rules otherwise.
    pub(super) fn difference_faded(&self, segment: Segment, slope: f64) -> Option<String> {
        let a = self.adjusted(segment.lo, slope);
        let b = self.adjusted(segment.hi, slope);
        if a.len() < RECHECK_MIN_RUNS_PER_SIDE || b.len() < RECHECK_MIN_RUNS_PER_SIDE {
            return None;
        }
        let fit = fit_t(&[&a, &b])?;
        let (diff, se) = fit.difference(0, 1);
        // A difference the first test overestimated can turn out below the user's bar once the ends have more runs.
        if self.below_min_change(&fit).is_some() {
            return Some(format!(
                "on all {} and {} runs at good and bad: difference {diff:.4} ± {se:.4}, below the {:.1}% asked for \
                 (--min-change)",
                a.len(),
                b.len(),
                self.config.min_effect_relative * 100.0
            ));
        }
        // Oriented runs: a change the first test found in either direction reads positive here.
        let log_ratio = model::one_sided_mixture_log_ratio(diff, se, fit.sigma());
        (log_ratio < FADED_LOG_RATIO).then(|| {
            format!(
                "on all {} and {} runs at good and bad: difference {diff:.4} ± {se:.4}, log ratio {log_ratio:.2} \
                 (below {FADED_LOG_RATIO:.2})",
                a.len(),
                b.len()
            )
        })
    }

    /// Phase 1. Returns true when runs were asked for.
    pub(super) fn reproduce(&mut self, segment: Segment, start_records: usize, slope: f64) -> bool {
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
                self.narrowing_ended(segment, false);
                self.next_segment();
            }
            return false;
        }
        // A residual that stood out did so in the runs already taken at its ends, some of them long ago: load that
        // changed since (a job on the machine that stopped) shows as a step between a commit measured now and an
        // end measured then. Its test reads fresh interleaved runs only. On real bisects of the e2e slowdown under
        // stress-ng that started or stopped mid-bisect, 2 of 75 searched such a residual to the end of the budget
        // (500-600 runs) and one blamed the bad end for a share of 0. A staircase range queued to be narrowed was
        // chosen by the runs at its ends as well (the middle commit that split it read between the levels): a
        // single 1.5 sigma step whose search had settled a false staircase, then narrowed a range that held no step
        // on those runs, searched it until the budget was spent (2 of 500 jobs, seed 2).
        let chosen_by_runs = self.fresh_only.contains(&(lo, hi)) || self.narrowing.contains(&(lo, hi));
        let since = if !segment.top && chosen_by_runs { start_records } else { 0 };
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
        let (diff, se) = fit.difference(0, 1);
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
        // The difference in units of one run's noise, an effect size, not a count of standard errors: "(19.11
        // sigma)" beside "± 0.0009" read as a z-score (QA 59).
        let evidence = format!(
            "difference {diff:.4} ± {se:.4} ({:.2} times a run's noise), log ratio {log_ratio:.2} of {threshold:.2}",
            diff / sigma
        );
        // The user's bar (a share of good's level): a difference surely below it is not worth a bisect, however
        // significant. Read on the top segment only, whose ends are good and bad; from 8 runs a side, as the floor
        // below, or as soon as the difference is significant (it would be bisected otherwise).
        let enough = n_lo >= 8 && n_hi >= 8;
        let below_user_floor = if segment.top { self.below_min_change(&fit) } else { None };
        if let Some(user_floor) = below_user_floor.filter(|_| enough || log_ratio >= threshold) {
            let why = format!(
                "{evidence}; any change is below {user_floor:.4}, {} of good's level (--min-change)",
                crate::compare::printf::percent_of_fraction(self.config.min_effect_relative)
            );
            self.reproduced = Some(false);
            self.below_min_change = true;
            self.note("reproduce", "not reproduced".into(), why.clone());
            self.finish(format!("good and bad do not differ by the change asked for: {why}"));
            return false;
        }
        let upper = diff.abs() + UPPER_99_Z * se;
        let floor = match (segment.top, self.total) {
            (false, Some((total, _))) => (RESIDUAL_MIN_SHARE * total).max(0.0),
            _ => self.config.min_effect_sigma * sigma,
        };
        // Below the top, a difference that is significant but surely below the floor is no contributor worth a
        // search either: where builds differ (code layout) or the machine's level moves, two builds of a residual
        // segment differ by a percent with precise timing, and the README's demo, after blaming its 30% step,
        // spent its whole budget looking for the commit behind a 1% residual (1 of 8 bisects).
        let small_residual = !segment.top && upper < floor;
        if log_ratio >= threshold && (diff > 0.0 || two_sided) && !small_residual {
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
        // Bad differs from good the other way than searched, beyond doubt: better, when a regression is searched for,
        // or worse, when an improvement is (the caller flips the direction). The one-sided test above cannot pass
        // and no floor rules a change out, so such a job used to spend its whole reproduce budget (120 runs on a real
        // 25% speed-up) and then say that good and bad do not differ. The same test, the other way round, ends it as
        // soon as the change searched for would have been confirmed. The words stay neutral: which way is better is
        // the caller's to say, from the direction it asked for.
        if segment.top && !two_sided && diff < 0.0 {
            let improvement = model::one_sided_mixture_log_ratio(-diff, se, sigma);
            let bar = (1.0 / IMPROVEMENT_ALPHA).ln();
            if improvement >= bar {
                self.improved = true;
                self.reproduced = Some(false);
                // Said in the metric's own units and sign (bad minus good), as the evidence table prints the two
                // means: the oriented difference is negative here by construction, whichever way the metric goes.
                let why = format!(
                    "bad differs from good the other way: bad minus good {:.4} ± {se:.4} ({:.2} times a run's \
                     noise), log ratio {improvement:.2} of {bar:.2} for the opposite change; not the change searched \
                     for, so nothing is blamed",
                    diff * self.orientation,
                    diff * self.orientation / sigma
                );
                self.note("reproduce", "differs the other way, not as searched".into(), why.clone());
                self.finish(why);
                return false;
            }
        }
        let spent = self.runs_since(lo, start_records).count() + self.runs_since(hi, start_records).count();
        // Below the top, the search is for contributors of at least CONTRIBUTOR_MIN_SHARE of the change: Wald's
        // sequential test of that change against none ends a segment without one long before the interval above
        // could rule out a smaller change (which took up to the whole reproduce budget).
        let smallest = self.total.filter(|_| !segment.top && se > 0.0).map(|(total, _)| CONTRIBUTOR_MIN_SHARE * total);
        let no_contributor =
            smallest.is_some_and(|d| (diff * d - 0.5 * d * d) / (se * se) <= -(1.0 / NO_CONTRIBUTOR_BETA).ln());
        if ((enough || small_residual) && (upper < floor || no_contributor)) || spent >= self.config.max_reproduce_runs
        {
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
                // A test that ran out of runs on noisy ends has not shown that the change is absent, only that it
                // is below what these runs can see: the outcome says how far that is (QA 48: a real 10% slowdown
                // measured on wall time with 37% noise read as "did not reproduce").
                let level = fit.locations[0];
                let log_ratio_at = |d: f64| match two_sided {
                    true => mixture_log_ratio(d, se, sigma),
                    false => model::one_sided_mixture_log_ratio(d, se, sigma),
                };
                self.sensitivity = Sensitivity::of_runs(&a, &b, level, se, threshold, log_ratio_at);
                let why = match &self.sensitivity {
                    Some(s) => format!("{why}; {}", s.describe()),
                    None => why,
                };
                self.note("reproduce", "not reproduced".into(), why.clone());
                self.finish(format!("good and bad do not differ reproducibly: {why}"));
            } else {
                self.no_further_contributor("reproduce", segment, (diff, se), why);
                self.narrowing_ended(segment, since > 0);
                self.next_segment();
            }
            return false;
        }
        self.note("reproduce", format!("two more interleaved pairs at {lo} and {hi}"), evidence);
        self.interleaved_pairs(lo, hi, 2);
        true
    }
}
