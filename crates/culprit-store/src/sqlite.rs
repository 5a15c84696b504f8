//! The SQLite back end of the [`Store`] trait: one database file, WAL journal, foreign keys, embedded migrations.
//!
//! Every write is one `BEGIN IMMEDIATE` transaction: either the whole run (metrics, monitor series, raw outputs,
//! params, session link) is stored, or nothing is. SQLite's journal makes that hold across a crash or `kill -9`
//! too. A full disk or a read-only file makes the transaction roll back and the error says so.

use crate::record::{convert_exit_code, convert_run_kind, convert_try_fix_side, now, validate_record};
use crate::error::StoreError;
use crate::migrations::{self, Dialect};
use crate::packed::{
    kept_names,
    damaged, dense, lkp_time_names, names_in_order, pack, revision_samples, run_metrics, union_of_ids, unpack_into,
    RevisionRuns, Unpacked,
};
use crate::{
    parents_from_text, parents_to_text, BisectCommit, BisectSession, Build, FollowSession, NewBisectSession,
    NewTryFix, RevisionSamples, RunFacts, RunFilter, RunId, RunSummary, SampleQuery, SaveOptions, Saved, SessionId,
    Store, StoredRevision, TryFix, TryFixId, TryFixSide, NEW_SESSION_STATUS, SESSION_OWNED_TABLES,
};
use culprit_core::model::{MonitorSeries, RawOutput, Revision, RunOutcome, RunRecord, ScratchFilesystem};
use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension, Transaction, TransactionBehavior};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a writer waits for another process's lock before giving up with [`StoreError::Busy`].
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Options for [`SqliteStore::open_with`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenOptions {
    /// Open without write access: listing and comparing work, saving fails with [`StoreError::ReadOnly`]. A file
    /// without write permission is always opened this way.
    pub read_only: bool,
    /// A cap on the database size in bytes (rounded down to whole pages). Writes beyond it fail exactly as on a
    /// full disk, with [`StoreError::Full`]; it keeps a store on a shared disk from filling it.
    pub size_limit_bytes: Option<u64>,
}

/// A read-only `connection` to `path` that can read, reopened as immutable when it cannot: a WAL database whose
/// shared-memory file is gone (closed cleanly) cannot be read from a directory the process may not write, where
/// SQLite would create that file. Without a `-wal` file beside it the database file holds every commit, so reading
/// it as immutable reads what is stored; with one, a writer is at work (or crashed) and the error stands.
fn readable(connection: Connection, path: &Path, flags: OpenFlags) -> Result<Connection, StoreError> {
    let reads = connection.query_row("PRAGMA schema_version", [], |row| row.get::<_, i64>(0)).is_ok();
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    if reads || Path::new(&wal).exists() {
        return Ok(connection);
    }
    drop(connection);
    // A URI names the file: `%`, `?` and `#` in its path are escaped so that they stay part of it.
    let escaped: String = path
        .to_string_lossy()
        .chars()
        .map(|c| match c {
            '%' => "%25".to_string(),
            '?' => "%3f".to_string(),
            '#' => "%23".to_string(),
            c => c.to_string(),
        })
        .collect();
    let uri = format!("file:{escaped}?immutable=1");
    Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI).map_err(|e| StoreError::Open {
        location: path.display().to_string(),
        reason: e.to_string(),
        hint: "make the store's directory writable, or copy the store somewhere writable and give it with --db".into(),
    })
}

/// The SQLite result store.
pub struct SqliteStore {
    connection: Connection,
    path: PathBuf,
    read_only: bool,
    /// Metric name to `metric_names.id`. Names are never deleted, so an id once committed stays valid even when
    /// other processes write to the same file.
    metric_ids: HashMap<String, i64>,
}

impl SqliteStore {
    /// Opens (creating it and its parent directories if needed) the store at `path` and brings its schema up to
    /// date.
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteStore, StoreError> {
        SqliteStore::open_with(path, &OpenOptions::default())
    }

