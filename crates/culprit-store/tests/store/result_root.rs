//! Integration tests of lkp result roots: write then import round trips, import of lkp's own stats_part fixture,
//! matrix-only roots, re-import without duplicates, and bad files.

use crate::common::*;
use culprit_core::model::{MonitorSeries, RunRecord};
use culprit_store::result_root::{
    self, import, write_run, ImportOptions, ImportReport, ImportedJob, JobIdentity, ResultRootError,
};
use culprit_store::{Build, RunFilter, SampleQuery, SqliteStore, Store};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const SHA_A: &str = "8cc621d2f45ddd3dc664024a647ee7adf48d79a5";
const SHA_B: &str = "1234567890abcdef1234567890abcdef12345678";
const PATH_PARAMS: &str = "4k-randwrite-300s";

/// The machine's build levels the tests write runs under: a Debian machine's, as lkp's local runs name them.
fn local() -> Build {
    result_root::local_build_of("PRETTY_NAME=\"Debian GNU/Linux 13 (trixie)\"\nID=debian\n", Some("gcc-14"))
}

/// The build levels of [`local`] as path components.
const LOCAL_LEVELS: &str = "debian/defconfig/gcc-14";

fn store_in(dir: &Path) -> SqliteStore {
    SqliteStore::open(dir.join("culprit.db")).unwrap()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn run_with_monitor(sha: &str, iops: f64, extra: Option<f64>) -> RunRecord {
    let mut record = run("fio-basic", commit(sha), "lkp-host", &[("fio.write_iops", iops), ("vmstat.cpu.id", 90.0)]);
    if let Some(value) = extra {
        record.metrics.insert("fio.only_sometimes".to_string(), value);
    }
    record.job_yaml = "suite: fio-basic\nruntime: 300s\nfio-setup-basic:\n  bs: 4k\n  rw: randwrite\n".to_string();
    let mut series = BTreeMap::new();
    series.insert("cpu.id".to_string(), vec![90.0, 91.0, 89.5]);
    series.insert("procs.r".to_string(), vec![1.0, 2.0, 1.0]);
    record.monitors = vec![MonitorSeries { monitor: "vmstat".to_string(), times: vec![0.0, 1.0, 2.0], series }];
    record.testcase = "fio-basic".to_string();
    record.params = result_root::flatten_job_params(&record.job_yaml);
    record.machine = culprit_core::model::Machine { hostname: "lkp-host".into(), ..Default::default() };
    record
}

fn identify(job: &ImportedJob<'_>) -> JobIdentity {
    JobIdentity { job_id: format!("id-{}", job.testcase), job_name: job.testcase.to_string() }
}

#[test]
fn written_root_has_lkp_files_and_imports_back() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("result");
    let runs_a = [run_with_monitor(SHA_A, 100.0, None), run_with_monitor(SHA_A, 110.0, Some(5.0)), run_with_monitor(SHA_A, 120.0, None)];
    let runs_b = [run_with_monitor(SHA_B, 80.0, None), run_with_monitor(SHA_B, 82.0, None)];
    let mut written = Vec::new();
    for record in runs_a.iter().chain(&runs_b) {
        written.push(write_run(&root, PATH_PARAMS, record, &local()).unwrap());
    }
    let revision_a = root.join("fio-basic").join(PATH_PARAMS).join("lkp-host").join(LOCAL_LEVELS).join(SHA_A);
    assert_eq!(written[0], revision_a.join("0"));
    assert_eq!(written[2], revision_a.join("2"));

    let stats = read_json(&revision_a.join("1/stats.json"));
    assert_eq!(stats["fio.write_iops"], Value::from(110));
    assert_eq!(stats["fio.only_sometimes"], Value::from(5));
    let run_matrix = read_json(&revision_a.join("0/matrix.json"));
    assert_eq!(run_matrix["vmstat.cpu.id"], serde_json::json!([90, 91, 89.5]));
    assert_eq!(run_matrix["vmstat.time"], serde_json::json!([0, 1, 2]));
    assert!(revision_a.join("0/job.yaml").is_file());

    let matrix = read_json(&revision_a.join("matrix.json"));
    assert_eq!(matrix["fio.write_iops"], serde_json::json!([100, 110, 120]));
    // As lkp, a metric missing from earlier runs is padded with leading zeros to stay aligned with its run.
    assert_eq!(matrix["fio.only_sometimes"], serde_json::json!([0, 5]));
    assert_eq!(matrix["stats_source"].as_array().map(Vec::len), Some(3));
    let avg = read_json(&revision_a.join("avg.json"));
    assert_eq!(avg["fio.write_iops"], Value::from(110));
    assert!((avg["fio.only_sometimes"].as_f64().unwrap() - 5.0 / 3.0).abs() < 1e-12);
    let stddev = read_json(&revision_a.join("stddev.json"));
    let expected_stddev = (200.0f64 / 3.0).sqrt();
    assert!((stddev["fio.write_iops"].as_f64().unwrap() - expected_stddev).abs() < 1e-9);
    assert_eq!(stddev["vmstat.cpu.id"], Value::from(0));

    let mut store = store_in(dir.path());
    let options = ImportOptions { identify: Some(&identify), ..Default::default() };
    let report = import(&mut store, &root, &options).unwrap();
    assert_eq!(report.imported.len(), 5);
    assert!(report.already_stored.is_empty() && report.skipped.is_empty(), "{report:?}");

    let samples = store
        .samples(&SampleQuery { revision_keys: vec![SHA_A.into(), SHA_B.into()], ..Default::default() })
        .unwrap();
    assert_eq!(samples[0].metrics["fio.write_iops"], vec![100.0, 110.0, 120.0]);
    assert_eq!(samples[1].metrics["fio.write_iops"], vec![80.0, 82.0]);
    assert_eq!(samples[0].metrics["fio.only_sometimes"], vec![5.0]);

    // Revision directories are imported in name order, runs in run-index order.
    let first_of_a = store.list_runs(&RunFilter { revision_keys: vec![SHA_A.into()], ..Default::default() }).unwrap();
    let imported = store.run(first_of_a[0].id).unwrap();
    assert_eq!(imported.job_id, "id-fio-basic");
    assert_eq!(imported.testcase, "fio-basic");
    assert_eq!(imported.machine.hostname, "lkp-host");
    assert_eq!(imported.revision, commit(SHA_A));
    assert_eq!(imported.monitors, runs_a[0].monitors);
    // Each run's job.yaml records its `result_root`, as lkp's do, and an import of a root not written by a store's
    // `culprit run` keeps it, as it keeps lkp's; such a root is read as lkp's, whose levels name the build of a run
    // whose job.yaml names none.
    let (result_root, params): (Vec<_>, Vec<_>) =
        imported.params.iter().cloned().partition(|(name, _)| name == "result_root");
    let (build, params): (Vec<_>, Vec<_>) =
        params.into_iter().partition(|(name, _)| Build::PARAMS.contains(&name.as_str()));
    assert_eq!(params, runs_a[0].params);
    assert_eq!(Build::of_params(&build), local());
    assert_eq!(result_root, vec![("result_root".to_string(), written[0].display().to_string())]);
    assert_eq!(imported.job_yaml, format!("{}result_root: \"{}\"\n", runs_a[0].job_yaml, written[0].display()));
    assert_eq!(imported.metrics, runs_a[0].metrics);

    let again = import(&mut store, &root, &options).unwrap();
    assert!(again.imported.is_empty());
    assert_eq!(again.already_stored, report.imported);
    assert_eq!(store.list_runs(&RunFilter::default()).unwrap().len(), 5);
}

