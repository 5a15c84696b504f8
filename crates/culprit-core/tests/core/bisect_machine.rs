//! The bisect machine from outside: replay after a crash, untestable commits, merges, bad input.

use culprit_core::bisect::sim::{run_culprit, History, Oracle};
use culprit_core::bisect::{Action, Bisect, BisectConfig, BisectError, CommitNode, Sample, Status};
use culprit_core::rng::Rng;
use proptest::prelude::*;

/// Drives a machine to the end with noisy runs from `level(commit)`, returning every sample and the action seen
/// after each one.
fn drive(commits: &[CommitNode], level: impl Fn(usize) -> Option<f64>, seed: u64) -> (Vec<(usize, Sample)>, Vec<Action>) {
    let mut machine = Bisect::new(BisectConfig::default(), commits).expect("valid range");
    let mut rng = Rng::new(seed);
    let mut samples = Vec::new();
    let mut actions = vec![machine.next_action()];
    while let Action::RunBatch(batch) = machine.next_action() {
        let &(commit, _) = batch.iter().max_by_key(|(_, n)| *n).expect("non-empty batch");
        let sample = match level(commit) {
            Some(l) => Sample::Value(100.0 + l + rng.normal()),
            None => Sample::Untestable,
        };
        machine.record(commit, sample).expect("known commit");
        samples.push((commit, sample));
        actions.push(machine.next_action());
        assert!(samples.len() < 5000, "runaway bisect");
    }
    (samples, actions)
}

#[test]
fn replay_gives_the_same_next_action_and_outcome() {
    let commits = CommitNode::linear(200);
    let (samples, actions) = drive(&commits, |c| Some(if c >= 77 { 2.0 } else { 0.0 }), 5);
    let full = Bisect::replay(BisectConfig::default(), &commits, &samples).expect("replay");
    assert_eq!(full.next_action(), *actions.last().expect("actions"));
    match full.next_action() {
        Action::Done(outcome) => {
            assert_eq!(outcome.status, Status::Found);
            assert_eq!(outcome.culprits[0].commit, 77);
        }
        other => panic!("not done after replay: {other:?}"),
    }
    // A crash after any prefix: the rebuilt machine asks for exactly what the original asked for then.
    for cut in [0, 1, 7, samples.len() / 3, samples.len() / 2, samples.len() - 1] {
        let resumed = Bisect::replay(BisectConfig::default(), &commits, &samples[..cut]).expect("replay");
        assert_eq!(resumed.next_action(), actions[cut], "after {cut} samples");
    }
}

#[test]
fn untestable_commits_are_never_blamed_and_the_range_is_reported() {
    let history = History {
        commits: 60,
        steps: vec![(30, 2.5)],
        untestable: (0..=60).map(|c| c == 28 || c == 29 || c == 45).collect(),
        dag: None,
    };
    let mut oracle = Oracle::new(&history, culprit_core::bisect::sim::Noise::Gaussian, 11);
    let result = run_culprit(&history, &mut oracle, &BisectConfig::default());
    assert_eq!(result.status, Status::Found, "{:?}", result.log);
    assert_eq!(result.named, vec![30]);
    let commits = CommitNode::linear(61);
    let (samples, _) = drive(&commits, |c| if history.untestable[c] { None } else { Some(history.level(c)) }, 3);
    let machine = Bisect::replay(BisectConfig::default(), &commits, &samples).expect("replay");
    let outcome = machine.outcome().expect("done");
    let culprit = &outcome.culprits[0];
    assert_eq!(culprit.commit, 30);
    assert!(!history.untestable[culprit.commit]);
    if samples.iter().any(|&(c, s)| (c == 28 || c == 29) && s == Sample::Untestable) {
        // The change may be in the untestable commits just before: they are reported as suspects.
        assert!(culprit.untestable_suspects.iter().all(|c| [28, 29].contains(c)));
    }
}

