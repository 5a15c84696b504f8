//! Running one external program: spawn, capture, time out, and account its resources with `wait4`.
//!
//! Benchmarks are measured by the kernel's own accounting of the child (`struct rusage` from `wait4`), so user and
//! system time and peak RSS are exact for the process tree that was waited for, and no `/usr/bin/time` wrapper is needed.
//! In the culprit binary that child is a small measuring process which starts the benchmark and reports its figures
//! ([`crate::measure`]), because a child forked from culprit itself has culprit's memory in its peak RSS.
//! Wall time runs from just before the spawn to the return of a blocking `wait4`, so it has the clock's resolution; a
//! watchdog thread enforces the time limit and the user's interrupt.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};
use thiserror::Error;

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The program and its arguments. `argv[0]` is looked up in `PATH`.
    pub argv: Vec<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// The working directory; `None` inherits the caller's.
    pub cwd: Option<PathBuf>,
    /// Whether stderr is folded into stdout (some benchmarks print their results to stderr).
    pub merge_stderr: bool,
    /// What messages call the command instead of quoting it, for a script whose text says little in 200 characters
    /// (iperf's servers and clients); `None` quotes the command line.
    pub label: Option<String>,
}

impl Invocation {
    pub fn new<I, S>(argv: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let argv = argv.into_iter().map(Into::into).collect();
        Invocation { argv, env: Vec::new(), cwd: None, merge_stderr: false, label: None }
    }

    /// A `sh -c` invocation of a shell command line.
    pub fn shell(command_line: &str) -> Self {
        Invocation::new(["sh", "-c", command_line])
    }

    pub fn in_dir(mut self, dir: &Path) -> Self {
        self.cwd = Some(dir.to_path_buf());
        self
    }

    /// The invocation, called `label` in messages (see [`Invocation::label`]).
    pub fn labelled(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// The command line as a user could paste it into a shell.
    pub fn display(&self) -> String {
        self.argv.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ")
    }

    /// The command line as a message quotes it: its label when it has one, else a `sh -c` line as written (the
    /// wrapper and its quoting would only bury it), any other as [`Invocation::display`] gives it, at most
    /// [`QUOTED_CHARS`] characters of it.
    pub fn summary(&self) -> String {
        match &self.label {
            Some(label) => shortened(label, QUOTED_CHARS),
            None => shortened(&self.command_text(), QUOTED_CHARS),
        }
    }

    /// The full command line [`Invocation::summary`] shortens.
    pub fn command_text(&self) -> String {
        match self.argv.as_slice() {
            [sh, dash_c, line] if sh == "sh" && dash_c == "-c" => line.clone(),
            _ => self.display(),
        }
    }
}

/// How many characters of a command line (or of a line of its output) a message quotes. A failed run's reason is
/// printed for every failed run and stored with it; a 3,000-character command line in full would drown the rest.
pub const QUOTED_CHARS: usize = 200;

/// `text` cut to its first `most` characters, followed by `... (N more characters)` when it is longer.
pub fn shortened(text: &str, most: usize) -> String {
    let total = text.chars().count();
    if total <= most {
        return text.to_string();
    }
    let head: String = text.chars().take(most).collect();
    format!("{head}... ({} more characters)", total - most)
}

/// Quotes one word for a POSIX shell when it needs quoting.
pub fn shell_quote(word: &str) -> String {
    let safe = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+%@".contains(c));
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Resource use of a finished child, from `wait4`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    pub wall_secs: f64,
    pub user_secs: f64,
    pub sys_secs: f64,
    pub max_rss_kib: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// Blocks read and written through the file system (`ru_inblock`, `ru_oublock`), GNU time's "File system
    /// inputs" and "File system outputs".
    pub fs_inputs: u64,
    pub fs_outputs: u64,
}

/// How a child ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    /// Killed by us after the time limit.
    TimedOut,
    /// Killed by us because the user interrupted the run.
    Interrupted,
}

impl Exit {
    pub fn success(&self) -> bool {
        matches!(self, Exit::Code(0))
    }

    pub fn describe(&self) -> String {
        match self {
            Exit::Code(c) => format!("exit status {c}"),
            Exit::Signal(s) => format!("killed by signal {s}"),
            Exit::TimedOut => "killed after the job's timeout".to_string(),
            Exit::Interrupted => "interrupted".to_string(),
        }
    }

    pub fn code(&self) -> Option<i32> {
        match self {
            Exit::Code(c) => Some(*c),
            _ => None,
        }
    }
}

