//! Per-interval sample series of one monitor and their per-run reduction into scalar metrics (mean over time of
//! levels and rates, last minus first of event counters), shared by every /proc monitor.

use super::MonitorOutput;
use culprit_core::model::MonitorSeries;
use std::collections::BTreeMap;

/// How a series becomes the run's single value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    /// A level read at each sample (processes running, memory in use, requests in flight): its mean over the time
    /// the samples span, by the trapezoid rule (each interval weighs the mean of its two ends by its length). At
    /// lkp's equal intervals this is the plain mean lkp takes of non-counters, but for half the weight of the first
    /// and last samples. Here the last sample is taken when the benchmark ends, whatever the time since the one
    /// before: a plain mean weighed a reading 20 ms after the benchmark exited as a whole second of it, and pulled
    /// the `procs.r` of a 2 s run that ran at 3 to 2.33 (QA 54).
    Mean,
    /// A cumulative event counter: last sample minus first, the number of events during the run, as lkp does
    /// for the keys in its event-counter-prefixes list.
    Delta,
    /// A rate or share over the interval that ends at each sample (the first interval begins at time 0): the
    /// mean weighted by the intervals' lengths, which is the rate over the whole run. lkp's monitors print at
    /// equal intervals, where this is the plain mean; here the last sample is taken when the benchmark ends, its
    /// interval anything from a few microseconds up, and a sampling thread that fell behind makes a longer one.
    /// Weighed as one sample among the others, a last interval of 2 ms without a tick made a run 100/N % more
    /// idle, and one that caught a burst of writeback multiplied it by the interval's shortness.
    IntervalMean,
    /// A running maximum: the largest sample.
    Max,
}

/// Reduces one series sampled at `times` (seconds since the monitor started); `None` when there is nothing to
/// reduce (no samples, or a counter with a single sample, which says nothing about the run: lkp would report the
/// since-boot count there, which is misleading).
pub fn reduce(values: &[f64], times: &[f64], how: Reduction) -> Option<f64> {
    // A level or rate that held one value all run is that value: weighing it by the intervals' lengths and
    // dividing again gave a meminfo gauge of 30720 kB as 30719.999999999996.
    if matches!(how, Reduction::Mean | Reduction::IntervalMean) {
        if let Some(&first) = values.first().filter(|first| values.iter().all(|value| value == *first)) {
            return Some(first);
        }
    }
    match how {
        Reduction::Mean if !values.is_empty() => {
            let (mut area, mut span) = (0.0, 0.0);
            for (ends, at) in values.windows(2).zip(times.windows(2)) {
                let length = (at[1] - at[0]).max(0.0);
                area += (ends[0] + ends[1]) / 2.0 * length;
                span += length;
            }
            // One sample, or samples without a length between them (all at one time), have no span to average
            // over; their plain mean is all there is.
            if span > 0.0 && times.len() == values.len() {
                Some(area / span)
            } else {
                culprit_core::stats::mean(values)
            }
        }
        Reduction::IntervalMean if !values.is_empty() => {
            let mut start = 0.0;
            let (mut weighted, mut total) = (0.0, 0.0);
            for (value, end) in values.iter().zip(times) {
                let length = (end - start).max(0.0);
                weighted += value * length;
                total += length;
                start = *end;
            }
            // Samples without a length (all at time 0) have nothing to weigh by; their plain mean is all there is.
            if total > 0.0 && times.len() == values.len() {
                Some(weighted / total)
            } else {
                culprit_core::stats::mean(values)
            }
        }
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
            .filter_map(|(key, values)| Some((format!("{prefix}.{key}"), reduce(values, &self.times, rule(key))?)))
            .collect()
    }

    /// The whole output of a /proc monitor: its series and their reduction.
    pub fn output(&self, monitor: &str, rule: impl Fn(&str) -> Reduction) -> MonitorOutput {
        MonitorOutput { series: self.to_series(monitor), metrics: self.reduce(monitor, rule), raw: Vec::new() }
    }
}

/// How many bits a kernel counter has: the per-CPU counts of /proc/interrupts and /proc/softirqs and the
/// millisecond fields of /proc/diskstats are printed from `unsigned int`s, which wrap at 2^32 (a busy device's
/// interrupt on one CPU at 100,000 a second wraps every 12 hours, a disk's read_ticks at queue depth 32 every day
/// and a half); the other diskstats fields are 64-bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterWidth {
    Bits32,
    Bits64,
}

/// The events a counter counted between two readings. A counter only falls by wrapping (a 32-bit counter past
/// 2^32) or by starting again from zero (an interrupt freed and requested again, a disk removed and added).
/// A 32-bit fall is read as a wrap when the wrapped difference is below 2^31 (no counter of one CPU counts two
/// billion events in an interval), else as a restart, which counted `current` events since.
pub fn increment(previous: u64, current: u64, width: CounterWidth) -> u64 {
    if current >= previous {
        return current - previous;
    }
    const WRAP: u64 = 1 << 32;
    match width {
        CounterWidth::Bits32 if previous < WRAP && current + WRAP - previous < WRAP / 2 => current + WRAP - previous,
        _ => current,
    }
}

/// Turns readings of kernel counters, each a key with its per-CPU (or per-part) counts, into one cumulative count
/// per key that only moves by the events counted: the count at the first reading, plus each part's increment
/// since its previous reading. Last minus first of such a series is the events of the run even when a 32-bit
/// count wraps or a counter restarts (read as the total, a wrap made the run's count about -4.3 billion), and when
/// a CPU goes offline and its column leaves the file (read as the total, its counts vanished from the run's count,
/// which could fall below zero). An offline CPU's last count is kept, so the events it counted between that
/// reading and going offline are counted when it comes back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CounterAccumulator {
    keys: BTreeMap<String, CounterState>,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct CounterState {
    cumulative: f64,
    last: BTreeMap<u32, u64>,
}

