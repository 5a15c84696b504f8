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
    #[error("{dir} is not inside a git repository: give the repository with --repo DIR or run from inside it (culprit run can store results under --label NAME instead)")]
    NotARepo { dir: String },
    #[error("{dir} does not exist: give an existing git repository with --repo DIR")]
    NoSuchDir { dir: String },
    /// Revisions that make no range to bisect (the same commit twice, swapped, unrelated): Culprit's check, so the
    /// message names no git command, which "git bisect in DIR:" did though git bisect never ran (QA 59).
    #[error("{reason} (in {dir})")]
    BadRange { dir: String, reason: String },
}

/// Runs `git -C dir args...` and returns its trimmed stdout.
///
/// The user's `log.showSignature` is turned off: with it, `git log` prints gpg's verification of every signed commit
/// (and merge tag) into its output, whatever `--format` says, and those lines were read as commits of the bisect's
/// range and as commit subjects.
pub fn git(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    let mut command = Command::new("git");
    command.arg("-C").arg(dir).args(["-c", "log.showSignature=false"]).args(args);
    let out = command.output().map_err(GitError::Spawn)?;
    if !out.status.success() {
        return Err(GitError::Failed {
            args: args.join(" "),
            dir: dir.display().to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
}

/// The commits of `shas` that the repository at `dir` does not hold (history rewritten, then pruned by `git gc`), in
/// the order given. One `git cat-file --batch-check` reads them all, however long a bisect's range is.
pub fn missing_commits(dir: &Path, shas: &[&str]) -> Result<Vec<String>, GitError> {
    use std::io::Write;
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["cat-file", "--batch-check"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(GitError::Spawn)?;
    let input: String = shas.iter().map(|sha| format!("{sha}\n")).collect();
    // Written from another thread: git answers line by line, and with thousands of commits its output would fill
    // the pipe while this thread still wrote, each waiting for the other.
    let stdin = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(input.as_bytes());
        }
    });
    let out = child.wait_with_output().map_err(GitError::Spawn)?;
    let _ = writer.join();
    if !out.status.success() {
        return Err(GitError::Failed {
            args: "cat-file --batch-check".into(),
            dir: dir.display().to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    let answers = String::from_utf8_lossy(&out.stdout);
    Ok(answers.lines().filter_map(|line| line.strip_suffix(" missing")).map(str::to_string).collect())
}

/// The top of the repository containing `dir`.
pub fn toplevel(dir: &Path) -> Result<PathBuf, GitError> {
    if !dir.exists() {
        return Err(GitError::NoSuchDir { dir: dir.display().to_string() });
    }
    git(dir, &["rev-parse", "--show-toplevel"])
        .map(PathBuf::from)
        .map_err(|_| GitError::NotARepo { dir: dir.display().to_string() })
}

/// Resolves `rev` (a branch, tag, sha prefix, `HEAD~3`) in the repository at `dir` into a full commit revision with
/// its `git describe` and subject.
pub fn resolve(dir: &Path, rev: &str) -> Result<Revision, GitError> {
    let spec = format!("{rev}^{{commit}}");
    let sha = git(dir, &["rev-parse", "--verify", "--quiet", &spec]).map_err(|e| match e {
        // A repository without commits has no revision at all; saying that '{rev}' is not a commit would send the
        // user looking for a typo.
        GitError::Failed { args, dir: where_, .. }
            if git(dir, &["rev-list", "-n", "1", "--all"]).is_ok_and(|s| s.is_empty()) =>
        {
            GitError::Failed { args, dir: where_, stderr: "the repository has no commits yet".to_string() }
        }
        GitError::Failed { args, dir, .. } => {
            GitError::Failed { args, dir, stderr: format!("'{rev}' is not a commit in this repository") }
        }
        other => other,
    })?;
    let describe = git(dir, &["describe", "--always", "--tags", &sha]).ok();
    let subject = git(dir, &["log", "-1", "--format=%s", &sha]).ok();
    Ok(Revision::Commit { sha, describe, subject })
}

/// One commit of a bisect range, with its parents as indices into the range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeCommit {
    pub sha: String,
    pub subject: String,
    /// Parents inside the range, first parent first. A parent outside the range (a side branch forked before good,
    /// or a commit reachable from another good end) maps to good, index 0, since everything a good end reaches is
    /// taken to be good.
    pub parents: Vec<usize>,
}

/// The good ends of a bisect as its range reads them ([`bisect_range_of`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GoodEnds {
    /// The commit measured as good, index 0 of the range: the first good given, or its merge base with bad when it
    /// is not an ancestor of bad.
    pub first: String,
    /// The other good ends, each an ancestor of bad: they only bound the candidates, and are taken to be good without
    /// being measured, as git bisect takes every good commit it is given.
    pub others: Vec<String>,
    /// Each good given (as given, with its SHA) that is not an ancestor of bad, with the merge bases that stand for
    /// it.
    pub merge_bases: Vec<(String, String, Vec<String>)>,
}

/// The candidate commits between `good` and `bad` as git bisect sees them: good first (index 0), then every commit
/// reachable from bad and not from good, in topological order, bad last. See [`bisect_range_of`].
pub fn bisect_range(dir: &Path, good: &str, bad: &str) -> Result<Vec<RangeCommit>, GitError> {
    bisect_range_of(dir, &[good], bad).map(|(range, _)| range)
}

/// The candidate commits of a bisect from `goods` to `bad` as `git bisect start BAD GOOD...` sees them: the first
/// good end first (index 0), then every commit reachable from bad and from no good (`git rev-list BAD ^GOOD...`), in
/// topological order, bad last.
///
/// A good that is not an ancestor of bad (on a branch of its own since they forked) stands for the merge base(s) of
/// the two, as in git bisect: the commits of good's own branch are no candidates, and the merge base is where bad's
/// history was last good, if anything was; git bisect tests it first, and this range makes it the good end that the
/// bisect measures first (for the first good given). Bad an ancestor of good (the two swapped) and a good that shares
/// no history with bad are errors naming both.
pub fn bisect_range_of(dir: &Path, goods: &[&str], bad: &str) -> Result<(Vec<RangeCommit>, GoodEnds), GitError> {
    // Without this, a repository that was moved or deleted reads as "good is not a commit of this repository".
    if !dir.is_dir() {
        return Err(GitError::NoSuchDir { dir: dir.display().to_string() });
    }
    let failed = |args: &str, stderr: String| {
        let dir = dir.display().to_string();
        GitError::Failed { args: args.into(), dir, stderr }
    };
    let bad_range = |reason: String| GitError::BadRange { dir: dir.display().to_string(), reason };
    let commit_of = |name: &str, role: &str| {
        git(dir, &["rev-parse", "--verify", "--quiet", &format!("{name}^{{commit}}")]).map_err(|_| {
            let what = "is not a commit of this repository (a branch, tag or SHA is expected)";
            bad_range(format!("{role} '{name}' {what}"))
        })
    };
    let bad_sha = commit_of(bad, "bad")?;
    let short = |sha: &str| sha[..sha.len().min(12)].to_string();
    let mut ends = GoodEnds::default();
    let mut all_goods: Vec<String> = Vec::new();
    for &good in goods {
        let good_sha = commit_of(good, "good")?;
        if good_sha == bad_sha {
            return Err(bad_range(format!(
                "--good {good} and --bad {bad} are the same commit {}: give a good commit from before the change and \
                 a bad one after it",
                short(&good_sha)
            )));
        }
        let mut stand_ins = vec![good_sha.clone()];
        if git(dir, &["merge-base", "--is-ancestor", &good_sha, &bad_sha]).is_err() {
            // Bad before good is the common slip (the newer commit given as good); say so rather than start from a
            // merge base that is bad itself.
            if git(dir, &["merge-base", "--is-ancestor", &bad_sha, &good_sha]).is_ok() {
                return Err(bad_range(format!(
                    "good {good} is not an ancestor of bad {bad}; they look swapped: bad is an ancestor of good, so \
                     give the older commit as --good"
                )));
            }
            let bases = git(dir, &["merge-base", "--all", &good_sha, &bad_sha]).unwrap_or_default();
            stand_ins = bases.lines().map(str::to_string).collect();
            if stand_ins.is_empty() {
                return Err(bad_range(format!(
                    "good {good} ({}) and bad {bad} ({}) share no history (git merge-base finds no common commit): \
                     give a good commit of bad's history as --good",
                    short(&good_sha),
                    short(&bad_sha)
                )));
            }
            ends.merge_bases.push((good.to_string(), good_sha, stand_ins.clone()));
        }
        for sha in stand_ins {
            if !all_goods.contains(&sha) {
                all_goods.push(sha);
            }
        }
    }
    let Some(first) = all_goods.first().cloned() else {
        return Err(bad_range("no good commit was given: give one with --good".to_string()));
    };
    ends.first = first.clone();
    ends.others = all_goods[1..].to_vec();
    let first_subject = git(dir, &["log", "-1", "--format=%s", &first])?;
    let mut commits = vec![RangeCommit { sha: first.clone(), subject: first_subject, parents: Vec::new() }];
    let mut args = vec!["log".to_string(), "--topo-order".into(), "--reverse".into(), "--format=%H%x09%P%x09%s".into()];
    args.push(bad_sha.clone());
    args.extend(all_goods.iter().map(|sha| format!("^{sha}")));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let log = git(dir, &args)?;
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    index.insert(first, 0);
    for line in log.lines() {
        let mut fields = line.splitn(3, '\t');
        let sha = fields.next().unwrap_or_default().to_string();
        let parents_text = fields.next().unwrap_or_default();
        let subject = fields.next().unwrap_or_default().to_string();
        let mut parents: Vec<usize> = Vec::new();
        // A parent outside the candidates is reachable from a good end, so it is good: it maps to the good end the
        // bisect measures.
        for p in parents_text.split_whitespace() {
            let i = index.get(p).copied().unwrap_or(0);
            if !parents.contains(&i) {
                parents.push(i);
            }
        }
        if parents.is_empty() {
            parents.push(0);
        }
        index.insert(sha.clone(), commits.len());
        commits.push(RangeCommit { sha, subject, parents });
    }
    if commits.last().map(|c| c.sha.as_str()) != Some(bad_sha.as_str()) {
        return Err(failed("log", "git did not list bad last in topological order".into()));
    }
    Ok((commits, ends))
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
    fn missing_commits_names_only_the_commits_the_repository_lacks() {
        let (dir, shas) = repo_with_commits(3);
        let gone = "0123456789abcdef0123456789abcdef01234567";
        let asked = [shas[0].as_str(), gone, shas[2].as_str()];
        assert_eq!(missing_commits(dir.path(), &asked).unwrap(), [gone]);
        assert!(missing_commits(dir.path(), &[shas[1].as_str()]).unwrap().is_empty());
    }

    #[test]
    fn an_empty_repository_says_it_has_no_commits_and_a_typo_is_named() {
        let (empty, _) = repo_with_commits(0);
        let message = resolve(empty.path(), "HEAD").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("no commits yet"), "{message}");
        let (dir, _) = repo_with_commits(1);
        let message = resolve(dir.path(), "no-such-branch").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("'no-such-branch' is not a commit"), "{message}");
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

    #[test]
    fn signed_commits_under_log_show_signature_are_read_as_commits_only() {
        // A user with `log.showSignature = true` and signed commits (a kernel's merges carry signed tags): git log
        // printed gpg's verification lines beside the formatted ones, and the range read "gpg: Signature made ..."
        // as a commit of its own. A stand-in gpg prints such a line, so no key is needed.
        let (dir, shas) = repo_with_commits(2);
        let p = dir.path();
        let gpg = p.join("fake-gpg");
        std::fs::write(&gpg, "#!/bin/sh\necho 'gpg: Signature made by a stand-in' >&2\nexit 1\n").unwrap();
        std::fs::set_permissions(&gpg, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let tree = git(p, &["rev-parse", "HEAD^{tree}"]).unwrap();
        let object = format!(
            "tree {tree}\nparent {}\nauthor T <t@example.com> 1700000000 +0000\ncommitter T <t@example.com> \
             1700000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEz\n -----END PGP SIGNATURE-----\n\nsigned\n",
            shas[1]
        );
        std::fs::write(p.join("object"), object).unwrap();
        let signed = git(p, &["hash-object", "-t", "commit", "-w", "object"]).unwrap();
        git(p, &["update-ref", "HEAD", &signed]).unwrap();
        git(p, &["config", "gpg.program", &gpg.display().to_string()]).unwrap();
        git(p, &["config", "log.showSignature", "true"]).unwrap();
        let range = bisect_range(p, &shas[0], "HEAD").unwrap();
        let read: Vec<&str> = range.iter().map(|c| c.sha.as_str()).collect();
        assert_eq!(read, [shas[0].as_str(), shas[1].as_str(), signed.as_str()]);
        assert_eq!(range[2].subject, "signed");
        let Revision::Commit { subject, .. } = resolve(p, "HEAD").unwrap() else { panic!("not a commit") };
        assert_eq!(subject.as_deref(), Some("signed"));
    }

    #[test]
    fn bisect_range_is_topological_with_merges() {
        let (dir, shas) = repo_with_commits(3);
        let p = dir.path();
        let run = |args: &[&str]| {
            let out = Command::new("git").arg("-C").arg(p).args(args).output().unwrap();
            assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        };
        // A side branch forked at commit 1, merged after commit 2.
        run(&["checkout", "-q", "-b", "side", &shas[1]]);
        std::fs::write(p.join("side.txt"), "side\n").unwrap();
        run(&["add", "side.txt"]);
        run(&["commit", "-q", "-m", "side work"]);
        run(&["checkout", "-q", "main"]);
        run(&["merge", "-q", "--no-edit", "side"]);
        let range = bisect_range(p, &shas[0], "main").unwrap();
        assert_eq!(range[0].sha, shas[0]);
        assert_eq!(range.len(), 5, "{range:?}");
        for (i, c) in range.iter().enumerate().skip(1) {
            assert!(c.parents.iter().all(|&q| q < i), "{range:?}");
        }
        assert_eq!(range.last().unwrap().parents.len(), 2);
        assert_eq!(range.last().unwrap().subject, "Merge branch 'side'");
        // Good on a branch of its own since it forked from bad's history: the range starts from their merge base,
        // and the branch's commits are no candidates, as `git rev-list bad ^good` lists them.
        let side = git(p, &["rev-parse", "side"]).unwrap();
        let (from_side, ends) = bisect_range_of(p, &[&side], &shas[2]).unwrap();
        let shas_of = |range: &[RangeCommit]| range.iter().map(|c| c.sha.clone()).collect::<Vec<_>>();
        assert_eq!(shas_of(&from_side), [shas[1].clone(), shas[2].clone()]);
        assert_eq!(ends.first, shas[1]);
        assert_eq!(ends.merge_bases, [(side.clone(), side.clone(), vec![shas[1].clone()])]);
        // Two good ends: the second one's commits are no candidates, and the first one is measured.
        let (two, ends) = bisect_range_of(p, &[&shas[0], &side], "main").unwrap();
        assert_eq!(two.len(), 3, "{two:?}");
        assert_eq!((ends.first.as_str(), ends.others.as_slice()), (shas[0].as_str(), [side.clone()].as_slice()));
        assert!(ends.merge_bases.is_empty());
        assert!(!shas_of(&two).contains(&side) && two[2].parents == [1, 0], "{two:?}");
        let unrelated = {
            run(&["checkout", "-q", "--orphan", "unrelated"]);
            run(&["commit", "-q", "-m", "unrelated root"]);
            git(p, &["rev-parse", "HEAD"]).unwrap()
        };
        let apart = bisect_range_of(p, &[&unrelated], "main").unwrap_err().to_string();
        assert!(apart.contains("share no history") && apart.contains(&unrelated[..12]), "{apart}");
        let swapped = bisect_range(p, "main", &shas[0]).unwrap_err().to_string();
        assert!(swapped.contains("not an ancestor") && swapped.contains("they look swapped"), "{swapped}");
        let unknown = bisect_range(p, "nosuch", "main").unwrap_err().to_string();
        assert!(unknown.contains("good 'nosuch' is not a commit"), "{unknown}");
        // QA 59: Culprit's own checks, which name no git command that never ran.
        let main = git(p, &["rev-parse", "main"]).unwrap();
        let same = bisect_range(p, "main", &main).unwrap_err().to_string();
        assert!(same.starts_with("--good main and --bad ") && same.contains("are the same commit"), "{same}");
        for message in [&swapped, &unknown, &same, &apart] {
            assert!(!message.starts_with("git "), "{message}");
        }
        let moved = bisect_range(&p.join("moved-away"), &shas[0], "main").unwrap_err().to_string();
        assert!(moved.contains("moved-away does not exist"), "{moved}");
    }
}
