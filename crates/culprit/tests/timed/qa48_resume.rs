//! QA 48's findings on taking a bisect up again, each against real git repositories and real processes: a build a
//! killed bisect left running, killed by a new bisect of another --build (4); a stopped session named when --bad moved
//! on (6); a new store said when --db names a file that is not there (9a); and a session whose commits were rewritten
//! away refused as such, not blamed on the machine (9f), whether that happened before a resume or while it ran.

use crate::common;

use crate::common::{culprit, git, kill_at_run_wrapper, spawn_culprit, text, write_script};
use std::path::Path;
use std::process::{Command, Output};

/// Whether process `pid` runs: it exists and is neither a zombie nor being freed.
fn running(pid: &str) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit_once(')').is_some_and(|(_, rest)| !matches!(rest.split_whitespace().next(), None | Some("Z" | "X")))
}

/// Kills process `pid` when dropped if it still runs: a failing test must not leave a sleeping build behind.
struct KillOnDrop(String);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if running(&self.0) {
            let _ = Command::new("kill").args(["-KILL", &self.0]).status();
        }
    }
}

/// Starts a bisect of the first five commits of `repo` whose runs go through [`kill_at_run_wrapper`] in `dir`, which
/// kills it with `kill -9` at its third run (the session's first, after the probe's two), so that session 1 is left
/// stopped; returns the bisect's arguments, for the same command again.
fn stopped_session(dir: &Path, repo: &Path, db: &Path, good: &str) -> Vec<String> {
    let run = kill_at_run_wrapper(dir, "");
    let args = ["bisect", "--repo", repo.to_str().unwrap(), "--good", good, "--bad", "main", "--run", &run];
    let how = ["--build", "make -s", "--metric", "command.elapsed_time", "--max-runs", "8"];
    let args: Vec<String> = args.iter().chain(&how).map(|arg| arg.to_string()).collect();
    std::fs::write(dir.join("kill-at"), "3").unwrap();
    let mut child = spawn_culprit(db, &args.iter().map(String::as_str).collect::<Vec<_>>(), dir);
    std::fs::write(dir.join("pid"), child.id().to_string()).unwrap();
    let killed = child.wait().unwrap();
    assert_eq!(killed.code(), None, "the bisect was not killed");
    let listed = text(&culprit(db, &["bisect", "list"], dir).stdout);
    assert!(listed.lines().any(|line| line.split_whitespace().take(2).eq(["1", "stopped"])), "{listed}");
    args
}

#[test]
fn qa48_4_a_new_bisect_with_another_build_kills_the_build_a_killed_bisect_left_running() {
    let _machine = common::quiet_machine();
    let (dir, repo, shas, db) = common::slowdown(4, 99, 99);
    let d = dir.path();
    // The first bisect's build of good hangs after writing its shell's pid, as a build with a wrong command might.
    let pid_file = d.join("build.pid");
    let hanging = d.join("hang.sh");
    let body = format!("#!/bin/sh\necho $$ > {0}.new && mv {0}.new {0}\nexec sleep 3181\n", pid_file.display());
    write_script(&hanging, &body);
    let bisect = |build: &str, run: &str| {
        let args = ["bisect", "--good", &shas[0], "--bad", "main", "--run", run, "--build", build];
        [&args[..], &["--metric", "command.elapsed_time"]].concat().iter().map(|a| a.to_string()).collect::<Vec<_>>()
    };
    let first_args = bisect(hanging.to_str().unwrap(), "./bench");
    let mut first = spawn_culprit(&db, &first_args.iter().map(String::as_str).collect::<Vec<_>>(), &repo);
    common::wait_for_file(&pid_file, "the first bisect's build never started");
    let build_pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();
    let _guard = KillOnDrop(build_pid.clone());
    let dead_culprit = first.id();
    first.kill().unwrap();
    first.wait().unwrap();
    // The build runs in a process group of its own, which the record names and the new bisect kills.
    let stat = std::fs::read_to_string(format!("/proc/{build_pid}/stat")).unwrap();
    let group = stat.rsplit_once(')').unwrap().1.split_whitespace().nth(2).unwrap().to_string();
    let probe_dir = repo.join(format!(".git/culprit/probe-{dead_culprit}"));
    assert!(running(&build_pid) && probe_dir.is_dir(), "the killed bisect left no build running in its probe");

    // Another bisect of the range with another build: it ends early (its runs fail), after its start has removed the
    // dead bisect's probe worktrees, and so killed the build running there first.
    let second_args = bisect("true", "false");
    let out = culprit(&db, &second_args.iter().map(String::as_str).collect::<Vec<_>>(), &repo);
    let err = text(&out.stderr);
    let killed = format!(
        "culprit: killed process group {group}, the build of {} that culprit process {dead_culprit} left running \
         when it died\n",
        &shas[0][..12]
    );
    assert!(err.contains(&killed), "{err}");
    assert!(!running(&build_pid), "the killed bisect's build outlived the new bisect: {err}");
    assert!(!probe_dir.exists(), "{err}");
}

