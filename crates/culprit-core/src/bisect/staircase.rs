//! Several contributors sharing one change (a staircase): the model comparison of one change against two, and
//! the probing of commits that look in between.

use super::verify::pooled_pair_sigma;
use super::*;
use crate::words::counted;

/// A commit whose level differs from both ends of its segment by this many standard errors sits between them: the
/// change is shared by several commits (a staircase), reported as such.
pub(super) const BETWEEN_Z: f64 = 4.0;
/// Below [`BETWEEN_Z`] but above this, a commit is suspected to sit between the levels when the staircase model
/// comparison also leans to two changes (log Bayes factor of at least [`STAIRCASE_LEAN_LOG_BAYES`]); the middle range
/// of the most probable staircase then gets runs (see [`Bisect::probe_between`]) until the suspicion is settled. These
/// runs are what lets the comparison decide. Probing on the z-score alone (from 1.5 standard errors) cost single steps
/// about 30 runs a job, most of them on commits that looked in between after 3 runs by chance; see
/// docs/bisect-notebook.md for the measurements.
pub(super) const BETWEEN_LEANING_Z: f64 = 1.0;
/// The lean of the staircase comparison (log Bayes factor, two changes against one) from which a commit that
/// looks in between is probed, once the posterior holds [`PROBE_FROM_MASS`] on one commit. Measured (single 1.5
/// sigma steps on two seeds of 500 trials / three 0.5 sigma steps, 300 / two 1 sigma steps in 100 commits, 200):
/// probing from the start of locating with a lean of 0.5, 124-127 runs / 91% / 91.5%, and a same answer of 97.4%
/// on one seed; waiting for 10% of the mass with a lean of 0.5, 118 runs / 91% / 86.5%; waiting with a lean of
/// 0, 125-137 runs / 93% / 93.5%, same answer 98.4-99.2% (kept). Again with the middle-range probing and the
/// information choice: a lean of 0.5, 105-107 runs / 94.6% / 93.5%, but drift jobs 98.8% right (5 of 500 reported
/// as several contributors, against 1); of 1, 102-107 runs / 91% / 91%; 0 (kept), 109-113 runs / 94.6% / 93%.
pub(super) const STAIRCASE_LEAN_LOG_BAYES: f64 = 0.0;
/// Runs a commit needs before it can be judged in between, and runs each end needs.
pub(super) const BETWEEN_MIN_RUNS: usize = 6;
pub(super) const BETWEEN_MIN_END_RUNS: usize = 10;
/// Runs a suspected in-between commit may get before the suspicion is dropped.
pub(super) const BETWEEN_MAX_RUNS: usize = 100;
/// Log Bayes factor of "two changes with a level between" against "one change" at which a segment is reported
/// as several contributors (a staircase): about 500 to 1. The check is repeated at every decision and the probing
/// runs go to commits that look in between, so a lower bar fires on single steps more often. Measured (300
/// staircase trials; single steps on two seeds of 500): ln 250 reported 93% of staircases as several and 0.6-1.2%
/// of single steps; this, 91% and 0.6-1.0%; ln 1000, 89% and 0.4-1.0%.
pub(super) const STAIRCASE_LOG_BAYES: f64 = 6.2;
/// A staircase is settled only when the runs of its middle commits differ from each end's runs adjacent in time by
/// this many standard errors (see [`Bisect::settle_staircase`]), and a commit [`BETWEEN_Z`] standard errors from
/// both ends is reported only when its own runs do (see [`Bisect::probe_between`]). Until session 21 only the
/// nearer end was asked, and only of a staircase; asking both (300 trials, seed 1): wander 93.0% right and 4.3%
/// several (90.0%, 8.0%), bursts 93.7% and 2.3% (93.0%, 3.7%), single step 100.0% (99.7%) at 109.9 runs (109.0),
/// three 0.5 sigma steps 92.7% several (93.0%) at 317.4 runs (310.2); with the pairs' spread shrunk towards the
/// noise ([`Bisect::paired_middle`]), bursts 94.7% and 1.3%, staircases 93.0%. Measured (`bisect_sim --trials 500`,
/// seed 1; three 0.5 sigma steps, 300 trials): without the check, bursts 89.6% right and 9.8% reported as several,
/// 170.7 runs, staircases 92.3% (500: 94.8%); at z 1.0, 1.5, 2.0 and 2.5 (300 bursty jobs against 89.3% and 9.7%):
/// 90.7%, 91.3%, 93.0% and 93.0% right, 8.3%, 7.7%, 6.0% and 5.7% several, staircases 92.3% but 91.3% at 2.5; at
/// 2.0 on 500: bursts 93.4% and 6.0% (178.5 runs), staircases 94.6% (295.6 runs), drift seed 2 98.8% (98.4%),
/// single steps, outliers and untestable commits unchanged.
pub(super) const PAIRED_MIDDLE_Z: f64 = 2.0;
/// Interleaved pairs after which a middle level that does not show in them is no reason to settle.
pub(super) const PAIRED_MIDDLE_MAX_PAIRS: usize = 40;
/// The probability with which each reported range of a staircase holds its change, under the two-change fits
/// (see [`Bisect::credible_ranges`]).
pub(super) const RANGE_MASS: f64 = 0.9;
/// Posterior mass one commit must hold before commits that look in between are probed.
pub(super) const PROBE_FROM_MASS: f64 = 0.1;
/// A range of a settled staircase whose step is at least this many noise sigmas is narrowed to its commit (a
/// segment of its own: reproduce, locate, verify); a smaller one is reported as the range. A real series of two 15%
/// slowdowns with about 3% run-to-run noise (5 sigma each) was reported as two ranges of 5 commits after 122 runs.
/// Measured (200 jobs a row): two 3 sigma steps, both commits named in 99.0% of jobs at 2 sigma and 100% at 1.5;
/// two 2 sigma steps 23.0% (106.8 runs) at 2 and 88.0% (144.5 runs) at 1.5; two 1.5 sigma steps 5.5% and 25.0%
/// (110 and 155 runs). The staircases of the targets (three 0.5 sigma steps) stay ranges at either bar, with the
/// same runs; narrowing a 0.5 sigma step costs hundreds of runs. See also [`NARROW_SERIES_MIN_STEP_SIGMA`].
pub(super) const NARROW_MIN_STEP_SIGMA: f64 = 1.5;
/// Both ranges of a settled staircase are narrowed when both its steps are at least this many noise sigmas (a
/// series of two patches that each cost a noticeable part of the change), whatever [`NARROW_MIN_STEP_SIGMA`] says
/// of either. A step's estimate scatters: true 1.5 sigma steps measured 1.16 to 1.90 sigmas (10th to 90th
/// percentile), so at the bar of 1.5 alone a series of two of them had both commits named in a quarter of jobs.
/// Lowering that bar to 1 for every range narrowed the two-step ranges of three 0.5 sigma steps too (their
/// estimates reach 1.0 sigma at the 90th percentile): 60 more runs a staircase job and a p95 at the budget. Asking
/// it of both steps leaves those (one of their ranges is a single 0.5 sigma step) as they were. Measured
/// (`bisect_sim --strategy culprit`, 200 jobs a row, seed 1 unless said; with the two rules that come with it, no
/// staircase probing inside a narrowed range ([`Bisect::locate`]) and a narrowed range reproduced on fresh runs
/// ([`Bisect::reproduce`])): two 1.5 sigma steps, both named in 95.5% (25.0% before), 228 runs (155); seed 2,
/// 92.5% (23.0%, and a false culprit in 1% before); two 2 sigma steps 99.5% (88.0%), 161 runs (145); three 2 sigma
/// steps (100 jobs) 98% (69%), 216 runs (193); two 3 sigma steps 100% (100%), 107 runs (97); two 1 sigma steps in
/// 100 commits (seed 7) 29.5% (6%), 205 runs (143), reported as several 90.5% (91.5%).
pub(super) const NARROW_SERIES_MIN_STEP_SIGMA: f64 = 1.0;

