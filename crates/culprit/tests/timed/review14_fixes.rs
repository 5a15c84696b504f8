//! End-to-end regressions of review 14: the bisect driver and `culprit check` around the pure bisect engine, on real
//! git repositories of a small C program with a real slowdown.

use crate::common;

use std::path::Path;
use std::process::Command;

/// The commits of the stored samples of bisect session `session` in `db`, in the order they were stored.
fn sample_shas(db: &Path, dir: &Path, session: &str) -> Vec<String> {
    let log = common::stdout(&common::culprit(db, &["bisect", "log", session, "--json"], dir));
    let value: serde_json::Value = serde_json::from_str(&log).unwrap();
    let samples = value["samples"].as_array().unwrap();
    samples.iter().map(|s| s["sha"].as_str().unwrap().to_string()).collect()
}

/// A bisect of a `commits`-commit slowdown repository (the step at `slow_at`; good its first commit, bad its last),
/// killed with kill -9 while its `kill_at`th run is in flight, then run again with the same command. Every run
/// appends its commit to `trace` in the returned directory.
struct KilledBisect {
    dir: tempfile::TempDir,
    repo: std::path::PathBuf,
    shas: Vec<String>,
    db: std::path::PathBuf,
    /// The second command's output.
    again: std::process::Output,
}

fn bisect_killed_at_run(commits: usize, slow_at: usize, kill_at: u32, max_runs: &str) -> KilledBisect {
    let (dir, repo, shas, db) = common::slowdown(commits, slow_at, 99);
    let d = dir.path();
    let run = common::kill_at_run_wrapper(d, "");
    let (good, bad) = (&shas[0], &shas[commits - 1]);
    let args = [
        "bisect", "--repo", repo.to_str().unwrap(), "--good", good, "--bad", bad, "--run", &run, "--build", "make -s",
        "--metric", "command.elapsed_time", "--max-runs", max_runs,
    ];
    std::fs::write(d.join("kill-at"), kill_at.to_string()).unwrap();
    let mut child = common::spawn_culprit(&db, &args, d);
    std::fs::write(d.join("pid"), child.id().to_string()).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(9), "culprit was not killed: {status:?}");
    std::fs::remove_file(d.join("kill-at")).unwrap();
    let again = common::culprit(&db, &args, d);
    KilledBisect { dir, repo, shas, db, again }
}

#[test]
fn a_bisect_killed_inside_a_batch_resumes_it_in_the_order_it_was_taking() {
    // The driver laid each batch out round-robin when it got it (good, bad, good, bad, ...). A session killed inside
    // a batch was resumed from the counts left, laid out round-robin again from its first commit: killed after good,
    // bad, good, bad, good (bad's run in flight), the resumed process ran good, bad, bad where the uninterrupted one
    // would have run bad, good, bad; two runs of good then two of bad, which the engine reads in that order as
    // another bisect. The next run must follow from the stored runs alone, as the engine's simulator picks it.
    let _machine = common::quiet_machine();
    // The probe's runs at good and bad are the session's first two; the sixth run is bad's third, in flight when
    // culprit is killed, after good's third.
    let KilledBisect { dir, shas, db, again, .. } = bisect_killed_at_run(6, 4, 6, "16");
    let d = dir.path();
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("continuing bisect session 1"), "{stderr}");
    let order = sample_shas(&db, d, "1");
    let name = |sha: &String| match sha {
        s if s == &shas[0] => "good".to_string(),
        s if s == &shas[5] => "bad".to_string(),
        other => other.clone(),
    };
    let ends: Vec<String> = order.iter().take(8).map(name).collect();
    assert_eq!(ends, ["good", "bad", "good", "bad", "good", "bad", "good", "bad"]);
}

