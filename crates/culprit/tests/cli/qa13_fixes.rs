//! End-to-end regressions of the thirteenth QA pass: `culprit run` of lkp-tests job files with real benchmarks and
//! monitors, used as a kernel developer with lkp's job files would use it.

use crate::common;

use crate::common::{culprit, stdout};

#[test]
fn qa13_documents_after_a_first_of_shared_params_are_each_a_job() {
    // A job of two programs is refused with the advice to give each a document of its own. Written the way that
    // reads (the shared params first, one program a document), the file was refused too: lkp makes the first
    // document alone a job, which here selects no program ("the job selects no benchmark program"), and with a
    // second program of no params the two were "both named 'sb-2s' (documents 1 and 3)".
    let dir = tempfile::tempdir().unwrap();
    let two = "suite: x\nruntime: 2s\nsysbench-threads:\n  thread_locks: 4\nsysbench-mutex:\n";
    common::write(dir.path(), "two.yaml", two);
    let err = common::refused(&culprit("t.db", &["run", "two.yaml", "-n", "1"], dir.path()));
    assert!(err.contains("after a first document of the params they share"), "{err}");
    let split = "suite: x\nexecutions: 2\n---\ncommand:\n  cmd: 'echo one'\n---\ncommand:\n  cmd: 'echo two'\n";
    common::write(dir.path(), "sb.yaml", split);
    let run = ["run", "sb.yaml", "-n", "1", "--label", "a", "--monitors", "none", "--json"];
    let out = stdout(&culprit("t.db", &run, dir.path()));
    let jobs: Vec<String> = out
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap()["job"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(jobs, ["sb-echo_one-2", "sb-echo_two-2"], "{out}");
    // A first document that selects a program stays a job of its own, as in lkp.
    common::write(dir.path(), "own.yaml", "suite: x\ncommand:\n  cmd: 'echo one'\n---\ncommand:\n  cmd: 'echo two'\n");
    let out = stdout(&culprit("t.db", &["split", "own.yaml", "-o", "own"], dir.path()));
    assert_eq!(out.lines().count(), 2, "{out}");
}

#[test]
fn qa13_box_settings_a_run_does_not_apply_are_said() {
    // lkp's job files set the test box up with `disk`, `fs` (and `fs2`, `mount_option`) and `cpufreq_governor`,
    // which lkp applies and Culprit only records. A job of `fs: [ext4, xfs]` ran both atomic jobs on the scratch
    // directory's filesystem without a word, stored as an ext4 and an xfs job, so their difference read as the
    // filesystems'.
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: x\ndisk: 1HDD\nfs:\n  - ext4\n  - xfs\ncpufreq_governor: performance\ncommand:\n  cmd: 'true'\n";
    common::write(dir.path(), "fs.yaml", job);
    let scratch = dir.path().join("scratch");
    let scratch_arg = scratch.to_str().unwrap();
    let run = ["run", "fs.yaml", "-n", "1", "--label", "a", "--monitors", "none", "--scratch", scratch_arg];
    let out = culprit("t.db", &run, dir.path());
    stdout(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    let said = "cpufreq_governor: performance; disk: 1HDD; fs: ext4, xfs are recorded with the runs but not applied";
    assert!(err.contains(said) && err.contains(&scratch.display().to_string()), "{err}");
    // A job that sets none of them is told nothing of them.
    common::write(dir.path(), "plain.yaml", "suite: x\ncommand:\n  cmd: 'true'\n");
    let out = culprit("t.db", &["run", "plain.yaml", "-n", "1", "--label", "b", "--monitors", "none"], dir.path());
    stdout(&out);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("not applied"), "{out:?}");
}

#[test]
fn qa13_a_param_given_a_hash_or_no_value_is_told_so() {
    // `nr_threads` written as a hash (its value indented under it) or with no value was refused as "'nr_threads' is
    // not a program or monitor Culprit knows ... remove it or fix its name": the name was right, its value was not.
    let dir = tempfile::tempdir().unwrap();
    for (file, job, found) in [
        ("hash.yaml", "suite: x\nnr_threads:\n  a: 1\nhackbench:\n  loops: 10\n", "it holds a hash"),
        ("none.yaml", "suite: x\nnr_threads:\nhackbench:\n  loops: 10\n", "it has none"),
    ] {
        common::write(dir.path(), file, job);
        let err = common::refused(&culprit("t.db", &["run", file], dir.path()));
        assert!(err.contains(&format!("{file}:2: 'nr_threads' is a param of hackbench")), "{err}");
        assert!(err.contains(found) && !err.contains("fix its name"), "{err}");
    }
    // A key no selected program takes, holding a hash, is still an unknown program or monitor.
    common::write(dir.path(), "foo.yaml", "suite: x\nfoo:\n  a: 1\nhackbench:\n  loops: 10\n");
    let err = common::refused(&culprit("t.db", &["run", "foo.yaml"], dir.path()));
    assert!(err.contains("'foo' is not a program or monitor Culprit knows"), "{err}");
}

#[test]
fn qa13_a_misspelt_monitor_or_program_is_told_the_name_it_most_likely_meant() {
    // A misspelt param is told the name it most likely meant (QA pass 8); a misspelt monitor or program was not:
    // `perf-stats:` got the list of every program and monitor, and "remove it or fix its name".
    let dir = tempfile::tempdir().unwrap();
    for (key, meant) in [("perf-stats", "perf-stat"), ("sysbench-cpus", "sysbench-cpu"), ("vmstats", "vmstat")] {
        common::write(dir.path(), "typo.yaml", &format!("suite: x\nhackbench:\n  loops: 10\n{key}:\n"));
        let err = common::refused(&culprit("t.db", &["run", "typo.yaml"], dir.path()));
        assert!(err.contains(&format!("'{key}' is not a program or monitor")), "{err}");
        assert!(err.contains(&format!("did you mean '{meant}'?")), "{err}");
    }
}

#[test]
fn qa13_run_json_says_why_a_run_failed_and_its_stored_id() {
    // `culprit run --json` printed a failed run as `"ok": false` and its few time metrics, with neither the reason
    // (only on stderr, among other lines) nor the stored id that `culprit results --run ID` takes.
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "job.yaml", "suite: x\ncommand:\n  cmd: 'echo about to fail; exit 3'\n");
    let run = ["run", "job.yaml", "-n", "1", "--label", "a", "--monitors", "none", "--json"];
    let out = culprit("t.db", &run, dir.path());
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let line: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(line["ok"], false, "{line}");
    let failure = line["failure"].as_str().unwrap_or_else(|| panic!("{line}"));
    assert!(failure.contains("exit status 3"), "{line}");
    let id = line["id"].as_i64().unwrap_or_else(|| panic!("{line}")).to_string();
    let shown = stdout(&culprit("t.db", &["results", "--run", &id], dir.path()));
    assert!(shown.contains("about to fail") && shown.contains("exit status 3"), "{shown}");
    // A run that succeeded has its id and no failure.
    common::write(dir.path(), "ok.yaml", "suite: x\ncommand:\n  cmd: 'true'\n");
    let run = ["run", "ok.yaml", "-n", "1", "--label", "a", "--monitors", "none", "--json"];
    let ok = stdout(&culprit("t.db", &run, dir.path()));
    let line: serde_json::Value = serde_json::from_str(&ok).unwrap();
    assert!(line["ok"] == true && line["failure"].is_null() && line["id"].as_i64().is_some(), "{line}");
}

