//! `culprit try-fix`: does a proposed patch fix the regression between BASE and BAD?
//!
//! The patch is applied on top of BAD in a worktree of its own and built there before anything is measured, so a
//! patch that does not apply or does not build fails at once with git's or the build's own words. Then base, bad and
//! patched run round-robin (base, bad, patched, base, ...) with the executor the bisect uses, so slow drift of the
//! machine hits the three alike. Every run is stored: base and bad under their commits, the patched tree under the
//! label `<bad short sha>+<patch name>-<patch id>` ([`patched_label`]), so two patches that share a file name never
//! share a label. The verdict is `culprit_core::report::fix_verdict`, which reads the compare
//! engine's verdicts (rule in `docs/report.md`).

use crate::cli::TryFixArgs;
use crate::cmd::bisect::{
    benchmark_job, observer, plan_job, process_worktree_root, progress_bar, reap_leftover_steps_of_processes,
    run_context,
};
use crate::cmd::compare::{axes_of, column_of_runs, some_metric_names};
use crate::cmd::report::compare_columns;
use crate::cmd::run::interrupt_flag;
use crate::output;
use anyhow::{bail, Context, Result};
use culprit_core::compare::render::{render_table, RenderOptions};
use culprit_core::compare::{direction, CompareResult, Comparison, Verdict};
use culprit_core::model::{prose_short, Revision, RunOutcome, RunRecord};
use culprit_core::report::{self, FixVerdict};
use culprit_run::bisect::{Driver, Event, SessionConfig, LIVE_WORKTREES};
use culprit_run::executor;
use culprit_run::git::{self, RangeCommit};
use culprit_run::process::{self, Invocation};
use culprit_run::step_record;
use culprit_run::worktree::Worktrees;
use culprit_store::{RunFilter, TryFixSide};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Fewer runs a side than this and the compare engine cannot decide (its `min_runs`).
const MIN_RUNS: usize = 3;

/// A worktree of its own (BAD plus the patch, or BAD alone to tell a broken build from a broken patch); removed when
/// dropped, whatever happened.
struct PatchedTree {
    repo: PathBuf,
    dir: PathBuf,
}

impl Drop for PatchedTree {
    fn drop(&mut self) {
        let dir = self.dir.display().to_string();
        if git::git(&self.repo, &["worktree", "remove", "--force", &dir]).is_err() {
            // Removed by hand, git forgets this worktree alone (a prune forgot the user's missing ones too).
            let _ = std::fs::remove_dir_all(&self.dir);
            let _ = git::git(&self.repo, &["worktree", "remove", "--force", &dir]);
        }
    }
}

/// A directory removed when dropped if it is empty by then, so that every try-fix does not leave an empty
/// `.git/culprit/try-fix-<pid>` behind; one still holding something is left alone.
struct EmptyDirectory(PathBuf);

impl Drop for EmptyDirectory {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}


/// Hex digits of the patch's blob id the label keeps: enough that two patches of one bad commit do not collide.
const PATCH_ID_DIGITS: usize = 8;

/// The label the patched tree's runs are stored under: `<bad short sha>+<patch file stem>-<patch id>`, the id being
/// the first digits of git's blob id of the patch file (`git hash-object FILE`). The file name alone is not enough:
/// a second version of `fix.patch` would add its runs to the first one's, and the report of the label would show a
/// blend of the two. Labels of older try-fix runs (`<bad short sha>+<patch file stem>`) stay in the store as they
/// are and are read like any other label.
fn patched_label(bad: &str, patch: &Path, blob_id: &str) -> String {
    let name = patch.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "patch".into());
    let id: String = blob_id.trim().chars().take(PATCH_ID_DIGITS).collect();
    format!("{}+{name}-{id}", &bad[..bad.len().min(10)])
}

/// A worktree of `sha` at `root/name`, replacing what an earlier, interrupted try-fix left there.
fn add_worktree(repo: &Path, root: &Path, name: &str, sha: &str) -> Result<PatchedTree> {
    let dir = root.join(name);
    if dir.exists() {
        let _ = git::git(repo, &["worktree", "remove", "--force", &dir.display().to_string()]);
        let _ = std::fs::remove_dir_all(&dir);
    }
    std::fs::create_dir_all(root).with_context(|| format!("cannot create {}", root.display()))?;
    git::git(repo, &["worktree", "add", "--detach", "--force", &dir.display().to_string(), sha])?;
    Ok(PatchedTree { repo: repo.to_path_buf(), dir })
}

