//! Import of an lkp `/result` tree of several jobs and commits in lkp's full layout
//! (`<testcase>/<path_params>/<tbox_group>/<rootfs>/<kconfig>/<compiler>/<commit>/<run>`), given from its top, from
//! above it or from inside it: every run under its own job, commit and machine, the same whichever directory is given,
//! so that importing it again from anywhere stores nothing twice; one commit's runs of two kconfigs all kept, and the
//! runs a store got from an importer that keyed them by machine and run directory alone found again.

use culprit_store::result_root::{import, GroupCounts, ImportGroup, ImportOptions, ImportReport};
use culprit_store::{Build, RunFilter, SampleQuery, SqliteStore, Store};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

const SHA_A: &str = "361a2a229fa31ab7f2b236b5946e434964d00762";
const SHA_B: &str = "8cc621d2f45ddd3dc664024a647ee7adf48d79a5";
const LOWER_LEVELS: &str = "debian-12-x86_64-20240206.cgz/x86_64-rhel-9.4/gcc-12";
const PMBENCH: &str = "pmbench/30s-100%/lkp-bdw-ep6";
const HACKBENCH: &str = "hackbench/pipe-8-process-1600%/lkp-icl-2sp8";

fn store_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/stats_part_result_root")
}

fn parse_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../culprit-parse/tests/data/lkp")
}

fn commit_dir(result: &Path, job: &str, sha: &str) -> PathBuf {
    result.join(job).join(LOWER_LEVELS).join(sha)
}

/// lkp's `vmstat.json` of the vmstat fixture: its parser's `key: value` lines as `dump-stat` writes them.
fn vmstat_json() -> String {
    let mut object: Map<String, Value> = Map::new();
    for line in std::fs::read_to_string(parse_data().join("vmstat/1.yaml")).unwrap().lines() {
        let Some((key, value)) = line.split_once(": ") else { continue };
        let value = Value::Number(value.trim().parse().unwrap());
        let samples = object.entry(format!("vmstat.{key}")).or_insert_with(|| Value::Array(Vec::new()));
        samples.as_array_mut().unwrap().push(value);
    }
    Value::Object(object).to_string()
}

/// The hackbench fixture's throughput, scaled per commit and run so that every run's value is its own.
fn hackbench_throughput(sha: &str, run: usize) -> f64 {
    let text = std::fs::read_to_string(parse_data().join("hackbench/hackbench.yaml")).unwrap();
    let line = text.lines().find_map(|l| l.strip_prefix("throughput: ")).unwrap();
    let scale = if sha == SHA_A { 1.0 } else { 0.8 };
    line.parse::<f64>().unwrap() * scale + run as f64
}

/// Two testcases, two commits, two finished runs each, as lkp leaves them: pmbench's runs from lkp's stats_part
/// fixture (stats.json, job.yaml without a result_root, mpstat.json, perf-stat.json), hackbench's with the finished
/// job.yaml that records its `result_root` and the vmstat.json of the vmstat fixture. Beside pmbench's runs at
/// commit A, a run that did not finish: only its `output` and `time`.
fn result_tree(result: &Path) {
    for (sha, stats) in [(SHA_A, [0, 1]), (SHA_B, [1, 2])] {
        for (run, stats_index) in stats.into_iter().enumerate() {
            let directory = commit_dir(result, PMBENCH, sha).join(run.to_string());
            std::fs::create_dir_all(&directory).unwrap();
            let stats = store_data().join(format!("stats_{stats_index}.json"));
            std::fs::copy(stats, directory.join("stats.json")).unwrap();
            for file in ["job.yaml", "mpstat.json", "perf-stat.json"] {
                std::fs::copy(store_data().join(stats_index.to_string()).join(file), directory.join(file)).unwrap();
            }
        }
        for run in 0..2 {
            let directory = commit_dir(result, HACKBENCH, sha).join(run.to_string());
            std::fs::create_dir_all(&directory).unwrap();
            let stats = serde_json::json!({ "hackbench.throughput": hackbench_throughput(sha, run) });
            std::fs::write(directory.join("stats.json"), stats.to_string()).unwrap();
            let job = format!(
                "suite: hackbench\ntestcase: hackbench\ncategory: benchmark\nnr_threads: 1600%\niterations: 4\n\
                 hackbench:\n  mode: process\n  ipc: pipe\ntestbox: lkp-icl-2sp8\ntbox_group: lkp-icl-2sp8\n\
                 rootfs: debian-12-x86_64-20240206.cgz\nkconfig: x86_64-rhel-9.4\ncompiler: gcc-12\ncommit: {sha}\n\
                 result_root: \"/result/{HACKBENCH}/{LOWER_LEVELS}/{sha}/{run}\"\njob_state: finished\n"
            );
            std::fs::write(directory.join("job.yaml"), job).unwrap();
            std::fs::write(directory.join("vmstat.json"), vmstat_json()).unwrap();
        }
    }
    let unfinished = commit_dir(result, PMBENCH, SHA_A).join("2");
    std::fs::create_dir_all(&unfinished).unwrap();
    std::fs::write(unfinished.join("output"), "2026-12-06 03:00:00 pmbench -m 45G ...\n").unwrap();
    std::fs::write(unfinished.join("time"), "").unwrap();
}

