//! lkp result roots: writing runs in the directory layout lkp-tests' tools read, and importing existing roots.
//!
//! Layout written, one directory per run, lkp's (`<build>` is `<rootfs>/<kconfig>/<compiler>`, see [`build_levels`]):
//!
//! ```text
//! <root>/<testcase>/<path_params>/<hostname>/<build>/<revision key>/<run index>/stats.json  flat `metric: value`
//!                                                         /matrix.json  monitor samples (`<monitor>.<key>`: [...])
//!                                                         /job.yaml     the atomic job, with lkp's `result_root`
//!                                                         /<raw output> e.g. fio.output
//!                                                         /culprit-import-key  the key it is stored under
//! <root>/<testcase>/<path_params>/<hostname>/<build>/<revision key>/matrix.json  per-run values, `stats_source`
//!                                                                  /avg.json      metric: mean over runs
//!                                                                  /stddev.json   metric: standard deviation
//! ```
//!
//! Roots written before Culprit wrote the build levels (`<hostname>/<revision key>` directly) still import: a run
//! whose job.yaml records no `result_root` is read in that older layout.
//!
//! As lkp does, a revision's `matrix.json` lists its runs in `stats_source`, pads a metric absent from earlier
//! runs with leading zeros so each column stays one run, and the averages treat a metric missing from a run as 0.
//! The standard deviation is the population one (divided by n), as lkp's `Array#standard_deviation`.
//!
//! Import walks any lkp root: every directory with a `stats.json` is a run whose parent is the revision
//! directory; a revision directory with a `matrix.json` but no run directories yields one run per matrix column.
//! Paths are read as `<testcase>/<path_params>/<host>/.../<commit>/<run>` (lkp adds rootfs, kconfig and compiler
//! levels before the commit; they are skipped); the caller can supply testcase and path_params when the root is
//! shallower than that (and must when the root is a single run directory, which is then imported alone, unless it is
//! a run of lkp's own tree, placed as below).
//!
//! lkp's own tree (`/result/<testcase>/<path_params>/<tbox_group>/<rootfs>/<kconfig>/<compiler>/<commit>/<run>`, of
//! any number of jobs, machines and commits) is read in that layout from the commit up wherever it is sure: the
//! directory given holds all seven levels (`/result`, or a directory above it), or the run's job.yaml records a
//! `result_root` of this commit, or the canonical path has the seven levels with the testcase the job.yaml names at
//! their top, or, for runs without a job.yaml, with a 40-hex commit directory below a level named as lkp names its
//! compiler (`gcc-12`) or rootfs (`....cgz`) (a directory inside `/result`, given by a relative path or not). So a run
//! gets the same job, commit and machine whichever directory of the tree is given, and importing it again from another
//! one stores nothing twice. A commit directory none of this places, whose path read from the top would make a rootfs
//! or compiler level its testcase, path_params or machine, is refused rather than stored as an invented job. The root
//! `culprit run --result-root` wrote is read from the revision directory up in its own layout, so it too imports from
//! any directory inside it. [`ImportReport::groups`] counts the runs per job, commit and machine. A run's import key
//! holds the levels between its machine and its commit (lkp's rootfs, kconfig and compiler), so that one commit's runs
//! of two kconfigs are both stored; a run an earlier importer stored under its machine and run directory alone is
//! still found (`lkp_import_keys`). Both builds' runs are one job's (kconfig and compiler are no part of its
//! identity); `compare` gives each build its own table, by the rootfs, kconfig and compiler each run's job.yaml
//! records, and the import tells of each job, commit and machine whose runs came from more than one build (warning
//! where runs without a job.yaml leave their builds unrecorded).
//!
//! A run directory without `stats.json` (it holds a `job.yaml`; or it is numbered, inside a revision directory or
//! holding a file lkp writes into every run, such as `output` or `time`) is an unfinished run, never read as a
//! revision whose `matrix.json` columns would become invented runs. When it kept a raw benchmark output the caller's
//! [`BenchmarkParser`] reads (lkp's post-processing failed after the benchmark ran), its metrics are read from that
//! output and its monitors' series reduced as lkp's stats step does (`run_value`), and
//! [`ImportReport::from_raw_outputs`] names it; an output that does not read skips the run with the parser's reason,
//! and a run with no such output is reported as skipped.
//!
//! An lkp run's `softirqs.*` values are lkp's means of since-boot counts; they are made counts during the run, as
//! Culprit's, from the run's softirqs series, or else kept apart as `softirqs.since_boot_mean.*`
//! (`counts_of_softirqs_during_the_run`). A `stats.json` entry that
//! is not a number (lkp's bare `NaN` and `Infinity` among them) is left out with a warning naming the file and key; a
//! `stats.json` with no number at all skips its run. The same holds for the columns of a revision `matrix.json` read in
//! place of its runs, and a monitor series of a run's `matrix.json` that is not an array of numbers is left out with a
//! warning too.
//!
//! What a run directory gives: its metrics from `stats.json` (lkp's reduction of every monitor and benchmark, so no
//! benchmark output is parsed again), and its monitor series from its `matrix.json` and from lkp's per-monitor files
//! (`vmstat.json`, `proc-stat.json`, ...: each key `<monitor>.<key>` an array of samples, `<monitor>.time` their
//! times), which give the monitors the matrix lacks; a root copied without the matrix still has its series. lkp gzips
//! its run `matrix.json` and may gzip a monitor's file, so `matrix.json.gz` and `<monitor>.json.gz` are read too. A
//! monitor's raw output (`vmstat`, `vmstat.gz`) is read, through the caller's [`MonitorParser`], only for a monitor
//! that neither gives (a run that kept its raw outputs but not lkp's JSON of them); no other raw output is read, since
//! `stats.json` already holds what lkp made of them. A monitor file that does not read, or a key of it that is no array
//! of numbers, is left out with a warning naming the file; the run is still imported. No file of a root is read
//! past [`MAX_FILE_BYTES`] (nor gunzipped past it): a run with a larger one is skipped, naming the file.

use crate::error::StoreError;
use crate::{Build, RunId, RunKind, SaveOptions, Saved, Store};
use culprit_core::model::{Machine, MonitorSeries, RawOutput, Revision, RunOutcome, RunRecord, ScratchFilesystem};
use serde_json::{Map, Number, Value};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Why writing or importing a result root failed.
#[derive(Debug, thiserror::Error)]
pub enum ResultRootError {
    /// The I/O error is part of the message rather than a chained source, so the report prints it once (a
    /// skipped run's reason is this message alone).
    #[error("cannot {action} {}: {error}", path.display())]
    Io { path: PathBuf, action: &'static str, error: std::io::Error },

    #[error("{} is not valid lkp JSON: {reason}; fix or remove the file and import again", path.display())]
    Json { path: PathBuf, reason: String },

    #[error("{} is not valid YAML: {reason}; fix or remove the file and import again", path.display())]
    Yaml { path: PathBuf, reason: String },

    #[error("cannot tell the {what} of {} from its path; {hint}", path.display())]
    Layout { path: PathBuf, what: &'static str, hint: &'static str },

    /// A commit directory whose path, read from the directory given, would put one of lkp's build levels (its rootfs
    /// or compiler) in place of the testcase, path_params or machine, and whose levels above could not be placed in
    /// lkp's layout instead: stored so, the runs would be a second, invented job on a machine named after a rootfs.
    #[error(
        "cannot tell the testcase, path_params and machine of {}: read from the directory given, \"{name}\" would be \
         the {taken}, but it is named as lkp names its {level} level, so the directory given is inside an lkp result \
         tree, and which levels above it are lkp's cannot be told from the path (lkp's commit directories are 40-hex \
         SHAs); import from lkp's result root (the directory holding \
         <testcase>/<path_params>/<tbox_group>/<rootfs>/<kconfig>/<compiler>/<commit>) or from above it",
        path.display()
    )]
    InsideLkpTree { path: PathBuf, name: String, taken: &'static str, level: &'static str },

    /// A file of the root larger than [`MAX_FILE_BYTES`]: read whole, it could exhaust memory.
    #[error(
        "{} is larger than {} MiB, the most culprit reads of one file of a result root (lkp writes none that large: \
         its outputs are tens of MB at most); it is not what lkp wrote there, so move it out of the root and import \
         again",
        path.display(),
        limit >> 20
    )]
    TooLarge { path: PathBuf, limit: u64 },

    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The most bytes Culprit reads of one output or result-root file. The largest real outputs it reads, perf-profile
/// reports of a many-CPU machine, are tens of MB, and the largest fio JSON with every histogram a few MB, so 256 MiB
/// leaves them room several times over; a file beyond it is not one run's output (a runaway log, a wrong file, a
/// device such as `/dev/zero`), and read whole it would take that memory several times while it is parsed.
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// What [`read_limited`] read.
#[derive(Debug, PartialEq, Eq)]
pub enum Limited {
    /// Every byte there was, no more than the limit.
    Whole(Vec<u8>),
    /// More bytes than the limit: reading stopped just past it.
    TooLarge,
    /// A NUL byte at this offset, when asked to stop at one: reading stopped at the chunk that holds it.
    Nul(u64),
}

/// Reads `reader` to its end, but never more than `limit` bytes, and with `stop_at_nul` not past a chunk holding a
/// NUL byte (which no text output holds), so that an endless or enormous input (`/dev/zero`, a pipe that never
/// ends, a runaway log) ends the read with [`Limited::TooLarge`] or [`Limited::Nul`] rather than exhausting memory.
pub fn read_limited(reader: impl std::io::Read, limit: u64, stop_at_nul: bool) -> std::io::Result<Limited> {
    const CHUNK: usize = 64 * 1024;
    let mut reader = reader.take(limit.saturating_add(1));
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let read = match reader.read(&mut chunk) {
            Ok(0) => return Ok(Limited::Whole(bytes)),
            Ok(read) => read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        let chunk = &chunk[..read];
        if stop_at_nul {
            if let Some(at) = chunk.iter().position(|b| *b == 0) {
                return Ok(Limited::Nul(bytes.len() as u64 + at as u64));
            }
        }
        bytes.extend_from_slice(chunk);
        if bytes.len() as u64 > limit {
            return Ok(Limited::TooLarge);
        }
    }
}

/// A file of a result root, at most [`MAX_FILE_BYTES`] of it ([`ResultRootError::TooLarge`] beyond).
fn read_root_file(path: &Path) -> Result<Vec<u8>, ResultRootError> {
    let io_error = |error| ResultRootError::Io { path: path.to_path_buf(), action: "read", error };
    let file = std::fs::File::open(path).map_err(io_error)?;
    match read_limited(file, MAX_FILE_BYTES, false).map_err(io_error)? {
        Limited::Whole(bytes) => Ok(bytes),
        Limited::TooLarge | Limited::Nul(_) => {
            Err(ResultRootError::TooLarge { path: path.to_path_buf(), limit: MAX_FILE_BYTES })
        }
    }
}

/// The file names lkp uses.
pub const STATS_FILE: &str = "stats.json";
pub const MATRIX_FILE: &str = "matrix.json";
pub const AVG_FILE: &str = "avg.json";
pub const STDDEV_FILE: &str = "stddev.json";
pub const JOB_FILE: &str = "job.yaml";
/// The key of a revision matrix that lists the runs' stats files rather than a metric.
pub const STATS_SOURCE_KEY: &str = "stats_source";
/// lkp's stats of a run that did not finish, and of one whose job exited with an error.
pub const INCOMPLETE_RUN_KEY: &str = "last_state.is_incomplete_run";
pub const EXIT_FAIL_KEY: &str = "last_state.exit_fail";
/// The time monitor's field of a run's wall time, in seconds: what an imported run's length is read from. lkp's
/// stats name it after the program, `<program>.time.elapsed_time` (`stress-ng.time.elapsed_time`), as Culprit's
/// runs do; a root Culprit wrote before QA 47 has the bare `time.elapsed_time` ([`elapsed_time_of`]).
pub const ELAPSED_TIME_FIELD: &str = "elapsed_time";

/// The run's wall time by the time monitor among its stats ([`ELAPSED_TIME_FIELD`]), under lkp's name or the bare
/// one; `None` when there is none, or when the stats hold two that differ (a job of two timed programs has no one
/// length).
pub fn elapsed_time_of(metrics: &BTreeMap<String, f64>) -> Option<f64> {
    let mut found = metrics
        .iter()
        .filter(|(name, _)| culprit_core::model::time_field(name) == Some(ELAPSED_TIME_FIELD))
        .map(|(_, value)| *value);
    let first = found.next()?;
    found.all(|other| other == first).then_some(first)
}
/// A failed run's reason, in words, beside its stats (lkp's marks say only that it failed), and the standard error
/// of its job: both come back with `culprit import`, so `culprit results --run ID` says why as it did before.
pub const FAILURE_FILE: &str = "culprit-failure";
pub const STDERR_FILE: &str = "stderr";
/// The import key under which `culprit run --result-root` stored a run it wrote ([`write_stored_run`]): importing
/// the root into the store that already holds the run then finds it instead of storing it a second time.
pub const IMPORT_KEY_FILE: &str = "culprit-import-key";
/// The filesystem the run's benchmark files were on ([`RunRecord::scratch`]: its scratch directory and the type and
/// source of the mount holding it), as a JSON object `{"path", "fs_type", "source"}`. lkp's job.yaml has `fs` and
/// `disk` for the filesystem its robot made, which a Culprit run records without applying, so they cannot say
/// where the run's files were: this file does, and the import reads it back, so a round trip keeps it.
pub const SCRATCH_FILE: &str = "culprit-scratch.json";

/// The import key of a run that Culprit measured itself: its machine, job and start time, which no other run of
/// the job on that machine shares. Saving the run under this key and writing it beside the run's `stats.json`
/// ([`write_stored_run`]) makes a later import of the root into the same store idempotent, as a re-import is.
pub fn own_import_key(run: &RunRecord) -> String {
    format!("culprit:{}/{}/{:.9}", run.machine.hostname, run.job_id, run.started_at)
}

/// Makes a string safe as one path component: no separators, no NUL, not `.` or `..`, not empty.
pub fn safe_component(text: &str) -> String {
    let mapped: String = text.chars().map(|c| if c == '/' || c == '\\' || c == '\0' { '_' } else { c }).collect();
    match mapped.as_str() {
        "" => "_".to_string(),
        "." | ".." => mapped.replace('.', "_"),
        _ => mapped,
    }
}

/// The rootfs, kconfig and compiler levels lkp's result path has between the test box and the commit, for a run
/// with these params on a machine whose own are `local` ([`local_build`]): each the job's param where it has one (an
/// lkp job of a kernel build names all three), else the machine's, as lkp's local runs fill them in.
pub fn build_levels(params: &[(String, String)], local: &Build) -> Build {
    let job = Build::of_params(params);
    let pick = |own: String, machine: &str| if own.is_empty() { machine.to_string() } else { own };
    Build {
        rootfs: pick(job.rootfs, &local.rootfs),
        kconfig: pick(job.kconfig, &local.kconfig),
        compiler: pick(job.compiler, &local.compiler),
    }
}

