//! Regression tests for findings of session 47, through the real binary: an lkp result tree's runs whose job.yaml
//! names no rootfs, kconfig or compiler took no build from the tree's levels, so one commit's runs of two kconfigs
//! read as one side; and `culprit results` listed one line for runs of several builds, which compare reads apart.

use crate::common;

use std::path::Path;

const SHA: &str = "361a2a229fa31ab7f2b236b5946e434964d00762";

/// Writes two hackbench runs at SHA under each of two kconfigs into the lkp result tree `dir/rr`, with a job.yaml
/// that names no build (as one written by hand or trimmed) and throughputs of 5000 (rhel) and 2500 (kexec) and up.
fn two_kconfigs(dir: &Path) {
    for (kconfig, base) in [("x86_64-rhel-8.3", 5000.0), ("x86_64-kexec", 2500.0)] {
        for run in 0..2 {
            let path = dir.join(format!("rr/hackbench/1-process/box/debian-12/{kconfig}/gcc-12/{SHA}/{run}"));
            std::fs::create_dir_all(&path).unwrap();
            let stats = serde_json::json!({ "hackbench.throughput": base + f64::from(run) });
            std::fs::write(path.join("stats.json"), stats.to_string()).unwrap();
            let job = "suite: hackbench\ntestcase: hackbench\nnr_threads: 1\nhackbench:\n  mode: process\n";
            std::fs::write(path.join("job.yaml"), job).unwrap();
        }
    }
}

#[test]
fn qa47_an_lkp_trees_build_levels_are_recorded_and_results_lists_each_build() {
    let dir = tempfile::tempdir().unwrap();
    two_kconfigs(dir.path());
    let out = common::culprit("s.db", &["import", "rr"], dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("one side"), "the builds are told apart: {err}");
    let listing = common::stdout(&common::culprit("s.db", &["results"], dir.path()));
    let lines: Vec<&str> = listing.lines().collect();
    assert!(lines[0].contains("build"), "{listing}");
    let of = |kconfig: &str| lines.iter().find(|l| l.contains(kconfig)).copied().unwrap_or_else(|| panic!("{listing}"));
    for kconfig in ["x86_64-rhel-8.3", "x86_64-kexec"] {
        let cells: Vec<&str> = of(kconfig).split_whitespace().collect();
        assert_eq!(cells[3], format!("debian-12/{kconfig}/gcc-12"), "{listing}");
        assert_eq!(cells[4], "2", "two ok runs each: {listing}");
    }
    // The JSON has a line per build too, each with its own runs.
    let json = common::stdout(&common::culprit("s.db", &["results", "--json"], dir.path()));
    let groups: serde_json::Value = serde_json::from_str(&json).unwrap();
    let groups = groups.as_array().unwrap();
    assert_eq!(groups.len(), 2, "{json}");
    for group in groups {
        assert_eq!(group["run_ids"].as_array().map(Vec::len), Some(2), "{json}");
        assert_eq!(group["build"]["compiler"], "gcc-12", "{json}");
    }
    // A run's own record names its build.
    let run = common::stdout(&common::culprit("s.db", &["results", "--run", "1", "--json"], dir.path()));
    assert!(run.contains("x86_64-rhel-8.3") || run.contains("x86_64-kexec"), "{run}");
}

#[test]
fn qa47_results_of_one_build_has_no_build_column() {
    // One build throughout says nothing a line needs: the listing keeps its width for the mail.
    let dir = tempfile::tempdir().unwrap();
    two_kconfigs(dir.path());
    std::fs::remove_dir_all(dir.path().join("rr/hackbench/1-process/box/debian-12/x86_64-kexec")).unwrap();
    common::culprit("s.db", &["import", "rr"], dir.path());
    let listing = common::stdout(&common::culprit("s.db", &["results"], dir.path()));
    assert!(!listing.lines().next().unwrap_or("").contains("build"), "{listing}");
    assert_eq!(listing.lines().count(), 2, "{listing}");
}

