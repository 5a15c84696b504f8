//! stress-ng (Debian package `stress-ng`), run as lkp's stress-ng does: one stressor or one class, with metrics.
//!
//! Param mapping (lkp's names):
//!
//! | param | stress-ng option | default |
//! |---|---|---|
//! | `test` | `--<test> <nr_threads>` | (or `class`) |
//! | `class` | `--class <class> --sequential <nr_threads>` when no `test` | |
//! | `nr_threads` | instances (count or share of CPUs; `0` means one per CPU to stress-ng) | nr_cpu |
//! | `testtime` | `--timeout` (seconds) | `60` |
//!
//! Always: `--times --verify --metrics --no-rand-seed`, in the scratch directory (file stressors write there), with
//! stderr folded into stdout because stress-ng logs its metrics there. `culprit_parse::stress_ng` turns the metrics
//! table into `stress-ng.<stressor>.ops_per_sec` and `stress-ng.<stressor>.ops`.

use super::{ParamKind, ParamSpec, Params, Program, ProgramContext, ProgramError, ProgramPlan};
use crate::process::Invocation;

pub struct StressNg;

const SPECS: &[ParamSpec] = &[
    ParamSpec { name: "test", kind: ParamKind::Text, doc: "the stressor, e.g. xattr, cpu, switch" },
    ParamSpec { name: "class", kind: ParamKind::Text, doc: "a stressor class, run sequentially when no test is given" },
    ParamSpec { name: "nr_threads", kind: ParamKind::CountOrShare, doc: "instances, or a share of the CPUs" },
    ParamSpec { name: "testtime", kind: ParamKind::Duration, doc: "time per stressor" },
];

fn valid_word(v: &str) -> bool {
    !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl Program for StressNg {
    fn name(&self) -> &'static str {
        "stress-ng"
    }
    fn binary(&self) -> &'static str {
        "stress-ng"
    }
    fn install_hint(&self) -> &'static str {
        "install it with: apt-get install stress-ng"
    }
    fn params(&self) -> &'static [ParamSpec] {
        SPECS
    }

    fn plan(&self, p: &Params, ctx: &ProgramContext) -> Result<ProgramPlan, ProgramError> {
        let instances = p.count_or_share("nr_threads", ctx.nr_cpu)?.unwrap_or(ctx.nr_cpu as u64);
        let testtime = p.duration_secs("testtime")?.unwrap_or(60).max(1);
        let mut argv = vec![
            "stress-ng".to_string(),
            "--timeout".into(),
            testtime.to_string(),
            "--times".into(),
            "--verify".into(),
            "--metrics".into(),
            "--no-rand-seed".into(),
        ];
        match (p.get("test"), p.get("class")) {
            (Some(test), _) => {
                if !valid_word(test) {
                    return Err(ProgramError::BadParam {
                        program: "stress-ng",
                        key: "test".into(),
                        value: test.into(),
                        reason: "expected a stressor name such as xattr (see stress-ng --stressors)".into(),
                    });
                }
                argv.extend([format!("--{test}"), instances.to_string()]);
            }
            (None, Some(class)) => {
                if !valid_word(class) {
                    return Err(ProgramError::BadParam {
                        program: "stress-ng",
                        key: "class".into(),
                        value: class.into(),
                        reason: "expected a class name such as filesystem or cpu".into(),
                    });
                }
                argv.extend(["--class".into(), class.to_string(), "--sequential".into(), instances.to_string()]);
                // lkp excludes stressors that cannot run as root or that take the machine down.
                argv.extend(["--exclude".into(), "spawn,exec,swap".into()]);
            }
            (None, None) => {
                return Err(ProgramError::MissingParam {
                    program: "stress-ng",
                    key: "test".into(),
                    reason: "name a stressor (test: xattr) or a class (class: filesystem)".into(),
                })
            }
        }
        let mut inv = Invocation::new(argv).in_dir(&ctx.scratch_dir);
        inv.merge_stderr = true;
        Ok(ProgramPlan::single(inv))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{ctx, params};

    #[test]
    fn one_stressor_or_a_class() {
        let p = params("stress-ng", &[("test", "xattr"), ("nr_threads", "50%"), ("testtime", "5s")]);
        let plan = StressNg.plan(&p, &ctx()).unwrap();
        assert_eq!(plan.main.display(), "stress-ng --timeout 5 --times --verify --metrics --no-rand-seed --xattr 2");
        assert!(plan.main.merge_stderr);
        let p = params("stress-ng", &[("class", "cpu"), ("nr_threads", "1")]);
        assert!(StressNg.plan(&p, &ctx()).unwrap().main.display().contains("--class cpu --sequential 1"));
        assert!(StressNg.plan(&params("stress-ng", &[]), &ctx()).is_err());
        let p = params("stress-ng", &[("test", "xattr; rm -rf /")]);
        assert!(StressNg.plan(&p, &ctx()).is_err());
    }
}
