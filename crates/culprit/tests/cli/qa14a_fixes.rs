//! End-to-end regressions of QA pass 14a: lkp-tests' own fio and fsmark job files (copied as they are into
//! crates/culprit-job/tests/data/lkp-jobs), split and run as a user of lkp would.

use crate::common;

use crate::common::{culprit, stdout};
use std::path::{Path, PathBuf};

/// One of lkp's job files checked in as a test input.
fn lkp_job(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../culprit-job/tests/data/lkp-jobs").join(name)
}

/// `culprit split` of one of lkp's job files into `dir/out`: the files it wrote, or the refusal.
fn split(name: &str, dir: &Path) -> Result<Vec<String>, String> {
    let out_dir = dir.join("out");
    let _ = std::fs::remove_dir_all(&out_dir);
    let job = lkp_job(name);
    let out = culprit("t.db", &["split", job.to_str().unwrap(), "-o", out_dir.to_str().unwrap()], dir);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let mut written: Vec<String> = std::fs::read_dir(&out_dir)
        .map(|entries| entries.map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap()).collect())
        .unwrap_or_default();
    written.sort();
    Ok(written)
}

#[test]
fn qa14a_lkps_settings_of_the_test_box_split_in_any_shape() {
    // `fs: {fs: [ext4, xfs], mount_option: dax}` was refused as a param that "holds a hash", `boot_params: {...}`,
    // `ndctl:`, `numactl:`, `drop_caches:`, `cgroup2:` ... as "not a program or monitor Culprit knows", fsmark's
    // `fs2: [nfsv4, ~]` as a param with no value, and `md: RAID0` and `debug-setup: tune` as unused params.
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "fio-basic-2pmem-dax-256g.yaml",
        "fio-basic-2pmem.yaml",
        "fio-basic-pagecache-demo.yaml",
        "fsmark-3hdd-raid-nfs.yaml",
    ] {
        let written = split(name, dir.path()).unwrap_or_else(|err| panic!("{name}: {err}"));
        assert!(!written.is_empty(), "{name}");
    }
    // The settings are recorded in the jobs written, and count in their names as in lkp's result paths.
    let written = split("fio-basic-2pmem-dax-256g.yaml", dir.path()).unwrap();
    assert!(written.iter().any(|job| job.contains("  fs: xfs\n  mount_option: dax\n")), "{}", written[0]);
    assert!(written.iter().all(|job| job.contains("bp1_memmap: 104G!8G")), "{}", written[0]);
    // A misspelt setting still gets "did you mean", as a misspelt program or monitor does.
    common::write(dir.path(), "typo.yaml", "suite: x\ndrop_cache:\nhackbench:\n  loops: 10\n");
    let err = common::refused(&culprit("t.db", &["run", "typo.yaml"], dir.path()));
    assert!(err.contains("typo.yaml:2: 'drop_cache' is not a program") && err.contains("'drop_caches'?"), "{err}");
}

