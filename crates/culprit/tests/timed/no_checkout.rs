//! `culprit bisect --no-checkout`: the commits' worktrees hold their commit and none of its files, and a build hook
//! that builds `$CULPRIT_COMMIT` in a tree of its own (as `kernel/build.sh` does) finds the culprit; the session
//! keeps the mode, which its resume takes and the report's steps repeat.

use crate::common::{self, culprit, stdout};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A build hook that builds in a tree of its own, as `kernel/build.sh` does: one clone of `repo` under `dir`, moved
/// from commit to commit and built incrementally, its program copied into the commit's worktree (the directory the
/// hook and the benchmark run in). Each build logs a line to the returned file: `$CULPRIT_COMMIT`, the worktree's
/// HEAD, and what the worktree held when the hook started. Returns the log's path and the hook.
fn build_in_a_tree_of_its_own(dir: &Path, repo: &Path) -> (PathBuf, String) {
    let shared = dir.join("shared");
    let cloned = std::process::Command::new("git").arg("clone").arg("-q").arg(repo).arg(&shared).status().unwrap();
    assert!(cloned.success());
    let seen = dir.join("seen.log");
    let build = format!(
        "echo \"$CULPRIT_COMMIT $(git rev-parse HEAD) $(ls -A | tr '\\n' ' ')\" >> {seen} && git -C {shared} \
         checkout -q --detach \"$CULPRIT_COMMIT\" && make -s -C {shared} && cp {shared}/bench ./bench",
        seen = seen.display(),
        shared = shared.display()
    );
    (seen, build)
}

#[test]
fn a_bisect_without_checkouts_builds_each_commit_in_the_hooks_own_tree_and_finds_the_culprit() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    // Commit i of the script is shas[i - 1]: the slowdown is shas[4], the commit that does not build shas[1].
    let (repo, shas) = common::make_slowdown_repo(dir.path(), 8, 5, 2, 40);
    let (seen, build) = build_in_a_tree_of_its_own(dir.path(), &repo);
    let r = repo.to_str().unwrap();
    let (good, bad) = (shas[0].as_str(), shas[7].as_str());
    let args = ["bisect", "--repo", r, "--good", good, "--bad", bad, "--run", "./bench", "--build", &build];
    let out = culprit("s.db", &[&args[..], &["--no-checkout", "--json"]].concat(), dir.path());
    let result: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    assert_eq!(result["status"], "found", "{result:#}");
    assert_eq!(result["culprits"][0]["sha"], shas[4].as_str(), "{result:#}");

    // Every build found a worktree at its commit with nothing in it but git's link to the repository.
    let log = std::fs::read_to_string(&seen).unwrap();
    assert!(log.lines().count() >= 3, "{log}");
    for line in log.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields.len(), 3, "the worktree held files: {line}");
        assert_eq!(fields[0], fields[1], "the worktree's HEAD is its commit: {line}");
        assert_eq!(fields[2], ".git", "{line}");
    }
    // Where the search tested the commit that does not build, its build failed in the hook's tree and it is
    // untestable, as with checkouts; every other tested commit ran.
    for e in result["evidence"].as_array().unwrap() {
        assert_eq!(e["untestable"].as_bool(), Some(e["sha"] == shas[1].as_str()), "{e}");
    }

    // The session keeps the mode, which a resume takes and cannot be told otherwise.
    let id = result["session"].as_i64().unwrap();
    let store = culprit_store::SqliteStore::open(dir.path().join("s.db")).unwrap();
    let config: Value = serde_json::from_str(
        &culprit_store::Store::bisect_session(&store, culprit_store::SessionId(id)).unwrap().config_json,
    )
    .unwrap();
    assert_eq!(config["no_checkout"], true, "{config:#}");
    let id = id.to_string();
    let refused = culprit("s.db", &["bisect", "--resume", &id, "--no-checkout"], dir.path());
    assert!(!refused.status.success() && String::from_utf8_lossy(&refused.stderr).contains("--no-checkout"));

    // A build that expects the commit's files (a plain `make`) finds none: the bisect says why before any session.
    let plain = ["bisect", "--repo", r, "--good", good, "--bad", bad, "--run", "./bench", "--build", "make -s"];
    let out = culprit("plain.db", &[&plain[..], &["--no-checkout"]].concat(), dir.path());
    let said = String::from_utf8_lossy(&out.stderr).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(!out.status.success(), "{out:?}");
    assert!(said.contains("with --no-checkout each commit's worktree holds none of its files"), "{said}");
    // The report's steps bisect the two commits again the way the session did.
    let mail = stdout(&culprit("s.db", &["report", &id], dir.path()));
    let steps: String = mail.lines().map(|l| l.trim().trim_end_matches('\\').trim()).collect::<Vec<_>>().join(" ");
    assert!(steps.contains("--no-checkout"), "{mail}");
}

/// `track --follow --no-checkout`: the commits the pass measures and the bisect it starts all get bare worktrees,
/// and the mail it writes bisects again the same way. Without --bisect or --follow there is nothing to check out.
#[test]
fn a_follow_pass_without_checkouts_measures_bisects_and_mails_from_the_hooks_own_tree() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, _shas) = common::make_slowdown_repo(dir.path(), 12, 7, 99, 40);
    let (seen, build) = build_in_a_tree_of_its_own(dir.path(), &repo);
    let job = dir.path().join("bench.yaml");
    std::fs::write(&job, "suite: command\ntestcase: bench\ncommand:\n  cmd: ./bench\n").unwrap();
    let r = repo.to_str().unwrap();
    let reports = dir.path().join("reports");
    let args = [
        "track", "--follow", "main", "--repo", r, "--job", job.to_str().unwrap(), "--every", "4", "--build", &build,
        "--no-checkout", "--reports", reports.to_str().unwrap(),
    ];
    let out = culprit("f.db", &args, dir.path());
    assert!(out.status.success(), "{out:?}");
    let log = std::fs::read_to_string(&seen).unwrap();
    assert!(log.lines().count() >= 4, "{log}");
    let bare = |line: &str| {
        matches!(line.split_whitespace().collect::<Vec<_>>()[..], [commit, head, ".git"] if commit == head)
    };
    assert!(log.lines().all(bare), "a worktree held files or another commit: {log}");
    let mail = std::fs::read_to_string(reports.join("bisect-1").join("report.txt")).unwrap();
    assert!(mail.contains("--no-checkout"), "{mail}");

    let refused = culprit("f.db", &["track", "--repo", r, "--no-checkout"], dir.path());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success() && said.contains("--no-checkout is for the commits"), "{refused:?}");
}
