//! Atomic jobs: path_params, names, ids, programs, monitors and the run layer's validation hook.

use culprit_job::{AtomicJob, JobFile, KeyProblem};
use proptest::prelude::*;

fn jobs(text: &str, file: &str) -> Vec<AtomicJob> {
    JobFile::parse(text, file)
        .unwrap_or_else(|e| panic!("{e}"))
        .expand()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn one(text: &str) -> AtomicJob {
    let mut all = jobs(text, "jobs/t.yaml");
    assert_eq!(all.len(), 1, "{text}");
    all.remove(0)
}

#[test]
fn path_params_table() {
    let cases: &[(&str, &str)] = &[
        // Values sorted by key name, metadata left out.
        ("suite: fio\ntestcase: fio\nfio-setup-basic:\n  rw: randwrite\n  bs: 4k\nruntime: 5s\nfio:\n", "4k-5s-randwrite"),
        // lkp's sysbench-cpu job: cpu_max_prime, nr_threads, runtime.
        ("suite: sysbench-cpu\nruntime: 300s\nnr_threads: 100%\nsysbench-cpu:\n  cpu_max_prime: 20000\n", "20000-100%-300s"),
        // Nothing but metadata and empty program keys.
        ("suite: hackbench\ncategory: benchmark\nhackbench:\ntestbox: vm\n", "defaults"),
        // Monitors and their options never count.
        ("hackbench:\n  mode: process\nperf-profile:\n  freq: 800\nvmstat:\n", "process"),
        // Unsafe characters become '_', safe ones stay.
        ("command:\n  cmd: 'sleep 1; echo a/b'\nratio: 'x=1:2.5%+'\n", "sleep_1__echo_a_b-x=1:2.5%+"),
        // Values are cut to 31 characters before mapping.
        ("command:\n  cmd: 'abcdefghijklmnopqrstuvwxyz0123456789'\n", "abcdefghijklmnopqrstuvwxyz01234"),
        // false and empty values are left out, as in lkp; numbers and true are written as text.
        ("fio:\n  direct: 1\n  buffered: false\n  invalidate: true\n  testfile:\n", "1-true"),
        // The host's keys (compatible.yaml style) never count.
        ("nr_cpu: 20\nmemory: 16G\nmodel: x\nneed_memory: 1G\nqueue: bisect\nkconfig: k\nhackbench:\n  ipc: pipe\n", "pipe"),
        // Equal keys at different depths keep file order.
        ("test: top\nstress-ng:\n  test: nested\n", "top-nested"),
    ];
    for (text, want) in cases {
        assert_eq!(one(text).path_params(), *want, "{text}");
    }
}

#[test]
fn names_testcase_and_revisions() {
    let job = one("suite: split\nhackbench:\n  mode: threads\ncommit: abc123\nrootfs: /osimage/debian/debian-12-x86_64.cgz\n");
    assert_eq!(job.name(), "t-threads-abc123-debian-12-x86_64.cgz");
    assert_eq!(job.testcase(), "split");
    assert_eq!(one("testcase: a\nsuite: b\nhackbench:\n").testcase(), "a");
    assert_eq!(one("hackbench:\n").testcase(), "t");
}

#[test]
fn ids_are_stable_and_ignore_metadata() {
    let a = one(
        "suite: x\ntestbox: host1\ncommit: c1\nhackbench:\n  mode: process\n  loops: 4\nvmstat:\n",
    );
    let b = one("hackbench:\n  loops: '4'\n  mode: process\ncommit: c2\nnr_cpu: 8\n");
    let c = one("hackbench:\n  loops: 5\n  mode: process\n");
    assert_eq!(
        a.id(),
        b.id(),
        "key order, text vs number, metadata and monitors do not change the id"
    );
    assert_ne!(a.id(), c.id());
    assert_eq!(a.id().len(), 16);
    assert!(a.id().chars().all(|c| c.is_ascii_hexdigit()));
    // Pinned, so an accidental change of the canonical form (which would orphan stored results) fails here.
    assert_eq!(
        a.normalized_params().to_string(),
        r#"{"hackbench":{"loops":"4","mode":"process"}}"#
    );
}

#[test]
fn programs_merge_params_in_lkp_order() {
    let job = one("suite: fio-basic\nruntime: 300s\nnr_threads: 50%\nfio-setup-basic:\n  rw: randwrite\n  bs: 4k\n  runtime: 5s\nfio:\n  bs: 8k\nvmstat:\nperf-profile:\n  freq: 800\n");
    let programs = job.programs();
    assert_eq!(programs.len(), 1);
    let fio = &programs[0];
    assert_eq!((fio.name, fio.key.as_str()), ("fio", "fio"));
    let text = fio.params_text();
    let pairs: Vec<(&str, &str)> = text.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(
        pairs,
        [
            ("bs", "8k"),
            ("nr_threads", "50%"),
            ("runtime", "5s"),
            ("rw", "randwrite")
        ]
    );
    assert_eq!(fio.param_size_bytes("bs").unwrap(), Some(8192));
    assert_eq!(fio.param_duration_secs("runtime").unwrap(), Some(5));
    assert_eq!(fio.param_share_or_count("nr_threads", 4).unwrap(), Some(2));
    assert_eq!(fio.param_str("missing").unwrap(), None);
    let monitors = job.monitors();
    let names: Vec<&str> = monitors.iter().map(|m| m.name).collect();
    assert_eq!(names, ["vmstat", "perf-profile"]);
    assert!(monitors[0].options.is_empty());
    assert_eq!(
        monitors[1].param_str("freq").unwrap().as_deref(),
        Some("800")
    );
}

#[test]
fn aliases_select_programs() {
    let job = one("sysbench-cpu:\n  cpu_max_prime: 20000\nfs_mark:\n  test: override\n");
    let programs = job.programs();
    let seen: Vec<(&str, &str)> = programs.iter().map(|p| (p.name, p.key.as_str())).collect();
    assert_eq!(seen, [("sysbench", "sysbench-cpu"), ("fsmark", "fs_mark")]);
    assert_eq!(
        programs[0].param_str("test").unwrap().as_deref(),
        Some("cpu")
    );
    assert_eq!(
        one("sysbench-cpu:\n  test: threads\n").programs()[0]
            .param_str("test")
            .unwrap()
            .as_deref(),
        Some("threads")
    );
    assert!(
        one("suite: x\n").monitors().is_empty(),
        "no monitor keys: the run layer applies its defaults"
    );
}

#[test]
fn unknown_keys_for_the_run_layer() {
    let accepts = |owner: &str, key: &str| match owner {
        "fio" => ["rw", "bs", "runtime", "nr_threads"].contains(&key),
        "perf-profile" => key == "freq",
        _ => false,
    };
    let text = "suite: fio\nruntime: 5s\nwobble: 3\nfio-setup-basic:\n  rw: randwrite\n  bz: 4k\nfio:\n\
                perf-profile:\n  frq: 800\nnetperf:\ntuned:\n  a: 1\nsysctl:\n  a: 1\n";
    // lkp's `sysctl:` setup is a setting of the test box, recorded and not applied, so it is no problem here.
    let job = JobFile::parse(text, "jobs/x.yaml")
        .unwrap()
        .expand()
        .unwrap()
        .remove(0);
    let problems: Vec<String> = job
        .unknown_keys(&accepts)
        .iter()
        .map(KeyProblem::to_string)
        .collect();
    assert_eq!(problems.len(), 5, "{problems:#?}");
    assert!(
        problems[0].starts_with(
            "jobs/x.yaml:3: top-level param 'wobble' is not used by any selected program (fio)"
        ),
        "{}",
        problems[0]
    );
    assert!(
        problems[1].starts_with("jobs/x.yaml:6: fio-setup-basic has no param 'bz'"),
        "{}",
        problems[1]
    );
    assert!(
        problems[2].starts_with("jobs/x.yaml:9: perf-profile has no param 'frq'"),
        "{}",
        problems[2]
    );
    // netperf is lkp's own benchmark, spelt right: the message sends the job to lkp rather than advising to remove it.
    assert!(
        problems[3].starts_with("jobs/x.yaml:10: 'netperf' is an lkp program that culprit run does not run")
            && problems[3].contains("run this job with lkp")
            && !problems[3].contains("remove it"),
        "{}",
        problems[3]
    );
    assert!(
        problems[4].starts_with("jobs/x.yaml:11: 'tuned' is not a program"),
        "{}",
        problems[4]
    );

    let orphan = one("fio-setup-basic:\n  rw: read\n");
    let problems: Vec<String> = orphan
        .unknown_keys(&|_, _| true)
        .iter()
        .map(KeyProblem::to_string)
        .collect();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems[0].contains("selects no benchmark program"),
        "{}",
        problems[0]
    );
    assert!(problems[1].contains("add a line 'fio:'"), "{}", problems[1]);
    assert!(one("hackbench:\n  mode: process\n")
        .unknown_keys(&|_, _| true)
        .is_empty());
}

