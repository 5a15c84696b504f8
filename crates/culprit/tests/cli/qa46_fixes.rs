//! End-to-end regressions of the forty-sixth QA pass (real benchmarks and monitors): the name a job is listed under,
//! and a timeout shorter than the benchmark's own run.

use crate::common;

use crate::common::{culprit, stdout};

#[test]
fn qa46_results_lists_a_job_under_its_newest_name_as_compare_does() {
    // The same job file run again under another file name is the same job (one id) under a new name: compare named
    // it by its newest runs and results by its oldest, so the two commands seemed to speak of different jobs.
    let dir = tempfile::tempdir().unwrap();
    let job = "command:\n  cmd: \"echo ops: 5\"\n  capture:\n    ops: 'ops: ([0-9]+)'\n";
    common::write(dir.path(), "first.yaml", job);
    common::write(dir.path(), "second.yaml", job);
    for (file, label) in [("first.yaml", "a"), ("first.yaml", "b"), ("second.yaml", "b")] {
        stdout(&culprit("r.db", &["run", file, "-n", "3", "--label", label, "--monitors", "none"], dir.path()));
    }
    let listed = stdout(&culprit("r.db", &["results"], dir.path()));
    // The JSON names the job whatever the table shows: the text names it only in the "no metric changed" line, which
    // a noisy resident-set size on these short runs could replace with a table (CI saw it once).
    let compared = stdout(&culprit("r.db", &["compare", "a", "b", "--json"], dir.path()));
    let tables: serde_json::Value = serde_json::from_str(&compared).unwrap();
    let name = tables[0]["job"].as_str().unwrap_or_default();
    assert!(name.starts_with("second-"), "{compared}");
    let rows: Vec<&str> = listed.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{listed}");
    for row in rows {
        assert!(row.starts_with("second-"), "every line under the newest name:\n{listed}");
    }
}

#[test]
fn qa46_a_timeout_within_the_benchmarks_run_time_is_refused_before_any_run() {
    // `testtime: 30s` under `timeout: 4s` ran, and every run was killed after 4 s: on a robot, each run costs the
    // whole timeout before it fails.
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "to.yaml", "timeout: 4s\nstress-ng:\n  test: cpu\n  testtime: 30s\n");
    let out = culprit("t.db", &["run", "to.yaml", "-n", "1", "--label", "t", "--monitors", "none"], dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("timeout: 4s is not longer than testtime: 30s (to.yaml:4"), "{err}");
    assert!(err.contains("in job file to.yaml:1"), "{err}");
}

#[test]
fn qa46_a_run_killed_at_its_timeout_does_not_quote_what_the_benchmark_printed_as_it_died() {
    // stress-ng's SIGTERM handler prints "successful run completed", which the reason of a run Culprit killed at the
    // job's timeout quoted as the cause: "failed: ... killed after the job's timeout of 4s ...: stress-ng: info:
    // successful run completed in 3.99s".
    let dir = tempfile::tempdir().unwrap();
    // The line it prints is put together as it dies, so the reason can only quote it from the benchmark's stderr.
    let job = "timeout: 1s\ncommand:\n  cmd: \"M=completed; trap 'echo successful run $M >&2; exit 0' TERM; sleep \
               20 & wait\"\n";
    common::write(dir.path(), "k.yaml", job);
    let out = culprit("k.db", &["run", "k.yaml", "-n", "1", "--label", "k", "--monitors", "none"], dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("killed after the job's timeout of 1s"), "{err}");
    assert!(!err.contains("successful run completed"), "{err}");
}
