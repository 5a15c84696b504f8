//! End-to-end regressions of the eleventh QA pass: try-fix and its report, and `culprit run` killed with kill -9,
//! used as a kernel developer would use them.

use crate::common;

use crate::common::{culprit, stdout};
use std::process::Command;

#[test]
fn qa11_the_report_try_fix_names_gives_its_verdict_on_the_same_runs() {
    // try-fix measured with a metric fixed before the runs (`--metric`, or command.elapsed_time for `--run`) decides
    // it as a family of its own, and ends with the `culprit report --compare BASE BAD --fix LABEL` command that
    // "writes the mail with this table". That mail, without --metric, decided the metric among all 138 of the table
    // (or chose another one): on the same runs try-fix said "partly fixed: command.elapsed_time is still 2.4% from
    // the base (95% interval 1.1%..4.0%)" and the mail "within the noise of the base ... Verdict: fixed".
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = common::make_slowdown_repo(dir.path(), 4, 3, 99, 40);
    common::work_patch(dir.path(), &repo, "half.patch", 40, 20);
    let args = ["try-fix", "--repo", repo.to_str().unwrap(), "--base", &shas[1], "--bad", &shas[3], "--patch"];
    let args = [&args[..], &["half.patch", "--run", "./bench", "--build", "make -s", "--runs", "4"]].concat();
    let args = [&args[..], &["--metric", "command.user_time"]].concat();
    let out = culprit("t.db", &args, dir.path());
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(matches!(out.status.code(), Some(0 | 1)), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let at = lines.iter().position(|l| l.starts_with("culprit report ")).unwrap_or_else(|| panic!("{text}"));
    let verdict = lines[at - 1].split(':').next().unwrap().to_string();
    let command = lines[at].strip_prefix("culprit ").unwrap().split(" writes the mail").next().unwrap();
    assert!(command.contains(" --metric command.user_time"), "{command}");
    let words: Vec<String> = command.split_whitespace().map(|w| w.trim_matches('\'').to_string()).collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let db = words.iter().position(|&w| w == "--db").map(|i| words[i + 1]).unwrap();
    let kept = words.iter().enumerate().filter(|&(i, &w)| w != "--db" && (i == 0 || words[i - 1] != "--db"));
    let without_db: Vec<&str> = kept.map(|(_, &w)| w).collect();
    let mail = stdout(&culprit(db, &without_db[..], dir.path()));
    let mail = mail.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(mail.contains(&format!("Verdict: {verdict}.")), "try-fix said {verdict:?}:\n{text}\n{mail}");
}

/// The live processes whose command line holds `marker`.
fn processes_holding(marker: &str) -> Vec<i32> {
    let entries = std::fs::read_dir("/proc").unwrap();
    let pids = entries.flatten().filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok());
    pids.filter(|pid| {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let zombie = stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        !zombie && String::from_utf8_lossy(&cmdline).contains(marker)
    })
    .collect()
}

