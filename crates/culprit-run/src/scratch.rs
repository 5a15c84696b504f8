//! A run's scratch directory, marked as Culprit's and with its owner, so that the next culprit removes the one a
//! culprit killed with `kill -9` left behind.
//!
//! A run removes its scratch directory when it ends, but a culprit killed with `kill -9` (or by the OOM killer) runs
//! no cleanup: its directory stays under the scratch root for good, holding a throwaway PostgreSQL data directory or
//! gigabytes of fio's files, until a farm machine's disk is full. So each directory holds a marker file
//! ([`MARKER`]) naming the culprit that made it (its pid and start time) and the token its benchmark's processes
//! carry (see [`crate::step_record`]), and the culprit keeps a `flock` on the marker for as long as the run lasts;
//! the kernel lets go of the lock when the process dies, however it dies. [`remove_left_by_dead_runs`] removes a
//! directory only when all of these say its run is over: the marker is this user's and reads whole, the culprit it
//! names is not running, no live process carries its token, and nobody holds its lock (a culprit in another pid
//! namespace sharing the directory is invisible in `/proc` but holds the lock). A culprit killed between making its
//! directory and writing the marker leaves an empty one, named with its pid, which goes once it is a minute old.

use crate::step_record;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The marker file's name inside a scratch directory.
pub const MARKER: &str = ".culprit-scratch";

/// The first line of a marker, naming its format, so that a file of another kind is never read as one.
const HEADER: &str = "culprit scratch directory 1";

/// How much of the job's name a scratch directory's name takes. A file name is at most 255 bytes, and lkp's names
/// reach past that (fio-basic-pagecache-demo's atomic jobs are 190 characters before a split file's edits); the pid
/// and attempt after the name keep directories apart, the name only tells a person whose directory it is.
const NAME_CHARS: usize = 100;

/// A run's scratch directory, removed when this is dropped; while it lives, its marker is locked.
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
    /// The marker, open and locked: the lock says the directory is in use.
    _lock: File,
}

impl ScratchDir {
    /// Makes a new directory for a run of `job_name` under `root` (created when missing) and marks it as this
    /// process's, with `token`, the token the run's processes carry.
    pub fn create(root: &Path, job_name: &str, token: &str) -> std::io::Result<ScratchDir> {
        std::fs::create_dir_all(root)?;
        let safe: String = job_name
            .chars()
            .take(NAME_CHARS)
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
            .collect();
        for attempt in 0..1000u32 {
            let path = root.join(format!("{safe}.{}.{attempt}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
            return match mark(&path, token) {
                Ok(lock) => Ok(ScratchDir { path, _lock: lock }),
                Err(e) => {
                    let _ = std::fs::remove_dir_all(&path);
                    Err(e)
                }
            };
        }
        Err(std::io::Error::other("no free scratch directory name"))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // Best effort: the scratch directory can hold gigabytes of fio files, but a run must not fail for it; what
        // is left (a file a benchmark made unremovable) is the user's to see.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Writes the marker of `dir`, locked before it appears under its name (written whole under another name, locked,
/// then renamed into place), so that a reader never sees a half-written or unlocked marker of a live run.
fn mark(dir: &Path, token: &str) -> std::io::Result<File> {
    let pid = std::process::id() as i32;
    let start = step_record::live_start_time(pid).unwrap_or_default();
    let partial = dir.join(format!("{MARKER}.partial"));
    let mut file = File::create(&partial)?;
    file.write_all(format!("{HEADER}\nculprit {pid} {start}\ntoken {token}\n").as_bytes())?;
    if !lock(&file)? {
        return Err(std::io::Error::other(format!("{} is locked by another process", partial.display())));
    }
    std::fs::rename(&partial, dir.join(MARKER))?;
    Ok(file)
}

/// Takes an exclusive `flock` on `file` without waiting: false when another open file holds it. Files are opened
/// close-on-exec, so a benchmark the run starts does not hold the lock on after culprit dies.
fn lock(file: &File) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a file descriptor `file` owns for the call's duration.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let error = std::io::Error::last_os_error();
    if error.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(error)
    }
}

/// Opens `path` for reading, failing when it is a symlink (`O_NOFOLLOW`) rather than opening what it points to.
fn open_no_follow(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(path)
}

/// What a marker says: the culprit that made the directory, with its start time in clock ticks since boot, and the
/// token of the run's processes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub culprit_pid: i32,
    pub culprit_start: u64,
    pub token: String,
}

impl Owner {
    /// A marker's text read back; `None` for anything that is not one whole marker.
    fn parse(text: &str) -> Option<Owner> {
        let mut lines = text.lines();
        if lines.next()? != HEADER {
            return None;
        }
        let (pid, start) = lines.next()?.strip_prefix("culprit ")?.split_once(' ')?;
        let token = lines.next()?.strip_prefix("token ")?.to_string();
        let owner = Owner { culprit_pid: pid.parse().ok()?, culprit_start: start.parse().ok()?, token };
        (owner.culprit_pid > 0 && !owner.token.is_empty()).then_some(owner)
    }
}

/// A scratch directory [`remove_left_by_dead_runs`] removed, and the pid of the culprit that made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    pub path: PathBuf,
    pub culprit_pid: i32,
}

