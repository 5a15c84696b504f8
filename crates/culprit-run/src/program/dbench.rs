//! dbench, the file-server load generator (Debian package `dbench`), run as lkp's dbench does.
//!
//! Param mapping: `nr_threads` → the client count (count or share of CPUs, default nr_cpu); `runtime` → `-t`
//! seconds (default 600, dbench's own, which lkp's dbench runs with: it passes no `-t`; dbench warms up for a fifth
//! of it). The load file is Debian's `/usr/share/dbench/client.txt`, and the clients work in the scratch
//! directory (`-D`). `culprit_parse::dbench` turns the summary into `dbench.throughput_MB/s`.

use super::{ParamKind, ParamSpec, Params, Program, ProgramContext, ProgramError, ProgramPlan};
use crate::process::Invocation;

pub struct Dbench;

/// The shortest run dbench reports a throughput for.
pub const MIN_RUNTIME_SECS: u64 = 2;

/// dbench's own run time, which lkp's dbench job gets (it passes no `-t`).
pub const DEFAULT_RUNTIME_SECS: u64 = 600;

/// Debian's dbench load file.
pub const LOADFILE: &str = "/usr/share/dbench/client.txt";

const SPECS: &[ParamSpec] = &[
    ParamSpec { name: "nr_threads", kind: ParamKind::CountOrShare, doc: "clients, or a share of the CPUs" },
    ParamSpec { name: "runtime", kind: ParamKind::Duration, doc: "run time" },
];

impl Program for Dbench {
    fn name(&self) -> &'static str {
        "dbench"
    }
    fn binary(&self) -> &'static str {
        "dbench"
    }
    fn install_hint(&self) -> &'static str {
        "install it with: apt-get install dbench"
    }
    fn params(&self) -> &'static [ParamSpec] {
        SPECS
    }

    fn plan(&self, p: &Params, ctx: &ProgramContext) -> Result<ProgramPlan, ProgramError> {
        let clients = p.count_or_share("nr_threads", ctx.nr_cpu)?.unwrap_or(ctx.nr_cpu as u64).max(1);
        // lkp's dbench passes no run time, so dbench runs its default 600 s after a 120 s warmup; a shorter default
        // measured a throughput not comparable with the robot's (QA 47). `runtime` is Culprit's way to shorten it.
        let runtime = p.duration_secs("runtime")?.unwrap_or(DEFAULT_RUNTIME_SECS);
        // dbench reports the throughput of the seconds after its first: a 1-second run does a second of work and
        // prints `Throughput 0 MB/sec ... max_latency=0.000 ms`, a zero that would be stored as a result.
        if runtime < MIN_RUNTIME_SECS {
            return Err(ProgramError::BadParam {
                program: "dbench",
                key: "runtime".into(),
                value: p.get("runtime").unwrap_or_default().into(),
                reason: format!(
                    "dbench reports a throughput of 0 MB/sec for a run shorter than {MIN_RUNTIME_SECS} s; give \
                     runtime {MIN_RUNTIME_SECS}s or more"
                ),
            });
        }
        let argv = vec![
            "dbench".to_string(),
            "-c".into(),
            LOADFILE.into(),
            "-D".into(),
            ctx.scratch_dir.display().to_string(),
            "-t".into(),
            runtime.to_string(),
            clients.to_string(),
        ];
        Ok(ProgramPlan::single(Invocation::new(argv)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{ctx, params};

    #[test]
    fn qa47_without_runtime_dbench_runs_as_long_as_lkps() {
        let p = params("dbench", &[("nr_threads", "1")]);
        assert!(Dbench.plan(&p, &ctx()).unwrap().main.display().ends_with(" -t 600 1"));
    }

    #[test]
    fn clients_and_time() {
        let p = params("dbench", &[("nr_threads", "100%"), ("runtime", "3s")]);
        assert_eq!(
            Dbench.plan(&p, &ctx()).unwrap().main.display(),
            "dbench -c /usr/share/dbench/client.txt -D /tmp/culprit-scratch -t 3 4"
        );
    }

    #[test]
    fn qa_31_a_run_too_short_for_a_throughput_is_refused() {
        // `dbench -t 1` prints `Throughput 0 MB/sec` after a second of work, which was stored as an ok run.
        for runtime in ["1s", "1", "0"] {
            let p = params("dbench", &[("runtime", runtime)]);
            let error = Dbench.plan(&p, &ctx()).unwrap_err().to_string();
            assert!(error.contains("param 'runtime'") && error.contains("runtime 2s or more"), "{runtime}: {error}");
        }
        assert!(Dbench.plan(&params("dbench", &[("runtime", "2s")]), &ctx()).is_ok());
    }
}
