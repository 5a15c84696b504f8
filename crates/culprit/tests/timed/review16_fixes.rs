//! End-to-end regressions of review 16: the bisect driver and `culprit check` around the pure bisect engine, on real
//! git repositories of a small C program with a real slowdown (builds, resumes, the good commits a bisect accepts,
//! and the build command of check's references).

use crate::common;

use std::path::Path;
use std::process::Command;

/// The commits `builds` in `dir` lists, one line per finished build (the build commands of these tests append the
/// commit built to it).
fn builds(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("builds")).unwrap_or_default().lines().map(str::to_string).collect()
}

/// The build command of these tests: the fixture's build, then the commit built appended to `dir/builds`.
fn counted_build(dir: &Path) -> String {
    format!("make -s && echo $CULPRIT_COMMIT >> {}", dir.join("builds").display())
}

/// The session worktree roots culprit keeps in `repo` (`.git/culprit/session-*` directories).
fn session_roots(repo: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(repo.join(".git").join("culprit")) else { return Vec::new() };
    let dirs = entries.flatten().filter(|e| e.path().is_dir());
    dirs.map(|e| e.file_name().to_string_lossy().into_owned()).filter(|name| name.starts_with("session-")).collect()
}

#[test]
fn a_bisect_resumed_after_kill_9_reuses_the_builds_that_finished() {
    // A resumed session (the same command again, or --resume) opened its worktrees as new ones, which removes
    // whatever an earlier process left: every commit was built again, good and bad first, though their builds had
    // finished (a kernel build is minutes to hours). A build that finished is marked beside its worktree, keyed by
    // commit and build command, and a resume reuses it.
    let _machine = common::quiet_machine();
    let (dir, repo, shas, db) = common::slowdown(6, 4, 99);
    let d = dir.path();
    // The sixth run (the session's fourth, inside the batch that tests good against bad) kills culprit.
    let (run, build) = (common::kill_at_run_wrapper(d, ""), counted_build(d));
    let args = [
        "bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", &shas[5], "--run", &run, "--build",
        &build, "--metric", "command.elapsed_time", "--max-runs", "16",
    ];
    std::fs::write(d.join("kill-at"), "6").unwrap();
    let mut child = common::spawn_culprit(&db, &args, d);
    std::fs::write(d.join("pid"), child.id().to_string()).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(9), "culprit was not killed: {status:?}");
    std::fs::remove_file(d.join("kill-at")).unwrap();
    let before = builds(d);
    assert_eq!(before, [shas[0].clone(), shas[5].clone()], "the killed bisect built good and bad once each");
    let again = common::culprit(&db, &args, d);
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("continuing bisect session 1"), "{stderr}");
    assert!(matches!(again.status.code(), Some(0 | 1)), "{stderr}");
    let after = builds(d);
    let ends = |sha: &&String| **sha == shas[0] || **sha == shas[5];
    let rebuilt: Vec<&String> = after[before.len()..].iter().filter(ends).collect();
    assert!(rebuilt.is_empty(), "good or bad was built again after the resume: {after:?}\n{stderr}");
    // The session is done: its worktrees and their marks are gone with it.
    assert!(session_roots(&repo).is_empty(), "{:?}", session_roots(&repo));
    let list = Command::new("git").arg("-C").arg(&repo).args(["worktree", "list"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&list.stdout).lines().count(), 1, "{}", String::from_utf8_lossy(&list.stdout));
}

