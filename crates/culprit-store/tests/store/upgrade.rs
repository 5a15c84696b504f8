//! Upgrading a store written by the schema-version-1 code (`tests/data/schema_v1/store.sqlite3`, with its
//! `expected.txt` read back by that code) to the current schema: every run, listing and sample reads back exactly
//! as before, every run is a plain one, and the upgraded store keeps working; and a store of schema version 4 gaining
//! run kinds.

// Only its record comparison is used here.
#[allow(dead_code)]
use crate::{contract, v1_fixture};

use crate::common::*;
use culprit_store::{migrations, RunFilter, RunId, RunKind, SaveOptions, SqliteStore, Store};
use std::path::{Path, PathBuf};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/schema_v1")
}

fn count(connection: &rusqlite::Connection, table: &str) -> i64 {
    connection.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0)).unwrap_or(-1)
}

fn has_table(connection: &rusqlite::Connection, table: &str) -> bool {
    connection
        .query_row("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)", [table], |r| r.get(0))
        .unwrap_or(false)
}

#[test]
fn a_version_1_store_upgrades_in_place_and_reads_back_identically() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("culprit.db");
    std::fs::copy(fixture_dir().join("store.sqlite3"), &path).unwrap();
    let expected = std::fs::read_to_string(fixture_dir().join("expected.txt")).unwrap();
    {
        // What the fixture really is: version 1, metrics as rows.
        let connection = rusqlite::Connection::open(&path).unwrap();
        let version: i64 = connection.query_row("SELECT MAX(version) FROM schema_version", [], |r| r.get(0)).unwrap();
        assert_eq!(version, 1);
        let metrics: usize = v1_fixture::runs().iter().map(|(record, _)| record.metrics.len()).sum();
        assert_eq!(count(&connection, "run_metrics"), metrics as i64);
        assert!(!has_table(&connection, "run_metric_packs"));
    }

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), migrations::latest_version());
    assert_eq!(v1_fixture::dump(&store), expected);
    v1_fixture::assert_every_run_plain(&store);
    drop(store);

    let connection = rusqlite::Connection::open(&path).unwrap();
    assert!(!has_table(&connection, "run_metrics"));
    // Every run with metrics got one pack; the failed run (no metrics) got none.
    assert_eq!(count(&connection, "run_metric_packs"), v1_fixture::runs().len() as i64 - 1);
    let names_before = count(&connection, "metric_names");

    // Reopening does not migrate again, and the upgraded store takes new runs with the names it already has.
    let mut store = SqliteStore::open(&path).unwrap();
    assert_eq!(v1_fixture::dump(&store), expected);
    let runs = v1_fixture::runs();
    for (index, (record, _)) in runs.iter().enumerate() {
        // The fixture holds what the builders make (SQLite's version 1 stored -0.0 as 0, which compares equal), but
        // for the sockets, which version 1 did not count: its runs read back as not counted.
        let mut stored_then = record.clone();
        stored_then.machine.sockets = 0;
        contract::assert_same_record(&store.run(RunId(index as i64 + 1)).unwrap(), &stored_then);
    }
    let again = store.save_run(&runs[2].0).unwrap();
    contract::assert_same_record(&store.run(again).unwrap(), &runs[2].0);
    // The machine row the old runs share took the new run's count.
    assert_eq!(store.run(RunId(3)).unwrap().machine.sockets, runs[2].0.machine.sockets);
    assert_eq!(count(&connection, "metric_names"), names_before);
}

#[test]
fn new_runs_keep_negative_zero_and_nan_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(dir.path().join("culprit.db")).unwrap();
    let record = run("j", commit(v1_fixture::SHA_BASE), "h", &[("zero", -0.0), ("nan", f64::NAN), ("inf", f64::INFINITY)]);
    let id = store.save_run(&record).unwrap();
    let metrics = store.run(id).unwrap().metrics;
    assert!(metrics["zero"] == 0.0 && metrics["zero"].is_sign_negative());
    assert!(metrics["nan"].is_nan());
    assert_eq!(metrics["inf"], f64::INFINITY);
}

/// A SQLite store at `path` as the code of schema `version` left it: the tables of the first `version` migrations,
/// and one machine, revision and successful run (id 1) in them.
fn store_at_version(path: &std::path::Path, version: usize) -> rusqlite::Connection {
    let connection = rusqlite::Connection::open(path).unwrap();
    let render = |sql: &str| migrations::render(sql, migrations::Dialect::Sqlite);
    connection.execute_batch(&render(migrations::SCHEMA_VERSION_TABLE)).unwrap();
    for (index, sql) in migrations::MIGRATIONS[..version].iter().enumerate() {
        connection.execute_batch(&render(sql)).unwrap();
        connection.execute("INSERT INTO schema_version VALUES (?1, 0)", [index as i64 + 1]).unwrap();
    }
    connection
        .execute_batch(&format!(
            "INSERT INTO machines VALUES (1, 'h', 'cpu', 2, 1024, 'k');
             INSERT INTO revisions VALUES (1, '{}', 'commit', NULL, 'subject');
             INSERT INTO runs (id, job_id, job_name, testcase, job_yaml, revision_id, machine_id, started_at,
                 ended_at, status, failure_reason, exit_code, stderr, import_key)
                 VALUES (1, 'id-j', 'j', 't', '', 1, 1, 1.0, 2.0, 'ok', NULL, 0, '', NULL);",
            v1_fixture::SHA_BASE
        ))
        .unwrap();
    connection
}

