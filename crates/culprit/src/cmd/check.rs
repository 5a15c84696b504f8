//! `culprit check`: one step of `git bisect run`. Measures the checked-out commit until its runs are decisively
//! like good's or like bad's, and exits 0 (good), 1 (bad) or 125 (untestable: the build or a run failed).
//!
//! Reference runs of good and bad are measured once, in worktrees, and stored; later checks of the same bisect reuse
//! them from the store. The decision is `culprit_core::check::classify`, a sequential likelihood-ratio test.

use crate::cli::CheckArgs;
use crate::cmd::bisect::{benchmark_job, choose_metric, plan_job, run_context, worktree_root};
use anyhow::{bail, Context, Result};
use culprit_core::check::{classify, CheckVerdict};
use culprit_core::model::{Revision, RunRecord};
use culprit_run::bisect::{Driver, SessionConfig};
use culprit_run::executor;
use culprit_run::git::{self, RangeCommit};
use culprit_run::process::{self, Invocation};
use culprit_store::{RunFilter, Store};
use std::process::ExitCode;

/// The exit code `git bisect run` reads as "skip this commit".
const UNTESTABLE: u8 = 125;
/// Accepted chance of a wrong verdict either way.
const ERROR: f64 = 0.01;

fn values(records: &[RunRecord], metric: &str) -> Vec<f64> {
    records.iter().filter(|r| r.outcome.is_ok()).filter_map(|r| r.metrics.get(metric).copied()).collect()
}

pub fn run(store: &mut dyn Store, args: &CheckArgs) -> Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let repo = git::toplevel(&cwd)?;
    let head = git::resolve(&repo, "HEAD")?;
    let (job_yaml, source, default_metric) = benchmark_job(args.job.as_deref(), args.run.as_deref())?;
    let job = plan_job(&job_yaml, &source, &repo)?;
    let good = git::resolve(&repo, &args.good)?;
    let bad = git::resolve(&repo, &args.bad)?;
    let subject = |r: &Revision| match r {
        Revision::Commit { subject, .. } => subject.clone().unwrap_or_default(),
        Revision::Label { name } => name.clone(),
    };
    let range = vec![
        RangeCommit { sha: good.key().to_string(), subject: subject(&good), parents: Vec::new() },
        RangeCommit { sha: bad.key().to_string(), subject: subject(&bad), parents: vec![0] },
    ];

    // Reference runs: what the store has of this job at good and bad, topped up in worktrees.
    let stored = |store: &dyn Store, key: &str| -> Result<Vec<RunRecord>> {
        let ids: Vec<_> = store
            .list_runs(&RunFilter { job: Some(job.job_id.clone()), revision_keys: vec![key.to_string()], ..RunFilter::default() })?
            .into_iter()
            .map(|r| r.id)
            .collect();
        Ok(store.runs(&ids)?)
    };
    let mut good_runs = stored(store, good.key())?;
    let mut bad_runs = stored(store, bad.key())?;
    let missing = |runs: &[RunRecord]| args.reference_runs.saturating_sub(runs.iter().filter(|r| r.outcome.is_ok()).count());
    if missing(&good_runs) > 0 || missing(&bad_runs) > 0 {
        eprintln!("culprit: measuring reference runs of good and bad in worktrees (stored for later checks)");
        let config = SessionConfig {
            repo: repo.clone(),
            good: good.key().to_string(),
            bad: bad.key().to_string(),
            job_yaml: job_yaml.clone(),
            job_source: source.clone(),
            metric: String::new(),
            build: args.build.clone(),
            deploy: None,
            bisect: Default::default(),
        };
        let interrupt = crate::cmd::run::interrupt_flag();
        let root = worktree_root(&repo, &format!("check-{}", std::process::id()));
        let mut driver = Driver::new(store, None, config, range.clone(), job.clone(), run_context(), &root, interrupt)?;
        let mut observe = |_: culprit_run::bisect::Event<'_>| {};
        // Interleaved, so slow drift of the machine hits both references alike.
        let rounds = missing(&good_runs).max(missing(&bad_runs));
        let (need_good, need_bad) = (missing(&good_runs), missing(&bad_runs));
        for round in 0..rounds {
            for (index, need) in [(0usize, need_good), (1, need_bad)] {
                if round >= need {
                    continue;
                }
                let Some((_, record)) = driver.run_at(index, &mut observe)? else { return Ok(ExitCode::from(130)) };
                if index == 0 { good_runs.push(record) } else { bad_runs.push(record) }
            }
        }
    }
    let metric = match args.metric.clone().or(default_metric) {
        Some(m) => m,
        None => choose_metric(&good_runs, &bad_runs)?,
    };

    // The checked-out commit: build here, as `git bisect run` expects, then run until decided.
    if let Some(build) = &args.build {
        let mut inv = Invocation::shell(build).in_dir(&repo);
        inv.env = vec![("CULPRIT_COMMIT".into(), head.key().to_string())];
        inv.merge_stderr = true;
        let f = process::run(&inv, None, &crate::cmd::run::interrupt_flag())?;
        if !f.exit.success() {
            eprintln!("culprit: build '{build}' {} at {}: untestable\n{}", f.exit.describe(), head.short(), f.stdout);
            return Ok(ExitCode::from(UNTESTABLE));
        }
    }
    let mut context = run_context();
    context.revision = head.clone();
    let mut job_here = job.clone();
    job_here.cwd = Some(repo.clone());
    job_here.env.push(("CULPRIT_COMMIT".into(), head.key().to_string()));
    let (g, b) = (values(&good_runs, &metric), values(&bad_runs, &metric));
    let mut current = Vec::new();
    let mut decision = classify(&g, &b, &current, ERROR);
    if decision.verdict == CheckVerdict::NoDifference {
        bail!("{metric}: {}; nothing to decide (more --reference-runs, or another --metric)", decision.reason);
    }
    for _ in 0..args.max_runs.max(1) {
        let Some(record) = executor::run_once(&job_here, &context, &crate::cmd::run::interrupt_flag()) else {
            return Ok(ExitCode::from(130));
        };
        store.save_run(&record)?;
        match (&record.outcome, record.metrics.get(&metric)) {
            (culprit_core::model::RunOutcome::Ok, Some(v)) if v.is_finite() => current.push(*v),
            (culprit_core::model::RunOutcome::Failed { reason }, _) => {
                eprintln!("culprit: run failed at {}: {reason}: untestable", head.short());
                return Ok(ExitCode::from(UNTESTABLE));
            }
            _ => {
                eprintln!("culprit: the run at {} has no metric {metric}: untestable", head.short());
                return Ok(ExitCode::from(UNTESTABLE));
            }
        }
        decision = classify(&g, &b, &current, ERROR);
        if matches!(decision.verdict, CheckVerdict::Good | CheckVerdict::Bad) {
            break;
        }
    }
    let verdict = match decision.verdict {
        CheckVerdict::Good => "good",
        CheckVerdict::Bad => "bad",
        // Out of runs: git bisect needs an answer; give the side the evidence leans to and say so.
        _ if decision.log_ratio > 0.0 => "bad (undecided, leaning)",
        _ => "good (undecided, leaning)",
    };
    eprintln!("culprit: {} is {verdict}: {metric}: {}", head.short(), decision.reason);
    Ok(if verdict.starts_with("bad") { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
