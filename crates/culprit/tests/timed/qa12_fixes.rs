//! End-to-end regressions of the twelfth QA pass: run, compare, report, the store and bad input, used as a kernel
//! performance engineer would use them.

use crate::common;

use crate::common::{culprit, stdout};

/// The ok runs `culprit results --json` counts in the store `db`, over every job and revision.
fn ok_runs(db: &str, dir: &std::path::Path) -> u64 {
    let listing: serde_json::Value = serde_json::from_str(&stdout(&culprit(db, &["results", "--json"], dir))).unwrap();
    listing.as_array().unwrap().iter().map(|row| row["ok_runs"].as_u64().unwrap()).sum()
}

#[test]
fn qa12_importing_the_result_root_a_run_wrote_does_not_store_its_runs_twice() {
    let _machine = common::shared_machine();
    // `culprit run --result-root DIR` stores each run and writes it into DIR. Importing DIR into the same store
    // (to be sure it is all there, or from a script that imports every root it finds) stored every run a second
    // time, although a second import of a root stores nothing: the label then held 4 runs of 2, and compare read
    // the copies as independent runs, with a %stddev and a p-value of runs that were never taken.
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "job.yaml", "suite: qa\ntestcase: qa\ncommand:\n  cmd: 'true'\n");
    let run = ["run", "job.yaml", "-n", "2", "--label", "a", "--monitors", "none", "--result-root", "root"];
    stdout(&culprit("t.db", &run, dir.path()));
    assert_eq!(ok_runs("t.db", dir.path()), 2);
    let text = stdout(&culprit("t.db", &["import", "root"], dir.path()));
    assert!(text.contains("imported 0 run(s)") && text.contains("2 already stored"), "{text}");
    assert_eq!(ok_runs("t.db", dir.path()), 2);
    // Another store has none of them, so they are imported there, once.
    stdout(&culprit("other.db", &["import", "root"], dir.path()));
    stdout(&culprit("other.db", &["import", "root"], dir.path()));
    assert_eq!(ok_runs("other.db", dir.path()), 2);
}

#[test]
fn qa12_results_json_gives_the_ids_of_runs_that_succeeded() {
    let _machine = common::shared_machine();
    // `results --run ID` says its ids are "the ones `--failures` lists and `--json` gives", and compare's and the
    // report's notes on perf send the reader to `culprit results --run ID` for profiling runs that succeeded; but
    // `results --json` gave no run id at all, so a successful run's id could only be guessed.
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "job.yaml", "suite: qa\ntestcase: qa\ncommand:\n  cmd: 'echo hello-from-the-run'\n");
    stdout(&culprit("t.db", &["run", "job.yaml", "-n", "2", "--label", "a", "--monitors", "none"], dir.path()));
    let listing: serde_json::Value =
        serde_json::from_str(&stdout(&culprit("t.db", &["results", "--json"], dir.path()))).unwrap();
    let ids = listing[0]["run_ids"].as_array().unwrap_or_else(|| panic!("{listing}"));
    assert_eq!(ids.len(), 2, "{listing}");
    for id in ids {
        let shown = stdout(&culprit("t.db", &["results", "--run", &id.to_string()], dir.path()));
        assert!(shown.contains("hello-from-the-run") && shown.contains("label:a"), "{shown}");
    }
}

#[test]
fn qa12_a_param_no_program_takes_is_answered_with_the_names_the_program_takes() {
    let _machine = common::shared_machine();
    // lkp's sysbench-memory job names its params `mem_blk_size` and `mem_operation`; sysbench's own options are
    // `--memory-block-size` and `--memory-oper`. A job written from sysbench's names was refused with "sysbench has
    // no param 'memory_block_size'; remove it or fix its name", which named neither the right names nor where to
    // find them (the program's module in the source).
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "mem.yaml", "suite: x\nsysbench-memory:\n  memory_block_size: 1k\n");
    let err = common::refused(&culprit("t.db", &["run", "mem.yaml"], dir.path()));
    // (The hash as written since QA 59, which names the sysbench test.)
    assert!(err.contains("mem.yaml:3: sysbench-memory has no param 'memory_block_size'"), "{err}");
    assert!(err.contains("sysbench-memory takes: nr_threads, runtime, nr_processes, mem_blk_size,"), "{err}");
    assert!(!err.contains("cpu_max_prime"), "another sysbench test's params: {err}");
    common::write(dir.path(), "fio.yaml", "suite: x\nfio-setup-basic:\n  blocksize: 4k\nfio:\n");
    let err = common::refused(&culprit("t.db", &["run", "fio.yaml"], dir.path()));
    let named = err.contains("fio-setup-basic has no param 'blocksize'");
    assert!(named && err.contains("fio takes: rw, bs, ioengine,"), "{err}");
    // A name near enough to one it takes is still answered with that one alone.
    common::write(dir.path(), "hb.yaml", "suite: x\nhackbench:\n  loop: 4\n");
    let err = common::refused(&culprit("t.db", &["run", "hb.yaml"], dir.path()));
    assert!(err.contains("did you mean 'loops'?") && !err.contains("takes:"), "{err}");
}