#[test]
fn qa47_a_sweep_of_runs_of_two_builds_draws_a_curve_per_build() {
    // `compare --by` read a job's runs of every build as one point (under a warning), so a kconfig that halves the
    // bandwidth drew one curve of bimodal points at ±33%. Each build is now a curve of its own, as each is a table.
    let dir = tempfile::tempdir().unwrap();
    for (kconfig, scale) in [("x86_64-rhel-8.3", 2.0), ("x86_64-kexec", 1.0)] {
        for (bs, base) in [("4k", 100.0), ("8k", 200.0)] {
            for run in 0..2 {
                let path = dir.path().join(format!(
                    "rr/fio-basic/1-randwrite-{bs}/box/debian-12/{kconfig}/gcc-12/{SHA}/{run}"
                ));
                std::fs::create_dir_all(&path).unwrap();
                let stats = serde_json::json!({ "fio.write_bw_MBps": base * scale + f64::from(run) });
                std::fs::write(path.join("stats.json"), stats.to_string()).unwrap();
                let job = format!(
                    "suite: fio-basic\ntestcase: fio-basic\nfio-setup-basic:\n  rw: randwrite\n  bs: {bs}\nfio:\n"
                );
                std::fs::write(path.join("job.yaml"), job).unwrap();
            }
        }
    }
    common::culprit("s.db", &["import", "rr"], dir.path());
    let out = common::culprit("s.db", &["compare", SHA, "--by", "bs"], dir.path());
    let sweep = common::stdout(&out);
    let titles: Vec<&str> = sweep.lines().filter(|l| l.contains(" by bs")).collect();
    assert_eq!(
        titles,
        [
            "fio.write_bw_MBps by bs (build=debian-12/x86_64-kexec/gcc-12)",
            "fio.write_bw_MBps by bs (build=debian-12/x86_64-rhel-8.3/gcc-12)"
        ],
        "{sweep}"
    );
    // Each curve's points are its own build's runs: 100.5 and 200.5 of kexec, twice that of rhel.
    let means: Vec<&str> = sweep
        .lines()
        .filter(|l| l.trim_start().starts_with("4k") || l.trim_start().starts_with("8k"))
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(means, ["100.50", "200.50", "200.50", "400.50"], "{sweep}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("pooled"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn qa47_an_imported_run_is_dated_by_its_job_yamls_start_and_end_time() {
    // A copy of a result root that keeps no file times (cp -r, scp, git) dated every run at the copy: lkp's job.yaml
    // says when the job ran.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("rr/hackbench/1-process/box/debian-12/defconfig/gcc-12/{SHA}/0"));
    std::fs::create_dir_all(&path).unwrap();
    std::fs::write(path.join("stats.json"), r#"{"hackbench.throughput": 5000}"#).unwrap();
    let job = "suite: hackbench\ntestcase: hackbench\nhackbench:\n  mode: process\nstart_time: '1658314072'\n\
               end_time: '1658314138'\n";
    std::fs::write(path.join("job.yaml"), job).unwrap();
    common::culprit("s.db", &["import", "rr"], dir.path());
    let json = common::stdout(&common::culprit("s.db", &["results", "--json"], dir.path()));
    let groups: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(groups[0]["first_started_at"].as_f64(), Some(1658314072.0), "{json}");
    assert_eq!(groups[0]["last_ended_at"].as_f64(), Some(1658314138.0), "{json}");
    let listing = common::stdout(&common::culprit("s.db", &["results"], dir.path()));
    assert!(listing.contains("2022-07-20 10:48:58"), "{listing}");
}

#[test]
fn qa47_a_dry_run_checks_the_job_and_shows_each_command_without_running_or_storing() {
    // An lkp user validates a job file before giving it a machine: there was no way short of running it.
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: hackbench\ntestcase: hackbench\nnr_threads: [1, 2]\nhackbench:\n  mode: process\n  ipc: pipe\n\
               vmstat:\n";
    std::fs::write(dir.path().join("hb.yaml"), job).unwrap();
    let out = common::culprit("s.db", &["run", "--dry-run", "hb.yaml", "-n", "2"], dir.path());
    let plan = common::stdout(&out);
    assert!(plan.starts_with("culprit: dry run of hb.yaml: 2 atomic job(s) x 2 run(s)"), "{plan}");
    let measured: Vec<&str> = plan.lines().filter(|l| l.trim_start().starts_with("measure:")).collect();
    assert_eq!(measured.len(), 2, "{plan}");
    assert!(measured[0].contains("hackbench -g 1 ") && measured[1].contains("hackbench -g 2 "), "{plan}");
    assert!(plan.contains("monitors: vmstat"), "{plan}");
    assert!(!dir.path().join("s.db").exists(), "a dry run opens no store");
    // A job that cannot run here is refused as a run would refuse it, before anything runs.
    let fio = "suite: fio\ntestcase: fio-basic\nfio-setup-basic:\n  rw: randwrite\n  bs: 4k\n  test_size: 900T\n  \
               runtime: 3s\nfio:\n";
    std::fs::write(dir.path().join("big.yaml"), fio).unwrap();
    let err = common::refused(&common::culprit("s.db", &["run", "--dry-run", "big.yaml"], dir.path()));
    assert!(err.contains("does not fit"), "{err}");
    assert!(!dir.path().join("s.db").exists());
    // QA 59: as is a label the run would refuse; outside a repository, no label is no error.
    let err = common::refused(&common::culprit("s.db", &["run", "--dry-run", "hb.yaml", "--label", ""], dir.path()));
    assert!(err.contains("--label needs a non-empty name"), "{err}");
}
