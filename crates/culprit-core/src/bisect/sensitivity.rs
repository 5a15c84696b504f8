//! What a bisect that ended "not reproduced" could have seen: its runs' noise, the smallest change they catch.

use serde::{Deserialize, Serialize};

/// The chance with which the reproduce test, on the runs a bisect ended with, would have caught the change that
/// [`Sensitivity::detectable_share`] names: a bound the runs rule out with that power, not with certainty.
pub const DETECTION_POWER: f64 = 0.9;

/// Above this smallest detectable change (as a share of good's level) the runs could have missed a change a
/// developer still cares about (the kernel test robot reports changes of a few percent), so the bisect says "not
/// confirmed" rather than "did not reproduce".
pub const MISSABLE_SHARE: f64 = 0.05;

/// Run-to-run noise (as a share of the level) from which a wall-time bisect's end says that a CPU-bound `--run` is
/// measured far more steadily by its user time: the QA that found this saw 35-37% on a shared machine.
pub const HIGH_NOISE_SHARE: f64 = 0.1;

/// The sensitivity of the runs at good and bad when a bisect ended without confirming the change.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sensitivity {
    /// The runs' pooled sample standard deviation over good's level: the run-to-run noise as a share.
    pub noise_share: f64,
    /// The smallest change, as a share of good's level, that the reproduce test would have caught on these runs with
    /// [`DETECTION_POWER`]: the runs rule out only changes above it.
    pub detectable_share: f64,
}

impl Sensitivity {
    /// The sensitivity of the runs `good` and `bad` (as the reproduce test read them), whose difference had the
    /// standard error `standard_error` and was tested by `log_ratio` against `threshold`. `None` when the level is
    /// zero or the runs too few to say (a share of nothing, or a noise of one run, means nothing).
    pub fn of_runs(
        good: &[f64],
        bad: &[f64],
        level: f64,
        standard_error: f64,
        threshold: f64,
        log_ratio: impl Fn(f64) -> f64,
    ) -> Option<Sensitivity> {
        let (var_good, var_bad) = (crate::stats::sample_variance(good)?, crate::stats::sample_variance(bad)?);
        let dof = (good.len() + bad.len()) as f64 - 2.0;
        let pooled = ((var_good * (good.len() as f64 - 1.0) + var_bad * (bad.len() as f64 - 1.0)) / dof).sqrt();
        let detectable = detectable_difference(standard_error, threshold, log_ratio)?;
        let level = level.abs();
        (level > 0.0 && level.is_finite() && pooled.is_finite())
            .then(|| Sensitivity { noise_share: pooled / level, detectable_share: detectable / level })
    }

    /// Whether the runs could have missed a change worth a report ([`MISSABLE_SHARE`]): the bisect then says the
    /// change is not confirmed, not that it did not reproduce.
    pub fn could_miss(&self) -> bool {
        self.detectable_share > MISSABLE_SHARE
    }

    /// The words of the bound, e.g. "run-to-run noise is 37% of the level; these runs rule out only changes above
    /// ~16%".
    pub fn describe(&self) -> String {
        let only = if self.could_miss() { "only " } else { "" };
        format!(
            "run-to-run noise is {} of the level; these runs rule out {only}changes above ~{}",
            rounded_percent(self.noise_share),
            self.detectable_percent()
        )
    }

    /// The smallest detectable change in percent of good's level, to two significant digits ("16%").
    pub fn detectable_percent(&self) -> String {
        rounded_percent(self.detectable_share)
    }

    /// The README's advice for noise this high on a wall-time metric: a CPU-bound `--run` is measured far more
    /// steadily by its user time, which a shared machine's load barely moves.
    pub fn advice(&self, metric: &str) -> Option<&'static str> {
        (self.noise_share >= HIGH_NOISE_SHARE && metric == "command.elapsed_time").then_some(
            "for a CPU-bound --run, bisect again with --metric command.user_time, which is far steadier than wall time",
        )
    }
}

/// A share in percent to two significant digits (37%, 16%, 2.4%, 0.51%): a bound read off noisy runs is no more
/// precise than that.
fn rounded_percent(share: f64) -> String {
    let percent = share * 100.0;
    if !percent.is_finite() || percent <= 0.0 {
        return "0%".to_string();
    }
    let digits = (1 - percent.log10().floor() as i32).max(0) as usize;
    format!("{percent:.digits$}%")
}

