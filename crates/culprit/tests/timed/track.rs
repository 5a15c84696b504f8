//! End-to-end tests of `culprit track`: golden outputs on checked-in series, bad series files, and a stored
//! history of real `culprit run`s over the commits of a throwaway git repository whose metric steps at one commit.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn culprit(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_culprit")).current_dir(dir).args(args).output().unwrap()
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn series_golden_text() {
    let _machine = common::shared_machine();
    for name in ["hackbench-history", "plain"] {
        let csv = format!("crates/culprit/tests/data/track/{name}.csv");
        let expected =
            std::fs::read_to_string(root().join(format!("crates/culprit/tests/data/track/{name}.expected.txt")))
                .unwrap();
        assert_eq!(ok(&culprit(&root(), &["track", "--series", &csv])), expected, "{name}");
    }
}

#[test]
fn series_json_indices_and_treatment_of_bad_values() {
    let _machine = common::shared_machine();
    let csv = root().join("crates/culprit/tests/data/track/plain.csv");
    let v: serde_json::Value =
        serde_json::from_str(&ok(&culprit(&root(), &["track", "--series", csv.to_str().unwrap(), "--json"]))).unwrap();
    let cps = v["change_points"].as_array().unwrap();
    assert_eq!(cps.len(), 1, "{v:#}");
    // The step is at 0-based point 120; the NaN at point 50 is dropped and counted, indices keep their place.
    assert_eq!(cps[0]["index"], 120);
    // The location's credible interval surrounds the index; a bisect would run from before_index_low to index_high.
    let (low, high) = (cps[0]["index_low"].as_u64().unwrap(), cps[0]["index_high"].as_u64().unwrap());
    assert!(low <= 120 && 120 <= high && cps[0]["before_index_low"].as_u64().unwrap() < low, "{v:#}");
    assert_eq!(cps[0]["verdict"], "changed");
    assert_eq!(v["dropped_values"], 1);
    assert_eq!(v["skipped_points"], 1);
    let history = root().join("crates/culprit/tests/data/track/hackbench-history.csv");
    let v: serde_json::Value =
        serde_json::from_str(&ok(&culprit(&root(), &["track", "--series", history.to_str().unwrap(), "--json"])))
            .unwrap();
    assert_eq!(v["change_points"][0]["index"], 34);
    assert_eq!(v["change_points"][0]["before"], "c033");
    assert_eq!(v["change_points"][0]["verdict"], "regression");
    assert_eq!(v["points"], 60);
}

