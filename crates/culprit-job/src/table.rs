//! The one table of job keys Culprit understands: metadata keys, benchmark programs (with lkp's aliases and setup
//! hashes) and monitors.
//!
//! Every other key of a job file is a parameter. lkp-tests decides what counts as a parameter by reading the option
//! lists of the program scripts a job references; Culprit has no such scripts, so it turns the rule around: a key is a
//! parameter unless this table says it describes the test box, the queue or the result path (metadata), or it names a
//! monitor. The consequences, all following lkp:
//!
//! * metadata keys never count in `path_params`, are left out of a job's id, and their lists are not expanded (lkp
//!   keeps `need_kconfig` or `queue_cmdline_keys` as lists) except for the result-path axes `commit`, `kconfig`,
//!   `rootfs` and the other `*_commit` keys, which lkp expands;
//! * monitors and their options never count in `path_params` either, and a monitor's lists (perf-stat events) stay
//!   lists.

/// Top-level keys that describe where and how a job is queued, the test box, or the result path, not the workload.
///
/// | group | keys |
/// | --- | --- |
/// | naming | `suite`, `testcase`, `category`, `job_origin`, `job_file`, `jobfile`, `id` |
/// | test box (lkp `hosts/*`) | `testbox`, `tbox_group`, `arch`, `model`, `brand`, `nr_node`, `nr_cpu`, `memory`, `nr_hdd_partitions`, `nr_ssd_partitions`, `hdd_partitions`, `ssd_partitions`, `rootfs_partition`, `swap_partitions`, `netconsole_port`, `kernel_cmdline_hw` |
/// | queue and scheduling | `queue`, `queue_cmdline_keys`, `submit_id`, `queuer_version`, `user`, `mail_to`, `mail_cc`, `constraints`, `node_roles`, `force_reboot`, `including` |
/// | result path axes | `commit`, `branch`, `kconfig`, `compiler`, `rootfs`, `head_commit`, `base_commit`, `result_root` |
/// | run control | `timeout`, `monitor_delay`, `kernel_cmdline`, `save_on_exit` |
///
/// | lkp's scheduler (in the job.yaml its reports attach) | `enqueue_time`, `dequeue_time`, `LKP_SERVER`, `LKP_CGI_PORT`, `LKP_CIFS_PORT`, `result_service`, `kernel`, `initrd`, `modules_initrd`, `bm_initrd`, `ucode_initrd`, `lkp_initrd`, `site`, `max_uptime`, `last_kernel`, `repeat_to`, `schedule_notify_address`, `job_state`, `loadavg`, `stop_repeat_if_found`, `ssh_pub_key`, `scheduler_version`, `bootloader_append`, `kbuild_queue_analysis`, `start_time`, `end_time`, `version` |
///
/// Besides these, every key starting with `need_` (lkp's requirements such as `need_memory`, `need_kconfig`) or `_`
/// (its scheduler's `_id`, `_rt`), every key ending in `_commit` or `_branch` (other projects' revisions), and lkp's
/// monitors and daemons Culprit has none of ([`LKP_MONITORS_NOT_RUN`]) are metadata, see [`is_metadata_key`].
pub const METADATA_KEYS: &[&str] = &[
    // naming
    "suite",
    "testcase",
    "category",
    "job_origin",
    "job_file",
    "jobfile",
    "id",
    // test box
    "testbox",
    "tbox_group",
    "arch",
    "model",
    "brand",
    "nr_node",
    "nr_cpu",
    "memory",
    "nr_hdd_partitions",
    "nr_ssd_partitions",
    "hdd_partitions",
    "ssd_partitions",
    "rootfs_partition",
    "swap_partitions",
    "netconsole_port",
    "kernel_cmdline_hw",
    // queue and scheduling
    "queue",
    "queue_cmdline_keys",
    "submit_id",
    "queuer_version",
    "user",
    "mail_to",
    "mail_cc",
    "constraints",
    "node_roles",
    "force_reboot",
    "including",
    // result path axes
    "commit",
    "branch",
    "kconfig",
    "compiler",
    "rootfs",
    "head_commit",
    "base_commit",
    "result_root",
    // run control
    "timeout",
    "monitor_delay",
    "kernel_cmdline",
    "save_on_exit",
    // lkp's scheduler
    "enqueue_time",
    "dequeue_time",
    "LKP_SERVER",
    "LKP_CGI_PORT",
    "LKP_CIFS_PORT",
    "result_service",
    "kernel",
    "initrd",
    "modules_initrd",
    "bm_initrd",
    "lkp_initrd",
    "site",
    "max_uptime",
    "last_kernel",
    "repeat_to",
    "schedule_notify_address",
    "job_state",
    "loadavg",
    "stop_repeat_if_found",
    "ssh_pub_key",
    // The rest of what a finished job's job.yaml (the one a report attaches) holds: its boot (the kernel command
    // line lkp booted with, the microcode initrd), its queue's analysis flag, and the run's start, end and lkp
    // version. Refused, they made the attached file fail at five lines, and the list bootloader_append was read as a
    // matrix dimension, one job per kernel command-line word.
    "ucode_initrd",
    "scheduler_version",
    "bootloader_append",
    "kbuild_queue_analysis",
    "start_time",
    "end_time",
    "version",
    // The rest of what lkp's `hosts/*` files set for a test box, pasted into every job split for it (`-t BOX`):
    // its CPU and firmware, and a virtual machine's ssh port. They describe the machine, as `model` does; refused,
    // every job `lkp split-job` writes for such a box was refused at them.
    "cpu_info",
    "bios_version",
    "ssh_base_port",
    "ucode",
    // lkp's robot's bookkeeping in the job.yaml of its results: a bisection's dmesg check, the stats' part
    // markers, the initrd of the job and the OS of its rootfs. lkp's split-job reads none of them as params.
    "bisect_dmesg",
    "stats_part_begin",
    "stats_part_end",
    "job_initrd",
    "os",
    "os_arch",
    "os_version",
    "os_mount",
];

