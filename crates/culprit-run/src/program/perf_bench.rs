//! `perf bench` (Debian package `linux-perf`), the kernel's own scheduler, system-call, futex and memory
//! benchmarks, run as lkp's `perf-bench-sched-pipe`, `perf-bench-sched-messaging`, `perf-bench-syscall`,
//! `perf-bench-futex`, `perf-bench-mem` and `perf-bench-numa-mem` programs run them.
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
//! | `perf-bench-futex` | `test` | the benchmark: `hash`, `wake`, `wake-parallel`, `requeue`, `lock-pi` | required |
//! | | `nr_task` | `--threads` (count or share of CPUs) | perf's: one per CPU |
//! | | `runtime` | `--runtime` in seconds, for `hash` and `lock-pi` only (as lkp) | perf's 10 s |
//! | | `shared` | `--shared` when yes (lkp's jobs write `shared` or nothing) | private futexes |
//! | | `futexes` (hash), `nwakes` (wake), `nwakers` (wake-parallel), `nrequeue` (requeue) | the same option, for its benchmark only | perf's |
//! | | `multi` (lock-pi) | `--multi` when yes | off |
//! | `perf-bench-mem` | `op` | the benchmark: `memcpy`, `memset` | required |
//! | | `function` | `--function` (`all` runs every implementation) | every implementation (perf 6.1's) |
//! | | `size` | `--size` (`1MB`, as perf takes it) | perf's 1MB |
//! | | `nr_loops` | `--nr_loops` | perf's 1 |
//! | `perf-bench-numa-mem` (`numa mem -m -0`, as lkp) | `nr_processes` | `-p` (count or share of CPUs) | nr_cpu |
//! | | `nr_threads` | `-t`, threads per process (lkp writes `2t`; the `t` is dropped) | 1 |
//! | | `mem_proc` | `-P`, memory per process in MB (`300M`) | perf's |
//! | | `thp` | `--thp 1` when `true`, else `--thp -1` (as lkp) | `-1` |
//! | | `extra_params` | more perf bench numa options, as words | none |
//!
//! The modes are spelt as lkp spells them: `threads` for the pipe benchmark, `thread` for messaging. A syscall
//! benchmark the installed perf lacks (lkp's job asks for `fork`, `execve` and `getpgid`, which perf 6.1 does not
//! have) is refused before any run, naming those it has; so is a futex or mem benchmark it lacks. A yes/no param is
//! read as lkp's `parse_bool` reads it: empty, or starting with `0`, `no`, `false` or `n`, is no.
//! `culprit_parse::perf_bench` reads the output.

use super::{ask_installed, lkp_bool, ParamKind, ParamSpec, Params, Program, ProgramContext, ProgramError, ProgramPlan};
use crate::process::Invocation;
// The parser's kinds, so that the program and the parser of a benchmark share its lkp name and cannot drift.
use culprit_parse::perf_bench::PerfBenchKind as Kind;
use std::sync::OnceLock;
use std::time::Duration;

/// One `perf bench` benchmark under lkp's program name.
pub struct PerfBench {
    kind: Kind,
}

pub static SCHED_PIPE: PerfBench = PerfBench { kind: Kind::SchedPipe };
pub static SCHED_MESSAGING: PerfBench = PerfBench { kind: Kind::SchedMessaging };
pub static SYSCALL: PerfBench = PerfBench { kind: Kind::Syscall };
pub static FUTEX: PerfBench = PerfBench { kind: Kind::Futex };
pub static MEM: PerfBench = PerfBench { kind: Kind::Mem };
pub static NUMA_MEM: PerfBench = PerfBench { kind: Kind::NumaMem };

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

const FUTEX_SPECS: &[ParamSpec] = &[
    ParamSpec { name: "test", kind: ParamKind::Text, doc: "the futex benchmark: hash, wake, requeue, ..." },
    ParamSpec { name: "nr_task", kind: ParamKind::CountOrShare, doc: "threads, or a share of the CPUs" },
    ParamSpec { name: "runtime", kind: ParamKind::Duration, doc: "seconds the hash and lock-pi benchmarks run" },
    ParamSpec { name: "shared", kind: ParamKind::Text, doc: "shared futexes when yes" },
    ParamSpec { name: "futexes", kind: ParamKind::Positive, doc: "futexes per thread (hash)" },
    ParamSpec { name: "nwakes", kind: ParamKind::Positive, doc: "threads woken per call (wake)" },
    ParamSpec { name: "nwakers", kind: ParamKind::Positive, doc: "waking threads (wake-parallel)" },
    ParamSpec { name: "nrequeue", kind: ParamKind::Positive, doc: "threads requeued per call (requeue)" },
    ParamSpec { name: "multi", kind: ParamKind::Text, doc: "one futex per thread when yes (lock-pi)" },
];

