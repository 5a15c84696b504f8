//! `culprit run JOB`: turn a job file into a validated plan, run every atomic job N times with monitors, and store
//! each finished run at once.
//!
//! Everything that can be checked is checked before the first benchmark starts: the YAML, every program and param,
//! the binaries, the revision, the store. Runs are interleaved (round r of every job before round r+1) so slow drift
//! of the machine spreads over all jobs instead of biasing the last one.

use crate::cli::RunArgs;
use crate::output;
use anyhow::{bail, Context, Result};
use culprit_core::model::abbreviate;
use culprit_core::model::{Machine, Revision, RunRecord};
use culprit_core::stats;
use culprit_core::words::counted;
use culprit_job::{AtomicJob, JobFile};
use culprit_run::executor::{self, JobRun, RunContext};
use culprit_run::program::{self, Params, Program, COMMON_KEYS};
use culprit_run::{git, machine, monitor};
use culprit_store::Store;
use indicatif::{ProgressBar, ProgressStyle};
use serde_yaml::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A validated `culprit run`: nothing in it can fail to parse or be missing any more.
pub struct RunPlan {
    pub jobs: Vec<PlannedJob>,
    pub repeat: u32,
    pub context: RunContext,
    pub result_root: Option<PathBuf>,
}

/// One atomic job with what the result root needs.
pub struct PlannedJob {
    pub run: JobRun,
    pub path_params: String,
}

/// Job-file text of a YAML scalar.
fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => Some(String::new()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// Flattens a program's params to text; a nested hash becomes dotted keys (`capture: {ops: re}` → `capture.ops`).
fn flatten(prefix: &str, map: &serde_yaml::Mapping, out: &mut BTreeMap<String, String>) {
    for (k, v) in map {
        let Some(key) = scalar_text(k) else { continue };
        let key = if prefix.is_empty() { key } else { format!("{prefix}.{key}") };
        match v {
            Value::Mapping(inner) => flatten(&key, inner, out),
            other => {
                if let Some(text) = scalar_text(other) {
                    out.insert(key, text);
                } else if let Value::Sequence(items) = other {
                    // A list left after expansion would be a bug in expansion; keep it visible as text.
                    let parts: Vec<String> = items.iter().filter_map(scalar_text).collect();
                    out.insert(key, parts.join(","));
                }
            }
        }
    }
}

/// The run layer's program for a job's program use; sysbench's `test` picks one of lkp's sysbench programs.
fn resolve_program(name: &str, params: &mut BTreeMap<String, String>) -> Result<&'static dyn Program> {
    if name == "sysbench" {
        let test = params.remove("test").unwrap_or_default();
        if test.is_empty() {
            bail!("sysbench needs a test: use sysbench-cpu, sysbench-memory, sysbench-threads, sysbench-mutex or sysbench-fileio, or 'sysbench: {{test: cpu}}'");
        }
        let Ok(program) = program::lookup(&format!("sysbench-{test}")) else {
            bail!("sysbench has no test '{test}'; use cpu, memory, threads, mutex or fileio");
        };
        return Ok(program);
    }
    Ok(program::lookup(name)?)
}

/// Whether the run layer accepts `key` for `owner` (a program by its culprit-job name, or a monitor).
fn accepts(owner: &str, key: &str) -> bool {
    if COMMON_KEYS.contains(&key) {
        return true;
    }
    if monitor::known_monitors().contains(&owner) {
        // Monitor options are checked by the monitor itself when it is created.
        return true;
    }
    if owner == "sysbench" && key == "test" {
        return true;
    }
    programs_of(owner).iter().any(|p| p.params().iter().any(|s| s.matches(key)))
}

/// The programs whose params a job's `owner` key takes: the program of that name, or for `sysbench` every one of
/// its tests (the `test:` param picks one later).
fn programs_of(owner: &str) -> Vec<&'static dyn Program> {
    if owner == "sysbench" {
        program::registry().iter().copied().filter(|p| p.name().starts_with("sysbench-")).collect()
    } else {
        program::lookup(owner).into_iter().collect()
    }
}

/// The param names `owner` (a program by its Culprit name, `sysbench` for any of its tests) accepts, families
/// (`capture.*`) by their hash's name, for suggesting the one a misspelt key meant.
fn accepted_names(owner: &str) -> Vec<&'static str> {
    let programs = programs_of(owner);
    let names = programs.iter().flat_map(|p| p.params().iter().map(|spec| spec.name.trim_end_matches(".*")));
    names.chain(COMMON_KEYS.iter().copied()).collect()
}

