//! The perf-stat monitor: `perf stat -a -I <interval> -x ,` running system-wide beside the benchmark, parsed into
//! lkp's `perf-stat.*` metrics. Also the pieces both perf monitors share: finding perf, probing events, running
//! perf in the background and stopping it, and turning perf's errors into advice.
//!
//! # What runs
//! `perf stat -a --scale -I <ms> -x , -e <events> --log-fd 1`, as lkp's perf-stat monitor runs it, with its
//! output going to a log in a private temporary directory. The log starts with that command line, as lkp's log
//! does, because lkp's parser reads the event list from it.
//!
//! # Events
//! lkp's set: hardware counters in groups (`{cpu-cycles,instructions,cache-references,cache-misses}`,
//! `{branch-instructions,branch-misses}`, the dTLB, iTLB and node load/store pairs), then the software events
//! `cpu-clock,task-clock,page-faults,context-switches,cpu-migrations,minor-faults,major-faults`. Before starting,
//! one `perf stat -a -e <every hardware event> -- true` shows which counters the machine has; a group is kept only
//! when all its events are supported (lkp's rule). A machine without hardware counters (most VMs, this one
//! included) is left with the software events, which are always there.
//!
//! A job picks its own events as lkp's job files do: `events:` names events or `perf list` filters (`cs`,
//! `sched:sched_switch`, `'xfs:*'`, `sw`, `tracepoint`), comma- or blank-separated; a name or alias `perf list`
//! shows is counted under its first name (`cs` as `context-switches`), a filter adds every event it lists. An
//! event named on its own that the machine cannot count stops the job before its first run; those a filter brought
//! in are left out when uncountable, and a filter that leaves nothing stops the job too. `revents:` is perf's raw
//! `-e` text (groups, PMU terms with `name=`), checked once with perf itself.
//!
//! # Metrics
//! Event counts are deltas per interval, so they are reduced to rates, as lkp does (see
//! [`culprit_parse::perf_stat`]): `perf-stat.ps.<event>` is the count per second over the run,
//! `perf-stat.i.<event>` the mean of the per-interval rates (an interval without a value counting as zero, as in
//! lkp), plus derived ratios (`perf-stat.overall.ipc`, miss rates) when hardware counters exist. `cpu-clock` and
//! `task-clock` count milliseconds, so their rates are CPU milliseconds per second (2000 = two busy CPUs). The series
//! hold the `i.*` values per interval.

use super::{Monitor, MonitorError, MonitorOutput};
use crate::process::{find_in_path, run, Invocation};
use culprit_core::model::{MonitorSeries, RawOutput};
use culprit_parse::{Line, ParseInput, ParseOutput, Parser};
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const NAME: &str = "perf-stat";

/// The Debian package that provides `perf`.
pub const PERF_PACKAGE: &str = "linux-perf";

/// lkp's hardware event groups, for machines with at most four general counters (a group never needs more).
const HARDWARE_GROUPS: &[&[&str]] = &[
    &["cpu-cycles", "instructions", "cache-references", "cache-misses"],
    &["branch-instructions", "branch-misses"],
    &["dTLB-loads", "dTLB-load-misses"],
    &["dTLB-stores", "dTLB-store-misses"],
    &["iTLB-loads", "iTLB-load-misses"],
    &["node-loads", "node-load-misses"],
    &["node-stores", "node-store-misses"],
];

/// lkp's software events, counted on every machine.
pub const SOFTWARE_EVENTS: &[&str] =
    &["cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations", "minor-faults", "major-faults"];

/// How long a probe of perf may take before it is given up.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long perf gets to write its last output after SIGINT before it is killed.
const STAT_STOP_GRACE: Duration = Duration::from_secs(5);
/// How long `start` waits for perf to reach its main loop before it lets the benchmark start anyway.
pub(crate) const PERF_READY_LIMIT: Duration = Duration::from_secs(10);

/// The system calls perf waits in once in its main loop: poll (ppoll where there is no poll) for its events and
/// control descriptors, or, in older perf stat, a sleep until the next interval.
#[cfg(target_arch = "x86_64")]
const LOOP_WAITS: [libc::c_long; 4] = [libc::SYS_poll, libc::SYS_ppoll, libc::SYS_nanosleep, libc::SYS_clock_nanosleep];
#[cfg(not(target_arch = "x86_64"))]
const LOOP_WAITS: [libc::c_long; 2] = [libc::SYS_ppoll, libc::SYS_clock_nanosleep];

/// More events than this from one `events:` list are refused: perf opens a counter per event and CPU, and a filter
/// such as `tracepoint` lists thousands, which exhausts file descriptors and makes perf's output the run's cost.
pub const MAX_NAMED_EVENTS: usize = 256;

/// Which events perf-stat counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventChoice {
    /// lkp's default set: its hardware groups the machine has, then the software events.
    Lkp,
    /// The job's `events:`: event names, aliases or `perf list` filters, expanded on the machine.
    Named(Vec<String>),
    /// The job's `revents:`: perf's `-e` text, as given.
    Raw(String),
}

/// lkp's `delay` and `duration` of a perf monitor: counting starts `delay_secs` into the run and, with a duration,
/// ends `duration_secs` later while the benchmark goes on. lkp uses a window to leave out a benchmark's start-up, or
/// to keep `perf record` from drowning in the events of a long run (its unixbench execl job records for 2 s).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Window {
    /// Seconds into the run before perf counts (perf's `-D`); 0 counts from the start.
    pub delay_secs: u64,
    /// Seconds perf counts after the delay; none counts to the end of the run.
    pub duration_secs: Option<u64>,
}

impl Window {
    /// perf's options for the window: `-D <ms>` for a delay.
    pub(crate) fn delay_args(&self) -> Vec<String> {
        match self.delay_secs {
            0 => Vec::new(),
            secs => vec!["-D".to_string(), (secs * 1000).to_string()],
        }
    }

    /// The workload that ends perf when the window closes, to go last on perf's command line: `-- sleep <delay +
    /// duration>`, lkp's own way (its perf runs lkp's wait command with that timeout). perf counts system-wide
    /// either way; the workload only says when to stop, and perf's `-D` counts from the workload's start.
    pub(crate) fn workload_args(&self) -> Vec<String> {
        match self.duration_secs {
            None => Vec::new(),
            Some(duration) => {
                vec!["--".to_string(), "sleep".to_string(), self.delay_secs.saturating_add(duration).to_string()]
            }
        }
    }

    /// Says when a run that ended before perf counted anything is no surprise: a run shorter than the delay.
    /// `starts` names what perf does, "counting" or "recording".
    pub(crate) fn short_run_hint(&self, starts: &str) -> Option<String> {
        (self.delay_secs > 0).then(|| {
            format!("{starts} starts {} s into the run (the job's delay), so a run shorter than that", self.delay_secs)
        })
    }
}

/// The perf-stat monitor. Build it with [`PerfStat::new`]; the run calls `start` and `finish`.
pub struct PerfStat {
    interval_secs: f64,
    window: Window,
    /// lkp's `per_socket` and `per_die`: perf's `--per-socket` and `--per-die`, which print a line per socket
    /// (die) that the parser keys `S<n>.<event>` (`S<n>-D<m>.<event>`) beside the machine's sum.
    per_socket: bool,
    per_die: bool,
    perf: PathBuf,
    choice: EventChoice,
    /// The `-e` text, worked out once (in `check`, else at the first `start`): listing and probing events takes
    /// a few perf runs, the same for every run of the job.
    events: std::sync::OnceLock<String>,
    running: Option<PerfProcess>,
    log_path: Option<PathBuf>,
    scratch: Option<ScratchDir>,
}

