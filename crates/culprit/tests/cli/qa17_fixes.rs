//! End-to-end regressions of the seventeenth QA pass: lkp's own job files split, shrunk to a few seconds and run as
//! an lkp user runs them.

use crate::common;

use crate::common::{culprit, stdout};

#[test]
fn qa17_a_split_file_edited_for_a_quick_run_is_named_by_the_params_it_has_now() {
    // A file `culprit split` wrote, with its runtime or test_size edited down, was named after its file name and
    // then its new path params: lkp's fio-basic-1ssd-write job shrunk to 3 s and 64M ran as
    // `fio-basic-1ssd-write-4M-1SSD-btrfs-falloc-1-300s-randwrite-128G-4M-1SSD-btrfs-falloc-1-3s-randwrite-64M`,
    // which read in every table and report as the 300 s, 128G job it no longer was.
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "quick.yaml", "suite: x\ncommand:\n  cmd: 'true'\n  executions: [1, 2]\n");
    stdout(&culprit("q.db", &["split", "quick.yaml", "-o", "out"], dir.path()));
    let mut files: Vec<String> = std::fs::read_dir(dir.path().join("out"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["quick-true-1.yaml", "quick-true-2.yaml"]);
    let split = dir.path().join("out/quick-true-2.yaml");
    let text = std::fs::read_to_string(&split).unwrap();
    assert!(text.contains("  executions: 2\n"), "{text}");
    std::fs::write(&split, text.replace("  executions: 2\n", "  executions: 3\n")).unwrap();
    let run = ["run", "out/quick-true-2.yaml", "-n", "1", "--label", "a", "--monitors", "none"];
    let out = stdout(&culprit("q.db", &run, dir.path()));
    assert!(out.lines().any(|line| line.starts_with("quick-true-3  (1 ok, 0 failed)")), "{out}");
    assert!(!out.contains("quick-true-2"), "{out}");
    // Run as split wrote it, the other file keeps the name it was written under, as before.
    let run = ["run", "out/quick-true-1.yaml", "-n", "1", "--label", "a", "--monitors", "none"];
    let out = stdout(&culprit("q.db", &run, dir.path()));
    assert!(out.lines().any(|line| line.starts_with("quick-true-1  (1 ok, 0 failed)")), "{out}");
    // A file of another name that merely came from the same job is named after itself, as lkp's split-job names it.
    std::fs::copy(&split, dir.path().join("mine.yaml")).unwrap();
    let run = ["run", "mine.yaml", "-n", "1", "--label", "a", "--monitors", "none"];
    let out = stdout(&culprit("q.db", &run, dir.path()));
    assert!(out.lines().any(|line| line.starts_with("mine-true-3  (1 ok, 0 failed)")), "{out}");
}

#[test]
fn qa17_a_job_whose_name_is_longer_than_a_file_name_still_gets_a_scratch_directory() {
    // The scratch directory was named after the whole job name, and lkp's fio-basic-pagecache-demo names reach past a
    // file name's 255 bytes once a split file is edited: every run failed with "cannot make a scratch directory under
    // /tmp/culprit-scratch: File name too long (os error 36)" before the benchmark started.
    let dir = tempfile::tempdir().unwrap();
    let stem = "p".repeat(250);
    common::write(dir.path(), &format!("{stem}.yaml"), "suite: x\ncommand:\n  cmd: 'true'\n");
    let scratch = dir.path().join("scratch");
    let run = ["run", &format!("{stem}.yaml"), "-n", "1", "--label", "a", "--monitors", "none"];
    let out = stdout(&culprit("q.db", &[&run[..], &["--scratch", scratch.to_str().unwrap()]].concat(), dir.path()));
    assert!(out.contains(&format!("{stem}-true")) && out.contains("(1 ok, 0 failed)"), "{out}");
}

