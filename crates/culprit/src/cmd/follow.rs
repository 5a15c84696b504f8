//! `culprit track --follow REF --job FILE`: the robot's loop on one machine, meant for cron.
//!
//! One pass: (1) measure the job at every Nth commit of REF's first-parent history (counted from its oldest commit) and
//! at REF itself (and halfway between when those are all), with `--runs` runs but at least as many as a segment of the
//! analysis needs, interleaved over blocks of commits so a visit's machine state is no commit's level; (2) analyse the
//! change points of the history of the pass's own runs (bisects' runs left out) in the followed metrics: `--metric`'s,
//! else the job's primary metric (its KPI; a `command` job's captured number, else its wall time); (3) where a change
//! point lies between two of those grid commits, measure both inner ends of the gap (the first and the last commit not
//! yet tested) and analyse again; (4) bisect each regression (and improvement, with `--improvements`), one bisect per
//! change (overlapping gaps of several metrics are one), unless a finished session of the job on this machine covers
//! its gap, or a session for that good/bad pair exists (an unfinished one is resumed), each bisect recording its
//! session as the robot's as soon as it stores it; (5) write the mails of the bisects this robot started that blamed a
//! commit into their own directories under `--reports` (one per blamed commit when several share the change), and
//! record in the store that they were reported; a bisect that blamed none is a line of the summary.
//!
//! Safe to run again after a crash: every run is stored as it finishes, a commit counts as measured once it has
//! that many successful runs or any failed one (a commit that does not build is not retried forever), narrowing
//! only looks at gaps between grid commits (so a narrowed gap is not narrowed again), bisect sessions are found by
//! their good/bad pair, worktrees a killed pass left are removed first, and a session is marked reported in the
//! store once its mails are written. A pass with nothing new to measure sees the history the last one saw and runs
//! nothing. Two passes of one machine never overlap: each holds an flock on `<store>[.MACHINE].follow.lock`.

use crate::cli::{BisectArgs, ReportArgs, ReportFormat, StepTimeoutArgs, TimedCommandArgs, TrackArgs};
use crate::cmd::bisect::{observer, plan_job, progress_bar, reap_leftover_step, run_context, worktree_root};
use crate::cmd::run::interrupt_flag;
use crate::cmd::track::{
    bisect_change, bisect_range, bisected, change_points_json, covering_sessions, history, interval_lines, needs_bisect,
    session_spans, track_options, BisectRange, History, HistoryFilter, Order, Series,
};
use crate::output;
use anyhow::{bail, Context, Result};
use culprit_core::bisect::{BisectConfig, Status as BisectStatus};
use culprit_core::changepoint::{ChangePoint, TrackOptions};
use culprit_core::model::{prose_short, MetricClass};
use culprit_core::report::primary_metrics;
use culprit_run::bisect::{Driver, SessionConfig, LIVE_WORKTREES};
use culprit_run::executor::JobRun;
use culprit_run::git::{self, RangeCommit};
use culprit_run::machine;
use culprit_run::worktree::Worktrees;
use culprit_store::{RunFilter, RunId, RunKind, RunStatus, SessionId, Store, NEW_SESSION_STATUS};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What one pass did, for the summary (text or `--json`).
#[derive(Debug, Default, serde::Serialize)]
struct Pass {
    /// Commits run in this pass, with the runs stored for each.
    measured: Vec<(String, usize)>,
    /// Gap ends measured to narrow a change point.
    narrowed: Vec<String>,
    /// Bisect sessions started or resumed in this pass.
    bisects: Vec<i64>,
    /// Reports written in this pass.
    reports: Vec<PathBuf>,
    notes: Vec<String>,
    /// What failed and needs a person: a bisect that stopped on an error, a report that could not be written. The
    /// rest of the pass still runs, and the pass then exits 1 so that cron mails it (the next pass tries again).
    failures: Vec<String>,
}

/// The lock file next to a SQLite store; for a PostgreSQL URL, one in the temp directory named by a hash of it. It
/// keeps one machine's passes apart: a machine named by `$CULPRIT_MACHINE` (`named`, one of a farm's containers or
/// cloned VMs on one host) has a lock of its own, so that the host's other machines follow at the same time.
fn lock_path(db: Option<&Path>, named: Option<&str>) -> PathBuf {
    let store = db.map(Path::to_path_buf).unwrap_or_else(culprit_store::default_path);
    let machine = named.map(|name| format!(".{name}")).unwrap_or_default();
    match store.to_str().filter(|p| culprit_store::is_postgres_url(p)) {
        Some(url) => {
            // A hash keeps the password out of the file name.
            let hash = crate::lock::stable_hash(&[url]);
            std::env::temp_dir().join(format!("culprit-{hash:016x}{machine}.follow.lock"))
        }
        None => PathBuf::from(format!("{}{machine}.follow.lock", store.display())),
    }
}

/// Where a pass records the build or deploy it runs (`culprit_run::step_record`): beside the worktrees it builds
/// in, which are the repository's, as the builds are.
fn follow_steps(repo: &Path) -> PathBuf {
    worktree_root(repo, "follow").with_extension("step")
}

