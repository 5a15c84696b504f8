//! End-to-end regressions of the sixteenth QA pass: what `culprit compare` says under its table of a change whose
//! good direction is unknown.

mod common;

use common::{culprit, stdout};
use std::path::Path;

/// Stores `runs` of a `command` job under the labels `a` and `b` (so many of each) in `dir/q.db`, the job printing
/// `ops: N` with N read in turn from `values` (a's, then b's); no monitors.
fn ops_runs(dir: &Path, values: &[f64], runs: [usize; 2]) {
    let lines: Vec<String> = values.iter().map(f64::to_string).collect();
    common::write(dir, "vals", &(lines.join("\n") + "\n"));
    let job = "suite: x\ncommand:\n  cmd: 'n=$(cat n 2>/dev/null || echo 0); echo $((n + 1)) > n; \
               echo \"ops: $(sed -n \"$((n + 1))p\" vals)\"'\n  capture:\n    ops: 'ops: ([0-9.]+)'\n";
    common::write(dir, "ops.yaml", job);
    for (label, n) in ["a", "b"].into_iter().zip(runs) {
        let n = n.to_string();
        stdout(&culprit("q.db", &["run", "ops.yaml", "-n", &n, "--label", label, "--monitors", "none"], dir));
    }
}

#[test]
fn qa16_compare_headlines_a_change_of_unknown_direction_as_a_change_with_its_size() {
    // A captured number has no known good direction, so a significant move of it is "changed". The table showed its
    // row at +6.0% and nothing under it: the headlines were written for regressions and improvements only, and a
    // maintainer reading the lines under the table took their silence for no change.
    let dir = tempfile::tempdir().unwrap();
    ops_runs(dir.path(), &[100.0, 103.0, 97.0, 101.0, 106.0, 109.0, 103.0, 107.0], [4, 4]);
    let args = ["compare", "a", "b", "--metric", "^command\\.ops$"];
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&culprit("q.db", &[&args[..], &["--json"]].concat(), dir.path()))).unwrap();
    let rows = json[0]["result"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{json}");
    assert_eq!(rows[0]["direction"], "unknown", "{json}");
    assert_eq!(rows[0]["changes"][0]["verdict"]["verdict"], "changed", "{json}");
    let text = stdout(&culprit("q.db", &args, dir.path()));
    let headlines: Vec<&str> = text.lines().filter(|l| l.starts_with("command.ops ")).collect();
    assert_eq!(headlines.len(), 1, "{text}");
    assert!(headlines[0].starts_with("command.ops +6.0% change (4 vs 4 runs, p="), "{text}");
    assert!(!text.contains("regression") && !text.contains("improvement"), "{text}");
    // The report's headline of the same metric has said "change" all along; the two agree on the word and size.
    let report = stdout(&culprit("q.db", &["report", "--compare", "a", "b", "--metric", "command.ops"], dir.path()));
    assert!(report.starts_with("[culprit] b: command.ops 6.0% change\n"), "{report}");
}
