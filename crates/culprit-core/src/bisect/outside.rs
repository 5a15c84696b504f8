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

use super::{CommitEvidence, Culprit, CONTRIBUTOR_MIN_SHARE};
use serde::{Deserialize, Serialize};

/// Two-sided z of the 90% interval of a stretch's share, as the culprits' shares are reported.
const STRETCH_Z: f64 = 1.645;

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
    /// The 90% interval of `share` (Welch's standard error of the two means).
    pub share_low: f64,
    pub share_high: f64,
}

impl OpenStretch {
    /// Whether the runs at the stretch's ends show a further part of the change in it: their difference is at
    /// least [`CONTRIBUTOR_MIN_SHARE`] of the whole and its 90% interval excludes none.
    pub fn shows_more(&self) -> bool {
        self.share >= CONTRIBUTOR_MIN_SHARE && self.share_low > 0.0
    }

    /// Whether the runs at its ends are too few or too noisy to rule out a contributor of
    /// [`CONTRIBUTOR_MIN_SHARE`] there: the upper end of the interval reaches it.
    pub fn leaves_room(&self) -> bool {
        self.share_high >= CONTRIBUTOR_MIN_SHARE
    }
}

/// The stretches of a linear history (commits numbered in order) between and around `culprits`: consecutive
/// measured commits (two runs or more, testable) belong to one stretch unless a culprit's range (after, commit]
/// reaches between them. Stretches of one measured commit have no difference and are left out; so is everything
/// when `total` is zero or not finite (no share of it means anything).
pub fn open_stretches(evidence: &[CommitEvidence], culprits: &[Culprit], total: f64) -> Vec<OpenStretch> {
    if !(total.abs() > 0.0) || !total.is_finite() {
        return Vec::new();
    }
    let usable = |e: &&CommitEvidence| !e.untestable && e.runs >= 2 && e.mean.is_finite() && e.stddev.is_finite();
    let mut measured: Vec<&CommitEvidence> = evidence.iter().filter(usable).collect();
    measured.sort_by_key(|e| e.commit);
    let splits = |p: usize, q: usize| culprits.iter().any(|c| c.after < q && c.commit > p);
    let mut stretches = Vec::new();
    let mut start = 0;
    for i in 1..=measured.len() {
        let ends_here = i == measured.len() || splits(measured[i - 1].commit, measured[i].commit);
        if !ends_here {
            continue;
        }
        if i - start >= 2 {
            let (first, last) = (measured[start], measured[i - 1]);
            let difference = last.mean - first.mean;
            let se = (first.stddev.powi(2) / first.runs as f64 + last.stddev.powi(2) / last.runs as f64).sqrt();
            let share = difference / total;
            let half_width = STRETCH_Z * se / total.abs();
            stretches.push(OpenStretch {
                after: first.commit,
                upto: last.commit,
                share,
                share_low: share - half_width,
                share_high: share + half_width,
            });
        }
        start = i;
    }
    stretches
}

