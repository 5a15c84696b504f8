//! Advisory file locks that keep two culprit processes from driving the same work at once.
//!
//! A lock is an `flock` on a small file that names its holder (its process id), so that the process refused can
//! say who holds it. The lock goes with the process: a process killed with `kill -9` leaves the file
//! but not the lock, and the next one takes it at once. Work that finishes removes the file ([`LockFile::remove`]),
//! so that a file left behind says the work stopped before it was done.

use anyhow::{bail, Context, Result};
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// How many times [`try_lock`] opens the file again after locking one that a finishing holder had just removed.
/// Each time follows a removal by another process, so this is only a guard against a path that keeps changing.
const MAX_ATTEMPTS: usize = 100;

/// The outcome of [`try_lock`].
pub(crate) enum Lock {
    /// The lock is ours until the [`LockFile`] is dropped (or the process ends).
    Held(LockFile),
    /// Another process holds it; what it wrote about itself, when it could be read.
    Busy { holder: String },
}

/// A lock held: the open file the `flock` is on, and the path that names it.
#[derive(Debug)]
pub(crate) struct LockFile {
    file: File,
    path: PathBuf,
}

impl LockFile {
    /// Says what the holder does with the lock, after its process id, for the message of a process refused it (and
    /// for one that may wait, see [`CLEANING_UP`]). Best effort, as the process id is: the lock is what counts.
    pub(crate) fn say(&mut self, doing: &str) {
        let text = format!("process {}, {doing}", std::process::id());
        let file = &mut self.file;
        let _ = file.set_len(0).and_then(|()| file.rewind()).and_then(|()| file.write_all(text.as_bytes()));
    }

    /// Releases the lock and removes its file, for work that is finished. The file is unlinked while the lock is
    /// still held, and only when the path still names the file locked. A process that opened the file before the
    /// unlink locks it after the release, but finds that its path no longer names it and takes the lock again on a
    /// new file (see [`try_lock`]), so two processes never both hold the lock.
    pub(crate) fn remove(self) -> Result<()> {
        let removed = match names(&self.path, &self.file) {
            Ok(true) => std::fs::remove_file(&self.path),
            Ok(false) => Ok(()),
            Err(error) => Err(error),
        };
        removed.with_context(|| format!("cannot remove the lock {}", self.path.display()))?;
        drop(self.file);
        Ok(())
    }
}

/// A held lock whose file goes when it is let go, however the work ends (an error, Ctrl-C): for a lock whose file
/// says nothing once nobody holds it, unlike a session's, whose file left behind says the session stopped.
pub(crate) struct RemovedWhenDropped(Option<LockFile>);

impl RemovedWhenDropped {
    pub(crate) fn new(lock: LockFile) -> Self {
        RemovedWhenDropped(Some(lock))
    }
}

impl Drop for RemovedWhenDropped {
    fn drop(&mut self) {
        // Best effort: a file left behind is only untidy, and the lock goes with the file descriptor either way.
        if let Some(lock) = self.0.take() {
            let _ = lock.remove();
        }
    }
}

/// One attempt at a lock on a file opened at its path.
enum Attempt {
    Held(LockFile),
    /// Another process holds it (see [`Lock::Busy`]).
    Busy {
        holder: String,
    },
    /// The file was locked, but its path no longer names it: a holder that finished removed it in the meantime.
    Gone,
}

/// Takes the lock on `path` without waiting, creating the file (and its directory) when needed.
pub(crate) fn try_lock(path: &Path) -> Result<Lock> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    }
    for _ in 0..MAX_ATTEMPTS {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)
            .with_context(|| format!("cannot open the lock {}", path.display()))?;
        match lock_opened(file, path)? {
            Attempt::Held(lock) => return Ok(Lock::Held(lock)),
            Attempt::Busy { holder } => return Ok(Lock::Busy { holder }),
            Attempt::Gone => continue,
        }
    }
    bail!("cannot lock {}: its file was removed {MAX_ATTEMPTS} times while this process took it", path.display())
}

/// A hash of `parts` for naming a lock file after what it stands for: FNV-1a over each part and a zero separator,
/// stable across builds and platforms (unlike std's hasher), so every culprit names the same lock the same way.
pub(crate) fn stable_hash(parts: &[&str]) -> u64 {
    parts
        .iter()
        .flat_map(|part| part.bytes().chain([0u8]))
        .fold(0xcbf29ce484222325u64, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x100000001b3))
}

/// What a process says in a stopped bisect session's lock while it removes the session's leftovers (its worktrees,
/// a step left running) for another session of the repository: a resume of that session refused the lock then only
/// has to wait until they are gone, which is soon.
pub(crate) const CLEANING_UP: &str = "removing the leftovers of this stopped session";

/// How long [`try_lock_briefly`] keeps trying: far longer than anyone holds a lock only to look at it.
const LOOK_WINDOW: std::time::Duration = std::time::Duration::from_millis(500);

/// [`try_lock`], tried again for a moment while busy: `bisect list` and the dashboard hold a session's lock for an
/// instant to tell a stopped session from a driven one (flock has no way to look without taking, see
/// [`is_unheld`]), and a `--resume` started in that instant must not be refused for it. A lock that a process holds
/// while it drives the work stays busy.
pub(crate) fn try_lock_briefly(path: &Path) -> Result<Lock> {
    let begun = std::time::Instant::now();
    loop {
        match try_lock(path)? {
            Lock::Busy { .. } if begun.elapsed() < LOOK_WINDOW => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            outcome => return Ok(outcome),
        }
    }
}

