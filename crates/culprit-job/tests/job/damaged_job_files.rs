//! Robustness sweep: every job file of the tests and the example jobs, damaged as an editor or a bad copy damages it,
//! must load and expand without a panic, and a refusal must name the file, and the line when the damage is at one.
//!
//! The damages: every prefix cut at a line boundary, each line deleted, and each line's indentation shifted (two more
//! spaces, or one fewer). Each load runs under `catch_unwind`, so one panic names its file and damage. A file that
//! still loads is expanded and each of its atomic jobs is read the way the run layer reads it (name, id, programs,
//! monitors, timeout, unknown keys, written back as YAML and read again).

use culprit_job::include::FoundInclude;
use culprit_job::JobFile;
use std::cell::RefCell;
use std::fs;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// At most this many failures are listed; past that the list only repeats one defect.
const MAX_LISTED: usize = 40;

/// At most this many atomic jobs of one damaged file are read one by one; the rest only have to expand.
const JOBS_READ: usize = 20;

thread_local! {
    /// Where the last panic of this thread happened, recorded by the hook so the failure list can name it.
    static PANIC_AT: RefCell<String> = const { RefCell::new(String::new()) };
}

fn workspace_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every job file of the sweep, by the name it is given in messages (relative to the workspace) and its path.
fn job_files() -> Vec<(String, PathBuf)> {
    let mut files = Vec::new();
    for dir in ["crates/culprit-job/tests/data/lkp-jobs", "crates/culprit-job/tests/data/split-job", "jobs"] {
        let mut paths: Vec<PathBuf> = fs::read_dir(workspace_dir().join(dir))
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .map(|e| e.expect("directory entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        paths.sort();
        for path in paths {
            let name = format!("{dir}/{}", path.file_name().expect("file name").to_string_lossy());
            files.push((name, path));
        }
    }
    files
}

/// The text's lines, each with its line end.
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// The damaged versions of a text, each with a description and the 1-based line the damage is at (none for a cut,
/// which leaves every remaining line whole).
fn damages(text: &str) -> Vec<(String, Option<usize>, String)> {
    let lines = lines(text);
    let mut out = Vec::new();
    for cut in 0..=lines.len() {
        out.push((format!("cut after line {cut}"), None, lines[..cut].concat()));
    }
    for (i, line) in lines.iter().enumerate() {
        let line_number = i + 1;
        let mut deleted = lines.clone();
        deleted.remove(i);
        out.push((format!("line {line_number} deleted"), Some(line_number), deleted.concat()));
        if line.trim().is_empty() {
            continue;
        }
        let mut deeper = lines.iter().map(|l| l.to_string()).collect::<Vec<_>>();
        deeper[i] = format!("  {line}");
        out.push((format!("line {line_number} indented two more spaces"), Some(line_number), deeper.concat()));
        if let Some(rest) = line.strip_prefix(' ') {
            let mut shallower = lines.iter().map(|l| l.to_string()).collect::<Vec<_>>();
            shallower[i] = rest.to_string();
            out.push((format!("line {line_number} indented one space less"), Some(line_number), shallower.concat()));
        }
    }
    out
}

/// Reads a damaged job file as `culprit run` does, up to its atomic jobs' checks. `Err` is the refusal's message.
fn load(text: &str, name: &str, dir: &Path) -> Result<(), String> {
    let mut find = |included: &str| {
        let path = dir.join(included);
        let text = fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Ok(FoundInclude { name: format!("{}/{included}", Path::new(name).parent().unwrap().display()), text })
    };
    let file = JobFile::parse_with_includes(text, name, &mut find).map_err(|e| e.to_string())?;
    let _ = file.count_atomic_jobs();
    let jobs = file.expand().map_err(|e| e.to_string())?;
    for job in jobs.iter().take(JOBS_READ) {
        let _ = (job.name(), job.id(), job.path_params(), job.testcase(), job.normalized_params());
        let _ = job.monitors();
        // Each param read with each convention: most do not fit (a size is no duration), but a refusal must still
        // name the file, and none may panic.
        for program in job.programs() {
            for key in program.params_text().keys() {
                let results = [
                    program.param_str(key).err(),
                    program.param_share_or_count(key, 2).err(),
                    program.param_duration_secs(key).err(),
                    program.param_size_bytes(key).err(),
                    program.param_iterations(key).err(),
                ];
                if let Some(error) = results.iter().flatten().find(|e| !e.to_string().contains(".yaml")) {
                    return Err(format!("reading param {key} of {}: {error}", program.name));
                }
            }
        }
        job.timeout_secs().map_err(|e| e.to_string())?;
        if let Some(problem) = job.unknown_keys(&|_, _| true).first() {
            return Err(problem.to_string());
        }
        let yaml = job.to_yaml();
        let again = JobFile::parse(&yaml, name).map_err(|e| format!("written back, it does not read again: {e}"))?;
        let again = again.expand().map_err(|e| format!("written back, it does not expand again: {e}"))?;
        if again.len() != 1 || again[0].params() != job.params() {
            return Err(format!("written back, it reads as other params:\n{yaml}"));
        }
    }
    Ok(())
}

/// Whether a refusal's message names a line of a job file: `FILE:LINE:` (or `FILE:LINE:COLUMN:`) at its start.
fn names_a_line(message: &str) -> bool {
    let Some((_, rest)) = message.split_once(".yaml:") else { return false };
    rest.split(':').next().is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

#[test]
fn damaged_job_files_never_panic_and_refusals_name_the_file_and_line() {
    panic::set_hook(Box::new(|info| {
        let at = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
        PANIC_AT.with(|cell| *cell.borrow_mut() = at);
    }));
    let mut failures = Vec::new();
    let mut failed = 0usize;
    let mut fed = 0usize;
    let files = job_files();
    assert!(files.len() > 40, "only {} job files found", files.len());
    for (name, path) in &files {
        let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let dir = path.parent().expect("directory");
        // lkp's split-job fixtures select no program Culprit runs, so they are refused whole, however damaged; only
        // a refusal the damage caused has a line to name.
        let undamaged = load(&text, name, dir).err();
        for (damage, at_line, damaged) in damages(&text) {
            fed += 1;
            let failure = match panic::catch_unwind(AssertUnwindSafe(|| load(&damaged, name, dir))) {
                Err(payload) => {
                    let message = payload
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    let at = PANIC_AT.with(|at| at.borrow().clone());
                    Some(format!("panicked at {at}: {message}"))
                }
                Ok(Ok(())) => None,
                Ok(Err(message)) if !message.contains(".yaml") => Some(format!("refusal names no file: {message}")),
                Ok(Err(message))
                    if at_line.is_some()
                        && !names_a_line(&message)
                        && !whole_file(&message)
                        && undamaged.as_ref() != Some(&message) =>
                {
                    Some(format!("refusal names no line: {message}"))
                }
                Ok(Err(_)) => None,
            };
            if let Some(failure) = failure {
                failed += 1;
                if failures.len() < MAX_LISTED {
                    failures.push(format!("{name}, {damage}: {failure}"));
                }
            }
        }
    }
    let _ = panic::take_hook();
    assert!(failed == 0, "{failed} failures among {fed} damaged job files:\n{}", failures.join("\n\n"));
}

/// Whether a refusal is about the file or a job as a whole, where no one line is at fault: nothing left in it, no
/// program left in a job (its line deleted), a matrix too large, or two documents that make jobs of one name.
fn whole_file(message: &str) -> bool {
    message.contains("the job file is empty")
        || message.contains("the job selects no benchmark program")
        || message.contains("more than the limit of")
        || message.contains("two atomic jobs are both named")
}

/// Every job file with its lines ended CRLF (saved by an editor on Windows), and with a byte order mark before it,
/// gives the same atomic jobs, with the same names and ids, as the file itself, or is refused as it is.
#[test]
fn crlf_line_ends_and_a_byte_order_mark_give_the_same_jobs() {
    let mut failures = Vec::new();
    for (name, path) in job_files() {
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let dir = path.parent().expect("directory");
        let jobs = |text: &str| {
            let mut find = |included: &str| {
                let text = fs::read_to_string(dir.join(included)).map_err(|e| e.to_string())?;
                Ok(FoundInclude { name: included.to_string(), text })
            };
            let file = JobFile::parse_with_includes(text, &name, &mut find).map_err(|e| e.to_string())?;
            let jobs = file.expand().map_err(|e| e.to_string())?;
            Ok::<Vec<(String, String)>, String>(jobs.iter().map(|job| (job.name(), job.id())).collect())
        };
        let want = jobs(&text);
        let crlf = text.replace('\n', "\r\n");
        let variants = [("CRLF line ends", crlf), ("a byte order mark", format!("\u{feff}{text}"))];
        for (damage, changed) in variants {
            let got = jobs(&changed);
            if got.is_ok() != want.is_ok() || (got.is_ok() && got != want) {
                failures.push(format!("{name} with {damage}: {got:?}\nwithout: {want:?}"));
            }
        }
    }
    failures.truncate(MAX_LISTED);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
