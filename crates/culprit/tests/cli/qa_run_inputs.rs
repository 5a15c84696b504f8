//! Bad inputs to `culprit run`, `split` and `try-fix` that a QA sweep found, each stopped before anything runs with a
//! message naming the flag, file, key or side: `--scratch` and `--result-root` that are files or cannot be written,
//! numbers out of range, monitor options that are not numbers, split writing jobs `culprit run` would refuse, long
//! command lines quoted twice in full in a failed run's reason, and try-fix's empty patches and failing builds.

use crate::common::{culprit, stdout, write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A job whose one metric, `command.ops`, is 42 on every run.
const JOB: &str =
    "suite: qa\ntestcase: qa\ncommand:\n  cmd: \"echo 'ops/s: 42'\"\n  capture:\n    ops: 'ops/s: ([0-9.]+)'\n";

/// The standard error of a run that must have failed with culprit's error exit.
fn failure(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "stdout: {}\nstderr: {err}", String::from_utf8_lossy(&out.stdout));
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// How many runs the store holds, ok or failed.
fn stored_runs(db: &Path, cwd: &Path) -> u64 {
    let out = culprit(db, &["results", "--json"], cwd);
    let groups: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    groups.as_array().unwrap().iter().map(|g| g["ok_runs"].as_u64().unwrap() + g["failed_runs"].as_u64().unwrap()).sum()
}

#[test]
fn scratch_and_result_root_are_checked_before_the_first_run() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(dir.path(), "qa.yaml", JOB);
    let job = job.to_str().unwrap();
    let db = dir.path().join("qa.db");
    let file = write(dir.path(), "a-file", "");
    let file = file.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", job, "-n", "2", "--label", "a", "--monitors", "none"];
        args.extend_from_slice(extra);
        culprit(&db, &args, dir.path())
    };

    let err = failure(&run(&["--scratch", file]));
    assert!(err.contains(&format!("--scratch {file}: this is a file, not a directory")), "{err}");
    assert!(!err.contains("File exists"), "{err}");
    // /proc is a directory nobody can make directories in, root included.
    let err = failure(&run(&["--scratch", "/proc"]));
    assert!(err.contains("--scratch /proc: culprit cannot write in this directory"), "{err}");
    let err = failure(&run(&["--result-root", file]));
    assert!(err.contains(&format!("--result-root {file}: this is a file, not a directory")), "{err}");
    assert!(!err.contains("Not a directory"), "one message, not the system's cause twice: {err}");
    let err = failure(&run(&["--result-root", &format!("{file}/sub")]));
    assert!(
        err.contains(&format!("--result-root {file}/sub: the directory does not exist and cannot be created")),
        "{err}"
    );
    assert_eq!(err.matches("Not a directory").count(), 1, "{err}");
    // Nothing ran, and the refused runs left no store behind.
    assert!(!db.exists(), "{} was created", db.display());

    // A missing directory that can be made is made, and said so, since a mistyped path would otherwise go unnoticed.
    let scratch = dir.path().join("new/scratch");
    let root = dir.path().join("new/root");
    let out = run(&["--scratch", scratch.to_str().unwrap(), "--result-root", root.to_str().unwrap()]);
    stdout(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("created the directory {} for --scratch", scratch.display())), "{err}");
    assert!(err.contains(&format!("created the directory {} for --result-root", root.display())), "{err}");
    assert!(scratch.is_dir() && root.is_dir());
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0, "the probe and the runs' directories are gone");
    assert_eq!(stored_runs(&db, dir.path()), 2);
}

