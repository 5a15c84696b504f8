//! Build, deploy and benchmark processes left running by a culprit that died: recorded while they run, killed by
//! the next culprit.
//!
//! A step runs in a process group of its own, and culprit kills that group at the step's limit or on Ctrl-C. A
//! culprit killed with `kill -9` kills nothing: a hung build it was waiting for runs on forever, holding the machine
//! the bisect measures on. So while a step runs, a small file (see [`StepRecord`]) names its process group, the
//! step and the commit, and the culprit that started it; the file goes when the step ends. The next culprit to take
//! up the same work (a resumed session, the next `track --follow` pass) calls [`reap`], which kills the group if the
//! culprit that recorded it is dead and the group is still the step's.
//!
//! A process group id is a process id, and ids are reused: a group named by a stale file may by now be another
//! program's. So every step gets a random token in its environment ([`STEP_ENV`]), which its processes inherit, and
//! a group is killed only when one of its live processes still carries that token in `/proc/<pid>/environ`. Only
//! Linux's `/proc` is read; where it is missing nothing is ever found alive and nothing is killed.

use crate::process::{self, Finished, Invocation, ProcessError};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The environment variable each recorded step gets, holding its token.
pub const STEP_ENV: &str = "CULPRIT_STEP";

/// The first line of a record, naming its format, so that a file of another kind is never read as one.
const HEADER: &str = "culprit step record 1";

/// How long a leftover group gets between SIGTERM and SIGKILL, as a step killed at its limit does.
const TERM_GRACE: Duration = Duration::from_secs(5);

/// How long the group gets to be gone after SIGKILL before it is said to have survived.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// How often a group being killed is looked at.
const POLL: Duration = Duration::from_millis(50);

/// A new random token for a step's environment: 128 bits from the kernel, so that no other process carries it.
pub fn new_token() -> String {
    let mut bytes = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        // Without /dev/urandom, std's randomly keyed hasher over the time and this process's id still gives a token
        // no other step shares; it only has to differ from other steps', not resist a guess.
        use std::hash::BuildHasher;
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let seed = (now.as_nanos(), std::process::id());
        for half in bytes.chunks_mut(8) {
            let hash = std::collections::hash_map::RandomState::new().hash_one(seed);
            half.copy_from_slice(&hash.to_le_bytes());
        }
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What a record says: the step's process group and token, what it was doing, and which culprit started it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub pgid: i32,
    pub token: String,
    /// `build` or `deploy`, or `setup`, `run` or `cleanup` for a benchmark's processes.
    pub step: String,
    pub commit: String,
    /// The culprit that ran the step, with its start time in clock ticks since boot (`/proc/<pid>/stat`'s 22nd
    /// field), so that another process with its reused id is not taken for it.
    pub culprit_pid: i32,
    pub culprit_start: u64,
}

impl Recorded {
    fn text(&self) -> String {
        format!(
            "{HEADER}\npgid {}\ntoken {}\nstep {}\ncommit {}\nculprit {} {}\n",
            self.pgid, self.token, self.step, self.commit, self.culprit_pid, self.culprit_start
        )
    }

    /// A record's text read back; `None` for anything that is not one whole record (a file cut short by a crash
    /// while it was written, or another file at the path).
    fn parse(text: &str) -> Option<Recorded> {
        let mut lines = text.lines();
        if lines.next()? != HEADER {
            return None;
        }
        let mut field = |name: &str| lines.next()?.strip_prefix(name)?.strip_prefix(' ').map(str::to_string);
        let pgid = field("pgid")?.parse().ok()?;
        let token = field("token")?;
        let step = field("step")?;
        let commit = field("commit")?;
        let culprit = field("culprit")?;
        let (pid, start) = culprit.split_once(' ')?;
        let recorded = Recorded {
            pgid,
            token,
            step,
            commit,
            culprit_pid: pid.parse().ok()?,
            culprit_start: start.parse().ok()?,
        };
        // A group id of 0 or 1, or a negative one, would signal this process's own group or every process.
        (recorded.pgid > 1 && !recorded.token.is_empty()).then_some(recorded)
    }
}

/// The record of a step while it runs: its file is removed when this is dropped, however the step ended.
#[derive(Debug)]
pub struct StepRecord {
    path: PathBuf,
}

