//! Per-commit git worktrees for builds and runs, so the user's checkout is never touched.
//!
//! Each tested commit gets a detached worktree of its own under the bisect's work directory, built once and kept
//! while it is among the most recently used, so runs interleaved between commits (a, b, a, b) need no rebuild. The
//! oldest worktrees are removed past a limit to bound disk use; a commit whose worktree was removed is built again.
//! Kept worktrees ([`Worktrees::kept`], for `culprit check`'s references and a bisect session's commits) outlive the
//! process: each one whose build finished is marked, and the next process reuses it instead of building again.

use crate::git::{git, GitError};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

/// The worktrees of one bisect.
#[derive(Debug)]
pub struct Worktrees {
    repo: PathBuf,
    root: PathBuf,
    limit: usize,
    /// Commits with a live worktree, least recently used first.
    live: VecDeque<String>,
    /// For kept worktrees, what a finished build is marked with (the build command): the worktrees stay when the
    /// process ends, and one marked with the same text is reused as built.
    kept: Option<String>,
    /// Commits whose build finished in their worktree here ([`Worktrees::mark_built`]).
    built: Vec<String>,
    /// Whether a new worktree gets its commit's files; without them (`--no-checkout`) it holds only its commit as
    /// HEAD, for hooks that build the commit elsewhere ([`Worktrees::without_files`]).
    files: bool,
}

/// A worktree ready for a commit: whether it was just created (and so needs building).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    pub dir: PathBuf,
    pub fresh: bool,
}

impl Worktrees {
    /// Worktrees of `repo` under `root` (created when missing), at most `limit` at a time (at least 2, since a batch
    /// interleaves two commits).
    pub fn new(repo: &Path, root: &Path, limit: usize) -> Result<Worktrees, GitError> {
        Self::open(repo, root, limit, None)
    }

    /// Worktrees that stay when this process ends, for commits measured again by later processes (the references
    /// of `culprit check`, one process per step of `git bisect run`). A worktree left by an earlier process is
    /// reused when its build finished with the same `build` command (marked by [`Worktrees::mark_built`]).
    pub fn kept(repo: &Path, root: &Path, limit: usize, build: Option<&str>) -> Result<Worktrees, GitError> {
        Self::open(repo, root, limit, Some(build.unwrap_or_default().to_string()))
    }

    /// Worktrees under `root`, kept with `mark` or not. Worktrees left by an earlier process (a crash, a resume, the
    /// previous step of `git bisect run`) are stale as far as builds go, and removed, unless they are kept ones whose
    /// build finished under the same mark.
    fn open(repo: &Path, root: &Path, limit: usize, kept: Option<String>) -> Result<Worktrees, GitError> {
        std::fs::create_dir_all(root).map_err(|e| GitError::Failed {
            args: "worktree".into(),
            dir: root.display().to_string(),
            stderr: format!("cannot create the worktree directory: {e}"),
        })?;
        let mut trees = Worktrees {
            repo: repo.to_path_buf(),
            root: root.to_path_buf(),
            limit: limit.max(2),
            live: VecDeque::new(),
            kept,
            built: Vec::new(),
            files: true,
        };
        forget_missing_under(&trees.repo, root);
        let mut reused = Vec::new();
        if let Ok(entries) = std::fs::read_dir(root) {
            for entry in entries.flatten() {
                let path = entry.path();
                if !path.is_dir() {
                    continue;
                }
                match trees.built_here(&path) {
                    Some(sha) => reused.push(sha),
                    None => trees.remove_dir(&path),
                }
            }
        }
        reused.sort();
        trees.built.extend(reused.iter().cloned());
        trees.live.extend(reused);
        Ok(trees)
    }

    /// These worktrees without their commits' files, as `git worktree add --no-checkout` makes them: HEAD is the
    /// commit, and nothing else of it is on disk. Worktrees already made keep what they hold.
    pub fn without_files(mut self) -> Worktrees {
        self.files = false;
        self
    }

    /// The commit whose kept worktree `dir` is, when its build finished under this set's mark; `None` for worktrees
    /// that are not kept.
    fn built_here(&self, dir: &Path) -> Option<String> {
        let mark = self.kept.as_deref()?;
        let text = std::fs::read_to_string(Self::marker_of(dir)).ok()?;
        let (sha, command) = text.split_once('\n')?;
        (command == mark && dir.join(".git").exists()).then(|| sha.to_string())
    }

