//! The command line refuses what it cannot honour and says which flag, file or line is wrong: `sim` ranges, metric
//! regexes and job, testcase and machine filters that match nothing, malformed globs, malformed series files, output
//! paths that are files, `--monitors`, `--interval` and an empty `--run` (findings of a QA sweep).

use crate::common::{culprit, stdout};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A job whose one metric, `command.ops`, is 42 on every run.
const JOB: &str = "suite: qa\ntestcase: qa\ncommand:\n  cmd: \"echo 'ops/s: 42'\"\n  executions: 1\n  capture:\n    ops: 'ops/s: ([0-9.]+)'\n";

/// The standard error of a run that must have failed with culprit's error exit.
fn failure(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "stdout: {}\nstderr: {err}", String::from_utf8_lossy(&out.stdout));
    assert!(!err.contains("panicked"), "{err}");
    err
}

fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(repo).args(args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A git repository of two commits (each adding a line to `bench.sh`), the job file, and a store holding three runs
/// of the job at each commit. Returns the repository, the job file and the store.
fn measured_repo(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let repo = dir.join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "user.email", "robot@culprit.invalid"]);
    git(&repo, &["config", "user.name", "Culprit Test"]);
    let job = dir.join("qa.yaml");
    std::fs::write(&job, JOB).unwrap();
    let db = dir.join("qa.db");
    for i in 0..2 {
        std::fs::write(repo.join("bench.sh"), format!("echo {i}\n")).unwrap();
        git(&repo, &["add", "bench.sh"]);
        git(&repo, &["commit", "-q", "-m", &format!("c{i}")]);
        stdout(&culprit(&db, &["run", job.to_str().unwrap(), "-n", "3", "--monitors", "none"], &repo));
    }
    (repo, job, db)
}

#[test]
fn sim_refuses_sizes_it_cannot_simulate() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--commits", "18446744073709551615", "--trials", "1"], "--commits"),
        (&["--commits", "4000000000"], "--commits"),
        (&["--commits", "1"], "--commits"),
        (&["--commits", "2000", "--trials", "100000000000", "--strategy", "fixed"], "--trials"),
        (&["--trials", "0"], "--trials"),
        (&["--step", "1e308"], "--step"),
        (&["--step", "0.5,nan"], "--step"),
        (&["--step=-0.5"], "--step"),
    ];
    for (args, flag) in cases {
        let out = culprit("unused.db", &[&["sim"], *args].concat(), dir.path());
        let err = failure(&out);
        assert!(err.contains(&format!("'{flag} <")), "{args:?}: {err}");
    }
    let err =
        failure(&culprit("unused.db", &["sim", "--commits", "3", "--step", "1,1,1,1", "--trials", "1"], dir.path()));
    assert!(err.contains("--step gives 4 steps but --commits is 3"), "{err}");
    // A bad strategy is refused before the first one spends its time.
    let err = failure(&culprit("unused.db", &["sim", "--trials", "1", "--strategy", "culprit,bogus"], dir.path()));
    assert!(err.contains("got 'bogus'"), "{err}");
    // Layout offsets without layout noise were ignored, and the row read "Gaussian" as if they had been measured.
    let err = failure(&culprit("unused.db", &["sim", "--trials", "1", "--layout-sigma", "0.6"], dir.path()));
    assert!(err.contains("--layout-sigma sizes the offsets of --noise layout"), "{err}");
    let layout = ["sim", "--commits", "8", "--noise", "layout", "--layout-sigma", "0.6", "--trials", "1"];
    let text = stdout(&culprit("unused.db", &[&layout[..], &["--strategy", "fixed"]].concat(), dir.path()));
    assert!(text.contains("| fixed | 8 | 1.5 | Layout 0.6 sigma |"), "{text}");
    // The limits themselves are allowed.
    let text = stdout(&culprit(
        "unused.db",
        &["sim", "--commits", "2", "--step", "100,0", "--trials", "1", "--strategy", "fixed"],
        dir.path(),
    ));
    assert!(text.contains("| fixed | 2 | 100 |"), "{text}");
    // Histories with merges: Culprit alone bisects them (the baselines bisect by index), and by default.
    let err = failure(&culprit(
        "unused.db",
        &["sim", "--commits", "40", "--topics", "5", "--trials", "1", "--strategy", "culprit,fixed"],
        dir.path(),
    ));
    assert!(err.contains("--topics 5: the fixed baseline bisects by index"), "{err}");
    let err =
        failure(&culprit("unused.db", &["sim", "--commits", "40", "--topics", "21", "--trials", "1"], dir.path()));
    assert!(err.contains("--topics is at most half of --commits"), "{err}");
    let text = stdout(&culprit(
        "unused.db",
        &["sim", "--commits", "40", "--topics", "5", "--step", "3", "--trials", "2", "--json"],
        dir.path(),
    ));
    // One strategy: one object.
    let report: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(report["strategy"], "culprit", "{text}");
    assert_eq!(report["topics"], 5, "{text}");
}

