//! End-to-end regressions of QA pass 14b: lkp-tests' own stress-ng and sysbench job files (checked in under
//! `crates/culprit-job/tests/data/lkp-jobs/`, as lkp has them) split, and their atomic jobs run with the real
//! benchmarks.

use crate::common;

use crate::common::{culprit, stdout};
use std::path::{Path, PathBuf};

/// One of lkp's job files checked in with the job crate's tests.
fn lkp_job(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../culprit-job/tests/data/lkp-jobs").join(name)
}

/// Splits lkp's job file `name` into `dir/out` and returns the text of its atomic job `atomic` (a file name).
fn split_atomic(dir: &Path, name: &str, atomic: &str) -> String {
    let job = lkp_job(name);
    let out = stdout(&culprit("t.db", &["split", job.to_str().unwrap(), "-o", "out"], dir));
    let path = dir.join("out").join(atomic);
    assert!(out.contains(atomic), "{atomic} is not among:\n{out}");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The JSON line `culprit run --json` printed for its one run.
fn one_run(out: &str) -> serde_json::Value {
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    serde_json::from_str(lines[0]).unwrap()
}

#[test]
fn qa14b_lkps_stress_ng_job_files_with_stressor_options_split() {
    // lkp's stress-ng job files shape stressors with `method`, `type`, `mode`, `sched` and `hdd_opts`, which its run
    // script passes as `--<test>-method` and the like. `culprit split` refused every one of those files with
    // "stress-ng has no param 'method'" (or 'type'), and wrote nothing.
    let dir = tempfile::tempdir().unwrap();
    let switch = split_atomic(dir.path(), "stress-ng-part4.yaml", "stress-ng-part4-mq-100%-switch-60s.yaml");
    assert!(switch.contains("stress-ng:\n  test: switch\n  method: mq\n"), "{switch}");
    let sock = std::fs::read_to_string(dir.path().join("out/stress-ng-part4-100%-sock-60s-dgram.yaml")).unwrap();
    assert!(sock.contains("  test: sock\n  type: dgram\n"), "{sock}");
    let part6 = "stress-ng-part6-1hdd.yaml";
    for (file, atomic, option) in [
        (part6, "stress-ng-part6-1hdd-1HDD-xfs-keep-size_punch-hole-100%-fallocate-60s.yaml", "mode"),
        (part6, "stress-ng-part6-1hdd-1HDD-ext4-direct-100%-hdd-60s.yaml", "hdd_opts"),
        ("stress-ng-scheduler.yaml", "stress-ng-scheduler-100%-rr-pthread-60s.yaml", "sched"),
    ] {
        let sub = tempfile::tempdir().unwrap();
        let text = split_atomic(sub.path(), file, atomic);
        assert!(text.contains(&format!("\n  {option}: ")), "{atomic}: {text}");
    }
}

#[test]
fn qa14b_a_stress_ng_method_from_lkps_job_file_runs_that_method() {
    // The switch stressor's `method: pipe` from lkp's stress-ng-part4 runs `--switch-method pipe`, which stress-ng
    // names in its metric; the job file was refused before.
    let dir = tempfile::tempdir().unwrap();
    let text = split_atomic(dir.path(), "stress-ng-part4.yaml", "stress-ng-part4-pipe-100%-switch-60s.yaml");
    let short = text.replace("testtime: 60s", "testtime: 1s").replace("nr_threads: 100%", "nr_threads: 1");
    assert_ne!(short, text);
    common::write(dir.path(), "switch.yaml", &short);
    let run = ["run", "switch.yaml", "-n", "1", "--label", "a", "--monitors", "none", "--json"];
    let run = one_run(&stdout(&culprit("t.db", &run, dir.path())));
    assert_eq!(run["ok"], true, "{run}");
    let metrics = run["metrics"].as_object().unwrap();
    assert!(metrics.contains_key("stress-ng.switch.ops_per_sec"), "{run}");
    // stress-ng names the method it ran in this metric; mq is its default.
    assert!(metrics.keys().any(|k| k.contains("pipe_method")), "{run}");
    assert!(!metrics.keys().any(|k| k.contains("mq_method")), "{run}");
}

#[test]
fn qa14b_a_stressor_option_the_installed_stress_ng_lacks_is_refused_with_its_line() {
    // lkp's job files follow the newest stress-ng; a method (or a whole option) the installed one lacks failed every
    // run. It is refused before the first run, with its line, stress-ng's own words and what to do.
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: x\ntesttime: 1s\nnr_threads: 1\nstress-ng:\n  test: cyclic\n  method: nosuchmethod\n";
    common::write(dir.path(), "bad.yaml", job);
    let err = common::refused(&culprit("t.db", &["run", "bad.yaml", "-n", "1", "--label", "a"], dir.path()));
    assert!(err.contains("bad.yaml:6"), "{err}");
    let said = "the installed stress-ng refuses '--cyclic-method nosuchmethod' (cyclic-method must be";
    assert!(err.contains(said), "{err}");
    assert!(err.contains("remove 'method', or install a newer stress-ng"), "{err}");
    // An option that shapes one stressor is refused with a class, which lkp would quietly drop.
    common::write(dir.path(), "class.yaml", "suite: x\nstress-ng:\n  class: cpu\n  method: all\n");
    let err = common::refused(&culprit("t.db", &["split", "class.yaml", "-o", "c"], dir.path()));
    assert!(err.contains("class.yaml:4") && err.contains("name the stressor with test:, or remove 'method'"), "{err}");
    // A misspelt option is still a misspelt param.
    common::write(dir.path(), "typo.yaml", "suite: x\nstress-ng:\n  test: cyclic\n  metod: usleep\n");
    let err = common::refused(&culprit("t.db", &["split", "typo.yaml", "-o", "t"], dir.path()));
    assert!(err.contains("typo.yaml:4") && err.contains("did you mean 'method'?"), "{err}");
}

#[test]
fn qa14b_lkps_sysbench_memory_job_file_runs_its_mem_operation() {
    // lkp's sysbench-memory job names the operation `mem_operation`, as its run script passes it to `--memory-oper`;
    // `culprit split` refused the file with "sysbench has no param 'mem_operation'".
    let dir = tempfile::tempdir().unwrap();
    let atomic = "sysbench-memory-seq-1K-write-global-100G-100%-300s.yaml";
    let text = split_atomic(dir.path(), "sysbench-memory.yaml", atomic);
    let short = text.replace("runtime: 300s", "runtime: 1s").replace("mem_operation: write", "mem_operation: read");
    assert!(short.contains("mem_operation: read") && short.contains("runtime: 1s"), "{short}");
    common::write(dir.path(), "mem.yaml", &short);
    let run = ["run", "mem.yaml", "-n", "1", "--label", "a", "--monitors", "none", "--json"];
    let run = one_run(&stdout(&culprit("t.db", &run, dir.path())));
    assert_eq!(run["ok"], true, "{run}");
    assert!(run["metrics"]["sysbench-memory.throughput_MB/s"].as_f64().is_some(), "{run}");
    let shown = stdout(&culprit("t.db", &["results", "--run", &run["id"].to_string()], dir.path()));
    assert!(shown.contains("operation: read"), "{shown}");
}

#[test]
fn qa14b_atomic_jobs_that_cannot_run_here_are_counted_and_the_others_can_still_be_run() {
    // lkp's stress-ng-part4 lists 76 stressors, of which Debian's stress-ng lacks some; `culprit run` refused the
    // file on the first of them alone, so the user met the others one round trip each and was not told how to run
    // those that can.
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: x\ntesttime: 1s\nnr_threads: 1\nstress-ng:\n  test:\n    - nosuchstressor\n    - cpu\n";
    let job = format!("{job}    - nosuchother\n");
    common::write(dir.path(), "mixed.yaml", &job);
    let err = common::refused(&culprit("t.db", &["run", "mixed.yaml", "-n", "1", "--label", "a"], dir.path()));
    let said = "2 of the 3 atomic jobs of mixed.yaml cannot run here: mixed-1-nosuchstressor-1s (the reason follows), \
                and mixed-1-nosuchother-1s; `culprit split mixed.yaml -o DIR` writes each atomic job to a file of its \
                own, to run the 1 that can";
    assert!(err.contains(said), "{err}");
    assert!(err.contains("mixed.yaml:5") && err.contains("no stressor 'nosuchstressor'"), "{err}");
    // A job file none of whose atomic jobs can run is refused as before, with the first reason alone.
    common::write(dir.path(), "none.yaml", "suite: x\nstress-ng:\n  test:\n    - nosuchstressor\n    - nosuchother\n");
    let err = common::refused(&culprit("t.db", &["run", "none.yaml", "-n", "1", "--label", "a"], dir.path()));
    assert!(!err.contains("atomic jobs of") && err.contains("no stressor 'nosuchstressor'"), "{err}");
}

/// The atomic job files `culprit split` wrote of `job` into `dir/<out>`, by name.
fn split_all(dir: &Path, job: &Path, out: &str) -> std::collections::BTreeMap<String, String> {
    let listed = stdout(&culprit("t.db", &["split", job.to_str().unwrap(), "-o", out], dir));
    listed
        .lines()
        .map(|path| {
            let name = Path::new(path).file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(dir.join(path)).unwrap())
        })
        .collect()
}

