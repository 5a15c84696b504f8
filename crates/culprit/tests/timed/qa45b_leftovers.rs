//! End-to-end regressions of what QA 45b's fixes of `culprit track --follow` and `culprit try-fix` left: a pass killed
//! after its bisect stored its session mails it on the next pass, once; a maintainer's bisect without `--metric`
//! leaves its probe runs out of the passes' history; the summary lists the change points of the followed metrics
//! only; `report --compare --fix` reads exactly the runs of one try-fix, the latest or the one named.

use crate::common;

use crate::common::{culprit, stdout};
use std::path::Path;
use std::process::{Command, Output};

/// A pass over `repo` with the store `f.db` and the job file `job.yaml` of `dir`, its summary as JSON, changes of
/// 10% and more counted; `extra` adds to the arguments.
fn pass_command(dir: &Path, repo: &Path, extra: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_culprit"));
    command
        .current_dir(dir)
        .args(["--db", "f.db", "track", "--follow", "main", "--job", "job.yaml", "--repo", repo.to_str().unwrap()])
        .args(["--build", "make -s", "--json", "--min-change", "20"])
        .args(extra);
    command
}

fn json(out: &Output) -> serde_json::Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: stdout is not only JSON:\n{stdout}"))
}

/// The lines of `culprit bisect list` of the store `f.db` in `dir` after its header: one per session.
fn session_lines(dir: &Path) -> Vec<String> {
    let out = culprit("f.db", &["bisect", "list"], dir);
    String::from_utf8_lossy(&out.stdout).lines().skip(1).map(str::to_string).collect()
}

/// A pass killed after its bisect stored its session (here, at the session's first run; a kill between the end of
/// the bisect and the pass's record of it leaves the same store) left a session that no pass was to mail: the pass
/// recorded a session as its own only when the bisect returned, and a finished session of a pair is never bisected
/// again. Now the bisect records it as the pass's when it stores it: finished by hand, it is mailed by the next pass,
/// once. Without --metric the pass follows the job's wall time; the summary lists the change points of that metric
/// only, and says that the others' are not listed.
#[test]
fn qa45b_leftover_a_pass_killed_after_its_bisect_stored_its_session_mails_it_once_later() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Twice the work from commit 6 on, and 8 runs a commit: wall time is a command's noisiest time (qa45b_9).
    let (repo, shas) = common::make_slowdown_repo(d, 10, 6, 0, 100);
    // The job's runs: the first run once the store holds a bisect session kills the pass (whose pid is in `pid`).
    let culprit_bin = env!("CARGO_BIN_EXE_culprit");
    let script = d.join("bench.sh");
    common::write_script(
        &script,
        &format!(
            "#!/bin/sh\nif [ -e {d}/armed ] && [ \"$({culprit_bin} --db {d}/f.db bisect list | wc -l)\" -gt 1 ]; then \
             rm {d}/armed; kill -9 $(cat {d}/pid); fi\nexec ./bench\n",
            d = d.display()
        ),
    );
    std::fs::write(d.join("job.yaml"), format!("suite: follow-test\ncommand:\n  cmd: sh {}\n", script.display()))
        .unwrap();
    std::fs::write(d.join("armed"), "").unwrap();
    let args = ["--every", "3", "--runs", "8", "--reports", "mails"];
    let child = pass_command(d, &repo, &args).stdout(std::process::Stdio::null()).spawn().unwrap();
    std::fs::write(d.join("pid"), child.id().to_string()).unwrap();
    let killed = child.wait_with_output().unwrap();
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&killed.status), Some(9), "the pass was not killed");
    assert!(!d.join("armed").exists());
    let sessions = session_lines(d);
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    // Finished by hand: the store holds a finished session that the pass started and did not report.
    let resumed = culprit("f.db", &["bisect", "--resume", "1"], d);
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    assert!(!d.join("mails").exists());

    let next = json(&pass_command(d, &repo, &args).output().unwrap());
    assert!(next["measured"].as_array().unwrap().is_empty(), "{next:#}");
    assert!(next["bisects"].as_array().unwrap().is_empty(), "the finished session covers the change: {next:#}");
    assert_eq!(next["reports"].as_array().unwrap().len(), 1, "{next:#}");
    let mail = std::fs::read_to_string(d.join("mails/bisect-1/report.txt")).unwrap();
    assert!(mail.contains(&format!("commit: {}", shas[5])), "{mail}");
    // The summary lists the change points of the followed metric only; twice the work moved the user time too, and
    // that is said, not listed as a change the robot acts on.
    let listed = next["change_points"].as_array().unwrap();
    assert!(!listed.is_empty(), "{next:#}");
    assert!(listed.iter().all(|c| c["metric"] == "command.elapsed_time"), "{next:#}");
    let notes = next["notes"].to_string();
    assert!(notes.contains("of metrics the pass does not follow are not listed"), "{next:#}");
    // Once: the pass after it writes no mail.
    std::fs::remove_dir_all(d.join("mails")).unwrap();
    let after = json(&pass_command(d, &repo, &args).output().unwrap());
    assert!(after["reports"].as_array().unwrap().is_empty(), "{after:#}");
    assert!(!d.join("mails").exists());
}

