//! The PostgreSQL back end of the [`Store`] trait, for a farm of test machines sharing one result store.
//!
//! It applies the same embedded migrations as SQLite (rendered for PostgreSQL) and keeps the same semantics: one
//! transaction per save, idempotent imports, the same orderings, the same packed metric rows (`packed.rs`), revisions
//! resolved by the shared [`crate::resolve_revision_in`].
//!
//! Several machines may save at once. Rows shared between runs (machines, revisions, metric names) are looked up
//! first and inserted only when missing, with `ON CONFLICT DO NOTHING`, so concurrent savers never fail on each
//! other's inserts; new metric names are inserted in sorted order, so two savers wait on each other in one order
//! and cannot deadlock. Should the server still report a deadlock or a serialization failure, the whole save is
//! retried. A run's metrics (20,000 for a perf-heavy run) are one packed row; other bulk rows go in as arrays through
//! `unnest`, one statement per table.
//!
//! PostgreSQL's `TEXT` cannot hold a NUL character, which a crashing benchmark's stderr may contain. Text is
//! therefore stored with NUL written as U+FFFE followed by `0`, and U+FFFE itself doubled; text without either
//! character (all normal text) is stored unchanged, so the database stays readable with `psql`.

use crate::record::{convert_exit_code, convert_run_kind, convert_try_fix_side, now, validate_record};
use crate::error::StoreError;
use crate::pgpass;
use crate::migrations::{self, Dialect};
use crate::packed::{
    kept_names,
    damaged, dense, lkp_time_names, names_in_order, pack, revision_samples, run_metrics, union_of_ids, unpack_into,
    unpack_rows, RevisionRuns,
};
use crate::sqlite::{decode_samples, encode_samples};
use crate::{
    parents_from_text, parents_to_text, BisectCommit, BisectSession, Build, FollowSession, NewBisectSession,
    NewTryFix, RevisionSamples, RunFacts, RunFilter, RunId, RunSummary, SampleQuery, SaveOptions, Saved, SessionClaim,
    SessionId, Store, StoredRevision, TryFix, TryFixId, TryFixSide, NEW_SESSION_STATUS,
};
use culprit_core::model::{Machine, MonitorSeries, RawOutput, Revision, RunOutcome, RunRecord, ScratchFilesystem};
use ::postgres::config::{Host, SslMode};
use ::postgres::error::SqlState;
use ::postgres::types::ToSql;
use ::postgres::{Client, Config, NoTls, Row, Transaction};
use std::borrow::Cow;
use std::cell::{RefCell, RefMut};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

/// The URL schemes that name a PostgreSQL store.
pub const URL_SCHEMES: [&str; 2] = ["postgres://", "postgresql://"];

/// Whether `location` (a `--db` value or `$CULPRIT_DB`) names a PostgreSQL server rather than a SQLite file.
pub fn is_postgres_url(location: &str) -> bool {
    URL_SCHEMES.iter().any(|scheme| location.starts_with(scheme))
}

/// How long connecting may take when the URL sets no `connect_timeout`: a farm machine must not hang forever on
/// an unreachable server.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// Below this many names missing from the cache, a save looks them up by name rather than reading all names.
const BULK_NAME_LOAD_MIN: usize = 256;

/// How often a save is attempted when the server aborts it for a deadlock or a serialization failure.
const SAVE_ATTEMPTS: usize = 5;

/// The advisory lock that serializes schema migrations between machines connecting at the same time.
const MIGRATION_LOCK: i64 = 0x6375_6c70_7269_7401;

/// The PostgreSQL result store. One connection; reads take `&self`, so the connection sits in a `RefCell` that is
/// borrowed once per public method and never re-entered.
pub struct PostgresStore {
    client: RefCell<Client>,
    location: String,
    /// Metric name to `metric_names.id`, learned only from committed saves (names are never deleted).
    metric_ids: HashMap<String, i64>,
    /// The bisect sessions this connection claims. The server counts a lock taken twice by one connection as two,
    /// so a claim is taken once and given up once.
    claimed: std::collections::HashSet<i64>,
}

/// A failure inside a store operation: a server error (classified at the boundary, possibly retried) or an error
/// the store already worded.
enum Failure {
    Db(postgres::Error),
    Store(StoreError),
}

impl From<postgres::Error> for Failure {
    fn from(error: postgres::Error) -> Self {
        Failure::Db(error)
    }
}

impl From<StoreError> for Failure {
    fn from(error: StoreError) -> Self {
        Failure::Store(error)
    }
}

impl PostgresStore {
    /// Connects to the server named by `url` (`postgres://user:password@host:port/database`, libpq's URL form)
    /// and brings the schema up to date. The connection is not encrypted; keep the server on a trusted network.
    pub fn connect(url: &str) -> Result<PostgresStore, StoreError> {
        let mut config = Config::from_str(url).map_err(|e| StoreError::Open {
            location: redact(url),
            reason: e.to_string(),
            hint: "give a URL like postgresql://user:password@host:5432/database".into(),
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(DEFAULT_CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name(&application_name());
        }
        let location = describe_location(&config);
        // The URLs Culprit prints leave the password out, so a URL without one takes it where libpq-based tools
        // take it (PGPASSWORD, then the password file); a password in the URL still wins, as in libpq.
        let password_search = if config.get_password().is_none() {
            let found = pgpass::find(&password_target(&config).as_target());
            match &found {
                pgpass::Found::Environment(password) | pgpass::Found::File(_, password) => {
                    config.password(password.as_str());
                }
                pgpass::Found::Nothing { .. } => {}
            }
            Some(found)
        } else {
            None
        };
        // The client has no TLS, so `sslmode=require` (which a managed server's URL often carries) can never be met.
        // Trying anyway failed with "error performing TLS handshake: no TLS implementation configured" (or, from a
        // server without TLS, "server does not support TLS") and the advice to check that the server is running.
        if config.get_ssl_mode() == SslMode::Require {
            return Err(StoreError::Open {
                location,
                reason: "the URL asks for an encrypted connection (sslmode=require), and culprit's PostgreSQL client \
                         does not encrypt"
                    .into(),
                hint: "leave sslmode out (or give sslmode=prefer) and keep the server on a trusted network, or reach it \
                       through an SSH tunnel"
                    .into(),
            });
        }
        let client = config.connect(NoTls).map_err(|e| StoreError::Open {
            location: location.clone(),
            reason: error_text(&e),
            hint: match &password_search {
                Some(pgpass::Found::Nothing { file, note }) if is_password_missing(&e) => {
                    missing_password_hint(file.as_deref(), note.as_deref())
                }
                _ => connect_hint(&e),
            },
        })?;
        let mut store = PostgresStore {
            client: RefCell::new(client),
            location,
            metric_ids: HashMap::new(),
            claimed: Default::default(),
        };
        store.migrate()?;
        Ok(store)
    }

    /// The schema version the database is at.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        let mut client = self.client()?;
        let row = client
            .query_one("SELECT COALESCE(MAX(version), 0) FROM schema_version", &[])
            .map_err(|e| classify(&self.location, "read the schema version", e))?;
        Ok(row.get(0))
    }

    fn client(&self) -> Result<RefMut<'_, Client>, StoreError> {
        // Every public method borrows once and passes the client down, so this cannot fail; if it ever did, an
        // error is better than a panic.
        self.client.try_borrow_mut().map_err(|_| StoreError::Database {
            location: self.location.clone(),
            action: "use the connection".into(),
            reason: "the connection is already in use by another operation of this store".into(),
        })
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let latest = migrations::latest_version();
        let location = self.location.clone();
        let client = self.client.get_mut();
        // The common case, an up-to-date schema, takes no lock, so a read-only user can open the store.
        if let Some(current) = current_version_if_any(client).map_err(|e| classify(&location, "read the schema", e))? {
            if current == latest {
                return Ok(());
            }
            if current > latest {
                return Err(StoreError::SchemaTooNew { location, found: current, supported: latest });
            }
        }
        let mut attempt = || -> Result<(), Failure> {
            let mut transaction = client.transaction()?;
            // Two machines starting on an empty database must not both create the tables.
            transaction.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
            // A database without culprit's schema is a new store only when its schema is empty, as a SQLite file is
            // only when it has no tables: a mistyped --db naming another application's database must not get
            // culprit's twelve tables written into it (nor fail halfway on a table name both happen to use). The
            // tables are read from the catalog after the lock, in one statement: a name lookup of `schema_version`
            // before it may still miss the tables a machine connecting at the same moment has just committed.
            let tables: Vec<String> = transaction
                .query(
                    "SELECT c.relname::TEXT FROM pg_class c WHERE c.relnamespace = current_schema()::REGNAMESPACE \
                     AND c.relkind IN ('r', 'p', 'v', 'm', 'f') ORDER BY c.relname",
                    &[],
                )?
                .iter()
                .map(|row| row.get(0))
                .collect();
            if !tables.is_empty() && !tables.iter().any(|name| name == "schema_version") {
                let tables = crate::record::foreign_tables_text(&tables);
                return Err(StoreError::NotACulpritStore { location: location.clone(), engine: "PostgreSQL", tables }
                    .into());
            }
            transaction.batch_execute(&migrations::render(migrations::SCHEMA_VERSION_TABLE, Dialect::Postgres))?;
            let current: i64 =
                transaction.query_one("SELECT COALESCE(MAX(version), 0) FROM schema_version", &[])?.get(0);
            if current > latest {
                return Err(StoreError::SchemaTooNew { location: location.clone(), found: current, supported: latest }
                    .into());
            }
            for (index, sql) in migrations::MIGRATIONS.iter().enumerate().skip(current.max(0) as usize) {
                let version = index as i64 + 1;
                let applied = transaction
                    .batch_execute(&migrations::render(sql, Dialect::Postgres))
                    .and_then(|_| match version == migrations::PACK_METRICS_VERSION {
                        true => pack_version_1_metrics(&mut transaction),
                        false => Ok(()),
                    })
                    .and_then(|_| {
                        transaction.execute(
                            "INSERT INTO schema_version (version, applied_at) VALUES ($1, $2)",
                            &[&version, &now()],
                        )
                    });
                if let Err(error) = applied {
                    return Err(match classify(&location, "upgrade the schema", error) {
                        StoreError::Database { reason, .. } => {
                            StoreError::Migration { location: location.clone(), version, reason }
                        }
                        other => other,
                    }
                    .into());
                }
            }
            transaction.commit()?;
            Ok(())
        };
        attempt().map_err(|failure| match failure {
            Failure::Db(error) => classify(&location, "upgrade the schema", error),
            Failure::Store(error) => error,
        })
    }

