//! End-to-end regressions of the fifth QA pass (track, follow, serve, the farm store, results and import).

use crate::common;

use crate::common::{culprit, refused};
use std::path::Path;

/// Makes the store `dir/db` with one run of a tiny job (`dir/job.yaml`), then makes it read-only (mode 0444).
fn read_only_store(dir: &Path, db: &str) {
    common::write(dir, "job.yaml", "suite: qa\ncommand:\n  cmd: 'true'\n");
    let out = culprit(db, &["run", "job.yaml", "-n", "1", "--label", "x", "--monitors", "none"], dir);
    assert!(out.status.success(), "{out:?}");
    std::fs::set_permissions(dir.join(db), std::os::unix::fs::PermissionsExt::from_mode(0o444)).unwrap();
}

#[test]
fn qa_32_follow_refuses_a_read_only_store_before_building() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, _) = common::make_slowdown_repo(dir.path(), 3, 2, 99, 30);
    read_only_store(dir.path(), "ro.db");
    let marker = dir.path().join("built");
    let build = format!("touch {} && make -s", marker.display());
    let args = ["track", "--follow", "main", "--job", "job.yaml", "--repo", repo.to_str().unwrap(), "--build", &build];
    let err = refused(&culprit("ro.db", &args, dir.path()));
    assert!(err.contains("the result store ro.db is read-only"), "{err}");
    assert!(!marker.exists(), "a commit was built before the read-only store was refused: {err}");
}

#[test]
fn qa_32_bisect_resume_and_track_bisect_refuse_a_read_only_store() {
    let dir = tempfile::tempdir().unwrap();
    read_only_store(dir.path(), "ro.db");
    for args in [&["bisect", "--resume", "1"][..], &["track", "--bisect"]] {
        let err = refused(&culprit("ro.db", args, dir.path()));
        assert!(err.contains("the result store ro.db is read-only"), "{args:?}: {err}");
    }
    // Tracking without a bisect only reads.
    let out = culprit("ro.db", &["track"], dir.path());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("read-only"), "{out:?}");
    // Reading sessions of a read-only store still works.
    let out = culprit("ro.db", &["bisect", "list"], dir.path());
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn qa_32_track_refuses_options_its_mode_would_ignore() {
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "s.csv", "1\n2\n3\n4\n5\n6\n7\n8\n");
    // A plain series is not built, deployed or read from a repository; a follow pass runs on this machine, with
    // every testcase of its job.
    let cases: [&[&str]; 5] = [
        &["track", "--series", "s.csv", "--build", "make"],
        &["track", "--series", "s.csv", "--deploy", "true"],
        &["track", "--series", "s.csv", "--repo", "."],
        &["track", "--follow", "main", "--job", "job.yaml", "--machine", "lkp-*"],
        &["track", "--follow", "main", "--job", "job.yaml", "--testcase", "x"],
    ];
    for args in cases {
        let err = refused(&culprit("s.db", args, dir.path()));
        assert!(err.contains("cannot be used with"), "{args:?}: {err}");
    }
}

#[test]
fn qa_32_the_dashboards_track_checks_its_globs_as_the_command_does() {
    let dir = tempfile::tempdir().unwrap();
    common::store_ok_and_failed_runs(dir.path(), &dir.path().join("s.db"), "ok", "failed");
    let err = refused(&culprit("s.db", &["track", "--job", "x["], dir.path()));
    assert!(err.contains("--job takes a glob") && err.contains("'x[' is not a valid glob"), "{err}");
    let server = common::serve("s.db", dir.path());
    for (query, name) in [("job=x%5B", "job"), ("machine=vm%5B", "machine")] {
        let page = server.get(&format!("/track?{query}"));
        assert_eq!(page.status, 400, "{}", page.body);
        assert!(page.body.contains(&format!("{name}= takes a glob")), "{}", page.body);
        assert!(!page.body.contains("no successful stored run matches"), "{}", page.body);
    }
}
