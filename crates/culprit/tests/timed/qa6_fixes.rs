//! End-to-end regressions of the sixth QA pass: where an inconclusive bisect places the change, the check of a
//! sweep's chart name before the comparison, and the lock files of finished bisect sessions.

use crate::common;

use crate::common::{
    culprit, lock_files, make_slowdown_repo, quiet_machine, refused, slowdown, spawn_culprit, stdout, wait_for_file,
};
use std::path::{Path, PathBuf};

/// `culprit bisect` of the slowdown repository's `./bench`, built with `build`, on command.user_time, with `extra`.
fn bisect_args<'a>(repo: &'a Path, good: &'a str, build: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let args = ["bisect", "--repo", repo.to_str().unwrap(), "--good", good, "--bad", "HEAD"];
    let how = ["--run", "./bench", "--build", build, "--metric", "command.user_time"];
    [&args[..], &how, extra].concat()
}

/// The session lock a bisect of `repo` keeps while it drives `session` (`session-<store's tag>-<id>.lock`), or where
/// it would be without the tag when there is none.
fn session_lock(repo: &Path, session: u32) -> PathBuf {
    let dir = repo.join(".git").join("culprit");
    let suffix = format!("-{session}.lock");
    let names = std::fs::read_dir(&dir).into_iter().flatten().flatten().map(|entry| entry.file_name());
    let found = names.map(|name| name.to_string_lossy().into_owned()).find(|name| {
        name.starts_with("session-") && name.ends_with(&suffix) && name.len() > "session-".len() + suffix.len()
    });
    dir.join(found.unwrap_or_else(|| format!("session-{session}.lock")))
}

#[test]
fn qa_33_an_inconclusive_bisect_says_where_its_runs_place_the_change() {
    // A 24-commit history (30% slower from commit 15, commit 12 not building) with --max-runs 10 measured a commit
    // before the slowdown at good's level and one after it at bad's, one run each, and the outcome said only
    // "inconclusive". It still blames no commit, but reports the range between the two everywhere it is read.
    // The slowdown here is 100%, not 30%: with one run at each intermediate commit, a run that a loaded machine
    // put 7-8% off its level left the 30% change unplaced within 10 runs (a CI failure), which is not what this
    // test is about.
    let _machine = quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_slowdown_repo(dir.path(), 24, 15, 12, 100);
    let db = dir.path().join("b.db");
    let out = culprit(&db, &bisect_args(&repo, &shas[0], "make -s", &["--max-runs", "10"]), dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let summary = String::from_utf8_lossy(&out.stdout).into_owned();
    let flat = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(summary.starts_with("bisect 1: inconclusive: no commit is blamed with confidence"), "{summary}");

    // --json: the range is an unlocated culprit, around the slow commit (shas[14]), between two tested commits.
    let result: serde_json::Value =
        serde_json::from_str(&stdout(&culprit(&db, &["bisect", "log", "1", "--json"], dir.path()))).unwrap();
    let outcome = &result["outcome"];
    assert_eq!(outcome["status"], "inconclusive", "{outcome:#}");
    let culprits = outcome["culprits"].as_array().unwrap();
    assert_eq!(culprits.len(), 1, "{outcome:#}");
    let range = &culprits[0];
    assert_eq!(range["located"], false, "{range:#}");
    let position = |key: &str| shas.iter().position(|s| range[key] == s.as_str()).unwrap();
    let (after, commit) = (position("after"), position("sha"));
    assert!(after < 14 && 14 <= commit && commit - after < 23, "({after}, {commit}] in {range:#}");
    let tested: Vec<&str> = outcome["evidence"].as_array().unwrap().iter().filter_map(|e| e["sha"].as_str()).collect();
    assert!(tested.contains(&shas[after].as_str()) && tested.contains(&shas[commit].as_str()), "{outcome:#}");
    let placed =
        format!("the runs so far place the change in (commit {}, commit {}]:", &shas[after][..12], &shas[commit][..12]);
    assert!(outcome["reason"].as_str().unwrap().contains(&placed), "{outcome:#}");

    // The summary, and the log with it, name the range and the commits in it.
    let line = format!("culprit range: after {} up to {}", &shas[after][..12], shas[commit]);
    let count = format!("{} commits, not narrowed within the budget", commit - after);
    assert!(summary.contains(&line) && flat(&summary).contains(&count), "{summary}");
    let log = stdout(&culprit(&db, &["bisect", "log", "1"], dir.path()));
    assert!(log.contains(&format!("done: the runs place the change in ({after}, {commit}]")), "{log}");
    assert!(log.contains(&line), "{log}");

    // The mail names the range in its subject and blames no commit.
    let mail = stdout(&culprit(&db, &["report", "1"], dir.path()));
    let subject = mail.lines().next().unwrap_or_default();
    let ends = format!("{}..{}", &shas[after][..10], &shas[commit][..10]);
    assert!(subject.starts_with(&format!("[culprit] NOT LOCATED {ends}: ")), "{mail}");
    let words = flat(&mail);
    assert!(words.contains("inconclusive; the change was placed in a range, not in a commit"), "{mail}");
    assert!(words.contains(&format!("a commit after {} up to {}", &shas[after][..10], &shas[commit][..10])));
    assert!(!mail.contains("most likely") && !mail.contains(&format!("commit: {}", shas[commit])), "{mail}");
}

#[test]
fn qa_33_a_sweeps_chart_name_is_checked_before_the_comparison_as_track_checks_it() {
    let _machine = common::shared_machine();
    // `compare --by PARAM --plot PATH` compared first and refused a wrong name only when it came to draw. It is now
    // refused first (here before the revisions, which this store does not even have), in track's words.
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "job.yaml", "suite: qa\ncommand:\n  cmd: 'true'\n");
    stdout(&culprit("s.db", &["run", "job.yaml", "-n", "1", "--label", "x", "--monitors", "none"], dir.path()));
    common::write(dir.path(), "s.csv", "1\n2\n3\n");
    let missing = dir.path().join("no-such-dir").join("chart.svg");
    for plot in [missing.to_str().unwrap(), "chart.jpg"] {
        let compared = refused(&culprit(
            "s.db",
            &["compare", "nosuch1", "nosuch2", "--by", "nr_threads", "--plot", plot],
            dir.path(),
        ));
        let tracked = refused(&culprit("s.db", &["track", "--series", "s.csv", "--plot", plot], dir.path()));
        assert_eq!(compared, tracked, "{plot}");
        assert!(compared.contains(plot), "{compared}");
        assert!(!compared.contains("nosuch"), "refused before the revisions were looked up: {compared}");
    }
}

