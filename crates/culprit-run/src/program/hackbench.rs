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
//! | `runtime` | without `iterations`: hackbench runs again until this much time has passed (`20s`) | |
//!
//! lkp runs hackbench `iterations` times, else again and again until `runtime` (600 s by default) has passed; here
//! the default is one execution, so a job that gives neither runs hackbench once. With `runtime`, the executions
//! run in one `sh -c` loop that starts another while fewer than `runtime` whole seconds have passed, as lkp's
//! `run_for_time` does, and stops at the first that fails.
//! As lkp's `set_env` does, each execution first raises the open-file limit to the descriptors hackbench holds
//! (groups × 2 × fds) plus 2048 (`ulimit -n`): lkp's 1600% jobs in thread mode hold them all in one process, past
//! the usual limit of 1024. The sysctls lkp's `set_env` sets for more than 16384 of them (`kernel.pid_max`,
//! `kernel.threads-max`, `vm.max_map_count`) are not set; `culprit run` names those that differ.
//!
//! Each execution prints `Time: <seconds>`; `culprit_parse::hackbench` turns them into `hackbench.throughput`.

use super::{ParamKind, ParamSpec, Params, Program, ProgramContext, ProgramError, ProgramPlan};
use crate::process::{shell_quote, Invocation};

pub struct Hackbench;

const SPECS: &[ParamSpec] = &[
    ParamSpec { name: "nr_threads", kind: ParamKind::CountOrShare, doc: "number of groups, or a share of the CPUs" },
    ParamSpec { name: "mode", kind: ParamKind::OneOf(&["process", "threads"]), doc: "processes or threads" },
    ParamSpec { name: "ipc", kind: ParamKind::OneOf(&["pipe", "socket"]), doc: "pipes or sockets" },
    ParamSpec { name: "fds", kind: ParamKind::Count, doc: "file descriptors (senders/receivers) per group" },
    ParamSpec { name: "datasize", kind: ParamKind::Count, doc: "bytes per message" },
    ParamSpec { name: "loops", kind: ParamKind::Positive, doc: "messages each sender sends" },
    ParamSpec { name: "iterations", kind: ParamKind::Text, doc: "executions per run, e.g. 8x" },
    ParamSpec { name: "runtime", kind: ParamKind::Duration, doc: "without iterations: run again until it has passed" },
    // lkp's hackbench takes it (per-instance nr_threads for several copies in sibling cgroups); taken here so that a
    // job giving it is refused for the cause, `nr_instances`, or told what one instance runs (see `plan`).
    ParamSpec {
        name: "nr_threads_by_instance",
        kind: ParamKind::Text,
        doc: "lkp's per-instance nr_threads; refused, since Culprit runs one instance",
    },
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

    /// lkp's `set_env` raises `kernel.pid_max` and `kernel.threads-max` to twice the tasks and `vm.max_map_count` to
    /// a hundred times them when there are more than 16384 (half the default pid_max).
    fn lkp_sysctls(&self, p: &Params, nr_cpu: u32) -> Vec<(&'static str, String)> {
        let tasks = descriptors(p, nr_cpu);
        if tasks <= 16384 {
            return Vec::new();
        }
        let twice = tasks.saturating_mul(2).to_string();
        vec![
            ("kernel.pid_max", twice.clone()),
            ("kernel.threads-max", twice),
            ("vm.max_map_count", tasks.saturating_mul(100).to_string()),
        ]
    }

    /// Its groups given as a share of the CPUs, and always its tasks (groups × 2 × fds, what hackbench prints as
    /// `(== 40 tasks)`) and, unless the job gives them, its loops (30000 × nr_cpu / groups): one job ran 40 tasks
    /// under `taskset -c 0` and 80 on two CPUs, under one name (QA 46).
    fn resolved_workload(&self, p: &Params, nr_cpu: u32) -> Vec<(String, u64)> {
        let mut resolved = super::shares_resolved(SPECS, p, nr_cpu);
        resolved.push(("tasks".to_string(), descriptors(p, nr_cpu)));
        if p.get("loops").is_none() {
            let groups = p.count_or_share("nr_threads", nr_cpu).ok().flatten().unwrap_or(u64::from(nr_cpu)).max(1);
            resolved.push(("loops".to_string(), (30000 * u64::from(nr_cpu) / groups).max(1)));
        }
        resolved
    }

    fn plan(&self, p: &Params, ctx: &ProgramContext) -> Result<ProgramPlan, ProgramError> {
        // lkp's instance 1 would take the list's first entry as its nr_threads; Culprit runs nr_threads as given, so
        // the list is refused rather than silently left unused.
        if let Some(list) = p.get("nr_threads_by_instance") {
            return Err(p.bad(
                "nr_threads_by_instance",
                list,
                "lkp gives each of nr_instances copies its own nr_threads from this list, but Culprit runs one \
                 instance; remove it and give the first entry as nr_threads",
            ));
        }
        let groups = p.count_or_share("nr_threads", ctx.nr_cpu)?.unwrap_or(ctx.nr_cpu as u64).max(1);
        let mode = p.one_of("mode", &["process", "threads"])?.unwrap_or_else(|| "process".into());
        let fds = p.count("fds")?.unwrap_or(20).max(1);
        let limit = format!("ulimit -n {}", descriptors(p, ctx.nr_cpu).saturating_add(2048));
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
        let iterations = p.iterations("iterations")?;
        let runtime = p.run_time_secs("runtime", "would run once and stop")?;
        if let (None, Some(seconds)) = (iterations, runtime) {
            return Ok(ProgramPlan::single(run_for_time(&limit, &argv, seconds)));
        }
        let command: Vec<String> = argv.iter().map(|word| shell_quote(word)).collect();
        let mut plan = ProgramPlan::single(Invocation::shell(&format!("{limit}; exec {}", command.join(" "))));
        plan.executions = iterations.unwrap_or(1).clamp(1, u32::MAX as u64) as u32;
        Ok(plan)
    }
}

