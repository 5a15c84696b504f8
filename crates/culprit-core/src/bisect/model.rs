//! The statistics behind the bisect: a robust Student-t fit of group locations with a shared scale, the drift
//! estimate, the information one more measurement brings, and the mixture sequential test.
//!
//! Everything here is plain f64 math on slices, so the posterior and the decision rules can be tested with tables.

/// Degrees of freedom of the Student-t likelihood. Four is heavy-tailed enough that a 5-sigma outlier weighs about a
/// fifth of a normal sample, and light enough that Gaussian data lose only a few percent of efficiency.
pub const T_DOF: f64 = 4.0;

/// Iterations of the EM fit. The fit starts from medians, so a dozen steps reach a fixed point to well below the
/// resolution that matters for the posterior.
const EM_ITERATIONS: usize = 14;

/// The maximum-likelihood fit of a Student-t model where each group has its own location and all share one scale.
#[derive(Debug, Clone, PartialEq)]
pub struct TFit {
    /// One location per group; `NaN` for an empty group.
    pub locations: Vec<f64>,
    /// The shared scale of the t distribution (not its standard deviation).
    pub scale: f64,
    /// The log-likelihood at the fit, up to a constant that depends only on the number of values.
    pub loglik: f64,
    /// Number of values per group.
    pub counts: Vec<usize>,
}

impl TFit {
    /// Standard error of a group's location: the asymptotic value for t data, (nu+3)/(nu+1) s^2 / n.
    pub fn standard_error(&self, group: usize) -> f64 {
        let n = self.counts.get(group).copied().unwrap_or(0);
        if n == 0 {
            return f64::INFINITY;
        }
        self.scale * ((T_DOF + 3.0) / (T_DOF + 1.0) / n as f64).sqrt()
    }

    /// Group `to`'s location minus group `from`'s, and the standard error of that difference.
    pub fn difference(&self, from: usize, to: usize) -> (f64, f64) {
        let se = (self.standard_error(from).powi(2) + self.standard_error(to).powi(2)).sqrt();
        (self.locations[to] - self.locations[from], se)
    }

    /// The scale expressed as a Gaussian-equivalent standard deviation, for effect sizes in sigma units.
    /// For Gaussian data the t(4) maximum-likelihood scale is close to 0.83 sigma.
    pub fn sigma(&self) -> f64 {
        self.scale / 0.83
    }
}

fn median_of(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        0.5 * (values[mid - 1] + values[mid])
    }
}

/// Fits the grouped Student-t model by EM (iteratively reweighted means), estimating the shared scale with one
/// degree of freedom taken per non-empty group (so that groups of one value do not shrink it). `None` when there
/// are fewer values than groups plus one, or a value is not finite.
pub fn fit_t(groups: &[&[f64]]) -> Option<TFit> {
    fit_t_inner(groups, None)
}

/// [`fit_t`] with the scale given (the within-commit noise), fitting only the locations. Log-likelihoods of fits
/// with the same scale and the same values are comparable: this is how the bisect weighs partitions of history.
pub fn fit_t_fixed_scale(groups: &[&[f64]], scale: f64) -> Option<TFit> {
    if !(scale > 0.0) || !scale.is_finite() {
        return None;
    }
    fit_t_inner(groups, Some(scale))
}

fn fit_t_inner(groups: &[&[f64]], fixed_scale: Option<f64>) -> Option<TFit> {
    let total: usize = groups.iter().map(|g| g.len()).sum();
    let nonempty = groups.iter().filter(|g| !g.is_empty()).count();
    if groups.iter().any(|g| g.iter().any(|v| !v.is_finite())) {
        return None;
    }
    if fixed_scale.is_none() && total < nonempty + 1 || total == 0 {
        return None;
    }
    let dof = total.saturating_sub(nonempty).max(1) as f64;
    let counts: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    let mut locations: Vec<f64> = groups.iter().map(|g| median_of(&mut g.to_vec())).collect();
    let magnitude = groups.iter().flat_map(|g| g.iter()).fold(0.0f64, |m, v| m.max(v.abs()));
    // A floor keeps identical values (integer counters, a constant benchmark) from collapsing the scale to zero.
    let floor = 1e-9 * magnitude.max(1e-300);
    let mut scale = match fixed_scale {
        Some(s) => s,
        None => {
            let mut residuals: Vec<f64> = Vec::with_capacity(total);
            for (g, loc) in groups.iter().zip(&locations) {
                residuals.extend(g.iter().map(|v| (v - loc).abs()));
            }
            let mean_abs = residuals.iter().sum::<f64>() / dof;
            // 1.4826 rounds `stats::MAD_TO_SIGMA` (1.5e-6 apart). The simulated table was measured with it, and
            // a bisect's decisions are chaotic in their inputs: the exact constant moved seed 1's 500 single-step
            // jobs from 108.742 runs and none wrong to 110.99 and one wrong, as another seed would; the rounded
            // value is kept so that the documented rows stay reproducible.
            (median_of(&mut residuals) * 1.4826 * (total as f64 / dof).sqrt()).max(mean_abs).max(floor)
        }
    };
    for _ in 0..EM_ITERATIONS {
        let mut weighted_square = 0.0;
        for (g, loc) in groups.iter().zip(locations.iter_mut()) {
            if g.is_empty() {
                continue;
            }
            let (mut sw, mut swy) = (0.0, 0.0);
            for &v in g.iter() {
                let r = v - *loc;
                let w = (T_DOF + 1.0) / (T_DOF + r * r / (scale * scale));
                sw += w;
                swy += w * v;
                weighted_square += w * r * r;
            }
            *loc = swy / sw;
        }
        if fixed_scale.is_none() {
            scale = (weighted_square / dof).sqrt().max(floor);
        }
    }
    let mut loglik = -(total as f64) * scale.ln();
    for (g, loc) in groups.iter().zip(&locations) {
        for &v in g.iter() {
            let z = (v - loc) / scale;
            loglik -= 0.5 * (T_DOF + 1.0) * (z * z / T_DOF).ln_1p();
        }
    }
    Some(TFit { locations, scale, loglik, counts })
}