#[test]
fn job_values_out_of_range_or_not_numbers_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("qa.db");
    let huge = write(dir.path(), "huge.yaml", "suite: x\ncommand:\n  cmd: true\n  executions: 99999999999999999999\n");
    let err = failure(&culprit(&db, &["run", huge.to_str().unwrap(), "--label", "a"], dir.path()));
    assert!(
        err.contains("huge.yaml:4: 'command.executions' = 99999999999999999999 is out of range for that key"),
        "{err}"
    );
    assert!(!err.contains("malformed") && !err.contains("u128") && !err.contains("syntax"), "{err}");

    let monitor = write(dir.path(), "mon.yaml", "suite: x\ncommand:\n  cmd: true\nvmstat:\n  interval: abc\n");
    let err = failure(&culprit(&db, &["run", monitor.to_str().unwrap(), "--label", "a"], dir.path()));
    assert!(err.contains("mon.yaml:4: monitor 'vmstat'"), "names the file and the monitor's line: {err}");
    assert!(err.contains("monitor vmstat: option 'interval: abc' is not accepted"), "{err}");
    assert!(err.contains("number of seconds"), "{err}");
    let fine = write(dir.path(), "fine.yaml", "suite: x\ncommand:\n  cmd: true\nvmstat:\n  interval: 5\n");
    stdout(&culprit(&db, &["run", fine.to_str().unwrap(), "-n", "1", "--label", "a"], dir.path()));

    let param = write(
        dir.path(),
        "param.yaml",
        "suite: x\ncommand:\n  cmd: true\n  capture:\n    ops: 'ops ([0-9]+)'\n  executions: abc\n",
    );
    let err = failure(&culprit(&db, &["run", param.to_str().unwrap(), "--label", "a"], dir.path()));
    assert!(err.contains("param.yaml:6") && err.contains("param 'executions' = 'abc'"), "{err}");
}

#[test]
fn split_writes_only_jobs_culprit_run_would_take() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("unused.db");
    let out_dir = dir.path().join("out");
    let out = out_dir.to_str().unwrap();
    // The second point of the matrix has a bad param: nothing is written, not even the good first point.
    let job = write(dir.path(), "bad.yaml", "suite: x\ncommand:\n  cmd: true\n  executions: [2, abc]\n");
    let err = failure(&culprit(&db, &["split", job.to_str().unwrap(), "-o", out], dir.path()));
    assert!(err.contains("atomic job bad-true-abc is not one culprit run would take; nothing was written"), "{err}");
    assert!(err.contains("bad.yaml:4") && err.contains("param 'executions' = 'abc'"), "{err}");
    assert!(!out_dir.exists(), "nothing written");
    let monitor = write(dir.path(), "mon.yaml", "suite: x\ncommand:\n  cmd: true\nvmstat:\n  interval: abc\n");
    let err = failure(&culprit(&db, &["split", monitor.to_str().unwrap(), "-o", out], dir.path()));
    assert!(err.contains("monitor vmstat: option 'interval: abc'"), "{err}");
    assert!(!out_dir.exists(), "nothing written");

    // A program that is not installed here is no reason to refuse: the files may be for another machine.
    let elsewhere = write(dir.path(), "else.yaml", "suite: x\nsysbench:\n  test: cpu\n  cpu_max_prime: [100, 200]\n");
    let printed = stdout(
        &Command::new(env!("CARGO_BIN_EXE_culprit"))
            .env("PATH", "/nonexistent")
            .current_dir(dir.path())
            .args(["split", elsewhere.to_str().unwrap(), "-o", out])
            .output()
            .unwrap(),
    );
    assert_eq!(printed.lines().count(), 2, "{printed}");
}

#[test]
fn a_long_command_line_is_quoted_once_and_shortened_when_its_run_fails() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("qa.db");
    let cmd = "a".repeat(3000);
    let job = write(dir.path(), "long.yaml", &format!("suite: x\ncommand:\n  cmd: \"{cmd}\"\n"));
    let out =
        culprit(&db, &["run", job.to_str().unwrap(), "-n", "1", "--label", "a", "--monitors", "none"], dir.path());
    assert_eq!(out.status.code(), Some(1), "a failed run");
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err.lines().find(|l| l.contains(" failed: ")).unwrap_or_else(|| panic!("{err}"));
    let head = "a".repeat(200);
    assert!(line.contains(&format!("failed: '{head}... (2800 more characters)' exit status 127: ")), "{line}");
    assert!(line.contains("[3000 characters of the command line]"), "{line}");
    assert!(!line.contains(&"a".repeat(201)), "no more than 200 characters of it: {line}");
    let summary = String::from_utf8_lossy(&out.stdout);
    let failed = summary.lines().find(|l| l.contains("failed run: ")).unwrap_or_else(|| panic!("{summary}"));
    assert_eq!(failed.matches(&head).count(), 1, "{failed}");
}

fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(repo).args(args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A repository of two commits, base and bad, whose `build.sh` fails at base and works at bad; returns it with the
/// two SHAs and two patches on top of bad: one changing `bench.sh`, one breaking `build.sh`.
fn try_fix_repo(dir: &Path) -> (PathBuf, String, String, PathBuf, PathBuf) {
    let repo = dir.join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "user.email", "robot@culprit.invalid"]);
    git(&repo, &["config", "user.name", "Culprit Test"]);
    let mut shas = Vec::new();
    for (build, bench) in [
        ("echo compiling base\necho 'base.c:1: error: base does not build'\nexit 3\n", "true\n"),
        ("echo built\n", "true\n"),
    ] {
        std::fs::write(repo.join("build.sh"), build).unwrap();
        std::fs::write(repo.join("bench.sh"), bench).unwrap();
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-q", "-m", "a commit"]);
        shas.push(git(&repo, &["rev-parse", "HEAD"]));
    }
    let patch = |name: &str, file: &str, body: &str| {
        std::fs::write(repo.join(file), body).unwrap();
        let diff = git(&repo, &["diff"]);
        git(&repo, &["checkout", "--", file]);
        write(dir, name, &format!("{diff}\n"))
    };
    let good = patch("good.patch", "bench.sh", "true\ntrue\n");
    let breaking =
        patch("breaking.patch", "build.sh", "echo compiling\necho 'main.c:7: error: the patch broke this'\nexit 4\n");
    (repo, shas[0].clone(), shas[1].clone(), good, breaking)
}

#[test]
fn try_fix_says_an_empty_patch_changes_nothing_and_which_side_fails_to_build() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, base, bad, good, breaking) = try_fix_repo(dir.path());
    let db = dir.path().join("qa.db");
    let empty = write(dir.path(), "empty.patch", "");
    let try_fix = |patch: &Path, build: Option<&str>| {
        let mut args = vec![
            "try-fix",
            "--base",
            &base,
            "--bad",
            &bad,
            "--patch",
            patch.to_str().unwrap(),
            "--run",
            "sh bench.sh",
            "--runs",
            "3",
        ];
        if let Some(build) = build {
            args.extend(["--build", build]);
        }
        failure(&culprit(&db, &args, &repo))
    };

    let err = try_fix(&empty, None);
    assert!(err.contains("empty.patch is empty, so it changes nothing"), "{err}");
    assert!(!err.contains("--allow-empty"), "{err}");

    // A build command that fails everywhere is not the patch's fault, and a build that prints nothing is said so.
    let err = try_fix(&good, Some("false"));
    assert!(err.contains("the build 'false' fails at patched and at bad"), "{err}");
    assert!(
        err.contains("so the patch is not what breaks it") && err.ends_with("exit status 1; it printed nothing\n"),
        "{err}"
    );

    let err = try_fix(&breaking, Some("sh build.sh"));
    assert!(err.contains("fails at patched") && err.contains("so the patch breaks the build: exit status 4"), "{err}");
    assert!(err.contains("its output:\ncompiling\nmain.c:7: error: the patch broke this"), "{err}");

    // Base fails to build when it is first measured: that stops try-fix at once, naming base and its output.
    let err = try_fix(&good, Some("sh build.sh"));
    assert!(err.contains(&format!("the build failed at base ({})", &base[..12])), "{err}");
    assert!(err.contains("exit status 3; its output:\ncompiling base\nbase.c:1: error: base does not build"), "{err}");
    assert_eq!(git(&repo, &["worktree", "list"]).lines().count(), 1, "every worktree is removed");
    assert_eq!(git(&repo, &["status", "--porcelain"]), "", "the checkout is untouched");
}

#[test]
fn qa_31_a_sysbench_job_without_a_known_test_names_its_line() {
    // `sysbench:` without a test, or with one sysbench does not have, was said without the file or line, and an
    // unknown test as an unknown program `sysbench-<test>` that nobody wrote.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    for (name, body, place, what) in [
        (
            "none.yaml",
            "suite: x\nruntime: 1s\nsysbench:\n  cpu_max_prime: 100\n",
            "none.yaml:3",
            "sysbench needs a test",
        ),
        (
            "bogus.yaml",
            "suite: x\nruntime: 1s\nsysbench:\n  test: bogus\n",
            "bogus.yaml:4",
            "sysbench has no test 'bogus'",
        ),
    ] {
        write(dir.path(), name, body);
        for command in ["run", "split"] {
            let err = failure(&culprit(&db, &[command, name], dir.path()));
            assert!(err.contains(&format!("in job file {place}")) && err.contains(what), "{command} {name}: {err}");
        }
    }
    assert!(!db.exists());
}

