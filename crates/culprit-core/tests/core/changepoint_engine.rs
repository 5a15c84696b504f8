//! Tests of the change-point engine: tables of series (one step, two steps, none, outliers, short, bad values),
//! incremental against batch on seeded series, and property tests that no input makes it panic.

use culprit_core::changepoint::{
    analyze, analyze_with_calibration, decide, Analysis, TrackError, TrackOptions, Tracker,
};
use culprit_core::compare::Verdict;
use culprit_core::rng::Rng;
use proptest::prelude::*;

/// Single-run points: `level` + noise, with `steps` as (first index after, new level).
fn series(n: usize, level: f64, sigma: f64, steps: &[(usize, f64)], outlier_share: f64, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let mean = steps.iter().rfind(|(at, _)| i >= *at).map(|(_, l)| *l).unwrap_or(level);
            let mut v = mean + sigma * rng.normal();
            if rng.next_f64() < outlier_share {
                v += if rng.next_f64() < 0.5 { -5.0 * sigma } else { 5.0 * sigma };
            }
            vec![v]
        })
        .collect()
}

fn decided(metric: &str, a: Analysis) -> Analysis {
    let mut all = vec![(metric.to_string(), a)];
    decide(&mut all, &TrackOptions::default());
    all.remove(0).1
}

fn changes(a: &Analysis) -> Vec<usize> {
    a.change_points.iter().filter(|c| c.verdict.is_change()).map(|c| c.index).collect()
}

#[test]
fn table_of_series() {
    struct Case {
        name: &'static str,
        points: Vec<Vec<f64>>,
        expect: Vec<usize>,
    }
    let cases = vec![
        Case { name: "no step", points: series(400, 100.0, 1.0, &[], 0.0, 1), expect: vec![] },
        Case {
            name: "one step of 2 sigma",
            points: series(300, 100.0, 1.0, &[(150, 102.0)], 0.0, 2),
            expect: vec![150],
        },
        Case {
            name: "two steps",
            points: series(600, 100.0, 1.0, &[(200, 103.0), (400, 101.0)], 0.0, 3),
            expect: vec![200, 400],
        },
        Case {
            name: "one step with 5% outliers of 5 sigma",
            points: series(400, 100.0, 1.0, &[(200, 97.0)], 0.05, 4),
            expect: vec![200],
        },
        Case { name: "outliers only", points: series(1000, 100.0, 1.0, &[], 0.05, 5), expect: vec![] },
        Case {
            name: "a few commits with many runs each",
            points: (0..12)
                .map(|i| (0..8).map(|k| if i < 7 { 50.0 } else { 55.0 } + (k % 3) as f64).collect())
                .collect(),
            expect: vec![7],
        },
    ];
    for case in cases {
        let a = decided("", analyze(&case.points, &TrackOptions::default()).unwrap());
        let found = changes(&a);
        assert_eq!(found.len(), case.expect.len(), "{}: found {found:?}", case.name);
        for (f, e) in found.iter().zip(&case.expect) {
            assert!(f.abs_diff(*e) <= 3, "{}: found {f}, expected {e}", case.name);
        }
    }
}

#[test]
fn magnitude_interval_and_direction() {
    let points = series(400, 100.0, 1.0, &[(200, 105.0)], 0.0, 9);
    // Higher is better for throughput: a rise is an improvement; lower is better for latency: a regression.
    let up = decided("hackbench.throughput", analyze(&points, &TrackOptions::default()).unwrap());
    let cp = &up.change_points[0];
    assert_eq!(cp.verdict, Verdict::Improvement);
    assert!(cp.change_low < 5.0 && 5.0 < cp.change_high, "{cp:?}");
    let pct = cp.change_pct.unwrap();
    assert!((pct - 5.0).abs() < 0.5, "{pct}");
    assert!(cp.q.unwrap() < 1e-6 && cp.confidence.unwrap() > 0.999);
    assert_eq!(cp.before_index + 1, cp.index);
    let down = decided("fio.read_clat_mean_us", analyze(&points, &TrackOptions::default()).unwrap());
    assert_eq!(down.change_points[0].verdict, Verdict::Regression);
    let unknown = decided("some.metric", analyze(&points, &TrackOptions::default()).unwrap());
    assert_eq!(unknown.change_points[0].verdict, Verdict::Changed);
}

