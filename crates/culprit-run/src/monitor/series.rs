//! Per-interval sample series of one monitor and their per-run reduction into scalar metrics (mean of gauges,
//! last minus first of event counters), shared by every /proc monitor.

use super::MonitorOutput;
use culprit_core::model::MonitorSeries;
use std::collections::BTreeMap;

/// How a series becomes the run's single value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    /// A gauge (a level or a per-interval rate): the mean of the samples, as lkp averages non-counters.
    Mean,
    /// A cumulative event counter: last sample minus first, the number of events during the run, as lkp does
    /// for the keys in its event-counter-prefixes list.
    Delta,
    /// A running maximum: the largest sample.
    Max,
}

/// Reduces one series; `None` when there is nothing to reduce (no samples, or a counter with a single sample,
/// which says nothing about the run: lkp would report the since-boot count there, which is misleading).
pub fn reduce(values: &[f64], how: Reduction) -> Option<f64> {
    match how {
        Reduction::Mean if !values.is_empty() => Some(values.iter().sum::<f64>() / values.len() as f64),
        Reduction::Delta if values.len() >= 2 => Some(values.last()? - values.first()?),
        Reduction::Max => values.iter().copied().reduce(f64::max),
        _ => None,
    }
}

/// What a key that first appears mid-run held before it appeared.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Backfill {
    /// Its first value: right for a level (a meminfo key a module adds), which is not dragged toward zero.
    #[default]
    FirstValue,
    /// Zero: right for the event counters of a file that lists a counter only once it exists or once it is not
    /// zero (an interrupt line registered during the run, a hot-plugged disk, a disk whose statistics were all
    /// zero at the start). Such a counter was 0 before it appeared, so everything it holds at its first sample
    /// happened during the run; backfilled with its first value, the events of its first interval would be lost.
    Zero,
}

/// Collects samples of named values at times since the run started, keeping every series as long as `times`.
/// A key that first appears mid-run is backfilled as the recorder's [`Backfill`] says; a key that disappears
/// repeats its last value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SeriesRecorder {
    times: Vec<f64>,
    series: BTreeMap<String, Vec<f64>>,
    backfill: Backfill,
}

impl SeriesRecorder {
    /// A recorder whose late keys start at their first value.
    pub fn new() -> SeriesRecorder {
        SeriesRecorder::default()
    }

    /// A recorder whose late keys start at zero, for files of event counters.
    pub fn of_counters() -> SeriesRecorder {
        SeriesRecorder { backfill: Backfill::Zero, ..SeriesRecorder::default() }
    }

    /// The number of samples taken.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// Records one sample taken at `time` seconds since the start.
    pub fn push<K: AsRef<str>>(&mut self, time: f64, values: impl IntoIterator<Item = (K, f64)>) {
        let index = self.times.len();
        self.times.push(time);
        for (key, value) in values {
            let key = key.as_ref();
            let column = match self.series.get_mut(key) {
                Some(column) => column,
                None => {
                    let before = match self.backfill {
                        Backfill::FirstValue => value,
                        Backfill::Zero => 0.0,
                    };
                    self.series.entry(key.to_string()).or_insert_with(|| vec![before; index])
                }
            };
            if column.len() == index {
                column.push(value);
            } else if let Some(last) = column.last_mut() {
                // The same key twice in one sample: the later value wins.
                *last = value;
            }
        }
        for column in self.series.values_mut() {
            if column.len() == index {
                if let Some(&last) = column.last() {
                    column.push(last);
                }
            }
        }
    }

    /// The recorded series, without any prefix, as stored with the run.
    pub fn to_series(&self, monitor: &str) -> MonitorSeries {
        MonitorSeries { monitor: monitor.to_string(), times: self.times.clone(), series: self.series.clone() }
    }

    /// The per-run metrics `<prefix>.<key>`, each reduced by `rule(key)`.
    pub fn reduce(&self, prefix: &str, rule: impl Fn(&str) -> Reduction) -> BTreeMap<String, f64> {
        self.series
            .iter()
            .filter_map(|(key, values)| Some((format!("{prefix}.{key}"), reduce(values, rule(key))?)))
            .collect()
    }

    /// The whole output of a /proc monitor: its series and their reduction.
    pub fn output(&self, monitor: &str, rule: impl Fn(&str) -> Reduction) -> MonitorOutput {
        MonitorOutput { series: self.to_series(monitor), metrics: self.reduce(monitor, rule), raw: Vec::new() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduction_rules() {
        let cases: &[(&[f64], Reduction, Option<f64>)] = &[
            (&[1.0, 2.0, 6.0], Reduction::Mean, Some(3.0)),
            (&[5.0], Reduction::Mean, Some(5.0)),
            (&[], Reduction::Mean, None),
            (&[100.0, 130.0, 175.0], Reduction::Delta, Some(75.0)),
            (&[100.0], Reduction::Delta, None),
            (&[3.0, 9.0, 4.0], Reduction::Max, Some(9.0)),
            (&[], Reduction::Max, None),
        ];
        for (values, how, expected) in cases {
            assert_eq!(reduce(values, *how), *expected, "{how:?} of {values:?}");
        }
    }

    #[test]
    fn recorder_backfills_late_keys_and_repeats_vanished_ones() {
        let mut recorder = SeriesRecorder::new();
        recorder.push(0.0, [("a", 1.0), ("gone", 7.0)]);
        recorder.push(1.0, [("a", 2.0), ("late", 10.0)]);
        recorder.push(2.0, [("a", 4.0), ("late", 13.0)]);
        let series = recorder.to_series("m");
        assert_eq!(series.times, vec![0.0, 1.0, 2.0]);
        assert_eq!(series.series.get("a"), Some(&vec![1.0, 2.0, 4.0]));
        assert_eq!(series.series.get("late"), Some(&vec![10.0, 10.0, 13.0]));
        assert_eq!(series.series.get("gone"), Some(&vec![7.0, 7.0, 7.0]));
        let metrics = recorder.reduce("m", |key| if key == "a" { Reduction::Mean } else { Reduction::Delta });
        let a_mean = 7.0 / 3.0;
        assert_eq!(metrics.get("m.a"), Some(&a_mean));
        assert_eq!(metrics.get("m.late"), Some(&3.0));
        assert_eq!(metrics.get("m.gone"), Some(&0.0));
    }

    #[test]
    fn counter_recorder_backfills_late_keys_with_zero() {
        let mut recorder = SeriesRecorder::of_counters();
        recorder.push(0.0, [("a", 100.0)]);
        recorder.push(1.0, [("a", 130.0), ("late", 40.0)]);
        recorder.push(2.0, [("a", 175.0), ("late", 45.0)]);
        assert_eq!(recorder.to_series("m").series.get("late"), Some(&vec![0.0, 40.0, 45.0]));
        let metrics = recorder.reduce("m", |_| Reduction::Delta);
        assert_eq!(metrics.get("m.late"), Some(&45.0));
        assert_eq!(metrics.get("m.a"), Some(&75.0));
    }
}
