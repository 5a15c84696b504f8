//! Reading a job file's text as lkp does: its includes (`<<: FILE`) found on disk where lkp-tests looks for them.
//!
//! lkp's `search_file_in_paths` (lib/yaml.rb) looks for an included name, in order: as an absolute path; relative
//! to the including file's directory when it starts with `./` or `../`; in that directory, then in lkp's source tree
//! ($LKP_SRC); and last anywhere below the nearest `jobs` directory above the including file, below that directory
//! itself, and below $LKP_SRC. So `jobs/hackbench/hackbench-cgroup2.yaml` finds its `<<: cgroup2.yaml` in `jobs/`.
//! The same order is kept here, so a job file read from an lkp-tests checkout pastes in the files lkp would.

use culprit_job::include::FoundInclude;
use culprit_job::{JobError, JobFile};
use std::path::{Path, PathBuf};

/// How deep below a directory an included name is looked for: lkp's `jobs/` is two levels deep, and an
/// unbounded walk of a directory named by mistake (a home directory) would take long to say "not found".
const SEARCH_DEPTH: usize = 6;
/// At most this many directories are walked for one name, for the same reason.
const SEARCH_DIRECTORIES: usize = 5_000;

/// Parses the job file `file_name` (its text in hand), with its includes found as lkp finds them, relative to the
/// file's directory and $LKP_SRC.
pub fn parse(text: &str, file_name: &str) -> Result<JobFile, JobError> {
    let directory = match Path::new(file_name).parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let lkp_src = std::env::var_os("LKP_SRC").filter(|value| !value.is_empty()).map(PathBuf::from);
    JobFile::parse_with_includes(text, file_name, &mut |name: &str| {
        let path = find_include(name, &directory, lkp_src.as_deref())?;
        let text = read_text(&path).map_err(|reason| format!("cannot read {reason}"))?;
        // `./x.yaml` for a job file named without a directory is shown as `x.yaml`, as the job file is.
        let shown = path.strip_prefix(".").unwrap_or(&path).display().to_string();
        Ok(FoundInclude { name: shown, text })
    })
}

/// The text of the job file at `path` with its includes pasted in (its own text when it has none), checked to
/// read as a job file: what a bisect session, `check` or `track --follow` keeps as its job, whole, so that a resume
/// or a report's reproduce steps need neither the included files nor their state at that time.
pub fn read_whole(path: &Path) -> anyhow::Result<String> {
    let text = read_job_file(path)?;
    let file = parse(&text, &path.display().to_string())?;
    Ok(file.merged_text().map_or(text.clone(), str::to_string))
}

/// The text of the job file at `path`, for `run`, `split`, `bisect`, `check` and `track --follow`.
pub fn read_job_file(path: &Path) -> anyhow::Result<String> {
    read_text(path).map_err(|reason| anyhow::anyhow!("cannot read job file {reason}"))
}

/// The text of a job file (or a file it includes), or why not, naming the path. A file that is not UTF-8 text (a
/// binary named by mistake, or a job saved in Latin-1) is said to be so at its line, with what to do: the reader's
/// own words, "stream did not contain valid UTF-8", named neither the line nor a fix.
fn read_text(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|error| {
        let valid = error.utf8_error().valid_up_to();
        let bytes = error.as_bytes();
        let line = bytes[..valid].iter().filter(|&&b| b == b'\n').count() + 1;
        format!(
            "{}:{line}: byte 0x{:02x} is not UTF-8 text, and a job file is YAML, which is; if this is the job file, \
             save it as UTF-8, else give the job file",
            path.display(),
            bytes[valid]
        )
    })
}

/// Where lkp would find the included `name` for a job file in `directory`, or where it was looked for.
fn find_include(name: &str, directory: &Path, lkp_src: Option<&Path>) -> Result<PathBuf, String> {
    let path = Path::new(name);
    if path.is_absolute() {
        return path.is_file().then(|| path.to_path_buf()).ok_or_else(|| format!("{name} does not exist"));
    }
    if name.starts_with("./") || name.starts_with("../") {
        let joined = directory.join(path);
        return joined.is_file().then_some(joined).ok_or_else(|| format!("{name} is not in {}", directory.display()));
    }
    let flat: Vec<&Path> = std::iter::once(directory).chain(lkp_src).collect();
    if let Some(found) = flat.iter().map(|dir| dir.join(path)).find(|candidate| candidate.is_file()) {
        return Ok(found);
    }
    let jobs_root = if name.starts_with("jobs/") { None } else { jobs_ancestor(directory) };
    let mut below: Vec<PathBuf> = jobs_root.into_iter().collect();
    for dir in &flat {
        if !below.iter().any(|seen| seen == dir) {
            below.push(dir.to_path_buf());
        }
    }
    if let Some(found) = below.iter().find_map(|root| find_below(root, path)) {
        return Ok(found);
    }
    let listed: Vec<String> = below.iter().map(|dir| dir.display().to_string()).collect();
    let lkp_hint = match lkp_src {
        Some(_) => "",
        None => "; set LKP_SRC to an lkp-tests checkout to look there too",
    };
    Err(format!(
        "not found in or below {}{lkp_hint}, or copy it next to the job file",
        listed.join(", ")
    ))
}

