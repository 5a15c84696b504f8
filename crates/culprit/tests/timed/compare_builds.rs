//! `culprit compare` draws a table per build (lkp's rootfs, kconfig and compiler) as it draws one per machine: one
//! commit's runs of two kconfigs, from an lkp `/result` tree or from two `culprit run` job files that differ only in
//! `kconfig:`, are one job's (the build is no part of a job's id), and pooled they read as one side whose mean is
//! neither build's and whose spread is their difference.

use crate::common;

use crate::common::{culprit, stdout, write};
use serde_json::Value;
use std::path::Path;

const SHA_A: &str = "8cc621d2f45ddd3dc664024a647ee7adf48d79a5";
const SHA_B: &str = "1234567890abcdef1234567890abcdef12345678";
const ROOTFS: &str = "debian-12-x86_64-20240206.cgz";
const RHEL: &str = "x86_64-rhel-8.3";
const FUNC: &str = "x86_64-rhel-8.3-func";
const KEXEC: &str = "x86_64-kexec";

/// Writes lkp's runs of hackbench on one test box into `result` (lkp's `/result` layout): each kconfig's
/// throughput per commit, one run directory (stats.json and the finished job.yaml) per value.
fn lkp_tree(result: &Path, builds: &[(&str, &str, &[f64])]) {
    for (kconfig, sha, values) in builds {
        for (run, value) in values.iter().enumerate() {
            let levels = format!("hackbench/pipe-8-process-1600%/lkp-icl-2sp8/{ROOTFS}/{kconfig}/gcc-12/{sha}/{run}");
            let directory = result.join(&levels);
            std::fs::create_dir_all(&directory).unwrap();
            let mut stats = serde_json::json!({ "hackbench.throughput": value });
            // A metric of the -func build only, so that a --metric can match one build's runs and not the other's.
            if *kconfig == FUNC {
                stats["hackbench.func_only"] = serde_json::json!(run as f64);
            }
            std::fs::write(directory.join("stats.json"), stats.to_string()).unwrap();
            let job = format!(
                "suite: hackbench\ntestcase: hackbench\ncategory: benchmark\nnr_threads: 1600%\niterations: 4\n\
                 hackbench:\n  mode: process\n  ipc: pipe\ntestbox: lkp-icl-2sp8\ntbox_group: lkp-icl-2sp8\n\
                 rootfs: {ROOTFS}\nkconfig: {kconfig}\ncompiler: gcc-12\ncommit: {sha}\n\
                 result_root: \"/result/{levels}\"\njob_state: finished\n"
            );
            std::fs::write(directory.join("job.yaml"), job).unwrap();
        }
    }
}

/// The mean of `metric` at each side of a compare JSON table.
fn means(table: &Value, metric: &str) -> Vec<f64> {
    let rows = table["result"]["rows"].as_array().unwrap();
    let row = rows.iter().find(|r| r["metric"] == metric).unwrap_or_else(|| panic!("no {metric} row: {table}"));
    row["sides"].as_array().unwrap().iter().map(|side| side["mean"].as_f64().unwrap()).collect()
}

/// The value of `axis` in a compare JSON table's header.
fn axis<'a>(table: &'a Value, axis: &str) -> &'a str {
    let axes = table["result"]["axes"].as_array().unwrap();
    axes.iter().find(|a| a[0] == axis).and_then(|a| a[1].as_str()).unwrap_or_else(|| panic!("no {axis}: {table}"))
}

