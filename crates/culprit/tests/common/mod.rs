//! Helpers shared by the binary's end-to-end tests.

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
