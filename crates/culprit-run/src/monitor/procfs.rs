//! Pure parsers of the /proc files the in-process monitors read (stat, meminfo, vmstat, interrupts, softirqs,
//! diskstats). Each takes the file's text and returns numbers; reading the files is the monitors' business, so
//! every parser is tested on recorded real files under `tests/data/proc/`.

use std::collections::BTreeMap;
use thiserror::Error;

/// Why a /proc file's text could not be understood. The kernel writes these files, so an error here means the
/// path does not point at a real procfs (or at a kernel far older than 2.6).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProcParseError {
    #[error("{file} line {line}: {detail}")]
    Malformed { file: &'static str, line: usize, detail: String },
    #[error("{file}: no '{field}' line; is this the kernel's /proc/{file}?")]
    Missing { file: &'static str, field: &'static str },
}

/// A `cpu` line of /proc/stat, in clock ticks since boot. The kernel counts guest time inside user time (and
/// guest_nice inside nice), which matters when computing shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuTicks {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    pub guest: u64,
    pub guest_nice: u64,
}

/// The system-wide counters of /proc/stat that the vmstat and proc-stat monitors use.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcStat {
    /// The aggregate `cpu` line: the sum over every possible CPU, offline ones included.
    pub cpu: CpuTicks,
    /// The `cpu<N>` lines, by CPU number, in file order. The kernel prints them for online CPUs only.
    pub cpus: Vec<(u32, CpuTicks)>,
    /// Interrupts serviced since boot (first number of the `intr` line).
    pub intr: u64,
    /// Context switches since boot.
    pub ctxt: u64,
    /// Forks since boot.
    pub processes: u64,
    pub procs_running: u64,
    pub procs_blocked: u64,
}

fn parse_u64(file: &'static str, line: usize, token: &str) -> Result<u64, ProcParseError> {
    token.parse::<u64>().map_err(|_| ProcParseError::Malformed {
        file,
        line,
        detail: format!("'{token}' is not a non-negative integer"),
    })
}

/// The ticks of a `cpu` or `cpu<N>` line of /proc/stat (line `number`); columns an older kernel does not print
/// count as zero.
fn parse_cpu_ticks<'a>(number: usize, tokens: impl Iterator<Item = &'a str>) -> Result<CpuTicks, ProcParseError> {
    let mut ticks = [0u64; 10];
    for (slot, token) in ticks.iter_mut().zip(tokens) {
        *slot = parse_u64("stat", number, token)?;
    }
    let [user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice] = ticks;
    Ok(CpuTicks { user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice })
}

/// Parses /proc/stat. Older kernels print fewer columns on the `cpu` lines; the missing ones count as zero.
pub fn parse_stat(text: &str) -> Result<ProcStat, ProcParseError> {
    const FILE: &str = "stat";
    let mut stat = ProcStat::default();
    let (mut saw_cpu, mut saw_intr, mut saw_ctxt) = (false, false, false);
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let mut tokens = line.split_ascii_whitespace();
        let Some(label) = tokens.next() else { continue };
        let cpu_number = label.strip_prefix("cpu").filter(|n| !n.is_empty()).and_then(|n| n.parse::<u32>().ok());
        match label {
            "cpu" => {
                stat.cpu = parse_cpu_ticks(number, tokens)?;
                saw_cpu = true;
            }
            _ if cpu_number.is_some() => {
                stat.cpus.push((cpu_number.unwrap_or_default(), parse_cpu_ticks(number, tokens)?));
            }
            "intr" | "ctxt" | "processes" | "procs_running" | "procs_blocked" => {
                let token = tokens.next().ok_or_else(|| ProcParseError::Malformed {
                    file: FILE,
                    line: number,
                    detail: format!("'{label}' has no value"),
                })?;
                let value = parse_u64(FILE, number, token)?;
                match label {
                    "intr" => {
                        stat.intr = value;
                        saw_intr = true;
                    }
                    "ctxt" => {
                        stat.ctxt = value;
                        saw_ctxt = true;
                    }
                    "processes" => stat.processes = value,
                    "procs_running" => stat.procs_running = value,
                    _ => stat.procs_blocked = value,
                }
            }
            _ => {}
        }
    }
    if !saw_cpu {
        return Err(ProcParseError::Missing { file: FILE, field: "cpu" });
    }
    if !saw_intr {
        return Err(ProcParseError::Missing { file: FILE, field: "intr" });
    }
    if !saw_ctxt {
        return Err(ProcParseError::Missing { file: FILE, field: "ctxt" });
    }
    Ok(stat)
}

