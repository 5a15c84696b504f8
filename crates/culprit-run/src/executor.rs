//! Running one atomic job once: setup, monitors, the measured executions, parsing, cleanup, into a [`RunRecord`].
//!
//! Whatever happens, a started run ends as a record: a crash, a timeout, a non-zero exit or output that yields no
//! metrics becomes a failed run carrying its reason and stderr, because a failure is evidence (a commit that makes
//! the benchmark crash is a regression too). Only a run the user interrupted is not recorded, since it measured
//! nothing.

use crate::monitor::{self, MonitorSet};
use crate::process::{self, Exit, Finished, Invocation};
use crate::program::{command, Params, Program, ProgramContext, ProgramPlan};
use crate::scratch::ScratchDir;
use crate::step_record;
use culprit_core::model::{time_metric, Machine, MonitorSeries, RawOutput, Revision, RunOutcome, RunRecord};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One atomic job, validated and ready to run.
#[derive(Clone)]
pub struct JobRun {
    pub job_id: String,
    pub job_name: String,
    pub testcase: String,
    /// The atomic job's params as `key: value` text, for the record.
    pub params: Vec<(String, String)>,
    pub job_yaml: String,
    pub program: &'static dyn Program,
    pub program_params: Params,
    /// Monitor names with their options.
    pub monitors: Vec<(String, BTreeMap<String, String>)>,
    /// The job's `timeout`: the measured command is killed after it.
    pub timeout: Option<Duration>,
    /// Where a `command` runs; other programs run in their scratch directory.
    pub cwd: Option<PathBuf>,
    /// Extra environment (e.g. `CULPRIT_COMMIT` during a bisect).
    pub env: Vec<(String, String)>,
}

/// What every run of a plan shares.
#[derive(Debug, Clone)]
pub struct RunContext {
    pub revision: Revision,
    pub machine: Machine,
    /// The monitors' sampling interval.
    pub interval: Duration,
    /// Where per-run scratch directories are made (and removed afterwards).
    pub scratch_root: PathBuf,
    /// Where each process of the run (setup, executions, cleanup) is recorded while it runs, so that a benchmark
    /// left running when culprit is killed with `kill -9` is killed by the next culprit to take up the work (see
    /// [`crate::step_record`]); `None`: not recorded.
    pub step_record: Option<PathBuf>,
}

/// A run's stderr keeps each monitor failure as a line `culprit: <the MonitorError>`, whose text always begins with
/// `monitor <name>` or `unknown monitor`; [`monitor_failures`] finds these lines again. The run itself stays ok: a
/// missing profile does not make the benchmark's numbers wrong.
const NOTE_PREFIX: &str = "culprit: ";

/// The monitor failures a run recorded (each without the `culprit: ` prefix), so a caller can tell the user at
/// once instead of leaving them in the stored stderr.
pub fn monitor_failures(record: &RunRecord) -> Vec<&str> {
    record
        .stderr
        .lines()
        .filter_map(|line| line.strip_prefix(NOTE_PREFIX))
        .filter(|note| note.starts_with("monitor ") || note.starts_with("unknown monitor "))
        .collect()
}

/// The last line the benchmark wrote to stderr, as `: <line>`, for the reason of a failed run: `exit status 1` alone
/// hides the cause (fio's `No space left on device`), which is otherwise only in the stored stderr. The reason quotes
/// `command_line` already, so a long piece of it that the line repeats (a shell's `sh: 1: <command>: not found`) is
/// replaced by a mention rather than quoted a second time.
fn stderr_tail(stderr: &str, command_line: &str) -> String {
    reason_tail(crate::program::last_line(stderr), command_line)
}

/// The line of a failed execution of the job's program that says why ([`crate::program::Program::failure_line`]), as
/// [`stderr_tail`] gives it.
///
/// Nothing after a timeout: what a benchmark Culprit killed printed last says nothing of why it was killed, and may
/// say the opposite (stress-ng's SIGTERM handler prints "successful run completed").
fn failure_tail(job: &JobRun, finished: &Finished, command_line: &str) -> String {
    if matches!(finished.exit, Exit::TimedOut) {
        return String::new();
    }
    reason_tail(job.program.failure_line(finished), command_line)
}

fn reason_tail(line: Option<&str>, command_line: &str) -> String {
    match line {
        None => String::new(),
        Some(line) => format!(": {}", process::shortened(&without_command(line, command_line), process::QUOTED_CHARS)),
    }
}

/// `line` with every piece of a long `command_line` in it (the whole line, or one of its words) longer than a
/// message quotes replaced by `[N characters of the command line]`.
fn without_command(line: &str, command_line: &str) -> String {
    if command_line.chars().count() <= process::QUOTED_CHARS {
        return line.to_string();
    }
    let mut pieces: Vec<&str> = std::iter::once(command_line.trim())
        .chain(command_line.split_whitespace())
        .filter(|piece| piece.chars().count() > process::QUOTED_CHARS)
        .collect();
    // The longest first, so that the whole line is replaced as one before any of its words is.
    pieces.sort_by_key(|piece| std::cmp::Reverse(piece.len()));
    pieces.iter().fold(line.to_string(), |line, piece| {
        line.replace(piece, &format!("[{} characters of the command line]", piece.chars().count()))
    })
}

fn now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