/// One range of a staircase being narrowed, the other reported as an unlocated contributor: when the narrowed one
/// holds no step, the reported one is taken back and `search` is searched for the whole change.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct StaircaseSibling {
    narrowed: (usize, usize),
    reported: (usize, usize),
    search: Vec<Segment>,
}

/// The step, in noise sigmas, from which each range of a staircase is narrowed to its commit, given the smaller of
/// its two steps: [`NARROW_SERIES_MIN_STEP_SIGMA`] when both steps reach it, else [`NARROW_MIN_STEP_SIGMA`].
fn narrowing_bar(smaller_step: f64, noise: f64) -> f64 {
    if smaller_step >= NARROW_SERIES_MIN_STEP_SIGMA * noise {
        NARROW_SERIES_MIN_STEP_SIGMA
    } else {
        NARROW_MIN_STEP_SIGMA
    }
}

/// The most probable two-change fit of a segment: the tested commits `middle_commits` sit at a level between the
/// ends'. Levels are (estimate, standard error), oriented so that positive is worse.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Staircase {
    /// The tested commits holding one change and not the other, in index order. In a line they are consecutive
    /// tested commits at one level, `middle`; after merges, commits of one branch can hold the second change
    /// without the first, and sit at the mirror level `low + high - middle` (see [`model::AdditiveFit`]).
    pub(super) middle_commits: Vec<usize>,
    /// The two ranges (after, up to], the first holding the change from `low` to `middle` and the second the one
    /// from `middle` to `high`. In a line, the tested commits between which each change lies with [`RANGE_MASS`]
    /// of its probability (see [`Bisect::credible_ranges`]); after merges, from the segment's start to the middle
    /// commit with the most runs and from there to its end.
    pub(super) ranges: [(usize, usize); 2],
    /// The probability with which each range holds its change, under the two-change fits; 0 where the model gives
    /// none (after merges, where the ranges reach the segment's ends).
    pub(super) range_mass: [f64; 2],
    pub(super) low: (f64, f64),
    pub(super) middle: (f64, f64),
    pub(super) high: (f64, f64),
}

impl Staircase {
    /// A middle commit (the one with the most runs: surely at a level between the ends), from which the segment
    /// splits in two ranges each holding one change.
    fn split(&self, values: &[Vec<(f64, f64)>]) -> Option<usize> {
        self.middle_commits.iter().copied().max_by_key(|&m| values[m].len())
    }

    /// The middle commits as the log's sentences name them ("commit 22", "commits 22 to 25", "commits 3, 5"), and
    /// whether that is plural, for the verb.
    fn middle_named(&self) -> (String, bool) {
        match (self.middle_commits.first(), self.middle_commits.last()) {
            (Some(first), Some(last)) if first == last => (format!("commit {first}"), false),
            (Some(first), Some(last)) if self.middle_commits.len() == last - first + 1 => {
                (format!("commits {first} to {last}"), true)
            }
            _ => {
                let listed: Vec<String> = self.middle_commits.iter().map(|c| c.to_string()).collect();
                (format!("commits {}", listed.join(", ")), true)
            }
        }
    }
}