/// This machine's build levels for runs whose job names none, as lkp's `run-local` fills them in: the rootfs is the
/// distribution's `ID` in `/etc/os-release`, the kconfig `defconfig`, the compiler what `/usr/bin/gcc` links to
/// (`gcc-14`) or `gcc`.
pub fn local_build() -> Build {
    let os_release = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    let gcc = std::fs::read_link("/usr/bin/gcc").ok();
    let gcc_name = gcc.as_deref().and_then(Path::file_name).map(|name| name.to_string_lossy().into_owned());
    local_build_of(&os_release, gcc_name.as_deref())
}

/// [`local_build`] from the text of `/etc/os-release` and the name `/usr/bin/gcc` links to.
pub fn local_build_of(os_release: &str, gcc_link: Option<&str>) -> Build {
    let id = os_release
        .lines()
        .find_map(|line| line.strip_prefix("ID="))
        .map(|value| value.trim().trim_matches('"').to_string())
        .filter(|value| !value.is_empty());
    Build {
        rootfs: id.unwrap_or_else(|| "linux".to_string()),
        kconfig: "defconfig".to_string(),
        compiler: gcc_link.filter(|name| !name.is_empty()).unwrap_or("gcc").to_string(),
    }
}

/// The directory holding every run of one job on one revision, host and build, in lkp's layout.
pub fn revision_dir(
    root: &Path,
    testcase: &str,
    path_params: &str,
    hostname: &str,
    build: &Build,
    revision_key: &str,
) -> PathBuf {
    [testcase, path_params, hostname, &build.rootfs, &build.kconfig, &build.compiler, revision_key]
        .iter()
        .fold(root.to_path_buf(), |path, level| path.join(safe_component(level)))
}

/// Writes one run into the result root under the next free run index, then rewrites its revision's
/// `matrix.json`, `avg.json` and `stddev.json`. Returns the run directory. Every file is written to a temporary
/// name and renamed, so a crash never leaves a half-written `stats.json`. `local` is the machine's build levels for
/// a job that names none ([`build_levels`]).
pub fn write_run(root: &Path, path_params: &str, run: &RunRecord, local: &Build) -> Result<PathBuf, ResultRootError> {
    write_run_directory(root, path_params, run, local, None)
}

/// [`write_run`] for a run already saved in a store under `import_key`, which is written beside its `stats.json`
/// ([`IMPORT_KEY_FILE`]) so that importing the root into that store finds the run instead of storing it again.
pub fn write_stored_run(
    root: &Path,
    path_params: &str,
    run: &RunRecord,
    local: &Build,
    import_key: &str,
) -> Result<PathBuf, ResultRootError> {
    write_run_directory(root, path_params, run, local, Some(import_key))
}

/// The key after [`WRITTEN_MARK`] holding the release (`uname -r`) of the kernel a run executed on.
const KERNEL_RELEASE_KEY: &str = "kernel_release";

/// The line before what Culprit adds to a run's job.yaml ([`job_yaml_with_result_root`]), where an import cuts the
/// job back to the one that ran.
const WRITTEN_MARK: &str = "# added by culprit run --result-root: the run's place, times and test box";

/// The job.yaml written into a run directory: the run's job with lkp's `result_root` (the run directory) in place
/// of any it had, as lkp writes it into every run's job.yaml, and, for a run a store holds (`stored`, written by
/// `culprit run --result-root`), the keys lkp's job.yaml has of the run's times (`start_time`, `end_time`) and test
/// box (its host file's `nr_cpu`, `memory`, `brand`, `nr_node`), where the job has none of its own. An import reads
/// the tree's levels from it wherever the tree has been copied to, lkp's tools find the run's place in it, and the
/// run imported keeps when it ran and on what (QA 57: every fact of the machine was lost, and a mail of an imported
/// side read "its runs had 0 CPUs").
fn job_yaml_with_result_root(run: &RunRecord, run_directory: &Path, stored: bool) -> String {
    let mut text = job_yaml_without_result_root(&run.job_yaml);
    // Values are quoted as YAML strings (lkp writes its times as strings): a path_params level holds characters
    // (`%`, `:`) plain scalars may not, and so may a CPU's name.
    let quoted = |value: &str| serde_json::to_string(value).unwrap_or_default();
    if !stored {
        // A run no store holds (written for lkp's tools alone) is read back as lkp's, from its levels and stats.
        text.push_str(&format!("result_root: {}\n", quoted(&run_directory.to_string_lossy())));
        return text;
    }
    text.push_str(WRITTEN_MARK);
    text.push('\n');
    text.push_str(&format!("result_root: {}\n", quoted(&run_directory.to_string_lossy())));
    let own: std::collections::BTreeSet<String> = serde_yaml::from_str::<serde_yaml::Value>(&run.job_yaml)
        .ok()
        .and_then(|value| value.as_mapping().map(|m| m.keys().filter_map(|k| k.as_str().map(str::to_string)).collect()))
        .unwrap_or_default();
    let machine = &run.machine;
    let facts = [
        ("start_time", (run.started_at > 0.0).then(|| run.started_at.to_string())),
        ("end_time", (run.ended_at > 0.0).then(|| run.ended_at.to_string())),
        ("nr_cpu", (machine.nr_cpu > 0).then(|| machine.nr_cpu.to_string())),
        ("memory", (machine.memory_kib > 0).then(|| format!("{}K", machine.memory_kib))),
        ("brand", (!machine.cpu_model.trim().is_empty()).then(|| machine.cpu_model.trim().to_string())),
        ("nr_node", (machine.sockets > 0).then(|| machine.sockets.to_string())),
        // Not one of lkp's keys (its job.yaml names the kernel's image, `kernel: .../vmlinuz-<release>`, which a run
        // on the machine's own kernel has none of), so that an imported run keeps the release its runs compare by.
        (KERNEL_RELEASE_KEY, (!machine.kernel.trim().is_empty()).then(|| machine.kernel.trim().to_string())),
    ];
    for (key, value) in facts {
        if let Some(value) = value.filter(|_| !own.contains(key)) {
            text.push_str(&format!("{key}: {}\n", quoted(&value)));
        }
    }
    text
}

/// A job.yaml's text as the job ran: without what Culprit added after [`WRITTEN_MARK`], and without a top-level
/// `result_root` line (the one a root written before the mark had, or lkp's own of a job run again).
fn job_yaml_without_result_root(job_yaml: &str) -> String {
    job_yaml
        .lines()
        .take_while(|line| *line != WRITTEN_MARK)
        .filter(|line| !line.starts_with("result_root:"))
        .flat_map(|line| [line, "\n"])
        .collect()
}

/// The files [`write_run_directory`] writes of its own: every other file of a run directory Culprit wrote is one of
/// the run's raw outputs, which an import stores back as such.
const WRITTEN_RUN_FILES: [&str; 7] =
    [STATS_FILE, MATRIX_FILE, JOB_FILE, FAILURE_FILE, STDERR_FILE, IMPORT_KEY_FILE, SCRATCH_FILE];

fn write_run_directory(
    root: &Path,
    path_params: &str,
    run: &RunRecord,
    local: &Build,
    import_key: Option<&str>,
) -> Result<PathBuf, ResultRootError> {
    let build = build_levels(&run.params, local);
    let revision_directory =
        revision_dir(root, &run.testcase, path_params, &run.machine.hostname, &build, run.revision.key());
    create_dir(&revision_directory)?;
    let index = run_indices(&revision_directory)?.last().map_or(0, |last| last + 1);
    let run_directory = revision_directory.join(index.to_string());
    create_dir(&run_directory)?;

    let mut stats: Map<String, Value> = run.metrics.iter().map(|(k, v)| (k.clone(), number(*v))).collect();
    let failure = match &run.outcome {
        RunOutcome::Failed { reason } => Some(reason),
        RunOutcome::Ok => None,
    };
    if failure.is_some() {
        // A failed run keeps the metrics it has (its times, what a monitor saw), so only lkp's marks in its stats
        // tell it from a successful one: without them lkp's tools and an import read it as a run that succeeded.
        stats.insert(INCOMPLETE_RUN_KEY.to_string(), number(1.0));
        if run.exit_code.is_some_and(|code| code != 0) {
            stats.insert(EXIT_FAIL_KEY.to_string(), number(1.0));
        }
    }
    write_json(&run_directory.join(STATS_FILE), &Value::Object(stats))?;
    if let Some(reason) = failure {
        write_atomically(&run_directory.join(FAILURE_FILE), reason.as_bytes())?;
    }
    if !run.stderr.is_empty() {
        write_atomically(&run_directory.join(STDERR_FILE), run.stderr.as_bytes())?;
    }
    if !run.monitors.is_empty() {
        write_json(&run_directory.join(MATRIX_FILE), &Value::Object(monitor_matrix(&run.monitors)))?;
    }
    if let Some(scratch) = &run.scratch {
        let value = serde_json::to_value(scratch)
            .map_err(|e| ResultRootError::Json { path: run_directory.join(SCRATCH_FILE), reason: e.to_string() })?;
        write_json(&run_directory.join(SCRATCH_FILE), &value)?;
    }
    let absolute_run_directory = std::path::absolute(&run_directory).unwrap_or_else(|_| run_directory.clone());
    let job_yaml = job_yaml_with_result_root(run, &absolute_run_directory, import_key.is_some());
    write_atomically(&run_directory.join(JOB_FILE), job_yaml.as_bytes())?;
    if let Some(key) = import_key {
        write_atomically(&run_directory.join(IMPORT_KEY_FILE), key.as_bytes())?;
    }
    for raw in &run.raw_outputs {
        let name = safe_component(&raw.name);
        // The lkp files this module owns must not be overwritten by a raw output that happens to share a name.
        if WRITTEN_RUN_FILES.contains(&name.as_str()) {
            continue;
        }
        write_atomically(&run_directory.join(name), &raw.content)?;
    }
    write_revision_summary(&revision_directory)?;
    Ok(run_directory)
}

/// Rebuilds a revision directory's `matrix.json`, `avg.json` and `stddev.json` from its runs' `stats.json`.
pub fn write_revision_summary(revision_directory: &Path) -> Result<(), ResultRootError> {
    let mut matrix: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut sources = Vec::new();
    let mut columns = 0usize;
    for index in run_indices(revision_directory)? {
        let stats_path = revision_directory.join(index.to_string()).join(STATS_FILE);
        if !stats_path.is_file() {
            continue;
        }
        let stats = read_number_map(&stats_path)?;
        for (name, value) in stats {
            let values = matrix.entry(name).or_default();
            values.resize(columns, 0.0);
            values.push(value);
        }
        sources.push(Value::String(stats_path.display().to_string()));
        columns += 1;
    }
    let mut matrix_json = Map::new();
    let mut averages = Map::new();
    let mut deviations = Map::new();
    for (name, values) in &matrix {
        matrix_json.insert(name.clone(), Value::Array(values.iter().map(|v| number(*v)).collect()));
        let mut filled = values.clone();
        filled.resize(columns, 0.0);
        let (mean, deviation) = mean_and_population_stddev(&filled);
        averages.insert(name.clone(), number(mean));
        deviations.insert(name.clone(), number(deviation));
    }
    matrix_json.insert(STATS_SOURCE_KEY.to_string(), Value::Array(sources));
    write_json(&revision_directory.join(MATRIX_FILE), &Value::Object(matrix_json))?;
    write_json(&revision_directory.join(AVG_FILE), &Value::Object(averages))?;
    write_json(&revision_directory.join(STDDEV_FILE), &Value::Object(deviations))?;
    Ok(())
}

/// lkp's `avg.json` and `stddev.json` entries: the mean and the population standard deviation (0 for one value).
fn mean_and_population_stddev(values: &[f64]) -> (f64, f64) {
    let mean = culprit_core::stats::mean(values).unwrap_or(0.0);
    (mean, culprit_core::stats::population_stddev(values).unwrap_or(0.0))
}

/// Monitor series as lkp's per-run `matrix.json`: `<monitor>.time` and `<monitor>.<key>` arrays.
fn monitor_matrix(monitors: &[MonitorSeries]) -> Map<String, Value> {
    let mut matrix = Map::new();
    for monitor in monitors {
        let array = |values: &[f64]| Value::Array(values.iter().map(|v| number(*v)).collect());
        matrix.insert(format!("{}.time", monitor.monitor), array(&monitor.times));
        for (key, samples) in &monitor.series {
            matrix.insert(format!("{}.{}", monitor.monitor, key), array(samples));
        }
    }
    matrix
}

/// A JSON number as lkp writes it: integral values without a fraction, NaN and infinities as null (JSON has
/// no spelling for them).
fn number(value: f64) -> Value {
    if value.is_finite() && value.fract() == 0.0 && value.abs() < 9.0e15 {
        Value::Number(Number::from(value as i64))
    } else {
        Number::from_f64(value).map_or(Value::Null, Value::Number)
    }
}

/// The numeric run directories of a revision directory, ascending.
fn run_indices(revision_directory: &Path) -> Result<Vec<u64>, ResultRootError> {
    let mut indices = Vec::new();
    if !revision_directory.is_dir() {
        return Ok(indices);
    }
    for entry in read_dir(revision_directory)? {
        if entry.path().is_dir() {
            if let Some(index) = entry.file_name().to_str().and_then(|n| n.parse::<u64>().ok()) {
                indices.push(index);
            }
        }
    }
    indices.sort_unstable();
    Ok(indices)
}

fn read_dir(directory: &Path) -> Result<Vec<std::fs::DirEntry>, ResultRootError> {
    let io_error = |error| ResultRootError::Io { path: directory.to_path_buf(), action: "list the directory", error };
    let mut entries =
        std::fs::read_dir(directory).map_err(io_error)?.collect::<Result<Vec<_>, _>>().map_err(io_error)?;
    entries.sort_by_key(|e| e.file_name());
    Ok(entries)
}

fn create_dir(directory: &Path) -> Result<(), ResultRootError> {
    std::fs::create_dir_all(directory).map_err(|error| ResultRootError::Io {
        path: directory.to_path_buf(),
        action: "create the directory",
        error,
    })
}

fn write_json(path: &Path, value: &Value) -> Result<(), ResultRootError> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| ResultRootError::Json { path: path.to_path_buf(), reason: e.to_string() })?;
    text.push('\n');
    write_atomically(path, text.as_bytes())
}

fn write_atomically(path: &Path, content: &[u8]) -> Result<(), ResultRootError> {
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary = path.with_file_name(format!(".{file_name}.tmp"));
    let write = || -> std::io::Result<()> {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(content)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    };
    write().map_err(|error| {
        let _ = std::fs::remove_file(&temporary);
        ResultRootError::Io { path: path.to_path_buf(), action: "write", error }
    })
}

