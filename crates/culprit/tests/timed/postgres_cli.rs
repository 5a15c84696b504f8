//! End-to-end test of the `culprit` binary on a PostgreSQL store: `--db postgresql://...` and `$CULPRIT_DB` with
//! such a URL run a tiny command job into the server and list it with `results`, as a farm machine would.
//!
//! The server comes from `CULPRIT_TEST_PG_URL` (`eval "$(bash scripts/postgres-test-server.sh)"`, or run
//! scripts/test.sh). Without it the test fails, unless `CULPRIT_SKIP_POSTGRES=1` says to skip it. The runs carry a
//! label unique to this test process, so runs left by earlier test runs in the shared database do not interfere.

use crate::common;

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
    let _machine = common::shared_machine();
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

/// The row of `bisect list` (through `url`) of the session bisecting `repo`: its fields, split at blanks.
fn session_row(url: &str, repo: &Path, cwd: &Path) -> Vec<String> {
    let list = culprit(&["--db", url, "bisect", "list"], cwd, None);
    assert!(list.status.success(), "{}", text(&list));
    let stdout = String::from_utf8_lossy(&list.stdout).into_owned();
    let line = stdout.lines().find(|l| l.ends_with(repo.to_str().unwrap()));
    let line = line.unwrap_or_else(|| panic!("no session of {}: {stdout}", repo.display()));
    line.split_whitespace().map(String::from).collect()
}

#[test]
fn a_session_another_process_claims_in_the_store_is_listed_running_and_not_driven_here() {
    // On a farm's shared store, the lock file beside the repository tells nothing of a session driven on another
    // machine (one with the same host name, as cloned VMs have): `bisect list` called it running for good, stopped or
    // not, and `--resume` drove it beside its driver. The driver's claim lives in the store now. `psql` holding the
    // session's advisory lock stands in for that other culprit, as the server sees one.
    let Some(url) = server_url() else { return };
    let _machine = common::quiet_machine();
    let (dir, repo, shas, _) = common::slowdown(4, 3, 99);
    let d = dir.path();
    let bisect = [
        "--db", &url, "bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", &shas[3], "--run",
        "./bench", "--build", "make -s", "--metric", "command.elapsed_time", "--max-runs", "8", "--json",
    ];
    let done = culprit(&bisect, d, None);
    assert!(matches!(done.status.code(), Some(0 | 1)), "{}", text(&done));
    let row = session_row(&url, &repo, d);
    let id = row[0].clone();
    // A finished session keeps its stored status; reopened as running, it is one a killed culprit left.
    let reopen = format!("UPDATE bisect_sessions SET status = 'running' WHERE id = {id}");
    let reopened =
        Command::new("psql").args([url.as_str(), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", &reopen]).output().unwrap();
    assert!(reopened.status.success(), "{}", text(&reopened));
    assert_eq!(session_row(&url, &repo, d)[1], "stopped");

    // psql takes the lock and then waits on its input, idle, as a culprit's connection is between its statements (a
    // backend busy in a statement would notice its client gone only when the statement ends).
    let mut holder = Command::new("psql")
        .args([url.as_str(), "-X", "-q"])
        .env("PGAPPNAME", "culprit@farm-node-7 pid 4242")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let hold = format!("SELECT pg_advisory_lock(hashtext(current_schema()), {id});\n");
    std::io::Write::write_all(holder.stdin.as_mut().unwrap(), hold.as_bytes()).unwrap();
    common::wait_until("psql holds the session's lock", || session_row(&url, &repo, d)[1] == "running");
    let resumed = culprit(&["--db", &url, "bisect", "--resume", &id], d, None);
    let stderr = String::from_utf8_lossy(&resumed.stderr).into_owned();
    assert_eq!(resumed.status.code(), Some(2), "{}", text(&resumed));
    assert!(stderr.contains("driven by another culprit (culprit@farm-node-7 pid 4242 from 127.0.0.1"), "{stderr}");

    // The claim goes with the holder's connection, as with a culprit killed with kill -9.
    holder.kill().unwrap();
    holder.wait().unwrap();
    common::wait_until("the server frees the lock", || session_row(&url, &repo, d)[1] == "stopped");
    let resumed = culprit(&["--db", &url, "bisect", "--resume", &id, "--json"], d, None);
    assert!(matches!(resumed.status.code(), Some(0 | 1)), "{}", text(&resumed));
    let status = session_row(&url, &repo, d)[1].clone();
    assert!(["found", "multiple", "not-reproduced", "inconclusive"].contains(&status.as_str()), "{status}");
}

#[test]
fn a_run_writing_nul_bytes_to_stderr_is_stored_in_postgresql_with_a_readable_reason() {
    let _machine = common::shared_machine();
    // PostgreSQL's text refuses NUL; the store escapes it, so a farm keeps the run as a SQLite file does.
    let Some(url) = server_url() else { return };
    let dir = tempfile::tempdir().unwrap();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let label = format!("pg-nul-{}-{nanos}", std::process::id());
    common::a_run_writing_nul_bytes_is_stored_with_a_readable_reason(&url, dir.path(), &label);
}
