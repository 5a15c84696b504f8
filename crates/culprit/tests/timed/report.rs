//! `culprit report` and `culprit try-fix` end to end: reports from a stored real bisect and try-fix
//! (`tests/data/report/real.db`), and a fresh real bisect of the slowdown fixture repository followed by its report
//! and by try-fix with a patch that reverts the slowdown and one that does not apply.

use crate::common;

use crate::common::{culprit, stdout};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The stored runs of the recorded session: base (parent of the slowdown), bad (the slowdown), the reverted tree.
const REAL_BASE: &str = "3dab4c1c6c0e620d6b1855fa1e0b4074ccba33b0";
const REAL_BAD: &str = "a9ecb5c3d01a2d0ea469ebbba16d03ba40046819";
const REAL_FIX: &str = "a9ecb5c3d0+revert";

/// A private copy of the recorded store, since SQLite may write to the file it opens.
fn real_db(dir: &Path) -> PathBuf {
    let db = dir.join("real.db");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/report/real.db"), &db).unwrap();
    db
}

#[test]
fn report_of_stored_results_with_a_fix_column() {
    let _machine = common::shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let db = real_db(dir.path());
    let text = stdout(&culprit(&db, &["report", "--compare", REAL_BASE, REAL_BAD, "--fix", REAL_FIX], dir.path()));
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("[culprit] a9ecb5c3d0 bench: hash more rounds per element: command.user_time "),
        "{first}"
    );
    assert!(first.ends_with("% regression"), "{first}");
    assert!(text.contains("regression of command.user_time due to commit:"), "{text}");
    assert!(text.contains("on test machine: 2 threads AMD EPYC with 24G memory"));
    // The steps measure into a new store of their own, which every step names (QA 46).
    let steps = text.replace(" \\\n", " ").split_whitespace().collect::<Vec<_>>().join(" ");
    // Steps of commits change into the repository, so they name the job and the store by the directory the job is
    // saved in (QA 51).
    let (db_option, job) = ("--db \"$here/repro.db\"", "\"$here/job.yaml\"");
    assert!(steps.contains(&format!("culprit run {db_option} {job} -n 8 --commit {REAL_BASE}")), "{text}");
    // The fix column's runs are a step too: without them the compare step fails in a fresh store.
    // Each side is run as often as it was (the fix 5 times, not the 8 of the others), and each step says which
    // side it is.
    assert!(steps.contains(&format!("culprit run {db_option} {job} -n 5 --label {REAL_FIX}")), "{text}");
    assert!(text.contains("# with 3dab4c1c6c (the base) checked out and built:"), "{text}");
    assert!(text.contains("# with a9ecb5c3d0 (the bad tree) checked out and built:"), "{text}");
    assert!(text.contains(&format!("# the fix, labelled {REAL_FIX}:")), "{text}");
    assert!(steps.contains(&format!("culprit compare {db_option} {REAL_BASE}")), "{text}");
    // Three columns: base, bad and the patched tree, as in seed 001.
    assert!(text.contains("3dab4c1c6c0e620d a9ecb5c3d01a2d0ea469ebbba16           a9ecb5c3d0+revert"), "{text}");
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    // docs/report.md's words: "not significant", never "within the noise" (QA 51).
    assert!(flat.contains("from the base (not significant);") && !flat.contains("within the noise"), "{text}");
    // And the fix's verdict, as `culprit try-fix` gives it on the same runs: the table is of try-fix's own runs
    // (5 of each, interleaved), and the one of every stored run (8 of base and bad) follows it.
    assert!(flat.contains("a9ecb5c3d0 had 29.1%. Verdict: fixed."), "{text}");
    assert!(flat.contains("This table is of the runs culprit try-fix took: 5 interleaved runs of each"), "{text}");
    assert!(flat.contains("Every stored run, pooled (8 runs of 3dab4c1c6c, 8 of a9ecb5c3d0 and 5 of"), "{text}");
    // Printed on its own, the report ends with the job its steps run; written with -o, the job is a file beside it.
    let saved = "Save the job below as job.yaml, the file the steps above run:\n\n";
    assert!(text.contains(saved) && text.contains("  cmd: ./bench\n"), "{text}");
    assert!(text.contains("To reproduce:\n\n        # save the job at the end of this mail as job.yaml\n"), "{text}");

    // -o writes the report and the job file next to it; the HTML is one file with the trend drawn in it.
    let out_dir = dir.path().join("out");
    let o = out_dir.to_str().unwrap();
    stdout(&culprit(&db, &["report", "--compare", REAL_BASE, REAL_BAD, "--format", "html", "-o", o], dir.path()));
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(
        html.contains("<svg") && html.contains("The job file <code>job.yaml</code> is written next to this report.")
    );
    assert!(!html.contains("<h2>job.yaml</h2>"), "{html}");
    let job = std::fs::read_to_string(out_dir.join("job.yaml")).unwrap();
    let parsed: serde_yaml::Value = serde_yaml::from_str(&job).unwrap();
    assert_eq!(parsed["command"]["cmd"].as_str(), Some("./bench"), "{job}");

    let json: serde_json::Value = serde_json::from_str(&stdout(&culprit(
        &db,
        &["report", "--compare", REAL_BASE, REAL_BAD, "--format", "json"],
        dir.path(),
    )))
    .unwrap();
    assert_eq!(json["headline"]["metric"], "command.user_time");
    assert_eq!(json["headline"]["verdict"]["verdict"], "regression");
    let md = stdout(&culprit(&db, &["report", "--compare", REAL_BASE, REAL_BAD, "--format", "markdown"], dir.path()));
    assert!(md.starts_with("## \\[culprit\\] a9ecb5c3d0"), "{md}");
}

