//! Golden and robustness tests for the benchmark parsers (fio, fsmark, dbench, hackbench, oltp, stress-ng, sysbench) on
//! outputs recorded on a real machine, and on bad input: empty, garbage, cut in half, killed mid-run.
//!
//! `tests/data/real/<program>/<case>` is a raw output (a directory is an lkp result root) and `<case>.expected`
//! the exact text the parser must print. `tests/data/real/README.md` records the commands that produced them and
//! how the expected outputs were checked. `tests/data/bad/` holds inputs every parser must reject with a reason.

use culprit_parse::sysbench::{detect_test, Sysbench, SysbenchProgram, SysbenchTest};
use culprit_parse::{lookup, ParseError, ParseInput, Parser};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

const PROGRAMS: [&str; 7] = ["dbench", "fio", "fsmark", "hackbench", "oltp", "stress-ng", "sysbench"];

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn parser(program: &str) -> &'static dyn Parser {
    lookup(program).unwrap_or_else(|| panic!("no parser registered for {program}"))
}

/// Reads a file as the caller of a parser does: bytes decoded lossily, so binary garbage is still text.
fn read_text(path: &Path) -> String {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A case's input: a file's text as `main`, or a result root's files with `<dir>/<program>` as `main`.
fn load_case(path: &Path, program: &str) -> (String, BTreeMap<String, String>) {
    if path.is_dir() {
        let mut files = BTreeMap::new();
        for entry in fs::read_dir(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())) {
            let file = entry.expect("directory entry").path();
            let name = file.file_name().expect("file name").to_string_lossy().into_owned();
            files.insert(name, read_text(&file));
        }
        (files.get(program).cloned().unwrap_or_default(), files)
    } else {
        (read_text(path), BTreeMap::new())
    }
}

fn run(parser: &dyn Parser, main: &str, files: BTreeMap<String, String>) -> Result<String, ParseError> {
    parser.parse(&ParseInput { main, files }).map(|out| out.render())
}

/// Every `(program, case path, expected text)` under `tests/data/real/`.
fn real_cases() -> Vec<(String, PathBuf, String)> {
    let mut cases = Vec::new();
    for program in PROGRAMS {
        let dir = data_dir().join("real").join(program);
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.map(|e| e.expect("directory entry").path()).collect();
        paths.sort();
        for expected_path in paths.into_iter().filter(|p| p.extension().is_some_and(|e| e == "expected")) {
            let case = expected_path.with_extension("");
            assert!(case.exists(), "{} has no raw output next to it", expected_path.display());
            let expected = read_text(&expected_path);
            let expected = expected.strip_suffix('\n').unwrap_or(&expected).to_string();
            cases.push((program.to_string(), case, expected));
        }
    }
    cases
}