    fn query_summaries(
        &self,
        client: &mut Client,
        sql: &str,
        parameters: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<RunSummary>, StoreError> {
        let rows = client.query(sql, parameters).map_err(|e| classify(&self.location, "list runs", e))?;
        rows.iter().map(|row| summary_from_row(&self.location, row)).collect()
    }

    /// Each (job id, job name) runs are stored under, for [`RunFilter::resolved`]; none are read when the filter
    /// names no job.
    fn stored_job_names(&self, client: &mut Client, filter: &RunFilter) -> Result<Vec<(String, String)>, StoreError> {
        if filter.job.is_none() {
            return Ok(Vec::new());
        }
        let rows = client
            .query("SELECT DISTINCT job_id, job_name FROM runs", &[])
            .map_err(|e| classify(&self.location, "list jobs", e))?;
        Ok(rows.iter().map(|row| (from_db(row.get(0)), from_db(row.get(1)))).collect())
    }

    fn revision_row_id(&self, client: &mut Client, key: &str) -> Result<Option<i64>, StoreError> {
        client
            .query_opt("SELECT id FROM revisions WHERE rev_key = $1", &[&to_db(key)])
            .map(|row| row.map(|r| r.get(0)))
            .map_err(|e| classify(&self.location, "look up a revision", e))
    }

    fn revision_by_id(&self, client: &mut Client, id: i64) -> Result<Revision, StoreError> {
        let row = client
            .query_one("SELECT rev_key, kind, describe, subject FROM revisions WHERE id = $1", &[&id])
            .map_err(|e| classify(&self.location, "read a revision", e))?;
        Ok(revision_from_columns(row.get(1), row.get(0), row.get(2), row.get(3)))
    }
}

/// The columns of a run listing, the build's ([`crate::record::build_columns`]) and then the scratch filesystem's
/// last.
const SUMMARY_SELECT: &str = concat!(
    "SELECT r.id, r.job_id, r.job_name, r.testcase, v.rev_key, v.kind, v.describe, v.subject, m.hostname, \
     r.started_at, r.ended_at, r.status, r.failure_reason, r.exit_code, \
     COALESCE((SELECT p.metric_count FROM run_metric_packs p WHERE p.run_id = r.id), 0) AS metric_count, r.kind, ",
    crate::record::build_columns!(),
    ", ",
    crate::record::scratch_columns!(),
    " FROM runs r JOIN revisions v ON v.id = r.revision_id JOIN machines m ON m.id = r.machine_id"
);

/// Runs of one revision, without the metric count that samples do not need, with the build they are narrowed by.
const REVISION_RUNS_SELECT: &str = concat!(
    "SELECT r.id, r.job_id, r.job_name, r.testcase, v.rev_key, v.kind, v.describe, v.subject, m.hostname, \
     r.started_at, r.ended_at, r.status, r.failure_reason, r.exit_code, 0::BIGINT, r.kind, ",
    crate::record::build_columns!(),
    ", ",
    crate::record::scratch_columns!(),
    " FROM runs r JOIN revisions v ON v.id = r.revision_id JOIN machines m ON m.id = r.machine_id \
     WHERE r.revision_id = $1 ORDER BY r.id"
);

const SESSION_SELECT: &str = "SELECT id, repo, good, bad, job_id, metric, config_json, created_at, status, \
     result_json, updated_at FROM bisect_sessions";

impl Store for PostgresStore {
    fn location(&self) -> String {
        self.location.clone()
    }

    fn save_run_with(&mut self, run: &RunRecord, options: &SaveOptions) -> Result<Saved, StoreError> {
        validate_record(run)?;
        let action = "save a run";
        let PostgresStore { client, location, metric_ids, .. } = self;
        let client = client.get_mut();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut new_metric_ids = HashMap::new();
            let result = client.transaction().map_err(Failure::from).and_then(|mut transaction| {
                let saved = insert_run(&mut transaction, location, run, options, metric_ids, &mut new_metric_ids)?;
                transaction.commit()?;
                Ok(saved)
            });
            match result {
                Ok(saved) => {
                    // Only a committed run's metric ids may enter the cache, or a later save would reference ids
                    // that never existed.
                    metric_ids.extend(new_metric_ids);
                    return Ok(saved);
                }
                Err(Failure::Db(error)) if is_retryable(&error) && attempt < SAVE_ATTEMPTS => continue,
                Err(Failure::Db(error)) => return Err(classify(location, action, error)),
                Err(Failure::Store(error)) => return Err(error),
            }
        }
    }

    fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        let mut sql = SUMMARY_SELECT.to_string();
        let mut conditions: Vec<String> = Vec::new();
        let session_id = filter.bisect_session.map(|s| s.0);
        let keys: Vec<String> = filter.revision_keys.iter().map(|k| to_db(k).into_owned()).collect();
        let mut parameters: Vec<&(dyn ToSql + Sync)> = Vec::new();
        if let Some(session) = &session_id {
            sql.push_str(" JOIN bisect_session_runs b ON b.run_id = r.id");
            parameters.push(session);
            conditions.push(format!("b.session_id = ${}", parameters.len()));
        }
        if !keys.is_empty() {
            parameters.push(&keys);
            conditions.push(format!("v.rev_key = ANY(${})", parameters.len()));
        }
        crate::record::finish_run_listing(&mut sql, conditions, filter);
        let mut client = self.client()?;
        let runs = self.query_summaries(&mut client, &sql, &parameters)?;
        let filter = filter.resolved(self.stored_job_names(&mut client, filter)?);
        Ok(runs.into_iter().filter(|run| filter.matches(run)).collect())
    }

    fn run(&self, id: RunId) -> Result<RunRecord, StoreError> {
        let mut client = self.client()?;
        read_run(&mut client, &self.location, id)
    }

    fn run_facts(&self, ids: &[RunId]) -> Result<Vec<RunFacts>, StoreError> {
        let action = "read the machines and params of runs";
        let fail = |e: postgres::Error| classify(&self.location, action, e);
        let mut client = self.client()?;
        let wanted: Vec<i64> = ids.iter().map(|id| id.0).collect();
        // Two round trips for all the runs: their machines, then their params in order.
        let mut machines = BTreeMap::new();
        let rows = client
            .query(
                "SELECT r.id, m.hostname, m.cpu_model, m.nr_cpu, m.memory_kib, m.kernel, m.sockets \
                 FROM runs r JOIN machines m ON m.id = r.machine_id WHERE r.id = ANY($1)",
                &[&wanted],
            )
            .map_err(fail)?;
        for row in &rows {
            let id = RunId(row.try_get(0).map_err(fail)?);
            let hostname: String = row.try_get(1).map_err(fail)?;
            let cpu_model: String = row.try_get(2).map_err(fail)?;
            let (nr_cpu, memory_kib): (i64, i64) = (row.try_get(3).map_err(fail)?, row.try_get(4).map_err(fail)?);
            let kernel: String = row.try_get(5).map_err(fail)?;
            let sockets: Option<i64> = row.try_get(6).map_err(fail)?;
            let (hostname, cpu_model, kernel) = (from_db(hostname), from_db(cpu_model), from_db(kernel));
            let location = &self.location;
            let columns = (hostname, cpu_model, nr_cpu, memory_kib, kernel, sockets);
            let machine = crate::record::machine_from_columns(location, id, columns)?;
            machines.insert(id, machine);
        }
        let mut params: BTreeMap<RunId, Vec<(String, String)>> = BTreeMap::new();
        let rows = client
            .query("SELECT run_id, name, value FROM run_params WHERE run_id = ANY($1) ORDER BY run_id, seq", &[&wanted])
            .map_err(fail)?;
        for row in &rows {
            let id = RunId(row.try_get(0).map_err(fail)?);
            let (name, value): (String, String) = (row.try_get(1).map_err(fail)?, row.try_get(2).map_err(fail)?);
            params.entry(id).or_default().push((from_db(name), from_db(value)));
        }
        ids.iter()
            .map(|&id| {
                let machine = machines.get(&id).cloned().ok_or_else(|| StoreError::NotFound {
                    location: self.location.clone(),
                    what: format!("run {id}"),
                })?;
                Ok(RunFacts { id, machine, params: params.get(&id).cloned().unwrap_or_default() })
            })
            .collect()
    }

    fn samples(&self, query: &SampleQuery) -> Result<Vec<RevisionSamples>, StoreError> {
        let metric_filter = query.metric_filter()?;
        let run_filter = query.run_filter();
        let action = "read samples";
        let mut client = self.client()?;
        let filter = run_filter.resolved(self.stored_job_names(&mut client, &run_filter)?);
        let mut selected = Vec::with_capacity(query.revision_keys.len());
        for key in &query.revision_keys {
            let revision_id = self
                .revision_row_id(&mut client, key)?
                .ok_or_else(|| StoreError::UnknownRevision { location: self.location(), given: key.clone() })?;
            let runs: Vec<RunSummary> = self
                .query_summaries(&mut client, REVISION_RUNS_SELECT, &[&revision_id])?
                .into_iter()
                .filter(|run| filter.matches(run) && !query.excluded_runs.contains(&run.id))
                .collect();
            let revision = match runs.first() {
                Some(run) => run.revision.clone(),
                None => self.revision_by_id(&mut client, revision_id)?,
            };
            selected.push(RevisionRuns { revision, runs });
        }
        // One packed row per run, for all revisions in one round trip.
        let ok_ids: Vec<i64> = selected.iter().flat_map(RevisionRuns::ok_run_ids).collect();
        let rows = client
            .query(
                "SELECT run_id, metric_ids, metric_values FROM run_metric_packs WHERE run_id = ANY($1)",
                &[&ok_ids],
            )
            .map_err(|e| classify(&self.location, action, e))?;
        let mut packs: Vec<(i64, &[u8], &[u8])> = Vec::with_capacity(rows.len());
        for row in &rows {
            let columns = (|| Ok::<_, postgres::Error>((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?)))();
            packs.push(columns.map_err(|e| classify(&self.location, action, e))?);
        }
        let mut unpacked = unpack_rows(&self.location, packs)?;
        let ids = union_of_ids(&unpacked);
        let names = metric_names_of(&mut client, &self.location, &ids)?;
        let (ids, names) = lkp_time_names(&mut unpacked, ids, names);
        let kept = kept_names(names, metric_filter.as_ref());
        Ok(selected.into_iter().map(|revision| revision_samples(revision, &unpacked, &ids, &kept)).collect())
    }

    fn revisions(&self) -> Result<Vec<StoredRevision>, StoreError> {
        let mut client = self.client()?;
        let rows = client
            .query(
                "SELECT v.rev_key, v.kind, v.describe, v.subject, \
                 (SELECT COUNT(*) FROM runs r WHERE r.revision_id = v.id) FROM revisions v ORDER BY v.id",
                &[],
            )
            .map_err(|e| classify(&self.location, "list revisions", e))?;
        Ok(rows
            .iter()
            .map(|row| {
                let runs: i64 = row.get(4);
                StoredRevision {
                    revision: revision_from_columns(row.get(1), row.get(0), row.get(2), row.get(3)),
                    runs: runs.max(0) as u64,
                }
            })
            .collect())
    }

    fn create_bisect_session(&mut self, session: &NewBisectSession) -> Result<SessionId, StoreError> {
        let action = "create a bisect session";
        let location = self.location.clone();
        let client = self.client.get_mut();
        let mut transaction = client.transaction().map_err(|e| classify(&location, action, e))?;
        let row = transaction
            .query_one(
                "INSERT INTO bisect_sessions (repo, good, bad, job_id, metric, config_json, created_at, status) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
                &[
                    &to_db(&session.repo),
                    &to_db(&session.good),
                    &to_db(&session.bad),
                    &session.job_id.as_deref().map(to_db),
                    &session.metric.as_deref().map(to_db),
                    &to_db(&session.config_json),
                    &session.created_at,
                    &NEW_SESSION_STATUS,
                ],
            )
            .map_err(|e| classify(&location, action, e))?;
        let id: i64 = row.get(0);
        // One statement for the whole range: a kernel range holds thousands of commits, and a round trip each
        // would cost seconds against a remote server.
        let positions: Vec<i64> = (0..session.range.len() as i64).collect();
        let shas: Vec<String> = session.range.iter().map(|c| to_db(&c.sha).into_owned()).collect();
        let subjects: Vec<String> = session.range.iter().map(|c| to_db(&c.subject).into_owned()).collect();
        let parents: Vec<String> = session.range.iter().map(|c| parents_to_text(&c.parents)).collect();
        transaction
            .execute(
                "INSERT INTO bisect_range_commits (session_id, position, sha, subject, parents) \
                 SELECT $1, * FROM UNNEST($2::BIGINT[], $3::TEXT[], $4::TEXT[], $5::TEXT[])",
                &[&id, &positions, &shas, &subjects, &parents],
            )
            .map_err(|e| classify(&location, action, e))?;
        transaction.commit().map_err(|e| classify(&location, action, e))?;
        Ok(SessionId(id))
    }

    fn bisect_session_range(&self, id: SessionId) -> Result<Vec<BisectCommit>, StoreError> {
        let action = "read the range of a bisect session";
        let mut client = self.client()?;
        require_session(&mut client, &self.location, id, action)?;
        let rows = client
            .query(
                "SELECT position, sha, subject, parents FROM bisect_range_commits WHERE session_id = $1 ORDER BY position",
                &[&id.0],
            )
            .map_err(|e| classify(&self.location, action, e))?;
        rows.iter()
            .map(|row| {
                let position: i64 = row.get(0);
                let parents = parents_from_text(row.get(3), position as usize, id, &self.location)?;
                Ok(BisectCommit { sha: from_db(row.get(1)), subject: from_db(row.get(2)), parents })
            })
            .collect()
    }

    fn bisect_sessions(&self) -> Result<Vec<BisectSession>, StoreError> {
        let mut client = self.client()?;
        let rows = client
            .query(&format!("{SESSION_SELECT} ORDER BY id"), &[])
            .map_err(|e| classify(&self.location, "list bisect sessions", e))?;
        Ok(rows.iter().map(session_from_row).collect())
    }

    fn bisect_session(&self, id: SessionId) -> Result<BisectSession, StoreError> {
        let mut client = self.client()?;
        client
            .query_opt(&format!("{SESSION_SELECT} WHERE id = $1"), &[&id.0])
            .map_err(|e| classify(&self.location, "read a bisect session", e))?
            .map(|row| session_from_row(&row))
            .ok_or_else(|| StoreError::NotFound { location: self.location(), what: format!("bisect session {id}") })
    }

    fn update_bisect_session(
        &mut self,
        id: SessionId,
        status: &str,
        result_json: Option<&str>,
        updated_at: f64,
    ) -> Result<(), StoreError> {
        let changed = self
            .client
            .get_mut()
            .execute(
                "UPDATE bisect_sessions SET status = $1, result_json = $2, updated_at = $3 WHERE id = $4",
                &[&to_db(status), &result_json.map(to_db), &updated_at, &id.0],
            )
            .map_err(|e| classify(&self.location, "update a bisect session", e))?;
        if changed == 0 {
            return Err(StoreError::NotFound { location: self.location(), what: format!("bisect session {id}") });
        }
        Ok(())
    }

    fn update_bisect_session_config(&mut self, id: SessionId, config_json: &str) -> Result<(), StoreError> {
        let changed = self
            .client
            .get_mut()
            .execute("UPDATE bisect_sessions SET config_json = $1 WHERE id = $2", &[&to_db(config_json), &id.0])
            .map_err(|e| classify(&self.location, "update a bisect session's configuration", e))?;
        if changed == 0 {
            return Err(StoreError::NotFound { location: self.location(), what: format!("bisect session {id}") });
        }
        Ok(())
    }

    fn delete_bisect_session(&mut self, id: SessionId) -> Result<(), StoreError> {
        let action = "delete a bisect session";
        let location = self.location.clone();
        let client = self.client.get_mut();
        let result = client.transaction().map_err(Failure::from).and_then(|mut transaction| {
            for table in crate::SESSION_OWNED_TABLES {
                transaction.execute(&format!("DELETE FROM {table} WHERE session_id = $1"), &[&id.0])?;
            }
            let deleted = transaction.execute("DELETE FROM bisect_sessions WHERE id = $1", &[&id.0])?;
            if deleted == 0 {
                let what = format!("bisect session {id}");
                return Err(Failure::Store(StoreError::NotFound { location: location.clone(), what }));
            }
            transaction.commit()?;
            Ok(())
        });
        result.map_err(|failure| match failure {
            Failure::Db(error) => classify(&location, action, error),
            Failure::Store(error) => error,
        })
    }

    fn link_run_to_session(&mut self, session: SessionId, run: RunId) -> Result<(), StoreError> {
        let action = "link a run to a bisect session";
        let location = self.location.clone();
        let client = self.client.get_mut();
        let result = client.transaction().map_err(Failure::from).and_then(|mut transaction| {
            link_in(&mut transaction, &location, session, run)?;
            transaction.commit()?;
            Ok(())
        });
        result.map_err(|failure| match failure {
            Failure::Db(error) => classify(&location, action, error),
            Failure::Store(error) => error,
        })
    }

    fn record_follow_session(&mut self, id: SessionId, machine: &str) -> Result<(), StoreError> {
        let action = "record a bisect session of track --follow";
        let client = self.client.get_mut();
        require_session(client, &self.location, id, action)?;
        client
            .execute(
                "INSERT INTO follow_sessions (session_id, machine) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                &[&id.0, &to_db(machine)],
            )
            .map_err(|e| classify(&self.location, action, e))?;
        Ok(())
    }

    fn follow_sessions(&self, machine: &str) -> Result<Vec<FollowSession>, StoreError> {
        let action = "list the bisect sessions of track --follow";
        let rows = self
            .client()?
            .query(
                "SELECT session_id, reported_at FROM follow_sessions WHERE machine = $1 ORDER BY session_id",
                &[&to_db(machine)],
            )
            .map_err(|e| classify(&self.location, action, e))?;
        Ok(rows.iter().map(|row| FollowSession { session: SessionId(row.get(0)), reported_at: row.get(1) }).collect())
    }

    fn mark_follow_session_reported(&mut self, id: SessionId, machine: &str, at: f64) -> Result<(), StoreError> {
        let action = "record that a bisect session of track --follow was reported";
        let changed = self
            .client
            .get_mut()
            .execute(
                "UPDATE follow_sessions SET reported_at = $1 WHERE session_id = $2 AND machine = $3",
                &[&at, &id.0, &to_db(machine)],
            )
            .map_err(|e| classify(&self.location, action, e))?;
        if changed == 0 {
            let what = format!("bisect session {id} of track --follow on {machine}");
            return Err(StoreError::NotFound { location: self.location(), what });
        }
        Ok(())
    }

    fn create_try_fix(&mut self, try_fix: &NewTryFix) -> Result<TryFixId, StoreError> {
        let action = "record a try-fix";
        let NewTryFix { repo, base, bad, fix, patch, patch_text, build, job_id, machine, created_at } = try_fix;
        let row = self
            .client
            .get_mut()
            .query_one(
                "INSERT INTO try_fixes (repo, base, bad, fix, patch, patch_text, build, job_id, machine, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
                &[
                    &to_db(repo),
                    &to_db(base),
                    &to_db(bad),
                    &to_db(fix),
                    &to_db(patch),
                    &patch_text.as_deref().map(to_db),
                    &build.as_deref().map(to_db),
                    &to_db(job_id),
                    &to_db(machine),
                    created_at,
                ],
            )
            .map_err(|e| classify(&self.location, action, e))?;
        Ok(TryFixId(row.get(0)))
    }

    fn link_run_to_try_fix(&mut self, id: TryFixId, run: RunId, side: TryFixSide) -> Result<(), StoreError> {
        let action = "link a run to a try-fix";
        let client = self.client.get_mut();
        require_try_fix(client, &self.location, id, action)?;
        client
            .execute(
                "INSERT INTO try_fix_runs (try_fix_id, run_id, side) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                &[&id.0, &run.0, &side.as_str()],
            )
            .map_err(|e| classify(&self.location, action, e))?;
        Ok(())
    }

    fn finish_try_fix(&mut self, id: TryFixId, at: f64) -> Result<(), StoreError> {
        let action = "record that a try-fix finished";
        let changed = self
            .client
            .get_mut()
            .execute("UPDATE try_fixes SET finished_at = $1 WHERE id = $2", &[&at, &id.0])
            .map_err(|e| classify(&self.location, action, e))?;
        if changed == 0 {
            return Err(StoreError::NotFound { location: self.location(), what: format!("try-fix {id}") });
        }
        Ok(())
    }

    fn try_fixes(&self) -> Result<Vec<TryFix>, StoreError> {
        let action = "list the try-fixes";
        let rows = self
            .client()?
            .query(
                "SELECT id, repo, base, bad, fix, patch, job_id, machine, created_at, finished_at, patch_text, build \
                 FROM try_fixes ORDER BY id",
                &[],
            )
            .map_err(|e| classify(&self.location, action, e))?;
        Ok(rows
            .iter()
            .map(|row| TryFix {
                id: TryFixId(row.get(0)),
                repo: from_db(row.get(1)),
                base: from_db(row.get(2)),
                bad: from_db(row.get(3)),
                fix: from_db(row.get(4)),
                patch: from_db(row.get(5)),
                patch_text: row.get::<_, Option<String>>(10).map(from_db),
                build: row.get::<_, Option<String>>(11).map(from_db),
                job_id: from_db(row.get(6)),
                machine: from_db(row.get(7)),
                created_at: row.get(8),
                finished_at: row.get(9),
            })
            .collect())
    }

    fn try_fix_runs(&self, id: TryFixId) -> Result<Vec<(RunId, TryFixSide)>, StoreError> {
        let action = "list the runs of a try-fix";
        let mut client = self.client()?;
        require_try_fix(&mut client, &self.location, id, action)?;
        let rows = client
            .query("SELECT run_id, side FROM try_fix_runs WHERE try_fix_id = $1 ORDER BY run_id", &[&id.0])
            .map_err(|e| classify(&self.location, action, e))?;
        rows.iter()
            .map(|row| Ok((RunId(row.get(0)), convert_try_fix_side(&self.location, id.0, row.get(1))?)))
            .collect()
    }

    fn bisect_session_runs(&self, id: SessionId) -> Result<Vec<RunId>, StoreError> {
        let action = "list the runs of a bisect session";
        let mut client = self.client()?;
        require_session(&mut client, &self.location, id, action)?;
        let rows = client
            .query("SELECT run_id FROM bisect_session_runs WHERE session_id = $1 ORDER BY id", &[&id.0])
            .map_err(|e| classify(&self.location, action, e))?;
        Ok(rows.iter().map(|row| RunId(row.get(0))).collect())
    }

    fn claim_bisect_session(&mut self, id: SessionId) -> Result<SessionClaim, StoreError> {
        let action = "claim a bisect session";
        if self.claimed.contains(&id.0) {
            return Ok(SessionClaim::Free);
        }
        let client = self.client.get_mut();
        // A holder that ends between the try and the look-up leaves no one to name: the claim is tried once more.
        for _ in 0..2 {
            let taken: bool = client
                .query_one(&format!("SELECT pg_try_advisory_lock({SESSION_LOCK_KEYS})"), &[&id.0])
                .map_err(|e| classify(&self.location, action, e))?
                .get(0);
            if taken {
                self.claimed.insert(id.0);
                return Ok(SessionClaim::Free);
            }
            if let Some(holder) =
                session_lock_holder(client, id).map_err(|e| classify(&self.location, action, e))?
            {
                return Ok(SessionClaim::HeldBy(holder));
            }
        }
        Ok(SessionClaim::HeldBy("another connection to the store".into()))
    }

    fn release_bisect_session(&mut self, id: SessionId) -> Result<(), StoreError> {
        if !self.claimed.remove(&id.0) {
            return Ok(());
        }
        let client = self.client.get_mut();
        client
            .execute(&format!("SELECT pg_advisory_unlock({SESSION_LOCK_KEYS})"), &[&id.0])
            .map_err(|e| classify(&self.location, "give up the claim of a bisect session", e))?;
        Ok(())
    }

    fn bisect_session_claim(&self, id: SessionId) -> Result<SessionClaim, StoreError> {
        let mut client = self.client()?;
        let holder = session_lock_holder(&mut client, id)
            .map_err(|e| classify(&self.location, "read who drives a bisect session", e))?;
        Ok(holder.map_or(SessionClaim::Free, SessionClaim::HeldBy))
    }
}

