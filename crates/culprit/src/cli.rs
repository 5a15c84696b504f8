//! The command-line interface, declared with clap derive. Nothing here runs anything.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(name = "culprit", version, about = "A performance-regression robot: run, compare, bisect, report, track.")]
pub struct Cli {
    /// The result store: a SQLite file (default: $CULPRIT_DB or ./culprit.db).
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a job file's atomic jobs several times each, with monitors, into the store.
    Run(RunArgs),
    /// Write one atomic job file per matrix point of a job file.
    Split(SplitArgs),
    /// Print the `key: value` lines lkp-tests' parser prints for a raw benchmark or monitor output.
    Parse(ParseArgs),
    /// List what the store holds, by job, revision and machine.
    Results(ResultsArgs),
    /// Load an existing lkp result root into the store.
    Import(ImportArgs),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The job file (lkp-tests YAML).
    pub job: PathBuf,
    /// Runs per atomic job.
    #[arg(long, short = 'n', default_value_t = 3)]
    pub repeat: u32,
    /// The commit under test, resolved in the git repository of the current directory (default: HEAD there).
    #[arg(long, conflicts_with = "label")]
    pub commit: Option<String>,
    /// Store the results under a label instead of a commit (a sysctl, a cgroup setting, a machine state).
    #[arg(long)]
    pub label: Option<String>,
    /// Monitors to sample, comma-separated; overrides the job's monitor keys. `none` for none.
    #[arg(long, value_delimiter = ',')]
    pub monitors: Option<Vec<String>>,
    /// Monitor sampling interval in seconds.
    #[arg(long, default_value_t = 1.0)]
    pub interval: f64,
    /// Also write the results as an lkp result root under this directory.
    #[arg(long, value_name = "DIR")]
    pub result_root: Option<PathBuf>,
    /// Where benchmarks put their files (default: a directory under the system temp dir).
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
    /// Print each run's metrics as JSON lines instead of the summary table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SplitArgs {
    /// The job file to split.
    pub job: PathBuf,
    /// Where to write the atomic jobs (default: the current directory).
    #[arg(long, short = 'o', default_value = ".")]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct ParseArgs {
    /// The program whose output it is: fio, fsmark, stress-ng, hackbench, vmstat, perf-profile, ...
    pub program: String,
    /// The raw output file (fio: its JSON, or a result-root directory holding fio.output files).
    pub file: PathBuf,
}

#[derive(Debug, Args)]
pub struct ResultsArgs {
    /// Only jobs whose name or id matches this glob.
    #[arg(long)]
    pub job: Option<String>,
    /// Only this testcase.
    #[arg(long)]
    pub testcase: Option<String>,
    /// Only this machine (hostname).
    #[arg(long)]
    pub machine: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The lkp result root directory.
    pub dir: PathBuf,
}
