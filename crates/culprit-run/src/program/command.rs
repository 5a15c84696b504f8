//! `command`: any shell command as a benchmark, timed per execution by the kernel's accounting.
//!
//! Params:
//!
//! | param | meaning | default |
//! |---|---|---|
//! | `cmd` (required) | the command line, run with `sh -c` in the job's working directory | |
//! | `executions` | how many times it runs within one run; the run's metrics are the means | `1` |
//! | `warmup` | executions before the measured ones in every run, not measured (as hyperfine's `--warmup`): a cold page cache or a first-run JIT otherwise shows as noise | `0` |
//! | `capture.<name>` | a regex whose first capture group (or group `value`) is a number in the output, stored as `command.<name>`; matching several different numbers in one execution's output is an error | |
//!
//! Metrics per run: `command.elapsed_time` (s, wall), `command.user_time`, `command.system_time` (s), and
//! `command.max_resident_set_size` (KiB), named after lkp's time monitor's metrics (lkp's memory one is
//! `<program>.time.maximum_resident_set_size`), plus the captures. A non-zero exit fails the run. The time monitor's
//! rows of a command job are named as lkp names them after the program, `command.time.minor_page_faults`; it has no
//! `command.time.elapsed_time`, `user_time`, `system_time` or `maximum_resident_set_size`: they would be these times
//! the executions, one change counted twice. A capture may not be named `time.<anything>`, which would read as one
//! of the time monitor's rows.

use super::{ParamKind, ParamSpec, Params, Program, ProgramContext, ProgramError, ProgramPlan};
use crate::process::{Finished, Invocation};
use regex::Regex;
use std::collections::BTreeMap;

pub struct CommandProgram;

/// The most executions one run may have.
const MAX_EXECUTIONS: u64 = 1_000_000;

const SPECS: &[ParamSpec] = &[
    ParamSpec { name: "cmd", kind: ParamKind::Text, doc: "the shell command line" },
    ParamSpec { name: "executions", kind: ParamKind::Count, doc: "executions per run" },
    ParamSpec { name: "warmup", kind: ParamKind::Count, doc: "unmeasured executions before the measured ones" },
    ParamSpec { name: "capture.*", kind: ParamKind::Text, doc: "a regex capturing a number from the output" },
    ParamSpec {
        name: "provenance.*",
        kind: ParamKind::Text,
        doc: "a regex capturing text from the output (a kernel release, a config hash) recorded with the run's params",
    },
];

impl Program for CommandProgram {
    fn name(&self) -> &'static str {
        "command"
    }
    fn binary(&self) -> &'static str {
        "sh"
    }
    fn install_hint(&self) -> &'static str {
        "a POSIX shell is needed at /bin/sh"
    }
    fn params(&self) -> &'static [ParamSpec] {
        SPECS
    }
    fn parser(&self) -> Option<&'static str> {
        None
    }

    fn plan(&self, p: &Params, _ctx: &ProgramContext) -> Result<ProgramPlan, ProgramError> {
        let cmd = p.get("cmd").ok_or_else(|| ProgramError::MissingParam {
            program: "command",
            key: "cmd".into(),
            reason: "give the command line to measure, e.g. cmd: make -j2".into(),
        })?;
        captures(p)?;
        provenances(p)?;
        let mut plan = ProgramPlan::single(Invocation::shell(cmd));
        plan.executions = count_in_range(p, "executions", 1, "executions per run")?;
        plan.warmups = count_in_range(p, "warmup", 0, "warm-up executions")?;
        Ok(plan)
    }
}

/// The count `key` (`default` when absent), from `least` to [`MAX_EXECUTIONS`]. Out-of-range counts are refused
/// rather than clamped: a silent 1 for 0, or a million for a typo, would measure something other than what the job
/// says. `what` names the count in the error.
fn count_in_range(p: &Params, key: &str, least: u64, what: &str) -> Result<u32, ProgramError> {
    match p.count(key)? {
        None => Ok(least as u32),
        Some(n) if (least..=MAX_EXECUTIONS).contains(&n) => Ok(n as u32),
        Some(n) => Err(ProgramError::BadParam {
            program: "command",
            key: key.into(),
            value: n.to_string(),
            reason: format!("{what} go from {least} to {MAX_EXECUTIONS}"),
        }),
    }
}

/// The compiled `capture.<name>` regexes of a command job.
pub fn captures(p: &Params) -> Result<Vec<(String, Regex)>, ProgramError> {
    regex_family(p, "capture.")
}