/// The two keys of a bisect session's advisory lock, as SQL of the session id `$1`: the store's schema and the
/// session. Advisory locks belong to the database, and stores in two schemas of one database number their sessions
/// alike, so the schema is part of the key. (The two-key form never meets [`MIGRATION_LOCK`], a one-key lock.)
const SESSION_LOCK_KEYS: &str = "hashtext(current_schema()), ($1::BIGINT % 2147483647)::INT4";

/// Who holds session `id`'s advisory lock, other than this connection, as the holder's connection names itself
/// (see [`application_name`]); `None` when nobody else does. A role that may not see another role's connections reads
/// only its backend's process id.
fn session_lock_holder(client: &mut Client, id: SessionId) -> Result<Option<String>, postgres::Error> {
    let row = client.query_opt(
        "SELECT a.application_name, host(a.client_addr), l.pid FROM pg_locks l \
         LEFT JOIN pg_stat_activity a ON a.pid = l.pid \
         WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.pid <> pg_backend_pid() \
         AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
         AND l.classid::BIGINT = (hashtext(current_schema())::BIGINT & 4294967295) \
         AND l.objid::BIGINT = $1::BIGINT % 2147483647 LIMIT 1",
        &[&id.0],
    )?;
    Ok(row.map(|row| {
        let name: Option<String> = row.get(0);
        let address: Option<String> = row.get(1);
        let pid: i32 = row.get(2);
        let name = name.filter(|n| !n.is_empty()).unwrap_or_else(|| format!("server process {pid}"));
        match address {
            Some(address) => format!("{name} from {address}"),
            None => name,
        }
    }))
}

