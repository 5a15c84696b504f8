//! Golden tests on real perf outputs recorded on this machine (software events, `cpu-clock` profiles), plus bad
//! input: empty, garbage, truncated and random bytes must give a clear error and never a panic.
//!
//! The expected `.yaml` outputs were printed by lkp-tests' own Ruby parsers for the same files; see
//! `tests/data/perf/README.md`.

use culprit_core::rng::Rng;
use culprit_parse::perf_profile::PerfProfile;
use culprit_parse::perf_stat::PerfStat;
use culprit_parse::{ParseError, ParseInput, Parser};
use std::fs;
use std::path::PathBuf;

fn data(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf").join(name);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn expected(name: &str) -> String {
    let text = data(&format!("{name}.yaml"));
    text.strip_suffix('\n').unwrap_or(&text).to_string()
}

fn parse(parser: &dyn Parser, text: &str) -> Result<String, ParseError> {
    parser.parse(&ParseInput::text(text)).map(|out| out.render())
}

const SOFTWARE_EVENTS_COMMAND: &str = "/usr/bin/perf stat -a --scale -I 1000 -x , -e \
     cpu-clock,task-clock,page-faults,context-switches,cpu-migrations,minor-faults,major-faults --log-fd 1\n";

#[test]
fn perf_stat_lkp_log_matches_lkp() {
    let got = parse(&PerfStat, &data("perf-stat-vm.log")).expect("parses");
    assert_eq!(got, expected("perf-stat-vm.log"));
}

#[test]
fn perf_stat_bare_csv_matches_lkp_with_the_command_line() {
    let csv = data("perf-stat-cpu.csv");
    let bare = parse(&PerfStat, &csv).expect("bare CSV parses");
    assert_eq!(bare, expected("perf-stat-cpu.csv"));
    let with_command = parse(&PerfStat, &format!("{SOFTWARE_EVENTS_COMMAND}{csv}")).expect("parses");
    assert_eq!(with_command, bare);
}

/// A real log of a run shorter than perf's interval (perf at `-I 1000` stopped with SIGINT after 0.5 s, as the
/// monitor stops it): perf printed only the final, partial interval, at 0.47 s. lkp drops a last interval and prints
/// nothing for this log, which Culprit refused as truncated ("perf must run for at least two intervals"); it is the
/// whole run, read as one interval of its length.
#[test]
fn perf_stat_run_shorter_than_one_interval_keeps_its_counts() {
    let out = PerfStat.parse(&ParseInput::text(&data("perf-stat-short.log"))).expect("parses");
    assert_eq!(out.render(), expected("perf-stat-short.log"));
    let metrics = culprit_parse::perf_stat::run_metrics(&out);
    // 951.99 CPU ms in 0.4716 s.
    assert_eq!(metrics.get("perf-stat.ps.cpu-clock"), Some(&(951.99 / 0.471615631)));
    assert_eq!(metrics.get("perf-stat.i.cpu-clock"), Some(&(951.99 / 0.471615631)));
    // A log of one sample line alone is the same run.
    let mut lines = data("perf-stat-short.log").lines().take(2).map(str::to_string).collect::<Vec<_>>().join("\n");
    lines.push('\n');
    let one = PerfStat.parse(&ParseInput::text(&lines)).expect("parses");
    assert_eq!(one.samples().get("ps.cpu-clock"), Some(&vec![951.99 / 0.471615631]));
}

#[test]
fn perf_stat_real_values_are_rates_per_second() {
    // The first interval of perf-stat-cpu.csv: 2004.37 msec of cpu-clock over 1.001 s on 2 busy CPUs.
    let out = PerfStat.parse(&ParseInput::text(&data("perf-stat-cpu.csv"))).expect("parses");
    let samples = out.samples();
    let cpu_clock = samples.get("i.cpu-clock").expect("i.cpu-clock series");
    assert_eq!(cpu_clock.len(), 3, "three complete intervals, the partial last one dropped");
    for rate in cpu_clock {
        assert!((1900.0..=2010.0).contains(rate), "two busy CPUs give about 2000 CPU ms per second, got {rate}");
    }
    let metrics = out.metrics("perf-stat");
    assert!(metrics.contains_key("perf-stat.ps.context-switches"));
    assert!(metrics.contains_key("perf-stat.i.page-faults"));
}

