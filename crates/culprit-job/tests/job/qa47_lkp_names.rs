//! Regressions of QA pass 47 in the job crate: lkp's multi-document files keep their first document's jobs, and
//! names follow lkp's split-job for YAML 1.1 booleans, lkp's host keys, bookkeeping and monitor options.

use culprit_job::JobFile;

/// The names of the atomic jobs `text` (read as `file`) expands into.
fn names(text: &str, file: &str) -> Vec<String> {
    let jobs = JobFile::parse(text, file).unwrap_or_else(|e| panic!("{e}")).expand().unwrap_or_else(|e| panic!("{e}"));
    jobs.iter().map(|job| job.name()).collect()
}

#[test]
fn qa47_a_first_document_naming_an_lkp_program_is_a_job_of_its_own() {
    // lkp's Job#each_jobs yields hash0 alone too: unixbench.yaml is 29 tests of its first document and execl.
    let cases: &[(&str, usize)] = &[
        ("unixbench:\n  test: [a, b, c]\n---\nunixbench:\n  test: execl\n", 4),
        ("will-it-scale:\n  test: [x, y]\n---\nwill-it-scale:\n  test: z\n", 3),
        // A first document of shared params alone, naming no program of anyone's, is still no job of its own.
        ("runtime: 3s\n---\nhackbench:\n  loops: 1\n---\nhackbench:\n  loops: 2\n", 2),
        ("fio:\n  bs: [4k, 8k]\n---\nfio:\n  bs: 1m\n", 3),
    ];
    for (text, count) in cases {
        assert_eq!(names(text, "x.yaml").len(), *count, "{text}");
    }
    let unixbench = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/lkp-jobs/unixbench.yaml"))
        .unwrap();
    assert_eq!(names(&unixbench, "unixbench.yaml").len(), 30);
}

#[test]
fn qa47_yaml_1_1_booleans_name_as_lkp_names_them() {
    // lkp's Ruby reads `on`/`yes` as true and `off`/`no` as false, and leaves false values out of its names.
    let cases: &[(&str, &str)] = &[
        ("pgbench:\n  wal_compression: on\n", "x-true"),
        ("pgbench:\n  wal_compression: yes\n", "x-true"),
        ("sysbench-memory:\n  mem_hugetlb: off\n  mem_oper: write\n", "x-write"),
        ("sysbench-memory:\n  mem_hugetlb: NO\n  mem_oper: write\n", "x-write"),
        ("sysbench-memory:\n  mem_hugetlb: false\n  mem_oper: write\n", "x-write"),
        ("hackbench:\n  mode: process\n", "x-process"),
    ];
    for (text, name) in cases {
        assert_eq!(names(text, "x.yaml"), vec![name.to_string()], "{text}");
    }
    // The value itself, and with it the job's id, keeps the text typed.
    let on = JobFile::parse("pgbench:\n  wal_compression: on\n", "x.yaml").unwrap().expand().unwrap();
    let truly = JobFile::parse("pgbench:\n  wal_compression: true\n", "x.yaml").unwrap().expand().unwrap();
    assert_ne!(on[0].id(), truly[0].id());
}

#[test]
fn qa47_host_keys_bookkeeping_ucode_and_monitor_options_are_out_of_names_and_ids() {
    let plain = "stress-ng:\n  test: xattr\ntesttime: 60s\n";
    let robot = format!(
        "{plain}cpu_info: skylake i7-6700\nbios_version: 1.2.8\nssh_base_port: 23032\nbisect_dmesg: true\n\
         ucode: '0xb000280'\nperf-c2c:\n  debug_mode: 0\nperf-sched:\n  lite_mode: 1\nperf-profile:\n  debug_mode: 0\n\
         rootfs: debian-11.1-x86_64-20220510.cgz\ncommit: 016a23388cdcb2740deb1379dc408f21c84efb11\n"
    );
    let job = |text: &str| JobFile::parse(text, "x.yaml").unwrap().expand().unwrap().remove(0);
    let (plain, robot) = (job(plain), job(&robot));
    assert_eq!(plain.name(), "x-xattr-60s");
    assert_eq!(robot.name_across_revisions(), "x-xattr-60s");
    // lkp's split-job appends the commit and rootfs to its file names; split keeps doing so.
    assert_eq!(robot.name(), "x-xattr-60s-016a23388cdcb2740deb1379dc408f21c84efb11-debian-11.1-x86_64-20220510.cgz");
    assert_eq!(plain.id(), robot.id());
}
