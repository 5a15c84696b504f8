//! A/A false alarms: compare two sets of runs of the SAME code and count the metrics flagged as changed. Every
//! flag is a false alarm by construction, so the count measures a decision rule's false-alarm rate.
//!
//! [`count_false_alarms`] works on any pair of columns (the lead feeds it real A/A runs); [`synthetic_columns`]
//! generates a perf-profile-heavy pair so the figure has a simulated version, and so the speed benchmark has
//! realistic input.

use super::{compare, Column, CompareError, CompareOptions, Comparison, DecisionRule, LkpOptions};
use crate::rng::Rng;

/// How many metrics each rule flagged on one A/A pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct AaCount {
    /// Metrics compared (rows of the table).
    pub metrics: usize,
    /// Metrics with a non-inconclusive verdict under each rule (the denominators).
    pub judged_culprit: usize,
    pub judged_lkp: usize,
    /// Metrics whose verdict is a change under Culprit's rules, and under lkp's.
    pub flagged_culprit: usize,
    pub flagged_lkp: usize,
}

/// Compares `a` against `b` under Culprit's rules (`culprit`) and under lkp's (`lkp`) and counts the metrics
/// each flags. Both counts read the verdicts the engine returns, as every other output does.
pub fn count_false_alarms(
    a: &Column,
    b: &Column,
    culprit: &CompareOptions,
    lkp: &LkpOptions,
) -> Result<AaCount, CompareError> {
    let input = Comparison::new(vec![a.clone(), b.clone()]);
    let ours = compare(&input, culprit)?;
    let lkp_options = CompareOptions { rule: DecisionRule::Lkp(lkp.clone()), ..culprit.clone() };
    let theirs = compare(&input, &lkp_options)?;
    let count = |rows: &[super::MetricRow], pred: &dyn Fn(&super::Verdict) -> bool| {
        rows.iter().filter(|r| r.changes.iter().any(|c| pred(&c.verdict))).count()
    };
    let judged = |v: &super::Verdict| !matches!(v, super::Verdict::Inconclusive { .. });
    Ok(AaCount {
        metrics: ours.rows.len(),
        judged_culprit: count(&ours.rows, &judged),
        judged_lkp: count(&theirs.rows, &judged),
        flagged_culprit: count(&ours.rows, &|v| v.is_change()),
        flagged_lkp: count(&theirs.rows, &|v| v.is_change()),
    })
}

/// The shape of synthetic benchmark data.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntheticSpec {
    /// Total metrics per column.
    pub metrics: usize,
    /// Successful runs per column.
    pub runs: usize,
    /// Share of the metrics that are perf-profile percentages (most of them 0 or near-constant).
    pub profile_share: f64,
    /// Number of (non-profile) metrics whose mean the second column shifts, and by how much (relative): 0 for
    /// A/A data.
    pub shifted: usize,
    pub shift: f64,
}

impl Default for SyntheticSpec {
    fn default() -> Self {
        SyntheticSpec { metrics: 2_000, runs: 10, profile_share: 0.8, shifted: 0, shift: 0.0 }
    }
}

/// Two columns of synthetic runs, `base` and `other`, drawn from the same distributions except for the
/// `shifted` metrics. Program and monitor metrics are normal with 1-5% relative noise, one in ten of them with
/// occasional 3x-noise outliers (a noisy neighbour); perf-profile metrics are percentages printed with two
/// decimals as perf does: 60% of them 0.00 in every run, the rest small values whose rounding makes them
/// near-constant.
pub fn synthetic_columns(seed: u64, spec: &SyntheticSpec) -> (Column, Column) {
    let mut rng = Rng::new(seed);
    let mut base = Column::new("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    let mut other = Column::new("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
    let profile = ((spec.metrics as f64) * spec.profile_share.clamp(0.0, 1.0)).round() as usize;
    let regular = spec.metrics.saturating_sub(profile);
    for i in 0..regular {
        let name = if i % 2 == 0 { format!("bench.metric_{i}") } else { format!("vmstat.metric_{i}") };
        let mean = 10f64.powf(1.0 + 5.0 * rng.next_f64());
        let rel = 0.01 + 0.04 * rng.next_f64();
        let outliers = i % 10 == 3;
        let shift = if i < spec.shifted { 1.0 + spec.shift } else { 1.0 };
        let draw = |m: f64, rng: &mut Rng| {
            let noise = if outliers && rng.next_f64() < 0.1 { 3.0 } else { 1.0 };
            m * (1.0 + rel * noise * rng.normal())
        };
        base.metrics.insert(name.clone(), (0..spec.runs).map(|_| draw(mean, &mut rng)).collect());
        other.metrics.insert(name, (0..spec.runs).map(|_| draw(mean * shift, &mut rng)).collect());
    }
    for i in 0..profile {
        let name = format!("perf-profile.self.cycles-pp.func_{i}");
        let zero = rng.next_f64() < 0.6;
        let level = if zero { 0.0 } else { 0.005 + 3.0 * rng.next_f64().powi(3) };
        let rel = 0.02 + 0.1 * rng.next_f64();
        let draw = |rng: &mut Rng| {
            if zero {
                0.0
            } else {
                ((level * (1.0 + rel * rng.normal())).max(0.0) * 100.0).round() / 100.0
            }
        };
        base.metrics.insert(name.clone(), (0..spec.runs).map(|_| draw(&mut rng)).collect());
        other.metrics.insert(name, (0..spec.runs).map(|_| draw(&mut rng)).collect());
    }
    (base, other)
}
