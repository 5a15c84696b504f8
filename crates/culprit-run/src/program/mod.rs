//! Benchmark programs: one module per program, each mapping lkp-style job params to a real command line, one
//! [`Program`] trait, one [`registry`].
//!
//! A program turns its params into a [`ProgramPlan`] (setup, the measured command, cleanup) before anything runs, so
//! a bad param or a missing binary is reported for the whole job file up front, not halfway through a long run.

use crate::process::{find_in_path, Finished, Invocation};
use std::collections::BTreeMap;
use std::path::PathBuf;
use thiserror::Error;

pub mod command;
pub mod dbench;
pub mod fio;
pub mod fsmark;
pub mod hackbench;
pub mod iperf;
pub mod oltp;
pub mod perf_bench;
pub mod pgbench;
pub mod server;
pub mod stress_ng;
pub mod sysbench;

/// Why a program cannot be planned.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ProgramError {
    #[error("{program}: param '{key}' = '{value}': {reason}")]
    BadParam { program: &'static str, key: String, value: String, reason: String },
    #[error("{program}: missing param '{key}': {reason}")]
    MissingParam { program: &'static str, key: String, reason: String },
    #[error("{program}: unknown param '{key}'; {program} accepts: {accepted}")]
    UnknownParam { program: &'static str, key: String, accepted: String },
    #[error("{program}: '{binary}' is not installed; {hint}")]
    MissingBinary { program: &'static str, binary: String, hint: &'static str },
    #[error("unknown program '{name}'; culprit runs: {known}")]
    UnknownProgram { name: String, known: String },
}

/// Params whose refusal is of something lkp runs and Culprit does not (several copies of the benchmark at once, fio on
/// a raw disk or device-dax namespace), not of a mistake in the job: `culprit split` still writes such jobs, for lkp.
pub const LKP_ONLY_PARAMS: &[&str] = &["nr_instances", "nr_threads_by_instance", "raw_disk"];

/// Whether `error` refuses one of [`LKP_ONLY_PARAMS`].
pub fn refuses_what_only_lkp_runs(error: &ProgramError) -> bool {
    matches!(error, ProgramError::BadParam { key, .. } if LKP_ONLY_PARAMS.contains(&key.as_str()))
}

/// What kind of value a param takes, so it is validated before anything runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// Free text.
    Text,
    /// A whole number.
    Count,
    /// A whole number of at least 1.
    Positive,
    /// A whole number or a share of the CPUs such as `50%`.
    CountOrShare,
    /// A duration: `300`, `300s`, `5m`, `1h`.
    Duration,
    /// A size: `4k`, `64M`, `1G`.
    Size,
    /// One of a fixed set of words.
    OneOf(&'static [&'static str]),
}

/// One accepted param of a program, documented.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: ParamKind,
    pub doc: &'static str,
}

impl ParamSpec {
    /// Whether a key is this param; a name ending in `.*` accepts a family of keys (`capture.*`).
    pub fn matches(&self, key: &str) -> bool {
        match self.name.strip_suffix('*') {
            // The family's hash itself (`capture:` holding `ops: regex`) is accepted too.
            Some(prefix) => (key.starts_with(prefix) && key.len() > prefix.len()) || key == prefix.trim_end_matches('.'),
            None => self.name == key,
        }
    }
}

/// The params a program sees: its own hash merged over the job's top-level params, as text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params {
    pub program: &'static str,
    pub values: BTreeMap<String, String>,
}