impl StepRecord {
    /// Writes the record of a step that started as process group `pgid` with `token` in its environment. The file is
    /// written whole under another name and renamed into place, so that a reader never sees half of it.
    pub fn write(path: &Path, pgid: i32, token: &str, step: &str, commit: &str) -> std::io::Result<StepRecord> {
        let culprit_pid = std::process::id() as i32;
        let culprit_start = live_start_time(culprit_pid).unwrap_or_default();
        let recorded = Recorded {
            pgid,
            token: token.to_string(),
            step: step.to_string(),
            commit: commit.to_string(),
            culprit_pid,
            culprit_start,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let partial = path.with_extension(format!("partial-{culprit_pid}"));
        let mut file = std::fs::File::create(&partial)?;
        file.write_all(recorded.text().as_bytes())?;
        drop(file);
        std::fs::rename(&partial, path)?;
        Ok(StepRecord { path: path.to_path_buf() })
    }
}

impl Drop for StepRecord {
    fn drop(&mut self) {
        // Best effort: a record left behind names a group that is gone (or no longer carries the token), which the
        // next reap only removes.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Runs `inv` as [`process::run`] does; with a `record` path, the process carries a new token in its environment
/// and the record there names its group, as `what` (build, deploy, setup, run, cleanup) of `commit`, until it ends.
/// The record is written once the process runs, so writing it delays only this process, never the step's start.
pub fn run_recorded(
    inv: &Invocation,
    timeout: Option<Duration>,
    interrupt: &Arc<AtomicBool>,
    record: Option<&Path>,
    what: &str,
    commit: &str,
) -> Result<Finished, ProcessError> {
    run_recorded_as(inv, timeout, interrupt, record, what, commit, &new_token())
}

/// [`run_recorded`] with the given token: the processes of one benchmark run share one, so that a process one step
/// started and left running in a group of its own (the postmaster `pg_ctl start` detaches into a session of its own)
/// carries the token a later step's record names, and [`reap`] kills it with that step's group.
pub fn run_recorded_as(
    inv: &Invocation,
    timeout: Option<Duration>,
    interrupt: &Arc<AtomicBool>,
    record: Option<&Path>,
    what: &str,
    commit: &str,
    token: &str,
) -> Result<Finished, ProcessError> {
    let Some(path) = record else { return process::run(inv, timeout, interrupt) };
    let token = token.to_string();
    let mut inv = inv.clone();
    inv.env.push((STEP_ENV.to_string(), token.clone()));
    let mut written = None;
    let finished = process::run_noting_start(&inv, timeout, interrupt, |pgid| {
        // Best effort: a step that cannot be recorded still runs; only a kill -9 of this process during it would
        // then leave it to be killed by hand.
        written = StepRecord::write(path, pgid, &token, what, commit).ok();
    });
    // The step has ended and its group was killed: the record goes.
    drop(written);
    finished
}

/// What [`reap`] did with a leftover step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reaped {
    pub recorded: Recorded,
    /// Whether the group is gone now; false when it outlived SIGKILL (a process stuck in the kernel), for the
    /// caller to say so.
    pub gone: bool,
}

/// Kills the step recorded at `path` if the culprit that recorded it is dead and its process group still runs and
/// still carries the step's token; removes the record unless its culprit still runs. `Ok(None)` when there was
/// nothing to kill. The caller holds the lock of the work the record belongs to, so no live culprit is running
/// that step; the check that the recorder is dead is a second guard, for a record read by some other work.
pub fn reap(path: &Path) -> std::io::Result<Option<Reaped>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let Some(recorded) = Recorded::parse(&text) else {
        std::fs::remove_file(path)?;
        return Ok(None);
    };
    if live_start_time(recorded.culprit_pid) == Some(recorded.culprit_start) {
        return Ok(None);
    }
    let group = carries_token(recorded.pgid, &recorded.token);
    let group_gone = !group || kill_group(recorded.pgid);
    // A process that left the step's group (a daemon in a session of its own, such as the throwaway PostgreSQL
    // server, started by an earlier step of the same run) still carries the token, whether or not the group lives.
    let strays = token_carriers(&recorded.token);
    let strays_gone = strays.is_empty() || kill_carriers(&recorded.token);
    let reaped = (group || !strays.is_empty()).then_some(Reaped { recorded, gone: group_gone && strays_gone });
    // Another culprit may have reaped the same record meanwhile (one that takes up its work, beside one that only
    // removes a dead culprit's worktrees): the record is gone either way.
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    Ok(reaped)
}

/// The live processes, in any group, with `STEP_ENV=token` in their environment.
pub(crate) fn token_carriers(token: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid as u32 != std::process::id() && stat_fields(pid).is_some_and(|f| !dead(&f)))
        .filter(|&pid| has_token(pid, token))
        .collect()
}

