//! The vmstat-equivalent monitor (lkp's `vmstat.*` names, computed as procps-ng's `vmstat 1` computes them, from
//! /proc/stat, /proc/meminfo and /proc/vmstat) and the `proc-stat` monitor (every /proc/stat CPU field as a
//! share, plus event rates), both read in-process.

use super::procfs::{parse_meminfo, parse_stat, parse_vmstat, CpuTicks, ProcStat};
use super::series::{Reduction, SeriesRecorder};
use super::{Monitor, MonitorError, MonitorOutput, ProcFile, ProcRoot};

/// The counters of /proc/stat and /proc/vmstat that vmstat turns into per-interval figures.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VmstatCounters {
    pub stat: ProcStat,
    /// KiB read from block devices since boot (the kernel counts `pgpgin` in KiB, not pages).
    pub pgpgin: u64,
    pub pgpgout: u64,
    /// Pages swapped in and out since boot.
    pub pswpin: u64,
    pub pswpout: u64,
}

impl VmstatCounters {
    /// Combines parsed /proc/stat and /proc/vmstat; counters missing from /proc/vmstat (a kernel without swap
    /// support has no pswpin) count as zero.
    pub fn new(stat: ProcStat, vmstat: &std::collections::BTreeMap<&str, u64>) -> VmstatCounters {
        let get = |key: &str| vmstat.get(key).copied().unwrap_or(0);
        VmstatCounters {
            stat,
            pgpgin: get("pgpgin"),
            pgpgout: get("pgpgout"),
            pswpin: get("pswpin"),
            pswpout: get("pswpout"),
        }
    }
}

fn delta(previous: u64, current: u64) -> f64 {
    // These 64-bit counters never run backwards on a healthy kernel; a negative difference is taken as zero rather
    // than wrapped.
    current.saturating_sub(previous) as f64
}

/// Each field's ticks from `previous` to `current`, a field that ran backwards giving zero.
fn ticks_between(previous: &CpuTicks, current: &CpuTicks) -> CpuTicks {
    fieldwise(previous, current, |then, now| now.saturating_sub(then))
}

/// `combine` applied to each field of `a` and `b`.
fn fieldwise(a: &CpuTicks, b: &CpuTicks, combine: impl Fn(u64, u64) -> u64) -> CpuTicks {
    CpuTicks {
        user: combine(a.user, b.user),
        nice: combine(a.nice, b.nice),
        system: combine(a.system, b.system),
        idle: combine(a.idle, b.idle),
        iowait: combine(a.iowait, b.iowait),
        irq: combine(a.irq, b.irq),
        softirq: combine(a.softirq, b.softirq),
        steal: combine(a.steal, b.steal),
        guest: combine(a.guest, b.guest),
        guest_nice: combine(a.guest_nice, b.guest_nice),
    }
}

/// The CPU ticks of the interval between two readings of /proc/stat, per field.
///
/// While the same CPUs are online at both readings, they are the differences of the aggregate `cpu` line, as vmstat
/// takes them. When a CPU went offline or came back between the readings, the aggregate is no measure of the
/// interval: it sums every possible CPU, and the kernel reads an online CPU's idle and iowait from its no-tick idle
/// clock but an offline CPU's from the tick counts, which are far apart, so the aggregate idle jumps and iowait runs
/// backwards (recorded here when CPU1 went offline: idle +22792 ticks in an instant, iowait -4428, and the reverse
/// when it came back). Such an interval's ticks are summed over the CPUs whose `cpu<N>` line both readings have; a
/// CPU that changed state takes no part in it, which loses at most its ticks of that one interval.
pub fn cpu_ticks_during(previous: &ProcStat, current: &ProcStat) -> CpuTicks {
    let same_cpus = previous.cpus.len() == current.cpus.len()
        && previous.cpus.iter().zip(&current.cpus).all(|((a, _), (b, _))| a == b);
    if same_cpus || previous.cpus.is_empty() || current.cpus.is_empty() {
        return ticks_between(&previous.cpu, &current.cpu);
    }
    let mut sum = CpuTicks::default();
    for (number, now) in &current.cpus {
        let Some((_, then)) = previous.cpus.iter().find(|(n, _)| n == number) else { continue };
        sum = fieldwise(&sum, &ticks_between(then, now), |a, b| a + b);
    }
    sum
}

