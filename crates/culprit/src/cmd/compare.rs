//! `culprit compare BASE OTHER...`: stored results side by side, one table per job, decided by
//! `culprit_core::compare` (the one verdict function) and rendered as lkp's table, JSON, Markdown or CSV.

use crate::cli::{CompareArgs, CompareFormat};
use crate::output;
use anyhow::{bail, Context, Result};
use culprit_core::compare::render::{self, RenderOptions};
use culprit_core::compare::sweep::{render_sweep, sweep_rows, Sweep, SweepPoint};
use culprit_core::compare::{
    compare, Column, CompareOptions, CompareResult, Comparison, DecisionRule, InconclusiveReason, LkpOptions, Verdict,
};
use culprit_core::model::{abbreviate, MetricClass, Revision};
use culprit_run::process::shell_quote;
use culprit_store::{RevisionSamples, RunFilter, RunSummary, SampleQuery, Store};
use std::collections::BTreeSet;
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
    // The command line checks the globs when it parses them; the dashboard builds these arguments itself.
    check_globs(&[
        ("--job", args.job.as_deref()),
        ("--testcase", args.testcase.as_deref()),
        ("--machine", args.machine.as_deref()),
    ])?;
    let given: Vec<&str> = std::iter::once(&args.base).chain(&args.others).map(String::as_str).collect();
    let revisions = given.iter().map(|g| resolve(store, g)).collect::<Result<Vec<_>>>()?;
    distinct_revisions(&given, &revisions)?;
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
        let filters =
            Filters { job: args.job.as_deref(), testcase: args.testcase.as_deref(), machine: args.machine.as_deref() };
        bail!(no_common_job(store, &keys, &filters)?);
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
    // Jobs whose runs have metrics, none of which --metric matches, with the names they do have.
    let mut unmatched: Vec<(&str, BTreeSet<String>)> = Vec::new();
    for (job_id, job_name) in &jobs {
        let query = SampleQuery {
            revision_keys: keys.clone(),
            job: Some(job_id.clone()),
            testcase: args.testcase.clone(),
            hostname: args.machine.clone(),
            metric_regex: args.metric.clone(),
        };
        let samples = store.samples(&query)?;
        if let Some(names) = unmatched_metric(store, &query, &samples)? {
            unmatched.push((job_name, names));
            continue;
        }
        let axes = axes_of(store, &runs, job_id)?;
        let comparison =
            Comparison { axes, compare_axis: "commit".into(), columns: samples.iter().map(column_of).collect() };
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
                json.push(
                    serde_json::json!({ "job_id": job_id, "job": job_name, "result": serde_json::to_value(&shown)? }),
                );
            }
        }
        warnings.extend(empty_table_warning(&result, job_name, &samples, args.all));
    }
    if let Some(pattern) = &args.metric {
        if unmatched.len() == jobs.len() {
            let names: BTreeSet<String> = unmatched.into_iter().flat_map(|(_, names)| names).collect();
            bail!(no_metric_matches(pattern, &names));
        }
        for (job_name, _) in unmatched {
            let pattern = shell_quote(pattern);
            warnings
                .push(format!("{job_name}: no metric of its runs matches --metric {pattern}; its table is left out"));
        }
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
        // An ambiguous name stays an error: git would pick one of its readings without a word.
        Err(first @ culprit_store::StoreError::AmbiguousRevision { .. }) => Err(first.into()),
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

/// Refuses two arguments that name one stored revision (`HEAD` and its SHA, a prefix and the full SHA): its
/// column against itself would show every metric unchanged, which reads like a result.
pub fn distinct_revisions(given: &[&str], revisions: &[Revision]) -> Result<()> {
    for (j, later) in revisions.iter().enumerate() {
        if let Some(i) = revisions[..j].iter().position(|earlier| earlier.key() == later.key()) {
            let same = if given[i] == given[j] {
                format!("'{}' is given twice", given[i])
            } else {
                format!("'{}' and '{}' are the same revision {}", given[i], given[j], later.key())
            };
            bail!("{same}: a comparison needs different revisions");
        }
    }
    Ok(())
}

/// Says why a table has no rows, so an empty table is never silent. The run counts come from the stored runs rather
/// than from the metrics shown, which `--metric` may have narrowed to none of a run's.
fn empty_table_warning(result: &CompareResult, job: &str, samples: &[RevisionSamples], all: bool) -> Option<String> {
    if result.rows.iter().any(|r| r.any_change()) {
        return None;
    }
    let runs: Vec<String> =
        samples.iter().map(|s| format!("{} ok/{} failed", s.ok_runs.len(), s.failed_runs)).collect();
    let hint = if all { "" } else { "; --all shows every row" };
    // Too few runs is not "no change": nothing was tested, and the fix is more runs, not a closer look.
    // Some(runs needed per pair) only when every pair is inconclusive for that reason.
    let too_few: Option<Vec<usize>> = result
        .rows
        .iter()
        .flat_map(|row| &row.changes)
        .map(|change| match change.verdict {
            Verdict::Inconclusive { reason: InconclusiveReason::TooFewRuns { needed, .. } } => Some(needed),
            _ => None,
        })
        .collect();
    if let Some(needed) = too_few.and_then(|needed| needed.into_iter().max()) {
        return Some(format!(
            "{job}: nothing decided, a verdict needs {needed} successful runs a side ({}); run each revision \
             {needed} times or more (culprit run -n {needed}){hint}",
            runs.join(" vs ")
        ));
    }
    Some(format!("{job}: no metric changed significantly ({}){hint}", runs.join(" vs ")))
}

/// The job, testcase and machine filters of a command, each as given on its command line.
#[derive(Debug, Clone, Copy, Default)]
pub struct Filters<'a> {
    pub job: Option<&'a str>,
    pub testcase: Option<&'a str>,
    pub machine: Option<&'a str>,
}