impl Params {
    pub fn new(program: &'static str, values: BTreeMap<String, String>) -> Self {
        Params { program, values }
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str).filter(|v| !v.is_empty())
    }

    fn bad(&self, key: &str, value: &str, reason: impl Into<String>) -> ProgramError {
        ProgramError::BadParam { program: self.program, key: key.into(), value: value.into(), reason: reason.into() }
    }

    /// A whole number.
    pub fn count(&self, key: &str) -> Result<Option<u64>, ProgramError> {
        self.get(key)
            .map(|v| v.trim().parse::<u64>().map_err(|_| self.bad(key, v, "expected a whole number such as 8")))
            .transpose()
    }

    /// A whole number of at least 1, for counts where 0 means nothing to do (hackbench's `loops`): refused when the
    /// job is checked rather than failing every run.
    pub fn positive_count(&self, key: &str) -> Result<Option<u64>, ProgramError> {
        match self.count(key)? {
            Some(0) => Err(self.bad(key, "0", "0 would run nothing: give at least 1, or leave the key out for the default")),
            other => Ok(other),
        }
    }

    /// A whole number or a share of `nr_cpu` (`50%`), at least 1. A count of 0 is refused rather than quietly
    /// run as 1: it runs nothing, and "every CPU" is written `100%` in lkp's job files.
    pub fn count_or_share(&self, key: &str, nr_cpu: u32) -> Result<Option<u64>, ProgramError> {
        self.get(key)
            .map(|v| match culprit_job::convention::share_or_count(v, nr_cpu) {
                Ok(0) => Err(self.bad(key, v, "0 would run nothing: give at least 1, or a share of the CPUs such as 100%")),
                Ok(n) => Ok(n),
                Err(e) => Err(self.bad(key, v, e.to_string())),
            })
            .transpose()
    }

    /// A duration in seconds.
    pub fn duration_secs(&self, key: &str) -> Result<Option<u64>, ProgramError> {
        self.get(key)
            .map(|v| culprit_job::convention::duration_secs(v).map_err(|e| self.bad(key, v, e.to_string())))
            .transpose()
    }

    /// A run time in seconds, at least 1: `reads_zero_as` says what the program would make of a zero, which no
    /// job means (a `runtime: 0` left from editing, or a value that rounds to nothing).
    pub fn run_time_secs(&self, key: &str, reads_zero_as: &str) -> Result<Option<u64>, ProgramError> {
        match self.duration_secs(key)? {
            Some(0) => {
                let program = self.program;
                let reason =
                    format!("{program} {reads_zero_as}; give at least 1s, or leave the key out for the default");
                Err(self.bad(key, self.get(key).unwrap_or("0"), reason))
            }
            other => Ok(other),
        }
    }

    /// A size in bytes.
    pub fn size_bytes(&self, key: &str) -> Result<Option<u64>, ProgramError> {
        self.get(key)
            .map(|v| culprit_job::convention::size_bytes(v).map_err(|e| self.bad(key, v, e.to_string())))
            .transpose()
    }

    /// An iteration count (`8x` or `8`).
    pub fn iterations(&self, key: &str) -> Result<Option<u64>, ProgramError> {
        self.get(key)
            .map(|v| match culprit_job::convention::iterations(v) {
                // 0 iterations would quietly run once (a run is at least one execution); refuse it as 0 threads is.
                Ok(0) => Err(self.bad(key, v, "0 would run nothing: give at least 1 (or 1x)")),
                Ok(n) => Ok(n),
                Err(e) => Err(self.bad(key, v, e.to_string())),
            })
            .transpose()
    }

    /// One of a fixed set of words.
    pub fn one_of(&self, key: &str, allowed: &[&str]) -> Result<Option<String>, ProgramError> {
        self.get(key)
            .map(|v| {
                if allowed.contains(&v) {
                    Ok(v.to_string())
                } else {
                    Err(self.bad(key, v, format!("expected one of: {}", allowed.join(", "))))
                }
            })
            .transpose()
    }

    /// Checks every param against the program's specs (and the keys every program may see), so an unknown or
    /// malformed param is reported before anything runs.
    pub fn validate(&self, specs: &[ParamSpec], nr_cpu: u32) -> Result<(), ProgramError> {
        for (key, value) in &self.values {
            if key == "nr_instances" {
                self.one_instance(value)?;
                continue;
            }
            let Some(spec) = specs.iter().find(|s| s.matches(key)) else {
                if COMMON_KEYS.contains(&key.as_str()) {
                    continue;
                }
                return Err(ProgramError::UnknownParam {
                    program: self.program,
                    key: key.clone(),
                    accepted: specs.iter().map(|s| s.name).collect::<Vec<_>>().join(", "),
                });
            };
            if value.is_empty() {
                continue;
            }
            match spec.kind {
                ParamKind::Text => {}
                ParamKind::Count => drop(self.count(key)?),
                ParamKind::Positive => drop(self.positive_count(key)?),
                ParamKind::CountOrShare => drop(self.count_or_share(key, nr_cpu)?),
                ParamKind::Duration => drop(self.duration_secs(key)?),
                ParamKind::Size => drop(self.size_bytes(key)?),
                ParamKind::OneOf(words) => drop(self.one_of(key, words)?),
            }
        }
        Ok(())
    }
}

