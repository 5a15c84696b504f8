//! The `culprit` binary: a thin command-line layer over the library crates.
//!
//! Arguments are parsed by clap into [`cli::Cli`], turned into validated plans by the `cmd` modules before anything
//! runs, and errors reach the user here, once, as `culprit: <what went wrong>` with the chain of causes.

mod cli;
mod cmd;
mod job_file;
mod lock;
mod output;

use clap::Parser;
use std::ffi::OsString;
use std::process::ExitCode;

/// The exit code of a failed command.
const ERROR_EXIT: u8 = 2;
/// The exit code of a failed `culprit check`. `git bisect run` reads 1 to 127 (except 125) as "bad", so the usual
/// code 2 would blame the commit for culprit's own error (a mistyped revision, reference runs that do not differ);
/// 128 and above make git abort the bisect instead.
const CHECK_ERROR_EXIT: u8 = 128;

/// The subcommand named on the command line, found before clap parses it so that even a usage error of
/// `culprit check` gets the exit code that aborts `git bisect run`. `--db` is the only global option with a value.
fn invoked_subcommand(args: &[OsString]) -> Option<String> {
    let mut words = args.iter().skip(1).map(|a| a.to_string_lossy());
    while let Some(word) = words.next() {
        if word == "--db" {
            words.next();
        } else if !word.starts_with('-') {
            return Some(word.into_owned());
        }
    }
    None
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    // The measuring process culprit starts between itself and each benchmark (culprit_run::measure): before
    // anything else, so that it stays small.
    if args.get(1).is_some_and(|word| word == culprit_run::measure::SUBCOMMAND) {
        return culprit_run::measure::main(&args[2..]);
    }
    culprit_run::process::measure_through_self();
    let error_exit = if invoked_subcommand(&args).as_deref() == Some("check") { CHECK_ERROR_EXIT } else { ERROR_EXIT };
    let cli = match cli::Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        // Help and version go to stdout with success; usage errors keep clap's message, with our exit code.
        Err(usage) if !usage.use_stderr() => usage.exit(),
        Err(usage) => {
            let _ = usage.print();
            // clap says that --resume excludes the option, not why: the session's decisions were taken under what
            // it was started with, and resuming re-derives them (QA 59).
            let conflict = usage.kind() == clap::error::ErrorKind::ArgumentConflict;
            if conflict && args.iter().any(|arg| arg == "--resume" || arg.to_string_lossy().starts_with("--resume=")) {
                eprintln!(
                    "\nA session resumes as it was started: its repository, benchmark, metric, build, deploy, \
                     --max-runs, --min-change and the rest are its own. To change one, \
                     start a new bisect without --resume."
                );
            }
            return ExitCode::from(error_exit);
        }
    };
    match cmd::dispatch(cli) {
        Ok(code) => code,
        Err(err) if err.downcast_ref::<output::BrokenPipe>().is_some() => ExitCode::SUCCESS,
        Err(err) => {
            eprint!("{}", output::error_text(&err));
            ExitCode::from(error_exit)
        }
    }
}
