//! QA pass 50's findings on `culprit bisect` that need a real repository: a culprit whose parent is a good given
//! with a second `--good` (taken as good, never measured) says that it was compared with the measured good instead.

use crate::common;

use crate::common::git;

#[test]
fn qa50_10_a_culprit_after_a_second_good_says_it_was_compared_with_the_measured_good() {
    // QA 50 bisected a slowdown at f3, whose parent f2 was given as a second --good: f3 was confirmed against the
    // first good's runs (f2 is never measured) and its `after` was that good, with nothing saying so, while `git log
    // after..f3` listed commits that are no candidates.
    let _machine = common::quiet_machine();
    let (dir, repo, shas, db) = common::slowdown(4, 99, 99);
    // A topic branch from the last commit: a commit given as good, then one doing 30% more work; merged into main.
    git(&repo, &["checkout", "-q", "-b", "topic", &shas[3]]);
    std::fs::write(repo.join("notes.txt"), "notes\n").unwrap();
    git(&repo, &["add", "notes.txt"]);
    git(&repo, &["commit", "-q", "-m", "topic: notes"]);
    let declared_good = git(&repo, &["rev-parse", "HEAD"]);
    let bench = std::fs::read_to_string(repo.join("bench.c")).unwrap();
    std::fs::write(repo.join("bench.c"), bench.replace("(100 + 0)", "(100 + 30)")).unwrap();
    git(&repo, &["commit", "-q", "-am", "topic: more work"]);
    let slower = git(&repo, &["rev-parse", "HEAD"]);
    git(&repo, &["checkout", "-q", "main"]);
    git(&repo, &["merge", "-q", "--no-ff", "--no-edit", "topic"]);
    let args = [
        "bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--good", &declared_good, "--bad", "main",
        "--run", "./bench", "--build", "make -s", "--metric", "command.user_time", "--json",
    ];
    let out = common::culprit(&db, &args, dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{stderr}"));
    let culprits = result["culprits"].as_array().cloned().unwrap_or_default();
    let culprit = culprits.iter().find(|c| c["sha"] == slower.as_str()).unwrap_or_else(|| panic!("{result}"));
    assert_eq!(culprit["after"], shas[0].as_str(), "{result}");
    assert_eq!(culprit["unmeasured_good_parents"], serde_json::json!([declared_good]), "{result}");
    let log = common::stdout(&common::culprit(&db, &["bisect", "log", "1"], dir.path()));
    let said = format!(
        "compared with good {}'s runs: its parent {} is a good given with --good, taken as good without being measured",
        &shas[0][..12],
        &declared_good[..12]
    );
    assert!(log.split_whitespace().collect::<Vec<_>>().join(" ").contains(&said), "{log}");
    // QA 57: the mail said "confirmed against its parent"; it says what the summary says, and its JSON names the
    // parent taken as good.
    let index = culprits.iter().position(|c| c["sha"] == slower.as_str()).unwrap() + 1;
    let mail = common::stdout(&common::culprit(&db, &["report", "1", "--culprit", &index.to_string()], dir.path()));
    let mail = mail.split_whitespace().collect::<Vec<_>>().join(" ");
    let said = format!(
        "confirmed against good {}'s runs: its parent {} is a good given with --good, taken as good without being \
         measured",
        &shas[0][..10],
        &declared_good[..10]
    );
    assert!(mail.contains(&said) && !mail.contains("confirmed against its parent"), "{mail}");
    let json = common::stdout(&common::culprit(
        &db,
        &["report", "1", "--culprit", &index.to_string(), "--format", "json"],
        dir.path(),
    ));
    assert!(json.contains(&format!("\"sha\": \"{declared_good}\"")), "{json}");
    // A culprit whose parent was measured says nothing of the kind.
    let one_good = common::culprit(dir.path().join("one.db"), &[&args[..5], &args[7..]].concat(), dir.path());
    let result: serde_json::Value = serde_json::from_slice(&one_good.stdout).unwrap_or_default();
    let culprits = result["culprits"].as_array().cloned().unwrap_or_default();
    assert!(culprits.iter().any(|c| c["sha"] == slower.as_str()), "{result}");
    assert!(culprits.iter().all(|c| c["unmeasured_good_parents"] == serde_json::json!([])), "{result}");
}