/// The smallest true difference that a test passing when `log_ratio(observed) >= threshold` catches with
/// [`DETECTION_POWER`], where the observed difference is normal about the true one with `standard_error`: the
/// critical observed difference plus the power's quantile of standard errors. `None` without a standard error, or
/// when no difference up to a million standard errors passes (a test that cannot pass rules nothing out).
pub fn detectable_difference(standard_error: f64, threshold: f64, log_ratio: impl Fn(f64) -> f64) -> Option<f64> {
    if !(standard_error > 0.0) || !standard_error.is_finite() {
        return None;
    }
    // The log ratio grows with a positive observed difference: bisection on it finds where it reaches the threshold.
    let (mut low, mut high) = (0.0, standard_error);
    while log_ratio(high) < threshold {
        high *= 2.0;
        if high > 1e6 * standard_error {
            return None;
        }
    }
    for _ in 0..100 {
        let middle = 0.5 * (low + high);
        if log_ratio(middle) >= threshold {
            high = middle;
        } else {
            low = middle;
        }
    }
    Some(high + crate::stats::normal_quantile(DETECTION_POWER) * standard_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bisect::{mixture_log_ratio, one_sided_mixture_log_ratio};

    #[test]
    fn a_plain_z_test_needs_its_quantile_plus_the_powers() {
        // A log ratio that is the z statistic itself: the critical difference is the threshold's standard errors,
        // and 90% power adds 1.2816 more.
        let cases = [(1.0, 1.645, 2.9266), (0.5, 1.645, 1.4633), (2.0, 2.326, 7.2152)];
        for (se, z, expected) in cases {
            let found = detectable_difference(se, z, |d| d / se).unwrap();
            assert!((found - expected).abs() < 1e-3, "se {se}, z {z}: {found} against {expected}");
        }
    }

    #[test]
    fn the_mixture_tests_bound_grows_with_the_standard_error_and_shrinks_with_a_laxer_threshold() {
        let tau = 1.0;
        let bound = |se: f64, threshold: f64| {
            detectable_difference(se, threshold, |d| one_sided_mixture_log_ratio(d, se, tau)).unwrap()
        };
        // Each case: the bound passes the test at the critical point and beyond, and more runs (a smaller standard
        // error) or a laxer test give a smaller bound.
        let cases = [(0.1, 20f64.ln()), (0.2, 20f64.ln()), (0.1, 100f64.ln())];
        for (se, threshold) in cases {
            let critical = bound(se, threshold) - crate::stats::normal_quantile(DETECTION_POWER) * se;
            assert!(one_sided_mixture_log_ratio(critical, se, tau) >= threshold - 1e-9, "se {se}");
            assert!(one_sided_mixture_log_ratio(critical * 0.99, se, tau) < threshold, "se {se}");
        }
        assert!(bound(0.1, 20f64.ln()) < bound(0.2, 20f64.ln()));
        assert!(bound(0.1, 20f64.ln()) < bound(0.1, 100f64.ln()));
        // The two-sided test needs a larger difference than the one-sided one on the same runs.
        let two_sided = detectable_difference(0.1, 20f64.ln(), |d| mixture_log_ratio(d, 0.1, tau)).unwrap();
        assert!(two_sided > bound(0.1, 20f64.ln()));
    }

    #[test]
    fn no_standard_error_or_a_test_that_cannot_pass_rules_nothing_out() {
        assert_eq!(detectable_difference(0.0, 3.0, |d| d), None);
        assert_eq!(detectable_difference(f64::NAN, 3.0, |d| d), None);
        assert_eq!(detectable_difference(1.0, 3.0, |_| 0.0), None);
    }

    #[test]
    fn the_words_say_how_noisy_the_runs_were_and_what_they_rule_out() {
        // (noise, detectable, words, could miss, advice on wall time)
        let cases = [
            (0.37, 0.16, "noise is 37% of the level; these runs rule out only changes above ~16%", true, true),
            (0.012, 0.0051, "noise is 1.2% of the level; these runs rule out changes above ~0.51%", false, false),
            (0.08, 0.06, "noise is 8.0% of the level; these runs rule out only changes above ~6.0%", true, false),
            (0.1, 0.05, "noise is 10% of the level; these runs rule out changes above ~5.0%", false, true),
        ];
        for (noise_share, detectable_share, words, could_miss, advice) in cases {
            let s = Sensitivity { noise_share, detectable_share };
            assert!(s.describe().ends_with(words), "{}", s.describe());
            assert_eq!(s.could_miss(), could_miss, "{words}");
            assert_eq!(s.advice("command.elapsed_time").is_some(), advice, "{words}");
            // User time is the advice itself: it is never told to bisect user time instead.
            assert_eq!(s.advice("command.user_time"), None);
        }
    }

    #[test]
    fn the_runs_give_the_noise_over_goods_level() {
        let good = [9.0, 10.0, 11.0, 10.0];
        let bad = [10.0, 11.0, 12.0, 11.0];
        let s = Sensitivity::of_runs(&good, &bad, 10.0, 0.5, 1.645, |d| d / 0.5).unwrap();
        // Both sides have a sample variance of 2/3: the pooled standard deviation is 0.816, 8.2% of 10.
        assert!((s.noise_share - (2.0f64 / 3.0).sqrt() / 10.0).abs() < 1e-9, "{s:?}");
        assert!((s.detectable_share - (1.645 + 1.2816) * 0.5 / 10.0).abs() < 1e-3, "{s:?}");
        // A level of zero has no share, and one run a side no noise.
        assert_eq!(Sensitivity::of_runs(&good, &bad, 0.0, 0.5, 1.645, |d| d / 0.5), None);
        assert_eq!(Sensitivity::of_runs(&[1.0], &[2.0], 1.0, 0.5, 1.645, |d| d / 0.5), None);
    }
}