/// The result of running one invocation.
#[derive(Debug, Clone)]
pub struct Finished {
    pub exit: Exit,
    pub stdout: String,
    pub stderr: String,
    pub usage: Usage,
}

#[derive(Debug, Error)]
pub enum ProcessError {
    #[error("cannot start '{program}': {source}")]
    Spawn { program: String, source: std::io::Error },
    #[error("empty command line")]
    Empty,
    #[error("waiting for '{program}' failed: {source}")]
    Wait { program: String, source: std::io::Error },
}

/// Runs an invocation to completion, killing its whole process group after `timeout` or when `interrupt` is set.
/// Output is captured in full; the child gets no stdin.
pub fn run(inv: &Invocation, timeout: Option<Duration>, interrupt: &Arc<AtomicBool>) -> Result<Finished, ProcessError> {
    run_noting_start(inv, timeout, interrupt, |_| ())
}

/// [`run`], calling `started` with the child's process group id (its pid) as soon as it is spawned, before waiting
/// for it: for a caller that records the group so that it can be killed even if this process dies first (see
/// [`crate::step_record`]).
pub fn run_noting_start(
    inv: &Invocation,
    timeout: Option<Duration>,
    interrupt: &Arc<AtomicBool>,
    started: impl FnOnce(libc::pid_t),
) -> Result<Finished, ProcessError> {
    let program = inv.argv.first().ok_or(ProcessError::Empty)?;
    // Measured through a small process of its own when the binary can start one ([`crate::measure`]), so that the
    // peak RSS is the benchmark's, not this process's memory copied into the child.
    let report_pipe = match measuring_enabled() {
        true => Some(ReportPipe::new().map_err(|source| ProcessError::Spawn { program: program.clone(), source })?),
        false => None,
    };
    let mut cmd = match &report_pipe {
        Some(pipe) => pipe.command(&inv.argv),
        None => {
            let mut cmd = Command::new(program);
            cmd.args(&inv.argv[1..]);
            cmd
        }
    };
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    for (k, v) in &inv.env {
        cmd.env(k, v);
    }
    if let Some(dir) = &inv.cwd {
        cmd.current_dir(dir);
    }
    // A process group of its own lets a timeout or Ctrl-C kill the benchmark's children too (fio and stress-ng fork
    // workers), and keeps the terminal's Ctrl-C from reaching the benchmark before we decide what to do.
    cmd.process_group(0);
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|source| ProcessError::Spawn { program: program.clone(), source })?;
    let pid = child.id() as libc::pid_t;
    // This process's copy of the pipe's writing end is closed, so that the report's end of file is the measuring
    // process's exit.
    let report_reader = report_pipe.map(ReportPipe::into_reader);
    started(pid);

    // Pipes are drained on their own threads so a chatty benchmark never blocks on a full pipe.
    let out_pipe = Drain::start(child.stdout.take());
    let err_pipe = Drain::start(child.stderr.take());

    // The wall time ends when the blocking `wait4` returns, microseconds after the child exits. (Polling with
    // `WNOHANG` every 5 ms, as this did before, measured wall time in steps of about 5 ms: a 75 ms benchmark read
    // 0.0718, 0.0769 or 0.0920 s and nothing in between, a 7% quantum ten times its real run-to-run noise.) The
    // time limit and the user's interrupt are a watchdog thread's job, which kills the group and so ends the wait.
    let exited = Arc::new(AtomicBool::new(false));
    let killed_for = Arc::new(AtomicU8::new(NOT_KILLED));
    {
        let (exited, killed_for, interrupt) = (exited.clone(), killed_for.clone(), interrupt.clone());
        thread::spawn(move || watchdog(pid, start, timeout, &interrupt, &exited, &killed_for));
    }
    let waited = wait_for(pid).map_err(|source| ProcessError::Wait { program: program.clone(), source });
    let wall = start.elapsed().as_secs_f64();
    exited.store(true, Ordering::SeqCst);
    let (mut status, rusage) = waited?;
    let mut usage = usage_of(wall, &rusage);
    // The measuring process's report, when it wrote one, is the benchmark's own status and figures; without one
    // (it was killed with the group before its benchmark ended) the figures are the measuring process's, which
    // include its benchmark's.
    match report_reader.and_then(|mut reader| {
        let mut text = String::new();
        reader.read_to_string(&mut text).ok()?;
        crate::measure::Report::decode(&text)
    }) {
        Some(crate::measure::Report::Waited { status: measured, usage: measured_usage }) => {
            status = measured;
            usage = measured_usage;
        }
        Some(crate::measure::Report::SpawnFailed { errno }) => {
            let source = std::io::Error::from_raw_os_error(errno);
            return Err(ProcessError::Spawn { program: program.clone(), source });
        }
        None => {}
    }
    let killed_for = match killed_for.load(Ordering::SeqCst) {
        TIMED_OUT => Some(Exit::TimedOut),
        INTERRUPTED => Some(Exit::Interrupted),
        _ => None,
    };
    // Children of the benchmark that outlived it would keep the pipes open; kill the group before draining.
    // SAFETY: signalling a process group we created; ESRCH when it is gone is fine.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
    let drained_by = Instant::now() + DRAIN_GRACE;
    let stdout = String::from_utf8_lossy(&out_pipe.finish(drained_by)).into_owned();
    let stderr = String::from_utf8_lossy(&err_pipe.finish(drained_by)).into_owned();
    let exit = match killed_for {
        Some(k) => k,
        None if libc::WIFEXITED(status) => Exit::Code(libc::WEXITSTATUS(status)),
        None if libc::WIFSIGNALED(status) => Exit::Signal(libc::WTERMSIG(status)),
        None => Exit::Code(-1),
    };
    let (stdout, stderr) = if inv.merge_stderr { (format!("{stdout}{stderr}"), stderr) } else { (stdout, stderr) };
    Ok(Finished { exit, stdout, stderr, usage })
}

