//! `culprit compare BASE OTHER...`: stored results side by side, one table per job, decided by
//! `culprit_core::compare` (the one verdict function) and rendered as lkp's table, JSON, Markdown or CSV.

use crate::cli::{CompareArgs, CompareFormat};
use crate::cmd::report::db_option;
use crate::output;
use anyhow::{bail, Context, Result};
use culprit_core::compare::render::{self, RenderOptions};
use culprit_core::compare::sweep::{
    render_sweep, render_sweeps_csv, render_sweeps_markdown, sweep_title, sweeps_rows, Sweep, SweepPoint,
};
use culprit_core::compare::profiled::compare_profiled;
use culprit_core::compare::{
    printf, Column, CompareOptions, CompareResult, Comparison, DecisionRule, InconclusiveReason, LkpOptions, RowKind,
    Verdict,
};
use culprit_core::report::RunSources;
use culprit_core::model::{abbreviate, MetricClass, Revision, RunRecord};
use culprit_core::words::counted;
use culprit_job::table::lkp_param_names;
use culprit_run::process::shell_quote;
use culprit_store::{Build, RevisionSamples, RunFilter, RunKind, RunSummary, SampleQuery, Store};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Params that describe where a job came from rather than what it measures; left out of the `axes` header.
const NOT_AXES: &[&str] = &["suite", "testcase", "category", "job_origin"];

/// A column header: the full SHA for commits (lkp truncates it), the name for labels; a commit's subject when it is
/// known ([`with_known_subject`] in `repo`, the repository of the compared commits as [`repository`] finds it, the
/// current directory's when `None`), for the `commit:` lines.
pub fn column_of(samples: &RevisionSamples, repo: Option<&Path>) -> Column {
    let (label, subject) = match with_known_subject(samples.revision.clone(), repo) {
        Revision::Commit { sha, subject, .. } => (sha, subject),
        Revision::Label { name } => (name, None),
    };
    Column { label, subject, metrics: samples.metrics.clone(), failed_runs: samples.failed_runs }
}

/// One job's stored runs at some revisions, as a table reads them: the plain runs, and the profiling runs
/// (`culprit bisect --profile`: perf attached, the benchmark several times slower) kept apart, for the perf rows the
/// plain runs lack (`culprit_core::compare::profiled`).
pub struct StoredRuns {
    pub plain: Vec<RevisionSamples>,
    /// `None` when no revision has a profiling run.
    pub profiling: Option<Vec<RevisionSamples>>,
}

impl StoredRuns {
    /// Reads the samples `query` asks for, of both kinds of runs (its own kind is ignored).
    pub fn read(store: &dyn Store, query: &SampleQuery) -> Result<StoredRuns> {
        let plain = store.samples(&SampleQuery { kind: RunKind::Plain, ..query.clone() })?;
        let profiling = store.samples(&SampleQuery { kind: RunKind::Profiling, ..query.clone() })?;
        let any = profiling.iter().any(|s| !s.ok_runs.is_empty() || s.failed_runs > 0);
        Ok(StoredRuns { plain, profiling: any.then_some(profiling) })
    }

    /// Whether any run of either kind has a metric (of those the query kept).
    pub fn has_metrics(&self) -> bool {
        self.plain.iter().chain(self.profiling.iter().flatten()).any(|s| !s.metrics.is_empty())
    }

    /// The comparisons of the plain runs and of the profiling runs, with the `axes` header and the subjects `repo`
    /// has for the commits ([`column_of`]).
    pub fn comparisons(&self, axes: Vec<(String, String)>, repo: Option<&Path>) -> (Comparison, Option<Comparison>) {
        let of = |samples: &[RevisionSamples]| Comparison {
            axes: axes.clone(),
            compare_axis: "commit".into(),
            columns: samples.iter().map(|samples| column_of(samples, repo)).collect(),
        };
        (of(&self.plain), self.profiling.as_deref().map(of))
    }

    /// Which runs the rows of a table compared from these come from, `None` without profiling runs.
    pub fn sources(&self, plain: &Comparison, profiled: Option<&Comparison>) -> Option<RunSources> {
        let (profiling, profiled) = (self.profiling.as_ref()?, profiled?);
        let supplied = culprit_core::compare::profiled::supplied_monitors(plain, profiled);
        let silent = culprit_core::compare::profiled::silent_monitors(plain, profiled);
        Some(RunSources {
            plain_runs: self.plain.iter().map(|s| s.ok_runs.len()).collect(),
            profiling_runs: profiling.iter().map(|s| s.ok_runs.len()).collect(),
            profiled_monitors: supplied.into_iter().map(str::to_string).collect(),
            silent_monitors: silent.into_iter().map(str::to_string).collect(),
        })
    }
}

/// The name each job of `runs` is shown under, by id: the name of its newest run (a job's runs keep the name it had
/// when they ran, and the naming rule can change), followed by ` (job <first 8 digits of its id>)` where another job
/// among `runs` has the same name. Two command jobs whose commands differed past lkp's 31 characters had one name, and
/// the messages and tables of one read as those of the other (QA 45); `--job` takes the 8 digits.
pub fn job_names(runs: &[RunSummary]) -> BTreeMap<&str, String> {
    names_in_view(runs.iter().map(|r| (r.job_id.as_str(), r.job_name.as_str())))
}

/// [`job_names`] of (job id, job name) pairs, oldest first.
pub fn names_in_view<'a>(jobs: impl IntoIterator<Item = (&'a str, &'a str)>) -> BTreeMap<&'a str, String> {
    let mut names: BTreeMap<&str, &str> = BTreeMap::new();
    for (id, name) in jobs {
        names.insert(id, name);
    }
    let mut ids_of: BTreeMap<&str, usize> = BTreeMap::new();
    for name in names.values() {
        *ids_of.entry(name).or_default() += 1;
    }
    names
        .iter()
        .map(|(id, name)| match ids_of.get(name) {
            Some(n) if *n > 1 => {
                let short: String = id.chars().take(culprit_job::atomic::NAME_ID_DIGITS).collect();
                (*id, format!("{name} (job {short})"))
            }
            _ => (*id, name.to_string()),
        })
        .collect()
}

/// The jobs (id, name) that every revision has runs of, in order of first appearance, each under the name
/// [`job_names`] gives it.
pub fn common_jobs(runs: &[RunSummary], keys: &[String]) -> Vec<(String, String)> {
    let names = job_names(runs);
    let mut jobs: Vec<(String, String)> = Vec::new();
    for r in runs {
        if !jobs.iter().any(|(id, _)| id == &r.job_id) {
            let name = names.get(r.job_id.as_str()).cloned().unwrap_or_else(|| r.job_name.clone());
            jobs.push((r.job_id.clone(), name));
        }
    }
    jobs.retain(|(id, _)| keys.iter().all(|k| runs.iter().any(|r| &r.job_id == id && r.revision.key() == k)));
    jobs
}

/// The warnings for the jobs that some of the revisions ran and others did not, which have no table: each names the
/// revisions without runs of it. Without them a job was left out without a word, so comparing three kernels where
/// one had not run a job yet read as if that job had never been measured at all.
pub fn partial_job_warnings(runs: &[RunSummary], keys: &[String], common: &[(String, String)]) -> Vec<String> {
    partial_jobs(runs, keys, common)
        .into_iter()
        .map(|job| format!("{job} (run it there, or compare the revisions that ran it)"))
        .collect()
}

/// Each job that some of the revisions ran and others did not, said as `<name>: left out, it has no runs at <the
/// revisions without runs of it>`: what [`partial_job_warnings`] warns of, and what `--by` says when it has nothing to
/// sweep without them.
fn partial_jobs(runs: &[RunSummary], keys: &[String], common: &[(String, String)]) -> Vec<String> {
    let names = job_names(runs);
    let mut partial: Vec<(&str, &str)> = Vec::new();
    for r in runs {
        if !common.iter().any(|(id, _)| id == &r.job_id) && !partial.iter().any(|(id, _)| *id == r.job_id) {
            partial.push((&r.job_id, names.get(r.job_id.as_str()).map_or(&r.job_name, |name| name)));
        }
    }
    partial
        .into_iter()
        .map(|(id, name)| {
            let missing: Vec<&str> = keys
                .iter()
                .filter(|k| !runs.iter().any(|r| r.job_id == id && r.revision.key() == k.as_str()))
                .map(|k| culprit_core::model::table_short(k))
                .collect();
            format!("{name}: left out, it has no runs at {}", missing.join(", "))
        })
        .collect()
}

