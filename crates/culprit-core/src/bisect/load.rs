//! Load that comes and goes, as a two-state hidden Markov model over the order in which runs finished.
//!
//! Each run's value is its commit's level, plus an offset `load` while the machine is loaded, plus Gaussian noise.
//! Whether the machine is loaded is a Markov chain over run order: it enters load with probability `enter` per run
//! and leaves with probability `leave`. Load only makes runs worse (values are oriented so that higher is worse),
//! which is what tells the two states apart: the unloaded state is the better one. The fit is expectation
//! maximisation with the forward-backward recursions; the levels, the noise, the offset and both transition
//! probabilities are all estimated from the runs.
//!
//! Commits measured at several times carry the evidence: when every commit measured during some stretch of runs
//! reads high together, that stretch was loaded, and a commit measured only then is corrected with it.

/// Iterations of expectation maximisation, always all of them, so that the same runs give the same offsets. The
/// fit starts from every commit's mean, a load of 2 sigma and short rare bursts.
const ITERATIONS: usize = 25;

/// The largest probability of leaving the loaded state per run. Load that lasts a single run cannot be told from an
/// outlier, which the t weights of the posterior already handle; capped at one half, the loaded state means load
/// that persists (two runs or more on average), and isolated outliers are not read as load. Left free (up to
/// 0.9), 5% outliers of 5 sigma gave the same answer on a rerun in 97.4% of 500 simulated jobs, against 98.4%
/// capped.
const LEAVE_MAX: f64 = 0.5;

/// One run: its position in run order, its group (commit) and its oriented value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Run {
    pub record: usize,
    pub group: usize,
    pub value: f64,
}

/// Log-likelihood gain (nats) over "no load" from which load is taken as real. The model has three parameters
/// more than "no load" (the offset and the two transition probabilities) and a free state per run, so it always
/// gains something; on Gaussian noise alone the fit stood out in none of the first 100 simulated bisects of seed 4
/// (docs/statistics.md), and the loaded runs of the bursts row pass it within a few dozen runs.
pub const MIN_GAIN: f64 = 12.0;

/// Smallest offset, in noise standard deviations, taken as load: a smaller one moves no decision by much, and
/// correcting for it would only add noise.
pub const MIN_LOAD_SIGMA: f64 = 1.0;

/// The fitted model.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadFit {
    /// Per record (position in run order), the probability that the machine was loaded; 0 where no run finished.
    pub loaded: Vec<f64>,
    /// The offset load adds to a run, in the values' units (positive: worse).
    pub load: f64,
    /// Noise standard deviation within a state.
    pub sigma: f64,
    /// Log-likelihood of the load model minus that of the same levels and noise without load.
    pub gain: f64,
}

impl LoadFit {
    /// Whether the fit found load worth correcting for ([`MIN_GAIN`], [`MIN_LOAD_SIGMA`]).
    pub fn stands_out(&self) -> bool {
        self.gain >= MIN_GAIN && self.load >= MIN_LOAD_SIGMA * self.sigma
    }
}

fn normal_log_density(x: f64, sigma: f64) -> f64 {
    -0.5 * (x / sigma).powi(2) - sigma.ln() - 0.5 * (2.0 * std::f64::consts::PI).ln()
}

