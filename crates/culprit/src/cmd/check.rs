//! `culprit check`: one step of `git bisect run`. Measures the checked-out commit until its runs are decisively
//! like good's or like bad's, and exits 0 (good), 1 (bad) or 125 (untestable: the build or a run failed).
//!
//! Reference runs of good and bad are measured in worktrees and stored; later checks of the same bisect reuse them
//! from the store; references that do not separate at first get more runs (up to two doublings). The references'
//! worktrees are kept (built once, under `.git/culprit/check-refs-GOOD-BAD`, until a check of another pair or
//! `--clean`), and every run of the checked-out commit follows a fresh run of good or bad, so a machine that has
//! moved since the stored runs is corrected for (`culprit_core::check::classify_interleaved`, a sequential
//! likelihood-ratio test). `--stored-references` skips the fresh runs (`classify_among` on the stored ones alone).
//!
//! The references are the same at every step: the first runs stored of the job at good and at bad on this machine,
//! built with the check's `--build` (see [`references`]; every run recorded its build command). The fresh runs a step measures are stored too, but they are that step's: another step
//! reads them as references no more than it reads its own runs of the commit.

use crate::cli::CheckArgs;
use crate::cmd::bisect::{
    available_metrics, benchmark_job, choose_metric, plan_job, process_worktree_root, reap_leftover_step, run_context,
    worktree_root,
};
use anyhow::{bail, Context, Result};
use culprit_core::check::{
    classify_among, classify_interleaved, reference_runs_at_look, CheckVerdict, MIN_REFERENCE_RUNS, REFERENCE_LOOKS,
};
use culprit_core::model::{Revision, RunRecord};
use culprit_run::bisect::{build_of, record_build, timed_out_reason, Driver, SessionConfig, StepTimeouts};
use culprit_run::executor::{self, JobRun};
use culprit_run::git::{self, RangeCommit};
use culprit_run::process::{self, Invocation};
use culprit_run::step_record;
use culprit_run::worktree::Worktrees;
use culprit_store::{RunFilter, RunKind, Store};
use std::process::ExitCode;

/// The reference runs of one side at a look of `target` successful runs: the side's stored runs in the order they
/// were stored, up to its `target`-th successful one (fewer when the store holds fewer).
///
/// Why the first ones and not all: every step stores its fresh reference runs beside them, measured at the time of
/// that step. Read as references by the next steps, they made the references grow with every step of a bisect and
/// mixed the machine of every hour the bisect ran: after a move of the machine, the steps' fresh good runs sat where
/// bad's references were, the references' scale grew with the spread of the moves (twentyfold in the test of a
/// 30% move), and within a few steps good and bad no longer separated and the check stopped `git bisect run`. The
/// references are a picture of good and bad taken at one time, interleaved; each step's fresh runs measure how far
/// the machine has moved from it since, which is what they are for. Taking the first ones keeps every step's
/// references, and the looks at them, exactly those of the first check of the pair.
fn references(runs: &[RunRecord], target: usize) -> &[RunRecord] {
    let mut ok = 0;
    for (at, run) in runs.iter().enumerate() {
        if run.outcome.is_ok() {
            ok += 1;
            if ok == target {
                return &runs[..=at];
            }
        }
    }
    runs
}

/// The exit code `git bisect run` reads as "skip this commit".
const UNTESTABLE: u8 = 125;

/// Says that a check was interrupted while it ran `head` and returns 130, which stops `git bisect run`: as every
/// other command does, it says what is kept, so that an interrupted step is not read as one that lost its runs.
fn interrupted_at(head: &Revision) -> ExitCode {
    crate::note!(
        "culprit: interrupted while checking {}; every finished run is stored, the run in flight was discarded, \
         and the commit is not judged",
        head.short()
    );
    ExitCode::from(130)
}

/// Accepted chance of a wrong verdict either way.
const ERROR: f64 = 0.01;

fn values(records: &[RunRecord], metric: &str) -> Vec<f64> {
    records.iter().filter(|r| r.outcome.is_ok()).filter_map(|r| r.metrics.get(metric).copied()).collect()
}