    /// Opens the store at `path` with options.
    pub fn open_with(path: impl AsRef<Path>, options: &OpenOptions) -> Result<SqliteStore, StoreError> {
        let path = path.as_ref().to_path_buf();
        let location = path.display().to_string();
        let existing = std::fs::metadata(&path).ok();
        if existing.as_ref().is_some_and(|m| m.is_dir()) {
            return Err(StoreError::Open {
                location,
                reason: "it is a directory".into(),
                hint: "give the path of a database file, e.g. culprit.db".into(),
            });
        }
        // Root ignores file permissions, so a file the user marked read-only would still be written to; honouring
        // the permission bits explicitly keeps "chmod a-w culprit.db" meaning "do not touch my results".
        let read_only = options.read_only || existing.as_ref().is_some_and(|m| m.permissions().readonly());
        if read_only && existing.is_none() {
            return Err(StoreError::Open {
                location,
                reason: "the file does not exist and the store was opened read-only".into(),
                hint: "run a job first to create it, or check CULPRIT_DB".into(),
            });
        }
        if !read_only {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|e| {
                    // "File exists" said nothing of which: the path's first part that is a file, not a directory.
                    let file = parent.ancestors().find(|a| a.is_file());
                    let reason = match file {
                        Some(file) => format!("{} is a file, not a directory: name another path", file.display()),
                        None => e.to_string(),
                    };
                    StoreError::CreateDir { path: parent.to_path_buf(), reason }
                })?;
            }
        }
        let flags = if read_only {
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX
        };
        let connection = Connection::open_with_flags(&path, flags).map_err(|e| StoreError::Open {
            location: location.clone(),
            reason: e.to_string(),
            hint: "check that the directory exists and is writable, or give another store with --db PATH or \
                   $CULPRIT_DB"
                .into(),
        })?;
        // SQLite opens a file the process may not write (another user's store) read-only without saying so; the
        // store then reads as a read-only one instead of failing at its first write (the WAL switch), so that
        // `culprit results` or `compare` of a colleague's store work.
        let read_only = read_only || connection.is_readonly(rusqlite::MAIN_DB).unwrap_or(false);
        let connection = if read_only { readable(connection, &path, flags)? } else { connection };
        let mut store = SqliteStore { connection, path, read_only, metric_ids: HashMap::new() };
        store.configure(options)?;
        store.migrate()?;
        Ok(store)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version the database is at.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        self.connection
            .query_row("SELECT COALESCE(MAX(version), 0) FROM schema_version", [], |row| row.get(0))
            .map_err(|e| self.classify("read the schema version", e))
    }

    fn configure(&mut self, options: &OpenOptions) -> Result<(), StoreError> {
        self.connection.busy_timeout(BUSY_TIMEOUT).map_err(|e| self.classify("set the busy timeout", e))?;
        self.connection
            .pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| self.classify("enable foreign keys", e))?;
        if !self.read_only {
            // Another application's database is refused before anything is written to it: the switch to WAL below
            // rewrites the file's header and stays, so a refused database was left in WAL mode, its application's
            // file changed by a mistyped --db. migrate() asks again, after this process may have waited for another.
            self.version_unless_foreign()?;
            // WAL lets `culprit results` read while a run is being saved, and makes commits cheap.
            let mode = self.switch_to_wal()?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(StoreError::Database {
                    location: self.location(),
                    action: "switch to the WAL journal".into(),
                    reason: format!("SQLite kept journal mode `{mode}`"),
                });
            }
            // NORMAL is durable across application crashes in WAL mode; only a power loss can drop the last
            // commits, never corrupt the file.
            self.connection
                .pragma_update(None, "synchronous", "NORMAL")
                .map_err(|e| self.classify("set the sync mode", e))?;
        }
        if let Some(limit) = options.size_limit_bytes {
            let page_size: i64 = self
                .connection
                .query_row("PRAGMA page_size", [], |row| row.get(0))
                .map_err(|e| self.classify("read the page size", e))?;
            let pages = (limit / page_size.max(1) as u64).max(1);
            let _: i64 = self
                .connection
                .query_row(&format!("PRAGMA max_page_count = {pages}"), [], |row| row.get(0))
                .map_err(|e| self.classify("set the size limit", e))?;
        }
        Ok(())
    }

    /// Puts the database in WAL mode and returns the mode SQLite reports. The switch takes the database's exclusive
    /// lock, for which SQLite does not wait as the busy timeout waits for others: of three `culprit run`s started
    /// together on a new store, one failed at once with "another culprit holds the database lock" while the first
    /// created the schema. A database already in WAL needs no switch; a busy one is tried again until the timeout.
    fn switch_to_wal(&self) -> Result<String, StoreError> {
        let action = "open it (switching to the WAL journal)";
        let current: String = self
            .connection
            .query_row("PRAGMA journal_mode", [], |row| row.get(0))
            .map_err(|e| self.classify(action, e))?;
        if current.eq_ignore_ascii_case("wal") {
            return Ok(current);
        }
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        loop {
            match self.connection.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0)) {
                Ok(mode) => return Ok(mode),
                Err(error) => match self.classify(action, error) {
                    StoreError::Busy { .. } if std::time::Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    other => return Err(other),
                },
            }
        }
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let latest = migrations::latest_version();
        // The version and the look for another application's tables read one snapshot: another culprit creating
        // the store between the two reads made its new schema look like a foreign database ("13 table(s) ... and
        // no culprit schema") to a third started at the same moment.
        let current = self.version_unless_foreign()?;
        if current == Some(latest) {
            return Ok(());
        }
        if let Some(found) = current.filter(|v| *v > latest) {
            return Err(StoreError::SchemaTooNew { location: self.location(), found, supported: latest });
        }
        if self.read_only {
            return Err(StoreError::ReadOnly {
                location: self.location(),
                action: format!("upgrade the schema to version {latest}"),
                what_to_do: READ_ONLY_FILE,
            });
        }
        let location = self.location();
        let transaction = self
            .connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| classify(&location, "upgrade the schema", e))?;
        transaction
            .execute_batch(&migrations::render(migrations::SCHEMA_VERSION_TABLE, Dialect::Sqlite))
            .map_err(|e| classify(&location, "create the schema_version table", e))?;
        // Another process may have migrated between the check above and the lock, so read the version again.
        let current: i64 = transaction
            .query_row("SELECT COALESCE(MAX(version), 0) FROM schema_version", [], |row| row.get(0))
            .map_err(|e| classify(&location, "read the schema version", e))?;
        if current > latest {
            return Err(StoreError::SchemaTooNew { location, found: current, supported: latest });
        }
        for (index, sql) in migrations::MIGRATIONS.iter().enumerate().skip(current as usize) {
            let version = index as i64 + 1;
            let failed = |e: rusqlite::Error| match classify(&location, "upgrade the schema", e) {
                StoreError::Database { reason, .. } => {
                    StoreError::Migration { location: location.clone(), version, reason }
                }
                other => other,
            };
            transaction.execute_batch(&migrations::render(sql, Dialect::Sqlite)).map_err(failed)?;
            if version == migrations::PACK_METRICS_VERSION {
                pack_version_1_metrics(&transaction).map_err(failed)?;
            }
            transaction
                .execute("INSERT INTO schema_version (version, applied_at) VALUES (?1, ?2)", params![version, now()])
                .map_err(failed)?;
        }
        transaction.commit().map_err(|e| classify(&location, "upgrade the schema", e))
    }

    /// The schema version, `None` for an empty database, and an error for a database of another application, all
    /// read from one snapshot.
    fn version_unless_foreign(&self) -> Result<Option<i64>, StoreError> {
        let snapshot = self.connection.unchecked_transaction().map_err(|e| self.classify("read the schema", e))?;
        let current = self.current_version_if_any()?;
        if current.is_none() {
            self.refuse_foreign_database()?;
        }
        drop(snapshot);
        Ok(current)
    }

    /// The schema version, or `None` for a database without a `schema_version` table (a new file).
    fn current_version_if_any(&self) -> Result<Option<i64>, StoreError> {
        let has_table: bool = self
            .connection
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version')",
                [],
                |row| row.get(0),
            )
            .map_err(|e| self.classify("read the schema", e))?;
        if !has_table {
            return Ok(None);
        }
        self.schema_version().map(Some)
    }

    /// A database without culprit's schema is a new store only when it is empty: culprit's tables written into
    /// another application's database (a mistyped --db) would change a file that is not culprit's.
    fn refuse_foreign_database(&self) -> Result<(), StoreError> {
        const OTHER_TABLES: &str =
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name";
        let mut statement = self.connection.prepare(OTHER_TABLES).map_err(|e| self.classify("read the schema", e))?;
        let names: Vec<String> = statement
            .query_map([], |row| row.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.classify("read the schema", e))?;
        if names.is_empty() {
            return Ok(());
        }
        Err(StoreError::NotACulpritStore {
            location: self.location(),
            engine: "SQLite",
            tables: crate::record::foreign_tables_text(&names),
        })
    }

    fn classify(&self, action: &str, error: rusqlite::Error) -> StoreError {
        classify(&self.location(), action, error)
    }

    fn ensure_writable(&self, action: &str) -> Result<(), StoreError> {
        if self.read_only {
            return Err(StoreError::ReadOnly {
                location: self.location(),
                action: action.to_string(),
                what_to_do: READ_ONLY_FILE,
            });
        }
        Ok(())
    }

    fn revision_of(&self, kind: &str, key: String, describe: Option<String>, subject: Option<String>) -> Revision {
        revision_from_row(kind, key, describe, subject)
    }

    /// Runs of one revision (by row id), with the columns the filters and samples need, in id order.
    fn runs_of_revision(&self, revision_id: i64) -> Result<Vec<RunSummary>, StoreError> {
        let sql = format!("{SUMMARY_SELECT} WHERE r.revision_id = ?1 ORDER BY r.id");
        self.query_summaries(&sql, &[&revision_id as &dyn rusqlite::ToSql], false)
    }

    fn query_summaries(
        &self,
        sql: &str,
        parameters: &[&dyn rusqlite::ToSql],
        with_metric_count: bool,
    ) -> Result<Vec<RunSummary>, StoreError> {
        let action = "list runs";
        let mut statement = self.connection.prepare_cached(sql).map_err(|e| self.classify(action, e))?;
        let rows = statement
            .query_map(parameters, |row| {
                Ok(SummaryRow {
                    id: row.get(0)?,
                    job_id: row.get(1)?,
                    job_name: row.get(2)?,
                    testcase: row.get(3)?,
                    rev_key: row.get(4)?,
                    kind: row.get(5)?,
                    describe: row.get(6)?,
                    subject: row.get(7)?,
                    hostname: row.get(8)?,
                    started_at: row.get(9)?,
                    ended_at: row.get(10)?,
                    status: row.get(11)?,
                    failure_reason: row.get(12)?,
                    exit_code: row.get(13)?,
                    run_kind: row.get(14)?,
                    build: Build {
                        rootfs: row.get::<_, Option<String>>(15)?.unwrap_or_default(),
                        kconfig: row.get::<_, Option<String>>(16)?.unwrap_or_default(),
                        compiler: row.get::<_, Option<String>>(17)?.unwrap_or_default(),
                    },
                    scratch: crate::record::scratch_from_columns(row.get(18)?, row.get(19)?, row.get(20)?),
                })
            })
            .map_err(|e| self.classify(action, e))?;
        let mut summaries = Vec::new();
        for row in rows {
            let row = row.map_err(|e| self.classify(action, e))?;
            let metric_count = if with_metric_count {
                let count: i64 = self
                    .connection
                    .prepare_cached("SELECT COALESCE((SELECT metric_count FROM run_metric_packs WHERE run_id = ?1), 0)")
                    .and_then(|mut s| s.query_row([row.id], |r| r.get(0)))
                    .map_err(|e| self.classify(action, e))?;
                count.max(0) as u64
            } else {
                0
            };
            let exit_code = convert_exit_code(&self.location(), row.id, row.exit_code)?;
            let failure_reason = failure_reason_of(&row.status, row.failure_reason);
            let kind = convert_run_kind(&self.location(), row.id, &row.run_kind)?;
            summaries.push(RunSummary {
                id: RunId(row.id),
                job_id: row.job_id,
                job_name: row.job_name,
                testcase: row.testcase,
                revision: self.revision_of(&row.kind, row.rev_key, row.describe, row.subject),
                hostname: row.hostname,
                started_at: row.started_at,
                ended_at: row.ended_at,
                failure_reason,
                exit_code,
                metric_count,
                kind,
                build: row.build,
                scratch: row.scratch,
            });
        }
        Ok(summaries)
    }

    /// Each (job id, job name) runs are stored under, for [`RunFilter::resolved`]; none are read when the filter
    /// names no job.
    fn stored_job_names(&self, filter: &RunFilter) -> Result<Vec<(String, String)>, StoreError> {
        if filter.job.is_none() {
            return Ok(Vec::new());
        }
        let action = "list jobs";
        let mut statement = self
            .connection
            .prepare_cached("SELECT DISTINCT job_id, job_name FROM runs")
            .map_err(|e| self.classify(action, e))?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?))).map_err(|e| self.classify(action, e))?;
        rows.map(|row| row.map_err(|e| self.classify(action, e))).collect()
    }

    fn revision_row_id(&self, key: &str) -> Result<Option<i64>, StoreError> {
        self.connection
            .prepare_cached("SELECT id FROM revisions WHERE rev_key = ?1")
            .and_then(|mut s| s.query_row([key], |row| row.get(0)).optional())
            .map_err(|e| self.classify("look up a revision", e))
    }

    /// Fails with `NotFound` unless bisect session `id` exists, so that a missing session is not read as one
    /// without runs or range.
    fn require_try_fix(&self, id: TryFixId) -> Result<(), StoreError> {
        let exists: bool = self
            .connection
            .query_row("SELECT EXISTS (SELECT 1 FROM try_fixes WHERE id = ?1)", [id.0], |row| row.get(0))
            .map_err(|e| self.classify("look up a try-fix", e))?;
        if exists {
            Ok(())
        } else {
            Err(StoreError::NotFound { location: self.location(), what: format!("try-fix {id}") })
        }
    }

    fn require_session(&self, id: SessionId) -> Result<(), StoreError> {
        let exists: bool = self
            .connection
            .query_row("SELECT EXISTS (SELECT 1 FROM bisect_sessions WHERE id = ?1)", [id.0], |row| row.get(0))
            .map_err(|e| self.classify("look up a bisect session", e))?;
        if exists {
            Ok(())
        } else {
            Err(StoreError::NotFound { location: self.location(), what: format!("bisect session {id}") })
        }
    }
}

