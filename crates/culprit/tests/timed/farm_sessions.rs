//! A bisect session belongs to the machine it measures on: in a store that a farm's machines share, another
//! machine's session of the same bisect is neither continued nor resumed here, where its runs and this machine's
//! would be compared as one machine's numbers.

use crate::common;

use culprit_store::{SessionId, SqliteStore, Store};
use std::path::Path;

/// The sessions `bisect list` prints, as (id, status, machine) of each row.
fn listed(db: &Path, dir: &Path) -> Vec<(String, String, String)> {
    let list = common::stdout(&common::culprit(db, &["bisect", "list"], dir));
    let mut lines = list.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split_whitespace().collect();
    assert_eq!(header, ["id", "status", "metric", "good", "bad", "machine", "repo"], "{list}");
    let row = |line: &str| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        (fields[0].to_string(), fields[1].to_string(), fields[5].to_string())
    };
    lines.map(row).collect()
}

#[test]
fn another_machines_session_of_the_same_bisect_is_neither_continued_nor_resumed_here() {
    // A farm's machines share a PostgreSQL store and keep their clones at one path. The same bisect command on a
    // second machine found the first machine's session (running there, or stopped) and drove it on: the runs of both
    // machines were replayed as one bisect's samples, and `--resume ID` did the same. The machine that stored the
    // session is stood in for here by rewriting the session's stored machine, as the store would hold it.
    let _machine = common::quiet_machine();
    let (dir, repo, shas, db) = common::slowdown(5, 4, 99);
    let d = dir.path();
    let run = common::kill_at_run_wrapper(d, "");
    let args = [
        "bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", &shas[4], "--run", &run, "--build",
        "make -s", "--metric", "command.elapsed_time", "--max-runs", "10",
    ];
    std::fs::write(d.join("kill-at"), "5").unwrap();
    let mut child = common::spawn_culprit(&db, &args, d);
    std::fs::write(d.join("pid"), child.id().to_string()).unwrap();
    child.wait().unwrap();
    std::fs::remove_file(d.join("kill-at")).unwrap();
    let here = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim().to_string();
    assert_eq!(listed(&db, d), [("1".to_string(), "stopped".to_string(), here.clone())]);

    let first = SessionId(1);
    let runs_there = {
        let mut store = SqliteStore::open(&db).unwrap();
        let stored = store.bisect_session(first).unwrap();
        let mut config: serde_json::Value = serde_json::from_str(&stored.config_json).unwrap();
        assert_eq!(config["machine"], here.as_str(), "a new session names its machine");
        config["machine"] = "farm-node-7".into();
        store.update_bisect_session_config(first, &config.to_string()).unwrap();
        store.bisect_session_runs(first).unwrap()
    };
    assert!(!runs_there.is_empty());

    let resumed = common::culprit(&db, &["bisect", "--resume", "1"], d);
    let refusal = common::refused(&resumed);
    assert!(refusal.contains("measures on machine farm-node-7") && refusal.contains(&here), "{refusal}");

    let again = common::culprit(&db, &args, d);
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(matches!(again.status.code(), Some(0 | 1)), "{stderr}");
    assert!(stderr.contains("session 1 is the same bisect on machine farm-node-7"), "{stderr}");
    assert!(!stderr.contains("continuing bisect session 1"), "{stderr}");
    let rows = listed(&db, d);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!((rows[0].0.as_str(), rows[0].2.as_str()), ("1", "farm-node-7"));
    assert_eq!((rows[1].0.as_str(), rows[1].2.as_str()), ("2", here.as_str()));
    let store = SqliteStore::open(&db).unwrap();
    assert_eq!(store.bisect_session_runs(first).unwrap(), runs_there, "the other machine's session got no runs");
    let log = common::stdout(&common::culprit(&db, &["bisect", "log", "2", "--json"], d));
    let log: serde_json::Value = serde_json::from_str(&log).unwrap();
    assert_eq!(log["outcome"]["machine"], here.as_str(), "{log:#}");
    // Every run of an ended bisect was read by its last decision: the log gives what it subtracted for drift and
    // load, so the levels it decided on can be recomputed from outside.
    let samples = log["samples"].as_array().unwrap();
    assert!(!samples.is_empty(), "{log:#}");
    let kinds = ["warmup_correction", "drift_correction", "load_correction"];
    let corrected = |s: &serde_json::Value| kinds.iter().all(|kind| s[kind].is_f64());
    assert!(samples.iter().all(|s| s["value"].is_null() || corrected(s)), "{log:#}");
    // `bisect list --machine GLOB` lists one machine's sessions of the farm's.
    let of = |glob: &str| common::stdout(&common::culprit(&db, &["bisect", "list", "--machine", glob], d));
    let ids = |text: String| -> Vec<String> {
        text.lines().skip(1).map(|l| l.split_whitespace().next().unwrap().to_string()).collect()
    };
    assert_eq!(ids(of("farm-node-*")), ["1"]);
    assert_eq!(ids(of(&here)), ["2"]);
    assert!(ids(of("nothing-here")).is_empty());
}