#[test]
fn values_survive_a_written_and_imported_root_bit_for_bit() {
    // Values whose shortest decimal form needs 17 significant digits: serde_json without `float_roundtrip` reads
    // some of them back one unit in the last place off (a real vmstat.cpu.sy of 21.389446570605994 came back as
    // 21.38944657060599).
    let tricky =
        [21.389446570605994, 0.1 + 0.2, 1.0 / 3.0, 2.0f64.sqrt() * 1e-7, 123456.78901234567, 9.999999999999998];
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("result");
    let mut written = Vec::new();
    for (i, value) in tricky.iter().enumerate() {
        let mut record = run_with_monitor(SHA_A, 100.0 + i as f64, None);
        record.metrics.insert("vmstat.cpu.sy".to_string(), *value);
        write_run(&root, PATH_PARAMS, &record, &local()).unwrap();
        written.push(*value);
    }
    let mut store = store_in(dir.path());
    let options = ImportOptions { identify: Some(&identify), ..Default::default() };
    assert_eq!(import(&mut store, &root, &options).unwrap().imported.len(), tricky.len());
    let samples = store.samples(&SampleQuery { revision_keys: vec![SHA_A.into()], ..Default::default() }).unwrap();
    let read: Vec<u64> = samples[0].metrics["vmstat.cpu.sy"].iter().map(|v| v.to_bits()).collect();
    assert_eq!(read, written.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
}

/// Lays lkp's stats_part fixture out as the result root lkp would have left: each run directory with the
/// stats.json and matrix.json that `create_stats_matrix` produced for it (the fixture's `stats_N.json` and
/// `matrix_N.json`) and its job.yaml.
fn fixture_root(into: &Path) -> PathBuf {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/stats_part_result_root");
    let revision = into.join("pmbench/30s-100%/lkp-bdw-ep6").join(SHA_B);
    for index in 0..3 {
        let run = revision.join(index.to_string());
        std::fs::create_dir_all(&run).unwrap();
        std::fs::copy(data.join(format!("stats_{index}.json")), run.join("stats.json")).unwrap();
        std::fs::copy(data.join(format!("matrix_{index}.json")), run.join("matrix.json")).unwrap();
        for file in ["job.yaml", "mpstat.json", "perf-stat.json"] {
            std::fs::copy(data.join(index.to_string()).join(file), run.join(file)).unwrap();
        }
    }
    into.to_path_buf()
}

#[test]
fn lkp_fixture_root_imports() {
    let dir = tempfile::tempdir().unwrap();
    let root = fixture_root(&dir.path().join("result"));
    let mut store = store_in(dir.path());
    let report = import(&mut store, &root, &ImportOptions::default()).unwrap();
    assert_eq!(report.imported.len(), 3, "{report:?}");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/stats_part_result_root");
    for (index, id) in report.imported.iter().enumerate() {
        let record = store.run(*id).unwrap();
        let expected: BTreeMap<String, f64> = match read_json(&data.join(format!("stats_{index}.json"))) {
            Value::Object(map) => map.into_iter().filter_map(|(k, v)| Some((k, v.as_f64()?))).collect(),
            other => panic!("fixture is not an object: {other}"),
        };
        assert_eq!(record.metrics, expected, "run {index}");
        assert_eq!(record.testcase, "pmbench");
        assert_eq!(record.job_id, "lkp:pmbench/30s-100%");
        assert_eq!(record.job_name, "pmbench-30s-100%");
        assert_eq!(record.machine.hostname, "lkp-bdw-ep6");
        assert_eq!(record.revision.key(), SHA_B);
        assert!(record.params.contains(&("runtime".to_string(), "30s".to_string())));
        assert!(record.params.contains(&("pmbench.mapsize".to_string(), "75%".to_string())));
        let mpstat = record.monitors.iter().find(|m| m.monitor == "mpstat").expect("mpstat series");
        assert_eq!(mpstat.times.len(), 36);
        assert_eq!(mpstat.series["cpu.all.usr%"].len(), 36);
        let perf_stat = record.monitors.iter().find(|m| m.monitor == "perf-stat").expect("perf-stat series");
        assert_eq!(perf_stat.series["i.cpu-cycles"].len(), 34);
    }
    let stats_part = store.run(report.imported[1]).unwrap();
    assert!(stats_part.params.contains(&("stats_part".to_string(), "beginning".to_string())));
    let again = import(&mut store, &root, &ImportOptions::default()).unwrap();
    assert_eq!((again.imported.len(), again.already_stored.len()), (0, 3));
}

#[test]
fn a_matrix_without_run_directories_yields_one_run_per_column() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("result");
    for iops in [100.0, 110.0, 120.0] {
        let record = run_with_monitor(SHA_A, iops, (iops == 110.0).then_some(5.0));
        write_run(&root, PATH_PARAMS, &record, &local()).unwrap();
    }
    let revision = root.join("fio-basic").join(PATH_PARAMS).join("lkp-host").join(LOCAL_LEVELS).join(SHA_A);
    for index in 0..3 {
        std::fs::remove_dir_all(revision.join(index.to_string())).unwrap();
    }
    let mut store = store_in(dir.path());
    let report = import(&mut store, &root, &ImportOptions::default()).unwrap();
    assert_eq!(report.imported.len(), 3, "{report:?}");
    let samples = store.samples(&SampleQuery { revision_keys: vec![SHA_A.into()], ..Default::default() }).unwrap();
    assert_eq!(samples[0].metrics["fio.write_iops"], vec![100.0, 110.0, 120.0]);
    // The lkp padding zero is a value in the matrix; without per-run files it cannot be told from a real 0.
    assert_eq!(samples[0].metrics["fio.only_sometimes"], vec![0.0, 5.0]);
    let again = import(&mut store, &root, &ImportOptions::default()).unwrap();
    assert_eq!(again.already_stored.len(), 3);
}