#[test]
fn real_outputs_parse_to_their_expected_text() {
    let cases = real_cases();
    let mut failures = Vec::new();
    for (program, case, expected) in &cases {
        let (main, files) = load_case(case, program);
        match run(parser(program), &main, files) {
            Ok(got) if got == *expected => {}
            Ok(got) => failures.push(format!("{}:\n--- got\n{got}\n--- want\n{expected}", case.display())),
            Err(e) => failures.push(format!("{}: error: {e}", case.display())),
        }
    }
    assert!(failures.is_empty(), "{} of {} real cases differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
    // Every program with a Debian package has recorded outputs, and sysbench has all five tests.
    for program in ["dbench", "fio", "hackbench", "stress-ng", "sysbench"] {
        assert!(cases.iter().any(|(p, _, _)| p == program), "no real recorded output for {program}");
    }
    for test in SysbenchTest::ALL {
        let name = test.sysbench_name();
        assert!(
            cases.iter().any(|(p, c, _)| p == "sysbench" && c.file_name().is_some_and(|f| f == name)),
            "no real recorded sysbench {name} output"
        );
    }
}

#[test]
fn real_outputs_yield_numeric_metrics() {
    for (program, case, _) in real_cases() {
        let (main, files) = load_case(&case, &program);
        let out = parser(&program).parse(&ParseInput { main: &main, files }).expect("parses");
        let metrics = out.metrics(&program);
        assert!(!metrics.is_empty(), "{}: no metrics", case.display());
        for line in &out.lines {
            if let culprit_parse::Line::Pair { key, value } = line {
                assert!(value.parse::<f64>().is_ok(), "{}: {key} has non-numeric value {value:?}", case.display());
            }
        }
        assert!(metrics.keys().all(|k| k.starts_with(&format!("{program}."))), "{}: unprefixed metric", case.display());
    }
}

#[test]
fn sysbench_test_detection_and_per_program_parsers() {
    let dir = data_dir().join("real/sysbench");
    for test in SysbenchTest::ALL {
        let text = read_text(&dir.join(test.sysbench_name()));
        // threads and mutex print no banner of their own; lkp's echoed command line tells them apart.
        let detected = detect_test(&text);
        match test {
            SysbenchTest::Threads | SysbenchTest::Mutex => assert_eq!(detected, None, "{test:?}"),
            _ => assert_eq!(detected, Some(test), "{test:?}"),
        }
        let echoed = format!("2026-11-30 15:26:00 sysbench --threads=2 --time=2 {} run\n{text}", test.sysbench_name());
        assert_eq!(detect_test(&echoed), Some(test), "{test:?} with echoed command");

        let program = SysbenchProgram(test);
        assert_eq!(program.name(), format!("sysbench-{}", test.sysbench_name()));
        let generic = run(&Sysbench, &text, BTreeMap::new());
        let specific = run(&program, &text, BTreeMap::new());
        assert!(generic.is_ok(), "{test:?}: {generic:?}");
        assert_eq!(generic, specific, "{test:?}: the sysbench parser and {} disagree", program.name());
    }
    // The memory test's lkp job runs several processes and concatenates their outputs: totals add up.
    let out = run(&Sysbench, &read_text(&dir.join("memory-2-processes")), BTreeMap::new()).expect("parses");
    assert!(out.lines().any(|l| l == "workload: 524288.0"), "{out}");
}

/// What a bad input must produce: the error kind, and a word of its message.
#[derive(Debug, Clone, Copy)]
enum Want {
    NoResults,
    Truncated,
    Json,
}

fn check_error(what: &str, result: Result<String, ParseError>, want: Want, needle: &str) {
    check_error_any(what, result, &[want], needle);
}

fn check_error_any(what: &str, result: Result<String, ParseError>, wants: &[Want], needle: &str) {
    let err = match result {
        Ok(out) => panic!("{what}: expected an error, got Ok({out:?})"),
        Err(e) => e,
    };
    let kind_ok = wants.iter().any(|want| {
        matches!(
            (&err, want),
            (ParseError::NoResults { .. }, Want::NoResults)
                | (ParseError::Truncated { .. }, Want::Truncated)
                | (ParseError::Json { .. }, Want::Json)
        )
    });
    assert!(kind_ok, "{what}: expected one of {wants:?}, got {err:?}");
    let message = err.to_string();
    assert!(message.contains(needle), "{what}: message {message:?} does not mention {needle:?}");
}

#[test]
fn empty_and_garbage_inputs_are_rejected_by_every_parser() {
    for name in ["empty", "garbage", "binary-garbage"] {
        let text = read_text(&data_dir().join("bad").join(name));
        for program in PROGRAMS {
            let result = run(parser(program), &text, BTreeMap::new());
            // Each message says what the parser was looking for. Random bytes may hold a `{`, which fio takes
            // for the start of its JSON document.
            let wants: &[Want] = if program == "fio" { &[Want::NoResults, Want::Json] } else { &[Want::NoResults] };
            check_error_any(&format!("{name} as {program}"), result, wants, "expected");
        }
        for test in SysbenchTest::ALL {
            check_error(
                &format!("{name} as {}", test.lkp_program()),
                run(&SysbenchProgram(test), &text, BTreeMap::new()),
                Want::NoResults,
                "expected",
            );
        }
    }
}

#[test]
fn truncated_and_killed_runs_are_rejected() {
    let cases: &[(&str, &str, Want, &str)] = &[
        // Real outputs cut in half.
        ("fio-truncated.json", "fio", Want::Json, "killed"),
        ("stress-ng-truncated", "stress-ng", Want::Truncated, "run time:"),
        ("hackbench-truncated", "hackbench", Want::Truncated, "Time:"),
        ("dbench-truncated", "dbench", Want::Truncated, "Throughput"),
        ("sysbench-cpu-truncated", "sysbench", Want::Truncated, "execution time"),
        ("sysbench-fileio-truncated", "sysbench", Want::Truncated, "execution time"),
        ("fsmark-truncated", "fsmark", Want::Truncated, "FSUse%"),
        ("oltp-truncated", "oltp", Want::Truncated, "transactions:"),
        // Real runs killed with SIGKILL part-way.
        ("fio-killed.json", "fio", Want::NoResults, "--output-format=json"),
        ("stress-ng-killed", "stress-ng", Want::NoResults, "metrics"),
        ("hackbench-killed", "hackbench", Want::Truncated, "killed"),
        ("dbench-killed", "dbench", Want::Truncated, "killed"),
        ("sysbench-cpu-killed", "sysbench", Want::Truncated, "killed"),
        ("oltp-killed", "oltp", Want::Truncated, "killed"),
        // sysbench's OLTP test with no server to reach: only its FATAL lines.
        ("oltp-no-server", "oltp", Want::NoResults, "FATAL"),
        // Valid-looking output of the wrong kind.
        ("sysbench-fileio-prepare", "sysbench", Want::NoResults, "fileio"),
        ("fio-not-fio.json", "fio", Want::Json, "jobs"),
    ];
    for (file, program, want, needle) in cases {
        let text = read_text(&data_dir().join("bad").join(file));
        check_error(&format!("{file} as {program}"), run(parser(program), &text, BTreeMap::new()), *want, needle);
    }
    // A result root whose fio never wrote its JSON: only the echoed command line is there.
    let (main, files) = load_case(&data_dir().join("bad/fio-result-root-without-output"), "fio");
    check_error("fio result root without fio.output", run(parser("fio"), &main, files), Want::NoResults, "fio.output");
    // An instance file that is cut off fails the whole result root rather than silently dropping the instance.
    let (main, mut files) = load_case(&data_dir().join("real/fio/result-root-2-instances"), "fio");
    if let Some(text) = files.get_mut("fio.output.2") {
        let half = text.len() / 2;
        text.truncate(half);
    }
    check_error("fio result root with a cut instance", run(parser("fio"), &main, files), Want::Json, "fio.output.2");
}

/// A small deterministic generator (xorshift64*) for the fuzz loop; no test depends on its exact values.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Every parser of this suite, including the per-program sysbench parsers.
fn all_parsers() -> Vec<&'static dyn Parser> {
    let mut parsers: Vec<&'static dyn Parser> = PROGRAMS.iter().map(|p| parser(p)).collect();
    for test in SysbenchTest::ALL {
        parsers.push(Box::leak(Box::new(SysbenchProgram(test))));
    }
    parsers
}