impl super::Outcome {
    /// What the runs say about the history outside the reported culprits, in words for the summary and the mail
    /// (`short` names a commit): every stretch whose end commits differ by a contributor's share (each outcome that
    /// names something), and for several contributors or an inconclusive end, the stretches whose runs leave room
    /// for one. A lone confirmed culprit was shown to explain most of the change, so the room its runs leave
    /// elsewhere (nearly always some: ruling out a quarter of a 1.5 sigma change takes 90 runs a commit) is not
    /// news. `None` when there is nothing to say.
    pub fn outside_words(&self, short: impl Fn(usize) -> String) -> Option<String> {
        let span = |t: &OpenStretch| format!("after {} up to {}", short(t.after), short(t.upto));
        let percent = |share: f64| format!("{:.0}%", 100.0 * share);
        let mut sentences = Vec::new();
        let showing: Vec<&OpenStretch> = self.open_stretches.iter().filter(|t| t.shows_more()).collect();
        for t in &showing {
            sentences.push(format!(
                "the runs at {} and {} differ by {} of the change (90% interval {}..{}): part of it may lie {}, \
                 which the bisect did not search further",
                short(t.after),
                short(t.upto),
                percent(t.share),
                percent(t.share_low),
                percent(t.share_high),
                span(t)
            ));
        }
        if matches!(self.status, super::Status::Multiple | super::Status::Inconclusive) {
            let room: Vec<String> =
                self.open_stretches.iter().filter(|t| t.leaves_room() && !t.shows_more()).map(span).collect();
            if !room.is_empty() {
                sentences.push(format!(
                    "these runs cannot rule out a further contributor of {} of the change {}",
                    percent(CONTRIBUTOR_MIN_SHARE),
                    room.join(", or ")
                ));
            }
        }
        (!sentences.is_empty()).then(|| format!("outside what is named: {}", sentences.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(commit: usize, runs: usize, mean: f64, stddev: f64) -> CommitEvidence {
        CommitEvidence { commit, runs, mean, stddev, untestable: false }
    }

    fn range(after: usize, commit: usize) -> Culprit {
        Culprit::unlocated_range(after, commit, (0.5, 0.3, 0.7), 0.9, 1.0)
    }

    #[test]
    fn stretches_are_cut_where_a_culprit_lies_and_read_on_their_end_commits() {
        // Good 0 at 100, commits 10 and 20 at 100 and 101, the culprit (20, 25], commits 25, 30 and bad 40 at 102.
        let evidence = [
            measured(0, 20, 100.0, 1.0),
            measured(10, 6, 100.0, 1.0),
            measured(20, 10, 101.0, 1.0),
            measured(25, 10, 102.0, 1.0),
            measured(30, 4, 102.0, 1.0),
            measured(40, 20, 102.0, 1.0),
        ];
        let stretches = open_stretches(&evidence, &[range(20, 25)], 2.0);
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
    }

    #[test]
    fn commits_alone_between_culprits_untestable_or_with_one_run_make_no_stretch() {
        let mut untestable = measured(12, 5, 150.0, 1.0);
        untestable.untestable = true;
        let evidence = [
            measured(0, 20, 100.0, 1.0),
            measured(5, 1, 140.0, 0.0),
            untestable,
            measured(15, 8, 101.0, 1.0),
            measured(30, 20, 101.0, 1.0),
        ];
        // Culprits (0, 15] and (15, 30]: every measured commit is alone in its stretch.
        assert!(open_stretches(&evidence, &[range(0, 15), range(15, 30)], 1.0).is_empty());
        // Without culprits, the one-run and untestable commits are skipped and good meets bad.
        let whole = open_stretches(&evidence, &[], 1.0);
        assert_eq!(whole.len(), 1);
        assert_eq!((whole[0].after, whole[0].upto), (0, 30));
        // No change to take a share of: nothing.
        assert!(open_stretches(&evidence, &[], 0.0).is_empty());
        assert!(open_stretches(&evidence, &[], f64::NAN).is_empty());
    }

    #[test]
    fn many_runs_rule_a_contributor_out_and_few_leave_room_for_one() {
        let stretch = |runs: usize| {
            open_stretches(&[measured(0, runs, 10.0, 1.0), measured(9, runs, 10.0, 1.0)], &[range(9, 10)], 1.0)[0]
        };
        // 1.645 * sqrt(2 / n) below 0.25 from n = 87 runs a side.
        assert!(!stretch(100).leaves_room());
        assert!(stretch(20).leaves_room());
        assert!(!stretch(20).shows_more());
    }

    #[test]
    fn the_words_name_stretches_showing_more_always_and_room_for_more_only_for_several_or_inconclusive() {
        use crate::bisect::{Outcome, Status};
        let showing = OpenStretch { after: 0, upto: 20, share: 0.5, share_low: 0.2, share_high: 0.8 };
        let room = OpenStretch { after: 25, upto: 40, share: 0.1, share_low: -0.2, share_high: 0.4 };
        let ruled_out = OpenStretch { after: 40, upto: 50, share: 0.0, share_low: -0.1, share_high: 0.1 };
        let outcome = |status: Status, open_stretches: Vec<OpenStretch>| Outcome {
            status,
            culprits: vec![range(20, 25)],
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
        let short = |c: usize| format!("c{c}");
        let several = outcome(Status::Multiple, vec![showing, room, ruled_out]).outside_words(short);
        assert_eq!(
            several.as_deref(),
            Some(
                "outside what is named: the runs at c0 and c20 differ by 50% of the change (90% interval 20%..80%): \
                 part of it may lie after c0 up to c20, which the bisect did not search further; these runs cannot \
                 rule out a further contributor of 25% of the change after c25 up to c40"
            )
        );
        let found = outcome(Status::Found, vec![showing, room]).outside_words(short).unwrap_or_default();
        assert!(found.contains("after c0 up to c20") && !found.contains("c25"), "{found}");
        assert_eq!(outcome(Status::Found, vec![room, ruled_out]).outside_words(short), None);
        assert_eq!(outcome(Status::Inconclusive, vec![ruled_out]).outside_words(short), None);
        assert!(outcome(Status::Inconclusive, vec![room]).outside_words(short).is_some());
    }

    /// The stretches on simulated bisects: a series of three 0.4 sigma steps in 30 commits (QA 48's wall-time series
    /// in miniature) leaves steps out of what it names, and most of them lie in a stretch the outcome flags; a lone
    /// 1.5 sigma step, all of whose change its culprit holds, seldom has a stretch said to show more of it.
    #[test]
    fn on_simulated_bisects_most_steps_left_out_lie_in_a_flagged_stretch_and_lone_culprits_seldom_flag_one() {
        use crate::bisect::sim::{run_culprit, trial, Oracle, SimConfig};
        use crate::bisect::BisectConfig;
        let flagged = |t: &OpenStretch| t.shows_more() || t.leaves_room();
        let series = SimConfig { commits: 30, steps: vec![0.4, 0.4, 0.4], seed: 49, ..SimConfig::default() };
        let (mut left_out, mut in_flagged) = (0, 0);
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
            for &(k, _) in history.steps.iter().filter(|s| !held(s.0)) {
                left_out += 1;
                let holding = |t: &&OpenStretch| t.after < k && k <= t.upto && flagged(t);
                in_flagged += usize::from(result.open_stretches.iter().any(|t| holding(&t)));
            }
        }
        assert!(left_out >= 10, "the series should leave steps out: {left_out}");
        assert!(in_flagged * 4 >= left_out * 3, "{in_flagged} of {left_out} steps left out lie in a flagged stretch");
        let lone = SimConfig { commits: 100, seed: 49, ..SimConfig::default() };
        let mut showing = 0;
        for seed in 0..40 {
            let (history, noise_seed, _) = trial(&lone, seed);
            let mut oracle = Oracle::for_config(&history, &lone, noise_seed);
            let result = run_culprit(&history, &mut oracle, &BisectConfig::default());
            showing += usize::from(result.open_stretches.iter().any(OpenStretch::shows_more));
        }
        assert!(showing <= 4, "{showing} of 40 lone culprits flag a stretch showing more of the change");
    }
}