/// Takes the follow lock without waiting; the file stays locked until it is dropped (or the process ends).
fn take_lock(path: &Path) -> Result<crate::lock::LockFile> {
    match crate::lock::try_lock(path)? {
        crate::lock::Lock::Held(lock) => Ok(lock),
        crate::lock::Lock::Busy { holder } => bail!(
            "another `culprit track --follow` ({holder}) holds {} on this store; this pass does nothing",
            path.display()
        ),
    }
}

/// REF's first-parent history, oldest first, as the driver's commit list.
fn first_parent_history(repo: &Path, reference: &str) -> Result<Vec<RangeCommit>> {
    let log = git::git(repo, &["log", "--first-parent", "--reverse", "--format=%H %s", reference, "--"])
        .with_context(|| format!("cannot list the first-parent history of {reference} in {}", repo.display()))?;
    Ok(log
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let (sha, subject) = line.split_once(' ').unwrap_or((line, ""));
            RangeCommit {
                sha: sha.to_string(),
                subject: subject.to_string(),
                parents: i.checked_sub(1).into_iter().collect(),
            }
        })
        .collect())
}

/// Successful and failed stored runs per commit of this job on this machine: the plain ones, which the history reads
/// (a bisect's profiling runs of a culprit are not runs of the history), of the job file's build (its rootfs, kconfig
/// and compiler), since runs of another build at a commit are another series' and measure nothing of this one, and
/// not the runs of bisects (`bisects_runs`), which the pass's history does not read.
fn run_counts(
    store: &dyn Store,
    job: &JobRun,
    hostname: &str,
    bisects_runs: &BTreeSet<RunId>,
) -> Result<HashMap<String, (usize, usize)>> {
    let mut runs = store.list_runs(&RunFilter {
        job: Some(job.job_id.clone()),
        hostname: Some(hostname.to_string()),
        kind: Some(RunKind::Plain),
        build: Some(culprit_store::Build::of_params(&job.params)),
        ..RunFilter::default()
    })?;
    // The pass's history leaves the bisects' runs out (`bisect_runs`), so they do not measure a commit for it.
    runs.retain(|run| !bisects_runs.contains(&run.id));
    let mut counts: HashMap<String, (usize, usize)> = HashMap::new();
    for r in runs {
        let entry = counts.entry(r.revision.key().to_string()).or_default();
        if r.failure_reason.is_none() {
            entry.0 += 1;
        } else {
            entry.1 += 1;
        }
    }
    Ok(counts)
}


/// Everything a pass needs, validated.
struct Plan {
    repo: PathBuf,
    reference: String,
    range: Vec<RangeCommit>,
    job: JobRun,
    config: SessionConfig,
    hostname: String,
}

/// The runs the stored bisect sessions took (the runs linked to them). A pass reads its own runs only: a bisect
/// measures its ends and the commits between at another time than the pass's interleaved visits, and pooled with
/// them its runs moved the levels of the commits they share, which made a new change point after every bisect, and
/// the next pass bisected that (QA 45b 2: 120 runs and a mail every cron pass, with no new commit). Read so, a pass
/// with nothing new to measure sees the history the last pass saw, and starts nothing. The probe runs a bisect took
/// of good and bad before its session existed are its runs too, though only those of a bisect given `--metric` are
/// linked to it (`SessionConfig::probe_runs` lists them all): a maintainer's `culprit bisect` without `--metric`
/// left 3 + 3 runs at its ends that passes read as their own.
fn bisect_runs(store: &dyn Store) -> Result<BTreeSet<RunId>> {
    let mut runs = BTreeSet::new();
    for session in store.bisect_sessions()? {
        runs.extend(store.bisect_session_runs(session.id)?);
        // A configuration this culprit cannot read (a newer one's) lists no probe run it could leave out.
        if let Ok(config) = serde_json::from_str::<SessionConfig>(&session.config_json) {
            runs.extend(config.probe_runs);
        }
    }
    Ok(runs)
}

/// A gap between two tested commits that holds a change the pass bisects: branch positions of its ends, how it ranks
/// among the changes whose gaps overlap it, and what found it (`found`: the series and its change point).
struct Gap<T> {
    before: usize,
    after: usize,
    /// Whether its metric is one of the job's primary metrics (`culprit_core::report::primary_metrics`).
    primary: bool,
    q: f64,
    found: T,
}

/// One gap per change: of gaps that share a commit that could be the culprit (their ranges overlap), the one of a
/// primary metric, then of smallest q, speaks for all. Metrics that move together (a command's wall and user time)
/// find one change in gaps whose ends differ by a tested commit, and each was bisected and mailed (QA 45b 3: three
/// bisects and two mails of one commit in one pass).
fn one_per_change<T>(mut gaps: Vec<Gap<T>>) -> Vec<Gap<T>> {
    gaps.sort_by(|a, b| {
        (b.primary.cmp(&a.primary)).then(a.q.total_cmp(&b.q)).then((a.before, a.after).cmp(&(b.before, b.after)))
    });
    let mut chosen: Vec<Gap<T>> = Vec::new();
    for gap in gaps {
        if !chosen.iter().any(|c| c.before.max(gap.before) < c.after.min(gap.after)) {
            chosen.push(gap);
        }
    }
    chosen.sort_by_key(|g| (g.before, g.after));
    chosen
}

