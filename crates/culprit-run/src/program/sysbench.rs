//! sysbench (Debian package `sysbench`): the cpu, memory, threads, mutex and fileio tests, each selected by its lkp
//! job key (`sysbench-cpu`, `sysbench-memory`, `sysbench-threads`, `sysbench-mutex`, `sysbench-fileio`).
//!
//! Param mapping (lkp's names and defaults, except that runtimes default to 60 s rather than 600 s):
//!
//! | test | param | sysbench option | default |
//! |---|---|---|---|
//! | all but fileio | `nr_threads` | `--threads` (count or share of CPUs) | 1 |
//! | all but fileio | `runtime` | `--time` | 60 |
//! | cpu | `cpu_max_prime` | `--cpu-max-prime` | 10000 |
//! | memory | `mem_blk_size`, `mem_total_size`, `mem_scope`, `mem_hugetlb`, `mem_operation`, `mem_access_mode` | `--memory-block-size`, `--memory-total-size`, `--memory-scope`, `--memory-hugetlb`, `--memory-oper`, `--memory-access-mode` | 1K, 100G, global, off, write, seq |
//! | memory | `rand_type`, `rand_pareto_h` | `--rand-type`, `--rand-pareto-h` | sysbench's |
//! | threads | `thread_yields`, `thread_locks` | `--thread-yields`, `--thread-locks` | 1000, 8 |
//! | mutex | `mutex_num`, `mutex_locks`, `mutex_loops` | `--mutex-num`, `--mutex-locks`, `--mutex-loops` | 4096, 50000, 10000 |
//! | fileio | `nr_threads`, `period`, `rwmode`, `iomode`, `size`, `filenum` | `--threads`, `--time`, `--file-test-mode`, `--file-io-mode`, `--file-total-size`, `--file-num` | 1, 60, rndrw, sync, 128M, 128 |
//!
//! lkp's job files and its `programs/sysbench-memory/run` name the operation `mem_operation`; the run script's default
//! is set under the name `mem_opt`, which Culprit takes too (its jobs written before used it), and a job giving both
//! with different values is refused.
//!
//! memory's `nr_processes` (default 1) runs that many sysbench processes at once, each with `nr_threads` threads, as
//! lkp's run does; their reports are printed one after the other and the parser sums their throughputs. A process
//! that fails fails the run.
//!
//! fileio lays its files out in the scratch directory as lkp's run does: `prepare` (which writes them) for the read
//! modes and rndrw; `fallocate -l <size / filenum>` of each `test_file.N` (unwritten extents, whose first writes the
//! measured run converts) for rndwr and seqrewr; nothing for seqwr, whose run creates them. The measured `run` gets
//! lkp's `ulimit -n <filenum + 2048>` (lkp's jobs give 1024 files, which a default limit of 1024 open files refuses),
//! and `cleanup` removes the files. A failed run's reason is sysbench's `FATAL:` line. The metric prefix is
//! the job key (`sysbench-cpu.workload`, `sysbench-cpu.latency_ms.avg`, ...), parsed by `culprit_parse::sysbench`,
//! which names them as lkp does (sysbench's own "events per second" line is not one of lkp's metrics).

use super::{last_line, ParamKind, ParamSpec, Params, Program, ProgramContext, ProgramError, ProgramPlan};
use crate::process::{Finished, Invocation};

/// One sysbench test, selected by its lkp job key.
pub struct Sysbench {
    pub test: &'static str,
}

pub static CPU: Sysbench = Sysbench { test: "cpu" };
pub static MEMORY: Sysbench = Sysbench { test: "memory" };
pub static THREADS: Sysbench = Sysbench { test: "threads" };
pub static MUTEX: Sysbench = Sysbench { test: "mutex" };
pub static FILEIO: Sysbench = Sysbench { test: "fileio" };

const COMMON: [ParamSpec; 2] = [
    ParamSpec { name: "nr_threads", kind: ParamKind::CountOrShare, doc: "threads, or a share of the CPUs" },
    ParamSpec { name: "runtime", kind: ParamKind::Duration, doc: "run time" },
];

const CPU_SPECS: &[ParamSpec] =
    &[COMMON[0], COMMON[1], ParamSpec { name: "cpu_max_prime", kind: ParamKind::Count, doc: "upper limit of primes" }];
