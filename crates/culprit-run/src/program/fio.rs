//! fio, the flexible I/O tester (Debian package `fio`), run as lkp's fio-basic does.
//!
//! Param mapping (lkp's `fio-setup-basic` names and defaults):
//!
//! | param | fio option | default |
//! |---|---|---|
//! | `rw` | `--rw` | `write` |
//! | `bs` | `--bs` | `4k` |
//! | `ioengine` | `--ioengine` | `sync` |
//! | `iodepth` | `--iodepth` | `32` |
//! | `direct` | `--direct` (`direct`/`true`/`1` → 1) | `0` |
//! | `test_size` (required) | `--size` = test_size / nr_task, per task | |
//! | `nr_task` | `--numjobs` (count or share of CPUs, `50%`) | `1` |
//! | `runtime` | `--runtime` (seconds) | `300` |
//! | `time_based` | `--time_based` when set (`tb`, `true`, `1`) | off |
//!
//! The rest of lkp's `fio-setup-basic` options are passed only when the job gives them, each as lkp's script writes
//! it into its fio task file. A yes/no option is read as lkp's `parse_bool` reads it: empty, or starting with `0`,
//! `no`, `false` or `n`, is no; anything else is yes.
//!
//! - `buffered`: `--buffered=0`/`1`, after `--direct` so that it wins, as in lkp's task file (`buffered: 0` is
//!   O_DIRECT).
//! - `invalidate`, `pre_read`, `allrandrepeat`: `--invalidate=`, `--pre_read=`, `--allrandrepeat=` `0`/`1`.
//! - `norandommap`, `refill_buffers`, `exitall`, `stonewall`: the bare option when yes.
//! - `group_reporting`: nothing more, `--group_reporting` is always given.
//! - `fallocate`, `file_service_type`, `random_distribution`, `random_generator`: the option with the text as is.
//! - `nr_files`: `--nrfiles`.
//! - `filesize`, `io_size`, `offset_increment`: `--filesize`, `--io_size`, `--offset_increment` in bytes; with
//!   `offset_increment`, lkp drops `nr_files`, `filesize`, `invalidate`, `fallocate` and `io_size`, and so does this
//!   mapping.
//! - `rwmixread`: `--rwmixread`; `ramp_time`: `--ramp_time` in seconds.
//! - `cpuload`, `donorname`: `--cpuload`, `--donorname` when yes (for the `cpuio` and `e4defrag` engines).
//! - `cpus_allowed_policy`, `cpus_allowed`: `--cpus_allowed_policy` (`split`, `shared`), `--cpus_allowed`; as in
//!   lkp, `split` needs `cpus_allowed` and no other policy takes it. A `cpus_allowed` naming a CPU this machine lacks
//!   (lkp's `0-127` on a smaller box) or culprit's affinity excludes (`taskset`, a cpuset cgroup) is refused before
//!   `culprit run` runs anything, since fio would fail every run on it; `culprit split` writes it as it is, for the
//!   machine the file is meant for.
//! - `numa_mem_policy`, `numa_cpu_nodes`: `--numa_mem_policy`, `--numa_cpu_nodes`; lkp's `MODE:even` and `even`
//!   spread its tasks (one a storage) over the nodes, and Culprit's one task is lkp's first, on node 0.
//! - `testfile`: `--filename=fio_testfile` when `y`: every task shares one file, as in lkp.
//! - `iodepth_by_instance`: the first of its values replaces `iodepth`: Culprit runs lkp's instance 1 (and refuses
//!   `nr_instances` above 1).
//! - `raw_disk`: refused when yes: lkp then runs fio on the disk's partitions themselves, where Culprit runs it on
//!   files in the scratch directory.
//!
//! An `ioengine` the installed fio lacks (`fio --enghelp`) is refused before the first run.
//!
//! lkp's script always writes `buffered=$buffered`, which is `buffered=0` when the job does not give it, and fio
//! then opens its files O_DIRECT whatever `direct` says; Culprit passes `buffered` only when the job gives it, so a
//! job without it runs buffered unless it says `direct`. Give `buffered: 0` to measure as lkp's script does;
//! `culprit run` says so for a job in lkp's form (with a `fio-setup-basic` hash) that gives no `buffered`.
//!
//! Always: `--output-format=json --group_reporting --directory=<scratch dir> --name=culprit-fio`. The JSON goes to
//! stdout and is parsed by `culprit_parse::fio` into `fio.write_iops`, `fio.write_clat_mean_ns`, ... A `test_size`
//! larger than the scratch directory's file system has free is refused before the first run (`culprit run`).