/// lkp's monitors and daemons that Culprit has no monitor for: the job.yaml an lkp report attaches lists its
/// category's whole set (`include/category/benchmark`). A job naming them runs without them, and `culprit run` says
/// so, where refusing each made that file unusable without deleting some twenty lines. The list is every program of
/// lkp-tests (bbbc29c4, 2026) with a `monitor`, `no-stdout-monitor`, `one-shot-monitor` or `plain-monitor` script
/// that Culprit has no monitor of its own for, and its daemons: kept by hand, it missed `perf-c2c`, which lkp's
/// benchmark category gives every job since 2023 (QA 47).
pub const LKP_MONITORS_NOT_RUN: &[&str] = &[
    "bdi_dev_mapping",
    "blktrace",
    "boot-meminfo",
    "boot-slabinfo",
    "boot-time",
    "bpfcc-tools",
    "bpfcc-tools2",
    "bpfcc-tools3",
    "bpftrace",
    "bpftrace.bt",
    "buddyinfo",
    "cat-file",
    "cat-proc-pid",
    "cpufreq-stats",
    "cpuid-raw",
    "cpuidle",
    "cpuonline",
    "custom-monitor",
    "debug-monitor",
    "energy",
    "ethtool",
    "find",
    "ftrace",
    "ftrace-event",
    "ftrace-funcgraph",
    "get-node-memory-info",
    "grep_cpuidle",
    "heartbeat",
    "iostat",
    "irq_exception_noise",
    "irq_noise",
    "kmemleak",
    "kmsg",
    "kthread_noise",
    "kvm",
    "latency_stats",
    "lock_stat",
    "ls-disks",
    "lsblk",
    "lscpu",
    "mdstat",
    "memmap",
    "memory--numa_stat",
    "memory--stat",
    "mountstats",
    "mpstat",
    "nfs-hang",
    "nfsstat",
    "numa-meminfo",
    "numa-numastat",
    "numa-vmstat",
    "numainfo",
    "oom-killer",
    "pagetypeinfo",
    "partitions",
    "perf-c2c",
    "perf-mem",
    "perf-node",
    "perf-probe",
    "perf-pt",
    "perf-record-report",
    "perf-report-srcline",
    "perf-sched",
    "pmeter",
    "pmeter:yokogawa-wt310",
    "pmu-tools",
    "sanity-check",
    "sar",
    "sched_debug",
    "slabinfo",
    "stack",
    "syscalls",
    "thermal",
    "top",
    "toplev",
    "trace-cmd",
    "turbostat",
    "uptime",
    "watchdog",
    "zoneinfo",
    // lkp's daemons (`programs/*/daemon`), servers its jobs start beside a benchmark Culprit does not run.
    "cassandra-server",
    "httpd",
    "memcached",
    "mongodb",
    "nepim-server",
    "netpipe-server",
    "netserver",
    "nfsd",
    "nuttcp-server",
    "qperf-server",
    "redis-server",
    "sockperf-server",
    "tbench-server",
    "thrulay-server",
    "uperf-server",
];