/// lkp's fixture `perf-stat/4` (three complete intervals of hardware counters) with the node-load group not
/// scheduled in the second interval, as perf prints it under heavy multiplexing: `<not counted>`, which lkp's parser
/// skips, so that interval has neither `i.node-loads` nor `i.node-load-miss-rate%`. lkp's dump-stat pads the gap
/// with a zero and its stats divide by the three intervals; the run's metric is that, not the mean of the two
/// intervals that have a value (which it was: 68.535 instead of 45.690 for the miss rate).
#[test]
fn perf_stat_interval_keys_missing_in_an_interval_count_as_zero_as_in_lkp() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/lkp/perf-stat/4");
    let log = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut replaced = 0;
    let log: String = log
        .split_inclusive('\n')
        .map(|line| {
            if line.starts_with("     2.003845376,") && line.contains(",node-load") {
                replaced += 1;
                let event = line.split(',').nth(3).unwrap_or_default();
                format!("     2.003845376,<not counted>,,{event},0,0.00,,\n")
            } else {
                line.to_string()
            }
        })
        .collect();
    assert_eq!(replaced, 2, "the second interval's node-loads and node-load-misses lines");
    let out = PerfStat.parse(&ParseInput::text(&log)).expect("parses");
    let samples = out.samples();
    // The per-interval values of lkp's own output for the fixture, for the first and third intervals.
    let (first, third) = (59.84599582969824, 77.22410484016073);
    assert_eq!(samples.get("i.node-load-miss-rate%"), Some(&vec![first, third]));
    assert_eq!(samples.get("i.cpu-cycles").map(Vec::len), Some(3));
    let metrics = culprit_parse::perf_stat::run_metrics(&out);
    assert_eq!(metrics.get("perf-stat.i.node-load-miss-rate%"), Some(&((first + third) / 3.0)));
    let (loads_first, loads_third) = (518732.30330662214, 151442.99963241196);
    assert_eq!(metrics.get("perf-stat.i.node-loads"), Some(&((loads_first + loads_third) / 3.0)));
    // Keys every interval has are their plain mean, and once-printed keys keep their value.
    let cycles = samples.get("i.cpu-cycles").unwrap();
    assert_eq!(metrics.get("perf-stat.i.cpu-cycles"), Some(&(cycles.iter().sum::<f64>() / 3.0)));
    let ps = samples.get("ps.cpu-cycles").unwrap();
    assert_eq!(metrics.get("perf-stat.ps.cpu-cycles"), ps.first());
    assert!(metrics.contains_key("perf-stat.overall.node-load-miss-rate%"));
    assert!(!metrics.contains_key("perf-stat.time"));
}

/// lkp takes a series of one value as that value: a key only the first of several intervals prints keeps it.
#[test]
fn perf_stat_key_of_the_first_interval_alone_keeps_its_value_as_in_lkp() {
    let mut out = culprit_parse::ParseOutput::default();
    for (time, ratio) in [("1.0", Some("40.0")), ("2.0", None), ("3.0", None)] {
        out.push("time", time);
        out.push("i.cpu-clock", "1000.0");
        if let Some(ratio) = ratio {
            out.push("i.x-miss-rate%", ratio);
        }
    }
    out.push("ps.cpu-clock", "1000.0");
    let metrics = culprit_parse::perf_stat::run_metrics(&out);
    assert_eq!(metrics.get("perf-stat.i.x-miss-rate%"), Some(&40.0));
    assert_eq!(metrics.get("perf-stat.i.cpu-clock"), Some(&1000.0));
    assert_eq!(metrics.get("perf-stat.ps.cpu-clock"), Some(&1000.0));
}

#[test]
fn perf_stat_event_not_on_the_command_line_stops_like_lkp() {
    let csv = data("perf-stat-cpu.csv");
    let command = SOFTWARE_EVENTS_COMMAND.replace("cpu-clock,task-clock,", "");
    let err = parse(&PerfStat, &format!("{command}{csv}")).expect_err("first sample is cpu-clock, not listed");
    assert!(err.to_string().contains("does not list"), "{err}");
}