#[test]
fn qa14a_setup_that_changes_the_machine_is_said_not_applied() {
    // lkp drops the caches, binds the benchmark with numactl and sets sysctls before it runs; Culprit does none of
    // that, and a run of such a job must say so rather than measure the machine as it is without a word.
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: x\ndisk: 1SSD\nfs2:\n  - nfsv4\n  -\nnumactl:\n  interleave: '1,3'\ndrop_caches:\nsysctl:\n  \
               sc_numa_balancing: 0\ncommand:\n  cmd: 'true'\n";
    common::write(dir.path(), "setup.yaml", job);
    let run = ["run", "setup.yaml", "-n", "1", "--label", "a", "--monitors", "none"];
    let out = culprit("t.db", &run, dir.path());
    stdout(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    let listed = "disk: 1SSD; drop_caches; fs2: nfsv4; numactl: interleave=1,3; sysctl: sc_numa_balancing=0 are \
                  recorded with the runs but not applied";
    assert!(err.contains(listed), "{err}");
    let not_done = "binds the benchmark to no NUMA policy (numactl) and drops no caches before the runs";
    assert!(err.contains(not_done), "{err}");
}

#[test]
fn qa14a_lkps_fio_options_split() {
    // fio-basic-1ssd-read.yaml gives buffered, invalidate, norandommap, cpus_allowed ... and local-disk's kind give
    // testfile: each was "fio has no param".
    let dir = tempfile::tempdir().unwrap();
    let written = split("fio-basic-1ssd-read.yaml", dir.path()).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(written.len(), 1);
    assert!(written[0].contains("  buffered: 0\n") && written[0].contains("  cpus_allowed: 0-127\n"), "{}", written[0]);
}

#[test]
fn qa14a_what_cannot_run_here_is_refused_at_its_line() {
    // fio on a device-dax namespace (raw_disk) and lkp's several instances at once cannot run here: each is refused
    // with its line and what to do, not with "not a program or monitor Culprit knows" for the setup around it. Since
    // QA 47 split writes such jobs all the same, for lkp, as lkp's split-job does, and warns with that refusal.
    let dir = tempfile::tempdir().unwrap();
    let warned = |name: &str, count: usize| -> String {
        let out_dir = dir.path().join(name);
        let job = lkp_job(name);
        let out = culprit("t.db", &["split", job.to_str().unwrap(), "-o", out_dir.to_str().unwrap()], dir.path());
        stdout(&out);
        assert_eq!(std::fs::read_dir(&out_dir).unwrap().count(), count, "{name}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = warned("fio-basic-2pmem-device-dax-256g.yaml", 24);
    assert!(err.contains("culprit run refuses 24 of the 24 atomic jobs written"), "{err}");
    assert!(err.contains("fio-basic-2pmem-device-dax-256g.yaml:21"), "{err}");
    assert!(err.contains("'raw_disk' = 'rd'") && err.contains("remove raw_disk to measure files"), "{err}");
    assert!(!err.contains("not a program or monitor"), "{err}");
    let err = warned("fio-basic-cgroup2-fairness.yaml", 1);
    assert!(err.contains("fio-basic-cgroup2-fairness.yaml:33"), "{err}");
    assert!(err.contains("'nr_instances' = '2'") && err.contains("Culprit runs one per run"), "{err}");
}

#[test]
fn qa14a_a_job_two_documents_give_alike_is_taken_once() {
    // fio-basic-1ssd-write.yaml's fourth document gives again a job of its first (ext4, io_uring, write): lkp's
    // split-job writes that file twice, and Culprit refused the whole file as two jobs "both named" alike.
    let dir = tempfile::tempdir().unwrap();
    let written = split("fio-basic-1ssd-write.yaml", dir.path()).unwrap_or_else(|err| panic!("{err}"));
    let mut unique = written.clone();
    unique.dedup();
    assert_eq!(unique.len(), written.len());
    // Jobs that differ but share a name are still refused.
    common::write(dir.path(), "same.yaml", "suite: x\nhackbench:\n  loops: 10\n---\nhackbench:\n  loops: 10\n");
    let out = culprit("t.db", &["split", "same.yaml", "-o", "same"], dir.path());
    assert_eq!(stdout(&out).lines().count(), 1);
    common::write(dir.path(), "clash.yaml", "suite: x\nhackbench:\n  loops: 10\n---\nhackbench:\n  loops: '10'\n");
    let err = common::refused(&culprit("t.db", &["split", "clash.yaml", "-o", "clash"], dir.path()));
    assert!(err.contains("both named"), "{err}");
}

#[test]
fn qa14a_perf_profiles_delay_is_taken() {
    // lkp's fsmark jobs give `perf-profile: {delay: 10}`, refused as "option 'delay' is not accepted".
    let dir = tempfile::tempdir().unwrap();
    let written = split("fsmark-stress-journal-1brd.yaml", dir.path()).unwrap_or_else(|err| panic!("{err}"));
    assert!(written.iter().all(|job| job.contains("perf-profile:\n  delay: 10\n")), "{}", written[0]);
}

#[test]
fn lkps_templates_are_computed_per_matrix_point_also_in_an_included_file() {
    // lkp's `{{ expression }}` templates were refused (fsmark.yaml, fsmark-1hdd-400m.yaml, fsmark-4hdd-raid.yaml and,
    // through fsmark.yaml, fsmark-1ssd.yaml); they are computed per matrix point as lkp's Ruby computes them.
    let dir = tempfile::tempdir().unwrap();
    let test_size = |job: &str| job.lines().find_map(|l| l.strip_prefix("  test_size: ")).map(str::to_string);
    // fsmark-1ssd is `<<: {file: fsmark.yaml, disk: '1SSD'}`: fsmark.yaml's template cases on the filesize, and its
    // `when '16MB'` matches no filesize of the file (16M), so lkp's Ruby gives nil there and lkp makes no job of those
    // points: 3 filesizes x 2 sync methods x 3 fs x 2 fs2, less the 12 of 16M.
    let written = split("fsmark-1ssd.yaml", dir.path()).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(written.len(), 24);
    for job in &written {
        let expected = if job.contains("filesize: 9B") { "256M" } else { "1G" };
        assert!(job.contains("filesize: 9B") || job.contains("filesize: 8K"), "{job}");
        assert_eq!(test_size(job).as_deref(), Some(expected), "{job}");
        assert!(job.contains("disk: 1SSD\n"), "{job}");
    }
    // fsmark-1hdd-400m cases on fs, and inside on fs2 (nfsv4 or nothing).
    let written = split("fsmark-1hdd-400m.yaml", dir.path()).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(written.len(), 18);
    for job in &written {
        let nfs = job.contains("fs2: nfsv4");
        let expected = match (job.contains("\nfs: btrfs\n"), nfs) {
            (true, true) => "200M",
            (true, false) => "400M",
            (false, true) => "50M",
            (false, false) => "100M",
        };
        assert_eq!(test_size(job).as_deref(), Some(expected), "{job}");
    }
    // fsmark-4hdd-raid's third document writes its template quoted, `fsmark.test_size: "{{ md == 'BRAID6' ? '24G':
    // '130G' }}"`, for md BRAID0, BRAID5 and BRAID6; its first two documents give sizes of their own.
    let written = split("fsmark-4hdd-raid.yaml", dir.path()).unwrap_or_else(|err| panic!("{err}"));
    let sizes: Vec<(String, String)> = written
        .iter()
        .map(|job| {
            let md = job.lines().find_map(|l| l.strip_prefix("md: ")).unwrap_or_default().to_string();
            (md, test_size(job).unwrap_or_default())
        })
        .collect();
    let expected_sizes = [("RAID0", "200G"), ("RAID5", "70G"), ("BRAID0", "130G"), ("BRAID5", "130G"), ("BRAID6", "24G")];
    for (md, expected) in expected_sizes {
        let of_md: Vec<&String> = sizes.iter().filter(|(m, _)| m == md).map(|(_, size)| size).collect();
        assert!(!of_md.is_empty() && of_md.iter().all(|size| *size == expected), "{md}: {sizes:?}");
    }
    // A template that cannot be computed is refused at its line, in the file it was written in.
    let d = dir.path();
    common::write(d, "sizes.yaml", "fsmark:\n  filesize: [4K, 8K]\n  test_size: {{\n    fsmark.file_size\n  }}\n");
    common::write(d, "job.yaml", "suite: fsmark\n<<: sizes.yaml\nfs: xfs\n");
    let err = common::refused(&culprit("t.db", &["split", "job.yaml", "-o", "out"], d));
    assert!(err.contains("sizes.yaml:3: cannot compute the '{{ }}' template of 'fsmark.test_size'"), "{err}");
    assert!(err.contains("'fsmark' has no key 'file_size'"), "{err}");
}

#[test]
fn an_lkp_fio_job_without_buffered_is_said_to_run_unlike_lkps_o_direct() {
    // lkp's fio-setup-basic writes `buffered=0` when a job gives no `buffered`, and fio then opens its files O_DIRECT
    // whatever `direct` says; Culprit runs the job as written (buffered), which measured another I/O path than the
    // robot's without a word. A job that gives `buffered` is run as it says, with nothing to note.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let lkp_form = "suite: fio-basic\nfio-setup-basic:\n  rw: randwrite\n  bs: 4k\n  test_size: 4M\n  runtime: 1s\nfio:\n";
    let note = "lkp ran this job with O_DIRECT whatever its direct says";
    for (name, text, noted) in [
        ("lkp.yaml", lkp_form.to_string(), true),
        ("given.yaml", lkp_form.replace("  runtime: 1s\n", "  runtime: 1s\n  buffered: 0\n"), false),
        ("plain.yaml", "suite: fio-basic\nfio:\n  rw: randwrite\n  test_size: 4M\n  runtime: 1s\n".to_string(), false),
    ] {
        std::fs::write(d.join(name), text).unwrap();
        let out = culprit(d.join("r.db"), &["run", name, "-n", "1", "--label", name, "--monitors", "none"], d);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{name}: {stderr}");
        assert_eq!(stderr.contains(note), noted, "{name}: {stderr}");
    }
}
