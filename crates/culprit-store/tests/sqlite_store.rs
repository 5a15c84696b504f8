//! Integration tests of the SQLite store: round trips, filters, samples, revision resolution, migrations,
//! crash safety, read-only and full stores, and bisect sessions.

mod common;

use common::*;
use culprit_core::model::{Revision, RunRecord};
use culprit_store::migrations;
use culprit_store::{
    NewBisectSession, OpenOptions, RunFilter, RunStatus, SampleQuery, SaveOptions, Saved, SqliteStore, Store,
    StoreError,
};
use std::path::Path;

const SHA_A: &str = "8cc621d2f45ddd3dc664024a647ee7adf48d79a5";
const SHA_B: &str = "8cc6ffffffffffffffffffffffffffffffffffff";
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
fn every_field_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    let mut record = everything_run();
    record.metrics.insert("fio.nan_metric".to_string(), f64::NAN);
    let id = store.save_run(&record).unwrap();
    assert_same_record(&store.run(id).unwrap(), &record);

    let mut empty = run("", commit(SHA_C), "", &[]);
    empty.params.clear();
    empty.job_yaml.clear();
    empty.exit_code = None;
    empty.machine = Default::default();
    let empty_id = store.save_run(&empty).unwrap();
    assert_eq!(store.run(empty_id).unwrap(), empty);

    // Reopening reads the same data from the file, not from any cache.
    drop(store);
    let store = open(dir.path());
    assert_same_record(&store.run(id).unwrap(), &record);
}

#[test]
fn huge_metric_sets_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    let first = profile_run(commit(SHA_A), 20_000, 1.0);
    let second = profile_run(commit(SHA_B), 20_000, 2.0);
    let first_id = store.save_run(&first).unwrap();
    let second_id = store.save_run(&second).unwrap();
    assert_eq!(store.run(first_id).unwrap(), first);
    assert_eq!(store.run(second_id).unwrap(), second);
    let listed = store.list_runs(&RunFilter::default()).unwrap();
    assert_eq!(listed.iter().map(|r| r.metric_count).collect::<Vec<_>>(), vec![20_001, 20_001]);
    // Metric names are shared between runs, not stored twice.
    assert_eq!(count(&raw(dir.path()), "metric_names"), 20_001);
}

#[test]
fn unknown_run_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let error = store.run(culprit_store::RunId(42)).unwrap_err();
    assert!(matches!(error, StoreError::NotFound { .. }), "{error}");
    assert!(error.to_string().contains("run 42"), "{error}");
}

fn filter_fixture(store: &mut SqliteStore) {
    store.save_run(&run("fio-basic-4k", commit(SHA_A), "host-a", &[("fio.write_iops", 1.0)])).unwrap();
    store.save_run(&run("fio-basic-8k", commit(SHA_A), "host-b", &[("fio.write_iops", 2.0)])).unwrap();
    store.save_run(&run("hackbench-pipe", commit(SHA_B), "host-a", &[("hackbench.throughput", 3.0)])).unwrap();
    store.save_run(&failed(run("fio-basic-4k", commit(SHA_B), "host-a", &[]), "crashed")).unwrap();
    store.save_run(&run("fio-basic-4k", label("cgroup-on"), "host-a", &[("fio.write_iops", 5.0)])).unwrap();
}

