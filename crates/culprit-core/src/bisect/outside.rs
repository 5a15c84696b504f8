//! The stretches of a linear history outside every reported culprit, and how much of the change their runs leave
//! room for there.
//!
//! A bisect that names culprits also claims, without saying so, that the rest of the range holds no further
//! contributor worth naming. Under heavy noise that claim can be wrong with nothing in the outcome to show it: QA 48
//! bisected three equal steps measured on wall time and got ranges leaving one step out at a stated probability of
//! 0.96 to 0.999997 (that probability is the model's for "a change lies in this range", true of each range, and
//! silent about the commits outside them). The runs already taken say how far that silence can be trusted: within a
//! stretch that no culprit splits, the first and the last measured commits are read at one level, and their runs'
//! difference, as a share of the whole change, is what could still lie between them.

use super::{Culprit, CONTRIBUTOR_MIN_SHARE};
use serde::{Deserialize, Serialize};

/// Two-sided z of the 90% interval of a stretch's share, as the culprits' shares are reported.
const STRETCH_Z: f64 = 1.645;

/// The chance that any of an outcome's stretches shows more of the change ([`OpenStretch::shows_more`]) where none
/// holds any: one-sided, split evenly among the stretches (Bonferroni). With one stretch the bound is the 90%
/// interval's low end, as before.
const SHOWS_MORE_FAMILY_P: f64 = 0.05;

/// A stretch (after, upto] of tested commits that no reported culprit or range splits, with the difference of the
/// runs at its two ends as a share of the good-to-bad change.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OpenStretch {
    /// The stretch's first measured commit (its runs are one end of the difference).
    pub after: usize,
    /// Its last measured commit.
    pub upto: usize,
    /// The mean of `upto`'s runs less `after`'s, over the good-to-bad change (same sign: the change's direction).
    pub share: f64,
    /// The 90% interval of `share` (from the difference's standard error, see [`open_stretches`]).
    pub share_low: f64,
    pub share_high: f64,
    /// The low end of the one-sided bound that [`OpenStretch::shows_more`] reads: at level 1 - 5%/k for the k
    /// stretches of the outcome, so that the chance of any of them showing more by luck is 5%, not 5% a stretch.
    #[serde(default = "no_bound")]
    pub shows_more_low: f64,
}

/// What an outcome stored before [`OpenStretch::shows_more_low`] existed reads: no stretch shows more (a replay
/// derives it again).
fn no_bound() -> f64 {
    f64::NEG_INFINITY
}

impl OpenStretch {
    /// Whether the runs at the stretch's ends show another part of the change in it: their difference is at least
    /// [`CONTRIBUTOR_MIN_SHARE`] of the whole and its lower bound, corrected for the outcome's several stretches
    /// (`shows_more_low`), is above none. Only the change's own direction: a stretch's end commits next to a culprit
    /// are the ones the search chose for looking like either side (the parent low, the culprit high), so the other
    /// way is where their luck shows, and counting it flagged 7 of 40 simulated lone culprits instead of 1. The
    /// correction because a lone culprit has a stretch on each side: at 5% each, QA 50 saw one clean wall-time
    /// single step in 10 speak of more before it.
    pub fn shows_more(&self) -> bool {
        self.share >= CONTRIBUTOR_MIN_SHARE && self.shows_more_low > 0.0
    }

    /// Whether the runs at its ends are too few or too noisy to rule out a contributor of
    /// [`CONTRIBUTOR_MIN_SHARE`] there: the upper end of the interval reaches it.
    pub fn leaves_room(&self) -> bool {
        self.share_high >= CONTRIBUTOR_MIN_SHARE
    }
}