#[test]
fn qa17_a_failed_fio_run_gives_fios_error_from_its_output_as_the_reason() {
    // fio reports a job's error on stdout beside its JSON and leaves stderr empty, so lkp's libpmem job off its pmem
    // setup failed with "'fio ...' exit status 1" alone; the cause was only in `culprit results --run N`'s raw output.
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: fio-basic\nruntime: 1s\nnr_task: 1\ntest_size: 4M\nfio-setup-basic:\n  rw: randread\n  \
               bs: 4k\n  ioengine: libpmem\nfio:\n";
    common::write(dir.path(), "pmem.yaml", job);
    let scratch = dir.path().join("scratch");
    let run = ["run", "pmem.yaml", "-n", "1", "--label", "a", "--monitors", "none", "--scratch"];
    let out = culprit("q.db", &[&run[..], &[scratch.to_str().unwrap()]].concat(), dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let summary = String::from_utf8_lossy(&out.stdout);
    let failed = summary.lines().find(|line| line.trim_start().starts_with("failed run:")).unwrap_or_default();
    assert!(failed.contains("exit status 1: fio: pid="), "{summary}");
    assert!(failed.contains("does not point to persistent memory"), "{summary}");
    // The stored run's reason is the same one.
    let failures = stdout(&culprit("q.db", &["results", "--failures"], dir.path()));
    assert!(failures.contains("error=Operation not supported"), "{failures}");
}

#[test]
fn qa17_lkps_sysbench_fileio_job_of_1024_files_runs_under_the_usual_limit_of_1024_open_files() {
    // lkp's sysbench-fileio jobs all give 1024 files, and its run raises the open-file limit first (`ulimit -n
    // $((filenum + 2048))`); Culprit did not, so on a machine with the usual soft limit of 1024 every run failed with
    // a bare "exit status 1" (sysbench said "FATAL: Cannot open file 'test_file.1019' errno = 24 (Too many open
    // files)" on stdout).
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: sysbench-fileio\nperiod: 1s\nnr_threads: 1\nsize: 8M\nsysbench-fileio:\n  filenum: 1100f\n  \
               rwmode: rndwr\n  iomode: sync\n";
    common::write(dir.path(), "fileio.yaml", job);
    let scratch = dir.path().join("scratch");
    let out = std::process::Command::new("sh")
        .current_dir(dir.path())
        .args(["-c", "ulimit -S -n 1024 && exec \"$0\" \"$@\"", env!("CARGO_BIN_EXE_culprit")])
        .args(["--db", "q.db", "run", "fileio.yaml", "-n", "1", "--label", "a", "--monitors", "none", "--scratch"])
        .arg(&scratch)
        .output()
        .unwrap();
    let summary = stdout(&out);
    let wrote = summary.contains("sysbench-fileio.write_operations/s");
    assert!(summary.contains("(1 ok, 0 failed)") && wrote, "{summary}");
}

#[test]
fn qa17_a_stressor_stress_ng_skipped_is_named_in_the_run_summary_with_stress_ngs_words() {
    // stress-ng exits 0 for a stressor it skips, and lkp's parser stores its zero bogo ops as `<stressor>.fail: 1`
    // alone: lkp's dccp job on a kernel without DCCP (Linux 6.16 removed it) summed up as "(1 ok, 0 failed)" with
    // `1 stress-ng.dccp.fail`, and nothing said that the stressor never ran.
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "dccp.yaml", "suite: stress-ng\nnr_threads: 1\ntesttime: 1s\nstress-ng:\n  test: dccp\n");
    let scratch = dir.path().join("scratch");
    let run = ["run", "dccp.yaml", "-n", "1", "--label", "a", "--monitors", "none", "--scratch"];
    let out = stdout(&culprit("q.db", &[&run[..], &[scratch.to_str().unwrap()]].concat(), dir.path()));
    let said = "  dccp did no work in 1 of 1 ok run(s), which store only stress-ng.dccp.fail (as lkp's parser does): \
                stress-ng: info:";
    assert!(out.contains(said) && out.contains("dccp: DCCP protocol not supported, skipping stressor"), "{out}");
}

