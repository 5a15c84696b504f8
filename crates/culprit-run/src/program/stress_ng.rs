//! stress-ng (Debian package `stress-ng`), run as lkp's stress-ng does: one stressor or one class, with metrics.
//!
//! Param mapping (lkp's names):
//!
//! | param | stress-ng option | default |
//! |---|---|---|
//! | `test` | `--<test> <nr_threads>` | (or `class`) |
//! | `class` | `--class <class> --sequential <nr_threads>` when no `test` (`--minimize` for memory and os) | |
//! | `nr_threads` | instances (count or share of CPUs; `0` means one per CPU to stress-ng) | nr_cpu |
//! | `testtime` | `--timeout` (seconds) | `60` |
//! | `method` | `--<test>-method <method>` | `all` when the installed stress-ng lists `all` among the test's methods |
//! | `mode` | `--<test>-mode <mode>` (fallocate's `keep-size,punch-hole`) | |
//! | `type` | `--<test>-type <type>` (sock's `stream`, `seqpacket`, `dgram`) | |
//! | `sched` | `--<test>-sched <policy>` when the installed stress-ng has it, else `--workload-sched <policy>` | |
//! | `advise` | `--madvise-advise <advice>` | |
//! | `hdd_opts` | `--hdd-opts <options>` | |
//!
//! These six shape one stressor, as in lkp's `programs/stress-ng/run`, so they need `test`: with only a `class` lkp
//! drops them without a word, and Culprit refuses them instead. `sched` follows lkp to the letter, so that numbers
//! compare with lkp's: stress-ng's `--workload-sched` shapes only its `workload` stressor, so for a stressor without
//! a `--<test>-sched` of its own (lkp's `pipe`, `pthread`) the policy changes nothing, in lkp as here. lkp's run also gives some stressors an option of
//! their own, and so does Culprit: `--oom-avoid` to those that otherwise get the machine's OOM killer involved
//! (`bigheap`, `brk`, `sockpair`, ...), `--pathological` to those stress-ng skips unless told (`cpu-online`,
//! `sysinval`, ...). lkp's sysctls (`kernel.sched_autogroup_enabled=0` always, `fs.aio-max-nr` for `aio`, ...) are
//! settings of the test box, which Culprit does not make: `culprit run` names those that differ on the machine.
//!
//! stress-ng skips `exec`, `spawn` and `bad-ioctl` when run by root, so lkp runs them as its unprivileged user
//! `lkp` (`su - lkp -c "stress-ng ..."`). Culprit run by root does the same as `nobody`: the scratch directory is
//! given to `nobody` (stress-ng's temporary files go there) and stress-ng runs under `setpriv --reuid=nobody
//! --regid=nogroup --clear-groups`, which execs it in place, so stopping the run stops it as any other.
//!
//! Always: `--times --verify --metrics --no-rand-seed`, in the scratch directory (file stressors write there), with
//! stderr folded into stdout because stress-ng logs its metrics there. `culprit_parse::stress_ng` turns the metrics
//! table into `stress-ng.<stressor>.ops_per_sec` and `stress-ng.<stressor>.ops`.
//!
//! Before anything runs, `test` and `class` are checked against what the installed stress-ng offers
//! (`stress-ng --stressors`, and the classes it lists for `--class '?'`), asked once per process: stress-ng only
//! refuses an unknown stressor when it starts, which would store every run as failed. For the same reason each of the
//! six options above is tried with `stress-ng --dry-run` before the first run: lkp's job files follow the newest
//! stress-ng, and an older one refuses methods, socket types or whole options it does not have yet.

use super::{
    ask_installed, edit_distance, last_line, ParamKind, ParamSpec, Params, Program, ProgramContext, ProgramError,
    ProgramPlan,
};
use crate::process::{Finished, Invocation};
use std::sync::OnceLock;
use std::time::Duration;

pub struct StressNg;

