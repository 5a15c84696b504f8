//! An atomic job: one point of a job file's matrix, with its name, lkp's `path_params`, a stable id, the programs and
//! monitors it selects, typed param access, and validation hooks for the run layer.

use crate::convention;
use crate::load::{file_stem, kind_of, scalar_text};
use crate::locate::SourceMap;
use crate::table::{self, is_metadata_key, key_role, KeyRole, NAME_COMMIT_KEYS};
use crate::{JobError, Place};
use serde_yaml::{Mapping, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::sync::Arc;

/// How much of each value lkp keeps in `path_params` (`v.to_s[0..30]`).
const PATH_VALUE_CHARS: usize = 31;

/// How many digits of the job's id end a name whose path_params leave part of the workload out.
pub const NAME_ID_DIGITS: usize = 8;

/// Finds lines of keys in the file an atomic job came from, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Locator {
    file: String,
    source: Arc<SourceMap>,
    /// The documents merged into the job, the one whose keys win first.
    documents: Vec<usize>,
}

impl Locator {
    fn place(&self, path: &[&str]) -> Place {
        self.source.place(&self.file, self.source.locate_any(&self.documents, path))
    }

    /// The place of `key`, looked up under each parent in turn (`[]` for top level), else of the first parent.
    fn place_of_param(&self, parents: &[&str], key: &str, top_level_too: bool) -> Place {
        let mut paths: Vec<Vec<&str>> = parents.iter().map(|parent| vec![*parent, key]).collect();
        if top_level_too {
            paths.push(vec![key]);
        }
        let line = self
            .source
            .locate_first_exact(&self.documents, &paths)
            .or_else(|| {
                parents
                    .first()
                    .and_then(|parent| self.source.locate_any(&self.documents, &[parent]))
            });
        self.source.place(&self.file, line)
    }
}

/// One matrix point of a job file.
#[derive(Debug, Clone, PartialEq)]
pub struct AtomicJob {
    params: Mapping,
    at: Locator,
}

/// A program the job selects, with its params merged: the params its selecting key implies, then the job's
/// top-level params, then its lkp setup hash (`fio-setup-basic`), then its own hash; later ones win.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgramUse {
    /// The program's name in Culprit (`fsmark` for `fs_mark`, `sysbench` for `sysbench-cpu`).
    pub name: &'static str,
    /// The key as written in the job.
    pub key: String,
    pub params: Mapping,
    at: Locator,
}

/// A monitor the job selects, with its options (empty when the key has no value).
#[derive(Debug, Clone, PartialEq)]
pub struct MonitorUse {
    pub name: &'static str,
    pub options: Mapping,
    at: Locator,
}

/// A key the run layer cannot act on, found by [`AtomicJob::unknown_keys`]. Its message names the file, line and key
/// and says what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyProblem {
    /// No key selects a benchmark program.
    NoProgram { place: Place },
    /// A key holds a hash or nothing, which selects a program or monitor in lkp, but no such one is known.
    UnknownProgram { place: Place, key: String },
    /// A key in a program's or monitor's hash that it does not accept. `hash` is the key of the hash as written
    /// (`sysbench-memory`, `fio-setup-basic`), which can name the program more closely than `owner` (`sysbench`).
    UnknownParam {
        place: Place,
        owner: String,
        hash: String,
        key: String,
    },
    /// A top-level param that a selected program accepts, holding a hash or nothing: a param takes a value.
    ParamWithoutValue {
        place: Place,
        key: String,
        programs: String,
        found: &'static str,
    },
    /// A top-level param that none of the selected programs accepts.
    UnusedParam {
        place: Place,
        key: String,
        programs: String,
    },
    /// An lkp setup hash for a program the job does not select.
    OrphanSetup {
        place: Place,
        key: String,
        program: &'static str,
    },
}