impl Filters<'_> {
    /// The filters given, as the flags that set them: `--job 'fio-*' --machine lkp-1`.
    pub fn flags(&self) -> String {
        let given = [("--job", self.job), ("--testcase", self.testcase), ("--machine", self.machine)];
        let flags: Vec<String> =
            given.iter().filter_map(|(flag, value)| value.map(|v| format!("{flag} {}", shell_quote(v)))).collect();
        flags.join(" ")
    }
}

/// Refuses a malformed glob, naming the flag that gave it.
pub fn check_globs(filters: &[(&str, Option<&str>)]) -> Result<()> {
    for (flag, pattern) in filters {
        if let Some(pattern) = pattern {
            culprit_store::glob::validate(pattern).with_context(|| format!("{flag} takes a glob"))?;
        }
    }
    Ok(())
}

/// Why no job has runs at every one of `keys`: which filter matches none of their runs (with the values that are
/// there), or that the filters together leave no job common to all, so the user knows which flag to change.
pub fn no_common_job(store: &dyn Store, keys: &[String], filters: &Filters<'_>) -> Result<String> {
    let revisions = keys.iter().map(|k| abbreviate(k, 12)).collect::<Vec<_>>().join(", ");
    let all = store.list_runs(&RunFilter { revision_keys: keys.to_vec(), ..RunFilter::default() })?;
    // Each filter: its flag, the glob given, the plural of what it selects, the filter alone, and the field it reads.
    type Check<'a> = (&'a str, Option<&'a str>, &'a str, RunFilter, fn(&RunSummary) -> &str);
    let checks: [Check<'_>; 3] = [
        (
            "--job",
            filters.job,
            "jobs",
            RunFilter { job: filters.job.map(str::to_string), ..RunFilter::default() },
            |r| &r.job_name,
        ),
        (
            "--testcase",
            filters.testcase,
            "testcases",
            RunFilter { testcase: filters.testcase.map(str::to_string), ..RunFilter::default() },
            |r| &r.testcase,
        ),
        (
            "--machine",
            filters.machine,
            "machines",
            RunFilter { hostname: filters.machine.map(str::to_string), ..RunFilter::default() },
            |r| &r.hostname,
        ),
    ];
    let mut unmatched = Vec::new();
    for (flag, given, noun, filter, field) in &checks {
        let Some(pattern) = given else { continue };
        if all.iter().any(|r| filter.matches(r)) {
            continue;
        }
        let there: BTreeSet<&str> = all.iter().map(field).collect();
        let mut listed: Vec<&str> = there.iter().copied().take(5).collect();
        if there.len() > listed.len() {
            listed.push("...");
        }
        unmatched.push(format!(
            "{flag} {} matches none of their runs ({noun} there: {})",
            shell_quote(pattern),
            listed.join(", ")
        ));
    }
    let see = "see `culprit results` for what each revision ran";
    Ok(if !unmatched.is_empty() {
        format!("no job has runs at every one of {revisions}: {}; {see}", unmatched.join("; "))
    } else if !filters.flags().is_empty() {
        format!("no job has runs at every one of {revisions} with {}; {see}", filters.flags())
    } else {
        format!("no job has runs at every one of {revisions}; {see}")
    })
}

/// When `query` narrows metrics by a regex and `samples` (its answer) hold none although the runs have metrics: the
/// names the runs do have. `None` when the regex matched, none was given, or the runs have no metric at all (every
/// run failed), which the table shows as it is.
fn unmatched_metric(
    store: &dyn Store,
    query: &SampleQuery,
    samples: &[RevisionSamples],
) -> Result<Option<BTreeSet<String>>> {
    if query.metric_regex.is_none() || samples.iter().any(|s| !s.metrics.is_empty()) {
        return Ok(None);
    }
    let every = store.samples(&SampleQuery { metric_regex: None, ..query.clone() })?;
    let names: BTreeSet<String> = every.iter().flat_map(|s| s.metrics.keys().cloned()).collect();
    Ok(Some(names).filter(|n| !n.is_empty()))
}