#[test]
fn an_lkp_trees_two_kconfigs_of_one_commit_are_two_tables_and_a_kconfig_of_one_commit_is_named() {
    let _machine = common::shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("result");
    // The -func kconfig runs at half the throughput of the other; each loses 10% from A to B. A third kconfig ran at
    // A only. Pooled, A's side was 750 ± 270: neither build's level, and a spread that hides the change.
    lkp_tree(
        &result,
        &[
            (RHEL, SHA_A, &[1000.0, 1010.0, 990.0]),
            (RHEL, SHA_B, &[900.0, 910.0, 890.0]),
            (FUNC, SHA_A, &[500.0, 505.0, 495.0]),
            (FUNC, SHA_B, &[450.0, 455.0, 445.0]),
            (KEXEC, SHA_A, &[700.0, 701.0, 702.0]),
        ],
    );
    let import = culprit("t.db", &["import", "result"], dir.path());
    let said = String::from_utf8_lossy(&import.stderr).into_owned() + &stdout(&import);
    assert!(said.contains("each build its own table") && !said.contains("one side"), "{said}");

    let out = culprit("t.db", &["compare", SHA_A, SHA_B, "--format", "json"], dir.path());
    let tables: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let tables = tables.as_array().unwrap();
    assert_eq!(tables.len(), 2, "{tables:?}");
    let kconfigs: Vec<&str> = tables.iter().map(|t| t["build"]["kconfig"].as_str().unwrap()).collect();
    assert_eq!(kconfigs, [RHEL, FUNC]);
    for (table, (kconfig, level)) in tables.iter().zip([(RHEL, [1000.0, 900.0]), (FUNC, [500.0, 450.0])]) {
        assert_eq!(means(table, "hackbench.throughput"), level, "{table}");
        // Each table's header names the build of its own runs.
        assert_eq!(axis(table, "kconfig"), kconfig, "{table}");
        assert_eq!((axis(table, "rootfs"), axis(table, "compiler")), (ROOTFS, "gcc-12"), "{table}");
        assert_eq!(table["build"]["rootfs"], ROOTFS, "{table}");
        let runs: Vec<u64> =
            table["result"]["columns"].as_array().unwrap().iter().map(|c| c["ok_runs"].as_u64().unwrap()).collect();
        assert_eq!(runs, [3, 3], "{table}");
        // One machine's job names it too, as every command's JSON names the machine (QA 45b).
        assert_eq!(table["machine"], axis(table, "tbox_group"), "{table}");
    }
    let warnings = String::from_utf8_lossy(&out.stderr);
    let left_out: Vec<&str> = warnings.lines().filter(|l| l.contains("left out")).collect();
    assert_eq!(left_out.len(), 1, "{warnings}");
    assert!(left_out[0].contains(KEXEC) && left_out[0].contains("did not run it at every revision"), "{warnings}");
    assert!(!left_out[0].contains(FUNC), "{warnings}");

    // The lkp table: one header per build, each naming its kconfig, in the order of the tables.
    let text = stdout(&culprit("t.db", &["compare", SHA_A, SHA_B], dir.path()));
    let headers: Vec<&str> = text.lines().filter(|l| l.ends_with("/lkp-icl-2sp8/hackbench")).collect();
    assert_eq!(headers.len(), 2, "{text}");
    assert!(headers[0].contains(&format!("/{RHEL}/")) && headers[1].contains(&format!("/{FUNC}/")), "{text}");
    // Markdown and CSV name each table by its build.
    let markdown = stdout(&culprit("t.db", &["compare", SHA_A, SHA_B, "--format", "markdown"], dir.path()));
    let titles: Vec<&str> = markdown.lines().filter(|l| l.starts_with("### ")).collect();
    assert_eq!(titles.len(), 2, "{markdown}");
    assert!(titles[0].ends_with(&format!("({ROOTFS}/{RHEL}/gcc-12)")), "{markdown}");
    assert!(titles[1].ends_with(&format!("({ROOTFS}/{FUNC}/gcc-12)")), "{markdown}");

    // A --metric that only one build's runs have: the other build's table is left out, named by its build.
    let only = culprit("t.db", &["compare", SHA_A, SHA_B, "--metric", "func_only", "--format", "json"], dir.path());
    let tables: Value = serde_json::from_str(&stdout(&only)).unwrap();
    assert_eq!(tables.as_array().unwrap().len(), 1, "{tables}");
    assert_eq!(tables[0]["build"]["kconfig"], FUNC, "{tables}");
    let warnings = String::from_utf8_lossy(&only.stderr);
    let unmatched: Vec<&str> = warnings.lines().filter(|l| l.contains("no metric of its runs matches")).collect();
    assert_eq!(unmatched.len(), 1, "{warnings}");
    assert!(unmatched[0].contains(&format!("({ROOTFS}/{RHEL}/gcc-12): no metric")), "{warnings}");

    // `report --compare` reads one build's runs too: the table it reports has 3 runs a side, at that build's level.
    let report = culprit("t.db", &["report", "--compare", SHA_A, SHA_B, "--format", "json"], dir.path());
    let mail: Value = serde_json::from_str(&stdout(&report)).unwrap();
    let columns = mail["report"]["comparison"]["columns"].as_array().unwrap();
    let runs: Vec<u64> = columns.iter().map(|c| c["ok_runs"].as_u64().unwrap()).collect();
    assert_eq!(runs, [3, 3], "{mail}");
    let rows = mail["report"]["comparison"]["rows"].as_array().unwrap();
    let row = rows.iter().find(|r| r["metric"] == "hackbench.throughput").unwrap();
    let level: Vec<f64> = row["sides"].as_array().unwrap().iter().map(|s| s["mean"].as_f64().unwrap()).collect();
    assert!(level == [1000.0, 900.0] || level == [500.0, 450.0], "{mail}");
    let chose = String::from_utf8_lossy(&report.stderr);
    assert!(chose.contains("2 jobs and builds ran at every revision") && chose.contains("/gcc-12)"), "{chose}");
}

