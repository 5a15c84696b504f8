//! End-to-end regressions of the forty-fifth QA pass: try-fix's metric without --metric, and job names that two
//! different jobs shared.

mod common;

use common::culprit;

#[test]
fn qa45_try_fix_run_without_metric_judges_the_regression_its_table_shows() {
    // `try-fix --run ./bench` without --metric judged command.elapsed_time and said "nothing to fix: ... (unchanged)"
    // (exit 1) under a table whose one changed row was a 30% command.user_time regression that the patch fixed.
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = common::make_slowdown_repo(dir.path(), 4, 3, 99, 30);
    let (base, bad) = (&shas[1], &shas[2]);
    let diff = std::process::Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["diff", bad.as_str(), base.as_str(), "--", "bench.c"])
        .output()
        .unwrap();
    let revert = dir.path().join("revert.patch");
    std::fs::write(&revert, &diff.stdout).unwrap();
    let args = ["try-fix", "--repo", repo.to_str().unwrap(), "--base", base, "--bad", bad, "--patch"];
    let run = ["--run", "./bench", "--build", "make -s", "--runs", "5"];
    let args = [&args[..], &[revert.to_str().unwrap()], &run[..]].concat();
    let out = culprit(dir.path().join("t.db"), &args, dir.path());
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let all = format!("{text}{}", String::from_utf8_lossy(&out.stderr));
    // The line is wrapped at the terminal's width; read as one.
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let at = joined.find(" judged ").unwrap_or_else(|| panic!("{all}"));
    let judged = &joined[at + 1..];
    let metric = judged.split_whitespace().nth(1).unwrap().trim_end_matches(',');
    // The bench's extra work is CPU time: its user time regresses; on a quiet machine its wall time may too.
    assert!(["command.user_time", "command.elapsed_time"].contains(&metric), "{all}");
    assert!(judged.contains("regressed most significantly from base to bad (--metric judges another)"), "{all}");
    assert!(text.contains(&format!("\nfixed: {metric} is back to the base\n")), "{all}");
    assert_eq!(out.status.code(), Some(0), "{all}");
    // The judged row is a regression in the table above the verdict.
    let row = text.lines().find(|l| l.trim_end().ends_with(metric)).unwrap_or_else(|| panic!("{all}"));
    assert!(row.contains("+"), "{row}\n{all}");
}
