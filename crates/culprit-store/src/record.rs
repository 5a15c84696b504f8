//! Checks and conversions both store back ends apply to run records, so SQLite and PostgreSQL accept and return
//! exactly the same records, and the parts of the run listing's SQL that do not depend on the placeholder syntax.

use crate::{RunFilter, RunKind, RunStatus, StoreError, TryFixSide};
use culprit_core::model::{nul_shown, RunOutcome, RunRecord, ScratchFilesystem};
use std::borrow::Cow;

/// The last columns of a run listing in both back ends: the build's three params (rootfs, kconfig, compiler), read
/// from `run_params` by the run's id (its primary key's first column), the first value of each name as
/// [`crate::Build::of_params`] takes it, so that a listing tells one build's runs from another's without reading
/// every run's params. A macro, so that each store's `concat!` builds its listing as one constant.
macro_rules! build_columns {
    () => {
        "(SELECT p.value FROM run_params p WHERE p.run_id = r.id AND p.name = 'rootfs' ORDER BY p.seq LIMIT 1), \
         (SELECT p.value FROM run_params p WHERE p.run_id = r.id AND p.name = 'kconfig' ORDER BY p.seq LIMIT 1), \
         (SELECT p.value FROM run_params p WHERE p.run_id = r.id AND p.name = 'compiler' ORDER BY p.seq LIMIT 1)"
    };
}
pub(crate) use build_columns;

/// The columns of `runs` that record the filesystem a run's benchmark files were on (schema version 7), after the
/// build's in a listing and wherever a run is read, in the order [`scratch_from_columns`] takes them. A macro, as
/// [`build_columns`] is, for the stores' `concat!`.
macro_rules! scratch_columns {
    () => {
        "r.scratch_path, r.scratch_fs_type, r.scratch_fs_source"
    };
}
pub(crate) use scratch_columns;

/// The filesystem recorded in a run's scratch columns: `None` when the run recorded none (stored before version 7,
/// or imported without an `fs`), which a NULL type says.
pub(crate) fn scratch_from_columns(
    path: Option<String>,
    fs_type: Option<String>,
    source: Option<String>,
) -> Option<ScratchFilesystem> {
    let fs_type = fs_type?;
    Some(ScratchFilesystem { path: path.unwrap_or_default(), fs_type, source: source.unwrap_or_default() })
}

/// A run's scratch filesystem as the three columns store it, NULL each when it recorded none.
pub(crate) fn scratch_to_columns(run: &RunRecord) -> [Option<&str>; 3] {
    match &run.scratch {
        Some(f) => [Some(f.path.as_str()), Some(f.fs_type.as_str()), Some(f.source.as_str())],
        None => [None, None, None],
    }
}

/// Completes the run listing's SQL, the same for both back ends once their placeholder conditions are in
/// `conditions`: the status and kind conditions, the WHERE clause, and the order (a bisect session's runs in the
/// order they were linked, otherwise by id).
pub(crate) fn finish_run_listing(sql: &mut String, mut conditions: Vec<String>, filter: &RunFilter) {
    if let Some(status) = filter.status {
        conditions.push(match status {
            RunStatus::Ok => "r.status = 'ok'".to_string(),
            RunStatus::Failed => "r.status = 'failed'".to_string(),
        });
    }
    if let Some(kind) = filter.kind {
        // The word is one of the enum's own, never user text.
        conditions.push(format!("r.kind = '{}'", kind.as_str()));
    }
    if !conditions.is_empty() {
        sql.push_str(" WHERE ");
        sql.push_str(&conditions.join(" AND "));
    }
    sql.push_str(if filter.bisect_session.is_some() { " ORDER BY b.id" } else { " ORDER BY r.id" });
}

/// The tables of another application's database, for [`StoreError::NotACulpritStore`]: how many, and the first
/// five by name, so that the user recognises the database they named by mistake.
pub(crate) fn foreign_tables_text(names: &[String]) -> String {
    let shown: Vec<&str> = names.iter().take(5).map(String::as_str).collect();
    let more = if names.len() > 5 { format!(" and {} more", names.len() - 5) } else { String::new() };
    format!("{} table(s): {}{more}", names.len(), shown.join(", "))
}

