//! How much of a bisect is left: what the machine has spent per phase, read without changing any decision, and the
//! estimate of the runs, builds and time still to come that the driver prints as progress.

use super::*;

/// What the machine is doing now, for the estimate of what is left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// Runs at good and bad until they differ: nothing says yet how long the search will take, or whether it will
    /// happen at all.
    Confirming,
    /// A later segment's ends (the rest of a change a culprit explained only part of, a staircase's range) are
    /// tested before it is searched.
    Retesting,
    /// The posterior over where the change sits is narrowed.
    Locating,
    /// Fresh interleaved pairs at the candidate and its parent.
    Verifying,
    Done,
}

/// What the machine has spent so far and how much is left to learn, read from its state ([`Bisect::progress`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    pub stage: Stage,
    /// Classes of candidate commits (commits no testable commit tells apart count once) of the segment searched.
    pub candidates: usize,
    /// Entropy of the segment's posterior over those classes, in bits: the halvings still needed on average. For a
    /// segment not being located yet, log2 of its candidates.
    pub bits_left: f64,
    /// Bits learned in this segment so far: log2 of its candidates less `bits_left`.
    pub bits_learned: f64,
    /// Valid runs at good and bad until the regression was confirmed (those so far while confirming).
    pub confirm_runs: usize,
    /// Valid runs and newly built commits while locating the current segment.
    pub locate_runs: usize,
    pub locate_builds: usize,
    /// Valid runs of the verification going on now (zero when none is).
    pub verify_runs_now: usize,
    /// Mean valid runs of the verifications that ended in this bisect, if any did.
    pub verify_runs_typical: Option<f64>,
    /// The fewest fresh pairs a verification takes ([`BisectConfig::min_fresh_pairs`]).
    pub min_fresh_pairs: usize,
    /// The false-alarm bounds of the confirmation and of a verification's fresh pairs
    /// ([`BisectConfig::alpha_reproduce`], [`BisectConfig::alpha_fresh`]).
    pub alpha_reproduce: f64,
    pub alpha_fresh: f64,
}

/// The estimate of what a bisect still needs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Estimate {
    /// No basis yet: the regression is still being confirmed at good and bad.
    NotConfirmed,
    /// Runs and newly built commits left (rounded up).
    Left { runs: usize, builds: usize },
    Done,
}

impl Estimate {
    /// The estimate once `made` more runs were made since it was taken, and never fewer runs than `at_least` (the
    /// runs the current batch still has to make, which a low estimate would contradict on the same line).
    pub fn after_runs(self, made: usize, at_least: usize) -> Estimate {
        match self {
            Estimate::Left { runs, builds } => Estimate::Left { runs: runs.saturating_sub(made).max(at_least), builds },
            other => other,
        }
    }

    /// The estimate with a build more for each of the commits `revisits` ([`Bisect::revisits`]) whose build is gone
    /// (`kept` says which still have theirs: the driver knows its worktrees). QA 49: a bisect told "about 13 runs
    /// left, ~1s" then built bad again, which with a kernel is an hour.
    pub fn with_rebuilds(self, revisits: &[usize], kept: impl Fn(usize) -> bool) -> Estimate {
        let gone = revisits.iter().filter(|&&commit| !kept(commit)).count();
        match self {
            Estimate::Left { runs, builds } => Estimate::Left { runs, builds: builds + gone },
            other => other,
        }
    }

    /// Seconds the work left takes at the measured seconds per run and per build; `None` without an estimate.
    pub fn seconds(&self, per_run: f64, per_build: f64) -> Option<f64> {
        match *self {
            Estimate::Left { runs, builds } => Some(runs as f64 * per_run + builds as f64 * per_build),
            Estimate::Done => Some(0.0),
            Estimate::NotConfirmed => None,
        }
    }
}