#[test]
fn bad_series_files_are_clear_errors() {
    let _machine = common::shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &str)] = &[
        ("short.csv", "value\n1\n2\n", "too short"),
        ("text.csv", "value\n1\n2\nabc\n", "text.csv:4"),
        ("missing.csv", "", "missing.csv holds no values"),
        ("header.csv", "commit,ops\n", "header.csv holds no values"),
        ("chart.csv", "1\n2\n", "x.jpg: the chart format comes from the file name"),
    ];
    for (name, content, needle) in cases {
        std::fs::write(dir.path().join(name), content).unwrap();
        // The chart's name is checked before the file is even read.
        let plot: &[&str] = if *name == "chart.csv" { &["--plot", "x.jpg"] } else { &[] };
        let out = culprit(dir.path(), &[&["track", "--series", name], plot].concat());
        assert!(!out.status.success(), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
    std::fs::write(dir.path().join("equal.csv"), "7\n".repeat(40)).unwrap();
    let text = ok(&culprit(dir.path(), &["track", "--series", "equal.csv"]));
    assert!(text.contains("all values are equal") && text.contains("no change point"), "{text}");
    // Tracking only reads: a store path that does not exist is an error and stays absent.
    let out = culprit(dir.path(), &["track", "--db", "typo.db"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("there is no result store at typo.db"), "{out:?}");
    assert!(!dir.path().join("typo.db").exists());
}

fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(repo).args(args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn stored_history_along_a_branch_finds_the_step() {
    let _machine = common::shared_machine();
    const COMMITS: usize = 16;
    const STEP_AT: usize = 10;
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "user.email", "robot@culprit.invalid"]);
    git(&repo, &["config", "user.name", "Culprit Test"]);
    let mut shas = Vec::new();
    for i in 0..COMMITS {
        git(&repo, &["commit", "-q", "--allow-empty", "-m", &format!("commit {i}")]);
        shas.push(git(&repo, &["rev-parse", "HEAD"]));
    }
    // A commit on another branch, measured too: it is not on main's first-parent history and must be skipped.
    git(&repo, &["checkout", "-q", "-b", "side", &shas[3]]);
    git(&repo, &["commit", "-q", "--allow-empty", "-m", "side"]);
    let side = git(&repo, &["rev-parse", "HEAD"]);
    git(&repo, &["checkout", "-q", "main"]);

    // The job prints a throughput read from a file the test rewrites per commit (one line per run, in turn):
    // 1000 before STEP_AT, 900 after, with a little spread between the runs of one commit.
    let job = dir.path().join("job.yaml");
    std::fs::write(
        &job,
        "suite: track-test\ncommand:\n  cmd: |\n    echo \"$CULPRIT_COMMIT\" >> \"$TRACK_SEEN\"; n=$(cat \"$TRACK_COUNTER\" 2>/dev/null || echo 0); echo $((n + 1)) > \"$TRACK_COUNTER\"; sed -n \"$((n % 3 + 1))p\" \"$TRACK_VALUE_FILE\"\n  executions: 1\n  capture:\n    throughput: 'ops: ([0-9.]+)'\n    latency: 'lat: ([0-9.]+)'\n",
    )
    .unwrap();
    let db = dir.path().join("t.db");
    let value_file = dir.path().join("value.txt");
    let measured: Vec<&String> = shas.iter().chain(std::iter::once(&side)).collect();
    for (i, sha) in measured.iter().enumerate() {
        let level = if (STEP_AT..COMMITS).contains(&i) { 900.0 } else { 1000.0 };
        let lines: String = (0..3)
            .map(|k| {
                let ops = level + (k as f64 - 1.0) * 5.0 + (i % 4) as f64;
                format!("ops: {ops} lat: {:.3}\n", 1e6 / ops)
            })
            .collect();
        std::fs::write(&value_file, lines).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
            .current_dir(&repo)
            .env("TRACK_VALUE_FILE", &value_file)
            .env("TRACK_COUNTER", dir.path().join("counter"))
            .env("TRACK_SEEN", dir.path().join("seen"))
            .arg("--db")
            .arg(&db)
            .args(["run", job.to_str().unwrap(), "-n", "3", "--commit", sha, "--monitors", "none"])
            .output()
            .unwrap();
        ok(&out);
    }
    // `run --commit` gives the benchmark the commit in $CULPRIT_COMMIT, as the bisect does.
    let seen = std::fs::read_to_string(dir.path().join("seen")).unwrap();
    let expected: Vec<&str> = measured.iter().flat_map(|sha| [sha.as_str(); 3]).collect();
    assert_eq!(seen.lines().collect::<Vec<_>>(), expected);
    let repo_arg = repo.to_str().unwrap();
    let db_arg = db.to_str().unwrap();
    let json: serde_json::Value = serde_json::from_str(&ok(&culprit(
        dir.path(),
        &["--db", db_arg, "track", "--repo", repo_arg, "--branch", "main", "--metric", "throughput", "--json"],
    )))
    .unwrap();
    let series = json["series"].as_array().unwrap();
    assert_eq!(series.len(), 1, "{json:#}");
    assert_eq!(series[0]["metric"], "command.throughput");
    assert_eq!(series[0]["points"], COMMITS);
    let cps = series[0]["change_points"].as_array().unwrap();
    assert_eq!(cps.len(), 1, "{json:#}");
    assert_eq!(cps[0]["before"], shas[STEP_AT - 1].as_str());
    assert_eq!(cps[0]["after"], shas[STEP_AT].as_str());
    assert_eq!(cps[0]["index"], STEP_AT);
    // Three runs a commit and a 10% step: no doubt about the place, so the interval is that one commit.
    assert_eq!(
        (cps[0]["index_low"].as_u64(), cps[0]["index_high"].as_u64()),
        (Some(STEP_AT as u64), Some(STEP_AT as u64))
    );
    assert_eq!(cps[0]["before_low"], shas[STEP_AT - 1].as_str());
    assert_eq!(cps[0]["after_high"], shas[STEP_AT].as_str());
    assert_eq!(cps[0]["verdict"], "regression");
    // `change` is the percentage, as in compare's rows (`absolute` false), and `difference` the metric's own unit.
    let pct = cps[0]["change"].as_f64().unwrap();
    assert!((pct + 10.0).abs() < 1.0, "{pct}");
    assert_eq!(cps[0]["absolute"], false, "{json:#}");
    let difference = cps[0]["difference"].as_f64().unwrap();
    let (before, after) = (cps[0]["mean_before"].as_f64().unwrap(), cps[0]["mean_after"].as_f64().unwrap());
    assert!((difference - (after - before)).abs() < 1e-9 * before.abs().max(1.0), "{json:#}");
    assert!(cps[0].get("change_pct").is_none(), "one name for the percentage: {json:#}");
    let notes = json["notes"].as_array().unwrap();
    assert!(notes.iter().any(|n| n.as_str().unwrap_or("").contains("not on the first-parent history")), "{json:#}");

    let text = ok(&culprit(dir.path(), &["--db", db_arg, "track", "--repo", repo_arg, "--metric", "throughput"]));
    assert!(text.contains("regression") && text.contains(&shas[STEP_AT][..12]), "{text}");
    // Without --metric every metric of the job is tracked, under one header for the job and machine.
    let text = ok(&culprit(dir.path(), &["--db", db_arg, "track", "--repo", repo_arg, "--branch", "main"]));
    assert_eq!(text.matches("tested commits):").count(), 1, "{text}");
    assert!(text.contains("command.throughput: -9.9%") && text.contains("command.latency: +11.0%"), "{text}");
}

#[test]
fn labels_are_tracked_outside_a_repository() {
    let _machine = common::shared_machine();
    // qa-3 item 6: base, bad and fix labels (five runs each, 1000 -> 800 -> 1000) in a directory that is no git
    // repository were refused with a hint to use labels; they need no repository, and both steps are found.
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job.yaml");
    std::fs::write(
        &job,
        "suite: labels\ncommand:\n  cmd: |\n    n=$(cat counter 2>/dev/null || echo 0); echo $((n + 1)) > counter; sed -n \"$((n % 5 + 1))p\" values.txt\n  executions: 1\n  capture:\n    ops: 'ops: ([0-9.]+)'\n",
    )
    .unwrap();
    for (label, level) in [("base", 1000.0), ("bad", 800.0), ("fix", 1000.0)] {
        let lines: String = (0..5).map(|k| format!("ops: {}\n", level + (k as f64 - 2.0) * 1.5)).collect();
        std::fs::write(dir.path().join("values.txt"), lines).unwrap();
        ok(&culprit(
            dir.path(),
            &["--db", "l.db", "run", job.to_str().unwrap(), "-n", "5", "--label", label, "--monitors", "none"],
        ));
    }
    let text = ok(&culprit(dir.path(), &["--db", "l.db", "track", "--metric", "ops"]));
    assert!(text.contains("between base (last before) and bad (first after)"), "{text}");
    assert!(text.contains("between bad (last before) and fix (first after)"), "{text}");
    // QA: the header counted the three labels as "3 tested commits"; they are labels, and no commit was tested.
    assert!(text.contains(" (3 labels):\n") && !text.contains("commit"), "{text}");
}

/// A 3% step that is significant is a change point by default and none under `--min-change 5`, which says what it
/// left out (the follow loop's test gives it to a stored history).
#[test]
fn min_change_leaves_out_a_smaller_change_point_and_says_so() {
    let _machine = common::shared_machine();
    let dir = tempfile::tempdir().unwrap();
    // Alternating offsets of 0.3% give the series a noise scale without randomness; the step is 3% at point 30.
    let level = |i: i32| if i < 30 { 100.0 } else { 103.0 };
    let values: Vec<String> = (0..60).map(|i| format!("{}", level(i) * (1.0 + 0.003 * f64::from(i % 2)))).collect();
    std::fs::write(dir.path().join("ops.csv"), format!("ops_per_s\n{}\n", values.join("\n"))).unwrap();
    let default = ok(&culprit(dir.path(), &["track", "--series", "ops.csv"]));
    assert!(default.contains("+3.0%") && default.contains("between 29 (last before) and 30"), "{default}");
    assert!(!default.contains("--min-change"), "{default}");
    let floored = ok(&culprit(dir.path(), &["track", "--series", "ops.csv", "--min-change", "5%"]));
    assert!(floored.contains("no change point"), "{floored}");
    assert!(floored.contains("note: a change under 5% is not counted (--min-change)"), "{floored}");
    let below: serde_json::Value = serde_json::from_str(&ok(&culprit(
        dir.path(),
        &["track", "--series", "ops.csv", "--min-change", "2", "--json"],
    )))
    .unwrap();
    assert_eq!(below["change_points"].as_array().unwrap().len(), 1, "{below:#}");
    let out = culprit(dir.path(), &["track", "--series", "ops.csv", "--min-change", "0"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a percentage above 0"), "{out:?}");
}

/// `track --bisect` over a history measured at every commit: the step lies between two adjacent commits, which
/// needs no search, but only a bisect confirms the commit against its parent (and gives it a report), so one is
/// started for that pair; a second `track --bisect` finds it covered and starts none. It skipped such a change.
#[test]
fn track_bisect_confirms_a_step_between_two_adjacent_measured_commits_once() {
    let _machine = common::quiet_machine();
    // A 60% step and `--min-change 20`: commits measured one after another also differ by the machine's state
    // between visits (a CI run once showed a 4.9% change point between two commits that build the same binary,
    // another 10.9% in user time), and the test counts change points.
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = common::make_slowdown_repo(dir.path(), 8, 5, 0, 60);
    let db = dir.path().join("b.db");
    let job = dir.path().join("job.yaml");
    std::fs::write(&job, "suite: track-adjacent\ncommand:\n  cmd: ./bench\n").unwrap();
    let db_arg = db.to_str().unwrap();
    for sha in &shas {
        git(&repo, &["checkout", "-q", sha]);
        let built = Command::new("make").arg("-s").current_dir(&repo).output().unwrap();
        assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
        let run = ["--db", db_arg, "run", job.to_str().unwrap(), "-n", "4", "--commit", sha, "--monitors", "none"];
        ok(&culprit(&repo, &run));
    }
    git(&repo, &["checkout", "-q", "main"]);
    let _ = std::fs::remove_file(repo.join("bench"));
    // Each build lists what its descriptors point to. The bisect's outcome goes to standard error while a saved
    // copy of standard output waits, and no build may inherit that copy: a daemon a build left would hold the
    // reader's pipe (`| jq`) open. So standard output is a file here, whose name no build may see.
    let fds = dir.path().join("fds.txt");
    let build = format!("for fd in /proc/$$/fd/*; do readlink \"$fd\"; done >> {}; make -s", fds.display());
    let track = ["--db", db_arg, "track", "--bisect", "--build", &build, "--metric", "command.user_time"];
    let track = [&track[..], &["--json", "--min-change", "20"]].concat();
    let stdout_file = dir.path().join("track-out.json");
    let status = Command::new(env!("CARGO_BIN_EXE_culprit"))
        .current_dir(&repo)
        .args(&track)
        .stdout(std::fs::File::create(&stdout_file).unwrap())
        .status()
        .unwrap();
    assert!(status.success());
    let first: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&stdout_file).unwrap()).unwrap();
    let steps = first["series"][0]["change_points"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{first:#}");
    assert_eq!((steps[0]["before"].as_str(), steps[0]["after"].as_str()), (Some(&*shas[3]), Some(&*shas[4])));
    assert_eq!(steps[0]["bisect_session"], 1, "{first:#}");
    let inherited = std::fs::read_to_string(&fds).unwrap();
    assert!(inherited.contains("fds.txt"), "{inherited}");
    assert!(!inherited.contains("track-out.json"), "a build inherited culprit's standard output: {inherited}");
    let log: serde_json::Value =
        serde_json::from_str(&ok(&culprit(&repo, &["--db", db_arg, "bisect", "log", "1", "--json"]))).unwrap();
    assert_eq!(log["outcome"]["culprits"][0]["sha"], shas[4].as_str(), "{log:#}");
    let second: serde_json::Value = serde_json::from_str(&ok(&culprit(&repo, &track))).unwrap();
    let steps = second["series"][0]["change_points"].as_array().unwrap();
    // No second bisect, and the change still names the session that bisected it, with a note saying why no
    // bisect ran (QA 45b: `"bisect_session": null` and silence).
    assert!(steps.iter().all(|c| c["bisect_session"] == 1), "{second:#}");
    let notes = second["notes"].as_array().unwrap();
    assert!(notes.iter().any(|n| n.as_str().unwrap_or("").contains("is bisected already, by session 1")), "{second:#}");
    let list = ok(&culprit(&repo, &["--db", db_arg, "bisect", "list"]));
    assert_eq!(list.lines().filter(|l| l.contains("command.user_time")).count(), 1, "{list}");
}
