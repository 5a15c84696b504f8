//! The result store: the [`Store`] trait every back end implements, its query types, the SQLite back end
//! ([`SqliteStore`]) with embedded migrations, and lkp result roots ([`result_root`]).
//!
//! All SQL of Culprit lives in this crate. Callers speak in model types (`RunRecord`, `Revision`) and the query
//! types below; they never see a table. The trait is object-safe so the CLI can hold a `Box<dyn Store>` and pick
//! SQLite or PostgreSQL at run time.

// `!(x > 0.0)` is how this crate says "not a positive number, NaN included": the negated comparison is true for NaN,
// which a rewrite to `x <= 0.0` would silently let through. Clippy's suggestion (`partial_cmp`) reads worse.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod error;
pub mod glob;
pub mod migrations;
pub mod pgpass;
pub mod postgres;
mod packed;
mod record;
pub mod result_root;
pub mod sqlite;

pub use error::StoreError;
pub use crate::postgres::{is_postgres_url, PostgresStore};
pub use sqlite::{OpenOptions, SqliteStore};

use culprit_core::model::{Revision, RunRecord};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The environment variable that names the result store file.
pub const DB_ENV_VAR: &str = "CULPRIT_DB";

/// The store file used when neither `--db` nor `$CULPRIT_DB` names one, in the current directory.
pub const DEFAULT_STORE_FILE: &str = "culprit.db";

/// The default store path: `$CULPRIT_DB` when set and not empty, else `./culprit.db`.
pub fn default_path() -> PathBuf {
    match std::env::var_os(DB_ENV_VAR) {
        Some(value) if !value.is_empty() => PathBuf::from(value),
        _ => PathBuf::from(DEFAULT_STORE_FILE),
    }
}

/// The environment variable that names this machine in the store. A farm whose machines share a host name (cloned
/// VMs, containers) sets it on each: their runs, their bisect sessions and their claims on a shared store are kept
/// apart under it instead of the kernel's host name, which would pool them as one machine's.
pub const MACHINE_ENV_VAR: &str = "CULPRIT_MACHINE";

/// The name this machine's runs and bisect sessions are stored under: `$CULPRIT_MACHINE` when set and not empty
/// (the binary refuses a malformed one before anything runs, `machine_name_setting_problem`), else the kernel's host
/// name (empty when the kernel does not say).
pub fn machine_name() -> String {
    match std::env::var(MACHINE_ENV_VAR) {
        Ok(name) if !name.trim().is_empty() => name.trim().to_string(),
        _ => std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim().to_string(),
    }
}

/// What is wrong with `name` as a `$CULPRIT_MACHINE`, or `None` when it may name a machine. A machine name is a
/// directory of an lkp result root (`tbox_group`), a word of the robot's table and mail, and what `--machine GLOB`
/// filters match, so it is held to a host name's characters: letters, digits, `.`, `-` and `_`, at most 253.
pub fn machine_name_problem(name: &str) -> Option<String> {
    let name = name.trim();
    if name.len() > 253 {
        return Some(format!("it is {} bytes long, more than a host name's 253", name.len()));
    }
    let odd = name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')))?;
    Some(format!("{odd:?} is not a letter, a digit, '.', '-' or '_', the characters of a host name"))
}

/// The problem with `$CULPRIT_MACHINE` as it is set, with the value, or `None` when it is unset, empty or valid.
pub fn machine_name_setting_problem() -> Option<String> {
    let value = match std::env::var(MACHINE_ENV_VAR) {
        Ok(value) => value,
        Err(std::env::VarError::NotPresent) => return None,
        Err(std::env::VarError::NotUnicode(raw)) => {
            return Some(format!("${MACHINE_ENV_VAR} ({raw:?}) is not UTF-8; name the machine in letters and digits"));
        }
    };
    let problem = machine_name_problem(&value)?;
    Some(format!("${MACHINE_ENV_VAR} ({value:?}) cannot name this machine: {problem}"))
}

/// The store's ids show as their number, as messages and `--run ID`, `--resume ID` and `--try-fix ID` take them.
macro_rules! shown_as_number {
    ($id:ident) => {
        impl std::fmt::Display for $id {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

/// The id of a stored run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RunId(pub i64);

shown_as_number!(RunId);

/// The id of a bisect session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SessionId(pub i64);

shown_as_number!(SessionId);

/// Whether a run succeeded, for filtering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Ok,
    Failed,
}

/// How a run was taken, which decides what its numbers may be compared with.
///
/// A profiling run (`culprit bisect --profile`) ran the job with perf-profile and perf-stat attached, which makes
/// the benchmark several times slower: its perf rows explain a change, but its benchmark metrics and its other
/// monitors are not comparable with a plain run's. Samples are read from one kind at a time ([`SampleQuery::kind`])
/// so the two never end up in one column. Runs stored before schema version 5 are plain.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunKind {
    /// The job as it is, with its own monitors.
    #[default]
    Plain,
    /// The job with perf-profile and perf-stat added to its monitors, to profile a change already found.
    Profiling,
}

impl RunKind {
    /// The word the store keeps in `runs.kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Plain => "plain",
            RunKind::Profiling => "profiling",
        }
    }

    /// The kind a stored word names; `None` for a word this build does not know.
    pub fn from_stored(word: &str) -> Option<RunKind> {
        match word {
            "plain" => Some(RunKind::Plain),
            "profiling" => Some(RunKind::Profiling),
            _ => None,
        }
    }
}