fn options(args: &CompareArgs) -> CompareOptions {
    let mut o = CompareOptions::default();
    if args.lkp_rules {
        o.rule = DecisionRule::Lkp(LkpOptions::default());
    }
    if let Some(fraction) = args.min_change {
        o.min_change_pct = fraction * 100.0;
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
    // The chart's name is checked before the comparison, as `track --plot` checks it, so that a bad name does not
    // lose the work (and says so in the same words).
    if let Some(path) = &args.plot {
        crate::cmd::plot::check_path(path)?;
    }
    // The command line checks the globs when it parses them; the dashboard builds these arguments itself.
    check_globs(&[
        ("--job", args.job.as_deref()),
        ("--testcase", args.testcase.as_deref()),
        ("--machine", args.machine.as_deref()),
    ])?;
    let given: Vec<&str> = std::iter::once(&args.base).chain(&args.others).map(String::as_str).collect();
    let repo = repository(args.repo.as_deref())?;
    let revisions = given.iter().map(|g| resolve_in(store, g, repo.as_deref())).collect::<Result<Vec<_>>>()?;
    distinct_revisions(&given, &revisions)?;
    let keys: Vec<String> = revisions.iter().map(|r| r.key().to_string()).collect();
    // A job's table is of its plain runs (profiling runs only add perf rows), so a job is compared where it has plain
    // runs at every revision.
    let runs = store.list_runs(&RunFilter {
        job: args.job.clone(),
        testcase: args.testcase.clone(),
        hostname: args.machine.clone(),
        revision_keys: keys.clone(),
        kind: Some(RunKind::Plain),
        ..RunFilter::default()
    })?;
    let jobs = common_jobs(&runs, &keys);
    if jobs.is_empty() {
        let filters =
            Filters { job: args.job.as_deref(), testcase: args.testcase.as_deref(), machine: args.machine.as_deref() };
        bail!(no_common_job(store, &keys, &filters)?);
    }
    let mut warnings = partial_job_warnings(&runs, &keys, &jobs);
    if let Some(param) = &args.by {
        let text = sweep(store, args, param, &jobs, &runs, &keys, &mut warnings)?;
        return Ok(Rendered { text, warnings });
    }
    let options = options(args);
    let render_options = RenderOptions { all: args.all };
    let mut out = String::new();
    let mut json = Vec::new();
    // CSV is one table over every job (with a job column), rendered once every job is compared.
    let mut csv_tables = Vec::new();
    // Tables whose runs have metrics, none of which --metric matches (by the table's title), with the names they do
    // have.
    let mut unmatched: Vec<(String, BTreeSet<String>)> = Vec::new();
    let tables = machine_tables(&jobs, &runs, &keys, &mut warnings);
    let table_count = tables.len();
    for table in &tables {
        let MachineTable { job_id, job_name, machine, build, .. } = table;
        let query = SampleQuery {
            revision_keys: keys.clone(),
            job: Some(job_id.clone()),
            testcase: args.testcase.clone(),
            hostname: machine.clone().or_else(|| args.machine.clone()),
            metric_regex: args.metric.clone(),
            build: build.clone(),
            ..SampleQuery::default()
        };
        // Several machines' or builds' tables of one job are told apart by them wherever the job is named.
        let title = &table.title();
        let stored = StoredRuns::read(store, &query)?;
        if let Some(names) = unmatched_metric(store, &query, stored.has_metrics())? {
            unmatched.push((title.clone(), names));
            continue;
        }
        // The axes header is read from a run of the table's own machine and build, so that each build's table names
        // its own kconfig, compiler and rootfs.
        let of_table: Vec<RunSummary> = runs.iter().filter(|r| table.reads(r)).cloned().collect();
        let (plain, profiled) = stored.comparisons(axes_of(store, &of_table, job_id)?, repo.as_deref());
        let result = compare_profiled(&plain, profiled.as_ref(), &options)
            .with_context(|| format!("comparing job {job_name}"))?;
        let labels: Vec<String> = stored.plain.iter().map(|s| s.revision.short().to_string()).collect();
        let sources = stored.sources(&plain, profiled.as_ref());
        let said = sources.as_ref().map(|sources| culprit_core::report::sources_text(sources, &labels));
        let samples = &stored.plain;
        let side_keys: Vec<String> = stored.plain.iter().map(|s| s.revision.key().to_string()).collect();
        let machines = machines_differ(&side_facts(store, &of_table, &side_keys)?, &labels);
        let filesystems = filesystems_differ(&of_table, &side_keys, &labels);
        match args.format {
            CompareFormat::Table => {
                out.push_str(&render::render_table(&result, render_options));
                if let Some(said) = &said {
                    out.push_str(&culprit_core::report::wrap(said, "# "));
                }
                if let Some(machines) = &machines {
                    out.push_str(&culprit_core::report::wrap(machines, "# "));
                }
                if let Some(filesystems) = &filesystems {
                    out.push_str(&culprit_core::report::wrap(filesystems, "# "));
                }
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
                out.push_str(&format!("### {title}\n\n"));
                out.push_str(&render::render_markdown(&result, render_options));
                if let Some(said) = &said {
                    out.push_str(&format!("\n{}\n", culprit_core::report::escape_markdown(said)));
                }
                out.push('\n');
            }
            CompareFormat::Csv => csv_tables.push((title.clone(), result.clone())),
            CompareFormat::Json => {
                // Like the table, JSON carries the changed rows unless --all asks for every one: 20,000 unchanged
                // perf-profile rows are megabytes nobody reads.
                let mut shown = result.clone();
                shown.rows.retain(|r| args.all || r.any_change());
                let mut value =
                    serde_json::json!({ "job_id": job_id, "job": job_name, "result": serde_json::to_value(&shown)? });
                // Every table names its machine, as every command's JSON does (`docs/json.md`), not only a job's
                // tables of several machines; `null` for a table that pools machines (under a warning).
                value["machine"] = serde_json::json!(machine);
                if let Some(build) = build {
                    value["build"] = serde_json::to_value(build)?;
                }
                if let Some(sources) = &sources {
                    value["sources"] = serde_json::to_value(sources)?;
                }
                // How the sides differ, as the table's `#` lines say it, left out when they agree (`docs/json.md`).
                if let Some(machines) = &machines {
                    value["machines_differ"] = serde_json::json!(machines);
                }
                if let Some(filesystems) = &filesystems {
                    value["filesystems_differ"] = serde_json::json!(filesystems);
                }
                json.push(value);
            }
        }
        // The other formats carry no sentence of their own: the warning says it there.
        if args.format != CompareFormat::Table {
            warnings.extend(machines.map(|machines| format!("{title}: {machines}")));
            warnings.extend(filesystems.map(|filesystems| format!("{title}: {filesystems}")));
        }
        warnings.extend(empty_table_warning(&result, title, samples, args, &db_option(store)));
        if args.metric.is_none() {
            warnings.extend(idle_stressors_warning(&result, title, &db_option(store)));
        }
    }
    if let Some(pattern) = &args.metric {
        if unmatched.len() == table_count {
            let names: BTreeSet<String> = unmatched.into_iter().flat_map(|(_, names)| names).collect();
            bail!(no_metric_matches(pattern, &names));
        }
        for (title, _) in unmatched {
            let pattern = shell_quote(pattern);
            warnings.push(format!("{title}: no metric of its runs matches --metric {pattern}; its table is left out"));
        }
    }
    if args.format == CompareFormat::Json {
        out = serde_json::to_string_pretty(&json)?;
        out.push('\n');
    }
    if args.format == CompareFormat::Csv {
        let tables: Vec<(&str, &CompareResult)> =
            csv_tables.iter().map(|(job, result)| (job.as_str(), result)).collect();
        out = render::render_jobs_csv(&tables, render_options);
    }
    Ok(Rendered { text: out, warnings })
}

/// Each side's (`keys`, the table's revisions) machine and params, of the runs that speak for it
/// ([`speaking_runs`]); empty for a side without runs. One read serves the table's sentence and the mail's steps.
pub(crate) fn side_facts(
    store: &dyn Store,
    runs: &[RunSummary],
    keys: &[String],
) -> Result<Vec<Vec<culprit_store::RunFacts>>> {
    let mut sides = Vec::new();
    for key in keys {
        let ids: Vec<culprit_store::RunId> = speaking_runs(runs, key).iter().map(|r| r.id).collect();
        sides.push(if ids.is_empty() { Vec::new() } else { store.run_facts(&ids)? });
    }
    Ok(sides)
}

/// The machine facts in which the runs of a table differ (`Machine::differences`), and the workload quantities the
/// job resolved to differently on them (`model::workload_differences`: hackbench's tasks from `nr_threads: 100%`),
/// said as a sentence, or None. `runs` are the table's; each side is read from all its successful runs (every run
/// when none succeeded), so that a side whose own runs ran on different machine facts is said too. A side run under
/// `taskset -c 0` records 1 CPU where the other records 2, and the table put the two together with no word, while
/// the mail named the bad side's machine only (QA 46); one hackbench job then ran 40 tasks at one side and 80 at the
/// other, and only the CPU count was said. The store reads the runs' machines and params alone
/// (`Store::run_facts`, read once per side by [`side_facts`]), not each side's whole run.
pub(crate) fn machines_differ(sides: &[Vec<culprit_store::RunFacts>], labels: &[String]) -> Option<String> {
    if sides.iter().any(Vec::is_empty) {
        return None;
    }
    let machines: Vec<(&str, Vec<&culprit_core::model::Machine>)> = labels
        .iter()
        .zip(sides)
        .map(|(label, facts)| (label.as_str(), facts.iter().map(|f| &f.machine).collect()))
        .collect();
    let said = culprit_core::model::Machine::differences(&machines)?;
    // The quantities follow from the CPU count and the job's params, so they can only differ where the machine facts
    // do: said after them, each with the values of both sides.
    let resolved: Vec<Vec<Vec<(String, u64)>>> = sides
        .iter()
        .map(|facts| {
            facts.iter().map(|f| culprit_run::program::resolved_workload_of(&f.params, f.machine.nr_cpu)).collect()
        })
        .collect();
    let workloads: Vec<(&str, Vec<&culprit_core::model::WorkloadQuantities>)> = labels
        .iter()
        .zip(&resolved)
        .map(|(label, runs)| (label.as_str(), runs.iter().map(Vec::as_slice).collect()))
        .collect();
    let workload = match culprit_core::model::workload_differences(&workloads) {
        Some(quantities) => format!("; so the job resolved to different workloads: {quantities}"),
        None => String::new(),
    };
    Some(format!(
        "the sides ran on different machine facts: {said}{workload}; the change may be the machine's, not the \
         revisions'"
    ))
}

/// The filesystems the benchmark's files of each side of a table were on, when they differ
/// (`ScratchFilesystem::differences`), as the sentence compare and the mail print; None when they agree or were not
/// recorded. `runs` are the table's; a side is read from its successful runs (all of them when none succeeded), each
/// of which recorded its own. An fio job on ext4 at one side and on tmpfs (`--scratch /dev/shm/x`) at the other
/// read +1688% write IOPS with no word of the filesystems (QA 46).
pub(crate) fn filesystems_differ(runs: &[RunSummary], keys: &[String], labels: &[String]) -> Option<String> {
    let sides: Vec<(&str, Vec<&culprit_core::model::ScratchFilesystem>)> = keys
        .iter()
        .zip(labels)
        .map(|(key, label)| (label.as_str(), side_filesystems(runs, key)))
        .collect();
    filesystems_sentence(&sides)
}

/// How the sides' filesystems differ, as compare and the mails (of a comparison and of a bisect) say it; None when
/// they agree.
pub(crate) fn filesystems_sentence(sides: &[(&str, Vec<&culprit_core::model::ScratchFilesystem>)]) -> Option<String> {
    culprit_core::model::ScratchFilesystem::differences(sides)
        .map(|said| format!("{said}; the change may be the filesystems', not the revisions'"))
}

/// The runs of revision `key` among `runs` whose facts (machine, filesystem) speak for its side, in run order: its
/// successful runs, or every run when none succeeded.
pub(crate) fn speaking_runs<'r>(runs: &'r [RunSummary], key: &str) -> Vec<&'r RunSummary> {
    let side: Vec<&RunSummary> = runs.iter().filter(|r| r.revision.key() == key).collect();
    let any_ok = side.iter().any(|r| r.failure_reason.is_none());
    side.into_iter().filter(|r| !any_ok || r.failure_reason.is_none()).collect()
}

