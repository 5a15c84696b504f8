//! Change points over a metric's history: where a series of tested commits moved, by how much, and whether it
//! is a regression. The engine behind `culprit track` (method and measured figures: `docs/statistics.md`, `## Track`).
//!
//! Input: points in order (one per tested commit), each point every run of that commit. Output: the change
//! points, each the index of the first point after a change, with the magnitude, its interval, a p-value and,
//! after [`decide`], a q-value and THE verdict of [`crate::compare::verdict`].
//!
//! The method, in five steps:
//! 1. **Scale.** The run-to-run noise `s` is `1.4826 * median |z_i|`, where `z_i` is the difference of the
//!    medians of neighbouring points normalised by `sqrt(e_i/n_i + e_{i+1}/n_{i+1})` (`e_n` the variance of a
//!    median of `n` runs relative to their mean's). Steps are rare next to neighbours, so the median ignores
//!    them; point medians ignore a stray run, which on a short history of a few runs a point would otherwise
//!    spoil two differences out of a handful. With fewer than 5 differences, steps can be half of them (base,
//!    bad, fix: two differences, both steps), so there the scale is at most the spread of the runs within points
//!    (`1.4826 * median` of `|consecutive runs' difference| / sqrt(2)`, pooled over points), which no step moves.
//! 2. **Clipping.** Every run is clipped to `center ± clip_sigmas * s`, the center being its own point's median
//!    for a point of three or more runs, else the median of point medians over the `±half_window` window's points
//!    up to it or from it on, whichever is nearer its own. An outlier then weighs at most `clip_sigmas` noise
//!    units, while a real step moves the center with it and keeps its full size.
//! 3. **Segmentation.** The penalised piecewise-constant least-squares fit of the clipped runs (every run counts,
//!    not only a point's mean), with penalty `penalty * s^2 * ln(total runs)` per change point and at least
//!    `min_segment_runs` runs per segment, solved exactly by optimal partitioning with functional pruning (a
//!    start of the last segment is dropped once no level is left at which it is the best, as in FPOP; PELT's rule
//!    keeps every start of a stretch without change and was quadratic there), linear in the series' length. With
//!    clipping, a short spurious segment cannot pay for its penalty.
//! 4. **Test.** Each change point is tested on the raw runs of its two neighbouring segments with Mann-Whitney U
//!    (ranks: robust to outliers, no normality needed). The least significant change point above `fdr` (of
//!    equally significant ones, the smallest step) is removed and its neighbours retested, until all pass.
//!    [`decide`] then applies Benjamini-Hochberg over the change points of every metric of one call, and the
//!    compare verdict (q, minimum magnitude, interval).
//! 5. **Location.** Each remaining change point moves, between its neighbours, to the place most likely within
//!    [`LOCATION_TOLERANCE`] points of the truth under the posterior of its location (a two-component
//!    likelihood: Gaussian noise plus a wide gross-error component whose share, spread and the noise scale are
//!    estimated from the window's residuals; the two segments' levels), which places small steps better than the
//!    least-squares split, and gets a 90% credible interval (`index_low ..= index_high`); levels, magnitude and
//!    p-value are those of the refined segments. Details: `Tracker::locate`.
//!
//! Incremental use ([`Tracker::push`]): see [`Tracker`] for the invariant that makes it equal to the batch result.
//!
//! Bad input: non-finite runs are dropped and counted; a point left without runs is skipped (counted) and the
//! indices of the output still refer to the input points; too few runs to split is [`TrackError::TooShort`];
//! all values equal gives no change point and a note.

mod tracker;

pub use tracker::Tracker;

use crate::compare::direction::{direction_of, Direction};
use crate::compare::{
    below_resolution, metric_of_key, uses_absolute_change, verdict, CompareOptions, Evidence, Verdict,
};
use crate::stats::{self, ConfidenceInterval};
use serde::{Deserialize, Serialize};