/// Options of lkp's monitors that Culprit's monitor of the same name does not apply, by monitor: the options lkp's
/// monitor scripts (`programs/<monitor>/*monitor`) read that Culprit's do not. lkp's benchmark category gives every job
/// `perf-profile: {debug_mode: 0}` (since 2021), which was refused, so that no current lkp job ran. `culprit run`
/// records them with the runs and names them in one warning; an option neither takes is still refused as a likely
/// misspelling.
pub const LKP_MONITOR_OPTIONS_NOT_APPLIED: &[(&str, &[&str])] = &[
    ("perf-profile", &["debug_mode", "events", "period", "callgraph", "children", "inline", "cpu"]),
    ("perf-stat", &["debug_mode", "command", "rmetrics", "metrics", "metric_only"]),
];

/// Whether `option` is an option of lkp's monitor `monitor` that Culprit's does not apply (see
/// [`LKP_MONITOR_OPTIONS_NOT_APPLIED`]).
pub fn is_lkp_monitor_option_not_applied(monitor: &str, option: &str) -> bool {
    LKP_MONITOR_OPTIONS_NOT_APPLIED.iter().any(|(name, options)| *name == monitor && options.contains(&option))
}

/// Whether a stored, flattened param (`nr_threads`, `fio-setup-basic.bs`, `perf-sched.lite_mode`) is part of the
/// workload: its top-level key is neither metadata nor a monitor (Culprit's or another of lkp's). A monitor's options
/// and lkp's bookkeeping are no test parameters, in a name, an `axes` line or a mail.
pub fn is_workload_param(flat_key: &str) -> bool {
    let top = flat_key.split('.').next().unwrap_or(flat_key);
    !matches!(key_role(top), KeyRole::Metadata | KeyRole::Monitor(_))
}

/// One of lkp's settings of the test box: a param its setup scripts read (`disk`, `fs`, `md`) or a setup script of
/// its own (`drop_caches:`, `numactl: {...}`), which Culprit records with the runs (they count in the job's name and
/// id, as in lkp's result paths) but does not apply. `not_done` says what Culprit therefore does not do, for the note
/// `culprit run` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoxSetting {
    pub key: &'static str,
    /// Whether the key is a setup script that lkp runs whenever the key is present, even empty (`drop_caches:`);
    /// otherwise it is a param, and an empty value (fs2's `~` of `fs2: [nfsv4, ~]`) sets nothing.
    pub script: bool,
    pub not_done: &'static str,
}

const fn setting(key: &'static str, not_done: &'static str) -> BoxSetting {
    BoxSetting { key, script: false, not_done }
}

const fn script(key: &'static str, not_done: &'static str) -> BoxSetting {
    BoxSetting { key, script: true, not_done }
}

/// lkp's settings of the test box that Culprit records but does not apply, in the order `culprit run` names what it
/// does not do. A job of lkp's that gives them runs on the machine as it is; one that cannot run without them (fio's
/// `raw_disk` on a device-dax namespace) is refused by its program, which names the line.
pub const BOX_SETTINGS_NOT_APPLIED: &[BoxSetting] = &[
    setting("disk", "prepares no disk"),
    setting("md", "builds no RAID array"),
    setting("fs", "makes and mounts no filesystem"),
    setting("mount_option", "mounts nothing with the job's options"),
    setting("fs2", "exports and mounts no NFS or CIFS"),
    setting("cpufreq_governor", "sets no cpufreq governor"),
    script("boot_params", "boots with no kernel parameters of the job"),
    // Metadata (it is no workload param, see [`METADATA_KEYS`]), listed here only so that the note names it.
    setting("kernel_cmdline", "boots with no kernel parameters of the job"),
    script("ndctl", "configures no persistent memory (ndctl, nvdimm, device-dax)"),
    script("nvdimm", "configures no persistent memory (ndctl, nvdimm, device-dax)"),
    script("device-dax", "configures no persistent memory (ndctl, nvdimm, device-dax)"),
    script("memory-hotplug", "offlines or onlines no memory"),
    script("migration_path", "sets no memory tiering"),
    script("transparent_hugepage", "leaves transparent hugepages as they are"),
    script("sysctl", "sets no sysctl"),
    script("cgroup2", "puts the benchmark in no cgroup"),
    // lkp's cgroup v1 setup (programs/cgroup/setup), the sibling of cgroup2 (hackbench-cpuset.yaml gives it).
    script("cgroup", "puts the benchmark in no cgroup"),
    script("numactl", "binds the benchmark to no NUMA policy (numactl)"),
    script("drop_caches", "drops no caches before the runs"),
    // oltp applies it, see [`SCRIPTS_APPLIED_BY_PROGRAMS`]; the note is for the jobs that do not.
    script("mysql-setup", "starts no MySQL server (only oltp does, a throwaway MariaDB, unless told db_driver: pgsql)"),
    script("iperf-server", "starts no iperf3 daemon (the iperf program starts a server for each of its runs)"),
    setting("debug-setup", "runs none of lkp's debug setup"),
];