/// QA 57: outside a git repository `culprit run --commit SHA` was refused, though docs/report.md speaks of runs
/// stored that way (the subject comes from `--repo` when reports are made); a full SHA is stored as that commit. A
/// run with no --commit at all was told to use --label "instead of --commit", which it had not given.
#[test]
fn qa57_a_full_sha_is_taken_outside_a_repository_and_the_refusals_name_what_was_given() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(dir.path(), "job.yaml", JOB);
    let job = job.to_str().unwrap();
    let sha = "0123456789abcdef0123456789abcdef01234567";
    let out = culprit("s.db", &["run", job, "-n", "1", "--commit", &sha.to_uppercase()], dir.path());
    assert!(out.status.success(), "{out:?}");
    let results = stdout(&culprit("s.db", &["results", "--json"], dir.path()));
    assert!(results.contains(&format!("\"{sha}\"")), "{results}");

    let err = failure(&culprit("s.db", &["run", job, "-n", "1"], dir.path()));
    assert!(err.contains("give that commit's full 40-digit SHA with --commit SHA"), "{err}");
    assert!(!err.contains("instead of --commit"), "{err}");
    let err = failure(&culprit("s.db", &["run", job, "-n", "1", "--commit", "HEAD~1"], dir.path()));
    assert!(err.starts_with("culprit: --commit HEAD~1: ") && err.contains("full 40-digit SHA"), "{err}");
}

/// QA 58: `run --commit REV` in a checkout of another commit stored HEAD's program under REV without a word, where
/// a checkout with uncommitted changes gets a note. It says which commit is checked out; `--commit` naming HEAD
/// itself says nothing.
#[test]
fn qa58_run_commit_names_the_checked_out_commit_when_it_is_another() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, base, bad, _, _) = try_fix_repo(dir.path());
    let job = write(dir.path(), "job.yaml", JOB);
    let job = job.to_str().unwrap();
    let db = dir.path().join("qa.db");
    let out = culprit(&db, &["run", job, "-n", "1", "--monitors", "none", "--commit", "HEAD~1"], &repo);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    let said = format!("--commit HEAD~1 is {}, but {} has {} checked out", &base[..12], repo.display(), &bad[..12]);
    assert!(err.contains(&said), "{err}");
    let out = culprit(&db, &["run", job, "-n", "1", "--monitors", "none", "--commit", &bad], &repo);
    assert!(out.status.success() && !String::from_utf8_lossy(&out.stderr).contains("checked out"), "{out:?}");
}

/// QA 58: on a farm's store, try-fix's closing line counted every machine's runs of the three as "stored before this
/// try-fix", where the mail's table of every stored run reads this machine's alone.
#[test]
fn qa58_try_fix_counts_only_its_machines_earlier_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, base, bad, good, _) = try_fix_repo(dir.path());
    let db = dir.path().join("farm.db");
    let patch = good.to_str().unwrap();
    let args = [
        "try-fix", "--base", &base, "--bad", &bad, "--patch", patch, "--run", "sh bench.sh", "--runs", "3", "--metric",
        "command.elapsed_time",
    ];
    let as_machine = |machine: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
            .current_dir(&repo)
            .env("CULPRIT_MACHINE", machine)
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let other = as_machine("other-box");
    assert!(other.contains("with this table") && !other.contains("stored before"), "{other}");
    let here = as_machine("this-box");
    assert!(here.contains("with this table") && !here.contains("stored before"), "{here}");
    // A second try-fix on this machine has its first one's runs before it.
    let again = as_machine("this-box");
    assert!(again.contains("stored before this try-fix (3 of base, 3 of bad, 3 of patched)"), "{again}");
}