/// Runs `job` once. Returns `None` only when the user interrupted it.
pub fn run_once(job: &JobRun, ctx: &RunContext, interrupt: &Arc<AtomicBool>) -> Option<RunRecord> {
    let started_at = now();
    let mut record = RunRecord {
        job_id: job.job_id.clone(),
        job_name: job.job_name.clone(),
        testcase: job.testcase.clone(),
        params: job.params.clone(),
        job_yaml: job.job_yaml.clone(),
        revision: ctx.revision.clone(),
        machine: ctx.machine.clone(),
        started_at,
        ended_at: started_at,
        outcome: RunOutcome::Ok,
        exit_code: None,
        metrics: BTreeMap::new(),
        monitors: Vec::new(),
        raw_outputs: Vec::new(),
        stderr: String::new(),
        scratch: None,
    };
    // Every process of the run carries one token, so that a server its setup started, which leaves the step's
    // process group, is killed with the step a killed culprit left running; the scratch directory's marker names
    // it, so that the directory is not taken for a dead run's while such a process may still write in it.
    let token = step_record::new_token();
    let scratch = match ScratchDir::create(&ctx.scratch_root, &job.job_name, &token) {
        Ok(dir) => dir,
        Err(e) => {
            let root = ctx.scratch_root.display();
            record.outcome = RunOutcome::failed(format!("cannot make a scratch directory under {root}: {e}"));
            record.ended_at = now();
            return Some(record);
        }
    };
    // Read once the root exists (the first run makes it), and at every run: a directory may be mounted over between
    // runs. The root is recorded, not the run's own directory, since it is what `--scratch` takes to do the same.
    record.scratch = crate::filesystem::filesystem_of(&where_the_files_go(job, ctx));
    let result = run_in(job, ctx, interrupt, scratch.path(), &mut record, &token);
    // The scratch directory can hold gigabytes of fio files; it goes whatever happened.
    drop(scratch);
    record.ended_at = now();
    match result {
        Err(Stop::Interrupted) => None,
        Err(Stop::Failed(reason)) => {
            // The reason can quote a line of binary garbage; it is printed now and stored as `failed` shows it.
            record.outcome = RunOutcome::failed(reason);
            Some(record)
        }
        Ok(()) => Some(record),
    }
}

enum Stop {
    Interrupted,
    Failed(String),
}

/// The directory whose filesystem a run's benchmark files are on: the scratch root, except for a `command`, which
/// runs in its working directory (the worktree under bisect, else culprit's own) and not in a scratch directory.
/// QA 51 ran one command job from tmpfs and one from ext4 with `--scratch` on tmpfs, and the mail said the opposite
/// of what the command's own `pwd` showed.
fn where_the_files_go(job: &JobRun, ctx: &RunContext) -> PathBuf {
    files_directory(job.program.name(), job.cwd.as_deref(), &ctx.scratch_root)
}

/// [`where_the_files_go`] for a run of `program` in `cwd` (none: culprit's own working directory) with the scratch
/// root `scratch_root`, for a command that must know the filesystem before it runs anything (`culprit check`
/// choosing the stored reference runs that put their files where its own runs will).
pub fn files_directory(program: &str, cwd: Option<&Path>, scratch_root: &Path) -> PathBuf {
    if program != "command" {
        return scratch_root.to_path_buf();
    }
    cwd.map(Path::to_path_buf)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| scratch_root.to_path_buf())
}

/// Runs one process of a run (`what`: setup, run or cleanup), recorded at the context's step record while it runs.
/// A benchmark outlives a culprit killed with `kill -9` (it has a process group of its own, so that a timeout kills
/// its workers too), and would load the machine under every later run: the record lets the resumed bisect or the
/// next follow pass kill it.
fn run_process(
    inv: &Invocation,
    timeout: Option<Duration>,
    interrupt: &Arc<AtomicBool>,
    ctx: &RunContext,
    what: &str,
    token: &str,
) -> Result<Finished, process::ProcessError> {
    step_record::run_recorded_as(inv, timeout, interrupt, ctx.step_record.as_deref(), what, ctx.revision.key(), token)
}

fn with_env(mut inv: Invocation, job: &JobRun) -> Invocation {
    inv.env.extend(job.env.iter().cloned());
    inv
}

fn run_in(
    job: &JobRun,
    ctx: &RunContext,
    interrupt: &Arc<AtomicBool>,
    scratch: &std::path::Path,
    record: &mut RunRecord,
    token: &str,
) -> Result<(), Stop> {
    let pctx = ProgramContext { nr_cpu: ctx.machine.nr_cpu.max(1), scratch_dir: scratch.to_path_buf() };
    let mut plan = job.program.plan(&job.program_params, &pctx).map_err(|e| Stop::Failed(e.to_string()))?;
    let result = set_up(job, ctx, interrupt, &pctx, &mut plan, record, token)
        .and_then(|()| measure(job, ctx, interrupt, &plan, record, token));
    // The plan's cleanup is the last plan's when setup tried again from a new one.
    for step in &plan.cleanup {
        // Cleanup is attempted whatever happened (a half-done setup may have started a server) and never turns a
        // good run into a failed one.
        let _ = run_process(
            &with_env(step.clone(), job),
            Some(Duration::from_secs(600)),
            &Arc::new(AtomicBool::new(false)),
            ctx,
            "cleanup",
            token,
        );
    }
    result
}

