//! The result model shared by every crate: revisions, machines, runs and their metrics.
//!
//! A *run* is one execution of one atomic job on one revision of the code on one machine. It carries the scalar
//! metrics of that execution (`fio.write_iops`, `vmstat.cpu.id`, ...), the per-interval monitor series they were
//! reduced from, and the raw outputs the metrics were parsed from, so a parser fix can re-derive metrics later.

use crate::words::counted;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// What code a run measured: a git commit, or a free-form label for runs that differ by configuration
/// (a sysctl, a cgroup on or off) rather than by code.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Revision {
    Commit {
        /// The full 40-hex SHA.
        sha: String,
        /// `git describe --always --tags` at run time, for humans.
        describe: Option<String>,
        /// The commit's subject line.
        subject: Option<String>,
    },
    Label { name: String },
}

impl Revision {
    /// The key under which results of this revision meet: the full SHA or the label.
    pub fn key(&self) -> &str {
        match self {
            Revision::Commit { sha, .. } => sha,
            Revision::Label { name } => name,
        }
    }

    /// The short form shown in tables: 10 hex digits for commits as lkp does, the label otherwise.
    pub fn short(&self) -> &str {
        match self {
            Revision::Commit { sha, .. } => abbreviate(sha, 10),
            Revision::Label { name } => name,
        }
    }
}

