//! fio, the flexible I/O tester (Debian package `fio`), run as lkp's fio-basic does.
//!
//! Param mapping (lkp's `fio-setup-basic` names and defaults):
//!
//! | param | fio option | default |
//! |---|---|---|
//! | `rw` | `--rw` | `write` |
//! | `bs` | `--bs` | `4k` |
//! | `ioengine` | `--ioengine` | `sync` |
//! | `iodepth` | `--iodepth` | `32` |
//! | `direct` | `--direct` (`direct`/`true`/`1` → 1) | `0` |
//! | `test_size` (required) | `--size` = test_size / nr_task, per task | |
//! | `nr_task` | `--numjobs` (count or share of CPUs, `50%`) | `1` |
//! | `runtime` | `--runtime` (seconds) | `300` |
//! | `time_based` | `--time_based` when set (`tb`, `true`, `1`) | off |
//!
//! Always: `--output-format=json --group_reporting --directory=<scratch dir> --name=culprit-fio`. The JSON goes to
//! stdout and is parsed by `culprit_parse::fio` into `fio.write_iops`, `fio.write_clat_mean_ns`, ... A `test_size`
//! larger than the scratch directory's file system has free is refused before the first run (`culprit run`).

use super::{ParamKind, ParamSpec, Params, Program, ProgramContext, ProgramError, ProgramPlan};
use crate::process::Invocation;

pub struct Fio;

const SPECS: &[ParamSpec] = &[
    ParamSpec { name: "rw", kind: ParamKind::OneOf(&["read", "write", "randread", "randwrite", "rw", "randrw", "readwrite", "trim", "randtrim"]), doc: "I/O pattern" },
    ParamSpec { name: "bs", kind: ParamKind::Size, doc: "block size" },
    ParamSpec { name: "ioengine", kind: ParamKind::Text, doc: "fio ioengine: sync, psync, libaio, io_uring, mmap, ..." },
    ParamSpec { name: "iodepth", kind: ParamKind::Count, doc: "queue depth for async engines" },
    ParamSpec { name: "direct", kind: ParamKind::Text, doc: "O_DIRECT: direct/true/1 or 0" },
    ParamSpec { name: "test_size", kind: ParamKind::Size, doc: "total bytes over all tasks" },
    ParamSpec { name: "nr_task", kind: ParamKind::CountOrShare, doc: "number of fio jobs, or a share of the CPUs" },
    ParamSpec { name: "runtime", kind: ParamKind::Duration, doc: "run time" },
    ParamSpec { name: "time_based", kind: ParamKind::Text, doc: "keep running for runtime even after test_size is done (tb)" },
];

fn truthy(v: &str) -> bool {
    matches!(v, "1" | "true" | "yes" | "direct" | "tb" | "time_based")
}

impl Program for Fio {
    fn scratch_bytes(&self, params: &Params) -> Option<u64> {
        params.size_bytes("test_size").ok().flatten()
    }
    fn name(&self) -> &'static str {
        "fio"
    }
    fn raw_output_name(&self) -> &'static str {
        "fio.output"
    }
    fn binary(&self) -> &'static str {
        "fio"
    }
    fn install_hint(&self) -> &'static str {
        "install it with: apt-get install fio"
    }
    fn params(&self) -> &'static [ParamSpec] {
        SPECS
    }

    fn plan(&self, p: &Params, ctx: &ProgramContext) -> Result<ProgramPlan, ProgramError> {
        let test_size = p.size_bytes("test_size")?.ok_or_else(|| ProgramError::MissingParam {
            program: "fio",
            key: "test_size".into(),
            reason: "fio needs the total size of its test files, e.g. test_size: 64M".into(),
        })?;
        let nr_task = p.count_or_share("nr_task", ctx.nr_cpu)?.unwrap_or(1).max(1);
        let per_task = test_size / nr_task;
        if per_task == 0 {
            return Err(ProgramError::BadParam {
                program: "fio",
                key: "test_size".into(),
                value: test_size.to_string(),
                reason: format!("is smaller than one byte per task for nr_task {nr_task}"),
            });
        }
        let zero = "reads a zero runtime as no limit, running until test_size is done";
        let runtime = p.run_time_secs("runtime", zero)?.unwrap_or(300);
        let mut argv = vec![
            "fio".to_string(),
            "--output-format=json".into(),
            "--group_reporting".into(),
            "--name=culprit-fio".into(),
            format!("--directory={}", ctx.scratch_dir.display()),
            format!("--rw={}", p.get("rw").unwrap_or("write")),
            format!("--bs={}", p.get("bs").unwrap_or("4k")),
            format!("--ioengine={}", p.get("ioengine").unwrap_or("sync")),
            format!("--iodepth={}", p.count("iodepth")?.unwrap_or(32)),
            format!("--direct={}", u8::from(p.get("direct").is_some_and(truthy))),
            format!("--size={per_task}"),
            format!("--numjobs={nr_task}"),
            format!("--runtime={runtime}"),
        ];
        if p.get("time_based").is_some_and(truthy) {
            argv.push("--time_based".into());
        }
        Ok(ProgramPlan::single(Invocation::new(argv)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{ctx, params};

    #[test]
    fn maps_lkp_params_to_fio_options() {
        let p = params("fio", &[("rw", "randwrite"), ("bs", "4k"), ("test_size", "64M"), ("nr_task", "50%"), ("runtime", "5s"), ("time_based", "tb"), ("ioengine", "libaio")]);
        let plan = Fio.plan(&p, &ctx()).unwrap();
        let line = plan.main.display();
        assert!(line.contains("--rw=randwrite"), "{line}");
        assert!(line.contains("--numjobs=2"), "{line}");
        assert!(line.contains(&format!("--size={}", 32 * 1024 * 1024)), "{line}");
        assert!(line.contains("--runtime=5"), "{line}");
        assert!(line.contains("--time_based"), "{line}");
        assert!(line.contains("--ioengine=libaio"), "{line}");
        assert!(line.contains("--directory=/tmp/culprit-scratch"), "{line}");
    }

    #[test]
    fn test_size_is_required_and_validated() {
        let err = Fio.plan(&params("fio", &[("rw", "read")]), &ctx()).unwrap_err();
        assert!(err.to_string().contains("test_size"), "{err}");
        let p = params("fio", &[("test_size", "lots")]);
        assert!(p.validate(Fio.params(), 4).unwrap_err().to_string().contains("test_size"));
        let p = params("fio", &[("rw", "sideways"), ("test_size", "1M")]);
        assert!(p.validate(Fio.params(), 4).unwrap_err().to_string().contains("randwrite"));
        let p = params("fio", &[("blocksize", "4k")]);
        assert!(matches!(p.validate(Fio.params(), 4), Err(ProgramError::UnknownParam { .. })));
    }
}