/// The plan's setup steps, in order. The step of the plan's [`crate::program::SetupRetry`], when it fails as that
/// says a failure worth another try does (a throwaway server's start on a port another process took first), runs
/// again from a new plan for the same scratch directory, whose steps before it must be those that ran (the server's
/// new plan differs in its port); that plan then serves the rest of the run, its cleanup included.
fn set_up(
    job: &JobRun,
    ctx: &RunContext,
    interrupt: &Arc<AtomicBool>,
    pctx: &ProgramContext,
    plan: &mut ProgramPlan,
    record: &mut RunRecord,
    token: &str,
) -> Result<(), Stop> {
    let (mut step, mut tries) = (0, 1);
    while let Some(next) = plan.setup.get(step) {
        let inv = with_env(next.clone(), job);
        let f = run_process(&inv, job.timeout, interrupt, ctx, "setup", token)
            .map_err(|e| Stop::Failed(format!("setup: {e}")))?;
        if f.exit == Exit::Interrupted {
            return Err(Stop::Interrupted);
        }
        if f.exit.success() {
            step += 1;
            continue;
        }
        let retry = plan.retry.filter(|retry| retry.step == step && f.stderr.contains(retry.when_stderr_has));
        if let Some(retry) = retry.filter(|retry| tries < retry.tries) {
            let again = job.program.plan(&job.program_params, pctx).map_err(|e| {
                record.stderr.push_str(&f.stderr);
                Stop::Failed(e.to_string())
            })?;
            if again.setup.get(..step) == plan.setup.get(..step) {
                // The run's stderr keeps what each try met, which the run's reason does not say when a later try
                // passes.
                record.stderr.push_str(&f.stderr);
                record.stderr.push_str(&format!(
                    "{NOTE_PREFIX}setup '{}' failed on try {tries} of {} ({}), so it was tried again\n",
                    inv.summary(),
                    retry.tries,
                    retry.why
                ));
                *plan = again;
                tries += 1;
                continue;
            }
        }
        record.stderr.push_str(&f.stderr);
        // After tries that all failed alike, the line that says how says more than the last one (a server's
        // "Aborting").
        let (tries_text, tail) = match retry {
            Some(retry) => (
                format!(" on try {tries} of {} ({})", retry.tries, retry.why),
                reason_tail(
                    f.stderr.lines().map(str::trim).find(|line| line.contains(retry.when_stderr_has)),
                    &inv.command_text(),
                ),
            ),
            None if matches!(f.exit, Exit::TimedOut) => (String::new(), String::new()),
            None => (String::new(), stderr_tail(&f.stderr, &inv.command_text())),
        };
        return Err(Stop::Failed(format!(
            "setup '{}' failed: {}{tries_text}{tail}",
            inv.summary(),
            exit_text(&f.exit, job.timeout)
        )));
    }
    Ok(())
}

/// Monitors, the measured executions and parsing, after setup; cleanup is the caller's.
fn measure(
    job: &JobRun,
    ctx: &RunContext,
    interrupt: &Arc<AtomicBool>,
    plan: &ProgramPlan,
    record: &mut RunRecord,
    token: &str,
) -> Result<(), Stop> {
    let mut main = with_env(plan.main.clone(), job);
    if job.program.name() == "command" {
        main.cwd = job.cwd.clone();
    }
    let deadline = job.timeout;
    let begun = std::time::Instant::now();
    // Warm-up executions run before the monitors start, so neither the benchmark's metrics nor the monitors'
    // include them; they share the run's timeout with the measured executions.
    for warmup in 1..=plan.warmups {
        let remaining = deadline.map(|d| d.saturating_sub(begun.elapsed()));
        let f = run_process(&main, remaining, interrupt, ctx, "run", token)
            .map_err(|e| Stop::Failed(format!("warm-up execution {warmup}: {e}")))?;
        if f.exit == Exit::Interrupted {
            return Err(Stop::Interrupted);
        }
        if !f.exit.success() {
            record.exit_code = f.exit.code();
            record.stderr.push_str(&f.stderr);
            return Err(Stop::Failed(format!(
                "warm-up execution {warmup} of '{}' {}{}",
                main.summary(),
                exit_text(&f.exit, job.timeout),
                failure_tail(job, &f, &main.command_text())
            )));
        }
    }

    let mut monitors = Vec::new();
    for (name, options) in &job.monitors {
        match monitor::create(name, options, ctx.interval.as_secs_f64()) {
            Ok(m) => monitors.push(m),
            // The error names the monitor already.
            Err(e) => record.stderr.push_str(&format!("{NOTE_PREFIX}{e} (not started)\n")),
        }
    }
    let set = MonitorSet::start(monitors, ctx.interval);

    let mut executions: Vec<Finished> = Vec::new();
    let mut failure = None;
    for _ in 0..plan.executions {
        let remaining = deadline.map(|d| d.saturating_sub(begun.elapsed()));
        match run_process(&main, remaining, interrupt, ctx, "run", token) {
            Ok(f) => {
                let ok = f.exit.success();
                if !ok {
                    failure = Some(format!(
                        "'{}' {}{}",
                        main.summary(),
                        exit_text(&f.exit, job.timeout),
                        failure_tail(job, &f, &main.command_text())
                    ));
                }
                record.exit_code = f.exit.code();
                executions.push(f);
                if !ok {
                    break;
                }
            }
            Err(e) => {
                failure = Some(e.to_string());
                break;
            }
        }
    }

    for (name, result) in set.stop() {
        match result {
            Ok(out) => {
                record.metrics.extend(out.metrics);
                if !out.series.series.is_empty() {
                    let mut series = out.series;
                    if series.monitor.is_empty() {
                        series.monitor = name.clone();
                    }
                    record.monitors.push(series);
                }
                record.raw_outputs.extend(out.raw);
            }
            Err(e) => record.stderr.push_str(&format!("{NOTE_PREFIX}{e}\n")),
        }
    }

    let stdout: String = executions.iter().map(|f| f.stdout.as_str()).collect();
    let stderr: String = executions.iter().map(|f| f.stderr.as_str()).collect();
    record.stderr.push_str(&stderr);
    if !stdout.is_empty() {
        record
            .raw_outputs
            .push(RawOutput { name: job.program.raw_output_name().to_string(), content: stdout.clone().into_bytes() });
    }
    if executions.iter().any(|f| f.exit == Exit::Interrupted) || interrupt.load(Ordering::SeqCst) {
        return Err(Stop::Interrupted);
    }
    add_time_metrics(&executions, job.program.name(), &mut record.metrics);
    if let Some(reason) = failure {
        return Err(Stop::Failed(reason));
    }

    let program_metrics = match job.program.parser() {
        None => {
            let caps = command::captures(&job.program_params).map_err(|e| Stop::Failed(e.to_string()))?;
            let per_execution = MonitorSeries {
                monitor: "command".into(),
                times: executions
                    .iter()
                    .map(|f| f.usage.wall_secs)
                    .scan(0.0, |t, w| {
                        *t += w;
                        Some(*t)
                    })
                    .collect(),
                series: BTreeMap::from([(
                    "elapsed_time".to_string(),
                    executions.iter().map(|f| f.usage.wall_secs).collect(),
                )]),
            };
            record.monitors.push(per_execution);
            let provenances = command::provenances(&job.program_params).map_err(|e| Stop::Failed(e.to_string()))?;
            for (name, value) in command::provenance_values(&stdout, &provenances) {
                if !record.params.iter().any(|(k, _)| k == &name) {
                    record.params.push((name, value));
                }
            }
            command::metrics(&executions, &caps).map_err(Stop::Failed)?
        }
        Some(parser_name) => {
            let parser = culprit_parse::lookup(parser_name)
                .ok_or_else(|| Stop::Failed(format!("no parser named {parser_name}")))?;
            let parsed = parser
                .parse(&culprit_parse::ParseInput::text(&stdout))
                .map_err(|e| Stop::Failed(format!("{} output yields no metrics: {e}", job.program.name())))?;
            // What the parser left out of an output it still read goes with the run, where `culprit results` and
            // a report's reader of the stored stderr find it.
            for note in &parsed.notes {
                record.stderr.push_str(&format!("{NOTE_PREFIX}{} output: {note}\n", job.program.name()));
            }
            let metrics = parsed.metrics(job.program.name());
            if metrics.is_empty() {
                return Err(Stop::Failed(format!("{} output yields no metrics", job.program.name())));
            }
            metrics
        }
    };
    record.metrics.extend(finite_metrics(job.program.name(), program_metrics).map_err(Stop::Failed)?);
    Ok(())
}