/// How a culprit's connection names itself to the server (`application_name`), so that a culprit refused a session
/// another one drives can say which machine and process that is: `culprit@HOST pid N`. The server keeps 63 bytes.
fn application_name() -> String {
    let host = crate::machine_name();
    let host = host.as_str();
    format!("culprit@{} pid {}", if host.is_empty() { "unknown-host" } else { host }, std::process::id())
}

/// The schema version, or `None` for a database without a `schema_version` table (a new database). The table is
/// looked up through the `search_path`, so a store can live in its own schema.
fn current_version_if_any(client: &mut Client) -> Result<Option<i64>, postgres::Error> {
    let exists: bool = client.query_one("SELECT to_regclass('schema_version') IS NOT NULL", &[])?.get(0);
    if !exists {
        return Ok(None);
    }
    Ok(Some(client.query_one("SELECT COALESCE(MAX(version), 0) FROM schema_version", &[])?.get(0)))
}

fn insert_run(
    tx: &mut Transaction<'_>,
    location: &str,
    run: &RunRecord,
    options: &SaveOptions,
    known_metric_ids: &HashMap<String, i64>,
    new_metric_ids: &mut HashMap<String, i64>,
) -> Result<Saved, Failure> {
    let machine_id = machine_id(tx, &run.machine)?;
    let revision_id = revision_id(tx, &run.revision)?;

    let (status, failure_reason) = crate::record::stored_outcome(&run.outcome);
    let failure_reason = failure_reason.as_deref().map(to_db);
    let import_key = options.import_key.as_deref().map(to_db);
    // A run an earlier importer stored under its former key, of the same job.yaml (lkp's records the kconfig, compiler
    // and result_root, which tell this run from another one that importer met first), is this run; the key it has
    // now is then not inserted.
    if let (Some(_), Some(former)) = (&import_key, &options.former_import_key) {
        let stored = tx.query_opt(
            "SELECT id FROM runs WHERE job_id = $1 AND revision_id = $2 AND import_key = $3 AND job_yaml = $5 \
             AND NOT EXISTS (SELECT 1 FROM runs WHERE job_id = $1 AND revision_id = $2 AND import_key = $4)",
            &[&to_db(&run.job_id), &revision_id, &to_db(former), &import_key, &to_db(&run.job_yaml)],
        )?;
        if let Some(row) = stored {
            let existing: i64 = row.get(0);
            if let Some(session) = options.bisect_session {
                link_in(tx, location, session, RunId(existing))?;
            }
            return Ok(Saved::AlreadyStored(RunId(existing)));
        }
    }
    let exit_code = run.exit_code.map(i64::from);
    let [scratch_path, scratch_fs_type, scratch_fs_source] =
        crate::record::scratch_to_columns(run).map(|column| column.map(to_db));
    // With an import key, a run stored before (by this or another machine, even one committing right now) makes
    // the insert do nothing instead of failing.
    let inserted = tx.query_opt(
        "INSERT INTO runs (job_id, job_name, testcase, job_yaml, revision_id, machine_id, started_at, ended_at, \
         status, failure_reason, exit_code, stderr, import_key, kind, scratch_path, scratch_fs_type, \
         scratch_fs_source) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) \
         ON CONFLICT (job_id, revision_id, import_key) DO NOTHING RETURNING id",
        &[
            &to_db(&run.job_id),
            &to_db(&run.job_name),
            &to_db(&run.testcase),
            &to_db(&run.job_yaml),
            &revision_id,
            &machine_id,
            &run.started_at,
            &run.ended_at,
            &status,
            &failure_reason,
            &exit_code,
            &to_db(&run.stderr),
            &import_key,
            &options.kind.as_str(),
            &scratch_path,
            &scratch_fs_type,
            &scratch_fs_source,
        ],
    )?;
    let run_id: i64 = match inserted {
        Some(row) => row.get(0),
        None => {
            let existing: i64 = tx
                .query_one(
                    "SELECT id FROM runs WHERE job_id = $1 AND revision_id = $2 AND import_key = $3",
                    &[&to_db(&run.job_id), &revision_id, &import_key],
                )?
                .get(0);
            if let Some(session) = options.bisect_session {
                link_in(tx, location, session, RunId(existing))?;
            }
            return Ok(Saved::AlreadyStored(RunId(existing)));
        }
    };

    if !run.params.is_empty() {
        let seqs: Vec<i64> = (0..run.params.len() as i64).collect();
        let names: Vec<Cow<'_, str>> = run.params.iter().map(|(name, _)| to_db(name)).collect();
        let values: Vec<Cow<'_, str>> = run.params.iter().map(|(_, value)| to_db(value)).collect();
        tx.execute(
            "INSERT INTO run_params (run_id, seq, name, value) SELECT $1, * FROM unnest($2::BIGINT[], $3::TEXT[], $4::TEXT[])",
            &[&run_id, &seqs, &names, &values],
        )?;
    }

    if !run.metrics.is_empty() {
        let ids = metric_ids_of(tx, run, known_metric_ids, new_metric_ids)?;
        let packed = pack(ids.into_iter().zip(run.metrics.values().copied()).collect());
        tx.execute(
            "INSERT INTO run_metric_packs (run_id, metric_count, metric_ids, metric_values) VALUES ($1, $2, $3, $4)",
            &[&run_id, &packed.metric_count, &packed.metric_ids, &packed.metric_values],
        )?;
    }

    if !run.monitors.is_empty() {
        let seqs: Vec<i64> = (0..run.monitors.len() as i64).collect();
        let names: Vec<Cow<'_, str>> = run.monitors.iter().map(|m| to_db(&m.monitor)).collect();
        let times: Vec<Vec<u8>> = run.monitors.iter().map(|m| encode_samples(&m.times)).collect();
        tx.execute(
            "INSERT INTO run_monitors (run_id, seq, monitor, times) \
             SELECT $1, * FROM unnest($2::BIGINT[], $3::TEXT[], $4::BYTEA[])",
            &[&run_id, &seqs, &names, &times],
        )?;
        let mut series_seqs: Vec<i64> = Vec::new();
        let mut series_names: Vec<Cow<'_, str>> = Vec::new();
        let mut series_samples: Vec<Vec<u8>> = Vec::new();
        for (seq, monitor) in run.monitors.iter().enumerate() {
            for (name, samples) in &monitor.series {
                series_seqs.push(seq as i64);
                series_names.push(to_db(name));
                series_samples.push(encode_samples(samples));
            }
        }
        if !series_seqs.is_empty() {
            tx.execute(
                "INSERT INTO run_monitor_series (run_id, monitor_seq, name, samples) \
                 SELECT $1, * FROM unnest($2::BIGINT[], $3::TEXT[], $4::BYTEA[])",
                &[&run_id, &series_seqs, &series_names, &series_samples],
            )?;
        }
    }

    if !run.raw_outputs.is_empty() {
        let seqs: Vec<i64> = (0..run.raw_outputs.len() as i64).collect();
        let names: Vec<Cow<'_, str>> = run.raw_outputs.iter().map(|r| to_db(&r.name)).collect();
        let contents: Vec<&[u8]> = run.raw_outputs.iter().map(|r| r.content.as_slice()).collect();
        tx.execute(
            "INSERT INTO run_raw_outputs (run_id, seq, name, content) \
             SELECT $1, * FROM unnest($2::BIGINT[], $3::TEXT[], $4::BYTEA[])",
            &[&run_id, &seqs, &names, &contents],
        )?;
    }

    if let Some(session) = options.bisect_session {
        link_in(tx, location, session, RunId(run_id))?;
    }
    Ok(Saved::Inserted(RunId(run_id)))
}

