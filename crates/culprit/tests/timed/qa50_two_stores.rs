//! End-to-end regression of QA 50's leftover: the same bisect started into a second store while the first runs is
//! refused, and the refusal says where the running one's session is and why one machine runs one at a time.

use crate::common;

#[test]
fn qa_50_the_same_bisect_into_another_store_is_refused_naming_the_store_that_holds_it() {
    // The refusal said "`culprit bisect list` shows its session", but the session was in the first store, so the
    // list of the second, the one the user had asked, showed nothing running.
    let _machine = common::quiet_machine();
    let (dir, repo, shas, _) = common::slowdown(4, 3, 99);
    let d = dir.path();
    let (a, b) = (d.join("a"), d.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    // The first bisect's first run waits until the test lets it go.
    let wrapper = common::holding_wrapper(d, 1);
    let run = format!("sh {}", wrapper.display());
    let range = ["bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", &shas[3]];
    let rest = ["--run", &run, "--build", "make -s", "--metric", "command.elapsed_time", "--max-runs", "8"];
    let args: Vec<&str> = range.iter().chain(&rest).copied().collect();
    let mut held = common::spawn_culprit("culprit.db", &args, &a);
    common::wait_for_file(&d.join("holding"), "the first bisect never started a run");
    let refusal = common::refused(&common::culprit("culprit.db", &args, &b));
    let first_store = std::fs::canonicalize(a.join("culprit.db")).unwrap();
    let named = format!("its session is in another store ({}: `culprit --db {0} bisect list`", first_store.display());
    assert!(refusal.contains(&named), "{refusal}");
    assert!(refusal.contains("would disturb each other's runs"), "{refusal}");
    // The same bisect into the same store is told to let it finish, as before.
    let same = common::refused(&common::culprit("culprit.db", &args, &a));
    assert!(same.contains("let it finish (`culprit bisect list` shows its session)"), "{same}");
    std::fs::write(d.join("go"), "").unwrap();
    let status = held.wait().unwrap();
    assert!(matches!(status.code(), Some(0 | 1)), "{status:?}");
    // Nothing was stored in the second store.
    let listed = common::stdout(&common::culprit("culprit.db", &["bisect", "list"], &b));
    assert!(!listed.contains("running") && !listed.contains("found"), "{listed}");
}