#[test]
fn qa48_6_a_bisect_whose_bad_moved_on_names_the_stopped_session_and_how_to_resume_it() {
    let _machine = common::quiet_machine();
    let (dir, repo, shas, db) = common::slowdown(5, 4, 99);
    let d = dir.path();
    let args = stopped_session(d, &repo, &db, &shas[0]);
    // The branch given as --bad moves on, as linux-next does between a kill and the same command again.
    std::fs::write(repo.join("NOTES"), "later\n").unwrap();
    git(&repo, &["add", "NOTES"]);
    git(&repo, &["commit", "-q", "-m", "rev 6: notes"]);
    let new_bad = git(&repo, &["rev-parse", "main"]);

    let out = culprit(&db, &args.iter().map(String::as_str).collect::<Vec<_>>(), d);
    let err = text(&out.stderr);
    let session = format!("culprit: bisect session 1 of the same job from good {} stopped after ", &shas[0][..10]);
    let ends = format!(
        " runs with bad {}, an ancestor of this bad {}; this starts a new session from nothing",
        &shas[4][..10],
        &new_bad[..10]
    );
    let line = err.lines().find(|line| line.starts_with(&session)).unwrap_or_else(|| panic!("{err}"));
    let resume = format!("run `culprit --db {} bisect --resume 1`", db.display());
    assert!(line.contains(&ends) && line.ends_with(&resume), "{err}");
    assert!(!err.contains("continuing bisect session 1"), "{err}");
}

#[test]
fn qa48_6_a_bisect_from_another_good_does_not_name_the_stopped_session() {
    let _machine = common::quiet_machine();
    let (dir, repo, shas, db) = common::slowdown(5, 4, 99);
    let d = dir.path();
    let mut args = stopped_session(d, &repo, &db, &shas[0]);
    std::fs::write(repo.join("NOTES"), "later\n").unwrap();
    git(&repo, &["add", "NOTES"]);
    git(&repo, &["commit", "-q", "-m", "rev 6: notes"]);
    let good = args.iter().position(|arg| arg == "--good").unwrap() + 1;
    args[good] = shas[1].clone();

    let out = culprit(&db, &args.iter().map(String::as_str).collect::<Vec<_>>(), d);
    let err = text(&out.stderr);
    assert!(err.contains("culprit: bisecting ") && !err.contains("--resume 1`"), "{err}");
}

/// `culprit run` of a one-line job into store `db`, from `dir`, with `CULPRIT_DB` unset.
fn run_into(db: Option<&Path>, dir: &Path) -> Output {
    std::fs::write(dir.join("job.yaml"), "suite: x\ncommand:\n  cmd: echo ops=42\n").unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_culprit"));
    command.current_dir(dir).env_remove("CULPRIT_DB");
    if let Some(db) = db {
        command.arg("--db").arg(db);
    }
    command.args(["run", "job.yaml", "-n", "1", "--label", "a", "--monitors", "none"]).output().unwrap()
}

#[test]
fn qa48_9a_a_new_store_named_by_db_is_said_once_with_the_directory_made_for_it() {
    let _machine = common::shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("resutls/x.db");
    let out = run_into(Some(&typo), dir.path());
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    let said = format!(
        "culprit: created a new store at {} (and its directory {})\n",
        typo.display(),
        dir.path().join("resutls").display()
    );
    assert!(err.contains(&said), "{err}");
    // The store is there now: the same command again adds to it without a word of it.
    let again = run_into(Some(&typo), dir.path());
    assert!(again.status.success() && !text(&again.stderr).contains("created a new store"), "{again:?}");
    // The first store of a directory at the default path is what a first `culprit run` is expected to make.
    let first = run_into(None, dir.path());
    assert!(first.status.success() && !text(&first.stderr).contains("created a new store"), "{first:?}");
    assert!(dir.path().join("culprit.db").is_file());
}

