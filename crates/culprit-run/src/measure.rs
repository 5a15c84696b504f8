//! The measuring process: a small copy of culprit between it and each benchmark, so that the benchmark's peak RSS is
//! its own.
//!
//! Why: Linux charges a child's `ru_maxrss` with the high-water mark of the memory it held before `exec`, and a child
//! forked (or vforked, which shares the memory) from culprit holds culprit's: a `sleep 0.1` read 10 MB where
//! `/usr/bin/time` reads 1.6 MB, and the figure grew with culprit's heap, 128 KiB a run, so `track --follow` found
//! and bisected memory "regressions" between its batches (QA 45). Culprit therefore starts itself again
//! (`/proc/self/exe`, which works even when the binary was replaced on disk) as `culprit __measure -- ARGV`: a fresh
//! process of a few hundred KiB that spawns the benchmark, waits for it with `wait4`, and writes what it measured to
//! file descriptor 3, a pipe culprit reads once it has exited. Wall time is taken there too, around the benchmark's
//! own spawn and wait, so the start of the measuring process costs nothing in the figures.
//!
//! The measuring process keeps the benchmark's process group (culprit's watchdog signals the group), its standard
//! streams, directory and environment. It outlives a SIGTERM, SIGINT or SIGHUP sent to the group (a handler, which
//! `exec` resets for the benchmark, where an ignored signal would stay ignored), so that a benchmark given the grace
//! period after SIGTERM still gets it in full and is still measured.

use std::ffi::OsString;
use std::io::Write;
use std::os::fd::FromRawFd;
use std::process::{Command, ExitCode};
use std::time::Instant;

/// The hidden subcommand of the culprit binary that runs the measuring process.
pub const SUBCOMMAND: &str = "__measure";

/// The file descriptor the measuring process writes its report to.
pub const REPORT_FD: libc::c_int = 3;

/// What the measuring process reports of one benchmark.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Report {
    /// The benchmark ran: its raw `wait4` status and its resource use.
    Waited { status: libc::c_int, usage: crate::process::Usage },
    /// The benchmark could not be started; the `errno` of the failed spawn.
    SpawnFailed { errno: i32 },
}

impl Report {
    /// The report as one line of text.
    pub fn encode(&self) -> String {
        match self {
            Report::Waited { status, usage: u } => format!(
                "waited {status} {} {} {} {} {} {} {} {} {} {}\n",
                u.wall_secs,
                u.user_secs,
                u.sys_secs,
                u.max_rss_kib,
                u.minor_faults,
                u.major_faults,
                u.voluntary_switches,
                u.involuntary_switches,
                u.fs_inputs,
                u.fs_outputs
            ),
            Report::SpawnFailed { errno } => format!("spawn-failed {errno}\n"),
        }
    }

    /// Reads a line [`Report::encode`] wrote; `None` for anything else (a measuring process killed before it wrote,
    /// or one of another version of culprit).
    pub fn decode(text: &str) -> Option<Report> {
        let mut words = text.split_whitespace();
        let report = match words.next()? {
            "waited" => {
                let status = words.next()?.parse().ok()?;
                let mut secs = [0.0; 3];
                for slot in &mut secs {
                    *slot = words.next()?.parse().ok()?;
                }
                let mut counts = [0u64; 7];
                for slot in &mut counts {
                    *slot = words.next()?.parse().ok()?;
                }
                let [wall_secs, user_secs, sys_secs] = secs;
                let [max_rss_kib, minor_faults, major_faults, voluntary_switches, involuntary_switches, fs_inputs,
                    fs_outputs] = counts;
                let usage = crate::process::Usage {
                    wall_secs,
                    user_secs,
                    sys_secs,
                    max_rss_kib,
                    minor_faults,
                    major_faults,
                    voluntary_switches,
                    involuntary_switches,
                    fs_inputs,
                    fs_outputs,
                };
                Report::Waited { status, usage }
            }
            "spawn-failed" => Report::SpawnFailed { errno: words.next()?.parse().ok()? },
            _ => return None,
        };
        words.next().is_none().then_some(report)
    }
}

