//! The example jobs shipped in the repository's jobs/ directory load, expand to the expected atomic jobs, and select
//! the expected programs and monitors.

use culprit_job::{AtomicJob, JobFile};
use std::path::Path;

fn expand(name: &str) -> Vec<AtomicJob> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../jobs")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    JobFile::parse(&text, name)
        .and_then(|f| f.expand())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn names(jobs: &[AtomicJob]) -> Vec<String> {
    jobs.iter().map(AtomicJob::name).collect()
}

#[test]
fn example_jobs_expand_as_documented() {
    let cases: &[(&str, &[&str], &str, &[&str])] = &[
        (
            "fio-basic.yaml",
            &[
                "fio-basic-4k-0-1-psync-1-5s-randwrite-64M-true",
                "fio-basic-4k-0-1-psync-1-5s-randread-64M-true",
            ],
            "fio",
            &[],
        ),
        (
            "stress-ng.yaml",
            &[
                "stress-ng-50%-xattr-5s",
                "stress-ng-50%-dentry-5s",
                "stress-ng-50%-cpu-5s",
            ],
            "stress-ng",
            &[],
        ),
        (
            "sysbench-cpu.yaml",
            &["sysbench-cpu-20000-100%-5s"],
            "sysbench",
            &[],
        ),
        (
            "hackbench.yaml",
            &[
                "hackbench-pipe-4-1000-process-100%",
                "hackbench-socket-4-1000-process-100%",
                "hackbench-pipe-4-1000-threads-100%",
                "hackbench-socket-4-1000-threads-100%",
            ],
            "hackbench",
            &[],
        ),
        (
            "oltp.yaml",
            &[
                "oltp-1-5s-10000-oltp_read_only",
                "oltp-1-5s-10000-oltp_read_write",
                "oltp-2-5s-10000-oltp_read_only",
                "oltp-2-5s-10000-oltp_read_write",
                "oltp-4-5s-10000-oltp_read_only",
                "oltp-4-5s-10000-oltp_read_write",
            ],
            "oltp",
            &[],
        ),
        (
            "quick.yaml",
            &["quick-pipe-3-500-process-100%"],
            "hackbench",
            &["vmstat"],
        ),
    ];
    for (file, want_names, program, monitors) in cases {
        let jobs = expand(file);
        assert_eq!(names(&jobs), *want_names, "{file}");
        for job in &jobs {
            let programs: Vec<&str> = job.programs().iter().map(|p| p.name).collect();
            assert_eq!(programs, [*program], "{file}");
            let seen: Vec<&str> = job.monitors().iter().map(|m| m.name).collect();
            assert_eq!(seen, *monitors, "{file}");
        }
    }
}

#[test]
fn example_params_follow_the_conventions() {
    let fio = &expand("fio-basic.yaml")[0].programs()[0];
    assert_eq!(fio.param_size_bytes("test_size").unwrap(), Some(64 << 20));
    assert_eq!(fio.param_duration_secs("runtime").unwrap(), Some(5));
    let stress = &expand("stress-ng.yaml")[0].programs()[0];
    assert_eq!(
        stress.param_share_or_count("nr_threads", 2).unwrap(),
        Some(1)
    );
    assert_eq!(stress.param_duration_secs("testtime").unwrap(), Some(5));
    let quick = &expand("quick.yaml")[0].programs()[0];
    assert_eq!(quick.param_iterations("iterations").unwrap(), Some(3));
}