/// Runs git with `args` in `repo`; the test fails when git does.
fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(repo).args(args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Commits a file `name` on a new branch `branch` forked at `at` of `repo` (the benchmark untouched), returns that
/// commit and leaves `main` checked out.
fn side_commit(repo: &Path, branch: &str, at: &str, name: &str) -> String {
    git(repo, &["checkout", "-q", "-b", branch, at]);
    std::fs::write(repo.join(name), "notes\n").unwrap();
    git(repo, &["add", name]);
    git(repo, &["commit", "-q", "-m", &format!("{branch}: notes")]);
    let sha = git(repo, &["rev-parse", "HEAD"]);
    git(repo, &["checkout", "-q", "main"]);
    sha
}

/// A bisect of `repo` with the `goods` given, from them to `bad`, as JSON, with its standard error and exit code.
fn bisect_goods(db: &Path, repo: &Path, goods: &[&str], bad: &str) -> (serde_json::Value, String, Option<i32>) {
    let mut args = vec!["bisect", "--repo", repo.to_str().unwrap(), "--bad", bad];
    for good in goods {
        args.extend(["--good", good]);
    }
    // CPU time: the machine may be shared with other tests, and wall time then moves under a bisect.
    args.extend(["--run", "./bench", "--build", "make -s", "--metric", "command.user_time", "--max-runs", "300"]);
    args.push("--json");
    let out = common::culprit(db, &args, repo.parent().unwrap());
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (serde_json::from_slice(&out.stdout).unwrap_or_default(), stderr, out.status.code())
}

/// Whether a bisect's JSON result names `sha` as a located culprit.
fn blames(result: &serde_json::Value, sha: &str) -> bool {
    let culprits = result["culprits"].as_array().cloned().unwrap_or_default();
    culprits.iter().any(|c| c["sha"] == sha && c["located"] == true)
}

#[test]
fn a_good_that_is_not_an_ancestor_of_bad_bisects_from_their_merge_base_as_git_bisect_does() {
    // `git bisect start BAD GOOD` takes a good on a branch of its own: the candidates are `git rev-list BAD ^GOOD`,
    // and it tests the merge base first. Culprit refused it ("good is not an ancestor of bad"). The merge base is now
    // the good end it measures, and the good branch's commits are no candidates.
    let _machine = common::quiet_machine();
    let (_dir, repo, shas, db) = common::slowdown(6, 4, 99);
    let side = side_commit(&repo, "side", &shas[1], "notes.txt");
    let (result, stderr, code) = bisect_goods(&db, &repo, &[&side], &shas[5]);
    assert_eq!(code, Some(0), "{result}\n{stderr}");
    assert!(stderr.contains(&format!("good {side} ({}) is not an ancestor of bad", &side[..12])), "{stderr}");
    assert!(stderr.contains(&format!("their merge base {} as good", &shas[1][..12])), "{stderr}");
    let candidates = git(&repo, &["rev-list", "--count", &shas[5], &format!("^{side}")]);
    assert!(stderr.contains(&format!("bisecting {candidates} candidate commits after good")), "{stderr}");
    assert_eq!(result["good"], shas[1].as_str(), "{result}");
    assert!(blames(&result, &shas[3]), "{result}\n{stderr}");
}

#[test]
fn several_good_commits_leave_their_branches_out_of_the_candidates() {
    // `git bisect start BAD GOOD1 GOOD2`: commits reachable from any good are no candidates. Culprit took one --good
    // ("the argument '--good' cannot be used multiple times"), so a branch merged into bad that is known to be good
    // was searched too. The first good is measured; the others only bound the candidates.
    let _machine = common::quiet_machine();
    let (_dir, repo, shas, db) = common::slowdown(6, 4, 99);
    let side = side_commit(&repo, "side", &shas[0], "notes.txt");
    git(&repo, &["merge", "-q", "--no-edit", "side"]);
    let merge = git(&repo, &["rev-parse", "HEAD"]);
    let (result, stderr, code) = bisect_goods(&db, &repo, &[&shas[0], &side], &merge);
    assert_eq!(code, Some(0), "{result}\n{stderr}");
    let candidates = git(&repo, &["rev-list", "--count", &merge, &format!("^{}", shas[0]), &format!("^{side}")]);
    assert_eq!(candidates, "6");
    let (first, other) = (&shas[0][..10], &side[..10]);
    let said = format!("bisecting 6 candidate commits after good {first} (and good {other}, not measured)");
    assert!(stderr.contains(&said), "{stderr}");
    assert_eq!(result["good"], shas[0].as_str(), "{result}");
    assert_eq!(result["other_goods"], serde_json::json!([side]), "{result}");
    assert!(blames(&result, &shas[3]), "{result}\n{stderr}");
}

#[test]
fn check_reads_as_references_only_runs_built_with_its_own_build_command() {
    // `culprit check` took the stored runs of the job at good and bad on this machine as its references, however they
    // were built: after a `git bisect run` with one --build, a check with another one (other flags, another compiler)
    // judged the checked-out commit, built its way, against references of other programs.
    let _machine = common::quiet_machine();
    let (dir, repo, shas, db) = common::slowdown(5, 3, 99);
    git(&repo, &["checkout", "-q", &shas[1]]);
    // The benchmark's CPU time, not its elapsed time: under the load of other test binaries (a CI machine's two
    // CPUs), 20 runs a side of elapsed time once failed to separate the 30% slowdown, and this test is about which
    // runs are references, not about noise.
    let check = |build: &str| {
        let args = [
            "check", "--good", &shas[0], "--bad", &shas[4], "--run", "./bench", "--metric", "command.user_time",
            "--build", build,
        ];
        let out = common::culprit(&db, &args, &repo);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{build}: {stderr}");
        stderr
    };
    let measuring = "measuring reference runs of good and bad";
    let first = check("make -s");
    assert!(first.contains(measuring), "{first}");
    let other = check("make -s CC=cc");
    assert!(other.contains(measuring), "references built with another command were reused:\n{other}");
    assert!(other.contains("built otherwise (--build 'make -s')"), "{other}");
    // Each command's references stay its own: the first command's check reads its runs again.
    let again = check("make -s");
    assert!(!again.contains(measuring), "{again}");
    drop(dir);
}

#[test]
fn a_resume_waits_while_another_culprit_removes_the_stopped_sessions_leftovers() {
    // A bisect started in a repository removes what stopped sessions there left (their worktrees, a step left
    // running), holding each one's lock meanwhile. A `--resume` of such a session in that moment was refused as
    // "being driven by another culprit", though nothing drives it and the lock is free again in moments. It waits.
    let _machine = common::quiet_machine();
    let (dir, repo, shas, db) = common::slowdown(4, 3, 99);
    let d = dir.path();
    // The fourth run kills culprit.
    std::fs::write(d.join("kill-at"), "4").unwrap();
    let run = common::kill_at_run_wrapper(d, "");
    let args = [
        "bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", &shas[3], "--run", &run, "--build",
        "make -s", "--metric", "command.elapsed_time", "--max-runs", "8",
    ];
    let mut child = common::spawn_culprit(&db, &args, d);
    std::fs::write(d.join("pid"), child.id().to_string()).unwrap();
    child.wait().unwrap();
    let locks = common::lock_files(&repo);
    let session_lock = locks.iter().find(|name| name.starts_with("session-")).expect("the stopped session's lock");
    let lock = repo.join(".git").join("culprit").join(session_lock);
    // Another culprit removing the stopped session's leftovers, as it says in the lock while it holds it.
    let held = d.join("held");
    let script = format!(
        "printf 'process 1, removing the leftovers of this stopped session' > {}; touch {}; sleep 3",
        lock.display(),
        held.display()
    );
    let mut cleaner = Command::new("flock").arg(&lock).args(["sh", "-c", &script]).spawn().unwrap();
    common::wait_for_file(&held, "the stand-in cleaner never took the lock");
    let resumed = common::culprit(&db, &["bisect", "--resume", "1"], d);
    cleaner.wait().unwrap();
    let stderr = String::from_utf8_lossy(&resumed.stderr);
    assert!(matches!(resumed.status.code(), Some(0 | 1)), "{stderr}");
    assert!(stderr.contains("waiting for another culprit (process 1, removing the leftovers"), "{stderr}");
}
