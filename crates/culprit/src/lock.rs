//! Advisory file locks that keep two culprit processes from driving the same work at once.
//!
//! A lock is an `flock` on a small file that names its holder (its process id), so that the process refused can
//! say who holds it. The lock goes with the process: a process killed with `kill -9` leaves the file
//! but not the lock, and the next one takes it at once.

use anyhow::{Context, Result};
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::Path;

/// The outcome of [`try_lock`].
pub(crate) enum Lock {
    /// The lock is ours until the file is dropped (or the process ends).
    Held(File),
    /// Another process holds it; what it wrote about itself, when it could be read.
    Busy { holder: String },
}

/// A hash of `parts` for naming a lock file after what it stands for: FNV-1a over each part and a zero separator,
/// stable across builds and platforms (unlike std's hasher), so every culprit names the same lock the same way.
pub(crate) fn stable_hash(parts: &[&str]) -> u64 {
    parts
        .iter()
        .flat_map(|part| part.bytes().chain([0u8]))
        .fold(0xcbf29ce484222325u64, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x100000001b3))
}

/// How long [`try_lock_briefly`] keeps trying: far longer than anyone holds a lock only to look at it.
const LOOK_WINDOW: std::time::Duration = std::time::Duration::from_millis(500);

/// [`try_lock`], tried again for a moment while busy: `bisect list` and the dashboard hold a session's lock for an
/// instant to tell a stopped session from a driven one (flock has no way to look without taking, see [`is_free`]),
/// and a `--resume` started in that instant must not be refused for it. A lock that a process holds while it
/// drives the work stays busy.
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

/// Whether no process holds the lock on the existing file `path`: a shared lock taken and dropped at once, and the
/// file left as it is (the holder's name in it stays for whoever is refused next).
pub(crate) fn is_free(path: &Path) -> bool {
    let Ok(file) = File::open(path) else { return false };
    // SAFETY: flock on a file descriptor we own; it only sets an advisory lock, released when `file` is dropped.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) == 0 }
}

/// Takes the lock on `path` without waiting, creating the file (and its directory) when needed.
pub(crate) fn try_lock(path: &Path) -> Result<Lock> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .with_context(|| format!("cannot open the lock {}", path.display()))?;
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
            return Ok(Lock::Busy { holder });
        }
        return Err(error).with_context(|| format!("cannot lock {}", path.display()));
    }
    // Who holds it, for the message of the process that is refused. Best effort: the lock is what counts.
    let _ = file.set_len(0).and_then(|()| file.rewind()).and_then(|()| write!(file, "process {}", std::process::id()));
    Ok(Lock::Held(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_is_told_who_holds_the_lock_until_it_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("x.lock");
        let first = match try_lock(&path).unwrap() {
            Lock::Held(file) => file,
            Lock::Busy { holder } => panic!("a fresh lock is busy: {holder}"),
        };
        // flock locks belong to open file descriptions: a second open in the same process is refused too.
        match try_lock(&path).unwrap() {
            Lock::Held(_) => panic!("two holders"),
            Lock::Busy { holder } => assert!(holder.contains(&format!("process {}", std::process::id())), "{holder}"),
        }
        drop(first);
        assert!(matches!(try_lock(&path).unwrap(), Lock::Held(_)));
    }

    #[test]
    fn a_look_at_a_lock_neither_takes_it_for_long_nor_rewrites_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        assert!(!is_free(&path), "a missing file is no stopped session");
        let held = match try_lock(&path).unwrap() {
            Lock::Held(file) => file,
            Lock::Busy { holder } => panic!("a fresh lock is busy: {holder}"),
        };
        assert!(!is_free(&path));
        drop(held);
        std::fs::write(&path, "process 4242").unwrap();
        assert!(is_free(&path));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "process 4242");
    }

    #[test]
    fn a_lock_held_for_a_moment_is_taken_once_it_is_let_go_and_one_held_on_stays_busy() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        // Held for 100 ms, as `bisect list` looking at it would (for far less): taken once let go.
        let Lock::Held(look) = try_lock(&path).unwrap() else { panic!("a fresh lock is busy") };
        let letting_go = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            drop(look);
        });
        assert!(matches!(try_lock_briefly(&path).unwrap(), Lock::Held(_)));
        letting_go.join().unwrap();
        // Held on, as by a process driving the session: still busy after the window.
        let Lock::Held(_driving) = try_lock(&path).unwrap() else { panic!("a free lock is busy") };
        let begun = std::time::Instant::now();
        assert!(matches!(try_lock_briefly(&path).unwrap(), Lock::Busy { .. }));
        assert!(begun.elapsed() >= LOOK_WINDOW);
    }
}
