//! The outer layer of a bisect: git worktrees, builds, deploys and runs, driven by the pure state machine in
//! `culprit_core::bisect`.
//!
//! The state machine decides which commits to run and how often; this layer does it and records every finished run
//! in the store at once, linked to the bisect session. Nothing else is kept: resuming after a crash (or `kill -9`)
//! reads the session's runs back in order and replays them into a fresh machine, which then asks for exactly what
//! the crashed one would have asked for next. At most the run in flight is lost.

use crate::executor::{self, JobRun, RunContext};
use crate::git::{self, GitError, RangeCommit};
use crate::process::{self, Invocation};
use crate::step_record;
use crate::worktree::Worktrees;
use culprit_core::bisect::{
    estimate_left, next_in_batch, Action, Bisect, BisectConfig, BisectError, CommitNode, Estimate, Outcome, Sample,
};
use culprit_core::model::{RawOutput, Revision, RunOutcome, RunRecord};
use culprit_store::{RunFilter, RunId, RunKind, SaveOptions, SessionId, Store, StoreError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Everything a session needs to be resumed, stored as the session's config JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionConfig {
    pub repo: PathBuf,
    /// The good end the bisect measures (index 0 of the range): the first `--good`, or its merge base with bad.
    pub good: String,
    pub bad: String,
    /// The other good ends of a bisect given several `--good` (each an ancestor of bad, merge bases standing for the
    /// goods that are not): they only bound the candidates and are never measured, as git bisect takes its good
    /// commits. A session stored before several were taken has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_goods: Vec<String>,
    /// The atomic job run at each commit, as YAML (for `--run CMD`, a `command` job).
    pub job_yaml: String,
    /// Where the job came from, for humans.
    pub job_source: String,
    pub metric: String,
    pub build: Option<String>,
    pub deploy: Option<String>,
    /// How long the build and the deploy may take; a session stored before they had limits reads the defaults.
    #[serde(default)]
    pub timeouts: StepTimeouts,
    /// Whether the session bisects an improvement (`--improvement`): the change searched for is bad measuring better
    /// than good, and `bisect.direction` is the metric's worse direction flipped. The views word their verdicts from
    /// it; a session stored before the flag existed bisected a regression, so it reads false.
    #[serde(default)]
    pub improvement: bool,
    /// The state machine's configuration, with the build and run costs as measured when the session started.
    pub bisect: BisectConfig,
    /// The machine (host name) the session measures on: its runs are compared with each other only, so it is driven
    /// there alone. Empty in a session stored before sessions named it (its runs tell, see their machine).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub machine: String,
    /// The runs of good and bad `culprit bisect` took before the session existed (to measure a build's and a run's
    /// cost and, without `--metric`, to choose the metric). Runs that chose the metric are not the session's samples,
    /// which they would bias, so nothing links them to it: they are listed here, so that what leaves a bisect's runs
    /// out of a history (`track --follow`) leaves these out too. A session stored before has none listed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probe_runs: Vec<RunId>,
    /// Whether `probe_runs` chose the metric (no `--metric` was given), so that they are not the session's samples
    /// and its `runs` leave them out: the summary and JSON count them beside it, as runs the bisect cost (QA 50: 21
    /// runs reported where 27 were made). False in a session stored before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub probe_chose_metric: bool,
    /// The directory the benchmark's files go in (`--scratch`, absolute), which every run of the session, resumed
    /// or not, takes and which the report's reproduce steps pass; `None` for the default under the system temp dir
    /// (and in a session stored before sessions kept it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scratch: Option<PathBuf>,
    /// Whether the commits' worktrees hold no files (`--no-checkout`): the hooks build `$CULPRIT_COMMIT` from a tree
    /// of their own. False in a session stored before the option.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_checkout: bool,
}

/// How long the build and the deploy of one commit may take before their process group is killed, in seconds
/// (`None`: no limit). A step killed at its limit fails like one that exits non-zero: its commit is untestable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct StepTimeouts {
    pub build_secs: Option<u64>,
    pub deploy_secs: Option<u64>,
}

impl Default for StepTimeouts {
    fn default() -> Self {
        StepTimeouts {
            build_secs: Some(DEFAULT_BUILD_TIMEOUT.as_secs()),
            deploy_secs: Some(DEFAULT_DEPLOY_TIMEOUT.as_secs()),
        }
    }
}