impl std::fmt::Display for KeyProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyProblem::NoProgram { place } => write!(
                f,
                "{place}: the job selects no benchmark program; add a key naming one of: {}",
                table::program_names()
            ),
            // lkp's own benchmark is no misspelt key: removing it would leave a job of no benchmark.
            KeyProblem::UnknownProgram { place, key } if table::is_lkp_program_not_run(key) => write!(
                f,
                "{place}: '{key}' is an lkp program that culprit run does not run (it runs {}); run this job \
                 with lkp, for which `culprit split` writes its atomic jobs, or measure with one of the programs \
                 Culprit runs",
                table::program_names()
            ),
            KeyProblem::UnknownProgram { place, key } => write!(
                f,
                "{place}: '{key}' is not a program or monitor Culprit knows; programs: {}; monitors: {}; remove it or fix its name",
                table::program_names(),
                table::monitor_names()
            ),
            // The hash as written names the program (`sysbench-cpu`) where its owner names the family (`sysbench`).
            KeyProblem::UnknownParam { place, owner, hash, key } => {
                let named = if hash.is_empty() { owner } else { hash };
                write!(f, "{place}: {named} has no param '{key}'; remove it or fix its name")
            }
            KeyProblem::ParamWithoutValue { place, key, programs, found } => write!(
                f,
                "{place}: '{key}' is a param of {programs}, so it takes a value (a scalar, or a list of them for \
                 several jobs), but {found}; write e.g. '{key}: 2'"
            ),
            KeyProblem::UnusedParam { place, key, programs } => write!(
                f,
                "{place}: top-level param '{key}' is not used by any selected program ({programs}); remove it or fix its name"
            ),
            KeyProblem::OrphanSetup { place, key, program } => write!(
                f,
                "{place}: '{key}' holds {program}'s params but the job does not select {program}; add a line '{program}:'"
            ),
        }
    }
}

/// The text lkp's Ruby `to_s` gives a scalar (numbers and booleans as written, text as is).
fn value_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        other => scalar_text(other).unwrap_or_else(|| json_text(other)),
    }
}

fn to_json(value: &Value) -> serde_json::Value {
    match value {
        Value::Null => serde_json::Value::Null,
        Value::Sequence(items) => serde_json::Value::Array(items.iter().map(to_json).collect()),
        Value::Mapping(mapping) => {
            let mut object = serde_json::Map::new();
            for (k, v) in mapping {
                object.insert(value_text(k), to_json(v));
            }
            serde_json::Value::Object(object)
        }
        Value::Tagged(tagged) => to_json(&tagged.value),
        scalar => serde_json::Value::String(value_text(scalar)),
    }
}

fn json_text(value: &Value) -> String {
    to_json(value).to_string()
}

/// The canonical form hashed into a job's id: keys sorted at every level, scalars as text (so `4` and `"4"` are the
/// same value), and an empty hash the same as no value.
fn canonical(value: &Value) -> serde_json::Value {
    match value {
        Value::Mapping(mapping) if mapping.is_empty() => serde_json::Value::Null,
        Value::Mapping(mapping) => {
            let sorted: BTreeMap<String, serde_json::Value> = mapping
                .iter()
                .map(|(k, v)| (value_text(k), canonical(v)))
                .collect();
            serde_json::Value::Object(sorted.into_iter().collect())
        }
        Value::Sequence(items) => serde_json::Value::Array(items.iter().map(canonical).collect()),
        other => to_json(other),
    }
}

/// lkp's `tr('^-a-zA-Z0-9+=:.%', '_')`.
fn path_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '=' | ':' | '.' | '%') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// lkp's `rootfs_filename`: the last part of a rootfs path.
fn rootfs_filename(rootfs: &str) -> &str {
    rootfs
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        .next()
        .unwrap_or(rootfs)
}

/// The boolean a text value is to lkp, whose Ruby reads job files as YAML 1.1: `on`/`yes` are true and `off`/`no`
/// false (in lower case, capitalized or upper case), where YAML 1.2, which Culprit reads, keeps them as text. Only
/// names follow it (lkp names `wal_compression: on` `true`, and leaves `mem_hugetlb: off` out as any false value); the
/// value a program is given and the job's id keep the text typed.
fn yaml11_bool(value: &Value) -> Option<bool> {
    let Value::String(text) = value else { return None };
    match text.as_str() {
        "on" | "On" | "ON" | "yes" | "Yes" | "YES" => Some(true),
        "off" | "Off" | "OFF" | "no" | "No" | "NO" => Some(false),
        _ => None,
    }
}

impl AtomicJob {
    /// [`yaml11_bool`] of the value at key path `path`, unless the job file has it quoted: Ruby's YAML 1.1 reads
    /// `'on'` and `"off"` as the text they are, as YAML 1.2 does, so lkp's name keeps them as typed.
    fn yaml11_bool_at(&self, path: &[&str], value: &Value) -> Option<bool> {
        let boolean = yaml11_bool(value)?;
        let Value::String(word) = value else { return None };
        (!self.at.source.word_is_quoted(&self.at.documents, path, word)).then_some(boolean)
    }
}