#[test]
fn filters_select_the_right_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    filter_fixture(&mut store);
    let ids = |filter: RunFilter| -> Vec<i64> { store.list_runs(&filter).unwrap().iter().map(|r| r.id.0).collect() };
    let cases: Vec<(RunFilter, Vec<i64>)> = vec![
        (RunFilter::default(), vec![1, 2, 3, 4, 5]),
        (RunFilter { job: Some("fio-basic-4k".into()), ..Default::default() }, vec![1, 4, 5]),
        (RunFilter { job: Some("id-fio-basic-8k".into()), ..Default::default() }, vec![2]),
        (RunFilter { job: Some("fio-*".into()), ..Default::default() }, vec![1, 2, 4, 5]),
        (RunFilter { testcase: Some("hackbench".into()), ..Default::default() }, vec![3]),
        (RunFilter { hostname: Some("host-b".into()), ..Default::default() }, vec![2]),
        (RunFilter { revision_keys: vec![SHA_B.into()], ..Default::default() }, vec![3, 4]),
        (RunFilter { revision_keys: vec![SHA_B.into(), "cgroup-on".into()], ..Default::default() }, vec![3, 4, 5]),
        (RunFilter { label: Some("cgroup-on".into()), ..Default::default() }, vec![5]),
        (RunFilter { status: Some(RunStatus::Failed), ..Default::default() }, vec![4]),
        (RunFilter { status: Some(RunStatus::Ok), hostname: Some("host-a".into()), ..Default::default() }, vec![1, 3, 5]),
        (RunFilter { job: Some("nothing*".into()), ..Default::default() }, vec![]),
    ];
    for (filter, expected) in cases {
        assert_eq!(ids(filter.clone()), expected, "{filter:?}");
    }
    let failed_run = store.list_runs(&RunFilter { status: Some(RunStatus::Failed), ..Default::default() }).unwrap();
    assert_eq!(failed_run[0].failure_reason.as_deref(), Some("crashed"));
}

#[test]
fn results_summary_groups_by_job_revision_and_machine() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    filter_fixture(&mut store);
    let mut late = run("fio-basic-4k", commit(SHA_A), "host-a", &[("fio.write_iops", 1.5)]);
    late.started_at = 1_800_000_000.0;
    late.ended_at = 1_800_000_100.0;
    store.save_run(&late).unwrap();
    let groups = store.results_summary(&RunFilter::default()).unwrap();
    let rows: Vec<(String, String, String, u64, u64)> = groups
        .iter()
        .map(|g| (g.job_name.clone(), g.revision.key().to_string(), g.hostname.clone(), g.ok_runs, g.failed_runs))
        .collect();
    assert_eq!(
        rows,
        vec![
            ("fio-basic-4k".into(), SHA_A.into(), "host-a".into(), 2, 0),
            ("fio-basic-8k".into(), SHA_A.into(), "host-b".into(), 1, 0),
            ("hackbench-pipe".into(), SHA_B.into(), "host-a".into(), 1, 0),
            ("fio-basic-4k".into(), SHA_B.into(), "host-a".into(), 0, 1),
            ("fio-basic-4k".into(), "cgroup-on".into(), "host-a".into(), 1, 0),
        ]
    );
    assert_eq!(groups[0].first_started_at, 1_700_000_000.0);
    assert_eq!(groups[0].last_ended_at, 1_800_000_100.0);
}

#[test]
fn samples_per_revision_per_metric() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    for value in [10.0, 11.0, 12.0] {
        store
            .save_run(&run("fio-basic-4k", commit(SHA_A), "h", &[("fio.write_iops", value), ("vmstat.cpu.id", 90.0)]))
            .unwrap();
    }
    store.save_run(&run("fio-basic-4k", commit(SHA_B), "h", &[("fio.write_iops", 8.0), ("vmstat.cpu.id", f64::NAN)])).unwrap();
    store.save_run(&failed(run("fio-basic-4k", commit(SHA_B), "h", &[]), "timeout")).unwrap();
    store.save_run(&failed(run("fio-basic-4k", commit(SHA_B), "h", &[]), "timeout")).unwrap();
    store.save_run(&run("fio-basic-4k", commit(SHA_B), "h", &[("fio.write_iops", 9.0)])).unwrap();
    // Another job on the same revision must not leak into the samples when filtered.
    store.save_run(&run("hackbench-pipe", commit(SHA_B), "h", &[("fio.write_iops", 1e9)])).unwrap();

    let query = SampleQuery {
        revision_keys: vec![SHA_B.into(), SHA_A.into()],
        job: Some("fio-basic-4k".into()),
        ..Default::default()
    };
    let samples = store.samples(&query).unwrap();
    assert_eq!(samples.len(), 2);
    let (b, a) = (&samples[0], &samples[1]);
    assert_eq!(b.revision.key(), SHA_B);
    assert_eq!(b.metrics["fio.write_iops"], vec![8.0, 9.0]);
    assert_eq!(b.ok_runs.len(), 2);
    assert_eq!(b.failed_runs, 2);
    assert_eq!(b.failure_reasons, vec!["timeout".to_string()]);
    assert!(b.metrics["vmstat.cpu.id"].len() == 1 && b.metrics["vmstat.cpu.id"][0].is_nan());
    assert_eq!(a.metrics["fio.write_iops"], vec![10.0, 11.0, 12.0]);
    assert_eq!(a.metrics["vmstat.cpu.id"], vec![90.0; 3]);
    assert_eq!(a.failed_runs, 0);

    let only_fio = store.samples(&SampleQuery { metric_regex: Some("^fio\\.".into()), ..query.clone() }).unwrap();
    assert_eq!(only_fio[1].metrics.keys().collect::<Vec<_>>(), vec!["fio.write_iops"]);

    let unfiltered = store.samples(&SampleQuery { revision_keys: vec![SHA_B.into()], ..Default::default() }).unwrap();
    assert_eq!(unfiltered[0].metrics["fio.write_iops"], vec![8.0, 9.0, 1e9]);

    let unknown = store.samples(&SampleQuery { revision_keys: vec!["nope".into()], ..Default::default() });
    assert!(matches!(unknown, Err(StoreError::UnknownRevision { .. })));
    let bad_regex = store.samples(&SampleQuery { metric_regex: Some("(".into()), ..query });
    assert!(matches!(bad_regex, Err(StoreError::BadRegex { .. })));
}

