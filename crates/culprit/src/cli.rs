//! The command-line interface, declared with clap derive. Nothing here runs anything.

use clap::{Args, Parser, Subcommand};
use culprit_run::bisect::StepTimeouts;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(name = "culprit", version, about = "A performance-regression robot: run, compare, bisect, report, track.")]
pub struct Cli {
    /// The result store: a SQLite file (default: $CULPRIT_DB or ./culprit.db). Split, parse and sim do not use it.
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
    /// Compare commits or labels side by side in the kernel test robot's table, decided by real statistics.
    Compare(CompareArgs),
    /// For `git bisect run`: is the checked-out commit like good (exit 0), like bad (1), or untestable (125)?
    #[command(override_usage = "culprit check --good REV --bad REV (--job FILE | --run CMD) [OPTIONS]\n       \
                                culprit check --clean")]
    Check(CheckArgs),
    /// Measure bisect strategies on synthetic noisy histories (the benchmark behind docs/statistics.md).
    Sim(SimArgs),
    /// Find the commit(s) that caused a performance change between a good and a bad commit, under noise.
    Bisect(BisectArgs),
    /// Change points over a branch's history of stored results (or over a plain series), with their verdicts.
    Track(TrackArgs),
    /// Write the robot's report mail for a bisect session or a comparison (text, markdown, html or json).
    Report(ReportArgs),
    /// Measure a proposed fix: base, bad and bad+patch interleaved, with a verdict (fixed, partly, not, worse).
    TryFix(TryFixArgs),
    /// Serve a read-only web dashboard over the store: results, bisect sessions and reports, compare, track.
    Serve(ServeArgs),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The job file (lkp-tests YAML).
    pub job: PathBuf,
    /// Runs per atomic job.
    #[arg(long, short = 'n', default_value_t = 3)]
    pub repeat: u32,
    /// The commit under test, resolved in the git repository of the current directory (default: HEAD there); the
    /// benchmark gets its SHA in $CULPRIT_COMMIT.
    #[arg(long, conflicts_with = "label")]
    pub commit: Option<String>,
    /// Store the results under a label instead of a commit (a sysctl, a cgroup setting, a machine state).
    #[arg(long)]
    pub label: Option<String>,
    /// Monitors to sample, comma-separated; overrides the job's monitor keys. `none` for none.
    #[arg(long, value_delimiter = ',')]
    pub monitors: Option<Vec<String>>,
    /// Monitor sampling interval in seconds, from 0.01 to 3600.
    #[arg(long, default_value_t = 1.0, value_parser = interval_secs)]
    pub interval: f64,
    /// Also write the results as an lkp result root under this directory.
    #[arg(long, value_name = "DIR")]
    pub result_root: Option<PathBuf>,
    /// Where benchmarks put their files (default: a directory under the system temp dir).
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
    /// Print each run as a JSON line (its stored id, ok, a failed run's reason, its metrics) instead of the summary
    /// table.
    #[arg(long)]
    pub json: bool,
    /// Check the job as a run would (params, programs and monitors installed, what fits this machine and the
    /// scratch file system) and print what each atomic job would execute, without running or storing anything.
    #[arg(long, conflicts_with = "json")]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct SplitArgs {
    /// The job file to split.
    pub job: PathBuf,
    /// The directory to write the atomic jobs into (default: the current directory; made if missing).
    #[arg(long, short = 'o', default_value = ".")]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct ParseArgs {
    /// The program whose output it is: fio, fsmark, stress-ng, hackbench, vmstat, perf-profile, ...
    pub program: String,
    /// The raw output file, `-` for standard input (fio: its JSON, or a result-root directory holding fio.output
    /// files).
    pub file: PathBuf,
}

