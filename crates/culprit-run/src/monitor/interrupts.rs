//! The `interrupts` and `softirqs` monitors: /proc/interrupts and /proc/softirqs sampled every interval, each
//! line summed over the CPUs and named as lkp names it (`interrupts.LOC:Local_timer_interrupts`,
//! `softirqs.TIMER`). The samples are the cumulative counts; the run's value is last minus first, the number of
//! interrupts during the run.

use super::procfs::{parse_interrupts, parse_softirqs, ProcParseError};
use super::series::{Reduction, SeriesRecorder};
use super::{Monitor, MonitorError, MonitorOutput, ProcFile, ProcRoot};

/// A parser of a /proc file of per-CPU counts into named totals.
pub type CountsParser = fn(&str) -> Result<Vec<(String, u64)>, ProcParseError>;

/// A monitor of a /proc file of per-CPU event counts.
pub struct CounterFileMonitor {
    name: &'static str,
    file: ProcFile,
    parse: CountsParser,
    recorder: SeriesRecorder,
}

impl CounterFileMonitor {
    fn sample_now(&mut self, elapsed: f64) -> Result<(), MonitorError> {
        let totals = self.file.parse(self.parse)?;
        self.recorder.push(elapsed, totals.into_iter().map(|(key, total)| (key, total as f64)));
        Ok(())
    }
}

impl Monitor for CounterFileMonitor {
    fn name(&self) -> &'static str {
        self.name
    }

    /// Takes the baseline sample, at time 0.
    fn start(&mut self) -> Result<(), MonitorError> {
        self.recorder = SeriesRecorder::of_counters();
        self.sample_now(0.0)
    }

    fn sample(&mut self, elapsed: f64) -> Result<(), MonitorError> {
        self.sample_now(elapsed)
    }

    /// Every key is an event counter (lkp lists `interrupts.` among its event-counter prefixes). lkp's list says
    /// `softirq.`, which does not match `softirqs.` keys, so lkp averages the since-boot softirq counts; Culprit
    /// counts them like interrupts, which is what a comparison between runs needs.
    fn finish(&mut self) -> Result<MonitorOutput, MonitorError> {
        Ok(self.recorder.output(self.name, |_| Reduction::Delta))
    }
}

/// The `interrupts` monitor.
pub struct Interrupts;

impl Interrupts {
    #[allow(clippy::new_ret_no_self)]
    pub fn new(root: &ProcRoot) -> CounterFileMonitor {
        CounterFileMonitor {
            name: "interrupts",
            file: root.file("interrupts", "interrupts"),
            parse: parse_interrupts,
            recorder: SeriesRecorder::of_counters(),
        }
    }
}

/// The `softirqs` monitor.
pub struct Softirqs;

impl Softirqs {
    #[allow(clippy::new_ret_no_self)]
    pub fn new(root: &ProcRoot) -> CounterFileMonitor {
        CounterFileMonitor {
            name: "softirqs",
            file: root.file("softirqs", "softirqs"),
            parse: parse_softirqs,
            recorder: SeriesRecorder::of_counters(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(dir: &str) -> ProcRoot {
        ProcRoot(format!("{}/tests/data/{dir}", env!("CARGO_MANIFEST_DIR")).into())
    }

    /// A monitor started on one recorded snapshot and sampled on the next reports the difference.
    #[test]
    fn counts_are_last_minus_first() {
        let mut monitor = Interrupts::new(&root("proc"));
        monitor.start().expect("recorded interrupts read");
        monitor.file = root("proc-1s").file("interrupts", "interrupts");
        monitor.sample(1.0).expect("second snapshot reads");
        let output = monitor.finish().expect("finish");
        // LOC went from 55767 + 58802 to 55977 + 59060.
        assert_eq!(
            output.metrics.get("interrupts.LOC:Local_timer_interrupts"),
            Some(&((55_977.0 + 59_060.0) - (55_767.0 + 58_802.0)))
        );
        assert_eq!(output.series.times, vec![0.0, 1.0]);
        assert_eq!(output.series.series.get("LOC:Local_timer_interrupts").map(Vec::len), Some(2));

        let mut softirqs = Softirqs::new(&root("proc"));
        softirqs.start().expect("recorded softirqs read");
        softirqs.file = root("proc-1s").file("softirqs", "softirqs");
        softirqs.sample(1.0).expect("second snapshot reads");
        let output = softirqs.finish().expect("finish");
        // TIMER went from 10042 + 8192 to 10074 + 8241.
        assert_eq!(output.metrics.get("softirqs.TIMER"), Some(&((10_074.0 + 8_241.0) - (10_042.0 + 8_192.0))));
    }

    /// Interrupt 44 is not in proc-1s and has fired 120 + 80 times by proc-late: it was registered during the
    /// run, so all 200 are the run's.
    #[test]
    fn an_interrupt_registered_during_the_run_counts_from_zero() {
        let mut monitor = Interrupts::new(&root("proc-1s"));
        monitor.start().expect("recorded interrupts read");
        monitor.file = root("proc-late").file("interrupts", "interrupts");
        monitor.sample(1.0).expect("second snapshot reads");
        let output = monitor.finish().expect("finish");
        let key = "44:PCI-MSIX-0000:00:06.0.0-edge.nvme0q1";
        assert_eq!(output.metrics.get(&format!("interrupts.{key}")), Some(&200.0));
        assert_eq!(output.series.series.get(key), Some(&vec![0.0, 200.0]));
        assert_eq!(output.metrics.get("interrupts.LOC:Local_timer_interrupts"), Some(&0.0));
    }
}