const SPECS: &[ParamSpec] = &[
    ParamSpec { name: "test", kind: ParamKind::Text, doc: "the stressor, e.g. xattr, cpu, switch" },
    ParamSpec { name: "class", kind: ParamKind::Text, doc: "a stressor class, run sequentially when no test is given" },
    ParamSpec { name: "nr_threads", kind: ParamKind::CountOrShare, doc: "instances, or a share of the CPUs" },
    ParamSpec { name: "testtime", kind: ParamKind::Duration, doc: "time per stressor" },
    ParamSpec { name: "method", kind: ParamKind::Text, doc: "the stressor's method (--<test>-method)" },
    ParamSpec { name: "mode", kind: ParamKind::Text, doc: "the stressor's mode (--<test>-mode)" },
    ParamSpec { name: "type", kind: ParamKind::Text, doc: "the stressor's type (--<test>-type)" },
    ParamSpec { name: "sched", kind: ParamKind::Text, doc: "a scheduling policy (--<test>-sched)" },
    ParamSpec { name: "advise", kind: ParamKind::Text, doc: "madvise's advice (--madvise-advise)" },
    ParamSpec { name: "hdd_opts", kind: ParamKind::Text, doc: "hdd's options (--hdd-opts)" },
];

/// The params that shape one stressor, in the order lkp adds their options.
const TEST_OPTIONS: [&str; 6] = ["method", "mode", "type", "advise", "hdd_opts", "sched"];

/// Stressors lkp runs with `--oom-avoid`: without it they drive the machine into the OOM killer.
const OOM_AVOID: &[&str] = &[
    "sockpair", "bigheap", "brk", "loadavg", "memthrash", "mmaphuge", "mmapcow", "mmapmany", "pageswap", "secretmem",
];

/// Stressors lkp runs with `--pathological`: stress-ng skips them unless told, and a run would measure nothing.
const PATHOLOGICAL: &[&str] =
    &["bad-ioctl", "sysinval", "cpu-online", "mlockmany", "oom-pipe", "bind-mount", "watchdog", "smi"];

/// Stressors stress-ng skips when run as root, which lkp runs as its unprivileged user `lkp`.
const NOT_AS_ROOT: &[&str] = &["exec", "spawn", "bad-ioctl"];
/// The unprivileged user and group those stressors run as when culprit is root (Debian's `nobody` and `nogroup`).
const UNPRIVILEGED: (&str, &str) = ("nobody", "nogroup");

/// Whether `test` must run as an unprivileged user because culprit runs as root (`euid` 0): stress-ng skips it for
/// root, and every run would fail with "no metrics", the reason only in its output.
fn needs_unprivileged_user(test: &str, euid: u32) -> bool {
    euid == 0 && NOT_AS_ROOT.contains(&test)
}

/// The plan of `main` run as [`UNPRIVILEGED`], as lkp runs these stressors as its user `lkp`: the scratch directory,
/// stress-ng's working and temporary directory, is given to that user first.
fn as_unprivileged_user(main: Invocation, scratch: &std::path::Path) -> ProgramPlan {
    let (user, group) = UNPRIVILEGED;
    let owner = format!("{user}:{group}");
    let chown = Invocation::new(["chown".to_string(), owner, scratch.display().to_string()]);
    let (reuid, regid) = (format!("--reuid={user}"), format!("--regid={group}"));
    let mut argv: Vec<String> = ["setpriv", &reuid, &regid, "--clear-groups", "--"].map(String::from).to_vec();
    argv.extend(main.argv.iter().cloned());
    let wrapped = Invocation { argv, ..main };
    ProgramPlan { setup: vec![chown], ..ProgramPlan::single(wrapped) }
}

/// Refuses a stressor that must run unprivileged when this machine has no `nobody` or no `setpriv` to run it so.
fn check_unprivileged_user(test: &str) -> Result<(), ProgramError> {
    let missing = if !crate::process::user_exists(UNPRIVILEGED.0) {
        format!("the user '{}'", UNPRIVILEGED.0)
    } else if crate::process::find_in_path("setpriv").is_none() {
        "setpriv (Debian's util-linux)".to_string()
    } else {
        return Ok(());
    };
    Err(ProgramError::BadParam {
        program: "stress-ng",
        key: "test".into(),
        value: test.into(),
        reason: format!(
            "stress-ng skips the {test} stressor when run as root, so culprit runs it as '{}' through setpriv, and \
             this machine lacks {missing}; run this job with culprit as a user other than root",
            UNPRIVILEGED.0
        ),
    })
}