/// A maintainer's `culprit bisect` without `--metric` takes 3 runs of good and 3 of bad to choose its metric before
/// its session exists, and links none of them to it (they would bias its test). A pass read them as its own: here
/// they read twice as slow as the pass's runs (they were taken at another time), which made a regression at the
/// bisect's ends and a bisect of the robot's. Now the session lists them and the pass leaves them out.
#[test]
fn qa45b_leftover_a_bisects_probe_runs_without_metric_are_not_the_passs_runs() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (repo, shas) = common::make_slowdown_repo(d, 8, 0, 0, 0);
    // Runs outside follow's own worktrees (the bisect's) read twice as slow.
    let script = d.join("bench.sh");
    common::write_script(
        &script,
        "#!/bin/sh\ncase \"$PWD\" in */culprit/follow/*) ;; *) ./bench >/dev/null;; esac\nexec ./bench\n",
    );
    std::fs::write(d.join("job.yaml"), format!("suite: follow-test\ncommand:\n  cmd: sh {}\n", script.display()))
        .unwrap();
    let args = ["--every", "3", "--runs", "5", "--metric", "command.user_time"];
    let first = json(&pass_command(d, &repo, &args).output().unwrap());
    assert_eq!(first["measured"].as_array().unwrap().len(), 4, "grid 0, 3, 6, 7: {first:#}");
    assert!(first["bisects"].as_array().unwrap().is_empty(), "nothing changed: {first:#}");
    // Between grid commits 3 and 6, without --metric: its probe runs at 4 and 5 choose the metric.
    let bisect = culprit(
        "f.db",
        &[
            "bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[4], "--bad", &shas[5], "--job", "job.yaml",
            "--build", "make -s", "--max-runs", "24",
        ],
        d,
    );
    assert_eq!(session_lines(d).len(), 1, "{}", String::from_utf8_lossy(&bisect.stderr));

    let second = json(&pass_command(d, &repo, &args).output().unwrap());
    for field in ["measured", "narrowed", "bisects", "reports"] {
        assert!(second[field].as_array().unwrap().is_empty(), "{field}: {second:#}");
    }
    assert!(second["change_points"].as_array().unwrap().iter().all(|c| c["verdict"] != "regression"), "{second:#}");
    assert_eq!(session_lines(d).len(), 1, "only the maintainer's session");
}

/// The runs of each column (base, bad, fix) in `metric`'s row of a table of `report --format json` (`report`, or
/// `report.pooled`): the value whose `comparison` it is.
fn column_runs(table: &serde_json::Value, metric: &str) -> Vec<u64> {
    let rows = table["comparison"]["rows"].as_array().unwrap_or_else(|| panic!("no rows: {table:#}"));
    let row = rows.iter().find(|r| r["metric"] == metric).unwrap_or_else(|| panic!("no {metric}: {table:#}"));
    row["sides"].as_array().unwrap().iter().map(|s| s["n"].as_u64().unwrap()).collect()
}

/// `report --compare BASE BAD --fix LABEL` found try-fix's runs by their order among the stored runs, so a second
/// try-fix of the same commits and patch mixed its runs into the table of the first. Each try-fix is recorded with
/// its runs: the report reads the latest one's exactly, or the one `--try-fix ID` names.
#[test]
fn qa45b_leftover_a_second_try_fix_of_the_same_patch_is_reported_on_its_own_runs() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (repo, shas) = common::make_slowdown_repo(d, 4, 3, 99, 30);
    let patch = common::work_patch(d, &repo, "fix.patch", 30, 0);
    let metric = "command.user_time";
    let try_fix = |runs: &str| -> serde_json::Value {
        let args = [
            "try-fix", "--repo", repo.to_str().unwrap(), "--base", &shas[1], "--bad", &shas[3], "--patch",
            patch.to_str().unwrap(), "--run", "./bench", "--build", "make -s", "--runs", runs, "--metric", metric,
            "--json",
        ];
        let out = culprit("t.db", &args, d);
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), String::from_utf8_lossy(&out.stderr)))
    };
    let first = try_fix("3");
    let second = try_fix("4");
    assert_eq!((first["try_fix"].as_i64(), second["try_fix"].as_i64()), (Some(1), Some(2)));
    let label = second["patched"].as_str().unwrap();
    assert_eq!(first["patched"], label, "one patch, one label");
    let report = |extra: &[&str]| -> serde_json::Value {
        // The metric is named: the pooled table is cut to the row of the mail's metric, which is otherwise the
        // most significant change of the moment.
        let asked = ["report", "--compare", &shas[1], &shas[3], "--fix", label, "--metric", metric];
        let args = [&asked[..], &["--format", "json"], extra].concat();
        serde_json::from_str(&stdout(&culprit("t.db", &args, d))).unwrap()
    };
    // The second try-fix's 4 runs a side lead; under them, the table of all 7.
    let latest = report(&[]);
    assert_eq!(column_runs(&latest["report"], metric), [4, 4, 4], "{latest:#}");
    assert_eq!(column_runs(&latest["report"]["pooled"], metric), [7, 7, 7], "{latest:#}");
    // The first, named.
    assert_eq!(column_runs(&report(&["--try-fix", "1"])["report"], metric), [3, 3, 3]);
    let unknown = culprit("t.db", &["report", "--compare", &shas[1], &shas[3], "--fix", label, "--try-fix", "9"], d);
    let said = String::from_utf8_lossy(&unknown.stderr);
    assert!(!unknown.status.success() && said.contains("--try-fix 9: no such try-fix"), "{said}");
}