/// The accepted name nearest to a misspelt `key`, when one is near enough to be what was meant: at most two edits
/// away (one for keys of three letters, none for shorter ones, where one edit reaches half the names: `rt` is as
/// near `rw` as `bs`), and nearer than every other.
fn nearest_name(key: &str, names: &[&'static str]) -> Option<&'static str> {
    let limit = match key.chars().count() {
        0..=2 => 0,
        3 => 1,
        _ => 2,
    };
    let mut scored: Vec<(usize, &'static str)> = names.iter().map(|&n| (program::edit_distance(key, n), n)).collect();
    scored.sort();
    scored.dedup();
    match scored.as_slice() {
        [(d, name), rest @ ..] if *d <= limit && rest.first().is_none_or(|(next, _)| next > d) => Some(name),
        _ => None,
    }
}

/// The programs other than `owner` (the sysbench tests count as one, `sysbench`) that accept `key` as it is, by
/// their job-file names.
fn programs_taking(key: &str, owner: &str) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = program::registry()
        .iter()
        .filter(|p| p.params().iter().any(|spec| spec.matches(key)))
        .map(|p| if p.name().starts_with("sysbench-") { "sysbench" } else { p.name() })
        .filter(|name| *name != owner)
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// For a param that no selected program takes but that programs take as a duration (`runtime: 3q` in a command
/// job), its place and the duration's own error, `runtime: '3q' is not a duration: ...`: told only that no program
/// uses the key, the user was not told the value was wrong too, which `timeout: banana` does say. The key problem's
/// text follows it, so that both are fixed in one round trip.
fn bad_duration(problem: &culprit_job::KeyProblem, job: &AtomicJob) -> Option<(String, String)> {
    let (place, key, value) = match problem {
        culprit_job::KeyProblem::UnusedParam { place, key, .. } => (place, key, job.params().get(key.as_str())),
        culprit_job::KeyProblem::UnknownParam { place, hash, key, .. } => {
            (place, key, job.params().get(hash.as_str()).and_then(|inner| inner.get(key.as_str())))
        }
        _ => return None,
    };
    let is_duration = program::registry()
        .iter()
        .any(|p| p.params().iter().any(|spec| spec.matches(key) && spec.kind == program::ParamKind::Duration));
    let text = match value? {
        Value::String(text) if !text.trim().is_empty() => text.clone(),
        Value::Number(number) => number.to_string(),
        _ => return None,
    };
    match culprit_job::convention::duration_secs(&text) {
        Err(error) if is_duration => Some((place.to_string(), format!("{key}: {error}"))),
        _ => None,
    }
}

/// A key problem's message, with the accepted name it most likely meant when a param is misspelt (`captur`, or a
/// top-level `runtme` that no selected program takes).
fn key_problem_text(problem: &culprit_job::KeyProblem, selected: &[&'static str]) -> String {
    // A key that another program takes as it is (fio's `bs` under hackbench) was put under the wrong program, not
    // misspelt: the accepted name nearest to it (hackbench's `fs`) would send the user to fix the wrong thing.
    // But a key the owner takes with a letter more or less (`loop` under hackbench, which takes `loops`; lkp's
    // perf-bench-syscall takes `loop`) is that name misspelt: both are said, the owner's name first.
    if let culprit_job::KeyProblem::UnknownParam { owner, key, .. } = problem {
        let takers = programs_taking(key, owner);
        if !takers.is_empty() {
            let takers = culprit_core::report::and_list(&takers);
            let plural_or_cut = nearest_name(key, &accepted_names(owner))
                .filter(|name| name.starts_with(key.as_str()) || key.starts_with(name));
            return match plural_or_cut {
                Some(name) => format!("{problem}; did you mean '{name}'? ('{key}' is a param of {takers})"),
                None => format!("{problem}; '{key}' is a param of {takers}, not of {owner}"),
            };
        }
    }
    let suggestion = match problem {
        culprit_job::KeyProblem::UnknownParam { owner, key, .. } => nearest_name(key, &accepted_names(owner)),
        culprit_job::KeyProblem::UnusedParam { key, .. } => {
            let names: Vec<&'static str> = selected.iter().flat_map(|p| accepted_names(p)).collect();
            nearest_name(key, &names)
        }
        // A misspelt monitor (`perf-stats`) or program (`sysbench-cpus`) is as likely as a misspelt param; lkp's own
        // programs (`will-it-scale`) are spelt right, and a name near them would send the user to another benchmark.
        culprit_job::KeyProblem::UnknownProgram { key, .. } if !culprit_job::table::is_lkp_program_not_run(key) => {
            let programs = culprit_job::table::PROGRAMS.iter().flat_map(|p| p.selectors.iter().map(|s| s.key));
            let setups = culprit_job::table::PROGRAMS.iter().flat_map(|p| p.setup_keys.iter().copied());
            // A misspelt setting of the test box (`drop_cache:`) holds a hash or nothing too.
            let settings = culprit_job::table::BOX_SETTINGS_NOT_APPLIED.iter().map(|s| s.key);
            let names: Vec<&'static str> =
                programs.chain(setups).chain(culprit_job::table::MONITORS.iter().copied()).chain(settings).collect();
            nearest_name(key, &names)
        }
        _ => None,
    };
    match (suggestion, problem) {
        (Some(name), _) => format!("{problem}; did you mean '{name}'?"),
        // With no name near enough to suggest, "fix its name" alone sends the user to the source for the names a
        // program takes: list them, for the program the hash names (`sysbench-memory`, not every sysbench test).
        (None, culprit_job::KeyProblem::UnknownParam { owner, hash, .. })
            if !monitor::known_monitors().contains(&owner.as_str()) =>
        {
            let (program, names) = match program::lookup(hash) {
                Ok(found) => (hash.as_str(), found.params().iter().map(|s| s.name.trim_end_matches(".*")).collect()),
                Err(_) => (owner.as_str(), accepted_names(owner)),
            };
            let mut listed: Vec<&str> = Vec::new();
            for name in names.into_iter().filter(|name| !COMMON_KEYS.contains(name)) {
                if !listed.contains(&name) {
                    listed.push(name);
                }
            }
            format!("{problem}; {program} takes: {}", listed.join(", "))
        }
        (None, _) => problem.to_string(),
    }
}

/// Reads, expands and validates a job file into atomic jobs ready to run.
pub fn plan_jobs(
    path: &Path,
    nr_cpu: u32,
    monitors_override: Option<&[String]>,
    cwd: &Path,
) -> Result<Vec<PlannedJob>> {
    let text = crate::job_file::read_job_file(path)?;
    let file_name = path.display().to_string();
    let file = crate::job_file::parse(&text, &file_name)?;
    if !file.included().is_empty() {
        crate::note!("culprit: {file_name} includes {} (lkp's '<<:')", file.included().join(", "));
    }
    plan_file(&file, &file_name, nr_cpu, monitors_override, cwd)
}

/// Like [`plan_jobs`], for job text already in hand (a stored bisect session's job).
pub fn plan_text(
    text: &str,
    file_name: &str,
    nr_cpu: u32,
    monitors_override: Option<&[String]>,
    cwd: &Path,
) -> Result<Vec<PlannedJob>> {
    let file = crate::job_file::parse(text, file_name)?;
    plan_file(&file, file_name, nr_cpu, monitors_override, cwd)
}

/// Like [`plan_jobs`], for a job file already read.
fn plan_file(
    file: &JobFile,
    file_name: &str,
    nr_cpu: u32,
    monitors_override: Option<&[String]>,
    cwd: &Path,
) -> Result<Vec<PlannedJob>> {
    let atomic = file.expand()?;
    let stem = file.stem();
    let mut planned = Vec::new();
    let mut refused: Vec<(String, anyhow::Error)> = Vec::new();
    let taken = params_taken_in(&atomic);
    // Whether `culprit split` would write every refused job, so that its advice below can be followed: a job refused
    // for what is missing here (a benchmark not installed) is written, one refused for its file is not (QA 58: run
    // sent the user to split, which refused the same file and wrote nothing).
    let mut split_writes_them = true;
    for job in &atomic {
        match plan_one(job, &stem, nr_cpu, monitors_override, cwd, Installed::Check, &taken) {
            Ok(job) => planned.push(job),
            Err(error) => {
                split_writes_them &= check_atomic(job, &stem, nr_cpu, cwd, &taken).is_ok();
                refused.push((job.name(), error));
            }
        }
    }
    let mut refused = refused.into_iter();
    let Some((first_name, first)) = refused.next() else { return Ok(planned) };
    if planned.is_empty() {
        return Err(first);
    }
    // Some atomic jobs can run and others cannot (lkp's stress-ng files list stressors an older stress-ng lacks):
    // refusing on the first alone left the user to find the others one round trip each, and how to run the rest.
    let others: Vec<String> = refused.map(|(name, _)| name).collect();
    let listed = match others.len() {
        0 => String::new(),
        1..=4 => format!(", and {}", others.join(", ")),
        n => format!(", and {}, ... ({} more)", others[..3].join(", "), n - 3),
    };
    if !split_writes_them {
        return Err(first.context(format!(
            "{} of the {} atomic jobs of {file_name} are refused: {first_name} (the reason follows){listed}; fix the \
             job file (`culprit split` refuses such a job too)",
            others.len() + 1,
            atomic.len(),
        )));
    }
    Err(first.context(format!(
        "{} of the {} atomic jobs of {file_name} cannot run here: {first_name} (the reason follows){listed}; `culprit \
         split {file_name} -o DIR` writes each atomic job to a file of its own, to run the {} that can",
        others.len() + 1,
        atomic.len(),
        planned.len()
    )))
}

/// Whether planning checks that the programs a job needs (the benchmark's binary, perf) are installed: `culprit run`
/// does, since it is about to run them; `culprit split` does not, since its files may be meant for another machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Installed {
    Check,
    Skip,
}

/// Checks one atomic job as `culprit run` would plan it, without checking installed programs: what `culprit split`
/// runs on every job it writes, so a file it writes is one `culprit run` takes.
/// The keys of an atomic job that select a program `culprit run` does not run (lkp's will-it-scale, or any key holding
/// a hash or nothing that Culprit does not know), with their places, when they are all that keep `culprit run` from
/// taking the job: it selects no program Culprit runs, and it has no other problem. `None` otherwise; [`check_atomic`]
/// then tells what is wrong. Such a job is one for lkp to run, which `culprit split` still writes.
pub fn programs_not_run(job: &AtomicJob) -> Option<Vec<(String, culprit_job::Place)>> {
    let mut keys = Vec::new();
    let mut selects_none = false;
    for problem in job.unknown_keys(&accepts) {
        match problem {
            culprit_job::KeyProblem::NoProgram { .. } => selects_none = true,
            culprit_job::KeyProblem::UnknownProgram { place, key } => keys.push((key, place)),
            _ => return None,
        }
    }
    (selects_none && !keys.is_empty()).then_some(keys)
}

/// The warning `culprit split` gives once for a key [`programs_not_run`] found: the job is written for lkp, and a key
/// that is a misspelt one of Culprit's names says so.
pub fn program_not_run_warning(key: &str, place: &culprit_job::Place) -> String {
    let near = match culprit_job::table::is_lkp_program_not_run(key) {
        true => None,
        false => {
            let programs = culprit_job::table::PROGRAMS.iter().flat_map(|p| p.selectors.iter().map(|s| s.key));
            let names: Vec<&'static str> = programs.chain(culprit_job::table::MONITORS.iter().copied()).collect();
            nearest_name(key, &names)
        }
    };
    let near = near.map(|name| format!("; if it means '{name}', fix its name")).unwrap_or_default();
    format!(
        "{place}: '{key}' is not a program culprit run runs (it runs {}), so its atomic jobs are written for lkp to \
         run{near}",
        culprit_job::table::program_names()
    )
}

pub fn check_atomic(job: &AtomicJob, stem: &str, nr_cpu: u32, cwd: &Path, taken: &ParamsTaken) -> Result<()> {
    plan_one(job, stem, nr_cpu, None, cwd, Installed::Skip, taken).map(drop)
}

/// The top-level params (their place and key) that a program of some atomic job of a file takes
/// ([`AtomicJob::params_taken`]).
pub type ParamsTaken = std::collections::BTreeSet<(String, String)>;

/// The [`ParamsTaken`] of a file's atomic jobs: a param of its first document that one job's program takes is the
/// file's shared param, which lkp gives every program; a job whose program does not take it is told so, and where to
/// move it, rather than to remove a param another document needs or fix a name that is right (QA 58: `runtime` and
/// `nr_threads` before a sysbench document and a perf bench document).
pub fn params_taken_in(atomic: &[AtomicJob]) -> ParamsTaken {
    atomic.iter().flat_map(|job| job.params_taken(&accepts)).collect()
}

/// The option of a monitor's `options` that its error is about: the one a refusal names (`foo`, or `freq` of
/// `freq=0`), or the one a check's words start with (`events: 'no-such-event' is no event ...`).
fn option_of<'a>(error: &monitor::MonitorError, options: &'a BTreeMap<String, String>) -> Option<&'a str> {
    let named = match error {
        monitor::MonitorError::BadOption { option, .. } => option.split('=').next().unwrap_or(option).to_string(),
        monitor::MonitorError::Failed { detail, .. } => detail.split(':').next().unwrap_or_default().to_string(),
        _ => return None,
    };
    options.keys().map(String::as_str).find(|option| *option == named)
}

/// The place of the param a program refused (its file and line), for the message; the job file alone for an error
/// that names no param.
fn param_place(error: &program::ProgramError, use_: &culprit_job::ProgramUse, file_name: &str) -> String {
    match error {
        program::ProgramError::BadParam { key, .. }
        | program::ProgramError::MissingParam { key, .. }
        | program::ProgramError::UnknownParam { key, .. } => use_.place_of(key).to_string(),
        _ => file_name.to_string(),
    }
}

/// Refuses a job whose `timeout` is no longer than the run time its program is given (`runtime`, stress-ng's
/// `testtime`): every run would be killed at the timeout (QA 46: `testtime: 30s` under `timeout: 4s`), each costing
/// the whole timeout on a robot before failing.
fn refuse_timeout_within_run_time(
    job: &AtomicJob,
    use_: &culprit_job::ProgramUse,
    params: &program::Params,
) -> Result<()> {
    let Some(timeout) = job.timeout_secs()? else { return Ok(()) };
    for key in ["runtime", "testtime"] {
        // A malformed value is the program's validation to name; only a readable one is compared.
        let Ok(Some(run_time)) = params.duration_secs(key) else { continue };
        if run_time >= timeout {
            let text = culprit_job::convention::duration_text;
            bail!(
                "in job file {}: timeout: {} is not longer than {key}: {} ({}), so every run would be killed at the \
                 timeout; give a timeout well above the run time (setup and parsing take time too), or remove it",
                job.place(&["timeout"]),
                text(timeout),
                text(run_time),
                use_.place_of(key)
            );
        }
    }
    Ok(())
}

fn plan_one(
    job: &AtomicJob,
    stem: &str,
    nr_cpu: u32,
    monitors_override: Option<&[String]>,
    cwd: &Path,
    installed: Installed,
    taken: &ParamsTaken,
) -> Result<PlannedJob> {
    let mut problems = job.unknown_keys(&accepts);
    // A job of a program of lkp's that Culprit does not run selects none of Culprit's, which the first line says;
    // a second one asking to add a key naming a program contradicted it (QA 47).
    let names_lkp_program = problems.iter().any(|p| {
        matches!(p, culprit_job::KeyProblem::UnknownProgram { key, .. }
            if culprit_job::table::is_lkp_program_not_run(key))
    });
    if names_lkp_program {
        problems.retain(|p| !matches!(p, culprit_job::KeyProblem::NoProgram { .. }));
    }
    // A misspelt program is the likelier story than "no program", so its message goes first.
    problems.sort_by_key(|p| matches!(p, culprit_job::KeyProblem::NoProgram { .. }));
    // Every problem is said, one a line: fixing one only to be told of the next wastes a round trip each.
    let selected: Vec<&'static str> = job.programs().iter().map(|p| p.name).collect();
    let texts: Vec<String> = problems
        .iter()
        .map(|p| {
            let text = match p {
                // A param of the first document that another document's program takes is the file's shared param,
                // not a misspelt one: lkp gives it to every program, Culprit only to programs that take it.
                culprit_job::KeyProblem::UnusedParam { place, key, programs }
                    if taken.contains(&(place.to_string(), key.clone())) =>
                {
                    format!(
                        "{place}: top-level param '{key}' is shared by every document of the file, and {programs} \
                         does not take it (another document's program does); Culprit gives a param only to a \
                         program that takes it: move '{key}' into the documents of the programs that do"
                    )
                }
                _ => key_problem_text(p, &selected),
            };
            match bad_duration(p, job) {
                // Both name the same place; it is said once.
                Some((place, bad)) => {
                    let rest = text.strip_prefix(&format!("{place}: ")).unwrap_or(&text);
                    format!("{place}: {bad}; besides, {rest}")
                }
                None => text,
            }
        })
        .collect();
    match texts.as_slice() {
        [] => {}
        [only] => bail!("{only}"),
        [first, rest @ ..] => {
            let rest: Vec<String> = rest.iter().map(|p| format!("\n  also: {p}")).collect();
            bail!("{first}{}", rest.concat());
        }
    }
    let uses = job.programs();
    let [use_] = uses.as_slice() else {
        let names: Vec<&str> = uses.iter().map(|u| u.key.as_str()).collect();
        bail!(
            "{}: the job selects {} programs ({}); culprit runs one benchmark program per job, so give each a \
             document of its own after a first document of the params they share (separated by '---' lines), or a \
             file of its own",
            job.file_name(),
            names.len(),
            names.join(", ")
        );
    };
    let mut values = BTreeMap::new();
    flatten("", &use_.params, &mut values);
    // sysbench's test picks the program: an error names the `test:` line, or the `sysbench:` line without one.
    let program_place =
        if use_.params.contains_key("test") { use_.place_of("test") } else { job.place(&[use_.key.as_str()]) };
    let program = resolve_program(use_.name, &mut values).with_context(|| format!("in job file {program_place}"))?;
    let params = Params::new(program.name(), values);
    // The message names the line of the param, so a job file with many programs' params points at the one to fix.
    let in_file = |error: program::ProgramError| {
        let place = param_place(&error, use_, job.file_name());
        anyhow::Error::new(error).context(format!("in job file {place}"))
    };
    params.validate(program.params(), nr_cpu).map_err(in_file)?;
    refuse_timeout_within_run_time(job, use_, &params)?;
    if installed == Installed::Check {
        program.check_installed()?;
        // What the installed program offers (stress-ng's stressors) is asked here, once per atomic job, so a name
        // it lacks is refused with its line instead of failing every run.
        program.check_offered(&params).map_err(in_file)?;
        program.check_fits_machine(&params, &culprit_run::machine::usable_cpus()).map_err(in_file)?;
    }
    // Plan once now so a param that only fails in combination (fio's test_size / nr_task) is caught up front. A
    // server the plan needs and this machine lacks (oltp's MariaDB for lkp's mysql-setup) is the run's concern, not a
    // split's, whose files may be meant for another machine.
    match program.plan(&params, &program::ProgramContext { nr_cpu, scratch_dir: PathBuf::from("/nonexistent") }) {
        Err(program::ProgramError::MissingBinary { .. }) if installed == Installed::Skip => {}
        planned => {
            planned.map_err(in_file)?;
        }
    }

    // A monitor named by `--monitors` is the flag's mistake, not the job file's, so errors say where it came from,
    // and for a job file on which line.
    let monitors_source = |name: &str| match monitors_override {
        Some(_) => "in --monitors".to_string(),
        None => format!("in job file {}", job.place(&[name])),
    };
    let monitors: Vec<(String, BTreeMap<String, String>)> = match monitors_override {
        Some(list) if list.iter().any(|m| m == "none") => Vec::new(),
        Some(list) => list.iter().map(|m| (m.clone(), BTreeMap::new())).collect(),
        None => {
            let named = job.monitors();
            if named.is_empty() {
                monitor::default_monitors().into_iter().map(|m| (m.to_string(), BTreeMap::new())).collect()
            } else {
                named
                    .iter()
                    .map(|m| {
                        let mut options = BTreeMap::new();
                        flatten("", &m.options, &mut options);
                        // Options of lkp's monitor that Culprit's does not apply (lkp's `debug_mode: 0`) are recorded
                        // with the job's params and named by `note_lkp_monitor_options_not_applied`, not refused.
                        options.retain(|option, _| {
                            !culprit_job::table::is_lkp_monitor_option_not_applied(m.name, option)
                        });
                        (m.name.to_string(), options)
                    })
                    .collect()
            }
        }
    };
    for (name, options) in &monitors {
        // Creating a monitor checks its name and options without starting it; `check` adds what needs the machine
        // (perf installed, perf-profile's options), since a monitor failing at run time does not fail the run and
        // would silently leave every run without the data asked for.
        monitor::create(name, options, 1.0)
            .and_then(|created| match (created.check(), installed) {
                // What the machine lacks (perf, an event it cannot count) is the run's concern, not a split's.
                (
                    Err(monitor::MonitorError::MissingProgram { .. } | monitor::MonitorError::Failed { .. }),
                    Installed::Skip,
                ) => Ok(()),
                (checked, _) => checked,
            })
            .map_err(|error| {
                // The option's own line where the error names one (QA 58: a bad `events:` entry was placed at the
                // `perf-stat:` line above it).
                let source = match option_of(&error, options) {
                    Some(option) if monitors_override.is_none() => {
                        let mut path = vec![name.as_str()];
                        path.extend(option.split('.'));
                        format!("in job file {}", job.place(&path))
                    }
                    _ => monitors_source(name),
                };
                anyhow::Error::new(error).context(format!("{source}: monitor '{name}'"))
            })?;
    }

    // The name the runs are stored under leaves out the revision values lkp's split-job appends to its file names
    // (`commit:` of a finished lkp job.yaml): the store keeps the revision beside the job, as `culprit import` does,
    // and a job run from such a file was listed as `...-tb-0x5003006-8cc621d2f45d...`, a name per commit.
    let name = job.name_across_revisions();
    let name = if name.is_empty() { stem.to_string() } else { name };
    let mut flat = BTreeMap::new();
    flatten("", job.params(), &mut flat);
    Ok(PlannedJob {
        path_params: job.path_params(),
        run: JobRun {
            job_id: job.id(),
            job_name: name,
            testcase: job.testcase(),
            params: flat.into_iter().collect(),
            job_yaml: job.to_yaml(),
            program,
            program_params: params,
            monitors,
            timeout: job.timeout_secs()?.map(Duration::from_secs),
            cwd: Some(cwd.to_path_buf()),
            env: Vec::new(),
        },
    })
}

/// The revision the results belong to: a label, or a commit of the repository in the current directory.
pub fn revision_for(commit: Option<&str>, label: Option<&str>, cwd: &Path) -> Result<Revision> {
    if let Some(name) = label {
        if name.trim().is_empty() {
            bail!("--label needs a non-empty name");
        }
        // Commands read revisions trimmed, and `label:NAME` as the label NAME: a label that could not be typed back
        // would hold runs nothing can compare.
        if name.trim() != name {
            bail!("--label {name:?} starts or ends with white space; give the name without it");
        }
        if name.starts_with("label:") {
            bail!("--label {name:?}: give the name without the `label:` prefix, which is how commands print labels");
        }
        return Ok(Revision::Label { name: name.to_string() });
    }
    // A full SHA names its commit without a repository to read it in: a kernel measured on a test box that has no
    // checkout of it (docs/report.md, "Commit subjects"; the subject comes from `--repo` when reports are made).
    if let Some(sha) = commit.filter(|c| c.len() == 40 && c.bytes().all(|b| b.is_ascii_hexdigit())) {
        if git::toplevel(cwd).is_err() {
            return Ok(Revision::Commit { sha: sha.to_ascii_lowercase(), describe: None, subject: None });
        }
    }
    // git's own error suggests --repo, which the commands that take a repository have and `run` does not: `run`
    // measures the commit checked out in the directory it runs from.
    let top = git::toplevel(cwd).map_err(|error| match (error, commit) {
        (git::GitError::NotARepo { dir }, None) => anyhow::anyhow!(
            "{dir} is not inside a git repository, so there is no commit to record the runs under (culprit run \
             records the HEAD of the repository it runs in): run it from inside the repository whose commit you \
             measured (cd into it), give that commit's full 40-digit SHA with --commit SHA, or store the runs under \
             a name with --label NAME"
        ),
        (git::GitError::NotARepo { dir }, Some(given)) => anyhow::anyhow!(
            "--commit {given}: {dir} is not inside a git repository to read it in: give the commit's full 40-digit \
             SHA, run culprit run from inside the repository (cd into it), or store the runs under a name with \
             --label NAME"
        ),
        (other, _) => other.into(),
    })?;
    let revision = git::resolve(&top, commit.unwrap_or("HEAD"))?;
    match commit {
        None => warn_of_local_changes(&top, &revision),
        Some(given) => warn_of_another_head(&top, given, &revision),
    }
    Ok(revision)
}

/// Says when `--commit` names another commit than the HEAD of the checkout the job runs in: the job runs the files
/// as they are, so a job that builds or runs the repository's code measured HEAD and stored it under the commit
/// given (QA 58: commit two's program stored as commit one, without a word, where a dirty tree gets one). A note,
/// not a refusal: the commit may be the kernel the machine booted, measured by a job that does not use the checkout.
fn warn_of_another_head(top: &Path, given: &str, revision: &Revision) {
    let Revision::Commit { sha, .. } = revision else { return };
    let Ok(Revision::Commit { sha: head, .. }) = git::resolve(top, "HEAD") else { return };
    if head == *sha {
        return;
    }
    let (commit, head) = (abbreviate(sha, 12), abbreviate(&head, 12));
    crate::note!(
        "culprit: --commit {given} is {commit}, but {} has {head} checked out; the job runs in the files as they are \
         and its runs are stored under {commit} all the same: check out {commit} first if the job builds or runs \
         this repository's code",
        top.display()
    );
}

/// Says when the checkout whose HEAD names the runs has changes to tracked files: a patch applied to test it (seed
/// 000's "3.12-git-revert" and "3.12-git-fix" trees) was stored under the commit it sits on, mixed with that commit's
/// own runs, with nothing to tell them apart. Untracked files (build output) are not changes of the commit. A
/// warning, not a refusal: the tree may hold changes that do not touch what is measured.
fn warn_of_local_changes(top: &Path, revision: &Revision) {
    let Revision::Commit { sha, .. } = revision else { return };
    let Ok(status) = git::git(top, &["status", "--porcelain", "--untracked-files=no"]) else { return };
    let changed: Vec<&str> = status.lines().filter_map(|line| line.get(3..)).collect();
    if changed.is_empty() {
        return;
    }
    let shown = changed.iter().take(3).copied().collect::<Vec<_>>().join(", ");
    let more = if changed.len() > 3 { format!(" and {} more", changed.len() - 3) } else { String::new() };
    crate::note!(
        "culprit: {} has uncommitted changes ({shown}{more}); the runs are stored under commit {} all the same, \
         beside that commit's own runs: commit the changes, or store the runs under a name with --label NAME",
        top.display(),
        &sha[..12.min(sha.len())]
    );
}

/// Installs a SIGINT handler that only raises a flag: the executor stops the benchmark's process group, keeps every
/// finished run, and the command exits cleanly. SIGTERM is taken the same way, and so is SIGHUP (the ssh session or
/// terminal that started culprit went away), unless SIGHUP is ignored, as `nohup` leaves it to ask for running on:
/// by default a hang-up ended culprit as kill -9 does, and the benchmark of the step in flight ran on unwatched.
pub fn interrupt_flag() -> Arc<AtomicBool> {
    static FLAG: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    let flag = FLAG.get_or_init(|| Arc::new(AtomicBool::new(false))).clone();
    extern "C" fn on_sigint(_: libc::c_int) {
        if let Some(flag) = FLAG.get() {
            flag.store(true, Ordering::SeqCst);
        }
    }
    // SAFETY: the handler only performs an atomic store, which is async-signal-safe.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigint as extern "C" fn(libc::c_int) as usize;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
        libc::sigaction(libc::SIGTERM, &action, std::ptr::null_mut());
        let mut hang_up: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGHUP, std::ptr::null(), &mut hang_up) == 0 && hang_up.sa_sigaction != libc::SIG_IGN
        {
            libc::sigaction(libc::SIGHUP, &action, std::ptr::null_mut());
        }
    }
    flag
}

