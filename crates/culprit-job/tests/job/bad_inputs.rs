//! Bad job files: each fails with a message that names the file, the line (and column) or key, and what to do.

use culprit_job::{JobError, JobFile, MAX_ATOMIC_JOBS};

fn load_error(text: &str) -> JobError {
    match JobFile::parse(text, "jobs/bad.yaml") {
        Err(e) => e,
        Ok(file) => match file.expand() {
            Err(e) => e,
            Ok(jobs) => panic!("expected an error for {text:?}, got {} jobs", jobs.len()),
        },
    }
}

#[test]
fn malformed_yaml_names_line_and_column() {
    let cases: &[(&str, usize, usize)] = &[
        ("suite: fio\nfio:\n  bs: 4k\n rw: read\n", 4, 2),
        ("suite: fio\nfio-setup-basic: {bs: 4k\n", 3, 1),
        ("a: 1\n---\nb: [1,\n---\nc: 3\n", 4, 1),
        ("suite: 'unterminated\n", 2, 1),
    ];
    for (text, line, column) in cases {
        match load_error(text) {
            JobError::Yaml {
                file,
                line: l,
                column: c,
                reason,
            } => {
                assert_eq!(file, "jobs/bad.yaml");
                assert_eq!((l, c), (*line, *column), "{text:?}: {reason}");
            }
            other => panic!("{text:?}: expected a YAML error, got {other}"),
        }
    }
    let message = load_error("a: 1\n b: 2\n").to_string();
    assert!(message.starts_with("jobs/bad.yaml:2:"), "{message}");
    assert!(message.contains("fix the YAML syntax"), "{message}");
}

#[test]
fn qa_31_a_tab_indent_is_named_as_a_tab() {
    // YAML's parser says "found character that cannot start any token" at a tab indent, and the hint after it spoke
    // of indentation and colons in general: the user was left to find an invisible character.
    for (text, line, column) in [
        ("suite: x\nhackbench:\n\tloops: 10\n", 3, 1),
        ("suite: x\nhackbench:\n  mode: process\n  \tloops: 10\n", 4, 3),
    ] {
        let error = load_error(text);
        assert_eq!(error, JobError::TabIndent { file: "jobs/bad.yaml".into(), line, column }, "{text:?}");
        let message = error.to_string();
        assert!(message.starts_with(&format!("jobs/bad.yaml:{line}:{column}: a tab indents this line")), "{message}");
        assert!(message.ends_with("replace the tab with spaces"), "{message}");
    }
    // A tab inside a value is YAML's business, not an indent.
    assert!(JobFile::parse("suite: x\ncommand:\n  cmd: \"echo\ta\"\n", "ok.yaml").is_ok());
}

#[test]
fn duplicate_keys_are_rejected() {
    let message = load_error("hackbench:\nhackbench:\n").to_string();
    assert!(
        message.starts_with("jobs/bad.yaml:2: 'hackbench' is given a second time in the same hash (first at line 1)"),
        "{message}"
    );
}

#[test]
fn empty_files() {
    for text in ["", "\n\n", "# just a comment\n", "---\n", "---\n---\n"] {
        let error = load_error(text);
        assert!(matches!(error, JobError::Empty { .. }), "{text:?}: {error}");
        assert!(
            error
                .to_string()
                .contains("jobs/bad.yaml: the job file is empty"),
            "{error}"
        );
    }
}

#[test]
fn a_document_that_is_not_a_hash() {
    let error = load_error("suite: x\n---\n- a\n- b\n");
    assert!(
        matches!(error, JobError::NotAHash { document: 2, .. }),
        "{error}"
    );
    assert!(error.to_string().contains("jobs/bad.yaml:3"), "{error}");
    let error = load_error("just words\n");
    assert!(error.to_string().contains("a scalar"), "{error}");
}

#[test]
fn scalar_where_a_hash_is_needed() {
    let cases: &[(&str, &str, usize)] = &[
        (
            "suite: fio\nfio-setup-basic: randwrite\nfio:\n",
            "fio-setup-basic",
            2,
        ),
        ("hackbench:\nperf-profile: 800\n", "perf-profile", 2),
        ("suite: x\nfio: [a, b]\n", "fio", 2),
    ];
    for (text, key, line) in cases {
        let error = load_error(text);
        match &error {
            JobError::NeedsHash { place, key: k, .. } => {
                assert_eq!(k, key);
                assert_eq!(place.line, Some(*line), "{error}");
            }
            other => panic!("{text:?}: expected NeedsHash, got {other}"),
        }
        assert!(error.to_string().contains("option: value"), "{error}");
    }
}

