//! Facts about the machine a run happens on: CPU model and count, memory, kernel, hostname.

use culprit_core::model::Machine;
use std::fs;

/// The CPU model from `/proc/cpuinfo` text: the first `model name` (x86) or `Model`/`cpu model` line.
pub fn cpu_model_from_cpuinfo(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        let key = key.trim();
        (key == "model name" || key == "Model" || key == "cpu model").then(|| value.trim().to_string())
    })
}

/// `MemTotal` in KiB from `/proc/meminfo` text.
pub fn mem_total_kib_from_meminfo(meminfo: &str) -> Option<u64> {
    meminfo.lines().find_map(|line| line.strip_prefix("MemTotal:")?.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The number of CPUs online, as `nproc` reports it (respecting the affinity mask).
pub fn nr_cpu() -> u32 {
    std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1)
}

/// Reads the facts of this machine. Missing files give empty fields, never an error: a run on an odd system is
/// still worth storing.
pub fn this_machine() -> Machine {
    let read = |p: &str| fs::read_to_string(p).unwrap_or_default();
    Machine {
        hostname: read("/proc/sys/kernel/hostname").trim().to_string(),
        cpu_model: cpu_model_from_cpuinfo(&read("/proc/cpuinfo")).unwrap_or_else(|| "unknown CPU".to_string()),
        nr_cpu: nr_cpu(),
        memory_kib: mem_total_kib_from_meminfo(&read("/proc/meminfo")).unwrap_or(0),
        kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cpuinfo_and_meminfo() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nflags\t\t: fpu\n";
        assert_eq!(cpu_model_from_cpuinfo(cpuinfo).as_deref(), Some("AMD EPYC"));
        assert_eq!(cpu_model_from_cpuinfo("processor : 0\n"), None);
        assert_eq!(mem_total_kib_from_meminfo("MemTotal:       24598296 kB\nMemFree: 1 kB\n"), Some(24598296));
        assert_eq!(mem_total_kib_from_meminfo("garbage"), None);
    }

    #[test]
    fn this_machine_is_described() {
        let m = this_machine();
        assert!(m.nr_cpu >= 1);
        assert!(m.memory_kib > 0);
        assert!(!m.kernel.is_empty());
        assert!(m.describe().contains("threads"));
    }
}
