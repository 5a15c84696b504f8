//! Integration tests of the in-process monitors: a real MonitorSet run on this machine, failures that must stay
//! contained (unreadable or garbage /proc files, a panicking monitor), and the registry's refusals.

use culprit_run::monitor::{self, create_in, Monitor, MonitorError, MonitorOutput, MonitorSet, ProcRoot};
use std::collections::BTreeMap;
use std::time::Duration;

fn no_options() -> BTreeMap<String, String> {
    BTreeMap::new()
}

fn system_monitors(names: &[&str]) -> Vec<Box<dyn Monitor>> {
    names
        .iter()
        .map(|name| monitor::create(name, &no_options(), 0.5).unwrap_or_else(|e| panic!("{name}: {e}")))
        .collect()
}

/// Keeps one CPU busy for a while so the samples see some user time.
fn spin(for_how_long: Duration) -> u64 {
    let until = std::time::Instant::now() + for_how_long;
    let mut counter = 0u64;
    while std::time::Instant::now() < until {
        counter = std::hint::black_box(counter.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
    counter
}

#[test]
fn real_run_of_every_proc_monitor() {
    let names = ["vmstat", "proc-stat", "meminfo", "interrupts", "softirqs", "diskstats"];
    let set = MonitorSet::start(system_monitors(&names), Duration::from_millis(500));
    spin(Duration::from_millis(2500));
    let results = set.stop();
    let returned: Vec<&str> = results.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(returned, names, "results come back in the order given");

    let outputs: BTreeMap<&str, &MonitorOutput> = results
        .iter()
        .map(|(name, result)| (name.as_str(), result.as_ref().unwrap_or_else(|e| panic!("{name} failed: {e}"))))
        .collect();

    let vmstat = outputs.get("vmstat").expect("vmstat output");
    // 2.5 s at 0.5 s gives about five interval samples plus the final one; at least three must be there even on a
    // loaded machine.
    assert!(vmstat.series.times.len() >= 3, "vmstat samples: {:?}", vmstat.series.times);
    assert!(vmstat.series.times.windows(2).all(|w| w[0] < w[1]), "times increase: {:?}", vmstat.series.times);
    let column = |key: &str| vmstat.series.series.get(key).unwrap_or_else(|| panic!("vmstat series {key}"));
    let (us, sy, id, wa, st) = (column("cpu.us"), column("cpu.sy"), column("cpu.id"), column("cpu.wa"), column("cpu.st"));
    for index in 0..vmstat.series.times.len() {
        let sum = us[index] + sy[index] + id[index] + wa[index] + st[index];
        assert!((sum - 100.0).abs() < 1e-6, "sample {index}: CPU shares sum to {sum}");
    }
    let user = vmstat.metrics.get("vmstat.cpu.us").copied().expect("vmstat.cpu.us");
    assert!(user > 0.0, "a spinning test shows user time, got {user}");
    for key in ["procs.r", "system.in", "system.cs", "memory.free", "io.bi", "swap.si"] {
        assert!(vmstat.metrics.contains_key(&format!("vmstat.{key}")), "vmstat.{key} missing");
    }
    assert!(vmstat.metrics.get("vmstat.system.cs").is_some_and(|cs| *cs > 0.0));

    let meminfo = outputs.get("meminfo").expect("meminfo output");
    assert!(meminfo.metrics.get("meminfo.MemTotal").is_some_and(|kb| *kb > 0.0));
    assert!(meminfo.metrics.contains_key("meminfo.Active(anon)"));
    // meminfo samples at start too, so it has one sample more than vmstat.
    assert_eq!(meminfo.series.times.len(), vmstat.series.times.len() + 1);

    let interrupts = outputs.get("interrupts").expect("interrupts output");
    let timer = interrupts.metrics.get("interrupts.LOC:Local_timer_interrupts").copied();
    assert!(timer.is_some_and(|count| count > 0.0), "local timer interrupts during 2.5 s: {timer:?}");
    let softirqs = outputs.get("softirqs").expect("softirqs output");
    assert!(softirqs.metrics.keys().any(|key| key == "softirqs.TIMER"));

    let proc_stat = outputs.get("proc-stat").expect("proc-stat output");
    assert!(proc_stat.metrics.get("proc-stat.ctxt").is_some_and(|rate| *rate > 0.0));
    for output in outputs.values() {
        for (key, values) in &output.series.series {
            assert_eq!(values.len(), output.series.times.len(), "{}: series {key}", output.series.monitor);
        }
    }
}

#[test]
fn unreadable_proc_files_fail_each_monitor_alone() {
    let empty = tempfile::tempdir().expect("a temp dir");
    let root = ProcRoot(empty.path().to_path_buf());
    // The /proc monitors; the perf monitors read no /proc file of the root.
    let mut monitors: Vec<Box<dyn Monitor>> = monitor::KNOWN_MONITORS
        .iter()
        .filter(|name| !name.starts_with("perf-"))
        .map(|name| create_in(name, &no_options(), 1.0, &root).unwrap_or_else(|e| panic!("{name}: {e}")))
        .collect();
    monitors.extend(system_monitors(&["meminfo"]));
    let results = MonitorSet::start(monitors, Duration::from_millis(50)).stop();
    let (healthy, broken) = results.split_last().expect("results");
    for (name, result) in broken {
        match result {
            Err(MonitorError::Read { path, .. }) => {
                assert!(path.starts_with(&empty.path().display().to_string()), "{name} names {path}")
            }
            other => panic!("{name}: expected a read error, got {other:?}"),
        }
    }
    assert!(healthy.1.is_ok(), "the monitor on the real /proc still works: {:?}", healthy.1);
}

#[test]
fn garbage_proc_file_is_a_parse_error_naming_the_file() {
    let dir = tempfile::tempdir().expect("a temp dir");
    std::fs::write(dir.path().join("interrupts"), "this is not /proc/interrupts\n").expect("write");
    let root = ProcRoot(dir.path().to_path_buf());
    let mut interrupts = create_in("interrupts", &no_options(), 1.0, &root).expect("interrupts builds");
    let error = interrupts.start().expect_err("garbage is refused");
    assert!(matches!(error, MonitorError::Parse { monitor: "interrupts", .. }), "{error:?}");
    assert!(error.to_string().contains("interrupts"), "{error}");
}

/// A monitor that panics on its second sample.
struct Fragile {
    samples: u32,
}

impl Monitor for Fragile {
    fn name(&self) -> &'static str {
        "fragile"
    }
    fn start(&mut self) -> Result<(), MonitorError> {
        Ok(())
    }
    fn sample(&mut self, _elapsed: f64) -> Result<(), MonitorError> {
        self.samples += 1;
        if self.samples >= 2 {
            panic!("fragile broke on sample {}", self.samples);
        }
        Ok(())
    }
    fn finish(&mut self) -> Result<MonitorOutput, MonitorError> {
        Ok(MonitorOutput::default())
    }
}

#[test]
fn a_panicking_monitor_does_not_stop_the_others() {
    let mut monitors: Vec<Box<dyn Monitor>> = vec![Box::new(Fragile { samples: 0 })];
    monitors.extend(system_monitors(&["softirqs"]));
    let set = MonitorSet::start(monitors, Duration::from_millis(20));
    std::thread::sleep(Duration::from_millis(200));
    let results = set.stop();
    match results.first() {
        Some((name, Err(MonitorError::Failed { detail, .. }))) => {
            assert_eq!(name, "fragile");
            assert!(detail.contains("fragile broke"), "{detail}");
        }
        other => panic!("expected fragile's failure, got {other:?}"),
    }
    let softirqs = results.get(1).and_then(|(_, result)| result.as_ref().ok()).expect("softirqs survived");
    assert!(softirqs.series.times.len() >= 2, "softirqs kept sampling: {:?}", softirqs.series.times);
}

/// A monitor whose start takes as long as perf's probe and launch on a loaded machine.
struct SlowStart;

impl Monitor for SlowStart {
    fn name(&self) -> &'static str {
        "slow-start"
    }
    fn start(&mut self) -> Result<(), MonitorError> {
        std::thread::sleep(Duration::from_millis(400));
        Ok(())
    }
    fn sample(&mut self, _elapsed: f64) -> Result<(), MonitorError> {
        Ok(())
    }
    fn finish(&mut self) -> Result<MonitorOutput, MonitorError> {
        Ok(MonitorOutput::default())
    }
}