/// Why the reference runs of one side cannot serve: too few successful runs (with the first failure's reason), or
/// successful runs without the metric (with the metrics they have). `None` when they can.
fn reference_problem(side: &str, records: &[RunRecord], metric: &str) -> Option<String> {
    let ok: Vec<&RunRecord> = records.iter().filter(|r| r.outcome.is_ok()).collect();
    if ok.len() < MIN_REFERENCE_RUNS {
        let failure = records.iter().find_map(|r| match &r.outcome {
            culprit_core::model::RunOutcome::Failed { reason } => Some(format!(": {reason}")),
            _ => None,
        });
        return Some(format!(
            "{side} has {} successful reference run(s) of the {MIN_REFERENCE_RUNS} a check needs{}",
            ok.len(),
            failure.unwrap_or_default()
        ));
    }
    let with_metric = values(records, metric).len();
    if with_metric < MIN_REFERENCE_RUNS {
        return Some(format!(
            "{side}'s reference runs have no metric {metric} ({with_metric} of {} do); they have: {}",
            ok.len(),
            available_metrics(records)
        ));
    }
    None
}

/// The repository whose checkout a check judges: the one containing the current directory. git's own error
/// suggests --repo, which `check` does not have: `git bisect run` runs it inside the checkout it bisects.
fn checkout() -> Result<std::path::PathBuf> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    git::toplevel(&cwd).map_err(|error| match error {
        git::GitError::NotARepo { dir } => anyhow::anyhow!(
            "{dir} is not inside a git repository: culprit check judges the commit checked out where it runs, so \
             run it from inside the repository being bisected (as `git bisect run` does)"
        ),
        other => other.into(),
    })
}

/// Whether a revision is named from the checkout (`HEAD`, `HEAD~3`, `@`, `@^`), and so moves with `git bisect`.
fn names_the_checkout(rev: &str) -> bool {
    let rev = rev.trim();
    ["HEAD", "@"].iter().any(|head| {
        rev.strip_prefix(head).is_some_and(|rest| rest.is_empty() || rest.starts_with(['~', '^', '@', ':']))
    })
}