#[test]
fn multi_document_files_follow_lkp() {
    // lkp's dbench.yaml shape: hash0 alone, then hash0 + hash1 expanded.
    let text = "suite: dbench\nnr_threads: 100%\ndbench:\n---\ndisk: 1HDD\nfs: [btrfs, ext4]\n";
    let names: Vec<String> = jobs(text, "dbench.yaml")
        .iter()
        .map(AtomicJob::name)
        .collect();
    assert_eq!(
        names,
        [
            "dbench-100%",
            "dbench-1HDD-btrfs-100%",
            "dbench-1HDD-ext4-100%"
        ]
    );
}

#[test]
fn written_jobs_read_back() {
    for job in jobs("suite: fio\nfio-setup-basic:\n  rw: [randwrite, randread]\n  bs: 4k\n  testfile: y\nfio:\nperf-stat:\n  events: [cpu-clock, task-clock]\n", "f.yaml") {
        let written = job.to_yaml();
        assert!(written.starts_with("---\n#! f.yaml\n"), "{written}");
        let again = JobFile::parse(&written, &format!("{}.yaml", job.name())).unwrap().expand().unwrap();
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].params(), job.params());
        assert_eq!(again[0].id(), job.id());
        assert_eq!(again[0].path_params(), job.path_params());
        // A split file run as it is keeps the name of the job it came from (it printed f-4k-randwrite-4k-randwrite).
        assert_eq!(again[0].name(), job.name());
        // So does its job.yaml read back from a result root as the file it came from; read under another name that
        // its job_origin does not explain, it is named after that file, as lkp's split-job names them.
        let from_origin = JobFile::parse(&written, "f.yaml").unwrap().expand().unwrap();
        assert_eq!(from_origin[0].name(), job.name());
        let other = JobFile::parse(&written, "g.yaml").unwrap().expand().unwrap();
        assert_eq!(other[0].name(), format!("g-{}", job.path_params()));
    }
}