#[test]
fn qa_31_report_steps_run_into_the_store_the_compare_step_reads() {
    let _machine = common::shared_machine();
    // The steps to reproduce a comparison run each side and then compare them: runs that go to `./culprit.db` while
    // the compare step reads `--db STORE` leave that store without them, and the table it prints is the old one.
    // Since QA 46 that store is a new one, not the report's own, whose runs would be pooled with the new ones.
    let dir = tempfile::tempdir().unwrap();
    let db = real_db(dir.path());
    let md = stdout(&culprit(&db, &["report", "--compare", REAL_BASE, REAL_BAD, "--format", "markdown"], dir.path()));
    let steps: Vec<&str> = md.lines().filter(|l| l.starts_with("culprit ")).collect();
    assert_eq!(steps.len(), 3, "{md}");
    for step in steps {
        let new_store = " --db \"$here/repro.db\" ";
        assert!(step.contains(new_store) && !step.contains(&db.display().to_string()), "{step}\n{md}");
    }
}

#[test]
fn params_and_axes_carry_lkps_names_and_a_quiet_report_leads_with_the_kpi() {
    let _machine = common::shared_machine();
    // The axes line and the mail's parameters printed stored names (`command.cmd`, `fio-setup-basic.bs`) where lkp
    // prints a program's option by its own name; and a comparison with nothing changed led its mail with the first
    // program row alphabetically (`command.elapsed_time` here) instead of the job's KPI, its captured number.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let job = "suite: qa\ntestcase: qa\ncommand:\n  cmd: \"echo ops: 42\"\n  capture:\n    ops: \"ops: ([0-9]+)\"\n";
    common::write(dir.path(), "job.yaml", job);
    for label in ["a", "b"] {
        stdout(&culprit(&db, &["run", "job.yaml", "-n", "3", "--label", label, "--monitors", "none"], dir.path()));
    }
    let table = stdout(&culprit(&db, &["compare", "a", "b", "--all"], dir.path()));
    assert!(table.contains("\ncapture.ops/cmd/tbox_group/testcase:\n"), "{table}");
    let mail = stdout(&culprit(&db, &["report", "--compare", "a", "b"], dir.path()));
    assert!(mail.contains("\tcmd: echo ops: 42\n") && !mail.contains("command.cmd"), "{mail}");
    // 42 on every run is no change; the mail says "not significant", not "within the noise", which a large move
    // over a few noisy runs is not either. The shell's resident set size can differ between the labels' runs by
    // chance (12% in one CI run), and then the mail rightly leads with that change: which one it is, compare says.
    let compared = stdout(&culprit(&db, &["compare", "a", "b", "--json"], dir.path()));
    let compared: serde_json::Value = serde_json::from_str(&compared).unwrap();
    let changed: Vec<&str> = compared[0]["result"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|row| row["metric"].as_str())
        .collect();
    let headline = mail.lines().next().unwrap();
    match changed.as_slice() {
        [] => assert!(headline.contains(": no significant change of command.ops (0.0%)"), "{mail}"),
        _ => assert!(changed.iter().any(|metric| headline.contains(&format!(": {metric} "))), "{changed:?}\n{mail}"),
    }
}

