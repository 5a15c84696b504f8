//! Tests of the location refinement of the change-point engine: where each change point is placed (where its
//! location posterior puts the most mass within 5 points) and its credible interval `index_low ..= index_high`.
//! Tables of seeded steps, coverage and placement rates over many seeded series (with and without scattered
//! gross errors), robustness to outliers next to the step, incremental against batch with several runs per
//! point, and property tests of the order invariants.

use culprit_core::changepoint::{analyze, analyze_with_calibration, decide, Analysis, TrackOptions, Tracker};
use culprit_core::rng::Rng;
use proptest::prelude::*;

/// Points of `runs` runs each: `level` + Gaussian noise of `sigma`, with `steps` as (first index after, new level).
fn series(n: usize, runs: usize, level: f64, sigma: f64, steps: &[(usize, f64)], seed: u64) -> Vec<Vec<f64>> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let mean = steps.iter().rfind(|(at, _)| i >= *at).map(|(_, l)| *l).unwrap_or(level);
            (0..runs).map(|_| mean + sigma * rng.normal()).collect()
        })
        .collect()
}

fn decided(a: Analysis) -> Analysis {
    let mut all = vec![(String::new(), a)];
    decide(&mut all, &TrackOptions::default());
    all.remove(0).1
}

/// The interval is ordered around the estimate, and its "last before" end is the point before its low end.
fn assert_interval_shape(a: &Analysis, what: &str) {
    for cp in &a.change_points {
        assert!(cp.index_low <= cp.index && cp.index <= cp.index_high, "{what}: {cp:?}");
        assert!(cp.before_index_low < cp.index_low && cp.before_index <= cp.index_high, "{what}: {cp:?}");
    }
}

#[test]
fn table_of_single_steps() {
    struct Case {
        name: &'static str,
        points: Vec<Vec<f64>>,
        truth: usize,
        /// Widest acceptable interval, in points.
        widest: usize,
    }
    let cases = vec![
        Case {
            name: "3 sigma, one run",
            points: series(400, 1, 100.0, 1.0, &[(200, 103.0)], 31),
            truth: 200,
            widest: 4,
        },
        Case {
            name: "2 sigma, one run",
            points: series(400, 1, 100.0, 1.0, &[(170, 98.0)], 32),
            truth: 170,
            widest: 12,
        },
        Case {
            name: "1.5 sigma, one run",
            points: series(400, 1, 50.0, 2.0, &[(230, 53.0)], 33),
            truth: 230,
            widest: 25,
        },
        Case {
            name: "1 sigma, five runs",
            points: series(300, 5, 50.0, 1.0, &[(120, 51.0)], 34),
            truth: 120,
            widest: 8,
        },
        Case {
            name: "10 sigma, three runs",
            points: series(60, 3, 10.0, 0.1, &[(25, 11.0)], 35),
            truth: 25,
            widest: 0,
        },
    ];
    for case in cases {
        let a = decided(analyze(&case.points, &TrackOptions::default()).unwrap());
        assert_interval_shape(&a, case.name);
        let changes: Vec<_> = a.change_points.iter().filter(|c| c.verdict.is_change()).collect();
        assert_eq!(changes.len(), 1, "{}: {changes:?}", case.name);
        let cp = changes[0];
        assert!(
            cp.index_low <= case.truth && case.truth <= cp.index_high,
            "{}: interval misses the truth: {cp:?}",
            case.name
        );
        assert!(cp.index_high - cp.index_low <= case.widest, "{}: interval too wide: {cp:?}", case.name);
        assert!(cp.index.abs_diff(case.truth) <= 5, "{}: {cp:?}", case.name);
    }
}

#[test]
fn a_clean_step_is_placed_exactly_and_the_magnitude_follows_the_placement() {
    // Alternating ±1 around 0 then around 10: no doubt where the step is, so the interval is one point and the
    // segments' levels and counts are those of the true split.
    let points: Vec<Vec<f64>> =
        (0..200).map(|i| vec![if i < 100 { 0.0 } else { 10.0 } + if i % 2 == 0 { 1.0 } else { -1.0 }]).collect();
    let a = analyze(&points, &TrackOptions::default()).unwrap();
    assert_eq!(a.change_points.len(), 1);
    let cp = &a.change_points[0];
    assert_eq!((cp.index, cp.index_low, cp.index_high, cp.before_index, cp.before_index_low), (100, 100, 100, 99, 99));
    assert_eq!((cp.points_before, cp.points_after), (100, 100));
    assert!((cp.mean_before - 0.0).abs() < 1e-9 && (cp.mean_after - 10.0).abs() < 1e-9, "{cp:?}");
}