/// Reads a JSON file, gunzipping it first when its name ends in `.gz` (lkp compresses a run's `matrix.json` and may
/// compress a monitor's JSON, and its own `load_json` reads either).
fn read_json(path: &Path) -> Result<Value, ResultRootError> {
    let bytes = read_root_file_unpacked(path)?;
    serde_json::from_slice(&quote_non_finite(&bytes))
        .map_err(|e| ResultRootError::Json { path: path.to_path_buf(), reason: e.to_string() })
}

/// lkp writes its JSON with Ruby's `allow_nan: true`, so a value that came out NaN or infinite is a bare `NaN`,
/// `Infinity` or `-Infinity`, which JSON has no spelling for: read as it is, one such entry made the whole file
/// unreadable and its run was skipped. Outside strings, each becomes a string of itself, which the readers then leave
/// out with a warning naming the file and the key, as any entry that is not a number.
fn quote_non_finite(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    const TOKENS: [&[u8]; 3] = [b"-Infinity", b"Infinity", b"NaN"];
    if !TOKENS.iter().any(|token| bytes.windows(token.len()).any(|window| window == *token)) {
        return std::borrow::Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len() + 16);
    let (mut in_string, mut escaped, mut i) = (false, false, 0);
    while i < bytes.len() {
        let byte = bytes[i];
        if in_string {
            out.push(byte);
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if byte == b'"' {
            in_string = true;
        } else if let Some(token) = TOKENS.iter().find(|token| bytes[i..].starts_with(token)) {
            out.push(b'"');
            out.extend_from_slice(token);
            out.push(b'"');
            i += token.len();
            continue;
        }
        out.push(byte);
        i += 1;
    }
    std::borrow::Cow::Owned(out)
}

/// The most a gzipped file of a result root may hold once unpacked: the bound of any file read plain
/// ([`MAX_FILE_BYTES`]). lkp's largest, a long run's `matrix.json`, holds some tens of megabytes; the bound keeps a
/// damaged or hostile file from filling the memory.
const MAX_GUNZIPPED_BYTES: u64 = MAX_FILE_BYTES;

/// A file of a result root ([`read_root_file`]), unpacked when its name ends in `.gz`: lkp gzips a run's
/// `matrix.json`, and may gzip a monitor's JSON or raw output. A file that does not unpack is a
/// [`ResultRootError::Json`] naming it.
fn read_root_file_unpacked(path: &Path) -> Result<Vec<u8>, ResultRootError> {
    let bytes = read_root_file(path)?;
    if path.extension().is_none_or(|extension| extension != "gz") {
        return Ok(bytes);
    }
    let json_error = |reason: String| ResultRootError::Json { path: path.to_path_buf(), reason };
    match read_limited(flate2::read::MultiGzDecoder::new(&bytes[..]), MAX_GUNZIPPED_BYTES, false) {
        Ok(Limited::Whole(unpacked)) => Ok(unpacked),
        Ok(Limited::TooLarge | Limited::Nul(_)) => {
            Err(json_error(format!("it unpacks to more than {MAX_GUNZIPPED_BYTES} bytes")))
        }
        Err(error) => Err(json_error(format!("not a readable gzip file ({error})"))),
    }
}

/// The path of an lkp JSON file of a directory: `name` itself, or else its gzipped `name.gz`; `None` when neither is
/// a file.
fn json_file(directory: &Path, name: &str) -> Option<PathBuf> {
    [directory.join(name), directory.join(format!("{name}.gz"))].into_iter().find(|path| path.is_file())
}

/// Reads a flat `metric: number` object; entries that are not numbers are skipped. Used for the `stats.json` files
/// this module wrote itself; an imported one is read by [`read_stats`], which reports such entries.
fn read_number_map(path: &Path) -> Result<BTreeMap<String, f64>, ResultRootError> {
    read_stats(path).map(|(metrics, _)| metrics)
}

/// A `stats.json` entry whose value is not a number, and what it is instead.
struct NotANumber {
    key: String,
    found: String,
}

/// Reads a run's flat `metric: number` object: the numeric entries, and the entries that are not numbers (a string,
/// an array, `null`), which the caller reports rather than storing a run that silently lacks them.
fn read_stats(path: &Path) -> Result<(BTreeMap<String, f64>, Vec<NotANumber>), ResultRootError> {
    let Value::Object(map) = read_json(path)? else {
        return Err(ResultRootError::Json { path: path.to_path_buf(), reason: "expected an object of metrics".into() });
    };
    let mut metrics = BTreeMap::new();
    let mut rejected = Vec::new();
    for (key, value) in map {
        match value.as_f64() {
            Some(number) => {
                metrics.insert(key, number);
            }
            None => rejected.push(NotANumber { key, found: shortened(&value.to_string()) }),
        }
    }
    Ok((metrics, rejected))
}

/// A JSON value as a message quotes it: at most 40 characters.
fn shortened(found: &str) -> String {
    if found.chars().count() > 40 {
        found.chars().take(40).collect::<String>() + "..."
    } else {
        found.to_string()
    }
}

/// Who a run of an imported job belongs to. The store cannot compute Culprit's stable job id (that is
/// culprit-job's business), so the importer asks the caller through [`ImportOptions::identify`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobIdentity {
    pub job_id: String,
    pub job_name: String,
}

/// What the importer knows about a job when it asks for its identity.
#[derive(Debug, Clone, Copy)]
pub struct ImportedJob<'a> {
    pub testcase: &'a str,
    pub path_params: &'a str,
    /// The run's `job.yaml`, when the root has one.
    pub job_yaml: Option<&'a str>,
    pub params: &'a [(String, String)],
}

/// The identity used when the caller gives none: `lkp:<testcase>/<path_params>`, named `<testcase>-<path_params>`.
pub fn default_identity(job: &ImportedJob<'_>) -> JobIdentity {
    JobIdentity {
        job_id: format!("{DEFAULT_ID_PREFIX}{}/{}", job.testcase, job.path_params),
        job_name: format!("{}-{}", job.testcase, job.path_params),
    }
}

/// The path_params of a job id [`default_identity`] made (a run imported without a job.yaml Culprit could read);
/// `None` for any other id, or an empty path_params.
pub fn default_identity_path_params(job_id: &str) -> Option<&str> {
    let (_testcase, path_params) = job_id.strip_prefix(DEFAULT_ID_PREFIX)?.split_once('/')?;
    (!path_params.is_empty()).then_some(path_params)
}

/// How a job id [`default_identity`] made begins.
const DEFAULT_ID_PREFIX: &str = "lkp:";

/// How to read a result root.
#[derive(Default)]
pub struct ImportOptions<'a> {
    /// The testcase of every run, when the root is too shallow to hold it.
    pub testcase: Option<String>,
    /// The path_params of every run, when the root is too shallow to hold it.
    pub path_params: Option<String>,
    /// Computes the job identity; [`default_identity`] when `None`.
    pub identify: Option<&'a dyn Fn(&ImportedJob<'_>) -> JobIdentity>,
    /// Reads a monitor's raw output into its series, for a run whose monitor has neither its lkp JSON nor a place in
    /// the run's `matrix.json`; raw outputs are not read when `None`.
    pub parse_monitor: Option<&'a dyn MonitorParser>,
    /// Reads a benchmark's raw output into the run's metrics, for a run directory without `stats.json` (lkp's
    /// post-processing failed, or the file was lost) that kept it; such runs are skipped when `None`.
    pub parse_benchmark: Option<&'a dyn BenchmarkParser>,
}

/// Reads benchmarks' raw outputs into a run's metrics, as Culprit's runs read them: the parsers are culprit-parse's
/// business, so the importer asks the caller, as for monitors.
pub trait BenchmarkParser {
    /// The program whose raw output a run directory's file `file_name` (less `.gz`) is, when Culprit parses it:
    /// `stress-ng` for `stress-ng`, `fio` for `fio.output` and `fio.output.1`. Asked before any file is read.
    fn program_of(&self, file_name: &str) -> Option<String>;
    /// The run's metrics (`<program>.<key>`) from the program's raw output files, by file name; or why they do not
    /// read (missing lines, a truncated or garbage output).
    fn metrics(&self, program: &str, files: &BTreeMap<String, String>) -> Result<BTreeMap<String, f64>, String>;
}

/// Reads monitors' raw outputs into their series. The parsers are culprit-parse's business, so the importer asks the
/// caller, as for the job identity.
pub trait MonitorParser {
    /// Whether `monitor` (the name of a file in a run directory, less `.gz`: `vmstat`, `perf-stat`) is a time-series
    /// monitor whose raw output [`MonitorParser::parse`] reads. Asked before the file is read, so that the other raw
    /// outputs of a run, some of them large, are never read.
    fn reads(&self, monitor: &str) -> bool;
    /// The monitor's series from its raw output, or the reason the text does not read.
    fn parse(&self, monitor: &str, text: &str) -> Result<MonitorSeries, String>;
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImportReport {
    /// Runs stored by this import, in the order found.
    pub imported: Vec<RunId>,
    /// Runs that an earlier import had already stored.
    pub already_stored: Vec<RunId>,
    /// Directories that looked like runs but could not be read, with the reason; the rest of the root was
    /// still imported.
    pub skipped: Vec<(PathBuf, String)>,
    /// Runs imported without some of their entries, each message naming the file and the key.
    pub warnings: Vec<String>,
    /// How many runs of each job, revision and machine this import stored, and found already stored: what a root of
    /// several jobs and commits held, for the summary the caller prints.
    pub groups: BTreeMap<ImportGroup, GroupCounts>,
    /// The builds (lkp's rootfs/kconfig/compiler levels, joined by `/`) each group's runs came from. A job, commit and
    /// machine of more than one build gets a warning: kconfig and compiler are not part of a job's identity (as for
    /// `culprit run`), so its runs are one job's, built two ways, which compare tells apart by the rootfs, kconfig and
    /// compiler each run's job.yaml records.
    pub builds: BTreeMap<ImportGroup, std::collections::BTreeSet<String>>,
    /// The groups with a run that records no build (no rootfs, kconfig or compiler param: imported without its
    /// job.yaml), whose builds compare cannot tell apart.
    pub unrecorded_builds: std::collections::BTreeSet<ImportGroup>,
    /// The run directories without `stats.json` whose metrics this import read from their raw outputs with Culprit's
    /// parsers (benchmark and monitors), in the order found; the caller's summary names them.
    pub from_raw_outputs: Vec<PathBuf>,
}

/// One job's runs at one revision on one machine.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ImportGroup {
    pub job_name: String,
    /// The revision's key: the commit's SHA, or the label.
    pub revision: String,
    pub hostname: String,
}

/// The runs of one [`ImportGroup`] an import stored, and those it found already stored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GroupCounts {
    pub imported: usize,
    pub already_stored: usize,
}

/// Why a run directory without `stats.json` is skipped.
const NO_STATS_REASON: &str = "no stats.json: the run did not finish (lkp and Culprit write stats.json when a run \
                               ends) or the file was removed; restore the file or remove the directory, and import again";

/// Imports every run under `root` into `store`. Each run is its own transaction, so an error in one file
/// skips that run (listed in the report) and never half-stores it; re-importing stores nothing twice.
pub fn import(
    store: &mut dyn Store,
    root: &Path,
    options: &ImportOptions<'_>,
) -> Result<ImportReport, ResultRootError> {
    if !root.is_dir() {
        let (kind, what) = if root.exists() {
            (std::io::ErrorKind::InvalidInput, "it is not a directory; give the top directory of an lkp result root")
        } else {
            (std::io::ErrorKind::NotFound, "it does not exist; give the top directory of an lkp result root")
        };
        return Err(ResultRootError::Io {
            path: root.to_path_buf(),
            action: "import",
            error: std::io::Error::new(kind, what),
        });
    }
    // `.` and `..` name no directory of the tree (a run's or commit's directory is known by its name): their canonical
    // path does.
    let canonical;
    let root = match root.file_name() {
        Some(_) => root,
        None => {
            canonical = std::fs::canonicalize(root).map_err(|error| ResultRootError::Io {
                path: root.to_path_buf(),
                action: "import",
                error,
            })?;
            canonical.as_path()
        }
    };
    let mut report = ImportReport::default();
    if is_run_dir(root, options) {
        // The root is one run directory: import that run alone (its siblings were not asked for). Its path says
        // nothing about the testcase and path_params, which the root's upper levels hold.
        // A run directory given by its name alone (`culprit import 0` in its commit's directory) has no parent in
        // its path; its canonical path has.
        let parent = root.parent().filter(|p| !p.as_os_str().is_empty()).map(Path::to_path_buf);
        let parent = parent.or_else(|| std::fs::canonicalize(root).ok()?.parent().map(Path::to_path_buf));
        if let Some(revision_directory) = parent {
            let runs = vec![root.to_path_buf()];
            import_runs(store, root, &revision_directory, &runs, options, &mut report, &mut FormerKeys::new())?;
        }
        return Ok(report);
    }
    if looks_like_run_dir(root) {
        report.skipped.push((root.to_path_buf(), NO_STATS_REASON.to_string()));
        return Ok(report);
    }
    let mut revision_directories = Vec::new();
    find_revision_dirs(root, options, &mut revision_directories, &mut report.skipped, 0)?;
    let mut former_keys = FormerKeys::new();
    for revision_directory in revision_directories {
        import_revision_dir(store, root, &revision_directory, options, &mut report, &mut former_keys)?;
    }
    warn_of_pooled_builds(&mut report);
    Ok(report)
}

/// Tells of each job, commit and machine whose runs came from more than one build (lkp's kconfig, compiler or rootfs
/// levels): a job's identity leaves them out, so the builds' runs are stored under one job, and `compare` gives each
/// build its own table, as lkp does, by the rootfs, kconfig and compiler the runs' job.yaml records. A run imported
/// without its job.yaml records no build, so its builds cannot be told apart: the warning says so for those.
fn warn_of_pooled_builds(report: &mut ImportReport) {
    for (group, builds) in &report.builds {
        if builds.len() < 2 {
            continue;
        }
        let what = if report.unrecorded_builds.contains(group) {
            "but some runs record no rootfs, kconfig and compiler (no job.yaml names them, and the tree's levels are \
             not lkp's), so compare reads those builds' runs as one side; import each build's runs into a store of \
             its own (--db) to compare one build across commits"
        } else {
            "and compare gives each build its own table (by the rootfs, kconfig and compiler each run records)"
        };
        let builds: Vec<&str> = builds.iter().map(String::as_str).collect();
        report.warnings.push(format!(
            "{} at {} on {}: runs of {} builds ({}) are stored under one job, {what}",
            group.job_name,
            group.revision,
            group.hostname,
            builds.len(),
            builds.join(", ")
        ));
    }
}