/// How old a directory without a marker must be before [`remove_left_by_dead_runs`] takes it for a killed run's: a
/// live run writes its marker microseconds after making the directory, and one in another pid namespace, whose pid
/// this one cannot see, must not lose its directory in between.
const UNMARKED_AGE: std::time::Duration = std::time::Duration::from_secs(60);

/// Removes `path`, a directory a culprit killed between making it and writing its marker left: empty, or holding
/// only the marker written under its temporary name. Only a directory named as [`ScratchDir::create`] names them
/// (`<job>.<pid>.<attempt>`), this user's, older than [`UNMARKED_AGE`] and whose pid is not running is one; nothing
/// else is ever in it, so nothing a run wrote is lost. Returns the pid when it was removed.
fn remove_if_never_marked(path: &Path, uid: u32) -> Option<i32> {
    use std::os::unix::fs::MetadataExt;
    let name = path.file_name()?.to_str()?;
    let mut parts = name.rsplitn(3, '.');
    let (attempt, pid) = (parts.next()?, parts.next()?);
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    parts.next()?;
    if !digits(attempt) || !digits(pid) {
        return None;
    }
    let pid: i32 = pid.parse().ok().filter(|&pid| pid > 0)?;
    let meta = std::fs::symlink_metadata(path).ok()?;
    let age = meta.modified().ok()?.elapsed().unwrap_or_default();
    if meta.uid() != uid || age < UNMARKED_AGE || step_record::live_start_time(pid).is_some() {
        return None;
    }
    let partial = path.join(format!("{MARKER}.partial"));
    for entry in std::fs::read_dir(path).ok()? {
        let entry = entry.ok()?;
        if entry.path() != partial || !entry.file_type().ok()?.is_file() {
            return None;
        }
    }
    let _ = std::fs::remove_file(&partial);
    // remove_dir, not remove_dir_all: should anything have appeared since, the directory stays.
    std::fs::remove_dir(path).ok().map(|()| pid)
}