/// The message for a patch that changes nothing: measuring it would only measure BAD a second time.
fn changes_nothing(patch: &Path, why: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "the patch {} {why}, so it changes nothing and there is nothing to measure; give --patch a patch with changes \
         (the output of git diff or git format-patch)",
        patch.display()
    )
}

/// Makes a worktree of `bad` with the patch applied, or says why the patch does not apply or changes nothing. With
/// the tree, the patch's text as it was applied, when it is UTF-8 text: the store keeps it for the report's mail,
/// read on machines where the patch's path names nothing.
fn apply_patch(repo: &Path, root: &Path, bad: &str, patch: &Path) -> Result<(PatchedTree, Option<String>)> {
    // git's own words for an empty patch ("No valid patches in input (allow with "--allow-empty")") suggest a flag
    // that try-fix does not have, and an empty patch is never what was meant.
    let text = std::fs::read(patch).with_context(|| format!("cannot read the patch file {}", patch.display()))?;
    if text.iter().all(u8::is_ascii_whitespace) {
        return Err(changes_nothing(patch, "is empty"));
    }
    let tree = add_worktree(repo, root, "patched", bad)?;
    let patch_path = patch.display().to_string();
    if let Err(e) = git::git(&tree.dir, &["apply", "--whitespace=nowarn", &patch_path]) {
        let why = match e {
            git::GitError::Failed { stderr, .. } => stderr,
            other => other.to_string(),
        };
        if why.contains("No valid patches in input") {
            return Err(changes_nothing(patch, "holds no diff git can apply"));
        }
        bail!("the patch {} does not apply on top of {}: {why}", patch.display(), prose_short(bad));
    }
    if git::git(&tree.dir, &["status", "--porcelain"])?.trim().is_empty() {
        return Err(changes_nothing(patch, &format!("applies on top of {} without changing a file", prose_short(bad))));
    }
    Ok((tree, String::from_utf8(text).ok()))
}

/// The end of a build's output for a message: its last lines, or that it printed nothing.
fn output_tail(output: &str) -> String {
    const LINES: usize = 20;
    let lines: Vec<&str> = output.lines().map(str::trim_end).collect();
    let end = lines.iter().rposition(|line| !line.is_empty()).map_or(0, |last| last + 1);
    if end == 0 {
        return "it printed nothing".to_string();
    }
    let start = end.saturating_sub(LINES);
    let shown: Vec<String> =
        lines[start..end].iter().map(|line| process::shortened(line, process::QUOTED_CHARS)).collect();
    let which = if start == 0 { "its output".to_string() } else { format!("the last {LINES} lines of its output") };
    format!("{which}:\n{}", shown.join("\n"))
}

/// Where a try-fix whose worktrees are under `root` (its process's own) records each build and benchmark process
/// while it runs (`culprit_run::step_record`): `try-fix-<pid>.step`, one per process, since two try-fix commands may
/// run at once in one repository.
fn steps_of(root: &Path) -> PathBuf {
    root.with_extension("step")
}

/// How a build of a tree of its own ended.
enum TreeBuild {
    Built,
    /// It failed (or was killed at `--build-timeout`): how it ended, and its output.
    Failed(String, String),
    /// The user interrupted it: nothing is known of the tree.
    Interrupted,
}

/// Runs the build in `tree` as the bisect runs it (the same variables and limit, `limit` seconds), recorded at
/// `record` while it runs ([`steps_of`]).
fn build_in(tree: &PatchedTree, build: &str, sha: &str, limit: Option<u64>, record: &Path) -> Result<TreeBuild> {
    let mut inv = Invocation::shell(build).in_dir(&tree.dir);
    inv.env = vec![
        ("CULPRIT_COMMIT".to_string(), sha.to_string()),
        ("CULPRIT_WORKTREE".to_string(), tree.dir.display().to_string()),
    ];
    inv.merge_stderr = true;
    let limit_duration = limit.map(std::time::Duration::from_secs);
    let finished = step_record::run_recorded(&inv, limit_duration, &interrupt_flag(), Some(record), "build", sha)
        .with_context(|| format!("cannot run the build '{}'", process::shortened(build, process::QUOTED_CHARS)))?;
    Ok(match finished.exit {
        process::Exit::Code(0) => TreeBuild::Built,
        process::Exit::Interrupted => TreeBuild::Interrupted,
        process::Exit::TimedOut => TreeBuild::Failed(
            format!(
                "killed after {} (--build-timeout)",
                culprit_job::convention::duration_text(limit.unwrap_or_default())
            ),
            finished.stdout,
        ),
        exit => TreeBuild::Failed(exit.describe(), finished.stdout),
    })
}

