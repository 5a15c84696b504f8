//! Regression tests for QA 47's finding D9, through the real binary: the table and the mail as the kernel test robot
//! lays them out (seed 003, its 2022 stress-ng mail): the axes keys sorted by name and their values flush left, the
//! mail's params in the job's order without monitors or the queue's keys, the machine line with the host file's
//! sockets and model name, and commits named with their subjects when the repository at hand has them.

use crate::common;

use std::path::Path;
use std::process::Command;

/// Seed 003's header and parameter lines, as the robot sent them (its quoting `> ` taken off).
const SEED_AXES_KEYS: &str =
    "class/compiler/cpufreq_governor/disk/fs/kconfig/nr_threads/rootfs/tbox_group/test/testcase/testtime/ucode:";
const SEED_AXES_VALUES: &str = "filesystem/gcc-11/performance/1HDD/xfs/x86_64-rhel-8.3/10%/\
                                debian-11.1-x86_64-20220510.cgz/lkp-icl-2sp1/xattr/stress-ng/60s/0xb000280";
const SEED_PARAMS: &[&str] = &[
    "nr_threads: 10%",
    "disk: 1HDD",
    "testtime: 60s",
    "fs: xfs",
    "class: filesystem",
    "test: xattr",
    "cpufreq_governor: performance",
    "ucode: 0xb000280",
];
const SEED_MACHINE: &str = "on test machine: 96 threads 2 sockets Ice Lake with 256G memory";
const SEED_SUBJECTS: [&str; 2] = ["xfs: convert CIL busy extents to per-cpu", "xfs: Add order IDs to log items in CIL"];

/// The job.yaml of a robot's result, shortened: the job's own keys in its order, the queue's bookkeeping, the host
/// file (`model`, `nr_node`, `nr_cpu`, `memory`, `brand`), monitors with an option, and the build and box settings.
const ROBOT_JOB: &str = "suite: stress-ng\ntestcase: stress-ng\ncategory: benchmark\nnr_threads: 10%\ndisk: 1HDD\n\
                         testtime: 60s\nfs: xfs\nstress-ng:\n  class: filesystem\n  test: xattr\n\
                         job_origin: stress-ng-class-filesystem.yaml\nqueue: bisect\ntestbox: lkp-icl-2sp1\n\
                         tbox_group: lkp-icl-2sp1\nmodel: Ice Lake\nnr_node: 2\nnr_cpu: 96\nmemory: 256G\n\
                         brand: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\nkmsg:\nvmstat:\nperf-sched:\n  lite_mode: 1\n\
                         cpufreq_governor: performance\nucode: '0xb000280'\n\
                         rootfs: debian-11.1-x86_64-20220510.cgz\nkconfig: x86_64-rhel-8.3\ncompiler: gcc-11\n";