/// One of lkp's setup scripts that a program of Culprit's does itself when a param asks it to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppliedScript {
    /// The script's top-level key, also a [`BoxSetting`].
    pub key: &'static str,
    /// The program that applies it.
    pub program: &'static str,
    /// The param, and its value, that a job giving the key gives the program.
    pub implies: (&'static str, &'static str),
}

/// lkp's setup scripts that a program applies: lkp's `mysql-setup` starts the MySQL server its `oltp` runs against,
/// which Culprit's oltp does with `db_driver: mysql` (a throwaway MariaDB server per run). The param is placed before
/// the job's own, as a selector's implied params are, so that `db_driver: pgsql` still chooses PostgreSQL. The key
/// stays a box setting, recorded with the runs, so that a job whose program does not apply it (another program, or
/// oltp told `db_driver: pgsql`) is told what Culprit does not do.
pub const SCRIPTS_APPLIED_BY_PROGRAMS: &[AppliedScript] = &[AppliedScript {
    key: "mysql-setup",
    program: "oltp",
    implies: ("db_driver", "mysql"),
}];

/// The script `program` applies for the top-level key `key`, if any (see [`SCRIPTS_APPLIED_BY_PROGRAMS`]).
pub fn applied_script(key: &str, program: &str) -> Option<&'static AppliedScript> {
    SCRIPTS_APPLIED_BY_PROGRAMS.iter().find(|s| s.key == key && s.program == program)
}

/// The box setting a top-level key is, if any (see [`BOX_SETTINGS_NOT_APPLIED`]).
pub fn box_setting(key: &str) -> Option<&'static BoxSetting> {
    BOX_SETTINGS_NOT_APPLIED.iter().find(|s| s.key == key)
}

/// Whether the program of a job applies its top-level `key` itself ([`SCRIPTS_APPLIED_BY_PROGRAMS`]): oltp's MySQL
/// server for `mysql-setup:`, unless the job chose PostgreSQL. `program_param` reads the program's resolved params.
pub fn applied_by_program<'a>(key: &str, program: &str, program_param: impl Fn(&str) -> Option<&'a str>) -> bool {
    applied_script(key, program).is_some_and(|script| program_param(script.implies.0) == Some(script.implies.1))
}

/// The box setting a flattened job key gives, with the value to show: `fs: xfs` and the `fs.fs`/`fs.mount_option`
/// of lkp's `fs: {fs: ext4, mount_option: dax}` under their own names, any other key of a setting's hash as
/// `key=value` (`boot_params: bp1_memmap=104G!8G`).
pub fn box_setting_of(key: &str, value: &str) -> Option<(&'static BoxSetting, String)> {
    let (top, rest) = key.split_once('.').unwrap_or((key, ""));
    let setting = box_setting(top)?;
    match box_setting(rest) {
        Some(inner) if top == "fs" => Some((inner, value.to_string())),
        _ if rest.is_empty() => Some((setting, value.to_string())),
        _ => Some((setting, format!("{rest}={value}"))),
    }
}