/// Files lkp writes into a run directory, besides `job.yaml`, whether or not the run finished: the job's script and
/// the outputs of the run's first steps. Each may be gzipped or xz-compressed.
const LKP_RUN_FILES: [&str; 6] = ["reproduce.sh", "job.sh", "output", "time", "kmsg", "dmesg"];

/// Whether a directory without `stats.json` is a run directory all the same (an unfinished or damaged run) rather
/// than a level of the tree: it holds the run's `job.yaml`, or it is numbered like a run and either sits inside a
/// revision directory (one with the revision's `matrix.json` or `avg.json`) or holds a file lkp writes into every run
/// ([`LKP_RUN_FILES`]). Such a directory must never be read as a revision, whose `matrix.json` columns would become
/// invented runs.
fn looks_like_run_dir(directory: &Path) -> bool {
    if directory.join(STATS_FILE).is_file() {
        return false;
    }
    if directory.join(JOB_FILE).is_file() {
        return true;
    }
    let numbered = directory
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let in_revision = || {
        let summary = |parent: &Path| json_file(parent, MATRIX_FILE).is_some() || parent.join(AVG_FILE).is_file();
        directory.parent().is_some_and(summary)
    };
    let holds_lkp_file = || {
        LKP_RUN_FILES.iter().any(|name| {
            ["", ".gz", ".xz"].iter().any(|suffix| directory.join(format!("{name}{suffix}")).is_file())
        })
    };
    numbered && (in_revision() || holds_lkp_file())
}

/// Whether a directory is a run to import: it holds `stats.json`, or it is a run directory without one
/// ([`looks_like_run_dir`]) that kept a raw benchmark output the caller's parser reads ([`raw_benchmark_files`]).
fn is_run_dir(directory: &Path, options: &ImportOptions<'_>) -> bool {
    directory.join(STATS_FILE).is_file()
        || (options.parse_benchmark.is_some()
            && looks_like_run_dir(directory)
            && !raw_benchmark_files(directory, options).is_empty())
}

/// The raw benchmark outputs of a run directory that the caller's parser reads, each as (program, file name less
/// `.gz`, path), in name order; where both the plain and the gzipped file are there, the plain one.
fn raw_benchmark_files(directory: &Path, options: &ImportOptions<'_>) -> Vec<(String, String, PathBuf)> {
    let Some(parser) = options.parse_benchmark else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir(directory) else { return Vec::new() };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Some(file_name) = entry.file_name().to_str().map(str::to_string) else { continue };
        let name = file_name.strip_suffix(".gz").unwrap_or(&file_name).to_string();
        if name.is_empty() || name.starts_with('.') || (file_name != name && directory.join(&name).is_file()) {
            continue;
        }
        if let Some(program) = parser.program_of(&name).filter(|_| entry.path().is_file()) {
            found.push((program, name, entry.path()));
        }
    }
    found.sort_by(|a, b| a.1.cmp(&b.1));
    found
}

/// lkp roots are at most about ten levels deep; the bound keeps a symlink loop from recursing forever.
const MAX_DEPTH: usize = 16;

/// Collects directories holding runs: the parents of `stats.json` files, and directories with a `matrix.json`
/// but no run subdirectories. Run directories without `stats.json` go to `skipped`, named.
fn find_revision_dirs(
    directory: &Path,
    options: &ImportOptions<'_>,
    found: &mut Vec<PathBuf>,
    skipped: &mut Vec<(PathBuf, String)>,
    depth: usize,
) -> Result<(), ResultRootError> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    let entries = read_dir(directory)?;
    let subdirectories: Vec<PathBuf> = entries.iter().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    let has_runs = subdirectories.iter().any(|d| is_run_dir(d, options));
    if has_runs || (json_file(directory, MATRIX_FILE).is_some() && depth > 0) {
        found.push(directory.to_path_buf());
    }
    for subdirectory in subdirectories {
        if is_run_dir(&subdirectory, options) {
            continue;
        }
        if looks_like_run_dir(&subdirectory) {
            skipped.push((subdirectory, NO_STATS_REASON.to_string()));
        } else {
            find_revision_dirs(&subdirectory, options, found, skipped, depth + 1)?;
        }
    }
    Ok(())
}

/// Where a revision directory sits: its testcase, path_params, host and revision key.
struct Placement {
    testcase: String,
    path_params: String,
    hostname: Option<String>,
    /// The levels between the host and the revision (lkp's rootfs, kconfig and compiler), when there are any: one
    /// commit's runs of two kconfigs are two sets of runs, which the import keys must tell apart.
    lower_levels: Vec<String>,
    /// The rootfs, kconfig and compiler of an lkp tree's levels (not of a tree Culprit wrote, whose levels are the
    /// machine's and not the run's params), which a run whose job.yaml names none of them is recorded with.
    lkp_build: Option<crate::Build>,
    revision_key: String,
}

/// The build an lkp tree's levels name (testcase, path_params, tbox_group, rootfs, kconfig, compiler).
fn build_of_lkp_levels(levels: &[String]) -> Option<crate::Build> {
    match levels {
        [_, _, _, rootfs, kconfig, compiler, ..] => {
            Some(crate::Build { rootfs: rootfs.clone(), kconfig: kconfig.clone(), compiler: compiler.clone() })
        }
        _ => None,
    }
}

/// The import keys of this import that stand in for the key an earlier importer gave a run: (job id, revision key,
/// key). See [`lkp_import_keys`].
type FormerKeys = std::collections::BTreeSet<(String, String, String)>;

/// The import key of an lkp run, and the key an earlier importer stored it under when that was another.
///
/// An lkp run is known by its machine, the levels between the machine and the commit, and its run directory:
/// `lkp:<host>/<rootfs>/<kconfig>/<compiler>/<run>`. Importers before the levels were part of the key used
/// `lkp:<host>/<run>` alone, under which the runs of a second kconfig or compiler of the same commit read as stored
/// already and were lost. A run stored under that former key is this run when its job.yaml is this run's (the store
/// checks: lkp's job.yaml records the kconfig, compiler and result_root). A run without a job.yaml cannot be told
/// apart so; such an importer went through the tree in the order this one does, so only the first of them met for
/// each job, commit, host and run name (the one it stored) is offered the former key.
fn lkp_import_keys(
    place: &Placement,
    record: &RunRecord,
    run_name: &str,
    former_keys: &mut FormerKeys,
) -> (String, Option<String>) {
    let plain = format!("lkp:{}/{run_name}", record.machine.hostname);
    if place.lower_levels.is_empty() {
        return (plain, None);
    }
    let key = format!("lkp:{}/{}/{run_name}", record.machine.hostname, place.lower_levels.join("/"));
    let offered = !record.job_yaml.is_empty()
        || former_keys.insert((record.job_id.clone(), record.revision.key().to_string(), plain.clone()));
    (key, offered.then_some(plain))
}

/// How many directory levels lkp's result root has down to a commit: `<testcase>/<path_params>/<tbox_group>/<rootfs>/
/// <kconfig>/<compiler>/<commit>` (lkp's `result_root`, less the run's own number).
const LKP_LEVELS: usize = 7;

/// What the job.yaml of an lkp run says of its place: lkp's finished job records its `result_root`
/// (`/result/<testcase>/.../<commit>/<run>`) and its testcase.
#[derive(Default)]
struct JobPlace {
    result_root: Option<String>,
    testcase: Option<String>,
    /// The machine of a run Culprit wrote, by its import key ([`own_import_key`]), which names its host level.
    host: Option<String>,
}

impl JobPlace {
    /// The place the runs' job.yaml files record, each read from the first run whose job.yaml has it (the runs of
    /// one commit directory are of one job): a run whose job.yaml is missing or not YAML is passed over rather than
    /// taken for a job of no place, which read a root Culprit wrote in its older layout and stored the runs under a
    /// job named after the build levels on a machine named after the compiler (QA 58).
    fn of(runs: &[FoundRun]) -> JobPlace {
        let params: Vec<Vec<(String, String)>> =
            runs.iter().filter_map(|run| run.job_yaml.as_deref()).map(flatten_job_params).collect();
        let param = |name: &str| {
            let value_in = |p: &Vec<(String, String)>| p.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
            params.iter().find_map(|p| value_in(p).filter(|v| !v.is_empty()))
        };
        let host = runs.iter().find_map(|run| own_key_parts(run.import_key.as_deref()?).map(|(host, _)| host));
        JobPlace { result_root: param("result_root"), testcase: param("testcase"), host }
    }
}

/// The machine and job id an import key of [`own_import_key`] holds (`culprit:<host>/<job id>/<start>`).
fn own_key_parts(key: &str) -> Option<(String, String)> {
    let mut parts = key.strip_prefix("culprit:")?.split('/');
    let (host, job_id) = (parts.next()?, parts.next()?);
    (!host.is_empty() && !job_id.is_empty()).then(|| (host.to_string(), job_id.to_string()))
}

/// The testcase, path_params and tbox_group of an lkp commit directory, read in lkp's layout from the commit up, when
/// the layout is sure to be lkp's: the directory given holds all of it (`/result`, or a directory above it), or the
/// run's job.yaml records the `result_root` the commit directory is of, or the directory's full path (canonical, so
/// that a relative path given from inside the tree shows the levels above it too) has lkp's levels with either the
/// testcase its job.yaml names at the top or a commit and build levels named as lkp names them (a 40-hex commit
/// below a `gcc-12` compiler or a `....cgz` rootfs level). `None` when nothing says so; the path is then read from
/// the top, as for a tree of fewer levels.
fn lkp_levels(relative: &[String], revision_directory: &Path, job: &JobPlace) -> Option<Vec<String>> {
    // The six levels above the commit: testcase, path_params, tbox_group, rootfs, kconfig and compiler.
    let levels = |components: &[String]| -> Option<Vec<String>> {
        let top = components.len().checked_sub(LKP_LEVELS)?;
        Some(components[top..components.len() - 1].to_vec())
    };
    if relative.len() >= LKP_LEVELS {
        return levels(relative);
    }
    let full = full_path_names(revision_directory)?;
    let commit = full.last()?;
    if let Some(result_root) = &job.result_root {
        let recorded = path_names(Path::new(result_root));
        // The recorded run directory ends in `<commit>/<run>`; it names this directory only if its commit is this one.
        if recorded.len() > LKP_LEVELS && &recorded[recorded.len() - 2] == commit {
            return levels(&recorded[..recorded.len() - 1]);
        }
    }
    let found = levels(&full)?;
    let named = job.testcase.as_deref() == Some(found[0].as_str());
    // Without a job.yaml (a tree copied with its stats.json and matrix.json alone) the names of the levels are the
    // only sign. lkp's commit directories are full SHAs and its compiler and rootfs levels are named in ways a
    // testcase, path_params or test box hardly is, so a 40-hex directory below either is lkp's commit directory.
    let shaped = is_commit_sha(commit)
        && (lkp_build_level(&found[5]) == Some("compiler") || lkp_build_level(&found[3]) == Some("rootfs"));
    (named || shaped).then_some(found)
}

/// The levels above a revision directory `culprit run --result-root` wrote: lkp's six (testcase, path_params, host,
/// rootfs, kconfig, compiler; see [`revision_dir`]) read from the `result_root` its runs' job.yaml records, or, for a
/// root written before Culprit wrote the build levels (no `result_root`), the three of its older layout
/// (`<testcase>/<path_params>/<host>/<revision>`) read from the directory's full path. Either way the layout is
/// Culprit's own, so the levels are known wherever the directory given is.
fn culprit_levels(revision_directory: &Path, job: &JobPlace) -> Option<Vec<String>> {
    let full = full_path_names(revision_directory)?;
    let commit = full.last()?;
    if let Some(result_root) = &job.result_root {
        let recorded = path_names(Path::new(result_root));
        if recorded.len() > LKP_LEVELS && &recorded[recorded.len() - 2] == commit {
            return Some(recorded[recorded.len() - 1 - LKP_LEVELS..recorded.len() - 2].to_vec());
        }
    }
    // Without a recorded `result_root` (every run's job.yaml lost), the machine level tells the layouts apart: the
    // import key names the machine, which sits four levels above the commit in the layout with build levels, one
    // above it in the older one. Neither: the levels cannot be told, which is said rather than guessed.
    if let Some(host) = &job.host {
        let at = |from_end: usize| full.len().checked_sub(from_end).and_then(|i| full.get(i));
        if at(5) == Some(&safe_component(host)) {
            return Some(full[full.len() - LKP_LEVELS..full.len() - 1].to_vec());
        }
        if at(2) != Some(&safe_component(host)) {
            return None;
        }
    }
    let top = full.len().checked_sub(4)?;
    Some(full[top..full.len() - 1].to_vec())
}

/// The names of a path's directories, the root and any `.` or `..` left out.
fn path_names(path: &Path) -> Vec<String> {
    path.components()
        .filter(|c| matches!(c, std::path::Component::Normal(_)))
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect()
}

/// The names of a directory's full path: its canonical path, so that `.`, `..` and a relative path given from inside
/// a tree still show the levels above it, or its absolute path when it cannot be resolved.
fn full_path_names(path: &Path) -> Option<Vec<String>> {
    let full = std::fs::canonicalize(path).or_else(|_| std::path::absolute(path)).ok()?;
    Some(path_names(&full))
}

/// Whether a directory name is a commit's full SHA, as lkp names its commit directories.
fn is_commit_sha(name: &str) -> bool {
    name.len() == 40 && name.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Which of lkp's build levels a directory is named as: lkp names its compiler level after the compiler and its
/// version (`gcc-12`, `clang-18`) and its rootfs level after the initramfs image (`debian-12-x86_64-20240206.cgz`).
fn lkp_build_level(name: &str) -> Option<&'static str> {
    let versioned = |prefix: &str| {
        name.strip_prefix(prefix).is_some_and(|version| {
            let digits = version.bytes().all(|b| b.is_ascii_digit() || b == b'.');
            version.starts_with(|c: char| c.is_ascii_digit()) && digits
        })
    };
    if versioned("gcc-") || versioned("clang-") {
        Some("compiler")
    } else if name.len() > ".cgz".len() && name.ends_with(".cgz") {
        Some("rootfs")
    } else {
        None
    }
}