/// The compiled `provenance.<name>` regexes of a command job: text the run reports about what it measured (the
/// kernel it booted, its config hash, the compiler), stored as params of the run so tables and reports show them.
pub fn provenances(p: &Params) -> Result<Vec<(String, Regex)>, ProgramError> {
    regex_family(p, "provenance.")
}

/// The first match of each provenance regex in the output, as `(name, text)`; names that match nothing are left out.
pub fn provenance_values(output: &str, provenances: &[(String, Regex)]) -> Vec<(String, String)> {
    provenances
        .iter()
        .filter_map(|(name, re)| {
            let caps = re.captures(output)?;
            let text = caps.name("value").or_else(|| caps.get(1))?.as_str().trim();
            (!text.is_empty()).then(|| (name.clone(), text.to_string()))
        })
        .collect()
}

/// The metrics [`metrics`] measures of every command job, as `command.<name>`: no capture may take these names.
const MEASURED: [&str; 4] = ["elapsed_time", "user_time", "system_time", "max_resident_set_size"];

fn regex_family(p: &Params, prefix: &str) -> Result<Vec<(String, Regex)>, ProgramError> {
    let mut out = Vec::new();
    for (key, pattern) in &p.values {
        let Some(name) = key.strip_prefix(prefix) else { continue };
        // `command.time.<field>` is the time monitor's row (lkp's `<program>.time.*`): a capture of that name would
        // be read, ranked and directed as one, or collide with it.
        if prefix == "capture." && name.starts_with("time.") {
            return Err(ProgramError::BadParam {
                program: "command",
                key: key.clone(),
                value: pattern.clone(),
                reason: format!(
                    "command.{name} is the name of the time monitor's row (lkp's `<program>.time.*`); name the capture \
                     otherwise, e.g. capture.{}",
                    name.replacen("time.", "time_", 1)
                ),
            });
        }
        // The command's own measurements: a capture of one of their names replaced the measured wall time with the
        // captured number, silently (QA 58: `capture.elapsed_time` stored 42 for a 0.2 s command).
        if prefix == "capture." && MEASURED.contains(&name) {
            return Err(ProgramError::BadParam {
                program: "command",
                key: key.clone(),
                value: pattern.clone(),
                reason: format!(
                    "command.{name} is what Culprit measures of every command ({}); name the capture otherwise, e.g. \
                     capture.reported_{name}",
                    MEASURED.join(", ")
                ),
            });
        }
        let re = Regex::new(pattern).map_err(|e| ProgramError::BadParam {
            program: "command",
            key: key.clone(),
            value: pattern.clone(),
            reason: format!("not a valid regex: {e}"),
        })?;
        if re.captures_len() < 2 {
            return Err(ProgramError::BadParam {
                program: "command",
                key: key.clone(),
                value: pattern.clone(),
                reason: "the regex needs a capture group around the value, e.g. 'ops: ([0-9.]+)'".into(),
            });
        }
        out.push((name.to_string(), re));
    }
    Ok(out)
}

