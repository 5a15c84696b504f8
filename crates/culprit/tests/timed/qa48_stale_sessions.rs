//! QA 48's findings 6 and 9e on stale bisect sessions, against real git repositories and real processes: a stopped
//! session whose --bad branch moved on is listed as superseded by the later session that covers it, and `culprit
//! bisect forget` drops it (its runs stay for compare), refusing a session a process still drives.

use crate::common;

use crate::common::{culprit, git, kill_at_run_wrapper, spawn_culprit, text, write_script};
use std::path::Path;
use std::process::Command;

/// The line of `culprit bisect list` for session `id`, split into words; empty when it is not listed.
fn listed(db: &Path, dir: &Path, id: &str) -> Vec<String> {
    let out = common::stdout(&culprit(db, &["bisect", "list"], dir));
    let line = out.lines().find(|line| line.split_whitespace().next() == Some(id)).unwrap_or_default();
    line.split_whitespace().map(str::to_string).collect()
}

/// The bisect of `repo` from `good` to `main` whose runs go through [`kill_at_run_wrapper`] in `dir`, as arguments.
fn bisect_args(dir: &Path, repo: &Path, good: &str) -> Vec<String> {
    let run = kill_at_run_wrapper(dir, "");
    let args = ["bisect", "--repo", repo.to_str().unwrap(), "--good", good, "--bad", "main", "--run", &run];
    let how = ["--build", "make -s", "--metric", "command.elapsed_time", "--max-runs", "8"];
    args.iter().chain(&how).map(|arg| arg.to_string()).collect()
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

#[test]
fn qa48_9e_a_stopped_session_a_later_one_covers_is_listed_superseded_and_forget_drops_it_but_not_its_runs() {
    let _machine = common::quiet_machine();
    let (dir, repo, shas, db) = common::slowdown(5, 4, 99);
    let d = dir.path();
    // Session 1 is killed with kill -9 at its third run (the session's first, after the probe's two).
    let args = bisect_args(d, &repo, &shas[0]);
    std::fs::write(d.join("kill-at"), "3").unwrap();
    let mut child = spawn_culprit(&db, &strs(&args), d);
    std::fs::write(d.join("pid"), child.id().to_string()).unwrap();
    assert_eq!(child.wait().unwrap().code(), None, "the bisect was not killed");
    std::fs::remove_file(d.join("kill-at")).unwrap();
    assert_eq!(listed(&db, d, "1")[..2], ["1", "stopped"]);
    // QA 57: with its repository moved away, where its lock was, nothing drives it either: it was listed "running".
    let moved = d.join("moved-away");
    std::fs::rename(&repo, &moved).unwrap();
    assert_eq!(listed(&db, d, "1")[..2], ["1", "stopped"]);
    std::fs::rename(&moved, &repo).unwrap();

    // The branch given as --bad moves on, and the same command bisects the longer range as session 2.
    std::fs::write(repo.join("NOTES"), "later\n").unwrap();
    git(&repo, &["add", "NOTES"]);
    git(&repo, &["commit", "-q", "-m", "rev 6: notes"]);
    let second = culprit(&db, &strs(&args), d);
    assert!(text(&second.stderr).contains("bisect session 2"), "{}", text(&second.stderr));
    assert_eq!(listed(&db, d, "1")[..5], ["1", "stopped", "(superseded", "by", "2)"]);
    assert_ne!(listed(&db, d, "2")[1], "stopped");
    let json: serde_json::Value =
        serde_json::from_str(&common::stdout(&culprit(&db, &["bisect", "list", "--json"], d))).unwrap();
    assert_eq!((json[0]["status"].as_str(), json[0]["superseded_by"].as_i64()), (Some("stopped"), Some(2)));
    assert_eq!(json[1]["superseded_by"], serde_json::Value::Null);

    // Forgetting session 1 drops it from the list and its log; the runs it took stay, for compare as for anything.
    let compare = ["compare", shas[0].as_str(), shas[4].as_str(), "--repo", repo.to_str().unwrap(), "--json"];
    let before = common::stdout(&culprit(&db, &compare, d));
    let runs_at = |table: &str| {
        let value: serde_json::Value = serde_json::from_str(table).unwrap();
        let columns = value[0]["result"]["columns"].as_array().cloned().unwrap_or_default();
        columns.iter().map(|c| c["ok_runs"].as_u64().unwrap_or(0)).collect::<Vec<_>>()
    };
    // Session 1's probe ran good and its old bad once each, and session 2 ran good again.
    let counted = runs_at(&before);
    assert!(counted.len() == 2 && counted[0] >= 2 && counted[1] >= 1, "{before}");
    let results_before = common::stdout(&culprit(&db, &["results"], d));
    let forgot = culprit(&db, &["bisect", "forget", "1"], d);
    let said = text(&forgot.stderr);
    assert!(forgot.status.success(), "{said}");
    let forgot_line = "culprit: forgot bisect session 1 (stopped, good ";
    assert!(said.starts_with(forgot_line) && said.contains("runs stay in the store"), "{said}");
    assert!(listed(&db, d, "1").is_empty());
    assert_eq!(listed(&db, d, "2")[0], "2");
    let log = culprit(&db, &["bisect", "log", "1"], d);
    assert!(!log.status.success() && text(&log.stderr).contains("bisect session 1 does not exist"), "{log:?}");
    assert_eq!(runs_at(&common::stdout(&culprit(&db, &compare, d))), counted);
    assert_eq!(common::stdout(&culprit(&db, &["results"], d)), results_before);
    // Its worktrees and lock went with it.
    let left: Vec<String> = common::lock_files(&repo).into_iter().filter(|name| name.ends_with("-1.lock")).collect();
    assert!(left.is_empty(), "{left:?}");

    // An id that is not there forgets nothing, the others named with it included.
    let missing = culprit(&db, &["bisect", "forget", "2", "7"], d);
    assert!(!missing.status.success(), "{missing:?}");
    assert!(text(&missing.stderr).contains("no bisect session 7 in") && text(&missing.stderr).contains("nothing was"));
    assert_eq!(listed(&db, d, "2")[0], "2");
}

#[test]
fn qa48_9e_forget_refuses_a_session_a_process_drives() {
    let _machine = common::quiet_machine();
    let (dir, repo, shas, db) = common::slowdown(5, 4, 99);
    let d = dir.path();
    // The session's first run (the third in all) writes its pid and sleeps: the session is being driven.
    let run = d.join("slow.sh");
    let pid = d.join("run.pid");
    let body = format!(
        "#!/bin/sh\nn=$(cat {d}/total 2>/dev/null || echo 0)\nn=$((n + 1))\necho $n > {d}/total\n\
         if [ $n = 3 ]; then echo $$ > {p}.new && mv {p}.new {p}; exec sleep 120; fi\nexec ./bench\n",
        d = d.display(),
        p = pid.display()
    );
    write_script(&run, &body);
    let args = ["bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", "main"];
    let how = ["--run", run.to_str().unwrap(), "--build", "make -s", "--metric", "command.elapsed_time"];
    let mut child = spawn_culprit(&db, &[&args[..], &how[..]].concat(), d);
    common::wait_for_file(&pid, "the session's first run never started");
    let refused = culprit(&db, &["bisect", "forget", "1"], d);
    let err = text(&refused.stderr);
    child.kill().unwrap();
    child.wait().unwrap();
    let _ = Command::new("kill").args(["-KILL", std::fs::read_to_string(&pid).unwrap().trim()]).status();
    assert!(!refused.status.success(), "{err}");
    assert!(err.contains("bisect session 1 is running") && err.contains("nothing was forgotten"), "{err}");
    // Once its culprit is gone, it is stopped and can be forgotten.
    assert_eq!(listed(&db, d, "1")[..2], ["1", "stopped"]);
    assert!(culprit(&db, &["bisect", "forget", "1"], d).status.success());
    assert!(listed(&db, d, "1").is_empty());
}

/// The PostgreSQL server of the tests (`eval "$(bash scripts/postgres-test-server.sh)"`); `None` only when
/// `CULPRIT_SKIP_POSTGRES=1` says to skip.
fn server_url() -> Option<String> {
    match std::env::var("CULPRIT_TEST_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CULPRIT_SKIP_POSTGRES").as_deref() == Ok("1") => None,
        _ => panic!("CULPRIT_TEST_PG_URL is not set; set CULPRIT_SKIP_POSTGRES=1 to skip the PostgreSQL test"),
    }
}