impl PerfStat {
    /// A perf-stat monitor printing every `interval_secs` seconds (perf's `-I`, at least 10 ms), using the `perf`
    /// found in `PATH`.
    pub fn new(interval_secs: f64) -> PerfStat {
        PerfStat {
            interval_secs,
            window: Window::default(),
            per_socket: false,
            per_die: false,
            perf: PathBuf::from("perf"),
            choice: EventChoice::Lkp,
            events: std::sync::OnceLock::new(),
            running: None,
            log_path: None,
            scratch: None,
        }
    }

    /// Uses the perf binary at `perf` (a path, or a name looked up in `PATH`) instead of `perf`.
    pub fn with_perf(mut self, perf: impl Into<PathBuf>) -> PerfStat {
        self.perf = perf.into();
        self
    }

    /// Counts only within `window` of the run (lkp's `delay` and `duration`).
    pub fn with_window(mut self, window: Window) -> PerfStat {
        self.window = window;
        self
    }

    /// Also counts per socket and per die, as lkp's `per_socket` and `per_die` ask.
    pub fn with_split(mut self, per_socket: bool, per_die: bool) -> PerfStat {
        self.per_socket = per_socket;
        self.per_die = per_die;
        self
    }

    /// perf stat's arguments for `events` every `interval_ms`, in lkp's order (its options before `-D`).
    fn stat_args(&self, events: &str, interval_ms: u64) -> Vec<String> {
        let mut args: Vec<String> = [
            "stat", "-a", "--scale", "-I", &interval_ms.to_string(), "-x", ",", "-e", events, "--log-fd", "1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let split = [(self.per_socket, "--per-socket"), (self.per_die, "--per-die")];
        args.extend(split.iter().filter(|(asked, _)| *asked).map(|(_, option)| option.to_string()));
        args.extend(self.window.delay_args());
        args.extend(self.window.workload_args());
        args
    }

    /// Counts `choice` instead of lkp's default set.
    pub fn with_events(mut self, choice: EventChoice) -> PerfStat {
        self.choice = choice;
        self
    }

    /// The `-e` text for this machine, worked out on first use and kept.
    fn events(&self, perf: &Path) -> Result<String, MonitorError> {
        if let Some(events) = self.events.get() {
            return Ok(events.clone());
        }
        let events = match &self.choice {
            EventChoice::Lkp => PerfStat::choose_events(perf)?,
            EventChoice::Named(items) => named_events(perf, items)?,
            EventChoice::Raw(text) => {
                raw_events(perf, text)?;
                text.clone()
            }
        };
        Ok(self.events.get_or_init(|| events).clone())
    }

    /// The events lkp would count that this machine supports, in lkp's `-e` syntax.
    fn choose_events(perf: &Path) -> Result<String, MonitorError> {
        let hardware: Vec<&str> = HARDWARE_GROUPS.iter().flat_map(|g| g.iter().copied()).collect();
        let supported = supported_events(perf, NAME, &hardware)?;
        let mut parts: Vec<String> = HARDWARE_GROUPS
            .iter()
            .filter(|group| group.iter().all(|e| supported.iter().any(|s| s == e)))
            .map(|group| format!("{{{}}}", group.join(",")))
            .collect();
        parts.extend(SOFTWARE_EVENTS.iter().map(|e| e.to_string()));
        Ok(parts.join(","))
    }
}

impl Monitor for PerfStat {
    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self) -> Result<(), MonitorError> {
        let perf = locate_perf(&self.perf, NAME)?;
        // A job's own events are checked before its first run: one it cannot count would otherwise fail every run's
        // monitor and leave the runs without the counters asked for.
        if self.choice != EventChoice::Lkp {
            self.events(&perf)?;
        }
        Ok(())
    }

    fn start(&mut self) -> Result<(), MonitorError> {
        let perf = locate_perf(&self.perf, NAME)?;
        let events = self.events(&perf)?;
        let interval_ms = interval_ms(self.interval_secs);
        let scratch = ScratchDir::create(NAME)?;
        let log_path = scratch.path().join("perf-stat");
        let args = self.stat_args(&events, interval_ms);
        // lkp's log begins with the echoed command line; its parser takes the event list from there.
        let mut log = File::create(&log_path).map_err(|e| io_failure(NAME, "create the perf-stat log", &log_path, e))?;
        writeln!(log, "{} {}", perf.display(), args.join(" "))
            .map_err(|e| io_failure(NAME, "write the perf-stat log", &log_path, e))?;
        let mut process = PerfProcess::spawn(NAME, &perf, &args, Stdio::from(log), scratch.path())?
            .ending_on_its_own(self.window.duration_secs.is_some());
        process.wait_until_counting(PERF_READY_LIMIT);
        self.running = Some(process);
        self.log_path = Some(log_path);
        self.scratch = Some(scratch);
        Ok(())
    }

    fn sample(&mut self, _elapsed: f64) -> Result<(), MonitorError> {
        match self.running.as_mut() {
            Some(process) => process.check_alive(),
            None => Ok(()),
        }
    }

    fn finish(&mut self) -> Result<MonitorOutput, MonitorError> {
        let Some(mut process) = self.running.take() else {
            return Err(MonitorError::Failed { monitor: NAME, detail: "finish called before a successful start".into() });
        };
        let stopped = process.stop(STAT_STOP_GRACE);
        let stderr = process.stderr_text();
        stopped?;
        let log_path = self.log_path.take().unwrap_or_default();
        let log = fs::read(&log_path).map_err(|e| io_failure(NAME, "read the perf-stat log", &log_path, e))?;
        self.scratch = None;
        let text = String::from_utf8_lossy(&log);
        let parsed = parse_log(&text).map_err(|e| {
            let detail = match self.window.short_run_hint("counting") {
                Some(hint) => format!("{e} ({hint} leaves perf nothing to count)"),
                None => e.to_string(),
            };
            MonitorError::Failed { monitor: NAME, detail: with_perf_stderr(detail, &stderr) }
        })?;
        let mut series = interval_series(NAME, &parsed, "i.");
        // perf's interval times count from when it started counting; the other monitors' from the run's start.
        series.times.iter_mut().for_each(|time| *time += self.window.delay_secs as f64);
        Ok(MonitorOutput {
            series,
            metrics: culprit_parse::perf_stat::run_metrics(&parsed),
            raw: vec![RawOutput { name: NAME.to_string(), content: log }],
        })
    }
}

/// A perf-stat log read through `Parser::parse`, as `culprit parse` and the executor read outputs, so that it is read
/// as plain text (no CR or padding at a line's end, which lost the `metric.<unit>` keys) and a NaN in it is refused
/// here too.
fn parse_log(text: &str) -> Result<ParseOutput, culprit_parse::ParseError> {
    culprit_parse::perf_stat::PerfStat.parse(&ParseInput::text(text))
}