fn placement(
    root: &Path,
    revision_directory: &Path,
    options: &ImportOptions<'_>,
    culprit_written: bool,
    job: &JobPlace,
) -> Result<Placement, ResultRootError> {
    let relative: Vec<String> = revision_directory
        .strip_prefix(root)
        .unwrap_or(revision_directory)
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let revision_key =
        revision_directory.file_name().map(|n| n.to_string_lossy().into_owned()).ok_or(ResultRootError::Layout {
            path: revision_directory.to_path_buf(),
            what: "revision",
            hint: "import the directory that contains the commit directories",
        })?;
    // An lkp tree read from anywhere above or inside it: lkp's levels from the commit up. Runs `culprit run
    // --result-root` wrote are read from the revision directory up too, wherever the given directory is: read from
    // the top, a directory holding several machines' roots (`results/<box>/`, as a farm collects them) took the
    // root's name for the testcase and the path_params for the host, and stored every machine's runs as one's.
    let lkp = match culprit_written {
        true => culprit_levels(revision_directory, job),
        false => lkp_levels(&relative, revision_directory, job),
    };
    let full = relative.len() >= 4;
    if lkp.is_none() && full && !culprit_written {
        refuse_lkp_build_levels(revision_directory, &relative)?;
    }
    let lower_levels = match &lkp {
        Some(levels) => levels[3..].to_vec(),
        None if full => relative[3..relative.len() - 1].to_vec(),
        None => Vec::new(),
    };
    let from_path = |index: usize| match &lkp {
        Some(levels) => levels.get(index).cloned(),
        None if full => relative.get(index).cloned(),
        None => None,
    };
    let testcase = options.testcase.clone().or_else(|| from_path(0)).ok_or(ResultRootError::Layout {
        path: revision_directory.to_path_buf(),
        what: "testcase",
        hint: "import from the root of a <testcase>/<path_params>/<host>/.../<commit> tree (the directory given to --result-root, or lkp's result root), which names it",
    })?;
    let path_params = options.path_params.clone().or_else(|| from_path(1)).ok_or(ResultRootError::Layout {
        path: revision_directory.to_path_buf(),
        what: "path_params",
        hint: "import from the root of a <testcase>/<path_params>/<host>/.../<commit> tree (the directory given to --result-root, or lkp's result root), which names it",
    })?;
    let lkp_build = lkp.as_deref().filter(|_| !culprit_written).and_then(build_of_lkp_levels);
    Ok(Placement { testcase, path_params, hostname: from_path(2), lower_levels, lkp_build, revision_key })
}

/// Refuses a commit directory read from the top of the directory given (`relative`, the levels from there down to the
/// commit) when the level read as its testcase, path_params or machine is named as lkp names its rootfs or compiler:
/// the directory given is then inside an lkp tree whose upper levels could not be placed ([`lkp_levels`]), and its
/// runs would be stored a second time, under an invented job on a machine named after a rootfs.
fn refuse_lkp_build_levels(revision_directory: &Path, relative: &[String]) -> Result<(), ResultRootError> {
    for (name, taken) in relative.iter().zip(["testcase", "path_params", "machine"]) {
        if let Some(level) = lkp_build_level(name) {
            return Err(ResultRootError::InsideLkpTree {
                path: revision_directory.to_path_buf(),
                name: name.clone(),
                taken,
                level,
            });
        }
    }
    Ok(())
}

/// One run found on disk, before it becomes a record.
struct FoundRun {
    run_name: String,
    metrics: BTreeMap<String, f64>,
    monitors: Vec<MonitorSeries>,
    job_yaml: Option<String>,
    stats_path: Option<PathBuf>,
    /// The run's [`FAILURE_FILE`] and [`STDERR_FILE`], where it has them.
    failure: Option<String>,
    stderr: Option<String>,
    /// The key Culprit stored the run under when it wrote the run itself ([`IMPORT_KEY_FILE`]).
    import_key: Option<String>,
    /// Whether its metrics were read from its raw outputs, for want of a `stats.json`.
    from_raw_outputs: bool,
    /// The filesystem Culprit recorded the run's files on, when it wrote the run itself ([`SCRATCH_FILE`]).
    scratch: Option<ScratchFilesystem>,
    /// The raw outputs of a run Culprit wrote ([`written_raw_outputs`]); none for lkp's runs.
    raw_outputs: Vec<RawOutput>,
}

fn import_revision_dir(
    store: &mut dyn Store,
    root: &Path,
    revision_directory: &Path,
    options: &ImportOptions<'_>,
    report: &mut ImportReport,
    former_keys: &mut FormerKeys,
) -> Result<(), ResultRootError> {
    let mut run_directories = Vec::new();
    let mut incomplete_runs = false;
    for entry in read_dir(revision_directory)? {
        let run_directory = entry.path();
        if run_directory.is_dir() && is_run_dir(&run_directory, options) {
            run_directories.push(run_directory);
        } else if run_directory.is_dir() && looks_like_run_dir(&run_directory) {
            // Already reported as skipped while the root was walked.
            incomplete_runs = true;
        }
    }
    if run_directories.is_empty() && incomplete_runs {
        // The revision's matrix.json is no substitute for run directories that are there but unfinished.
        return Ok(());
    }
    import_runs(store, root, revision_directory, &run_directories, options, report, former_keys)
}

/// Reads the given run directories of one revision directory (or, with none, the revision's `matrix.json`) and
/// stores their runs. An unreadable run is skipped and named; where the runs belong is only asked once there is a
/// run to store, so that a root of unreadable runs reports them rather than its layout.
fn import_runs(
    store: &mut dyn Store,
    root: &Path,
    revision_directory: &Path,
    run_directories: &[PathBuf],
    options: &ImportOptions<'_>,
    report: &mut ImportReport,
    former_keys: &mut FormerKeys,
) -> Result<(), ResultRootError> {
    let mut runs = Vec::new();
    for run_directory in run_directories {
        match read_run_dir(run_directory, options) {
            Ok((found, warnings)) => {
                report.warnings.extend(warnings);
                if found.from_raw_outputs {
                    report.from_raw_outputs.push(run_directory.clone());
                }
                runs.push(found);
            }
            Err(error) => report.skipped.push((run_directory.clone(), error.to_string())),
        }
    }
    if run_directories.is_empty() {
        if let Some(matrix_path) = json_file(revision_directory, MATRIX_FILE) {
            match runs_from_matrix(&matrix_path) {
                Ok(columns) => {
                    report.warnings.extend(columns.warnings);
                    report.skipped.extend(columns.empty.into_iter().map(|reason| (matrix_path.clone(), reason)));
                    runs = columns.runs;
                }
                Err(error) => report.skipped.push((revision_directory.to_path_buf(), error.to_string())),
            }
        }
    }
    if runs.is_empty() {
        return Ok(());
    }
    let culprit_written = runs.iter().all(|run| run.import_key.is_some());
    if culprit_written {
        lend_the_job_of_a_sibling(&mut runs, revision_directory, &mut report.warnings);
    }
    let job = JobPlace::of(&runs);
    let place = if is_run_dir(root, options) {
        single_run_placement(root, revision_directory, options, culprit_written, &job)?
    } else {
        placement(root, revision_directory, options, culprit_written, &job)?
    };
    // Run directories sort as strings; order them by number so run 10 comes after run 9.
    runs.sort_by(|a, b| {
        (a.run_name.parse::<u64>().ok(), &a.run_name).cmp(&(b.run_name.parse::<u64>().ok(), &b.run_name))
    });
    for found in runs {
        let run_name = found.run_name.clone();
        let own_key = found.import_key.clone();
        let record = build_record(&place, found, options);
        // A run `culprit run --result-root` wrote is found under the key it was stored with, so importing the root
        // into that store does not count it twice; an lkp run is known by its place in the tree.
        let (import_key, former_import_key) = match own_key {
            Some(key) => (key, None),
            None => lkp_import_keys(&place, &record, &run_name, former_keys),
        };
        // An lkp result root holds no sign of runs profiled apart from the others: they are imported as lkp ran them.
        let save =
            SaveOptions { bisect_session: None, import_key: Some(import_key), former_import_key, kind: RunKind::Plain };
        let group = ImportGroup {
            job_name: record.job_name.clone(),
            revision: record.revision.key().to_string(),
            hostname: record.machine.hostname.clone(),
        };
        report.builds.entry(group.clone()).or_default().insert(place.lower_levels.join("/"));
        if crate::Build::of_params(&record.params).is_empty() {
            report.unrecorded_builds.insert(group.clone());
        }
        let counts = report.groups.entry(group).or_default();
        match store.save_run_with(&record, &save)? {
            Saved::Inserted(id) => {
                report.imported.push(id);
                counts.imported += 1;
            }
            Saved::AlreadyStored(id) => {
                report.already_stored.push(id);
                counts.already_stored += 1;
            }
        }
    }
    Ok(())
}

/// Gives each run Culprit wrote whose job.yaml is missing or does not read the job.yaml of a run beside it of the
/// same job (by their import keys, [`own_key_parts`]), without that run's times: the run is then stored under its
/// job, as its import key says it was, and not under an identity made up from its directory, a job apart that
/// `compare` leaves out (QA 58). Each such run is named in a warning.
fn lend_the_job_of_a_sibling(runs: &mut [FoundRun], revision_directory: &Path, warnings: &mut Vec<String>) {
    let usable = |run: &FoundRun| run.job_yaml.as_deref().is_some_and(|text| job_yaml_problem(text).is_none());
    let job_of = |run: &FoundRun| run.import_key.as_deref().and_then(own_key_parts).map(|(_, job_id)| job_id);
    let lenders: Vec<(Option<String>, String, String)> = runs
        .iter()
        .filter(|run| usable(run))
        .map(|run| (job_of(run), run.run_name.clone(), run.job_yaml.clone().unwrap_or_default()))
        .collect();
    for run in runs.iter_mut().filter(|run| !usable(run)) {
        let job_id = job_of(run);
        let Some((_, lender, text)) = lenders.iter().find(|(id, _, _)| id.is_some() && *id == job_id) else { continue };
        // The lender's own times are not this run's; its machine's facts are (one machine's runs of one job).
        let text: String = text
            .lines()
            .filter(|line| !line.starts_with("start_time:") && !line.starts_with("end_time:"))
            .flat_map(|line| [line, "\n"])
            .collect();
        let file = revision_directory.join(&run.run_name).join(JOB_FILE);
        let state = match run.job_yaml.as_deref().and_then(job_yaml_problem) {
            Some(problem) => problem,
            None => "the file is missing".to_string(),
        };
        // The warning [`read_run_dir`] gave of the file said the run goes without its job: no longer so.
        let said = format!("{}: ", file.display());
        warnings.retain(|warning| !warning.starts_with(&said));
        warnings.push(format!(
            "{}: {state}; the run is imported with the job of run {lender} beside it, the same job by their import \
             keys",
            file.display()
        ));
        run.job_yaml = Some(text);
    }
}

/// Where a run imported on its own belongs: the levels above it that name the testcase and path_params are not part
/// of the import, so only the caller can say, or, for a run of lkp's tree, its job.yaml and full path
/// ([`lkp_levels`]), and for a run `culprit run --result-root` wrote, its full path in Culprit's layout
/// ([`culprit_levels`]), which place it where an import of the whole tree does.
fn single_run_placement(
    run_directory: &Path,
    revision_directory: &Path,
    options: &ImportOptions<'_>,
    culprit_written: bool,
    job: &JobPlace,
) -> Result<Placement, ResultRootError> {
    const HINT: &str = "this is a single run directory; import the top directory of its result root (the one holding \
                        <testcase>/<path_params>/<host>/.../<commit>/<run>), which imports this run with the others";
    let layout = |what| ResultRootError::Layout { path: run_directory.to_path_buf(), what, hint: HINT };
    let lkp = match culprit_written {
        true => culprit_levels(revision_directory, job),
        false => lkp_levels(&[], revision_directory, job),
    };
    let level = |index: usize| lkp.as_ref().and_then(|levels| levels.get(index).cloned());
    let testcase = options.testcase.clone().or_else(|| level(0)).ok_or_else(|| layout("testcase"))?;
    let path_params = options.path_params.clone().or_else(|| level(1)).ok_or_else(|| layout("path_params"))?;
    let revision_key =
        revision_directory.file_name().map(|n| n.to_string_lossy().into_owned()).ok_or_else(|| layout("revision"))?;
    let lower_levels = lkp.as_ref().map(|levels| levels[3..].to_vec()).unwrap_or_default();
    let lkp_build = lkp.as_deref().filter(|_| !culprit_written).and_then(build_of_lkp_levels);
    Ok(Placement { testcase, path_params, hostname: level(2), lower_levels, lkp_build, revision_key })
}

/// A run directory's run, and a warning for each `stats.json` entry left out because it is not a number. A
/// `stats.json` none of whose entries is a number is an error: that run would be stored as an ok run with no
/// metric at all.
fn read_run_dir(
    run_directory: &Path,
    options: &ImportOptions<'_>,
) -> Result<(FoundRun, Vec<String>), ResultRootError> {
    let stats_path = run_directory.join(STATS_FILE);
    let from_raw_outputs = !stats_path.is_file();
    let (mut metrics, rejected, stats_path) = if from_raw_outputs {
        let (metrics, raw_path) = metrics_of_raw_outputs(run_directory, options)?;
        (metrics, Vec::new(), raw_path)
    } else {
        let (metrics, rejected) = read_stats(&stats_path)?;
        (metrics, rejected, stats_path)
    };
    if metrics.is_empty() {
        if let Some(first) = rejected.first() {
            return Err(ResultRootError::Json {
                path: stats_path,
                reason: format!(
                    "no entry is a number (\"{}\" is {}{}), so the run has no metric",
                    first.key,
                    first.found,
                    if rejected.len() > 1 {
                        format!(", and {} more like it", rejected.len() - 1)
                    } else {
                        String::new()
                    }
                ),
            });
        }
    }
    let mut warnings: Vec<String> = rejected
        .iter()
        .map(|r| {
            format!(
                "{}: \"{}\" is {}, not a number; the run is imported without it",
                stats_path.display(),
                r.key,
                r.found
            )
        })
        .collect();
    // A run's monitor matrix that does not read costs the run its monitors, not the run: its stats are good (QA 58:
    // a truncated matrix.json skipped a run whose stats.json was whole, where a garbled vmstat.json only warned).
    let (mut monitors, mut monitor_warnings) = match json_file(run_directory, MATRIX_FILE) {
        Some(matrix_path) => match monitors_from_matrix(&matrix_path) {
            Ok(read) => read,
            Err(error) => (Vec::new(), vec![format!("{error}; the run is imported without its monitors' samples")]),
        },
        None => (Vec::new(), Vec::new()),
    };
    add_monitor_files(run_directory, &mut monitors, &mut monitor_warnings)?;
    if let Some(parser) = options.parse_monitor {
        add_raw_monitor_outputs(run_directory, parser, &mut monitors, &mut monitor_warnings)?;
    }
    let text_of = |name: &str| -> Result<Option<String>, ResultRootError> {
        let path = run_directory.join(name);
        if !path.is_file() {
            return Ok(None);
        }
        Ok(Some(String::from_utf8_lossy(&read_root_file(&path)?).into_owned()))
    };
    let (job_yaml, failure, stderr) = (text_of(JOB_FILE)?, text_of(FAILURE_FILE)?, text_of(STDERR_FILE)?);
    if let Some(problem) = job_yaml.as_deref().and_then(job_yaml_problem) {
        // The run's numbers are still good, so it is imported; but without its params it gets the identity its
        // directory gives rather than its job's, and is kept apart from that job's runs, which must be said.
        warnings.push(format!(
            "{}: {problem}; the run is imported without its job's params, under the testcase and path_params of its \
             directory",
            run_directory.join(JOB_FILE).display()
        ));
    }
    let import_key = text_of(IMPORT_KEY_FILE)?.map(|key| key.trim().to_string()).filter(|key| !key.is_empty());
    // A scratch file that does not read costs the run its filesystem, not the run: its numbers are good.
    let scratch_path = run_directory.join(SCRATCH_FILE);
    let scratch = match scratch_path.is_file() {
        false => None,
        true => match read_json(&scratch_path).and_then(|value| {
            serde_json::from_value::<ScratchFilesystem>(value).map_err(|e| ResultRootError::Json {
                path: scratch_path.clone(),
                reason: format!("not a filesystem's path, fs_type and source ({e})"),
            })
        }) {
            Ok(scratch) => Some(scratch),
            Err(error) => {
                warnings.push(format!("{error}; the run is imported without the filesystem its files were on"));
                None
            }
        },
    };
    let raw_outputs = match import_key {
        Some(_) => written_raw_outputs(run_directory, &mut warnings),
        None => Vec::new(),
    };
    warnings.extend(monitor_warnings);
    if from_raw_outputs {
        // lkp's stats step would have reduced each monitor's series into the run's values; Culprit does it here.
        for series in &monitors {
            for (key, samples) in &series.series {
                let name = format!("{}.{key}", series.monitor);
                if let Some(value) = run_value(&name, samples) {
                    metrics.entry(name).or_insert(value);
                }
            }
        }
    } else if import_key.is_none() {
        counts_of_softirqs_during_the_run(run_directory, &mut metrics, &monitors, &mut warnings);
    }
    let run_name = run_directory.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stats_path = Some(stats_path);
    let found = FoundRun {
        run_name,
        metrics,
        monitors,
        job_yaml,
        stats_path,
        failure,
        stderr,
        import_key,
        from_raw_outputs,
        scratch,
        raw_outputs,
    };
    Ok((found, warnings))
}