/// Whether `label` is a full git object name (40 hex digits, or SHA-256's 64) rather than a label.
pub fn is_full_sha(label: &str) -> bool {
    matches!(label.len(), 40 | 64) && label.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A commit as the robot's tables name it: 10 hex digits of a full SHA (lkp's column headers and `git describe`'s
/// width there); any other label whole.
pub fn table_short(label: &str) -> &str {
    if is_full_sha(label) {
        abbreviate(label, 10)
    } else {
        label
    }
}

/// A commit as a sentence or a file name names it: 12 hex digits of a full SHA, the kernel's `Fixes:` width
/// (`core.abbrev = 12` in Documentation/process/submitting-patches.rst), unique in a repository the size of the
/// kernel's; any other label whole.
pub fn prose_short(label: &str) -> &str {
    if is_full_sha(label) {
        abbreviate(label, 12)
    } else {
        label
    }
}

/// The first `max_chars` characters of `text`: a SHA's abbreviation, never cutting a character in two (a revision
/// key read from an imported result root can be any text).
pub fn abbreviate(text: &str, max_chars: usize) -> &str {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

/// The machine a run happened on, as the robot prints it in "on test machine:".
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Machine {
    pub hostname: String,
    pub cpu_model: String,
    pub nr_cpu: u32,
    pub memory_kib: u64,
    /// `uname -r` of the kernel the run executed on.
    pub kernel: String,
    /// The CPU sockets (physical packages) of the CPUs the run could use, which the robot's machine line prints
    /// ("2 threads 1 socket"); an imported lkp run's, its host file's `nr_node`. 0 where not recorded (runs stored
    /// before schema version 10, imported runs without `nr_node`, a kernel that gives no CPU topology). Left out of
    /// the JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sockets: u32,
}

/// Whether a count is the 0 that stands for "not recorded".
fn is_zero(count: &u32) -> bool {
    *count == 0
}

/// What lkp's host file (`hosts/<box>`, which the robot merges into a job.yaml) says of a test box beyond Culprit's
/// machine facts: its sockets (`nr_node`) and the CPU's model name (`model: Ice Lake`). The robot's machine line
/// prints both, `96 threads 2 sockets Ice Lake with 256G memory`; Culprit's facts have neither, so a run imported
/// with such a job.yaml read `128 threads Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz with 256G memory` (QA 47 D9).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HostFacts {
    /// `nr_node` of the host file, which lkp's mails print as sockets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sockets: Option<u32>,
    /// `model` of the host file, the CPU's family name (`Ice Lake`, `Cascade Lake`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl HostFacts {
    /// Whether the host file said nothing the machine line uses.
    pub fn is_empty(&self) -> bool {
        self.sockets.is_none() && self.model.as_deref().is_none_or(|m| m.trim().is_empty())
    }
}

impl Machine {
    /// The socket count when one was recorded (`sockets` is 0 where none was).
    pub fn recorded_sockets(&self) -> Option<u32> {
        (self.sockets > 0).then_some(self.sockets)
    }

    /// The robot's wording, e.g. `2 threads QEMU Virtual CPU with 24G memory`.
    pub fn describe(&self) -> String {
        self.describe_with(&HostFacts::default())
    }

    /// The robot's wording with what an lkp host file adds, as its mails since 2022 have it: `96 threads 2 sockets
    /// Ice Lake with 256G memory`. The model name replaces the CPU's brand string (the 2021 mails printed the brand,
    /// `2 sockets Intel(R) Xeon(R) Gold 6252 CPU @ 2.10GHz`, which is still printed when the host file names no
    /// model); sockets are left out when unknown rather than guessed. The host file's sockets come before the
    /// machine's own (an imported run records none; the host file describes the box).
    pub fn describe_with(&self, host: &HostFacts) -> String {
        let gib = (self.memory_kib as f64 / (1024.0 * 1024.0)).round() as u64;
        // A machine known only in part (an imported lkp run whose job.yaml names no brand or memory) says what is
        // known, not "96 threads  with 0G memory"; one known by name alone (an imported root without job.yaml) is
        // named, where the mail said "0 threads".
        let mut known = Vec::new();
        if self.nr_cpu > 0 {
            known.push(counted(self.nr_cpu, "thread"));
        }
        if let Some(sockets) = host.sockets.filter(|&n| n > 0).or(self.recorded_sockets()) {
            known.push(counted(sockets, "socket"));
        }
        let model = host.model.as_deref().map(str::trim).filter(|m| !m.is_empty()).unwrap_or(self.cpu_model.trim());
        if !model.is_empty() {
            known.push(model.to_string());
        }
        if self.memory_kib > 0 {
            known.push(format!("{}{gib}G memory", if known.is_empty() { "" } else { "with " }));
        }
        match known.is_empty() {
            true => format!("{} (its CPUs and memory were not recorded)", self.hostname),
            false => known.join(" "),
        }
    }

    /// The machine facts in which the runs of a comparison differ, each side named by its label and given the
    /// machines of all its runs, as a sentence: "base ran with 2 CPUs, pin1 with 1". `nr_cpu` is the CPUs a run
    /// could use (its affinity mask), so a side run under `taskset` or in a smaller cpuset differs in it. A side whose
    /// own runs differ lists its values in run order and says so: "base ran with 2 and 1 CPUs (its runs differ), pin1
    /// with 1". None when every run agrees; a fact a run did not record (0 or empty, an imported run) is no
    /// difference.
    pub fn differences(sides: &[(&str, Vec<&Machine>)]) -> Option<String> {
        // Each fact: its value when recorded, and how the first side and the others say it, around the value.
        type Fact = (fn(&Machine) -> Option<String>, [&'static str; 2], [&'static str; 2]);
        let facts: [Fact; 5] = [
            (|m| (m.nr_cpu > 0).then(|| m.nr_cpu.to_string()), ["ran with ", " CPUs"], ["with ", ""]),
            // The same CPU count on one socket or across two is a different machine for memory-bound work.
            (|m| m.recorded_sockets().map(|n| n.to_string()), ["ran on ", " sockets"], ["on ", ""]),
            (
                |m| (m.memory_kib > 0).then(|| format!("{}", (m.memory_kib as f64 / (1024.0 * 1024.0)).round())),
                ["had ", "G memory"],
                ["", "G"],
            ),
            (|m| Some(m.kernel.trim().to_string()).filter(|k| !k.is_empty()), ["ran kernel ", ""], ["", ""]),
            (|m| Some(m.cpu_model.trim().to_string()).filter(|c| !c.is_empty()), ["ran on ", ""], ["on ", ""]),
        ];
        let mut said = Vec::new();
        for (value, [first_before, first_after], [other_before, other_after]) in facts {
            let values: Vec<(&str, Vec<String>)> = sides
                .iter()
                .map(|(label, machines)| (*label, distinct(machines.iter().filter_map(|m| value(m)))))
                .filter(|(_, distinct)| !distinct.is_empty())
                .collect();
            let say = |i: usize, label: &str, v: &str| match i {
                0 => format!("{label} {first_before}{v}{first_after}"),
                _ => format!("{label} {other_before}{v}{other_after}"),
            };
            if let Some(part) = side_values_sentence(&values, say) {
                said.push(part);
            }
        }
        (!said.is_empty()).then(|| said.join("; "))
    }
}

/// The distinct `values` in the order they first come.
fn distinct(values: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for value in values {
        if !seen.contains(&value) {
            seen.push(value);
        }
    }
    seen
}

/// How the sides' distinct values of one fact or quantity differ, each side said by `say` (its position, its label
/// and its values joined: "a ran with 2 CPUs", "b with 1"); a side with several values lists them and says its runs
/// differ. None when every side has one value, the same.
fn side_values_sentence(values: &[(&str, Vec<String>)], say: impl Fn(usize, &str, &str) -> String) -> Option<String> {
    let one = values.first().map(|(_, v)| v.clone()).unwrap_or_default();
    if values.iter().all(|(_, v)| v.len() == 1 && *v == one) {
        return None;
    }
    let parts: Vec<String> = values
        .iter()
        .enumerate()
        .map(|(i, (label, v))| {
            let mixed = if v.len() > 1 { " (its runs differ)" } else { "" };
            format!("{}{mixed}", say(i, label, &v.join(" and ")))
        })
        .collect();
    Some(parts.join(", "))
}

/// A run's workload quantities that its machine resolved, by name (`hackbench.tasks`, 80).
pub type WorkloadQuantities = [(String, u64)];

/// The workload quantities in which the runs of a comparison differ (hackbench's tasks where a share of the CPUs
/// resolved to another count), each side named by its label and given every run's quantities by name, as a sentence:
/// "hackbench.tasks 40 at p, 80 at q". A side whose own runs differ lists its values in run order and says so. None
/// when every run agrees; a quantity only some runs have is compared among those.
pub fn workload_differences(sides: &[(&str, Vec<&WorkloadQuantities>)]) -> Option<String> {
    let mut names: Vec<&str> = Vec::new();
    for (_, runs) in sides {
        for (name, _) in runs.iter().flat_map(|run| run.iter()) {
            if !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
    }
    let mut said = Vec::new();
    for name in names {
        let values: Vec<(&str, Vec<String>)> = sides
            .iter()
            .map(|(label, runs)| {
                let of_name = runs.iter().flat_map(|run| run.iter()).filter(|(n, _)| n == name);
                (*label, distinct(of_name.map(|(_, value)| value.to_string())))
            })
            .filter(|(_, distinct)| !distinct.is_empty())
            .collect();
        // "tasks 40 at p, 80 at q": the value first, then the side, as the filesystems' sentence reads.
        if let Some(parts) = side_values_sentence(&values, |_, label, v| format!("{v} at {label}")) {
            said.push(format!("{name} {parts}"));
        }
    }
    (!said.is_empty()).then(|| said.join("; "))
}

/// The filesystem a run's benchmark files were on: the run's scratch directory (`culprit run --scratch`) and the
/// mount holding it, as `/proc/self/mountinfo` named it when the run started. An I/O benchmark measures this
/// filesystem as much as the kernel: fio's write IOPS rose 1688% between runs on ext4 and on tmpfs, and nothing
/// recorded said so (QA 46). Runs stored before it was recorded, and imported runs whose job.yaml names no `fs`, have
/// none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScratchFilesystem {
    /// The scratch directory the run's own directory was made under, canonical (what `--scratch` takes), or for a
    /// `command` job the working directory it ran in; empty when unknown (an imported run's job.yaml names the
    /// filesystem only).
    pub path: String,
    /// The filesystem's type as the kernel names it: `ext4`, `tmpfs`, `xfs`, `btrfs`, `overlay`.
    pub fs_type: String,
    /// The mount's source: a device (`/dev/vda1`), a server's export (`server:/export`), or a name (`tmpfs`).
    pub source: String,
}

impl ScratchFilesystem {
    /// The filesystem as a sentence names it: `ext4 (/dev/vda1)`, `ext4 (2pmem)` (an imported lkp run's disk), or
    /// `tmpfs` alone. The source of a filesystem in memory (tmpfs, ramfs, overlay) is a free name (`shm`,
    /// `overlay`) that says nothing of where the files were, and is left out, as is one that repeats the type.
    pub fn describe(&self) -> String {
        let fs_type = if self.fs_type.trim().is_empty() { "an unknown filesystem" } else { self.fs_type.trim() };
        let source = self.source.trim();
        let free_name = matches!(fs_type, "tmpfs" | "ramfs" | "overlay" | "devtmpfs");
        match free_name || source.is_empty() || source == "none" || source == fs_type {
            true => fs_type.to_string(),
            false => format!("{fs_type} ({source})"),
        }
    }

    /// Whether `other` is the same filesystem: the same type on the same source (a directory elsewhere on it is).
    pub fn same_filesystem(&self, other: &ScratchFilesystem) -> bool {
        self.fs_type == other.fs_type && self.source == other.source
    }

    /// The filesystems the sides of a comparison had their benchmark files on, when they differ, each side named
    /// by its label and given the distinct filesystems of its runs: "the benchmark's files were on ext4 (/dev/vda1)
    /// at base, on tmpfs at shm". None when the sides agree; a side none of whose runs recorded one (stored before
    /// it was, or imported) is no difference, as a machine fact a side did not record is none
    /// ([`Machine::differences`]).
    pub fn differences(sides: &[(&str, Vec<&ScratchFilesystem>)]) -> Option<String> {
        let mut recorded: Vec<(&str, Vec<&ScratchFilesystem>)> = Vec::new();
        for (label, filesystems) in sides {
            let mut distinct: Vec<&ScratchFilesystem> = Vec::new();
            for filesystem in filesystems {
                if !distinct.iter().any(|seen| seen.same_filesystem(filesystem)) {
                    distinct.push(filesystem);
                }
            }
            if !distinct.is_empty() {
                recorded.push((label, distinct));
            }
        }
        let same_as_first = |distinct: &Vec<&ScratchFilesystem>| {
            let first = &recorded[0].1;
            distinct.len() == first.len() && distinct.iter().all(|f| first.iter().any(|g| g.same_filesystem(f)))
        };
        // One filesystem at every side is the same setup; a side whose own runs were on several is not.
        if recorded.iter().all(|(_, distinct)| distinct.len() == 1 && same_as_first(distinct)) {
            return None;
        }
        let parts: Vec<String> = recorded
            .iter()
            .map(|(label, distinct)| {
                let named: Vec<String> = distinct.iter().map(|f| f.describe()).collect();
                format!("on {} at {label}", crate::report::and_list(&named))
            })
            .collect();
        Some(format!("the benchmark's files were {}", parts.join(", ")))
    }
}

/// How a run ended. A failed run is stored, never dropped: its reason and stderr are evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RunOutcome {
    Ok,
    /// `reason` is a message for people, printed as the run fails, listed by `culprit results --failures` and
    /// quoted in mails; made with [`RunOutcome::failed`], and stored, each NUL in it is shown as [`NUL_SHOWN_AS`].
    Failed { reason: String },
}