impl Params {
    /// lkp's `nr_instances` (its bin/run-test starts that many copies of the benchmark at once, each with its own
    /// `instance_id`): Culprit runs one, so 1 is taken and more are refused rather than measured as one copy.
    fn one_instance(&self, value: &str) -> Result<(), ProgramError> {
        match value.trim() {
            "" | "1" => Ok(()),
            other => Err(self.bad(
                "nr_instances",
                other,
                "lkp starts that many copies of the benchmark at once, but Culprit runs one per run; remove \
                 nr_instances (or give 1), or start the copies yourself in a 'command' job",
            )),
        }
    }
}

/// Keys every program may see without using them: lkp's top-level keys that describe the test box or its setup
/// (which Culprit records but does not act on), the run layer's own keys, lkp's `nr_instances`, which
/// [`Params::validate`] takes only as 1, and lkp's `cluster`, which the job loader has already taken as
/// `cs-localhost` (one machine playing every role, as Culprit's does).
pub const COMMON_KEYS: &[&str] =
    &["timeout", "cpufreq_governor", "ucode", "disk", "fs", "fs2", "mount_option", "nr_instances", "cluster"];

/// Where and on what a program runs.
#[derive(Debug, Clone)]
pub struct ProgramContext {
    pub nr_cpu: u32,
    /// A fresh, empty directory for the benchmark's files (fio's test files, fs_mark's directories).
    pub scratch_dir: PathBuf,
}

/// The commands of one run: setup (not measured), the measured command, cleanup (always attempted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramPlan {
    pub setup: Vec<Invocation>,
    pub main: Invocation,
    /// How many times the measured command runs within one run (lkp's `iterations` for hackbench, a `command`'s
    /// `executions`); the outputs are concatenated for the parser.
    pub executions: u32,
    /// Executions of the measured command before the measured ones (a `command`'s `warmup`), after setup and
    /// before the monitors start: their times and output are not part of the run, only their failure is.
    pub warmups: u32,
    pub cleanup: Vec<Invocation>,
    /// A setup step to try again, from a new plan, when it fails in a way worth another try; `None`: a failed setup
    /// step fails the run.
    pub retry: Option<SetupRetry>,
}

impl ProgramPlan {
    pub fn single(main: Invocation) -> Self {
        ProgramPlan { setup: Vec::new(), main, executions: 1, warmups: 0, cleanup: Vec::new(), retry: None }
    }
}

/// A setup step whose failure can be worth another try from a new plan of the program's for the same scratch
/// directory, whose steps before it are the same: a throwaway server's start on 127.0.0.1 at a port another process
/// took between the plan's pick and the server's start (a port is only free when it is picked, and two runs
/// starting at once can pick the same one), since a new plan picks a new port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetupRetry {
    /// The setup step, by its index.
    pub step: usize,
    /// What the step's stderr says when its failure is worth another try.
    pub when_stderr_has: &'static str,
    /// The tries in all, the first one included.
    pub tries: u32,
    /// What such a failure is, and what each try changes, for the run's stderr and for the reason of a run whose
    /// tries all failed so.
    pub why: &'static str,
}