#[test]
fn shallow_roots_need_the_callers_testcase_and_path_params() {
    let dir = tempfile::tempdir().unwrap();
    let revision = dir.path().join("result").join(SHA_A);
    std::fs::create_dir_all(revision.join("0")).unwrap();
    std::fs::write(revision.join("0/stats.json"), "{\"hackbench.throughput\": 1234.5}").unwrap();
    let mut store = store_in(dir.path());
    let root = dir.path().join("result");
    match import(&mut store, &root, &ImportOptions::default()) {
        Err(error @ ResultRootError::Layout { .. }) => assert!(error.to_string().contains("testcase"), "{error}"),
        other => panic!("expected a layout error, got {other:?}"),
    }
    let options = ImportOptions {
        testcase: Some("hackbench".into()),
        path_params: Some("pipe-8".into()),
        ..Default::default()
    };
    let report = import(&mut store, &root, &options).unwrap();
    assert_eq!(report.imported.len(), 1);
    let record = store.run(report.imported[0]).unwrap();
    assert_eq!((record.testcase.as_str(), record.job_id.as_str()), ("hackbench", "lkp:hackbench/pipe-8"));
    assert_eq!(record.machine.hostname, "unknown");
    assert_eq!(record.metrics["hackbench.throughput"], 1234.5);
}