/// The metrics whose changes a pass narrows and bisects: those `--metric` names, else the job's primary metrics
/// (its KPI, or a `command` job's wall time: `culprit_core::report::primary_metrics`), and only for a job with
/// neither every metric of the program's own (monitor metrics move with them and would multiply the work).
fn followed_metrics(series: &[Series], args: &TrackArgs) -> BTreeSet<String> {
    let own = series.iter().map(|s| s.metric.as_str()).filter(|m| MetricClass::of(m) == MetricClass::Program);
    if args.metric.is_some() {
        return series.iter().map(|s| s.metric.clone()).collect();
    }
    let primary = primary_metrics(own.clone());
    if primary.is_empty() {
        return own.map(str::to_string).collect();
    }
    primary.into_iter().map(str::to_string).collect()
}

pub fn run(db: Option<PathBuf>, args: &TrackArgs, reference: &str) -> Result<ExitCode> {
    if args.every == 0 || args.runs == 0 {
        bail!("--every and --runs must be at least 1");
    }
    let job_file = args.job.as_deref().context("--follow needs --job FILE: the job to run at each commit")?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let repo = git::toplevel(args.repo.as_deref().unwrap_or(&cwd))?;
    let job_yaml = crate::job_file::read_whole(Path::new(job_file))?;
    let job_file = &crate::cmd::bisect::job_source(Path::new(job_file));
    let job = plan_job(&job_yaml, job_file, &repo)?;
    let range = first_parent_history(&repo, reference)?;
    let (Some(first), Some(last)) = (range.first(), range.last()) else {
        bail!("{reference} has no history in {}", repo.display());
    };
    let config = SessionConfig {
        repo: repo.clone(),
        good: first.sha.clone(),
        bad: last.sha.clone(),
        other_goods: Vec::new(),
        job_yaml: job.job_yaml.clone(),
        job_source: job_file.to_string(),
        metric: String::new(),
        build: args.build.clone(),
        deploy: args.deploy.clone(),
        timeouts: args.timeouts.step_timeouts(),
        improvement: false,
        bisect: BisectConfig::default(),
        machine: machine::hostname(),
        probe_runs: Vec::new(),
        probe_chose_metric: false,
        scratch: crate::cmd::bisect::absolute_scratch(args.scratch.as_deref())?,
        no_checkout: args.no_checkout,
    };
    let plan = Plan { repo, reference: reference.to_string(), range, job, config, hostname: machine::hostname() };

    // The name was checked before anything ran (`cmd::dispatch`), so it is a file name's word.
    let named = std::env::var(culprit_store::MACHINE_ENV_VAR).ok().filter(|name| !name.trim().is_empty());
    let lock = lock_path(db.as_deref(), named.as_deref().map(str::trim));
    // The file goes with the pass: beside the user's store it says nothing once no pass holds it.
    let _held = crate::lock::RemovedWhenDropped::new(take_lock(&lock)?);
    // A pass killed with `kill -9` while it built a commit left that build running: this pass stops it first.
    reap_leftover_step(&follow_steps(&plan.repo));
    // Such a pass left its worktrees too (a checkout and a build each, gigabytes for a kernel). Opening the set
    // removes them, which measuring did only when the pass had something to measure (QA 45b 10: they stayed through
    // every pass with nothing new). The lock keeps any other pass of this machine from using them now.
    drop(Worktrees::new(&plan.repo, &worktree_root(&plan.repo, "follow"), LIVE_WORKTREES)?);
    // A pass adds runs: a read-only store is refused here, before the first build, not when the first run is saved.
    let mut store = crate::cmd::open_writable_store(db)?;
    let store: &mut dyn Store = &mut store;
    let mut pass = Pass::default();

    // (1) The grid: every Nth commit, and the newest. A grid of only the oldest commit and the newest (a history
    // no longer than --every) gets the commit halfway between them too: a step between two commits is a change
    // point only when a segment of the analysis can form on each side of it, and a lone commit on each side cannot
    // show one (4 runs against 4 reach p = 0.029 at best), so such a history never showed its step.
    let tip = plan.range.len() - 1;
    let middle = (tip >= 2 && tip <= args.every).then_some(tip / 2);
    let on_grid = |i: usize| i.is_multiple_of(args.every) || i == tip || Some(i) == middle;
    let grid: Vec<usize> = (0..plan.range.len()).filter(|&i| on_grid(i)).collect();
    let runs = runs_per_commit(args);
    let bisects_runs = bisect_runs(store)?;
    if !measure(store, &plan, &grid, runs, &bisects_runs, &mut pass)? {
        return interrupted(&pass);
    }

    // (2) + (3) Change points, and the inner ends of grid gaps that hold one.
    let mut tracked = analyse(store, &plan, args, &bisects_runs, &mut pass)?;
    let followed = followed_metrics(&tracked.series, args);
    let mut ends = BTreeSet::new();
    for (s, (_, a)) in tracked.series.iter().zip(&tracked.analyses) {
        if !followed.contains(&s.metric) {
            continue;
        }
        for c in a.change_points.iter().filter(|c| c.verdict.is_change()) {
            if let (Some(Some(before)), Some(Some(after))) = (s.positions.get(c.before_index), s.positions.get(c.index))
            {
                if *after > before + 1 && on_grid(*before) && on_grid(*after) {
                    ends.insert(before + 1);
                    ends.insert(after - 1);
                }
            }
        }
    }
    let ends: Vec<usize> = ends.into_iter().collect();
    let already = pass.measured.len();
    if !measure(store, &plan, &ends, runs, &bisects_runs, &mut pass)? {
        return interrupted(&pass);
    }
    pass.narrowed = pass.measured[already..].iter().map(|(sha, _)| sha.clone()).collect();
    if !pass.narrowed.is_empty() {
        tracked = analyse(store, &plan, args, &bisects_runs, &mut pass)?;
    }

    // (4) One bisect per change of a followed metric: where the gaps of several changes overlap, the one of a
    // primary metric, then of smallest q, speaks for them (`one_per_change`). The gap is the change's whole location
    // interval, as `track --bisect` bisects it (`bisect_range`): a good end that is in fact after the change would
    // end the bisect "not reproduced", and the session, once stored, is never tried again. A gap that a finished
    // session of this job on this machine covers (of any metric) was searched already (`needs_bisect`).
    let position = |sha: &str| plan.range.iter().position(|c| c.sha == sha);
    // A farm's machines share the store and follow the same branch: each bisects, resumes and mails its own
    // machine's sessions only (another machine's session measured that machine, and resuming it here is refused).
    // Read once: the gaps bisected below do not overlap (`one_per_change`), so a session started for one of them is
    // never the stored session of another's good/bad pair.
    let sessions = this_machines_sessions(store, &plan.hostname)?;
    let spans = session_spans(&sessions, &plan.repo, &plan.job.job_id, position);
    let primary: BTreeSet<&str> =
        primary_metrics(tracked.series.iter().map(|s| s.metric.as_str())).into_iter().collect();
    let mut candidates: Vec<Gap<(usize, ChangePoint)>> = Vec::new();
    for (k, (s, (_, a))) in tracked.series.iter().zip(&tracked.analyses).enumerate() {
        if !followed.contains(&s.metric) {
            // Said, so that a regression that only another of the program's metrics shows is not passed over in
            // silence.
            let program = MetricClass::of(&s.metric) == MetricClass::Program;
            if program && a.change_points.iter().any(|c| bisected(c.verdict, args)) {
                let names: Vec<&str> = followed.iter().map(String::as_str).collect();
                pass.notes.push(format!(
                    "{}: a change not bisected, since the pass follows {} (--metric REGEX follows others)",
                    s.metric,
                    culprit_core::report::and_list(&names)
                ));
            }
            continue;
        }
        for c in a.change_points.iter().filter(|c| bisected(c.verdict, args)) {
            let Some(BisectRange { change, before, after }) = bisect_range(s, c) else { continue };
            // REF may have moved since the pass listed it; a position past that list is left for the next pass.
            if after >= plan.range.len() || !needs_bisect(before, after, &spans) {
                continue;
            }
            let (primary, q) = (primary.contains(s.metric.as_str()), change.q.unwrap_or(1.0));
            candidates.push(Gap { before, after, primary, q, found: (k, change) });
        }
    }
    for Gap { before, after, found: (k, change), .. } in one_per_change(candidates) {
        let (good, bad) = (plan.range[before].sha.clone(), plan.range[after].sha.clone());
        let existing = sessions
            .iter()
            .filter(|b| b.good == good && b.bad == bad && b.job_id.as_deref() == Some(plan.job.job_id.as_str()))
            .max_by_key(|b| b.id.0);
        let Some(series) = tracked.series.get(k) else { continue };
        let result = match existing {
            Some(session) if session.status != NEW_SESSION_STATUS => continue,
            Some(session) => {
                let (good, bad) = (prose_short(&good), prose_short(&bad));
                eprintln!("culprit: resuming bisect session {} of {good}..{bad}", session.id);
                // Recorded first: a resume that fails is still this robot's to finish and mail.
                store.record_follow_session(session.id, &plan.hostname)?;
                let resumed = resume_args(session.id.0, args.timeouts);
                output::to_stderr(|| crate::cmd::bisect::run(store, &resumed)).map(|_| Some(session.id.0))
            }
            // The bisect records its session as this robot's as soon as it stores it (`BisectArgs::for_follow_on`).
            None => output::to_stderr(|| bisect_change(store, &plan.repo, series, &change, args, Some(&plan.hostname))),
        };
        match result {
            Ok(Some(id)) => pass.bisects.push(id),
            Ok(None) => pass.notes.push(format!(
                "{}: the bisect of {}..{} left no session",
                series.metric,
                prose_short(&good),
                prose_short(&bad)
            )),
            Err(e) => pass.failures.push(format!(
                "{}: bisect of {}..{} failed: {e:#}",
                series.metric,
                prose_short(&good),
                prose_short(&bad)
            )),
        }
    }

    // (5) The mails of the finished bisects this robot started on this machine that it has not reported yet.
    write_reports(store, &plan, &args.reports, &mut pass)?;
    if let Some(path) = &args.plot {
        crate::cmd::plot::write_track(path, &tracked.series, &tracked.analyses)?;
    }
    summarize(store, &pass, &tracked, &plan, args)?;
    if pass.failures.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    // The summary on standard output has them too; standard error is what cron mails and a terminal shows apart.
    for failure in &pass.failures {
        eprintln!("culprit: {failure}");
    }
    Ok(ExitCode::from(1))
}