/// Posterior probability of the location interval of each change point (`index_low ..= index_high`).
pub const LOCATION_CREDIBILITY: f64 = 0.9;

/// Each change point is placed where it is most likely within this many points of the true one (the Bayes
/// estimate under the loss "more than this many points off"; the benchmark's criterion of a right change point).
pub const LOCATION_TOLERANCE: usize = 5;

/// Knobs of the change-point analysis. [`TrackOptions::default`] is what `culprit track` uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrackOptions {
    /// Penalty per change point in units of `s^2 * ln(total runs)` (BIC would be 2; 3 is stricter).
    pub penalty: f64,
    /// Runs are clipped to the local level ± this many noise units.
    pub clip_sigmas: f64,
    /// Half width, in points, of the running median that gives the local level for clipping.
    pub half_window: usize,
    /// Fewest runs a segment may have.
    pub min_segment_runs: usize,
    /// False-discovery rate over all change points of one call; also the pruning level of one series.
    pub fdr: f64,
    /// Smallest relative change that counts, in percent (as in compare).
    pub min_change_pct: f64,
    /// Smallest absolute change for metrics compared in absolute terms (perf-profile, `%` metrics).
    pub min_abs_change: f64,
    /// Coverage of the magnitude interval.
    pub confidence: f64,
    /// The incremental tracker re-estimates everything when the noise scale drifts by more than this share.
    pub rescale_tolerance: f64,
}

impl Default for TrackOptions {
    fn default() -> Self {
        TrackOptions {
            penalty: 3.0,
            clip_sigmas: 1.345,
            half_window: 10,
            min_segment_runs: 4,
            fdr: 0.01,
            min_change_pct: 1.0,
            min_abs_change: 0.1,
            confidence: 0.95,
            rescale_tolerance: 0.05,
        }
    }
}

impl TrackOptions {
    fn check(&self) -> Result<(), TrackError> {
        let bad = |option: &'static str, why: &str| Err(TrackError::InvalidOption { option, why: why.to_string() });
        if !(self.penalty.is_finite() && self.penalty > 0.0) {
            return bad("penalty", "must be a positive number");
        }
        if !(self.clip_sigmas.is_finite() && self.clip_sigmas > 0.0) {
            return bad("clip_sigmas", "must be a positive number");
        }
        if self.min_segment_runs == 0 {
            return bad("min_segment_runs", "must be at least 1");
        }
        if !(self.fdr > 0.0 && self.fdr < 1.0) {
            return bad("fdr", "must be in (0, 1)");
        }
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return bad("confidence", "must be in (0, 1)");
        }
        if !(self.rescale_tolerance >= 0.0) {
            return bad("rescale_tolerance", "must be zero or positive");
        }
        Ok(())
    }

    fn compare_options(&self) -> CompareOptions {
        CompareOptions {
            fdr: self.fdr,
            min_change_pct: self.min_change_pct,
            min_abs_change: self.min_abs_change,
            bootstrap_resamples: 0,
            confidence: self.confidence,
            ..CompareOptions::default()
        }
    }
}

/// Why a series cannot be analysed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrackError {
    #[error(
        "the series is too short to split: {runs} usable run(s) in {points} point(s), and a split needs two \
         segments of at least {needed} runs each; measure more commits or more runs per commit"
    )]
    TooShort { points: usize, runs: usize, needed: usize },
    #[error("invalid option {option}: {why}")]
    InvalidOption { option: &'static str, why: String },
}