/// Removes the scratch directories under `root` whose run is over: its culprit was killed before it could remove
/// them. Only a directory with a whole marker of this user is considered, and it is removed only when the culprit
/// the marker names is not running (its pid is free or another process's, told by the start time), no live process
/// carries the run's token (a benchmark left running, which the caller should reap first, may still write there),
/// and nobody holds the marker's lock. A directory of a culprit killed before it wrote the marker, which holds
/// nothing, goes too (see [`remove_if_never_marked`]). Best effort: what cannot be read or removed is left, for the
/// next call.
pub fn remove_left_by_dead_runs(root: &Path) -> Vec<Removed> {
    use std::os::unix::fs::MetadataExt;
    let uid = crate::process::effective_uid();
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(root) else { return removed };
    for entry in entries.flatten() {
        let path = entry.path();
        // A symlink is never followed: the directory removed is one this root holds.
        if !std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_dir()) {
            continue;
        }
        // Nor is a marker that is a symlink: Culprit never makes one, and one pointing at a dead run's marker
        // elsewhere would pass a directory it did not make (another user's, in a shared root) for that run's.
        let mut marker = match open_no_follow(&path.join(MARKER)) {
            Ok(marker) => marker,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(culprit_pid) = remove_if_never_marked(&path, uid) {
                    removed.push(Removed { path, culprit_pid });
                }
                continue;
            }
            Err(_) => continue,
        };
        if !marker.metadata().is_ok_and(|meta| meta.is_file() && meta.uid() == uid) {
            continue;
        }
        let mut text = String::new();
        let Some(owner) = std::io::Read::read_to_string(&mut marker, &mut text).ok().and_then(|_| Owner::parse(&text))
        else {
            continue;
        };
        if step_record::live_start_time(owner.culprit_pid) == Some(owner.culprit_start)
            || !step_record::token_carriers(&owner.token).is_empty()
        {
            continue;
        }
        // The lock is held while the directory is removed; a culprit that holds it is alive, whatever /proc says.
        if !lock(&marker).unwrap_or(false) {
            continue;
        }
        if std::fs::remove_dir_all(&path).is_ok() {
            removed.push(Removed { path, culprit_pid: owner.culprit_pid });
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_reads_back_and_anything_else_is_no_marker() {
        let text = format!("{HEADER}\nculprit 42 1234\ntoken abc\n");
        let owner = Owner::parse(&text).unwrap();
        assert_eq!((owner.culprit_pid, owner.culprit_start, owner.token.as_str()), (42, 1234, "abc"));
        for bad in ["", "culprit 42 1234\ntoken abc\n", &format!("{HEADER}\nculprit 42\ntoken abc\n")] {
            assert_eq!(Owner::parse(bad), None, "{bad:?}");
        }
        assert_eq!(Owner::parse(&format!("{HEADER}\nculprit 0 1\ntoken abc\n")), None);
        assert_eq!(Owner::parse(&format!("{HEADER}\nculprit 42 1\ntoken \n")), None);
    }

    #[test]
    fn a_live_run_s_directory_is_kept_and_removed_when_dropped() {
        let root = tempfile::tempdir().unwrap();
        let dir = ScratchDir::create(root.path(), "job/name x", &step_record::new_token()).unwrap();
        let name = dir.path().file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("job_name_x."), "{name}");
        assert!(dir.path().join(MARKER).is_file());
        assert_eq!(remove_left_by_dead_runs(root.path()), Vec::new());
        assert!(dir.path().is_dir());
        let path = dir.path().to_path_buf();
        drop(dir);
        assert!(!path.exists());
    }

    /// Makes `dir` under `root` with a marker naming `pid` started at `start`, with `token`, as a killed run left it.
    fn left_directory(root: &Path, name: &str, pid: i32, start: u64, token: &str) -> PathBuf {
        let dir = root.join(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join(MARKER), format!("{HEADER}\nculprit {pid} {start}\ntoken {token}\n")).unwrap();
        std::fs::write(dir.join("data"), "what the benchmark wrote").unwrap();
        dir
    }

    #[test]
    fn only_a_marked_directory_of_a_dead_run_whose_processes_are_gone_is_removed() {
        let root = tempfile::tempdir().unwrap();
        // A pid above any pid_max names no process.
        let dead = left_directory(root.path(), "dead", i32::MAX - 1, 5, &step_record::new_token());
        let me = std::process::id() as i32;
        let my_start = step_record::live_start_time(me).unwrap();
        let live = left_directory(root.path(), "live", me, my_start, &step_record::new_token());
        // This pid, but another start time: a pid reused since the run died, so the run is dead.
        let reused = left_directory(root.path(), "reused", me, my_start + 1, &step_record::new_token());
        // A benchmark still running with the dead run's token may still write there.
        let token = step_record::new_token();
        let mut benchmark = std::process::Command::new("sleep")
            .arg("600")
            .env(step_record::STEP_ENV, &token)
            .spawn()
            .unwrap();
        let busy = left_directory(root.path(), "busy", i32::MAX - 1, 5, &token);
        let unmarked = root.path().join("unmarked");
        std::fs::create_dir(&unmarked).unwrap();
        // A directory whose marker is a symlink to a dead run's marker elsewhere is not that run's.
        let elsewhere = tempfile::tempdir().unwrap();
        let dead_elsewhere = left_directory(elsewhere.path(), "dead", i32::MAX - 1, 5, &step_record::new_token());
        let linked = root.path().join("linked");
        std::fs::create_dir(&linked).unwrap();
        std::os::unix::fs::symlink(dead_elsewhere.join(MARKER), linked.join(MARKER)).unwrap();
        // Nor is a symlink in the root to a dead run's directory elsewhere followed.
        std::os::unix::fs::symlink(&dead_elsewhere, root.path().join("link")).unwrap();
        // A marker locked by a live process (one in another pid namespace, say).
        let locked = left_directory(root.path(), "locked", i32::MAX - 1, 5, &step_record::new_token());
        let held = File::open(locked.join(MARKER)).unwrap();
        assert!(lock(&held).unwrap());

        let begun = std::time::Instant::now();
        while step_record::token_carriers(&token).is_empty() {
            assert!(begun.elapsed() < std::time::Duration::from_secs(10), "the benchmark never started");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let mut removed: Vec<PathBuf> = remove_left_by_dead_runs(root.path()).into_iter().map(|r| r.path).collect();
        removed.sort();
        let _ = benchmark.kill();
        let _ = benchmark.wait();
        assert_eq!(removed, [dead.clone(), reused.clone()]);
        assert!(!dead.exists() && !reused.exists());
        assert!(live.is_dir() && busy.is_dir() && unmarked.is_dir() && locked.is_dir());
        assert!(linked.is_dir() && dead_elsewhere.join("data").is_file() && root.path().join("link").is_symlink());
        // Once the benchmark is gone, its directory goes too.
        let removed: Vec<PathBuf> = remove_left_by_dead_runs(root.path()).into_iter().map(|r| r.path).collect();
        assert_eq!(removed, [busy]);
    }

    #[test]
    fn a_directory_a_run_was_killed_before_marking_is_removed_when_old_and_empty() {
        let root = tempfile::tempdir().unwrap();
        let made = |name: &str, partial: bool, age_secs: u64| {
            let dir = root.path().join(name);
            std::fs::create_dir(&dir).unwrap();
            if partial {
                std::fs::write(dir.join(format!("{MARKER}.partial")), HEADER).unwrap();
            }
            let when = std::time::SystemTime::now() - std::time::Duration::from_secs(age_secs);
            File::open(&dir).unwrap().set_modified(when).unwrap();
            dir
        };
        // A pid above any pid_max names no process.
        let dead = i32::MAX - 1;
        let empty = made(&format!("job.{dead}.0"), false, 120);
        let partial = made(&format!("job.{dead}.1"), true, 120);
        // Kept: too young (a live run in another pid namespace may be about to mark it), its pid running, a
        // name Culprit does not make, or anything in it besides the temporary marker.
        let young = made(&format!("job.{dead}.2"), false, 5);
        let live = made(&format!("job.{}.0", std::process::id()), false, 120);
        let foreign = made("photos", false, 120);
        let with_data = root.path().join(format!("job.{dead}.3"));
        std::fs::create_dir(&with_data).unwrap();
        std::fs::write(with_data.join("fio_testfile"), "data").unwrap();
        File::open(&with_data).unwrap().set_modified(std::time::SystemTime::UNIX_EPOCH).unwrap();

        let removed = remove_left_by_dead_runs(root.path()).into_iter();
        let mut removed: Vec<_> = removed.map(|r| (r.path, r.culprit_pid)).collect();
        removed.sort();
        assert_eq!(removed, [(empty.clone(), dead), (partial.clone(), dead)]);
        assert!(young.is_dir() && live.is_dir() && foreign.is_dir() && with_data.join("fio_testfile").is_file());
    }
}