/// A signal handler that does nothing: the measuring process outlives the signal, its benchmark decides.
extern "C" fn outlive(_signal: libc::c_int) {}

/// The measuring process: `args` are what follows [`SUBCOMMAND`] on its command line, `--` and the benchmark's argv.
/// Its exit code says nothing of the benchmark's (the report does); 0 once the report is written.
pub fn main(args: &[OsString]) -> ExitCode {
    let argv = match args {
        [dash, program, rest @ ..] if dash == "--" => (program, rest),
        _ => {
            eprintln!("culprit {SUBCOMMAND}: usage: culprit {SUBCOMMAND} -- PROGRAM [ARGS...] (culprit starts it)");
            return ExitCode::from(2);
        }
    };
    // SAFETY: fcntl on a descriptor number and signal with a handler that touches nothing; neither has preconditions
    // beyond valid arguments. The report descriptor must not reach the benchmark: a daemon it leaves behind would
    // hold the pipe open, and culprit reads it to its end.
    if unsafe { libc::fcntl(REPORT_FD, libc::F_SETFD, libc::FD_CLOEXEC) } != 0 {
        // Without the descriptor nothing could report the benchmark's figures: it is not run for nothing.
        eprintln!("culprit {SUBCOMMAND}: no report descriptor {REPORT_FD} (culprit starts this itself)");
        return ExitCode::from(2);
    }
    unsafe {
        for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::signal(signal, outlive as *const () as libc::sighandler_t);
        }
    }
    let start = Instant::now();
    let mut command = Command::new(argv.0);
    command.args(argv.1);
    // SAFETY: a hook that does nothing. Its presence makes std fork the child (a copy of only this process's written
    // pages) where it would otherwise vfork (which shares the whole memory of this process, file pages included, so
    // the benchmark's peak RSS read all of it).
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, || Ok(()));
    }
    let report = match command.spawn() {
        Err(error) => Report::SpawnFailed { errno: error.raw_os_error().unwrap_or(libc::ENOENT) },
        Ok(child) => {
            let pid = child.id() as libc::pid_t;
            match crate::process::wait_for(pid) {
                Ok((status, rusage)) => {
                    Report::Waited { status, usage: crate::process::usage_of(start.elapsed().as_secs_f64(), &rusage) }
                }
                Err(error) => {
                    eprintln!("culprit {SUBCOMMAND}: waiting for the benchmark failed: {error}");
                    return ExitCode::from(2);
                }
            }
        }
    };
    // SAFETY: the descriptor is open (checked above) and this process owns it from here on.
    let mut pipe = unsafe { std::fs::File::from_raw_fd(REPORT_FD) };
    match pipe.write_all(report.encode().as_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("culprit {SUBCOMMAND}: cannot write the report: {error}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::Usage;

    #[test]
    fn a_report_reads_back_as_it_was_written() {
        let usage = Usage {
            wall_secs: 0.0751234,
            user_secs: 1.5,
            sys_secs: 0.25,
            max_rss_kib: 1640,
            minor_faults: 120,
            major_faults: 1,
            voluntary_switches: 7,
            involuntary_switches: 3,
            fs_inputs: 8,
            fs_outputs: 16,
        };
        for report in [Report::Waited { status: 3 << 8, usage }, Report::SpawnFailed { errno: libc::ENOENT }] {
            assert_eq!(Report::decode(&report.encode()), Some(report));
        }
    }

    #[test]
    fn anything_but_a_whole_report_reads_as_none() {
        let whole = Report::Waited { status: 0, usage: Usage::default() }.encode();
        let cut = &whole[..whole.len() - 4];
        for text in ["", "waited", cut, "spawn-failed x", "spawn-failed 2 3", "exited 0", &format!("{whole} 5")] {
            assert_eq!(Report::decode(text), None, "{text:?}");
        }
    }
}
