//! Findings of the second QA sweep of `run`, `split`, `compare` and the job checks, each with a short real run: a
//! closed stdout or stderr is a view going away, not a reason to stop measuring or writing.

use crate::common;

use crate::common::{culprit, refused, stdout, write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Two hackbench jobs (process and threads) of a few loops each: a matrix run that takes well under a second.
const MATRIX: &str = "suite: hackbench\ntestcase: hackbench\nnr_threads: 1\niterations: 1\nhackbench:\n  mode: [process, threads]\n  ipc: pipe\n  loops: 20\n";

/// Runs culprit with its stdout or stderr a pipe whose reader is gone before culprit writes to it (what `| head -1`
/// does after its first line), and returns the exit code and the other stream's text.
fn with_closed(stream: &str, db: &Path, args: &[&str], cwd: &Path) -> (Option<i32>, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_culprit"));
    command.current_dir(cwd).arg("--db").arg(db).args(args);
    if stream == "stdout" {
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
    } else {
        command.stderr(Stdio::piped()).stdout(Stdio::piped());
    }
    let mut child = command.spawn().unwrap();
    let kept = if stream == "stdout" {
        drop(child.stdout.take());
        child.stderr.take().map(|s| Box::new(s) as Box<dyn std::io::Read>)
    } else {
        drop(child.stderr.take());
        child.stdout.take().map(|s| Box::new(s) as Box<dyn std::io::Read>)
    };
    let mut text = String::new();
    if let Some(mut other) = kept {
        std::io::Read::read_to_string(&mut other, &mut text).unwrap();
    }
    (child.wait().unwrap().code(), text)
}

/// The number of ok runs per job that `results --json` reports.
fn ok_runs(db: &Path, cwd: &Path) -> Vec<u64> {
    let json: serde_json::Value = serde_json::from_str(&stdout(&culprit(db, &["results", "--json"], cwd))).unwrap();
    json.as_array().unwrap().iter().map(|g| g["ok_runs"].as_u64().unwrap()).collect()
}

#[test]
fn run_with_closed_stdout_measures_and_stores_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(dir.path(), "hbm.yaml", MATRIX);
    let db = dir.path().join("j.db");
    let args = ["run", job.to_str().unwrap(), "-n", "3", "--json", "--monitors", "none", "--label", "J"];
    let (code, stderr) = with_closed("stdout", &db, &args, dir.path());
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(ok_runs(&db, dir.path()), vec![3, 3], "{stderr}");
    // The table summary at the end goes the same way (groups are listed by revision, then job).
    let args = ["run", job.to_str().unwrap(), "-n", "2", "--monitors", "none", "--label", "T"];
    let (code, stderr) = with_closed("stdout", &db, &args, dir.path());
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(ok_runs(&db, dir.path()), vec![3, 3, 2, 2], "{stderr}");
}

#[test]
fn run_with_closed_stderr_measures_and_stores_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(dir.path(), "hbm.yaml", MATRIX);
    let db = dir.path().join("e.db");
    let args = ["run", job.to_str().unwrap(), "-n", "2", "--monitors", "none", "--label", "E"];
    let (code, stdout_text) = with_closed("stderr", &db, &args, dir.path());
    assert_eq!(code, Some(0), "{stdout_text}");
    assert!(stdout_text.contains("(2 ok, 0 failed)"), "{stdout_text}");
    assert_eq!(ok_runs(&db, dir.path()), vec![2, 2]);
}

#[test]
fn split_with_closed_stdout_writes_every_job_file() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(dir.path(), "hbm.yaml", MATRIX);
    let out = dir.path().join("sp");
    let (code, stderr) =
        with_closed("stdout", &dir.path().join("unused.db"), &["split", job.to_str().unwrap(), "-o", "sp"], dir.path());
    assert_eq!(code, Some(0), "{stderr}");
    let mut written: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    written.sort();
    assert_eq!(written, ["hbm-pipe-1-20-process-1.yaml", "hbm-pipe-1-20-threads-1.yaml"]);
}

/// A store with three runs of the hackbench matrix `job` at labels A and B.
fn two_labels(dir: &Path, job: &str) -> PathBuf {
    let job = write(dir, "job.yaml", job);
    let db = dir.join("s.db");
    for label in ["A", "B"] {
        stdout(&culprit(&db, &["run", job.to_str().unwrap(), "-n", "3", "--label", label, "--monitors", "none"], dir));
    }
    db
}