/// The metrics of one run from its executions: means of the timings and of each capture. A capture that matches
/// no execution is an error naming it, so a changed output format is noticed instead of silently dropped. A capture
/// that matches `nan` or `inf` (Rust parses both) is an error too: a non-finite sample would be stored as a result
/// and poison every mean and test it enters.
pub fn metrics(executions: &[Finished], captures: &[(String, Regex)]) -> Result<BTreeMap<String, f64>, String> {
    let n = executions.len().max(1) as f64;
    let mut m = BTreeMap::new();
    let mean = |f: &dyn Fn(&Finished) -> f64| executions.iter().map(f).sum::<f64>() / n;
    type Usage<'a> = &'a dyn Fn(&Finished) -> f64;
    let measured: [(&str, Usage); 4] = [
        ("elapsed_time", &|e| e.usage.wall_secs),
        ("user_time", &|e| e.usage.user_secs),
        ("system_time", &|e| e.usage.sys_secs),
        ("max_resident_set_size", &|e| e.usage.max_rss_kib as f64),
    ];
    debug_assert!(measured.iter().map(|(name, _)| *name).eq(MEASURED));
    for (name, usage) in measured {
        m.insert(format!("command.{name}"), mean(usage));
    }
    for (name, re) in captures {
        let mut values = Vec::new();
        for (k, e) in executions.iter().enumerate() {
            // Every match of the execution, so a regex that matches several lines (a progress line per second and
            // the summary, a line per thread) is said, not read as its first match.
            let mut matched: Vec<(f64, &str)> = Vec::new();
            for caps in re.captures_iter(&e.stdout) {
                let text = caps.name("value").or_else(|| caps.get(1)).map(|g| g.as_str().trim()).unwrap_or("");
                // Text the group holds that is not a number is said, not skipped: skipped, `1,234.5` read as
                // "matched no number" (QA 58), and the executions where it matched a number made the mean alone.
                let why = match text.parse::<f64>() {
                    Ok(v) if v.is_finite() => {
                        matched.push((v, text));
                        continue;
                    }
                    Ok(_) => "which is not a finite number; fix the command or make the regex match digits only, \
                              e.g. '([0-9.]+)'",
                    Err(_) => "which is not a number (digits with a decimal point and an exponent, no thousands \
                               separators); make its group hold the number alone",
                };
                return Err(format!("capture.{name}: the regex '{}' matched '{text}', {why}", re.as_str()));
            }
            let Some(&(first, _)) = matched.first() else { continue };
            if matched.iter().any(|(v, _)| *v != first) {
                let shown: Vec<&str> = matched.iter().take(4).map(|(_, text)| *text).collect();
                let more = if matched.len() > shown.len() { ", ..." } else { "" };
                return Err(format!(
                    "capture.{name}: the regex '{}' matched {} times in the output of execution {}, not always the \
                     same number ({}{more}), and which one is the result is not for Culprit to guess; make it match \
                     one line, e.g. anchored with '(?m)^' and the words around the number",
                    re.as_str(),
                    matched.len(),
                    k + 1,
                    shown.join(", ")
                ));
            }
            values.push(first);
        }
        if values.is_empty() {
            return Err(format!("capture.{name}: the regex '{}' matched no number in the command's output", re.as_str()));
        }
        m.insert(format!("command.{name}"), values.iter().sum::<f64>() / values.len() as f64);
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::{Exit, Usage};
    use crate::program::{ctx, params};

    fn finished(out: &str, wall: f64) -> Finished {
        Finished {
            exit: Exit::Code(0),
            stdout: out.into(),
            stderr: String::new(),
            usage: Usage { wall_secs: wall, user_secs: 0.5, max_rss_kib: 100, ..Usage::default() },
        }
    }

    #[test]
    fn plans_and_measures_captures() {
        let p = params("command", &[("cmd", "echo ops: 12"), ("executions", "3"), ("capture.ops", "ops: ([0-9.]+)")]);
        let plan = CommandProgram.plan(&p, &ctx()).unwrap();
        assert_eq!(plan.executions, 3);
        assert_eq!(plan.main.argv, ["sh", "-c", "echo ops: 12"]);
        let caps = captures(&p).unwrap();
        let m = metrics(&[finished("ops: 10\n", 1.0), finished("ops: 14\n", 3.0)], &caps).unwrap();
        assert_eq!(m["command.ops"], 12.0);
        assert_eq!(m["command.elapsed_time"], 2.0);
        assert_eq!(m["command.user_time"], 0.5);
        let err = metrics(&[finished("nothing", 1.0)], &caps).unwrap_err();
        assert!(err.contains("capture.ops"), "{err}");
    }

    #[test]
    fn qa47_a_capture_may_not_take_a_time_monitor_rows_name() {
        let p = params("command", &[("cmd", "echo 3"), ("capture.time.user_time", "([0-9]+)")]);
        let err = CommandProgram.plan(&p, &ctx()).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("capture.time.user_time") && err.contains("capture.time_user_time"), "{err}");
        // QA 58: nor one of the times measured of every command, which it replaced.
        for name in MEASURED {
            let p = params("command", &[("cmd", "echo 3"), (&format!("capture.{name}"), "([0-9]+)")]);
            let err = CommandProgram.plan(&p, &ctx()).unwrap_err().to_string();
            assert!(err.contains(&format!("capture.reported_{name}")), "{err}");
        }
        let p = params("command", &[("cmd", "echo 3"), ("capture.timer", "([0-9]+)")]);
        assert!(CommandProgram.plan(&p, &ctx()).is_ok());
    }

    #[test]
    fn qa58_a_capture_that_matches_text_that_is_no_number_says_what_it_matched() {
        let p = params("command", &[("cmd", "true"), ("capture.ops", r"ops: ([0-9.,]+)")]);
        let caps = captures(&p).unwrap();
        let err = metrics(&[finished("ops: 1,234.5\n", 1.0)], &caps).unwrap_err();
        assert!(err.contains("matched '1,234.5', which is not a number"), "{err}");
        // Nor is such an execution left out of the mean of the others.
        let err = metrics(&[finished("ops: 12\n", 1.0), finished("ops: 1,2\n", 1.0)], &caps).unwrap_err();
        assert!(err.contains("matched '1,2'"), "{err}");
    }

    #[test]
    fn qa58_a_capture_matching_several_numbers_in_one_execution_is_refused() {
        let p = params("command", &[("cmd", "true"), ("capture.ops", r"ops: ([0-9.]+)")]);
        let caps = captures(&p).unwrap();
        let progress = "ops: 100\nops: 120\nops: 90\nops: 110\nops: 105\ntotal ops: 525\n";
        let err = metrics(&[finished("ops: 7\n", 1.0), finished(progress, 1.0)], &caps).unwrap_err();
        let expected =
            "matched 6 times in the output of execution 2, not always the same number (100, 120, 90, 110, ...)";
        assert!(err.contains(expected), "{err}");
        // The same number printed twice (a summary repeated at exit) is one result.
        let m = metrics(&[finished("ops: 12\nops: 12\n", 1.0)], &caps).unwrap();
        assert_eq!(m["command.ops"], 12.0);
        // Anchored, the summary alone.
        let p = params("command", &[("cmd", "true"), ("capture.ops", r"(?m)^total ops: ([0-9.]+)")]);
        assert_eq!(metrics(&[finished(progress, 1.0)], &captures(&p).unwrap()).unwrap()["command.ops"], 525.0);
    }

    #[test]
    fn a_capture_matching_nan_or_inf_fails_the_run_naming_the_capture() {
        let p = params("command", &[("cmd", "true"), ("capture.v", r"value: (\S+)")]);
        let caps = captures(&p).unwrap();
        for text in ["nan", "NaN", "inf", "-inf", "infinity"] {
            let err = metrics(&[finished(&format!("value: {text}\n"), 1.0)], &caps).unwrap_err();
            assert!(err.contains("capture.v") && err.contains(text) && err.contains("not a finite number"), "{err}");
        }
        let m = metrics(&[finished("value: -5\n", 1.0)], &caps).unwrap();
        assert_eq!(m["command.v"], -5.0, "negative numbers are fine");
    }

    #[test]
    fn executions_out_of_range_are_refused_not_clamped() {
        for bad in ["0", "1000001", "99999999999"] {
            let p = params("command", &[("cmd", "true"), ("executions", bad)]);
            match CommandProgram.plan(&p, &ctx()) {
                Err(ProgramError::BadParam { key, value, .. }) => assert_eq!((key.as_str(), value.as_str()), ("executions", bad)),
                other => panic!("executions {bad}: expected BadParam, got {:?}", other.map(|plan| plan.executions)),
            }
        }
        let p = params("command", &[("cmd", "true"), ("executions", "1000000")]);
        assert_eq!(CommandProgram.plan(&p, &ctx()).unwrap().executions, 1_000_000);
    }

    #[test]
    fn warmup_is_a_count_from_zero_and_defaults_to_none() {
        let plan = |extra: &[(&str, &str)]| {
            CommandProgram.plan(&params("command", &[&[("cmd", "true")], extra].concat()), &ctx())
        };
        assert_eq!(plan(&[]).unwrap().warmups, 0);
        assert_eq!(plan(&[("warmup", "0")]).unwrap().warmups, 0);
        assert_eq!(plan(&[("warmup", "2")]).unwrap().warmups, 2);
        for bad in ["1000001", "-1", "two"] {
            let err = plan(&[("warmup", bad)]).unwrap_err().to_string();
            assert!(err.contains("warmup"), "{bad}: {err}");
        }
    }

    #[test]
    fn provenance_is_text_from_the_output() {
        let p = params("command", &[("cmd", "true"), ("provenance.kernel", "kernel.release: (\\S+)"), ("provenance.none", "absent: (x)")]);
        let found = provenance_values("kernel.release: 6.1.0-gabc\nok\n", &provenances(&p).unwrap());
        assert_eq!(found, vec![("kernel".to_string(), "6.1.0-gabc".to_string())]);
        assert!(p.validate(CommandProgram.params(), 2).is_ok());
    }

    #[test]
    fn bad_captures_and_missing_cmd() {
        assert!(CommandProgram.plan(&params("command", &[]), &ctx()).is_err());
        let p = params("command", &[("cmd", "true"), ("capture.x", "no group")]);
        assert!(CommandProgram.plan(&p, &ctx()).unwrap_err().to_string().contains("capture group"));
        let p = params("command", &[("cmd", "true"), ("capture.x", "([0-9")]);
        assert!(CommandProgram.plan(&p, &ctx()).unwrap_err().to_string().contains("regex"));
    }
}
