//! The posterior over where a segment's change sits: a piecewise-constant model whose levels and noise are
//! integrated out, and the classes of hypotheses no testable commit can tell apart.

use super::*;

/// The posterior over change locations within one segment.
#[derive(Debug, Clone)]
pub(crate) struct Posterior {
    /// Hypotheses: the commit where the change enters, in segment order.
    pub(super) hypotheses: Vec<usize>,
    /// Probability of each hypothesis; sums to one.
    pub(super) probability: Vec<f64>,
    /// The class (representative commit) of each hypothesis: hypotheses no testable commit can tell apart share it.
    pub(super) class: Vec<usize>,
    /// Step between the two fitted levels of the most probable partition, positive is worse.
    pub(super) delta: f64,
    /// Noise standard deviation of that fit.
    pub(super) sigma: f64,
    /// Standard error of `delta`.
    pub(super) delta_se: f64,
    /// Per hypothesis, the index of its partition in `fits` (hypotheses no tested commit tells apart share one).
    pub(super) partition: Vec<usize>,
    /// The two-level fit of each partition.
    pub(super) fits: Vec<Option<model::LevelsFit>>,
}

impl Posterior {
    pub(super) fn class_masses(&self) -> BTreeMap<usize, f64> {
        let mut masses = BTreeMap::new();
        for (&class, &p) in self.class.iter().zip(&self.probability) {
            *masses.entry(class).or_insert(0.0) += p;
        }
        masses
    }

    /// The most probable class and its mass (lowest commit on ties, for determinism).
    pub(super) fn best_class(&self) -> Option<(usize, f64)> {
        self.class_masses().into_iter().fold(None, |best, (class, mass)| match best {
            Some((_, m)) if m >= mass => best,
            _ => Some((class, mass)),
        })
    }
}

/// Per commit, its runs as (record index, weight, value) (see [`Bisect::weighted_runs`]).
pub(super) type WeightedRuns = Vec<Vec<(f64, f64, f64)>>;

/// Each group's values as (weight, value less `origin`), the weights from one robust (t) fit of all the groups: a
/// value far from its own group's robust level is down-weighted (see [`model::outlier_weight`]), so a burst or an
/// outlier cannot pass for a level; a group of one value cannot be checked this way and keeps weight 1.
pub(super) fn outlier_weighted(groups: &[Vec<f64>], origin: f64) -> Vec<Vec<(f64, f64)>> {
    let refs: Vec<&[f64]> = groups.iter().map(|g| g.as_slice()).collect();
    let robust = fit_t(&refs);
    let weight = |i: usize, group: &[f64], value: f64| match &robust {
        Some(fit) if group.len() >= 2 => model::outlier_weight(value - fit.locations[i], fit.scale),
        _ => 1.0,
    };
    groups
        .iter()
        .enumerate()
        .map(|(i, group)| group.iter().map(|&value| (weight(i, group, value), value - origin)).collect())
        .collect()
}

impl Bisect {
    /// Per commit, the weighted moments of its runs (oriented, drift-corrected). A run far from its own commit's robust
    /// level is down-weighted (see [`model::outlier_weight`]), so a burst or an outlier cannot pass for a level; a
    /// commit with one run cannot be checked this way, and the partition evidence bounds what one run can do.
    pub(super) fn commit_moments(&self, members: &[usize], slope: f64) -> Vec<model::Moments> {
        self.weighted_runs(members, slope)
            .iter()
            .map(|runs| {
                let mut m = model::Moments::default();
                for &(_, weight, value) in runs {
                    m.add(weight, value);
                }
                m
            })
            .collect()
    }

    /// Per commit, its runs as [`Bisect::commit_moments`] reads them: (record index, weight, value), values centred
    /// on the first member's level, in the order they were recorded.
    pub(super) fn weighted_runs(&self, members: &[usize], slope: f64) -> WeightedRuns {
        // `adjusted` is empty for an untestable commit, so its runs stay empty.
        let groups: Vec<Vec<f64>> = members.iter().map(|&c| self.adjusted(c, slope)).collect();
        // Values are centred on the first member's level so sums of squares keep their precision for any metric.
        let origin = groups.first().and_then(|g| g.first()).copied().unwrap_or(0.0);
        outlier_weighted(&groups, origin)
            .into_iter()
            .zip(members)
            .map(|(runs, &c)| runs.into_iter().zip(&self.values[c]).map(|((w, v), &(t, _))| (t, w, v)).collect())
            .collect()
    }