const MEMORY_SPECS: &[ParamSpec] = &[
    COMMON[0],
    COMMON[1],
    ParamSpec { name: "nr_processes", kind: ParamKind::Positive, doc: "sysbench processes run at once, as in lkp" },
    ParamSpec { name: "mem_blk_size", kind: ParamKind::Size, doc: "block size" },
    ParamSpec { name: "mem_total_size", kind: ParamKind::Size, doc: "total bytes to transfer" },
    ParamSpec { name: "mem_scope", kind: ParamKind::OneOf(&["global", "local"]), doc: "memory scope" },
    ParamSpec { name: "mem_hugetlb", kind: ParamKind::OneOf(&["on", "off"]), doc: "huge pages" },
    ParamSpec { name: "mem_operation", kind: ParamKind::OneOf(MEM_OPERATIONS), doc: "operation" },
    ParamSpec { name: "mem_opt", kind: ParamKind::OneOf(MEM_OPERATIONS), doc: "operation, as mem_operation" },
    ParamSpec { name: "mem_access_mode", kind: ParamKind::OneOf(&["seq", "rnd"]), doc: "access pattern" },
    ParamSpec {
        name: "rand_type",
        kind: ParamKind::OneOf(&["uniform", "gaussian", "special", "pareto"]),
        doc: "random numbers' distribution",
    },
    ParamSpec { name: "rand_pareto_h", kind: ParamKind::Text, doc: "h of the pareto distribution" },
];
const MEM_OPERATIONS: &[&str] = &["read", "write", "none"];
const THREADS_SPECS: &[ParamSpec] = &[
    COMMON[0],
    COMMON[1],
    ParamSpec { name: "thread_yields", kind: ParamKind::Count, doc: "yields per request" },
    ParamSpec { name: "thread_locks", kind: ParamKind::Count, doc: "locks per thread" },
];
const MUTEX_SPECS: &[ParamSpec] = &[
    COMMON[0],
    COMMON[1],
    ParamSpec { name: "mutex_num", kind: ParamKind::Count, doc: "mutexes" },
    ParamSpec { name: "mutex_locks", kind: ParamKind::Count, doc: "locks per thread" },
    ParamSpec { name: "mutex_loops", kind: ParamKind::Count, doc: "empty loops between locks" },
];
const FILEIO_SPECS: &[ParamSpec] = &[
    COMMON[0],
    ParamSpec { name: "period", kind: ParamKind::Duration, doc: "run time" },
    ParamSpec { name: "rwmode", kind: ParamKind::OneOf(&["seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw"]), doc: "test mode" },
    ParamSpec { name: "iomode", kind: ParamKind::OneOf(&["sync", "async", "mmap"]), doc: "I/O mode" },
    ParamSpec { name: "size", kind: ParamKind::Size, doc: "total file size" },
    ParamSpec { name: "filenum", kind: ParamKind::Text, doc: "number of files (128 or 128f)" },
];

/// Why a sysbench run failed: sysbench says it on stdout (`FATAL: Cannot open file 'test_file.1019' errno = 24 (Too
/// many open files)`, the OLTP tests' `FATAL: Connection to database failed: ...`), and nothing on stderr; its first
/// FATAL line is the cause, the later ones its consequences (`FATAL: Thread initialization failed!`).
pub(crate) fn sysbench_failure_line(finished: &Finished) -> Option<&str> {
    let fatal = finished.stdout.lines().map(str::trim).find(|line| line.starts_with("FATAL:"));
    fatal.or_else(|| last_line(&finished.stderr))
}