/// Options of one save.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SaveOptions {
    /// Link the run to this bisect session in the same transaction.
    pub bisect_session: Option<SessionId>,
    /// A key that makes the save idempotent: a second save of a run with the same job id, revision key and
    /// import key stores nothing and returns the first run's id. Imports use `lkp:<host>/<run dir>`, with the levels
    /// between host and commit before the run dir where the tree has them (`lkp:<host>/<rootfs>/<kconfig>/<compiler>/
    /// <run dir>`), or the key that `culprit run --result-root` stored the run under and wrote beside it
    /// (`result_root::write_stored_run`).
    pub import_key: Option<String>,
    /// The key an earlier version of the importer stored this same run under, when it used another: a run stored
    /// under it with the same job id, revision and job.yaml is this run, so a re-import into an older store stores it
    /// no second time. Only read with an `import_key`, and only where no run has that key.
    pub former_import_key: Option<String>,
    /// How the run was taken.
    pub kind: RunKind,
}

/// What a save did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Saved {
    Inserted(RunId),
    /// The run was already stored under the same import key; nothing was written.
    AlreadyStored(RunId),
}

impl Saved {
    pub fn run_id(self) -> RunId {
        match self {
            Saved::Inserted(id) | Saved::AlreadyStored(id) => id,
        }
    }
}

/// Which runs a listing or summary covers. Every field that is set must match. `job` matches the job id (whole, or
/// its first 8 digits or more) or the job name as a glob (`*`, `?`, `[...]`); `testcase` and `hostname` are globs
/// too.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFilter {
    pub job: Option<String>,
    pub testcase: Option<String>,
    pub hostname: Option<String>,
    /// Stored revision keys (full SHAs or labels); empty means every revision. Use
    /// [`Store::resolve_revision`] first to turn what a user typed into a key.
    pub revision_keys: Vec<String>,
    /// Only runs whose revision is this label.
    pub label: Option<String>,
    pub status: Option<RunStatus>,
    pub bisect_session: Option<SessionId>,
    /// Only runs of this kind; `None` lists both.
    pub kind: Option<RunKind>,
    /// Only runs of this build (exactly: a part the build leaves empty matches only a run without that param).
    pub build: Option<Build>,
}

impl RunFilter {
    /// Whether a listed run passes the filter's non-SQL parts (globs and exact strings), its job glob read against
    /// the run's own name. The stores read the glob as the jobs it names instead ([`RunFilter::resolved`]).
    pub fn matches(&self, run: &RunSummary) -> bool {
        let job_ok =
            self.job.as_deref().is_none_or(|job| names_job_id(job, &run.job_id) || glob::matches(job, &run.job_name));
        job_ok && self.matches_but_job(run)
    }

    /// The filter with its job glob read as the jobs it names: every job whose id it is, or one of whose runs is
    /// stored under a name it matches, with all of that job's runs. `stored` lists each (job id, job name) the store
    /// holds runs under. A run keeps the name its job had when it ran, and Culprit's naming rule can change (QA 45
    /// ended names cut at lkp's 31 characters with the job's id): matched run by run, `--job NEW-NAME` left out the
    /// job's runs stored under its old name, and one job's runs split in two.
    pub fn resolved(&self, stored: impl IntoIterator<Item = (String, String)>) -> ResolvedFilter<'_> {
        let jobs = self.job.as_deref().map(|pattern| {
            stored
                .into_iter()
                .filter(|(id, name)| names_job_id(pattern, id) || glob::matches(pattern, name))
                .map(|(id, _)| id)
                .collect()
        });
        ResolvedFilter { filter: self, jobs }
    }

    fn matches_but_job(&self, run: &RunSummary) -> bool {
        let testcase_ok = self.testcase.as_deref().is_none_or(|pattern| glob::matches(pattern, &run.testcase));
        let host_ok = self.hostname.as_deref().is_none_or(|pattern| glob::matches(pattern, &run.hostname));
        let key = run.revision.key();
        let revision_ok = self.revision_keys.is_empty() || self.revision_keys.iter().any(|k| k == key);
        let label_ok = self.label.as_deref().is_none_or(|label| {
            matches!(&run.revision, Revision::Label { name } if name == label)
        });
        let status_ok = self.status.is_none_or(|status| status == run.status());
        let kind_ok = self.kind.is_none_or(|kind| kind == run.kind);
        let build_ok = self.build.as_ref().is_none_or(|build| build == &run.build);
        testcase_ok && host_ok && revision_ok && label_ok && status_ok && kind_ok && build_ok
    }
}

/// The build a run measured: lkp's rootfs, kconfig and compiler, the levels of its result path between the test box
/// and the commit (`/result/<testcase>/<path_params>/<tbox_group>/<rootfs>/<kconfig>/<compiler>/<commit>/<run>`).
/// They are metadata, left out of a job's id, so one job's runs at one commit may come from several builds; lkp reads
/// each build's runs as a table of its own, and so does `culprit compare`. Each part is the run's stored param of
/// that name, empty when the run has none.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Build {
    pub rootfs: String,
    pub kconfig: String,
    pub compiler: String,
}

