//! `culprit track`'s numbers against an independent computation with numpy and scipy: the noise scale, each change
//! point's levels, magnitude, interval, percent and rank test, and the Benjamini-Hochberg q over one call. The series
//! are QA 23's: a job run under twelve labels, four runs each (stored, then tracked in label order), and a plain
//! series of one run a point with two steps of negative values and four gross errors.
//!
//! Every expected number was computed with Python 3.11, numpy 1.24 and scipy 1.10 from the definitions in
//! docs/statistics.md (## Track), never by Culprit (`points` a list of each point's runs, `S` the scale):
//!
//! - scale: `median(|z|) / scipy.stats.norm.ppf(0.75)`, z of each neighbouring pair of points
//!   `(median(p2) - median(p1)) / sqrt(e(n1) / n1 + e(n2) / n2)`, e(n) n times the variance of the median of n
//!   standard normals by `scipy.integrate.quad` (odd n) or `dblquad` (even n) over the order statistics' densities
//!   (1 for n <= 2; e(4) = 1.192798);
//! - a segment's level: `numpy.mean(numpy.clip(x, numpy.median(x) - 1.345 * S, numpy.median(x) + 1.345 * S))` over
//!   every run of the segment; change: level after less level before; interval: change
//!   `± scipy.stats.norm.ppf(0.975) * S * sqrt(1 / n_before + 1 / n_after)`; percent: over `abs(level before)`;
//! - p: `scipy.stats.mannwhitneyu(after, before, method='exact').pvalue` for at most 20 untied runs a side, else
//!   `method='asymptotic', use_continuity=True`;
//! - q: with `s = numpy.argsort(p)` over the change points of one call, `q[s] = numpy.minimum(1,
//!   numpy.minimum.accumulate((p[s] * k / numpy.arange(1, k + 1))[::-1])[::-1])`.
//!
//! The location of each step (the first point after it) was chosen by construction; the engine must find it there.

use culprit_core::changepoint::{analyze, decide, Analysis, ChangePoint, TrackOptions};

/// `command.v_per_sec` of the 12 labels L00..L11, four runs each in label order: 100 then 108 from L07, noise 2.
const V_PER_SEC: [f64; 48] = [99.4882, 99.5478, 98.14, 102.2238, 102.0738, 100.7895, 96.6679, 101.0128, 96.6173,
    98.2208, 100.6109, 101.0419, 100.6174, 98.6777, 101.1132, 98.7593, 99.3119, 101.2642, 99.1053, 98.9588, 98.3841,
    100.853, 100.0969, 95.9713, 99.7877, 100.9948, 97.0707, 101.3387, 110.8812, 108.2385, 109.2309, 107.0946, 106.0648,
    110.5777, 105.0846, 110.8867, 104.2001, 108.7148, 105.7604, 110.2036, 108.4916, 111.188, 109.0373, 104.8634,
    109.9102, 104.0522, 109.6846, 107.632];
/// `command.lat_ms` of the same runs: 5.0 then 4.0 from L04, noise 0.1 (lower is better).
const LAT_MS: [f64; 48] = [5.0511, 4.9685, 4.9787, 5.0424, 5.0249, 5.0185, 5.0855, 5.0499, 4.8256, 4.9532, 4.9954,
    4.9358, 5.0394, 5.1718, 5.1197, 4.926, 3.9894, 4.0248, 3.9043, 4.1221, 4.0245, 3.851, 4.1306, 3.9678, 3.9183,
    3.9938, 4.0828, 4.0946, 4.0362, 3.8701, 3.9388, 3.8735, 3.9469, 3.7968, 4.0239, 4.0578, 3.7482, 3.9264, 4.0977,
    4.0157, 4.0434, 4.0619, 4.0548, 4.1282, 4.053, 3.9366, 3.8189, 4.102];
/// One run a point: -50, then -45 from point 40, then -52 from point 85, noise 1, and +9 at points 10, 50, 51 and 100.
const SERIES: [f64; 120] = [-51.22407, -49.62241, -49.005, -50.51321, -51.32898, -50.06553, -49.52199, -48.90182,
    -51.21587, -51.29286, -40.29407, -49.52591, -48.46621, -49.01754, -50.10178, -50.27424, -47.42947, -50.2888,
    -50.78494, -51.13834, -49.90454, -49.85469, -50.34487, -50.06216, -49.72691, -49.3076, -48.9032, -49.79018,
    -51.78978, -49.29828, -51.4197, -50.17142, -51.4738, -49.9979, -50.77857, -49.78611, -46.69969, -50.04861,
    -49.15768, -51.32333, -45.28805, -44.33751, -45.09267, -44.62982, -44.89667, -46.00613, -44.43626, -45.81203,
    -43.12825, -45.5052, -35.31391, -35.99765, -44.04757, -45.60215, -44.00113, -45.1239, -43.73669, -44.37581,
    -44.85871, -45.78028, -44.2322, -44.53185, -43.3581, -45.37703, -44.44524, -44.49207, -44.71703, -44.79155,
    -44.81788, -45.5984, -46.01447, -45.39647, -44.40918, -43.48881, -44.02291, -43.94675, -44.2227, -44.30152,
    -44.81665, -44.22848, -43.22632, -45.32763, -45.6938, -43.03991, -44.75531, -51.02903, -51.12614, -53.13573,
    -49.56652, -50.22419, -51.82305, -51.2475, -51.87309, -52.88416, -52.11205, -51.62596, -50.8842, -51.29074,
    -51.94048, -50.64521, -43.76072, -51.2071, -50.88781, -52.29202, -53.79062, -52.9063, -51.76298, -51.47216,
    -50.45179, -53.00417, -51.99796, -51.3512, -52.1577, -54.3697, -51.19354, -49.68775, -50.99569, -52.91744,
    -52.41239, -51.77818];

