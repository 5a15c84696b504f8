//! The `proc-vmstat` monitor: /proc/vmstat sampled every interval, each line a metric `proc-vmstat.<name>` as lkp's
//! proc-vmstat monitor and parser name them (`proc-vmstat.pgfault`, `proc-vmstat.numa_hit`, `proc-vmstat.nr_dirty`).
//!
//! The run's value of an event counter is the number of events during the run (last sample minus first), of a
//! level the mean of the samples, as lkp's stats reduce them. Which names are event counters is lkp's list
//! (etc/event-counter-prefixes: `pg`, `numa_`, `pswp`, `thp_`, `compact_`, `allocstall`, `kswapd_`, ...), plus the
//! cumulative counters that list lacks (`workingset_refault_file`, `oom_kill`, `zswpout`, `swap_ra`, ...): lkp
//! averages those since-boot totals, a number that says more about the machine's uptime than about the run, so
//! here they count the run's events, and their values differ from lkp's on purpose.

use super::procfs::parse_vmstat;
use super::series::{Reduction, SeriesRecorder};
use super::{Monitor, MonitorError, MonitorOutput, ProcFile, ProcRoot};

const NAME: &str = "proc-vmstat";

/// lkp's event-counter prefixes of proc-vmstat (etc/event-counter-prefixes), without the `proc-vmstat.` part.
const LKP_EVENT_COUNTER_PREFIXES: &[&str] = &[
    "allocstall",
    "compact_",
    "htlb_buddy_alloc_",
    "kswapd_",
    "nr_dirtied",
    "nr_promoted",
    "nr_promote_fail",
    "nr_promote_isolate_fail",
    "nr_promote_ratelimit",
    "nr_vmscan_immediate_reclaim",
    "nr_written",
    "numa_",
    "pageoutrun",
    "pg",
    "pswp",
    "slabs_scanned",
    "thp_",
    "unevictable_pgs_",
    "zone_reclaim_failed",
];

/// Cumulative counters of /proc/vmstat that lkp's list lacks (see the module docs).
const OTHER_EVENT_COUNTER_PREFIXES: &[&str] = &[
    "workingset_refault_",
    "workingset_activate_",
    "workingset_restore_",
    "workingset_nodereclaim",
    "nr_vmscan_write",
    "nr_throttled_written",
    "nr_foll_pin_acquired",
    "nr_foll_pin_released",
    "zone_reclaim_success",
    "drop_pagecache",
    "drop_slab",
    "oom_kill",
    "balloon_",
    "swap_ra",
    "swpin_zero",
    "swpout_zero",
    "ksm_swpin_copy",
    "cow_ksm",
    "zswpin",
    "zswpout",
    "zswpwb",
    "direct_map_level",
];

/// How a /proc/vmstat name reduces to the run's value: the events during the run for a counter, else the mean.
pub fn proc_vmstat_reduction(name: &str) -> Reduction {
    let counter = |prefix: &&str| name.starts_with(prefix);
    if LKP_EVENT_COUNTER_PREFIXES.iter().any(counter) || OTHER_EVENT_COUNTER_PREFIXES.iter().any(counter) {
        Reduction::Delta
    } else {
        Reduction::Mean
    }
}

/// The proc-vmstat monitor. Build it with [`ProcVmstat::new`].
pub struct ProcVmstat {
    vmstat: ProcFile,
    recorder: SeriesRecorder,
}

impl ProcVmstat {
    pub fn new(root: &ProcRoot) -> ProcVmstat {
        // A counter that appears mid-run (a module that adds one) counted nothing before it appeared.
        ProcVmstat { vmstat: root.file(NAME, "vmstat"), recorder: SeriesRecorder::of_counters() }
    }
}

impl Monitor for ProcVmstat {
    fn name(&self) -> &'static str {
        NAME
    }

    /// Takes the first sample, at time 0, so a short run still has a before and an after for its counters.
    fn start(&mut self) -> Result<(), MonitorError> {
        self.recorder = SeriesRecorder::of_counters();
        self.sample(0.0)
    }

    fn sample(&mut self, elapsed: f64) -> Result<(), MonitorError> {
        let counters = self.vmstat.parse(parse_vmstat)?;
        self.recorder.push(elapsed, counters.into_iter().map(|(name, value)| (name, value as f64)));
        Ok(())
    }

    fn finish(&mut self) -> Result<MonitorOutput, MonitorError> {
        Ok(self.recorder.output(NAME, proc_vmstat_reduction))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_count_the_runs_events_and_levels_are_averaged() {
        for counter in ["pgfault", "pgmajfault", "numa_hit", "pswpin", "thp_fault_alloc", "compact_stall", "oom_kill"] {
            assert_eq!(proc_vmstat_reduction(counter), Reduction::Delta, "{counter}");
        }
        for counter in ["workingset_refault_file", "zswpout", "nr_dirtied", "nr_written", "allocstall_normal"] {
            assert_eq!(proc_vmstat_reduction(counter), Reduction::Delta, "{counter}");
        }
        for level in ["nr_free_pages", "nr_dirty", "nr_anon_pages", "workingset_nodes", "nr_dirty_threshold"] {
            assert_eq!(proc_vmstat_reduction(level), Reduction::Mean, "{level}");
        }
    }

    #[test]
    fn monitor_on_recorded_files() {
        let root = ProcRoot(format!("{}/tests/data/proc", env!("CARGO_MANIFEST_DIR")).into());
        let mut monitor = ProcVmstat::new(&root);
        monitor.start().expect("recorded vmstat reads");
        monitor.sample(1.0).expect("second sample");
        let output = monitor.finish().expect("finish");
        assert_eq!(output.series.monitor, "proc-vmstat");
        assert_eq!(output.series.times, vec![0.0, 1.0]);
        // The same file twice: no events, and every level as it is in the file.
        assert_eq!(output.metrics.get("proc-vmstat.pgfault"), Some(&0.0));
        assert_eq!(output.metrics.get("proc-vmstat.nr_free_pages"), Some(&964_688.0));
        assert_eq!(output.metrics.get("proc-vmstat.numa_hit"), Some(&0.0));
        let lines = std::fs::read_to_string(root.0.join("vmstat")).expect("recorded file");
        assert_eq!(output.metrics.len(), lines.lines().count(), "one metric per line of /proc/vmstat");
    }

    #[test]
    fn the_machines_own_counters_move_for_real() {
        let mut monitor = ProcVmstat::new(&ProcRoot::system());
        monitor.start().expect("/proc/vmstat reads");
        // Touch fresh memory, which takes page faults.
        let pages: Vec<u8> = vec![1; 16 << 20];
        assert!(pages.iter().step_by(4096).all(|byte| *byte == 1));
        monitor.sample(0.1).expect("second sample");
        let output = monitor.finish().expect("finish");
        assert!(output.metrics.get("proc-vmstat.pgfault").is_some_and(|faults| *faults > 0.0), "{:?}", output.metrics);
    }
}