/// Whether a top-level key is part of the workload (counts in path_params and the id).
fn is_workload_key(key: &str) -> bool {
    !matches!(key_role(key), KeyRole::Metadata | KeyRole::Monitor(_))
}

/// Collects the `(key, value)` pairs path_params are made of; returns whether a hash that counts in the job's id was
/// left out of them (a command's `capture`).
fn collect_path_params<'a>(path: &[&'a str], value: &'a Value, out: &mut Vec<(Vec<&'a str>, &'a Value)>) -> bool {
    let key = path.last().copied().unwrap_or_default();
    match value {
        // A `command` job's `capture` and `provenance` regexes say how to read its output, not what it runs; in
        // names they are only noise (`ops: ([0-9.]+)` becomes `ops:___0-9.__`). They still count in the job's id.
        Value::Mapping(inner) if key == "capture" || key == "provenance" => !inner.is_empty(),
        Value::Mapping(inner) => {
            let mut left_out = false;
            for (k, v) in inner {
                let inner_path: Vec<&str> = path.iter().copied().chain([k.as_str().unwrap_or_default()]).collect();
                left_out |= collect_path_params(&inner_path, v, out);
            }
            left_out
        }
        other => {
            out.push((path.to_vec(), other));
            false
        }
    }
}

fn typed<T>(
    place: impl Fn() -> Place,
    key: &str,
    value: Option<&Value>,
    convert: impl Fn(&str) -> Result<T, convention::ConventionError>,
) -> Result<Option<T>, JobError> {
    let Some(text) = text_param(&place, key, value)? else {
        return Ok(None);
    };
    convert(&text).map(Some).map_err(|e| JobError::Param {
        place: place(),
        key: key.to_string(),
        reason: e.to_string(),
    })
}

fn text_param(
    place: &dyn Fn() -> Place,
    key: &str,
    value: Option<&Value>,
) -> Result<Option<String>, JobError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(value) => match scalar_text(value) {
            Some(text) => Ok(Some(text)),
            None => Err(JobError::Param {
                place: place(),
                key: key.to_string(),
                reason: format!("expected a single value, found {}", kind_of(value)),
            }),
        },
    }
}

fn params_text(params: &Mapping) -> BTreeMap<String, String> {
    params
        .iter()
        .map(|(k, v)| {
            (
                value_text(k),
                if v.is_null() {
                    String::new()
                } else {
                    value_text(v)
                },
            )
        })
        .collect()
}

macro_rules! typed_accessors {
    ($map:ident, $path:ident) => {
        /// A param as text; `None` when absent or empty; an error when it is a list or hash.
        pub fn param_str(&self, key: &str) -> Result<Option<String>, JobError> {
            text_param(&|| self.$path(key), key, self.$map.get(key))
        }

        /// A whole number or a share of `nr_cpu` (`50%`), see [`convention::share_or_count`].
        pub fn param_share_or_count(
            &self,
            key: &str,
            nr_cpu: u32,
        ) -> Result<Option<u64>, JobError> {
            typed(
                || self.$path(key),
                key,
                self.$map.get(key),
                |v| convention::share_or_count(v, nr_cpu),
            )
        }

        /// A duration in seconds, see [`convention::duration_secs`].
        pub fn param_duration_secs(&self, key: &str) -> Result<Option<u64>, JobError> {
            typed(
                || self.$path(key),
                key,
                self.$map.get(key),
                convention::duration_secs,
            )
        }

        /// A size in bytes, see [`convention::size_bytes`].
        pub fn param_size_bytes(&self, key: &str) -> Result<Option<u64>, JobError> {
            typed(
                || self.$path(key),
                key,
                self.$map.get(key),
                convention::size_bytes,
            )
        }

        /// An iteration count, see [`convention::iterations`].
        pub fn param_iterations(&self, key: &str) -> Result<Option<u64>, JobError> {
            typed(
                || self.$path(key),
                key,
                self.$map.get(key),
                convention::iterations,
            )
        }

        /// Every param as text, for the run layer: scalars as written, an empty value as "", lists and hashes as
        /// JSON.
        pub fn params_text(&self) -> BTreeMap<String, String> {
            params_text(&self.$map)
        }
    };
}