#[test]
fn perf_profile_real_reports_match_lkp() {
    for name in ["perf-profile-cpu.txt", "perf-profile-switch.txt"] {
        let got = parse(&PerfProfile, &data(name)).expect("parses");
        let want = expected(name);
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn perf_profile_metric_names_use_the_cpu_clock_event() {
    let out = PerfProfile.parse(&ParseInput::text(&data("perf-profile-switch.txt"))).expect("parses");
    let metrics = out.metrics("perf-profile");
    for key in [
        "perf-profile.children.cpu-clock.anon_pipe_read",
        "perf-profile.self.cpu-clock._raw_spin_unlock_irqrestore",
        // `finish_task_switch.isra.0` in the report: the compiler suffix is dropped.
        "perf-profile.self.cpu-clock.finish_task_switch",
        "perf-profile.calltrace.cpu-clock.anon_pipe_read.vfs_read.ksys_read.do_syscall_64.entry_SYSCALL_64_after_hwframe",
    ] {
        assert!(metrics.contains_key(key), "missing {key}");
    }
    assert!(!metrics.keys().any(|k| k.contains(".isra.")));
    assert!(metrics.values().all(|v| (0.05..=100.0).contains(v)));
}

#[test]
fn perf_profile_ignores_perfs_column_padding() {
    // The perf-profile monitor keeps the report with each line's trailing padding removed; it must parse the same.
    for name in ["perf-profile-cpu.txt", "perf-profile-switch.txt"] {
        let report = data(name);
        let trimmed: String = report.lines().map(|l| format!("{}\n", l.trim_end())).collect();
        assert!(trimmed.len() < report.len(), "{name} has padding to remove");
        assert_eq!(parse(&PerfProfile, &trimmed).expect("trimmed parses"), expected(name), "{name}");
    }
}

#[test]
fn empty_and_garbage_inputs_are_errors() {
    for parser in [&PerfStat as &dyn Parser, &PerfProfile] {
        for input in ["", "\n", "hello world\n", "{\"json\": true}", "# ========\n", "1.5\n"] {
            let result = parse(parser, input);
            assert!(result.is_err(), "{} accepted {input:?}: {result:?}", parser.name());
        }
    }
    let err = parse(&PerfProfile, "hello\n").expect_err("not a report");
    assert!(err.to_string().contains("--header"), "{err}");
    let err = parse(&PerfStat, "hello\n").expect_err("not a perf stat log");
    assert!(err.to_string().contains("perf stat -I"), "{err}");
}

#[test]
fn truncated_perf_reports_are_errors_or_partial() {
    let report = data("perf-profile-switch.txt");
    let lines: Vec<&str> = report.lines().collect();
    let samples_line = lines.iter().position(|l| l.starts_with("# Samples:")).expect("samples line");
    // Cut inside the header, before the event is named.
    let header_only = lines.get(..samples_line).expect("header").join("\n");
    let err = parse(&PerfProfile, &header_only).expect_err("no event");
    assert!(matches!(err, ParseError::Truncated { .. }), "{err}");
    // Cut after the column headings, before the first record.
    let no_records = lines.get(..samples_line + 6).expect("headings").join("\n");
    let err = parse(&PerfProfile, &no_records).expect_err("no records");
    assert!(matches!(err, ParseError::Truncated { .. }), "{err}");
    // Cut in the middle of the body: what was read is reported, a subset of the full report's keys.
    let half = lines.get(..lines.len() / 2).expect("half").join("\n");
    let partial = PerfProfile.parse(&ParseInput::text(&half)).expect("partial report parses");
    let full = PerfProfile.parse(&ParseInput::text(&report)).expect("full report parses");
    let full_keys = full.samples();
    assert!(!partial.lines.is_empty());
    assert!(partial.samples().keys().all(|k| full_keys.contains_key(k)));
}

#[test]
fn random_bytes_and_mangled_outputs_never_panic() {
    // Seeded, so the random inputs are the same on every run.
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    let seeds = [
        data("perf-stat-cpu.csv"),
        data("perf-stat-vm.log"),
        data("perf-profile-cpu.txt"),
        data("perf-profile-switch.txt"),
    ];
    let alphabet = b"0123456789.,%;:/ \n\t-SK_{}#=abcperfstat'[]IMCBytes";
    for round in 0..3000 {
        let input = match round % 3 {
            // Raw random bytes, made text the way a caller reading a file lossily would.
            0 => {
                let bytes: Vec<u8> = (0..rng.below(400)).map(|_| rng.next_u64() as u8).collect();
                String::from_utf8_lossy(&bytes).into_owned()
            }
            // Random text from the characters the parsers care about.
            1 => (0..rng.below(400)).map(|_| alphabet[rng.below(alphabet.len())] as char).collect(),
            // A real output with random lines dropped, duplicated or cut short.
            _ => {
                let seed = &seeds[rng.below(seeds.len())];
                let mut out = String::new();
                for line in seed.lines() {
                    match rng.below(10) {
                        0 => {}
                        1 => {
                            out.push_str(line);
                            out.push('\n');
                            out.push_str(line);
                            out.push('\n');
                        }
                        2 => {
                            let cut = line.char_indices().map(|(i, _)| i).nth(rng.below(line.len() + 1));
                            out.push_str(line.get(..cut.unwrap_or(line.len())).unwrap_or(line));
                            out.push('\n');
                        }
                        _ => {
                            out.push_str(line);
                            out.push('\n');
                        }
                    }
                }
                out
            }
        };
        // Either outcome is fine; a panic fails the test.
        let _ = parse(&PerfStat, &input);
        let _ = parse(&PerfProfile, &input);
        let _ = parse(&PerfStat, &format!("{SOFTWARE_EVENTS_COMMAND}{input}"));
        let _ = parse(&PerfProfile, &format!("# ========\n# Samples: 9  of event 'cpu-clock'\n{input}"));
    }
}
