//! End-to-end regressions of the forty-fifth QA pass: try-fix's metric without --metric, job names that two
//! different jobs shared, and lkp's seven levels in the result root `culprit run` writes.

use crate::common;

use crate::common::culprit;

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
    assert!(text.contains(&format!("\nfixed: {metric} is back to the base")), "{all}");
    assert_eq!(out.status.code(), Some(0), "{all}");
    // The judged row is a regression in the table above the verdict.
    let row = text.lines().find(|l| l.trim_end().ends_with(metric)).unwrap_or_else(|| panic!("{all}"));
    assert!(row.contains("+"), "{row}\n{all}");
}

#[test]
fn qa45_two_command_jobs_cut_at_31_characters_have_names_of_their_own_and_old_runs_stay_with_their_job() {
    let _machine = common::shared_machine();
    // Two command jobs whose commands differ past lkp's 31 characters were both `fl-bash_-c__echo_ops:____RANDOM%10`
    // in `results`, in compare's messages and tables, and `--job` could not pick one.
    use culprit_store::{SqliteStore, Store};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let job = |add: u32| {
        let capture = "  capture:\n    ops: \"ops: ([0-9]+)\"\n";
        format!("suite: fl\ncommand:\n  cmd: \"bash -c 'echo ops: $((RANDOM%100+{add}))'\"\n{capture}")
    };
    for (add, label) in [(1000, "a"), (900, "b")] {
        std::fs::write(dir.path().join("fl.yaml"), job(add)).unwrap();
        let run = ["run", "fl.yaml", "-n", "3", "--label", label, "--monitors", "none"];
        common::stdout(&culprit(&db, &run, dir.path()));
    }
    let listing = common::stdout(&culprit(&db, &["results"], dir.path()));
    let name_at = |listing: &str, label: &str| {
        let line = listing.lines().find(|l| l.contains(&format!(" label:{label} "))).unwrap_or_default();
        line.split("  ").next().unwrap_or_default().trim().to_string()
    };
    let (a, b) = (name_at(&listing, "a"), name_at(&listing, "b"));
    assert!(a.starts_with("fl-bash_-c__echo_ops:____RANDOM%10~") && a.len() == 43, "{listing}");
    assert!(b.starts_with("fl-bash_-c__echo_ops:____RANDOM%10~") && a != b, "{listing}");
    // --job picks one of them by its name.
    let only_a = common::stdout(&culprit(&db, &["results", "--job", &a], dir.path()));
    assert!(only_a.contains(" label:a ") && !only_a.contains(" label:b "), "{only_a}");

    // A store written before the rule holds job a's runs under the old name: the new name still finds them, and
    // compare reads them with the new ones as one job.
    let old = "fl-bash_-c__echo_ops:____RANDOM%10";
    let mut store = SqliteStore::open(&db).unwrap();
    let runs = store.list_runs(&culprit_store::RunFilter::default()).unwrap();
    for run in runs.iter().filter(|r| r.job_name == a).take(3) {
        let mut record = store.run(run.id).unwrap();
        record.job_name = old.to_string();
        record.revision = culprit_core::model::Revision::Label { name: "old".into() };
        store.save_run(&record).unwrap();
    }
    drop(store);
    let only_a = common::stdout(&culprit(&db, &["results", "--job", &a], dir.path()));
    assert!(only_a.contains(" label:old ") && only_a.contains(" label:a "), "{only_a}");
    let table = common::stdout(&culprit(&db, &["compare", "old", "a", "--job", &a, "--all"], dir.path()));
    assert!(table.contains("command.ops"), "{table}");
    // With the old name shared by two jobs in view (b's runs stored under it too), each is told apart by its id.
    let mut store = SqliteStore::open(&db).unwrap();
    let runs = store.list_runs(&culprit_store::RunFilter::default()).unwrap();
    let b_run = runs.iter().find(|r| r.job_name == b).unwrap();
    let mut record = store.run(b_run.id).unwrap();
    record.job_name = old.to_string();
    record.revision = culprit_core::model::Revision::Label { name: "old-b".into() };
    store.save_run(&record).unwrap();
    drop(store);
    let listing = common::stdout(&culprit(&db, &["results", "--job", old], dir.path()));
    let (old_a, old_b) = (name_at(&listing, "old"), name_at(&listing, "old-b"));
    assert!(old_a.starts_with(&format!("{old} (job ")) && old_b.starts_with(&format!("{old} (job ")), "{listing}");
    assert_ne!(old_a, old_b, "{listing}");
    // The id the message shows picks the job.
    let short = old_b.trim_end_matches(')').rsplit(' ').next().unwrap().to_string();
    let only_b = common::stdout(&culprit(&db, &["results", "--job", &short], dir.path()));
    assert!(only_b.contains(" label:old-b ") && !only_b.contains(" label:old "), "{only_b}");
}

