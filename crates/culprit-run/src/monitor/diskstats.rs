//! The `diskstats` monitor: /proc/diskstats sampled every interval, per device, named as lkp's diskstats parser
//! names them (`diskstats.read_ios.vda`, `diskstats.write_sectors.vda`, `diskstats.io_ticks.vda`, ...).

use super::procfs::{parse_diskstats, DiskStats, DISKSTATS_FIELDS};
use super::series::{CounterAccumulator, CounterWidth, Reduction, SeriesRecorder};
use super::{Monitor, MonitorError, MonitorOutput, ProcFile, ProcRoot};

/// The sample of one reading: `<field>.<device>` for every device that has done any I/O since boot. Devices
/// whose every statistic is zero (unused loop and zram devices) are left out until they see I/O, so they do not
/// flood the results with zeros; the monitor's recorder then takes them to have been zero before (they were), so
/// the I/O of their first interval counts.
pub fn diskstats_row(disks: &[DiskStats]) -> Vec<(String, f64)> {
    disks
        .iter()
        .filter(|disk| disk.fields.iter().any(|value| *value != 0))
        .flat_map(|disk| {
            DISKSTATS_FIELDS
                .iter()
                .zip(disk.fields)
                .map(move |(field, value)| (format!("{field}.{}", disk.device), value as f64))
        })
        .collect()
}

/// The width of a field of [`DISKSTATS_FIELDS`] as the kernel prints it: the request, merge and sector counts are
/// unsigned longs, the millisecond fields (`*_ticks`, `io_ticks`, `time_in_queue`) unsigned ints, which wrap at
/// 2^32 ms (49.7 days; a disk's read_ticks, which add up the time of requests in parallel, at queue depth 32 in a
/// day and a half). `in_flight` is a level, never a counter.
fn field_width(field: &str) -> CounterWidth {
    if field.ends_with("_ticks") || field == "time_in_queue" {
        CounterWidth::Bits32
    } else {
        CounterWidth::Bits64
    }
}

/// `in_flight.<dev>` is a level (requests in flight now), reduced by its mean; every other field is a cumulative
/// counter, reduced to last minus first. lkp counts the same fields as events except `time_in_queue`, which it
/// averages although the kernel accumulates it; Culprit takes its difference too.
pub fn diskstats_reduction(key: &str) -> Reduction {
    if key.starts_with("in_flight.") {
        Reduction::Mean
    } else {
        Reduction::Delta
    }
}

pub struct Diskstats {
    file: ProcFile,
    counters: CounterAccumulator,
    recorder: SeriesRecorder,
}

impl Diskstats {
    pub fn new(root: &ProcRoot) -> Diskstats {
        Diskstats {
            file: root.file("diskstats", "diskstats"),
            counters: CounterAccumulator::new(),
            recorder: SeriesRecorder::of_counters(),
        }
    }

    /// One reading's row, its counters followed through wraps and restarts (see [`CounterAccumulator`]).
    fn row(&mut self, disks: &[DiskStats]) -> Vec<(String, f64)> {
        let mut row = diskstats_row(disks);
        for (key, value) in row.iter_mut() {
            if diskstats_reduction(key) != Reduction::Delta {
                continue;
            }
            let width = field_width(key.split('.').next().unwrap_or_default());
            *value = self.counters.observe(key, &[(0, *value as u64)], width);
        }
        row
    }
}