/// Rejects records the schema could not store faithfully, before any write.
pub(crate) fn validate_record(run: &RunRecord) -> Result<(), StoreError> {
    for (field, value) in [("started_at", run.started_at), ("ended_at", run.ended_at)] {
        if !value.is_finite() {
            return Err(StoreError::InvalidInput {
                field: format!("run.{field}"),
                reason: format!("{value} is not a time; runs need finite start and end times"),
            });
        }
    }
    i64::try_from(run.machine.memory_kib).map_err(|_| StoreError::InvalidInput {
        field: "machine.memory_kib".into(),
        reason: format!("{} KiB is beyond any real machine", run.machine.memory_kib),
    })?;
    Ok(())
}

/// The status word and failure reason a run is stored with. The reason is a message for people, so each NUL in it
/// is stored as `culprit_core::model::NUL_SHOWN_AS`, as [`RunOutcome::failed`] makes it: whatever made the run (the
/// executor, a bisect's build, an import, another program through this crate), its reason lists readably and is not
/// cut short at a NUL by any reader of the database. Every other text of the run is stored exactly.
pub(crate) fn stored_outcome(outcome: &RunOutcome) -> (&'static str, Option<Cow<'_, str>>) {
    match outcome {
        RunOutcome::Ok => ("ok", None),
        RunOutcome::Failed { reason } => ("failed", Some(nul_shown(reason))),
    }
}

/// A stored run kind back as a [`RunKind`]; a word this build does not know is a damaged (or newer) store, said so.
pub(crate) fn convert_run_kind(location: &str, run: i64, word: &str) -> Result<RunKind, StoreError> {
    RunKind::from_stored(word).ok_or_else(|| StoreError::BadStoredValue {
        location: location.to_string(),
        what: format!("the kind of run {run}"),
        reason: format!("{word:?} is neither plain nor profiling"),
    })
}

/// A stored try-fix side back as a [`TryFixSide`]; a word this build does not know is a damaged (or newer) store.
pub(crate) fn convert_try_fix_side(location: &str, id: i64, word: &str) -> Result<TryFixSide, StoreError> {
    TryFixSide::from_stored(word).ok_or_else(|| StoreError::BadStoredValue {
        location: location.to_string(),
        what: format!("the side of a run of try-fix {id}"),
        reason: format!("{word:?} is not base, bad or fix"),
    })
}

/// A stored exit code back as an exit status; a value that does not fit is a damaged store, said so.
pub(crate) fn convert_exit_code(location: &str, run: i64, code: Option<i64>) -> Result<Option<i32>, StoreError> {
    code.map(|c| {
        i32::try_from(c).map_err(|_| StoreError::BadStoredValue {
            location: location.to_string(),
            what: format!("the exit code of run {run}"),
            reason: format!("{c} does not fit a 32-bit exit status"),
        })
    })
    .transpose()
}

/// Seconds since the Unix epoch, for session timestamps.
pub(crate) fn now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

/// A machine row's columns as stored, in the order the back ends select them.
pub(crate) type MachineColumns = (String, String, i64, i64, String, Option<i64>);

/// A run's machine from its stored columns (hostname, CPU model, CPU count, memory, kernel, sockets), refusing a CPU
/// count, memory size or socket count that does not fit (a damaged row), naming the run.
pub(crate) fn machine_from_columns(
    location: &str,
    id: crate::RunId,
    (hostname, cpu_model, nr_cpu, memory_kib, kernel, sockets): MachineColumns,
) -> Result<culprit_core::model::Machine, crate::StoreError> {
    let bad = |what: String, reason: String| crate::StoreError::BadStoredValue {
        location: location.to_string(),
        what,
        reason,
    };
    Ok(culprit_core::model::Machine {
        hostname,
        cpu_model,
        nr_cpu: u32::try_from(nr_cpu).map_err(|_| bad(format!("the CPU count of run {id}"), nr_cpu.to_string()))?,
        memory_kib: u64::try_from(memory_kib)
            .map_err(|_| bad(format!("the memory size of run {id}"), memory_kib.to_string()))?,
        kernel,
        // NULL: a machine row stored before schema version 10, or a run that could not count its sockets.
        sockets: match sockets {
            None => 0,
            Some(n) => u32::try_from(n).map_err(|_| bad(format!("the socket count of run {id}"), n.to_string()))?,
        },
    })
}
