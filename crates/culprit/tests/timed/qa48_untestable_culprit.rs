//! End-to-end regression of QA 48's second finding: when the commit that made the change cannot be tested (its build
//! fails), `culprit bisect` named the next testable commit as the culprit ("confidence 1.000", the mail's subject and
//! headline on it alone), and only a later line said the change could also be at the untestable one. Every view now
//! names the set, as git bisect does ("The first bad commit could be any of:").

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The commit (counted from 1) that makes the score 5 higher and does not build.
const STEP_AT: usize = 7;

/// A repository of 12 commits whose `score.sh` prints a score: 100, plus 5 from commit [`STEP_AT`] on, plus run-to-run
/// noise ([`common::score_repo`]). Its `build.sh` fails at commit [`STEP_AT`] alone, as a patch whose build the next
/// one fixes. Returns the repository and its commit SHAs, oldest first.
fn make_repo(dir: &Path) -> (PathBuf, Vec<String>) {
    let commits: Vec<common::ScoreCommit> = (1..=12)
        .map(|commit| common::ScoreCommit {
            level: if commit >= STEP_AT { 5.0 } else { 0.0 },
            build: Some(if commit == STEP_AT { "echo 'score.c:3: syntax error' >&2; exit 1\n" } else { "exit 0\n" }),
            subject: match commit {
                STEP_AT => "score: raise the level (does not build)".to_string(),
                c if c == STEP_AT + 1 => "score: fix the build".to_string(),
                c => format!("score: revision {c}"),
            },
        })
        .collect();
    common::score_repo(dir, &commits)
}

fn culprit_in(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_culprit")).arg("--db").arg(db).args(args).output().unwrap()
}

/// Text with every run of white space made one space, for prose the mail wraps at 90 columns.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn qa48_a_change_at_a_commit_that_does_not_build_names_it_and_the_commit_that_fixed_the_build() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_repo(dir.path());
    let job = common::score_job(dir.path());
    let db = dir.path().join("b.db");
    let args = ["bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", "HEAD", "--json"];
    let job_args = ["--job", job.to_str().unwrap(), "--build", "sh build.sh", "--metric", "command.score"];
    let out = culprit_in(&db, &[&args[..], &job_args[..]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let (broken, fixed) = (&shas[STEP_AT - 1], &shas[STEP_AT]);

    // JSON: the existing fields stay, and `candidates` lists both, oldest first, the one that did not build marked.
    assert_eq!(result["status"], "found", "{result:#}");
    let culprit = &result["culprits"][0];
    assert_eq!(culprit["sha"], fixed.as_str(), "{result:#}");
    assert_eq!(culprit["untestable_suspects"], serde_json::json!([broken]), "{result:#}");
    let candidates: Vec<(String, bool)> = culprit["candidates"]
        .as_array()
        .unwrap_or_else(|| panic!("no candidates: {result:#}"))
        .iter()
        .map(|c| (c["sha"].as_str().unwrap_or_default().to_string(), c["untestable"] == true))
        .collect();
    assert_eq!(candidates, [(broken.clone(), true), (fixed.clone(), false)], "{result:#}");

    // The text result, as resuming the finished session and its log print it, leads with the set.
    let session = result["session"].to_string();
    let summary = common::stdout(&culprit_in(&db, &["bisect", "--resume", &session]));
    let log = common::stdout(&culprit_in(&db, &["bisect", "log", &session]));
    let set = format!(
        "culprit: one of 2 commits that cannot be told apart: {broken} (\"score: raise the level (does not build)\", \
         untestable) or {fixed} (\"score: fix the build\")"
    );
    for text in [&summary, &log] {
        assert!(text.contains("found the culprit: one of 2 commits that cannot be told apart\n"), "{text}");
        assert!(text.contains(&set), "{text}");
        assert!(!text.contains(&format!("culprit: {fixed}")), "{text}");
        assert!(text.contains("that the change is at one of them"), "{text}");
    }

    // The mail: its subject, its headline and its commit block name both; so does its bisect section.
    let (broken_short, fixed_short) = (&broken[..10], &fixed[..10]);
    let mail = common::stdout(&culprit_in(&db, &["report", &session]));
    let subject = mail.lines().next().unwrap_or_default();
    assert!(subject.starts_with(&format!("[culprit] one of {broken_short} (untestable) or {fixed_short}:")), "{mail}");
    assert!(flat(&mail).contains("due to one of the commits:"), "{mail}");
    let block = format!(
        "commit: {broken} (\"score: raise the level (does not build)\") (untestable)\n\
         commit: {fixed} (\"score: fix the build\")\n"
    );
    assert!(mail.contains(&block), "{mail}");
    assert!(!flat(&mail).contains("due to commit:"), "{mail}");
    let section = format!("one of {broken_short} (\"score: raise the level (does not build)\") (untestable) or");
    assert!(flat(&mail).contains(&section), "{mail}");
    assert!(flat(&mail).contains("one of 2 commits that cannot be told apart, confirmed against"), "{mail}");
    for format in ["markdown", "html", "json"] {
        let mail = common::stdout(&culprit_in(&db, &["report", &session, "--format", format]));
        assert!(mail.contains(&format!("one of {broken_short} (untestable) or {fixed_short}")), "{format}: {mail}");
        assert!(mail.contains(broken.as_str()) && mail.contains(fixed.as_str()), "{format}: {mail}");
    }
}
