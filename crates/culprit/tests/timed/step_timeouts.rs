//! Builds and deploys that never end, killed at `--build-timeout` and `--deploy-timeout`: real bisects, a check and
//! a try-fix of a throwaway repository (`tests/fixtures/make-slowdown-repo.sh`) whose build or deploy hangs at one
//! commit; and a hung build that a culprit killed with `kill -9` left behind, killed by the resumed bisect or the next
//! follow pass.

use crate::common;

use crate::common::{make_slowdown_repo, quiet_machine, write_script};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const COMMITS: usize = 16;
/// The commit (1-based, as the fixture counts) that makes the program slower: the culprit is `shas[SLOW_AT - 1]`.
const SLOW_AT: usize = 12;
/// Longest a command of these tests may take: their hung steps sleep for most of an hour, so a limit that does not
/// work fails the test here instead of hanging it.
const DEADLINE: Duration = Duration::from_secs(300);

/// A slowdown repository without a broken commit, its commits, and a store beside it.
fn slowdown() -> (tempfile::TempDir, PathBuf, Vec<String>, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_slowdown_repo(dir.path(), COMMITS, SLOW_AT, 0, 30);
    let db = dir.path().join("b.db");
    (dir, repo, shas, db)
}

/// Writes `dir/NAME.sh`, a build or deploy hook that hangs, every time, at the first commit it meets between good
/// and bad (whose SHA it writes to `dir/NAME.hung`), by running `hang` after printing a line of output; at any
/// other commit it runs `otherwise`. Returns the hook and the file naming the hung commit.
fn hanging_hook(dir: &Path, name: &str, shas: &[String], hang: &str, otherwise: &str) -> (PathBuf, PathBuf) {
    let (good, bad) = (&shas[0], &shas[shas.len() - 1]);
    let hung = dir.join(format!("{name}.hung"));
    let hook = dir.join(format!("{name}.sh"));
    let body = format!(
        "#!/bin/sh\n\
         hung={hung}\n\
         if [ ! -s \"$hung\" ] && [ \"$CULPRIT_COMMIT\" != {good} ] && [ \"$CULPRIT_COMMIT\" != {bad} ]; then\n\
         \x20   echo \"$CULPRIT_COMMIT\" > \"$hung\"\n\
         fi\n\
         if [ \"$CULPRIT_COMMIT\" = \"$(cat \"$hung\" 2>/dev/null)\" ]; then\n\
         \x20   echo \"{name} of $CULPRIT_COMMIT: waiting for something that never comes\"\n\
         \x20   {hang}\n\
         fi\n\
         {otherwise}\n",
        hung = hung.display()
    );
    write_script(&hook, &body);
    (hook, hung)
}

/// A hang the way a build hangs: make runs a recipe whose shell starts a child in the background and waits on
/// another, so the limit must kill the whole process group, not the build command alone.
fn make_hang(seconds: u32) -> String {
    format!("printf 'hang:\\n\\tsleep {seconds} & sleep {seconds}\\n' | make -s -f - hang")
}

/// Starts culprit with `--db db` and `args` in `cwd`, its output going to files in `dir`.
fn spawn(db: &Path, args: &[&str], cwd: &Path, dir: &Path) -> (std::process::Child, PathBuf, PathBuf) {
    let (out, err) = (dir.join(format!("out-{}", args[0])), dir.join(format!("err-{}", args[0])));
    let child = Command::new(env!("CARGO_BIN_EXE_culprit"))
        .current_dir(cwd)
        .arg("--db")
        .arg(db)
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    (child, out, err)
}