#[test]
fn unreadable_runs_are_skipped_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("result");
    let good = write_run(&root, PATH_PARAMS, &run_with_monitor(SHA_A, 100.0, None), &local()).unwrap();
    let bad = good.with_file_name("1");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join("stats.json"), "{\"fio.write_iops\": 1").unwrap();
    let incomplete = good.with_file_name("2");
    std::fs::create_dir_all(&incomplete).unwrap();
    std::fs::write(incomplete.join("stats.json"), "{\"last_state.is_incomplete_run\": 1}").unwrap();
    let mut store = store_in(dir.path());
    let report: ImportReport = import(&mut store, &root, &ImportOptions::default()).unwrap();
    assert_eq!(report.imported.len(), 2);
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(report.skipped[0].0, bad);
    assert!(report.skipped[0].1.contains("not valid lkp JSON"), "{}", report.skipped[0].1);
    let failed = store.list_runs(&RunFilter { status: Some(culprit_store::RunStatus::Failed), ..Default::default() }).unwrap();
    assert_eq!(failed.len(), 1);
    assert!(failed[0].failure_reason.as_deref().is_some_and(|r| r.contains("incomplete")));

    let missing = import(&mut store, &dir.path().join("nowhere"), &ImportOptions::default());
    assert!(matches!(missing, Err(ResultRootError::Io { .. })));
}

#[test]
fn unsafe_names_stay_inside_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("result");
    let mut record = run("../../escape", label("../up"), "host/with/slash", &[("m", 1.0)]);
    record.testcase = "..".to_string();
    record.raw_outputs = vec![culprit_core::model::RawOutput { name: "../stats.json".into(), content: b"x".to_vec() }];
    let written = write_run(&root, "a/b", &record, &local()).unwrap();
    assert!(written.starts_with(&root), "{}", written.display());
    assert_eq!(written, root.join("__/a_b/host_with_slash").join(LOCAL_LEVELS).join(".._up/0"));
    assert!(written.join(".._stats.json").is_file());
}

