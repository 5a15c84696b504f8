//! hackbench, the scheduler benchmark from rt-tests (Debian package `rt-tests`), run as lkp's hackbench does.
//!
//! Param mapping (lkp's names):
//!
//! | param | hackbench option | default |
//! |---|---|---|
//! | `nr_threads` | `-g` groups (count or share of CPUs) | nr_cpu |
//! | `mode` | `--process` / `--threads` | `process` |
//! | `ipc` | `--pipe` when `pipe`; sockets otherwise | `socket` |
//! | `fds` | `-f` | `20` |
//! | `datasize` | `-s` | `100` |
//! | `loops` | `-l` | 30000 × nr_cpu / nr_threads, as lkp |
//! | `iterations` | how many times hackbench runs within one run (`8x`) | `1` |
//!
//! Each execution prints `Time: <seconds>`; `culprit_parse::hackbench` turns them into `hackbench.throughput`.

use super::{ParamKind, ParamSpec, Params, Program, ProgramContext, ProgramError, ProgramPlan};
use crate::process::Invocation;

pub struct Hackbench;

const SPECS: &[ParamSpec] = &[
    ParamSpec { name: "nr_threads", kind: ParamKind::CountOrShare, doc: "number of groups, or a share of the CPUs" },
    ParamSpec { name: "mode", kind: ParamKind::OneOf(&["process", "threads"]), doc: "processes or threads" },
    ParamSpec { name: "ipc", kind: ParamKind::OneOf(&["pipe", "socket"]), doc: "pipes or sockets" },
    ParamSpec { name: "fds", kind: ParamKind::Count, doc: "file descriptors (senders/receivers) per group" },
    ParamSpec { name: "datasize", kind: ParamKind::Count, doc: "bytes per message" },
    ParamSpec { name: "loops", kind: ParamKind::Positive, doc: "messages each sender sends" },
    ParamSpec { name: "iterations", kind: ParamKind::Text, doc: "executions per run, e.g. 8x" },
];

impl Program for Hackbench {
    fn name(&self) -> &'static str {
        "hackbench"
    }
    fn binary(&self) -> &'static str {
        "hackbench"
    }
    fn install_hint(&self) -> &'static str {
        "install it with: apt-get install rt-tests"
    }
    fn params(&self) -> &'static [ParamSpec] {
        SPECS
    }

    fn plan(&self, p: &Params, ctx: &ProgramContext) -> Result<ProgramPlan, ProgramError> {
        let groups = p.count_or_share("nr_threads", ctx.nr_cpu)?.unwrap_or(ctx.nr_cpu as u64).max(1);
        let mode = p.one_of("mode", &["process", "threads"])?.unwrap_or_else(|| "process".into());
        let fds = p.count("fds")?.unwrap_or(20).max(1);
        let datasize = p.count("datasize")?.unwrap_or(100);
        let loops = p.positive_count("loops")?.unwrap_or_else(|| (30000 * ctx.nr_cpu as u64 / groups).max(1));
        let mut argv = vec![
            "hackbench".to_string(),
            "-g".into(),
            groups.to_string(),
            "-f".into(),
            fds.to_string(),
            format!("--{mode}"),
        ];
        if p.one_of("ipc", &["pipe", "socket"])?.as_deref() == Some("pipe") {
            argv.push("--pipe".into());
        }
        argv.extend(["-l".to_string(), loops.to_string(), "-s".into(), datasize.to_string()]);
        let mut plan = ProgramPlan::single(Invocation::new(argv));
        plan.executions = p.iterations("iterations")?.unwrap_or(1).clamp(1, u32::MAX as u64) as u32;
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{ctx, params};

    #[test]
    fn maps_groups_mode_ipc_and_loops() {
        let p = params("hackbench", &[("nr_threads", "50%"), ("mode", "threads"), ("ipc", "pipe"), ("iterations", "4x")]);
        let plan = Hackbench.plan(&p, &ctx()).unwrap();
        assert_eq!(plan.main.display(), "hackbench -g 2 -f 20 --threads --pipe -l 60000 -s 100");
        assert_eq!(plan.executions, 4);
        let p = params("hackbench", &[("loops", "100"), ("nr_threads", "1")]);
        assert_eq!(Hackbench.plan(&p, &ctx()).unwrap().main.display(), "hackbench -g 1 -f 20 --process -l 100 -s 100");
    }

    #[test]
    fn zero_groups_is_refused_before_anything_runs_not_run_as_one() {
        // (nr_threads, refused): 0 runs nothing, so the job file is wrong; a small share still rounds up to 1.
        for (value, refused) in [("0", true), ("1", false), ("1%", false), ("0%", false)] {
            let p = params("hackbench", &[("nr_threads", value)]);
            let checked = p.validate(Hackbench.params(), 4);
            assert_eq!(checked.is_err(), refused, "nr_threads: {value} gave {checked:?}");
            if let Err(e) = checked {
                let message = e.to_string();
                assert!(message.contains("nr_threads") && message.contains("100%"), "{message}");
            }
        }
    }
}