/// A benchmark program Culprit can run.
pub trait Program: Sync {
    /// The job key that selects it, which is also its metric prefix (`fio`, `fsmark`, `stress-ng`).
    fn name(&self) -> &'static str;
    /// The executable it needs.
    fn binary(&self) -> &'static str;
    /// What to install when the binary is missing.
    fn install_hint(&self) -> &'static str;
    /// The params it accepts.
    fn params(&self) -> &'static [ParamSpec];
    /// The commands for one run.
    fn plan(&self, params: &Params, ctx: &ProgramContext) -> Result<ProgramPlan, ProgramError>;
    /// The parser (a `culprit_parse` registry name) that reads its output; `None` for programs measured by time.
    fn parser(&self) -> Option<&'static str> {
        Some(self.name())
    }
    /// The name of its raw output in a run's stored outputs and in a result root, as lkp names it: the program's
    /// name, except where lkp's test writes a file of its own (fio's `fio.output`), so that `culprit parse` and lkp's
    /// parsers read a result root Culprit wrote.
    fn raw_output_name(&self) -> &'static str {
        self.name()
    }

    /// The bytes of files one run writes in its scratch directory, when its params say, with the param that says
    /// so (fio's and fs_mark's `test_size`, sysbench-fileio's `size`), so that a run that cannot fit there is refused
    /// before it fills the file system.
    fn scratch_bytes(&self, _params: &Params) -> Option<(&'static str, u64)> {
        None
    }

    /// Fails when the binary is not installed, naming what to install.
    fn check_installed(&self) -> Result<(), ProgramError> {
        match find_in_path(self.binary()) {
            Some(_) => Ok(()),
            None => Err(ProgramError::MissingBinary {
                program: self.name(),
                binary: self.binary().to_string(),
                hint: self.install_hint(),
            }),
        }
    }

    /// Fails when a param names something the installed program does not offer (a stressor this stress-ng lacks),
    /// which would otherwise only show as every run failing. Called once per atomic job before anything runs, after
    /// [`Program::check_installed`] passed; a program that can be asked must answer without running a benchmark.
    fn check_offered(&self, _params: &Params) -> Result<(), ProgramError> {
        Ok(())
    }

    /// Fails when a param asks for something this machine lacks (fio's `cpus_allowed` naming a CPU outside
    /// `usable_cpus`, the CPUs culprit may run on, ascending; fio's dev-dax engine without a DAX device), which would
    /// otherwise only show as every run failing.
    /// Called before anything runs by `culprit run`, not by `culprit split`, whose files may be meant for another
    /// machine.
    fn check_fits_machine(&self, _params: &Params, _usable_cpus: &[u32]) -> Result<(), ProgramError> {
        Ok(())
    }

    /// The sysctls lkp's run script of this program sets before it runs (stress-ng's `fs.aio-max-nr` for `aio`), by
    /// name and value. Culprit sets none, since they change the machine for everything on it; `culprit run` says
    /// which differ here, so that numbers unlike lkp's are not blamed on the code.
    fn lkp_sysctls(&self, _params: &Params, _nr_cpu: u32) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// The workload quantities its params resolve to on a machine of `nr_cpu` usable CPUs, by name, where they
    /// depend on it: every count given as a share of the CPUs (`nr_threads: 100%` is 1 under `taskset -c 0` and 2
    /// on the whole of a 2-CPU machine), and what a program derives from the CPU count itself (hackbench's tasks and
    /// loops). Two runs of one job whose quantities differ ran different workloads under one name; compare says so.
    /// A param that does not read is left out (the run refused it).
    fn resolved_workload(&self, params: &Params, nr_cpu: u32) -> Vec<(String, u64)> {
        shares_resolved(self.params(), params, nr_cpu)
    }

    /// The line of a failed execution's output that says why it failed, which the run's reason quotes after the exit
    /// status: by default the last line written to stderr. A program that reports its errors elsewhere, or ends with
    /// a line that says nothing of them, picks its own.
    fn failure_line<'a>(&self, finished: &'a Finished) -> Option<&'a str> {
        last_line(&finished.stderr)
    }
}

/// The last line of `text` that is not blank, trimmed.
pub(crate) fn last_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).rfind(|line| !line.is_empty())
}