#[test]
fn small_change_is_below_the_floor() {
    // 0.5% step with tiny noise: significant, but under the 1% minimum magnitude.
    let points = series(400, 100.0, 0.05, &[(200, 100.5)], 0.0, 11);
    let a = decided("", analyze(&points, &TrackOptions::default()).unwrap());
    assert_eq!(a.change_points.len(), 1);
    assert_eq!(a.change_points[0].verdict, Verdict::Unchanged);
}

#[test]
fn bad_input_is_reported_not_panicked_on() {
    let options = TrackOptions::default();
    assert!(matches!(analyze(&[], &options), Err(TrackError::TooShort { .. })));
    assert!(matches!(analyze(&[vec![1.0], vec![2.0], vec![3.0]], &options), Err(TrackError::TooShort { runs: 3, .. })));
    let equal = analyze(&vec![vec![7.0]; 50], &options).unwrap();
    assert!(equal.change_points.is_empty());
    assert!(equal.note.as_deref().unwrap_or("").contains("equal"));
    // NaN and infinities are dropped and counted; a point left empty is skipped and indices still refer to input.
    let mut points = series(300, 100.0, 1.0, &[(150, 103.0)], 0.0, 12);
    points[10] = vec![f64::NAN];
    points[20].push(f64::INFINITY);
    points[140] = vec![];
    let a = decided("", analyze(&points, &options).unwrap());
    assert_eq!(a.dropped_values, 2);
    assert_eq!(a.skipped_points, 2);
    assert_eq!(a.points, 300);
    assert!(changes(&a).iter().any(|&i| i.abs_diff(150) <= 3), "{:?}", changes(&a));
    let invalid = TrackOptions { fdr: 0.0, ..TrackOptions::default() };
    assert!(matches!(analyze(&points, &invalid), Err(TrackError::InvalidOption { .. })));
}

#[test]
fn incremental_equals_batch_with_the_same_calibration() {
    let options = TrackOptions::default();
    for seed in 0..4 {
        let points = series(1500, 100.0, 1.0, &[(300, 102.0), (700, 99.0), (1200, 101.5)], 0.03, 100 + seed);
        let mut tracker = Tracker::new(options.clone()).unwrap();
        tracker.extend(points[..200].iter().map(|p| p.as_slice()));
        for (k, p) in points.iter().enumerate().skip(200) {
            tracker.push(p);
            if k % 97 == 0 || k == points.len() - 1 {
                let inc = tracker.analysis().unwrap();
                let batch = analyze_with_calibration(&points[..=k], tracker.calibration(), &options).unwrap();
                assert_eq!(inc, batch, "seed {seed}, after point {k}");
            }
        }
    }
}

#[test]
fn incremental_equals_plain_batch_with_zero_tolerance() {
    let options = TrackOptions { rescale_tolerance: 0.0, ..TrackOptions::default() };
    let points = series(500, 100.0, 1.0, &[(250, 102.5)], 0.0, 77);
    let mut tracker = Tracker::new(options.clone()).unwrap();
    for p in &points {
        tracker.push(p);
    }
    assert_eq!(tracker.analysis().unwrap(), analyze(&points, &options).unwrap());
}

