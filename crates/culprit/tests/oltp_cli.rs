//! End-to-end test of the oltp program (lkp's `oltp`: sysbench's OLTP tests) through the real binary: lkp's own job
//! file, shortened, run for real against the throwaway PostgreSQL server Culprit starts per run, its metrics checked
//! against sysbench's own arithmetic, and the server gone afterwards.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn lkp_job(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../culprit-job/tests/data/lkp-jobs").join(name)
}

fn stored_runs(db: &Path, dir: &Path) -> serde_json::Value {
    let out = common::culprit(db, &["results", "--json"], dir);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("results --json is JSON")
}

#[test]
fn lkps_oltp_job_runs_sysbench_against_a_throwaway_postgresql_and_leaves_no_server() {
    let dir = tempfile::tempdir().unwrap();
    // The server runs as `postgres` under root, which must be able to reach the scratch directory.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let (db, scratch, root) = (dir.path().join("r.db"), dir.path().join("scratch"), dir.path().join("lkp-root"));
    // lkp's jobs/oltp.yaml as it is, but for 2 s on 2 threads and small tables.
    let lkp = std::fs::read_to_string(lkp_job("oltp.yaml")).unwrap();
    let job = lkp.replace("runtime: 600s", "runtime: 2s").replace("nr_threads: 100%", "nr_threads: 2");
    let job = job.replace("table_size: 1000000", "table_size: 1000");
    assert_ne!(job, lkp, "the shortening found lkp's values");
    std::fs::write(dir.path().join("oltp.yaml"), job).unwrap();
    let (scratch_arg, root_arg) = (scratch.to_str().unwrap(), root.to_str().unwrap());
    let args = ["run", "oltp.yaml", "-n", "2", "--label", "x", "--scratch", scratch_arg, "--result-root", root_arg];
    let out = common::culprit(&db, &args, dir.path());
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{said}");
    // lkp's mysql-setup is recorded, not applied, and the run says so.
    let note = "starts no MySQL server (oltp runs sysbench against a throwaway PostgreSQL server)";
    assert!(said.contains(note), "{said}");
    let results = stored_runs(&db, dir.path());
    assert_eq!(results[0]["ok_runs"], 2, "{results}");

    // Each run's values, as lkp's matrix.json of the revision holds them.
    let matrix = common::revision_matrix(&root);
    let series = |key: &str| -> Vec<f64> {
        let values = matrix[key].as_array().unwrap_or_else(|| panic!("{key} missing from {matrix}"));
        values.iter().map(|v| v.as_f64().unwrap()).collect()
    };
    let (transactions, rates) = (series("oltp.transactions"), series("oltp.transactions/s"));
    assert_eq!(transactions.len(), 2, "{matrix}");
    for (run, (&count, &rate)) in transactions.iter().zip(&rates).enumerate() {
        assert!(count >= 1.0 && rate > 0.0, "run {run}: {matrix}");
        // sysbench's own arithmetic: a read-only transaction is 10 point selects and 4 range selects between BEGIN
        // and COMMIT, and the rate is the count over the 2 s run.
        assert_eq!(series("oltp.read")[run], 14.0 * count, "run {run}: {matrix}");
        assert_eq!(series("oltp.other")[run], 2.0 * count, "run {run}: {matrix}");
        assert_eq!(series("oltp.write")[run], 0.0, "run {run}: {matrix}");
        assert!((count / 2.0 / rate - 1.0).abs() < 0.1, "run {run}: {count} in 2 s vs {rate}/s");
        assert!(series("oltp.latency_avg_ms")[run] > 0.0, "run {run}: {matrix}");
    }

    // Every run's server was stopped and its scratch directory removed.
    let leftovers: Vec<_> =
        std::fs::read_dir(&scratch).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