impl RunOutcome {
    pub fn is_ok(&self) -> bool {
        matches!(self, RunOutcome::Ok)
    }

    /// A failed outcome whose reason shows each NUL as [`NUL_SHOWN_AS`]. A reason quotes the last line a crashing
    /// program wrote, which can be binary garbage; a NUL in it prints as nothing on a terminal and cuts the text short
    /// for readers that take it as C's end of string, so the reader would not see that the program wrote one.
    pub fn failed(reason: impl Into<String>) -> RunOutcome {
        let reason = reason.into();
        let reason = if reason.contains('\0') { nul_shown(&reason).into_owned() } else { reason };
        RunOutcome::Failed { reason }
    }
}

/// What a NUL of a message for people is shown as: U+2400 SYMBOL FOR NULL, one character (so shortening a quoted
/// line counts the same), that says which byte was there, where `\0` could be two characters the program printed.
pub const NUL_SHOWN_AS: char = '\u{2400}';

/// `text` with each NUL shown as [`NUL_SHOWN_AS`], borrowed when it holds none (nearly always).
pub fn nul_shown(text: &str) -> Cow<'_, str> {
    match text.contains('\0') {
        true => Cow::Owned(text.replace('\0', &NUL_SHOWN_AS.to_string())),
        false => Cow::Borrowed(text),
    }
}