/// One change point of one series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangePoint {
    /// Input index of the first point after the change.
    pub index: usize,
    /// Input index of the last point before the change (the two differ by more than one when points between
    /// were skipped for having no usable run).
    pub before_index: usize,
    /// The credible interval of `index` at [`LOCATION_CREDIBILITY`] (90%): the first point after the change lies
    /// in `index_low ..= index_high` with that posterior probability, given the two segments' levels.
    pub index_low: usize,
    pub index_high: usize,
    /// Input index of the last point before `index_low`: a bisect from there to `index_high` covers the interval.
    pub before_index_low: usize,
    /// Points and runs of the segment before and after (up to the neighbouring change points).
    pub points_before: usize,
    pub points_after: usize,
    pub runs_before: usize,
    pub runs_after: usize,
    /// Robust (clipped) means of the two segments.
    pub mean_before: f64,
    pub mean_after: f64,
    /// mean_after - mean_before, with its interval at [`TrackOptions::confidence`].
    pub change: f64,
    pub change_low: f64,
    pub change_high: f64,
    /// The same in percent of |mean_before|; `None` when mean_before is 0.
    pub change_pct: Option<f64>,
    pub change_pct_low: Option<f64>,
    pub change_pct_high: Option<f64>,
    /// Two-sided Mann-Whitney p-value of the raw runs before against after.
    pub p: f64,
    /// Benjamini-Hochberg q-value over every change point of the call; set by [`decide`].
    pub q: Option<f64>,
    /// 1 - q, for humans; set by [`decide`].
    pub confidence: Option<f64>,
    /// The compare verdict; `Unchanged` until [`decide`] ran.
    pub verdict: Verdict,
}

/// The analysis of one series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    pub change_points: Vec<ChangePoint>,
    /// Input points, and those skipped for having no finite run.
    pub points: usize,
    pub skipped_points: usize,
    /// Usable runs, and NaN or infinite values dropped.
    pub runs: usize,
    pub dropped_values: usize,
    /// The run-to-run noise scale the segmentation used.
    pub scale: f64,
    /// Something a reader should know (all values equal, ...).
    pub note: Option<String>,
}

/// Batch analysis of a whole series. Equal to feeding the points one by one to a [`Tracker`] whose scale did
/// not drift (see [`Tracker`]), for values within `2^±200` (beyond, it analyses them in a unit that brings them
/// within, which a [`Tracker`] fed them directly does not).
pub fn analyze(points: &[Vec<f64>], options: &TrackOptions) -> Result<Analysis, TrackError> {
    let unit = unit_of(points);
    let mut tracker = Tracker::new(options.clone())?;
    if unit == 1.0 {
        tracker.extend(points.iter().map(|p| p.as_slice()));
        return tracker.analysis();
    }
    let scaled = in_unit(points, unit);
    tracker.extend(scaled.iter().map(|p| p.as_slice()));
    Ok(from_unit(tracker.analysis()?, unit))
}

/// Values whose magnitude is beyond `2^±SAFE_EXPONENT` are analysed in units of a power of two: the segmentation
/// sums squares of differences (which overflowed to infinity from about 1e154 on, so a 9% step at 1e160 went
/// unseen and `±1e308` read as "all values are equal") and its penalty is the square of the noise scale (which
/// underflowed to 0 below about 1e-154). A power of two divides every value exactly, so the result is the same
/// numbers in another unit; every series within the bounds is analysed as given.
const SAFE_EXPONENT: i32 = 200;

/// The power of two a series is analysed in: 1 unless its largest finite magnitude is beyond `2^±SAFE_EXPONENT`.
fn unit_of(points: &[Vec<f64>]) -> f64 {
    let largest = points.iter().flatten().filter(|v| v.is_finite()).fold(0.0_f64, |m, v| m.max(v.abs()));
    if largest == 0.0 {
        return 1.0;
    }
    let exponent = (largest.log2().floor() as i32).clamp(-1022, 1023);
    if exponent.abs() <= SAFE_EXPONENT {
        return 1.0;
    }
    f64::from_bits(((exponent + 1023) as u64) << 52)
}

/// The points divided by `unit` (non-finite values stay non-finite, so they are still dropped and counted).
fn in_unit(points: &[Vec<f64>], unit: f64) -> Vec<Vec<f64>> {
    points.iter().map(|p| p.iter().map(|v| v / unit).collect()).collect()
}