/// The stretches of a linear history (commits numbered in order) between and around `culprits`: consecutive
/// `measured` commits belong to one stretch unless what a culprit covers reaches between them (a range's (after,
/// commit], a located commit with its untestable suspects). Each
/// stretch of two measured commits or more is read by `difference(first, last)`, the difference of the last's level
/// less the first's and its standard error, in the units and orientation of `total` (the good-to-bad change).
/// Stretches the difference cannot read are left out; so is everything when `total` is zero or not finite (no share
/// of it means anything).
pub fn open_stretches(
    measured: &[usize],
    culprits: &[Culprit],
    total: f64,
    difference: impl Fn(usize, usize) -> Option<(f64, f64)>,
) -> Vec<OpenStretch> {
    if !(total.abs() > 0.0) || !total.is_finite() {
        return Vec::new();
    }
    let mut measured = measured.to_vec();
    measured.sort_unstable();
    measured.dedup();
    // What a culprit covers: a range's commits (after, commit]; a located commit's own set, it and the untestable
    // commits just before it that no run tells apart from it, not back to the tested commit it was compared with
    // (that can be good itself, and the stretch before it went unread: QA 49's rAw3).
    let covered = |c: &Culprit| match c.located {
        true => {
            let first = c.untestable_suspects.iter().copied().chain([c.commit]).min().unwrap_or(c.commit);
            (first.saturating_sub(1), c.commit)
        }
        false => (c.after, c.commit),
    };
    let splits = |p: usize, q: usize| culprits.iter().map(covered).any(|(after, commit)| after < q && commit > p);
    // Each stretch's ends, share and the share's standard error; the bounds come after, as the level of
    // `shows_more_low` depends on how many stretches there are.
    let mut read = Vec::new();
    let mut start = 0;
    for i in 1..=measured.len() {
        let ends_here = i == measured.len() || splits(measured[i - 1], measured[i]);
        if !ends_here {
            continue;
        }
        let (first, last) = (measured[start], measured[i - 1]);
        if let Some((step, se)) = (first != last).then(|| difference(first, last)).flatten() {
            if step.is_finite() && se.is_finite() {
                read.push((first, last, step / total, se / total.abs()));
            }
        }
        start = i;
    }
    let family_z = crate::stats::normal_quantile(1.0 - SHOWS_MORE_FAMILY_P / read.len().max(1) as f64);
    read.into_iter()
        .map(|(after, upto, share, se)| OpenStretch {
            after,
            upto,
            share,
            share_low: share - STRETCH_Z * se,
            share_high: share + STRETCH_Z * se,
            shows_more_low: share - family_z * se,
        })
        .collect()
}

impl super::Bisect {
    /// [`open_stretches`] on the machine's own reading of its runs: each commit's runs corrected for drift and for
    /// load that came and went, as every decision reads them, located by the robust fit, with the noise pooled over
    /// every tested commit (QA 49: plain means of two commits measured minutes apart under different load read a
    /// clean single step's good stretch as holding 114% of the change).
    pub(super) fn open_stretches(&self, culprits: &[Culprit], total: f64, slope: f64) -> Vec<OpenStretch> {
        if !self.topology.is_linear() || culprits.is_empty() {
            return Vec::new();
        }
        let last = self.values.len().saturating_sub(1);
        let noise = self.within_noise(super::Segment { lo: 0, hi: last, top: true }, slope);
        let measured: Vec<usize> =
            (0..self.values.len()).filter(|&c| !self.untestable[c] && self.values[c].len() >= 2).collect();
        let difference = |a: usize, b: usize| {
            let (runs_a, runs_b) = (self.adjusted(a, slope), self.adjusted(b, slope));
            let fit = super::fit_t(&[&runs_a, &runs_b])?;
            let se = noise * (1.0 / runs_a.len() as f64 + 1.0 / runs_b.len() as f64).sqrt();
            (noise > 0.0).then_some((fit.locations[1] - fit.locations[0], se))
        };
        open_stretches(&measured, culprits, total, difference)
    }

