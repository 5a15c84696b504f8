//! fs_mark, the synchronous-write file system benchmark, run as lkp's fsmark does.
//!
//! fs_mark is not packaged in Debian: build it from its upstream project (https://sourceforge.net/projects/fsmark/)
//! and put `fs_mark` in `PATH`. Param mapping (lkp's names):
//!
//! | param | fs_mark option | default |
//! |---|---|---|
//! | `nr_threads` | one `-d <scratch>/<i>` per thread (at most 64, as lkp) | nr_cpu |
//! | `filesize` | `-s` bytes (`0` creates empty files) | `4k` |
//! | `test_size` | `-n` files per thread, as lkp counts them (below) | `filesize` × 1000 × nr_threads |
//! | `nr_directories` | `-D` (`16` or lkp's `16d`) | `16`; see below |
//! | `nr_files_per_directory` | `-N` (`256` or lkp's `256fpd`) | `256` |
//! | `sync_method` | `-S` (NoSync 0, fsyncBeforeClose 1, syncFsync 2, PostReverseFsync 3, syncPostReverseFsync 4, PostFsync 5, syncPostFsync 6) | `fsyncBeforeClose` |
//! | `iterations` | `-L` loops | `1` |
//!
//! The file count is lkp's: a file smaller than 4k still takes a 4k block on a file system without inline data, so
//! lkp counts files of at least 4k against `test_size`, splits the count over the `-L` loops, and keeps it within
//! fs_mark's own limit of a million files per thread. lkp's jobs write `nr_directories: 16d` and
//! `nr_files_per_directory: 256fpd`; its script drops the unit, and so does this mapping. A job that gives
//! `nr_files_per_directory` without `nr_directories` gets lkp's directories: the files per thread divided by the
//! files per directory (at least 2, which fs_mark requires).
//!
//! `culprit_parse::fsmark` turns the table into `fsmark.files_per_sec` and `fsmark.app_overhead`.

use super::{ParamKind, ParamSpec, Params, Program, ProgramContext, ProgramError, ProgramPlan};
use crate::process::Invocation;

pub struct Fsmark;

/// The size lkp counts a smaller file as when it divides `test_size` into files: one 4k block.
const MIN_FILE_BYTES: u64 = 4096;

/// fs_mark's limit on the files per thread (`-n`), which lkp keeps to as well.
const MAX_FILES: u64 = 1_000_000;

/// A whole number written bare or with lkp's `unit` after it (`16d`, `256fpd`), as lkp's fsmark script reads it.
fn count_in(p: &Params, key: &str, unit: &str) -> Result<Option<u64>, ProgramError> {
    p.get(key)
        .map(|v| {
            let digits = v.trim().strip_suffix(unit).unwrap_or(v.trim());
            digits.parse::<u64>().map_err(|_| p.bad(key, v, format!("expected a whole number such as 16 or 16{unit}")))
        })
        .transpose()
}

const SYNC_METHODS: &[&str] =
    &["NoSync", "fsyncBeforeClose", "syncFsync", "PostReverseFsync", "syncPostReverseFsync", "PostFsync", "syncPostFsync"];

const SPECS: &[ParamSpec] = &[
    ParamSpec { name: "nr_threads", kind: ParamKind::CountOrShare, doc: "writer threads, or a share of the CPUs" },
    ParamSpec { name: "filesize", kind: ParamKind::Size, doc: "bytes per file" },
    ParamSpec { name: "test_size", kind: ParamKind::Size, doc: "bytes written in total" },
    // Text, not Count: lkp's jobs give these with a unit (`16d`, `256fpd`), which `count_in` drops when planning.
    ParamSpec { name: "nr_directories", kind: ParamKind::Text, doc: "subdirectories (16 or 16d)" },
    ParamSpec {
        name: "nr_files_per_directory",
        kind: ParamKind::Text,
        doc: "files per subdirectory before moving on (256 or 256fpd)",
    },
    ParamSpec { name: "sync_method", kind: ParamKind::OneOf(SYNC_METHODS), doc: "how files are synced" },
    ParamSpec { name: "iterations", kind: ParamKind::Text, doc: "loops" },
];

