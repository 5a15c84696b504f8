//! The perf-profile monitor: `perf record -a -g` system-wide while the benchmark runs, then `perf report` with
//! lkp's flags, parsed into `perf-profile.{calltrace,children,self}.<event>.<symbols>` metrics.
//!
//! # What runs
//! - start: `perf record -q -g -a -F <freq> -e <event> -o <tmp>/perf.data`, in a private temporary directory.
//! - finish: SIGINT to perf record (it then writes perf.data), then
//!   `perf report --children --header -U -g folded,0.5,callee --sort=dso,symbol -i <tmp>/perf.data`, lkp's
//!   report command; the temporary directory, perf.data included, is removed afterwards.
//!
//! # Span
//! The whole run is recorded. lkp records a `duration` (10 s) window starting `delay` (half the runtime) into the
//! run, so its percentages leave out start-up and wind-down; docs/monitors.md says what that changes. A job that
//! gives `delay` (lkp's fsmark jobs give `perf-profile: {delay: 10}`) has it honoured as lkp does, with perf record's
//! `-D <delay in ms>`: recording starts that many seconds into the run and lasts until the run ends, or for the
//! job's `duration` in seconds when it gives one (lkp's unixbench execl job gives `duration: 2`), after which perf
//! record writes its data and the benchmark runs on. A `duration` without a `delay` records from the run's start;
//! lkp would start half the runtime in.
//!
//! # Event and frequency
//! The default frequency is 99 samples per second per CPU: light enough to leave the benchmark alone (about 1%
//! of one CPU for recording at this rate on this machine, plus the report at the end), and off the 100 Hz
//! timer tick so samples do not fall in lockstep with it. lkp samples every 1000003 cycles instead, which is
//! thousands of samples per second; a job can ask for more with the `freq` option.
//!
//! The default event is lkp's `cycles:pp` when the machine has hardware cycle counters, and `cpu-clock` (a
//! timer-based software event) when it has not, as in most VMs and on this machine. perf silently turns
//! `cycles` into `cpu-clock:ppH` there, which would give odd metric names, so Culprit picks `cpu-clock` itself.
//!
//! # Metric names
//! `perf-profile.<kind>.<event>.<symbols>`, where `<event>` is perf's event name with `:` replaced by `-`:
//! `perf-profile.self.cycles-pp.native_queued_spin_lock_slowpath` on hardware counters,
//! `perf-profile.self.cpu-clock.native_queued_spin_lock_slowpath` without; the same symbol under two events is
//! two metrics, so compare runs that used the same event. Values are percentages of all samples; see
//! [`culprit_parse::perf_profile`] for the kinds.

use super::perf_stat::{
    io_failure, locate_perf, perf_failure, probe_perf, supported_events, PerfProcess, ScratchDir, Window,
    PERF_READY_LIMIT,
};
use super::{Monitor, MonitorError, MonitorOutput};
use crate::process::{run, Invocation};
use culprit_core::model::{MonitorSeries, RawOutput};
use culprit_parse::perf_profile::PerfProfile as PerfProfileParser;
use culprit_parse::{ParseInput, Parser};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

const NAME: &str = "perf-profile";

/// Samples per second per CPU when the job does not say.
pub const DEFAULT_FREQUENCY: u32 = 99;
/// The event used where hardware cycle counters are missing.
pub const FALLBACK_EVENT: &str = "cpu-clock";

/// perf record may need a while to write perf.data after SIGINT on a big machine.
const RECORD_STOP_GRACE: Duration = Duration::from_secs(20);
/// perf report on a long recording takes time; past this it is stopped and the monitor fails.
const REPORT_TIMEOUT: Duration = Duration::from_secs(300);
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// The perf-profile monitor. Build it with [`PerfProfile::new`]; the run calls `start` and `finish`.
pub struct PerfProfile {
    event: Option<String>,
    frequency: Option<u32>,
    /// The part of the run recorded (lkp's `delay` and `duration`); by default the whole run.
    window: Window,
    perf: PathBuf,
    running: Option<Recording>,
}

