//! Unit tests of the bisect machine's internals: the posterior and the decision rules.

use super::staircase::{
    credible_window, Staircase, BETWEEN_LEANING_Z, BETWEEN_Z, PAIRED_MIDDLE_MAX_PAIRS, PAIRED_MIDDLE_Z, RANGE_MASS,
    STAIRCASE_LOG_BAYES,
};
use super::verify::IMPLAUSIBLE_MAX_PAIRS;
use super::*;
use proptest::prelude::*;

fn machine(count: usize) -> Bisect {
    machine_over(&CommitNode::linear(count))
}

/// A machine with the default configuration over `nodes` (a history with merges, say).
fn machine_over(nodes: &[CommitNode]) -> Bisect {
    match Bisect::new(BisectConfig::default(), nodes) {
        Ok(m) => m,
        Err(e) => panic!("setup: {e}"),
    }
}

/// One simulated bisect of `history` with the default configuration, on `noise` drawn from `seed`.
fn simulate(history: &sim::History, noise: sim::Noise, seed: u64) -> sim::TrialResult {
    let mut oracle = sim::Oracle::new(history, noise, seed);
    sim::run_culprit(history, &mut oracle, &BisectConfig::default())
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
    type Case<'a> = (Vec<(usize, &'a [f64])>, usize, f64);
    let cases: Vec<Case> = vec![
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
    seed_values(
        &mut m,
        &[(0, &[0.0, 0.1, -0.1, 0.05]), (1, &[0.0, 0.1, -0.1]), (4, &[1.5, 1.4, 1.6]), (5, &[1.5, 1.4, 1.6])],
    );
    let posterior = m.posterior(0, 5, 0.0).expect("posterior");
    let (best, mass) = posterior.best_class().expect("best");
    assert_eq!(best, 4, "the class is represented by its testable commit");
    assert!(mass > 0.99);
    let classes: Vec<(usize, usize)> =
        posterior.hypotheses.iter().copied().zip(posterior.class.iter().copied()).collect();
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

/// A machine of ten commits whose whole range is reproduced, with the given good-to-bad change, and locating.
fn locating(total: (f64, f64)) -> (Bisect, Segment) {
    let mut m = machine(10);
    let segment = Segment { lo: 0, hi: 9, top: true };
    m.total = Some(total);
    m.reproduced = Some(true);
    m.phase = Phase::Locate { segment };
    (m, segment)
}

/// Values around `level` with a small, fixed spread (deterministic, so the test states exactly what it checks).
fn around(level: f64, n: usize) -> Vec<f64> {
    (0..n).map(|i| level + 0.1 * ((i % 5) as f64 - 2.0)).collect()
}

#[test]
fn a_share_far_above_the_whole_change_is_re_examined_then_inconclusive() {
    // Good at 0, bad at 1, but commit 5 measures 3 above its parent: 300% of the change, interval well above 150%.
    // This is the path where builds are not seen to differ, so the replication across builds is off here (the
    // next test takes the other path).
    let build = |pairs: usize| {
        let mut m = machine(10);
        m.config.replicate_below_p = 0.0;
        m.phase = Phase::Locate { segment: Segment { lo: 0, hi: 9, top: true } };
        let (good, bad, high) = (around(0.0, 20), around(1.0, 20), around(3.0, pairs));
        let parent = around(0.0, pairs);
        seed_values(&mut m, &[(0, &good), (9, &bad), (4, &parent), (5, &high)]);
        m
    };
    let segment = Segment { lo: 0, hi: 9, top: true };
    // Few fresh pairs: re-examine, with runs at the ends too.
    let mut m = build(4);
    assert!(m.verify(segment, 5, 4, 0, 0.0), "asks for runs");
    let batch: Vec<usize> = m.pending.iter().map(|&(c, _)| c).collect();
    assert!(batch.contains(&0) && batch.contains(&9) && batch.contains(&5) && batch.contains(&4), "{batch:?}");
    assert!(m.outcome.is_none());
    // Still implausible after many pairs: never blamed, the job ends inconclusive.
    let mut m = build(IMPLAUSIBLE_MAX_PAIRS + 2);
    m.verify(segment, 5, 4, 0, 0.0);
    let outcome = m.outcome.clone().expect("finished");
    assert_eq!(outcome.status, Status::Inconclusive, "{:?}", outcome.log);
    assert!(outcome.culprits.iter().all(|c| !c.located), "{:?}", outcome.culprits);
}

#[test]
fn a_share_far_above_the_whole_change_is_blamed_only_when_the_builds_beside_it_agree() {
    // As above (good 0, bad 1, commit 5 at 3 over its parent at 0), with the builds beside it measured: 6 and 7
    // sit at bad's level and 3 and 2 at good's, so a step lies among them, but commit 5 sits far above the builds
    // after it, which is no offset of one build among builds that differ: not blamed. With 6 and 7 at 3 and 3.6
    // and 3 and 2 at 0 and -0.6 instead, builds differ (good and bad sit off their sides), commit 5 and its parent
    // sit among theirs, and commit 5 is blamed for its 300%.
    let segment = Segment { lo: 0, hi: 9, top: true };
    let build = |high: f64, after: f64, before: f64| {
        let mut m = machine(10);
        m.phase = Phase::Locate { segment };
        let (good, bad) = (around(0.0, 20), around(1.0, 20));
        let (high, parent) = (around(high, 16), around(0.0, 16));
        let (after, before) =
            ([around(after, 8), around(after + 0.6, 8)], [around(before, 8), around(before - 0.6, 8)]);
        seed_values(&mut m, &[(0, &good), (9, &bad), (4, &parent), (5, &high)]);
        seed_values(&mut m, &[(6, &after[0]), (7, &after[1]), (3, &before[0]), (2, &before[1])]);
        // The trigger (tested commits that differ by more than their runs explain) is taken as given.
        m.replicating = Some(5);
        m
    };
    // Commit 5 (here at 3.3, 4.7 standard errors off at 3, where the bound is 4.6) sits off its side on runs taken
    // at other times than the neighbours', so the six builds are compared again in rounds of their own; their runs
    // read the same levels, and it still sits off.
    let mut m = build(3.3, 1.0, 0.0);
    let level = |c: usize| match c {
        5 => 3.3,
        6 => 1.0,
        7 => 1.6,
        2 => -0.6,
        _ => 0.0,
    };
    while m.outcome.is_none() && m.verify(segment, 5, 4, 0, 0.0) {
        for (c, n) in m.pending.clone() {
            seed_values(&mut m, &[(c, &around(level(c), n))]);
        }
    }
    let again = "again, with commit 5 and commit 4 in the rounds";
    assert!(m.log.iter().any(|e| e.decision.contains(again)), "{:?}", m.log);
    let outcome = m.outcome.clone().expect("finished");
    assert_eq!(outcome.status, Status::Inconclusive, "{:?}", outcome.log);
    assert!(outcome.reason.contains("standard errors from the builds on their sides"), "{}", outcome.reason);
    let mut m = build(3.0, 3.0, 0.0);
    while m.outcome.is_none() && m.verify(segment, 5, 4, 0, 0.0) {
        // The table of the two asks for runs now and then; record what it asks, at the levels seeded.
        for (c, n) in m.pending.clone() {
            let level = if c == 5 { 3.0 } else { 0.0 };
            seed_values(&mut m, &[(c, &around(level, n))]);
        }
    }
    assert!(m.log.iter().any(|e| e.decision.contains("the ends' builds explain its share")), "{:?}", m.log);
    assert_eq!(m.culprits.iter().map(|c| c.commit).collect::<Vec<_>>(), vec![5], "{:?}", m.log.last());
}

#[test]
fn a_small_step_just_before_a_large_one_leaves_the_large_one_blamed() {
    // Seed 003's shape, as QA pass 8 bisected it for real: a preparatory commit that adds a small step of its own
    // (3% on a quiet machine) just before the commit that adds the large one (33%). The parent of the large step then
    // sits between the levels, far off the builds before it by the measure of their runs, and the replication across
    // builds refused the candidate: 106 of 200 simulated jobs of a 3 sigma step before a 30 sigma one ended
    // inconclusive, 33 of 200 with 2 before 15. A parent nearer its own side than the other is a level between them
    // (`BuildComparison::between_the_sides`): every job names the large step, alone or with the small one.
    for (small, large) in [(3.0, 30.0), (2.0, 15.0)] {
        let steps = vec![(9, small), (10, large)];
        let history = sim::History { commits: 15, steps, untestable: vec![false; 16], dag: None };
        let mut named_large = 0;
        for seed in 0..60 {
            let result = simulate(&history, sim::Noise::Gaussian, 5000 + seed);
            assert!(result.status != Status::Inconclusive, "{small}+{large}, seed {seed}: {:?}", result.log.last());
            let named = &result.named;
            assert!(named.iter().all(|c| [9, 10].contains(c)), "{small}+{large}, seed {seed}: {named:?}");
            named_large += usize::from(result.named.contains(&10));
        }
        assert_eq!(named_large, 60, "{small}+{large}");
    }
}

#[test]
fn a_candidate_measured_before_the_machines_level_moved_still_sits_among_the_builds_beside_it() {
    // Good at 0, bad at 1, the step at commit 5 (parent 4), and builds that differ: commits 6 and 7 sit at 1.0 and
    // 1.15, commits 3 and 2 at 0.0 and -0.15. Commits 4 and 5 were paired first; then the machine's level rose by 0.8
    // (`moved`), as good and bad show in their second visit, before the replication measured the builds beside
    // them. Read as if the machine held its level, commit 5 sits far below the builds after it, measured high (6.0
    // standard errors), and a real bisect ended inconclusive that way; with the variance the machine's visits add,
    // it sits among them and is blamed.
    let segment = Segment { lo: 0, hi: 9, top: true };
    let level = |c: usize| match c {
        2 => -0.15,
        5 | 6 | 9 => 1.0,
        7 => 1.15,
        _ => 0.0,
    };
    for moved in [0.0, 0.8] {
        let mut m = machine(10);
        m.phase = Phase::Locate { segment };
        seed_values(&mut m, &[(0, &around(0.0, 20)), (9, &around(1.0, 20))]);
        seed_values(&mut m, &[(4, &around(0.0, 16)), (5, &around(1.0, 16))]);
        // Good and bad, visited again, show how far the machine's level moved.
        seed_values(&mut m, &[(0, &around(moved, 6)), (9, &around(1.0 + moved, 6))]);
        // The trigger (tested commits that differ by more than their runs explain) is taken as given.
        m.replicating = Some(5);
        while m.outcome.is_none() && m.verify(segment, 5, 4, 0, 0.0) {
            for (c, n) in m.pending.clone() {
                seed_values(&mut m, &[(c, &around(level(c) + moved, n))]);
            }
        }
        let named: Vec<usize> = m.culprits.iter().map(|c| c.commit).collect();
        assert_eq!(named, vec![5], "moved {moved}: {:?}", m.log);
        assert!(m.log.iter().any(|e| e.decision.contains("holds across builds")), "{:?}", m.log);
    }
}

#[test]
fn a_parent_beyond_the_builds_before_it_by_less_than_the_step_is_its_own_offset() {
    // The real bisect of session 30 (user time of a test program whose commits build the same binary): the builds
    // before the parent read 0.0534 and 0.0544 s, the candidate and the builds after it about 0.068, and the parent
    // 0.0503, 4.8 standard errors below its side, so the two-sided check ended the bisect inconclusive. Here in
    // units of that step: builds 3 and 2 at 0 and -0.07, the parent at -0.26, the candidate and builds 6 and 7 at
    // 1, 0.95 and 1. The parent sits away from the builds after the step, by less than the step: its build's own
    // offset, and commit 5 is blamed. A parent 1.3 below its side is further from it than the step, and its side
    // is then not known: the bisect still ends inconclusive.
    let segment = Segment { lo: 0, hi: 9, top: true };
    let tight = |level: f64, n: usize| -> Vec<f64> { (0..n).map(|i| level + 0.03 * ((i % 5) as f64 - 2.0)).collect() };
    for (parent_level, blamed) in [(-0.26, true), (-1.3, false)] {
        let level = |c: usize| match c {
            2 => -0.07,
            4 => parent_level,
            6 => 0.95,
            5 | 7 | 9 => 1.0,
            _ => 0.0,
        };
        let mut m = machine(10);
        m.phase = Phase::Locate { segment };
        for c in [0, 9, 4, 5, 6, 3, 7, 2] {
            seed_values(&mut m, &[(c, &tight(level(c), if c == 0 || c == 9 { 20 } else { 8 }))]);
        }
        // The trigger (tested commits that differ by more than their runs explain) is taken as given.
        m.replicating = Some(5);
        while m.outcome.is_none() && m.verify(segment, 5, 4, 0, 0.0) {
            for (c, n) in m.pending.clone() {
                seed_values(&mut m, &[(c, &tight(level(c), n))]);
            }
        }
        let named: Vec<usize> = m.culprits.iter().filter(|c| c.located).map(|c| c.commit).collect();
        if blamed {
            assert_eq!(named, vec![5], "{:?}", m.log);
            let held = m.log.iter().find(|e| e.decision.contains("holds across builds")).expect("replicated");
            assert!(held.reason.contains("its build's own offset"), "{}", held.reason);
        } else {
            let outcome = m.outcome.clone().expect("finished");
            assert_eq!(outcome.status, Status::Inconclusive, "{:?}", outcome.log);
            assert!(named.is_empty(), "{named:?}");
            assert!(outcome.reason.contains("standard errors from the builds on their sides"), "{}", outcome.reason);
        }
    }
}

#[test]
fn a_staircase_whose_narrowed_range_holds_no_step_searches_its_other_range_for_the_whole_change() {
    // A staircase settled on commit 5 reading between good (0) and bad (1), at 0.9: the range (0, 5] has the large
    // step and is narrowed, the range (5, 9] the small one and is reported unlocated. If commit 5 then reads at
    // good's level, the narrowed range holds no step, so the change is not shared: (5, 9] is taken back and
    // searched for all of it. If commit 5 reads at 0.9, the narrowed range holds its step and both stay.
    let spread = |level: f64, n: usize| -> Vec<f64> { (0..n).map(|i| level + 0.25 * ((i % 5) as f64 - 2.0)).collect() };
    let segment = Segment { lo: 0, hi: 9, top: true };
    let stair = Staircase {
        middle_commits: vec![5],
        ranges: [(3, 5), (5, 9)],
        range_mass: [0.0; 2],
        low: (0.0, 0.05),
        middle: (0.9, 0.1),
        high: (1.0, 0.05),
    };
    for (commit_5, shared) in [(0.0, false), (0.9, true)] {
        let (mut m, _) = locating((1.0, 0.1));
        seed_values(
            &mut m,
            &[(0, &spread(0.0, 20)), (9, &spread(1.0, 20)), (3, &spread(0.0, 10)), (5, &spread(commit_5, 20))],
        );
        m.record_staircase(segment, &stair, 0.0, "locate");
        assert_eq!(m.queue, vec![Segment { lo: 0, hi: 5, top: false }], "{:?}", m.log);
        assert_eq!(m.culprits.iter().map(|c| (c.after, c.commit)).collect::<Vec<_>>(), vec![(5, 9)]);
        let narrowed = m.queue.remove(0);
        m.narrowing_ended(narrowed, false);
        let searched = m.log.iter().any(|e| e.decision.contains("for the whole change"));
        let reported: Vec<(usize, usize)> = m.culprits.iter().map(|c| (c.after, c.commit)).collect();
        if shared {
            assert!(!searched && m.queue.is_empty(), "{:?}", m.log);
            assert_eq!(reported, vec![(5, 9), (0, 5)], "both ranges stay contributors");
        } else {
            assert!(searched, "{:?}", m.log);
            assert!(reported.is_empty(), "{reported:?}");
            assert_eq!(m.queue, vec![Segment { lo: 5, hi: 9, top: false }]);
            assert!(m.narrowing.contains(&(5, 9)), "searched on fresh runs, as a narrowed range is");
        }
    }
}

#[test]
fn a_commit_between_the_levels_is_reported_as_several_contributors() {
    // Commit 5 sits half-way between good and bad, with enough runs everywhere: two ranges, status multiple. Its
    // runs were taken in one block, so the machine first asks for runs of it next to runs of the nearer end (a
    // burst over that block would look the same); those show the middle level too.
    let (mut m, segment) = locating((2.0, 0.1));
    let (good, middle, bad) = (around(0.0, 20), around(1.0, 12), around(2.0, 20));
    seed_values(&mut m, &[(0, &good), (5, &middle), (9, &bad)]);
    let (c, score) = m.between_commit(segment, 0.0, m.within_noise(segment, 0.0)).expect("a candidate");
    assert_eq!(c, 5);
    assert!(score >= BETWEEN_Z, "score {score}");
    assert!(m.locate(segment, 0.0), "asks for interleaved pairs first");
    assert!(m.pending.contains(&(0, 2)) && m.pending.contains(&(5, 2)), "{:?}", m.pending);
    let level = |c: usize| match c {
        0..=4 => 0.0,
        5 => 1.0,
        _ => 2.0,
    };
    let mut k = 0usize;
    while m.outcome.is_none() && k < 400 {
        let Action::RunBatch(batch) = m.next_action() else { break };
        // As the drivers run a batch: the entry with the most runs left goes next, so pairs are adjacent in time.
        let mut left = batch;
        while let Some(i) = (0..left.len()).filter(|&i| left[i].1 > 0).min_by_key(|&i| (usize::MAX - left[i].1, i)) {
            left[i].1 -= 1;
            let value = level(left[i].0) + 0.1 * ((k % 5) as f64 - 2.0);
            m.record(left[i].0, Sample::Value(value)).expect("a commit of the range");
            k += 1;
        }
    }
    let outcome = m.outcome.clone().expect("finished");
    assert_eq!(outcome.status, Status::Multiple, "{:?}", outcome.log);
    assert_eq!(outcome.culprits.len(), 2);
    // Each step is 10 noise sigmas: the two sides of commit 5 are narrowed to their commits, 5 and 6, each with
    // half of the change (they were reported as the ranges (0, 5] and (5, 9] before narrowing).
    let narrowed: Vec<&str> =
        outcome.log.iter().map(|e| e.decision.as_str()).filter(|d| d.starts_with("narrow")).collect();
    assert_eq!(narrowed, ["narrow the range (0, 5]", "narrow the range (5, 9]"], "{:?}", outcome.log);
    for (culprit, (after, commit)) in outcome.culprits.iter().zip([(4, 5), (5, 6)]) {
        assert_eq!((culprit.after, culprit.commit, culprit.located), (after, commit, true), "{culprit:?}");
        assert!(culprit.share_low < 0.5 && 0.5 < culprit.share_high, "{culprit:?}");
    }
}

#[test]
fn a_commit_between_the_levels_is_settled_only_when_it_shows_next_to_both_ends() {
    // Commit 5 reads 1.0 over 12 runs, 10 noise sigmas from good (0) and bad (2): far past BETWEEN_Z on the levels.
    // Each of its runs is followed by a run of an end (first the good end, then the bad end). When those runs of the
    // ends read 0 and 2, the commit is between: two ranges. When the bad end's read 1.0 too, the commit sits at the
    // bad level and the machine's level moved while it was measured (wall time wandering on a shared host): no
    // ranges, but interleaved pairs of it and the bad end; after PAIRED_MIDDLE_MAX_PAIRS of them that still show
    // nothing, no ranges and no empty request for runs (the commit is then judged as one that only leans).
    for (bad_end_pairs, bad_end_next_to_it, settles) in [(6, 2.0, true), (6, 1.0, false), (40, 1.0, false)] {
        let (mut m, segment) = locating((2.0, 0.1));
        // The bad end's own level stays at 2 whatever its runs next to commit 5 read.
        seed_values(&mut m, &[(0, &around(0.0, 20)), (9, &around(2.0, 20 + 3 * bad_end_pairs))]);
        let middle = around(1.0, 6 + bad_end_pairs);
        for (k, value) in middle.iter().enumerate() {
            let (end, end_value) = if k < 6 { (0, 0.0) } else { (9, bad_end_next_to_it) };
            seed_values(&mut m, &[(5, &[*value]), (end, &[end_value + 0.1 * ((k % 3) as f64 - 1.0)])]);
        }
        let (c, score) = m.between_commit(segment, 0.0, m.within_noise(segment, 0.0)).expect("a candidate");
        assert!(c == 5 && score >= BETWEEN_Z, "commit {c}, score {score}");
        let acted = m.probe_between(segment, 0.0);
        let settled = m.log.iter().any(|e| e.decision.starts_with("several contributors"));
        assert_eq!(settled, settles, "{:?}", m.log);
        if bad_end_pairs < PAIRED_MIDDLE_MAX_PAIRS && !settles {
            assert!(acted && m.pending.contains(&(9, 2)) && m.pending.contains(&(5, 2)), "{:?}", m.pending);
        }
        assert!(!acted || settled || !m.pending.is_empty(), "acted without asking for runs: {:?}", m.log);
    }
}

#[test]
fn a_commit_at_either_level_is_not_between() {
    let mut m = machine(10);
    let segment = Segment { lo: 0, hi: 9, top: true };
    let (good, bad) = (around(0.0, 20), around(2.0, 20));
    seed_values(&mut m, &[(0, &good), (3, &around(0.0, 12)), (6, &around(2.0, 12)), (9, &bad)]);
    let (_, score) = m.between_commit(segment, 0.0, m.within_noise(segment, 0.0)).expect("a candidate");
    assert!(score < BETWEEN_LEANING_Z, "score {score}");
}

#[test]
fn probing_goes_to_the_nearer_end() {
    // (level of commit 5 between good at 0 and bad at 1.5, the end it is compared with)
    for (level, nearer) in [(0.4, 0), (0.6, 0), (0.9, 9), (1.2, 9)] {
        let mut m = machine(10);
        let segment = Segment { lo: 0, hi: 9, top: true };
        seed_values(&mut m, &[(0, &around(0.0, 12)), (5, &around(level, 8)), (9, &around(1.5, 12))]);
        assert_eq!(m.nearer_end(segment, 5, 0.0), nearer, "commit 5 at {level}");
    }
}

#[test]
fn the_ends_keep_a_share_of_the_runs() {
    // Commits 1-3 measured good and 7-8 bad, 16 runs each; the ends have 4 runs each. The change is somewhere in
    // 4..=7, so no commit is ready to verify; the ends hold far fewer than an eighth of the interior's 80 runs,
    // so the next runs are an interleaved pair at the ends.
    let (mut m, segment) = locating((1.5, 0.3));
    let (good, bad) = (around(0.0, 16), around(1.5, 16));
    seed_values(&mut m, &[(0, &around(0.0, 4)), (9, &around(1.5, 4))]);
    seed_values(&mut m, &[(1, &good), (2, &good), (3, &good), (7, &bad), (8, &bad)]);
    assert!(m.locate(segment, 0.0), "{:?}", m.log);
    assert_eq!(m.pending, vec![(0, 1), (9, 1)], "{:?}", m.log.last());
}

#[test]
fn sessions_stored_without_later_fields_read_their_defaults() {
    // alpha_fresh came in session 9, min_effect_relative (--min-change) in session 17, replicate_below_p in
    // session 18; an older session continues without the replication it did not start with.
    let without = BisectConfig { replicate_below_p: 0.0, ..BisectConfig::default() };
    for field in ["alpha_fresh", "min_effect_relative", "replicate_below_p"] {
        let mut stored = serde_json::to_value(&without).expect("serialises");
        let removed = stored.as_object_mut().and_then(|object| object.remove(field));
        assert!(removed.is_some(), "{field} is a field of the stored config");
        let config: BisectConfig = serde_json::from_value(stored).expect("an older config still reads");
        assert_eq!(config, without, "{field}");
    }
}

#[test]
fn a_burst_during_locating_does_not_get_a_commit_blamed() {
    // The change is at 5. Commit 7 was measured during a burst of load (+3) while locating, so its old runs sit far
    // above its parent 6; the fresh interleaved pairs, analysed as pairs, show no step, and 7 is not blamed.
    let (mut m, segment) = locating((1.5, 0.1));
    let (good, bad, burst) = (around(0.0, 20), around(1.5, 20), around(4.5, 5));
    seed_values(
        &mut m,
        &[(0, &good), (9, &bad), (4, &around(0.0, 5)), (5, &around(1.5, 5)), (6, &around(1.5, 3)), (7, &burst)],
    );
    let start = m.records;
    // Fresh pairs in time order: parent, commit, parent, commit, ... at the same level (some in a burst too).
    for i in 0..8 {
        let load = if (2..5).contains(&i) { 3.0 } else { 0.0 };
        let wiggle = 0.1 * ((i % 3) as f64 - 1.0);
        seed_values(&mut m, &[(6, &[1.5 + load + wiggle]), (7, &[1.5 + load - wiggle])]);
    }
    m.phase = Phase::Verify { segment, commit: 7, parent: 6, start_records: start };
    m.verify(segment, 7, 6, start, 0.0);
    assert!(m.culprits.iter().all(|c| c.commit != 7), "{:?}", m.log);
    assert!(m.outcome.as_ref().is_none_or(|o| o.status != Status::Found), "{:?}", m.log);
}

/// Seeds `runs` runs at each (commit, level), spread by a fixed pattern of up to 0.6 either side.
fn seed_levels(m: &mut Bisect, levels: &[(usize, f64)], runs: usize) {
    for &(commit, level) in levels {
        let values: Vec<f64> =
            (0..runs).map(|k| level + 0.3 * ((k % 5) as f64 - 2.0) * if k % 2 == 0 { 1.0 } else { -1.0 }).collect();
        seed_values(m, &[(commit, &values)]);
    }
}

#[test]
fn staircase_model_comparison_table() {
    // (levels of the tested commits 0, 2, 4, 6, 8, 10 of a 11-commit range, runs each, two changes expected)
    let cases: Vec<([f64; 6], usize, bool)> = vec![
        // A middle level between the ends, seen at two commits: two changes.
        ([0.0, 0.0, 0.75, 0.75, 1.5, 1.5], 16, true),
        // One step: the interior commits sit at either level.
        ([0.0, 0.0, 0.0, 1.5, 1.5, 1.5], 16, false),
        // The same middle level with too few runs to tell: not decided yet.
        ([0.0, 0.0, 0.75, 0.75, 1.5, 1.5], 2, false),
    ];
    for (levels, runs, two) in cases {
        let mut m = machine(11);
        let segment = Segment { lo: 0, hi: 10, top: true };
        let tested: Vec<(usize, f64)> = levels.iter().enumerate().map(|(i, &level)| (2 * i, level)).collect();
        seed_levels(&mut m, &tested, runs);
        let (bayes, stair) = m.staircase(segment, 0.0, 0.0).expect("a staircase fit");
        assert_eq!(bayes >= STAIRCASE_LOG_BAYES, two, "levels {levels:?} runs {runs}: log Bayes factor {bayes}");
        if two {
            assert_eq!((stair.ranges, stair.middle_commits), ([(2, 4), (6, 8)], vec![4, 6]));
        }
    }
}

#[test]
fn a_large_step_is_blamed_with_runs_enough_for_the_table() {
    // The README's demo: a 30% step over noise of half a percent (60 sigma) is confirmed after three runs a side.
    // The culprit and its parent still get five runs each, so that the robot's table of the two (read from the
    // stored runs) shows the change the bisect blamed instead of "no metric changed".
    use super::sim::{History, Noise};
    let history = History { commits: 23, steps: vec![(15, 60.0)], untestable: vec![false; 24], dag: None };
    let result = simulate(&history, Noise::Gaussian, 7);
    assert_eq!((result.status, result.named.clone()), (Status::Found, vec![15]), "{:?}", result.log);
    // Five a side: the table's rank test can reach p = 0.008 (at three, 0.1 at best).
    for commit in [14, 15] {
        let runs = result.evidence.iter().find(|e| e.commit == commit).map_or(0, |e| e.runs);
        assert!(runs >= 5, "commit {commit}: {runs} runs; {:?}", result.log);
    }
}

#[test]
fn a_lone_culprits_share_is_measured_on_every_run() {
    // A single step explains all of the change. Its reported share used to be the fresh pairs' step over the change
    // between the two ends, from the few runs at each: on a real 30% slowdown it scattered from 0.8 to 1.37 and
    // made the end-to-end test flaky. Measured on every run at the culprit and its parent, against the two levels
    // of every run before and after the step, it must sit near one with a narrow interval that covers one.
    use super::sim::{History, Noise};
    let mut shares = Vec::new();
    for seed in 0..40 {
        let history = History { commits: 100, steps: vec![(37, 3.0)], untestable: vec![false; 101], dag: None };
        let result = simulate(&history, Noise::Gaussian, 1000 + seed);
        if result.named == [37] {
            let culprit = &result.culprits[0];
            shares.push(culprit.share);
            if seed == 11 {
                for e in &result.log {
                    eprintln!("[{}] {} -- {}", e.runs, e.decision, e.reason);
                }
            }
            assert!(culprit.share_low < 1.0 && 1.0 < culprit.share_high, "seed {seed}: {culprit:?}");
        }
    }
    assert!(shares.len() >= 38, "{} of 40 found", shares.len());
    // On these trials the share of the fresh pairs over the ends averaged 1.087 with a spread of 0.324 (now 1.038
    // and 0.225).
    let mean = shares.iter().sum::<f64>() / shares.len() as f64;
    let spread = (shares.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / shares.len() as f64).sqrt();
    assert!((mean - 1.0).abs() < 0.06 && spread < 0.27, "mean {mean:.3}, spread {spread:.3}");
}

/// Commits 0, 3 and 9 measured round-robin (levels 0, 0 and 1.5, small wiggles), then a burst of load (+3) over
/// three rounds in which commit 5 (level 1.5) replaces commit 3, then six more rounds without load. Every value
/// goes through `metric` (the identity for a time, a reflection for a throughput that load lowers). Returns the
/// burst's records.
fn seed_burst(m: &mut Bisect, metric: impl Fn(f64) -> f64) -> std::ops::Range<usize> {
    let wiggle = |i: usize| 0.1 * ((i % 5) as f64 - 2.0);
    let round = |m: &mut Bisect, values: [(usize, f64); 3]| {
        for (commit, value) in values {
            seed_values(m, &[(commit, &[metric(value)])]);
        }
    };
    for i in 0..6 {
        round(m, [(0, wiggle(i)), (3, wiggle(i + 1)), (9, 1.5 + wiggle(i + 2))]);
    }
    let burst_start = m.records;
    for i in 0..3 {
        round(m, [(0, 3.0 + wiggle(i)), (5, 1.5 + 3.0 + wiggle(i + 3)), (9, 4.5 + wiggle(i + 1))]);
    }
    let burst_end = m.records;
    for i in 0..6 {
        round(m, [(0, wiggle(i + 4)), (3, wiggle(i)), (9, 1.5 + wiggle(i + 3))]);
    }
    burst_start..burst_end
}

#[test]
fn a_burst_of_load_is_read_from_the_runs_of_other_commits_around_it() {
    // Commits 0, 3 and 9 have runs enough for their own levels; commit 5 is visited once, three runs, in the middle
    // of a burst (+3) that also covers runs of 0, 3 and 9 measured next to it. The burst's records get an offset of
    // about 3 from the other commits' runs, so commit 5 reads at its true level; runs away from it are untouched.
    let mut m = machine(10);
    let std::ops::Range { start: burst_start, end: burst_end } = seed_burst(&mut m, |v| v);
    let offsets = m.time_offsets(0.0);
    for (t, offset) in offsets.iter().enumerate() {
        if (burst_start + 2..burst_end - 2).contains(&t) {
            assert!((offset - 3.0).abs() < 0.3, "record {t}: {offsets:?}");
        } else if t + 5 < burst_start || t > burst_end + 5 {
            assert_eq!(*offset, 0.0, "record {t}: {offsets:?}");
        }
    }
    m.offsets = offsets;
    let level = |m: &Bisect, c: usize| crate::stats::median(&m.adjusted(c, 0.0)).unwrap_or(f64::NAN);
    assert!((level(&m, 5) - 1.5).abs() < 0.4, "commit 5 reads {}: {:?}", level(&m, 5), m.offsets);
    assert!(level(&m, 3).abs() < 0.2);
}

#[test]
fn noise_alone_moves_no_run() {
    // Gaussian noise without bursts: the time offsets stay zero (they are a correction, not a smoother).
    let mut m = machine(10);
    let mut rng = crate::rng::Rng::new(11);
    for _ in 0..30 {
        let (a, b, c) = (rng.normal(), rng.normal(), 1.5 + rng.normal());
        seed_values(&mut m, &[(0, &[a]), (4, &[b]), (9, &[c])]);
    }
    let moved = m.time_offsets(0.0).iter().filter(|o| **o != 0.0).count();
    assert!(moved <= 2, "{moved} of 90 records moved");
}

#[test]
fn a_residual_from_load_that_has_since_changed_is_not_searched() {
    // Commit 5 was confirmed; the end 9 was measured long ago, while a job loaded the machine (+0.5), so the residual
    // (5, 9] stood out in the runs already taken. Measured afresh, interleaved, 5 and 9 agree: no contributor.
    // Read with the old runs, the same segment would be searched (the e2e slowdown under stress-ng that stopped
    // mid-bisect searched such a residual for 500 runs).
    for fresh_only in [true, false] {
        let (mut m, _) = locating((1.5, 0.1));
        seed_values(&mut m, &[(9, &around(2.0, 10)), (5, &around(1.5, 10))]);
        let start = m.records;
        for i in 0..8 {
            let wiggle = 0.05 * ((i % 3) as f64 - 1.0);
            seed_values(&mut m, &[(5, &[1.5 + wiggle]), (9, &[1.5 - wiggle])]);
        }
        let segment = Segment { lo: 5, hi: 9, top: false };
        if fresh_only {
            m.fresh_only.push((5, 9));
        }
        m.phase = Phase::Reproduce { segment, start_records: start };
        m.reproduce(segment, start, 0.0);
        let searched = matches!(m.phase, Phase::Locate { .. });
        let closed = m.log.iter().any(|e| e.decision.starts_with("no further contributor"));
        assert_eq!((searched, closed), (!fresh_only, fresh_only), "fresh only {fresh_only}: {:?}", m.log);
    }
}

#[test]
fn a_residual_that_differs_by_far_less_than_a_contributor_is_not_searched() {
    // Commit 5 was confirmed for a change of 1.5; its residual (5, 9] is measured afresh, interleaved, on runs that
    // vary by a thousandth. A difference of 0.03 (2% of the change, a build's own offset where timing is precise)
    // is significant many times over but surely below a contributor's floor: closed. One of 0.5, a third of the
    // change, is searched.
    for (step, searched) in [(0.03, false), (0.5, true)] {
        let (mut m, _) = locating((1.5, 0.1));
        let start = m.records;
        for i in 0..8 {
            let wiggle = 0.001 * ((i % 3) as f64 - 1.0);
            seed_values(&mut m, &[(5, &[1.5 + wiggle]), (9, &[1.5 + step - wiggle])]);
        }
        let segment = Segment { lo: 5, hi: 9, top: false };
        m.fresh_only.push((5, 9));
        m.phase = Phase::Reproduce { segment, start_records: start };
        m.reproduce(segment, start, 0.0);
        assert_eq!(matches!(m.phase, Phase::Locate { .. }), searched, "step {step}: {:?}", m.log);
        let closed = m.log.iter().any(|e| e.decision.starts_with("no further contributor"));
        assert_eq!(closed, !searched, "step {step}: {:?}", m.log);
    }
}

#[test]
fn the_log_says_which_runs_were_corrected_for_load() {
    use super::sim::{History, Noise};
    let history = History { commits: 200, steps: vec![(77, 1.5)], untestable: vec![false; 201], dag: None };
    let result = simulate(&history, Noise::Bursts, 3);
    let load: Vec<&LogEntry> = result.log.iter().filter(|e| e.phase == "load").collect();
    assert!(!load.is_empty(), "{:?}", result.log);
    // Each note reports more corrected runs than the one before it, and names them.
    for pair in load.windows(2) {
        let count = |e: &LogEntry| e.decision.split_whitespace().next().and_then(|w| w.parse::<usize>().ok());
        assert!(count(pair[0]) < count(pair[1]), "{pair:?}");
    }
    assert!(load.iter().all(|e| e.reason.starts_with("runs ")), "{load:?}");
}

#[test]
fn the_run_corrections_recompute_every_level_the_machine_read() {
    // `bisect log --json` exports each run's drift and load corrections so that a reader outside can recompute the
    // levels the machine decided on: raw value less both, oriented, must be what the machine itself reads. A
    // throughput under bursts of load (lower is worse, so the orientation is -1) makes both corrections matter.
    use super::sim::{History, Noise, Oracle};
    let history = History { commits: 200, steps: vec![(77, 1.5)], untestable: vec![false; 201], dag: None };
    let mut oracle = Oracle::new(&history, Noise::Bursts, 3);
    let config = BisectConfig { direction: Direction::LowerIsWorse, ..BisectConfig::default() };
    let Ok(mut m) = Bisect::new(config, &history.nodes()) else { panic!("setup") };
    let mut raw: Vec<(usize, f64)> = Vec::new();
    while let Action::RunBatch(batch) = m.next_action() {
        let commit = next_in_batch(&batch).expect("a batch while not done");
        let value = 100.0 - oracle.run(commit).expect("every commit builds");
        raw.push((commit, value));
        m.record(commit, Sample::Value(value)).expect("a commit of the range");
    }
    let corrections = m.run_corrections();
    assert_eq!(corrections.len(), raw.len(), "the last decision read every run of a finished bisect");
    assert!(corrections.iter().any(|c| c.load != 0.0), "bursts stand out as load in this job");
    let (slope, _) = m.decided_drift;
    for commit in 0..m.values.len() {
        let read = m.adjusted(commit, slope);
        let recomputed: Vec<f64> = raw
            .iter()
            .zip(&corrections)
            .filter(|((c, _), _)| *c == commit)
            .map(|((_, value), c)| m.orientation * (value - c.drift - c.load))
            .collect();
        assert_eq!(read, recomputed, "commit {commit}");
    }
}

#[test]
fn a_lone_culprits_share_is_not_thrown_to_the_ends_by_one_odd_run_of_four() {
    // Runs shaped like those of a real end-to-end bisect that CI reported at a share of 1.34 [1.07, 1.60] (the
    // commits' run counts and means in seconds as in its evidence; good 0, parent 13, culprit 14, bad 23). One of
    // the bad end's 4 runs is low, which puts the ends' change about 2.2 of its standard errors from the pooled
    // levels: read as a z, the share was taken over the ends (1.17 [1.04, 1.29] here). With 4 runs a side that
    // standard error is itself a guess, and Student's t keeps the share on the pooled levels, near one. The builds
    // differ too (the bad end sits 4% below the culprit's build, commit 18 3% above it): read with the covariance
    // of the step and the levels alone, the interval was 1.01 to 1.05, excluding the share of a culprit that made
    // the whole change; the builds' own variance widens it to hold one.
    let mut m = machine(24);
    let runs: [(usize, &[f64]); 7] = [
        (0, &[0.0447, 0.0471, 0.0451, 0.0454]),
        (12, &[0.045761]),
        (13, &[0.0461, 0.0450, 0.0458, 0.0454, 0.0451]),
        (14, &[0.0592, 0.0583, 0.0588, 0.0581, 0.0590]),
        (15, &[0.059029]),
        (18, &[0.060648]),
        (23, &[0.0572, 0.0570, 0.0568, 0.0555]),
    ];
    seed_values(&mut m, &runs);
    let (total, total_se) = m.top_change(0.0).expect("ends");
    let delta = m.posterior(0, 23, 0.0).expect("posterior").delta;
    let z = (total - delta).abs() / total_se;
    assert!(z > 2.0 && z < 2.45, "the case must sit between the old and the new bound: z {z:.2}");
    let culprit = Culprit { confidence: 1.0, step: 0.013, ..Culprit::unmeasured(14, 13) };
    let ((share, low, high), _) = m.lone_culprit_share(&culprit).expect("a share");
    assert!(low < 1.0 && 1.0 < high && (share - 1.0).abs() < 0.15, "share {share:.3} [{low:.3}, {high:.3}]");
}

#[test]
fn qa49_4_a_step_that_a_later_commit_partly_takes_back_reads_beyond_the_noise() {
    // QA 49's rOu1 (user time): +40% at rev 10, back to +20% at rev 15; the runs as stored (good 0, parent 8, culprit
    // 9, bad 19). The culprit's and parent's runs are tight, and the step is 2.1 times good to bad. Reading the drop
    // from the culprit's level to bad's as builds that differ gave each mean a variance of its own, and the share
    // 208% an interval of -16%..431%, "within the noise". The ends disagree with the single step's levels, so the
    // after side is read around its best split, and the interval is the runs' own.
    let mut m = machine(20);
    let runs: [(usize, &[f64]); 9] = [
        (0, &[0.022913, 0.023470, 0.022865, 0.023492, 0.023842, 0.023948]),
        (4, &[0.023752]),
        (6, &[0.024244, 0.023792, 0.022968, 0.022908]),
        (7, &[0.023780, 0.023746, 0.023674, 0.020399]),
        (8, &[0.023675, 0.023812, 0.019799, 0.023764, 0.023729]),
        (9, &[0.032311, 0.032401, 0.032500, 0.034484, 0.032447]),
        (10, &[0.032920, 0.031570, 0.033301, 0.034064]),
        (11, &[0.032590, 0.033006, 0.029048, 0.029305]),
        (19, &[0.028313, 0.027072, 0.028000, 0.027985]),
    ];
    seed_values(&mut m, &runs);
    let culprit = Culprit { confidence: 1.0, step: 0.009, ..Culprit::unmeasured(9, 8) };
    let ((share, low, high), _) = m.lone_culprit_share(&culprit).expect("a share");
    assert!(share > 1.5 && low > 1.0, "share {share:.3} [{low:.3}, {high:.3}]");
    assert!(high - low < 1.5, "the runs allow a narrower interval: {share:.3} [{low:.3}, {high:.3}]");
    // Without the split, the same runs read as builds that differ: the interval that QA 49 saw.
    let slope = m.drift();
    let levels = m.lone_step_levels(&culprit, slope, false).expect("levels");
    let (change, var_change, covariance) = levels.ends;
    let z = m.share_z(8, 9);
    let (size, size_se) = (levels.size, levels.var_size.sqrt());
    let wide = model::ratio_interval_correlated(size, size_se, change, var_change.sqrt(), covariance, z);
    assert!(wide.1 < 1.0, "the case must be the one QA 49 saw: {wide:?}");
}

#[test]
fn bursts_of_load_leave_the_culprit_blamed_and_no_other_commit() {
    // Issue 4 on a busy machine: a 1.5 sigma step in 1,000 commits while bursts of load (+3 sigma, about a fifth of
    // the runs, 5 to 20 runs long) come and go. On these 80 jobs the median-of-neighbours load offsets found the
    // culprit in 63 (a burst over most of the first runs set the levels of both ends), the hidden Markov model of
    // load in 71, and with staircases settled only when their middle level shows in runs adjacent in time to the
    // nearer end's, 75. Any job may end as ranges or inconclusive; none may blame a commit that is not the step.
    use super::sim::{Noise, SimConfig};
    let (mut right, mut wrong_blame) = (0, Vec::new());
    for seed in [1, 2] {
        let (r, wrong) = named_right(&SimConfig { noise: Noise::Bursts, trials: 40, seed, ..SimConfig::default() });
        right += r;
        wrong_blame.extend(wrong.into_iter().map(|(t, named)| (seed, t, named)));
    }
    assert!(wrong_blame.is_empty(), "blamed a commit that is not the step: {wrong_blame:?}");
    assert!(right >= 72, "{right} of 80 right");
}

#[test]
fn load_that_lowers_a_metric_of_unknown_direction_is_read_too() {
    // The burst of the test above, on a metric whose worse direction is not known (a throughput, say, that load
    // lowers): both directions are fitted and the one that finds load is kept, so the burst's records get an
    // offset of about -3 and commit 5, visited only inside the burst, reads at its true level.
    let config = BisectConfig { direction: Direction::Any, ..BisectConfig::default() };
    let mut m = Bisect::new(config, &CommitNode::linear(10)).expect("setup");
    let std::ops::Range { start: burst_start, end: burst_end } = seed_burst(&mut m, |v| 10.0 - v);
    let offsets = m.time_offsets(0.0);
    for t in burst_start..burst_end {
        assert!((offsets[t] + 3.0).abs() < 0.3, "record {t}: {offsets:?}");
    }
    assert!(offsets[..burst_start].iter().chain(&offsets[burst_end..]).all(|&o| o == 0.0), "{offsets:?}");
    m.offsets = offsets;
    let level = crate::stats::median(&m.adjusted(5, 0.0)).unwrap_or(f64::NAN);
    assert!((level - 8.5).abs() < 0.4, "commit 5 reads {level}: {:?}", m.offsets);
}

#[test]
fn a_staircase_settles_only_when_its_middle_level_shows_next_to_both_ends() {
    // Commits 4 and 6 read 0.6, between the ends' 0 and 1.5 and nearer the good end; runs of them are followed at
    // once by a run of the good end, and a few by a run of the bad end. When those runs of the ends read 0 and 1.5
    // the middle level is real: settled as several contributors. When the good end's read 0.6 too (a burst the
    // load model did not catch, over both), or the bad end's (the middle commits sit at the bad level and the
    // machine's level moved for their visits, as wall time wanders on a shared host), the pairs with that end show
    // nothing: no settling, and interleaved pairs with that end are asked for instead. Every case leans
    // decisively to two changes on the levels alone.
    let wiggle = |k: usize| 0.2 * ((k % 5) as f64 - 2.0) * if k.is_multiple_of(2) { 1.0 } else { -1.0 };
    for (good_end_next_to_middle, bad_end_next_to_middle, asks) in
        [(0.0, 1.5, None), (0.6, 1.5, Some(0)), (0.0, 0.6, Some(10))]
    {
        let mut m = machine(11);
        let segment = Segment { lo: 0, hi: 10, top: true };
        for k in 0..60 {
            seed_values(&mut m, &[(0, &[wiggle(k)]), (10, &[1.5 + wiggle(k + 1)])]);
        }
        for k in 0..16 {
            for middle in [4, 6] {
                let next_to_it = good_end_next_to_middle + wiggle(k + 3);
                seed_values(&mut m, &[(middle, &[0.6 + wiggle(k + 2)]), (0, &[next_to_it])]);
            }
        }
        for k in 0..3 {
            for middle in [4, 6] {
                let next_to_it = bad_end_next_to_middle + wiggle(k + 1);
                seed_values(&mut m, &[(middle, &[0.6 + wiggle(k + 4)]), (10, &[next_to_it])]);
            }
        }
        let (bayes, stair) = m.staircase(segment, 0.0, 0.0).expect("a staircase fit");
        assert!(bayes >= STAIRCASE_LOG_BAYES, "the levels alone must lean decisively: {bayes}");
        assert_eq!(stair.middle_commits, vec![4, 6]);
        // As at every decision, nothing is pending when the check runs.
        m.phase = Phase::Locate { segment };
        m.pending.clear();
        assert!(m.settle_staircase(segment, 0.0, "locate"));
        match asks {
            None => {
                assert!(m.pending.is_empty(), "{:?}", m.log);
                assert!(m.log.iter().any(|e| e.decision.starts_with("several contributors")), "{:?}", m.log);
            }
            Some(end) => {
                assert!(
                    m.pending.contains(&(end, 2)) && m.pending.iter().any(|&(c, _)| c == 4 || c == 6),
                    "{:?}",
                    m.pending
                );
                assert!(m.queue.is_empty() && m.culprits.is_empty(), "{:?}", m.log);
            }
        }
    }
}

#[test]
fn runs_are_paired_with_the_nearer_ends_run_next_to_them() {
    // Records: 0:m 1:e 2:e 3:m 4:x 5:m 6:e. Middle runs at 0, 3 and 5 pair with end runs 1, 2 and 6 (each end run
    // once); the run at 4 is another commit's. Differences 1.0 - 0.0, 1.2 - 0.1, 0.8 - 0.2, signed towards the far end.
    let mut m = machine(8);
    for (commit, value) in [(3, 1.0), (0, 0.0), (0, 0.1), (3, 1.2), (5, 9.0), (3, 0.8), (0, 0.2)] {
        seed_values(&mut m, &[(commit, &[value])]);
    }
    let (pairs, z) = m.paired_middle(&[3], 0, true, 0.0, 0.0);
    let differences: [f64; 3] = [1.0, 1.1, 0.6];
    let mean = differences.iter().sum::<f64>() / 3.0;
    let sd = (differences.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
    assert_eq!(pairs, 3);
    assert!((z - mean / (sd / 3f64.sqrt())).abs() < 1e-9, "z {z}");
    // Seen from the far end the same pairs point the other way; with fewer than three pairs there is no z.
    assert!(m.paired_middle(&[3], 0, false, 0.0, 0.0).1 < 0.0);
    assert_eq!(m.paired_middle(&[5], 0, true, 0.0, 0.0), (0, f64::NEG_INFINITY));
}

#[test]
fn a_few_pairs_that_happen_to_agree_do_not_show_a_middle_level() {
    // Four runs of commit 3, each next to a run of the good end, differ by 0.29 to 0.31 where the runs' noise is 1:
    // on their own spread that is a z of about 70; shrunk towards the spread the noise predicts for a difference
    // (sqrt 2), as the fresh pairs of verification are, about 0.5, well short of PAIRED_MIDDLE_Z. Forty such pairs
    // do show it.
    for (pairs, shows) in [(4, false), (40, true)] {
        let mut m = machine(8);
        for k in 0..pairs {
            let difference = 0.3 + 0.01 * ((k % 3) as f64 - 1.0);
            seed_values(&mut m, &[(0, &[0.0]), (3, &[difference])]);
        }
        let (n, own) = m.paired_middle(&[3], 0, true, 0.0, 0.0);
        let (_, shrunk) = m.paired_middle(&[3], 0, true, 0.0, 1.0);
        assert_eq!(n, pairs);
        assert!(own > 20.0, "z on the pairs' own spread {own}");
        assert_eq!(shrunk >= PAIRED_MIDDLE_Z, shows, "shrunk z {shrunk} with {pairs} pairs");
    }
}

#[test]
fn a_series_of_two_large_steps_names_both_commits() {
    // Seed 002's series, with steps large against the noise: two 3 sigma steps in 1,000 commits. The staircase is
    // settled as before, and each side of its best-measured middle commit is then narrowed to its commit (a
    // segment of its own). Before, both were reported as ranges between tested commits: 11% of 200 jobs named the
    // two commits, 100% now, for 97 runs instead of 94. None may blame a commit that is not a step.
    assert_series_named(&[3.0, 3.0], 30, 27);
}

#[test]
fn a_series_of_two_moderate_steps_names_both_commits() {
    // Two 1.5 sigma steps in 1,000 commits: the estimate of a 1.5 sigma step scatters from 1.2 to 1.9 sigmas, so
    // the 1.5 sigma bar for narrowing a staircase range left half the ranges unnarrowed, and both commits were
    // named in 5 of these 20 jobs (25% of 200). Both ranges are now narrowed when both steps reach 1 sigma.
    assert_series_named(&[1.5, 1.5], 20, 17);
}

/// Simulated jobs of a series of `steps` (seed 1): at least `at_least` of `trials` name every step's commit, and
/// none blames a commit that is not a step.
fn assert_series_named(steps: &[f64], trials: usize, at_least: usize) {
    use super::sim::SimConfig;
    let (all, wrong_blame) = named_right(&SimConfig { steps: steps.to_vec(), trials, seed: 1, ..SimConfig::default() });
    assert!(wrong_blame.is_empty(), "blamed a commit that is not a step: {wrong_blame:?}");
    assert!(all >= at_least, "{all} of {trials} named every step");
}

#[test]
fn a_narrowed_range_of_a_false_staircase_is_measured_again_before_it_is_searched() {
    // A single 1.5 sigma step (commit 404, trial 2 of seed 2) whose search read commit 250 between the levels and
    // settled a staircase with steps of 1.1 and 2.0 sigmas: both ranges are narrowed. Reproduced on the runs that
    // had chosen it, the range (0, 250] "differed" (1.6 sigmas) and was searched, probing and locating, until the
    // budget was spent, before the range holding the step was reached. Its ends measured afresh do not differ.
    use super::sim::{trial, SimConfig};
    let config = SimConfig { seed: 2, ..SimConfig::default() };
    let (history, noise_seed, _) = trial(&config, 2);
    assert_eq!(history.steps.iter().map(|s| s.0).collect::<Vec<_>>(), vec![404]);
    let result = simulate(&history, config.noise, noise_seed);
    let narrowed = result.log.iter().filter(|e| e.decision.starts_with("narrow the range")).count();
    assert_eq!(narrowed, 2, "the false staircase is no longer narrowed: the test does not test what it says");
    assert_eq!(result.named, vec![404], "{:?} after {} runs", result.status, result.runs);
    assert!(result.runs < BisectConfig::default().max_runs, "{} runs", result.runs);
}

/// Runs `config.trials` simulated jobs of `config` through the engine: how many named exactly the step commits, and
/// the (trial, named commits) of the jobs that named a commit that is not a step.
fn named_right(config: &super::sim::SimConfig) -> (usize, Vec<(u64, Vec<usize>)>) {
    use super::sim::trial;
    let (mut right, mut wrong_blame) = (0, Vec::new());
    for t in 0..config.trials as u64 {
        let (history, noise_seed, _) = trial(config, t);
        let result = simulate(&history, config.noise, noise_seed);
        let truth: Vec<usize> = history.steps.iter().map(|s| s.0).collect();
        if result.named == truth {
            right += 1;
        } else if result.named.iter().any(|c| !truth.contains(c)) {
            wrong_blame.push((t, result.named.clone()));
        }
    }
    (right, wrong_blame)
}

#[test]
fn a_difference_that_fades_while_locating_ends_not_reproduced_before_the_budget() {
    // No step at all (trial 9 of seed 1): good and bad "differed" after 4 runs a side (log ratio 3.47 of 3.00, the
    // 5% the first test lets through), and locating found nothing to converge on; it spent the 600-run budget and
    // ended inconclusive. Tested again on all the runs at good and bad (35 and 40 by then), the difference had
    // faded: reproducing went on to its own budget of 120 runs at the ends and said so.
    use super::sim::{trial, SimConfig};
    let config = SimConfig { steps: Vec::new(), ..SimConfig::default() };
    let (history, noise_seed, _) = trial(&config, 9);
    assert!(history.steps.is_empty());
    let result = simulate(&history, config.noise, noise_seed);
    let first = result.log.iter().position(|e| e.decision.ends_with("differs: locate the change"));
    let again = result.log.iter().position(|e| e.decision.starts_with("test good and bad again"));
    assert!(first.is_some(), "the first test no longer passes here by chance: the test does not test what it says");
    assert!(again > first, "no second test after locating began: {:?}", result.log.last());
    assert_eq!(result.status, Status::NotReproduced, "after {} runs", result.runs);
    assert!(result.named.is_empty());
    assert!(result.runs < BisectConfig::default().max_runs, "{} runs", result.runs);
}

#[test]
fn the_rest_of_a_series_is_tested_on_fresh_runs_so_a_burst_at_good_does_not_take_the_budget() {
    // Two 3 sigma steps at 10 and 13 of 24 under bursts of load (trial 116 of seed 1). Commit 10 explained part of
    // the change; the runs at good and at 9, some of them in a burst, then made (0, 9] differ, and its search spent
    // the 600-run budget while (10, 24], which holds the second step, was never searched. Tested on fresh runs,
    // (0, 9] holds no contributor, and the second step is found.
    use super::sim::{trial, Noise, SimConfig};
    let config = SimConfig { commits: 24, steps: vec![3.0, 3.0], noise: Noise::Bursts, ..SimConfig::default() };
    let (history, noise_seed, _) = trial(&config, 116);
    let steps: Vec<usize> = history.steps.iter().map(|s| s.0).collect();
    assert_eq!(steps, [10, 13], "the trial's history changed: the test does not test what it says");
    let result = simulate(&history, config.noise, noise_seed);
    let part = result.log.iter().position(|e| e.decision.contains("explains part"));
    assert!(part.is_some(), "commit 10 no longer explains only part here: {:?}", result.log.last());
    assert!(result.log.iter().any(|e| e.decision == "no further contributor in (0, 9]"), "{:#?}", result.log);
    assert_eq!(result.named, steps, "after {} runs", result.runs);
    assert!(result.runs < BisectConfig::default().max_runs, "{} runs", result.runs);
}

/// Builds that differ: commits on each side of a step at 20 of 41, `runs` runs each of unit noise, each commit
/// offset by `offset` times a standard normal of its own. The caveat is set exactly when the offsets are there
/// and the runs within commits can tell the noise, and its spread estimates the offsets' standard deviation.
#[test]
fn the_caveat_on_builds_that_differ_is_set_by_per_commit_offsets_only() {
    // (per-commit offset sd, runs per commit, caveat expected)
    let cases = [(0.0, 4, false), (1.0, 4, true), (1.0, 1, false), (0.0, 1, false), (0.6, 6, true)];
    for (offset, runs, expected) in cases {
        let mut rng = crate::rng::Rng::new(7);
        let mut m = machine(41);
        let values: Vec<(usize, Vec<f64>)> = (0..41)
            .map(|c| {
                let level = if c >= 20 { 5.0 } else { 0.0 } + offset * rng.normal();
                (c, (0..runs).map(|_| level + rng.normal()).collect())
            })
            .collect();
        let borrowed: Vec<(usize, &[f64])> = values.iter().map(|(c, v)| (*c, v.as_slice())).collect();
        seed_values(&mut m, &borrowed);
        let culprit = Culprit {
            commit: 20,
            after: 19,
            located: true,
            untestable_suspects: Vec::new(),
            share: 1.0,
            share_low: 0.9,
            share_high: 1.1,
            confidence: 0.999,
            step: 5.0,
            fresh_from: None,
        };
        let spread = m.build_spread(&[culprit]);
        assert_eq!(spread.is_some(), expected, "offset {offset}, {runs} runs: {spread:?}");
        if let Some(spread) = spread {
            assert!((0.5 * offset..2.0 * offset).contains(&spread.spread), "offset {offset}: {spread:?}");
            assert!((0.7..1.4).contains(&spread.noise) && spread.p_value < 0.01 && spread.commits == 41, "{spread:?}");
        }
    }
}

#[test]
fn the_caution_is_left_out_beside_a_step_that_dwarfs_the_spread() {
    // The demo's bisect printed "a step a few times that size can be a build's own" beside a step 68.5 times the
    // spread. The caution stays for steps within CAVEAT_STEP_RATIO times it, and for an outcome with no located step.
    let spread = BuildSpread { commits: 9, spread: 0.2, noise: 0.3, p_value: 0.006 };
    let culprit = |step: f64| Culprit { step, ..Culprit::unmeasured(5, 4) };
    let outcome = |steps: &[f64], located: bool| Outcome {
        status: if located { Status::Found } else { Status::Inconclusive },
        culprits: steps.iter().map(|&s| Culprit { located, ..culprit(s) }).collect(),
        runs: 40,
        builds: 10,
        total_change: Some(15.0),
        evidence: Vec::new(),
        log: Vec::new(),
        reason: String::new(),
        build_spread: Some(spread),
        improved: false,
        below_min_change: false,
        sensitivity: None,
        open_stretches: vec![],
    };
    assert!(outcome(&[13.7], true).caveat().is_none());
    assert!(outcome(&[-13.7], true).caveat().is_none(), "a step's size, whichever its sign");
    let near = outcome(&[1.5], true).caveat().expect("a step 7.5 times the spread keeps it");
    assert!(near.contains("the smallest step named is 7.5 times the spread"), "{near}");
    assert!(outcome(&[13.7, 1.5], true).caveat().is_some(), "the smallest step decides");
    assert!(outcome(&[13.7], false).caveat().is_some(), "no located step");
    assert!(Outcome { build_spread: None, ..outcome(&[1.5], true) }.caveat().is_none());
}

#[test]
fn a_change_below_the_users_bar_ends_not_reproduced_and_one_above_it_is_bisected() {
    // The simulator's metric sits at 100 with a run-to-run noise of 1, so a 1.5 sigma step is a 1.5% change. The
    // bar stops a bisect only when the change is surely below it: at 3%, twice the change, a first test that read
    // it high (2.6% on 8 runs in trial 0) is bisected, rightly, and the rest stop.
    use super::sim::{run_culprit, trial, Oracle, SimConfig};
    let config = SimConfig { steps: vec![1.5], ..SimConfig::default() };
    // (--min-change as a fraction, the status every trial must end with, if one)
    let cases = [(0.05, Some(Status::NotReproduced)), (0.03, None), (0.005, Some(Status::Found))];
    for (relative, want) in cases {
        let mut stopped = 0;
        for seed in 0..6 {
            let (history, noise_seed, _) = trial(&config, seed);
            let mut oracle = Oracle::new(&history, config.noise, noise_seed);
            let bisect = BisectConfig { min_effect_relative: relative, ..BisectConfig::default() };
            let result = run_culprit(&history, &mut oracle, &bisect);
            if let Some(want) = want {
                assert_eq!(result.status, want, "--min-change {relative}, trial {seed}: {:?}", result.log.last());
            }
            match result.status {
                Status::NotReproduced => {
                    stopped += 1;
                    let stop = result.log.iter().find(|e| e.decision == "not reproduced").map(|e| e.reason.clone());
                    assert!(stop.is_some_and(|r| r.contains("--min-change")), "{:?}", result.log.last());
                    // At 5% the bar is 3.3 times the change: a few rounds at the ends show it cannot be reached.
                    assert!(relative < 0.05 || result.runs <= 24, "{} runs at 5%", result.runs);
                }
                Status::Found => assert_eq!(result.named, history.steps.iter().map(|s| s.0).collect::<Vec<_>>()),
                other => panic!("--min-change {relative}, trial {seed}: {other:?}"),
            }
        }
        if want.is_none() {
            assert!(stopped >= 3, "at 3% only {stopped} of 6 stopped");
        }
    }
}

/// The comparison of the builds beside a candidate: build means (mean, runs) after and before, runs of unit noise.
#[test]
fn builds_beside_a_step_show_it_only_when_they_sit_apart_by_more_than_builds_differ() {
    use super::replicate::BuildComparison;
    /// Build means with their runs.
    type Builds = &'static [(f64, f64)];
    // (after, before, shows the step at 5%)
    let cases: [(Builds, Builds, bool); 5] = [
        // Steady builds, 4 runs each, a 1.5 sigma step: shown.
        (&[(1.6, 4.0), (1.4, 4.0)], &[(0.1, 4.0), (-0.1, 4.0)], true),
        // The same means scattered by offsets of about 1.5 sigma: builds differ as much as the sides do.
        (&[(3.0, 4.0), (0.0, 4.0)], &[(1.5, 4.0), (-1.5, 4.0)], false),
        // No step and steady builds.
        (&[(0.2, 4.0), (-0.1, 4.0)], &[(0.1, 4.0), (0.0, 4.0)], false),
        // Builds that happen to agree exactly cannot make a step of a third of a run's noise certain: the runs'
        // own noise is the floor of the spread guessed.
        (&[(0.3, 4.0), (0.3, 4.0)], &[(0.0, 4.0), (0.0, 4.0)], false),
        // A step below the builds: not a step that holds (one-sided).
        (&[(-1.5, 4.0), (-1.5, 4.0)], &[(0.0, 4.0), (0.0, 4.0)], false),
    ];
    for (after, before, shown) in cases {
        let c = BuildComparison::new(after, before, 1.0).expect("two builds a side");
        assert_eq!(c.p_value < super::replicate::REPLICATE_ALPHA, shown, "{after:?} {before:?}: p {}", c.p_value);
        assert!(c.step_se > 0.0 && c.spread >= 0.0);
    }
    let spread = BuildComparison::new(&[(3.0, 4.0), (0.0, 4.0)], &[(1.5, 4.0), (-1.5, 4.0)], 1.0).unwrap().spread;
    assert!(spread > 1.0, "the spread of the offsets is read from the builds: {spread}");
    assert!(BuildComparison::new(&[(1.0, 4.0)], &[(0.0, 4.0), (0.1, 4.0)], 1.0).is_none(), "one build after");
}

#[test]
fn a_machine_whose_level_moved_between_visits_is_not_read_as_builds_that_differ() {
    // A step at commit 5 of 10; every run varies by about 0.16 within a visit. In the first case the machine's
    // level rose by 0.8 for the middle third of the job: good and bad, visited in every third, show it in their own
    // visits, and the commits visited in the middle third sit 0.8 above the others. (A level that moves once would
    // be read as a slow drift and corrected.) In the second case the builds differ instead (commit 2 at -0.5,
    // commit 3 at +0.8, commit 6 at +0.8) and keep their offsets: good and bad read the same in every visit. The
    // commits of one side differ by more than their runs explain in both cases (the build-spread test), but only
    // the second is builds that differ.
    let candidate = [Culprit::unmeasured(5, 4)];
    let machine_moved = {
        let mut m = machine(10);
        seed_values(&mut m, &[(0, &around(0.0, 6)), (9, &around(1.0, 6)), (2, &around(0.0, 4)), (7, &around(1.0, 4))]);
        seed_values(&mut m, &[(0, &around(0.8, 6)), (9, &around(1.8, 6)), (3, &around(0.8, 4)), (6, &around(1.8, 4))]);
        seed_values(&mut m, &[(0, &around(0.0, 6)), (9, &around(1.0, 6)), (4, &around(0.0, 4)), (5, &around(1.0, 4))]);
        m
    };
    let builds_differ = {
        let mut m = machine(10);
        seed_values(&mut m, &[(0, &around(0.0, 6)), (9, &around(1.0, 6)), (2, &around(-0.5, 4)), (7, &around(1.0, 4))]);
        seed_values(&mut m, &[(0, &around(0.0, 6)), (9, &around(1.0, 6)), (3, &around(0.8, 4)), (6, &around(1.8, 4))]);
        seed_values(&mut m, &[(0, &around(0.0, 6)), (9, &around(1.0, 6)), (4, &around(0.0, 4)), (5, &around(1.0, 4))]);
        m
    };
    let trigger = BisectConfig::default().replicate_below_p;
    for (m, differ) in [(&machine_moved, false), (&builds_differ, true)] {
        assert!(m.build_spread_at(&candidate, trigger).is_some(), "the commits of a side scatter");
        assert_eq!(m.builds_differ(&candidate, trigger), differ);
    }
}

/// Layout noise (every build offset by 0.6 noise sigmas of its own) over 1,000 commits with a 1.5 sigma step: the
/// candidates that are a build's own offset are caught by replicating them on the builds beside them, so at least a
/// third fewer jobs blame a commit that is not the step than with the check off; and on steady builds (Gaussian
/// noise, 100 commits) the check costs no right answer.
#[test]
fn replicating_a_candidate_on_the_builds_beside_it_blames_fewer_offsets() {
    use super::sim::{run_culprit, trial, Noise, Oracle, SimConfig};
    let off = BisectConfig { replicate_below_p: 0.0, ..BisectConfig::default() };
    let on = BisectConfig::default();
    let count = |sim: &SimConfig, bisect: &BisectConfig| {
        let (mut right, mut false_blame, mut not_held) = (0, 0, 0);
        for t in 0..sim.trials as u64 {
            let (history, noise_seed, _) = trial(sim, t);
            let mut oracle = Oracle::for_config(&history, sim, noise_seed);
            let result = run_culprit(&history, &mut oracle, bisect);
            let truth: Vec<usize> = history.steps.iter().map(|s| s.0).collect();
            right += usize::from(result.named == truth);
            false_blame += usize::from(result.named.iter().any(|c| !truth.contains(c)));
            not_held += usize::from(result.log.iter().any(|e| e.decision.contains("does not hold across builds")));
        }
        (right, false_blame, not_held)
    };
    let layout = SimConfig {
        steps: vec![1.5],
        noise: Noise::Layout,
        layout_sigma: 0.6,
        trials: 40,
        seed: 1,
        ..SimConfig::default()
    };
    let (without, with) = (count(&layout, &off), count(&layout, &on));
    assert_eq!(without.2, 0, "the check is off");
    assert!(with.2 > 0, "no candidate failed the check: the test does not test what it says");
    // Measured: 9 of 40 against 19 (right answers 5 either way: offsets this large hide the step's own commit).
    assert!(3 * with.1 <= 2 * without.1, "false blames with the check {} against {} without", with.1, without.1);
    let steady = SimConfig { commits: 100, steps: vec![1.5], trials: 40, seed: 1, ..SimConfig::default() };
    let (without, with) = (count(&steady, &off), count(&steady, &on));
    assert_eq!(with.1, 0, "a false blame on steady builds");
    assert!(with.0 >= without.0, "right answers on steady builds {} with the check, {} without", with.0, without.0);
}

#[test]
fn histories_with_merges_are_valid_ranges_with_steps_off_the_merges() {
    use super::sim::History;
    use crate::rng::Rng;
    for seed in 0..20 {
        let history = History::generate_with_topics(300, &[1.5, 1.0], 0.1, 40, &mut Rng::new(seed));
        let nodes = history.nodes();
        assert_eq!(nodes.len(), 301);
        let topology = Topology::new(&nodes).expect("a range git bisect accepts");
        assert!(!topology.is_linear());
        let merges = nodes.iter().filter(|n| n.parents.len() == 2).count();
        assert_eq!(merges, 40, "seed {seed}");
        for &(step, _) in &history.steps {
            assert_eq!(nodes[step].parents.len(), 1, "seed {seed}: step {step} on a merge");
        }
        // A step reaches exactly the commits that contain it.
        for c in 0..=300 {
            let expected: f64 =
                history.steps.iter().filter(|&&(step, _)| topology.contains(step, c)).map(|s| s.1).sum();
            assert!((history.level(c) - expected).abs() < 1e-9, "seed {seed}: commit {c}");
        }
        assert_eq!(history.level(0), 0.0);
        assert!((history.level(300) - 2.5).abs() < 1e-9, "bad contains every step");
    }
    // No topics: the linear history, drawn exactly as before.
    let (a, b) = (
        History::generate_with_topics(50, &[1.5], 0.1, 0, &mut Rng::new(3)),
        History::generate(50, &[1.5], 0.1, &mut Rng::new(3)),
    );
    assert_eq!(a, b);
}

#[test]
fn merge_base_is_the_latest_common_ancestor_and_merged_parents_skip_the_first() {
    // 0; mainline 1; topic 2-3 forked at 0; merge 4 = (1, 3); 5 on mainline.
    let parents: Vec<Vec<usize>> = vec![vec![], vec![0], vec![0], vec![2], vec![1, 3], vec![4]];
    let nodes: Vec<CommitNode> = parents.into_iter().map(|p| CommitNode { parents: p, untestable: false }).collect();
    let topology = Topology::new(&nodes).expect("valid");
    assert_eq!(topology.merge_base(1, 3), Some(0));
    assert_eq!(topology.merge_base(4, 3), Some(3));
    assert_eq!(topology.merged_parents(4), &[3]);
    assert!(topology.merged_parents(5).is_empty());
    assert_eq!(topology.segment(0, 3), vec![2, 3], "the merged branch alone");
}

#[test]
fn a_second_change_on_a_merged_branch_is_blamed_on_its_commit_not_on_the_merge() {
    // Two 3 sigma steps in 1,000 commits with 100 topic branches merged into the mainline. Once the first step
    // was confirmed, the segment after it held the second step's branch, whose commits lack the first change: the
    // search blamed the merge that brought the second step in (29 of 50 jobs named a merge as a culprit). A merge
    // confirmed over its first parent now has its merged branch searched, and the commit found there takes over.
    use super::sim::{run_culprit, trial, Oracle, SimConfig};
    let config = SimConfig { steps: vec![3.0, 3.0], topics: 100, ..SimConfig::default() };
    let (mut right, mut merges_named) = (0, 0);
    for t in 0..20 {
        let (history, noise, _) = trial(&config, t);
        let mut oracle = Oracle::for_config(&history, &config, noise);
        let result = run_culprit(&history, &mut oracle, &BisectConfig::default());
        let truth: Vec<usize> = history.steps.iter().map(|s| s.0).collect();
        right += usize::from(result.named == truth);
        let nodes = history.nodes();
        merges_named += result.named.iter().filter(|&&c| nodes[c].parents.len() > 1).count();
    }
    assert_eq!(merges_named, 0, "merges blamed for a step on their branch");
    assert!(right >= 15, "{right} of 20 named both steps");
}

#[test]
fn a_merge_whose_branch_read_good_by_chance_does_not_hold_verification_forever() {
    // One 1.5 sigma step on a topic branch of a single commit, whose merge is the next commit. The step's commit
    // read at the good level in its first two runs, so the posterior put the change on the merge; the fresh pairs
    // of the merge and its first parent showed the step at once, but the posterior could not pass the blame gate
    // (the doubt was the branch commit, which the pairs do not measure), and verification asked for 60 pairs
    // before ending inconclusive. Trials 24, 62 and 83 of seed 1 (300 merges in 1,000 commits) all did.
    use super::sim::{run_culprit, trial, Oracle, SimConfig};
    let config = SimConfig { topics: 300, ..SimConfig::default() };
    for t in [24, 62, 83] {
        let (history, noise, _) = trial(&config, t);
        let mut oracle = Oracle::for_config(&history, &config, noise);
        let result = run_culprit(&history, &mut oracle, &BisectConfig::default());
        let truth: Vec<usize> = history.steps.iter().map(|s| s.0).collect();
        assert_eq!((result.status, result.named.clone()), (Status::Found, truth), "trial {t}: {:?}", result.log);
        assert!(result.runs < 200, "trial {t}: {} runs", result.runs);
    }
}

/// The parents of a history with one topic branch: good 0, `mainline` commits on it, a topic branch of `topic`
/// commits forked at good, the merge of the two (first parent the mainline), then `after` more mainline commits.
fn one_topic_branch(mainline: usize, topic: usize, after: usize) -> Vec<CommitNode> {
    let mut parents: Vec<Vec<usize>> = vec![vec![]];
    parents.extend((1..=mainline).map(|c| vec![c - 1]));
    parents.push(vec![0]);
    parents.extend((mainline + 2..=mainline + topic).map(|c| vec![c - 1]));
    parents.push(vec![mainline, mainline + topic]);
    let merge = mainline + topic + 1;
    parents.extend((merge + 1..=merge + after).map(|c| vec![c - 1]));
    parents.into_iter().map(|parents| CommitNode { parents, untestable: false }).collect()
}

#[test]
fn a_merge_is_blamed_after_its_branch_search_only_when_the_branch_is_ruled_out() {
    // Good 0; mainline 1..=4; a topic branch 5..=8 forked at good; merge 9 of 4 and 8; bad 10. Merge 9 was
    // confirmed over its first parent with a step of 1.0, and its branch (0, 8] searched without a commit found.
    // Before this rule the merge stayed blamed whatever the branch showed: three 0.5 sigma steps in 1,000 commits
    // with 100 merges named, in 4 of 40 jobs, the merge of a branch whose 0.5 sigma step the branch's reproduce test
    // could not show in 120 runs.
    let nodes = one_topic_branch(4, 4, 1);
    let branch = Segment { lo: 0, hi: 8, top: false };
    // (the branch's change and its standard error when its reproduce test closed it, a range reported on the
    // branch, what is left of the merge: None gone, Some(located))
    type Case = (Option<(f64, f64)>, bool, Option<bool>);
    let cases: Vec<Case> = vec![
        // The branch surely changed by less than half the merge's step: the merge made it.
        (Some((0.05, 0.1)), false, Some(true)),
        // The branch may carry the step (0.3 +- 0.2 reaches 0.77): the merge is the range it brings in.
        (Some((0.3, 0.2)), false, Some(false)),
        // No change measured, but its 99% upper bound just reaches half the step: not ruled out.
        (Some((0.0, 0.5 / 2.326 + 1e-6)), false, Some(false)),
        // The search ended some other way (unresolved, an untestable end, the budget): the range.
        (None, false, Some(false)),
        // Contributors reported on the branch replace the merge.
        (None, true, None),
    ];
    for (branch_change, range_on_branch, left) in cases {
        let mut m = machine_over(&nodes);
        m.culprits.push(Culprit { confidence: 1.0, step: 1.0, ..Culprit::unmeasured(9, 4) });
        m.merge_sides.push((branch, 9));
        if range_on_branch {
            m.culprits.push(Culprit { located: false, step: 0.5, ..Culprit::unmeasured(7, 0) });
        }
        m.merged_branch_ended(branch, branch_change);
        let merge = m.culprits.iter().find(|c| c.commit == 9);
        assert_eq!(merge.map(|c| c.located), left, "{branch_change:?} {range_on_branch}: {:?}", m.culprits);
        if let Some(merge) = merge {
            assert_eq!(merge.after, 4, "the range starts at the merge's first parent");
        }
        assert!(m.merge_sides.is_empty());
        // A second call (the segment ends once more, through the generic exit) changes nothing.
        let before = format!("{:?}", m.culprits);
        m.merged_branch_ended(branch, None);
        assert_eq!(format!("{:?}", m.culprits), before);
    }
}

#[test]
fn ci_52_a_merged_branch_whose_search_gave_up_on_no_change_leaves_the_merge_blamed() {
    // CI of session 52: a real bisect of an evil merge (the merge alone slows the program by 30%) searched the merged
    // branch on a false start of the residual test's first runs under load, gave up 200 runs later, and reported the
    // branch as a range of 5% (90% interval 0.7%..10%) of the change. That range took the blame off the merge and
    // the bisect ended inconclusive. Good 0; mainline 1..=4; a topic branch 5..=8 forked at good; merge 9 of 4 and
    // 8 (confirmed with a step of 1.0 of a whole change of 1.0); bad 10. The branch's search gives up with 40 runs
    // at each of its ends, which differ by `branch_step`; or, on the same runs, decides where to measure next.
    let nodes = one_topic_branch(4, 4, 1);
    let branch = Segment { lo: 0, hi: 8, top: false };
    // (the change across the branch, the merge left blamed, a range reported on the branch)
    let cases = [(0.0, true, false), (0.03, true, false), (0.5, false, true), (1.0, false, true)];
    for (branch_step, merge_blamed, range_reported) in cases {
        let mut m = machine_over(&nodes);
        m.total = Some((1.0, 0.05));
        m.culprits.push(Culprit { confidence: 1.0, step: 1.0, ..Culprit::unmeasured(9, 4) });
        m.merge_sides.push((branch, 9));
        // Noise of sd about 0.06 in a fixed pattern, the same at both ends, so only the step differs.
        let noise: Vec<f64> = (0..40).map(|i| 0.02 * f64::from((i * 7) % 11) - 0.1).collect();
        let base: Vec<f64> = noise.iter().map(|e| 10.0 + e).collect();
        let tip: Vec<f64> = noise.iter().rev().map(|e| 10.0 + branch_step + e).collect();
        seed_values(&mut m, &[(0, &base), (8, &tip)]);
        m.phase = Phase::Locate { segment: branch };
        m.segment_unresolved(branch, "no testable commit left to measure", None);
        let merge = m.culprits.iter().find(|c| c.commit == 9);
        assert_eq!(merge.is_some_and(|c| c.located), merge_blamed, "step {branch_step}: {:?}", m.culprits);
        let range = m.culprits.iter().any(|c| !c.located && (c.after, c.commit) == (0, 8));
        assert_eq!(range, range_reported, "step {branch_step}: {:?}", m.culprits);
        if merge_blamed {
            assert!(m.log.iter().any(|e| e.decision.contains("made the step itself")), "{:?}", m.log);
        }
        // The same runs read while the branch is still being located end its search there, or let it go on.
        let mut m = machine_over(&nodes);
        m.total = Some((1.0, 0.05));
        m.culprits.push(Culprit { confidence: 1.0, step: 1.0, ..Culprit::unmeasured(9, 4) });
        m.merge_sides.push((branch, 9));
        seed_values(&mut m, &[(0, &base), (8, &tip)]);
        m.phase = Phase::Locate { segment: branch };
        let asked = m.locate(branch, 0.0);
        let ended = m.log.iter().any(|e| e.decision == "no further contributor in (0, 8]");
        assert_eq!((ended, asked), (merge_blamed, !merge_blamed), "step {branch_step}: {:?}", m.log);
        assert!(m.culprits.iter().any(|c| c.commit == 9 && c.located), "step {branch_step}: {:?}", m.culprits);
    }
}

#[test]
fn a_budgets_end_names_no_residual_below_the_floor_that_a_finished_search_obeys() {
    // Good 0 at level 0, a located culprit 10 at 1 - s, bad 20 at 1: the residual (10, 20] changes by s. The budget
    // ends while it is searched, with 40 runs at each of its ends. Its change shows (3 standard errors and more) in
    // every case, so before the floor a budget's end reported it as a range, a contributor of s; a change surely
    // below 15% of the whole is no contributor, as it is when a search gives up or a reproduce test closes it.
    let noise: Vec<f64> = (0..40).map(|i| 0.02 * f64::from((i * 7) % 11) - 0.1).collect();
    let at = |level: f64| -> Vec<f64> { noise.iter().map(|e| 10.0 + level + e).collect() };
    let residual = Segment { lo: 10, hi: 20, top: false };
    // (s, a range reported)
    for (s, range_reported) in [(0.05, false), (0.5, true)] {
        let mut m = machine(21);
        m.total = Some((1.0, 0.02));
        m.culprits.push(Culprit { confidence: 1.0, step: 1.0 - s, ..Culprit::unmeasured(10, 9) });
        seed_values(&mut m, &[(0, &at(0.0)), (10, &at(1.0 - s)), (20, &at(1.0))]);
        assert!(m.shows_change(residual, 0.0), "s {s}: the runs show the residual's change");
        m.phase = Phase::Locate { segment: residual };
        m.report_unsettled_parts();
        let range = m.culprits.iter().any(|c| !c.located && (c.after, c.commit) == (10, 20));
        assert_eq!(range, range_reported, "s {s}: {:?}", m.culprits);
        let closed = m.log.iter().any(|e| e.decision == "no further contributor in (10, 20]");
        assert_eq!(closed, !range_reported, "s {s}: {:?}", m.log);
    }
}

#[test]
fn a_merge_that_makes_the_step_itself_stays_blamed() {
    // Good 0; mainline 1..=8; a topic branch 9..=14 forked at good; merge 15 of 8 and 14; mainline 16..=20. The
    // merge alone makes a 1.5 sigma step (a conflict resolved badly): its branch is searched, shows no change, and
    // the merge is blamed.
    use super::sim::{Dag, History};
    let parents = one_topic_branch(8, 6, 5).into_iter().map(|node| node.parents).collect();
    let history =
        History { commits: 20, steps: vec![(15, 1.5)], untestable: vec![false; 21], dag: Some(Dag::new(parents)) };
    let mut found = 0;
    for seed in 0..6 {
        let result = simulate(&history, sim::Noise::Gaussian, 1000 + seed);
        assert!(result.named.iter().all(|&c| c == 15), "seed {seed}: named {:?}", result.named);
        if result.status == Status::Found && result.named == [15] {
            found += 1;
            assert!(result.log.iter().any(|e| e.decision.contains("made the step itself")), "seed {seed}");
        }
    }
    assert!(found >= 5, "the merge was blamed in {found} of 6 jobs");
}

#[test]
fn a_staircase_across_a_merge_is_compared_with_changes_that_add() {
    // Good 0; mainline 1..=10; a topic branch 11..=20 forked at good; merge 21 of 10 and 20; mainline 22..=26 (bad).
    // Changes of 0.75 at commit 5 (mainline) and commit 15 (branch): the mainline after 5 and the branch after 15
    // each sit at the middle level, the merge and what follows at the sum. A line's staircase model reads the
    // branch's commits as one more level; this one reads them as the second change alone.
    let nodes = one_topic_branch(10, 10, 5);
    let segment = Segment { lo: 0, hi: 26, top: true };
    // (tested commits, the changes present at each, runs each, two changes expected)
    type Case = (Vec<(usize, f64)>, usize, bool);
    let tested = |level: &dyn Fn(usize) -> f64| -> Vec<(usize, f64)> {
        [0, 3, 8, 10, 13, 18, 20, 21, 26].iter().map(|&c| (c, level(c))).collect()
    };
    let holds = |k: usize, c: usize| Topology::new(&nodes).is_ok_and(|t| t.contains(k, c));
    let cases: Vec<Case> = vec![
        (tested(&|c| 0.75 * (f64::from(u8::from(holds(5, c))) + f64::from(u8::from(holds(15, c))))), 16, true),
        // One change of 1.5 at the merge's branch commit 15: every commit sits at either end's level.
        (tested(&|c| 1.5 * f64::from(u8::from(holds(15, c)))), 16, false),
        // The two changes with too few runs to tell.
        (tested(&|c| 0.75 * (f64::from(u8::from(holds(5, c))) + f64::from(u8::from(holds(15, c))))), 2, false),
    ];
    for (levels, runs, two) in cases {
        let mut m = machine_over(&nodes);
        seed_levels(&mut m, &levels, runs);
        let (bayes, stair) = m.staircase(segment, 0.0, 0.0).expect("a staircase fit");
        assert_eq!(bayes >= STAIRCASE_LOG_BAYES, two, "levels {levels:?} runs {runs}: log Bayes factor {bayes}");
        if two {
            // The middle commits are the mainline's after 5 and the branch's after 15, each holding one change.
            assert_eq!(stair.middle_commits, vec![8, 10, 18, 20], "{stair:?}");
            // Levels are centred on a run of good, so their differences are what the fit states.
            let (middle, high) = (stair.middle.0 - stair.low.0, stair.high.0 - stair.low.0);
            assert!((middle - 0.75).abs() < 0.1 && (high - 1.5).abs() < 0.1, "{stair:?}");
            // Each range holds exactly one of the two changes.
            let [(a, b), (c, d)] = stair.ranges;
            let topology = m.topology.clone();
            let holds_in = |lo: usize, hi: usize| [5, 15].iter().filter(|&&k| topology.in_segment(k, lo, hi)).count();
            assert_eq!((holds_in(a, b), holds_in(c, d)), (1, 1), "{stair:?}");
        }
    }
}

#[test]
fn three_small_steps_among_merges_are_reported_as_several_contributors() {
    // The target's staircase (three 0.5 sigma steps in 1,000 commits) on a history with 100 merges. With the
    // staircase comparison for lines only, 17 of 100 jobs reported several contributors and 12 named a commit that
    // changed nothing; with changes that add, 94 and none.
    use super::sim::{run_culprit, trial, Oracle, SimConfig};
    let config = SimConfig { steps: vec![0.5, 0.5, 0.5], topics: 100, ..SimConfig::default() };
    let mut several = 0;
    for t in 0..10 {
        let (history, noise, _) = trial(&config, t);
        let mut oracle = Oracle::for_config(&history, &config, noise);
        let result = run_culprit(&history, &mut oracle, &BisectConfig::default());
        let truth: Vec<usize> = history.steps.iter().map(|s| s.0).collect();
        assert!(result.named.iter().all(|c| truth.contains(c)), "trial {t}: named {:?} of {truth:?}", result.named);
        let topology = Topology::new(&history.nodes()).expect("a valid range");
        for c in &result.culprits {
            let holds = truth.iter().any(|&k| topology.in_segment(k, c.after, c.commit));
            assert!(holds, "trial {t}: ({}, {}] holds none of {truth:?}", c.after, c.commit);
        }
        several += usize::from(result.status == Status::Multiple);
    }
    assert!(several >= 8, "{several} of 10 reported as several contributors");
}

proptest! {
    /// The pieces after a commit c of a history with merges (see `Topology::pieces_after`) never hold c, and
    /// between them hold every commit of (c, bad] except the merges they were cut at (which hold c while their
    /// first parent does not).
    #[test]
    fn pieces_after_a_commit_hold_the_rest_of_its_segment_and_not_the_commit(
        shape in proptest::collection::vec((0usize..1000, 0usize..1000, proptest::bool::ANY), 3..30)
    ) {
        // As below: random parents, and bad an octopus merge of every commit nobody else has as a parent.
        let count = shape.len() + 1;
        let mut parents: Vec<Vec<usize>> = vec![vec![]];
        for (i, &(a, b, merge)) in shape.iter().enumerate().take(count - 2) {
            let i = i + 1;
            let mut p = vec![a % i];
            if merge && b % i != a % i {
                p.push(b % i);
            }
            parents.push(p);
        }
        let mut tips: Vec<usize> = (0..count - 1).filter(|&c| !parents.iter().any(|p| p.contains(&c))).collect();
        tips.sort_unstable();
        parents.push(tips);
        let nodes: Vec<CommitNode> =
            parents.into_iter().map(|parents| CommitNode { parents, untestable: false }).collect();
        let Ok(topology) = Topology::new(&nodes) else {
            return Ok(());
        };
        let bad = count - 1;
        for c in 1..bad {
            let pieces = topology.pieces_after(c, bad);
            for &(lo, hi) in &pieces {
                prop_assert!(!topology.in_segment(c, lo, hi), "{c}: piece ({lo}, {hi}] holds it: {pieces:?}");
            }
            for x in topology.segment(c, bad) {
                let held = pieces.iter().any(|&(lo, hi)| topology.in_segment(x, lo, hi));
                let cut = topology.contains(c, x) && topology.first_parent(x).is_some_and(|p| !topology.contains(c, p));
                prop_assert!(held || cut, "{c}: commit {x} of ({c}, {bad}] is in no piece of {pieces:?}");
            }
        }
    }

    /// The classes of a history with merges (hypotheses no testable commit tells apart) are those of the plain
    /// definition: the same testable commits of the segment contain them, a testable member representing the
    /// class, else the first. `classes` finds them without comparing every signature (see its comment).
    #[test]
    fn classes_after_merges_are_the_hypotheses_that_testable_commits_cannot_tell_apart(
        shape in proptest::collection::vec(
            (0usize..1000, 0usize..1000, proptest::bool::ANY, proptest::bool::weighted(0.3)),
            3..30,
        )
    ) {
        // Commit i > 0 has a parent drawn among the earlier ones and, when the flag says so, a second; the last
        // commit (bad) merges every commit nobody else has as a parent, so that it contains them all.
        let count = shape.len() + 1;
        let mut parents: Vec<Vec<usize>> = vec![vec![]];
        for (i, &(a, b, merge, _)) in shape.iter().enumerate().take(count - 2) {
            let i = i + 1;
            let first = a % i;
            let mut p = vec![first];
            if merge && b % i != first {
                p.push(b % i);
            }
            parents.push(p);
        }
        let mut tips: Vec<usize> = (0..count - 1).filter(|&c| !parents.iter().any(|p| p.contains(&c))).collect();
        tips.sort_unstable();
        parents.push(tips);
        let mut nodes: Vec<CommitNode> =
            parents.into_iter().map(|parents| CommitNode { parents, untestable: false }).collect();
        for (node, &(_, _, _, untestable)) in nodes.iter_mut().skip(1).zip(&shape) {
            node.untestable = untestable;
        }
        let last = count - 1;
        nodes[last].untestable = false;
        let Ok(m) = Bisect::new(BisectConfig::default(), &nodes) else {
            return Ok(());
        };
        let hypotheses = m.topology.segment(0, last);
        let testable: Vec<usize> = hypotheses.iter().copied().filter(|&c| !m.untestable[c]).collect();
        let signature = |k: usize| -> Vec<bool> { testable.iter().map(|&c| m.topology.contains(k, c)).collect() };
        let plain: Vec<usize> = hypotheses
            .iter()
            .map(|&k| {
                let same: Vec<usize> = hypotheses.iter().copied().filter(|&j| signature(j) == signature(k)).collect();
                same.iter().copied().find(|&j| !m.untestable[j]).unwrap_or(same[0])
            })
            .collect();
        prop_assert_eq!(m.classes(last, &hypotheses), plain);
    }
}

#[test]
fn a_step_on_the_third_branch_of_an_octopus_merge_is_blamed_on_its_commit() {
    // Good 0; mainline 1..=6; three topic branches of 5 commits forked at good (7..=11, 12..=16, 17..=21); one
    // octopus merge 22 of 6, 11, 16 and 21 (as `git merge a b c` makes); mainline 23..=27. A 1.5 sigma step at
    // commit 19, on the third branch, is named, never the merge.
    use super::sim::{Dag, History};
    let mut parents: Vec<Vec<usize>> = vec![vec![]];
    parents.extend((1..=6).map(|c| vec![c - 1]));
    for first in [7, 12, 17] {
        parents.push(vec![0]);
        parents.extend((first + 1..first + 5).map(|c| vec![c - 1]));
    }
    parents.push(vec![6, 11, 16, 21]);
    parents.extend((23..=27).map(|c| vec![c - 1]));
    let history =
        History { commits: 27, steps: vec![(19, 1.5)], untestable: vec![false; 28], dag: Some(Dag::new(parents)) };
    let mut found = 0;
    for seed in 0..6 {
        let result = simulate(&history, sim::Noise::Gaussian, 2000 + seed);
        assert!(result.named.iter().all(|&c| c == 19), "seed {seed}: named {:?}: {:?}", result.named, result.log);
        found += usize::from(result.status == Status::Found && result.named == [19]);
    }
    assert!(found >= 5, "commit 19 was named in {found} of 6 jobs");
    // Those jobs found it by locating; when the merge is confirmed first, each of its three merged branches is
    // queued as a segment of its own, from the merge base (good) to the merged parent.
    let nodes = history.nodes();
    let mut m = machine_over(&nodes);
    m.search_merged_branches(22);
    let queued: Vec<(usize, usize)> = m.queue.iter().map(|s| (s.lo, s.hi)).collect();
    assert_eq!(queued, [(0, 11), (0, 16), (0, 21)]);
    assert_eq!(
        m.merge_sides.iter().map(|&(s, merge)| (s.hi, merge)).collect::<Vec<_>>(),
        [(11, 22), (16, 22), (21, 22)]
    );
    assert_eq!(m.topology.segment(0, 21), (17..=21).collect::<Vec<_>>(), "the third branch alone");
}

/// The history of `tests/fixtures/make-merge-repo.sh` in topological order: good 0; main m1..m4 = 1..=4; topic-a
/// forked at m1, a1..a3 = 5..=7; topic-b forked at m2, b1..b3 = 8..=10; main m5 = 11, a commit that does not build
/// = 12, its removal = 13; the merge of topic-a = 14; m8 = 15; the merge of topic-b = 16; m9 = 17; bad m10 = 18.
fn fixture_merge_window() -> Vec<Vec<usize>> {
    let mut parents: Vec<Vec<usize>> = vec![vec![]];
    parents.extend([vec![0], vec![1], vec![2], vec![3]]);
    parents.extend([vec![1], vec![5], vec![6]]);
    parents.extend([vec![2], vec![8], vec![9]]);
    parents.extend([vec![4], vec![11], vec![12], vec![13, 7], vec![14], vec![15, 10], vec![16], vec![17]]);
    parents
}

#[test]
fn pieces_after_a_commit_read_against_their_starts() {
    let dag = Topology::new(&super::sim::Dag::new(fixture_merge_window()).nodes).unwrap();
    let line = Topology::new(&CommitNode::linear(10)).unwrap();
    // (topology, commit, end, pieces)
    type Case<'a> = (&'a Topology, usize, usize, Vec<(usize, usize)>);
    let cases: Vec<Case> = vec![
        // In a line, the rest after a commit is one segment.
        (&line, 4, 9, vec![(4, 9)]),
        (&line, 9, 9, vec![]),
        // b2 came in with the merge of topic-b (16), whose first parent m8 lacks it: cut at 16, the mainline from
        // topic-b's fork (m2) to m8, and topic-b after b2.
        (&dag, 9, 18, vec![(16, 18), (2, 15), (9, 10)]),
        // The same from the end of topic-b: b2 lies on its first-parent chain.
        (&dag, 9, 10, vec![(9, 10)]),
        // a3 came in with the merge of topic-a (14): after it, then the mainline from topic-a's fork (m1) to the
        // commit before the merge; topic-a has nothing after a3.
        (&dag, 7, 18, vec![(14, 18), (1, 13)]),
        // A mainline commit is on the chain: one segment, even though topic-b's commits lack it.
        (&dag, 3, 18, vec![(3, 18)]),
    ];
    for (topology, commit, end, pieces) in cases {
        assert_eq!(topology.pieces_after(commit, end), pieces, "after {commit} to {end}");
    }
}

#[test]
fn a_series_split_across_two_merged_branches_never_names_a_commit_twice() {
    // The end-to-end fixture's series: a step on each topic branch, a2 (6) and b2 (9), which add. After the first
    // culprit, the rest of the change was searched in (culprit, bad]; after merges that segment holds the first
    // parent of the merge that brought the culprit in, which lacks its change, so the merge read as a step and its
    // branch search found the culprit again: on CI a real bisect named b2 twice and a2 not at all, and 12 of these
    // 240 jobs named a commit twice. Now none does, none blames a commit that is not a step, and both are named in
    // 235 (in the others, the first culprit's runs hid the rest of the change and it alone was named).
    use super::sim::{Dag, History, Noise};
    let mut untestable = vec![false; 19];
    untestable[12] = true;
    let (mut both, mut jobs) = (0, 0);
    for size in [3.0, 4.0] {
        for noise in [Noise::Gaussian, Noise::Bursts] {
            for seed in 0..60 {
                let steps = vec![(6, size), (9, 0.8 * size)];
                let dag = Some(Dag::new(fixture_merge_window()));
                let history = History { commits: 18, steps, untestable: untestable.clone(), dag };
                let result = simulate(&history, noise, seed);
                let located: Vec<usize> = result.culprits.iter().filter(|c| c.located).map(|c| c.commit).collect();
                let job = format!("{size} sigma, {noise:?}, seed {seed}: named {located:?}");
                let mut distinct = located.clone();
                distinct.sort();
                distinct.dedup();
                assert_eq!(distinct.len(), located.len(), "{job}");
                assert!(located.iter().all(|c| [6, 9].contains(c)), "{job}");
                both += usize::from(distinct == [6, 9]);
                jobs += 1;
            }
        }
    }
    assert!(both >= 228, "both named in {both} of {jobs}");
}

#[test]
fn the_builds_beside_a_candidate_are_on_its_own_line_and_hold_the_same_blamed_commits() {
    // Commit 1 on the mainline is blamed already; topic t (3, 4) forked from good and lacks it, and its merge (5)
    // is the parent of the candidate 6. The commits numbered just below the merge are t's tips, at good's level:
    // checked against them, a second patch after a merge failed replication in 18 of 200 simulated series.
    let dag = vec![vec![], vec![0], vec![1], vec![0], vec![3], vec![2, 4], vec![5], vec![6], vec![7]];
    let top = Segment { lo: 0, hi: 8, top: true };
    let blame = |commit: usize| move |m: &mut Bisect| {
        m.culprits.push(Culprit { confidence: 1.0, step: 1.0, ..Culprit::unmeasured(commit, commit - 1) })
    };
    let (blamed_first, blamed_after) = (blame(1), blame(7));
    let nothing = |_: &mut Bisect| {};
    // (history, blamed commits, segment, candidate, parent, builds after, builds before)
    type Case<'a> = (Vec<CommitNode>, &'a dyn Fn(&mut Bisect), Segment, usize, usize, Vec<usize>, Vec<usize>);
    let merges = super::sim::Dag::new(dag).nodes;
    let line = CommitNode::linear(10);
    let whole_line = Segment { lo: 0, hi: 9, top: true };
    let cases: Vec<Case> = vec![
        // After the merge: the parent's own line (its first parents), not t's tips 4 and 3.
        (merges.clone(), &blamed_first, top, 6, 5, vec![7, 8], vec![2, 1]),
        (merges, &nothing, top, 6, 5, vec![7, 8], vec![2, 1]),
        // In a line: the two after the candidate and the two before its parent, the segment's start included.
        (line.clone(), &nothing, whole_line, 6, 5, vec![7, 8], vec![4, 3]),
        (line.clone(), &nothing, whole_line, 2, 1, vec![3, 4], vec![0]),
        // A blamed commit just after the candidate moves the builds after it to another level: not beside it.
        (line, &blamed_after, whole_line, 5, 4, vec![6], vec![3, 2]),
    ];
    for (nodes, blame, segment, commit, parent, after, before) in cases {
        let mut m = machine_over(&nodes);
        blame(&mut m);
        let got = m.replicating_neighbours(segment, commit, parent);
        assert_eq!(got, (after, before), "candidate {commit} against {parent} in ({}, {}]", segment.lo, segment.hi);
    }
}