#[test]
fn change_on_a_merged_branch_is_found() {
    // 0 good; branch A: 1-2-3 from 0; branch B: 4-5 from 0; merge 6 = (3, 5); 7 bad. The change enters at 5,
    // so 5, 6 and 7 are slow and branch A is not, whatever their index order.
    let parents: Vec<Vec<usize>> = vec![vec![], vec![0], vec![1], vec![2], vec![0], vec![4], vec![3, 5], vec![6]];
    let commits: Vec<CommitNode> = parents.into_iter().map(|p| CommitNode { parents: p, untestable: false }).collect();
    let slow = [5usize, 6, 7];
    let (samples, _) = drive(&commits, |c| Some(if slow.contains(&c) { 2.0 } else { 0.0 }), 9);
    let machine = Bisect::replay(BisectConfig::default(), &commits, &samples).expect("replay");
    let outcome = machine.outcome().expect("done");
    assert_eq!(outcome.status, Status::Found, "{:?}", outcome.log);
    assert_eq!(outcome.culprits.len(), 1);
    assert_eq!(outcome.culprits[0].commit, 5);
    assert_eq!(outcome.culprits[0].after, 4, "compared against its own parent, not the previous index");
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let backwards = vec![CommitNode { parents: vec![], untestable: false }, CommitNode { parents: vec![1], untestable: false }];
    assert_eq!(
        Bisect::new(BisectConfig::default(), &backwards).err(),
        Some(BisectError::ParentNotEarlier { commit: 1, parent: 1 })
    );
    assert!(matches!(Bisect::new(BisectConfig::default(), &CommitNode::linear(1)), Err(BisectError::TooFewCommits { .. })));
    let mut m = Bisect::new(BisectConfig::default(), &CommitNode::linear(5)).expect("valid");
    assert_eq!(m.record(9, Sample::Value(1.0)), Err(BisectError::UnknownCommit { commit: 9, count: 5 }));
}

#[test]
fn a_nan_at_good_makes_it_untestable_and_ends_without_a_culprit() {
    let mut m = Bisect::new(BisectConfig::default(), &CommitNode::linear(10)).expect("valid");
    m.record(0, Sample::Value(f64::NAN)).expect("known commit");
    for _ in 0..4 {
        m.record(9, Sample::Value(3.0)).expect("known commit");
    }
    match m.next_action() {
        Action::Done(outcome) => {
            assert!(outcome.culprits.is_empty());
            assert_ne!(outcome.status, Status::Found);
        }
        other => panic!("expected done, got {other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn no_sample_sequence_panics(seq in proptest::collection::vec((0usize..12, prop_oneof![
        Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY), -1e9f64..1e9, 0.0f64..2.0,
    ], any::<bool>()), 0..120)) {
        let mut m = Bisect::new(BisectConfig::default(), &CommitNode::linear(10)).expect("valid");
        for (commit, value, untestable) in seq {
            let sample = if untestable && commit % 5 == 0 { Sample::Untestable } else { Sample::Value(value) };
            let result = m.record(commit, sample);
            prop_assert_eq!(result.is_err(), commit >= 10);
            if let Action::Done(outcome) = m.next_action() {
                for c in &outcome.culprits {
                    prop_assert!(c.commit < 10);
                }
            }
        }
    }
}

#[test]
fn status_words_are_the_serialized_names() {
    use culprit_core::bisect::Status;
    for status in [Status::Found, Status::Multiple, Status::NotReproduced, Status::Inconclusive] {
        assert_eq!(serde_json::to_string(&status).unwrap(), format!("\"{}\"", status.word()));
    }
}

