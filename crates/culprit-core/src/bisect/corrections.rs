//! How the machine reads its runs: oriented values corrected for a slow drift and for load that comes and goes.

use super::*;

impl Bisect {
    /// Oriented, drift-corrected values of a commit (empty when untestable).
    pub(super) fn adjusted(&self, commit: usize, slope: f64) -> Vec<f64> {
        self.adjusted_since(commit, slope, 0)
    }

    /// The (record index, raw value) of `commit`'s runs recorded at or after record `since`: the fresh runs of a
    /// test that started then.
    pub(super) fn runs_since(&self, commit: usize, since: usize) -> impl Iterator<Item = &(f64, f64)> {
        self.values[commit].iter().filter(move |(t, _)| *t >= since as f64)
    }

    /// As [`Bisect::adjusted`], only the runs recorded at or after record `since`.
    pub(super) fn adjusted_since(&self, commit: usize, slope: f64, since: usize) -> Vec<f64> {
        self.corrected_since(commit, slope, since, true)
    }

    /// As [`Bisect::adjusted_since`], but not corrected for load: for runs taken in interleaved rounds, where load
    /// that comes and goes falls on every commit alike (see [`Bisect::replication`]).
    pub(super) fn drift_corrected_since(&self, commit: usize, slope: f64, since: usize) -> Vec<f64> {
        self.corrected_since(commit, slope, since, false)
    }

    /// `commit`'s runs since record `since`, oriented, less the drift `slope` per record from the middle record and,
    /// with `load`, less the load offset of each run's record; none for an untestable commit.
    fn corrected_since(&self, commit: usize, slope: f64, since: usize, load: bool) -> Vec<f64> {
        if self.untestable.get(commit).copied().unwrap_or(true) {
            return Vec::new();
        }
        let centre = self.records as f64 / 2.0;
        let offset = |t: f64| if load { self.offset(t) } else { 0.0 };
        self.runs_since(commit, since)
            .map(|&(t, v)| self.orientation * (v - slope * (t - centre) - offset(t)))
            .collect()
    }

    /// Says in the log when more runs than before are corrected for load, with the runs (1-based, in the order
    /// they finished) and the offset, so that `bisect log` shows why a visit's level moved.
    pub(super) fn note_load_corrections(&mut self) {
        let corrected: Vec<usize> = (0..self.offsets.len()).filter(|&t| self.offsets[t] != 0.0).collect();
        if corrected.len() <= self.load_noted {
            return;
        }
        self.load_noted = corrected.len();
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        for &t in &corrected {
            match ranges.last_mut() {
                Some(last) if last.1 + 1 == t => last.1 = t,
                _ => ranges.push((t, t)),
            }
        }
        let text: Vec<String> = ranges
            .iter()
            .map(|&(a, b)| if a == b { format!("{}", a + 1) } else { format!("{}-{}", a + 1, b + 1) })
            .collect();
        // Every loaded run gets the one fitted offset (see [`Bisect::time_offsets`]).
        let offset = corrected.first().map_or(0.0, |&t| self.offsets[t]);
        self.note(
            "load",
            format!("{} run(s) corrected for load", corrected.len()),
            format!(
                "runs {} fall in loaded time: the commits measured then and at other times too read worse together (offset {offset:.4})",
                text.join(", ")
            ),
        );
    }

    pub(super) fn offset(&self, record: f64) -> f64 {
        self.offsets.get(record as usize).copied().unwrap_or(0.0)
    }