/// An option value as lkp's job files give them (`keep-size,punch-hole`, `clock_ns`); one starting with `-` would
/// read as an option of its own.
fn valid_value(v: &str) -> bool {
    !v.starts_with('-') && v.chars().all(|c| c.is_ascii_alphanumeric() || "-_,.+".contains(c))
}

/// The stress-ng option one of [`TEST_OPTIONS`] becomes for `test`. `help` is the installed stress-ng's `--help`:
/// `sched` is the stressor's own option where it has one and stress-ng's workload option otherwise, as lkp does.
fn option_flag(key: &str, test: &str, help: Option<&str>) -> String {
    match key {
        "advise" => "--madvise-advise".to_string(),
        "hdd_opts" => "--hdd-opts".to_string(),
        "sched" if help.is_some_and(|h| !has_option(h, &format!("--{test}-sched"))) => "--workload-sched".to_string(),
        other => format!("--{test}-{other}"),
    }
}

/// Whether `help` lists `flag` at the start of one of its option lines.
fn has_option(help: &str, flag: &str) -> bool {
    help.lines().any(|line| line.split_whitespace().any(|word| word == flag) && line.trim_start().starts_with('-'))
}

/// Whether `help` lists `all` among the methods of `test` (`--list-method M  select list method: all, circleq`),
/// which lkp then runs by default so that every method is measured, not only stress-ng's default one.
fn offers_all_methods(help: &str, test: &str) -> bool {
    let flag = format!("--{test}-method");
    help.lines().any(|line| {
        let mut words = line.split_whitespace();
        words.next() == Some(flag.as_str()) && {
            let rest: Vec<&str> = words.collect();
            let rest = rest.join(" ");
            rest.contains("all,") || rest.split_once('[').is_some_and(|(_, list)| list.contains("all"))
        }
    })
}

/// The options one stressor's run gets besides `--<test> <instances>`, in lkp's order.
fn test_options(test: &str, p: &Params, help: Option<&str>) -> Result<Vec<String>, ProgramError> {
    let mut options = Vec::new();
    if OOM_AVOID.contains(&test) {
        options.push("--oom-avoid".to_string());
    }
    if PATHOLOGICAL.contains(&test) {
        options.push("--pathological".to_string());
    }
    if p.get("method").is_none() && help.is_some_and(|h| offers_all_methods(h, test)) {
        options.extend([format!("--{test}-method"), "all".to_string()]);
    }
    for key in TEST_OPTIONS {
        let Some(value) = p.get(key) else { continue };
        if !valid_value(value) {
            return Err(ProgramError::BadParam {
                program: "stress-ng",
                key: key.into(),
                value: value.into(),
                reason: "expected a word or a comma-separated list such as keep-size,punch-hole".into(),
            });
        }
        options.extend([option_flag(key, test, help), value.to_string()]);
    }
    Ok(options)
}

/// The installed stress-ng's `--help`, asked once per process; `None` when it cannot be asked.
fn installed_help() -> Option<&'static str> {
    static HELP: OnceLock<Option<String>> = OnceLock::new();
    HELP.get_or_init(|| ask(&["--help"]).map(|(out, err)| format!("{out}{err}")).filter(|h| !h.is_empty()))
        .as_deref()
}

