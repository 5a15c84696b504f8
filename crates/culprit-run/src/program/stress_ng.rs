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
//!
//! Before anything runs, `test` and `class` are checked against what the installed stress-ng offers
//! (`stress-ng --stressors`, and the classes it lists for `--class '?'`), asked once per process: stress-ng only
//! refuses an unknown stressor when it starts, which would store every run as failed.

use super::{edit_distance, ParamKind, ParamSpec, Params, Program, ProgramContext, ProgramError, ProgramPlan};
use crate::process::{self, Invocation};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

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

/// Runs the installed stress-ng with `args` and returns its standard output and error; `None` when it cannot be
/// asked (it then runs as it would have, and a run that fails says why).
fn ask(args: &[&str]) -> Option<(String, String)> {
    let inv = Invocation::new(std::iter::once("stress-ng").chain(args.iter().copied()));
    // Listing is instant; the limit only keeps a wedged binary from hanging the check.
    let finished = process::run(&inv, Some(Duration::from_secs(10)), &Arc::new(AtomicBool::new(false))).ok()?;
    Some((finished.stdout, finished.stderr))
}

/// The stressors the installed stress-ng offers (`stress-ng --stressors`), asked once per process.
fn installed_stressors() -> Option<&'static [String]> {
    static STRESSORS: OnceLock<Option<Vec<String>>> = OnceLock::new();
    STRESSORS.get_or_init(|| ask(&["--stressors"]).map(|(out, _)| words(&out)).filter(|w| !w.is_empty())).as_deref()
}

/// The classes the installed stress-ng offers, which it lists only in its refusal of an unknown class (`Unknown
/// class: '?', available classes: cpu-cache cpu ...`), asked once per process.
fn installed_classes() -> Option<&'static [String]> {
    static CLASSES: OnceLock<Option<Vec<String>>> = OnceLock::new();
    CLASSES
        .get_or_init(|| {
            let (out, err) = ask(&["--class", "?"])?;
            let text = format!("{out}{err}");
            let (_, list) = text.split_once("available classes:")?;
            Some(words(list.lines().next().unwrap_or(""))).filter(|w| !w.is_empty())
        })
        .as_deref()
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_string).collect()
}

/// Refuses a `test` or `class` value the installed stress-ng does not offer, naming the closest names it has and
/// the command that lists them all.
fn check_name(key: &str, value: &str, offered: &[String], what: &str, list: &str) -> Result<(), ProgramError> {
    if offered.iter().any(|o| o == value) {
        return Ok(());
    }
    // A typo is a few edits away; a longer name that holds it (`vm` in `vm-addr`) is also what was likely meant.
    let mut near: Vec<(usize, &str)> = offered
        .iter()
        .map(|o| (edit_distance(value, o), o.as_str()))
        .filter(|(d, o)| *d <= 2.max(value.chars().count() / 3) || o.contains(value))
        .collect();
    near.sort();
    let near: Vec<&str> = near.iter().take(5).map(|(_, o)| *o).collect();
    let suggestion = match near.as_slice() {
        [] => String::new(),
        names => format!(" (the closest: {})", names.join(", ")),
    };
    Err(ProgramError::BadParam {
        program: "stress-ng",
        key: key.into(),
        value: value.into(),
        reason: format!(
            "the installed stress-ng has no {what} '{value}'{suggestion}; name one of the {} it offers (`{list}` lists \
             them), or install a stress-ng that has it",
            offered.len()
        ),
    })
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
        let zero = "reads a zero --timeout as no limit and would never stop";
        let testtime = p.run_time_secs("testtime", zero)?.unwrap_or(60);
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

    /// `test` (or `class` without one) against what the installed stress-ng offers.
    fn check_offered(&self, p: &Params) -> Result<(), ProgramError> {
        match (p.get("test"), p.get("class")) {
            (Some(test), _) => match installed_stressors() {
                Some(offered) => check_name("test", test, offered, "stressor", "stress-ng --stressors"),
                None => Ok(()),
            },
            (None, Some(class)) => match installed_classes() {
                Some(offered) => check_name("class", class, offered, "class", "stress-ng --class '?'"),
                None => Ok(()),
            },
            (None, None) => Ok(()),
        }
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

    #[test]
    fn qa_31_a_stressor_the_installed_stress_ng_lacks_is_refused_with_the_closest_names() {
        let offered: Vec<String> = ["cpu", "cpu-online", "xattr", "vm", "vm-addr", "switch"].map(String::from).into();
        assert_eq!(check_name("test", "cpu", &offered, "stressor", "stress-ng --stressors"), Ok(()));
        let err = check_name("test", "xatr", &offered, "stressor", "stress-ng --stressors").unwrap_err().to_string();
        assert!(err.starts_with("stress-ng: param 'test' = 'xatr': the installed stress-ng has no stressor 'xatr'"));
        assert!(err.contains("(the closest: xattr)") && err.contains("one of the 6 it offers"), "{err}");
        assert!(err.contains("`stress-ng --stressors` lists them"), "{err}");
        let err = check_name("test", "nosuchstressor", &offered, "stressor", "l").unwrap_err().to_string();
        assert!(!err.contains("closest"), "{err}");
        let err = check_name("class", "vm2", &offered, "class", "l").unwrap_err().to_string();
        assert!(err.contains("no class 'vm2' (the closest: vm)"), "{err}");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