#[test]
fn a_series_after_merges_is_checked_against_builds_that_share_its_levels() {
    // Two 3 sigma steps among 30 merges in 100 commits. When the second step's candidate had a merge for parent,
    // the replication check read "the builds before its parent" as the commits numbered just below the merge: the
    // tips of the branch it merged, which lack the first step. The candidate's parent sat 5 standard errors above
    // them, so the second step was not blamed and ended as a range: 8 of these 100 jobs did so (4 of the first 60).
    // Now the builds before the parent follow its own line, and neither side holds another blamed commit.
    use super::sim::SimConfig;
    let config = SimConfig { commits: 100, topics: 30, steps: vec![3.0, 3.0], trials: 60, ..SimConfig::default() };
    let (right, wrong_blame) = named_right(&config);
    assert!(wrong_blame.is_empty(), "a commit that is not a step was blamed: {wrong_blame:?}");
    assert!(right >= 59, "both steps named in {right} of {}", config.trials);
}

#[test]
fn a_credible_window_grows_towards_the_more_probable_side_until_it_holds_its_share() {
    let ln = |p: f64| if p > 0.0 { p.ln() } else { f64::NEG_INFINITY };
    let masses: Vec<f64> = [0.0, 0.1, 0.6, 0.25, 0.05].map(ln).to_vec();
    // (centre, allowed, level, window): from 0.6 the right neighbour (0.25) comes first, then the left (0.1).
    let cases = [
        (2, 1..=4, 0.5, (2, 2, 0.6)),
        (2, 1..=4, 0.8, (2, 3, 0.85)),
        (2, 1..=4, 0.9, (1, 3, 0.95)),
        (2, 1..=4, 0.99, (1, 4, 1.0)),
        // The window stays within what is allowed, and its level is of the mass allowed: 0.6 of 0.7 is 86%.
        (2, 1..=2, 0.9, (1, 2, 1.0)),
        (2, 1..=2, 0.8, (2, 2, 0.6 / 0.7)),
        // A centre outside what is allowed, or no mass at all, leaves the centre alone, holding nothing.
        (4, 1..=3, 0.9, (4, 4, 0.0)),
    ];
    for (centre, allowed, level, (first, last, held)) in cases {
        let (a, b, h) = credible_window(&masses, centre, allowed.clone(), level);
        assert_eq!((a, b), (first, last), "{centre} {allowed:?} {level}");
        assert!((h - held).abs() < 1e-12, "{centre} {allowed:?} {level}: holds {h}, not {held}");
    }
    assert_eq!(credible_window(&[f64::NEG_INFINITY; 4], 1, 1..=3, 0.9), (1, 1, 0.0));
}