#[test]
fn benjamini_hochberg_spans_all_metrics() {
    let a = analyze(&series(400, 100.0, 1.0, &[(200, 101.5)], 0.0, 21), &TrackOptions::default()).unwrap();
    let p = a.change_points[0].p;
    let mut many: Vec<(String, Analysis)> = (0..5).map(|i| (format!("m{i}"), a.clone())).collect();
    decide(&mut many, &TrackOptions::default());
    // Five equal p-values: BH leaves each at p (rank 5 of 5).
    assert!((many[0].1.change_points[0].q.unwrap() - p).abs() < 1e-12);
    let mut with_null = vec![("a".to_string(), a.clone())];
    let mut weak = a.clone();
    weak.change_points[0].p = 0.5;
    with_null.push(("b".to_string(), weak));
    decide(&mut with_null, &TrackOptions::default());
    assert!(with_null[0].1.change_points[0].q.unwrap() >= p);
    assert!((with_null[1].1.change_points[0].q.unwrap() - 0.5).abs() < 1e-12);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn never_panics_and_indices_are_in_range(
        points in prop::collection::vec(
            prop::collection::vec(prop_oneof![any::<f64>(), -1e3f64..1e3, Just(f64::NAN), Just(5.0)], 0..4),
            0..80,
        )
    ) {
        if let Ok(a) = analyze(&points, &TrackOptions::default()) {
            let a = decided("x", a);
            let mut last = 0;
            for cp in &a.change_points {
                prop_assert!(cp.index < points.len() && cp.before_index < cp.index && cp.index > last.min(cp.index));
                prop_assert!(cp.p >= 0.0 && cp.p <= 1.0);
                last = cp.index;
            }
        }
    }

    #[test]
    fn shifting_the_series_moves_nothing(shift in -1e4f64..1e4, seed in 0u64..1000) {
        let points = series(300, 100.0, 1.0, &[(150, 103.0)], 0.0, seed);
        let shifted: Vec<Vec<f64>> = points.iter().map(|p| p.iter().map(|v| v + shift).collect()).collect();
        let a = analyze(&points, &TrackOptions::default()).unwrap();
        let b = analyze(&shifted, &TrackOptions::default()).unwrap();
        let ia: Vec<usize> = a.change_points.iter().map(|c| c.index).collect();
        let ib: Vec<usize> = b.change_points.iter().map(|c| c.index).collect();
        prop_assert_eq!(ia, ib);
    }
}

#[test]
fn one_outlying_run_on_a_short_history_of_several_runs_does_not_hide_a_step() {
    // The follow loop's first pass: six tested commits of three runs, a 30% step after the third. One run far off
    // (a hiccup of the machine) in any point used to inflate the noise scale (it moved its point's mean and so two
    // of the five neighbour differences) until the step was not found at all.
    let clean: Vec<Vec<f64>> = (0..6)
        .map(|p| {
            let level = if p < 3 { 0.046 } else { 0.061 };
            (0..3).map(|r| level * (1.0 + 0.02 * ((p * 3 + r) % 5) as f64 - 0.04)).collect()
        })
        .collect();
    // (point, run, value): a slow run before the step, a fast one after it, and none.
    for spoil in [Some((1, 0, 0.09)), Some((4, 2, 0.03)), Some((0, 1, 0.12)), None] {
        let mut points = clean.clone();
        if let Some((p, r, v)) = spoil {
            points[p][r] = v;
        }
        let a = decided("command.elapsed_time", analyze(&points, &TrackOptions::default()).expect("analysable"));
        assert_eq!(changes(&a), vec![3], "spoiled by {spoil:?}: scale {}", a.scale);
    }
}

#[test]
fn a_step_stays_found_when_points_jitter_more_than_runs() {
    // The follow loop's first pass on the end-to-end repository (command.user_time in seconds, three runs at each
    // of six commits, a 28% slowdown before the fourth), recorded when `track --follow` reported nothing: the runs
    // of one commit agree to 0.0001 s while commits differ by up to 0.001 s without any change. The location
    // model then read the third point's runs as gross errors on both sides and moved the step before it, where
    // the rank test no longer saw it.
    let points = vec![
        vec![0.045153, 0.045278, 0.045552],
        vec![0.045153, 0.045263, 0.045318],
        vec![0.044301, 0.044352, 0.044415],
        vec![0.057452, 0.058348, 0.058382],
        vec![0.054568, 0.058372, 0.058396],
        vec![0.057476, 0.058309, 0.058406],
    ];
    let analysis = decided("command.user_time", analyze(&points, &TrackOptions::default()).unwrap());
    assert_eq!(changes(&analysis), vec![3], "{analysis:#?}");
}