fn group(job_name: &str, revision: &str, hostname: &str) -> ImportGroup {
    ImportGroup { job_name: job_name.into(), revision: revision.into(), hostname: hostname.into() }
}

/// The groups every import of the tree finds, with their counts.
fn expected_groups(imported: usize, already_stored: usize) -> Vec<(ImportGroup, GroupCounts)> {
    let counts = GroupCounts { imported, already_stored };
    let mut groups = Vec::new();
    for (job, host) in [("hackbench-pipe-8-process-1600%", "lkp-icl-2sp8"), ("pmbench-30s-100%", "lkp-bdw-ep6")] {
        for sha in [SHA_A, SHA_B] {
            groups.push((group(job, sha, host), counts));
        }
    }
    groups
}

fn only_pmbench(groups: Vec<(ImportGroup, GroupCounts)>) -> Vec<(ImportGroup, GroupCounts)> {
    groups.into_iter().filter(|(g, _)| g.job_name.starts_with("pmbench")).collect()
}

fn imported(store: &mut SqliteStore, directory: &Path) -> ImportReport {
    import(store, directory, &ImportOptions::default()).unwrap()
}

#[test]
fn a_result_tree_of_several_jobs_and_commits_imports_each_run_under_its_own_identity() {
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("result");
    result_tree(&result);
    let mut store = SqliteStore::open(dir.path().join("s.db")).unwrap();
    let report = imported(&mut store, &result);
    assert_eq!(report.imported.len(), 8, "{report:?}");
    assert_eq!(report.groups.clone().into_iter().collect::<Vec<_>>(), expected_groups(2, 0));
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    // The run that did not finish is named, not passed over as a level of the tree.
    let unfinished = commit_dir(&result, PMBENCH, SHA_A).join("2");
    assert_eq!(report.skipped.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>(), [unfinished]);

    let summary = store.results_summary(&RunFilter::default()).unwrap();
    let mut read: Vec<(String, String, String, String, String, u64)> = summary
        .iter()
        .map(|g| {
            let revision = g.revision.key().to_string();
            (g.job_id.clone(), g.job_name.clone(), g.testcase.clone(), revision, g.hostname.clone(), g.ok_runs)
        })
        .collect();
    read.sort();
    let row = |job_id: &str, name: &str, testcase: &str, sha: &str, host: &str| {
        (job_id.to_string(), name.to_string(), testcase.to_string(), sha.to_string(), host.to_string(), 2)
    };
    let hackbench = ("lkp:hackbench/pipe-8-process-1600%", "hackbench-pipe-8-process-1600%", "hackbench");
    let pmbench = ("lkp:pmbench/30s-100%", "pmbench-30s-100%", "pmbench");
    let mut expected = Vec::new();
    for ((id, name, testcase), host) in [(hackbench, "lkp-icl-2sp8"), (pmbench, "lkp-bdw-ep6")] {
        for sha in [SHA_A, SHA_B] {
            expected.push(row(id, name, testcase, sha, host));
        }
    }
    expected.sort();
    assert_eq!(read, expected);

    // Each commit's samples are its own runs' values, in run order.
    let query = |job: &str, metric: &str| SampleQuery {
        revision_keys: vec![SHA_A.into(), SHA_B.into()],
        job: Some(job.into()),
        metric_regex: Some(format!("^{}$", regex::escape(metric))),
        ..Default::default()
    };
    let samples = store.samples(&query("lkp:hackbench/pipe-8-process-1600%", "hackbench.throughput")).unwrap();
    let values: Vec<Vec<f64>> = samples.iter().map(|s| s.metrics["hackbench.throughput"].clone()).collect();
    let expected: Vec<Vec<f64>> =
        [SHA_A, SHA_B].iter().map(|sha| (0..2).map(|run| hackbench_throughput(sha, run)).collect()).collect();
    assert_eq!(values, expected);
    let cycles = |index: usize| -> f64 {
        let stats: Value =
            serde_json::from_str(&std::fs::read_to_string(store_data().join(format!("stats_{index}.json"))).unwrap())
                .unwrap();
        stats["perf-stat.i.cpu-cycles"].as_f64().unwrap()
    };
    let samples = store.samples(&query("lkp:pmbench/30s-100%", "perf-stat.i.cpu-cycles")).unwrap();
    let values: Vec<Vec<f64>> = samples.iter().map(|s| s.metrics["perf-stat.i.cpu-cycles"].clone()).collect();
    assert_eq!(values, [vec![cycles(0), cycles(1)], vec![cycles(1), cycles(2)]]);

    // Every hackbench run has the vmstat series of its vmstat.json.
    let runs = store.list_runs(&RunFilter { testcase: Some("hackbench".into()), ..Default::default() }).unwrap();
    assert_eq!(runs.len(), 4);
    for run in runs {
        let record = store.run(run.id).unwrap();
        let vmstat = record.monitors.iter().find(|m| m.monitor == "vmstat").expect("vmstat series");
        assert!(vmstat.series["cpu.us"].len() > 1 && vmstat.times.len() == vmstat.series["cpu.us"].len());
    }
}