#[test]
fn report_errors_name_what_is_missing() {
    let _machine = common::shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let db = real_db(dir.path());
    // --fix and --job go with --compare; with a session they were ignored without a word.
    for (flag, value) in [("--fix", "doesnotexist"), ("--job", "zzz*")] {
        let out = culprit(&db, &["report", "1", flag, value], dir.path());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(&format!("{flag} goes with --compare BASE BAD, not with a bisect session (1)")), "{err}");
    }
    let out = culprit(&db, &["report", "42"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("42"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = culprit(&db, &["report", "--compare", REAL_BASE, REAL_BAD, "--metric", "fio.write_iops"], dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("fio.write_iops") && err.contains("command.user_time"), "{err}");
}

/// Every run at the bad label failed (its output has no value to capture): the report leads with that failure,
/// names the first failed run and where the reasons are listed, and prints no made-up `0.0%` change.
#[test]
fn report_of_a_side_whose_every_run_failed_leads_with_the_failure() {
    let _machine = common::shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    let out = dir.path().join("out.txt");
    let job = dir.path().join("cj.yaml");
    let yaml =
        format!("suite: qa\ncommand:\n  cmd: cat {}\n  capture:\n    ops: \"ops/s: ([0-9.]+)\"\n", out.display());
    std::fs::write(&job, yaml).unwrap();
    let j = job.to_str().unwrap();
    std::fs::write(&out, "ops/s: 1000\n").unwrap();
    stdout(&culprit(&db, &["run", j, "-n", "3", "--label", "a"], dir.path()));
    std::fs::write(&out, "nothing\n").unwrap();
    let _ = culprit(&db, &["run", j, "-n", "3", "--label", "q"], dir.path());
    let text = stdout(&culprit(&db, &["report", "--compare", "a", "q"], dir.path()));
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(text.starts_with("[culprit] q: every run of "), "{text}");
    assert!(text.lines().next().unwrap_or_default().ends_with(" failed (3 of 3 runs)"), "{text}");
    assert!(flat.contains("at q failed (3 of 3 runs), so nothing of it can be compared with a."), "{text}");
    assert!(flat.contains("The first failed run ") && flat.contains("culprit results --failures"), "{text}");
    assert!(!text.contains("0.0%") && !text.contains("undecided change"), "{text}");
}

/// try-fix refuses a missing patch file and a missing benchmark before it opens the store, so a mistaken command
/// leaves no new empty store behind; with neither --job nor --run it names both.
#[test]
fn try_fix_checks_its_patch_and_benchmark_before_making_a_store() {
    let _machine = common::shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("new.db");
    let base = ["try-fix", "--base", "HEAD~1", "--bad", "HEAD"];
    let out = culprit(&db, &[&base[..], &["--patch", "missing.patch", "--run", "true"]].concat(), dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot read the patch file missing.patch"), "{err}");
    assert!(!db.exists(), "a store was made: {err}");
    std::fs::write(dir.path().join("p.patch"), "x").unwrap();
    let out = culprit(&db, &[&base[..], &["--patch", "p.patch"]].concat(), dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--job FILE") && err.contains("--run CMD"), "{err}");
    assert!(!db.exists(), "a store was made: {err}");
}

const COMMITS: usize = 24;
const SLOW_AT: usize = 15;
const BROKEN_AT: usize = 12;

fn make_repo(dir: &Path) -> (PathBuf, Vec<String>) {
    common::make_slowdown_repo(dir, COMMITS, SLOW_AT, BROKEN_AT, 30)
}

#[test]
fn a_real_bisect_is_reported_and_its_fix_checked() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_repo(dir.path());
    let db = dir.path().join("b.db");
    let r = repo.to_str().unwrap();
    let bisect = [
        "bisect",
        "--repo",
        r,
        "--good",
        &shas[0],
        "--bad",
        "HEAD",
        "--run",
        "./bench",
        "--build",
        "make -s",
        "--metric",
        "command.user_time",
        "--json",
    ];
    let result: serde_json::Value = serde_json::from_str(&stdout(&culprit(&db, &bisect, dir.path()))).unwrap();
    let session = result["session"].to_string();
    let culprit_sha = &shas[SLOW_AT - 1];
    assert_eq!(&result["culprits"][0]["sha"], culprit_sha.as_str(), "{result:#}");

    let text = stdout(&culprit(&db, &["report", &session], dir.path()));
    assert!(
        text.starts_with(&format!(
            "[culprit] {} bench: hash more rounds per element: command.user_time ",
            &culprit_sha[..10]
        )),
        "{text}"
    );
    assert!(text.contains("regression of command.user_time due to commit:"), "{text}");
    assert!(text.contains(&format!("commit: {culprit_sha} (\"bench: hash more rounds per element\")")), "{text}");
    assert!(
        text.contains(&format!("bisect session {session}: found the culprit, confirmed against its parent")),
        "{text}"
    );
    assert!(text.contains("command.user_time over the tested commits (oldest first):"), "{text}");
    // The reproduction re-runs the one step with culprit's own commands and the same build.
    assert!(text.contains(&format!("culprit bisect --db {} --repo", db.display())), "{text}");
    // A mail made for another metric measures that one again: its bisect line kept the session's (QA pass 15).
    let other = stdout(&culprit(&db, &["report", &session, "--metric", "command.elapsed_time"], dir.path()));
    let unwrapped: String = other.split_whitespace().filter(|word| *word != "\\").collect::<Vec<_>>().join(" ");
    assert!(unwrapped.contains("--job job.yaml --metric command.elapsed_time"), "{other}");
    assert!(text.contains("--build 'make -s'"), "{text}");
    let html = stdout(&culprit(&db, &["report", &session, "--format", "html"], dir.path()));
    assert!(html.matches("<circle").count() >= 3, "a point per tested commit: {html}");
    // QA 57: the comparison of good and bad ends with the bisect that finds the commit, built as their runs were
    // (the step had no --build, and pasted it measured checkouts nothing had built).
    let bad = shas.last().unwrap();
    let span = stdout(&culprit(&db, &["report", "--compare", &shas[0], bad, "--repo", r], dir.path()));
    let unwrapped: String = span.split_whitespace().filter(|word| *word != "\\").collect::<Vec<_>>().join(" ");
    let step = &unwrapped[unwrapped.find("made the change:").unwrap_or_else(|| panic!("{span}"))..];
    let step = &step[..step.find("Details are as below").unwrap_or(step.len())];
    assert!(step.contains(&format!("--good {} --bad {bad} --job \"$here/job.yaml\"", shas[0])), "{span}");
    assert!(step.trim_end().ends_with("--build 'make -s'"), "{span}");

    // try-fix: a patch reverting the slowdown on top of the culprit fixes it.
    let diff = Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["diff", culprit_sha, &format!("{culprit_sha}~1")])
        .output()
        .unwrap();
    let revert = dir.path().join("revert.patch");
    std::fs::write(&revert, &diff.stdout).unwrap();
    let base = &shas[SLOW_AT - 2];
    let try_fix = |patch: &Path| {
        culprit(
            &db,
            &[
                "try-fix",
                "--repo",
                r,
                "--base",
                base,
                "--bad",
                culprit_sha,
                "--patch",
                patch.to_str().unwrap(),
                "--run",
                "./bench",
                "--build",
                "make -s",
                "--metric",
                "command.user_time",
                "--runs",
                "5",
            ],
            dir.path(),
        )
    };
    let out = try_fix(&revert);
    let table = stdout(&out);
    assert!(table.contains("\nfixed: command.user_time is back to the base"), "{table}");
    let label_of = |table: &str| {
        let line = table.lines().find(|l| l.starts_with("culprit report ")).expect("the report command");
        let words: Vec<&str> = line.split_whitespace().collect();
        let fix = words.iter().position(|w| *w == "--fix").expect("--fix in the report command");
        words.get(fix + 1).copied().unwrap_or_default().to_string()
    };
    let first_label = label_of(&table);
    assert!(table.contains(&format!("culprit report --db {} --compare", db.display())), "{table}");
    let id = first_label.strip_prefix(&format!("{}+revert-", &culprit_sha[..10])).unwrap_or_default();
    assert!(id.len() == 8 && id.chars().all(|c| c.is_ascii_hexdigit()), "{table}");
    // The mail's steps make the patched tree: they apply try-fix's patch to the bad tree for the fix's runs and take
    // it off again. The runs ran in worktrees Culprit made of the repository and removed since, which the steps'
    // checkouts stand for: no step names them (they said "start it there" of directories that were gone).
    // The patch is the one the mail carries at its end, saved beside the job: the path try-fix was given names
    // nothing on the machine the mail is read on. The steps say how try-fix built the trees.
    let args = ["report", "--compare", base, culprit_sha, "--fix", &first_label, "--repo", r];
    let mail = stdout(&culprit(&db, &args, dir.path()));
    let steps: Vec<&str> = mail.lines().map(str::trim).collect();
    let patch = "\"$here/fix.patch\"";
    let apply = steps.iter().position(|l| *l == format!("git apply {patch}")).unwrap_or_else(|| panic!("{mail}"));
    assert!(steps[apply - 1].starts_with(&format!("# the fix, labelled {first_label}: try-fix's patch")), "{mail}");
    let unapply = steps.iter().position(|l| *l == format!("git apply -R {patch}")).unwrap_or_else(|| panic!("{mail}"));
    let run = steps[apply + 1..unapply].join(" ").replace(" \\ ", " ");
    assert!(run.starts_with("culprit run ") && run.ends_with(&format!("--label {first_label}")), "{mail}");
    assert!(!mail.contains("its runs ran in"), "{mail}");
    let words = mail.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("# try-fix built each tree below, in its own directory, with --build 'make -s'"), "{mail}");
    assert!(words.contains("# and the patch at its very end as fix.patch, in the same directory"), "{mail}");
    let patch_text = std::fs::read_to_string(&revert).unwrap();
    let carried = mail.split_once("Save the patch below as fix.patch, the fix the steps above apply:\n\n");
    assert_eq!(carried.map(|(_, patch)| patch), Some(patch_text.as_str()), "{mail}");
    // With -o, the patch is written beside the report and the job, and the steps name it there.
    let out_dir = dir.path().join("fix-mail");
    let written = [&args[..], &["-o", out_dir.to_str().unwrap()]].concat();
    stdout(&culprit(&db, &written, dir.path()));
    assert_eq!(std::fs::read_to_string(out_dir.join("fix.patch")).ok().as_deref(), Some(patch_text.as_str()));
    let report = std::fs::read_to_string(out_dir.join("report.txt")).unwrap();
    let apply_there = format!("git apply {}", out_dir.join("fix.patch").display());
    assert!(report.lines().any(|l| l.trim() == apply_there), "{report}");
    assert!(report.contains("The fix's patch fix.patch is written next to this report."), "{report}");
    assert!(!report.contains("Save the patch below"), "{report}");

    // Another patch of the same file name (here one that leaves the slowdown in) gets a label of its own, so the
    // runs of the two are never mixed in one column.
    let other_dir = dir.path().join("v2");
    std::fs::create_dir(&other_dir).unwrap();
    let other = other_dir.join("revert.patch");
    std::fs::write(&other, String::from_utf8_lossy(&diff.stdout).replace("(100 + 0)", "(100 + 30)")).unwrap();
    let out = try_fix(&other);
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "not fixed: {table}{}", String::from_utf8_lossy(&out.stderr));
    let second_label = label_of(&table);
    assert!(second_label.starts_with(&format!("{}+revert-", &culprit_sha[..10])), "{table}");
    assert_ne!(first_label, second_label, "{table}");
    let results = stdout(&culprit(&db, &["results"], dir.path()));
    for label in [&first_label, &second_label] {
        let line = results.lines().find(|l| l.contains(&format!("label:{label}"))).unwrap_or_default();
        // The columns are job, revision, machine, ok runs, failed runs and the last run's time.
        assert_eq!(line.split_whitespace().nth(3), Some("5"), "five runs under {label}: {results}");
    }

    // A patch that does not apply: a clear error naming the file and git's reason, and nothing measured.
    let broken = dir.path().join("stale.patch");
    std::fs::write(&broken, String::from_utf8_lossy(&diff.stdout).replace("(100 + 30)", "(100 + 31)")).unwrap();
    let out = try_fix(&broken);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("stale.patch") && err.contains("does not apply") && err.contains("patch failed"), "{err}");
    // No worktree is left behind and the user's checkout is untouched.
    let worktrees = Command::new("git").arg("-C").arg(&repo).args(["worktree", "list"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&worktrees.stdout).lines().count(), 1);
    let status = Command::new("git").arg("-C").arg(&repo).args(["status", "--porcelain"]).output().unwrap();
    assert!(String::from_utf8_lossy(&status.stdout).trim().is_empty());
}

