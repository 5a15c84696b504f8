//! The two baselines the simulator compares Culprit's bisect with: classic fixed-repeat bisection and a
//! Pinpoint-like adaptive comparison. Written from their published descriptions, simplified, and run against the
//! same oracle so runs and builds are counted alike.

use super::sim::{History, Oracle, TrialResult};
use super::Status;
use crate::stats::{mann_whitney_u, mean, normal_sf, sample_variance};

/// Runs per commit of the classic bisection.
const FIXED_RUNS: usize = 5;

/// Finds a testable commit strictly between `lo` and `hi`, nearest to their midpoint, trying mid, mid+1, mid-1, ...
/// as `git bisect skip` does; each failed attempt costs a build.
fn testable_near_middle(lo: usize, hi: usize, oracle: &mut Oracle) -> Option<usize> {
    if hi <= lo + 1 {
        return None;
    }
    let mid = lo + (hi - lo) / 2;
    for offset in 0..(hi - lo) {
        for candidate in [mid + offset, mid.wrapping_sub(offset)] {
            if candidate > lo && candidate < hi && oracle.build(candidate) {
                return Some(candidate);
            }
        }
    }
    None
}

fn runs_at(commit: usize, count: usize, oracle: &mut Oracle) -> Vec<f64> {
    (0..count).filter_map(|_| oracle.run(commit)).collect()
}

/// Classic bisection: 5 runs at good and bad, then 5 at each midpoint, judged by which mean it is closer to. It
/// always names a commit.
pub fn fixed(history: &History, oracle: &mut Oracle) -> TrialResult {
    let (mut lo, mut hi) = (0, history.commits);
    let good = mean(&runs_at(lo, FIXED_RUNS, oracle)).unwrap_or(0.0);
    let bad = mean(&runs_at(hi, FIXED_RUNS, oracle)).unwrap_or(0.0);
    while let Some(mid) = testable_near_middle(lo, hi, oracle) {
        let m = mean(&runs_at(mid, FIXED_RUNS, oracle)).unwrap_or(good);
        if (m - good).abs() < (m - bad).abs() {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    TrialResult {
        status: Status::Found,
        named: vec![hi],
        contributors: 1,
        runs: oracle.runs(),
        builds: oracle.builds(),
        log: vec![],
        evidence: vec![],
        culprits: vec![],
        build_spread: None,
        open_stretches: vec![],
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Verdict {
    Different,
    Same,
}

/// Repeat counts of the Pinpoint-like comparison.
const PINPOINT_REPEATS: [usize; 5] = [10, 20, 40, 80, 160];
/// Runs after which the Pinpoint-like search stops, so a pathological trial cannot run forever.
const PINPOINT_RUN_CAP: usize = 20_000;

struct Pinpoint<'o, 'h> {
    oracle: &'o mut Oracle<'h>,
    samples: Vec<Vec<f64>>,
    /// The effect size (in standard deviations) the "same" threshold is computed for.
    expected_effect: f64,
}

impl Pinpoint<'_, '_> {
    fn ensure(&mut self, a: usize, b: usize, repeats: usize) {
        // Interleaved top-up of both sides to `repeats` runs.
        while self.samples[a].len() < repeats || self.samples[b].len() < repeats {
            for c in [a, b] {
                if self.samples[c].len() < repeats {
                    match self.oracle.run(c) {
                        Some(v) => self.samples[c].push(v),
                        None => return,
                    }
                }
            }
        }
    }

    /// The "high" threshold: the p-value above which a difference of the expected size would be seen at most 1% of
    /// the time with this many repeats (normal approximation of the rank test's power).
    fn high_threshold(&self, repeats: usize) -> f64 {
        let z_expected = self.expected_effect * (repeats as f64 / 2.0).sqrt() * (3.0 / std::f64::consts::PI).sqrt();
        let z = (z_expected - 2.326).max(0.0);
        2.0 * normal_sf(z)
    }

    fn compare(&mut self, a: usize, b: usize) -> Verdict {
        for &repeats in &PINPOINT_REPEATS {
            if self.oracle.runs() > PINPOINT_RUN_CAP {
                return Verdict::Same;
            }
            self.ensure(a, b, repeats);
            let Some(test) = mann_whitney_u(&self.samples[a], &self.samples[b]) else {
                return Verdict::Same;
            };
            if test.p <= 0.01 {
                return Verdict::Different;
            }
            if test.p > self.high_threshold(repeats) {
                return Verdict::Same;
            }
        }
        Verdict::Same
    }
}

/// Pinpoint-like bisection: compare good and bad; for every adjacent pair found different, insert a midpoint and
/// compare both halves; a different pair with nothing testable between names its later commit.
pub fn pinpoint(history: &History, oracle: &mut Oracle) -> TrialResult {
    let bad = history.commits;
    let mut p = Pinpoint { oracle, samples: vec![Vec::new(); bad + 1], expected_effect: 1.0 };
    p.ensure(0, bad, PINPOINT_REPEATS[0]);
    // The expected magnitude comes from the first measurements of good and bad, as an alert's magnitude would.
    if let (Some(ma), Some(mb), Some(va), Some(vb)) =
        (mean(&p.samples[0]), mean(&p.samples[bad]), sample_variance(&p.samples[0]), sample_variance(&p.samples[bad]))
    {
        let pooled = ((va + vb) / 2.0).sqrt();
        if pooled > 0.0 {
            p.expected_effect = ((mb - ma).abs() / pooled).max(0.5);
        }
    }
    let mut named = Vec::new();
    if p.compare(0, bad) == Verdict::Different {
        let mut work = vec![(0usize, bad)];
        while let Some((a, b)) = work.pop() {
            let Some(mid) = testable_near_middle(a, b, p.oracle) else {
                named.push(b);
                continue;
            };
            if p.compare(a, mid) == Verdict::Different {
                work.push((a, mid));
            }
            if p.compare(mid, b) == Verdict::Different {
                work.push((mid, b));
            }
        }
    }
    named.sort_unstable();
    named.dedup();
    let status = match named.len() {
        0 => Status::NotReproduced,
        1 => Status::Found,
        _ => Status::Multiple,
    };
    let contributors = named.len();
    TrialResult {
        status,
        named,
        contributors,
        runs: p.oracle.runs(),
        builds: p.oracle.builds(),
        log: vec![],
        evidence: vec![],
        culprits: vec![],
        build_spread: None,
        open_stretches: vec![],
    }
}