/// One change point as numpy and scipy read it.
struct Expected {
    index: usize,
    before: f64,
    after: f64,
    change: f64,
    low: f64,
    high: f64,
    pct: f64,
    p: f64,
    q: f64,
}

/// Whether `got` is within `tolerance` of `want`, relative to the larger magnitude.
fn close(got: f64, want: f64, tolerance: f64) -> bool {
    (got - want).abs() <= tolerance * got.abs().max(want.abs()).max(1e-300)
}

/// Checks one analysed series: its scale, and each change point against `expected` in order. Numbers that depend on
/// the scale are held to 1e-6 (the engine's table of median factors has six decimals); the rank test's p and q,
/// which do not, to 1e-9.
fn check(name: &str, analysis: &Analysis, scale: f64, expected: &[Expected]) {
    assert!(close(analysis.scale, scale, 1e-6), "{name}: scale {} against {scale}", analysis.scale);
    let found: Vec<&ChangePoint> = analysis.change_points.iter().collect();
    assert_eq!(found.len(), expected.len(), "{name}: {found:?}");
    for (cp, e) in found.iter().zip(expected) {
        let checks = [
            ("level before", close(cp.mean_before, e.before, 1e-6)),
            ("level after", close(cp.mean_after, e.after, 1e-6)),
            ("change", close(cp.change, e.change, 1e-6)),
            ("interval's low end", close(cp.change_low, e.low, 1e-6)),
            ("interval's high end", close(cp.change_high, e.high, 1e-6)),
            ("percent", cp.change_pct.is_some_and(|pct| close(pct, e.pct, 1e-6))),
            ("p", close(cp.p, e.p, 1e-9)),
            ("q", cp.q.is_some_and(|q| close(q, e.q, 1e-9))),
        ];
        assert_eq!(cp.index, e.index, "{name}: {cp:?}");
        for (what, ok) in checks {
            assert!(ok, "{name}: {what} differs from numpy's: {cp:?}");
        }
    }
}

/// Twelve points of four runs from a flat list, in label order.
fn points_of_four(values: &[f64]) -> Vec<Vec<f64>> {
    values.chunks(4).map(<[f64]>::to_vec).collect()
}

#[test]
fn stored_runs_of_twelve_labels_match_numpy() {
    let options = TrackOptions::default();
    let mut both = vec![
        ("command.v_per_sec".to_string(), analyze(&points_of_four(&V_PER_SEC), &options).expect("an analysis")),
        ("command.lat_ms".to_string(), analyze(&points_of_four(&LAT_MS), &options).expect("an analysis")),
    ];
    // One call decides both metrics, so each q is Benjamini-Hochberg over the two change points.
    decide(&mut both, &options);
    let v = [Expected {
        index: 7,
        before: 99.64614531892346,
        after: 108.34309324415474,
        change: 8.696947925231285,
        low: 7.503180187532568,
        high: 9.890715662930003,
        pct: 8.727831766493507,
        p: 5.067375953789874e-09,
        q: 1.0134751907579749e-08,
    }];
    let lat = [Expected {
        index: 4,
        before: 5.0116499999999995,
        after: 3.9912541288929226,
        change: -1.0203958711070769,
        low: -1.1116997243548499,
        high: -0.9290920178593038,
        pct: -20.3604775095443,
        p: 2.298339360412859e-08,
        q: 2.298339360412859e-08,
    }];
    check("command.v_per_sec", &both[0].1, 2.0803918389449954, &v);
    check("command.lat_ms", &both[1].1, 0.1521441916083535, &lat);
}

#[test]
fn a_series_of_negative_values_with_two_steps_and_gross_errors_matches_numpy() {
    let points: Vec<Vec<f64>> = SERIES.iter().map(|&x| vec![x]).collect();
    let options = TrackOptions::default();
    let mut one = vec![("lat_ms".to_string(), analyze(&points, &options).expect("an analysis"))];
    decide(&mut one, &options);
    let expected = [
        Expected {
            index: 40,
            before: -50.02625012520075,
            after: -44.58064866702355,
            change: 5.445601458177194,
            low: 5.0047668445160856,
            high: 5.886436071838302,
            pct: 10.885488007892818,
            p: 4.6615936057425155e-14,
            q: 9.323187211485031e-14,
        },
        Expected {
            index: 85,
            before: -44.58064866702355,
            after: -51.63598971451514,
            change: -7.055341047491588,
            low: -7.512542068364884,
            high: -6.5981400266182915,
            pct: -15.82601702408706,
            p: 3.4917781730534646e-13,
            q: 3.4917781730534646e-13,
        },
    ];
    check("lat_ms", &one[0].1, 1.0350334512788613, &expected);
}