/// The error text of a `--metric` regex that matches none of `names`, listing some of them.
pub fn no_metric_matches(pattern: &str, names: &BTreeSet<String>) -> String {
    format!(
        "--metric {} matches no metric of the runs; they have {}. --metric takes a regex over metric names",
        shell_quote(pattern),
        some_metric_names(names)
    )
}

/// Up to ten of `names` for a message, program metrics first (the ones a user most likely meant), with the count of
/// all of them: `command.ops, command.elapsed_time, ... (14 metrics)`.
pub fn some_metric_names(names: &BTreeSet<String>) -> String {
    const SHOWN: usize = 10;
    let mut ordered: Vec<&String> = names.iter().collect();
    ordered.sort_by_key(|name| MetricClass::of(name) != MetricClass::Program);
    let mut listed: Vec<&str> = ordered.iter().take(SHOWN).map(|n| n.as_str()).collect();
    if names.len() > SHOWN {
        listed.push("...");
    }
    format!("{} ({} metric{})", listed.join(", "), names.len(), if names.len() == 1 { "" } else { "s" })
}

/// The `axes` header of a job: the machine, the testcase, then the job's params in job order.
pub fn axes_of(store: &dyn Store, runs: &[RunSummary], job_id: &str) -> Result<Vec<(String, String)>> {
    let Some(first) = runs.iter().find(|r| r.job_id == job_id) else { return Ok(Vec::new()) };
    let record = store.run(first.id)?;
    let mut axes =
        vec![("tbox_group".to_string(), first.hostname.clone()), ("testcase".to_string(), first.testcase.clone())];
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
        let Some(value) =
            record.params.iter().find(|(k, _)| k == param || k.ends_with(&format!(".{param}"))).map(|(_, v)| v.clone())
        else {
            bail!("job {job_name} has no param '{param}'; --by needs jobs that differ in it (a matrix over {param})");
        };
        let query = SampleQuery {
            revision_keys: keys.to_vec(),
            job: Some(job_id.clone()),
            testcase: args.testcase.clone(),
            hostname: args.machine.clone(),
            metric_regex: args.metric.clone(),
        };
        let samples = store.samples(&query)?;
        let metric = match &metric_name {
            Some(m) => m.clone(),
            None => {
                if let (Some(pattern), Some(names)) = (&args.metric, unmatched_metric(store, &query, &samples)?) {
                    bail!(no_metric_matches(pattern, &names));
                }
                // The program's KPI (stress-ng.cpu.ops_per_sec, not the ops count beside it), else its first metric
                // with a known direction; a metric --metric picked is taken even when no program reports it (a
                // monitor's, say).
                let names: Vec<&String> = samples.first().map(|s| s.metrics.keys().collect()).unwrap_or_default();
                let mut candidates: Vec<&String> =
                    names.iter().copied().filter(|k| MetricClass::of(k) == MetricClass::Program).collect();
                if candidates.is_empty() && args.metric.is_some() {
                    candidates = names;
                }
                let chosen = candidates
                    .iter()
                    .find(|k| culprit_core::compare::direction::is_kpi(k))
                    .or_else(|| {
                        candidates.iter().find(|k| culprit_core::compare::direction::direction_of(k).sign() != 0)
                    })
                    .or(candidates.first())
                    .map(|k| k.to_string())
                    .context("no program metric to sweep; name one with --metric")?;
                metric_name = Some(chosen.clone());
                chosen
            }
        };
        let per_column: Vec<Vec<f64>> =
            samples.iter().map(|s| s.metrics.get(&metric).cloned().unwrap_or_default()).collect();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_named_as_their_flags() {
        assert_eq!(Filters::default().flags(), "");
        let filters = Filters { job: Some("fio-*"), testcase: None, machine: Some("lkp-1") };
        assert_eq!(filters.flags(), "--job 'fio-*' --machine lkp-1");
    }

    #[test]
    fn metric_lists_put_program_metrics_first_and_stay_short() {
        let names: BTreeSet<String> = ["vmstat.cpu.us", "command.ops", "perf-profile.self.cycles-pp.memcpy"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let listed = some_metric_names(&names);
        assert!(listed.starts_with("command.ops, ") && listed.ends_with("(3 metrics)"), "{listed}");
        let many: BTreeSet<String> = (0..25).map(|i| format!("fio.m{i:02}")).collect();
        let listed = some_metric_names(&many);
        assert!(
            listed.contains("fio.m09, ...") && !listed.contains("fio.m10") && listed.ends_with("(25 metrics)"),
            "{listed}"
        );
        let message = no_metric_matches("nosuch", &names);
        assert!(
            message.starts_with("--metric nosuch matches no metric") && message.contains("command.ops"),
            "{message}"
        );
    }

    #[test]
    fn malformed_globs_name_their_flag() {
        assert!(check_globs(&[("--job", Some("fio-[ab]")), ("--machine", None)]).is_ok());
        let err = format!("{:#}", check_globs(&[("--machine", Some("lkp-[")), ("--job", Some("[["))]).unwrap_err());
        assert!(err.starts_with("--machine takes a glob: 'lkp-['"), "{err}");
    }
}
