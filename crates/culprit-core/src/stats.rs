//! Pure statistics for deciding whether two sets of benchmark runs differ: summaries, the normal distribution,
//! Mann-Whitney U, Welch's t-test, Benjamini-Hochberg false-discovery control, effect sizes and a bootstrap
//! confidence interval of the ratio of means.
//!
//! Every function takes plain slices and never panics, whatever the input: empty slices, NaN and infinite
//! samples give `None` (or a documented neutral value) instead of a wrong number. Callers that need to explain
//! *why* a test could not run check their inputs with [`check_samples`] first.
//!
//! Invariants (checked by the property tests in `tests/compare_props.rs` and the unit tests below):
//! - every p-value and q-value lies in `[0, 1]`;
//! - tests are symmetric: swapping the two samples leaves every two-sided p-value unchanged;
//! - two identical samples give p = 1 for both tests;
//! - Benjamini-Hochberg q-values are never below their p-values and are monotone in them;
//! - the bootstrap is reproducible from the seed of the [`Rng`] it is given.

use crate::rng::Rng;
use statrs::function::beta::checked_beta_reg;
use statrs::function::erf::erfc;
use std::collections::HashMap;

/// Why a sample cannot feed a statistical test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SampleProblem {
    /// The sample has no values at all.
    Empty,
    /// At least one value is NaN.
    NotANumber,
    /// At least one value is +inf or -inf.
    Infinite,
}

impl std::fmt::Display for SampleProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SampleProblem::Empty => write!(f, "no samples"),
            SampleProblem::NotANumber => write!(f, "NaN sample"),
            SampleProblem::Infinite => write!(f, "infinite sample"),
        }
    }
}

/// Reports the first reason `xs` cannot be used (empty, NaN, infinite), or `None` if every value is finite.
pub fn check_samples(xs: &[f64]) -> Option<SampleProblem> {
    if xs.is_empty() {
        return Some(SampleProblem::Empty);
    }
    if xs.iter().any(|x| x.is_nan()) {
        return Some(SampleProblem::NotANumber);
    }
    if xs.iter().any(|x| x.is_infinite()) {
        return Some(SampleProblem::Infinite);
    }
    None
}

/// Arithmetic mean; `None` for an empty slice. NaN or infinite inputs propagate into the result.
pub fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len() as f64;
    let sum = xs.iter().sum::<f64>();
    // Finite values whose sum overflows (a counter near f64::MAX in every run) have a finite mean: each is divided
    // first. The table printed `Inf  NaN%` for a value that was the same in every run (QA 58).
    if sum.is_infinite() && xs.iter().all(|x| x.is_finite()) {
        // Around the first value: exact for values all alike, and no sum of near-maximal terms.
        let first = xs[0];
        return Some(first + xs.iter().map(|x| (x - first) / n).sum::<f64>());
    }
    Some(sum / n)
}

/// Unbiased sample variance (divisor n - 1); `None` for fewer than two values.
///
/// Computed around the mean in two passes, which stays accurate for large values with small spread (e.g.
/// `fio.workload` around 6e7 with a few percent of noise), where the one-pass sum-of-squares formula cancels.
pub fn sample_variance(xs: &[f64]) -> Option<f64> {
    let (scale, squares) = scaled_squares(xs)?;
    Some(scale * scale * (squares / (xs.len() - 1) as f64))
}

/// The deviations from the mean as `scale` and the sum of their squares divided by `scale` squared: `scale` is 1
/// unless the squares overflow, and then the largest deviation (squared as they are, deviations above 1e154
/// overflowed to an infinite spread of values that hardly differ, QA 58). `None` for fewer than two values.
fn scaled_squares(xs: &[f64]) -> Option<(f64, f64)> {
    if xs.len() < 2 {
        return None;
    }
    let m = mean(xs)?;
    // Unscaled wherever the squares do not overflow, so that the spread lkp prints is the one computed its way, to
    // the last digit.
    let squares: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    if squares.is_finite() {
        return Some((1.0, squares));
    }
    let largest = xs.iter().map(|x| (x - m).abs()).fold(0.0, f64::max);
    if !largest.is_finite() || largest == 0.0 {
        return Some((1.0, squares));
    }
    Some((largest, xs.iter().map(|x| ((x - m) / largest).powi(2)).sum()))
}

/// Sample standard deviation (divisor n - 1), the estimate the tests and the JSON use; `None` for fewer than two
/// values. lkp's printed `%stddev` is the population one ([`population_stddev`]).
pub fn sample_stddev(xs: &[f64]) -> Option<f64> {
    let (scale, squares) = scaled_squares(xs)?;
    Some(scale * (squares / (xs.len() - 1) as f64).sqrt())
}

/// Population standard deviation (divisor n), as lkp-tests' `Enumerable#standard_deviation` computes it for the
/// `%stddev` of its comparison table and for `stddev.json` (its `sample_variance` divides by the length); `None`
/// for fewer than two values, where lkp prints no `%stddev` either.
pub fn population_stddev(xs: &[f64]) -> Option<f64> {
    let (scale, squares) = scaled_squares(xs)?;
    Some(scale * (squares / xs.len() as f64).sqrt())
}

/// Whether two sides' values are each one number repeated, at least twice a side, and the two numbers differ: a
/// change as certain as runs can show (a size, a count), though a test of its variance has nothing to divide by and
/// calls it not significant. Non-finite values are never steady.
pub fn steady_change(a: &[f64], b: &[f64]) -> bool {
    let steady = |xs: &[f64]| xs.len() >= 2 && xs[0].is_finite() && xs.iter().all(|&x| x == xs[0]);
    steady(a) && steady(b) && a[0] != b[0]
}

/// A sorted copy of `xs` in IEEE total order (NaN last), so sorting can never panic.
pub fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Median (mean of the two middle values for an even count); `None` for an empty slice.
pub fn median(xs: &[f64]) -> Option<f64> {
    median_of_sorted(&sorted(xs))
}

/// Median of an already sorted slice; `None` when empty.
pub fn median_of_sorted(s: &[f64]) -> Option<f64> {
    let n = s.len();
    if n == 0 {
        return None;
    }
    let hi = s.get(n / 2).copied()?;
    if n % 2 == 1 {
        Some(hi)
    } else {
        let lo = s.get(n / 2 - 1).copied()?;
        Some((lo + hi) / 2.0)
    }
}

/// The `q`-quantile (0 <= q <= 1) of a sorted slice with linear interpolation between order statistics
/// (the "type 7" definition used by R and numpy). `None` when empty or when `q` is outside [0, 1] or NaN.
pub fn quantile_of_sorted(s: &[f64], q: f64) -> Option<f64> {
    if s.is_empty() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let pos = q * (s.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    let a = s.get(lo).copied()?;
    let b = s.get(hi).copied()?;
    Some(a + (b - a) * frac)
}

/// The `p`-quantile of the chi-square distribution with `k` degrees of freedom, by Wilson and Hilferty's cube-root
/// normal approximation: within 2% of the exact quantile for `k >= 3` at `p` in [0.05, 0.95] (6.5% at `k = 2`,
/// `p = 0.1`), which is all a confidence bound on a scale estimated from a handful of runs needs. NaN for `k = 0`.
pub fn chi_square_quantile(p: f64, k: usize) -> f64 {
    if k == 0 {
        return f64::NAN;
    }
    let k = k as f64;
    let a = 2.0 / (9.0 * k);
    let cube = (1.0 - a + normal_quantile(p) * a.sqrt()).max(0.0);
    k * cube * cube * cube
}

/// A one-pass description of one side of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample stddev; 0 for a single value.
    pub stddev: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

/// Summarises a sample; `None` for an empty slice. A single value has stddev 0.
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    let s = sorted(xs);
    Some(Summary {
        n: xs.len(),
        mean: mean(xs)?,
        stddev: sample_stddev(xs).unwrap_or(0.0),
        median: median_of_sorted(&s)?,
        min: *s.first()?,
        max: *s.last()?,
    })
}

