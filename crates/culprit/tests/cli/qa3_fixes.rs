//! Findings of the third QA sweep of `run`, `compare`, `report` and `parse`, each with a short real run or a store
//! made of a few.

use crate::common;

use crate::common::{culprit, refused, stdout, write};
use std::path::Path;

#[test]
fn qa_31_a_stressor_the_installed_stress_ng_lacks_is_refused_before_anything_runs() {
    // stress-ng itself refuses an unknown stressor only when it starts: every run was stored as failed and `run`
    // exited 1, instead of the job being refused with its line as every other bad param is.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    write(dir.path(), "j.yaml", "suite: s\nnr_threads: 1\ntesttime: 1s\nstress-ng:\n  test: nosuchstressor\n");
    let err = refused(&culprit(&db, &["run", "j.yaml", "-n", "1", "--label", "X"], dir.path()));
    assert!(err.contains("in job file j.yaml:5"), "{err}");
    assert!(err.contains("'test' = 'nosuchstressor': the installed stress-ng has no stressor"), "{err}");
    assert!(err.contains("`stress-ng --stressors` lists them"), "{err}");
    assert!(!db.exists(), "a refused run left {} behind", db.display());
    // A typo names what was meant; a class is checked the same way.
    write(dir.path(), "t.yaml", "suite: s\nnr_threads: 1\ntesttime: 1s\nstress-ng:\n  test: xatr\n");
    let err = refused(&culprit(&db, &["run", "t.yaml", "-n", "1", "--label", "X"], dir.path()));
    assert!(err.contains("(the closest: xattr"), "{err}");
    write(dir.path(), "c.yaml", "suite: s\nnr_threads: 1\ntesttime: 1s\nstress-ng:\n  class: nosuchclass\n");
    let err = refused(&culprit(&db, &["run", "c.yaml", "-n", "1", "--label", "X"], dir.path()));
    assert!(err.contains("c.yaml:5") && err.contains("has no class 'nosuchclass'"), "{err}");
    assert!(!db.exists());
    // A stressor it has still runs.
    write(dir.path(), "ok.yaml", "suite: s\nnr_threads: 1\ntesttime: 1s\nstress-ng:\n  test: nop\n");
    let text = stdout(&culprit(&db, &["run", "ok.yaml", "-n", "1", "--label", "X", "--monitors", "none"], dir.path()));
    assert!(text.contains("(1 ok, 0 failed)"), "{text}");
}