    /// The posterior over change locations in (lo, hi].
    pub(super) fn posterior(&self, lo: usize, hi: usize, slope: f64) -> Option<Posterior> {
        let hypotheses = self.topology.segment(lo, hi);
        if hypotheses.is_empty() {
            return None;
        }
        // Tested commits of the segment. lo is always before the change, hi always after.
        let tested: Vec<usize> =
            hypotheses.iter().copied().filter(|&c| !self.untestable[c] && !self.values[c].is_empty()).collect();
        let mut members: Vec<usize> = vec![lo];
        members.extend(tested.iter().copied());
        let moments = self.commit_moments(&members, slope);
        let lo_moments = moments.first().copied().unwrap_or_default();
        let tested_moments = moments.get(1..).unwrap_or(&[]);
        // Group hypotheses by which tested commits contain them: one fit per distinct partition.
        let mut signature_of: Vec<usize> = Vec::with_capacity(hypotheses.len());
        let mut fits: Vec<Option<model::LevelsFit>> = Vec::new();
        if self.topology.is_linear() {
            // Tested commits are in index order; hypothesis k is contained by exactly the tested c >= k, so the
            // partition "the first `before` tested commits are good" has prefix sums for its groups.
            for &k in &hypotheses {
                signature_of.push(tested.partition_point(|&c| c < k));
            }
            let all = tested_moments.iter().fold(lo_moments, |acc, m| acc.plus(m));
            let mut good = lo_moments;
            for before in 0..=tested.len() {
                if before > 0 {
                    good = good.plus(&tested_moments[before - 1]);
                }
                fits.push(model::fit_levels(&good, &all.minus(&good)));
            }
        } else {
            let signatures;
            (signatures, signature_of) = self.signature_groups(&hypotheses, &tested);
            for signature in &signatures {
                let (mut good, mut bad) = (lo_moments, model::Moments::default());
                for (m, &contains) in tested_moments.iter().zip(signature) {
                    if contains {
                        bad = bad.plus(m);
                    } else {
                        good = good.plus(m);
                    }
                }
                fits.push(model::fit_levels(&good, &bad));
            }
        }
        let logliks: Vec<f64> = fits.iter().map(|f| f.map(|f| f.log_evidence).unwrap_or(f64::NEG_INFINITY)).collect();
        let max = logliks.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut probability: Vec<f64> = if max.is_finite() {
            signature_of.iter().map(|&s| (logliks[s] - max).exp()).collect()
        } else {
            vec![1.0; hypotheses.len()]
        };
        let sum: f64 = probability.iter().sum();
        if !(sum > 0.0) || !sum.is_finite() {
            probability = vec![1.0; hypotheses.len()];
        }
        let sum: f64 = probability.iter().sum();
        for p in probability.iter_mut() {
            *p /= sum;
        }
        // The fit of the most probable partition gives the step and noise used to value the next measurement.
        let mut partition_mass = vec![0.0; fits.len()];
        for (&s, &p) in signature_of.iter().zip(&probability) {
            partition_mass[s] += p;
        }
        let best_partition =
            (0..fits.len()).filter(|&s| fits[s].is_some()).fold(None, |best: Option<usize>, s| match best {
                Some(b) if partition_mass[b] >= partition_mass[s] => Some(b),
                _ => Some(s),
            });
        let (delta, sigma, delta_se) = match best_partition.and_then(|s| fits[s]) {
            Some(fit) => (fit.after - fit.before, fit.sigma, fit.step_se),
            None => (0.0, 1.0, f64::INFINITY),
        };
        let class = self.classes(hi, &hypotheses);
        Some(Posterior { hypotheses, probability, class, delta, sigma, delta_se, partition: signature_of, fits })
    }

    /// The hypotheses of a history with merges grouped by which of the commits `over` contain them (their
    /// signature): the distinct signatures, in the order of their first hypothesis so that the machine stays
    /// deterministic, and each hypothesis's group.
    pub(super) fn signature_groups(&self, hypotheses: &[usize], over: &[usize]) -> (Vec<Vec<bool>>, Vec<usize>) {
        let mut index: std::collections::HashMap<Vec<bool>, usize> = std::collections::HashMap::new();
        let mut signatures = Vec::new();
        let group_of = hypotheses
            .iter()
            .map(|&k| {
                let signature: Vec<bool> = over.iter().map(|&c| self.topology.contains(k, c)).collect();
                *index.entry(signature).or_insert_with_key(|signature| {
                    signatures.push(signature.clone());
                    signatures.len() - 1
                })
            })
            .collect();
        (signatures, group_of)
    }