#[test]
fn qa14b_lkps_include_of_a_file_with_keys_of_its_own_pastes_it_with_them() {
    // lkp's stress-ng-part6-1ssd is `<<: {file: stress-ng-part6-1hdd.yaml, disk: '1SSD'}`: the 1hdd job on an SSD.
    // Read as a YAML merge of that hash it was a job of `file` and `disk` alone ("the job selects no benchmark
    // program"); then it was refused as an include. Now it is the 1hdd file's jobs with disk 1SSD, as in lkp.
    let dir = tempfile::tempdir().unwrap();
    let ssd = split_all(dir.path(), &lkp_job("stress-ng-part6-1ssd.yaml"), "ssd");
    let hdd = split_all(dir.path(), &lkp_job("stress-ng-part6-1hdd.yaml"), "hdd");
    assert!(hdd.len() > 10 && ssd.len() == hdd.len(), "{} against {}", ssd.len(), hdd.len());
    for (name, text) in &ssd {
        assert!(name.starts_with("stress-ng-part6-1ssd-1SSD-"), "{name}");
        assert!(text.contains("disk: 1SSD\n") && !text.contains("1HDD"), "{name}:\n{text}");
        let twin = hdd.get(&name.replace("-1ssd-1SSD-", "-1hdd-1HDD-")).unwrap_or_else(|| panic!("{name}"));
        let without_disk =
            |t: &str| t.lines().filter(|l| !l.starts_with("disk:") && !l.starts_with("job_origin:")).count();
        assert_eq!(without_disk(text), without_disk(twin), "{name}");
    }
    // An include that cannot be found names its line, where it was looked for, and what to do.
    common::write(dir.path(), "plain.yaml", "nr_threads: 1600%\n<<: nosuch.yaml\n");
    let err = common::refused(&culprit("t.db", &["split", "plain.yaml", "-o", "p"], dir.path()));
    assert!(err.contains("plain.yaml:2: cannot include 'nosuch.yaml': not found in or below"), "{err}");
    assert!(err.contains("copy it next to the job file"), "{err}");
}