#[test]
fn the_tree_imported_again_from_above_or_inside_it_stores_nothing_twice() {
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("result");
    result_tree(&result);
    let mut store = SqliteStore::open(dir.path().join("s.db")).unwrap();
    assert_eq!(imported(&mut store, &result).imported.len(), 8);

    let again = imported(&mut store, &result);
    assert_eq!((again.imported.len(), again.already_stored.len()), (0, 8), "{again:?}");
    assert_eq!(again.groups.into_iter().collect::<Vec<_>>(), expected_groups(0, 2));
    // From above /result (lkp's levels are read from the commit up), from /result/<testcase> (the job.yaml names the
    // testcase at the top of lkp's levels) and from a tbox_group's directory (the job.yaml records its result_root).
    let inside = [
        (dir.path().to_path_buf(), 8),
        (result.join("pmbench"), 4),
        (result.join(PMBENCH), 4),
        (result.join("hackbench"), 4),
        (result.join(HACKBENCH).join(LOWER_LEVELS), 4),
    ];
    for (directory, runs) in inside {
        let report = imported(&mut store, &directory);
        let shown = directory.display();
        assert_eq!((report.imported.len(), report.already_stored.len()), (0, runs), "{shown}: {report:?}");
        let expected = expected_groups(0, 2);
        let expected = match runs {
            8 => expected,
            _ if directory.starts_with(result.join("pmbench")) => only_pmbench(expected),
            _ => expected.into_iter().filter(|(g, _)| g.job_name.starts_with("hackbench")).collect(),
        };
        assert_eq!(report.groups.into_iter().collect::<Vec<_>>(), expected, "{shown}");
    }
    // A commit directory and a single run directory, placed by the job.yaml's testcase (pmbench) and result_root
    // (hackbench), as the whole tree places them.
    let pmbench_b = group("pmbench-30s-100%", SHA_B, "lkp-bdw-ep6");
    let hackbench_a = group("hackbench-pipe-8-process-1600%", SHA_A, "lkp-icl-2sp8");
    let single = [
        (commit_dir(&result, PMBENCH, SHA_B), pmbench_b.clone(), 2),
        (commit_dir(&result, PMBENCH, SHA_B).join("1"), pmbench_b, 1),
        (commit_dir(&result, HACKBENCH, SHA_A).join("0"), hackbench_a, 1),
    ];
    for (directory, group, runs) in single {
        let report = imported(&mut store, &directory);
        let shown = directory.display();
        assert_eq!((report.imported.len(), report.already_stored.len()), (0, runs), "{shown}: {report:?}");
        let counts = GroupCounts { imported: 0, already_stored: runs };
        assert_eq!(report.groups.into_iter().collect::<Vec<_>>(), [(group, counts)], "{shown}");
    }
    assert_eq!(store.list_runs(&RunFilter::default()).unwrap().len(), 8);
}