#[derive(Debug, Error)]
pub enum DriverError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("bisect state machine: {0}")]
    Machine(#[from] BisectError),
    #[error("session {session}: stored run {run} is at commit {sha}, which is not in the range {good}..{bad}")]
    ForeignRun { session: SessionId, run: i64, sha: String, good: String, bad: String },
    /// A failure that says nothing about the commit: the repository or the machine changed under the bisect.
    #[error("commit {sha}: {reason} ({why}, so the cause is the machine or the repository, not the commit)")]
    Environment { sha: String, reason: String, why: &'static str },
    /// A commit of the range went from the repository while the bisect ran (history rewritten and pruned): no fix of
    /// the machine brings it back, so the session cannot continue.
    #[error(
        "commit {} is no longer in the repository {} (history rewritten while the bisect ran?): its checkout \
         failed, and this session cannot continue; start a new bisect",
        &sha[..sha.len().min(12)],
        repo.display()
    )]
    Vanished { sha: String, repo: PathBuf },
}

/// How a build or deploy step failed: the reason stored with the commit's failed run, the step's output, and
/// whether it was killed at its limit.
struct StepFailure {
    reason: String,
    log: String,
    timed_out: bool,
}

/// The reason stored for a `step` of commit `sha` killed after `limit` seconds: the commit, the step, its command
/// and the limit, with the option that sets it, so that a build that is only slow can be given longer.
pub fn timed_out_reason(step: &str, sha: &str, command_line: &str, limit: u64) -> String {
    format!(
        "{step} of {} ('{}') killed after {} (--{step}-timeout)",
        &sha[..sha.len().min(10)],
        process::shortened(command_line, process::QUOTED_CHARS),
        culprit_job::convention::duration_text(limit)
    )
}

