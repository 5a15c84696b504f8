//! The `meminfo` monitor: /proc/meminfo sampled every interval, keys named as lkp names them
//! (`meminfo.MemFree`, `meminfo.Active(anon)`, ... in kB), plus lkp's derived `Memused` and `max_used_kB`.

use super::procfs::parse_meminfo;
use super::series::{Reduction, SeriesRecorder};
use super::{Monitor, MonitorError, MonitorOutput, ProcFile, ProcRoot};

/// One meminfo sample: every key of the file, then `Memused` (MemTotal - MemFree) and `max_used_kB` (the largest
/// Memused so far, given `max_used_so_far`), as lkp's meminfo parser prints them.
pub fn meminfo_row(entries: &[(String, u64)], max_used_so_far: Option<u64>) -> (Vec<(String, f64)>, u64) {
    let get = |key: &str| entries.iter().find(|(k, _)| k == key).map(|(_, v)| *v);
    let used = get("MemTotal").unwrap_or(0).saturating_sub(get("MemFree").unwrap_or(0));
    let max_used = max_used_so_far.map_or(used, |max| max.max(used));
    let mut row: Vec<(String, f64)> = entries.iter().map(|(key, value)| (key.clone(), *value as f64)).collect();
    row.push(("Memused".to_string(), used as f64));
    row.push(("max_used_kB".to_string(), max_used as f64));
    (row, max_used)
}

/// How each meminfo key reduces: everything is a level, so the mean, except `max_used_kB`, whose run value is
/// the largest sample (lkp averages this running maximum, which understates it).
pub fn meminfo_reduction(key: &str) -> Reduction {
    if key == "max_used_kB" {
        Reduction::Max
    } else {
        Reduction::Mean
    }
}

pub struct Meminfo {
    meminfo: ProcFile,
    max_used: Option<u64>,
    recorder: SeriesRecorder,
}

impl Meminfo {
    pub fn new(root: &ProcRoot) -> Meminfo {
        Meminfo { meminfo: root.file("meminfo", "meminfo"), max_used: None, recorder: SeriesRecorder::new() }
    }
}

impl Monitor for Meminfo {
    fn name(&self) -> &'static str {
        "meminfo"
    }

    /// Takes the first sample, at time 0, so a short run still has a before and an after.
    fn start(&mut self) -> Result<(), MonitorError> {
        self.recorder = SeriesRecorder::new();
        self.max_used = None;
        self.sample(0.0)
    }

    fn sample(&mut self, elapsed: f64) -> Result<(), MonitorError> {
        let entries = self.meminfo.parse(parse_meminfo)?;
        let (row, max_used) = meminfo_row(&entries, self.max_used);
        self.max_used = Some(max_used);
        self.recorder.push(elapsed, row);
        Ok(())
    }

    fn finish(&mut self) -> Result<MonitorOutput, MonitorError> {
        Ok(self.recorder.output("meminfo", meminfo_reduction))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memused_and_running_max() {
        let entries = |free: u64| vec![("MemTotal".to_string(), 1000), ("MemFree".to_string(), free)];
        let (row, max) = meminfo_row(&entries(600), None);
        assert_eq!(row.get(2), Some(&("Memused".to_string(), 400.0)));
        assert_eq!(max, 400);
        let (row, max) = meminfo_row(&entries(900), Some(max));
        assert_eq!(row.get(2), Some(&("Memused".to_string(), 100.0)));
        assert_eq!(row.get(3), Some(&("max_used_kB".to_string(), 400.0)));
        assert_eq!(max, 400);
    }

    #[test]
    fn monitor_on_recorded_files() {
        let root = ProcRoot(format!("{}/tests/data/proc", env!("CARGO_MANIFEST_DIR")).into());
        let mut monitor = Meminfo::new(&root);
        monitor.start().expect("recorded meminfo reads");
        monitor.sample(1.0).expect("second sample");
        let output = monitor.finish().expect("finish");
        assert_eq!(output.series.times, vec![0.0, 1.0]);
        assert_eq!(output.metrics.get("meminfo.MemTotal"), Some(&24_684_084.0));
        assert_eq!(output.metrics.get("meminfo.Memused"), Some(&(24_684_084.0 - 23_207_840.0)));
        assert_eq!(meminfo_reduction("max_used_kB"), Reduction::Max);
        assert_eq!(meminfo_reduction("Active(anon)"), Reduction::Mean);
    }
}