#[test]
fn a_testcase_directory_imported_first_gets_the_identity_the_whole_tree_gives() {
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("result");
    result_tree(&result);
    let mut store = SqliteStore::open(dir.path().join("s.db")).unwrap();
    let report = imported(&mut store, &result.join("pmbench"));
    assert_eq!(report.imported.len(), 4, "{report:?}");
    assert_eq!(report.groups.into_iter().collect::<Vec<_>>(), only_pmbench(expected_groups(2, 0)));
    let record = store.run(report.imported[0]).unwrap();
    assert_eq!(
        (record.testcase.as_str(), record.job_id.as_str(), record.machine.hostname.as_str()),
        ("pmbench", "lkp:pmbench/30s-100%", "lkp-bdw-ep6")
    );
    let whole = imported(&mut store, &result);
    assert_eq!((whole.imported.len(), whole.already_stored.len()), (4, 4), "{whole:?}");
}

/// Copies hackbench's runs at both commits to a second kconfig, as lkp lays out the runs of one commit built twice.
fn hackbench_second_kconfig(result: &Path) {
    let second = LOWER_LEVELS.replace("x86_64-rhel-9.4", "x86_64-kexec");
    for sha in [SHA_A, SHA_B] {
        for run in 0..2 {
            let from = commit_dir(result, HACKBENCH, sha).join(run.to_string());
            let to = result.join(HACKBENCH).join(&second).join(sha).join(run.to_string());
            std::fs::create_dir_all(&to).unwrap();
            let stats = serde_json::json!({ "hackbench.throughput": hackbench_throughput(sha, run) / 2.0 });
            std::fs::write(to.join("stats.json"), stats.to_string()).unwrap();
            let job = std::fs::read_to_string(from.join("job.yaml")).unwrap();
            let job = job.replace("x86_64-rhel-9.4", "x86_64-kexec");
            std::fs::write(to.join("job.yaml"), job).unwrap();
        }
    }
}

/// Asserts that a query of the second kconfig's build (see [`hackbench_second_kconfig`]) at SHA_A reads that build's
/// two runs alone, one job's, halves of the first build's throughput.
fn assert_second_kconfigs_throughput_alone(store: &SqliteStore) {
    let kexec = Build {
        rootfs: "debian-12-x86_64-20240206.cgz".into(),
        kconfig: "x86_64-kexec".into(),
        compiler: "gcc-12".into(),
    };
    let query = SampleQuery {
        revision_keys: vec![SHA_A.into()],
        metric_regex: Some("^hackbench\\.throughput$".into()),
        build: Some(kexec),
        ..Default::default()
    };
    let halves: Vec<f64> = (0..2).map(|run| hackbench_throughput(SHA_A, run) / 2.0).collect();
    let samples = store.samples(&query).unwrap();
    assert_eq!(samples.len(), 1, "{samples:?}");
    assert_eq!(samples[0].metrics["hackbench.throughput"], halves);
}

#[test]
fn a_second_kconfigs_runs_without_their_job_yaml_take_their_build_from_the_tree() {
    // Runs copied without their job.yaml recorded no kconfig, so compare read both builds' runs as one side (the
    // import only warned). lkp's tree names the build in its levels, so they are recorded from there (QA 47), and
    // compare gives each build its own table.
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("result");
    result_tree(&result);
    hackbench_second_kconfig(&result);
    let second = LOWER_LEVELS.replace("x86_64-rhel-9.4", "x86_64-kexec");
    for sha in [SHA_A, SHA_B] {
        for run in 0..2 {
            std::fs::remove_file(result.join(HACKBENCH).join(&second).join(sha).join(run.to_string()).join("job.yaml"))
                .unwrap();
        }
    }
    let mut store = SqliteStore::open(dir.path().join("s.db")).unwrap();
    let report = imported(&mut store, &result);
    assert!(!report.unrecorded_builds.iter().any(|g| g.job_name.starts_with("hackbench")), "{report:?}");
    for warning in report.warnings.iter().filter(|w| w.contains("builds (")) {
        assert!(!warning.contains("one side"), "{warning}");
    }
    assert_second_kconfigs_throughput_alone(&store);
}