#[test]
fn the_interval_covers_the_truth_at_about_its_credibility() {
    // 200 seeded series with one step of 1.5 sigma: the 90% interval must cover the true index in at least
    // 85% of them (a miscalibrated, too narrow interval would fall well under), and the placement must be
    // within 5 points in at least 90% (the least-squares split alone manages about 90%).
    let (total, covered, within_five) = placement_over_200_series(1000, 2000, false, "coverage");
    assert!(total >= 195, "the step was found in only {total} of 200 series");
    assert!(covered as f64 >= 0.85 * total as f64, "covered {covered} of {total}");
    assert!(within_five as f64 >= 0.90 * total as f64, "within 5 points: {within_five} of {total}");
}

#[test]
fn placement_survives_scattered_gross_errors() {
    // 200 seeded series with one step of 1.5 sigma and 5% of the runs moved by ±5 sigma: the contamination
    // likelihood must still place the step within 5 points in at least 94% of them and cover it with the 90%
    // interval in at least 85% (measured: 97.5% and 95%; a plain Gaussian likelihood, dragged by the gross
    // errors, placed 92% and covered 80%).
    let (total, covered, within_five) = placement_over_200_series(3000, 4000, true, "gross errors");
    assert!(total >= 195, "the step was found in only {total} of 200 series");
    assert!(covered as f64 >= 0.85 * total as f64, "covered {covered} of {total}");
    assert!(within_five as f64 >= 0.94 * total as f64, "within 5 points: {within_five} of {total}");
}

#[test]
fn outliers_next_to_the_step_do_not_drag_it() {
    // A step of 2 sigma at 200. Under a Gaussian likelihood one run of +20 sigma 4 points before the step would
    // weigh (20^2 - 18^2) / 2 = 38 nats for "the step is before it" and drag the location there; under the
    // gross-error floor it weighs almost nothing, so the placement moves by at most one point.
    let clean = series(400, 1, 100.0, 1.0, &[(200, 102.0)], 41);
    let options = TrackOptions::default();
    let nearest = |points: &[Vec<f64>]| {
        let a = analyze(points, &options).unwrap();
        a.change_points.iter().min_by_key(|c| c.index.abs_diff(200)).cloned().unwrap()
    };
    let without = nearest(&clean);
    assert!(without.index.abs_diff(200) <= 5, "{without:?}");
    let mut one = clean.clone();
    one[196][0] += 20.0;
    let with_one = nearest(&one);
    assert!(with_one.index.abs_diff(without.index) <= 1, "without {without:?}, with one outlier {with_one:?}");
    // Six gross errors of +8 sigma on the 6 points before the step: those points now say nothing about where the
    // step is, so the posterior spreads over them; it must still cover the truth and not run past them.
    let mut six = clean.clone();
    for point in six.iter_mut().take(200).skip(194) {
        point[0] += 8.0;
    }
    let with_six = nearest(&six);
    assert!(with_six.index_low <= 200 && 200 <= with_six.index_high, "{with_six:?}");
    assert!(with_six.index >= 193, "{with_six:?}");
}