use super::{
    ask_installed, last_line, lkp_bool, ParamKind, ParamSpec, Params, Program, ProgramContext, ProgramError,
    ProgramPlan,
};
use crate::process::{Finished, Invocation};
use std::sync::OnceLock;
use std::time::Duration;

pub struct Fio;

const SPECS: &[ParamSpec] = &[
    ParamSpec { name: "rw", kind: ParamKind::OneOf(&["read", "write", "randread", "randwrite", "rw", "randrw", "readwrite", "trim", "randtrim"]), doc: "I/O pattern" },
    ParamSpec { name: "bs", kind: ParamKind::Size, doc: "block size" },
    ParamSpec { name: "ioengine", kind: ParamKind::Text, doc: "fio ioengine: sync, psync, libaio, io_uring, mmap, ..." },
    ParamSpec { name: "iodepth", kind: ParamKind::Count, doc: "queue depth for async engines" },
    ParamSpec { name: "direct", kind: ParamKind::Text, doc: "O_DIRECT: direct/true/1 or 0" },
    ParamSpec { name: "test_size", kind: ParamKind::Size, doc: "total bytes over all tasks" },
    ParamSpec { name: "nr_task", kind: ParamKind::CountOrShare, doc: "number of fio jobs, or a share of the CPUs" },
    ParamSpec { name: "runtime", kind: ParamKind::Duration, doc: "run time" },
    ParamSpec { name: "time_based", kind: ParamKind::Text, doc: "keep running for runtime even after test_size is done (tb)" },
    ParamSpec { name: "buffered", kind: ParamKind::Text, doc: "buffered I/O (yes/no); no is O_DIRECT" },
    ParamSpec { name: "invalidate", kind: ParamKind::Text, doc: "drop the files' page cache before I/O (yes/no)" },
    ParamSpec { name: "pre_read", kind: ParamKind::Text, doc: "read the files into memory first (yes/no)" },
    ParamSpec { name: "allrandrepeat", kind: ParamKind::Text, doc: "seed every random generator repeatably (yes/no)" },
    ParamSpec { name: "norandommap", kind: ParamKind::Text, doc: "random offsets without a map of those done" },
    ParamSpec { name: "refill_buffers", kind: ParamKind::Text, doc: "refill the I/O buffers on every submit" },
    ParamSpec { name: "exitall", kind: ParamKind::Text, doc: "stop every task when one finishes" },
    ParamSpec { name: "stonewall", kind: ParamKind::Text, doc: "wait for the jobs before" },
    ParamSpec { name: "group_reporting", kind: ParamKind::Text, doc: "always on" },
    ParamSpec { name: "fallocate", kind: ParamKind::Text, doc: "file layout: none, native, posix, keep, ..." },
    ParamSpec { name: "file_service_type", kind: ParamKind::Text, doc: "file choice: roundrobin, sequential, ..." },
    ParamSpec { name: "random_distribution", kind: ParamKind::Text, doc: "random, zipf:1.2, normal:20, ..." },
    ParamSpec { name: "random_generator", kind: ParamKind::Text, doc: "tausworthe, lfsr, tausworthe64" },
    ParamSpec { name: "nr_files", kind: ParamKind::Positive, doc: "files per task" },
    ParamSpec { name: "filesize", kind: ParamKind::Size, doc: "size of each file" },
    ParamSpec { name: "io_size", kind: ParamKind::Size, doc: "bytes of I/O per task" },
    ParamSpec { name: "offset_increment", kind: ParamKind::Size, doc: "offset between the tasks' regions of one file" },
    ParamSpec { name: "rwmixread", kind: ParamKind::Count, doc: "percent of reads in a mixed workload" },
    ParamSpec { name: "ramp_time", kind: ParamKind::Duration, doc: "run time before measuring" },
    ParamSpec { name: "cpuload", kind: ParamKind::Count, doc: "percent of CPU the cpuio engine uses" },
    ParamSpec { name: "donorname", kind: ParamKind::Text, doc: "the e4defrag engine's donor file" },
    ParamSpec { name: "cpus_allowed_policy", kind: ParamKind::OneOf(&["split", "shared"]), doc: "CPU binding policy" },
    ParamSpec { name: "cpus_allowed", kind: ParamKind::Text, doc: "CPUs the tasks may run on (with split)" },
    ParamSpec { name: "numa_mem_policy", kind: ParamKind::Text, doc: "NUMA memory policy, or MODE:even" },
    ParamSpec { name: "numa_cpu_nodes", kind: ParamKind::Text, doc: "NUMA nodes to run on, or even" },
    ParamSpec { name: "testfile", kind: ParamKind::Text, doc: "y: all tasks share one file, fio_testfile" },
    ParamSpec { name: "iodepth_by_instance", kind: ParamKind::Text, doc: "iodepth per lkp instance; first used" },
    ParamSpec { name: "raw_disk", kind: ParamKind::Text, doc: "fio on the raw disk: refused when yes" },
];

