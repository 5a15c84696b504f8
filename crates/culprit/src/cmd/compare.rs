//! `culprit compare BASE OTHER...`: stored results side by side, one table per job, decided by
//! `culprit_core::compare` (the one verdict function) and rendered as lkp's table, JSON, Markdown or CSV.

use culprit_core::model::abbreviate;
use crate::cli::{CompareArgs, CompareFormat};
use crate::output;
use anyhow::{bail, Context, Result};
use culprit_core::compare::render::{self, RenderOptions};
use culprit_core::compare::sweep::{render_sweep, sweep_rows, Sweep, SweepPoint};
use culprit_core::compare::{compare, Column, CompareOptions, CompareResult, Comparison, DecisionRule, LkpOptions};
use culprit_core::model::{MetricClass, Revision};
use culprit_store::{RevisionSamples, RunFilter, RunSummary, SampleQuery, Store};
use std::process::ExitCode;

/// Params that describe where a job came from rather than what it measures; left out of the `axes` header.
const NOT_AXES: &[&str] = &["suite", "testcase", "category", "job_origin"];

/// A column header: the full SHA for commits (lkp truncates it), the name for labels.
pub fn column_of(samples: &RevisionSamples) -> Column {
    let (label, subject) = match &samples.revision {
        Revision::Commit { sha, subject, .. } => (sha.clone(), subject.clone()),
        Revision::Label { name } => (name.clone(), None),
    };
    Column { label, subject, metrics: samples.metrics.clone(), failed_runs: samples.failed_runs }
}

/// The jobs (id, name) that every revision has runs of, in order of first appearance.
pub fn common_jobs(runs: &[RunSummary], keys: &[String]) -> Vec<(String, String)> {
    let mut jobs: Vec<(String, String)> = Vec::new();
    for r in runs {
        if !jobs.iter().any(|(id, _)| id == &r.job_id) {
            jobs.push((r.job_id.clone(), r.job_name.clone()));
        }
    }
    jobs.retain(|(id, _)| keys.iter().all(|k| runs.iter().any(|r| &r.job_id == id && r.revision.key() == k)));
    jobs
}

fn options(args: &CompareArgs) -> CompareOptions {
    let mut o = CompareOptions::default();
    if args.lkp_rules {
        o.rule = DecisionRule::Lkp(LkpOptions::default());
    }
    o
}

pub fn run(store: &dyn Store, args: &CompareArgs) -> Result<ExitCode> {
    let rendered = render(store, args)?;
    for warning in &rendered.warnings {
        eprintln!("culprit: {warning}");
    }
    output::print(&rendered.text)?;
    Ok(ExitCode::SUCCESS)
}

/// What `culprit compare` prints: the text for stdout, and the warnings it writes to stderr (why a table shows no
/// row), which the dashboard shows on the page instead.
pub struct Rendered {
    pub text: String,
    pub warnings: Vec<String>,
}

/// The comparison in the format `args` asks for, as `culprit compare` prints it. With `--by PARAM --plot FILE` the
/// chart is written to FILE as well.
pub fn render(store: &dyn Store, args: &CompareArgs) -> Result<Rendered> {
    let mut revisions = Vec::new();
    for given in std::iter::once(&args.base).chain(&args.others) {
        revisions.push(resolve(store, given)?);
    }
    let keys: Vec<String> = revisions.iter().map(|r| r.key().to_string()).collect();
    let runs = store.list_runs(&RunFilter {
        job: args.job.clone(),
        testcase: args.testcase.clone(),
        hostname: args.machine.clone(),
        revision_keys: keys.clone(),
        ..RunFilter::default()
    })?;
    let jobs = common_jobs(&runs, &keys);
    if jobs.is_empty() {
        bail!(
            "no job has runs at every one of {}; see `culprit results` for what each revision ran",
            keys.iter().map(|k| abbreviate(k, 12)).collect::<Vec<_>>().join(", ")
        );
    }
    if let Some(param) = &args.by {
        let text = sweep(store, args, param, &jobs, &runs, &keys)?;
        return Ok(Rendered { text, warnings: Vec::new() });
    }
    let options = options(args);
    let render_options = RenderOptions { all: args.all };
    let mut out = String::new();
    let mut json = Vec::new();
    let mut warnings = Vec::new();
    for (job_id, job_name) in &jobs {
        let samples = store.samples(&SampleQuery {
            revision_keys: keys.clone(),
            job: Some(job_id.clone()),
            testcase: args.testcase.clone(),
            hostname: args.machine.clone(),
            metric_regex: args.metric.clone(),
        })?;
        let axes = axes_of(store, &runs, job_id)?;
        let comparison = Comparison { axes, compare_axis: "commit".into(), columns: samples.iter().map(column_of).collect() };
        let result = compare(&comparison, &options).with_context(|| format!("comparing job {job_name}"))?;
        match args.format {
            CompareFormat::Table => {
                out.push_str(&render::render_table(&result, render_options));
                let lines = render::headlines(&result);
                if !lines.is_empty() {
                    out.push('\n');
                    for l in lines {
                        out.push_str(&l);
                        out.push('\n');
                    }
                }
                out.push('\n');
            }
            CompareFormat::Markdown => {
                out.push_str(&format!("### {job_name}\n\n"));
                out.push_str(&render::render_markdown(&result, render_options));
                out.push('\n');
            }
            CompareFormat::Csv => out.push_str(&render::render_csv(&result, render_options)),
            CompareFormat::Json => {
                // Like the table, JSON carries the changed rows unless --all asks for every one: 20,000 unchanged
                // perf-profile rows are megabytes nobody reads.
                let mut shown = result.clone();
                shown.rows.retain(|r| args.all || r.any_change());
                json.push(serde_json::json!({ "job_id": job_id, "job": job_name, "result": serde_json::to_value(&shown)? }));
            }
        }
        warnings.extend(empty_table_warning(&result, job_name));
    }
    if args.format == CompareFormat::Json {
        out = serde_json::to_string_pretty(&json)?;
        out.push('\n');
    }
    Ok(Rendered { text: out, warnings })
}