#[test]
fn a_real_bisects_report_leads_with_the_fresh_runs_that_confirmed_its_culprit() {
    // The table of every stored run of the culprit and its parent pools runs from the whole session; the bisect
    // blamed the commit on fresh interleaved runs of the two, which the mail shows as a table of their own. Their
    // counts must be the session's runs of those two commits from the record where that verification began.
    let _machine = common::quiet_machine();
    let (dir, repo, shas, db) = common::slowdown(COMMITS, SLOW_AT, BROKEN_AT);
    let r = repo.to_str().unwrap();
    let bisect = ["bisect", "--repo", r, "--good", &shas[0], "--bad", "HEAD", "--run", "./bench", "--build", "make -s"];
    let bisect = [&bisect[..], &["--metric", "command.user_time", "--json"]].concat();
    let result: serde_json::Value = serde_json::from_str(&stdout(&culprit(&db, &bisect, dir.path()))).unwrap();
    let session = result["session"].to_string();
    let found = &result["culprits"][0];
    assert_eq!(found["sha"], shas[SLOW_AT - 1].as_str(), "{result:#}");
    let start = found["fresh_from"].as_u64().unwrap_or_else(|| panic!("no fresh_from: {result:#}")) as usize;
    let (culprit_sha, parent_sha) = (found["sha"].as_str().unwrap(), found["after"].as_str().unwrap());

    let log: serde_json::Value =
        serde_json::from_str(&stdout(&culprit(&db, &["bisect", "log", &session, "--json"], dir.path()))).unwrap();
    let samples = log["samples"].as_array().unwrap();
    assert!(start < samples.len(), "start {start} of {} samples", samples.len());
    // The table counts the successful runs; a failed one (a null value) would be in neither side's numbers.
    let fresh = |sha: &str| samples[start..].iter().filter(|s| s["sha"] == sha && !s["value"].is_null()).count();
    let (at_parent, at_culprit) = (fresh(parent_sha), fresh(culprit_sha));
    assert!(at_parent >= 3 && at_culprit >= 3, "{at_parent} and {at_culprit} fresh runs from {start}");
    let all = |sha: &str| samples.iter().filter(|s| s["sha"] == sha).count();
    assert!(all(culprit_sha) + all(parent_sha) > at_culprit + at_parent, "the pooled table has more runs");

    let text = stdout(&culprit(&db, &["report", &session], dir.path()));
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let runs = if at_parent == at_culprit {
        format!("{at_parent} interleaved runs of each")
    } else {
        let total = at_parent + at_culprit;
        let (parent, culprit) = (&parent_sha[..10], &culprit_sha[..10]);
        format!("{total} interleaved runs: {at_parent} of {parent} and {at_culprit} of {culprit}")
    };
    let lead = format!("This table is of the bisect's confirmation: {runs}, taken one after the other");
    assert!(flat.contains(&lead), "{lead} in\n{text}");
    // The mail's first table is the confirmation's, under the column labels of the two commits; the table of every
    // stored run of the two follows, with its one user time row.
    let details = text.find("Details are as below").unwrap();
    let pooled = text.find("Every stored run, pooled").unwrap_or_else(|| panic!("{text}"));
    assert!(details < text.find("This table is of the bisect's confirmation").unwrap());
    assert!(text.find("This table is of the bisect's confirmation").unwrap() < pooled);
    assert!(text[details..].contains(&format!("{} {}", &parent_sha[..16], &culprit_sha[..27])), "{text}");
    let rows: Vec<&str> = text[pooled..].lines().filter(|l| l.trim_end().ends_with(" command.user_time")).collect();
    assert_eq!(rows.len(), 1, "{text}");
    // The JSON's comparison is the confirmation's, with the same counts; the pooled one has more runs.
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&culprit(&db, &["report", &session, "--format", "json"], dir.path()))).unwrap();
    let columns = &json["report"]["comparison"]["columns"];
    assert_eq!(columns[0]["ok_runs"].as_u64(), Some(at_parent as u64), "{json:#}");
    assert_eq!(columns[1]["ok_runs"].as_u64(), Some(at_culprit as u64), "{json:#}");
    let pooled_columns = &json["report"]["pooled"]["comparison"]["columns"];
    let pooled_runs = |i: usize| pooled_columns[i]["ok_runs"].as_u64().unwrap_or(0) as usize;
    assert!(pooled_runs(0) + pooled_runs(1) > at_parent + at_culprit, "{json:#}");
}

