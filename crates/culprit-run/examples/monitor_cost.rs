//! Measures what the default monitor set costs: CPU seconds per minute of monitoring at a 1 s interval, in-process
//! (Culprit's way) side by side with the same data gathered the lkp way (`cat` of each /proc file every second
//! plus a `vmstat 1` process).
//!
//! Run: `cargo run --release -p culprit-run --example monitor_cost -- [--seconds S] [--samples N]`
//!
//! Three measurements, all on this machine:
//! 1. in-process, scaled: N back-to-back samples of every default monitor on the calling thread, timed with the
//!    thread's CPU clock (CLOCK_THREAD_CPUTIME_ID); the cost of one sample times 60 is the cost per minute. The
//!    same is printed per monitor.
//! 2. in-process, real time: a [`MonitorSet`] of the default monitors at 1 s for S seconds while the main thread
//!    sleeps; the process's CPU time (getrusage RUSAGE_SELF) over that span is all sampling-thread work (plus the
//!    thread's wake-ups), scaled to a minute.
//! 3. the lkp way, real time: for S seconds, one `cat /proc/<file>` process per file per second (vmstat for
//!    proc-vmstat, meminfo, interrupts, softirqs, diskstats) with output to /dev/null, and one `vmstat 1` running throughout. The
//!    children's CPU time (getrusage RUSAGE_CHILDREN, after they were reaped) plus this process's own CPU time
//!    for forking them is the cost, scaled to a minute. lkp's real monitors also run a shell loop and `date`
//!    per sample, so this is a lower bound of what lkp spends.

use culprit_run::monitor::{self, Monitor, MonitorSet};
use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn thread_cpu_seconds() -> f64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec we own and pass by pointer.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    if status != 0 {
        return f64::NAN;
    }
    now.tv_sec as f64 + now.tv_nsec as f64 * 1e-9
}

fn rusage_seconds(who: libc::c_int) -> f64 {
    // SAFETY: an all-zero rusage is a valid value of this plain C struct; getrusage fills it in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we own.
    if unsafe { libc::getrusage(who, &mut usage) } != 0 {
        return f64::NAN;
    }
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

fn default_set() -> Result<Vec<Box<dyn Monitor>>, monitor::MonitorError> {
    monitor::default_monitors().into_iter().map(|name| monitor::create(name, &BTreeMap::new(), 1.0)).collect()
}

fn percent_of_one_cpu(cpu_seconds_per_minute: f64) -> f64 {
    100.0 * cpu_seconds_per_minute / 60.0
}

/// The thread CPU seconds one `sample()` of monitor `name` takes, over `samples` back-to-back samples.
fn seconds_per_sample(name: &str, samples: u32) -> Result<f64, monitor::MonitorError> {
    let mut one = monitor::create(name, &BTreeMap::new(), 1.0)?;
    one.start()?;
    let before = thread_cpu_seconds();
    for index in 1..=samples {
        one.sample(f64::from(index))?;
    }
    let per_sample = (thread_cpu_seconds() - before) / f64::from(samples);
    one.finish()?;
    Ok(per_sample)
}

fn scaled(samples: u32) -> Result<(), monitor::MonitorError> {
    println!("1. in-process, {samples} back-to-back samples, thread CPU clock, scaled to 60 samples:");
    let mut total = 0.0;
    for name in monitor::default_monitors() {
        let per_sample = seconds_per_sample(name, samples)?;
        total += per_sample;
        println!(
            "   {name:<11} {:>8.1} us/sample  {:>8.5} CPU s/min",
            per_sample * 1e6,
            per_sample * 60.0
        );
    }
    println!(
        "   {:<11} {:>8.1} us/sample  {:>8.5} CPU s/min = {:.4}% of one CPU",
        "all",
        total * 1e6,
        total * 60.0,
        percent_of_one_cpu(total * 60.0)
    );
    // The /proc monitor a job may add to the default set, measured the same way and not counted in "all".
    let name = "proc-stat";
    let per_sample = seconds_per_sample(name, samples)?;
    let (micros, per_minute) = (per_sample * 1e6, per_sample * 60.0);
    println!("   {name:<11} {micros:>8.1} us/sample  {per_minute:>8.5} CPU s/min (not default)");
    Ok(())
}

fn real_time(seconds: u64) -> Result<(), monitor::MonitorError> {
    let monitors = default_set()?;
    let before = rusage_seconds(libc::RUSAGE_SELF);
    let set = MonitorSet::start(monitors, Duration::from_secs(1));
    std::thread::sleep(Duration::from_secs(seconds));
    let results = set.stop();
    let used = rusage_seconds(libc::RUSAGE_SELF) - before;
    let failed: Vec<String> = results
        .iter()
        .filter_map(|(name, result)| result.as_ref().err().map(|e| format!("{name}: {e}")))
        .collect();
    let per_minute = used * 60.0 / seconds as f64;
    println!(
        "2. in-process MonitorSet at 1 s for {seconds} s: {used:.4} CPU s = {per_minute:.5} CPU s/min = {:.4}% of one CPU{}",
        percent_of_one_cpu(per_minute),
        if failed.is_empty() { String::new() } else { format!(" (failures: {})", failed.join("; ")) }
    );
    Ok(())
}

fn lkp_way(seconds: u64) -> std::io::Result<()> {
    const FILES: [&str; 5] =
        ["/proc/vmstat", "/proc/meminfo", "/proc/interrupts", "/proc/softirqs", "/proc/diskstats"];
    let children_before = rusage_seconds(libc::RUSAGE_CHILDREN);
    let self_before = rusage_seconds(libc::RUSAGE_SELF);
    let mut vmstat = Command::new("vmstat").args(["-n", "1"]).stdout(Stdio::null()).spawn()?;
    let origin = Instant::now();
    for tick in 0..seconds {
        for file in FILES {
            Command::new("cat").arg(file).stdout(Stdio::null()).status()?;
        }
        let next = origin + Duration::from_secs(tick + 1);
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    vmstat.kill()?;
    vmstat.wait()?;
    let children = rusage_seconds(libc::RUSAGE_CHILDREN) - children_before;
    let parent = rusage_seconds(libc::RUSAGE_SELF) - self_before;
    let per_minute = (children + parent) * 60.0 / seconds as f64;
    println!(
        "3. lkp way for {seconds} s (cat x{} per second + vmstat 1): children {children:.4} CPU s + spawning {parent:.4} CPU s \
         = {per_minute:.5} CPU s/min = {:.4}% of one CPU",
        FILES.len(),
        percent_of_one_cpu(per_minute)
    );
    Ok(())
}

fn main() {
    let mut seconds: u64 = 20;
    let mut samples: u32 = 2000;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next();
        match (arg.as_str(), value.as_deref().map(str::parse::<u64>)) {
            ("--seconds", Some(Ok(v))) if v > 0 => seconds = v,
            ("--samples", Some(Ok(v))) if v > 0 => samples = u32::try_from(v).unwrap_or(u32::MAX),
            _ => {
                eprintln!("usage: monitor_cost [--seconds S (default 20)] [--samples N (default 2000)]");
                std::process::exit(2);
            }
        }
    }
    println!("default monitors: {}", monitor::default_monitors().join(", "));
    if let Err(error) = scaled(samples).and_then(|()| real_time(seconds)) {
        eprintln!("monitor_cost: {error}");
        std::process::exit(1);
    }
    if let Err(error) = lkp_way(seconds) {
        eprintln!("monitor_cost: the lkp way needs cat and vmstat (Debian: coreutils, procps): {error}");
        std::process::exit(1);
    }
}