/// The I/O engines the installed fio offers (`fio --enghelp`, one a line after a heading), asked once per process;
/// `None` when fio cannot be asked (the runs then say what fails).
fn installed_engines() -> Option<&'static [String]> {
    static ENGINES: OnceLock<Option<Vec<String>>> = OnceLock::new();
    ENGINES
        .get_or_init(|| {
            // Listing is instant; the limit only keeps a wedged binary from hanging the check.
            let finished = ask_installed(&["fio", "--enghelp"], Duration::from_secs(10))?;
            Some(engines_listed(&finished.stdout)).filter(|engines| !engines.is_empty())
        })
        .as_deref()
}

/// The engine names of `fio --enghelp`'s output: its indented lines.
fn engines_listed(text: &str) -> Vec<String> {
    text.lines().filter(|line| line.starts_with(char::is_whitespace)).map(|line| line.trim().to_string()).collect()
}

/// Refuses an `ioengine` the installed fio lacks (lkp's fio-basic-1hdd-write.yaml lists `dircreate`, which fio 3.33
/// has not): every run of it failed with fio's "failed to load engine". An external engine (`external:PATH`) is
/// fio's to load.
fn check_engine(engine: &str, offered: &[String]) -> Result<(), ProgramError> {
    if engine.contains([':', '/']) || offered.iter().any(|o| o == engine) {
        return Ok(());
    }
    Err(ProgramError::BadParam {
        program: "fio",
        key: "ioengine".into(),
        value: engine.into(),
        reason: format!(
            "the installed fio has no I/O engine '{engine}' (`fio --enghelp` lists the {} it has); install a fio that \
             has it, or remove it from the job",
            offered.len()
        ),
    })
}

/// The options for lkp's optional params that the job gives, in the order lkp's script writes them (a later option
/// overrides an earlier one in fio, as `buffered` does `direct`).
fn lkp_options(p: &Params) -> Result<Vec<String>, ProgramError> {
    let mut out = Vec::new();
    let flag = |key: &str, out: &mut Vec<String>| {
        if p.get(key).is_some_and(lkp_bool) {
            out.push(format!("--{key}"));
        }
    };
    let boolean = |key: &str, out: &mut Vec<String>| {
        if let Some(v) = p.get(key) {
            out.push(format!("--{key}={}", u8::from(lkp_bool(v))));
        }
    };
    let text = |key: &str, option: &str, out: &mut Vec<String>| {
        if let Some(v) = p.get(key) {
            out.push(format!("--{option}={v}"));
        }
    };
    text("file_service_type", "file_service_type", &mut out);
    text("random_distribution", "random_distribution", &mut out);
    boolean("pre_read", &mut out);
    match p.size_bytes("offset_increment")? {
        Some(bytes) => out.push(format!("--offset_increment={bytes}")),
        None => {
            if let Some(n) = p.positive_count("nr_files")? {
                out.push(format!("--nrfiles={n}"));
            }
            for key in ["filesize", "io_size"] {
                if let Some(bytes) = p.size_bytes(key)? {
                    out.push(format!("--{key}={bytes}"));
                }
            }
            boolean("invalidate", &mut out);
            text("fallocate", "fallocate", &mut out);
        }
    }
    flag("refill_buffers", &mut out);
    if p.get("cpuload").is_some_and(lkp_bool) {
        if let Some(load) = p.count("cpuload")? {
            out.push(format!("--cpuload={load}"));
        }
    }
    if p.get("donorname").is_some_and(lkp_bool) {
        text("donorname", "donorname", &mut out);
    }
    boolean("buffered", &mut out);
    flag("norandommap", &mut out);
    text("random_generator", "random_generator", &mut out);
    boolean("allrandrepeat", &mut out);
    flag("exitall", &mut out);
    if let Some(secs) = p.duration_secs("ramp_time")? {
        out.push(format!("--ramp_time={secs}"));
    }
    flag("stonewall", &mut out);
    if let Some(n) = p.count("rwmixread")? {
        out.push(format!("--rwmixread={n}"));
    }
    // lkp spreads `MODE:even` and `even` over the nodes by its task number; Culprit's one task is lkp's first.
    if let Some(policy) = p.get("numa_mem_policy") {
        let policy = policy.strip_suffix(":even").map_or(policy.to_string(), |mode| format!("{mode}:0"));
        out.push(format!("--numa_mem_policy={policy}"));
    }
    if let Some(nodes) = p.get("numa_cpu_nodes") {
        out.push(format!("--numa_cpu_nodes={}", if nodes.contains("even") { "0" } else { nodes }));
    }
    match (p.one_of("cpus_allowed_policy", &["split", "shared"])?.as_deref(), p.get("cpus_allowed")) {
        (Some("split"), None) => {
            return Err(ProgramError::MissingParam {
                program: "fio",
                key: "cpus_allowed".into(),
                reason: "cpus_allowed_policy split divides the CPUs cpus_allowed lists among the tasks, as lkp's \
                         script requires; give e.g. cpus_allowed: 0-3"
                    .into(),
            })
        }
        (policy, Some(cpus)) if policy != Some("split") => {
            return Err(p.bad(
                "cpus_allowed",
                cpus,
                "lkp's script takes cpus_allowed only with cpus_allowed_policy split; add that, or remove cpus_allowed",
            ))
        }
        (policy, cpus) => {
            if let Some(policy) = policy {
                out.push(format!("--cpus_allowed_policy={policy}"));
            }
            if let Some(cpus) = cpus {
                out.push(format!("--cpus_allowed={cpus}"));
            }
        }
    }
    if p.get("testfile") == Some("y") {
        out.push("--filename=fio_testfile".into());
    }
    Ok(out)
}