/// Parses /proc/meminfo into `(key, value)` pairs in file order, values as printed (kB for most keys, page
/// counts for the HugePages_ ones). Lines that livepatch selftests sometimes write into the file are skipped, as
/// lkp skips them.
pub fn parse_meminfo(text: &str) -> Result<Vec<(String, u64)>, ProcParseError> {
    const FILE: &str = "meminfo";
    let mut entries = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with("test_klp_atomic_replace:") || line.starts_with("entries") {
            continue;
        }
        let mut tokens = line.split_ascii_whitespace();
        let (Some(key), Some(value)) = (tokens.next(), tokens.next()) else {
            return Err(ProcParseError::Malformed {
                file: FILE,
                line: index + 1,
                detail: format!("expected 'Key: value [kB]', found '{line}'"),
            });
        };
        let Some(key) = key.strip_suffix(':') else {
            return Err(ProcParseError::Malformed {
                file: FILE,
                line: index + 1,
                detail: format!("key '{key}' does not end with ':'"),
            });
        };
        entries.push((key.to_string(), parse_u64(FILE, index + 1, value)?));
    }
    if entries.is_empty() {
        return Err(ProcParseError::Missing { file: FILE, field: "MemTotal" });
    }
    Ok(entries)
}

/// Parses /proc/vmstat (`name value` lines). When a name repeats, the first occurrence wins, as in lkp's
/// proc-vmstat monitor. The names borrow the text: the file is read every second.
pub fn parse_vmstat(text: &str) -> Result<BTreeMap<&str, u64>, ProcParseError> {
    const FILE: &str = "vmstat";
    let mut counters = BTreeMap::new();
    for (index, line) in text.lines().enumerate() {
        let mut tokens = line.split_ascii_whitespace();
        let Some(name) = tokens.next() else { continue };
        let Some(value) = tokens.next() else {
            return Err(ProcParseError::Malformed {
                file: FILE,
                line: index + 1,
                detail: format!("'{name}' has no value"),
            });
        };
        let value = parse_u64(FILE, index + 1, value)?;
        counters.entry(name).or_insert(value);
    }
    if counters.is_empty() {
        return Err(ProcParseError::Missing { file: FILE, field: "nr_free_pages" });
    }
    Ok(counters)
}

/// The counts of one line of /proc/interrupts or /proc/softirqs: the line's lkp name and its count on each CPU,
/// by the CPU's number in its column's header (`CPU3` is 3). A line with a single system-wide count (`ERR:`,
/// `MIS:`) has one count, under [`SYSTEM_WIDE`].
pub type PerCpuCounts = Vec<(String, Vec<(u32, u64)>)>;

/// The part name of a line's single system-wide count.
pub const SYSTEM_WIDE: u32 = u32::MAX;

/// The CPU numbers of a header line (`CPU0 CPU2 CPU3`); a column whose name is not `CPU<n>` is named by its
/// position.
fn cpu_numbers(header: &str) -> Vec<u32> {
    header
        .split_ascii_whitespace()
        .enumerate()
        .map(|(position, name)| name.strip_prefix("CPU").and_then(|n| n.parse().ok()).unwrap_or(position as u32))
        .collect()
}