#[test]
fn a_series_reported_as_ranges_has_its_steps_inside_them() {
    // Two 1 sigma steps in 100 commits, settled as a staircase and reported as two ranges (too small to narrow).
    // The most probable two-change fit's own ranges, between the tested commits it put next to the middle level,
    // held no step at all in 17 of the 72 ranges of these 60 jobs (59 of 239 on 200): a commit just past a step,
    // measured a few times, read as the level before it (trial 9: steps at 17 and 87, ranges (19, 25] and (87,
    // 100]). The ranges that hold 90% of the probability the two-change fits give each change miss in 6.
    use super::sim::{trial, Noise, SimConfig};
    let config = SimConfig { commits: 100, steps: vec![1.0, 1.0], seed: 7, trials: 60, ..SimConfig::default() };
    let (mut ranges, mut empty) = (0, Vec::new());
    for t in 0..config.trials as u64 {
        let (history, noise_seed, _) = trial(&config, t);
        let result = simulate(&history, Noise::Gaussian, noise_seed);
        for c in result.culprits.iter().filter(|c| !c.located) {
            // A staircase's range says how probably it holds its change; other ranges (a budget's end) say nothing.
            assert!(c.confidence == 0.0 || (RANGE_MASS..=1.0).contains(&c.confidence), "{c:?}");
            ranges += 1;
            if !history.steps.iter().any(|s| c.after < s.0 && s.0 <= c.commit) {
                empty.push((t, c.after, c.commit));
            }
        }
    }
    assert!(ranges >= 40, "{ranges} ranges");
    assert!(empty.len() * 8 <= ranges, "{} of {ranges} ranges hold no step: {empty:?}", empty.len());
}