/// Why a commit could not be made ready to run.
enum PrepareFailure {
    /// The build or deploy of this commit failed: the commit is untestable (a failed run is recorded).
    Commit { reason: String, log: String, step: &'static str },
    /// The checkout failed: the repository changed (moved, deleted, rewritten), which no commit explains.
    Environment { reason: String },
    /// The user interrupted the build or deploy: nothing is known of the commit, and nothing is recorded.
    Interrupted,
}

/// What the driver reports as it goes, for progress bars and logs.
#[derive(Debug, Clone)]
pub enum Event<'a> {
    Building { commit: &'a RangeCommit },
    Built { commit: &'a RangeCommit, seconds: f64 },
    /// The build or deploy (`step`) of a commit failed, or was killed at its limit (`timed_out`): the commit is
    /// untestable. `reason` is the one stored with its failed run.
    StepFailed { commit: &'a RangeCommit, step: &'static str, reason: &'a str, timed_out: bool },
    /// A run of `commit` begins, with `batch_left` runs left in the batch, the estimate of what the whole bisect
    /// still needs ([`estimate_left`]), and its seconds at this bisect's measured seconds per run (deploys included)
    /// and per build, once a run was measured.
    Running { commit: &'a RangeCommit, batch_left: usize, left: Estimate, seconds_left: Option<f64> },
    Ran { commit: &'a RangeCommit, sample: Sample, runs: usize, builds: usize },
    /// A run of `commit` (stored as `run`) succeeded without a monitor's data: `failure` is the monitor's error as
    /// its stderr keeps it (`monitor perf-stat: ...`). The bisect reads the benchmark's metric, which is fine, but
    /// the data asked for (a profile under `--profile`) is missing, and only the stored stderr said so.
    MonitorFailed { commit: &'a RangeCommit, run: culprit_store::RunId, failure: &'a str },
    /// A run of `commit` failed or was killed at its timeout (`reason`, as stored with it); `again` when it is tried
    /// again, else the commit's run is untestable. The build and deploy have their [`Event::StepFailed`].
    RunFailed { commit: &'a RangeCommit, reason: &'a str, again: bool },
}

/// How a drive ended.
#[derive(Debug, Clone)]
pub enum Ended {
    Done(Box<Outcome>),
    /// The user interrupted; the session can be resumed.
    Interrupted,
}

/// The value a stored run contributes to the bisect: its metric, or untestable when it failed or lacks the metric.
pub fn sample_of(record: &RunRecord, metric: &str) -> Sample {
    match (&record.outcome, record.metrics.get(metric)) {
        (RunOutcome::Ok, Some(v)) if v.is_finite() => Sample::Value(*v),
        _ => Sample::Untestable,
    }
}

/// The name of the raw output that holds the build command a run's commit was built with, so that runs built one
/// way are not read as references of a check built another way (`culprit check` keys its references by it).
pub const BUILD_COMMAND_OUTPUT: &str = "build-command";

/// Records in `record` that its commit was built with `build` (nothing for a commit only checked out).
pub fn record_build(record: &mut RunRecord, build: Option<&str>) {
    if let Some(build) = build {
        let content = build.as_bytes().to_vec();
        record.raw_outputs.push(RawOutput { name: BUILD_COMMAND_OUTPUT.to_string(), content });
    }
}

/// The build command `record`'s commit was built with, as [`record_build`] recorded it; `None` for a commit only
/// checked out, and for a run stored before runs recorded it.
pub fn build_of(record: &RunRecord) -> Option<String> {
    let raw = record.raw_outputs.iter().find(|raw| raw.name == BUILD_COMMAND_OUTPUT)?;
    Some(String::from_utf8_lossy(&raw.content).into_owned())
}

/// The machine's commit list for a range.
pub fn commit_nodes(range: &[RangeCommit]) -> Vec<CommitNode> {
    range.iter().map(|c| CommitNode { parents: c.parents.clone(), untestable: false }).collect()
}

/// Builds, deploys and runs commits of one range for one session.
pub struct Driver<'a> {
    pub store: &'a mut dyn Store,
    /// The session runs are linked to; `None` while probing good and bad before the session exists.
    pub session: Option<SessionId>,
    pub config: SessionConfig,
    pub range: Vec<RangeCommit>,
    pub job: JobRun,
    pub context: RunContext,
    /// How the runs [`Driver::run_at`] takes are stored: plain, or profiling once the bisect is over and perf is
    /// attached to explain its culprits.
    pub kind: RunKind,
    worktrees: Worktrees,
    /// Commits whose build failed in this process: they are untestable without building again.
    build_failed: Vec<Option<String>>,
    /// Commits whose deploy was killed at its limit in this process: another attempt would wait the whole limit
    /// again for each run the batch still holds of a commit that is untestable already.
    deploy_timed_out: Vec<Option<String>>,
    /// The commit whose build was deployed last, so a deploy runs only when the commit under test changes.
    deployed: Option<usize>,
    /// Successful runs per commit, stored ones included: a commit that ran before and now fails every attempt points
    /// to the machine (a benchmark binary gone, a full disk), and calling it untestable would end the bisect wrongly.
    succeeded: Vec<usize>,
    interrupt: Arc<AtomicBool>,
    /// Seconds spent per build and per run, measured.
    pub build_seconds: Vec<f64>,
    pub run_seconds: Vec<f64>,
    /// Seconds spent deploying, measured: a deploy runs whenever the commit under test changes, so it is part of
    /// what a run costs in the estimate of the time left.
    pub deploy_seconds: Vec<f64>,
    /// The session's runs that were stored when [`Driver::drive`] began and replayed into the machine.
    replayed: usize,
    /// Seconds per run and per build measured before this driver began (the probe of good and bad, which timed
    /// their builds and runs before the session existed), for the time left until this driver has measured its own.
    pub measured_before: Option<(f64, f64)>,
    /// Where a running build or deploy is recorded ([`crate::step_record`]), so that one left running by this
    /// process's death can be killed by the next process that takes up the work; `None`: not recorded.
    step_record: Option<PathBuf>,
}

/// Worktrees a bisect's driver keeps checked out at once; beyond that the least recently used is removed. The
/// search comes back to a few commits at a time (the ends, the candidate and its parent), whose builds are kept.
pub const LIVE_WORKTREES: usize = 4;

impl<'a> Driver<'a> {
    /// A driver over `worktrees`: [`Worktrees::new`] ones (of [`LIVE_WORKTREES`], removed with the driver), or
    /// [`Worktrees::kept`] ones, which outlive it.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        store: &'a mut dyn Store,
        session: Option<SessionId>,
        config: SessionConfig,
        range: Vec<RangeCommit>,
        job: JobRun,
        context: RunContext,
        worktrees: Worktrees,
        interrupt: Arc<AtomicBool>,
    ) -> Driver<'a> {
        let n = range.len();
        // The session's checkout mode holds for every worktree its commits get, however the caller opened the set.
        let worktrees = if config.no_checkout { worktrees.without_files() } else { worktrees };
        Driver {
            store,
            session,
            config,
            range,
            job,
            context,
            kind: RunKind::Plain,
            worktrees,
            build_failed: vec![None; n],
            deploy_timed_out: vec![None; n],
            deployed: None,
            succeeded: vec![0; n],
            interrupt,
            build_seconds: Vec::new(),
            run_seconds: Vec::new(),
            deploy_seconds: Vec::new(),
            measured_before: None,
            replayed: 0,
            step_record: None,
        }
    }

    /// The driver's worktrees, for a driver that takes up its work ([`Worktrees::move_built_to`]).
    pub fn into_worktrees(self) -> Worktrees {
        self.worktrees
    }

    /// Records each build, deploy and benchmark process at `path` while it runs (see [`crate::step_record`]); the
    /// caller holds the lock of the work, and reaps what an earlier process recorded there before it drives on.
    pub fn record_steps_in(&mut self, path: PathBuf) {
        self.step_record = Some(path);
    }

    /// The samples already stored for this session, in the order they were taken. Profiling runs are not samples:
    /// see [`bisect_runs`].
    pub fn stored_samples(&self) -> Result<Vec<(usize, Sample)>, DriverError> {
        let Some(session) = self.session else { return Ok(Vec::new()) };
        let ids = bisect_runs(&*self.store, session)?;
        let records = self.store.runs(&ids)?;
        let mut samples = Vec::with_capacity(records.len());
        for (id, record) in ids.iter().zip(&records) {
            let sha = record.revision.key();
            let Some(index) = self.range.iter().position(|c| c.sha == sha) else {
                return Err(DriverError::ForeignRun {
                    session,
                    run: id.0,
                    sha: sha.to_string(),
                    good: self.config.good.clone(),
                    bad: self.config.bad.clone(),
                });
            };
            samples.push((index, sample_of(record, &self.config.metric)));
        }
        Ok(samples)
    }

    fn env(&self, index: usize, dir: &Path) -> Vec<(String, String)> {
        let commit = &self.range[index];
        vec![
            ("CULPRIT_COMMIT".to_string(), commit.sha.clone()),
            ("CULPRIT_WORKTREE".to_string(), dir.display().to_string()),
        ]
    }

    /// A failed run of the commit at `index`: its build or deploy (`step`) failed, with `log` as its output.
    fn failed_record(&self, index: usize, step: &str, reason: String, log: String, started: f64) -> RunRecord {
        let commit = &self.range[index];
        let mut record = RunRecord {
            job_id: self.job.job_id.clone(),
            job_name: self.job.job_name.clone(),
            testcase: self.job.testcase.clone(),
            params: self.job.params.clone(),
            job_yaml: self.job.job_yaml.clone(),
            revision: Revision::Commit { sha: commit.sha.clone(), describe: None, subject: Some(commit.subject.clone()) },
            machine: self.context.machine.clone(),
            started_at: started,
            ended_at: now(),
            outcome: RunOutcome::failed(reason),
            exit_code: None,
            metrics: Default::default(),
            monitors: Vec::new(),
            raw_outputs: vec![RawOutput { name: format!("{step}.log"), content: log.clone().into_bytes() }],
            stderr: log,
            scratch: None,
        };
        record_build(&mut record, self.config.build.as_deref());
        record
    }

    /// Runs one shell step (build or deploy) in the worktree, killed with its process group after `limit` seconds;
    /// returns its seconds, or the failure with its log.
    fn step(
        &self,
        what: &'static str,
        command_line: &str,
        limit: Option<u64>,
        index: usize,
        dir: &Path,
    ) -> Result<f64, StepFailure> {
        let mut inv = Invocation::shell(command_line).in_dir(dir);
        inv.env = self.env(index, dir);
        inv.merge_stderr = true;
        let started = Instant::now();
        let failure = |reason: String, log: String, timed_out: bool| StepFailure { reason, log, timed_out };
        let limit_duration = limit.map(Duration::from_secs);
        let (record, sha) = (self.step_record.as_deref(), &self.range[index].sha);
        let finished = step_record::run_recorded(&inv, limit_duration, &self.interrupt, record, what, sha);
        match finished {
            Ok(f) if f.exit.success() => Ok(started.elapsed().as_secs_f64()),
            Ok(f) if f.exit == process::Exit::TimedOut => {
                let reason = timed_out_reason(what, &self.range[index].sha, command_line, limit.unwrap_or_default());
                Err(failure(reason, f.stdout, true))
            }
            Ok(f) => Err(failure(format!("{what} '{command_line}' {}", f.exit.describe()), f.stdout, false)),
            Err(e) => Err(failure(format!("{what} '{command_line}': {e}"), String::new(), false)),
        }
    }

    /// Makes sure `index` is checked out, built and deployed; returns its worktree or the failure to record.
    fn prepare<F: FnMut(Event<'_>)>(&mut self, index: usize, observe: &mut F) -> Result<PathBuf, PrepareFailure> {
        if let Some(reason) = &self.build_failed[index] {
            return Err(PrepareFailure::Commit { reason: reason.clone(), log: String::new(), step: "build" });
        }
        if let Some(reason) = &self.deploy_timed_out[index] {
            return Err(PrepareFailure::Commit { reason: reason.clone(), log: String::new(), step: "deploy" });
        }
        let sha = self.range[index].sha.clone();
        let checkout = self
            .worktrees
            .checkout(&sha)
            .map_err(|e| PrepareFailure::Environment { reason: format!("checkout failed: {e}") })?;
        if checkout.fresh {
            if let Some(build) = self.config.build.clone() {
                observe(Event::Building { commit: &self.range[index] });
                let result = self.step("build", &build, self.config.timeouts.build_secs, index, &checkout.dir);
                // A build stopped by Ctrl-C failed because it was stopped: saying the commit does not build (and
                // keeping it as failed) would be wrong, and the interrupted bisect resumes from its stored runs.
                if result.is_err() && self.interrupt.load(Ordering::SeqCst) {
                    return Err(PrepareFailure::Interrupted);
                }
                match result {
                    Ok(seconds) => {
                        observe(Event::Built { commit: &self.range[index], seconds });
                        self.build_seconds.push(seconds);
                    }
                    Err(StepFailure { reason, log, timed_out }) => {
                        let commit = &self.range[index];
                        observe(Event::StepFailed { commit, step: "build", reason: &reason, timed_out });
                        self.build_failed[index] = Some(reason.clone());
                        return Err(PrepareFailure::Commit { reason, log, step: "build" });
                    }
                }
            }
            self.worktrees.mark_built(&sha);
            self.deployed = None;
        }
        if self.deployed != Some(index) {
            if let Some(deploy) = self.config.deploy.clone() {
                let result = self.step("deploy", &deploy, self.config.timeouts.deploy_secs, index, &checkout.dir);
                if let Ok(seconds) = result {
                    self.deploy_seconds.push(seconds);
                }
                if let Err(StepFailure { reason, log, timed_out }) = result {
                    if self.interrupt.load(Ordering::SeqCst) {
                        return Err(PrepareFailure::Interrupted);
                    }
                    // The deploy ran on the machine under test, which may now run nothing or another kernel: the
                    // next commit deploys again whatever this one left.
                    self.deployed = None;
                    let commit = &self.range[index];
                    observe(Event::StepFailed { commit, step: "deploy", reason: &reason, timed_out });
                    if timed_out {
                        self.deploy_timed_out[index] = Some(reason.clone());
                    }
                    return Err(PrepareFailure::Commit { reason, log, step: "deploy" });
                }
            }
            self.deployed = Some(index);
        }
        Ok(checkout.dir)
    }

    /// Builds (when needed) and runs the job once at `index`, stores the run linked to the session, and returns its
    /// stored id and the record; `None` when the user interrupted.
    pub fn run_at<F: FnMut(Event<'_>)>(
        &mut self,
        index: usize,
        observe: &mut F,
    ) -> Result<Option<(culprit_store::RunId, RunRecord)>, DriverError> {
        let started = now();
        let record = match self.prepare(index, observe) {
            Err(PrepareFailure::Interrupted) => return Ok(None),
            Err(_) if self.interrupt.load(Ordering::SeqCst) => return Ok(None),
            Err(PrepareFailure::Environment { reason }) => {
                // Every commit was there when the session started, but a force-push and `git gc` meanwhile can
                // take one away: that is said as such, not as a fault of the machine to fix and resume after
                // (QA 48, defect 9f).
                let sha = &self.range[index].sha;
                if git::missing_commits(&self.config.repo, &[sha]).is_ok_and(|missing| !missing.is_empty()) {
                    return Err(DriverError::Vanished { sha: sha.clone(), repo: self.config.repo.clone() });
                }
                return Err(DriverError::Environment {
                    sha: sha.clone(),
                    reason,
                    why: "every commit of the range is in the repository",
                });
            }
            Err(PrepareFailure::Commit { reason, log, step }) => self.failed_record(index, step, reason, log, started),
            Ok(dir) => {
                let commit = &self.range[index];
                let mut job = self.job.clone();
                job.cwd = Some(dir.clone());
                job.env.extend(self.env(index, &dir));
                let mut context = self.context.clone();
                context.step_record = self.step_record.clone();
                context.revision =
                    Revision::Commit { sha: commit.sha.clone(), describe: None, subject: Some(commit.subject.clone()) };
                // A run that fails where the build worked may be a flaky boot or a transient error rather than the
                // commit: it is tried again before the commit is called untestable, since one untestable sample at
                // good or bad ends a bisect. The failed attempts are stored as evidence but not linked to the
                // session, so a replay sees exactly the samples the machine saw.
                let mut attempt = 1;
                loop {
                    let begun = Instant::now();
                    let Some(mut record) = executor::run_once(&job, &context, &self.interrupt) else {
                        return Ok(None);
                    };
                    record_build(&mut record, self.config.build.as_deref());
                    self.run_seconds.push(begun.elapsed().as_secs_f64());
                    if let RunOutcome::Failed { reason } = &record.outcome {
                        let again = attempt < RUN_ATTEMPTS;
                        observe(Event::RunFailed { commit: &self.range[index], reason, again });
                    }
                    if record.outcome.is_ok() || attempt >= RUN_ATTEMPTS {
                        break record;
                    }
                    self.store.save_run_with(&record, &self.unlinked())?;
                    attempt += 1;
                }
            }
        };
        if !record.outcome.is_ok() && self.succeeded[index] > 0 {
            // Kept as evidence, but not linked to the session: the bisect stops here and resumes once the cause is
            // fixed, and the replay must not read this commit as untestable.
            self.store.save_run_with(&record, &self.unlinked())?;
            let reason = match &record.outcome {
                RunOutcome::Failed { reason } => reason.clone(),
                RunOutcome::Ok => String::new(),
            };
            return Err(DriverError::Environment {
                sha: self.range[index].sha.clone(),
                reason,
                why: "it ran successfully before in this bisect",
            });
        }
        let options = SaveOptions { bisect_session: self.session, ..self.unlinked() };
        let id = self.store.save_run_with(&record, &options)?.run_id();
        if record.outcome.is_ok() {
            self.succeeded[index] += 1;
        }
        for failure in executor::monitor_failures(&record) {
            observe(Event::MonitorFailed { commit: &self.range[index], run: id, failure });
        }
        Ok(Some((id, record)))
    }

    /// How a run is saved when it is not linked to the session (a failed attempt kept as evidence): of the kind
    /// the driver takes, so that a failed profiling attempt is not counted among the plain runs' failures.
    fn unlinked(&self) -> SaveOptions {
        SaveOptions { bisect_session: None, import_key: None, former_import_key: None, kind: self.kind }
    }

    /// The seconds `left` takes at the seconds per run (its deploys shared out over the runs) and per build measured
    /// in this bisect, or else measured before this driver began ([`Driver::measured_before`]); `None` before a run
    /// was measured, or when builds are left and none was measured yet.
    fn seconds_left(&self, left: Estimate) -> Option<f64> {
        let measured = Measured { runs: &self.run_seconds, deploys: &self.deploy_seconds, builds: &self.build_seconds };
        seconds_left(left, measured, self.measured_before, self.config.build.is_some())
    }

    /// The session's runs that the last [`Driver::drive`] found stored and replayed before it ran anything.
    pub fn replayed(&self) -> usize {
        self.replayed
    }

    /// Drives the machine to its outcome (or an interruption), starting from the stored samples.
    pub fn drive<F: FnMut(Event<'_>)>(&mut self, observe: &mut F) -> Result<Ended, DriverError> {
        let nodes = commit_nodes(&self.range);
        let samples = self.stored_samples()?;
        self.replayed = samples.len();
        for &(index, sample) in &samples {
            if matches!(sample, Sample::Value(_)) {
                self.succeeded[index] += 1;
            }
        }
        let mut machine = Bisect::replay(self.config.bisect.clone(), &nodes, &samples)?;
        // The estimate of what is left reads the posterior, so it is taken again only after a decision (a new batch),
        // not before every run.
        // With it, the runs this drive had made when it was taken: the runs made since count off it, so that the line
        // moves within a batch (QA 49: it sat still for up to 55 runs), and it never says fewer than the batch has left.
        let mut estimated: Option<(usize, Estimate, usize)> = None;
        let mut runs_made = 0usize;
        loop {
            match machine.next_action() {
                Action::Done(outcome) => {
                    if let Some(session) = self.session {
                        let json = serde_json::to_string(&outcome).unwrap_or_default();
                        self.store.update_bisect_session(session, outcome.status.word(), Some(&json), now())?;
                    }
                    return Ok(Ended::Done(Box::new(outcome)));
                }
                Action::RunBatch(batch) => {
                    // One run at a time, each picked from the runs the machine still wants: laid out once per batch,
                    // the order was not the one a resumed driver takes (it lays out the counts left from their first
                    // commit again), and runs went on at commits the batch no longer wanted (found untestable) or
                    // into the next batch when this one ended early.
                    let Some(commit) = next_in_batch(&batch) else {
                        // A machine that asks for nothing and is not done would loop forever; treat it as done.
                        let outcome = machine.outcome().cloned();
                        if let Some(outcome) = outcome {
                            return Ok(Ended::Done(Box::new(outcome)));
                        }
                        return Err(DriverError::Machine(BisectError::TooFewCommits { count: 0 }));
                    };
                    let batch_left = batch.iter().map(|&(_, n)| n).sum();
                    let decisions = machine.log().len();
                    let (taken, made_then) = match estimated {
                        Some((at, left, made_then)) if at == decisions => (left, made_then),
                        _ => {
                            // Commits run again whose worktree is gone are built again: a build each.
                            let kept = |c: usize| self.worktrees.holds_build_of(&self.range[c].sha);
                            (estimate_left(&machine.progress()).with_rebuilds(&machine.revisits(), kept), runs_made)
                        }
                    };
                    estimated = Some((decisions, taken, made_then));
                    let left = taken.after_runs(runs_made - made_then, batch_left);
                    let seconds_left = self.seconds_left(left);
                    observe(Event::Running { commit: &self.range[commit], batch_left, left, seconds_left });
                    let Some((_, record)) = self.run_at(commit, observe)? else { return Ok(Ended::Interrupted) };
                    runs_made += 1;
                    let sample = sample_of(&record, &self.config.metric);
                    machine.record(commit, sample)?;
                    observe(Event::Ran {
                        commit: &self.range[commit],
                        sample,
                        runs: machine.runs(),
                        builds: machine.builds(),
                    });
                }
            }
        }
    }
}

/// The runs of `session` that the bisect machine reads, in the order they were linked: every run but the profiling
/// ones. Those are taken after the outcome (`culprit bisect --profile`), which the machine ignores anyway; leaving
/// them out says so rather than relying on it, and keeps a replay's samples (and `bisect log`) the bisect's own.
pub fn bisect_runs(store: &dyn Store, session: SessionId) -> Result<Vec<RunId>, StoreError> {
    let linked = store.bisect_session_runs(session)?;
    let filter = RunFilter { bisect_session: Some(session), kind: Some(RunKind::Profiling), ..RunFilter::default() };
    let profiling: std::collections::BTreeSet<RunId> = store.list_runs(&filter)?.into_iter().map(|r| r.id).collect();
    Ok(linked.into_iter().filter(|id| !profiling.contains(id)).collect())
}

pub fn now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

/// Seconds a driver measured per run, per deploy and per build.
#[derive(Debug, Clone, Copy)]
struct Measured<'a> {
    runs: &'a [f64],
    deploys: &'a [f64],
    builds: &'a [f64],
}

/// The seconds `left` takes at the seconds per run (the deploys shared out over the runs) and per build `measured`,
/// or else at those measured `before` (per run, per build); `None` before a run was measured either way, or when
/// builds are left, a build command is given (`builds_given`) and no build was measured.
fn seconds_left(left: Estimate, measured: Measured<'_>, before: Option<(f64, f64)>, builds_given: bool) -> Option<f64> {
    let per_run = if measured.runs.is_empty() {
        before?.0
    } else {
        (measured.runs.iter().sum::<f64>() + measured.deploys.iter().sum::<f64>()) / measured.runs.len() as f64
    };
    let builds_left = matches!(left, Estimate::Left { builds, .. } if builds > 0);
    let per_build = match (measured.builds.is_empty(), before) {
        (false, _) => mean_or(measured.builds, 0.0),
        (true, Some((_, per_build))) => per_build,
        (true, None) if builds_given && builds_left => return None,
        (true, None) => 0.0,
    };
    left.seconds(per_run, per_build)
}

/// Mean of measured seconds, or a fallback when nothing was measured.
pub fn mean_or(values: &[f64], fallback: f64) -> f64 {
    if values.is_empty() {
        fallback
    } else {
        values.iter().sum::<f64>() / values.len() as f64
    }
}

/// How many times a failing run (with a successful build) is tried before its commit counts as untestable.
pub const RUN_ATTEMPTS: u32 = 3;

/// A default per-run duration guard so a hung benchmark cannot stall a bisect forever when the job sets none.
pub const DEFAULT_RUN_TIMEOUT: Duration = Duration::from_secs(3600);

/// The default `--build-timeout`: 4 hours. A cold build of a distro-config kernel on a small machine takes one to two
/// hours (the tinyconfig-based fixture of `docs/kernel.md` took 26 minutes on 2 loaded CPUs), so a build still
/// running after twice that is hung, and a hung build costs at most this once per commit.
pub const DEFAULT_BUILD_TIMEOUT: Duration = Duration::from_secs(4 * 3600);

/// The default `--deploy-timeout`: 1 hour. Installing a kernel and rebooting or kexec-ing a lab box takes minutes,
/// firmware included; a box not back after an hour is hung (a kexec that never returns, a boot waiting at a prompt).
pub const DEFAULT_DEPLOY_TIMEOUT: Duration = Duration::from_secs(3600);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qa49_5c_the_first_estimate_has_a_time_from_the_probes_measurements() {
        let left = Estimate::Left { runs: 32, builds: 5 };
        let nothing = Measured { runs: &[], deploys: &[], builds: &[] };
        // Nothing measured by this driver: the probe's 0.5 s a run and 2 s a build give the time.
        assert_eq!(seconds_left(left, nothing, Some((0.5, 2.0)), true), Some(26.0));
        assert_eq!(seconds_left(left, nothing, None, true), None);
        // Its own measurements take over once there are any: 1 s a run with 0.5 s of deploys a run, 4 s a build.
        let own = Measured { runs: &[1.0, 1.0], deploys: &[1.0], builds: &[4.0] };
        assert_eq!(seconds_left(left, own, Some((0.5, 2.0)), true), Some(32.0 * 1.5 + 5.0 * 4.0));
        // Runs measured but no build yet: the probe's build time, else no time while builds are left.
        let runs_only = Measured { runs: &[1.0], deploys: &[], builds: &[] };
        assert_eq!(seconds_left(left, runs_only, Some((0.5, 2.0)), true), Some(42.0));
        assert_eq!(seconds_left(left, runs_only, None, true), None);
        assert_eq!(seconds_left(left, runs_only, None, false), Some(32.0));
    }

