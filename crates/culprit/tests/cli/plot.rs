//! `--plot` of `culprit track` and `culprit compare --by`: the charts hold what the text output says.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| t.split_once('>').and_then(|(_, rest)| rest.split_once("</text>")).map(|(s, _)| s.trim().to_string()))
        .collect()
}

#[test]
fn track_plot_marks_each_change_point_of_the_series() {
    let dir = tempfile::tempdir().unwrap();
    let csv = root().join("crates/culprit/tests/data/track/hackbench-history.csv");
    let svg_path = dir.path().join("history.svg");
    let culprit = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_culprit")).args(["track", "--series", csv.to_str().unwrap()]).args(extra).output().unwrap()
    };
    let json: serde_json::Value = serde_json::from_str(&ok(&culprit(&["--json", "--plot", svg_path.to_str().unwrap()]))).unwrap();
    let changes = json["change_points"].as_array().unwrap();
    assert!(!changes.is_empty());
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    let t = texts(&svg);
    assert_eq!(t.first().map(String::as_str), Some("hackbench.throughput"), "{t:?}");
    let marks: Vec<&String> = t.iter().filter(|s| s.starts_with("regression:") || s.starts_with("improvement:")).collect();
    assert_eq!(marks.len(), changes.len(), "{marks:?}");
    for c in changes {
        let after = c["after"].as_str().unwrap();
        assert!(marks.iter().any(|m| m.ends_with(&format!("and {after}"))), "{after} not marked: {marks:?}");
    }
    // A PNG of the same, and a clear error for a format the plotter does not write.
    let png_path = dir.path().join("history.png");
    ok(&culprit(&["--plot", png_path.to_str().unwrap()]));
    assert_eq!(&std::fs::read(&png_path).unwrap()[..8], b"\x89PNG\r\n\x1a\n");
    let bad = culprit(&["--plot", dir.path().join("history.gif").to_str().unwrap()]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains(".svg or .png"));
}

#[test]
fn compare_by_plot_draws_one_curve_per_label_over_the_param_values() {
    let dir = tempfile::tempdir().unwrap();
    // The command prints a throughput read from a file the test rewrites per label.
    std::fs::write(
        dir.path().join("job.yaml"),
        "suite: sweep-test\ncommand:\n  cmd: 'echo \"ops: $(cat \"$SWEEP_VALUE\")\"'\n  executions: [1, 2, 4, 8, 16, 32]\n  capture:\n    throughput: 'ops: ([0-9.]+)'\n",
    )
    .unwrap();
    let value = dir.path().join("value");
    let culprit = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_culprit"))
            .current_dir(dir.path())
            .env("SWEEP_VALUE", &value)
            .args(["--db", "s.db"])
            .args(args)
            .output()
            .unwrap()
    };
    for (label, v) in [("cgroup-off", "1000"), ("cgroup-on", "900")] {
        std::fs::write(&value, v).unwrap();
        ok(&culprit(&["run", "job.yaml", "-n", "2", "--label", label, "--monitors", "none"]));
    }
    // Without --metric the sweep shows the job's KPI, the number it captures, not its elapsed time.
    let text = ok(&culprit(&["compare", "cgroup-off", "cgroup-on", "--by", "executions"]));
    assert!(text.starts_with("command.throughput by executions"), "{text}");
    let text = ok(&culprit(&["compare", "cgroup-off", "cgroup-on", "--by", "executions", "--metric", "throughput", "--plot", "s.svg"]));
    assert!(text.contains("command.throughput by executions"), "{text}");
    let svg = std::fs::read_to_string(dir.path().join("s.svg")).unwrap();
    let t = texts(&svg);
    assert_eq!(t.first().map(String::as_str), Some("command.throughput"), "{t:?}");
    assert!(t.iter().any(|s| s == "executions (log scale)"), "{t:?}");
    for label in ["cgroup-off", "cgroup-on"] {
        assert_eq!(t.iter().filter(|s| *s == label).count(), 1, "{t:?}");
    }
    // Two curves of six points: one marker each.
    assert_eq!(svg.matches("<circle").count(), 12);
    ok(&culprit(&["compare", "cgroup-off", "cgroup-on", "--by", "executions", "--metric", "throughput", "--plot", "s.png"]));
    assert_eq!(&std::fs::read(dir.path().join("s.png")).unwrap()[..8], b"\x89PNG\r\n\x1a\n");
}