/// QA 58: a first document of params the documents share (`runtime`) that one document's program does not take was
/// told to remove it or fix its name, and `run` sent the user to `culprit split`, which refused the same file. It
/// is said to be the file's shared param, to move where it is taken, and `run` says to fix the file. A later
/// document that takes the first's program besides its own is told so, not that two jobs share a name.
#[test]
fn qa58_a_shared_param_one_program_does_not_take_and_an_inherited_program_are_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.yaml",
        "suite: m\nruntime: 2s\nnr_threads: 2\n---\nsysbench-memory:\n  mem_total_size: 1G\n---\n\
         perf-bench-sched-pipe:\n  loops: 1000\n",
    );
    let err = failure(&culprit("s.db", &["run", "m.yaml", "--dry-run"], dir.path()));
    assert!(err.contains("atomic jobs of m.yaml are refused") && err.contains("fix the job file"), "{err}");
    assert!(!err.contains("writes each atomic job to a file of its own"), "{err}");
    assert!(err.contains("m.yaml:2: top-level param 'runtime' is shared by every document of the file"), "{err}");
    assert!(err.contains("move 'runtime' into the documents of the programs that do"), "{err}");
    let err = failure(&culprit("s.db", &["split", "m.yaml", "-o", "out"], dir.path()));
    assert!(err.contains("is shared by every document of the file"), "{err}");

    write(dir.path(), "p.yaml", "suite: pbf\nnr_task: 2\nperf-bench-futex:\n  test: hash\n---\nperf-bench-mem:\n");
    let err = failure(&culprit("s.db", &["run", "p.yaml", "--dry-run"], dir.path()));
    assert!(err.contains("p.yaml: document 2 selects 2 programs (perf-bench-futex, perf-bench-mem)"), "{err}");
    assert!(!err.contains("both named"), "{err}");
}

/// QA 58: a monitor's bad option was placed at the monitor's line, where a program's bad param gets its own line.
#[test]
fn qa58_a_monitors_bad_option_is_placed_at_its_own_line() {
    let dir = tempfile::tempdir().unwrap();
    for (monitor, option) in [("vmstat", "foo: 1"), ("perf-profile", "frequency: 99")] {
        write(dir.path(), "m.yaml", &format!("suite: hb\nhackbench:\n  mode: process\n{monitor}:\n  {option}\n"));
        let err = failure(&culprit("s.db", &["run", "m.yaml", "--dry-run"], dir.path()));
        assert!(err.starts_with(&format!("culprit: in job file m.yaml:5: monitor '{monitor}'")), "{err}");
    }
    // Nor a capture at its `capture:` line, a line above its own.
    write(dir.path(), "c.yaml", "command:\n  cmd: 'echo t: 4'\n  capture:\n    ops: 't: 4'\n");
    let err = failure(&culprit("s.db", &["run", "c.yaml", "--dry-run"], dir.path()));
    assert!(err.starts_with("culprit: in job file c.yaml:4\n") && err.contains("capture.ops"), "{err}");
}

/// QA 58: `compare --by` whose other value ran at one revision only said there was nothing to sweep, without the
/// job it left out for want of runs at the other, which the plain table names.
#[test]
fn qa58_compare_by_names_the_jobs_a_revision_has_no_runs_of() {
    let dir = tempfile::tempdir().unwrap();
    let job = "command:\n  cmd: 'echo ops: 1'\n  executions: [1, 2]\n  capture:\n    ops: 'ops: ([0-9]+)'\n";
    write(dir.path(), "j.yaml", job);
    stdout(&culprit("s.db", &["run", "j.yaml", "-n", "1", "--label", "a", "--monitors", "none"], dir.path()));
    stdout(&culprit("s.db", &["split", "j.yaml", "-o", "sp"], dir.path()));
    let mut files: Vec<String> = std::fs::read_dir(dir.path().join("sp"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let one = format!("sp/{}", files[0]);
    stdout(&culprit("s.db", &["run", &one, "-n", "1", "--label", "c", "--monitors", "none"], dir.path()));
    let err = failure(&culprit("s.db", &["compare", "a", "c", "--by", "executions"], dir.path()));
    let left_out = files[1].trim_end_matches(".yaml");
    assert!(err.contains("nothing to sweep"), "{err}");
    assert!(err.contains(&format!("not compared, for want of runs at every revision: {left_out}: left out")), "{err}");
}