/// Waits for the child `pid` to end, retrying when a signal interrupts the wait: its raw status and resource use.
pub(crate) fn wait_for(pid: libc::pid_t) -> std::io::Result<(libc::c_int, libc::rusage)> {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: rusage is plain old data, for which all zeroes is a valid value.
        let mut rusage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: plain syscall on our own child's pid with valid out-pointers.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut rusage) };
        if r == pid {
            return Ok((status, rusage));
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            return Err(err);
        }
    }
}

/// The [`Usage`] of a `wait4` resource record and the wall time measured around it.
pub(crate) fn usage_of(wall_secs: f64, rusage: &libc::rusage) -> Usage {
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Usage {
        wall_secs,
        user_secs: tv(rusage.ru_utime),
        sys_secs: tv(rusage.ru_stime),
        max_rss_kib: rusage.ru_maxrss.max(0) as u64,
        minor_faults: rusage.ru_minflt.max(0) as u64,
        major_faults: rusage.ru_majflt.max(0) as u64,
        voluntary_switches: rusage.ru_nvcsw.max(0) as u64,
        involuntary_switches: rusage.ru_nivcsw.max(0) as u64,
        fs_inputs: rusage.ru_inblock.max(0) as u64,
        fs_outputs: rusage.ru_oublock.max(0) as u64,
    }
}

/// Whether benchmarks are measured through the measuring process ([`crate::measure`]); see [`measure_through_self`].
static MEASURING: AtomicBool = AtomicBool::new(false);

/// Makes every later [`run`] measure its invocation through the measuring process, a copy of this binary started as
/// `/proc/self/exe __measure -- ARGV`. Only a binary whose `main` hands that subcommand to [`crate::measure::main`]
/// before anything else may call it (the culprit binary does); without it (library tests), invocations are
/// spawned directly and their peak RSS includes this process's memory.
pub fn measure_through_self() {
    MEASURING.store(true, Ordering::SeqCst);
}

fn measuring_enabled() -> bool {
    MEASURING.load(Ordering::SeqCst)
}

/// The pipe a measuring process writes its report to: its reading end, and the writing end the child gets as
/// [`crate::measure::REPORT_FD`].
struct ReportPipe {
    read: std::os::fd::OwnedFd,
    write: std::os::fd::OwnedFd,
}

impl ReportPipe {
    fn new() -> std::io::Result<ReportPipe> {
        use std::os::fd::FromRawFd;
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: pipe2 fills two descriptors on success. Both close on exec, so that no other child started
        // meanwhile (a monitor) holds the writing end open.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: the descriptors were just created and are owned by nothing else.
        Ok(unsafe {
            ReportPipe {
                read: std::os::fd::OwnedFd::from_raw_fd(fds[0]),
                write: std::os::fd::OwnedFd::from_raw_fd(fds[1]),
            }
        })
    }