/// One monitor's per-interval samples during a run: `series["cpu.id"] = [97.0, 96.5, ...]`, with the sample
/// times in seconds since the run started.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MonitorSeries {
    pub monitor: String,
    pub times: Vec<f64>,
    pub series: BTreeMap<String, Vec<f64>>,
}

/// A raw output kept with the run (benchmark stdout, a fio JSON, a perf report), by file name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RawOutput {
    pub name: String,
    pub content: Vec<u8>,
}

/// Everything recorded about one run, ready to be stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The stable id of the atomic job (hash of its normalized params).
    pub job_id: String,
    /// The job's name, e.g. `fio-basic-4k-randwrite`.
    pub job_name: String,
    /// lkp's testcase (the suite), e.g. `fio-basic`.
    pub testcase: String,
    /// The atomic job's params, flattened to `key: value` strings in the job's order.
    pub params: Vec<(String, String)>,
    /// The atomic job as YAML text, so a result can always be reproduced.
    pub job_yaml: String,
    pub revision: Revision,
    pub machine: Machine,
    /// Seconds since the Unix epoch.
    pub started_at: f64,
    pub ended_at: f64,
    pub outcome: RunOutcome,
    pub exit_code: Option<i32>,
    /// Scalar metrics of the run: program metrics and per-run monitor reductions.
    pub metrics: BTreeMap<String, f64>,
    pub monitors: Vec<MonitorSeries>,
    pub raw_outputs: Vec<RawOutput>,
    pub stderr: String,
    /// The filesystem the benchmark's files were on; `None` when not recorded (records serialized before it was
    /// read as such).
    #[serde(default)]
    pub scratch: Option<ScratchFilesystem>,
}

/// How a metric name sorts in tables: the test program's metrics first, then monitors, perf-profile last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum MetricClass {
    Program,
    Monitor,
    Profile,
}