#[test]
fn qa45_a_job_files_commit_stays_out_of_the_stored_job_name() {
    let _machine = common::shared_machine();
    // An lkp job.yaml names its commit; lkp's split-job appends it to file names, and `culprit run` stored it in the
    // job's name (`...-tb-0x5003006-8cc621d2f...`), a name per commit for one job, while `culprit import` did not.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let sha = "8cc621d2f45ddd3dc664024a647ee7adf48d79a5";
    let job = format!("suite: cj\nucode: '0x5003006'\ncommit: {sha}\ncommand:\n  cmd: echo 1\n");
    std::fs::write(dir.path().join("cj.yaml"), job).unwrap();
    let run = ["run", "cj.yaml", "-n", "1", "--label", "x", "--monitors", "none"];
    common::stdout(&culprit(&db, &run, dir.path()));
    let listing = common::stdout(&culprit(&db, &["results"], dir.path()));
    let line = listing.lines().find(|l| l.contains(" label:x ")).unwrap_or_else(|| panic!("{listing}"));
    // ucode, the test box's microcode, is left out of names as lkp's split-job leaves it out (QA 47).
    assert!(line.starts_with("cj-echo_1 "), "{listing}");
    assert!(!listing.contains("8cc621d2"), "{listing}");
}

/// The run directories under `root`: every directory holding a `stats.json`, sorted.
fn run_directories(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(root).unwrap().flatten() {
        let path = entry.path();
        if path.join("stats.json").is_file() {
            found.push(path);
        } else if path.is_dir() {
            found.extend(run_directories(&path));
        }
    }
    found.sort();
    found
}

#[test]
fn qa45_8d_result_root_is_in_lkps_seven_levels_and_imports_from_a_copy() {
    let _machine = common::shared_machine();
    // `culprit run --result-root DIR` wrote `<testcase>/<path_params>/<host>/<revision>/<run>`, four levels where
    // lkp's tools (and its own result paths) have seven: rootfs, kconfig and compiler sit between box and commit.
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: qa\ntestcase: qa\nkconfig: x86_64-rhel-9.4\ncommand:\n  cmd: \"echo ops: 7\"\n  \
               capture:\n    ops: 'ops: ([0-9]+)'\n";
    common::write(dir.path(), "job.yaml", job);
    let run = ["run", "job.yaml", "-n", "2", "--label", "base", "--monitors", "none", "--result-root", "rr"];
    common::stdout(&culprit("a.db", &run, dir.path()));
    let runs = run_directories(&dir.path().join("rr"));
    assert_eq!(runs.len(), 2, "{runs:?}");
    let levels: Vec<String> = runs[0]
        .strip_prefix(dir.path().join("rr"))
        .unwrap()
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    assert_eq!(levels.len(), 8, "{levels:?}");
    assert_eq!((levels[0].as_str(), levels[6].as_str(), levels[7].as_str()), ("qa", "base", "0"), "{levels:?}");
    // The job's own kconfig; the rootfs and compiler this machine's, as lkp's local runs name them.
    let os_id = std::fs::read_to_string("/etc/os-release")
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix("ID=").map(|id| id.trim_matches('"').to_string()))
        .unwrap();
    assert_eq!((levels[3].as_str(), levels[4].as_str()), (os_id.as_str(), "x86_64-rhel-9.4"), "{levels:?}");
    assert!(levels[5].starts_with("gcc"), "{levels:?}");
    // Each run's job.yaml records its place as lkp's do (and, after it, its times and machine: QA 57).
    let job_yaml = std::fs::read_to_string(runs[0].join("job.yaml")).unwrap();
    let recorded = format!("\nresult_root: \"{}\"\n", std::fs::canonicalize(&runs[0]).unwrap().display());
    assert!(job_yaml.contains(&recorded) && job_yaml.contains("\nnr_cpu: \""), "{job_yaml}");

    // A copy of the tree in another directory (a farm collecting its machines' roots) imports into another store with
    // the job, machine, commit and build of the runs, and without the result_root Culprit added to the job.
    std::fs::create_dir_all(dir.path().join("collected")).unwrap();
    std::fs::rename(dir.path().join("rr"), dir.path().join("collected/box")).unwrap();
    common::stdout(&culprit("b.db", &["import", "collected/box/qa"], dir.path()));
    let listed = common::stdout(&culprit("b.db", &["results", "--json"], dir.path()));
    let rows: serde_json::Value = serde_json::from_str(&listed).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 1, "{listed}");
    let here = common::stdout(&culprit("a.db", &["results", "--json"], dir.path()));
    let original: serde_json::Value = serde_json::from_str(&here).unwrap();
    for field in ["job_id", "hostname", "revision", "runs"] {
        assert_eq!(rows[0][field], original[0][field], "{field}: {listed}\n{here}");
    }
    let shown = common::stdout(&culprit("b.db", &["results", "--run", "1"], dir.path()));
    assert!(!shown.contains("result_root"), "{shown}");
}