/// Waits for a child of [`spawn`] until [`DEADLINE`]; past it the child is killed and the test fails.
fn finish((mut child, out, err): (std::process::Child, PathBuf, PathBuf)) -> Output {
    let begun = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if begun.elapsed() > DEADLINE {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("culprit still running after {DEADLINE:?}:\n{}", std::fs::read_to_string(&err).unwrap());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output { status, stdout: std::fs::read(out).unwrap(), stderr: std::fs::read(err).unwrap() }
}

/// Runs culprit to its end (at most [`DEADLINE`]).
fn culprit(db: &Path, args: &[&str], cwd: &Path, dir: &Path) -> Output {
    finish(spawn(db, args, cwd, dir))
}

/// Whether a process whose command line is `sleep SECONDS` runs: what a hang left behind when its group was not
/// killed whole.
fn sleeping(seconds: u32) -> bool {
    let wanted = format!("sleep\0{seconds}\0");
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline")).is_ok_and(|line| line == wanted.as_bytes())
    })
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "exit {:?}\n{}\n{}", out.status.code(), text(&out.stdout), text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The bisect's result names the culprit and shows `hung` as tested and untestable.
fn assert_found_around(result: &serde_json::Value, shas: &[String], hung: &str) {
    assert_eq!(result["status"], "found", "{result:#}");
    let culprits = result["culprits"].as_array().unwrap();
    assert_eq!(culprits.len(), 1, "{result:#}");
    assert_eq!(culprits[0]["sha"], shas[SLOW_AT - 1], "{result:#}");
    let untestable: Vec<&str> = result["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["untestable"] == true)
        .map(|e| e["sha"].as_str().unwrap())
        .collect();
    assert_eq!(untestable, [hung], "{result:#}");
}

/// The SHA a hook wrote as the commit it hung at; it must not be the culprit or its parent, which an untestable
/// commit beside the step would leave undecided.
fn hung_commit(file: &Path, shas: &[String]) -> String {
    let sha = std::fs::read_to_string(file).expect("the hook never hung").trim().to_string();
    let position = shas.iter().position(|s| *s == sha).unwrap();
    assert!(position + 2 < SLOW_AT || position > SLOW_AT, "the hook hung beside the step, at {position}");
    sha
}


/// Sends culprit (`pid`) a Ctrl-C (SIGINT) once its build hangs, which the build says by writing `hung_file`.
fn ctrl_c_once_hung(pid: u32, hung_file: &Path) {
    common::wait_for_file(hung_file, "the build never hung");
    let kill = Command::new("kill").args(["-INT", &pid.to_string()]).status().unwrap();
    assert!(kill.success());
}
#[test]
fn a_build_past_its_timeout_is_killed_whole_and_its_commit_skipped_while_the_culprit_is_found() {
    let _machine = quiet_machine();
    let (dir, repo, shas, db) = slowdown();
    let (build, hung_file) = hanging_hook(dir.path(), "build", &shas, &make_hang(3171), "exec make -s");
    let build = build.to_str().unwrap();
    let args = ["bisect", "--good", &shas[0], "--bad", "HEAD", "--run", "./bench", "--build", build];
    let how = ["--metric", "command.user_time", "--build-timeout", "2s", "--json"];
    let begun = Instant::now();
    let out = culprit(&db, &[&args[..], &how].concat(), &repo, dir.path());
    let result = json(&out);
    let hung = hung_commit(&hung_file, &shas);
    assert_found_around(&result, &shas, &hung);
    // Killed at the limit with every process make started: nothing of the hang is left, and the bisect went on.
    assert!(!sleeping(3171), "the hung build's children outlived it");
    assert!(begun.elapsed() < Duration::from_secs(120), "took {:?}", begun.elapsed());
    // The progress output says which commit, which step and command, and which limit, and that it was skipped.
    let err = text(&out.stderr);
    let said = format!(
        "culprit: build of {} ('{build}') killed after 2s (--build-timeout); the commit is untestable, skipped\n",
        &hung[..10]
    );
    assert!(err.contains(&said), "{err}");

    // The failed build is stored with its reason and its log, as a failed build is.
    let results = |args: &[&str]| common::stdout(&common::culprit(&db, args, dir.path()));
    let failures = results(&["results", "--failures"]);
    assert!(failures.contains(&format!("build of {} ('{build}') killed after 2s", &hung[..10])), "{failures}");
    let id = failures.split_whitespace().nth(1).expect("a failed run's id").to_string();
    let shown = results(&["results", "--run", &id]);
    assert!(shown.contains("raw output build.log"), "{shown}");
    assert!(shown.contains(&format!("build of {hung}: waiting for something that never comes")), "{shown}");

    // The log replays the session, and says why the untestable commit is.
    let log = results(&["bisect", "log", &result["session"].to_string()]);
    let position = shas.iter().position(|s| *s == hung).unwrap();
    let reason = format!("build of {} ('{build}') killed after 2s (--build-timeout)", &hung[..10]);
    let line = format!("  {position:>2}  {}  {reason}\n", &hung[..12]);
    assert!(log.contains(&line), "{log}");
    assert!(log.contains("1 failed builds or runs"), "{log}");
}

#[test]
fn a_deploy_that_never_comes_back_is_killed_and_its_commit_skipped() {
    let _machine = quiet_machine();
    let (dir, repo, shas, db) = slowdown();
    let (deploy, hung_file) = hanging_hook(dir.path(), "deploy", &shas, "sleep 3174", "echo deployed");
    let deploy = deploy.to_str().unwrap();
    let args = ["bisect", "--good", &shas[0], "--bad", "HEAD", "--run", "./bench", "--build", "make -s"];
    let how = ["--deploy", deploy, "--metric", "command.user_time", "--deploy-timeout", "2", "--json"];
    let out = culprit(&db, &[&args[..], &how].concat(), &repo, dir.path());
    let result = json(&out);
    let hung = hung_commit(&hung_file, &shas);
    assert_found_around(&result, &shas, &hung);
    assert!(!sleeping(3174), "the hung deploy outlived its limit");
    let err = text(&out.stderr);
    let said = format!(
        "culprit: deploy of {} ('{deploy}') killed after 2s (--deploy-timeout); the commit is untestable, skipped\n",
        &hung[..10]
    );
    assert!(err.contains(&said), "{err}");
    // Tried once: the rest of its batch does not wait the whole limit again at a commit already untestable.
    assert_eq!(err.matches("killed after").count(), 1, "{err}");
}

#[test]
fn a_resumed_bisect_keeps_the_timeouts_it_started_with_and_ctrl_c_is_still_an_interruption() {
    let _machine = quiet_machine();
    let (dir, repo, shas, db) = slowdown();
    let (build, hung_file) = hanging_hook(dir.path(), "build", &shas, &make_hang(3172), "exec make -s");
    let build = build.to_str().unwrap();
    let args = ["bisect", "--good", &shas[0], "--bad", "HEAD", "--run", "./bench", "--build", build];
    let how = ["--metric", "command.user_time", "--build-timeout", "10"];
    // Ctrl-C while the build hangs, before its limit: the bisect is interrupted, and nothing is called untestable.
    let started = spawn(&db, &[&args[..], &how].concat(), &repo, dir.path());
    ctrl_c_once_hung(started.0.id(), &hung_file);
    let out = finish(started);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted") && !err.contains("killed after") && !err.contains("untestable"), "{err}");
    assert!(!sleeping(3172), "the interrupted build's children outlived it");

    // The resume builds that commit again, under the session's 10 s (not the default hours).
    let out = culprit(&db, &["bisect", "--resume", "1", "--json"], &repo, dir.path());
    let result = json(&out);
    let hung = hung_commit(&hung_file, &shas);
    assert_found_around(&result, &shas, &hung);
    let err = text(&out.stderr);
    assert!(err.contains(&format!("build of {} ('{build}') killed after 10s (--build-timeout)", &hung[..10])), "{err}");
    assert!(!sleeping(3172));
}

#[test]
fn check_answers_untestable_when_the_checked_out_commits_build_passes_its_timeout() {
    let _machine = quiet_machine();
    let (dir, repo, shas, db) = slowdown();
    // The references build in worktrees (a .git file); the checked-out commit builds in the checkout (a .git
    // directory), where it hangs.
    let build = format!("if [ -d .git ]; then echo waiting forever; {}; fi; make -s", make_hang(3173));
    let checked_out = &shas[5];
    let status = Command::new("git").arg("-C").arg(&repo).args(["checkout", "-q", checked_out]).status().unwrap();
    assert!(status.success());
    let args = ["check", "--good", &shas[0], "--bad", &shas[COMMITS - 1], "--run", "./bench"];
    let how = ["--metric", "command.user_time", "--build", &build, "--build-timeout", "2s"];
    let out = culprit(&db, &[&args[..], &how].concat(), &repo, dir.path());
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{err}");
    let said =
        format!("culprit: build of {} ('{build}') killed after 2s (--build-timeout): untestable\n", &checked_out[..10]);
    assert!(err.contains(&said) && err.contains("waiting forever"), "{err}");
    assert!(!sleeping(3173), "the hung build's children outlived it");
}

/// A try-fix of the slowdown's commit (bad) against its parent (base), with a patch that reverts it, written to
/// `dir/revert.patch`: the arguments up to the build, which the test adds.
fn try_fix_args(dir: &Path, repo: &Path, shas: &[String]) -> Vec<String> {
    let (base, bad) = (&shas[SLOW_AT - 2], &shas[SLOW_AT - 1]);
    let diff = Command::new("git").arg("-C").arg(repo).args(["diff", bad, base]).output().unwrap();
    assert!(diff.status.success() && !diff.stdout.is_empty());
    let patch = dir.join("revert.patch");
    std::fs::write(&patch, &diff.stdout).unwrap();
    let args = ["try-fix", "--base", base, "--bad", bad, "--patch", patch.to_str().unwrap(), "--run", "./bench"];
    args.iter().map(|a| a.to_string()).collect()
}

#[test]
fn a_try_fix_whose_base_build_passes_its_timeout_says_so_and_how_to_give_it_longer_and_skips_nothing() {
    let _machine = quiet_machine();
    let (dir, repo, shas, db) = slowdown();
    let base = &shas[SLOW_AT - 2];
    // The build hangs at base only: the patched tree (bad with the patch) and bad build as usual.
    let build = dir.path().join("build.sh");
    let body = format!(
        "#!/bin/sh\nif [ \"$CULPRIT_COMMIT\" = {base} ]; then echo 'waiting at base'; {}; fi\nexec make -s\n",
        make_hang(3175)
    );
    write_script(&build, &body);
    let args = try_fix_args(dir.path(), &repo, &shas);
    let how = ["--build", build.to_str().unwrap(), "--build-timeout", "2s", "--runs", "3"];
    let args: Vec<&str> = args.iter().map(String::as_str).chain(how).collect();
    let out = culprit(&db, &args, &repo, dir.path());
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    // What happened, to which side, and what to do: not a bisect's "untestable, skipped", since try-fix skips nothing.
    let said = format!(
        "culprit: the build of base ({}) was killed after 2s (--build-timeout), so base cannot be measured and \
         nothing was compared; if the build is only slow, give it longer (e.g. --build-timeout 4s, or none for no \
         limit), and if it hangs at base, find out why there; its output:\nwaiting at base\n",
        &base[..12]
    );
    assert!(err.contains(&said), "{err}");
    assert!(!err.contains("untestable") && !err.contains("skipped"), "{err}");
    assert_eq!(err.matches("killed after").count(), 1, "{err}");
    assert!(!sleeping(3175), "the hung build's children outlived it");
}

/// The fields of `/proc/<pid>/stat` from the state on (after the command name), when the process exists.
fn stat(pid: &str) -> Option<Vec<String>> {
    let line = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(line.rsplit_once(')')?.1.split_whitespace().map(str::to_string).collect())
}

/// Whether process `pid` runs: it exists and has not exited (a zombie whose parent died may never be reaped here).
fn running(pid: &str) -> bool {
    stat(pid).is_some_and(|fields| !matches!(fields[0].as_str(), "Z" | "X"))
}

/// Kills the process group of a hung build when dropped, if its shell `pid` still runs in it: a failing test must not
/// leave the build it orphaned sleeping for most of an hour.
struct KillGroupOnDrop {
    pid: String,
    group: String,
}

impl Drop for KillGroupOnDrop {
    fn drop(&mut self) {
        if running(&self.pid) && stat(&self.pid).is_some_and(|fields| fields[2] == self.group) {
            let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", self.group)]).status();
        }
    }
}

/// A step that a culprit killed with `kill -9` left hanging: its shell's pid and process group (killed when this is
/// dropped, should the test fail first), and the dead culprit's pid.
struct Orphaned {
    pid: String,
    group: String,
    culprit_pid: u32,
    _guard: KillGroupOnDrop,
}

impl Orphaned {
    /// The line the next culprit says when it kills the group, the `step` of `commit`.
    fn reaped_line(&self, step: &str, commit: &str) -> String {
        format!(
            "culprit: killed process group {}, the {step} of {} that culprit process {} left running when it died\n",
            self.group,
            &commit[..12],
            self.culprit_pid
        )
    }

    /// Whether the hanging step still runs.
    fn runs(&self) -> bool {
        running(&self.pid)
    }
}

/// Waits until a step of `culprit` hangs (its shell writes its pid to `pid_file`), checks that `record` (when given)
/// names it while it runs, kills culprit with SIGKILL, and checks that nothing stopped the step.
fn kill_9_while_hung(mut culprit: std::process::Child, pid_file: &Path, record: Option<&Path>) -> Orphaned {
    common::wait_for_file(pid_file, "the step never hung");
    let pid = std::fs::read_to_string(pid_file).unwrap().trim().to_string();
    let group = stat(&pid).expect("the hanging step runs")[2].clone();
    let guard = KillGroupOnDrop { pid: pid.clone(), group: group.clone() };
    if let Some(record) = record {
        assert!(record.exists(), "no record of the running step at {}", record.display());
    }
    let culprit_pid = culprit.id();
    culprit.kill().unwrap();
    let killed = culprit.wait_with_output().unwrap();
    assert_eq!(killed.status.code(), None, "culprit was not killed: {}", text(&killed.stderr));
    std::thread::sleep(Duration::from_millis(200));
    assert!(running(&pid), "the orphaned step ended by itself");
    Orphaned { pid, group, culprit_pid, _guard: guard }
}

#[test]
fn a_build_left_running_by_a_culprit_killed_with_kill_9_is_killed_when_the_session_is_resumed() {
    let _machine = quiet_machine();
    let (dir, repo, shas, db) = slowdown();
    // The build hangs once, at the first commit it meets between good and bad (after the session exists), and
    // writes the hanging shell's pid first; every other build, that commit's next one included, is make's.
    let pid_file = dir.path().join("build.pid");
    let hang = format!("[ -e {0} ] || {{ echo $$ > {0}.new && mv {0}.new {0}; sleep 3176; }}", pid_file.display());
    let (build, hung_file) = hanging_hook(dir.path(), "build", &shas, &hang, "exec make -s");
    let build = build.to_str().unwrap();
    let args = ["bisect", "--good", &shas[0], "--bad", "HEAD", "--run", "./bench", "--build", build];
    resume_after_kill_9_while_hung(("build", 3176), &args, (&pid_file, &hung_file), (dir.path(), &repo, &shas, &db));
}

/// Starts the bisect `args`, whose `step` (build or run) hangs once in `sleep SECONDS` after writing its shell's pid
/// and the hung commit to `files`; kills culprit with `kill -9` while it hangs; and checks that the running step was
/// recorded beside the session's lock, that nothing stopped it, and that `bisect --resume 1` kills it, says so once,
/// measures that commit again and finds the slowdown, its last step's record gone with the step.
fn resume_after_kill_9_while_hung(
    (step, seconds): (&str, u32),
    args: &[&str],
    (pid_file, hung_file): (&Path, &Path),
    (dir, repo, shas, db): (&Path, &Path, &[String], &Path),
) {
    let first = common::spawn_culprit(db, &[args, &["--metric", "command.user_time"]].concat(), repo);
    let orphan = kill_9_while_hung(first, pid_file, None);
    // The session's files are named by the store's tag and the session's id (`session-<tag>-1.step`).
    let culprit_dir = repo.join(".git/culprit");
    let names = std::fs::read_dir(&culprit_dir).unwrap().flatten().map(|entry| entry.path());
    let record = names.filter(|p| p.to_string_lossy().ends_with("-1.step")).find(|p| {
        p.file_name().is_some_and(|name| name.to_string_lossy().starts_with("session-"))
    });
    let record = record.unwrap_or_else(|| panic!("no record of the running step in {}", culprit_dir.display()));

    let out = culprit(db, &["bisect", "--resume", "1", "--json"], repo, dir);
    let err = text(&out.stderr);
    let hung = std::fs::read_to_string(hung_file).unwrap().trim().to_string();
    assert!(err.contains(&orphan.reaped_line(step, &hung)), "{err}");
    assert_eq!(err.matches("killed process group").count(), 1, "{err}");
    assert!(!orphan.runs() && !sleeping(seconds), "the orphaned {step} outlived the resume");
    let result = json(&out);
    assert_eq!(result["status"], "found", "{result:#}");
    assert_eq!(result["culprits"][0]["sha"], shas[SLOW_AT - 1], "{result:#}");
    assert!(!record.exists());
}

#[test]
fn a_build_left_running_by_a_follow_pass_killed_with_kill_9_is_killed_by_the_next_pass() {
    let _machine = quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_slowdown_repo(dir.path(), 5, 99, 0, 0);
    std::fs::write(dir.path().join("job.yaml"), "suite: follow-hang\ncommand:\n  cmd: ./bench\n").unwrap();
    // The first build of the first pass hangs, after writing its shell's pid; every later one is make's.
    let pid_file = dir.path().join("build.pid");
    let build = dir.path().join("build.sh");
    let body = format!(
        "#!/bin/sh\n[ -e {0} ] || {{ echo $$ > {0}.new && mv {0}.new {0}; echo \"$CULPRIT_COMMIT\" > {0}.commit; \
         sleep 3177; }}\nexec make -s\n",
        pid_file.display()
    );
    write_script(&build, &body);
    let args = ["track", "--follow", "main", "--job", "job.yaml", "--every", "4", "--runs", "4"];
    let how = ["--repo", repo.to_str().unwrap(), "--build", build.to_str().unwrap(), "--json"];
    let db = dir.path().join("f.db");
    let first = common::spawn_culprit(&db, &[&args[..], &how].concat(), dir.path());
    let orphan = kill_9_while_hung(first, &pid_file, Some(&repo.join(".git/culprit/follow.step")));

    let out = culprit(&db, &[&args[..], &how].concat(), dir.path(), dir.path());
    let err = text(&out.stderr);
    let hung = std::fs::read_to_string(dir.path().join("build.pid.commit")).unwrap().trim().to_string();
    assert!(shas.contains(&hung), "{hung}");
    assert!(err.contains(&orphan.reaped_line("build", &hung)), "{err}");
    assert!(!orphan.runs() && !sleeping(3177), "the orphaned build outlived the next pass");
    // The pass measured the history as usual, the hung commit included.
    let pass = json(&out);
    let measured: Vec<&str> = pass["measured"].as_array().unwrap().iter().filter_map(|m| m[0].as_str()).collect();
    assert!(measured.contains(&hung.as_str()), "{pass:#}");
    assert!(!repo.join(".git/culprit/follow.step").exists());
}

#[test]
fn ctrl_c_during_a_try_fix_s_patched_build_is_an_interruption_not_a_failed_build() {
    let _machine = quiet_machine();
    let (dir, repo, shas, db) = slowdown();
    // The patched tree's build (in the worktree named `patched`) hangs, after saying so; the others build.
    let (started, builds) = (dir.path().join("patched.building"), dir.path().join("builds.log"));
    let build = dir.path().join("build.sh");
    let body = format!(
        "#!/bin/sh\necho \"$CULPRIT_WORKTREE\" >> {}\n\
         case \"$CULPRIT_WORKTREE\" in */patched) touch {}; echo 'building the patch'; sleep 3178;; esac\n\
         exec make -s\n",
        builds.display(),
        started.display()
    );
    write_script(&build, &body);
    let args = try_fix_args(dir.path(), &repo, &shas);
    let how = ["--build", build.to_str().unwrap(), "--runs", "3"];
    let args: Vec<&str> = args.iter().map(String::as_str).chain(how).collect();
    let running = spawn(&db, &args, &repo, dir.path());
    common::wait_for_file(&started, "the patched build never started");
    let kill = Command::new("kill").args(["-INT", &running.0.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let out = finish(running);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("culprit: interrupted while building the patched tree; nothing was measured\n"), "{err}");
    // Not a build that fails (at patched, or at bad too), and bad was not built to find out which side fails.
    assert!(!err.contains("fail") && !err.contains("killed after"), "{err}");
    let built = std::fs::read_to_string(&builds).unwrap();
    assert!(built.lines().count() == 1 && built.trim_end().ends_with("/patched"), "{built}");
    assert!(!sleeping(3178), "the interrupted build's children outlived it");
    // Nothing was stored: no run of base, bad or the patched tree.
    let results = common::stdout(&common::culprit(&db, &["results"], dir.path()));
    assert!(!results.contains(&shas[SLOW_AT - 2][..10]) && !results.contains("+revert-"), "{results}");
}

#[test]
fn a_resume_given_a_shorter_build_timeout_kills_the_hang_at_it_and_stores_it_for_later_resumes() {
    let _machine = quiet_machine();
    let (dir, repo, shas, db) = slowdown();
    let (build, hung_file) = hanging_hook(dir.path(), "build", &shas, &make_hang(3179), "exec make -s");
    let build = build.to_str().unwrap();
    let args = ["bisect", "--good", &shas[0], "--bad", "HEAD", "--run", "./bench", "--build", build];
    let how = ["--metric", "command.user_time", "--build-timeout", "1h"];
    // Started with an hour for a build, and stopped while one hangs: the hour would be waited again on resume.
    let started = spawn(&db, &[&args[..], &how].concat(), &repo, dir.path());
    ctrl_c_once_hung(started.0.id(), &hung_file);
    assert_eq!(finish(started).status.code(), Some(130));

    // Resumed with 2 s instead: the hang is killed at 2 s, and the session goes on to its culprit.
    let out = culprit(&db, &["bisect", "--resume", "1", "--build-timeout", "2s", "--json"], &repo, dir.path());
    let result = json(&out);
    let hung = hung_commit(&hung_file, &shas);
    assert_found_around(&result, &shas, &hung);
    let err = text(&out.stderr);
    let said = "culprit: session 1 now runs with --build-timeout 2s, --deploy-timeout 1h, here and when resumed later \
                (it had --build-timeout 1h, --deploy-timeout 1h)\n";
    assert!(err.contains(said), "{err}");
    assert!(err.contains(&format!("build of {} ('{build}') killed after 2s (--build-timeout)", &hung[..10])), "{err}");
    assert!(!sleeping(3179));
    // Stored with the session: its report's command to measure again carries it, and a later resume reads it.
    let report = common::stdout(&common::culprit(&db, &["report", "1"], dir.path()));
    assert!(report.contains(" --build-timeout 2s"), "{report}");
    // A finished session has no step left to limit: it keeps what it has.
    let out = culprit(&db, &["bisect", "--resume", "1", "--build-timeout", "3h", "--json"], &repo, dir.path());
    assert_eq!(json(&out)["status"], "found");
    let err = text(&out.stderr);
    let kept = "culprit: session 1 is finished (found), so it keeps its timeouts (--build-timeout 2s, --deploy-timeout \
                1h)\n";
    assert!(err.contains(kept), "{err}");
}

#[test]
fn a_build_left_running_while_probing_good_and_bad_is_killed_by_the_same_command_run_again() {
    let _machine = quiet_machine();
    let (dir, repo, shas, db) = slowdown();
    // The first build of good hangs once, before any session exists: only the same command can take the work up.
    let pid_file = dir.path().join("build.pid");
    let build = dir.path().join("build.sh");
    let body = format!(
        "#!/bin/sh\nif [ \"$CULPRIT_COMMIT\" = {} ] && [ ! -e {1} ]; then echo $$ > {1}.new && mv {1}.new {1}; \
         sleep 3180; fi\nexec make -s\n",
        shas[0],
        pid_file.display()
    );
    write_script(&build, &body);
    let args = ["bisect", "--good", &shas[0], "--bad", "HEAD", "--run", "./bench", "--build", build.to_str().unwrap()];
    let args = [&args[..], &["--metric", "command.user_time", "--json"]].concat();
    let first = common::spawn_culprit(&db, &args, &repo);
    let orphan = kill_9_while_hung(first, &pid_file, None);
    // No session was stored yet: `--resume` has no ID to take, and says what does continue the work.
    let resumed = culprit(&db, &["bisect", "--resume", "1"], &repo, dir.path());
    let said = text(&resumed.stderr);
    assert_eq!(resumed.status.code(), Some(2), "{said}");
    assert!(said.contains("bisect session 1 does not exist") && said.contains("run the same bisect command"), "{said}");

    let out = culprit(&db, &args, &repo, dir.path());
    let err = text(&out.stderr);
    assert!(err.contains(&orphan.reaped_line("build", &shas[0])), "{err}");
    assert!(!orphan.runs() && !sleeping(3180), "the orphaned build outlived the command run again");
    assert_eq!(json(&out)["culprits"][0]["sha"], shas[SLOW_AT - 1]);
    let locks = common::lock_files(&repo);
    assert!(locks.iter().all(|name| !name.starts_with("start-")), "{locks:?}");
    let culprit_dir = repo.join(".git/culprit").read_dir().unwrap().flatten().map(|e| e.file_name());
    let steps: Vec<_> = culprit_dir.filter(|name| name.to_string_lossy().ends_with(".step")).collect();
    assert!(steps.is_empty(), "{steps:?}");
}

#[test]
fn a_benchmark_left_running_by_a_culprit_killed_with_kill_9_is_killed_when_the_session_is_resumed() {
    let _machine = quiet_machine();
    let (dir, repo, shas, db) = slowdown();
    // The benchmark hangs once, at the first commit it meets between good and bad, as a benchmark stuck on a lost
    // wake-up would; it writes the hanging shell's pid first.
    let pid_file = dir.path().join("run.pid");
    let hang = format!("[ -e {0} ] || {{ echo $$ > {0}.new && mv {0}.new {0}; sleep 3181; }}", pid_file.display());
    let (bench, hung_file) = hanging_hook(dir.path(), "run", &shas, &hang, "exec ./bench");
    let args = ["bisect", "--good", &shas[0], "--bad", "HEAD", "--run", bench.to_str().unwrap(), "--build", "make -s"];
    // The running benchmark is recorded beside the session's lock, as a build is.
    resume_after_kill_9_while_hung(("run", 3181), &args, (&pid_file, &hung_file), (dir.path(), &repo, &shas, &db));
}

#[test]
fn a_build_left_running_by_a_check_killed_with_kill_9_is_killed_by_the_next_check() {
    let _machine = quiet_machine();
    let (dir, repo, shas, db) = slowdown();
    // `git bisect run` has the repository at a commit between good and bad; its build hangs once there (the hook
    // lets good's and bad's reference builds through), after writing the hanging shell's pid.
    let middle = &shas[COMMITS / 2];
    let status = Command::new("git").arg("-C").arg(&repo).args(["checkout", "-q", middle]).status().unwrap();
    assert!(status.success());
    let pid_file = dir.path().join("check.pid");
    let hang = format!("[ -e {0} ] || {{ echo $$ > {0}.new && mv {0}.new {0}; sleep 3182; }}", pid_file.display());
    let (build, hung_file) = hanging_hook(dir.path(), "build", &shas, &hang, "exec make -s");
    let last = shas.last().unwrap();
    let args = ["check", "--good", &shas[0], "--bad", last, "--run", "./bench", "--build", build.to_str().unwrap()];
    let args = [&args[..], &["--metric", "command.user_time"]].concat();
    let first = common::spawn_culprit(&db, &args, &repo);
    let orphan = kill_9_while_hung(first, &pid_file, Some(&repo.join(".git/culprit/check.step")));

    // The next check (here the same one again, as `git bisect run` would run it at its next commit) kills it first.
    let out = culprit(&db, &args, &repo, dir.path());
    let err = text(&out.stderr);
    let hung = std::fs::read_to_string(&hung_file).unwrap().trim().to_string();
    assert_eq!(&hung, middle);
    assert!(err.contains(&orphan.reaped_line("build", &hung)), "{err}");
    assert!(!orphan.runs() && !sleeping(3182), "the orphaned build outlived the next check");
    // The middle commit is before the slowdown: good.
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!repo.join(".git/culprit/check.step").exists());
}

#[test]
fn a_build_left_running_by_a_try_fix_killed_with_kill_9_is_killed_by_the_next_try_fix() {
    let _machine = quiet_machine();
    let (dir, repo, shas, db) = slowdown();
    // The first build (the patched tree's) hangs once, after writing the hanging shell's pid.
    let pid_file = dir.path().join("try-fix.pid");
    let build = dir.path().join("build.sh");
    let body = format!(
        "#!/bin/sh\n[ -e {0} ] || {{ echo $$ > {0}.new && mv {0}.new {0}; sleep 3183; }}\nexec make -s\n",
        pid_file.display()
    );
    write_script(&build, &body);
    let args = try_fix_args(dir.path(), &repo, &shas);
    let args: Vec<&str> = args.iter().map(String::as_str).chain(["--build", build.to_str().unwrap()]).collect();
    let first = common::spawn_culprit(&db, &args, &repo);
    let record = repo.join(format!(".git/culprit/try-fix-{}.step", first.id()));
    let orphan = kill_9_while_hung(first, &pid_file, Some(&record));

    let out = culprit(&db, &args, &repo, dir.path());
    let err = text(&out.stderr);
    assert!(err.contains(&orphan.reaped_line("build", &shas[SLOW_AT - 1])), "{err}");
    assert!(!orphan.runs() && !sleeping(3183), "the orphaned build outlived the next try-fix");
    // It measured and gave a verdict (0 fixed, 1 otherwise; an error would be 2).
    assert!(matches!(out.status.code(), Some(0 | 1)), "{err}");
    assert!(!record.exists());
}