/// perf's `-I` in milliseconds: perf refuses less than 10 ms.
fn interval_ms(interval_secs: f64) -> u64 {
    let ms = (interval_secs * 1000.0).round();
    if ms.is_finite() && ms >= 10.0 {
        ms as u64
    } else {
        10
    }
}

/// The per-interval series of a parsed monitor log whose records start with `time:`: each key with `prefix` that
/// appears in every record (derived ratios that some intervals skip are left to the metrics).
pub(crate) fn interval_series(monitor: &str, parsed: &ParseOutput, prefix: &str) -> MonitorSeries {
    let mut times = Vec::new();
    let mut records: Vec<BTreeMap<String, f64>> = Vec::new();
    for line in &parsed.lines {
        let Line::Pair { key, value } = line else { continue };
        if key == "time" {
            times.push(value.parse().unwrap_or(f64::NAN));
            records.push(BTreeMap::new());
        } else if key.starts_with(prefix) {
            if let (Some(record), Ok(v)) = (records.last_mut(), value.parse::<f64>()) {
                record.insert(key.clone(), v);
            }
        }
    }
    let mut series = BTreeMap::new();
    if let Some(first) = records.first() {
        for key in first.keys() {
            let values: Option<Vec<f64>> = records.iter().map(|r| r.get(key).copied()).collect();
            if let Some(values) = values {
                series.insert(key.clone(), values);
            }
        }
    }
    MonitorSeries { monitor: monitor.to_string(), times, series }
}

/// Finds perf, or says which package to install.
pub(crate) fn locate_perf(perf: &Path, monitor: &'static str) -> Result<PathBuf, MonitorError> {
    find_in_path(&perf.to_string_lossy()).ok_or_else(|| MonitorError::MissingProgram {
        monitor,
        program: "perf",
        package: PERF_PACKAGE,
        detail: format!(
            "'{}' was not found; install it with `apt-get install {PERF_PACKAGE}` on Debian \
             (`linux-tools-$(uname -r)` on Ubuntu), or drop {monitor} from the job's monitors",
            perf.display()
        ),
    })
}

/// Which of `events` perf can count system-wide on this machine, from one `perf stat -a -- true`. Fails with
/// perf's own message when perf cannot count system-wide at all (permissions) or rejects the list.
pub(crate) fn supported_events(perf: &Path, monitor: &'static str, events: &[&str]) -> Result<Vec<String>, MonitorError> {
    if events.is_empty() {
        return Ok(Vec::new());
    }
    let list = events.join(",");
    let finished = probe_perf(perf, monitor, &["stat", "-a", "-x", ",", "-e", &list, "--", "true"], "")?;
    Ok(counted_events(&finished.stderr, events))
}

/// The events of a job's `events:` list on this machine, joined for `-e`: each item is a name or alias that `perf
/// list` shows (counted under the first name of its line) or a filter (every event it lists, as lkp's perf-events
/// expands it). Named events must all be countable; a filter's uncountable events are left out.
fn named_events(perf: &Path, items: &[String]) -> Result<String, MonitorError> {
    let mut named: Vec<String> = Vec::new();
    let mut filtered: Vec<String> = Vec::new();
    for item in items {
        let listing = perf_list(perf, item)?;
        let lines = listed_events(&listing);
        if let Some(names) = lines.iter().find(|names| names.iter().any(|n| n == item)) {
            named.push(names[0].clone());
        } else if lines.is_empty() {
            return Err(MonitorError::Failed {
                monitor: NAME,
                detail: format!(
                    "events: '{item}' is no event or filter `perf list` knows on this machine; `perf list` shows the \
                     events it has (machines without hardware counters, such as most VMs, have software events and \
                     tracepoints only)"
                ),
            });
        } else {
            filtered.extend(lines.into_iter().map(|names| names[0].clone()));
        }
    }
    let mut wanted: Vec<String> = Vec::new();
    for event in named.iter().chain(&filtered) {
        if !wanted.contains(event) {
            wanted.push(event.clone());
        }
    }
    if wanted.len() > MAX_NAMED_EVENTS {
        return Err(MonitorError::Failed {
            monitor: NAME,
            detail: format!(
                "events: '{}' lists {} events, more than the {MAX_NAMED_EVENTS} perf-stat counts at once (perf \
                 opens a counter per event and CPU); name the events, or a narrower filter such as 'sched:*'",
                items.join(" "),
                wanted.len()
            ),
        });
    }
    let wanted_refs: Vec<&str> = wanted.iter().map(String::as_str).collect();
    let counted = supported_events(perf, NAME, &wanted_refs)?;
    let uncountable: Vec<&String> = named.iter().filter(|e| !counted.contains(e)).collect();
    if !uncountable.is_empty() {
        let list: Vec<&str> = uncountable.iter().map(|e| e.as_str()).collect();
        return Err(MonitorError::Failed {
            monitor: NAME,
            detail: format!(
                "events: this machine cannot count {}; leave it out of events, or drop `events:` for lkp's default \
                 set (most VMs have no hardware counters)",
                list.join(", ")
            ),
        });
    }
    let kept: Vec<&str> = wanted_refs.into_iter().filter(|e| counted.iter().any(|c| c == e)).collect();
    if kept.is_empty() {
        return Err(MonitorError::Failed {
            monitor: NAME,
            detail: format!("events: none of the events '{}' lists can be counted on this machine", items.join(" ")),
        });
    }
    Ok(kept.join(","))
}

/// `perf list --no-desc FILTER`'s output.
fn perf_list(perf: &Path, filter: &str) -> Result<String, MonitorError> {
    Ok(probe_perf(perf, NAME, &["list", "--no-desc", filter], "")?.stdout)
}

/// Runs one short perf command for `monitor`'s check (bounded by [`PROBE_TIMEOUT`]); a failure is perf's message
/// with advice, led by `label`.
pub(crate) fn probe_perf(
    perf: &Path,
    monitor: &'static str,
    args: &[&str],
    label: &str,
) -> Result<crate::process::Finished, MonitorError> {
    let perf_str = perf.to_string_lossy().into_owned();
    let probe = Invocation::new(std::iter::once(perf_str.as_str()).chain(args.iter().copied()));
    let finished = run(&probe, Some(PROBE_TIMEOUT), &Arc::new(AtomicBool::new(false)))
        .map_err(|e| MonitorError::Failed { monitor, detail: format!("cannot run `{}`: {e}", probe.display()) })?;
    if !finished.exit.success() {
        let what = format!("{label}`{}` failed ({})", probe.display(), finished.exit.describe());
        return Err(MonitorError::Failed { monitor, detail: perf_failure(&what, &finished.stderr) });
    }
    Ok(finished)
}

/// The events of a `perf list` listing, one entry per line that ends with its kind (`[Software event]`,
/// `[Tracepoint event]`, as lkp's perf-events reads them), holding the line's names: `context-switches OR cs` is
/// `["context-switches", "cs"]`.
pub(crate) fn listed_events(listing: &str) -> Vec<Vec<String>> {
    listing
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let open = line.rfind('[')?;
            if !line.ends_with("event]") {
                return None;
            }
            let names: Vec<String> =
                line[..open].split(" OR ").map(|n| n.trim().to_string()).filter(|n| !n.is_empty()).collect();
            (!names.is_empty() && names.iter().all(|n| !n.contains(char::is_whitespace))).then_some(names)
        })
        .collect()
}