/// The box settings that flattened job params give and Culprit records but does not apply, each with its distinct
/// values, in the order the params first give them. `params` are those the job's program does not apply itself
/// ([`applied_by_program`]). `culprit run`'s note and a report's mail both read it, so that the mail never prints
/// as the test's setup a setting the run says it left alone. An empty param sets nothing (`fs2: [nfsv4, ~]`) and is
/// left out, but an empty setup script (`drop_caches:`) still runs in lkp, so it is named.
pub fn settings_not_applied<'a>(
    params: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<(&'static BoxSetting, Vec<String>)> {
    let mut given: Vec<(&'static BoxSetting, Vec<String>)> = Vec::new();
    for (key, value) in params {
        let Some((setting, shown)) = box_setting_of(key, value) else { continue };
        if value.is_empty() && !setting.script {
            continue;
        }
        let slot = match given.iter().position(|(s, _)| s.key == setting.key) {
            Some(at) => at,
            None => {
                given.push((setting, Vec::new()));
                given.len() - 1
            }
        };
        let values = &mut given[slot].1;
        if !value.is_empty() && !values.contains(&shown) {
            values.push(shown);
        }
    }
    given
}

/// Whether a top-level key is metadata (see [`METADATA_KEYS`]).
pub fn is_metadata_key(key: &str) -> bool {
    METADATA_KEYS.contains(&key)
        || LKP_MONITORS_NOT_RUN.contains(&key)
        || key.starts_with("need_")
        || key.starts_with('_')
        || key.ends_with("_commit")
        || key.ends_with("_branch")
}

/// Metadata keys whose lists lkp nevertheless expands into one job per value (its `EXPAND_DIMS`): the result-path
/// axes.
pub fn is_expanded_metadata_key(key: &str) -> bool {
    matches!(key, "kconfig" | "commit" | "rootfs")
        || (key.ends_with("_commit") && key != "head_commit" && key != "base_commit")
}

/// The revision keys lkp's `split-job` appends to an atomic job's file name, in its order.
pub const NAME_COMMIT_KEYS: &[&str] = &[
    "commit",
    "ltp_commit",
    "nvml_commit",
    "blktests_commit",
    "qemu_commit",
    "perf_test_commit",
    "linux_commit",
];

/// One benchmark program Culprit runs, and the job keys that select or configure it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgramSpec {
    /// The program's name in Culprit (also the run layer's program name).
    pub name: &'static str,
    /// Keys that select the program: its name, and aliases. An alias may imply a param (lkp's `sysbench-cpu` is
    /// sysbench with `test: cpu`).
    pub selectors: &'static [Selector],
    /// Keys of lkp setup hashes that hold this program's params without selecting it (`fio-setup-basic`).
    pub setup_keys: &'static [&'static str],
}

/// A key that selects a program, with the params it implies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selector {
    pub key: &'static str,
    /// Params the key implies, placed before every other param so the job can still override them.
    pub implies: &'static [(&'static str, &'static str)],
}

const fn plain(key: &'static str) -> Selector {
    Selector { key, implies: &[] }
}

