//! `culprit bisect`: from a good and a bad commit to the culprit(s), with real builds and runs in worktrees.
//!
//! The plan is validated first (repository, range, job, binaries). Then good and bad are probed (built, run
//! interleaved) to measure what a build and a run cost and, without `--metric`, to pick the metric that changed
//! most significantly. Only then is the session created, with everything needed to resume it. With `--metric` the
//! probe runs become its first samples; runs that chose the metric would bias its test, so they do not. From there
//! the state machine in `culprit_core::bisect` decides and the driver in `culprit_run::bisect` does the work.

use crate::cli::{BisectAction, BisectArgs, StepTimeoutArgs, TimedCommandArgs};
use crate::cmd::run::{interrupt_flag, plan_text};
use crate::output;
use anyhow::{bail, Context, Result};
use culprit_core::bisect::{Bisect, BisectConfig, Direction as BisectDirection, Estimate, Outcome, Sample, Status};
use culprit_core::compare::direction::{direction_of, Direction};
use culprit_core::compare::{compare, printf, Column, CompareOptions, Comparison};
use culprit_core::model::{abbreviate, MetricClass, Revision, RunRecord};
use culprit_core::report::confidence_words;
use culprit_core::stats::steady_change;
use culprit_core::words::counted;
use culprit_run::bisect::{
    commit_nodes, mean_or, sample_of, Driver, DriverError, Ended, Event, SessionConfig, StepTimeouts,
    DEFAULT_RUN_TIMEOUT, LIVE_WORKTREES,
};
use culprit_run::executor::{JobRun, RunContext};
use culprit_run::git::{self, RangeCommit};
use culprit_run::machine;
use culprit_run::worktree::Worktrees;
use culprit_store::{
    BisectCommit, BisectSession, NewBisectSession, RunFilter, RunId, RunKind, SessionId, Store, NEW_SESSION_STATUS,
};
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Runs per side when probing good and bad: one measures costs; three let the metric be chosen.
const PROBE_RUNS_WITH_METRIC: usize = 1;
const PROBE_RUNS_CHOOSING_METRIC: usize = 3;

pub fn run(store: &mut dyn Store, args: &BisectArgs) -> Result<ExitCode> {
    match &args.action {
        Some(BisectAction::Log { id, json }) => {
            return log(store, SessionId(*id), *json).map_err(with_list_hint);
        }
        Some(BisectAction::List { machine, json }) => return list(store, machine.as_deref(), *json),
        Some(BisectAction::Forget { ids, force }) => return forget(store, ids, *force),
        None => {}
    }
    if let Some(id) = args.resume {
        return resume(store, SessionId(id), args, false);
    }
    start(store, args)
}

/// A `command` job for `--run CMD` (with `--warmup N`), as YAML.
pub(crate) fn command_job_yaml(command_line: &str, warmup: Option<u32>) -> String {
    let mut cmd = serde_yaml::Mapping::new();
    cmd.insert("cmd".into(), command_line.into());
    if let Some(n) = warmup {
        cmd.insert("warmup".into(), n.into());
    }
    let mut job = serde_yaml::Mapping::new();
    job.insert("suite".into(), "command".into());
    job.insert("testcase".into(), "bisect-run".into());
    job.insert("command".into(), serde_yaml::Value::Mapping(cmd));
    serde_yaml::to_string(&job).unwrap_or_default()
}

/// The benchmark of a bisect, check or try-fix from `--job FILE` or `--run CMD [--warmup N]`: the job's YAML (with
/// lkp's includes pasted in, so that the session keeps the whole job), where it came from (for messages), and the
/// metric `--run` implies (its elapsed time).
pub(crate) fn benchmark_job(
    job: Option<&Path>,
    command: &TimedCommandArgs,
) -> Result<(String, String, Option<String>)> {
    let (run, warmup) = (command.run.as_deref(), command.warmup);
    match (job, run) {
        (_, Some(cmd)) => {
            let source = match warmup {
                Some(n) => format!("--run {cmd} --warmup {n}"),
                None => format!("--run {cmd}"),
            };
            Ok((command_job_yaml(cmd, warmup), source, Some("command.elapsed_time".to_string())))
        }
        // clap does not enforce `requires = "run"` when --job, which conflicts with --run, is given.
        (Some(path), None) if warmup.is_some() => bail!(
            "--warmup goes with --run: a job file ({}) sets its own warm-up, as `warmup: N` under `command:`",
            path.display()
        ),
        (Some(path), None) => Ok((crate::job_file::read_whole(path)?, job_source(path), None)),
        (None, None) => bail!("give the benchmark: --job FILE or --run CMD"),
    }
}

/// How a job file given on the command line is named where it outlives the command (a session's `job` line, the
/// job's `job_origin` and `#!` line in the job file written next to a report): its absolute path. The path as typed
/// (`../job.yaml`) was relative to the directory of the cron job or shell that gave it, meaningless to a mail's
/// reader and to the dashboard (QA 45b).
pub(crate) fn job_source(path: &Path) -> String {
    crate::cmd::absolute_path(path).display().to_string()
}

/// The name a `--run CMD` job's file gets, whose stem starts the job's name: the command's program, without its
/// directories (`--run './bench --size 4/8'` is `bench`, `--run 'make -C src test'` is `make`), past any leading
/// `VAR=value` words. The source text itself named the job after whatever followed its last `/` (`8`), or after the
/// whole `--run make -C src test` when it had none.
fn run_job_file_name(command_line: &str) -> String {
    let program = command_line.split_whitespace().find(|word| !word.contains('=')).unwrap_or_default();
    let base = program.rsplit('/').next().unwrap_or_default();
    let safe: String = base.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')).collect();
    let stem = safe.trim_start_matches(['.', '-']);
    if stem.is_empty() {
        "command".to_string()
    } else {
        stem.to_string()
    }
}

/// The one atomic job a bisect (and `check`, `try-fix`, `track --follow`, which share this) runs at every commit.
pub(crate) fn plan_job(yaml: &str, source: &str, repo: &Path) -> Result<JobRun> {
    let nr_cpu = machine::nr_cpu();
    let jobs = match source.strip_prefix("--run ") {
        Some(command_line) => plan_text(yaml, &run_job_file_name(command_line), nr_cpu, None, repo)
            .with_context(|| source.to_string())?,
        None => plan_text(yaml, source, nr_cpu, None, repo)?,
    };
    let mut job = match jobs.len() {
        1 => jobs.into_iter().next().map(|j| j.run).context("no job")?,
        0 => bail!("{source}: the job expands to no atomic job"),
        // Said of every command that measures one job per commit, not only of a bisect.
        n => bail!(
            "{source}: the job expands to {n} atomic jobs, and one is measured at each commit: write them out with \
             `culprit split {source}` and pass one"
        ),
    };
    if job.timeout.is_none() {
        job.timeout = Some(DEFAULT_RUN_TIMEOUT);
    }
    Ok(job)
}

pub(crate) fn worktree_root(repo: &Path, tag: &str) -> PathBuf {
    culprit_dir(repo).join(tag)
}

/// Where culprit keeps a repository's worktrees, locks and step records: `culprit` in its git directory, so that
/// worktrees never show up as untracked files of the user's checkout. A linked worktree's `.git` (and a submodule's)
/// is a file naming a git directory elsewhere, and creating `.git/culprit` under it failed ("Not a directory"), so a
/// bisect or check of a linked worktree could not start: there, git names the directory the repository's worktrees
/// share. A repository git cannot read (moved away since a session started) keeps the plain `.git/culprit` path.
pub(crate) fn culprit_dir(repo: &Path) -> PathBuf {
    let dot_git = repo.join(".git");
    if dot_git.is_dir() {
        return dot_git.join("culprit");
    }
    match git::git(repo, &["rev-parse", "--path-format=absolute", "--git-common-dir"]) {
        Ok(dir) if !dir.is_empty() => PathBuf::from(dir).join("culprit"),
        _ => dot_git.join("culprit"),
    }
}

/// This process's worktree root `<prefix>-<pid>` in `repo`, after removing the roots of gone processes with the same
/// prefix: a process removes its own when it ends, but one killed with kill -9 runs no cleanup, and its worktrees (a
/// build each) would stay for good.
pub(crate) fn process_worktree_root(repo: &Path, prefix: &str) -> PathBuf {
    let culprit_dir = worktree_root(repo, "");
    // A dead culprit's build may still run in the worktrees about to go, and then ran on in a deleted directory under
    // this process's runs: its record is read only by the same work taken up again, and a bisect killed and started
    // again with another --build is other work (QA 48, defect 4). So every dead culprit's leftover goes first.
    reap_steps_left_by_dead_culprits(&culprit_dir);
    Worktrees::discard_orphans(repo, &culprit_dir, prefix);
    worktree_root(repo, &format!("{prefix}-{}", std::process::id()))
}

/// Where `session` of `store` keeps its worktrees in `repo`, and beside them its lock and step record. The name
/// carries a tag of the store as well as the session's id: every store numbers its sessions from 1, and two stores'
/// sessions 1 of one repository (`./culprit.db` in two directories) shared a lock, so the second one was refused
/// after its probe as "being driven by another culprit", and `bisect list` of either read the other's lock.
fn session_root(store: &dyn Store, repo: &Path, session: SessionId) -> PathBuf {
    let tag = crate::lock::stable_hash(&[&canonical_store_location(store)]) as u32;
    worktree_root(repo, &format!("session-{tag:08x}-{session}"))
}

/// The store's location with a file path made absolute, so that `./culprit.db` from two directories reads as two
/// stores and one store reached by two paths as one.
fn canonical_store_location(store: &dyn Store) -> String {
    let location = store.location();
    std::fs::canonicalize(&location).map_or(location, |path| path.display().to_string())
}

/// How a start lock's holder names its store after its process id (see [`crate::lock::LockFile::say`]).
const STORE_WORD: &str = "store ";

/// What a bisect refused by the start lock's `holder` should do, where `our_store` is its own store: let it finish,
/// and find its session in the holder's store, which is not always this one.
fn where_the_holder_is(holder: &str, our_store: &str) -> String {
    let holder_store = holder.split_once(&format!(", {STORE_WORD}")).map(|(_, store)| store.trim());
    match holder_store {
        Some(other) if other != our_store => format!(
            "its session is in another store ({other}: `culprit --db {other} bisect list` shows it). One machine \
             runs one bisect of a range at a time, since two at once would disturb each other's runs; let it \
             finish, or stop it, then start this one again"
        ),
        _ => "let it finish (`culprit bisect list` shows its session)".to_string(),
    }
}

/// The context of the benchmark runs of bisect, check, try-fix and follow, whose files go under `scratch` (their
/// `--scratch`, as `culprit run` takes it; the default root under the system temp dir when `None`). Their commands
/// call it after they have reaped what a killed culprit left running, so it also removes the scratch directories
/// such a culprit left in the scratch root their runs share (see [`remove_scratch_left_by_killed_runs`]).
pub(crate) fn run_context(scratch: Option<&Path>) -> Result<RunContext> {
    let scratch_root = crate::cmd::run::scratch_root(scratch)?;
    remove_scratch_left_by_killed_runs(&scratch_root);
    Ok(RunContext {
        revision: culprit_core::model::Revision::Label { name: String::new() },
        machine: machine::this_machine(),
        interval: Duration::from_secs(1),
        scratch_root,
        step_record: None,
    })
}

/// `--scratch DIR` as a session keeps it: absolute, so that a resume from another directory (or `track --follow`'s
/// cron job) and the report's reproduce steps name the same directory. `None` when not given.
pub(crate) fn absolute_scratch(given: Option<&Path>) -> Result<Option<PathBuf>> {
    given
        .map(|dir| {
            std::path::absolute(dir).with_context(|| format!("--scratch {}: cannot make it absolute", dir.display()))
        })
        .transpose()
}

/// `--scratch DIR` as bisect, check and try-fix keep it ([`absolute_scratch`]), tried before anything is built or
/// measured ([`crate::cmd::run::scratch_root`]): a directory that cannot be written in stops the command here, not at
/// its first run. `None` when not given (the default root, which is tried too).
pub(crate) fn validated_scratch(given: Option<&Path>) -> Result<Option<PathBuf>> {
    let scratch = absolute_scratch(given)?;
    crate::cmd::run::scratch_root(scratch.as_deref())?;
    Ok(scratch)
}

/// Which way is worse for the metric, from the direction table.
pub(crate) fn bisect_direction(metric: &str) -> BisectDirection {
    match direction_of(metric) {
        Direction::HigherIsBetter => BisectDirection::LowerIsWorse,
        Direction::LowerIsBetter => BisectDirection::HigherIsWorse,
        Direction::Unknown => BisectDirection::Any,
    }
}

/// The direction of the change a bisect searches for: the metric's worse direction for a regression, the other one
/// for an improvement (`--improvement`), since the engine looks for the commit after which bad differs from good
/// that way. A metric of unknown direction is searched both ways either way.
pub(crate) fn searched_direction(metric: &str, improvement: bool) -> BisectDirection {
    match (bisect_direction(metric), improvement) {
        (BisectDirection::HigherIsWorse, true) => BisectDirection::LowerIsWorse,
        (BisectDirection::LowerIsWorse, true) => BisectDirection::HigherIsWorse,
        (direction, _) => direction,
    }
}

/// The metric a bisect or check measures when none is named: chosen from the good and bad probe runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChosenMetric {
    pub name: String,
    /// How many metrics it was chosen among (a test of the chosen one on the same runs must allow for the choice).
    pub candidates: usize,
    /// Whether its change was significant in the probe runs; when none was, it is only the closest to one.
    pub significant: bool,
}

/// Whether `metric` is the time monitor's wall time of the run, lkp's `<program>.time.elapsed_time` (or the bare
/// `time.elapsed_time` Culprit named it before QA 47): beside the program's own metrics, a bisect's candidate.
fn is_wall_time(metric: &str) -> bool {
    culprit_core::model::time_field(metric) == Some("elapsed_time")
}

/// The program metric that changed most significantly between the good and bad probe runs.
pub(crate) fn choose_metric(good: &[RunRecord], bad: &[RunRecord]) -> Result<ChosenMetric> {
    let column = |label: &str, runs: &[RunRecord]| {
        let mut c = Column::new(label);
        for r in runs.iter().filter(|r| r.outcome.is_ok()) {
            for (k, v) in &r.metrics {
                if MetricClass::of(k) == MetricClass::Program || is_wall_time(k) {
                    c.metrics.entry(k.clone()).or_default().push(*v);
                }
            }
        }
        c.failed_runs = runs.iter().filter(|r| !r.outcome.is_ok()).count();
        c
    };
    let (g, b) = (column("good", good), column("bad", bad));
    if g.ok_runs() == 0 || b.ok_runs() == 0 {
        let reasons: Vec<String> = good
            .iter()
            .chain(bad)
            .filter_map(|r| match &r.outcome {
                culprit_core::model::RunOutcome::Failed { reason } => Some(reason.clone()),
                _ => None,
            })
            .collect();
        bail!(
            "the job did not run successfully at good or at bad, so there is nothing to bisect: {}",
            reasons.join("; ")
        );
    }
    // A number that is one value at good and another at bad in every run has changed as surely as runs can show,
    // though the comparison's test, with no variance to weigh it against, calls it not significant (QA 48: a size
    // that went 15960 -> 15992 in every run was chosen as "the closest to a change").
    let steady: Vec<String> = g
        .metrics
        .iter()
        .filter(|(name, values)| b.metrics.get(*name).is_some_and(|other| steady_change(values, other)))
        .map(|(name, _)| name.clone())
        .collect();
    let result = compare(&Comparison::new(vec![g, b]), &CompareOptions::default())?;
    // The job's primary metrics, as `track --follow` follows them: its KPIs, else a command's wall time.
    let names: Vec<&str> = result.rows.iter().map(|row| row.metric.as_str()).collect();
    let primary: Vec<String> =
        culprit_core::report::primary_metrics(names.iter().copied()).into_iter().map(str::to_string).collect();
    // Prefer a significant change of a primary metric (the issue's "most significant KPI change": fio.write_iops
    // rather than fio.workload, which moves with it, or a command's captured number over its times; a command
    // without a capture: its wall time, which a run of 3 a side once lost to a 7% move of its peak memory that
    // happened to vary less, and the bisect of a 30% slowdown ended "not reproduced"), then the smallest q, then
    // the largest effect among program metrics.
    let mut best: Option<(bool, bool, f64, f64, f64, String)> = None;
    let mut candidates = 0;
    for row in &result.rows {
        let Some(change) = row.changes.first() else { continue };
        // The columns hold the program metrics and the time monitor's wall time; of those, the benchmark's own
        // and that wall time are candidates, not Culprit's rows (the count of failed runs every comparison has).
        if !row.class.is_benchmarks_own(&row.metric) && !is_wall_time(&row.metric) {
            continue;
        }
        candidates += 1;
        let steady_changed = steady.contains(&row.metric);
        let significant = change.verdict.is_change() || steady_changed;
        let q = if steady_changed { 0.0 } else { change.q.unwrap_or(1.0) };
        let effect = change.effect_size.map(f64::abs).unwrap_or(0.0);
        // A primary metric is preferred only among significant changes: when nothing is significant yet (3 runs a
        // side), the smallest q decides, or a KPI that did not move at all (a constant capture) would beat a 30%
        // slowdown.
        let kpi = significant && primary.contains(&row.metric);
        // The size of the change breaks ties last (two runs a side have no q and no effect size yet).
        // A side without samples has a NaN change, which must not win or block a comparison of tuples.
        let size = if change.change.is_nan() { 0.0 } else { change.change.abs() };
        let key = (significant, kpi, -q, effect, size, row.metric.clone());
        let better = match &best {
            None => true,
            Some(b) => (key.0, key.1, key.2, key.3, key.4) > (b.0, b.1, b.2, b.3, b.4),
        };
        if better {
            best = Some(key);
        }
    }
    best.map(|b| ChosenMetric { name: b.5, candidates, significant: b.0 })
        .context("the job produced no program metric to bisect; name one with --metric")
}