/// The id of the run's machine row, inserting it when new. Looking up first keeps the common case free of
/// writes and row locks, so machines saving at once do not queue behind each other.
fn machine_id(tx: &mut Transaction<'_>, machine: &Machine) -> Result<i64, postgres::Error> {
    let hostname = to_db(&machine.hostname);
    let cpu_model = to_db(&machine.cpu_model);
    let kernel = to_db(&machine.kernel);
    let nr_cpu = i64::from(machine.nr_cpu);
    // validate_record has checked that the size fits.
    let memory_kib = i64::try_from(machine.memory_kib).unwrap_or(i64::MAX);
    let parameters: [&(dyn ToSql + Sync); 5] = [&hostname, &cpu_model, &nr_cpu, &memory_kib, &kernel];
    let select = "SELECT id, sockets FROM machines WHERE hostname = $1 AND cpu_model = $2 AND nr_cpu = $3 \
                  AND memory_kib = $4 AND kernel = $5";
    let sockets = machine.recorded_sockets().map(i64::from);
    // A row stored without the socket count (before schema version 10) takes the first a run of it gives.
    let fill_sockets = |tx: &mut Transaction<'_>, id: i64, stored: Option<i64>| match (stored, sockets) {
        (None, Some(count)) => {
            tx.execute("UPDATE machines SET sockets = $1 WHERE id = $2 AND sockets IS NULL", &[&count, &id]).map(|_| id)
        }
        _ => Ok(id),
    };
    if let Some(row) = tx.query_opt(select, &parameters)? {
        return fill_sockets(tx, row.get(0), row.get(1));
    }
    let inserted = tx.query_opt(
        "INSERT INTO machines (hostname, cpu_model, nr_cpu, memory_kib, kernel, sockets) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING id",
        &[&hostname, &cpu_model, &nr_cpu, &memory_kib, &kernel, &sockets],
    )?;
    match inserted {
        Some(row) => Ok(row.get(0)),
        // Another machine inserted the same row and committed while we waited on it; it is visible now.
        None => {
            let row = tx.query_one(select, &parameters)?;
            fill_sockets(tx, row.get(0), row.get(1))
        }
    }
}

/// The id of the run's revision row, inserting it when new and filling in a describe name or subject that an
/// earlier run lacked (never erasing what is known).
fn revision_id(tx: &mut Transaction<'_>, revision: &Revision) -> Result<i64, postgres::Error> {
    let (kind, describe, subject) = match revision {
        Revision::Commit { describe, subject, .. } => ("commit", describe.as_deref(), subject.as_deref()),
        Revision::Label { .. } => ("label", None, None),
    };
    let key = to_db(revision.key());
    let describe = describe.map(to_db);
    let subject = subject.map(to_db);
    let select = "SELECT id, describe, subject FROM revisions WHERE rev_key = $1";
    let row = match tx.query_opt(select, &[&key])? {
        Some(row) => row,
        None => {
            let inserted = tx.query_opt(
                "INSERT INTO revisions (rev_key, kind, describe, subject) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (rev_key) DO NOTHING RETURNING id",
                &[&key, &kind, &describe, &subject],
            )?;
            if let Some(row) = inserted {
                return Ok(row.get(0));
            }
            // Another machine inserted it and committed while this insert waited; it is visible now.
            tx.query_one(select, &[&key])?
        }
    };
    let id: i64 = row.get(0);
    let stored_describe: Option<String> = row.get(1);
    let stored_subject: Option<String> = row.get(2);
    let adds = |new: &Option<Cow<'_, str>>, stored: &Option<String>| {
        new.as_deref().is_some_and(|n| stored.as_deref() != Some(n))
    };
    if adds(&describe, &stored_describe) || adds(&subject, &stored_subject) {
        tx.execute(
            "UPDATE revisions SET describe = COALESCE($2, describe), subject = COALESCE($3, subject) WHERE id = $1",
            &[&id, &describe, &subject],
        )?;
    }
    Ok(id)
}

/// The metric ids of a run's metrics in the run's (sorted) metric order, inserting unknown names.
fn metric_ids_of(
    tx: &mut Transaction<'_>,
    run: &RunRecord,
    known: &HashMap<String, i64>,
    new: &mut HashMap<String, i64>,
) -> Result<Vec<i64>, postgres::Error> {
    let lookup = |name: &str, new: &HashMap<String, i64>| known.get(name).or_else(|| new.get(name)).copied();
    // The metrics are a BTreeMap, so `missing` is sorted: concurrent savers insert new names in one order.
    let missing: Vec<Cow<'_, str>> =
        run.metrics.keys().filter(|name| lookup(name, new).is_none()).map(|name| to_db(name)).collect();
    if !missing.is_empty() {
        // A new process saving a perf-heavy run knows none of its 20,000 names. Matching 20,000 names with `ANY`
        // costs several times more than reading the whole table when the table is not much larger (judged by
        // its largest id, which gaps only make larger), so then every stored name is read. Names committed by
        // another machine after this read are still found below, after the insert.
        let largest_id: i64 = match missing.len() >= BULK_NAME_LOAD_MIN {
            true => tx.query_one("SELECT COALESCE(MAX(id), 0) FROM metric_names", &[])?.get(0),
            false => i64::MAX,
        };
        let rows = if largest_id <= (missing.len() as i64).saturating_mul(4) {
            tx.query("SELECT name, id FROM metric_names", &[])?
        } else {
            tx.query("SELECT name, id FROM metric_names WHERE name = ANY($1)", &[&missing])?
        };
        for row in rows {
            let name = from_db(row.get(0));
            if !known.contains_key(&name) {
                new.insert(name, row.get(1));
            }
        }
        let still_missing: Vec<&Cow<'_, str>> =
            missing.iter().filter(|name| lookup(&from_db(name.to_string()), new).is_none()).collect();
        if !still_missing.is_empty() {
            let rows = tx.query(
                "INSERT INTO metric_names (name) SELECT n FROM unnest($1::TEXT[]) WITH ORDINALITY AS t(n, o) \
                 ORDER BY o ON CONFLICT DO NOTHING RETURNING name, id",
                &[&still_missing],
            )?;
            for row in rows {
                new.insert(from_db(row.get(0)), row.get(1));
            }
            // Names another machine committed while this insert waited for it are not returned; read them.
            let last: Vec<&Cow<'_, str>> = still_missing
                .into_iter()
                .filter(|name| lookup(&from_db(name.to_string()), new).is_none())
                .collect();
            if !last.is_empty() {
                for row in tx.query("SELECT name, id FROM metric_names WHERE name = ANY($1)", &[&last])? {
                    new.insert(from_db(row.get(0)), row.get(1));
                }
            }
        }
    }
    Ok(run.metrics.keys().map(|name| lookup(name, new).unwrap_or(-1)).collect())
}

/// Fails with `NotFound` unless bisect session `id` exists, so that a missing session is not read as one without
/// runs or range.
fn require_try_fix(client: &mut Client, location: &str, id: TryFixId, action: &str) -> Result<(), StoreError> {
    let exists: bool = client
        .query_one("SELECT EXISTS (SELECT 1 FROM try_fixes WHERE id = $1)", &[&id.0])
        .map_err(|e| classify(location, action, e))?
        .get(0);
    if exists {
        Ok(())
    } else {
        Err(StoreError::NotFound { location: location.to_string(), what: format!("try-fix {id}") })
    }
}

fn require_session(client: &mut Client, location: &str, id: SessionId, action: &str) -> Result<(), StoreError> {
    let exists: bool = client
        .query_one("SELECT EXISTS (SELECT 1 FROM bisect_sessions WHERE id = $1)", &[&id.0])
        .map_err(|e| classify(location, action, e))?
        .get(0);
    if exists {
        Ok(())
    } else {
        Err(StoreError::NotFound { location: location.to_string(), what: format!("bisect session {id}") })
    }
}

fn link_in(tx: &mut Transaction<'_>, location: &str, session: SessionId, run: RunId) -> Result<(), Failure> {
    let session_exists: bool =
        tx.query_one("SELECT EXISTS (SELECT 1 FROM bisect_sessions WHERE id = $1)", &[&session.0])?.get(0);
    if !session_exists {
        return Err(StoreError::NotFound { location: location.to_string(), what: format!("bisect session {session}") }
            .into());
    }
    let run_exists: bool = tx.query_one("SELECT EXISTS (SELECT 1 FROM runs WHERE id = $1)", &[&run.0])?.get(0);
    if !run_exists {
        return Err(StoreError::NotFound { location: location.to_string(), what: format!("run {run}") }.into());
    }
    tx.execute(
        "INSERT INTO bisect_session_runs (session_id, run_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        &[&session.0, &run.0],
    )?;
    Ok(())
}

/// The names of metric ids (sorted, distinct), in the same order: one range scan when the ids are dense, as one
/// job's are, else one lookup of the listed ids.
fn metric_names_of(client: &mut Client, location: &str, ids: &[i64]) -> Result<Vec<String>, StoreError> {
    let (Some(first), Some(last)) = (ids.first(), ids.last()) else { return Ok(Vec::new()) };
    let rows = if dense(ids) {
        client.query("SELECT id, name FROM metric_names WHERE id BETWEEN $1 AND $2", &[first, last])
    } else {
        client.query("SELECT id, name FROM metric_names WHERE id = ANY($1)", &[&ids])
    }
    .map_err(|e| classify(location, "read metric names", e))?;
    names_in_order(location, ids, rows.iter().map(|row| (row.get(0), from_db(row.get(1)))))
}

/// Migration step of [`migrations::PACK_METRICS_VERSION`]: packs the `run_metrics` rows of every run.
fn pack_version_1_metrics(tx: &mut Transaction<'_>) -> Result<(), postgres::Error> {
    let runs: Vec<i64> =
        tx.query("SELECT DISTINCT run_id FROM run_metrics ORDER BY run_id", &[])?.iter().map(|row| row.get(0)).collect();
    let select = tx.prepare("SELECT metric_id, value FROM run_metrics WHERE run_id = $1")?;
    let insert = tx.prepare(
        "INSERT INTO run_metric_packs (run_id, metric_count, metric_ids, metric_values) VALUES ($1, $2, $3, $4)",
    )?;
    for run in runs {
        let pairs: Vec<(i64, f64)> = tx
            .query(&select, &[&run])?
            .iter()
            .map(|row| (row.get(0), row.get::<_, Option<f64>>(1).unwrap_or(f64::NAN)))
            .collect();
        let packed = pack(pairs);
        tx.execute(&insert, &[&run, &packed.metric_count, &packed.metric_ids, &packed.metric_values])?;
    }
    Ok(())
}

