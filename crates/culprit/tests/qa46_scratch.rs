//! QA 46, section 4: the filesystem a run's benchmark files were on (its `--scratch`) is recorded with each run and
//! shown where a perf engineer decides: `results --run`, `compare` (when the sides' differ), and the `report
//! --compare` mail, whose reproduce steps pass each side's `--scratch` and read right for labels.
//!
//! The runs go to a directory under the temp dir and to one under /dev/shm, which on most Linux machines are two
//! filesystems (ext4 or xfs, and tmpfs). Where they are one, the test still checks that each run recorded what the
//! mount table says of its directory, and that nothing claims a difference.

mod common;

use common::{culprit, stdout};
use culprit_core::model::ScratchFilesystem;
use std::path::Path;

/// A command job whose `ops` is read from `ops.txt` in the directory it runs in.
const JOB: &str = "command:\n  cmd: \"cat ops.txt\"\n  capture:\n    ops: 'ops: ([0-9]+)'\n";

/// Runs the job once per value at `label` with its files under `scratch`.
fn run_each(dir: &Path, label: &str, scratch: &Path, values: &[u32]) {
    for value in values {
        common::write(dir, "ops.txt", &format!("ops: {value}\n"));
        let scratch = scratch.to_str().unwrap();
        let args = ["run", "j.yaml", "-n", "1", "--label", label, "--monitors", "none", "--scratch", scratch];
        stdout(&culprit("f.db", &args, dir));
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
fn qa46_4_each_run_records_its_scratch_filesystem_and_compare_and_the_mail_show_them() {
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "j.yaml", JOB);
    let on_disk = dir.path().join("scratch");
    // /dev/shm where the machine has it (tmpfs on Linux); a second directory of the temp dir where it does not, so
    // that the sides at least differ in directory.
    let shm = match Path::new("/dev/shm").is_dir() {
        true => tempfile::Builder::new().prefix("culprit-qa46-").tempdir_in("/dev/shm").unwrap(),
        false => tempfile::tempdir().unwrap(),
    };
    let in_memory = shm.path().join("x");
    run_each(dir.path(), "disk", &on_disk, &[100, 101, 102]);
    run_each(dir.path(), "shm", &in_memory, &[200, 201, 202]);
    let (disk_fs, shm_fs) = (expected(&on_disk), expected(&in_memory));
    if Path::new("/dev/shm").is_dir() {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let canonical = std::fs::canonicalize(&in_memory).unwrap();
        let table = culprit_run::filesystem::filesystem_in_mountinfo(&mountinfo, &canonical.to_string_lossy());
        assert_eq!(table.map(|f| f.fs_type), Some(shm_fs.fs_type.clone()));
    }
    let differ = !disk_fs.same_filesystem(&shm_fs);

    // Each run records its own, in the text and in the JSON of `results --run`.
    let text = stdout(&culprit("f.db", &["results", "--run", "1"], dir.path()));
    let (fs_type, source, path) = (&disk_fs.fs_type, &disk_fs.source, &disk_fs.path);
    let said = format!("scratch filesystem: {fs_type} (source {source}), directory {path}\n");
    assert!(text.contains(&said), "{text}");
    let json = stdout(&culprit("f.db", &["results", "--run", "4", "--json"], dir.path()));
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
    let table = stdout(&culprit("f.db", &["compare", "disk", "shm"], dir.path()));
    // The note is a `#` line, wrapped as `#` lines; joined again, it reads as one.
    assert_eq!(table.contains("\n# the benchmark's files were on "), differ, "{table}");
    assert_eq!(flat(&table.replace("\n# ", " ")).contains(&note), differ, "{table}");
    let json = stdout(&culprit("f.db", &["compare", "disk", "shm", "--json"], dir.path()));
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    match differ {
        true => assert_eq!(json[0]["filesystems_differ"], note.as_str(), "{json}"),
        false => assert!(json[0].get("filesystems_differ").is_none(), "{json}"),
    }

    // The mail states each side's filesystem under the parameters, and its steps run each side where it ran.
    let text = stdout(&culprit("f.db", &["report", "--compare", "disk", "shm"], dir.path()));
    assert!(text.contains("\nthe benchmark's files were on (culprit run --scratch):\n\n"), "{text}");
    let line = |side: &str, f: &ScratchFilesystem| format!("\tfs at {side}: {}, scratch {}\n", f.describe(), f.path);
    assert!(text.contains(&line("disk", &disk_fs)) && text.contains(&line("shm", &shm_fs)), "{text}");
    assert_eq!(flat(&text).contains(&format!("({note})")), differ, "{text}");
    let steps = flat(&text);
    let run_line = |label: &str, f: &ScratchFilesystem| {
        format!("culprit run --db repro.db job.yaml -n 3 --scratch {} --label {label}", f.path)
    };
    assert!(steps.contains(&run_line("disk", &disk_fs)) && steps.contains(&run_line("shm", &shm_fs)), "{text}");
    // Labels name runs, not trees or commits.
    assert!(text.contains("# the base, labelled disk:") && text.contains("# the bad side, labelled shm:"), "{text}");
    assert!(text.contains(" between the runs of:\n\n\nbase label: disk\nlabel: shm\n"), "{text}");
    assert!(!text.contains("tree labelled") && !text.contains("due to commit"), "{text}");
    assert!(text.contains("# save the job at the end of this mail as job.yaml\n"), "{text}");
    assert!(text.contains("\nSave the job below as job.yaml, the file the steps above run:\n"), "{text}");
    let json = stdout(&culprit("f.db", &["report", "--compare", "disk", "shm", "--format", "json"], dir.path()));
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["report"]["scratch"][1]["filesystems"][0]["fs_type"], shm_fs.fs_type.as_str(), "{json}");
}

#[test]
fn qa46_4_runs_in_one_scratch_directory_pass_no_scratch_to_the_steps_and_say_the_filesystem_once() {
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "j.yaml", JOB);
    let scratch = dir.path().join("scratch");
    run_each(dir.path(), "a", &scratch, &[100, 101, 102]);
    run_each(dir.path(), "b", &scratch, &[200, 201, 202]);
    let filesystem = expected(&scratch);
    let text = stdout(&culprit("f.db", &["report", "--compare", "a", "b"], dir.path()));
    let said = format!("\tfs: {}, scratch {}\n", filesystem.describe(), filesystem.path);
    assert!(text.contains(&said), "{text}");
    assert!(!text.contains("fs at ") && !text.contains("--scratch ") && !text.contains("may be the filesystems'"));
    let table = stdout(&culprit("f.db", &["compare", "a", "b"], dir.path()));
    assert!(!table.contains("the benchmark's files were on"), "{table}");
}