/// lkp's `parse_bool` of a yes/no param: empty, or text starting with `0`, `no`, `false` or `n`, is no; anything else
/// is yes.
pub(crate) fn lkp_bool(value: &str) -> bool {
    !(value.is_empty() || ["0", "no", "false", "n"].iter().any(|no| value.starts_with(no)))
}

/// A free TCP port on 127.0.0.1, as the kernel hands one out for port 0: for a server a run starts (a throwaway
/// PostgreSQL that cannot use a Unix socket, iperf3's servers).
pub fn free_local_port() -> Option<u16> {
    std::net::TcpListener::bind(("127.0.0.1", 0)).ok()?.local_addr().ok().map(|a| a.port())
}

/// Runs an installed program to ask what it offers (its engines, stressors, benchmarks, or whether it takes an
/// option), in the temp dir so that nothing it writes lands in the user's directory: what it printed and how it
/// ended, or `None` when it cannot be run, which the runs then report. `limit` keeps a wedged binary from hanging the
/// check before the first run.
pub(crate) fn ask_installed(argv: &[&str], limit: std::time::Duration) -> Option<crate::process::Finished> {
    let ask = Invocation::new(argv.iter().copied()).in_dir(&std::env::temp_dir());
    crate::process::run(&ask, Some(limit), &std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false))).ok()
}

/// The counts of `specs` that `params` gives as a share of the CPUs (`50%`), resolved for `nr_cpu` CPUs, by name.
pub fn shares_resolved(specs: &[ParamSpec], params: &Params, nr_cpu: u32) -> Vec<(String, u64)> {
    specs
        .iter()
        .filter(|spec| matches!(spec.kind, ParamKind::CountOrShare))
        .filter(|spec| params.get(spec.name).is_some_and(|value| value.trim().ends_with('%')))
        .filter_map(|spec| Some((spec.name.to_string(), params.count_or_share(spec.name, nr_cpu).ok()??)))
        .collect()
}

/// The workload quantities a stored run's job resolved to on its machine of `nr_cpu` CPUs
/// ([`Program::resolved_workload`]), each named after its program (`hackbench.tasks`), from the run's flattened
/// params (`nr_threads`, `hackbench.mode`): the program is the one whose key the job has (`hackbench:` or a
/// `hackbench.` param), and its params are the job's top-level ones with its own over them. Empty for a job of no
/// known program (an imported run of a program Culprit does not run) or a machine whose CPUs were not recorded.
pub fn resolved_workload_of(stored: &[(String, String)], nr_cpu: u32) -> Vec<(String, u64)> {
    if nr_cpu == 0 {
        return Vec::new();
    }
    let owns = |program: &str, key: &str| {
        key == program || key.strip_prefix(program).is_some_and(|rest| rest.starts_with('.'))
    };
    let Some(program) = registry().iter().copied().find(|p| stored.iter().any(|(key, _)| owns(p.name(), key))) else {
        return Vec::new();
    };
    let mut values: BTreeMap<String, String> =
        stored.iter().filter(|(key, _)| !key.contains('.')).map(|(k, v)| (k.clone(), v.clone())).collect();
    let prefix = format!("{}.", program.name());
    for (key, value) in stored {
        if let Some(own) = key.strip_prefix(&prefix) {
            values.insert(own.to_string(), value.clone());
        }
    }
    let params = Params::new(program.name(), values);
    let resolved = program.resolved_workload(&params, nr_cpu);
    resolved.into_iter().map(|(name, value)| (format!("{}.{name}", program.name()), value)).collect()
}

/// Every program, in one place.
pub fn registry() -> &'static [&'static dyn Program] {
    &REGISTRY
}

static REGISTRY: [&dyn Program; 20] = [
        &command::CommandProgram,
        &dbench::Dbench,
        &fio::Fio,
        &fsmark::Fsmark,
        &hackbench::Hackbench,
        &iperf::Iperf,
        &oltp::Oltp,
        &perf_bench::FUTEX,
        &perf_bench::MEM,
        &perf_bench::NUMA_MEM,
        &perf_bench::SCHED_MESSAGING,
        &perf_bench::SCHED_PIPE,
        &perf_bench::SYSCALL,
        &pgbench::Pgbench,
        &stress_ng::StressNg,
        &sysbench::CPU,
        &sysbench::FILEIO,
        &sysbench::MEMORY,
        &sysbench::MUTEX,
        &sysbench::THREADS,
];