impl ProgramUse {
    /// Where a param is written: in the program's own hash, its setup hash, or at top level.
    fn key_path(&self, key: &str) -> Place {
        let mut parents: Vec<&str> = vec![self.key.as_str()];
        if let Some(spec) = table::PROGRAMS.iter().find(|p| p.name == self.name) {
            parents.extend(spec.setup_keys.iter().copied());
        }
        self.at.place_of_param(&parents, key, true)
    }

    /// Where one of the program's params is written (its own hash, its setup hash, or top level), for the run
    /// layer's messages about a param it refuses. A flattened nested key (`capture.ops`) is placed at its own line
    /// under the program's hash (`ops:` under `capture:`), else at its outer key (`capture:`); a key that cannot be
    /// found is placed at the program's key.
    pub fn place_of(&self, key: &str) -> Place {
        let segments: Vec<&str> = key.split('.').collect();
        if segments.len() > 1 {
            let path: Vec<&str> = std::iter::once(self.key.as_str()).chain(segments.iter().copied()).collect();
            if let Some(line) = self.at.source.locate_first_exact(&self.at.documents, &[path]) {
                return self.at.source.place(&self.at.file, Some(line));
            }
        }
        self.key_path(segments[0])
    }
    typed_accessors!(params, key_path);
}

impl MonitorUse {
    fn key_path(&self, key: &str) -> Place {
        self.at.place_of_param(&[self.name], key, false)
    }
    typed_accessors!(options, key_path);
}

impl AtomicJob {
    pub(crate) fn new(
        file_name: &str,
        source: Arc<SourceMap>,
        documents: Vec<usize>,
        mut params: Mapping,
    ) -> Self {
        // lkp records where every job came from (`job_origin`), unless the file already says so.
        let origin = Value::String("job_origin".to_string());
        if !params.contains_key(&origin) {
            params.insert(origin, Value::String(file_name.to_string()));
        }
        let mut documents = documents;
        documents.reverse();
        AtomicJob {
            params,
            at: Locator {
                file: file_name.to_string(),
                source,
                documents,
            },
        }
    }

    /// An atomic job from params built in code (tests, the run layer's own jobs); `file_name` names it.
    pub fn from_params(file_name: &str, params: Mapping) -> Self {
        AtomicJob::new(file_name, Arc::new(SourceMap::default()), vec![0], params)
    }

    /// The file the job came from.
    pub fn file_name(&self) -> &str {
        &self.at.file
    }

    /// All params in file order, nested program hashes kept.
    pub fn params(&self) -> &Mapping {
        &self.params
    }

    /// Where a key (path) is in the job file, for the caller's own messages.
    pub fn place(&self, path: &[&str]) -> Place {
        self.at.place(path)
    }

    /// lkp's test case name: `testcase`, else `suite`, else the job file's stem.
    pub fn testcase(&self) -> String {
        ["testcase", "suite"]
            .iter()
            .find_map(|key| {
                self.params
                    .get(*key)
                    .and_then(scalar_text)
                    .filter(|s| !s.is_empty())
            })
            .unwrap_or_else(|| file_stem(&self.at.file))
    }

    /// lkp's `path_params`: the values of every workload param (top-level and nested in program hashes; not
    /// metadata, not monitors), ordered by key name, each cut to 31 characters, joined with `-`, with characters
    /// outside `-a-zA-Z0-9+=:.%` mapped to `_`. Empty and `false` values are left out, as in lkp; a job with no
    /// such value gives `defaults`. Culprit counts every non-metadata key, where lkp counts only the options its
    /// program scripts declare: the two agree on lkp's jobs because lkp jobs only carry such options.
    pub fn path_params(&self) -> String {
        self.path_params_cut().0
    }