fn read_run(client: &mut Client, location: &str, id: RunId) -> Result<RunRecord, StoreError> {
    let action = "read a run";
    let fail = |e: postgres::Error| classify(location, action, e);
    let bad = |what: String, reason: String| StoreError::BadStoredValue { location: location.to_string(), what, reason };
    let head = client
        .query_opt(
            "SELECT r.job_id, r.job_name, r.testcase, r.job_yaml, v.rev_key, v.kind, v.describe, v.subject, \
             m.hostname, m.cpu_model, m.nr_cpu, m.memory_kib, m.kernel, r.started_at, r.ended_at, r.status, \
             r.failure_reason, r.exit_code, r.stderr, r.scratch_path, r.scratch_fs_type, r.scratch_fs_source, \
             m.sockets \
             FROM runs r JOIN revisions v ON v.id = r.revision_id JOIN machines m ON m.id = r.machine_id \
             WHERE r.id = $1",
            &[&id.0],
        )
        .map_err(fail)?
        .ok_or_else(|| StoreError::NotFound { location: location.to_string(), what: format!("run {id}") })?;
    let (hostname, cpu_model, kernel) = (from_db(head.get(8)), from_db(head.get(9)), from_db(head.get(12)));
    let columns = (hostname, cpu_model, head.get(10), head.get(11), kernel, head.get(22));
    let machine = crate::record::machine_from_columns(location, id, columns)?;
    let status: String = head.get(15);
    let outcome = match failure_reason_of(&status, head.get(16)) {
        None => RunOutcome::Ok,
        Some(reason) => RunOutcome::Failed { reason },
    };

    let params: Vec<(String, String)> = client
        .query("SELECT name, value FROM run_params WHERE run_id = $1 ORDER BY seq", &[&id.0])
        .map_err(fail)?
        .iter()
        .map(|row| (from_db(row.get(0)), from_db(row.get(1))))
        .collect();

    let mut pairs = Vec::new();
    if let Some(row) = client
        .query_opt("SELECT metric_ids, metric_values FROM run_metric_packs WHERE run_id = $1", &[&id.0])
        .map_err(fail)?
    {
        let ids: &[u8] = row.try_get(0).map_err(fail)?;
        let values: &[u8] = row.try_get(1).map_err(fail)?;
        unpack_into(ids, values, &mut pairs).map_err(|reason| damaged(location, id.0, reason))?;
    }
    let ids: Vec<i64> = pairs.iter().map(|(metric, _)| *metric).collect();
    let names = metric_names_of(client, location, &ids)?;
    let metrics = run_metrics(pairs, names);

    let monitor_rows = client
        .query("SELECT seq, monitor, times FROM run_monitors WHERE run_id = $1 ORDER BY seq", &[&id.0])
        .map_err(fail)?;
    let series_rows = client
        .query(
            "SELECT monitor_seq, name, samples FROM run_monitor_series WHERE run_id = $1 ORDER BY monitor_seq, name",
            &[&id.0],
        )
        .map_err(fail)?;
    let mut monitors = Vec::with_capacity(monitor_rows.len());
    for row in &monitor_rows {
        let seq: i64 = row.get(0);
        let monitor = from_db(row.get(1));
        let times_bytes: Vec<u8> = row.get(2);
        let times = decode_samples(&times_bytes)
            .ok_or_else(|| bad(format!("the sample times of monitor {monitor} of run {id}"), "truncated".into()))?;
        let mut series = BTreeMap::new();
        for series_row in series_rows.iter().filter(|r| r.get::<_, i64>(0) == seq) {
            let name = from_db(series_row.get(1));
            let bytes: Vec<u8> = series_row.get(2);
            let samples = decode_samples(&bytes)
                .ok_or_else(|| bad(format!("series {name} of monitor {monitor} of run {id}"), "truncated".into()))?;
            series.insert(name, samples);
        }
        monitors.push(MonitorSeries { monitor, times, series });
    }

    let raw_outputs: Vec<RawOutput> = client
        .query("SELECT name, content FROM run_raw_outputs WHERE run_id = $1 ORDER BY seq", &[&id.0])
        .map_err(fail)?
        .iter()
        .map(|row| RawOutput { name: from_db(row.get(0)), content: row.get(1) })
        .collect();

    Ok(RunRecord {
        job_id: from_db(head.get(0)),
        job_name: from_db(head.get(1)),
        testcase: from_db(head.get(2)),
        params,
        job_yaml: from_db(head.get(3)),
        revision: revision_from_columns(head.get(5), head.get(4), head.get(6), head.get(7)),
        machine,
        started_at: head.get(13),
        ended_at: head.get(14),
        outcome,
        exit_code: convert_exit_code(location, id.0, head.get(17))?,
        metrics,
        monitors,
        raw_outputs,
        stderr: from_db(head.get(18)),
        scratch: scratch_of_row(&head, 19),
    })
}

fn summary_from_row(location: &str, row: &Row) -> Result<RunSummary, StoreError> {
    let id: i64 = row.get(0);
    let status: String = row.get(11);
    let metric_count: i64 = row.get(14);
    let kind: String = row.get(15);
    Ok(RunSummary {
        id: RunId(id),
        job_id: from_db(row.get(1)),
        job_name: from_db(row.get(2)),
        testcase: from_db(row.get(3)),
        revision: revision_from_columns(row.get(5), row.get(4), row.get(6), row.get(7)),
        hostname: from_db(row.get(8)),
        started_at: row.get(9),
        ended_at: row.get(10),
        failure_reason: failure_reason_of(&status, row.get(12)),
        exit_code: convert_exit_code(location, id, row.get(13))?,
        metric_count: metric_count.max(0) as u64,
        kind: convert_run_kind(location, id, &kind)?,
        build: Build {
            rootfs: row.get::<_, Option<String>>(16).map(from_db).unwrap_or_default(),
            kconfig: row.get::<_, Option<String>>(17).map(from_db).unwrap_or_default(),
            compiler: row.get::<_, Option<String>>(18).map(from_db).unwrap_or_default(),
        },
        scratch: scratch_of_row(row, 19),
    })
}

/// The scratch filesystem recorded in the three columns of `row` from `first` on ([`crate::record::scratch_columns`]).
fn scratch_of_row(row: &Row, first: usize) -> Option<ScratchFilesystem> {
    let column = |index: usize| row.get::<_, Option<String>>(index).map(from_db);
    crate::record::scratch_from_columns(column(first), column(first + 1), column(first + 2))
}

fn session_from_row(row: &Row) -> BisectSession {
    let optional = |index: usize| row.get::<_, Option<String>>(index).map(from_db);
    BisectSession {
        id: SessionId(row.get(0)),
        repo: from_db(row.get(1)),
        good: from_db(row.get(2)),
        bad: from_db(row.get(3)),
        job_id: optional(4),
        metric: optional(5),
        config_json: from_db(row.get(6)),
        created_at: row.get(7),
        status: from_db(row.get(8)),
        result_json: optional(9),
        updated_at: row.get(10),
    }
}

fn revision_from_columns(kind: String, key: String, describe: Option<String>, subject: Option<String>) -> Revision {
    if kind == "label" {
        Revision::Label { name: from_db(key) }
    } else {
        Revision::Commit { sha: from_db(key), describe: describe.map(from_db), subject: subject.map(from_db) }
    }
}

fn failure_reason_of(status: &str, reason: Option<String>) -> Option<String> {
    (status != "ok").then(|| reason.map(from_db).unwrap_or_default())
}



/// The escape character of stored text: a Unicode noncharacter, which real text does not contain.
const ESCAPE: char = '\u{FFFE}';

/// Text as stored: NUL becomes `ESCAPE` `0`, `ESCAPE` is doubled; anything else is unchanged.
fn to_db(text: &str) -> Cow<'_, str> {
    if !text.contains(['\0', ESCAPE]) {
        return Cow::Borrowed(text);
    }
    let mut stored = String::with_capacity(text.len() + 8);
    for character in text.chars() {
        match character {
            '\0' => {
                stored.push(ESCAPE);
                stored.push('0');
            }
            ESCAPE => {
                stored.push(ESCAPE);
                stored.push(ESCAPE);
            }
            other => stored.push(other),
        }
    }
    Cow::Owned(stored)
}

/// The inverse of [`to_db`]. A lone escape (written by another tool) is kept as it is.
fn from_db(stored: String) -> String {
    if !stored.contains(ESCAPE) {
        return stored;
    }
    let mut text = String::with_capacity(stored.len());
    let mut characters = stored.chars().peekable();
    while let Some(character) = characters.next() {
        if character == ESCAPE {
            match characters.peek() {
                Some('0') => {
                    characters.next();
                    text.push('\0');
                    continue;
                }
                Some(&ESCAPE) => {
                    characters.next();
                }
                _ => {}
            }
        }
        text.push(character);
    }
    text
}

