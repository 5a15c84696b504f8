//! The runs of the schema-version-1 store fixture (`tests/data/schema_v1/store.sqlite3`) and the text [`dump`] of
//! everything a store says about it, so the upgrade tests can check that the current code reads every run,
//! listing and sample of an upgraded store exactly as the version-1 code did.
//!
//! The fixture (named `.sqlite3` because the repository ignores `*.db`) was written once by the version-1 store
//! (commit 33763bf, before the packed metrics of schema version 2) from [`runs`] below, and is never regenerated.
//! `expected.txt` was first the version-1 code's Debug text of every listing, run, revision and sample of it
//! (commit 54d8c17 tested against that); the current code, having reproduced that text exactly, then wrote the
//! field-by-field form below, which does not change when a model type gains a field.

#![allow(dead_code)]

use super::common::*;
use culprit_core::model::RunRecord;
use culprit_store::{NewBisectSession, RunFilter, SampleQuery, SaveOptions, SessionId, Store};

pub const SHA_BASE: &str = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567";
pub const SHA_HEAD: &str = "f0e1d2c3b4a5968778695a4b3c2d1e0f98765432";

/// A perf-profile-heavy run whose metric set depends on `index`, so some metrics are missing in some runs.
fn profile(revision: culprit_core::model::Revision, index: usize) -> RunRecord {
    let mut record = run("fio-basic-4k", revision, "lkp-host", &[("fio.write_iops", 1000.0 + index as f64 * 3.5)]);
    for function in 0..120 {
        // Every fifth function is missing from odd runs, as perf drops symbols below its threshold.
        if index % 2 == 1 && function % 5 == 0 {
            continue;
        }
        let value = ((function * 7 + index * 13) % 1000) as f64 / 10.0 + 0.001 * index as f64;
        record.metrics.insert(format!("perf-profile.children.cycles-pp.function_{function:03}"), value);
    }
    record.metrics.insert(format!("run{index}.only"), index as f64);
    if index == 2 {
        record.metrics.insert("fio.nan_metric".to_string(), f64::NAN);
        record.metrics.insert("fio.inf_metric".to_string(), f64::INFINITY);
    }
    record.started_at += index as f64 * 60.0;
    record.ended_at += index as f64 * 60.0;
    record
}

/// The runs of the fixture, in save order, each with the import key it was saved under (if any).
pub fn runs() -> Vec<(RunRecord, Option<String>)> {
    let mut runs: Vec<(RunRecord, Option<String>)> = Vec::new();
    let mut everything = everything_run();
    everything.metrics.insert("fio.nan_metric".to_string(), f64::NAN);
    runs.push((everything, None));
    for index in 0..4 {
        runs.push((profile(commit(SHA_BASE), index), None));
    }
    for index in 4..7 {
        runs.push((profile(commit(SHA_HEAD), index), (index == 5).then(|| "lkp-host/5".to_string())));
    }
    runs.push((failed(profile(commit(SHA_HEAD), 7), "perf record crashed"), None));
    runs.push((run("hackbench-pipe", label("cgroup-on"), "other-host", &[("hackbench.throughput", 4242.0)]), None));
    runs
}

/// Saves the fixture runs into an empty store, with one bisect session linking two of them.
pub fn populate(store: &mut dyn Store) {
    let session = store
        .create_bisect_session(&NewBisectSession {
            repo: "/src/linux".into(),
            good: SHA_BASE.into(),
            bad: SHA_HEAD.into(),
            job_id: Some("id-fio-basic-4k".into()),
            metric: Some("fio.write_iops".into()),
            config_json: "{}".into(),
            created_at: 1_700_000_000.0,
            range: Vec::new(),
        })
        .unwrap();
    for (record, import_key) in runs() {
        store.save_run_with(&record, &SaveOptions { import_key, ..Default::default() }).unwrap();
    }
    store.link_run_to_session(session, culprit_store::RunId(5)).unwrap();
    store.link_run_to_session(session, culprit_store::RunId(2)).unwrap();
}

/// The queries whose samples the dump includes.
fn sample_queries() -> Vec<SampleQuery> {
    vec![
        SampleQuery { revision_keys: vec![SHA_BASE.into(), SHA_HEAD.into()], ..Default::default() },
        SampleQuery {
            revision_keys: vec![SHA_HEAD.into(), "cgroup-on".into(), SHA_BASE.into()],
            job: Some("fio-*".into()),
            metric_regex: Some("^(fio|run)\\.|function_00".into()),
            ..Default::default()
        },
    ]
}

