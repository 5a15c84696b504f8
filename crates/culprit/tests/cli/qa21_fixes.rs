//! Regression tests for the defects QA 21 found acting out the mailing-list threads, through the real binary: page
//! counters taken for the benchmark's own metrics, a change late in a tracked history that went unseen, a job left
//! out of a comparison without a word, and the finished job.yaml of an lkp report (refused on split; on import, its
//! scheduler's keys in the table's axes, the mail's parameters and a sweep's groups, and its test box lost); and
//! fio's dev-dax engine on a machine without a DAX device, whose every run failed without a reason.

use crate::common;

use std::path::Path;

/// Writes an lkp result root under `dir/rr`: one fio job on one box, four runs at each of two commits, each run's
/// `stats.json` holding `fio.write_iops` and the given monitor metrics' values.
fn write_fio_root(dir: &Path, runs: &[(&str, f64, f64)]) {
    for (index, (commit, iops, anon)) in runs.iter().enumerate() {
        let run = dir.join(format!("rr/fio-basic/4k-randwrite/box/{commit}/{index}"));
        std::fs::create_dir_all(&run).unwrap();
        let stats = serde_json::json!({
            "fio.write_iops": iops,
            "proc-vmstat.nr_active_anon": anon,
            "slabinfo.dentry.active_objs": anon * 3.0,
        });
        std::fs::write(run.join("stats.json"), stats.to_string()).unwrap();
    }
}

#[test]
fn a_report_leads_with_the_benchmark_not_a_proc_vmstat_or_slabinfo_counter() {
    // fio's write_iops did not move; only page counters did. The mail led with "FYI, we noticed a 100.0% change of
    // proc-vmstat.nr_active_anon due to commit", as if the counter were fio's result, because proc-vmstat (Culprit's
    // own monitor) and lkp's slabinfo were taken for program metrics.
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = ("a".repeat(40), "b".repeat(40));
    let runs = [
        (a.as_str(), 1000.0, 100.0),
        (a.as_str(), 1010.0, 101.0),
        (a.as_str(), 990.0, 99.0),
        (a.as_str(), 1005.0, 100.0),
        (b.as_str(), 1002.0, 200.0),
        (b.as_str(), 995.0, 201.0),
        (b.as_str(), 1008.0, 199.0),
        (b.as_str(), 998.0, 200.0),
    ];
    write_fio_root(dir.path(), &runs);
    common::stdout(&common::culprit("i.db", &["import", "rr"], dir.path()));
    let out = common::culprit("i.db", &["report", "--compare", &a, &b], dir.path());
    let mail = common::stdout(&out);
    let subject = mail.lines().next().unwrap_or_default();
    assert!(subject.contains("fio.write_iops"), "{mail}");
    assert!(!mail.contains("change of proc-vmstat") && !mail.contains("change of slabinfo"), "{mail}");
    assert!(mail.contains("no significant change of fio.write_iops"), "{mail}");
    // QA 59: nor is the second commit "the bad tree" of a mail that found nothing.
    assert!(mail.contains(&format!("# with {} (the other tree) checked out", &b[..10])), "{mail}");
    // The counters' rows stay in the table, as monitor rows after the benchmark's.
    assert!(mail.lines().any(|l| l.trim_end().ends_with("proc-vmstat.nr_active_anon")), "{mail}");
}

