//! Git, through the real `git` program: the revision under test, commit subjects, candidate lists and worktrees.

use culprit_core::model::Revision;
use std::path::{Path, PathBuf};
use std::process::Command;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum GitError {
    #[error("cannot run git (install the Debian package 'git'): {0}")]
    Spawn(std::io::Error),
    #[error("git {args} in {dir}: {stderr}")]
    Failed { args: String, dir: String, stderr: String },
    #[error("{dir} is not inside a git repository; pass --label NAME to store results under a label instead")]
    NotARepo { dir: String },
}

/// Runs `git -C dir args...` and returns its trimmed stdout.
pub fn git(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().map_err(GitError::Spawn)?;
    if !out.status.success() {
        return Err(GitError::Failed {
            args: args.join(" "),
            dir: dir.display().to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
}

/// The top of the repository containing `dir`.
pub fn toplevel(dir: &Path) -> Result<PathBuf, GitError> {
    git(dir, &["rev-parse", "--show-toplevel"])
        .map(PathBuf::from)
        .map_err(|_| GitError::NotARepo { dir: dir.display().to_string() })
}

/// Resolves `rev` (a branch, tag, sha prefix, `HEAD~3`) in the repository at `dir` into a full commit revision with
/// its `git describe` and subject.
pub fn resolve(dir: &Path, rev: &str) -> Result<Revision, GitError> {
    let spec = format!("{rev}^{{commit}}");
    let sha = git(dir, &["rev-parse", "--verify", "--quiet", &spec]).map_err(|e| match e {
        GitError::Failed { args, dir, .. } => {
            GitError::Failed { args, dir, stderr: format!("'{rev}' is not a commit in this repository") }
        }
        other => other,
    })?;
    let describe = git(dir, &["describe", "--always", "--tags", &sha]).ok();
    let subject = git(dir, &["log", "-1", "--format=%s", &sha]).ok();
    Ok(Revision::Commit { sha, describe, subject })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Makes a throwaway repository with `n` commits touching `file.txt`; returns the dir and the shas, oldest first.
    pub fn repo_with_commits(n: usize) -> (tempfile::TempDir, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        let run = |args: &[&str]| {
            let ok = Command::new("git").arg("-C").arg(p).args(args).output().unwrap();
            assert!(ok.status.success(), "{args:?}: {}", String::from_utf8_lossy(&ok.stderr));
        };
        run(&["init", "-q", "-b", "main"]);
        run(&["config", "user.email", "t@example.com"]);
        run(&["config", "user.name", "Test"]);
        let mut shas = Vec::new();
        for i in 0..n {
            std::fs::write(p.join("file.txt"), format!("{i}\n")).unwrap();
            run(&["add", "file.txt"]);
            run(&["commit", "-q", "-m", &format!("commit number {i}")]);
            shas.push(git(p, &["rev-parse", "HEAD"]).unwrap());
        }
        (dir, shas)
    }

    #[test]
    fn resolves_head_with_subject() {
        let (dir, shas) = repo_with_commits(2);
        let rev = resolve(dir.path(), "HEAD").unwrap();
        match rev {
            Revision::Commit { sha, subject, describe } => {
                assert_eq!(sha, shas[1]);
                assert_eq!(subject.as_deref(), Some("commit number 1"));
                assert!(describe.is_some());
            }
            other => panic!("{other:?}"),
        }
        let err = resolve(dir.path(), "no-such-branch").unwrap_err();
        assert!(err.to_string().contains("no-such-branch"), "{err}");
        assert!(toplevel(Path::new("/")).is_err());
    }
}