/// The standard normal cumulative distribution function Φ(x). Φ(-inf) = 0, Φ(+inf) = 1, Φ(NaN) = NaN.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// The upper tail 1 - Φ(x), computed directly so that tiny tail probabilities (p = 1e-12) keep their precision.
pub fn normal_sf(x: f64) -> f64 {
    0.5 * erfc(x / std::f64::consts::SQRT_2)
}

/// The standard normal quantile Φ⁻¹(p): -inf at 0, +inf at 1, NaN outside [0, 1].
///
/// Acklam's rational approximation (relative error 1.2e-9) refined by one Halley step on [`normal_cdf`], which
/// brings it to about machine precision.
pub fn normal_quantile(p: f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    const A: [f64; 6] = [
        -3.969683028665376e+01,
        2.209460984245205e+02,
        -2.759285104469687e+02,
        1.383_577_518_672_69e2,
        -3.066479806614716e+01,
        2.506628277459239e+00,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e+01,
        1.615858368580409e+02,
        -1.556989798598866e+02,
        6.680131188771972e+01,
        -1.328068155288572e+01,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-03,
        -3.223964580411365e-01,
        -2.400758277161838e+00,
        -2.549732539343734e+00,
        4.374664141464968e+00,
        2.938163982698783e+00,
    ];
    const D: [f64; 4] = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00];
    const P_LOW: f64 = 0.02425;
    let x = if p < P_LOW {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - P_LOW {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        let q = (-2.0 * (1.0 - p).ln()).sqrt();
        -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    // One Halley step: e is the error in probability, u the Newton correction scaled by the density.
    let e = normal_cdf(x) - p;
    let u = e * (2.0 * std::f64::consts::PI).sqrt() * (x * x / 2.0).exp();
    let refined = x - u / (1.0 + x * u / 2.0);
    if refined.is_finite() {
        refined
    } else {
        x
    }
}

/// Clamps a computed probability into [0, 1]; NaN becomes 1 (no evidence of a difference).
fn clamp_p(p: f64) -> f64 {
    if p.is_nan() {
        1.0
    } else {
        p.clamp(0.0, 1.0)
    }
}

/// The outcome of a Mann-Whitney U (Wilcoxon rank-sum) test.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MannWhitney {
    /// U of the first sample: the number of (a, b) pairs with a > b, ties counting one half.
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Whether `p` comes from the exact permutation distribution (small samples, given their ties) or from the
    /// tie-corrected normal approximation with continuity correction.
    pub exact: bool,
}

impl MannWhitney {
    /// Cliff's delta, P(a > b) - P(a < b), in [-1, 1]: a rank-based effect size that needs no normality.
    pub fn cliffs_delta(&self, n_a: usize, n_b: usize) -> f64 {
        let pairs = (n_a * n_b) as f64;
        if pairs == 0.0 {
            0.0
        } else {
            2.0 * self.u / pairs - 1.0
        }
    }
}

/// 1 / Phi^-1(3/4): turns a median absolute deviation into a normal standard deviation. One constant for every
/// robust scale (track's, check's, the bisect's residual scale), so their figures can be checked against one value.
pub const MAD_TO_SIGMA: f64 = 1.482_602_218_505_602;

/// Without ties, [`mann_whitney_u`] uses the exact distribution when the product of the sample sizes is at most
/// this squared: up to 20 a side, or a small side beside a large one (3 against up to 133). The table has m n + 1
/// entries (401 at most) and costs about 10 µs to build; its counts, C(m + n, m), are largest at 20 a side (1.4e11),
/// exact in f64. The bound was 20 on each side once, which sent 3 runs against 21 to the normal approximation: at
/// 3 against 25 with the three above every base run, the exact p is 2 / 3276 = 0.00061, the approximation's 0.006.
pub const MANN_WHITNEY_EXACT_MAX: usize = 20;

/// With ties, [`mann_whitney_u`] uses the exact distribution when the product of the sample sizes is at most this
/// squared: up to 10 a side, or a small side beside a large one (3 against up to 33). Its table depends on the tie
/// pattern, so a comparison builds one per pattern rather than one per pair of sizes: about 17 µs at 10 a side, 165
/// µs at 20, and 3 against 33 costs about what 10 a side does. Below 10 a side the normal approximation with ties is
/// too kind where it matters (of 2,000 random tied pairs of 4 runs a side, 82 had p <= 0.05 from it and above 0.05
/// exactly), and so it is for 3 runs against 11 to 40 (102 of 2,000 at 3 against 12, 11 the other way round); from
/// 12 a side on, or 5 against 20 or more, it errs about as often either way.
pub const MANN_WHITNEY_EXACT_TIED_MAX: usize = 10;

/// The exact null distribution of U for sample sizes (m, n) without ties, as cumulative probabilities.
///
/// Built once per (m, n) and reusable across all metrics of a comparison (they usually share their run counts),
/// which is what keeps exact p-values affordable for 20,000 metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct UDistribution {
    pub m: usize,
    pub n: usize,
    /// `cdf[u]` = P(U <= u) for u = 0..=m*n.
    cdf: Vec<f64>,
}

impl UDistribution {
    /// Builds the distribution from the generating function of U, the Gaussian binomial coefficient
    /// [m+n choose m]_q = Π_{i=1..m} (1 - q^(n+i)) / (1 - q^i): multiplying by (1 - q^k) and dividing by
    /// (1 - q^i) are both single passes over the coefficient vector. Counts are kept in f64, exact up to 2^53,
    /// which C(40, 20) ≈ 1.4e11 respects.
    pub fn new(m: usize, n: usize) -> UDistribution {
        let size = m * n + 1;
        let mut coef = vec![0.0f64; size];
        if let Some(c0) = coef.first_mut() {
            *c0 = 1.0;
        }
        for i in 1..=m {
            // Multiply by (1 - q^(n+i)), highest degree first so each coefficient is read before it is changed.
            let k = n + i;
            for d in (k..size).rev() {
                coef[d] -= coef[d - k];
            }
            // Divide by (1 - q^i): the quotient's coefficients are running sums with stride i.
            for d in i..size {
                coef[d] += coef[d - i];
            }
        }
        UDistribution { m, n, cdf: cumulative(&coef).unwrap_or_default() }
    }

    /// P(U <= u), with u rounded down to an integer; 0 below 0 and 1 above m*n.
    pub fn cdf(&self, u: f64) -> f64 {
        if u < 0.0 || u.is_nan() {
            return 0.0;
        }
        let k = u.floor() as usize;
        self.cdf.get(k).copied().unwrap_or(1.0)
    }

    /// Two-sided exact p-value of an observed U: twice the smaller tail, capped at 1. The distribution is
    /// symmetric around m*n/2, so the upper tail P(U >= u) equals P(U <= m*n - u).
    pub fn two_sided_p(&self, u: f64) -> f64 {
        let mn = (self.m * self.n) as f64;
        let lower = self.cdf(u);
        let upper = self.cdf(mn - u);
        clamp_p(2.0 * lower.min(upper))
    }
}

/// The exact null distribution of U for sample sizes (m, n) when some values are tied: the permutation
/// distribution given the tie pattern, which is how many values each group of equal values holds, in rank order.
///
/// Ties change the distribution, so [`UDistribution`] cannot serve, and the normal approximation is too kind at
/// the run counts benchmarks have: 3 runs of 1.0 against 3 of 2.0 get p = 0.047 from it, while only 2 of the 20
/// ways to split the six runs are that extreme (p = 0.1). The distribution depends on the tie pattern alone, so a
/// comparison builds it once per pattern and reuses it across the metrics that share it.
#[derive(Debug, Clone, PartialEq)]
pub struct TiedUDistribution {
    pub m: usize,
    pub n: usize,
    /// `cdf[d]` = P(2U <= d) for d = 0..=2mn: U counts ties as one half, so twice U is a whole number.
    cdf: Vec<f64>,
}