/// Builds the patched tree; false when the user interrupted. When the build fails, BAD is built without the patch
/// too, so the message can say which side fails: a build that fails at BAD alone is the build command's or BAD's
/// problem, and blaming the patch would send the user to the wrong place.
fn build_patched(
    tree: &PatchedTree,
    root: &Path,
    build: &str,
    limit: Option<u64>,
    bad: &str,
    patch: &Path,
) -> Result<bool> {
    let (exit, output) = match build_in(tree, build, bad, limit, &steps_of(root))? {
        TreeBuild::Built => return Ok(true),
        TreeBuild::Interrupted => return Ok(false),
        TreeBuild::Failed(exit, output) => (exit, output),
    };
    let shown = process::shortened(build, process::QUOTED_CHARS);
    let unpatched = add_worktree(&tree.repo, root, "unpatched", bad)?;
    match build_in(&unpatched, build, bad, limit, &steps_of(root))? {
        TreeBuild::Interrupted => Ok(false),
        TreeBuild::Failed(bad_exit, bad_output) => bail!(
            "the build '{shown}' fails at patched and at bad ({}) without the patch too, so the patch is not what \
             breaks it; fix the --build command (it runs in each side's worktree, with CULPRIT_COMMIT and \
             CULPRIT_WORKTREE set) or choose a --bad that builds. At bad it ended with {bad_exit}; {}",
            prose_short(bad),
            output_tail(&bad_output)
        ),
        TreeBuild::Built => bail!(
            "the build '{shown}' fails at patched ({} with the patch {} applied) and works at bad without it, so the \
             patch breaks the build: {exit}; {}",
            prose_short(bad),
            patch.display(),
            output_tail(&output)
        ),
    }
}

/// When a run of base or bad failed because its build failed, the message saying so: the bisect driver then marks
/// the side as not buildable, so every later run of it would fail the same way and measuring on is pointless.
/// `killed_after` is the `--build-timeout` in seconds when the driver said the build was killed at that limit: the
/// message then says so and how to give it longer, since a build that is only slow is not broken.
fn build_failure(record: &RunRecord, side: &str, sha: &str, killed_after: Option<u64>) -> Option<String> {
    let RunOutcome::Failed { reason } = &record.outcome else { return None };
    // The driver stores a failed build as a run whose reason starts with `build '` and whose output is build.log.
    let log = record.raw_outputs.iter().find(|raw| raw.name == "build.log")?;
    if !reason.starts_with("build ") {
        return None;
    }
    let tail = output_tail(&String::from_utf8_lossy(&log.content));
    if let Some(limit) = killed_after {
        let text = culprit_job::convention::duration_text;
        return Some(format!(
            "the build of {side} ({}) was killed after {} (--build-timeout), so {side} cannot be measured and nothing \
             was compared; if the build is only slow, give it longer (e.g. --build-timeout {}, or none for no \
             limit), and if it hangs at {side}, find out why there; {tail}",
            prose_short(sha),
            text(limit),
            text(limit.saturating_mul(2)),
        ));
    }
    Some(format!(
        "the build failed at {side} ({}): {}; {tail}",
        prose_short(sha),
        process::shortened(reason, process::QUOTED_CHARS),
    ))
}

fn commit_of(revision: &Revision) -> Result<RangeCommit> {
    match revision {
        Revision::Commit { sha, subject, .. } => {
            Ok(RangeCommit { sha: sha.clone(), subject: subject.clone().unwrap_or_default(), parents: Vec::new() })
        }
        Revision::Label { name } => bail!("{name} is a label, not a commit"),
    }
}

/// The metric names of the successful runs among `records`.
fn metric_names<'a>(records: impl IntoIterator<Item = &'a RunRecord>) -> BTreeSet<String> {
    records.into_iter().filter(|r| r.outcome.is_ok()).flat_map(|r| r.metrics.keys().cloned()).collect()
}

/// The error for a `--metric` that runs which have metrics do not report.
fn unknown_metric(metric: &str, names: &BTreeSet<String>, runs: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "--metric {} is not a metric of {runs}; they report {}. Name one of those with --metric",
        process::shell_quote(metric),
        some_metric_names(names)
    )
}