/// The columns of a run listing; `RunSummary` is built from them.
struct SummaryRow {
    id: i64,
    job_id: String,
    job_name: String,
    testcase: String,
    rev_key: String,
    kind: String,
    describe: Option<String>,
    subject: Option<String>,
    hostname: String,
    started_at: f64,
    ended_at: f64,
    status: String,
    failure_reason: Option<String>,
    exit_code: Option<i64>,
    run_kind: String,
    build: Build,
    scratch: Option<ScratchFilesystem>,
}

/// The columns of a run listing, the build's ([`crate::record::build_columns`]) and then the scratch filesystem's
/// last.
const SUMMARY_SELECT: &str = concat!(
    "SELECT r.id, r.job_id, r.job_name, r.testcase, v.rev_key, v.kind, v.describe, v.subject, m.hostname, \
     r.started_at, r.ended_at, r.status, r.failure_reason, r.exit_code, r.kind, ",
    crate::record::build_columns!(),
    ", ",
    crate::record::scratch_columns!(),
    " FROM runs r JOIN revisions v ON v.id = r.revision_id JOIN machines m ON m.id = r.machine_id"
);

impl Store for SqliteStore {
    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn save_run_with(&mut self, run: &RunRecord, options: &SaveOptions) -> Result<Saved, StoreError> {
        self.ensure_writable("save a run")?;
        validate_record(run)?;
        let location = self.location();
        let SqliteStore { connection, metric_ids, .. } = self;
        let transaction = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| classify(&location, "save a run", e))?;
        let mut new_metric_ids = HashMap::new();
        let saved = insert_run(&transaction, &location, run, options, metric_ids, &mut new_metric_ids)?;
        // Dropping the transaction on an error above rolls it back; only a committed run's metric ids may enter
        // the cache, or a later save would reference ids that never existed.
        transaction.commit().map_err(|e| classify(&location, "save a run", e))?;
        metric_ids.extend(new_metric_ids);
        Ok(saved)
    }

    fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        let mut sql = SUMMARY_SELECT.to_string();
        let mut conditions: Vec<String> = Vec::new();
        let mut values: Vec<Box<dyn rusqlite::ToSql>> = Vec::new();
        if let Some(session) = filter.bisect_session {
            sql.push_str(" JOIN bisect_session_runs b ON b.run_id = r.id");
            values.push(Box::new(session.0));
            conditions.push(format!("b.session_id = ?{}", values.len()));
        }
        if !filter.revision_keys.is_empty() {
            let mut placeholders = Vec::new();
            for key in &filter.revision_keys {
                values.push(Box::new(key.clone()));
                placeholders.push(format!("?{}", values.len()));
            }
            conditions.push(format!("v.rev_key IN ({})", placeholders.join(", ")));
        }
        crate::record::finish_run_listing(&mut sql, conditions, filter);
        let parameters: Vec<&dyn rusqlite::ToSql> = values.iter().map(|v| v.as_ref()).collect();
        let runs = self.query_summaries(&sql, &parameters, true)?;
        let filter = filter.resolved(self.stored_job_names(filter)?);
        Ok(runs.into_iter().filter(|run| filter.matches(run)).collect())
    }

    fn run(&self, id: RunId) -> Result<RunRecord, StoreError> {
        read_run(&self.connection, &self.location(), id)
    }

    fn run_facts(&self, ids: &[RunId]) -> Result<Vec<RunFacts>, StoreError> {
        let action = "read the machines and params of runs";
        let location = self.location();
        let mut machines = self
            .connection
            .prepare_cached(
                "SELECT m.hostname, m.cpu_model, m.nr_cpu, m.memory_kib, m.kernel, m.sockets \
                 FROM runs r JOIN machines m ON m.id = r.machine_id WHERE r.id = ?1",
            )
            .map_err(|e| self.classify(action, e))?;
        let mut params = self
            .connection
            .prepare_cached("SELECT name, value FROM run_params WHERE run_id = ?1 ORDER BY seq")
            .map_err(|e| self.classify(action, e))?;
        let mut facts = Vec::with_capacity(ids.len());
        for &id in ids {
            let row: Option<crate::record::MachineColumns> = machines
                .query_row([id.0], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?, row.get(5)?))
                })
                .optional()
                .map_err(|e| self.classify(action, e))?;
            let columns =
                row.ok_or_else(|| StoreError::NotFound { location: location.clone(), what: format!("run {id}") })?;
            let machine = crate::record::machine_from_columns(&location, id, columns)?;
            let params: Vec<(String, String)> = params
                .query_map([id.0], |row| Ok((row.get(0)?, row.get(1)?)))
                .and_then(|rows| rows.collect())
                .map_err(|e| self.classify(action, e))?;
            facts.push(RunFacts { id, machine, params });
        }
        Ok(facts)
    }

    fn samples(&self, query: &SampleQuery) -> Result<Vec<RevisionSamples>, StoreError> {
        let metric_filter = query.metric_filter()?;
        let run_filter = query.run_filter();
        let filter = run_filter.resolved(self.stored_job_names(&run_filter)?);
        let action = "read samples";
        let mut selected = Vec::with_capacity(query.revision_keys.len());
        for key in &query.revision_keys {
            let revision_id = self
                .revision_row_id(key)?
                .ok_or_else(|| StoreError::UnknownRevision { location: self.location(), given: key.clone() })?;
            let runs: Vec<RunSummary> = self
                .runs_of_revision(revision_id)?
                .into_iter()
                .filter(|run| filter.matches(run) && !query.excluded_runs.contains(&run.id))
                .collect();
            let revision = match runs.first() {
                Some(run) => run.revision.clone(),
                None => self.revision_by_id(revision_id)?,
            };
            selected.push(RevisionRuns { revision, runs });
        }
        let location = self.location();
        let mut statement = self
            .connection
            .prepare_cached("SELECT metric_ids, metric_values FROM run_metric_packs WHERE run_id = ?1")
            .map_err(|e| self.classify(action, e))?;
        let mut unpacked = Unpacked::new();
        for run in selected.iter().flat_map(RevisionRuns::ok_run_ids) {
            let mut rows = statement.query([run]).map_err(|e| self.classify(action, e))?;
            // The blobs are decoded straight from SQLite's buffers, without copying 200 KiB per run first.
            if let Some(row) = rows.next().map_err(|e| self.classify(action, e))? {
                let ids = row.get_ref(0).and_then(|v| Ok(v.as_blob()?)).map_err(|e| self.classify(action, e))?;
                let values = row.get_ref(1).and_then(|v| Ok(v.as_blob()?)).map_err(|e| self.classify(action, e))?;
                let mut pairs = Vec::new();
                unpack_into(ids, values, &mut pairs).map_err(|reason| damaged(&location, run, reason))?;
                unpacked.insert(run, pairs);
            }
        }
        let ids = union_of_ids(&unpacked);
        let names = metric_names_of(&self.connection, &location, &ids)?;
        let (ids, names) = lkp_time_names(&mut unpacked, ids, names);
        let kept = kept_names(names, metric_filter.as_ref());
        Ok(selected.into_iter().map(|revision| revision_samples(revision, &unpacked, &ids, &kept)).collect())
    }

    fn revisions(&self) -> Result<Vec<StoredRevision>, StoreError> {
        let action = "list revisions";
        let mut statement = self
            .connection
            .prepare_cached(
                "SELECT v.rev_key, v.kind, v.describe, v.subject, \
                 (SELECT COUNT(*) FROM runs r WHERE r.revision_id = v.id) FROM revisions v ORDER BY v.id",
            )
            .map_err(|e| self.classify(action, e))?;
        let rows = statement
            .query_map([], |row| {
                let key: String = row.get(0)?;
                let kind: String = row.get(1)?;
                let runs: i64 = row.get(4)?;
                Ok(StoredRevision {
                    revision: revision_from_row(&kind, key, row.get(2)?, row.get(3)?),
                    runs: runs.max(0) as u64,
                })
            })
            .map_err(|e| self.classify(action, e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.classify(action, e))
    }

    fn create_bisect_session(&mut self, session: &NewBisectSession) -> Result<SessionId, StoreError> {
        self.ensure_writable("create a bisect session")?;
        let action = "create a bisect session";
        let location = self.location();
        let transaction = self
            .connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| classify(&location, action, e))?;
        transaction
            .execute(
                "INSERT INTO bisect_sessions (repo, good, bad, job_id, metric, config_json, created_at, status) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    session.repo,
                    session.good,
                    session.bad,
                    session.job_id,
                    session.metric,
                    session.config_json,
                    session.created_at,
                    NEW_SESSION_STATUS
                ],
            )
            .map_err(|e| classify(&location, action, e))?;
        let id = transaction.last_insert_rowid();
        {
            let mut insert = transaction
                .prepare_cached(
                    "INSERT INTO bisect_range_commits (session_id, position, sha, subject, parents) \
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .map_err(|e| classify(&location, action, e))?;
            for (position, commit) in session.range.iter().enumerate() {
                insert
                    .execute(params![id, position as i64, commit.sha, commit.subject, parents_to_text(&commit.parents)])
                    .map_err(|e| classify(&location, action, e))?;
            }
        }
        transaction.commit().map_err(|e| classify(&location, action, e))?;
        Ok(SessionId(id))
    }

    fn bisect_session_range(&self, id: SessionId) -> Result<Vec<BisectCommit>, StoreError> {
        self.require_session(id)?;
        let action = "read the range of a bisect session";
        let mut statement = self
            .connection
            .prepare_cached(
                "SELECT position, sha, subject, parents FROM bisect_range_commits WHERE session_id = ?1 ORDER BY position",
            )
            .map_err(|e| self.classify(action, e))?;
        let rows = statement
            .query_map([id.0], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?, row.get::<_, String>(2)?, row.get::<_, String>(3)?))
            })
            .map_err(|e| self.classify(action, e))?;
        let location = self.location();
        let mut range = Vec::new();
        for row in rows {
            let (position, sha, subject, parents) = row.map_err(|e| self.classify(action, e))?;
            let parents = parents_from_text(&parents, position as usize, id, &location)?;
            range.push(BisectCommit { sha, subject, parents });
        }
        Ok(range)
    }

    fn bisect_sessions(&self) -> Result<Vec<BisectSession>, StoreError> {
        let action = "list bisect sessions";
        let mut statement = self
            .connection
            .prepare_cached(&format!("{SESSION_SELECT} ORDER BY id"))
            .map_err(|e| self.classify(action, e))?;
        let rows = statement.query_map([], session_from_row).map_err(|e| self.classify(action, e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.classify(action, e))
    }

    fn bisect_session(&self, id: SessionId) -> Result<BisectSession, StoreError> {
        let action = "read a bisect session";
        self.connection
            .prepare_cached(&format!("{SESSION_SELECT} WHERE id = ?1"))
            .and_then(|mut s| s.query_row([id.0], session_from_row).optional())
            .map_err(|e| self.classify(action, e))?
            .ok_or_else(|| StoreError::NotFound { location: self.location(), what: format!("bisect session {id}") })
    }

    fn update_bisect_session(
        &mut self,
        id: SessionId,
        status: &str,
        result_json: Option<&str>,
        updated_at: f64,
    ) -> Result<(), StoreError> {
        self.ensure_writable("update a bisect session")?;
        let changed = self
            .connection
            .execute(
                "UPDATE bisect_sessions SET status = ?1, result_json = ?2, updated_at = ?3 WHERE id = ?4",
                params![status, result_json, updated_at, id.0],
            )
            .map_err(|e| self.classify("update a bisect session", e))?;
        if changed == 0 {
            return Err(StoreError::NotFound { location: self.location(), what: format!("bisect session {id}") });
        }
        Ok(())
    }

    fn update_bisect_session_config(&mut self, id: SessionId, config_json: &str) -> Result<(), StoreError> {
        let action = "update a bisect session's configuration";
        self.ensure_writable(action)?;
        let changed = self
            .connection
            .execute("UPDATE bisect_sessions SET config_json = ?1 WHERE id = ?2", params![config_json, id.0])
            .map_err(|e| self.classify(action, e))?;
        if changed == 0 {
            return Err(StoreError::NotFound { location: self.location(), what: format!("bisect session {id}") });
        }
        Ok(())
    }

    fn delete_bisect_session(&mut self, id: SessionId) -> Result<(), StoreError> {
        let action = "delete a bisect session";
        self.ensure_writable(action)?;
        let location = self.location();
        let transaction = self
            .connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| classify(&location, action, e))?;
        // The foreign keys cascade too; deleting each table's rows by name says what goes, and does not rest on the
        // connection's foreign-key setting.
        for table in SESSION_OWNED_TABLES {
            transaction
                .execute(&format!("DELETE FROM {table} WHERE session_id = ?1"), [id.0])
                .map_err(|e| classify(&location, action, e))?;
        }
        let deleted = transaction
            .execute("DELETE FROM bisect_sessions WHERE id = ?1", [id.0])
            .map_err(|e| classify(&location, action, e))?;
        if deleted == 0 {
            return Err(StoreError::NotFound { location, what: format!("bisect session {id}") });
        }
        transaction.commit().map_err(|e| classify(&location, action, e))
    }

    fn link_run_to_session(&mut self, session: SessionId, run: RunId) -> Result<(), StoreError> {
        self.ensure_writable("link a run to a bisect session")?;
        let location = self.location();
        let transaction = self
            .connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| classify(&location, "link a run to a bisect session", e))?;
        link_in(&transaction, &location, session, run)?;
        transaction.commit().map_err(|e| classify(&location, "link a run to a bisect session", e))
    }

    fn record_follow_session(&mut self, id: SessionId, machine: &str) -> Result<(), StoreError> {
        let action = "record a bisect session of track --follow";
        self.ensure_writable(action)?;
        self.require_session(id)?;
        self.connection
            .execute(
                "INSERT INTO follow_sessions (session_id, machine) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                params![id.0, machine],
            )
            .map_err(|e| self.classify(action, e))?;
        Ok(())
    }

    fn follow_sessions(&self, machine: &str) -> Result<Vec<FollowSession>, StoreError> {
        let action = "list the bisect sessions of track --follow";
        let mut statement = self
            .connection
            .prepare_cached(
                "SELECT session_id, reported_at FROM follow_sessions WHERE machine = ?1 ORDER BY session_id",
            )
            .map_err(|e| self.classify(action, e))?;
        let rows = statement
            .query_map([machine], |row| Ok(FollowSession { session: SessionId(row.get(0)?), reported_at: row.get(1)? }))
            .map_err(|e| self.classify(action, e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.classify(action, e))
    }

    fn mark_follow_session_reported(&mut self, id: SessionId, machine: &str, at: f64) -> Result<(), StoreError> {
        let action = "record that a bisect session of track --follow was reported";
        self.ensure_writable(action)?;
        let changed = self
            .connection
            .execute(
                "UPDATE follow_sessions SET reported_at = ?1 WHERE session_id = ?2 AND machine = ?3",
                params![at, id.0, machine],
            )
            .map_err(|e| self.classify(action, e))?;
        if changed == 0 {
            let what = format!("bisect session {id} of track --follow on {machine}");
            return Err(StoreError::NotFound { location: self.location(), what });
        }
        Ok(())
    }

    fn create_try_fix(&mut self, try_fix: &NewTryFix) -> Result<TryFixId, StoreError> {
        let action = "record a try-fix";
        self.ensure_writable(action)?;
        let NewTryFix { repo, base, bad, fix, patch, patch_text, build, job_id, machine, created_at } = try_fix;
        self.connection
            .execute(
                "INSERT INTO try_fixes (repo, base, bad, fix, patch, patch_text, build, job_id, machine, created_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![repo, base, bad, fix, patch, patch_text, build, job_id, machine, created_at],
            )
            .map_err(|e| self.classify(action, e))?;
        Ok(TryFixId(self.connection.last_insert_rowid()))
    }

    fn link_run_to_try_fix(&mut self, id: TryFixId, run: RunId, side: TryFixSide) -> Result<(), StoreError> {
        let action = "link a run to a try-fix";
        self.ensure_writable(action)?;
        self.require_try_fix(id)?;
        self.connection
            .execute(
                "INSERT INTO try_fix_runs (try_fix_id, run_id, side) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
                params![id.0, run.0, side.as_str()],
            )
            .map_err(|e| self.classify(action, e))?;
        Ok(())
    }

    fn finish_try_fix(&mut self, id: TryFixId, at: f64) -> Result<(), StoreError> {
        let action = "record that a try-fix finished";
        self.ensure_writable(action)?;
        let changed = self
            .connection
            .execute("UPDATE try_fixes SET finished_at = ?1 WHERE id = ?2", params![at, id.0])
            .map_err(|e| self.classify(action, e))?;
        if changed == 0 {
            return Err(StoreError::NotFound { location: self.location(), what: format!("try-fix {id}") });
        }
        Ok(())
    }

    fn try_fixes(&self) -> Result<Vec<TryFix>, StoreError> {
        let action = "list the try-fixes";
        let mut statement = self
            .connection
            .prepare_cached(
                "SELECT id, repo, base, bad, fix, patch, job_id, machine, created_at, finished_at, patch_text, build \
                 FROM try_fixes ORDER BY id",
            )
            .map_err(|e| self.classify(action, e))?;
        let rows = statement
            .query_map([], |row| {
                Ok(TryFix {
                    id: TryFixId(row.get(0)?),
                    repo: row.get(1)?,
                    base: row.get(2)?,
                    bad: row.get(3)?,
                    fix: row.get(4)?,
                    patch: row.get(5)?,
                    patch_text: row.get(10)?,
                    build: row.get(11)?,
                    job_id: row.get(6)?,
                    machine: row.get(7)?,
                    created_at: row.get(8)?,
                    finished_at: row.get(9)?,
                })
            })
            .map_err(|e| self.classify(action, e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.classify(action, e))
    }

    fn try_fix_runs(&self, id: TryFixId) -> Result<Vec<(RunId, TryFixSide)>, StoreError> {
        self.require_try_fix(id)?;
        let action = "list the runs of a try-fix";
        let mut statement = self
            .connection
            .prepare_cached("SELECT run_id, side FROM try_fix_runs WHERE try_fix_id = ?1 ORDER BY run_id")
            .map_err(|e| self.classify(action, e))?;
        let rows = statement
            .query_map([id.0], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)))
            .map_err(|e| self.classify(action, e))?;
        let location = self.location();
        let mut runs = Vec::new();
        for row in rows {
            let (run, side) = row.map_err(|e| self.classify(action, e))?;
            runs.push((RunId(run), convert_try_fix_side(&location, id.0, &side)?));
        }
        Ok(runs)
    }

    fn bisect_session_runs(&self, id: SessionId) -> Result<Vec<RunId>, StoreError> {
        self.require_session(id)?;
        let action = "list the runs of a bisect session";
        let mut statement = self
            .connection
            .prepare_cached("SELECT run_id FROM bisect_session_runs WHERE session_id = ?1 ORDER BY id")
            .map_err(|e| self.classify(action, e))?;
        let rows = statement.query_map([id.0], |row| row.get(0).map(RunId)).map_err(|e| self.classify(action, e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.classify(action, e))
    }
}