/// Checks a job's `revents:` text with one `perf stat -a -e TEXT -- true`: perf must take it, and count every
/// event in it.
fn raw_events(perf: &Path, text: &str) -> Result<(), MonitorError> {
    let finished = probe_perf(perf, NAME, &["stat", "-a", "-x", ",", "-e", text, "--", "true"], "revents: ")?;
    let unsupported: Vec<&str> = finished
        .stderr
        .lines()
        .filter(|line| line.starts_with("<not supported>") || line.starts_with("<not counted>"))
        .filter_map(|line| line.split(',').nth(2))
        .collect();
    if !unsupported.is_empty() {
        return Err(MonitorError::Failed {
            monitor: NAME,
            detail: format!("revents: this machine cannot count {}; leave it out of revents", unsupported.join(", ")),
        });
    }
    Ok(())
}

/// The events a `perf stat -x ,` summary counted: every event with a line whose value is not `<not supported>`.
pub(crate) fn counted_events(csv: &str, events: &[&str]) -> Vec<String> {
    let mut counted = Vec::new();
    for line in csv.lines() {
        let mut fields = line.split(',');
        let (Some(value), Some(_unit), Some(event)) = (fields.next(), fields.next(), fields.next()) else { continue };
        if value.trim() == "<not supported>" {
            continue;
        }
        // Hybrid CPUs print `cpu_core/cycles/`; the plain name is what was asked for.
        let event = event.trim_end_matches('/').rsplit('/').next().unwrap_or(event);
        if events.contains(&event) && !counted.iter().any(|c| c == event) {
            counted.push(event.to_string());
        }
    }
    counted
}

/// perf's failure message with what to do about it, on one line: a run keeps each monitor failure as one line of its
/// stderr, and the console shows that line, so perf's own first line (`Error:` alone, above its reason) was all a
/// user saw of a refusal.
pub(crate) fn perf_failure(what: &str, stderr: &str) -> String {
    let said: Vec<&str> = stderr.lines().map(str::trim).filter(|line| !line.is_empty() && *line != "Error:").collect();
    let message = crate::process::shortened(&said.join(" "), 2 * crate::process::QUOTED_CHARS);
    let message = message.as_str();
    let advice = if message.contains("perf_event_paranoid") || message.contains("Permission denied") {
        "perf may not count system-wide here: run culprit as root, or allow it with \
         `sysctl kernel.perf_event_paranoid=-1`"
    } else if message.contains("event syntax error") || message.contains("not supported") {
        "the event is not known or not supported on this machine; `perf list` shows the events it has \
         (machines without hardware counters, such as most VMs, have only software events like cpu-clock)"
    } else {
        "run the command above by hand to see more"
    };
    if message.is_empty() {
        format!("{what}; {advice}")
    } else {
        format!("{what}: {message}; {advice}")
    }
}

fn with_perf_stderr(detail: String, stderr: &str) -> String {
    let stderr = stderr.trim();
    if stderr.is_empty() {
        detail
    } else {
        format!("{detail}; perf said: {stderr}")
    }
}

pub(crate) fn io_failure(monitor: &'static str, action: &str, path: &Path, error: std::io::Error) -> MonitorError {
    MonitorError::Failed { monitor, detail: format!("cannot {action} {}: {error}", path.display()) }
}

/// The perf monitors, whose names name their scratch directories (`culprit-<monitor>-<pid>-<n>`).
const SCRATCH_MONITORS: [&str; 2] = ["perf-stat", "perf-profile"];

/// A private temporary directory for perf's files, removed when dropped.
///
/// A culprit killed with `kill -9` drops nothing, and its directory stays behind (with a perf-profile's `perf.data`,
/// which grows by megabytes a second). So the directory is named after the process (`culprit-<monitor>-<pid>-<n>`)
/// and holds a `flock` on itself for as long as it is in use; the kernel lets go of the lock when the process dies,
/// however it dies. Creating one first removes the stale ones ([`remove_stale_scratch_dirs`]).
pub(crate) struct ScratchDir {
    path: PathBuf,
    /// The directory, open and locked: the lock says it is in use.
    _lock: File,
}

impl ScratchDir {
    pub(crate) fn create(monitor: &'static str) -> Result<ScratchDir, MonitorError> {
        ScratchDir::create_in(&std::env::temp_dir(), monitor)
    }

