//! Golden test: Culprit's expansion, names and params agree with every expected atomic job of lkp-tests'
//! `split-job` fixtures (tests/data/split-job, copied from lkp-tests' spec/fixtures/split-job).
//!
//! An input is `<id>.yaml`; lkp's `split-job` wrote `<id>-<path_params>.yaml` for each of its atomic jobs. The
//! expected files also carry keys Culprit does not produce: the test box's (`testbox`, `arch`, `tbox_group`,
//! `model`, from lkp's hosts and `-t lkp-tbox`), `job_origin` (a path in lkp's tree) and the `including:` and
//! `need_kconfig:` lists of include stubs that were not copied. Those are compared by nobody; everything else is.

use culprit_job::{AtomicJob, JobFile};
use serde_yaml::{Mapping, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const NOT_PRODUCED_BY_CULPRIT: &[&str] = &[
    "testbox",
    "arch",
    "tbox_group",
    "model",
    "job_origin",
    "including",
    "need_kconfig",
];

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/split-job")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn stems() -> BTreeSet<String> {
    std::fs::read_dir(data_dir())
        .expect("tests/data/split-job exists")
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            entry
                .file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".yaml"))
                .map(str::to_string)
        })
        .collect()
}

/// The params that both sides should agree on.
fn comparable(params: &Mapping) -> Mapping {
    params
        .iter()
        .filter(|(k, _)| !NOT_PRODUCED_BY_CULPRIT.contains(&k.as_str().unwrap_or_default()))
        .filter(|(k, _)| {
            !AtomicJob::is_metadata(k.as_str().unwrap_or_default())
                || matches!(k.as_str(), Some("suite" | "testcase"))
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[test]
fn every_fixture_expands_like_lkp() {
    let all = stems();
    let inputs: Vec<&String> = all.iter().filter(|s| !s.contains('-')).collect();
    assert_eq!(inputs.len(), 5, "inputs found: {inputs:?}");
    let mut outputs_checked = 0;
    for input in inputs {
        let file_name = format!("{input}.yaml");
        let job_file = JobFile::parse(&read(&data_dir().join(&file_name)), &file_name)
            .unwrap_or_else(|e| panic!("{file_name}: {e}"));
        let jobs = job_file
            .expand()
            .unwrap_or_else(|e| panic!("{file_name}: {e}"));
        let got: BTreeSet<String> = jobs.iter().map(AtomicJob::name).collect();
        let want: BTreeSet<String> = all
            .iter()
            .filter(|s| s.starts_with(&format!("{input}-")))
            .cloned()
            .collect();
        assert_eq!(got, want, "{file_name}: atomic job names");
        assert_eq!(got.len(), jobs.len(), "{file_name}: names are unique");

        for job in &jobs {
            let expected_name = format!("{}.yaml", job.name());
            let expected_text = read(&data_dir().join(&expected_name));
            let expected_file = JobFile::parse(&expected_text, &expected_name)
                .unwrap_or_else(|e| panic!("{expected_name}: {e}"));
            let expected = expected_file
                .expand()
                .unwrap_or_else(|e| panic!("{expected_name}: {e}"));
            assert_eq!(expected.len(), 1, "{expected_name} is atomic");
            let expected = &expected[0];
            assert_eq!(
                comparable(job.params()),
                comparable(expected.params()),
                "{expected_name}: params"
            );
            assert_eq!(
                job.testcase(),
                expected.testcase(),
                "{expected_name}: testcase"
            );
            assert_eq!(
                job.path_params(),
                expected.path_params(),
                "{expected_name}: path_params of the expected job"
            );
            assert_eq!(
                job.id(),
                expected.id(),
                "{expected_name}: the same workload has the same id"
            );
            // What `culprit split` writes reads back as the same job.
            let written = job.to_yaml();
            let reread = JobFile::parse(&written, &expected_name)
                .and_then(|f| f.expand())
                .unwrap_or_else(|e| panic!("{written}\n{e}"));
            assert_eq!(reread.len(), 1);
            assert_eq!(reread[0].params(), job.params(), "{written}");
            outputs_checked += 1;
        }
    }
    assert_eq!(outputs_checked, 13);
}

#[test]
fn expansion_order_follows_lkp() {
    // lkp loops over the first list (group) outermost.
    let text = read(&data_dir().join("2.yaml"));
    let jobs = JobFile::parse(&text, "2.yaml").unwrap().expand().unwrap();
    let names: Vec<String> = jobs.iter().map(AtomicJob::name).collect();
    assert_eq!(
        names,
        [
            "2-group_1-test_1",
            "2-group_1-test_2",
            "2-group_2-test_1",
            "2-group_2-test_2"
        ]
    );
    let text = read(&data_dir().join("3.yaml"));
    let jobs = JobFile::parse(&text, "3.yaml").unwrap().expand().unwrap();
    let names: Vec<String> = jobs.iter().map(AtomicJob::name).collect();
    assert_eq!(names, ["3-ext4", "3-xfs", "3-nfsv3"]);
}

#[test]
fn same_workload_from_two_files_meets() {
    // compatible.yaml is a dirty, already atomic job full of queue and host keys; its workload is 1.yaml's first.
    let one = JobFile::parse(&read(&data_dir().join("1.yaml")), "1.yaml")
        .unwrap()
        .expand()
        .unwrap();
    let compatible = JobFile::parse(
        &read(&data_dir().join("compatible.yaml")),
        "compatible.yaml",
    )
    .unwrap()
    .expand()
    .unwrap();
    assert_eq!(
        compatible.len(),
        1,
        "metadata lists such as queue_cmdline_keys do not expand"
    );
    assert_eq!(compatible[0].id(), one[0].id());
    assert_ne!(one[0].id(), one[1].id());
    assert_eq!(compatible[0].path_params(), "test_1");
    assert_eq!(
        compatible[0]
            .params()
            .get("queue_cmdline_keys")
            .map(Value::is_sequence),
        Some(true)
    );
}