pub(crate) fn progress_bar() -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// The monitors whose failure a bisect's output said: a perf that fails every run is said once, at its first run,
/// though the probing of good and bad and the session that follows watch their runs with observers of their own.
static MONITORS_TOLD: std::sync::Mutex<std::collections::BTreeSet<String>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// The estimate of what a bisect still needs, as the progress line says it: "about 40 runs and 3 builds left if one
/// commit explains it, ~6 min" (builds only while some are left, the time once runs were measured; the condition
/// because [`culprit_core::bisect::estimate_left`] assumes it, and several contributors take longer), or that there
/// is no basis yet.
pub(crate) fn estimate_text(left: Estimate, seconds: Option<f64>) -> String {
    let (runs, builds) = match left {
        Estimate::NotConfirmed => return "estimate after the regression is confirmed".to_string(),
        Estimate::Done => return "done".to_string(),
        Estimate::Left { runs, builds } => (runs, builds),
    };
    let builds = if builds > 0 { format!(" and {}", counted(builds, "build")) } else { String::new() };
    let time = seconds.map(|s| format!(", ~{}", rough_duration(s))).unwrap_or_default();
    format!("about {runs} runs{builds} left if one commit explains it{time}")
}

/// Seconds in the unit a person plans with: "40s", "6 min", "2.5 h".
fn rough_duration(seconds: f64) -> String {
    if seconds < 90.0 {
        format!("{:.0}s", seconds.max(0.0))
    } else if seconds < 90.0 * 60.0 {
        format!("{:.0} min", seconds / 60.0)
    } else {
        format!("{:.1} h", seconds / 3600.0)
    }
}

pub(crate) fn observer(bar: &ProgressBar) -> impl FnMut(Event<'_>) + '_ {
    // Runs of the session so far (a continued session's stored ones included).
    let mut last_runs = 0usize;
    move |event| match event {
        Event::Building { commit } => bar.set_message(format!("building {} {}", &commit.sha[..10], commit.subject)),
        Event::Built { commit, seconds } => bar.set_message(format!("built {} in {seconds:.1}s", &commit.sha[..10])),
        Event::StepFailed { commit, step, reason, timed_out } => bar.suspend(|| {
            if timed_out {
                crate::note!("culprit: {reason}; the commit is untestable, skipped")
            } else {
                crate::note!("culprit: {step} of {} failed: the commit is untestable", &commit.sha[..10])
            }
        }),
        // A benchmark run that failed or was killed at its timeout was said nowhere but in the log, where a failed
        // build was said at once (QA 59).
        Event::RunFailed { commit, reason, again } => bar.suspend(|| {
            // The stored reason begins with the whole command; what happened is said in a few words here.
            let timed_out = reason.contains("killed after the job's timeout");
            let how = if timed_out { " (killed at the job's timeout)" } else { "" };
            let then = if again { "it is tried again" } else { "the commit's run is untestable" };
            crate::note!(
                "culprit: a run of {} failed{how}; {then} (`culprit results --failures` gives the reason)",
                &commit.sha[..10]
            )
        }),
        Event::Running { commit, batch_left, left, seconds_left } => bar.set_message(format!(
            "{} runs so far; running {} {} ({} left in this batch); {}",
            last_runs,
            &commit.sha[..10],
            commit.subject,
            batch_left,
            estimate_text(left, seconds_left)
        )),
        Event::Ran { runs, .. } => last_runs = runs,
        Event::MonitorFailed { commit, run, failure } => {
            let monitor = failure.split(':').next().unwrap_or(failure);
            if MONITORS_TOLD.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(monitor.to_string()) {
                bar.suspend(|| {
                    crate::note!(
                        "culprit: run {} at {}: {failure}; the run is kept without that monitor's data (`culprit \
                         results --run {}`; said once per monitor)",
                        run.0,
                        &commit.sha[..10],
                        run.0
                    )
                });
            }
        }
    }
}

/// The fewest runs a bisect can do anything with: the regression is confirmed from interleaved runs at good and bad
/// first, four a side before the first test.
const MIN_BISECT_RUNS: usize = 8;

/// The metrics the successful runs have, for a message naming what could have been meant: the listing every
/// "no such metric" message uses ([`crate::cmd::compare::some_metric_names`], program metrics first).
pub(crate) fn available_metrics<'r>(records: impl IntoIterator<Item = &'r RunRecord>) -> String {
    let names: std::collections::BTreeSet<String> =
        records.into_iter().filter(|r| r.outcome.is_ok()).flat_map(|r| r.metrics.keys().cloned()).collect();
    crate::cmd::compare::some_metric_names(&names)
}