/// Weighted sums of runs (weight w, value y) for the two-level Gaussian model of a partition of history. Sums add,
/// so the statistics of a group of commits are the sum of the commits' statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Moments {
    pub w: f64,
    pub y: f64,
    pub yy: f64,
}

impl Moments {
    pub fn add(&mut self, weight: f64, value: f64) {
        self.w += weight;
        self.y += weight * value;
        self.yy += weight * value * value;
    }

    pub fn plus(&self, other: &Moments) -> Moments {
        Moments { w: self.w + other.w, y: self.y + other.y, yy: self.yy + other.yy }
    }

    pub fn minus(&self, other: &Moments) -> Moments {
        Moments { w: self.w - other.w, y: self.y - other.y, yy: self.yy - other.yy }
    }

    /// The weighted sum of squares of the runs about their own mean.
    pub fn squares_about_mean(&self) -> f64 {
        self.yy - self.y * self.y / self.w
    }
}

/// The fit of "every run before the change sits at one level, every run after at another", with its marginal
/// likelihood.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelsFit {
    pub before: f64,
    pub after: f64,
    /// Residual standard deviation.
    pub sigma: f64,
    /// Standard error of `after - before`.
    pub step_se: f64,
    /// Standard errors of the two levels.
    pub before_se: f64,
    pub after_se: f64,
    /// Log marginal likelihood up to a constant shared by every partition of the same runs: the two levels
    /// integrated out under flat priors and the noise under the scale-invariant prior. The integration is what
    /// accounts for the uncertainty of the levels and of the noise: with few runs it is the Student-t evidence, not
    /// an overconfident plug-in of an estimated noise (which once named a wrong commit after 4 runs a side had
    /// underestimated the noise by half).
    pub log_evidence: f64,
}

/// Parameters of the partition model: two levels.
const LEVEL_PARAMETERS: f64 = 2.0;

/// Fits the two-level model to the runs summarised by `before` and `after`. `None` when there are not more
/// (weighted) runs than parameters or a group is empty.
///
/// A linear trend fitted jointly in every partition was tried and rejected: the search order ties time to
/// position (later runs sit ever closer to the change), so a free trend mimics a partition and the posterior
/// learned about half as fast. Drift is removed beforehand instead, from the slope within commits.
pub fn fit_levels(before: &Moments, after: &Moments) -> Option<LevelsFit> {
    let (w0, w1) = (before.w, after.w);
    let n = w0 + w1;
    if !(w0 > 0.0 && w1 > 0.0) || n <= LEVEL_PARAMETERS + 0.5 {
        return None;
    }
    let total = before.squares_about_mean() + after.squares_about_mean();
    let scale = (before.yy + after.yy).abs().max(1e-300);
    // A floor keeps identical values (a constant benchmark) from taking the log of zero; it is the same for every
    // partition of the same runs, so their evidences stay comparable.
    let residual = total.max(1e-14 * scale);
    let dof = n - LEVEL_PARAMETERS;
    let variance = residual / dof;
    let log_evidence = -0.5 * (w0.ln() + w1.ln()) - 0.5 * dof * residual.ln();
    Some(LevelsFit {
        before: before.y / w0,
        after: after.y / w1,
        sigma: variance.sqrt(),
        step_se: (variance * (1.0 / w0 + 1.0 / w1)).sqrt(),
        before_se: (variance / w0).sqrt(),
        after_se: (variance / w1).sqrt(),
        log_evidence,
    })
}

/// Log marginal likelihood of "each group of runs sits at its own level, all with one noise", with the levels
/// integrated out under flat priors and the noise under the scale-invariant prior, constants included (up to
/// the flat priors' own constant, one per level): models with different numbers of levels can be compared when
/// the extra level gets a proper prior (see the staircase check in the machine). Returns the log evidence and
/// the residual standard deviation; `None` when a group is empty or there are not more runs than levels.
pub fn levels_log_evidence(groups: &[Moments]) -> Option<(f64, f64)> {
    let k = groups.len() as f64;
    if groups.iter().any(|g| !(g.w > 0.0)) {
        return None;
    }
    let n: f64 = groups.iter().map(|g| g.w).sum();
    if n <= k + 0.5 {
        return None;
    }
    let residual: f64 = groups.iter().map(Moments::squares_about_mean).sum();
    let scale: f64 = groups.iter().map(|g| g.yy.abs()).sum::<f64>().max(1e-300);
    let residual = residual.max(1e-14 * scale);
    let half_dof = 0.5 * (n - k);
    let log_evidence = -half_dof * (2.0 * std::f64::consts::PI).ln()
        - 0.5 * groups.iter().map(|g| g.w.ln()).sum::<f64>()
        + statrs::function::gamma::ln_gamma(half_dof)
        - half_dof * (0.5 * residual).ln()
        - std::f64::consts::LN_2;
    Some((log_evidence, (residual / (n - k)).sqrt()))
}