/// The checks and plan every `culprit run` starts with: the options, the planned jobs (each with the commit in its
/// environment) and the revision, which only a dry run may lack (outside a git repository, with neither --commit
/// nor --label).
fn prepare(args: &RunArgs) -> Result<(Vec<PlannedJob>, Option<Revision>, culprit_core::model::Machine)> {
    if args.repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    // The command line checks this already; a plan made in code gets the same rule and the same words.
    if !(crate::cli::MIN_INTERVAL_SECS..=crate::cli::MAX_INTERVAL_SECS).contains(&args.interval) {
        bail!(
            "--interval must be from {} to {} seconds, got {}",
            crate::cli::MIN_INTERVAL_SECS,
            crate::cli::MAX_INTERVAL_SECS,
            args.interval
        );
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let machine = machine::this_machine();
    let mut jobs = plan_jobs(&args.job, machine.nr_cpu, args.monitors.as_deref(), &cwd)?;
    let revision = match revision_for(args.commit.as_deref(), args.label.as_deref(), &cwd) {
        // A dry run outside a repository has no revision to name, which is no error; a bad --label is one, as it
        // would be for the run itself (QA 59: `--label ''` passed the dry run the real run refused).
        Err(_) if args.dry_run && args.commit.is_none() && args.label.is_none() => None,
        revision => Some(revision?),
    };
    // The benchmark sees the commit as it does under bisect, check, try-fix and follow, so one job file (one that
    // picks a kernel image by $CULPRIT_COMMIT, say) behaves the same under every command.
    if let Some(Revision::Commit { sha, .. }) = &revision {
        for job in &mut jobs {
            job.run.env.push(("CULPRIT_COMMIT".to_string(), sha.clone()));
        }
    }
    Ok((jobs, revision, machine))
}

/// `culprit run --dry-run`, which opens no store.
pub fn run_dry(args: &RunArgs) -> Result<std::process::ExitCode> {
    let (jobs, revision, machine) = prepare(args)?;
    dry_run(args, &jobs, revision.as_ref(), &machine)
}

pub fn run(store: &mut dyn Store, args: &RunArgs) -> Result<std::process::ExitCode> {
    let (jobs, revision, machine) = prepare(args)?;
    let Some(revision) = revision else { bail!("culprit run needs a revision: give --commit or --label") };
    // The directories come last: everything else is checked first, so a job with a mistake creates none of them.
    let scratch_root = scratch_root(args.scratch.as_deref())?;
    if let Some(root) = &args.result_root {
        if writable_dir(root, "--result-root", "give a directory you can write in for the lkp result root")? {
            crate::note!("culprit: created the directory {} for --result-root", root.display());
        }
    }
    // A `culprit run` killed with `kill -9` left its benchmark running (a `stress-ng` of minutes, loading the machine
    // under this run's measurements): each run records its benchmark processes in the scratch directory, and the
    // next one kills what a dead one left there.
    crate::cmd::bisect::reap_leftover_steps_of_processes(&scratch_root, "run");
    // Its scratch directory stayed too, once its processes are gone: on a farm machine, run after killed run, they
    // fill the disk.
    crate::cmd::bisect::remove_scratch_left_by_killed_runs(&scratch_root);
    // Such a run also left its perf monitors' directories in the temp dir (a perf-profile's perf.data can be
    // gigabytes); a run that starts perf removes them too, this one whether or not it does.
    culprit_run::monitor::perf_stat::remove_stale_scratch_dirs(&std::env::temp_dir());
    refuse_what_cannot_fit(&jobs, &scratch_root)?;
    note_settings_not_applied(&jobs, &scratch_root);
    note_monitor_intervals_not_applied(&jobs, args.interval);
    note_lkp_monitors_not_run(&jobs);
    note_lkp_monitor_options_not_applied(&jobs);
    note_fio_buffered_unlike_lkp(&jobs);
    note_iperf_udp_at_the_default_rate(&jobs);
    note_lkp_sysctls_not_set(&jobs, machine.nr_cpu);
    note_needs_not_met(&jobs, &machine, numa_nodes());
    note_monitor_delay_not_applied(&jobs);
    let step_record = Some(scratch_root.join(format!("run-{}.step", std::process::id())));
    let plan = RunPlan {
        jobs,
        repeat: args.repeat,
        context: RunContext {
            revision,
            machine,
            interval: Duration::from_secs_f64(args.interval),
            scratch_root,
            step_record,
        },
        result_root: args.result_root.clone(),
    };
    execute(store, &plan, args.json)
}

/// `culprit run --dry-run`: the checks a run makes before its first benchmark starts, with their notes on stderr,
/// then what each atomic job would execute on stdout. Nothing is created, killed, run or stored: a leftover
/// benchmark of a killed run is for the next real run to reap, and the scratch directory's file system is that of
/// its nearest existing parent when it does not exist yet.
fn dry_run(
    args: &RunArgs,
    jobs: &[PlannedJob],
    revision: Option<&Revision>,
    machine: &culprit_core::model::Machine,
) -> Result<std::process::ExitCode> {
    let scratch_root = scratch_dir(args.scratch.as_deref());
    let existing = scratch_root.ancestors().find(|dir| dir.is_dir()).unwrap_or(Path::new("/")).to_path_buf();
    refuse_what_cannot_fit(jobs, &existing)?;
    note_settings_not_applied(jobs, &existing);
    note_monitor_intervals_not_applied(jobs, args.interval);
    note_lkp_monitors_not_run(jobs);
    note_fio_buffered_unlike_lkp(jobs);
    note_iperf_udp_at_the_default_rate(jobs);
    note_lkp_sysctls_not_set(jobs, machine.nr_cpu);
    note_needs_not_met(jobs, machine, numa_nodes());
    note_monitor_delay_not_applied(jobs);
    let at = match revision {
        Some(revision) => format!(" at {}", describe_revision(revision)),
        None => String::new(),
    };
    let mut out = format!(
        "culprit: dry run of {}: {} atomic job(s) x {} run(s) on {}{at}; nothing was run or stored\n",
        args.job.display(),
        jobs.len(),
        args.repeat,
        machine.hostname
    );
    // Each run works in a directory of its own under the scratch root, made when it starts.
    let scratch_dir = scratch_root.join("RUN");
    for job in jobs {
        out.push_str(&format!("\n{}  (job id {})\n", job.run.job_name, job.run.job_id));
        let context = program::ProgramContext { nr_cpu: machine.nr_cpu.max(1), scratch_dir: scratch_dir.clone() };
        let plan = job.run.program.plan(&job.run.program_params, &context)?;
        for step in &plan.setup {
            out.push_str(&format!("  setup:    {}\n", step.display()));
        }
        let times = match (plan.warmups, plan.executions) {
            (0, 1) => String::new(),
            (0, n) => format!("  ({n} times)"),
            (w, n) => format!("  ({w} warmup(s), then {n} times)"),
        };
        out.push_str(&format!("  measure:  {}{times}\n", plan.main.display()));
        for step in &plan.cleanup {
            out.push_str(&format!("  cleanup:  {}\n", step.display()));
        }
        let monitors: Vec<&str> = job.run.monitors.iter().map(|(name, _)| name.as_str()).collect();
        if !monitors.is_empty() {
            out.push_str(&format!("  monitors: {} (every {} s)\n", monitors.join(", "), args.interval));
        }
        if let Some(timeout) = job.run.timeout {
            out.push_str(&format!("  timeout:  {} s\n", timeout.as_secs_f64()));
        }
    }
    output::print(&out)?;
    Ok(std::process::ExitCode::SUCCESS)
}

/// Refuses a job whose runs write more than the scratch directory's file system has free. lkp's job files size
/// `test_size` for their test box's disk (the fio-basic job of seed 001 writes 200G on a 2pmem box): run as it is on
/// a development machine, fio laid out the file in the scratch directory until the disk was full. sysbench-fileio's
/// `size` (64G in lkp's jobs) is laid out the same way.
fn refuse_what_cannot_fit(jobs: &[PlannedJob], scratch_root: &Path) -> Result<()> {
    let Some(free) = free_bytes(scratch_root) else { return Ok(()) };
    for job in jobs {
        let Some((param, need)) = job.run.program.scratch_bytes(&job.run.program_params) else { continue };
        if need > free {
            bail!(
                "{}: its {param} of {} does not fit in the {} free on the file system of {}, which the runs would \
                 fill; give a smaller {param}, or --scratch a directory on a file system with room",
                job.run.job_name,
                bytes_text(need),
                bytes_text(free),
                scratch_root.display()
            );
        }
    }
    Ok(())
}

/// The bytes an unprivileged writer may still use on the file system holding `dir`; `None` when it cannot be asked.
fn free_bytes(dir: &Path) -> Option<u64> {
    let path = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: `path` is a NUL-terminated string that outlives the call, and `stats` is a plain C struct that
    // statvfs fills in; it is read only when the call succeeds.
    let stats = unsafe {
        let mut stats: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(path.as_ptr(), &mut stats) != 0 {
            return None;
        }
        stats
    };
    Some((stats.f_bavail as u64).saturating_mul(stats.f_frsize as u64))
}

/// A byte count as sizes are written in job files, to one decimal: `200.0G`, `38.2G`, `512.0M`.
fn bytes_text(bytes: u64) -> String {
    let units = [("P", 1u64 << 50), ("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("k", 1 << 10)];
    match units.iter().find(|(_, size)| bytes >= *size) {
        Some((unit, size)) => format!("{:.1}{unit}", bytes as f64 / *size as f64),
        None => format!("{bytes} bytes"),
    }
}

/// Says which of lkp's box settings the jobs give, with their values, are recorded but not applied. Without it a job
/// of `fs: [ext4, xfs]` ran twice on the scratch directory's filesystem, stored as an ext4 and an xfs job, and their
/// difference read as the filesystems' when it was noise; and a job's `drop_caches:` or `numactl:` setup, which
/// changes what the benchmark measures, would be passed over in silence.
fn note_settings_not_applied(jobs: &[PlannedJob], scratch_root: &Path) {
    // A setup script the job's program applies (oltp's MySQL server for `mysql-setup:`, unless the job chose
    // PostgreSQL) is done, not merely recorded.
    let applied = |job: &PlannedJob, key: &str| {
        culprit_job::table::applied_by_program(key, job.run.program.name(), |param| job.run.program_params.get(param))
    };
    let not_applied = jobs.iter().flat_map(|job| {
        let params = job.run.params.iter().filter(move |(key, _)| !applied(job, key));
        params.map(|(key, value)| (key.as_str(), value.as_str()))
    });
    let given = culprit_job::table::settings_not_applied(not_applied);
    if given.is_empty() {
        return;
    }
    let listed: Vec<String> = given
        .iter()
        .map(|(setting, values)| match values.is_empty() {
            true => setting.key.to_string(),
            false => format!("{}: {}", setting.key, values.join(", ")),
        })
        .collect();
    let mut not_done: Vec<&str> = Vec::new();
    for setting in culprit_job::table::BOX_SETTINGS_NOT_APPLIED {
        if given.iter().any(|(s, _)| s.key == setting.key) && !not_done.contains(&setting.not_done) {
            not_done.push(setting.not_done);
        }
    }
    crate::note!(
        "culprit: {} are recorded with the runs but not applied: Culprit {}, and the benchmark's files go to {} on \
         whatever filesystem holds it; jobs that differ only in these measure the same setup (set the machine up \
         yourself, and give --scratch a directory on the filesystem to test)",
        listed.join("; "),
        culprit_core::report::and_list(&not_done),
        scratch_root.display()
    );
}

/// Says, for an lkp fio job (one with lkp's `fio-setup-basic` hash) that gives no `buffered`, that lkp's robot ran
/// it with O_DIRECT and Culprit does not: lkp's setup script writes `buffered=0` into fio's task file whatever the
/// job says, and fio then opens its files O_DIRECT even under `direct: 0`. Culprit runs fio as the job gives it, so
/// that a job's `direct: 0` means buffered I/O, but a robot's regression in the direct I/O path would then go
/// unseen without a word.
fn note_fio_buffered_unlike_lkp(jobs: &[PlannedJob]) {
    let lkp_fio_without_buffered = jobs.iter().any(|job| {
        let params = &job.run.params;
        let lkp_form = params.iter().any(|(key, _)| key.split('.').next() == Some("fio-setup-basic"));
        let buffered = params.iter().any(|(key, _)| key.rsplit('.').next() == Some("buffered"));
        lkp_form && !buffered
    });
    if lkp_fio_without_buffered {
        crate::note!(
            "culprit: lkp's fio-setup-basic writes buffered=0 into fio's task file when a job gives no buffered, so \
             lkp ran this job with O_DIRECT whatever its direct says; Culprit runs fio as the job gives it (buffered \
             I/O unless direct): add 'buffered: 0' to measure the I/O path lkp's robot measured"
        );
    }
}

/// Says, for an iperf job over UDP that gives no `bitrate`, that it measures iperf3's default target rate of 1 Mbit/s
/// and not the network stack: lkp's jobs give none, so their UDP numbers are that rate, and a regression of the UDP
/// path would not move them.
fn note_iperf_udp_at_the_default_rate(jobs: &[PlannedJob]) {
    let udp_at_default = jobs.iter().any(|job| {
        let param = |name: &str| job.run.params.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str());
        param("iperf.protocol") == Some("udp") && param("iperf.bitrate").is_none()
    });
    if udp_at_default {
        crate::note!(
            "culprit: iperf over UDP without 'bitrate' sends at iperf3's default target of 1 Mbit/s, as lkp's jobs \
             do, so its udp.bps is that rate whatever the kernel does; add 'bitrate: 0' to the iperf hash to measure \
             as fast as the stack goes"
        );
    }
}

/// Says which of lkp's monitors and daemons the job names that Culprit has none of, and so runs without.
fn note_lkp_monitors_not_run(jobs: &[PlannedJob]) {
    let mut named: Vec<&str> = Vec::new();
    for (key, _) in jobs.iter().flat_map(|job| &job.run.params) {
        let top = key.split('.').next().unwrap_or(key);
        if culprit_job::table::LKP_MONITORS_NOT_RUN.contains(&top) && !named.contains(&top) {
            named.push(top);
        }
    }
    if !named.is_empty() {
        crate::note!(
            "culprit: the job's lkp monitors {} are none of Culprit's ({}); the runs go without them",
            named.join(", "),
            culprit_job::table::monitor_names()
        );
    }
}

/// Says, in one warning, which options of lkp's monitors the job gives that Culprit's monitors do not apply
/// (`perf-profile.debug_mode`, which lkp's benchmark category gives every job): they are recorded with the runs.
fn note_lkp_monitor_options_not_applied(jobs: &[PlannedJob]) {
    let mut named: Vec<&str> = Vec::new();
    for (key, _) in jobs.iter().flat_map(|job| &job.run.params) {
        let Some((monitor, option)) = key.split_once('.') else { continue };
        if culprit_job::table::is_lkp_monitor_option_not_applied(monitor, option) && !named.contains(&key.as_str()) {
            named.push(key);
        }
    }
    if !named.is_empty() {
        crate::note!(
            "culprit: warning: lkp's monitor options {} are not applied by Culprit's monitors; they are recorded with \
             the runs",
            named.join(", ")
        );
    }
}

/// Says which sysctls lkp's run scripts set for the jobs (stress-ng's `kernel.sched_autogroup_enabled=0`, its
/// `fs.aio-max-nr` for aio) have another value on this machine, with both values: Culprit sets none, and a stressor
/// that meets a lower limit than lkp's, or runs under autogroup scheduling, measures other numbers than lkp reports.
fn note_lkp_sysctls_not_set(jobs: &[PlannedJob], nr_cpu: u32) {
    let mut differing: Vec<(&str, String)> = Vec::new();
    for job in jobs {
        let program = job.run.program.name();
        for (name, value) in job.run.program.lkp_sysctls(&job.run.program_params, nr_cpu) {
            // A sysctl this kernel lacks (or hides) is one lkp's script could not set either.
            let Ok(current) = std::fs::read_to_string(Path::new("/proc/sys").join(name.replace('.', "/"))) else {
                continue;
            };
            let current = current.split_whitespace().collect::<Vec<_>>().join(" ");
            let said = format!("{name}={value} (here {current})");
            if current != value && !differing.iter().any(|(p, s)| *p == program && *s == said) {
                differing.push((program, said));
            }
        }
    }
    let mut programs: Vec<&str> = Vec::new();
    for (program, _) in &differing {
        // Jobs of two programs may alternate (a file of several documents): each program is said once.
        if !programs.contains(program) {
            programs.push(program);
        }
    }
    for program in programs {
        let listed: Vec<&str> = differing.iter().filter(|(p, _)| *p == program).map(|(_, s)| s.as_str()).collect();
        crate::note!(
            "culprit: lkp's {program} run sets the sysctls {} before it runs; Culprit sets no sysctl, so these runs \
             measure this machine's (set them with `sysctl -w NAME=VALUE` for numbers comparable with lkp's)",
            listed.join(", ")
        );
    }
}

/// lkp's scheduler runs a job only on a machine that has what its `need_*` keys ask for (`need_memory: 30G`, lkp's
/// most common; `need_cpu`, `need_node`); Culprit runs it on this one whatever they say, so it says which this machine
/// lacks, once per key: such runs may swap, fail, or measure another regime than the robot's. Memory is compared
/// with 5% to spare, since lkp's hosts give their nominal size (24G) and the kernel reports less (23.5G).
fn note_needs_not_met(jobs: &[PlannedJob], machine: &Machine, nodes: Option<u64>) {
    let mut said: Vec<String> = Vec::new();
    for job in jobs {
        for unmet in unmet_needs(&job.run.params, machine.memory_kib.saturating_mul(1024), machine.nr_cpu, nodes) {
            if !said.contains(&unmet) {
                said.push(unmet);
            }
        }
    }
    if !said.is_empty() {
        crate::note!(
            "culprit: the job asks for {}; lkp's scheduler would not run it on this machine, and its runs here may \
             swap, fail, or measure another regime than the robot's",
            said.join(", ")
        );
    }
}

/// What of the job's `need_memory`, `need_cpu` and `need_node` a machine of `memory` bytes, `nr_cpu` CPUs and
/// `nodes` NUMA nodes (when known) lacks, each as `key: value (here H)`. A value Culprit cannot read is no need.
fn unmet_needs(params: &[(String, String)], memory: u64, nr_cpu: u32, nodes: Option<u64>) -> Vec<String> {
    let mut unmet = Vec::new();
    for (key, value) in params {
        let lacks = match key.as_str() {
            "need_memory" => culprit_job::convention::size_bytes(value)
                .ok()
                .filter(|&need| need as f64 > memory as f64 * 1.05)
                .map(|_| format!("{:.1}G", memory as f64 / (1u64 << 30) as f64)),
            "need_cpu" => value.trim().parse::<u64>().ok().filter(|&need| need > u64::from(nr_cpu)).map(|_| {
                format!("{nr_cpu} CPUs")
            }),
            "need_node" => nodes.zip(value.trim().parse::<u64>().ok()).filter(|(have, need)| need > have).map(
                |(have, _)| counted(have, "NUMA node"),
            ),
            _ => None,
        };
        if let Some(here) = lacks {
            unmet.push(format!("{key}: {value} (here {here})"));
        }
    }
    unmet
}

/// This machine's NUMA nodes, as sysfs lists them.
fn numa_nodes() -> Option<u64> {
    let entries = std::fs::read_dir("/sys/devices/system/node").ok()?;
    let is_node =
        |name: &str| name.strip_prefix("node").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let count = entries.flatten().filter(|e| is_node(&e.file_name().to_string_lossy())).count() as u64;
    (count > 0).then_some(count)
}

/// Says that a job's `monitor_delay` (lkp's dbench job gives 10) is not applied: lkp starts its monitors that many
/// seconds into the benchmark, past its start-up, and Culprit's sample from the start, so their averages are not
/// lkp's; the key was recorded without a word.
fn note_monitor_delay_not_applied(jobs: &[PlannedJob]) {
    let mut given: Vec<&str> = Vec::new();
    for (key, value) in jobs.iter().flat_map(|job| &job.run.params) {
        if key == "monitor_delay" && !value.is_empty() && !given.contains(&value.as_str()) {
            given.push(value);
        }
    }
    if !given.is_empty() && jobs.iter().any(|job| !job.run.monitors.is_empty()) {
        crate::note!(
            "culprit: monitor_delay: {} is recorded with the runs but not applied: lkp starts its monitors that many \
             seconds into the benchmark, and Culprit's sample the whole run, its start included",
            given.join(", ")
        );
    }
}

/// Says which /proc monitors the job gives an `interval` other than the run's: one thread samples them all at
/// `--interval`, so a job's `vmstat: {interval: 10}` (lkp's jobs give their monitors intervals) sampled every second
/// without a word. perf-stat applies its own.
fn note_monitor_intervals_not_applied(jobs: &[PlannedJob], run_interval: f64) {
    let mut given: Vec<String> = Vec::new();
    for (name, options) in jobs.iter().flat_map(|job| &job.run.monitors) {
        let Some(secs) = options.get("interval").and_then(|text| text.trim().parse::<f64>().ok()) else { continue };
        let said = format!("{name} interval {secs}");
        if name.starts_with("perf-") || secs == run_interval || given.contains(&said) {
            continue;
        }
        given.push(said);
    }
    if !given.is_empty() {
        crate::note!(
            "culprit: the job's {} not applied: the /proc monitors are sampled together at the run's --interval \
             ({run_interval} s); give --interval for another",
            if given.len() == 1 { format!("{} is", given[0]) } else { format!("{} are", given.join(", ")) }
        );
    }
}

/// The scratch root the runs of a command make their directories under: `--scratch DIR` as given (made when missing,
/// and said so), else `culprit-scratch` under the system temp dir; refused, naming it, when it cannot be written in.
/// `culprit run`, bisect, check, try-fix and track take `--scratch` alike through this.
pub(crate) fn scratch_root(given: Option<&Path>) -> Result<PathBuf> {
    let dir = scratch_dir(given);
    match given {
        Some(_) => {
            if writable_dir(&dir, "--scratch", "give a directory you can write in for the benchmarks' files")? {
                // A mistyped path would otherwise become a new directory without a word.
                crate::note!("culprit: created the directory {} for --scratch", dir.display());
            }
        }
        None => {
            writable_dir(&dir, "the default scratch directory", "name one you can write in with --scratch DIR")?;
        }
    }
    Ok(dir)
}

/// The scratch root `--scratch` (`given`) names, or the default one under the system temp dir, without trying it as
/// [`scratch_root`] does: for a command that has tried it already (check reads its file system) or must make nothing
/// (a dry run).
pub(crate) fn scratch_dir(given: Option<&Path>) -> PathBuf {
    given.map_or_else(|| std::env::temp_dir().join("culprit-scratch"), Path::to_path_buf)
}

/// Makes sure `dir` is a directory this process can write in, creating it when it is missing, so a bad `--scratch` or
/// `--result-root` stops the command before the first run instead of failing every run, or only after all of them.
/// `what` names the flag (or the default) in messages; `advice` says what to do instead. Returns whether it created
/// the directory.
fn writable_dir(dir: &Path, what: &str, advice: &str) -> Result<bool> {
    let shown = dir.display();
    let created = match std::fs::metadata(dir) {
        Ok(meta) if !meta.is_dir() => bail!("{what} {shown}: this is a file, not a directory; {advice}"),
        Ok(_) => false,
        // A path under a file (`FILE/sub`) is one that cannot be created either.
        Err(error) if matches!(error.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) => {
            if let Err(error) = std::fs::create_dir_all(dir) {
                bail!("{what} {shown}: the directory does not exist and cannot be created ({error}); {advice}");
            }
            true
        }
        Err(error) => bail!("{what} {shown}: cannot look at it ({error}); {advice}"),
    };
    // Writing is tried rather than the mode bits read: root passes any mode check, and /proc or a read-only mount
    // refuse whatever the bits say.
    let probe = dir.join(format!(".culprit-probe-{}", std::process::id()));
    match std::fs::create_dir(&probe) {
        Ok(()) => {
            let _ = std::fs::remove_dir(&probe);
            Ok(created)
        }
        Err(error) => bail!("{what} {shown}: culprit cannot write in this directory ({error}); {advice}"),
    }
}

/// Runs a plan: round-robin over the jobs, every finished run saved before the next starts.
pub fn execute(store: &mut dyn Store, plan: &RunPlan, json: bool) -> Result<std::process::ExitCode> {
    let interrupt = interrupt_flag();
    let total = plan.jobs.len() as u64 * plan.repeat as u64;
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} runs, ETA {eta} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    crate::note!(
        "culprit: {} atomic job(s) x {} run(s) on {} at {} into {}",
        plan.jobs.len(),
        plan.repeat,
        plan.context.machine.hostname,
        describe_revision(&plan.context.revision),
        store.location()
    );
    let mut records: Vec<Vec<RunRecord>> = plan.jobs.iter().map(|_| Vec::new()).collect();
    // A reader that stops reading (`--json | head -1`) sees less; every run is still measured and stored.
    let mut out = output::Live::default();
    let mut failed = 0usize;
    let mut interrupted = false;
    // The rootfs, kconfig and compiler levels of the result root for jobs that name none: this machine's, as lkp's
    // local runs fill them in (read once; only a --result-root needs them).
    let local_build = match plan.result_root {
        Some(_) => culprit_store::result_root::local_build(),
        None => culprit_store::Build::default(),
    };
    // Monitor failures already told, per job, so a perf that fails every run is said once, not a hundred times.
    let mut told = std::collections::BTreeSet::new();
    'rounds: for round in 0..plan.repeat {
        for (j, job) in plan.jobs.iter().enumerate() {
            bar.set_message(format!("{} (run {} of {})", job.run.job_name, round + 1, plan.repeat));
            let Some(record) = executor::run_once(&job.run, &plan.context, &interrupt) else {
                interrupted = true;
                break 'rounds;
            };
            // A run also written into a result root is stored under the key written beside it, so that importing
            // the root into this store finds the run rather than storing it twice.
            let import_key = plan.result_root.as_ref().map(|_| culprit_store::result_root::own_import_key(&record));
            let save = culprit_store::SaveOptions { import_key: import_key.clone(), ..Default::default() };
            let saved = store.save_run_with(&record, &save).with_context(|| {
                format!(
                    "cannot save the run of {} in {}; runs saved before it are kept",
                    job.run.job_name,
                    store.location()
                )
            })?;
            if let (Some(root), Some(key)) = (&plan.result_root, &import_key) {
                culprit_store::result_root::write_stored_run(root, &job.path_params, &record, &local_build, key)
                    .with_context(|| format!("cannot write the lkp result root under {}", root.display()))?;
            }
            if let culprit_core::model::RunOutcome::Failed { reason } = &record.outcome {
                failed += 1;
                bar.suspend(|| crate::note!("culprit: run {} of {} failed: {reason}", round + 1, job.run.job_name));
            }
            // A monitor failure leaves the run ok but without the data asked for (a profile, perf counters): say so
            // now rather than only in the stored stderr.
            for failure in executor::monitor_failures(&record) {
                if told.insert((j, failure.to_string())) {
                    bar.suspend(|| {
                        crate::note!(
                            "culprit: run {} of {}: {failure}; the run is kept without that monitor's data",
                            round + 1,
                            job.run.job_name
                        )
                    });
                }
            }
            if json {
                // A failed run's line says why and gives its stored id, which `culprit results --run ID` shows in
                // full; `"ok": false` alone left a script to guess both.
                let failure = match &record.outcome {
                    culprit_core::model::RunOutcome::Failed { reason } => Some(reason.as_str()),
                    _ => None,
                };
                let line = serde_json::json!({
                    "job": record.job_name, "job_id": record.job_id, "run": round + 1, "id": saved.run_id().0,
                    "ok": record.outcome.is_ok(), "failure": failure, "metrics": record.metrics,
                });
                bar.suspend(|| out.println(&line.to_string()))?;
            }
            records[j].push(record);
            bar.inc(1);
            if interrupt.load(Ordering::SeqCst) {
                interrupted = true;
                break 'rounds;
            }
        }
    }
    bar.finish_and_clear();
    if let Some(root) = &plan.result_root {
        for job in &plan.jobs {
            let dir = culprit_store::result_root::revision_dir(
                root,
                &job.run.testcase,
                &job.path_params,
                &plan.context.machine.hostname,
                &culprit_store::result_root::build_levels(&job.run.params, &local_build),
                plan.context.revision.key(),
            );
            if dir.exists() {
                culprit_store::result_root::write_revision_summary(&dir)?;
            }
        }
    }
    if !json {
        out.print(&render_summary(&plan.jobs, &records, &plan.context.machine))?;
    }
    let stored: usize = records.iter().map(Vec::len).sum();
    if interrupted {
        crate::note!("culprit: interrupted; {stored} finished run(s) are stored, the run in flight was discarded");
        return Ok(std::process::ExitCode::from(130));
    }
    if failed > 0 {
        let db = crate::cmd::report::db_option(store);
        crate::note!(
            "culprit: {failed} of {stored} run(s) failed; they are stored with their reasons (culprit{db} results \
             --failures)"
        );
        return Ok(std::process::ExitCode::from(1));
    }
    Ok(std::process::ExitCode::SUCCESS)
}

