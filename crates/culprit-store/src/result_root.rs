//! lkp result roots: writing runs in the directory layout lkp-tests' tools read, and importing existing roots.
//!
//! Layout written, one directory per run:
//!
//! ```text
//! <root>/<testcase>/<path_params>/<hostname>/<revision key>/<run index>/stats.json   flat `metric: value`
//!                                                                     /matrix.json  monitor samples (`<monitor>.<key>`: [...])
//!                                                                     /job.yaml     the atomic job
//!                                                                     /<raw output> e.g. fio.output
//! <root>/<testcase>/<path_params>/<hostname>/<revision key>/matrix.json   metric: per-run values, plus `stats_source`
//!                                                          /avg.json      metric: mean over runs
//!                                                          /stddev.json   metric: standard deviation over runs
//! ```
//!
//! As lkp does, a revision's `matrix.json` lists its runs in `stats_source`, pads a metric absent from earlier
//! runs with leading zeros so each column stays one run, and the averages treat a metric missing from a run as 0.
//! The standard deviation is the population one (divided by n), as lkp's `Array#standard_deviation`.
//!
//! Import walks any lkp root: every directory with a `stats.json` is a run whose parent is the revision
//! directory; a revision directory with a `matrix.json` but no run directories yields one run per matrix column.
//! Paths are read as `<testcase>/<path_params>/<host>/.../<commit>/<run>` (lkp adds rootfs, kconfig and compiler
//! levels before the commit; they are skipped); the caller can supply testcase and path_params when the root is
//! shallower than that.