#[test]
fn revisions_resolve_from_what_users_type() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    let described = Revision::Commit {
        sha: SHA_A.into(),
        describe: Some("v6.8-rc1-12-g8cc621d2f45d".into()),
        subject: Some("mm: faster".into()),
    };
    store.save_run(&run("j", described.clone(), "h", &[("m", 1.0)])).unwrap();
    store.save_run(&run("j", commit(SHA_B), "h", &[("m", 1.0)])).unwrap();
    store.save_run(&run("j", commit(SHA_C), "h", &[("m", 1.0)])).unwrap();
    store.save_run(&run("j", label("cgroup-on"), "h", &[("m", 1.0)])).unwrap();
    // A later run without describe must not erase what is known.
    store.save_run(&run("j", commit(SHA_A), "h", &[("m", 2.0)])).unwrap();

    let ok_cases: &[(&str, &str)] = &[
        (SHA_A, SHA_A),
        ("8cc621", SHA_A),
        ("8CC621D2F4", SHA_A),
        ("8cc6f", SHA_B),
        ("1234", SHA_C),
        ("cgroup-on", "cgroup-on"),
        ("v6.8-rc1-12-g8cc621d2f45d", SHA_A),
        ("v6.9-3-g1234567", SHA_C),
        ("  1234567890  ", SHA_C),
    ];
    for (given, key) in ok_cases {
        match store.resolve_revision(given) {
            Ok(revision) => assert_eq!(revision.key(), *key, "{given}"),
            Err(e) => panic!("{given}: {e}"),
        }
    }
    assert_eq!(store.resolve_revision("8cc621").unwrap(), described);

    match store.resolve_revision("8cc6") {
        Err(StoreError::AmbiguousRevision { candidates, .. }) => {
            assert_eq!(candidates.len(), 2);
            assert!(candidates[0].contains(SHA_A) && candidates[1].contains(SHA_B), "{candidates:?}");
        }
        other => panic!("expected ambiguity, got {other:?}"),
    }
    for unknown in ["123", "abcdef", "cgroup-off", "", "zzzz"] {
        let error = store.resolve_revision(unknown).unwrap_err();
        assert!(matches!(error, StoreError::UnknownRevision { .. }), "{unknown}: {error}");
        assert!(error.to_string().contains("culprit results"), "{error}");
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
fn linking_to_a_missing_session_rolls_the_run_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    let options = SaveOptions { bisect_session: Some(culprit_store::SessionId(77)), import_key: None };
    let error = store.save_run_with(&everything_run(), &options).unwrap_err();
    assert!(matches!(error, StoreError::NotFound { .. }) && error.to_string().contains("bisect session 77"), "{error}");
    assert_eq!(count(&raw(dir.path()), "runs"), 0);
    assert_eq!(count(&raw(dir.path()), "run_metric_packs"), 0);
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
fn import_keys_make_saves_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    let record = run("j", commit(SHA_A), "h", &[("m", 1.0)]);
    let options = SaveOptions { bisect_session: None, import_key: Some("lkp:h/0".into()) };
    let first = store.save_run_with(&record, &options).unwrap();
    let second = store.save_run_with(&record, &options).unwrap();
    assert!(matches!(first, Saved::Inserted(_)));
    assert_eq!(second, Saved::AlreadyStored(first.run_id()));
    let other = store.save_run_with(&record, &SaveOptions { import_key: Some("lkp:h/1".into()), ..options }).unwrap();
    assert!(matches!(other, Saved::Inserted(_)));
    store.save_run(&record).unwrap();
    store.save_run(&record).unwrap();
    assert_eq!(store.list_runs(&RunFilter::default()).unwrap().len(), 4);
}