/// The descriptors lkp's `set_env` counts for hackbench's groups (`tasks`: groups × 2 × fds), with the job's
/// defaults where its params are missing or wrong (which `plan` refuses).
fn descriptors(p: &Params, nr_cpu: u32) -> u64 {
    let groups = p.count_or_share("nr_threads", nr_cpu).ok().flatten().unwrap_or(u64::from(nr_cpu)).max(1);
    let fds = p.count("fds").ok().flatten().unwrap_or(20).max(1);
    groups.saturating_mul(2).saturating_mul(fds)
}

/// lkp's `run_for_time`: hackbench again and again until more than `seconds` whole seconds have passed since the
/// first started, after `limit` (the open-file limit); the first execution that fails ends the loop with its status.
fn run_for_time(limit: &str, argv: &[String], seconds: u64) -> Invocation {
    let command: Vec<String> = argv.iter().map(|word| shell_quote(word)).collect();
    Invocation::shell(&format!(
        "{limit}; start=$(date +%s); while :; do {} || exit $?; [ $(( $(date +%s) - start )) -gt {seconds} ] && \
         break; done",
        command.join(" ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{ctx, params};

    #[test]
    fn qa47_lkps_per_instance_threads_are_refused_for_their_cause() {
        // With several instances, nr_instances is the cause (checked first, as keys are in order); alone, the list.
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[("nr_instances", "2"), ("nr_threads_by_instance", "2")], "nr_instances"),
            (&[("nr_threads_by_instance", "2 1600%")], "nr_threads_by_instance"),
        ];
        for (given, refused) in cases {
            let p = params("hackbench", given);
            let error = p.validate(Hackbench.params(), 4).and_then(|()| Hackbench.plan(&p, &ctx()).map(drop));
            match error {
                Err(ProgramError::BadParam { key, .. }) => assert_eq!(key, *refused, "{given:?}"),
                other => panic!("{given:?}: expected {refused} refused, got {other:?}"),
            }
        }
        assert!(Hackbench.plan(&params("hackbench", &[("nr_threads", "2")]), &ctx()).is_ok());
    }

    #[test]
    fn maps_groups_mode_ipc_and_loops() {
        let p = params("hackbench", &[("nr_threads", "50%"), ("mode", "threads"), ("ipc", "pipe"), ("iterations", "4x")]);
        let plan = Hackbench.plan(&p, &ctx()).unwrap();
        let run = "ulimit -n 2128; exec hackbench -g 2 -f 20 --threads --pipe -l 60000 -s 100";
        assert_eq!(plan.main.argv, ["sh", "-c", run]);
        assert_eq!(plan.executions, 4);
        let p = params("hackbench", &[("loops", "100"), ("nr_threads", "1")]);
        let run = "ulimit -n 2088; exec hackbench -g 1 -f 20 --process -l 100 -s 100";
        assert_eq!(Hackbench.plan(&p, &ctx()).unwrap().main.argv, ["sh", "-c", run]);
    }

    /// lkp's hackbench-local-test gives `runtime: 20s` and no iterations, which lkp reads as "run again until 20 s
    /// have passed"; it was refused as a param hackbench does not use.
    #[test]
    fn runtime_without_iterations_runs_hackbench_again_until_it_has_passed() {
        let p = params("hackbench", &[("nr_threads", "1"), ("loops", "10"), ("runtime", "20s")]);
        let plan = Hackbench.plan(&p, &ctx()).unwrap();
        let loop_line = "ulimit -n 2088; start=$(date +%s); while :; do hackbench -g 1 -f 20 --process -l 10 -s 100 \
                         || exit $?; [ $(( $(date +%s) - start )) -gt 20 ] && break; done";
        assert_eq!(plan.main.argv, ["sh", "-c", loop_line]);
        assert_eq!(plan.executions, 1);
        // With iterations, as in lkp, runtime is not used.
        let p = params("hackbench", &[("iterations", "3x"), ("runtime", "20s")]);
        let plan = Hackbench.plan(&p, &ctx()).unwrap();
        assert_eq!(plan.executions, 3);
        let run = "; exec hackbench -g 4 -f 20 --process -l 30000 -s 100";
        assert!(plan.main.argv[2].ends_with(run), "{:?}", plan.main);
        let p = params("hackbench", &[("runtime", "0")]);
        assert!(Hackbench.plan(&p, &ctx()).is_err());
    }

    /// Three seconds of real hackbench in lkp's loop: several executions, each with its `Time:` line.
    #[test]
    fn runtime_loops_for_real() {
        if crate::process::find_in_path("hackbench").is_none() {
            println!("skipped: hackbench is missing (install rt-tests)");
            return;
        }
        let argv = ["hackbench", "-g", "1", "-f", "2", "-l", "50"].map(String::from);
        let plan = run_for_time("ulimit -n 2052", &argv, 1);
        let started = std::time::Instant::now();
        let finished = crate::process::run(&plan, None, &std::sync::Arc::new(Default::default())).expect("runs");
        assert!(finished.exit.success(), "{}", finished.stderr);
        assert!(started.elapsed().as_secs_f64() >= 1.0, "it stops only after more than a whole second");
        assert!(finished.stdout.matches("Time:").count() >= 2, "{}", finished.stdout);
        let failing = run_for_time("ulimit -n 2052", &["false".to_string()], 5);
        let finished = crate::process::run(&failing, None, &std::sync::Arc::new(Default::default())).expect("runs");
        assert!(!finished.exit.success(), "a failing execution ends the loop with its status");
    }

    /// lkp's `set_env` for more than 16384 descriptors (its 1600% jobs on a machine of 26 CPUs or more).
    #[test]
    fn qa17_the_sysctls_lkp_sets_for_many_groups_are_named() {
        assert!(Hackbench.lkp_sysctls(&params("hackbench", &[("nr_threads", "1600%")]), 4).is_empty());
        let many = Hackbench.lkp_sysctls(&params("hackbench", &[("nr_threads", "1600%")]), 32);
        let expected = [("kernel.pid_max", "40960"), ("kernel.threads-max", "40960"), ("vm.max_map_count", "2048000")];
        assert_eq!(many, expected.map(|(name, value)| (name, value.to_string())));
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
