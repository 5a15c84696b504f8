//! `perf bench` (Debian package `linux-perf`), the kernel's own scheduler and system-call benchmarks, run as lkp's
//! `perf-bench-sched-pipe`, `perf-bench-sched-messaging` and `perf-bench-syscall` programs run them.
//!
//! Param mapping (lkp's names):
//!
//! | program | param | `perf bench` option | default |
//! |---|---|---|---|
//! | `perf-bench-sched-pipe` | `loops` | `-l` (lkp writes `10000000ops`; the `ops` is dropped) | perf's 1,000,000 |
//! | | `mode` | `-T` when `threads` | `process` |
//! | `perf-bench-sched-messaging` | `loops` | `--nr_loops` | perf's 100 |
//! | | `groups` | `--group` | perf's 10 |
//! | | `ipc` | `--pipe` when `pipe`; sockets otherwise | `socket` |
//! | | `mode` | `--thread` when `thread` | `process` |
//! | `perf-bench-syscall` | `op` | the benchmark: `basic` (getppid), or what the installed perf offers | required |
//! | | `loop` | `--loop` | perf's 10,000,000 |
//!
//! The modes are spelt as lkp spells them: `threads` for the pipe benchmark, `thread` for messaging. A syscall
//! benchmark the installed perf lacks (lkp's job asks for `fork`, `execve` and `getpgid`, which perf 6.1 does not
//! have) is refused before any run, naming those it has. `culprit_parse::perf_bench` reads the output.

use super::{ParamKind, ParamSpec, Params, Program, ProgramContext, ProgramError, ProgramPlan};
use crate::process::{run, Invocation};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// One `perf bench` benchmark under lkp's program name.
pub struct PerfBench {
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    SchedPipe,
    SchedMessaging,
    Syscall,
}

pub static SCHED_PIPE: PerfBench = PerfBench { kind: Kind::SchedPipe };
pub static SCHED_MESSAGING: PerfBench = PerfBench { kind: Kind::SchedMessaging };
pub static SYSCALL: PerfBench = PerfBench { kind: Kind::Syscall };

const PIPE_SPECS: &[ParamSpec] = &[
    ParamSpec { name: "loops", kind: ParamKind::Text, doc: "pipe round trips, e.g. 1000000 or lkp's 10000000ops" },
    ParamSpec { name: "mode", kind: ParamKind::OneOf(&["process", "threads"]), doc: "two processes or two threads" },
];

const MESSAGING_SPECS: &[ParamSpec] = &[
    ParamSpec { name: "loops", kind: ParamKind::Positive, doc: "messages each sender sends" },
    ParamSpec { name: "groups", kind: ParamKind::Positive, doc: "groups of 20 senders and 20 receivers" },
    ParamSpec { name: "ipc", kind: ParamKind::OneOf(&["pipe", "socket"]), doc: "pipes or socket pairs" },
    ParamSpec { name: "mode", kind: ParamKind::OneOf(&["process", "thread"]), doc: "processes or threads" },
];

const SYSCALL_SPECS: &[ParamSpec] = &[
    ParamSpec { name: "op", kind: ParamKind::Text, doc: "the syscall benchmark: basic, or what `perf bench syscall` lists" },
    ParamSpec { name: "loop", kind: ParamKind::Positive, doc: "system calls made" },
];

impl Program for PerfBench {
    fn name(&self) -> &'static str {
        match self.kind {
            Kind::SchedPipe => "perf-bench-sched-pipe",
            Kind::SchedMessaging => "perf-bench-sched-messaging",
            Kind::Syscall => "perf-bench-syscall",
        }
    }
    fn binary(&self) -> &'static str {
        "perf"
    }
    fn install_hint(&self) -> &'static str {
        "install it with: apt-get install linux-perf"
    }
    fn params(&self) -> &'static [ParamSpec] {
        match self.kind {
            Kind::SchedPipe => PIPE_SPECS,
            Kind::SchedMessaging => MESSAGING_SPECS,
            Kind::Syscall => SYSCALL_SPECS,
        }
    }

    fn plan(&self, p: &Params, _ctx: &ProgramContext) -> Result<ProgramPlan, ProgramError> {
        let mut argv: Vec<String> = vec!["perf".into(), "bench".into()];
        match self.kind {
            Kind::SchedPipe => {
                argv.extend(["sched".into(), "pipe".into()]);
                if let Some(text) = p.get("loops") {
                    let digits = text.trim().strip_suffix("ops").unwrap_or(text.trim());
                    let loops = digits.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| ProgramError::BadParam {
                        program: self.name(),
                        key: "loops".into(),
                        value: text.into(),
                        reason: "expected a whole number of round trips of at least 1, such as 1000000 or 1000000ops"
                            .into(),
                    })?;
                    argv.extend(["-l".into(), loops.to_string()]);
                }
                if p.one_of("mode", &["process", "threads"])?.as_deref() == Some("threads") {
                    argv.push("-T".into());
                }
            }
            Kind::SchedMessaging => {
                argv.extend(["sched".into(), "messaging".into()]);
                if let Some(loops) = p.positive_count("loops")? {
                    argv.extend(["--nr_loops".into(), loops.to_string()]);
                }
                if let Some(groups) = p.positive_count("groups")? {
                    argv.extend(["--group".into(), groups.to_string()]);
                }
                if p.one_of("ipc", &["pipe", "socket"])?.as_deref() == Some("pipe") {
                    argv.push("--pipe".into());
                }
                if p.one_of("mode", &["process", "thread"])?.as_deref() == Some("thread") {
                    argv.push("--thread".into());
                }
            }
            Kind::Syscall => {
                let op = p.get("op").map(str::trim).ok_or_else(|| ProgramError::MissingParam {
                    program: self.name(),
                    key: "op".into(),
                    reason: "name the syscall benchmark, e.g. op: basic (`perf bench syscall` lists them)".into(),
                })?;
                if op.is_empty() || !op.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
                    return Err(ProgramError::BadParam {
                        program: self.name(),
                        key: "op".into(),
                        value: op.into(),
                        reason: "a syscall benchmark's name, such as basic".into(),
                    });
                }
                argv.extend(["syscall".into(), op.to_string()]);
                if let Some(calls) = p.positive_count("loop")? {
                    argv.extend(["--loop".into(), calls.to_string()]);
                }
            }
        }
        let mut main = Invocation::new(argv);
        // perf bench prints its header and results on stdout, and its refusals on stderr; both go to the parser
        // and the stored output, so a refusal is read with what led to it.
        main.merge_stderr = true;
        Ok(ProgramPlan::single(main))
    }

    fn check_offered(&self, p: &Params) -> Result<(), ProgramError> {
        let (Kind::Syscall, Some(op)) = (self.kind, p.get("op").map(str::trim)) else { return Ok(()) };
        let Some(offered) = syscall_benchmarks() else { return Ok(()) };
        if offered.iter().any(|o| o == op) {
            return Ok(());
        }
        Err(ProgramError::BadParam {
            program: self.name(),
            key: "op".into(),
            value: op.into(),
            reason: format!(
                "this perf has no syscall benchmark '{op}'; it has: {} (`perf bench syscall` lists them; newer perf \
                 versions add fork, execve and getpgid)",
                offered.join(", ")
            ),
        })
    }
}

