//! End-to-end test of the `culprit` binary on a PostgreSQL store: `--db postgresql://...` and `$CULPRIT_DB` with
//! such a URL run a tiny command job into the server and list it with `results`, as a farm machine would.
//!
//! The server comes from `CULPRIT_TEST_PG_URL` (`eval "$(bash scripts/postgres-test-server.sh)"`, or run
//! scripts/test.sh). Without it the test fails, unless `CULPRIT_SKIP_POSTGRES=1` says to skip it. The runs carry a
//! label unique to this test process, so runs left by earlier test runs in the shared database do not interfere.

use std::path::Path;
use std::process::{Command, Output};

fn server_url() -> Option<String> {
    match std::env::var("CULPRIT_TEST_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CULPRIT_SKIP_POSTGRES").as_deref() == Ok("1") => None,
        _ => panic!(
            "CULPRIT_TEST_PG_URL is not set, so `culprit --db postgresql://...` cannot be tested. Start a throwaway \
             server with `eval \"$(bash scripts/postgres-test-server.sh)\"`, or run scripts/test.sh, which does it; \
             set CULPRIT_SKIP_POSTGRES=1 to skip this test explicitly"
        ),
    }
}

fn culprit(args: &[&str], cwd: &Path, db_env: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_culprit"));
    command.args(args).current_dir(cwd).env_remove("CULPRIT_DB");
    if let Some(db) = db_env {
        command.env("CULPRIT_DB", db);
    }
    command.output().unwrap_or_else(|e| panic!("cannot start culprit: {e}"))
}

fn text(output: &Output) -> String {
    format!("stdout:\n{}\nstderr:\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// The `results --json` group of this test's label, if any.
fn group_of(output: &Output, label: &str) -> Option<serde_json::Value> {
    let groups: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_default();
    groups.as_array()?.iter().find(|g| g["revision"].to_string().contains(label)).cloned()
}

#[test]
fn run_and_results_through_a_postgresql_url() {
    let Some(url) = server_url() else { return };
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("ops.yaml");
    std::fs::write(
        &job,
        "suite: command\ncommand:\n  cmd: \"echo 'ops: 42'\"\n  capture:\n    ops: 'ops: ([0-9]+)'\n",
    )
    .unwrap();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let label = format!("pg-cli-{}-{nanos}", std::process::id());
    let job_path = job.to_str().unwrap();

    let run = culprit(&["--db", &url, "run", job_path, "-n", "2", "--label", &label, "--monitors", "none", "--json"], dir.path(), None);
    assert!(run.status.success(), "{}", text(&run));
    let lines: Vec<serde_json::Value> =
        String::from_utf8_lossy(&run.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    assert_eq!(lines.len(), 2, "{}", text(&run));
    assert!(lines.iter().all(|l| l["metrics"]["command.ops"] == 42.0), "{}", text(&run));
    // Nothing went to a SQLite file by mistake.
    assert!(!dir.path().join("culprit.db").exists());

    let results = culprit(&["--db", &url, "results", "--json"], dir.path(), None);
    assert!(results.status.success(), "{}", text(&results));
    let group = group_of(&results, &label).unwrap_or_else(|| panic!("label {label} not listed: {}", text(&results)));
    assert_eq!(group["ok_runs"], 2);
    assert_eq!(group["failed_runs"], 0);

    // The same store through $CULPRIT_DB, as a farm machine's environment would set it; the `postgres://` spelling
    // is accepted too.
    let env_url = url.replacen("postgresql://", "postgres://", 1);
    let from_env = culprit(&["results", "--json"], dir.path(), Some(&env_url));
    assert!(from_env.status.success(), "{}", text(&from_env));
    assert_eq!(group_of(&from_env, &label).map(|g| g["ok_runs"].clone()), Some(serde_json::json!(2)));

    // An unreachable server is a clear error that names it without the password, and creates no file.
    let down = culprit(&["--db", "postgresql://culprit:hunter2@127.0.0.1:1/culprit", "results"], dir.path(), None);
    assert!(!down.status.success());
    let message = String::from_utf8_lossy(&down.stderr);
    assert!(message.contains("postgresql://culprit@127.0.0.1:1/culprit"), "{message}");
    assert!(!message.contains("hunter2"), "the password leaked: {message}");
    assert!(std::fs::read_dir(dir.path()).map(|d| d.count()).unwrap_or(0) == 1, "only the job file is there");
}