    pub(crate) fn create_in(base: &Path, monitor: &'static str) -> Result<ScratchDir, MonitorError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        remove_stale_scratch_dirs(base);
        let mut last_error = None;
        for _ in 0..100 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("culprit-{monitor}-{}-{n}", std::process::id()));
            match fs::create_dir(&path) {
                Ok(()) => {}
                // A directory left by an earlier process with the same pid: try the next name.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    last_error = Some(e);
                    continue;
                }
                Err(e) => return Err(io_failure(monitor, "create a temporary directory", &path, e)),
            }
            // Between the directory's creation and its lock, a clean-up by a process that cannot see this pid (in
            // another pid namespace sharing the temp dir) may take it for stale: then the lock fails, or the path
            // no longer names the directory locked, and the next name is tried.
            match lock_dir(&path) {
                Ok(Some(lock)) if same_file(&lock, &path) => return Ok(ScratchDir { path, _lock: lock }),
                Ok(_) => continue,
                Err(e) => return Err(io_failure(monitor, "lock the temporary directory", &path, e)),
            }
        }
        Err(MonitorError::Failed {
            monitor,
            detail: format!(
                "cannot create a temporary directory under {}: {}",
                base.display(),
                last_error.map_or_else(|| "every name is taken".to_string(), |e| e.to_string())
            ),
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // Best effort: a leftover directory in the temp dir is harmless and must not fail the run.
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// Opens the directory `path` and takes an exclusive `flock` on it without waiting: `Ok(None)` when another open
/// file holds the lock. The file is opened close-on-exec, so perf, started later, does not hold the lock on.
fn lock_dir(path: &Path) -> std::io::Result<Option<File>> {
    use std::os::fd::AsRawFd;
    let dir = File::open(path)?;
    // SAFETY: flock on a file descriptor this function owns for the call's duration.
    if unsafe { libc::flock(dir.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(Some(dir));
    }
    let error = std::io::Error::last_os_error();
    if error.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(None)
    } else {
        Err(error)
    }
}

/// Whether `path` still names the open file `file` (the same device and inode).
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The pid a perf monitor's scratch directory is named after, for a name `culprit-<monitor>-<pid>-<n>`.
fn scratch_owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("culprit-")?;
    let rest = SCRATCH_MONITORS.iter().find_map(|monitor| rest.strip_prefix(monitor)?.strip_prefix('-'))?;
    let (pid, n) = rest.split_once('-')?;
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    if digits(pid) && digits(n) {
        pid.parse().ok()
    } else {
        None
    }
}

/// Removes the perf monitors' scratch directories under `base` whose process is gone: a culprit killed with
/// `kill -9` (or by the OOM killer, or a power cut of a machine without a tmpfs /tmp) leaves its directory behind.
/// A directory is stale when it is this user's, its pid is not a running process and no process holds its lock (a
/// process in another pid namespace sharing /tmp is invisible in /proc but holds the lock; a live culprit of an
/// older build, which does not lock, is running under its pid). Returns the directories removed. Best effort: what
/// cannot be read or removed is left.
pub fn remove_stale_scratch_dirs(base: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let uid = crate::process::effective_uid();
    let mut removed = Vec::new();
    let Ok(entries) = fs::read_dir(base) else { return removed };
    for entry in entries.flatten() {
        let Some(pid) = scratch_owner(&entry.file_name().to_string_lossy()) else { continue };
        let path = entry.path();
        let Ok(meta) = fs::symlink_metadata(&path) else { continue };
        if !meta.is_dir() || meta.uid() != uid || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        // Held while the directory is removed, so a process that opens it meanwhile cannot take it for its own.
        if let Ok(Some(_lock)) = lock_dir(&path) {
            if fs::remove_dir_all(&path).is_ok() {
                removed.push(path);
            }
        }
    }
    removed
}

/// perf running in the background, in a process group of its own so a Ctrl-C at the terminal reaches culprit
/// (which then stops perf itself and keeps its output) rather than killing perf mid-write. It is sent SIGTERM
/// when the thread that started it ends, which is when culprit dies: a `perf record -a` left behind by a culprit
/// killed with `kill -9` would record the whole machine into the temp dir until the disk is full. (The thread that
/// runs a job starts its monitors and stops them before it goes on, so it never ends while perf should run.)
pub(crate) struct PerfProcess {
    monitor: &'static str,
    child: Child,
    command: String,
    stderr_path: PathBuf,
    exited: Option<ExitStatus>,
    /// perf runs a workload that ends it when the job's window closes (see [`Window`]), so a successful exit
    /// while the benchmark runs is expected rather than a failure.
    ends_on_its_own: bool,
}

/// Has the spawned process sent SIGTERM when the thread that spawned it ends (Linux's `PR_SET_PDEATHSIG`), so a
/// perf that culprit's death leaves behind stops instead of counting on.
fn with_parent_death_signal(command: &mut Command) -> &mut Command {
    // SAFETY: prctl is async-signal-safe and touches no memory of the parent; it runs in the child between fork and
    // exec.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

impl PerfProcess {
    pub(crate) fn spawn(
        monitor: &'static str,
        perf: &Path,
        args: &[String],
        stdout: Stdio,
        dir: &Path,
    ) -> Result<PerfProcess, MonitorError> {
        let stderr_path = dir.join("perf.stderr");
        let stderr = File::create(&stderr_path).map_err(|e| io_failure(monitor, "create", &stderr_path, e))?;
        let command = format!("{} {}", perf.display(), args.join(" "));
        let mut command_to_spawn = Command::new(perf);
        command_to_spawn
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(Stdio::from(stderr))
            .process_group(0);
        let child = with_parent_death_signal(&mut command_to_spawn)
            .spawn()
            .map_err(|e| MonitorError::Failed { monitor, detail: format!("cannot start `{command}`: {e}") })?;
        Ok(PerfProcess { monitor, child, command, stderr_path, exited: None, ends_on_its_own: false })
    }

    /// Marks perf as ending by itself when `ends` (it runs a window's workload), which is then no failure.
    pub(crate) fn ending_on_its_own(mut self, ends: bool) -> PerfProcess {
        self.ends_on_its_own = ends;
        self
    }

    /// Whether perf has exited as it should: by itself, at the end of its window.
    fn ended_on_its_own(&self) -> bool {
        self.ends_on_its_own && self.exited.is_some_and(|status| status.success())
    }

    /// Waits, at most `limit`, until perf has reached its main loop, or has exited. Before that, a stop loses
    /// everything: perf stat opens its counters before it installs its SIGINT handler (a SIGINT then kills it), and
    /// once the handler is there, a SIGINT before the loop ends perf without its last interval (it prints that from
    /// the loop); recorded on this machine, a SIGINT right after perf had a `perf_event` descriptor open left an
    /// empty log 23 times in 25. Both perf stat and perf record wait for the next event in poll (or sleep, in older
    /// perf) once in their loop, and /proc/<pid>/syscall names the system call a process is blocked in; with that,
    /// 30 SIGINTs of 30 got their interval printed. Past the limit, or without a readable
    /// /proc/<pid>/syscall, the run goes on, and a perf that never counts is reported by `finish`.
    pub(crate) fn wait_until_counting(&mut self, limit: Duration) {
        let syscall_file = PathBuf::from(format!("/proc/{}/syscall", self.child.id()));
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            let Ok(text) = fs::read_to_string(&syscall_file) else { return };
            let blocked_in = text.split_whitespace().next().and_then(|n| n.parse::<libc::c_long>().ok());
            if blocked_in.is_some_and(|n| LOOP_WAITS.contains(&n)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Fails with perf's message if perf has already exited: it only stops when told to, or at the end of its
    /// window.
    pub(crate) fn check_alive(&mut self) -> Result<(), MonitorError> {
        if self.exited.is_none() {
            match self.child.try_wait() {
                Ok(Some(status)) => self.exited = Some(status),
                Ok(None) => return Ok(()),
                Err(e) => {
                    return Err(MonitorError::Failed { monitor: self.monitor, detail: format!("cannot watch perf: {e}") })
                }
            }
        }
        if self.ended_on_its_own() {
            return Ok(());
        }
        let status = self.exited.map_or_else(String::new, |s| s.to_string());
        Err(MonitorError::Failed {
            monitor: self.monitor,
            detail: perf_failure(&format!("`{}` stopped early ({status})", self.command), &self.stderr_text()),
        })
    }

    /// Stops perf: SIGINT (perf then writes its last output), then SIGKILL if it has not exited within `grace`.
    /// A perf whose window has closed has already written its output and is only reaped.
    pub(crate) fn stop(&mut self, grace: Duration) -> Result<ExitStatus, MonitorError> {
        if self.exited.is_none() && self.ends_on_its_own {
            if let Ok(Some(status)) = self.child.try_wait() {
                self.exited = Some(status);
            }
        }
        if let Some(status) = self.exited.filter(|_| self.ended_on_its_own()) {
            return Ok(status);
        }
        if let Some(status) = self.exited {
            return Err(MonitorError::Failed {
                monitor: self.monitor,
                detail: perf_failure(&format!("`{}` stopped early ({status})", self.command), &self.stderr_text()),
            });
        }
        let pid = self.child.id() as libc::pid_t;
        // The SIGINT goes to perf's process group, as a Ctrl-C would: a window's `sleep` workload must end too, for
        // perf stat waits for its workload before it exits. Without a workload the group is perf alone.
        // SAFETY: a plain kill(2) on our own child's group, led by the child, which has not been reaped yet (so the
        // group is still ours).
        unsafe {
            libc::kill(-pid, libc::SIGINT);
        }
        let deadline = Instant::now() + grace;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    self.exited = Some(status);
                    return Ok(status);
                }
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                Ok(None) => break,
                Err(e) => {
                    return Err(MonitorError::Failed { monitor: self.monitor, detail: format!("cannot wait for perf: {e}") })
                }
            }
        }
        // perf did not stop in time: kill it and its workload. What it wrote so far is still read by the caller.
        // SAFETY: as above; the child is still not reaped.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
        let status = self
            .child
            .wait()
            .map_err(|e| MonitorError::Failed { monitor: self.monitor, detail: format!("cannot wait for perf: {e}") })?;
        self.exited = Some(status);
        Ok(status)
    }

    pub(crate) fn stderr_text(&self) -> String {
        fs::read(&self.stderr_path).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default()
    }
}

impl Drop for PerfProcess {
    fn drop(&mut self) {
        // A monitor dropped without finish (an aborted run) must not leave perf running.
        if self.exited.is_none() {
            // SAFETY: a kill(2) on our own child's group; the child is not reaped yet, so the group is still ours.
            unsafe {
                libc::kill(-(self.child.id() as libc::pid_t), libc::SIGKILL);
            }
            let _ = self.child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recorded perf-stat logs (culprit-parse's test data) give the same metrics with spaces or tabs after every
    /// line as without; read by the parser's `parse_text` directly, the padded ones lost their `metric.<unit>` keys.
    #[test]
    fn a_log_with_padded_lines_gives_the_metrics_of_the_clean_log() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../culprit-parse/tests/data/perf");
        for name in ["perf-stat-cpu.csv", "perf-stat-short.log", "perf-stat-vm.log"] {
            let clean = fs::read_to_string(dir.join(name)).unwrap();
            let want = culprit_parse::perf_stat::run_metrics(&parse_log(&clean).unwrap());
            assert!(want.keys().any(|key| key.contains(".metric.")), "{name} gave no metric.<unit> key: {want:?}");
            for pad in ["  ", "\t", " \t"] {
                let padded: String = clean.lines().map(|line| format!("{line}{pad}\n")).collect();
                let got = culprit_parse::perf_stat::run_metrics(&parse_log(&padded).unwrap());
                assert_eq!(got, want, "{name} with {pad:?} after every line");
            }
        }
    }

    /// perf is sent SIGTERM when the thread that started it ends, as every thread does when culprit is killed with
    /// `kill -9`: here a thread starts a `sleep` in perf's place and ends. Without the signal the sleep runs on.
    #[test]
    fn a_perf_process_is_terminated_when_the_thread_that_started_it_ends() {
        use std::os::unix::process::ExitStatusExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        let sleep = Path::new("/bin/sleep");
        let mut process = std::thread::spawn(move || {
            PerfProcess::spawn("perf-stat", sleep, &["3185".to_string()], Stdio::null(), &path).unwrap()
        })
        .join()
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = process.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "the process outlived the thread that started it");
            std::thread::sleep(Duration::from_millis(20));
        };
        process.exited = Some(status);
        assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    }

    /// What perf 6.1 prints to an unprivileged user when `kernel.perf_event_paranoid` is 4 (recorded on this
    /// machine as user nobody).
    const PARANOID_MESSAGE: &str = "Error:\nAccess to performance monitoring and observability operations is limited.\n\
        Consider adjusting /proc/sys/kernel/perf_event_paranoid setting to open\n\
        access to performance monitoring and observability operations for processes\n\
        without CAP_PERFMON, CAP_SYS_PTRACE or CAP_SYS_ADMIN Linux capability.\n\
        perf_event_paranoid setting is 4:\n";

    fn perf_installed() -> bool {
        if Path::new("/usr/bin/perf").exists() {
            true
        } else {
            println!("skipped: /usr/bin/perf is missing (install linux-perf)");
            false
        }
    }

    /// A culprit killed with `kill -9` while perf ran: here `flock` holds the lock of a scratch directory named
    /// after it, as a culprit's ScratchDir does, and is killed with SIGKILL. While it lives its directory is kept;
    /// once it is dead the next clean-up removes the directory and nothing else. (Before, nothing ever removed such
    /// a directory: two from killed runs were in this machine's /tmp, hours old.)
    #[test]
    fn scratch_dirs_of_killed_processes_are_removed_by_the_next_clean_up() {
        use std::os::unix::process::ExitStatusExt;
        let base = tempfile::tempdir().unwrap();
        let holder_dir = base.path().join("being-locked");
        fs::create_dir(&holder_dir).unwrap();
        fs::write(holder_dir.join("perf.data"), b"recorded").unwrap();
        let mut holder = Command::new("flock")
            .args(["-o", &holder_dir.to_string_lossy(), "sleep", "3600"])
            .process_group(0)
            .spawn()
            .expect("flock (util-linux) runs");
        let pid = holder.id();
        let deadline = Instant::now() + Duration::from_secs(30);
        while lock_dir(&holder_dir).unwrap().is_some() {
            assert!(Instant::now() < deadline, "flock never took the lock");
            std::thread::sleep(Duration::from_millis(10));
        }
        // The lock moves with the directory: name it as perf-profile's scratch directory of that process.
        let killed = base.path().join(format!("culprit-perf-profile-{pid}-0"));
        fs::rename(&holder_dir, &killed).unwrap();
        assert!(lock_dir(&killed).unwrap().is_none(), "still locked under its new name");
        // What must stay: this process's own directory, unlocked (its pid runs); names that are not a perf scratch
        // directory's; a plain file with such a name.
        let own = base.path().join(format!("culprit-perf-stat-{}-7", std::process::id()));
        let others = ["culprit-perf-stat-12x-0", "culprit-fio-1-0", "culprit-perf-stat-1", "perf-stat-1-0"];
        for dir in std::iter::once(own.clone()).chain(others.iter().map(|name| base.path().join(name))) {
            fs::create_dir(&dir).unwrap();
        }
        let file = base.path().join("culprit-perf-stat-1-0");
        fs::write(&file, b"").unwrap();

        assert_eq!(remove_stale_scratch_dirs(base.path()), Vec::<PathBuf>::new(), "its process is alive");
        // SAFETY: kill(2) of the process group this test started.
        unsafe {
            libc::kill(-(pid as libc::pid_t), libc::SIGKILL);
        }
        assert_eq!(holder.wait().unwrap().signal(), Some(libc::SIGKILL));
        assert!(killed.join("perf.data").exists(), "kill -9 leaves the directory behind");
        assert_eq!(remove_stale_scratch_dirs(base.path()), vec![killed.clone()]);
        assert!(!killed.exists());
        assert!(own.is_dir() && file.is_file());
        assert!(others.iter().all(|name| base.path().join(name).is_dir()));
    }

    /// A directory whose pid is not a process here but whose lock is held (its culprit runs in another pid
    /// namespace sharing the temp dir) is in use and kept; a ScratchDir holds that lock, and its name is its own.
    #[test]
    fn a_locked_scratch_dir_is_kept_whatever_its_pid() {
        let base = tempfile::tempdir().unwrap();
        let mut gone = Command::new("true").spawn().unwrap();
        let gone_pid = gone.id();
        gone.wait().unwrap();
        let elsewhere = base.path().join(format!("culprit-perf-stat-{gone_pid}-0"));
        fs::create_dir(&elsewhere).unwrap();
        let lock = lock_dir(&elsewhere).unwrap().expect("unlocked");
        assert!(remove_stale_scratch_dirs(base.path()).is_empty());
        drop(lock);
        assert_eq!(remove_stale_scratch_dirs(base.path()), vec![elsewhere]);

        let scratch = ScratchDir::create_in(base.path(), "perf-profile").unwrap();
        let name = scratch.path().file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(scratch_owner(&name), Some(std::process::id()));
        assert!(lock_dir(scratch.path()).unwrap().is_none(), "a ScratchDir holds its lock");
        let path = scratch.path().to_path_buf();
        drop(scratch);
        assert!(!path.exists());
    }

    #[test]
    fn failure_advice_names_the_fix() {
        let paranoid = perf_failure("`perf stat -a` failed", PARANOID_MESSAGE);
        assert!(paranoid.contains("perf_event_paranoid setting is 4"), "keeps perf's message: {paranoid}");
        assert!(paranoid.contains("sysctl kernel.perf_event_paranoid=-1"), "{paranoid}");
        // One line, the one the console shows of a monitor's failure (QA 46: it showed perf's first line, "Error:").
        assert!(!paranoid.contains('\n'), "{paranoid}");
        let reason = "failed: Access to performance monitoring and observability operations is limited. Consider";
        assert!(paranoid.contains(reason), "{paranoid}");
        let syntax = perf_failure("`perf stat` failed", "event syntax error: 'bogus'\n  \\___ parser error");
        assert!(syntax.contains("perf list"), "{syntax}");
        assert!(syntax.contains("event syntax error: 'bogus'"), "{syntax}");
    }

    #[test]
    fn counted_events_skip_unsupported_ones() {
        // A real `perf stat -a -x , -e cycles,instructions,cpu-clock -- true` on this machine (no hardware counters).
        let csv = "<not supported>,,cycles,0,100.00,,\n<not supported>,,instructions,0,100.00,,\n\
                   1.92,msec,cpu-clock,1916040,100.00,2.012,CPUs utilized\n";
        assert_eq!(counted_events(csv, &["cycles", "instructions", "cpu-clock"]), vec!["cpu-clock".to_string()]);
        let hybrid = "100,,cpu_core/cycles/,5,100.00,,\n90,,cpu_atom/cycles/,5,100.00,,\n";
        assert_eq!(counted_events(hybrid, &["cycles"]), vec!["cycles".to_string()]);
        assert!(counted_events("garbage\n,,\n", &["cycles"]).is_empty());
    }

    #[test]
    fn interval_is_clamped_to_what_perf_accepts() {
        for (secs, ms) in [(1.0, 1000), (0.25, 250), (0.001, 10), (0.0, 10), (-1.0, 10), (f64::NAN, 10), (2.0004, 2000)] {
            assert_eq!(interval_ms(secs), ms, "{secs}");
        }
    }

    #[test]
    fn missing_perf_names_the_package() {
        let mut monitor = PerfStat::new(1.0).with_perf("/nonexistent/perf");
        match monitor.start() {
            Err(MonitorError::MissingProgram { program, package, detail, .. }) => {
                assert_eq!(program, "perf");
                assert_eq!(package, "linux-perf");
                assert!(detail.contains("apt-get install linux-perf"), "{detail}");
            }
            other => panic!("expected MissingProgram, got {other:?}"),
        }
        assert!(monitor.finish().is_err(), "finish without a start is an error, not a panic");
    }

    #[test]
    fn check_finds_missing_perf_without_starting() {
        let monitor = PerfStat::new(1.0).with_perf("/nonexistent/perf");
        assert!(matches!(monitor.check(), Err(MonitorError::MissingProgram { package: "linux-perf", .. })));
    }

    /// A run shorter than perf's interval: perf at 1 s, stopped after 0.3 s, prints only its final, partial
    /// interval. The run keeps its counts (it had none: the parser refused a log without a complete interval).
    #[test]
    fn a_run_shorter_than_one_interval_keeps_its_counts_for_real() {
        if !perf_installed() {
            return;
        }
        let mut monitor = PerfStat::new(1.0);
        monitor.start().expect("perf stat starts");
        let until = Instant::now() + Duration::from_millis(300);
        let mut spins: u64 = 0;
        while Instant::now() < until {
            spins = spins.wrapping_add(1);
        }
        let out = monitor.finish().expect("perf stat output parses");
        assert_eq!(out.series.times.len(), 1, "the one partial interval: {:?}", out.series.times);
        let length = out.series.times.first().copied().unwrap_or(0.0);
        assert!(length > 0.0 && length < 1.0, "the interval ends when perf was stopped: {length}");
        let ps = out.metrics.get("perf-stat.ps.cpu-clock").copied().expect("ps.cpu-clock");
        assert_eq!(out.metrics.get("perf-stat.i.cpu-clock"), Some(&ps), "one interval: its rate is the run's");
        // This thread spun through the interval: at least one CPU's worth, less than this machine's CPUs.
        assert!(ps > 500.0, "{ps} CPU ms per second");
        assert!(out.metrics.contains_key("perf-stat.ps.context-switches"), "{:?}", out.metrics.keys());
        assert!(spins > 0);
    }

    /// A benchmark that ends at once (`true`): perf is stopped right after `start`. `start` returns once perf is in
    /// its loop, so the stop gets the interval perf counted; before, perf was mostly killed by the SIGINT with an
    /// empty log (23 times in 25 on this machine), and the run failed the monitor.
    #[test]
    fn a_stop_right_after_start_still_gets_what_perf_counted_for_real() {
        if !perf_installed() {
            return;
        }
        for _ in 0..3 {
            let mut monitor = PerfStat::new(1.0);
            monitor.start().expect("perf stat starts");
            let out = monitor.finish().expect("perf printed its interval");
            assert_eq!(out.series.times.len(), 1, "{:?}", out.series.times);
            assert!(out.metrics.contains_key("perf-stat.ps.cpu-clock"), "{:?}", out.metrics.keys());
        }
    }

    /// Spins this thread for `length`, calling the monitor's `sample` as a run does, which must not fail.
    fn spin_with_samples(monitor: &mut dyn Monitor, length: Duration) {
        let until = Instant::now() + length;
        let mut spins: u64 = 0;
        while Instant::now() < until {
            spins = spins.wrapping_add(1);
            if spins & 0xF_FFFF == 0 {
                monitor.sample(0.0).expect("perf is running or has ended with its window");
            }
        }
    }

    /// lkp's `delay: 1` and `duration: 1` at 0.5 s intervals over a 3 s run: perf counts from 1 s to 2 s, ends
    /// by itself (which `sample` does not take for a failure), and the series keeps the run's times.
    #[test]
    fn a_window_counts_only_its_part_of_the_run_for_real() {
        if !perf_installed() {
            return;
        }
        let window = Window { delay_secs: 1, duration_secs: Some(1) };
        let mut monitor = PerfStat::new(0.5).with_window(window);
        monitor.start().expect("perf stat starts");
        spin_with_samples(&mut monitor, Duration::from_millis(3000));
        let out = monitor.finish().expect("perf stat output parses");
        let times = &out.series.times;
        // One or two 0.5 s intervals from 1 s on (the parser drops the last interval, which perf may cut short,
        // as lkp's does).
        assert!((1..=2).contains(&times.len()), "{times:?}");
        assert!(times.first().is_some_and(|t| (1.45..1.7).contains(t)), "the first ends 1.5 s in: {times:?}");
        // perf's own clock, from when it started counting: it stopped when the window closed, 1 s later, not
        // when the run ended 2 s later.
        let log = String::from_utf8_lossy(&out.raw[0].content).into_owned();
        let last = log.lines().skip(1).filter_map(|line| line.split(',').next()?.trim().parse::<f64>().ok());
        assert!(last.fold(0.0, f64::max) < 1.3, "{log}");
        assert!(log.lines().next().is_some_and(|l| l.ends_with(" -D 1000 -- sleep 2")), "{log}");
        assert!(out.metrics.get("perf-stat.ps.cpu-clock").is_some_and(|ms| *ms > 500.0), "{:?}", out.metrics);
    }

    /// lkp's `per_socket` and `per_die` go to perf as `--per-socket` and `--per-die`, before the window's `-D`.
    #[test]
    fn lkps_split_by_socket_and_die_is_perfs() {
        let window = Window { delay_secs: 2, duration_secs: Some(3) };
        let monitor = PerfStat::new(1.0).with_split(true, false).with_window(window);
        let args = monitor.stat_args("cs", 1000).join(" ");
        assert_eq!(args, "stat -a --scale -I 1000 -x , -e cs --log-fd 1 --per-socket -D 2000 -- sleep 5");
        let both = PerfStat::new(1.0).with_split(true, true).stat_args("cs", 500).join(" ");
        assert!(both.ends_with("--log-fd 1 --per-socket --per-die"), "{both}");
    }

    /// A socket's counts are stored beside the machine's: one socket here, so the two agree.
    #[test]
    fn counts_per_socket_for_real() {
        if !perf_installed() {
            return;
        }
        let mut monitor = PerfStat::new(0.5).with_split(true, false);
        monitor.start().expect("perf stat starts");
        spin_with_samples(&mut monitor, Duration::from_millis(1200));
        let out = monitor.finish().expect("perf stat output parses");
        let machine = out.metrics.get("perf-stat.ps.cpu-clock").copied();
        let socket = out.metrics.get("perf-stat.ps.S0.cpu-clock").copied();
        assert!(machine.is_some() && machine == socket, "{:?}", out.metrics.keys().collect::<Vec<_>>());
    }

    /// A run that ends inside the delay leaves perf nothing; the failure says why.
    #[test]
    fn a_run_shorter_than_the_delay_is_told_so_for_real() {
        if !perf_installed() {
            return;
        }
        let mut monitor = PerfStat::new(0.5).with_window(Window { delay_secs: 5, duration_secs: None });
        monitor.start().expect("perf stat starts");
        std::thread::sleep(Duration::from_millis(300));
        let error = monitor.finish().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.contains("counting starts 5 s into the run (the job's delay)"), "{error}");
    }

    #[test]
    fn counts_software_events_system_wide_for_real() {
        if !perf_installed() {
            return;
        }
        let mut monitor = PerfStat::new(0.5);
        monitor.start().expect("perf stat starts");
        // Keep one CPU busy for ~3 s so cpu-clock has something to count. perf itself may take a second to start
        // on a loaded machine, so the span leaves room for several 0.5 s intervals beyond that.
        let until = Instant::now() + Duration::from_millis(3000);
        let mut spins: u64 = 0;
        while Instant::now() < until {
            spins = spins.wrapping_add(1);
            if spins & 0xF_FFFF == 0 {
                monitor.sample(0.0).expect("perf is still running");
            }
        }
        let out = monitor.finish().expect("perf stat output parses");
        assert_eq!(out.series.monitor, "perf-stat");
        assert!(out.series.times.len() >= 2, "at least two complete 0.5 s intervals: {:?}", out.series.times);
        let cpu_clock = out.series.series.get("i.cpu-clock").expect("cpu-clock series");
        assert_eq!(cpu_clock.len(), out.series.times.len());
        // One spinning CPU gives at least ~1000 CPU ms per second system-wide, two CPUs at most ~2000 each.
        assert!(cpu_clock.iter().all(|ms_per_s| *ms_per_s > 500.0), "{cpu_clock:?}");
        for key in ["perf-stat.ps.cpu-clock", "perf-stat.i.cpu-clock", "perf-stat.ps.context-switches"] {
            assert!(out.metrics.contains_key(key), "missing {key} in {:?}", out.metrics.keys());
        }
        let raw = out.raw.first().expect("the perf-stat log is kept");
        assert_eq!(raw.name, "perf-stat");
        let log = String::from_utf8_lossy(&raw.content);
        assert!(log.lines().next().is_some_and(|l| l.contains(" stat -a --scale -I 500 -x , -e ")), "{log}");
        assert!(monitor.finish().is_err(), "a second finish is an error, not a panic");
    }

    #[test]
    fn listed_events_read_names_and_aliases() {
        // Lines of `perf list --no-desc cs` and `perf list --no-desc hw` (perf 6.1), and a heading perf prints.
        let listing = "\n  context-switches OR cs                             [Software event]\n\
                       \x20 csd:csd_function_entry                             [Tracepoint event]\n\
                       \x20 cpu-cycles OR cycles                               [Hardware event]\n\
                       List of pre-defined events (to be used in -e or -M):\n";
        let names = listed_events(listing);
        assert_eq!(
            names,
            vec![
                vec!["context-switches".to_string(), "cs".to_string()],
                vec!["csd:csd_function_entry".to_string()],
                vec!["cpu-cycles".to_string(), "cycles".to_string()],
            ]
        );
    }

    #[test]
    fn a_jobs_own_events_are_counted_for_real() {
        if !perf_installed() {
            return;
        }
        // `cs` is an alias, counted under its first name; `sched:sched_switch` a tracepoint, which VMs have too.
        let named = EventChoice::Named(vec!["cs".to_string(), "sched:sched_switch".to_string()]);
        let mut monitor = PerfStat::new(0.2).with_events(named);
        monitor.check().expect("both events are countable here");
        monitor.start().expect("perf stat starts");
        // Sleeping switches context; the span leaves room for perf's start on a loaded machine.
        let until = Instant::now() + Duration::from_millis(2000);
        while Instant::now() < until {
            std::thread::sleep(Duration::from_millis(2));
        }
        let out = monitor.finish().expect("perf stat output parses");
        for key in ["perf-stat.ps.context-switches", "perf-stat.ps.sched:sched_switch"] {
            assert!(out.metrics.get(key).is_some_and(|rate| *rate > 0.0), "{key} in {:?}", out.metrics);
        }
        assert!(!out.metrics.contains_key("perf-stat.ps.cpu-clock"), "only the job's events: {:?}", out.metrics);
        let log = String::from_utf8_lossy(&out.raw[0].content).into_owned();
        assert!(log.lines().next().is_some_and(|l| l.contains(" -e context-switches,sched:sched_switch ")), "{log}");
    }

    #[test]
    fn events_the_machine_does_not_have_stop_the_job_before_its_first_run() {
        if !perf_installed() {
            return;
        }
        let named = PerfStat::new(1.0).with_events(EventChoice::Named(vec!["no_such_event_anywhere".to_string()]));
        let error = named.check().expect_err("no such event").to_string();
        assert!(error.contains("events: 'no_such_event_anywhere' is no event or filter"), "{error}");
        let raw = PerfStat::new(1.0).with_events(EventChoice::Raw("no_such_event_anywhere".to_string()));
        let error = raw.check().expect_err("perf refuses it").to_string();
        assert!(error.contains("revents: `") && error.contains("no_such_event_anywhere"), "{error}");
        // A filter that lists thousands of events would open a counter for each on every CPU.
        let wide = PerfStat::new(1.0).with_events(EventChoice::Named(vec!["tracepoint".to_string()]));
        let error = wide.check().expect_err("too many events").to_string();
        assert!(error.contains("more than the 256"), "{error}");
    }
}
