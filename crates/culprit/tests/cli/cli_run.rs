//! End-to-end tests of `culprit run`, `split`, `parse` and `results` through the real binary, with real benchmarks
//! (short hackbench and shell commands) and every kind of bad input the run issue lists.

use crate::common;

use crate::common::{culprit, write};
use std::path::{Path, PathBuf};
use std::process::Output;

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn results_json(db: &Path, cwd: &Path) -> serde_json::Value {
    let out = culprit(db, &["results", "--json"], cwd);
    assert!(out.status.success(), "{:?}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn runs_a_real_matrix_job_with_monitors_and_stores_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let job = write(
        dir.path(),
        "hb.yaml",
        "suite: hackbench\ntestcase: hackbench\nnr_threads: 1\nhackbench:\n  mode: [process, threads]\n  ipc: pipe\n  loops: 200\nvmstat:\nmeminfo:\n",
    );
    let root = dir.path().join("lkp-root");
    let out = culprit(&db, &["run", job.to_str().unwrap(), "--repeat", "2", "--label", "t", "--result-root", root.to_str().unwrap()], dir.path());
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("hackbench.throughput"), "{stdout}");
    assert!(stdout.contains("hb-pipe-200-process-1"), "{stdout}");
    let groups = results_json(&db, dir.path());
    let groups = groups.as_array().unwrap();
    assert_eq!(groups.len(), 2);
    for g in groups {
        assert_eq!(g["ok_runs"], 2);
        assert_eq!(g["failed_runs"], 0);
    }
    // The lkp result root has per-run stats.json and per-revision matrix.json with the monitor metrics in it.
    let matrix: Vec<PathBuf> = common::files_under(&root)
        .into_iter()
        .filter(|p| p.ends_with("matrix.json") && p.with_file_name("avg.json").exists())
        .collect();
    assert_eq!(matrix.len(), 2, "{:?}", common::files_under(&root));
    let m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&matrix[0]).unwrap()).unwrap();
    assert_eq!(m["hackbench.throughput"].as_array().unwrap().len(), 2);
    assert!(m.get("vmstat.cpu.us").is_some(), "{m}");
    assert!(m.get("meminfo.MemFree").is_some() || m.as_object().unwrap().keys().any(|k| k.starts_with("meminfo.")), "{m}");
}

#[test]
fn command_job_captures_numbers_and_killed_runs_are_stored_as_failures() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let job = write(
        dir.path(),
        "cmd.yaml",
        "suite: command\ncommand:\n  cmd: \"echo 'ops: 42'\"\n  executions: 3\n  capture:\n    ops: 'ops: ([0-9]+)'\n",
    );
    let out = culprit(&db, &["run", job.to_str().unwrap(), "-n", "3", "--label", "a", "--monitors", "none", "--json"], dir.path());
    assert!(out.status.success(), "{:?}", text(&out));
    let lines: Vec<serde_json::Value> =
        text(&out).0.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3);
    for l in &lines {
        assert_eq!(l["metrics"]["command.ops"], 42.0);
        assert!(l["metrics"]["command.elapsed_time"].as_f64().unwrap() > 0.0);
    }

    // A benchmark killed by a signal: stored as a failed run with its reason, exit status 1, earlier runs kept.
    let killed = write(dir.path(), "killed.yaml", "suite: command\ncommand:\n  cmd: 'echo partial; kill -9 $$'\n");
    let out = culprit(&db, &["run", killed.to_str().unwrap(), "-n", "2", "--label", "a", "--monitors", "none"], dir.path());
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("killed by signal 9"), "{stderr}");
    let groups = results_json(&db, dir.path());
    let groups = groups.as_array().unwrap();
    assert_eq!(groups.len(), 2);
    assert_eq!(groups[0]["ok_runs"], 3);
    assert_eq!(groups[1]["failed_runs"], 2);
    let out = culprit(&db, &["results", "--failures"], dir.path());
    let listed = text(&out).0;
    assert_eq!(listed.matches("killed by signal 9").count(), 2, "{listed}");

    // A job timeout kills the benchmark and fails the run.
    let slow = write(dir.path(), "slow.yaml", "suite: command\ntimeout: 1s\ncommand:\n  cmd: sleep 30\n");
    let out = culprit(&db, &["run", slow.to_str().unwrap(), "-n", "1", "--label", "a", "--monitors", "none"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).1.contains("timeout"), "{:?}", text(&out));
}