/// SIGTERM to every process carrying `token`, then SIGKILL to those left [`TERM_GRACE`] later; whether all are gone.
fn kill_carriers(token: &str) -> bool {
    let signal_carriers = |signal| {
        for pid in token_carriers(token) {
            // SAFETY: signalling a live process just seen to carry the step's token, which no other program has.
            unsafe {
                libc::kill(pid, signal);
            }
        }
    };
    signal_until_gone(signal_carriers, || token_carriers(token).is_empty())
}

/// SIGTERM to group `pgid`, then SIGKILL if it still runs [`TERM_GRACE`] later; whether it is gone at the end.
fn kill_group(pgid: i32) -> bool {
    let signal_group = |signal| {
        // SAFETY: signalling a process group that was checked to hold a process carrying the step's token.
        unsafe {
            libc::kill(-pgid, signal);
        }
    };
    signal_until_gone(signal_group, || group_members(pgid).is_empty())
}

/// Sends SIGTERM with `signal`, waits up to [`TERM_GRACE`] for `gone`, then SIGKILL and [`KILL_GRACE`]; whether
/// `gone` holds at the end. One escalation for a step's group and for the processes that left it.
fn signal_until_gone(signal: impl Fn(libc::c_int), gone: impl Fn() -> bool) -> bool {
    for (number, grace) in [(libc::SIGTERM, TERM_GRACE), (libc::SIGKILL, KILL_GRACE)] {
        signal(number);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if gone() {
                return true;
            }
            std::thread::sleep(POLL);
        }
    }
    gone()
}

/// Whether a live process of group `pgid` has `STEP_ENV=token` in its environment.
fn carries_token(pgid: i32, token: &str) -> bool {
    group_members(pgid).into_iter().any(|pid| has_token(pid, token))
}

/// Whether process `pid` has `STEP_ENV=token` in its environment.
fn has_token(pid: i32, token: &str) -> bool {
    let wanted = format!("{STEP_ENV}={token}");
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|environ| environ.split(|&b| b == 0).any(|entry| entry == wanted.as_bytes()))
}

/// The live processes of group `pgid`: zombies are dead, and one whose parent died may stay a zombie for as long as
/// nobody reaps it (a container's first process that is not an init), so they do not count.
fn group_members(pgid: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            stat_fields(pid).is_some_and(|f| f.get(2).is_some_and(|g| g.parse() == Ok(pgid)) && !dead(&f))
        })
        .collect()
}

/// The fields of `/proc/<pid>/stat` after the command name (which may hold spaces and parentheses), from the state
/// (the third field) on.
fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    Some(rest.split_whitespace().map(str::to_string).collect())
}

/// Whether the [`stat_fields`] of a process say it has exited: a zombie (`Z`) or one being freed (`X`).
fn dead(fields: &[String]) -> bool {
    matches!(fields.first().map(String::as_str), Some("Z" | "X"))
}