impl Program for Fsmark {
    fn scratch_bytes(&self, params: &Params) -> Option<(&'static str, u64)> {
        params.size_bytes("test_size").ok().flatten().map(|bytes| ("test_size", bytes))
    }
    fn name(&self) -> &'static str {
        "fsmark"
    }
    fn binary(&self) -> &'static str {
        "fs_mark"
    }
    fn install_hint(&self) -> &'static str {
        "fs_mark is not packaged in Debian: build it from https://sourceforge.net/projects/fsmark/ and put fs_mark in PATH"
    }
    fn params(&self) -> &'static [ParamSpec] {
        SPECS
    }

    fn plan(&self, p: &Params, ctx: &ProgramContext) -> Result<ProgramPlan, ProgramError> {
        let threads = p.count_or_share("nr_threads", ctx.nr_cpu)?.unwrap_or(ctx.nr_cpu as u64).clamp(1, 64);
        // A filesize of 0 is fs_mark's `-s 0`, a test of file creation alone (lkp passes it on too).
        let filesize = p.size_bytes("filesize")?.unwrap_or(4096);
        let loops = p.iterations("iterations")?.unwrap_or(1);
        let test_size = p.size_bytes("test_size")?.unwrap_or(filesize.max(1) * 1000 * threads);
        let files_per_thread = (test_size / filesize.max(MIN_FILE_BYTES) / threads / loops).clamp(1, MAX_FILES);
        let sync = p.one_of("sync_method", SYNC_METHODS)?.unwrap_or_else(|| "fsyncBeforeClose".into());
        let sync_number = SYNC_METHODS.iter().position(|m| *m == sync).unwrap_or(1);
        // lkp's stress-journal jobs give `nr_files_per_directory: 1fpd` alone, and lkp's script then spreads each
        // thread's files over as many directories as that leaves (one file each); 16 directories of many files
        // each stressed the journal far less. fs_mark refuses fewer than 2 directories, which lkp's division can
        // give for a small test_size.
        let per_directory = count_in(p, "nr_files_per_directory", "fpd")?;
        let directories = match (count_in(p, "nr_directories", "d")?, per_directory) {
            (Some(directories), _) => directories,
            (None, Some(per_directory)) => (files_per_thread / per_directory.max(1)).max(2),
            (None, None) => 16,
        };
        let mut setup = Vec::new();
        let mut argv = vec!["fs_mark".to_string()];
        for i in 1..=threads {
            let dir = ctx.scratch_dir.join(i.to_string());
            setup.push(Invocation::new(["mkdir".to_string(), "-p".into(), dir.display().to_string()]));
            argv.extend(["-d".to_string(), dir.display().to_string()]);
        }
        argv.extend([
            "-n".to_string(),
            files_per_thread.to_string(),
            "-s".into(),
            filesize.to_string(),
            "-S".into(),
            sync_number.to_string(),
            "-D".into(),
            directories.to_string(),
            "-N".into(),
            per_directory.unwrap_or(256).to_string(),
            "-L".into(),
            loops.to_string(),
        ]);
        Ok(ProgramPlan { setup, ..ProgramPlan::single(Invocation::new(argv)) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{ctx, params};

    #[test]
    fn lkp_fsmark_mapping() {
        let p = params("fsmark", &[("nr_threads", "2"), ("filesize", "8K"), ("test_size", "16M"), ("sync_method", "NoSync")]);
        let plan = Fsmark.plan(&p, &ctx()).unwrap();
        assert_eq!(plan.setup.len(), 2);
        assert_eq!(
            plan.main.display(),
            "fs_mark -d /tmp/culprit-scratch/1 -d /tmp/culprit-scratch/2 -n 1024 -s 8192 -S 0 -D 16 -N 256 -L 1"
        );
        let p = params("fsmark", &[("sync_method", "sometimes")]);
        assert!(Fsmark.plan(&p, &ctx()).unwrap_err().to_string().contains("fsyncBeforeClose"));
    }

    #[test]
    fn lkp_fsmark_job_counts_small_files_as_lkp_does() {
        // lkp's jobs/fsmark/fsmark.yaml: 9-byte files, 256M over 4 loops, directories given with their units. lkp
        // asks for 256M / 4k / 2 threads / 4 loops = 8192 files a thread; 256M / 9 bytes / 2 was 14,913,080, more
        // than fs_mark takes.
        let lkp = [("nr_threads", "2"), ("filesize", "9B"), ("test_size", "256M"), ("iterations", "4")];
        let units = [("nr_directories", "16d"), ("nr_files_per_directory", "256fpd"), ("sync_method", "NoSync")];
        let p = params("fsmark", &[&lkp[..], &units[..]].concat());
        let plan = Fsmark.plan(&p, &ctx()).unwrap();
        assert!(plan.main.display().ends_with("-n 8192 -s 9 -S 0 -D 16 -N 256 -L 4"), "{}", plan.main.display());
        // Dave Chinner's `-s 0`, files created empty, and a test size past fs_mark's limit of a million a thread.
        let p = params("fsmark", &[("nr_threads", "1"), ("filesize", "0"), ("test_size", "100G")]);
        assert!(Fsmark.plan(&p, &ctx()).unwrap().main.display().ends_with("-n 1000000 -s 0 -S 1 -D 16 -N 256 -L 1"));
        // lkp's fsmark-stress-journal-1hdd.yaml: one 4K file a directory, the directories as many as the files.
        let journal = [("nr_threads", "1t"), ("filesize", "4K"), ("test_size", "100M"), ("iterations", "1x")];
        let p = params("fsmark", &[&journal[..], &[("nr_files_per_directory", "1fpd")][..]].concat());
        let line = Fsmark.plan(&p, &ctx()).unwrap().main.display();
        assert!(line.ends_with("-n 25600 -s 4096 -S 1 -D 25600 -N 1 -L 1"), "{line}");
        let p = params("fsmark", &[("nr_directories", "16dirs")]);
        let error = Fsmark.plan(&p, &ctx()).unwrap_err().to_string();
        assert!(error.contains("'16dirs'") && error.contains("16 or 16d"), "{error}");
    }
}
