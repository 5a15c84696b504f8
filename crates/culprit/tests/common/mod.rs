//! Helpers shared by the binary's end-to-end tests.

// Every test crate compiles this module on its own and uses only some of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Makes `dir/repo` with `tests/fixtures/make-slowdown-repo.sh`: `commits` commits of a small C program, `slowdown`
/// percent more work from commit `slow_at` on, and commit `broken_at` not building. Returns the repository and its
/// commit SHAs, oldest first.
pub fn make_slowdown_repo(
    dir: &Path,
    commits: usize,
    slow_at: usize,
    broken_at: usize,
    slowdown: u32,
) -> (PathBuf, Vec<String>) {
    let repo = dir.join("repo");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/make-slowdown-repo.sh");
    let status = Command::new("bash")
        .arg(&script)
        .arg(&repo)
        .args([commits.to_string(), slow_at.to_string(), broken_at.to_string(), slowdown.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let log = Command::new("git").arg("-C").arg(&repo).args(["log", "--reverse", "--format=%H"]).output().unwrap();
    (repo, String::from_utf8_lossy(&log.stdout).lines().map(str::to_string).collect())
}

/// Writes an executable shell script: the stand-in programs (qemu, ssh, perf, ...) a test puts first on `PATH`.
pub fn write_script(path: &Path, body: &str) {
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}
