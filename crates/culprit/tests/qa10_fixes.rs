//! End-to-end regressions of the tenth QA pass: compare of several commits, report mails, track, check under
//! `git bisect run`, try-fix, results and import, the dashboard, used as a kernel developer would use them.

mod common;

use common::{culprit, make_slowdown_repo, stdout};

#[test]
fn qa10_a_culprit_after_an_untestable_commit_is_not_said_to_be_confirmed_against_its_parent() {
    // Commit 5 makes the program 30% slower and commit 4, its parent, does not build. The bisect blames 5, confirmed
    // against commit 3, and says that 5 cannot be told apart from the untestable 4. The mail's bisect section said
    // "found the culprit, confirmed against its parent": a parent that was never measured, and a claim that
    // contradicts the next line.
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_slowdown_repo(dir.path(), 8, 5, 4, 30);
    let db = dir.path().join("b.db");
    let args = ["bisect", "--good", &shas[0], "--bad", &shas[7], "--run", "./bench", "--build", "make"];
    let args = [&args[..], &["--metric", "command.user_time"]].concat();
    let summary = stdout(&culprit(&db, &args, &repo));
    assert!(summary.contains(&format!("culprit: {} ", shas[4])), "{summary}");
    assert!(summary.contains(&format!("could also be the untestable commit(s): {}", &shas[3][..12])), "{summary}");
    for format in ["text", "markdown", "html"] {
        let mail = stdout(&culprit(&db, &["report", "1", "--format", format], &repo));
        // Prose is wrapped at 90 columns.
        let mail = mail.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(!mail.contains("confirmed against its parent"), "{format}:\n{mail}");
        let against = format!("confirmed against {}, the last testable commit before it", &shas[2][..10]);
        assert!(mail.contains(&against), "{format}:\n{mail}");
        assert!(mail.contains(&format!("untestable commit(s) {}", &shas[3][..10])), "{format}:\n{mail}");
    }
}