    /// When every segment is settled and budget remains: the stretches of the outcome about to be given whose runs
    /// show more of the change ([`OpenStretch::shows_more`]) are searched before it is given, each once, as a
    /// residual segment is: a reproduce test of its ends on fresh runs (its ends are the commits the search chose
    /// for looking like either side, so the runs that made it show more are not read again), then locating and
    /// verifying a contributor there like any other. QA 50: a bisect of three slowdowns ended with "25% (10%..41%)
    /// may lie" between two commits and stopped with budget left. Returns whether one was queued (the phase is then
    /// its reproduce test); a stretch still showing more when the budget ends is said in the outcome as before.
    pub(super) fn search_open_stretches(&mut self, slope: f64) -> bool {
        if self.reproduced != Some(true) || self.culprits.is_empty() {
            return false;
        }
        let Some((total, _)) = self.reported_total(slope) else {
            return false;
        };
        let showing: Vec<OpenStretch> = self
            .open_stretches(&self.culprits, total, slope)
            .into_iter()
            .filter(|t| t.shows_more() && !self.stretch_searches.contains(&(t.after, t.upto)))
            .collect();
        if showing.is_empty() {
            return false;
        }
        for t in showing {
            self.note(
                "reproduce",
                format!("search the open stretch ({}, {}]", t.after, t.upto),
                format!(
                    "every segment is settled, but the runs at {} and {} differ by {:.0}% of the change (90% interval \
                     {:.0}%..{:.0}%), outside everything named",
                    t.after,
                    t.upto,
                    100.0 * t.share,
                    100.0 * t.share_low,
                    100.0 * t.share_high
                ),
            );
            self.stretch_searches.push((t.after, t.upto));
            self.fresh_only.push((t.after, t.upto));
            self.queue.push(super::Segment { lo: t.after, hi: t.upto, top: false });
        }
        self.next_segment();
        true
    }
}

/// The stretches an outcome speaks of ([`super::Outcome::outside_words`]): every one that shows more of the change,
/// and those that leave room for a contributor, for several contributors, an inconclusive end, or a lone culprit
/// that leaves a contributor's share unexplained (its share below 75%; QA 49: a lone culprit at 40% said nothing of
/// the commits where the rest lay). A lone culprit that explains most of the change is not followed by the room
/// its runs leave elsewhere (nearly always some: ruling out a quarter of a 1.5 sigma change takes 90 runs a commit;
/// its share interval's low end below 75% would have spoken of it in 195 of 300 simulated single steps).
pub fn stretches_said(status: super::Status, culprits: &[Culprit], stretches: &[OpenStretch]) -> Vec<OpenStretch> {
    let lone_uncertain = match culprits {
        [only] => only.share.is_finite() && only.share < 1.0 - CONTRIBUTOR_MIN_SHARE,
        _ => false,
    };
    let say_room = lone_uncertain || matches!(status, super::Status::Multiple | super::Status::Inconclusive);
    stretches.iter().copied().filter(|t| t.shows_more() || (say_room && t.leaves_room())).collect()
}

