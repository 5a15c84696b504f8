//! Robustness sweep of the /proc monitors: each recorded /proc file, damaged as a racing read or a strange kernel
//! could damage it, read by each /proc monitor that reads it, at its start or at a sample between good ones, must give
//! an error naming the file or finite samples and metrics; never a panic.
//!
//! The damages: every prefix cut at a line boundary, a spread of byte cuts, each line deleted, each line duplicated,
//! each of a spread of numbers replaced by a larger, a smaller, a huge or no number, and bytes overwritten by a seeded
//! xorshift generator. Each monitor runs under `catch_unwind`, so one panic names its file and damage.

use culprit_core::rng::Rng;
use culprit_run::monitor::{self, create_in, Monitor, MonitorOutput, ProcRoot};
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;

/// Byte offsets cut at an even spread through each file, besides the line boundaries.
const BYTE_CUTS: usize = 10;

/// How many of a file's numbers are each replaced by every one of [`NUMBER_REPLACEMENTS`].
const NUMBERS_REPLACED: usize = 12;

/// What a number is replaced by: a counter that went back, one that leapt, one beyond u64 and f64's exact range,
/// and text.
const NUMBER_REPLACEMENTS: [&str; 5] = ["0", "99999999999999999999", "1e400", "-5", "x"];

/// At most this many lines of a file are each deleted and each duplicated, at an even stride (/proc/vmstat has
/// hundreds of lines of one shape).
const LINES_DAMAGED: usize = 40;

/// Rounds of random byte corruption per file.
const CORRUPTION_ROUNDS: usize = 8;

/// At most this many failures are listed; past that the list only repeats one defect.
const MAX_LISTED: usize = 40;

/// The damaged versions of one file's bytes, each with a description of the damage.
fn damages(bytes: &[u8], rng: &mut Rng) -> Vec<(String, Vec<u8>)> {
    let mut out = vec![("emptied".to_string(), Vec::new())];
    let mut starts = vec![0];
    starts.extend(bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i + 1));
    for &cut in starts[1..].iter().step_by(starts.len().div_ceil(LINES_DAMAGED).max(1)) {
        out.push((format!("cut at byte {cut}, a line's end"), bytes[..cut].to_vec()));
    }
    for i in 1..BYTE_CUTS {
        let cut = i * bytes.len() / BYTE_CUTS;
        out.push((format!("cut at byte {cut}"), bytes[..cut].to_vec()));
    }
    let lines = starts.len().saturating_sub(1);
    for line in (0..lines).step_by(lines.div_ceil(LINES_DAMAGED).max(1)) {
        let (start, end) = (starts[line], starts[line + 1]);
        let mut deleted = bytes[..start].to_vec();
        deleted.extend_from_slice(&bytes[end..]);
        out.push((format!("line {} deleted", line + 1), deleted));
        let mut doubled = bytes[..end].to_vec();
        doubled.extend_from_slice(&bytes[start..]);
        out.push((format!("line {} duplicated", line + 1), doubled));
    }
    let numbers: Vec<(usize, usize)> = {
        let mut spans = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i].is_ascii_digit() && (i == 0 || bytes[i - 1] == b' ') {
                let start = i;
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                spans.push((start, i));
            }
            i += 1;
        }
        spans
    };
    let stride = numbers.len().div_ceil(NUMBERS_REPLACED).max(1);
    for &(start, end) in numbers.iter().step_by(stride) {
        for replacement in NUMBER_REPLACEMENTS {
            let mut replaced = bytes[..start].to_vec();
            replaced.extend_from_slice(replacement.as_bytes());
            replaced.extend_from_slice(&bytes[end..]);
            out.push((format!("number at byte {start} replaced by {replacement}"), replaced));
        }
    }
    for round in 0..CORRUPTION_ROUNDS {
        let mut corrupt = bytes.to_vec();
        for _ in 0..=rng.below(3) {
            let at = rng.below(corrupt.len());
            corrupt[at] = rng.next_u64() as u8;
        }
        out.push((format!("corruption round {round}"), corrupt));
    }
    out
}