impl Build {
    /// The params a build is read from, in the order of lkp's result path.
    pub const PARAMS: [&'static str; 3] = ["rootfs", "kconfig", "compiler"];

    /// The build of a run with these stored params (the first value of each name, as the store reads it).
    pub fn of_params(params: &[(String, String)]) -> Build {
        let value = |name: &str| params.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).unwrap_or_default();
        Build { rootfs: value("rootfs"), kconfig: value("kconfig"), compiler: value("compiler") }
    }

    /// Whether the run has none of the three params.
    pub fn is_empty(&self) -> bool {
        self.rootfs.is_empty() && self.kconfig.is_empty() && self.compiler.is_empty()
    }

    /// The build as lkp's result path names it, its parts that are set joined by `/` (`debian-12/x86_64-rhel-8.3/
    /// gcc-12`); a build without any reads `no rootfs/kconfig/compiler`.
    pub fn label(&self) -> String {
        if self.is_empty() {
            return "no rootfs/kconfig/compiler".to_string();
        }
        let parts = [&self.rootfs, &self.kconfig, &self.compiler];
        parts.iter().filter(|p| !p.is_empty()).map(|p| p.as_str()).collect::<Vec<_>>().join("/")
    }
}

/// How many leading digits of a job id name the job, as the ones job names and messages end with.
pub const JOB_ID_PREFIX_DIGITS: usize = 8;

/// Whether `given` names the job of id `id`: the whole id, or its first [`JOB_ID_PREFIX_DIGITS`] digits or more, as
/// a name cut at lkp's 31 characters ends with (`...~3fa2c1d4`) and messages add to a name two jobs share.
fn names_job_id(given: &str, id: &str) -> bool {
    let digits = given.len() >= JOB_ID_PREFIX_DIGITS && given.bytes().all(|b| b.is_ascii_hexdigit());
    given == id || (digits && id.starts_with(given))
}

/// A [`RunFilter`] whose job glob has been read as the ids of the jobs it names, by [`RunFilter::resolved`].
#[derive(Debug, Clone)]
pub struct ResolvedFilter<'a> {
    filter: &'a RunFilter,
    /// The ids of the jobs named; `None` when the filter names no job.
    jobs: Option<BTreeSet<String>>,
}

impl ResolvedFilter<'_> {
    /// Whether a listed run is of a job named and passes the filter's other parts.
    pub fn matches(&self, run: &RunSummary) -> bool {
        self.jobs.as_ref().is_none_or(|ids| ids.contains(&run.job_id)) && self.filter.matches_but_job(run)
    }
}

/// One stored run without its bulky parts (metrics, series, raw outputs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub id: RunId,
    pub job_id: String,
    /// `job` in JSON, as every command's JSON names the job; `job_name` is still read (QA 45b).
    #[serde(rename = "job", alias = "job_name")]
    pub job_name: String,
    pub testcase: String,
    pub revision: Revision,
    /// `machine` in JSON, as every command's JSON names the machine; `hostname` is still read (QA 45b).
    #[serde(rename = "machine", alias = "hostname")]
    pub hostname: String,
    pub started_at: f64,
    pub ended_at: f64,
    /// `None` for a successful run, the reason otherwise.
    pub failure_reason: Option<String>,
    pub exit_code: Option<i32>,
    pub metric_count: u64,
    /// How the run was taken; summaries serialized before run kinds existed read plain.
    #[serde(default)]
    pub kind: RunKind,
    /// The build the run measured (its rootfs, kconfig and compiler params); summaries serialized before builds
    /// were listed read as runs without any.
    #[serde(default)]
    pub build: Build,
    /// The filesystem the run's benchmark files were on ([`RunRecord::scratch`]), so that a comparison can say
    /// when its sides' differ without reading every run; `None` when the run recorded none.
    #[serde(default)]
    pub scratch: Option<culprit_core::model::ScratchFilesystem>,
}

impl RunSummary {
    pub fn status(&self) -> RunStatus {
        if self.failure_reason.is_some() {
            RunStatus::Failed
        } else {
            RunStatus::Ok
        }
    }
}

/// A run's machine and params ([`Store::run_facts`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFacts {
    pub id: RunId,
    pub machine: culprit_core::model::Machine,
    /// The run's params, flattened to `key: value` strings in the job's order ([`RunRecord::params`]).
    pub params: Vec<(String, String)>,
}

/// What `culprit compare` asks for: samples of several revisions, optionally narrowed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SampleQuery {
    /// Stored revision keys, in the order the columns should appear.
    pub revision_keys: Vec<String>,
    /// Job id, or job name glob.
    pub job: Option<String>,
    pub testcase: Option<String>,
    pub hostname: Option<String>,
    /// Only metrics whose name this regex matches (unanchored, Rust `regex` syntax).
    pub metric_regex: Option<String>,
    /// Runs whose samples are left out (`track --follow` reads its own runs, not the bisects' runs at the same
    /// commits, which were taken at another time and would move its series' levels).
    pub excluded_runs: BTreeSet<RunId>,
    /// The kind of runs whose samples are read: plain runs unless a caller asks for the profiling ones. The two are
    /// never read together, since a profiling run's benchmark numbers carry perf's overhead.
    pub kind: RunKind,
    /// Only the runs of this build; `None` reads every build's runs.
    pub build: Option<Build>,
}

