//! End-to-end tests of the `perf bench` programs through the real binary: lkp's perf-bench job files (with fewer
//! loops, so that a run takes a fraction of a second) run for real, store lkp's metric names, and a syscall
//! benchmark the installed perf lacks is refused before anything runs.

use crate::common::{culprit, refused, stdout, write};

#[test]
fn lkps_perf_bench_jobs_run_for_real_and_store_lkps_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = d.join("r.db");
    // lkp's jobs/perf-bench-sched-pipe.yaml and jobs/perf-bench-sched-messaging.yaml, with fewer loops and groups.
    let pipe = "suite: perf-bench-sched-pipe\ntestcase: perf-bench-sched-pipe\ncategory: benchmark\n\n\
                perf-bench-sched-pipe:\n  loops: 20000ops\n  mode:\n    - process\n    - threads\n";
    let messaging = "suite: perf-bench-sched-messaging\ntestcase: perf-bench-sched-messaging\ncategory: benchmark\n\n\
                     perf-bench-sched-messaging:\n  loops: 20\n  groups: 2\n  ipc:\n    - pipe\n    - socket\n  mode: \
                     thread\n";
    let syscall = "suite: perf-bench-syscall\nperf-bench-syscall:\n  op: basic\n  loop: 100000\n";
    for (name, text) in [("pipe.yaml", pipe), ("messaging.yaml", messaging), ("syscall.yaml", syscall)] {
        let job = write(d, name, text);
        let out = culprit(&db, &["run", job.to_str().unwrap(), "-n", "2", "--label", "x", "--monitors", "none"], d);
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let out = culprit(&db, &["results", "--json"], d);
    let groups: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let groups = groups.as_array().unwrap();
    // Two modes of the pipe, two ipc kinds of messaging, one syscall benchmark: five atomic jobs of two ok runs.
    assert_eq!(groups.len(), 5, "{groups:#?}");
    assert!(groups.iter().all(|g| g["ok_runs"] == 2 && g["failed_runs"] == 0), "{groups:#?}");
    let metric_of = |testcase: &str, metric: &str| -> Vec<f64> {
        let ids = groups.iter().filter(|g| g["testcase"] == testcase).flat_map(|g| g["run_ids"].as_array().unwrap());
        ids.map(|id| {
            let out = culprit(&db, &["results", "--run", &id.to_string(), "--json"], d);
            let run: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
            run["metrics"][metric].as_f64().unwrap_or_else(|| panic!("{metric} missing in {run:#}"))
        })
        .collect()
    };
    // 20,000 round trips take a fraction of a second: tens of thousands to millions of them a second.
    let pipe_rates = metric_of("perf-bench-sched-pipe", "perf-bench-sched-pipe.ops_per_sec");
    assert!(pipe_rates.len() == 4 && pipe_rates.iter().all(|r| (1e3..1e8).contains(r)), "{pipe_rates:?}");
    let times = metric_of("perf-bench-sched-messaging", "perf-bench-sched-messaging.total_time_sec");
    assert!(times.len() == 4 && times.iter().all(|t| *t > 0.0 && *t < 60.0), "{times:?}");
    let calls = metric_of("perf-bench-syscall", "perf-bench-syscall.getppid.ops_per_sec");
    assert!(calls.len() == 2 && calls.iter().all(|r| *r > 1e4), "{calls:?}");
}

#[test]
fn a_syscall_benchmark_the_installed_perf_lacks_is_refused_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = d.join("r.db");
    // lkp's jobs/perf-bench-syscall.yaml asks for benchmarks that perf 6.1 does not have.
    let job = write(d, "syscall.yaml", "suite: perf-bench-syscall\nperf-bench-syscall:\n  op:\n    - no_such_bench\n");
    let out = culprit(&db, &["run", job.to_str().unwrap(), "-n", "1", "--label", "x", "--monitors", "none"], d);
    let message = refused(&out);
    assert!(message.contains("syscall.yaml:3"), "{message}");
    assert!(message.contains("no syscall benchmark 'no_such_bench'; it has: basic"), "{message}");
    // Refused before any run: not even the store was made.
    assert!(!db.exists(), "a store was made for a job refused up front");
}