/// When in a monitor's life the damaged file is read.
#[derive(Debug, Clone, Copy)]
enum When {
    /// At its start, then every sample reads the good file.
    Start,
    /// At its second sample, between good ones.
    BetweenSamples,
}

/// Runs `name` over the recorded files in `root` with `file` damaged into `bytes` at `when`; the failure, if any.
fn run_monitor(name: &str, root: &Path, file: &Path, good: &[u8], bytes: &[u8], when: When) -> Option<String> {
    let proc_root = ProcRoot(root.to_path_buf());
    let mut monitor: Box<dyn Monitor> = create_in(name, &BTreeMap::new(), 1.0, &proc_root).expect("builds");
    let write = |content: &[u8]| std::fs::write(file, content).expect("write the proc file");
    let result = panic::catch_unwind(AssertUnwindSafe(|| -> Result<MonitorOutput, String> {
        write(if matches!(when, When::Start) { bytes } else { good });
        monitor.start().map_err(|e| e.to_string())?;
        for sample in 1..=3 {
            let damaged_now = matches!(when, When::BetweenSamples) && sample == 2;
            write(if damaged_now { bytes } else { good });
            monitor.sample(sample as f64).map_err(|e| e.to_string())?;
        }
        monitor.finish().map_err(|e| e.to_string())
    }));
    write(good);
    let file_name = file.file_name().expect("file name").to_string_lossy().into_owned();
    match result {
        Err(payload) => {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Some(format!("panicked: {message}"))
        }
        Ok(Err(message)) if message.trim().is_empty() => Some("an error with an empty message".to_string()),
        // A monitor that reads several files may fail on another one than the damaged file only if it names it.
        Ok(Err(message)) if !message.contains(root.to_str().expect("a UTF-8 path")) => {
            Some(format!("an error naming no file: {message}"))
        }
        Ok(Err(_)) => None,
        Ok(Ok(output)) => {
            let series = &output.series;
            let samples = series.series.iter().map(|(key, values)| (key.as_str(), values));
            let bad_series = std::iter::once(("time", &series.times))
                .chain(samples)
                .find(|(_, values)| values.iter().any(|v| !v.is_finite()));
            if let Some((key, values)) = bad_series {
                return Some(format!("stored the series {key} = {values:?} ({file_name} damaged)"));
            }
            let bad_metric = output.metrics.iter().find(|(_, value)| !value.is_finite());
            bad_metric.map(|(key, value)| format!("stored the metric {key} = {value}"))
        }
    }
}

/// Whether the monitor `name` reads the /proc file `file`.
fn reads(name: &str, file: &str) -> bool {
    match name {
        "vmstat" => ["stat", "meminfo", "vmstat"].contains(&file),
        "proc-stat" => file == "stat",
        "proc-vmstat" => file == "vmstat",
        other => other == file,
    }
}

#[test]
fn damaged_proc_files_never_panic_a_monitor_nor_give_a_non_finite_value() {
    let recorded = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/proc");
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut files: Vec<_> = std::fs::read_dir(&recorded).expect("recorded /proc").map(|e| e.unwrap().path()).collect();
    files.sort();
    for file in &files {
        std::fs::copy(file, dir.path().join(file.file_name().expect("file name"))).expect("copy");
    }
    let monitors: Vec<&str> = monitor::KNOWN_MONITORS.iter().copied().filter(|m| !m.starts_with("perf-")).collect();
    assert!(monitors.len() >= 6, "{monitors:?}");
    // Seeded, so every run damages the same bytes.
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    let mut failures = Vec::new();
    let mut failed = 0usize;
    let mut runs = 0usize;
    for recorded_file in &files {
        let file = dir.path().join(recorded_file.file_name().expect("file name"));
        let good = std::fs::read(&file).expect("read");
        // The monitors that read this file; a file none reads is read by none.
        let name = file.file_name().expect("file name").to_string_lossy().into_owned();
        let readers: Vec<&str> = monitors.iter().copied().filter(|m| reads(m, &name)).collect();
        for (damage, bytes) in damages(&good, &mut rng) {
            for name in &readers {
                for when in [When::Start, When::BetweenSamples] {
                    runs += 1;
                    if let Some(failure) = run_monitor(name, dir.path(), &file, &good, &bytes, when) {
                        failed += 1;
                        if failures.len() < MAX_LISTED {
                            let shown = file.file_name().expect("file name").to_string_lossy().into_owned();
                            failures.push(format!("{shown}, {damage}, read by {name} at {when:?}: {failure}"));
                        }
                    }
                }
            }
        }
    }
    assert!(runs > 1_000, "only {runs} monitor runs");
    assert!(failed == 0, "{failed} failures among {runs} monitor runs:\n{}", failures.join("\n"));
}