/// Fits the model to `runs` over `records` positions (run order), `groups` commits (group numbers below it; the
/// per-group work is proportional to it, so callers number only the commits with runs). A record without a run
/// (a failed run) only carries the chain from its neighbours. `None` with fewer than 12 runs, or when the runs do
/// not vary at all.
pub fn fit(runs: &[Run], records: usize, groups: usize) -> Option<LoadFit> {
    if runs.len() < 12 || records == 0 {
        return None;
    }
    let mut at: Vec<Option<(usize, f64)>> = vec![None; records];
    for r in runs {
        if r.record < records && r.group < groups && r.value.is_finite() {
            at[r.record] = Some((r.group, r.value));
        }
    }
    // A commit measured in one visit (no other commit's run between its first and its last) has its level set by
    // whatever load that visit saw: its runs say nothing about the load, and fitted, its level would absorb it.
    // They are left out, so the chain carries the load read from the commits measured around the visit into it.
    let mut visits = vec![0usize; groups];
    let mut previous: Option<usize> = None;
    for &(g, _) in at.iter().flatten() {
        if previous != Some(g) {
            visits[g] += 1;
        }
        previous = Some(g);
    }
    for slot in at.iter_mut() {
        if slot.is_some_and(|(g, _)| visits[g] < 2) {
            *slot = None;
        }
    }
    if at.iter().flatten().count() < 12 {
        return None;
    }
    let mut count = vec![0usize; groups];
    let mut sum = vec![0.0; groups];
    for &(g, v) in at.iter().flatten() {
        count[g] += 1;
        sum[g] += v;
    }
    let mut level: Vec<f64> = (0..groups).map(|g| if count[g] > 0 { sum[g] / count[g] as f64 } else { 0.0 }).collect();
    let n = at.iter().flatten().count() as f64;
    let variance = at.iter().flatten().map(|&(g, v)| (v - level[g]).powi(2)).sum::<f64>() / n;
    let mut sigma = variance.sqrt();
    if !(sigma > 0.0) {
        return None;
    }
    let null_loglik: f64 = at.iter().flatten().map(|&(g, v)| normal_log_density(v - level[g], sigma)).sum();
    let mut load = 2.0 * sigma;
    let (mut enter, mut leave) = (0.05, 0.2);
    let mut loaded = vec![0.0; records];
    let mut loglik = f64::NEG_INFINITY;
    for _ in 0..ITERATIONS {
        // Forward-backward with scaling, in probability space (two states, so no underflow with rescaling). The
        // densities of each record in both states are computed once, for both passes.
        let emission: Vec<[f64; 2]> = at
            .iter()
            .map(|slot| match *slot {
                Some((g, v)) => [0.0, load].map(|offset| normal_log_density(v - level[g] - offset, sigma).exp()),
                None => [1.0, 1.0],
            })
            .collect();
        let transition = [[1.0 - enter, enter], [leave, 1.0 - leave]];
        let start = [leave / (enter + leave), enter / (enter + leave)];
        let mut forward = vec![[0.0f64; 2]; records];
        let mut scale = vec![0.0f64; records];
        for t in 0..records {
            for s in 0..2 {
                let prior = if t == 0 {
                    start[s]
                } else {
                    forward[t - 1][0] * transition[0][s] + forward[t - 1][1] * transition[1][s]
                };
                forward[t][s] = prior * emission[t][s];
            }
            let total = forward[t][0] + forward[t][1];
            if !(total > 0.0) {
                return None;
            }
            scale[t] = total;
            forward[t][0] /= total;
            forward[t][1] /= total;
        }
        loglik = scale.iter().map(|s| s.ln()).sum();
        let mut backward = vec![[1.0f64; 2]; records];
        let mut expected_transitions = [[0.0f64; 2]; 2];
        for t in (0..records.saturating_sub(1)).rev() {
            let next = [emission[t + 1][0] * backward[t + 1][0], emission[t + 1][1] * backward[t + 1][1]];
            for s in 0..2 {
                backward[t][s] = (transition[s][0] * next[0] + transition[s][1] * next[1]) / scale[t + 1];
                for u in 0..2 {
                    expected_transitions[s][u] += forward[t][s] * transition[s][u] * next[u] / scale[t + 1];
                }
            }
        }
        for t in 0..records {
            let (a, b) = (forward[t][0] * backward[t][0], forward[t][1] * backward[t][1]);
            loaded[t] = if a + b > 0.0 { b / (a + b) } else { 0.0 };
        }
        // M step: levels from the runs with the expected load taken off, then the offset, then the noise.
        let mut sum = vec![0.0; groups];
        for (t, (g, v)) in at.iter().enumerate().filter_map(|(t, x)| x.map(|x| (t, x))) {
            sum[g] += v - load * loaded[t];
        }
        for g in 0..groups {
            if count[g] > 0 {
                level[g] = sum[g] / count[g] as f64;
            }
        }
        let (mut weighted, mut weight) = (0.0, 0.0);
        for (t, (g, v)) in at.iter().enumerate().filter_map(|(t, x)| x.map(|x| (t, x))) {
            weighted += loaded[t] * (v - level[g]);
            weight += loaded[t];
        }
        // Load only makes runs worse; a fit that wants it negative has found no load.
        load = if weight > 0.0 { (weighted / weight).max(0.0) } else { 0.0 };
        let mut squares = 0.0;
        for (t, (g, v)) in at.iter().enumerate().filter_map(|(t, x)| x.map(|x| (t, x))) {
            let r = v - level[g];
            squares += (1.0 - loaded[t]) * r * r + loaded[t] * (r - load).powi(2);
        }
        sigma = (squares / n).sqrt().max(1e-12 * sigma.max(1e-300));
        let from_free = expected_transitions[0][0] + expected_transitions[0][1];
        let from_loaded = expected_transitions[1][0] + expected_transitions[1][1];
        enter = if from_free > 0.0 { (expected_transitions[0][1] / from_free).clamp(1e-4, 0.5) } else { enter };
        leave =
            if from_loaded > 0.0 { (expected_transitions[1][0] / from_loaded).clamp(1e-3, LEAVE_MAX) } else { leave };
    }
    Some(LoadFit { loaded, load, sigma, gain: loglik - null_loglik })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Three commits (levels 0, 0 and 1.5) measured round-robin with unit Gaussian noise, plus `load(record)`.
    fn round_robin(records: usize, seed: u64, load: impl Fn(usize) -> f64) -> Vec<Run> {
        let mut rng = Rng::new(seed);
        (0..records)
            .map(|t| {
                let group = t % 3;
                let level = if group == 2 { 1.5 } else { 0.0 };
                Run { record: t, group, value: level + load(t) + rng.normal() }
            })
            .collect()
    }

    #[test]
    fn a_loaded_stretch_shared_by_every_commit_is_found() {
        let runs = round_robin(90, 3, |t| if (30..45).contains(&t) { 3.0 } else { 0.0 });
        let fit = fit(&runs, 90, 3).expect("fit");
        assert!(fit.stands_out(), "gain {} load {} sigma {}", fit.gain, fit.load, fit.sigma);
        assert!((fit.load - 3.0).abs() < 0.6, "load {}", fit.load);
        let flagged: Vec<usize> = (0..90).filter(|&t| fit.loaded[t] > 0.5).collect();
        let inside = flagged.iter().filter(|t| (30..45).contains(*t)).count();
        assert!(inside >= 13 && flagged.len() - inside <= 2, "flagged {flagged:?}");
    }

    #[test]
    fn load_at_the_start_that_stops_is_found_and_the_better_state_is_unloaded() {
        // A job ran during the first 20 runs and then stopped: most of the early runs are the loaded ones, and a
        // residual from each commit's median would call the later runs "better than their level".
        let runs = round_robin(60, 5, |t| if t < 20 { 2.5 } else { 0.0 });
        let fit = fit(&runs, 60, 3).expect("fit");
        assert!(fit.stands_out());
        assert!((0..20).filter(|&t| fit.loaded[t] > 0.5).count() >= 18, "{:?}", &fit.loaded[..20]);
        assert!((20..60).all(|t| fit.loaded[t] < 0.5), "{:?}", &fit.loaded[20..]);
    }

    #[test]
    fn a_visit_inside_load_is_corrected_from_the_commits_around_it() {
        // Commits 0 and 1 are measured throughout; commit 2 only in one visit of four runs, records 40 to 43, which
        // fell in a stretch of load that commits 0 and 1 show on both sides of it.
        let mut rng = Rng::new(8);
        let load = |t: usize| if (34..50).contains(&t) { 3.0 } else { 0.0 };
        let runs: Vec<Run> = (0..80)
            .map(|t| {
                let group = if (40..44).contains(&t) { 2 } else { t % 2 };
                Run { record: t, group, value: load(t) + rng.normal() }
            })
            .collect();
        let fit = fit(&runs, 80, 3).expect("fit");
        assert!(fit.stands_out(), "gain {} load {} sigma {} {:?}", fit.gain, fit.load, fit.sigma, &fit.loaded[30..52]);
        assert!((40..44).all(|t| fit.loaded[t] > 0.5), "{:?}", &fit.loaded[36..48]);
    }

    #[test]
    fn noise_alone_is_not_load() {
        for seed in 0..20 {
            let runs = round_robin(120, seed, |_| 0.0);
            let fit = fit(&runs, 120, 3).expect("fit");
            assert!(!fit.stands_out(), "seed {seed}: gain {} load {}", fit.gain, fit.load);
        }
    }

    #[test]
    fn isolated_outliers_are_not_load() {
        // One run in twenty is 5 sigma high, never two in a row: outliers, for the t weights, not load.
        let runs = round_robin(200, 13, |t| if t % 20 == 7 { 5.0 } else { 0.0 });
        let fit = fit(&runs, 200, 3).expect("fit");
        let flagged: Vec<usize> = (0..200).filter(|&t| fit.loaded[t] > 0.5).collect();
        assert!(!fit.stands_out() || flagged.iter().all(|t| t % 20 == 7), "flagged {flagged:?}");
    }

    #[test]
    fn too_few_runs_or_no_spread_give_no_fit() {
        assert!(fit(&round_robin(11, 1, |_| 0.0), 11, 3).is_none());
        let constant: Vec<Run> = (0..30).map(|t| Run { record: t, group: t % 2, value: 1.0 }).collect();
        assert!(fit(&constant, 30, 2).is_none());
        // A run outside the records or its groups, or not finite, is left out rather than trusted.
        let mut runs = round_robin(40, 2, |_| 0.0);
        runs.push(Run { record: 99, group: 0, value: 1.0 });
        runs.push(Run { record: 5, group: 7, value: 1.0 });
        runs[3].value = f64::NAN;
        assert!(fit(&runs, 40, 3).is_some());
    }
}
