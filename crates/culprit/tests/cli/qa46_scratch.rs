//! QA 46, section 4, and QA 51, finding 2: the filesystem a run's benchmark files were on is recorded with each run
//! and shown where a perf engineer decides: `results --run`, `compare` (when the sides' differ), and the `report
//! --compare` mail. A `command` job runs in its working directory, not in a `--scratch` directory, so its runs
//! record the working directory's filesystem, and the mail's steps say where to start each side rather than passing
//! a `--scratch` that would not move it (QA 51 ran one side from tmpfs with `--scratch` on ext4, and the mail said
//! the opposite of what the command's own `pwd` showed).
//!
//! The sides run from a directory under the temp dir and from one under /dev/shm, which on most Linux machines are
//! two filesystems (ext4 or xfs, and tmpfs). Where they are one, the test still checks that each run recorded what
//! the mount table says of its directory, and that nothing claims a difference.

use crate::common;

use crate::common::{culprit, stdout};
use culprit_core::model::ScratchFilesystem;
use std::path::Path;

/// A command job whose `ops` is read from `ops.txt` in the directory it runs in.
const JOB: &str = "command:\n  cmd: \"cat ops.txt\"\n  capture:\n    ops: 'ops: ([0-9]+)'\n";

/// Runs the job once per value at `label`, started from `cwd` (which holds its `ops.txt`) with its scratch directory
/// under `scratch`, into the store `db`.
fn run_each(db: &Path, cwd: &Path, label: &str, scratch: &Path, values: &[u32]) {
    for value in values {
        common::write(cwd, "ops.txt", &format!("ops: {value}\n"));
        let (job, scratch) = (db.with_file_name("j.yaml"), scratch.to_str().unwrap());
        let job = job.to_str().unwrap();
        let args = ["run", job, "-n", "1", "--label", label, "--monitors", "none", "--scratch", scratch];
        stdout(&culprit(db, &args, cwd));
    }
}