impl SampleQuery {
    /// The run filter the query's job, testcase, machine, kind and build narrow to (revisions are looked up one by
    /// one).
    pub fn run_filter(&self) -> RunFilter {
        RunFilter {
            job: self.job.clone(),
            testcase: self.testcase.clone(),
            hostname: self.hostname.clone(),
            kind: Some(self.kind),
            build: self.build.clone(),
            ..RunFilter::default()
        }
    }

    /// The compiled metric regex, or a clear error naming the pattern.
    pub fn metric_filter(&self) -> Result<Option<regex::Regex>, StoreError> {
        self.metric_regex
            .as_deref()
            .map(|pattern| {
                regex::Regex::new(pattern)
                    .map_err(|e| StoreError::BadRegex { pattern: pattern.to_string(), reason: e.to_string() })
            })
            .transpose()
    }
}

/// The samples of one revision: per metric, the values of the successful runs in run-id order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RevisionSamples {
    pub revision: Revision,
    /// The successful runs the values come from, in the order of the values.
    pub ok_runs: Vec<RunId>,
    pub failed_runs: usize,
    /// The distinct reasons of the failed runs, so "all runs failed" can say why.
    pub failure_reasons: Vec<String>,
    /// Metric name to per-run values. A metric that some ok runs lack has fewer values than `ok_runs`; a
    /// stored NaN comes back as NaN.
    pub metrics: BTreeMap<String, Vec<f64>>,
}

/// One line of `culprit results`: the runs of one job on one revision on one machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultGroup {
    pub job_id: String,
    /// `job` in JSON, as in [`RunSummary`].
    #[serde(rename = "job", alias = "job_name")]
    pub job_name: String,
    pub testcase: String,
    pub revision: Revision,
    /// `machine` in JSON, as in [`RunSummary`].
    #[serde(rename = "machine", alias = "hostname")]
    pub hostname: String,
    pub ok_runs: u64,
    pub failed_runs: u64,
    /// Start time of the first run and end time of the last, seconds since the epoch.
    pub first_started_at: f64,
    pub last_ended_at: f64,
    /// The build the runs measured: one job's runs at one revision on one machine from two builds (rootfs, kconfig,
    /// compiler) are two lines, as compare reads them as two tables. Read as no build from JSON written before.
    #[serde(default)]
    pub build: Build,
}

/// What tells the lines of `culprit results` apart: a run's job id, revision key, machine and build.
pub type ResultGroupKey = (String, String, String, Build);

/// The line of `culprit results` a run is counted in (see [`summarize`]).
pub fn result_group_key(run: &RunSummary) -> ResultGroupKey {
    (run.job_id.clone(), run.revision.key().to_string(), run.hostname.clone(), run.build.clone())
}

impl ResultGroup {
    /// The key of the line, as [`result_group_key`] gives it for each of its runs.
    pub fn key(&self) -> ResultGroupKey {
        (self.job_id.clone(), self.revision.key().to_string(), self.hostname.clone(), self.build.clone())
    }
}

/// A stored revision and how many runs it has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredRevision {
    pub revision: Revision,
    pub runs: u64,
}

/// A new bisect session, as `culprit bisect` creates it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewBisectSession {
    pub repo: String,
    pub good: String,
    pub bad: String,
    pub job_id: Option<String>,
    pub metric: Option<String>,
    /// The bisect's own configuration, opaque to the store.
    pub config_json: String,
    pub created_at: f64,
    /// The candidate commits, good first and bad last, stored with the session so that its log and report can be
    /// replayed from the store alone (on a farm's dashboard, or after the repository is gone).
    #[serde(default)]
    pub range: Vec<BisectCommit>,
}

/// One candidate commit of a bisect session, with its parents as positions in the session's range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BisectCommit {
    pub sha: String,
    pub subject: String,
    pub parents: Vec<usize>,
}

/// A stored bisect session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BisectSession {
    pub id: SessionId,
    pub repo: String,
    pub good: String,
    pub bad: String,
    pub job_id: Option<String>,
    pub metric: Option<String>,
    pub config_json: String,
    pub created_at: f64,
    /// Free text owned by the bisect engine; a new session is `running`.
    pub status: String,
    pub result_json: Option<String>,
    pub updated_at: Option<f64>,
}

/// The status a new bisect session starts with.
pub const NEW_SESSION_STATUS: &str = "running";

/// The tables whose rows belong to one bisect session alone (keyed by `session_id`), removed with it by
/// [`Store::delete_bisect_session`]: its links to its runs, its range, and `track --follow`'s record of it.
pub(crate) const SESSION_OWNED_TABLES: [&str; 3] = ["bisect_session_runs", "bisect_range_commits", "follow_sessions"];

/// A bisect session that `track --follow` started (or resumed) on a machine, and when its report was written.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FollowSession {
    pub session: SessionId,
    /// When the pass wrote its mails (or noted that it has none); `None` while it is still to report.
    pub reported_at: Option<f64>,
}

/// The id of a recorded `culprit try-fix`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TryFixId(pub i64);

shown_as_number!(TryFixId);

/// Which of the three a try-fix's run measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TryFixSide {
    Base,
    Bad,
    /// Bad with the patch applied.
    Fix,
}