/// The program's metrics, or the reason the run failed when one of them is NaN or infinite. The parsers refuse
/// such values themselves; this is the safety net for every program, since a non-finite sample stored as a result
/// would poison every mean and test it enters.
fn finite_metrics(program: &str, metrics: BTreeMap<String, f64>) -> Result<BTreeMap<String, f64>, String> {
    match metrics.iter().find(|(_, v)| !v.is_finite()) {
        Some((name, value)) => Err(format!(
            "{name}: the {program} output gives {value}, which is not a finite number; the benchmark printed nan, inf \
             or a zero where a measurement belongs (see the run's raw output)"
        )),
        None => Ok(metrics),
    }
}

/// lkp's time monitor's metrics for the measured command (the lines of GNU `time -v` that lkp runs every benchmark
/// under, named as lkp's `programs/time/parse` names them), summed over its executions. lkp times the program into
/// `<program>.time` (its `bin/run-test`), so its stats name them `<program>.time.<field>` (`stress-ng.time.user_time`),
/// and so do Culprit's, so that an imported lkp run and Culprit's run of one job meet in one row. A `command` job
/// measures its own wall, user and system time and maximum RSS per execution (`command.elapsed_time`, ...); the same
/// four `command.time.*` metrics would be those times the number of executions, the same change counted twice in
/// every comparison (twice in the false-discovery family, two headlines), so a command job gets only the
/// `command.time.*` metrics it has no twin of.
fn add_time_metrics(executions: &[Finished], program: &str, metrics: &mut BTreeMap<String, f64>) {
    if executions.is_empty() {
        return;
    }
    let sum = |f: &dyn Fn(&Finished) -> f64| executions.iter().map(f).sum::<f64>();
    let mut insert = |field: &str, value: f64| metrics.insert(time_metric(program, field), value);
    if program != "command" {
        insert("elapsed_time", sum(&|e| e.usage.wall_secs));
        insert("user_time", sum(&|e| e.usage.user_secs));
        insert("system_time", sum(&|e| e.usage.sys_secs));
        insert(
            "maximum_resident_set_size",
            executions.iter().map(|e| e.usage.max_rss_kib as f64).fold(0.0, f64::max),
        );
    }
    insert("minor_page_faults", sum(&|e| e.usage.minor_faults as f64));
    insert("major_page_faults", sum(&|e| e.usage.major_faults as f64));
    insert("voluntary_context_switches", sum(&|e| e.usage.voluntary_switches as f64));
    insert("involuntary_context_switches", sum(&|e| e.usage.involuntary_switches as f64));
    insert("file_system_inputs", sum(&|e| e.usage.fs_inputs as f64));
    insert("file_system_outputs", sum(&|e| e.usage.fs_outputs as f64));
    // GNU time prints a whole percent, CPU milliseconds * 100 / wall milliseconds, and `?` (which lkp reads as 0)
    // for no wall time at all.
    let (cpu, wall) = (sum(&|e| e.usage.user_secs + e.usage.sys_secs), sum(&|e| e.usage.wall_secs));
    let cpu_ms = (cpu * 1000.0).floor();
    let wall_ms = (wall * 1000.0).floor();
    let percent = if wall_ms > 0.0 { (cpu_ms * 100.0 / wall_ms).floor() } else { 0.0 };
    insert("percent_of_cpu_this_job_got", percent);
}