#[derive(Debug, Args)]
pub struct ResultsArgs {
    /// Only jobs whose name or id matches this glob.
    #[arg(long, value_parser = glob_pattern)]
    pub job: Option<String>,
    /// Only this testcase (a glob).
    #[arg(long, value_parser = glob_pattern)]
    pub testcase: Option<String>,
    /// Only this machine (hostname glob).
    #[arg(long, value_parser = glob_pattern)]
    pub machine: Option<String>,
    /// List the failed runs one by one with their reasons instead of the summary.
    #[arg(long)]
    pub failures: bool,
    /// Show one stored run in full: its outcome, every metric, its raw outputs and stderr (the run numbers are
    /// the ones `--failures` lists and `--json` gives).
    #[arg(long, value_name = "ID", conflicts_with = "failures")]
    pub run: Option<i64>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The lkp result root directory.
    pub dir: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormat {
    /// lkp's ncompare table, as the robot mails it.
    Table,
    Json,
    Markdown,
    Csv,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The base: a commit (full or abbreviated SHA, `git describe` name) or a label, as stored.
    pub base: String,
    /// The commits or labels to compare against the base (with --by none is needed: one revision's scaling curve).
    #[arg(required_unless_present = "by")]
    pub others: Vec<String>,
    /// Only jobs whose name or id matches this glob.
    #[arg(long, value_parser = glob_pattern)]
    pub job: Option<String>,
    /// Only this testcase (a glob).
    #[arg(long, value_parser = glob_pattern)]
    pub testcase: Option<String>,
    /// Only this machine (hostname glob).
    #[arg(long, value_parser = glob_pattern)]
    pub machine: Option<String>,
    /// Only metrics matching this regex; one that matches no metric of the compared runs is an error.
    #[arg(long)]
    pub metric: Option<String>,
    /// Show every row, not only the changed ones (with --by: also the sweeps that read 0 everywhere).
    #[arg(long)]
    pub all: bool,
    #[arg(long, value_enum, default_value_t = CompareFormat::Table)]
    pub format: CompareFormat,
    /// The same as --format json, as `results`, `bisect` and `track` take it.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Decide with lkp-tests' own change rules instead of Culprit's statistics.
    #[arg(long)]
    pub lkp_rules: bool,
    /// Smallest change that counts, in percent (`5` or `5%`; default 1): a smaller one is unchanged however
    /// significant. Metrics compared in absolute terms (perf-profile, `%` metrics) keep their floor of 0.1 points.
    #[arg(long, value_name = "PCT", value_parser = percent, conflicts_with = "lkp_rules")]
    pub min_change: Option<f64>,
    /// Scaling view: one row per value of this param (threads, clients, block size), one column per revision.
    #[arg(long, value_name = "PARAM")]
    pub by: Option<String>,
    /// With --by: also draw the sweep as curves with error bars into this file (.svg or .png).
    #[arg(long, value_name = "FILE.svg|png", requires = "by")]
    pub plot: Option<PathBuf>,
    /// The git repository to read revision names (`HEAD~3`, a tag) and the subjects of commits the store has none
    /// for (runs imported from an lkp result root, or run with --commit outside the repository) [default: the one
    /// containing the current directory]
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
}

/// `--run CMD [--warmup N]`, the shorthand for a `command` job that bisect, check and try-fix take instead of
/// `--job FILE` (each command's `--job` conflicts with `--run`).
#[derive(Debug, Args)]
pub struct TimedCommandArgs {
    /// A shell command to time instead of a job file, run in the commit's worktree (a `command` job; its metric,
    /// command.elapsed_time, is the time per execution).
    #[arg(long, value_parser = shell_command)]
    pub run: Option<String>,
    /// With --run: executions of the command before the measured one in every run, not measured (the job's
    /// `warmup`).
    #[arg(long, value_name = "N", requires = "run", value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub warmup: Option<u32>,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BisectArgs {
    #[command(subcommand)]
    pub action: Option<BisectAction>,
    /// The git repository (default: the one containing the current directory). It is never checked out: builds
    /// and runs happen in worktrees of their own.
    #[arg(long)]
    pub repo: Option<PathBuf>,
    /// A commit without the change. Give it again for more good commits, as `git bisect start BAD GOOD1 GOOD2`
    /// takes them: the first is measured as good, the others only leave their commits out of the candidates. A good
    /// that is not an ancestor of bad stands for their merge base, as in git bisect.
    #[arg(long, required_unless_present = "resume", value_name = "REV")]
    pub good: Vec<String>,
    /// A commit with the change.
    #[arg(long, required_unless_present = "resume")]
    pub bad: Option<String>,
    /// The job file to run at each commit (one atomic job).
    #[arg(long, conflicts_with = "run")]
    pub job: Option<PathBuf>,
    #[command(flatten)]
    pub command: TimedCommandArgs,
    /// The metric to bisect (default: the most significant program metric change between good and bad).
    #[arg(long)]
    pub metric: Option<String>,
    /// Shell command that builds the commit, run once per commit in its worktree ($CULPRIT_COMMIT is set); its
    /// products must stay in the worktree or be kept per commit (e.g. under a directory named $CULPRIT_COMMIT), since
    /// runs of commits built earlier come back to them without a rebuild.
    #[arg(long)]
    pub build: Option<String>,
    /// Shell command that deploys the built commit before its runs (install, kexec, boot); it runs again, without a
    /// rebuild, whenever the bisect returns to a commit, so it must install that commit's products (from its
    /// worktree or from its per-commit copy), not whatever was built last.
    #[arg(long)]
    pub deploy: Option<String>,
    #[command(flatten)]
    pub timeouts: StepTimeoutArgs,
    /// Where the benchmark's files go, as `culprit run --scratch` takes it: a directory on the filesystem to measure
    /// (default: a directory under the system temp dir). Each run records the filesystem holding it; the session keeps
    /// the directory, so that `--resume` and the report's reproduce steps take it too.
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
    /// Give each commit's worktree its commit (HEAD, `$CULPRIT_WORKTREE`) but none of its files, as `git bisect
    /// start --no-checkout` leaves the checkout alone: for build hooks that build `$CULPRIT_COMMIT` in a tree of
    /// their own (an incremental kernel build, `kernel/build.sh`), where checking out every tested commit's files
    /// (80,000 of them, a gigabyte, for a kernel) only costs time and disk. The hooks and the benchmark then find
    /// nothing of the commit's in their working directory but what they put there.
    #[arg(long)]
    pub no_checkout: bool,
    /// Most runs the bisect may spend.
    #[arg(long, default_value_t = 600)]
    pub max_runs: usize,
    /// Smallest change worth bisecting, in percent of good's level (`2` or `2%`): when good and bad surely differ by
    /// less (the upper bound of their difference is below it), the bisect ends not reproduced, however significant
    /// the difference; a change that may reach it is bisected.
    #[arg(long, value_name = "PCT", value_parser = percent)]
    pub min_change: Option<f64>,
    /// Bisect an improvement: the commit after which bad measures better than good. Good is still the older commit
    /// and bad the newer.
    #[arg(long)]
    pub improvement: bool,
    /// After the culprit is found, this many extra interleaved runs of it and its parent with perf-profile and
    /// perf-stat added, so the report can show the profile that explains it without profiling slowing the search.
    /// They are stored as profiling runs: the report's perf rows read them, its benchmark rows never do. N counts
    /// the runs the session has already: `--resume ID --profile N` takes only the missing ones.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub profile: usize,
    /// Continue the session with this id after a crash or interruption, as it was started: options that would
    /// change it (the repository, benchmark, --warmup, metric, build, deploy, --max-runs, --min-change,
    /// --improvement, --scratch, --no-checkout) are refused. --build-timeout and --deploy-timeout are taken: they
    /// replace the session's limits, for this and later resumes.
    #[arg(
        long,
        value_name = "ID",
        conflicts_with_all = [
            "good", "bad", "job", "run", "warmup", "repo", "metric", "build", "deploy", "max_runs", "min_change",
            "improvement", "scratch", "no_checkout"
        ]
    )]
    pub resume: Option<i64>,
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Not an option: the machine of `track --follow` when the pass runs this bisect, which records the session as
    /// the robot's (`Store::record_follow_session`) as soon as the session exists, before it is driven. Recorded
    /// after the bisect, a pass killed in between left a finished session that no pass mailed.
    #[arg(skip)]
    pub for_follow_on: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum BisectAction {
    /// Show each step's decision and the evidence per tested commit of a bisect session.
    Log {
        /// The session id, as printed by `culprit bisect`.
        id: i64,
        /// Print JSON: the steps, the commits they name by position (with their SHAs), every sample, and the
        /// outcome as `culprit bisect --json` prints it.
        #[arg(long)]
        json: bool,
    },
    /// List bisect sessions: id, status, metric, good, bad, the machine each measures on, repository.
    List {
        /// Only the sessions of this machine (hostname glob), on a store a farm's machines share.
        #[arg(long, value_parser = glob_pattern)]
        machine: Option<String>,
        /// Print JSON: an array of the sessions with the listing's columns, full SHAs.
        #[arg(long)]
        json: bool,
    },
    /// Remove bisect sessions that are not running (stopped ones a later session supersedes, say) from the store:
    /// the session, its links to its runs and its range. The runs themselves stay, for compare, results and check.
    /// A finished session (found, multiple, not-reproduced, inconclusive) takes its answer and its report with it,
    /// so it is forgotten only with --force.
    Forget {
        /// The session ids, as `culprit bisect list` shows them.
        #[arg(required = true)]
        ids: Vec<i64>,
        /// Forget finished sessions too, their answers and reports with them.
        #[arg(long)]
        force: bool,
    },
}