/// Whether perf can record system-wide here (installed, and allowed): the profiling test needs the real thing.
fn perf_records() -> Option<PathBuf> {
    let found = Command::new("sh").args(["-c", "command -v perf"]).output().ok()?;
    let perf = PathBuf::from(String::from_utf8_lossy(&found.stdout).trim());
    let dir = tempfile::tempdir().ok()?;
    let data = dir.path().join("probe.data");
    let probe = Command::new(&perf).args(["record", "-q", "-a", "-o"]).arg(&data).args(["--", "true"]).output().ok()?;
    probe.status.success().then_some(perf)
}

/// `culprit bisect --profile 3` on a history whose benchmark drops from 1300 to 1000 ops at one commit, where a run
/// with perf attached reads 100,000 ops higher (perf's overhead, made plain to see): a perf wrapper first on PATH
/// marks each `perf record` and the benchmark reads the mark. The profiling runs are stored as such, so the report's
/// benchmark rows (and `culprit compare`'s) are the bisect's plain runs alone, its perf rows come from the profiling
/// runs, the mail says which runs each part is from, and a replay (`bisect log`, `--resume`) never reads them.
#[test]
fn profiling_runs_feed_the_perf_rows_and_never_the_benchmarks_own() {
    let Some(real_perf) = perf_records() else {
        eprintln!("perf cannot record system-wide here: skipping the --profile test");
        return;
    };
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git").args(args).current_dir(&repo).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["config", "user.email", "qa@culprit.invalid"]);
    git(&["config", "user.name", "QA"]);
    let mut shas = Vec::new();
    for n in 0..7 {
        std::fs::write(repo.join("level"), if n < 4 { "1300\n" } else { "1000\n" }).unwrap();
        git(&["add", "level"]);
        git(&["commit", "-q", "--allow-empty", "-m", &format!("commit {n}")]);
        shas.push(git(&["rev-parse", "HEAD"]));
    }
    let (mark, count) = (dir.path().join("perf-attached"), dir.path().join("count"));
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    common::write_script(
        &bin.join("perf"),
        &format!(
            "#!/bin/sh\nif [ \"$1\" = record ]; then touch {}; fi\nexec {} \"$@\"\n",
            mark.display(),
            real_perf.display()
        ),
    );
    // Noise of a few ops from a fixed sequence; a profiling run spins for 2.5 s, long enough for two of perf-stat's
    // 1 s intervals and for perf-profile's samples.
    let script = dir.path().join("measure.sh");
    let body = r#"n=$(cat COUNT 2>/dev/null || echo 0)
echo $((n + 1)) > COUNT
set -- 3 -2 1 -4 2 -1 4 -3
shift $((n % 8))
level=$(($(cat level) + $1))
if [ -e MARK ]; then
    rm -f MARK
    timeout 2.5 sh -c 'while :; do :; done'
    level=$((level + 100000))
fi
echo "ops: $level"
"#;
    let body = body.replace("COUNT", &count.display().to_string()).replace("MARK", &mark.display().to_string());
    std::fs::write(&script, body).unwrap();
    let job = dir.path().join("job.yaml");
    let yaml = format!(
        "suite: qa\ntestcase: profiled\ncommand:\n  cmd: sh {}\n  capture:\n    ops: 'ops: ([0-9]+)'\n",
        script.display()
    );
    std::fs::write(&job, yaml).unwrap();
    let db = dir.path().join("p.db");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_culprit"))
            .current_dir(dir.path())
            .env("PATH", &path)
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .unwrap()
    };
    let (repo_arg, job_arg) = (repo.to_str().unwrap(), job.to_str().unwrap());
    let bisect = ["bisect", "--repo", repo_arg, "--good", &shas[0], "--bad", "HEAD", "--job", job_arg];
    let bisect = [&bisect[..], &["--metric", "command.ops", "--profile", "3", "--json"]].concat();
    let result: serde_json::Value = serde_json::from_str(&stdout(&run(&bisect))).unwrap();
    assert_eq!(result["culprits"][0]["sha"], shas[4].as_str(), "{result:#}");
    let session = result["session"].to_string();
    let (base, culprit_sha) = (&shas[3], &shas[4]);

    // The mail's table: the benchmark's rows from the plain runs only, its perf rows from the profiling runs.
    let report: serde_json::Value =
        serde_json::from_str(&stdout(&run(&["report", &session, "--format", "json"]))).unwrap();
    let rows = report["report"]["comparison"]["rows"].as_array().unwrap().clone();
    let ops = rows.iter().find(|r| r["metric"] == "command.ops").expect("the headline row");
    let means: Vec<f64> = ops["sides"].as_array().unwrap().iter().map(|s| s["mean"].as_f64().unwrap()).collect();
    assert!((1290.0..1310.0).contains(&means[0]) && (990.0..1010.0).contains(&means[1]), "{ops:#}");
    for side in ops["sides"].as_array().unwrap() {
        let spread = side["population_rel_stddev_pct"].as_f64().unwrap();
        assert!(spread < 1.0, "perf's overhead would spread the runs: {ops:#}");
    }
    let text = stdout(&run(&["report", &session]));
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("3 runs a side with perf attached"), "{text}");
    assert!(text.lines().next().unwrap().contains(": command.ops -2"), "{text}");

    // `culprit compare` of the two, the mail's own reproduce step, reads them as the mail's table of every stored
    // run does, every row shown.
    let pooled = report["report"]["pooled"]["comparison"]["rows"].as_array().expect("the pooled table");
    let pooled_ops = pooled.iter().find(|r| r["metric"] == "command.ops").expect("the pooled headline row");
    let pooled_means: Vec<f64> =
        pooled_ops["sides"].as_array().unwrap().iter().map(|s| s["mean"].as_f64().unwrap()).collect();
    let compared: serde_json::Value = serde_json::from_str(&stdout(&run(&[
        "compare", base, culprit_sha, "--format", "json", "--all",
    ])))
    .unwrap();
    let rows = compared[0]["result"]["rows"].as_array().unwrap();
    let row = |metric: &str| rows.iter().find(|r| r["metric"] == metric);
    let sides = |r: &serde_json::Value| -> Vec<(u64, f64)> {
        r["sides"].as_array().unwrap().iter().map(|s| (s["n"].as_u64().unwrap(), s["mean"].as_f64().unwrap())).collect()
    };
    let plain = sides(row("command.ops").unwrap());
    let rounded = |xs: &mut dyn Iterator<Item = f64>| xs.map(f64::round).collect::<Vec<_>>();
    assert_eq!(rounded(&mut plain.iter().map(|s| s.1)), rounded(&mut pooled_means.iter().copied()));
    let is_perf_stat = |r: &&serde_json::Value| r["metric"].as_str().unwrap().starts_with("perf-stat.");
    let perf_stat = rows.iter().find(is_perf_stat).expect("perf-stat rows");
    assert_eq!(sides(perf_stat).iter().map(|s| s.0).collect::<Vec<_>>(), vec![3, 3], "{perf_stat:#}");
    assert!(plain.iter().all(|s| s.0 >= 5), "{plain:?}");
    // The plain runs carry no perf-stat of their own: a monitor the job does not have is not a row of theirs.
    assert!(rows.iter().all(|r| !r["metric"].as_str().unwrap().starts_with("perf-stat.") || sides(r)[0].0 == 3));

    // A replay reads the bisect's runs alone: the log's samples are all plain, and a resume ends where it ended.
    let log: serde_json::Value = serde_json::from_str(&stdout(&run(&["bisect", "log", &session, "--json"]))).unwrap();
    let samples = log["samples"].as_array().unwrap();
    assert_eq!(samples.len() as u64, result["runs"].as_u64().unwrap(), "{log:#}");
    assert!(samples.iter().all(|s| s["value"].as_f64().is_some_and(|v| v < 2000.0)), "{log:#}");
    let resumed: serde_json::Value =
        serde_json::from_str(&stdout(&run(&["bisect", "--resume", &session, "--json"]))).unwrap();
    assert_eq!(resumed["culprits"], result["culprits"]);
    assert_eq!(resumed["runs"], result["runs"]);

    // --profile N is how many profiling runs each side ends with: given again, it takes none (it took three more a
    // side on every resume before); a larger N takes the difference.
    let perf_stat_runs = || -> Vec<u64> {
        let compared: serde_json::Value = serde_json::from_str(&stdout(&run(&[
            "compare", base, culprit_sha, "--format", "json", "--all",
        ])))
        .unwrap();
        let rows = compared[0]["result"]["rows"].as_array().unwrap().clone();
        sides(rows.iter().find(is_perf_stat).expect("perf-stat rows")).iter().map(|s| s.0).collect()
    };
    stdout(&run(&["bisect", "--resume", &session, "--profile", "3", "--json"]));
    assert_eq!(perf_stat_runs(), vec![3, 3]);
    // QA 57: the summary of a resume that took the missing profiling runs says so (it said "0 in this command").
    let summary = stdout(&run(&["bisect", "--resume", &session, "--profile", "4"]));
    assert_eq!(perf_stat_runs(), vec![4, 4]);
    assert!(summary.contains("(and 2 profiling runs with perf attached, for the report's profile)"), "{summary}");
    let again = stdout(&run(&["bisect", "--resume", &session, "--profile", "4"]));
    assert!(!again.contains("profiling run"), "nothing was missing: {again}");
}