/// The reason of the first failed run among `runs`, for a message on why an end could not be measured.
fn first_failure<'r>(runs: impl IntoIterator<Item = &'r RunRecord>) -> String {
    runs.into_iter()
        .find_map(|r| match &r.outcome {
            culprit_core::model::RunOutcome::Failed { reason } => Some(reason.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The lock a new bisect holds from its start to its end, named by a hash of what makes two bisects the same (the
/// range, the job and the commands), in the repository's culprit directory.
fn start_lock_path(repo: &Path, identity: &[String]) -> PathBuf {
    let hash = crate::lock::stable_hash(&identity.iter().map(String::as_str).collect::<Vec<_>>());
    worktree_root(repo, &format!("start-{hash:016x}")).with_extension("lock")
}

/// What makes two bisects the same, hashed into the start lock's name: the range, the job, the commands, and whether
/// an improvement is searched for. The improvement's mark is added only when set, so a regression's bisect keeps the
/// lock name it had before the flag existed (a stopped session's leftover lock file is still found on resume).
fn start_identity(
    good: &str,
    bad: &str,
    other_goods: &[String],
    job_id: &str,
    build: &Option<String>,
    deploy: &Option<String>,
    improvement: bool,
) -> Vec<String> {
    let mut identity = vec![good.to_string(), bad.to_string(), job_id.to_string(), opt(build), opt(deploy)];
    if improvement {
        identity.push("improvement".to_string());
    }
    // Added only when there are any, for the same reason: a bisect of one good keeps its lock's name.
    identity.extend(other_goods.iter().map(|sha| format!("good={sha}")));
    identity
}

/// Says that good `given` (`sha`) is not an ancestor of `bad`, so that its merge base(s) with bad stand for it, as
/// `git bisect` takes them; `measured`: the bisect measures a merge base as its good end (the first good's), and a
/// bisect that then ends not reproduced means what git bisect's "the merge base is bad" means.
fn say_merge_bases(given: &str, sha: &str, bases: &[String], bad: &str, measured: bool) {
    let list: Vec<&str> = bases.iter().map(|b| &b[..b.len().min(12)]).collect();
    let (base, is) = if bases.len() == 1 { ("merge base", "is") } else { ("merge bases", "are") };
    let mut text = format!(
        "culprit: good {given} ({}) is not an ancestor of bad {bad}: as git bisect does, the bisect takes their {base} \
         {} as good, and the commits of good's own branch are no candidates (`git rev-list {bad} ^{given}`)",
        &sha[..sha.len().min(12)],
        list.join(", ")
    );
    if measured {
        text += &format!(
            "; the {base} {is} measured as good: if the bisect ends not reproduced, the change is older than the \
             {base} and good's branch fixed it since (give a good commit of bad's history to bisect the change itself)"
        );
    }
    crate::note!("{text}");
}

/// Kills the build or deploy that a culprit killed with `kill -9` left running, recorded at `record` (see
/// `culprit_run::step_record`), and says so in one line. Called by the process that takes up the work the record
/// belongs to, holding its lock, before it builds anything: the leftover would otherwise run on beside the new
/// builds and runs for good (a hung build) or until it ends, loading the machine the runs measure.
pub(crate) fn reap_leftover_step(record: &Path) {
    use culprit_run::step_record::Reaped;
    match culprit_run::step_record::reap(record) {
        Ok(None) => {}
        Ok(Some(Reaped { recorded: r, gone })) => {
            let what = format!(
                "process group {}, the {} of {} that culprit process {} left running when it died",
                r.pgid,
                r.step,
                &r.commit[..r.commit.len().min(12)],
                r.culprit_pid
            );
            if gone {
                crate::note!("culprit: killed {what}");
            } else {
                crate::note!("culprit: could not kill {what}; it still runs after SIGKILL (kill -KILL -{})", r.pgid);
            }
        }
        // A record that cannot be read or removed stops nothing: at worst a leftover step runs on, as before.
        Err(e) => crate::note!("culprit: cannot check {} for a step left running: {e}", record.display()),
    }
}

/// [`reap_leftover_step`] for every step record (`*.step`) in `dir`, a repository's culprit directory, whatever work
/// it belongs to: a record whose culprit still runs is left alone (see `culprit_run::step_record::reap`), and one
/// whose culprit died names a build or benchmark nothing will ever stop but this.
pub(crate) fn reap_steps_left_by_dead_culprits(dir: &Path) {
    reap_step_records_named(dir, |name| name.ends_with(".step"));
}

/// [`reap_leftover_step`] for every `<prefix>-<pid>.step` record in `dir`: the records of a command that keeps one
/// per process (`try-fix`, `culprit run`), since several may run at once. A live process's record is left alone.
pub(crate) fn reap_leftover_steps_of_processes(dir: &Path, prefix: &str) {
    reap_step_records_named(dir, |name| {
        let pid = name.strip_prefix(prefix).and_then(|rest| rest.strip_prefix('-')?.strip_suffix(".step"));
        pid.is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
    });
}

/// [`reap_leftover_step`] for every file in `dir` whose name `wanted` accepts.
fn reap_step_records_named(dir: &Path, wanted: impl Fn(&str) -> bool) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if wanted(&entry.file_name().to_string_lossy()) && path.is_file() {
            reap_leftover_step(&path);
        }
    }
}

/// Removes the scratch directories under `root` that runs of a culprit killed with `kill -9` left (a throwaway
/// PostgreSQL data directory, gigabytes of fio files), and says so, one line each; see `culprit_run::scratch` for
/// how a live culprit's directory is told apart. Called after the leftover steps are reaped, since a directory whose
/// benchmark still runs is kept.
pub(crate) fn remove_scratch_left_by_killed_runs(root: &Path) {
    for removed in culprit_run::scratch::remove_left_by_dead_runs(root) {
        crate::note!(
            "culprit: removed the scratch directory {} left by a killed run (culprit process {})",
            removed.path.display(),
            removed.culprit_pid
        );
    }
}

/// The probe runs of good and bad a new bisect has taken so far, listed beside its start lock until its session is
/// stored: the runs are stored as they finish, but before the session exists nothing else says they were this
/// command's, and a culprit killed while probing (a build and a boot per run, for a kernel) lost every one of them,
/// though the same command again is said to continue from its stored runs. The list is removed when this value is
/// dropped (the session stored, or the probe ended in an error), and kept by a process that dies or is interrupted.
struct ProbeLog {
    path: PathBuf,
    keep: bool,
}

impl ProbeLog {
    /// The probe runs an earlier process of this command listed that `store` holds as runs of job `job_id`, in the
    /// order it took them, and the seconds of the builds it measured. Anything unreadable reads as no run.
    fn read(&self, store: &dyn Store, job_id: &str) -> (std::collections::VecDeque<(RunId, RunRecord)>, Vec<f64>) {
        let (mut runs, mut builds) = (std::collections::VecDeque::new(), Vec::new());
        let text = std::fs::read_to_string(&self.path).unwrap_or_default();
        for line in text.lines() {
            match line.split_once(' ') {
                Some(("run", id)) => {
                    let Ok(id) = id.parse().map(RunId) else { break };
                    match store.run(id) {
                        Ok(record) if record.job_id == job_id => runs.push_back((id, record)),
                        _ => break,
                    }
                }
                Some(("build", seconds)) => builds.extend(seconds.parse::<f64>().ok().filter(|s| s.is_finite())),
                _ => break,
            }
        }
        (runs, builds)
    }

    /// Lists `ids` and the `builds`' seconds, replacing the list at once (a process killed while writing leaves the
    /// old one). A list that cannot be written costs only the continuation after a kill, so it is not an error.
    fn write(&self, ids: &[RunId], builds: &[f64]) {
        let mut text: String = ids.iter().map(|id| format!("run {}\n", id.0)).collect();
        text.extend(builds.iter().map(|seconds| format!("build {seconds}\n")));
        let partial = self.path.with_extension("probes-new");
        if std::fs::write(&partial, text).is_ok() {
            let _ = std::fs::rename(&partial, &self.path);
        }
    }

    /// Leaves the list for the same command to continue from (an interrupted probe).
    fn keep_for_the_same_command(mut self) {
        self.keep = true;
    }
}

impl Drop for ProbeLog {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn opt(command: &Option<String>) -> String {
    command.as_ref().map_or_else(String::new, |c| format!("={c}"))
}

fn start(store: &mut dyn Store, args: &BisectArgs) -> Result<ExitCode> {
    let started = Instant::now();
    if args.max_runs < MIN_BISECT_RUNS {
        bail!(
            "--max-runs {} is too few: a bisect first confirms the regression with {MIN_BISECT_RUNS} interleaved runs at good and bad",
            args.max_runs
        );
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let repo = git::toplevel(args.repo.as_deref().unwrap_or(&cwd))?;
    let (goods, bad) = match (args.good.as_slice(), &args.bad) {
        (goods @ [_, ..], Some(b)) => (goods.iter().map(String::as_str).collect::<Vec<_>>(), b.as_str()),
        _ => bail!("--good and --bad are required"),
    };
    let (range, ends) = git::bisect_range_of(&repo, &goods, bad)?;
    for (given, sha, bases) in &ends.merge_bases {
        say_merge_bases(given, sha, bases, bad, bases.contains(&ends.first));
    }
    let (job_yaml, job_source, given_metric) = benchmark_job(args.job.as_deref(), &args.command)?;
    let given_metric = args.metric.clone().or(given_metric);
    let job = plan_job(&job_yaml, &job_source, &repo)?;
    let scratch = validated_scratch(args.scratch.as_deref())?;
    let good_sha = range.first().map(|c| c.sha.clone()).context("empty range")?;
    let bad_sha = range.last().map(|c| c.sha.clone()).context("empty range")?;

    // Two identical commands started together (twice from a script, or in two terminals) would each probe, each
    // create a session and bisect the same range side by side, competing for the machine: the session lock exists
    // only once a session does. This lock stands for the command until its session ends; the second is refused.
    let (build, deploy) = (&args.build, &args.deploy);
    let identity = start_identity(&good_sha, &bad_sha, &ends.others, &job.job_id, build, deploy, args.improvement);
    let start_lock = start_lock_path(&repo, &identity);
    // The lock is in the repository, not the store, so a second store does not make a second bisect welcome: two
    // bisects of one range on one machine at once would disturb each other's runs. The holder names its store, so
    // that the refused one can say where to look.
    let our_store = canonical_store_location(store);
    let _start_lock = match crate::lock::try_lock(&start_lock)? {
        crate::lock::Lock::Held(mut lock) => {
            lock.say(&format!("{STORE_WORD}{our_store}"));
            crate::lock::RemovedWhenDropped::new(lock)
        }
        crate::lock::Lock::Busy { holder } => bail!(
            "the same bisect (repository, range, job, commands, and {} as the direction) is being started or driven \
             by another culprit ({holder}, lock {}); {}",
            if args.improvement { "an improvement" } else { "a regression" },
            start_lock.display(),
            where_the_holder_is(&holder, &our_store)
        ),
    };
    // A culprit killed while it probed good and bad left its build running: the same command again stops it.
    let probe_steps = start_lock.with_extension("step");
    reap_leftover_step(&probe_steps);
    let probes = ProbeLog { path: start_lock.with_extension("probes"), keep: false };

    // The same bisect asked again continues where it stopped, on the machine it measures on. A farm's machines share
    // a store and often keep their clones at one path: another machine's session of the same bisect (running there,
    // or stopped) is not taken up here, where its runs and this machine's would be compared as one machine's.
    let here = machine::hostname();
    // The latest finished session of the same bisect on this machine, which the new one does not continue.
    let mut finished_same: Option<(i64, String)> = None;
    for session in store.bisect_sessions()? {
        let Ok(config) = serde_json::from_str::<SessionConfig>(&session.config_json) else { continue };
        let same = config.repo == repo
            && config.good == good_sha
            && config.bad == bad_sha
            && config.other_goods == ends.others
            && session.job_id.as_deref() == Some(job.job_id.as_str())
            && config.build == args.build
            && config.deploy == args.deploy
            && config.improvement == args.improvement
            && config.scratch == scratch
            && config.no_checkout == args.no_checkout
            && given_metric.as_ref().is_none_or(|m| m == &config.metric);
        if same && session.status == NEW_SESSION_STATUS {
            if let Some(there) = session_machine(store, session.id, &config.machine)?.filter(|there| there != &here) {
                crate::note!(
                    "culprit: bisect session {} is the same bisect on machine {there}; this machine ({here}) starts \
                     one of its own, as runs of two machines are not compared",
                    session.id
                );
                continue;
            }
            // Its probe runs are the session's already (a culprit killed after it stored the session left the list).
            drop(probes);
            crate::note!(
                "culprit: continuing bisect session {} (same repository, range, job, commands and direction)",
                session.id
            );
            // The limits are part of the session: its decisions so far were taken under them, and resuming re-derives
            // them from the stored runs. A command that asks for others is told which ones hold.
            let kept = (config.bisect.max_runs, config.bisect.min_effect_relative);
            let asked = (args.max_runs, args.min_change.unwrap_or(0.0));
            if kept != asked {
                crate::note!(
                    "culprit: session {} keeps the limits it started with ({}), not this command's ({})",
                    session.id,
                    limits(kept),
                    limits(asked)
                );
            }
            // The build and deploy timeouts given replace the session's, as with --resume (see `retimed`).
            return resume(store, session.id, args, true);
        }
        // The machine is asked of the store only for a session of the same bisect.
        if same
            && finished_same.as_ref().is_none_or(|(id, _)| *id < session.id.0)
            && session_machine(store, session.id, &config.machine)?.is_none_or(|there| there == here)
        {
            finished_same = Some((session.id.0, session.status.clone()));
        }
    }
    // Run again, a finished bisect measures everything anew, which is right for a second opinion but hours of a
    // kernel's builds and runs for someone who wanted the answer back (QA 59: 163 runs and 14 builds, unsaid).
    if let Some((id, status)) = finished_same {
        let db = crate::cmd::report::db_option(store);
        crate::note!(
            "culprit: bisect session {id}, the same bisect on this machine, ended as {status} (`culprit{db} bisect \
             log {id}`, `culprit{db} report {id}`); this starts a new session that measures everything again"
        );
    }

    let this = Coverage {
        repo: repo.display().to_string(),
        job_id: Some(job.job_id.clone()),
        metric: given_metric.clone(),
        machine: Some(here.clone()),
        improvement: args.improvement,
        good: good_sha.clone(),
        other_goods: ends.others.clone(),
        bad: bad_sha.clone(),
    };
    say_stopped_sessions_with_an_older_bad(store, &repo, &this)?;
    let others = match ends.others.len() {
        0 => String::new(),
        1 => format!(" (and good {}, not measured)", &ends.others[0][..10]),
        n => format!(" (and {n} other good commits, not measured)"),
    };
    crate::note!(
        "culprit: bisecting {} candidate commits after good {}{others} up to bad {} with {} ({} runs at most)",
        range.len() - 1,
        &good_sha[..10],
        &bad_sha[..10],
        job_source,
        args.max_runs
    );
    let mut config = SessionConfig {
        repo: repo.clone(),
        good: good_sha.clone(),
        bad: bad_sha.clone(),
        other_goods: ends.others.clone(),
        job_yaml: job_yaml.clone(),
        job_source: job_source.clone(),
        metric: given_metric.clone().unwrap_or_default(),
        build: args.build.clone(),
        deploy: args.deploy.clone(),
        timeouts: args.timeouts.step_timeouts(),
        improvement: args.improvement,
        bisect: BisectConfig {
            max_runs: args.max_runs,
            min_effect_relative: args.min_change.unwrap_or(0.0),
            ..BisectConfig::default()
        },
        machine: here.clone(),
        probe_runs: Vec::new(),
        probe_chose_metric: given_metric.is_none(),
        scratch: scratch.clone(),
        no_checkout: args.no_checkout,
    };
    let interrupt = interrupt_flag();
    let bar = progress_bar();
    let mut observe = observer(&bar);
    let worktrees = Worktrees::new(&repo, &process_worktree_root(&repo, "probe"), LIVE_WORKTREES)?;
    let mut driver = Driver::new(
        store,
        None,
        config.clone(),
        range.clone(),
        job.clone(),
        run_context(config.scratch.as_deref())?,
        worktrees,
        interrupt.clone(),
    );
    driver.record_steps_in(probe_steps);
    let probe_runs = if given_metric.is_some() { PROBE_RUNS_WITH_METRIC } else { PROBE_RUNS_CHOOSING_METRIC };
    let last = range.len() - 1;
    let mut probe_ids = Vec::new();
    let (mut good_runs, mut bad_runs) = (Vec::new(), Vec::new());
    let (mut earlier, earlier_builds) = probes.read(&*driver.store, &job.job_id);
    if !earlier.is_empty() {
        let n = earlier.len();
        crate::note!("culprit: continuing from {n} probe run(s) of good and bad stored by an earlier culprit");
    }
    driver.build_seconds.extend(earlier_builds);
    for _ in 0..probe_runs {
        for index in [0, last] {
            // The runs an earlier process of this command took, in the order it took them, stand for its first ones.
            let reused = earlier.front().is_some_and(|(_, r)| r.revision.key() == range[index].sha);
            let (id, record) = match earlier.pop_front().filter(|_| reused) {
                Some((id, record)) => {
                    driver.run_seconds.push((record.ended_at - record.started_at).max(0.0));
                    (id, record)
                }
                None => {
                    earlier.clear();
                    let what = if index == 0 { "good" } else { "bad" };
                    bar.set_message(format!(
                        "probing {what} {}; {}",
                        &range[index].sha[..10],
                        estimate_text(Estimate::NotConfirmed, None)
                    ));
                    let Some(taken) = driver.run_at(index, &mut observe)? else {
                        bar.finish_and_clear();
                        probes.keep_for_the_same_command();
                        crate::note!(
                            "culprit: interrupted while probing; the finished probe runs are stored, and the same \
                             command continues from them"
                        );
                        return Ok(ExitCode::from(130));
                    };
                    taken
                }
            };
            probe_ids.push(id);
            probes.write(&probe_ids, &driver.build_seconds);
            if index == 0 {
                good_runs.push(record)
            } else {
                bad_runs.push(record)
            }
        }
    }
    if !good_runs.iter().chain(&bad_runs).any(|r| r.outcome.is_ok()) {
        bar.finish_and_clear();
        let reason = first_failure(good_runs.iter().chain(&bad_runs));
        // A worktree holds the commit's sources only: a benchmark built from them is not there without --build.
        let hint = if args.no_checkout {
            // Under --no-checkout it holds not even those: a hook that expected them (a plain `make`) fails here.
            "; with --no-checkout each commit's worktree holds none of its files, so the build must fetch or build \
             $CULPRIT_COMMIT itself (in a tree of its own) and leave what the runs need; otherwise drop \
             --no-checkout"
        } else if args.build.is_none() && reason.contains("exit status 127") {
            "; the command was not found in the commit's worktree: if it is built from the sources, give the build \
             command with --build"
        } else {
            timeout_hint(&reason)
        };
        bail!(
            "neither good nor bad could be built and run, so nothing can be bisected: {reason}{hint} (every failed \
             run's output: `culprit{} results --failures`)",
            crate::cmd::report::db_option(store)
        );
    }
    // One end that cannot be measured leaves nothing to compare the other with: the bisect would end "not
    // reproduced" as if good and bad had been measured alike, and say nothing of why (QA of session 29).
    for (runs, end, index) in [(&good_runs, "good", 0), (&bad_runs, "bad", last)] {
        if !runs.iter().any(|r| r.outcome.is_ok()) {
            bar.finish_and_clear();
            let reason = first_failure(runs.iter());
            bail!(
                "{end} ({}) could not be built and run, so there is nothing to compare {} with: {reason}{} (the \
                 failed runs' output: `culprit{} results --failures`); give a {end} commit that builds and runs",
                &range[index].sha[..12],
                if index == 0 { "bad" } else { "good" },
                timeout_hint(&reason),
                crate::cmd::report::db_option(store)
            );
        }
    }
    let metric_was_given = given_metric.is_some();
    let metric = match given_metric {
        // A metric the job does not produce would make every commit untestable, good and bad included, and the
        // session would end as "not reproduced": that is a mistake in the command line, said before any session.
        Some(m) if !good_runs.iter().chain(&bad_runs).any(|r| r.outcome.is_ok() && r.metrics.contains_key(&m)) => {
            bar.finish_and_clear();
            bail!(
                "--metric {m}: the job's runs at good and bad have no such metric; they have: {}",
                available_metrics(good_runs.iter().chain(&bad_runs))
            );
        }
        Some(m) => m,
        None => {
            let chosen = choose_metric(&good_runs, &bad_runs)?;
            let m = chosen.name;
            let what = if !chosen.significant {
                // Said plainly: a bisect of a metric that only came closest to a change is most likely a bisect of
                // noise, which ends "not reproduced" after its reproduce budget.
                format!(
                    "the closest to a change: no metric changed significantly in {probe_runs} runs a side (name \
                     the metric you care about with --metric)"
                )
            } else if culprit_core::compare::direction::is_kpi(&m) {
                "the KPI that changed most significantly between good and bad".to_string()
            } else {
                "the most significant change between good and bad".to_string()
            };
            bar.suspend(|| crate::note!("culprit: bisecting {m}, {what}"));
            m
        }
    };
    config.metric = metric.clone();
    config.bisect.direction = searched_direction(&metric, args.improvement);
    // Costs as measured: a build is the build command plus a worktree checkout; a run is one job run.
    let run_cost = mean_or(&driver.run_seconds, 1.0).max(0.01);
    let build_cost = mean_or(&driver.build_seconds, 0.0) + 0.05;
    config.bisect.run_cost = run_cost;
    config.bisect.build_cost = build_cost.max(0.01);
    // Good and bad are built: the session takes their worktrees over rather than build them again.
    let probed = driver.into_worktrees();
    config.probe_runs = probe_ids.clone();

    let session = store.create_bisect_session(&NewBisectSession {
        repo: repo.display().to_string(),
        good: good_sha.clone(),
        bad: bad_sha.clone(),
        job_id: Some(job.job_id.clone()),
        metric: Some(metric.clone()),
        config_json: serde_json::to_string(&config)?,
        created_at: culprit_run::bisect::now(),
        range: range
            .iter()
            .map(|c| BisectCommit { sha: c.sha.clone(), subject: c.subject.clone(), parents: c.parents.clone() })
            .collect(),
    })?;
    // Claimed at once, so that `bisect list` on another machine of a farm's store reads it as running (see `drive`).
    claim_session(store, session)?;
    record_for_follow(store, session, args)?;
    // Probe runs that chose the metric are not evidence about it: of all the metrics, the one picked is the one
    // whose runs happened to differ most, and testing the regression on them again would be biased (a 3 + 3 probe
    // of a command whose time does not change picked command.user_time, and the reproduce test, which reused those
    // runs, found a 7 sigma difference that 500 more runs did not). They stay in the store as runs of good and bad.
    if metric_was_given {
        for id in probe_ids {
            store.link_run_to_session(session, id)?;
        }
    }
    // The session holds what the same command continues from now.
    drop(probes);
    let db = crate::cmd::report::db_option(store);
    bar.suspend(|| {
        crate::note!("culprit: bisect session {session} (resume with `culprit{db} bisect --resume {session}`)")
    });
    drop(observe);
    bar.finish_and_clear();
    let shown = Presentation { json: args.json, profile: args.profile, started, resumed: false };
    drive(store, session, config, range, job, shown, Some(probed))
}

/// Names each stopped session of this machine that this command's session would cover (see [`Coverage`]: the same
/// job from the same good in `repo` up to a bad that is an ancestor of `bad`, the branch given as --bad having moved
/// on since it was killed, as linux-next does), and how to continue it: the same command again then starts a new
/// session from nothing, and said nothing of the stopped one, whose runs (hundreds, and a build each commit) were
/// paid for (QA 48, defect 6). `this` is the command's session to be; its metric is `None` when the probe chooses it.
fn say_stopped_sessions_with_an_older_bad(store: &dyn Store, repo: &Path, this: &Coverage) -> Result<()> {
    for session in store.bisect_sessions()? {
        // The same bad is the same command, which took its session up before this is asked.
        if session.status != NEW_SESSION_STATUS || session.bad == this.bad {
            continue;
        }
        // A session another machine measures on cannot be resumed here.
        let configured = serde_json::from_str::<SessionConfig>(&session.config_json).map(|c| c.machine);
        let Ok(configured) = configured else { continue };
        let machine = session_machine(store, session.id, &configured)?;
        let Some(stopped) = Coverage::of_stored(&session, machine) else { continue };
        if !stopped.covered_by(this, is_ancestor_in(repo)) || shown_status(store, &session) != "stopped" {
            continue;
        }
        let runs = store.bisect_session_runs(session.id)?.len();
        let (good, bad) = (&this.good, &this.bad);
        crate::note!(
            "culprit: bisect session {id} of the same job from good {} stopped after {runs} runs with bad {}, an \
             ancestor of this bad {}; this starts a new session from nothing: to continue session {id} instead (its \
             range without the newer commits), interrupt this (Ctrl-C) and run `culprit{} bisect --resume {id}`",
            &good[..good.len().min(10)],
            &session.bad[..session.bad.len().min(10)],
            &bad[..bad.len().min(10)],
            crate::cmd::report::db_option(store),
            id = session.id
        );
    }
    Ok(())
}

/// What decides whether a later bisect session covers a stopped one, so that resuming the stopped one would bisect
/// only part of what the later one bisects (QA 48, 9e): the same repository, job, metric, machine, direction and good
/// commits, and a bad that is the stopped one's bad or a descendant of it. One rule for both places that ask: a new
/// bisect naming the stopped sessions it covers ([`say_stopped_sessions_with_an_older_bad`]), and `bisect list`
/// marking a stopped session superseded ([`superseding_session`]).
#[derive(Debug, Clone, PartialEq)]
struct Coverage {
    repo: String,
    job_id: Option<String>,
    /// `None` where it is not known yet (a bisect without --metric chooses it after its probe): any metric matches.
    metric: Option<String>,
    /// `None` where it is not known (a session stored before sessions named theirs, with no run yet): any matches.
    machine: Option<String>,
    improvement: bool,
    good: String,
    other_goods: Vec<String>,
    bad: String,
}

impl Coverage {
    /// A stored session's, read from its stored JSON as plain JSON, so that a session whose configuration this
    /// culprit cannot read as its own is still read (and listed); `None` without a good commit.
    fn of_stored(session: &culprit_store::BisectSession, machine: Option<String>) -> Option<Coverage> {
        let config = serde_json::from_str::<serde_json::Value>(&session.config_json).ok()?;
        // A session of one good stores no list of others.
        let other_goods =
            config.get("other_goods").and_then(|list| serde_json::from_value(list.clone()).ok()).unwrap_or_default();
        Some(Coverage {
            repo: session.repo.clone(),
            job_id: session.job_id.clone(),
            metric: session.metric.clone(),
            machine,
            improvement: config.get("improvement").and_then(serde_json::Value::as_bool).unwrap_or(false),
            good: config.get("good")?.as_str()?.to_string(),
            other_goods,
            bad: session.bad.clone(),
        })
    }

    /// Whether `later` covers this (stopped) session. `is_ancestor(older, newer)` is asked last, and only when the
    /// bads differ: it runs git.
    fn covered_by(&self, later: &Coverage, is_ancestor: impl Fn(&str, &str) -> bool) -> bool {
        let alike_where_known = |a: &Option<String>, b: &Option<String>| a.is_none() || b.is_none() || a == b;
        self.repo == later.repo
            && later.job_id.is_some()
            && self.job_id == later.job_id
            && alike_where_known(&self.metric, &later.metric)
            && alike_where_known(&self.machine, &later.machine)
            && self.improvement == later.improvement
            && self.good == later.good
            && self.other_goods == later.other_goods
            && (self.bad == later.bad || is_ancestor(&self.bad, &later.bad))
    }
}

/// `git merge-base --is-ancestor` in `repo`, as [`Coverage::covered_by`] asks it.
fn is_ancestor_in(repo: &Path) -> impl Fn(&str, &str) -> bool + '_ {
    move |older, newer| git::git(repo, &["merge-base", "--is-ancestor", older, newer]).is_ok()
}

/// Records `session` as one of `track --follow`'s on its machine when a pass runs this bisect (`for_follow_on`),
/// before anything of it is driven: a pass killed at any point after this (even between the bisect's end and the
/// pass's own bookkeeping) leaves a session the next pass finds as its own, finishes if need be, and mails once.
fn record_for_follow(store: &mut dyn Store, session: SessionId, args: &BisectArgs) -> Result<()> {
    if let Some(machine) = &args.for_follow_on {
        store
            .record_follow_session(session, machine)
            .with_context(|| format!("cannot record bisect session {session} as one of track --follow"))?;
    }
    Ok(())
}

/// Drives stored `session` on, with `args`' output options and step limits. `start_locked`: this process holds the
/// start lock of the session's command already (the same command again took it before it found the session).
fn resume(store: &mut dyn Store, session: SessionId, args: &BisectArgs, start_locked: bool) -> Result<ExitCode> {
    let (json, profile) = (args.json, args.profile);
    let started = Instant::now();
    let stored = match store.bisect_session(session) {
        Ok(stored) => stored,
        // A bisect killed while it probed good and bad had stored no session yet, so there is no ID to resume;
        // its runs are stored all the same, and the same command continues from them.
        Err(e @ culprit_store::StoreError::NotFound { .. }) => bail!(
            "{e}; `culprit bisect list` shows the sessions there are (a bisect stopped while it probed good and bad \
             had stored none yet: run the same bisect command again, which continues from its stored runs)"
        ),
        Err(e) => return Err(e.into()),
    };
    let config: SessionConfig = serde_json::from_str(&stored.config_json)
        .with_context(|| format!("bisect session {session} has a configuration this culprit cannot read"))?;
    // A session's runs are compared with each other: runs of this machine added to those of another would make one
    // bisect of two machines' numbers.
    let here = machine::hostname();
    if let Some(there) = session_machine(store, session, &config.machine)?.filter(|there| there != &here) {
        bail!(
            "bisect session {session} measures on machine {there}, and this is {here}: its runs and this machine's \
             would be compared as one machine's; resume it on {there}, or run the bisect command itself here, which \
             starts a session of this machine"
        );
    }
    // The runs happen in worktrees of the session's repository: without it every commit would fail to check out and
    // the session would end as if nothing could be tested. The session is left as it is, to resume once it is back.
    if git::toplevel(&config.repo).is_err() {
        bail!(
            "cannot resume bisect session {session}: its repository {} is gone or is no longer a git repository; put it back there and run `culprit bisect --resume {session}` again (the session is kept as it was)",
            config.repo.display()
        );
    }
    let range = session_range(store, session, &config)?;
    // A commit of the range that history rewriting and `git gc` took away fails its checkout, which read as the
    // machine's fault, with the advice to resume once it was fixed; after one more run at good (QA 48, defect 9f).
    let shas: Vec<&str> = range.iter().map(|commit| commit.sha.as_str()).collect();
    let missing = git::missing_commits(&config.repo, &shas)
        .with_context(|| format!("cannot check that the commits of bisect session {session} are in its repository"))?;
    if let Some(gone) = missing.first() {
        let also = match missing.len() {
            1 => String::new(),
            n => format!(" (and {} more of its {} commits)", n - 1, range.len()),
        };
        bail!(
            "commit {} of bisect session {session} is no longer in the repository {}{also} (history rewritten?); \
             this session cannot continue; start a new bisect",
            &gone[..gone.len().min(12)],
            config.repo.display()
        );
    }
    let job = plan_job(&config.job_yaml, &config.job_source, &config.repo)?;
    // The start lock of the command that began the session: a process killed with `kill -9` left its file, which
    // would stay in the repository after the resumed session is done; and the same command started meanwhile would
    // take up this session beside this process. Its name is made from the job id stored with the session, as `bisect
    // list` makes it (see `stored_start_lock`): the id the job is planned under now differs for a session stored
    // before job ids changed (session 41), and that lock was one the killed command never held.
    let (good, bad, others) = (&config.good, &config.bad, &config.other_goods);
    let job_id = stored.job_id.as_deref().unwrap_or(&job.job_id);
    let identity = start_identity(good, bad, others, job_id, &config.build, &config.deploy, config.improvement);
    let start_lock = start_lock_path(&config.repo, &identity);
    let taken = if start_locked { None } else { Some(crate::lock::try_lock(&start_lock)?) };
    let _start_lock = match taken {
        None => None,
        Some(crate::lock::Lock::Held(lock)) => Some(crate::lock::RemovedWhenDropped::new(lock)),
        Some(crate::lock::Lock::Busy { holder }) => bail!(
            "bisect session {session} is being driven by another culprit ({holder}, lock {}); let it finish, or stop \
             it and run `culprit bisect --resume {session}`",
            start_lock.display()
        ),
    };
    // Only now, with the start lock held: no other culprit takes the session up while its limits change.
    let config = retimed(store, &stored, config, args.timeouts)?;
    record_for_follow(store, session, args)?;
    drive(store, session, config, range, job, Presentation { json, profile, started, resumed: true }, None)
}

/// `config` of the stored `session` with the step limits given on the command line in place of its own, stored so
/// that later resumes keep them (a build that was only slow for its limit gets longer without starting over). The
/// limits decide nothing the replay of the stored runs re-derives: they only end steps still to come. A finished
/// session is left as it is, since no step of it is still to come.
fn retimed(
    store: &mut dyn Store,
    session: &BisectSession,
    mut config: SessionConfig,
    given: StepTimeoutArgs,
) -> Result<SessionConfig> {
    let old = config.timeouts;
    let new = StepTimeouts {
        build_secs: given.build_timeout().map_or(old.build_secs, |t| t.0),
        deploy_secs: given.deploy_timeout.map_or(old.deploy_secs, |t| t.0),
    };
    if new == old {
        return Ok(config);
    }
    let id = session.id;
    if session.status != NEW_SESSION_STATUS {
        let status = &session.status;
        crate::note!("culprit: session {id} is finished ({status}), so it keeps its timeouts ({})", timeouts_text(old));
        return Ok(config);
    }
    config.timeouts = new;
    store
        .update_bisect_session_config(id, &serde_json::to_string(&config)?)
        .with_context(|| format!("cannot store the new timeouts of bisect session {id}"))?;
    crate::note!(
        "culprit: session {id} now runs with {}, here and when resumed later (it had {})",
        timeouts_text(new),
        timeouts_text(old)
    );
    Ok(config)
}

/// Removes what the sessions that a `kill -9` stopped left in `repo` beside `root` (this session's): their worktrees (a
/// build each), which stayed for good unless that very session was resumed; and a build or benchmark still running
/// there, which would load the machine under this session's runs. A stopped session's resume reuses its builds, but
/// only the session a process drives keeps them: a stopped one resumed after another session of the repository ran
/// builds again what it had built, which bounds the disk a repository's abandoned sessions hold to none. A session
/// whose lock a process holds is left alone; a stopped one keeps its lock file, which `bisect list` reads, and resumes
/// as before.
fn discard_stopped_sessions(repo: &Path, root: &Path) {
    let Some(dir) = root.parent() else { return };
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let lock_path = path.with_extension("lock");
        let session = entry.file_name().to_string_lossy().starts_with("session-");
        if path == root || !session || !path.is_dir() || !lock_path.is_file() {
            continue;
        }
        // Held while the leftovers go, so that a resume of that session cannot start among them; it says so, and
        // such a resume waits for it (see `session_lock`).
        let Ok(crate::lock::Lock::Held(mut held)) = crate::lock::try_lock(&lock_path) else { continue };
        held.say(crate::lock::CLEANING_UP);
        reap_leftover_step(&path.with_extension("step"));
        Worktrees::discard(repo, &path);
    }
}

/// Claims `session` in the store for this process (see `Store::claim_bisect_session`), beside its lock file: another
/// culprit that reached the same store under another spelling of its address (`localhost` for `127.0.0.1`), whose
/// lock file has another name, or one on another machine of a farm, is refused while this one drives the session.
fn claim_session(store: &mut dyn Store, session: SessionId) -> Result<()> {
    match store.claim_bisect_session(session)? {
        culprit_store::SessionClaim::HeldBy(holder) => bail!(
            "bisect session {session} is being driven by another culprit ({holder}, which claimed it in the store {}); \
             let it finish, or stop it and run `culprit bisect --resume {session}`",
            store.location()
        ),
        culprit_store::SessionClaim::Free | culprit_store::SessionClaim::Unsupported => Ok(()),
    }
}

/// The machine a stored session measures on, read from its stored configuration alone (or its first run, for a
/// session stored before sessions named theirs), so that a session this culprit cannot replay still has one; `None`
/// for such an old session without runs.
pub(crate) fn machine_of(store: &dyn Store, session: &culprit_store::BisectSession) -> Result<Option<String>> {
    let config = serde_json::from_str::<serde_json::Value>(&session.config_json).ok();
    let named = config.as_ref().and_then(|c| c.get("machine")?.as_str()).unwrap_or_default();
    session_machine(store, session.id, named)
}

/// The machine a stored session measures on: `named`, the one its configuration names, or, for a session stored
/// before sessions named theirs, the machine of its first run; `None` for such a session without runs.
fn session_machine(store: &dyn Store, session: SessionId, named: &str) -> Result<Option<String>> {
    if !named.is_empty() {
        return Ok(Some(named.to_string()));
    }
    let first = store.bisect_session_runs(session)?.first().copied();
    Ok(match first {
        Some(run) => Some(store.run(run)?.machine.hostname),
        None => None,
    })
}

/// How long a session waits for another culprit to remove its leftovers before it says to try again: removing a
/// stopped session's worktrees (a kernel build each) and killing a step it left running take seconds, a minute on a
/// slow disk.
const CLEANUP_WAIT: Duration = Duration::from_secs(180);

/// The lock of `session` at `lock_path`, for this process to drive it. A session another culprit drives is refused,
/// naming it. A stopped session whose leftovers another culprit is removing (it started a session of the same
/// repository, see [`discard_stopped_sessions`]) was refused the same way, as if it were driven, though the lock is
/// free again in moments: this waits for it, up to [`CLEANUP_WAIT`], and then says to try again.
fn session_lock(session: SessionId, lock_path: &Path) -> Result<crate::lock::LockFile> {
    let begun = Instant::now();
    let mut told = false;
    loop {
        let holder = match crate::lock::try_lock_briefly(lock_path)? {
            crate::lock::Lock::Held(lock) => return Ok(lock),
            crate::lock::Lock::Busy { holder } => holder,
        };
        if !holder.ends_with(crate::lock::CLEANING_UP) {
            bail!(
                "bisect session {session} is being driven by another culprit ({holder}, lock {}); let it finish, or \
                 stop it and run `culprit bisect --resume {session}`",
                lock_path.display()
            );
        }
        if begun.elapsed() >= CLEANUP_WAIT {
            bail!(
                "bisect session {session}: another culprit ({holder}) is still removing the leftovers of this stopped \
                 session after {}s (lock {}); run `culprit bisect --resume {session}` again once it is done",
                CLEANUP_WAIT.as_secs(),
                lock_path.display()
            );
        }
        if !told {
            crate::note!("culprit: waiting for another culprit ({holder}); session {session} resumes when it is done");
            told = true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// How this command shows a session it drives, and what its summary's time covers.
struct Presentation {
    json: bool,
    profile: usize,
    /// When the command started (a new session's probe runs at good and bad included).
    started: Instant,
    /// Whether this command took up a session an earlier one had started: its stored runs took time this command
    /// did not see, and the summary says which time it shows. (A session this command started may hold its first
    /// probe run already, which is not a run it continued after.)
    resumed: bool,
}

/// Drives `session` to its end (or until it stops), then gives up its claim in the store, however it ended: the
/// claim would otherwise go only with the process, and `track --follow` drives its bisects in one long process, so a
/// session of its that stopped on an error stayed claimed (listed as running, a `--resume` refused) while it ran on.
fn drive(
    store: &mut dyn Store,
    session: SessionId,
    config: SessionConfig,
    range: Vec<RangeCommit>,
    job: JobRun,
    shown: Presentation,
    probed: Option<Worktrees>,
) -> Result<ExitCode> {
    let driven = drive_claimed(store, session, config, range, job, shown, probed);
    if let Err(e) = store.release_bisect_session(session) {
        crate::note!("culprit: {e}");
    }
    driven
}

/// [`drive`] with the session's lock and claim taken.
fn drive_claimed(
    store: &mut dyn Store,
    session: SessionId,
    config: SessionConfig,
    range: Vec<RangeCommit>,
    job: JobRun,
    shown: Presentation,
    probed: Option<Worktrees>,
) -> Result<ExitCode> {
    let Presentation { json, profile, started, resumed } = shown;
    let interrupt = interrupt_flag();
    let root = session_root(&*store, &config.repo, session);
    // One process drives a session at a time: two (the same command in a second terminal, or two `--resume`) checked
    // out into each other's worktrees, failed with errors that blamed the machine, and stored a failed run of
    // theirs against a commit that builds (QA of session 29).
    let lock_path = root.with_extension("lock");
    let lock = session_lock(session, &lock_path)?;
    claim_session(store, session)?;
    // Beside the session's lock and worktrees: the build or deploy running now, and what a culprit killed with
    // `kill -9` left running there, killed before this one builds.
    let steps = root.with_extension("step");
    reap_leftover_step(&steps);
    discard_stopped_sessions(&config.repo, &root);
    let bar = progress_bar();
    // The store, as the commands printed for the user to run next name it (none for the default store).
    let db = crate::cmd::report::db_option(store);
    let (ended, continued_after, profiled) = {
        let mut observe = observer(&bar);
        // A session just started takes over the probe's built worktrees of good and bad. A session's worktrees are
        // kept until it is done, each marked once its build finished (keyed by commit and build command): a resume
        // after Ctrl-C, an error or a `kill -9` reuses those builds (a kernel build each) and builds only what is
        // gone, where it built every commit again.
        let build = config.build.as_deref();
        let worktrees = match probed {
            Some(probed) => probed.move_built_to(&root, build)?,
            None => Worktrees::kept(&config.repo, &root, LIVE_WORKTREES, build)?,
        };
        let context = run_context(config.scratch.as_deref())?;
        let mut driver =
            Driver::new(store, Some(session), config.clone(), range.clone(), job, context, worktrees, interrupt);
        driver.record_steps_in(steps);
        // The probe of good and bad timed a build and the runs, and the session's configuration keeps what they
        // cost: the first estimate gives a time from them (QA 49: it gave none, though both builds were timed).
        driver.measured_before = Some((config.bisect.run_cost, config.bisect.build_cost));
        let ended = driver.drive(&mut observe).map_err(|error| {
            // A commit history rewriting took away cannot be fixed and resumed after, so that advice is not given.
            let what = match error {
                DriverError::Vanished { .. } => {
                    format!("bisect session {session} stopped; every finished run is stored")
                }
                _ => format!(
                    "bisect session {session} stopped; every finished run is stored: fix the cause, then continue \
                     with `culprit{db} bisect --resume {session}`"
                ),
            };
            anyhow::Error::new(error).context(what)
        })?;
        let profiled = match (&ended, profile > 0) {
            (Ended::Done(outcome), true) => profile_culprits(&mut driver, outcome, profile, &bar, &mut observe)?,
            _ => 0,
        };
        let continued_after = if resumed { driver.replayed() } else { 0 };
        // A session that is done needs its builds no more (a later `--profile` builds the two commits it profiles).
        if matches!(ended, Ended::Done(_)) {
            driver.into_worktrees().remove();
        }
        (ended, continued_after, profiled)
    };
    bar.finish_and_clear();
    // A finished session needs its lock no more, and a lock file left in the repository says that a session stopped
    // before it was done (`bisect list`): it is removed, while still held. An interrupted session keeps it, as one
    // that failed (the return above) or a process killed does. The outcome is stored already, so a file that cannot
    // be removed is only a warning.
    if matches!(ended, Ended::Done(_)) {
        if let Err(e) = lock.remove() {
            crate::note!("culprit: {e:#}");
        }
    }
    match ended {
        Ended::Interrupted => {
            crate::note!(
                "culprit: interrupted; every finished run is stored. Continue with `culprit{db} bisect --resume \
                 {session}`"
            );
            Ok(ExitCode::from(130))
        }
        Ended::Done(outcome) => {
            // A reader that closed stdout still gets the exit code the outcome decides (1 for inconclusive).
            let mut out = output::Live::default();
            if json {
                out.println(&serde_json::to_string_pretty(&result_json(session, &config, &range, &outcome))?)?;
            } else {
                let invocation = ThisInvocation { elapsed: started.elapsed(), continued_after, profiled };
                out.print(&render_outcome(session, &config, &range, &outcome, Some(invocation)))?;
            }
            Ok(match outcome.status {
                Status::Found | Status::Multiple | Status::NotReproduced => ExitCode::SUCCESS,
                Status::Inconclusive => ExitCode::from(1),
            })
        }
    }
}

/// Extra interleaved runs of each located culprit and the commit it was compared against, with perf-profile and
/// perf-stat added to the job's monitors. They are stored as profiling runs (perf makes the benchmark several times
/// slower) linked to the session after its outcome: a replay leaves them out, and the report reads only their perf
/// rows, the benchmark's own rows coming from the bisect's plain runs.
///
/// `runs` is how many profiling runs each of those commits ends with, not how many more to take: the session's
/// stored profiling runs count, so a `--resume` after a kill during profiling takes only the missing ones, and the
/// same `--profile N` given again to a finished session takes none (a larger N takes the difference).
fn profile_culprits(
    driver: &mut Driver<'_>,
    outcome: &Outcome,
    runs: usize,
    bar: &ProgressBar,
    observe: &mut impl FnMut(Event<'_>),
) -> Result<usize> {
    driver.kind = RunKind::Profiling;
    let mut taken_here = 0;
    for monitor in ["perf-profile", "perf-stat"] {
        if !driver.job.monitors.iter().any(|(name, _)| name == monitor) {
            driver.job.monitors.push((monitor.to_string(), Default::default()));
        }
    }
    let mut done = stored_profiling_runs(&*driver.store, driver.session, &driver.range)?;
    for culprit in outcome.culprits.iter().filter(|c| c.located) {
        // Rounds keep the two commits interleaved, so slow drift of the machine falls on both alike; a commit that
        // has its runs already (a shared parent of two culprits, or an earlier pass) sits its turn out.
        for _ in 0..runs {
            for index in [culprit.after, culprit.commit] {
                let taken = done.entry(index).or_default();
                if *taken >= runs {
                    continue;
                }
                *taken += 1;
                bar.set_message(format!("profiling {} (run {} of {runs})", &driver.range[index].sha[..10], *taken));
                if driver.run_at(index, observe)?.is_none() {
                    return Ok(taken_here);
                }
                taken_here += 1;
            }
        }
    }
    Ok(taken_here)
}

/// How many profiling runs of `session` each commit of the range has already, successful or not (a commit whose
/// profiling runs fail is not tried again and again on every resume), by the commit's index in the range.
fn stored_profiling_runs(
    store: &dyn Store,
    session: Option<SessionId>,
    range: &[RangeCommit],
) -> Result<std::collections::HashMap<usize, usize>> {
    let mut taken = std::collections::HashMap::new();
    let Some(session) = session else { return Ok(taken) };
    let filter = RunFilter { bisect_session: Some(session), kind: Some(RunKind::Profiling), ..RunFilter::default() };
    for run in store.list_runs(&filter)? {
        let Revision::Commit { sha, .. } = &run.revision else { continue };
        if let Some(index) = range.iter().position(|commit| &commit.sha == sha) {
            *taken.entry(index).or_insert(0) += 1;
        }
    }
    Ok(taken)
}

/// Whether the range (after, commit] of a session's range holds one commit: `commit`, whose only parent is `after`.
pub(crate) fn is_one_commit_range(range: &[RangeCommit], after: usize, commit: usize) -> bool {
    range.get(commit).is_some_and(|c| c.parents == [after])
}

/// The parents of the commit at `index` that are goods given with a second `--good` (taken as good without being
/// measured): the range maps such a parent to good, index 0, so a culprit after one was confirmed against good's
/// runs, not its parent's, and its `after` is good (QA 50: f3 after a declared good f2 read "after m1"). Empty when
/// there is no other good, or the repository cannot say (a log replayed where it is gone).
pub(crate) fn unmeasured_good_parents(config: &SessionConfig, range: &[RangeCommit], index: usize) -> Vec<String> {
    let Some(commit) = range.get(index).filter(|_| !config.other_goods.is_empty()) else {
        return Vec::new();
    };
    let parents = git::git(&config.repo, &["rev-parse", &format!("{}^@", commit.sha)]).unwrap_or_default();
    parents.lines().filter(|parent| config.other_goods.iter().any(|good| good == parent)).map(str::to_string).collect()
}

/// The `--json` object: status, culprits (full SHA, subject, share), runs, builds, and the evidence.
pub fn result_json(
    session: SessionId,
    config: &SessionConfig,
    range: &[RangeCommit],
    outcome: &Outcome,
) -> serde_json::Value {
    let sha = |i: usize| range.get(i).map(|c| c.sha.clone()).unwrap_or_default();
    let subject = |i: usize| range.get(i).map(|c| c.subject.clone()).unwrap_or_default();
    serde_json::json!({
        "session": session.0,
        "status": outcome.status.word(),
        "metric": config.metric,
        "good": config.good,
        "other_goods": config.other_goods,
        "bad": config.bad,
        // The machine the session measured on (null for a session stored before sessions named it).
        "machine": (!config.machine.is_empty()).then_some(&config.machine),
        "culprits": outcome.culprits.iter().map(|c| serde_json::json!({
            "sha": sha(c.commit),
            "subject": subject(c.commit),
            "after": sha(c.after),
            // Its parents that are goods given and not measured: `after` is then good, whose runs it was compared
            // with.
            "unmeasured_good_parents": unmeasured_good_parents(config, range, c.commit),
            "located": c.located,
            "share": c.share,
            "share_low": c.share_low,
            "share_high": c.share_high,
            "confidence": c.confidence,
            "step": c.step,
            "untestable_suspects": c.untestable_suspects.iter().map(|&i| sha(i)).collect::<Vec<_>>(),
            // Every commit the change may be at, oldest first: with untestable suspects, `sha` is only the one of
            // them that could be tested, and a consumer that blamed it alone would blame what may be an innocent
            // commit (the one that fixed the build). Empty for a range not narrowed (`located` false).
            "candidates": c.candidates().into_iter().map(|(i, untestable)| serde_json::json!({
                "sha": sha(i), "subject": subject(i), "untestable": untestable,
            })).collect::<Vec<_>>(),
            // Where the verification that confirmed it began: its fresh runs are those of it and `after` from this
            // position of `bisect log --json`'s samples on (null for a range no verification confirmed).
            "fresh_from": c.fresh_from,
        })).collect::<Vec<_>>(),
        "runs": outcome.runs,
        // The probe runs that chose the metric: the bisect made them, but they are not its samples (see
        // `SessionConfig::probe_chose_metric`), so `runs` leaves them out.
        "metric_choice_runs": chose_metric(config),
        "builds": outcome.builds,
        "total_change": outcome.total_change,
        // The engine's `improved` says bad differs from good the other way than searched for; read with the
        // session's direction it is, in plain words, an improvement of a regression's bisect or a regression of an
        // improvement's.
        "improvement": config.improvement,
        "improved": outcome.improved && !config.improvement,
        "regressed": outcome.improved && config.improvement,
        "below_min_change": outcome.below_min_change,
        // What the runs of a change that did not reproduce rule out: the noise and the smallest change they would
        // have caught, as shares of good's level, and the same in words (null for other outcomes).
        "sensitivity": outcome.sensitivity,
        "not_reproduced": not_reproduced_words(config, outcome),
        "reason": name_commits(&outcome.reason, range),
        "build_spread": outcome.build_spread,
        // The stretches outside the named commits and ranges: their end commits and the share of the change the
        // runs there differ by, with its 90% interval, and whether that shows more of the change or leaves room for
        // a contributor the bisect did not name.
        "open_stretches": outcome.open_stretches.iter().map(|t| serde_json::json!({
            "after": sha(t.after), "upto": sha(t.upto), "share": t.share, "share_low": t.share_low,
            "share_high": t.share_high, "shows_more_low": t.shows_more_low, "shows_more": t.shows_more(),
            "leaves_room": t.leaves_room(),
        })).collect::<Vec<_>>(),
        "outside": outcome.outside_words(|i| stretch_end_name(range, i, 12)),
        "evidence": outcome.evidence.iter().map(|e| serde_json::json!({
            "sha": sha(e.commit), "subject": subject(e.commit), "runs": e.runs,
            "mean": e.mean, "stddev": e.stddev, "untestable": e.untestable,
        })).collect::<Vec<_>>(),
    })
}

/// For a failure that was a build or deploy killed at its limit (its reason, as `timed_out_reason` words it, ends
/// with the option in parentheses), the advice to give a longer one if it was only slow: a limit far below the
/// build's time stops the bisect at good or bad, before any session.
fn timeout_hint(reason: &str) -> &'static str {
    if reason.ends_with("-timeout)") {
        "; if it was only slow, give it longer with that option"
    } else {
        ""
    }
}

/// A session's build and deploy timeouts as the command line gives them.
fn timeouts_text(timeouts: StepTimeouts) -> String {
    let text = |secs: Option<u64>| secs.map_or("none".to_string(), culprit_job::convention::duration_text);
    format!("--build-timeout {}, --deploy-timeout {}", text(timeouts.build_secs), text(timeouts.deploy_secs))
}

/// A session's limits (`--max-runs`, and `--min-change` as a fraction) as the command line gives them, for the
/// message of a command that continues it.
fn limits((max_runs, min_change): (usize, f64)) -> String {
    if min_change > 0.0 {
        format!("--max-runs {max_runs}, --min-change {}", printf::percent_of_fraction(min_change))
    } else {
        format!("--max-runs {max_runs}, no --min-change")
    }
}

/// A commit at position `i` of the range as the words on the stretches outside the culprits name it: its SHA
/// abbreviated to `width`, with "good" or "bad" before the range's two ends, which the reader knows by those names.
pub fn stretch_end_name(range: &[RangeCommit], i: usize, width: usize) -> String {
    let sha = range.get(i).map(|c| abbreviate(&c.sha, width)).unwrap_or_default();
    match i {
        0 => format!("good {sha}"),
        _ if i + 1 == range.len() => format!("bad {sha}"),
        _ => sha.to_string(),
    }
}

/// `text` from the machine, which names commits by their position in the range ("commit 14"), with each such
/// position replaced by the commit's abbreviated SHA, as the summary and the mail print it (the log keeps the
/// positions and lists them with their SHAs).
pub fn name_commits(text: &str, range: &[RangeCommit]) -> String {
    const WORD: &str = "commit ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(WORD) {
        let (before, after) = rest.split_at(at + WORD.len());
        out.push_str(before);
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        match after[..digits].parse::<usize>().ok().and_then(|position| range.get(position)) {
            Some(commit) => out.push_str(abbreviate(&commit.sha, 12)),
            None => out.push_str(&after[..digits]),
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

/// The wall time of the command that finished a bisect, and the runs its session had stored before it took the
/// session up (zero unless it continued a session that had been interrupted or killed).
pub struct ThisInvocation {
    pub elapsed: Duration,
    pub continued_after: usize,
    /// The profiling runs this command took (`--profile`), which the session's runs do not count.
    pub profiled: usize,
}

/// For a change that did not reproduce, what its runs rule out ("not confirmed: run-to-run noise is 37% of the
/// level; these runs rule out only changes above ~16%") with the README's advice for noise that high, and, after a
/// `--deploy`, the one way a real change vanishes by construction: build products kept outside the worktree, which
/// the deploy then installs for every commit alike (QA 48). `None` for other outcomes.
pub(crate) fn not_reproduced_words(config: &SessionConfig, outcome: &Outcome) -> Option<String> {
    if outcome.status != Status::NotReproduced || outcome.improved || outcome.below_min_change {
        return None;
    }
    let mut words = match outcome.sensitivity {
        Some(s) => {
            let lead = if s.could_miss() { "not confirmed" } else { "did not reproduce" };
            let advice = s.advice(&config.metric).map(|a| format!("; {a}")).unwrap_or_default();
            format!("{lead}: {}{advice}", s.describe())
        }
        None => "did not reproduce".to_string(),
    };
    if config.deploy.is_some() {
        words.push_str(
            "; --deploy runs before every run without a rebuild: if the build's products leave the worktree (make \
             O=DIR, an install prefix), every commit ran the last build; keep them in the worktree or per commit \
             ($CULPRIT_COMMIT)",
        );
    }
    Some(words)
}

/// How many probe runs of good and bad chose the session's metric: made, but not its samples (0 when `--metric`
/// was given, and for a session stored before sessions said).
fn chose_metric(config: &SessionConfig) -> usize {
    if config.probe_chose_metric {
        config.probe_runs.len()
    } else {
        0
    }
}

/// The human summary of an outcome.
pub fn render_outcome(
    session: SessionId,
    config: &SessionConfig,
    range: &[RangeCommit],
    outcome: &Outcome,
    invocation: Option<ThisInvocation>,
) -> String {
    let short = |i: usize| range.get(i).map(|c| c.sha[..c.sha.len().min(12)].to_string()).unwrap_or_default();
    let mut out = String::new();
    let headline = match outcome.status {
        Status::Found if config.improvement => "found the commit of the improvement",
        Status::Found => "found the culprit",
        Status::Multiple if config.improvement => "several commits share the improvement",
        Status::Multiple => "several commits share the change",
        Status::NotReproduced if outcome.improved => culprit_core::report::opposite_change(config.improvement),
        Status::NotReproduced if outcome.below_min_change => {
            "good and bad differ by less than --min-change: no commit is blamed"
        }
        // Runs that could have missed a change worth a report have not shown it absent (QA 48).
        Status::NotReproduced if outcome.sensitivity.is_some_and(|s| s.could_miss()) => {
            "the change is not confirmed: no commit is blamed"
        }
        Status::NotReproduced => "the change does not reproduce: no commit is blamed",
        Status::Inconclusive => "inconclusive: no commit is blamed with confidence",
    };
    // A lone culprit that cannot be told apart from untestable commits is a set, and the headline says so first.
    let set = match outcome.culprits.as_slice() {
        [only] if outcome.status == Status::Found => only.candidates().len(),
        _ => 0,
    };
    let of_set = if set > 1 { format!(": one of {set} commits that cannot be told apart") } else { String::new() };
    out.push_str(&format!("bisect {session}: {headline}{of_set}\n"));
    let others: String = config.other_goods.iter().map(|sha| format!(" (and {})", abbreviate(sha, 12))).collect();
    out.push_str(&format!(
        "metric: {}   good {}{others}   bad {}\n",
        config.metric,
        abbreviate(&config.good, 12),
        abbreviate(&config.bad, 12)
    ));
    // A commit that made the metric better is no culprit: an improvement's summary names it as the commit, as its
    // mail does, and a script reading the line finds the same SHA after the label.
    let label = if config.improvement { "commit" } else { "culprit" };
    for c in &outcome.culprits {
        let commit = &range[c.commit.min(range.len() - 1)];
        let set = c.candidates();
        if set.len() > 1 {
            // As git bisect says "The first bad commit could be any of": the testable commit alone would be blamed
            // for what may be the change of an untestable one before it (the commit that fixed its build).
            let named: Vec<String> = set
                .iter()
                .filter_map(|&(i, untestable)| {
                    let commit = range.get(i)?;
                    let marked = if untestable { ", untestable" } else { "" };
                    Some(format!("{} (\"{}\"{marked})", commit.sha, commit.subject))
                })
                .collect();
            out.push_str(&format!(
                "{label}: one of {} commits that cannot be told apart: {}\n",
                set.len(),
                culprit_core::report::or_list(&named)
            ));
        } else if c.located {
            out.push_str(&format!("{label}: {} (\"{}\")\n", commit.sha, commit.subject));
        } else if is_one_commit_range(range, c.after, c.commit) {
            // A range of one commit names that commit; what it lacks is fresh runs that confirm it (QA 58: `git log
            // a..b` of one commit was "not narrowed further").
            out.push_str(&format!(
                "{label}: {} (\"{}\"), the one commit after {}, not confirmed by fresh runs against it\n",
                commit.sha,
                commit.subject,
                short(c.after)
            ));
        } else {
            // The range is the commits the second contains and the first does not, which is what git's A..B
            // notation lists, merged branches included.
            out.push_str(&format!(
                "{label} range: after {} up to {} (\"{}\"), not narrowed further: `git log {}..{}`\n",
                short(c.after),
                commit.sha,
                commit.subject,
                short(c.after),
                short(c.commit)
            ));
        }
        // The engine's confidence is that the change is at the commit or at one of its untestable suspects.
        let of_set = if set.len() > 1 { " that the change is at one of them" } else { "" };
        let from_good_to_bad = c.located && c.after == 0 && c.commit + 1 == range.len();
        out.push_str(&format!(
            "  {} {}{}{of_set}\n",
            if set.len() > 1 { "together explain" } else { "explains" },
            culprit_core::report::share_words(
                (c.share, c.share_low, c.share_high),
                from_good_to_bad,
                "the good-to-bad change"
            ),
            confidence_words(c.located, c.confidence)
        ));
        let unmeasured = unmeasured_good_parents(config, range, c.commit);
        if c.located && !unmeasured.is_empty() {
            let list: Vec<String> = unmeasured.iter().map(|sha| abbreviate(sha, 12).to_string()).collect();
            out.push_str(&culprit_core::report::wrap(
                &format!(
                    "compared with good {}'s runs: its parent {} is a good given with --good, taken as good without \
                     being measured",
                    short(0),
                    list.join(" and ")
                ),
                "  ",
            ));
        }
        if !c.untestable_suspects.is_empty() {
            let list: Vec<String> = c.untestable_suspects.iter().map(|&i| short(i)).collect();
            out.push_str(&format!(
                "  no run could be made of the untestable commit(s) {}, so the runs cannot tell which made the \
                 change (`culprit bisect log` says why each failed)\n",
                list.join(", ")
            ));
        }
    }
    if let Some(caveat) = outcome.caveat() {
        out.push_str(&culprit_core::report::wrap(&caveat, ""));
    }
    if let Some(words) = outcome.outside_words(|i| stretch_end_name(range, i, 12)) {
        out.push_str(&culprit_core::report::wrap(&words, ""));
    }
    out.push_str(&culprit_core::report::wrap(&format!("why: {}", name_commits(&outcome.reason, range)), ""));
    if let Some(words) = not_reproduced_words(config, outcome) {
        out.push_str(&culprit_core::report::wrap(&words, ""));
    }
    // A resume of a session that had ended replays it and runs nothing: "0 in this command, which continued after
    // 221 stored runs" read as work undone (QA 59).
    let replayed_only = matches!(&invocation, Some(ThisInvocation { continued_after, profiled: 0, .. })
        if *continued_after > 0 && *continued_after >= outcome.runs);
    let time = match invocation {
        _ if replayed_only => ", replayed from the store: the session had ended, and this command ran nothing".into(),
        Some(ThisInvocation { elapsed, continued_after: 0, .. }) => format!(", {:.0}s", elapsed.as_secs_f64()),
        Some(ThisInvocation { elapsed, continued_after, .. }) => format!(
            ", {:.0}s in this command, which continued after {continued_after} stored run(s)",
            elapsed.as_secs_f64()
        ),
        None => String::new(),
    };
    // Without a build command a commit is only checked out; "builds" would claim work that was not done.
    let built = if config.build.is_some() { "builds" } else { "commits checked out" };
    // The outcome counts the session's runs, stored ones included; after a resume the reader would otherwise take
    // the session's total for the work this command did, so the runs of this command are given beside it.
    let runs = match &invocation {
        _ if replayed_only => format!("{} runs", outcome.runs),
        Some(ThisInvocation { continued_after, .. }) if *continued_after > 0 => {
            format!("{} runs ({} in this command)", outcome.runs, outcome.runs.saturating_sub(*continued_after))
        }
        _ => format!("{} runs", outcome.runs),
    };
    let choosing = match chose_metric(config) {
        0 => String::new(),
        n => format!(" (and {n} that chose the metric)"),
    };
    // Profiling runs (`--profile`) read nothing the bisect decided on, so the session's runs leave them out; a command
    // that took them says so (QA 57: a resume that took 4 said "0 in this command").
    let profiling = match invocation {
        Some(ThisInvocation { profiled, .. }) if profiled > 0 => {
            format!(" (and {} with perf attached, for the report's profile)", counted(profiled, "profiling run"))
        }
        _ => String::new(),
    };
    out.push_str(&format!("spent: {runs}{choosing}{profiling}, {} {built}{time}\n", outcome.builds));
    out.push_str("evidence (tested commits, oldest first):\n");
    for e in &outcome.evidence {
        let subject = range.get(e.commit).map(|c| c.subject.as_str()).unwrap_or("");
        if e.untestable {
            out.push_str(&format!("  {}  untestable            {subject}\n", short(e.commit)));
        } else {
            let stddev = if e.stddev.is_finite() { format!("{:>10.6}", e.stddev) } else { format!("{:>10}", "-") };
            let runs = if e.runs == 1 { "1 run ".to_string() } else { format!("{:>3} runs", e.runs) };
            out.push_str(&format!("  {}  {runs:>8}  {:>12.6} ±{stddev}  {subject}\n", short(e.commit), e.mean));
        }
    }
    out
}

fn list(store: &dyn Store, machine: Option<&str>, json: bool) -> Result<ExitCode> {
    let mut sessions = listed_sessions(store)?;
    if let Some(pattern) = machine {
        sessions.retain(|s| culprit_store::glob::matches(pattern, s.machine.as_deref().unwrap_or("-")));
    }
    if json {
        output::println(&serde_json::to_string_pretty(&sessions)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    output::print(&crate::cmd::results::render_columns(&list_rows_of(&sessions)))?;
    Ok(ExitCode::SUCCESS)
}

/// `culprit bisect forget ID...`: removes each session from the store (its links to its runs, its range; the runs
/// stay, which compare, results and check read as any others), and what it left in its repository (its worktrees, a
/// build it left running, its lock file). Every id is checked first, so that a mistyped or running one forgets
/// nothing: a session a process drives (as `bisect list` tells it running) is refused, unless its repository is
/// gone, where nothing can drive it. A finished session is refused unless `force` is given: its answer and its
/// report (which `report` and the dashboard read from it) would go with it (QA 49: `forget` of a found session lost
/// both without a word).
fn forget(store: &mut dyn Store, ids: &[i64], force: bool) -> Result<ExitCode> {
    let mut forgotten = Vec::new();
    let mut finished = Vec::new();
    for &id in ids {
        let session = SessionId(id);
        if forgotten.iter().any(|s: &culprit_store::BisectSession| s.id == session) {
            continue;
        }
        let stored = match store.bisect_session(session) {
            Ok(stored) => stored,
            Err(culprit_store::StoreError::NotFound { .. }) => bail!(
                "no bisect session {id} in {}; `culprit bisect list` shows the sessions there are; nothing was \
                 forgotten",
                store.location()
            ),
            Err(e) => return Err(e.into()),
        };
        if shown_status(store, &stored) == NEW_SESSION_STATUS && Path::new(&stored.repo).exists() {
            bail!(
                "bisect session {id} is running: a culprit process drives it (it holds the session's lock in {} or its \
                 claim in the store); stop it (Ctrl-C) or let it finish, then forget it; nothing was forgotten",
                stored.repo
            );
        }
        if stored.status != NEW_SESSION_STATUS && !force {
            finished.push(format!("bisect session {id} is finished ({})", outcome_line(store, &stored)));
        }
        forgotten.push(stored);
    }
    if !finished.is_empty() {
        let (it, answer, report) = match finished.len() {
            1 => ("it", "that answer", "its report"),
            _ => ("them", "those answers", "their reports"),
        };
        bail!(
            "{}; forgetting {it} loses {answer} and {report} (`culprit report ID`), though the runs stay in the store; \
             add --force to forget {it} anyway; nothing was forgotten",
            finished.join("; ")
        );
    }
    for stored in forgotten {
        let repo = PathBuf::from(&stored.repo);
        let root = session_root(store, &repo, stored.id);
        let lock_path = root.with_extension("lock");
        // Held while the session goes, so that a `--resume` of it cannot start in between.
        let lock = match lock_path.is_file().then(|| crate::lock::try_lock(&lock_path)).transpose()? {
            Some(crate::lock::Lock::Busy { holder }) => bail!(
                "bisect session {} was taken up by another culprit ({holder}) while this one forgot it; it is kept",
                stored.id
            ),
            Some(crate::lock::Lock::Held(lock)) => Some(lock),
            None => None,
        };
        let runs = store.bisect_session_runs(stored.id)?.len();
        // Read before the session goes: its range goes with it.
        let (what, lost) = match stored.status == NEW_SESSION_STATUS {
            true => (shown_status_word(&stored.status).to_string(), ""),
            false => (outcome_line(store, &stored), "its answer and report are gone; "),
        };
        store.delete_bisect_session(stored.id)?;
        reap_leftover_step(&root.with_extension("step"));
        if root.is_dir() {
            Worktrees::discard(&repo, &root);
        }
        if let Some(lock) = lock {
            lock.remove()?;
        }
        crate::note!(
            "culprit: forgot bisect session {} ({what}, good {} bad {}); {lost}its {runs} runs stay in the store",
            stored.id,
            abbreviate(&stored.good, 12),
            abbreviate(&stored.bad, 12)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A finished session's answer in a line, for `forget` to say what it would lose: its status and what it names,
/// `found: 94f39d242e ("rev 10: work +40%")`, re-derived from its runs as `bisect log` and `report` show it (the
/// stored outcome of an older culprit may not read as this one's), or the status alone where it cannot be.
fn outcome_line(store: &dyn Store, stored: &culprit_store::BisectSession) -> String {
    let status = shown_status_word(&stored.status).to_string();
    let Ok(Replayed { range, machine, .. }) = replay(store, stored.id) else {
        return status;
    };
    match machine.outcome() {
        Some(outcome) => answer_words(outcome, &range),
        None => status,
    }
}

/// An answer in words: its status and what it names, `found: 94f39d242e ("rev 10: work +40%")`.
fn answer_words(outcome: &Outcome, range: &[RangeCommit]) -> String {
    let sha = |i: usize| range.get(i).map_or_else(|| format!("commit {i}"), |c| abbreviate(&c.sha, 10).to_string());
    let named: Vec<String> = outcome
        .culprits
        .iter()
        .map(|c| match (c.located, range.get(c.commit)) {
            (true, Some(commit)) => format!("{} (\"{}\")", sha(c.commit), commit.subject),
            (true, None) => sha(c.commit),
            (false, _) => format!("the range {}..{}", sha(c.after), sha(c.commit)),
        })
        .collect();
    match named.is_empty() {
        true => outcome.status.word().to_string(),
        false => format!("{}: {}", outcome.status.word(), named.join(", ")),
    }
}

/// When a finished session's runs, replayed by this culprit's engine (as `report`, `bisect log` and the dashboard
/// show a session), give another answer than the one the session stored when it ended (its `result_json`, the
/// outcome of the engine that ran it, which its mail named): the sentence that says so. A later culprit's engine can
/// decide otherwise on the same runs, or want more runs before it decides (`replayed` is `None`); the views show the
/// replay, and a maintainer comparing them with the mail must be told why they differ. `None` when the answers agree
/// (the same status and commits named; shares and confidences are not compared), for a session that has not ended
/// (its status is still the new session's, as `bisect forget` reads it), and when the stored answer does not read as
/// this culprit's outcome and its status agrees with the replay's.
pub fn stored_answer_differs(
    stored: &culprit_store::BisectSession,
    range: &[RangeCommit],
    replayed: Option<&Outcome>,
) -> Option<String> {
    if stored.status == NEW_SESSION_STATUS {
        return None;
    }
    let kept: Option<Outcome> = stored.result_json.as_deref().and_then(|json| serde_json::from_str(json).ok());
    let named = |o: &Outcome| -> Vec<(usize, usize, bool)> {
        o.culprits.iter().map(|c| (c.commit, c.after, c.located)).collect()
    };
    let agree = match (&kept, replayed) {
        (_, None) => false,
        (Some(kept), Some(now)) => kept.status == now.status && named(kept) == named(now),
        (None, Some(now)) => now.status.word() == stored.status,
    };
    if agree {
        return None;
    }
    let then = kept.as_ref().map_or_else(|| stored.status.clone(), |kept| answer_words(kept, range));
    let id = stored.id;
    Some(match replayed {
        Some(now) => format!(
            "bisect session {id} ended as {then} under the culprit that ran it (its mail named that); this \
             culprit's engine, replaying its runs, gives {}, which is what is shown here",
            answer_words(now, range)
        ),
        None => format!(
            "bisect session {id} ended as {then} under the culprit that ran it (its mail named that); this \
             culprit's engine, replaying its runs, wants more runs before it decides: `culprit bisect --resume {id}` \
             lets it finish (its answer may differ)"
        ),
    })
}

/// A stored status as `forget` names it: a session stored as running that it may forget was stopped.
fn shown_status_word(status: &str) -> &str {
    if status == NEW_SESSION_STATUS {
        "stopped"
    } else {
        status
    }
}

/// One session as `bisect list` shows it (and `bisect list --json` gives it, with full SHAs): the machine is the
/// one the session measures on, which a farm's shared store needs to tell its sessions apart (`None` for a session
/// stored before sessions named theirs that has no run yet).
#[derive(Debug, serde::Serialize)]
pub struct ListedSession {
    pub id: i64,
    pub status: String,
    pub metric: Option<String>,
    /// Whether the session bisects an improvement (`bisect --improvement`), whose "found" names no regression.
    pub improvement: bool,
    pub good: String,
    pub bad: String,
    pub machine: Option<String>,
    pub repo: String,
    /// For a stopped session: the latest later session that covers it (see [`superseding_session`]), which
    /// `--resume` of this one would only repeat part of; `culprit bisect forget` drops it.
    pub superseded_by: Option<i64>,
    /// Whether it ended because bad differs from good the other way than it searched (an improvement where it
    /// searched a regression): its status is "not-reproduced", which alone read as "no change" (QA 59).
    pub opposite: bool,
}

/// Every stored session, oldest first, read from the stored JSON alone, so that a session this culprit cannot
/// replay is still listed.
pub fn listed_sessions(store: &dyn Store) -> Result<Vec<ListedSession>> {
    let sessions = store.bisect_sessions()?;
    let mut listed = Vec::new();
    for s in &sessions {
        let config = serde_json::from_str::<serde_json::Value>(&s.config_json).ok();
        let improvement = config.as_ref().and_then(|c| c.get("improvement")?.as_bool()).unwrap_or(false);
        let outcome = s.result_json.as_deref().and_then(|j| serde_json::from_str::<serde_json::Value>(j).ok());
        let opposite = outcome.as_ref().and_then(|o| o.get("improved")?.as_bool()).unwrap_or(false);
        listed.push(ListedSession {
            id: s.id.0,
            status: shown_status(store, s),
            metric: s.metric.clone(),
            improvement,
            good: s.good.clone(),
            bad: s.bad.clone(),
            machine: machine_of(store, s).ok().flatten(),
            repo: s.repo.clone(),
            superseded_by: None,
            opposite,
        });
    }
    for index in 0..listed.len() {
        if listed[index].status == "stopped" {
            listed[index].superseded_by = superseding_session(&sessions, &listed, index);
        }
    }
    Ok(listed)
}

/// The latest session after `sessions[index]` (a stopped one) that covers it ([`Coverage`]): resuming the stopped
/// session would bisect part of what that one bisects (QA 48, 9e). `listed` holds each session as `bisect list`
/// shows it, in the same order (its machine is read there).
fn superseding_session(
    sessions: &[culprit_store::BisectSession],
    listed: &[ListedSession],
    index: usize,
) -> Option<i64> {
    let coverage = |i: usize| Coverage::of_stored(&sessions[i], listed[i].machine.clone());
    let stopped = coverage(index)?;
    let is_ancestor = is_ancestor_in(Path::new(&sessions[index].repo));
    // The latest first: git is asked about as few sessions as can be.
    let later = (index + 1..sessions.len()).rev();
    later.filter_map(|i| Some((i, coverage(i)?))).find(|(_, c)| stopped.covered_by(c, &is_ancestor)).map(|(i, _)| {
        sessions[i].id.0
    })
}

/// The rows of `culprit bisect list`, header first: id, status, metric, good, bad, machine, repo, oldest session
/// first. The metric of a session that bisects an improvement says so.
pub fn list_rows(store: &dyn Store) -> Result<Vec<[String; 7]>> {
    Ok(list_rows_of(&listed_sessions(store)?))
}

fn list_rows_of(sessions: &[ListedSession]) -> Vec<[String; 7]> {
    let header = ["id", "status", "metric", "good", "bad", "machine", "repo"];
    let mut rows = vec![header.map(str::to_string)];
    for s in sessions {
        let metric = s.metric.clone().unwrap_or_default();
        let status = match (s.superseded_by, s.opposite) {
            (Some(later), _) => format!("{} (superseded by {later})", s.status),
            (None, true) if s.improvement => format!("{} (bad is worse)", s.status),
            (None, true) => format!("{} (bad is better)", s.status),
            (None, false) => s.status.clone(),
        };
        rows.push([
            s.id.to_string(),
            status,
            if s.improvement { format!("{metric} (improvement)") } else { metric },
            s.good[..s.good.len().min(12)].to_string(),
            s.bad[..s.bad.len().min(12)].to_string(),
            s.machine.clone().unwrap_or_else(|| "-".into()),
            s.repo.clone(),
        ]);
    }
    rows
}

/// A session's status as `bisect list` shows it. A session is stored as running until it ends, whether a process
/// drives it or it was stopped (Ctrl-C, kill -9, a failure that is not the commit's) and waits for `--resume`; the
/// driving process holds the session's lock in its repository, so a lock file that no process holds says it was
/// stopped. A culprit killed after storing its session but before taking that lock left only the start lock of its
/// command, which it held from before the session was stored, so that one tells. Without either file (a session
/// driven on another machine of the farm, or a repository moved away) there is nothing to tell, and it stays
/// "running". A store shared by a farm (PostgreSQL) keeps the claim of the process driving a session, which tells for
/// every machine.
pub(crate) fn shown_status(store: &dyn Store, session: &culprit_store::BisectSession) -> String {
    if session.status != NEW_SESSION_STATUS {
        return session.status.clone();
    }
    match store.bisect_session_claim(session.id) {
        Ok(culprit_store::SessionClaim::HeldBy(_)) => return session.status.clone(),
        Ok(culprit_store::SessionClaim::Free) => return "stopped".to_string(),
        Ok(culprit_store::SessionClaim::Unsupported) | Err(_) => {}
    }
    let repo = Path::new(&session.repo);
    // A session whose repository is gone (removed, moved) has nothing driving it: its worktrees and its lock lived
    // in that repository, and `bisect forget` takes it as stopped (QA 57: `bisect list` said "running").
    if !repo.exists() {
        return "stopped".to_string();
    }
    let mut lock = session_root(store, repo, session.id).with_extension("lock");
    // A session a culprit before the store's tag stopped has its lock under the id alone.
    if !lock.exists() {
        lock = worktree_root(repo, &format!("session-{}", session.id)).with_extension("lock");
    }
    if !lock.exists() {
        if let Some(start_lock) = stored_start_lock(session) {
            lock = start_lock;
        }
    }
    if crate::lock::is_unheld(&lock) {
        "stopped".to_string()
    } else {
        session.status.clone()
    }
}

/// The start lock of the command that began stored `session`, from its stored configuration, read as JSON alone (as
/// `bisect list` reads it, so that a session this culprit cannot replay is still listed); `None` when it lacks a
/// field the lock's name needs.
fn stored_start_lock(session: &culprit_store::BisectSession) -> Option<PathBuf> {
    let config: serde_json::Value = serde_json::from_str(&session.config_json).ok()?;
    let text = |key: &str| config.get(key).and_then(serde_json::Value::as_str).map(str::to_string);
    let others: Vec<String> = match config.get("other_goods") {
        None => Vec::new(),
        Some(list) => serde_json::from_value(list.clone()).ok()?,
    };
    let improvement = config.get("improvement").and_then(serde_json::Value::as_bool).unwrap_or(false);
    let (good, bad, job_id) = (text("good")?, text("bad")?, session.job_id.as_deref()?);
    let identity = start_identity(&good, &bad, &others, job_id, &text("build"), &text("deploy"), improvement);
    Some(start_lock_path(Path::new(&text("repo")?), &identity))
}

/// `err`, when a session named on the command line does not exist, with where to find the ones that do. Added at the
/// commands' edge (`bisect log`, `report`), not in [`replay`], whose typed error the dashboard answers with a 404.
pub(crate) fn with_list_hint(err: anyhow::Error) -> anyhow::Error {
    let missing = err.chain().any(|cause| {
        matches!(cause.downcast_ref::<culprit_store::StoreError>(), Some(culprit_store::StoreError::NotFound { .. }))
    });
    match missing {
        true => anyhow::anyhow!("{err}; `culprit bisect list` shows the sessions there are"),
        false => err,
    }
}

/// A stored session replayed: its configuration, range, runs, samples, and the machine they lead to.
pub struct Replayed {
    pub stored: culprit_store::BisectSession,
    pub config: SessionConfig,
    pub range: Vec<RangeCommit>,
    pub records: Vec<RunRecord>,
    pub samples: Vec<(usize, Sample)>,
    pub machine: Bisect,
}

/// Replays a stored session's runs into a fresh machine (bisect state is derived, never stored).
pub fn replay(store: &dyn Store, session: SessionId) -> Result<Replayed> {
    let stored = store.bisect_session(session)?;
    let config: SessionConfig = serde_json::from_str(&stored.config_json)
        .with_context(|| format!("bisect session {session} has a configuration this culprit cannot read"))?;
    let range = session_range(store, session, &config)?;
    let ids = culprit_run::bisect::bisect_runs(store, session)?;
    let records = store.runs(&ids)?;
    let mut samples = Vec::new();
    for r in &records {
        if let Some(i) = range.iter().position(|c| c.sha == r.revision.key()) {
            samples.push((i, sample_of(r, &config.metric)));
        }
    }
    let machine = Bisect::replay(config.bisect.clone(), &commit_nodes(&range), &samples)?;
    Ok(Replayed { stored, config, range, records, samples, machine })
}

/// The candidate commits of a session: the ones stored with it, so that its log and report need no repository
/// (a farm's dashboard, a throwaway repository since deleted); from the repository for a session stored before
/// the store kept ranges.
fn session_range(store: &dyn Store, session: SessionId, config: &SessionConfig) -> Result<Vec<RangeCommit>> {
    let stored = store.bisect_session_range(session)?;
    if stored.is_empty() {
        let goods: Vec<&str> = std::iter::once(&config.good).chain(&config.other_goods).map(String::as_str).collect();
        return git::bisect_range_of(&config.repo, &goods, &config.bad).map(|(range, _)| range).with_context(|| {
            format!("bisect session {session} was stored without its range, so it is read from the repository")
        });
    }
    Ok(stored.into_iter().map(|c| RangeCommit { sha: c.sha, subject: c.subject, parents: c.parents }).collect())
}

/// `culprit bisect log ID`: replays the stored runs into the machine to show every decision and its reason.
fn log(store: &mut dyn Store, session: SessionId, json: bool) -> Result<ExitCode> {
    if !json {
        output::print(&session_log(store, session)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let Replayed { stored, config, range, samples, machine, .. } = replay(store, session)?;
    // The steps name commits by their position in the range, as the text log does; `commits` gives each position
    // its SHA, and the outcome names its commits by SHA, as `culprit bisect --json` prints it (the machine's own
    // outcome, by position alone, named no commit a reader could find).
    let value = serde_json::json!({
        "session": session.0,
        // As `bisect list` shows it: a session no process drives any more is stopped, not running.
        "status": shown_status(store, &stored),
        "log": machine.log(),
        "commits": named_positions(&range, &samples, &machine).into_iter().map(|position| serde_json::json!({
            "position": position,
            "sha": range[position].sha,
            "subject": range[position].subject,
        })).collect::<Vec<_>>(),
        // Each run with what the machine's last decision subtracted from it for drift and for load (null for a
        // failed run and for runs no decision has read yet), so the levels it decided on can be recomputed.
        "samples": samples.iter().zip(corrections_by_record(&machine, samples.len())).map(|((i, s), correction)| {
            let value = match s { Sample::Value(v) => Some(*v), Sample::Untestable => None };
            let correction = correction.filter(|_| value.is_some());
            serde_json::json!({
                "sha": range[*i].sha,
                "value": value,
                "warmup_correction": correction.map(|c| c.warmup),
                "drift_correction": correction.map(|c| c.drift),
                "load_correction": correction.map(|c| c.load),
            })
        }).collect::<Vec<_>>(),
        "outcome": machine.outcome().map(|outcome| result_json(session, &config, &range, outcome)),
        // When the answer the session stored as it ended is not the replay's (a later culprit's engine), the
        // sentence that says so; null when they agree.
        "stored_answer_differs": stored_answer_differs(&stored, &range, machine.outcome()),
    });
    output::println(&serde_json::to_string_pretty(&value)?)?;
    Ok(ExitCode::SUCCESS)
}

/// The machine's corrections of the first `samples` records, `None` past those its last decision read.
fn corrections_by_record(machine: &Bisect, samples: usize) -> Vec<Option<culprit_core::bisect::RunCorrection>> {
    let mut read: Vec<Option<_>> = machine.run_corrections().into_iter().map(Some).collect();
    read.resize(samples, None);
    read
}

/// The text of `culprit bisect log ID`, which the dashboard's session page shows too: every step with its reason,
/// then the outcome when the session has one.
pub fn session_log(store: &dyn Store, session: SessionId) -> Result<String> {
    Ok(log_text(store, &replay(store, session)?, session))
}

/// [`session_log`] of a session already replayed.
pub fn log_text(store: &dyn Store, replayed: &Replayed, session: SessionId) -> String {
    let Replayed { stored, config, range, records, samples, machine } = replayed;
    // A failed build or run is stored too (it makes its commit untestable), but the outcome's run count is of
    // measurements only, so the two are told apart here.
    let failed = samples.iter().filter(|(_, s)| matches!(s, Sample::Untestable)).count();
    let stored_runs = match failed {
        0 => format!("{} runs stored", samples.len()),
        n => format!("{} runs stored ({} measured, {n} failed builds or runs)", samples.len(), samples.len() - n),
    };
    let mut out = format!(
        "bisect {session}: {} in {} ({}..{}), metric {}{}, job {}\n{stored_runs}\n\nsteps:\n",
        shown_status(store, stored),
        config.repo.display(),
        abbreviate(&config.good, 12),
        abbreviate(&config.bad, 12),
        config.metric,
        // The steps' words are the engine's, which knows only "the change searched for": the header says which.
        if config.improvement { " (an improvement, --improvement)" } else { "" },
        config.job_source,
    );
    out.push_str(&steps_text(machine.log()));
    // The steps name commits by their position in the range (the machine is pure and knows no SHAs), so the
    // commits they can name, the two ends and every commit that has a stored run, are listed with their SHAs.
    let last = range.len().saturating_sub(1);
    out.push_str("\ncommits in the steps (position in the range, oldest first):\n");
    let width = last.to_string().len();
    for position in named_positions(range, samples, machine) {
        let commit = &range[position];
        let end = match position {
            0 => " (good)",
            p if p == last => " (bad)",
            _ => "",
        };
        out.push_str(&format!("  {position:>width$}  {}  {}{end}\n", abbreviate(&commit.sha, 12), commit.subject));
    }
    // Why the untestable commits are: the first failure of each (a build that does not compile, a deploy killed at
    // its timeout), which the steps and the evidence only mark as untestable.
    let mut failures: Vec<(usize, &str)> = Vec::new();
    for record in records {
        let (culprit_core::model::RunOutcome::Failed { reason }, Some(position)) =
            (&record.outcome, range.iter().position(|c| c.sha == record.revision.key()))
        else {
            continue;
        };
        if !failures.iter().any(|&(p, _)| p == position) {
            failures.push((position, reason));
        }
    }
    if !failures.is_empty() {
        failures.sort_by_key(|&(position, _)| position);
        out.push_str("\nfailed builds, deploys and runs (the first of each commit; `culprit results --failures`):\n");
        for (position, reason) in failures {
            let reason = culprit_run::process::shortened(reason, 2 * culprit_run::process::QUOTED_CHARS);
            out.push_str(&format!("  {position:>width$}  {}  {reason}\n", abbreviate(&range[position].sha, 12)));
        }
    }
    if let Some(outcome) = machine.outcome() {
        out.push('\n');
        out.push_str(&render_outcome(session, config, range, outcome, None));
    }
    if let Some(words) = stored_answer_differs(stored, range, machine.outcome()) {
        out.push('\n');
        out.push_str(&culprit_core::report::wrap(&format!("note: {words}"), ""));
    }
    out
}

/// The steps of a log, one a decision, except that a decision taken again and again in a row (under heavy noise QA
/// 50 saw one commit run 28 times over, one verify pair asked for 61 times) is one entry, with its first and last
/// reasons: the reasons in between only move its numbers, and `bisect log --json` keeps every step.
fn steps_text(log: &[culprit_core::bisect::LogEntry]) -> String {
    /// Fewer repeats than this are listed one by one: two lines say no more folded than unfolded.
    const FOLD_FROM: usize = 3;
    let mut out = String::new();
    let mut first = 0;
    while first < log.len() {
        let entry = &log[first];
        let repeats =
            log[first..].iter().take_while(|e| e.phase == entry.phase && e.decision == entry.decision).count();
        if repeats < FOLD_FROM {
            for (i, entry) in log[first..first + repeats].iter().enumerate() {
                out.push_str(&format!(
                    "{:>3}. [{} runs] {}: {}\n     because {}\n",
                    first + i + 1,
                    entry.runs,
                    entry.phase,
                    entry.decision,
                    entry.reason
                ));
            }
        } else {
            let last = &log[first + repeats - 1];
            out.push_str(&format!(
                "{:>3}. to {}. [{} to {} runs] {}: {}, {repeats} times in a row\n     the first because {}\n     \
                 the last because {}\n",
                first + 1,
                first + repeats,
                entry.runs,
                last.runs,
                entry.phase,
                entry.decision,
                entry.reason,
                last.reason
            ));
        }
        first += repeats;
    }
    out
}

/// The positions in the range the steps of a log can name: the two ends, every commit with a stored run, and the
/// commits the last step asked to run, which a stopped session may not have run yet (QA 57: "run new commit 9
/// once" named a commit the list left out).
fn named_positions(range: &[RangeCommit], samples: &[(usize, Sample)], machine: &Bisect) -> BTreeSet<usize> {
    let last = range.len().saturating_sub(1);
    let asked: Vec<usize> = match machine.next_action() {
        culprit_core::bisect::Action::RunBatch(batch) => batch.iter().map(|&(commit, _)| commit).collect(),
        culprit_core::bisect::Action::Done(_) => Vec::new(),
    };
    samples.iter().map(|(commit, _)| *commit).chain(asked).chain([0, last]).filter(|&p| p < range.len()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qa59_a_session_that_found_the_other_change_says_so_in_the_list() {
        let session = |id: i64, improvement: bool, opposite: bool| ListedSession {
            id,
            status: "not-reproduced".to_string(),
            metric: Some("command.user_time".to_string()),
            improvement,
            good: "a".repeat(40),
            bad: "b".repeat(40),
            machine: None,
            repo: "/r".to_string(),
            superseded_by: None,
            opposite,
        };
        let rows = list_rows_of(&[session(1, false, true), session(2, true, true), session(3, false, false)]);
        let statuses: Vec<&str> = rows[1..].iter().map(|row| row[1].as_str()).collect();
        assert_eq!(statuses, ["not-reproduced (bad is better)", "not-reproduced (bad is worse)", "not-reproduced"]);
    }

    #[test]
    fn qa58_a_range_of_one_commit_is_that_commit() {
        // good 0; 1 and 2 in a line; 3 a merge of 2 and a side commit 4 forked from good (parent 0).
        let commit =
            |parents: &[usize]| RangeCommit { sha: String::new(), subject: String::new(), parents: parents.to_vec() };
        let range = [commit(&[]), commit(&[0]), commit(&[1]), commit(&[2, 4]), commit(&[0])];
        assert!(is_one_commit_range(&range, 1, 2));
        assert!(is_one_commit_range(&range, 0, 1) && is_one_commit_range(&range, 0, 4));
        assert!(!is_one_commit_range(&range, 0, 2), "(0, 2] holds 1 and 2");
        assert!(!is_one_commit_range(&range, 2, 3), "(2, 3] holds the merge and its side commit");
        assert!(!is_one_commit_range(&range, 1, 9));
    }

    #[test]
    fn a_decision_taken_again_and_again_in_a_row_is_one_step_of_the_log() {
        let entry = |runs: usize, decision: &str, reason: &str| culprit_core::bisect::LogEntry {
            runs,
            phase: "verify".into(),
            decision: decision.into(),
            reason: reason.into(),
        };
        let pair = "one more interleaved pair at 803 and 804";
        let mut log = vec![entry(37, "2 fresh interleaved pairs at 803 and 804", "fresh runs")];
        log.extend((0..5).map(|i| entry(41 + 2 * i, pair, &format!("paired step {i}"))));
        log.push(entry(51, "commit 804 confirmed", "paired step 5"));
        log.extend((0..2).map(|i| entry(53 + i, "run commit 9 once", &format!("reason {i}"))));
        let text = steps_text(&log);
        assert!(text.contains(&format!("  2. to 6. [41 to 49 runs] verify: {pair}, 5 times in a row\n")), "{text}");
        assert!(text.contains("     the first because paired step 0\n     the last because paired step 4\n"), "{text}");
        assert!(!text.contains("paired step 2"), "the reasons in between are left to --json: {text}");
        // The steps after the folded ones keep their numbers; two in a row are listed one by one.
        assert!(text.contains("  7. [51 runs] verify: commit 804 confirmed\n"), "{text}");
        assert!(text.contains("  8. [53 runs] verify: run commit 9 once\n     because reason 0\n"), "{text}");
        assert!(text.contains("  9. [54 runs] verify: run commit 9 once\n     because reason 1\n"), "{text}");
    }

    #[test]
    fn one_rule_says_when_a_later_session_covers_a_stopped_one() {
        let stopped = Coverage {
            repo: "/src/linux".into(),
            job_id: Some("job-1".into()),
            metric: Some("command.user_time".into()),
            machine: Some("lab-3".into()),
            improvement: false,
            good: "a".repeat(40),
            other_goods: vec![],
            bad: "b".repeat(40),
        };
        // In this history b is an ancestor of c, and nothing else is related.
        let history = |older: &str, newer: &str| older.starts_with('b') && newer.starts_with('c');
        let later = Coverage { bad: "c".repeat(40), ..stopped.clone() };
        assert!(stopped.covered_by(&later, history));
        assert!(stopped.covered_by(&stopped, |_, _| false), "the same bad covers without asking git");
        let unknown = Coverage { metric: None, machine: None, ..later.clone() };
        assert!(stopped.covered_by(&unknown, history), "a metric or machine not known yet matches any");
        let differs: [(&str, Coverage); 9] = [
            ("repository", Coverage { repo: "/src/other".into(), ..later.clone() }),
            ("job", Coverage { job_id: Some("job-2".into()), ..later.clone() }),
            ("no job", Coverage { job_id: None, ..later.clone() }),
            ("metric", Coverage { metric: Some("command.elapsed_time".into()), ..later.clone() }),
            ("machine", Coverage { machine: Some("lab-4".into()), ..later.clone() }),
            ("direction", Coverage { improvement: true, ..later.clone() }),
            ("good", Coverage { good: "d".repeat(40), ..later.clone() }),
            ("other goods", Coverage { other_goods: vec!["e".repeat(40)], ..later.clone() }),
            ("a bad not after it", Coverage { bad: "f".repeat(40), ..later.clone() }),
        ];
        for (what, later) in differs {
            assert!(!stopped.covered_by(&later, history), "{what}");
        }
    }

    #[test]
    fn qa48_the_progress_line_says_what_the_whole_bisect_has_left_or_that_it_cannot_tell_yet() {
        let left = |runs, builds| Estimate::Left { runs, builds };
        let cases = [
            (Estimate::NotConfirmed, Some(30.0), "estimate after the regression is confirmed"),
            // QA 49 5b: the estimate assumes one change, and says so.
            (left(40, 3), Some(360.0), "about 40 runs and 3 builds left if one commit explains it, ~6 min"),
            (left(12, 1), Some(45.0), "about 12 runs and 1 build left if one commit explains it, ~45s"),
            (left(9, 0), None, "about 9 runs left if one commit explains it"),
            (left(300, 20), Some(9000.0), "about 300 runs and 20 builds left if one commit explains it, ~2.5 h"),
            (Estimate::Done, Some(0.0), "done"),
        ];
        for (estimate, seconds, want) in cases {
            assert_eq!(estimate_text(estimate, seconds), want);
        }
    }

    #[test]
    fn a_session_whose_culprit_was_killed_before_taking_its_lock_is_listed_stopped() {
        // A culprit killed between storing its session and taking the session's lock left no session lock, and the
        // session was listed "running" for good (a CI run of qa11's track test killed it in that moment).
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        let mut store = culprit_store::SqliteStore::open(dir.path().join("s.db")).unwrap();
        let (good, bad) = ("a".repeat(40), "b".repeat(40));
        let config = serde_json::json!({ "repo": repo, "good": good, "bad": bad, "build": "make -s", "deploy": null });
        let session = store
            .create_bisect_session(&NewBisectSession {
                repo: repo.display().to_string(),
                good: good.clone(),
                bad: bad.clone(),
                job_id: Some("0123456789abcdef".into()),
                metric: Some("command.user_time".into()),
                config_json: config.to_string(),
                created_at: 0.0,
                range: Vec::new(),
            })
            .unwrap();
        let stored = store.bisect_session(session).unwrap();
        let identity = start_identity(&good, &bad, &[], "0123456789abcdef", &Some("make -s".into()), &None, false);
        let start_lock = start_lock_path(&repo, &identity);
        std::fs::create_dir_all(start_lock.parent().unwrap()).unwrap();
        // Without any lock file nothing tells (a session of another machine of the farm).
        assert_eq!(shown_status(&store, &stored), "running");
        // The start lock held: the culprit is storing the session and about to lock it.
        let crate::lock::Lock::Held(held) = crate::lock::try_lock(&start_lock).unwrap() else { panic!("busy") };
        assert_eq!(stored_start_lock(&stored), Some(start_lock.clone()));
        assert_eq!(shown_status(&store, &stored), "running");
        // Its holder gone (the kill -9 leaves the file): stopped.
        drop(held);
        assert!(start_lock.exists());
        assert_eq!(shown_status(&store, &stored), "stopped");
    }

    /// QA 57: a session stopped before it ran the commit its last step asked for named that commit in its steps and
    /// left it out of the list of commits by SHA.
    #[test]
    fn the_commits_a_stopped_session_asked_for_are_listed_by_sha() {
        use culprit_core::bisect::{Action, CommitNode};
        let nodes: Vec<CommitNode> = (0..10)
            .map(|i: usize| CommitNode { parents: i.checked_sub(1).into_iter().collect(), untestable: false })
            .collect();
        let range: Vec<RangeCommit> =
            (0..10).map(|i| RangeCommit { sha: format!("{i:040}"), subject: String::new(), parents: vec![] }).collect();
        // Good at 1.0 and bad at 2.0, clearly apart: the machine goes on to a commit between them.
        let samples: Vec<(usize, Sample)> = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98]
            .iter()
            .flat_map(|&v| [(0, Sample::Value(v)), (9, Sample::Value(v + 1.0))])
            .collect();
        let machine = Bisect::replay(BisectConfig::default(), &nodes, &samples).unwrap();
        let Action::RunBatch(batch) = machine.next_action() else { panic!("the bisect asks for runs") };
        let asked: Vec<usize> = batch.iter().map(|&(c, _)| c).filter(|c| *c != 0 && *c != 9).collect();
        assert!(!asked.is_empty(), "{batch:?}");
        let named = named_positions(&range, &samples, &machine);
        assert!(asked.iter().all(|c| named.contains(c)), "{asked:?} {named:?}");
    }

    #[test]
    fn the_machines_commit_positions_are_named_by_sha_in_what_people_read() {
        let range: Vec<RangeCommit> = (0..3)
            .map(|i| RangeCommit {
                sha: format!("{i}{}", "abcdef0123456789".repeat(3)),
                subject: String::new(),
                parents: vec![],
            })
            .collect();
        // (machine text, as printed)
        let cases = [
            ("commit 2 would explain 197% of the change", "commit 2abcdef01234 would explain 197% of the change"),
            (
                "commit 1 did not differ from commit 0: step",
                "commit 1abcdef01234 did not differ from commit 0abcdef01234: step",
            ),
            ("every segment is settled", "every segment is settled"),
            ("commit 7 is past the range; commit x; commit", "commit 7 is past the range; commit x; commit"),
        ];
        for (text, printed) in cases {
            assert_eq!(name_commits(text, &range), printed);
        }
    }

    #[test]
    fn a_run_job_is_named_after_its_program() {
        for (command_line, want) in [
            ("./bench --size 4/8", "bench"),
            ("make -C src test", "make"),
            ("CC=gcc OPT=-O2 /usr/bin/time -v ./x", "time"),
            ("'quoted'", "quoted"),
            ("../", "command"),
        ] {
            assert_eq!(run_job_file_name(command_line), want, "{command_line}");
        }
        let dir = tempfile::tempdir().unwrap();
        let command = TimedCommandArgs { run: Some("./bench --size 4/8".into()), warmup: None };
        let (yaml, source, _) = benchmark_job(None, &command).unwrap();
        let job = plan_job(&yaml, &source, dir.path()).unwrap();
        assert!(job.job_name.starts_with("bench-"), "{}", job.job_name);
    }

    #[test]
    fn run_command_becomes_a_command_job() {
        let yaml = command_job_yaml("make bench && ./bench --quick 'x y'", None);
        let file = culprit_job::JobFile::parse(&yaml, "t").unwrap();
        let jobs = file.expand().unwrap();
        assert_eq!(jobs.len(), 1);
        let programs = jobs[0].programs();
        assert_eq!(programs[0].name, "command");
        assert_eq!(programs[0].params.get("cmd").and_then(|v| v.as_str()), Some("make bench && ./bench --quick 'x y'"));
        assert!(programs[0].params.get("warmup").is_none());
        // --warmup N becomes the job's warmup, and the source names it.
        let command = TimedCommandArgs { run: Some("./bench".into()), warmup: Some(2) };
        let (yaml, source, metric) = benchmark_job(None, &command).unwrap();
        let jobs = culprit_job::JobFile::parse(&yaml, "t").unwrap().expand().unwrap();
        assert_eq!(jobs[0].programs()[0].params.get("warmup").and_then(|v| v.as_u64()), Some(2));
        assert_eq!((source.as_str(), metric.as_deref()), ("--run ./bench --warmup 2", Some("command.elapsed_time")));
        // With a job file it is refused (the job says its own warm-up), naming the file.
        let warmup_only = TimedCommandArgs { run: None, warmup: Some(1) };
        let err = benchmark_job(Some(Path::new("my.yaml")), &warmup_only).unwrap_err().to_string();
        assert!(err.contains("--warmup goes with --run") && err.contains("my.yaml"), "{err}");
    }

    #[test]
    fn the_metric_chosen_is_a_kpi_when_one_changed() {
        let record = |metrics: &[(&str, f64)]| RunRecord {
            job_id: String::new(),
            job_name: String::new(),
            testcase: String::new(),
            params: Vec::new(),
            job_yaml: String::new(),
            revision: culprit_core::model::Revision::Label { name: "x".into() },
            machine: machine::this_machine(),
            started_at: 0.0,
            ended_at: 0.0,
            outcome: culprit_core::model::RunOutcome::Ok,
            exit_code: Some(0),
            metrics: metrics.iter().map(|&(k, v)| (k.to_string(), v)).collect(),
            monitors: Vec::new(),
            raw_outputs: Vec::new(),
            stderr: String::new(),
            scratch: None,
        };
        // fio.workload drops exactly as fio.write_iops does (so with as small a q), and fio.write_clat_mean_us rises
        // by more: the KPI is still what is bisected.
        let runs = |iops: f64, noise: &[f64]| -> Vec<RunRecord> {
            noise
                .iter()
                .map(|e| {
                    record(&[
                        ("fio.write_iops", iops * (1.0 + e)),
                        ("fio.workload", 5.0 * iops * (1.0 + e)),
                        ("fio.write_clat_mean_us", 1e6 / (iops * (1.0 + e)) * (1.0 + 3.0 * e)),
                    ])
                })
                .collect()
        };
        let (good, bad) = (runs(1000.0, &[0.01, -0.01, 0.0, 0.005]), runs(780.0, &[0.0, 0.01, -0.008, -0.004]));
        let chosen = choose_metric(&good, &bad).unwrap();
        assert_eq!((chosen.name.as_str(), chosen.candidates, chosen.significant), ("fio.write_iops", 3, true));
        // Without a KPI among the metrics, the most significant change is taken.
        let strip = |runs: Vec<RunRecord>| -> Vec<RunRecord> {
            runs.into_iter()
                .map(|mut r| {
                    r.metrics.remove("fio.write_iops");
                    r
                })
                .collect()
        };
        let chosen = choose_metric(&strip(good.clone()), &strip(bad.clone())).unwrap().name;
        assert!(chosen == "fio.workload" || chosen == "fio.write_clat_mean_us", "{chosen}");
        // A KPI that did not move is no reason to skip one that did, even when nothing is significant yet.
        let with_constant = |runs: &[RunRecord], keep: usize| -> Vec<RunRecord> {
            runs.iter()
                .take(keep)
                .map(|r| {
                    let mut r = r.clone();
                    r.metrics.remove("fio.write_iops");
                    r.metrics.insert("command.ops".into(), 100.0);
                    r
                })
                .collect()
        };
        for keep in [2, 3] {
            let chosen = choose_metric(&with_constant(&good, keep), &with_constant(&bad, keep)).unwrap();
            assert_ne!(chosen.name, "command.ops", "{keep} runs a side");
        }
        // Good and bad alike: a metric is still chosen (the bisect then ends "not reproduced"), and it says that its
        // change was not significant, which the command line tells the user.
        let same = runs(1000.0, &[0.0, 0.01, -0.008, -0.004]);
        assert!(!choose_metric(&good, &same).unwrap().significant);
        // QA 48: a captured size, one number in every run at good and another at bad, beside a wall time that did
        // not change, is a significant change (it was "the closest to a change" of metrics that did not change).
        let sized = |size: f64, times: &[f64]| -> Vec<RunRecord> {
            times.iter().map(|&t| record(&[("command.size", size), ("command.elapsed_time", t)])).collect()
        };
        let (good, bad) = (sized(15960.0, &[0.061, 0.058, 0.066]), sized(15992.0, &[0.060, 0.064, 0.059]));
        let chosen = choose_metric(&good, &bad).unwrap();
        assert_eq!((chosen.name.as_str(), chosen.significant), ("command.size", true));
        // The same size at both ends is no change, however steady.
        let chosen = choose_metric(&good, &sized(15960.0, &[0.060, 0.064, 0.059])).unwrap();
        assert!(!chosen.significant, "{}", chosen.name);
        // QA 57: a command job without a capture, 3 runs a side: its wall time rose 29% and its peak memory fell 7%,
        // the memory's sides varying less. The wall time is the job's primary metric, and it changed: it is bisected
        // (the memory was, and the bisect of the slowdown ended "not reproduced").
        let command = |times: &[(f64, f64, f64)]| -> Vec<RunRecord> {
            times
                .iter()
                .map(|&(elapsed, user, rss)| {
                    record(&[
                        ("command.elapsed_time", elapsed),
                        ("command.user_time", user),
                        ("command.max_resident_set_size", rss),
                    ])
                })
                .collect()
        };
        let good = command(&[(0.0475, 0.0462, 1552.0), (0.0469, 0.0460, 1544.0), (0.0474, 0.0468, 1580.0)]);
        let bad = command(&[(0.0610, 0.0590, 1428.0), (0.0592, 0.0585, 1464.0), (0.0634, 0.0601, 1464.0)]);
        let chosen = choose_metric(&good, &bad).unwrap();
        assert_eq!((chosen.name.as_str(), chosen.significant), ("command.elapsed_time", true));
    }

    #[test]
    fn limits_read_as_the_command_line_gives_them() {
        assert_eq!(limits((600, 0.0)), "--max-runs 600, no --min-change");
        // 0.07 * 100 is 7.000000000000001 in floating point; the user typed 7.
        assert_eq!(limits((300, 0.07)), "--max-runs 300, --min-change 7%");
        assert_eq!(limits((300, 0.0225)), "--max-runs 300, --min-change 2.25%");
    }

    #[test]
    fn directions_follow_the_table() {
        assert_eq!(bisect_direction("command.elapsed_time"), BisectDirection::HigherIsWorse);
        assert_eq!(bisect_direction("fio.write_iops"), BisectDirection::LowerIsWorse);
        assert_eq!(bisect_direction("something.unknown"), BisectDirection::Any);
        // --improvement searches the metric's better direction; a metric of unknown direction is searched both ways.
        assert_eq!(searched_direction("command.elapsed_time", true), BisectDirection::LowerIsWorse);
        assert_eq!(searched_direction("fio.write_iops", true), BisectDirection::HigherIsWorse);
        assert_eq!(searched_direction("something.unknown", true), BisectDirection::Any);
        assert_eq!(searched_direction("command.elapsed_time", false), BisectDirection::HigherIsWorse);
    }
}