#[test]
fn metric_regexes_and_filters_that_match_nothing_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, job, db) = measured_repo(dir.path());

    // compare: an unknown metric is an error listing metrics there are; a matching one compares as before, and the
    // run counts are the stored runs'.
    let err = failure(&culprit(&db, &["compare", "HEAD~1", "HEAD", "--metric", "nosuchmetric"], &repo));
    assert!(err.contains("--metric nosuchmetric matches no metric of the runs; they have command."), "{err}");
    assert!(err.contains("command.ops"), "{err}");
    let out = culprit(&db, &["compare", "HEAD~1", "HEAD", "--metric", "ops$"], &repo);
    assert!(stdout(&out).contains("# no metric changed among 1 compared (--all shows every row)"));
    let warning = String::from_utf8_lossy(&out.stderr);
    assert!(warning.contains("(3 ok/0 failed vs 3 ok/0 failed); --all shows every row"), "{warning}");
    // With --all every row is shown, so the hint is not given.
    let out = culprit(&db, &["compare", "HEAD~1", "HEAD", "--metric", "ops$", "--all"], &repo);
    assert!(stdout(&out).contains("command.ops"));
    let warning = String::from_utf8_lossy(&out.stderr);
    assert!(warning.contains("no metric changed significantly") && !warning.contains("--all"), "{warning}");
    let err = failure(&culprit(&db, &["compare", "HEAD~1", "HEAD", "--by", "executions", "--metric", "nosuch"], &repo));
    assert!(err.contains("--metric nosuch matches no metric"), "{err}");

    // track and report --compare: the same.
    let err = failure(&culprit(&db, &["track", "--metric", "nosuch"], &repo));
    assert!(err.contains("--metric nosuch matches no metric of the runs; they have command."), "{err}");
    let err = failure(&culprit(&db, &["report", "--compare", "HEAD~1", "HEAD", "--metric", "nosuch"], &repo));
    assert!(err.contains("--metric nosuch is not a metric of the compared runs; they have command."), "{err}");
    assert!(err.contains("command.ops"), "{err}");

    // Filters that match none of the runs are named, with what there is instead.
    let err = failure(&culprit(&db, &["compare", "HEAD~1", "HEAD", "--job", "nosuch*", "--machine", "zz"], &repo));
    assert!(err.contains("--job 'nosuch*' matches none of their runs (jobs there: "), "{err}");
    assert!(err.contains("--machine zz matches none of their runs (machines there: "), "{err}");
    let err = failure(&culprit(&db, &["compare", "HEAD~1", "HEAD", "--testcase", "zz"], &repo));
    assert!(err.contains("--testcase zz matches none of their runs (testcases there: qa)"), "{err}");
    let err = failure(&culprit(&db, &["report", "--compare", "HEAD~1", "HEAD", "--job", "nosuch*"], &repo));
    assert!(err.contains("--job 'nosuch*' matches none of their runs"), "{err}");
    let err = failure(&culprit(&db, &["track", "--job", "nosuch*"], &repo));
    assert!(err.contains("no successful stored run matches --job 'nosuch*'"), "{err}");
    let text = stdout(&culprit(&db, &["results", "--job", "nosuch*", "--machine", "zz"], &repo));
    assert!(text.contains("match --job 'nosuch*' --machine zz"), "{text}");

    // A malformed glob is an error naming its flag, wherever a glob is taken.
    for args in [
        &["results", "--job", "[["][..],
        &["results", "--machine", "a["],
        &["compare", "HEAD~1", "HEAD", "--job", "[["],
        &["compare", "HEAD~1", "HEAD", "--testcase", "[["],
        &["report", "--compare", "HEAD~1", "HEAD", "--job", "[["],
        &["track", "--job", "[["],
        &["track", "--machine", "[["],
    ] {
        let err = failure(&culprit(&db, args, &repo));
        let flag = args[args.len() - 2];
        assert!(err.contains(flag) && err.contains("is not a valid glob"), "{args:?}: {err}");
    }

    // try-fix: a --metric the stored runs at base and bad do not report is refused before anything is measured.
    let patch = dir.path().join("fix.patch");
    std::fs::write(&patch, "--- a/bench.sh\n+++ b/bench.sh\n@@ -1 +1 @@\n-echo 1\n+echo 2\n").unwrap();
    let before = stdout(&culprit(&db, &["results"], &repo));
    let args = [
        "try-fix",
        "--base",
        "HEAD~1",
        "--bad",
        "HEAD",
        "--patch",
        patch.to_str().unwrap(),
        "--job",
        job.to_str().unwrap(),
    ];
    let err = failure(&culprit(&db, &[&args[..], &["--metric", "nosuch", "--runs", "3"]].concat(), &repo));
    assert!(err.contains("--metric nosuch is not a metric of the job's stored runs at base and bad"), "{err}");
    assert_eq!(stdout(&culprit(&db, &["results"], &repo)), before, "nothing was measured");
    // Without stored runs, the first round of measurements is checked: one run of each side, not --runs of each.
    let fresh = dir.path().join("fresh.db");
    let err = failure(&culprit(&fresh, &[&args[..], &["--metric", "nosuch", "--runs", "5"]].concat(), &repo));
    assert!(err.contains("--metric nosuch is not a metric of the first runs of base, bad and patched"), "{err}");
    let listed = stdout(&culprit(&fresh, &["results"], &repo));
    let counts: Vec<&str> = listed.lines().skip(1).map(|l| l.split_whitespace().nth(3).unwrap_or("?")).collect();
    assert_eq!(counts, ["1", "1", "1"], "{listed}");
}