#[test]
fn one_commit_s_runs_of_two_kconfigs_are_all_stored_and_an_older_store_s_runs_found_again() {
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("result");
    result_tree(&result);
    hackbench_second_kconfig(&result);
    let mut store = SqliteStore::open(dir.path().join("s.db")).unwrap();
    let report = imported(&mut store, &result);
    // Run 0 of the second kconfig is not run 0 of the first: both are stored.
    assert_eq!((report.imported.len(), report.already_stored.len()), (12, 0), "{report:?}");
    // Kconfig is no part of the job's identity, so the two builds' runs are one job's, which compare tells apart by
    // the kconfig their job.yaml records: the import says so for each commit of the job, naming both builds, and for
    // no other job.
    let pooled: Vec<&String> = report.warnings.iter().filter(|w| w.contains("builds (")).collect();
    assert_eq!(pooled.len(), 2, "{:?}", report.warnings);
    for (warning, sha) in pooled.iter().zip([SHA_A, SHA_B]) {
        assert!(warning.contains(sha) && warning.contains("x86_64-kexec") && warning.contains("x86_64-rhel-9.4"));
        assert!(warning.contains("runs of 2 builds") && warning.contains("each build its own table"), "{warning}");
        assert!(!warning.contains("one side"), "{warning}");
    }
    assert!(!report.unrecorded_builds.iter().any(|g| g.job_name.starts_with("hackbench")), "{report:?}");
    // Each run's build is the one its job.yaml records, so a query of one build reads that build's runs alone.
    assert_second_kconfigs_throughput_alone(&store);
    let throughput = |store: &SqliteStore| {
        let query = SampleQuery {
            revision_keys: vec![SHA_A.into()],
            metric_regex: Some("^hackbench\\.throughput$".into()),
            ..Default::default()
        };
        let mut values = store.samples(&query).unwrap()[0].metrics["hackbench.throughput"].clone();
        values.sort_by(f64::total_cmp);
        values
    };
    let mut expected: Vec<f64> =
        (0..2).map(|run| hackbench_throughput(SHA_A, run)).flat_map(|value| [value, value / 2.0]).collect();
    expected.sort_by(f64::total_cmp);
    assert_eq!(throughput(&store), expected);
    let again = imported(&mut store, &result);
    assert_eq!((again.imported.len(), again.already_stored.len()), (0, 12), "{again:?}");
}

#[test]
fn runs_an_older_importer_stored_under_machine_and_run_alone_are_found_again() {
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("result");
    result_tree(&result);
    let db = dir.path().join("s.db");
    let mut store = SqliteStore::open(&db).unwrap();
    assert_eq!(imported(&mut store, &result).imported.len(), 8);
    drop(store);
    // The keys an importer gave lkp runs before the levels between machine and commit were part of them.
    let connection = rusqlite::Connection::open(&db).unwrap();
    let levels = format!("/{LOWER_LEVELS}/");
    let changed = connection.execute("UPDATE runs SET import_key = replace(import_key, ?1, '/')", [&levels]).unwrap();
    assert_eq!(changed, 8);
    drop(connection);

    let mut store = SqliteStore::open(&db).unwrap();
    let again = imported(&mut store, &result);
    assert_eq!((again.imported.len(), again.already_stored.len()), (0, 8), "{again:?}");
    // A kconfig the older importer lost (its runs read as the first kconfig's) is stored now, once.
    hackbench_second_kconfig(&result);
    let with_second = imported(&mut store, &result);
    assert_eq!((with_second.imported.len(), with_second.already_stored.len()), (4, 8), "{with_second:?}");
    let last = imported(&mut store, &result);
    assert_eq!((last.imported.len(), last.already_stored.len()), (0, 12), "{last:?}");
    assert_eq!(store.list_runs(&RunFilter::default()).unwrap().len(), 12);
    // The second kconfig sorts first in the tree: its runs are its own, and the first kconfig's are stored once.
    let query = SampleQuery {
        revision_keys: vec![SHA_A.into()],
        metric_regex: Some("^hackbench\\.throughput$".into()),
        ..Default::default()
    };
    let mut values = store.samples(&query).unwrap()[0].metrics["hackbench.throughput"].clone();
    values.sort_by(f64::total_cmp);
    let mut expected: Vec<f64> =
        (0..2).map(|run| hackbench_throughput(SHA_A, run)).flat_map(|value| [value, value / 2.0]).collect();
    expected.sort_by(f64::total_cmp);
    assert_eq!(values, expected);
}

/// Removes every run's job.yaml, as when a tree is copied with its stats.json and monitors' JSON alone: only the
/// path then places the runs.
fn without_job_yaml(result: &Path) {
    for job in [PMBENCH, HACKBENCH] {
        for sha in [SHA_A, SHA_B] {
            for run in 0..2 {
                std::fs::remove_file(commit_dir(result, job, sha).join(run.to_string()).join("job.yaml")).unwrap();
            }
        }
    }
}