/// Every program Culprit runs.
///
/// | program | selecting keys | lkp setup hashes |
/// | --- | --- | --- |
/// | `fio` | `fio` | `fio-setup-basic` |
/// | `fsmark` | `fsmark`, `fs_mark` | |
/// | `stress-ng` | `stress-ng` | |
/// | `sysbench` | `sysbench`, and lkp's `sysbench-cpu`, `sysbench-threads`, `sysbench-memory`, `sysbench-mutex`, `sysbench-fileio` (each implies `test: <kind>`) | |
/// | `hackbench` | `hackbench` | |
/// | `perf-bench-sched-pipe`, `perf-bench-sched-messaging`, `perf-bench-syscall`, `perf-bench-futex`, `perf-bench-mem`, `perf-bench-numa-mem` | the same | |
/// | `dbench` | `dbench` | |
/// | `pgbench` | `pgbench` | `pgbench-setup` |
/// | `iperf` | `iperf` | |
/// | `oltp` | `oltp` | `setup-oltp` |
/// | `command` | `command` | |
pub const PROGRAMS: &[ProgramSpec] = &[
    ProgramSpec {
        name: "fio",
        selectors: &[plain("fio")],
        setup_keys: &["fio-setup-basic"],
    },
    ProgramSpec {
        name: "fsmark",
        selectors: &[plain("fsmark"), plain("fs_mark")],
        setup_keys: &[],
    },
    ProgramSpec {
        name: "stress-ng",
        selectors: &[plain("stress-ng")],
        setup_keys: &[],
    },
    ProgramSpec {
        name: "sysbench",
        selectors: &[
            plain("sysbench"),
            Selector {
                key: "sysbench-cpu",
                implies: &[("test", "cpu")],
            },
            Selector {
                key: "sysbench-threads",
                implies: &[("test", "threads")],
            },
            Selector {
                key: "sysbench-memory",
                implies: &[("test", "memory")],
            },
            Selector {
                key: "sysbench-mutex",
                implies: &[("test", "mutex")],
            },
            Selector {
                key: "sysbench-fileio",
                implies: &[("test", "fileio")],
            },
        ],
        setup_keys: &[],
    },
    ProgramSpec {
        name: "hackbench",
        selectors: &[plain("hackbench")],
        setup_keys: &[],
    },
    ProgramSpec {
        name: "perf-bench-sched-pipe",
        selectors: &[plain("perf-bench-sched-pipe")],
        setup_keys: &[],
    },
    ProgramSpec {
        name: "perf-bench-sched-messaging",
        selectors: &[plain("perf-bench-sched-messaging")],
        setup_keys: &[],
    },
    ProgramSpec {
        name: "perf-bench-syscall",
        selectors: &[plain("perf-bench-syscall")],
        setup_keys: &[],
    },
    ProgramSpec {
        name: "perf-bench-futex",
        selectors: &[plain("perf-bench-futex")],
        setup_keys: &[],
    },
    ProgramSpec {
        name: "perf-bench-mem",
        selectors: &[plain("perf-bench-mem")],
        setup_keys: &[],
    },
    ProgramSpec {
        name: "perf-bench-numa-mem",
        selectors: &[plain("perf-bench-numa-mem")],
        setup_keys: &[],
    },
    ProgramSpec {
        name: "dbench",
        selectors: &[plain("dbench")],
        setup_keys: &[],
    },
    ProgramSpec {
        name: "pgbench",
        selectors: &[plain("pgbench")],
        setup_keys: &["pgbench-setup"],
    },
    ProgramSpec {
        name: "iperf",
        selectors: &[plain("iperf")],
        setup_keys: &[],
    },
    ProgramSpec {
        name: "oltp",
        selectors: &[plain("oltp")],
        setup_keys: &["setup-oltp"],
    },
    ProgramSpec {
        name: "command",
        selectors: &[plain("command")],
        setup_keys: &[],
    },
];

/// Every monitor Culprit samples. A monitor key's value is empty (defaults) or a hash of its options.
pub const MONITORS: &[&str] = &[
    "proc-stat",
    "vmstat",
    "proc-vmstat",
    "meminfo",
    "interrupts",
    "softirqs",
    "diskstats",
    "perf-stat",
    "perf-profile",
];