/// `git` in `repo`, with an identity of its own; its standard output.
fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["-c", "user.name=qa", "-c", "user.email=qa@example.com"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A repository `dir/linux` with seed 003's two commits (by subject), and an lkp result root `dir/rr` with 3 runs of
/// seed 003's job at each, stress-ng.xattr.ops_per_sec about 1000 at the base and 1585 at the second, imported into
/// `dir/s.db` from `dir` (outside the repository, so the store records no subject). Returns the two SHAs.
fn robot_result_root(dir: &Path) -> [String; 2] {
    let repo = dir.join("linux");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    let shas = SEED_SUBJECTS.map(|subject| {
        git(&repo, &["commit", "-q", "--allow-empty", "-m", subject]);
        git(&repo, &["rev-parse", "HEAD"])
    });
    let place = "rr/stress-ng/filesystem-performance-1HDD-xfs-10%-xattr-60s-ucode=0xb000280/lkp-icl-2sp1/\
                 debian-11.1-x86_64-20220510.cgz/x86_64-rhel-8.3/gcc-11";
    for (sha, level) in shas.iter().zip([998.0, 1585.0]) {
        for run in 0..3 {
            let path = dir.join(format!("{place}/{sha}/{run}"));
            std::fs::create_dir_all(&path).unwrap();
            let stats = serde_json::json!({ "stress-ng.xattr.ops_per_sec": level + f64::from(run) });
            std::fs::write(path.join("stats.json"), stats.to_string()).unwrap();
            std::fs::write(path.join("job.yaml"), ROBOT_JOB).unwrap();
        }
    }
    let out = common::culprit("s.db", &["import", "rr"], dir);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    shas
}

/// The two lines after the `=====` rule, and the `commit:` block's lines after it.
fn header(text: &str) -> (Vec<&str>, Vec<&str>) {
    let lines: Vec<&str> = text.lines().collect();
    let rule = lines.iter().position(|l| l.starts_with("=====")).unwrap_or_else(|| panic!("no rule in\n{text}"));
    let commits = lines.iter().position(|l| *l == "commit: ").unwrap_or_else(|| panic!("no commit block in\n{text}"));
    let block = lines[commits + 1..].iter().take_while(|l| !l.is_empty()).copied().collect();
    (lines[rule + 1..rule + 3].to_vec(), block)
}

#[test]
fn qa48_the_table_header_is_seed_003s_sorted_axes_flush_left_and_commits_with_subjects() {
    let dir = tempfile::tempdir().unwrap();
    let shas = robot_result_root(dir.path());
    // From the repository that has the commits, the store's bare SHAs get their subjects, as lkp's lines have them.
    let out = common::culprit("../s.db", &["compare", &shas[0], &shas[1]], &dir.path().join("linux"));
    let table = common::stdout(&out);
    let (axes, commits) = header(&table);
    assert_eq!(axes, [SEED_AXES_KEYS, SEED_AXES_VALUES], "{table}");
    let expected: Vec<String> =
        shas.iter().zip(SEED_SUBJECTS).map(|(sha, subject)| format!("  {} (\"{subject}\")", &sha[..10])).collect();
    assert_eq!(commits, expected, "{table}");
    // Without a repository that has them the commits are named by their SHAs, as lkp does without subjects.
    let table = common::stdout(&common::culprit("s.db", &["compare", &shas[0], &shas[1]], dir.path()));
    let (axes, commits) = header(&table);
    assert_eq!(axes, [SEED_AXES_KEYS, SEED_AXES_VALUES], "{table}");
    assert_eq!(commits, shas.iter().map(|sha| format!("  {sha}")).collect::<Vec<_>>(), "{table}");
}

#[test]
fn qa48_the_mail_lists_seed_003s_params_in_job_order_and_its_machine_line() {
    let dir = tempfile::tempdir().unwrap();
    let shas = robot_result_root(dir.path());
    let out = common::culprit("../s.db", &["report", "--compare", &shas[0], &shas[1]], &dir.path().join("linux"));
    let mail = common::stdout(&out);
    let lines: Vec<&str> = mail.lines().collect();
    assert!(lines.contains(&SEED_MACHINE), "{mail}");
    assert!(lines.contains(&format!("commit: {} (\"{}\")", shas[1], SEED_SUBJECTS[1]).as_str()), "{mail}");
    let at = lines.iter().position(|l| *l == "with following parameters:").unwrap_or_else(|| panic!("{mail}"));
    let params: Vec<&str> = lines[at + 2..].iter().take_while(|l| l.starts_with('\t')).map(|l| &l[1..]).collect();
    // The job's workload params in its order: no monitor option (`lite_mode`), host key or queue key among them.
    assert_eq!(params, SEED_PARAMS, "{mail}");
    let (axes, _) = header(&mail);
    assert_eq!(axes, [SEED_AXES_KEYS, SEED_AXES_VALUES], "{mail}");
}

#[test]
fn qa48_a_mail_of_culprits_own_runs_lists_the_params_in_the_job_files_order() {
    let dir = tempfile::tempdir().unwrap();
    // The keys out of alphabetical order, as a job file has them; the store keeps a run's params sorted by key.
    let job = "suite: qa48\ntestcase: qa48\nfs: xfs\ndisk: 1HDD\ncommand:\n  cmd: \"echo ops: $QA48_OPS\"\n  \
               capture:\n    ops: 'ops: ([0-9.]+)'\ncpufreq_governor: performance\n";
    common::write(dir.path(), "job.yaml", job);
    for (label, ops) in [("a", "100"), ("b", "200")] {
        let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
            .current_dir(dir.path())
            .env("QA48_OPS", ops)
            .args(["--db", "q.db", "run", "job.yaml", "-n", "3", "--label", label, "--monitors", "none"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let mail = common::stdout(&common::culprit("q.db", &["report", "--compare", "a", "b"], dir.path()));
    let lines: Vec<&str> = mail.lines().collect();
    let at = lines.iter().position(|l| *l == "with following parameters:").unwrap_or_else(|| panic!("{mail}"));
    let keys: Vec<&str> = lines[at + 2..]
        .iter()
        .take_while(|l| l.starts_with('\t'))
        .filter_map(|l| l[1..].split(':').next())
        .collect();
    let place = |key: &str| keys.iter().position(|k| *k == key).unwrap_or_else(|| panic!("no {key} in\n{mail}"));
    assert!(place("fs") < place("disk"), "{mail}");
    assert!(place("disk") < place("cmd"), "{mail}");
    assert!(place("cmd") < place("cpufreq_governor"), "{mail}");
    // This machine's own facts: the job names no host file, and its runs were not read from one.
    let machine = lines.iter().find(|l| l.starts_with("on test machine: ")).unwrap_or_else(|| panic!("{mail}"));
    assert!(!machine.contains("sockets"), "{mail}");
}

#[test]
fn qa48_repo_gives_the_subjects_of_commits_the_store_has_none_for() {
    let dir = tempfile::tempdir().unwrap();
    let shas = robot_result_root(dir.path());
    // From outside the repository, `--repo` names it: the table's and the mail's commit lines carry the subjects.
    let args = ["compare", &shas[0], &shas[1], "--repo", "linux"];
    let table = common::stdout(&common::culprit("s.db", &args, dir.path()));
    let (_, commits) = header(&table);
    let expected: Vec<String> =
        shas.iter().zip(SEED_SUBJECTS).map(|(sha, subject)| format!("  {} (\"{subject}\")", &sha[..10])).collect();
    assert_eq!(commits, expected, "{table}");
    let args = ["report", "--compare", &shas[0], &shas[1], "--repo", "linux"];
    let mail = common::stdout(&common::culprit("s.db", &args, dir.path()));
    assert!(mail.contains(&format!("\ncommit: {} (\"{}\")\n", shas[1], SEED_SUBJECTS[1])), "{mail}");
    assert_eq!(header(&mail).1, expected, "{mail}");
    // A --repo that is no repository is refused, naming it, rather than read as one without the commits.
    std::fs::create_dir_all(dir.path().join("plain")).unwrap();
    let args = ["compare", &shas[0], &shas[1], "--repo", "plain"];
    let err = common::refused(&common::culprit("s.db", &args, dir.path()));
    assert!(err.contains("--repo plain"), "{err}");
}

#[test]
fn qa48_repo_gives_the_subjects_from_inside_another_repository() {
    let dir = tempfile::tempdir().unwrap();
    let shas = robot_result_root(dir.path());
    // The current directory is a repository of its own, without the compared commits: the subjects are `--repo`'s,
    // looked up there and not in the repository at hand.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    git(&elsewhere, &["init", "-q"]);
    git(&elsewhere, &["commit", "-q", "--allow-empty", "-m", "elsewhere: an unrelated commit"]);
    let expected: Vec<String> =
        shas.iter().zip(SEED_SUBJECTS).map(|(sha, subject)| format!("  {} (\"{subject}\")", &sha[..10])).collect();
    let args = ["compare", &shas[0], &shas[1], "--repo", "../linux"];
    let table = common::stdout(&common::culprit("../s.db", &args, &elsewhere));
    assert_eq!(header(&table).1, expected, "{table}");
    let args = ["report", "--compare", &shas[0], &shas[1], "--repo", "../linux"];
    let mail = common::stdout(&common::culprit("../s.db", &args, &elsewhere));
    assert!(mail.contains(&format!("\ncommit: {} (\"{}\")\n", shas[1], SEED_SUBJECTS[1])), "{mail}");
    assert_eq!(header(&mail).1, expected, "{mail}");
    // Without `--repo`, the repository at hand has no such commits and the lines give the bare SHAs.
    let table = common::stdout(&common::culprit("../s.db", &["compare", &shas[0], &shas[1]], &elsewhere));
    assert_eq!(header(&table).1, shas.iter().map(|sha| format!("  {sha}")).collect::<Vec<_>>(), "{table}");
}
