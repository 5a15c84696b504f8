//! End-to-end regressions of QA pass 47: the job files current lkp-tests writes (`lkp split-job` outputs, the
//! job.yaml of a robot's report, checked in under crates/culprit-job/tests/data/lkp-jobs) split, pass `culprit run`'s
//! checks, and meet the same job run by `culprit run` when imported.

use crate::common;

use crate::common::{culprit, stdout};
use std::path::{Path, PathBuf};

/// One of lkp's job files checked in as a test input.
fn lkp_job(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../culprit-job/tests/data/lkp-jobs").join(name)
}

/// `culprit split` of one of lkp's job files into `dir/out`: the names of the files it wrote and its standard error,
/// or the refusal.
fn split(name: &str, dir: &Path) -> Result<(Vec<String>, String), String> {
    let out_dir = dir.join("out");
    let _ = std::fs::remove_dir_all(&out_dir);
    let job = lkp_job(name);
    let out = culprit("t.db", &["split", job.to_str().unwrap(), "-o", out_dir.to_str().unwrap()], dir);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err(err);
    }
    let mut written: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    Ok((written, err))
}

/// The keys lkp pastes into every job it splits that Culprit refused (QA 47 D1).
const LKP_KEYS: &[&str] = &["cpu_info", "bios_version", "ssh_base_port", "bisect_dmesg", "perf-c2c", "debug_mode"];

#[test]
fn qa47_lkp_split_job_outputs_and_a_robot_job_yaml_split_and_pass_runs_checks() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str)] = &[
        ("sysbench-cpu-split-lkp-skl-d01.yaml", "sysbench-cpu-20000-100%-300s.yaml"),
        ("sysbench-cpu-split-vm-snb.yaml", "sysbench-cpu-20000-100%-300s.yaml"),
        (
            "fio-basic-2pmem-split-io_uring.yaml",
            // Named after its job_origin, as the split-job output it is: lkp's own file name.
            "fio-basic-2pmem-104G_8G-104G_132G-4k-tune-2pmem-ext4-io_uring-dax-8-300s-write-190G-tb-\
             8cc621d2f45ddd3dc664024a647ee7adf48d79a5-debian-10.4-x86_64-20200603.cgz.yaml",
        ),
        (
            "stress-ng-report-2022.yaml",
            "stress-ng-report-2022-filesystem-performance-1HDD-xfs-10%-xattr-60s-\
             016a23388cdcb2740deb1379dc408f21c84efb11-debian-11.1-x86_64-20220510.cgz.yaml",
        ),
    ];
    for (file, written) in cases {
        let (names, _) = split(file, dir.path()).unwrap_or_else(|err| panic!("{file}: {err}"));
        assert_eq!(names, vec![written.to_string()], "{file}");
        // `culprit run` outside a repository checks the whole job and then stops for want of a commit: reaching that
        // point is passing its checks. A benchmark this machine lacks is the machine's concern, not the file's.
        let job = lkp_job(file);
        let out = culprit("r.db", &["run", "-n", "1", "--commit", "deadbeef", job.to_str().unwrap()], dir.path());
        let err = common::refused(&out);
        assert!(err.contains("is not inside a git repository") || err.contains("is not installed"), "{file}: {err}");
        for key in LKP_KEYS {
            assert!(!err.contains(key), "{file}: {key}: {err}");
        }
    }
}

#[test]
fn qa47_an_lkp_program_job_gets_one_line_that_says_so() {
    // The second line, "the job selects no benchmark program; add a key naming one of ...", contradicted the first.
    let dir = tempfile::tempdir().unwrap();
    let job = lkp_job("unixbench.yaml");
    let err = common::refused(&culprit("r.db", &["run", "-n", "1", "--label", "a", job.to_str().unwrap()], dir.path()));
    assert!(err.contains("'unixbench' is an lkp program that culprit run does not run"), "{err}");
    assert!(!err.contains("selects no benchmark program"), "{err}");
    // split writes every job of both documents, as lkp's split-job does: 29 tests, then execl.
    let (names, warned) = split("unixbench.yaml", dir.path()).unwrap();
    assert_eq!(names.len(), 30, "{names:?}");
    assert!(names.contains(&"unixbench-100%-300s-execl.yaml".to_string()), "{names:?}");
    assert!(warned.contains("written for lkp to run"), "{warned}");
}

#[test]
fn qa47_hackbench_refusals_name_their_cause() {
    let dir = tempfile::tempdir().unwrap();
    // Several copies of hackbench in sibling cgroups: nr_instances is what Culprit cannot do.
    let job = lkp_job("hackbench-cgroup2-fairness.yaml");
    let err = common::refused(&culprit("r.db", &["run", "-n", "1", "--label", "a", job.to_str().unwrap()], dir.path()));
    assert!(err.contains("'nr_instances' = '2'") && err.contains("Culprit runs one per run"), "{err}");
    assert!(!err.contains("not used by any selected program"), "{err}");
    // lkp's cgroup v1 setup is recorded and not applied, as cgroup2 is: the file splits into lkp's 4 jobs.
    let (names, _) = split("hackbench-cpuset.yaml", dir.path()).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(names.len(), 4, "{names:?}");
    // A file of jobs run refuses (nr_instances: 2) is still split for lkp, with a warning that says why.
    let (names, warned) = split("hackbench-cgroup2-fairness.yaml", dir.path()).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(warned.contains("culprit run refuses 4 of the 4 atomic jobs written") && warned.contains("nr_instances"));
    // A misspelt key is still a mistake of the file: nothing is written.
    common::write(dir.path(), "typo.yaml", "hackbench:\n  loops: 10\nnr_thraeds: 2\n");
    let out = culprit("t.db", &["split", "typo.yaml", "-o", "typo"], dir.path());
    assert!(common::refused(&out).contains("nothing was written"));
    assert!(!dir.path().join("typo").exists());
}