#[test]
fn a_bisect_runs_from_a_linked_worktree_of_the_repository() {
    // Culprit kept its worktrees and locks in `<checkout>/.git/culprit`, but a linked worktree's `.git` (a checkout
    // made with `git worktree add`, as many kernel developers keep one per branch) is a file naming the git directory,
    // and the bisect stopped at once: "cannot create .../linked/.git/culprit: Not a directory". git bisect works
    // there; so must culprit, without leaving anything in that checkout.
    let _machine = common::quiet_machine();
    let (dir, repo, shas, db) = common::slowdown(4, 3, 99);
    let linked = dir.path().join("linked");
    let mut add = Command::new("git");
    add.arg("-C").arg(&repo).args(["worktree", "add", "-q", "--detach"]).arg(&linked).arg(&shas[3]);
    assert!(add.status().unwrap().success());
    let args = [
        "bisect", "--repo", linked.to_str().unwrap(), "--good", &shas[0], "--bad", &shas[3], "--run", "./bench",
        "--build", "make -s", "--metric", "command.elapsed_time", "--max-runs", "8", "--json",
    ];
    let out = common::culprit(&db, &args, dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bisect session 1"), "{stderr}");
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert!(result["runs"].as_u64().unwrap_or_default() >= 8, "{result}\n{stderr}");
    // The linked checkout is as it was: no build, no culprit directory, nothing untracked.
    let status = Command::new("git").arg("-C").arg(&linked).args(["status", "--porcelain", "--ignored"]).output();
    assert_eq!(String::from_utf8_lossy(&status.unwrap().stdout), "");
    assert!(repo.join(".git").join("culprit").is_dir());
}

#[test]
fn a_bisect_killed_while_it_probes_continues_from_the_probe_runs_it_stored() {
    // Before its session is stored, a bisect probes good and bad (a build and a run each, three runs a side without
    // --metric). Each probe run was stored as it finished, but nothing said whose it was, so the same command after
    // a kill -9 probed again from the start: here good's finished run was taken twice and the first one stayed in
    // the store, read by nothing; the messages said the same command "continues from its stored runs".
    let _machine = common::quiet_machine();
    // The first run is good's probe; the second, bad's, is in flight when culprit is killed.
    let KilledBisect { dir, repo, shas, db, again } = bisect_killed_at_run(4, 3, 2, "8");
    let d = dir.path();
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("bisect session 1"), "{stderr}");
    let trace = std::fs::read_to_string(d.join("trace")).unwrap();
    let good_runs = trace.lines().filter(|sha| *sha == shas[0]).count();
    let good_samples = sample_shas(&db, d, "1").iter().filter(|sha| **sha == shas[0]).count();
    assert_eq!(good_runs, good_samples, "every run of good is one of the session's\n{stderr}");
    // Nothing is left for a later bisect of the same range to take up.
    let left: Vec<_> = std::fs::read_dir(repo.join(".git/culprit")).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(!left.iter().any(|name| name.to_string_lossy().contains("probes")), "{left:?}");
}

