//! Unit tests of the bisect machine's internals: the posterior and the decision rules.

use super::*;
use proptest::prelude::*;

fn machine(count: usize) -> Bisect {
    match Bisect::new(BisectConfig::default(), &CommitNode::linear(count)) {
        Ok(m) => m,
        Err(e) => panic!("setup: {e}"),
    }
}

/// Puts values straight into the machine's store, bypassing decisions, to test the posterior alone.
fn seed_values(m: &mut Bisect, values: &[(usize, &[f64])]) {
    for &(commit, vs) in values {
        for &v in vs {
            let index = m.records as f64;
            m.records += 1;
            m.values[commit].push((index, v));
        }
    }
}

#[test]
fn first_action_is_interleaved_runs_at_good_and_bad() {
    let m = machine(10);
    assert_eq!(m.next_action(), Action::RunBatch(vec![(0, 4), (9, 4)]));
}

#[test]
fn posterior_table() {
    let good: &[f64] = &[0.1, -0.2, 0.0, 0.15, -0.1, 0.05];
    let bad: &[f64] = &[1.6, 1.4, 1.5, 1.55, 1.45, 1.5];
    // (values per commit, commit expected to hold most mass, minimum mass)
    let cases: Vec<(Vec<(usize, &[f64])>, usize, f64)> = vec![
        // Commit 2 good, 3 bad: the change is at 3.
        (vec![(0, good), (2, good), (3, bad), (5, bad)], 3, 0.99),
        // Commit 1 already bad: the change is at 1.
        (vec![(0, good), (1, bad), (5, bad)], 1, 0.99),
        // Everything up to 4 good: the change is at 5, the bad commit itself.
        (vec![(0, good), (4, good), (5, bad)], 5, 0.99),
    ];
    for (values, want, min_mass) in cases {
        let mut m = machine(6);
        seed_values(&mut m, &values);
        let posterior = m.posterior(0, 5, 0.0).expect("posterior");
        let total: f64 = posterior.probability.iter().sum();
        assert!((total - 1.0).abs() < 1e-9);
        let (best, mass) = posterior.best_class().expect("best");
        assert_eq!(best, want, "values {values:?}");
        assert!(mass >= min_mass, "mass {mass} for {values:?}");
    }
}

#[test]
fn untested_stretch_shares_mass_evenly() {
    let mut m = machine(6);
    seed_values(&mut m, &[(0, &[0.0, 0.1, -0.1]), (5, &[1.5, 1.4, 1.6])]);
    let posterior = m.posterior(0, 5, 0.0).expect("posterior");
    for p in &posterior.probability {
        assert!((p - 0.2).abs() < 1e-9, "{:?}", posterior.probability);
    }
}

#[test]
fn untestable_commits_join_the_next_testable_class() {
    let mut m = machine(6);
    m.untestable[2] = true;
    m.untestable[3] = true;
    seed_values(&mut m, &[(0, &[0.0, 0.1, -0.1, 0.05]), (1, &[0.0, 0.1, -0.1]), (4, &[1.5, 1.4, 1.6]), (5, &[1.5, 1.4, 1.6])]);
    let posterior = m.posterior(0, 5, 0.0).expect("posterior");
    let (best, mass) = posterior.best_class().expect("best");
    assert_eq!(best, 4, "the class is represented by its testable commit");
    assert!(mass > 0.99);
    let classes: Vec<(usize, usize)> = posterior.hypotheses.iter().copied().zip(posterior.class.iter().copied()).collect();
    assert!(classes.contains(&(2, 4)) && classes.contains(&(3, 4)) && classes.contains(&(4, 4)));
    let parent = m.reference_parent(Segment { lo: 0, hi: 5, top: true }, 4, &posterior);
    assert_eq!(parent, 1, "the comparison skips the untestable commits");
}

#[test]
fn next_run_goes_to_the_middle_when_nothing_is_known() {
    // After reproducing, the first locate step builds the commit that splits the mass in half.
    let mut m = machine(101);
    for i in 0..40 {
        let (c, v) = if i % 2 == 0 { (0, 0.0 + 0.01 * (i % 7) as f64) } else { (100, 3.0 + 0.01 * (i % 5) as f64) };
        if m.record(c, Sample::Value(v)).is_err() {
            panic!("record");
        }
        if let Action::RunBatch(batch) = m.next_action() {
            if batch.iter().any(|&(c, _)| c != 0 && c != 100) {
                assert!(batch.iter().all(|&(c, _)| (49..=51).contains(&c)), "{batch:?}");
                return;
            }
        }
    }
    panic!("never left the reproduce phase: {:?}", m.log());
}

proptest! {
    #[test]
    fn posterior_sums_to_one(values in proptest::collection::vec((0usize..8, -1e6f64..1e6), 0..40)) {
        let mut m = machine(8);
        for &(c, v) in &values {
            let index = m.records as f64;
            m.records += 1;
            m.values[c].push((index, v));
        }
        if let Some(posterior) = m.posterior(0, 7, 0.0) {
            let total: f64 = posterior.probability.iter().sum();
            prop_assert!((total - 1.0).abs() < 1e-9, "total {}", total);
            prop_assert!(posterior.probability.iter().all(|p| p.is_finite() && *p >= 0.0));
        }
    }
}