/// Runs the loop measures at each commit: `--runs`, but at least the fewest runs of a segment in the change-point
/// analysis ([`TrackOptions::min_segment_runs`]). Every measured commit is an end of a gap, and a step in the gap
/// next to the oldest commit or REF leaves that commit alone on its side: with fewer runs than a segment needs, the
/// analysis cannot split there, so the step went unseen and its gap was never narrowed (`--every 10` on a history
/// of 12 commits measured 3 runs at commit 0, 10 and 11, and a step between 0 and 10 was invisible).
fn runs_per_commit(args: &TrackArgs) -> usize {
    args.runs.max(TrackOptions::default().min_segment_runs)
}

/// `bisect --resume ID`, with the pass's `--build-timeout` and `--deploy-timeout` where given: they replace the
/// session's, as the same bisect command run again with them does.
fn resume_args(id: i64, timeouts: StepTimeoutArgs) -> BisectArgs {
    BisectArgs {
        action: None,
        repo: None,
        good: Vec::new(),
        bad: None,
        job: None,
        command: TimedCommandArgs { run: None, warmup: None },
        metric: None,
        build: None,
        deploy: None,
        timeouts,
        max_runs: 600,
        min_change: None,
        improvement: false,
        profile: 0,
        // The session keeps its own scratch directory and checkout mode, which a resume takes.
        scratch: None,
        no_checkout: false,
        resume: Some(id),
        json: false,
        // The pass records the session itself before it resumes it.
        for_follow_on: None,
    }
}