/// The runs and builds a bisect still needs, from what it has spent so far ([`Progress`]).
///
/// It assumes one change in the range (a bisect that finds several contributors searches each of their segments
/// the same way, and takes longer than this says), and that the search goes on as it went so far:
/// - *Locating*: each bit of the posterior's entropy left is a halving of the candidates, and costs what a bit has
///   cost in this segment so far: runs per bit = (confirm runs a side + locate runs) / (1 + bits learned), that is,
///   before anything is learned, the runs a side it took to tell good from bad (the same step, told apart at one
///   commit), weighed as one bit's worth, and then more and more the measured cost. Builds per bit likewise, with one
///   build a bit as the prior (a halving tests a new commit).
/// - *Verifying*: the runs of the verifications that ended in this bisect, or else the runs of the confirmation
///   (fresh pairs at culprit and parent tell the same step apart) scaled by how much higher the verification's bar
///   is: a sequential test's expected runs grow with the log of its threshold, ln(1/alpha_fresh) over
///   ln(1/alpha_reproduce), 1.54 at the defaults. Never fewer than the minimum fresh pairs; less what the current
///   verification has run, and at least one pair more while it goes on.
/// - *Retesting* a later segment: its ends' test is taken to cost one confirmation's runs, then it is located.
///
/// While the regression is being confirmed there is no basis ([`Estimate::NotConfirmed`]).
pub fn estimate_left(progress: &Progress) -> Estimate {
    let per_side = progress.confirm_runs as f64 / 2.0;
    let bit_weight = 1.0 + progress.bits_learned.max(0.0);
    let runs_per_bit = (per_side + progress.locate_runs as f64) / bit_weight;
    let builds_per_bit = (1.0 + progress.locate_builds as f64) / bit_weight;
    let bar_ratio = (1.0 / progress.alpha_fresh).ln() / (1.0 / progress.alpha_reproduce).ln();
    let bar_ratio = if bar_ratio.is_finite() && bar_ratio > 0.0 { bar_ratio } else { 1.0 };
    let verify_typical = progress
        .verify_runs_typical
        .unwrap_or(progress.confirm_runs as f64 * bar_ratio)
        .max(2.0 * progress.min_fresh_pairs as f64);
    let locate = |bits: f64| (bits.max(0.0) * runs_per_bit, bits.max(0.0) * builds_per_bit);
    let (runs, builds) = match progress.stage {
        Stage::Confirming => return Estimate::NotConfirmed,
        Stage::Done => return Estimate::Done,
        Stage::Locating => {
            let (runs, builds) = locate(progress.bits_left);
            (runs + verify_typical, builds)
        }
        Stage::Retesting => {
            let (runs, builds) = locate(progress.bits_left);
            (progress.confirm_runs as f64 + runs + verify_typical, builds)
        }
        Stage::Verifying => ((verify_typical - progress.verify_runs_now as f64).max(2.0), 0.0),
    };
    Estimate::Left { runs: runs.ceil() as usize, builds: builds.ceil() as usize }
}

/// What the machine spent per phase, counted as runs are recorded (see [`Bisect::progress`]); it takes no part in
/// any decision.
#[derive(Debug, Clone, Default)]
pub(super) struct Spent {
    confirm_runs: usize,
    /// The segment being located, and the runs and new builds spent locating it.
    locating: Option<(usize, usize)>,
    locate_runs: usize,
    locate_builds: usize,
    /// The verification going on (its first record) and its valid runs.
    verifying: Option<usize>,
    verify_runs_now: usize,
    /// Valid runs and count of the verifications that ended.
    verify_runs_ended: usize,
    verifies_ended: usize,
}

impl Spent {
    /// Counts one record at `phase`: `valid` when it is a valid run, `new_build` when its commit had no record yet.
    pub(super) fn count(&mut self, phase: &Phase, reproduced: Option<bool>, valid: bool, new_build: bool) {
        if let Phase::Verify { start_records, .. } = *phase {
            if self.verifying != Some(start_records) {
                self.end_verification();
                self.verifying = Some(start_records);
            }
            self.verify_runs_now += usize::from(valid);
            return;
        }
        self.end_verification();
        match *phase {
            Phase::Reproduce { segment, .. } if segment.top && reproduced.is_none() => {
                self.confirm_runs += usize::from(valid);
            }
            Phase::Locate { segment } => {
                if self.locating != Some((segment.lo, segment.hi)) {
                    (self.locating, self.locate_runs, self.locate_builds) = (Some((segment.lo, segment.hi)), 0, 0);
                }
                self.locate_runs += usize::from(valid);
                self.locate_builds += usize::from(new_build);
            }
            _ => {}
        }
    }