#[derive(Debug, Args)]
pub struct SimArgs {
    /// Candidate commits between good and bad, from 2 to 1,000,000 (docs/statistics.md studies 10 to 10,000).
    #[arg(long, default_value_t = 1000, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(2..=MAX_SIM_COMMITS))]
    pub commits: usize,
    /// Step sizes in noise standard deviations, each from 0 to 100, comma-separated (several steps share the change,
    /// at most one per commit); 0 for none.
    // A negative size reaches step_sigma's message rather than clap's "unexpected argument '-1' found" (QA 50).
    #[arg(long, value_delimiter = ',', default_value = "1.5", value_parser = step_sigma, allow_negative_numbers = true)]
    pub step: Vec<f64>,
    /// gaussian, outliers (5% at 5 sigma), drift (slow linear), bursts (time-correlated 3 sigma bursts), layout (a
    /// fixed offset per commit, 0.3 sigma unless --layout-sigma says otherwise: each build's code layout), wander
    /// (the machine's level moves every 25 runs or so, by 0.8 sigma: wall time on a shared host), or warmup (the
    /// first runs 3 sigma worse, settling by a factor e every 4 runs).
    #[arg(long, default_value = "gaussian")]
    pub noise: String,
    /// The standard deviation of layout noise's per-commit offsets, in noise sigmas (default 0.3; real bisects on
    /// this machine showed offsets of about half the run-to-run noise). Only with --noise layout.
    #[arg(long)]
    pub layout_sigma: Option<f64>,
    /// Share of commits that do not build.
    #[arg(long, default_value_t = 0.0)]
    pub untestable: f64,
    /// Topic branches merged into the mainline, as in a kernel merge window (0: a linear history; at most half the
    /// commits). Only the culprit strategy bisects a history with merges.
    #[arg(long, default_value_t = 0)]
    pub topics: usize,
    /// Simulated bisects per strategy, from 1 to 1,000,000.
    #[arg(long, default_value_t = 200, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_SIM_TRIALS))]
    pub trials: usize,
    /// Seed of the simulated histories and noise: the same seed gives the same table.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// culprit, fixed (5 runs per midpoint) or pinpoint; comma-separated for side by side. Default: all three (culprit
    /// alone with --topics).
    #[arg(long, value_delimiter = ',')]
    pub strategy: Vec<String>,
    /// Print the reports as JSON (accuracy, false_culprit_rate, mean_runs, p95_runs, mean_builds, ...).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// A commit without the change (its reference runs are measured in a worktree and stored; the worktree is kept
    /// for fresh reference runs at later checks).
    #[arg(long, required_unless_present = "clean")]
    pub good: Option<String>,
    /// A commit with the change.
    #[arg(long, required_unless_present = "clean")]
    pub bad: Option<String>,
    /// The job file to run.
    #[arg(long, conflicts_with = "run")]
    pub job: Option<PathBuf>,
    #[command(flatten)]
    pub command: TimedCommandArgs,
    /// The metric to decide on (default: the job's most significant change between good and bad).
    #[arg(long)]
    pub metric: Option<String>,
    /// Shell command that builds a commit; run in the current checkout and in the good and bad worktrees.
    #[arg(long)]
    pub build: Option<String>,
    #[command(flatten)]
    pub timeouts: BuildTimeoutArg,
    /// Where the benchmark's files go, as `culprit run --scratch` takes it: a directory on the filesystem to measure
    /// (default: a directory under the system temp dir). Each run records the filesystem holding it.
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
    /// Reference runs at good and at bad; when they do not separate, twice and then four times as many are
    /// measured before the check gives up.
    #[arg(long, default_value_t = 5)]
    pub reference_runs: usize,
    /// Most runs of the checked-out commit; a check still undecided then answers the side its evidence leans to at
    /// odds of 10 to 1 or more, else 125 (untestable).
    #[arg(long, default_value_t = 20)]
    pub max_runs: usize,
    /// Judge the commit against the stored reference runs alone, with no fresh reference runs between its own (and
    /// the references' worktrees removed once measured): half the runs, but a machine whose speed changed since
    /// the references (load that came or went) can flip a verdict.
    #[arg(long)]
    pub stored_references: bool,
    /// Remove the reference worktrees that checks keep built between the steps of a `git bisect run` (every pair of
    /// good and bad) and exit; for after `git bisect reset`. Nothing stored is touched (no store is opened, so
    /// `--db` is accepted and unused).
    #[arg(long, conflicts_with_all = [
        "good", "bad", "job", "run", "metric", "build", "build_timeout", "reference_runs", "max_runs",
        "stored_references", "scratch"
    ])]
    pub clean: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// The plain-text mail, as the kernel test robot sends it.
    Text,
    Markdown,
    /// One self-contained HTML file with the metric's trend over the tested commits.
    Html,
    Json,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The bisect session to report (as printed by `culprit bisect`); or use --compare BASE BAD.
    #[arg(required_unless_present = "compare", conflicts_with = "compare")]
    pub session: Option<i64>,
    /// Report a comparison of stored results instead: the base and the bad commit (or labels).
    #[arg(long, num_args = 2, value_names = ["BASE", "BAD"])]
    pub compare: Option<Vec<String>>,
    /// A third column: the stored results of a fix (a commit, or the label `culprit try-fix` stored).
    #[arg(long, value_name = "REV", requires = "compare")]
    pub fix: Option<String>,
    /// With --fix: the table leads with the runs of this `culprit try-fix` (the number it printed), not those of the
    /// latest finished try-fix of the three.
    #[arg(long, value_name = "ID", requires = "fix")]
    pub try_fix: Option<i64>,
    /// The headline metric (default: the bisected metric, or the largest regression among program metrics).
    #[arg(long)]
    pub metric: Option<String>,
    /// When several commits share the change: the mail of the Nth of them, oldest first (default 1). The robot
    /// sends one mail per commit.
    #[arg(long, value_name = "N", conflicts_with = "compare", value_parser = clap::value_parser!(u32).range(1..))]
    pub culprit: Option<u32>,
    /// Only the job whose name or id matches this glob (default: of the jobs both revisions ran, the one that
    /// changed most strongly, a regression first; the first when none changed).
    #[arg(long, value_parser = glob_pattern)]
    pub job: Option<String>,
    /// With --compare: only the runs of the machine whose hostname matches this glob (default: of the machines
    /// that ran the job at every revision, the one whose table changed most strongly). A table is one machine's.
    #[arg(long, value_parser = glob_pattern)]
    pub machine: Option<String>,
    /// Whom a regression's mail credits, as the tag the fix is asked to carry: `--reported-by 'Jane Doe
    /// <jane@example.org>'` prints "Reported-by: Jane Doe <jane@example.org>" under "If you fix the issue, kindly add
    /// following tag" [default: $CULPRIT_REPORTED_BY; no tag without either]
    #[arg(long, value_name = "NAME <EMAIL>")]
    pub reported_by: Option<String>,
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
    /// Write the report (report.txt/.md/.html/.json) and the job file (job.yaml) into this directory (made if missing;
    /// it cannot be an existing file).
    #[arg(long, short = 'o', value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// The git repository to read revision names (`HEAD~3`, a tag) and the subjects of commits the store has none
    /// for (runs imported from an lkp result root, or run with --commit outside the repository) [default: the one
    /// containing the current directory]
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct TryFixArgs {
    /// The commit without the regression.
    #[arg(long)]
    pub base: String,
    /// The commit with the regression; the patch is applied on top of it.
    #[arg(long)]
    pub bad: String,
    /// The proposed fix, as a patch `git apply` takes (`git format-patch` or `git diff` output).
    #[arg(long, value_name = "FILE.patch")]
    pub patch: PathBuf,
    /// The job file to run (one atomic job); or give --run CMD.
    // Giving neither is refused by `try_fix::check_args`: clap's own message named --job alone as required.
    #[arg(long, conflicts_with = "run")]
    pub job: Option<PathBuf>,
    #[command(flatten)]
    pub command: TimedCommandArgs,
    /// Shell command that builds each of base, bad and patched in its worktree.
    #[arg(long)]
    pub build: Option<String>,
    #[command(flatten)]
    pub timeouts: BuildTimeoutArg,
    /// Where the benchmark's files go, as `culprit run --scratch` takes it: a directory on the filesystem to measure
    /// (default: a directory under the system temp dir). Each run records the filesystem holding it.
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
    /// The git repository (default: the one containing the current directory).
    #[arg(long)]
    pub repo: Option<PathBuf>,
    /// Runs of each of base, bad and patched, interleaved round-robin.
    #[arg(long, default_value_t = 8)]
    pub runs: usize,
    /// The metric the verdict is about (default: the program metric that regressed most significantly from base to
    /// bad, a KPI first; the output names it). A name the runs do not report stops the measurement after its first
    /// round.
    #[arg(long)]
    pub metric: Option<String>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TrackArgs {
    /// Analyse a plain series instead of stored results: one value per line after an optional header, or
    /// `commit,value` rows (consecutive rows of one commit form one point).
    #[arg(
        long,
        value_name = "FILE.csv",
        conflicts_with_all = [
            "branch", "repo", "job", "testcase", "machine", "metric", "bisect", "improvements", "build", "deploy",
            "build_timeout", "deploy_timeout", "scratch", "no_checkout"
        ]
    )]
    pub series: Option<PathBuf>,
    /// The branch whose first-parent history orders the tested commits (default: HEAD).
    #[arg(long, value_name = "REF")]
    pub branch: Option<String>,
    /// The git repository (default: the one containing the current directory).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// Only jobs whose name or id matches this glob; with --follow, the job file to run (one atomic job).
    #[arg(long, value_name = "GLOB")]
    pub job: Option<String>,
    /// Only this testcase (a glob).
    #[arg(long, value_parser = glob_pattern)]
    pub testcase: Option<String>,
    /// Only this machine (hostname glob).
    #[arg(long, value_parser = glob_pattern)]
    pub machine: Option<String>,
    /// Only metrics matching this regex; one that matches no stored metric is an error.
    #[arg(long, value_name = "REGEX")]
    pub metric: Option<String>,
    /// Start a bisect for each regression whose tested commits around it are more than one commit apart, and for
    /// each between two adjacent commits that no bisect covers yet (it confirms the commit against its parent, for
    /// the report).
    #[arg(long)]
    pub bisect: bool,
    /// With --bisect or --follow: bisect improvements too (each as `culprit bisect --improvement`), as the kernel
    /// test robot reports both; without it only regressions are bisected.
    #[arg(long)]
    pub improvements: bool,
    /// With --bisect or --follow: shell command that builds a commit in its worktree.
    #[arg(long)]
    pub build: Option<String>,
    /// With --bisect or --follow: shell command that deploys a built commit.
    #[arg(long)]
    pub deploy: Option<String>,
    /// With --bisect or --follow: where the benchmark's files go, as `culprit run --scratch` takes it (default: a
    /// directory under the system temp dir); the bisects started get it too.
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
    /// With --bisect or --follow: the commits' worktrees hold no files, as `culprit bisect --no-checkout` makes them
    /// (for a --build that builds `$CULPRIT_COMMIT` in a tree of its own); the bisects started get it too.
    #[arg(long)]
    pub no_checkout: bool,
    #[command(flatten)]
    pub timeouts: StepTimeoutArgs,
    /// With --bisect: most runs each bisect may spend.
    #[arg(long, default_value_t = 600)]
    pub max_runs: usize,
    /// Smallest change that counts, in percent of the level before it (`5` or `5%`; default 1): a smaller change
    /// point is unchanged however significant, so it is neither narrowed, bisected nor reported, and each bisect
    /// that --bisect or --follow starts gets it as its --min-change. Metrics compared in absolute terms
    /// (perf-profile, `%` metrics) keep their floor of 0.1 points.
    #[arg(long, value_name = "PCT", value_parser = percent)]
    pub min_change: Option<f64>,
    /// Draw each metric's series, fitted segments and change points into this file (.svg or .png); with several
    /// metrics, one file each, named FILE-<metric>.svg. Of more than 20 series, only those with a change point are
    /// drawn (the 20 most significant at most); a narrower --metric draws the others.
    #[arg(long, value_name = "FILE.svg|png")]
    pub plot: Option<PathBuf>,
    /// The robot's loop: measure the job on REF's first-parent history (every Nth commit, then both inner ends of
    /// each gap holding a change point), update the change points, bisect new regressions, write their reports.
    /// Without --metric it follows the job's primary metric: its KPI (a `command` job: its captured number, else
    /// command.elapsed_time).
    #[arg(
        long,
        value_name = "REF",
        requires = "job",
        conflicts_with_all = ["series", "branch", "bisect", "testcase", "machine"]
    )]
    pub follow: Option<String>,
    /// With --follow: measure every Nth commit of the first-parent history (counted from its oldest commit), and
    /// the newest (and, on a history of at most N commits after the oldest, the one halfway between).
    #[arg(long, value_name = "N", default_value_t = 10, requires = "follow")]
    pub every: usize,
    /// With --follow: runs per measured commit; at least 4 (a smaller N is raised to 4), the fewest runs of a
    /// segment in the change-point analysis, so that a commit alone beside a step (the oldest, or REF) can still
    /// hold one side of it.
    #[arg(long, value_name = "N", default_value_t = 4, requires = "follow")]
    pub runs: usize,
    /// With --follow: where the report of each bisect the loop started that blamed a commit goes (one directory per
    /// session, written once: the store records it).
    #[arg(long, value_name = "DIR", default_value = "culprit-reports", requires = "follow")]
    pub reports: PathBuf,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on, HOST:PORT (port 0 picks a free one; the address bound is printed). The dashboard
    /// has no login: listen on 0.0.0.0 only on a network whose users may read the store.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub listen: String,
}

