//! Integration tests of what only the SQLite store has: migrations of the file, crash safety, read-only and full
//! files, the default path. The behaviours both stores share (round trips, filters, samples, revision resolution,
//! sessions) run against SQLite and PostgreSQL from `tests/common/contract.rs`, driven by `tests/postgres.rs`.

use crate::common::*;
use culprit_core::model::RunRecord;
use culprit_store::migrations;
use culprit_store::{
    NewBisectSession, OpenOptions, RunFilter, SqliteStore, Store, StoreError,
};
use std::path::Path;

const SHA_A: &str = "8cc621d2f45ddd3dc664024a647ee7adf48d79a5";
const SHA_C: &str = "1234567890abcdef1234567890abcdef12345678";

fn open(dir: &Path) -> SqliteStore {
    match SqliteStore::open(dir.join("culprit.db")) {
        Ok(store) => store,
        Err(e) => panic!("open failed: {e}"),
    }
}

fn raw(dir: &Path) -> rusqlite::Connection {
    match rusqlite::Connection::open(dir.join("culprit.db")) {
        Ok(c) => c,
        Err(e) => panic!("raw open failed: {e}"),
    }
}

fn count(connection: &rusqlite::Connection, table: &str) -> i64 {
    connection.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0)).unwrap_or(-1)
}

/// Compares records where NaN must come back as NaN (PartialEq says NaN != NaN).
fn assert_same_record(actual: &RunRecord, expected: &RunRecord) {
    let strip = |r: &RunRecord| {
        let mut r = r.clone();
        r.metrics.retain(|_, v| !v.is_nan());
        r
    };
    assert_eq!(strip(actual), strip(expected));
    for (name, value) in &expected.metrics {
        if value.is_nan() {
            assert!(actual.metrics.get(name).is_some_and(|v| v.is_nan()), "{name} should be NaN");
        }
    }
}

#[test]
fn migrations_apply_once_and_reopen_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("a/b/c/culprit.db");
    let mut store = SqliteStore::open(&nested).unwrap();
    assert_eq!(store.schema_version().unwrap(), migrations::latest_version());
    store.save_run(&run("j", commit(SHA_A), "h", &[("m", 1.0)])).unwrap();
    drop(store);
    for _ in 0..3 {
        let store = SqliteStore::open(&nested).unwrap();
        assert_eq!(store.schema_version().unwrap(), migrations::latest_version());
        assert_eq!(store.list_runs(&RunFilter::default()).unwrap().len(), 1);
    }
    let connection = rusqlite::Connection::open(&nested).unwrap();
    assert_eq!(count(&connection, "schema_version"), migrations::latest_version());
    let journal: String = connection.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(journal, "wal");
}

#[test]
fn a_newer_schema_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    drop(open(dir.path()));
    raw(dir.path()).execute("INSERT INTO schema_version (version, applied_at) VALUES (999, 0)", []).unwrap();
    match SqliteStore::open(dir.path().join("culprit.db")) {
        Err(error @ StoreError::SchemaTooNew { found: 999, .. }) => {
            assert!(error.to_string().contains("upgrade culprit"), "{error}");
        }
        Err(other) => panic!("wrong error: {other}"),
        Ok(_) => panic!("a newer schema was accepted"),
    }
}

#[test]
fn a_file_that_is_not_a_database_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("culprit.db"), vec![b'x'; 4096]).unwrap();
    match SqliteStore::open(dir.path().join("culprit.db")) {
        Err(error @ StoreError::Corrupt { .. }) => assert!(error.to_string().contains("culprit.db"), "{error}"),
        Err(other) => panic!("wrong error: {other}"),
        Ok(_) => panic!("garbage accepted as a database"),
    }
    let directory = SqliteStore::open(dir.path()).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(directory.contains("is a directory"), "{directory}");
}