impl Bisect {
    /// The tested interior commit of the segment that sits most clearly between the levels of its two ends, with
    /// its score: the smaller of its two z-scores (against lo and against hi, robust t fits of the three commits).
    /// The noise is the larger of the three commits' own estimate and `noise` (within commits, from every run), so
    /// that a few runs which happen to agree closely cannot make a commit look in between.
    pub(super) fn between_commit(&self, segment: Segment, slope: f64, noise: f64) -> Option<(usize, f64)> {
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
    /// confirming one of them alone would hide the others), each narrowed to its commit instead when its step is
    /// large (`narrowing_bar`); with too few runs at the ends or the commit to settle that, they get them. Below
    /// that, while a commit looks in between and the staircase model comparison leans to two changes (log Bayes
    /// factor >= [`STAIRCASE_LEAN_LOG_BAYES`], middle level at least [`CONTRIBUTOR_MIN_SHARE`] from either end), the
    /// middle range gets runs, and the nearer end with it while the end has fewer: those runs are what lets the
    /// comparison decide. Returns true when it acted (asked for runs, or settled the segment).
    pub(super) fn probe_between(&mut self, segment: Segment, slope: f64) -> bool {
        let Some((c, score)) = self.between_commit(segment, slope, self.within_noise(segment, slope)) else {
            return false;
        };
        let settled = self.values[c].len() >= BETWEEN_MIN_RUNS
            && self.values[segment.lo].len() >= BETWEEN_MIN_END_RUNS
            && self.values[segment.hi].len() >= BETWEEN_MIN_END_RUNS;
        // As for a staircase (`settle_staircase`): a visit measured while the machine's level had moved reads in
        // between as a whole, so the commit must also differ from each end in runs adjacent in time to that end's.
        // After PAIRED_MIDDLE_MAX_PAIRS pairs that do not show it, the commit is judged as one below BETWEEN_Z.
        let clearly_between = score >= BETWEEN_Z && settled;
        let unpaired = if clearly_between { self.unpaired_end(&[c], segment, slope) } else { None };
        if let Some((end, pairs, z)) = unpaired {
            if pairs < PAIRED_MIDDLE_MAX_PAIRS {
                self.note(
                    "locate",
                    format!("interleaved pairs at {c} and {end}"),
                    format!(
                        "commit {c} is {score:.2} standard errors from each end, {}",
                        paired_difference(&format!("commit {c}"), false, end, pairs, z)
                    ),
                );
                self.ask(vec![(end, 2), (c, 2)]);
                return true;
            }
        }
        if clearly_between && unpaired.is_none() {
            self.note(
                "locate",
                format!("several contributors: commit {c} sits between {} and {}", segment.lo, segment.hi),
                format!("its level differs from both ends by at least {score:.2} standard errors"),
            );
            let noise = self.within_noise(segment, slope);
            let ranges = [Segment { lo: segment.lo, hi: c, top: false }, Segment { lo: c, hi: segment.hi, top: false }];
            let steps = ranges.map(|range| self.segment_change(range, slope).map_or(0.0, |(change, _)| change));
            let bar = narrowing_bar(steps[0].min(steps[1]), noise);
            let (mut narrowed, mut reported) = (None, None);
            for (range, step) in ranges.into_iter().zip(steps) {
                // The range after the commit is searched in the pieces that read against their starts.
                let pieces = if range.lo == c { self.parts_after(c, range.hi) } else { vec![range] };
                if self.narrow_if_large(&pieces, step, noise, bar, "locate") {
                    narrowed = (pieces.len() == 1).then(|| (pieces[0].lo, pieces[0].hi));
                } else if self.push_range(range) {
                    reported = Some((range, pieces));
                }
            }
            if let (Some(narrowed), Some((range, search))) = (narrowed, reported) {
                let sibling = StaircaseSibling { narrowed, reported: (range.lo, range.hi), search };
                self.staircase_siblings.push(sibling);
            }
            self.next_segment();
            return true;
        }
        if score >= BETWEEN_Z && !settled {
            // Clearly in between, but the ends or the commit have too few runs to settle it: those runs, not more at
            // the middle and the nearer end, are what is missing (a commit 18 standard errors from both ends was
            // probed with the nearer end for 170 runs while the far end waited at 9 of its 10).
            let short_end = [segment.lo, segment.hi].iter().any(|&e| self.values[e].len() < BETWEEN_MIN_END_RUNS);
            let mut ask = Vec::new();
            if short_end {
                ask.extend([(segment.lo, 1), (segment.hi, 1)]);
            }
            if self.values[c].len() < BETWEEN_MIN_RUNS {
                ask.push((c, BETWEEN_MIN_RUNS - self.values[c].len()));
            }
            self.note(
                "locate",
                format!("runs at {}", ask.iter().map(|(k, _)| k.to_string()).collect::<Vec<_>>().join(" and ")),
                format!(
                    "commit {c} is {score:.2} standard errors from each end; settling it needs {BETWEEN_MIN_RUNS} runs \
                     there and {BETWEEN_MIN_END_RUNS} at each end"
                ),
            );
            self.ask(ask);
            return true;
        }
        // The lean is judged for contributors worth the search: a middle level within CONTRIBUTOR_MIN_SHARE of an
        // end is no staircase to look for (one end that measures a little off kept single steps probing for
        // hundreds of runs).
        let stair =
            if score >= BETWEEN_LEANING_Z { self.staircase(segment, slope, CONTRIBUTOR_MIN_SHARE) } else { None };
        let Some((bayes, stair)) = stair.filter(|(bayes, _)| *bayes >= STAIRCASE_LEAN_LOG_BAYES) else {
            return false;
        };
        // A real middle level shows on every commit of the middle range, one commit's bad luck only on that commit:
        // the runs go to the middle commit with the fewest, so the comparison pools many commits.
        let middle = &stair.middle_commits;
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
                "{} may sit between the levels (commit {c} is {score:.2} standard errors from each end; two changes \
                 against one: log Bayes factor {bayes:.2})",
                stair.middle_named().0
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
    pub(super) fn nearer_end(&self, segment: Segment, c: usize, slope: f64) -> usize {
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
    /// staircase. A history with merges is compared by [`Bisect::staircase_with_merges`].
    pub(super) fn staircase(&self, segment: Segment, slope: f64, margin: f64) -> Option<(f64, Staircase)> {
        if !self.topology.is_linear() {
            return self.staircase_with_merges(segment, slope, margin);
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
        // Every two-change fit as (first split, second split, log weight), for where each change may lie.
        let mut fits: Vec<(usize, usize, f64)> = Vec::new();
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
                let Some(prior) = middle_level_log_prior(low, (middle, se_middle), high, margin) else {
                    continue;
                };
                let log = ev + prior + (gap(s1) * gap(s2) / pairs).ln();
                two.push(log);
                fits.push((s1, s2, log));
                if best.as_ref().is_none_or(|(b, _)| log > *b) {
                    let se = |g: &model::Moments| sigma / g.w.sqrt();
                    best = Some((
                        log,
                        Staircase {
                            middle_commits: members[s1..s2].to_vec(),
                            ranges: [(members[s1 - 1], members[s1]), (members[s2 - 1], members[s2])],
                            range_mass: [0.0; 2],
                            low: (low, se(&groups[0])),
                            middle: (middle, se_middle),
                            high: (high, se(&groups[2])),
                        },
                    ));
                }
            }
        }
        let bayes = log_sum(&two) - log_sum(&one);
        let (_, mut staircase) = best.filter(|_| bayes.is_finite())?;
        (staircase.ranges, staircase.range_mass) = self.credible_ranges(&members, &fits, &staircase);
        Some((bayes, staircase))
    }

    /// The ranges a staircase reports: for each of its two changes, the tested commits between which it lies with
    /// [`RANGE_MASS`] of the probability the two-change fits give it, around the most probable fit's, each on its
    /// side of the middle commit with the most runs (the split that narrowing reads from, [`Staircase::split`]).
    /// The most probable fit's own ranges, between the commits it put next to the middle level, held no step at all
    /// in a quarter of the ranges reported on two 1 sigma steps and in half on three 0.5 sigma steps: a commit just
    /// past a step, measured a few times, reads as the level on its other side (docs/statistics.md).
    fn credible_ranges(
        &self,
        members: &[usize],
        fits: &[(usize, usize, f64)],
        stair: &Staircase,
    ) -> ([(usize, usize); 2], [f64; 2]) {
        let position = |c: usize| members.iter().position(|&m| m == c);
        let (Some(first), Some(second), Some(split)) =
            (position(stair.ranges[0].1), position(stair.ranges[1].1), stair.split(&self.values).and_then(position))
        else {
            return (stair.ranges, stair.range_mass);
        };
        let mut masses = [vec![Vec::new(); members.len()], vec![Vec::new(); members.len()]];
        for &(s1, s2, log) in fits {
            masses[0][s1].push(log);
            masses[1][s2].push(log);
        }
        let windows = [(first, 1..=split), (second, split + 1..=members.len() - 1)];
        let [(a1, b1, held1), (a2, b2, held2)] = [0, 1].map(|change| {
            let (centre, allowed) = windows[change].clone();
            let log_masses: Vec<f64> = masses[change].iter().map(|logs| log_sum(logs)).collect();
            credible_window(&log_masses, centre, allowed, RANGE_MASS)
        });
        ([(members[a1 - 1], members[b1]), (members[a2 - 1], members[b2])], [held1, held2])
    }

    /// [`Bisect::staircase`] on a history with merges. The change positions are the segment's commits, grouped by
    /// which tested commits hold them (as in the posterior): one change is a group, two changes a pair of groups
    /// (or two commits of one group, which the runs read as one change), every commit and every pair of commits
    /// equally likely. Two changes are fitted as changes that add ([`model::additive_levels`]), since a commit of
    /// one branch may hold the second without the first; the middle level, the level of the middle commit with the
    /// most runs, has the same uniform prior between the outer two as in a line, to which this reduces (the same
    /// evidence) when no tested commit holds the second change alone. The ranges of the staircase are the segment
    /// from its start to that middle commit and from there to its end: each holds one of the two changes.
    fn staircase_with_merges(&self, segment: Segment, slope: f64, margin: f64) -> Option<(f64, Staircase)> {
        let hypotheses = self.topology.segment(segment.lo, segment.hi);
        let mut members = vec![segment.lo];
        members.extend(hypotheses.iter().copied().filter(|&c| !self.untestable[c] && !self.values[c].is_empty()));
        if members.len() < 3 || members.last() != Some(&segment.hi) {
            return None;
        }
        let moments = self.commit_moments(&members, slope);
        // Each distinct signature (which members hold a change made there) with how many commits have it.
        let (signatures, group_of) = self.signature_groups(&hypotheses, &members);
        let mut groups: Vec<(Vec<bool>, f64)> = signatures.into_iter().map(|signature| (signature, 0.0)).collect();
        for g in group_of {
            groups[g].1 += 1.0;
        }
        let commits = hypotheses.len() as f64;
        let pairs = (commits * (commits - 1.0) / 2.0).max(1.0);
        let (mut one, mut two) = (Vec::new(), Vec::new());
        for (signature, count) in &groups {
            let (mut before, mut after) = (model::Moments::default(), model::Moments::default());
            for (m, &holds) in moments.iter().zip(signature) {
                if holds {
                    after = after.plus(m);
                } else {
                    before = before.plus(m);
                }
            }
            if let Some((evidence, _)) = model::levels_log_evidence(&[before, after]) {
                one.push(evidence + (count / commits).ln());
                if *count >= 2.0 {
                    two.push(evidence + (count * (count - 1.0) / 2.0 / pairs).ln());
                }
            }
        }
        let mut best: Option<(f64, Staircase)> = None;
        for (i, (a, count_a)) in groups.iter().enumerate() {
            for (b, count_b) in &groups[i + 1..] {
                // The middle commits hold one change and not the other; the one with the most runs names the
                // middle level (its group is "first").
                let middle: Vec<usize> = (0..members.len()).filter(|&t| a[t] != b[t]).collect();
                let Some(&split) = middle.iter().max_by_key(|&&t| self.values[members[t]].len()) else {
                    continue;
                };
                let (first, second) = if a[split] { (a, b) } else { (b, a) };
                let mut classes = [model::Moments::default(); 4];
                for (t, m) in moments.iter().enumerate() {
                    let class = match (first[t], second[t]) {
                        (false, false) => 0,
                        (true, false) => 1,
                        (false, true) => 2,
                        (true, true) => 3,
                    };
                    classes[class] = classes[class].plus(m);
                }
                let Some(fit) = model::additive_levels(&classes[0], &classes[1], &classes[2], &classes[3]) else {
                    continue;
                };
                let (low, high) = (fit.low.0, fit.high.0);
                if !(high > low) {
                    continue;
                }
                let Some(prior) = middle_level_log_prior(low, fit.middle, high, margin) else {
                    continue;
                };
                let log = fit.log_evidence + prior + (count_a * count_b / pairs).ln();
                two.push(log);
                if best.as_ref().is_none_or(|(b, _)| log > *b) {
                    let split = members[split];
                    best = Some((
                        log,
                        Staircase {
                            middle_commits: middle.iter().map(|&t| members[t]).collect(),
                            ranges: [(segment.lo, split), (split, segment.hi)],
                            range_mass: [0.0; 2],
                            low: fit.low,
                            middle: fit.middle,
                            high: fit.high,
                        },
                    ));
                }
            }
        }
        let bayes = log_sum(&two) - log_sum(&one);
        best.filter(|_| bayes.is_finite()).map(|(_, staircase)| (bayes, staircase))
    }

    /// Ends the segment as several contributors when the staircase model is decisively better than one change
    /// (see [`Bisect::staircase`]) and the middle level shows in runs adjacent in time to the nearer end's. Returns
    /// true when it ended the segment, or when it asked for interleaved pairs to see that (runs are then pending).
    pub(super) fn settle_staircase(&mut self, segment: Segment, slope: f64, phase: &str) -> bool {
        let Some((bayes, stair)) = self.staircase(segment, slope, 0.0) else {
            return false;
        };
        // As for one commit in between: the ends and the middle need runs enough that their levels are not the
        // luck of a few runs (the check is repeated at every decision).
        let middle_runs: usize = stair.middle_commits.iter().map(|&c| self.values[c].len()).sum();
        let settled = middle_runs >= BETWEEN_MIN_RUNS
            && self.values[segment.lo].len() >= BETWEEN_MIN_END_RUNS
            && self.values[segment.hi].len() >= BETWEEN_MIN_END_RUNS;
        if bayes < STAIRCASE_LOG_BAYES || !settled {
            return false;
        }
        // The levels come from every run, and load that the load model misses (a burst it cannot tell from a
        // level) moves whole visits: middle commits probed while a burst came and went read between the levels
        // when they are not. Runs of a middle commit and of an end taken one after the other share such load, so
        // their differences show a real middle level and cancel a borrowed one. The staircase is settled only when
        // those differences show it against each end; until then they get interleaved pairs, and after
        // PAIRED_MIDDLE_MAX_PAIRS pairs that do not, the segment goes on as if the lean were not there.
        let middle = &stair.middle_commits;
        // Both ends, not only the nearer one: a machine whose level wanders, or good commits read against a good
        // end measured at another level, can put a range of commits that all sit at one end's level between the
        // fitted levels, and when the fit takes the other end for the nearer one, the pairs with it show the whole
        // change. Pairs with both ends see that.
        if let Some((end, pairs, z)) = self.unpaired_end(middle, segment, slope) {
            if pairs >= PAIRED_MIDDLE_MAX_PAIRS {
                return false;
            }
            let Some(probed) = middle.iter().copied().min_by_key(|&m| self.values[m].len()) else {
                return false;
            };
            self.note(
                phase,
                format!("interleaved pairs at {probed} and {end}"),
                format!(
                    "two changes against one: log Bayes factor {bayes:.2}, {}",
                    {
                        let (middle, plural) = stair.middle_named();
                        paired_difference(&middle, plural, end, pairs, z)
                    }
                ),
            );
            self.ask(vec![(end, 2), (probed, 2)]);
            return true;
        }
        let (middle, plural) = stair.middle_named();
        self.note(
            phase,
            format!(
                "several contributors: {middle} {} between {} and {}",
                if plural { "sit" } else { "sits" },
                segment.lo,
                segment.hi
            ),
            format!(
                "two changes against one: log Bayes factor {bayes:.2}; levels {:.4}, {:.4}, {:.4}",
                stair.low.0, stair.middle.0, stair.high.0
            ),
        );
        self.record_staircase(segment, &stair, slope, phase);
        self.next_segment();
        true
    }

    /// Each range of a settled staircase (before and after its middle level) becomes a segment to narrow when its
    /// step is large against the noise (`narrowing_bar`); otherwise it is recorded as an unlocated contributor. How
    /// a narrowing that names no commit ends: [`Bisect::narrowing_ended`].
    pub(super) fn record_staircase(&mut self, segment: Segment, stair: &Staircase, slope: f64, phase: &str) {
        let noise = self.within_noise(segment, slope);
        // The ranges are narrowed from the segment's ends to the middle commit with the most runs, not between the
        // commits the fit put next to the middle level: with a few runs a commit past a step can read as the level
        // on the other side, and the step then lies outside the fitted range (two 3 sigma steps: 8% of jobs named
        // one culprit when narrowing from the end's side of the fit; a real series, 1 of 14 bisects). The middle
        // commit with the most runs is the one surely at the middle level, so each side of it holds one step.
        let Some(split) = stair.split(&self.values) else { return };
        let bar = narrowing_bar((stair.middle.0 - stair.low.0).min(stair.high.0 - stair.middle.0), noise);
        let (mut narrowed, mut reported) = (None, None);
        // After merges, the range after the split is cut where a merge brought the split's change in (see
        // `Topology::pieces_after`): its first parent reads a level below the split's, and the merge would pass
        // for the second step.
        let before = vec![Segment { lo: segment.lo, hi: split, top: false }];
        let after = self.parts_after(split, segment.hi);
        let ranges = [
            (stair.ranges[0], (stair.low, stair.middle), before, stair.range_mass[0]),
            (stair.ranges[1], (stair.middle, stair.high), after, stair.range_mass[1]),
        ];
        for ((lo, hi), (a, b), pieces, mass) in ranges {
            let step = b.0 - a.0;
            if self.narrow_if_large(&pieces, step, noise, bar, phase) {
                // A range narrowed in several pieces is not followed up as a whole (see `narrowing_ended`).
                narrowed = (pieces.len() == 1).then(|| (pieces[0].lo, pieces[0].hi));
            } else {
                self.push_staircase_range(stair, (lo, hi), (a, b), mass);
                reported = Some(((lo, hi), pieces));
            }
        }
        if let (Some(narrowed), Some((reported, search))) = (narrowed, reported) {
            self.staircase_siblings.push(StaircaseSibling { narrowed, reported, search });
        }
    }

    /// Queues a range to be narrowed to its commit, as the `pieces` that can be read against their starts (one in
    /// a line), when its `step` is at least `bar` times the `noise`, and says whether it did.
    fn narrow_if_large(&mut self, pieces: &[Segment], step: f64, noise: f64, bar: f64, phase: &str) -> bool {
        if noise <= 0.0 || step < bar * noise || pieces.is_empty() {
            return false;
        }
        for range in pieces {
            self.note(
                phase,
                format!("narrow the range ({}, {}]", range.lo, range.hi),
                format!("its step {step:.4} is {:.1} noise sigmas: cheap to locate", step / noise),
            );
            self.narrowing.push((range.lo, range.hi));
            self.queue.push(*range);
        }
        true
    }

    /// A segment ended without naming a commit. When it was queued to narrow a staircase range, the range is
    /// reported as an unlocated contributor if the runs at its ends show its change ([`Bisect::shows_change`]), as a
    /// part of the change not narrowed within the budget is; one whose ends do not differ held no step after all,
    /// and then the staircase's other range, when it was reported unlocated, is searched for the whole change.
    /// Returns whether the segment was such a range.
    ///
    /// `fresh_show_none` says that the range's own test, on fresh interleaved runs at its ends (as a narrowed
    /// range is judged), found no further contributor there: then it held no step, whatever all the runs at its
    /// ends say. Those include the runs that placed the staircase, and load over some of them can make a range look
    /// like a step: simulating the e2e series with a burst 18% faster over 25 runs, a range whose fresh runs read
    /// 0.0007 ± 0.0012 was reported as a third contributor beside the two true ones (3 of 160 jobs), and CI's series
    /// bisect named a one-commit range at its bad commit, unconfirmed, likely so. Its cost: a range that holds a
    /// real step too small for the fresh test is no longer reported (three 0.5 sigma steps under bursts, 100
    /// commits, 300 jobs: several contributors 91.3% to 89.7%; the Gaussian rows did not move).
    pub(super) fn narrowing_ended(&mut self, segment: Segment, fresh_show_none: bool) -> bool {
        let Some(i) = self.narrowing.iter().position(|&r| r == (segment.lo, segment.hi)) else {
            return false;
        };
        self.narrowing.remove(i);
        let slope = self.drift();
        let located =
            self.culprits.iter().any(|c| c.located && self.topology.in_segment(c.commit, segment.lo, segment.hi));
        if located {
            return true;
        }
        if !fresh_show_none && self.shows_change(segment, slope) {
            self.push_range(segment);
            return true;
        }
        // The range held no step after all, so the change is not shared: the staircase's other range, reported as
        // an unlocated contributor when its step was too small to narrow, holds all of it, and is searched like any
        // segment (on fresh runs, as a narrowed range is), from the commit the ranges were split at. A single step
        // read as a staircase ends this way: on a machine whose level wanders, commits visited while it sat high
        // read between good and bad; the range before them was narrowed and held nothing, and the job ended
        // inconclusive on the other range alone.
        let sibling = self.staircase_siblings.iter().position(|s| s.narrowed == (segment.lo, segment.hi));
        if let Some(sibling) = sibling.map(|i| self.staircase_siblings.remove(i)) {
            let reported = self.culprits.iter().position(|c| !c.located && (c.after, c.commit) == sibling.reported);
            if let Some(i) = reported {
                self.culprits.remove(i);
                for search in sibling.search {
                    self.note(
                        "reproduce",
                        format!("search ({}, {}] for the whole change", search.lo, search.hi),
                        format!(
                            "the staircase's range ({}, {}] holds no step, so its range ({}, {}] is not a part of the change but all of it",
                            segment.lo, segment.hi, sibling.reported.0, sibling.reported.1
                        ),
                    );
                    self.narrowing.push((search.lo, search.hi));
                    self.queue.push(search);
                }
            }
        }
        true
    }

    /// The first end of `segment` (lo, then hi) from which the `middle` commits do not differ by
    /// [`PAIRED_MIDDLE_Z`] standard errors in runs adjacent in time (see [`Bisect::paired_middle`]), with the pairs
    /// and their z; `None` when they differ from both.
    pub(super) fn unpaired_end(&self, middle: &[usize], segment: Segment, slope: f64) -> Option<(usize, usize, f64)> {
        let noise = self.within_noise(segment, slope);
        [(segment.lo, true), (segment.hi, false)].into_iter().find_map(|(end, end_is_low)| {
            let (pairs, z) = self.paired_middle(middle, end, end_is_low, slope, noise);
            (z < PAIRED_MIDDLE_Z).then_some((end, pairs, z))
        })
    }

    /// The runs of the `middle` commits paired with the run of `end` recorded just before or after each (every run
    /// of `end` used once), drift-corrected but not load-corrected (a pair shares its load): how many pairs, and
    /// the z of their mean difference, signed so that a middle level away from `end` towards the other end is
    /// positive. Fewer than [`MIN_PAIRS`] pairs give no z (negative infinity). The pairs' own spread is shrunk
    /// towards the spread `noise` (the within-commit noise; 0 when unknown) predicts for a difference, as
    /// verification's fresh pairs are ([`pooled_pair_sigma`]): three or four pairs that happen to agree would
    /// otherwise make a small mean difference look certain, and the check is repeated at every decision.
    pub(super) fn paired_middle(
        &self,
        middle: &[usize],
        end: usize,
        end_is_low: bool,
        slope: f64,
        noise: f64,
    ) -> (usize, f64) {
        let centre = self.records as f64 / 2.0;
        let oriented = |t: f64, v: f64| self.orientation * (v - slope * (t - centre));
        let mut end_runs: BTreeMap<usize, f64> =
            self.values[end].iter().map(|&(t, v)| (t as usize, oriented(t, v))).collect();
        let mut middle_runs: Vec<(usize, f64)> = middle
            .iter()
            .flat_map(|&m| self.values[m].iter().map(move |&(t, v)| (t as usize, v)))
            .map(|(t, v)| (t, oriented(t as f64, v)))
            .collect();
        middle_runs.sort_by_key(|&(t, _)| t);
        let mut differences = Vec::new();
        for (t, value) in middle_runs {
            let partner = [t.checked_sub(1), Some(t + 1)].into_iter().flatten().find(|k| end_runs.contains_key(k));
            if let Some(end_value) = partner.and_then(|k| end_runs.remove(&k)) {
                differences.push(if end_is_low { value - end_value } else { end_value - value });
            }
        }
        let n = differences.len();
        if n < MIN_PAIRS {
            return (n, f64::NEG_INFINITY);
        }
        let mean = differences.iter().sum::<f64>() / n as f64;
        let own_variance = differences.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0);
        let sigma =
            if noise > 0.0 { pooled_pair_sigma(own_variance, n as f64 - 1.0, noise) } else { own_variance.sqrt() };
        (n, mean / (sigma / (n as f64).sqrt()).max(f64::MIN_POSITIVE))
    }

    /// Records one range of a staircase (`after`, `commit`], between the fitted levels `a` and `b`, as an unlocated
    /// contributor, with its share of the good-to-bad change from those levels and, as its confidence, the
    /// probability `mass` with which it holds its change (0 when not known).
    pub(super) fn push_staircase_range(
        &mut self,
        stair: &Staircase,
        (after, commit): (usize, usize),
        (a, b): ((f64, f64), (f64, f64)),
        mass: f64,
    ) {
        let slope = self.drift();
        let (total, total_se) = self.top_change(slope).unwrap_or((stair.high.0 - stair.low.0, stair.high.1));
        let step = b.0 - a.0;
        let se = (a.1 * a.1 + b.1 * b.1).sqrt();
        let share = model::ratio_interval(step, se, total, total_se, SHARE_Z);
        self.culprits.push(Culprit::unlocated_range(after, commit, share, mass, step));
    }
}

/// The middle level's share of a staircase's evidence: its uniform prior between the outer levels (trimmed by
/// `margin` of the change at each end) integrated against its estimate (level, standard error), as a log. `None`
/// when the estimate leaves no mass inside.
fn middle_level_log_prior(low: f64, (middle, se): (f64, f64), high: f64, margin: f64) -> Option<f64> {
    let (lo_b, hi_b) = (low + margin * (high - low), high - margin * (high - low));
    let inside = crate::stats::normal_cdf((hi_b - middle) / se) - crate::stats::normal_cdf((lo_b - middle) / se);
    (inside > 0.0).then(|| inside.ln() - (hi_b - lo_b).ln())
}

/// The smallest window of consecutive positions in `allowed`, grown from `centre` towards the more probable
/// neighbour, that holds `level` of the mass of `allowed` (`log_masses` per position, unnormalised). Returns the
/// first and last positions and the share of the mass they hold; `centre` alone, holding 0, when it lies outside
/// `allowed` or there is no mass.
pub(super) fn credible_window(
    log_masses: &[f64],
    centre: usize,
    allowed: std::ops::RangeInclusive<usize>,
    level: f64,
) -> (usize, usize, f64) {
    let (lowest, highest) = (*allowed.start(), (*allowed.end()).min(log_masses.len().saturating_sub(1)));
    if !(lowest..=highest).contains(&centre) {
        return (centre, centre, 0.0);
    }
    let max = log_masses[lowest..=highest].iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !max.is_finite() {
        return (centre, centre, 0.0);
    }
    let mass = |s: usize| (log_masses[s] - max).exp();
    let total: f64 = (lowest..=highest).map(mass).sum();
    let (mut a, mut b, mut held) = (centre, centre, mass(centre));
    while held < level * total {
        let left = (a > lowest).then(|| mass(a - 1));
        let right = (b < highest).then(|| mass(b + 1));
        match (left, right) {
            (Some(l), Some(r)) if l >= r => (a, held) = (a - 1, held + l),
            (_, Some(r)) => (b, held) = (b + 1, held + r),
            (Some(l), None) => (a, held) = (a - 1, held + l),
            (None, None) => break,
        }
    }
    (a, b, held / total)
}

/// The log of the sum of the exponentials of `values`, without overflow; negative infinity for none.
fn log_sum(values: &[f64]) -> f64 {
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if max.is_finite() {
        max + values.iter().map(|x| (x - max).exp()).sum::<f64>().ln()
    } else {
        f64::NEG_INFINITY
    }
}

/// The fewest pairs of runs adjacent in time whose differences give a z ([`Bisect::paired_middle`]).
const MIN_PAIRS: usize = 3;

/// The clause of a log line saying why `subject` (a middle commit or commits; `plural` for the verb) is not yet
/// taken to differ from `end` in runs adjacent in time: by how few standard errors, or, below [`MIN_PAIRS`] pairs,
/// that there are too few pairs yet (the z of negative infinity they stand for read "-inf standard errors (1
/// pairs)", QA 50).
fn paired_difference(subject: &str, plural: bool, end: usize, pairs: usize, z: f64) -> String {
    let differ = if plural { "differ" } else { "differs" };
    if z.is_finite() {
        let standard_errors = format!("{z:.2} standard errors ({})", counted(pairs, "pair"));
        format!("but in runs adjacent in time {subject} {differ} from {end} by only {standard_errors}")
    } else {
        format!(
            "but {} of runs adjacent in time with {end} cannot show yet whether {subject} {differ} from it \
             ({MIN_PAIRS} are needed)",
            counted(pairs, "pair")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_names_middle_commits_and_paired_differences_as_sentences() {
        let stair = |middle_commits: Vec<usize>| Staircase {
            middle_commits,
            ranges: [(0, 1), (1, 2)],
            range_mass: [0.0; 2],
            low: (0.0, 0.0),
            middle: (0.0, 0.0),
            high: (0.0, 0.0),
        };
        assert_eq!(stair(vec![22]).middle_named(), ("commit 22".to_string(), false));
        assert_eq!(stair(vec![22, 23, 24]).middle_named(), ("commits 22 to 24".to_string(), true));
        assert_eq!(stair(vec![3, 5]).middle_named(), ("commits 3, 5".to_string(), true));
        let cases = [
            (5, 0.8, "but in runs adjacent in time commit 22 differs from 30 by only 0.80 standard errors (5 pairs)"),
            (
                1,
                f64::NEG_INFINITY,
                "but 1 pair of runs adjacent in time with 30 cannot show yet whether commit 22 differs from it (3 are \
                 needed)",
            ),
            (0, f64::NEG_INFINITY, "but 0 pairs of runs adjacent in time with 30 cannot show yet whether commit 22"),
        ];
        for (pairs, z, said) in cases {
            let words = paired_difference("commit 22", false, 30, pairs, z);
            assert!(words.starts_with(said), "{words}");
            assert!(!words.contains("inf"), "{words}");
        }
        assert!(paired_difference("commits 3, 5", true, 9, 4, 1.0).contains("commits 3, 5 differ from 9"));
    }
}