/// Feeds one input to every parser: none may panic, and none may claim success with nothing to show.
fn feed_all(parsers: &[&'static dyn Parser], what: &str, text: &str) {
    for parser in parsers {
        if let Ok(out) = parser.parse(&ParseInput::text(text)) {
            assert!(!out.lines.is_empty(), "{what}: {} returned an empty Ok", parser.name());
        }
    }
    // fio also reads result roots: the same text as a lone instance file.
    let mut files = BTreeMap::new();
    files.insert("fio.output.1".to_string(), text.to_string());
    if let Ok(out) = parser("fio").parse(&ParseInput { main: "", files }) {
        assert!(!out.lines.is_empty(), "{what}: fio result root returned an empty Ok");
    }
}

#[test]
fn no_truncation_or_mutation_of_real_output_makes_a_parser_panic() {
    let parsers = all_parsers();
    let mut inputs: Vec<(String, String)> = Vec::new();
    for (program, case, _) in real_cases() {
        let (main, files) = load_case(&case, &program);
        inputs.push((case.display().to_string(), main));
        inputs.extend(files.into_iter().map(|(name, text)| (format!("{}/{name}", case.display()), text)));
    }
    for program in ["dbench", "fio", "fsmark", "hackbench", "stress-ng"] {
        let dir = data_dir().join("lkp").join(program);
        for entry in fs::read_dir(&dir).expect("lkp fixture dir") {
            let path = entry.expect("directory entry").path();
            if path.is_file() && path.extension().is_none_or(|e| e != "yaml") {
                inputs.push((path.display().to_string(), read_text(&path)));
            }
        }
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (name, text) in &inputs {
        // Every prefix at a line end, and a spread of prefixes cut mid-line.
        let boundaries: Vec<usize> = (0..=text.len()).filter(|&i| text.is_char_boundary(i)).collect();
        let step = (boundaries.len() / 60).max(1);
        for (n, &cut) in boundaries.iter().enumerate() {
            let at_line_end = text[..cut].ends_with('\n');
            if at_line_end || n % step == 0 {
                feed_all(&parsers, &format!("{name} cut at {cut}"), &text[..cut]);
            }
        }
        // Random edits: bytes replaced, lines dropped or duplicated, digits turned into letters.
        for round in 0..40 {
            let mut bytes = text.clone().into_bytes();
            for _ in 0..=rng.below(8) {
                if bytes.is_empty() {
                    break;
                }
                let at = rng.below(bytes.len());
                match rng.below(4) {
                    0 => bytes[at] = rng.below(256) as u8,
                    1 => {
                        let end = (at + rng.below(200)).min(bytes.len());
                        bytes.drain(at..end);
                    }
                    2 => {
                        let end = (at + rng.below(200)).min(bytes.len());
                        let copy = bytes[at..end].to_vec();
                        bytes.splice(at..at, copy);
                    }
                    _ => {
                        if bytes[at].is_ascii_digit() {
                            bytes[at] = b'x';
                        } else {
                            bytes.insert(at, b'9');
                        }
                    }
                }
            }
            feed_all(&parsers, &format!("{name} mutation {round}"), &String::from_utf8_lossy(&bytes));
        }
    }
    // Pure noise of several lengths, and numbers at the edges of what f64 and i128 hold.
    for round in 0..300 {
        let len = rng.below(2000);
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        feed_all(&parsers, &format!("noise {round}"), &String::from_utf8_lossy(&bytes));
    }
    let extremes = [
        "Throughput 1e999 MB/sec  99999999999999999999999999999999999999999 clients  0 procs  max_latency=0 ms\n",
        "Running in process mode with 999999999999 groups using 9 file descriptors each (== 99999999999999999999 tasks)\n\
         Each sender will pass 99999999999999999999 messages of 99999999999999999999 bytes\nTime: 0\n",
        "FSUse%\n1 2 3 1e400 -0\n",
        "{\"jobs\": [{\"read\": {\"bw\": 1e308, \"clat_ns\": {}, \"slat_ns\": {}, \"total_ios\": 18446744073709551615},\
          \"write\": {\"bw\": -1, \"clat\": {\"percentile\": []}, \"slat\": {}, \"total_ios\": 18446744073709551615}}]}",
        "Threads started!\n    total number of events: 99999999999999999999999999\n execution time (avg/stddev): ./.\n",
    ];
    for (n, text) in extremes.iter().enumerate() {
        feed_all(&parsers, &format!("extreme {n}"), text);
    }
}

/// The figures a benchmark prints when its clock or counters fail, or prints nothing at all.
const BROKEN_FIGURES: [&str; 6] = ["nan", "-nan", "inf", "0", "0.00", ""];

/// Every recorded output of this suite, by name: real runs and result-root files, then lkp's fixtures.
fn recorded_inputs() -> Vec<(String, String)> {
    let mut inputs: Vec<(String, String)> = Vec::new();
    for (program, case, _) in real_cases() {
        let (main, files) = load_case(&case, &program);
        inputs.push((case.display().to_string(), main));
        inputs.extend(files.into_iter().map(|(name, text)| (format!("{}/{name}", case.display()), text)));
    }
    for program in PROGRAMS {
        let Ok(entries) = fs::read_dir(data_dir().join("lkp").join(program)) else { continue };
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_file() && path.extension().is_none_or(|e| e != "yaml") {
                inputs.push((path.display().to_string(), read_text(&path)));
            }
        }
    }
    inputs
}

/// The byte ranges of the numbers in a text (digits with an optional fraction).
fn number_spans(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric()) {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
                i += 1;
            }
            spans.push((start, i));
        } else {
            i += 1;
        }
    }
    spans
}