/// `bytes` with `pad` added before every line end, as a /proc file copied through a tool that pads its lines reads.
fn pad_lines(bytes: &[u8], pad: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() * 2);
    for line in bytes.split_inclusive(|b| *b == b'\n') {
        match line.strip_suffix(b"\n") {
            Some(body) => {
                out.extend_from_slice(body);
                out.extend_from_slice(pad);
                out.push(b'\n');
            }
            None => {
                out.extend_from_slice(line);
                out.extend_from_slice(pad);
            }
        }
    }
    out
}

/// Runs `name` with the recorded /proc files of `proc` at its start and those of `proc-1s` at each of its two
/// samples, each with `pad` after every line, copied into `root`.
fn run_padded(name: &str, root: &Path, pad: &[u8]) -> Result<MonitorOutput, String> {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let place = |recorded: &str| {
        for entry in std::fs::read_dir(data.join(recorded)).expect("recorded /proc") {
            let path = entry.expect("entry").path();
            let bytes = std::fs::read(&path).expect("read");
            std::fs::write(root.join(path.file_name().expect("file name")), pad_lines(&bytes, pad)).expect("write");
        }
    };
    let proc_root = ProcRoot(root.to_path_buf());
    let mut monitor: Box<dyn Monitor> = create_in(name, &BTreeMap::new(), 1.0, &proc_root).expect("builds");
    place("proc");
    monitor.start().map_err(|e| e.to_string())?;
    place("proc-1s");
    for sample in 1..=2 {
        monitor.sample(sample as f64).map_err(|e| e.to_string())?;
    }
    monitor.finish().map_err(|e| e.to_string())
}

/// Every /proc monitor gives the same samples and metrics from /proc files with spaces or tabs after every line as
/// from the files as the kernel writes them.
#[test]
fn trailing_spaces_and_tabs_in_proc_files_change_no_sample() {
    let monitors: Vec<&str> = monitor::KNOWN_MONITORS.iter().copied().filter(|m| !m.starts_with("perf-")).collect();
    assert!(monitors.len() >= 6, "{monitors:?}");
    let mut failures = Vec::new();
    for name in monitors {
        let clean_dir = tempfile::tempdir().expect("a temp dir");
        let clean = run_padded(name, clean_dir.path(), b"");
        let Ok(clean) = clean else {
            failures.push(format!("{name} fails on the clean files: {clean:?}"));
            continue;
        };
        assert!(!clean.metrics.is_empty(), "{name} gave no metric from the recorded files");
        for pad in [&b"  "[..], b"\t", b" \t "] {
            let padded_dir = tempfile::tempdir().expect("a temp dir");
            match run_padded(name, padded_dir.path(), pad) {
                Ok(padded) if padded.series == clean.series && padded.metrics == clean.metrics => {}
                Ok(padded) => {
                    let differ: Vec<_> = padded
                        .metrics
                        .iter()
                        .filter(|(key, value)| clean.metrics.get(*key) != Some(value))
                        .chain(clean.metrics.iter().filter(|(key, _)| !padded.metrics.contains_key(*key)))
                        .take(5)
                        .collect();
                    failures.push(format!("{name} with {pad:?} after every line differs, e.g. {differ:?}"));
                }
                Err(e) => failures.push(format!("{name} with {pad:?} after every line fails: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
