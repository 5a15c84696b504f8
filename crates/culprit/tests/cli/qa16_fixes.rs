//! End-to-end regressions of the sixteenth QA pass: what `culprit compare` says under its table of a change whose
//! good direction is unknown, how many charts `culprit track --plot` writes of a broad metric regex, and the title
//! of the dashboard's compare page when it is filtered.

use crate::common;

use crate::common::{culprit, stdout};
use std::path::Path;

#[test]
fn qa16_compare_headlines_a_change_of_unknown_direction_as_a_change_with_its_size() {
    // A captured number has no known good direction, so a significant move of it is "changed". The table showed its
    // row at +6.0% and nothing under it: the headlines were written for regressions and improvements only, and a
    // maintainer reading the lines under the table took their silence for no change.
    let dir = tempfile::tempdir().unwrap();
    common::store_ops_runs(dir.path(), &[100.0, 103.0, 97.0, 101.0, 106.0, 109.0, 103.0, 107.0], [4, 4]);
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

/// Stores a `command` job of 26 captured numbers under the labels `l01` to `l10`, 3 runs each, in `dir/t.db`:
/// `throughput` steps down 10% at `l06`, and `m10` to `m34` stay level but for a repeating wobble of 1%.
fn many_metric_runs(dir: &Path) {
    let mut job = String::from(
        "suite: many\ncommand:\n  cmd: |\n    n=$(cat counter 2>/dev/null || echo 0); echo $((n + 1)) > counter; \
         echo \"ops: $((LEVEL + n % 3 * 5))\"; for i in $(seq 10 34); do echo \"m$i: $((500 + n % 3 * 5))\"; done\n  \
         executions: 1\n  capture:\n    throughput: 'ops: ([0-9.]+)'\n",
    );
    for i in 10..=34 {
        job.push_str(&format!("    m{i}: 'm{i}: ([0-9.]+)'\n"));
    }
    common::write(dir, "many.yaml", &job);
    for i in 1..=10 {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_culprit"))
            .current_dir(dir)
            .env("LEVEL", if i >= 6 { "900" } else { "1000" })
            .args(["--db", "t.db", "run", "many.yaml", "-n", "3", "--label", &format!("l{i:02}"), "--monitors", "none"])
            .output()
            .unwrap();
        stdout(&out);
    }
}

#[test]
fn qa16_track_plot_of_a_broad_regex_draws_only_the_series_with_a_change_point_and_says_how_many_it_left_out() {
    // Without --metric, `track --plot` matched every number of the job and wrote one SVG each: over 30 files of flat
    // lines here, hundreds for a job with monitors, among which the one chart that mattered was lost.
    let dir = tempfile::tempdir().unwrap();
    many_metric_runs(dir.path());
    std::fs::create_dir(dir.path().join("charts")).unwrap();
    let out = culprit("t.db", &["track", "--json", "--plot", "charts/t.svg"], dir.path());
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let series = json["series"].as_array().unwrap();
    assert!(series.len() > 26, "every captured number and the command's own: {json}");
    // What is drawn is what the JSON calls a change point (the command's CPU times may have one too, by chance).
    let changed: Vec<&str> = series
        .iter()
        .filter(|s| !s["change_points"].as_array().unwrap().is_empty())
        .map(|s| s["metric"].as_str().unwrap())
        .collect();
    assert!(changed.contains(&"command.throughput"), "{json}");
    assert!(changed.len() <= 20, "{changed:?}");
    let mut files: Vec<String> = std::fs::read_dir(dir.path().join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut expected: Vec<String> = changed.iter().map(|m| format!("t-{m}.svg")).collect();
    expected.sort();
    assert_eq!(files, expected);
    // Standard error says how many were left out, why, and how to draw them.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said = format!(
        "culprit: drew only the {} of {} series with a change point (--plot draws every series only when there are at \
         most 20, and of more, regressions and improvements of the benchmark's own metrics first); the {} without one \
         are not drawn: a narrower --metric REGEX draws them",
        changed.len(),
        series.len(),
        series.len() - changed.len()
    );
    assert!(stderr.contains(&said), "{stderr}");
    // A narrower regex draws a flat series it left out, into the file named as it is always named.
    let out = culprit("t.db", &["track", "--metric", "^command\\.m1[0-2]$", "--plot", "charts/t.svg"], dir.path());
    stdout(&out);
    for m in ["m10", "m11", "m12"] {
        assert!(dir.path().join(format!("charts/t-command.{m}.svg")).is_file(), "{m}");
    }
    assert!(!String::from_utf8_lossy(&out.stderr).contains("left out"));
}

#[test]
fn qa16_the_dashboards_compare_page_names_its_filters_in_its_title() {
    // /compare?rev=a&rev=b&metric=X and /compare?rev=a&rev=b were both titled "culprit compare a b", so two tabs of
    // one pair, one per metric, could not be told apart in the tab bar or the browser's history.
    let dir = tempfile::tempdir().unwrap();
    common::store_ops_runs(dir.path(), &[100.0, 103.0, 97.0, 101.0, 106.0, 109.0, 103.0, 107.0], [4, 4]);
    let server = common::serve("q.db", dir.path());
    let plain = server.get("/compare?rev=a&rev=b");
    assert_eq!(plain.status, 200, "{}", plain.body);
    assert!(plain.body.contains("<title>culprit compare a b</title>"), "{}", plain.body);
    // A regex with HTML's special characters (`ops|<b>&` matches command.ops) is escaped in the title and heading.
    let filtered = server.get("/compare?rev=a&rev=b&metric=ops%7C%3Cb%3E%26&all=1");
    assert_eq!(filtered.status, 200, "{}", filtered.body);
    let title = "culprit compare a b --metric ops|&lt;b&gt;&amp; --all";
    assert!(filtered.body.contains(&format!("<title>{title}</title>")), "{}", filtered.body);
    assert!(filtered.body.contains(&format!("<h1>{title}</h1>")), "{}", filtered.body);
    assert!(!filtered.body.contains("<b>&"), "{}", filtered.body);
    assert!(filtered.body.contains("command.ops"), "{}", filtered.body);
}