/// Each parser on its own (before `Parser::parse`'s final check) must turn a number replaced by `nan`, `inf`, `0`
/// or nothing into an error or into finite values: a NaN or infinity here is a division by a printed zero or a
/// copied `nan` that the parser should name with its line. Only the parsers of this suite are held to that.
#[test]
fn numbers_replaced_by_nan_inf_zero_or_nothing_never_give_a_non_finite_value() {
    let parsers = all_parsers();
    let mut failures = Vec::new();
    for (name, text) in recorded_inputs() {
        let spans = number_spans(&text);
        let step = (spans.len() / 40).max(1);
        for &(start, end) in spans.iter().step_by(step) {
            for figure in BROKEN_FIGURES {
                let mutated = format!("{}{figure}{}", &text[..start], &text[end..]);
                for parser in &parsers {
                    let Ok(out) = parser.read_output(&ParseInput::text(&mutated)) else { continue };
                    for (key, values) in out.samples() {
                        if values.iter().any(|v| !v.is_finite()) && failures.len() < 20 {
                            failures.push(format!(
                                "{name}: {:?} replaced by {figure:?}: {} prints {key}: {values:?}",
                                &text[start..end],
                                parser.name()
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "non-finite values:\n{}", failures.join("\n"));
}

#[test]
fn hackbench_zero_time_is_an_error_through_the_registry() {
    let text = "Running in process mode with 2 groups using 40 file descriptors each (== 80 tasks)\n\
                Each sender will pass 2000 messages of 100 bytes\nTime: 0\n";
    let error = run(parser("hackbench"), text, BTreeMap::new()).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(error.contains("line 3") && error.contains("Time:"), "{error}");
}

#[test]
fn fio_jobs_reported_apart_are_read_as_lkp_reads_them_with_a_note_that_says_so() {
    // fio without --group_reporting reports each of numjobs apart; the first job's iops stood for the run's, half of
    // it here, without a word.
    let path = data_dir().join("real/fio/randread-2-jobs-apart.json");
    let text = read_text(&path);
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let first_iops = json["jobs"][0]["read"]["iops"].as_f64().unwrap();
    let parsed = parser("fio").parse(&ParseInput { main: &text, files: BTreeMap::new() }).unwrap();
    let rendered = parsed.render();
    let iops = rendered.lines().find_map(|line| line.strip_prefix("read_iops: ")).unwrap();
    assert_eq!(iops.parse::<f64>().unwrap(), first_iops);
    assert_eq!(parsed.notes.len(), 1, "{:?}", parsed.notes);
    assert!(parsed.notes[0].contains("fio reported 2 jobs apart"), "{:?}", parsed.notes);
    assert!(parsed.notes[0].contains("run fio with --group_reporting"), "{:?}", parsed.notes);
    // A report of one job (lkp's group_reporting) has no note.
    let one = read_text(&data_dir().join("real/fio/randrw-4k-sync.json"));
    let parsed_one = parser("fio").parse(&ParseInput { main: &one, files: BTreeMap::new() }).unwrap();
    assert_eq!(parsed_one.notes, Vec::<String>::new());
}