/// A store at schema version 4, the last before run kinds, as that code left it (its tables made by the first four
/// migrations, a bisect session with a linked run): opening it adds the kind, with the stored run plain, and the
/// upgraded store keeps profiling runs apart. The column refuses a kind no build knows. Opening it applies the later
/// migrations too (version 6's `follow_sessions`, empty).
#[test]
fn a_version_4_store_gains_run_kinds_with_every_stored_run_plain() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("culprit.db");
    {
        let connection = store_at_version(&path, 4);
        connection
            .execute_batch(
                "INSERT INTO bisect_sessions VALUES (1, '/r', 'a', 'b', 'id-j', 'm', '{}', 0.0, 'found', NULL, NULL);
                 INSERT INTO bisect_session_runs (session_id, run_id) VALUES (1, 1);",
            )
            .unwrap();
    }
    let mut store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), migrations::latest_version());
    let listed = store.list_runs(&Default::default()).unwrap();
    assert_eq!(listed.iter().map(|r| (r.id, r.kind)).collect::<Vec<_>>(), vec![(RunId(1), RunKind::Plain)]);
    let session = culprit_store::SessionId(1);
    let options = SaveOptions { bisect_session: Some(session), kind: RunKind::Profiling, ..Default::default() };
    let profiled = store.save_run_with(&run("j", commit(v1_fixture::SHA_BASE), "h", &[("m", 1.0)]), &options).unwrap();
    assert_eq!(store.bisect_session_runs(session).unwrap(), vec![RunId(1), profiled.run_id()]);
    let filter = RunFilter { bisect_session: Some(session), kind: Some(RunKind::Plain), ..Default::default() };
    assert_eq!(store.list_runs(&filter).unwrap().iter().map(|r| r.id).collect::<Vec<_>>(), vec![RunId(1)]);
    // Version 6: no session of the old store counts as one `track --follow` started (none is mailed again), and
    // the new table takes them.
    assert!(store.follow_sessions("h").unwrap().is_empty());
    store.record_follow_session(session, "h").unwrap();
    assert_eq!(store.follow_sessions("h").unwrap().len(), 1);
    drop(store);
    let connection = rusqlite::Connection::open(&path).unwrap();
    assert!(connection.execute("UPDATE runs SET kind = 'perf' WHERE id = 1", []).is_err());
}

/// A store at schema version 6, the last before runs recorded their scratch filesystem: opening it adds the three
/// columns, its run reads as one that recorded none (not as an empty filesystem), and a new run's is kept.
#[test]
fn a_version_6_store_gains_scratch_filesystems_with_every_stored_run_unrecorded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("culprit.db");
    {
        store_at_version(&path, 6);
    }
    let mut store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), migrations::latest_version());
    assert_eq!(store.run(RunId(1)).unwrap().scratch, None);
    assert_eq!(store.list_runs(&Default::default()).unwrap()[0].scratch, None);
    let mut new = run("j", commit(v1_fixture::SHA_BASE), "h", &[("m", 1.0)]);
    new.scratch = Some(culprit_core::model::ScratchFilesystem {
        path: "/dev/shm/x".into(),
        fs_type: "tmpfs".into(),
        source: "tmpfs".into(),
    });
    let id = store.save_run(&new).unwrap();
    assert_eq!(store.run(id).unwrap().scratch, new.scratch);
}

/// A store at schema version 8, the last before try-fixes kept their build command and their patch's text: opening
/// it keeps the recorded try-fix, which reads as one that kept neither (its report then names the patch by its path,
/// as before), and a new try-fix keeps both.
#[test]
fn a_version_8_try_fix_reads_back_without_its_build_or_patch_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("culprit.db");
    {
        let connection = store_at_version(&path, 8);
        connection
            .execute_batch(&format!(
                "INSERT INTO try_fixes VALUES
                     (1, '/r', '{}', 'b', 'b+fix-1a2b', '/tmp/fix.patch', 'id-j', 'h', 1.0, 2.0);",
                v1_fixture::SHA_BASE
            ))
            .unwrap();
    }
    let mut store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), migrations::latest_version());
    let old = store.try_fixes().unwrap();
    assert_eq!(old.len(), 1);
    assert_eq!((old[0].patch.as_str(), &old[0].patch_text, &old[0].build), ("/tmp/fix.patch", &None, &None));
    let new = culprit_store::NewTryFix {
        patch_text: Some("+fast();\n".into()),
        build: Some("make".into()),
        repo: old[0].repo.clone(),
        base: old[0].base.clone(),
        bad: old[0].bad.clone(),
        fix: old[0].fix.clone(),
        patch: old[0].patch.clone(),
        job_id: old[0].job_id.clone(),
        machine: old[0].machine.clone(),
        created_at: 3.0,
    };
    store.create_try_fix(&new).unwrap();
    let both = store.try_fixes().unwrap();
    assert_eq!((both[1].patch_text.as_deref(), both[1].build.as_deref()), (Some("+fast();\n"), Some("make")));
}