/// The runs of a real bisect (QA 23) in the order they finished, as (position in the range, value): 24 commits of a
/// program printing `level + N(0, 2)`, the level 100, then 106 from position 7, then 112 from position 16, bisected
/// with `--improvement` on `command.v_per_sec`. It ended with both steps named and 20 runs at each end.
const RUNS: [(usize, f64); 102] = [(0, 95.401931), (23, 110.375386), (0, 99.667937), (23, 115.931218), (0, 96.510415),
    (23, 111.241067), (0, 99.276421), (23, 112.86253), (11, 107.931134), (5, 99.411259), (8, 107.481625),
    (8, 101.657221), (11, 107.566457), (8, 105.417835), (8, 105.194934), (11, 105.584656), (23, 111.834565),
    (11, 106.575697), (23, 111.536286), (8, 107.744011), (0, 99.095272), (23, 114.041173), (8, 103.880177),
    (0, 96.037422), (23, 108.828312), (0, 97.305953), (23, 113.731745), (0, 101.73597), (23, 111.230008),
    (0, 99.570298), (23, 111.570341), (0, 99.076845), (23, 113.239494), (0, 95.81479), (11, 107.671108),
    (0, 101.388808), (11, 106.486743), (0, 99.932503), (11, 107.921444), (0, 102.905932), (11, 104.115621),
    (0, 104.075167), (11, 106.508369), (0, 97.242685), (11, 108.912848), (0, 101.68387), (11, 103.323572),
    (0, 98.490949), (11, 105.415425), (0, 99.05104), (11, 102.968746), (0, 100.679214), (11, 107.693916),
    (7, 105.042302), (6, 100.207326), (6, 102.27925), (7, 107.87277), (6, 102.109382), (7, 109.614235), (6, 98.082453),
    (7, 102.628727), (6, 98.933025), (7, 108.059894), (9, 106.588209), (4, 99.238635), (5, 98.928034), (9, 105.606357),
    (4, 101.129607), (5, 100.534303), (9, 103.432266), (4, 96.844876), (5, 103.663582), (9, 104.069142), (4, 101.96958),
    (11, 105.162128), (23, 113.6044), (11, 106.282676), (23, 109.62248), (11, 107.265146), (23, 107.340752),
    (11, 108.011907), (23, 108.316795), (11, 105.975905), (23, 115.020573), (11, 103.486963), (23, 114.740529),
    (11, 103.78829), (23, 112.786121), (11, 103.010362), (23, 113.767635), (17, 112.008084), (14, 105.766707),
    (15, 106.73351), (16, 109.702313), (15, 106.314348), (16, 109.838375), (15, 106.905223), (16, 115.124946),
    (15, 106.288451), (16, 113.696189), (15, 106.198051), (16, 110.952944)];

#[test]
fn the_reported_good_to_bad_change_is_read_on_every_run_at_the_ends() {
    // The session's own configuration, as the store keeps it (its costs are the machine's measured seconds).
    let config: BisectConfig = serde_json::from_str(
        r#"{"direction": "higher-is-worse", "build_cost": 0.05, "run_cost": 0.0248037685, "max_runs": 600,
            "alpha_reproduce": 0.05, "alpha_culprit": 0.01, "alpha_fresh": 0.01, "confidence": 0.6,
            "explain_most": 0.4, "partial_below": 0.8, "min_fresh_pairs": 2, "max_verify_pairs": 60,
            "max_reproduce_runs": 120, "min_effect_sigma": 0.4, "min_effect_relative": 0.0,
            "replicate_below_p": 0.1}"#,
    )
    .expect("the stored configuration");
    let samples: Vec<(usize, Sample)> = RUNS.iter().map(|&(c, v)| (c, Sample::Value(v))).collect();
    let machine = Bisect::replay(config, &CommitNode::linear(24), &samples).expect("a valid replay");
    let outcome = machine.outcome().expect("the session ended");
    assert_eq!(outcome.status, Status::Multiple);
    // The difference of the Student-t (nu = 4) locations of all 20 runs at good and all 20 at bad, fitted by EM as
    // docs/statistics.md describes (14 iterations from the medians, scale from 1.4826 * the median absolute
    // deviation, one degree of freedom per group), in numpy from the same runs: 13.032922389764849 (their plain
    // means differ by 12.8339). The outcome reported 14.590273768261696, the same fit on the first 4 runs a side,
    // on which the reproduce test had passed.
    let total = outcome.total_change.expect("a measured change");
    assert!((total - 13.032922389764849).abs() < 1e-9, "{total}");
}

