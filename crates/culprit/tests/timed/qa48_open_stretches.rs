//! End-to-end regression of QA 48's third finding: a series of three equal steps measured under heavy noise ended
//! with ranges that left a real contributor out, each stated "in this range with probability 0.96 to 0.999997", and
//! nothing in the outcome said that the commits outside them were barely measured. The outcome now carries the
//! stretches outside what it names, with the share of the change their end commits' runs differ by, and says so in
//! the summary, the JSON and the mail whenever those runs show more of the change or leave room for a contributor.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Commits of the series; the score rises by [`STEP`] at each of [`STEPS_AT`] (counted from 0).
const COMMITS: usize = 16;
const STEPS_AT: [usize; 3] = [4, 8, 12];
const STEP: f64 = 0.5;

/// A repository whose `score.sh` prints 100 plus its commit's level plus noise of about 0.5 from a Lehmer generator
/// over a run counter kept outside the repository (the 16-value cycle of [`common::score_repo`] alternates with the
/// interleaved runs and would cancel steps this small). Returns the repository and its commit SHAs, oldest first.
fn make_repo(dir: &Path) -> (PathBuf, Vec<String>) {
    let commits: Vec<common::ScoreCommit> = (0..COMMITS)
        .map(|commit| {
            let level = STEP * STEPS_AT.iter().filter(|&&at| commit >= at).count() as f64;
            common::ScoreCommit { level, build: None, subject: format!("score: revision {commit}, level {level}") }
        })
        .collect();
    let noise = |counter: &Path| {
        format!(
            "sleep 0.05\nn=$(cat {counter} 2>/dev/null || echo 1554)\necho $((n + 1)) > {counter}\n\
             awk -v n=\"$n\" -v level=\"$(cat level)\" 'BEGIN {{ x = (n * 48271 + 11) % 2147483647; \
             y = (x * 48271) % 2147483647; printf \"score: %.4f\\n\", 100 + level + 1.25 * ((x % 1000) / 1000 + \
             (y % 1000) / 1000 - 1) }}'\n",
            counter = counter.display()
        )
    };
    common::score_repo_with(dir, &commits, noise)
}

fn culprit_in(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_culprit")).arg("--db").arg(db).args(args).output().unwrap()
}

/// Text with every run of white space made one space, for prose wrapped at a width.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Which of the series' commits the bisect's path measures depends on the machine's timing, so the test checks
/// what holds on every path: the stretches lie outside what is named, the words follow the stretches' flags, and
/// every view prints the same words.
#[test]
fn qa48_the_stretches_outside_a_series_named_under_noise_are_said_in_every_view() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_repo(dir.path());
    let job = dir.path().join("score.yaml");
    let yaml = "suite: command\ntestcase: score\ncommand:\n  cmd: sh score.sh\n  capture.score: 'score: ([0-9.]+)'\n";
    std::fs::write(&job, yaml).unwrap();
    let db = dir.path().join("b.db");
    let args = ["bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", "HEAD", "--json"];
    let job_args = ["--job", job.to_str().unwrap(), "--metric", "command.score", "--max-runs", "300"];
    let out = culprit_in(&db, &[&args[..], &job_args[..]].concat());
    let result: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let position = |sha: &serde_json::Value| shas.iter().position(|s| Some(s.as_str()) == sha.as_str());
    let culprits = result["culprits"].as_array().unwrap();
    assert!(!culprits.is_empty(), "the series is named in part at least: {result:#}");
    // Each culprit covers (after, commit]: a located one the commits since the parent it was confirmed against.
    let named: Vec<(usize, usize)> =
        culprits.iter().map(|c| (position(&c["after"]).unwrap(), position(&c["sha"]).unwrap())).collect();
    let stretches = result["open_stretches"].as_array().unwrap();
    let status = result["status"].as_str().unwrap();
    let mut said = false;
    for t in stretches {
        let (after, upto) = (position(&t["after"]).unwrap(), position(&t["upto"]).unwrap());
        assert!(after < upto, "{t}");
        assert!(named.iter().all(|&(a, c)| !(a < upto && c > after)), "{t} crosses one of {named:?}");
        let number = |key: &str| t[key].as_f64().unwrap();
        let (share, low, high) = (number("share"), number("share_low"), number("share_high"));
        assert!(low <= share && share <= high, "{t}");
        assert_eq!(t["shows_more"], share >= 0.25 && low > 0.0, "{t}");
        assert_eq!(t["leaves_room"], high >= 0.25, "{t}");
        said |= t["shows_more"] == true || (status != "found" && t["leaves_room"] == true);
    }
    assert_eq!(result["outside"].is_string(), said, "{result:#}");
    let session = result["session"].to_string();
    let summary = flat(&common::stdout(&culprit_in(&db, &["bisect", "--resume", &session])));
    let mail = flat(&common::stdout(&culprit_in(&db, &["report", &session])));
    match result["outside"].as_str() {
        Some(words) => {
            assert!(words.starts_with("outside what is named: "), "{words}");
            // The summary names commits by 12 characters as the JSON's words do; the mail by 10, as its table.
            assert!(summary.contains(words), "{words}\n{summary}");
            let in_mail = shas.iter().fold(words.to_string(), |text, sha| text.replace(&sha[..12], &sha[..10]));
            assert!(mail.contains(&in_mail), "{in_mail}\n{mail}");
        }
        None => {
            assert!(!summary.contains("outside what is named"), "{summary}");
            assert!(!mail.contains("outside what is named"), "{mail}");
        }
    }
}