impl TryFixSide {
    /// The word the store keeps in `try_fix_runs.side`.
    pub fn as_str(self) -> &'static str {
        match self {
            TryFixSide::Base => "base",
            TryFixSide::Bad => "bad",
            TryFixSide::Fix => "fix",
        }
    }

    /// The side a stored word names; `None` for a word this build does not know.
    pub fn from_stored(word: &str) -> Option<TryFixSide> {
        match word {
            "base" => Some(TryFixSide::Base),
            "bad" => Some(TryFixSide::Bad),
            "fix" => Some(TryFixSide::Fix),
            _ => None,
        }
    }
}

/// A new try-fix, as `culprit try-fix` records it before its first run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewTryFix {
    pub repo: String,
    /// The full SHAs of base and bad.
    pub base: String,
    pub bad: String,
    /// The label the patched tree's runs are stored under.
    pub fix: String,
    /// The patch file, as given (made absolute).
    pub patch: String,
    /// The patch's text as try-fix applied it, when it is UTF-8 text, so that a report can hand it over.
    pub patch_text: Option<String>,
    /// The command try-fix built each tree with (`--build`), if any.
    pub build: Option<String>,
    pub job_id: String,
    pub machine: String,
    pub created_at: f64,
}

/// A recorded try-fix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TryFix {
    pub id: TryFixId,
    pub repo: String,
    pub base: String,
    pub bad: String,
    pub fix: String,
    pub patch: String,
    /// The patch's text as applied; `None` for a try-fix recorded before stores kept it (schema version 9) and for
    /// a patch that is not UTF-8 text.
    pub patch_text: Option<String>,
    /// The build command; `None` without `--build` and for a try-fix recorded before schema version 9.
    pub build: Option<String>,
    pub job_id: String,
    pub machine: String,
    pub created_at: f64,
    /// When it measured every round; `None` for one interrupted or stopped before.
    pub finished_at: Option<f64>,
}

/// The result store. Writes take `&mut self`; every write is one transaction, so a crash or a failed write
/// leaves the store as it was before the call.
///
/// Text is read back as it was saved, NUL bytes included, from either back end: a crashed benchmark's stderr, a param,
/// a metric name or a commit subject can hold them, and a run must not fail to be stored for it. SQLite keeps them in
/// its TEXT columns; PostgreSQL's `text` refuses NUL, so its back end stores each as U+FFFE `0` (and U+FFFE as two)
/// and undoes that on reading. The one exception is a failed run's reason, a message for people: each NUL in it is
/// saved as U+2400 (`culprit_core::model::NUL_SHOWN_AS`, as `RunOutcome::failed` makes reasons), so that it lists
/// readably and no reader of the database cuts it short.
pub trait Store {
    /// Where the store lives, for messages (a file path or a server address).
    fn location(&self) -> String;

    /// Saves one run with everything it carries, in one transaction.
    fn save_run_with(&mut self, run: &RunRecord, options: &SaveOptions) -> Result<Saved, StoreError>;

    /// Saves one run with default options.
    fn save_run(&mut self, run: &RunRecord) -> Result<RunId, StoreError> {
        self.save_run_with(run, &SaveOptions::default()).map(Saved::run_id)
    }

    /// Lists stored runs that pass the filter, in run-id (insertion) order.
    fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError>;

    /// Fetches one full run record.
    fn run(&self, id: RunId) -> Result<RunRecord, StoreError>;

    /// Fetches several full run records, in the order of `ids`.
    fn runs(&self, ids: &[RunId]) -> Result<Vec<RunRecord>, StoreError> {
        ids.iter().map(|id| self.run(*id)).collect()
    }

    /// The machine and params of each of `ids`, in the order of `ids`: what a comparison reads of its runs beside
    /// their samples, to say when runs ran on different machine facts or resolved the job to different workloads,
    /// without reading each run's metrics, monitor series and outputs. An unknown id is `NotFound`.
    fn run_facts(&self, ids: &[RunId]) -> Result<Vec<RunFacts>, StoreError>;

    /// The samples for a comparison: one entry per requested revision key, in the requested order. An unknown
    /// key is an error, not an empty column.
    fn samples(&self, query: &SampleQuery) -> Result<Vec<RevisionSamples>, StoreError>;

    /// Every stored revision with its run count, in order of first appearance.
    fn revisions(&self) -> Result<Vec<StoredRevision>, StoreError>;

    /// Groups runs by job, revision and machine for `culprit results`, in order of each group's first run.
    fn results_summary(&self, filter: &RunFilter) -> Result<Vec<ResultGroup>, StoreError> {
        Ok(summarize(&self.list_runs(filter)?))
    }

    /// Turns what a user typed (full SHA, unique SHA prefix of at least 4 hex digits, label or `label:NAME`,
    /// `git describe` string) into a stored revision.
    fn resolve_revision(&self, given: &str) -> Result<Revision, StoreError> {
        resolve_revision_in(&self.revisions()?, given, &self.location())
    }

    /// Creates a session with its range, in one transaction.
    fn create_bisect_session(&mut self, session: &NewBisectSession) -> Result<SessionId, StoreError>;

    /// The candidate commits stored with a session, good first; empty for a session stored before schema
    /// version 4, whose range must come from its repository.
    fn bisect_session_range(&self, id: SessionId) -> Result<Vec<BisectCommit>, StoreError>;

    /// Every bisect session, oldest first.
    fn bisect_sessions(&self) -> Result<Vec<BisectSession>, StoreError>;

    fn bisect_session(&self, id: SessionId) -> Result<BisectSession, StoreError>;