#[test]
fn series_files_are_read_strictly() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    write("cols.csv", &(0..20).map(|i| format!("c{i},{},999\n", 10 + i / 10)).collect::<String>());
    let err = failure(&culprit("unused.db", &["track", "--series", "cols.csv"], dir.path()));
    assert!(err.contains("cols.csv:1: 3 comma-separated columns"), "{err}");
    write("semi.csv", &format!("1;2\n{}", "5\n".repeat(20)));
    let err = failure(&culprit("unused.db", &["track", "--series", "semi.csv"], dir.path()));
    assert!(err.contains("semi.csv:1: \"1;2\" is neither a number nor a header"), "{err}");

    // Non-finite values are left out, and the warning names their lines.
    let mut text = String::from("value\n");
    for i in 0..40 {
        text.push_str(&format!("{}\n", if i < 20 { 10.0 } else { 20.0 } + (i % 3) as f64 * 0.1));
    }
    text.push_str("nan\ninf\n1e999\n");
    write("nan.csv", &text);
    let out = culprit("unused.db", &["track", "--series", "nan.csv"], dir.path());
    stdout(&out);
    let warning = String::from_utf8_lossy(&out.stderr);
    assert!(warning.contains("nan.csv: lines 42, 43, 44 hold no finite value"), "{warning}");

    // A chart that cannot be written is refused before the analysis (QA of session 29), saying why, and the cause
    // once.
    let out = culprit("unused.db", &["track", "--series", "nan.csv", "--plot", "x.gif"], dir.path());
    let err = failure(&out);
    assert!(err.contains("x.gif: the chart format comes from the file name"), "{err}");
    let out = culprit("unused.db", &["track", "--series", "nan.csv", "--plot", "missing/x.svg"], dir.path());
    let err = failure(&out);
    assert!(err.contains("--plot missing/x.svg: the directory missing does not exist; create it"), "{err}");
}