/// The fit of two changes that add, on a history with merges: the runs of commits holding neither change sit at
/// `low`, of those holding both at `high`, of those holding the first only at `middle`, and of those holding the
/// second only at `low + high - middle`. In a line the last group is empty (a commit holding the later change holds
/// the earlier one) and this is the three-level model of [`levels_log_evidence`], with the same evidence; after a
/// merge, a commit of one branch can hold the second change without the first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdditiveFit {
    /// As [`levels_log_evidence`]'s, with the three levels integrated out under flat priors.
    pub log_evidence: f64,
    pub sigma: f64,
    /// (estimate, standard error) of each level.
    pub low: (f64, f64),
    pub middle: (f64, f64),
    pub high: (f64, f64),
}

/// Fits [`AdditiveFit`]'s model to the runs of the commits holding neither change, the first only, the second
/// only and both. `None` when `neither` or `both` is empty, when the first and the second are both empty (the
/// middle level is then unknown), or when there are not more runs than levels.
pub fn additive_levels(neither: &Moments, first: &Moments, second: &Moments, both: &Moments) -> Option<AdditiveFit> {
    if !(neither.w > 0.0 && both.w > 0.0 && (first.w > 0.0 || second.w > 0.0)) {
        return None;
    }
    // Parameters (low, high, middle); each group's level is a row of the design times them.
    let groups: [(&Moments, [f64; 3]); 4] =
        [(neither, [1.0, 0.0, 0.0]), (both, [0.0, 1.0, 0.0]), (first, [0.0, 0.0, 1.0]), (second, [1.0, 1.0, -1.0])];
    let n: f64 = groups.iter().map(|(g, _)| g.w).sum();
    if n <= 3.5 {
        return None;
    }
    let mut normal = [[0.0; 3]; 3];
    let mut rhs = [0.0; 3];
    for (g, x) in &groups {
        for i in 0..3 {
            rhs[i] += g.y * x[i];
            for j in 0..3 {
                normal[i][j] += g.w * x[i] * x[j];
            }
        }
    }
    let inverse = invert3(&normal)?;
    let theta: [f64; 3] = std::array::from_fn(|i| (0..3).map(|j| inverse[i][j] * rhs[j]).sum());
    // The residual: each group's squares about its own mean, plus its weight times the distance of that mean from
    // the fitted level (the two are orthogonal), which keeps its precision where the levels are far from zero.
    let mut residual = 0.0;
    for (g, x) in &groups {
        if g.w > 0.0 {
            let fitted: f64 = (0..3).map(|i| x[i] * theta[i]).sum();
            let mean = g.y / g.w;
            residual += g.squares_about_mean() + g.w * (mean - fitted) * (mean - fitted);
        }
    }
    let scale: f64 = groups.iter().map(|(g, _)| g.yy.abs()).sum::<f64>().max(1e-300);
    let residual = residual.max(1e-14 * scale);
    let det = determinant3(&normal);
    if !(det > 0.0) {
        return None;
    }
    let half_dof = 0.5 * (n - 3.0);
    let log_evidence = -half_dof * (2.0 * std::f64::consts::PI).ln() - 0.5 * det.ln()
        + statrs::function::gamma::ln_gamma(half_dof)
        - half_dof * (0.5 * residual).ln()
        - std::f64::consts::LN_2;
    let variance = residual / (n - 3.0);
    let level = |i: usize| (theta[i], (variance * inverse[i][i]).max(0.0).sqrt());
    Some(AdditiveFit { log_evidence, sigma: variance.sqrt(), low: level(0), high: level(1), middle: level(2) })
}

fn determinant3(m: &[[f64; 3]; 3]) -> f64 {
    m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
}