/// Text with runs of whitespace (a wrapped line's break, a broken command's ` \`) as one space.
fn flat(text: &str) -> String {
    text.replace(" \\\n", " ").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The filesystem the mount table names for `dir`, as the test expects a run there to record it.
fn expected(dir: &Path) -> ScratchFilesystem {
    culprit_run::filesystem::filesystem_of(dir).unwrap_or_else(|| panic!("no filesystem found for {}", dir.display()))
}

#[test]
fn qa46_4_each_run_records_its_filesystem_and_compare_and_the_mail_show_them() {
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "j.yaml", JOB);
    let db = dir.path().join("f.db");
    // /dev/shm where the machine has it (tmpfs on Linux); a second directory of the temp dir where it does not, so
    // that the sides at least differ in directory.
    let shm = match Path::new("/dev/shm").is_dir() {
        true => tempfile::Builder::new().prefix("culprit-qa46-").tempdir_in("/dev/shm").unwrap(),
        false => tempfile::tempdir().unwrap(),
    };
    // Each side starts from one filesystem with its `--scratch` on the other, as QA 51 ran them: the command runs
    // where it starts, and that is what counts.
    let (on_disk, in_memory) = (dir.path().join("disk"), shm.path().join("w"));
    std::fs::create_dir_all(&on_disk).unwrap();
    std::fs::create_dir_all(&in_memory).unwrap();
    run_each(&db, &on_disk, "disk", &shm.path().join("x"), &[100, 101, 102]);
    run_each(&db, &in_memory, "shm", &dir.path().join("scratch"), &[200, 201, 202]);
    let (disk_fs, shm_fs) = (expected(&on_disk), expected(&in_memory));
    if Path::new("/dev/shm").is_dir() {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let canonical = std::fs::canonicalize(&in_memory).unwrap();
        let table = culprit_run::filesystem::filesystem_in_mountinfo(&mountinfo, &canonical.to_string_lossy());
        assert_eq!(table.map(|f| f.fs_type), Some(shm_fs.fs_type.clone()));
    }
    let differ = !disk_fs.same_filesystem(&shm_fs);
    let here = dir.path();

    // Each run records where it ran, in the text and in the JSON of `results --run`.
    let text = stdout(&culprit(&db, &["results", "--run", "1"], here));
    let (fs_type, source, path) = (&disk_fs.fs_type, &disk_fs.source, &disk_fs.path);
    let said = format!("scratch filesystem: {fs_type} (source {source}), directory {path}\n");
    assert!(text.contains(&said), "{text}");
    let json = stdout(&culprit(&db, &["results", "--run", "4", "--json"], here));
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["scratch"]["fs_type"], shm_fs.fs_type.as_str(), "{json}");
    assert_eq!(json["scratch"]["source"], shm_fs.source.as_str(), "{json}");
    assert_eq!(json["scratch"]["path"], std::fs::canonicalize(&in_memory).unwrap().to_str().unwrap(), "{json}");

    // compare says so under the table when the filesystems differ, and only then; its JSON too.
    let note = format!(
        "the benchmark's files were on {} at disk, on {} at shm; the change may be the filesystems', not the \
         revisions'",
        disk_fs.describe(),
        shm_fs.describe()
    );
    let table = stdout(&culprit(&db, &["compare", "disk", "shm"], here));
    // The note is a `#` line, wrapped as `#` lines; joined again, it reads as one.
    assert_eq!(table.contains("\n# the benchmark's files were on "), differ, "{table}");
    assert_eq!(flat(&table.replace("\n# ", " ")).contains(&note), differ, "{table}");
    let json = stdout(&culprit(&db, &["compare", "disk", "shm", "--json"], here));
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    match differ {
        true => assert_eq!(json[0]["filesystems_differ"], note.as_str(), "{json}"),
        false => assert!(json[0].get("filesystems_differ").is_none(), "{json}"),
    }

    // The mail states where each side ran, under the parameters, and its steps say where to start each side:
    // `--scratch` would not move a command.
    let text = stdout(&culprit(&db, &["report", "--compare", "disk", "shm"], here));
    assert!(text.contains("\nthe command ran in (its working directory):\n\n"), "{text}");
    let line = |side: &str, f: &ScratchFilesystem| format!("\tfs at {side}: {}, directory {}\n", f.describe(), f.path);
    assert!(text.contains(&line("disk", &disk_fs)) && text.contains(&line("shm", &shm_fs)), "{text}");
    assert_eq!(flat(&text).contains(&format!("({note})")), differ, "{text}");
    let steps = flat(&text);
    assert!(!steps.contains("--scratch"), "{text}");
    for (label, f) in [("disk", &disk_fs), ("shm", &shm_fs)] {
        let started = format!("# its runs ran in {}: the command runs where culprit run starts", f.path);
        let run = format!("culprit run --db repro.db job.yaml -n 3 --label {label}");
        let (at_start, at_run) = (steps.find(&started), steps.find(&run));
        assert!(at_start.is_some() && at_start < at_run, "{label}: {text}");
    }
    // Labels name runs, not trees or commits; and a change of no known direction is no bad side (QA 59).
    assert!(text.contains("# the base, labelled disk:") && text.contains("# the other side, labelled shm:"), "{text}");
    assert!(text.contains(" between the runs of:\n\n\nbase label: disk\nlabel: shm\n"), "{text}");
    assert!(!text.contains("tree labelled") && !text.contains("due to commit"), "{text}");
    assert!(text.contains("# save the job at the end of this mail as job.yaml\n"), "{text}");
    assert!(text.contains("\nSave the job below as job.yaml, the file the steps above run:\n"), "{text}");
    let json = stdout(&culprit(&db, &["report", "--compare", "disk", "shm", "--format", "json"], here));
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["report"]["scratch"][1]["filesystems"][0]["fs_type"], shm_fs.fs_type.as_str(), "{json}");
    assert_eq!(json["report"]["scratch"][1]["working_directory"], true, "{json}");
}

#[test]
fn qa46_4_runs_from_one_directory_say_the_filesystem_once_and_the_steps_say_nothing_of_it() {
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "j.yaml", JOB);
    let db = dir.path().join("f.db");
    // The second side's `--scratch` differs, which does not matter to a command started from the same directory.
    run_each(&db, dir.path(), "a", &dir.path().join("scratch"), &[100, 101, 102]);
    run_each(&db, dir.path(), "b", &dir.path().join("elsewhere"), &[200, 201, 202]);
    let filesystem = expected(dir.path());
    let text = stdout(&culprit(&db, &["report", "--compare", "a", "b"], dir.path()));
    let said = format!("\tfs: {}, directory {}\n", filesystem.describe(), filesystem.path);
    assert!(text.contains(&said), "{text}");
    assert!(!text.contains("fs at ") && !text.contains("--scratch ") && !text.contains("may be the filesystems'"));
    assert!(!text.contains("# its runs ran in"), "{text}");
    let table = stdout(&culprit(&db, &["compare", "a", "b"], dir.path()));
    assert!(!table.contains("the benchmark's files were on"), "{table}");
}