    /// [`AtomicJob::path_params`], and whether they leave out part of the workload that the job's id counts: a
    /// value cut to 31 characters, or a command's `capture` hash.
    fn path_params_cut(&self) -> (String, bool) {
        let mut values: Vec<(Vec<&str>, &Value)> = Vec::new();
        let mut left_out = false;
        for (key, value) in &self.params {
            let key = key.as_str().unwrap_or_default();
            if is_workload_key(key) {
                left_out |= collect_path_params(&[key], value, &mut values);
            }
        }
        // A stable sort by the param's own key: equal keys (a top-level and a nested `test`) keep file order.
        values.sort_by(|a, b| a.0.last().cmp(&b.0.last()));
        let boolean = |path: &[&str], value: &Value| self.yaml11_bool_at(path, value);
        let parts: Vec<String> = values
            .into_iter()
            .filter(|(path, v)| !matches!(v, Value::Null | Value::Bool(false)) && boolean(path, v) != Some(false))
            .map(|(path, v)| {
                let text = match boolean(&path, v) {
                    Some(true) => "true".to_string(),
                    _ => value_text(v),
                };
                left_out |= text.chars().count() > PATH_VALUE_CHARS;
                text.chars().take(PATH_VALUE_CHARS).collect()
            })
            .collect();
        let joined = path_safe(&parts.join("-"));
        if joined.is_empty() {
            ("defaults".to_string(), left_out)
        } else {
            (joined, left_out)
        }
    }

    /// The atomic job's name, as lkp's `split-job` names its files (without `.yaml`): the job file's stem, `-`,
    /// path_params (with `~<8 digits of the id>` when they leave part of the workload out, see
    /// [`AtomicJob::name_from`]), then `-<value>` of each revision key present (`commit`, `ltp_commit`, ...) and
    /// `-<rootfs file>` when `rootfs` is set. A file `split` wrote (named `<stem of its job_origin>-...`) takes its
    /// job_origin's stem.
    pub fn name(&self) -> String {
        let own_stem = file_stem(&self.at.file);
        // A file that `split` wrote is named `<origin>-<path_params>`: run as it is, or after its runtime or size was
        // edited down for a quick run (which changes its path params, not its file name), it is named after the job it
        // came from (`job_origin`) with the path params it has now, instead of appending them to the old ones
        // (`fio-basic-...-300s-...-128G-...-3s-...-64M`, which read as the 300 s job it no longer was). Any other
        // file names its jobs, whatever its job_origin says, as lkp's split-job does.
        let origin = self.params.get("job_origin").and_then(scalar_text).map(|o| file_stem(&o));
        match origin {
            Some(origin) if !origin.is_empty() && own_stem.starts_with(&format!("{origin}-")) => {
                self.name_from(&origin)
            }
            _ => self.name_from(&own_stem),
        }
    }

    /// [`AtomicJob::name`] without the revision and rootfs values lkp's split-job appends (`commit`, `ltp_commit`, ...,
    /// the rootfs file): the name of the job whatever revision it ran at. A finished job.yaml of an lkp result root
    /// names its commit, so runs imported from one were listed under a name per commit, while Culprit keeps the
    /// revision beside the job.
    pub fn name_across_revisions(&self) -> String {
        let mut job = self.clone();
        for key in NAME_COMMIT_KEYS {
            job.params.remove(*key);
        }
        // The rootfs is no part of a job's identity either (the store keeps it as the run's build): an imported lkp
        // job was named `...-60s-debian-11.1-x86_64-20220510.cgz`, a name per rootfs (QA 47).
        job.params.remove("rootfs");
        job.name()
    }

    /// The file stem that gives this job the name `name` when the job is written to `<stem>.yaml` and read back:
    /// `name` without the `-<path_params>` (and the revision and rootfs values) that [`AtomicJob::name`] appends to
    /// a stem, so that a job written to a file under the name it already has does not carry its params twice
    /// (`fsmark-1x-16d-...-1x-16d-...`). `None` when `name` does not end with them, or when the job's `job_origin`
    /// would name the file's jobs after itself instead (a stem that starts with the origin's stem and `-`).
    pub fn stem_named(&self, name: &str) -> Option<String> {
        let suffix = self.name_from("");
        // A name stored before names that leave part of the job out ended with its id (QA 45) has no `~<id>`; its
        // stem is the same.
        let before_ids = suffix.replacen(&format!("~{}", &self.id()[..NAME_ID_DIGITS]), "", 1);
        let stem = name.strip_suffix(&suffix).or_else(|| name.strip_suffix(&before_ids))?;
        let origin = self.params.get("job_origin").and_then(scalar_text).map(|o| file_stem(&o));
        let origin_names = origin.is_some_and(|o| !o.is_empty() && stem.starts_with(&format!("{o}-")));
        (!stem.is_empty() && !origin_names).then(|| stem.to_string())
    }