#[test]
fn another_applications_database_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    {
        let foreign = raw(dir.path());
        let schema = "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL); INSERT INTO invoices VALUES (1, 9.5);";
        foreign.execute_batch(schema).unwrap();
    }
    match SqliteStore::open(dir.path().join("culprit.db")) {
        Err(error @ StoreError::NotACulpritStore { .. }) => {
            assert!(error.to_string().contains("invoices"), "the message names what the file holds: {error}")
        }
        Err(other) => panic!("wrong error: {other}"),
        Ok(_) => panic!("culprit's schema was written into another application's database"),
    }
    let tables: i64 = raw(dir.path())
        .query_row("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'", [], |r| r.get(0))
        .unwrap_or(-1);
    assert_eq!(tables, 1, "only the foreign table is there");
    // An empty file is a new store, as before.
    std::fs::write(dir.path().join("empty.db"), b"").unwrap();
    assert!(SqliteStore::open(dir.path().join("empty.db")).is_ok());
}

#[test]
fn another_applications_database_is_refused_before_anything_is_written_to_it() {
    // The refusal came after the switch to the WAL journal, which rewrote the file's header and stayed: the other
    // application's database was left in WAL mode by a mistyped --db.
    let dir = tempfile::tempdir().unwrap();
    let schema = "CREATE TABLE invoices (id INTEGER PRIMARY KEY); INSERT INTO invoices VALUES (1);";
    raw(dir.path()).execute_batch(schema).unwrap();
    let before = std::fs::read(dir.path().join("culprit.db")).unwrap();
    let refused = SqliteStore::open(dir.path().join("culprit.db"));
    assert!(matches!(refused, Err(StoreError::NotACulpritStore { .. })), "{:?}", refused.err());
    assert!(std::fs::read(dir.path().join("culprit.db")).unwrap() == before, "the refused file was changed");
    let mode: String = raw(dir.path()).query_row("PRAGMA journal_mode", [], |row| row.get(0)).unwrap();
    assert_eq!(mode, "delete");
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["culprit.db"], "no journal is left beside it");
}

#[test]
fn a_save_that_fails_midway_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    let kept = store.save_run(&run("kept", commit(SHA_C), "host-0", &[("kept.metric", 1.0)])).unwrap();
    // Make the insert of raw outputs (after the run row, params, 20,000 metrics and monitors) fail.
    raw(dir.path())
        .execute_batch(
            "CREATE TRIGGER fail_raw BEFORE INSERT ON run_raw_outputs BEGIN SELECT RAISE(ABORT, 'injected'); END;",
        )
        .unwrap();
    let mut doomed = everything_run();
    doomed.metrics.extend(profile_run(commit(SHA_A), 20_000, 3.0).metrics);
    let error = store.save_run(&doomed).unwrap_err();
    assert!(error.to_string().contains("injected"), "{error}");
    let connection = raw(dir.path());
    for (table, expected) in [
        ("runs", 1),
        ("run_metric_packs", 1),
        ("metric_names", 1),
        ("run_params", 1),
        ("run_monitors", 0),
        ("run_monitor_series", 0),
        ("run_raw_outputs", 0),
        ("machines", 1),
        ("revisions", 1),
    ] {
        assert_eq!(count(&connection, table), expected, "{table}");
    }
    // The rolled-back metric names must not linger in the store's name cache: saving the same run again
    // succeeds and every metric reads back.
    connection.execute_batch("DROP TRIGGER fail_raw;").unwrap();
    let id = store.save_run(&doomed).unwrap();
    assert_eq!(store.run(id).unwrap().metrics.len(), doomed.metrics.len());
    assert_eq!(store.run(kept).unwrap().metrics["kept.metric"], 1.0);
}

