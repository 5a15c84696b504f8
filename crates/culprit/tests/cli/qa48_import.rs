//! End-to-end regressions of the forty-eighth QA pass (QA 47's D10 leftovers): lkp runs without stats.json imported
//! from their raw outputs, lkp's softirqs made counts during the run, and `culprit parse` printing lkp's lines alone.

use crate::common::{culprit, stdout};
use std::path::Path;

fn real(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../culprit-parse/tests/data/real").join(path)
}

#[test]
fn qa48_parse_prints_lkp_s_lines_alone_and_names_culprit_s_own_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let input = real("pgbench/tpcb-like-2-clients-3s");
    let out = culprit(dir.path().join("t.db"), &["parse", "pgbench", input.to_str().unwrap()], dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // What lkp-tests' programs/pgbench/parse prints for this PostgreSQL 15 output.
    assert_eq!(stdout(&out), "transactions: 907\nlatency_ms: 6.609\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    for own in ["tps: 302.595078", "failed_transactions: 0", "initial_connection_time_ms: 11.319"] {
        assert!(stderr.contains(own) && stderr.contains("Culprit's own keys"), "{own}: {stderr}");
    }
}

/// lkp's run directory `<commit>/<run>` of a stress-ng job, in lkp's seven levels under `root`.
fn lkp_run(root: &Path, commit: &str, run: usize) -> std::path::PathBuf {
    let directory = root.join("stress-ng/flock-60s/box1/debian-12-x86_64.cgz/x86_64-rhel-9.4/gcc-12").join(commit);
    let run = directory.join(run.to_string());
    std::fs::create_dir_all(&run).unwrap();
    // lkp writes `output` into every run directory, finished or not.
    std::fs::write(run.join("output"), "started\n").unwrap();
    run
}

fn lkp_fixture(path: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../culprit-parse/tests/data/lkp").join(path);
    std::fs::read_to_string(path).unwrap()
}

fn run_text(db: &Path, cwd: &Path, id: &str) -> String {
    stdout(&culprit(db, &["results", "--run", id], cwd))
}

#[test]
fn qa48_a_run_without_stats_json_is_imported_from_its_raw_outputs_and_a_bad_one_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("result");
    let commit = "0123456789abcdef0123456789abcdef01234567";
    let stress_ng = lkp_fixture("stress-ng/08");
    let good = lkp_run(&root, commit, 0);
    std::fs::write(good.join("stress-ng"), &stress_ng).unwrap();
    std::fs::write(good.join("vmstat"), lkp_fixture("vmstat/1")).unwrap();
    // Cut before stress-ng's metrics table: a run killed early.
    let cut: String = stress_ng.lines().take(7).map(|line| format!("{line}\n")).collect();
    std::fs::write(lkp_run(&root, commit, 1).join("stress-ng"), cut).unwrap();
    std::fs::write(lkp_run(&root, commit, 2).join("stress-ng"), "garbage\n\u{1}\u{2} not stress-ng\n").unwrap();
    lkp_run(&root, commit, 3);
    let db = dir.path().join("imp.db");
    let out = culprit(&db, &["import", root.to_str().unwrap()], dir.path());
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("imported 1 run(s)"), "{text}");
    assert!(text.contains("parsed from raw output: 1 run(s) had no stats.json"), "{text}");
    assert!(text.contains(&format!("{commit}/0")), "{text}");
    let skipped = |run: usize| {
        let prefix = format!("skipped {}/", root.join("stress-ng/flock-60s").display());
        text.lines()
            .find(|line| line.starts_with(&prefix) && line.contains(&format!("{commit}/{run}: ")))
            .unwrap_or_else(|| panic!("run {run} not skipped: {text}"))
            .to_string()
    };
    for run in [1, 2] {
        let line = skipped(run);
        assert!(line.contains("no stats.json, and its raw stress-ng output (stress-ng) does not read"), "{line}");
    }
    assert!(skipped(3).contains("no stats.json: the run did not finish"), "{}", skipped(3));
    // The metrics are what Culprit's run of this output stores, and the monitor's run values lkp's reduction.
    let run = run_text(&db, dir.path(), "1");
    assert!(run.contains("stress-ng.flock.ops_per_sec: 2860967.69"), "{run}");
    assert!(run.contains("stress-ng.flock.nanosecs_per_flock_lock_call: 5678.91"), "{run}");
    assert!(run.contains("vmstat.system.cs: 1105"), "{run}");
    // Imported again, nothing is stored twice.
    let again = culprit(&db, &["import", root.to_str().unwrap()], dir.path());
    assert!(String::from_utf8_lossy(&again.stdout).contains("1 already stored"), "{:?}", again);
}

#[test]
fn qa48_lkp_s_softirqs_become_counts_during_the_run_or_are_kept_apart() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("result");
    let with_series = lkp_run(&root, "1111111111111111111111111111111111111111", 0);
    let stats = r#"{"stress-ng.flock.ops_per_sec": 10, "softirqs.TIMER": 1500, "softirqs.CPU0.TIMER": 800}"#;
    std::fs::write(with_series.join("stats.json"), stats).unwrap();
    let matrix = r#"{"softirqs.time": [1, 61], "softirqs.TIMER": [1000, 2000], "softirqs.CPU0.TIMER": [500, 1100]}"#;
    std::fs::write(with_series.join("matrix.json"), matrix).unwrap();
    let without = lkp_run(&root, "2222222222222222222222222222222222222222", 0);
    std::fs::write(without.join("stats.json"), stats).unwrap();
    let db = dir.path().join("imp.db");
    let out = culprit(&db, &["import", root.to_str().unwrap()], dir.path());
    let text = stdout(&out);
    assert!(text.contains("imported 2 run(s)"), "{text}");
    assert!(text.contains("softirqs value(s) of stats.json are lkp's means of since-boot counts"), "{text}");
    let runs = [run_text(&db, dir.path(), "1"), run_text(&db, dir.path(), "2")];
    let (counted, apart) = if runs[0].contains("1111111111") { (&runs[0], &runs[1]) } else { (&runs[1], &runs[0]) };
    // Last minus first of the series, as Culprit's own softirqs monitor counts them.
    assert!(counted.contains("softirqs.TIMER: 1000\n"), "{counted}");
    assert!(counted.contains("softirqs.CPU0.TIMER: 600\n"), "{counted}");
    assert!(!apart.contains("softirqs.TIMER:"), "{apart}");
    assert!(apart.contains("softirqs.since_boot_mean.TIMER: 1500\n"), "{apart}");
    assert!(apart.contains("softirqs.since_boot_mean.CPU0.TIMER: 800\n"), "{apart}");
}