    /// Where a kept worktree's build mark is: beside it, so the build never sees it.
    fn marker_of(dir: &Path) -> PathBuf {
        dir.with_extension("built")
    }

    /// Marks `sha`'s worktree as built: for [`Worktrees::move_built_to`], and for later processes when kept.
    pub fn mark_built(&mut self, sha: &str) {
        if !self.built.iter().any(|b| b == sha) {
            self.built.push(sha.to_string());
        }
        if let Some(mark) = &self.kept {
            let _ = std::fs::write(Self::marker_of(&self.dir_for(sha)), format!("{sha}\n{mark}"));
        }
    }

    /// Removes every kept worktree under `root` and the directory itself: the references of another bisect.
    pub fn discard(repo: &Path, root: &Path) {
        // Worktrees that are not kept remove every worktree they find when opened.
        drop(Self::open(repo, root, 2, None));
        let _ = std::fs::remove_dir_all(root);
    }

    /// Removes the per-process worktree roots `<prefix>-<pid>` under `dir` whose process is gone. A process removes
    /// its own when it ends, but one killed with `kill -9` (or the machine going down) never does, and its
    /// worktrees (a kernel build each) stayed under `.git/culprit/` for good, each new process making its own.
    pub fn discard_orphans(repo: &Path, dir: &Path, prefix: &str) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let pid = name.strip_prefix(prefix).and_then(|rest| rest.strip_prefix('-')).and_then(|p| p.parse().ok());
            let Some(pid) = pid else { continue };
            if pid != std::process::id() && !process_alive(pid) && entry.path().is_dir() {
                Self::discard(repo, &entry.path());
            }
        }
    }

    fn dir_for(&self, sha: &str) -> PathBuf {
        self.root.join(&sha[..sha.len().min(12)])
    }

    fn remove_dir(&self, dir: &Path) {
        let _ = std::fs::remove_file(Self::marker_of(dir));
        let dir_text = dir.display().to_string();
        if git(&self.repo, &["worktree", "remove", "--force", &dir_text]).is_err() {
            // Removed by hand, git forgets the worktree whose directory is gone.
            let _ = std::fs::remove_dir_all(dir);
            let _ = git(&self.repo, &["worktree", "remove", "--force", &dir_text]);
        }
    }

    /// Whether `sha` has a live worktree whose build finished: running it again needs no build.
    pub fn holds_build_of(&self, sha: &str) -> bool {
        self.live.iter().any(|s| s == sha) && self.built.iter().any(|b| b == sha)
    }

    /// The worktree of `sha`, creating it (and evicting the least recently used one) when needed.
    pub fn checkout(&mut self, sha: &str) -> Result<Checkout, GitError> {
        let dir = self.dir_for(sha);
        if let Some(pos) = self.live.iter().position(|s| s == sha) {
            if dir.is_dir() {
                let s = self.live.remove(pos).unwrap_or_else(|| sha.to_string());
                self.live.push_back(s);
                return Ok(Checkout { dir, fresh: false });
            }
            self.live.remove(pos);
        }
        while self.live.len() >= self.limit {
            if let Some(old) = self.live.pop_front() {
                let old_dir = self.dir_for(&old);
                self.remove_dir(&old_dir);
            }
        }
        if dir.exists() {
            self.remove_dir(&dir);
        }
        // A fresh worktree holds no build, whatever an evicted one of the same commit held.
        self.built.retain(|b| b != sha);
        let dir_text = dir.display().to_string();
        let mut add = vec!["worktree", "add", "--detach", "--force"];
        if !self.files {
            add.push("--no-checkout");
        }
        git(&self.repo, &[&add[..], &[&dir_text, sha]].concat())?;
        self.live.push_back(sha.to_string());
        Ok(Checkout { dir, fresh: true })
    }

    /// Worktrees under `root`, kept and marked with `build` (as [`Worktrees::kept`] opens them), that take over this
    /// set's built worktrees, moved there with `git worktree move`; the rest of this set is removed with it. A bisect
    /// probes good and bad in worktrees of its own before its session exists, and the session's first runs are at
    /// good and bad again: without this, both were built twice (a kernel build each). A worktree that cannot be
    /// moved is built again. The moved ones are marked at once, so that a resume after a `kill -9` reuses them too.
    pub fn move_built_to(mut self, root: &Path, build: Option<&str>) -> Result<Worktrees, GitError> {
        let mut moved = Self::kept(&self.repo, root, self.limit, build)?;
        moved.files = self.files;
        for sha in self.live.clone() {
            if !self.built.contains(&sha) || moved.live.len() >= moved.limit {
                continue;
            }
            let (from, to) = (self.dir_for(&sha), moved.dir_for(&sha));
            let (from_text, to_text) = (from.display().to_string(), to.display().to_string());
            if git(&self.repo, &["worktree", "move", &from_text, &to_text]).is_ok() {
                self.live.retain(|s| s != &sha);
                moved.live.retain(|s| s != &sha);
                moved.live.push_back(sha.clone());
                moved.mark_built(&sha);
            }
        }
        Ok(moved)
    }

    /// Removes every worktree of this set, kept or not, with their marks and the root once it is empty: a bisect
    /// session's when it is done, since no resume will read them.
    pub fn remove(mut self) {
        self.remove_all();
        let _ = std::fs::remove_dir(&self.root);
        // Nothing is left for the drop to do; kept or not, it would only find the set empty.
        self.kept = None;
    }

    /// Removes every worktree this bisect made.
    pub fn remove_all(&mut self) {
        while let Some(sha) = self.live.pop_front() {
            let dir = self.dir_for(&sha);
            self.remove_dir(&dir);
        }
    }
}