/// Drives a machine over a linear history of `count` commits whose metric is exactly `before` up to `step - 1` and
/// exactly `after` from `step` on, with no noise at all (a captured count, a size, an instruction count).
fn bisect_noiseless(count: usize, step: usize, before: f64, after: f64) -> Outcome {
    bisect_noiseless_towards(Direction::HigherIsWorse, count, step, before, after)
}

/// As [`bisect_noiseless`], searching for a change in `direction`.
fn bisect_noiseless_towards(direction: Direction, count: usize, step: usize, before: f64, after: f64) -> Outcome {
    let config = BisectConfig { direction, ..BisectConfig::default() };
    let mut m = match Bisect::new(config, &CommitNode::linear(count)) {
        Ok(m) => m,
        Err(e) => panic!("setup: {e}"),
    };
    for _ in 0..2_000 {
        match m.next_action() {
            Action::Done(outcome) => return outcome,
            Action::RunBatch(batch) => {
                for (commit, runs) in batch {
                    for _ in 0..runs {
                        let value = if commit >= step { after } else { before };
                        if let Err(e) = m.record(commit, Sample::Value(value)) {
                            panic!("record: {e}");
                        }
                    }
                }
            }
        }
    }
    panic!("no outcome after 2,000 batches");
}

#[test]
fn qa_29_a_metric_without_noise_is_bisected_to_its_step() {
    // QA of session 29: a captured count of 100 before the slowdown and 130 after panicked while the share was
    // measured (a NaN bound), and a hash of about 1.3e19 against 1.8e19 gave up after good and bad ("no testable
    // commit left to measure"), since with no noise every measurement's information read as zero.
    for (count, step, before, after) in
        [(24, 15, 100.0, 130.0), (24, 15, 1.3496e19, 1.8076e19), (1000, 371, 4.0, 5.0), (10, 1, 0.0, 1.0)]
    {
        let outcome = bisect_noiseless(count, step, before, after);
        let named: Vec<usize> = outcome.culprits.iter().filter(|c| c.located).map(|c| c.commit).collect();
        assert_eq!(
            (outcome.status, named.as_slice()),
            (Status::Found, [step].as_slice()),
            "{count} commits, step at {step}, {before} to {after}: {:#?}",
            outcome.log.iter().rev().take(5).collect::<Vec<_>>()
        );
        let share = outcome.culprits[0].share;
        assert!((share - 1.0).abs() < 1e-6, "share {share}");
        assert!(outcome.runs < 200, "{} runs", outcome.runs);
    }
}