    /// [`AtomicJob::name`] with `stem` for the job file's stem. Where path_params leave out part of the workload (a
    /// value cut to lkp's 31 characters, a command's `capture`), `~` and the first 8 digits of the job's id follow
    /// them: two command jobs whose commands differ past the cut (`perf bench sched pipe -l 100000` and `-l 200000`)
    /// were one name in every listing and message, and `--job GLOB` could not pick one. The same job keeps the same
    /// name, since its id is its workload's.
    fn name_from(&self, stem: &str) -> String {
        let (path_params, left_out) = self.path_params_cut();
        let mut name = format!("{stem}-{path_params}");
        if left_out {
            name.push('~');
            name.push_str(&self.id()[..NAME_ID_DIGITS]);
        }
        for key in NAME_COMMIT_KEYS {
            if let Some(value) = self.params.get(*key).and_then(scalar_text) {
                name.push('-');
                name.push_str(&path_safe(&value));
            }
        }
        if let Some(rootfs) = self.params.get("rootfs").and_then(scalar_text) {
            name.push('-');
            name.push_str(&path_safe(rootfs_filename(&rootfs)));
        }
        name
    }

    /// The workload params in canonical form (sorted keys, scalars as text), without metadata and monitors: what
    /// [`AtomicJob::id`] hashes. The param a setup script of lkp's asks its program for (`mysql-setup:` gives oltp
    /// `db_driver: mysql`) counts as the program's own, as [`AtomicJob::programs`] gives it: lkp's oltp.yaml ran on
    /// PostgreSQL before oltp started MariaDB for it, and its runs on the two engines must not meet under one id.
    pub fn normalized_params(&self) -> serde_json::Value {
        let mut workload: Mapping = self
            .params
            .iter()
            .filter(|(k, _)| is_workload_key(k.as_str().unwrap_or_default()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for script in table::SCRIPTS_APPLIED_BY_PROGRAMS {
            if workload.get(script.key).is_none() {
                continue;
            }
            let (param, implied) = script.implies;
            // A top-level param is the program's too, and wins over the script's (`db_driver: pgsql` beside it).
            if workload.get(param).is_some_and(|given| !given.is_null()) {
                continue;
            }
            let own = match workload.get_mut(script.program) {
                Some(Value::Mapping(own)) => own,
                Some(slot @ Value::Null) => {
                    *slot = Value::Mapping(Mapping::new());
                    let Value::Mapping(own) = slot else { continue };
                    own
                }
                _ => continue,
            };
            if own.get(param).is_none_or(Value::is_null) {
                own.insert(Value::String(param.to_string()), Value::String(implied.to_string()));
            }
        }
        canonical(&Value::Mapping(workload))
    }

    /// A stable id: the first 16 hex digits of the SHA-256 of [`AtomicJob::normalized_params`]. The same workload
    /// from two files, or with another commit or test box, has the same id, so its results meet.
    pub fn id(&self) -> String {
        let digest = Sha256::digest(self.normalized_params().to_string().as_bytes());
        digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }

    /// The atomic job as a YAML job file (readable back with [`crate::JobFile::parse`] into the same params).
    pub fn to_yaml(&self) -> String {
        format!(
            "---\n#! {}\n{}",
            self.at.file.replace('\n', " "),
            crate::yaml_out::to_yaml_keeping_plain_words(&self.params, &|path, word| {
                !self.at.source.word_is_quoted(&self.at.documents, path, word)
            })
        )
    }

    /// The programs the job selects, in file order.
    pub fn programs(&self) -> Vec<ProgramUse> {
        let top_level: Vec<(&Value, &Value)> = self
            .params
            .iter()
            .filter(|(k, v)| {
                let key = k.as_str().unwrap_or_default();
                // lkp's settings of the test box (`md: RAID0`, `debug-setup: tune`) are read by its setup scripts,
                // not by the benchmark, so no program is given them.
                matches!(key_role(key), KeyRole::Param)
                    && table::box_setting(key).is_none()
                    && !matches!(v, Value::Null | Value::Mapping(_))
            })
            .collect();
        let mut uses = Vec::new();
        for (key, value) in &self.params {
            let key_text = key.as_str().unwrap_or_default();
            let KeyRole::Program(spec, selector) = key_role(key_text) else {
                continue;
            };
            let mut params = Mapping::new();
            for (k, v) in selector.implies {
                params.insert(Value::String(k.to_string()), Value::String(v.to_string()));
            }
            // A setup script of lkp's that the program applies (oltp's MySQL server for `mysql-setup:`) asks for it
            // with a param, which the job's own params, inserted after it, may still override.
            for script in table::SCRIPTS_APPLIED_BY_PROGRAMS.iter().filter(|s| s.program == spec.name) {
                if self.params.get(script.key).is_some() {
                    let (k, v) = script.implies;
                    params.insert(Value::String(k.to_string()), Value::String(v.to_string()));
                }
            }
            for (k, v) in &top_level {
                params.insert((*k).clone(), (*v).clone());
            }
            for (k, v) in &self.params {
                if matches!(key_role(k.as_str().unwrap_or_default()), KeyRole::Setup(s) if s.name == spec.name)
                {
                    if let Value::Mapping(setup) = v {
                        for (sk, sv) in setup {
                            params.insert(sk.clone(), sv.clone());
                        }
                    }
                }
            }
            let applied_here = |key: &Value| {
                table::SCRIPTS_APPLIED_BY_PROGRAMS.iter().any(|script| {
                    script.program == spec.name
                        && key.as_str() == Some(script.implies.0)
                        && self.params.get(script.key).is_some()
                })
            };
            if let Value::Mapping(own) = value {
                for (k, v) in own {
                    // A param given without a value (`oltp: {db_driver: }`) is not given: it does not take back
                    // what an applied script asked for, which silently ran lkp's MySQL job on PostgreSQL.
                    if v.is_null() && applied_here(k) {
                        continue;
                    }
                    params.insert(k.clone(), v.clone());
                }
            }
            uses.push(ProgramUse {
                name: spec.name,
                key: key_text.to_string(),
                params,
                at: self.at.clone(),
            });
        }
        uses
    }

    /// The monitors the job names, in file order. A job without monitor keys gives none: the run layer applies
    /// its default set.
    pub fn monitors(&self) -> Vec<MonitorUse> {
        self.params
            .iter()
            .filter_map(
                |(key, value)| match key_role(key.as_str().unwrap_or_default()) {
                    KeyRole::Monitor(name) => Some(MonitorUse {
                        name,
                        options: value.as_mapping().cloned().unwrap_or_default(),
                        at: self.at.clone(),
                    }),
                    _ => None,
                },
            )
            .collect()
    }

    /// A top-level param as text (`None` when absent or empty).
    pub fn param_str(&self, key: &str) -> Result<Option<String>, JobError> {
        text_param(&|| self.at.place(&[key]), key, self.params.get(key))
    }

    /// The job's `timeout` in seconds, if set (`timeout: 10m`).
    pub fn timeout_secs(&self) -> Result<Option<u64>, JobError> {
        let secs = typed(
            || self.at.place(&["timeout"]),
            "timeout",
            self.params.get("timeout"),
            convention::duration_secs,
        )?;
        // A zero timeout would kill every run the moment it starts: certainly a mistake, so it is refused here.
        if secs == Some(0) {
            return Err(JobError::Param {
                place: self.at.place(&["timeout"]),
                key: "timeout".to_string(),
                reason: "a zero timeout would kill every run at once; give a duration such as 300s, or remove it for none"
                    .to_string(),
            });
        }
        Ok(secs)
    }

    /// Program and monitor keys must hold a hash of params or nothing.
    pub(crate) fn check_structure(&self) -> Result<(), JobError> {
        for (key, value) in &self.params {
            let key_text = key.as_str().unwrap_or_default();
            let what = match key_role(key_text) {
                KeyRole::Program(spec, _) => format!("the program {}", spec.name),
                KeyRole::Setup(spec) => format!("lkp's setup hash for {}", spec.name),
                KeyRole::Monitor(name) => format!("the monitor {name}"),
                KeyRole::Metadata | KeyRole::Param => continue,
            };
            if !matches!(value, Value::Null | Value::Mapping(_)) {
                return Err(JobError::NeedsHash {
                    place: self.at.place(&[key_text]),
                    key: key_text.to_string(),
                    what,
                    found: format!("{} ({})", kind_of(value), value_text(value)),
                });
            }
        }
        Ok(())
    }

    /// Every key the run layer cannot act on. `accepts(owner, key)` says whether a program (by its Culprit name) or
    /// a monitor accepts a param. Checked: each key of a program's, setup or monitor hash against its owner; each
    /// top-level param against the selected programs (one accepting it is enough); keys holding a hash or nothing
    /// that name no known program or monitor; setup hashes without their program; and a job with no program.
    pub fn unknown_keys(&self, accepts: &dyn Fn(&str, &str) -> bool) -> Vec<KeyProblem> {
        let programs = self.programs();
        let selected: Vec<&'static str> = programs.iter().map(|p| p.name).collect();
        let mut problems = Vec::new();
        if selected.is_empty() {
            problems.push(KeyProblem::NoProgram {
                place: self.at.place(&[]),
            });
        }
        for (key, value) in &self.params {
            let key_text = key.as_str().unwrap_or_default();
            let check_hash = |owner: &str, problems: &mut Vec<KeyProblem>| {
                if let Value::Mapping(inner) = value {
                    for inner_key in inner.keys() {
                        let inner_text = value_text(inner_key);
                        if !accepts(owner, &inner_text) {
                            problems.push(KeyProblem::UnknownParam {
                                place: self.at.place(&[key_text, &inner_text]),
                                owner: owner.to_string(),
                                hash: key_text.to_string(),
                                key: inner_text,
                            });
                        }
                    }
                }
            };
            match key_role(key_text) {
                KeyRole::Metadata => {}
                KeyRole::Program(spec, _) => check_hash(spec.name, &mut problems),
                KeyRole::Monitor(name) => check_hash(name, &mut problems),
                KeyRole::Setup(spec) => {
                    if selected.contains(&spec.name) {
                        check_hash(spec.name, &mut problems);
                    } else {
                        problems.push(KeyProblem::OrphanSetup {
                            place: self.at.place(&[key_text]),
                            key: key_text.to_string(),
                            program: spec.name,
                        });
                    }
                }
                // A setting of the test box is recorded, not applied, whatever its value: lkp's `fs: {fs: ext4,
                // mount_option: dax}` is a hash for its setup script, `fs2: [nfsv4, ~]` gives an empty one, and
                // `drop_caches:` has none.
                KeyRole::Param if table::box_setting(key_text).is_some() => {}
                KeyRole::Param => {
                    let takers: Vec<&str> =
                        selected.iter().copied().filter(|program| accepts(program, key_text)).collect();
                    // A param the selected program takes, given a hash or no value, is a mistake in its value; told
                    // it is no program or monitor known, the user was sent to fix a name that was right.
                    let holds_no_value = matches!(value, Value::Null | Value::Mapping(_));
                    if holds_no_value && !takers.is_empty() {
                        problems.push(KeyProblem::ParamWithoutValue {
                            place: self.at.place(&[key_text]),
                            key: key_text.to_string(),
                            programs: takers.join(", "),
                            found: if value.is_null() { "it has none" } else { "it holds a hash" },
                        });
                    } else if holds_no_value {
                        problems.push(KeyProblem::UnknownProgram {
                            place: self.at.place(&[key_text]),
                            key: key_text.to_string(),
                        });
                    } else if !selected.is_empty() && takers.is_empty() {
                        problems.push(KeyProblem::UnusedParam {
                            place: self.at.place(&[key_text]),
                            key: key_text.to_string(),
                            programs: selected.join(", "),
                        });
                    }
                }
            }
        }
        problems
    }

    /// The top-level params of this job that one of its programs takes, each with its place (file and line) as text:
    /// what a file's other atomic jobs read to tell a param shared by its first document, which lkp gives every
    /// program (`runtime: 2s` before a sysbench document and a perf bench document), from a misspelt one, when it
    /// is reported as [`KeyProblem::UnusedParam`].
    pub fn params_taken(&self, accepts: &dyn Fn(&str, &str) -> bool) -> Vec<(String, String)> {
        let selected: Vec<&'static str> = self.programs().iter().map(|p| p.name).collect();
        self.params
            .iter()
            .filter_map(|(key, _)| key.as_str())
            .filter(|key| matches!(key_role(key), KeyRole::Param))
            .filter(|key| selected.iter().any(|program| accepts(program, key)))
            .map(|key| (self.at.place(&[key]).to_string(), key.to_string()))
            .collect()
    }

    /// Whether a top-level key is metadata (see [`table::METADATA_KEYS`]).
    pub fn is_metadata(key: &str) -> bool {
        is_metadata_key(key)
    }
}