#[test]
fn qa_31_failed_runs_stay_failed_through_a_written_root() {
    // A failed run keeps its times and monitors, so a `stats.json` without lkp's marks reads as a successful run:
    // `culprit import` of what `culprit run --result-root` wrote turned every failed run into an ok one.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("result");
    let mut crashed = failed(run_with_monitor(SHA_A, 0.0, None), "hackbench output yields no metrics");
    crashed.metrics.insert("fio.time.elapsed_time".to_string(), 0.002);
    crashed.stderr = "Running in process mode with 10 groups\nfork() failed: Cannot allocate memory\n".to_string();
    let mut killed = crashed.clone();
    killed.exit_code = None;
    for record in [run_with_monitor(SHA_A, 100.0, None), crashed, killed] {
        write_run(&root, PATH_PARAMS, &record, &local()).unwrap();
    }
    let revision = root.join("fio-basic").join(PATH_PARAMS).join("lkp-host").join(LOCAL_LEVELS).join(SHA_A);
    let stats = |run: &str| read_json(&revision.join(run).join("stats.json"));
    assert_eq!(stats("0").get("last_state.is_incomplete_run"), None);
    assert_eq!(stats("1")["last_state.is_incomplete_run"], Value::from(1));
    assert_eq!(stats("1")["last_state.exit_fail"], Value::from(1));
    assert_eq!(stats("2")["last_state.is_incomplete_run"], Value::from(1));
    assert_eq!(stats("2").get("last_state.exit_fail"), None);

    let mut store = store_in(dir.path());
    let options = ImportOptions { identify: Some(&identify), ..Default::default() };
    assert_eq!(import(&mut store, &root, &options).unwrap().imported.len(), 3);
    let runs = store.list_runs(&RunFilter::default()).unwrap();
    let failed_runs = runs.iter().filter(|r| r.failure_reason.is_some()).count();
    assert_eq!((runs.len(), failed_runs), (3, 2), "{runs:?}");
    // Why each failed, and what its job said on standard error, come back too (they were "incomplete run" and
    // nothing).
    for summary in runs.iter().filter(|r| r.failure_reason.is_some()) {
        assert_eq!(summary.failure_reason.as_deref(), Some("hackbench output yields no metrics"), "{summary:?}");
        let record = store.run(summary.id).unwrap();
        assert!(record.stderr.contains("fork() failed: Cannot allocate memory"), "{:?}", record.stderr);
    }
}

#[test]
fn an_imported_run_lasts_its_elapsed_time() {
    // An imported run started and ended at its stats file's time, so `results` showed every one as 0.00 s long.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("result");
    // lkp's stats name the time monitor's rows after the program (QA 47: the bare name was never found in an lkp
    // root); a root Culprit wrote before has the bare name.
    let mut timed = run_with_monitor(SHA_A, 100.0, None);
    timed.metrics.insert("fio.time.elapsed_time".to_string(), 12.5);
    let mut timed_before = run_with_monitor(SHA_A, 102.0, None);
    timed_before.metrics.insert("time.elapsed_time".to_string(), 7.0);
    for record in [timed, run_with_monitor(SHA_A, 101.0, None), timed_before] {
        write_run(&root, PATH_PARAMS, &record, &local()).unwrap();
    }
    let mut store = store_in(dir.path());
    let options = ImportOptions { identify: Some(&identify), ..Default::default() };
    assert_eq!(import(&mut store, &root, &options).unwrap().imported.len(), 3);
    let runs = store.list_runs(&RunFilter::default()).unwrap();
    let lengths: Vec<f64> = runs
        .iter()
        .map(|summary| store.run(summary.id).unwrap())
        .map(|run| {
            assert!(run.ended_at > 1.6e9, "the stats file's time ends the run: {}", run.ended_at);
            run.ended_at - run.started_at
        })
        .collect();
    // Without the time monitor's elapsed time the length stays unknown (zero), as before.
    assert_eq!(lengths, [12.5, 0.0, 7.0]);
}

#[test]
fn a_monitor_sample_that_is_not_a_number_leaves_its_series_out_with_a_warning() {
    // A run's matrix.json read each sample that was not a number as NaN, and stored it: every mean of the series was
    // then NaN, and nothing said which file or key was damaged.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("result");
    let run_directory = write_run(&root, PATH_PARAMS, &run_with_monitor(SHA_A, 100.0, None), &local());
    let run_directory = run_directory.unwrap();
    let matrix = run_directory.join("matrix.json");
    let text = std::fs::read_to_string(&matrix).unwrap().replace("91", "null");
    assert!(text.contains("null"), "{text}");
    std::fs::write(&matrix, text).unwrap();
    let mut store = store_in(dir.path());
    let report = import(&mut store, &root, &ImportOptions::default()).unwrap();
    assert_eq!(report.imported.len(), 1, "{report:?}");
    let record = store.run(report.imported[0]).unwrap();
    let series: Vec<&String> = record.monitors.iter().flat_map(|m| m.series.keys()).collect();
    assert_eq!(series, ["procs.r"], "{:?}", record.monitors);
    assert!(record.monitors.iter().all(|m| m.times == [0.0, 1.0, 2.0]), "{:?}", record.monitors);
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    let warning = &report.warnings[0];
    assert!(warning.contains("matrix.json: \"vmstat.cpu.id\" is [90,null,89.5], not an array of numbers"), "{warning}");
    assert!(warning.ends_with("the run is imported without that monitor series"), "{warning}");
}