#[test]
fn compare_by_keeps_jobs_that_differ_in_other_params_apart() {
    let dir = tempfile::tempdir().unwrap();
    let job = MATRIX.replace("nr_threads: 1", "nr_threads: [1, 2]");
    let db = two_labels(dir.path(), &job);
    let text = stdout(&culprit(&db, &["compare", "A", "B", "--by", "nr_threads"], dir.path()));
    let titles: Vec<&str> = text.lines().filter(|l| l.contains(" by ")).collect();
    assert_eq!(
        titles,
        [
            "hackbench.throughput by nr_threads (hackbench.mode=process)",
            "hackbench.throughput by nr_threads (hackbench.mode=threads)"
        ],
        "{text}"
    );
    // Each block has one row per thread count, each the mean of its own 3 runs, not of 6 pooled ones.
    assert_eq!(text.lines().filter(|l| l.trim_start().starts_with(['1', '2'])).count(), 4, "{text}");
    // A param with one value over all jobs has nothing to sweep; the message names the params that do differ.
    let err = refused(&culprit(&db, &["compare", "A", "B", "--by", "loops"], dir.path()));
    assert!(err.contains("every job compared has loops = 20, so there is nothing to sweep"), "{err}");
    assert!(err.contains("they differ in hackbench.mode, nr_threads"), "{err}");
    // Every format is honoured, and a --metric matching two metrics shows both.
    let args = ["compare", "A", "B", "--by", "nr_threads", "--metric", "throughput_(best|worst)"];
    let csv = stdout(&culprit(&db, &[&args[..], &["--format", "csv"]].concat(), dir.path()));
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("metric,hackbench.mode,param,value,base,column,"), "{csv}");
    assert_eq!(lines.len(), 1 + 2 * 2 * 2, "{csv}");
    for metric in ["hackbench.throughput_best,", "hackbench.throughput_worst,"] {
        assert_eq!(lines.iter().filter(|l| l.starts_with(metric)).count(), 4, "{csv}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&culprit(&db, &[&args[..], &["--format", "json"]].concat(), dir.path()))).unwrap();
    let blocks = json.as_array().unwrap();
    assert_eq!(blocks.len(), 4, "{json}");
    assert_eq!(blocks[0]["group"]["hackbench.mode"], "process");
    assert_eq!(blocks[0]["rows"].as_array().unwrap().len(), 2);
    let markdown = stdout(&culprit(&db, &[&args[..], &["--format", "markdown"]].concat(), dir.path()));
    assert_eq!(markdown.lines().filter(|l| l.starts_with("### hackbench.throughput\\_")).count(), 4, "{markdown}");
    assert_eq!(markdown.lines().filter(|l| l.starts_with("| 1 | ") || l.starts_with("| 2 | ")).count(), 8);
}

#[test]
fn compare_by_orders_cpu_shares_by_value() {
    let dir = tempfile::tempdir().unwrap();
    let job = MATRIX.replace("nr_threads: 1", "nr_threads: [100%, 200%, 50%]").replace("[process, threads]", "process");
    let db = two_labels(dir.path(), &job);
    let csv = stdout(&culprit(&db, &["compare", "A", "B", "--by", "nr_threads", "--format", "csv"], dir.path()));
    let values: Vec<&str> = csv.lines().skip(1).filter_map(|l| l.split(',').nth(2)).collect();
    assert_eq!(values, ["50%", "100%", "200%"], "{csv}");
}

#[test]
fn compare_reports_a_constant_metric_that_moved_at_four_runs() {
    // The QA repro: a command whose captured rate is 1000/delay, the same in every run of a label.
    let dir = tempfile::tempdir().unwrap();
    let delay = dir.path().join("delay");
    let job = write(
        dir.path(),
        "cmd.yaml",
        &format!(
            "suite: mycmd\ncommand:\n  cmd: \"d=$(cat {}); python3 -c \\\"print('ops/s: %f' % (1000/$d))\\\"\"\n  \
             executions: 2\n  capture:\n    ops: 'ops/s: ([0-9.]+)'\n",
            delay.display()
        ),
    );
    let db = dir.path().join("c.db");
    for (label, d) in [("base", "0.1"), ("slow", "0.12")] {
        std::fs::write(&delay, d).unwrap();
        stdout(&culprit(
            &db,
            &["run", job.to_str().unwrap(), "-n", "4", "--label", label, "--monitors", "none"],
            dir.path(),
        ));
    }
    let table = stdout(&culprit(&db, &["compare", "base", "slow"], dir.path()));
    let row = table.lines().find(|l| l.ends_with("command.ops")).unwrap_or_else(|| panic!("{table}"));
    assert!(row.contains("10000") && row.contains("-16.7%") && row.contains("8333"), "{row}");
    let csv = stdout(&culprit(&db, &["compare", "base", "slow", "--all", "--format", "csv"], dir.path()));
    let line = csv.lines().find(|l| l.starts_with("command.ops,")).unwrap_or_else(|| panic!("{csv}"));
    assert!(line.contains(",changed,"), "{line}");
}

#[test]
fn refused_jobs_name_every_problem_and_leave_no_store_behind() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bad.db");
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "dup.yaml",
            "suite: x\nhackbench:\n  loops: 100\nhackbench:\n  loops: 200\n",
            &["dup.yaml:4: 'hackbench' is given a second time in the same hash (first at line 2)"],
        ),
        (
            "unk.yaml",
            "suite: x\nhackbnch:\n  mode: process\n",
            &["unk.yaml:2: 'hackbnch' is not a program", "\n  also: unk.yaml: the job selects no benchmark program"],
        ),
        (
            "l0.yaml",
            "suite: hackbench\nnr_threads: 1\nhackbench:\n  loops: 0\n",
            &["l0.yaml:4", "'loops' = '0': 0 would run nothing"],
        ),
        (
            "i0.yaml",
            "suite: hackbench\nnr_threads: 1\niterations: 0\nhackbench:\n  loops: 20\n",
            &["i0.yaml:3", "'iterations' = '0': 0 would run nothing"],
        ),
    ];
    for (name, body, expected) in cases {
        write(dir.path(), name, body);
        let err = refused(&culprit(&db, &["run", name, "-n", "1", "--label", "X"], dir.path()));
        for text in *expected {
            assert!(err.contains(text), "{name}: {err}");
        }
        assert!(!err.contains("more problems"), "{err}");
        assert!(!db.exists(), "{name}: a refused run left {} behind", db.display());
    }
    write(dir.path(), "hb.yaml", MATRIX);
    let err = refused(&culprit(&db, &["run", "hb.yaml", "-n", "0", "--label", "X"], dir.path()));
    assert!(err.contains("--repeat must be at least 1") && !db.exists(), "{err}");
    // Outside a git repository, run points at what it does take, not at a --repo it does not have.
    let err = refused(&culprit(&db, &["run", "hb.yaml", "-n", "1", "--commit", "HEAD"], dir.path()));
    assert!(!err.contains("--repo") && err.contains("--label NAME") && !db.exists(), "{err}");
    // A command that only reads does not turn an empty file into a store.
    let empty = write(dir.path(), "empty.db", "");
    let err = refused(&culprit(&empty, &["results"], dir.path()));
    assert!(err.contains("is an empty file, not a result store"), "{err}");
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
}