    /// For each hypothesis, the representative of the hypotheses no testable commit can tell apart from it: itself
    /// when testable, otherwise the testable commit it is bound to (in a linear history, the next testable one).
    pub(super) fn classes(&self, hi: usize, hypotheses: &[usize]) -> Vec<usize> {
        if self.topology.is_linear() {
            let mut class = vec![hi; hypotheses.len()];
            let mut next_testable = hi;
            for (i, &k) in hypotheses.iter().enumerate().rev() {
                if !self.untestable[k] {
                    next_testable = k;
                }
                class[i] = next_testable;
            }
            return class;
        }
        // In a DAG, two hypotheses are indistinguishable when the same testable commits of the segment contain them
        // (their "signature"). A testable commit is alone in its class: it contains itself, and two commits cannot
        // each contain the other. An untestable one, k, shares the class of a testable commit m only when every
        // testable commit containing k contains m too, that is when m is the earliest of them and all the others
        // contain it (topological order puts an ancestor first). Only the untestable commits without such an m
        // are grouped by their signatures, the first of each group representing it. Comparing the signatures of
        // every hypothesis over every testable commit took three quarters of a bisect's time on 10,000 commits
        // with 1,000 merges (a second a decision); this is the same classes in time linear in the segment for
        // each untestable commit.
        let testable: Vec<usize> = hypotheses.iter().copied().filter(|&c| !self.untestable[c]).collect();
        let mut by_signature: BTreeMap<Vec<bool>, usize> = BTreeMap::new();
        hypotheses
            .iter()
            .map(|&k| {
                if !self.untestable[k] {
                    return k;
                }
                let signature: Vec<bool> = testable.iter().map(|&c| self.topology.contains(k, c)).collect();
                let containing: Vec<usize> =
                    testable.iter().zip(&signature).filter(|(_, &holds)| holds).map(|(&c, _)| c).collect();
                let earliest = containing.first().copied();
                match earliest.filter(|&m| containing.iter().all(|&c| self.topology.contains(m, c))) {
                    Some(m) => m,
                    None => *by_signature.entry(signature).or_insert(k),
                }
            })
            .collect()
    }

    /// P(the change is contained in commit c), for every commit of the segment and lo.
    pub(super) fn containment(&self, posterior: &Posterior, candidates: &[usize]) -> Vec<f64> {
        if self.topology.is_linear() {
            // Candidates and hypotheses are sorted; accumulate.
            let mut out = Vec::with_capacity(candidates.len());
            let mut acc = 0.0;
            let mut h = 0;
            for &c in candidates {
                while h < posterior.hypotheses.len() && posterior.hypotheses[h] <= c {
                    acc += posterior.probability[h];
                    h += 1;
                }
                out.push(acc.min(1.0));
            }
            return out;
        }
        // Each candidate's sum runs over the set bits of its ancestor set, in index order as the hypotheses are,
        // with every other commit weighing nothing: the same sums as testing each hypothesis for containment, in a
        // fraction of the time (that test took three quarters of a decision on 3,000 commits with 300 merges).
        let mut weight = vec![0.0; self.topology.len()];
        for (&k, &p) in posterior.hypotheses.iter().zip(&posterior.probability) {
            weight[k] = p;
        }
        candidates.iter().map(|&c| self.topology.sum_contained(c, &weight).min(1.0)).collect()
    }

    /// The tested commit just before the class of `commit`: walk first parents past untestable class members.
    pub(super) fn reference_parent(&self, segment: Segment, commit: usize, posterior: &Posterior) -> usize {
        let class_of: BTreeMap<usize, usize> =
            posterior.hypotheses.iter().copied().zip(posterior.class.iter().copied()).collect();
        let mut current = commit;
        while let Some(parent) = self.topology.first_parent(current) {
            if !self.topology.in_segment(parent, segment.lo, segment.hi) {
                return segment.lo;
            }
            let same_class = class_of.get(&parent) == Some(&commit);
            if !same_class && !self.untestable[parent] {
                return parent;
            }
            current = parent;
        }
        segment.lo
    }

    /// The run-to-run noise (Gaussian-equivalent sigma) within commits, pooled over every commit of the segment
    /// and its lo: it does not depend on any partition, so a staircase does not inflate it.
    pub(super) fn within_noise(&self, segment: Segment, slope: f64) -> f64 {
        let mut groups = vec![self.adjusted(segment.lo, slope)];
        groups.extend(self.topology.segment(segment.lo, segment.hi).into_iter().map(|c| self.adjusted(c, slope)));
        let refs: Vec<&[f64]> = groups.iter().filter(|g| !g.is_empty()).map(|g| g.as_slice()).collect();
        fit_t(&refs).map(|f| f.sigma()).unwrap_or(0.0)
    }
}