#[test]
fn qa12_track_outside_the_repository_of_a_store_of_commits_asks_for_the_repository_with_metric_too() {
    let _machine = common::shared_machine();
    // Outside a repository `culprit track` tracks labels; a store whose runs are all at commits has none, and
    // `culprit track` asked for the repository. With --metric it said instead "--metric command.elapsed_time
    // matches no metric of the runs; they have command.elapsed_time, ...", contradicting itself.
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git").current_dir(&repo).args(args).output().unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    git(&["init", "-q"]);
    git(&["-c", "user.name=qa", "-c", "user.email=qa@example.invalid", "commit", "-q", "--allow-empty", "-m", "one"]);
    common::write(&repo, "job.yaml", "suite: qa\ntestcase: qa\ncommand:\n  cmd: 'true'\n");
    let db = dir.path().join("t.db");
    let db = db.to_str().unwrap();
    stdout(&culprit(db, &["run", "job.yaml", "-n", "3", "--monitors", "none"], &repo));
    let err = common::refused(&culprit(db, &["track", "--metric", "command.elapsed_time"], dir.path()));
    assert!(err.contains("is not inside a git repository: give the repository with --repo DIR"), "{err}");
    assert!(!err.contains("matches no metric"), "{err}");
}

/// Copies the result-root tree `from` to `to` as another machine's runs: without the keys that name the runs
/// stored from it, which would make the copies the same runs.
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else if entry.file_name() != "culprit-import-key" {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Runs the command job `job` (testcase qa) `runs` times at labels a and b on this machine into the result root
/// `root` of `dir`, and copies each of its params' runs to `other` as machine box2's (not imported, so that a test
/// can change them first). Returns this machine's name.
fn runs_of_two_machines(dir: &std::path::Path, job: &str, runs: &str) -> String {
    common::write(dir, "job.yaml", job);
    for label in ["a", "b"] {
        let run = ["run", "job.yaml", "-n", runs, "--label", label, "--monitors", "none", "--result-root", "root"];
        stdout(&culprit("t.db", &run, dir));
    }
    let mut here = String::new();
    for params in std::fs::read_dir(dir.join("root/qa")).unwrap().flatten() {
        let host = std::fs::read_dir(params.path()).unwrap().flatten().next().unwrap();
        here = host.file_name().to_str().unwrap().to_string();
        copy_tree(&host.path(), &dir.join("other/qa").join(params.file_name()).join("box2"));
    }
    here
}

#[test]
fn qa12_compare_draws_one_table_per_machine_rather_than_pooling_a_farms_machines() {
    let _machine = common::shared_machine();
    // A farm's store (one PostgreSQL store for several test machines) holds a job's runs at each revision from every
    // machine that ran it. compare pooled them into one table under the first machine's name: "3 vs 3 runs" of this
    // machine became 6 vs 6 of two machines, whose difference read as noise (or as the change). lkp's tables are each
    // of one tbox_group.
    let dir = tempfile::tempdir().unwrap();
    // The same runs as another machine's, imported: the root's machine level renamed.
    let here = runs_of_two_machines(dir.path(), "suite: qa\ntestcase: qa\ncommand:\n  cmd: 'true'\n", "3");
    stdout(&culprit("t.db", &["import", "other"], dir.path()));
    let text = stdout(&culprit("t.db", &["compare", "a", "b", "--format", "json"], dir.path()));
    let tables: serde_json::Value = serde_json::from_str(&text).unwrap();
    let tables = tables.as_array().unwrap();
    let mut machines: Vec<&str> = tables.iter().map(|t| t["machine"].as_str().unwrap_or("-")).collect();
    machines.sort_unstable();
    let mut expected = vec!["box2", here.as_str()];
    expected.sort_unstable();
    assert_eq!(machines, expected, "{text}");
    for table in tables {
        let columns = table["result"]["columns"].as_array().unwrap();
        let runs: Vec<u64> = columns.iter().map(|c| c["ok_runs"].as_u64().unwrap()).collect();
        assert_eq!(runs, [3, 3], "{table}");
        let axes = table["result"]["axes"].as_array().unwrap();
        let tbox_group = axes.iter().find(|axis| axis[0] == "tbox_group").unwrap_or_else(|| panic!("{table}"));
        assert_eq!(tbox_group[1], table["machine"], "{table}");
    }
}

#[test]
fn qa12_a_bisects_report_reads_the_runs_of_its_own_machine() {
    // On a farm's store, every machine that follows a branch measures the same commits. The mail of one machine's
    // bisect read every machine's runs at the culprit and its parent: another machine's runs at its own level
    // (here 10 s against 0.05 s) turned "38.5% regression" into "0.2% non-significant change" with ±99% a side.
    // The bisect reads user time: the wall time of a machine loaded by other work (a parallel build beside the
    // tests) measured the 30% slowdown as "8.8% non-significant" in the mail once, which is not what this tests.
    let _machine = common::quiet_machine();
    let (dir, repo, shas, db) = common::slowdown(5, 3, 99);
    let repo_arg = repo.to_str().unwrap();
    let bisect = ["bisect", "--repo", repo_arg, "--good", &shas[0], "--bad", &shas[4], "--run", "./bench"];
    let options = ["--build", "make -s", "--metric", "command.user_time"];
    stdout(&culprit(&db, &[&bisect[..], &options].concat(), dir.path()));
    stdout(&culprit(&db, &["report", "1", "-o", "mail"], dir.path()));
    let before = stdout(&culprit(&db, &["report", "1"], dir.path()));
    // The session's own change: a regression, or, when one of the parent's user times under CI's load read 50% off
    // and left the confirmation's 6 runs a side short of compare's significance (session 57's CI: +14.6%), the
    // change the bisect confirmed. What this test is about is that box2's runs below change neither.
    let own = ["regression of command.user_time", "the bisect confirmed a"];
    assert!(own.iter().any(|words| before.contains(words)), "{before}");
    // Another machine's runs of the same job at every commit, as an lkp result root of machine box2.
    let job = std::fs::read_to_string(dir.path().join("mail/job.yaml")).unwrap();
    for sha in &shas {
        for n in 0..5 {
            let run = dir.path().join(format!("other/bisect-run/x/box2/{sha}/{n}"));
            std::fs::create_dir_all(&run).unwrap();
            let stats = format!("{{\"command.elapsed_time\": 10.{n}, \"command.user_time\": 10.{n}}}");
            std::fs::write(run.join("stats.json"), stats).unwrap();
            std::fs::write(run.join("job.yaml"), &job).unwrap();
        }
    }
    let imported = stdout(&culprit(&db, &["import", "other"], dir.path()));
    assert!(imported.contains(&format!("imported {} run(s)", 5 * shas.len())), "{imported}");
    let after = stdout(&culprit(&db, &["report", "1"], dir.path()));
    // The same mail, but its `culprit compare` lines now name the session's machine, as the store holds box2's runs
    // of the same commits too, and pasted without it they would print box2's table beside this one (QA 45b).
    let machine = after.split(" --machine ").nth(1).and_then(|rest| rest.split_whitespace().next());
    let machine = machine.unwrap_or_else(|| panic!("{after}"));
    assert_ne!(machine, "box2", "{after}");
    assert_eq!(after.matches(&format!(" --machine {machine} ")).count(), 2, "{after}");
    assert_eq!(before, after.replace(&format!(" --machine {machine}"), ""));
}

#[test]
fn qa12_report_compare_reads_one_machines_runs_and_takes_machine() {
    let _machine = common::shared_machine();
    // The mail of `report --compare` pooled the machines as compare did: its table had 6 runs a side of two
    // machines, and a change on one machine was averaged with the other's runs.
    let dir = tempfile::tempdir().unwrap();
    let here = runs_of_two_machines(dir.path(), "suite: qa\ntestcase: qa\ncommand:\n  cmd: 'true'\n", "3");
    // Below the machine, lkp's rootfs, kconfig and compiler levels (this machine's, as `culprit run` names them).
    let mut box2 = dir.path().join("other/qa/true/box2");
    for _build_level in 0..3 {
        box2 = std::fs::read_dir(&box2).unwrap().flatten().next().unwrap().path();
    }
    // On box2, b takes ten seconds longer than a. (Ten times as long, a few milliseconds, once failed the first
    // assertion under the load of the timed tests running in parallel: the 3 runs a side of `true` read noisy
    // enough on either machine that which change was the strongest was left to chance.)
    for run in std::fs::read_dir(box2.join("b")).unwrap().flatten().filter(|e| e.path().is_dir()) {
        let stats = run.path().join("stats.json");
        let mut values: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
        values["command.elapsed_time"] = serde_json::json!(values["command.elapsed_time"].as_f64().unwrap() + 10.0);
        std::fs::write(&stats, values.to_string()).unwrap();
    }
    stdout(&culprit("t.db", &["import", "other"], dir.path()));
    let report = |extra: &[&str]| -> serde_json::Value {
        let args = [&["report", "--compare", "a", "b", "--format", "json"][..], extra].concat();
        serde_json::from_str(&stdout(&culprit("t.db", &args, dir.path()))).unwrap()
    };
    let columns = |mail: &serde_json::Value| -> Vec<u64> {
        let columns = mail["report"]["comparison"]["columns"].as_array().unwrap();
        columns.iter().map(|c| c["ok_runs"].as_u64().unwrap()).collect()
    };
    let strongest = report(&[]);
    assert_eq!(strongest["report"]["machine"], "box2", "{strongest}");
    assert_eq!(columns(&strongest), [3, 3], "{strongest}");
    assert!(strongest["subject"].as_str().unwrap().contains("command.elapsed_time"), "{strongest}");
    let chosen = report(&["--machine", &here]);
    assert_eq!(chosen["report"]["machine"], here.as_str(), "{chosen}");
    assert_eq!(columns(&chosen), [3, 3], "{chosen}");
}

#[test]
fn qa12_compare_takes_json_as_results_bisect_and_track_do() {
    let _machine = common::shared_machine();
    // `culprit results --json`, `bisect --json` and `track --json` print JSON; `compare --json` was refused with
    // clap's "unexpected argument '--json' found; tip: a similar argument exists: '--job'", a tip that misleads.
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "job.yaml", "suite: qa\ntestcase: qa\ncommand:\n  cmd: 'true'\n");
    for label in ["a", "b"] {
        stdout(&culprit("t.db", &["run", "job.yaml", "-n", "3", "--label", label, "--monitors", "none"], dir.path()));
    }
    let json = stdout(&culprit("t.db", &["compare", "a", "b", "--json", "--all"], dir.path()));
    let format = stdout(&culprit("t.db", &["compare", "a", "b", "--format", "json", "--all"], dir.path()));
    assert_eq!(json, format);
    assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok(), "{json}");
}