    /// Records a session's new status and result.
    fn update_bisect_session(
        &mut self,
        id: SessionId,
        status: &str,
        result_json: Option<&str>,
        updated_at: f64,
    ) -> Result<(), StoreError>;

    /// Replaces a session's configuration (`culprit bisect --resume ID --build-timeout D` gives a session new step
    /// limits for this and later resumes). The store keeps it as opaque text, as it was given at creation.
    fn update_bisect_session_config(&mut self, id: SessionId, config_json: &str) -> Result<(), StoreError>;

    /// Removes session `id` from the store with what belongs to it alone: its links to its runs, its range, and
    /// `track --follow`'s record of it (`culprit bisect forget`). The runs themselves stay: `compare`, `results` and
    /// the references of `check` read them as any other runs. `NotFound` when there is no such session.
    fn delete_bisect_session(&mut self, id: SessionId) -> Result<(), StoreError>;

    /// Links an already stored run to a session (a run stored before the session can serve as evidence).
    /// Linking the same run twice is a no-op.
    fn link_run_to_session(&mut self, session: SessionId, run: RunId) -> Result<(), StoreError>;

    /// The runs of a session in the order they were linked, of both kinds (a replay of the bisect reads the plain
    /// ones: `RunFilter { bisect_session, kind: Some(RunKind::Profiling), .. }` lists the others).
    fn bisect_session_runs(&self, id: SessionId) -> Result<Vec<RunId>, StoreError>;

    /// Records that `track --follow` on `machine` started or resumed session `id`, so that a later pass reports it
    /// (recording it again is a no-op).
    fn record_follow_session(&mut self, id: SessionId, machine: &str) -> Result<(), StoreError>;

    /// The sessions `track --follow` started on `machine`, oldest first.
    fn follow_sessions(&self, machine: &str) -> Result<Vec<FollowSession>, StoreError>;

    /// Records that session `id`, started by `track --follow` on `machine`, was reported at `at` (seconds since the
    /// epoch); `NotFound` when follow never recorded it there.
    fn mark_follow_session_reported(&mut self, id: SessionId, machine: &str, at: f64) -> Result<(), StoreError>;

    /// Records a `culprit try-fix` before it measures, and returns its id.
    fn create_try_fix(&mut self, try_fix: &NewTryFix) -> Result<TryFixId, StoreError>;

    /// Records that stored `run` is one of try-fix `id`'s, of `side`. Linking it again changes nothing.
    fn link_run_to_try_fix(&mut self, id: TryFixId, run: RunId, side: TryFixSide) -> Result<(), StoreError>;

    /// Records that try-fix `id` measured every round, at `at`.
    fn finish_try_fix(&mut self, id: TryFixId, at: f64) -> Result<(), StoreError>;

    /// Every recorded try-fix, oldest first.
    fn try_fixes(&self) -> Result<Vec<TryFix>, StoreError>;

    /// The runs of try-fix `id` with their sides, in the order they were stored.
    fn try_fix_runs(&self, id: TryFixId) -> Result<Vec<(RunId, TryFixSide)>, StoreError>;

    /// Claims session `id` for the process that owns this store while it drives the session, where the store itself
    /// can keep two processes from driving one session: a store shared by machines, or reached under two spellings
    /// of its address, which the lock file beside the repository cannot tell apart. The claim lasts as long as this
    /// store stays open (a process killed with kill -9 loses it with its connection), and claiming again from the
    /// same store succeeds (and is one claim). A store of one machine (SQLite) has no such lock: the lock file is the
    /// whole lock.
    fn claim_bisect_session(&mut self, _id: SessionId) -> Result<SessionClaim, StoreError> {
        Ok(SessionClaim::Unsupported)
    }

    /// Gives up this store's claim of session `id`, once the session is no longer driven (a process that drives
    /// several bisects, as `track --follow` does, keeps its store open between them); nothing when it holds none.
    fn release_bisect_session(&mut self, _id: SessionId) -> Result<(), StoreError> {
        Ok(())
    }

    /// Who holds the claim of session `id` (see [`Store::claim_bisect_session`]), as far as the store can tell.
    fn bisect_session_claim(&self, _id: SessionId) -> Result<SessionClaim, StoreError> {
        Ok(SessionClaim::Unsupported)
    }
}

/// The state of a bisect session's claim in a store that can keep one (see [`Store::claim_bisect_session`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionClaim {
    /// This store holds the claim (after a claim), or nobody does (when asked who holds it).
    Free,
    /// Another process holds it: who it is, as its connection names itself (`culprit@HOST pid N from ADDRESS`).
    HeldBy(String),
    /// The store keeps no claims; only the lock file beside the repository tells.
    Unsupported,
}