#[test]
fn track_finds_a_regression_and_its_fix_six_commits_before_the_end_of_a_series() {
    // fs_mark's files/s, one run a commit with 3% noise: 220k, 180k from c12 (the regression), 247k from c24 (the
    // fix), as in the thread's 3.11+xfsdev / 3.12-git / 3.12-git-fix table. `track --series` said "no change point":
    // the fix's six commits were clipped towards the running median of the ten commits before, the regressed level.
    let files_per_sec = [
        228502.0, 229566.3, 220437.8, 214954.0, 212791.7, 220206.8, 213254.1, 210516.9, 221315.5, 220880.3, 223606.7,
        213967.8, 180027.0, 179650.4, 171868.5, 182905.2, 181731.8, 192901.2, 181096.0, 179218.6, 186656.9, 181073.5,
        184908.8, 178026.1, 248616.7, 254590.0, 252159.2, 247952.0, 238980.1, 250299.1,
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("commit,fsmark.files_per_sec\n");
    for (i, v) in files_per_sec.iter().enumerate() {
        csv.push_str(&format!("c{i:02},{v}\n"));
    }
    common::write(dir.path(), "series.csv", &csv);
    let out = common::culprit("t.db", &["track", "--series", "series.csv"], dir.path());
    let said = common::stdout(&out);
    assert!(!said.contains("no change point"), "{said}");
    let regression = said.lines().find(|l| l.starts_with("regression")).unwrap_or_else(|| panic!("{said}"));
    assert!(regression.contains("between c11 (last before) and c12 (first after)"), "{said}");
    let improvement = said.lines().find(|l| l.starts_with("improvement")).unwrap_or_else(|| panic!("{said}"));
    assert!(improvement.contains("between c23 (last before) and c24 (first after)"), "{said}");
}

#[test]
fn compare_names_a_job_left_out_because_one_of_the_revisions_did_not_run_it() {
    // Three kernels (3.11, 3.12-git, 3.12-git-fix) of fs_mark on a v4 and a v5 filesystem, the fix not yet run on v5:
    // the v5 job's table was left out without a word, as if it had never been measured.
    let dir = tempfile::tempdir().unwrap();
    let kernels = [("1".repeat(40), 220_000.0), ("2".repeat(40), 180_000.0), ("3".repeat(40), 247_000.0)];
    for (job, kernels) in [("v4-16t", &kernels[..]), ("v5-16t", &kernels[..2])] {
        for (commit, level) in kernels {
            for run in 0..3 {
                let path = dir.path().join(format!("rr/fsmark/{job}/box/{commit}/{run}"));
                std::fs::create_dir_all(&path).unwrap();
                let stats = serde_json::json!({ "fsmark.files_per_sec": level + 1000.0 * f64::from(run) });
                std::fs::write(path.join("stats.json"), stats.to_string()).unwrap();
            }
        }
    }
    common::stdout(&common::culprit("i.db", &["import", "rr"], dir.path()));
    let revisions: Vec<&str> = kernels.iter().map(|(commit, _)| commit.as_str()).collect();
    let args = [&["compare"][..], &revisions[..]].concat();
    let out = common::culprit("i.db", &args, dir.path());
    let table = common::stdout(&out);
    let warnings = String::from_utf8_lossy(&out.stderr);
    assert_eq!(table.matches("tbox_group/testcase").count(), 1, "{table}");
    let said = "fsmark-v5-16t: left out, it has no runs at 3333333333 (run it there, or compare the revisions";
    assert!(warnings.contains(said), "{warnings}");
    assert!(!warnings.contains("fsmark-v4-16t"), "{warnings}");
}

#[test]
fn the_finished_job_yaml_an_lkp_report_attaches_splits_into_its_one_job() {
    // The job.yaml of a kernel test robot report is the finished job's: besides the keys qa13 let through, it holds
    // lkp's boot (bootloader_append, a list; ucode_initrd), scheduler_version, kbuild_queue_analysis and the run's
    // start_time, end_time and version. Each of those was refused ("top-level param 'version' is not used by any
    // selected program"), and bootloader_append's list was read as a matrix dimension, a job per command-line word.
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: x\ntestcase: x\ncategory: benchmark\ncommand:\n  cmd: 'true'\n\
               enqueue_time: 2021-05-20 07:21:07.412085233 +08:00\n_rt: /result/x\nscheduler_version: /lkp/lkp/src\n\
               bootloader_append:\n- root=/dev/ram0\n- user=lkp\n- nokaslr\n\
               ucode_initrd: /osimage/ucode/intel-ucode.cgz\nkbuild_queue_analysis: 1\njob_state: finished\n\
               loadavg: 21.01 13.35 5.54 1/791 11066\nstart_time: '1621468406'\nend_time: '1621468608'\n\
               version: /lkp/lkp/.src-20210519-160620\n";
    common::write(dir.path(), "job.yaml", job);
    let out = common::culprit("t.db", &["split", "job.yaml", "-o", "out"], dir.path());
    common::stdout(&out);
    let written = common::files_under(&dir.path().join("out"));
    let names: Vec<String> = written.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["job-true.yaml"], "{}", String::from_utf8_lossy(&out.stderr));
}

