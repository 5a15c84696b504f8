//! The `interrupts` and `softirqs` monitors: /proc/interrupts and /proc/softirqs sampled every interval, each
//! line summed over the CPUs and named as lkp names it (`interrupts.LOC:Local_timer_interrupts`,
//! `softirqs.TIMER`). The samples are cumulative counts; the run's value is last minus first, the number of
//! interrupts during the run. The counts are followed per CPU, so that a 32-bit count that wraps or a CPU that
//! goes offline (and takes its column out of the file) does not move the line's count by anything but the
//! interrupts counted.

use super::procfs::{parse_interrupts_per_cpu, parse_softirqs_per_cpu, PerCpuCounts, ProcParseError};
use super::series::{CounterAccumulator, CounterWidth, Reduction, SeriesRecorder};
use super::{Monitor, MonitorError, MonitorOutput, ProcFile, ProcRoot};

/// A parser of a /proc file of per-CPU counts into named lines of per-CPU counts.
pub type CountsParser = fn(&str) -> Result<PerCpuCounts, ProcParseError>;

/// A monitor of a /proc file of per-CPU event counts.
pub struct CounterFileMonitor {
    name: &'static str,
    file: ProcFile,
    parse: CountsParser,
    counters: CounterAccumulator,
    recorder: SeriesRecorder,
}

impl CounterFileMonitor {
    fn new(name: &'static str, file: ProcFile, parse: CountsParser) -> CounterFileMonitor {
        CounterFileMonitor {
            name,
            file,
            parse,
            counters: CounterAccumulator::new(),
            recorder: SeriesRecorder::of_counters(),
        }
    }

    fn sample_now(&mut self, elapsed: f64) -> Result<(), MonitorError> {
        let lines = self.file.parse(self.parse)?;
        // Both files print every per-CPU count (and ERR and MIS) from a 32-bit unsigned int.
        let counters = &mut self.counters;
        let row: Vec<(String, f64)> = lines
            .into_iter()
            .map(|(key, per_cpu)| {
                let count = counters.observe(&key, &per_cpu, CounterWidth::Bits32);
                (key, count)
            })
            .collect();
        self.recorder.push(elapsed, row);
        Ok(())
    }
}

impl Monitor for CounterFileMonitor {
    fn name(&self) -> &'static str {
        self.name
    }

    /// Takes the baseline sample, at time 0.
    fn start(&mut self) -> Result<(), MonitorError> {
        self.counters = CounterAccumulator::new();
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
        CounterFileMonitor::new("interrupts", root.file("interrupts", "interrupts"), parse_interrupts_per_cpu)
    }
}

/// The `softirqs` monitor.
pub struct Softirqs;

impl Softirqs {
    #[allow(clippy::new_ret_no_self)]
    pub fn new(root: &ProcRoot) -> CounterFileMonitor {
        CounterFileMonitor::new("softirqs", root.file("softirqs", "softirqs"), parse_softirqs_per_cpu)
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

    /// Started on `from` and sampled on each of `then`, one second apart.
    fn run(monitor: fn(&ProcRoot) -> CounterFileMonitor, file: &str, from: &str, then: &[&str]) -> MonitorOutput {
        let mut monitor = monitor(&root(from));
        monitor.start().expect("recorded file reads");
        for (second, dir) in then.iter().enumerate() {
            monitor.file = root(dir).file("test", file);
            monitor.sample(second as f64 + 1.0).expect("next snapshot reads");
        }
        monitor.finish().expect("finish")
    }

    /// The per-CPU counts are 32-bit: LOC on CPU0 wraps from 4294967000 to 200 (496 interrupts) while CPU1 takes
    /// 258, and TIMER on CPU1 wraps from 4294967200 to 150 (246) while CPU0 takes 32. Read as line totals, the run
    /// counted 754 - 2^32 and 278 - 2^32.
    #[test]
    fn a_wrapped_per_cpu_count_counts_what_it_counted() {
        let output = run(Interrupts::new, "interrupts", "proc-wrap", &["proc-wrap-1s"]);
        assert_eq!(output.metrics.get("interrupts.LOC:Local_timer_interrupts"), Some(&(496.0 + 258.0)));
        assert_eq!(output.metrics.get("interrupts.RES:Rescheduling_interrupts"), Some(&0.0));
        let output = run(Softirqs::new, "softirqs", "proc-wrap", &["proc-wrap-1s"]);
        assert_eq!(output.metrics.get("softirqs.TIMER"), Some(&(32.0 + 246.0)));
    }

    /// CPU1 goes offline and its column leaves /proc/interrupts, while CPU0's LOC goes from 55977 to 56100. Read
    /// as line totals, the run counted 56100 - (55977 + 59060) = -58937 local timer interrupts.
    #[test]
    fn a_cpu_going_offline_takes_only_its_own_counts_along() {
        let output = run(Interrupts::new, "interrupts", "proc-1s", &["proc-offline"]);
        assert_eq!(output.metrics.get("interrupts.LOC:Local_timer_interrupts"), Some(&123.0));
        assert!(output.metrics.values().all(|count| *count >= 0.0), "{:?}", output.metrics);
        // Back online, CPU1's count is read against its last one: 59060 to 59100 is 40 more, and CPU0 took 100.
        let output = run(Interrupts::new, "interrupts", "proc-1s", &["proc-offline", "proc-online"]);
        assert_eq!(output.metrics.get("interrupts.LOC:Local_timer_interrupts"), Some(&(123.0 + 100.0 + 40.0)));
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