#[test]
fn a_job_written_under_the_stem_of_its_name_reads_back_with_its_name_and_its_params_once() {
    // lkp's job.yaml of an imported run names its job `<testcase>-<path_params>` while its job_origin is another file
    // (fsmark-generic-brd.yaml): written to `<name>.yaml` and read back, it was named `<name>-<path_params>`, its
    // params twice.
    let lkp = "suite: fsmark\ntestcase: fsmark\niterations: 1x\nnr_threads: 16d\nfsmark:\n  filesize: 4M\n\
               job_origin: fsmark-generic-brd.yaml\n";
    let job = &jobs(lkp, "job.yaml")[0];
    let name = format!("fsmark-{}", job.path_params());
    assert_eq!(name, "fsmark-4M-1x-16d");
    let doubled = &jobs(lkp, &format!("{name}.yaml"))[0];
    assert_eq!(doubled.name(), "fsmark-4M-1x-16d-4M-1x-16d", "the case this guards against");
    let stem = job.stem_named(&name).unwrap();
    assert_eq!(stem, "fsmark");
    assert_eq!(jobs(lkp, &format!("{stem}.yaml"))[0].name(), name);
    // A job named after a file that already carried its params (run as `sng-1-cpu.yaml` without job_origin) keeps
    // that name, its file named once.
    let own = "suite: stress-ng\nstress-ng:\n  test: cpu\n  nr_threads: 1\n";
    let run = &jobs(own, "sng-1-cpu.yaml")[0];
    assert_eq!(run.name(), "sng-1-cpu-1-cpu");
    let written = run.to_yaml();
    let stem = run.stem_named(&run.name()).unwrap();
    assert_eq!(stem, "sng-1-cpu");
    assert_eq!(jobs(&written, &format!("{stem}.yaml"))[0].name(), run.name());
    // A name that does not end with the job's params, or one its job_origin would rename, has no such stem.
    assert_eq!(job.stem_named("fsmark-other"), None);
    assert_eq!(job.stem_named(&format!("fsmark-generic-brd-x-{}", job.path_params())), None);
}

