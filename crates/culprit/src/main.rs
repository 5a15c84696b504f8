//! The `culprit` binary: a thin command-line layer over the library crates.
//!
//! Arguments are parsed by clap into [`cli::Cli`], turned into validated plans by the `cmd` modules before anything
//! runs, and errors reach the user here, once, as `culprit: <what went wrong>` with the chain of causes.

mod cli;
mod cmd;
mod output;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match cmd::dispatch(cli) {
        Ok(code) => code,
        Err(err) if err.downcast_ref::<output::BrokenPipe>().is_some() => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("culprit: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::from(2)
        }
    }
}
