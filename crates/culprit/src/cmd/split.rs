//! `culprit split JOB -o DIR`: one atomic job file per matrix point, named `<job>-<path_params>.yaml` as lkp does.
//!
//! Every atomic job is checked as `culprit run` would plan it (programs, params, monitors and their options), except
//! that the programs need not be installed here, and all of them before any file is written: a file split writes is
//! one `culprit run` takes, and a mistake is reported with the job file's line instead of in each written file.
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
    let nr_cpu = culprit_run::machine::this_machine().nr_cpu;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    // Each program culprit run does not run is warned of once, at its first place, however many jobs select it.
    let mut not_run: Vec<(String, culprit_job::Place)> = Vec::new();
    for job in &jobs {
        if let Some(keys) = crate::cmd::run::programs_not_run(job) {
            for (key, place) in keys {
                if !not_run.iter().any(|(seen, _)| *seen == key) {
                    not_run.push((key, place));
                }
            }
            continue;
        }
        crate::cmd::run::check_atomic(job, &file.stem(), nr_cpu, &cwd).with_context(|| {
            format!("atomic job {} is not one culprit run would take; nothing was written", job.name())
        })?;
    }
    for (key, place) in &not_run {
        output::note(&format!("culprit: warning: {}", crate::cmd::run::program_not_run_warning(key, place)));
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