#[test]
fn bad_inputs_get_clear_errors_and_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let cases: &[(&str, &str, &[&str])] = &[
        ("malformed.yaml", "suite: x\nhackbench:\n  loops: [1, 2\n", &["malformed.yaml:", "malformed YAML"]),
        ("unknown-param.yaml", "hackbench:\n  loopz: 10\n", &["unknown-param.yaml:2", "loopz"]),
        ("unknown-program.yaml", "frobnicate:\n", &["frobnicate", "not a program"]),
        ("bad-size.yaml", "fio:\n  test_size: 12Q\n", &["test_size", "12Q"]),
        ("bad-share.yaml", "hackbench:\n  nr_threads: lots\n", &["nr_threads", "lots"]),
        ("missing-binary.yaml", "fsmark:\n  filesize: 4k\n", &["fs_mark", "not installed"]),
        ("empty.yaml", "", &["empty"]),
        ("no-program.yaml", "runtime: 5s\n", &["no benchmark program"]),
    ];
    for (name, body, wanted) in cases {
        let job = write(dir.path(), name, body);
        let out = culprit(&db, &["run", job.to_str().unwrap(), "--label", "x"], dir.path());
        let (_, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        for w in *wanted {
            assert!(stderr.contains(w), "{name}: expected {w:?} in: {stderr}");
        }
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
    let out = culprit(&db, &["run", "/nonexistent/job.yaml", "--label", "x"], dir.path());
    assert!(text(&out).1.contains("/nonexistent/job.yaml"));
    // Outside a git repository without --label the message says what to do.
    let ok_job = write(dir.path(), "ok.yaml", "command:\n  cmd: 'true'\n");
    let out = culprit(&db, &["run", ok_job.to_str().unwrap()], dir.path());
    assert!(text(&out).1.contains("--label"), "{:?}", text(&out));
    // Refused runs leave no store behind, not even an empty one.
    assert!(!db.exists(), "{} was created", db.display());
}

#[test]
fn split_writes_one_file_per_matrix_point_with_lkp_names() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(dir.path(), "fio-basic.yaml", "suite: fio-basic\nruntime: 5s\nfio-setup-basic:\n  rw: [randread, randwrite]\n  bs: [4k, 64k]\n  test_size: 64M\nfio:\n");
    let out_dir = dir.path().join("out");
    let out = culprit(dir.path().join("r.db"), &["split", job.to_str().unwrap(), "-o", out_dir.to_str().unwrap()], dir.path());
    assert!(out.status.success(), "{:?}", text(&out));
    let mut names: Vec<String> =
        std::fs::read_dir(&out_dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(names.iter().all(|n| n.starts_with("fio-basic-") && n.ends_with(".yaml")), "{names:?}");
    assert!(names.iter().any(|n| n.contains("4k") && n.contains("randwrite")), "{names:?}");
}

#[test]
fn parse_prints_lkp_lines_and_rejects_garbage() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../culprit-parse/tests/data/lkp");
    let out = culprit(dir.path().join("r.db"), &["parse", "fsmark", fixtures.join("fsmark/1").to_str().unwrap()], dir.path());
    let expected = std::fs::read_to_string(fixtures.join("fsmark/1.yaml")).unwrap();
    assert_eq!(text(&out).0.trim_end(), expected.trim_end());
    let out = culprit(dir.path().join("r.db"), &["parse", "fio", fixtures.join("fio/fio-multi-instance").to_str().unwrap()], dir.path());
    let expected = std::fs::read_to_string(fixtures.join("fio/fio-multi-instance.yaml")).unwrap();
    assert_eq!(text(&out).0.trim_end(), expected.trim_end());
    let garbage = write(dir.path(), "garbage", "\u{1}\u{2} nothing here\n");
    let out = culprit(dir.path().join("r.db"), &["parse", "hackbench", garbage.to_str().unwrap()], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("hackbench"), "{:?}", text(&out));
    let out = culprit(dir.path().join("r.db"), &["parse", "nosuch", garbage.to_str().unwrap()], dir.path());
    assert!(text(&out).1.contains("no parser"), "{:?}", text(&out));
}

#[test]
fn an_lkp_result_root_imports_into_the_same_jobs_once() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(dir.path(), "hb.yaml", "suite: hackbench\nnr_threads: 1\nhackbench:\n  loops: 100\n");
    let root = dir.path().join("root");
    let measured = dir.path().join("measured.db");
    let out = culprit(&measured, &["run", job.to_str().unwrap(), "-n", "2", "--label", "l", "--monitors", "none", "--result-root", root.to_str().unwrap()], dir.path());
    assert!(out.status.success(), "{:?}", text(&out));
    let imported = dir.path().join("imported.db");
    let first = culprit(&imported, &["import", root.to_str().unwrap()], dir.path());
    assert!(first.status.success(), "{:?}", text(&first));
    assert!(text(&first).0.contains("imported 2 run(s)"), "{:?}", text(&first));
    let again = culprit(&imported, &["import", root.to_str().unwrap()], dir.path());
    assert!(text(&again).0.contains("imported 0 run(s)") && text(&again).0.contains("2 already stored"), "{:?}", text(&again));
    let (a, b) = (results_json(&measured, dir.path()), results_json(&imported, dir.path()));
    assert_eq!(a[0]["job_id"], b[0]["job_id"], "{a}\n{b}");
    assert_eq!(b[0]["ok_runs"], 2);
}