/// The scratch filesystems the runs of revision `key` among `runs` recorded, in run order: its successful runs',
/// or every run's when none succeeded ([`speaking_runs`]).
pub(crate) fn side_filesystems<'r>(
    runs: &'r [RunSummary],
    key: &str,
) -> Vec<&'r culprit_core::model::ScratchFilesystem> {
    speaking_runs(runs, key).into_iter().filter_map(|r| r.scratch.as_ref()).collect()
}

/// One table [`machine_tables`] draws: a job, and the machine and build whose runs it reads.
#[derive(Clone)]
pub(crate) struct MachineTable {
    pub(crate) job_id: String,
    pub(crate) job_name: String,
    /// The one machine whose runs the table reads; `None` when no one machine ran the job at every revision and
    /// the table pools them (under a warning).
    pub(crate) machine: Option<String>,
    /// Whether the job has a table per machine, so that its name needs the machine to tell them apart.
    pub(crate) split: bool,
    /// The one build (rootfs, kconfig, compiler) whose runs the table reads, when the job's runs on its machine are
    /// of several builds; `None` when they are all of one build (or no one build ran at every revision, under a
    /// warning), and the table reads them all. Set, it is also what tells the job's tables apart by name.
    pub(crate) build: Option<Build>,
}

impl MachineTable {
    /// The table's name wherever the job is named: the job, with its machine when the job has a table per machine,
    /// and its build when it has a table per build.
    pub(crate) fn title(&self) -> String {
        let mut title = self.job_name.clone();
        if let (Some(machine), true) = (&self.machine, self.split) {
            title.push_str(&format!(" on {machine}"));
        }
        if let Some(build) = &self.build {
            title.push_str(&format!(" ({})", build.label()));
        }
        title
    }

    /// Whether a listed run is one of the table's: of its job, and of its machine and build where it has one.
    pub(crate) fn reads(&self, run: &RunSummary) -> bool {
        run.job_id == self.job_id
            && self.machine.as_ref().is_none_or(|m| &run.hostname == m)
            && self.build.as_ref().is_none_or(|b| &run.build == b)
    }
}

/// The tables to draw: one per job, machine and build that ran the job at every revision, as lkp's tables are each
/// of one tbox_group and one result path (rootfs, kconfig and compiler). Pooled, the runs of a farm's machines read
/// as one side's noise, under the first machine's name, and so do the runs of two kconfigs of one commit. A job that
/// no one machine ran at every revision keeps one table of all its runs, with a warning naming where each revision
/// ran; so does a machine's runs of several builds none of which ran at every revision. A job whose runs are of one
/// build has the tables it always had, named as they always were.
pub(crate) fn machine_tables(
    jobs: &[(String, String)],
    runs: &[RunSummary],
    keys: &[String],
    warnings: &mut Vec<String>,
) -> Vec<MachineTable> {
    let mut tables = Vec::new();
    for (job_id, job_name) in jobs {
        let table = |machine: Option<&str>, split: bool| MachineTable {
            job_id: job_id.clone(),
            job_name: job_name.clone(),
            machine: machine.map(str::to_string),
            split,
            build: None,
        };
        let of_job: Vec<&RunSummary> = runs.iter().filter(|r| &r.job_id == job_id).collect();
        match split_runs(job_name, &of_job, keys, &BY_MACHINE, warnings) {
            // The store may hold other machines' runs of the job (that `--machine` left out): still one machine's.
            Split::One(machine) => tables.extend(build_tables(table(Some(machine), false), &of_job, keys, warnings)),
            Split::Mixed => tables.extend(build_tables(table(None, false), &of_job, keys, warnings)),
            Split::Each(machines) => {
                for machine in machines {
                    tables.extend(build_tables(table(Some(machine), true), &of_job, keys, warnings));
                }
            }
        }
    }
    tables
}

/// The tables of one job's place (`place`, a machine or the pooled machines): the place's own table when its runs
/// are of one build, else one per build that ran the job at every revision. The builds that did not are left out
/// with a warning naming them; when none did, the place keeps one table of every build's runs, with a warning naming
/// the builds each revision ran.
fn build_tables(
    place: MachineTable,
    of_job: &[&RunSummary],
    keys: &[String],
    warnings: &mut Vec<String>,
) -> Vec<MachineTable> {
    let here: Vec<&RunSummary> = of_job.iter().copied().filter(|r| place.reads(r)).collect();
    match split_runs(&place.title(), &here, keys, &BY_BUILD, warnings) {
        Split::One(_) | Split::Mixed => vec![place],
        Split::Each(builds) => {
            builds.into_iter().map(|build| MachineTable { build: Some(build.clone()), ..place.clone() }).collect()
        }
    }
}