#[test]
fn qa_29_an_improvement_ends_at_once_and_says_so() {
    // QA of session 29: a real 25% speed-up between good and bad spent the whole reproduce budget (120 runs) and
    // then said good and bad do not differ.
    for (before, after) in [(5.0, 4.0), (100.0, 75.0)] {
        let outcome = bisect_noiseless(1000, 371, before, after);
        assert_eq!(outcome.status, Status::NotReproduced, "{:#?}", outcome.log);
        assert!(outcome.improved && outcome.culprits.is_empty(), "{outcome:#?}");
        assert!(outcome.runs <= 16, "{} runs", outcome.runs);
        // The engine knows only the direction it searched, so its words say the change went the other way; the views
        // say "improvement" from the session's direction.
        assert!(outcome.reason.contains("bad differs from good the other way"), "{}", outcome.reason);
        assert!(!outcome.reason.contains("better") && !outcome.reason.contains("regression"), "{}", outcome.reason);
        // In the metric's units and sign, as the evidence table's means read (QA pass 9: the oriented difference).
        let said = format!("bad minus good {:.4} ± ", after - before);
        assert!(outcome.reason.contains(&said), "{said}: {}", outcome.reason);
        // A metric where lower is worse (ops/s) that rose: bad minus good is positive, though the engine's oriented
        // difference is negative.
        let rose = bisect_noiseless_towards(Direction::LowerIsWorse, 1000, 371, after, before);
        assert!(rose.improved, "{rose:#?}");
        let said = format!("bad minus good {:.4} ± ", before - after);
        assert!(rose.reason.contains(&said), "{said}: {}", rose.reason);
    }
    // Noisy too: a 3 sigma improvement.
    let history = sim::History { commits: 200, steps: vec![(50, -3.0)], untestable: vec![false; 201], dag: None };
    let result = simulate(&history, sim::Noise::Gaussian, 3);
    assert_eq!(result.status, Status::NotReproduced);
    assert!(result.runs <= 40, "{} runs", result.runs);
}

