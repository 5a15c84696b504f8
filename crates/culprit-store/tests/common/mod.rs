//! Builders of run records shared by the store's integration tests.

#![allow(dead_code)]

use culprit_core::model::{Machine, MonitorSeries, RawOutput, Revision, RunOutcome, RunRecord};
use std::collections::BTreeMap;

pub fn commit(sha: &str) -> Revision {
    Revision::Commit { sha: sha.to_string(), describe: None, subject: None }
}

pub fn label(name: &str) -> Revision {
    Revision::Label { name: name.to_string() }
}

pub fn machine(hostname: &str) -> Machine {
    Machine {
        hostname: hostname.to_string(),
        cpu_model: "QEMU Virtual CPU version 2.5+".to_string(),
        nr_cpu: 2,
        memory_kib: 24 * 1024 * 1024,
        kernel: "6.1.0-18-amd64".to_string(),
        sockets: 2,
    }
}

/// A small successful run of `job` on `revision` with the given metrics.
pub fn run(job: &str, revision: Revision, host: &str, metrics: &[(&str, f64)]) -> RunRecord {
    RunRecord {
        job_id: format!("id-{job}"),
        job_name: job.to_string(),
        testcase: job.split('-').next().unwrap_or(job).to_string(),
        params: vec![("runtime".to_string(), "10s".to_string())],
        job_yaml: format!("{job}:\n  runtime: 10s\n"),
        revision,
        machine: machine(host),
        started_at: 1_700_000_000.0,
        ended_at: 1_700_000_010.5,
        outcome: RunOutcome::Ok,
        exit_code: Some(0),
        metrics: metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        monitors: Vec::new(),
        raw_outputs: Vec::new(),
        stderr: String::new(),
        scratch: None,
    }
}

pub fn failed(mut record: RunRecord, reason: &str) -> RunRecord {
    record.outcome = RunOutcome::Failed { reason: reason.to_string() };
    record.exit_code = Some(1);
    record.metrics.clear();
    record
}

/// A run with `count` perf-profile metrics, as a perf-heavy job produces.
pub fn profile_run(revision: Revision, count: usize, seed: f64) -> RunRecord {
    let mut record = run("fio-basic-4k", revision, "lkp-host", &[("fio.write_iops", 1000.0 + seed)]);
    for i in 0..count {
        record.metrics.insert(
            format!("perf-profile.children.cycles-pp.function_{i:05}"),
            (i as f64 * 0.001 + seed).rem_euclid(100.0),
        );
    }
    record
}

/// A run that uses every field of the model, with unicode, empty strings, binary data and special floats.
pub fn everything_run() -> RunRecord {
    let mut metrics = BTreeMap::new();
    metrics.insert("fio.write_iops".to_string(), 12345.678);
    metrics.insert("fio.write_clat_mean_us".to_string(), -0.0);
    metrics.insert("time.elapsed_time".to_string(), f64::INFINITY);
    metrics.insert("meminfo.Active(anon)".to_string(), f64::NEG_INFINITY);
    metrics.insert("mpstat.cpu.all.usr%".to_string(), 1e-300);
    metrics.insert("stress-ng.xattr.ops_per_sec".to_string(), f64::MAX);
    metrics.insert("ünïcødé.метрика.指标".to_string(), 42.0);
    metrics.insert(String::new(), 7.0);
    let mut vmstat_series = BTreeMap::new();
    vmstat_series.insert("cpu.id".to_string(), vec![97.0, 96.5, 98.25]);
    vmstat_series.insert("procs.r".to_string(), vec![1.0, 2.0, f64::INFINITY]);
    vmstat_series.insert("empty".to_string(), Vec::new());
    RunRecord {
        job_id: "3f2a9c".to_string(),
        job_name: "fio-basic-4k-randwrite-ü".to_string(),
        testcase: "fio-basic".to_string(),
        params: vec![
            ("runtime".to_string(), "300s".to_string()),
            ("bs".to_string(), "4k".to_string()),
            ("empty".to_string(), String::new()),
            ("ключ".to_string(), "значение 値".to_string()),
            ("bs".to_string(), "duplicate keys keep their order".to_string()),
        ],
        job_yaml: "suite: fio-basic\nruntime: 300s\n# ✓\n".to_string(),
        revision: Revision::Commit {
            sha: "8cc621d2f45ddd3dc664024a647ee7adf48d79a5".to_string(),
            describe: Some("v6.8-rc1-12-g8cc621d2f45d".to_string()),
            subject: Some("mm: speed up — “quoted” 🚀".to_string()),
        },
        machine: Machine {
            hostname: "lkp-ivb-d04".to_string(),
            cpu_model: "Intel(R) Core(TM) i3-3220 CPU @ 3.30GHz".to_string(),
            nr_cpu: 4,
            memory_kib: 8 * 1024 * 1024,
            kernel: "6.8.0-rc1".to_string(),
            // Not counted: stored as NULL, read back as 0.
            sockets: 0,
        },
        started_at: 1_712_345_678.125,
        ended_at: 1_712_345_978.5,
        outcome: RunOutcome::Failed { reason: "timed out after 300 s — killed".to_string() },
        exit_code: Some(-9),
        metrics,
        monitors: vec![
            MonitorSeries { monitor: "vmstat".to_string(), times: vec![0.0, 1.0, 2.0], series: vmstat_series },
            MonitorSeries { monitor: "empty-monitor".to_string(), times: Vec::new(), series: BTreeMap::new() },
        ],
        raw_outputs: vec![
            RawOutput { name: "fio.output".to_string(), content: b"{\"jobs\": []}".to_vec() },
            RawOutput { name: "binary.bin".to_string(), content: (0..=255u8).collect() },
            RawOutput { name: "empty".to_string(), content: Vec::new() },
            RawOutput { name: "ünï".to_string(), content: "текст".as_bytes().to_vec() },
        ],
        stderr: "fio: error — ✗\n\0after nul".to_string(),
        scratch: None,
    }
}