#[test]
fn qa14b_two_lkp_includes_are_pasted_in_order() {
    // lkp's hackbench-cgroup2 is `<<: cgroup2.yaml` and `<<: hackbench.yaml`: it was refused as "'<<' is given a
    // second time in the same hash ...; merge the two into one '<<:' or remove one", advice that makes no job
    // file, and then as an include. Now it is hackbench.yaml's jobs with cgroup2.yaml's settings.
    let dir = tempfile::tempdir().unwrap();
    let both = split_all(dir.path(), &lkp_job("hackbench-cgroup2.yaml"), "both");
    let hackbench = split_all(dir.path(), &lkp_job("hackbench.yaml"), "alone");
    assert_eq!(both.len(), 8, "{:?}", both.keys());
    assert_eq!(both.len(), hackbench.len());
    for text in both.values() {
        assert!(text.contains("cgroup2:\n") && text.contains("  pids.max: 10000\n"), "{text}");
        assert!(text.contains("hackbench:\n") && text.contains("iterations: 8\n"), "{text}");
    }
    // `culprit run` says which files it pasted in.
    let out = culprit("t.db", &["run", lkp_job("hackbench-cgroup2.yaml").to_str().unwrap(), "-n", "1"], dir.path());
    let said = String::from_utf8_lossy(&out.stderr);
    let included = format!("includes {}, {}", lkp_job("cgroup2.yaml").display(), lkp_job("hackbench.yaml").display());
    assert!(said.contains(&included), "{said}");
}

#[test]
fn qa14b_the_sysctls_lkps_stress_ng_run_sets_are_named_where_they_differ() {
    // lkp's stress-ng run sets kernel.sched_autogroup_enabled=0 for every stressor, and fs.aio-max-nr=1048576 for
    // aio (more for others). Culprit sets none; the runs measured the machine's own limits without a word, so their
    // numbers could differ from lkp's for a reason nobody saw.
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "aio.yaml", "suite: x\ntesttime: 1s\nnr_threads: 1\nstress-ng:\n  test: aio\n");
    let out = culprit("t.db", &["run", "aio.yaml", "-n", "1", "--label", "a", "--monitors", "none"], dir.path());
    stdout(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    let here = |path: &str| std::fs::read_to_string(path).unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
    let mut expected = Vec::new();
    for (name, path, value) in [
        ("kernel.sched_autogroup_enabled", "/proc/sys/kernel/sched_autogroup_enabled", "0"),
        ("fs.aio-max-nr", "/proc/sys/fs/aio-max-nr", "1048576"),
    ] {
        let current = here(path);
        let said = format!("{name}={value} (here {current})");
        // A sysctl already at lkp's value is not named.
        assert_eq!(err.contains(&said), current != value, "{said}: {err}");
        if current != value {
            expected.push(said);
        }
    }
    if !expected.is_empty() {
        let listed = expected.join(", ");
        let said = format!("culprit: lkp's stress-ng run sets the sysctls {listed} before it runs; Culprit sets no");
        assert!(err.contains(&said), "{err}");
    }
    assert!(!err.contains("net.core.somaxconn"), "{err}");
}