fn valid_word(v: &str) -> bool {
    !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Runs the installed stress-ng with `args` and returns its standard output and error; `None` when it cannot be
/// asked (it then runs as it would have, and a run that fails says why).
fn ask(args: &[&str]) -> Option<(String, String)> {
    run_installed(args).map(|finished| (finished.stdout, finished.stderr))
}

/// The installed stress-ng run with `args` by [`ask_installed`]: listing and `--dry-run` are instant, and the limit
/// only keeps a wedged binary from hanging the check.
fn run_installed(args: &[&str]) -> Option<crate::process::Finished> {
    let argv: Vec<&str> = std::iter::once("stress-ng").chain(args.iter().copied()).collect();
    ask_installed(&argv, Duration::from_secs(10))
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
                argv.extend(test_options(test, p, installed_help())?);
                argv.extend([format!("--{test}"), instances.to_string()]);
            }
            (None, Some(class)) => {
                if let Some(key) = TEST_OPTIONS.iter().find(|key| p.get(key).is_some()) {
                    return Err(ProgramError::BadParam {
                        program: "stress-ng",
                        key: key.to_string(),
                        value: p.get(key).unwrap_or_default().into(),
                        reason: format!(
                            "'{key}' shapes one stressor, and this job runs the class '{class}' (lkp ignores it \
                             there); name the stressor with test:, or remove '{key}'"
                        ),
                    });
                }
                if !valid_word(class) {
                    return Err(ProgramError::BadParam {
                        program: "stress-ng",
                        key: "class".into(),
                        value: class.into(),
                        reason: "expected a class name such as filesystem or cpu".into(),
                    });
                }
                argv.extend(["--class".into(), class.to_string(), "--sequential".into(), instances.to_string()]);
                // lkp runs the memory and os classes at their smallest sizes, which a whole class of stressors at
                // their defaults would exhaust the memory with.
                if class == "memory" || class == "os" {
                    argv.push("--minimize".into());
                }
                // lkp excludes stressors that cannot run as root or that take the machine down, and in the memory
                // class the stack stressor, which a class run does not survive.
                let exclude = if class == "memory" { "spawn,exec,swap,stack" } else { "spawn,exec,swap" };
                argv.extend(["--exclude".into(), exclude.into()]);
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
        match p.get("test") {
            Some(test) if needs_unprivileged_user(test, crate::process::effective_uid()) => {
                Ok(as_unprivileged_user(inv, &ctx.scratch_dir))
            }
            _ => Ok(ProgramPlan::single(inv)),
        }
    }

    /// lkp's `setup_sysctl` for every run, and its `setup_test`'s sysctls for the stressors that exhaust a limit
    /// otherwise (message queues, async I/O contexts, inotify watches, the listen backlog, ping sockets).
    fn lkp_sysctls(&self, p: &Params, nr_cpu: u32) -> Vec<(&'static str, String)> {
        let mut set = vec![("kernel.sched_autogroup_enabled", "0".to_string())];
        let instances = p.count_or_share("nr_threads", nr_cpu).ok().flatten().unwrap_or(u64::from(nr_cpu));
        let mut add = |name: &'static str, value: String| set.push((name, value));
        match p.get("test") {
            Some("ping-sock") => add("net.ipv4.ping_group_range", format!("0 {instances}")),
            Some("mq") => {
                add("fs.mqueue.queues_max", "2048".into());
                add("fs.mqueue.msg_max", "2048".into());
            }
            Some("aio" | "aiol") => add("fs.aio-max-nr", "1048576".into()),
            Some("inotify" | "dnotify") => {
                add("fs.inotify.max_user_instances", "8192".into());
                add("fs.inotify.max_user_watches", "524288".into());
            }
            Some("epoll" | "sock" | "sockmany" | "sockpair" | "udp" | "udp-flood") => {
                add("net.core.somaxconn", "4096".into())
            }
            _ => {}
        }
        set
    }

    /// stress-ng ends even a failed run with `successful run completed in 0.00s`, which said nothing of lkp's tmpfs
    /// stressor finding no tmpfs to write to: the line that says why is its last error or failure, else, for a
    /// stressor that `aborted early, out of system resources`, that stressor's own last line (`rawdev: cannot open
    /// raw block device: errno=1 (Operation not permitted)`), else that warning.
    fn failure_line<'a>(&self, finished: &'a Finished) -> Option<&'a str> {
        stress_ng_failure_line(&finished.stdout).or_else(|| last_line(&finished.stderr))
    }

    /// `test` (or `class` without one) against what the installed stress-ng offers.
    fn check_offered(&self, p: &Params) -> Result<(), ProgramError> {
        match (p.get("test"), p.get("class")) {
            (Some(test), _) => {
                if let Some(offered) = installed_stressors() {
                    check_name("test", test, offered, "stressor", "stress-ng --stressors")?;
                }
                if needs_unprivileged_user(test, crate::process::effective_uid()) {
                    check_unprivileged_user(test)?;
                }
                check_test_options(test, p)
            }
            (None, Some(class)) => match installed_classes() {
                Some(offered) => check_name("class", class, offered, "class", "stress-ng --class '?'"),
                None => Ok(()),
            },
            (None, None) => Ok(()),
        }
    }
}