impl Program for Sysbench {
    fn name(&self) -> &'static str {
        match self.test {
            "cpu" => "sysbench-cpu",
            "memory" => "sysbench-memory",
            "threads" => "sysbench-threads",
            "mutex" => "sysbench-mutex",
            _ => "sysbench-fileio",
        }
    }
    fn binary(&self) -> &'static str {
        "sysbench"
    }
    fn install_hint(&self) -> &'static str {
        "install it with: apt-get install sysbench"
    }
    fn params(&self) -> &'static [ParamSpec] {
        match self.test {
            "cpu" => CPU_SPECS,
            "memory" => MEMORY_SPECS,
            "threads" => THREADS_SPECS,
            "mutex" => MUTEX_SPECS,
            _ => FILEIO_SPECS,
        }
    }
    fn parser(&self) -> Option<&'static str> {
        Some(self.name())
    }

    /// fileio lays out `size` bytes of files before it runs (lkp's jobs give 64G).
    fn scratch_bytes(&self, params: &Params) -> Option<(&'static str, u64)> {
        let size = (self.test == "fileio").then(|| params.size_bytes("size").ok().flatten().unwrap_or(128 << 20));
        size.map(|bytes| ("size", bytes))
    }

    fn failure_line<'a>(&self, finished: &'a Finished) -> Option<&'a str> {
        sysbench_failure_line(finished)
    }

    fn plan(&self, p: &Params, ctx: &ProgramContext) -> Result<ProgramPlan, ProgramError> {
        // fileio's mode, total size and file count, which decide how its files are laid out before the run.
        let mut fileio = None;
        let threads = p.count_or_share("nr_threads", ctx.nr_cpu)?.unwrap_or(1).max(1);
        let mut args = vec!["sysbench".to_string(), self.test.to_string(), format!("--threads={threads}")];
        let mut opt = |flag: &str, value: String| args.push(format!("--{flag}={value}"));
        match self.test {
            "cpu" => {
                opt("time", time_limit(p, "runtime")?.to_string());
                opt("cpu-max-prime", p.count("cpu_max_prime")?.unwrap_or(10000).to_string());
            }
            "memory" => {
                opt("time", time_limit(p, "runtime")?.to_string());
                opt("memory-block-size", p.size_bytes("mem_blk_size")?.unwrap_or(1024).to_string());
                opt("memory-total-size", p.size_bytes("mem_total_size")?.unwrap_or(100 << 30).to_string());
                opt("memory-scope", p.get("mem_scope").unwrap_or("global").to_string());
                opt("memory-hugetlb", p.get("mem_hugetlb").unwrap_or("off").to_string());
                opt("memory-oper", memory_operation(p)?.to_string());
                opt("memory-access-mode", p.get("mem_access_mode").unwrap_or("seq").to_string());
                if let Some(kind) = p.get("rand_type") {
                    opt("rand-type", kind.to_string());
                }
                if let Some(h) = p.get("rand_pareto_h") {
                    let valid = h.parse::<f64>().is_ok_and(|h| h > 0.0 && h < 1.0);
                    if !valid {
                        return Err(ProgramError::BadParam {
                            program: "sysbench-memory",
                            key: "rand_pareto_h".into(),
                            value: h.into(),
                            reason: "expected a number between 0 and 1 such as 0.2".into(),
                        });
                    }
                    opt("rand-pareto-h", h.to_string());
                }
            }
            "threads" => {
                opt("time", time_limit(p, "runtime")?.to_string());
                opt("thread-yields", p.count("thread_yields")?.unwrap_or(1000).to_string());
                opt("thread-locks", p.count("thread_locks")?.unwrap_or(8).to_string());
            }
            "mutex" => {
                // sysbench's mutex test ends by work done, not by time; lkp passes the time anyway as a bound.
                opt("time", time_limit(p, "runtime")?.to_string());
                opt("mutex-num", p.count("mutex_num")?.unwrap_or(4096).to_string());
                opt("mutex-locks", p.count("mutex_locks")?.unwrap_or(50000).to_string());
                opt("mutex-loops", p.count("mutex_loops")?.unwrap_or(10000).to_string());
            }
            _ => {
                let filenum = p.get("filenum").unwrap_or("128").trim_end_matches('f');
                let filenum: u64 = filenum.parse().map_err(|_| ProgramError::BadParam {
                    program: "sysbench-fileio",
                    key: "filenum".into(),
                    value: filenum.into(),
                    reason: "expected a number of files such as 128 or 128f".into(),
                })?;
                opt("events", "0".into());
                opt("time", time_limit(p, "period")?.to_string());
                opt("file-test-mode", p.get("rwmode").unwrap_or("rndrw").to_string());
                let size = p.size_bytes("size")?.unwrap_or(128 << 20);
                opt("file-total-size", size.to_string());
                opt("file-io-mode", p.get("iomode").unwrap_or("sync").to_string());
                opt("file-num", filenum.max(1).to_string());
                fileio = Some((p.get("rwmode").unwrap_or("rndrw"), size, filenum.max(1)));
            }
        }
        let with_verb = |verb: &str| {
            let mut a = args.clone();
            a.push(verb.to_string());
            Invocation::new(a).in_dir(&ctx.scratch_dir)
        };
        let mut plan = ProgramPlan::single(with_verb("run"));
        if self.test == "memory" {
            let processes = p.positive_count("nr_processes")?.unwrap_or(1);
            if processes > 1 {
                plan.main = at_once(&plan.main, processes).in_dir(&ctx.scratch_dir);
            }
        }
        if let Some((mode, size, files)) = fileio {
            // Every word of the command line is a number or a mode checked above, so its display is shell text.
            let run = format!("ulimit -n {}; exec {}", files + 2048, plan.main.display());
            plan.main = Invocation::shell(&run).in_dir(&ctx.scratch_dir);
            if !mode.contains("wr") {
                plan.setup.push(with_verb("prepare"));
            } else if mode != "seqwr" {
                let each = size / files;
                let lay_out = format!(
                    "i=0; while [ $i -lt {files} ]; do fallocate -l {each} test_file.$i || exit 1; i=$((i + 1)); done"
                );
                plan.setup.push(Invocation::shell(&lay_out).in_dir(&ctx.scratch_dir));
            }
            plan.cleanup.push(with_verb("cleanup"));
        }
        Ok(plan)
    }
}

