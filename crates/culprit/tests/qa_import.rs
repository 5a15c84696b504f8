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

#[test]
fn an_imported_result_root_keeps_the_job_names_and_values_culprit_run_gave() {
    let dir = tempfile::tempdir().unwrap();
    let culprit = |db: &str, args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
            .args(["--db", db])
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("culprit runs");
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // A job whose suite differs from its file name, with a value whose decimal form needs 17 digits.
    std::fs::write(
        dir.path().join("matrixjob.yaml"),
        "suite: my-suite\ncommand:\n  cmd: \"echo 'score: 21.389446570605994'\"\n  capture:\n    score: 'score: (\\S+)'\n",
    )
    .unwrap();
    for label in ["A", "B"] {
        culprit("a.db", &["run", "matrixjob.yaml", "-n", "2", "--label", label, "--monitors", "none", "--result-root", "rr"]);
    }
    culprit("b.db", &["import", "rr"]);
    let names = |db: &str| -> Vec<String> {
        let json: serde_json::Value = serde_json::from_str(&culprit(db, &["results", "--json"])).unwrap();
        let mut names: Vec<String> = json
            .to_string()
            .split("\"job_name\":\"")
            .skip(1)
            .map(|s| s.split('"').next().unwrap_or("").to_string())
            .collect();
        names.sort();
        names
    };
    // It was named after the suite (my-suite-...) on import, so `results --job 'matrixjob*'` lost it.
    assert_eq!(names("a.db"), names("b.db"));
    assert!(names("b.db").iter().all(|n| n.starts_with("matrixjob-")), "{:?}", names("b.db"));
    let score = |db: &str| culprit(db, &["compare", "A", "B", "--all", "--format", "csv"]);
    let line = |text: String| text.lines().find(|l| l.starts_with("command.score,")).map(str::to_string);
    let stored = line(score("a.db"));
    assert!(stored.as_deref().is_some_and(|l| l.contains("21.389446570605994")), "{stored:?}");
    assert_eq!(stored, line(score("b.db")));
}