/// A `command` job printing `ops: N`, N read in turn from the file `vals`, whose file sets `kconfig:` (when given).
fn ops_job(kconfig: Option<&str>) -> String {
    let kconfig = kconfig.map(|k| format!("kconfig: {k}\n")).unwrap_or_default();
    format!(
        "suite: x\ntestcase: x\n{kconfig}command:\n  cmd: 'n=$(cat n 2>/dev/null || echo 0); echo $((n + 1)) > n; \
         echo \"ops: $(sed -n \"$((n + 1))p\" vals)\"'\n  capture:\n    ops: 'ops: ([0-9.]+)'\n"
    )
}

#[test]
fn two_job_files_that_differ_only_in_kconfig_are_compared_build_by_build() {
    let _machine = common::shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let values = ["1000", "1010", "990", "900", "910", "890", "500", "505", "495", "450", "455", "445"];
    write(dir.path(), "vals", &(values.join("\n") + "\n"));
    write(dir.path(), "rhel.yaml", &ops_job(Some(RHEL)));
    write(dir.path(), "func.yaml", &ops_job(Some(FUNC)));
    let run = |file: &str, label: &str| {
        stdout(&culprit("r.db", &["run", file, "-n", "3", "--label", label, "--monitors", "none"], dir.path()));
    };
    run("rhel.yaml", "a");
    run("rhel.yaml", "b");
    // One build so far: one table, named as it always was, with no word of builds.
    let before = culprit("r.db", &["compare", "a", "b", "--format", "json"], dir.path());
    let tables: Value = serde_json::from_str(&stdout(&before)).unwrap();
    assert_eq!(tables.as_array().unwrap().len(), 1, "{tables}");
    assert!(tables[0].get("build").is_none(), "{tables}");
    assert_eq!(means(&tables[0], "command.ops"), [1000.0, 900.0], "{tables}");
    assert!(!String::from_utf8_lossy(&before.stderr).contains("build"), "{before:?}");

    run("func.yaml", "a");
    run("func.yaml", "b");
    let out = culprit("r.db", &["compare", "a", "b", "--format", "json"], dir.path());
    let tables: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let tables = tables.as_array().unwrap();
    assert_eq!(tables.len(), 2, "{tables:?}");
    // Both files are one job: the kconfig is no part of its id.
    assert_eq!(tables[0]["job_id"], tables[1]["job_id"]);
    for (table, (kconfig, level)) in tables.iter().zip([(RHEL, [1000.0, 900.0]), (FUNC, [500.0, 450.0])]) {
        assert_eq!(table["build"]["kconfig"], kconfig, "{table}");
        assert_eq!(table["build"]["compiler"], "", "{table}");
        assert_eq!(axis(table, "kconfig"), kconfig, "{table}");
        assert_eq!(means(table, "command.ops"), level, "{table}");
    }
    assert!(!String::from_utf8_lossy(&out.stderr).contains("left out"), "{out:?}");

    // track reads a series per build too: each has its own 6 runs in 2 points (too few to split, which it says),
    // not the 12 of both.
    let history: Value = serde_json::from_str(&stdout(&culprit("r.db", &["track", "--json"], dir.path()))).unwrap();
    let notes: Vec<&str> = history["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    for kconfig in [RHEL, FUNC] {
        let of_build: Vec<&&str> = notes.iter().filter(|n| n.contains(&format!("({kconfig}) on "))).collect();
        assert_eq!(of_build.len(), 1, "{notes:?}");
        assert!(of_build[0].contains("6 usable run(s) in 2 point(s)"), "{notes:?}");
    }
}

