//! fs_mark, the synchronous-write file system benchmark, run as lkp's fsmark does.
//!
//! fs_mark is not packaged in Debian: build it from its upstream project (https://sourceforge.net/projects/fsmark/)
//! and put `fs_mark` in `PATH`. Param mapping (lkp's names):
//!
//! | param | fs_mark option | default |
//! |---|---|---|
//! | `nr_threads` | one `-d <scratch>/<i>` per thread (at most 64, as lkp) | nr_cpu |
//! | `filesize` | `-s` bytes | `4k` |
//! | `test_size` | `-n` files per thread = test_size / filesize / nr_threads | `filesize` × 1000 × nr_threads |
//! | `nr_directories` | `-D` | `16` |
//! | `nr_files_per_directory` | `-N` | `256` |
//! | `sync_method` | `-S` (NoSync 0, fsyncBeforeClose 1, syncFsync 2, PostReverseFsync 3, syncPostReverseFsync 4, PostFsync 5, syncPostFsync 6) | `fsyncBeforeClose` |
//! | `iterations` | `-L` loops | `1` |
//!
//! `culprit_parse::fsmark` turns the table into `fsmark.files_per_sec` and `fsmark.app_overhead`.

use super::{ParamKind, ParamSpec, Params, Program, ProgramContext, ProgramError, ProgramPlan};
use crate::process::Invocation;

pub struct Fsmark;

const SYNC_METHODS: &[&str] =
    &["NoSync", "fsyncBeforeClose", "syncFsync", "PostReverseFsync", "syncPostReverseFsync", "PostFsync", "syncPostFsync"];

const SPECS: &[ParamSpec] = &[
    ParamSpec { name: "nr_threads", kind: ParamKind::CountOrShare, doc: "writer threads, or a share of the CPUs" },
    ParamSpec { name: "filesize", kind: ParamKind::Size, doc: "bytes per file" },
    ParamSpec { name: "test_size", kind: ParamKind::Size, doc: "bytes written in total" },
    ParamSpec { name: "nr_directories", kind: ParamKind::Count, doc: "subdirectories" },
    ParamSpec { name: "nr_files_per_directory", kind: ParamKind::Count, doc: "files per subdirectory before moving on" },
    ParamSpec { name: "sync_method", kind: ParamKind::OneOf(SYNC_METHODS), doc: "how files are synced" },
    ParamSpec { name: "iterations", kind: ParamKind::Text, doc: "loops" },
];

impl Program for Fsmark {
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
        let filesize = p.size_bytes("filesize")?.unwrap_or(4096).max(1);
        let test_size = p.size_bytes("test_size")?.unwrap_or(filesize * 1000 * threads);
        let files_per_thread = (test_size / filesize / threads).max(1);
        let sync = p.one_of("sync_method", SYNC_METHODS)?.unwrap_or_else(|| "fsyncBeforeClose".into());
        let sync_number = SYNC_METHODS.iter().position(|m| *m == sync).unwrap_or(1);
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
            p.count("nr_directories")?.unwrap_or(16).to_string(),
            "-N".into(),
            p.count("nr_files_per_directory")?.unwrap_or(256).to_string(),
            "-L".into(),
            p.iterations("iterations")?.unwrap_or(1).to_string(),
        ]);
        Ok(ProgramPlan { setup, main: Invocation::new(argv), executions: 1, warmups: 0, cleanup: Vec::new() })
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
}