const MEM_SPECS: &[ParamSpec] = &[
    ParamSpec { name: "op", kind: ParamKind::Text, doc: "the memory benchmark: memcpy or memset" },
    ParamSpec { name: "function", kind: ParamKind::Text, doc: "the implementation, or all" },
    ParamSpec { name: "size", kind: ParamKind::Text, doc: "buffer size as perf takes it, e.g. 1MB" },
    ParamSpec { name: "nr_loops", kind: ParamKind::Positive, doc: "copies or sets of the buffer" },
];

const NUMA_MEM_SPECS: &[ParamSpec] = &[
    ParamSpec { name: "nr_processes", kind: ParamKind::CountOrShare, doc: "processes, or a share of the CPUs" },
    ParamSpec { name: "nr_threads", kind: ParamKind::Text, doc: "threads per process, e.g. 2 or lkp's 2t" },
    ParamSpec { name: "mem_proc", kind: ParamKind::Size, doc: "memory each process works on, e.g. 300M" },
    ParamSpec { name: "thp", kind: ParamKind::Text, doc: "transparent huge pages when true" },
    ParamSpec { name: "extra_params", kind: ParamKind::Text, doc: "more `perf bench numa mem` options" },
];

/// A yes/no param, read as lkp reads it ([`lkp_bool`]).
fn yes(value: Option<&str>) -> bool {
    lkp_bool(value.unwrap_or("").trim())
}