/// Most `sim --commits`: a hundred times the largest history docs/statistics.md studies, and small enough that a
/// history's per-commit state is a few megabytes.
pub const MAX_SIM_COMMITS: u64 = 1_000_000;
/// Most `sim --trials`: the per-trial tallies stay a few megabytes, and the accuracy is then known to 0.1%.
pub const MAX_SIM_TRIALS: u64 = 1_000_000;
/// Smallest `--interval`: below 10 ms, sampling every monitor from `/proc` would cost more CPU than the benchmark's
/// own noise allows.
pub const MIN_INTERVAL_SECS: f64 = 0.01;
/// Largest `--interval`: an hour, beyond which no run would get a second sample.
pub const MAX_INTERVAL_SECS: f64 = 3600.0;
/// Largest `sim --step` in noise standard deviations: far beyond any step a bisect finds hard, and small enough that
/// simulated levels stay ordinary numbers.
pub const MAX_STEP_SIGMA: f64 = 100.0;

/// The help of `--build-timeout`, which bisect, check, try-fix and track take alike, short and long.
const BUILD_TIMEOUT_HELP: &str = "Longest a build may take: 5400, 90m, 3h, or none (default 4h)";
const BUILD_TIMEOUT_LONG_HELP: &str = "Longest a build may take: seconds, or a number with s, m, h, d or w (5400, \
    90m, 3h), or none for no limit (default 4h). A build still running then is killed with every process it \
    started and fails as a build that does not compile: its commit is untestable (skipped by a bisect, 125 for \
    `git bisect run`), with its log stored. 4h is about twice a cold distro-config kernel build on a small machine, so \
    only a hung build reaches it";

