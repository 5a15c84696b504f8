//! Leftovers of QA passes 46 and 47 about what the two sides of a comparison ran on: `bisect --scratch` (kept by
//! the session, recorded per run, passed by the mail's reproduce steps), the scratch filesystem through a result
//! root and back, hackbench's task count resolved from a share of the CPUs, and sides whose own runs ran with
//! different CPUs.

use crate::common;

use crate::common::{culprit, stdout};
use std::path::Path;
use std::process::Command;

/// A command job whose `ops` is read from `ops.txt` in the directory it runs in.
const JOB: &str = "command:\n  cmd: \"cat ops.txt\"\n  capture:\n    ops: 'ops: ([0-9]+)'\n";

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: not JSON:\n{text}"))
}

/// Text with runs of whitespace (a wrapped line's break, a `#` line's marks) as one space.
fn flat(text: &str) -> String {
    text.replace("\n# ", " ").replace(" \\\n", " ").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Runs culprit under `taskset -c 0` (one usable CPU) with `args` in `dir`, into `f.db`.
fn pinned(dir: &Path, args: &[&str]) {
    let out = Command::new("taskset")
        .args(["-c", "0", env!("CARGO_BIN_EXE_culprit"), "--db", "f.db"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    stdout(&out);
}

#[test]
fn qa48_1_a_bisect_runs_on_its_scratch_and_the_mail_reproduces_it_there() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = common::make_slowdown_repo(dir.path(), 4, 2, 0, 60);
    let job = common::write(dir.path(), "job.yaml", "suite: qa48\ncommand:\n  cmd: ./bench\n");
    let db = dir.path().join("b.db");
    let scratch = dir.path().join("bench-files");
    let (good, bad, scratch_arg) = (&shas[0], &shas[3], scratch.to_str().unwrap());

    // A directory that cannot be one is refused before anything is built or run.
    let file = common::write(dir.path(), "a-file", "");
    let bisect = |scratch: &str| {
        let args = [
            "bisect", "--good", good, "--bad", bad, "--job", job.to_str().unwrap(), "--build", "make -s",
            "--metric", "command.user_time", "--scratch", scratch,
        ];
        culprit(&db, &args, &repo)
    };
    let refused = common::refused(&bisect(file.to_str().unwrap()));
    assert!(refused.contains("--scratch") && refused.contains("this is a file, not a directory"), "{refused}");

    let out = bisect(scratch_arg);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Every run, the probe runs of good and bad included, recorded where its command ran: a worktree of the
    // commit in the repository's git directory, not `--scratch`, which a command does not use (QA 51).
    let canonical = std::fs::canonicalize(repo.join(".git/culprit")).unwrap();
    let expected = culprit_run::filesystem::filesystem_of(&repo).unwrap();
    let listed = json(&stdout(&culprit(&db, &["results", "--json"], dir.path())));
    let groups = listed.as_array().unwrap().iter();
    let ids: Vec<u64> =
        groups.flat_map(|g| g["run_ids"].as_array().unwrap().clone()).filter_map(|id| id.as_u64()).collect();
    assert!(ids.len() >= 2, "{listed:#}");
    for id in ids {
        let run = json(&stdout(&culprit(&db, &["results", "--run", &id.to_string(), "--json"], dir.path())));
        let path = run["scratch"]["path"].as_str().unwrap_or_default();
        assert!(path.starts_with(canonical.to_str().unwrap()), "{run:#}");
        assert_eq!(run["scratch"]["fs_type"], expected.fs_type.as_str(), "{run:#}");
    }

    // The mail names the filesystem the commands ran on once, without the session's worktrees, which are gone; its
    // reproduce steps run the bisect with the session's `--scratch`, as the session kept it.
    let mail = stdout(&culprit(&db, &["report", "1"], dir.path()));
    assert!(mail.contains("the command ran in (its working directory):"), "{mail}");
    assert!(mail.contains(&format!("\tfs: {}\n", expected.describe())), "{mail}");
    let steps = flat(&mail);
    let absolute = std::path::absolute(&scratch).unwrap();
    assert!(steps.contains(&format!("--scratch {}", absolute.display())), "{mail}");
    assert!(steps.contains("culprit bisect --db "), "{mail}");
    // QA 57: so does a comparison of the two ends, from inside the repository or from anywhere else (it listed the
    // probe's and the session's worktree directories, all gone, and from outside said to start the command there).
    for cwd in [repo.as_path(), dir.path()] {
        let mail = stdout(&culprit(&db, &["report", "--compare", good, bad], cwd));
        assert!(mail.contains(&format!("\tfs: {}\n", expected.describe())), "{mail}");
        assert!(!mail.contains(".git/culprit"), "{mail}");
    }

    // A resume keeps the session's directory: another one is refused rather than mixed into its runs.
    let other = culprit(&db, &["bisect", "--resume", "1", "--scratch", "/tmp"], &repo);
    assert!(!other.status.success());
    let said = String::from_utf8_lossy(&other.stderr);
    assert!(said.contains("--scratch"), "{said}");
}

#[test]
fn qa48_2_the_result_root_keeps_the_scratch_filesystem_through_an_import() {
    let _machine = common::shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    common::write(d, "j.yaml", JOB);
    common::write(d, "ops.txt", "ops: 7\n");
    let scratch = d.join("files");
    let root = d.join("root");
    let (scratch_arg, root_arg) = (scratch.to_str().unwrap(), root.to_str().unwrap());
    let args = ["run", "j.yaml", "-n", "1", "--label", "a", "--monitors", "none", "--scratch", scratch_arg];
    stdout(&culprit("f.db", &[&args[..], &["--result-root", root_arg]].concat(), d));
    let stored = json(&stdout(&culprit("f.db", &["results", "--run", "1", "--json"], d)));
    assert!(stored["scratch"].is_object(), "{stored:#}");

    // The run's directory holds it beside its stats.json, as the store recorded it.
    let written: Vec<_> =
        common::files_under(&root).into_iter().filter(|f| f.ends_with("culprit-scratch.json")).collect();
    assert_eq!(written.len(), 1, "{:?}", common::files_under(&root));
    let file = json(&std::fs::read_to_string(&written[0]).unwrap());
    assert_eq!(file, stored["scratch"], "{file:#}");

    // Imported into a new store, the run has the same filesystem and directory.
    let out = culprit("g.db", &["import", root_arg], d);
    stdout(&out);
    let imported = json(&stdout(&culprit("g.db", &["results", "--run", "1", "--json"], d)));
    assert_eq!(imported["scratch"], stored["scratch"], "{imported:#}");
    let text = stdout(&culprit("g.db", &["results", "--run", "1"], d));
    assert!(text.contains("scratch filesystem: "), "{text}");

    // A damaged file costs the run its filesystem, with a warning naming the file, not the run.
    std::fs::write(&written[0], "{\"fs_type\": 4}").unwrap();
    let out = culprit("h.db", &["import", root_arg], d);
    let warned = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && warned.contains("culprit-scratch.json"), "{warned}");
    let again = json(&stdout(&culprit("h.db", &["results", "--run", "1", "--json"], d)));
    assert!(again["scratch"].is_null(), "{again:#}");
    assert_eq!(again["metrics"]["command.ops"], stored["metrics"]["command.ops"], "{again:#}");
}

#[test]
fn qa48_3_hackbench_tasks_resolved_from_a_share_of_the_cpus_are_compared_with_both_values() {
    let cpus = std::thread::available_parallelism().unwrap().get();
    assert!(cpus > 1, "this test pins one side to CPU 0, and needs more than one CPU to tell the sides apart");
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let job = "suite: hackbench\ntestcase: hackbench\nnr_threads: 100%\nhackbench:\n  ipc: pipe\n  loops: 20\n";
    common::write(d, "hb.yaml", job);
    let args = ["run", "hb.yaml", "-n", "1", "--monitors", "none", "--label"];
    pinned(d, &[&args[..], &["p"]].concat());
    stdout(&culprit("f.db", &[&args[..], &["q"]].concat(), d));
    // What hackbench itself said it ran: 40 tasks on one CPU, 40 per CPU on all of them.
    let ran = stdout(&culprit("f.db", &["results", "--run", "1"], d));
    assert!(ran.contains("(== 40 tasks)"), "{ran}");

    let (tasks, groups) = (40 * cpus, cpus);
    let said = format!(
        "so the job resolved to different workloads: hackbench.nr_threads 1 at p, {groups} at q; hackbench.tasks 40 \
         at p, {tasks} at q;"
    );
    let table = stdout(&culprit("f.db", &["compare", "p", "q"], d));
    assert!(flat(&table).contains(&format!("p ran with 1 CPUs, q with {cpus}; {said}")), "{table}");
    let compared = json(&stdout(&culprit("f.db", &["compare", "p", "q", "--json"], d)));
    assert!(compared[0]["machines_differ"].as_str().unwrap().contains(&said), "{compared:#}");
    let mail = stdout(&culprit("f.db", &["report", "--compare", "p", "q"], d));
    assert!(flat(&mail).contains(&said), "{mail}");
}

#[test]
fn qa48_4_a_side_whose_own_runs_ran_with_different_cpus_is_said_from_all_its_runs() {
    let _machine = common::shared_machine();
    let cpus = std::thread::available_parallelism().unwrap().get();
    assert!(cpus > 1, "this test pins a run to CPU 0, and needs more than one CPU to tell the runs apart");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    common::write(d, "j.yaml", JOB);
    let args = ["run", "j.yaml", "-n", "1", "--monitors", "none", "--label"];
    common::write(d, "ops.txt", "ops: 100\n");
    pinned(d, &[&args[..], &["a"]].concat());
    for (value, label) in [(101, "a"), (102, "a"), (200, "b"), (201, "b"), (202, "b")] {
        common::write(d, "ops.txt", &format!("ops: {value}\n"));
        stdout(&culprit("f.db", &[&args[..], &[label]].concat(), d));
    }
    // The latest run of each side ran on every CPU: read from it alone, the sides agreed.
    let table = stdout(&culprit("f.db", &["compare", "a", "b"], d));
    let said = format!(
        "the sides ran on different machine facts: a ran with 1 and {cpus} CPUs (its runs differ), b with {cpus};"
    );
    assert!(flat(&table).contains(&said), "{table}");
    // A command job resolves nothing from the CPU count: no workload is said.
    assert!(!flat(&table).contains("resolved to different workloads"), "{table}");
}

#[test]
fn qa48_1_bisect_check_and_try_fix_refuse_a_file_as_scratch_in_the_same_words() {
    let _machine = common::shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = common::make_slowdown_repo(dir.path(), 4, 2, 0, 60);
    common::work_patch(dir.path(), &repo, "fix.patch", 60, 0);
    let patch = dir.path().join("fix.patch");
    let file = common::write(dir.path(), "a-file", "");
    let (good, bad, file) = (&shas[0], &shas[3], file.to_str().unwrap());
    let tail = ["--run", "./bench", "--build", "make -s", "--scratch", file];
    // Check's errors exit with 128, which aborts `git bisect run` rather than marking the commit bad.
    let commands = [
        ([&["bisect", "--good", good, "--bad", bad, "--metric", "command.user_time"][..], &tail].concat(), 2),
        ([&["check", "--good", good, "--bad", bad][..], &tail].concat(), 128),
        ([&["try-fix", "--base", good, "--bad", bad, "--patch", patch.to_str().unwrap()][..], &tail].concat(), 2),
    ];
    // Each is refused, in the words `culprit run --scratch` has for it.
    let said = format!("--scratch {file}: this is a file, not a directory; give a directory you can write in");
    for (args, code) in commands {
        let out = culprit(dir.path().join("s.db"), &args, &repo);
        let refused = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {refused}");
        assert!(refused.contains(&said), "{args:?}: {refused}");
    }
}