impl SqliteStore {
    fn revision_by_id(&self, id: i64) -> Result<Revision, StoreError> {
        self.connection
            .query_row("SELECT rev_key, kind, describe, subject FROM revisions WHERE id = ?1", [id], |row| {
                let kind: String = row.get(1)?;
                Ok(revision_from_row(&kind, row.get(0)?, row.get(2)?, row.get(3)?))
            })
            .map_err(|e| self.classify("read a revision", e))
    }
}

const SESSION_SELECT: &str = "SELECT id, repo, good, bad, job_id, metric, config_json, created_at, status, \
     result_json, updated_at FROM bisect_sessions";

fn session_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<BisectSession> {
    Ok(BisectSession {
        id: SessionId(row.get(0)?),
        repo: row.get(1)?,
        good: row.get(2)?,
        bad: row.get(3)?,
        job_id: row.get(4)?,
        metric: row.get(5)?,
        config_json: row.get(6)?,
        created_at: row.get(7)?,
        status: row.get(8)?,
        result_json: row.get(9)?,
        updated_at: row.get(10)?,
    })
}

fn revision_from_row(kind: &str, key: String, describe: Option<String>, subject: Option<String>) -> Revision {
    if kind == "label" {
        Revision::Label { name: key }
    } else {
        Revision::Commit { sha: key, describe, subject }
    }
}