    /// Load that comes and goes (a burst over several runs, a job that starts or stops) moves every run of its time
    /// alike, whatever the commit, and a visit that falls in it reads as a level (the t weights cannot see it: all
    /// its runs agree). The runs, in the order they finished, are fitted with [`load::fit`]: commit levels plus an
    /// offset while the machine is loaded, the loaded state a Markov chain over run order. When load stands out
    /// ([`load::LoadFit::stands_out`]), every record more likely loaded than not gets the fitted offset, zero
    /// otherwise. Load makes runs worse; for a metric whose worse direction is not known yet, both are fitted and
    /// the better fit is kept. Offsets are in the metric's raw units (before orientation).
    pub(super) fn time_offsets(&self, slope: f64) -> Vec<f64> {
        let records = self.records;
        let centre = records as f64 / 2.0;
        let mut offsets = vec![0.0; records];
        // Groups are numbered over the commits with runs only: the fit's work per group then scales with the
        // commits measured, not with the range. The runs are listed once, drift-corrected and not yet oriented.
        let measured = self.values.iter().enumerate().filter(|&(c, vs)| !self.untestable[c] && !vs.is_empty());
        let runs: Vec<load::Run> = measured
            .enumerate()
            .flat_map(|(group, (_, vs))| {
                vs.iter().map(move |&(t, v)| load::Run { record: t as usize, group, value: v - slope * (t - centre) })
            })
            .collect();
        let groups = runs.iter().map(|r| r.group + 1).max().unwrap_or(0);
        let signs: &[f64] = if self.config.direction == Direction::Any { &[1.0, -1.0] } else { &[1.0] };
        let best = signs
            .iter()
            .map(|&sign| sign * self.orientation)
            .filter_map(|worse| {
                let fit = if worse == 1.0 {
                    load::fit(&runs, records, groups)
                } else {
                    let oriented: Vec<load::Run> = runs.iter().map(|r| load::Run { value: -r.value, ..*r }).collect();
                    load::fit(&oriented, records, groups)
                };
                fit.map(|fit| (worse, fit))
            })
            .filter(|(_, fit)| fit.stands_out())
            .max_by(|a, b| a.1.gain.total_cmp(&b.1.gain));
        if let Some((worse, fit)) = best {
            for (offset, &p) in offsets.iter_mut().zip(&fit.loaded) {
                if p > 0.5 {
                    *offset = worse * fit.load;
                }
            }
        }
        offsets
    }

    /// Reads the runs' warm-up afresh from every measured run ([`model::warmup_excess`]) and takes it out of the
    /// values every test reads, so that neither the drift slope nor a level carries the machine's settling.
    pub(super) fn settle_warmup(&mut self) {
        let excess = model::warmup_excess(&self.testable_runs(&self.measured), self.measured.len());
        if excess == self.warmup {
            return;
        }
        // Said when the reading starts or stops, not at every decision that refines it, so that `bisect log` shows
        // why the first runs' levels moved.
        if (excess == 0.0) != (self.warmup == 0.0) {
            let (decision, reason) = if excess == 0.0 {
                ("runs no longer corrected for a warm-up".to_string(), "no warm-up stands out".to_string())
            } else {
                (
                    "the first runs corrected for a warm-up".to_string(),
                    format!(
                        "the session's first run read {excess:.4} off its commit's level, each later one a factor e \
                         less every {} runs, beyond what chance gives",
                        model::WARMUP_RUNS
                    ),
                )
            };
            self.note("warm-up", decision, reason);
        }
        self.warmup = excess;
        for (values, measured) in self.values.iter_mut().zip(&self.measured) {
            *values = measured.iter().map(|&(t, v)| (t, v - excess * model::warmup_shape(t))).collect();
        }
    }

    pub(super) fn drift(&self) -> f64 {
        model::drift_slope(&self.testable_runs(&self.values), self.values.len())
    }

    /// Every run of `per_commit` (the values read, or as measured) at a commit not found untestable, as the
    /// (commit, record index, value) the within-commit fits of the drift and the warm-up take.
    fn testable_runs(&self, per_commit: &[Vec<(f64, f64)>]) -> Vec<(usize, f64, f64)> {
        per_commit
            .iter()
            .enumerate()
            .filter(|(c, _)| !self.untestable[*c])
            .flat_map(|(c, vs)| vs.iter().map(move |&(t, v)| (c, t, v)))
            .collect()
    }
}