/// What a job's runs are split into tables by ([`split_runs`]): the machine or the build of a run, with the words
/// its warnings name it by.
struct SplitBy<K: ?Sized> {
    /// The value of a run.
    of: fn(&RunSummary) -> &K,
    /// How a value is named in a warning.
    label: fn(&K) -> String,
    /// What a value is, in the warning that no one value ran at every revision.
    noun: &'static str,
    /// What a value is, in the other words of the warnings.
    short_noun: &'static str,
    /// How a revision's runs are said to be of a value: `on` a machine, `of` a build.
    at: &'static str,
    /// What in the table names the first value of a table of several.
    named_by: &'static str,
}

const BY_MACHINE: SplitBy<str> = SplitBy {
    of: |run| &run.hostname,
    label: |machine| machine.to_string(),
    noun: "machine",
    short_noun: "machine",
    at: "on",
    named_by: "its tbox_group",
};

const BY_BUILD: SplitBy<Build> = SplitBy {
    of: |run| &run.build,
    label: Build::label,
    noun: "build (rootfs/kconfig/compiler)",
    short_noun: "build",
    at: "of",
    named_by: "its header",
};

/// How the runs of one table split by a machine or a build ([`SplitBy`]).
enum Split<'r, K: ?Sized> {
    /// All of one value.
    One(&'r K),
    /// Of several, none of which ran at every revision: one table of them all.
    Mixed,
    /// One table for each value that ran at every revision.
    Each(Vec<&'r K>),
}

/// How `runs` (of the table `name`) split by `by` at the revisions `keys`: the one value they are all of, else the
/// values that ran at every revision, with a warning naming the others, else (none did) one table of them all, with
/// a warning naming the values each revision ran.
fn split_runs<'r, K: Ord + ?Sized>(
    name: &str,
    runs: &[&'r RunSummary],
    keys: &[String],
    by: &SplitBy<K>,
    warnings: &mut Vec<String>,
) -> Split<'r, K> {
    let values: BTreeSet<&'r K> = runs.iter().map(|r| (by.of)(r)).collect();
    if values.len() < 2 {
        return values.first().map_or(Split::Mixed, |one| Split::One(one));
    }
    let ran = |value: &K, key: &str| runs.iter().any(|r| (by.of)(r) == value && r.revision.key() == key);
    let whole: Vec<&'r K> = values.iter().copied().filter(|v| keys.iter().all(|k| ran(v, k))).collect();
    let labels = |of: &[&K]| of.iter().map(|v| (by.label)(v)).collect::<Vec<_>>().join(", ");
    if whole.is_empty() {
        let places: Vec<String> = keys
            .iter()
            .map(|k| {
                let of: Vec<&K> = values.iter().copied().filter(|v| ran(v, k)).collect();
                format!("{} {} {}", abbreviate(k, 10), by.at, labels(&of))
            })
            .collect();
        warnings.push(format!(
            "{name}: no one {} ran it at every revision ({}), so its table compares different {}s ({} names the \
             first); run every revision {} one {} to tell a change from theirs",
            by.noun,
            places.join("; "),
            by.short_noun,
            by.named_by,
            by.at,
            by.short_noun
        ));
        return Split::Mixed;
    }
    let partial: Vec<&K> = values.iter().copied().filter(|v| !whole.contains(v)).collect();
    if !partial.is_empty() {
        warnings.push(format!(
            "{name}: the runs {} {} are left out: no table of that {}, which did not run it at every revision",
            by.at,
            labels(&partial),
            by.short_noun
        ));
    }
    Split::Each(whole)
}

/// The name a sweep's title gives the build it holds fixed, when the jobs swept ran in several builds.
const SWEEP_BUILD_PARAM: &str = "build";

/// The top of the repository `--repo` names, or of the one containing the current directory (`None` outside one).
/// A `--repo` that is no git repository is refused, rather than read as if it had none of the commits.
pub fn repository(given: Option<&Path>) -> Result<Option<PathBuf>> {
    match given {
        Some(dir) => culprit_run::git::toplevel(dir)
            .map(Some)
            .with_context(|| format!("--repo {}: give the git repository of the compared commits", dir.display())),
        None => Ok(std::env::current_dir().ok().and_then(|here| culprit_run::git::toplevel(&here).ok())),
    }
}

/// A stored revision for what the user typed; when the store does not know it and `repo` ([`repository`]: `--repo`,
/// else the current directory's) is given, git's own reading of it there (`HEAD~3`, a branch, a tag) is tried. A
/// commit stored without its subject gets the repository's ([`with_known_subject`]).
pub fn resolve_in(store: &dyn Store, given: &str, repo: Option<&Path>) -> Result<Revision> {
    resolve_stored(store, given, repo).map(|revision| with_known_subject(revision, repo))
}

/// The stored revision `given` names (see [`resolve_in`]), as the store has it.
fn resolve_stored(store: &dyn Store, given: &str, repo: Option<&Path>) -> Result<Revision> {
    let git_reading = |given: &str| repo.and_then(|top| culprit_run::git::resolve(top, given).ok());
    match store.resolve_revision(given) {
        Ok(label @ Revision::Label { .. }) => {
            // A label that is also a git name here (a tag `v6.1` stored as a label too) reads as the label, which
            // the user may not have meant: say so when the commit it names has runs of its own.
            let commit = git_reading(given).and_then(|rev| store.resolve_revision(rev.key()).ok());
            if let Some(commit @ Revision::Commit { .. }) = commit {
                crate::note!(
                    "culprit: '{given}' is a stored label and, in this repository, commit {} with runs of its own; \
                     this reads the label's runs (give the commit's SHA for the commit's)",
                    commit.key()
                );
            }
            Ok(label)
        }
        Ok(r) => Ok(r),
        // An ambiguous name stays an error: git would pick one of its readings without a word.
        Err(first @ culprit_store::StoreError::AmbiguousRevision { .. }) => Err(first.into()),
        Err(first) => {
            match git_reading(given) {
                Some(rev) => store
                    .resolve_revision(rev.key())
                    .with_context(|| format!("'{given}' is commit {} in this repository", rev.key())),
                None => Err(first.into()),
            }
        }
    }
}