/// See [`StressNg::failure_line`]; `output` is stress-ng's stdout with its stderr folded in.
fn stress_ng_failure_line(output: &str) -> Option<&str> {
    let lines: Vec<&str> = output.lines().map(str::trim).filter(|line| !line.is_empty()).collect();
    let failure = |line: &&&str| line.starts_with("stress-ng: error:") || line.starts_with("stress-ng: fail:");
    if let Some(line) = lines.iter().rev().find(failure) {
        return Some(line);
    }
    // `stress-ng: warn:  [12825] process [12829] (rawdev) aborted early, out of system resources`
    let aborted = lines.iter().rposition(|line| line.contains(") aborted early"));
    if let Some(at) = aborted {
        let pid = lines[at].split("process [").nth(1).and_then(|rest| rest.split(']').next());
        let own = pid.and_then(|pid| {
            let tag = format!("[{pid}] ");
            lines[..at].iter().rev().find(|line| line.contains(&tag))
        });
        return Some(own.copied().unwrap_or(lines[at]));
    }
    lines.last().copied()
}

/// The stressors a run's metrics say did no work: lkp's parser stores a stressor whose bogo-op count is 0 as
/// `<stressor>.fail: 1` and nothing else, and stress-ng exits 0 for a stressor it skipped (lkp's dccp job on a kernel
/// without DCCP), so the run is ok and measured nothing of it. `metrics` are a run's, with the `stress-ng.` prefix.
/// The parser's `sigaction.fail` (stress-ng could not install its signal handlers) names no stressor.
pub fn idle_stressors(metrics: &std::collections::BTreeMap<String, f64>) -> Vec<&str> {
    idle_stressors_among(metrics.keys().map(String::as_str), |name| metrics.contains_key(name))
}

/// [`idle_stressors`] of any set of metric names (a comparison's rows as well as a run's metrics): the rule lives
/// in the pure core, where the report's headline reads it too.
pub use culprit_core::compare::idle::idle_stressors_among;

/// The line of stress-ng's output that says why `stressor` did no work: its failure or error, else the line where
/// stress-ng skipped it (`dccp: DCCP protocol not supported, skipping stressor`).
pub fn why_idle<'a>(output: &'a str, stressor: &str) -> Option<&'a str> {
    let own = format!("] {stressor}: ");
    let lines = || output.lines().map(str::trim).filter(|line| line.contains(&own));
    let failure = |line: &&str| line.starts_with("stress-ng: fail:") || line.starts_with("stress-ng: error:");
    lines().find(failure).or_else(|| lines().find(|line| line.contains("skipping")))
}

/// Tries each of the job's [`TEST_OPTIONS`] with the installed stress-ng (`--dry-run`, which parses the options and
/// runs nothing), so that a method, type or option it does not have is refused with its line before the first run.
fn check_test_options(test: &str, p: &Params) -> Result<(), ProgramError> {
    for key in TEST_OPTIONS {
        let Some(value) = p.get(key) else { continue };
        let flag = option_flag(key, test, installed_help());
        let args = ["--dry-run", "--timeout", "1", &format!("--{test}"), "1", &flag, value];
        let Some((out, err)) = refusal(&args) else { continue };
        let said = format!("{out}\n{err}");
        let said = said.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with("Try '")).unwrap_or("");
        return Err(refused_option(key, value, &flag, said));
    }
    Ok(())
}

/// Runs the installed stress-ng with `args`: its output when it refused them, `None` when it accepted them (or
/// cannot be asked, when a run says why).
fn refusal(args: &[&str]) -> Option<(String, String)> {
    let finished = run_installed(args)?;
    (!finished.exit.success()).then_some((finished.stdout, finished.stderr))
}

