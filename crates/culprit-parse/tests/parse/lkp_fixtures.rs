//! Golden tests: every lkp-tests parser fixture under `tests/data/lkp/<program>/` parses to its expected text.
//!
//! The fixtures are lkp-tests' own (`spec/fixtures/stats/`): `<case>` is the raw output and `<case>.yaml` the exact
//! text lkp's parser prints for it. A directory case is a result root whose files are handed to the parser as
//! siblings (`fio.output.N`), with `<dir>/<program>` as the main input when it exists.

use culprit_parse::{lookup, ParseInput};
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

fn check_program(program: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/lkp").join(program);
    let parser = lookup(program).unwrap_or_else(|| panic!("no parser registered for {program}"));
    let mut cases = 0;
    let mut failures = Vec::new();
    let mut entries: Vec<_> = fs::read_dir(&dir).expect("fixture dir").map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.extension().is_some_and(|e| e == "yaml") {
            continue;
        }
        let expected_path = path.with_file_name(format!("{}.yaml", path.file_name().unwrap().to_string_lossy()));
        let expected = fs::read_to_string(&expected_path).expect("expected output");
        let (main, files) = if path.is_dir() {
            let mut files = BTreeMap::new();
            for f in fs::read_dir(&path).unwrap() {
                let f = f.unwrap().path();
                files.insert(f.file_name().unwrap().to_string_lossy().into_owned(), fs::read_to_string(&f).unwrap());
            }
            (files.get(program).cloned().unwrap_or_default(), files)
        } else {
            (fs::read_to_string(&path).expect("raw input"), BTreeMap::new())
        };
        let input = ParseInput { main: &main, files };
        cases += 1;
        let got = match parser.parse(&input) {
            // What `culprit parse` prints; on an output lkp's parser reads whole there is no key of Culprit's own.
            Ok(out) if out.own.is_empty() => out.render_lkp(),
            Ok(out) => format!("Culprit's own keys on lkp's fixture: {}", out.own_lines().join(", ")),
            Err(e) if expected.trim().is_empty() => {
                // lkp prints nothing for this input; an error that says why is the same outcome.
                let _ = e;
                String::new()
            }
            Err(e) => format!("error: {e}"),
        };
        // lkp's spec compares against `File.read(expected).chomp`.
        let want = expected.strip_suffix('\n').unwrap_or(&expected);
        if got != want {
            failures.push(format!("--- {}\n{}", path.display(), first_difference(&got, want)));
        }
    }
    assert!(cases > 0, "no fixtures for {program}");
    assert!(failures.is_empty(), "{} of {cases} {program} fixtures differ:\n{}", failures.len(), failures.join("\n"));
}

fn first_difference(got: &str, want: &str) -> String {
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        if g != w {
            return format!("line {}: got {g:?}, want {w:?}", i + 1);
        }
    }
    format!("line counts differ: got {}, want {}", got.lines().count(), want.lines().count())
}

macro_rules! fixture_tests {
    ($($test:ident => $program:literal),* $(,)?) => {
        $(#[test] fn $test() { check_program($program); })*
    };
}

fixture_tests! {
    dbench => "dbench",
    fio => "fio",
    fsmark => "fsmark",
    hackbench => "hackbench",
    iperf => "iperf",
    mpstat => "mpstat",
    netperf => "netperf",
    perf_bench_futex => "perf-bench-futex",
    perf_bench_mem => "perf-bench-mem",
    perf_bench_numa_mem => "perf-bench-numa-mem",
    perf_bench_sched_messaging => "perf-bench-sched-messaging",
    perf_bench_syscall => "perf-bench-syscall",
    perf_profile => "perf-profile",
    perf_stat => "perf-stat",
    stress_ng => "stress-ng",
    unixbench => "unixbench",
    vm_scalability => "vm-scalability",
    vmstat => "vmstat",
    will_it_scale => "will-it-scale",
}