    fn config(timeouts: StepTimeouts) -> SessionConfig {
        SessionConfig {
            repo: PathBuf::from("/src/linux"),
            good: "a".repeat(40),
            bad: "b".repeat(40),
            other_goods: Vec::new(),
            job_yaml: "suite: command\n".into(),
            job_source: "--run ./bench".into(),
            metric: "command.elapsed_time".into(),
            build: Some("make -j2".into()),
            deploy: Some("./deploy.sh".into()),
            timeouts,
            improvement: false,
            bisect: BisectConfig::default(),
            machine: String::new(),
            probe_runs: Vec::new(),
            probe_chose_metric: false,
            scratch: None,
            no_checkout: false,
        }
    }

    #[test]
    fn the_scratch_directory_is_stored_with_the_session_and_old_sessions_read_the_default() {
        let scratch = Some(PathBuf::from("/dev/shm/bench"));
        let on_tmpfs = SessionConfig { scratch, ..config(StepTimeouts::default()) };
        let json = serde_json::to_string(&on_tmpfs).unwrap();
        assert!(json.contains(r#""scratch":"/dev/shm/bench""#), "{json}");
        assert_eq!(serde_json::from_str::<SessionConfig>(&json).unwrap(), on_tmpfs);
        // A session stored before sessions kept it ran under the default root, and resumes there.
        let mut old: serde_json::Value = serde_json::from_str(&json).unwrap();
        old.as_object_mut().unwrap().remove("scratch");
        assert_eq!(serde_json::from_value::<SessionConfig>(old).unwrap().scratch, None);
    }

    #[test]
    fn timeouts_are_stored_with_the_session_and_old_sessions_read_the_defaults() {
        let limited = config(StepTimeouts { build_secs: Some(2), deploy_secs: None });
        let json = serde_json::to_string(&limited).unwrap();
        assert!(json.contains(r#""timeouts":{"build_secs":2,"deploy_secs":null}"#), "{json}");
        assert_eq!(serde_json::from_str::<SessionConfig>(&json).unwrap(), limited);
        // A session stored before the timeouts existed resumes with the defaults, as a new one would start.
        let mut old: serde_json::Value = serde_json::from_str(&json).unwrap();
        old.as_object_mut().unwrap().remove("timeouts");
        let read: SessionConfig = serde_json::from_value(old).unwrap();
        assert_eq!(read.timeouts, StepTimeouts::default());
        assert_eq!(read.timeouts.build_secs, Some(DEFAULT_BUILD_TIMEOUT.as_secs()));
        // One limit missing takes its default; `null` is no limit.
        let partial: StepTimeouts = serde_json::from_str(r#"{"deploy_secs":null}"#).unwrap();
        assert_eq!(partial, StepTimeouts { build_secs: Some(4 * 3600), deploy_secs: None });
    }

    #[test]
    fn the_improvement_flag_is_stored_with_the_session_and_old_sessions_read_a_regression() {
        let improvement = SessionConfig { improvement: true, ..config(StepTimeouts::default()) };
        let json = serde_json::to_string(&improvement).unwrap();
        assert!(json.contains(r#""improvement":true"#), "{json}");
        assert_eq!(serde_json::from_str::<SessionConfig>(&json).unwrap(), improvement);
        // A session stored before the flag existed bisected a regression, and resumes as one.
        let mut old: serde_json::Value = serde_json::from_str(&json).unwrap();
        old.as_object_mut().unwrap().remove("improvement");
        assert!(!serde_json::from_value::<SessionConfig>(old).unwrap().improvement);
    }

    #[test]
    fn a_timed_out_step_names_the_commit_the_step_the_command_and_the_limit() {
        let reason = timed_out_reason("build", &"0123456789abcdef".repeat(2), "sleep 600; make -s", 7200);
        assert_eq!(reason, "build of 0123456789 ('sleep 600; make -s') killed after 2h (--build-timeout)");
        let reason = timed_out_reason("deploy", "abc", &"x".repeat(300), 90);
        assert!(reason.starts_with("deploy of abc ('xxx") && reason.ends_with("killed after 90s (--deploy-timeout)"));
        assert!(reason.contains("(100 more characters)"), "{reason}");
    }
}