impl TiedUDistribution {
    /// Builds the distribution by counting, group by group in rank order, the ways to take `k` of the first
    /// sample's values so far with a given 2U. Taking `j` of a group of `t` equal values, with `below` values of
    /// the second sample ranked under the group, adds `j * (2 * below + t - j)` to 2U (each taken value beats the
    /// `below` values and ties the group's `t - j` others), in C(t, j) ways. Counts are kept in f64, exact up to
    /// 2^53, which C(40, 20) ≈ 1.4e11 respects. `None` when the groups do not hold m + n values.
    pub fn new(m: usize, n: usize, group_sizes: &[usize]) -> Option<TiedUDistribution> {
        if group_sizes.iter().sum::<usize>() != m + n || group_sizes.contains(&0) {
            return None;
        }
        let width = 2 * m * n + 1;
        // ways[k * width + d]: arrangements of the groups so far with k values of the first sample and 2U = d.
        let mut ways = vec![0.0f64; (m + 1) * width];
        ways[0] = 1.0;
        let mut next = vec![0.0f64; (m + 1) * width];
        let mut placed = 0;
        for &t in group_sizes {
            next.iter_mut().for_each(|w| *w = 0.0);
            let binomials = binomial_row(t);
            for k in 0..=m.min(placed) {
                let below = placed - k;
                if below > n {
                    continue;
                }
                // Each of the k values taken beats or ties at most the `below` values of the second sample placed
                // so far, so 2U cannot exceed 2k * below yet: the rest of the row is zero and is not visited.
                for d in 0..width.min(2 * k * below + 1) {
                    let w = ways[k * width + d];
                    if w == 0.0 {
                        continue;
                    }
                    for (j, &choose) in binomials.iter().enumerate().take(m - k + 1) {
                        let (taken, added) = (k + j, j * (2 * below + t - j));
                        if t - j + below <= n && d + added < width {
                            next[taken * width + d + added] += w * choose;
                        }
                    }
                }
            }
            std::mem::swap(&mut ways, &mut next);
            placed += t;
        }
        Some(TiedUDistribution { m, n, cdf: cumulative(&ways[m * width..])? })
    }

    /// Two-sided exact p-value of an observed U: twice the smaller of P(U <= u) and P(U >= u), capped at 1. With
    /// ties the distribution need not be symmetric around mn/2, so both tails are read.
    pub fn two_sided_p(&self, u: f64) -> f64 {
        if u.is_nan() {
            return 1.0;
        }
        let doubled = (2.0 * u).round().max(0.0) as usize;
        let lower = self.cdf.get(doubled).copied().unwrap_or(1.0);
        let upper = match doubled.checked_sub(1) {
            Some(below) => 1.0 - self.cdf.get(below).copied().unwrap_or(1.0),
            None => 1.0,
        };
        clamp_p(2.0 * lower.min(upper))
    }
}

/// The cumulative probabilities of counts of arrangements; `None` when there are none.
fn cumulative(counts: &[f64]) -> Option<Vec<f64>> {
    let total: f64 = counts.iter().sum();
    if total <= 0.0 || !total.is_finite() {
        return None;
    }
    let mut acc = 0.0;
    Some(
        counts
            .iter()
            .map(|count| {
                acc += count;
                (acc / total).min(1.0)
            })
            .collect(),
    )
}

/// C(t, 0..=t) as f64.
fn binomial_row(t: usize) -> Vec<f64> {
    let mut row = Vec::with_capacity(t + 1);
    let mut c = 1.0f64;
    for j in 0..=t {
        row.push(c);
        c = c * (t - j) as f64 / (j + 1) as f64;
    }
    row
}

/// Average ranks (1-based) of `a` then `b` pooled: the first sample's rank sum, the tie term Σ(t³ - t) over groups
/// of tied values, and the groups' sizes in rank order. `None` if any value is NaN, because NaN has no rank.
fn pooled_ranks(a: &[f64], b: &[f64]) -> Option<(f64, f64, Vec<usize>)> {
    let mut pooled: Vec<(f64, bool)> = a.iter().map(|&x| (x, true)).chain(b.iter().map(|&x| (x, false))).collect();
    if pooled.iter().any(|(x, _)| x.is_nan()) {
        return None;
    }
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut rank_sum_a = 0.0;
    let mut tie_term = 0.0;
    let mut group_sizes = Vec::new();
    let mut i = 0;
    while i < pooled.len() {
        let mut j = i + 1;
        // Values equal under `==` (which treats 0.0 and -0.0 as equal) form one tie group.
        while j < pooled.len() && pooled[j].0 == pooled[i].0 {
            j += 1;
        }
        let t = (j - i) as f64;
        let average_rank = (i + 1 + j) as f64 / 2.0;
        rank_sum_a += pooled[i..j].iter().filter(|(_, from_a)| *from_a).count() as f64 * average_rank;
        tie_term += t * t * t - t;
        group_sizes.push(j - i);
        i = j;
    }
    Some((rank_sum_a, tie_term, group_sizes))
}

/// Mann-Whitney U test, two-sided. `None` when either side is empty or holds a NaN (infinities rank normally).
///
/// Exact when no value is tied and the product of the sizes is at most [`MANN_WHITNEY_EXACT_MAX`] squared, or with
/// ties when it is at most [`MANN_WHITNEY_EXACT_TIED_MAX`] squared: the permutation distribution, given the
/// ties. Otherwise the normal
/// approximation with the tie-corrected variance and a continuity correction of 1/2. When every value is tied the
/// statistic carries no information and p = 1.
pub fn mann_whitney_u(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    RankTables::default().mann_whitney_u(a, b)
}

/// The exact distributions a comparison has built, kept for the metrics that need them again: one per pair of
/// sample sizes without ties, one per tie pattern with them. A comparison of 20,000 metrics mostly shares its run
/// counts, and tied metrics (rounded perf-profile percentages, bucketed latencies) mostly share a few patterns.
#[derive(Debug, Clone, Default)]
pub struct RankTables {
    untied: HashMap<(usize, usize), UDistribution>,
    tied: HashMap<(usize, usize, Vec<usize>), Option<TiedUDistribution>>,
}

impl RankTables {
    /// [`mann_whitney_u`], reusing the distributions built before.
    pub fn mann_whitney_u(&mut self, a: &[f64], b: &[f64]) -> Option<MannWhitney> {
        let (m, n) = (a.len(), b.len());
        if m == 0 || n == 0 {
            return None;
        }
        let (rank_sum_a, tie_term, group_sizes) = pooled_ranks(a, b)?;
        let mf = m as f64;
        let u = rank_sum_a - mf * (mf + 1.0) / 2.0;
        if group_sizes.len() == 1 {
            return Some(MannWhitney { u, p: 1.0, exact: true });
        }
        if tie_term == 0.0 && m * n <= MANN_WHITNEY_EXACT_MAX * MANN_WHITNEY_EXACT_MAX {
            let table = self.untied.entry((m, n)).or_insert_with(|| UDistribution::new(m, n));
            return Some(MannWhitney { u, p: table.two_sided_p(u), exact: true });
        }
        if tie_term > 0.0 && m * n <= MANN_WHITNEY_EXACT_TIED_MAX * MANN_WHITNEY_EXACT_TIED_MAX {
            // The table counts the smaller side's U (the other's is mn - U, with the same two-sided p): the count
            // runs over the ways to take that side's values, which costs least for the smaller one.
            let (small, large, u_small) = if m <= n { (m, n, u) } else { (n, m, (m * n) as f64 - u) };
            let table = self
                .tied
                .entry((small, large, group_sizes))
                .or_insert_with_key(|(m, n, sizes)| TiedUDistribution::new(*m, *n, sizes));
            if let Some(table) = table {
                return Some(MannWhitney { u, p: table.two_sided_p(u_small), exact: true });
            }
        }
        Some(MannWhitney { u, p: normal_approximation_p(u, m, n, tie_term), exact: false })
    }
}

