//! End-to-end regressions of the eighth QA pass: the seed threads' jobs written as lkp-tests users write them (fs_mark
//! with lkp's units, a bisect with perf attached), run, compared, bisected and reported as their engineers would.

use crate::common;

use crate::common::{stdout, write, write_script};
use std::path::Path;
use std::process::Command;

/// Runs culprit with `--db db` and `args` in `dir`, with `dir/bin` first on `PATH` (a test's stand-in programs).
fn culprit_with_bin(dir: &Path, db: &str, args: &[&str]) -> std::process::Output {
    let path = format!("{}:{}", dir.join("bin").display(), std::env::var("PATH").unwrap_or_default());
    let mut culprit = Command::new(env!("CARGO_BIN_EXE_culprit"));
    culprit.current_dir(dir).env("PATH", path).arg("--db").arg(db).args(args).output().unwrap()
}

#[test]
fn qa_34_an_lkp_fsmark_job_runs_with_lkps_units_and_file_count() {
    // It loads the CPUs, so it waits for the tests that time a benchmark.
    let _machine = common::quiet_machine();
    // Seed 000 is a 16-way fs_mark file-create test. lkp's own fsmark jobs write `nr_directories: 16d` and
    // `nr_files_per_directory: 256fpd`, which culprit refused ("expected a whole number"); with the units removed,
    // lkp's jobs/fsmark/fsmark.yaml (9-byte files, 256M, 4 loops) asked fs_mark for 14,913,080 files a thread where
    // lkp asks for 8192 (it counts files of at least one 4k block and splits them over the loops).
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("bin")).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../culprit-parse/tests/data/lkp/fsmark/1");
    let args = dir.path().join("fs_mark.args");
    let body = format!("#!/bin/sh\necho \"$@\" > {}\ncat {}\n", args.display(), fixture.display());
    write_script(&dir.path().join("bin/fs_mark"), &body);
    let job = "suite: fsmark\ntestcase: fsmark\ncategory: benchmark\n\ndisk: 1HDD\niterations: 4\nnr_threads: 2\n\n\
               fsmark:\n  filesize: 9B\n  test_size: 256M\n  sync_method: NoSync\n  nr_directories: 16d\n  \
               nr_files_per_directory: 256fpd\n";
    write(dir.path(), "fsmark.yaml", job);
    let run = ["run", "fsmark.yaml", "-n", "1", "--label", "v3.11", "--monitors", "none"];
    let out = culprit_with_bin(dir.path(), "f.db", &run);
    let text = stdout(&out);
    assert!(text.contains("fsmark.files_per_sec"), "{text}");
    let argv = std::fs::read_to_string(&args).unwrap();
    assert!(argv.trim_end().ends_with("-n 8192 -s 9 -S 0 -D 16 -N 256 -L 4"), "fs_mark ran with {argv}");
}

