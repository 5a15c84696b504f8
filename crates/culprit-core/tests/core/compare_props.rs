//! Property tests of the statistics and the comparison engine: the invariants documented in `stats.rs` and
//! `compare/mod.rs` hold for arbitrary inputs, including NaN, infinities and empty sides, without panics.

use culprit_core::compare::render::{headlines, render_csv, render_json, render_markdown, render_table, RenderOptions};
use culprit_core::compare::{compare, Column, CompareOptions, Comparison, Verdict};
use culprit_core::stats;
use proptest::prelude::*;

fn finite_sample() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(-1.0e6f64..1.0e6, 1..25)
}

/// Samples that may hold anything a broken parser could produce.
fn wild_sample() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(
        prop_oneof![
            4 => -1.0e6f64..1.0e6,
            1 => Just(f64::NAN),
            1 => Just(f64::INFINITY),
            1 => Just(f64::NEG_INFINITY),
            1 => Just(0.0),
        ],
        0..12,
    )
}

fn positive_sample() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(1.0f64..1.0e6, 3..20)
}

proptest! {
    #[test]
    fn p_values_are_probabilities_and_symmetric(a in finite_sample(), b in finite_sample()) {
        if let (Some(x), Some(y)) = (stats::mann_whitney_u(&a, &b), stats::mann_whitney_u(&b, &a)) {
            prop_assert!((0.0..=1.0).contains(&x.p));
            prop_assert!((x.p - y.p).abs() < 1e-9, "MW not symmetric: {} vs {}", x.p, y.p);
        }
        if let (Some(x), Some(y)) = (stats::welch_t_test(&a, &b), stats::welch_t_test(&b, &a)) {
            prop_assert!((0.0..=1.0).contains(&x.p));
            prop_assert!((x.p - y.p).abs() < 1e-9);
            prop_assert!(x.t == -y.t || (x.t.is_nan() && y.t.is_nan()));
        }
    }

    #[test]
    fn identical_samples_have_p_one(a in finite_sample()) {
        prop_assert_eq!(stats::mann_whitney_u(&a, &a).map(|r| r.p), Some(1.0));
        if a.len() >= 2 {
            let p = stats::welch_t_test(&a, &a).map(|r| r.p).unwrap_or(-1.0);
            prop_assert!((p - 1.0).abs() < 1e-12, "p = {}", p);
        }
    }

    #[test]
    fn benjamini_hochberg_is_monotone_and_above_p(ps in prop::collection::vec(0.0f64..=1.0, 0..60)) {
        let q = stats::benjamini_hochberg(&ps);
        prop_assert_eq!(q.len(), ps.len());
        for i in 0..ps.len() {
            prop_assert!(q[i] >= ps[i] - 1e-15 && q[i] <= 1.0);
            for j in 0..ps.len() {
                if ps[i] <= ps[j] {
                    prop_assert!(q[i] <= q[j] + 1e-15);
                }
            }
        }
    }

    #[test]
    fn normal_quantile_inverts_the_cdf(p in 1.0e-12f64..(1.0 - 1.0e-12)) {
        let x = stats::normal_quantile(p);
        prop_assert!((stats::normal_cdf(x) - p).abs() <= 1e-9 * p.max(1e-3));
    }

    #[test]
    fn bootstrap_interval_is_ordered_and_brackets_near_the_ratio(a in positive_sample(), b in positive_sample(), seed in any::<u64>()) {
        let ci = stats::bootstrap_ratio_ci(&a, &b, &mut culprit_core::rng::Rng::new(seed), 200, 0.95);
        let ci = ci.expect("positive samples always have a ratio");
        prop_assert!(ci.low <= ci.high);
        // Any resampled mean lies within its sample's range, so every ratio lies in [min b / max a, max b / min a].
        let (min_a, max_a) = (a.iter().cloned().fold(f64::MAX, f64::min), a.iter().cloned().fold(0.0, f64::max));
        let (min_b, max_b) = (b.iter().cloned().fold(f64::MAX, f64::min), b.iter().cloned().fold(0.0, f64::max));
        prop_assert!(ci.low >= min_b / max_a * 0.999 && ci.high <= max_b / min_a * 1.001, "{:?}", ci);
    }

    #[test]
    fn swapping_sides_flips_the_sign_of_the_change(a in positive_sample(), b in positive_sample()) {
        let forward = compare(&two("m.value", &a, &b), &CompareOptions::default()).expect("valid");
        let backward = compare(&two("m.value", &b, &a), &CompareOptions::default()).expect("valid");
        let f = forward.rows[0].changes[0].change;
        let r = backward.rows[0].changes[0].change;
        prop_assert!(f == 0.0 && r == 0.0 || f.signum() == -r.signum(), "{} vs {}", f, r);
        // Same evidence both ways: the p-value does not depend on which side is the base.
        let (pf, pr) = (forward.rows[0].changes[0].p.unwrap_or(-1.0), backward.rows[0].changes[0].p.unwrap_or(-1.0));
        prop_assert!((pf - pr).abs() < 1e-9);
    }

    #[test]
    fn identical_columns_never_change(a in prop::collection::vec(-1.0e6f64..1.0e6, 0..20), names in prop::collection::btree_set("[a-z]{1,6}(\\.[a-z_%]{1,8}){0,2}", 1..8)) {
        let mut base = Column::new("base");
        for n in &names {
            base.metrics.insert(n.clone(), a.clone());
        }
        let mut other = base.clone();
        other.label = "other".into();
        if let Ok(result) = compare(&Comparison::new(vec![base, other]), &CompareOptions::default()) {
            for row in &result.rows {
                for c in &row.changes {
                    prop_assert!(!c.verdict.is_change(), "{} changed against itself: {:?}", row.metric, c.verdict);
                }
            }
        }
    }

    #[test]
    fn wild_input_never_panics_and_bad_samples_are_inconclusive(
        a in wild_sample(), b in wild_sample(), failed_a in 0usize..3, failed_b in 0usize..3, all in any::<bool>()
    ) {
        let mut base = Column::new("base").with_metric("fio.write_iops", a.clone());
        base.failed_runs = failed_a;
        let mut other = Column::new("other").with_metric("fio.write_iops", b.clone());
        other.failed_runs = failed_b;
        let input = Comparison::new(vec![base, other]);
        for options in [CompareOptions::default(), CompareOptions { rule: culprit_core::compare::DecisionRule::Lkp(Default::default()), ..CompareOptions::default() }] {
            let result = compare(&input, &options).expect("a shared metric always compares");
            let render = RenderOptions { all };
            let _ = (render_table(&result, render), render_json(&result), render_markdown(&result, render), render_csv(&result, render), headlines(&result));
            let row = result.rows.iter().find(|r| r.metric == "fio.write_iops").expect("row present");
            let bad = |xs: &[f64]| xs.is_empty() || xs.iter().any(|x| !x.is_finite());
            if bad(&a) || bad(&b) {
                prop_assert!(matches!(row.changes[0].verdict, Verdict::Inconclusive { .. }), "{:?}", row.changes[0].verdict);
            }
            for c in &row.changes {
                if let Some(p) = c.p { prop_assert!((0.0..=1.0).contains(&p)); }
                if let Some(q) = c.q { prop_assert!((0.0..=1.0).contains(&q)); }
            }
        }
    }
}