/// `processes` copies of `one` run at once by `sh`, each writing its own file, which are printed in order once all
/// have ended; the exit status is that of the first to fail. Every argument is a number or one of a few words
/// checked when planned, so the displayed command line is also valid shell text.
fn at_once(one: &Invocation, processes: u64) -> Invocation {
    let command = one.display();
    Invocation::shell(&format!(
        "pids=; for i in $(seq 1 {processes}); do {command} > sysbench-memory.$i & pids=\"$pids $!\"; done; rc=0; \
         for pid in $pids; do wait $pid || rc=$?; done; for i in $(seq 1 {processes}); do cat sysbench-memory.$i; \
         done; exit $rc"
    ))
}

/// sysbench's `--memory-oper`: lkp's `mem_operation`, or `mem_opt` under which its run script sets the default.
fn memory_operation(p: &Params) -> Result<&str, ProgramError> {
    match (p.get("mem_operation"), p.get("mem_opt")) {
        (Some(operation), Some(opt)) if operation != opt => Err(ProgramError::BadParam {
            program: "sysbench-memory",
            key: "mem_opt".into(),
            value: opt.into(),
            reason: format!("mem_operation is '{operation}' and both are --memory-oper; give only one"),
        }),
        (Some(operation), _) => Ok(operation),
        (None, opt) => Ok(opt.unwrap_or("write")),
    }
}