/// Parses /proc/interrupts into per-CPU counts, each line named as lkp's interrupts parser names it: a numbered
/// line becomes `<irq>:<chip>.<hwirq>.<device>` (description words joined by `.`, with `,.` collapsed to `,`), a
/// named line `<NAME>:<Description_with_underscores>`, and a line with one count and no description (`ERR:`,
/// `MIS:`) just `<NAME>`. The kernel prints a column for each online CPU only, so the CPUs are named by the header:
/// a CPU that goes offline takes its column with it, and its counts must not be read as another CPU's.
pub fn parse_interrupts_per_cpu(text: &str) -> Result<PerCpuCounts, ProcParseError> {
    const FILE: &str = "interrupts";
    let mut lines = text.lines().enumerate();
    let cpus: Vec<u32> = loop {
        let Some((_, line)) = lines.next() else {
            return Err(ProcParseError::Missing { file: FILE, field: "CPU0" });
        };
        let columns: Vec<&str> = line.split_ascii_whitespace().collect();
        if columns.is_empty() {
            continue;
        }
        if columns.iter().all(|column| column.starts_with("CPU")) {
            break cpu_numbers(line);
        }
        return Err(ProcParseError::Missing { file: FILE, field: "CPU0" });
    };
    let mut lines_out = Vec::new();
    for (index, line) in lines {
        let tokens: Vec<&str> = line.split_ascii_whitespace().collect();
        let Some((label, rest)) = tokens.split_first() else { continue };
        if !label.ends_with(':') {
            return Err(ProcParseError::Malformed {
                file: FILE,
                line: index + 1,
                detail: format!("expected '<irq>:' at the start of '{}'", line.trim()),
            });
        }
        // The per-CPU counts come first; the description starts at the first word that is not a count (or after
        // one count per CPU, in case a description word happens to be a number).
        let counts = rest.iter().take(cpus.len()).take_while(|token| token.parse::<u64>().is_ok()).count();
        let description = rest.get(counts..).unwrap_or_default();
        let single = counts == 1 && description.is_empty();
        let mut per_cpu = Vec::with_capacity(counts);
        for (cpu, token) in cpus.iter().zip(rest.iter().take(counts)) {
            let part = if single { SYSTEM_WIDE } else { *cpu };
            per_cpu.push((part, parse_u64(FILE, index + 1, token)?));
        }
        let key = if description.is_empty() {
            label.trim_end_matches(':').to_string()
        } else if label.trim_end_matches(':').bytes().all(|b| b.is_ascii_digit()) {
            format!("{label}{}", description.join(".").replace(",.", ","))
        } else {
            format!("{label}{}", description.join("_"))
        };
        lines_out.push((key, per_cpu));
    }
    Ok(lines_out)
}

/// Parses /proc/interrupts into per-line totals summed over the CPUs, named as [`parse_interrupts_per_cpu`]
/// names them.
pub fn parse_interrupts(text: &str) -> Result<Vec<(String, u64)>, ProcParseError> {
    parse_interrupts_per_cpu(text).map(sum_over_cpus)
}

/// Parses /proc/softirqs into per-CPU counts per kind (`TIMER`, `NET_RX`, `RCU`, ...), as lkp's softirqs parser
/// names them, with the CPUs named by the header.
pub fn parse_softirqs_per_cpu(text: &str) -> Result<PerCpuCounts, ProcParseError> {
    const FILE: &str = "softirqs";
    let mut lines_out = Vec::new();
    let mut cpus: Option<Vec<u32>> = None;
    for (index, line) in text.lines().enumerate() {
        let mut tokens = line.split_ascii_whitespace();
        let Some(label) = tokens.next() else { continue };
        let Some(name) = label.strip_suffix(':') else {
            if label.starts_with("CPU") {
                cpus = Some(cpu_numbers(line));
                continue;
            }
            return Err(ProcParseError::Malformed {
                file: FILE,
                line: index + 1,
                detail: format!("expected '<KIND>:' at the start of '{}'", line.trim()),
            });
        };
        let mut per_cpu = Vec::new();
        for (position, token) in tokens.enumerate() {
            // A count beyond the header's columns still counts; it is named by its position.
            let cpu = cpus.as_ref().and_then(|cpus| cpus.get(position)).copied().unwrap_or(position as u32);
            per_cpu.push((cpu, parse_u64(FILE, index + 1, token)?));
        }
        lines_out.push((name.to_string(), per_cpu));
    }
    if cpus.is_none() {
        return Err(ProcParseError::Missing { file: FILE, field: "CPU0" });
    }
    Ok(lines_out)
}

/// Parses /proc/softirqs into per-kind totals summed over the CPUs (`TIMER`, `NET_RX`, `RCU`, ...), as lkp's
/// softirqs parser names them.
pub fn parse_softirqs(text: &str) -> Result<Vec<(String, u64)>, ProcParseError> {
    parse_softirqs_per_cpu(text).map(sum_over_cpus)
}

fn sum_over_cpus(lines: PerCpuCounts) -> Vec<(String, u64)> {
    lines
        .into_iter()
        .map(|(key, per_cpu)| (key, per_cpu.iter().fold(0u64, |total, (_, count)| total.saturating_add(*count))))
        .collect()
}

/// The names lkp's diskstats parser gives the first eleven statistics of a /proc/diskstats line, in order.
pub const DISKSTATS_FIELDS: [&str; 11] = [
    "read_ios",
    "read_merges",
    "read_sectors",
    "read_ticks",
    "write_ios",
    "write_merges",
    "write_sectors",
    "write_ticks",
    "in_flight",
    "io_ticks",
    "time_in_queue",
];

/// One block device's line of /proc/diskstats: the first eleven statistics, named by [`DISKSTATS_FIELDS`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskStats {
    pub device: String,
    pub fields: [u64; 11],
}