fn failure_reason_of(status: &str, reason: Option<String>) -> Option<String> {
    if status == "ok" {
        None
    } else {
        Some(reason.unwrap_or_default())
    }
}



/// Maps a SQLite error to a store error that says what happened and what to do.
/// What to do about a read-only SQLite store.
const READ_ONLY_FILE: &str = "Make the file and its directory writable";

pub(crate) fn classify(location: &str, action: &str, error: rusqlite::Error) -> StoreError {
    let location = location.to_string();
    let action = action.to_string();
    if let rusqlite::Error::SqliteFailure(failure, message) = &error {
        let reason = message.clone().unwrap_or_else(|| failure.to_string());
        return match failure.code {
            ErrorCode::ReadOnly => StoreError::ReadOnly { location, action, what_to_do: READ_ONLY_FILE },
            ErrorCode::DiskFull => StoreError::Full { location, action },
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => StoreError::Busy { location, action },
            ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase => StoreError::Corrupt { location, action, reason },
            _ => StoreError::Database { location, action, reason },
        };
    }
    StoreError::Database { location, action, reason: error.to_string() }
}


/// Encodes samples as little-endian f64 bytes: compact, exact, and NaN-preserving (JSON has no NaN).
pub(crate) fn encode_samples(samples: &[f64]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(samples.len() * 8);
    for sample in samples {
        bytes.extend_from_slice(&sample.to_le_bytes());
    }
    bytes
}