/// Runs culprit as the farm machine `machine` (`$CULPRIT_MACHINE`), with `--db db` and `args` in `cwd`.
fn culprit_as(machine: &str, db: &Path, args: &[&str], cwd: &Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_culprit"))
        .current_dir(cwd)
        .env("CULPRIT_MACHINE", machine)
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn machines_that_share_a_host_name_are_kept_apart_by_the_name_the_farm_gives_them() {
    let _machine = common::shared_machine();
    // Cloned VMs of a farm share their host name, which the store keyed every run and session by: their runs were
    // pooled as one machine's noise and one's bisect session was taken as the other's. `$CULPRIT_MACHINE` names each.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = d.join("farm.db");
    let job = "suite: qa\ntestcase: qa\ncommand:\n  cmd: \"echo 'ops/s: 42'\"\n  \
               capture:\n    ops: 'ops/s: ([0-9.]+)'\n";
    common::write(d, "job.yaml", job);
    for machine in ["vm-clone-a", "vm-clone-b"] {
        for label in ["base", "other"] {
            let args = ["run", "job.yaml", "-n", "2", "--label", label, "--monitors", "none"];
            let out = culprit_as(machine, &db, &args, d);
            assert!(out.status.success(), "{out:?}");
        }
    }
    let results = common::stdout(&common::culprit(&db, &["results", "--json"], d));
    let results: serde_json::Value = serde_json::from_str(&results).unwrap();
    let mut machines: Vec<String> = results
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["machine"].as_str().unwrap_or_default().to_string())
        .collect();
    machines.dedup();
    assert_eq!(machines, ["vm-clone-a", "vm-clone-b"], "{results:#}");
    // The robot's table is per machine, as lkp's is per tbox_group: one table for each clone, never pooled.
    let table = common::stdout(&common::culprit(&db, &["compare", "base", "other", "--all"], d));
    assert!(table.contains("vm-clone-a/qa") && table.contains("vm-clone-b/qa"), "{table}");

    // A malformed name is refused before anything runs or is stored, naming the variable and what to do.
    let before = std::fs::metadata(&db).unwrap().len();
    let refused = culprit_as("vm clone/a", &db, &["run", "job.yaml", "-n", "1", "--label", "base"], d);
    let err = common::refused(&refused);
    assert!(err.contains("$CULPRIT_MACHINE (\"vm clone/a\")") && err.contains("unset it"), "{err}");
    let after = common::stdout(&common::culprit(&db, &["results", "--json"], d));
    assert_eq!(after, serde_json::to_string_pretty(&results).unwrap() + "\n", "no run stored under it");
    assert_eq!(std::fs::metadata(&db).unwrap().len(), before);
}
