//! The embedded schema migrations, written once in a portable SQL dialect and rendered for SQLite or PostgreSQL.
//!
//! Migrations are applied in order, each exactly once, and the `schema_version` table records which ones a
//! database has. A migration is never edited after release: a schema change is a new entry at the end of
//! [`MIGRATIONS`]. The SQL avoids engine-specific syntax except through the placeholders below, so the same list
//! serves both back ends:
//!
//! - `{id}`: an auto-assigned 64-bit primary key,
//! - `{blob}`: a byte string (`BLOB` in SQLite, `BYTEA` in PostgreSQL),
//! - `{int}`: a 64-bit integer,
//! - `{clustered}`: after a table whose rows should be stored in primary-key order (SQLite's `WITHOUT ROWID`,
//!   nothing in PostgreSQL). Reading a run's 20,000 metrics then scans one b-tree range instead of looking each
//!   row up through an index.
//!
//! Floating-point columns are `DOUBLE PRECISION`, which both engines understand. In version 1's `run_metrics` a
//! NULL value stood for NaN, because SQLite cannot store NaN in a REAL column (it turns it into NULL silently),
//! and SQLite stored -0.0 as 0. Since version 2 metric values live in packed blobs (`packed.rs`), which keep
//! every double exactly.

/// The SQL dialect to render the portable migrations into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// The migrations, oldest first. Version N is `MIGRATIONS[N - 1]`.
pub const MIGRATIONS: &[&str] = &[
    // Version 1: runs with their metrics, monitor series, raw outputs and params; machines and revisions shared
    // between runs; bisect sessions and the runs they spent, in insertion order.
    r#"
CREATE TABLE machines (
    id {id},
    hostname TEXT NOT NULL,
    cpu_model TEXT NOT NULL,
    nr_cpu {int} NOT NULL,
    memory_kib {int} NOT NULL,
    kernel TEXT NOT NULL,
    UNIQUE (hostname, cpu_model, nr_cpu, memory_kib, kernel)
);

CREATE TABLE revisions (
    id {id},
    rev_key TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL CHECK (kind IN ('commit', 'label')),
    describe TEXT,
    subject TEXT
);

CREATE TABLE bisect_sessions (
    id {id},
    repo TEXT NOT NULL,
    good TEXT NOT NULL,
    bad TEXT NOT NULL,
    job_id TEXT,
    metric TEXT,
    config_json TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    status TEXT NOT NULL,
    result_json TEXT,
    updated_at DOUBLE PRECISION
);

CREATE TABLE runs (
    id {id},
    job_id TEXT NOT NULL,
    job_name TEXT NOT NULL,
    testcase TEXT NOT NULL,
    job_yaml TEXT NOT NULL,
    revision_id {int} NOT NULL REFERENCES revisions (id),
    machine_id {int} NOT NULL REFERENCES machines (id),
    started_at DOUBLE PRECISION NOT NULL,
    ended_at DOUBLE PRECISION NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    failure_reason TEXT,
    exit_code {int},
    stderr TEXT NOT NULL,
    import_key TEXT,
    UNIQUE (job_id, revision_id, import_key)
);
CREATE INDEX runs_by_revision ON runs (revision_id, job_id);
CREATE INDEX runs_by_job ON runs (job_id);

CREATE TABLE run_params (
    run_id {int} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq {int} NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);

CREATE TABLE metric_names (
    id {id},
    name TEXT NOT NULL UNIQUE
);

CREATE TABLE run_metrics (
    run_id {int} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    metric_id {int} NOT NULL REFERENCES metric_names (id),
    value DOUBLE PRECISION,
    PRIMARY KEY (run_id, metric_id)
){clustered};

CREATE TABLE run_monitors (
    run_id {int} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq {int} NOT NULL,
    monitor TEXT NOT NULL,
    times {blob} NOT NULL,
    PRIMARY KEY (run_id, seq)
);

CREATE TABLE run_monitor_series (
    run_id {int} NOT NULL,
    monitor_seq {int} NOT NULL,
    name TEXT NOT NULL,
    samples {blob} NOT NULL,
    PRIMARY KEY (run_id, monitor_seq, name),
    FOREIGN KEY (run_id, monitor_seq) REFERENCES run_monitors (run_id, seq) ON DELETE CASCADE
);

CREATE TABLE run_raw_outputs (
    run_id {int} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq {int} NOT NULL,
    name TEXT NOT NULL,
    content {blob} NOT NULL,
    PRIMARY KEY (run_id, seq)
);

CREATE TABLE bisect_session_runs (
    id {id},
    session_id {int} NOT NULL REFERENCES bisect_sessions (id) ON DELETE CASCADE,
    run_id {int} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    UNIQUE (session_id, run_id)
);
"#,
    // Version 2: each run's metrics as one packed row (see `packed.rs`). Right after this SQL, the back end packs
    // the metrics of every run stored under version 1 (see [`PACK_METRICS_VERSION`]).
    r#"
CREATE TABLE run_metric_packs (
    run_id {int} NOT NULL PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    metric_count {int} NOT NULL,
    metric_ids {blob} NOT NULL,
    metric_values {blob} NOT NULL
);
"#,
    // Version 3: the normalized metric rows, now packed, are no longer read or written (crates/culprit-store's
    // README gives the measurements behind this).
    r#"
DROP TABLE run_metrics;
"#,
    // Version 4: each bisect session's candidate commits, so that a session replays from the store alone. Parents
    // are positions in the same range, space-separated. Sessions stored before have no rows here.
    r#"
CREATE TABLE bisect_range_commits (
    session_id {int} NOT NULL REFERENCES bisect_sessions (id) ON DELETE CASCADE,
    position {int} NOT NULL,
    sha TEXT NOT NULL,
    subject TEXT NOT NULL,
    parents TEXT NOT NULL,
    PRIMARY KEY (session_id, position)
){clustered};
"#,
    // Version 5: how each run was taken (`RunKind`): a profiling run had perf attached, so its benchmark numbers
    // are not comparable with a plain run's. Every run stored before was taken as the job said: plain.
    r#"
ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'plain' CHECK (kind IN ('plain', 'profiling'));
"#,
    // Version 6: the bisect sessions `track --follow` started on each machine, and when their mails were written.
    // The robot mails only its own sessions, each once; the record lives in the store, not in the reports'
    // directory, which a cron job empties as it sends the mails.
    r#"
CREATE TABLE follow_sessions (
    session_id {int} NOT NULL REFERENCES bisect_sessions (id) ON DELETE CASCADE,
    machine TEXT NOT NULL,
    reported_at DOUBLE PRECISION,
    PRIMARY KEY (session_id, machine)
);
"#,
    // Version 7: the filesystem each run's benchmark files were on (its scratch directory, and the type and source
    // of the mount holding it), which an I/O benchmark measures as much as the kernel. Runs stored before, and
    // imported runs whose job.yaml names no filesystem, have NULL: not recorded.
    r#"
ALTER TABLE runs ADD COLUMN scratch_path TEXT;
ALTER TABLE runs ADD COLUMN scratch_fs_type TEXT;
ALTER TABLE runs ADD COLUMN scratch_fs_source TEXT;
"#,
    // Version 8: each `culprit try-fix`, and the runs it took of base, bad and the fix. `report --compare --fix`
    // reads exactly the runs of one try-fix; found by their order among the stored runs, a second try-fix of the same
    // commits and patch mixed its runs into the first one's table. `finished_at` stays NULL for one that was
    // interrupted or failed before its verdict.
    r#"
CREATE TABLE try_fixes (
    id {id},
    repo TEXT NOT NULL,
    base TEXT NOT NULL,
    bad TEXT NOT NULL,
    fix TEXT NOT NULL,
    patch TEXT NOT NULL,
    job_id TEXT NOT NULL,
    machine TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    finished_at DOUBLE PRECISION
);

CREATE TABLE try_fix_runs (
    try_fix_id {int} NOT NULL REFERENCES try_fixes (id) ON DELETE CASCADE,
    run_id {int} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    side TEXT NOT NULL CHECK (side IN ('base', 'bad', 'fix')),
    PRIMARY KEY (try_fix_id, run_id)
);
"#,
    // Version 9: what a try-fix built its trees with, and the patch's text as it applied it. The mail of `report
    // --compare --fix` is read on another machine, where the absolute path of the patch try-fix was given names
    // nothing: it carries the text (or writes it beside the report), and says how the trees were built. NULL for a
    // try-fix recorded before, and for a patch that is not UTF-8 text.
    r#"
ALTER TABLE try_fixes ADD COLUMN build TEXT;
ALTER TABLE try_fixes ADD COLUMN patch_text TEXT;
"#,
    // Version 10: each machine's CPU sockets, which the robot's machine line prints ("2 threads 1 socket"): NULL
    // where not counted. The count is no part of the machine's identity (the unique facts above, which SQLite cannot
    // change without copying the table): a row stored without it gets the first count a run of it gives.
    r#"
ALTER TABLE machines ADD COLUMN sockets {int};
"#,
];