pub(crate) fn decode_samples(bytes: &[u8]) -> Option<Vec<f64>> {
    if !bytes.len().is_multiple_of(8) {
        return None;
    }
    Some(
        bytes
            .chunks_exact(8)
            .map(|chunk| {
                let mut array = [0u8; 8];
                array.copy_from_slice(chunk);
                f64::from_le_bytes(array)
            })
            .collect(),
    )
}

fn insert_run(
    tx: &Transaction<'_>,
    location: &str,
    run: &RunRecord,
    options: &SaveOptions,
    known_metric_ids: &HashMap<String, i64>,
    new_metric_ids: &mut HashMap<String, i64>,
) -> Result<Saved, StoreError> {
    let action = "save a run";
    let fail = |e: rusqlite::Error| classify(location, action, e);
    let machine = &run.machine;
    tx.prepare_cached(
        "INSERT INTO machines (hostname, cpu_model, nr_cpu, memory_kib, kernel, sockets) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
    )
    .and_then(|mut s| {
        s.execute(params![
            machine.hostname,
            machine.cpu_model,
            machine.nr_cpu,
            machine.memory_kib as i64,
            machine.kernel,
            machine.recorded_sockets()
        ])
    })
    .map_err(fail)?;
    let (machine_id, stored_sockets): (i64, Option<i64>) = tx
        .prepare_cached(
            "SELECT id, sockets FROM machines WHERE hostname = ?1 AND cpu_model = ?2 AND nr_cpu = ?3 \
             AND memory_kib = ?4 AND kernel = ?5",
        )
        .and_then(|mut s| {
            s.query_row(
                params![machine.hostname, machine.cpu_model, machine.nr_cpu, machine.memory_kib as i64, machine.kernel],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
        })
        .map_err(fail)?;
    // A row stored without the socket count (before schema version 10) takes the first a run of it gives; a row
    // that has one is not written again, so saving a run adds no write for it.
    if let (None, Some(sockets)) = (stored_sockets, machine.recorded_sockets()) {
        tx.prepare_cached("UPDATE machines SET sockets = ?1 WHERE id = ?2 AND sockets IS NULL")
            .and_then(|mut s| s.execute(params![sockets, machine_id]))
            .map_err(fail)?;
    }

    let (kind, describe, subject) = match &run.revision {
        Revision::Commit { describe, subject, .. } => ("commit", describe.as_deref(), subject.as_deref()),
        Revision::Label { .. } => ("label", None, None),
    };
    // A later run may know the describe name or subject an earlier one lacked; never erase what is known.
    tx.prepare_cached(
        "INSERT INTO revisions (rev_key, kind, describe, subject) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT (rev_key) DO UPDATE SET describe = COALESCE(excluded.describe, revisions.describe), \
         subject = COALESCE(excluded.subject, revisions.subject)",
    )
    .and_then(|mut s| s.execute(params![run.revision.key(), kind, describe, subject]))
    .map_err(fail)?;
    let revision_id: i64 = tx
        .prepare_cached("SELECT id FROM revisions WHERE rev_key = ?1")
        .and_then(|mut s| s.query_row([run.revision.key()], |row| row.get(0)))
        .map_err(fail)?;

    if let Some(import_key) = &options.import_key {
        let stored_under = |key: &str| -> Result<Option<i64>, StoreError> {
            tx.prepare_cached("SELECT id FROM runs WHERE job_id = ?1 AND revision_id = ?2 AND import_key = ?3")
                .and_then(|mut s| s.query_row(params![run.job_id, revision_id, key], |row| row.get(0)).optional())
                .map_err(fail)
        };
        // Under the former key, only a run of the same job.yaml is this run: lkp's records the kconfig, compiler and
        // result_root, which tell this run from another one an earlier importer met first.
        let stored_under_former = |key: &str| -> Result<Option<i64>, StoreError> {
            tx.prepare_cached(
                "SELECT id FROM runs WHERE job_id = ?1 AND revision_id = ?2 AND import_key = ?3 AND job_yaml = ?4",
            )
            .and_then(|mut s| {
                s.query_row(params![run.job_id, revision_id, key, run.job_yaml], |row| row.get(0)).optional()
            })
            .map_err(fail)
        };
        let existing = match stored_under(import_key)? {
            Some(id) => Some(id),
            None => match &options.former_import_key {
                Some(former) => stored_under_former(former)?,
                None => None,
            },
        };
        if let Some(existing) = existing {
            if let Some(session) = options.bisect_session {
                link_in(tx, location, session, RunId(existing))?;
            }
            return Ok(Saved::AlreadyStored(RunId(existing)));
        }
    }

    let (status, failure_reason) = crate::record::stored_outcome(&run.outcome);
    tx.prepare_cached(
        "INSERT INTO runs (job_id, job_name, testcase, job_yaml, revision_id, machine_id, started_at, ended_at, \
         status, failure_reason, exit_code, stderr, import_key, kind, scratch_path, scratch_fs_type, \
         scratch_fs_source) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
    )
    .and_then(|mut s| {
        let [scratch_path, scratch_fs_type, scratch_fs_source] = crate::record::scratch_to_columns(run);
        s.execute(params![
            run.job_id,
            run.job_name,
            run.testcase,
            run.job_yaml,
            revision_id,
            machine_id,
            run.started_at,
            run.ended_at,
            status,
            failure_reason.as_deref(),
            run.exit_code,
            run.stderr,
            options.import_key,
            options.kind.as_str(),
            scratch_path,
            scratch_fs_type,
            scratch_fs_source
        ])
    })
    .map_err(fail)?;
    let run_id = tx.last_insert_rowid();

    {
        let mut statement =
            tx.prepare_cached("INSERT INTO run_params (run_id, seq, name, value) VALUES (?1, ?2, ?3, ?4)").map_err(fail)?;
        for (seq, (name, value)) in run.params.iter().enumerate() {
            statement.execute(params![run_id, seq as i64, name, value]).map_err(fail)?;
        }
    }

    if !run.metrics.is_empty() {
        let all_names_known = learn_all_metric_names(tx, run, known_metric_ids, new_metric_ids).map_err(fail)?;
        let mut select_name = tx.prepare_cached("SELECT id FROM metric_names WHERE name = ?1").map_err(fail)?;
        let mut insert_name = tx.prepare_cached("INSERT INTO metric_names (name) VALUES (?1)").map_err(fail)?;
        let mut pairs = Vec::with_capacity(run.metrics.len());
        for (name, value) in &run.metrics {
            let metric_id = match known_metric_ids.get(name).or_else(|| new_metric_ids.get(name)) {
                Some(id) => *id,
                None => {
                    // Another process may have stored the name; this transaction holds the write lock, so no
                    // one can insert it between the lookup and the insert.
                    let stored = match all_names_known {
                        true => None,
                        false => select_name.query_row([name], |row| row.get(0)).optional().map_err(fail)?,
                    };
                    let id = match stored {
                        Some(id) => id,
                        None => {
                            insert_name.execute([name]).map_err(fail)?;
                            tx.last_insert_rowid()
                        }
                    };
                    new_metric_ids.insert(name.clone(), id);
                    id
                }
            };
            pairs.push((metric_id, *value));
        }
        let packed = pack(pairs);
        tx.prepare_cached(
            "INSERT INTO run_metric_packs (run_id, metric_count, metric_ids, metric_values) VALUES (?1, ?2, ?3, ?4)",
        )
        .and_then(|mut s| s.execute(params![run_id, packed.metric_count, packed.metric_ids, packed.metric_values]))
        .map_err(fail)?;
    }

    {
        let mut insert_monitor = tx
            .prepare_cached("INSERT INTO run_monitors (run_id, seq, monitor, times) VALUES (?1, ?2, ?3, ?4)")
            .map_err(fail)?;
        let mut insert_series = tx
            .prepare_cached(
                "INSERT INTO run_monitor_series (run_id, monitor_seq, name, samples) VALUES (?1, ?2, ?3, ?4)",
            )
            .map_err(fail)?;
        for (seq, monitor) in run.monitors.iter().enumerate() {
            insert_monitor
                .execute(params![run_id, seq as i64, monitor.monitor, encode_samples(&monitor.times)])
                .map_err(fail)?;
            for (name, samples) in &monitor.series {
                insert_series.execute(params![run_id, seq as i64, name, encode_samples(samples)]).map_err(fail)?;
            }
        }
    }

    {
        let mut insert_raw = tx
            .prepare_cached("INSERT INTO run_raw_outputs (run_id, seq, name, content) VALUES (?1, ?2, ?3, ?4)")
            .map_err(fail)?;
        for (seq, raw) in run.raw_outputs.iter().enumerate() {
            insert_raw.execute(params![run_id, seq as i64, raw.name, raw.content]).map_err(fail)?;
        }
    }

    if let Some(session) = options.bisect_session {
        link_in(tx, location, session, RunId(run_id))?;
    }
    Ok(Saved::Inserted(RunId(run_id)))
}

/// Below this many names missing from the cache, looking each up is cheap enough.
const BULK_NAME_LOAD_MIN: usize = 256;

/// A new process saving a perf-heavy run knows none of its 20,000 metric ids. Looking each name up costs about
/// 2.5 µs; reading the whole `metric_names` table costs well under 0.5 µs a row. So when the table is not much
/// larger than the number of unknown names (at most 4 times, judged by its largest id), every stored name is
/// read into `new` and `true` is returned: the transaction holds the write lock, so a name not read is not
/// stored and needs no lookup.
fn learn_all_metric_names(
    tx: &Transaction<'_>,
    run: &RunRecord,
    known: &HashMap<String, i64>,
    new: &mut HashMap<String, i64>,
) -> Result<bool, rusqlite::Error> {
    let unknown = run.metrics.keys().filter(|name| !known.contains_key(*name) && !new.contains_key(*name)).count();
    if unknown < BULK_NAME_LOAD_MIN {
        return Ok(false);
    }
    let largest_id: i64 = tx.query_row("SELECT COALESCE(MAX(id), 0) FROM metric_names", [], |row| row.get(0))?;
    if largest_id > (unknown as i64).saturating_mul(4) {
        return Ok(false);
    }
    let mut statement = tx.prepare_cached("SELECT name, id FROM metric_names")?;
    let rows = statement.query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?)))?;
    for row in rows {
        let (name, id) = row?;
        if !known.contains_key(&name) {
            new.insert(name, id);
        }
    }
    Ok(true)
}