/// The two-sided p-value of U from the normal approximation, with the tie-corrected variance and a continuity
/// correction of 1/2; 1 when the variance vanishes (every value tied).
fn normal_approximation_p(u: f64, m: usize, n: usize, tie_term: f64) -> f64 {
    let (mf, nf) = (m as f64, n as f64);
    let total = mf + nf;
    let variance = mf * nf / 12.0 * ((total + 1.0) - tie_term / (total * (total - 1.0)));
    if variance <= 0.0 || !variance.is_finite() {
        return 1.0;
    }
    let z = ((u - mf * nf / 2.0).abs() - 0.5).max(0.0) / variance.sqrt();
    clamp_p(2.0 * normal_sf(z))
}

/// The outcome of Welch's unequal-variances t-test.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Welch {
    /// t = (mean(b) - mean(a)) / sqrt(var(a)/n_a + var(b)/n_b).
    pub t: f64,
    /// Welch-Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// Welch's t-test, two-sided. `None` when a side has fewer than two values or holds a NaN or infinity.
///
/// When both sides have zero variance the t statistic is undefined: equal means give p = 1 and different means
/// p = 0 with t = ±inf (two constant, different samples are as different as a sample can show).
pub fn welch_t_test(a: &[f64], b: &[f64]) -> Option<Welch> {
    if check_samples(a).is_some() || check_samples(b).is_some() {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (ma, mb) = (mean(a)?, mean(b)?);
    let (va, vb) = (sample_variance(a)?, sample_variance(b)?);
    let (sa, sb) = (va / na, vb / nb);
    let se2 = sa + sb;
    if se2 <= 0.0 {
        return Some(if ma == mb {
            Welch { t: 0.0, df: na + nb - 2.0, p: 1.0 }
        } else {
            Welch { t: if mb > ma { f64::INFINITY } else { f64::NEG_INFINITY }, df: na + nb - 2.0, p: 0.0 }
        });
    }
    let t = (mb - ma) / se2.sqrt();
    let df = se2 * se2 / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0));
    Some(Welch { t, df, p: student_t_two_sided_p(t, df) })
}

/// Two-sided p-value of Student's t with `df` degrees of freedom: I_{df/(df+t²)}(df/2, 1/2).
pub fn student_t_two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return 1.0;
    }
    if t.is_infinite() {
        return 0.0;
    }
    let x = df / (df + t * t);
    match checked_beta_reg(df / 2.0, 0.5, x.clamp(0.0, 1.0)) {
        Ok(p) => clamp_p(p),
        Err(_) => 1.0,
    }
}

/// How many runs a side Welch's t-test needs to find a true difference of `difference` between two sides whose
/// runs scatter with sample standard deviations `sd_a` and `sd_b`: the smallest n at which a two-sided test at
/// level `alpha` finds it with probability `power`, by the usual approximation (t quantiles at 2n - 2 degrees of
/// freedom: n >= (t_(1-alpha/2) + t_(power))^2 (sd_a^2 + sd_b^2) / difference^2). At 1 sigma, alpha 0.05 and
/// power 0.8 that is 17, the textbook figure. `None` when the inputs make no sense (a zero or non-finite
/// difference, a negative or non-finite deviation, alpha or power outside (0, 1)) or when more than `cap` runs
/// would be needed; 2 at least.
pub fn runs_to_detect(difference: f64, sd_a: f64, sd_b: f64, alpha: f64, power: f64, cap: usize) -> Option<usize> {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let usable = |x: f64| x.is_finite() && x >= 0.0;
    let level = |x: f64| x > 0.0 && x < 1.0;
    if !(difference.is_finite() && difference != 0.0 && usable(sd_a) && usable(sd_b) && level(alpha) && level(power))
    {
        return None;
    }
    let spread = sd_a * sd_a + sd_b * sd_b;
    (2..=cap).find(|&n| {
        let Ok(t) = StudentsT::new(0.0, 1.0, 2.0 * n as f64 - 2.0) else { return false };
        let reach = t.inverse_cdf(1.0 - alpha / 2.0) + t.inverse_cdf(power);
        reach * reach * spread / n as f64 <= difference * difference
    })
}

/// Benjamini-Hochberg adjusted p-values (q-values), in the order of `ps`.
///
/// q_(i) = min over j >= i of p_(j) * m / j, capped at 1, where p_(1) <= ... <= p_(m). Rejecting every
/// hypothesis with q <= alpha controls the false-discovery rate at alpha for independent or positively
/// dependent tests. NaN p-values count as 1 (no evidence) and still count in m, so they make the correction
/// conservative rather than lenient.
///
/// Invariants: q >= p for every entry; p_i <= p_j implies q_i <= q_j; every q in [0, 1].
pub fn benjamini_hochberg(ps: &[f64]) -> Vec<f64> {
    let m = ps.len();
    let clean: Vec<f64> = ps.iter().map(|&p| clamp_p(p)).collect();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| clean[i].total_cmp(&clean[j]));
    let mut q = vec![1.0; m];
    let mut running_min: f64 = 1.0;
    for (rank0, &idx) in order.iter().enumerate().rev() {
        let adjusted = clean[idx] * m as f64 / (rank0 + 1) as f64;
        running_min = running_min.min(adjusted);
        q[idx] = running_min.max(clean[idx]).min(1.0);
    }
    q
}

/// Cohen's d with the pooled standard deviation: (mean(b) - mean(a)) / s_pooled. `None` for fewer than two
/// values a side, non-finite values, or zero pooled spread (where the effect is infinite or undefined).
pub fn cohens_d(a: &[f64], b: &[f64]) -> Option<f64> {
    if check_samples(a).is_some() || check_samples(b).is_some() {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let pooled = ((na - 1.0) * sample_variance(a)? + (nb - 1.0) * sample_variance(b)?) / (na + nb - 2.0);
    if pooled <= 0.0 {
        return None;
    }
    Some((mean(b)? - mean(a)?) / pooled.sqrt())
}

/// A two-sided percentile bootstrap confidence interval.
///
/// In JSON a finite bound is a number, as it always was, and an infinite one is the string `"inf"` or `"-inf"` (NaN,
/// which no interval here holds, would be `"nan"`). JSON has no number for them, and serde_json wrote `null`, which a
/// consumer could not tell from a row without an interval (`"ratio_ci": null`) and which did not read back. An
/// interval is infinite when its ratio divides by a base mean of 0: a pass/fail metric failing in every run against a
/// base that never fails, or two constant sides whose base is 0. Reading takes the strings, numbers, and the `null`
/// of JSON written before, as NaN: that writer dropped the bound's sign.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ConfidenceInterval {
    #[serde(with = "json_bound")]
    pub low: f64,
    #[serde(with = "json_bound")]
    pub high: f64,
    /// The nominal coverage, e.g. 0.95.
    pub level: f64,
}

/// A bound of a [`ConfidenceInterval`] in JSON: a number when finite, else `"inf"`, `"-inf"` or `"nan"`.
mod json_bound {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bound: &f64, serializer: S) -> Result<S::Ok, S::Error> {
        match *bound {
            x if x.is_finite() => serializer.serialize_f64(x),
            x if x.is_nan() => serializer.serialize_str("nan"),
            x if x > 0.0 => serializer.serialize_str("inf"),
            _ => serializer.serialize_str("-inf"),
        }
    }

    /// What a bound may be in JSON: the untagged enum takes whichever form is there.
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Stored {
        Number(f64),
        Word(String),
        Null(()),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
        match Stored::deserialize(deserializer)? {
            Stored::Number(x) => Ok(x),
            Stored::Word(word) => match word.as_str() {
                "inf" => Ok(f64::INFINITY),
                "-inf" => Ok(f64::NEG_INFINITY),
                "nan" => Ok(f64::NAN),
                other => Err(serde::de::Error::custom(format!(
                    "{other:?} is not an interval bound: a number, \"inf\", \"-inf\" or \"nan\""
                ))),
            },
            Stored::Null(()) => Ok(f64::NAN),
        }
    }
}