impl CounterAccumulator {
    pub fn new() -> CounterAccumulator {
        CounterAccumulator::default()
    }

    /// Takes one reading of `key`'s parts and returns its cumulative count. A key read for the first time counts
    /// all it holds (at the start, the count since boot; later, a counter that did not exist before); a part new
    /// to a known key (a CPU that was offline since before the start) counts from this reading on, since its
    /// count since boot is not the run's.
    pub fn observe(&mut self, key: &str, parts: &[(u32, u64)], width: CounterWidth) -> f64 {
        match self.keys.get_mut(key) {
            Some(state) => {
                for (part, count) in parts {
                    match state.last.get_mut(part) {
                        Some(previous) => {
                            state.cumulative += increment(*previous, *count, width) as f64;
                            *previous = *count;
                        }
                        None => {
                            state.last.insert(*part, *count);
                        }
                    }
                }
                state.cumulative
            }
            None => {
                let cumulative = parts.iter().map(|(_, count)| *count as f64).sum();
                let last = parts.iter().copied().collect();
                self.keys.insert(key.to_string(), CounterState { cumulative, last });
                cumulative
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduction_rules() {
        let cases: &[(&[f64], Reduction, Option<f64>)] = &[
            (&[1.0, 2.0, 6.0], Reduction::Mean, Some(2.75)),
            (&[2.0, 4.0, 4.0, 2.0], Reduction::Mean, Some(10.0 / 3.0)),
            (&[5.0], Reduction::Mean, Some(5.0)),
            (&[], Reduction::Mean, None),
            (&[100.0, 130.0, 175.0], Reduction::Delta, Some(75.0)),
            (&[100.0], Reduction::Delta, None),
            (&[3.0, 9.0, 4.0], Reduction::Max, Some(9.0)),
            (&[], Reduction::Max, None),
        ];
        for (values, how, expected) in cases {
            let times: Vec<f64> = (1..=values.len()).map(|t| t as f64).collect();
            assert_eq!(reduce(values, &times, *how), *expected, "{how:?} of {values:?}");
        }
        // Rates over intervals of 1 s, 1 s and 0.5 s: 250 events in 2.5 s.
        assert_eq!(reduce(&[100.0, 100.0, 100.0], &[1.0, 2.0, 2.5], Reduction::IntervalMean), Some(100.0));
        assert_eq!(reduce(&[100.0, 50.0, 0.0], &[1.0, 2.0, 2.5], Reduction::IntervalMean), Some(60.0));
        assert_eq!(reduce(&[3.0, 5.0], &[0.0, 0.0], Reduction::IntervalMean), Some(4.0));
        assert_eq!(reduce(&[], &[], Reduction::IntervalMean), None);
        // QA 54: vmstat's `procs.r` of a 2 s run, 3 while the benchmark ran and 1 in the sample taken 20 ms after it
        // exited, is about 3, not the plain mean 2.33.
        let level = reduce(&[3.0, 3.0, 1.0], &[1.0, 2.0, 2.02], Reduction::Mean).unwrap();
        assert!((level - 3.04 / 1.02).abs() < 1e-12, "{level}");
        assert_eq!(reduce(&[3.0, 5.0], &[0.0, 0.0], Reduction::Mean), Some(4.0));
        // QA 58: a gauge that never moved is stored as read, without the rounding error of weighing it.
        let times = [0.0, 0.133, 0.882, 2.306, 2.618];
        assert_eq!(reduce(&[30720.0; 5], &times, Reduction::Mean), Some(30720.0));
        assert_eq!(reduce(&[0.1; 5], &times, Reduction::IntervalMean), Some(0.1));
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
        // Over 0 s to 2 s by the trapezoid rule: (1.5 + 3) / 2.
        let a_mean = 2.25;
        assert_eq!(metrics.get("m.a"), Some(&a_mean));
        assert_eq!(metrics.get("m.late"), Some(&3.0));
        assert_eq!(metrics.get("m.gone"), Some(&0.0));
    }

    #[test]
    fn increments_through_wraps_and_restarts() {
        let top = u64::from(u32::MAX);
        let cases = [
            (100, 175, CounterWidth::Bits32, 75),
            // A 32-bit count past 2^32: from 2^32 - 100 up to 2^32 (read as 0) is 100 events, then 50 more.
            (top - 99, 50, CounterWidth::Bits32, 150),
            // A fall that no wrap explains (the wrapped difference would be above 2^31) is a restart from zero.
            (5_000, 10, CounterWidth::Bits32, 10),
            // A 64-bit counter never wraps in practice; it falls only by restarting.
            (top - 99, 50, CounterWidth::Bits64, 50),
            (7, 7, CounterWidth::Bits64, 0),
        ];
        for (previous, current, width, want) in cases {
            assert_eq!(increment(previous, current, width), want, "{previous} -> {current} ({width:?})");
        }
    }

    #[test]
    fn accumulator_follows_each_part() {
        let mut counters = CounterAccumulator::new();
        assert_eq!(counters.observe("k", &[(0, 10), (1, 20)], CounterWidth::Bits32), 30.0);
        // CPU1 offline: only CPU0's 5 more count.
        assert_eq!(counters.observe("k", &[(0, 15)], CounterWidth::Bits32), 35.0);
        // CPU1 back with 26 (6 more than its last reading) and CPU2, never seen before, counts from here on.
        assert_eq!(counters.observe("k", &[(0, 15), (1, 26), (2, 1_000)], CounterWidth::Bits32), 41.0);
        // A key first read later counts all it holds: it was zero before it existed.
        assert_eq!(counters.observe("new", &[(0, 4)], CounterWidth::Bits32), 4.0);
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
