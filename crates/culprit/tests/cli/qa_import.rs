//! `culprit import` of a directory holding no lkp run is an error naming the directory and the layout it expects,
//! not a successful "imported 0 run(s)".

use std::path::Path;
use std::process::Command;

#[test]
fn importing_a_directory_without_runs_is_an_error_naming_the_layout() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("not-a-result-root");
    std::fs::create_dir_all(empty.join("some/where")).unwrap();
    std::fs::write(empty.join("some/where/notes.txt"), "nothing to import").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
        .arg("--db")
        .arg(dir.path().join("i.db"))
        .arg("import")
        .arg(&empty)
        .current_dir(dir.path())
        .output()
        .expect("culprit runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not-a-result-root") && stderr.contains("stats.json"), "{stderr}");
}

#[test]
fn an_imported_result_root_keeps_the_job_names_and_values_culprit_run_gave() {
    let dir = tempfile::tempdir().unwrap();
    let culprit = |db: &str, args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
            .args(["--db", db])
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("culprit runs");
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // A job whose suite differs from its file name, with a value whose decimal form needs 17 digits.
    std::fs::write(
        dir.path().join("matrixjob.yaml"),
        "suite: my-suite\ncommand:\n  cmd: \"echo 'score: 21.389446570605994'\"\n  capture:\n    score: 'score: (\\S+)'\n",
    )
    .unwrap();
    for label in ["A", "B"] {
        culprit("a.db", &["run", "matrixjob.yaml", "-n", "2", "--label", label, "--monitors", "none", "--result-root", "rr"]);
    }
    culprit("b.db", &["import", "rr"]);
    let names = |db: &str| -> Vec<String> {
        let json: serde_json::Value = serde_json::from_str(&culprit(db, &["results", "--json"])).unwrap();
        let mut names: Vec<String> = json
            .to_string()
            .split("\"job_name\":\"")
            .skip(1)
            .map(|s| s.split('"').next().unwrap_or("").to_string())
            .collect();
        names.sort();
        names
    };
    // It was named after the suite (my-suite-...) on import, so `results --job 'matrixjob*'` lost it.
    assert_eq!(names("a.db"), names("b.db"));
    assert!(names("b.db").iter().all(|n| n.starts_with("matrixjob-")), "{:?}", names("b.db"));
    let score = |db: &str| culprit(db, &["compare", "A", "B", "--all", "--format", "csv"]);
    let line = |text: String| text.lines().find(|l| l.starts_with("command.score,")).map(str::to_string);
    let stored = line(score("a.db"));
    assert!(stored.as_deref().is_some_and(|l| l.contains("21.389446570605994")), "{stored:?}");
    assert_eq!(stored, line(score("b.db")));
}

