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

/// The CPUs this process may run on (its affinity mask, which a cpuset cgroup or `taskset` narrows), ascending; the
/// CPUs a benchmark may bind its tasks to. `nr_cpu` counts them too, but may be smaller still under a cgroup CPU
/// quota, which limits time, not which CPUs run. Without an answer from the kernel, CPUs 0 to `nr_cpu` - 1.
pub fn usable_cpus() -> Vec<u32> {
    // SAFETY: cpu_set_t is plain bits, zeroed is the empty set, and the kernel writes at most its size.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let asked = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    let cpus: Vec<u32> = if asked == 0 {
        (0..libc::CPU_SETSIZE as u32).filter(|&cpu| unsafe { libc::CPU_ISSET(cpu as usize, &set) }).collect()
    } else {
        Vec::new()
    };
    if cpus.is_empty() { (0..nr_cpu()).collect() } else { cpus }
}

/// How many sockets (physical packages) `package_ids` span: the `physical_package_id` of each usable CPU, `None`
/// where the kernel gives none. 0, "not recorded", when any is missing or negative (some arm64 firmware leaves it
/// -1): a count of the CPUs it could read would be a guess.
pub fn sockets_of(package_ids: &[Option<i64>]) -> u32 {
    let mut seen: Vec<i64> = Vec::new();
    for id in package_ids {
        match id {
            Some(id) if *id >= 0 => {
                if !seen.contains(id) {
                    seen.push(*id);
                }
            }
            _ => return 0,
        }
    }
    seen.len() as u32
}

/// The sockets of the CPUs this process may use, from sysfs' CPU topology; 0 when it cannot tell.
pub fn usable_sockets() -> u32 {
    let read = |cpu: &u32| {
        let path = format!("/sys/devices/system/cpu/cpu{cpu}/topology/physical_package_id");
        fs::read_to_string(path).ok().and_then(|text| text.trim().parse().ok())
    };
    sockets_of(&usable_cpus().iter().map(read).collect::<Vec<_>>())
}

/// A CPU set in the kernel's list format (`0-3,8,10-11`), as `Cpus_allowed_list` and fio's `cpus_allowed` write
/// it; `cpus` ascending.
pub fn cpu_list_text(cpus: &[u32]) -> String {
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for &cpu in cpus {
        match ranges.last_mut() {
            Some((_, last)) if cpu == *last + 1 => *last = cpu,
            _ => ranges.push((cpu, cpu)),
        }
    }
    let text = |(first, last): &(u32, u32)| if first == last { first.to_string() } else { format!("{first}-{last}") };
    ranges.iter().map(text).collect::<Vec<_>>().join(",")
}

/// The name this machine's runs are stored under: `$CULPRIT_MACHINE` when set, else its host name (empty when the
/// kernel does not say); see `culprit_store::machine_name`.
pub fn hostname() -> String {
    culprit_store::machine_name()
}

/// Reads the facts of this machine. Missing files give empty fields, never an error: a run on an odd system is
/// still worth storing.
pub fn this_machine() -> Machine {
    let read = |p: &str| fs::read_to_string(p).unwrap_or_default();
    Machine {
        hostname: hostname(),
        cpu_model: cpu_model_from_cpuinfo(&read("/proc/cpuinfo")).unwrap_or_else(|| "unknown CPU".to_string()),
        nr_cpu: nr_cpu(),
        memory_kib: mem_total_kib_from_meminfo(&read("/proc/meminfo")).unwrap_or(0),
        kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
        sockets: usable_sockets(),
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
    fn sockets_are_the_distinct_packages_of_the_usable_cpus_or_unknown() {
        assert_eq!(sockets_of(&[Some(0), Some(0), Some(1), Some(1)]), 2);
        assert_eq!(sockets_of(&[Some(1), Some(1)]), 1, "CPUs pinned to the second socket");
        assert_eq!(sockets_of(&[Some(0), None]), 0, "a CPU without topology");
        assert_eq!(sockets_of(&[Some(-1), Some(-1)]), 0, "firmware that gives no package");
        assert_eq!(sockets_of(&[]), 0);
        // This machine's: its first CPU has a package wherever sysfs has CPU topology.
        let sysfs = std::path::Path::new("/sys/devices/system/cpu/cpu0/topology/physical_package_id");
        if sysfs.exists() {
            assert!(usable_sockets() >= 1 && usable_sockets() as usize <= usable_cpus().len());
        }
    }

    #[test]
    fn a_cpu_set_is_written_as_the_kernel_lists_it() {
        assert_eq!(cpu_list_text(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(cpu_list_text(&[5]), "5");
        assert_eq!(cpu_list_text(&[0, 2, 4]), "0,2,4");
        assert_eq!(cpu_list_text(&[]), "");
    }

    #[test]
    fn the_usable_cpus_are_the_affinity_mask_as_proc_lists_it() {
        let status = fs::read_to_string("/proc/self/status").unwrap();
        let listed = status.lines().find_map(|line| line.strip_prefix("Cpus_allowed_list:")).unwrap().trim();
        assert_eq!(cpu_list_text(&usable_cpus()), listed);
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