#[test]
fn a_job_yaml_that_gives_no_params_is_named_in_a_warning() {
    // A run whose job.yaml was cut short or overwritten was imported without its params, under the identity its
    // directory gives rather than its job's, and nothing said so.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("result");
    let mut job_files = Vec::new();
    for iops in [100.0, 101.0, 102.0, 103.0] {
        let run_directory = write_run(&root, PATH_PARAMS, &run_with_monitor(SHA_A, iops, None), &local()).unwrap();
        job_files.push(run_directory.join("job.yaml"));
    }
    std::fs::write(&job_files[0], "suite: fio-basic\nfio-setup-basic:\n  bs: 4k\n rw: randwrite\n").unwrap();
    std::fs::write(&job_files[1], "").unwrap();
    std::fs::write(&job_files[2], "- a list\n").unwrap();
    let mut store = store_in(dir.path());
    let report = import(&mut store, &root, &ImportOptions::default()).unwrap();
    assert_eq!(report.imported.len(), 4, "{report:?}");
    assert_eq!(report.warnings.len(), 3, "{:?}", report.warnings);
    let said = ["not valid YAML (", "the file is empty", "the file is not a hash of 'key: value' params"];
    for ((warning, file), said) in report.warnings.iter().zip(&job_files).zip(said) {
        assert!(warning.starts_with(&format!("{}: {said}", file.display())), "{warning}");
        assert!(warning.ends_with("imported without its job's params, under the testcase and path_params of its \
                                   directory"), "{warning}");
    }
}

#[test]
fn a_root_culprit_run_wrote_imports_alike_from_inside_it_and_stores_nothing_twice() {
    // `culprit import DIR/<testcase>` (or a directory below it) of the root `culprit run --result-root DIR` wrote was
    // refused for want of levels naming the testcase, though Culprit's layout is fixed and the path above names it.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("rr");
    for (index, iops) in [100.0, 101.0].into_iter().enumerate() {
        let mut record = run_with_monitor(SHA_A, iops, None);
        record.started_at += index as f64;
        let key = result_root::own_import_key(&record);
        result_root::write_stored_run(&root, PATH_PARAMS, &record, &local(), &key).unwrap();
    }
    let revision = root.join("fio-basic").join(PATH_PARAMS).join("lkp-host").join(LOCAL_LEVELS).join(SHA_A);
    let options = ImportOptions { identify: Some(&identify), ..Default::default() };
    let mut store = store_in(dir.path());
    let report = import(&mut store, &root.join("fio-basic"), &options).unwrap();
    assert_eq!(report.imported.len(), 2, "{report:?}");
    for id in &report.imported {
        let record = store.run(*id).unwrap();
        let place = (record.testcase.as_str(), record.job_id.as_str(), record.machine.hostname.as_str());
        assert_eq!(place, ("fio-basic", "id-fio-basic", "lkp-host"));
        assert_eq!(record.revision.key(), SHA_A);
    }
    let group = result_root::ImportGroup {
        job_name: "fio-basic".into(),
        revision: SHA_A.into(),
        hostname: "lkp-host".into(),
    };
    let inside = [
        (root.clone(), 2),
        (root.join("fio-basic").join(PATH_PARAMS), 2),
        (revision.parent().unwrap().to_path_buf(), 2),
        (revision.clone(), 2),
        (revision.join("1"), 1),
    ];
    for (directory, runs) in inside {
        let again = import(&mut store, &directory, &options).unwrap();
        let shown = directory.display();
        assert_eq!((again.imported.len(), again.already_stored.len()), (0, runs), "{shown}: {again:?}");
        let counts = result_root::GroupCounts { imported: 0, already_stored: runs };
        assert_eq!(again.groups.into_iter().collect::<Vec<_>>(), [(group.clone(), counts)], "{shown}");
    }
    assert_eq!(store.list_runs(&RunFilter::default()).unwrap().len(), 2);
}