    fn end_verification(&mut self) {
        if self.verifying.take().is_some() {
            self.verify_runs_ended += self.verify_runs_now;
            self.verifies_ended += 1;
            self.verify_runs_now = 0;
        }
    }
}

impl Bisect {
    /// The commits, already built and measured, that the rest of the bisect runs again if one commit explains the
    /// change, for the rebuilds [`Estimate::with_rebuilds`] counts where their builds are gone:
    /// - verifying: the candidate and its parent (more fresh pairs), and an end of the segment whose change from
    ///   the candidate's side, on the runs so far, reaches [`verify::RESIDUAL_SUSPECT_Z`] standard errors: the
    ///   check that follows the pairs then asks it for more runs, or searches from it (QA 49's `rK`: bad, built
    ///   again);
    /// - retesting a later segment: its two ends;
    /// - locating: none, since the commits it tests are new (counted as builds by [`estimate_left`]).
    pub fn revisits(&self) -> Vec<usize> {
        if self.outcome.is_some() {
            return Vec::new();
        }
        let mut commits = match self.phase {
            Phase::Verify { segment, commit, parent, .. } => {
                let slope = self.decided_drift.0;
                let residuals = self.residual_steps(segment, parent, commit, slope);
                let ends = residuals.iter().filter(|r| r.z >= verify::RESIDUAL_SUSPECT_Z).map(|r| r.end);
                [commit, parent].into_iter().chain(ends).collect()
            }
            Phase::Reproduce { segment, .. } if !(segment.top && self.reproduced.is_none()) => {
                vec![segment.lo, segment.hi]
            }
            _ => Vec::new(),
        };
        commits.retain(|&c| !self.values[c].is_empty() && !self.untestable[c]);
        commits.sort_unstable();
        commits.dedup();
        commits
    }