#[test]
fn incremental_equals_batch_with_several_runs_per_point() {
    let options = TrackOptions::default();
    let points = series(900, 3, 100.0, 1.0, &[(200, 101.0), (480, 99.5), (700, 100.5)], 51);
    let mut tracker = Tracker::new(options.clone()).unwrap();
    tracker.extend(points[..150].iter().map(|p| p.as_slice()));
    for (k, p) in points.iter().enumerate().skip(150) {
        tracker.push(p);
        if k % 89 == 0 || k == points.len() - 1 {
            let incremental = tracker.analysis().unwrap();
            let batch = analyze_with_calibration(&points[..=k], tracker.calibration(), &options).unwrap();
            assert_eq!(incremental, batch, "after point {k}");
        }
    }
    let last = tracker.analysis().unwrap();
    assert!(last.change_points.len() >= 3, "{last:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Refinement keeps the change points in order and each interval strictly between its neighbours, so no
    /// segment is emptied and no two intervals overlap.
    #[test]
    fn refinement_never_crosses_a_neighbour(
        seed in 0u64..10_000,
        gaps in prop::collection::vec(5usize..120, 1..6),
        sizes in prop::collection::vec(0.5f64..4.0, 6),
        runs in 1usize..3,
    ) {
        let mut at = 0;
        let mut level = 100.0;
        let mut steps = Vec::new();
        for (k, gap) in gaps.iter().enumerate() {
            at += gap;
            level += if k % 2 == 0 { sizes[k] } else { -sizes[k] };
            steps.push((at, level));
        }
        let points = series(at + 60, runs, 100.0, 1.0, &steps, seed);
        let a = analyze(&points, &TrackOptions::default()).unwrap();
        let mut previous: Option<(usize, usize)> = None;
        for cp in &a.change_points {
            prop_assert!(cp.index_low <= cp.index && cp.index <= cp.index_high && cp.index_high < points.len());
            prop_assert!(cp.before_index_low < cp.index_low);
            if let Some((index, high)) = previous {
                prop_assert!(index < cp.index && high < cp.index_low, "{:?}", a.change_points);
            }
            previous = Some((cp.index, cp.index_high));
        }
    }
}

/// 200 seeded series of 400 points with one step of 1.5 sigma at a random place in 150..250 (and, with
/// `gross_errors`, 5% of the runs moved by ±5 sigma): (series where the step was found, whose 90% interval
/// covered it, placed within 5 points of it).
fn placement_over_200_series(
    place_seed: u64,
    noise_seed: u64,
    gross_errors: bool,
    what: &str,
) -> (usize, usize, usize) {
    let (mut total, mut covered, mut within_five) = (0, 0, 0);
    for seed in 0..200u64 {
        let mut rng = Rng::new(place_seed + seed);
        let truth = 150 + rng.below(100);
        let mut points = series(400, 1, 100.0, 2.0, &[(truth, 103.0)], noise_seed + seed);
        if gross_errors {
            for point in points.iter_mut() {
                if rng.next_f64() < 0.05 {
                    point[0] += if rng.next_f64() < 0.5 { -10.0 } else { 10.0 };
                }
            }
        }
        let a = decided(analyze(&points, &TrackOptions::default()).unwrap());
        assert_interval_shape(&a, what);
        let Some(cp) = a.change_points.iter().filter(|c| c.verdict.is_change()).min_by_key(|c| c.index.abs_diff(truth))
        else {
            continue;
        };
        total += 1;
        covered += usize::from(cp.index_low <= truth && truth <= cp.index_high);
        within_five += usize::from(cp.index.abs_diff(truth) <= 5);
    }
    (total, covered, within_five)
}

#[test]
fn a_clean_ten_sigma_step_is_placed_exactly_over_many_seeds() {
    // qa-3 item 2: 40 single-run points with a 10-sigma step in the middle were placed one point off in 4 of 60
    // seeds (the densest 11-point window of the posterior was settled by its thin tails); the QA's own series is
    // seed-independent and comes first.
    let qa = [
        99.046, 99.541, 99.401, 99.680, 100.722, 98.283, 99.663, 99.514, 99.116, 99.885, 100.000, 102.471, 100.302,
        99.993, 100.868, 98.953, 99.399, 100.553, 99.498, 99.016, 109.422, 108.645, 111.146, 111.267, 112.624, 109.709,
        109.772, 109.803, 110.536, 110.014, 110.792, 109.692, 108.575, 111.593, 109.503, 111.160, 109.663, 110.143,
        108.338, 109.023,
    ];
    let mut cases: Vec<(String, Vec<Vec<f64>>, usize)> =
        vec![("qa-3 off2.csv".to_string(), qa.iter().map(|&v| vec![v]).collect(), 20)];
    for seed in 0..300u64 {
        let truth = 15 + (seed % 11) as usize;
        cases.push((format!("seed {seed}"), series(40, 1, 100.0, 1.0, &[(truth, 110.0)], 9000 + seed), truth));
    }
    let mut off = Vec::new();
    for (name, points, truth) in &cases {
        let a = decided(analyze(points, &TrackOptions::default()).unwrap());
        // A chance change point of a sigma or two elsewhere (a false alarm at the 1% level) is not this test's
        // business; the step is the one change of more than 5 sigma.
        let found: Vec<_> = a.change_points.iter().filter(|c| c.verdict.is_change() && c.change.abs() > 5.0).collect();
        assert_eq!(found.len(), 1, "{name}: {found:?}");
        if found[0].index != *truth || found[0].before_index != truth - 1 {
            off.push(format!("{name}: {} (truth {truth})", found[0].index));
        }
    }
    assert!(off.is_empty(), "placed off: {off:?}");
}