/// Checks `--metric` against the stored successful runs of the job at base and bad, before anything is measured:
/// a name that none of them reports would only be found wrong after every run. Without such runs this says nothing;
/// the first round of measurements is checked instead.
fn check_metric_stored(store: &dyn culprit_store::Store, job_id: &str, keys: &[String], metric: &str) -> Result<()> {
    let runs = store.list_runs(&RunFilter {
        job: Some(job_id.to_string()),
        revision_keys: keys.to_vec(),
        status: Some(culprit_store::RunStatus::Ok),
        ..RunFilter::default()
    })?;
    // The newest run of each revision is enough to know the job's metrics there, and reading a whole record costs.
    let mut records = Vec::new();
    for key in keys {
        if let Some(run) = runs.iter().rev().find(|r| r.revision.key() == key) {
            records.push(store.run(run.id)?);
        }
    }
    let names = metric_names(&records);
    if names.is_empty() || names.contains(metric) {
        return Ok(());
    }
    Err(unknown_metric(metric, &names, "the job's stored runs at base and bad"))
}

fn failure(record: &RunRecord) -> Option<String> {
    match &record.outcome {
        RunOutcome::Failed { reason } => Some(reason.clone()),
        RunOutcome::Ok => None,
    }
}

/// The checks that need no store, made before the store is opened: a missing patch file or benchmark would
/// otherwise leave a new, empty store behind a command that measured nothing.
pub fn check_args(args: &TryFixArgs) -> Result<()> {
    if args.job.is_none() && args.command.run.is_none() {
        bail!("give the benchmark to measure: --job FILE (one atomic job) or --run CMD (a command timed as is)");
    }
    std::fs::metadata(&args.patch).with_context(|| format!("cannot read the patch file {}", args.patch.display()))?;
    Ok(())
}