    /// What the bisect has spent so far and how much it has left to learn, for [`estimate_left`]. It reads the state
    /// (the current segment's posterior included) and changes nothing.
    pub fn progress(&self) -> Progress {
        let spent = &self.spent;
        let (stage, segment) = match self.phase {
            Phase::Reproduce { segment, .. } if segment.top && self.reproduced.is_none() => (Stage::Confirming, None),
            Phase::Reproduce { segment, .. } => (Stage::Retesting, Some(segment)),
            Phase::Locate { segment } => (Stage::Locating, Some(segment)),
            Phase::Verify { segment, .. } => (Stage::Verifying, Some(segment)),
            Phase::Finished => (Stage::Done, None),
        };
        let stage = if self.outcome.is_some() { Stage::Done } else { stage };
        let (mut candidates, mut bits_left, mut bits_learned) = (0, 0.0, 0.0);
        if let Some(segment) = segment {
            if let Some(posterior) = self.posterior(segment.lo, segment.hi, self.decided_drift.0) {
                let masses = posterior.class_masses();
                candidates = masses.len();
                let uniform = (candidates.max(1) as f64).log2();
                let entropy: f64 = masses.values().filter(|&&m| m > 0.0).map(|&m| -m * m.log2()).sum();
                // A segment not being located has learned nothing of its own yet, whatever its runs say.
                bits_left = if stage == Stage::Retesting { uniform } else { entropy.clamp(0.0, uniform) };
                bits_learned = uniform - bits_left;
            }
        }
        let located_here = match self.phase {
            Phase::Locate { segment } | Phase::Verify { segment, .. } => {
                spent.locating == Some((segment.lo, segment.hi))
            }
            _ => false,
        };
        Progress {
            stage,
            candidates,
            bits_left,
            bits_learned,
            confirm_runs: spent.confirm_runs,
            locate_runs: if located_here { spent.locate_runs } else { 0 },
            locate_builds: if located_here { spent.locate_builds } else { 0 },
            verify_runs_now: if stage == Stage::Verifying { spent.verify_runs_now } else { 0 },
            verify_runs_typical: (spent.verifies_ended > 0)
                .then(|| spent.verify_runs_ended as f64 / spent.verifies_ended as f64),
            min_fresh_pairs: self.config.min_fresh_pairs,
            alpha_reproduce: self.config.alpha_reproduce,
            alpha_fresh: self.config.alpha_fresh,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn progress(stage: Stage, confirm_runs: usize, bits: (f64, f64), located: (usize, usize)) -> Progress {
        Progress {
            stage,
            candidates: 1 << 10,
            bits_left: bits.0,
            bits_learned: bits.1,
            confirm_runs,
            locate_runs: located.0,
            locate_builds: located.1,
            verify_runs_now: 0,
            verify_runs_typical: None,
            min_fresh_pairs: 2,
            alpha_reproduce: 0.05,
            alpha_fresh: 0.01,
        }
    }

    #[test]
    fn an_estimate_counts_off_the_runs_made_since_and_never_says_fewer_than_the_batch_left() {
        let left = Estimate::Left { runs: 30, builds: 2 };
        assert_eq!(left.after_runs(0, 4), left);
        assert_eq!(left.after_runs(10, 4), Estimate::Left { runs: 20, builds: 2 });
        assert_eq!(left.after_runs(28, 4), Estimate::Left { runs: 4, builds: 2 });
        assert_eq!(left.after_runs(40, 0), Estimate::Left { runs: 0, builds: 2 });
        assert_eq!(Estimate::Left { runs: 2, builds: 0 }.after_runs(0, 4), Estimate::Left { runs: 4, builds: 0 });
        assert_eq!(Estimate::NotConfirmed.after_runs(5, 4), Estimate::NotConfirmed);
        assert_eq!(Estimate::Done.after_runs(5, 4), Estimate::Done);
    }

    #[test]
    fn qa49_5a_a_commit_run_again_after_its_build_is_gone_counts_a_build() {
        let left = Estimate::Left { runs: 13, builds: 0 };
        let kept = |commit: usize| commit == 17 || commit == 18;
        assert_eq!(left.with_rebuilds(&[17, 18], kept), left);
        assert_eq!(left.with_rebuilds(&[17, 18, 29], kept), Estimate::Left { runs: 13, builds: 1 });
        assert_eq!(left.with_rebuilds(&[0, 29], |_| false), Estimate::Left { runs: 13, builds: 2 });
        assert_eq!(Estimate::NotConfirmed.with_rebuilds(&[0, 29], |_| false), Estimate::NotConfirmed);
        assert_eq!(Estimate::Done.with_rebuilds(&[0, 29], |_| false), Estimate::Done);
    }

    #[test]
    fn qa49_5a_a_verification_runs_its_candidate_and_parent_again_and_locating_runs_new_commits() {
        let history = sim::History::generate(200, &[1.5], 0.0, &mut Rng::new(7));
        let mut oracle = sim::Oracle::new(&history, sim::Noise::Gaussian, 11);
        let (mut verifying, mut locating) = (0, 0);
        sim::run_culprit_watched(&history, &mut oracle, &BisectConfig::default(), &mut |machine| {
            let revisits = machine.revisits();
            assert!(revisits.iter().all(|&c| !machine.values[c].is_empty()), "{revisits:?}");
            match machine.phase {
                Phase::Verify { commit, parent, .. } => {
                    verifying += 1;
                    let pair = [commit, parent].into_iter().filter(|&c| !machine.values[c].is_empty());
                    assert!(pair.clone().all(|c| revisits.contains(&c)), "{revisits:?}");
                }
                Phase::Locate { .. } => {
                    locating += 1;
                    assert!(revisits.is_empty(), "{revisits:?}");
                }
                _ => {}
            }
        });
        assert!(verifying > 0 && locating > 0, "the bisect verified ({verifying}) and located ({locating})");
    }

    #[test]
    fn estimate_table() {
        // The verification's bar over the confirmation's: ln(100) / ln(20) = 1.5372.
        let later = |mut p: Progress, typical: Option<f64>, now: usize| {
            (p.verify_runs_typical, p.verify_runs_now) = (typical, now);
            p
        };
        let cases: Vec<(&str, Progress, Estimate)> = vec![
            ("confirming: no basis", progress(Stage::Confirming, 8, (0.0, 0.0), (0, 0)), Estimate::NotConfirmed),
            ("done", progress(Stage::Done, 16, (0.0, 10.0), (80, 10)), Estimate::Done),
            // 8 runs a side as one bit's cost: 10 bits x 8 = 80 runs, 10 builds; verify 16 x 1.5372 = 24.6.
            (
                "first locate step",
                progress(Stage::Locating, 16, (10.0, 0.0), (0, 0)),
                Estimate::Left { runs: 105, builds: 10 },
            ),
            // (8 + 40) / (1 + 6) = 6.857 runs a bit, 4 bits left: 27.4; (1 + 5) / 7 builds a bit: 3.4; a verification
            // took 20 runs in this bisect.
            (
                "measured cost",
                later(progress(Stage::Locating, 16, (4.0, 6.0), (40, 5)), Some(20.0), 0),
                Estimate::Left { runs: 48, builds: 4 },
            ),
            ("verifying", later(progress(Stage::Verifying, 16, (0.5, 9.5), (60, 8)), None, 10), Estimate::Left {
                runs: 15,
                builds: 0,
            }),
            ("verifying past typical: one pair", later(progress(Stage::Verifying, 16, (0.5, 9.5), (60, 8)), None, 30), {
                Estimate::Left { runs: 2, builds: 0 }
            }),
            // A later segment: a confirmation (16) + 3 bits x 8 + a verification of 10 runs, above 2 pairs.
            (
                "retesting a later segment",
                later(progress(Stage::Retesting, 16, (3.0, 0.0), (0, 0)), Some(10.0), 0),
                Estimate::Left { runs: 50, builds: 3 },
            ),
            // The minimum fresh pairs bound a verification from below.
            (
                "tiny confirmation",
                progress(Stage::Locating, 2, (1.0, 0.0), (0, 0)),
                Estimate::Left { runs: 5, builds: 1 },
            ),
        ];
        for (what, p, want) in cases {
            assert_eq!(estimate_left(&p), want, "{what}: {p:?}");
        }
        assert_eq!(Estimate::Left { runs: 40, builds: 3 }.seconds(2.0, 60.0), Some(260.0));
        assert_eq!(Estimate::NotConfirmed.seconds(2.0, 60.0), None);
    }

    #[test]
    fn progress_reads_each_stage_of_a_real_bisect_without_changing_it() {
        let history = sim::History::generate(200, &[1.5], 0.0, &mut Rng::new(7));
        let config = BisectConfig::default();
        let mut stages = Vec::new();
        let mut oracle = sim::Oracle::new(&history, sim::Noise::Gaussian, 11);
        let mut first_locate = None;
        let watched = sim::run_culprit_watched(&history, &mut oracle, &config, &mut |machine| {
            let p = machine.progress();
            if stages.last() != Some(&p.stage) {
                stages.push(p.stage);
            }
            if p.stage == Stage::Locating && first_locate.is_none() {
                first_locate = Some(p);
            }
        });
        let unwatched = sim::run_culprit(&history, &mut sim::Oracle::new(&history, sim::Noise::Gaussian, 11), &config);
        assert_eq!((watched.runs, &watched.named), (unwatched.runs, &unwatched.named));
        assert_eq!(stages.first(), Some(&Stage::Confirming), "{stages:?}");
        assert!(stages.contains(&Stage::Locating) && stages.contains(&Stage::Verifying), "{stages:?}");
        let first = first_locate.expect("the bisect located");
        assert!(first.confirm_runs >= 2 * INITIAL_RUNS_PER_SIDE, "{first:?}");
        // Nothing is learned in the segment when locating begins but what the ends' runs say: close to log2 of the
        // 199 candidates (the bad end is one of them).
        assert!(first.candidates >= 190 && first.bits_left > 7.0, "{first:?}");
        assert!(matches!(estimate_left(&first), Estimate::Left { runs, .. } if runs > first.confirm_runs));
    }
}
