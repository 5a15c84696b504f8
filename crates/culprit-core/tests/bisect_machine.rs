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