/// Refuses a `cpus_allowed` that names a CPU this machine lacks or does not let culprit run on: lkp's job files
/// give their test boxes' CPUs (`cpus_allowed: 0-127`); fio, given a CPU beyond the machine's, fails every run with
/// "failed parsing cpus_allowed", and one outside the process's affinity (a cpuset cgroup, `taskset`) fails the tasks
/// bound to it. `usable` are the CPUs culprit may run on, ascending.
fn check_cpus_allowed(p: &Params, usable: &[u32]) -> Result<(), ProgramError> {
    let Some(cpus) = p.get("cpus_allowed") else { return Ok(()) };
    let ranges = cpu_list(cpus).map_err(|reason| p.bad("cpus_allowed", cpus, reason))?;
    let outside = |range: &std::ops::RangeInclusive<u32>| {
        // A range is walked up to the first CPU not usable, so 0-4294967295 costs no more than the usable CPUs.
        range.clone().find(|cpu| usable.binary_search(cpu).is_err())
    };
    let Some(lacked) = ranges.iter().find_map(outside) else { return Ok(()) };
    let within = crate::machine::cpu_list_text(usable);
    let has = match usable.len() {
        1 => format!("1 CPU ({within})"),
        n => format!("{n} CPUs ({within})"),
    };
    Err(p.bad(
        "cpus_allowed",
        cpus,
        format!(
            "names CPU {lacked}, but culprit may run on {has} here, and fio fails the tasks bound to a CPU it \
             cannot use at every run; give cpus_allowed within {within} (e.g. cpus_allowed: {within}), or remove \
             cpus_allowed and cpus_allowed_policy to let fio's tasks run on every CPU"
        ),
    ))
}

/// Refuses the `dev-dax` engine on a machine without a device DAX (`/dev/dax*`, given as `devices`): the engine
/// does its I/O on such a character device, which lkp's job gets from its persistent-memory box, and fio then fails
/// every run with exit status 1 and no word on stdout, stderr or in its JSON (fio 3.33, on the scratch file).
fn check_dax_device(p: &Params, devices: &[String]) -> Result<(), ProgramError> {
    match p.get("ioengine") {
        Some(engine) if engine.trim() == "dev-dax" && devices.is_empty() => Err(p.bad(
            "ioengine",
            engine,
            "fio's dev-dax engine does its I/O on a device DAX (/dev/daxX.Y, persistent memory in devdax mode, as on \
             lkp's pmem boxes), and this machine has none, so fio would fail every run without saying why; run the \
             job on a machine with one, or give another ioengine (sync, libaio, io_uring)",
        )),
        _ => Ok(()),
    }
}