pub fn run(store: &mut dyn culprit_store::Store, args: &TryFixArgs) -> Result<ExitCode> {
    if args.runs < MIN_RUNS {
        bail!(
            "--runs {} is too few: the compare engine needs at least {MIN_RUNS} runs of each side to decide",
            args.runs
        );
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let repo = git::toplevel(args.repo.as_deref().unwrap_or(&cwd))?;
    let patch = std::fs::canonicalize(&args.patch)
        .with_context(|| format!("cannot read the patch file {}", args.patch.display()))?;
    let base = commit_of(&git::resolve(&repo, &args.base)?)?;
    let bad = commit_of(&git::resolve(&repo, &args.bad)?)?;
    if base.sha == bad.sha {
        bail!(
            "--base {} and --bad {} are the same commit {}: the fix is measured against a base that does not have the regression",
            args.base,
            args.bad,
            base.sha
        );
    }
    let (job_yaml, job_source, default_metric) = benchmark_job(args.job.as_deref(), &args.command)?;
    let job = plan_job(&job_yaml, &job_source, &repo)?;
    let scratch = crate::cmd::bisect::validated_scratch(args.scratch.as_deref())?;
    let patch_path = patch.display().to_string();
    let blob_id = git::git(&repo, &["hash-object", "--no-filters", &patch_path])
        .with_context(|| format!("cannot read the patch file {}", patch.display()))?;
    let label = patched_label(&bad.sha, &patch, &blob_id);
    if let Some(metric) = &args.metric {
        check_metric_stored(store, &job.job_id, &[base.sha.clone(), bad.sha.clone()], metric)?;
    }

    // Validate the patch before anything is measured.
    let root = process_worktree_root(&repo, "try-fix");
    // What try-fix commands killed with `kill -9` left running (a hung build, a benchmark) is killed first.
    if let Some(dir) = root.parent() {
        reap_leftover_steps_of_processes(dir, "try-fix");
    }
    // Declared before the worktrees in it, so it is dropped after them: the directory then goes once it is empty.
    let _root = EmptyDirectory(root.clone());
    let (tree, patch_text) = apply_patch(&repo, &root, &bad.sha, &patch)?;
    let timeouts = args.timeouts.step_timeouts();
    if let Some(build) = &args.build {
        // Ctrl-C during the build says nothing of the patch: it was called a build that fails at patched and at bad.
        if !build_patched(&tree, &root, build, timeouts.build_secs, &bad.sha, &patch)? {
            eprintln!("culprit: interrupted while building the patched tree; nothing was measured");
            return Ok(ExitCode::from(130));
        }
    }

    let config = SessionConfig {
        // The patch is applied to the bad commit's files.
        no_checkout: false,
        repo: repo.clone(),
        good: base.sha.clone(),
        bad: bad.sha.clone(),
        other_goods: Vec::new(),
        job_yaml: job_yaml.clone(),
        job_source: job_source.clone(),
        metric: args.metric.clone().or(default_metric.clone()).unwrap_or_default(),
        build: args.build.clone(),
        deploy: None,
        timeouts,
        improvement: false,
        bisect: Default::default(),
        machine: culprit_run::machine::hostname(),
        probe_runs: Vec::new(),
        probe_chose_metric: false,
        scratch,
    };
    let interrupt = interrupt_flag();
    let context = run_context(config.scratch.as_deref())?;
    let mut patched_job = job.clone();
    patched_job.cwd = Some(tree.dir.clone());
    patched_job.env.extend([
        ("CULPRIT_COMMIT".to_string(), bad.sha.clone()),
        ("CULPRIT_WORKTREE".to_string(), tree.dir.display().to_string()),
    ]);
    let mut patched_context = context.clone();
    patched_context.revision = Revision::Label { name: label.clone() };
    patched_context.step_record = Some(steps_of(&root));
    eprintln!(
        "culprit: measuring {} (base), {} (bad) and {label} (patched), {} runs each, interleaved",
        &base.sha[..10],
        &bad.sha[..10],
        args.runs
    );
    // Recorded before the first run, so that each run is linked to it as it is stored: `report --compare --fix`
    // reads exactly these runs, not whatever else is stored of the three (another try-fix of the same patch).
    let try_fix = store.create_try_fix(&culprit_store::NewTryFix {
        repo: repo.display().to_string(),
        base: base.sha.clone(),
        bad: bad.sha.clone(),
        fix: label.clone(),
        patch: patch.display().to_string(),
        patch_text,
        build: args.build.clone(),
        job_id: job.job_id.clone(),
        machine: culprit_run::machine::hostname(),
        created_at: culprit_run::bisect::now(),
    })?;
    let bar = progress_bar();
    let mut measured: [Vec<RunRecord>; 3] = Default::default();
    {
        // The bisect's progress observer, but for a failed build of base or bad: a bisect skips such a commit as
        // untestable and says so, while try-fix skips nothing and stops with `build_failure`'s message instead, so
        // the driver's word is only kept (whether the build was killed at its limit) for that message.
        let killed = std::cell::Cell::new(false);
        let mut progress = observer(&bar);
        let mut observe = |event: Event<'_>| match event {
            Event::StepFailed { timed_out, .. } => killed.set(timed_out),
            other => progress(other),
        };
        let range = vec![base.clone(), RangeCommit { parents: vec![0], ..bad.clone() }];
        let worktrees = Worktrees::new(&config.repo, &root.join("commits"), LIVE_WORKTREES)?;
        let mut driver = Driver::new(store, None, config, range, job.clone(), context, worktrees, interrupt.clone());
        driver.record_steps_in(steps_of(&root));
        for round in 0..args.runs {
            // Each round starts one side later (base, bad, patched; then bad, patched, base; ...), so that whatever
            // the position in a round does to a run (the one after the slowest, the first after the harness's own
            // work) falls on every side alike instead of on one. With a fixed order, the reverted tree of the e2e
            // test (the same program as base) once measured 7% slower than base over 5 rounds in CI; whether the
            // order caused it is not known, but a fixed order could not rule it out.
            for side in (0..3).map(|k| (round + k) % 3) {
                bar.set_message(format!("round {}/{}: {}", round + 1, args.runs, ["base", "bad", "patched"][side]));
                let record = if side < 2 {
                    match driver.run_at(side, &mut observe)? {
                        Some((id, record)) => {
                            let which = [TryFixSide::Base, TryFixSide::Bad][side];
                            driver.store.link_run_to_try_fix(try_fix, id, which)?;
                            let sha = if side == 0 { &base.sha } else { &bad.sha };
                            let killed_after = killed.get().then_some(timeouts.build_secs.unwrap_or_default());
                            if let Some(message) = build_failure(&record, ["base", "bad"][side], sha, killed_after) {
                                bar.finish_and_clear();
                                bail!("{message}");
                            }
                            record
                        }
                        None => {
                            bar.finish_and_clear();
                            eprintln!("culprit: interrupted; every finished run is stored");
                            return Ok(ExitCode::from(130));
                        }
                    }
                } else {
                    let Some(record) = executor::run_once(&patched_job, &patched_context, &interrupt) else {
                        bar.finish_and_clear();
                        eprintln!("culprit: interrupted; every finished run is stored");
                        return Ok(ExitCode::from(130));
                    };
                    let id = driver.store.save_run(&record)?;
                    driver.store.link_run_to_try_fix(try_fix, id, TryFixSide::Fix)?;
                    record
                };
                measured[side].push(record);
            }
            // After one run of each side, a --metric that their runs do not report stops the measurement, rather
            // than after every round.
            if let (0, Some(metric)) = (round, &args.metric) {
                let names = metric_names(measured.iter().flatten());
                if !names.is_empty() && !names.contains(metric) {
                    bar.finish_and_clear();
                    let error = unknown_metric(metric, &names, "the first runs of base, bad and patched");
                    bail!("{error} (the runs measured so far are stored)");
                }
            }
        }
    }
    bar.finish_and_clear();
    drop(tree);
    store.finish_try_fix(try_fix, culprit_run::bisect::now())?;
    for (records, name) in measured.iter().zip(["base", "bad", "patched"]) {
        if !records.iter().any(|r| r.outcome.is_ok()) {
            let reason = records.iter().find_map(failure).unwrap_or_default();
            bail!("every run of {name} failed, so nothing can be compared: {reason}");
        }
    }

    // Only this invocation's interleaved runs are compared: older stored runs of base or bad were measured at
    // another time and would let the machine's drift into the verdict.
    let [base_runs, bad_runs, patched_runs] = &measured;
    let titled = |subject: &str| (!subject.is_empty()).then(|| subject.to_string());
    let columns = [
        column_of_runs(&base.sha, titled(&base.subject), base_runs),
        column_of_runs(&bad.sha, titled(&bad.subject), bad_runs),
        column_of_runs(&label, None, patched_runs),
    ];
    let keys = vec![base.sha.clone(), bad.sha.clone(), label.clone()];
    // The header is read from a stored run of the build measured here: the store may hold the job's runs of another
    // kconfig, compiler or rootfs at base or bad (imported from lkp), whose header would name that build.
    let build = base_runs.first().map(|r| culprit_store::Build::of_params(&r.params));
    // This machine's runs only: the mail's table of every stored run reads one machine's (`report --compare`), and a
    // farm's store counted the other machines' runs as "stored before this try-fix" too (QA 58: 41 of base where
    // this machine had 25).
    let hostname = base_runs.first().map(|r| r.machine.hostname.clone());
    let filter =
        RunFilter { job: Some(job.job_id.clone()), revision_keys: keys, build, hostname, ..RunFilter::default() };
    let stored_runs = store.list_runs(&filter)?;
    let axes = axes_of(store, &stored_runs, &job.job_id)?;
    // A metric fixed before measuring is decided as a family of its own; one picked from the table is not. Only
    // --metric fixes one: the --run job's own metric (its wall time) was judged by default, and under a table whose
    // one changed row was a 30% user-time regression the patch fixed, the verdict was "nothing to fix".
    let given = args.metric.clone();
    let three = Comparison { axes: axes.clone(), compare_axis: "commit".into(), columns: columns.to_vec() };
    let two = Comparison { axes, compare_axis: "commit".into(), columns: columns[1..].to_vec() };
    let table = compare_columns(&three, given.as_deref())?;
    let fixed_metric = given.is_some();
    let (metric, why) = match given {
        Some(m) => (m, None),
        None => match choose_metric(&table, default_metric.as_deref()) {
            Some((m, why)) => (m, Some(why)),
            None => bail!(
                "no program metric regressed from base to bad, so there is nothing for the patch to fix; name one \
                 with --metric"
            ),
        },
    };
    // The rest the patch leaves of a metric chosen from the table is decided for that metric alone, as with
    // --metric; whether bad regressed stays the table's decision, which chose it (`report::rest_decided_alone`).
    let alone = if fixed_metric { None } else { super::report::decided_alone(&three, &metric)? };
    let table = match alone {
        Some(alone) => super::report::rest_decided_alone(&table, &alone, &metric),
        None => table,
    };
    let vs_bad = compare_columns(&two, Some(&metric))?;
    let verdict = report::fix_verdict(&table, &vs_bad, &metric)?;
    let judged = why.map(|why| format!("judged {metric}, {why} (--metric judges another)"));
    if args.json {
        let value = serde_json::json!({
            "try_fix": try_fix.0, "base": base.sha, "bad": bad.sha, "patched": label,
            "patch": patch.display().to_string(),
            "metric": metric, "metric_chosen": judged, "verdict": verdict, "summary": verdict.describe(&metric),
            "table": serde_json::from_str::<serde_json::Value>(&culprit_core::compare::render::render_json(&table))?,
        });
        output::println(&serde_json::to_string_pretty(&value)?)?;
    } else {
        let mut out = render_table(&table, RenderOptions::default());
        out.push('\n');
        if let Some(judged) = &judged {
            out.push_str(&culprit_core::report::wrap(judged, ""));
        }
        out.push_str(&format!("{}\n", verdict.describe(&metric)));
        // The report leads with this try-fix's own runs (named by `--try-fix`); when the three have runs from
        // before this invocation (the bisect that found it, an earlier try-fix), it adds the table of every stored
        // run, and saying so keeps a reader from taking that table's numbers for these.
        let stored_ok = |key: &str| {
            let plain = |r: &&culprit_store::RunSummary| r.kind == culprit_store::RunKind::Plain;
            stored_runs.iter().filter(plain).filter(|r| r.revision.key() == key && r.failure_reason.is_none()).count()
        };
        let ok = |records: &[RunRecord]| records.iter().filter(|r| r.outcome.is_ok()).count();
        let earlier = [
            (stored_ok(&base.sha), ok(base_runs), "base"),
            (stored_ok(&bad.sha), ok(bad_runs), "bad"),
            (stored_ok(&label), ok(patched_runs), "patched"),
        ];
        let earlier: Vec<String> = earlier
            .iter()
            .filter(|(stored, here, _)| stored > here)
            .map(|(stored, here, side)| format!("{} of {side}", stored - here))
            .collect();
        let which = if earlier.is_empty() {
            "with this table".to_string()
        } else {
            format!(
                "with this table, and under it the table of every stored run of the three, which also reads the runs \
                 stored before this try-fix ({}), so its numbers and verdicts can differ from these",
                earlier.join(", ")
            )
        };
        // A metric fixed before measuring is decided on its own there too (`report --metric`); without it the
        // report picks its headline among all metrics and decides it among them, and could give another verdict.
        // The report's pick can differ from the regression judged here (a KPI that improved leads its mail): then
        // the report is told the metric judged.
        let judged_elsewhere = report::headline_metric(&table).as_deref() != Some(metric.as_str());
        let metric_option = if fixed_metric || judged_elsewhere {
            format!(" --metric {}", process::shell_quote(&metric))
        } else {
            String::new()
        };
        out.push_str(&format!(
            "\nculprit report{} --compare {} {} --fix {} --try-fix {try_fix}{metric_option} writes the mail {which}\n",
            crate::cmd::report::db_option(store),
            base.sha,
            bad.sha,
            process::shell_quote(&label)
        ));
        output::print(&out)?;
    }
    Ok(if matches!(verdict, FixVerdict::Fixed { .. }) { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The metric the verdict is about without --metric, and why, for the line that names it: the program metric that
/// regressed most significantly from base to bad (a KPI first, then the smallest q, then the largest change), the
/// regression the table shows; with none, the most significant change ([`report::headline_metric`]); with none of
/// those either, the job's own metric (a --run job's time per execution), whose verdict then says it is unchanged.
fn choose_metric(table: &CompareResult, job_metric: Option<&str>) -> Option<(String, String)> {
    // (a KPI, -q, |change|): larger is the likelier regression to fix.
    let mut best: Option<((bool, f64, f64), &str)> = None;
    let rows = table.rows.iter().filter(|r| r.class.is_benchmarks_own(&r.metric));
    for row in rows {
        let Some(c) = row.changes.iter().find(|c| c.column == 1) else { continue };
        if c.verdict != Verdict::Regression {
            continue;
        }
        // Two constant sides apart are decided by their zero-width interval, not q: as certain as a change gets.
        let q = if c.ratio_ci.is_some_and(|ci| ci.is_point()) { 0.0 } else { c.q.unwrap_or(1.0) };
        let size = if c.change.is_nan() { 0.0 } else { c.change.abs() };
        let key = (direction::is_kpi(&row.metric), -q, size);
        if best.is_none_or(|(b, _)| key > b) {
            best = Some((key, &row.metric));
        }
    }
    if let Some(((kpi, _, _), metric)) = best {
        let what = if kpi { "the KPI" } else { "the metric" };
        return Some((metric.to_string(), format!("{what} that regressed most significantly from base to bad")));
    }
    if let Some(metric) = report::headline_metric(table) {
        return Some((metric, "the most significant change from base to bad; no metric regressed".to_string()));
    }
    job_metric.map(|m| (m.to_string(), "the job's own metric; no metric changed from base to bad".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_metric_the_regression_is_judged_not_the_jobs_time_nor_a_kpi_that_improved() {
        use culprit_core::compare::Column;
        let spread = |mean: f64| (0..6).map(|i| mean * (1.0 + 0.002 * f64::from(i))).collect::<Vec<f64>>();
        let side = |label: &str, user: f64, ops: f64| {
            Column::new(label)
                .with_metric("command.user_time", spread(user))
                .with_metric("command.elapsed_time", spread(1.0))
                .with_metric("command.ops_per_sec", spread(ops))
        };
        // The user time regressed 30% and the patch takes it back; the wall time did not move; a captured KPI
        // improved, which is no regression for a patch to fix (the report's headline would lead with it).
        let columns = vec![side("base", 0.045, 100.0), side("bad", 0.0585, 150.0), side("patched", 0.045, 150.0)];
        let table = compare_columns(&Comparison { columns, ..Comparison::default() }, None).unwrap();
        assert_eq!(report::headline_metric(&table).as_deref(), Some("command.ops_per_sec"));
        let (metric, why) = choose_metric(&table, Some("command.elapsed_time")).unwrap();
        assert_eq!(metric, "command.user_time");
        assert_eq!(why, "the metric that regressed most significantly from base to bad");
        // With nothing changed, the job's own metric is judged, and said to be so.
        let columns = vec![side("base", 0.045, 100.0), side("bad", 0.045, 100.0), side("patched", 0.045, 100.0)];
        let table = compare_columns(&Comparison { columns, ..Comparison::default() }, None).unwrap();
        let (metric, why) = choose_metric(&table, Some("command.elapsed_time")).unwrap();
        assert_eq!(metric, "command.elapsed_time");
        assert_eq!(why, "the job's own metric; no metric changed from base to bad");
        assert_eq!(choose_metric(&table, None), None);
    }

    #[test]
    fn the_patched_label_names_the_patch_content_as_well_as_its_file() {
        let bad = "e41925124f0123456789abcdef0123456789abcd";
        let one = patched_label(bad, Path::new("/tmp/fix.patch"), "1a2b3c4d5e6f\n");
        assert_eq!(one, "e41925124f+fix-1a2b3c4d");
        let other = patched_label(bad, Path::new("/tmp/v2/fix.patch"), "9f8e7d6c5b4a\n");
        assert_ne!(one, other, "two patches named fix.patch with different content");
        assert_eq!(patched_label(bad, Path::new("/"), "abc"), "e41925124f+patch-abc");
    }

    #[test]
    fn a_builds_output_is_shown_by_its_last_lines_or_said_to_be_empty() {
        assert_eq!(output_tail(""), "it printed nothing");
        assert_eq!(output_tail("\n  \n"), "it printed nothing");
        assert_eq!(
            output_tail("cc -c a.c\na.c:3: error: expected ';'\n\n"),
            "its output:\ncc -c a.c\na.c:3: error: expected ';'"
        );
        let long: String = (1..=30).map(|n| format!("line {n}\n")).collect();
        let tail = output_tail(&long);
        assert!(tail.starts_with("the last 20 lines of its output:\nline 11\n"), "{tail}");
        assert!(tail.ends_with("\nline 30"), "{tail}");
    }

    #[test]
    fn only_a_failed_build_is_a_build_failure() {
        let record = |reason: &str, log: Option<&str>| RunRecord {
            job_id: String::new(),
            job_name: String::new(),
            testcase: String::new(),
            params: Vec::new(),
            job_yaml: String::new(),
            revision: Revision::Label { name: "x".into() },
            machine: culprit_run::machine::this_machine(),
            started_at: 0.0,
            ended_at: 0.0,
            outcome: RunOutcome::Failed { reason: reason.into() },
            exit_code: None,
            metrics: Default::default(),
            monitors: Vec::new(),
            raw_outputs: log
                .map(|log| culprit_core::model::RawOutput { name: "build.log".into(), content: log.into() })
                .into_iter()
                .collect(),
            stderr: String::new(),
            scratch: None,
        };
        let sha = "0123456789abcdef0123456789abcdef01234567";
        let message =
            build_failure(&record("build 'make' exit status 2", Some("make: *** no rule\n")), "base", sha, None);
        assert_eq!(
            message.as_deref(),
            Some("the build failed at base (0123456789ab): build 'make' exit status 2; its output:\nmake: *** no rule")
        );
        let silent =
            build_failure(&record("build 'false' exit status 1", Some("")), "bad", sha, None).unwrap_or_default();
        assert!(silent.ends_with("exit status 1; it printed nothing"), "{silent}");
        assert_eq!(build_failure(&record("'./bench' exit status 1", None), "base", sha, None), None);
        // A build killed at its limit is said to be so, with the way to give it longer, and never called untestable.
        let killed = record("build of 0123456789 ('make') killed after 90s (--build-timeout)", Some("cc a.c\n"));
        let message = build_failure(&killed, "base", sha, Some(90)).unwrap_or_default();
        assert!(message.starts_with("the build of base (0123456789ab) was killed after 90s (--build-timeout)"));
        assert!(message.contains("give it longer (e.g. --build-timeout 3m, or none"), "{message}");
        assert!(message.ends_with("its output:\ncc a.c") && !message.contains("untestable"), "{message}");
    }
}