/// Parses /proc/diskstats. Kernels since 4.18 append discard (and since 5.5 flush) statistics; those are
/// ignored, so the eleven classic fields are read from every kernel. (lkp's own parser requires exactly fourteen
/// columns and so reads nothing on current kernels.)
pub fn parse_diskstats(text: &str) -> Result<Vec<DiskStats>, ProcParseError> {
    const FILE: &str = "diskstats";
    let mut disks = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let tokens: Vec<&str> = line.split_ascii_whitespace().collect();
        if tokens.is_empty() {
            continue;
        }
        let (Some(device), Some(values)) = (tokens.get(2), tokens.get(3..14)) else {
            return Err(ProcParseError::Malformed {
                file: FILE,
                line: index + 1,
                detail: format!("expected 'major minor device' and at least 11 numbers, found {} columns", tokens.len()),
            });
        };
        let mut fields = [0u64; 11];
        for (slot, token) in fields.iter_mut().zip(values) {
            *slot = parse_u64(FILE, index + 1, token)?;
        }
        disks.push(DiskStats { device: device.to_string(), fields });
    }
    Ok(disks)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = include_str!("../../tests/data/proc/stat");
    const MEMINFO: &str = include_str!("../../tests/data/proc/meminfo");
    const VMSTAT: &str = include_str!("../../tests/data/proc/vmstat");
    const INTERRUPTS: &str = include_str!("../../tests/data/proc/interrupts");
    const SOFTIRQS: &str = include_str!("../../tests/data/proc/softirqs");
    const DISKSTATS: &str = include_str!("../../tests/data/proc/diskstats");

    #[test]
    fn stat_golden() {
        let stat = parse_stat(STAT).expect("recorded /proc/stat parses");
        assert_eq!(
            stat.cpu,
            CpuTicks {
                user: 31255,
                nice: 0,
                system: 4748,
                idle: 57940,
                iowait: 543,
                irq: 0,
                softirq: 53,
                steal: 26,
                guest: 0,
                guest_nice: 0
            }
        );
        let (user, system, idle, iowait, softirq, steal) = (16290, 2639, 27836, 461, 42, 15);
        let cpu1 = CpuTicks { user, system, idle, iowait, softirq, steal, ..CpuTicks::default() };
        assert_eq!(stat.cpus.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(stat.cpus.get(1), Some(&(1, cpu1)));
        assert_eq!(stat.intr, 283_529);
        assert_eq!(stat.ctxt, 491_444);
        assert_eq!(stat.processes, 13_141);
        assert_eq!((stat.procs_running, stat.procs_blocked), (2, 0));
    }

    #[test]
    fn stat_short_cpu_line_and_missing_lines() {
        let old = "cpu 1 2 3 4\nintr 5 0 0\nctxt 6\n";
        let stat = parse_stat(old).expect("a 2.4-style cpu line parses");
        assert_eq!((stat.cpu.user, stat.cpu.idle, stat.cpu.iowait), (1, 4, 0));
        assert_eq!(parse_stat("intr 1\nctxt 2\n"), Err(ProcParseError::Missing { file: "stat", field: "cpu" }));
        assert_eq!(parse_stat("cpu 1 2\nctxt 2\n"), Err(ProcParseError::Missing { file: "stat", field: "intr" }));
        assert!(matches!(parse_stat("cpu 1 x\nintr 1\nctxt 2\n"), Err(ProcParseError::Malformed { line: 1, .. })));
    }

    #[test]
    fn meminfo_golden() {
        let entries = parse_meminfo(MEMINFO).expect("recorded /proc/meminfo parses");
        let get = |key: &str| entries.iter().find(|(k, _)| k == key).map(|(_, v)| *v);
        assert_eq!(entries.first(), Some(&("MemTotal".to_string(), 24_684_084)));
        assert_eq!(get("MemFree"), Some(23_207_840));
        assert_eq!(get("Active(anon)"), Some(1_568));
        assert_eq!(get("HugePages_Total"), Some(0));
        assert_eq!(entries.len(), MEMINFO.lines().count());
    }

    #[test]
    fn meminfo_rejects_garbage() {
        assert!(matches!(parse_meminfo("MemTotal 12 kB\n"), Err(ProcParseError::Malformed { line: 1, .. })));
        assert!(matches!(parse_meminfo("MemTotal:\n"), Err(ProcParseError::Malformed { line: 1, .. })));
        assert!(matches!(parse_meminfo(""), Err(ProcParseError::Missing { .. })));
        let skipped = parse_meminfo("MemTotal: 10 kB\ntest_klp_atomic_replace: this has been live patched\n");
        assert_eq!(skipped, Ok(vec![("MemTotal".to_string(), 10)]));
    }

    #[test]
    fn vmstat_golden_and_first_occurrence_wins() {
        let counters = parse_vmstat(VMSTAT).expect("recorded /proc/vmstat parses");
        assert_eq!(counters.get("pgpgin"), Some(&2_069_573));
        assert_eq!(counters.get("pgpgout"), Some(&2_574_280));
        assert_eq!(counters.get("pswpin"), Some(&0));
        let repeated = parse_vmstat("nr_foo 1\nnr_foo 2\n").expect("parses");
        assert_eq!(repeated.get("nr_foo"), Some(&1));
    }

    #[test]
    fn interrupts_golden() {
        let totals = parse_interrupts(INTERRUPTS).expect("recorded /proc/interrupts parses");
        let get = |key: &str| totals.iter().find(|(k, _)| k == key).map(|(_, v)| *v);
        assert_eq!(get("LOC:Local_timer_interrupts"), Some(55_767 + 58_802));
        assert_eq!(get("CAL:Function_call_interrupts"), Some(50_080 + 37_188));
        assert_eq!(get("36:PCI-MSIX-0000:00:02.0.1-edge.virtio1-req.0"), Some(50_341));
        assert_eq!(get("24:IO-APIC.5-edge.ACPI:Ged"), Some(1));
        assert_eq!(get("ERR"), Some(0));
        assert_eq!(get("MIS"), Some(0));
        assert_eq!(totals.len(), INTERRUPTS.lines().count() - 1);
    }

    #[test]
    fn interrupts_naming_cases() {
        let text = "           CPU0       CPU1\n\
                    \x20 16:        10          5   IO-APIC  16-fasteoi   ehci_hcd:usb1, uhci_hcd:usb2\n\
                    NMI:          1          2\n\
                    ERR:          7\n";
        let totals = parse_interrupts(text).expect("parses");
        assert_eq!(
            totals,
            vec![
                ("16:IO-APIC.16-fasteoi.ehci_hcd:usb1,uhci_hcd:usb2".to_string(), 15),
                ("NMI".to_string(), 3),
                ("ERR".to_string(), 7),
            ]
        );
        assert!(matches!(parse_interrupts("garbage\n"), Err(ProcParseError::Missing { .. })));
        assert!(matches!(parse_interrupts("  CPU0\nno colon 1\n"), Err(ProcParseError::Malformed { line: 2, .. })));
    }

    #[test]
    fn interrupt_counts_are_named_by_their_cpu_column() {
        let text = "           CPU0       CPU2\n LOC:        10          5   Local timer interrupts\nERR:          7\n";
        let lines = parse_interrupts_per_cpu(text).expect("parses");
        assert_eq!(
            lines,
            vec![
                ("LOC:Local_timer_interrupts".to_string(), vec![(0, 10), (2, 5)]),
                ("ERR".to_string(), vec![(SYSTEM_WIDE, 7)]),
            ]
        );
        let softirqs = parse_softirqs_per_cpu("  CPU0 CPU1\nTIMER: 3 4\n").expect("parses");
        assert_eq!(softirqs, vec![("TIMER".to_string(), vec![(0, 3), (1, 4)])]);
    }

    #[test]
    fn softirqs_golden() {
        let totals = parse_softirqs(SOFTIRQS).expect("recorded /proc/softirqs parses");
        let names: Vec<&str> = totals.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            ["HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"]
        );
        assert_eq!(totals.get(1), Some(&("TIMER".to_string(), 10_042 + 8_192)));
        assert!(matches!(parse_softirqs("TIMER: 1 x\n"), Err(ProcParseError::Malformed { .. })));
        assert!(matches!(parse_softirqs("TIMER: 1 2\n"), Err(ProcParseError::Missing { .. })));
    }

    #[test]
    fn diskstats_golden() {
        let disks = parse_diskstats(DISKSTATS).expect("recorded /proc/diskstats parses");
        assert_eq!(disks.len(), DISKSTATS.lines().count());
        let vda = disks.iter().find(|d| d.device == "vda").expect("vda is recorded");
        assert_eq!(vda.fields, [44_165, 6_923, 4_139_146, 41_282, 81_755, 19_595, 5_148_560, 25_904, 0, 8_752, 68_105]);
        assert!(matches!(parse_diskstats(" 8 0 sda 1 2 3\n"), Err(ProcParseError::Malformed { line: 1, .. })));
    }
}