#[test]
fn lkps_futex_and_mem_jobs_run_for_real_with_their_keys() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = d.join("r.db");
    // lkp's jobs/perf-bench-futex.yaml (two of its tests, a 1 s runtime) and jobs/perf-bench-mem.yaml (1MB buffers).
    let futex = "suite: perf-bench-futex\nruntime: 1s\nnr_task: 2\nperf-bench-futex:\n  test:\n    - hash\n    - \
                 wake\n  shared:\n    - shared\n    -\n";
    let mem =
        "suite: perf-bench-mem\nperf-bench-mem:\n  op:\n    - memcpy\n    - memset\n  function: all\n  size: 1MB\n";
    let mut stdout_of = Vec::new();
    for (name, text) in [("futex.yaml", futex), ("mem.yaml", mem)] {
        let job = write(d, name, text);
        let out = culprit(&db, &["run", job.to_str().unwrap(), "-n", "1", "--label", "x", "--monitors", "none"], d);
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        stdout_of.push(stdout(&out));
    }
    let out = culprit(&db, &["results", "--json"], d);
    let groups: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    // Four futex jobs (hash and wake, shared and private) and two mem jobs, each with its one run stored ok.
    assert_eq!(groups.as_array().unwrap().len(), 6, "{groups:#}");
    let metrics = |id: &serde_json::Value| -> serde_json::Value {
        let out = culprit(&db, &["results", "--run", &id.to_string(), "--json"], d);
        serde_json::from_str::<serde_json::Value>(&stdout(&out)).unwrap()["metrics"].clone()
    };
    for group in groups.as_array().unwrap() {
        let m = metrics(&group["run_ids"][0]);
        let name = group["job"].as_str().unwrap();
        let key = if name.contains("hash") {
            "perf-bench-futex.ops/s"
        } else if name.contains("wake") {
            "perf-bench-futex.wokeup_time_ms"
        } else if name.contains("memcpy") {
            "perf-bench-mem.memcpy.default.GB_per_sec"
        } else {
            "perf-bench-mem.memset.default.GB_per_sec"
        };
        assert!(m[key].as_f64().is_some_and(|v| v > 0.0), "{name}: {key} in {m:#}");
    }
}

#[test]
fn lkps_numa_mem_job_runs_for_real_with_its_keys() {
    // lkp's jobs/perf-bench-numa-mem.yaml with 2 processes and 20M each instead of all CPUs and 300M.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = d.join("r.db");
    let text = "suite: perf-bench-numa-mem\ntestcase: perf-bench-numa-mem\ncategory: benchmark\n\nnr_processes: 2\n\
                nr_threads: 2t\nthp: true\n\nperf-bench-numa-mem:\n  mem_proc: 20M\n  extra_params:\n";
    let job = write(d, "numa.yaml", text);
    let args = ["run", job.to_str().unwrap(), "-n", "1", "--label", "x", "--monitors", "none", "--json"];
    let out = culprit(&db, &args, d);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run: serde_json::Value = serde_json::from_str(stdout(&out).lines().next().unwrap()).unwrap();
    for key in ["GB_sec_total", "GB_sec_thread", "secs_latency", "GB_total", "nsecs_byte_thread"] {
        let value = run["metrics"][format!("perf-bench-numa-mem.{key}")].as_f64();
        assert!(value.is_some_and(|v| v > 0.0), "{key} in {run:#}");
    }
    let shown = stdout(&culprit(&db, &["results", "--run", &run["id"].to_string()], d));
    // perf echoes the options it was given in its raw output, which the run keeps.
    assert!(shown.contains("perf bench numa numa-mem -p 2 -t 2 -m -0 -P 20 --thp 1"), "{shown}");
}