#[test]
fn qa_31_report_of_several_jobs_reports_the_one_that_regressed() {
    // The report took the first job that ran at both revisions, which had no change, while another job of the
    // matrix had regressed; the job with the strongest change by the compare verdicts is reported, and the
    // message says why and still points at --job.
    let dir = tempfile::tempdir().unwrap();
    let job =
        "suite: qa\ntestcase: qa\ncommand:\n  cmd:\n    - \"echo rate: 42\"\n    - \"echo rate: $(cat up)\"\n    \
               - \"echo rate: $(cat down)\"\n  capture:\n    throughput: 'rate: ([0-9.]+)'\n";
    let job = write(dir.path(), "job.yaml", job);
    let db = dir.path().join("s.db");
    for (label, up, down) in [("A", "100", "100"), ("B", "150", "50"), ("C", "100", "100")] {
        write(dir.path(), "up", up);
        write(dir.path(), "down", down);
        stdout(&culprit(
            &db,
            &["run", job.to_str().unwrap(), "-n", "4", "--label", label, "--monitors", "none"],
            dir.path(),
        ));
    }
    let report = |args: &[&str]| {
        let out = culprit(&db, &[&["report", "--compare"][..], args].concat(), dir.path());
        (stdout(&out), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (text, err) = report(&["A", "B"]);
    assert!(err.contains("3 jobs ran at every revision; reporting job-echo_rate:___cat_down_"), "{err}");
    assert!(err.contains("with a regression: command.throughput -50.0% regression"), "{err}");
    assert!(err.contains("(choose another with --job)"), "{err}");
    assert!(text.contains("\tcmd: echo rate: $(cat down)"), "{text}");
    // The other way round the same job improved and the other regressed.
    let (_, err) = report(&["B", "A"]);
    assert!(err.contains("reporting job-echo_rate:___cat_up_"), "{err}");
    // When no job changed, the first is reported, saying so.
    let (_, err) = report(&["A", "C", "--metric", "command.throughput"]);
    // The job's capture is left out of its name, which ends with the job's id instead (QA 45).
    let first = "reporting job-echo_rate:_42~6ab4b564, the first: no job's command.throughput changed";
    assert!(err.contains(first), "{err}");
}

#[test]
fn qa_31_compare_by_a_param_no_job_has_names_the_params_to_sweep() {
    // "has no param 'nosuch'" left the user guessing which names --by takes.
    let dir = tempfile::tempdir().unwrap();
    let matrix = "suite: qa\ntestcase: qa\ncommand:\n  cmd: [\"echo a\", \"echo b\"]\n  executions: [1, 2]\n";
    let single = "suite: qa\ntestcase: qa\ncommand:\n  cmd: echo c\n  executions: 1\n";
    let db = dir.path().join("s.db");
    for (name, body) in [("m.yaml", matrix), ("s.yaml", single)] {
        write(dir.path(), name, body);
        for label in ["A", "B"] {
            stdout(&culprit(&db, &["run", name, "-n", "1", "--label", label, "--monitors", "none"], dir.path()));
        }
    }
    let err = refused(&culprit(&db, &["compare", "A", "B", "--job", "m-*", "--by", "nosuch"], dir.path()));
    assert!(err.contains("no job compared has a param 'nosuch'"), "{err}");
    assert!(err.contains("The jobs compared differ in command.cmd, command.executions; give one of those to --by"));
    let err = refused(&culprit(&db, &["compare", "A", "B", "--job", "s-*", "--by", "nosuch"], dir.path()));
    assert!(err.contains("No param differs between the jobs compared"), "{err}");
    assert!(err.contains("they have command.cmd, command.executions"), "{err}");
}

#[test]
fn qa_31_compare_footnote_names_the_side_whose_every_run_failed() {
    // "inconclusive on X: every run failed on the other side" read as "on the side other than X" when X itself was
    // the side whose every run failed; the footnote names that side by its label.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    common::store_ok_and_failed_runs(dir.path(), &db, "OK", "X");
    let table = stdout(&culprit(&db, &["compare", "OK", "X"], dir.path()));
    assert!(table.contains("metric(s) inconclusive on X: every run at X failed\n"), "{table}");
    assert!(!table.contains("other side"), "{table}");
    // Nor does the table end as if nothing had changed: its rows were not decided, and the failed-runs row (every
    // run of X against none of OK) is a change since review 12.
    assert!(table.contains("culprit.failed_runs +100.0 regression") && !table.contains("no metric changed"), "{table}");
    let table = stdout(&culprit(&db, &["compare", "X", "OK"], dir.path()));
    assert!(table.contains("metric(s) inconclusive on OK: every run at X (the base) failed\n"), "{table}");
    let markdown = stdout(&culprit(&db, &["compare", "OK", "X", "--all", "--format", "markdown"], dir.path()));
    assert!(markdown.contains("| inconclusive: every run at X failed |"), "{markdown}");
}

#[test]
fn qa_31_parse_sysbench_of_a_result_root_reads_its_sysbench_program_file() {
    // A result root keeps a sysbench run's output in a file named after its lkp program (`sysbench-cpu`); `parse
    // sysbench DIR` looked for a file named `sysbench` only and refused the root.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("0");
    std::fs::create_dir(&root).unwrap();
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("../culprit-parse/tests/data/real/sysbench");
    std::fs::copy(real.join("cpu"), root.join("sysbench-cpu")).unwrap();
    write(&root, "stats.json", "{}");
    let db = dir.path().join("r.db");
    let out = culprit(&db, &["parse", "sysbench", root.to_str().unwrap()], dir.path());
    let expected = std::fs::read_to_string(real.join("cpu.expected")).unwrap();
    assert_eq!(stdout(&out).trim_end(), expected.trim_end());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("reading ") && err.contains("sysbench-cpu, the sysbench output of that result root"), "{err}");
    // With the outputs of two sysbench programs, the message names them and the command to give.
    std::fs::copy(real.join("mutex"), root.join("sysbench-mutex")).unwrap();
    let err = refused(&culprit(&db, &["parse", "sysbench", root.to_str().unwrap()], dir.path()));
    assert!(err.contains("the outputs of 2 programs of sysbench (sysbench-cpu, sysbench-mutex)"), "{err}");
    assert!(err.contains("name the one to parse, e.g. culprit parse sysbench-cpu "), "{err}");
}

#[test]
fn qa_31_another_users_store_is_read_and_refused_for_new_runs() {
    // A colleague's store (a file this user may not write, in a directory it may not write) could not even be
    // listed: SQLite opened it read-only without saying so, and the switch to the WAL journal then failed; and the
    // WAL database could not be read where its shared-memory file could not be created. Now `results` reads it, and
    // `run` still refuses it before anything runs. Only root can be another user here, so elsewhere this test has
    // nobody to be and checks nothing.
    let uid = std::process::Command::new("id").arg("-u").output().unwrap();
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let db = dir.path().join("s.db");
    common::store_ok_and_failed_runs(dir.path(), &db, "OK", "X");
    // The binary may sit where `nobody` cannot reach it (a clone under /root): a copy beside the store.
    let binary = dir.path().join("culprit");
    std::fs::copy(env!("CARGO_BIN_EXE_culprit"), &binary).unwrap();
    let as_nobody = |args: &str| {
        let command = format!("cd {} && ./culprit --db s.db {args}", dir.path().display());
        std::process::Command::new("su").args(["nobody", "-s", "/bin/sh", "-c", &command]).output().unwrap()
    };
    let listed = as_nobody("results");
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.status.success(), "{text}\n{}", String::from_utf8_lossy(&listed.stderr));
    assert!(text.contains("label:OK") && text.contains("label:X"), "{text}");
    let refused = as_nobody("run job.yaml -n 1 --label Y --monitors none --scratch /tmp");
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert!(err.contains("is read-only"), "{err}");
    // Refused before the job ran, not after its first run could not be saved.
    assert!(!err.contains("atomic job") && !err.contains("cannot save"), "{err}");
    assert!(!stdout(&culprit(&db, &["results"], dir.path())).contains("label:Y"));
}