proptest! {
    /// The number of atomic jobs is the product of the list lengths, at top level and inside a program hash, and
    /// every produced job is distinct.
    #[test]
    fn expansion_count_is_the_product(top in prop::collection::vec(1usize..4, 0..4), nested in prop::collection::vec(1usize..4, 0..3)) {
        let mut text = String::from("suite: p\n");
        for (i, len) in top.iter().enumerate() {
            let values: Vec<String> = (0..*len).map(|v| format!("t{i}v{v}")).collect();
            text.push_str(&format!("top{i}: [{}]\n", values.join(", ")));
        }
        text.push_str("stress-ng:\n");
        for (i, len) in nested.iter().enumerate() {
            let values: Vec<String> = (0..*len).map(|v| format!("n{i}v{v}")).collect();
            text.push_str(&format!("  opt{i}: [{}]\n", values.join(", ")));
        }
        let file = JobFile::parse(&text, "p.yaml").unwrap();
        let expected: usize = top.iter().chain(nested.iter()).product();
        let jobs = file.expand().unwrap();
        prop_assert_eq!(jobs.len(), expected);
        prop_assert_eq!(file.count_atomic_jobs().unwrap(), expected as u128);
        let ids: std::collections::BTreeSet<String> = jobs.iter().map(AtomicJob::id).collect();
        prop_assert_eq!(ids.len(), expected);
    }
}

#[test]
fn capture_regexes_stay_out_of_names_but_in_ids() {
    let with = culprit_job::JobFile::parse("suite: s\ncommand:\n  cmd: ./bench\n  capture:\n    ops: 'ops: ([0-9.]+)'\n", "b.yaml")
        .unwrap()
        .expand()
        .unwrap();
    let without = culprit_job::JobFile::parse("suite: s\ncommand:\n  cmd: ./bench\n", "b.yaml").unwrap().expand().unwrap();
    assert_eq!(with[0].path_params(), "._bench");
    assert_ne!(with[0].id(), without[0].id());
    // The regexes stay out of the name, but the name says that something was left out, with the job's id: two jobs
    // of one command that read its output differently are two jobs, and were one name in every listing (QA 45).
    assert_eq!(without[0].name(), "b-._bench");
    assert_eq!(with[0].name(), format!("b-._bench~{}", &with[0].id()[..8]));
}

#[test]
fn names_cut_by_lkps_31_characters_end_with_the_jobs_id_and_differ_where_the_jobs_do() {
    // QA 45: two command jobs whose commands differ past lkp's cut had one name, `fl-bash_-c__echo_ops:____RANDOM%10`.
    let job = |cmd: &str| {
        let text = format!("suite: fl\ncommand:\n  cmd: \"{cmd}\"\n");
        culprit_job::JobFile::parse(&text, "fl.yaml").unwrap().expand().unwrap().remove(0)
    };
    let (a, b) = (job("perf bench sched pipe -l 100000 -T"), job("perf bench sched pipe -l 100000 -G"));
    assert_eq!(a.path_params(), b.path_params(), "lkp's path_params are kept as lkp makes them");
    assert_eq!(a.path_params(), "perf_bench_sched_pipe_-l_100000");
    assert_ne!(a.name(), b.name());
    assert_eq!(a.name(), format!("fl-perf_bench_sched_pipe_-l_100000~{}", &a.id()[..8]));
    // The same job has the same name every time it is read.
    assert_eq!(a.name(), job("perf bench sched pipe -l 100000 -T").name());
    // A value within the 31 characters is whole in the name, which needs no id.
    assert_eq!(job("perf bench sched pipe").name(), "fl-perf_bench_sched_pipe");
    // A file written under the name reads back as the job of that name, the id not doubled (`split`, track).
    let stem = a.stem_named(&a.name()).unwrap();
    assert_eq!(stem, "fl");
    // So does the name the job was stored under before names ended with the id (track --bisect of its old runs).
    assert_eq!(a.stem_named("fl-perf_bench_sched_pipe_-l_100000").as_deref(), Some("fl"));
}

#[test]
fn a_programs_param_is_placed_on_its_own_line() {
    let job = one("suite: x\nruntime: 5\ncommand:\n  cmd: true\n  capture:\n    ops: 'ops ([0-9]+)'\n  executions: abc\n");
    let uses = job.programs();
    let command = &uses[0];
    assert_eq!(command.place_of("executions").to_string(), "jobs/t.yaml:7");
    // A flattened nested key is placed at its own line (QA 58; at its outer key before), a top-level param at its
    // own line; a nested key written nowhere at its outer key.
    assert_eq!(command.place_of("capture.ops").to_string(), "jobs/t.yaml:6");
    assert_eq!(command.place_of("capture.nothing").to_string(), "jobs/t.yaml:5");
    assert_eq!(command.place_of("runtime").to_string(), "jobs/t.yaml:2");
    // A key written nowhere is placed at the program's key.
    assert_eq!(command.place_of("nothing").to_string(), "jobs/t.yaml:3");
}