/// The finished job.yaml of an lkp fio run, as its result root keeps it beside `stats.json`: the job's params, its
/// test box's description and the scheduler's keys.
const FINISHED_LKP_FIO_JOB: &str = "suite: fio-basic\ntestcase: fio-basic\ncategory: benchmark\ndisk: 2pmem\n\
    fs: ext4\nruntime: 200s\nnr_task: 50%\ntime_based: tb\nfio-setup-basic:\n  rw: randwrite\n  bs: 4k\n  \
    ioengine: libaio\n  test_size: 200G\nfio:\ntestbox: lkp-csl-2sp6\ntbox_group: lkp-csl-2sp6\nmodel: Cascade Lake\n\
    nr_node: 2\nnr_cpu: 96\nmemory: 256G\nbrand: Intel(R) Xeon(R) Gold 6252 CPU @ 2.10GHz\n\
    cpufreq_governor: performance\nucode: '0x5003006'\n_id: 60a5a1b3e7f2a6d1d0d0e0a1\nLKP_SERVER: internal-lkp-server\n\
    rootfs: debian-10.4-x86_64-20200603.cgz\nkconfig: x86_64-rhel-8.3\ncompiler: gcc-9\n\
    scheduler_version: /lkp/lkp/.src-20210519-160620\nbootloader_append:\n- root=/dev/ram0\n- user=lkp\n\
    job_state: finished\nloadavg: 21.01 13.35 5.54 1/791 11066\n";

#[test]
fn an_imported_lkp_run_s_table_and_mail_show_the_job_s_params_and_its_test_box() {
    // The fio-basic regression of seed 001 as lkp's result root holds it. The table's axes line listed some sixty of
    // the finished job's keys (bootloader_append's lines, _id, loadavg, ...) and the mail's parameters the same, and
    // the mail said "on test machine: 96 threads  with 0G memory".
    let dir = tempfile::tempdir().unwrap();
    let (base, bad) = ("361a2a229fa31ab7f2b236b5946e434964d00762", "8cc621d2f45ddd3dc664024a647ee7adf48d79a5");
    for (commit, iops) in [(base, 310403.0), (bad, 242761.0)] {
        for run in 0..3 {
            let path = dir.path().join(format!(
                "rr/fio-basic/2pmem-ext4-libaio-50%-200s-performance-randwrite-4k-200G-tb-ucode=0x5003006/\
                 lkp-csl-2sp6/debian-10.4-x86_64-20200603.cgz/x86_64-rhel-8.3/gcc-9/{commit}/{run}"
            ));
            std::fs::create_dir_all(&path).unwrap();
            let stats = serde_json::json!({ "fio.write_iops": iops + 1000.0 * f64::from(run) });
            std::fs::write(path.join("stats.json"), stats.to_string()).unwrap();
            std::fs::write(path.join("job.yaml"), FINISHED_LKP_FIO_JOB).unwrap();
        }
    }
    common::stdout(&common::culprit("i.db", &["import", "rr"], dir.path()));
    let table = common::stdout(&common::culprit("i.db", &["compare", base, bad], dir.path()));
    // lkp's order since 2022: every key sorted by name, the values line flush left (QA 47 D9).
    let axes = "bs/compiler/cpufreq_governor/disk/fs/ioengine/kconfig/nr_task/rootfs/runtime/rw/tbox_group/test_size/\
                testcase/time_based/ucode:\n4k/gcc-9/performance/2pmem/ext4/libaio/x86_64-rhel-8.3/50%/\
                debian-10.4-x86_64-20200603.cgz/200s/randwrite/lkp-csl-2sp6/200G/fio-basic/tb/0x5003006\n";
    assert!(table.contains(axes), "{table}");
    let mail = common::stdout(&common::culprit("i.db", &["report", "--compare", base, bad], dir.path()));
    // The host file's sockets and model name, as the robot's mails have them since 2022 (seed 003's line).
    assert!(mail.contains("on test machine: 96 threads 2 sockets Cascade Lake with 256G memory\n"), "{mail}");
    // The imported run's machine facts count them too (schema version 10), as a run of Culprit's own does.
    let listed = common::stdout(&common::culprit("i.db", &["results", "--run", "1", "--json"], dir.path()));
    let run: serde_json::Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(run["machine_facts"]["sockets"], 2, "{run:#}");
    let listed: Vec<&str> = mail
        .split("with following parameters:\n\n")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .unwrap_or_else(|| panic!("{mail}"))
        .lines()
        .map(|l| l.trim().split(':').next().unwrap_or_default())
        .collect();
    // Seed 001's list: the job's workload params in the job's order.
    let expected = [
        "disk", "fs", "runtime", "nr_task", "time_based", "rw", "bs", "ioengine", "test_size", "cpufreq_governor",
        "ucode",
    ];
    assert_eq!(listed, expected, "{mail}");
}

