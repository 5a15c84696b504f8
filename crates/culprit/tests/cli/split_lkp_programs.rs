//! `culprit split` of lkp job files whose program Culprit does not run (qa45 item 7): lkp's own split-job fixtures and
//! a will-it-scale job are written as lkp's split-job writes them, with a warning once per such program, and the
//! message `culprit run` gives for a well-known lkp program no longer advises removing it; a malformed file is still
//! refused with nothing written.

use crate::common::{culprit, files_under, refused, stdout, write};
use serde_yaml::{Mapping, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// lkp-tests' spec/fixtures/split-job, as culprit-job's golden test reads it.
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../culprit-job/tests/data/split-job")
}

/// Keys of lkp's expected files that come from lkp's environment, not from the job file: the test box given with
/// `-t lkp-tbox` (testbox, arch, tbox_group, and the host file's model) and the `including:` and `need_kconfig:` lists
/// of lkp's include stubs, which the fixtures leave out. Culprit writes none of them.
const LKP_ENVIRONMENT_KEYS: [&str; 6] = ["testbox", "arch", "tbox_group", "model", "including", "need_kconfig"];

/// A job file's keys and values in file order, `job_origin` apart: lkp records the path in its own tree
/// (`spec/fixtures/split-job/1.yaml`), Culprit the path it was given, so only the file names are compared.
fn pairs(text: &str, leave_out: &[&str]) -> (Vec<(Value, Value)>, Option<String>) {
    let mapping: Mapping = serde_yaml::from_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let origin = mapping.get("job_origin").and_then(Value::as_str).map(|origin| {
        Path::new(origin).file_name().unwrap().to_string_lossy().into_owned()
    });
    let kept = mapping.into_iter().filter(|(key, _)| {
        let key = key.as_str().unwrap_or_default();
        key != "job_origin" && !leave_out.contains(&key)
    });
    (kept.collect(), origin)
}

#[test]
fn lkp_s_split_job_fixtures_split_as_lkp_splits_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for input in ["1", "2", "3", "4", "compatible"] {
        let file = format!("{input}.yaml");
        std::fs::copy(fixtures().join(&file), dir.path().join(&file)).unwrap();
        let out_dir = format!("out-{input}");
        let out = culprit("unused.db", &["split", &file, "-o", &out_dir], dir.path());
        let listed = stdout(&out);
        // One warning, for the one program (the fixtures' stand-in `split-job`), however many jobs select it.
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with("culprit: warning: ") && stderr.contains("'split-job' is not a program"), "{stderr}");
        assert!(stderr.contains("written for lkp to run") && !stderr.contains("remove it"), "{stderr}");

        let written: BTreeSet<String> = files_under(&dir.path().join(&out_dir))
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        let expected: BTreeSet<String> = std::fs::read_dir(fixtures())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with(&format!("{input}-")))
            .collect();
        assert_eq!(written, expected, "{input}.yaml");
        assert_eq!(listed.lines().count(), expected.len(), "{listed}");
        for name in &expected {
            let ours = std::fs::read_to_string(dir.path().join(&out_dir).join(name)).unwrap();
            let theirs = std::fs::read_to_string(fixtures().join(name)).unwrap();
            let (ours_pairs, ours_origin) = pairs(&ours, &[]);
            let (theirs_pairs, theirs_origin) = pairs(&theirs, &LKP_ENVIRONMENT_KEYS);
            assert_eq!(ours_origin, theirs_origin, "{name}: job_origin\n{ours}");
            // Both name the file they came from first, as lkp's `#! FILE` comment.
            assert!(ours.starts_with(&format!("---\n#! {file}\n")), "{name}\n{ours}");
            if input == "compatible" {
                // compatible.yaml is a job lkp already scheduled: lkp's split-job drops its queue's and test box's
                // keys, which Culprit keeps as the file gives them. Every key lkp writes is there, as lkp writes it.
                assert!(theirs_pairs.iter().all(|pair| ours_pairs.contains(pair)), "{name}\n{ours}");
                assert!(ours_pairs.iter().any(|(key, _)| key.as_str() == Some("queue")), "{name}\n{ours}");
            } else {
                assert_eq!(ours_pairs, theirs_pairs, "{name}\n{ours}");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 13);
}

