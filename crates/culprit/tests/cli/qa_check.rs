//! `culprit check` under `git bisect run`: culprit's own errors must abort the bisect (exit 128 or more), never be
//! read as "bad" (1 to 127 except 125), or git would blame a commit for a mistyped revision or a usage error.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git").args(args).current_dir(dir).output().expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// An empty repository on branch main, with an author for its commits.
fn init_repo(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.email", "qa@culprit.invalid"]);
    git(dir, &["config", "user.name", "QA"]);
}

/// A repository of two commits, so `check` has a real checkout to stand in.
fn two_commit_repo(dir: &Path) {
    init_repo(dir);
    for n in 1..=2 {
        std::fs::write(dir.join("file"), format!("{n}\n")).unwrap();
        git(dir, &["add", "file"]);
        git(dir, &["commit", "-q", "-m", &format!("commit {n}")]);
    }
}

fn check(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_culprit"))
        .arg("--db")
        .arg(dir.join("check.db"))
        .arg("check")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("culprit runs")
}

/// git bisect run aborts on an exit code of 128 or more and reads 1..=127 except 125 as "bad".
fn aborts_git_bisect(out: &Output) -> bool {
    matches!(out.status.code(), Some(code) if code >= 128)
}

#[test]
fn check_errors_abort_git_bisect_run_instead_of_marking_bad() {
    let dir = tempfile::tempdir().unwrap();
    two_commit_repo(dir.path());
    let out = check(dir.path(), &["--good", "no-such-revision", "--bad", "main", "--run", "true"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(aborts_git_bisect(&out), "exit {:?}: {stderr}", out.status.code());
    assert!(stderr.contains("no-such-revision"), "the message names the revision: {stderr}");
}

#[test]
fn check_usage_errors_abort_git_bisect_run_instead_of_marking_bad() {
    let dir = tempfile::tempdir().unwrap();
    two_commit_repo(dir.path());
    let out = check(dir.path(), &["--good", "main~1", "--bad", "main", "--no-such-option"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(aborts_git_bisect(&out), "exit {:?}: {stderr}", out.status.code());
    assert!(stderr.contains("--no-such-option"), "clap's message names the option: {stderr}");
}

#[test]
fn other_commands_keep_exit_code_two_on_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
        .args(["--db", "x.db", "parse", "no-such-program", "file"])
        .current_dir(dir.path())
        .output()
        .expect("culprit runs");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_check_without_usable_reference_runs_aborts_instead_of_answering() {
    let dir = tempfile::tempdir().unwrap();
    two_commit_repo(dir.path());
    // (arguments, what the message must name). Each used to answer for the checked-out commit: "good" from no
    // reference runs at all, 125 (skip) when good and bad themselves could not be run or lacked the metric, which
    // makes `git bisect run` skip every commit.
    let cases: [(&[&str], &str); 3] = [
        (&["--run", "true", "--reference-runs", "0"], "--reference-runs 0"),
        (&["--run", "exit 3", "--reference-runs", "3"], "exit status 3"),
        (&["--run", "true", "--reference-runs", "3", "--metric", "no.such.metric"], "no metric no.such.metric"),
    ];
    for (extra, named) in cases {
        let mut args = vec!["--good", "main~1", "--bad", "main"];
        args.extend_from_slice(extra);
        let out = check(dir.path(), &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(aborts_git_bisect(&out), "{extra:?}: exit {:?}: {stderr}", out.status.code());
        assert!(stderr.contains(named), "{extra:?}: the message names {named:?}: {stderr}");
    }
}

/// A command job printing `value: N`, where N is the commit's `file` plus one on the second run at each commit (a
/// noisy start), counted per commit in `state`.
fn counting_job(dir: &Path, state: &Path) -> std::path::PathBuf {
    std::fs::create_dir_all(state).unwrap();
    let cmd = format!(
        "n=$(cat {s}/$CULPRIT_COMMIT 2>/dev/null || echo 0); n=$((n+1)); echo $n > {s}/$CULPRIT_COMMIT; \
         v=$(cat file); if [ $n = 2 ]; then v=$((v+1)); fi; echo \"value: $v\"",
        s = state.display()
    );
    let job = dir.join("job.yaml");
    std::fs::write(
        &job,
        format!("suite: counting\ncommand:\n  cmd: '{cmd}'\n  capture:\n    value: 'value: ([0-9]+)'\n"),
    )
    .unwrap();
    job
}

#[test]
fn references_that_do_not_separate_at_first_get_more_runs_before_the_check_gives_up() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    two_commit_repo(&repo);
    let job = counting_job(dir.path(), &dir.path().join("state"));
    // Good runs 1, 2, 1 and bad 2, 3, 2: three a side cannot tell them apart; six a side (1, 2, 1, 1, 1, 1 against
    // 2, 3, 2, 2, 2, 2) can, and the checked-out commit (bad, main) is then classified.
    let args = ["--good", "main~1", "--bad", "main", "--job", job.to_str().unwrap(), "--metric", "command.value"];
    let out = check(&repo, &[&args[..], &["--reference-runs", "3"]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "bad: {stderr}");
    assert!(stderr.contains("do not separate over 3 and 3 reference runs yet; measuring up to 6"), "{stderr}");

    // Good and bad that never differ: looks at 3, 6 and 12 runs a side, then an error that stops git bisect run.
    let same = tempfile::tempdir().unwrap();
    let repo = same.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    init_repo(&repo);
    std::fs::write(repo.join("file"), "5\n").unwrap();
    git(&repo, &["add", "file"]);
    git(&repo, &["commit", "-q", "-m", "one"]);
    git(&repo, &["commit", "-q", "--allow-empty", "-m", "two"]);
    let job = counting_job(same.path(), &same.path().join("state"));
    let args = ["--good", "main~1", "--bad", "main", "--job", job.to_str().unwrap(), "--metric", "command.value"];
    // Every build appends a line: good and bad are built once for all three looks (one worktree each, kept from look
    // to look), and the checked-out commit not at all, since the check stops before it.
    let builds = same.path().join("builds");
    let build = format!("echo built >> {}", builds.display());
    let out = check(&repo, &[&args[..], &["--reference-runs", "3", "--build", &build]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(aborts_git_bisect(&out), "exit {:?}: {stderr}", out.status.code());
    assert!(stderr.contains("measuring up to 12 a side"), "{stderr}");
    assert!(stderr.contains("(12 good and 12 bad)"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&builds).unwrap().lines().count(), 2, "{stderr}");
    // The runs are stored: the same check again (the same --build: references built otherwise are not its own)
    // measures nothing more and gives the same answer.
    let again = check(&repo, &[&args[..], &["--reference-runs", "3", "--build", &build]].concat());
    let again_stderr = String::from_utf8_lossy(&again.stderr);
    assert!(aborts_git_bisect(&again), "{again_stderr}");
    assert!(!again_stderr.contains("measuring"), "{again_stderr}");
}

/// A repository of two commits, good and bad ("30% more work"), and a job whose runs print the commit's `file`
/// times the machine's speed (the percentage in the `speed` file, 100 at first; raise it to slow the machine down),
/// plus noise of about 0.5 from a fixed sequence, on numbers that do not depend on this machine; a number other
/// than 1 in the directory's `amplitude` file makes the noise spread evenly within that far of the value instead.
/// Returns the directory holding them, the repository, the speed file and the job file.
fn speed_repo() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    init_repo(&repo);
    for (value, subject) in [("100", "good"), ("130", "bad: 30% more work")] {
        std::fs::write(repo.join("file"), format!("{value}\n")).unwrap();
        git(&repo, &["add", "file"]);
        git(&repo, &["commit", "-q", "-m", subject]);
    }
    let (speed, count) = (dir.path().join("speed"), dir.path().join("count"));
    std::fs::write(&speed, "100\n").unwrap();
    let script = dir.path().join("measure.sh");
    std::fs::write(
        &script,
        format!(
            "n=$(cat {count} 2>/dev/null || echo 0)\necho $((n + 1)) > {count}\n\
             a=$(cat {amplitude} 2>/dev/null || echo 1)\n\
             awk -v n=\"$n\" -v a=\"$a\" -v f=\"$(cat file)\" -v p=\"$(cat {speed})\" 'BEGIN {{ split(\"0.5 -0.3 0.1 \
             -0.6 0.4 -0.2 0.6 -0.4\", z, \" \"); w = (n * 7919 % 101) / 50 - 1; \
             printf \"value: %.2f\\n\", f * p / 100 + (a == 1 ? z[n % 8 + 1] : a * w) }}'\n",
            count = count.display(),
            amplitude = dir.path().join("amplitude").display(),
            speed = speed.display()
        ),
    )
    .unwrap();
    let job = dir.path().join("job.yaml");
    let yaml = format!("suite: speed\ncommand:\n  cmd: sh {}\n  capture.value: 'value: ([0-9.]+)'\n", script.display());
    std::fs::write(&job, yaml).unwrap();
    (dir, repo, speed, job)
}

/// QA 48: references measured on a calm machine, then a check while the machine's runs scatter sixty times as
/// much (a shared machine's wall time: the references' scale was 3.4% of good, the runs a minute later scattered
/// 20-35%). Judged with the references' scale, a few runs gave log likelihood ratios of -13 and git bisect run
/// ended on a wrong commit in 4 of 9 bisects. Now the scale is never below the scatter of the runs during the
/// check: no confident verdict on such runs, a check out of runs with evidence leaning no clear way answers 125
/// (untestable) and says why, and once the machine is calm again the check answers as before.
#[test]
fn qa48_a_check_on_runs_far_noisier_than_its_references_gives_no_confident_wrong_verdict() {
    let (dir, repo, _speed, job) = speed_repo();
    let args = ["--good", "main~1", "--bad", "main", "--job", job.to_str().unwrap(), "--metric", "command.value"];
    let args = [&args[..], &["--build", "true", "--max-runs", "8"]].concat();
    git(&repo, &["checkout", "-q", "main"]);
    let first = check(&repo, &args);
    assert_eq!(first.status.code(), Some(1), "bad: {}", String::from_utf8_lossy(&first.stderr));

    // The bad commit, on runs whose noise (amplitude 60: spread evenly within 60 of the commit's value, from a hash
    // of the run's number, so that no side's runs share a phase of the fixed sequence) dwarfs the 30 between good and
    // bad that the references measured within 0.6.
    std::fs::write(dir.path().join("amplitude"), "60\n").unwrap();
    let noisy = check(&repo, &args);
    let stderr = String::from_utf8_lossy(&noisy.stderr);
    assert_ne!(noisy.status.code(), Some(0), "no confident wrong verdict: {stderr}");
    assert!(stderr.contains("the runs during the check scatter"), "{stderr}");
    if noisy.status.code() == Some(125) {
        assert!(stderr.contains("neither like good nor like bad after 8 run(s)"), "{stderr}");
    }

    std::fs::write(dir.path().join("amplitude"), "1\n").unwrap();
    let calm = check(&repo, &args);
    assert_eq!(calm.status.code(), Some(1), "bad again: {}", String::from_utf8_lossy(&calm.stderr));
}

/// A machine that became 30% slower between the reference runs and a later check (load that came), on numbers that
/// do not depend on this machine: each run prints the commit's `file` times the speed in `speed` (percent), plus
/// noise of about 0.5 from a fixed sequence. Judged on the stored references alone, good then reads as bad; the
/// fresh reference runs taken between the commit's own correct for the move. Their worktrees are kept between
/// checks, so good and bad are built once for all of them.
#[test]
fn a_check_corrects_for_a_machine_that_moved_since_the_references_with_fresh_reference_runs() {
    let (dir, repo, speed, job) = speed_repo();
    let builds = dir.path().join("builds");
    let build = format!("echo built >> {}", builds.display());
    let args = ["--good", "main~1", "--bad", "main", "--job", job.to_str().unwrap(), "--metric", "command.value"];
    let args = [&args[..], &["--build", &build]].concat();
    git(&repo, &["checkout", "-q", "main~1"]);
    let built = || std::fs::read_to_string(&builds).unwrap_or_default().lines().count();

    // The first check measures the references (and builds good and bad in kept worktrees) on the machine as it is.
    let first = check(&repo, &args);
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert_eq!(first.status.code(), Some(0), "good: {stderr}");
    assert_eq!(built(), 3, "good, bad and the checkout: {stderr}");
    assert!(!stderr.contains("the machine has moved"), "{stderr}");

    // Now the machine is 30% slower.
    std::fs::write(&speed, "130\n").unwrap();
    let stored_only = check(&repo, &[&args[..], &["--stored-references"]].concat());
    let stderr = String::from_utf8_lossy(&stored_only.stderr);
    assert_eq!(stored_only.status.code(), Some(1), "the stored references alone read good as bad: {stderr}");
    let fresh = check(&repo, &args);
    let stderr = String::from_utf8_lossy(&fresh.stderr);
    assert_eq!(fresh.status.code(), Some(0), "good, corrected for the move: {stderr}");
    assert!(stderr.contains("the machine has moved since the stored references"), "{stderr}");
    assert_eq!(built(), 5, "the checkout twice more; good and bad were not built again: {stderr}");
    // Kept pairs of reference worktrees, one directory each.
    let refs = repo.join(".git/culprit");
    let kept_pairs = || {
        let entries = std::fs::read_dir(&refs).unwrap().flatten();
        entries.filter(|e| e.file_name().to_string_lossy().starts_with("check-refs-")).count()
    };
    assert_eq!(kept_pairs(), 1);
    let worktrees = || {
        let out = Command::new("git").args(["worktree", "list", "--porcelain"]).current_dir(&repo).output().unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(worktrees().matches("worktree ").count(), 3, "the checkout, good and bad: {}", worktrees());

    // After the bisect, `--clean` removes the kept worktrees (git's record of them too); the store keeps the runs.
    let cleaned = check(&repo, &["--clean"]);
    let stderr = String::from_utf8_lossy(&cleaned.stderr);
    assert_eq!(cleaned.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("removed the kept reference worktrees of 1 pair(s) of good and bad"), "{stderr}");
    assert_eq!(kept_pairs(), 0);
    assert_eq!(worktrees().matches("worktree ").count(), 1, "{}", worktrees());
    let again = check(&repo, &args);
    assert_eq!(again.status.code(), Some(0), "{}", String::from_utf8_lossy(&again.stderr));
    // The checkout, and each reference again as its first fresh run needs it (one run of good decided here).
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!((7..=8).contains(&built()), "{} builds: {stderr}", built());
    assert_eq!(kept_pairs(), 1);
}

#[test]
fn qa_29_check_clean_opens_no_store_and_takes_db_after_it() {
    // QA of session 29: `check --clean --db X` was refused, and `check --clean` left an empty culprit.db in the
    // user's checkout although nothing stored is touched.
    let dir = tempfile::tempdir().unwrap();
    two_commit_repo(dir.path());
    for args in [vec!["check", "--clean"], vec!["check", "--clean", "--db", "elsewhere.db"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_culprit")).args(&args).current_dir(dir.path()).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(stderr.contains("removed the kept reference worktrees of 0 pair(s)"), "{stderr}");
    }
    assert!(!dir.path().join("culprit.db").exists() && !dir.path().join("elsewhere.db").exists());
}

/// The references a check reads are the ones first measured for the pair, however many fresh reference runs the
/// steps of a bisect store after them. Here the machine becomes 30% slower after the first check and stays so for
/// a long bisect (nine more steps, as a range of 1,000 commits takes): every step measures a fresh good run at the
/// slow speed and stores it. Read back as references, those runs would pile up at good's slow speed, which is bad's
/// stored speed, until good and bad no longer separated and the check stopped `git bisect run`; read as what they
/// are (fresh runs of their own step, which correct that step for the move), every step judges good against the
/// same references and answers good.
#[test]
fn every_step_of_a_long_bisect_reads_the_references_first_measured_for_its_pair() {
    let (_dir, repo, speed, job) = speed_repo();
    let args = ["--good", "main~1", "--bad", "main", "--job", job.to_str().unwrap(), "--metric", "command.value"];
    git(&repo, &["checkout", "-q", "main~1"]);
    // The references' centres and scale, as a step's verdict line gives them.
    let references = |stderr: &str| -> Vec<f64> {
        let line = stderr.lines().find(|l| l.contains(" is good") || l.contains(" is bad")).unwrap_or_default();
        let tail = line.rsplit_once("; good ").map_or("", |(_, tail)| tail);
        tail.split(", ").filter_map(|part| part.rsplit(' ').next()?.parse().ok()).collect()
    };
    let first = check(&repo, &args);
    let stderr = String::from_utf8_lossy(&first.stderr).into_owned();
    assert_eq!(first.status.code(), Some(0), "good: {stderr}");
    let measured = references(&stderr);
    let [good, bad, scale] = measured[..] else { panic!("good, bad and scale: {stderr}") };
    assert!((99.0..101.0).contains(&good) && (129.0..131.0).contains(&bad) && scale < 1.0, "{stderr}");

    std::fs::write(&speed, "130\n").unwrap();
    for step in 2..=10 {
        let out = check(&repo, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "step {step}: good, corrected for the move: {stderr}");
        assert!(stderr.contains("the machine has moved since the stored references"), "step {step}: {stderr}");
        assert_eq!(references(&stderr), measured, "step {step}: {stderr}");
    }
}

#[test]
fn qa59_references_named_from_the_checkout_or_swapped_are_refused_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    two_commit_repo(dir.path());
    // Under `git bisect run`, HEAD is the commit being judged: as --bad it was judged against itself.
    let cases = [("main~1", "HEAD", "--bad HEAD"), ("HEAD~1", "main", "--good HEAD~1"), ("main~1", "@", "--bad @")];
    for (good, bad, flag) in cases {
        let out = check(dir.path(), &["--good", good, "--bad", bad, "--run", "true"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(aborts_git_bisect(&out), "exit {:?}: {stderr}", out.status.code());
        assert!(stderr.contains(&format!("{flag} names the commit checked out")), "{stderr}");
    }
    // Bad older than good: the answer came with the roles inverted.
    let out = check(dir.path(), &["--good", "main", "--bad", "main~1", "--run", "true"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(aborts_git_bisect(&out), "exit {:?}: {stderr}", out.status.code());
    assert!(stderr.contains("they look swapped"), "{stderr}");
}