proptest! {
    #[test]
    fn fisher_exact_is_symmetric_and_a_probability(
        ra in 1usize..15, rb in 1usize..15, fa in 0usize..15, fb in 0usize..15
    ) {
        // The module's invariant for every two-sided test: swapping the sides (or counting passes instead of
        // failures) leaves p unchanged.
        let (fa, fb) = (fa.min(ra), fb.min(rb));
        let p = stats::fisher_exact(fa, ra, fb, rb);
        prop_assert!((0.0..=1.0).contains(&p));
        prop_assert!((p - stats::fisher_exact(fb, rb, fa, ra)).abs() < 1e-12);
        prop_assert!((p - stats::fisher_exact(ra - fa, ra, rb - fb, rb)).abs() < 1e-12);
    }

    #[test]
    fn every_change_meets_the_documented_rule(
        a in prop::collection::vec(1.0f64..2.0, 3..9), b in prop::collection::vec(1.0f64..2.0, 3..9),
        shift in 0.5f64..2.0, constant in any::<bool>()
    ) {
        // docs/statistics.md: p = min(1, 2 min(p_MW, p_Welch)) unless both sides are constant; q is Benjamini-
        // Hochberg over the column's p-values; a change needs q <= fdr (or a zero-width ratio interval excluding 1),
        // |change| at the floor or above, and no ratio interval containing 1.
        let b: Vec<f64> = if constant { vec![b[0] * shift; b.len()] } else { b.iter().map(|x| x * shift).collect() };
        let input = Comparison::new(vec![
            Column::new("a").with_metric("bench.score", a.clone()).with_metric("bench.other", a.clone()),
            Column::new("b").with_metric("bench.score", b.clone()).with_metric("bench.other", a.clone()),
        ]);
        let options = CompareOptions::default();
        let result = compare(&input, &options).expect("valid");
        let ps: Vec<f64> = result.rows.iter().map(|r| r.changes[0].p.unwrap_or(-1.0)).collect();
        let qs = stats::benjamini_hochberg(&ps);
        for (row, q) in result.rows.iter().zip(qs) {
            let c = &row.changes[0];
            prop_assert_eq!(c.q, Some(q));
            if let (Some(mw), Some(welch)) = (c.p_mann_whitney, c.p_welch) {
                prop_assert_eq!(c.p, Some((2.0 * mw.min(welch)).min(1.0)));
            }
            if c.verdict.is_change() {
                let point = c.ratio_ci.is_some_and(|ci| ci.low == ci.high && !ci.contains(1.0));
                prop_assert!(q <= options.fdr || point, "{:?}", c);
                prop_assert!(c.change.abs() >= options.min_change_pct, "{:?}", c);
                prop_assert!(!c.ratio_ci.is_some_and(|ci| ci.contains(1.0)), "{:?}", c);
            }
        }
    }
}

fn two(metric: &str, a: &[f64], b: &[f64]) -> Comparison {
    Comparison::new(vec![Column::new("a").with_metric(metric, a.to_vec()), Column::new("b").with_metric(metric, b.to_vec())])
}