/// The raw outputs of a run Culprit wrote ([`write_run_directory`]): every file of its directory that is not one of
/// [`WRITTEN_RUN_FILES`] (nor a leftover temporary file), in name order, so that an imported run keeps the
/// benchmark's output, its perf logs and its build log as the run stored had them (QA 57: `results --run` of an
/// imported run showed none). A file that does not read is left out with a warning: the run's numbers are good.
fn written_raw_outputs(run_directory: &Path, warnings: &mut Vec<String>) -> Vec<RawOutput> {
    let Ok(entries) = std::fs::read_dir(run_directory) else { return Vec::new() };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|entry| entry.file_name().to_str().map(str::to_string))
        .filter(|name| !WRITTEN_RUN_FILES.contains(&name.as_str()))
        // [`write_atomically`]'s temporary file, left by a write that was killed.
        .filter(|name| !(name.starts_with('.') && name.ends_with(".tmp")))
        .collect();
    names.sort();
    let mut outputs = Vec::new();
    for name in names {
        match read_root_file(&run_directory.join(&name)) {
            Ok(content) => outputs.push(RawOutput { name, content }),
            Err(error) => warnings.push(format!("{error}; the run is imported without that raw output")),
        }
    }
    outputs
}

/// The metrics of a run directory without `stats.json`, read from its raw benchmark outputs with the caller's parser,
/// and the path of the output read (which dates the run when its job.yaml does not). An output that does not read
/// (truncated, garbage, another program's) is an error naming the file and the reason: the run is skipped.
fn metrics_of_raw_outputs(
    run_directory: &Path,
    options: &ImportOptions<'_>,
) -> Result<(BTreeMap<String, f64>, PathBuf), ResultRootError> {
    let outputs = raw_benchmark_files(run_directory, options);
    let (Some(parser), Some((_, _, first_path))) = (options.parse_benchmark, outputs.first()) else {
        return Err(ResultRootError::Io {
            path: run_directory.to_path_buf(),
            action: "import",
            error: std::io::Error::new(std::io::ErrorKind::NotFound, NO_STATS_REASON),
        });
    };
    let first_path = first_path.clone();
    let mut by_program: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (program, name, path) in outputs {
        let text = String::from_utf8_lossy(&read_root_file_unpacked(&path)?).into_owned();
        by_program.entry(program).or_default().insert(name, text);
    }
    let mut metrics = BTreeMap::new();
    for (program, files) in &by_program {
        let names: Vec<&str> = files.keys().map(String::as_str).collect();
        let parsed = parser.metrics(program, files).map_err(|reason| ResultRootError::Io {
            path: run_directory.to_path_buf(),
            action: "import",
            error: std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "it has no stats.json, and its raw {program} output ({}) does not read: {reason}; the run is not \
                     imported (restore its stats.json, or remove the directory)",
                    names.join(", ")
                ),
            ),
        })?;
        metrics.extend(parsed);
    }
    Ok((metrics, first_path))
}

/// lkp's monitors whose keys are cumulative event counts (its `etc/event-counter-prefixes`, of the monitors Culprit
/// reads), whose run value is last minus first, and `softirqs.`, which Culprit counts so too (see
/// [`counts_of_softirqs_during_the_run`]).
const EVENT_COUNTER_PREFIXES: &[&str] = &[
    "interrupts.",
    "softirqs.",
    "diskstats.io_ticks.",
    "diskstats.read_",
    "diskstats.write_",
    "proc-vmstat.allocstall",
    "proc-vmstat.compact_",
    "proc-vmstat.kswapd_",
    "proc-vmstat.nr_dirtied",
    "proc-vmstat.nr_written",
    "proc-vmstat.numa_",
    "proc-vmstat.pageoutrun",
    "proc-vmstat.pg",
    "proc-vmstat.pswp",
    "proc-vmstat.slabs_scanned",
    "proc-vmstat.thp_",
    "proc-vmstat.unevictable_pgs_",
];

/// lkp's keys whose run value is the sum of the samples (its `etc/independent-counter-prefixes`): per-interval counts.
const SUMMED_PREFIXES: &[&str] = &["perf-stat.overall.", "perf-stat.ps.", "perf-stat.total."];

/// A monitor key's run value from its samples, as lkp's stats step reduces a monitor's series: a single sample is
/// the value, a per-interval count is summed, a cumulative counter gives last minus first, and anything else (a
/// level) the mean.
fn run_value(name: &str, samples: &[f64]) -> Option<f64> {
    match samples {
        [] => None,
        [only] => Some(*only),
        [first, .., last] if EVENT_COUNTER_PREFIXES.iter().any(|prefix| name.starts_with(prefix)) => Some(last - first),
        _ if SUMMED_PREFIXES.iter().any(|prefix| name.starts_with(prefix)) => Some(samples.iter().sum()),
        _ => Some(samples.iter().sum::<f64>() / samples.len() as f64),
    }
}

/// Makes an lkp run's `softirqs.*` values mean what Culprit's do: the count during the run. lkp's event-counter list
/// names `softirq.`, which matches none of its softirqs monitor's keys, so its stats.json holds the mean of the
/// since-boot counts it sampled, a number that follows the machine's uptime. Where the run has the series (its
/// `matrix.json`, `softirqs.json` or raw `softirqs` output), each value becomes last minus first, as Culprit's own
/// runs count it. Without the series the since-boot means cannot be turned into counts; they are kept apart, under
/// `softirqs.since_boot_mean.<key>`, so that they never pool with counts, and a warning says so.
fn counts_of_softirqs_during_the_run(
    run_directory: &Path,
    metrics: &mut BTreeMap<String, f64>,
    monitors: &[MonitorSeries],
    warnings: &mut Vec<String>,
) {
    const PREFIX: &str = "softirqs.";
    let keys: Vec<String> = metrics.keys().filter(|k| k.starts_with(PREFIX)).cloned().collect();
    if keys.is_empty() {
        return;
    }
    let series = monitors.iter().find(|series| series.monitor == "softirqs");
    let mut renamed = 0;
    for key in keys {
        let samples = series.and_then(|series| series.series.get(&key[PREFIX.len()..]));
        match samples.map(Vec::as_slice) {
            Some([first, .., last]) => {
                metrics.insert(key, last - first);
            }
            _ => {
                let Some(value) = metrics.remove(&key) else { continue };
                metrics.insert(format!("{PREFIX}since_boot_mean.{}", &key[PREFIX.len()..]), value);
                renamed += 1;
            }
        }
    }
    if renamed > 0 {
        warnings.push(format!(
            "{}: {renamed} softirqs value(s) of stats.json are lkp's means of since-boot counts, and the run keeps no \
             softirqs series to count them during the run (as Culprit does); they are stored as \
             softirqs.since_boot_mean.<key>, apart from the counts",
            run_directory.join(STATS_FILE).display()
        ));
    }
}

/// Splits a per-run `matrix.json` back into monitors: every `<monitor>.time` key names a monitor, and each other
/// key belongs to the longest monitor name it starts with (or to its first dotted segment). A key that is not an
/// array of numbers is left out with a warning naming the file and the key, as a `stats.json` entry that is not a
/// number is: read as NaN, one damaged sample was stored and poisoned every mean of its series.
fn monitors_from_matrix(path: &Path) -> Result<(Vec<MonitorSeries>, Vec<String>), ResultRootError> {
    let Value::Object(matrix) = read_json(path)? else {
        return Err(ResultRootError::Json { path: path.to_path_buf(), reason: "expected an object of arrays".into() });
    };
    let mut warnings = Vec::new();
    let arrays = number_arrays(path, matrix, &mut warnings);
    let mut monitors: BTreeMap<String, MonitorSeries> = BTreeMap::new();
    for (key, values) in &arrays {
        if let Some(monitor) = key.strip_suffix(".time") {
            monitors.insert(
                monitor.to_string(),
                MonitorSeries { monitor: monitor.to_string(), times: values.clone(), series: BTreeMap::new() },
            );
        }
    }
    for (key, values) in arrays {
        if key.strip_suffix(".time").is_some_and(|monitor| monitors.contains_key(monitor)) {
            continue;
        }
        let owner = monitors
            .keys()
            .filter(|m| key.starts_with(m.as_str()) && key.as_bytes().get(m.len()) == Some(&b'.'))
            .max_by_key(|m| m.len())
            .cloned()
            .unwrap_or_else(|| key.split('.').next().unwrap_or_default().to_string());
        let series_key = key.get(owner.len() + 1..).unwrap_or(&key).to_string();
        monitors
            .entry(owner.clone())
            .or_insert_with(|| MonitorSeries { monitor: owner, times: Vec::new(), series: BTreeMap::new() })
            .series
            .insert(series_key, values);
    }
    Ok((monitors.into_values().collect(), warnings))
}

/// The entries of a matrix-like object (a run's `matrix.json`, a monitor's JSON) that are arrays of numbers; each
/// other entry is left out with a warning naming the file and the key.
fn number_arrays(path: &Path, matrix: Map<String, Value>, warnings: &mut Vec<String>) -> BTreeMap<String, Vec<f64>> {
    let mut arrays = BTreeMap::new();
    for (key, value) in matrix {
        let numbers = match &value {
            Value::Array(items) => items.iter().map(Value::as_f64).collect::<Option<Vec<f64>>>(),
            _ => None,
        };
        match numbers {
            Some(numbers) => {
                arrays.insert(key, numbers);
            }
            None => warnings.push(format!(
                "{}: \"{key}\" is {}, not an array of numbers; the run is imported without that monitor series",
                path.display(),
                shortened(&value.to_string())
            )),
        }
    }
    arrays
}

/// The files of a run directory that are not a monitor's JSON although they are named `<name>.json`: the stats and
/// matrices lkp and Culprit derive from the monitors' files.
const DERIVED_JSON_FILES: [&str; 4] = [STATS_FILE, MATRIX_FILE, AVG_FILE, STDDEV_FILE];

/// Adds the series of lkp's per-monitor files of a run directory (`vmstat.json`, `proc-stat.json.gz`, ...: what lkp's
/// `dump-stat` made of each monitor's raw output, every key `<monitor>.<key>` an array of samples, with the sample
/// times as `<monitor>.time`) for the monitors that the run's `matrix.json` did not give. lkp merges these files into
/// that matrix, but a root copied without it, or one whose stats step did not get that far, has only the files.
///
/// A file without a `<monitor>.time` key is no time series (`fio.json`, `time.json`: a benchmark's numbers, which
/// `stats.json` holds) and is not read. A file that does not read, and a key that is not an array of numbers or does
/// not belong to the file's monitor, is left out with a warning naming the file; the run is still imported.
fn add_monitor_files(
    run_directory: &Path,
    monitors: &mut Vec<MonitorSeries>,
    warnings: &mut Vec<String>,
) -> Result<(), ResultRootError> {
    for entry in read_dir(run_directory)? {
        let path = entry.path();
        let Some(file_name) = entry.file_name().to_str().map(str::to_string) else { continue };
        let Some(monitor) = file_name.strip_suffix(".json.gz").or_else(|| file_name.strip_suffix(".json")) else {
            continue;
        };
        // Hidden files are the temporary files of an interrupted write.
        if monitor.is_empty() || monitor.starts_with('.') || !path.is_file() {
            continue;
        }
        if DERIVED_JSON_FILES.contains(&format!("{monitor}.json").as_str()) {
            continue;
        }
        // Where both the plain and the gzipped file are there, the plain one is read, as for matrix.json.
        if file_name.ends_with(".gz") && run_directory.join(format!("{monitor}.json")).is_file() {
            continue;
        }
        if monitors.iter().any(|series| series.monitor == monitor) {
            continue;
        }
        match monitor_file_series(&path, monitor, warnings) {
            Ok(Some(series)) => monitors.push(series),
            Ok(None) => {}
            Err(reason) => warnings.push(format!(
                "{}: {reason}; the run is imported without the {monitor} series it would hold",
                path.display()
            )),
        }
    }
    monitors.sort_by(|a, b| a.monitor.cmp(&b.monitor));
    Ok(())
}