/// The help of `--deploy-timeout`, which bisect and track take, short and long.
const DEPLOY_TIMEOUT_HELP: &str = "Longest a deploy may take, as --build-timeout (default 1h)";
const DEPLOY_TIMEOUT_LONG_HELP: &str = "Longest a deploy may take, as --build-timeout (default 1h). A deploy still \
    running then (a kexec or reboot that never comes back, a boot waiting forever) is killed, and its commit is \
    untestable, skipped. Installing a kernel and rebooting a lab box takes minutes; one not back in an hour is hung";

/// `--build-timeout`, for the commands that build but do not deploy (check and try-fix). Declared once here so that
/// the four commands taking it cannot drift apart in its name, help or parser.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct BuildTimeoutArg {
    #[arg(
        long,
        value_name = "DURATION",
        help = BUILD_TIMEOUT_HELP,
        long_help = BUILD_TIMEOUT_LONG_HELP,
        value_parser = step_timeout("--build-timeout")
    )]
    pub build_timeout: Option<Timeout>,
}

impl BuildTimeoutArg {
    /// The limits the command runs with: the build limit given or its default, and the default deploy limit (which
    /// such a command never uses, as it deploys nothing).
    pub fn step_timeouts(self) -> StepTimeouts {
        step_timeouts(self.build_timeout, None)
    }
}