#[test]
fn qa_33_a_finished_bisect_leaves_no_lock_file_and_the_lock_still_keeps_a_second_driver_out() {
    // Every finished session left `.git/culprit/session-N.lock` behind in the repository.
    let _machine = quiet_machine();
    let (dir, repo, shas, db) = slowdown(6, 4, 2);
    // The session's first build (after the probe's, in worktrees of their own) waits until the test has tried a
    // second driver of the session.
    let started = dir.path().join("started");
    let go = dir.path().join("go");
    let (s, g) = (started.display(), go.display());
    let wait = format!("[ -e {s} ] || {{ touch {s}; while [ ! -e {g} ]; do sleep 0.1; done; }}");
    let build = format!("case \"$PWD\" in */session-*) {wait};; esac; make -s");
    let args = bisect_args(&repo, &shas[0], &build, &["--json"]);
    let first = spawn_culprit(&db, &args, dir.path());
    wait_for_file(&started, "the build never started");
    assert!(session_lock(&repo, 1).is_file());
    let second = refused(&culprit(&db, &["bisect", "--resume", "1"], dir.path()));
    assert!(second.contains(&format!("is being driven by another culprit (process {}", first.id())), "{second}");
    std::fs::write(&go, "").unwrap();
    let out = first.wait_with_output().unwrap();
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["status"], "found", "{result:#}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(!session_lock(&repo, 1).exists(), "the finished session's lock file is left behind");
    let list = stdout(&culprit(&db, &["bisect", "list"], dir.path()));
    assert!(list.lines().nth(1).is_some_and(|l| l.contains(" found ")), "{list}");
    // Continuing the finished session only prints it again, and leaves no lock file either.
    let again: serde_json::Value =
        serde_json::from_str(&stdout(&culprit(&db, &["bisect", "--resume", "1", "--json"], dir.path()))).unwrap();
    assert_eq!(again["culprits"], result["culprits"]);
    assert!(!session_lock(&repo, 1).exists());
    // Nor does the lock the command held from its start, which keeps an identical command out while it probes.
    assert_eq!(lock_files(&repo), Vec::<String>::new());
}