/// A boxed store is a store, so `Box<dyn Store>` (SQLite or PostgreSQL, chosen at run time) can be passed as
/// `&mut store` wherever a `&mut dyn Store` is expected. Every method forwards, the provided ones too, so a back
/// end's own versions are kept.
impl<S: Store + ?Sized> Store for Box<S> {
    fn location(&self) -> String {
        (**self).location()
    }
    fn save_run_with(&mut self, run: &RunRecord, options: &SaveOptions) -> Result<Saved, StoreError> {
        (**self).save_run_with(run, options)
    }
    fn save_run(&mut self, run: &RunRecord) -> Result<RunId, StoreError> {
        (**self).save_run(run)
    }
    fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        (**self).list_runs(filter)
    }
    fn run(&self, id: RunId) -> Result<RunRecord, StoreError> {
        (**self).run(id)
    }
    fn runs(&self, ids: &[RunId]) -> Result<Vec<RunRecord>, StoreError> {
        (**self).runs(ids)
    }
    fn run_facts(&self, ids: &[RunId]) -> Result<Vec<RunFacts>, StoreError> {
        (**self).run_facts(ids)
    }
    fn samples(&self, query: &SampleQuery) -> Result<Vec<RevisionSamples>, StoreError> {
        (**self).samples(query)
    }
    fn revisions(&self) -> Result<Vec<StoredRevision>, StoreError> {
        (**self).revisions()
    }
    fn results_summary(&self, filter: &RunFilter) -> Result<Vec<ResultGroup>, StoreError> {
        (**self).results_summary(filter)
    }
    fn resolve_revision(&self, given: &str) -> Result<Revision, StoreError> {
        (**self).resolve_revision(given)
    }
    fn create_bisect_session(&mut self, session: &NewBisectSession) -> Result<SessionId, StoreError> {
        (**self).create_bisect_session(session)
    }
    fn bisect_session_range(&self, id: SessionId) -> Result<Vec<BisectCommit>, StoreError> {
        (**self).bisect_session_range(id)
    }
    fn bisect_sessions(&self) -> Result<Vec<BisectSession>, StoreError> {
        (**self).bisect_sessions()
    }
    fn bisect_session(&self, id: SessionId) -> Result<BisectSession, StoreError> {
        (**self).bisect_session(id)
    }
    fn update_bisect_session(
        &mut self,
        id: SessionId,
        status: &str,
        result_json: Option<&str>,
        updated_at: f64,
    ) -> Result<(), StoreError> {
        (**self).update_bisect_session(id, status, result_json, updated_at)
    }
    fn update_bisect_session_config(&mut self, id: SessionId, config_json: &str) -> Result<(), StoreError> {
        (**self).update_bisect_session_config(id, config_json)
    }
    fn delete_bisect_session(&mut self, id: SessionId) -> Result<(), StoreError> {
        (**self).delete_bisect_session(id)
    }
    fn link_run_to_session(&mut self, session: SessionId, run: RunId) -> Result<(), StoreError> {
        (**self).link_run_to_session(session, run)
    }
    fn bisect_session_runs(&self, id: SessionId) -> Result<Vec<RunId>, StoreError> {
        (**self).bisect_session_runs(id)
    }
    fn record_follow_session(&mut self, id: SessionId, machine: &str) -> Result<(), StoreError> {
        (**self).record_follow_session(id, machine)
    }
    fn follow_sessions(&self, machine: &str) -> Result<Vec<FollowSession>, StoreError> {
        (**self).follow_sessions(machine)
    }
    fn mark_follow_session_reported(&mut self, id: SessionId, machine: &str, at: f64) -> Result<(), StoreError> {
        (**self).mark_follow_session_reported(id, machine, at)
    }
    fn create_try_fix(&mut self, try_fix: &NewTryFix) -> Result<TryFixId, StoreError> {
        (**self).create_try_fix(try_fix)
    }
    fn link_run_to_try_fix(&mut self, id: TryFixId, run: RunId, side: TryFixSide) -> Result<(), StoreError> {
        (**self).link_run_to_try_fix(id, run, side)
    }
    fn finish_try_fix(&mut self, id: TryFixId, at: f64) -> Result<(), StoreError> {
        (**self).finish_try_fix(id, at)
    }
    fn try_fixes(&self) -> Result<Vec<TryFix>, StoreError> {
        (**self).try_fixes()
    }
    fn try_fix_runs(&self, id: TryFixId) -> Result<Vec<(RunId, TryFixSide)>, StoreError> {
        (**self).try_fix_runs(id)
    }
    fn claim_bisect_session(&mut self, id: SessionId) -> Result<SessionClaim, StoreError> {
        (**self).claim_bisect_session(id)
    }
    fn release_bisect_session(&mut self, id: SessionId) -> Result<(), StoreError> {
        (**self).release_bisect_session(id)
    }
    fn bisect_session_claim(&self, id: SessionId) -> Result<SessionClaim, StoreError> {
        (**self).bisect_session_claim(id)
    }
}

/// Groups run summaries into `culprit results` lines, one per job, revision, machine and build, keeping the order of
/// each group's first run; each group is named as its newest run.
pub fn summarize(runs: &[RunSummary]) -> Vec<ResultGroup> {
    let mut groups: Vec<ResultGroup> = Vec::new();
    let mut index: BTreeMap<ResultGroupKey, usize> = BTreeMap::new();
    for run in runs {
        let position = *index.entry(result_group_key(run)).or_insert_with(|| {
            groups.push(ResultGroup {
                job_id: run.job_id.clone(),
                job_name: run.job_name.clone(),
                testcase: run.testcase.clone(),
                revision: run.revision.clone(),
                hostname: run.hostname.clone(),
                ok_runs: 0,
                failed_runs: 0,
                first_started_at: run.started_at,
                last_ended_at: run.ended_at,
                build: run.build.clone(),
            });
            groups.len() - 1
        });
        if let Some(group) = groups.get_mut(position) {
            match run.status() {
                RunStatus::Ok => group.ok_runs += 1,
                RunStatus::Failed => group.failed_runs += 1,
            }
            group.first_started_at = group.first_started_at.min(run.started_at);
            // A group is under its newest run's name, as compare names a job (the naming rule can change).
            if run.ended_at >= group.last_ended_at {
                group.job_name = run.job_name.clone();
            }
            group.last_ended_at = group.last_ended_at.max(run.ended_at);
        }
    }
    groups
}