/// `--build-timeout` and `--deploy-timeout`, for the commands that build and deploy (bisect and track). Their ids
/// stay `build_timeout` and `deploy_timeout`, which the commands' `conflicts_with` lists name.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct StepTimeoutArgs {
    #[command(flatten)]
    pub build: BuildTimeoutArg,
    #[arg(
        long,
        value_name = "DURATION",
        help = DEPLOY_TIMEOUT_HELP,
        long_help = DEPLOY_TIMEOUT_LONG_HELP,
        value_parser = step_timeout("--deploy-timeout")
    )]
    pub deploy_timeout: Option<Timeout>,
}

impl StepTimeoutArgs {
    /// The build limit as given (`None` when the flag was not given).
    pub fn build_timeout(self) -> Option<Timeout> {
        self.build.build_timeout
    }

    /// Whether either limit was given on the command line.
    pub fn any_given(self) -> bool {
        self.build.build_timeout.is_some() || self.deploy_timeout.is_some()
    }

    /// The limits the command runs with: the ones given, the defaults for the others.
    pub fn step_timeouts(self) -> StepTimeouts {
        step_timeouts(self.build.build_timeout, self.deploy_timeout)
    }
}

/// A `--build-timeout` or `--deploy-timeout` as given: a limit in seconds, or `None` for `none` (no limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeout(pub Option<u64>);

/// The build and deploy limits of a command: the ones given, the defaults for the others.
fn step_timeouts(build: Option<Timeout>, deploy: Option<Timeout>) -> StepTimeouts {
    let defaults = StepTimeouts::default();
    StepTimeouts {
        build_secs: build.map_or(defaults.build_secs, |t| t.0),
        deploy_secs: deploy.map_or(defaults.deploy_secs, |t| t.0),
    }
}