#[test]
fn an_improvement_is_bisected_when_the_direction_searched_is_flipped() {
    // `culprit bisect --improvement` flips the metric's direction: for a time, lower is then the change searched
    // for, and the speed-up that a regression's bisect ends on at once is located like a slowdown.
    let speed_up = |c: usize| if c >= 37 { 4.0 } else { 5.0 };
    let flipped = BisectConfig { direction: Direction::LowerIsWorse, ..BisectConfig::default() };
    let outcome = drive(60, flipped.clone(), speed_up);
    let named: Vec<usize> = outcome.culprits.iter().filter(|c| c.located).map(|c| c.commit).collect();
    assert_eq!((outcome.status, named.as_slice()), (Status::Found, [37].as_slice()), "{:#?}", outcome.log);
    assert!(!outcome.improved, "{outcome:#?}");
    // The same history searched as a regression ends on the opposite change, blaming nothing.
    let outcome = drive(60, BisectConfig::default(), speed_up);
    assert!(outcome.status == Status::NotReproduced && outcome.improved, "{outcome:#?}");
    // And a slowdown searched as an improvement is the opposite change too.
    let outcome = drive(60, flipped, |c| if c >= 37 { 5.0 } else { 4.0 });
    assert!(outcome.status == Status::NotReproduced && outcome.improved, "{outcome:#?}");
}

