//! End-to-end tests of the pgbench program through the real binary: a short real run against the throwaway
//! PostgreSQL cluster Culprit makes per run (as the `postgres` user when the tests run as root), its stored
//! metrics and monitors, the server gone afterwards, and job errors reported before anything runs.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

fn culprit(db: &Path, args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_culprit"))
        .arg("--db")
        .arg(db)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("culprit runs")
}

fn text(o: &Output) -> String {
    format!("{}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn short_pgbench_job_stores_tps_latency_and_monitors_and_leaves_no_server() {
    let dir = tempfile::tempdir().unwrap();
    // The server runs as `postgres` under root, which must be able to reach the scratch directory.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let db = dir.path().join("r.db");
    let scratch = dir.path().join("scratch");
    let root = dir.path().join("lkp-root");
    let job = dir.path().join("pg.yaml");
    std::fs::write(
        &job,
        "suite: pgbench\ntestcase: pgbench\nruntime: 3s\nnr_task: 2\npgbench-setup:\n  scale_factor: 1\n  worker_threads: 2\npgbench:\nvmstat:\nmeminfo:\n",
    )
    .unwrap();
    let out = culprit(
        &db,
        &[
            "run",
            job.to_str().unwrap(),
            "-n",
            "2",
            "--label",
            "x",
            "--scratch",
            scratch.to_str().unwrap(),
            "--result-root",
            root.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("pgbench.tps"), "{}", text(&out));

    let results: serde_json::Value =
        serde_json::from_slice(&culprit(&db, &["results", "--json"], dir.path()).stdout).unwrap();
    assert_eq!(results[0]["ok_runs"], 2, "{results}");
    assert_eq!(results[0]["failed_runs"], 0, "{results}");

    let matrix = common::revision_matrix(&root);
    let series = |key: &str| -> Vec<f64> {
        matrix[key]
            .as_array()
            .unwrap_or_else(|| panic!("{key} missing from {matrix}"))
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    let tps = series("pgbench.tps");
    let latency = series("pgbench.latency_ms");
    assert_eq!(tps.len(), 2);
    assert_eq!(series("pgbench.failed_transactions"), vec![0.0, 0.0]);
    for (run, (&tps, &latency)) in tps.iter().zip(&latency).enumerate() {
        assert!(tps > 0.0 && latency > 0.0, "run {run}: tps {tps}, latency {latency}");
        // pgbench's latency average is clients / throughput; both come from the same run, so they must agree.
        let implied_ms = 2.0 / tps * 1000.0;
        assert!((implied_ms / latency - 1.0).abs() < 0.25, "run {run}: {implied_ms} ms implied vs {latency} ms");
    }
    for transactions in series("pgbench.transactions") {
        assert!(transactions >= 1.0, "{transactions}");
    }
    // The monitors ran alongside.
    assert!(matrix.get("vmstat.cpu.us").is_some(), "{matrix}");
    assert!(matrix.as_object().unwrap().keys().any(|k| k.starts_with("meminfo.")), "{matrix}");

    // Every run's cluster was stopped and its scratch directory removed.
    let leftovers: Vec<_> = std::fs::read_dir(&scratch).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert_eq!(common::processes_mentioning(scratch.to_str().unwrap()), Vec::<String>::new());
}

#[test]
fn pgbench_job_errors_are_reported_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    for (body, needle) in [
        ("pgbench:\n  port: 5433\n", "'port'"),
        ("pgbench:\n  mode: tpcc\n", "select-only"),
        ("pgbench:\n  clients: 2\n", "clients"),
        ("pgbench:\n  host: db.example\n  max_wal_size: 1GB\n", "throwaway"),
    ] {
        let job = dir.path().join("bad.yaml");
        std::fs::write(&job, format!("suite: pgbench\n{body}")).unwrap();
        let out = culprit(&db, &["run", job.to_str().unwrap(), "--label", "x"], dir.path());
        assert!(!out.status.success(), "{body}: {}", text(&out));
        assert!(text(&out).contains(needle), "{body}: {}", text(&out));
        let results = culprit(&db, &["results", "--json"], dir.path());
        let stored: serde_json::Value = serde_json::from_slice(&results.stdout).unwrap_or(serde_json::Value::Null);
        assert!(stored.as_array().is_none_or(|a| a.is_empty()), "{body}: stored {stored}");
    }
}