/// A monitor that notes, at each sample, the `elapsed` it was given and the time since its own start.
struct Clock {
    started: Option<std::time::Instant>,
    readings: std::sync::Arc<std::sync::Mutex<Vec<(f64, f64)>>>,
}

impl Monitor for Clock {
    fn name(&self) -> &'static str {
        "clock"
    }
    fn start(&mut self) -> Result<(), MonitorError> {
        self.started = Some(std::time::Instant::now());
        Ok(())
    }
    fn sample(&mut self, elapsed: f64) -> Result<(), MonitorError> {
        let since_start = self.started.map_or(f64::NAN, |started| started.elapsed().as_secs_f64());
        self.readings.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push((elapsed, since_start));
        Ok(())
    }
    fn finish(&mut self) -> Result<MonitorOutput, MonitorError> {
        Ok(MonitorOutput::default())
    }
}

/// `elapsed` is the time since the monitor's own start, which is what a /proc monitor divides its first interval's
/// counts by (its baseline is read in `start`), even when a monitor before it (perf-stat probing and launching
/// perf) takes a while to start. Measured from the set's start instead, vmstat's first interval after a 0.4 s start
/// of perf was 0.6 s of counts divided by 1 s: its rates read 40% low.
#[test]
fn elapsed_is_measured_from_each_monitors_own_start() {
    let readings = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let clock = Clock { started: None, readings: std::sync::Arc::clone(&readings) };
    let monitors: Vec<Box<dyn Monitor>> = vec![Box::new(SlowStart), Box::new(clock)];
    let set = MonitorSet::start(monitors, Duration::from_millis(300));
    std::thread::sleep(Duration::from_millis(700));
    let results = set.stop();
    assert!(results.iter().all(|(_, result)| result.is_ok()), "{results:?}");
    let readings = readings.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
    assert!(readings.len() >= 2, "{readings:?}");
    for (elapsed, since_start) in readings {
        // The two clocks are read a few microseconds apart; a loaded machine may stretch that a little.
        assert!((elapsed - since_start).abs() < 0.05, "elapsed {elapsed} s, {since_start} s since the start");
    }
}

#[test]
fn unknown_monitor_name_is_refused_with_the_list() {
    let error = monitor::create("perf-stats", &no_options(), 1.0).err().expect("refused");
    let MonitorError::Unknown { name, known } = error else { panic!("expected Unknown") };
    assert_eq!(name, "perf-stats");
    assert!(known.contains("vmstat") && known.contains("diskstats"), "{known}");
}