/// A stored revision for what the user typed; when the store does not know it and the current directory is a git
/// repository, git's own reading of it (`HEAD~3`, a branch, a tag) is tried.
pub fn resolve(store: &dyn Store, given: &str) -> Result<Revision> {
    match store.resolve_revision(given) {
        Ok(r) => Ok(r),
        Err(first) => {
            let from_git = std::env::current_dir()
                .ok()
                .and_then(|cwd| culprit_run::git::toplevel(&cwd).ok())
                .and_then(|top| culprit_run::git::resolve(&top, given).ok());
            match from_git {
                Some(rev) => store
                    .resolve_revision(rev.key())
                    .with_context(|| format!("'{given}' is commit {} in this repository", rev.key())),
                None => Err(first.into()),
            }
        }
    }
}

/// Says why a table has no rows, so an empty table is never silent.
fn empty_table_warning(result: &CompareResult, job: &str) -> Option<String> {
    if result.rows.iter().any(|r| r.any_change()) {
        return None;
    }
    let runs: Vec<String> = result.columns.iter().map(|c| format!("{} ok/{} failed", c.ok_runs, c.failed_runs)).collect();
    Some(format!("{job}: no metric changed significantly ({}); --all shows every row", runs.join(" vs ")))
}

/// The `axes` header of a job: the machine, the testcase, then the job's params in job order.
pub fn axes_of(store: &dyn Store, runs: &[RunSummary], job_id: &str) -> Result<Vec<(String, String)>> {
    let Some(first) = runs.iter().find(|r| r.job_id == job_id) else { return Ok(Vec::new()) };
    let record = store.run(first.id)?;
    let mut axes = vec![("tbox_group".to_string(), first.hostname.clone()), ("testcase".to_string(), first.testcase.clone())];
    for (k, v) in &record.params {
        if NOT_AXES.contains(&k.as_str()) || v.is_empty() {
            continue;
        }
        axes.push((k.clone(), v.clone()));
    }
    Ok(axes)
}

/// `--by PARAM`: one row per value of the param, one column per revision, for one metric.
fn sweep(
    store: &dyn Store,
    args: &CompareArgs,
    param: &str,
    jobs: &[(String, String)],
    runs: &[RunSummary],
    keys: &[String],
) -> Result<String> {
    let mut points: Vec<(String, Vec<Vec<f64>>)> = Vec::new();
    let mut metric_name: Option<String> = None;
    for (job_id, job_name) in jobs {
        let Some(first) = runs.iter().find(|r| &r.job_id == job_id) else { continue };
        let record = store.run(first.id)?;
        let Some(value) = record.params.iter().find(|(k, _)| k == param || k.ends_with(&format!(".{param}"))).map(|(_, v)| v.clone())
        else {
            bail!("job {job_name} has no param '{param}'; --by needs jobs that differ in it (a matrix over {param})");
        };
        let samples = store.samples(&SampleQuery {
            revision_keys: keys.to_vec(),
            job: Some(job_id.clone()),
            testcase: args.testcase.clone(),
            hostname: args.machine.clone(),
            metric_regex: args.metric.clone(),
        })?;
        let metric = match &metric_name {
            Some(m) => m.clone(),
            None => {
                // Without --metric the program's first metric with a known direction is the natural KPI.
                let candidates: Vec<&String> = samples
                    .first()
                    .map(|s| s.metrics.keys().filter(|k| MetricClass::of(k) == MetricClass::Program).collect())
                    .unwrap_or_default();
                let chosen = candidates
                    .iter()
                    .find(|k| culprit_core::compare::direction::direction_of(k).sign() != 0)
                    .or(candidates.first())
                    .map(|k| k.to_string())
                    .context("no program metric to sweep; name one with --metric")?;
                metric_name = Some(chosen.clone());
                chosen
            }
        };
        let per_column: Vec<Vec<f64>> = samples.iter().map(|s| s.metrics.get(&metric).cloned().unwrap_or_default()).collect();
        match points.iter_mut().find(|(v, _)| v == &value) {
            Some((_, existing)) => {
                for (e, new) in existing.iter_mut().zip(per_column) {
                    e.extend(new);
                }
            }
            None => points.push((value, per_column)),
        }
    }
    // Numeric params sort numerically (1, 2, 4, 16), others as text.
    points.sort_by(|a, b| match (a.0.parse::<f64>(), b.0.parse::<f64>()) {
        (Ok(x), Ok(y)) => x.total_cmp(&y),
        _ => a.0.cmp(&b.0),
    });
    let columns: Vec<String> = keys.iter().map(|k| abbreviate(k, 12).to_string()).collect();
    let sweep = Sweep {
        param: param.to_string(),
        metric: metric_name.unwrap_or_default(),
        columns,
        points: points.into_iter().map(|(value, samples)| SweepPoint { value, samples }).collect(),
    };
    let rows = sweep_rows(&sweep, &options(args))?;
    if let Some(path) = &args.plot {
        crate::cmd::plot::write_sweep(path, &sweep, &rows)?;
    }
    Ok(render_sweep(&sweep, &rows))
}