#[test]
fn qa12_compare_by_on_a_farms_runs_asks_for_one_machine() {
    let _machine = common::shared_machine();
    // The scaling view pooled a farm's machines as the table did: each point of the curve was the mean of every
    // machine's runs at it. It now names the machines and asks for one with --machine, as a curve is one machine's.
    let dir = tempfile::tempdir().unwrap();
    runs_of_two_machines(dir.path(), "suite: qa\ntestcase: qa\ncommand:\n  cmd: ['true', ':']\n", "2");
    let csv = stdout(&culprit("t.db", &["compare", "a", "b", "--by", "cmd", "--format", "csv"], dir.path()));
    assert!(!csv.is_empty());
    // The same runs as another machine's, imported.
    stdout(&culprit("t.db", &["import", "other"], dir.path()));
    let err = common::refused(&culprit("t.db", &["compare", "a", "b", "--by", "cmd"], dir.path()));
    assert!(err.contains("ran on 2 machines (") && err.contains("box2") && err.contains("--machine"), "{err}");
    let one = ["compare", "a", "b", "--by", "cmd", "--format", "csv", "--machine", "box2"];
    assert_eq!(stdout(&culprit("t.db", &one, dir.path())), csv, "box2's runs are copies of this machine's");
}

#[test]
fn qa12_a_name_that_is_both_a_label_and_a_tag_with_runs_is_said_to_read_the_label() {
    let _machine = common::shared_machine();
    // `compare v1 other` in a repository whose tag v1 has runs, in a store that also holds runs labelled v1, read
    // the label's runs without a word: the user who meant the tagged commit got another set of runs' table.
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git").args(args).current_dir(dir.path()).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["init", "-q"]);
    git(&["-c", "user.name=qa", "-c", "user.email=qa@example.com", "commit", "-q", "--allow-empty", "-m", "one"]);
    git(&["tag", "v1"]);
    common::write(dir.path(), "job.yaml", "suite: qa\ntestcase: qa\ncommand:\n  cmd: 'true'\n");
    for revision in [["--commit", "v1"], ["--label", "v1"], ["--label", "other"]] {
        let run = ["run", "job.yaml", "-n", "2", revision[0], revision[1], "--monitors", "none"];
        stdout(&culprit("t.db", &run, dir.path()));
    }
    let out = culprit("t.db", &["compare", "v1", "other"], dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("'v1' is a stored label and, in this repository, commit"), "{stderr}");
    assert!(stderr.contains("with runs of its own; this reads the label's runs (give the commit's SHA"), "{stderr}");
    // A label that names no commit here is read without a note.
    let out = culprit("t.db", &["compare", "other", "v1"], dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("is a stored label").count(), 1, "{stderr}");
}