#[test]
fn unicode_labels_go_through_run_results_and_compare() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let job = write(dir.path(), "c.yaml", "suite: command\ncommand:\n  cmd: 'true'\n");
    for label in ["réglage-été-très-long", "réglage-hiver-très-long"] {
        let out = culprit(&db, &["run", job.to_str().unwrap(), "-n", "3", "--label", label, "--monitors", "none"], dir.path());
        assert!(out.status.success(), "{:?}", text(&out));
    }
    let out = culprit(&db, &["results"], dir.path());
    assert!(text(&out).0.contains("label:réglage-été-très-long"), "{:?}", text(&out));
    let out = culprit(&db, &["compare", "réglage-été-très-long", "réglage-hiver-très-long", "--all"], dir.path());
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("command.elapsed_time"), "{stdout}");
}

#[test]
fn a_read_only_store_is_refused_before_any_benchmark_runs() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let job = write(dir.path(), "c.yaml", "suite: command\ncommand:\n  cmd: 'touch ran'\n");
    let first = culprit(&db, &["run", job.to_str().unwrap(), "-n", "1", "--label", "a", "--monitors", "none"], dir.path());
    assert!(first.status.success(), "{:?}", text(&first));
    std::fs::remove_file(dir.path().join("ran")).unwrap();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    let out = culprit(&db, &["run", job.to_str().unwrap(), "-n", "1", "--label", "a", "--monitors", "none"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{:?}", text(&out));
    assert!(text(&out).1.contains("read-only"), "{:?}", text(&out));
    assert!(!dir.path().join("ran").exists(), "the benchmark ran although nothing could be stored");
    // What was stored is still there and readable.
    assert_eq!(results_json(&db, dir.path())[0]["ok_runs"], 1);
}

#[test]
fn results_run_shows_a_stored_run_with_its_raw_output_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    // The failure reasons tell the user to read the raw output; this is where it can be read.
    write(dir.path(), "fails.yaml", "suite: fails\ncommand:\n  cmd: \"echo 'ops/s: nan'; echo oops >&2; exit 3\"\n");
    let out = culprit(&db, &["run", "fails.yaml", "--label", "A", "--monitors", "none"], dir.path());
    assert_eq!(out.status.code(), Some(1), "{:?}", text(&out));
    let (listed, _) = text(&culprit(&db, &["results", "--failures"], dir.path()));
    let id = listed.split_whitespace().nth(1).expect("a run id").to_string();
    let out = culprit(&db, &["results", "--run", &id], dir.path());
    let (shown, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(shown.starts_with(&format!("run {id} ")), "{shown}");
    assert!(shown.contains("outcome: failed:") && shown.contains("exit status 3"), "{shown}");
    assert!(shown.contains("raw output command") && shown.contains("ops/s: nan"), "{shown}");
    assert!(shown.contains("stderr:\noops"), "{shown}");
    let json: serde_json::Value =
        serde_json::from_slice(&culprit(&db, &["results", "--run", &id, "--json"], dir.path()).stdout).unwrap();
    assert_eq!(json["raw_outputs"][0]["content"], "ops/s: nan\n");
    let missing = culprit(&db, &["results", "--run", "999"], dir.path());
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing).1.contains("run 999 does not exist"), "{:?}", text(&missing));
}