/// The monitors whose metric prefixes mark a metric as a monitor metric rather than a program's: Culprit's own
/// (`proc-vmstat.` among them: without it, a run's page counters were program metrics, which a report's headline
/// and a bisect's choice of metric take first, so a fio report led with "a 28.8% change of
/// proc-vmstat.nr_active_anon") and those of lkp's monitors an imported result root holds (`slabinfo.`,
/// `sched_debug.`, `numa-vmstat.`, ...).
pub const MONITOR_PREFIXES: &[&str] = &[
    "vmstat.", "proc-stat.", "proc-vmstat.", "meminfo.", "interrupts.", "softirqs.", "diskstats.", "perf-stat.",
    "mpstat.", "time.", "procs.", "system.", "cpu.", "numa-vmstat.", "numa-meminfo.", "numa-numastat.",
    "slabinfo.", "sched_debug.", "schedstat.", "iostat.", "max_iostat.", "turbostat.", "cpuidle.", "latency_stats.",
    "lock_stat.", "buddyinfo.", "pagetypeinfo.", "zoneinfo.", "pmeter.", "energy.", "perf-sched.", "perf-c2c.",
    "netstat.", "nfsstat.", "mountstats.", "uptime.", "boot-time.",
];

/// The time monitor's field of `metric` (`user_time` of `stress-ng.time.user_time`), or `None` for any other metric.
///
/// lkp times every benchmark program with GNU `time -v` into `$TMP/<program>.time` (its `bin/run-test`) and parses
/// that file as the stats named after it, so its stats, and every robot mail, name these rows
/// `<program>.time.<field>`: `fio.time.user_time`, `stress-ng.time.elapsed_time`. They are the time monitor's rows,
/// not the program's own metrics (lkp's `kpi_stat?` leaves them out as well), and Culprit names its own runs' rows
/// the same way. The bare `time.<field>` that Culprit stored before is read too: a store gives old runs lkp's
/// names (culprit-store's `packed::lkp_time_names`), but a plain series or an old JSON file may still carry them.
pub fn time_field(metric: &str) -> Option<&str> {
    if let Some(field) = metric.strip_prefix("time.") {
        return Some(field).filter(|f| !f.is_empty());
    }
    let (program, rest) = metric.split_once('.')?;
    // A monitor's or perf-profile's key with a `time.` part (none is known) is not the time monitor's.
    let monitor = program == "perf-profile" || MONITOR_PREFIXES.iter().any(|p| p.strip_suffix('.') == Some(program));
    if program.is_empty() || monitor {
        return None;
    }
    rest.strip_prefix("time.").filter(|f| !f.is_empty())
}

/// lkp's name of the time monitor's `field` for a run of `program`: `<program>.time.<field>` (see [`time_field`]).
pub fn time_metric(program: &str, field: &str) -> String {
    format!("{program}.time.{field}")
}

impl MetricClass {
    /// Whether `metric`, of this class, is the benchmark's own: a program metric, and not one of Culprit's
    /// bookkeeping rows (`culprit.failed_runs`), which are program metrics by name. What a report leads with, a
    /// bisect or try-fix judges without `--metric`, and a plot draws first. The class is an argument, not read from
    /// the name here, because table rows carry the class they were given.
    pub fn is_benchmarks_own(self, metric: &str) -> bool {
        self == MetricClass::Program && !metric.starts_with("culprit.")
    }

