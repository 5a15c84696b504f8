//! QA 47 D4: the time monitor's rows are named as lkp names them, `<program>.time.*`, so that an imported lkp run
//! and Culprit's run of one job compare in one row (they were `time.*` in Culprit's runs and never met lkp's).

use crate::common::{culprit, stdout, write};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The directory of the one run `culprit run --result-root` wrote under `root` (`.../<label>/0`).
fn written_run(root: &Path) -> PathBuf {
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        if dir.join("stats.json").is_file() {
            return dir;
        }
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            }
        }
    }
    panic!("no run directory under {}", root.display());
}

/// The sides (means, `None` where a side has no value) of `metric`'s row in the one table of `compare --json`.
fn row_means(table: &Value, metric: &str) -> Option<Vec<Option<f64>>> {
    let rows = table[0]["result"]["rows"].as_array()?;
    let row = rows.iter().find(|row| row["metric"] == metric)?;
    let sides = row["sides"].as_array()?;
    let mean = |side: &Value| side["present"].as_bool().unwrap_or(false).then(|| side["mean"].as_f64()).flatten();
    Some(sides.iter().map(mean).collect())
}

#[test]
fn qa47_time_metrics_are_named_as_lkps() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let root = dir.path().join("result");
    let body = "suite: stress-ng\ntestcase: stress-ng\ntesttime: 1s\nnr_threads: 1\nstress-ng:\n  test: cpu\n";
    let job = write(dir.path(), "sng.yaml", body);
    let args = ["run", job.to_str().unwrap(), "-n", "1", "--label", "mine", "--monitors", "none", "--result-root"];
    let out = culprit(&db, &[&args[..], &[root.to_str().unwrap()]].concat(), dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // A short real run stores lkp's names, and its result root's stats say the same.
    let run_json = |id: &str| -> Value {
        let out = culprit(&db, &["results", "--run", id, "--json"], dir.path());
        serde_json::from_str(&stdout(&out)).expect("results --run --json is JSON")
    };
    let run = run_json("1");
    let metrics = run["metrics"].as_object().expect("the run's metrics");
    let elapsed = metrics.get("stress-ng.time.elapsed_time").and_then(Value::as_f64);
    assert!(elapsed.is_some_and(|seconds| seconds >= 1.0), "{:?}", metrics.keys().collect::<Vec<_>>());
    assert!(metrics.contains_key("stress-ng.time.user_time"), "{:?}", metrics.keys().collect::<Vec<_>>());
    assert!(!metrics.keys().any(|name| name.starts_with("time.")), "{:?}", metrics.keys().collect::<Vec<_>>());
    let mine = written_run(&root);
    let stats: Value = serde_json::from_str(&std::fs::read_to_string(mine.join("stats.json")).unwrap()).unwrap();
    assert!(stats["stress-ng.time.elapsed_time"].is_number() && stats.get("time.elapsed_time").is_none(), "{stats}");

    // lkp's run of the same job (its job.yaml), with lkp's stats, at a label of its own beside Culprit's.
    let label_dir = mine.parent().unwrap().parent().unwrap().join("lkp");
    let theirs = label_dir.join("0");
    std::fs::create_dir_all(&theirs).unwrap();
    // Its job.yaml is the job as it ran, without the times and test box Culprit adds after its mark: no start or end
    // time, so that the run's length is read from its stats.
    let job_yaml = std::fs::read_to_string(mine.join("job.yaml")).unwrap();
    let ran = &job_yaml[..job_yaml.find("# added by culprit run --result-root").unwrap_or(job_yaml.len())];
    std::fs::write(theirs.join("job.yaml"), ran).unwrap();
    let lkp_stats = r#"{"stress-ng.cpu.ops": 400, "stress-ng.cpu.ops_per_sec": 400.0, "stress-ng.time.user_time": 0.97,
        "stress-ng.time.elapsed_time": 1.02, "stress-ng.time.minor_page_faults": 120}"#;
    std::fs::write(theirs.join("stats.json"), lkp_stats).unwrap();
    let import = culprit(&db, &["import", root.to_str().unwrap()], dir.path());
    assert!(import.status.success(), "{}", String::from_utf8_lossy(&import.stderr));
    let imported = run_json("2");
    // The run lasts lkp's elapsed time (the import read `time.elapsed_time`, which no lkp stats hold).
    let length = imported["ended_at"].as_f64().unwrap_or(0.0) - imported["started_at"].as_f64().unwrap_or(0.0);
    assert!((length - 1.02).abs() < 1e-6, "{imported}");

    let compare = culprit(&db, &["compare", "mine", "lkp", "--all", "--json"], dir.path());
    let table: Value = serde_json::from_str(&stdout(&compare)).expect("compare --json is JSON");
    assert_eq!(table.as_array().map(Vec::len), Some(1), "one table of the one job: {table}");
    for metric in ["stress-ng.time.user_time", "stress-ng.time.elapsed_time", "stress-ng.cpu.ops_per_sec"] {
        let means = row_means(&table, metric).unwrap_or_default();
        assert_eq!(means.len(), 2, "{metric}: {table}");
        assert!(means.iter().all(Option::is_some), "{metric} has a value on both sides: {means:?}");
    }
    assert_eq!(row_means(&table, "stress-ng.time.user_time").and_then(|m| m[1]), Some(0.97));
    assert!(row_means(&table, "time.user_time").is_none(), "{table}");
    let user_row = table[0]["result"]["rows"].as_array().and_then(|rows| {
        rows.iter().find(|row| row["metric"] == "stress-ng.time.user_time").map(|row| row["class"].clone())
    });
    assert_eq!(user_row, Some(Value::from("Monitor")), "a time row is no program metric");
}