/// sysbench's `--time` from the job's `key` (60 s when absent). sysbench reads `--time=0` as "no time limit", and
/// the cpu, threads and fileio tests then never end, so a zero is refused while the job is planned.
fn time_limit(p: &Params, key: &str) -> Result<u64, ProgramError> {
    Ok(p.run_time_secs(key, "takes a zero run time as no time limit and would never stop")?.unwrap_or(60))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{ctx, params};

    #[test]
    fn cpu_and_fileio_command_lines() {
        let p = params("sysbench-cpu", &[("nr_threads", "100%"), ("runtime", "2s")]);
        assert_eq!(CPU.plan(&p, &ctx()).unwrap().main.display(), "sysbench cpu --threads=4 --time=2 --cpu-max-prime=10000 run");
        let p = params("sysbench-fileio", &[("size", "16M"), ("filenum", "4f"), ("period", "3")]);
        let plan = FILEIO.plan(&p, &ctx()).unwrap();
        assert!(plan.main.display().ends_with("--file-total-size=16777216 --file-io-mode=sync --file-num=4 run'"));
        assert!(plan.main.display().starts_with("sh -c 'ulimit -n 2052; exec sysbench fileio "));
        assert_eq!(plan.setup.len(), 1);
        assert!(plan.setup[0].display().ends_with(" prepare"));
        assert!(plan.cleanup[0].display().ends_with(" cleanup"));
        assert_eq!(FILEIO.name(), "sysbench-fileio");
    }

    /// lkp's sysbench-fileio run writes its files with `prepare` only for the modes without "wr" in their name;
    /// rndwr and seqrewr get `fallocate`d files, and seqwr none, so their writes meet the kernel's unwritten extents
    /// as in lkp's numbers instead of overwriting written data.
    #[test]
    fn qa17_fileio_lays_its_files_out_as_lkps_run_does() {
        let setup = |mode: &str| {
            let p = params("sysbench-fileio", &[("size", "16M"), ("filenum", "1024f"), ("rwmode", mode)]);
            FILEIO.plan(&p, &ctx()).unwrap().setup.iter().map(Invocation::display).collect::<Vec<_>>()
        };
        for mode in ["seqrd", "rndrd", "rndrw"] {
            let steps = setup(mode);
            assert!(steps.len() == 1 && steps[0].ends_with("--file-num=1024 prepare"), "{mode}: {steps:?}");
        }
        for mode in ["rndwr", "seqrewr"] {
            let steps = setup(mode);
            let each = "do fallocate -l 16384 test_file.$i || exit 1;";
            assert!(steps.len() == 1 && steps[0].contains("while [ $i -lt 1024 ]; ") && steps[0].contains(each));
        }
        assert!(setup("seqwr").is_empty());
    }

    #[test]
    fn qa14b_lkps_mem_operation_is_the_memory_operation() {
        let line =
            |pairs: &[(&str, &str)]| MEMORY.plan(&params("sysbench-memory", pairs), &ctx()).map(|p| p.main.display());
        let shown = line(&[("mem_operation", "read"), ("runtime", "2s")]).unwrap();
        assert!(shown.contains(" --memory-oper=read ") && !shown.contains("rand"), "{shown}");
        assert!(line(&[("mem_opt", "none")]).unwrap().contains(" --memory-oper=none "));
        assert!(line(&[]).unwrap().contains(" --memory-oper=write "));
        assert!(line(&[("mem_operation", "read"), ("mem_opt", "read")]).is_ok());
        match line(&[("mem_operation", "read"), ("mem_opt", "write")]) {
            Err(ProgramError::BadParam { key, reason, .. }) => {
                assert_eq!(key, "mem_opt");
                assert!(reason.contains("give only one"), "{reason}");
            }
            other => panic!("mem_operation read and mem_opt write: {other:?}"),
        }
        let shown = line(&[("mem_access_mode", "rnd"), ("rand_type", "pareto"), ("rand_pareto_h", "0.3")]).unwrap();
        assert!(shown.contains(" --memory-access-mode=rnd --rand-type=pareto --rand-pareto-h=0.3 run"), "{shown}");
        assert!(line(&[("rand_pareto_h", "3")]).is_err());
        let accepted: Vec<&str> = MEMORY.params().iter().map(|s| s.name).collect();
        assert!(accepted.contains(&"mem_operation"), "{accepted:?}");
    }

    #[test]
    fn qa14b_lkps_nr_processes_runs_that_many_sysbench_processes_at_once() {
        let plan = |pairs: &[(&str, &str)]| MEMORY.plan(&params("sysbench-memory", pairs), &ctx());
        let one = plan(&[("runtime", "2s")]).unwrap().main;
        assert_eq!(one.argv[0], "sysbench");
        assert_eq!(plan(&[("runtime", "2s"), ("nr_processes", "1")]).unwrap().main, one);
        let three = plan(&[("runtime", "2s"), ("nr_processes", "3")]).unwrap().main;
        let line = three.command_text();
        assert!(line.starts_with(&format!("pids=; for i in $(seq 1 3); do {} > sysbench-memory.$i &", one.display())));
        assert!(line.contains("wait $pid || rc=$?") && line.ends_with("exit $rc"), "{line}");
        assert_eq!(three.cwd, one.cwd);
        assert!(plan(&[("nr_processes", "0")]).is_err());
        // Run by sh, three processes' reports come out one after the other, and a failing one fails the run.
        let dir = tempfile::tempdir().unwrap();
        let report = |status: u8| {
            let shell = at_once(&Invocation::shell(&format!("echo report; exit {status}")), 3).in_dir(dir.path());
            let done = crate::process::run(&shell, None, &std::sync::Arc::default()).unwrap();
            (done.stdout, done.exit)
        };
        assert_eq!(report(0), ("report\nreport\nreport\n".to_string(), crate::process::Exit::Code(0)));
        assert_eq!(report(3), ("report\nreport\nreport\n".to_string(), crate::process::Exit::Code(3)));
    }

    #[test]
    fn a_zero_run_time_is_refused_because_sysbench_would_never_stop() {
        for (program, key) in [(&CPU, "runtime"), (&FILEIO, "period")] {
            let p = params(program.name(), &[(key, "0")]);
            match program.plan(&p, &ctx()) {
                Err(ProgramError::BadParam { key: got, reason, .. }) => {
                    assert_eq!(got, key);
                    assert!(reason.contains("never stop"), "{reason}");
                }
                other => panic!("{}: expected BadParam for {key}: 0, got {:?}", program.name(), other.map(|plan| plan.main.display())),
            }
        }
    }
}