/// The sysbench-cpu job lkp's split-job wrote for lkp-skl-d01, shortened to a second.
fn short_sysbench_cpu() -> String {
    let text = std::fs::read_to_string(lkp_job("sysbench-cpu-split-lkp-skl-d01.yaml")).unwrap();
    assert!(text.contains("runtime: 300s\n"));
    text.replace("runtime: 300s\n", "runtime: 1s\n")
}

#[test]
fn qa47_an_imported_robot_run_meets_the_same_job_run_by_culprit_and_monitor_options_are_no_axes() {
    let dir = tempfile::tempdir().unwrap();
    let job = short_sysbench_cpu();
    // The robot's job.yaml: the same job at a commit, on a rootfs, with its bisection's bookkeeping.
    let (base, head) = ("361a2a229fa31ab7f2b236b5946e434964d00762", "8cc621d2f45ddd3dc664024a647ee7adf48d79a5");
    for (commit, events) in [(base, 1000.0), (head, 900.0)] {
        let run = dir.path().join(format!(
            "rr/sysbench-cpu/20000-100%-1s/lkp-skl-d01/debian-11.1-x86_64-20220510.cgz/x86_64-rhel-8.3/gcc-12/\
             {commit}/0"
        ));
        std::fs::create_dir_all(&run).unwrap();
        let finished = format!(
            "{job}commit: {commit}\nrootfs: debian-11.1-x86_64-20220510.cgz\nkconfig: x86_64-rhel-8.3\n\
             compiler: gcc-12\nbisect_dmesg: true\n"
        );
        std::fs::write(run.join("job.yaml"), finished).unwrap();
        std::fs::write(run.join("stats.json"), format!("{{\"sysbench-cpu.events_per_sec\": {events}}}")).unwrap();
    }
    stdout(&culprit("i.db", &["import", "rr"], dir.path()));
    // The same job run here, from the file lkp's split-job wrote.
    let file = common::write(dir.path(), "sysbench-cpu-20000-100%-1s.yaml", &job);
    let args = ["run", "-n", "1", "--monitors", "none", "--label", "here", file.to_str().unwrap()];
    let out = culprit("i.db", &args, dir.path());
    stdout(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    // lkp's monitor options are named once, and the run goes on.
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("perf-profile.debug_mode")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(warnings[0].contains("not applied"), "{err}");
    // perf-c2c is one of lkp's monitors Culprit has none of, named with the others the runs go without.
    assert!(err.lines().any(|l| l.contains("lkp monitors") && l.contains("perf-c2c")), "{err}");
    let results: serde_json::Value =
        serde_json::from_str(&stdout(&culprit("i.db", &["results", "--json"], dir.path()))).unwrap();
    let text = results.to_string();
    let ids: Vec<&str> = results
        .as_array()
        .or_else(|| results.get("jobs").and_then(|jobs| jobs.as_array()))
        .unwrap_or_else(|| panic!("{text}"))
        .iter()
        .filter_map(|row| row.get("job_id").and_then(|id| id.as_str()))
        .collect();
    assert!(!ids.is_empty(), "{text}");
    assert!(ids.iter().all(|id| *id == ids[0]), "one job id for the imported and the measured runs: {text}");
    assert!(text.contains("\"sysbench-cpu-20000-100%-1s\""), "{text}");
    // Monitor options and the robot's bookkeeping are no axes and no parameters of the mail; ucode stays, as lkp's.
    let table = stdout(&culprit("i.db", &["compare", base, head], dir.path()));
    let lines: Vec<&str> = table.lines().collect();
    let rule = lines.iter().position(|line| line.starts_with("=====")).unwrap_or_else(|| panic!("{table}"));
    assert_eq!(lines[rule + 1], "compiler/cpu_max_prime/kconfig/nr_threads/rootfs/runtime/tbox_group/testcase/ucode:");
    let mail = stdout(&culprit("i.db", &["report", "--compare", base, head], dir.path()));
    // The mail attaches the job.yaml as it is; its parameters are the workload's.
    let parameters = mail
        .split("with following parameters:\n\n")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .unwrap_or_else(|| panic!("{mail}"));
    let listed: Vec<&str> = parameters.lines().map(|l| l.trim().split(':').next().unwrap_or_default()).collect();
    // In the job's order, as lkp's mails list them (QA 47 D9).
    assert_eq!(listed, ["runtime", "nr_threads", "cpu_max_prime", "ucode"], "{mail}");
}