#[test]
fn a_read_only_file_can_be_read_but_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("culprit.db");
    let mut store = open(dir.path());
    let id = store.save_run(&everything_run()).unwrap();
    drop(store);
    let mut permissions = std::fs::metadata(&path).unwrap().permissions();
    permissions.set_readonly(true);
    std::fs::set_permissions(&path, permissions).unwrap();

    let mut store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.list_runs(&RunFilter::default()).unwrap().len(), 1);
    let error = store.save_run(&run("j", commit(SHA_A), "h", &[("m", 1.0)])).unwrap_err();
    assert!(matches!(error, StoreError::ReadOnly { .. }), "{error}");
    assert!(error.to_string().contains("read-only") && error.to_string().contains("culprit.db"), "{error}");
    assert_same_record(&store.run(id).unwrap(), &everything_run());
    drop(store);

    let mut explicit = SqliteStore::open_with(&path, &OpenOptions { read_only: true, ..Default::default() }).unwrap();
    let session = NewBisectSession {
        repo: "/r".into(),
        good: "a".into(),
        bad: "b".into(),
        job_id: None,
        metric: None,
        config_json: "{}".into(),
        created_at: 0.0,
        range: Vec::new(),
    };
    assert!(matches!(explicit.create_bisect_session(&session), Err(StoreError::ReadOnly { .. })));
    let missing = SqliteStore::open_with(dir.path().join("missing.db"), &OpenOptions { read_only: true, ..Default::default() });
    assert!(matches!(missing, Err(StoreError::Open { .. })));
}

#[test]
fn a_full_store_rolls_back_and_keeps_what_it_had() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("culprit.db");
    let options = OpenOptions { size_limit_bytes: Some(2 * 1024 * 1024), ..Default::default() };
    let mut store = SqliteStore::open_with(&path, &options).unwrap();
    let mut saved = Vec::new();
    let mut full_error = None;
    for seed in 0..200 {
        match store.save_run(&profile_run(commit(SHA_A), 5_000, seed as f64)) {
            Ok(id) => saved.push((id, seed)),
            Err(error) => {
                full_error = Some(error);
                break;
            }
        }
    }
    let error = full_error.expect("a 2 MiB store must fill up");
    assert!(matches!(error, StoreError::Full { .. }), "{error}");
    assert!(error.to_string().contains("rolled back"), "{error}");
    assert!(!saved.is_empty());
    drop(store);
    let store = open(dir.path());
    assert_eq!(store.list_runs(&RunFilter::default()).unwrap().len(), saved.len());
    for (id, seed) in saved {
        assert_eq!(store.run(id).unwrap(), profile_run(commit(SHA_A), 5_000, seed as f64));
    }
}

#[test]
fn the_store_is_usable_as_a_trait_object() {
    let dir = tempfile::tempdir().unwrap();
    let mut store: Box<dyn Store> = Box::new(open(dir.path()));
    let id = store.save_run(&run("j", commit(SHA_A), "h", &[("m", 1.0)])).unwrap();
    assert_eq!(store.run(id).unwrap().metrics["m"], 1.0);
    assert!(store.location().ends_with("culprit.db"));
    assert_eq!(store.revisions().unwrap()[0].runs, 1);
}

#[test]
fn default_path_follows_the_environment() {
    // The only test touching CULPRIT_DB, so no other test races with it.
    std::env::set_var(culprit_store::DB_ENV_VAR, "/tmp/somewhere/results.db");
    assert_eq!(culprit_store::default_path(), Path::new("/tmp/somewhere/results.db"));
    std::env::set_var(culprit_store::DB_ENV_VAR, "");
    assert_eq!(culprit_store::default_path(), Path::new("culprit.db"));
    std::env::remove_var(culprit_store::DB_ENV_VAR);
    assert_eq!(culprit_store::default_path(), Path::new("culprit.db"));
}

#[test]
fn stores_opened_together_on_a_new_file_all_open() {
    // Three `culprit run`s started together on a new store: one failed at once with "another culprit holds the
    // database lock" while switching the file to the WAL journal, which the busy timeout does not cover.
    for round in 0..40 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("culprit.db");
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(6));
        let openers: Vec<_> = (0..6)
            .map(|_| {
                let (path, barrier) = (path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    SqliteStore::open(&path).map(drop)
                })
            })
            .collect();
        for opener in openers {
            if let Err(error) = opener.join().unwrap() {
                panic!("round {round}: {error}");
            }
        }
    }
}