fn describe_revision(r: &Revision) -> String {
    match r {
        Revision::Commit { sha, describe, subject } => format!(
            "commit {} {}{}",
            abbreviate(sha, 12),
            describe.as_deref().map(|d| format!("({d}) ")).unwrap_or_default(),
            subject.as_deref().map(|s| format!("\"{s}\"")).unwrap_or_default()
        ),
        Revision::Label { name } => format!("label {name}"),
    }
}

/// The monitor metrics the run summary shows next to the program's own; iowait included, so the CPU shares add up
/// to about 100%. The time monitor's wall time (`<program>.time.elapsed_time`) is shown too.
const SUMMARY_METRICS: [&str; 5] =
    ["vmstat.cpu.us", "vmstat.cpu.sy", "vmstat.cpu.id", "vmstat.cpu.wa", "vmstat.system.cs"];

/// Per job: each program metric and a few key monitor metrics as mean ± %stddev over the successful runs.
pub fn render_summary(jobs: &[PlannedJob], records: &[Vec<RunRecord>], machine: &Machine) -> String {
    let mut out = String::new();
    out.push_str(&format!("on test machine: {}\n", machine.describe()));
    for (job, runs) in jobs.iter().zip(records) {
        let ok: Vec<&RunRecord> = runs.iter().filter(|r| r.outcome.is_ok()).collect();
        out.push_str(&format!("\n{}  ({} ok, {} failed)\n", job.run.job_name, ok.len(), runs.len() - ok.len()));
        let mut names: Vec<&String> = ok.iter().flat_map(|r| r.metrics.keys()).collect();
        names.sort();
        names.dedup();
        let prefix = format!("{}.", job.run.program.name());
        // The program's own metrics, not the time monitor's rows named after it but its wall time.
        let own = |n: &str| {
            n.starts_with(&prefix) && culprit_core::model::time_field(n).is_none_or(|field| field == "elapsed_time")
        };
        let shown = names.into_iter().filter(|n| own(n) || SUMMARY_METRICS.contains(&n.as_str()));
        for name in shown {
            let values: Vec<f64> = ok.iter().filter_map(|r| r.metrics.get(name).copied()).collect();
            let Some(s) = stats::summarize(&values) else { continue };
            // One run has no spread to show, and a mean of 0 no relative one: "± 0.0%" would claim a perfectly
            // steady metric. The spread is lkp's %stddev (the population one, divided by n), as the compare table
            // prints it for the same runs.
            let spread = match stats::population_stddev(&values) {
                Some(deviation) if s.mean != 0.0 => format!(" ±{:>5.1}%", 100.0 * deviation / s.mean.abs()),
                _ => " ".repeat(8),
            };
            out.push_str(&format!("  {:>16}{spread}  {}\n", format_mean(s.mean), name));
        }
        if job.run.program.name() == "stress-ng" {
            out.push_str(&idle_stressors_text(&ok, job.run.program.raw_output_name()));
        }
        for r in runs.iter().filter(|r| !r.outcome.is_ok()) {
            if let culprit_core::model::RunOutcome::Failed { reason } = &r.outcome {
                out.push_str(&format!("  failed run: {reason}\n"));
            }
        }
    }
    out
}