/// Drives a machine of `count` commits with `config` to its outcome, every run of commit c reading `level(c)` plus a
/// small fixed spread (deterministic, so that the test states exactly what it checks).
fn drive(count: usize, config: BisectConfig, level: impl Fn(usize) -> f64) -> Outcome {
    match Bisect::new(config, &CommitNode::linear(count)) {
        Ok(m) => drive_on(m, level),
        Err(e) => panic!("setup: {e}"),
    }
}

/// [`drive`] from a machine already set up (with seeded runs and a phase of the test's choosing, say).
fn drive_on(mut m: Bisect, level: impl Fn(usize) -> f64) -> Outcome {
    for i in 0..10_000 {
        match m.next_action() {
            Action::Done(outcome) => return outcome,
            Action::RunBatch(batch) => {
                let commit = batch[i % batch.len()].0;
                let spread = 0.02 * ((i % 5) as f64 - 2.0);
                if m.record(commit, Sample::Value(level(commit) + spread)).is_err() {
                    panic!("record");
                }
            }
        }
    }
    panic!("no outcome: {:?}", m.log());
}

/// A machine of 20 commits whose steps of 0.5 at commits 5 and 15 (good 0.0, bad 1.0) were searched until only
/// commit 15 was confirmed: every segment is settled, and the runs at good and at 15's parent 14, the ends of the
/// stretch (0, 14] outside it, differ by half the change. Each run reads its commit's level and a spread of 0.02
/// at most, as [`drive`]'s do.
fn settled_with_a_stretch_showing_more(max_runs: usize) -> Bisect {
    let mut m = match Bisect::new(BisectConfig { max_runs, ..BisectConfig::default() }, &CommitNode::linear(20)) {
        Ok(m) => m,
        Err(e) => panic!("setup: {e}"),
    };
    let near = |level: f64| (0..12).map(|i| level + 0.02 * ((i % 5) as f64 - 2.0)).collect::<Vec<f64>>();
    seed_values(&mut m, &[(0, &near(0.0)), (14, &near(0.5)), (15, &near(1.0)), (19, &near(1.0))]);
    m.reproduced = Some(true);
    m.total = Some((1.0, 0.01));
    let mut culprit = Culprit::unmeasured(15, 14);
    (culprit.share, culprit.share_low, culprit.share_high, culprit.confidence) = (0.5, 0.45, 0.55, 0.999);
    m.culprits.push(culprit);
    m.phase = Phase::Finished;
    m
}

#[test]
fn qa50_3_a_stretch_whose_runs_show_more_is_searched_before_the_machine_settles() {
    // QA 50: a bisect of three slowdowns ended with "25% (10%..41%) may lie between" two commits, with budget left.
    // With budget left, the stretch is searched like the rest of a change, and the contributor in it is named
    // after fresh pairs against its parent, as every culprit is.
    let level = |c: usize| 0.5 * f64::from(u8::from(c >= 5)) + 0.5 * f64::from(u8::from(c >= 15));
    let mut m = settled_with_a_stretch_showing_more(600);
    let stretches = m.open_stretches(&m.culprits, 1.0, 0.0);
    let showing: Vec<(usize, usize)> = stretches.iter().filter(|t| t.shows_more()).map(|t| (t.after, t.upto)).collect();
    assert_eq!(showing, [(0, 14)], "{stretches:?}");
    m.decide();
    let outcome = drive_on(m, level);
    let named: Vec<usize> = outcome.culprits.iter().filter(|c| c.located).map(|c| c.commit).collect();
    assert_eq!((outcome.status, named.as_slice()), (Status::Multiple, [5, 15].as_slice()), "{:#?}", outcome.log);
    assert!(outcome.log.iter().any(|e| e.decision == "search the open stretch (0, 14]"), "{:#?}", outcome.log);
    assert!(
        outcome.log.iter().any(|e| e.phase == "verify" && e.decision.starts_with("commit 5 confirmed")),
        "{:#?}",
        outcome.log
    );
    assert!(!outcome.open_stretches.iter().any(|t| t.shows_more()), "{:?}", outcome.open_stretches);
    // With the budget spent during its reproduce test, the stretch is said as before: not a culprit or a range, an
    // open stretch whose runs show more.
    let mut m = settled_with_a_stretch_showing_more(4);
    m.decide();
    let outcome = drive_on(m, level);
    let held: Vec<(usize, usize)> = outcome.culprits.iter().map(|c| (c.after, c.commit)).collect();
    assert_eq!((outcome.status, held.as_slice()), (Status::Found, [(14, 15)].as_slice()), "{:#?}", outcome.log);
    let said = stretches_said(outcome.status, &outcome.culprits, &outcome.open_stretches);
    assert!(said.iter().any(|t| (t.after, t.upto) == (0, 14) && t.shows_more()), "{said:?}");
}

#[test]
fn a_budget_spent_while_locating_reports_where_the_runs_place_the_change() {
    // QA: a 24-commit history with --max-runs 10 measured commit 12 at good's level and commit 18 at bad's, one run
    // each, and ended "inconclusive" without a word on where the change lies. It still names no commit (the status
    // stays inconclusive), but reports (12, 18] as a range that holds the change, where the reason says so too.
    let config = BisectConfig { max_runs: 10, ..BisectConfig::default() };
    let outcome = drive(24, config, |c| if c >= 14 { 1.3 } else { 1.0 });
    assert_eq!(outcome.status, Status::Inconclusive, "{:?}", outcome.log);
    let [range] = outcome.culprits.as_slice() else { panic!("one range: {:?}", outcome.culprits) };
    assert!(!range.located && range.after < 14 && range.commit >= 14, "{range:?}");
    assert!(range.commit - range.after < 23, "narrower than the whole range: {range:?}");
    let tested: Vec<usize> = outcome.evidence.iter().map(|e| e.commit).collect();
    assert!(tested.contains(&range.after) && tested.contains(&range.commit), "{tested:?} {range:?}");
    assert!(range.confidence >= 0.99 && range.share_low <= 1.0 && range.share_high >= 1.0, "{range:?}");
    let (after, commit, commits) = (range.after, range.commit, range.commit - range.after);
    let placed = format!(
        "the runs so far place the change in (commit {after}, commit {commit}]: {commits} commits, not narrowed within"
    );
    assert!(outcome.reason.contains(&placed), "{}", outcome.reason);
    assert!(
        outcome.log.iter().any(|e| e.decision == format!("the runs place the change in ({after}, {commit}]")),
        "{:?}",
        outcome.log
    );
}

/// A machine of ten commits locating in the whole range, with good at 0 and bad at 1 (20 runs each) and the given
/// commits' runs seeded.
fn bracketing(values: &[(usize, Vec<f64>)]) -> Bisect {
    let mut m = machine(10);
    m.phase = Phase::Locate { segment: Segment { lo: 0, hi: 9, top: true } };
    m.reproduced = Some(true);
    m.total = Some((1.0, 0.05));
    seed_values(&mut m, &[(0, &around(0.0, 20)), (9, &around(1.0, 20))]);
    for (c, runs) in values {
        seed_values(&mut m, &[(*c, runs)]);
    }
    m
}

#[test]
fn the_bracket_is_the_narrowest_range_whose_ends_sit_at_the_two_levels() {
    let top = Segment { lo: 0, hi: 9, top: true };
    let bracket = |m: &Bisect, refused| m.bracket(top, 0.0, refused).map(|b| (b.after, b.commit));
    // (seeded commits, refused candidate, the range expected)
    type Case = (Vec<(usize, Vec<f64>)>, Option<usize>, Option<(usize, usize)>);
    let cases: Vec<Case> = vec![
        // Commit 3 at good's level, 6 and 7 at bad's: the change lies in (3, 6].
        (vec![(3, around(0.0, 4)), (6, around(1.0, 4)), (7, around(1.0, 4))], None, Some((3, 6))),
        // A single run at each is enough when the levels are far apart in its noise.
        (vec![(3, vec![0.02]), (6, vec![0.98])], None, Some((3, 6))),
        // Commit 5 between the levels, beyond doubt: no range ends at it (each side would hold part of the change),
        // and the one around it holds both parts.
        (vec![(3, around(0.0, 8)), (5, around(0.5, 16)), (7, around(1.0, 8))], None, Some((3, 7))),
        // Commit 5 three times the change above its parent: no level of the model, so no range ends at it.
        (vec![(4, around(0.0, 8)), (5, around(3.0, 8))], None, Some((4, 9))),
        // Only good and bad tested: nothing narrower than the whole range.
        (vec![], None, None),
        // Verification refused commit 5: a range that holds it would name it after all, (4, 5] as much as (0, 5].
        (vec![(4, around(0.0, 8)), (5, around(1.0, 8))], None, Some((4, 5))),
        (vec![(4, around(0.0, 8)), (5, around(1.0, 8))], Some(5), None),
        // One that does not hold it is still reported.
        (vec![(2, around(0.0, 8)), (3, around(1.0, 8)), (5, around(1.0, 8))], Some(5), Some((2, 3))),
    ];
    for (values, refused, want) in cases {
        let m = bracketing(&values);
        assert_eq!(bracket(&m, refused), want, "{values:?}, refused {refused:?}");
    }
}

#[test]
fn a_search_that_gives_up_on_the_whole_range_reports_its_bracket() {
    // Locating gives up with commits 2 and 6 tested: (2, 6] is reported, and the outcome stays inconclusive.
    let mut m = bracketing(&[(2, around(0.0, 4)), (6, around(1.0, 4))]);
    m.segment_unresolved(Segment { lo: 0, hi: 9, top: true }, "no testable commit left to measure", None);
    let outcome = m.outcome.clone().expect("finished");
    assert_eq!(outcome.status, Status::Inconclusive, "{:?}", outcome.log);
    let ranges: Vec<(usize, usize, bool)> = outcome.culprits.iter().map(|c| (c.after, c.commit, c.located)).collect();
    assert_eq!(ranges, vec![(2, 6, false)]);
    assert!(
        outcome
            .reason
            .contains("; the runs so far place the change in (commit 2, commit 6]: 4 commits, not narrowed further"),
        "{}",
        outcome.reason
    );
}

#[test]
fn ranges_reported_at_a_budget_spent_while_locating_hold_the_step() {
    // Simulated jobs of one 1.5 sigma step in 100 commits whose budget (40 runs) ends most of them inconclusive,
    // while locating: a third of those or more report a range, and every range holds the step (docs/statistics.md).
    let config = BisectConfig { max_runs: 40, ..BisectConfig::default() };
    let (mut inconclusive, mut ranges) = (0, 0);
    for trial in 0..60u64 {
        let mut rng = crate::rng::Rng::new(trial * 7 + 1);
        let history = sim::History::generate(100, &[1.5], 0.0, &mut rng);
        let mut oracle = sim::Oracle::new(&history, sim::Noise::Gaussian, trial + 99);
        let result = sim::run_culprit(&history, &mut oracle, &config);
        if result.status != Status::Inconclusive {
            continue;
        }
        inconclusive += 1;
        assert!(result.contributors <= 1, "a range is the only contributor: {:?}", result.culprits);
        for c in &result.culprits {
            ranges += 1;
            assert!(
                !c.located && history.steps.iter().all(|&(s, _)| c.after < s && s <= c.commit),
                "{c:?} {history:?}"
            );
        }
    }
    assert!(ranges * 3 >= inconclusive, "{ranges} ranges of {inconclusive} inconclusive jobs");
}

#[test]
fn the_shares_of_several_culprits_are_read_on_one_set_of_levels() {
    // Commits 0 to 12 of a line, 10 runs each: commits 0-3 at the good level, 4-7 a step above, 8-12 a second step
    // above that; culprits 4 (after 3) and 8 (after 7) come with shares of 0.6 each, as the fresh pairs that
    // confirmed them read them (they stop once a step shows, so they read it high). The outcome reads both on the
    // three levels of every run: they add to one. Where good's own runs sit off the level of the commits after it,
    // the ends measure another change than the levels, and the outcome divides by the ends' change and says so.
    // (levels of the three stretches, good's offset from its stretch, expected shares or None when the ends
    // disagree)
    type Case = ([f64; 3], f64, Option<(f64, f64)>);
    let cases: Vec<Case> = vec![
        ([0.0, 1.0, 2.0], 0.0, Some((0.5, 0.5))),
        ([0.0, 1.0, 4.0], 0.0, Some((0.25, 0.75))),
        ([10.0, 10.5, 12.0], 0.0, Some((0.25, 0.75))),
        ([0.0, 1.0, 2.0], -1.0, None),
    ];
    for (levels, good_offset, expected) in cases {
        let mut m = machine(13);
        for commit in 0..13 {
            let stretch = usize::from(commit >= 4) + usize::from(commit >= 8);
            let offset = if commit == 0 { good_offset } else { 0.0 };
            seed_levels(&mut m, &[(commit, levels[stretch] + offset)], 10);
        }
        for (commit, after) in [(4, 3), (8, 7)] {
            let paired = Culprit { share: 0.6, share_low: 0.45, share_high: 0.75, ..Culprit::unmeasured(commit, 0) };
            m.culprits.push(Culprit { after, confidence: 1.0, step: 0.6, ..paired });
        }
        m.finish("every segment is settled".into());
        let Some(outcome) = m.outcome.clone() else { panic!("no outcome") };
        assert_eq!(outcome.status, Status::Multiple);
        let shares: Vec<f64> = outcome.culprits.iter().map(|c| c.share).collect();
        let sum: f64 = shares.iter().sum();
        match expected {
            Some((first, second)) => {
                let off = (shares[0] - first).abs().max((shares[1] - second).abs());
                assert!(off < 1e-6, "{levels:?}: {shares:?}");
                for (c, truth) in outcome.culprits.iter().zip([first, second]) {
                    assert!(c.share_low < truth && truth < c.share_high, "{levels:?}: {c:?}");
                }
                assert!(!outcome.reason.contains("add to"), "{}", outcome.reason);
            }
            None => {
                // The levels say 1.25 and 1 of a change the ends measure at 3.
                assert!(sum < 0.9, "{levels:?} with good off by {good_offset}: {shares:?}");
                assert!(outcome.reason.contains("add to 75%"), "{}", outcome.reason);
            }
        }
    }
}

#[test]
fn the_shares_of_culprits_on_two_branches_are_left_as_measured() {
    // Commit 1 on the first parent's line and commit 2 on a branch, merged by commit 3 (bad): each commit holds one
    // culprit without the other, so no one line of levels orders them, and their shares stay as verification
    // measured them.
    let nodes: Vec<CommitNode> = [vec![], vec![0], vec![0], vec![1, 2]]
        .into_iter()
        .map(|parents| CommitNode { parents, untestable: false })
        .collect();
    let mut m = machine_over(&nodes);
    seed_levels(&mut m, &[(0, 0.0), (1, 1.0), (2, 1.0), (3, 2.0)], 10);
    for commit in [1, 2] {
        let paired = Culprit { share: 0.6, share_low: 0.45, share_high: 0.75, ..Culprit::unmeasured(commit, 0) };
        m.culprits.push(Culprit { confidence: 1.0, step: 0.6, ..paired });
    }
    assert!(m.joint_shares(&m.culprits).is_none());
    m.finish("every segment is settled".into());
    let Some(outcome) = m.outcome.clone() else { panic!("no outcome") };
    assert!(outcome.culprits.iter().all(|c| c.share == 0.6), "{:?}", outcome.culprits);
}

