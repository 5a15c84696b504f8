//! Monitors: samplers that run alongside a benchmark and record what the system did (CPU shares, memory, interrupts,
//! perf events), one module per monitor, one [`Monitor`] trait, one registry ([`create`]) and one runner
//! ([`MonitorSet`]) that samples every in-process monitor from a single background thread.
//!
//! The /proc monitors read the files directly (no shell loop, no `cat`, no `vmstat` process) through
//! [`ProcFile`], which keeps the file open and re-reads it from offset 0, so a sample costs a seek and a read per
//! file. Their parsers are pure functions in [`procfs`]. See docs/monitors.md for each monitor's metric names,
//! reduction rules and measured cost.

pub mod diskstats;
pub mod interrupts;
pub mod meminfo;
pub mod perf_profile;
pub mod perf_stat;
pub mod proc_vmstat;
pub mod procfs;
pub mod series;
pub mod vmstat;

use culprit_core::model::{MonitorSeries, RawOutput};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use thiserror::Error;

pub use procfs::ProcParseError;

/// Why a monitor could not start, sample or finish. A monitor failure never fails the benchmark run: the run
/// goes on and the failure is recorded with it.
#[derive(Debug, Error)]
pub enum MonitorError {
    #[error("unknown monitor '{name}'; known monitors: {known}")]
    Unknown { name: String, known: String },
    #[error("monitor {monitor}: cannot read {path}: {source}")]
    Read { monitor: &'static str, path: String, source: std::io::Error },
    #[error("monitor {monitor}: {detail}")]
    Failed { monitor: &'static str, detail: String },
    #[error("monitor {monitor} needs '{program}' ({package}): {detail}")]
    MissingProgram { monitor: &'static str, program: &'static str, package: &'static str, detail: String },
    #[error("monitor {monitor}: cannot understand {path}: {source}")]
    Parse { monitor: &'static str, path: String, source: ProcParseError },
    // Both an unknown key (`foo`) and a bad value (`freq=0`): the text must fit either.
    #[error("monitor {monitor}: option '{option}' is not accepted; {accepted}")]
    BadOption { monitor: &'static str, option: String, accepted: String },
}

/// What a monitor hands back when the run ends.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MonitorOutput {
    /// Per-interval samples, named without the monitor prefix (`cpu.id`), with their times since the run started.
    pub series: MonitorSeries,
    /// The per-run reduction, with the monitor prefix (`vmstat.cpu.id`): the mean of gauges, last minus first of
    /// event counters, as lkp does.
    pub metrics: BTreeMap<String, f64>,
    /// Raw files worth keeping (a perf report, the perf-stat log).
    pub raw: Vec<RawOutput>,
}

/// One monitor. In-process samplers do their work in [`Monitor::sample`], called from the sampling thread every
/// interval; monitors that wrap an external program (perf) start it in [`Monitor::start`] and collect it in
/// [`Monitor::finish`].
pub trait Monitor: Send {
    /// The lkp monitor name, which is also the metric prefix (`vmstat`, `meminfo`, `perf-stat`, ...).
    fn name(&self) -> &'static str;
    /// What can be checked before any benchmark starts, without starting anything: options, and the program the
    /// monitor needs. A run does not fail when a monitor fails, so a mistake found only in `start` would leave
    /// every run of a long job without the data the user asked for; `culprit run` calls this while it plans.
    fn check(&self) -> Result<(), MonitorError> {
        Ok(())
    }
    /// Called once, just before the benchmark starts.
    fn start(&mut self) -> Result<(), MonitorError>;
    /// Called every interval while the benchmark runs; `elapsed` is seconds since `start`.
    fn sample(&mut self, elapsed: f64) -> Result<(), MonitorError>;
    /// Called once after the benchmark ended: stop and return what was gathered.
    fn finish(&mut self) -> Result<MonitorOutput, MonitorError>;
}

/// Where the /proc monitors read from: `/proc` on a real run, a directory of recorded files in tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcRoot(pub PathBuf);

impl ProcRoot {
    /// The machine's own procfs.
    pub fn system() -> ProcRoot {
        ProcRoot(PathBuf::from("/proc"))
    }

    /// An open handle on `<root>/<name>` for `monitor` (the file is opened at the first read).
    pub fn file(&self, monitor: &'static str, name: &str) -> ProcFile {
        ProcFile::new(monitor, self.0.join(name))
    }
}

impl Default for ProcRoot {
    fn default() -> Self {
        ProcRoot::system()
    }
}

/// A /proc file read again and again. The file stays open and each read seeks back to 0, which makes the kernel
/// regenerate the text; this saves the open and close of every sample, and the text buffer is reused.
#[derive(Debug)]
pub struct ProcFile {
    monitor: &'static str,
    path: PathBuf,
    file: Option<File>,
    text: String,
}

impl ProcFile {
    pub fn new(monitor: &'static str, path: PathBuf) -> ProcFile {
        ProcFile { monitor, path, file: None, text: String::new() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's current text. After a failed read the handle is dropped, so the next read opens the file anew.
    pub fn read(&mut self) -> Result<&str, MonitorError> {
        Self::read_into(self.monitor, &self.path, &mut self.file, &mut self.text)?;
        Ok(&self.text)
    }

    /// [`ProcFile::read`] on the fields, so that [`ProcFile::parse`] can lend the text to a parser while it still
    /// reaches the path for an error.
    fn read_into(
        monitor: &'static str,
        path: &Path,
        file: &mut Option<File>,
        text: &mut String,
    ) -> Result<(), MonitorError> {
        text.clear();
        let outcome = match file.as_mut() {
            Some(open) => open.seek(SeekFrom::Start(0)).and_then(|_| open.read_to_string(text)),
            None => File::open(path).and_then(|mut opened| {
                let read = opened.read_to_string(text);
                *file = Some(opened);
                read
            }),
        };
        outcome.map(drop).map_err(|source| {
            *file = None;
            MonitorError::Read { monitor, path: path.display().to_string(), source }
        })
    }

    /// Reads the file and parses it with `parse`, naming the file in any error. The parsed value may borrow the
    /// text (until the next read): proc-vmstat's 180 names are then not copied into new strings every second.
    pub fn parse<'text, T>(
        &'text mut self,
        parse: impl FnOnce(&'text str) -> Result<T, ProcParseError>,
    ) -> Result<T, MonitorError> {
        let ProcFile { monitor, path, file, text } = self;
        Self::read_into(monitor, path, file, text)?;
        parse(text.as_str()).map_err(|source| MonitorError::Parse { monitor, path: path.display().to_string(), source })
    }
}

/// Every monitor [`create`] knows, in the order they are listed to users.
/// They are the job crate's monitor keys, so that a key the job file accepts is a monitor that runs.
pub const KNOWN_MONITORS: &[&str] = culprit_job::table::MONITORS;

/// The monitors a job gets when it names none. All of them read /proc in-process; together they cost under
/// 0.05% of one CPU at a 1 s interval (docs/monitors.md has the figures). proc-vmstat is in because lkp runs it by
/// default and the robot's reports explain many regressions with its counters (`proc-vmstat.pgfault`,
/// `numa_hit`, `thp_fault_alloc`); proc-stat is left out because vmstat already reports the same /proc/stat data
/// in lkp's names.
pub fn default_monitors() -> Vec<&'static str> {
    vec!["vmstat", "proc-vmstat", "meminfo", "interrupts", "softirqs", "diskstats"]
}

/// The names [`create`] accepts.
pub fn known_monitors() -> Vec<&'static str> {
    KNOWN_MONITORS.to_vec()
}

/// Builds the monitor `name` reading the machine's /proc. `options` are the monitor's job-file params;
/// `interval` is the sampling interval in seconds (the /proc monitors are paced by [`MonitorSet`], so for them it
/// only matters through the set).
pub fn create(name: &str, options: &BTreeMap<String, String>, interval: f64) -> Result<Box<dyn Monitor>, MonitorError> {
    create_in(name, options, interval, &ProcRoot::system())
}

/// [`create`] with the /proc monitors reading from `root` instead of `/proc`.
pub fn create_in(
    name: &str,
    options: &BTreeMap<String, String>,
    interval: f64,
    root: &ProcRoot,
) -> Result<Box<dyn Monitor>, MonitorError> {
    let Some(&known) = KNOWN_MONITORS.iter().find(|known| **known == name) else {
        return Err(MonitorError::Unknown { name: name.to_string(), known: KNOWN_MONITORS.join(", ") });
    };
    check_interval_option(known, options)?;
    // The perf monitors wrap perf itself, paced by perf's own interval, and take perf's options.
    match known {
        "perf-stat" => {
            let accepted =
                ["interval", "interval_ms", "events", "revents", "delay", "duration", "per_socket", "per_die"];
            reject_options(known, options, &accepted)?;
            // perf stat keeps its own clock, so the job's `interval` for it is applied (the checked number); at the
            // run's interval instead, a job asking for 0.5 s intervals to get perf counters from a run of a second
            // or two got 1 s ones, and none, without a word.
            let own = match perf_stat_interval_ms(options)? {
                Some(ms) => Some(ms as f64 / 1000.0),
                None => options.get("interval").and_then(|text| text.trim().parse::<f64>().ok()),
            };
            let split = |key: &str| options.get(key).is_some_and(|value| crate::program::lkp_bool(value.trim()));
            let monitor = perf_stat::PerfStat::new(own.unwrap_or(interval))
                .with_window(perf_window(known, options)?)
                .with_split(split("per_socket"), split("per_die"));
            return Ok(Box::new(monitor.with_events(perf_stat_events(options)?)));
        }
        "perf-profile" => {
            // lkp's `debug-setup` installs debug symbols on its test box before it records; there is nothing to do
            // for it here, and the job.yaml of an lkp report gives it.
            reject_options(known, options, &["interval", "event", "freq", "debug-setup", "delay", "duration"])?;
            let window = perf_window(known, options)?;
            let freq = match options.get("freq").filter(|f| !f.is_empty()) {
                None => None,
                Some(text) => Some(text.trim().parse::<u32>().map_err(|_| MonitorError::BadOption {
                    monitor: known,
                    option: format!("freq: {text}"),
                    accepted: "freq is a sampling frequency in Hz, e.g. 800".to_string(),
                })?),
            };
            let event = options.get("event").filter(|e| !e.is_empty()).cloned();
            return Ok(Box::new(perf_profile::PerfProfile::new(interval, event, freq).with_window(window)));
        }
        _ => {}
    }
    // lkp job files commonly give a monitor its own `interval`; the /proc monitors share the set's interval, so
    // that key is accepted and any other is a mistake worth reporting.
    if let Some(option) = options.keys().find(|key| key.as_str() != "interval") {
        return Err(MonitorError::BadOption {
            monitor: known,
            option: option.clone(),
            accepted: "the /proc monitors accept only 'interval'".to_string(),
        });
    }
    let monitor: Box<dyn Monitor> = match known {
        "vmstat" => Box::new(vmstat::Vmstat::new(root)),
        "proc-stat" => Box::new(vmstat::ProcStatMonitor::new(root)),
        "proc-vmstat" => Box::new(proc_vmstat::ProcVmstat::new(root)),
        "meminfo" => Box::new(meminfo::Meminfo::new(root)),
        "interrupts" => Box::new(interrupts::Interrupts::new(root)),
        "softirqs" => Box::new(interrupts::Softirqs::new(root)),
        "diskstats" => Box::new(diskstats::Diskstats::new(root)),
        other => {
            return Err(MonitorError::Failed { monitor: known, detail: format!("'{other}' is listed but not built") })
        }
    };
    Ok(monitor)
}

/// A perf monitor's `delay` and `duration`, lkp's whole seconds: counting starts `delay` into the run and lasts
/// `duration` (0 or none: to the end of the run, as lkp's perf-stat reads 0).
fn perf_window(monitor: &'static str, options: &BTreeMap<String, String>) -> Result<perf_stat::Window, MonitorError> {
    let seconds = |key: &str, meaning: &str| -> Result<Option<u64>, MonitorError> {
        match options.get(key).map(|text| text.trim()).filter(|text| !text.is_empty()) {
            None => Ok(None),
            Some(text) => text.parse::<u64>().map(Some).map_err(|_| MonitorError::BadOption {
                monitor,
                option: format!("{key}: {text}"),
                accepted: format!("{key} is whole seconds {meaning}"),
            }),
        }
    };
    let delay_secs = seconds("delay", "into the run before counting starts, e.g. 10")?.unwrap_or(0);
    let duration_secs = seconds("duration", "of counting after the delay, e.g. 10 (0 counts to the end)")?;
    Ok(perf_stat::Window { delay_secs, duration_secs: duration_secs.filter(|secs| *secs > 0) })
}

/// perf-stat's `interval_ms`, lkp's name for its interval (milliseconds, at least perf's 10); refused beside
/// Culprit's `interval` in seconds, since two intervals cannot both be kept.
fn perf_stat_interval_ms(options: &BTreeMap<String, String>) -> Result<Option<u64>, MonitorError> {
    let Some(text) = options.get("interval_ms").map(|text| text.trim()).filter(|text| !text.is_empty()) else {
        return Ok(None);
    };
    let refuse = |accepted: &str| MonitorError::BadOption {
        monitor: "perf-stat",
        option: format!("interval_ms: {text}"),
        accepted: accepted.to_string(),
    };
    if options.get("interval").is_some_and(|given| !given.trim().is_empty()) {
        return Err(refuse("perf-stat takes either interval (seconds) or lkp's interval_ms (milliseconds), not both"));
    }
    // The same range as `interval`, in milliseconds.
    match text.parse::<u64>() {
        Ok(ms) if INTERVAL_OPTION_SECS.contains(&(ms as f64 / 1000.0)) => Ok(Some(ms)),
        _ => Err(refuse(&format!(
            "interval_ms is whole milliseconds from {} to {}, e.g. 1000",
            INTERVAL_OPTION_SECS.start() * 1000.0,
            INTERVAL_OPTION_SECS.end() * 1000.0
        ))),
    }
}

/// perf-stat's `events:` (names or `perf list` filters, separated by commas or blanks; a YAML list arrives joined
/// by commas) or `revents:` (perf's raw `-e` text), or lkp's default set when the job gives neither.
fn perf_stat_events(options: &BTreeMap<String, String>) -> Result<perf_stat::EventChoice, MonitorError> {
    let given = |key: &str| options.get(key).map(|text| text.trim()).filter(|text| !text.is_empty());
    match (given("events"), given("revents")) {
        (Some(_), Some(_)) => Err(MonitorError::BadOption {
            monitor: "perf-stat",
            option: "events and revents".to_string(),
            accepted: "perf-stat takes either events (names or perf list filters) or revents (perf's raw -e text), \
                       as lkp does"
                .to_string(),
        }),
        (Some(text), None) => {
            let separator = |c: char| c == ',' || c.is_whitespace();
            let items: Vec<String> = text.split(separator).filter(|s| !s.is_empty()).map(String::from).collect();
            Ok(perf_stat::EventChoice::Named(items))
        }
        (None, Some(text)) => Ok(perf_stat::EventChoice::Raw(text.to_string())),
        (None, None) => Ok(perf_stat::EventChoice::Lkp),
    }
}

/// The range of a monitor's `interval` option, in seconds: the same as `culprit run --interval`, whose lower end is
/// [`MIN_INTERVAL`].
const INTERVAL_OPTION_SECS: std::ops::RangeInclusive<f64> = 0.01..=3600.0;

/// Checks a monitor's `interval` option, which every monitor accepts. The value is not what a /proc monitor samples
/// at (the run's `--interval` paces them all; `culprit run` says so) but is perf-stat's, and a value that is not a
/// number is a mistake in the job file all the same, and accepting it silently would hide that the file does not
/// say what its author meant.
fn check_interval_option(monitor: &'static str, options: &BTreeMap<String, String>) -> Result<(), MonitorError> {
    let Some(text) = options.get("interval").filter(|text| !text.trim().is_empty()) else {
        return Ok(());
    };
    match text.trim().parse::<f64>() {
        Ok(secs) if INTERVAL_OPTION_SECS.contains(&secs) => Ok(()),
        _ => Err(MonitorError::BadOption {
            monitor,
            option: format!("interval: {text}"),
            accepted: format!(
                "interval is a number of seconds from {} to {}, e.g. 1",
                INTERVAL_OPTION_SECS.start(),
                INTERVAL_OPTION_SECS.end()
            ),
        }),
    }
}

/// Refuses options a monitor does not take, naming the ones it does.
fn reject_options(
    monitor: &'static str,
    options: &BTreeMap<String, String>,
    accepted: &[&str],
) -> Result<(), MonitorError> {
    match options.keys().find(|key| !accepted.contains(&key.as_str())) {
        Some(option) => Err(MonitorError::BadOption {
            monitor,
            option: option.clone(),
            accepted: format!("{monitor} accepts: {}", accepted.join(", ")),
        }),
        None => Ok(()),
    }
}

/// The shortest interval [`MonitorSet`] samples at; shorter requests are raised to it so that a zero interval
/// cannot turn the sampling thread into a busy loop.
pub const MIN_INTERVAL: Duration = Duration::from_millis(10);

/// One monitor inside a [`MonitorSet`], with the first error it hit. A monitor that failed is not called again
/// until `finish`, whose result then gives way to the recorded error.
struct Slot {
    monitor: Box<dyn Monitor>,
    error: Option<MonitorError>,
    /// When the monitor's `start` was called: its samples' `elapsed` is measured from here, not from the set's
    /// start, because a /proc monitor reads its baseline in `start` and divides its first interval's counts by
    /// that `elapsed`, and the monitors before it (perf probing for events and launching perf) may have taken a
    /// good part of a second to start.
    started: Instant,
}

/// Runs a call into a monitor, turning a panic into a [`MonitorError`] so one broken monitor cannot take the
/// sampling thread (and with it every other monitor) down.
fn guarded<T>(name: &'static str, call: impl FnOnce() -> Result<T, MonitorError>) -> Result<T, MonitorError> {
    match catch_unwind(AssertUnwindSafe(call)) {
        Ok(result) => result,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(MonitorError::Failed { monitor: name, detail: format!("panicked: {what}") })
        }
    }
}

fn lock(slots: &Mutex<Vec<Slot>>) -> MutexGuard<'_, Vec<Slot>> {
    // A poisoned lock only means a monitor panicked mid-call, which `guarded` already recorded; the slots
    // themselves are still consistent.
    slots.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn sample_all(slots: &Mutex<Vec<Slot>>) {
    for slot in lock(slots).iter_mut().filter(|slot| slot.error.is_none()) {
        let name = slot.monitor.name();
        let elapsed = slot.started.elapsed().as_secs_f64();
        if let Err(error) = guarded(name, || slot.monitor.sample(elapsed)) {
            slot.error = Some(error);
        }
    }
}

/// The running monitors of one benchmark run, sampled together from one background thread.
pub struct MonitorSet {
    slots: Arc<Mutex<Vec<Slot>>>,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl MonitorSet {
    /// Starts every monitor, then samples them all every `interval` from one thread. The thread sleeps until the
    /// next deadline `start + k * interval`, so lateness does not accumulate; when it falls behind by more than an
    /// interval it skips the missed deadlines rather than sampling in a burst. A monitor whose `start` fails is
    /// not sampled; its error is reported by [`MonitorSet::stop`].
    pub fn start(monitors: Vec<Box<dyn Monitor>>, interval: Duration) -> MonitorSet {
        let interval = interval.max(MIN_INTERVAL);
        let origin = Instant::now();
        let slots: Vec<Slot> = monitors
            .into_iter()
            .map(|mut monitor| {
                let name = monitor.name();
                let started = Instant::now();
                let error = guarded(name, || monitor.start()).err();
                Slot { monitor, error, started }
            })
            .collect();
        let slots = Arc::new(Mutex::new(slots));
        let (stop, stopped) = mpsc::channel::<()>();
        let shared = Arc::clone(&slots);
        let spawned = std::thread::Builder::new().name("culprit-monitors".to_string()).spawn(move || {
            let mut tick: u32 = 1;
            loop {
                let deadline = origin + interval * tick;
                let wait = deadline.saturating_duration_since(Instant::now());
                match stopped.recv_timeout(wait) {
                    Err(RecvTimeoutError::Timeout) => {
                        sample_all(&shared);
                        let behind = origin.elapsed().as_secs_f64() / interval.as_secs_f64();
                        tick = tick.saturating_add(1).max(behind.floor() as u32 + 1);
                    }
                    // Asked to stop, or the set was dropped: take the final sample and end.
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                        sample_all(&shared);
                        return;
                    }
                }
            }
        });
        match spawned {
            Ok(thread) => MonitorSet { slots, stop: Some(stop), thread: Some(thread) },
            Err(reason) => {
                for slot in lock(&slots).iter_mut().filter(|slot| slot.error.is_none()) {
                    slot.error = Some(MonitorError::Failed {
                        monitor: slot.monitor.name(),
                        detail: format!("cannot start the sampling thread: {reason}"),
                    });
                }
                MonitorSet { slots, stop: None, thread: None }
            }
        }
    }

    /// Takes a final sample, stops the thread and finishes every monitor, in the order they were given. Each
    /// monitor's result stands alone: one failure does not affect the others.
    pub fn stop(mut self) -> Vec<(String, Result<MonitorOutput, MonitorError>)> {
        self.halt_thread();
        let mut slots = lock(&self.slots);
        slots
            .iter_mut()
            .map(|slot| {
                let name = slot.monitor.name();
                let finished = guarded(name, || slot.monitor.finish());
                // A monitor that failed earlier still gets `finish` (perf must be stopped), but the earlier error
                // is what the run records.
                let result = match slot.error.take() {
                    Some(error) => Err(error),
                    None => finished,
                };
                (name.to_string(), result)
            })
            .collect()
    }

    fn halt_thread(&mut self) {
        if let Some(stop) = self.stop.take() {
            // A send error means the thread is already gone, which is what we want.
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            // Monitor panics are caught inside the thread, so a join error is not expected; if it happens the
            // slots are still there to finish.
            let _ = thread.join();
        }
    }
}

impl Drop for MonitorSet {
    fn drop(&mut self) {
        self.halt_thread();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_stat_takes_events_or_revents_not_both() {
        let options = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        let both = options(&[("events", "cs"), ("revents", "cs")]);
        let error = create("perf-stat", &both, 1.0).err().expect("refused").to_string();
        assert!(error.contains("either events") && error.contains("or revents"), "{error}");
        let listed = options(&[("events", "cs, sched:sched_switch  xfs:*")]);
        assert_eq!(
            perf_stat_events(&listed).expect("events"),
            perf_stat::EventChoice::Named(vec!["cs".into(), "sched:sched_switch".into(), "xfs:*".into()])
        );
        let raw = options(&[("revents", "{cycles,instructions}")]);
        let raw_choice = perf_stat::EventChoice::Raw("{cycles,instructions}".into());
        assert_eq!(perf_stat_events(&raw).expect("revents"), raw_choice);
        assert_eq!(perf_stat_events(&options(&[("events", " ")])).expect("blank"), perf_stat::EventChoice::Lkp);
        let other = options(&[("metrics", "TopdownL1")]);
        let error = create("perf-stat", &other, 1.0).err().expect("refused").to_string();
        let accepted = "interval, interval_ms, events, revents, delay, duration, per_socket, per_die";
        assert!(error.contains(accepted), "{error}");
    }

    /// lkp's perf-stat monitor takes `interval_ms`, `delay` and `duration`, and its unixbench execl job gives
    /// perf-profile `duration: 2`; all were refused.
    #[test]
    fn perf_monitors_take_lkps_window_and_interval_in_milliseconds() {
        let options = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        let window = |pairs: &[(&str, &str)]| perf_window("perf-stat", &options(pairs));
        assert_eq!(window(&[]).ok(), Some(perf_stat::Window::default()));
        let both = perf_stat::Window { delay_secs: 20, duration_secs: Some(10) };
        assert_eq!(window(&[("delay", "20"), ("duration", " 10 ")]).ok(), Some(both));
        // lkp's perf-stat reads a duration of 0 as "to the end of the run".
        let to_the_end = perf_stat::Window { delay_secs: 5, duration_secs: None };
        assert_eq!(window(&[("delay", "5"), ("duration", "0")]).ok(), Some(to_the_end));
        for (key, bad) in [("delay", "soon"), ("duration", "1.5"), ("duration", "-2"), ("delay", "10s")] {
            let error = window(&[(key, bad)]).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(error.contains(&format!("'{key}: {bad}'")) && error.contains("whole seconds"), "{error}");
        }
        for monitor in ["perf-stat", "perf-profile"] {
            let given = options(&[("delay", "1"), ("duration", "2")]);
            assert!(create(monitor, &given, 1.0).is_ok(), "{monitor} takes delay and duration");
        }
        assert_eq!(perf_stat_interval_ms(&options(&[("interval_ms", "500")])).ok(), Some(Some(500)));
        assert_eq!(perf_stat_interval_ms(&options(&[])).ok(), Some(None));
        for bad in ["5", "0.5", "1s", "3600001"] {
            let error = perf_stat_interval_ms(&options(&[("interval_ms", bad)])).err().map(|e| e.to_string());
            assert!(error.as_deref().is_some_and(|e| e.contains("whole milliseconds from 10")), "{bad}: {error:?}");
        }
        let twice = create("perf-stat", &options(&[("interval", "1"), ("interval_ms", "500")]), 1.0);
        let error = twice.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.contains("either interval (seconds) or lkp's interval_ms"), "{error}");
    }

    #[test]
    fn unknown_monitor_lists_the_known_ones() {
        let error = create("vmstatt", &BTreeMap::new(), 1.0).err().expect("an unknown name is refused");
        let text = error.to_string();
        assert!(matches!(error, MonitorError::Unknown { .. }));
        for known in KNOWN_MONITORS {
            assert!(text.contains(known), "{text} should list {known}");
        }
    }

    #[test]
    fn defaults_are_known_and_options_are_checked() {
        for name in default_monitors() {
            assert!(KNOWN_MONITORS.contains(&name));
        }
        let mut options = BTreeMap::new();
        options.insert("interval".to_string(), "10".to_string());
        assert!(create("meminfo", &options, 1.0).is_ok());
        options.insert("evnt".to_string(), "x".to_string());
        let error = create("meminfo", &options, 1.0).err().expect("a misspelt option is refused");
        assert!(matches!(error, MonitorError::BadOption { ref option, .. } if option == "evnt"));
    }

    #[test]
    fn perf_profile_takes_lkps_debug_setup() {
        // The job.yaml an lkp report attaches gives perf-profile `debug-setup:`, which was refused as an option.
        let options = BTreeMap::from([("debug-setup".to_string(), String::new())]);
        assert!(create("perf-profile", &options, 1.0).is_ok());
    }

    #[test]
    fn a_monitor_interval_must_be_a_number_of_seconds() {
        for name in KNOWN_MONITORS {
            for good in ["10", "0.5", " 1 ", ""] {
                let options = BTreeMap::from([("interval".to_string(), good.to_string())]);
                assert!(create(name, &options, 1.0).is_ok(), "{name} interval {good:?}");
            }
            for bad in ["abc", "5s", "0", "-1", "NaN", "inf", "3601"] {
                let options = BTreeMap::from([("interval".to_string(), bad.to_string())]);
                let error = create(name, &options, 1.0).err().unwrap_or_else(|| panic!("{name} interval {bad:?}"));
                let text = error.to_string();
                assert!(text.starts_with(&format!("monitor {name}: option 'interval: {bad}'")), "{text}");
                assert!(text.contains("number of seconds"), "{text}");
            }
        }
    }

    #[test]
    fn proc_file_rereads_fresh_text() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("stat");
        std::fs::write(&path, "first").expect("write");
        let mut file = ProcFile::new("test", path.clone());
        assert_eq!(file.read().expect("read"), "first");
        std::fs::write(&path, "second, longer").expect("rewrite");
        assert_eq!(file.read().expect("reread"), "second, longer");
        std::fs::remove_file(&path).expect("remove");
        drop(file);
        let mut missing = ProcFile::new("test", path);
        assert!(matches!(missing.read(), Err(MonitorError::Read { monitor: "test", .. })));
    }
}
