//! End-to-end regressions of the fifteenth QA pass: the maintainer's end of the loop (`culprit report`, `compare`,
//! `track` and `serve`) read against the stored numbers and against each other.

use crate::common;

use crate::common::{culprit, stdout};

#[test]
fn qa15_a_metric_the_report_decides_alone_has_a_reproduce_line_that_decides_it_alone() {
    // A report decides its metric (a bisect's, or --metric) on its own, and its reproduce steps ended with
    // `culprit compare BASE BAD`, which decides it among every metric: a bisect's mail headlined "command.elapsed_time
    // 48.7% regression" over "the table below, from the stored runs: culprit compare ...", and that command's table
    // had no command.elapsed_time row at all (q = 0.23 among 141 metrics).
    let dir = tempfile::tempdir().unwrap();
    common::store_ops_runs(dir.path(), &[100.0, 103.0, 97.0, 101.0, 106.0, 109.0, 103.0, 107.0], [4, 4]);
    let report = ["report", "--compare", "a", "b", "--metric", "command.ops"];
    let text = stdout(&culprit("q.db", &report, dir.path()));
    assert!(text.starts_with("[culprit] b: command.ops 6.0% change\n"), "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&culprit("q.db", &[&report[..], &["--format", "json"]].concat(), dir.path())))
            .unwrap();
    let steps = json["report"]["reproduce"].as_array().unwrap();
    let lines: Vec<&str> = steps.iter().map(|l| l.as_str().unwrap()).collect();
    // The steps measure into a new store of their own (QA 46), and the line reads it.
    assert_eq!(lines.last(), Some(&"culprit compare --db repro.db a b --metric '^command\\.ops$'"), "{lines:?}");
    // That command shows the row the mail decided, with its change.
    let alone = stdout(&culprit("q.db", &["compare", "a", "b", "--metric", "^command\\.ops$"], dir.path()));
    assert!(alone.lines().any(|l| l.contains("+6.0%") && l.ends_with("command.ops")), "{alone}");
    // The whole table decides it among its dozen metrics, so its q is never below the q of the row decided alone.
    // Whether the whole table shows the row depends on the other metrics (the runs' timings, which this machine's
    // load moves: with several of them apart too, the row's q falls under the bar), so the q values are compared.
    let q_of = |args: &[&str]| -> f64 {
        let json: serde_json::Value =
            serde_json::from_str(&stdout(&culprit("q.db", &[args, &["--json", "--all"]].concat(), dir.path())))
                .unwrap();
        let rows = json.pointer("/0/result/rows").and_then(|r| r.as_array()).cloned().unwrap_or_default();
        let row = rows.iter().find(|r| r["metric"] == "command.ops").unwrap_or_else(|| panic!("{json:#}"));
        row.pointer("/changes/0/q").and_then(|q| q.as_f64()).unwrap_or_else(|| panic!("{row:#}"))
    };
    let q_alone = q_of(&["compare", "a", "b", "--metric", "^command\\.ops$"]);
    let q_whole = q_of(&["compare", "a", "b"]);
    assert!(q_whole >= q_alone && q_whole > 0.0, "q among every metric {q_whole}, alone {q_alone}");
}

#[test]
fn qa15_a_report_whose_runs_decide_nothing_does_not_say_it_found_no_change() {
    // A `culprit run` killed after its first run left one run at the commit; the mail of it said "FYI, we found no
    // significant change of sysbench-cpu.workload (-26.7%, undecided change)", as if a test had been made and passed.
    let dir = tempfile::tempdir().unwrap();
    common::store_ops_runs(dir.path(), &[100.0, 103.0, 97.0, 101.0, 74.0], [4, 1]);
    let text = stdout(&culprit("q.db", &["report", "--compare", "a", "b", "--metric", "command.ops"], dir.path()));
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let said = "FYI, we could not decide whether command.ops changed (-26.2%; fewer than 3 runs a side (4 vs 1)) \
                between the runs of:";
    assert!(flat.contains(said), "{text}");
    assert!(!flat.contains("no significant change"), "{text}");
}

#[test]
fn qa15_the_dashboards_track_of_a_store_without_labels_does_not_say_the_metric_matches_nothing() {
    // Without repo= the dashboard tracks labels only. Of a store whose runs were all at commits it answered
    // /track?metric=elapsed with "(metric=elapsed matches no metric of the runs; they have command.elapsed_time,
    // ...)": the labels' error about no runs, naming the very metric it said nothing matched.
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git").current_dir(dir.path()).args(args).status().unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "one"]);
    common::write(dir.path(), "echo.yaml", "suite: x\ncommand:\n  cmd: 'true'\n");
    let run = ["run", "echo.yaml", "-n", "1", "--commit", "HEAD", "--monitors", "none"];
    stdout(&culprit("q.db", &run, dir.path()));
    let server = common::serve("q.db", dir.path());
    let page = server.get("/track?metric=elapsed");
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(page.body.contains("this store&#39;s 1 run(s) are all at commits"), "{}", page.body);
    assert!(page.body.contains("add repo=DIR") && !page.body.contains("matches no metric"), "{}", page.body);
}

#[test]
fn qa15_track_json_of_labels_names_no_repository_or_branch() {
    // Labels are ordered by their runs. Outside a repository `track --json` of them said "branch": "HEAD" and
    // "repo": the current directory, which is no repository, as if the points were commits along its HEAD.
    let dir = tempfile::tempdir().unwrap();
    let values = [100.0, 101.0, 99.0, 100.5, 120.0, 121.0, 119.0, 120.5];
    common::store_ops_runs(dir.path(), &values, [4, 4]);
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&culprit("q.db", &["track", "--metric", "ops", "--json"], dir.path()))).unwrap();
    assert!(json["branch"].is_null() && json["repo"].is_null(), "{json}");
    assert_eq!(json["series"][0]["points"], 2, "{json}");
}