/// Runs the job at each of `targets` until it has `runs` successful runs (or any failed one). Returns false when
/// the user interrupted.
///
/// The commits are measured in blocks of [`LIVE_WORKTREES`] (the builds the driver keeps), one run of each in turn
/// per round, so that the machine's state during a visit (a busy hyperthread sibling, a cold page cache, thermal
/// throttling) falls on every commit of a block alike instead of reading as one commit's level: measured one
/// commit at a time, two grid commits that built the same binary read 7.1% apart and made a false change point.
/// Blocks keep every build of a round alive, so interleaving costs no rebuilds. A job with `--deploy` is measured
/// one commit at a time, since each switch of commit would be a deploy (a reboot for a kernel).
fn measure(
    store: &mut dyn Store,
    plan: &Plan,
    targets: &[usize],
    runs: usize,
    bisects_runs: &BTreeSet<RunId>,
    pass: &mut Pass,
) -> Result<bool> {
    let counts = run_counts(store, &plan.job, &plan.hostname, bisects_runs)?;
    let todo: Vec<(usize, usize)> = targets
        .iter()
        .filter_map(|&i| {
            let commit = plan.range.get(i)?;
            let (ok, failed) = counts.get(&commit.sha).copied().unwrap_or((0, 0));
            (failed == 0 && ok < runs).then_some((i, runs - ok))
        })
        .collect();
    if todo.is_empty() {
        return Ok(true);
    }
    let bar = progress_bar();
    let mut observe = observer(&bar);
    let worktrees = Worktrees::new(&plan.repo, &worktree_root(&plan.repo, "follow"), LIVE_WORKTREES)?;
    let mut driver = Driver::new(
        store,
        None,
        plan.config.clone(),
        plan.range.clone(),
        plan.job.clone(),
        run_context(plan.config.scratch.as_deref())?,
        worktrees,
        interrupt_flag(),
    );
    driver.record_steps_in(follow_steps(&plan.repo));
    let block_size = if plan.config.deploy.is_some() { 1 } else { LIVE_WORKTREES };
    for block in balanced_blocks(&todo, block_size) {
        let mut block = measuring_block(plan, block);
        let finished = interleave_rounds(&mut block, |index| {
            bar.set_message(format!("measuring {}", prose_short(&plan.range[index].sha)));
            let Some((_, record)) = driver.run_at(index, &mut observe)? else { return Ok(None) };
            Ok(Some(match record.outcome {
                culprit_core::model::RunOutcome::Failed { reason } => {
                    let sha = prose_short(&plan.range[index].sha);
                    bar.suspend(|| eprintln!("culprit: {sha} failed, not measured again: {reason}"));
                    false
                }
                culprit_core::model::RunOutcome::Ok => true,
            }))
        })?;
        pass.measured.extend(
            block.iter().filter(|b| b.stored > 0).map(|b| (plan.range[b.index].sha.clone(), b.stored)),
        );
        if !finished {
            bar.finish_and_clear();
            return Ok(false);
        }
    }
    bar.finish_and_clear();
    Ok(true)
}

/// `items` in blocks of at most `size`, as few blocks as that allows and as even as they can be: five commits in
/// blocks of four are three and two, not four and one, since a commit alone in a block has all its runs in a row,
/// one moment's machine state for its level (QA of session 33: REF after a grid of four).
fn balanced_blocks<T>(items: &[T], size: usize) -> impl Iterator<Item = &[T]> {
    let blocks = items.len().div_ceil(size.max(1));
    let (base, longer) = items.len().checked_div(blocks).map_or((0, 0), |base| (base, items.len() % blocks));
    let mut rest = items;
    (0..blocks).map(move |block| {
        let (head, tail) = rest.split_at(base + usize::from(block < longer));
        rest = tail;
        head
    })
}