/// A line per stressor that did no work in some of the ok runs, with what stress-ng said of it: such a run is ok and
/// stores only `stress-ng.<stressor>.fail: 1`, as lkp's parser does, so the summary showed "(1 ok, 0 failed)" over a
/// stressor stress-ng had skipped (lkp's dccp job on a kernel without DCCP), and its comparisons compare nothing of it.
fn idle_stressors_text(ok: &[&RunRecord], raw_output: &str) -> String {
    let mut idle: BTreeMap<&str, (usize, Option<&str>)> = BTreeMap::new();
    for run in ok {
        let output = run.raw_outputs.iter().find(|o| o.name == raw_output);
        let text = output.and_then(|o| std::str::from_utf8(&o.content).ok()).unwrap_or_default();
        for stressor in culprit_run::program::stress_ng::idle_stressors(&run.metrics) {
            let entry = idle.entry(stressor).or_default();
            entry.0 += 1;
            entry.1 = entry.1.or_else(|| culprit_run::program::stress_ng::why_idle(text, stressor));
        }
    }
    let mut text = String::new();
    for (stressor, (runs, why)) in idle {
        text.push_str(&format!(
            "  {stressor} did no work in {runs} of {} ok run(s), which store only stress-ng.{stressor}.fail (as lkp's \
             parser does){}\n",
            ok.len(),
            why.map(|line| format!(": {line}")).unwrap_or_default()
        ));
    }
    text
}