/// The program for a job key (`fs_mark` is accepted for `fsmark`).
pub fn lookup(name: &str) -> Result<&'static dyn Program, ProgramError> {
    let name = if name == "fs_mark" { "fsmark" } else { name };
    registry().iter().copied().find(|p| p.name() == name).ok_or_else(|| ProgramError::UnknownProgram {
        name: name.to_string(),
        known: registry().iter().map(|p| p.name()).collect::<Vec<_>>().join(", "),
    })
}

/// The number of single-character edits (insertions, deletions, substitutions) between two words, for suggesting
/// the name a typo meant: a stress-ng stressor here, a job file's param in `culprit run`.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != *cb)).min(row[j] + 1).min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
pub(crate) fn params(program: &'static str, pairs: &[(&str, &str)]) -> Params {
    Params::new(program, pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
}

#[cfg(test)]
pub(crate) fn ctx() -> ProgramContext {
    ProgramContext { nr_cpu: 4, scratch_dir: PathBuf::from("/tmp/culprit-scratch") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_runs_workload_resolves_on_its_cpu_count_by_its_program() {
        let stored = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        let resolved = |pairs: &[(&str, &str)], nr_cpu: u32| -> Vec<(String, u64)> {
            resolved_workload_of(&stored(pairs), nr_cpu)
        };
        let named = |pairs: &[(&str, u64)]| -> Vec<(String, u64)> {
            pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
        };
        // quick.yaml's hackbench: a share of the CPUs at the top level, the program's own params under its key.
        let share = [("nr_threads", "100%"), ("hackbench.ipc", "pipe"), ("hackbench.loops", "500")];
        assert_eq!(resolved(&share, 1), named(&[("hackbench.nr_threads", 1), ("hackbench.tasks", 40)]));
        assert_eq!(resolved(&share, 2), named(&[("hackbench.nr_threads", 2), ("hackbench.tasks", 80)]));
        // A count as given resolves to itself, so it is no quantity; the loops lkp derives from the CPUs are.
        let count = [("hackbench.nr_threads", "4"), ("hackbench.fds", "10")];
        assert_eq!(resolved(&count, 2), named(&[("hackbench.tasks", 80), ("hackbench.loops", 15000)]));
        // Another program's share; no program, or no CPU count recorded, resolves nothing.
        let stress = [("nr_threads", "50%"), ("stress-ng.test", "cpu"), ("testtime", "1s")];
        assert_eq!(resolved(&stress, 4), named(&[("stress-ng.nr_threads", 2)]));
        assert_eq!(resolved(&[("nr_threads", "100%"), ("suite", "unknown")], 2), Vec::new());
        assert_eq!(resolved(&share, 0), Vec::new());
    }

    #[test]
    fn a_zero_run_time_is_refused_by_every_program_that_takes_one() {
        // fio read `runtime: 0` as no limit and ran until test_size was written, stress-ng ran for ever, and
        // pgbench's -T was raised to 1 without a word; sysbench refused it already.
        for (program, key, extra) in [
            ("fio", "runtime", vec![("test_size", "64M")]),
            ("stress-ng", "testtime", vec![("test", "cpu")]),
            ("pgbench", "runtime", vec![]),
            ("sysbench-cpu", "runtime", vec![]),
        ] {
            let Ok(found) = lookup(program) else { panic!("{program} is in the registry") };
            let mut pairs = extra.clone();
            pairs.push((key, "0"));
            let planned = found.plan(&params(program, &pairs), &ctx());
            let refused = planned.err().map(|e| e.to_string()).unwrap_or_default();
            assert!(refused.contains(key) && refused.contains("give at least 1s"), "{program}: {refused:?}");
            pairs.pop();
            pairs.push((key, "2s"));
            assert!(found.plan(&params(program, &pairs), &ctx()).is_ok(), "{program} with {key} 2s");
        }
    }
}
