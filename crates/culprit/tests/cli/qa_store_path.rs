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

/// QA 57: a store path through a file (`--db afile/s.db`) was refused with "File exists (os error 17)", which named
/// neither the file nor what to do.
#[test]
fn a_store_path_through_a_file_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("afile"), "").unwrap();
    let job = dir.path().join("job.yaml");
    std::fs::write(&job, "suite: qa\ncommand:\n  cmd: \"true\"\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
        .current_dir(dir.path())
        .args(["--db", "afile/sub/s.db", "run", job.to_str().unwrap(), "-n", "1", "--label", "a"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("afile is a file, not a directory: name another path"), "{err}");
}