#[test]
fn results_of_an_unfiltered_store_do_not_speak_of_matching() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(dir.path(), "hbm.yaml", MATRIX);
    let db = dir.path().join("r.db");
    stdout(&culprit(&db, &["run", job.to_str().unwrap(), "-n", "1", "--label", "R", "--monitors", "none"], dir.path()));
    let text = stdout(&culprit(&db, &["results", "--failures"], dir.path()));
    assert_eq!(text.trim(), format!("no failed runs in {}", db.display()));
    let text = stdout(&culprit(&db, &["results", "--failures", "--job", "nosuch"], dir.path()));
    assert!(text.contains("match --job nosuch"), "{text}");
}

#[test]
fn qa_31_compare_csv_of_several_jobs_is_one_table_with_a_job_column() {
    // Each job's CSV used to follow the last under a header of its own, with nothing on a line saying its job: the
    // file did not load as one table, and the process and threads rows of a metric could not be told apart.
    let dir = tempfile::tempdir().unwrap();
    let db = two_labels(dir.path(), MATRIX);
    let csv = stdout(&culprit(&db, &["compare", "A", "B", "--all", "--format", "csv"], dir.path()));
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("metric,job,class,kind,direction,base,column,"), "{csv}");
    assert_eq!(lines.iter().filter(|l| l.starts_with("metric,")).count(), 1, "{csv}");
    let columns = lines[0].split(',').count();
    assert!(lines.iter().all(|l| l.split(',').count() == columns), "{csv}");
    let jobs: Vec<&str> =
        lines.iter().filter(|l| l.starts_with("hackbench.throughput,")).filter_map(|l| l.split(',').nth(1)).collect();
    assert_eq!(jobs, ["job-pipe-1-20-process-1", "job-pipe-1-20-threads-1"], "{csv}");
}