/// The inverse of a 3 by 3 matrix by cofactors; `None` when it is singular.
fn invert3(m: &[[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let det = determinant3(m);
    if !(det.abs() > 1e-300) || !det.is_finite() {
        return None;
    }
    let cofactor = |r: usize, c: usize| {
        let (r1, r2) = ((r + 1) % 3, (r + 2) % 3);
        let (c1, c2) = ((c + 1) % 3, (c + 2) % 3);
        m[r1][c1] * m[r2][c2] - m[r1][c2] * m[r2][c1]
    };
    // The inverse is the transposed cofactor matrix over the determinant.
    Some(std::array::from_fn(|i| std::array::from_fn(|j| cofactor(j, i) / det)))
}

/// Weight of a run whose residual from its own commit's robust level is `residual`, given the robust scale of the
/// Student-t fit: one for ordinary runs, falling like a t(4) density's EM weight for runs far out, so that a
/// 5-sigma outlier counts for about an eighth of a run.
pub fn outlier_weight(residual: f64, scale: f64) -> f64 {
    if !(scale > 0.0) || !residual.is_finite() {
        return 1.0;
    }
    let z2 = residual * residual / (scale * scale);
    ((T_DOF + 1.0) / (T_DOF + z2)).min(1.0)
}

/// z-score a drift slope needs before values are corrected for it.
pub const DRIFT_Z: f64 = 3.0;

/// The drift slope per run index estimated within commits (each commit's own mean removed), shrunk towards zero by
/// its own uncertainty so that noise alone does not invent a drift. `values` holds (commit, run index, value).
pub fn drift_slope(values: &[(usize, f64, f64)], commits: usize) -> f64 {
    within_commits_coefficient(values, commits, |t| t)
}

/// How many runs a warm-up's excess takes to fall by a factor e in [`warmup_excess`]'s model.
pub const WARMUP_RUNS: f64 = 4.0;

/// The excess of a bisect's first run over its level (a warm-up: a cold cache, a CPU clocking up, a machine that
/// settles after a build), in the model where run `t`'s excess is this times `exp(-t / WARMUP_RUNS)`: estimated
/// within commits as [`drift_slope`] is, and zero unless it is as clearly there. `values` holds (commit, run index,
/// value). A linear drift fitted to such runs reads the settling as a slope and carries it to every later run,
/// moving commits measured long after the machine settled; this term is gone a few dozen runs in.
pub fn warmup_excess(values: &[(usize, f64, f64)], commits: usize) -> f64 {
    within_commits_coefficient(values, commits, warmup_shape)
}

/// The share of the warm-up's first excess left at run `t` ([`warmup_excess`]).
pub fn warmup_shape(t: f64) -> f64 {
    (-t / WARMUP_RUNS).exp()
}

/// The coefficient of `regressor(run index)` in a fit of the values with one level per commit (commits run once
/// carry none of it), when its t statistic passes the test of [`DRIFT_Z`]'s tail; zero otherwise.
fn within_commits_coefficient(values: &[(usize, f64, f64)], commits: usize, regressor: impl Fn(f64) -> f64) -> f64 {
    let mut sum_x = vec![0.0; commits];
    let mut sum_y = vec![0.0; commits];
    let mut count = vec![0usize; commits];
    for &(c, t, y) in values {
        if let (Some(sx), Some(sy), Some(n)) = (sum_x.get_mut(c), sum_y.get_mut(c), count.get_mut(c)) {
            *sx += regressor(t);
            *sy += y;
            *n += 1;
        }
    }
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for &(c, t, y) in values {
        let n = count.get(c).copied().unwrap_or(0);
        if n < 2 {
            continue;
        }
        let dx = regressor(t) - sum_x[c] / n as f64;
        let dy = y - sum_y[c] / n as f64;
        sxx += dx * dx;
        sxy += dx * dy;
    }
    if sxx <= 0.0 {
        return 0.0;
    }
    let slope = sxy / sxx;
    // Residual variance after removing commit means and the slope, for the slope's standard error.
    let mut rss = 0.0;
    let mut dof = 0usize;
    for &(c, t, y) in values {
        let n = count.get(c).copied().unwrap_or(0);
        if n < 2 {
            continue;
        }
        let r = (y - sum_y[c] / n as f64) - slope * (regressor(t) - sum_x[c] / n as f64);
        rss += r * r;
        dof += 1;
    }
    let groups = count.iter().filter(|&&n| n >= 2).count();
    let dof = dof.saturating_sub(groups + 1).max(1);
    let se = (rss / dof as f64 / sxx).sqrt();
    // Correcting for a drift that is not there moves every level by the slope's noise times its lever arm, which
    // costs more than it saves; only a clearly significant slope is used. The slope's t statistic has `dof` degrees
    // of freedom, so it must pass the t test of DRIFT_Z's normal tail (5.5 at 5 degrees of freedom, 4.0 at 10), not
    // DRIFT_Z itself: with four runs at each of two commits (5 degrees of freedom), |t| >= 3 happens by chance in 3%
    // of cases rather than 0.27%, and a false slope moves commits run once later off their levels. The t quantile
    // is always above DRIFT_Z, so the normal test is a cheap first cut.
    let significant = slope.abs() >= DRIFT_Z * se
        && (se == 0.0 || crate::stats::student_t_two_sided_p(slope / se, dof as f64) <= drift_tail());
    if significant {
        slope
    } else {
        0.0
    }
}

/// The two-sided tail a drift slope's t statistic must fall in: that of DRIFT_Z standard normal errors.
fn drift_tail() -> f64 {
    2.0 * crate::stats::normal_sf(DRIFT_Z)
}

/// The most points of [`mixture_information`]'s grid.
const MIXTURE_GRID_MAX: usize = 600;

/// Mutual information in bits between which component of a Gaussian mixture a measurement comes from and the
/// measurement itself: `components` are (weight, mean, variance), weights summing to one. H(Y) is integrated on a
/// grid; the components' own entropies are exact.
pub fn mixture_information(components: &[(f64, f64, f64)]) -> f64 {
    let usable: Vec<(f64, f64, f64)> =
        components.iter().copied().filter(|&(w, m, v)| w > 0.0 && m.is_finite() && v > 0.0 && v.is_finite()).collect();
    let total: f64 = usable.iter().map(|c| c.0).sum();
    if usable.len() < 2 || !(total > 0.0) {
        return 0.0;
    }
    let min_sd = usable.iter().map(|c| c.2.sqrt()).fold(f64::INFINITY, f64::min);
    let lo = usable.iter().map(|c| c.1 - 7.0 * c.2.sqrt()).fold(f64::INFINITY, f64::min);
    let hi = usable.iter().map(|c| c.1 + 7.0 * c.2.sqrt()).fold(f64::NEG_INFINITY, f64::max);
    let norms: Vec<(f64, f64, f64)> =
        usable.iter().map(|&(w, m, v)| (w / total / (2.0 * std::f64::consts::PI * v).sqrt(), m, -0.5 / v)).collect();
    let density = |y: f64| -> f64 { norms.iter().map(|&(a, m, b)| a * (b * (y - m) * (y - m)).exp()).sum() };
    let wanted = ((hi - lo) / (0.25 * min_sd)).ceil();
    let mut entropy = 0.0;
    if wanted <= MIXTURE_GRID_MAX as f64 {
        let points = (wanted as usize).max(16);
        let step = (hi - lo) / points as f64;
        for i in 0..=points {
            let p = density(lo + i as f64 * step);
            if p > 0.0 {
                entropy -= p * p.log2() * step;
            }
        }
    } else {
        // Components too far apart for one grid of a quarter of the narrowest one's deviation (a metric without
        // noise, whose levels are thousands of deviations apart): one grid over all of them stepped over every
        // peak and read no information at all, and a bisect of such a metric gave up after good and bad. H(Y) is
        // then the sum over components of their weight times the expectation of -log p(Y) under each, each on a
        // grid of its own.
        for (&(a, m, b), &(_, _, v)) in norms.iter().zip(&usable) {
            let sd = v.sqrt();
            let step = 16.0 * sd / MIXTURE_GRID_MAX as f64;
            for i in 0..=MIXTURE_GRID_MAX {
                let y = m - 8.0 * sd + i as f64 * step;
                let own = a * (b * (y - m) * (y - m)).exp();
                let p = density(y);
                if own > 0.0 && p > 0.0 {
                    entropy -= own * p.log2() * step;
                }
            }
        }
    }
    let conditional: f64 = usable
        .iter()
        .map(|&(w, _, v)| w / total * 0.5 * (2.0 * std::f64::consts::PI * std::f64::consts::E * v).log2())
        .sum();
    (entropy - conditional).max(0.0)
}

/// Log of the mixture sequential probability ratio for "the true difference is zero" against a normal prior of
/// standard deviation `tau` on it, given an estimated difference and its standard error. Rejecting zero when it
/// exceeds ln(1/alpha) keeps the false-alarm rate below alpha however often the test is looked at (Robbins'
/// mixture martingale), which is what lets the bisect add runs until it is sure without inflating its error.
pub fn mixture_log_ratio(difference: f64, standard_error: f64, tau: f64) -> f64 {
    if !(standard_error > 0.0) || !difference.is_finite() || !(tau > 0.0) {
        return 0.0;
    }
    let v = standard_error * standard_error;
    let t2 = tau * tau;
    0.5 * (v / (v + t2)).ln() + t2 * difference * difference / (2.0 * v * (v + t2))
}

/// [`mixture_log_ratio`] with the prior restricted to positive differences (a half-normal of scale `tau`): for a
/// change whose direction is known. It exceeds the two-sided ratio by up to ln 2 when the difference is positive.
pub fn one_sided_mixture_log_ratio(difference: f64, standard_error: f64, tau: f64) -> f64 {
    let two_sided = mixture_log_ratio(difference, standard_error, tau);
    if !(standard_error > 0.0) || !difference.is_finite() || !(tau > 0.0) {
        return 0.0;
    }
    let v = standard_error * standard_error;
    let t2 = tau * tau;
    let posterior_mean = t2 * difference / (v + t2);
    let posterior_sd = (t2 * v / (v + t2)).sqrt();
    let tail = crate::stats::normal_cdf(posterior_mean / posterior_sd).max(1e-300);
    two_sided + (2.0 * tail).ln()
}

/// Log likelihood ratio of "the step is `expected`" (or half of it, equal weights) against "there is no step",
/// for an estimated step with a normal standard error: the sequential probability ratio test the verification
/// runs on fresh pairs. Returns (the mixture's log ratio, the larger of the two alternatives' log ratios). With
/// `expected` fixed before the data it tests, the mixture is a likelihood-ratio martingale under "no step", so
/// stopping when it exceeds ln(1/alpha) keeps the false alarm below alpha however often it is looked at; the
/// larger log ratio below -ln(1/alpha) says neither step is there.
pub fn step_log_ratio(step: f64, standard_error: f64, expected: f64) -> (f64, f64) {
    if !(standard_error > 0.0) || !step.is_finite() || !(expected > 0.0) || !expected.is_finite() {
        return (0.0, 0.0);
    }
    let v = standard_error * standard_error;
    let at = |delta: f64| (delta * step - 0.5 * delta * delta) / v;
    let (full, half) = (at(expected), at(0.5 * expected));
    let larger = full.max(half);
    let mixture = larger + (0.5 * ((full - larger).exp() + (half - larger).exp())).ln();
    (mixture, larger)
}

/// The ratio a / b with a normal-approximation (delta method) interval at the given two-sided z, for shares of a
/// change. Returns (estimate, low, high).
pub fn ratio_interval(a: f64, se_a: f64, b: f64, se_b: f64, z: f64) -> (f64, f64, f64) {
    ratio_interval_correlated(a, se_a, b, se_b, 0.0, z)
}

/// [`ratio_interval`] for estimates that share runs, `covariance` being the covariance of a and b. A step measured
/// on runs that are also part of the change it is divided by (the culprit's runs in the level after the change,
/// its parent's in the level before) moves with it: ignoring that, a lone culprit's 90% share interval held the
/// true share in 97% of simulated jobs. The covariance is clamped to what the two standard errors allow.
pub fn ratio_interval_correlated(a: f64, se_a: f64, b: f64, se_b: f64, covariance: f64, z: f64) -> (f64, f64, f64) {
    if b == 0.0 || !b.is_finite() || !a.is_finite() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let r = a / b;
    // A metric without noise (a captured count) gives standard errors of zero, and a variance estimated from such
    // runs can be NaN: the bound is then no bound, and NaN bounds would make `clamp` panic.
    let bound = se_a * se_b;
    let covariance = if bound.is_finite() && covariance.is_finite() { covariance.clamp(-bound, bound) } else { 0.0 };
    let variance = (se_a * se_a + r * r * se_b * se_b - 2.0 * r * covariance).max(0.0);
    let se = variance.sqrt() / b.abs();
    (r, r - z * se, r + z * se)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moments(values: &[f64]) -> Moments {
        let mut m = Moments::default();
        for &v in values {
            m.add(1.0, v);
        }
        m
    }

    #[test]
    fn additive_levels_in_a_line_are_the_three_level_model() {
        let (low, middle, high) =
            (moments(&[0.1, -0.2, 0.0, 0.3]), moments(&[0.7, 0.4, 0.6]), moments(&[1.1, 0.9, 1.3, 1.0, 0.8]));
        let fit = additive_levels(&low, &middle, &Moments::default(), &high).expect("fit");
        let (evidence, sigma) = levels_log_evidence(&[low, middle, high]).expect("evidence");
        assert!((fit.log_evidence - evidence).abs() < 1e-9, "{} against {evidence}", fit.log_evidence);
        assert!((fit.sigma - sigma).abs() < 1e-12);
        assert!((fit.middle.0 - 0.5667).abs() < 1e-3, "{:?}", fit.middle);
        assert!((fit.middle.1 - sigma / 3f64.sqrt()).abs() < 1e-12);
        // The second change alone, on the other branch of a merge: the same model with the roles swapped reads the
        // middle level off the group's mirror image.
        let fit = additive_levels(&low, &Moments::default(), &middle, &high).expect("fit");
        assert!((fit.log_evidence - evidence).abs() < 1e-9);
        assert!((fit.middle.0 - (0.05 + 1.02 - 0.5667)).abs() < 1e-3, "{:?}", fit);
    }

    #[test]
    fn additive_levels_hold_the_mirror_group_to_the_sum_of_the_steps() {
        // Commits holding the second change only sit at low + high - middle: data that do fit better than data at
        // the first group's level.
        let (low, first, high) =
            (moments(&[0.0, 0.1, -0.1, 0.0]), moments(&[0.3, 0.2, 0.4]), moments(&[1.0, 1.1, 0.9]));
        let additive = additive_levels(&low, &first, &moments(&[0.7, 0.8, 0.6]), &high).expect("fit");
        let not_additive = additive_levels(&low, &first, &moments(&[0.3, 0.2, 0.4]), &high).expect("fit");
        assert!(additive.log_evidence > not_additive.log_evidence + 3.0, "{additive:?} {not_additive:?}");
        assert!((additive.middle.0 - 0.3).abs() < 0.02, "{additive:?}");
        assert!(additive_levels(&low, &Moments::default(), &Moments::default(), &high).is_none());
    }

    #[test]
    fn t_fit_recovers_locations_and_resists_an_outlier() {
        let a = [10.0, 10.2, 9.8, 10.1, 9.9, 10.0, 30.0];
        let b = [12.0, 12.1, 11.9, 12.0];
        let fit = fit_t(&[&a, &b]).expect("fit");
        assert!((fit.locations[0] - 10.0).abs() < 0.15, "{:?}", fit.locations);
        assert!((fit.locations[1] - 12.0).abs() < 0.15, "{:?}", fit.locations);
        assert!(fit.scale < 0.5, "scale {}", fit.scale);
    }

    #[test]
    fn wrong_grouping_has_lower_likelihood() {
        let good = [0.1, -0.2, 0.05, 0.0];
        let bad = [1.5, 1.4, 1.6, 1.55];
        let right = fit_t(&[&good, &bad]).expect("fit");
        let mixed_a = [0.1, -0.2, 1.5, 1.4];
        let mixed_b = [0.05, 0.0, 1.6, 1.55];
        let wrong = fit_t(&[&mixed_a, &mixed_b]).expect("fit");
        assert!(right.loglik > wrong.loglik + 5.0);
    }

    #[test]
    fn mixture_information_table() {
        // Two unit-variance components, weights 1 - q and q, means 0 and d: the information of one measurement
        // about the side of a change.
        let two = |q: f64, d: f64| mixture_information(&[(1.0 - q, 0.0, 1.0), (q, d, 1.0)]);
        // (q, d, expected bits, tolerance): no separation, none; full separation, the entropy of q; a 1.5 sigma
        // split at one half, the 0.32 bit per run of ../shared/bisect-notes.md.
        let cases = [
            (0.5, 0.0, 0.0, 1e-9),
            (0.5, 100.0, 1.0, 1e-9),
            (0.0, 1.5, 0.0, 1e-12),
            (0.5, 1.5, 0.32, 0.02),
            (0.9, 20.0, 0.469, 0.001),
        ];
        for (q, d, want, tol) in cases {
            let got = two(q, d);
            assert!((got - want).abs() <= tol, "I({q}, {d}) = {got}, want {want}");
        }
        assert!(two(0.5, 2.0) > two(0.5, 1.0));
        assert!(two(0.5, 1.5) > two(0.2, 1.5));
        // Four equally likely, well separated components carry two bits; a wider component carries less.
        let four: Vec<(f64, f64, f64)> = (0..4).map(|i| (0.25, 50.0 * i as f64, 1.0)).collect();
        assert!((mixture_information(&four) - 2.0).abs() < 1e-6);
        assert!(mixture_information(&[(0.5, 0.0, 1.0), (0.5, 1.5, 4.0)]) < two(0.5, 1.5));
        // Weights need not be normalised; unusable components are ignored.
        assert!((mixture_information(&[(2.0, 0.0, 1.0), (2.0, 100.0, 1.0), (1.0, 5.0, 0.0)]) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn mixture_ratio_grows_with_evidence() {
        assert!(mixture_log_ratio(0.0, 1.0, 1.0) < 0.0);
        assert!(mixture_log_ratio(3.0, 0.5, 1.0) > (100.0f64).ln());
        assert!(mixture_log_ratio(0.2, 0.5, 1.0) < (100.0f64).ln());
        assert_eq!(mixture_log_ratio(1.0, 0.0, 1.0), 0.0);
    }

    #[test]
    fn drift_slope_found_within_commits_and_zero_without() {
        let mut values = Vec::new();
        for t in 0..40 {
            let commit = t % 2;
            let level = if commit == 1 { 5.0 } else { 0.0 };
            values.push((commit, t as f64, level + 0.1 * t as f64));
        }
        let slope = drift_slope(&values, 2);
        assert!((slope - 0.1).abs() < 1e-6, "slope {slope}");
        let flat: Vec<(usize, f64, f64)> = (0..40).map(|t| (t % 2, t as f64, (t % 2) as f64 * 5.0)).collect();
        assert_eq!(drift_slope(&flat, 2), 0.0);
    }

    /// A warm-up (the first runs 4 sigma off, the excess falling by e every 4 runs) is read as one, and what is left
    /// holds no drift a linear fit would carry to later runs; Gaussian runs hold no warm-up, nor does a slow drift
    /// (session 57).
    #[test]
    fn warmup_excess_is_read_where_the_first_runs_are_off() {
        let runs = |seed: u64, warmup: f64, drift: f64| -> Vec<(usize, f64, f64)> {
            let mut rng = crate::rng::Rng::new(seed);
            (0..40)
                .map(|t| {
                    let commit = t % 2;
                    let t = t as f64;
                    let value = 10.0 * commit as f64 + warmup * warmup_shape(t) + drift * t + 0.1 * rng.normal();
                    (commit, t, value)
                })
                .collect()
        };
        for seed in 1..=20 {
            let warm = runs(seed, 0.4, 0.0);
            // Its standard error here is about 0.065 (the first runs carry it: sxx is about 2.3).
            let excess = warmup_excess(&warm, 2);
            assert!((excess - 0.4).abs() < 0.2, "seed {seed}: {excess}");
            // The drift slope of the raw runs reads the settling as a slope; of the runs less the warm-up, none.
            let settled: Vec<(usize, f64, f64)> =
                warm.iter().map(|&(c, t, v)| (c, t, v - excess * warmup_shape(t))).collect();
            assert_eq!(drift_slope(&settled, 2), 0.0, "seed {seed}");
            assert_eq!(warmup_excess(&runs(seed, 0.0, 0.0), 2), 0.0, "seed {seed}");
            assert_eq!(warmup_excess(&runs(seed, 0.0, 0.001), 2), 0.0, "seed {seed}");
        }
        let raw_slopes = (1..=20).filter(|&seed| drift_slope(&runs(seed, 0.4, 0.0), 2) != 0.0).count();
        assert!(raw_slopes > 0, "the warm-up read as a drift in none of the raw series");
    }

    #[test]
    fn drift_slope_is_tested_at_its_degrees_of_freedom() {
        // Two commits interleaved, `runs` runs in all, each run its commit's level plus a drift of `slope` per run
        // plus a residual of +-1 (1, -1, -1, 1 over each commit's successive runs) orthogonal to run order, so that
        // the fitted slope is `slope` exactly and its standard error is sqrt(runs / dof / sxx), dof = runs - 3.
        let values = |runs: usize, slope: f64| -> Vec<(usize, f64, f64)> {
            (0..runs)
                .map(|t| {
                    let residual = [1.0, -1.0, -1.0, 1.0][(t / 2) % 4];
                    (t % 2, t as f64, 5.0 * (t % 2) as f64 + slope * t as f64 + residual)
                })
                .collect()
        };
        let se = |runs: usize| {
            let per_commit = runs / 2;
            let centre = (per_commit as f64 - 1.0) / 2.0;
            let sxx: f64 = 2.0 * (0..per_commit).map(|k| (2.0 * (k as f64 - centre)).powi(2)).sum::<f64>();
            (runs as f64 / (runs - 3) as f64 / sxx).sqrt()
        };
        // (runs, t statistic, slope kept): 3 normal standard errors is 5.5 at 5 degrees of freedom and 3.2 at 37.
        let cases = [(8, 4.0, false), (8, 6.0, true), (40, 4.0, true), (40, 2.5, false)];
        for (runs, t, kept) in cases {
            let slope = t * se(runs);
            let fitted = drift_slope(&values(runs, slope), 2);
            let want = if kept { slope } else { 0.0 };
            assert!((fitted - want).abs() < 1e-9, "{runs} runs, t {t}: {fitted} against {want}");
        }
    }

    #[test]
    fn step_log_ratio_table() {
        // (step, standard error, expected step, mixture log ratio above, below)
        let cases = [
            (1.5, 0.3, 1.5, 10.0, f64::INFINITY),
            (0.0, 0.3, 1.5, f64::NEG_INFINITY, -3.5),
            (0.75, 0.3, 1.5, 2.0, f64::INFINITY),
            (-1.0, 0.3, 1.5, f64::NEG_INFINITY, -10.0),
        ];
        for (step, se, expected, above, below) in cases {
            let (mixture, larger) = step_log_ratio(step, se, expected);
            assert!(mixture > above && mixture < below, "({step}, {se}, {expected}) gave {mixture}");
            assert!(larger >= mixture && larger <= mixture + 2f64.ln() + 1e-12);
        }
        assert_eq!(step_log_ratio(1.0, 0.0, 1.0), (0.0, 0.0));
    }

    #[test]
    fn ratio_interval_brackets_estimate() {
        let (r, lo, hi) = ratio_interval(1.0, 0.1, 2.0, 0.1, 1.645);
        assert!((r - 0.5).abs() < 1e-12 && lo < r && r < hi);
        assert!(ratio_interval(1.0, 0.1, 0.0, 0.1, 1.645).0.is_nan());
    }

    #[test]
    fn correlated_ratio_interval_reduces_to_the_independent_one_and_to_a_point() {
        assert_eq!(
            ratio_interval_correlated(1.0, 0.1, 2.0, 0.2, 0.0, 1.645),
            ratio_interval(1.0, 0.1, 2.0, 0.2, 1.645)
        );
        // A change divided by itself is exactly 1, however noisy it is.
        let (r, lo, hi) = ratio_interval_correlated(2.0, 0.3, 2.0, 0.3, 0.09, 1.645);
        assert_eq!((r, lo, hi), (1.0, 1.0, 1.0));
        // Covariance beyond what the standard errors allow is clamped rather than making the variance negative.
        let (_, lo, hi) = ratio_interval_correlated(1.0, 0.1, 1.0, 0.5, 10.0, 1.645);
        assert!(lo <= hi && lo.is_finite() && hi.is_finite());
        assert!(ratio_interval_correlated(1.0, 0.1, 0.0, 0.1, 0.0, 1.645).0.is_nan());
    }

    /// The 90% interval of a culprit's share, its step read on its own and its parent's runs and divided by the
    /// step between the pooled levels that hold those runs, holds the true share about 90% of the time with the
    /// covariance, and far more often without it (the intervals are then too wide).
    #[test]
    fn share_of_a_step_within_pooled_levels_covers_at_its_level() {
        let mut rng = crate::rng::Rng::new(7);
        let (trials, step, z) = (4000, 1.5, 1.645);
        let (mut covered, mut covered_independent) = (0, 0);
        for _ in 0..trials {
            // Good side: 30 runs of other commits and 12 of the parent; bad side: 12 of the culprit and 30 others.
            let mut draw = |n: usize, level: f64| -> Vec<f64> { (0..n).map(|_| level + rng.normal()).collect() };
            let (before, parent, culprit, after) = (draw(30, 0.0), draw(12, 0.0), draw(12, step), draw(30, step));
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
            let size = mean(&culprit) - mean(&parent);
            let se_size = (2.0 / 12.0f64).sqrt();
            let low_level: Vec<f64> = before.iter().chain(&parent).copied().collect();
            let high_level: Vec<f64> = culprit.iter().chain(&after).copied().collect();
            let delta = mean(&high_level) - mean(&low_level);
            let se_delta = (2.0 / 42.0f64).sqrt();
            let (_, lo, hi) = ratio_interval_correlated(size, se_size, delta, se_delta, se_delta * se_delta, z);
            covered += usize::from(lo <= 1.0 && 1.0 <= hi);
            let (_, lo, hi) = ratio_interval(size, se_size, delta, se_delta, z);
            covered_independent += usize::from(lo <= 1.0 && 1.0 <= hi);
        }
        let coverage = covered as f64 / trials as f64;
        let coverage_independent = covered_independent as f64 / trials as f64;
        assert!((0.87..=0.93).contains(&coverage), "coverage {coverage}");
        assert!(coverage_independent > 0.94, "independent coverage {coverage_independent}");
    }
}
