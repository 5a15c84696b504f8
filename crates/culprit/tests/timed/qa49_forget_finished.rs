//! QA 49's finding 6b: `culprit bisect forget` of a finished session lost its answer and its report without a word.
//! A finished session is now refused unless `--force` is given, naming its outcome and that the runs stay; a stopped
//! one is forgotten as before, and a refusal forgets nothing of the other sessions named with it.

use crate::common;

use crate::common::{culprit, kill_at_run_wrapper, spawn_culprit, text};
use std::path::Path;

/// The ids `culprit bisect list` shows, in order.
fn listed_ids(db: &Path, dir: &Path) -> Vec<String> {
    let out = common::stdout(&culprit(db, &["bisect", "list"], dir));
    let first_words = out.lines().filter_map(|line| line.split_whitespace().next());
    first_words.filter(|word| word.parse::<i64>().is_ok()).map(String::from).collect()
}

#[test]
fn qa49_6b_forget_refuses_a_finished_session_without_force_and_says_what_it_would_lose() {
    let _machine = common::quiet_machine();
    let (dir, repo, shas, db) = common::slowdown(5, 4, 99);
    let d = dir.path();
    let repo_arg = repo.to_str().unwrap();
    // Session 1 runs to its end.
    let how = ["--build", "make -s", "--metric", "command.elapsed_time"];
    let range = ["bisect", "--repo", repo_arg, "--good", &shas[0], "--bad", "main"];
    let first = [&range[..], &["--run", "./bench"], &how[..]];
    let first = first.concat();
    let done = culprit(&db, &first, d);
    assert!(matches!(done.status.code(), Some(0 | 1)), "{}", text(&done.stderr));
    let log: serde_json::Value =
        serde_json::from_str(&common::stdout(&culprit(&db, &["bisect", "log", "1", "--json"], d))).unwrap();
    let status = log["outcome"]["status"].as_str().expect("a finished session has a status").to_string();
    // Session 2, from another good, is killed with kill -9 at its third run (its first after the probe's two).
    let run = kill_at_run_wrapper(d, "");
    let second = [&["bisect", "--repo", repo_arg, "--good", &shas[1], "--bad", "main", "--run", &run][..], &how[..]];
    let second = second.concat();
    std::fs::write(d.join("kill-at"), "3").unwrap();
    let mut child = spawn_culprit(&db, &second, d);
    std::fs::write(d.join("pid"), child.id().to_string()).unwrap();
    assert_eq!(child.wait().unwrap().code(), None, "the second bisect was not killed");
    assert_eq!(listed_ids(&db, d), ["1", "2"]);

    // Both named: the finished one is refused, and the stopped one named with it stays too.
    let refused = culprit(&db, &["bisect", "forget", "2", "1"], d);
    let said = text(&refused.stderr);
    assert!(!refused.status.success(), "{said}");
    assert!(said.contains(&format!("bisect session 1 is finished ({status}")), "{said}");
    if status == "found" {
        let culprit_sha = log["outcome"]["culprits"][0]["sha"].as_str().unwrap();
        assert!(said.contains(&format!("(found: {}", &culprit_sha[..10])), "{said}");
    }
    let told = ["loses that answer and its report", "the runs stay in the store", "--force", "nothing was forgotten"];
    for words in told {
        assert!(said.contains(words), "{words:?} in {said}");
    }
    assert_eq!(listed_ids(&db, d), ["1", "2"]);

    // The stopped one alone goes as before; the finished one is refused again.
    let stopped = culprit(&db, &["bisect", "forget", "2"], d);
    assert!(stopped.status.success(), "{}", text(&stopped.stderr));
    let said = text(&stopped.stderr);
    assert!(said.contains("culprit: forgot bisect session 2 (stopped, good "), "{said}");
    assert!(!culprit(&db, &["bisect", "forget", "1"], d).status.success());
    assert_eq!(listed_ids(&db, d), ["1"]);

    // With --force it goes, saying its answer and report went and its runs stayed.
    let results_before = common::stdout(&culprit(&db, &["results"], d));
    let forced = culprit(&db, &["bisect", "forget", "--force", "1"], d);
    let said = text(&forced.stderr);
    assert!(forced.status.success(), "{said}");
    assert!(said.starts_with(&format!("culprit: forgot bisect session 1 ({status}")), "{said}");
    assert!(said.contains("its answer and report are gone; its ") && said.contains("runs stay in the store"), "{said}");
    assert!(listed_ids(&db, d).is_empty());
    assert!(!culprit(&db, &["report", "1"], d).status.success());
    assert_eq!(common::stdout(&culprit(&db, &["results"], d)), results_before);
}