/// The refusal of a stressor option the installed stress-ng does not take, with its own words.
fn refused_option(key: &str, value: &str, flag: &str, said: &str) -> ProgramError {
    ProgramError::BadParam {
        program: "stress-ng",
        key: key.into(),
        value: value.into(),
        reason: format!(
            "the installed stress-ng refuses '{flag} {value}' ({said}); give a value it takes, remove '{key}', or \
             install a newer stress-ng (lkp's job files follow the newest)"
        ),
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

    /// Lines as `stress-ng --help` prints them, for command lines that do not depend on the installed version.
    const HELP: &str = "      --cyclic-method M     specify cyclic method M, default is clock_ns
      --list-method M       select list method: all, circleq, list, slist,
      --tree-method M       select tree method [ all | avl | binary ]
      --cpu-method M        specify stress cpu method M, default is all
      --sock-type T         socket type (stream, seqpacket)
      --sched type          set scheduler type
      --pthread-sched P     scheduling policy of the threads";

    fn options(pairs: &[(&str, &str)]) -> Result<Vec<String>, ProgramError> {
        let p = params("stress-ng", pairs);
        test_options(p.get("test").unwrap_or("cpu"), &p, Some(HELP))
    }

    #[test]
    fn qa14b_lkps_stressor_options_become_its_command_line() {
        let got = options(&[("test", "cyclic"), ("method", "usleep")]).unwrap();
        assert_eq!(got.join(" "), "--cyclic-method usleep");
        assert_eq!(options(&[("test", "sock"), ("type", "dgram")]).unwrap().join(" "), "--sock-type dgram");
        let got = options(&[("test", "fallocate"), ("mode", "keep-size,punch-hole")]).unwrap();
        assert_eq!(got.join(" "), "--fallocate-mode keep-size,punch-hole");
        assert_eq!(options(&[("test", "madvise"), ("advise", "cold")]).unwrap().join(" "), "--madvise-advise cold");
        assert_eq!(options(&[("test", "hdd"), ("hdd_opts", "direct")]).unwrap().join(" "), "--hdd-opts direct");
        // sched is the stressor's own option where the installed stress-ng has one, its workload option otherwise.
        assert_eq!(options(&[("test", "pthread"), ("sched", "rr")]).unwrap().join(" "), "--pthread-sched rr");
        assert_eq!(options(&[("test", "pipe"), ("sched", "rr")]).unwrap().join(" "), "--workload-sched rr");
        let p = params("stress-ng", &[("test", "pipe"), ("sched", "rr")]);
        assert_eq!(test_options("pipe", &p, None).unwrap().join(" "), "--pipe-sched rr");
        // A value that would read as an option, or as more than one word, is refused with its key.
        for bad in ["-x", "a b", "rr;ls"] {
            match options(&[("test", "pipe"), ("sched", bad)]) {
                Err(ProgramError::BadParam { key, .. }) => assert_eq!(key, "sched"),
                other => panic!("sched {bad:?}: {other:?}"),
            }
        }
        // The whole command line: the options come before the stressor, as in lkp's run.
        let p = params("stress-ng", &[("test", "sock"), ("type", "stream"), ("testtime", "2s"), ("nr_threads", "1")]);
        let shown = StressNg.plan(&p, &ctx()).unwrap().main.display();
        assert!(shown.ends_with("--no-rand-seed --sock-type stream --sock 1"), "{shown}");
    }

    #[test]
    fn qa14b_lkps_defaults_and_own_options_per_stressor() {
        // Without a method lkp runs all of them where stress-ng lists `all` among them (not where it is only the
        // default), so that every method is measured.
        assert_eq!(options(&[("test", "list")]).unwrap().join(" "), "--list-method all");
        assert_eq!(options(&[("test", "tree")]).unwrap().join(" "), "--tree-method all");
        assert!(options(&[("test", "cpu")]).unwrap().is_empty());
        assert!(options(&[("test", "cyclic")]).unwrap().is_empty());
        assert_eq!(options(&[("test", "list"), ("method", "slist")]).unwrap().join(" "), "--list-method slist");
        assert_eq!(options(&[("test", "brk")]).unwrap().join(" "), "--oom-avoid");
        assert_eq!(options(&[("test", "cpu-online")]).unwrap().join(" "), "--pathological");
        let class = |name: &str| {
            let shown = StressNg.plan(&params("stress-ng", &[("class", name)]), &ctx()).unwrap().main.display();
            shown.split_once(" --class ").map(|(_, rest)| rest.to_string()).unwrap_or(shown)
        };
        assert_eq!(class("memory"), "memory --sequential 4 --minimize --exclude spawn,exec,swap,stack");
        assert_eq!(class("os"), "os --sequential 4 --minimize --exclude spawn,exec,swap");
        assert_eq!(class("cpu"), "cpu --sequential 4 --exclude spawn,exec,swap");
        // With a class they would be dropped, so they are refused.
        let p = params("stress-ng", &[("class", "cpu"), ("method", "all")]);
        let err = StressNg.plan(&p, &ctx()).unwrap_err().to_string();
        assert!(err.contains("param 'method'") && err.contains("name the stressor with test:"), "{err}");
    }

    #[test]
    fn a_stressor_stress_ng_skips_for_root_runs_as_nobody_when_root_runs() {
        assert!(!needs_unprivileged_user("exec", 1000));
        assert!(!needs_unprivileged_user("cpu", 0));
        assert!(NOT_AS_ROOT.iter().all(|test| needs_unprivileged_user(test, 0)));
        let main = Invocation::new(["stress-ng", "--exec", "2"]).in_dir(std::path::Path::new("/s/run-1"));
        let plan = as_unprivileged_user(main, std::path::Path::new("/s/run-1"));
        assert_eq!(plan.setup.iter().map(Invocation::display).collect::<Vec<_>>(), ["chown nobody:nogroup /s/run-1"]);
        let expected = "setpriv --reuid=nobody --regid=nogroup --clear-groups -- stress-ng --exec 2";
        assert_eq!(plan.main.display(), expected);
        assert_eq!(plan.main.cwd.as_deref(), Some(std::path::Path::new("/s/run-1")));
    }

    #[test]
    fn qa14b_the_sysctls_lkps_run_sets() {
        let sysctls = |pairs: &[(&str, &str)]| {
            let set = StressNg.lkp_sysctls(&params("stress-ng", pairs), 4);
            set.iter().map(|(name, value)| format!("{name}={value}")).collect::<Vec<_>>().join(" ")
        };
        assert_eq!(sysctls(&[("test", "cpu")]), "kernel.sched_autogroup_enabled=0");
        assert_eq!(sysctls(&[("class", "os")]), "kernel.sched_autogroup_enabled=0");
        assert_eq!(sysctls(&[("test", "aio")]), "kernel.sched_autogroup_enabled=0 fs.aio-max-nr=1048576");
        let mq = "kernel.sched_autogroup_enabled=0 fs.mqueue.queues_max=2048 fs.mqueue.msg_max=2048";
        assert_eq!(sysctls(&[("test", "mq")]), mq);
        let ping = sysctls(&[("test", "ping-sock"), ("nr_threads", "50%")]);
        assert!(ping.ends_with(" net.ipv4.ping_group_range=0 2"), "{ping}");
    }

    #[test]
    fn qa14b_an_option_value_the_installed_stress_ng_refuses_is_refused_with_its_words() {
        // `usleep` is a cyclic method in every stress-ng that has the stressor; no stress-ng has the other.
        assert_eq!(check_test_options("cyclic", &params("stress-ng", &[("method", "usleep")])), Ok(()));
        let err = check_test_options("cyclic", &params("stress-ng", &[("method", "nosuchmethod")])).unwrap_err();
        let err = err.to_string();
        let head = "stress-ng: param 'method' = 'nosuchmethod': the installed stress-ng refuses";
        assert!(err.starts_with(head), "{err}");
        assert!(err.contains("'--cyclic-method nosuchmethod' (cyclic-method must be one of:"), "{err}");
        assert!(err.contains("install a newer stress-ng"), "{err}");
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

    /// What stress-ng 0.15 printed for lkp's tmpfs and rawdev stressors on a machine without a writable tmpfs or a
    /// raw device it may open (both exit 3 and end with `successful run completed`, which was the runs' reason).
    #[test]
    fn a_failed_run_is_explained_by_the_stressors_error_not_by_the_last_line() {
        let tmpfs = "stress-ng: info:  [29674] setting to a 3 second run per stressor
stress-ng: info:  [29674] dispatching hogs: 2 tmpfs
stress-ng: error: [29679] tmpfs: cannot find writeable free space on a tmpfs filesystem
stress-ng: error: [29678] tmpfs: cannot find writeable free space on a tmpfs filesystem
stress-ng: warn:  [29674] process [29678] (tmpfs) aborted early, out of system resources
stress-ng: warn:  [29674] process [29679] (tmpfs) aborted early, out of system resources
stress-ng: metrc: [29674] tmpfs                 0      0.00      0.00      0.00         0.00           0.00
stress-ng: info:  [29674] successful run completed in 0.00s
";
        let said = "stress-ng: error: [29678] tmpfs: cannot find writeable free space on a tmpfs filesystem";
        assert_eq!(stress_ng_failure_line(tmpfs), Some(said));
        let rawdev = "stress-ng: info:  [12825] dispatching hogs: 2 rawdev
stress-ng: info:  [12829] rawdev: cannot open raw block device: errno=1 (Operation not permitted)
stress-ng: warn:  [12825] process [12829] (rawdev) aborted early, out of system resources
stress-ng: info:  [12830] rawdev: cannot open raw block device: errno=13 (Permission denied)
stress-ng: warn:  [12825] process [12830] (rawdev) aborted early, out of system resources
stress-ng: info:  [12825] successful run completed in 0.01s
";
        let said = "stress-ng: info:  [12830] rawdev: cannot open raw block device: errno=13 (Permission denied)";
        assert_eq!(stress_ng_failure_line(rawdev), Some(said));
        // An aborted stressor that said nothing of its own is reported by the warning; a run with neither by its
        // last line.
        let warning = "stress-ng: warn:  [7] process [9] (x) aborted early, out of system resources";
        assert_eq!(stress_ng_failure_line(&format!("{warning}\nstress-ng: info:  [7] done\n")), Some(warning));
        assert_eq!(stress_ng_failure_line("a\n\nb  \n\n"), Some("b"));
        assert_eq!(stress_ng_failure_line(""), None);
    }

    /// What stress-ng 0.15 printed for lkp's dccp job on a kernel without DCCP (6.16 removed it) and for its cyclic
    /// job whose instances could not get SCHED_DEADLINE: both exit 0, with `<stressor>.fail: 1` as their one metric.
    #[test]
    fn a_stressor_that_did_no_work_is_found_with_the_line_that_says_why() {
        let metrics = |pairs: &[(&str, f64)]| pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let idle = metrics(&[("stress-ng.dccp.fail", 1.0), ("vmstat.cpu.us", 3.0)]);
        assert_eq!(idle_stressors(&idle), ["dccp"]);
        let busy = metrics(&[("stress-ng.udp.ops", 9.0), ("stress-ng.udp.pass", 1.0), ("stress-ng.x.rate.fail", 1.0)]);
        assert!(idle_stressors(&busy).is_empty());
        assert!(idle_stressors(&metrics(&[("stress-ng.sigaction.fail", 1.0)])).is_empty());
        let dccp = "stress-ng: info:  [20519] dispatching hogs: 2 dccp
stress-ng: info:  [20523] dccp: DCCP protocol not supported, skipping stressor
stress-ng: metrc: [20519] dccp                  0      0.00      0.00      0.00         0.00           0.00
stress-ng: info:  [20519] successful run completed in 0.00s
";
        let said = "stress-ng: info:  [20523] dccp: DCCP protocol not supported, skipping stressor";
        assert_eq!(why_idle(dccp, "dccp"), Some(said));
        let cyclic = "stress-ng: info:  [23975] cyclic: for best results, run just 1 instance of this stressor
stress-ng: fail:  [23977] cyclic: sched_setscheduler failed: errno=16 (Device or resource busy)
stress-ng: info:  [23975] cyclic: SCHED_DEADLINE: no latency information available
";
        let said = "stress-ng: fail:  [23977] cyclic: sched_setscheduler failed: errno=16 (Device or resource busy)";
        assert_eq!(why_idle(cyclic, "cyclic"), Some(said));
        assert_eq!(why_idle(dccp, "cyclic"), None);
    }
}