#[test]
fn qa14b_lkps_monitor_delay_is_said_not_to_be_applied() {
    // lkp's dbench job gives `monitor_delay: 10`: lkp starts its monitors ten seconds into the benchmark. Culprit's
    // monitors sample the whole run, and the key was recorded without a word, so their averages read as lkp's.
    let dir = tempfile::tempdir().unwrap();
    let text = split_atomic(dir.path(), "dbench.yaml", "dbench-100%.yaml");
    let short = text.replace("nr_threads: 100%", "nr_threads: 1\nruntime: 2s");
    assert!(short.contains("monitor_delay: 10") && short.contains("runtime: 2s"), "{short}");
    common::write(dir.path(), "db.yaml", &short);
    let out = culprit("t.db", &["run", "db.yaml", "-n", "1", "--label", "a", "--monitors", "vmstat"], dir.path());
    stdout(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("culprit: monitor_delay: 10 is recorded with the runs but not applied"), "{err}");
    // Without monitors there is nothing it would delay.
    let out = culprit("t.db", &["run", "db.yaml", "-n", "1", "--label", "b", "--monitors", "none"], dir.path());
    stdout(&out);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("monitor_delay"), "{out:?}");
}

#[test]
fn qa14b_sysbench_memorys_nr_processes_runs_that_many_processes() {
    // lkp's sysbench-memory run starts `nr_processes` sysbench processes at once and its parser sums their totals;
    // Culprit took the key "for lkp compatibility" and ran one process, so the workload was a fraction of lkp's.
    let dir = tempfile::tempdir().unwrap();
    let atomic = "sysbench-memory-seq-1K-write-global-100G-100%-300s.yaml";
    let text = split_atomic(dir.path(), "sysbench-memory.yaml", atomic);
    // 1M of 1K blocks is 1024 events a process, whatever the machine's speed.
    let (blocks, processes) = (1024, 3);
    let short = text
        .replace("runtime: 300s", &format!("runtime: 10s\nnr_processes: {processes}"))
        .replace("nr_threads: 100%", "nr_threads: 1")
        .replace("mem_total_size: 100G", &format!("mem_total_size: {blocks}K"));
    common::write(dir.path(), "mem.yaml", &short);
    let run = ["run", "mem.yaml", "-n", "1", "--label", "a", "--monitors", "none", "--json"];
    let run = one_run(&stdout(&culprit("t.db", &run, dir.path())));
    assert_eq!(run["ok"], true, "{run}");
    assert_eq!(run["metrics"]["sysbench-memory.workload"].as_f64(), Some(f64::from(blocks * processes)), "{run}");
    let shown = stdout(&culprit("t.db", &["results", "--run", &run["id"].to_string()], dir.path()));
    assert_eq!(shown.matches(&format!("Total operations: {blocks} ")).count(), processes as usize, "{shown}");
}

#[test]
fn qa14b_a_stressor_stress_ng_skips_for_root_runs_as_nobody_when_root_runs() {
    // lkp's stress-ng-part1 lists exec, which lkp runs as its unprivileged user: stress-ng skips it for root. Run by
    // root, every run failed with "output yields no metrics", the reason only in stress-ng's output; then it was
    // refused before the runs. Now root runs it as nobody, as lkp runs it as lkp, and it measures.
    let dir = tempfile::tempdir().unwrap();
    for test in ["exec", "spawn"] {
        let job = format!("{test}.yaml");
        common::write(dir.path(), &job, &format!("suite: x\ntesttime: 1s\nnr_threads: 1\nstress-ng:\n  test: {test}\n"));
        let args = ["run", &job, "-n", "1", "--label", test, "--monitors", "none", "--json"];
        let run = one_run(&stdout(&culprit("t.db", &args, dir.path())));
        assert_eq!(run["ok"], true, "{run}");
        let ops = run["metrics"][format!("stress-ng.{test}.ops_per_sec")].as_f64().unwrap_or(0.0);
        assert!(ops > 0.0, "{run}");
    }
}
