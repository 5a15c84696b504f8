//! `culprit split JOB -o DIR`: one atomic job file per matrix point, named `<job>-<path_params>.yaml` as lkp does.
//!
//! Every atomic job is checked as `culprit run` would plan it (programs, params, monitors and their options), except
//! that the programs need not be installed here, and all of them before any file is written: a key of the job file
//! that nothing takes (a misspelt param, program or monitor) or a value no program reads is reported with its line and
//! nothing is written. A job that Culprit's program refuses only for what lkp does and Culprit does not (fio's
//! `raw_disk`, `nr_instances: 2`) is written all the same, as lkp's split-job writes it, with one warning that
//! `culprit run` refuses it and why.
//!
//! A job of a program Culprit does not run (lkp's will-it-scale, unixbench, ...) is no mistake: split is lkp's
//! split-job, and its atomic jobs are for lkp to run. Such jobs are written all the same, with a warning once for each
//! such program; a job that selects a program Culprit runs is still checked in full.

use crate::cli::SplitArgs;
use crate::output;
use anyhow::{bail, Context, Result};

pub fn run(args: &SplitArgs) -> Result<()> {
    let path = &args.job;
    let text = crate::job_file::read_job_file(path)?;
    let file = crate::job_file::parse(&text, &path.display().to_string())?;
    let jobs = file.expand()?;
    let taken = crate::cmd::run::params_taken_in(&jobs);
    let nr_cpu = culprit_run::machine::this_machine().nr_cpu;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    // Each program culprit run does not run is warned of once, at its first place, however many jobs select it.
    let mut not_run: Vec<(String, culprit_job::Place)> = Vec::new();
    let mut refused_by_run: Vec<(String, anyhow::Error)> = Vec::new();
    for job in &jobs {
        if let Some(keys) = crate::cmd::run::programs_not_run(job) {
            for (key, place) in keys {
                if !not_run.iter().any(|(seen, _)| *seen == key) {
                    not_run.push((key, place));
                }
            }
            continue;
        }
        match crate::cmd::run::check_atomic(job, &file.stem(), nr_cpu, &cwd, &taken) {
            Ok(()) => {}
            // A job lkp runs and Culprit's program refuses (fio's raw_disk on a device-dax namespace, nr_instances
            // above 1) is still one of the file's atomic jobs: lkp's split-job writes it, and a split that wrote
            // nothing left an lkp user with no jobs at all (QA 47). `culprit run` refuses it with the same reason.
            Err(error) if only_lkp_runs(&error) => refused_by_run.push((job.name(), error)),
            // Anything else (a key nothing takes, a value no program reads) is a mistake in the file, for lkp too:
            // nothing is written.
            Err(error) => {
                return Err(error.context(format!(
                    "atomic job {} is not one culprit run would take; nothing was written",
                    job.name()
                )))
            }
        }
    }
    for (key, place) in &not_run {
        output::note(&format!("culprit: warning: {}", crate::cmd::run::program_not_run_warning(key, place)));
    }
    if let Some((first_name, first)) = refused_by_run.first() {
        let reason = first.chain().map(ToString::to_string).collect::<Vec<_>>().join(": ");
        output::note(&format!(
            "culprit: warning: culprit run refuses {} of the {} atomic jobs written (first {first_name}: {reason}); \
             they are written for lkp to run",
            refused_by_run.len(),
            jobs.len()
        ));
    }
    // The system's own word for a file in the way is a bare "File exists", which names neither the path nor the fix.
    if args.output.exists() && !args.output.is_dir() {
        bail!(
            "{} is a file, not a directory: -o (--output) names the directory to write the atomic job files into",
            args.output.display()
        );
    }
    std::fs::create_dir_all(&args.output)
        .with_context(|| format!("cannot create the output directory {}", args.output.display()))?;
    // The listing is only a view: a reader that closes stdout early (`| head -1`) must not leave the directory with
    // some of the jobs, so a closed pipe stops the listing and not the writing.
    let mut listing = output::Live::default();
    for job in &jobs {
        let out = args.output.join(format!("{}.yaml", job.name()));
        std::fs::write(&out, job.to_yaml()).with_context(|| format!("cannot write {}", out.display()))?;
        listing.println(&out.display().to_string())?;
    }
    Ok(())
}

/// Whether `culprit run` refuses a job only for what lkp does and Culprit does not (see
/// [`culprit_run::program::LKP_ONLY_PARAMS`]).
fn only_lkp_runs(error: &anyhow::Error) -> bool {
    error
        .chain()
        .filter_map(|cause| cause.downcast_ref::<culprit_run::program::ProgramError>())
        .any(culprit_run::program::refuses_what_only_lkp_runs)
}