#[test]
fn bisect_sessions_keep_their_runs_in_link_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    let earlier = store.save_run(&run("j", commit(SHA_C), "h", &[("m", 0.0)])).unwrap();
    let new = NewBisectSession {
        repo: "/src/linux".into(),
        good: "v6.7".into(),
        bad: "v6.8-rc1".into(),
        job_id: Some("id-j".into()),
        metric: Some("fio.write_iops".into()),
        config_json: "{\"budget\":80}".into(),
        created_at: 1_700_000_000.0,
    };
    let session = store.create_bisect_session(&new).unwrap();
    let other = store.create_bisect_session(&NewBisectSession { repo: "/other".into(), ..new.clone() }).unwrap();
    let in_session = SaveOptions { bisect_session: Some(session), import_key: None };
    let first = store.save_run_with(&run("j", commit(SHA_A), "h", &[("m", 1.0)]), &in_session).unwrap().run_id();
    let second = store.save_run_with(&run("j", commit(SHA_B), "h", &[("m", 2.0)]), &in_session).unwrap().run_id();
    store.link_run_to_session(session, earlier).unwrap();
    store.link_run_to_session(session, first).unwrap();
    store.save_run_with(&run("j", commit(SHA_B), "h", &[("m", 9.0)]), &SaveOptions { bisect_session: Some(other), import_key: None }).unwrap();

    assert_eq!(store.bisect_session_runs(session).unwrap(), vec![first, second, earlier]);
    let listed = store.list_runs(&RunFilter { bisect_session: Some(session), ..Default::default() }).unwrap();
    assert_eq!(listed.iter().map(|r| r.id).collect::<Vec<_>>(), vec![first, second, earlier]);

    let stored = store.bisect_session(session).unwrap();
    assert_eq!((stored.repo.as_str(), stored.status.as_str(), stored.result_json.clone()), ("/src/linux", "running", None));
    assert_eq!(stored.metric.as_deref(), Some("fio.write_iops"));
    store.update_bisect_session(session, "found", Some("{\"culprit\":\"abc\"}"), 1_700_000_500.0).unwrap();
    let updated = store.bisect_session(session).unwrap();
    assert_eq!(updated.status, "found");
    assert_eq!(updated.result_json.as_deref(), Some("{\"culprit\":\"abc\"}"));
    assert_eq!(updated.updated_at, Some(1_700_000_500.0));
    assert_eq!(store.bisect_sessions().unwrap().iter().map(|s| s.id).collect::<Vec<_>>(), vec![session, other]);

    let missing = culprit_store::SessionId(999);
    assert!(matches!(store.bisect_session(missing), Err(StoreError::NotFound { .. })));
    assert!(matches!(store.update_bisect_session(missing, "x", None, 0.0), Err(StoreError::NotFound { .. })));
    assert!(matches!(store.bisect_session_runs(missing), Err(StoreError::NotFound { .. })));
    assert!(matches!(store.link_run_to_session(session, culprit_store::RunId(999)), Err(StoreError::NotFound { .. })));

    // Resuming after a restart reads the same session and runs from the file.
    drop(store);
    let store = open(dir.path());
    assert_eq!(store.bisect_session_runs(session).unwrap(), vec![first, second, earlier]);
    assert_eq!(store.bisect_session(session).unwrap().status, "found");
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
