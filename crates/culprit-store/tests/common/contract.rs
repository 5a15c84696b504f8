//! The behaviour every `Store` back end must have, written once against `dyn Store` and run against SQLite and
//! PostgreSQL (tests/postgres.rs). Each function gets an opener that returns a new handle to the same, initially
//! empty store, so reopening (a restart, another machine) is part of what is checked.

use super::common::*;
use culprit_core::model::{Revision, RunOutcome, RunRecord, ScratchFilesystem};
use culprit_store::{
    BisectCommit, BisectSession, Build, FollowSession, NewBisectSession, NewTryFix, RunFilter, RunId, RunKind,
    RunStatus, SampleQuery, SaveOptions, Saved, SessionId, Store, StoreError, TryFix, TryFixId, TryFixSide,
};

pub const SHA_A: &str = "8cc621d2f45ddd3dc664024a647ee7adf48d79a5";
pub const SHA_B: &str = "8cc6ffffffffffffffffffffffffffffffffffff";
pub const SHA_C: &str = "1234567890abcdef1234567890abcdef12345678";

/// Opens a new handle to the store under test.
pub type Opener<'a> = &'a dyn Fn() -> Box<dyn Store>;

/// Compares records where NaN must come back as NaN (PartialEq says NaN != NaN).
pub fn assert_same_record(actual: &RunRecord, expected: &RunRecord) {
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

pub fn every_field_round_trips(open: Opener<'_>) {
    let mut store = open();
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

    // A new handle reads the same data from the database, not from any cache.
    drop(store);
    let store = open();
    assert_same_record(&store.run(id).unwrap(), &record);
}

/// Saves two runs of 20,000 metrics each and reads them back; returns nothing, the caller may count names.
pub fn huge_metric_sets_round_trip(open: Opener<'_>) {
    let mut store = open();
    let first = profile_run(commit(SHA_A), 20_000, 1.0);
    let second = profile_run(commit(SHA_B), 20_000, 2.0);
    let first_id = store.save_run(&first).unwrap();
    let second_id = store.save_run(&second).unwrap();
    assert_eq!(store.run(first_id).unwrap(), first);
    assert_eq!(store.run(second_id).unwrap(), second);
    let listed = store.list_runs(&RunFilter::default()).unwrap();
    assert_eq!(listed.iter().map(|r| r.metric_count).collect::<Vec<_>>(), vec![20_001, 20_001]);
    let samples = store
        .samples(&SampleQuery { revision_keys: vec![SHA_B.into(), SHA_A.into()], ..Default::default() })
        .unwrap();
    assert_eq!(samples[0].metrics.len(), 20_001);
    assert_eq!(samples[0].metrics["fio.write_iops"], vec![1002.0]);
    assert_eq!(samples[1].metrics["perf-profile.children.cycles-pp.function_00010"], vec![first.metrics["perf-profile.children.cycles-pp.function_00010"]]);
}

/// `run_facts` reads each run's machine and params, in the order asked, as the whole record has them, and names an
/// unknown run.
pub fn run_facts_are_the_machine_and_params_of_each_run(open: Opener<'_>) {
    let mut store = open();
    let first = everything_run();
    let mut pinned = run("pinned", commit(SHA_B), "host-1", &[("fio.write_iops", 2.0)]);
    pinned.machine.nr_cpu = 1;
    pinned.params = vec![("nr_threads".into(), "100%".into()), ("hackbench.mode".into(), "process".into())];
    let first_id = store.save_run(&first).unwrap();
    let pinned_id = store.save_run(&pinned).unwrap();
    drop(store);
    let store = open();
    let facts = store.run_facts(&[pinned_id, first_id]).unwrap();
    assert_eq!(facts.iter().map(|f| f.id).collect::<Vec<_>>(), vec![pinned_id, first_id]);
    assert_eq!((&facts[0].machine, &facts[0].params), (&pinned.machine, &pinned.params));
    assert_eq!((&facts[1].machine, &facts[1].params), (&first.machine, &first.params));
    assert!(store.run_facts(&[]).unwrap().is_empty());
    let error = store.run_facts(&[first_id, RunId(42)]).unwrap_err();
    assert!(matches!(error, StoreError::NotFound { .. }) && error.to_string().contains("run 42"), "{error}");
}

pub fn unknown_run_is_not_found(open: Opener<'_>) {
    let store = open();
    let error = store.run(RunId(42)).unwrap_err();
    assert!(matches!(error, StoreError::NotFound { .. }), "{error}");
    assert!(error.to_string().contains("run 42"), "{error}");
}

fn filter_fixture(store: &mut dyn Store) {
    store.save_run(&run("fio-basic-4k", commit(SHA_A), "host-a", &[("fio.write_iops", 1.0)])).unwrap();
    store.save_run(&run("fio-basic-8k", commit(SHA_A), "host-b", &[("fio.write_iops", 2.0)])).unwrap();
    store.save_run(&run("hackbench-pipe", commit(SHA_B), "host-a", &[("hackbench.throughput", 3.0)])).unwrap();
    store.save_run(&failed(run("fio-basic-4k", commit(SHA_B), "host-a", &[]), "crashed")).unwrap();
    store.save_run(&run("fio-basic-4k", label("cgroup-on"), "host-a", &[("fio.write_iops", 5.0)])).unwrap();
}

pub fn filters_select_the_right_runs(open: Opener<'_>) {
    let mut store = open();
    filter_fixture(store.as_mut());
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

/// A job glob selects whole jobs: a job whose older runs were stored under another name (Culprit's naming rule
/// changed, QA 45) keeps all of its runs under either name, and another job of the old name is not taken with it.
pub fn a_job_glob_selects_every_run_of_the_jobs_it_names(open: Opener<'_>) {
    let mut store = open();
    let named = |name: &str, id: &str, revision: Revision, value: f64| {
        let mut record = run(name, revision, "h", &[("command.ops", value)]);
        record.job_id = id.to_string();
        record
    };
    let old = "fl-bash_-c__echo_ops:____RANDOM%10";
    let new = "fl-bash_-c__echo_ops:____RANDOM%10~aaaa0000";
    store.save_run(&named(old, "aaaa000011112222", commit(SHA_A), 1.0)).unwrap();
    store.save_run(&named(new, "aaaa000011112222", commit(SHA_B), 2.0)).unwrap();
    store.save_run(&named(old, "bbbb000011112222", commit(SHA_B), 3.0)).unwrap();
    let ids = |job: &str| -> Vec<i64> {
        let filter = RunFilter { job: Some(job.into()), ..Default::default() };
        store.list_runs(&filter).unwrap().iter().map(|r| r.id.0).collect()
    };
    assert_eq!(ids(new), vec![1, 2]);
    assert_eq!(ids("*~aaaa0000"), vec![1, 2]);
    // The old name is still both jobs' (runs of either were stored under it).
    assert_eq!(ids(old), vec![1, 2, 3]);
    assert_eq!(ids("bbbb000011112222"), vec![3]);
    // The first 8 digits of an id, as names and messages show them, name the job too; fewer do not.
    assert_eq!(ids("bbbb0000"), vec![3]);
    assert_eq!(ids("bbbb000"), Vec::<i64>::new());
    let keys = vec![SHA_A.into(), SHA_B.into()];
    let query = SampleQuery { revision_keys: keys, job: Some(new.into()), ..Default::default() };
    let samples = store.samples(&query).unwrap();
    assert_eq!(samples[0].metrics["command.ops"], vec![1.0]);
    assert_eq!(samples[1].metrics["command.ops"], vec![2.0]);
}

pub fn results_summary_groups_by_job_revision_and_machine(open: Opener<'_>) {
    let mut store = open();
    filter_fixture(store.as_mut());
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

pub fn samples_per_revision_per_metric(open: Opener<'_>) {
    let mut store = open();
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

pub fn revisions_resolve_from_what_users_type(open: Opener<'_>) {
    let mut store = open();
    let described = Revision::Commit {
        sha: SHA_A.into(),
        describe: Some("v6.8-rc1-12-g8cc621d2f45d".into()),
        subject: Some("mm: faster".into()),
    };
    store.save_run(&run("j", described.clone(), "h", &[("m", 1.0)])).unwrap();
    store.save_run(&run("j", commit(SHA_B), "h", &[("m", 1.0)])).unwrap();
    store.save_run(&run("j", commit(SHA_C), "h", &[("m", 1.0)])).unwrap();
    store.save_run(&run("j", label("cgroup-on"), "h", &[("m", 1.0)])).unwrap();
    // A label that also reads as a prefix of SHA_B: given bare it could mean either (an error naming both), and
    // `label:` names it.
    store.save_run(&run("j", label("8cc6f"), "h", &[("m", 1.0)])).unwrap();
    // A later run without describe must not erase what is known.
    store.save_run(&run("j", commit(SHA_A), "h", &[("m", 2.0)])).unwrap();

    let ok_cases: &[(&str, &str)] = &[
        (SHA_A, SHA_A),
        ("8cc621", SHA_A),
        ("8CC621D2F4", SHA_A),
        ("1234", SHA_C),
        ("cgroup-on", "cgroup-on"),
        ("label:cgroup-on", "cgroup-on"),
        ("label:8cc6f", "8cc6f"),
        ("8cc6ff", SHA_B),
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
    // A later run that knows a new subject fills it in.
    let renamed = Revision::Commit { sha: SHA_C.into(), describe: None, subject: Some("fix".into()) };
    store.save_run(&run("j", renamed.clone(), "h", &[("m", 3.0)])).unwrap();
    assert_eq!(store.resolve_revision("1234").unwrap(), renamed);

    match store.resolve_revision("8cc6f") {
        Err(error @ StoreError::AmbiguousRevision { .. }) => {
            let text = error.to_string();
            assert!(text.contains("label:8cc6f") && text.contains(SHA_B) && text.contains("`label:NAME`"), "{text}");
        }
        other => panic!("expected ambiguity, got {other:?}"),
    }
    match store.resolve_revision("8cc6") {
        Err(StoreError::AmbiguousRevision { candidates, .. }) => {
            assert_eq!(candidates.len(), 2);
            assert!(candidates[0].contains(SHA_A) && candidates[1].contains(SHA_B), "{candidates:?}");
        }
        other => panic!("expected ambiguity, got {other:?}"),
    }
    for unknown in ["123", "abcdef", "cgroup-off", "", "zzzz", "label:", "label:8cc621", "label:cgroup"] {
        let error = store.resolve_revision(unknown).unwrap_err();
        assert!(matches!(error, StoreError::UnknownRevision { .. }), "{unknown}: {error}");
        assert!(error.to_string().contains("culprit results"), "{error}");
    }
    let revisions = store.revisions().unwrap();
    let counts: Vec<(String, u64)> = revisions.iter().map(|r| (r.revision.key().to_string(), r.runs)).collect();
    assert_eq!(
        counts,
        vec![(SHA_A.into(), 2), (SHA_B.into(), 1), (SHA_C.into(), 2), ("cgroup-on".into(), 1), ("8cc6f".into(), 1)]
    );
}

pub fn linking_to_a_missing_session_rolls_the_run_back(open: Opener<'_>) {
    let mut store = open();
    let options = SaveOptions { bisect_session: Some(SessionId(77)), ..Default::default() };
    let error = store.save_run_with(&everything_run(), &options).unwrap_err();
    assert!(matches!(error, StoreError::NotFound { .. }) && error.to_string().contains("bisect session 77"), "{error}");
    assert!(store.list_runs(&RunFilter::default()).unwrap().is_empty());
    assert!(store.revisions().unwrap().is_empty());
}

pub fn import_keys_make_saves_idempotent(open: Opener<'_>) {
    let mut store = open();
    let record = run("j", commit(SHA_A), "h", &[("m", 1.0)]);
    let options = SaveOptions { import_key: Some("lkp:h/0".into()), ..Default::default() };
    let first = store.save_run_with(&record, &options).unwrap();
    let second = store.save_run_with(&record, &options).unwrap();
    assert!(matches!(first, Saved::Inserted(_)));
    assert_eq!(second, Saved::AlreadyStored(first.run_id()));
    // Another handle (another machine) sees the same key.
    let third = open().save_run_with(&record, &options).unwrap();
    assert_eq!(third, Saved::AlreadyStored(first.run_id()));
    let other = store.save_run_with(&record, &SaveOptions { import_key: Some("lkp:h/1".into()), ..options }).unwrap();
    assert!(matches!(other, Saved::Inserted(_)));
    store.save_run(&record).unwrap();
    store.save_run(&record).unwrap();
    assert_eq!(store.list_runs(&RunFilter::default()).unwrap().len(), 4);
}

/// A run an earlier importer stored under another key is found by that former key, but only with the same job.yaml:
/// a run of another kconfig that the earlier importer took for it is stored.
pub fn former_import_keys_find_only_runs_of_the_same_job_yaml(open: Opener<'_>) {
    let mut store = open();
    let mut record = run("j", commit(SHA_A), "h", &[("m", 1.0)]);
    record.job_yaml = "kconfig: a\n".into();
    let old = store.save_run_with(&record, &SaveOptions { import_key: Some("lkp:h/0".into()), ..Default::default() });
    let old = old.unwrap().run_id();
    let options = SaveOptions {
        import_key: Some("lkp:h/a/0".into()),
        former_import_key: Some("lkp:h/0".into()),
        ..Default::default()
    };
    assert_eq!(store.save_run_with(&record, &options).unwrap(), Saved::AlreadyStored(old));
    let mut other = record.clone();
    other.job_yaml = "kconfig: b\n".into();
    let other_options = SaveOptions { import_key: Some("lkp:h/b/0".into()), ..options.clone() };
    let inserted = store.save_run_with(&other, &other_options).unwrap();
    assert!(matches!(inserted, Saved::Inserted(_)), "{inserted:?}");
    assert_eq!(store.save_run_with(&other, &other_options).unwrap(), Saved::AlreadyStored(inserted.run_id()));
    // Without a former key, the new key alone decides.
    let plain = SaveOptions { former_import_key: None, ..options };
    assert!(matches!(store.save_run_with(&record, &plain).unwrap(), Saved::Inserted(_)));
    assert_eq!(store.list_runs(&RunFilter::default()).unwrap().len(), 3);
}

pub fn a_sessions_config_is_replaced_and_nothing_else_of_it(open: Opener<'_>) {
    let mut store = open();
    let new = NewBisectSession {
        repo: "/src/linux".into(),
        good: "v6.7".into(),
        bad: "v6.8-rc1".into(),
        job_id: Some("id-j".into()),
        metric: Some("fio.write_iops".into()),
        config_json: "{\"timeouts\":{\"build_secs\":14400}}".into(),
        created_at: 1_700_000_000.0,
        range: vec![BisectCommit { sha: SHA_A.into(), subject: "v6.7".into(), parents: vec![] }],
    };
    let session = store.create_bisect_session(&new).unwrap();
    let other = store.create_bisect_session(&new).unwrap();
    let run = store.save_run_with(
        &run("j", commit(SHA_A), "h", &[("m", 1.0)]),
        &SaveOptions { bisect_session: Some(session), ..Default::default() },
    );
    let run = run.unwrap().run_id();
    let before = store.bisect_session(session).unwrap();
    // Text as a session's JSON may hold it: quotes, a NUL escaped by serde, and characters beyond ASCII.
    let replaced = "{\"timeouts\":{\"build_secs\":7200},\"job_source\":\"ß \\u0000 'x'\"}";
    store.update_bisect_session_config(session, replaced).unwrap();
    // Read back by a new handle (another process resuming it): the new text, and the rest as it was.
    let store = open();
    let after = store.bisect_session(session).unwrap();
    assert_eq!(after.config_json, replaced);
    assert_eq!(BisectSession { config_json: before.config_json.clone(), ..after }, before);
    assert_eq!(store.bisect_session(other).unwrap().config_json, new.config_json);
    assert_eq!(store.bisect_session_runs(session).unwrap(), vec![run]);
    assert_eq!(store.bisect_session_range(session).unwrap(), new.range);
    let mut store = store;
    let missing = store.update_bisect_session_config(SessionId(999), "{}");
    assert!(matches!(missing, Err(StoreError::NotFound { .. })), "{missing:?}");
}

pub fn bisect_sessions_keep_their_runs_in_link_order(open: Opener<'_>) {
    let mut store = open();
    let earlier = store.save_run(&run("j", commit(SHA_C), "h", &[("m", 0.0)])).unwrap();
    let new = NewBisectSession {
        repo: "/src/linux".into(),
        good: "v6.7".into(),
        bad: "v6.8-rc1".into(),
        job_id: Some("id-j".into()),
        metric: Some("fio.write_iops".into()),
        config_json: "{\"budget\":80}".into(),
        created_at: 1_700_000_000.0,
        range: vec![
            BisectCommit { sha: SHA_A.into(), subject: "v6.7".into(), parents: vec![] },
            BisectCommit { sha: SHA_B.into(), subject: "mm: \"fix\" ß\0 reclaim".into(), parents: vec![0] },
            BisectCommit { sha: SHA_C.into(), subject: "Merge branch 'x'".into(), parents: vec![1, 0] },
        ],
    };
    let session = store.create_bisect_session(&new).unwrap();
    let other =
        store.create_bisect_session(&NewBisectSession { repo: "/other".into(), range: vec![], ..new.clone() }).unwrap();
    // The range comes back as given, subjects byte for byte, so a session replays without its repository.
    assert_eq!(store.bisect_session_range(session).unwrap(), new.range);
    assert_eq!(store.bisect_session_range(other).unwrap(), vec![]);
    let in_session = SaveOptions { bisect_session: Some(session), ..Default::default() };
    let first = store.save_run_with(&run("j", commit(SHA_A), "h", &[("m", 1.0)]), &in_session).unwrap().run_id();
    let second = store.save_run_with(&run("j", commit(SHA_B), "h", &[("m", 2.0)]), &in_session).unwrap().run_id();
    store.link_run_to_session(session, earlier).unwrap();
    store.link_run_to_session(session, first).unwrap();
    let in_other = SaveOptions { bisect_session: Some(other), ..Default::default() };
    store.save_run_with(&run("j", commit(SHA_B), "h", &[("m", 9.0)]), &in_other).unwrap();

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

    let missing = SessionId(999);
    assert!(matches!(store.bisect_session(missing), Err(StoreError::NotFound { .. })));
    assert!(matches!(store.update_bisect_session(missing, "x", None, 0.0), Err(StoreError::NotFound { .. })));
    assert!(matches!(store.bisect_session_runs(missing), Err(StoreError::NotFound { .. })));
    assert!(matches!(store.bisect_session_range(missing), Err(StoreError::NotFound { .. })));
    assert!(matches!(store.link_run_to_session(session, RunId(999)), Err(StoreError::NotFound { .. })));

    // Resuming after a restart reads the same session and runs from the database.
    drop(store);
    let store = open();
    assert_eq!(store.bisect_session_runs(session).unwrap(), vec![first, second, earlier]);
    assert_eq!(store.bisect_session(session).unwrap().status, "found");
}

pub fn invalid_records_are_refused_before_any_write(open: Opener<'_>) {
    let mut store = open();
    let mut endless = run("j", commit(SHA_A), "h", &[("m", 1.0)]);
    endless.ended_at = f64::INFINITY;
    assert!(matches!(store.save_run(&endless), Err(StoreError::InvalidInput { .. })));
    let mut huge = run("j", commit(SHA_A), "h", &[("m", 1.0)]);
    huge.machine.memory_kib = u64::MAX;
    assert!(matches!(store.save_run(&huge), Err(StoreError::InvalidInput { .. })));
    assert!(store.list_runs(&RunFilter::default()).unwrap().is_empty());
}

/// New handles (new processes) saving runs whose names are partly stored: all of them (a perf-heavy rerun, where
/// a save reads every stored name at once), many (looked up one by one in a larger table), and few. Every run
/// must read back with its own values, whichever way its ids were found.
pub fn stored_names_are_found_by_new_handles(open: Opener<'_>) {
    let first = profile_run(commit(SHA_A), 20_000, 1.0);
    let first_id = open().save_run(&first).unwrap();
    let mut rerun = profile_run(commit(SHA_A), 20_000, 2.0);
    rerun.metrics.extend((0..10).map(|i| (format!("rerun.only_{i}"), i as f64)));
    let mut many = run("fio-basic-4k", commit(SHA_B), "h", &[]);
    many.metrics.extend(first.metrics.iter().step_by(100).map(|(name, value)| (name.clone(), value + 0.5)));
    many.metrics.extend((0..150).map(|i| (format!("many.new_{i:03}"), -(i as f64))));
    let few = run("fio-basic-4k", commit(SHA_B), "h", &[("fio.write_iops", 3.0), ("few.new", 4.0)]);
    let mut ids = vec![first_id];
    for record in [&rerun, &many, &few] {
        ids.push(open().save_run(record).unwrap());
    }
    let store = open();
    for (id, record) in ids.iter().zip([&first, &rerun, &many, &few]) {
        assert_eq!(&store.run(*id).unwrap(), record);
    }
    let samples =
        store.samples(&SampleQuery { revision_keys: vec![SHA_A.into(), SHA_B.into()], ..Default::default() }).unwrap();
    assert_eq!(samples[0].metrics.len(), 20_011);
    assert_eq!(samples[0].metrics["fio.write_iops"], vec![1001.0, 1002.0]);
    assert_eq!(samples[1].metrics["fio.write_iops"], vec![1001.5, 3.0]);
    assert_eq!(samples[1].metrics["many.new_149"], vec![-149.0]);
    assert_eq!(samples[1].metrics.len(), many.metrics.len() + 1);
}

/// A run's scratch filesystem (schema version 7) comes back as it was saved from `run` and from the listing, spaces
/// and a NUL in its path included; a run that recorded none reads none, and an imported one's empty path and source
/// (lkp's job.yaml names the filesystem only) come back empty.
pub fn scratch_filesystems_round_trip(open: Opener<'_>) {
    let mut store = open();
    let mut on_disk = run("fio", commit(SHA_A), "h", &[("fio.write_iops", 1.0)]);
    on_disk.scratch = Some(ScratchFilesystem {
        path: "/mnt/my disk/scratch ü".to_string(),
        fs_type: "ext4".to_string(),
        source: "/dev/vda1".to_string(),
    });
    let mut imported = run("fio", commit(SHA_B), "h", &[("fio.write_iops", 2.0)]);
    imported.scratch =
        Some(ScratchFilesystem { path: String::new(), fs_type: "xfs".to_string(), source: String::new() });
    let unrecorded = run("fio", commit(SHA_C), "h", &[("fio.write_iops", 3.0)]);
    let mut nul = on_disk.clone();
    if let Some(scratch) = nul.scratch.as_mut() {
        scratch.path = "/tmp/a\0b".to_string();
    }
    let ids: Vec<RunId> = [&on_disk, &imported, &unrecorded, &nul].iter().map(|r| store.save_run(r).unwrap()).collect();
    drop(store);
    let store = open();
    let expected = [&on_disk.scratch, &imported.scratch, &unrecorded.scratch, &nul.scratch];
    for (id, scratch) in ids.iter().zip(expected) {
        assert_eq!(&store.run(*id).unwrap().scratch, scratch, "run {id}");
    }
    let listed: Vec<Option<ScratchFilesystem>> =
        store.list_runs(&RunFilter::default()).unwrap().into_iter().map(|r| r.scratch).collect();
    assert_eq!(listed, expected.iter().map(|s| (*s).clone()).collect::<Vec<_>>());
}

/// A profiling run (perf attached, `culprit bisect --profile`) keeps its kind: listings say it and filter by it,
/// samples read one kind at a time (plain unless asked), a failed profiling run counts among the profiling runs'
/// failures only, and the kind survives a new handle. A session lists its runs of both kinds in link order.
pub fn run_kinds_keep_profiling_runs_apart(open: Opener<'_>) {
    let mut store = open();
    let session = store.create_bisect_session(&sha_session("/src/linux", "m", Vec::new())).unwrap();
    let plain = SaveOptions { bisect_session: Some(session), ..Default::default() };
    let profiling = SaveOptions { kind: RunKind::Profiling, ..plain.clone() };
    let mut ids = Vec::new();
    for value in [10.0, 11.0] {
        ids.push(store.save_run_with(&run("j", commit(SHA_A), "h", &[("m", value)]), &plain).unwrap().run_id());
    }
    let profiled = run("j", commit(SHA_A), "h", &[("m", 500.0), ("perf-profile.self.cycles-pp.memcpy", 12.5)]);
    ids.push(store.save_run_with(&profiled, &profiling).unwrap().run_id());
    let crashed = failed(run("j", commit(SHA_A), "h", &[]), "perf record crashed");
    let unlinked = SaveOptions { bisect_session: None, ..profiling.clone() };
    ids.push(store.save_run_with(&crashed, &unlinked).unwrap().run_id());

    let store = open();
    let kinds: Vec<RunKind> = store.list_runs(&RunFilter::default()).unwrap().iter().map(|r| r.kind).collect();
    assert_eq!(kinds, vec![RunKind::Plain, RunKind::Plain, RunKind::Profiling, RunKind::Profiling]);
    let only = |kind| {
        let filter = RunFilter { kind: Some(kind), ..Default::default() };
        store.list_runs(&filter).unwrap().iter().map(|r| r.id).collect::<Vec<_>>()
    };
    assert_eq!(only(RunKind::Plain), ids[..2].to_vec());
    assert_eq!(only(RunKind::Profiling), ids[2..].to_vec());
    let in_session = RunFilter { bisect_session: Some(session), kind: Some(RunKind::Profiling), ..Default::default() };
    assert_eq!(store.list_runs(&in_session).unwrap().iter().map(|r| r.id).collect::<Vec<_>>(), vec![ids[2]]);
    assert_eq!(store.bisect_session_runs(session).unwrap(), ids[..3].to_vec());

    let query = SampleQuery { revision_keys: vec![SHA_A.into()], ..Default::default() };
    let plain_side = &store.samples(&query).unwrap()[0];
    assert_eq!(plain_side.metrics["m"], vec![10.0, 11.0]);
    assert!(!plain_side.metrics.contains_key("perf-profile.self.cycles-pp.memcpy"));
    assert_eq!((plain_side.ok_runs.clone(), plain_side.failed_runs), (ids[..2].to_vec(), 0));
    let profiling_side = &store.samples(&SampleQuery { kind: RunKind::Profiling, ..query }).unwrap()[0];
    assert_eq!(profiling_side.metrics["m"], vec![500.0]);
    assert_eq!(profiling_side.metrics["perf-profile.self.cycles-pp.memcpy"], vec![12.5]);
    assert_eq!((profiling_side.ok_runs.clone(), profiling_side.failed_runs), (vec![ids[2]], 1));
    assert_eq!(profiling_side.failure_reasons, vec!["perf record crashed".to_string()]);
}

/// A run whose text holds NUL bytes wherever a crashing program's output can put them (its stderr, the failure reason
/// quoting stderr's last line, a param value, a metric name parsed from the output, a monitor's series), beside the
/// U+FFFD that a lossy decoding of invalid UTF-8 leaves and the U+FFFE the PostgreSQL store escapes with. Everything
/// reads back exactly, but for the reason, a message for people, whose NULs are stored shown as U+2400.
pub fn nul_bytes_in_text_round_trip(open: Opener<'_>) {
    let mut store = open();
    let reason = "exit status 1: garbage \0\u{1}\u{FFFD} end\0";
    let shown = "exit status 1: garbage \u{2400}\u{1}\u{FFFD} end\u{2400}";
    let mut record = failed(run("nul-job", label("nul\0label"), "h", &[]), reason);
    record.stderr = "started\n\0\0binary\u{FFFD}\u{FFFD} garbage\u{FFFE}0\0\ngarbage \0\u{1}\u{FFFD} end\0\n".into();
    record.params.push(("cmd".into(), "printf '\0' >&2".into()));
    record.params.push(("nul\0key".into(), "\0".into()));
    record.job_yaml = "suite: command\ncmd: \"printf '\\0'\"\n# \0\n".into();
    record.machine.cpu_model = "cpu\0model".into();
    let mut ok = run("nul-job", label("nul\0label"), "h", &[("command.ops\0x", 1.0), ("command.ops", 2.0)]);
    ok.monitors = vec![culprit_core::model::MonitorSeries {
        monitor: "mon\0itor".into(),
        times: vec![0.0],
        series: [("ser\0ies".to_string(), vec![1.0])].into_iter().collect(),
    }];
    ok.raw_outputs = vec![culprit_core::model::RawOutput { name: "out\0put".into(), content: b"a\0b\xff".to_vec() }];
    let failed_id = store.save_run(&record).unwrap();
    let ok_id = store.save_run(&ok).unwrap();

    // A new handle (another process, another machine of a farm) reads back every byte as it was given, but for the
    // reason's NULs.
    let store = open();
    let expected = RunRecord { outcome: RunOutcome::Failed { reason: shown.into() }, ..record.clone() };
    assert_eq!(store.run(failed_id).unwrap(), expected);
    assert_eq!(store.run(ok_id).unwrap(), ok);
    let listed = store.list_runs(&RunFilter { label: Some("nul\0label".into()), ..Default::default() }).unwrap();
    assert_eq!(listed.iter().map(|r| r.id).collect::<Vec<_>>(), vec![failed_id, ok_id]);
    assert_eq!(listed[0].failure_reason.as_deref(), Some(shown));
    assert_eq!(store.resolve_revision("nul\0label").unwrap(), label("nul\0label"));
    let samples = store.samples(&SampleQuery { revision_keys: vec!["nul\0label".into()], ..Default::default() });
    let samples = samples.unwrap();
    assert_eq!(samples[0].failure_reasons, vec![shown.to_string()]);
    assert_eq!(samples[0].metrics.keys().collect::<Vec<_>>(), vec!["command.ops", "command.ops\0x"]);
    assert_eq!(samples[0].metrics["command.ops\0x"], vec![1.0]);
    let by_regex = SampleQuery {
        revision_keys: vec!["nul\0label".into()],
        metric_regex: Some("\0x$".into()),
        ..Default::default()
    };
    assert_eq!(store.samples(&by_regex).unwrap()[0].metrics.len(), 1);

    // A reason made as the run layer makes it is stored as it was made.
    let mut made = record.clone();
    made.outcome = RunOutcome::failed(reason);
    let made_id = open().save_run(&made).unwrap();
    assert_eq!(open().run(made_id).unwrap(), made);
}

/// A run's build is its rootfs, kconfig and compiler params, listed with it: an lkp result tree's two kconfigs of one
/// commit are one job's runs, and a listing or a sample query narrowed to one build reads that build's runs only. A
/// part the run lacks is empty, and only its own name counts (`need_kconfig` is no kconfig); a param given twice
/// reads as its first value, as `Build::of_params` reads a record.
pub fn builds_keep_one_kconfigs_runs_apart(open: Opener<'_>) {
    let mut store = open();
    let of = |rootfs: &str, kconfig: &str, compiler: &str| Build {
        rootfs: rootfs.into(),
        kconfig: kconfig.into(),
        compiler: compiler.into(),
    };
    let rhel = of("debian-12-x86_64-20240206.cgz", "x86_64-rhel-8.3", "gcc-12");
    let func = of("debian-12-x86_64-20240206.cgz", "x86_64-rhel-8.3-func", "gcc-12");
    let built = |build: &Build, value: f64| {
        let mut record = run("j", commit(SHA_A), "h", &[("m", value)]);
        record.params.push(("compiler".into(), build.compiler.clone()));
        record.params.push(("kconfig".into(), build.kconfig.clone()));
        record.params.push(("need_kconfig".into(), "KVM_GUEST".into()));
        record.params.push(("rootfs".into(), build.rootfs.clone()));
        record
    };
    let mut twice = built(&func, 52.0);
    twice.params.push(("kconfig".into(), "x86_64-allyesconfig".into()));
    assert_eq!(Build::of_params(&twice.params), func);
    let plain = run("j", commit(SHA_A), "h", &[("m", 7.0)]);
    let records = [built(&rhel, 100.0), built(&func, 50.0), built(&rhel, 102.0), twice, plain];
    let ids: Vec<RunId> = records.iter().map(|r| store.save_run(r).unwrap()).collect();

    let store = open();
    let listed: Vec<Build> = store.list_runs(&RunFilter::default()).unwrap().into_iter().map(|r| r.build).collect();
    assert_eq!(listed, vec![rhel.clone(), func.clone(), rhel.clone(), func.clone(), Build::default()]);
    let of_build = |build: &Build| {
        let filter = RunFilter { build: Some(build.clone()), revision_keys: vec![SHA_A.into()], ..Default::default() };
        store.list_runs(&filter).unwrap().iter().map(|r| r.id).collect::<Vec<_>>()
    };
    assert_eq!(of_build(&rhel), vec![ids[0], ids[2]]);
    assert_eq!(of_build(&func), vec![ids[1], ids[3]]);
    assert_eq!(of_build(&Build::default()), vec![ids[4]]);
    assert_eq!(of_build(&of("", "x86_64-rhel-8.3", "")), Vec::<RunId>::new());

    let query = |build: Option<Build>| {
        let query = SampleQuery { revision_keys: vec![SHA_A.into()], build, ..Default::default() };
        let side = store.samples(&query).unwrap().remove(0);
        (side.ok_runs, side.metrics.get("m").cloned().unwrap_or_default())
    };
    assert_eq!(query(Some(rhel)), (vec![ids[0], ids[2]], vec![100.0, 102.0]));
    assert_eq!(query(Some(func)), (vec![ids[1], ids[3]], vec![50.0, 52.0]));
    assert_eq!(query(Some(Build::default())), (vec![ids[4]], vec![7.0]));
    assert_eq!(query(None).1, vec![100.0, 50.0, 102.0, 52.0, 7.0]);
}

/// QA 45b 4: the sessions `track --follow` started are kept per machine with when each was reported, so that a pass
/// mails each of its own sessions once, whatever became of the files it wrote; QA 45b 2: a follow pass reads its
/// own runs only, the samples of the runs it names left out.
pub fn follow_sessions_are_recorded_per_machine_and_marked_reported(open: Opener<'_>) {
    let mut store = open();
    let new = sha_session("/src/app", "command.elapsed_time", Vec::new());
    let [first, second] = [(); 2].map(|()| store.create_bisect_session(&new).unwrap());
    store.record_follow_session(second, "a").unwrap();
    store.record_follow_session(first, "a").unwrap();
    store.record_follow_session(first, "a").unwrap();
    store.record_follow_session(first, "b").unwrap();
    let unreported = |session| FollowSession { session, reported_at: None };
    assert_eq!(open().follow_sessions("a").unwrap(), [unreported(first), unreported(second)]);
    store.mark_follow_session_reported(first, "a", 1_700_000_100.5).unwrap();
    // A new handle (the next cron pass) reads the mark; machine b's record of the same session is its own.
    let store = open();
    let a = store.follow_sessions("a").unwrap();
    assert_eq!(a, [FollowSession { session: first, reported_at: Some(1_700_000_100.5) }, unreported(second)]);
    assert_eq!(store.follow_sessions("b").unwrap(), [unreported(first)]);
    assert!(store.follow_sessions("c").unwrap().is_empty());
    let mut store = store;
    let never = store.mark_follow_session_reported(second, "b", 1.0);
    assert!(matches!(never, Err(StoreError::NotFound { .. })), "{never:?}");
    let missing = store.record_follow_session(SessionId(999), "a");
    assert!(matches!(missing, Err(StoreError::NotFound { .. })), "{missing:?}");

    let kept = store.save_run(&run("j", commit(SHA_C), "h", &[("m", 1.0)])).unwrap();
    let left_out = store.save_run(&run("j", commit(SHA_C), "h", &[("m", 5.0)])).unwrap();
    let samples = |excluded_runs: Vec<RunId>| {
        let query = SampleQuery {
            revision_keys: vec![SHA_C.into()],
            excluded_runs: excluded_runs.into_iter().collect(),
            ..SampleQuery::default()
        };
        store.samples(&query).unwrap()[0].metrics.get("m").cloned().unwrap_or_default()
    };
    assert_eq!(samples(Vec::new()), [1.0, 5.0]);
    assert_eq!(samples(vec![left_out]), [1.0]);
    assert_eq!(samples(vec![kept, left_out]), Vec::<f64>::new());
}

/// `culprit bisect forget` (QA 48, 9e): a deleted session is gone with its run links, its range and follow's record
/// of it, in a new handle too; its runs stay for every other view; another session and its runs are untouched; a
/// session that is not there is `NotFound`.
pub fn a_deleted_session_leaves_its_runs_and_the_other_sessions(open: Opener<'_>) {
    let mut store = open();
    let range = vec![
        BisectCommit { sha: SHA_A.into(), subject: "good".into(), parents: vec![] },
        BisectCommit { sha: SHA_B.into(), subject: "bad".into(), parents: vec![0] },
    ];
    let new = sha_session("/src/app", "m", range);
    let [stale, kept] = [(); 2].map(|()| store.create_bisect_session(&new).unwrap());
    let in_session = |session| SaveOptions { bisect_session: Some(session), ..Default::default() };
    let stale_run = store.save_run_with(&run("j", commit(SHA_A), "h", &[("m", 1.0)]), &in_session(stale)).unwrap();
    let kept_run = store.save_run_with(&run("j", commit(SHA_B), "h", &[("m", 2.0)]), &in_session(kept)).unwrap();
    let (stale_run, kept_run) = (stale_run.run_id(), kept_run.run_id());
    store.link_run_to_session(kept, stale_run).unwrap();
    store.record_follow_session(stale, "a").unwrap();
    store.record_follow_session(kept, "a").unwrap();

    store.delete_bisect_session(stale).unwrap();
    let store = open();
    assert!(matches!(store.bisect_session(stale), Err(StoreError::NotFound { .. })));
    assert!(matches!(store.bisect_session_runs(stale), Err(StoreError::NotFound { .. })));
    assert!(matches!(store.bisect_session_range(stale), Err(StoreError::NotFound { .. })));
    assert_eq!(store.bisect_sessions().unwrap().iter().map(|s| s.id).collect::<Vec<_>>(), vec![kept]);
    assert_eq!(store.follow_sessions("a").unwrap(), [FollowSession { session: kept, reported_at: None }]);
    // The runs stay, the deleted session's too, and the session kept keeps its links and range.
    assert_eq!(store.run(stale_run).unwrap().metrics.get("m"), Some(&1.0));
    assert_eq!(store.bisect_session_runs(kept).unwrap(), vec![kept_run, stale_run]);
    assert_eq!(store.bisect_session_range(kept).unwrap(), new.range);
    let listed = store.list_runs(&RunFilter { bisect_session: Some(stale), ..Default::default() }).unwrap();
    assert!(listed.is_empty(), "{listed:?}");
    let mut store = store;
    let again = store.delete_bisect_session(stale);
    assert!(matches!(again, Err(StoreError::NotFound { .. })), "{again:?}");
}

/// A `culprit try-fix` is recorded with the runs it took, each with its side, so that `report --compare --fix` reads
/// exactly one try-fix's runs; a second try-fix of the same three is a record of its own, and its runs are not the
/// first one's. The patch's text and the build command are read back as stored, and a try-fix without them (a patch
/// that is not UTF-8 text, no `--build`) reads back `None`, not an empty text.
pub fn try_fixes_keep_their_own_runs_by_side(open: Opener<'_>) {
    let mut store = open();
    let new = NewTryFix {
        repo: "/src/app".into(),
        base: SHA_A.into(),
        bad: SHA_B.into(),
        fix: "bbbbbbbbbb+fix-1a2b3c4d".into(),
        patch: "/tmp/fix.patch".into(),
        patch_text: Some("--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-slow();\n+fast();\n".into()),
        build: Some("make -j2 && make install".into()),
        job_id: "id-j".into(),
        machine: "h".into(),
        created_at: 1_700_000_000.0,
    };
    let first = store.create_try_fix(&new).unwrap();
    let second = store.create_try_fix(&NewTryFix { patch_text: None, build: None, ..new.clone() }).unwrap();
    assert_ne!(first, second);
    let mut save = |revision: Revision| store.save_run(&run("j", revision, "h", &[("m", 1.0)])).unwrap();
    let (base, bad, fix) = (save(commit(SHA_A)), save(commit(SHA_B)), save(Revision::Label { name: new.fix.clone() }));
    let again = save(commit(SHA_B));
    store.link_run_to_try_fix(first, fix, TryFixSide::Fix).unwrap();
    store.link_run_to_try_fix(first, base, TryFixSide::Base).unwrap();
    store.link_run_to_try_fix(first, bad, TryFixSide::Bad).unwrap();
    store.link_run_to_try_fix(first, bad, TryFixSide::Bad).unwrap();
    store.link_run_to_try_fix(second, again, TryFixSide::Bad).unwrap();
    store.finish_try_fix(first, 1_700_000_100.5).unwrap();
    // A new handle reads them back: oldest first, each with its runs in the order they were stored.
    let store = open();
    let recorded = store.try_fixes().unwrap();
    assert_eq!(recorded.iter().map(|t| t.id).collect::<Vec<_>>(), [first, second]);
    let expected = TryFix {
        id: first,
        repo: new.repo.clone(),
        base: new.base.clone(),
        bad: new.bad.clone(),
        fix: new.fix.clone(),
        patch: new.patch.clone(),
        patch_text: new.patch_text.clone(),
        build: new.build.clone(),
        job_id: new.job_id.clone(),
        machine: new.machine.clone(),
        created_at: new.created_at,
        finished_at: Some(1_700_000_100.5),
    };
    assert_eq!(recorded[0], expected);
    assert_eq!(recorded[1].finished_at, None);
    assert_eq!((&recorded[1].patch_text, &recorded[1].build), (&None, &None));
    let sides = [(base, TryFixSide::Base), (bad, TryFixSide::Bad), (fix, TryFixSide::Fix)];
    assert_eq!(store.try_fix_runs(first).unwrap(), sides);
    assert_eq!(store.try_fix_runs(second).unwrap(), [(again, TryFixSide::Bad)]);
    let mut store = store;
    let missing = store.link_run_to_try_fix(TryFixId(999), base, TryFixSide::Base);
    assert!(matches!(missing, Err(StoreError::NotFound { .. })), "{missing:?}");
    assert!(matches!(store.try_fix_runs(TryFixId(999)), Err(StoreError::NotFound { .. })));
    assert!(matches!(store.finish_try_fix(TryFixId(999), 1.0), Err(StoreError::NotFound { .. })));
}

/// A session of good [`SHA_A`] and bad [`SHA_B`] in `repo`, bisecting `metric` over `range`, as several contracts
/// make one.
fn sha_session(repo: &str, metric: &str, range: Vec<BisectCommit>) -> NewBisectSession {
    NewBisectSession {
        repo: repo.into(),
        good: SHA_A.into(),
        bad: SHA_B.into(),
        job_id: Some("id-j".into()),
        metric: Some(metric.into()),
        config_json: "{}".into(),
        created_at: 1_700_000_000.0,
        range,
    }
}