#[test]
fn qa11_a_benchmark_left_by_a_run_killed_with_kill_9_is_killed_by_the_next_run() {
    let _machine = common::shared_machine();
    // `culprit run` of a job with the perf-stat and perf-profile monitors, killed with kill -9: perf went with it
    // (PR_SET_PDEATHSIG), but the benchmark ran on (a stress-ng of minutes loads the machine under every later
    // run), and the next `culprit run` said nothing. Bisect, check and try-fix kill what such a death left running.
    let dir = tempfile::tempdir().unwrap();
    let started = dir.path().join("started");
    let marker = format!("qa11-leftover-{}", std::process::id());
    let job = format!("suite: qa11\ncommand:\n  cmd: \"echo >> {}; sleep 120; echo {marker}\"\n", started.display());
    let job = common::write(dir.path(), "long.yaml", &job);
    let scratch = dir.path().join("scratch");
    let db = dir.path().join("r.db");
    let run = |job: &std::path::Path, label: &str| {
        let args = ["run", job.to_str().unwrap(), "-n", "1", "--label", label, "--monitors", "none", "--scratch"];
        [&args[..], &[scratch.to_str().unwrap()]].concat().iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let long = run(&job, "long");
    let long: Vec<&str> = long.iter().map(String::as_str).collect();
    let mut child = common::spawn_culprit(&db, &long, dir.path());
    common::wait_for_file(&started, "the benchmark never started");
    child.kill().unwrap();
    child.wait().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let left = processes_holding(&marker);
    assert!(!left.is_empty(), "the benchmark was expected to outlive its culprit");
    let quick = common::write(dir.path(), "quick.yaml", "suite: qa11\ncommand:\n  cmd: echo ops=1\n");
    let next = run(&quick, "quick");
    let next: Vec<&str> = next.iter().map(String::as_str).collect();
    let out = culprit(&db, &next, dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let still = processes_holding(&marker);
    for pid in &still {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    assert!(out.status.success(), "{stderr}");
    assert!(still.is_empty(), "still running: {still:?}\n{stderr}");
    assert!(stderr.contains("culprit: killed process group"), "{stderr}");
    assert!(stderr.contains("the run of long that culprit process"), "{stderr}");
}

#[test]
fn qa11_track_bisect_resumes_a_stopped_bisect_of_two_adjacent_commits() {
    // `track --bisect` over a history measured at every commit starts one bisect of the two adjacent commits around
    // a step, "until a session covers them". A session stopped by kill -9 (or Ctrl-C) covered them too: the next
    // `track --bisect` (and `track --follow` pass) started nothing, so the commit was never confirmed nor reported
    // and `bisect list` showed the session stopped for good.
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = common::make_slowdown_repo(dir.path(), 6, 4, 0, 40);
    // The sleep gives the bisect's runs time to be killed in; user time does not count it.
    let job = common::write(dir.path(), "job.yaml", "suite: qa11-adjacent\ncommand:\n  cmd: ./bench; sleep 0.4\n");
    let db = dir.path().join("t.db");
    common::run_at_every_commit(&db, &repo, &shas, &job, 4);
    // The step is 40%; --min-change 20 keeps the test's one change point on a loaded CI host, where the user time of
    // two identical builds has once differed by 10.9%.
    let track = ["track", "--bisect", "--build", "make -s", "--metric", "command.user_time", "--min-change", "20"];
    let mut child = common::spawn_culprit(&db, &track, &repo);
    common::wait_until("track --bisect started no bisect", || {
        stdout(&culprit(&db, &["bisect", "list"], &repo)).lines().any(|l| l.starts_with("1 "))
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let list = stdout(&culprit(&db, &["bisect", "list"], &repo));
    assert!(list.lines().any(|l| l.starts_with("1 ") && l.contains("stopped")), "{list}");
    let again: serde_json::Value =
        serde_json::from_str(&stdout(&culprit(&db, &[&track[..], &["--json"]].concat(), &repo))).unwrap();
    let steps = again["series"][0]["change_points"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{again:#}");
    assert_eq!((steps[0]["before"].as_str(), steps[0]["after"].as_str()), (Some(&*shas[2]), Some(&*shas[3])));
    assert_eq!(steps[0]["bisect_session"], 1, "{again:#}");
    let log: serde_json::Value =
        serde_json::from_str(&stdout(&culprit(&db, &["bisect", "log", "1", "--json"], &repo))).unwrap();
    assert_eq!(log["status"], "found", "{log:#}");
    assert_eq!(log["outcome"]["culprits"][0]["sha"], shas[3].as_str(), "{log:#}");
}

#[test]
fn qa11_track_series_json_says_what_min_change_left_out() {
    let _machine = common::shared_machine();
    // A 20% step in a plain series, tracked with --min-change 25: the text ends "note: a change under 25% is not
    // counted (--min-change)", and the JSON of stored results carries that note in `notes`; the JSON of `--series`
    // said only that there was no change point, so a script could not tell "nothing changed" from "under the bar".
    let dir = tempfile::tempdir().unwrap();
    let values: Vec<String> = (0..20).map(|i| if i < 10 { "100" } else { "80" }.to_string()).collect();
    common::write(dir.path(), "ops.csv", &format!("ops\n{}\n", values.join("\n")));
    let args = ["track", "--series", "ops.csv", "--min-change", "25", "--json"];
    let json: serde_json::Value = serde_json::from_str(&stdout(&culprit("unused.db", &args, dir.path()))).unwrap();
    assert_eq!(json["change_points"].as_array().map(Vec::len), Some(0), "{json:#}");
    assert_eq!(json["notes"], serde_json::json!(["a change under 25% is not counted (--min-change)"]), "{json:#}");
    let args = ["track", "--series", "ops.csv", "--json"];
    let json: serde_json::Value = serde_json::from_str(&stdout(&culprit("unused.db", &args, dir.path()))).unwrap();
    assert_eq!(json["change_points"].as_array().map(Vec::len), Some(1), "{json:#}");
    assert_eq!(json["notes"], serde_json::json!([]), "{json:#}");
}