struct Recording {
    perf: PathBuf,
    process: PerfProcess,
    data: PathBuf,
    event: String,
    // Held only to be dropped last, which removes perf.data and perf's stderr.
    _scratch: ScratchDir,
}

impl PerfProfile {
    /// A perf-profile monitor. `interval_secs` is the run's sampling interval, which perf record does not use
    /// (it samples at `frequency`); it is taken so every monitor is built the same way. `event` defaults to
    /// `cycles:pp` or `cpu-clock` (see the module docs), `frequency` to [`DEFAULT_FREQUENCY`].
    pub fn new(interval_secs: f64, event: Option<String>, frequency: Option<u32>) -> PerfProfile {
        let _ = interval_secs;
        PerfProfile { event, frequency, window: Window::default(), perf: PathBuf::from("perf"), running: None }
    }

    /// Records only within `window` of the run, as lkp's `delay` and `duration` do.
    pub fn with_window(mut self, window: Window) -> PerfProfile {
        self.window = window;
        self
    }

    /// perf record's arguments: lkp's `-D` in milliseconds when there is a delay, and the workload that ends the
    /// recording when there is a duration.
    fn record_args(&self, frequency: u32, event: &str, data: &Path) -> Vec<String> {
        let mut args: Vec<String> = ["record", "-q", "-g", "-a", "-F", &frequency.to_string(), "-e", event]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(self.window.delay_args());
        args.extend(["-o".to_string(), data.to_string_lossy().into_owned()]);
        args.extend(self.window.workload_args());
        args
    }

    /// Uses the perf binary at `perf` (a path, or a name looked up in `PATH`) instead of `perf`.
    pub fn with_perf(mut self, perf: impl Into<PathBuf>) -> PerfProfile {
        self.perf = perf.into();
        self
    }

    fn check_options(&self) -> Result<(), MonitorError> {
        if let Some(event) = &self.event {
            if event.is_empty() || event.chars().any(|c| c.is_whitespace() || c == ',') {
                return Err(MonitorError::BadOption {
                    monitor: NAME,
                    option: format!("event={event}"),
                    accepted: "event takes one perf event name such as cpu-clock or cycles:pp (see `perf list`)"
                        .into(),
                });
            }
        }
        if let Some(frequency) = self.frequency {
            if frequency == 0 || frequency > 100_000 {
                return Err(MonitorError::BadOption {
                    monitor: NAME,
                    option: format!("freq={frequency}"),
                    accepted: "freq takes samples per second per CPU, from 1 to 100000 (default 99)".into(),
                });
            }
        }
        Ok(())
    }

    /// lkp's `cycles:pp` where there are hardware cycle counters that sample precisely, `cycles` where they
    /// sample imprecisely, and `cpu-clock` where there are none.
    fn default_event(perf: &Path, scratch: &Path) -> Result<String, MonitorError> {
        if supported_events(perf, NAME, &["cycles"])?.is_empty() {
            return Ok(FALLBACK_EVENT.to_string());
        }
        let probe_data = scratch.join("probe.data");
        let probe_data = probe_data.to_string_lossy();
        let perf = perf.to_string_lossy();
        let probe = Invocation::new([&*perf, "record", "-q", "-e", "cycles:pp", "-o", &*probe_data, "--", "true"]);
        let precise = run(&probe, Some(PROBE_TIMEOUT), &Arc::new(AtomicBool::new(false)))
            .is_ok_and(|finished| finished.exit.success());
        let _ = std::fs::remove_file(&*probe_data);
        Ok(if precise { "cycles:pp" } else { "cycles" }.to_string())
    }
}