/// QA 57: a root `culprit run --result-root` wrote, imported into another store, lost every fact of the machine
/// (a mail of the imported side read "its runs had 0 CPUs") and the run's times (dated at the import when the
/// files' times were not kept). The run's job.yaml now carries them as lkp's job.yaml does, where the job names
/// none itself, and the job stored is the one that ran.
#[test]
fn a_run_culprit_wrote_imports_with_its_machine_and_times() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("rr");
    let mut record = run_with_monitor(SHA_A, 100.0, None);
    record.machine = culprit_core::model::Machine {
        hostname: "lkp-host".into(),
        cpu_model: "AMD EPYC: 7763 \"Milan\"".into(),
        nr_cpu: 2,
        memory_kib: 24_683_772,
        kernel: "6.1.0-13-amd64".into(),
        sockets: 1,
    };
    // Its raw outputs come back as raw outputs, in name order (QA 57: an imported run had none).
    let raw = |name: &str, content: &str| culprit_core::model::RawOutput { name: name.into(), content: content.into() };
    record.raw_outputs = vec![raw("hackbench", "Time: 0.827\n"), raw("perf-stat", "# started on\n")];
    let key = result_root::own_import_key(&record);
    let written = result_root::write_stored_run(&root, PATH_PARAMS, &record, &local(), &key).unwrap();
    let job_yaml = std::fs::read_to_string(written.join("job.yaml")).unwrap();
    assert!(job_yaml.starts_with(&record.job_yaml), "{job_yaml}");
    assert!(job_yaml.contains("\nnr_cpu: \"2\"\nmemory: \"24683772K\"\n"), "{job_yaml}");
    let options = ImportOptions { identify: Some(&identify), ..Default::default() };
    let mut store = store_in(dir.path());
    let report = import(&mut store, &root, &options).unwrap();
    let imported = store.run(report.imported[0]).unwrap();
    // The kernel's release is carried too (QA 57's leftover), under a key of Culprit's own: lkp's `kernel` is its
    // image's path.
    assert!(job_yaml.contains("\nkernel_release: \"6.1.0-13-amd64\"\n"), "{job_yaml}");
    assert_eq!(imported.machine, record.machine);
    assert_eq!(imported.raw_outputs, record.raw_outputs);
    assert_eq!((imported.started_at, imported.ended_at), (record.started_at, record.ended_at));
    assert_eq!(imported.job_yaml, record.job_yaml);
    assert_eq!(imported.params, record.params);
    // A job that names a key of its own keeps it: nothing is written twice, which YAML would refuse.
    let mut own = run_with_monitor(SHA_B, 90.0, None);
    own.machine.nr_cpu = 2;
    own.job_yaml = format!("{}nr_cpu: 8\n", own.job_yaml);
    let key = result_root::own_import_key(&own);
    let written = result_root::write_stored_run(&root, PATH_PARAMS, &own, &local(), &key).unwrap();
    let job_yaml = std::fs::read_to_string(written.join("job.yaml")).unwrap();
    assert_eq!(job_yaml.matches("nr_cpu:").count(), 1, "{job_yaml}");
    assert!(serde_yaml::from_str::<serde_yaml::Value>(&job_yaml).is_ok(), "{job_yaml}");
}

/// An lkp run's job.yaml says the filesystem lkp's robot made for it (`fs:`, on the disk `disk:` names), which is
/// where its benchmark's files were: the import records it as the run's scratch filesystem, with no directory. A
/// job.yaml without `fs` leaves it unknown.
#[test]
fn an_lkp_runs_fs_and_disk_are_its_scratch_filesystem_and_a_job_without_fs_has_none() {
    let dir = tempfile::tempdir().unwrap();
    let root = fixture_root(&dir.path().join("result"));
    let first = root.join("pmbench/30s-100%/lkp-bdw-ep6").join(SHA_B).join("0/job.yaml");
    let job = std::fs::read_to_string(&first).unwrap();
    std::fs::write(&first, format!("{job}\nfs: xfs\ndisk: 1HDD\n")).unwrap();
    let mut store = store_in(dir.path());
    let report = import(&mut store, &root, &ImportOptions::default()).unwrap();
    let scratch: Vec<_> = report.imported.iter().map(|id| store.run(*id).unwrap().scratch).collect();
    let xfs = culprit_core::model::ScratchFilesystem {
        path: String::new(),
        fs_type: "xfs".to_string(),
        source: "1HDD".to_string(),
    };
    assert_eq!(scratch, vec![Some(xfs), None, None]);
    assert_eq!(store.run(report.imported[0]).unwrap().scratch.map(|f| f.describe()).as_deref(), Some("xfs (1HDD)"));
}