#[test]
fn output_paths_monitors_intervals_and_commands_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("qa.yaml");
    std::fs::write(&job, JOB).unwrap();
    let job = job.to_str().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let file = file.to_str().unwrap();

    let err = failure(&culprit("unused.db", &["split", job, "-o", file], dir.path()));
    assert!(err.contains(&format!("{file} is a file, not a directory: -o (--output) names the directory")), "{err}");
    let db = dir.path().join("qa.db");
    stdout(&culprit(&db, &["run", job, "-n", "3", "--label", "a", "--monitors", "none"], dir.path()));
    stdout(&culprit(&db, &["run", job, "-n", "3", "--label", "b", "--monitors", "none"], dir.path()));
    let err = failure(&culprit(&db, &["report", "--compare", "a", "b", "-o", file], dir.path()));
    assert!(err.contains(&format!("{file} is a file, not a directory: -o (--output) names the directory")), "{err}");

    let err = failure(&culprit(&db, &["run", job, "--label", "c", "--monitors", "bogus"], dir.path()));
    assert!(err.contains("in --monitors: monitor 'bogus'") && !err.contains("job file"), "{err}");
    for interval in ["1e-9", "0", "3601", "nan"] {
        let err = failure(&culprit(&db, &["run", job, "--label", "c", "--interval", interval], dir.path()));
        assert!(err.contains("--interval") && err.contains("from 0.01 to 3600 seconds"), "{interval}: {err}");
    }
    for command in
        [&["bisect", "--good", "a", "--bad", "b"][..], &["try-fix", "--base", "a", "--bad", "b", "--patch", "p"]]
    {
        let err = failure(&culprit(&db, &[command, &["--run", ""]].concat(), dir.path()));
        assert!(err.contains("--run needs a shell command to time"), "{command:?}: {err}");
    }
    for (label, says) in [(" c", "white space"), ("c\t", "white space"), ("label:c", "without the `label:` prefix")] {
        let err = failure(&culprit(&db, &["run", job, "--label", label, "--monitors", "none"], dir.path()));
        assert!(err.contains(says), "{label:?}: {err}");
    }
    // Nothing was stored under the refused label.
    let text = stdout(&culprit(&db, &["results"], dir.path()));
    assert!(!text.contains("label:c"), "{text}");
}

/// One revision named twice (`HEAD` and `main`, a prefix and the full SHA) would compare a column with itself and
/// print every metric unchanged, which reads like a result: compare, report, check and try-fix refuse it.
#[test]
fn one_revision_named_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, job, db) = measured_repo(dir.path());
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let err = failure(&culprit(&db, &["compare", "HEAD~1", "HEAD", &head[..8]], &repo));
    assert!(err.contains(&format!("'HEAD' and '{}' are the same revision {head}", &head[..8])), "{err}");
    let err = failure(&culprit(&db, &["compare", "HEAD", "HEAD"], &repo));
    assert!(err.contains("'HEAD' is given twice"), "{err}");
    let err = failure(&culprit(&db, &["report", "--compare", "HEAD~1", "HEAD~1"], &repo));
    assert!(err.contains("a comparison needs different revisions"), "{err}");
    let err = failure(&culprit(&db, &["report", "--compare", "HEAD~1", "HEAD", "--fix", "main"], &repo));
    assert!(err.contains(&format!("'HEAD' and 'main' are the same revision {head}")), "{err}");
    // Different revisions still compare.
    stdout(&culprit(&db, &["compare", "HEAD~1", "HEAD"], &repo));

    let job = job.to_str().unwrap();
    // (Not HEAD, which check refuses as the commit under test since QA 59.)
    let out = culprit(&db, &["check", "--good", &head[..10], "--bad", "main", "--job", job], &repo);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("--good {} and --bad main are the same commit {head}", &head[..10])), "{err}");
    assert!(!out.status.success() && !matches!(out.status.code(), Some(0 | 1 | 125)), "{:?}", out.status);
    let patch = dir.path().join("fix.patch");
    std::fs::write(&patch, "").unwrap();
    let out = culprit(
        &db,
        &["try-fix", "--base", "main", "--bad", "HEAD", "--job", job, "--patch", patch.to_str().unwrap()],
        &repo,
    );
    let err = failure(&out);
    assert!(err.contains(&format!("--base main and --bad HEAD are the same commit {head}")), "{err}");
    // QA 57: a session id that does not exist says where the ones that do are listed.
    for args in [&["report", "5"][..], &["bisect", "log", "99"], &["bisect", "log", "99", "--json"]] {
        let err = failure(&culprit(&db, args, &repo));
        assert!(err.contains("does not exist in the result store") && err.contains("`culprit bisect list`"), "{err}");
    }
    // QA 57: bisect's refusal named neither flag.
    let err = failure(&culprit(&db, &["bisect", "--good", "HEAD", "--bad", "main", "--job", job], &repo));
    assert!(err.contains(&format!("--good HEAD and --bad main are the same commit {}", &head[..12])), "{err}");
}

