//! `culprit split JOB -o DIR`: one atomic job file per matrix point, named `<job>-<path_params>.yaml` as lkp does.
//!
//! Every atomic job is checked as `culprit run` would plan it (programs, params, monitors and their options), except
//! that the programs need not be installed here, and all of them before any file is written: a file split writes is
//! one `culprit run` takes, and a mistake is reported with the job file's line instead of in each written file.

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
    for job in &jobs {
        crate::cmd::run::check_atomic(job, &file.stem(), nr_cpu, &cwd).with_context(|| {
            format!("atomic job {} is not one culprit run would take; nothing was written", job.name())
        })?;
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