/// Everything a store can say about the fixture, field by field (floats and text in Debug form, exact for every
/// float, NaN and infinities too). Fields are named one by one, so a field the model gains later does not
/// change the text.
pub fn dump(store: &dyn Store) -> String {
    use std::fmt::Write;
    let mut text = String::new();
    let listed = store.list_runs(&RunFilter::default()).unwrap();
    for run in &listed {
        let _ = writeln!(
            text,
            "listed {} job_id={:?} job_name={:?} testcase={:?} revision={:?} hostname={:?} started={:?} ended={:?} \
             failure={:?} exit={:?} metrics={}",
            run.id, run.job_id, run.job_name, run.testcase, run.revision, run.hostname, run.started_at, run.ended_at,
            run.failure_reason, run.exit_code, run.metric_count
        );
    }
    for summary in &listed {
        let r = store.run(summary.id).unwrap();
        let _ = writeln!(
            text,
            "run {} job_id={:?} job_name={:?} testcase={:?} job_yaml={:?} revision={:?} started={:?} ended={:?} \
             outcome={:?} exit={:?} stderr={:?}",
            summary.id, r.job_id, r.job_name, r.testcase, r.job_yaml, r.revision, r.started_at, r.ended_at, r.outcome,
            r.exit_code, r.stderr
        );
        let m = &r.machine;
        let _ = writeln!(
            text,
            "  machine hostname={:?} cpu_model={:?} nr_cpu={} memory_kib={} kernel={:?}",
            m.hostname, m.cpu_model, m.nr_cpu, m.memory_kib, m.kernel
        );
        for (name, value) in &r.params {
            let _ = writeln!(text, "  param {name:?} = {value:?}");
        }
        for (name, value) in &r.metrics {
            let _ = writeln!(text, "  metric {name:?} = {value:?}");
        }
        for monitor in &r.monitors {
            let _ = writeln!(text, "  monitor {:?} times={:?}", monitor.monitor, monitor.times);
            for (name, samples) in &monitor.series {
                let _ = writeln!(text, "    series {name:?} = {samples:?}");
            }
        }
        for raw in &r.raw_outputs {
            let _ = writeln!(text, "  raw {:?} = {:?}", raw.name, raw.content);
        }
    }
    for stored in store.revisions().unwrap() {
        let _ = writeln!(text, "revision {:?} runs={}", stored.revision, stored.runs);
    }
    for query in sample_queries() {
        // The query's fields by name, as everything else here, so a field the query gains does not change the text.
        let _ = writeln!(
            text,
            "samples SampleQuery {{ revision_keys: {:?}, job: {:?}, testcase: {:?}, hostname: {:?}, \
             metric_regex: {:?} }}",
            query.revision_keys, query.job, query.testcase, query.hostname, query.metric_regex
        );
        for side in store.samples(&query).unwrap() {
            let _ = writeln!(
                text,
                "  side {:?} ok_runs={:?} failed={} reasons={:?}",
                side.revision, side.ok_runs, side.failed_runs, side.failure_reasons
            );
            for (name, values) in &side.metrics {
                let _ = writeln!(text, "    {name:?} = {values:?}");
            }
        }
    }
    let _ = writeln!(text, "session runs {:?}", store.bisect_session_runs(SessionId(1)).unwrap());
    // A session stored before schema version 4 has no range: it replays from its repository.
    let _ = writeln!(text, "session range {:?}", store.bisect_session_range(SessionId(1)).unwrap());
    text
}

/// What an upgrade must make of the runs stored before run kinds (schema version 5): every one a plain run, so
/// samples of plain runs read them all and samples of profiling runs none.
pub fn assert_every_run_plain(store: &dyn Store) {
    use culprit_store::RunKind;
    let listed = store.list_runs(&RunFilter::default()).unwrap();
    assert!(!listed.is_empty());
    assert!(listed.iter().all(|run| run.kind == RunKind::Plain), "{listed:?}");
    let profiling = RunFilter { kind: Some(RunKind::Profiling), ..Default::default() };
    assert!(store.list_runs(&profiling).unwrap().is_empty());
    for query in sample_queries() {
        let sides = store.samples(&SampleQuery { kind: RunKind::Profiling, ..query }).unwrap();
        assert!(sides.iter().all(|side| side.ok_runs.is_empty() && side.failed_runs == 0 && side.metrics.is_empty()));
    }
    assert_eq!(store.bisect_session_runs(SessionId(1)).unwrap().len(), 2);
}