/// An analysis made in `unit` back in the series' own: levels, changes and the scale (percentages, p-values and
/// indices do not depend on the unit).
fn from_unit(mut analysis: Analysis, unit: f64) -> Analysis {
    analysis.scale *= unit;
    for c in &mut analysis.change_points {
        for v in [&mut c.mean_before, &mut c.mean_after, &mut c.change, &mut c.change_low, &mut c.change_high] {
            *v *= unit;
        }
    }
    analysis
}

/// The frozen parts of an analysis: the noise scale and the run count of the penalty's `ln(total runs)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub scale: f64,
    pub penalty_runs: usize,
}

/// Batch analysis with a given calibration instead of the estimated one (how the incremental result is
/// checked against the batch one).
pub fn analyze_with_calibration(
    points: &[Vec<f64>],
    calibration: Calibration,
    options: &TrackOptions,
) -> Result<Analysis, TrackError> {
    let unit = unit_of(points);
    let mut tracker = Tracker::new(options.clone())?;
    if unit == 1.0 {
        tracker.extend_with_calibration(points.iter().map(|p| p.as_slice()), calibration);
        return tracker.analysis();
    }
    let scaled = in_unit(points, unit);
    let calibration = Calibration { scale: calibration.scale / unit, ..calibration };
    tracker.extend_with_calibration(scaled.iter().map(|p| p.as_slice()), calibration);
    Ok(from_unit(tracker.analysis()?, unit))
}

/// Multiple-testing control and verdicts over every series of one call: Benjamini-Hochberg over the p-values
/// of all change points of all metrics, then [`crate::compare::verdict`] for each (q <= fdr, magnitude above
/// the floor, interval of the ratio excluding 1), directed by the metric's direction.
pub fn decide(series: &mut [(String, Analysis)], options: &TrackOptions) {
    let ps: Vec<f64> = series.iter().flat_map(|(_, a)| a.change_points.iter().map(|c| c.p)).collect();
    let qs = stats::benjamini_hochberg(&ps);
    let compare_options = options.compare_options();
    let mut next_q = qs.into_iter();
    for (metric, analysis) in series.iter_mut() {
        let direction = if metric.is_empty() { Direction::Unknown } else { direction_of(metric) };
        let absolute = uses_absolute_change(metric);
        for cp in analysis.change_points.iter_mut() {
            let q = next_q.next().unwrap_or(1.0);
            cp.q = Some(q);
            cp.confidence = Some(1.0 - q);
            cp.verdict = verdict(&evidence(cp, metric, q, absolute, direction, options.confidence), &compare_options);
        }
    }
}