#[test]
fn qa48_9f_a_session_whose_commits_were_rewritten_away_is_refused_as_such() {
    let _machine = common::quiet_machine();
    let (dir, repo, shas, db) = common::slowdown(5, 4, 99);
    let d = dir.path();
    stopped_session(d, &repo, &db, &shas[0]);
    // The branch is rewritten (good kept), the session's worktrees removed, and what nothing holds is pruned.
    git(&repo, &["reset", "-q", "--hard", &shas[0]]);
    std::fs::remove_dir_all(repo.join(".git/culprit")).unwrap();
    git(&repo, &["worktree", "prune"]);
    git(&repo, &["reflog", "expire", "--expire=now", "--all"]);
    git(&repo, &["gc", "-q", "--prune=now"]);
    let gone = Command::new("git").arg("-C").arg(&repo).args(["cat-file", "-e", &shas[1]]).status().unwrap();
    assert!(!gone.success(), "the rewritten commit is still in the repository");
    let runs_before = std::fs::read_to_string(d.join("total")).unwrap();

    let out = culprit(&db, &["bisect", "--resume", "1"], d);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let said = format!(
        "commit {} of bisect session 1 is no longer in the repository {} (and 3 more of its 5 commits) (history \
         rewritten?); this session cannot continue; start a new bisect",
        &shas[1][..12],
        repo.display()
    );
    assert!(err.contains(&said), "{err}");
    assert!(!err.contains("the cause is the machine"), "{err}");
    // Refused before anything ran: not one more run at good.
    assert_eq!(std::fs::read_to_string(d.join("total")).unwrap(), runs_before, "{err}");
}

#[test]
fn qa48_9f_a_commit_rewritten_away_while_the_bisect_runs_stops_it_as_such() {
    // The resume was refused as it should be, but a bisect running when history was rewritten and pruned said its
    // checkout failed "(every commit of the range is in the repository, so the cause is the machine or the
    // repository, not the commit)" and to fix the cause and resume: no fix brings the commit back.
    let _machine = common::quiet_machine();
    let (dir, repo, shas, db) = common::slowdown(6, 4, 99);
    let d = dir.path();
    // The third build is the first of a commit between good and bad (the first two are good's and bad's). Before it
    // builds, the session's other worktrees are removed (bad's holds every commit of a linear range), the branch is
    // put back to good, and whatever nothing holds any more is pruned: the commits after this one go.
    let build = d.join("build.sh");
    let rewrite = format!(
        "#!/bin/sh\nn=$(cat {d}/builds 2>/dev/null || echo 0); n=$((n + 1)); echo $n > {d}/builds\n\
         if [ $n = 3 ]; then\n\
         for w in $(git -C {repo} worktree list --porcelain | sed -n 's/^worktree //p'); do\n\
         [ \"$w\" = {repo} ] || [ \"$w\" = \"$PWD\" ] || git -C {repo} worktree remove --force \"$w\"; done\n\
         git -C {repo} reset -q --hard {good} && git -C {repo} reflog expire --expire=now --all \
         && git -C {repo} gc -q --prune=now\nfi\nexec make -s\n",
        d = d.display(),
        repo = repo.display(),
        good = shas[0]
    );
    write_script(&build, &rewrite);
    let args = ["bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", &shas[5], "--run", "./bench"];
    let how = ["--build", build.to_str().unwrap(), "--metric", "command.user_time"];
    let out = culprit(&db, &[&args[..], &how].concat(), d);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let is_there = |sha: &&String| Command::new("git").arg("-C").arg(&repo).args(["cat-file", "-e", sha]).status();
    let gone: Vec<&String> = shas[1..].iter().filter(|sha| !is_there(sha).unwrap().success()).collect();
    assert!(!gone.is_empty(), "nothing was pruned: {err}");
    let said = format!("is no longer in the repository {} (history rewritten while the bisect ran?)", repo.display());
    assert!(err.contains(&said) && err.contains("this session cannot continue; start a new bisect"), "{err}");
    assert!(gone.iter().any(|sha| err.contains(&sha[..12])), "{err}");
    assert!(!err.contains("the cause is the machine") && !err.contains("fix the cause"), "{err}");
}