#[test]
fn qa_34_a_profile_perf_could_not_record_is_said_by_the_bisect_and_the_mail() {
    // `bisect --profile 3` of a short benchmark: perf failed in every profiling run (here perf is not permitted, as
    // in a container; on a real machine a run too short for perf's interval does the same). The bisect said nothing,
    // the failures were only in the stored stderr, and the mail said the profiling runs "add no perf row the runs
    // without it lack", which reads as a profile that found nothing.
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = common::make_slowdown_repo(dir.path(), 6, 4, 99, 30);
    std::fs::create_dir(dir.path().join("bin")).unwrap();
    let perf = "#!/bin/sh\necho 'Error: perf_event_open: Permission denied (perf_event_paranoid is 4)' >&2\nexit 1\n";
    write_script(&dir.path().join("bin/perf"), perf);
    let args = ["bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", &shas[5], "--run", "./bench"];
    let args = [&args[..], &["--build", "make -s", "--metric", "command.user_time", "--profile", "2"]].concat();
    let out = culprit_with_bin(dir.path(), "b.db", &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    for monitor in ["perf-profile", "perf-stat"] {
        let said = err.lines().filter(|l| l.contains(&format!("monitor {monitor}:"))).count();
        assert_eq!(said, 1, "the bisect says once that {monitor} recorded nothing:\n{err}");
    }
    assert!(err.contains("the run is kept without that monitor's data (`culprit results --run "), "{err}");
    let mail = stdout(&culprit_with_bin(dir.path(), "b.db", &["report", "1"]));
    let mail = mail.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(mail.contains("perf recorded no perf-profile or perf-stat data in them"), "{mail}");
    assert!(!mail.contains("they add no perf row"), "{mail}");
}

#[test]
fn qa_34_a_quiet_randwrite_mail_leads_with_the_write_iops_not_a_read_metric_at_zero() {
    // It loads the CPUs, so it waits for the tests that time a benchmark.
    let _machine = common::quiet_machine();
    // Seed 001's job (fio randwrite 4k, libaio) at two trees with nothing changed: the mail's subject and opening
    // were "fio.read_iops 0.0% non-significant change", a read metric fio reports as 0 in a job that only writes.
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: fio-basic\ntestcase: fio-basic\ncategory: benchmark\n\nruntime: 1s\nnr_task: 1\n\
               time_based: tb\n\nfio-setup-basic:\n  rw: randwrite\n  bs: 4k\n  ioengine: libaio\n  \
               test_size: 8M\n\nfio:\n";
    write(dir.path(), "fio.yaml", job);
    for label in ["v5.12", "v5.13-rc1"] {
        let run = ["run", "fio.yaml", "-n", "2", "--label", label, "--monitors", "none"];
        stdout(&common::culprit("f.db", &run, dir.path()));
    }
    let mail = stdout(&common::culprit("f.db", &["report", "--compare", "v5.12", "v5.13-rc1"], dir.path()));
    let subject = mail.lines().next().unwrap();
    assert!(subject.starts_with("[culprit] v5.13-rc1: fio.write_iops "), "{mail}");
    assert!(!mail.contains("fio.read_iops"), "{mail}");
}

#[test]
fn qa_34_try_fix_does_not_promise_its_table_in_a_mail_that_reads_more_runs() {
    // Seed 000's fix (Joonsoo's one-line patch, tested by Dave) with try-fix: it compares only its own interleaved
    // runs and ended "culprit report --compare BASE BAD --fix LABEL writes the mail with this table", but that mail
    // reads every stored run of the three: after a bisect, or a second try of the patch, its numbers were not these.
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = common::make_slowdown_repo(dir.path(), 4, 3, 99, 30);
    common::work_patch(dir.path(), &repo, "fix.patch", 30, 0);
    let args = ["try-fix", "--repo", repo.to_str().unwrap(), "--base", &shas[1], "--bad", &shas[3], "--patch"];
    let args = [&args[..], &["fix.patch", "--run", "./bench", "--build", "make -s", "--runs", "3"]].concat();
    let args = [&args[..], &["--metric", "command.user_time"]].concat();
    let first = String::from_utf8_lossy(&common::culprit("t.db", &args, dir.path()).stdout).into_owned();
    assert!(first.trim_end().ends_with("writes the mail with this table"), "{first}");
    let second = String::from_utf8_lossy(&common::culprit("t.db", &args, dir.path()).stdout).into_owned();
    let said = "writes the mail with this table, and under it the table of every stored run of the three, which also \
                reads the runs stored before this try-fix (3 of base, 3 of bad, 3 of patched), so its numbers and \
                verdicts can differ from these";
    assert!(second.trim_end().ends_with(said), "{second}");
}

#[test]
fn qa_34_the_axes_line_is_ordered_by_lkps_names_as_the_jobs_name_is() {
    // It loads the CPUs, so it waits for the tests that time a benchmark.
    let _machine = common::quiet_machine();
    // Seed 001's table heads its columns with the job's axes. The store orders params by their full keys, so the
    // options of a program's hash (`hackbench.mode`) sat among the top-level params by the hash's name: the line read
    // `ipc/loops/mode/iterations/nr_threads`, and its values were not the job name's path_params, which lkp and
    // culprit order by the options' own names.
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: hackbench\ntestcase: hackbench\ncategory: benchmark\n\nnr_threads: 1\niterations: 1\n\n\
               hackbench:\n  mode: process\n  ipc: pipe\n  loops: 20\n";
    write(dir.path(), "hb.yaml", job);
    for label in ["a", "b"] {
        let run = ["run", "hb.yaml", "-n", "1", "--label", label, "--monitors", "none"];
        stdout(&common::culprit("h.db", &run, dir.path()));
    }
    let table = stdout(&common::culprit("h.db", &["compare", "a", "b", "--all"], dir.path()));
    let lines: Vec<&str> = table.lines().collect();
    let at = lines.iter().position(|l| l.starts_with("=====")).expect(&table) + 1;
    assert_eq!(lines[at], "ipc/iterations/loops/mode/nr_threads/tbox_group/testcase:", "{table}");
    // The job's params are the values before the machine's and the testcase's, which sort after them.
    let values: Vec<&str> = lines[at + 1].split('/').collect();
    let job_name = format!("hb-{}", values[..values.len() - 2].join("-"));
    let results = stdout(&common::culprit("h.db", &["results"], dir.path()));
    assert!(results.contains(&job_name), "the axes' values {job_name} are the job's name:\n{results}");
    let mail = stdout(&common::culprit("h.db", &["report", "--compare", "a", "b"], dir.path()));
    // The mail lists them in the job's order, as lkp's mails do (QA 47 D9).
    assert!(mail.contains("\tnr_threads: 1\n\titerations: 1\n\tmode: process\n\tipc: pipe\n\tloops: 20\n"), "{mail}");
}

#[test]
fn qa_34_a_run_of_a_patched_checkout_warns_that_it_is_stored_under_the_unpatched_commit() {
    let _machine = common::shared_machine();
    // Seed 000 measures "3.12-git-revert" and "3.12-git-fix": the bad tree with a patch applied. `culprit run` in such
    // a checkout stored the runs under HEAD's commit without a word, mixed into the bad commit's own runs.
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = common::make_slowdown_repo(dir.path(), 2, 2, 99, 30);
    write(&repo, "job.yaml", "suite: bench\ntestcase: bench\ncommand:\n  cmd: echo ok\n");
    let db = dir.path().join("r.db");
    let run = ["run", "job.yaml", "-n", "1", "--monitors", "none"];
    let clean = common::culprit(&db, &run, &repo);
    stdout(&clean);
    assert!(!String::from_utf8_lossy(&clean.stderr).contains("uncommitted"), "{clean:?}");
    let bench = std::fs::read_to_string(repo.join("bench.c")).unwrap();
    std::fs::write(repo.join("bench.c"), bench.replace("(100 + 30)", "(100 + 0)")).unwrap();
    let patched = common::culprit(&db, &run, &repo);
    stdout(&patched);
    let err = String::from_utf8_lossy(&patched.stderr);
    let said = format!("has uncommitted changes (bench.c); the runs are stored under commit {}", &shas[1][..12]);
    assert!(err.contains(&said) && err.contains("--label NAME"), "{err}");
    // Naming the commit says which one the runs are of: nothing to warn about.
    let named = common::culprit(&db, &[&run[..], &["--commit", &shas[1]]].concat(), &repo);
    assert!(!String::from_utf8_lossy(&named.stderr).contains("uncommitted"), "{named:?}");
}

#[test]
fn qa_34_a_command_with_a_colon_is_refused_with_the_quoting_it_needs() {
    let _machine = common::shared_machine();
    // A command job whose command prints a rate, written as it reads: `cmd: echo 'ops/s: 1'`. YAML takes the second
    // ': ' for a key, and the refusal was the parser's "mapping values are not allowed in this context" with advice on
    // indentation and a ':' after each key, not on the quotes the value needs.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "job.yaml", "suite: bench\ntestcase: bench\ncommand:\n  cmd: echo 'ops/s: 1'\n");
    let err = common::refused(&common::culprit("j.db", &["run", "job.yaml", "--label", "a"], dir.path()));
    let said = "job.yaml:4: the value of 'cmd' holds ': ', which YAML reads as the start of another key; quote the \
                whole value (cmd: \"...\", or '...' with each ' inside written '')";
    assert!(err.contains(said), "{err}");
}