/// An lkp run's job.yaml names the kernel it booted by its image's path, whose file name holds the release
/// (`.../vmlinuz-5.19.0-rc4-00045-g016a23388cdc`): the import records that as the run's kernel, which the table's
/// machine note compares sides by. A job.yaml without `kernel` leaves it unknown.
#[test]
fn an_lkp_runs_kernel_image_names_its_release() {
    let dir = tempfile::tempdir().unwrap();
    let root = fixture_root(&dir.path().join("result"));
    let first = root.join("pmbench/30s-100%/lkp-bdw-ep6").join(SHA_B).join("0/job.yaml");
    let job = std::fs::read_to_string(&first).unwrap();
    let image = "/pkg/linux/x86_64-rhel-8.3/gcc-11/016a23388cdcb2740deb1379dc408f21c84efb11/\
                 vmlinuz-5.19.0-rc4-00045-g016a";
    std::fs::write(&first, format!("{job}\nkernel: \"{image}\"\n")).unwrap();
    let mut store = store_in(dir.path());
    let report = import(&mut store, &root, &ImportOptions::default()).unwrap();
    let kernels: Vec<String> = report.imported.iter().map(|id| store.run(*id).unwrap().machine.kernel).collect();
    assert_eq!(kernels, ["5.19.0-rc4-00045-g016a", "", ""]);
}

/// QA 58: runs of a root Culprit wrote, some of whose job.yaml files were lost or garbled, were stored under a job
/// named after the build levels on a machine named after the compiler (the levels read in the older layout), the
/// runs beside them with good files too; a run without its job.yaml was a job apart. They are placed by the
/// job.yaml of a run beside them, and by the machine their import keys name when every job.yaml is gone.
#[test]
fn runs_culprit_wrote_whose_job_yaml_is_lost_are_placed_by_the_runs_beside_them_and_their_keys() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("rr");
    let mut written = Vec::new();
    for (i, iops) in [100.0, 101.0, 99.0, 100.5].into_iter().enumerate() {
        let mut record = run_with_monitor(SHA_A, iops, None);
        record.started_at += i as f64;
        let key = result_root::own_import_key(&record);
        written.push(result_root::write_stored_run(&root, PATH_PARAMS, &record, &local(), &key).unwrap());
    }
    std::fs::remove_file(written[0].join("job.yaml")).unwrap();
    std::fs::write(written[1].join("job.yaml"), "not: [valid").unwrap();
    let mut store = store_in(dir.path());
    let report = import(&mut store, &root, &ImportOptions::default()).unwrap();
    assert_eq!(report.imported.len(), 4, "{report:?}");
    let runs: Vec<RunRecord> = report.imported.iter().map(|id| store.run(*id).unwrap()).collect();
    for run in &runs {
        assert_eq!((run.testcase.as_str(), run.machine.hostname.as_str()), ("fio-basic", "lkp-host"), "{run:?}");
        assert_eq!((&run.job_id, &run.job_yaml), (&runs[3].job_id, &runs[3].job_yaml));
    }
    let lent: Vec<&String> = report.warnings.iter().filter(|w| w.contains("with the job of run")).collect();
    assert_eq!(lent.len(), 2, "{:?}", report.warnings);
    assert!(!report.warnings.iter().any(|w| w.contains("without its job's params")), "{:?}", report.warnings);

    // Every job.yaml gone: the machine level named by the import keys still tells Culprit's layout.
    for run in &written {
        let _ = std::fs::remove_file(run.join("job.yaml"));
    }
    let mut other = SqliteStore::open(dir.path().join("other.db")).unwrap();
    let report = import(&mut other, &root, &ImportOptions::default()).unwrap();
    assert_eq!(report.imported.len(), 4, "{report:?}");
    for id in &report.imported {
        let run = other.run(*id).unwrap();
        assert_eq!((run.testcase.as_str(), run.machine.hostname.as_str()), ("fio-basic", "lkp-host"), "{run:?}");
    }
}
