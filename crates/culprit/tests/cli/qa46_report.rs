//! QA 46, sections 4 and 5: the mail of `culprit report --compare` marks lkp's box settings (`disk`, `fs`) that
//! Culprit recorded but did not apply, in every format; its reproduce steps measure into a store of their own with
//! as many runs as the mail says would show the change; and `compare` and the mail say when the two sides ran with
//! different machine facts (one side under `taskset -c 0`).

use crate::common;

use crate::common::{culprit, stdout};
use std::path::Path;

/// A command job giving lkp's `fs: ext4` and `disk: 2pmem`, whose `ops` is read from `ops.txt`.
const JOB: &str = "fs: ext4\ndisk: 2pmem\ncommand:\n  cmd: \"cat ops.txt\"\n  capture:\n    ops: 'ops: ([0-9]+)'\n";

/// Runs the job once per value at `label`, each run printing `ops: value`.
fn run_each(dir: &Path, label: &str, values: &[u32]) {
    for value in values {
        common::write(dir, "ops.txt", &format!("ops: {value}\n"));
        stdout(&culprit("f.db", &["run", "j.yaml", "-n", "1", "--label", label, "--monitors", "none"], dir));
    }
}

/// The mail's reproduce steps, with lines broken by ` \` joined again.
fn steps_of(text: &str) -> String {
    text.replace(" \\\n", " ").split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn qa46_4_the_mail_marks_box_settings_not_applied_and_its_steps_use_a_new_store() {
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "j.yaml", JOB);
    run_each(dir.path(), "a", &[101, 102, 103]);
    run_each(dir.path(), "b", &[201, 202, 203]);

    let text = stdout(&culprit("f.db", &["report", "--compare", "a", "b"], dir.path()));
    // The params are still given, as lkp's mail gives them, and marked as not applied right after them.
    assert!(text.contains("\tfs: ext4\n\tdisk: 2pmem\n"), "{text}");
    assert!(text.contains("\nrecorded with the runs, not applied by Culprit: disk, fs\n"), "{text}");
    // The steps measure into a new store, and say so; none of them names the store the report read.
    let steps = steps_of(&text);
    assert!(text.contains("# the runs go to a new store, repro.db, not to the one this report read:"), "{text}");
    assert!(steps.contains("culprit run --db repro.db job.yaml -n 3 --label a"), "{text}");
    assert!(steps.contains("culprit run --db repro.db job.yaml -n 3 --label b"), "{text}");
    assert!(steps.contains("culprit compare --db repro.db a b"), "{text}");
    assert!(!steps.contains("--db f.db"), "{text}");

    let markdown = stdout(&culprit("f.db", &["report", "--compare", "a", "b", "--format", "markdown"], dir.path()));
    assert!(markdown.contains("\n- recorded with the runs, not applied by Culprit: disk, fs\n"), "{markdown}");
    let html = stdout(&culprit("f.db", &["report", "--compare", "a", "b", "--format", "html"], dir.path()));
    assert!(html.contains("<li>recorded with the runs, not applied by Culprit: disk, fs</li>"), "{html}");
    let json = stdout(&culprit("f.db", &["report", "--compare", "a", "b", "--format", "json"], dir.path()));
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["report"]["not_applied"], serde_json::json!(["disk", "fs"]), "{json}");
}

#[test]
fn qa46_4_the_steps_take_the_runs_the_mail_says_would_show_the_change() {
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "j.yaml", JOB);
    // A 9.7% change within noise of some 15%: three runs a side cannot tell it.
    run_each(dir.path(), "a", &[100, 120, 90]);
    run_each(dir.path(), "b", &[110, 130, 100]);
    let text = stdout(&culprit("f.db", &["report", "--compare", "a", "b"], dir.path()));
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let needed = runs_said(&flat);
    let needed = needed.unwrap_or_else(|| panic!("the mail says no runs that would show the change:\n{text}"));
    assert!(needed > 3, "{text}");
    let steps = steps_of(&text);
    assert!(steps.contains(&format!("culprit run --db repro.db job.yaml -n {needed} --label a")), "{text}");
    assert!(steps.contains(&format!("culprit run --db repro.db job.yaml -n {needed} --label b")), "{text}");
}

/// The N of "about N runs a side, not 3, would show" in the mail's text, words separated by single spaces.
fn runs_said(flat: &str) -> Option<usize> {
    let (_, after) = flat.split_once("about ")?;
    let (count, rest) = after.split_once(' ')?;
    rest.starts_with("runs a side, not 3, would show").then(|| count.parse().ok()).flatten()
}