impl ConfidenceInterval {
    /// Whether `x` lies inside the interval (bounds included).
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }

    /// Whether the interval is one point: every resample gave the same value, as for two constant sides apart.
    pub fn is_point(&self) -> bool {
        self.low == self.high
    }
}

/// The ratio of two means as a change from `base` to `other` reads: mean(other) / mean(base) for a positive base,
/// and 1 + (other - base) / |base| in general, so that 100 (ratio - 1) is the percent change against the base's
/// magnitude (the change `compare` prints) and a ratio above 1 means the value rose, whatever the base's sign.
/// Below zero mean(other) / mean(base) runs the other way (-10 to -20 is a ratio of 2 for a change of -100%), and
/// across zero it jumps from large ratios of one sign to the other. ±inf or NaN for a zero base.
pub fn change_ratio(base: f64, other: f64) -> f64 {
    if base < 0.0 {
        1.0 + (other - base) / -base
    } else {
        other / base
    }
}

/// Percentile bootstrap confidence interval of the [`change_ratio`] of the means: mean(other) / mean(base) for a
/// positive base, 1 + (mean(other) - mean(base)) / |mean(base)| in general.
///
/// Each of `resamples` rounds draws both sides with replacement (independently, as the runs are) and records
/// the ratio of the resampled means; the interval is the (1-level)/2 and (1+level)/2 quantiles of those ratios.
/// Rounds whose resampled base mean is 0 are dropped, because the ratio is undefined there. A round whose base
/// mean falls below zero reads its change as the others do, which keeps a base whose runs straddle zero from
/// giving an interval of huge ratios of both signs around a change every round agrees on.
///
/// `None` when a side is empty or non-finite, when `resamples` is 0, when `level` is not in (0, 1), when the
/// base mean is 0, or when fewer than half of the rounds gave a ratio.
pub fn bootstrap_ratio_ci(
    base: &[f64],
    other: &[f64],
    rng: &mut Rng,
    resamples: usize,
    level: f64,
) -> Option<ConfidenceInterval> {
    if check_samples(base).is_some() || check_samples(other).is_some() || resamples == 0 {
        return None;
    }
    if !(level > 0.0 && level < 1.0) || mean(base)? == 0.0 {
        return None;
    }
    let mut ratios = Vec::with_capacity(resamples);
    let (nb, no) = (base.len(), other.len());
    for _ in 0..resamples {
        let mut sum_b = 0.0;
        for _ in 0..nb {
            sum_b += base.get(rng.below(nb)).copied().unwrap_or(0.0);
        }
        let mut sum_o = 0.0;
        for _ in 0..no {
            sum_o += other.get(rng.below(no)).copied().unwrap_or(0.0);
        }
        if sum_b != 0.0 {
            ratios.push(change_ratio(sum_b / nb as f64, sum_o / no as f64));
        }
    }
    if ratios.len() * 2 < resamples {
        return None;
    }
    ratios.sort_by(f64::total_cmp);
    let alpha = (1.0 - level) / 2.0;
    Some(ConfidenceInterval {
        low: quantile_of_sorted(&ratios, alpha)?,
        high: quantile_of_sorted(&ratios, 1.0 - alpha)?,
        level,
    })
}

/// Two-sided Fisher exact test of a 2x2 table: `fails_a` of `runs_a` runs failed on one side, `fails_b` of
/// `runs_b` on the other. The p-value sums the hypergeometric probabilities of every table with the same margins
/// that is no more likely than the observed one (with a 1e-7 relative tolerance for floating ties, as R does).
/// Counts above the run totals are clamped to them. With no runs on a side, or no variation in the margins,
/// the test has nothing to say and p = 1.
pub fn fisher_exact(fails_a: usize, runs_a: usize, fails_b: usize, runs_b: usize) -> f64 {
    use statrs::function::factorial::ln_factorial;
    let (fa, fb) = (fails_a.min(runs_a), fails_b.min(runs_b));
    let total_fail = fa + fb;
    let total = runs_a + runs_b;
    if runs_a == 0 || runs_b == 0 || total_fail == 0 || total_fail == total {
        return 1.0;
    }
    let lf = |k: usize| ln_factorial(k as u64);
    // ln P(X = x) where X counts the failures falling on side a.
    let ln_p = |x: usize| -> f64 {
        lf(runs_a) + lf(runs_b) + lf(total_fail) + lf(total - total_fail)
            - lf(total)
            - lf(x)
            - lf(runs_a - x)
            - lf(total_fail - x)
            - lf(runs_b + x - total_fail)
    };
    let lo = total_fail.saturating_sub(runs_b);
    let hi = total_fail.min(runs_a);
    let observed = ln_p(fa);
    let mut p = 0.0;
    for x in lo..=hi {
        let lp = ln_p(x);
        if lp <= observed + 1e-7_f64.ln_1p() {
            p += lp.exp();
        }
    }
    clamp_p(p)
}

#[cfg(test)]
mod tests {
    #[test]
    fn values_whose_sum_overflows_have_a_finite_mean_and_spread() {
        // QA 58: a value of 1.797e308 in each of 3 runs printed `Inf  NaN%`.
        let close = |a: Option<f64>, b: f64| a.is_some_and(|a| ((a - b) / b).abs() < 1e-15);
        let big = [f64::MAX; 3];
        assert!(close(super::mean(&big), f64::MAX), "{:?}", super::mean(&big));
        let spread = super::population_stddev(&big).unwrap();
        assert!(spread.is_finite() && spread < f64::MAX * 1e-15, "{spread}");
        let near = [f64::MAX, f64::MAX / 2.0];
        assert!(close(super::mean(&near), f64::MAX * 0.75));
        assert!(close(super::population_stddev(&near), f64::MAX * 0.25));
        assert!(close(super::sample_stddev(&near), f64::MAX * 0.25 * 2f64.sqrt()));
        // A sum that is infinite because a value is stays so: nothing finite is made of it.
        assert_eq!(super::mean(&[f64::INFINITY, 1.0]), Some(f64::INFINITY));
        assert!(super::mean(&[f64::INFINITY, f64::NEG_INFINITY]).is_some_and(f64::is_nan));
    }

    #[test]
    fn a_steady_change_is_one_number_a_side_repeated_and_different() {
        let cases: [(&[f64], &[f64], bool); 7] = [
            (&[15960.0, 15960.0, 15960.0], &[15992.0, 15992.0, 15992.0], true),
            (&[1.0, 1.0], &[2.0, 2.0, 2.0], true),
            (&[15960.0, 15960.0, 15960.0], &[15960.0, 15960.0, 15960.0], false),
            (&[15960.0, 15961.0, 15960.0], &[15992.0, 15992.0, 15992.0], false),
            (&[1.0], &[2.0], false),
            (&[], &[2.0, 2.0], false),
            (&[f64::NAN, f64::NAN], &[2.0, 2.0], false),
        ];
        for (a, b, expected) in cases {
            assert_eq!(super::steady_change(a, b), expected, "{a:?} against {b:?}");
        }
    }

    use super::*;

