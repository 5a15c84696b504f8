//! Regressions of QA pass 48 in the job crate: a quoted `'on'`/`"off"` is text to lkp's Ruby (YAML 1.1 reads only
//! plain words as booleans), so job names keep it as typed; plain words still name as lkp's booleans. The expected
//! names are those lkp's own `sbin/split-job` (lkp-tests bbbc29c4) wrote for these very files.

use culprit_job::JobFile;

fn jobs(text: &str) -> Vec<culprit_job::AtomicJob> {
    JobFile::parse(text, "x.yaml").unwrap_or_else(|e| panic!("{e}")).expand().unwrap_or_else(|e| panic!("{e}"))
}

fn names(text: &str) -> Vec<String> {
    jobs(text).iter().map(|job| job.name()).collect()
}

#[test]
fn qa48_quoted_yaml_1_1_words_name_as_the_text_typed() {
    let cases: &[(&str, &[&str])] = &[
        ("pgbench-setup:\n  wal_compression: 'on'\n  scale_factor: 1\npgbench:\n", &["x-1-on"]),
        ("pgbench-setup:\n  wal_compression: on\n  scale_factor: 1\npgbench:\n", &["x-1-true"]),
        ("pgbench-setup:\n  wal_compression: \"on\"  # a comment\n  scale_factor: 1\npgbench:\n", &["x-1-on"]),
        ("sysbench-memory:\n  mem_hugetlb: \"off\"\n  mem_operation: write\n", &["x-off-write"]),
        ("sysbench-memory:\n  mem_hugetlb: off\n  mem_operation: write\n", &["x-write"]),
        // A list mixes them item by item, in flow and in block style.
        ("sysbench-memory:\n  mem_hugetlb: ['off', on]\n  mem_operation: write\n", &["x-off-write", "x-true-write"]),
        ("pgbench-setup:\n  wal_compression:\n  - 'yes'\n  - no\n  scale_factor: 1\npgbench:\n", &["x-1-yes", "x-1"]),
    ];
    for (text, want) in cases {
        assert_eq!(names(text), want.iter().map(|n| n.to_string()).collect::<Vec<_>>(), "{text}");
    }
}

#[test]
fn qa48_a_split_job_names_and_identifies_as_the_job_it_came_from() {
    // split writes a plain word plain again (lkp's Ruby reads it as the boolean it read in the job file) and a quoted
    // one quoted, so the written file names and identifies its job as the original did.
    for text in [
        "pgbench-setup:\n  wal_compression: on\n  scale_factor: 1\npgbench:\n",
        "pgbench-setup:\n  wal_compression: 'on'\n  scale_factor: 1\npgbench:\n",
        "pgbench-setup:\n  wal_compression:\n  - 'yes'\n  - no\n  scale_factor: 1\npgbench:\n",
    ] {
        for job in jobs(text) {
            let written = job.to_yaml();
            let again = JobFile::parse(&written, "x.yaml").unwrap_or_else(|e| panic!("{e}\n{written}")).expand().unwrap();
            assert_eq!(again.len(), 1, "{written}");
            assert_eq!(again[0].name(), job.name(), "{written}");
            assert_eq!(again[0].id(), job.id(), "{written}");
        }
    }
    let plain = jobs("pgbench-setup:\n  wal_compression: on\npgbench:\n").remove(0).to_yaml();
    assert!(plain.contains("  wal_compression: on\n"), "{plain}");
    let quoted = jobs("pgbench-setup:\n  wal_compression: 'on'\npgbench:\n").remove(0).to_yaml();
    assert!(quoted.contains("  wal_compression: 'on'\n"), "{quoted}");
}