/// The parser of `flag` (`--build-timeout` or `--deploy-timeout`): a duration as job files write one (`5400`,
/// `90s`, `45m`, `2h`; `culprit_job::convention::duration_secs`), or `none` for no limit. Zero is refused: it would
/// kill every step the moment it starts, surely not what was meant.
fn step_timeout(flag: &'static str) -> impl Fn(&str) -> Result<Timeout, String> + Clone + Send + Sync + 'static {
    move |text: &str| {
        if text.trim().eq_ignore_ascii_case("none") {
            return Ok(Timeout(None));
        }
        let step = flag.trim_start_matches("--").trim_end_matches("-timeout");
        match culprit_job::convention::duration_secs(text) {
            Ok(0) => Err(format!(
                "a zero {flag} would kill every {step} the moment it starts; give a duration such as 2h, or none for \
                 no limit"
            )),
            Ok(secs) => Ok(Timeout(Some(secs))),
            Err(e) => Err(format!("{e}, or none for no limit")),
        }
    }
}

/// `--interval`: seconds between monitor samples, within [MIN_INTERVAL_SECS, MAX_INTERVAL_SECS].
fn interval_secs(text: &str) -> Result<f64, String> {
    let value: f64 = text.trim().parse().map_err(|_| format!("'{text}' is not a number of seconds"))?;
    if !(MIN_INTERVAL_SECS..=MAX_INTERVAL_SECS).contains(&value) {
        return Err(format!(
            "the interval must be from {MIN_INTERVAL_SECS} to {MAX_INTERVAL_SECS} seconds, got {text}"
        ));
    }
    Ok(value)
}

/// One `sim --step` size: a finite number of noise standard deviations from 0 to MAX_STEP_SIGMA.
fn step_sigma(text: &str) -> Result<f64, String> {
    let value: f64 = text.trim().parse().map_err(|_| format!("'{text}' is not a step size in sigma, e.g. 1.5"))?;
    if !(0.0..=MAX_STEP_SIGMA).contains(&value) {
        return Err(format!("a step is from 0 to {MAX_STEP_SIGMA} noise standard deviations, got {text}"));
    }
    Ok(value)
}

/// A job, testcase or machine filter: a glob whose every `[` is closed (see `culprit_store::glob::validate`).
fn glob_pattern(text: &str) -> Result<String, String> {
    culprit_store::glob::validate(text).map_err(|e| e.to_string())?;
    Ok(text.to_string())
}

/// `--min-change`: a percentage (`2` or `2%`) above 0 and below 100, as a fraction.
fn percent(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches('%').trim();
    match number.parse::<f64>() {
        Ok(p) if p > 0.0 && p < 100.0 => Ok(p / 100.0),
        _ => Err(format!("{text:?} is not a percentage above 0 and below 100 (e.g. 2 or 2%)")),
    }
}

/// `--run`: a shell command to time, which cannot be empty.
fn shell_command(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err("--run needs a shell command to time, e.g. --run 'make -j8 test'".to_string());
    }
    Ok(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn intervals_are_bounded_and_finite() {
        assert_eq!(interval_secs("0.01"), Ok(0.01));
        assert_eq!(interval_secs("3600"), Ok(3600.0));
        for bad in ["0", "1e-9", "0.009", "3600.5", "-1", "nan", "inf", "x"] {
            let message = interval_secs(bad).unwrap_err();
            assert!(message.contains(bad), "{bad}: {message}");
        }
        assert!(interval_secs("0").unwrap_err().contains("from 0.01 to 3600 seconds"));
    }

    #[test]
    fn percentages_are_fractions_above_0_and_below_100() {
        assert_eq!(percent("2"), Ok(0.02));
        assert_eq!(percent("2.5%"), Ok(0.025));
        assert_eq!(percent(" 10 % "), Ok(0.1));
        for bad in ["0", "100", "-1", "nan", "inf", "x", "%", "2%%x"] {
            let message = percent(bad).unwrap_err();
            assert!(message.contains("above 0 and below 100"), "{bad}: {message}");
        }
    }

    #[test]
    fn steps_are_finite_and_at_most_100_sigma() {
        assert_eq!(step_sigma("0"), Ok(0.0));
        assert_eq!(step_sigma("100"), Ok(100.0));
        for bad in ["1e308", "100.5", "-0.5", "nan", "inf", "-inf", "big"] {
            assert!(step_sigma(bad).is_err(), "{bad}");
        }
        for bad in ["-1", "1,-0.5"] {
            let refused = Cli::try_parse_from(["culprit", "sim", "--step", bad]).map(|_| ()).unwrap_err().to_string();
            assert!(refused.contains("a step is from 0 to 100 noise standard deviations, got -"), "{bad}: {refused}");
        }
    }

    #[test]
    fn step_timeouts_read_durations_and_refuse_anything_else_naming_the_flag() {
        let build = step_timeout("--build-timeout");
        for (text, secs) in [("90", 90), ("90s", 90), ("45m", 2700), ("2h", 7200), (" 1d ", 86_400)] {
            assert_eq!(build(text), Ok(Timeout(Some(secs))), "{text}");
        }
        assert_eq!(build("none"), Ok(Timeout(None)));
        assert_eq!(build("NONE"), Ok(Timeout(None)));
        let zero = build("0").unwrap_err();
        assert!(zero.contains("a zero --build-timeout would kill every build") && zero.contains("none"), "{zero}");
        assert!(step_timeout("--deploy-timeout")("0s").unwrap_err().contains("every deploy"));
        for bad in ["", "2 h", "1.5h", "2hours", "-5m", "h", "90x", "99999999999999999999w", "forever"] {
            let message = build(bad).unwrap_err();
            assert!(message.contains(&format!("'{bad}' is not a duration")), "{bad}: {message}");
            assert!(message.contains("(300s, 5m, 1h), or none for no limit"), "{bad}: {message}");
        }
        // On the command line, clap names the flag that was given the value.
        for (command, flag) in [
            (&["culprit", "bisect", "--good", "a", "--bad", "b", "--run", "x"][..], "--build-timeout"),
            (&["culprit", "bisect", "--good", "a", "--bad", "b", "--run", "x"][..], "--deploy-timeout"),
            (&["culprit", "check", "--good", "a", "--bad", "b", "--run", "x"][..], "--build-timeout"),
            (&["culprit", "try-fix", "--base", "a", "--bad", "b", "--patch", "p", "--run", "x"][..], "--build-timeout"),
            (&["culprit", "track", "--bisect"][..], "--deploy-timeout"),
        ] {
            let args = [command, &[flag, "45min"][..]].concat();
            let usage = Cli::try_parse_from(args).unwrap_err().to_string();
            assert!(usage.contains(&format!("invalid value '45min' for '{flag} <DURATION>'")), "{usage}");
            assert!(usage.contains("'45min' is not a duration"), "{usage}");
            let args = [command, &[flag, "0"][..]].concat();
            let usage = Cli::try_parse_from(args).unwrap_err().to_string();
            assert!(usage.contains(&format!("a zero {flag} would kill")), "{usage}");
        }
        // What the command runs with: the limits given, the defaults for the others.
        let given = step_timeouts(Some(Timeout(Some(2))), Some(Timeout(None)));
        assert_eq!((given.build_secs, given.deploy_secs), (Some(2), None));
        assert_eq!(step_timeouts(None, None), StepTimeouts::default());
        assert_eq!(StepTimeouts::default().build_secs, Some(4 * 3600));
        assert_eq!(StepTimeouts::default().deploy_secs, Some(3600));
        // They are part of a session, but --resume takes new ones (a build that was only slow gets longer), unlike
        // what the session is of.
        let cli = Cli::try_parse_from(["culprit", "bisect", "--resume", "1", "--build-timeout", "1h"]).unwrap();
        let Command::Bisect(bisect) = cli.command else { panic!("not bisect: {cli:?}") };
        assert_eq!((bisect.resume, bisect.timeouts.build_timeout()), (Some(1), Some(Timeout(Some(3600)))));
        let usage = Cli::try_parse_from(["culprit", "bisect", "--resume", "1", "--build", "make"]).unwrap_err();
        assert!(usage.to_string().contains("cannot be used with '--build <BUILD>'"), "{usage}");
    }

    #[test]
    fn improvement_defines_a_bisect_so_resume_refuses_it() {
        let cli = Cli::try_parse_from(["culprit", "bisect", "--good", "a", "--bad", "b", "--improvement"]).unwrap();
        let Command::Bisect(bisect) = cli.command else { panic!("not bisect: {cli:?}") };
        assert!(bisect.improvement);
        // A stored session keeps the direction it was started with: a resume cannot turn a regression's bisect into
        // an improvement's halfway.
        let usage = Cli::try_parse_from(["culprit", "bisect", "--resume", "1", "--improvement"]).unwrap_err();
        assert!(usage.to_string().contains("cannot be used with '--improvement'"), "{usage}");
    }

    #[test]
    fn the_shared_timeout_flags_keep_their_help_and_conflicts_on_every_command() {
        use clap::CommandFactory;
        let cli = Cli::command();
        for (name, flags) in [
            ("bisect", &["build-timeout", "deploy-timeout"][..]),
            ("check", &["build-timeout"][..]),
            ("try-fix", &["build-timeout"][..]),
            ("track", &["build-timeout", "deploy-timeout"][..]),
        ] {
            let command = cli.find_subcommand(name).unwrap();
            let longs: Vec<&str> = command.get_arguments().filter_map(|a| a.get_long()).collect();
            // Only the commands that deploy take a deploy limit.
            assert_eq!(longs.contains(&"deploy-timeout"), flags.len() == 2, "{name}: {longs:?}");
            for flag in flags {
                let arg = command.get_arguments().find(|a| a.get_long() == Some(flag)).unwrap();
                let (help, long_help) = match *flag {
                    "build-timeout" => (BUILD_TIMEOUT_HELP, BUILD_TIMEOUT_LONG_HELP),
                    _ => (DEPLOY_TIMEOUT_HELP, DEPLOY_TIMEOUT_LONG_HELP),
                };
                assert_eq!(arg.get_help().map(|h| h.to_string()), Some(help.to_string()), "{name} --{flag}");
                assert_eq!(arg.get_long_help().map(|h| h.to_string()), Some(long_help.to_string()), "{name} --{flag}");
                assert_eq!(arg.get_value_names().unwrap(), ["DURATION"], "{name} --{flag}");
            }
        }
        // The options that exclude them still do, whichever limit is given.
        for (command, flag) in [
            (&["culprit", "check", "--clean"][..], "--build-timeout"),
            (&["culprit", "track", "--series", "s.csv"][..], "--build-timeout"),
            (&["culprit", "track", "--series", "s.csv"][..], "--deploy-timeout"),
        ] {
            let usage = Cli::try_parse_from([command, &[flag, "1h"][..]].concat()).unwrap_err().to_string();
            assert!(usage.contains(&format!("cannot be used with '{flag} <DURATION>'")), "{usage}");
        }
        // And a value given reaches the command's limits.
        let cli = Cli::try_parse_from(["culprit", "track", "--bisect", "--deploy-timeout", "5m"]).unwrap();
        let Command::Track(track) = cli.command else { panic!("not track: {cli:?}") };
        assert!(track.timeouts.any_given());
        assert_eq!(track.timeouts.step_timeouts().deploy_secs, Some(300));
        assert_eq!(track.timeouts.step_timeouts().build_secs, StepTimeouts::default().build_secs);
    }

    #[test]
    fn globs_and_commands_are_checked_when_parsed() {
        assert_eq!(glob_pattern("fio-[ab]*"), Ok("fio-[ab]*".to_string()));
        assert!(glob_pattern("[[").unwrap_err().contains("'[['"));
        assert!(shell_command(" ").unwrap_err().contains("--run needs a shell command"));
        assert_eq!(shell_command("true"), Ok("true".to_string()));
        let usage = Cli::try_parse_from(["culprit", "results", "--job", "[["]).unwrap_err().to_string();
        assert!(usage.contains("--job") && usage.contains("not a valid glob"), "{usage}");
        let usage =
            Cli::try_parse_from(["culprit", "sim", "--commits", "18446744073709551615"]).unwrap_err().to_string();
        assert!(usage.contains("--commits"), "{usage}");
        let usage = Cli::try_parse_from(["culprit", "sim", "--trials", "100000000000"]).unwrap_err().to_string();
        assert!(usage.contains("--trials"), "{usage}");
    }
}