/// `revision` with its subject when the store did not record one and `repo` (the current directory's repository
/// when `None`) has the commit: runs imported from an lkp result root, or run with `--commit SHA` outside the
/// repository, are stored without it, and the table's and the mail's `commit:` lines gave bare SHAs where the
/// robot's mails give `df7a4a2134 ("xfs: convert CIL busy extents to per-cpu")` (QA 47 D9). Each commit is looked up
/// once a process in each repository.
pub fn with_known_subject(revision: Revision, repo: Option<&Path>) -> Revision {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    // The subject found for each repository (`None`: the current directory's) and commit; `None` when it has none.
    type Subjects = HashMap<(Option<PathBuf>, String), Option<String>>;
    static LOOKED_UP: OnceLock<Mutex<Subjects>> = OnceLock::new();
    let Revision::Commit { sha, describe, subject: None } = revision else { return revision };
    // Only a full SHA is looked up: an imported revision key can be any text, which git would read as an option or
    // a branch name.
    if !culprit_core::model::is_full_sha(&sha) {
        return Revision::Commit { sha, describe, subject: None };
    }
    let look_up = || {
        let top = match repo {
            Some(top) => top.to_path_buf(),
            None => culprit_run::git::toplevel(&std::env::current_dir().ok()?).ok()?,
        };
        // `^{commit}` keeps a tag or tree of that name from answering, and `--` a path of that name.
        let spec = format!("{sha}^{{commit}}");
        culprit_run::git::git(&top, &["log", "-1", "--format=%s", &spec, "--"]).ok().filter(|s| !s.is_empty())
    };
    let key = (repo.map(Path::to_path_buf), sha.clone());
    let subject = match LOOKED_UP.get_or_init(Mutex::default).lock() {
        Ok(mut known) => known.entry(key).or_insert_with(look_up).clone(),
        // A poisoned cache only means another thread panicked while holding it; look the commit up unshared.
        Err(_) => look_up(),
    };
    Revision::Commit { sha, describe, subject }
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

/// Says which stressors did no work in any run at any revision: stress-ng exits 0 for a stressor it skips (lkp's dccp
/// job on a kernel without DCCP), and lkp's parser stores only `stress-ng.<stressor>.fail` for it, so the table showed
/// the monitors' rows of runs that measured nothing of the test, and nothing said so. Called without `--metric`,
/// which could leave the `ops` row of a stressor that worked out of `result`. The parser's `sigaction.fail` (stress-ng
/// could not install its signal handlers) names no stressor.
fn idle_stressors_warning(result: &CompareResult, job: &str, db: &str) -> Option<String> {
    let has = |metric: &str| result.rows.iter().any(|row| row.metric == metric);
    let names = result.rows.iter().map(|row| row.metric.as_str());
    let idle = culprit_run::program::stress_ng::idle_stressors_among(names, has);
    (!idle.is_empty()).then(|| {
        format!(
            "{job}: stress-ng's {} did no work in any run at any revision (its runs store only \
             stress-ng.<stressor>.fail, as lkp's parser does), so nothing of the test is compared; `culprit \
             results{db} --run ID` shows what stress-ng said",
            idle.join(", ")
        )
    })
}

/// Says why a table has no rows, so an empty table is never silent. The run counts come from the stored runs rather
/// than from the metrics shown, which `--metric` may have narrowed to none of a run's.
fn empty_table_warning(
    result: &CompareResult,
    job: &str,
    samples: &[RevisionSamples],
    args: &CompareArgs,
    db: &str,
) -> Option<String> {
    let all = args.all;
    if result.rows.iter().any(|r| r.any_change()) {
        return None;
    }
    let runs: Vec<String> =
        samples.iter().map(|s| format!("{} ok/{} failed", s.ok_runs.len(), s.failed_runs)).collect();
    let hint = if all { "" } else { "; --all shows every row" };
    // A revision whose every run failed has nothing to compare: "no metric changed" would read as a result.
    let all_failed: Vec<String> = samples
        .iter()
        .filter(|s| s.ok_runs.is_empty() && s.failed_runs > 0)
        .map(|s| s.revision.short().to_string())
        .collect();
    if !all_failed.is_empty() {
        return Some(format!(
            "{job}: every run failed at {}, so nothing of it can be compared ({}); `culprit results{db} --failures` \
             lists the reasons",
            all_failed.join(" and "),
            runs.join(" vs ")
        ));
    }
    // Too few runs is not "no change": nothing was tested, and the fix is more runs, not a closer look.
    // Some(runs needed per pair) only when every pair is inconclusive for that reason. Pass/fail rows are left out
    // when there are measurements: their test needs no minimum of runs, so a `stress-ng.cpu.pass` in 2 of 2 runs a
    // side is "unchanged" while every measurement is untested.
    let measured = result.rows.iter().any(|row| row.kind == RowKind::Measurement);
    let too_few: Option<Vec<usize>> = result
        .rows
        .iter()
        .filter(|row| !measured || row.kind == RowKind::Measurement)
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
    // With a floor above the default, a smaller change may well be significant: the sentence says which it is.
    let by = match args.min_change {
        Some(fraction) => format!(" by {} or more (--min-change)", printf::percent_of_fraction(fraction)),
        None => String::new(),
    };
    Some(format!("{job}: no metric changed significantly{by} ({}){hint}", runs.join(" vs ")))
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

/// When `query` narrows metrics by a regex and its answer (`matched`: whether it holds any metric, of either kind of
/// run) holds none although the runs have metrics: the names the runs do have. `None` when the regex matched, none
/// was given, or the runs have no metric at all (every run failed), which the table shows as it is.
fn unmatched_metric(store: &dyn Store, query: &SampleQuery, matched: bool) -> Result<Option<BTreeSet<String>>> {
    if query.metric_regex.is_none() || matched {
        return Ok(None);
    }
    let every = StoredRuns::read(store, &SampleQuery { metric_regex: None, ..query.clone() })?;
    let sides = every.plain.iter().chain(every.profiling.iter().flatten());
    let names: BTreeSet<String> = sides.flat_map(|s| s.metrics.keys().cloned()).collect();
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
    format!("{} ({})", listed.join(", "), counted(names.len(), "metric"))
}

/// The `axes` header of a job: the machine, the testcase and the job's params as stored, under lkp's names (`bs`,
/// not `fio-setup-basic.bs`), every key sorted by name, as lkp's robot prints them since 2022 (seed 003:
/// `class/compiler/cpufreq_governor/disk/fs/kconfig/nr_threads/rootfs/tbox_group/test/testcase/testtime/ucode`).
/// lkp keeps a result's axes as one sorted `key=value/...` string (`DataStore::Layout.axes_to_string`) and reads them
/// back in that order; its 2021 mails (seed 001) led with `tbox_group/testcase/rootfs/kconfig/compiler/`, and
/// Culprit's header led with `tbox_group/testcase/`, an order of neither (QA 47 D9).
pub fn axes_of(store: &dyn Store, runs: &[RunSummary], job_id: &str) -> Result<Vec<(String, String)>> {
    let Some(first) = runs.iter().find(|r| r.job_id == job_id) else { return Ok(Vec::new()) };
    let record = store.run(first.id)?;
    let mut axes =
        vec![("tbox_group".to_string(), first.hostname.clone()), ("testcase".to_string(), first.testcase.clone())];
    let params: Vec<(String, String)> =
        record.params.into_iter().filter(|(k, v)| is_axis(k) && !v.is_empty()).collect();
    axes.extend(lkp_param_names(&params));
    if params.is_empty() {
        axes.extend(imported_path_params(job_id));
    }
    axes.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(axes)
}

/// A compare column of `runs`, titled `subject`: per metric, the values of the successful runs, and a count of the
/// failed ones. For tables of runs chosen by the command rather than read by revision from the store (try-fix's
/// interleaved runs, a bisect's confirmation).
pub(crate) fn column_of_runs<'a>(
    label: &str,
    subject: Option<String>,
    runs: impl IntoIterator<Item = &'a RunRecord>,
) -> Column {
    let mut column = Column { subject, ..Column::new(label) };
    for run in runs {
        if !run.outcome.is_ok() {
            column.failed_runs += 1;
            continue;
        }
        for (metric, value) in &run.metrics {
            column.metrics.entry(metric.clone()).or_default().push(*value);
        }
    }
    column
}

/// The path_params of a job imported from an lkp result root without its job.yaml, as an axis: the only word on
/// what the job measured, where the header said `box/fio-basic` and the mail listed no parameter.
pub fn imported_path_params(job_id: &str) -> Option<(String, String)> {
    let path_params = culprit_store::result_root::default_identity_path_params(job_id)?;
    Some(("path_params".to_string(), path_params.to_string()))
}

/// Whether a stored param belongs in the `axes` header: what the job measures, and of lkp's metadata only the result
/// path's rootfs, kconfig and compiler, which lkp's header names. A run imported from an lkp result root stores every
/// key of the finished job's job.yaml, and the header listed some sixty of them (the scheduler's `_id`, `loadavg`,
/// `bootloader_append`'s eleven lines, the commit the columns already name, ...).
fn is_axis(key: &str) -> bool {
    if NOT_AXES.contains(&key) {
        return false;
    }
    // A monitor's options (`perf-sched.lite_mode`, `perf-profile.debug_mode`) are no axes: the flattened key was
    // checked whole, and an lkp monitor's option was listed as a test parameter (QA 47). `ucode`, the box's
    // microcode, is no part of a job's identity but lkp's axes line names it.
    matches!(key, "rootfs" | "kconfig" | "compiler" | "ucode") || culprit_job::table::is_workload_param(key)
}

/// A job's params as the store holds them, in job order.
type Params = Vec<(String, String)>;

/// One job of a sweep: its name, its params, the value of the swept one, and its samples at each revision.
struct SweptJob {
    id: String,
    name: String,
    params: Vec<(String, String)>,
    value: String,
    samples: Vec<RevisionSamples>,
}

/// The param `--by PARAM` names in a job's params, as (key, value): the key itself, or a program's option of that
/// name (`bs` for `fio-setup-basic.bs`).
fn swept_param<'a>(params: &'a [(String, String)], param: &str) -> Option<&'a (String, String)> {
    params.iter().find(|(k, _)| k == param || k.strip_suffix(param).is_some_and(|head| head.ends_with('.')))
}

/// Up to ten names (of jobs, of sweeps) for a warning, with the count of the rest.
fn some_names(names: &[&str]) -> String {
    const SHOWN: usize = 10;
    let mut listed = names.iter().take(SHOWN).copied().collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        listed.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    listed
}