/// Adds the series of the raw monitor outputs of a run directory (`vmstat`, `vmstat.gz`, ...) for the monitors that
/// neither the run's `matrix.json` nor a monitor's lkp JSON gave: a run whose stats step kept its raw outputs but not
/// the JSON made of them. A file is read when `parser` knows its name as a monitor's; one that does not unpack or
/// parse is left out with a warning naming it, and the run is still imported.
fn add_raw_monitor_outputs(
    run_directory: &Path,
    parser: &dyn MonitorParser,
    monitors: &mut Vec<MonitorSeries>,
    warnings: &mut Vec<String>,
) -> Result<(), ResultRootError> {
    for entry in read_dir(run_directory)? {
        let path = entry.path();
        let Some(file_name) = entry.file_name().to_str().map(str::to_string) else { continue };
        let gzipped = file_name.ends_with(".gz");
        let monitor = file_name.strip_suffix(".gz").unwrap_or(&file_name);
        if monitor.is_empty() || monitor.starts_with('.') || !parser.reads(monitor) || !path.is_file() {
            continue;
        }
        // Where both the plain and the gzipped output are there, the plain one is read.
        if gzipped && run_directory.join(monitor).is_file() {
            continue;
        }
        if monitors.iter().any(|series| series.monitor == monitor) {
            continue;
        }
        let unreadable = |reason: String| {
            format!("{}: {reason}; the run is imported without the {monitor} series it would hold", path.display())
        };
        let bytes = match read_root_file_unpacked(&path) {
            Ok(bytes) => bytes,
            Err(ResultRootError::Io { error, .. }) => {
                warnings.push(unreadable(format!("cannot read it ({error})")));
                continue;
            }
            Err(ResultRootError::Json { reason, .. }) => {
                warnings.push(unreadable(reason));
                continue;
            }
            Err(other) => return Err(other),
        };
        match parser.parse(monitor, &String::from_utf8_lossy(&bytes)) {
            Ok(series) => monitors.push(series),
            Err(reason) => warnings.push(unreadable(reason)),
        }
    }
    monitors.sort_by(|a, b| a.monitor.cmp(&b.monitor));
    Ok(())
}

/// One monitor's series from its lkp JSON file; `None` when the file holds no `<monitor>.time`, so is no time series.
/// An error is the reason the file cannot be read at all.
fn monitor_file_series(
    path: &Path,
    monitor: &str,
    warnings: &mut Vec<String>,
) -> Result<Option<MonitorSeries>, String> {
    let Value::Object(object) = read_json(path).map_err(|error| match error {
        ResultRootError::Json { reason, .. } => format!("not valid lkp JSON ({reason})"),
        other => other.to_string(),
    })?
    else {
        return Err(format!("not an object of \"{monitor}.<key>\": [samples] entries"));
    };
    let time_key = format!("{monitor}.time");
    if !object.contains_key(&time_key) {
        return Ok(None);
    }
    let prefix = format!("{monitor}.");
    let mut times = Vec::new();
    let mut series = BTreeMap::new();
    for (key, samples) in number_arrays(path, object, warnings) {
        if key == time_key {
            times = samples;
        } else if let Some(series_key) = key.strip_prefix(&prefix).filter(|k| !k.is_empty()) {
            series.insert(series_key.to_string(), samples);
        } else {
            warnings.push(format!(
                "{}: \"{key}\" does not begin with \"{prefix}\", so it is no series of the file's monitor; the run is \
                 imported without it",
                path.display()
            ));
        }
    }
    if series.is_empty() {
        return Err("no series of samples in it".to_string());
    }
    Ok(Some(MonitorSeries { monitor: monitor.to_string(), times, series }))
}

/// The runs of a revision `matrix.json`'s columns ([`runs_from_matrix`]).
struct MatrixRuns {
    /// One run per column that holds a number.
    runs: Vec<FoundRun>,
    /// An entry that is not a number, left out of its run, as `stats.json` entries are.
    warnings: Vec<String>,
    /// Why a column was not imported: no entry of it is a number, so its run would have no metric.
    empty: Vec<String>,
}

/// Runs from a revision `matrix.json` when the run directories are gone: one run per column, named after the
/// run directory its `stats_source` entry names when there is one. An entry that is not a number (a string,
/// `null`) is left out with a warning, and a column with no number at all is not imported (it would be stored as
/// an ok run with no metric), as for a run directory's `stats.json`.
fn runs_from_matrix(path: &Path) -> Result<MatrixRuns, ResultRootError> {
    let Value::Object(matrix) = read_json(path)? else {
        return Err(ResultRootError::Json { path: path.to_path_buf(), reason: "expected an object of arrays".into() });
    };
    let sources: Vec<String> = match matrix.get(STATS_SOURCE_KEY) {
        Some(Value::Array(items)) => items.iter().map(|i| i.as_str().unwrap_or_default().to_string()).collect(),
        _ => Vec::new(),
    };
    let columns = matrix
        .iter()
        .filter(|(k, _)| k.as_str() != STATS_SOURCE_KEY)
        .filter_map(|(_, v)| v.as_array().map(Vec::len))
        .max()
        .unwrap_or(0)
        .max(sources.len());
    let mut runs: Vec<FoundRun> = (0..columns)
        .map(|column| {
            let run_name = sources
                .get(column)
                .and_then(|s| Path::new(s).parent()?.file_name().map(|n| n.to_string_lossy().into_owned()))
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| column.to_string());
            FoundRun {
                run_name,
                metrics: BTreeMap::new(),
                monitors: Vec::new(),
                job_yaml: None,
                stats_path: None,
                from_raw_outputs: false,
                failure: None,
                stderr: None,
                import_key: None,
                scratch: None,
                raw_outputs: Vec::new(),
            }
        })
        .collect();
    let mut warnings = Vec::new();
    for (name, values) in &matrix {
        if name == STATS_SOURCE_KEY {
            continue;
        }
        let Some(values) = values.as_array() else { continue };
        for (column, (run, value)) in runs.iter_mut().zip(values).enumerate() {
            match value.as_f64() {
                Some(number) => {
                    run.metrics.insert(name.clone(), number);
                }
                None => warnings.push((
                    column,
                    format!(
                        "{}: \"{name}\" of column {column} (run {}) is {}, not a number; the run is imported \
                         without it",
                        path.display(),
                        run.run_name,
                        shortened(&value.to_string())
                    ),
                )),
            }
        }
    }
    // A column left out is named once, as skipped, not also in a warning per entry.
    let empty: Vec<String> = runs
        .iter()
        .filter(|run| run.metrics.is_empty())
        .map(|run| format!("no entry of run {}'s column is a number, so the run has no metric", run.run_name))
        .collect();
    let warnings =
        warnings.into_iter().filter(|(column, _)| !runs[*column].metrics.is_empty()).map(|(_, w)| w).collect();
    runs.retain(|run| !run.metrics.is_empty());
    Ok(MatrixRuns { runs, warnings, empty })
}

/// Why a run's `job.yaml` gives no params, when it gives none: it is empty, not YAML (cut short, garbage), or YAML
/// that is not a hash of params.
fn job_yaml_problem(job_yaml: &str) -> Option<String> {
    match serde_yaml::from_str::<serde_yaml::Value>(job_yaml) {
        Ok(serde_yaml::Value::Mapping(_)) => None,
        Ok(serde_yaml::Value::Null) => Some("the file is empty".to_string()),
        Ok(_) => Some("the file is not a hash of 'key: value' params".to_string()),
        Err(error) => Some(format!("not valid YAML ({error})")),
    }
}

/// Flattens a job.yaml mapping into `key: value` params in file order; nested mappings (a program's options)
/// become `parent.child`. A job.yaml that does not parse yields no params; its text is still kept.
pub fn flatten_job_params(job_yaml: &str) -> Vec<(String, String)> {
    fn walk(prefix: &str, value: &serde_yaml::Value, out: &mut Vec<(String, String)>) {
        match value {
            serde_yaml::Value::Mapping(map) => {
                for (key, child) in map {
                    let key = scalar_text(key);
                    let name = if prefix.is_empty() { key } else { format!("{prefix}.{key}") };
                    walk(&name, child, out);
                }
            }
            other if !prefix.is_empty() => out.push((prefix.to_string(), scalar_text(other))),
            _ => {}
        }
    }
    fn scalar_text(value: &serde_yaml::Value) -> String {
        match value {
            serde_yaml::Value::Null => String::new(),
            serde_yaml::Value::Bool(b) => b.to_string(),
            serde_yaml::Value::Number(n) => n.to_string(),
            serde_yaml::Value::String(s) => s.clone(),
            other => serde_yaml::to_string(other).map(|s| s.trim_end().to_string()).unwrap_or_default(),
        }
    }
    let mut params = Vec::new();
    if let Ok(value) = serde_yaml::from_str::<serde_yaml::Value>(job_yaml) {
        walk("", &value, &mut params);
    }
    params
}

fn build_record(place: &Placement, mut found: FoundRun, options: &ImportOptions<'_>) -> RunRecord {
    let written_by_culprit = found.import_key.is_some();
    // What Culprit wrote beside the job of its own run (its times and test box, [`job_yaml_with_result_root`]),
    // read before the job is cut back to the one that ran; lkp's own job.yaml has them among its keys.
    let written_facts = match (written_by_culprit, found.job_yaml.as_deref()) {
        (true, Some(text)) => flatten_job_params(text),
        _ => Vec::new(),
    };
    if written_by_culprit {
        // Culprit added the `result_root` to the job it ran when it wrote the run ([`job_yaml_with_result_root`]);
        // the run stored is of the job as it was, whichever store it is imported into.
        found.job_yaml = found.job_yaml.map(|text| job_yaml_without_result_root(&text));
    }
    let params = found.job_yaml.as_deref().map(flatten_job_params).unwrap_or_default();
    let param = |name: &str| {
        params.iter().chain(&written_facts).find(|(k, _)| k == name).map(|(_, v)| v.clone())
    };
    let job = ImportedJob {
        testcase: &place.testcase,
        path_params: &place.path_params,
        job_yaml: found.job_yaml.as_deref(),
        params: &params,
    };
    let identity = match options.identify {
        Some(identify) => identify(&job),
        None => default_identity(&job),
    };
    let hostname = place
        .hostname
        .clone()
        .or_else(|| param("tbox_group"))
        .or_else(|| param("testbox"))
        .unwrap_or_else(|| "unknown".to_string());
    let revision = if place.revision_key.len() == 40 && place.revision_key.bytes().all(|b| b.is_ascii_hexdigit()) {
        Revision::Commit { sha: place.revision_key.to_ascii_lowercase(), describe: None, subject: None }
    } else {
        Revision::Label { name: place.revision_key.clone() }
    };
    // lkp's job.yaml records when the job started and ended (`start_time`, `end_time`, seconds since the epoch, as
    // strings); a copy of the tree that does not keep file times (cp -r, scp, git) would date every run at the copy
    // (QA 47). Without them the stats are written when the run ends, so their time is its end, and the run's length
    // is the time monitor's elapsed time, which lkp's and Culprit's runs both record.
    let epoch = |name: &str| {
        param(name).and_then(|v| v.trim().parse::<f64>().ok()).filter(|t| t.is_finite() && *t > 0.0)
    };
    let file_time = || {
        found
            .stats_path
            .as_ref()
            .and_then(|p| std::fs::metadata(p).ok()?.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0.0, |d| d.as_secs_f64())
    };
    let time = epoch("end_time").unwrap_or_else(file_time);
    let elapsed = elapsed_time_of(&found.metrics).filter(|e| e.is_finite() && *e > 0.0 && *e <= time);
    let started_at = match epoch("start_time").filter(|start| *start <= time) {
        Some(start) => start,
        None => time - elapsed.unwrap_or(0.0),
    };
    // lkp marks runs that did not finish in the stats themselves; keep them as failed runs, as Culprit does.
    let incomplete = found.metrics.get(INCOMPLETE_RUN_KEY).is_some_and(|v| *v != 0.0);
    let exit_failed = found.metrics.get(EXIT_FAIL_KEY).is_some_and(|v| *v != 0.0);
    // The marks decide whether it failed; the reason Culprit wrote beside them, when it did, says why.
    let written = found.failure.filter(|r| !r.trim().is_empty());
    let outcome = if incomplete {
        RunOutcome::Failed {
            reason: written.unwrap_or_else(|| "incomplete run (lkp last_state.is_incomplete_run)".into()),
        }
    } else if exit_failed {
        RunOutcome::Failed {
            reason: written.unwrap_or_else(|| "the job exited with an error (lkp last_state.exit_fail)".into()),
        }
    } else {
        RunOutcome::Ok
    };
    // lkp's job.yaml records the rootfs, kconfig and compiler its result path holds; a job.yaml without them (written
    // by hand, or trimmed) still sits under them, and without them its builds' runs read as one build's (QA 47). They
    // are no part of the job's identity, so they are added after it is taken.
    let mut stored_params = params.clone();
    if let Some(build) = &place.lkp_build {
        for (name, value) in crate::Build::PARAMS.into_iter().zip([&build.rootfs, &build.kconfig, &build.compiler]) {
            if !value.is_empty() && !params.iter().any(|(k, _)| k == name) {
                stored_params.push((name.to_string(), value.clone()));
            }
        }
    }
    RunRecord {
        job_id: identity.job_id,
        job_name: identity.job_name,
        testcase: place.testcase.clone(),
        job_yaml: found.job_yaml.clone().unwrap_or_default(),
        params: stored_params,
        revision,
        // lkp's job.yaml describes its test box (hosts/*: nr_cpu, brand or model, memory): without brand and memory
        // the mail read "on test machine: 96 threads  with 0G memory".
        machine: Machine {
            hostname,
            nr_cpu: param("nr_cpu").and_then(|v| v.parse().ok()).unwrap_or(0),
            cpu_model: param("brand").or_else(|| param("model")).unwrap_or_default(),
            memory_kib: param("memory").and_then(|v| memory_kib(&v)).unwrap_or(0),
            // The host file's `nr_node`, which the robot's mails print as sockets.
            sockets: param("nr_node").and_then(|v| v.parse().ok()).unwrap_or(0),
            kernel: param(KERNEL_RELEASE_KEY)
                .or_else(|| param("kernel").and_then(|image| kernel_release_of_image(&image)))
                .unwrap_or_default(),
        },
        started_at,
        ended_at: time,
        outcome,
        exit_code: None,
        metrics: found.metrics,
        monitors: found.monitors,
        raw_outputs: found.raw_outputs,
        stderr: found.stderr.unwrap_or_default(),
        // A run Culprit wrote (`culprit run --result-root`) says where its files were in its own file. lkp's robot
        // makes the filesystem its job's `fs:` names on the disk its `disk:` names, and runs the benchmark there; its
        // scratch directory is not recorded. A job without `fs` says nothing of it, and nor does a run Culprit
        // wrote, which records `fs` but does not apply it.
        scratch: found.scratch.or_else(|| {
            let fs_type = param("fs").filter(|fs| !fs.trim().is_empty() && !written_by_culprit)?;
            Some(ScratchFilesystem { path: String::new(), fs_type, source: param("disk").unwrap_or_default() })
        }),
    }
}

/// The release in the name of lkp's kernel image (its job.yaml's `kernel`,
/// `/pkg/linux/x86_64-rhel-8.3/gcc-12/<commit>/vmlinuz-6.5.0-rc4-00012-g1f2e3d4`): what `uname -r` printed on the
/// test box it booted. `None` for a path of no `vmlinuz-` name.
fn kernel_release_of_image(image: &str) -> Option<String> {
    let name = image.trim().rsplit('/').next()?;
    let release = name.strip_prefix("vmlinuz-").or_else(|| name.strip_prefix("vmlinux-"))?;
    (!release.is_empty()).then(|| release.to_string())
}

