//! End-to-end regression of QA 48's finding 9d: a culprit whose step runs from good to bad themselves (the only
//! commit after good, or one of two commits that cannot be told apart when the other does not build) explains the
//! whole change by construction, and the bisect's summary and mail said "100% ... (90% interval 100%..100%)".

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

fn culprit_in(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_culprit")).arg("--db").arg(db).args(args).output().unwrap()
}

/// Text with every run of white space made one space, for prose the mail wraps at 90 columns.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Bisects a score repository whose commits after the first are `after_good` (each its build script), the last of
/// them 5 higher than good; returns the bisect's text summary and its mail.
fn summary_and_mail(dir: &Path, after_good: &[&'static str]) -> (String, String) {
    let mut commits = vec![common::ScoreCommit { level: 0.0, build: Some("exit 0\n"), subject: "score: good".into() }];
    commits.extend(after_good.iter().enumerate().map(|(i, build)| common::ScoreCommit {
        level: 5.0,
        build: Some(build),
        subject: format!("score: commit {}", i + 2),
    }));
    let (repo, shas) = common::score_repo(dir, &commits);
    let job = common::score_job(dir);
    let db = dir.join("b.db");
    let args = ["bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", "HEAD"];
    let job_args = ["--job", job.to_str().unwrap(), "--build", "sh build.sh", "--metric", "command.score"];
    let out = culprit_in(&db, &[&args[..], &job_args[..]].concat());
    let summary = common::stdout(&out);
    assert!(summary.contains("found the culprit"), "{summary}");
    let mail = common::stdout(&culprit_in(&db, &["report", "1"]));
    (summary, mail)
}

#[test]
fn qa48_9d_a_culprit_from_good_to_bad_explains_all_of_the_change_by_construction() {
    let _machine = common::quiet_machine();
    let why = "(by construction: good and bad are the step's two sides)";
    for (after_good, verb) in [(&["exit 0\n"][..], "explains"), (&["exit 1\n", "exit 0\n"][..], "together explain")] {
        let dir = tempfile::tempdir().unwrap();
        let (summary, mail) = summary_and_mail(dir.path(), after_good);
        assert!(summary.contains(&format!("  {verb} all of the good-to-bad change {why}")), "{summary}");
        assert!(!summary.contains("100%..100%"), "{summary}");
        assert!(flat(&mail).contains(&format!("explains all of the change {why}")), "{mail}");
        assert!(!mail.contains("100%..100%"), "{mail}");
    }
}