#[test]
fn qa13_a_run_killed_at_the_jobs_timeout_names_the_timeout() {
    // A job of `testtime: 10s` and `timeout: 2s` failed every run with "killed after the job's timeout", which named
    // neither the limit nor where it is set.
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "slow.yaml", "suite: x\ntimeout: 1s\ncommand:\n  cmd: 'sleep 5'\n");
    let run = ["run", "slow.yaml", "-n", "1", "--label", "a", "--monitors", "none", "--json"];
    let out = culprit("t.db", &run, dir.path());
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let line: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let failure = line["failure"].as_str().unwrap_or_else(|| panic!("{line}"));
    assert!(failure.contains("killed after the job's timeout of 1s (raise `timeout:` in the job file"), "{failure}");
}

#[test]
fn qa13_a_monitors_interval_in_the_job_is_applied_or_said_not_to_be() {
    // `perf-stat: {interval: 0.5}` ran perf stat at the run's 1 s (`-I 1000`), so a run of a second or two kept no
    // perf counters however the job asked; `vmstat: {interval: 10}` sampled every second; neither said a word.
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let args = dir.path().join("perf.args");
    common::write_script(&bin.join("perf"), &format!("#!/bin/sh\necho \"$@\" >> {}\n", args.display()));
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let job = "suite: x\ncommand:\n  cmd: 'sleep 0.2'\nperf-stat:\n  interval: 0.3\nvmstat:\n  interval: 10\n";
    common::write(dir.path(), "job.yaml", job);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_culprit"))
        .current_dir(dir.path())
        .env("PATH", path)
        .args(["--db", "t.db", "run", "job.yaml", "-n", "1", "--label", "a"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let calls = std::fs::read_to_string(&args).unwrap_or_default();
    assert!(calls.lines().any(|call| call.starts_with("stat ") && call.contains("-I 300 ")), "{calls}\n{err}");
    assert!(err.contains("the job's vmstat interval 10 is not applied") && err.contains("--interval (1 s)"), "{err}");
}

#[test]
fn qa13_a_test_size_the_scratch_file_system_cannot_hold_is_refused_before_any_run() {
    // Seed 001's fio-basic job (a 2pmem box with 256G of memory) asks for `test_size: 200G`. Run as it is on a
    // machine with 37G free, fio laid its file out in the scratch directory until the disk was full, under every
    // other program on the machine. 1P is more than any test machine's scratch file system has free.
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let ran = dir.path().join("fio.ran");
    // Asked its I/O engines (`fio --enghelp`) before the runs, fio runs no benchmark; only a run is marked.
    let script = format!("#!/bin/sh\n[ \"$1\" = --enghelp ] && exit 0\ntouch {}\n", ran.display());
    common::write_script(&bin.join("fio"), &script);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let job = "suite: fio-basic\nruntime: 200s\nnr_task: 50%\ntime_based: tb\nfio-setup-basic:\n  rw: randwrite\n  \
               bs: 4k\n  ioengine: libaio\n  test_size: 1P\nfio:\n";
    common::write(dir.path(), "fio.yaml", job);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_culprit"))
        .current_dir(dir.path())
        .env("PATH", path)
        .args(["--db", "t.db", "run", "fio.yaml", "-n", "1", "--label", "a", "--monitors", "none"])
        .output()
        .unwrap();
    let err = common::refused(&out);
    assert!(err.contains("its test_size of 1.0P does not fit in the") && err.contains("--scratch"), "{err}");
    assert!(!ran.exists(), "fio ran: {err}");
}

#[test]
fn qa13_the_job_yaml_an_lkp_report_attaches_runs_without_lkps_own_monitors() {
    // A kernel test robot report says "bin/lkp install job.yaml # job file is attached in this email". That file
    // lists its category's monitors and daemons (kmsg, iostat, proc-vmstat, perf-sched, sanity-check, ...), its
    // scheduler's keys (enqueue_time, _id, _rt, LKP_SERVER) and perf-profile's `debug-setup` (a unit test of the
    // monitors has that). `culprit run` refused it with 25 lines, one a key, each repeating every program and monitor
    // name.
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: x\ntestcase: x\ncategory: benchmark\ncommand:\n  cmd: 'true'\n\
               #! include/category/benchmark\nkmsg:\nboot-time:\nuptime:\niostat:\nheartbeat:\nvmstat:\n\
               numa-numastat:\nproc-vmstat:\nproc-stat:\nmeminfo:\nslabinfo:\ninterrupts:\nlock_stat:\nperf-sched:\n  \
               lite_mode: 1\nsoftirqs:\nbdi_dev_mapping:\ndiskstats:\ncpuidle:\ncpufreq-stats:\nsched_debug:\n\
               mpstat:\n#! include/category/ALL\nsanity-check:\n\
               enqueue_time: 2022-07-21 09:09:03.887302163 +08:00\n_id: 62d8a5cf0b9a9308e4f5a7e9\n\
               _rt: /result/x\nLKP_SERVER: internal-lkp-server\n";
    common::write(dir.path(), "job.yaml", job);
    let out = culprit("t.db", &["run", "job.yaml", "-n", "1", "--label", "a", "--json"], dir.path());
    let line: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(line["ok"] == true && line["job"] == "job-true", "{line}\n{err}");
    let said = err.lines().find(|l| l.contains("the job's lkp monitors")).unwrap_or_else(|| panic!("{err}"));
    for monitor in ["kmsg", "boot-time", "iostat", "perf-sched", "sanity-check"] {
        assert!(said.contains(&format!("{monitor}, ")) || said.contains(&format!("{monitor} are")), "{said}");
    }
    // Culprit's own monitors of the list (vmstat, meminfo, and since then proc-vmstat, ...) ran and are not among
    // those named.
    let named = said.split(" are none of").next().unwrap_or_default();
    assert!(said.contains("the runs go without them") && !named.contains(" vmstat"), "{said}");
    assert!(!named.contains("proc-vmstat"), "{said}");
    assert!(line["metrics"]["vmstat.cpu.us"].is_number(), "{line}");
    assert!(line["metrics"]["proc-vmstat.pgfault"].is_number(), "{line}");
    // An unknown key of the same shape is still refused.
    common::write(dir.path(), "typo.yaml", "suite: x\ncommand:\n  cmd: 'true'\nkmsgs:\n");
    let err = common::refused(&culprit("t.db", &["run", "typo.yaml"], dir.path()));
    assert!(err.contains("'kmsgs' is not a program or monitor"), "{err}");
}

#[test]
fn qa13_a_perf_profile_event_the_machine_cannot_count_stops_the_job_before_its_first_run() {
    // lkp's job files record `cycles:pp`; on a machine without hardware counters (most VMs) perf says
    // `<not supported>`. That was found as each run started, so `-n 10` stored ten runs without their profile,
    // told once, where the monitors a job asks for are otherwise checked before its first run.
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    // A perf whose machine has no hardware counters: `perf stat -e cycles:pp` counts nothing, as perf 6 says it.
    let perf = "#!/bin/sh\nfor a in \"$@\"; do\n  [ \"$a\" = cycles:pp ] && \
                echo '<not supported>,,cycles:pp,0,100.00,,' >&2\ndone\nexit 0\n";
    common::write_script(&bin.join("perf"), perf);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let ran = dir.path().join("ran");
    let job = format!("suite: x\ncommand:\n  cmd: 'touch {}'\nperf-profile:\n  event: cycles:pp\n", ran.display());
    common::write(dir.path(), "job.yaml", &job);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_culprit"))
        .current_dir(dir.path())
        .env("PATH", &path)
        .args(["--db", "t.db", "run", "job.yaml", "-n", "3", "--label", "a"])
        .output()
        .unwrap();
    let err = common::refused(&out);
    assert!(err.contains("job.yaml:4: monitor 'perf-profile'") && err.contains("cannot count 'cycles:pp'"), "{err}");
    assert!(err.contains("leave `event:` out") && !ran.exists(), "{err}");
    // `culprit split` writes the job all the same: what this machine lacks is no fault of the file.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_culprit"))
        .current_dir(dir.path())
        .env("PATH", &path)
        .args(["split", "job.yaml", "-o", "split"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}