impl super::Outcome {
    /// What the runs say about the history outside the reported culprits ([`stretches_said`]), in words for the
    /// summary and the mail (`name` names a commit by its position); `None` when there is nothing to say.
    pub fn outside_words(&self, name: impl Fn(usize) -> String) -> Option<String> {
        let percent = |share: f64| format!("{:.0}%", 100.0 * share);
        let sentences: Vec<String> = stretches_said(self.status, &self.culprits, &self.open_stretches)
            .iter()
            .map(|t| {
                let read = format!(
                    "the runs at {} and {} differ by {} of the change (90% interval {}..{})",
                    name(t.after),
                    name(t.upto),
                    percent(t.share),
                    percent(t.share_low),
                    percent(t.share_high)
                );
                let span = format!("after {} up to {}", name(t.after), name(t.upto));
                if t.shows_more() {
                    format!("{read}: part of it may lie {span}")
                } else {
                    let contributor = percent(CONTRIBUTOR_MIN_SHARE);
                    format!("{read}: too few runs to rule out a further contributor of {contributor} {span}")
                }
            })
            .collect();
        (!sentences.is_empty()).then(|| format!("outside what is named: {}", sentences.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (commit, runs, mean, standard deviation) of the measured commits, and the difference of two of them with
    /// Welch's standard error, as a table test reads its levels.
    struct Table(Vec<(usize, usize, f64, f64)>);

    impl Table {
        fn commits(&self) -> Vec<usize> {
            self.0.iter().map(|row| row.0).collect()
        }

        fn difference(&self, a: usize, b: usize) -> Option<(f64, f64)> {
            let row = |c: usize| self.0.iter().find(|row| row.0 == c).copied();
            let ((_, n_a, mean_a, sd_a), (_, n_b, mean_b, sd_b)) = (row(a)?, row(b)?);
            Some((mean_b - mean_a, (sd_a * sd_a / n_a as f64 + sd_b * sd_b / n_b as f64).sqrt()))
        }

        fn stretches(&self, culprits: &[Culprit], total: f64) -> Vec<OpenStretch> {
            open_stretches(&self.commits(), culprits, total, |a, b| self.difference(a, b))
        }
    }

    fn range(after: usize, commit: usize) -> Culprit {
        Culprit::unlocated_range(after, commit, (0.5, 0.3, 0.7), 0.9, 1.0)
    }

    /// A stretch with a 90% interval and its bound for showing more at the interval's low end (one stretch).
    fn stretch_of(after: usize, upto: usize, share: f64, share_low: f64, share_high: f64) -> OpenStretch {
        OpenStretch { after, upto, share, share_low, share_high, shows_more_low: share_low }
    }

    #[test]
    fn qa50_5_the_bound_for_showing_more_is_corrected_for_the_outcomes_several_stretches() {
        // A lone culprit (20, 25] with a stretch on each side; the before stretch's runs differ by 1.8 standard
        // errors of half the change: above none at 90% alone (z 1.645), not once both stretches share 5% (z 1.96).
        let se = (2.0f64 / 10.0).sqrt();
        let before_runs = [(0, 10, 100.0, 1.0), (20, 10, 100.0 + 1.8 * se, 1.0), (25, 10, 102.0, 1.0)];
        let table = Table([&before_runs[..], &[(40, 10, 102.0, 1.0)]].concat());
        let both = table.stretches(&[range(20, 25)], 2.0);
        assert_eq!(both.len(), 2);
        let before = both[0];
        assert!(before.share >= CONTRIBUTOR_MIN_SHARE && before.share_low > 0.0, "{before:?}");
        assert!((before.shows_more_low - (before.share - 1.959964 * se / 2.0)).abs() < 1e-6, "{before:?}");
        assert!(!before.shows_more(), "{before:?}");
        // The same runs as the outcome's one stretch (a culprit at bad's end) show more, as the 90% interval says.
        let alone = Table(before_runs.to_vec());
        let one = alone.stretches(&[range(20, 25)], 2.0);
        assert_eq!(one.len(), 1);
        assert!((one[0].shows_more_low - one[0].share_low).abs() < 1e-4 && one[0].shows_more(), "{:?}", one[0]);
    }

    #[test]
    fn stretches_are_cut_where_a_culprit_lies_and_read_on_their_end_commits() {
        // Good 0 at 100, commits 10 and 20 at 100 and 101, the culprit (20, 25], commits 25, 30 and bad 40 at 102.
        let table = Table(vec![
            (0, 20, 100.0, 1.0),
            (10, 6, 100.0, 1.0),
            (20, 10, 101.0, 1.0),
            (25, 10, 102.0, 1.0),
            (30, 4, 102.0, 1.0),
            (40, 20, 102.0, 1.0),
        ]);
        let stretches = table.stretches(&[range(20, 25)], 2.0);
        assert_eq!(stretches.len(), 2);
        let (before, after) = (stretches[0], stretches[1]);
        assert_eq!((before.after, before.upto), (0, 20));
        assert!((before.share - 0.5).abs() < 1e-12);
        let se = (1.0f64 / 20.0 + 1.0 / 10.0).sqrt();
        assert!((before.share_high - (0.5 + 1.645 * se / 2.0)).abs() < 1e-12);
        assert!(before.shows_more() && before.leaves_room());
        assert_eq!((after.after, after.upto), (25, 40));
        assert!(after.share.abs() < 1e-12);
        assert!(!after.shows_more());
        // A located culprit covers itself and the untestable commits just before it, not everything back to the
        // commit it was compared with: here good, with commits 10 and 20 measured in between.
        let mut located = Culprit::unmeasured(25, 0);
        located.untestable_suspects = vec![24];
        let stretches = table.stretches(&[located], 2.0);
        assert_eq!(stretches.iter().map(|t| (t.after, t.upto)).collect::<Vec<_>>(), [(0, 20), (25, 40)]);
        // Half the change the other way, beyond doubt, is read but not said to show more of it.
        let back = Table(vec![(0, 40, 100.0, 0.5), (10, 40, 99.0, 0.5), (20, 40, 102.0, 0.5)]);
        let stretch = back.stretches(&[range(10, 20)], 2.0)[0];
        assert!(stretch.share < -0.25 && !stretch.shows_more() && !stretch.leaves_room(), "{stretch:?}");
    }

    #[test]
    fn commits_alone_between_culprits_or_unread_make_no_stretch() {
        let table = Table(vec![(0, 20, 100.0, 1.0), (15, 8, 101.0, 1.0), (30, 20, 101.0, 1.0)]);
        // Culprits (0, 15] and (15, 30]: every measured commit is alone in its stretch.
        assert!(table.stretches(&[range(0, 15), range(15, 30)], 1.0).is_empty());
        // Without culprits, good meets bad.
        let whole = table.stretches(&[], 1.0);
        assert_eq!(whole.len(), 1);
        assert_eq!((whole[0].after, whole[0].upto), (0, 30));
        // No change to take a share of, or ends the difference cannot read: nothing.
        assert!(table.stretches(&[], 0.0).is_empty());
        assert!(table.stretches(&[], f64::NAN).is_empty());
        assert!(open_stretches(&[0, 15, 30], &[], 1.0, |_, _| None).is_empty());
        assert!(open_stretches(&[0, 15, 30], &[], 1.0, |_, _| Some((f64::NAN, 1.0))).is_empty());
    }

    #[test]
    fn many_runs_rule_a_contributor_out_and_few_leave_room_for_one() {
        let stretch =
            |runs: usize| Table(vec![(0, runs, 10.0, 1.0), (9, runs, 10.0, 1.0)]).stretches(&[range(9, 10)], 1.0)[0];
        // 1.645 * sqrt(2 / n) below 0.25 from n = 87 runs a side.
        assert!(!stretch(100).leaves_room());
        assert!(stretch(20).leaves_room());
        assert!(!stretch(20).shows_more());
    }

    #[test]
    fn the_words_say_what_shows_more_always_and_the_room_left_where_what_is_named_leaves_room() {
        use crate::bisect::{Outcome, Status};
        let showing = stretch_of(0, 20, 0.5, 0.2, 0.8);
        let back = stretch_of(50, 60, -0.4, -0.6, -0.2);
        let room = stretch_of(25, 40, 0.1, -0.2, 0.4);
        let ruled_out = stretch_of(40, 50, 0.0, -0.1, 0.1);
        let outcome = |status: Status, share: f64, open_stretches: Vec<OpenStretch>| Outcome {
            status,
            culprits: vec![Culprit::unlocated_range(20, 25, (share, share - 0.3, share + 0.3), 0.9, 1.0)],
            runs: 100,
            builds: 5,
            total_change: Some(2.0),
            evidence: vec![],
            log: vec![],
            reason: String::new(),
            build_spread: None,
            improved: false,
            below_min_change: false,
            sensitivity: None,
            open_stretches,
        };
        let name = |c: usize| format!("c{c}");
        let several = outcome(Status::Multiple, 0.8, vec![showing, room, ruled_out, back]).outside_words(name);
        assert_eq!(
            several.as_deref(),
            Some(
                "outside what is named: the runs at c0 and c20 differ by 50% of the change (90% interval 20%..80%): \
                 part of it may lie after c0 up to c20; the runs at c25 and c40 differ by 10% of the change (90% \
                 interval -20%..40%): too few runs to rule out a further contributor of 25% after c25 up to c40"
            )
        );
        // A lone culprit that explains most of the change: what shows more, not the room left.
        let found = outcome(Status::Found, 0.8, vec![showing, room]).outside_words(name).unwrap_or_default();
        assert!(found.contains("after c0 up to c20") && !found.contains("c25"), "{found}");
        assert_eq!(outcome(Status::Found, 0.8, vec![room, ruled_out]).outside_words(name), None);
        // One that explains less than three quarters leaves room, and says where.
        let uncertain = outcome(Status::Found, 0.4, vec![room, ruled_out]).outside_words(name).unwrap_or_default();
        assert!(uncertain.contains("too few runs") && uncertain.contains("after c25 up to c40"), "{uncertain}");
        assert_eq!(outcome(Status::Inconclusive, 0.8, vec![ruled_out]).outside_words(name), None);
        assert!(outcome(Status::Inconclusive, 0.8, vec![room]).outside_words(name).is_some());
    }

    /// The stretches on simulated bisects: a series of three 0.4 sigma steps in 30 commits (QA 48's wall-time series
    /// in miniature) leaves steps out of what it names, and most of them lie in a stretch the outcome speaks of; a
    /// lone 1.5 sigma step, all of whose change its culprit holds, seldom has the outcome speak of one.
    #[test]
    fn on_simulated_bisects_most_steps_left_out_lie_in_a_stretch_spoken_of_and_lone_culprits_seldom_speak() {
        use crate::bisect::sim::{run_culprit, trial, Oracle, SimConfig};
        use crate::bisect::BisectConfig;
        let series = SimConfig { commits: 30, steps: vec![0.4, 0.4, 0.4], seed: 49, ..SimConfig::default() };
        let (mut left_out, mut spoken_of) = (0, 0);
        for seed in 0..40 {
            let (history, noise_seed, _) = trial(&series, seed);
            let mut oracle = Oracle::for_config(&history, &series, noise_seed);
            let result = run_culprit(&history, &mut oracle, &BisectConfig::default());
            let held = |k: usize| {
                result.culprits.iter().any(|c| if c.located { c.commit == k } else { c.after < k && k <= c.commit })
            };
            if result.culprits.is_empty() {
                continue;
            }
            let said = stretches_said(result.status, &result.culprits, &result.open_stretches);
            for &(k, _) in history.steps.iter().filter(|s| !held(s.0)) {
                left_out += 1;
                spoken_of += usize::from(said.iter().any(|t| t.after < k && k <= t.upto));
            }
        }
        assert!(left_out >= 10, "the series should leave steps out: {left_out}");
        assert!(spoken_of * 2 >= left_out, "{spoken_of} of {left_out} steps left out lie in a stretch spoken of");
        let lone = SimConfig { commits: 100, seed: 49, ..SimConfig::default() };
        let mut speaking = 0;
        for seed in 0..40 {
            let (history, noise_seed, _) = trial(&lone, seed);
            let mut oracle = Oracle::for_config(&history, &lone, noise_seed);
            let result = run_culprit(&history, &mut oracle, &BisectConfig::default());
            let said = stretches_said(result.status, &result.culprits, &result.open_stretches);
            speaking += usize::from(!said.is_empty());
        }
        assert!(speaking <= 4, "{speaking} of 40 lone culprits speak of a stretch outside them");
    }
}