fn evidence(cp: &ChangePoint, metric: &str, q: f64, absolute: bool, direction: Direction, level: f64) -> Evidence {
    let change = if absolute {
        cp.change
    } else {
        cp.change_pct.unwrap_or(if cp.change == 0.0 { 0.0 } else { f64::INFINITY.copysign(cp.change) })
    };
    let ratio_ci = match (cp.change_pct_low, cp.change_pct_high) {
        (Some(low), Some(high)) => Some(ConfidenceInterval { low: 1.0 + low / 100.0, high: 1.0 + high / 100.0, level }),
        _ => None,
    };
    let below_resolution = below_resolution(metric_of_key(metric), cp.mean_before, cp.mean_after);
    Evidence { problem: None, change, absolute, q: Some(q), ratio_ci, lkp_changed: None, below_resolution, direction }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 9% step in 30 points of one run, with a fixed noise pattern, times `unit`.
    fn step(unit: f64) -> Vec<Vec<f64>> {
        let noise = [0.3, -1.1, 0.8, -0.2, 1.4, -0.7, 0.1, -1.3, 0.9, -0.4, 0.6, -0.9, 1.2, -0.1, 0.5];
        (0..30).map(|i| vec![(if i < 15 { 100.0 } else { 91.0 } + noise[i % 15]) * unit]).collect()
    }

    #[test]
    fn qa_32_huge_and_tiny_values_give_the_same_change_points() {
        let options = TrackOptions::default();
        let plain = analyze(&step(1.0), &options).unwrap();
        assert_eq!(plain.change_points.len(), 1);
        for unit in [1e160, 1e300, 1e-170, 1e-300] {
            let a = analyze(&step(unit), &options).unwrap();
            assert_eq!(a.note, plain.note, "{unit}");
            assert_eq!(a.change_points.len(), 1, "{unit}: {a:?}");
            let (c, p) = (&a.change_points[0], &plain.change_points[0]);
            assert_eq!((c.index, c.index_low, c.index_high, c.p), (p.index, p.index_low, p.index_high, p.p));
            assert!((c.change_pct.unwrap() - p.change_pct.unwrap()).abs() < 1e-9, "{unit}");
            assert!((c.mean_before / unit - p.mean_before).abs() < 1e-9 * p.mean_before, "{unit}");
            assert!((a.scale / unit - plain.scale).abs() < 1e-9 * plain.scale, "{unit}");
        }
        // Values whose differences overflow a double are not "all equal".
        let extremes: Vec<Vec<f64>> = (0..20).map(|i| vec![if i < 10 { 1e308 } else { -1e308 }]).collect();
        let a = analyze(&extremes, &options).unwrap();
        assert!(a.scale > 0.0 && a.note.is_none(), "{a:?}");
        assert_eq!(a.change_points.iter().map(|c| c.index).collect::<Vec<_>>(), [10]);
    }

    #[test]
    fn qa21_a_regression_then_a_fix_six_commits_before_the_end_are_both_found() {
        // fs_mark's files/s over 30 commits of one run each (3% noise): 220k, a regression to 180k at commit 12 and
        // a fix to 247k at commit 24, as in the 3.11 / 3.12-git / 3.12-git-fix thread. The running median over +-10
        // points still stood at the regressed level for the fix's six commits, so the fix's runs were clipped down
        // to it, the fit put the fix two commits late, and the rank tests then dropped both changes.
        let files_per_sec = [
            228502.0, 229566.3, 220437.8, 214954.0, 212791.7, 220206.8, 213254.1, 210516.9, 221315.5, 220880.3,
            223606.7, 213967.8, 180027.0, 179650.4, 171868.5, 182905.2, 181731.8, 192901.2, 181096.0, 179218.6,
            186656.9, 181073.5, 184908.8, 178026.1, 248616.7, 254590.0, 252159.2, 247952.0, 238980.1, 250299.1,
        ];
        let points: Vec<Vec<f64>> = files_per_sec.iter().map(|&v| vec![v]).collect();
        let a = analyze(&points, &TrackOptions::default()).unwrap();
        let found: Vec<(usize, bool)> = a.change_points.iter().map(|c| (c.index, c.change < 0.0)).collect();
        assert_eq!(found, [(12, true), (24, false)], "{a:?}");
    }

    #[test]
    fn qa21_one_stray_point_of_one_run_is_still_clipped_at_either_end() {
        // The center of a point of one run is the nearer of the medians before and after it, each of at least
        // three points: a stray first or last point is never its own center.
        for (window, at) in [
            ([500.0, 100.0, 101.0, 99.0, 100.0], 0),
            ([100.0, 101.0, 99.0, 100.0, 500.0], 4),
            ([100.0, 101.0, 500.0, 99.0, 100.0], 2),
        ] {
            let center = tracker::edge_preserving_center(&window, at);
            assert!((99.0..=101.0).contains(&center), "{window:?} at {at}: {center}");
        }
        // A point past a step takes the level after it, not the window's majority from before it.
        let past_a_step = [100.0, 101.0, 99.0, 100.0, 102.0, 150.0, 151.0, 149.0];
        assert_eq!(tracker::edge_preserving_center(&past_a_step, 5), 150.0);
    }
}