#[test]
fn qa48_9e_forget_on_postgresql_refuses_a_session_claimed_in_the_store_and_keeps_its_runs() {
    let Some(url) = server_url() else { return };
    let _machine = common::quiet_machine();
    // Another shape than postgres_cli.rs's bisect: two repositories made in the same second would otherwise share
    // their SHAs, and so their runs in the shared database.
    let (dir, repo, shas, _) = common::slowdown(4, 2, 99);
    let d = dir.path();
    let db = Path::new(&url);
    let bisect = [
        "bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", &shas[3], "--run", "./bench",
        "--build", "make -s", "--metric", "command.elapsed_time", "--max-runs", "8", "--json",
    ];
    let done = culprit(db, &bisect, d);
    assert!(matches!(done.status.code(), Some(0 | 1)), "{done:?}");
    let list = common::stdout(&culprit(db, &["bisect", "list"], d));
    let row = list.lines().find(|l| l.ends_with(repo.to_str().unwrap())).unwrap_or_else(|| panic!("{list}"));
    let id = row.split_whitespace().next().unwrap().to_string();
    let runs_at_good = || {
        let compare = common::stdout(&culprit(db, &["compare", &shas[0], &shas[3], "--json"], d));
        let value: serde_json::Value = serde_json::from_str(&compare).unwrap();
        value[0]["result"]["columns"][0]["ok_runs"].as_u64()
    };
    let before = runs_at_good();
    assert!(before.is_some_and(|n| n >= 1), "{before:?}");

    // Another culprit's connection holds the session's claim (psql stands in for it, as the server sees one).
    let mut holder = Command::new("psql")
        .args([url.as_str(), "-X", "-q"])
        .env("PGAPPNAME", "culprit@farm-node-7 pid 4242")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let reopen = format!("UPDATE bisect_sessions SET status = 'running' WHERE id = {id};\n");
    let hold = format!("{reopen}SELECT pg_advisory_lock(hashtext(current_schema()), {id});\n");
    std::io::Write::write_all(holder.stdin.as_mut().unwrap(), hold.as_bytes()).unwrap();
    common::wait_until("psql holds the session's claim", || {
        let list = common::stdout(&culprit(db, &["bisect", "list"], d));
        list.lines().any(|l| l.split_whitespace().take(2).eq([id.as_str(), "running"]))
    });
    let refused = culprit(db, &["bisect", "forget", &id], d);
    holder.kill().unwrap();
    holder.wait().unwrap();
    let err = text(&refused.stderr);
    assert!(!refused.status.success() && err.contains(&format!("bisect session {id} is running")), "{err}");

    // Its holder gone, the session is stopped and goes; its runs stay.
    common::wait_until("the server frees the claim", || culprit(db, &["bisect", "forget", &id], d).status.success());
    let list = common::stdout(&culprit(db, &["bisect", "list"], d));
    assert!(!list.lines().any(|l| l.split_whitespace().next() == Some(id.as_str())), "{list}");
    assert_eq!(runs_at_good(), before);
}