fn link_in(tx: &Transaction<'_>, location: &str, session: SessionId, run: RunId) -> Result<(), StoreError> {
    let action = "link a run to a bisect session";
    let fail = |e: rusqlite::Error| classify(location, action, e);
    let session_exists: bool = tx
        .query_row("SELECT EXISTS (SELECT 1 FROM bisect_sessions WHERE id = ?1)", [session.0], |row| row.get(0))
        .map_err(fail)?;
    if !session_exists {
        return Err(StoreError::NotFound { location: location.to_string(), what: format!("bisect session {session}") });
    }
    let run_exists: bool =
        tx.query_row("SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?1)", [run.0], |row| row.get(0)).map_err(fail)?;
    if !run_exists {
        return Err(StoreError::NotFound { location: location.to_string(), what: format!("run {run}") });
    }
    tx.prepare_cached("INSERT INTO bisect_session_runs (session_id, run_id) VALUES (?1, ?2) ON CONFLICT DO NOTHING")
        .and_then(|mut s| s.execute(params![session.0, run.0]))
        .map_err(fail)?;
    Ok(())
}

/// The names of metric ids (sorted, distinct), in the same order.
fn metric_names_of(connection: &Connection, location: &str, ids: &[i64]) -> Result<Vec<String>, StoreError> {
    let fail = |e: rusqlite::Error| classify(location, "read metric names", e);
    let (Some(first), Some(last)) = (ids.first(), ids.last()) else { return Ok(Vec::new()) };
    let mut rows: Vec<(i64, String)> = Vec::with_capacity(ids.len());
    if dense(ids) {
        let mut statement =
            connection.prepare_cached("SELECT id, name FROM metric_names WHERE id BETWEEN ?1 AND ?2").map_err(fail)?;
        let found = statement.query_map([first, last], |row| Ok((row.get(0)?, row.get(1)?))).map_err(fail)?;
        for row in found {
            rows.push(row.map_err(fail)?);
        }
    } else {
        let mut statement = connection.prepare_cached("SELECT name FROM metric_names WHERE id = ?1").map_err(fail)?;
        for id in ids {
            if let Some(name) = statement.query_row([id], |row| row.get(0)).optional().map_err(fail)? {
                rows.push((*id, name));
            }
        }
    }
    names_in_order(location, ids, rows)
}