/// vmstat's CPU columns for one interval whose ticks are `ticks` ([`cpu_ticks_during`]), in percent: `us` (user +
/// nice, minus guest time, which the kernel also counts as user), `sy` (system + irq + softirq), `id`, `wa`
/// (iowait), `st` (steal) and `gu` (guest + guest_nice). The divisor is the interval's total ticks excluding guest,
/// as procps-ng 4 computes it. vmstat rounds each share to an integer; these stay floats, so
/// `us + sy + id + wa + st` is 100 up to float error. An interval without any tick (shorter than one jiffy) counts
/// as all idle, as vmstat does.
pub fn vmstat_cpu_shares(ticks: &CpuTicks) -> [(&'static str, f64); 6] {
    let user = (ticks.user + ticks.nice) as f64;
    let guest = (ticks.guest + ticks.guest_nice) as f64;
    let system = (ticks.system + ticks.irq + ticks.softirq) as f64;
    let mut idle = ticks.idle as f64;
    let iowait = ticks.iowait as f64;
    let steal = ticks.steal as f64;
    let mut total = user + system + idle + iowait + steal;
    if total == 0.0 {
        total = 1.0;
        idle = 1.0;
    }
    let share = |ticks: f64| 100.0 * ticks / total;
    [
        ("cpu.us", share((user - guest).max(0.0))),
        ("cpu.sy", share(system)),
        ("cpu.id", share(idle)),
        ("cpu.wa", share(iowait)),
        ("cpu.st", share(steal)),
        ("cpu.gu", share(guest)),
    ]
}

/// vmstat's memory columns in KiB from /proc/meminfo: `swpd` = SwapTotal - SwapFree, `free` = MemFree, `buff` =
/// Buffers, `cache` = Cached + SReclaimable (procps-ng's "cached all").
pub fn vmstat_memory(meminfo: &[(String, u64)]) -> [(&'static str, f64); 4] {
    let get = |key: &str| meminfo.iter().find(|(k, _)| k == key).map_or(0, |(_, v)| *v);
    [
        ("memory.swpd", get("SwapTotal").saturating_sub(get("SwapFree")) as f64),
        ("memory.free", get("MemFree") as f64),
        ("memory.buff", get("Buffers") as f64),
        ("memory.cache", (get("Cached") + get("SReclaimable")) as f64),
    ]
}

/// One vmstat line for the interval of `seconds` between two readings, with lkp's key names. Rates are per
/// second: `swap.si/so` in KiB/s, `io.bi/bo` in KiB/s (vmstat's 1 KiB blocks), `system.in/cs` in events/s;
/// `procs.r/b` are the current procs_running/procs_blocked, which (as in vmstat) include the sampler itself.
pub fn vmstat_row(
    previous: &VmstatCounters,
    current: &VmstatCounters,
    meminfo: &[(String, u64)],
    seconds: f64,
    kib_per_page: f64,
) -> Vec<(&'static str, f64)> {
    let rate = |a: u64, b: u64| delta(a, b) / seconds;
    let mut row = vec![
        ("procs.r", current.stat.procs_running as f64),
        ("procs.b", current.stat.procs_blocked as f64),
    ];
    row.extend(vmstat_memory(meminfo));
    row.extend([
        ("swap.si", rate(previous.pswpin, current.pswpin) * kib_per_page),
        ("swap.so", rate(previous.pswpout, current.pswpout) * kib_per_page),
        ("io.bi", rate(previous.pgpgin, current.pgpgin)),
        ("io.bo", rate(previous.pgpgout, current.pgpgout)),
        ("system.in", rate(previous.stat.intr, current.stat.intr)),
        ("system.cs", rate(previous.stat.ctxt, current.stat.ctxt)),
    ]);
    row.extend(vmstat_cpu_shares(&cpu_ticks_during(&previous.stat, &current.stat)));
    row
}

/// How each vmstat key reduces: the levels read at each sample (`procs.*`, `memory.*`) by their mean, the rates and
/// CPU shares, which are over the interval that ends at each sample, by their mean weighted by the intervals'
/// lengths (see [`Reduction::IntervalMean`]).
pub fn vmstat_reduction(key: &str) -> Reduction {
    if key.starts_with("procs.") || key.starts_with("memory.") {
        Reduction::Mean
    } else {
        Reduction::IntervalMean
    }
}

/// How each proc-stat key reduces: `procs_running` and `procs_blocked`, read at each sample, by their mean; the
/// shares and rates over each interval by their mean weighted by the intervals' lengths.
pub fn proc_stat_reduction(key: &str) -> Reduction {
    if key.starts_with("procs_") {
        Reduction::Mean
    } else {
        Reduction::IntervalMean
    }
}

/// The page size in KiB, for converting swapped pages to KiB.
fn kib_per_page() -> f64 {
    // SAFETY: sysconf only reads a configuration value; it has no memory-safety preconditions.
    let bytes = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if bytes > 0 {
        bytes as f64 / 1024.0
    } else {
        4.0
    }
}

/// The `vmstat` monitor: a line per interval, like `vmstat 1`, without the since-boot first line that vmstat
/// prints (and lkp averages in). Every key is a gauge, reduced by its mean as lkp reduces vmstat, the rates and
/// shares weighted by their intervals' lengths ([`vmstat_reduction`]).
pub struct Vmstat {
    stat: ProcFile,
    meminfo: ProcFile,
    vmstat: ProcFile,
    kib_per_page: f64,
    previous: Option<(f64, VmstatCounters)>,
    recorder: SeriesRecorder,
}

impl Vmstat {
    pub fn new(root: &ProcRoot) -> Vmstat {
        Vmstat {
            stat: root.file("vmstat", "stat"),
            meminfo: root.file("vmstat", "meminfo"),
            vmstat: root.file("vmstat", "vmstat"),
            kib_per_page: kib_per_page(),
            previous: None,
            recorder: SeriesRecorder::new(),
        }
    }

    fn read_counters(&mut self) -> Result<VmstatCounters, MonitorError> {
        let stat = self.stat.parse(parse_stat)?;
        let vmstat = self.vmstat.parse(parse_vmstat)?;
        Ok(VmstatCounters::new(stat, &vmstat))
    }
}

impl Monitor for Vmstat {
    fn name(&self) -> &'static str {
        "vmstat"
    }

    fn start(&mut self) -> Result<(), MonitorError> {
        self.recorder = SeriesRecorder::new();
        let counters = self.read_counters()?;
        // Reading meminfo here proves it is readable before the benchmark starts.
        self.meminfo.parse(parse_meminfo)?;
        self.previous = Some((0.0, counters));
        Ok(())
    }

    fn sample(&mut self, elapsed: f64) -> Result<(), MonitorError> {
        let current = self.read_counters()?;
        let meminfo = self.meminfo.parse(parse_meminfo)?;
        if let Some((then, previous)) = &self.previous {
            let seconds = elapsed - then;
            if seconds <= 0.0 {
                return Ok(());
            }
            self.recorder.push(elapsed, vmstat_row(previous, &current, &meminfo, seconds, self.kib_per_page));
        }
        self.previous = Some((elapsed, current));
        Ok(())
    }

    fn finish(&mut self) -> Result<MonitorOutput, MonitorError> {
        Ok(self.recorder.output("vmstat", vmstat_reduction))
    }
}

/// One proc-stat line for an interval: every CPU field of /proc/stat as a percent of the interval's ticks
/// (`cpu.user` ... `cpu.steal` sum to 100; `cpu.guest` and `cpu.guest_nice` are already inside user and nice),
/// `intr`, `ctxt` and `processes` (forks) per second, and the current `procs_running` and `procs_blocked`.
pub fn proc_stat_row(previous: &ProcStat, current: &ProcStat, seconds: f64) -> Vec<(&'static str, f64)> {
    let t = cpu_ticks_during(previous, current);
    let fields = [
        ("cpu.user", t.user as f64),
        ("cpu.nice", t.nice as f64),
        ("cpu.system", t.system as f64),
        ("cpu.idle", t.idle as f64),
        ("cpu.iowait", t.iowait as f64),
        ("cpu.irq", t.irq as f64),
        ("cpu.softirq", t.softirq as f64),
        ("cpu.steal", t.steal as f64),
        ("cpu.guest", t.guest as f64),
        ("cpu.guest_nice", t.guest_nice as f64),
    ];
    let total: f64 = fields.iter().take(8).map(|(_, ticks)| ticks).sum();
    let mut row: Vec<(&'static str, f64)> = fields
        .iter()
        .map(|&(key, ticks)| (key, if total > 0.0 { 100.0 * ticks / total } else { 0.0 }))
        .collect();
    row.extend([
        ("intr", delta(previous.intr, current.intr) / seconds),
        ("ctxt", delta(previous.ctxt, current.ctxt) / seconds),
        ("processes", delta(previous.processes, current.processes) / seconds),
        ("procs_running", current.procs_running as f64),
        ("procs_blocked", current.procs_blocked as f64),
    ]);
    row
}

/// The `proc-stat` monitor. lkp has a proc-stat monitor that saves /proc/stat every 10 s but no parser for it,
/// so these names are Culprit's own (see [`proc_stat_row`]); every key is a gauge, reduced by its mean (the shares
/// and rates weighted by their intervals' lengths, [`proc_stat_reduction`]).
pub struct ProcStatMonitor {
    stat: ProcFile,
    previous: Option<(f64, ProcStat)>,
    recorder: SeriesRecorder,
}

impl ProcStatMonitor {
    pub fn new(root: &ProcRoot) -> ProcStatMonitor {
        ProcStatMonitor { stat: root.file("proc-stat", "stat"), previous: None, recorder: SeriesRecorder::new() }
    }
}

impl Monitor for ProcStatMonitor {
    fn name(&self) -> &'static str {
        "proc-stat"
    }

    fn start(&mut self) -> Result<(), MonitorError> {
        self.recorder = SeriesRecorder::new();
        self.previous = Some((0.0, self.stat.parse(parse_stat)?));
        Ok(())
    }

    fn sample(&mut self, elapsed: f64) -> Result<(), MonitorError> {
        let current = self.stat.parse(parse_stat)?;
        if let Some((then, previous)) = &self.previous {
            let seconds = elapsed - then;
            if seconds <= 0.0 {
                return Ok(());
            }
            self.recorder.push(elapsed, proc_stat_row(previous, &current, seconds));
        }
        self.previous = Some((elapsed, current));
        Ok(())
    }

    fn finish(&mut self) -> Result<MonitorOutput, MonitorError> {
        Ok(self.recorder.output("proc-stat", proc_stat_reduction))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(dir: &str) -> (VmstatCounters, Vec<(String, u64)>) {
        let read = |name: &str| {
            let path = format!("{}/tests/data/{dir}/{name}", env!("CARGO_MANIFEST_DIR"));
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
        };
        let stat = parse_stat(&read("stat")).expect("stat parses");
        let vmstat_text = read("vmstat");
        let vmstat = parse_vmstat(&vmstat_text).expect("vmstat parses");
        let meminfo = parse_meminfo(&read("meminfo")).expect("meminfo parses");
        (VmstatCounters::new(stat, &vmstat), meminfo)
    }

    fn value(row: &[(&'static str, f64)], key: &str) -> f64 {
        row.iter().find(|(k, _)| *k == key).map(|(_, v)| *v).unwrap_or(f64::NAN)
    }

    /// The two recorded snapshots are one second apart: cpu went from
    /// `31255 0 4748 57940 543 0 53 26` to `31272 0 4794 58033 580 0 57 27`, i.e. 17 user, 46 system,
    /// 4 softirq, 93 idle, 37 iowait and 1 steal tick: 198 in all.
    #[test]
    fn vmstat_row_golden_from_recorded_snapshots() {
        let (before, _) = counters("proc");
        let (after, meminfo) = counters("proc-1s");
        let row = vmstat_row(&before, &after, &meminfo, 1.0, 4.0);
        let total = 198.0;
        assert_eq!(value(&row, "cpu.us"), 100.0 * 17.0 / total);
        assert_eq!(value(&row, "cpu.sy"), 100.0 * 50.0 / total);
        assert_eq!(value(&row, "cpu.id"), 100.0 * 93.0 / total);
        assert_eq!(value(&row, "cpu.wa"), 100.0 * 37.0 / total);
        assert_eq!(value(&row, "cpu.st"), 100.0 * 1.0 / total);
        assert_eq!(value(&row, "cpu.gu"), 0.0);
        assert_eq!(value(&row, "io.bi"), (2_109_833 - 2_069_573) as f64);
        assert_eq!(value(&row, "io.bo"), (2_640_012 - 2_574_280) as f64);
        assert_eq!(value(&row, "swap.si"), 0.0);
        assert_eq!(value(&row, "system.cs"), (after.stat.ctxt - before.stat.ctxt) as f64);
        assert_eq!(value(&row, "system.in"), (after.stat.intr - before.stat.intr) as f64);
        assert_eq!(value(&row, "procs.r"), after.stat.procs_running as f64);
        let memfree = meminfo.iter().find(|(k, _)| k == "MemFree").map(|(_, v)| *v as f64);
        assert_eq!(Some(value(&row, "memory.free")), memfree);
        assert_eq!(row.len(), 18);
    }

    #[test]
    fn vmstat_rates_scale_with_the_interval() {
        let (before, _) = counters("proc");
        let (after, meminfo) = counters("proc-1s");
        let one = vmstat_row(&before, &after, &meminfo, 1.0, 4.0);
        let two = vmstat_row(&before, &after, &meminfo, 2.0, 4.0);
        assert_eq!(value(&two, "system.cs") * 2.0, value(&one, "system.cs"));
        assert_eq!(value(&two, "cpu.id"), value(&one, "cpu.id"));
    }

    #[test]
    fn cpu_share_cases() {
        let ticks = |user, nice, system, idle, guest| CpuTicks { user, nice, system, idle, guest, ..CpuTicks::default() };
        // Guest time is inside user time: 60 user ticks of which 20 guest give us = 40, gu = 20 of 100.
        let shares = vmstat_cpu_shares(&ticks(60, 0, 10, 30, 20));
        assert_eq!(shares.map(|(_, v)| v), [40.0, 10.0, 30.0, 0.0, 0.0, 20.0]);
        // Nice counts as user.
        let shares = vmstat_cpu_shares(&ticks(25, 25, 0, 50, 0));
        assert_eq!(shares.first().map(|s| s.1), Some(50.0));
        // No tick at all: all idle, as vmstat shows it.
        let shares = vmstat_cpu_shares(&CpuTicks::default());
        assert_eq!(shares.get(2).map(|s| s.1), Some(100.0));
        // Idle running backwards is taken as zero, not as a huge wrapped number.
        let stat = |cpu| ProcStat { cpu, ..ProcStat::default() };
        let during = cpu_ticks_during(&stat(ticks(0, 0, 0, 10, 0)), &stat(ticks(10, 0, 0, 5, 0)));
        assert_eq!(vmstat_cpu_shares(&during).map(|(_, v)| v), [100.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    }

    fn proc_root(dir: &str) -> ProcRoot {
        ProcRoot(format!("{}/tests/data/{dir}", env!("CARGO_MANIFEST_DIR")).into())
    }

    /// The set takes a last sample when the benchmark ends, whenever that is: here 2 ms after the one at 1 s, an
    /// interval without a tick (all idle, as vmstat counts it) and without I/O. It is 2 ms of a 1.002 s run and
    /// weighs as much; counted as one sample of two, it made the run 73.5% idle (46.97% in the full second) and
    /// halved io.bi (20130 KiB/s, where 40260 KiB were read in 1.002 s).
    #[test]
    fn a_short_last_interval_weighs_by_its_length() {
        let mut monitor = Vmstat::new(&proc_root("proc"));
        monitor.start().expect("recorded files read");
        let later = proc_root("proc-1s");
        (monitor.stat, monitor.meminfo, monitor.vmstat) =
            (later.file("vmstat", "stat"), later.file("vmstat", "meminfo"), later.file("vmstat", "vmstat"));
        monitor.sample(1.0).expect("a full interval");
        monitor.sample(1.002).expect("the last, short interval");
        let metrics = monitor.finish().expect("finish").metrics;
        let close = |metrics: &std::collections::BTreeMap<String, f64>, key: &str, want: f64| {
            let got = metrics.get(key).copied().unwrap_or(f64::NAN);
            assert!((got - want).abs() < 1e-9 * want.abs().max(1.0), "{key}: {got}, want {want}");
        };
        close(&metrics, "vmstat.cpu.id", (100.0 * 93.0 / 198.0 * 1.0 + 100.0 * 0.002) / 1.002);
        close(&metrics, "vmstat.io.bi", (2_109_833.0 - 2_069_573.0) / 1.002);
        // Levels read at each sample are not rates over an interval: their mean is the plain mean.
        close(&metrics, "vmstat.procs.r", after_procs_running());

        let mut monitor = ProcStatMonitor::new(&proc_root("proc"));
        monitor.start().expect("recorded stat reads");
        monitor.stat = later.file("proc-stat", "stat");
        monitor.sample(1.0).expect("a full interval");
        monitor.sample(1.002).expect("the last, short interval");
        let metrics = monitor.finish().expect("finish").metrics;
        // proc-stat counts an interval without a tick as no share of anything.
        close(&metrics, "proc-stat.cpu.idle", 100.0 * 93.0 / 198.0 / 1.002);
    }

    fn hotplug_stat(name: &str) -> ProcStat {
        let path = format!("{}/tests/data/proc-hotplug/{name}/stat", env!("CARGO_MANIFEST_DIR"));
        parse_stat(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))).expect("stat parses")
    }

    /// Real /proc/stat around CPU1 going offline and coming back (tests/data/proc-hotplug/README). From the aggregate
    /// line, the interval in which CPU1 went offline read 99.97% idle (idle +22792 ticks against 6 of user) on a
    /// machine busy on both CPUs, and the one in which it came back 99.9% iowait (iowait +4428, idle -22788 taken
    /// as 0). Read from the CPUs online at both readings (CPU0 alone), both are CPU0's few user ticks.
    #[test]
    fn cpu_hotplug_intervals_read_the_cpus_online_at_both_readings() {
        let names = ["0-online", "1-cpu1-offline", "2-offline-1s", "3-cpu1-online", "4-online-1s"];
        let stats: Vec<ProcStat> = names.iter().map(|name| hotplug_stat(name)).collect();
        let during: Vec<CpuTicks> = stats.windows(2).map(|w| cpu_ticks_during(&w[0], &w[1])).collect();
        // CPU0 alone where CPU1 changed state: 5 and 3 user ticks (2928401 to 2928406, 2928502 to 2928505).
        assert_eq!(during[0], CpuTicks { user: 5, ..CpuTicks::default() });
        assert_eq!(during[2], CpuTicks { user: 3, ..CpuTicks::default() });
        // The aggregate where the same CPUs were online at both readings.
        assert_eq!(during[1], CpuTicks { user: 96, system: 5, ..CpuTicks::default() });
        assert_eq!(during[3], CpuTicks { user: 194, system: 7, ..CpuTicks::default() });
        for ticks in [&during[0], &during[2]] {
            assert_eq!(vmstat_cpu_shares(ticks).map(|(_, v)| v), [100.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        }

        let mut monitor = ProcStatMonitor::new(&proc_root("proc-hotplug/0-online"));
        monitor.start().expect("recorded stat reads");
        for (name, elapsed) in names.iter().skip(1).zip([0.05, 1.05, 1.1, 2.1]) {
            monitor.stat = proc_root(&format!("proc-hotplug/{name}")).file("proc-stat", "stat");
            monitor.sample(elapsed).expect("sample");
        }
        let metrics = monitor.finish().expect("finish").metrics;
        assert_eq!(metrics.get("proc-stat.cpu.idle"), Some(&0.0), "{metrics:?}");
        assert_eq!(metrics.get("proc-stat.cpu.iowait"), Some(&0.0), "{metrics:?}");
        let user = metrics.get("proc-stat.cpu.user").copied().unwrap_or(f64::NAN);
        let want = (100.0 * 0.05 + 100.0 * 96.0 / 101.0 + 100.0 * 0.05 + 100.0 * 194.0 / 201.0) / 2.1;
        assert!((user - want).abs() < 1e-9, "cpu.user {user}, want {want}");
    }

    fn after_procs_running() -> f64 {
        counters("proc-1s").0.stat.procs_running as f64
    }

    #[test]
    fn proc_stat_row_golden() {
        let (before, _) = counters("proc");
        let (after, _) = counters("proc-1s");
        let row = proc_stat_row(&before.stat, &after.stat, 1.0);
        assert_eq!(value(&row, "cpu.user"), 100.0 * 17.0 / 198.0);
        assert_eq!(value(&row, "cpu.softirq"), 100.0 * 4.0 / 198.0);
        let shares: f64 = row.iter().take(8).map(|(_, v)| v).sum();
        assert!((shares - 100.0).abs() < 1e-9, "shares sum to {shares}");
        assert_eq!(value(&row, "processes"), (after.stat.processes - before.stat.processes) as f64);
    }
}