impl Monitor for PerfProfile {
    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self) -> Result<(), MonitorError> {
        self.check_options()?;
        let perf = locate_perf(&self.perf, NAME)?;
        // An event this machine cannot count (lkp's `cycles:pp` in a VM without hardware counters) was found only
        // when each run started, so every run was stored without its profile; one probe finds it before any run.
        let Some(event) = &self.event else { return Ok(()) };
        probe_event(&perf, event).map_err(|error| match error {
            MonitorError::Failed { monitor, detail } => MonitorError::Failed {
                monitor,
                detail: format!(
                    "{detail}; or leave `event:` out, and perf-profile records cycles:pp where the machine has \
                     hardware counters, else cpu-clock"
                ),
            },
            other => other,
        })
    }

    fn start(&mut self) -> Result<(), MonitorError> {
        self.check_options()?;
        let perf = locate_perf(&self.perf, NAME)?;
        let scratch = ScratchDir::create(NAME)?;
        let event = match &self.event {
            Some(event) => {
                probe_event(&perf, event)?;
                event.clone()
            }
            None => PerfProfile::default_event(&perf, scratch.path())?,
        };
        let frequency = self.frequency.unwrap_or(DEFAULT_FREQUENCY);
        let data = scratch.path().join("perf.data");
        let args = self.record_args(frequency, &event, &data);
        let mut process = PerfProcess::spawn(NAME, &perf, &args, Stdio::null(), scratch.path())?
            .ending_on_its_own(self.window.duration_secs.is_some());
        process.wait_until_counting(PERF_READY_LIMIT);
        self.running = Some(Recording { perf, process, data, event, _scratch: scratch });
        Ok(())
    }

    fn sample(&mut self, _elapsed: f64) -> Result<(), MonitorError> {
        match self.running.as_mut() {
            Some(recording) => recording.process.check_alive(),
            None => Ok(()),
        }
    }

    fn finish(&mut self) -> Result<MonitorOutput, MonitorError> {
        let Some(mut recording) = self.running.take() else {
            return Err(MonitorError::Failed { monitor: NAME, detail: "finish called before a successful start".into() });
        };
        recording.process.stop(RECORD_STOP_GRACE)?;
        let size = std::fs::metadata(&recording.data).map(|m| m.len()).unwrap_or(0);
        if size == 0 {
            return Err(MonitorError::Failed {
                monitor: NAME,
                detail: perf_failure("perf record wrote no perf.data", &recording.process.stderr_text()),
            });
        }
        // perf pads every symbol line to the widest symbol (hundreds of spaces with long C++ or Rust names); the
        // padding carries nothing, and dropping it shrinks the kept report several times without changing what
        // it parses to.
        let report: String =
            report(&recording.perf, &recording.data)?.lines().map(|line| format!("{}\n", line.trim_end())).collect();
        // With lkp's `delay`, a run that ends before it leaves perf nothing to record; the user is told which.
        let short = self.window.short_run_hint("recording").unwrap_or_else(|| "a run shorter than a second".into());
        // Read through `Parser::parse`, as `culprit parse` and the executor read outputs: as plain text, with a
        // value that is not finite refused here too.
        let parsed = PerfProfileParser.parse(&ParseInput::text(&report)).map_err(|e| MonitorError::Failed {
            monitor: NAME,
            detail: format!("{e} (event {}; {short} may give perf too few samples)", recording.event),
        })?;
        drop(recording);
        Ok(MonitorOutput {
            // A profile is one picture of the whole run, not a series.
            series: MonitorSeries { monitor: NAME.to_string(), times: Vec::new(), series: Default::default() },
            metrics: parsed.metrics(NAME),
            raw: vec![RawOutput { name: NAME.to_string(), content: report.into_bytes() }],
        })
    }
}

/// Checks with one `perf stat -a -e <event> -- true` that perf may count system-wide and knows the event, so a
/// mistake is reported with perf's own message before the benchmark starts.
fn probe_event(perf: &Path, event: &str) -> Result<(), MonitorError> {
    let finished = probe_perf(perf, NAME, &["stat", "-a", "-x", ",", "-e", event, "--", "true"], "")?;
    if finished.stderr.contains("<not supported>") {
        return Err(MonitorError::Failed {
            monitor: NAME,
            detail: perf_failure(&format!("perf cannot count '{event}' on this machine"), "<not supported>"),
        });
    }
    Ok(())
}