pub fn run(store: &mut dyn Store, args: &CheckArgs) -> Result<ExitCode> {
    // Fewer reference runs than the test needs would decide from nothing: every commit would come out "good".
    if args.reference_runs < MIN_REFERENCE_RUNS {
        bail!(
            "--reference-runs {} is too few: the test needs at least {MIN_REFERENCE_RUNS} runs at good and at bad",
            args.reference_runs
        );
    }
    if args.max_runs == 0 {
        bail!("--max-runs 0 leaves nothing to measure: give at least 1");
    }
    let repo = checkout()?;
    let (Some(good_rev), Some(bad_rev)) = (args.good.as_deref(), args.bad.as_deref()) else {
        bail!("culprit check needs --good and --bad (or --clean alone)");
    };
    // A check killed with `kill -9` (a `git bisect run` stopped hard) left the build or benchmark it waited for
    // running; the next check stops it before it builds or measures anything. The steps of `git bisect run` come
    // one after another, so one record serves every check of the repository.
    let steps = check_steps(&repo);
    reap_leftover_step(&steps);
    let head = git::resolve(&repo, "HEAD")?;
    let (job_yaml, source, default_metric) = benchmark_job(args.job.as_deref(), &args.command)?;
    let job = plan_job(&job_yaml, &source, &repo)?;
    let scratch = crate::cmd::bisect::validated_scratch(args.scratch.as_deref())?;
    let scratch_root = crate::cmd::run::scratch_dir(scratch.as_deref());
    // `git bisect run` checks out each commit it asks about: a reference named from HEAD names that commit, which
    // was then judged against itself ("is bad" by construction) or made good and bad "not differ" (QA 59).
    for (flag, rev) in [("--good", good_rev), ("--bad", bad_rev)] {
        if names_the_checkout(rev) {
            bail!(
                "{flag} {rev} names the commit checked out, which under `git bisect run` is the commit being judged, \
                 not a reference: give the {} commit by its SHA, tag or branch (as given to `git bisect {}`)",
                &flag[2..],
                &flag[2..]
            );
        }
    }
    let good = git::resolve(&repo, good_rev)?;
    let bad = git::resolve(&repo, bad_rev)?;
    if good.key() == bad.key() {
        bail!("--good {good_rev} and --bad {bad_rev} are the same commit {}: give a good and a bad commit", good.key());
    }
    // Bad older than good is a slip that `bisect` refuses: here the check answered with the roles inverted (QA 59).
    if git::git(&repo, &["merge-base", "--is-ancestor", bad.key(), good.key()]).is_ok() {
        bail!(
            "--good {good_rev} is not an ancestor of --bad {bad_rev}; they look swapped: bad is an ancestor of good, \
             so give the older commit as --good"
        );
    }
    let subject = |r: &Revision| match r {
        Revision::Commit { subject, .. } => subject.clone().unwrap_or_default(),
        Revision::Label { name } => name.clone(),
    };
    let range = vec![
        RangeCommit { sha: good.key().to_string(), subject: subject(&good), parents: Vec::new() },
        RangeCommit { sha: bad.key().to_string(), subject: subject(&bad), parents: vec![0] },
    ];

    // Reference runs: what the store has of this job at good and bad on this machine, built with this check's
    // --build, topped up in worktrees. Runs of another machine of a shared store, or profiling runs (perf attached,
    // the benchmark slowed), would be references of another machine than the one the commit runs on; runs of a
    // commit built another way (other flags, another compiler, another config) are references of other programs,
    // and the checked-out commit, built with this --build, would be judged against them.
    let hostname = culprit_run::machine::this_machine().hostname;
    // Stored runs whose files were on another filesystem than this check's `--scratch` measured another setup (an
    // I/O job on tmpfs against ext4), so they are no references either; a run that recorded none is taken. A
    // command runs in the repository (the checkout, or a worktree in its git directory) and records that filesystem,
    // as the executor decides for every run.
    let files_here = culprit_run::executor::files_directory(job.program.name(), Some(&repo), &scratch_root);
    let here_filesystem = culprit_run::filesystem::filesystem_of(&files_here);
    let same_filesystem = |run: &culprit_store::RunSummary| match (&run.scratch, &here_filesystem) {
        (Some(there), Some(here)) => there.same_filesystem(here),
        _ => true,
    };
    let build = args.build.as_deref();
    // The job file's kconfig, compiler and rootfs too: the store may hold runs of the same job at good and bad of
    // another lkp build (imported from a /result tree), which are another table's runs, not this check's references.
    let lkp_build = culprit_store::Build::of_params(&job.params);
    let mut built_otherwise = std::collections::BTreeSet::new();
    let mut stored = |store: &dyn Store, key: &str| -> Result<Vec<RunRecord>> {
        let ids: Vec<_> = store
            .list_runs(&RunFilter {
                job: Some(job.job_id.clone()),
                revision_keys: vec![key.to_string()],
                kind: Some(RunKind::Plain),
                ..RunFilter::default()
            })?
            .into_iter()
            .filter(|r| r.hostname == hostname && r.build == lkp_build && same_filesystem(r))
            .map(|r| r.id)
            .collect();
        let (same, other): (Vec<RunRecord>, Vec<RunRecord>) =
            store.runs(&ids)?.into_iter().partition(|r| build_of(r).as_deref() == build);
        built_otherwise.extend(other.iter().map(|r| build_of(r).unwrap_or_default()));
        Ok(same)
    };
    let mut good_runs = stored(store, good.key())?;
    let mut bad_runs = stored(store, bad.key())?;
    // Said, since the check then measures references of its own where the reader may expect the stored ones.
    if !built_otherwise.is_empty() {
        let words =
            |b: &String| if b.is_empty() { "no build recorded".to_string() } else { format!("--build '{b}'") };
        let list: Vec<String> = built_otherwise.iter().map(words).collect();
        crate::note!(
            "culprit: stored runs of good or bad were built otherwise ({}) than this check ({}): they are not its \
             references",
            list.join(", "),
            build.map_or("no build".to_string(), |b| format!("--build '{b}'"))
        );
    }
    // Fresh reference runs need the references' builds at every check: their worktrees are kept per pair of good
    // and bad, and those of another pair (an earlier bisect) are removed.
    let keep = (!args.stored_references).then(|| {
        let root = worktree_root(&repo, &format!("check-refs-{}-{}", good.short(), bad.short()));
        discard_other_references(&repo, &root);
        root
    });
    let sides = References {
        keep,
        repo: &repo,
        good: &good,
        bad: &bad,
        job_yaml: &job_yaml,
        source: &source,
        build: args.build.as_deref(),
        timeouts: args.timeouts.step_timeouts(),
        range: &range,
        job: &job,
        steps: &steps,
        scratch: scratch.as_deref(),
    };
    // Good and bad must differ before any commit can be classified. References that do not separate at the first
    // count of runs a side get more (doubled, up to `REFERENCE_LOOKS` looks; the test is corrected for the looks),
    // since a real change hidden by a noisy machine at 5 runs is usually plain at 10 or 20.
    let mut look = 0;
    let mut measurer = Measurer::Idle(store);
    let (metric, candidates, g, b) = loop {
        let target = reference_runs_at_look(args.reference_runs, look);
        let (next, finished) = sides.top_up(measurer, target, &mut good_runs, &mut bad_runs)?;
        measurer = next;
        if !finished {
            crate::note!(
                "culprit: interrupted while measuring the reference runs of good and bad; the finished ones are \
                 stored, and the next check measures only the missing ones"
            );
            return Ok(ExitCode::from(130));
        }
        let (good_refs, bad_refs) = (references(&good_runs, target), references(&bad_runs, target));
        // A metric chosen by the reference runs is tested on them too: the test that good and bad differ allows for
        // the choice among the job's metrics (`check::classify_among`).
        let (metric, candidates) = match args.metric.clone().or(default_metric.clone()) {
            Some(m) => (m, 1),
            None => {
                let chosen = choose_metric(good_refs, bad_refs)?;
                (chosen.name, chosen.candidates)
            }
        };
        // A problem at good or bad is not the checked-out commit's: answering 125 would make `git bisect run` skip
        // every commit, so it is an error (exit 128, which stops `git bisect run`) naming the cause.
        for (side, records) in
            [(format!("good {}", good.short()), good_refs), (format!("bad {}", bad.short()), bad_refs)]
        {
            if let Some(problem) = reference_problem(&side, records, &metric) {
                bail!("{problem}; fix the job, the build or the --metric, then run the check again");
            }
        }
        let (g, b) = (values(good_refs, &metric), values(bad_refs, &metric));
        let decision = classify_among(&g, &b, &[], ERROR, candidates);
        if decision.verdict != CheckVerdict::NoDifference {
            break (metric, candidates, g, b);
        }
        look += 1;
        if look == REFERENCE_LOOKS {
            bail!(
                "{metric}: {} ({} good and {} bad); nothing to decide (more --reference-runs, or another --metric)",
                decision.reason,
                g.len(),
                b.len()
            );
        }
        // A later step reads the looks the first check of the pair measured: the stored runs hold them already.
        let next = reference_runs_at_look(args.reference_runs, look);
        let successful = |runs: &[RunRecord]| runs.iter().filter(|r| r.outcome.is_ok()).count();
        if successful(&good_runs).min(successful(&bad_runs)) < next {
            crate::note!(
                "culprit: {metric}: good and bad do not separate over {} and {} reference runs yet; measuring up to \
                 {next} a side",
                g.len(),
                b.len()
            );
        }
    };
    // The references are settled. Without fresh reference runs their worktrees go (with the driver) and the store
    // serves the checked-out commit; with them, the driver (over kept worktrees) measures the fresh runs.
    let mut measurer = match (args.stored_references, measurer) {
        (true, measurer) => Measurer::Idle(measurer.into_store()),
        (false, Measurer::Idle(store)) => Measurer::Measuring(sides.driver(store)?),
        (false, measuring) => measuring,
    };

    // The checked-out commit: build here, as `git bisect run` expects, then run until decided.
    if let Some(build) = &args.build {
        let mut inv = Invocation::shell(build).in_dir(&repo);
        inv.env = vec![("CULPRIT_COMMIT".into(), head.key().to_string())];
        inv.merge_stderr = true;
        let interrupt = crate::cmd::run::interrupt_flag();
        let limit = sides.timeouts.build_secs;
        let limit_duration = limit.map(std::time::Duration::from_secs);
        let f = step_record::run_recorded(&inv, limit_duration, &interrupt, Some(&steps), "build", head.key())?;
        // A build stopped by Ctrl-C says nothing of the commit: 125 would have `git bisect run` skip it.
        if !f.exit.success() && interrupt.load(std::sync::atomic::Ordering::SeqCst) {
            crate::note!("culprit: interrupted while building {}", head.short());
            return Ok(ExitCode::from(130));
        }
        // A build killed at its limit is as untestable as one that fails: `git bisect run` skips the commit.
        if f.exit == process::Exit::TimedOut {
            let reason = timed_out_reason("build", head.key(), build, limit.unwrap_or_default());
            crate::note!("culprit: {reason}: untestable\n{}", f.stdout);
            return Ok(ExitCode::from(UNTESTABLE));
        }
        if !f.exit.success() {
            crate::note!(
                "culprit: build '{build}' {} at {}: untestable\n{}",
                f.exit.describe(),
                head.short(),
                f.stdout
            );
            return Ok(ExitCode::from(UNTESTABLE));
        }
    }
    let mut context = run_context(scratch.as_deref())?;
    context.revision = head.clone();
    context.step_record = Some(steps.clone());
    let mut job_here = job.clone();
    job_here.cwd = Some(repo.clone());
    job_here.env.push(("CULPRIT_COMMIT".into(), head.key().to_string()));
    let mut current = Vec::new();
    let (mut fresh_good, mut fresh_bad) = (Vec::new(), Vec::new());
    let mut decision = classify_among(&g, &b, &current, ERROR, candidates);
    for _ in 0..args.max_runs {
        if let Measurer::Measuring(driver) = &mut measurer {
            // Good and bad in turn, each just before a run of the commit, so the offset they measure is the
            // machine's now.
            let (index, side, fresh) = if fresh_good.len() <= fresh_bad.len() {
                (0, &good, &mut fresh_good)
            } else {
                (1, &bad, &mut fresh_bad)
            };
            let Some((_, record)) = driver.run_at(index, &mut |_| {})? else {
                return Ok(interrupted_at(&head));
            };
            match (&record.outcome, record.metrics.get(&metric)) {
                (culprit_core::model::RunOutcome::Ok, Some(v)) if v.is_finite() => fresh.push(*v),
                (culprit_core::model::RunOutcome::Failed { reason }, _) => bail!(
                    "a fresh reference run at {} failed: {reason}; the check cannot judge without it (fix the \
                     machine, or give --stored-references to use the stored runs alone)",
                    side.short()
                ),
                _ => bail!("a fresh reference run at {} has no metric {metric}", side.short()),
            }
        }
        let Some(mut record) = executor::run_once(&job_here, &context, &crate::cmd::run::interrupt_flag()) else {
            return Ok(interrupted_at(&head));
        };
        record_build(&mut record, args.build.as_deref());
        measurer.store().save_run(&record)?;
        match (&record.outcome, record.metrics.get(&metric)) {
            (culprit_core::model::RunOutcome::Ok, Some(v)) if v.is_finite() => current.push(*v),
            (culprit_core::model::RunOutcome::Failed { reason }, _) => {
                crate::note!("culprit: run failed at {}: {reason}: untestable", head.short());
                return Ok(ExitCode::from(UNTESTABLE));
            }
            _ => {
                crate::note!("culprit: the run at {} has no metric {metric}: untestable", head.short());
                return Ok(ExitCode::from(UNTESTABLE));
            }
        }
        decision = classify_interleaved(&g, &b, &fresh_good, &fresh_bad, &current, ERROR, candidates);
        if matches!(decision.verdict, CheckVerdict::Good | CheckVerdict::Bad) {
            break;
        }
    }
    let verdict = match decision.verdict {
        CheckVerdict::Good => "good",
        CheckVerdict::Bad => "bad",
        // Out of runs with evidence that leans clearly (odds of 10 to 1 at the default level): git bisect needs an
        // answer; give that side and say so.
        _ if decision.log_ratio >= LEANING_LOG_RATIO => "bad (undecided, leaning)",
        _ if decision.log_ratio <= -LEANING_LOG_RATIO => "good (undecided, leaning)",
        // Evidence that leans no clear way: a guess here is how git bisect run ends on a wrong commit with nothing
        // saying it is doubtful (QA 48, on a machine whose noise rose sixfold after the references). Skipped, git
        // bisect tests a neighbour, and if the culprit's neighbours are all skipped it lists them as candidates.
        _ => {
            crate::note!(
                "culprit: {} is untestable: {metric}: neither like good nor like bad after {} run(s) (--max-runs); \
                 {}; for a commit between good and bad (a series of patches sharing the change) `culprit bisect` \
                 names each part",
                head.short(),
                current.len(),
                decision.reason
            );
            return Ok(ExitCode::from(UNTESTABLE));
        }
    };
    crate::note!("culprit: {} is {verdict}: {metric}: {}", head.short(), decision.reason);
    Ok(if verdict.starts_with("bad") { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The log likelihood ratio past which a check out of runs still answers the side it leans to: half the default
/// threshold, odds of 10 to 1.
const LEANING_LOG_RATIO: f64 = std::f64::consts::LN_10;

/// `culprit check --clean`: removes every kept reference worktree of the repository (their builds can take
/// gigabytes, a kernel's far more) and says how many it removed. The store is not touched: a later check of the
/// same pair reuses its stored reference runs and builds the worktrees again, and none is opened: `check --clean`
/// in a checkout used to leave an empty `culprit.db` there.
pub fn clean() -> Result<ExitCode> {
    let repo = &checkout()?;
    let dir = worktree_root(repo, "");
    let kept = reference_worktrees(&dir);
    for path in &kept {
        Worktrees::discard(repo, path);
    }
    let left = reference_worktrees(&dir);
    if !left.is_empty() {
        bail!(
            "could not remove the reference worktrees of {} of {} pair(s) of good and bad: {}; remove them by hand \
             (rm -rf, then git worktree prune)",
            left.len(),
            kept.len(),
            left.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        );
    }
    crate::note!("culprit: removed the kept reference worktrees of {} pair(s) of good and bad", kept.len());
    Ok(ExitCode::SUCCESS)
}

/// The kept reference worktrees in `dir` (Culprit's directory under `.git`): its directories whose name starts
/// `check-refs-`.
fn reference_worktrees(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("check-refs-"))
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect()
}

/// Removes the kept reference worktrees of other pairs of good and bad than the one under `keep` (whose name
/// starts `check-refs-`), left by earlier bisects.
fn discard_other_references(repo: &std::path::Path, keep: &std::path::Path) {
    let Some(dir) = keep.parent() else { return };
    for path in reference_worktrees(dir).into_iter().filter(|path| path != keep) {
        Worktrees::discard(repo, &path);
    }
}

/// Where the reference runs of good and bad are measured: worktrees of `good` and `bad` in `repo`.
struct References<'a> {
    /// Where the worktrees are kept between checks, when fresh reference runs are taken; `None` for worktrees of
    /// this process only.
    keep: Option<std::path::PathBuf>,
    repo: &'a std::path::Path,
    good: &'a Revision,
    bad: &'a Revision,
    job_yaml: &'a str,
    source: &'a str,
    build: Option<&'a str>,
    /// How long a build of good or bad (or of the checked-out commit) may take.
    timeouts: StepTimeouts,
    /// Good and bad as a two-commit range, the driver's positions 0 and 1.
    range: &'a [RangeCommit],
    job: &'a JobRun,
    /// Where the driver records each build and run while it runs ([`check_steps`]).
    steps: &'a std::path::Path,
    /// The check's `--scratch`, where the references' runs put their files as the commit's do.
    scratch: Option<&'a std::path::Path>,
}

/// Where a check records the build or benchmark process it runs (`culprit_run::step_record`), for the next check to
/// kill what a check killed with `kill -9` left running.
fn check_steps(repo: &std::path::Path) -> std::path::PathBuf {
    worktree_root(repo, "check").with_extension("step")
}

/// The store, until reference runs must be measured; from then on the driver that measures them holds it. One
/// driver serves every look, so good and bad are checked out and built once however many looks need runs (a
/// driver per look removed its worktrees when dropped, and the next look built both again).
enum Measurer<'s> {
    Idle(&'s mut dyn Store),
    Measuring(Box<Driver<'s>>),
}

impl<'s> Measurer<'s> {
    /// The store back, once no more reference runs are needed; a driver's worktrees are removed with it (unless
    /// they are kept).
    fn into_store(self) -> &'s mut dyn Store {
        match self {
            Measurer::Idle(store) => store,
            Measurer::Measuring(driver) => driver.store,
        }
    }

    /// The store, whichever holds it.
    fn store(&mut self) -> &mut dyn Store {
        match self {
            Measurer::Idle(store) => &mut **store,
            Measurer::Measuring(driver) => &mut *driver.store,
        }
    }
}

impl References<'_> {
    /// Measures good and bad, interleaved, until each has `target` successful runs, storing every run. Returns the
    /// measurer to use for the next look, and false when interrupted.
    fn top_up<'s>(
        &self,
        measurer: Measurer<'s>,
        target: usize,
        good_runs: &mut Vec<RunRecord>,
        bad_runs: &mut Vec<RunRecord>,
    ) -> Result<(Measurer<'s>, bool)> {
        let missing = |runs: &[RunRecord]| target.saturating_sub(runs.iter().filter(|r| r.outcome.is_ok()).count());
        let (need_good, need_bad) = (missing(good_runs), missing(bad_runs));
        if need_good == 0 && need_bad == 0 {
            return Ok((measurer, true));
        }
        crate::note!("culprit: measuring reference runs of good and bad in worktrees (stored for later checks)");
        let mut driver = match measurer {
            Measurer::Measuring(driver) => driver,
            Measurer::Idle(store) => self.driver(store)?,
        };
        // Interleaved, so slow drift of the machine hits both references alike.
        for round in 0..need_good.max(need_bad) {
            for (index, need) in [(0usize, need_good), (1, need_bad)] {
                if round >= need {
                    continue;
                }
                let Some((_, record)) = driver.run_at(index, &mut |_| {})? else {
                    return Ok((Measurer::Measuring(driver), false));
                };
                if index == 0 {
                    good_runs.push(record)
                } else {
                    bad_runs.push(record)
                }
            }
        }
        Ok((Measurer::Measuring(driver), true))
    }

    /// A driver measuring good (position 0) and bad (position 1) in worktrees: kept ones when fresh reference
    /// runs are taken, this process's own otherwise.
    fn driver<'s>(&self, store: &'s mut dyn Store) -> Result<Box<Driver<'s>>> {
        let config = SessionConfig {
            // `git bisect run` checks out the commit judged; its references are built the same way, from files.
            no_checkout: false,
            repo: self.repo.to_path_buf(),
            good: self.good.key().to_string(),
            bad: self.bad.key().to_string(),
            other_goods: Vec::new(),
            job_yaml: self.job_yaml.to_string(),
            job_source: self.source.to_string(),
            metric: String::new(),
            build: self.build.map(str::to_string),
            deploy: None,
            timeouts: self.timeouts,
            improvement: false,
            bisect: Default::default(),
            machine: culprit_run::machine::hostname(),
            probe_runs: Vec::new(),
            probe_chose_metric: false,
            scratch: self.scratch.map(std::path::Path::to_path_buf),
        };
        let interrupt = crate::cmd::run::interrupt_flag();
        let (range, job, context) = (self.range.to_vec(), self.job.clone(), run_context(self.scratch)?);
        let worktrees = match &self.keep {
            Some(root) => Worktrees::kept(self.repo, root, 2, self.build)?,
            None => Worktrees::new(self.repo, &process_worktree_root(self.repo, "check"), 2)?,
        };
        let mut driver = Box::new(Driver::new(store, None, config, range, job, context, worktrees, interrupt));
        driver.record_steps_in(self.steps.to_path_buf());
        Ok(driver)
    }
}