impl Monitor for Diskstats {
    fn name(&self) -> &'static str {
        "diskstats"
    }

    /// Takes the baseline sample, at time 0.
    fn start(&mut self) -> Result<(), MonitorError> {
        self.counters = CounterAccumulator::new();
        self.recorder = SeriesRecorder::of_counters();
        self.sample(0.0)
    }

    fn sample(&mut self, elapsed: f64) -> Result<(), MonitorError> {
        let disks = self.file.parse(parse_diskstats)?;
        let row = self.row(&disks);
        self.recorder.push(elapsed, row);
        Ok(())
    }

    fn finish(&mut self) -> Result<MonitorOutput, MonitorError> {
        Ok(self.recorder.output("diskstats", diskstats_reduction))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(dir: &str) -> ProcRoot {
        ProcRoot(format!("{}/tests/data/{dir}", env!("CARGO_MANIFEST_DIR")).into())
    }

    #[test]
    fn idle_devices_are_left_out() {
        let text = std::fs::read_to_string(root("proc").0.join("diskstats")).expect("recorded diskstats");
        let row = diskstats_row(&parse_diskstats(&text).expect("parses"));
        assert_eq!(row.len(), 11, "only vda has done I/O: {row:?}");
        assert_eq!(row.first(), Some(&("read_ios.vda".to_string(), 44_165.0)));
        assert_eq!(row.last(), Some(&("time_in_queue.vda".to_string(), 68_105.0)));
    }

    /// Started on one recorded snapshot and sampled on the one a second later.
    #[test]
    fn counters_are_differences_and_in_flight_is_a_mean() {
        let mut monitor = Diskstats::new(&root("proc"));
        monitor.start().expect("recorded diskstats read");
        monitor.file = root("proc-1s").file("diskstats", "diskstats");
        monitor.sample(1.0).expect("second snapshot reads");
        let metrics = monitor.finish().expect("finish").metrics;
        assert_eq!(metrics.get("diskstats.read_ios.vda"), Some(&(54_296.0 - 44_165.0)));
        assert_eq!(metrics.get("diskstats.write_sectors.vda"), Some(&(5_280_024.0 - 5_148_560.0)));
        assert_eq!(metrics.get("diskstats.in_flight.vda"), Some(&0.5));
        assert_eq!(metrics.get("diskstats.time_in_queue.vda"), Some(&(70_884.0 - 68_105.0)));
        assert_eq!(metrics.len(), 11);
    }

    /// read_ticks is printed from a 32-bit count of milliseconds: vda's wraps from 4294967000 to 1000 (1296 ms)
    /// while it reads 100 requests. Read as a plain difference, the run's read_ticks was 1000 - 4294967000.
    #[test]
    fn a_wrapped_millisecond_field_counts_what_it_counted() {
        let mut monitor = Diskstats::new(&root("proc-wrap"));
        monitor.start().expect("recorded diskstats read");
        monitor.file = root("proc-wrap-1s").file("diskstats", "diskstats");
        monitor.sample(1.0).expect("second snapshot reads");
        let metrics = monitor.finish().expect("finish").metrics;
        assert_eq!(metrics.get("diskstats.read_ticks.vda"), Some(&1296.0));
        assert_eq!(metrics.get("diskstats.read_ios.vda"), Some(&100.0));
    }

    /// loop0 is all zeros at proc-1s, so it is left out of that sample, and has read 250 requests (2000 sectors)
    /// by proc-late: those are the run's reads of loop0, not I/O from before it.
    #[test]
    fn a_device_idle_at_the_start_counts_its_first_interval() {
        let mut monitor = Diskstats::new(&root("proc-1s"));
        monitor.start().expect("recorded diskstats read");
        monitor.file = root("proc-late").file("diskstats", "diskstats");
        monitor.sample(1.0).expect("second snapshot reads");
        let output = monitor.finish().expect("finish");
        assert_eq!(output.metrics.get("diskstats.read_ios.loop0"), Some(&250.0));
        assert_eq!(output.metrics.get("diskstats.read_sectors.loop0"), Some(&2000.0));
        assert_eq!(output.metrics.get("diskstats.io_ticks.loop0"), Some(&40.0));
        assert_eq!(output.series.series.get("read_ios.loop0"), Some(&vec![0.0, 250.0]));
        assert_eq!(output.metrics.get("diskstats.read_ios.vda"), Some(&0.0));
    }
}