#[test]
fn a_sweep_of_imported_lkp_runs_is_one_curve_whatever_their_scheduler_keys_say() {
    // lkp's runs at nr_task 1 and 2, each finished at its own time with its own load average: `compare --by
    // nr_task` split them into one sweep per loadavg and start time, each a single point.
    let dir = tempfile::tempdir().unwrap();
    let (base, bad) = ("361a2a229fa31ab7f2b236b5946e434964d00762", "8cc621d2f45ddd3dc664024a647ee7adf48d79a5");
    for (nr_task, load) in [("1", "3.10"), ("2", "5.20")] {
        let job = FINISHED_LKP_FIO_JOB
            .replace("nr_task: 50%", &format!("nr_task: {nr_task}"))
            .replace("loadavg: 21.01", &format!("loadavg: {load}"));
        for (commit, iops) in [(base, 310403.0), (bad, 242761.0)] {
            for run in 0..3 {
                let path = dir.path().join(format!("rr/fio-basic/{nr_task}/lkp-csl-2sp6/{commit}/{run}"));
                std::fs::create_dir_all(&path).unwrap();
                let stats = serde_json::json!({ "fio.write_iops": iops + 1000.0 * f64::from(run) });
                std::fs::write(path.join("stats.json"), stats.to_string()).unwrap();
                std::fs::write(path.join("job.yaml"), &job).unwrap();
            }
        }
    }
    common::stdout(&common::culprit("i.db", &["import", "rr"], dir.path()));
    let out = common::culprit("i.db", &["compare", base, bad, "--by", "nr_task"], dir.path());
    let sweep = common::stdout(&out);
    assert_eq!(sweep.matches("fio.write_iops by nr_task").count(), 1, "{sweep}");
    assert!(!sweep.contains("loadavg"), "{sweep}");
    let rows: Vec<&str> = sweep.lines().filter(|l| l.trim_start().starts_with(['1', '2'])).collect();
    assert_eq!(rows.len(), 2, "{sweep}");
}