#[test]
fn qa_31_compare_with_a_side_whose_every_run_failed_says_so() {
    // The table's note said "no metric changed significantly" when every run of a side failed, which reads as a
    // result. Three failed runs against three good ones are a change of the failed-runs row since review 12 (failed
    // in every run of one side and in none of the other), so the table shows it, and says why the rest is undecided.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    common::store_ok_and_failed_runs(dir.path(), &db, "good", "broken");
    let out = culprit(&db, &["compare", "good", "broken"], dir.path());
    let (table, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{err}");
    assert!(table.contains("           :3          100%           3:3     culprit.failed_runs\n"), "{table}");
    assert!(table.contains("culprit.failed_runs +100.0 regression (3 vs 3 runs"), "{table}");
    assert!(table.contains("metric(s) inconclusive on broken: every run at broken failed\n"), "{table}");
    assert!(!err.contains("no metric changed") && !table.contains("no metric changed"), "{err}");
}

#[test]
fn qa_31_compare_of_two_runs_a_side_says_nothing_was_decided_despite_a_pass_row() {
    // A pass/fail row (stress-ng's `<stressor>.pass`) is tested without a minimum of runs, so at 2 runs a side it was
    // "unchanged" while every measurement was untested, and the note said "no metric changed significantly".
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: qa\ntestcase: qa\ncommand:\n  cmd: \"echo 'ops/s: 42 pass: 1'\"\n  capture:\n    \
               ops: 'ops/s: ([0-9.]+)'\n    pass: 'pass: ([0-9]+)'\n";
    let job = write(dir.path(), "job.yaml", job);
    let db = dir.path().join("s.db");
    for label in ["A", "B"] {
        stdout(&culprit(
            &db,
            &["run", job.to_str().unwrap(), "-n", "2", "--label", label, "--monitors", "none"],
            dir.path(),
        ));
    }
    let out = culprit(&db, &["compare", "A", "B"], dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("nothing decided, a verdict needs 3 successful runs a side"), "{err}");
    assert!(!err.contains("no metric changed"), "{err}");
}

#[test]
fn qa_31_run_summary_and_compare_print_the_same_percent_stddev() {
    // The run summary divided by n - 1 and the compare table, as lkp does, by n: two runs of 90 and 110 read
    // "±14.1%" after the run and "±10%" in the table of the same runs.
    let dir = tempfile::tempdir().unwrap();
    let flag = dir.path().join("flag");
    let cmd =
        format!("if [ -e {0} ]; then rm {0}; echo ops/s: 110; else touch {0}; echo ops/s: 90; fi", flag.display());
    let job = format!("suite: qa\ntestcase: qa\ncommand:\n  cmd: '{cmd}'\n  capture:\n    ops: 'ops/s: ([0-9.]+)'\n");
    let job = write(dir.path(), "job.yaml", &job);
    let db = dir.path().join("s.db");
    let run = |label: &str| {
        stdout(&culprit(
            &db,
            &["run", job.to_str().unwrap(), "-n", "2", "--label", label, "--monitors", "none"],
            dir.path(),
        ))
    };
    let summary = run("A");
    assert!(summary.lines().any(|l| l.ends_with("100 ± 10.0%  command.ops")), "{summary}");
    run("B");
    let table = stdout(&culprit(&db, &["compare", "A", "B", "--all", "--metric", "ops$"], dir.path()));
    let row = table.lines().find(|l| l.ends_with("command.ops")).unwrap_or_else(|| panic!("{table}"));
    assert!(row.trim_start().starts_with("100.00 ± 10%"), "{row}");
}