#[test]
fn two_culprits_of_half_the_change_each_do_not_add_to_more_than_the_whole() {
    // Seed 004's series: two commits, each half of the slowdown (2 sigma steps at commits 30 and 70 of 100). Each
    // culprit's share was its fresh pairs' step over good-to-bad; the pairs stop as soon as the step shows, so they
    // read it about 14% high, and the shares of a job added to 1.13 on average, more than 1.1 in half the jobs (a
    // real QA run reported 57% and 57%). Read on one set of levels, they add to one, and their 90% intervals still
    // hold the true share of one half.
    use super::sim::{History, Noise};
    let history = History { commits: 100, steps: vec![(30, 2.0), (70, 2.0)], untestable: vec![false; 101], dag: None };
    let (mut jobs, mut sums, mut above, mut intervals, mut held) = (0, 0.0, 0, 0, 0);
    for seed in 0..24 {
        let result = simulate(&history, Noise::Gaussian, 4000 + seed);
        if result.named != [30, 70] {
            continue;
        }
        let sum: f64 = result.culprits.iter().map(|c| c.share).sum();
        (jobs, sums) = (jobs + 1, sums + sum);
        above += usize::from(sum > 1.1);
        for c in &result.culprits {
            intervals += 1;
            held += usize::from(c.share_low < 0.5 && 0.5 < c.share_high);
        }
    }
    assert!(jobs >= 20, "{jobs} of 24 jobs named both commits");
    let mean = sums / jobs as f64;
    assert!((mean - 1.0).abs() < 0.03 && above <= 1, "shares add to {mean:.3} on average, more than 1.1 in {above}");
    assert!(held * 10 >= intervals * 8, "{held} of {intervals} intervals hold the true share");
}

#[test]
fn the_step_reported_for_a_culprit_is_read_on_every_run_not_on_its_fresh_pairs() {
    // The step `--json` reports for a culprit was the one its fresh pairs measured; they stop as soon as the step
    // shows, so they read it high: one 1.5 sigma step in 1,000 simulated commits was reported 1.17 times its size on
    // average, two 2 sigma steps 1.14 times. A lone culprit's step is now the whole range's levels, several
    // culprits' the differences of the levels their shares are read on.
    use super::sim::{History, Noise};
    let ratio_over = |steps: Vec<(usize, f64)>, seeds: std::ops::Range<u64>| {
        let history = History { commits: 200, steps: steps.clone(), untestable: vec![false; 201], dag: None };
        let (mut measured, mut truth) = (0.0, 0.0);
        for seed in seeds {
            let result = simulate(&history, Noise::Gaussian, seed);
            for c in result.culprits.iter().filter(|c| c.located) {
                if let Some(&(_, size)) = steps.iter().find(|s| s.0 == c.commit) {
                    (measured, truth) = (measured + c.step, truth + size);
                }
            }
        }
        assert!(truth > 0.0, "no culprit named");
        measured / truth
    };
    let lone = ratio_over(vec![(77, 1.5)], 6100..6140);
    assert!((lone - 1.0).abs() < 0.05, "a lone 1.5 sigma step reported {lone:.3} times its size");
    let two = ratio_over(vec![(60, 2.0), (140, 2.0)], 6200..6224);
    assert!((two - 1.0).abs() < 0.08, "two 2 sigma steps reported {two:.3} times their size");
}

#[test]
fn a_confirmed_culprit_records_where_the_verification_that_confirmed_it_began() {
    // The report shows the fresh interleaved runs of a culprit and its parent as a table of their own, read from the
    // session's runs at or after `fresh_from`. It must be the start of the verification that confirmed the commit,
    // not of an earlier one that went back to locating: each Verify phase is watched as the machine enters it, and
    // under bursts of load some jobs verify a commit more than once.
    use super::sim::{History, Noise, Oracle};
    let history = History { commits: 60, steps: vec![(23, 1.5)], untestable: vec![false; 61], dag: None };
    let (mut confirmed, mut reverified) = (0, 0);
    for (seed, noise) in (1..=6).flat_map(|s| [(s, Noise::Gaussian), (s, Noise::Bursts)]) {
        let mut oracle = Oracle::new(&history, noise, seed);
        let Ok(mut m) = Bisect::new(BisectConfig::default(), &history.nodes()) else { panic!("setup") };
        let mut runs: Vec<(usize, usize)> = Vec::new();
        let mut verifications: Vec<(usize, usize)> = Vec::new();
        while let Action::RunBatch(batch) = m.next_action() {
            if let Phase::Verify { commit, start_records, .. } = m.phase {
                if verifications.last() != Some(&(commit, start_records)) {
                    verifications.push((commit, start_records));
                }
            }
            let commit = next_in_batch(&batch).expect("a batch while not done");
            let value = oracle.run(commit).expect("every commit builds");
            runs.push((m.records, commit));
            m.record(commit, Sample::Value(value)).expect("a commit of the range");
        }
        let outcome = m.outcome().expect("a finished bisect").clone();
        for culprit in outcome.culprits.iter().filter(|c| c.located) {
            let Some(start) = culprit.fresh_from else {
                panic!("seed {seed} {noise:?}: {culprit:?} has no fresh_from")
            };
            let last = verifications.iter().rev().find(|(c, _)| *c == culprit.commit).map(|&(_, s)| s);
            assert_eq!(Some(start), last, "seed {seed} {noise:?}: verifications {verifications:?}");
            let fresh = |c: usize| runs.iter().filter(|&&(i, r)| r == c && i >= start).count();
            let want = BisectConfig::default().min_fresh_pairs;
            assert!(
                fresh(culprit.commit) >= want && fresh(culprit.after) >= want,
                "seed {seed} {noise:?}: {} and {} fresh runs from record {start}",
                fresh(culprit.commit),
                fresh(culprit.after)
            );
            confirmed += 1;
            reverified += usize::from(verifications.iter().filter(|(c, _)| *c == culprit.commit).count() > 1);
        }
        assert!(outcome.culprits.iter().filter(|c| !c.located).all(|c| c.fresh_from.is_none()));
    }
    assert!(confirmed >= 10, "most of the 12 jobs confirm the step; {confirmed} did");
    assert!(reverified >= 1, "some job (seeds 1 and 3 under bursts) verifies its culprit twice");
}

#[test]
fn a_located_culprits_candidates_are_its_untestable_suspects_and_itself_oldest_first() {
    let mut culprit = Culprit::unmeasured(7, 3);
    culprit.untestable_suspects = vec![6, 4];
    assert_eq!(culprit.candidates(), vec![(4, true), (6, true), (7, false)]);
    culprit.untestable_suspects.clear();
    assert_eq!(culprit.candidates(), vec![(7, false)]);
    let range = Culprit::unlocated_range(3, 7, (1.0, 0.9, 1.1), 0.0, 1.0);
    assert!(range.candidates().is_empty(), "a range not narrowed has no candidates one by one");
}

/// Fresh pairs of `commit` and `parent` that showed no step (QA 50 #1: 21 pairs of 0.0014 ± 0.0065).
fn unconfirmed(parent: usize, commit: usize) -> outcome::UnconfirmedPairs {
    outcome::UnconfirmedPairs { parent, commit, step: 0.0014, se: 0.0065, pairs: 21 }
}

/// Two fresh pairs of `commit` and `parent`, too few to say much either way.
fn two_pairs(parent: usize, commit: usize) -> outcome::UnconfirmedPairs {
    outcome::UnconfirmedPairs { parent, commit, step: 0.2, se: 0.7, pairs: 2 }
}

#[test]
fn qa50_1_a_range_fresh_pairs_did_not_confirm_is_not_placed() {
    let top = Segment { lo: 0, hi: 9, top: true };
    // (seeded commits, unconfirmed pairs, the range expected)
    type Case = (Vec<(usize, Vec<f64>)>, Vec<outcome::UnconfirmedPairs>, Option<(usize, usize)>);
    let (at_4_and_5, at_3_4_5) = (
        vec![(4, around(0.0, 8)), (5, around(1.0, 8))],
        vec![(3, around(0.0, 8)), (4, around(0.0, 8)), (5, around(1.0, 8))],
    );
    let cases: Vec<Case> = vec![
        // The runs from locating put the change in (4, 5]; with no pairs against it, that is the range.
        (at_4_and_5.clone(), vec![], Some((4, 5))),
        // Fresh pairs of 4 and 5 showed no step: the range is not placed, and no other is sought.
        (at_4_and_5.clone(), vec![unconfirmed(4, 5)], None),
        // Pairs across a wider span (3 to 5) measure the range's change too.
        (at_3_4_5.clone(), vec![unconfirmed(3, 5)], None),
        // Two pairs far from the range's change in their own noise do not refute it.
        (at_4_and_5.clone(), vec![two_pairs(4, 5)], Some((4, 5))),
        // Pairs of another commit, or of a part of the range's start, say nothing of this range.
        (vec![(4, around(0.0, 8)), (5, around(1.0, 8)), (7, around(1.0, 8))], vec![unconfirmed(6, 7)], Some((4, 5))),
        (at_3_4_5, vec![unconfirmed(3, 4)], Some((4, 5))),
    ];
    for (values, refuted, want) in cases {
        let mut m = bracketing(&values);
        m.unconfirmed = refuted.clone();
        assert_eq!(m.bracket(top, 0.0, None).map(|b| (b.after, b.commit)), want, "{values:?}, {refuted:?}");
    }
}

#[test]
fn qa50_1_a_budget_spent_on_a_refuted_range_names_no_range_and_says_why() {
    let mut m = bracketing(&[(4, around(0.0, 8)), (5, around(1.0, 8))]);
    m.unconfirmed = vec![unconfirmed(4, 5)];
    m.config.max_runs = m.runs;
    let placed = m.report_unsettled_parts().unwrap_or_default();
    m.finish(format!("the budget is spent{placed}"));
    let outcome = m.outcome.clone().expect("finished");
    assert_eq!(outcome.status, Status::Inconclusive, "{:?}", outcome.log);
    assert!(outcome.culprits.is_empty(), "{:?}", outcome.culprits);
    assert!(
        outcome.reason.contains("the runs from locating place the change in (commit 4, commit 5]")
            && outcome.reason.contains("21 fresh interleaved pairs of commit 4 and commit 5 show no step there"),
        "{}",
        outcome.reason
    );
}

#[test]
fn qa50_1_a_verification_keeps_its_pairs_only_when_they_did_not_show_the_step() {
    // (paired differences of commit 5 less commit 4, kept as unconfirmed)
    let cases: Vec<(Vec<f64>, bool)> = vec![
        // Pairs about zero: no step, kept.
        (vec![0.1, -0.1, 0.05, -0.05, 0.0, 0.1, -0.1, 0.0], true),
        // Pairs a whole level apart: the step shows, not kept.
        (vec![1.0, 1.1, 0.9, 1.05, 0.95, 1.0, 1.1, 0.9], false),
        // The step the other way is no step of the regression: kept.
        (vec![-1.0, -1.1, -0.9, -1.05, -0.95, -1.0, -1.1, -0.9], true),
    ];
    for (differences, kept) in cases {
        let mut m = bracketing(&[(4, around(0.0, 8)), (5, around(1.0, 8))]);
        let start = m.records;
        // Interleaved: parent, commit, parent, commit, ...
        for d in &differences {
            seed_values(&mut m, &[(4, &[0.0]), (5, &[*d])]);
        }
        let segment = Segment { lo: 0, hi: 9, top: true };
        m.keep_unconfirmed(segment, 5, 4, start, 0.0, 1.0);
        let got: Vec<(usize, usize, usize)> = m.unconfirmed.iter().map(|u| (u.parent, u.commit, u.pairs)).collect();
        let want = if kept { vec![(4, 5, differences.len())] } else { vec![] };
        assert_eq!(got, want, "{differences:?}");
    }
}

#[test]
fn ci_51_four_rising_runs_a_side_are_no_drift_and_the_budget_still_places_the_change() {
    // CI, session 51: a 10-run bisect of 24 commits (the slowdown at 14, 11 not building) whose four interleaved runs
    // at good and at bad each happened to rise in run order. The drift model took that for a slope (3 standard
    // errors of a fit with 5 degrees of freedom, about 3% by chance), extrapolated commit 12's single run far below
    // good's level and commit 17's far above bad's, and the outcome placed the change nowhere although 12 read at
    // good's level and 17 at bad's. The values are CI's.
    let mut m = match Bisect::new(BisectConfig { max_runs: 10, ..BisectConfig::default() }, &CommitNode::linear(24)) {
        Ok(m) => m,
        Err(e) => panic!("setup: {e}"),
    };
    let mut queued: Vec<std::collections::VecDeque<f64>> = vec![Default::default(); 24];
    queued[0] = [0.0412, 0.0432, 0.0448, 0.0474].into();
    queued[23] = [0.0805, 0.0835, 0.0862, 0.0891].into();
    queued[12] = [0.041538].into();
    queued[17] = [0.086901].into();
    let outcome = loop {
        match m.next_action() {
            Action::Done(outcome) => break outcome,
            Action::RunBatch(batch) => {
                let Some(commit) = next_in_batch(&batch) else { panic!("empty batch: {:?}", m.log()) };
                let level = if commit < 14 { 0.0441 } else { 0.0848 };
                let sample = match commit {
                    11 => Sample::Untestable,
                    _ => Sample::Value(queued[commit].pop_front().unwrap_or(level)),
                };
                if m.record(commit, sample).is_err() {
                    panic!("record");
                }
            }
        }
    };
    let range: Vec<(usize, usize)> =
        outcome.culprits.iter().filter(|c| !c.located).map(|c| (c.after, c.commit)).collect();
    assert!(matches!(range.as_slice(), [(after, commit)] if *after < 14 && 14 <= *commit), "{outcome:#?}");
}



/// A series of two steps in 24 commits (good 0.0444, 0.0576 from commit 7, 0.0710 from 16: the e2e test's levels),
/// runs 2% apart, commit 11 untestable, and the machine `burst` times slower for 25 runs from run `start`.
fn series_with_a_burst(seed: u64, start: usize, burst: f64) -> Outcome {
    let mut rng = crate::rng::Rng::new(seed);
    let mut m = machine(24);
    loop {
        match m.next_action() {
            Action::Done(outcome) => return outcome,
            Action::RunBatch(batch) => {
                let Some(c) = next_in_batch(&batch) else { panic!("empty batch") };
                let mut level = if c < 7 { 0.0444 } else if c < 16 { 0.0576 } else { 0.0710 };
                if (start..start + 25).contains(&m.records) {
                    level *= burst;
                }
                let value = level * (1.0 + 0.02 * rng.normal());
                let sample = if c == 11 { Sample::Untestable } else { Sample::Value(value) };
                if m.record(c, sample).is_err() {
                    panic!("record");
                }
            }
        }
    }
}

/// The contributors an outcome names, as (located, after, commit).
fn contributors(outcome: &Outcome) -> Vec<(bool, usize, usize)> {
    outcome.culprits.iter().map(|c| (c.located, c.after, c.commit)).collect()
}

#[test]
fn a_burst_over_a_replications_rounds_does_not_unblame_a_clear_step() {
    // The machine 18% slower (or faster) for 25 runs from run 60, while the first culprit's step was being
    // replicated on the builds beside it. The neighbours, measured only then, absorbed the burst into their levels;
    // the candidate and its parent, measured before, did not, and the load model corrected only them: "commit 7 not
    // blamed: the step does not hold across builds" (15 standard errors off), and the first step was reported as
    // the range (0, 12]. Replication now compares the six builds again in rounds of their own before refusing.
    for (seed, burst) in (0..10u64).flat_map(|seed| [(seed, 1.18), (seed, 0.82)]) {
        let outcome = series_with_a_burst(seed, 60, burst);
        assert_eq!(contributors(&outcome), [(true, 6, 7), (true, 15, 16)], "seed {seed}, {burst}: {:#?}", outcome.log);
    }
}

#[test]
fn a_narrowed_range_whose_fresh_runs_show_no_step_is_not_a_contributor() {
    // The machine 18% faster for 25 runs while a staircase was placed: its range (12, 14] was narrowed, and the
    // fresh interleaved runs at 12 and 14 found no further contributor (0.0007 ± 0.0012), but the range was still
    // reported as a third contributor, since all the runs at its ends, the burst's among them, showed a change.
    for (seed, start) in [(12, 75), (30, 45), (35, 45)] {
        let outcome = series_with_a_burst(seed, start, 0.82);
        assert_eq!(contributors(&outcome), [(true, 6, 7), (true, 15, 16)], "seed {seed}: {:#?}", outcome.log);
    }
}

#[test]
fn qa59_a_verification_whose_posterior_spread_out_goes_back_to_locating() {
    // Good 0 and bad 9 apart by 0.4 in runs that scatter by 0.5 a side (QA 59: a step the size of the noise on a
    // loaded machine), every commit between measured a little: the posterior is spread over the range. Commit 7 is
    // still the most probable, but its fresh pairs against 6 show no step, and its mass is far below what sends a
    // commit to verification. QA 59's went on for 54 pairs; now locating decides where to run next.
    let mut m = machine(10);
    m.config.replicate_below_p = 0.0;
    let segment = Segment { lo: 0, hi: 9, top: true };
    // Runs that scatter by 0.5 a side of their level, in a fixed pattern.
    let wide = |level: f64, n: usize, from: usize| -> Vec<f64> {
        (from..from + n).map(|i| level + 0.25 * ((i % 5) as f64 - 2.0)).collect()
    };
    seed_values(&mut m, &[(0, &wide(0.0, 12, 0)), (9, &wide(0.4, 12, 2))]);
    for commit in 1..=8 {
        let level = match commit {
            6 => 0.2,
            7 => 0.55,
            8 => 0.4,
            _ => 0.25,
        };
        seed_values(&mut m, &[(commit, &wide(level, 2, commit))]);
    }
    let start = m.records;
    for k in 0..6 {
        seed_values(&mut m, &[(6, &wide(0.2, 1, k)), (7, &wide(0.2, 1, k))]);
    }
    m.phase = Phase::Verify { segment, commit: 7, parent: 6, start_records: start };
    let posterior = m.posterior(0, 9, 0.0).expect("a posterior");
    let (best, mass) = posterior.best_class().expect("a best class");
    assert_eq!(best, 7, "the test's premise: commit 7 is still the most probable");
    assert!(mass < 0.3, "the test's premise: {mass} is below half of the 0.6 that sends a commit to verification");
    assert!(!m.verify(segment, 7, 6, start, 0.0), "asks for no more pairs");
    assert!(matches!(m.phase, Phase::Locate { .. }), "{:?}", m.phase);
    let last = m.log.last().expect("a log entry");
    assert!(last.reason.contains("below 0.30 (half of what sends a commit to verification)"), "{last:?}");
}
