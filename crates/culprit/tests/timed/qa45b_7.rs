//! End-to-end regression of finding 7 of the QA pass 45b: a bisect's mail led with the table of every stored run of
//! the culprit and its parent, so runs stored outside the bisect (a loaded period) halved the change its subject line
//! gave, while the bisect's own interleaved confirmation measured the whole step.

use crate::common;

use crate::common::{culprit, stdout};
use std::process::Command;

/// The mean change of `parent` to `culprit` in percent over the bisect log's samples from record `start` on: the
/// bisect's confirmation runs.
fn fresh_change(samples: &[serde_json::Value], start: usize, parent: &str, culprit: &str) -> f64 {
    let mean = |sha: &str| {
        let values: Vec<f64> =
            samples[start..].iter().filter(|s| s["sha"] == sha).filter_map(|s| s["value"].as_f64()).collect();
        assert!(values.len() >= 3, "{} fresh runs of {sha}", values.len());
        values.iter().sum::<f64>() / values.len() as f64
    };
    100.0 * (mean(culprit) / mean(parent) - 1.0)
}

/// The percentage in a subject line's `METRIC 28.4% regression`.
fn subject_change(subject: &str, metric: &str) -> f64 {
    let after = subject.split(&format!("{metric} ")).nth(1).unwrap_or_else(|| panic!("{subject}"));
    after.split('%').next().unwrap().parse().unwrap_or_else(|e| panic!("{e}: {subject}"))
}

#[test]
fn qa45b_7_a_bisects_mail_leads_with_its_confirmation_not_every_stored_run() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = common::make_slowdown_repo(dir.path(), 6, 4, 99, 30);
    let db = dir.path().join("s.db");
    let job = common::write(dir.path(), "job.yaml", "suite: qa45b7\ncommand:\n  cmd: ./bench\n");
    let metric = "command.user_time";
    let bisect = [
        "bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", "HEAD", "--job",
        job.to_str().unwrap(), "--build", "make -s", "--metric", metric, "--json",
    ];
    let result: serde_json::Value = serde_json::from_str(&stdout(&culprit(&db, &bisect, dir.path()))).unwrap();
    let found = &result["culprits"][0];
    assert_eq!(found["sha"], shas[3].as_str(), "{result:#}");
    let (parent, culprit_sha) = (shas[2].as_str(), shas[3].as_str());
    let start = found["fresh_from"].as_u64().unwrap_or_else(|| panic!("no fresh_from: {result:#}")) as usize;
    let session = result["session"].to_string();

    // Runs stored under the parent outside the bisect that read as slow as the culprit: a period in which the
    // machine was loaded. The culprit's own build, run under the parent's SHA, makes that load certain.
    let git = |args: &[&str]| assert!(Command::new("git").arg("-C").arg(&repo).args(args).status().unwrap().success());
    git(&["checkout", "-q", culprit_sha]);
    assert!(Command::new("make").arg("-s").current_dir(&repo).status().unwrap().success());
    let run = ["run", job.to_str().unwrap(), "-n", "8", "--commit", parent, "--monitors", "none"];
    stdout(&culprit(&db, &run, &repo));
    git(&["checkout", "-q", "main"]);

    let log: serde_json::Value =
        serde_json::from_str(&stdout(&culprit(&db, &["bisect", "log", &session, "--json"], dir.path()))).unwrap();
    let fresh = fresh_change(log["samples"].as_array().unwrap(), start, parent, culprit_sha);
    let compare = ["compare", parent, culprit_sha, "--metric", "^command\\.user_time$", "--format", "json", "--all"];
    let pooled: serde_json::Value = serde_json::from_str(&stdout(&culprit(&db, &compare, dir.path()))).unwrap();
    let row = &pooled[0]["result"]["rows"][0];
    let pooled_change = row["changes"][0]["change"].as_f64().unwrap_or_else(|| panic!("{pooled:#}"));
    assert!(row["sides"][0]["n"].as_u64().unwrap() >= 8, "the extra runs are the parent's: {pooled:#}");
    assert!(fresh - pooled_change > 8.0, "the extra runs must shrink the pooled change: {fresh} vs {pooled_change}");

    // The subject a maintainer acts on gives the confirmation's change, and the pooled table comes after it.
    let text = stdout(&culprit(&db, &["report", &session], dir.path()));
    let subject = text.lines().next().unwrap();
    assert!(subject.starts_with(&format!("[culprit] {}", &culprit_sha[..10])), "{subject}");
    let said = subject_change(subject, metric);
    assert!((said - fresh).abs() < 0.1, "the subject says {said}%, the confirmation measured {fresh:.1}%:\n{text}");
    assert!(subject.ends_with("% regression"), "{subject}");
    let lead = text.find("This table is of the bisect's confirmation").unwrap_or_else(|| panic!("{text}"));
    let pooled_at = text.find("Every stored run, pooled").unwrap_or_else(|| panic!("{text}"));
    assert!(lead < pooled_at, "{text}");
}