/// A commit being measured: how many runs it still needs, and how many this pass stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Measuring {
    index: usize,
    missing: usize,
    stored: usize,
}

fn measuring_block(plan: &Plan, block: &[(usize, usize)]) -> Vec<Measuring> {
    block
        .iter()
        .filter(|(index, _)| *index < plan.range.len())
        .map(|&(index, missing)| Measuring { index, missing, stored: 0 })
        .collect()
}

/// Runs the commits of `block` in rounds (one run of each commit still missing runs per round) until none is
/// missing any. `run_once` runs a commit once and says whether the run succeeded (a failed commit is not run
/// again) or `None` when the user interrupted, which ends the rounds: returns false then.
fn interleave_rounds(
    block: &mut [Measuring],
    mut run_once: impl FnMut(usize) -> Result<Option<bool>>,
) -> Result<bool> {
    while block.iter().any(|b| b.missing > 0) {
        for commit in block.iter_mut().filter(|b| b.missing > 0) {
            let Some(succeeded) = run_once(commit.index)? else { return Ok(false) };
            commit.stored += 1;
            commit.missing = if succeeded { commit.missing - 1 } else { 0 };
        }
    }
    Ok(true)
}

/// The history of the pass's own runs (`bisects_runs` left out: see [`bisect_runs`]).
fn analyse(
    store: &dyn Store,
    plan: &Plan,
    args: &TrackArgs,
    bisects_runs: &BTreeSet<RunId>,
    pass: &mut Pass,
) -> Result<History> {
    let filter = HistoryFilter {
        job: Some(plan.job.job_id.clone()),
        testcase: None,
        machine: Some(plan.hostname.clone()),
        metric: args.metric.clone(),
        excluded_runs: bisects_runs.clone(),
    };
    // No successful run yet (every commit failed to build, say) leaves nothing to analyse, which is not an error of
    // the loop. Any other failure is: a --metric that matches none of the runs' metrics would otherwise pass every
    // cron run in silence.
    let successful = store.list_runs(&RunFilter {
        job: filter.job.clone(),
        hostname: filter.machine.clone(),
        status: Some(RunStatus::Ok),
        ..RunFilter::default()
    })?;
    if successful.is_empty() {
        pass.notes.push(format!("no history to analyse: no successful run of {} yet", plan.job.job_name));
        let branch_positions = HashMap::new();
        return Ok(History { series: Vec::new(), analyses: Vec::new(), notes: Vec::new(), branch_positions });
    }
    history(store, &Order::Branch { repo: &plan.repo, branch: &plan.reference }, &filter, &track_options(args))
}

/// The stored bisect sessions that measure on `machine` (sessions of before sessions named their machine count by
/// their first run; one without runs counts as this machine's).
fn this_machines_sessions(store: &dyn Store, machine: &str) -> Result<Vec<culprit_store::BisectSession>> {
    let mut mine = Vec::new();
    for session in store.bisect_sessions()? {
        if crate::cmd::bisect::machine_of(store, &session)?.is_none_or(|there| there == machine) {
            mine.push(session);
        }
    }
    Ok(mine)
}

/// Writes the mails of the bisect sessions this robot started on this machine (`Store::follow_sessions`) that are
/// finished and not reported yet, one per blamed commit, and records in the store that each was reported. The store
/// is the record, not the files: a cron job that sends the mails and moves them away (or a new `--reports`) got
/// every report written again, and sessions the robot did not start (a maintainer's bisect) were mailed too (QA 45b
/// 4). A session that blames no commit (not reproduced, inconclusive) gets a line in the pass's summary, no mail: a
/// mail that blames nothing, above a table of the range's real changes, contradicted itself.
fn write_reports(store: &mut dyn Store, plan: &Plan, dir: &Path, pass: &mut Pass) -> Result<()> {
    for followed in store.follow_sessions(&plan.hostname)? {
        if followed.reported_at.is_some() {
            continue;
        }
        let session = store.bisect_session(followed.session)?;
        // An unfinished one is resumed by the pass that meets its gap again, and reported then.
        if session.status == NEW_SESSION_STATUS {
            continue;
        }
        let id = session.id;
        let blames = [BisectStatus::Found, BisectStatus::Multiple].iter().any(|s| s.word() == session.status);
        if blames && !write_session_reports(store, id, dir, pass) {
            // Not marked: the next pass writes it again.
            continue;
        }
        if !blames {
            let metric = session.metric.as_deref().unwrap_or("its metric");
            let range = format!("{}..{}", prose_short(&session.good), prose_short(&session.bad));
            let outcome = match session.status.as_str() {
                // Said as what it is: the change was not confirmed, which on noisy runs does not mean it is absent.
                "not-reproduced" => "did not confirm the change".to_string(),
                other => format!("ended {other}"),
            };
            pass.notes.push(format!(
                "bisect session {id} of {metric} over {range} {outcome}: no commit blamed, no mail (`culprit bisect \
                 log {id}`)"
            ));
        }
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
        store.mark_follow_session_reported(id, &plan.hostname, now)?;
    }
    Ok(())
}