/// This machine's device DAX nodes (`/dev/dax0.0`, ...), by name.
fn dax_devices() -> Vec<String> {
    let names = std::fs::read_dir("/dev").into_iter().flatten().flatten();
    names.map(|entry| entry.file_name().to_string_lossy().into_owned()).filter(|name| name.starts_with("dax")).collect()
}

/// The CPUs of a fio CPU list (`0-3,8,10-11`: CPUs and inclusive ranges, separated by commas), as fio's
/// `cpus_allowed` reads it; the reason when it is not one. fio stops reading at an empty item, so a list ending in a
/// comma (`0-1,`) is the list before it, which fio runs; an empty item before others (`0,,5`) is refused, because fio
/// would silently drop the CPUs after it.
fn cpu_list(text: &str) -> Result<Vec<std::ops::RangeInclusive<u32>>, String> {
    let cpu = |number: &str| {
        let number = number.trim();
        number.parse::<u32>().map_err(|_| match number.bytes().all(|b| b.is_ascii_digit()) && !number.is_empty() {
            true => format!("CPU {number} is beyond any machine's CPUs; give CPUs this machine has, such as 0-3"),
            false => format!("'{number}' is no CPU number; fio's CPU list gives CPUs and ranges such as 0-3,8,10-11"),
        })
    };
    let text = text.trim();
    let text = text.strip_suffix(',').filter(|before| !before.trim().is_empty()).unwrap_or(text);
    text.split(',')
        .map(|item| {
            let range = match item.split_once('-') {
                Some((first, last)) => cpu(first)?..=cpu(last)?,
                None => cpu(item).map(|one| one..=one)?,
            };
            if range.is_empty() {
                return Err(format!("the range {} runs backwards; give the lower CPU first", item.trim()));
            }
            Ok(range)
        })
        .collect()
}

fn truthy(v: &str) -> bool {
    matches!(v, "1" | "true" | "yes" | "direct" | "tb" | "time_based")
}