/// lkp's report of a recording, as text.
fn report(perf: &Path, data: &Path) -> Result<String, MonitorError> {
    let perf = perf.to_string_lossy();
    let data = data.to_string_lossy();
    let command = Invocation::new([
        &*perf, "report", "--children", "--header", "-U", "-g", "folded,0.5,callee", "--sort=dso,symbol", "-i", &*data,
    ]);
    let finished = run(&command, Some(REPORT_TIMEOUT), &Arc::new(AtomicBool::new(false)))
        .map_err(|e| MonitorError::Failed { monitor: NAME, detail: format!("cannot run `{}`: {e}", command.display()) })?;
    if !finished.exit.success() {
        return Err(MonitorError::Failed {
            monitor: NAME,
            detail: perf_failure(&format!("`{}` failed ({})", command.display(), finished.exit.describe()), &finished.stderr),
        });
    }
    if finished.stdout.trim().is_empty() {
        return Err(io_failure(
            NAME,
            "read a report from",
            Path::new(&*data),
            std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "perf report printed nothing"),
        ));
    }
    Ok(finished.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn lkps_delay_is_perf_records_delay_in_milliseconds() {
        // lkp's fsmark jobs give `perf-profile: {delay: 10}`, which was refused as an option perf-profile does not
        // take; lkp passes it to perf record as `-D 10000`.
        let options = std::collections::BTreeMap::from([("delay".to_string(), "10".to_string())]);
        assert!(super::super::create("perf-profile", &options, 1.0).is_ok());
        let data = Path::new("/tmp/p.data");
        let args = |window| PerfProfile::new(1.0, None, None).with_window(window).record_args(99, "cpu-clock", data);
        let delayed = Window { delay_secs: 10, duration_secs: None };
        assert_eq!(args(delayed).join(" "), "record -q -g -a -F 99 -e cpu-clock -D 10000 -o /tmp/p.data");
        assert_eq!(args(Window::default()).join(" "), "record -q -g -a -F 99 -e cpu-clock -o /tmp/p.data");
        // A duration ends perf record through its workload, which goes last: 10 s of delay and 2 of recording.
        let window = Window { delay_secs: 10, duration_secs: Some(2) };
        assert_eq!(args(window).join(" "), "record -q -g -a -F 99 -e cpu-clock -D 10000 -o /tmp/p.data -- sleep 12");
        let bad = std::collections::BTreeMap::from([("delay".to_string(), "soon".to_string())]);
        let refused = super::super::create("perf-profile", &bad, 1.0).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(refused.contains("delay: soon") && refused.contains("whole seconds"), "{refused}");
    }

    fn perf_installed() -> bool {
        if Path::new("/usr/bin/perf").exists() {
            true
        } else {
            println!("skipped: /usr/bin/perf is missing (install linux-perf)");
            false
        }
    }

    #[test]
    fn bad_options_are_refused_before_perf_runs() {
        for (event, frequency, option) in [
            (Some("cpu clock".to_string()), None, "event=cpu clock"),
            (Some(String::new()), None, "event="),
            (Some("a,b".to_string()), None, "event=a,b"),
            (None, Some(0), "freq=0"),
            (None, Some(1_000_000), "freq=1000000"),
        ] {
            let mut monitor = PerfProfile::new(1.0, event, frequency).with_perf("/nonexistent/perf");
            match monitor.start() {
                Err(MonitorError::BadOption { option: got, .. }) => assert_eq!(got, option),
                other => panic!("expected BadOption for {option}, got {other:?}"),
            }
        }
    }

    #[test]
    fn missing_perf_names_the_package() {
        let mut monitor = PerfProfile::new(1.0, None, None).with_perf("/nonexistent/perf");
        match monitor.start() {
            Err(MonitorError::MissingProgram { package, .. }) => assert_eq!(package, "linux-perf"),
            other => panic!("expected MissingProgram, got {other:?}"),
        }
        assert!(monitor.finish().is_err());
    }

    #[test]
    fn check_finds_bad_options_and_missing_perf_without_starting() {
        let monitor = PerfProfile::new(1.0, None, Some(0)).with_perf("/nonexistent/perf");
        assert!(matches!(monitor.check(), Err(MonitorError::BadOption { .. })), "freq 0 is refused by check");
        let monitor = PerfProfile::new(1.0, None, None).with_perf("/nonexistent/perf");
        match monitor.check() {
            Err(MonitorError::MissingProgram { package, .. }) => assert_eq!(package, "linux-perf"),
            other => panic!("expected MissingProgram, got {other:?}"),
        }
    }

    #[test]
    fn unknown_event_gives_perfs_message() {
        if !perf_installed() {
            return;
        }
        let mut monitor = PerfProfile::new(1.0, Some("no-such-event".into()), None);
        match monitor.start() {
            Err(MonitorError::Failed { detail, .. }) => {
                assert!(detail.contains("event syntax error"), "perf's own words: {detail}");
                assert!(detail.contains("perf list"), "what to do: {detail}");
            }
            other => panic!("expected Failed, got {other:?}"),
        }
    }

    /// lkp's `duration`: perf record ends by itself 1 s into a 2.5 s run, and its profile is there at the end.
    #[test]
    fn a_duration_ends_the_recording_before_the_run_for_real() {
        if !perf_installed() {
            return;
        }
        let window = Window { delay_secs: 0, duration_secs: Some(1) };
        let mut monitor = PerfProfile::new(1.0, None, Some(199)).with_window(window);
        monitor.start().expect("perf record starts");
        let started = Instant::now();
        let mut x: u64 = 1;
        while started.elapsed() < Duration::from_millis(2500) {
            for _ in 0..10_000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407));
            }
            monitor.sample(started.elapsed().as_secs_f64()).expect("perf record runs or ended with its window");
        }
        let out = monitor.finish().expect("perf report parses");
        let report = String::from_utf8_lossy(&out.raw[0].content).into_owned();
        // About 199 samples a second per CPU for one second on this machine's CPUs: far fewer than 2.5 s give.
        let samples: f64 = report
            .lines()
            .find_map(|line| line.strip_prefix("# Samples: "))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|count| count.trim_end_matches('K').parse().ok())
            .unwrap_or(0.0);
        let cpus = std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64);
        assert!(samples > 0.0 && samples < 199.0 * cpus * 1.6, "{samples} samples: {report:.600}");
        assert!(out.metrics.keys().any(|k| k.starts_with("perf-profile.self.")));
    }

    #[test]
    fn profiles_a_busy_loop_for_real() {
        if !perf_installed() {
            return;
        }
        let mut monitor = PerfProfile::new(1.0, None, Some(199));
        monitor.start().expect("perf record starts");
        let until = Instant::now() + Duration::from_millis(2000);
        let mut x: u64 = 1;
        while Instant::now() < until {
            for _ in 0..10_000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407));
            }
        }
        monitor.sample(2.0).expect("perf record is still running");
        let out = monitor.finish().expect("perf report parses");
        let raw = out.raw.first().expect("the report text is kept");
        assert_eq!(raw.name, "perf-profile");
        let report = String::from_utf8_lossy(&raw.content);
        assert!(report.starts_with("# ========"), "lkp's --header report");
        // This machine has no hardware counters, so the event is cpu-clock; elsewhere cycles:pp.
        let event = if report.contains("of event 'cpu-clock'") { "cpu-clock" } else { "cycles-pp" };
        let prefix = format!("perf-profile.self.{event}.");
        assert!(out.metrics.keys().any(|k| k.starts_with(&prefix)), "{:?}", out.metrics.keys().take(10).collect::<Vec<_>>());
        assert!(out.metrics.keys().any(|k| k.starts_with("perf-profile.children.")));
        assert!(out.metrics.values().all(|v| (0.05..=100.0).contains(v)));
        // The test binary spun for two seconds: it is in the profile, by its own symbols or its process.
        let self_total: f64 = out.metrics.iter().filter(|(k, _)| k.starts_with(&prefix)).map(|(_, v)| v).sum();
        assert!(self_total > 50.0 && self_total <= 100.5, "self percentages cover the samples: {self_total}");
        assert!(out.series.times.is_empty());
        assert!(monitor.finish().is_err(), "a second finish is an error, not a panic");
    }
}