    /// The command that starts the measuring process for `argv`, with the pipe's writing end as its report
    /// descriptor.
    fn command(&self, argv: &[String]) -> Command {
        use std::os::fd::AsRawFd;
        let mut cmd = Command::new("/proc/self/exe");
        cmd.arg0("culprit").arg(crate::measure::SUBCOMMAND).arg("--").args(argv);
        let write = self.write.as_raw_fd();
        // SAFETY: dup2 and fcntl are async-signal-safe and touch only the child's descriptor table. dup2 onto the
        // report descriptor leaves the copy open across exec; when the pipe already is that descriptor, its
        // close-on-exec flag is cleared instead.
        unsafe {
            cmd.pre_exec(move || {
                let done = if write == crate::measure::REPORT_FD {
                    libc::fcntl(write, libc::F_SETFD, 0)
                } else {
                    libc::dup2(write, crate::measure::REPORT_FD)
                };
                if done < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        cmd
    }

    /// The reading end, once the measuring process has its own copy of the writing end.
    fn into_reader(self) -> std::fs::File {
        drop(self.write);
        std::fs::File::from(self.read)
    }
}

/// One of a child's output pipes, read to its end on a thread of its own.
struct Drain {
    read: Arc<Mutex<Vec<u8>>>,
    ended: mpsc::Receiver<()>,
}

impl Drain {
    fn start<P: Read + Send + 'static>(pipe: Option<P>) -> Drain {
        let read = Arc::new(Mutex::new(Vec::new()));
        let (done, ended) = mpsc::channel();
        let buffer = read.clone();
        thread::spawn(move || {
            if let Some(mut pipe) = pipe {
                let mut chunk = [0u8; 8192];
                loop {
                    match pipe.read(&mut chunk) {
                        Ok(0) => break,
                        Ok(n) => buffer.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(&chunk[..n]),
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(_) => break,
                    }
                }
            }
            let _ = done.send(());
        });
        Drain { read, ended }
    }

    /// What was read, once the pipe ended or at `deadline`, whichever comes first. Every process of the child's
    /// group is dead by then, and what they wrote is in the pipe, read in microseconds; a pipe still open past that
    /// is held by a process that left the group (a daemon a build started, `setsid`), which could hold it for
    /// good: waiting for its end would hang the bisect after the timeout that was meant to end the hang.
    fn finish(self, deadline: Instant) -> Vec<u8> {
        let _ = self.ended.recv_timeout(deadline.saturating_duration_since(Instant::now()));
        std::mem::take(&mut *self.read.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// How long the output pipes are read after the child's group was killed, when something outside the group still
/// holds them open.
const DRAIN_GRACE: Duration = Duration::from_secs(5);

/// The effective user id of this process: 0 when culprit runs as root, which some benchmarks refuse or skip.
pub(crate) fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Whether a system user exists (the `postgres` account Debian's server package creates, `nobody`).
pub(crate) fn user_exists(name: &str) -> bool {
    let Ok(c_name) = std::ffi::CString::new(name) else {
        return false;
    };
    // SAFETY: getpwnam reads a NUL-terminated name and returns a pointer into static storage or null; only the
    // null check is made, so no other thread's later call can invalidate what is read.
    !unsafe { libc::getpwnam(c_name.as_ptr()) }.is_null()
}

/// Finds a program in `PATH` (or checks an explicit path), as the shell would.
pub fn find_in_path(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return is_executable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata().map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
}

/// Why the watchdog killed a child: [`NOT_KILLED`], [`TIMED_OUT`] or [`INTERRUPTED`].
const NOT_KILLED: u8 = 0;
const TIMED_OUT: u8 = 1;
const INTERRUPTED: u8 = 2;

/// How often the watchdog looks at the clock and the interrupt flag.
const WATCHDOG_PERIOD: Duration = Duration::from_millis(10);

/// How long a killed benchmark gets between SIGTERM and SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(5);

/// Watches a running child (process group `pid`, started at `start`) until `exited` is set: after `timeout`, or
/// once `interrupt` is set, it records why in `killed_for` and kills the group, with SIGTERM first and SIGKILL
/// when the group has not exited [`TERM_GRACE`] later.
fn watchdog(
    pid: libc::pid_t,
    start: Instant,
    timeout: Option<Duration>,
    interrupt: &AtomicBool,
    exited: &AtomicBool,
    killed_for: &AtomicU8,
) {
    while !exited.load(Ordering::SeqCst) {
        let reason = if interrupt.load(Ordering::SeqCst) {
            INTERRUPTED
        } else if timeout.is_some_and(|t| start.elapsed() >= t) {
            TIMED_OUT
        } else {
            thread::sleep(WATCHDOG_PERIOD);
            continue;
        };
        killed_for.store(reason, Ordering::SeqCst);
        // SAFETY: signalling our own child's process group.
        unsafe {
            libc::kill(-pid, libc::SIGTERM);
        }
        let deadline = Instant::now() + TERM_GRACE;
        while !exited.load(Ordering::SeqCst) && Instant::now() < deadline {
            thread::sleep(WATCHDOG_PERIOD);
        }
        if !exited.load(Ordering::SeqCst) {
            // SAFETY: as above.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_interrupt() -> Arc<AtomicBool> {
        Arc::new(AtomicBool::new(false))
    }

    #[test]
    fn captures_output_exit_code_and_cpu_time() {
        let inv =
            Invocation::shell("echo out; echo err >&2; i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; exit 3");
        let f = run(&inv, None, &no_interrupt()).unwrap();
        assert_eq!(f.exit, Exit::Code(3));
        assert_eq!(f.stdout, "out\n");
        assert_eq!(f.stderr, "err\n");
        assert!(f.usage.user_secs + f.usage.sys_secs > 0.0, "{:?}", f.usage);
        assert!(f.usage.max_rss_kib > 0);
    }

    #[test]
    fn wall_time_ends_when_the_child_exits_not_at_the_next_poll() {
        // Polling every 5 ms read a program that exits within a millisecond or two as about 5 ms, every time; the
        // fastest of 20 runs of `true` shows the resolution the wall time really has.
        let fastest = (0..20)
            .map(|_| run(&Invocation::new(["true"]), None, &no_interrupt()).unwrap().usage.wall_secs)
            .fold(f64::INFINITY, f64::min);
        assert!(fastest < 0.004, "fastest run of `true` measured {fastest} s");
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        let inv = Invocation::shell("sleep 30 & sleep 30; echo never");
        let f = run(&inv, Some(Duration::from_millis(300)), &no_interrupt()).unwrap();
        assert_eq!(f.exit, Exit::TimedOut);
        assert!(f.usage.wall_secs < 10.0);
        assert!(!f.stdout.contains("never"));
    }

    #[test]
    fn a_process_that_left_the_group_does_not_hold_the_result_back() {
        // A daemon started by a build (its own session, out of reach of the group's kill) inherits the output pipe;
        // reading to the pipe's end waited as long as it lived, so a build killed for its timeout still hung.
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("daemon.pid");
        let line = format!("setsid sh -c 'echo $$ > {}; exec sleep 60' & echo started; sleep 30", pid_file.display());
        let begun = Instant::now();
        let f = run(&Invocation::shell(&line), Some(Duration::from_millis(500)), &no_interrupt()).unwrap();
        let daemon = std::fs::read_to_string(&pid_file).unwrap_or_default();
        if let Ok(pid) = daemon.trim().parse::<libc::pid_t>() {
            // SAFETY: the daemon this test started, by its own id.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        assert_eq!(f.exit, Exit::TimedOut);
        assert_eq!(f.stdout, "started\n");
        assert!(begun.elapsed() < Duration::from_secs(20), "waited {:?}", begun.elapsed());
    }

    #[test]
    fn interrupt_flag_stops_the_child() {
        let flag = Arc::new(AtomicBool::new(true));
        let f = run(&Invocation::new(["sleep", "30"]), None, &flag).unwrap();
        assert_eq!(f.exit, Exit::Interrupted);
    }

    #[test]
    fn missing_program_is_a_spawn_error() {
        let err = run(&Invocation::new(["/nonexistent/culprit-bench"]), None, &no_interrupt()).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/culprit-bench"), "{err}");
    }

    #[test]
    fn long_command_lines_are_quoted_shortened() {
        assert_eq!(shortened("short", 10), "short");
        assert_eq!(shortened("ééééé", 5), "ééééé", "characters, not bytes");
        let long = "a".repeat(3000);
        let cut = shortened(&long, QUOTED_CHARS);
        assert_eq!(cut, format!("{}... (2800 more characters)", "a".repeat(200)));
        // A shell line is quoted as written, without its `sh -c` wrapper; other commands as they would be typed.
        assert_eq!(Invocation::shell("echo 'hi'; exit 3").summary(), "echo 'hi'; exit 3");
        assert_eq!(Invocation::shell(&long).summary(), cut);
        assert_eq!(Invocation::new(["fio", "--name=a b"]).summary(), "fio '--name=a b'");
    }

    #[test]
    fn quoting_round_trips_through_sh() {
        assert_eq!(shell_quote("fio"), "fio");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert!(find_in_path("sh").is_some());
        assert!(find_in_path("culprit-no-such-program").is_none());
    }
}