/// Whether `text` is a name as perf bench writes them (a benchmark, an implementation, a size such as `1MB`):
/// letters, digits, `-`, `_`, so that it goes on a command line as one word.
fn is_bench_word(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A param's value that must be such a name.
fn checked_name(p: &Params, key: &str, value: &str, example: &str) -> Result<String, ProgramError> {
    let value = value.trim();
    if !is_bench_word(value) {
        return Err(p.bad(key, value, format!("a perf bench name such as {example}")));
    }
    Ok(value.to_string())
}

/// A perf bench collection whose benchmark a param names: the collection, the param, an example benchmark.
type Collection = (&'static str, &'static str, &'static str);

const SYSCALL_COLLECTION: Collection = ("syscall", "op", "basic");
const FUTEX_COLLECTION: Collection = ("futex", "test", "hash");
const MEM_COLLECTION: Collection = ("mem", "op", "memcpy");

/// The collection a benchmark of `kind` is named from, for the kinds that name one.
fn collection_of(kind: Kind) -> Option<Collection> {
    match kind {
        Kind::Syscall => Some(SYSCALL_COLLECTION),
        Kind::Futex => Some(FUTEX_COLLECTION),
        Kind::Mem => Some(MEM_COLLECTION),
        Kind::SchedPipe | Kind::SchedMessaging | Kind::NumaMem => None,
    }
}

impl PerfBench {
    /// The benchmark of `collection` the job names, which these programs require.
    fn benchmark(&self, p: &Params, (collection, key, example): Collection) -> Result<String, ProgramError> {
        let name = p.get(key).ok_or_else(|| ProgramError::MissingParam {
            program: self.name(),
            key: key.into(),
            reason: format!(
                "name the {collection} benchmark, e.g. {key}: {example} (`perf bench {collection}` lists them)"
            ),
        })?;
        checked_name(p, key, name, example)
    }
}

impl Program for PerfBench {
    fn name(&self) -> &'static str {
        self.kind.program()
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
            Kind::Futex => FUTEX_SPECS,
            Kind::Mem => MEM_SPECS,
            Kind::NumaMem => NUMA_MEM_SPECS,
        }
    }

    fn plan(&self, p: &Params, ctx: &ProgramContext) -> Result<ProgramPlan, ProgramError> {
        let mut argv: Vec<String> = vec!["perf".into(), "bench".into()];
        match self.kind {
            Kind::SchedPipe => {
                argv.extend(["sched".into(), "pipe".into()]);
                if let Some(text) = p.get("loops") {
                    let digits = text.trim().strip_suffix("ops").unwrap_or(text.trim());
                    let loops = digits.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| {
                        let reason = "expected a whole number of round trips of at least 1, such as 1000000 or \
                                      1000000ops";
                        p.bad("loops", text, reason)
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
                argv.extend(["syscall".into(), self.benchmark(p, SYSCALL_COLLECTION)?]);
                if let Some(calls) = p.positive_count("loop")? {
                    argv.extend(["--loop".into(), calls.to_string()]);
                }
            }
            Kind::Futex => {
                let test = self.benchmark(p, FUTEX_COLLECTION)?;
                argv.extend(["futex".into(), test.clone()]);
                // lkp passes each option only to the benchmark that reads it; the others would refuse it.
                if matches!(test.as_str(), "hash" | "lock-pi") {
                    if let Some(secs) = p.run_time_secs("runtime", "runs for its default 10 s on 0")? {
                        argv.extend(["--runtime".into(), secs.to_string()]);
                    }
                }
                if let Some(threads) = p.count_or_share("nr_task", ctx.nr_cpu)? {
                    argv.extend(["--threads".into(), threads.to_string()]);
                }
                if yes(p.get("shared")) {
                    argv.push("--shared".into());
                }
                let per_benchmark =
                    [("futexes", "hash"), ("nwakes", "wake"), ("nwakers", "wake-parallel"), ("nrequeue", "requeue")];
                for (key, only_for) in per_benchmark {
                    if let (Some(n), true) = (p.positive_count(key)?, test == only_for) {
                        argv.extend([format!("--{key}"), n.to_string()]);
                    }
                }
                if test == "lock-pi" && yes(p.get("multi")) {
                    argv.push("--multi".into());
                }
            }
            Kind::Mem => {
                argv.extend(["mem".into(), self.benchmark(p, MEM_COLLECTION)?]);
                if let Some(function) = p.get("function") {
                    argv.extend(["--function".into(), checked_name(p, "function", function, "all")?]);
                }
                if let Some(size) = p.get("size") {
                    argv.extend(["--size".into(), checked_name(p, "size", size, "1MB")?]);
                }
                if let Some(loops) = p.positive_count("nr_loops")? {
                    argv.extend(["--nr_loops".into(), loops.to_string()]);
                }
            }
            Kind::NumaMem => argv.extend(numa_mem_args(p, ctx.nr_cpu)?),
        }
        let mut main = Invocation::new(argv);
        // perf bench prints its header and results on stdout, and its refusals on stderr; both go to the parser
        // and the stored output, so a refusal is read with what led to it.
        main.merge_stderr = true;
        Ok(ProgramPlan::single(main))
    }

    fn check_offered(&self, p: &Params) -> Result<(), ProgramError> {
        let Some((collection, key, _)) = collection_of(self.kind) else { return Ok(()) };
        let newer = if self.kind == Kind::Syscall { "; newer perf versions add fork, execve and getpgid" } else { "" };
        let Some(name) = p.get(key).map(str::trim) else { return Ok(()) };
        let Some(offered) = collection_benchmarks(collection) else { return Ok(()) };
        if offered.iter().any(|o| o == name) {
            return Ok(());
        }
        let reason = format!(
            "this perf has no {collection} benchmark '{name}'; it has: {} (`perf bench {collection}` lists \
             them{newer})",
            offered.join(", ")
        );
        Err(p.bad(key, name, reason))
    }
}

/// `numa mem` and its options as lkp's perf-bench-numa-mem passes them: `-p <processes> -t <threads> -m -0 [-P
/// <MB>] --thp <1|-1> [extra params]`.
fn numa_mem_args(p: &Params, nr_cpu: u32) -> Result<Vec<String>, ProgramError> {
    let processes = p.count_or_share("nr_processes", nr_cpu)?.unwrap_or(u64::from(nr_cpu)).max(1);
    let threads = match p.get("nr_threads").map(str::trim) {
        None => 1,
        Some(text) => text.strip_suffix('t').unwrap_or(text).parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(
            || p.bad("nr_threads", text, "expected threads per process, at least 1, such as 2 or lkp's 2t"),
        )?,
    };
    let mut args: Vec<String> = ["numa", "mem", "-p", &processes.to_string(), "-t", &threads.to_string(), "-m", "-0"]
        .map(String::from)
        .to_vec();
    if let Some(bytes) = p.size_bytes("mem_proc")? {
        // lkp's to_mb: whole megabytes.
        let megabytes = (bytes >> 20).max(1);
        args.extend(["-P".to_string(), megabytes.to_string()]);
    }
    let thp = if p.get("thp").map(str::trim) == Some("true") { "1" } else { "-1" };
    args.extend(["--thp".to_string(), thp.to_string()]);
    for word in p.get("extra_params").map(str::split_whitespace).into_iter().flatten() {
        let plain = word.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_=.,".contains(&b));
        if !plain {
            let reason = "expected perf bench numa options as plain words, such as --no-data_rand_walk";
            return Err(p.bad("extra_params", p.get("extra_params").unwrap_or_default(), reason));
        }
        args.push(word.to_string());
    }
    Ok(args)
}

/// The benchmarks of a collection the installed perf lists (`perf bench <collection>` with no benchmark), asked
/// once per collection; `None` when perf cannot be asked, and the run then says what went wrong.
fn collection_benchmarks(collection: &'static str) -> Option<&'static Vec<String>> {
    static SYSCALL: OnceLock<Option<Vec<String>>> = OnceLock::new();
    static FUTEX: OnceLock<Option<Vec<String>>> = OnceLock::new();
    static MEM: OnceLock<Option<Vec<String>>> = OnceLock::new();
    let cell = match collection {
        "syscall" => &SYSCALL,
        "futex" => &FUTEX,
        _ => &MEM,
    };
    cell.get_or_init(|| {
        let finished = ask_installed(&["perf", "bench", collection], Duration::from_secs(30))?;
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
            is_bench_word(name).then(|| name.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{ctx, params};

    /// lkp's jobs/perf-bench-numa-mem.yaml: `nr_processes: 100%`, `nr_threads: 2t`, `mem_proc: 300M`, `thp: true`.
    #[test]
    fn numa_mem_takes_lkps_params() {
        let lkp = [("nr_processes", "100%"), ("nr_threads", "2t"), ("mem_proc", "300M"), ("thp", "true")];
        let plan = NUMA_MEM.plan(&params("perf-bench-numa-mem", &lkp), &ctx()).unwrap();
        assert_eq!(plan.main.display(), "perf bench numa mem -p 4 -t 2 -m -0 -P 300 --thp 1");
        let plain = [("nr_threads", "1"), ("extra_params", "--no-data_rand_walk")];
        let plan = NUMA_MEM.plan(&params("perf-bench-numa-mem", &plain), &ctx()).unwrap();
        assert_eq!(plan.main.display(), "perf bench numa mem -p 4 -t 1 -m -0 --thp -1 --no-data_rand_walk");
        for (key, value) in [("nr_threads", "0t"), ("nr_threads", "two"), ("extra_params", "-x; rm -rf /")] {
            let refused = NUMA_MEM.plan(&params("perf-bench-numa-mem", &[(key, value)]), &ctx());
            assert!(refused.is_err(), "{key}: {value}");
        }
    }

    /// A program, its job params, and what is expected of them.
    type Case<'a, T> = (&'a PerfBench, &'a [(&'a str, &'a str)], T);

    #[test]
    fn maps_lkps_params_to_perf_bench_options() {
        // (program, params, command line)
        let cases: [Case<&str>; 11] = [
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
            (
                &FUTEX,
                &[("test", "hash"), ("runtime", "5m"), ("nr_task", "100%"), ("shared", "shared"), ("futexes", "64")],
                "perf bench futex hash --runtime 300 --threads 4 --shared --futexes 64",
            ),
            // lkp's job gives `shared:` empty for private futexes, and its runtime to every test: only hash and
            // lock-pi take one, and `futexes` is hash's alone.
            (
                &FUTEX,
                &[("test", "wake"), ("runtime", "300s"), ("shared", ""), ("futexes", "8")],
                "perf bench futex wake",
            ),
            (&FUTEX, &[("test", "lock-pi"), ("multi", "yes")], "perf bench futex lock-pi --multi"),
            (
                &FUTEX,
                &[("test", "requeue"), ("nrequeue", "2"), ("shared", "no")],
                "perf bench futex requeue --nrequeue 2",
            ),
            (
                &MEM,
                &[("op", "memcpy"), ("function", "all"), ("size", "1MB"), ("nr_loops", "2")],
                "perf bench mem memcpy --function all --size 1MB --nr_loops 2",
            ),
        ];
        for (program, pairs, want) in cases {
            let plan = program.plan(&params(program.name(), pairs), &ctx()).expect("plans");
            assert_eq!(plan.main.display(), want);
            assert!(plan.main.merge_stderr);
        }
    }

    #[test]
    fn bad_params_are_refused_before_anything_runs() {
        let cases: [Case<()>; 8] = [
            (&SCHED_PIPE, &[("loops", "0ops")], ()),
            (&SCHED_PIPE, &[("loops", "many")], ()),
            (&SCHED_MESSAGING, &[("groups", "0")], ()),
            (&SYSCALL, &[], ()),
            (&SYSCALL, &[("op", "basic; rm -rf /")], ()),
            (&FUTEX, &[], ()),
            (&FUTEX, &[("test", "hash"), ("runtime", "0")], ()),
            (&MEM, &[("op", "memcpy"), ("size", "1MB $(reboot)")], ()),
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
