//! End-to-end regressions of the ninth QA pass: bisect --improvement, hung builds and job-file typos, used as a kernel
//! developer would use them.

mod common;

use common::{culprit, make_slowdown_repo, stdout};

#[test]
fn qa9_an_improvements_summary_names_its_commit_without_calling_it_a_culprit() {
    // A repository whose commit 8 makes the program 25% faster. The bisect with --improvement found it, and its
    // summary (printed, and again at the end of `bisect log`) labelled the commit that sped the program up
    // "culprit:", while the mail and the headline spoke of an improvement.
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_slowdown_repo(dir.path(), 12, 8, 3, -25);
    let db = dir.path().join("b.db");
    let (good, bad) = (shas[0].as_str(), shas[11].as_str());
    let args = ["bisect", "--good", good, "--bad", bad, "--run", "./bench", "--build", "make", "--improvement"];
    let summary = stdout(&culprit(&db, &args, &repo));
    assert!(summary.contains("found the commit of the improvement"), "{summary}");
    assert!(summary.contains(&format!("commit: {}", shas[7])), "{summary}");
    let log = stdout(&culprit(&db, &["bisect", "log", "1"], &repo));
    for text in [&summary, &log] {
        // Every word that blames belongs to a regression's bisect, never to the commit of an improvement.
        let lower = text.to_lowercase();
        for word in ["culprit:", "culprit range", "regression", "slowdown", "caused"] {
            assert!(!lower.contains(word), "'{word}' in an improvement's output:\n{text}");
        }
    }
}