#[test]
fn unsupported_lkp_features() {
    let error = load_error("<<: jobs/other.yaml\nfio:\n");
    assert!(error.to_string().contains("'<< : FILE' include"), "{error}");
    // lkp's templates are computed; one naming a param the job lacks fails as lkp's Ruby would, at its line.
    let error = load_error("suite: fsmark\nfsmark:\n  test_size: {{ fsmark.filesize }}\n");
    let said = "jobs/bad.yaml:3: cannot compute the '{{ }}' template of 'fsmark.test_size': 'fsmark' has no key";
    assert!(error.to_string().contains(said), "{error}");
    let error = load_error("suite: fsmark\nfsmark:\n  test_size: {{\n    fs\n");
    let said = "jobs/bad.yaml:3:14: malformed YAML: lkp's '{{ expression }}' template opened here has no closing '}}'";
    assert!(error.to_string().contains(said), "{error}");
    let error = load_error("fio:\n  bs: !big 4k\n");
    assert!(error.to_string().contains("YAML tag"), "{error}");
    assert!(error.to_string().contains("jobs/bad.yaml:2"), "{error}");
}

#[test]
fn empty_list() {
    let error = load_error("hackbench:\n  mode: []\n");
    assert!(
        matches!(&error, JobError::EmptyList { key, .. } if key == "hackbench.mode"),
        "{error}"
    );
    assert!(error.to_string().contains("jobs/bad.yaml:2"), "{error}");
}

#[test]
fn explosion_names_the_lists() {
    // 10 * 10 * 10 * 11 = 11,000 > 10,000
    let ten = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]";
    let text =
        format!("a: {ten}\nfio:\n  b: {ten}\n  c: {ten}\nd: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n");
    let error = load_error(&text);
    match &error {
        JobError::Explosion {
            count, limit, keys, ..
        } => {
            assert_eq!(count, "11000");
            assert_eq!(*limit, MAX_ATOMIC_JOBS);
            assert!(keys.starts_with("d (11 values)"), "{keys}");
            for key in ["a (10 values)", "fio.b (10 values)", "fio.c (10 values)"] {
                assert!(keys.contains(key), "{keys}");
            }
        }
        other => panic!("expected an explosion, got {other}"),
    }
    // Just under the limit expands.
    let text = format!("a: {ten}\nfio:\n  b: {ten}\n  c: {ten}\n");
    assert_eq!(
        JobFile::parse(&text, "ok.yaml")
            .unwrap()
            .expand()
            .unwrap()
            .len(),
        1000
    );
    // Huge products do not overflow.
    let big = format!(
        "[{}]",
        (0..100)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let text: String = (0..30).map(|i| format!("k{i}: {big}\n")).collect();
    let error = load_error(&text);
    assert!(matches!(error, JobError::Explosion { .. }), "{error}");
}

#[test]
fn duplicate_atomic_names() {
    let error = load_error("hackbench:\n  mode: process\n---\ntimeout: 5m\n");
    assert!(
        matches!(&error, JobError::DuplicateName { name, .. } if name == "bad-process"),
        "{error}"
    );
}

#[test]
fn bad_param_values_name_field_and_forms() {
    let file = JobFile::parse("runtime: 5min\nnr_threads: lots\nfio-setup-basic:\n  bs: 4X\n  rw: [a]\nfio:\ntimeout: soon\n", "jobs/bad.yaml").unwrap();
    let jobs = file.expand().unwrap();
    let fio = &jobs[0].programs()[0];
    let error = fio.param_size_bytes("bs").unwrap_err().to_string();
    assert!(
        error.starts_with("jobs/bad.yaml:4: bs: '4X' is not a size"),
        "{error}"
    );
    let error = fio.param_duration_secs("runtime").unwrap_err().to_string();
    assert!(
        error.starts_with("jobs/bad.yaml:1: runtime: '5min' is not a duration"),
        "{error}"
    );
    let error = fio
        .param_share_or_count("nr_threads", 2)
        .unwrap_err()
        .to_string();
    assert!(error.contains("'lots'") && error.contains("50%"), "{error}");
    let error = jobs[0].timeout_secs().unwrap_err().to_string();
    assert!(error.starts_with("jobs/bad.yaml:7: timeout:"), "{error}");
}

#[test]
fn a_zero_timeout_is_refused_naming_its_line() {
    let file = JobFile::parse("suite: t\ntimeout: 0\ncommand:\n  cmd: true\n", "jobs/zero.yaml").unwrap();
    let jobs = file.expand().unwrap();
    let error = jobs[0].timeout_secs().unwrap_err().to_string();
    assert!(error.starts_with("jobs/zero.yaml:2: timeout:") && error.contains("zero timeout"), "{error}");
    let file = JobFile::parse("suite: t\ntimeout: 5s\ncommand:\n  cmd: true\n", "jobs/five.yaml").unwrap();
    assert_eq!(file.expand().unwrap()[0].timeout_secs().unwrap(), Some(5));
}