/// The change of `metric` in column `column` of a compare JSON table.
fn change_in(table: &serde_json::Value, metric: &str, column: u64) -> f64 {
    let rows = table["rows"].as_array().unwrap_or_else(|| panic!("no rows: {table:#}"));
    let row = rows.iter().find(|r| r["metric"] == metric).unwrap_or_else(|| panic!("no {metric}: {table:#}"));
    let changes = row["changes"].as_array().unwrap();
    changes.iter().find(|c| c["column"] == column).and_then(|c| c["change"].as_f64()).unwrap()
}

#[test]
fn qa45b_7_a_fix_reports_column_is_the_one_try_fix_measured_not_every_stored_run() {
    // `report --compare BASE BAD --fix LABEL` after try-fix gave the fix column as -15.9% from a base pooled over
    // every stored run, where try-fix had measured +0.5% on its own interleaved runs.
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = common::make_slowdown_repo(dir.path(), 4, 3, 99, 30);
    let (base, bad) = (shas[1].as_str(), shas[2].as_str());
    let db = dir.path().join("f.db");
    let job = common::write(dir.path(), "job.yaml", "suite: qa45b7\ncommand:\n  cmd: ./bench\n");
    // Runs stored under the base before try-fix that read as slow as bad: a loaded period.
    let git = |args: &[&str]| assert!(Command::new("git").arg("-C").arg(&repo).args(args).status().unwrap().success());
    git(&["checkout", "-q", bad]);
    assert!(Command::new("make").arg("-s").current_dir(&repo).status().unwrap().success());
    stdout(&culprit(&db, &["run", job.to_str().unwrap(), "-n", "6", "--commit", base, "--monitors", "none"], &repo));
    git(&["checkout", "-q", "main"]);
    let _ = std::fs::remove_file(repo.join("bench"));

    let revert = common::work_patch(dir.path(), &repo, "revert.patch", 30, 0);
    let metric = "command.user_time";
    let try_fix = [
        "try-fix", "--repo", repo.to_str().unwrap(), "--base", base, "--bad", bad, "--patch",
        revert.to_str().unwrap(), "--job", job.to_str().unwrap(), "--build", "make -s", "--runs", "5", "--metric",
        metric, "--json",
    ];
    let out = culprit(&db, &try_fix, dir.path());
    let said = || format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let judged: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", said()));
    let label = judged["patched"].as_str().unwrap().to_string();
    let measured = change_in(&judged["table"], metric, 2);

    let report = ["report", "--compare", base, bad, "--fix", &label, "--metric", metric, "--format", "json"];
    let mail: serde_json::Value = serde_json::from_str(&stdout(&culprit(&db, &report, dir.path()))).unwrap();
    let fix_column = change_in(&mail["report"]["comparison"], metric, 2);
    assert!((fix_column - measured).abs() < 1e-9, "the mail's fix column {fix_column}, try-fix's {measured}");
    let pooled = change_in(&mail["report"]["pooled"]["comparison"], metric, 2);
    assert!((pooled - measured).abs() > 5.0, "the stored base runs must move the pooled column: {pooled}");
    assert_eq!(mail["report"]["fix_verdict"]["verdict"], judged["verdict"]["verdict"], "{mail:#}");
}
