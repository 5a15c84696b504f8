//! `culprit parse` and `culprit import` on inputs without end or beyond any real output's size: `/dev/zero`, a pipe
//! that never ends, a result root holding a huge file. Each read stops at a bound and is refused with a message naming
//! the input, the bound and what to do, and a real output still parses, from a file, `-` or `/dev/stdin`.

use crate::common::{culprit, refused, stdout};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A recorded real hackbench output (culprit-parse's test data).
fn hackbench_output() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../culprit-parse/tests/data/real/hackbench/process-pipe-3-runs")
}

/// Runs `culprit parse PROGRAM FILE` with `feed` written to its standard input from a thread, which stops writing
/// quietly when culprit closes the pipe (as it does once it has read as much as it will).
fn parse_with_stdin(
    dir: &Path,
    program: &str,
    file: &str,
    feed: impl FnOnce(&mut dyn Write) + Send + 'static,
) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_culprit"))
        .current_dir(dir)
        .arg("--db")
        .arg(dir.join("r.db"))
        .args(["parse", program, file])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || feed(&mut stdin));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

#[test]
fn parse_of_dev_zero_is_refused_at_its_first_nul_byte() {
    let dir = tempfile::tempdir().unwrap();
    for program in ["hackbench", "fio", "perf-profile", "vmstat", "sysbench"] {
        let out = culprit(dir.path().join("r.db"), &["parse", program, "/dev/zero"], dir.path());
        let err = refused(&out);
        assert!(err.starts_with("culprit: /dev/zero holds a NUL byte at byte 0"), "{program}: {err}");
        assert!(err.contains("not a benchmark's text output") && err.contains("give the raw text output"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(out.stdout.is_empty(), "{program}: {}", String::from_utf8_lossy(&out.stdout));
    }
    assert!(!dir.path().join("r.db").exists());
}

#[test]
fn a_real_output_parses_alike_from_a_file_from_dash_and_from_dev_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let file = hackbench_output();
    let db = dir.path().join("r.db");
    let from_file = stdout(&culprit(&db, &["parse", "hackbench", file.to_str().unwrap()], dir.path()));
    assert!(from_file.starts_with("throughput: "), "{from_file}");
    for name in ["-", "/dev/stdin"] {
        let bytes = std::fs::read(&file).unwrap();
        let out = parse_with_stdin(dir.path(), "hackbench", name, move |stdin| stdin.write_all(&bytes).unwrap());
        assert_eq!(stdout(&out), from_file, "{name}");
    }
    // An error about standard input names it so.
    let out = parse_with_stdin(dir.path(), "hackbench", "-", |stdin| stdin.write_all(b"no hackbench here\n").unwrap());
    let err = refused(&out);
    assert!(err.starts_with("culprit: standard input: cannot parse as hackbench output"), "{err}");
}

#[test]
fn parse_of_an_endless_text_on_standard_input_stops_at_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let out = parse_with_stdin(dir.path(), "hackbench", "-", |stdin| {
        let lines = "Time: 0.827\n".repeat(1 << 14);
        // Endless until culprit closes the pipe; the write that meets the closed pipe ends the loop.
        while stdin.write_all(lines.as_bytes()).is_ok() {}
    });
    let err = refused(&out);
    assert!(err.starts_with("culprit: standard input is larger than 256 MiB"), "{err}");
    assert!(err.contains("the most culprit parse reads of one output") && err.contains("cut out the part"), "{err}");
}

#[test]
fn parse_of_a_result_root_reads_only_the_programs_file_and_refuses_it_when_it_is_binary() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::copy(hackbench_output(), root.join("hackbench")).unwrap();
    // A root keeps large files that are no text output (perf.data); sparse, this one costs no disk.
    let perf_data = std::fs::File::create(root.join("perf.data")).unwrap();
    perf_data.set_len(300 << 20).unwrap();
    let out = culprit(dir.path().join("r.db"), &["parse", "hackbench", root.to_str().unwrap()], dir.path());
    assert!(stdout(&out).starts_with("throughput: "));
    // The program's own file of that size is refused, naming it.
    std::fs::rename(root.join("perf.data"), root.join("hackbench")).unwrap();
    let out = culprit(dir.path().join("r.db"), &["parse", "hackbench", root.to_str().unwrap()], dir.path());
    let err = refused(&out);
    let named = format!("culprit: {} holds a NUL byte at byte 0", root.join("hackbench").display());
    assert!(err.starts_with(&named), "{err}");
}

#[test]
fn import_of_a_run_with_a_huge_stderr_skips_that_run_naming_the_file_and_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("result");
    for run in ["0", "1"] {
        let run_dir = root.join("x/defaults/host/base").join(run);
        std::fs::create_dir_all(&run_dir).unwrap();
        std::fs::write(run_dir.join("stats.json"), "{\"command.ops\": 42}").unwrap();
    }
    let stderr = root.join("x/defaults/host/base/1/stderr");
    std::fs::File::create(&stderr).unwrap().set_len((256 << 20) + 1).unwrap();
    let out = culprit(dir.path().join("r.db"), &["import", root.to_str().unwrap()], dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.starts_with("imported 1 run(s)"), "{text}");
    let run = root.join("x/defaults/host/base/1");
    let skipped = format!("skipped {}: {} is larger than 256 MiB", run.display(), stderr.display());
    assert!(text.contains(&skipped), "{text}");
    assert!(text.contains("move it out of the root and import again"), "{text}");
}