#[test]
fn no_input_panics() {
    // A few shapes that have crashed YAML tools; each must give Ok or Err, never panic.
    let inputs = [
        "? [a, b]\n: c\n",
        "a: &x [*x]\n",
        "a: *missing\n",
        "{a: 1, a: 1}\n",
        "a:\n  - b:\n      - c: [[[[[]]]]]\n",
        "\u{feff}a: 1\n",
        "a: [1, [2, [3, []]]]\n",
        "---\n...\n---\n",
        "x: 1\nx.y: 2\n",
        "\0",
    ];
    for text in inputs {
        let result = JobFile::parse(text, "fuzz.yaml").and_then(|f| f.expand());
        if let Ok(jobs) = result {
            for job in jobs {
                let _ = (
                    job.name(),
                    job.id(),
                    job.to_yaml(),
                    job.programs(),
                    job.monitors(),
                );
            }
        }
    }
}

#[test]
fn lkps_roles_merge_on_one_machine_and_a_cluster_of_several_is_refused() {
    // lkp's cs-localhost: one machine plays every role, so each role's keys are the job's, at the role's place.
    let text = "suite: iperf\ncluster: cs-localhost\nif role server:\n  iperf-server:\nif role client:\n  iperf:\n    \
                protocol: [tcp, udp]\n";
    let jobs = JobFile::parse(text, "jobs/iperf.yaml").unwrap().expand().unwrap();
    let names: Vec<String> = jobs.iter().map(|job| job.name()).collect();
    assert_eq!(names, ["iperf-cs-localhost-tcp", "iperf-cs-localhost-udp"]);
    let yaml = jobs[0].to_yaml();
    assert!(yaml.contains("suite: iperf\ncluster: cs-localhost\niperf-server:\niperf:\n  protocol: tcp\n"), "{yaml}");
    for (text, line, said) in [
        ("cluster: cs-lkp-hsw-ep5\nif role client:\n  iperf:\n", 1, "cluster 'cs-lkp-hsw-ep5' of several machines"),
        ("runtime: 1s\nif role client:\n  runtime: 2s\n  iperf:\n", 3, "'runtime' given both by the 'client' role"),
        ("if role client:\n  runtime: 2s\n  iperf:\nruntime: 1s\n", 4, "'runtime' given both by the 'client' role"),
        ("if role client: iperf\n", 1, "'if role client' is lkp's part of the job for the machines of role 'client'"),
        // Without a cluster lkp's split-job gives the machine no role, so lkp runs neither part.
        ("runtime: 1s\nif role server:\n  iperf-server:\nif role client:\n  iperf:\n", 2, "'if role server' part"),
        ("runtime: 1s\n---\nif role client:\n  iperf:\n", 3, "in a job without a cluster"),
        ("cluster:\nif role client:\n  iperf:\n", 2, "add 'cluster: cs-localhost' to run every role on this machine"),
        // An empty cluster names no cluster file of lkp's, rather than a cluster of several machines.
        ("cluster: ''\nif role client:\n  iperf:\n", 1, "a 'cluster' that is empty, which names no lkp cluster"),
        ("cluster: {a: 1}\nif role client:\n  iperf:\n", 1, "a 'cluster' that is a hash, which names no lkp"),
    ] {
        let error = load_error(text);
        assert!(error.to_string().contains(&format!("jobs/bad.yaml:{line}: ")), "{text:?}: {error}");
        assert!(error.to_string().contains(said), "{text:?}: {error}");
    }
}

#[test]
fn a_key_given_in_an_lkp_role_hash_is_refused_at_its_line() {
    // The loader lifts a role's keys to the top of the job, and the lookup of their lines searched only the top: a
    // program under `if role client:` given a list (its protocol line deleted) was refused with the file alone.
    let text = "suite: iperf\ncluster: cs-localhost\nif role server:\n  iperf-server:\nif role client:\n  \
                iperf:\n      - tcp\n      - udp\n";
    let message = load_error(text).to_string();
    assert!(message.starts_with("jobs/bad.yaml:6: 'iperf' is the program iperf"), "{message}");
    // A role hash indented under another, so that its key is read as a param without a value.
    let text = "suite: iperf\ncluster: cs-localhost\nif role server:\n  iperf-server:\n  if role client:\n  iperf:\n";
    let file = JobFile::parse(text, "jobs/bad.yaml").unwrap();
    let problems = file.expand().unwrap()[0].unknown_keys(&|_, _| true);
    let said: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert!(said.iter().any(|p| p.starts_with("jobs/bad.yaml:5: 'if role client'")), "{said:?}");
}