#[test]
fn a_bisects_mail_reads_the_runs_of_its_own_build() {
    // A bisect's runs are of its job's build. Runs of the same job on the same machine at the same commits, of
    // another kconfig (an lkp tree imported into the store), ten times slower, must not enter its mail's table.
    let _machine = common::quiet_machine();
    let (dir, repo, shas, db) = common::slowdown(5, 3, 99);
    let repo_arg = repo.to_str().unwrap();
    let bisect = ["bisect", "--repo", repo_arg, "--good", &shas[0], "--bad", &shas[4], "--run", "./bench"];
    let options = ["--build", "make -s", "--metric", "command.user_time"];
    stdout(&culprit(&db, &[&bisect[..], &options].concat(), dir.path()));
    stdout(&culprit(&db, &["report", "1", "-o", "mail"], dir.path()));
    let before = stdout(&culprit(&db, &["report", "1"], dir.path()));
    assert!(before.contains("regression of command.user_time"), "{before}");
    let results: Value = serde_json::from_str(&stdout(&culprit(&db, &["results", "--json"], dir.path()))).unwrap();
    let here = results[0]["machine"].as_str().unwrap().to_string();
    // The bisect's job, of another kconfig, as this machine's lkp runs: the job's id leaves kconfig out.
    let job = std::fs::read_to_string(dir.path().join("mail/job.yaml")).unwrap() + &format!("kconfig: {FUNC}\n");
    for sha in &shas {
        for n in 0..5 {
            let run = dir.path().join(format!("other/bisect-run/x/{here}/{sha}/{n}"));
            std::fs::create_dir_all(&run).unwrap();
            let stats = format!("{{\"command.elapsed_time\": 10.{n}, \"command.user_time\": 10.{n}}}");
            std::fs::write(run.join("stats.json"), stats).unwrap();
            std::fs::write(run.join("job.yaml"), &job).unwrap();
        }
    }
    let imported = stdout(&culprit(&db, &["import", "other"], dir.path()));
    assert!(imported.contains(&format!("imported {} run(s)", 5 * shas.len())), "{imported}");
    // They are the bisect's job, on its machine: pooled, they would be in its table.
    let listed: Value = serde_json::from_str(&stdout(&culprit(&db, &["results", "--json"], dir.path()))).unwrap();
    let groups = listed.as_array().unwrap();
    assert!(groups.iter().all(|g| g["job_id"] == results[0]["job_id"] && g["machine"] == here.as_str()), "{listed}");
    let after = stdout(&culprit(&db, &["report", "1"], dir.path()));
    assert_eq!(before, after);
}