/// `--by PARAM`: one row per value of the param, one column per revision, for one metric (the KPI, or each metric
/// `--metric` matches). Jobs that also differ in other params are never pooled into one point: each combination of
/// those params is a sweep of its own, titled with the values it holds them at. The jobs compared that lack the
/// param, or whose runs have none of the metrics shown, are left out and named in `warnings`.
fn sweep(
    store: &dyn Store,
    args: &CompareArgs,
    param: &str,
    jobs: &[(String, String)],
    runs: &[RunSummary],
    keys: &[String],
    warnings: &mut Vec<String>,
) -> Result<String> {
    // Every job's params are read first, so that a param no job has can be answered with the ones they do have.
    let mut params_of: Vec<(&String, &String, Params)> = Vec::new();
    for (job_id, job_name) in jobs {
        let Some(first) = runs.iter().find(|r| &r.job_id == job_id) else { continue };
        // The params a sweep compares are those of the axes line (and the swept one): lkp runs imported with their
        // finished job.yaml differ in its scheduler's keys (start_time, loadavg), which split one curve into a sweep
        // per load average, each of one point.
        let params = store.run(first.id)?.params;
        let params = params.into_iter().filter(|(k, _)| is_axis(k) || k == param).collect();
        params_of.push((job_id, job_name, params));
    }
    // A developer runs several job files per commit into one store (a fio matrix, a stress-ng run, hackbench): the
    // sweep is of the jobs that have the param, and the others are named on stderr, as the table names the jobs a
    // revision lacks. The whole comparison was refused for any one job without the param, so --by worked only
    // with a --job glob that picked the matrix out.
    let (having, lacking): (Vec<_>, Vec<_>) =
        params_of.iter().partition(|(_, _, params)| swept_param(params, param).is_some());
    if having.is_empty() {
        bail!(
            "no job compared has a param '{param}'; --by needs jobs that differ in it (a matrix over {param}). {}",
            params_to_sweep(&sweepable_jobs(store, args, keys, &params_of)?)
        );
    }
    if !lacking.is_empty() {
        let names: Vec<&str> = lacking.iter().map(|(_, name, _)| name.as_str()).collect();
        warnings.push(format!(
            "left out of the sweep by {param}, having no param '{param}': {} (--job picks the jobs to compare)",
            some_names(&names)
        ));
    }
    // A job's runs of several builds (lkp's rootfs/kconfig/compiler) are curves of their own, as the table draws a
    // table per build: the build is then one more param the sweeps are grouped by, never pooled at a point.
    let builds_of: Vec<BTreeSet<&Build>> = having
        .iter()
        .map(|(job_id, _, _)| runs.iter().filter(|r| &r.job_id == *job_id).map(|r| &r.build).collect())
        .collect();
    let by_build = builds_of.iter().any(|builds| builds.len() > 1);
    let mut measured: Vec<SweptJob> = Vec::new();
    for ((job_id, job_name, params), job_builds) in having.iter().zip(&builds_of) {
        let Some((_, value)) = swept_param(params, param) else { continue };
        let builds: Vec<Option<&Build>> = match by_build {
            true => job_builds.iter().copied().map(Some).collect(),
            false => vec![None],
        };
        for build in builds {
            let query = SampleQuery { build: build.cloned(), ..sweep_query(args, keys, job_id) };
            let samples = store.samples(&query)?;
            let mut params = params.clone();
            if let Some(build) = build {
                params.push((SWEEP_BUILD_PARAM.to_string(), build.label()));
            }
            let (id, name, value) = ((*job_id).clone(), (*job_name).clone(), value.clone());
            measured.push(SweptJob { id, name, params, value, samples });
        }
    }
    let values: BTreeSet<String> = measured.iter().map(|j| j.value.clone()).collect();
    let values: BTreeSet<&str> = values.iter().map(String::as_str).collect();
    let metrics = sweep_metrics(store, args, param, keys, &measured)?;
    // A job with the param whose runs have none of the metrics shown (a stress-ng matrix over nr_threads beside
    // hackbench's, with --metric hackbench.throughput) has no point in any sweep; kept, its params would still
    // split the others into groups titled with its own settings, empty in every job that has the metric.
    let (measured, unmeasured): (Vec<SweptJob>, Vec<SweptJob>) = measured
        .into_iter()
        .partition(|j| j.samples.iter().any(|s| metrics.iter().any(|m| s.metrics.contains_key(m))));
    if !unmeasured.is_empty() {
        let names: Vec<&str> = unmeasured.iter().map(|j| j.name.as_str()).collect();
        let why = match &args.metric {
            Some(pattern) => format!("no metric of their runs matches --metric {}", shell_quote(pattern)),
            None => format!("their runs have no {}; name a metric of theirs with --metric", metrics.join(", ")),
        };
        warnings.push(format!("left out of the sweep by {param}, {why}: {}", some_names(&names)));
    }
    // A scaling curve is of one machine: pooled, a farm's machines at one point would read as that point's noise,
    // and machines that ran different points would draw their difference as the curve. The table draws one per
    // machine; a sweep asks for the one to draw.
    let machines: BTreeSet<&str> = runs
        .iter()
        .filter(|r| measured.iter().any(|j| j.id == r.job_id))
        .map(|r| r.hostname.as_str())
        .collect();
    if machines.len() > 1 {
        let names: Vec<&str> = machines.into_iter().collect();
        bail!(
            "the jobs swept by {param} ran on {} machines ({}); a scaling view draws one machine's runs: name it with \
             --machine {}",
            names.len(),
            names.join(", "),
            names[0]
        );
    }
    let swept_keys: BTreeSet<String> =
        measured.iter().filter_map(|j| swept_param(&j.params, param)).map(|(k, _)| k.clone()).collect();
    let others = differing_params(measured.iter().map(|j| j.params.as_slice()), &swept_keys);
    if values.len() < 2 {
        let value = values.iter().next().copied().unwrap_or("");
        let differ = if others.is_empty() {
            "no param differs between them".to_string()
        } else {
            format!("they differ in {}", others.join(", "))
        };
        let every =
            if lacking.is_empty() { "every job compared".to_string() } else { format!("every job with {param}") };
        // The jobs a revision has no runs of are not compared, and may be the other values: said here, since the
        // error drops the warnings that would name them (QA 58: nr_threads 2 ran only at one revision).
        let partial = partial_jobs(runs, keys, jobs);
        let partial = match partial.as_slice() {
            [] => String::new(),
            names => format!("; not compared, for want of runs at every revision: {}", names.join("; ")),
        };
        bail!(
            "{every} has {param} = {value}, so there is nothing to sweep; --by needs a param whose value differs \
             between the jobs ({differ}){partial}"
        );
    }
    // One group per combination of the other differing params, in the order the jobs come.
    let mut groups: Vec<Vec<(String, String)>> = Vec::new();
    let group_of = |params: &[(String, String)]| -> Vec<(String, String)> {
        let value = |k: &String| params.iter().find(|(p, _)| p == k).map(|(_, v)| v.clone()).unwrap_or_default();
        others.iter().map(|k| (k.clone(), value(k))).collect()
    };
    for job in &measured {
        let group = group_of(&job.params);
        if !groups.contains(&group) {
            groups.push(group);
        }
    }
    let columns: Vec<String> = keys.iter().map(|k| abbreviate(k, 12).to_string()).collect();
    let mut sweeps = Vec::new();
    for metric in &metrics {
        let zero_filled = culprit_core::compare::missing_means_zero(metric);
        for group in &groups {
            let mut points: Vec<(String, Vec<Vec<f64>>)> = Vec::new();
            for SweptJob { value, samples, .. } in measured.iter().filter(|j| &group_of(&j.params) == group) {
                let mut per_column: Vec<Vec<f64>> =
                    samples.iter().map(|s| s.metrics.get(metric).cloned().unwrap_or_default()).collect();
                // A run that did not report a metric that is then 0 (a perf symbol below perf's cutoff, a dmesg
                // line that did not occur) counts as 0 at its job's point, as a table counts it; the engine fills no
                // sweep point, since its column's runs are those of the point with the most.
                if zero_filled && per_column.iter().any(|xs| !xs.is_empty()) {
                    for (xs, s) in per_column.iter_mut().zip(samples) {
                        xs.resize(xs.len().max(s.ok_runs.len()), 0.0);
                    }
                }
                // Jobs of one group that share the swept value have the same differing params, so they are one
                // configuration (run under two job names): their runs are one sample.
                match points.iter_mut().find(|(v, _)| v == value) {
                    Some((_, existing)) => {
                        for (e, new) in existing.iter_mut().zip(per_column) {
                            e.extend(new);
                        }
                    }
                    None => points.push((value.clone(), per_column)),
                }
            }
            points.retain(|(_, samples)| samples.iter().any(|s| !s.is_empty()));
            if points.is_empty() {
                continue;
            }
            points.sort_by(|a, b| param_value_order(&a.0, &b.0, &values));
            sweeps.push(Sweep {
                param: param.to_string(),
                metric: metric.clone(),
                group: group.clone(),
                columns: columns.clone(),
                points: points.into_iter().map(|(value, samples)| SweepPoint { value, samples }).collect(),
            });
        }
    }
    // A sweep of zeros at every point and revision is a metric the jobs do not produce (fio reports the read
    // bandwidth of a randwrite job as 0), printed as rows of `0.00 +0.0% 0.00` between the curves that matter.
    // It is left out and named, unless --all asks for every row or it is all there is to show.
    if !args.all && sweeps.iter().any(|s| !s.reads_zero_everywhere()) {
        let (kept, zero): (Vec<Sweep>, Vec<Sweep>) = sweeps.into_iter().partition(|s| !s.reads_zero_everywhere());
        sweeps = kept;
        if !zero.is_empty() {
            let titles: Vec<String> = zero.iter().map(sweep_title).collect();
            let titles: Vec<&str> = titles.iter().map(String::as_str).collect();
            warnings.push(format!(
                "left out {} sweep(s) that read 0 at every point at every revision (--all shows them): {}",
                zero.len(),
                some_names(&titles)
            ));
        }
    }
    // How the sides' runs of the jobs swept differ in machine facts and filesystems, as the table says it under
    // itself: a sweep of a side pinned to one CPU against one on every CPU read -25% with no word (QA 58).
    let swept_runs: Vec<RunSummary> =
        runs.iter().filter(|r| measured.iter().any(|j| j.id == r.job_id)).cloned().collect();
    let machines = machines_differ(&side_facts(store, &swept_runs, keys)?, &columns);
    let filesystems = filesystems_differ(&swept_runs, keys, &columns);
    let notes: Vec<String> = machines.into_iter().chain(filesystems).collect();
    // The other formats carry no sentence of their own: the warning says it there, as for the tables.
    if args.format != CompareFormat::Table {
        warnings.extend(notes.iter().cloned());
    }
    let rows = sweeps_rows(&sweeps, &options(args))?;
    if let Some(path) = &args.plot {
        let mut order: Vec<&str> = values.iter().copied().collect();
        order.sort_by(|a, b| param_value_order(a, b, &values));
        crate::cmd::plot::write_sweeps(path, &sweeps, &rows, &order)?;
    }
    Ok(match args.format {
        CompareFormat::Table => {
            let blocks: Vec<String> = sweeps.iter().zip(&rows).map(|(s, r)| render_sweep(s, r)).collect();
            let mut text = blocks.join("\n");
            for note in &notes {
                text.push_str(&culprit_core::report::wrap(note, "# "));
            }
            text
        }
        CompareFormat::Markdown => render_sweeps_markdown(&sweeps, &rows),
        CompareFormat::Csv => render_sweeps_csv(&sweeps, &rows),
        CompareFormat::Json => {
            let blocks: Vec<serde_json::Value> = sweeps
                .iter()
                .zip(&rows)
                .map(|(s, r)| {
                    let group: serde_json::Map<String, serde_json::Value> =
                        s.group.iter().map(|(k, v)| (k.clone(), serde_json::Value::from(v.as_str()))).collect();
                    serde_json::json!({
                        "metric": s.metric, "param": s.param, "group": group, "columns": s.columns, "rows": r,
                    })
                })
                .collect();
            let mut text = serde_json::to_string_pretty(&blocks)?;
            text.push('\n');
            text
        }
    })
}