/// When process `pid` started, in clock ticks since boot; `None` when it does not exist or has exited.
pub(crate) fn live_start_time(pid: i32) -> Option<u64> {
    let fields = stat_fields(pid).filter(|f| !dead(f))?;
    // The 22nd field of the line is the 20th after the command name.
    fields.get(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    /// Waits up to 10 s for `done`, failing with `what` when it never holds.
    fn wait_within_10s(what: &str, mut done: impl FnMut() -> bool) {
        let begun = Instant::now();
        while !done() {
            assert!(begun.elapsed() < Duration::from_secs(10), "{what}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// A `sleep 600` in a process group of its own, as a hung step, with `env` in its environment.
    fn hung_step(env: &[(&str, &str)]) -> std::process::Child {
        let mut command = std::process::Command::new("sh");
        command.args(["-c", "sleep 600; :"]).envs(env.iter().copied()).process_group(0);
        let child = command.spawn().unwrap();
        // The shell's environment is readable once it runs; wait until its group is seen.
        wait_within_10s("the step never started", || !group_members(child.id() as i32).is_empty());
        child
    }

    /// Writes a record of group `pgid` with `token`, started by this process's id with start time `start`.
    fn write_record(path: &Path, pgid: u32, token: &str, start: u64) -> Recorded {
        let recorded = Recorded {
            pgid: pgid as i32,
            token: token.to_string(),
            step: "build".into(),
            commit: "0123456789abcdef".into(),
            culprit_pid: std::process::id() as i32,
            culprit_start: start,
        };
        std::fs::write(path, recorded.text()).unwrap();
        recorded
    }

    /// Whether `child` has exited, reaping it if so.
    fn exited(child: &mut std::process::Child) -> bool {
        child.try_wait().unwrap().is_some()
    }

    #[test]
    fn a_record_reads_back_and_goes_when_its_step_ends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("session-1.step");
        let record = StepRecord::write(&path, 4242, "abc", "deploy", "feed").unwrap();
        let read = Recorded::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let fields = (read.pgid, read.token.as_str(), read.step.as_str(), read.commit.as_str());
        assert_eq!(fields, (4242, "abc", "deploy", "feed"));
        assert_eq!(read.culprit_pid, std::process::id() as i32);
        assert_eq!(Some(read.culprit_start), live_start_time(std::process::id() as i32));
        drop(record);
        assert!(!path.exists());
        // Nothing but whole records with a group that is not this process's or everyone's.
        let everyone = read.text().replace("pgid 4242", "pgid 1");
        for bad in ["", "culprit step record 1\npgid 7\n", "pgid 7\ntoken t\n", &everyone] {
            assert_eq!(Recorded::parse(bad), None, "{bad:?}");
        }
        assert_eq!(new_token().len(), 32);
        assert_ne!(new_token(), new_token());
    }

    #[test]
    fn a_step_left_by_a_dead_culprit_is_killed_when_it_still_carries_its_token() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session-1.step");
        let token = new_token();
        let mut step = hung_step(&[(STEP_ENV, &token)]);
        // This process's id with another start time: a culprit that had this id before and died.
        let recorded = write_record(&path, step.id(), &token, 0);
        let reaped = reap(&path).unwrap();
        assert_eq!(reaped, Some(Reaped { recorded, gone: true }));
        assert!(!path.exists());
        wait_within_10s("the leftover step still runs", || exited(&mut step));
        // Gone, its record with it: a second look finds nothing.
        assert_eq!(reap(&path).unwrap(), None);
    }

    #[test]
    fn a_group_without_the_token_or_of_a_live_culprit_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session-1.step");
        // Another program's group that got the recorded id: it carries no token, or another step's.
        let mut other = hung_step(&[(STEP_ENV, "someone-else")]);
        write_record(&path, other.id(), &new_token(), 0);
        assert_eq!(reap(&path).unwrap(), None);
        assert!(!path.exists(), "a record of a group that is not the step's is only removed");
        assert!(!exited(&mut other));
        // A record of a culprit still running (this process, started when it did) is its own, and kept.
        let token = new_token();
        let mut step = hung_step(&[(STEP_ENV, &token)]);
        write_record(&path, step.id(), &token, live_start_time(std::process::id() as i32).unwrap());
        assert_eq!(reap(&path).unwrap(), None);
        assert!(path.exists());
        assert!(!exited(&mut step));
        // Anything else at the path is removed; no file at all is nothing to do.
        std::fs::write(&path, "not a record").unwrap();
        assert_eq!(reap(&path).unwrap(), None);
        assert!(!path.exists());
        assert_eq!(reap(&path).unwrap(), None);
        for mut child in [other, step] {
            // SAFETY: the group this test started, by its own id; its sleep as well as its shell.
            unsafe {
                libc::kill(-(child.id() as i32), libc::SIGKILL);
            }
            child.wait().unwrap();
        }
    }

    #[test]
    fn a_process_an_earlier_step_of_the_run_detached_is_killed_with_the_step() {
        // QA 18: oltp's and pgbench's throwaway server leaves its step's group (pg_ctl start puts the postmaster in a
        // session of its own); after a kill -9 of culprit during the measured step, the next culprit run killed the
        // benchmark's group but left the server running for good. Its processes carry the run's one token.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run-1.step");
        let token = new_token();
        // The server: started by the run's setup, in a group of its own that no record names.
        let mut server = hung_step(&[(STEP_ENV, &token)]);
        // The measured step the record names, with the same token.
        let mut step = hung_step(&[(STEP_ENV, &token)]);
        let recorded = write_record(&path, step.id(), &token, 0);
        assert_eq!(reap(&path).unwrap(), Some(Reaped { recorded: recorded.clone(), gone: true }));
        wait_within_10s("the detached server still runs", || exited(&mut step) && exited(&mut server));
        // Killed between steps (the step's group already gone), the server alone is found by its token.
        let mut server = hung_step(&[(STEP_ENV, &token)]);
        std::fs::write(&path, recorded.text()).unwrap();
        assert_eq!(reap(&path).unwrap(), Some(Reaped { recorded, gone: true }));
        wait_within_10s("the server left between steps still runs", || exited(&mut server));
    }
}