#[test]
fn fio_s_dev_dax_engine_on_a_machine_without_a_dax_device_is_refused_at_its_line_before_anything_runs() {
    // lkp's dev-dax fio jobs run on persistent-memory boxes; here every run failed with fio's exit status 1 and no
    // word from fio at all, after the scratch file was laid out.
    if std::fs::read_dir("/dev").unwrap().flatten().any(|e| e.file_name().to_string_lossy().starts_with("dax")) {
        // A machine with a DAX device runs the job; what this test checks cannot happen there.
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: fio-basic\nruntime: 1s\nfio-setup-basic:\n  rw: read\n  bs: 4k\n  ioengine: dev-dax\n  \
               test_size: 1M\nfio:\n";
    common::write(dir.path(), "d.yaml", job);
    let scratch = dir.path().join("scratch");
    let args = ["run", "d.yaml", "-n", "1", "--monitors", "none", "--scratch", scratch.to_str().unwrap()];
    let text = common::refused(&common::culprit("d.db", &args, dir.path()));
    assert!(text.contains("in job file d.yaml:6") && text.contains("param 'ioengine' = 'dev-dax'"), "{text}");
    assert!(text.contains("this machine has none, so fio would fail every run without saying why"), "{text}");
    assert!(!scratch.exists(), "nothing ran: {text}");
}

#[test]
fn runs_imported_without_their_job_yaml_are_reported_with_what_their_result_root_says() {
    // A result root copied without job.yaml: the table's header read `box/fio-basic` (its path_params, the only word
    // on what was measured, left out), the mail said "on test machine: 0 threads", listed no parameter, and its
    // reproduce steps ran a job.yaml that `report -o` then wrote beside the report empty.
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = ("a".repeat(40), "b".repeat(40));
    let runs = [(a.as_str(), 1000.0, 1.0), (a.as_str(), 1010.0, 1.0), (a.as_str(), 990.0, 1.0)];
    let later = [(b.as_str(), 700.0, 1.0), (b.as_str(), 710.0, 1.0), (b.as_str(), 690.0, 1.0)];
    write_fio_root(dir.path(), &[&runs[..], &later[..]].concat());
    common::stdout(&common::culprit("i.db", &["import", "rr"], dir.path()));
    let table = common::stdout(&common::culprit("i.db", &["compare", &a, &b], dir.path()));
    assert!(table.contains("path_params/tbox_group/testcase:\n4k-randwrite/box/fio-basic\n"), "{table}");
    let mail = common::stdout(&common::culprit("i.db", &["report", "--compare", &a, &b], dir.path()));
    assert!(mail.contains("on test machine: box (its CPUs and memory were not recorded)"), "{mail}");
    assert!(mail.contains("with following parameters:\n\n\tpath_params: 4k-randwrite\n"), "{mail}");
    assert!(mail.contains("(fio-basic with path_params 4k-randwrite) as JOB.yaml"), "{mail}");
    // Steps of commits change into the repository, so they name the job by the directory it is saved in (QA 51).
    let step = "culprit run --db \"$here/repro.db\" \"$here/JOB.yaml\" -n 3";
    assert!(mail.contains(step) && !mail.contains("job.yaml"), "{mail}");
    let out = common::culprit("i.db", &["report", "--compare", &a, &b, "-o", "mail"], dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(dir.path().join("mail/report.txt").is_file());
    assert!(!dir.path().join("mail/job.yaml").exists(), "an empty job file was written beside the report");
}

#[test]
fn an_imported_lkp_job_has_one_name_at_every_commit() {
    // lkp's finished job.yaml names the commit it ran at, and lkp's split-job naming appends it to the job's name:
    // `results` listed the job of seed 001 under a name per commit, `...-tb-0x5003006-361a2a22...-debian-10.4...`.
    let dir = tempfile::tempdir().unwrap();
    let (base, bad) = ("361a2a229fa31ab7f2b236b5946e434964d00762", "8cc621d2f45ddd3dc664024a647ee7adf48d79a5");
    for commit in [base, bad] {
        let path = dir.path().join(format!("rr/fio-basic/2pmem-ext4/lkp-csl-2sp6/{commit}/0"));
        std::fs::create_dir_all(&path).unwrap();
        std::fs::write(path.join("stats.json"), "{\"fio.write_iops\": 310403}").unwrap();
        let job = format!("{FINISHED_LKP_FIO_JOB}commit: {commit}\njob_origin: fio-basic-2pmem.yaml\n");
        std::fs::write(path.join("job.yaml"), job).unwrap();
    }
    common::stdout(&common::culprit("i.db", &["import", "rr"], dir.path()));
    let out = common::culprit("i.db", &["results", "--json"], dir.path());
    let groups: serde_json::Value = serde_json::from_str(&common::stdout(&out)).unwrap();
    let names: Vec<&str> = groups.as_array().unwrap().iter().map(|g| g["job"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 2, "{groups:#}");
    assert_eq!(names[0], names[1], "{groups:#}");
    assert!(names[0].starts_with("fio-basic-2pmem-") && !names[0].contains(&base[..12]), "{}", names[0]);
}