#[test]
fn qa17_a_sysbench_fileio_size_that_cannot_fit_in_the_scratch_directory_is_refused_before_it_fills_the_disk() {
    // lkp's sysbench-fileio jobs lay out 64G of files before they run; fio's test_size was checked against the scratch
    // directory's free space, sysbench-fileio's size was not, and its prepare wrote until the file system was full.
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: sysbench-fileio\nperiod: 1s\nsize: 8192T\nsysbench-fileio:\n  filenum: 1024f\n  rwmode: rndrd\n";
    common::write(dir.path(), "big.yaml", job);
    let scratch = dir.path().join("scratch");
    let run = ["run", "big.yaml", "-n", "1", "--label", "a", "--monitors", "none", "--scratch"];
    let err = common::refused(&culprit("q.db", &[&run[..], &[scratch.to_str().unwrap()]].concat(), dir.path()));
    assert!(err.contains("big-1024f-1s-rndrd-8192T: its size of 8.0P does not fit in the "), "{err}");
    assert!(err.contains("give a smaller size, or --scratch a directory on a file system with room"), "{err}");
    assert!(!scratch.join("test_file.0").exists());
}

#[test]
fn qa17_lkps_hackbench_thread_jobs_of_many_groups_run_under_the_usual_limit_of_1024_open_files() {
    // lkp's hackbench run raises the open-file limit to the groups' descriptors plus 2048 first; Culprit did not, and
    // lkp's hackbench-socket-8-threads-1600% (32 groups on 2 CPUs, 1280 descriptors in one process) failed every run
    // with "Creating fdpair (error: Too many open files)" under the usual soft limit of 1024.
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: hackbench\nnr_threads: 32\niterations: 1\nhackbench:\n  mode: threads\n  ipc: socket\n  \
               loops: 10\n";
    common::write(dir.path(), "hb.yaml", job);
    let out = std::process::Command::new("sh")
        .current_dir(dir.path())
        .args(["-c", "ulimit -S -n 1024 && exec \"$0\" \"$@\"", env!("CARGO_BIN_EXE_culprit")])
        .args(["--db", "q.db", "run", "hb.yaml", "-n", "1", "--label", "a", "--monitors", "none"])
        .output()
        .unwrap();
    let summary = stdout(&out);
    assert!(summary.contains("(1 ok, 0 failed)") && summary.contains("hackbench.throughput"), "{summary}");
}

#[test]
fn qa17_compare_says_when_a_stressor_did_no_work_at_either_revision() {
    // The comparison of lkp's dccp job at two revisions of a kernel without DCCP showed a table of meminfo changes,
    // from runs in which stress-ng had skipped the stressor, and nothing said that the test itself was never measured.
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "dccp.yaml", "suite: stress-ng\nnr_threads: 1\ntesttime: 1s\nstress-ng:\n  test: dccp\n");
    for label in ["a", "b"] {
        stdout(&culprit("q.db", &["run", "dccp.yaml", "-n", "1", "--label", label], dir.path()));
    }
    let out = culprit("q.db", &["compare", "a", "b"], dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    let said = "culprit: dccp-1-dccp-1s: stress-ng's dccp did no work in any run at any revision (its runs store only \
                stress-ng.<stressor>.fail, as lkp's parser does), so nothing of the test is compared; `culprit results \
                --db q.db --run ID` shows what stress-ng said";
    assert!(err.contains(said), "{err}");
    // A stressor that did its work is compared without the note.
    common::write(dir.path(), "cpu.yaml", "suite: stress-ng\nnr_threads: 1\ntesttime: 1s\nstress-ng:\n  test: cpu\n");
    for label in ["c", "d"] {
        stdout(&culprit("q.db", &["run", "cpu.yaml", "-n", "1", "--label", label], dir.path()));
    }
    let out = culprit("q.db", &["compare", "c", "d"], dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cpu-1-cpu-1s") && !err.contains("did no work"), "{err}");
}
