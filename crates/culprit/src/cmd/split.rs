//! `culprit split JOB -o DIR`: one atomic job file per matrix point, named `<job>-<path_params>.yaml` as lkp does.

use crate::cli::SplitArgs;
use crate::output;
use anyhow::{bail, Context, Result};
use culprit_job::JobFile;

pub fn run(args: &SplitArgs) -> Result<()> {
    let path = &args.job;
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read job file {}", path.display()))?;
    let file = JobFile::parse(&text, &path.display().to_string())?;
    let jobs = file.expand()?;
    // The system's own word for a file in the way is a bare "File exists", which names neither the path nor the fix.
    if args.output.exists() && !args.output.is_dir() {
        bail!(
            "{} is a file, not a directory: -o (--output) names the directory to write the atomic job files into",
            args.output.display()
        );
    }
    std::fs::create_dir_all(&args.output)
        .with_context(|| format!("cannot create the output directory {}", args.output.display()))?;
    for job in &jobs {
        let out = args.output.join(format!("{}.yaml", job.name()));
        std::fs::write(&out, job.to_yaml()).with_context(|| format!("cannot write {}", out.display()))?;
        output::println(&out.display().to_string())?;
    }
    Ok(())
}