/// Migration step of [`migrations::PACK_METRICS_VERSION`]: packs the `run_metrics` rows of every run.
fn pack_version_1_metrics(tx: &Transaction<'_>) -> Result<(), rusqlite::Error> {
    let runs: Vec<i64> = tx
        .prepare("SELECT DISTINCT run_id FROM run_metrics ORDER BY run_id")?
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    let mut select = tx.prepare("SELECT metric_id, value FROM run_metrics WHERE run_id = ?1")?;
    let mut insert = tx.prepare(
        "INSERT INTO run_metric_packs (run_id, metric_count, metric_ids, metric_values) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for run in runs {
        let pairs: Vec<(i64, f64)> = select
            .query_map([run], |row| Ok((row.get(0)?, row.get::<_, Option<f64>>(1)?.unwrap_or(f64::NAN))))?
            .collect::<Result<_, _>>()?;
        let packed = pack(pairs);
        insert.execute(params![run, packed.metric_count, packed.metric_ids, packed.metric_values])?;
    }
    Ok(())
}

fn read_run(connection: &Connection, location: &str, id: RunId) -> Result<RunRecord, StoreError> {
    let action = "read a run";
    let fail = |e: rusqlite::Error| classify(location, action, e);
    let bad = |what: String, reason: String| StoreError::BadStoredValue { location: location.to_string(), what, reason };
    struct Head {
        job_id: String,
        job_name: String,
        testcase: String,
        job_yaml: String,
        revision: Revision,
        machine: crate::record::MachineColumns,
        started_at: f64,
        ended_at: f64,
        status: String,
        failure_reason: Option<String>,
        exit_code: Option<i64>,
        stderr: String,
        scratch: Option<ScratchFilesystem>,
    }
    let head: Option<Head> = connection
        .prepare_cached(
            "SELECT r.job_id, r.job_name, r.testcase, r.job_yaml, v.rev_key, v.kind, v.describe, v.subject, \
             m.hostname, m.cpu_model, m.nr_cpu, m.memory_kib, m.kernel, r.started_at, r.ended_at, r.status, \
             r.failure_reason, r.exit_code, r.stderr, r.scratch_path, r.scratch_fs_type, r.scratch_fs_source, \
             m.sockets \
             FROM runs r JOIN revisions v ON v.id = r.revision_id JOIN machines m ON m.id = r.machine_id \
             WHERE r.id = ?1",
        )
        .and_then(|mut s| {
            s.query_row([id.0], |row| {
                let kind: String = row.get(5)?;
                Ok(Head {
                    job_id: row.get(0)?,
                    job_name: row.get(1)?,
                    testcase: row.get(2)?,
                    job_yaml: row.get(3)?,
                    revision: revision_from_row(&kind, row.get(4)?, row.get(6)?, row.get(7)?),
                    machine: (row.get(8)?, row.get(9)?, row.get(10)?, row.get(11)?, row.get(12)?, row.get(22)?),
                    started_at: row.get(13)?,
                    ended_at: row.get(14)?,
                    status: row.get(15)?,
                    failure_reason: row.get(16)?,
                    exit_code: row.get(17)?,
                    stderr: row.get(18)?,
                    scratch: crate::record::scratch_from_columns(row.get(19)?, row.get(20)?, row.get(21)?),
                })
            })
            .optional()
        })
        .map_err(fail)?;
    let head = head.ok_or_else(|| StoreError::NotFound { location: location.to_string(), what: format!("run {id}") })?;
    let machine = crate::record::machine_from_columns(location, id, head.machine)?;
    let outcome = match failure_reason_of(&head.status, head.failure_reason) {
        None => RunOutcome::Ok,
        Some(reason) => RunOutcome::Failed { reason },
    };

    let params: Vec<(String, String)> = connection
        .prepare_cached("SELECT name, value FROM run_params WHERE run_id = ?1 ORDER BY seq")
        .and_then(|mut s| s.query_map([id.0], |row| Ok((row.get(0)?, row.get(1)?)))?.collect())
        .map_err(fail)?;

    let pack: Option<(Vec<u8>, Vec<u8>)> = connection
        .prepare_cached("SELECT metric_ids, metric_values FROM run_metric_packs WHERE run_id = ?1")
        .and_then(|mut s| s.query_row([id.0], |row| Ok((row.get(0)?, row.get(1)?))).optional())
        .map_err(fail)?;
    let mut pairs = Vec::new();
    if let Some((ids, values)) = pack {
        unpack_into(&ids, &values, &mut pairs).map_err(|reason| damaged(location, id.0, reason))?;
    }
    let ids: Vec<i64> = pairs.iter().map(|(metric, _)| *metric).collect();
    let names = metric_names_of(connection, location, &ids)?;
    let metrics = run_metrics(pairs, names);

    let monitor_rows: Vec<(i64, String, Vec<u8>)> = connection
        .prepare_cached("SELECT seq, monitor, times FROM run_monitors WHERE run_id = ?1 ORDER BY seq")
        .and_then(|mut s| s.query_map([id.0], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?.collect())
        .map_err(fail)?;
    let mut monitors = Vec::with_capacity(monitor_rows.len());
    for (seq, monitor, times) in monitor_rows {
        let times = decode_samples(&times)
            .ok_or_else(|| bad(format!("the sample times of monitor {monitor} of run {id}"), "truncated".into()))?;
        let series_rows: Vec<(String, Vec<u8>)> = connection
            .prepare_cached(
                "SELECT name, samples FROM run_monitor_series WHERE run_id = ?1 AND monitor_seq = ?2 ORDER BY name",
            )
            .and_then(|mut s| s.query_map(params![id.0, seq], |row| Ok((row.get(0)?, row.get(1)?)))?.collect())
            .map_err(fail)?;
        let mut series = BTreeMap::new();
        for (name, bytes) in series_rows {
            let samples = decode_samples(&bytes)
                .ok_or_else(|| bad(format!("series {name} of monitor {monitor} of run {id}"), "truncated".into()))?;
            series.insert(name, samples);
        }
        monitors.push(MonitorSeries { monitor, times, series });
    }

    let raw_outputs: Vec<RawOutput> = connection
        .prepare_cached("SELECT name, content FROM run_raw_outputs WHERE run_id = ?1 ORDER BY seq")
        .and_then(|mut s| s.query_map([id.0], |row| Ok(RawOutput { name: row.get(0)?, content: row.get(1)? }))?.collect())
        .map_err(fail)?;

    Ok(RunRecord {
        job_id: head.job_id,
        job_name: head.job_name,
        testcase: head.testcase,
        params,
        job_yaml: head.job_yaml,
        revision: head.revision,
        machine,
        started_at: head.started_at,
        ended_at: head.ended_at,
        outcome,
        exit_code: convert_exit_code(location, id.0, head.exit_code)?,
        metrics,
        monitors,
        raw_outputs,
        stderr: head.stderr,
        scratch: head.scratch,
    })
}

#[cfg(test)]
mod tests {
    use super::{decode_samples, encode_samples};

    #[test]
    fn samples_survive_encoding_including_nan_and_infinities() {
        let samples = [0.0, -1.5, f64::INFINITY, f64::NEG_INFINITY, f64::MIN_POSITIVE, 1e300];
        let decoded = decode_samples(&encode_samples(&samples)).unwrap_or_default();
        assert_eq!(decoded, samples);
        let nan = decode_samples(&encode_samples(&[f64::NAN])).unwrap_or_default();
        assert!(nan.len() == 1 && nan.iter().all(|v| v.is_nan()));
        assert_eq!(decode_samples(&[1, 2, 3]), None);
    }
}
