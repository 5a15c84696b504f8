//! Commands that only read the store refuse a store path that does not exist, instead of creating an empty store
//! there (a mistyped `--db` used to leave a new file behind and answer "no results").

use std::process::Command;

#[test]
fn reading_commands_refuse_a_missing_store_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("typo.db");
    for args in [
        vec!["results"],
        vec!["results", "--json"],
        vec!["compare", "a", "b"],
        vec!["report", "--compare", "a", "b"],
        // A session must exist to be listed, logged or resumed.
        vec!["bisect", "list"],
        vec!["bisect", "log", "1"],
        vec!["bisect", "--resume", "1"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
            .arg("--db")
            .arg(&missing)
            .args(&args)
            .current_dir(dir.path())
            .output()
            .expect("culprit runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("no result store") && stderr.contains("typo.db"), "{args:?}: {stderr}");
        assert!(!missing.exists(), "{args:?} created {}", missing.display());
    }
}

#[test]
fn the_default_store_path_is_refused_the_same_way() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
        .arg("results")
        .env_remove("CULPRIT_DB")
        .current_dir(dir.path())
        .output()
        .expect("culprit runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("culprit.db"));
    assert!(!dir.path().join("culprit.db").exists());
}

#[test]
fn a_url_of_another_database_is_refused_not_taken_for_a_path() {
    let dir = tempfile::tempdir().unwrap();
    for args in [vec!["results"], vec!["run", "no-such-job.yaml"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
            .args(["--db", "mysql://user@host/results"])
            .args(&args)
            .current_dir(dir.path())
            .output()
            .expect("culprit runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("mysql://") && stderr.contains("postgresql://"), "{args:?}: {stderr}");
        assert!(!dir.path().join("mysql:").exists(), "{args:?} made a directory mysql:");
    }
}