impl Program for Fio {
    fn scratch_bytes(&self, params: &Params) -> Option<(&'static str, u64)> {
        params.size_bytes("test_size").ok().flatten().map(|bytes| ("test_size", bytes))
    }
    fn name(&self) -> &'static str {
        "fio"
    }
    fn raw_output_name(&self) -> &'static str {
        "fio.output"
    }
    fn binary(&self) -> &'static str {
        "fio"
    }
    fn install_hint(&self) -> &'static str {
        "install it with: apt-get install fio"
    }
    fn params(&self) -> &'static [ParamSpec] {
        SPECS
    }

    /// fio reports a job's error on stdout, beside its JSON (`fio: pid=9649, err=95/file:engines/libpmem.c:114,
    /// func=file_name does not point to persistent memory, error=Operation not supported`), and leaves stderr empty:
    /// a run of lkp's libpmem or e4defrag job off its setup failed with "exit status 1" alone.
    fn failure_line<'a>(&self, finished: &'a Finished) -> Option<&'a str> {
        last_line(&finished.stderr)
            .or_else(|| finished.stdout.lines().map(str::trim).find(|line| line.starts_with("fio: ")))
    }

    fn check_offered(&self, p: &Params) -> Result<(), ProgramError> {
        match (p.get("ioengine"), installed_engines()) {
            (Some(engine), Some(offered)) => check_engine(engine, offered),
            _ => Ok(()),
        }
    }

    fn check_fits_machine(&self, p: &Params, usable_cpus: &[u32]) -> Result<(), ProgramError> {
        check_cpus_allowed(p, usable_cpus)?;
        check_dax_device(p, &dax_devices())
    }

    fn plan(&self, p: &Params, ctx: &ProgramContext) -> Result<ProgramPlan, ProgramError> {
        let test_size = p.size_bytes("test_size")?.ok_or_else(|| ProgramError::MissingParam {
            program: "fio",
            key: "test_size".into(),
            reason: "fio needs the total size of its test files (lkp's fio-setup-basic refuses a job without it \
                     too), e.g. test_size: 64M"
                .into(),
        })?;
        let nr_task = p.count_or_share("nr_task", ctx.nr_cpu)?.unwrap_or(1).max(1);
        let per_task = test_size / nr_task;
        if per_task == 0 {
            return Err(ProgramError::BadParam {
                program: "fio",
                key: "test_size".into(),
                value: test_size.to_string(),
                reason: format!("is smaller than one byte per task for nr_task {nr_task}"),
            });
        }
        if let Some(raw) = p.get("raw_disk").filter(|v| lkp_bool(v)) {
            return Err(p.bad(
                "raw_disk",
                raw,
                "lkp then runs fio on the test disk's partitions (or pmem's device-dax) themselves, which Culprit \
                 does not set up or write to: it runs fio on files in the scratch directory; remove raw_disk to \
                 measure files, or run fio on the device yourself in a 'command' job",
            ));
        }
        // Culprit runs lkp's instance 1 (nr_instances above 1 is refused), whose iodepth is the list's first.
        let instance_depth = match p.get("iodepth_by_instance").and_then(|v| v.split_whitespace().next()) {
            Some(first) => Some(first.parse::<u64>().map_err(|_| {
                p.bad("iodepth_by_instance", first, "expected whole numbers separated by blanks, e.g. '1 32'")
            })?),
            None => None,
        };
        let iodepth = match instance_depth {
            Some(depth) => depth,
            None => p.count("iodepth")?.unwrap_or(32),
        };
        let zero = "reads a zero runtime as no limit, running until test_size is done";
        let runtime = p.run_time_secs("runtime", zero)?.unwrap_or(300);
        let mut argv = vec![
            "fio".to_string(),
            "--output-format=json".into(),
            "--group_reporting".into(),
            "--name=culprit-fio".into(),
            format!("--directory={}", ctx.scratch_dir.display()),
            format!("--rw={}", p.get("rw").unwrap_or("write")),
            format!("--bs={}", p.get("bs").unwrap_or("4k")),
            format!("--ioengine={}", p.get("ioengine").unwrap_or("sync")),
            format!("--iodepth={iodepth}"),
            format!("--direct={}", u8::from(p.get("direct").is_some_and(truthy))),
            format!("--size={per_task}"),
            format!("--numjobs={nr_task}"),
            format!("--runtime={runtime}"),
        ];
        if p.get("time_based").is_some_and(truthy) {
            argv.push("--time_based".into());
        }
        argv.extend(lkp_options(p)?);
        Ok(ProgramPlan::single(Invocation::new(argv)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{ctx, params};

    #[test]
    fn maps_lkp_params_to_fio_options() {
        let p = params("fio", &[("rw", "randwrite"), ("bs", "4k"), ("test_size", "64M"), ("nr_task", "50%"), ("runtime", "5s"), ("time_based", "tb"), ("ioengine", "libaio")]);
        let plan = Fio.plan(&p, &ctx()).unwrap();
        let line = plan.main.display();
        assert!(line.contains("--rw=randwrite"), "{line}");
        assert!(line.contains("--numjobs=2"), "{line}");
        assert!(line.contains(&format!("--size={}", 32 * 1024 * 1024)), "{line}");
        assert!(line.contains("--runtime=5"), "{line}");
        assert!(line.contains("--time_based"), "{line}");
        assert!(line.contains("--ioengine=libaio"), "{line}");
        assert!(line.contains("--directory=/tmp/culprit-scratch"), "{line}");
    }

    #[test]
    fn lkps_fio_setup_basic_options_reach_the_command_line() {
        // lkp's fio-basic-1ssd-read.yaml: every option of it was refused as "fio has no param".
        let lkp = [
            ("rw", "read"), ("bs", "128k"), ("ioengine", "libaio"), ("direct", "1"), ("buffered", "0"),
            ("invalidate", "1"), ("time_based", "1"), ("norandommap", "1"), ("allrandrepeat", "0"),
            ("random_generator", "lfsr"), ("cpus_allowed_policy", "split"), ("cpus_allowed", "0-127"),
            ("exitall", "1"), ("group_reporting", "1"), ("ramp_time", "5"), ("stonewall", "1"), ("iodepth", "16"),
            ("test_size", "1024M"), ("nr_task", "8t"), ("runtime", "60"),
        ];
        let p = params("fio", &lkp);
        p.validate(Fio.params(), 4).unwrap();
        let line = Fio.plan(&p, &ctx()).unwrap().main.display();
        let tail = "--direct=1 --size=134217728 --numjobs=8 --runtime=60 --time_based --invalidate=1 --buffered=0 \
                    --norandommap --random_generator=lfsr --allrandrepeat=0 --exitall --ramp_time=5 --stonewall \
                    --cpus_allowed_policy=split --cpus_allowed=0-127";
        assert!(line.contains(tail), "{line}");
        // lkp's pagecache demo and local-disk jobs: files, distribution, one shared test file; no means no.
        let p = params(
            "fio",
            &[
                ("test_size", "64G"), ("nr_files", "1"), ("filesize", "16G"), ("io_size", "128G"),
                ("file_service_type", "sequential"), ("invalidate", "0"), ("random_distribution", "normal:20"),
                ("testfile", "y"), ("norandommap", "no"), ("fallocate", "posix"),
            ],
        );
        let line = Fio.plan(&p, &ctx()).unwrap().main.display();
        let want = "--file_service_type=sequential --random_distribution=normal:20 --nrfiles=1 \
                    --filesize=17179869184 --io_size=137438953472 --invalidate=0 --fallocate=posix \
                    --filename=fio_testfile";
        assert!(line.ends_with(want) && !line.contains("norandommap"), "{line}");
        // With offset_increment, lkp leaves out the options of whole files.
        let p = params("fio", &[("test_size", "1G"), ("offset_increment", "1M"), ("nr_files", "2")]);
        let line = Fio.plan(&p, &ctx()).unwrap().main.display();
        assert!(line.ends_with("--offset_increment=1048576"), "{line}");
        // The cpuio and e4defrag engines' options, instance 1's iodepth, and NUMA spread over lkp's tasks.
        let p = params(
            "fio",
            &[
                ("test_size", "1G"), ("ioengine", "cpuio"), ("cpuload", "25"), ("donorname", "e4defrag.def"),
                ("iodepth", "32"), ("iodepth_by_instance", "1 32"), ("numa_mem_policy", "bind:even"),
                ("numa_cpu_nodes", "even"),
            ],
        );
        let line = Fio.plan(&p, &ctx()).unwrap().main.display();
        assert!(line.contains("--iodepth=1 ") && line.contains("--cpuload=25 --donorname=e4defrag.def"), "{line}");
        assert!(line.ends_with("--numa_mem_policy=bind:0 --numa_cpu_nodes=0"), "{line}");
    }

    #[test]
    fn what_lkps_script_refuses_or_culprit_cannot_do_is_refused() {
        let refused = |pairs: &[(&str, &str)]| {
            let mut pairs = pairs.to_vec();
            pairs.push(("test_size", "1G"));
            Fio.plan(&params("fio", &pairs), &ctx()).err().map(|e| e.to_string()).unwrap_or_default()
        };
        let text = refused(&[("raw_disk", "rd")]);
        assert!(text.contains("'raw_disk' = 'rd'") && text.contains("remove raw_disk to measure files"), "{text}");
        assert!(refused(&[("raw_disk", "n")]).is_empty());
        assert!(refused(&[("cpus_allowed_policy", "split")]).contains("give e.g. cpus_allowed: 0-3"));
        assert!(refused(&[("cpus_allowed", "0-3")]).contains("only with cpus_allowed_policy split"));
        let p = params("fio", &[("test_size", "1G"), ("nr_instances", "2")]);
        let text = p.validate(Fio.params(), 4).unwrap_err().to_string();
        assert!(text.contains("'nr_instances' = '2'") && text.contains("Culprit runs one"), "{text}");
        assert!(params("fio", &[("test_size", "1G"), ("nr_instances", "1")]).validate(Fio.params(), 4).is_ok());
    }

    #[test]
    fn a_cpu_list_reads_as_fio_reads_it() {
        assert_eq!(cpu_list("0-3,8,10-11"), Ok(vec![0..=3, 8..=8, 10..=11]));
        assert_eq!(cpu_list(" 5 "), Ok(vec![5..=5]));
        // fio runs a list ending in a comma (it stops at the empty item), and reads blanks around a range's dash.
        assert_eq!(cpu_list("0-1,"), Ok(vec![0..=1]));
        assert_eq!(cpu_list(" 0 - 1 , 3 , "), Ok(vec![0..=1, 3..=3]));
        assert!(cpu_list("3-1").unwrap_err().contains("runs backwards"));
        for bad in ["", ",", "0-", "a", "0-3,,4", "1:2", "0,,"] {
            assert!(cpu_list(bad).unwrap_err().contains("is no CPU number"), "{bad:?}");
        }
    }

    #[test]
    fn cpus_allowed_beyond_the_machine_s_cpus_is_refused() {
        let plan = |cpus: &str, usable: &[u32]| {
            let p = params("fio", &[("test_size", "1G"), ("cpus_allowed_policy", "split"), ("cpus_allowed", cpus)]);
            Fio.check_fits_machine(&p, usable)?;
            Fio.plan(&p, &ProgramContext { nr_cpu: usable.len() as u32, ..ctx() }).map(|plan| plan.main.display())
        };
        let text = plan("0-127", &[0, 1]).unwrap_err().to_string();
        assert!(text.contains("'cpus_allowed' = '0-127'") && text.contains("names CPU 2,"), "{text}");
        assert!(text.contains("culprit may run on 2 CPUs (0-1) here"), "{text}");
        assert!(text.contains("give cpus_allowed within 0-1 (e.g. cpus_allowed: 0-1)"), "{text}");
        assert!(plan("0,2", &[0, 1]).unwrap_err().to_string().contains("names CPU 2"));
        assert!(plan("0", &[0]).is_ok() && plan("1", &[0]).unwrap_err().to_string().contains("on 1 CPU (0)"));
        assert!(plan("0-1", &[0, 1]).unwrap().contains("--cpus_allowed=0-1"));
        assert!(plan("0-x", &[0, 1, 2, 3]).unwrap_err().to_string().contains("'x' is no CPU number"));
        // An affinity mask without CPU 0 (taskset -c 2,3, a cpuset cgroup): its own CPUs run, CPU 0 is refused.
        assert!(plan("2-3", &[2, 3]).is_ok());
        let text = plan("0-3", &[2, 3]).unwrap_err().to_string();
        assert!(text.contains("names CPU 0,") && text.contains("2 CPUs (2-3)"), "{text}");
        // A huge range is refused at its first unusable CPU, not walked, and a number past u32 says what it is.
        assert!(plan("1-4294967295", &[0, 1]).unwrap_err().to_string().contains("names CPU 2,"));
        let text = plan("99999999999", &[0, 1]).unwrap_err().to_string();
        assert!(text.contains("CPU 99999999999 is beyond any machine's CPUs"), "{text}");
    }

    #[test]
    fn the_dev_dax_engine_without_a_dax_device_is_refused_before_the_runs() {
        let p = params("fio", &[("test_size", "1G"), ("ioengine", "dev-dax")]);
        let text = check_dax_device(&p, &[]).unwrap_err().to_string();
        assert!(text.contains("'ioengine' = 'dev-dax'") && text.contains("this machine has none"), "{text}");
        assert!(check_dax_device(&p, &["dax0.0".to_string()]).is_ok());
        assert!(check_dax_device(&params("fio", &[("ioengine", "sync")]), &[]).is_ok());
        assert!(check_dax_device(&params("fio", &[("test_size", "1G")]), &[]).is_ok());
    }

    #[test]
    fn an_engine_the_installed_fio_lacks_is_refused_before_the_runs() {
        let listed = engines_listed("Available IO engines:\n\tcpuio\n\tsync\n\tio_uring\n");
        assert_eq!(listed, ["cpuio", "sync", "io_uring"]);
        assert_eq!(check_engine("io_uring", &listed), Ok(()));
        assert_eq!(check_engine("external:/usr/lib/fio/x.so", &listed), Ok(()));
        let text = check_engine("dircreate", &listed).unwrap_err().to_string();
        assert!(text.contains("'ioengine' = 'dircreate': the installed fio has no I/O engine 'dircreate'"), "{text}");
        assert!(text.contains("`fio --enghelp` lists the 3 it has"), "{text}");
    }

    #[test]
    fn test_size_is_required_and_validated() {
        let err = Fio.plan(&params("fio", &[("rw", "read")]), &ctx()).unwrap_err();
        assert!(err.to_string().contains("test_size"), "{err}");
        let p = params("fio", &[("test_size", "lots")]);
        assert!(p.validate(Fio.params(), 4).unwrap_err().to_string().contains("test_size"));
        let p = params("fio", &[("rw", "sideways"), ("test_size", "1M")]);
        assert!(p.validate(Fio.params(), 4).unwrap_err().to_string().contains("randwrite"));
        let p = params("fio", &[("blocksize", "4k")]);
        assert!(matches!(p.validate(Fio.params(), 4), Err(ProgramError::UnknownParam { .. })));
    }
}
