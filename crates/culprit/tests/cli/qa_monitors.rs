//! Monitors a job asks for are checked before its first run: a perf-profile option perf would refuse, or perf not
//! installed, stops `culprit run` with a message instead of silently storing runs without that monitor's data.

use crate::common::write_script;
use std::path::Path;
use std::process::{Command, Output};

fn culprit(dir: &Path, path_env: Option<&Path>, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_culprit"));
    command.arg("--db").arg(dir.join("m.db")).args(args).current_dir(dir);
    if let Some(path) = path_env {
        command.env("PATH", path);
    }
    command.output().expect("culprit runs")
}

fn stored_runs(dir: &Path) -> usize {
    let out = culprit(dir, None, &["results", "--json"]);
    let groups: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    groups.as_array().map_or(0, |g| g.iter().map(|g| g["ok_runs"].as_u64().unwrap_or(0) as usize).sum())
}

#[test]
fn a_bad_perf_profile_option_stops_the_job_before_its_first_run() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("prof.yaml");
    std::fs::write(&job, "suite: t\ncommand:\n  cmd: true\nperf-profile:\n  freq: 0\n").unwrap();
    let out = culprit(dir.path(), None, &["run", job.to_str().unwrap(), "-n", "1", "--label", "x"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("prof.yaml") && stderr.contains("freq"), "names the file and the option: {stderr}");
    assert_eq!(stored_runs(dir.path()), 0, "nothing ran");
}

#[test]
fn a_missing_perf_stops_a_job_with_perf_monitors_before_its_first_run() {
    let dir = tempfile::tempdir().unwrap();
    // A PATH holding only a shell: the `command` program runs, perf is nowhere.
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink("/bin/sh", bin.join("sh")).unwrap();
    let job = dir.path().join("stat.yaml");
    std::fs::write(&job, "suite: t\ncommand:\n  cmd: true\nperf-stat:\n").unwrap();
    let out = culprit(dir.path(), Some(&bin), &["run", job.to_str().unwrap(), "-n", "1", "--label", "x"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("linux-perf"), "names the package to install: {stderr}");
    assert_eq!(stored_runs(dir.path()), 0, "nothing ran");
    // The same with --monitors naming perf-profile.
    let plain = dir.path().join("plain.yaml");
    std::fs::write(&plain, "suite: t\ncommand:\n  cmd: true\n").unwrap();
    let args = ["run", plain.to_str().unwrap(), "-n", "1", "--label", "x", "--monitors", "perf-profile"];
    let out = culprit(dir.path(), Some(&bin), &args);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_monitor_failing_at_run_time_is_told_once_and_the_runs_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    // A perf that is installed but refuses everything, as perf does without permission to count system-wide.
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink("/bin/sh", bin.join("sh")).unwrap();
    let perf = bin.join("perf");
    write_script(&perf, "#!/bin/sh\necho 'perf: no permission to count system-wide' >&2\nexit 1\n");
    let job = dir.path().join("stat.yaml");
    std::fs::write(&job, "suite: t\ncommand:\n  cmd: true\nperf-stat:\n").unwrap();
    let out = culprit(dir.path(), Some(&bin), &["run", job.to_str().unwrap(), "-n", "3", "--label", "x"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "a monitor failure does not fail the runs: {stderr}");
    let told: Vec<&str> = stderr.lines().filter(|l| l.contains("without that monitor's data")).collect();
    assert_eq!(told.len(), 1, "told once for three identical failures: {stderr}");
    assert!(told[0].contains("perf-stat") && told[0].contains("no permission"), "{stderr}");
    assert_eq!(stored_runs(dir.path()), 3);
}