#[test]
fn an_lkp_result_tree_of_several_jobs_and_commits_is_summed_up_per_job_commit_and_machine() {
    let dir = tempfile::tempdir().unwrap();
    let (base, bad) = ("361a2a229fa31ab7f2b236b5946e434964d00762", "8cc621d2f45ddd3dc664024a647ee7adf48d79a5");
    let jobs = [
        ("hackbench", "pipe-8-process-1600%", "lkp-icl-2sp8", "hackbench:\n  mode: process\n  ipc: pipe\n"),
        ("fio-basic", "4k-randwrite", "lkp-csl-2sp6", "fio-setup-basic:\n  rw: randwrite\n  bs: 4k\nfio:\n"),
    ];
    for (testcase, path_params, host, params) in jobs {
        for commit in [base, bad] {
            for run in 0..2 {
                let path = dir.path().join(format!(
                    "result/{testcase}/{path_params}/{host}/debian-12-x86_64-20240206.cgz/x86_64-rhel-9.4/gcc-12/\
                     {commit}/{run}"
                ));
                std::fs::create_dir_all(&path).unwrap();
                std::fs::write(path.join("stats.json"), format!("{{\"{testcase}.score\": {}}}", 100 + run)).unwrap();
                let job = format!(
                    "suite: {testcase}\ntestcase: {testcase}\n{params}job_origin: {testcase}.yaml\ntbox_group: {host}\n"
                );
                std::fs::write(path.join("job.yaml"), job).unwrap();
            }
        }
    }
    let culprit = |directory: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
            .args(["--db", "i.db", "import", directory])
            .current_dir(dir.path())
            .output()
            .expect("culprit runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = culprit("result");
    assert!(text.starts_with("imported 8 run(s) from result"), "{text}");
    let groups: Vec<&str> = text.lines().filter(|l| l.starts_with("  ")).collect();
    assert_eq!(groups.len(), 4, "{text}");
    for (testcase, _, host, _) in jobs {
        for commit in [base, bad] {
            let place = format!(" at {commit} on {host}: ");
            let line = groups.iter().find(|l| l.starts_with(&format!("  {testcase}-")) && l.contains(&place));
            assert!(line.is_some_and(|l| l.ends_with(": 2 run(s)")), "{testcase} {commit}: {text}");
        }
    }
    // From inside the tree the same runs are found under the same jobs, commits and machines, already stored.
    let again = culprit("result/fio-basic");
    assert!(again.starts_with("imported 0 run(s)") && again.contains("; 4 already stored"), "{again}");
    let line = format!(" at {base} on lkp-csl-2sp6: 0 run(s), 2 already stored");
    assert_eq!(again.lines().filter(|l| l.contains(&line)).count(), 1, "{again}");
}

#[test]
fn a_farm_s_result_tree_is_summed_up_in_twenty_groups_and_a_count_of_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    // 23 commits of one job, the last two with two runs: the three groups past the twentieth hold five runs.
    for index in 0..23 {
        let commit = format!("{index:040x}");
        for run in 0..(1 + usize::from(index >= 21)) {
            let path = dir.path().join(format!("result/hackbench/pipe-8-process/lkp-icl-2sp8/{commit}/{run}"));
            std::fs::create_dir_all(&path).unwrap();
            std::fs::write(path.join("stats.json"), format!("{{\"hackbench.throughput\": {}}}", 100 + run)).unwrap();
        }
    }
    let import = || {
        let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
            .args(["--db", "i.db", "import", "result"])
            .current_dir(dir.path())
            .output()
            .expect("culprit runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = import();
    assert!(text.starts_with("imported 25 run(s)"), "{text}");
    let groups: Vec<&str> = text.lines().filter(|l| l.starts_with("  ")).collect();
    assert_eq!(groups.len(), 21, "{text}");
    assert_eq!(groups[20], "  ... and 3 more job, commit and machine group(s): 5 run(s), 0 already stored \
        (`culprit results` lists every stored run)", "{text}");
    let again = import();
    let last = again.lines().last().unwrap_or_default();
    assert!(last.starts_with("  ... and 3 more") && last.contains(": 0 run(s), 5 already stored"), "{again}");
}

#[test]
fn a_run_that_kept_its_raw_monitor_outputs_but_not_lkp_s_json_of_them_gets_their_series() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("result/t/p/host/361a2a229fa31ab7f2b236b5946e434964d00762/0");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("stats.json"), r#"{"t.score": 1}"#).unwrap();
    // lkp gzips vmstat's output; Culprit's vmstat parser reads it unpacked. An mpstat output that is no mpstat report
    // is named, and the run still imported.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../culprit-parse/tests/data/lkp/vmstat/1");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut encoder, &std::fs::read(fixture).unwrap()).unwrap();
    std::fs::write(run.join("vmstat.gz"), encoder.finish().unwrap()).unwrap();
    std::fs::write(run.join("mpstat"), "Segmentation fault\n").unwrap();
    let culprit = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
            .args(["--db", "i.db"])
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("culprit runs");
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = culprit(&["import", "result"]);
    let warnings: Vec<&str> = text.lines().filter(|l| l.starts_with("warning: ")).collect();
    assert_eq!(warnings.len(), 1, "{text}");
    assert!(warnings[0].contains("/0/mpstat: ") && warnings[0].contains("without the mpstat series"), "{text}");
    let record: serde_json::Value = serde_json::from_str(&culprit(&["results", "--run", "1", "--json"])).unwrap();
    let monitors = record["monitors"].as_array().unwrap();
    assert_eq!(monitors.len(), 1, "{record}");
    assert_eq!(monitors[0]["monitor"], "vmstat");
    assert_eq!(monitors[0]["series"]["cpu.us"], serde_json::json!([1.0, 2.0]), "{record}");
    assert_eq!(monitors[0]["times"], serde_json::json!([1421007515.0, 1421007516.0]), "{record}");
}

#[test]
fn qa45_a_tree_without_job_yaml_imported_from_inside_by_relative_paths_stores_nothing_twice() {
    // `culprit import result/hackbench` after `culprit import result` stored the runs a second time, as the job
    // `pipe-4-process-50%-lkp-skl-d01` on the machine `debian-12.cgz`, and the commit directory was refused.
    let dir = tempfile::tempdir().unwrap();
    let commit = "result/hackbench/pipe-4-process-50%/lkp-skl-d01/debian-12.cgz/x86_64-rhel-8.3/gcc-12/\
                  3333333333333333333333333333333333333333";
    for run in 0..3 {
        let path = dir.path().join(commit).join(run.to_string());
        std::fs::create_dir_all(&path).unwrap();
        std::fs::write(path.join("stats.json"), format!("{{\"hackbench.throughput\": 10{run}}}")).unwrap();
    }
    let culprit = |cwd: &Path, directory: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
            .arg("--db")
            .arg(dir.path().join("i.db"))
            .args(["import", directory])
            .current_dir(cwd)
            .output()
            .expect("culprit runs");
        assert!(out.status.success(), "{directory}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let place = "  hackbench-pipe-4-process-50% at 3333333333333333333333333333333333333333 on lkp-skl-d01: ";
    let first = culprit(dir.path(), "result");
    assert!(first.contains(&format!("{place}3 run(s)")), "{first}");
    let commit_dir = dir.path().join(commit);
    let inside = [(dir.path().to_path_buf(), "result/hackbench", 3), (dir.path().to_path_buf(), commit, 3)];
    let from_the_commit = [(commit_dir.clone(), ".", 3), (commit_dir.clone(), "1", 1), (commit_dir.join("2"), ".", 1)];
    for (cwd, directory, runs) in inside.into_iter().chain(from_the_commit) {
        let text = culprit(&cwd, directory);
        let expected = format!("; {runs} already stored\n{place}0 run(s), {runs} already stored");
        assert!(text.starts_with("imported 0 run(s)") && text.contains(&expected), "{directory}: {text}");
        assert_eq!(text.lines().count(), 2, "{directory}: {text}");
    }
}

#[test]
fn qa45_a_root_culprit_run_wrote_imports_from_inside_it_under_the_job_and_machine_it_ran() {
    // Only the directory given to --result-root imported; from its testcase's directory or below, the import was
    // refused for want of the levels naming the testcase, though each run's job.yaml and path name it.
    let dir = tempfile::tempdir().unwrap();
    let culprit = |db: &str, args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
            .args(["--db", db])
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("culprit runs");
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    std::fs::write(dir.path().join("rrjob.yaml"), "suite: rr\ntestcase: rr\ncommand:\n  cmd: \"echo 'score: 7'\"\n\
        \x20 capture:\n    score: 'score: (\\S+)'\n").unwrap();
    culprit("a.db", &["run", "rrjob.yaml", "-n", "2", "--label", "L", "--monitors", "none", "--result-root", "rr"]);
    let revisions: Vec<std::path::PathBuf> = walk(&dir.path().join("rr"))
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "L"))
        .collect();
    assert_eq!(revisions.len(), 1, "{revisions:?}");
    let revision = revisions[0].strip_prefix(dir.path()).unwrap().to_path_buf();
    let host = revision.parent().unwrap();
    let testcase = host.parent().unwrap().parent().unwrap();
    // What places a run: its job, testcase, revision and machine (an import dates a run by its files).
    let groups = |db: &str| {
        let json: serde_json::Value = serde_json::from_str(&culprit(db, &["results", "--json"])).unwrap();
        let place = ["job_id", "job", "testcase", "revision", "machine", "ok_runs"];
        let groups = json.as_array().unwrap().iter();
        groups.map(|g| place.map(|key| g[key].to_string())).collect::<Vec<_>>()
    };
    let first = culprit("b.db", &["import", &testcase.to_string_lossy()]);
    assert!(first.starts_with("imported 2 run(s)"), "{first}");
    // The job and machine `culprit run` stored the runs under, as an import of the whole root gives them.
    assert_eq!(groups("b.db"), groups("a.db"));
    for directory in [host.to_path_buf(), revision.clone(), revision.join("1"), "rr".into()] {
        let again = culprit("b.db", &["import", &directory.to_string_lossy()]);
        assert!(again.starts_with("imported 0 run(s)") && again.contains(" already stored"), "{again}");
    }
    let also = culprit("a.db", &["import", &testcase.to_string_lossy()]);
    assert!(also.starts_with("imported 0 run(s)") && also.contains("; 2 already stored"), "{also}");
    assert_eq!(groups("b.db"), groups("a.db"));
}

/// Every directory under `root`.
fn walk(root: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(root).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.push(path.clone());
            found.extend(walk(&path));
        }
    }
    found
}
