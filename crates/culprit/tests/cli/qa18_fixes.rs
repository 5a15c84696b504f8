//! End-to-end regressions of the eighteenth QA pass: lkp's `{{ }}` templates, its cs-localhost roles, and the oltp and
//! iperf programs, driven as a kernel developer drives them with lkp's job files.

use crate::common;

use crate::common::{culprit, pids_mentioning, processes_mentioning, stdout};

/// The one atomic job file `culprit split` writes of `job` (its text), in `dir`.
fn split_one(dir: &std::path::Path, job: &str) -> String {
    common::write(dir, "t.yaml", job);
    let out = stdout(&culprit("t.db", &["split", "t.yaml", "-o", "out"], dir));
    let files: Vec<&str> = out.lines().filter(|line| line.ends_with(".yaml")).collect();
    assert_eq!(files.len(), 1, "{out}");
    std::fs::read_to_string(dir.join(files[0])).unwrap()
}

#[test]
fn qa18_a_comment_inside_a_template_of_several_lines_is_ruby_s_comment() {
    // lkp's block literal keeps a template's lines, so a Ruby comment in it ends at its line; Culprit's quoting folded
    // the lines into one, and the comment took the rest of the template: "the template ends where a value was
    // expected", at a template lkp computes.
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: x\nfs: xfs\nsysbench-cpu:\n  cpu_max_prime: {{\n     # a smaller bound on xfs\n     \
               fs == 'xfs' ? 100 : 200 # xfs\n  }}\n  runtime: 1\n";
    let written = split_one(dir.path(), job);
    assert!(written.contains("  cpu_max_prime: 100\n"), "{written}");
}

#[test]
fn qa18_a_command_s_here_document_keeps_its_braces() {
    // A `key: {{` line in a block scalar was quoted as a template, so the shell text of a command job with a
    // here-document of a Go template (`image: {{ .Tag }}`) ran with quotes the user never wrote.
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: x\ncommand:\n  cmd: |\n    cat <<EOF\n    image: {{ .Tag }}\n    EOF\n";
    let written = split_one(dir.path(), job);
    assert!(written.contains(r#"cmd: "cat <<EOF\nimage: {{ .Tag }}\nEOF\n""#), "{written}");
}

#[test]
fn qa18_a_template_in_a_flow_hash_is_not_said_to_be_unsupported() {
    // Templates are computed since this morning, yet one written inside `{...}` (which lkp cannot read either) was
    // refused with "lkp's '{{ expression }}' templates are not supported".
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "t.yaml", "suite: x\nfs: xfs\nfsmark: {filesize: 4k, test_size: {{ fs }}}\n");
    let out = culprit("t.db", &["split", "t.yaml", "-o", "out"], dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(!stderr.contains("not supported"), "{stderr}");
    assert!(stderr.contains("t.yaml:3:") && stderr.contains("a 'key: {{ ... }}' line of its own"), "{stderr}");
}

#[test]
fn qa18_roles_on_a_cluster_of_several_machines_are_refused_from_any_document_or_list() {
    // A job on a cluster of several machines is refused, since Culprit measures on one; but the check looked only at
    // the document holding the `if role` keys, so a cluster given in the shared first document, or as a list, ran its
    // roles merged on one machine under the name of a two-machine cluster.
    let dir = tempfile::tempdir().unwrap();
    let role = "if role server:\n  iperf-server:\nif role client:\n  iperf:\n";
    let cases = [
        format!("suite: iperf\ncluster: cs-2nodes\nruntime: 1s\n---\n{role}"),
        format!("suite: iperf\ncluster: [cs-localhost, cs-2nodes]\nruntime: 1s\n{role}"),
    ];
    for job in &cases {
        common::write(dir.path(), "r.yaml", job);
        let out = culprit("t.db", &["split", "r.yaml", "-o", "out"], dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{job}\n{stderr}");
        assert!(stderr.contains("r.yaml:2: lkp's cluster 'cs-2nodes' of several machines"), "{job}\n{stderr}");
    }
    // On cs-localhost, from either document, the roles still make the job.
    let job = format!("suite: iperf\ncluster: cs-localhost\nruntime: 1s\n---\n{role}");
    common::write(dir.path(), "r.yaml", &job);
    let out = stdout(&culprit("t.db", &["split", "r.yaml", "-o", "ok"], dir.path()));
    assert!(out.contains("r-cs-localhost-1s.yaml"), "{out}");
}

#[test]
fn qa18_a_template_in_a_list_that_cannot_be_computed_is_placed_at_its_own_line() {
    // lkp's aim7-fs-raid.yaml writes a template as a list item (`- {{ fs == 'f2fs' ? nil : 'disk_src' }}`); one that
    // could not be computed was placed at its list's key, lines above it, the other items between.
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: x\nfs: xfs\nsysbench-cpu:\n  cpu_max_prime:\n    - 100\n    - {{ fs == 'xfs' ? 200 : nil }}\n    \
               - {{ nosuch }}\n  runtime: 1\n";
    common::write(dir.path(), "t.yaml", job);
    let out = culprit("t.db", &["split", "t.yaml", "-o", "out"], dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    let said = "t.yaml:7: cannot compute the '{{ }}' template of 'sysbench-cpu.cpu_max_prime'";
    assert!(stderr.contains(said), "{stderr}");
    assert!(stderr.contains("no param 'nosuch'"), "{stderr}");
}

#[test]
fn qa18_an_oltp_run_whose_culprit_was_killed_leaves_no_postgresql_server_after_the_next_run() {
    // After a kill -9 of culprit during an oltp run, the next culprit run killed sysbench's process group, as it
    // says, but the throwaway postmaster, which pg_ctl starts in a session of its own, ran on for good.
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    // The server runs as `postgres` under root, which must be able to reach the scratch directory.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let scratch = dir.path().join("scratch");
    let scratch_arg = scratch.to_str().unwrap();
    let job = |runtime: &str| format!("suite: oltp\nruntime: {runtime}\nsetup-oltp:\n  table_size: 100\noltp:\n");
    common::write(dir.path(), "o.yaml", &job("60s"));
    let args = ["run", "o.yaml", "-n", "1", "--label", "x", "--monitors", "none", "--scratch", scratch_arg];
    let mut first = common::spawn_culprit("o.db", &args, dir.path());
    common::wait_until("sysbench never started its measured run", || {
        // The record of the measured step, which the next run reaps, is written just after sysbench starts: a kill
        // between the two would leave nothing to reap, and the test would fail for its own timing.
        let record = std::fs::read_to_string(scratch.join(format!("run-{}.step", first.id()))).unwrap_or_default();
        let measuring = |line: &String| line.starts_with("sysbench") && line.ends_with("run ");
        record.contains("\nstep run\n") && processes_mentioning(scratch_arg).iter().any(measuring)
    });
    first.kill().unwrap();
    first.wait().unwrap();
    let left = processes_mentioning(scratch_arg);
    assert!(left.iter().any(|line| line.contains("postgres -D")), "the test needs the server left running: {left:?}");
    common::write(dir.path(), "o.yaml", &job("1s"));
    let out = stdout(&culprit("o.db", &args, dir.path()));
    assert!(out.contains("(1 ok, 0 failed)"), "{out}");
    let left = pids_mentioning(scratch_arg);
    // What a failing run left is killed before the test fails, so that it loads no later test.
    for (pid, _) in &left {
        let _ = std::process::Command::new("kill").args(["-9", pid]).status();
    }
    assert!(left.is_empty(), "left running after the next run: {left:?}");
}