/// The shortest SHA prefix accepted, as git's own minimum abbreviation.
pub const MIN_SHA_PREFIX: usize = 4;

/// Resolves a user-given revision against the stored revisions (see [`Store::resolve_revision`]). Exact keys
/// win over `label:NAME`, describe names and prefixes, in that order, except that a label which also reads as the
/// SHA prefix of a stored commit is ambiguous; a `git describe` string that is not stored verbatim is resolved
/// through its `-g<hex>` suffix.
pub fn resolve_revision_in(stored: &[StoredRevision], given: &str, location: &str) -> Result<Revision, StoreError> {
    let given = given.trim();
    let prefix_of = |hex: &str| -> Vec<&StoredRevision> {
        let hex = hex.to_ascii_lowercase();
        stored
            .iter()
            .filter(|s| {
                matches!(&s.revision, Revision::Commit { sha, .. } if sha.to_ascii_lowercase().starts_with(&hex))
            })
            .collect()
    };
    let reads_as_prefix = |text: &str| text.len() >= MIN_SHA_PREFIX && text.bytes().all(|b| b.is_ascii_hexdigit());
    if let Some(found) = stored.iter().find(|s| s.revision.key() == given) {
        // A label that also reads as the prefix of a stored commit could mean either: which one is not guessed.
        if matches!(found.revision, Revision::Label { .. }) && reads_as_prefix(given) {
            let commits = prefix_of(given);
            if !commits.is_empty() {
                let mut candidates = vec![format!("label:{given}")];
                candidates.extend(commits.iter().map(|s| describe_candidate(&s.revision)));
                return Err(StoreError::AmbiguousRevision {
                    location: location.to_string(),
                    given: given.to_string(),
                    candidates,
                });
            }
        }
        return Ok(found.revision.clone());
    }
    // `label:NAME` is how `culprit results` prints a label, and it names the label even when NAME would also read
    // as a SHA prefix or a describe name.
    if let Some(name) = given.strip_prefix("label:") {
        return stored
            .iter()
            .find(|s| matches!(&s.revision, Revision::Label { name: n } if n == name))
            .map(|s| s.revision.clone())
            .ok_or_else(|| StoreError::UnknownRevision { location: location.to_string(), given: given.to_string() });
    }
    let by_describe: Vec<&StoredRevision> = stored
        .iter()
        .filter(|s| matches!(&s.revision, Revision::Commit { describe: Some(d), .. } if d == given))
        .collect();
    if let [only] = by_describe.as_slice() {
        return Ok(only.revision.clone());
    }
    let prefix = describe_hash(given).unwrap_or(given);
    if reads_as_prefix(prefix) {
        match prefix_of(prefix).as_slice() {
            [only] => return Ok(only.revision.clone()),
            [] => {}
            many => {
                return Err(StoreError::AmbiguousRevision {
                    location: location.to_string(),
                    given: given.to_string(),
                    candidates: many.iter().map(|s| describe_candidate(&s.revision)).collect(),
                })
            }
        }
    }
    if by_describe.len() > 1 {
        return Err(StoreError::AmbiguousRevision {
            location: location.to_string(),
            given: given.to_string(),
            candidates: by_describe.iter().map(|s| describe_candidate(&s.revision)).collect(),
        });
    }
    Err(StoreError::UnknownRevision { location: location.to_string(), given: given.to_string() })
}

/// The abbreviated hash at the end of a `git describe` string (`v6.8-rc1-12-gdeadbeef` gives `deadbeef`).
fn describe_hash(given: &str) -> Option<&str> {
    let (_, tail) = given.rsplit_once("-g")?;
    (tail.len() >= MIN_SHA_PREFIX && tail.bytes().all(|b| b.is_ascii_hexdigit())).then_some(tail)
}

fn describe_candidate(revision: &Revision) -> String {
    match revision {
        Revision::Commit { sha, describe: Some(d), .. } => format!("{sha} ({d})"),
        other => other.key().to_string(),
    }
}

/// A range commit's parents as stored: positions, space-separated.
pub(crate) fn parents_to_text(parents: &[usize]) -> String {
    parents.iter().map(usize::to_string).collect::<Vec<_>>().join(" ")
}

/// The parents of the range commit at `position` of `session`, read back; a value that is not a list of positions
/// before `position` is reported, never guessed.
pub(crate) fn parents_from_text(
    text: &str,
    position: usize,
    session: SessionId,
    location: &str,
) -> Result<Vec<usize>, StoreError> {
    let bad = |reason: String| StoreError::BadStoredValue {
        location: location.to_string(),
        what: format!("parents of commit {position} in the range of bisect session {session}"),
        reason,
    };
    text.split_whitespace()
        .map(|p| match p.parse::<usize>() {
            Ok(parent) if parent < position => Ok(parent),
            Ok(parent) => Err(bad(format!("parent {parent} does not come before the commit"))),
            Err(e) => Err(bad(format!("{p:?} is not a position: {e}"))),
        })
        .collect()
}