/// The version whose SQL creates `run_metric_packs`. Packing is binary (varints and little-endian doubles), which
/// portable SQL cannot write, so right after applying this version's SQL, in the same transaction, each back end
/// fills `run_metric_packs` from `run_metrics` in Rust. A run without metric rows gets no pack, as a new run
/// without metrics does; a NULL value (version 1's NaN) becomes NaN.
pub const PACK_METRICS_VERSION: i64 = 2;

/// The statement that creates the version table; it exists before any migration runs.
pub const SCHEMA_VERSION_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS schema_version (version {int} NOT NULL PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)";

/// The newest schema version this build knows.
pub fn latest_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// Renders portable migration SQL for one engine by replacing the type placeholders.
pub fn render(sql: &str, dialect: Dialect) -> String {
    let (id, blob, int, clustered) = match dialect {
        Dialect::Sqlite => ("INTEGER PRIMARY KEY", "BLOB", "INTEGER", " WITHOUT ROWID"),
        Dialect::Postgres => ("BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", "BYTEA", "BIGINT", ""),
    };
    sql.replace("{id}", id).replace("{blob}", blob).replace("{int}", int).replace("{clustered}", clustered)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rendering_leaves_no_placeholder_in_either_dialect() {
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            for sql in MIGRATIONS.iter().chain(std::iter::once(&SCHEMA_VERSION_TABLE)) {
                let rendered = render(sql, dialect);
                assert!(!rendered.contains('{') && !rendered.contains('}'), "{dialect:?}: {rendered}");
            }
        }
        assert!(render(MIGRATIONS[0], Dialect::Postgres).contains("BYTEA"));
        assert!(render(MIGRATIONS[0], Dialect::Sqlite).contains("INTEGER PRIMARY KEY"));
    }
}