/// How an execution ended, for a failed run's reason; a timeout names its length and where it is set, since "killed
/// after the job's timeout" left the user to find both (a `timeout: 2s` under a `testtime: 10s` ended every run).
fn exit_text(exit: &Exit, timeout: Option<Duration>) -> String {
    match (exit, timeout) {
        (Exit::TimedOut, Some(limit)) => format!(
            "killed after the job's timeout of {}s (raise `timeout:` in the job file if the benchmark needs longer)",
            limit.as_secs_f64()
        ),
        _ => exit.describe(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job of `program` with its params, no monitors, run in the scratch directory.
    fn test_job(name: &str, program: &'static dyn Program, params: Params) -> JobRun {
        JobRun {
            job_id: "id".into(),
            job_name: name.into(),
            testcase: "t".into(),
            params: Vec::new(),
            job_yaml: String::new(),
            program,
            program_params: params,
            monitors: Vec::new(),
            timeout: None,
            cwd: None,
            env: Vec::new(),
        }
    }

    fn test_context(dir: &std::path::Path) -> RunContext {
        RunContext {
            revision: Revision::Label { name: "x".into() },
            machine: crate::machine::this_machine(),
            interval: Duration::from_secs(1),
            scratch_root: dir.join("scratch"),
            step_record: None,
        }
    }
    use crate::program::{ParamSpec, ProgramError, SetupRetry};

    /// A program whose setup fails and whose cleanup leaves a mark, to prove cleanup runs after a failed setup
    /// (a half-done setup may have started a server that must be stopped).
    struct FailingSetup;

    impl Program for FailingSetup {
        fn name(&self) -> &'static str {
            "command"
        }
        fn binary(&self) -> &'static str {
            "sh"
        }
        fn install_hint(&self) -> &'static str {
            ""
        }
        fn params(&self) -> &'static [ParamSpec] {
            &[]
        }
        fn plan(&self, p: &Params, _ctx: &ProgramContext) -> Result<ProgramPlan, ProgramError> {
            let mark = p.get("mark").unwrap_or("/nonexistent").to_string();
            Ok(ProgramPlan {
                setup: vec![Invocation::shell("echo starting a server; exit 3")],
                main: Invocation::shell("echo never"),
                executions: 1,
                warmups: 0,
                cleanup: vec![Invocation::new(["touch".to_string(), mark])],
                retry: None,
            })
        }
    }

    static FAILING_SETUP: FailingSetup = FailingSetup;

    #[test]
    fn cleanup_runs_after_a_failed_setup_and_the_run_is_stored_as_failed() {
        let dir = tempfile::tempdir().unwrap();
        let mark = dir.path().join("cleaned");
        let params = Params::new("command", BTreeMap::from([("mark".to_string(), mark.display().to_string())]));
        let job = test_job("failing-setup", &FAILING_SETUP, params);
        let ctx = test_context(dir.path());
        let record = run_once(&job, &ctx, &Arc::new(AtomicBool::new(false))).expect("a record");
        match &record.outcome {
            RunOutcome::Failed { reason } => {
                assert!(reason.contains("setup") && reason.contains("exit status 3"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
        assert!(mark.exists(), "cleanup did not run");
        // The scratch directory is removed whatever happened.
        assert_eq!(std::fs::read_dir(dir.path().join("scratch")).unwrap().count(), 0);
    }

    /// A program whose second setup step fails saying `stderr` on its first `failing` plans (a throwaway server's
    /// start on a port taken), marked to be tried again when it says "busy"; with `moving`, each plan's first step
    /// differs too.
    struct FailsFirst {
        failing: usize,
        stderr: &'static str,
        moving: bool,
        plans: std::sync::atomic::AtomicUsize,
    }

    impl Program for FailsFirst {
        fn name(&self) -> &'static str {
            "command"
        }
        fn binary(&self) -> &'static str {
            "sh"
        }
        fn install_hint(&self) -> &'static str {
            ""
        }
        fn params(&self) -> &'static [ParamSpec] {
            &[]
        }
        fn parser(&self) -> Option<&'static str> {
            None
        }
        fn plan(&self, _p: &Params, _ctx: &ProgramContext) -> Result<ProgramPlan, ProgramError> {
            let plan = self.plans.fetch_add(1, Ordering::SeqCst);
            let first = if self.moving { format!("echo plan {plan}") } else { "true".to_string() };
            let second = if plan < self.failing { format!("echo {} >&2; exit 1", self.stderr) } else { "true".into() };
            Ok(ProgramPlan {
                setup: vec![Invocation::shell(&first), Invocation::shell(&second)],
                main: Invocation::shell("true"),
                executions: 1,
                warmups: 0,
                cleanup: Vec::new(),
                retry: Some(SetupRetry { step: 1, when_stderr_has: "busy", tries: 3, why: "it was busy" }),
            })
        }
    }

    /// A run of a [`FailsFirst`]: its outcome, its stderr, and how many plans it made.
    fn run_failing_first(failing: usize, stderr: &'static str, moving: bool) -> (RunOutcome, String, usize) {
        let program: &'static FailsFirst = Box::leak(Box::new(FailsFirst {
            failing,
            stderr,
            moving,
            plans: std::sync::atomic::AtomicUsize::new(0),
        }));
        let dir = tempfile::tempdir().unwrap();
        let job = test_job("fails-first", program, Params::new("command", BTreeMap::new()));
        let record = run_once(&job, &test_context(dir.path()), &Arc::new(AtomicBool::new(false))).expect("a record");
        (record.outcome, record.stderr, program.plans.load(Ordering::SeqCst))
    }

    #[test]
    fn a_setup_step_marked_for_another_try_runs_again_from_a_new_plan_only_when_it_fails_so() {
        let (outcome, stderr, plans) = run_failing_first(2, "busy", false);
        assert_eq!((outcome, plans), (RunOutcome::Ok, 3), "{stderr}");
        assert!(stderr.contains("setup 'echo busy >&2; exit 1' failed on try 2 of 3 (it was busy), so it was tried"));
        let reason = |outcome: RunOutcome| match outcome {
            RunOutcome::Failed { reason } => reason,
            RunOutcome::Ok => panic!("the run passed"),
        };
        let (outcome, _, plans) = run_failing_first(3, "busy", false);
        assert_eq!(plans, 3);
        let said = "setup 'echo busy >&2; exit 1' failed: exit status 1 on try 3 of 3 (it was busy): busy";
        assert_eq!(reason(outcome), said);
        // Another failure is not tried again, and neither is a step whose new plan would not repeat the steps before.
        let (outcome, _, plans) = run_failing_first(1, "broken", false);
        let said = "setup 'echo broken >&2; exit 1' failed: exit status 1: broken";
        assert_eq!((reason(outcome).as_str(), plans), (said, 1));
        let (outcome, _, plans) = run_failing_first(1, "busy", true);
        assert_eq!(plans, 2);
        assert!(reason(outcome).ends_with("exit status 1 on try 1 of 3 (it was busy): busy"));
    }

    #[test]
    fn what_a_parser_left_out_of_an_output_is_kept_in_the_run_s_stderr() {
        let dir = tempfile::tempdir().unwrap();
        // A recorded fio report of two jobs apart (fio without --group_reporting).
        let recorded = concat!(env!("CARGO_MANIFEST_DIR"), "/../culprit-parse/tests/data/real/fio");
        let fio = Box::leak(Box::new(Prints {
            program: "fio",
            main: Invocation::new(["cat".to_string(), format!("{recorded}/randread-2-jobs-apart.json")]),
        }));
        let job = test_job("fio-jobs-apart", fio, Params::new("fio", BTreeMap::new()));
        let record = run_once(&job, &test_context(dir.path()), &Arc::new(AtomicBool::new(false))).expect("a record");
        assert_eq!(record.outcome, RunOutcome::Ok, "{}", record.stderr);
        assert!(record.metrics.contains_key("fio.read_iops"), "{:?}", record.metrics);
        let said = "culprit: fio output: the input: fio reported 2 jobs apart";
        assert!(record.stderr.contains(said), "{}", record.stderr);
    }

    #[test]
    fn monitor_failures_are_found_again_once_each_without_a_doubled_name() {
        let dir = tempfile::tempdir().unwrap();
        let program = crate::program::lookup("command").expect("the command program exists");
        let mut job = test_job(
            "monitor-failures",
            program,
            Params::new("command", BTreeMap::from([("cmd".to_string(), "true".to_string())])),
        );
        // One monitor that cannot be created, one that fails when it starts (freq 0 is checked in start).
        job.monitors = vec![
            ("no-such-monitor".to_string(), BTreeMap::new()),
            ("perf-profile".to_string(), BTreeMap::from([("freq".to_string(), "0".to_string())])),
        ];
        job.cwd = Some(dir.path().to_path_buf());
        let ctx = test_context(dir.path());
        let record = run_once(&job, &ctx, &Arc::new(AtomicBool::new(false))).expect("a record");
        assert!(record.outcome.is_ok(), "a monitor failure does not fail the run: {:?}", record.outcome);
        let failures = monitor_failures(&record);
        assert_eq!(failures.len(), 2, "{failures:?} in {}", record.stderr);
        assert!(failures[0].contains("no-such-monitor") && failures[0].ends_with("(not started)"), "{failures:?}");
        assert!(failures[1].starts_with("monitor perf-profile: ") && failures[1].contains("freq"), "{failures:?}");
        assert!(!record.stderr.contains("monitor perf-profile: monitor perf-profile"), "{}", record.stderr);
    }

    #[test]
    fn qa51_a_command_records_the_filesystem_it_runs_on_not_the_scratch_roots() {
        // The command runs in its working directory, on tmpfs here where the machine has one, while the scratch
        // root is on the temp dir's filesystem: the record names the working directory's.
        let shm = std::path::Path::new("/dev/shm");
        let cwd = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let program = crate::program::lookup("command").expect("the command program exists");
        let params = Params::new("command", BTreeMap::from([("cmd".to_string(), "touch here".to_string())]));
        let mut job = test_job("where", program, params);
        job.cwd = Some(cwd.path().to_path_buf());
        let ctx = test_context(scratch.path());
        let record = run_once(&job, &ctx, &Arc::new(AtomicBool::new(false))).expect("a record");
        assert!(record.outcome.is_ok(), "{:?}", record.outcome);
        assert!(cwd.path().join("here").is_file(), "the command ran in its working directory");
        let recorded = record.scratch.expect("a filesystem recorded");
        let canonical = std::fs::canonicalize(cwd.path()).unwrap();
        assert_eq!(recorded.path, canonical.to_string_lossy(), "{recorded:?}");
        let expected = crate::filesystem::filesystem_of(cwd.path()).unwrap();
        assert_eq!((&recorded.fs_type, &recorded.source), (&expected.fs_type, &expected.source));
    }

    #[test]
    fn a_reason_quoting_binary_garbage_shows_its_nul_bytes_and_the_stderr_keeps_them() {
        let dir = tempfile::tempdir().unwrap();
        let program = crate::program::lookup("command").expect("the command program exists");
        let cmd = r"printf 'before\0after\377\376 tail\0\n' >&2; exit 3";
        let params = Params::new("command", BTreeMap::from([("cmd".to_string(), cmd.to_string())]));
        let mut job = test_job("garbage", program, params);
        job.cwd = Some(dir.path().to_path_buf());
        let ctx = test_context(dir.path());
        let record = run_once(&job, &ctx, &Arc::new(AtomicBool::new(false))).expect("a record");
        let RunOutcome::Failed { reason } = &record.outcome else { panic!("{:?}", record.outcome) };
        // The bytes that are not UTF-8 read as U+FFFD, as the captured output does; each NUL as U+2400.
        assert!(reason.ends_with("exit status 3: before\u{2400}after\u{FFFD}\u{FFFD} tail\u{2400}"), "{reason:?}");
        assert!(record.stderr.contains("before\0after\u{FFFD}\u{FFFD} tail\0\n"), "{:?}", record.stderr);
    }

    #[test]
    fn a_failed_run_gives_the_last_line_of_the_benchmarks_stderr_as_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let program = crate::program::lookup("command").expect("the command program exists");
        let cmd = "echo progress >&2; echo 'fio: write failed: No space left on device' >&2; echo >&2; exit 1";
        let mut job =
            test_job("enospc", program, Params::new("command", BTreeMap::from([("cmd".to_string(), cmd.to_string())])));
        job.cwd = Some(dir.path().to_path_buf());
        let ctx = test_context(dir.path());
        let record = run_once(&job, &ctx, &Arc::new(AtomicBool::new(false))).expect("a record");
        match &record.outcome {
            RunOutcome::Failed { reason } => {
                assert!(reason.ends_with("exit status 1: fio: write failed: No space left on device"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(stderr_tail("", "true"), "");
        assert_eq!(stderr_tail(&"x".repeat(500), "true"), format!(": {}... (300 more characters)", "x".repeat(200)));
    }

    #[test]
    fn warm_up_executions_run_first_and_are_not_measured() {
        let dir = tempfile::tempdir().unwrap();
        let program = crate::program::lookup("command").expect("the command program exists");
        // Each execution appends a line and prints how many there are: the measured one sees the warm-ups' lines.
        let cmd = "echo x >> count; echo \"n: $(wc -l < count)\"";
        let job_with = |warmup: &str, cmd: &str| {
            let params = BTreeMap::from([
                ("cmd".to_string(), cmd.to_string()),
                ("warmup".to_string(), warmup.to_string()),
                ("executions".to_string(), "2".to_string()),
                ("capture.n".to_string(), "n: ([0-9]+)".to_string()),
            ]);
            let mut job = test_job("warm", program, Params::new("command", params));
            job.cwd = Some(dir.path().to_path_buf());
            job
        };
        let ctx = test_context(dir.path());
        let record = run_once(&job_with("3", cmd), &ctx, &Arc::new(AtomicBool::new(false))).expect("a record");
        assert!(record.outcome.is_ok(), "{:?}", record.outcome);
        // Executions 4 and 5 are measured: their mean count is 4.5, and only their output is kept.
        assert_eq!(record.metrics["command.n"], 4.5);
        assert_eq!(std::fs::read_to_string(dir.path().join("count")).unwrap().lines().count(), 5);
        // A warm-up that fails fails the run, and says it was a warm-up.
        let failing = "test -e count2 && exit 3; touch count2";
        let record = run_once(&job_with("2", failing), &ctx, &Arc::new(AtomicBool::new(false))).expect("a record");
        match &record.outcome {
            RunOutcome::Failed { reason } => assert!(reason.starts_with("warm-up execution 2 of "), "{reason}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_command_job_has_no_time_metrics_that_double_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let program = crate::program::lookup("command").expect("the command program exists");
        let params = Params::new("command", BTreeMap::from([("cmd".to_string(), "true".to_string())]));
        let mut job = test_job("twice", program, params);
        job.cwd = Some(dir.path().to_path_buf());
        let record = run_once(&job, &test_context(dir.path()), &Arc::new(AtomicBool::new(false))).expect("a record");
        assert!(record.outcome.is_ok(), "{:?}", record.outcome);
        // command.elapsed_time and the time monitor's elapsed time were the same number: one change counted twice
        // in every comparison. The time monitor's metrics without a twin stay, under lkp's `<program>.time.` name.
        for (own, twin) in [
            ("elapsed_time", "elapsed_time"),
            ("user_time", "user_time"),
            ("system_time", "system_time"),
            ("max_resident_set_size", "maximum_resident_set_size"),
        ] {
            assert!(record.metrics.contains_key(&format!("command.{own}")), "{:?}", record.metrics.keys());
            assert!(!record.metrics.contains_key(&format!("command.time.{twin}")), "{:?}", record.metrics.keys());
        }
        assert!(record.metrics.contains_key("command.time.minor_page_faults"), "{:?}", record.metrics.keys());
        assert!(!record.metrics.keys().any(|k| k.starts_with("time.")), "{:?}", record.metrics.keys());
    }

    /// lkp runs each benchmark under GNU `time -v` and its `programs/time/parse` names each line of that report:
    /// the label without its parenthesised notes, blanks as `_`, lower case (`Maximum resident set size (kbytes)`
    /// is `maximum_resident_set_size`). `tests/data/gnu-time-v.txt` is that report, recorded on this machine; every
    /// time monitor's metric of a run must be one of its names, after lkp's `<program>.time.` (QA 47: Culprit named
    /// them `time.*`, which no lkp stats hold). `time.max_resident_set_size` was not one.
    #[test]
    fn time_metrics_have_lkp_names() {
        let report = include_str!("../tests/data/gnu-time-v.txt");
        let lkp_names: Vec<String> = report
            .lines()
            .filter(|line| !line.contains("Command being timed: "))
            .filter_map(|line| line.split_once(": ").map(|(label, _)| label))
            .map(|label| {
                let mut name = String::new();
                let mut depth = 0;
                for c in label.trim_start().chars() {
                    match c {
                        '(' => depth += 1,
                        ')' => depth -= 1,
                        _ if depth == 0 => name.push(c),
                        _ => {}
                    }
                }
                name.split_whitespace().collect::<Vec<_>>().join("_").to_lowercase()
            })
            .collect();
        assert!(lkp_names.iter().any(|name| name == "elapsed_time"), "{lkp_names:?}");
        let usage = process::Usage {
            wall_secs: 2.0,
            user_secs: 1.5,
            sys_secs: 0.25,
            max_rss_kib: 1000,
            fs_inputs: 8,
            fs_outputs: 2048,
            ..Default::default()
        };
        let finished = Finished { exit: Exit::Code(0), stdout: String::new(), stderr: String::new(), usage };
        let mut metrics = BTreeMap::new();
        add_time_metrics(&[finished], "stress-ng", &mut metrics);
        assert!(metrics.len() >= 8, "{metrics:?}");
        for name in metrics.keys() {
            let key = name.strip_prefix("stress-ng.time.");
            let known = key.is_some_and(|key| lkp_names.iter().any(|lkp| lkp == key));
            assert!(known, "{name} is not a name of lkp's: {lkp_names:?}");
        }
        assert_eq!(metrics.get("stress-ng.time.maximum_resident_set_size"), Some(&1000.0));
        // GNU time's whole percent of (user + system) over wall time: 1.75 s of CPU in 2 s is 87%.
        assert_eq!(metrics.get("stress-ng.time.percent_of_cpu_this_job_got"), Some(&87.0));
        assert_eq!(metrics.get("stress-ng.time.file_system_inputs"), Some(&8.0));
        assert_eq!(metrics.get("stress-ng.time.file_system_outputs"), Some(&2048.0));
    }

    #[test]
    fn fio_raw_output_is_named_as_lkp_names_it() {
        // lkp's fio test writes fio.output, and its parser (and `culprit parse fio DIR`) reads that name.
        assert_eq!(crate::program::lookup("fio").map(|p| p.raw_output_name()).ok(), Some("fio.output"));
        assert_eq!(crate::program::lookup("hackbench").map(|p| p.raw_output_name()).ok(), Some("hackbench"));
    }

    #[test]
    fn a_long_command_line_is_quoted_once_and_shortened_in_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let program = crate::program::lookup("command").expect("the command program exists");
        // A 3,000-character word the shell cannot find: it echoes the word back in its error.
        let cmd = "a".repeat(3000);
        let mut job =
            test_job("long", program, Params::new("command", BTreeMap::from([("cmd".to_string(), cmd.clone())])));
        job.cwd = Some(dir.path().to_path_buf());
        let record = run_once(&job, &test_context(dir.path()), &Arc::new(AtomicBool::new(false))).expect("a record");
        let RunOutcome::Failed { reason } = &record.outcome else { panic!("{:?}", record.outcome) };
        assert!(
            reason.starts_with(&format!("'{}... (2800 more characters)' exit status 127: ", "a".repeat(200))),
            "{reason}"
        );
        assert!(reason.contains("[3000 characters of the command line]"), "{reason}");
        assert_eq!(reason.matches(&"a".repeat(200)).count(), 1, "the command is quoted once: {reason}");
        assert!(reason.chars().count() < 600, "{} characters: {reason}", reason.chars().count());
        // The stored stderr keeps the benchmark's words in full.
        assert!(record.stderr.contains(&cmd), "{}", record.stderr);
        // A long command line made of words keeps a short word the error repeats, and drops a long one.
        let words = format!("{} {}", "b".repeat(150), "c".repeat(300));
        assert_eq!(without_command("sh: 1: bbb: not found", &words), "sh: 1: bbb: not found");
        assert_eq!(
            without_command(&format!("x {} y", "c".repeat(300)), &words),
            "x [300 characters of the command line] y"
        );
        assert_eq!(without_command(&words, &words), "[451 characters of the command line]");
    }

    #[test]
    fn a_non_finite_metric_fails_the_run_naming_the_metric() {
        let metrics = BTreeMap::from([("x.ok".to_string(), 1.0), ("x.throughput".to_string(), f64::INFINITY)]);
        let reason = finite_metrics("x", metrics).err().unwrap_or_default();
        assert!(reason.starts_with("x.throughput: ") && reason.contains("not a finite number"), "{reason}");
        let nan = BTreeMap::from([("x.rate".to_string(), f64::NAN)]);
        assert!(finite_metrics("x", nan).is_err_and(|r| r.contains("x.rate") && r.contains("NaN")));
        let fine = BTreeMap::from([("x.zero".to_string(), 0.0)]);
        assert_eq!(finite_metrics("x", fine.clone()), Ok(fine));
    }

    /// A program whose one execution, `main`, prints an output of `program`'s, read by that program's real parser.
    struct Prints {
        program: &'static str,
        main: Invocation,
    }

    impl Program for Prints {
        fn name(&self) -> &'static str {
            self.program
        }
        fn binary(&self) -> &'static str {
            "sh"
        }
        fn install_hint(&self) -> &'static str {
            ""
        }
        fn params(&self) -> &'static [ParamSpec] {
            &[]
        }
        fn parser(&self) -> Option<&'static str> {
            Some(self.program)
        }
        fn plan(&self, _p: &Params, _ctx: &ProgramContext) -> Result<ProgramPlan, ProgramError> {
            Ok(ProgramPlan {
                setup: Vec::new(),
                main: self.main.clone(),
                executions: 1,
                warmups: 0,
                cleanup: Vec::new(),
                retry: None,
            })
        }
    }

    #[test]
    fn hackbench_zero_time_is_a_failed_run() {
        let dir = tempfile::tempdir().unwrap();
        // hackbench's output with `Time: 0`: the stored run is a failed one naming the line instead of an ok one
        // with an infinite throughput.
        let output = "Running in process mode with 2 groups using 40 file descriptors each (== 80 tasks)\n\
                      Each sender will pass 2000 messages of 100 bytes\nTime: 0\n";
        let hackbench = Box::leak(Box::new(Prints {
            program: "hackbench",
            main: Invocation::new(["printf".to_string(), "%s".to_string(), output.to_string()]),
        }));
        let job = test_job("zero-time", hackbench, Params::new("hackbench", BTreeMap::new()));
        let record = run_once(&job, &test_context(dir.path()), &Arc::new(AtomicBool::new(false))).expect("a record");
        match &record.outcome {
            RunOutcome::Failed { reason } => assert!(reason.contains("line 3") && reason.contains("Time:"), "{reason}"),
            other => panic!("{other:?}"),
        }
        assert!(record.metrics.values().all(|v| v.is_finite()), "{:?}", record.metrics);
    }

    #[test]
    fn every_monitor_error_text_is_recognised_as_a_monitor_failure() {
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let errors = [
            monitor::MonitorError::Unknown { name: "x".into(), known: "vmstat".into() },
            monitor::MonitorError::Read { monitor: "vmstat", path: "/proc/stat".into(), source: io() },
            monitor::MonitorError::Failed { monitor: "perf-stat", detail: "d".into() },
            monitor::MonitorError::MissingProgram {
                monitor: "perf-stat",
                program: "perf",
                package: "linux-perf",
                detail: "d".into(),
            },
            monitor::MonitorError::BadOption { monitor: "perf-profile", option: "freq".into(), accepted: "a".into() },
        ];
        for error in errors {
            let record = RunRecord {
                job_id: String::new(),
                job_name: String::new(),
                testcase: String::new(),
                params: Vec::new(),
                job_yaml: String::new(),
                revision: Revision::Label { name: "x".into() },
                machine: crate::machine::this_machine(),
                started_at: 0.0,
                ended_at: 0.0,
                outcome: RunOutcome::Ok,
                exit_code: None,
                metrics: BTreeMap::new(),
                monitors: Vec::new(),
                raw_outputs: Vec::new(),
                stderr: format!("benchmark noise\n{NOTE_PREFIX}{error}\n"),
                scratch: None,
            };
            assert_eq!(monitor_failures(&record), vec![error.to_string().as_str()]);
        }
    }
}