#[test]
fn settings_of_the_test_box_are_recorded_not_given_to_programs() {
    // lkp's fsmark-3hdd-raid-nfs.yaml and fio-basic-2pmem-dax-256g.yaml set the box up with `md: RAID0`, a hash for
    // `fs`, an empty `fs2` and setup scripts of no value; each was refused as an unused param, a param holding a
    // hash, or an unknown program.
    let job = one("md: RAID0\nfs:\n  fs: ext4\n  mount_option: dax\nfs2:\ndrop_caches:\nnr_threads: 1\nfsmark:\n");
    assert_eq!(job.unknown_keys(&|_, key| key == "nr_threads"), Vec::new());
    let params = &job.programs()[0].params;
    assert!(params.contains_key("nr_threads") && !params.contains_key("md"), "{params:?}");
    // They name the job as lkp's result paths do, ordered by key (fs, md, mount_option, nr_threads).
    assert_eq!(job.path_params(), "ext4-RAID0-dax-1");
    // A key that is no setting, holding a hash, is still an unknown program.
    let problems = one("sysctll:\n  a: 1\nfsmark:\n").unknown_keys(&|_, key| key == "nr_threads");
    let unknown = matches!(problems.as_slice(), [KeyProblem::UnknownProgram { key, .. }] if key == "sysctll");
    assert!(unknown, "{problems:?}");
}

#[test]
fn lkps_mysql_setup_asks_oltp_for_mariadb_unless_the_job_says_otherwise() {
    // lkp's jobs/oltp.yaml starts MySQL with an empty `mysql-setup:`; Culprit's oltp starts its throwaway MariaDB for
    // `db_driver: mysql`, which the key gives it, below the job's own params.
    let lkp = "mysql-setup:\nsetup-oltp:\n  table_size: 1000000\noltp:\n";
    let driver = |text: &str| one(text).programs()[0].param_str("db_driver").unwrap();
    assert_eq!(driver(lkp).as_deref(), Some("mysql"));
    assert_eq!(driver(&format!("{lkp}  db_driver: pgsql\n")).as_deref(), Some("pgsql"));
    assert_eq!(driver(&format!("db_driver: pgsql\n{lkp}")).as_deref(), Some("pgsql"));
    assert_eq!(driver("oltp:\n"), None, "without mysql-setup the program chooses");
    // A db_driver given without a value does not take mysql-setup's back (it ran the job on PostgreSQL, silently).
    assert_eq!(driver(&format!("{lkp}  db_driver:\n")).as_deref(), Some("mysql"));
    assert_eq!(driver("oltp:\n  db_driver:\n"), None);
    // The job's id is that of the workload it runs: lkp's job is the one that says `db_driver: mysql`, and not the
    // one told PostgreSQL, whichever way it says so (lkp's oltp.yaml ran on PostgreSQL before, under the id of its
    // text alone, and those runs must not meet the MariaDB ones).
    let id = |text: &str| one(text).id();
    assert_eq!(id(lkp), id(&format!("{lkp}  db_driver: mysql\n")));
    assert_eq!(id(lkp), id(&format!("{lkp}  db_driver:\n")));
    assert_ne!(id(lkp), id(&format!("{lkp}  db_driver: pgsql\n")));
    assert_ne!(id(lkp), id(&format!("db_driver: pgsql\n{lkp}")));
    assert_eq!(id("mysql-setup:\noltp:\n"), id("mysql-setup:\noltp:\n  db_driver: mysql\n"));
    assert_ne!(id("oltp:\n"), id("oltp:\n  db_driver: mysql\n"), "without mysql-setup nothing is implied");
    // Another program is given nothing, and the key still names the job as lkp's result paths do.
    let job = one("mysql-setup:\nnr_threads: 1\nfsmark:\n");
    assert!(!job.programs()[0].params.contains_key("db_driver"));
    assert_eq!(job.unknown_keys(&|_, key| key == "nr_threads"), Vec::new());
}
