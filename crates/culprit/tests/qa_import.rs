//! `culprit import` of a directory holding no lkp run is an error naming the directory and the layout it expects,
//! not a successful "imported 0 run(s)".

use std::process::Command;

#[test]
fn importing_a_directory_without_runs_is_an_error_naming_the_layout() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("not-a-result-root");
    std::fs::create_dir_all(empty.join("some/where")).unwrap();
    std::fs::write(empty.join("some/where/notes.txt"), "nothing to import").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
        .arg("--db")
        .arg(dir.path().join("i.db"))
        .arg("import")
        .arg(&empty)
        .current_dir(dir.path())
        .output()
        .expect("culprit runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not-a-result-root") && stderr.contains("stats.json"), "{stderr}");
}