/// Two runs a side decide nothing (a verdict needs three): compare says so and how many to run, instead of "no metric
/// changed", which read as a result.
#[test]
fn too_few_runs_to_decide_is_not_called_no_change() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("qa.yaml");
    std::fs::write(&job, JOB).unwrap();
    let db = dir.path().join("qa.db");
    for (label, runs) in [("A", "2"), ("B", "2"), ("C", "3"), ("D", "3")] {
        stdout(&culprit(
            &db,
            &["run", job.to_str().unwrap(), "-n", runs, "--label", label, "--monitors", "none"],
            dir.path(),
        ));
    }
    let out = culprit(&db, &["compare", "A", "B"], dir.path());
    let warning = String::from_utf8_lossy(&out.stderr);
    assert!(
        warning.contains(
            "nothing decided, a verdict needs 3 successful runs a side (2 ok/0 failed vs 2 ok/0 failed); \
                          run each revision 3 times or more (culprit run -n 3)"
        ),
        "{warning}"
    );
    assert!(!warning.contains("no metric changed"), "{warning}");
    // One side with enough runs is still too few on the other.
    let warning = String::from_utf8_lossy(&culprit(&db, &["compare", "C", "A"], dir.path()).stderr).into_owned();
    assert!(warning.contains("nothing decided") && warning.contains("(3 ok/0 failed vs 2 ok/0 failed)"), "{warning}");
    // A single run's summary shows no spread ("± 0.0%" claimed a steady metric); two equal runs show a real 0.0%.
    let one = stdout(&culprit(
        &db,
        &["run", job.to_str().unwrap(), "-n", "1", "--label", "E", "--monitors", "none"],
        dir.path(),
    ));
    let line = one.lines().find(|l| l.ends_with("command.ops")).unwrap_or_else(|| panic!("{one}"));
    assert_eq!(line.split_whitespace().collect::<Vec<_>>(), ["42", "command.ops"], "{one}");
    let two = stdout(&culprit(
        &db,
        &["run", job.to_str().unwrap(), "-n", "2", "--label", "F", "--monitors", "none"],
        dir.path(),
    ));
    assert!(two.lines().any(|l| l.ends_with("42 ±  0.0%  command.ops")), "{two}");
    // Three a side are enough: the same values are then a decided "no change" (command.ops only: the run times
    // beside it may differ by chance).
    let compared = culprit(&db, &["compare", "C", "D", "--metric", "ops$"], dir.path());
    let warning = String::from_utf8_lossy(&compared.stderr).into_owned();
    assert!(warning.contains("no metric changed significantly (3 ok/0 failed vs 3 ok/0 failed)"), "{warning}");
}

#[test]
fn qa59_resume_with_an_option_it_excludes_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let err = failure(&culprit(dir.path().join("r.db"), &["bisect", "--resume", "1", "--max-runs", "50"], dir.path()));
    assert!(err.contains("cannot be used with"), "{err}");
    assert!(err.contains("A session resumes as it was started") && err.contains("without --resume"), "{err}");
    // Another conflict keeps clap's words alone.
    let err = failure(&culprit(dir.path().join("r.db"), &["track", "--series", "s.csv", "--repo", "."], dir.path()));
    assert!(err.contains("cannot be used with") && !err.contains("A session resumes"), "{err}");
}