/// Locks `file`, opened at `path`, without waiting.
fn lock_opened(mut file: File, path: &Path) -> Result<Attempt> {
    // SAFETY: flock on a file descriptor we own; it only sets an advisory lock.
    let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if locked != 0 {
        let error = std::io::Error::last_os_error();
        if error.raw_os_error() == Some(libc::EWOULDBLOCK) {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.trim();
            let holder = if holder.is_empty() {
                "a process that has not said who it is".to_string()
            } else {
                holder.to_string()
            };
            return Ok(Attempt::Busy { holder });
        }
        return Err(error).with_context(|| format!("cannot lock {}", path.display()));
    }
    // A lock on a file that is no longer at the path excludes nobody: the next taker creates a new file there.
    if !names(path, &file).with_context(|| format!("cannot read the lock {}", path.display()))? {
        return Ok(Attempt::Gone);
    }
    // Who holds it, for the message of the process that is refused. Best effort: the lock is what counts.
    let _ = file.set_len(0).and_then(|()| file.rewind()).and_then(|()| write!(file, "process {}", std::process::id()));
    Ok(Attempt::Held(LockFile { file, path: path.to_path_buf() }))
}

/// Whether `path` is a lock file that no process holds, without creating it: the work it guarded stopped without
/// finishing (a process killed, or one that failed), since finished work removes its file.
pub(crate) fn is_unheld(path: &Path) -> bool {
    let Ok(file) = File::open(path) else { return false };
    match lock_opened(file, path) {
        // The probe's own lock goes with the file, here.
        Ok(Attempt::Held(_)) => true,
        _ => false,
    }
}

/// Whether `path` names the open `file` (the same device and inode); false when nothing is at the path.
fn names(path: &Path, file: &File) -> std::io::Result<bool> {
    let locked = file.metadata()?;
    match std::fs::metadata(path) {
        Ok(named) => Ok(named.dev() == locked.dev() && named.ino() == locked.ino()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(path: &Path) -> LockFile {
        match try_lock(path).unwrap() {
            Lock::Held(lock) => lock,
            Lock::Busy { holder } => panic!("a free lock is busy: {holder}"),
        }
    }

    #[test]
    fn a_second_taker_is_told_who_holds_the_lock_until_it_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("x.lock");
        let first = held(&path);
        // flock locks belong to open file descriptions: a second open in the same process is refused too.
        match try_lock(&path).unwrap() {
            Lock::Held(_) => panic!("two holders"),
            Lock::Busy { holder } => assert!(holder.contains(&format!("process {}", std::process::id())), "{holder}"),
        }
        assert!(!is_unheld(&path));
        drop(first);
        assert!(is_unheld(&path), "a file left behind by a holder that did not finish");
        assert!(matches!(try_lock(&path).unwrap(), Lock::Held(_)));
    }

    #[test]
    fn a_finished_holder_removes_its_file_and_a_taker_that_opened_it_before_does_not_hold_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let first = held(&path);
        // A second process opens the file while the first holds it, and locks it only after the first removed it
        // and let go: its lock is on a file no longer at the path.
        let opened_before = std::fs::OpenOptions::new().read(true).write(true).open(&path).unwrap();
        first.remove().unwrap();
        assert!(!path.exists());
        assert!(!is_unheld(&path), "no file, nothing stopped");
        assert!(matches!(lock_opened(opened_before, &path).unwrap(), Attempt::Gone));
        // Taking the lock again makes a new file, which excludes the next taker as before.
        let again = held(&path);
        assert!(matches!(try_lock(&path).unwrap(), Lock::Busy { .. }));
        again.remove().unwrap();
        assert!(!path.exists());
    }

    #[test]
    fn takers_racing_holders_that_remove_the_file_never_hold_the_lock_together() {
        // Threads stand in for processes: flock locks belong to open file descriptions, which each try_lock opens.
        use std::sync::atomic::{AtomicUsize, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let (holders, taken) = (AtomicUsize::new(0), AtomicUsize::new(0));
        std::thread::scope(|scope| {
            for _ in 0..6 {
                scope.spawn(|| {
                    for _ in 0..300 {
                        if let Lock::Held(lock) = try_lock(&path).unwrap() {
                            assert_eq!(holders.fetch_add(1, Ordering::SeqCst), 0, "two holders at once");
                            taken.fetch_add(1, Ordering::SeqCst);
                            std::thread::yield_now();
                            holders.fetch_sub(1, Ordering::SeqCst);
                            lock.remove().unwrap();
                        }
                    }
                });
            }
        });
        assert!(taken.load(Ordering::SeqCst) > 0);
        assert!(!path.exists());
    }

    #[test]
    fn a_lock_held_for_a_moment_is_taken_once_it_is_let_go_and_one_held_on_stays_busy() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        // Held for 100 ms, as `bisect list` looking at it would (for far less): taken once let go.
        let look = held(&path);
        let letting_go = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            drop(look);
        });
        assert!(matches!(try_lock_briefly(&path).unwrap(), Lock::Held(_)));
        letting_go.join().unwrap();
        // Held on, as by a process driving the session: still busy after the window.
        let _driving = held(&path);
        let begun = std::time::Instant::now();
        assert!(matches!(try_lock_briefly(&path).unwrap(), Lock::Busy { .. }));
        assert!(begun.elapsed() >= LOOK_WINDOW);
    }

    #[test]
    fn a_lock_removed_when_dropped_leaves_no_file_and_excludes_while_held() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let guard = RemovedWhenDropped::new(held(&path));
        assert!(matches!(try_lock(&path).unwrap(), Lock::Busy { .. }));
        drop(guard);
        assert!(!path.exists());
    }
}