    #[test]
    fn an_infinite_interval_says_so_in_json_and_reads_back() {
        let json = |ci: ConfidenceInterval| serde_json::to_string(&ci).unwrap_or_default();
        let finite = ConfidenceInterval { low: 0.5, high: 1.25, level: 0.95 };
        assert_eq!(json(finite), r#"{"low":0.5,"high":1.25,"level":0.95}"#);
        let infinite = ConfidenceInterval { low: f64::NEG_INFINITY, high: f64::INFINITY, level: 0.95 };
        assert_eq!(json(infinite), r#"{"low":"-inf","high":"inf","level":0.95}"#);
        for ci in [finite, infinite] {
            assert_eq!(serde_json::from_str::<ConfidenceInterval>(&json(ci)).ok(), Some(ci));
        }
        let nan = ConfidenceInterval { low: f64::NAN, high: 2.0, level: 0.9 };
        assert_eq!(json(nan), r#"{"low":"nan","high":2.0,"level":0.9}"#);
        // JSON written before the strings had null for an infinite bound, of an unknown sign.
        let old = serde_json::from_str::<ConfidenceInterval>(r#"{"low":null,"high":null,"level":0.95}"#);
        assert!(old.is_ok_and(|ci| ci.low.is_nan() && ci.high.is_nan() && ci.level == 0.95));
        let odd = serde_json::from_str::<ConfidenceInterval>(r#"{"low":"infinity","high":1,"level":0.95}"#);
        assert!(odd.is_err_and(|e| e.to_string().contains("\"infinity\" is not an interval bound")));
    }

    #[test]
    fn runs_to_detect_matches_the_power_tables_and_moves_the_right_way() {
        // Cohen's tables: 17 runs a side find a 1 sigma difference at alpha 0.05 with power 0.8, 64 a half sigma.
        assert_eq!(runs_to_detect(1.0, 1.0, 1.0, 0.05, 0.8, 1000), Some(17));
        assert_eq!(runs_to_detect(-0.5, 1.0, 1.0, 0.05, 0.8, 1000), Some(64));
        // A difference far beyond the noise needs the least a test can run on; noise past the cap gives none.
        assert_eq!(runs_to_detect(100.0, 1.0, 1.0, 0.05, 0.8, 1000), Some(2));
        assert_eq!(runs_to_detect(0.01, 1.0, 1.0, 0.05, 0.8, 1000), None);
        for (d, sa, sb, alpha, power) in [(0.0, 1.0, 1.0, 0.05, 0.8), (1.0, f64::NAN, 1.0, 0.05, 0.8)] {
            assert_eq!(runs_to_detect(d, sa, sb, alpha, power, 1000), None);
        }
        assert_eq!(runs_to_detect(1.0, 1.0, 1.0, 0.0, 0.8, 1000), None);
        let more_noise = runs_to_detect(1.0, 1.0, 2.0, 0.05, 0.8, 1000).unwrap();
        let more_power = runs_to_detect(1.0, 1.0, 1.0, 0.05, 0.95, 1000).unwrap();
        assert!(more_noise > 17 && more_power > 17, "{more_noise} {more_power}");
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn summaries_of_known_samples() {
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&xs), Some(5.0));
        // Sum of squared deviations is 32; divided by n - 1 = 7.
        assert!(close(sample_variance(&xs).unwrap_or(0.0), 32.0 / 7.0, 1e-12));
        assert_eq!(median(&xs), Some(4.5));
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(mean(&[]), None);
        assert_eq!(sample_stddev(&[1.0]), None);
        assert_eq!(quantile_of_sorted(&[1.0, 2.0, 3.0, 4.0], 0.5), Some(2.5));
        assert_eq!(check_samples(&[1.0, f64::NAN]), Some(SampleProblem::NotANumber));
        assert_eq!(check_samples(&[1.0, f64::INFINITY]), Some(SampleProblem::Infinite));
        assert_eq!(check_samples(&[]), Some(SampleProblem::Empty));
    }

    #[test]
    fn chi_square_quantiles_are_near_the_tables() {
        // (p, k, exact quantile, relative tolerance) from the chi-square tables.
        let cases = [
            (0.1, 2, 0.2107, 0.07),
            (0.1, 3, 0.5844, 0.02),
            (0.9, 3, 6.2514, 0.02),
            (0.1, 10, 4.8652, 0.01),
            (0.95, 10, 18.307, 0.01),
            (0.5, 30, 29.336, 0.01),
        ];
        for (p, k, exact, tolerance) in cases {
            let q = chi_square_quantile(p, k);
            assert!(((q - exact) / exact).abs() <= tolerance, "chi2({p}, {k}) = {q}, tables {exact}");
        }
        assert!(chi_square_quantile(0.5, 0).is_nan());
    }

    #[test]
    fn normal_cdf_and_quantile_match_tables() {
        assert!(close(normal_cdf(0.0), 0.5, 1e-15));
        assert!(close(normal_cdf(1.959963984540054), 0.975, 1e-11));
        // statrs' erfc is accurate to about 1e-10 relative, which is far below any significance level we use.
        assert!(close(normal_cdf(-3.0), 0.0013498980316301, 1e-13));
        let cases = [(0.975, 1.959963984540054), (0.5, 0.0), (0.001, -3.090232306167813), (1e-10, -6.361340902404056)];
        for &(p, z) in &cases {
            assert!(close(normal_quantile(p), z, 1e-9), "quantile({p}) = {}", normal_quantile(p));
        }
        assert!(normal_quantile(1.5).is_nan());
        assert_eq!(normal_quantile(0.0), f64::NEG_INFINITY);
    }

    #[test]
    fn exact_u_distribution_matches_hand_counts() {
        // m = n = 2: the 6 arrangements give U = 0,1,2,2,3,4.
        let d = UDistribution::new(2, 2);
        assert!(close(d.cdf(0.0), 1.0 / 6.0, 1e-15));
        assert!(close(d.cdf(2.0), 4.0 / 6.0, 1e-15));
        assert!(close(d.cdf(4.0), 1.0, 1e-15));
        // Completely separated samples of 3 and 3: p = 2 / C(6,3) = 0.1.
        let r = mann_whitney_u(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0])
            .unwrap_or(MannWhitney { u: -1.0, p: -1.0, exact: false });
        assert!(r.exact);
        assert_eq!(r.u, 0.0);
        assert!(close(r.p, 0.1, 1e-12));
    }

    /// The two-sided p-value by listing every way to split the pooled values into sides of |a| and |b|: the
    /// definition the tied distribution must meet, independent of its counting.
    fn enumerated_p(a: &[f64], b: &[f64]) -> f64 {
        let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
        let u_of = |first: &[f64], second: &[f64]| {
            let mut u = 0.0;
            for x in first {
                for y in second {
                    u += if x > y { 1.0 } else if x == y { 0.5 } else { 0.0 };
                }
            }
            u
        };
        let observed = u_of(a, b);
        let (mut lower, mut upper, mut total) = (0.0, 0.0, 0.0);
        for mask in 0u32..(1 << pooled.len()) {
            if mask.count_ones() as usize != a.len() {
                continue;
            }
            let side = |in_first: bool| -> Vec<f64> {
                pooled.iter().enumerate().filter(|(i, _)| (mask & (1 << i) != 0) == in_first).map(|(_, &x)| x).collect()
            };
            let (first, second) = (side(true), side(false));
            let u = u_of(&first, &second);
            total += 1.0;
            lower += f64::from(u <= observed);
            upper += f64::from(u >= observed);
        }
        (2.0 * lower.min(upper) / total).min(1.0)
    }

    #[test]
    fn tied_samples_get_the_exact_permutation_p_value() {
        // Three runs of 1.0 against three of 2.0: 2 of the 20 splits are as extreme, p = 0.1, where the normal
        // approximation said 0.047 and crossed 0.05.
        let none = MannWhitney { u: -1.0, p: -1.0, exact: false };
        let r = mann_whitney_u(&[1.0, 1.0, 1.0], &[2.0, 2.0, 2.0]).unwrap_or(none);
        assert!(r.exact);
        assert!(close(r.p, 0.1, 1e-12), "p = {}", r.p);
        // Small tied samples drawn from a few values, as rounded percentages are: every p-value is the
        // enumerated one, whichever side is first.
        let mut rng = Rng::new(13);
        for case in 0..400 {
            let m = 1 + rng.below(7);
            let n = 1 + rng.below(7);
            let levels = 2 + rng.below(4);
            let mut draw = |len: usize| (0..len).map(|_| rng.below(levels) as f64 * 0.01).collect::<Vec<f64>>();
            let (a, b) = (draw(m), draw(n));
            let want = enumerated_p(&a, &b);
            for (x, y) in [(&a, &b), (&b, &a)] {
                let got = mann_whitney_u(x, y).map(|r| r.p).unwrap_or(-1.0);
                assert!(close(got, want, 1e-12), "case {case}: {x:?} v {y:?}: {got} against {want}");
            }
        }
        // A tie pattern that does not hold m + n values has no distribution.
        assert_eq!(TiedUDistribution::new(2, 2, &[1, 2]), None);
        assert_eq!(TiedUDistribution::new(2, 2, &[2, 0, 2]), None);
    }

    /// The two-sided p-value by listing every way to take |a| of the pooled values (the subsets of |a| positions):
    /// [`enumerated_p`]'s definition, for a small side beside a large one, whose 2^(m + n) splits are too many.
    fn enumerated_p_by_subsets(a: &[f64], b: &[f64]) -> f64 {
        let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
        let doubled_u = |first: &[usize]| -> usize {
            let mut u = 0;
            for &i in first {
                for (_, y) in pooled.iter().enumerate().filter(|(j, _)| !first.contains(j)) {
                    u += if pooled[i] > *y { 2 } else { usize::from(pooled[i] == *y) };
                }
            }
            u
        };
        let observed = doubled_u(&(0..a.len()).collect::<Vec<_>>());
        let (mut lower, mut upper, mut total) = (0.0, 0.0, 0.0);
        let mut chosen: Vec<usize> = (0..a.len()).collect();
        loop {
            let u = doubled_u(&chosen);
            total += 1.0;
            lower += f64::from(u <= observed);
            upper += f64::from(u >= observed);
            // The next subset in lexicographic order: raise the last index that can still rise, reset those after.
            let Some(k) = (0..chosen.len()).rev().find(|&k| chosen[k] < pooled.len() - chosen.len() + k) else { break };
            chosen[k] += 1;
            for next in k + 1..chosen.len() {
                chosen[next] = chosen[next - 1] + 1;
            }
        }
        (2.0 * lower.min(upper) / total).min(1.0)
    }

    #[test]
    fn review_17_a_small_tied_side_against_more_than_ten_runs_gets_the_exact_p_value() {
        // Three runs against twelve, values tied as rounded percentages are: 15 of the 455 ways to take three of the
        // fifteen runs lie as far on its side, so p = 2 * 15 / 455 = 6/91 = 0.066 (counted with Python's integers
        // too: itertools.combinations over scipy.stats.rankdata of the pooled runs), where the normal approximation,
        // used from 11 runs on a side, said 0.039 (scipy.stats.mannwhitneyu(a, b, method='asymptotic'): 0.0393890).
        // Of 2,000 such random pairs, 102 had p <= 0.05 from it and above 0.05 exactly, 11 the other way round: with 3
        // runs beside many it is too kind, as it is at 10 a side and below.
        let (a, b) = ([1.0, 1.0, 0.0], [1.0, 3.0, 1.0, 2.0, 1.0, 3.0, 2.0, 3.0, 3.0, 1.0, 3.0, 2.0]);
        for (x, y) in [(&a[..], &b[..]), (&b[..], &a[..])] {
            let r = mann_whitney_u(x, y).unwrap_or(MannWhitney { u: -1.0, p: -1.0, exact: false });
            assert!(r.exact && close(r.p, 6.0 / 91.0, 1e-12), "{r:?}");
        }
        let mut rng = Rng::new(17);
        for case in 0..300 {
            let m = 1 + rng.below(4);
            let n = 11 + rng.below(100 / m - 10);
            let levels = 2 + rng.below(4);
            let mut draw = |len: usize| (0..len).map(|_| rng.below(levels) as f64 * 0.01).collect::<Vec<f64>>();
            let (a, b) = (draw(m), draw(n));
            let want = enumerated_p_by_subsets(&a, &b);
            for (x, y) in [(&a, &b), (&b, &a)] {
                let got = mann_whitney_u(x, y).map(|r| r.p).unwrap_or(-1.0);
                assert!(close(got, want, 1e-12), "case {case}: {x:?} v {y:?}: {got} against {want}");
            }
        }
    }

    #[test]
    fn mann_whitney_normal_approximation_matches_scipy() {
        let a = [1.0, 2.0, 2.0, 3.0, 4.0, 5.0];
        let b = [4.0, 5.0, 6.0, 7.0, 8.0, 8.0];
        let Some((rank_sum, tie_term, _)) = pooled_ranks(&a, &b) else { panic!("no NaN here") };
        assert_eq!((rank_sum - 21.0, tie_term), (2.0, 24.0));
        // Hand computation: ties {2,2},{4,4},{5,5},{8,8} give tie term 24; var = 36/12*(13 - 24/132) = 38.4545;
        // z = (16 - 0.5)/sqrt(38.4545) = 2.4995; p = 2*(1-Φ(z)) = 0.012436.
        let p = normal_approximation_p(2.0, 6, 6, tie_term);
        assert!(close(p, 0.012436, 2e-5), "p = {p}");
        // Six a side is within the exact range, so the test itself counts the splits.
        let r = mann_whitney_u(&a, &b).unwrap_or(MannWhitney { u: -1.0, p: -1.0, exact: false });
        assert!(r.exact && r.u == 2.0 && close(r.p, enumerated_p(&a, &b), 1e-12), "{r:?}");
        // Beyond 20 a side the approximation answers.
        let big_a: Vec<f64> = (0..21).map(|i| f64::from(i / 2)).collect();
        let big_b: Vec<f64> = (0..21).map(|i| f64::from(i / 2 + 3)).collect();
        let r = mann_whitney_u(&big_a, &big_b).unwrap_or(MannWhitney { u: -1.0, p: -1.0, exact: true });
        let Some((rank_sum, tie_term, _)) = pooled_ranks(&big_a, &big_b) else { panic!("no NaN here") };
        assert!(!r.exact && r.p == normal_approximation_p(rank_sum - 231.0, 21, 21, tie_term), "{r:?}");
        // Three runs beside 25, no ties: exact, as the product of the sizes is within 20 squared. The p-values were
        // counted over all 3,276 ways to pick three of the 28 ranks (Python, itertools.combinations).
        let base: Vec<f64> = (0..25).map(|i| 10.0 + 0.1 * f64::from(i)).collect();
        for (other, u, want) in [
            ([12.5, 12.6, 12.7], 75.0, 2.0 / 3276.0),
            ([10.05, 10.95, 12.6], 36.0, 0.9444444444444444),
            ([9.0, 9.5, 12.7], 25.0, 0.3907203907203907),
        ] {
            let r = mann_whitney_u(&other, &base).unwrap_or(MannWhitney { u: -1.0, p: -1.0, exact: false });
            assert!(r.exact && r.u == u && close(r.p, want, 1e-12), "{other:?}: {r:?}");
        }
        let all_tied = mann_whitney_u(&[1.0; 5], &[1.0; 5]).map(|r| r.p);
        assert_eq!(all_tied, Some(1.0));
        assert_eq!(mann_whitney_u(&[], &[1.0]), None);
        assert_eq!(mann_whitney_u(&[f64::NAN], &[1.0]), None);
    }

    #[test]
    fn welch_matches_reference_values() {
        // R: t.test(c(27.5,21.0,19.0,23.6,17.0,17.9,16.9,20.1,21.9,22.6,23.1,19.6,19.0,21.7,21.4),
        //           c(27.1,22.0,20.8,23.4,23.4,23.5,25.8,22.0,24.8,20.2,21.9,22.1,22.9,20.5,24.4))
        // gives t = -2.4554 (a - b), df = 24.988, p-value = 0.02139.
        let a = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4];
        let b = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4];
        let w = welch_t_test(&a, &b).unwrap_or(Welch { t: 0.0, df: 0.0, p: -1.0 });
        assert!(close(w.t, 2.4554, 1e-3), "t {}", w.t);
        assert!(close(w.df, 24.988, 1e-2), "df {}", w.df);
        assert!(close(w.p, 0.02139, 1e-4), "p {}", w.p);
        assert_eq!(welch_t_test(&[1.0, 1.0], &[1.0, 1.0]).map(|w| w.p), Some(1.0));
        assert_eq!(welch_t_test(&[1.0, 1.0], &[2.0, 2.0]).map(|w| w.p), Some(0.0));
        assert_eq!(welch_t_test(&[1.0], &[2.0, 2.0]), None);
    }

    #[test]
    fn benjamini_hochberg_matches_hand_computation() {
        let q = benjamini_hochberg(&[0.01, 0.04, 0.03, 0.5]);
        // Sorted: 0.01*4/1=0.04, 0.03*4/2=0.06, 0.04*4/3=0.0533 -> running min from the top gives 0.0533 for both.
        let expected = [0.04, 0.053333333333, 0.053333333333, 0.5];
        for (got, want) in q.iter().zip(expected.iter()) {
            assert!(close(*got, *want, 1e-9), "{q:?}");
        }
        assert_eq!(benjamini_hochberg(&[f64::NAN]), vec![1.0]);
        assert!(benjamini_hochberg(&[]).is_empty());
    }

    #[test]
    fn bootstrap_ci_covers_the_true_ratio_and_is_reproducible() {
        let mut rng = Rng::new(7);
        let base: Vec<f64> = (0..20).map(|_| 100.0 + rng.normal()).collect();
        let other: Vec<f64> = (0..20).map(|_| 80.0 + rng.normal()).collect();
        let ci = bootstrap_ratio_ci(&base, &other, &mut Rng::new(1), 1000, 0.95);
        let again = bootstrap_ratio_ci(&base, &other, &mut Rng::new(1), 1000, 0.95);
        assert_eq!(ci, again);
        let ci = ci.unwrap_or(ConfidenceInterval { low: 0.0, high: 0.0, level: 0.0 });
        assert!(ci.contains(0.8) && ci.high < 0.82 && ci.low > 0.78, "{ci:?}");
        assert_eq!(bootstrap_ratio_ci(&[0.0, 0.0], &[1.0], &mut rng, 100, 0.95), None);
        assert_eq!(bootstrap_ratio_ci(&[1.0, f64::NAN], &[1.0], &mut rng, 100, 0.95), None);
    }

    #[test]
    fn review_17_change_ratios_read_as_the_change() {
        // 1 + (other - base) / |base|: above zero the plain ratio, below zero the way the value moved.
        for (base, other, want) in [(10.0, 20.0, 2.0), (10.0, 5.0, 0.5), (-10.0, -20.0, 0.0), (-10.0, -5.0, 1.5)] {
            assert_eq!(change_ratio(base, other), want, "{base} -> {other}");
        }
        assert_eq!(change_ratio(-10.0, 10.0), 3.0);
        assert_eq!(change_ratio(0.0, 1.0), f64::INFINITY);
        // A base whose runs straddle zero: every resample has the other side above the base, so every ratio is
        // above 1, where mean(other) / mean(base) gave ratios of both signs.
        let base = [-1.0, 2.0, -2.0, 1.5, -0.4];
        let ci = bootstrap_ratio_ci(&base, &[10.0, 11.0, 12.0, 10.5, 11.5], &mut Rng::new(3), 1000, 0.95);
        assert!(ci.is_some_and(|ci| ci.low > 1.0), "{ci:?}");
    }

    #[test]
    fn fisher_exact_matches_r() {
        // R: fisher.test(matrix(c(3, 0, 0, 3), 2))$p.value = 0.1; fisher.test(matrix(c(10, 0, 2, 8), 2)) = 0.0007144
        assert!(close(fisher_exact(3, 3, 0, 3), 0.1, 1e-12));
        assert!(close(fisher_exact(10, 10, 2, 10), 0.0007144, 1e-6), "{}", fisher_exact(10, 10, 2, 10));
        assert_eq!(fisher_exact(0, 5, 0, 5), 1.0);
        assert_eq!(fisher_exact(1, 0, 0, 5), 1.0);
        assert!(close(fisher_exact(1, 3, 1, 3), 1.0, 1e-12));
    }

    #[test]
    fn review_12_p_values_match_independent_computations() {
        // Exact Mann-Whitney: two-sided p from counting every arrangement of the ranks with Python's integers.
        for (m, n, u, want) in [
            (20, 20, 120.0, 0.030411256038764864),
            (20, 20, 127.0, 0.04909032518937244),
            (7, 12, 15.0, 0.022108438517107247),
            (10, 10, 23.0, 0.04325705254497824),
        ] {
            let p = UDistribution::new(m, n).two_sided_p(u);
            assert!(close(p, want, 1e-13), "{m} v {n}, U = {u}: {p}");
        }
        let r = mann_whitney_u(&[1.0, 2.0, 3.0, 4.0, 6.0], &[5.0, 7.0, 8.0, 9.0, 10.0]).map(|r| (r.u, r.p));
        assert!(r.is_some_and(|(u, p)| u == 1.0 && close(p, 4.0 / 252.0, 1e-15)), "{r:?}");
        // Student's t in closed form: df 1 is 1 - 2 atan(t) / pi, df 2 is 1 - t / sqrt(2 + t^2), and even df sum
        // a finite series in cos(atan(t / sqrt(df))).
        assert!(close(student_t_two_sided_p(10.0, 1.0), 1.0 - 2.0 * 10f64.atan() / std::f64::consts::PI, 1e-12));
        assert!(close(student_t_two_sided_p(2.0, 2.0), 1.0 - 2.0 / 6f64.sqrt(), 1e-12));
        // Welch, 3 v 3 (df 4) and 5 v 5 (df 8), against the even-df series with the t and df worked out by hand.
        let w = welch_t_test(&[1.0, 2.0, 4.0], &[3.0, 5.0, 6.0]).map(|w| (w.t, w.df, w.p));
        assert!(w.is_some_and(|(t, df, p)| close(t, 1.8708286933869707, 1e-12) && close(df, 4.0, 1e-12)
            && close(p, 0.13470193531896724, 1e-10)), "{w:?}");
        let w = welch_t_test(&[1.0, 2.0, 3.0, 4.0, 6.0], &[5.0, 7.0, 8.0, 9.0, 10.0]).map(|w| (w.df, w.p));
        assert!(w.is_some_and(|(df, p)| close(df, 8.0, 1e-12) && close(p, 0.005379107766972813, 1e-10)), "{w:?}");
        // Fisher's exact test: hypergeometric sums over Python's integers, R's 1e-7 tolerance for ties.
        for (fa, ra, fb, rb, want) in [
            (2, 5, 4, 6, 0.5670995670995671),
            (1, 7, 5, 6, 0.02913752913752914),
            (3, 10, 9, 10, 0.01976661109788045),
            (4, 9, 1, 12, 0.11941618752764264),
        ] {
            assert!(close(fisher_exact(fa, ra, fb, rb), want, 1e-12), "{fa}/{ra} v {fb}/{rb}");
        }
    }

    #[test]
    fn effect_sizes() {
        assert_eq!(cohens_d(&[1.0, 2.0, 3.0], &[2.0, 3.0, 4.0]), Some(1.0));
        let r = mann_whitney_u(&[5.0, 6.0], &[1.0, 2.0]).unwrap_or(MannWhitney { u: 0.0, p: 0.0, exact: false });
        assert_eq!(r.cliffs_delta(2, 2), 1.0);
    }
}