/// The server and database for messages, without the password.
fn describe_location(config: &Config) -> String {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(name)) => name.clone(),
        Some(Host::Unix(path)) => path.display().to_string(),
        None => "localhost".to_string(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().map(|u| format!("{u}@")).unwrap_or_default();
    // A URL without a database connects to the one named as its user, as libpq does; the location names it, so that
    // it does not end in a bare `/` and two spellings of one store read alike.
    let database = config.get_dbname().or(config.get_user()).unwrap_or_default();
    // A store may live in a schema of its own (the URL's `options=-c search_path=...`), so two stores can share one
    // database; the location names the schema too, or two stores would read as one: in the reproduce lines of a
    // mail, and in the tag of a bisect session's lock, which two stores' sessions of the same id then shared.
    let schema = config.get_options().and_then(search_path_of).map(|path| {
        let encoded: String = format!("-csearch_path={path}")
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        format!("?options={encoded}")
    });
    format!("postgresql://{user}{host}:{port}/{database}{}", schema.unwrap_or_default())
}

/// The `search_path` a URL's `options` set (`-c search_path=s`, `-csearch_path=s`, `--search_path=s`; the last one
/// given wins, as on the server), if any.
fn search_path_of(options: &str) -> Option<String> {
    let mut words = options.split_whitespace();
    let mut found = None;
    while let Some(word) = words.next() {
        let setting = match word {
            "-c" => words.next(),
            _ => word.strip_prefix("--").or_else(|| word.strip_prefix("-c")),
        };
        if let Some((name, value)) = setting.and_then(|s| s.split_once('=')) {
            if name.replace('-', "_") == "search_path" {
                found = Some(value.to_string());
            }
        }
    }
    found
}

/// The host, port, database and user a password file's lines are matched against, with libpq's defaults: a Unix
/// socket matches as `localhost`, the port defaults to 5432, the database to the user, the user to the login name.
struct PasswordTarget {
    host: String,
    port: u16,
    database: String,
    user: String,
}

impl PasswordTarget {
    fn as_target(&self) -> pgpass::Target<'_> {
        pgpass::Target { host: &self.host, port: self.port, database: &self.database, user: &self.user }
    }
}

fn password_target(config: &Config) -> PasswordTarget {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(name)) => name.clone(),
        Some(Host::Unix(_)) | None => "localhost".to_string(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config
        .get_user()
        .map(str::to_string)
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_default();
    let database = config.get_dbname().map(str::to_string).unwrap_or_else(|| user.clone());
    PasswordTarget { host, port, database, user }
}

/// Whether the client gave up because the server asked for a password and none was given; the client says so only
/// in its message ("invalid configuration: password missing"), with no error code.
fn is_password_missing(error: &postgres::Error) -> bool {
    error_text(error).contains("password missing")
}

/// The advice for a server that wants a password none of the three places gave.
fn missing_password_hint(file: Option<&Path>, note: Option<&str>) -> String {
    let file = match (file, note) {
        (Some(file), Some(note)) => format!("a line host:port:database:user:password in {} ({note})", file.display()),
        (Some(file), None) => format!("a line host:port:database:user:password in {}", file.display()),
        (None, _) => "a line host:port:database:user:password in the password file (PGPASSFILE or ~/.pgpass; HOME \
                      is not set)"
            .to_string(),
    };
    format!(
        "the server wants a password and none was found: give it in the URL (postgresql://user:password@...), in \
         PGPASSWORD, or as {file}; the commands culprit prints leave the password out on purpose"
    )
}

/// A URL that failed to parse, for messages: everything between `://` and `@` (user and password) is hidden.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(start), Some(end)) if end > start => format!("{}://***{}", &url[..start], &url[end..]),
        _ => url.to_string(),
    }
}

fn error_text(error: &postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{} ({detail})", db.message()),
            None => db.message().to_string(),
        },
        None => {
            let mut text = error.to_string();
            let mut source = std::error::Error::source(error);
            while let Some(cause) = source {
                text.push_str(": ");
                text.push_str(&cause.to_string());
                source = cause.source();
            }
            text
        }
    }
}

fn connect_hint(error: &postgres::Error) -> String {
    let code = error.code();
    if code == Some(&SqlState::INVALID_PASSWORD) || code == Some(&SqlState::INVALID_AUTHORIZATION_SPECIFICATION) {
        "check the user name and password in the URL".into()
    } else if code == Some(&SqlState::INVALID_CATALOG_NAME) {
        "create the database first (createdb), or fix its name in the URL".into()
    } else {
        "check that the server is running and reachable, and the URL's host and port; for a local test server run \
         scripts/postgres-test-server.sh"
            .into()
    }
}

fn is_retryable(error: &postgres::Error) -> bool {
    matches!(error.code(), Some(code) if *code == SqlState::T_R_SERIALIZATION_FAILURE || *code == SqlState::T_R_DEADLOCK_DETECTED)
}

/// Maps a PostgreSQL error to a store error that says what happened and what to do.
fn classify(location: &str, action: &str, error: postgres::Error) -> StoreError {
    let location = location.to_string();
    let action = action.to_string();
    let reason = error_text(&error);
    let Some(code) = error.code() else {
        return StoreError::Database { location, action, reason };
    };
    if *code == SqlState::DISK_FULL || *code == SqlState::OUT_OF_MEMORY || *code == SqlState::PROGRAM_LIMIT_EXCEEDED {
        StoreError::Full { location, action }
    } else if *code == SqlState::READ_ONLY_SQL_TRANSACTION {
        // A read-only session (a hot standby, a role or URL with default_transaction_read_only) is not a file's
        // permissions, which SQLite's words would send the user to.
        StoreError::ReadOnly {
            location,
            action,
            what_to_do: "Connect to the primary server as a role that may write the store's schema, without \
                         default_transaction_read_only in the URL's options",
        }
    } else if *code == SqlState::T_R_SERIALIZATION_FAILURE
        || *code == SqlState::T_R_DEADLOCK_DETECTED
        || *code == SqlState::LOCK_NOT_AVAILABLE
    {
        StoreError::Busy { location, action }
    } else if *code == SqlState::DATA_CORRUPTED || *code == SqlState::INDEX_CORRUPTED {
        StoreError::Corrupt { location, action, reason }
    } else {
        StoreError::Database { location, action, reason }
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_escaping_round_trips_and_leaves_normal_text_alone() {
        let cases = ["", "plain", "nul\0inside", "\0", "\u{FFFE}", "\u{FFFE}0", "a\u{FFFE}\0\u{FFFE}\u{FFFE}0b", "ünï\0"];
        for text in cases {
            let stored = to_db(text);
            assert!(!stored.contains('\0'), "{text:?} stored as {stored:?}");
            assert_eq!(from_db(stored.into_owned()), text, "{text:?}");
        }
        assert!(matches!(to_db("fio.write_iops"), Cow::Borrowed(_)));
        assert_eq!(from_db("lone \u{FFFE} escape".to_string()), "lone \u{FFFE} escape");
    }

    #[test]
    fn urls_are_recognised_and_passwords_never_shown() {
        for (location, expected) in [
            ("postgres://u:p@h/db", true),
            ("postgresql://h:5433/db", true),
            ("culprit.db", false),
            ("/var/lib/postgres://x", false),
            ("", false),
        ] {
            assert_eq!(is_postgres_url(location), expected, "{location}");
        }
        let config = Config::from_str("postgresql://culprit:secret@127.0.0.1:5433/culprit").unwrap_or_default();
        assert_eq!(describe_location(&config), "postgresql://culprit@127.0.0.1:5433/culprit");
        // Without a database the server is asked for the user's, and the location says so.
        let config = Config::from_str("postgresql://farm@db.lab:5434").unwrap_or_default();
        assert_eq!(describe_location(&config), "postgresql://farm@db.lab:5434/farm");
        assert_eq!(redact("postgresql://culprit:secret@host:x/db"), "postgresql://***@host:x/db");
        // A store in a schema of its own is named with it, in a form that opens it again; other options are not.
        for (options, expected) in [
            ("-c%20search_path%3Dteam_a", "?options=-csearch_path%3Dteam_a"),
            ("-csearch_path%3Dteam_a%20-c%20default_transaction_read_only%3Don", "?options=-csearch_path%3Dteam_a"),
            ("--search-path%3Dx%20-c%20search_path%3Dy", "?options=-csearch_path%3Dy"),
            ("-c%20work_mem%3D8MB", ""),
        ] {
            let url = format!("postgresql://culprit:secret@127.0.0.1:5433/culprit?options={options}");
            let config = Config::from_str(&url).unwrap_or_default();
            assert_eq!(describe_location(&config), format!("postgresql://culprit@127.0.0.1:5433/culprit{expected}"));
            let reopened = Config::from_str(&describe_location(&config)).unwrap_or_default();
            assert_eq!(reopened.get_options().and_then(search_path_of), config.get_options().and_then(search_path_of));
        }
    }
}
