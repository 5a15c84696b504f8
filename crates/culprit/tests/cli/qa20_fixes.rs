//! Regression tests for the defects QA 20 found in the day's new features, through the real binary: the throwaway
//! servers' account shut out of a scratch directory below a closed one, and fio's CPU lists ending in a comma.

use crate::common;

use std::os::unix::fs::PermissionsExt;

/// A short oltp job on a throwaway MariaDB server, through lkp's `mysql-setup`.
const MARIADB_OLTP_JOB: &str = "suite: oltp\ntestcase: oltp\ncategory: benchmark\nruntime: 1s\nnr_threads: 1\n\
                                mysql-setup:\nsetup-oltp:\n  table_size: 100\noltp:\n  test: oltp_read_only\n";

#[test]
fn a_scratch_directory_the_server_s_account_cannot_enter_fails_saying_so_and_leaves_nothing() {
    // As root, the server runs as mysql; a scratch directory below a 0700 one (root's home, a 0700 temporary
    // directory) is owned by mysql but out of its reach. The setup failed with "mkdir: cannot create directory
    // '/root': Permission denied", naming neither the scratch directory nor what to do.
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    common::write(dir.path(), "oltp.yaml", MARIADB_OLTP_JOB);
    let scratch = dir.path().join("scratch");
    let scratch_arg = scratch.to_str().unwrap();
    let args = ["run", "oltp.yaml", "-n", "1", "--monitors", "none", "--label", "x", "--scratch", scratch_arg];
    let out = common::culprit(dir.path().join("r.db"), &args, dir.path());
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success(), "{said}");
    assert!(said.contains(&format!("setup 'chown mysql {scratch_arg}/oltp-")), "{said}");
    assert!(said.contains("the mysql account, which runs the server, cannot enter it (a directory above is closed"));
    assert!(said.contains("give --scratch a directory every account can reach, e.g. under /var/tmp, or chmod o+x"));
    assert!(!said.contains("Permission denied"), "{said}");
    assert_eq!(common::files_under(&scratch), Vec::<std::path::PathBuf>::new());
    assert_eq!(common::pids_mentioning(scratch_arg), Vec::new());

    // The same directory opened to others runs.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = common::culprit(dir.path().join("r.db"), &args, dir.path());
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{said}");
    assert!(said.contains("oltp.transactions"), "{said}");
    assert_eq!(common::pids_mentioning(scratch_arg), Vec::new());
}

#[test]
fn a_fio_cpu_list_ending_in_a_comma_runs_as_fio_reads_it() {
    // fio stops reading cpus_allowed at an empty item, so `0,` is CPU 0; Culprit refused it as "'' is no CPU number".
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: fio-basic\ntestcase: fio-basic\ncategory: benchmark\nruntime: 1s\ntime_based: tb\n\
               fio-setup-basic:\n  rw: read\n  bs: 4k\n  ioengine: sync\n  test_size: 1M\n  nr_task: 1\n\
               fio:\n  cpus_allowed_policy: split\n  cpus_allowed: '0,'\n";
    common::write(dir.path(), "fio.yaml", job);
    let scratch = dir.path().join("scratch");
    let args = ["run", "fio.yaml", "-n", "1", "--monitors", "none", "--label", "x", "--scratch"];
    let args: Vec<&str> = args.into_iter().chain([scratch.to_str().unwrap()]).collect();
    let out = common::culprit(dir.path().join("r.db"), &args, dir.path());
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{said}");
    assert!(said.contains("(1 ok, 0 failed)") && said.contains("fio.read_bw_MBps"), "{said}");
    // Two items with an empty one between them are still refused: fio would drop the CPUs after it.
    common::write(dir.path(), "fio.yaml", &job.replace("'0,'", "'0,,1'"));
    let err = common::refused(&common::culprit(dir.path().join("r.db"), &args, dir.path()));
    assert!(err.contains("'cpus_allowed' = '0,,1'") && err.contains("'' is no CPU number"), "{err}");
}