#[test]
fn a_will_it_scale_job_splits_with_one_warning_and_run_does_not_advise_removing_it() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "wis.yaml",
        "suite: will-it-scale\ntestcase: will-it-scale\ncategory: benchmark\nnr_task: [1, 50%, 100%]\n\
         mode: [process, thread]\nwill-it-scale:\n  test: [page_fault1, mmap1]\n",
    );
    let out = culprit("unused.db", &["split", "wis.yaml", "-o", "wis"], dir.path());
    let listed = stdout(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(listed.lines().count(), 12, "{listed}");
    let warning = "culprit: warning: wis.yaml:6: 'will-it-scale' is not a program culprit run runs (it runs fio, ";
    assert!(stderr.starts_with(warning) && stderr.lines().count() == 1, "{stderr}");
    let one = std::fs::read_to_string(dir.path().join("wis/wis-process-50%-mmap1.yaml")).unwrap();
    let (params, _) = pairs(&one, &[]);
    let text = |value: &Value| serde_yaml::to_string(value).unwrap().trim().to_string();
    let params: Vec<(String, String)> = params.iter().map(|(key, value)| (text(key), text(value))).collect();
    let expected = [
        ("suite", "will-it-scale"),
        ("testcase", "will-it-scale"),
        ("category", "benchmark"),
        ("nr_task", "50%"),
        ("mode", "process"),
        ("will-it-scale", "test: mmap1"),
    ];
    assert_eq!(params, expected.map(|(k, v)| (k.to_string(), v.to_string())), "{one}");

    // `culprit run` cannot run it, and says what to do instead of "remove it or fix its name" (its name is right).
    let err = refused(&culprit("r.db", &["run", "wis/wis-process-50%-mmap1.yaml", "--label", "x"], dir.path()));
    assert!(err.contains("'will-it-scale' is an lkp program that culprit run does not run"), "{err}");
    assert!(err.contains("run this job with lkp, for which `culprit split` writes its atomic jobs"), "{err}");
    assert!(!err.contains("remove it") && !err.contains("did you mean"), "{err}");
}

#[test]
fn a_malformed_file_or_a_mistake_in_a_program_culprit_runs_is_still_refused() {
    let dir = tempfile::tempdir().unwrap();
    // Broken YAML, with a program Culprit does not run: nothing to write.
    write(dir.path(), "broken.yaml", "suite: will-it-scale\nwill-it-scale:\n  test: [page_fault1\n");
    let err = refused(&culprit("unused.db", &["split", "broken.yaml", "-o", "broken"], dir.path()));
    assert!(err.contains("broken.yaml"), "{err}");
    assert!(!dir.path().join("broken").exists());
    // A misspelt monitor beside a program Culprit runs is a mistake in a job for Culprit, refused at its line.
    write(dir.path(), "typo.yaml", "suite: hackbench\nhackbench:\n  mode: process\nvmstatt:\n");
    let err = refused(&culprit("unused.db", &["split", "typo.yaml", "-o", "typo"], dir.path()));
    assert!(err.contains("typo.yaml:4: 'vmstatt' is not a program or monitor Culprit knows"), "{err}");
    assert!(err.contains("did you mean 'vmstat'?"), "{err}");
    assert!(!dir.path().join("typo").exists());
    // A file of params and no program at all is no job for lkp either.
    write(dir.path(), "none.yaml", "suite: x\nnr_task: 1\n");
    let err = refused(&culprit("unused.db", &["split", "none.yaml", "-o", "none"], dir.path()));
    assert!(err.contains("the job selects no benchmark program"), "{err}");
    assert!(!dir.path().join("none").exists());
}