#[test]
fn qa46_5_compare_and_the_mail_say_when_the_sides_ran_with_different_cpus() {
    // One side run under `taskset -c 0` records 1 CPU (its affinity mask), the other every CPU the test may use.
    let cpus = std::thread::available_parallelism().unwrap().get();
    assert!(cpus > 1, "this test pins one side to CPU 0, and needs more than one CPU to tell the sides apart");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    common::write(d, "j.yaml", JOB);
    run_each(d, "all", &[101, 102, 103]);
    for value in [151, 152, 153] {
        common::write(d, "ops.txt", &format!("ops: {value}\n"));
        let out = std::process::Command::new("taskset")
            .args(["-c", "0", env!("CARGO_BIN_EXE_culprit"), "--db", "f.db", "run", "j.yaml", "-n", "1"])
            .args(["--label", "pin1", "--monitors", "none"])
            .current_dir(d)
            .output()
            .unwrap();
        stdout(&out);
    }
    let said = format!("all ran with {cpus} CPUs, pin1 with 1");
    let table = stdout(&culprit("f.db", &["compare", "all", "pin1"], d));
    // A comment line under the table, wrapped as the others are.
    assert!(table.contains("\n# the sides ran on different machine facts: "), "{table}");
    let flat = table.replace("\n# ", " ").split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains(&format!("the sides ran on different machine facts: {said};")), "{table}");
    // The mail still names the bad side's machine, and says right after it how the base's differed.
    let mail = stdout(&culprit("f.db", &["report", "--compare", "all", "pin1"], d));
    let flat = mail.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("on test machine: 1 thread "), "{mail}");
    assert!(flat.contains(&format!("(the sides ran on different machine facts: {said};")), "{mail}");
    // QA 54: its steps run the pinned side on one CPU, as its runs were, and the other on every CPU.
    let steps: Vec<&str> = mail.lines().map(str::trim).filter(|l| l.contains("culprit run ")).collect();
    assert_eq!(steps.len(), 2, "{mail}");
    assert!(steps[0].starts_with("culprit run ") && steps[0].contains("--label all"), "{mail}");
    assert!(steps[1].starts_with("taskset -c 0 culprit run ") && steps[1].contains("--label pin1"), "{mail}");
    assert!(mail.contains("# its runs had 1 CPU, fewer than another side's: run it on as many"), "{mail}");

    // Sides on the same CPUs say nothing of the machine.
    run_each(d, "again", &[104, 105, 106]);
    let table = stdout(&culprit("f.db", &["compare", "all", "again"], d));
    assert!(!table.contains("different machine facts"), "{table}");
}

/// QA 58: `compare --by` of the same sides said nothing of their different CPUs, in any format, where the table
/// says it under itself; the sweep's -25% read as the revisions'.
#[test]
fn qa58_compare_by_says_when_the_sides_ran_with_different_cpus() {
    let cpus = std::thread::available_parallelism().unwrap().get();
    assert!(cpus > 1, "this test pins one side to CPU 0, and needs more than one CPU to tell the sides apart");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let job = "command:\n  cmd: \"cat ops.txt\"\n  executions: [1, 2]\n  capture:\n    ops: 'ops: ([0-9]+)'\n";
    common::write(d, "j.yaml", job);
    for (label, pinned) in [("all", false), ("pin1", true)] {
        for value in [101, 102, 103] {
            common::write(d, "ops.txt", &format!("ops: {}\n", if pinned { value + 50 } else { value }));
            let culprit_run = [env!("CARGO_BIN_EXE_culprit"), "--db", "f.db", "run", "j.yaml", "-n", "1", "--label"];
            let mut command = std::process::Command::new(if pinned { "taskset" } else { culprit_run[0] });
            if pinned {
                command.args(["-c", "0", culprit_run[0]]);
            }
            let out = command.args(&culprit_run[1..]).args([label, "--monitors", "none"]).current_dir(d).output();
            stdout(&out.unwrap());
        }
    }
    let said = format!("the sides ran on different machine facts: all ran with {cpus} CPUs, pin1 with 1;");
    let table = stdout(&culprit("f.db", &["compare", "all", "pin1", "--by", "executions"], d));
    let flat = table.replace("\n# ", " ").split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(table.contains("\n# the sides ran on different machine facts: ") && flat.contains(&said), "{table}");
    let out = culprit("f.db", &["compare", "all", "pin1", "--by", "executions", "--format", "json"], d);
    let warned = String::from_utf8_lossy(&out.stderr).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(out.status.success() && warned.contains(&said), "{warned}");
}