#[test]
fn short_histories_take_the_noise_scale_from_the_runs_within_points() {
    // The QA's series (qa-3 item 1): five runs a point, runs about 3 apart, 20% steps. The neighbour differences
    // are half steps or all steps here, and their median scale (195 and 390) hid both steps.
    let dip = vec![
        vec![1000.12, 1001.39, 998.62, 1001.06, 1002.78],
        vec![1001.23, 1004.69, 997.34, 1000.20, 997.88],
        vec![797.65, 799.45, 800.66, 801.26, 801.52],
        vec![806.70, 802.59, 795.22, 800.61, 798.13],
        vec![998.45, 1003.92, 999.33, 994.15, 1000.93],
    ];
    let base_bad_fix = vec![
        vec![1000.28, 1003.75, 997.21, 1002.98, 999.22],
        vec![799.22, 805.70, 800.47, 799.87, 802.19],
        vec![1003.38, 999.91, 1001.76, 997.08, 998.90],
    ];
    for (name, points, expect) in [("dip", dip, vec![2, 4]), ("base/bad/fix", base_bad_fix, vec![1, 2])] {
        let a = decided("ops", analyze(&points, &TrackOptions::default()).unwrap());
        assert!(a.scale > 1.0 && a.scale < 6.0, "{name}: scale {}", a.scale);
        assert_eq!(changes(&a), expect, "{name}: {a:#?}");
    }
}

#[test]
fn jitter_between_commits_of_a_long_history_is_not_taken_for_steps() {
    // Forty commits of five runs each, no step: every commit has its own level (sd 3, a build's layout), and its
    // runs agree to 0.5. From five neighbour differences on the scale is theirs, which holds the jitter; the
    // spread within points alone would make most commits a change point.
    let mut rng = Rng::new(17);
    let points: Vec<Vec<f64>> = (0..40)
        .map(|_| {
            let level = 100.0 + 3.0 * rng.normal();
            (0..5).map(|_| level + 0.5 * rng.normal()).collect()
        })
        .collect();
    let a = decided("ops", analyze(&points, &TrackOptions::default()).unwrap());
    assert!(a.scale > 3.0, "scale {}", a.scale);
    assert_eq!(changes(&a), Vec::<usize>::new(), "{a:#?}");
}

#[test]
fn a_step_too_close_to_an_end_for_the_rank_test_gets_a_note() {
    // qa-3 item 15: a 100% step after four single-run points of nine. Four runs against five cannot reach p = 0.01
    // with a rank test (at best 2/126), so the step is dropped; the analysis says so instead of nothing.
    let points: Vec<Vec<f64>> = [100.0, 101.0, 100.0, 100.0, 200.0, 201.0, 200.0, 202.0, 200.0].map(|v| vec![v]).into();
    let a = decided("", analyze(&points, &TrackOptions::default()).unwrap());
    assert_eq!(changes(&a), Vec::<usize>::new());
    let note = a.note.unwrap_or_default();
    assert!(note.contains("before point 4") && note.contains("4 run(s) against 5"), "{note}");
    // With five points before it the step is found, and there is no note.
    let mut longer = points.clone();
    longer.insert(4, vec![100.0]);
    let a = decided("", analyze(&longer, &TrackOptions::default()).unwrap());
    assert_eq!((changes(&a), a.note), (vec![5], None));
}

#[test]
fn a_step_survives_the_rank_tests_beside_jitter_between_the_last_two_commits() {
    // `track --follow --every 10` on twelve commits measures commits 0, 10 and 11, four runs each (the fewest a
    // segment holds), here with a 30% speed-up between 0 and 10 (command.user_time in seconds). The runs of one
    // commit agree to 0.0002 s and the short history takes its scale from them, so the 1.5% that commits 10 and 11
    // differ by under a loaded machine is a step to the segmentation too. Both change points are then four runs
    // against four, whose rank test is at best p = 2/70, tied: the first one, the real step, was removed, and the
    // other then failed against the merged segment, so the pass reported nothing in about 1 run in 20. Among
    // equally insignificant change points the smaller step goes first; the real one is then tested as 4 runs
    // against 8 and kept.
    let points = vec![
        vec![0.10050, 0.10071, 0.10046, 0.10062],
        vec![0.07040, 0.07021, 0.07033, 0.07050],
        vec![0.06930, 0.06952, 0.06941, 0.06922],
    ];
    let analysis = decided("command.user_time", analyze(&points, &TrackOptions::default()).unwrap());
    assert_eq!(changes(&analysis), vec![1], "{analysis:#?}");
    assert_eq!(analysis.change_points[0].verdict, Verdict::Improvement);
}