#[test]
fn two_stores_bisect_one_repository_at_once() {
    // Each store numbers its sessions from 1, and a session's lock and worktrees were named by its id alone: with a
    // bisect of store A's session 1 running, a bisect of the same repository into store B (`./culprit.db` of another
    // directory, another job) probed good and bad, stored its session 1, and was then refused as "being driven by
    // another culprit"; `bisect list` of B read A's lock for its own session.
    let _machine = common::quiet_machine();
    let (dir, repo, shas, _) = common::slowdown(4, 3, 99);
    let d = dir.path();
    let (a, b) = (d.join("a"), d.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    // A's third run (its session's first, after the probe's two) waits until the test lets it go.
    let wrapper = common::holding_wrapper(d, 3);
    let bisect = |run: &str| -> Vec<String> {
        let range = ["bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", &shas[3]];
        let rest = ["--run", run, "--build", "make -s", "--metric", "command.elapsed_time", "--max-runs", "8"];
        range.iter().chain(&rest).map(|s| s.to_string()).collect()
    };
    let first = bisect(&format!("sh {}", wrapper.display()));
    let first: Vec<&str> = first.iter().map(String::as_str).collect();
    let mut held = common::spawn_culprit("culprit.db", &first, &a);
    common::wait_for_file(&d.join("holding"), "store A's session never started its first run");
    let second = bisect("./bench");
    let second: Vec<&str> = second.iter().map(String::as_str).collect();
    let out = common::culprit("culprit.db", &second, &b);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{stderr}");
    assert!(!stderr.contains("driven by another culprit"), "{stderr}");
    // A's session is running, and B's finished one is not said to be.
    let list = |store: &Path| common::stdout(&common::culprit("culprit.db", &["bisect", "list"], store));
    assert!(list(&a).contains("running"), "{}", list(&a));
    assert!(!list(&b).contains("running"), "{}", list(&b));
    std::fs::write(d.join("go"), "").unwrap();
    let status = held.wait().unwrap();
    assert!(matches!(status.code(), Some(0 | 1)), "{status:?}");
}

#[test]
fn good_and_bad_are_built_once_for_the_probe_and_the_session() {
    // The probe of good and bad built them in worktrees of its own, removed when the session was stored; the
    // session's first runs, at good and bad again, built both a second time: two builds of every bisect (a kernel
    // build each) that nothing counted.
    let _machine = common::quiet_machine();
    let (dir, repo, shas, db) = common::slowdown(4, 3, 99);
    let d = dir.path();
    let builds = d.join("builds");
    let build = format!("echo $CULPRIT_COMMIT >> {}; make -s", builds.display());
    let args = [
        "bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", &shas[3], "--run", "./bench",
        "--build", &build, "--metric", "command.elapsed_time", "--max-runs", "8", "--json",
    ];
    let out = common::culprit(&db, &args, d);
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(result["runs"], 8, "{result}\n{}", String::from_utf8_lossy(&out.stderr));
    let built = std::fs::read_to_string(&builds).unwrap();
    for end in [&shas[0], &shas[3]] {
        assert_eq!(built.lines().filter(|sha| sha == end).count(), 1, "{built}");
    }
    // Nothing is left of the probe's worktrees or the session's.
    let list = Command::new("git").arg("-C").arg(&repo).args(["worktree", "list"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&list.stdout).lines().count(), 1);
}

#[test]
fn the_worktrees_a_killed_session_left_go_with_the_next_bisect_of_the_repository() {
    // A session killed with kill -9 left its worktrees (a build each) and the benchmark it ran; only a resume of that
    // very session removed them, so a session never resumed kept them registered with git for good, and its
    // benchmark ran on beside the next bisect's runs. The next bisect removes them; the stopped session still
    // resumes.
    let _machine = common::quiet_machine();
    let (dir, repo, shas, db) = common::slowdown(5, 4, 99);
    let d = dir.path();
    // The benchmark's shell records its pid before it kills culprit: it is what a kill -9 leaves running.
    let run = common::kill_at_run_wrapper(d, &format!("echo $$ > {}/orphan;", d.display()));
    let args = |good: &str| -> Vec<String> {
        let range = ["bisect", "--repo", repo.to_str().unwrap(), "--good", good, "--bad", &shas[4], "--run", &run];
        let rest = ["--build", "make -s", "--metric", "command.elapsed_time", "--max-runs", "8"];
        range.iter().chain(&rest).map(|s| s.to_string()).collect()
    };
    let first = args(&shas[0]);
    let first: Vec<&str> = first.iter().map(String::as_str).collect();
    std::fs::write(d.join("kill-at"), "4").unwrap();
    let mut child = common::spawn_culprit(&db, &first, d);
    std::fs::write(d.join("pid"), child.id().to_string()).unwrap();
    child.wait().unwrap();
    std::fs::remove_file(d.join("kill-at")).unwrap();
    let worktrees = || {
        let list = Command::new("git").arg("-C").arg(&repo).args(["worktree", "list"]).output().unwrap();
        String::from_utf8_lossy(&list.stdout).lines().count()
    };
    assert_eq!(worktrees(), 3, "the killed session left its worktrees of good and bad");
    let orphan = std::fs::read_to_string(d.join("orphan")).unwrap().trim().to_string();
    let second = args(&shas[1]);
    let second: Vec<&str> = second.iter().map(String::as_str).collect();
    let out = common::culprit(&db, &second, d);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(worktrees(), 1, "only the main worktree is left");
    // Gone, or a zombie that nothing here reaps.
    let state = std::fs::read_to_string(format!("/proc/{orphan}/stat")).unwrap_or_default();
    let state = state.rsplit_once(')').map(|(_, rest)| rest.trim_start().chars().next()).unwrap_or_default();
    assert!(matches!(state, None | Some('Z' | 'X')), "the killed session's benchmark still runs: {state:?}");
    let list = common::stdout(&common::culprit(&db, &["bisect", "list"], d));
    assert!(list.lines().nth(1).is_some_and(|line| line.contains("stopped")), "{list}");
    let resumed = common::culprit(&db, &["bisect", "--resume", "1"], d);
    assert!(matches!(resumed.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&resumed.stderr));
}

/// Whether process `pid` still exists.
fn alive(pid: &str) -> bool {
    Command::new("kill").args(["-0", pid.trim()]).stderr(std::process::Stdio::null()).status().unwrap().success()
}

#[test]
fn a_hang_up_stops_culprit_as_ctrl_c_does_unless_nohup_asked_to_run_on() {
    let _machine = common::shared_machine();
    // review 14 left SIGHUP unhandled: a dropped ssh session ended culprit as kill -9 does, and the benchmark of the
    // step in flight ran on unwatched. A hang-up now stops the benchmark and keeps every finished run, as Ctrl-C
    // does; under nohup, which ignores SIGHUP to ask for running on, culprit runs on.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    common::write(d, "job.yaml", "suite: hup\ncommand:\n  cmd: 'echo $$ > bench.pid; touch started; sleep 120'\n");
    let args = ["--db", "t.db", "run", "job.yaml", "-n", "2", "--label", "a", "--monitors", "none"];
    let start = |ignore_hang_up: bool| {
        let trap = if ignore_hang_up { "trap '' HUP; " } else { "" };
        let script = format!("{trap}exec \"$0\" \"$@\"");
        let child = Command::new("sh")
            .current_dir(d)
            .args(["-c", &script, env!("CARGO_BIN_EXE_culprit")])
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        common::wait_for_file(&d.join("started"), "the benchmark never started");
        std::fs::remove_file(d.join("started")).unwrap();
        let kill = Command::new("kill").args(["-HUP", &child.id().to_string()]).status().unwrap();
        assert!(kill.success());
        child
    };
    let mut hung_up = start(false);
    let begun = std::time::Instant::now();
    common::wait_until("culprit did not stop at the hang-up", || hung_up.try_wait().unwrap().is_some());
    assert!(begun.elapsed() < std::time::Duration::from_secs(20), "it waited for the benchmark");
    // The benchmark's process group is stopped with culprit, not left for its two minutes.
    let bench = std::fs::read_to_string(d.join("bench.pid")).unwrap();
    let stopped = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        !alive(&bench)
    });
    assert!(stopped, "the benchmark ran on after the hang-up");
    // Under nohup the hang-up is ignored: the run goes on, and Ctrl-C still stops it.
    let mut nohup = start(true);
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(nohup.try_wait().unwrap().is_none(), "culprit stopped at a hang-up it was told to ignore");
    let bench = std::fs::read_to_string(d.join("bench.pid")).unwrap();
    assert!(alive(&bench), "the benchmark stopped at a hang-up culprit was told to ignore");
    assert!(Command::new("kill").args(["-INT", &nohup.id().to_string()]).status().unwrap().success());
    let status = nohup.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
}