#[test]
fn a_tree_without_job_yaml_imported_again_from_inside_it_stores_nothing_twice() {
    // From /result/<testcase> the path was read from the top, one level off: the runs were stored a second time, as
    // the job `<path_params>-<tbox_group>` on a machine named after the rootfs; a commit directory was refused.
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("result");
    result_tree(&result);
    without_job_yaml(&result);
    let mut store = SqliteStore::open(dir.path().join("s.db")).unwrap();
    let report = imported(&mut store, &result);
    assert_eq!(report.imported.len(), 8, "{report:?}");
    assert_eq!(report.groups.into_iter().collect::<Vec<_>>(), expected_groups(2, 0));

    let rootfs = LOWER_LEVELS.split('/').next().unwrap();
    let hackbench = |sha: &str| group("hackbench-pipe-8-process-1600%", sha, "lkp-icl-2sp8");
    let both = |sha: &str, runs: usize| vec![(hackbench(sha), GroupCounts { imported: 0, already_stored: runs })];
    let hackbench_groups = expected_groups(0, 2).into_iter().filter(|(g, _)| g.job_name.starts_with("hackbench"));
    let hackbench_groups: Vec<(ImportGroup, GroupCounts)> = hackbench_groups.collect();
    let one_stored = GroupCounts { imported: 0, already_stored: 1 };
    let pmbench_b = group("pmbench-30s-100%", SHA_B, "lkp-bdw-ep6");
    let inside = [
        (result.join("hackbench"), hackbench_groups.clone()),
        (result.join(HACKBENCH), hackbench_groups.clone()),
        (result.join(HACKBENCH).join(rootfs), hackbench_groups.clone()),
        (result.join(HACKBENCH).join(LOWER_LEVELS), hackbench_groups),
        (commit_dir(&result, HACKBENCH, SHA_A), both(SHA_A, 2)),
        (commit_dir(&result, HACKBENCH, SHA_B).join("1"), both(SHA_B, 1)),
        (result.join("pmbench"), only_pmbench(expected_groups(0, 2))),
        (commit_dir(&result, PMBENCH, SHA_B).join("0"), vec![(pmbench_b, one_stored)]),
    ];
    for (directory, groups) in inside {
        let report = imported(&mut store, &directory);
        let shown = directory.display();
        assert!(report.imported.is_empty(), "{shown}: {report:?}");
        assert_eq!(report.groups.into_iter().collect::<Vec<_>>(), groups, "{shown}");
    }
    let runs = store.list_runs(&RunFilter::default()).unwrap();
    assert_eq!(runs.len(), 8);
    let mut placed: Vec<(&str, &str)> = runs.iter().map(|r| (r.job_name.as_str(), r.hostname.as_str())).collect();
    placed.sort();
    placed.dedup();
    assert_eq!(placed, [("hackbench-pipe-8-process-1600%", "lkp-icl-2sp8"), ("pmbench-30s-100%", "lkp-bdw-ep6")]);
}

#[test]
fn a_commit_directory_whose_levels_cannot_be_placed_is_refused_not_stored_under_its_rootfs() {
    // A revision directory that is no commit SHA (a label) under lkp's build levels, given from the testcase's
    // directory: nothing anchors lkp's layout, and read from the top the rootfs would be the machine.
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("result");
    let run = result.join(HACKBENCH).join(LOWER_LEVELS).join("v6.8").join("0");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("stats.json"), "{\"hackbench.throughput\": 100}").unwrap();
    let mut store = SqliteStore::open(dir.path().join("s.db")).unwrap();
    let error = import(&mut store, &result.join("hackbench"), &ImportOptions::default()).unwrap_err();
    let text = error.to_string();
    assert!(text.contains("\"debian-12-x86_64-20240206.cgz\" would be the machine"), "{text}");
    assert!(text.contains("rootfs level") && text.contains("import from lkp's result root"), "{text}");
    assert!(store.list_runs(&RunFilter::default()).unwrap().is_empty());
    // From the top of the tree all of lkp's levels are there, and the run is stored where it belongs.
    let report = imported(&mut store, &result);
    let counts = GroupCounts { imported: 1, already_stored: 0 };
    let placed = group("hackbench-pipe-8-process-1600%", "v6.8", "lkp-icl-2sp8");
    assert_eq!(report.groups.into_iter().collect::<Vec<_>>(), [(placed, counts)]);
}