impl Drop for Worktrees {
    fn drop(&mut self) {
        if self.kept.is_some() {
            return;
        }
        self.remove_all();
        // The root is per process for probes, checks and try-fix (`probe-<pid>`), so leaving it would add an empty
        // directory under the user's .git/culprit with every command. `remove_dir` only removes it when empty.
        let _ = std::fs::remove_dir(&self.root);
    }
}

/// Makes git forget the worktrees under `root` whose directories are gone (removed by hand, or with their root).
/// `git worktree prune` did that for every worktree of the repository: one of the user's own whose directory was
/// missing for a while (on a disk not mounted) lost its registration, and with it its checkout's link to the
/// repository. `git worktree remove --force` of a missing directory forgets that one alone.
pub fn forget_missing_under(repo: &Path, root: &Path) {
    let Ok(list) = git(repo, &["worktree", "list", "--porcelain"]) else { return };
    for entry in list.split("\n\n") {
        let path = entry.lines().find_map(|line| line.strip_prefix("worktree "));
        let prunable = entry.lines().any(|line| line.starts_with("prunable"));
        if let Some(path) = path.filter(|path| prunable && Path::new(path).starts_with(root)) {
            let _ = git(repo, &["worktree", "remove", "--force", path]);
        }
    }
}

/// Whether a process with this id exists (one of another user's counts: it cannot be signalled, but it is there).
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 sends nothing; it only checks that the process exists and may be signalled.
    let sent = unsafe { libc::kill(pid, 0) };
    sent == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::tests::repo_with_commits;

    #[test]
    fn checks_out_reuses_and_evicts() {
        let (repo, shas) = repo_with_commits(3);
        let root = tempfile::tempdir().unwrap();
        let mut trees = Worktrees::new(repo.path(), root.path(), 2).unwrap();
        let a = trees.checkout(&shas[0]).unwrap();
        assert!(a.fresh);
        assert_eq!(std::fs::read_to_string(a.dir.join("file.txt")).unwrap(), "0\n");
        assert!(!trees.checkout(&shas[0]).unwrap().fresh);
        let b = trees.checkout(&shas[1]).unwrap();
        assert_eq!(std::fs::read_to_string(b.dir.join("file.txt")).unwrap(), "1\n");
        // A third commit evicts the least recently used (shas[0]).
        trees.checkout(&shas[2]).unwrap();
        assert!(!a.dir.exists());
        assert!(trees.checkout(&shas[0]).unwrap().fresh);
        // The user's checkout is untouched.
        assert_eq!(std::fs::read_to_string(repo.path().join("file.txt")).unwrap(), "2\n");
        drop(trees);
        assert!(!root.path().exists(), "the worktrees and their emptied root are removed");
    }

    /// `--no-checkout`: a worktree whose HEAD is its commit, with none of the commit's files, in a set that keeps
    /// the mode when its built worktrees move to a session's kept set.
    #[test]
    fn worktrees_without_files_hold_their_commit_as_head_and_nothing_else() {
        let (repo, shas) = repo_with_commits(2);
        let root = tempfile::tempdir().unwrap();
        let mut probe = Worktrees::new(repo.path(), &root.path().join("probe"), 2).unwrap().without_files();
        let first = probe.checkout(&shas[0]).unwrap();
        assert!(first.fresh);
        let names: Vec<String> =
            std::fs::read_dir(&first.dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
        assert_eq!(names, [".git"], "only git's link is in the worktree");
        assert_eq!(git(&first.dir, &["rev-parse", "HEAD"]).unwrap().trim(), shas[0]);
        probe.mark_built(&shas[0]);
        let mut session = probe.move_built_to(&root.path().join("session"), Some("make")).unwrap();
        assert!(!session.checkout(&shas[0]).unwrap().fresh, "the moved build is reused");
        let second = session.checkout(&shas[1]).unwrap();
        assert!(second.fresh && !second.dir.join("file.txt").exists(), "the kept set makes its worktrees bare too");
        assert_eq!(git(&second.dir, &["rev-parse", "HEAD"]).unwrap().trim(), shas[1]);
        // Files checked out by default, as before.
        let mut plain = Worktrees::new(repo.path(), &root.path().join("plain"), 2).unwrap();
        assert!(plain.checkout(&shas[1]).unwrap().dir.join("file.txt").exists());
    }

    #[test]
    fn kept_worktrees_outlive_the_process_and_are_reused_only_when_built_by_the_same_command() {
        let (repo, shas) = repo_with_commits(2);
        let root = tempfile::tempdir().unwrap();
        let refs = root.path().join("refs");
        let mut trees = Worktrees::kept(repo.path(), &refs, 2, Some("make")).unwrap();
        let good = trees.checkout(&shas[0]).unwrap();
        assert!(good.fresh);
        trees.mark_built(&shas[0]);
        // The second was checked out but its build never finished (no mark).
        assert!(trees.checkout(&shas[1]).unwrap().fresh);
        std::fs::write(good.dir.join("built-output"), "from make").unwrap();
        drop(trees);
        assert!(good.dir.join("built-output").exists(), "kept worktrees stay when the process ends");
        let mut again = Worktrees::kept(repo.path(), &refs, 2, Some("make")).unwrap();
        assert!(!again.checkout(&shas[0]).unwrap().fresh, "a marked build is reused");
        assert!(good.dir.join("built-output").exists());
        assert!(again.checkout(&shas[1]).unwrap().fresh, "an unmarked one is made again");
        drop(again);
        // Another build command: nothing is reused.
        let mut other = Worktrees::kept(repo.path(), &refs, 2, Some("make -j2")).unwrap();
        assert!(other.checkout(&shas[0]).unwrap().fresh);
        assert!(!good.dir.join("built-output").exists());
        drop(other);
        Worktrees::discard(repo.path(), &refs);
        assert!(!refs.exists());
        let list = git(repo.path(), &["worktree", "list"]).unwrap();
        assert_eq!(list.lines().count(), 1, "only the main worktree is left: {list}");
    }

    #[test]
    fn qa_32_roots_of_processes_that_are_gone_are_removed_and_live_ones_kept() {
        let (repo, shas) = repo_with_commits(1);
        let dir = tempfile::tempdir().unwrap();
        // A process that has ended: its id is not reused this soon.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        let orphan = dir.path().join(format!("probe-{gone}"));
        let mut trees = Worktrees::new(repo.path(), &orphan, 2).unwrap();
        let left = trees.checkout(&shas[0]).unwrap().dir;
        // As `kill -9` leaves it: the worktree registered with git and its directory in place.
        std::mem::forget(trees);
        let live = dir.path().join(format!("probe-{}", std::process::id()));
        let other_prefix = dir.path().join(format!("check-{gone}"));
        let not_a_pid = dir.path().join("probe-refs");
        for kept in [&live, &other_prefix, &not_a_pid] {
            std::fs::create_dir_all(kept).unwrap();
        }
        Worktrees::discard_orphans(repo.path(), dir.path(), "probe");
        assert!(!left.exists() && !orphan.exists());
        assert!(live.exists() && other_prefix.exists() && not_a_pid.exists());
        let list = git(repo.path(), &["worktree", "list"]).unwrap();
        assert_eq!(list.lines().count(), 1, "the orphan's worktree is unregistered: {list}");
    }

    #[test]
    fn built_worktrees_move_to_another_root_and_unbuilt_ones_are_removed() {
        let (repo, shas) = repo_with_commits(3);
        let dir = tempfile::tempdir().unwrap();
        let mut probe = Worktrees::new(repo.path(), &dir.path().join("probe"), 4).unwrap();
        let built = probe.checkout(&shas[0]).unwrap().dir;
        std::fs::write(built.join("built-output"), "from make").unwrap();
        probe.mark_built(&shas[0]);
        let unbuilt = probe.checkout(&shas[1]).unwrap().dir;
        let mut session = probe.move_built_to(&dir.path().join("session"), Some("make")).unwrap();
        assert!(!built.exists() && !unbuilt.exists() && !dir.path().join("probe").exists());
        let moved = session.checkout(&shas[0]).unwrap();
        assert!(!moved.fresh, "the built worktree is reused");
        assert!(moved.dir.starts_with(dir.path().join("session")) && moved.dir.join("built-output").exists());
        assert!(session.checkout(&shas[1]).unwrap().fresh);
        // The session's worktrees stay for a resume, the moved build marked as one: a process killed with kill -9
        // here leaves them, and the next one reuses the built one and builds the other again.
        drop(session);
        let mut resumed = Worktrees::kept(repo.path(), &dir.path().join("session"), 4, Some("make")).unwrap();
        assert!(!resumed.checkout(&shas[0]).unwrap().fresh, "the moved build is reused after the process ended");
        assert!(resumed.checkout(&shas[1]).unwrap().fresh, "a worktree whose build never finished is made again");
        resumed.remove();
        assert!(!dir.path().join("session").exists());
        let list = git(repo.path(), &["worktree", "list"]).unwrap();
        assert_eq!(list.lines().count(), 1, "only the main worktree is left: {list}");
    }

    #[test]
    fn a_worktree_of_the_user_whose_directory_is_missing_stays_registered() {
        let (repo, shas) = repo_with_commits(2);
        let dir = tempfile::tempdir().unwrap();
        // The user's own worktree, on a disk that is not mounted now: its directory is missing.
        let own = dir.path().join("on-another-disk");
        git(repo.path(), &["worktree", "add", "-q", "--detach", &own.display().to_string(), &shas[0]]).unwrap();
        std::fs::remove_dir_all(&own).unwrap();
        // One of culprit's, left registered when its directory went with its root.
        let root = dir.path().join("culprit").join("session-1");
        let mut left = Worktrees::new(repo.path(), &root, 2).unwrap();
        left.checkout(&shas[1]).unwrap();
        std::mem::forget(left);
        std::fs::remove_dir_all(&root).unwrap();
        let mut trees = Worktrees::new(repo.path(), &root, 2).unwrap();
        trees.checkout(&shas[1]).unwrap();
        drop(trees);
        let list = git(repo.path(), &["worktree", "list", "--porcelain"]).unwrap();
        assert!(list.contains(&format!("worktree {}", own.display())), "the user's worktree was pruned: {list}");
        assert!(!list.contains(&root.display().to_string()), "culprit's missing worktree is still registered: {list}");
    }

    #[test]
    fn a_root_holding_something_else_is_kept() {
        let (repo, shas) = repo_with_commits(2);
        let root = tempfile::tempdir().unwrap();
        let mut trees = Worktrees::new(repo.path(), root.path(), 2).unwrap();
        trees.checkout(&shas[0]).unwrap();
        std::fs::write(root.path().join("note"), "not a worktree").unwrap();
        drop(trees);
        assert!(root.path().join("note").exists(), "only an empty root is removed");
    }
}