/// The samples a sweep reads of one job: at the revisions compared, narrowed as the command line narrows them.
fn sweep_query(args: &CompareArgs, keys: &[String], job_id: &str) -> SampleQuery {
    SampleQuery {
        revision_keys: keys.to_vec(),
        job: Some(job_id.to_string()),
        testcase: args.testcase.clone(),
        hostname: args.machine.clone(),
        metric_regex: args.metric.clone(),
        ..SampleQuery::default()
    }
}

/// The params of the jobs that a refused `--by` param's suggestions are read from: with `--metric`, those whose runs
/// have a metric it matches (a param only jobs without the metric have would draw nothing), else, or when no job's
/// runs have one, every job compared.
fn sweepable_jobs<'a>(
    store: &dyn Store,
    args: &CompareArgs,
    keys: &[String],
    params_of: &'a [(&String, &String, Params)],
) -> Result<Vec<&'a [(String, String)]>> {
    let every: Vec<&[(String, String)]> = params_of.iter().map(|(_, _, p)| p.as_slice()).collect();
    if args.metric.is_none() {
        return Ok(every);
    }
    let mut with_metric = Vec::new();
    for (job_id, _, params) in params_of {
        let query = sweep_query(args, keys, job_id);
        if store.samples(&query)?.iter().any(|s| !s.metrics.is_empty()) {
            with_metric.push(params.as_slice());
        }
    }
    Ok(if with_metric.is_empty() { every } else { with_metric })
}

/// What a refused `--by` param can be instead: the params a sweep can be drawn over, each with two values or more
/// among the jobs that have it, or, when there is none, the params the jobs have (each of one value, so a matrix
/// over one of them is needed first). A param some jobs lack is not one that differs for that alone: `--by` leaves
/// those jobs out, so the suggestion named params (even the refused one) that would then have nothing to sweep.
fn params_to_sweep(jobs: &[&[(String, String)]]) -> String {
    let mut have: Vec<&str> = Vec::new();
    for params in jobs {
        for (k, v) in params.iter() {
            if !NOT_AXES.contains(&k.as_str()) && !v.is_empty() && !have.contains(&k.as_str()) {
                have.push(k);
            }
        }
    }
    let sweepable: Vec<&str> = have
        .iter()
        .copied()
        .filter(|key| {
            let values: BTreeSet<&str> = jobs
                .iter()
                .filter_map(|params| params.iter().find(|(k, _)| k == key))
                .map(|(_, v)| v.as_str())
                .filter(|v| !v.is_empty())
                .collect();
            values.len() > 1
        })
        .collect();
    if !sweepable.is_empty() {
        return format!("The jobs compared differ in {}; give one of those to --by", sweepable.join(", "));
    }
    match have.as_slice() {
        [] => "The jobs compared have no params, so there is nothing to sweep".to_string(),
        names => format!(
            "No param differs between the jobs compared, so there is nothing to sweep yet; they have {}: run the \
             job with a list of values for one of them at each revision",
            names.join(", ")
        ),
    }
}