/// Writes one mail per blamed commit of session `id`, as the robot sends them: the first into `bisect-<id>`, the Nth
/// of several commits that share the change into `bisect-<id>-culprit-<N>`. Returns whether every one was written
/// (a failure is in `pass.failures`).
fn write_session_reports(store: &dyn Store, id: SessionId, dir: &Path, pass: &mut Pass) -> bool {
    let count = match crate::cmd::report::culprit_count(store, id) {
        Ok(count) => count.max(1),
        Err(e) => {
            pass.failures.push(format!("report of bisect session {id}: {e:#}"));
            return false;
        }
    };
    let mut written = true;
    for nth in 1..=count {
        let out = match nth {
            1 => dir.join(format!("bisect-{id}")),
            _ => dir.join(format!("bisect-{id}-culprit-{nth}")),
        };
        let args = ReportArgs {
            session: Some(id.0),
            compare: None,
            fix: None,
            try_fix: None,
            metric: None,
            culprit: (nth > 1).then_some(nth as u32),
            job: None,
            machine: None,
            // The robot's reporter, if any, is $CULPRIT_REPORTED_BY, which `report::run` reads.
            reported_by: None,
            format: ReportFormat::Text,
            output: Some(out.clone()),
            // A session's commits carry the subjects its range recorded.
            repo: None,
        };
        match crate::cmd::report::run(store, &args) {
            Ok(_) => pass.reports.push(out.join("report.txt")),
            Err(e) => {
                pass.failures.push(format!("report of bisect session {id}: {e:#}"));
                written = false;
            }
        }
    }
    written
}

fn interrupted(pass: &Pass) -> Result<ExitCode> {
    let runs: usize = pass.measured.iter().map(|(_, n)| n).sum();
    eprintln!("culprit: interrupted; {runs} finished run(s) are stored, the next pass continues from them");
    Ok(ExitCode::from(130))
}

