//! Writing to stdout where a closed pipe (`culprit results | head`) ends the program quietly instead of failing.

use std::io::{self, Write};

/// Signals that stdout was closed by the reader; `main` turns it into a successful exit.
#[derive(Debug)]
pub struct BrokenPipe;

impl std::fmt::Display for BrokenPipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stdout closed")
    }
}

impl std::error::Error for BrokenPipe {}

/// Prints `text` to stdout as is; a broken pipe becomes [`BrokenPipe`].
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Err(BrokenPipe.into()),
        Err(e) => Err(e.into()),
    }
}

/// Prints `text` followed by a newline.
pub fn println(text: &str) -> anyhow::Result<()> {
    let mut s = String::with_capacity(text.len() + 1);
    s.push_str(text);
    s.push('\n');
    print(&s)
}

/// Stdout for a command that prints while it works (`culprit run --json`, `culprit split -o DIR`). Its output is only
/// a view of the work: a reader that closes the pipe early (`| head -1`) must not cancel the measurements or the
/// files still to write, so after a broken pipe the rest of the text is dropped and the command carries on, and it
/// still exits as its work decides (0, or the code of failed runs).
#[derive(Debug, Default)]
pub struct Live {
    closed: bool,
}

impl Live {
    /// Prints `text` followed by a newline, or nothing once the reader has closed stdout. Other write errors (a full
    /// disk behind a redirection) are still errors: the user asked for that output in that file.
    pub fn println(&mut self, text: &str) -> anyhow::Result<()> {
        self.print(&format!("{text}\n"))
    }

    /// Prints `text` as is, or nothing once the reader has closed stdout.
    pub fn print(&mut self, text: &str) -> anyhow::Result<()> {
        if self.closed {
            return Ok(());
        }
        match print(text) {
            Err(e) if e.downcast_ref::<BrokenPipe>().is_some() => {
                self.closed = true;
                Ok(())
            }
            other => other,
        }
    }
}

/// Writes a line to stderr and ignores a failure: `eprintln!` panics when stderr is a closed pipe (`2>&1 | head`),
/// which in the middle of a long command would abandon its work for the sake of a progress note.
pub fn note(text: &str) {
    let mut err = io::stderr().lock();
    let _ = writeln!(err, "{text}");
}

/// `note!("...{x}")`: [`note`] with `format!` arguments, the drop-in for `eprintln!` in commands that work long.
#[macro_export]
macro_rules! note {
    ($($arg:tt)*) => {
        $crate::output::note(&format!($($arg)*))
    };
}

/// An error as the user reads it, one line each: `culprit: <what went wrong>`, then `  caused by: <cause>` for each
/// cause. `main` prints it to stderr; the dashboard shows the same text on its error pages.
pub fn error_text(err: &anyhow::Error) -> String {
    let mut text = format!("culprit: {err}\n");
    for cause in err.chain().skip(1) {
        text.push_str(&format!("  caused by: {cause}\n"));
    }
    text
}

/// Runs `f` with standard output sent to standard error: a bisect that `track --bisect` or a follow pass starts
/// prints its outcome, which there is progress and must not mix with their own output on standard output (JSON
/// with `--json`).
pub fn to_stderr<T>(f: impl FnOnce() -> T) -> T {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    // SAFETY: fcntl/dup2/close on the process's own standard descriptors; on failure output simply stays where it
    // was. The saved copy of standard output is close-on-exec: the builds and benchmarks started meanwhile must not
    // inherit it, or a daemon one of them leaves behind would keep the reader of culprit's output (`| jq`) waiting.
    let saved = unsafe { libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3) };
    if saved >= 0 {
        unsafe { libc::dup2(2, 1) };
    }
    let result = f();
    let _ = std::io::stdout().flush();
    if saved >= 0 {
        unsafe {
            libc::dup2(saved, 1);
            libc::close(saved);
        }
    }
    result
}

/// Gives one JSON object the names every command's JSON uses (`docs/json.md`): `machine` is the machine's name
/// (a serialized `Machine` object moves to `machine_facts`, its `hostname` becoming `machine`), and the job's name
/// is `job` (not `job_name`). Only the object's own keys are renamed, never those of maps inside it (metric names),
/// and each keeps its place, so the JSON reads in the order it did.
pub fn common_names(value: &mut serde_json::Value) {
    let Some(object) = value.as_object_mut() else { return };
    if let Some(place) = object.keys().position(|key| key == "machine") {
        let facts = object.shift_remove("machine").unwrap_or_default();
        match facts.get("hostname").cloned() {
            Some(name) => {
                object.shift_insert(place, "machine".to_string(), name);
                object.shift_insert(place + 1, "machine_facts".to_string(), facts);
            }
            None => {
                object.shift_insert(place, "machine".to_string(), facts);
            }
        }
    }
    if let Some(place) = object.keys().position(|key| key == "job_name") {
        let name = object.shift_remove("job_name").unwrap_or_default();
        object.shift_insert(place, "job".to_string(), name);
    }
}

#[cfg(test)]
mod tests {
    use super::common_names;

    #[test]
    fn common_names_rename_the_object_s_own_keys_in_place_and_leave_inner_maps_alone() {
        let mut run = serde_json::json!({
            "job_id": "0123",
            "job_name": "job-true",
            "machine": { "hostname": "box1", "nr_cpu": 2 },
            "metrics": { "job_name": 1.0, "machine": 2.0 },
        });
        common_names(&mut run);
        let keys: Vec<&str> = run.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["job_id", "job", "machine", "machine_facts", "metrics"]);
        assert_eq!(run["machine"], "box1");
        assert_eq!(run["machine_facts"]["nr_cpu"], 2);
        assert_eq!(run["metrics"], serde_json::json!({ "job_name": 1.0, "machine": 2.0 }));
        // An object whose machine is a name already stays as it is.
        let mut named = serde_json::json!({ "machine": "box2", "job": "j" });
        common_names(&mut named);
        assert_eq!(named, serde_json::json!({ "machine": "box2", "job": "j" }));
    }
}