/// The params, other than the swept ones, whose value is not the same in every job (a param a job lacks counts as
/// an empty value), in the order they first appear.
fn differing_params<'a>(
    jobs: impl Iterator<Item = &'a [(String, String)]> + Clone,
    swept: &BTreeSet<String>,
) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for params in jobs.clone() {
        for (k, _) in params {
            if !swept.contains(k) && !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let value_in = |params: &[(String, String)], key: &str| -> Option<String> {
        params.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    };
    keys.retain(|key| {
        let mut seen = jobs.clone().map(|params| value_in(params, key));
        let first = seen.next().flatten();
        seen.any(|v| v != first)
    });
    keys
}

/// The metrics a sweep shows: each one `--metric` matches (program metrics, or any when no program metric matches),
/// else the program's KPI (stress-ng.cpu.ops_per_sec, not the ops count beside it), else its first program metric
/// with a known direction.
fn sweep_metrics(
    store: &dyn Store,
    args: &CompareArgs,
    param: &str,
    keys: &[String],
    measured: &[SweptJob],
) -> Result<Vec<String>> {
    let names: BTreeSet<&String> =
        measured.iter().flat_map(|j| j.samples.iter().flat_map(|s| s.metrics.keys())).collect();
    if let Some(pattern) = &args.metric {
        if names.is_empty() {
            let mut every = BTreeSet::new();
            for job in measured {
                let query = SampleQuery {
                    revision_keys: keys.to_vec(),
                    job: Some(job.id.clone()),
                    testcase: args.testcase.clone(),
                    hostname: args.machine.clone(),
                    metric_regex: None,
                    ..SampleQuery::default()
                };
                every.extend(store.samples(&query)?.into_iter().flat_map(|s| s.metrics.into_keys()));
            }
            // The runs named are those of the jobs the sweep is of: another job's metrics cannot be swept by a
            // param it does not have.
            bail!(
                "--metric {} matches no metric of the jobs that have {param}; their runs have {}. --metric takes a \
                 regex over metric names",
                shell_quote(pattern),
                some_metric_names(&every)
            );
        }
        let program: Vec<String> =
            names.iter().filter(|k| MetricClass::of(k) == MetricClass::Program).map(|k| k.to_string()).collect();
        return Ok(if program.is_empty() { names.iter().map(|k| k.to_string()).collect() } else { program });
    }
    let candidates: Vec<&String> =
        names.iter().copied().filter(|k| MetricClass::of(k) == MetricClass::Program).collect();
    let chosen = candidates
        .iter()
        .find(|k| culprit_core::compare::direction::is_kpi(k))
        .or_else(|| candidates.iter().find(|k| culprit_core::compare::direction::direction_of(k).sign() != 0))
        .or(candidates.first())
        .map(|k| k.to_string())
        .context("no program metric to sweep; name one with --metric")?;
    Ok(vec![chosen])
}

/// The number a param value stands for in a sweep's order: plain numbers as they are, shares (`50%`) by their
/// percentage, sizes (`4k`, `1M`) in bytes, and durations (`30s`, `5m`) in seconds when every value of the sweep
/// reads as one and one has a suffix only durations take (`5m` alone is a size, as lkp's `bs` values are).
fn param_number(value: &str, durations: bool) -> Option<f64> {
    let value = value.trim();
    if let Ok(x) = value.parse::<f64>() {
        return Some(x).filter(|x| x.is_finite());
    }
    if let Some(share) = value.strip_suffix('%') {
        return share.trim().parse::<f64>().ok().filter(|x| x.is_finite());
    }
    if durations {
        return culprit_job::convention::duration_secs(value).ok().map(|s| s as f64);
    }
    culprit_job::convention::size_bytes(value).ok().map(|b| b as f64)
}

/// The order of a sweep's param values (a total order): values that read as numbers by [`param_number`], then the
/// rest as text. `all` is every value of the sweep, which decides whether `5m` reads as minutes or mebibytes.
fn param_value_order(a: &str, b: &str, all: &BTreeSet<&str>) -> std::cmp::Ordering {
    let durations = all.iter().all(|v| culprit_job::convention::duration_secs(v.trim()).is_ok())
        && all.iter().any(|v| v.trim().ends_with(['s', 'h', 'd', 'w']));
    match (param_number(a, durations), param_number(b, durations)) {
        (Some(x), Some(y)) => x.total_cmp(&y).then_with(|| a.cmp(b)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.cmp(b),
    }
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
    fn param_values_sort_by_what_they_stand_for() {
        fn sorted<'a>(values: &[&'a str]) -> Vec<&'a str> {
            let all: BTreeSet<&str> = values.iter().copied().collect();
            let mut v = values.to_vec();
            v.sort_by(|a, b| param_value_order(a, b, &all));
            v
        }
        assert_eq!(sorted(&["1M", "4k", "512", "64k"]), ["512", "4k", "64k", "1M"]);
        assert_eq!(sorted(&["100%", "200%", "50%"]), ["50%", "100%", "200%"]);
        assert_eq!(sorted(&["16", "2", "1", "8"]), ["1", "2", "8", "16"]);
        assert_eq!(sorted(&["5m", "30s", "1h"]), ["30s", "5m", "1h"]);
        assert_eq!(sorted(&["threads", "4k", "process", "512"]), ["512", "4k", "process", "threads"]);
    }

    /// A listed run of job `j` at revision `key` on `host`, of the build with kconfig `kconfig` (none when empty).
    fn listed(id: i64, key: &str, host: &str, kconfig: &str) -> RunSummary {
        RunSummary {
            id: culprit_store::RunId(id),
            job_id: "j".into(),
            job_name: "job".into(),
            testcase: "t".into(),
            revision: Revision::Label { name: key.into() },
            hostname: host.into(),
            started_at: 0.0,
            ended_at: 1.0,
            failure_reason: None,
            exit_code: Some(0),
            metric_count: 1,
            kind: RunKind::Plain,
            build: Build { kconfig: kconfig.into(), ..Build::default() },
            scratch: None,
        }
    }

    /// A table drawn, as (machine, kconfig of its build, title).
    type Drawn = (Option<String>, Option<String>, String);

    /// The tables drawn of `runs` at revisions a and b, and the warnings.
    fn tables_of(runs: &[RunSummary]) -> (Vec<Drawn>, Vec<String>) {
        let jobs = vec![("j".to_string(), "job".to_string())];
        let keys = vec!["a".to_string(), "b".to_string()];
        let mut warnings = Vec::new();
        let tables = machine_tables(&jobs, runs, &keys, &mut warnings);
        let drawn = tables.iter().map(|t| (t.machine.clone(), t.build.as_ref().map(|b| b.kconfig.clone()), t.title()));
        (drawn.collect(), warnings)
    }

    #[test]
    fn tables_split_by_machine_and_by_build_alike_with_the_warnings_of_each() {
        let titles = |runs: &[RunSummary]| {
            let (drawn, warnings) = tables_of(runs);
            (drawn.into_iter().map(|(_, _, title)| title).collect::<Vec<_>>(), warnings)
        };
        // Two machines at every revision and a third at one: a table each for the two, the third left out.
        let runs = [
            listed(1, "a", "m1", "k"),
            listed(2, "b", "m1", "k"),
            listed(3, "a", "m2", "k"),
            listed(4, "b", "m2", "k"),
            listed(5, "a", "m3", "k"),
        ];
        let left_out = "job: the runs on m3 are left out: no table of that machine, which did not run it at every \
                        revision";
        assert_eq!(titles(&runs), (vec!["job on m1".to_string(), "job on m2".into()], vec![left_out.to_string()]));
        // No one machine at every revision: one table of all, and where each revision ran.
        let mixed = "job: no one machine ran it at every revision (a on m1; b on m2), so its table compares different \
                     machines (its tbox_group names the first); run every revision on one machine to tell a change \
                     from theirs";
        let runs = [listed(1, "a", "m1", "k"), listed(2, "b", "m2", "k")];
        assert_eq!(titles(&runs), (vec!["job".to_string()], vec![mixed.to_string()]));
        // The same words of builds.
        let mixed = "job: no one build (rootfs/kconfig/compiler) ran it at every revision (a of k1; b of k2), so its \
                     table compares different builds (its header names the first); run every revision of one build \
                     to tell a change from theirs";
        let runs = [listed(1, "a", "m", "k1"), listed(2, "b", "m", "k2")];
        assert_eq!(titles(&runs), (vec!["job".to_string()], vec![mixed.to_string()]));
        let runs = [listed(1, "a", "m", "k1"), listed(2, "b", "m", "k1"), listed(3, "b", "m", "k3")];
        let left_out = "job: the runs of k3 are left out: no table of that build, which did not run it at every \
                        revision";
        assert_eq!(titles(&runs).1, vec![left_out.to_string()]);
    }

    #[test]
    fn a_machines_runs_of_several_builds_are_a_table_per_build_that_ran_every_revision() {
        let some = |s: &str| Some(s.to_string());
        // One build: the table it always was, without a word of builds.
        let one = [listed(1, "a", "m", "k1"), listed(2, "b", "m", "k1")];
        assert_eq!(tables_of(&one), (vec![(some("m"), None, "job".into())], vec![]));
        // Two builds at both revisions and a third at a only: a table each for the two, the third named.
        let runs = [
            listed(1, "a", "m", "k1"),
            listed(2, "a", "m", "k2"),
            listed(3, "b", "m", "k2"),
            listed(4, "b", "m", "k1"),
            listed(5, "a", "m", "k3"),
        ];
        let (tables, warnings) = tables_of(&runs);
        let expected = vec![(some("m"), some("k1"), "job (k1)".into()), (some("m"), some("k2"), "job (k2)".into())];
        assert_eq!(tables, expected);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("job: the runs of k3 are left out"), "{warnings:?}");
        // Runs without any build param are a build of their own.
        let (tables, _) = tables_of(&[&runs[..4], &[listed(6, "a", "m", ""), listed(7, "b", "m", "")]].concat());
        assert_eq!(tables.len(), 3);
        assert_eq!(tables[0], (some("m"), some(""), "job (no rootfs/kconfig/compiler)".into()));
        // No build at both revisions: one table of both, under a warning naming each revision's builds.
        let (tables, warnings) = tables_of(&[listed(1, "a", "m", "k1"), listed(2, "b", "m", "k2")]);
        assert_eq!(tables, vec![(some("m"), None, "job".into())]);
        assert!(warnings[0].contains("no one build") && warnings[0].contains("a of k1; b of k2"), "{warnings:?}");
        // Per machine: each machine's builds are its own, and a title names both.
        let farm = [
            listed(1, "a", "m1", "k1"),
            listed(2, "b", "m1", "k1"),
            listed(3, "a", "m2", "k1"),
            listed(4, "b", "m2", "k1"),
            listed(5, "a", "m2", "k2"),
            listed(6, "b", "m2", "k2"),
        ];
        let (tables, warnings) = tables_of(&farm);
        let titles: Vec<&str> = tables.iter().map(|(_, _, title)| title.as_str()).collect();
        assert_eq!(titles, ["job on m1", "job on m2 (k1)", "job on m2 (k2)"]);
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn malformed_globs_name_their_flag() {
        assert!(check_globs(&[("--job", Some("fio-[ab]")), ("--machine", None)]).is_ok());
        let err = format!("{:#}", check_globs(&[("--machine", Some("lkp-[")), ("--job", Some("[["))]).unwrap_err());
        assert!(err.starts_with("--machine takes a glob: 'lkp-['"), "{err}");
    }
}