/// The syscall benchmarks the installed perf lists (`perf bench syscall` with no benchmark), asked once; `None`
/// when perf cannot be asked, and the run then says what went wrong.
fn syscall_benchmarks() -> Option<&'static Vec<String>> {
    static OFFERED: OnceLock<Option<Vec<String>>> = OnceLock::new();
    OFFERED
        .get_or_init(|| {
            let list = Invocation::new(["perf", "bench", "syscall"]);
            let finished = run(&list, Some(Duration::from_secs(30)), &Arc::new(AtomicBool::new(false))).ok()?;
            let names = listed_benchmarks(&format!("{}{}", finished.stdout, finished.stderr));
            (!names.is_empty()).then_some(names)
        })
        .as_ref()
}

/// The benchmark names of a `perf bench <collection>` listing: lines `   name: description`.
fn listed_benchmarks(listing: &str) -> Vec<String> {
    listing
        .lines()
        .filter_map(|line| {
            let (name, _) = line.trim().split_once(':')?;
            (!name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'))
                .then(|| name.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{ctx, params};

    /// A program, its job params, and what is expected of them.
    type Case<'a, T> = (&'a PerfBench, &'a [(&'a str, &'a str)], T);

    #[test]
    fn maps_lkps_params_to_perf_bench_options() {
        // (program, params, command line)
        let cases: [Case<&str>; 6] = [
            (&SCHED_PIPE, &[("loops", "10000000ops"), ("mode", "threads")], "perf bench sched pipe -l 10000000 -T"),
            (&SCHED_PIPE, &[("mode", "process")], "perf bench sched pipe"),
            (
                &SCHED_MESSAGING,
                &[("loops", "100"), ("groups", "10"), ("ipc", "pipe"), ("mode", "thread")],
                "perf bench sched messaging --nr_loops 100 --group 10 --pipe --thread",
            ),
            (&SCHED_MESSAGING, &[("ipc", "socket"), ("mode", "process")], "perf bench sched messaging"),
            (&SYSCALL, &[("op", "basic"), ("loop", "100000")], "perf bench syscall basic --loop 100000"),
            (&SYSCALL, &[("op", "basic")], "perf bench syscall basic"),
        ];
        for (program, pairs, want) in cases {
            let plan = program.plan(&params(program.name(), pairs), &ctx()).expect("plans");
            assert_eq!(plan.main.display(), want);
            assert!(plan.main.merge_stderr);
        }
    }

    #[test]
    fn bad_params_are_refused_before_anything_runs() {
        let cases: [Case<()>; 5] = [
            (&SCHED_PIPE, &[("loops", "0ops")], ()),
            (&SCHED_PIPE, &[("loops", "many")], ()),
            (&SCHED_MESSAGING, &[("groups", "0")], ()),
            (&SYSCALL, &[], ()),
            (&SYSCALL, &[("op", "basic; rm -rf /")], ()),
        ];
        for (program, pairs, ()) in cases {
            let p = params(program.name(), pairs);
            let checked = p.validate(program.params(), 4).and_then(|()| program.plan(&p, &ctx()).map(|_| ()));
            assert!(checked.is_err(), "{} {pairs:?} was accepted", program.name());
        }
    }

    #[test]
    fn the_listing_of_a_collection_names_its_benchmarks() {
        // `perf bench syscall` of perf 6.1.
        let listing = "\n        # List of available benchmarks for collection 'syscall':\n\n         basic: Benchmark \
                       for basic getppid(2) calls\n           all: Run all syscall benchmarks\n\n";
        assert_eq!(listed_benchmarks(listing), vec!["basic".to_string(), "all".to_string()]);
    }

    #[test]
    fn a_syscall_benchmark_this_perf_lacks_is_refused_naming_those_it_has() {
        if crate::process::find_in_path("perf").is_none() {
            return;
        }
        let error = SYSCALL.check_offered(&params("perf-bench-syscall", &[("op", "no_such_bench")])).unwrap_err();
        assert!(error.to_string().contains("has no syscall benchmark 'no_such_bench'; it has: basic"), "{error}");
        assert!(SYSCALL.check_offered(&params("perf-bench-syscall", &[("op", "basic")])).is_ok());
    }
}