    pub fn of(metric: &str) -> MetricClass {
        if metric.starts_with("perf-profile.") {
            MetricClass::Profile
        } else if MONITOR_PREFIXES.iter().any(|p| metric.starts_with(p)) || time_field(metric).is_some() {
            MetricClass::Monitor
        } else {
            MetricClass::Program
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The robot's machine lines: seed 003's (2022, the host file's model name) and seed 001's (2021, the brand),
    /// each with the host file's sockets; without a host file, the machine facts alone.
    #[test]
    fn the_machine_line_adds_the_host_files_sockets_and_model_as_the_robot_does() {
        let box_of = |brand: &str| Machine {
            hostname: "lkp-icl-2sp1".into(),
            cpu_model: brand.into(),
            nr_cpu: 96,
            memory_kib: 256 * 1024 * 1024,
            kernel: String::new(),
            sockets: 0,
        };
        let ice_lake = box_of("Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz");
        let host = HostFacts { sockets: Some(2), model: Some("Ice Lake".into()) };
        assert_eq!(ice_lake.describe_with(&host), "96 threads 2 sockets Ice Lake with 256G memory");
        let cascade_lake = box_of("Intel(R) Xeon(R) Gold 6252 CPU @ 2.10GHz");
        assert_eq!(
            cascade_lake.describe_with(&HostFacts { sockets: Some(2), model: None }),
            "96 threads 2 sockets Intel(R) Xeon(R) Gold 6252 CPU @ 2.10GHz with 256G memory"
        );
        assert_eq!(ice_lake.describe(), "96 threads Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz with 256G memory");
        let one_socket = HostFacts { sockets: Some(1), model: None };
        assert!(ice_lake.describe_with(&one_socket).starts_with("96 threads 1 socket Intel"));
        // A blank model is none: the brand stays.
        let blank = HostFacts { sockets: None, model: Some("  ".into()) };
        assert!(blank.is_empty());
        assert_eq!(ice_lake.describe_with(&blank), ice_lake.describe());
        // Culprit's own runs record their sockets; a host file's, where there is one, describes the box.
        let counted = Machine { sockets: 1, ..ice_lake.clone() };
        assert!(counted.describe().starts_with("96 threads 1 socket Intel"), "{}", counted.describe());
        assert!(Machine { sockets: 2, ..ice_lake.clone() }.describe().starts_with("96 threads 2 sockets Intel"));
        let host_file = HostFacts { sockets: Some(2), model: None };
        assert!(counted.describe_with(&host_file).starts_with("96 threads 2 sockets"));
    }

    #[test]
    fn machine_differences_name_each_fact_the_sides_disagree_on() {
        let base = Machine {
            hostname: "vm".into(),
            cpu_model: "AMD EPYC".into(),
            nr_cpu: 2,
            memory_kib: 24 * 1024 * 1024,
            kernel: "6.1.0".into(),
            sockets: 0,
        };
        let same = base.clone();
        assert_eq!(Machine::differences(&[("a", vec![&base, &base]), ("b", vec![&same])]), None);
        let pinned = Machine { nr_cpu: 1, memory_kib: 16 * 1024 * 1024, kernel: "6.2.0".into(), ..base.clone() };
        assert_eq!(
            Machine::differences(&[("a", vec![&base]), ("b", vec![&pinned])]).as_deref(),
            Some("a ran with 2 CPUs, b with 1; a had 24G memory, b 16G; a ran kernel 6.1.0, b 6.2.0")
        );
        // A fact a side did not record (an imported run) is no difference.
        let unknown = Machine { nr_cpu: 0, cpu_model: String::new(), ..base.clone() };
        assert_eq!(Machine::differences(&[("a", vec![&base]), ("b", vec![&unknown])]), None);
        // Two CPUs of one socket are not two CPUs across two; a side that did not record its sockets is no
        // difference.
        let one_socket = Machine { sockets: 1, ..base.clone() };
        let two_sockets = Machine { sockets: 2, ..base.clone() };
        assert_eq!(
            Machine::differences(&[("a", vec![&one_socket]), ("b", vec![&two_sockets])]).as_deref(),
            Some("a ran on 1 sockets, b on 2")
        );
        assert_eq!(Machine::differences(&[("a", vec![&one_socket]), ("b", vec![&base])]), None);
    }

    #[test]
    fn machine_differences_read_every_run_of_a_side_and_say_when_a_sides_own_runs_differ() {
        let two = Machine { hostname: "vm".into(), nr_cpu: 2, kernel: "6.1.0".into(), ..Machine::default() };
        let one = Machine { nr_cpu: 1, ..two.clone() };
        // The latest run of each side agrees; an earlier run of b was pinned.
        assert_eq!(
            Machine::differences(&[("a", vec![&two, &two]), ("b", vec![&one, &two])]).as_deref(),
            Some("a ran with 2 CPUs, b with 1 and 2 (its runs differ)")
        );
        // Both sides alike, each of mixed runs, is still said: no side's runs are of one machine state.
        assert_eq!(
            Machine::differences(&[("a", vec![&two, &one]), ("b", vec![&two, &one])]).as_deref(),
            Some("a ran with 2 and 1 CPUs (its runs differ), b with 2 and 1 (its runs differ)")
        );
    }

    #[test]
    fn workload_differences_name_each_quantity_with_both_values() {
        let forty = [("hackbench.tasks".to_string(), 40), ("hackbench.nr_threads".to_string(), 1)];
        let eighty = [("hackbench.tasks".to_string(), 80), ("hackbench.nr_threads".to_string(), 2)];
        assert_eq!(
            workload_differences(&[("p", vec![&forty[..]]), ("q", vec![&eighty[..], &eighty[..]])]).as_deref(),
            Some("hackbench.tasks 40 at p, 80 at q; hackbench.nr_threads 1 at p, 2 at q")
        );
        assert_eq!(workload_differences(&[("p", vec![&forty[..]]), ("q", vec![&forty[..]])]), None);
        assert_eq!(
            workload_differences(&[("p", vec![&forty[..]]), ("q", vec![&forty[..], &eighty[..]])]).as_deref(),
            Some(
                "hackbench.tasks 40 at p, 40 and 80 at q (its runs differ); hackbench.nr_threads 1 at p, 1 and 2 at q \
                 (its runs differ)"
            )
        );
        // Runs without quantities (a job of a program Culprit does not run) say nothing.
        assert_eq!(workload_differences(&[("p", vec![&[][..]]), ("q", vec![&[][..]])]), None);
    }

    fn filesystem(fs_type: &str, source: &str, path: &str) -> ScratchFilesystem {
        ScratchFilesystem { path: path.into(), fs_type: fs_type.into(), source: source.into() }
    }

    #[test]
    fn filesystems_are_named_by_type_and_a_source_that_says_where() {
        let cases = [
            (filesystem("ext4", "/dev/vda1", "/tmp/x"), "ext4 (/dev/vda1)"),
            (filesystem("tmpfs", "tmpfs", "/dev/shm/x"), "tmpfs"),
            (filesystem("tmpfs", "shm", "/dev/shm/x"), "tmpfs"),
            (filesystem("overlay", "overlay", "/"), "overlay"),
            (filesystem("nfs4", "server:/export", "/mnt"), "nfs4 (server:/export)"),
            (filesystem("ext4", "2pmem", ""), "ext4 (2pmem)"),
            (filesystem("xfs", "", ""), "xfs"),
            (filesystem("", "", ""), "an unknown filesystem"),
        ];
        for (filesystem, expected) in cases {
            assert_eq!(filesystem.describe(), expected, "{filesystem:?}");
        }
    }

    #[test]
    fn filesystem_differences_name_each_sides_and_pass_over_unrecorded_sides() {
        let ext4 = filesystem("ext4", "/dev/vda1", "/tmp/culprit-scratch");
        let elsewhere_on_ext4 = filesystem("ext4", "/dev/vda1", "/home/me/scratch");
        let tmpfs = filesystem("tmpfs", "tmpfs", "/dev/shm/x");
        assert_eq!(ScratchFilesystem::differences(&[("a", vec![&ext4]), ("b", vec![&ext4, &ext4])]), None);
        // Another directory on the same filesystem is the same filesystem.
        assert_eq!(ScratchFilesystem::differences(&[("a", vec![&ext4]), ("b", vec![&elsewhere_on_ext4])]), None);
        assert_eq!(
            ScratchFilesystem::differences(&[("disk", vec![&ext4]), ("shm", vec![&tmpfs])]).as_deref(),
            Some("the benchmark's files were on ext4 (/dev/vda1) at disk, on tmpfs at shm")
        );
        // A side whose own runs were on two is a difference, even beside a side on one of them.
        assert_eq!(
            ScratchFilesystem::differences(&[("a", vec![&ext4]), ("b", vec![&ext4, &tmpfs])]).as_deref(),
            Some("the benchmark's files were on ext4 (/dev/vda1) at a, on ext4 (/dev/vda1) and tmpfs at b")
        );
        // A side that recorded none (an imported run) is no difference, and no side at all is none.
        assert_eq!(ScratchFilesystem::differences(&[("a", vec![&ext4]), ("b", Vec::new())]), None);
        assert_eq!(ScratchFilesystem::differences(&[]), None);
        let other_device = filesystem("ext4", "/dev/vdb1", "/mnt/x");
        assert!(ScratchFilesystem::differences(&[("a", vec![&ext4]), ("b", vec![&other_device])]).is_some());
    }

    #[test]
    fn the_benchmarks_own_metrics_are_its_program_metrics_but_culprits_rows() {
        assert!(MetricClass::Program.is_benchmarks_own("fio.write_iops"));
        assert!(MetricClass::of("command.elapsed_time").is_benchmarks_own("command.elapsed_time"));
        assert!(!MetricClass::of("culprit.failed_runs").is_benchmarks_own("culprit.failed_runs"));
        assert!(!MetricClass::of("meminfo.Active").is_benchmarks_own("meminfo.Active"));
        // The class is the row's, whatever the name would say.
        assert!(!MetricClass::Profile.is_benchmarks_own("fio.write_iops"));
    }

    #[test]
    fn a_machine_known_in_part_is_described_without_gaps_or_zero_memory() {
        let full = Machine { nr_cpu: 2, cpu_model: "AMD EPYC".into(), memory_kib: 24 << 20, ..Machine::default() };
        assert_eq!(full.describe(), "2 threads AMD EPYC with 24G memory");
        let part = Machine { nr_cpu: 96, ..Machine::default() };
        assert_eq!(part.describe(), "96 threads");
        // A run pinned to one CPU (`taskset -c 0`) is on one thread, not "1 threads".
        let pinned = Machine { nr_cpu: 1, memory_kib: 24 << 20, ..Machine::default() };
        assert_eq!(pinned.describe(), "1 thread with 24G memory");
        let memory = Machine { memory_kib: 512 << 20, ..Machine::default() };
        assert_eq!(memory.describe(), "512G memory");
        let named = Machine { hostname: "lkp-icl-2sp7".into(), ..Machine::default() };
        assert_eq!(named.describe(), "lkp-icl-2sp7 (its CPUs and memory were not recorded)");
    }

    #[test]
    fn a_failed_outcome_shows_the_nul_bytes_of_its_reason() {
        let reason = |outcome: RunOutcome| match outcome {
            RunOutcome::Failed { reason } => reason,
            RunOutcome::Ok => panic!("a failed outcome reads ok"),
        };
        let shown = "exit status 3: a\u{2400}b\u{FFFD}\u{2400}";
        assert_eq!(reason(RunOutcome::failed("exit status 3: a\0b\u{FFFD}\0")), shown);
        assert_eq!(reason(RunOutcome::failed(String::from("\0"))), "\u{2400}");
        assert_eq!(reason(RunOutcome::failed("exit status 1: \\0 as typed")), "exit status 1: \\0 as typed");
        assert!(matches!(nul_shown("fio: write failed"), Cow::Borrowed("fio: write failed")));
    }

    #[test]
    fn metric_classes_order_program_monitor_profile() {
        assert_eq!(MetricClass::of("fio.write_iops"), MetricClass::Program);
        // Culprit's proc-vmstat monitor and lkp's monitors of an imported result root are monitors too.
        for monitor in ["proc-vmstat.nr_active_anon", "slabinfo.dentry.active_objs", "sched_debug.cpu.nr_running.avg"] {
            assert_eq!(MetricClass::of(monitor), MetricClass::Monitor, "{monitor}");
        }
        assert_eq!(MetricClass::of("vmstat.cpu.id"), MetricClass::Monitor);
        assert_eq!(MetricClass::of("perf-profile.self.cycles-pp.memcpy"), MetricClass::Profile);
        assert!(MetricClass::Program < MetricClass::Monitor && MetricClass::Monitor < MetricClass::Profile);
    }

    #[test]
    fn qa47_the_time_monitors_rows_are_named_as_lkps_and_are_monitor_rows() {
        // lkp's stats name them after the program (`stress-ng.time.user_time`); they are never the benchmark's own,
        // which a report leads with and a bisect judges.
        for (metric, field) in [
            ("stress-ng.time.user_time", "user_time"),
            ("fio.time.elapsed_time", "elapsed_time"),
            ("command.time.minor_page_faults", "minor_page_faults"),
            ("time.elapsed_time", "elapsed_time"),
        ] {
            assert_eq!(time_field(metric), Some(field), "{metric}");
            assert_eq!(MetricClass::of(metric), MetricClass::Monitor, "{metric}");
        }
        let others = ["stress-ng.time", "command.elapsed_time", "fio.write_iops", "vmstat.time.x", "time.", ".time.x"];
        for metric in others {
            assert_eq!(time_field(metric), None, "{metric}");
        }
        assert_eq!(MetricClass::of("command.elapsed_time"), MetricClass::Program);
        assert_eq!(time_metric("stress-ng", "user_time"), "stress-ng.time.user_time");
    }

    #[test]
    fn revision_short_forms() {
        let c = Revision::Commit { sha: "8cc621d2f45ddd3dc664024a647ee7adf48d79a5".into(), describe: None, subject: None };
        assert_eq!(c.short(), "8cc621d2f4");
        assert_eq!(Revision::Label { name: "cgroup-on".into() }.short(), "cgroup-on");
        let odd = Revision::Commit { sha: "ééééééééééééé".into(), describe: None, subject: None };
        assert_eq!(odd.short(), "éééééééééé");
        assert_eq!(abbreviate("abc", 12), "abc");
    }

    #[test]
    fn full_shas_are_shortened_and_labels_kept_whole() {
        let sha1 = "8cc621d2f45ddd3dc664024a647ee7adf48d79a5";
        let sha256 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        assert_eq!((table_short(sha1), prose_short(sha1)), ("8cc621d2f4", "8cc621d2f45d"));
        assert_eq!((table_short(sha256), prose_short(sha256)), ("0123456789", "0123456789ab"));
        // A label is never cut, even one of hex digits or one that looks like an abbreviated SHA.
        for label in ["cgroup-on", "8cc621d2f45ddd3d", "v6.8-rc1", "8cc621d2f45ddd3dc664024a647ee7adf48d79a5x", ""] {
            assert!(!is_full_sha(label), "{label}");
            assert_eq!((table_short(label), prose_short(label)), (label, label));
        }
    }
}