#[test]
fn qa_31_parse_of_a_directory_without_the_programs_file_says_so() {
    // A directory is read as a result root, whose raw output is the file named after the program; without one the
    // parser was given nothing and `no hackbench results found` blamed an output that was never read.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("0");
    std::fs::create_dir(&root).unwrap();
    write(&root, "stress-ng", "stress-ng: info:  [1] dispatching hogs: 1 cpu\n");
    let out = culprit(dir.path().join("r.db"), &["parse", "hackbench", root.to_str().unwrap()], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out).1;
    assert!(err.contains("raw output in a file named `hackbench`, and it has only stress-ng"), "{err}");
    assert!(!err.contains("no hackbench results"), "{err}");
    // The program whose output it holds is named, with the command that parses it.
    let instead = format!("it holds the raw output of stress-ng: culprit parse stress-ng {}", root.display());
    assert!(err.contains(&instead), "{err}");
    // QA 58: of a directory of many files, a few are listed, not every one.
    for k in 0..30 {
        write(&root, &format!("log.{k:02}"), "x\n");
    }
    let out = culprit(dir.path().join("r.db"), &["parse", "hackbench", root.to_str().unwrap()], dir.path());
    let err = text(&out).1;
    assert!(err.contains("and it has 31 files (log.00, log.01, "), "{err}");
    assert!(!err.contains("log.29"), "{err}");
    // The file named after the program is read, as lkp's run-stats does.
    let raw = "Running in process mode with 1 groups using 40 file descriptors each (== 40 tasks)\n\
               Each sender will pass 100 messages of 100 bytes\nTime: 0.043\n";
    write(&root, "hackbench", raw);
    let out = culprit(dir.path().join("r.db"), &["parse", "hackbench", root.to_str().unwrap()], dir.path());
    assert!(text(&out).0.starts_with("throughput: "), "{:?}", text(&out));
}

/// A 3% change in every run (a captured number, so each side is constant) is a change by default and none under
/// `compare --min-change 5`; lkp's rules have their own floors, so the two flags are refused together.
#[test]
fn compare_min_change_leaves_out_a_smaller_change() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let yaml = "suite: command\ncommand:\n  cmd: cat ops.txt\n  capture.ops: 'ops: (\\d+)'\n";
    let job = write(dir.path(), "c.yaml", yaml);
    for (label, ops) in [("before", "1000"), ("after", "970")] {
        std::fs::write(dir.path().join("ops.txt"), format!("ops: {ops}\n")).unwrap();
        let args = ["run", job.to_str().unwrap(), "-n", "5", "--label", label, "--monitors", "none"];
        let out = culprit(&db, &args, dir.path());
        assert!(out.status.success(), "{:?}", text(&out));
    }
    let base = ["compare", "before", "after", "--metric", "command.ops"];
    let compare = |extra: &[&str]| {
        let out = culprit(&db, &[&base[..], extra].concat(), dir.path());
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{stdout}\n{stderr}");
        stdout
    };
    let default = compare(&[]);
    assert!(default.contains("-3.0%") && default.contains("command.ops"), "{default}");
    let floored = culprit(&db, &[&base[..], &["--min-change", "5"]].concat(), dir.path());
    let (stdout, stderr) = text(&floored);
    assert!(floored.status.success() && !stdout.contains("-3.0%"), "{stdout}\n{stderr}");
    assert!(stderr.contains("no metric changed significantly by 5% or more (--min-change)"), "{stderr}");
    let listed = compare(&["--min-change", "5", "--all"]);
    assert!(listed.contains("command.ops"), "{listed}");
    let both = culprit(&db, &["compare", "before", "after", "--min-change", "5", "--lkp-rules"], dir.path());
    assert!(!both.status.success() && text(&both).1.contains("cannot be used with"), "{:?}", text(&both));
}

/// A job that names no monitor gets the default set, lkp's proc-vmstat among them (lkp runs it by default, and the
/// robot's reports explain memory regressions with its counters).
#[test]
fn a_job_without_monitor_keys_gets_the_default_set_with_proc_vmstat() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let job = write(dir.path(), "quiet.yaml", "command:\n  cmd: \"echo 'ops/s: 1'\"\n  capture:\n    ops: 'ops/s: ([0-9]+)'\n");
    let out = culprit(&db, &["run", job.to_str().unwrap(), "-n", "1", "--label", "a", "--json"], dir.path());
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let line: serde_json::Value = serde_json::from_str(stdout.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    let metrics = &line["metrics"];
    let names: Vec<&String> = metrics.as_object().map(|m| m.keys().collect()).unwrap_or_default();
    for monitor in ["vmstat.", "proc-vmstat.", "meminfo.", "interrupts.", "softirqs.", "diskstats."] {
        assert!(names.iter().any(|name| name.starts_with(monitor)), "no {monitor}* metric: {line}");
    }
    assert!(metrics["proc-vmstat.nr_free_pages"].as_f64().is_some_and(|free| free > 0.0), "{line}");
    // Starting the shell alone faults pages in, so the run's count of page faults is not zero.
    let faults = metrics["proc-vmstat.pgfault"].as_f64().unwrap_or_else(|| panic!("{line}"));
    assert!(faults > 0.0, "no page fault counted during the run: {line}");
}

#[test]
fn a_run_writing_nul_bytes_to_stderr_is_stored_in_sqlite_with_a_readable_reason() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("nul.db");
    common::a_run_writing_nul_bytes_is_stored_with_a_readable_reason(db.to_str().unwrap(), dir.path(), "garbage");
}