/// The pass's summary: what it measured, narrowed, bisected and reported, and the change points of the metrics it
/// follows. Those of the others (a monitor's, a program metric `--metric` leaves out) are not listed, only counted in
/// a note: listed alike, they read as changes the robot acts on, and it neither narrows nor bisects them.
fn summarize(store: &dyn Store, pass: &Pass, tracked: &History, plan: &Plan, args: &TrackArgs) -> Result<()> {
    // The change points as `track --json` gives them in its series, each with its job and machine and the session
    // that bisected it (QA 45b: here they had only metric, verdict, ends, change_pct and q).
    let sessions = covering_sessions(store, &store.bisect_sessions()?, &plan.repo, tracked)?;
    let followed = followed_metrics(&tracked.series, args);
    // Each change point with the line saying where it may lie when its location interval is wider than its pair.
    let (changes, unfollowed): (Vec<_>, Vec<_>) = change_points_json(tracked, &sessions)
        .into_iter()
        .zip(interval_lines(tracked))
        .partition(|(c, _)| c["metric"].as_str().is_some_and(|m| followed.contains(m)));
    let (changes, intervals): (Vec<serde_json::Value>, Vec<Option<String>>) = changes.into_iter().unzip();
    let mut notes: Vec<&String> = pass.notes.iter().chain(&tracked.notes).collect();
    let unlisted = (!unfollowed.is_empty()).then(|| {
        let names: Vec<&str> = followed.iter().map(String::as_str).collect();
        format!(
            "{} change point(s) of metrics the pass does not follow are not listed: it follows {} (`culprit track` \
             lists every metric's)",
            unfollowed.len(),
            culprit_core::report::and_list(&names)
        )
    });
    notes.extend(&unlisted);
    if args.json {
        let mut value = serde_json::to_value(pass)?;
        value["change_points"] = serde_json::Value::Array(changes);
        value["notes"] = serde_json::json!(notes);
        return output::println(&serde_json::to_string_pretty(&value)?);
    }
    let runs: usize = pass.measured.iter().map(|(_, n)| n).sum();
    let mut out = format!(
        "follow {} in {}: {} commit(s) measured ({runs} runs), {} gap end(s) narrowed, {} bisect(s), {} report(s)\n",
        plan.reference,
        plan.repo.display(),
        pass.measured.len(),
        pass.narrowed.len(),
        pass.bisects.len(),
        pass.reports.len()
    );
    // Each change names the session that bisected it, on every pass, as `--json` does: only the sessions started by
    // this pass were named, so from the second pass on the text lost the session `--json` still gave (QA 51).
    let mut named = BTreeSet::new();
    for (c, interval) in changes.iter().zip(&intervals) {
        out.push_str(&format!(
            "  {} {}: {} .. {}\n",
            c["verdict"].as_str().unwrap_or(""),
            c["metric"].as_str().unwrap_or(""),
            c["before"].as_str().unwrap_or("?"),
            c["after"].as_str().unwrap_or("?")
        ));
        out.extend(interval.clone());
        if let Some(id) = c["bisect_session"].as_i64() {
            out.push_str(&format!("    bisect session {id} (`culprit bisect log {id}`)\n"));
            named.insert(id);
        }
    }
    // A session this pass started for a change no longer listed (its change point moved) is still said.
    for id in pass.bisects.iter().filter(|id| !named.contains(*id)) {
        out.push_str(&format!("  bisect session {id} (`culprit bisect log {id}`)\n"));
    }
    for r in &pass.reports {
        out.push_str(&format!("  report {}\n", r.display()));
    }
    for note in notes {
        out.push_str(&format!("note: {note}\n"));
    }
    for failure in &pass.failures {
        out.push_str(&format!("failed: {failure}\n"));
    }
    output::print(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_gaps_are_one_change_spoken_for_by_a_primary_metric_then_the_smallest_q() {
        let gap = |before, after, series: usize, primary, q| Gap { before, after, primary, q, found: series };
        // QA 45b 3: wall time (series 0, primary) and user time (series 1) saw one change in gaps 4..8 and 5..8,
        // and each was bisected; a third gap, 9..11, is another change.
        let gaps = vec![gap(5, 8, 1, false, 1e-9), gap(4, 8, 0, true, 1e-3), gap(9, 11, 1, false, 0.01)];
        let chosen = one_per_change(gaps);
        let kept: Vec<(usize, usize, usize)> = chosen.iter().map(|g| (g.before, g.after, g.found)).collect();
        assert_eq!(kept, [(4, 8, 0), (9, 11, 1)]);
        // Among metrics alike, the smallest q; gaps that only touch (one's bad is the other's good) share no culprit.
        let gaps = vec![gap(2, 6, 0, false, 0.02), gap(3, 5, 1, false, 0.001), gap(6, 7, 2, false, 0.5)];
        let chosen = one_per_change(gaps);
        let kept: Vec<(usize, usize, usize)> = chosen.iter().map(|g| (g.before, g.after, g.found)).collect();
        assert_eq!(kept, [(3, 5, 1), (6, 7, 2)]);
    }

    #[test]
    fn blocks_are_as_even_as_their_number_allows() {
        let sizes = |n: usize, size: usize| -> Vec<usize> {
            let items: Vec<usize> = (0..n).collect();
            let blocks: Vec<&[usize]> = balanced_blocks(&items, size).collect();
            assert_eq!(blocks.concat(), items, "every item once, in order");
            blocks.iter().map(|b| b.len()).collect()
        };
        assert_eq!(sizes(0, 4), Vec::<usize>::new());
        assert_eq!(sizes(1, 4), [1]);
        assert_eq!(sizes(4, 4), [4]);
        assert_eq!(sizes(5, 4), [3, 2]);
        assert_eq!(sizes(9, 4), [3, 3, 3]);
        assert_eq!(sizes(10, 4), [4, 3, 3]);
        assert_eq!(sizes(3, 1), [1, 1, 1]);
    }

    #[test]
    fn rounds_take_one_run_of_each_commit_in_turn_and_drop_a_failed_commit() {
        let mut block = vec![
            Measuring { index: 3, missing: 2, stored: 0 },
            Measuring { index: 7, missing: 3, stored: 0 },
            Measuring { index: 9, missing: 2, stored: 0 },
        ];
        let mut order = Vec::new();
        // Commit 9 fails its first run: it is not run again, and the others go on in turn.
        let finished = interleave_rounds(&mut block, |index| {
            order.push(index);
            Ok(Some(index != 9))
        })
        .unwrap();
        assert!(finished);
        assert_eq!(order, [3, 7, 9, 3, 7, 7]);
        let stored: Vec<usize> = block.iter().map(|b| b.stored).collect();
        assert_eq!(stored, [2, 3, 1]);
        assert!(block.iter().all(|b| b.missing == 0));
    }

    #[test]
    fn an_interrupt_ends_the_rounds_and_keeps_what_was_stored() {
        let mut block = vec![Measuring { index: 1, missing: 3, stored: 0 }, Measuring { index: 2, missing: 3, stored: 0 }];
        let mut calls = 0;
        let finished = interleave_rounds(&mut block, |_| {
            calls += 1;
            Ok((calls < 4).then_some(true))
        })
        .unwrap();
        assert!(!finished);
        let stored: Vec<usize> = block.iter().map(|b| b.stored).collect();
        assert_eq!(stored, [2, 1]);
    }

    #[test]
    fn lock_files_sit_next_to_the_store_or_in_tmp_for_a_server() {
        assert_eq!(lock_path(Some(Path::new("/x/c.db")), None), PathBuf::from("/x/c.db.follow.lock"));
        assert_eq!(lock_path(Some(Path::new("/x/c.db")), Some("b")), PathBuf::from("/x/c.db.b.follow.lock"));
        let server = lock_path(Some(Path::new("postgresql://u:secret@h/db")), None);
        assert!(server.starts_with(std::env::temp_dir()));
        assert!(!server.display().to_string().contains("secret"));
        assert_eq!(server, lock_path(Some(Path::new("postgresql://u:secret@h/db")), None));
        // Two machines of a farm on one host hold locks of their own on the same server.
        let [a, b] = ["a", "b"].map(|m| lock_path(Some(Path::new("postgresql://u:secret@h/db")), Some(m)));
        assert!(a != b && a != server && a.starts_with(std::env::temp_dir()), "{a:?} {b:?}");
    }

    #[test]
    fn a_second_holder_of_the_lock_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db.follow.lock");
        let first = take_lock(&path).unwrap();
        let err = take_lock(&path).unwrap_err().to_string();
        assert!(err.contains("another `culprit track --follow`"), "{err}");
        drop(first);
        assert!(take_lock(&path).is_ok());
    }
}