fn format_mean(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else if x.abs() >= 1000.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_need_the_machine_lacks_is_said_with_what_it_has() {
        let params = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        let memory = (47u64 << 30) / 2; // 23.5G, which lkp's hosts call 24G
        let job = params(&[("need_memory", "24G"), ("need_cpu", "2"), ("need_node", "2"), ("runtime", "300s")]);
        assert_eq!(unmet_needs(&job, memory, 2, Some(1)), ["need_node: 2 (here 1 NUMA node)"]);
        let job = params(&[("need_memory", "30G"), ("need_cpu", "4")]);
        let unmet = ["need_memory: 30G (here 23.5G)", "need_cpu: 4 (here 2 CPUs)"];
        assert_eq!(unmet_needs(&job, memory, 2, None), unmet);
        // What Culprit cannot read, or a machine it knows nothing of, is no need it can say is unmet.
        assert!(unmet_needs(&params(&[("need_memory", "lots"), ("need_node", "2")]), memory, 2, None).is_empty());
    }

    #[test]
    fn a_misspelt_param_is_told_the_name_it_most_likely_meant() {
        // (key, owner, suggestion): near misses, a transposition (two edits), and keys too far from any name.
        let cases = [
            ("captur", "command", Some("capture")),
            ("runtme", "fio", Some("runtime")),
            ("nr_thread", "stress-ng", Some("nr_threads")),
            ("rw", "fio", Some("rw")),
            ("rt", "fio", None),
            ("bss", "fio", Some("bs")),
            ("xyzzy", "fio", None),
            ("completely_unrelated", "command", None),
        ];
        for (key, owner, expected) in cases {
            assert_eq!(nearest_name(key, &accepted_names(owner)), expected, "{key} for {owner}");
        }
    }

    #[test]
    fn a_malformed_duration_is_said_to_be_one_even_where_no_program_takes_the_key() {
        let plan = |text: &str| match plan_text(text, "fl.yaml", 2, Some(&[]), Path::new(".")) {
            Ok(_) => panic!("planned: {text}"),
            Err(error) => format!("{error:#}"),
        };
        let command = "suite: fl\ncommand:\n  cmd: echo 1\n";
        let top = plan(&format!("runtime: 3q\n{command}"));
        assert!(top.starts_with("fl.yaml:1: runtime: '3q' is not a duration: "), "{top}");
        assert!(top.contains("; besides, top-level param 'runtime' is not used by any selected program"), "{top}");
        let nested = plan(&format!("{command}  runtime: 3q\n"));
        assert!(nested.starts_with("fl.yaml:4: runtime: '3q' is not a duration: "), "{nested}");
        // A well-formed duration is no duration problem; the key is still one no program uses.
        let unused = plan(&format!("runtime: 3s\n{command}"));
        assert!(unused.starts_with("fl.yaml:1: top-level param 'runtime' is not used"), "{unused}");
        // A key no program takes as a duration is not read as one.
        let other = plan(&format!("wobble: 3q\n{command}"));
        assert!(other.starts_with("fl.yaml:1: top-level param 'wobble' is not used"), "{other}");
    }

    #[test]
    fn flattens_nested_params() {
        let map: serde_yaml::Mapping =
            serde_yaml::from_str("cmd: echo 1\nexecutions: 3\ncapture:\n  ops: 'ops: ([0-9]+)'\n").unwrap();
        let mut out = BTreeMap::new();
        flatten("", &map, &mut out);
        assert_eq!(out["cmd"], "echo 1");
        assert_eq!(out["executions"], "3");
        assert_eq!(out["capture.ops"], "ops: ([0-9]+)");
    }

    #[test]
    fn sysbench_test_selects_the_lkp_program() {
        let mut p = BTreeMap::from([("test".to_string(), "cpu".to_string())]);
        assert_eq!(resolve_program("sysbench", &mut p).unwrap().name(), "sysbench-cpu");
        assert!(!p.contains_key("test"));
        assert!(resolve_program("sysbench", &mut BTreeMap::new()).is_err());
        assert!(accepts("sysbench", "cpu_max_prime"));
        assert!(accepts("fio", "bs"));
        assert!(!accepts("fio", "blocksize"));
    }
}