/// lkp's `memory` of a test box (`256G`, `512M`, `1T`, binary units as lkp writes them) in KiB; `None` for anything
/// else, which leaves the machine's memory unknown rather than wrong.
fn memory_kib(text: &str) -> Option<u64> {
    let text = text.trim();
    let (number, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(text.len()));
    let kib_per_unit = match unit.trim().to_ascii_uppercase().as_str() {
        "K" | "KB" => 1.0,
        "M" | "MB" => 1024.0,
        "G" | "GB" => 1024.0 * 1024.0,
        "T" | "TB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let kib = number.parse::<f64>().ok()? * kib_per_unit;
    (kib.is_finite() && kib > 0.0).then(|| kib.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_limited_stops_past_the_limit_and_at_a_nul() {
        let text = b"a: 1\nb: 2\n";
        assert_eq!(read_limited(&text[..], 10, true).unwrap(), Limited::Whole(text.to_vec()));
        assert_eq!(read_limited(&text[..], 9, true).unwrap(), Limited::TooLarge);
        // An endless input ends too: past the limit, or at its first NUL when asked.
        let endless = std::io::repeat(b'x');
        assert_eq!(read_limited(endless, 200_000, true).unwrap(), Limited::TooLarge);
        assert_eq!(read_limited(std::io::repeat(0), MAX_FILE_BYTES, true).unwrap(), Limited::Nul(0));
        assert_eq!(read_limited(&b"ab\0c"[..], 10, true).unwrap(), Limited::Nul(2));
        assert_eq!(read_limited(&b"ab\0c"[..], 10, false).unwrap(), Limited::Whole(b"ab\0c".to_vec()));
        // A NUL in a later chunk is found at its offset in the whole input.
        let mut late = vec![b'x'; 100_000];
        late[70_000] = 0;
        assert_eq!(read_limited(&late[..], MAX_FILE_BYTES, true).unwrap(), Limited::Nul(70_000));
    }

    #[test]
    fn unsafe_components_are_mapped() {
        let cases = [("a/b", "a_b"), ("", "_"), ("..", "__"), (".", "_"), ("ok-1", "ok-1"), ("x\0y", "x_y")];
        for (input, expected) in cases {
            assert_eq!(safe_component(input), expected, "{input:?}");
        }
    }

    #[test]
    fn numbers_are_written_as_lkp_does() {
        assert_eq!(number(3.0).to_string(), "3");
        assert_eq!(number(0.5).to_string(), "0.5");
        assert_eq!(number(f64::NAN), Value::Null);
        assert_eq!(number(1e300).as_f64(), Some(1e300));
    }

    #[test]
    fn population_stddev() {
        let (mean, deviation) = mean_and_population_stddev(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(mean, 5.0);
        assert_eq!(deviation, 2.0);
        assert_eq!(mean_and_population_stddev(&[]), (0.0, 0.0));
    }

    #[test]
    fn job_params_flatten_in_file_order() {
        let params = flatten_job_params("runtime: 30s\nnr_threads: 100%\npmbench:\n  mapsize: 75%\n  cold: 1\n");
        let expected: Vec<(String, String)> =
            [("runtime", "30s"), ("nr_threads", "100%"), ("pmbench.mapsize", "75%"), ("pmbench.cold", "1")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        assert_eq!(params, expected);
        assert!(flatten_job_params(": : not yaml [").is_empty());
    }

    /// A run of command.ops `value` of the job `qa` at label `base` on machine `vm`.
    fn qa_run(value: f64) -> RunRecord {
        RunRecord {
            job_id: "id".into(),
            job_name: "qa".into(),
            testcase: "qa".into(),
            params: Vec::new(),
            job_yaml: "suite: qa\n".into(),
            revision: Revision::Label { name: "base".into() },
            machine: Machine { hostname: "vm".into(), ..Machine::default() },
            started_at: 1.0,
            ended_at: 2.0,
            outcome: RunOutcome::Ok,
            exit_code: None,
            metrics: BTreeMap::from([("command.ops".to_string(), value)]),
            monitors: vec![MonitorSeries {
                monitor: "vmstat".into(),
                times: vec![0.0, 1.0],
                series: BTreeMap::from([("cpu.us".to_string(), vec![5.0, 6.0])]),
            }],
            raw_outputs: Vec::new(),
            stderr: String::new(),
            scratch: None,
        }
    }

    /// A result root written the way `culprit run --result-root` writes one: two runs of one job.
    fn two_run_root(dir: &Path) -> PathBuf {
        let root = dir.join("rr");
        for value in [1.0, 2.0] {
            write_run(&root, "p", &qa_run(value), &local_build_of("ID=debian\n", Some("gcc-14"))).unwrap();
        }
        root
    }

    fn store(dir: &Path) -> crate::SqliteStore {
        crate::SqliteStore::open(dir.join("s.db")).unwrap()
    }

    #[test]
    fn a_run_directory_without_stats_json_is_skipped_not_read_as_a_revision() {
        let dir = tempfile::tempdir().unwrap();
        let root = two_run_root(dir.path());
        let run_zero = root.join("qa/p/vm/debian/defconfig/gcc-14/base/0");
        std::fs::remove_file(run_zero.join(STATS_FILE)).unwrap();
        let report = import(&mut store(dir.path()), &root, &ImportOptions::default()).unwrap();
        assert_eq!(report.imported.len(), 1, "{report:?}");
        assert_eq!(report.skipped.len(), 1, "{report:?}");
        assert_eq!(report.skipped[0].0, run_zero);
        assert!(report.skipped[0].1.contains("no stats.json"), "{}", report.skipped[0].1);

        // With every run unfinished, the revision's matrix.json does not stand in for them.
        std::fs::remove_file(root.join("qa/p/vm/debian/defconfig/gcc-14/base/1").join(STATS_FILE)).unwrap();
        let report = import(&mut store(dir.path()), &root, &ImportOptions::default()).unwrap();
        assert!(report.imported.is_empty() && report.already_stored.is_empty(), "{report:?}");
        assert_eq!(report.skipped.len(), 2, "{report:?}");
    }

    #[test]
    fn a_run_directory_without_stats_json_given_as_the_root_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let root = two_run_root(dir.path());
        let run_zero = root.join("qa/p/vm/debian/defconfig/gcc-14/base/0");
        std::fs::remove_file(run_zero.join(STATS_FILE)).unwrap();
        let report = import(&mut store(dir.path()), &run_zero, &ImportOptions::default()).unwrap();
        assert!(report.imported.is_empty(), "{report:?}");
        assert_eq!(report.skipped.first().map(|(p, _)| p.clone()), Some(run_zero));
    }

    #[test]
    fn a_root_in_culprits_former_four_levels_still_imports_from_inside_it() {
        // Roots `culprit run --result-root` wrote before it wrote lkp's build levels hold `<host>/<revision>` directly
        // and no `result_root` in their job.yaml; they are read in that layout from any directory inside them.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("rr");
        for value in [1.0, 2.0] {
            let mut run = qa_run(value);
            run.started_at = value;
            write_stored_run(&root, "p", &run, &Build::default(), &own_import_key(&run)).unwrap();
        }
        let old = dir.path().join("old");
        std::fs::create_dir_all(old.join("qa/p/vm")).unwrap();
        std::fs::rename(root.join("qa/p/vm/_/_/_/base"), old.join("qa/p/vm/base")).unwrap();
        for run in ["0", "1"] {
            std::fs::write(old.join("qa/p/vm/base").join(run).join(JOB_FILE), "suite: qa\n").unwrap();
        }
        let report = import(&mut store(dir.path()), &old.join("qa/p"), &ImportOptions::default()).unwrap();
        assert_eq!(report.imported.len(), 2, "{report:?}");
        let record = store(dir.path()).run(report.imported[0]).unwrap();
        assert_eq!((record.testcase.as_str(), record.machine.hostname.as_str()), ("qa", "vm"));
        assert_eq!(record.revision.key(), "base");
    }

    #[test]
    fn a_single_run_directory_imports_alone_with_the_callers_placement() {
        let dir = tempfile::tempdir().unwrap();
        let root = two_run_root(dir.path());
        let run_one = root.join("qa/p/vm/debian/defconfig/gcc-14/base/1");
        // The job.yaml's `result_root`, as lkp writes it, places the run wherever the tree is; without it, a single
        // run directory has no levels above it to tell its job by.
        let report = import(&mut store(dir.path()), &run_one, &ImportOptions::default()).unwrap();
        let record = store(dir.path()).run(report.imported[0]).unwrap();
        assert_eq!((record.testcase.as_str(), record.machine.hostname.as_str()), ("qa", "vm"), "{report:?}");
        std::fs::write(run_one.join(JOB_FILE), "suite: qa\n").unwrap();
        let dir = tempfile::tempdir().unwrap();
        match import(&mut store(dir.path()), &run_one, &ImportOptions::default()) {
            Err(error @ ResultRootError::Layout { .. }) => {
                assert!(error.to_string().contains(&run_one.display().to_string()), "{error}")
            }
            other => panic!("{other:?}"),
        }
        let options =
            ImportOptions { testcase: Some("qa".into()), path_params: Some("p".into()), ..Default::default() };
        let report = import(&mut store(dir.path()), &run_one, &options).unwrap();
        assert_eq!(report.imported.len(), 1, "the sibling run 0 is not imported: {report:?}");
    }

    #[test]
    fn qa_32_matrix_columns_without_a_number_are_skipped_and_non_numbers_named() {
        let dir = tempfile::tempdir().unwrap();
        let revision = dir.path().join("rr/qa/p/vm/v1");
        std::fs::create_dir_all(&revision).unwrap();
        std::fs::write(revision.join(MATRIX_FILE), r#"{"fio.x": [1, 2, 3, null], "fio.y": [5, 6, "7", null]}"#)
            .unwrap();
        let mut store = store(dir.path());
        let report = import(&mut store, &dir.path().join("rr"), &ImportOptions::default()).unwrap();
        assert_eq!(report.imported.len(), 3, "{report:?}");
        assert_eq!(report.skipped.len(), 1, "{report:?}");
        assert_eq!(report.skipped[0].0, revision.join(MATRIX_FILE));
        assert!(report.skipped[0].1.contains("run 3's column"), "{report:?}");
        let warnings = report.warnings.join("\n");
        assert!(warnings.contains("\"fio.y\" of column 2 (run 2) is \"7\", not a number"), "{warnings}");
        assert_eq!(report.warnings.len(), 1, "{warnings}");
        let third = store.run(report.imported[2]).unwrap();
        assert_eq!(third.metrics, BTreeMap::from([("fio.x".to_string(), 3.0)]));
    }

    #[test]
    fn stats_values_that_are_not_numbers_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = two_run_root(dir.path());
        let run_zero = root.join("qa/p/vm/debian/defconfig/gcc-14/base/0");
        let run_one = root.join("qa/p/vm/debian/defconfig/gcc-14/base/1");
        std::fs::write(run_zero.join(STATS_FILE), r#"{"a": "abc", "b": [1,2], "c": null}"#).unwrap();
        std::fs::write(run_one.join(STATS_FILE), r#"{"ok": 3, "bad": "abc"}"#).unwrap();
        let report = import(&mut store(dir.path()), &root, &ImportOptions::default()).unwrap();
        assert_eq!(report.imported.len(), 1, "{report:?}");
        assert_eq!(report.skipped.len(), 1, "{report:?}");
        let reason = &report.skipped[0].1;
        assert!(
            reason.contains("stats.json") && reason.contains("\"a\" is \"abc\"") && reason.contains("2 more"),
            "{reason}"
        );
        assert_eq!(report.warnings.len(), 1, "{report:?}");
        assert!(report.warnings[0].contains("1/stats.json: \"bad\" is \"abc\", not a number"), "{:?}", report.warnings);
    }

    #[test]
    fn lkp_s_non_finite_values_are_quoted_outside_strings_only() {
        let cases = [
            (r#"{"a": NaN, "b": [1, Infinity, -Infinity]}"#, r#"{"a": "NaN", "b": [1, "Infinity", "-Infinity"]}"#),
            (r#"{"NaN \" NaN": 1, "x": "Infinity"}"#, r#"{"NaN \" NaN": 1, "x": "Infinity"}"#),
            (r#"{"a": 1}"#, r#"{"a": 1}"#),
        ];
        for (given, expected) in cases {
            assert_eq!(String::from_utf8_lossy(&quote_non_finite(given.as_bytes())), expected, "{given}");
        }
    }

    #[test]
    fn a_stats_json_with_lkp_s_nan_keeps_its_run_and_names_the_entry() {
        let dir = tempfile::tempdir().unwrap();
        let root = two_run_root(dir.path());
        let run_one = root.join("qa/p/vm/debian/defconfig/gcc-14/base/1");
        let stats = "{\n  \"ok\": 3,\n  \"ratio\": NaN,\n  \"max\": Infinity\n}\n";
        std::fs::write(run_one.join(STATS_FILE), stats).unwrap();
        let meminfo = r#"{"meminfo.time": [1, 2], "meminfo.Active": [1, NaN]}"#;
        std::fs::write(run_one.join("meminfo.json"), meminfo).unwrap();
        let mut store = store(dir.path());
        let report = import(&mut store, &root, &ImportOptions::default()).unwrap();
        assert_eq!((report.imported.len(), report.skipped.len()), (2, 0), "{report:?}");
        let warnings = report.warnings.join("\n");
        assert!(warnings.contains("1/stats.json: \"ratio\" is \"NaN\", not a number"), "{warnings}");
        assert!(warnings.contains("1/stats.json: \"max\" is \"Infinity\", not a number"), "{warnings}");
        assert!(warnings.contains("1/meminfo.json: \"meminfo.Active\" is [1,\"NaN\"]"), "{warnings}");
        let record = store.run(report.imported[1]).unwrap();
        assert_eq!(record.metrics, BTreeMap::from([("ok".to_string(), 3.0)]));
    }

    #[test]
    fn a_missing_root_says_it_does_not_exist_once() {
        let dir = tempfile::tempdir().unwrap();
        let error = import(&mut store(dir.path()), &dir.path().join("nowhere"), &ImportOptions::default())
            .err()
            .map(|e| (e.to_string(), std::error::Error::source(&e).is_none()));
        let (message, no_chained_cause) = error.unwrap_or_default();
        assert!(message.contains("nowhere") && message.contains("does not exist"), "{message}");
        assert!(no_chained_cause, "the cause is in the message; a chained copy would print it twice");
    }

    #[test]
    fn an_lkp_test_box_s_memory_is_read_in_binary_units() {
        assert_eq!(memory_kib("256G"), Some(256 * 1024 * 1024));
        assert_eq!(memory_kib("512M"), Some(512 * 1024));
        assert_eq!(memory_kib("1.5T"), Some(3 * 512 * 1024 * 1024));
        assert_eq!(memory_kib("lots"), None);
        assert_eq!(memory_kib("256"), None);
    }
}
