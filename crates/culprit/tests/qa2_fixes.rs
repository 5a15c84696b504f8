//! Findings of the second QA sweep of `run`, `split`, `compare` and the job checks, each with a short real run: a
//! closed stdout or stderr is a view going away, not a reason to stop measuring or writing.

mod common;

use common::{culprit, stdout};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Two hackbench jobs (process and threads) of a few loops each: a matrix run that takes well under a second.
const MATRIX: &str = "suite: hackbench\ntestcase: hackbench\nnr_threads: 1\niterations: 1\nhackbench:\n  mode: [process, threads]\n  ipc: pipe\n  loops: 20\n";

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path
}

/// Runs culprit with its stdout or stderr a pipe whose reader is gone before culprit writes to it (what `| head -1`
/// does after its first line), and returns the exit code and the other stream's text.
fn with_closed(stream: &str, db: &Path, args: &[&str], cwd: &Path) -> (Option<i32>, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_culprit"));
    command.current_dir(cwd).arg("--db").arg(db).args(args);
    if stream == "stdout" {
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
    } else {
        command.stderr(Stdio::piped()).stdout(Stdio::piped());
    }
    let mut child = command.spawn().unwrap();
    let kept = if stream == "stdout" {
        drop(child.stdout.take());
        child.stderr.take().map(|s| Box::new(s) as Box<dyn std::io::Read>)
    } else {
        drop(child.stderr.take());
        child.stdout.take().map(|s| Box::new(s) as Box<dyn std::io::Read>)
    };
    let mut text = String::new();
    if let Some(mut other) = kept {
        std::io::Read::read_to_string(&mut other, &mut text).unwrap();
    }
    (child.wait().unwrap().code(), text)
}

/// The number of ok runs per job that `results --json` reports.
fn ok_runs(db: &Path, cwd: &Path) -> Vec<u64> {
    let json: serde_json::Value = serde_json::from_str(&stdout(&culprit(db, &["results", "--json"], cwd))).unwrap();
    json.as_array().unwrap().iter().map(|g| g["ok_runs"].as_u64().unwrap()).collect()
}

#[test]
fn run_with_closed_stdout_measures_and_stores_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(dir.path(), "hbm.yaml", MATRIX);
    let db = dir.path().join("j.db");
    let args = ["run", job.to_str().unwrap(), "-n", "3", "--json", "--monitors", "none", "--label", "J"];
    let (code, stderr) = with_closed("stdout", &db, &args, dir.path());
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(ok_runs(&db, dir.path()), vec![3, 3], "{stderr}");
    // The table summary at the end goes the same way (groups are listed by revision, then job).
    let args = ["run", job.to_str().unwrap(), "-n", "2", "--monitors", "none", "--label", "T"];
    let (code, stderr) = with_closed("stdout", &db, &args, dir.path());
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(ok_runs(&db, dir.path()), vec![3, 3, 2, 2], "{stderr}");
}

#[test]
fn run_with_closed_stderr_measures_and_stores_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(dir.path(), "hbm.yaml", MATRIX);
    let db = dir.path().join("e.db");
    let args = ["run", job.to_str().unwrap(), "-n", "2", "--monitors", "none", "--label", "E"];
    let (code, stdout_text) = with_closed("stderr", &db, &args, dir.path());
    assert_eq!(code, Some(0), "{stdout_text}");
    assert!(stdout_text.contains("(2 ok, 0 failed)"), "{stdout_text}");
    assert_eq!(ok_runs(&db, dir.path()), vec![2, 2]);
}

#[test]
fn split_with_closed_stdout_writes_every_job_file() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(dir.path(), "hbm.yaml", MATRIX);
    let out = dir.path().join("sp");
    let (code, stderr) =
        with_closed("stdout", &dir.path().join("unused.db"), &["split", job.to_str().unwrap(), "-o", "sp"], dir.path());
    assert_eq!(code, Some(0), "{stderr}");
    let mut written: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    written.sort();
    assert_eq!(written, ["hbm-pipe-1-20-process-1.yaml", "hbm-pipe-1-20-threads-1.yaml"]);
}
