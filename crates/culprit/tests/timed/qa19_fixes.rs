//! End-to-end regressions of the nineteenth QA pass: a killed run's scratch directory, fio's cpus_allowed beyond
//! this machine, the report of a stressor stress-ng skipped, the job file `track --bisect` writes, and lkp's roles
//! without a cluster.

use crate::common;

use crate::common::{culprit, pids_mentioning, processes_mentioning, stdout};
use std::path::{Path, PathBuf};

/// The run directories under the scratch root `scratch` (its `run-<pid>.step` records left out).
fn scratch_dirs(scratch: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(scratch)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// The scratch directory of culprit process `pid` under `scratch`, once it is there.
fn scratch_dir_of(scratch: &Path, pid: u32) -> PathBuf {
    let mut found = None;
    common::wait_until(&format!("culprit {pid} never made its scratch directory"), || {
        found = scratch_dirs(scratch).into_iter().find(|dir| dir.to_string_lossy().contains(&format!(".{pid}.")));
        found.is_some()
    });
    found.unwrap_or_default()
}

#[test]
fn qa19_the_scratch_directory_of_a_killed_run_is_removed_by_the_next_run_but_a_live_run_s_is_kept() {
    // After a kill -9 of culprit during a pgbench run, the next run killed the benchmark it left, but the run's
    // scratch directory, with the throwaway PostgreSQL data directory in it, stayed under --scratch for good.
    use std::os::unix::fs::PermissionsExt;
    let _quiet = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    // The server runs as `postgres` under root, which must be able to reach the scratch directory.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let scratch = dir.path().join("scratch");
    let scratch_arg = scratch.to_str().unwrap();
    common::write(
        dir.path(),
        "pg.yaml",
        "suite: pgbench\nruntime: 60s\nnr_task: 1\npgbench-setup:\n  scale_factor: 1\npgbench:\n",
    );
    let stress =
        |seconds: u32| format!("suite: stress-ng\ntesttime: {seconds}s\nstress-ng:\n  test: cpu\n  nr_threads: 1\n");
    common::write(dir.path(), "long.yaml", &stress(60));
    common::write(dir.path(), "short.yaml", &stress(1));
    let args =
        |job: &'static str| ["run", job, "-n", "1", "--label", "x", "--monitors", "none", "--scratch", scratch_arg];

    let mut killed = common::spawn_culprit("s.db", &args("pg.yaml"), dir.path());
    let killed_dir = scratch_dir_of(&scratch, killed.id());
    common::wait_until("pgbench never started its measured run", || {
        processes_mentioning(scratch_arg).iter().any(|line| line.contains("pgbench") && line.contains(" -T 60 "))
    });
    assert!(killed_dir.join("data").is_dir(), "the test needs the PostgreSQL data directory in the scratch directory");
    // A run still going beside it, of another culprit: its directory must stay. It starts before the kill, since a
    // run that starts after it removes the killed run's directory itself.
    let mut live = common::spawn_culprit("s.db", &args("long.yaml"), dir.path());
    let live_dir = scratch_dir_of(&scratch, live.id());
    killed.kill().unwrap();
    killed.wait().unwrap();

    let out = culprit("s.db", &args("short.yaml"), dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let left_after_the_next_run = scratch_dirs(&scratch);
    // The live run is killed as the killed one was, and the run after it must remove its directory too.
    live.kill().unwrap();
    live.wait().unwrap();
    let after_the_live_one = culprit("s.db", &args("short.yaml"), dir.path());
    let stderr_after = String::from_utf8_lossy(&after_the_live_one.stderr).into_owned();
    // What a failing run left is killed before the test fails, so that it loads no later test.
    for (pid, _) in pids_mentioning(scratch_arg) {
        let _ = std::process::Command::new("kill").args(["-9", &pid]).status();
    }

    assert!(out.status.success(), "{stderr}");
    let said = format!("culprit: removed the scratch directory {} left by a killed run", killed_dir.display());
    assert!(stderr.contains(&said), "{stderr}");
    assert_eq!(left_after_the_next_run, std::slice::from_ref(&live_dir), "{stderr}");
    let said = format!("culprit: removed the scratch directory {} left by a killed run", live_dir.display());
    assert!(stderr_after.contains(&said), "{stderr_after}");
    assert_eq!(scratch_dirs(&scratch), Vec::<PathBuf>::new(), "{stderr_after}");
}

#[test]
fn qa19_fio_s_cpus_allowed_beyond_this_machine_s_cpus_is_refused_before_anything_runs() {
    let _machine = common::shared_machine();
    // lkp's fio jobs give `cpus_allowed: 0-127`; on a smaller machine every run failed with fio's "failed parsing
    // cpus_allowed=0-127", after the file was laid out.
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("scratch");
    let nr_cpu = std::thread::available_parallelism().map_or(1, |n| n.get());
    let job = |cpus: &str| {
        format!(
            "suite: fio-basic\nruntime: 1s\nfio-setup-basic:\n  rw: read\n  bs: 4k\n  ioengine: sync\n  \
             test_size: 1M\n  cpus_allowed_policy: split\n  cpus_allowed: {cpus}\nfio:\n"
        )
    };
    common::write(dir.path(), "f.yaml", &job(&format!("0-1,{}", nr_cpu + 125)));
    let scratch_arg = scratch.to_str().unwrap();
    let args = ["run", "f.yaml", "-n", "1", "--label", "x", "--monitors", "none", "--scratch", scratch_arg];
    let out = culprit("f.db", &args, dir.path());
    let text = common::refused(&out);
    assert!(text.contains("in job file f.yaml:9") && text.contains("param 'cpus_allowed'"), "{text}");
    let has = if nr_cpu == 1 { "1 CPU (0)".to_string() } else { format!("{nr_cpu} CPUs (0-{})", nr_cpu - 1) };
    assert!(text.contains(&format!("names CPU {}, but culprit may run on {has} here", nr_cpu + 125)), "{text}");
    assert!(text.contains("or remove cpus_allowed and cpus_allowed_policy"), "{text}");
    // Nothing ran: no scratch directory was made, no run stored.
    assert!(!scratch.exists(), "{text}");
    let results = String::from_utf8_lossy(&culprit("f.db", &["results"], dir.path()).stdout).into_owned();
    assert!(!results.contains("fio"), "{results}");
    // The machine's own CPUs run.
    common::write(dir.path(), "f.yaml", &job(&format!("0-{}", nr_cpu - 1)));
    let out = culprit("f.db", &args, dir.path());
    let summary = stdout(&out);
    assert!(summary.contains("(1 ok, 0 failed)"), "{summary}{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn qa19_fio_s_cpus_allowed_is_checked_against_the_cpus_culprit_may_run_on_not_their_count() {
    let _machine = common::shared_machine();
    // The check counted CPUs 0 to nr_cpu - 1, so under `taskset -c 1` (or a cpuset cgroup) CPU 1 was refused and
    // CPU 0, on which fio's tasks cannot run, was taken. It now reads the affinity mask.
    let dir = tempfile::tempdir().unwrap();
    let last = std::thread::available_parallelism().map_or(1, |n| n.get()) - 1;
    let run = |cpus: usize| {
        let job = format!(
            "suite: fio-basic\nruntime: 1s\nfio-setup-basic:\n  rw: read\n  bs: 4k\n  ioengine: sync\n  \
             test_size: 1M\n  cpus_allowed_policy: split\n  cpus_allowed: {cpus}\nfio:\n"
        );
        common::write(dir.path(), "f.yaml", &job);
        let scratch = dir.path().join("scratch");
        let args = ["run", "f.yaml", "-n", "1", "--label", "x", "--monitors", "none", "--scratch"];
        std::process::Command::new("taskset")
            .args(["-c", &last.to_string(), env!("CARGO_BIN_EXE_culprit"), "--db", "f.db"])
            .args(args)
            .arg(&scratch)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let out = run(last);
    let summary = stdout(&out);
    assert!(summary.contains("(1 ok, 0 failed)"), "{summary}{}", String::from_utf8_lossy(&out.stderr));
    if last > 0 {
        let text = common::refused(&run(0));
        assert!(text.contains(&format!("names CPU 0, but culprit may run on 1 CPU ({last}) here")), "{text}");
    }
}

#[test]
fn qa19_the_report_of_a_stressor_stress_ng_skipped_says_it_did_no_work_at_both_labels() {
    let _machine = common::shared_machine();
    // stress-ng skips dccp on a kernel without DCCP (gone from Linux since 6.16) and exits 0; the runs store only
    // stress-ng.dccp.fail, and `culprit report --compare` headed the mail "no significant change of
    // stress-ng.dccp.fail".
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("scratch");
    let scratch_arg = scratch.to_str().unwrap();
    let job = "suite: stress-ng\ntesttime: 1s\nstress-ng:\n  class: network\n  test: dccp\n  nr_threads: 1\n";
    common::write(dir.path(), "d.yaml", job);
    for label in ["a", "b"] {
        let args = ["run", "d.yaml", "-n", "3", "--label", label, "--monitors", "none", "--scratch", scratch_arg];
        let summary = stdout(&culprit("d.db", &args, dir.path()));
        assert!(summary.contains("dccp did no work in 3 of 3 ok run(s)"), "the test needs dccp skipped: {summary}");
    }
    let mail = stdout(&culprit("d.db", &["report", "--compare", "a", "b"], dir.path()));
    let flat = mail.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        mail.starts_with("[culprit] b: stress-ng's dccp stressor did no work (skipped by stress-ng) at a and b\n"),
        "{mail}"
    );
    let said = "FYI, stress-ng's dccp stressor did no work (skipped by stress-ng) in every run at the base a and at b";
    assert!(flat.contains(said), "{mail}");
    assert!(!flat.contains("no significant change"), "{mail}");
}

#[test]
fn qa19_track_bisect_names_the_job_file_so_the_bisect_s_runs_keep_the_job_s_name() {
    // A job named after its own file, whose job_origin is another file (as lkp's job.yaml of an imported run names
    // `fsmark-1x-16d-...` from fsmark-generic-brd.yaml): `track --bisect` wrote it to `<job name>.yaml`, and the
    // bisect's runs were named `<job name>-<path_params>`, the params twice, apart from the tracked runs.
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = common::make_slowdown_repo(dir.path(), 5, 3, 0, 40);
    let job = common::write(
        dir.path(),
        "qa19track-bench.yaml",
        "suite: qa19track\ncommand:\n  cmd: ./bench\njob_origin: qa19-generic.yaml\n",
    );
    let db = dir.path().join("t.db");
    common::run_at_every_commit(&db, &repo, &shas, &job, 4);
    let results: serde_json::Value =
        serde_json::from_str(&stdout(&culprit(&db, &["results", "--json"], &repo))).unwrap();
    let names = |results: &serde_json::Value| -> Vec<String> {
        let mut names: Vec<String> = results
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|row| row["job"].as_str().map(str::to_string))
            .collect();
        names.sort();
        names.dedup();
        names
    };
    let tracked = names(&results);
    assert_eq!(tracked, ["qa19track-bench-._bench"], "{results:#}");
    let track = ["track", "--bisect", "--build", "make -s", "--metric", "command.user_time", "--min-change", "10"];
    let out = culprit(&db, &track, &repo);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("culprit: bisecting command.user_time"), "{stderr}");
    // The bisect's runs are stored under the tracked job's name, not one with its params twice.
    let results: serde_json::Value =
        serde_json::from_str(&stdout(&culprit(&db, &["results", "--json"], &repo))).unwrap();
    let stored = |results: &serde_json::Value| -> Vec<u64> {
        let ids = results.as_array().into_iter().flatten().flat_map(|row| row["run_ids"].as_array().cloned());
        ids.flatten().filter_map(|id| id.as_u64()).collect()
    };
    let tracked_runs = 4 * shas.len();
    let bisect_runs: Vec<u64> = stored(&results).into_iter().filter(|&id| id > tracked_runs as u64).collect();
    assert!(!bisect_runs.is_empty(), "the bisect stored no runs: {results:#}");
    for id in bisect_runs {
        let run = stdout(&culprit(&db, &["results", "--run", &id.to_string(), "--json"], &repo));
        let run: serde_json::Value = serde_json::from_str(&run).unwrap();
        assert_eq!(run["job"].as_str(), Some(tracked[0].as_str()), "run {id}");
    }
    let written: Vec<PathBuf> = common::files_under(&repo.join(".git/culprit/track-jobs"));
    let written: Vec<String> =
        written.iter().filter_map(|path| Some(path.file_name()?.to_string_lossy().into_owned())).collect();
    assert_eq!(written, ["qa19track-bench.yaml"], "{stderr}");
}

#[test]
fn qa19_roles_without_a_cluster_are_refused_at_the_role_s_line() {
    let _machine = common::shared_machine();
    // lkp runs an `if role` part only on a machine its cluster gives that role (split-job sets node_roles only when
    // the job has a cluster), so a job with role hashes and no cluster runs neither part there; Culprit merged the
    // roles and ran the job.
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: iperf\nruntime: 1s\nif role server:\n  iperf-server:\nif role client:\n  iperf:\n";
    common::write(dir.path(), "r.yaml", job);
    let run = ["run", "r.yaml", "-n", "1", "--label", "a", "--monitors", "none"];
    for args in [&run[..], &["split", "r.yaml", "-o", "out"]] {
        let stderr = common::refused(&culprit("t.db", args, dir.path()));
        assert!(stderr.contains("r.yaml:3: lkp's 'if role server' part in a job without a cluster"), "{stderr}");
        assert!(stderr.contains("add 'cluster: cs-localhost' to run every role on this machine"), "{stderr}");
    }
    assert!(!dir.path().join("out").exists());
    // With the cluster lkp's cs-localhost gives, every role runs on this machine.
    common::write(dir.path(), "r.yaml", &job.replace("runtime: 1s\n", "runtime: 1s\ncluster: cs-localhost\n"));
    let out = stdout(&culprit("t.db", &["split", "r.yaml", "-o", "ok"], dir.path()));
    assert!(out.contains("r-cs-localhost-1s.yaml"), "{out}");
}