/// The nearest directory named `jobs` at or above `directory` (made absolute, so `.` has ancestors too).
fn jobs_ancestor(directory: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(directory).ok()?;
    absolute.ancestors().find(|dir| dir.file_name().is_some_and(|n| n == "jobs")).map(Path::to_path_buf)
}

/// The first file `root/**/name`, breadth first and in name order within a directory, so the shallowest match
/// wins; hidden directories are not entered.
fn find_below(root: &Path, name: &Path) -> Option<PathBuf> {
    let mut level = vec![root.to_path_buf()];
    let mut walked = 0;
    for _ in 0..=SEARCH_DEPTH {
        let mut next = Vec::new();
        for dir in &level {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
            walked += 1;
            if walked > SEARCH_DIRECTORIES {
                return None;
            }
            let Ok(entries) = std::fs::read_dir(dir) else { continue };
            let mut children: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
                .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
                .map(|entry| entry.path())
                .collect();
            children.sort();
            next.extend(children);
        }
        if next.is_empty() {
            break;
        }
        level = next;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tree shaped like lkp-tests': jobs/cgroup2.yaml, jobs/hackbench/{hackbench,hackbench-cgroup2}.yaml.
    fn lkp_tree() -> tempfile::TempDir {
        let root = tempfile::tempdir().expect("temp dir");
        let jobs = root.path().join("jobs");
        std::fs::create_dir_all(jobs.join("hackbench")).expect("dirs");
        std::fs::write(jobs.join("cgroup2.yaml"), "cgroup2:\n  pids.max: 10000\n").expect("write");
        std::fs::write(jobs.join("hackbench/hackbench.yaml"), "suite: hackbench\nhackbench:\n  mode: process\n")
            .expect("write");
        root
    }

    #[test]
    fn an_include_is_found_where_lkp_finds_it() {
        let root = lkp_tree();
        let jobs = root.path().join("jobs");
        let hackbench = jobs.join("hackbench");
        // Next to the job file, then below the nearest jobs directory.
        assert_eq!(find_include("hackbench.yaml", &hackbench, None), Ok(hackbench.join("hackbench.yaml")));
        assert_eq!(find_include("cgroup2.yaml", &hackbench, None), Ok(jobs.join("cgroup2.yaml")));
        // A path of its own, relative to the job file.
        assert_eq!(find_include("../cgroup2.yaml", &hackbench, None), Ok(hackbench.join("../cgroup2.yaml")));
        // $LKP_SRC, for a job file kept elsewhere.
        let elsewhere = tempfile::tempdir().expect("temp dir");
        let in_lkp = find_include("jobs/cgroup2.yaml", elsewhere.path(), Some(root.path()));
        assert_eq!(in_lkp, Ok(root.path().join("jobs/cgroup2.yaml")));
        assert_eq!(find_include("cgroup2.yaml", elsewhere.path(), Some(root.path())), Ok(jobs.join("cgroup2.yaml")));
        let missing = find_include("cgroup2.yaml", elsewhere.path(), None).err().unwrap_or_default();
        assert!(missing.contains("not found in or below") && missing.contains("set LKP_SRC"), "{missing}");
    }

    #[test]
    fn an_include_inside_an_included_file_is_refused_at_its_line() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("a.yaml"), "suite: x\n<<: b.yaml\n").expect("write");
        std::fs::write(dir.path().join("b.yaml"), "hackbench:\n").expect("write");
        let top = dir.path().join("top.yaml");
        let error = parse("<<: a.yaml\n", &top.display().to_string()).err().map(|e| e.to_string()).unwrap_or_default();
        let included = dir.path().join("a.yaml");
        let at = format!("{}:2: lkp's '<< : FILE' include inside an included file", included.display());
        assert!(error.starts_with(&at) && error.contains("one level deep"), "{error}");
    }

    #[test]
    fn a_job_file_of_two_includes_reads_as_lkps() {
        let root = lkp_tree();
        let file = root.path().join("jobs/hackbench/hackbench-cgroup2.yaml");
        let job = parse("<<: cgroup2.yaml\n<<: hackbench.yaml\n", &file.display().to_string()).expect("parses");
        let atomic = job.expand().expect("expands");
        assert_eq!(atomic.len(), 1);
        // cgroup2 is a setting of the test box, which counts in the name as in lkp.
        assert_eq!(atomic[0].name(), "hackbench-cgroup2-process-10000");
        assert_eq!(job.included().len(), 2);
        // The whole text reads as the same job without the included files.
        std::fs::write(&file, "<<: cgroup2.yaml\n<<: hackbench.yaml\n").expect("write");
        let whole = read_whole(&file).expect("reads");
        assert!(!whole.contains("<<") && whole.contains("pids.max: 10000"), "{whole}");
        let alone = JobFile::parse(&whole, "elsewhere/hackbench-cgroup2.yaml").expect("parses").expand().expect("jobs");
        assert_eq!(alone[0].id(), atomic[0].id());
        // A key of an included file is placed in that file.
        let place = atomic[0].place(&["hackbench", "mode"]);
        assert_eq!(place.to_string(), format!("{}:3", root.path().join("jobs/hackbench/hackbench.yaml").display()));
    }
}