/// What a top-level job key is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyRole {
    Metadata,
    /// Selects a program (possibly through an alias).
    Program(&'static ProgramSpec, &'static Selector),
    /// An lkp setup hash holding a program's params.
    Setup(&'static ProgramSpec),
    Monitor(&'static str),
    /// Anything else: a parameter (or, when it holds a hash or nothing, something Culprit cannot run).
    Param,
}

/// Classifies a top-level key.
pub fn key_role(key: &str) -> KeyRole {
    for spec in PROGRAMS {
        if let Some(selector) = spec.selectors.iter().find(|s| s.key == key) {
            return KeyRole::Program(spec, selector);
        }
        if spec.setup_keys.contains(&key) {
            return KeyRole::Setup(spec);
        }
    }
    if let Some(monitor) = MONITORS.iter().find(|m| **m == key) {
        return KeyRole::Monitor(monitor);
    }
    if is_metadata_key(key) {
        return KeyRole::Metadata;
    }
    KeyRole::Param
}

/// Stored params (flattened: `fio-setup-basic.bs`, `hackbench.mode`) under the names lkp gives them on the robot's
/// `axes` line and in a mail's parameters: a program's or setup hash's option by its own name (`bs`, `mode`), as
/// lkp's `each_param` yields it. A name that two hashes share, or that a top-level param already has, keeps its
/// hash, so that neither value hides the other. Order is kept.
pub fn lkp_param_names(params: &[(String, String)]) -> Vec<(String, String)> {
    let short = |key: &str| -> Option<String> {
        let (hash, option) = key.split_once('.')?;
        matches!(key_role(hash), KeyRole::Program(..) | KeyRole::Setup(_)).then(|| option.to_string())
    };
    let name_of = |key: &str| short(key).unwrap_or_else(|| key.to_string());
    params
        .iter()
        .map(|(key, value)| {
            let name = name_of(key);
            let shared = params.iter().filter(|(other, _)| name_of(other) == name).count() > 1;
            (if shared { key.clone() } else { name }, value.clone())
        })
        .collect()
}

/// Benchmark programs of lkp-tests (its `programs/` directory) that Culprit does not run: every program with a `run`
/// script there (lkp-tests bbbc29c4, 2026) but Culprit's own. A job selecting one is no
/// mistake in its file: lkp runs it, and `culprit split` writes its atomic jobs for lkp, so a message about such a key
/// says so rather than advising to remove it or fix its name.
pub const LKP_PROGRAMS_NOT_RUN: &[&str] = &[
    "adrestia",
    "aim7",
    "aim9",
    "analyze-suspend",
    "apachebench",
    "autonuma-benchmark",
    "avocado",
    "blktests",
    "blogbench",
    "bonnie",
    "bust-shm-exit",
    "cassandra",
    "chromeswap",
    "convert-dia-to-png",
    "coremark",
    "cpu-hotplug",
    "cyclictest",
    "dd",
    "debug-test",
    "default",
    "ebizzy",
    "exit-free",
    "ext4-frags",
    "filebench",
    "ftq",
    "ftrace-onoff",
    "fwq",
    "fxmark",
    "generate-md",
    "hpcc",
    "hwsim",
    "idle",
    "igt",
    "intel-ipsec-mb",
    "iozone",
    "jitter",
    "kbuild",
    "kernbench",
    "kernel-selftests",
    "kmemleak-test",
    "kselftests",
    "kselftests-bpf",
    "kselftests-rust",
    "ktools",
    "ku-latency",
    "kunit",
    "kvm-unit-tests",
    "kvm-unit-tests-qemu",
    "leaking-addresses",
    "lib-micro",
    "libhugetlbfs-test",
    "linkbench",
    "linpack",
    "lkvs",
    "lmbench3",
    "locktorture",
    "ltp",
    "lz4-test",
    "makepkg",
    "makepkg-deps",
    "mce-log",
    "mce-test",
    "mcperf",
    "md-to-html-css",
    "mdadm-selftests",
    "memtier",
    "migratepages",
    "mutilate",
    "mytest",
    "nepim",
    "netperf",
    "netpipe",
    "nuttcp",
    "nvml",
    "ocfs2test",
    "openssl-speed",
    "packetdrill",
    "pbzip2",
    "perf-event-tests",
    "perf-fuzzer",
    "perf-sanity-tests",
    "pft",
    "phoronix-test-suite",
    "phpbench",
    "pigz",
    "pixz",
    "plzip",
    "pm-qa",
    "pmbench",
    "postmark",
    "power-idle",
    "pts",
    "pxz",
    "pybench",
    "qat",
    "qperf",
    "rcurefscale",
    "rcuscale",
    "rcutorture",
    "rdma-pyverbs",
    "reaim",
    "reboot",
    "redis",
    "rocksdb",
    "rsync-rootfs",
    "rt-app",
    "schbench",
    "siege",
    "simd-stress",
    "simoop",
    "sleep",
    "sockperf",
    "stream",
    "stutter",
    "suspend",
    "suspend-stress",
    "swapin",
    "tbench",
    "tcrypt",
    "test-bpf",
    "thrulay",
    "tinymembench",
    "tlbflush",
    "trinity",
    "unixbench",
    "uperf",
    "v4l2",
    "vm-scalability",
    "vmem",
    "will-it-scale",
    "xfstests",
    "ycsb",
];

/// Whether `key` names one of [`LKP_PROGRAMS_NOT_RUN`].
pub fn is_lkp_program_not_run(key: &str) -> bool {
    LKP_PROGRAMS_NOT_RUN.contains(&key)
}

/// The program names, comma-separated, for error messages.
pub fn program_names() -> String {
    PROGRAMS
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The monitor names, comma-separated, for error messages.
pub fn monitor_names() -> String {
    MONITORS.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_take_lkps_names_unless_two_would_share_one() {
        let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
            list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        let stored = pairs(&[
            ("fio-setup-basic.bs", "4k"),
            ("fio-setup-basic.rw", "randrw"),
            ("hackbench.mode", "process"),
            ("nr_task", "2"),
            ("runtime", "2s"),
        ]);
        let named = pairs(&[("bs", "4k"), ("rw", "randrw"), ("mode", "process"), ("nr_task", "2"), ("runtime", "2s")]);
        assert_eq!(lkp_param_names(&stored), named);
        // A name two hashes share, or a top-level param's, keeps its hash; a dotted key of no hash stays whole.
        let stored = pairs(&[("fio-setup-basic.runtime", "5"), ("runtime", "2s"), ("kernel.cmdline", "quiet")]);
        assert_eq!(lkp_param_names(&stored), stored);
    }

    #[test]
    fn roles_of_typical_keys() {
        let cases: &[(&str, &str)] = &[
            ("suite", "metadata"),
            ("need_kconfig", "metadata"),
            ("ltp_commit", "metadata"),
            ("linux_branch", "metadata"),
            ("fio", "program fio"),
            ("fs_mark", "program fsmark"),
            ("sysbench-cpu", "program sysbench"),
            ("fio-setup-basic", "setup fio"),
            ("pgbench-setup", "setup pgbench"),
            ("perf-profile", "monitor"),
            ("nr_threads", "param"),
            ("fs", "param"),
            ("runtime", "param"),
        ];
        for (key, want) in cases {
            let got = match key_role(key) {
                KeyRole::Metadata => "metadata".to_string(),
                KeyRole::Program(p, _) => format!("program {}", p.name),
                KeyRole::Setup(p) => format!("setup {}", p.name),
                KeyRole::Monitor(_) => "monitor".to_string(),
                KeyRole::Param => "param".to_string(),
            };
            assert_eq!(&got, want, "key {key}");
        }
    }

    #[test]
    fn qa47_lkp_host_keys_bookkeeping_and_monitors_are_no_params() {
        // Every key lkp's hosts/* files set, the robot's bookkeeping, and lkp's monitors Culprit does not run.
        let cases: &[(&str, bool)] = &[
            ("cpu_info", true),
            ("bios_version", true),
            ("ssh_base_port", true),
            ("ucode", true),
            ("need_kconfig_hw", true),
            ("kernel_cmdline_hw", true),
            ("bisect_dmesg", true),
            ("perf-c2c", true),
            ("perf-sched", true),
            ("blktrace", true),
            ("netserver", true),
            ("testtime", false),
            ("nr_threads", false),
            ("cgroup", false),
        ];
        for (key, metadata) in cases {
            assert_eq!(is_metadata_key(key), *metadata, "key {key}");
        }
        // lkp's cgroup v1 setup is recorded and not applied, as cgroup2 is.
        assert_eq!(box_setting("cgroup").map(|s| s.not_done), Some("puts the benchmark in no cgroup"));
        assert!(is_lkp_program_not_run("unixbench") && is_lkp_program_not_run("kselftests"));
        assert!(!is_lkp_program_not_run("fio") && !is_lkp_program_not_run("sysbench-cpu"));
    }

    #[test]
    fn qa47_monitor_options_are_no_workload_params() {
        let cases: &[(&str, bool)] = &[
            ("perf-sched.lite_mode", false),
            ("perf-profile.debug_mode", false),
            ("perf-c2c.debug_mode", false),
            ("bisect_dmesg", false),
            ("ucode", false),
            ("fio-setup-basic.bs", true),
            ("nr_threads", true),
            ("sysbench-cpu.cpu_max_prime", true),
        ];
        for (key, workload) in cases {
            assert_eq!(is_workload_param(key), *workload, "key {key}");
        }
        let cases: &[(&str, &str, bool)] = &[
            ("perf-profile", "debug_mode", true),
            ("perf-stat", "metrics", true),
            ("perf-profile", "freq", false),
            ("perf-profile", "evnt", false),
            ("vmstat", "debug_mode", false),
        ];
        for (monitor, option, not_applied) in cases {
            assert_eq!(is_lkp_monitor_option_not_applied(monitor, option), *not_applied, "{monitor}.{option}");
        }
    }

    #[test]
    fn expanded_metadata_axes() {
        assert!(is_expanded_metadata_key("commit"));
        assert!(is_expanded_metadata_key("ltp_commit"));
        assert!(is_expanded_metadata_key("kconfig"));
        assert!(!is_expanded_metadata_key("head_commit"));
        assert!(!is_expanded_metadata_key("need_kconfig"));
        assert!(!is_expanded_metadata_key("queue_cmdline_keys"));
    }
}