use crate::error::StoreError;
use crate::{RunId, SaveOptions, Saved, Store};
use culprit_core::model::{Machine, MonitorSeries, Revision, RunOutcome, RunRecord};
use serde_json::{Map, Number, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Why writing or importing a result root failed.
#[derive(Debug, thiserror::Error)]
pub enum ResultRootError {
    #[error("cannot {action} {}: {source}", path.display())]
    Io { path: PathBuf, action: &'static str, source: std::io::Error },

    #[error("{} is not valid lkp JSON: {reason}; fix or remove the file and import again", path.display())]
    Json { path: PathBuf, reason: String },

    #[error("{} is not valid YAML: {reason}; fix or remove the file and import again", path.display())]
    Yaml { path: PathBuf, reason: String },

    #[error("cannot tell the {what} of {} from its path; {hint}", path.display())]
    Layout { path: PathBuf, what: &'static str, hint: &'static str },

    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The file names lkp uses.
pub const STATS_FILE: &str = "stats.json";
pub const MATRIX_FILE: &str = "matrix.json";
pub const AVG_FILE: &str = "avg.json";
pub const STDDEV_FILE: &str = "stddev.json";
pub const JOB_FILE: &str = "job.yaml";
/// The key of a revision matrix that lists the runs' stats files rather than a metric.
pub const STATS_SOURCE_KEY: &str = "stats_source";

/// Makes a string safe as one path component: no separators, no NUL, not `.` or `..`, not empty.
pub fn safe_component(text: &str) -> String {
    let mapped: String = text.chars().map(|c| if c == '/' || c == '\\' || c == '\0' { '_' } else { c }).collect();
    match mapped.as_str() {
        "" => "_".to_string(),
        "." | ".." => mapped.replace('.', "_"),
        _ => mapped,
    }
}

/// The directory holding every run of one job on one revision and host.
pub fn revision_dir(root: &Path, testcase: &str, path_params: &str, hostname: &str, revision_key: &str) -> PathBuf {
    root.join(safe_component(testcase))
        .join(safe_component(path_params))
        .join(safe_component(hostname))
        .join(safe_component(revision_key))
}

/// Writes one run into the result root under the next free run index, then rewrites its revision's
/// `matrix.json`, `avg.json` and `stddev.json`. Returns the run directory. Every file is written to a temporary
/// name and renamed, so a crash never leaves a half-written `stats.json`.
pub fn write_run(root: &Path, path_params: &str, run: &RunRecord) -> Result<PathBuf, ResultRootError> {
    let revision_directory =
        revision_dir(root, &run.testcase, path_params, &run.machine.hostname, run.revision.key());
    create_dir(&revision_directory)?;
    let index = run_indices(&revision_directory)?.last().map_or(0, |last| last + 1);
    let run_directory = revision_directory.join(index.to_string());
    create_dir(&run_directory)?;

    let stats: Map<String, Value> = run.metrics.iter().map(|(k, v)| (k.clone(), number(*v))).collect();
    write_json(&run_directory.join(STATS_FILE), &Value::Object(stats))?;
    if !run.monitors.is_empty() {
        write_json(&run_directory.join(MATRIX_FILE), &Value::Object(monitor_matrix(&run.monitors)))?;
    }
    if !run.job_yaml.is_empty() {
        write_atomically(&run_directory.join(JOB_FILE), run.job_yaml.as_bytes())?;
    }
    for raw in &run.raw_outputs {
        let name = safe_component(&raw.name);
        // The lkp files this module owns must not be overwritten by a raw output that happens to share a name.
        if [STATS_FILE, MATRIX_FILE, JOB_FILE].contains(&name.as_str()) {
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

fn mean_and_population_stddev(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, variance.sqrt())
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
    let io_error = |source| ResultRootError::Io { path: directory.to_path_buf(), action: "list the directory", source };
    let mut entries = std::fs::read_dir(directory).map_err(io_error)?.collect::<Result<Vec<_>, _>>().map_err(io_error)?;
    entries.sort_by_key(|e| e.file_name());
    Ok(entries)
}

fn create_dir(directory: &Path) -> Result<(), ResultRootError> {
    std::fs::create_dir_all(directory).map_err(|source| ResultRootError::Io {
        path: directory.to_path_buf(),
        action: "create the directory",
        source,
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
    write().map_err(|source| {
        let _ = std::fs::remove_file(&temporary);
        ResultRootError::Io { path: path.to_path_buf(), action: "write", source }
    })
}

fn read_json(path: &Path) -> Result<Value, ResultRootError> {
    let text = std::fs::read_to_string(path).map_err(|source| ResultRootError::Io {
        path: path.to_path_buf(),
        action: "read",
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| ResultRootError::Json { path: path.to_path_buf(), reason: e.to_string() })
}

/// Reads a flat `metric: number` object; entries that are not numbers (lkp sometimes stores strings) are skipped.
fn read_number_map(path: &Path) -> Result<BTreeMap<String, f64>, ResultRootError> {
    match read_json(path)? {
        Value::Object(map) => Ok(map.into_iter().filter_map(|(k, v)| v.as_f64().map(|n| (k, n))).collect()),
        _ => Err(ResultRootError::Json { path: path.to_path_buf(), reason: "expected an object of metrics".into() }),
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
        job_id: format!("lkp:{}/{}", job.testcase, job.path_params),
        job_name: format!("{}-{}", job.testcase, job.path_params),
    }
}

/// How to read a result root.
#[derive(Default)]
pub struct ImportOptions<'a> {
    /// The testcase of every run, when the root is too shallow to hold it.
    pub testcase: Option<String>,
    /// The path_params of every run, when the root is too shallow to hold it.
    pub path_params: Option<String>,
    /// Computes the job identity; [`default_identity`] when `None`.
    pub identify: Option<&'a dyn Fn(&ImportedJob<'_>) -> JobIdentity>,
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
}

/// Imports every run under `root` into `store`. Each run is its own transaction, so an error in one file
/// skips that run (listed in the report) and never half-stores it; re-importing stores nothing twice.
pub fn import(store: &mut dyn Store, root: &Path, options: &ImportOptions<'_>) -> Result<ImportReport, ResultRootError> {
    if !root.is_dir() {
        return Err(ResultRootError::Io {
            path: root.to_path_buf(),
            action: "import the result root",
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "not a directory"),
        });
    }
    let mut report = ImportReport::default();
    let mut revision_directories = Vec::new();
    find_revision_dirs(root, &mut revision_directories, 0)?;
    for revision_directory in revision_directories {
        import_revision_dir(store, root, &revision_directory, options, &mut report)?;
    }
    Ok(report)
}

/// lkp roots are at most about ten levels deep; the bound keeps a symlink loop from recursing forever.
const MAX_DEPTH: usize = 16;

/// Collects directories holding runs: the parents of `stats.json` files, and directories with a `matrix.json`
/// but no run subdirectories.
fn find_revision_dirs(directory: &Path, found: &mut Vec<PathBuf>, depth: usize) -> Result<(), ResultRootError> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    let entries = read_dir(directory)?;
    let subdirectories: Vec<PathBuf> = entries.iter().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    let has_runs = subdirectories.iter().any(|d| d.join(STATS_FILE).is_file());
    let is_run = directory.join(STATS_FILE).is_file();
    if has_runs || (!is_run && directory.join(MATRIX_FILE).is_file() && depth > 0) {
        found.push(directory.to_path_buf());
    }
    if is_run && depth == 0 {
        // The root itself is a single run directory.
        if let Some(parent) = directory.parent() {
            found.push(parent.to_path_buf());
        }
        return Ok(());
    }
    for subdirectory in subdirectories {
        if !subdirectory.join(STATS_FILE).is_file() {
            find_revision_dirs(&subdirectory, found, depth + 1)?;
        }
    }
    Ok(())
}

/// Where a revision directory sits: its testcase, path_params, host and revision key.
struct Placement {
    testcase: String,
    path_params: String,
    hostname: Option<String>,
    revision_key: String,
}

fn placement(root: &Path, revision_directory: &Path, options: &ImportOptions<'_>) -> Result<Placement, ResultRootError> {
    let relative: Vec<String> = revision_directory
        .strip_prefix(root)
        .unwrap_or(revision_directory)
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let revision_key = revision_directory
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or(ResultRootError::Layout {
            path: revision_directory.to_path_buf(),
            what: "revision",
            hint: "import the directory that contains the commit directories",
        })?;
    let full = relative.len() >= 4;
    let from_path = |index: usize| if full { relative.get(index).cloned() } else { None };
    let testcase = options.testcase.clone().or_else(|| from_path(0)).ok_or(ResultRootError::Layout {
        path: revision_directory.to_path_buf(),
        what: "testcase",
        hint: "import from the root of a <testcase>/<path_params>/<host>/.../<commit> tree, or give the testcase",
    })?;
    let path_params = options.path_params.clone().or_else(|| from_path(1)).ok_or(ResultRootError::Layout {
        path: revision_directory.to_path_buf(),
        what: "path_params",
        hint: "import from the root of a <testcase>/<path_params>/<host>/.../<commit> tree, or give the path_params",
    })?;
    Ok(Placement { testcase, path_params, hostname: from_path(2), revision_key })
}

/// One run found on disk, before it becomes a record.
struct FoundRun {
    run_name: String,
    metrics: BTreeMap<String, f64>,
    monitors: Vec<MonitorSeries>,
    job_yaml: Option<String>,
    stats_path: Option<PathBuf>,
}

fn import_revision_dir(
    store: &mut dyn Store,
    root: &Path,
    revision_directory: &Path,
    options: &ImportOptions<'_>,
    report: &mut ImportReport,
) -> Result<(), ResultRootError> {
    let place = placement(root, revision_directory, options)?;
    let mut runs = Vec::new();
    for entry in read_dir(revision_directory)? {
        let run_directory = entry.path();
        let stats_path = run_directory.join(STATS_FILE);
        if !run_directory.is_dir() || !stats_path.is_file() {
            continue;
        }
        match read_run_dir(&run_directory) {
            Ok(found) => runs.push(found),
            Err(error) => report.skipped.push((run_directory.clone(), error.to_string())),
        }
    }
    if runs.is_empty() {
        let matrix_path = revision_directory.join(MATRIX_FILE);
        if matrix_path.is_file() {
            match runs_from_matrix(&matrix_path) {
                Ok(found) => runs = found,
                Err(error) => report.skipped.push((revision_directory.to_path_buf(), error.to_string())),
            }
        }
    }
    // Run directories sort as strings; order them by number so run 10 comes after run 9.
    runs.sort_by(|a, b| (a.run_name.parse::<u64>().ok(), &a.run_name).cmp(&(b.run_name.parse::<u64>().ok(), &b.run_name)));
    for found in runs {
        let run_name = found.run_name.clone();
        let record = build_record(&place, found, options);
        let import_key = format!("lkp:{}/{}", record.machine.hostname, run_name);
        match store.save_run_with(&record, &SaveOptions { bisect_session: None, import_key: Some(import_key) })? {
            Saved::Inserted(id) => report.imported.push(id),
            Saved::AlreadyStored(id) => report.already_stored.push(id),
        }
    }
    Ok(())
}

fn read_run_dir(run_directory: &Path) -> Result<FoundRun, ResultRootError> {
    let stats_path = run_directory.join(STATS_FILE);
    let metrics = read_number_map(&stats_path)?;
    let matrix_path = run_directory.join(MATRIX_FILE);
    let monitors = if matrix_path.is_file() { monitors_from_matrix(&matrix_path)? } else { Vec::new() };
    let job_path = run_directory.join(JOB_FILE);
    let job_yaml = if job_path.is_file() {
        Some(std::fs::read_to_string(&job_path).map_err(|source| ResultRootError::Io {
            path: job_path.clone(),
            action: "read",
            source,
        })?)
    } else {
        None
    };
    let run_name = run_directory.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(FoundRun { run_name, metrics, monitors, job_yaml, stats_path: Some(stats_path) })
}

/// Splits a per-run `matrix.json` back into monitors: every `<monitor>.time` key names a monitor, and each other
/// key belongs to the longest monitor name it starts with (or to its first dotted segment).
fn monitors_from_matrix(path: &Path) -> Result<Vec<MonitorSeries>, ResultRootError> {
    let Value::Object(matrix) = read_json(path)? else {
        return Err(ResultRootError::Json { path: path.to_path_buf(), reason: "expected an object of arrays".into() });
    };
    let arrays: BTreeMap<String, Vec<f64>> = matrix
        .into_iter()
        .filter_map(|(k, v)| match v {
            Value::Array(items) => Some((k, items.iter().map(|i| i.as_f64().unwrap_or(f64::NAN)).collect())),
            _ => None,
        })
        .collect();
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
    Ok(monitors.into_values().collect())
}

/// Runs from a revision `matrix.json` when the run directories are gone: one run per column, named after the
/// run directory its `stats_source` entry names when there is one.
fn runs_from_matrix(path: &Path) -> Result<Vec<FoundRun>, ResultRootError> {
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
            FoundRun { run_name, metrics: BTreeMap::new(), monitors: Vec::new(), job_yaml: None, stats_path: None }
        })
        .collect();
    for (name, values) in &matrix {
        if name == STATS_SOURCE_KEY {
            continue;
        }
        let Some(values) = values.as_array() else { continue };
        for (run, value) in runs.iter_mut().zip(values) {
            if let Some(number) = value.as_f64() {
                run.metrics.insert(name.clone(), number);
            }
        }
    }
    Ok(runs)
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

fn build_record(place: &Placement, found: FoundRun, options: &ImportOptions<'_>) -> RunRecord {
    let params = found.job_yaml.as_deref().map(flatten_job_params).unwrap_or_default();
    let param = |name: &str| params.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
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
    let time = found
        .stats_path
        .as_ref()
        .and_then(|p| std::fs::metadata(p).ok()?.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0.0, |d| d.as_secs_f64());
    // lkp marks runs that did not finish in the stats themselves; keep them as failed runs, as Culprit does.
    let incomplete = found.metrics.get("last_state.is_incomplete_run").is_some_and(|v| *v != 0.0);
    let exit_failed = found.metrics.get("last_state.exit_fail").is_some_and(|v| *v != 0.0);
    let outcome = if incomplete {
        RunOutcome::Failed { reason: "incomplete run (lkp last_state.is_incomplete_run)".into() }
    } else if exit_failed {
        RunOutcome::Failed { reason: "the job exited with an error (lkp last_state.exit_fail)".into() }
    } else {
        RunOutcome::Ok
    };
    RunRecord {
        job_id: identity.job_id,
        job_name: identity.job_name,
        testcase: place.testcase.clone(),
        job_yaml: found.job_yaml.clone().unwrap_or_default(),
        params: params.clone(),
        revision,
        machine: Machine {
            hostname,
            nr_cpu: param("nr_cpu").and_then(|v| v.parse().ok()).unwrap_or(0),
            ..Machine::default()
        },
        started_at: time,
        ended_at: time,
        outcome,
        exit_code: None,
        metrics: found.metrics,
        monitors: found.monitors,
        raw_outputs: Vec::new(),
        stderr: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let expected: Vec<(String, String)> = [
            ("runtime", "30s"),
            ("nr_threads", "100%"),
            ("pmbench.mapsize", "75%"),
            ("pmbench.cold", "1"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(params, expected);
        assert!(flatten_job_params(": : not yaml [").is_empty());
    }
}