#[test]
fn a_range_the_budget_left_is_a_share_of_the_change_the_outcome_reports() {
    // Three 0.5 sigma steps in 300 commits with a budget of 100 runs: the search ends with parts of the change in
    // ranges it could not narrow ("part of the change lies in (lo, hi]"). Such a range's share is its ends' change
    // (its `step`) over good-to-bad, the outcome's `total_change`: a reader divides the two printed numbers and gets
    // the share. Until QA 23 the range was divided by the change the reproduce test passed on, read on the ends'
    // first 4 runs a side, while the ends kept getting runs.
    use culprit_core::bisect::next_in_batch;
    use culprit_core::bisect::sim::Noise;
    let config = BisectConfig { max_runs: 100, ..BisectConfig::default() };
    let mut checked = 0;
    for seed in 0..400 {
        let history = History::generate(300, &[0.5, 0.5, 0.5], 0.0, &mut Rng::new(seed));
        let mut oracle = Oracle::new(&history, Noise::Gaussian, seed + 1000);
        let mut machine = Bisect::new(config.clone(), &history.nodes()).expect("a valid range");
        while let Action::RunBatch(batch) = machine.next_action() {
            let commit = next_in_batch(&batch).expect("a run wanted");
            let sample = oracle.run(commit).map_or(Sample::Untestable, Sample::Value);
            machine.record(commit, sample).expect("a commit of the range");
        }
        let outcome = machine.outcome().expect("the search ended");
        let Some(total) = outcome.total_change else { continue };
        for entry in outcome.log.iter().filter(|e| e.reason == "not narrowed within the budget") {
            let ends = entry.decision.trim_start_matches("part of the change lies in (").trim_end_matches(']');
            let Some((lo, hi)) = ends.split_once(", ") else { continue };
            let (lo, hi): (usize, usize) = (lo.parse().expect("a position"), hi.parse().expect("a position"));
            let Some(range) = outcome.culprits.iter().find(|c| !c.located && c.after == lo && c.commit == hi) else {
                continue;
            };
            // Several contributors with a located commit among them are read again on one set of levels.
            if outcome.culprits.iter().any(|c| c.located) {
                continue;
            }
            let read = range.step / total;
            assert!((range.share - read).abs() <= 1e-9 * read.abs(), "seed {seed}: {range:?} against {total}");
            checked += 1;
        }
    }
    // 400 seeds leave 5 such ranges (200 left 3 before session 52's drift test moved the searches' paths).
    assert!(checked >= 3, "only {checked} ranges left by the budget");
}

#[test]
fn a_budget_of_n_runs_is_at_most_n_runs() {
    // `--max-runs N` was checked before each decision, so a batch asked with a few runs left overshot it: CI's
    // three-step simulation took 601 runs at the 95th percentile of a 600-run budget. Every budget here ends
    // inside batches of several runs (4 a side to reproduce, pairs to verify).
    use culprit_core::bisect::next_in_batch;
    use culprit_core::bisect::sim::Noise;
    for (seed, max_runs) in (0..40).zip([7, 10, 13, 25, 41, 60, 99].into_iter().cycle()) {
        let history = History::generate(100, &[0.5, 0.5, 0.5], 0.0, &mut Rng::new(seed));
        let mut oracle = Oracle::new(&history, Noise::Gaussian, seed + 1000);
        let config = BisectConfig { max_runs, ..BisectConfig::default() };
        let mut machine = Bisect::new(config, &history.nodes()).expect("a valid range");
        while let Action::RunBatch(batch) = machine.next_action() {
            let commit = next_in_batch(&batch).expect("a run wanted");
            let sample = oracle.run(commit).map_or(Sample::Untestable, Sample::Value);
            machine.record(commit, sample).expect("a commit of the range");
        }
        let outcome = machine.outcome().expect("the search ended");
        assert!(outcome.runs <= max_runs, "seed {seed}: {} runs of a budget of {max_runs}", outcome.runs);
    }
}
