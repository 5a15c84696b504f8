//! Robustness sweep: every recorded output of every parser (benchmarks and monitors), damaged in every systematic way
//! a killed run, a full disk or a bad copy damages it, must give an error that says something or finite values.
//!
//! The damages are deterministic: every prefix cut at a line boundary, prefixes cut at a spread of byte offsets (inside
//! a multi-byte UTF-8 character and inside a number among them), each line deleted, each line duplicated, and a few
//! bytes overwritten by a seeded xorshift generator. Each parse runs under `catch_unwind`, so one panic names its file
//! and damage instead of ending the sweep. The bytes are decoded lossily, as `culprit parse` and the executor decode a
//! file, so a cut inside a character reaches the parser as U+FFFD.

use culprit_core::rng::Rng;
use culprit_parse::sysbench::{SysbenchProgram, SysbenchTest};
use culprit_parse::{lookup, perf_stat, registry, Line, ParseInput, Parser};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fs;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// At most this many cuts, deletions or duplications per file and kind of damage: the largest recordings (perf
/// profiles of thousands of lines) would otherwise make the sweep quadratic in their size. Lines are then taken at an
/// even stride, so the start, middle and end of the file are all damaged.
const MAX_PER_KIND: usize = 300;

/// Byte offsets cut at an even spread through each file, besides the line boundaries.
const BYTE_CUTS: usize = 40;

/// Rounds of random byte corruption per file.
const CORRUPTION_ROUNDS: usize = 30;

/// Every this many damages of a recording go to every parser, not only to the recording's own.
const CROSS_FEED_EVERY: usize = 20;

/// At most this many failures are listed; past that the list only repeats one defect.
const MAX_LISTED: usize = 40;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// One recording: a file, or an lkp result root whose files are handed to the parser together.
struct Recording {
    name: String,
    parsers: Vec<&'static dyn Parser>,
    /// The files by name; `main` names the one that is the parser's main input (it may be absent from a root).
    files: BTreeMap<String, Vec<u8>>,
    main: String,
}

/// The parsers a recording of `program` belongs to: its own, and for sysbench every per-test parser too, since the
/// family's parser hands the text on to one of them.
fn parsers_of(program: &str) -> Vec<&'static dyn Parser> {
    let parser = lookup(program).unwrap_or_else(|| panic!("no parser registered for {program}"));
    let mut parsers = vec![parser];
    if program == "sysbench" {
        for test in SysbenchTest::ALL {
            parsers.push(Box::leak(Box::new(SysbenchProgram(test))));
        }
    }
    parsers
}

/// Whether a file in a data directory is a recording rather than an expected output or a note.
fn is_recording(path: &Path) -> bool {
    !path.extension().is_some_and(|e| e == "yaml" || e == "expected" || e == "md")
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| is_recording(p))
        .collect();
    paths.sort();
    paths
}

fn recording(path: &Path, program: &str) -> Recording {
    let name = path.strip_prefix(data_dir()).unwrap_or(path).display().to_string();
    let parsers = parsers_of(program);
    let mut files = BTreeMap::new();
    let main = if path.is_dir() {
        for file in sorted_entries(path) {
            let file_name = file.file_name().expect("file name").to_string_lossy().into_owned();
            files.insert(file_name, fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display())));
        }
        program.to_string()
    } else {
        files.insert(String::new(), fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())));
        String::new()
    };
    Recording { name, parsers, files, main }
}

/// Every recording under `tests/data`: lkp's fixtures, the outputs recorded on a real machine, the perf logs and the
/// bad inputs, each with the parser it was recorded for (the program-less bad inputs with every parser).
fn recordings() -> Vec<Recording> {
    let mut all = Vec::new();
    for top in ["lkp", "real", "real2", "bad2"] {
        for program_dir in sorted_entries(&data_dir().join(top)) {
            if !program_dir.is_dir() {
                continue;
            }
            let dir_name = program_dir.file_name().expect("dir name").to_string_lossy().into_owned();
            // real2's `vmstat-cut` holds vmstat outputs cut short.
            let program = dir_name.strip_suffix("-cut").unwrap_or(&dir_name).to_string();
            for path in sorted_entries(&program_dir) {
                all.push(recording(&path, &program));
            }
        }
    }
    for path in sorted_entries(&data_dir().join("perf")) {
        let file_name = path.file_name().expect("file name").to_string_lossy().into_owned();
        let program = if file_name.starts_with("perf-stat") { "perf-stat" } else { "perf-profile" };
        all.push(recording(&path, program));
    }
    for path in sorted_entries(&data_dir().join("bad")) {
        let file_name = path.file_name().expect("file name").to_string_lossy().into_owned();
        let program = ["sysbench", "stress-ng", "hackbench", "dbench", "fsmark", "oltp", "fio"]
            .into_iter()
            .find(|program| file_name.starts_with(&format!("{program}-")));
        match program {
            Some(program) => all.push(recording(&path, program)),
            None => {
                let mut every = recording(&path, "fio");
                every.parsers = registry().to_vec();
                all.push(every);
            }
        }
    }
    all
}

/// The byte offsets just after each `\n`, and the end of the text, taken at an even stride when there are many.
fn line_starts(bytes: &[u8]) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i + 1));
    if *starts.last().expect("one start") != bytes.len() {
        starts.push(bytes.len());
    }
    starts
}

/// `items` thinned to at most `max` at an even stride, keeping the last.
fn thin<T: Copy>(items: &[T], max: usize) -> Vec<T> {
    if items.len() <= max {
        return items.to_vec();
    }
    let stride = items.len().div_ceil(max);
    let mut kept: Vec<T> = items.iter().copied().step_by(stride).collect();
    kept.push(*items.last().expect("not empty"));
    kept
}

/// The damaged versions of one file's bytes, each with a description of the damage for a failure message.
fn damages(bytes: &[u8], rng: &mut Rng) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let starts = line_starts(bytes);
    for cut in thin(&starts, MAX_PER_KIND) {
        out.push((format!("cut at line boundary, byte {cut}"), bytes[..cut].to_vec()));
    }
    let mut offsets: Vec<usize> = (0..BYTE_CUTS).map(|i| i * bytes.len() / BYTE_CUTS).collect();
    // Inside a multi-byte UTF-8 character: after its first byte (the first few such characters are enough).
    offsets.extend(bytes.iter().enumerate().filter(|(_, b)| **b >= 0xC0).map(|(i, _)| i + 1).take(4));
    // Inside a number: between its first and second digit, for an even spread of numbers of two digits or more.
    let numbers: Vec<usize> = (1..bytes.len())
        .filter(|&i| bytes[i - 1].is_ascii_digit() && bytes[i].is_ascii_digit())
        .filter(|&i| i < 2 || !bytes[i - 2].is_ascii_digit())
        .collect();
    offsets.extend(thin(&numbers, 20));
    for cut in offsets {
        out.push((format!("cut at byte {cut}"), bytes[..cut].to_vec()));
    }
    // A number replaced by 10^308 written out, near the largest f64: a corrupted counter. Alone it is finite, but a
    // sum or mean over two such samples is not, and that must not reach the store either.
    let huge = format!("1{}", "0".repeat(308));
    for start in thin(&numbers, 10) {
        let start = start - 1;
        let end = start + bytes[start..].iter().take_while(|b| b.is_ascii_digit() || **b == b'.').count();
        let mut replaced = bytes[..start].to_vec();
        replaced.extend_from_slice(huge.as_bytes());
        replaced.extend_from_slice(&bytes[end..]);
        out.push((format!("number at byte {start} replaced by 10^308"), replaced));
    }
    let lines: Vec<usize> = (0..starts.len() - 1).collect();
    for line in thin(&lines, MAX_PER_KIND) {
        let (start, end) = (starts[line], starts[line + 1]);
        let mut deleted = bytes[..start].to_vec();
        deleted.extend_from_slice(&bytes[end..]);
        out.push((format!("line {} deleted", line + 1), deleted));
        let mut doubled = bytes[..end].to_vec();
        doubled.extend_from_slice(&bytes[start..]);
        out.push((format!("line {} duplicated", line + 1), doubled));
    }
    for round in 0..CORRUPTION_ROUNDS {
        if bytes.is_empty() {
            break;
        }
        let mut corrupt = bytes.to_vec();
        let mut at = Vec::new();
        for _ in 0..=rng.below(4) {
            let i = rng.below(corrupt.len());
            corrupt[i] = rng.next_u64() as u8;
            at.push(i);
        }
        out.push((format!("corruption round {round} (bytes {at:?})"), corrupt));
    }
    out
}

thread_local! {
    /// Where the last panic of this thread happened, recorded by the hook so the failure list can name it.
    static PANIC_AT: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Parses one input under `catch_unwind`; a failure is a panic, an empty error message or a non-finite value.
fn check(parser: &dyn Parser, input: &ParseInput<'_>) -> Result<(), String> {
    let result = match panic::catch_unwind(AssertUnwindSafe(|| parser.parse(input))) {
        Ok(result) => result,
        Err(payload) => {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            let at = PANIC_AT.with(|at| at.borrow().clone());
            return Err(format!("panicked at {at}: {message}"));
        }
    };
    let out = match result {
        Ok(out) => out,
        Err(e) if e.to_string().trim().is_empty() => return Err(format!("error with an empty message: {e:?}")),
        Err(_) => return Ok(()),
    };
    for line in &out.lines {
        if let Line::Pair { key, value } = line {
            if value.trim().parse::<f64>().is_ok_and(|v| !v.is_finite()) {
                return Err(format!("Ok with {key}: {value}"));
            }
        }
    }
    let mut metrics = out.metrics(parser.name());
    if parser.name() == "perf-stat" {
        metrics.extend(perf_stat::run_metrics(&out));
    }
    if let Some((key, value)) = metrics.iter().find(|(_, v)| !v.is_finite()) {
        return Err(format!("Ok, but its metric {key} is {value}"));
    }
    Ok(())
}

#[test]
fn damaged_recordings_never_panic_and_never_yield_a_non_finite_value() {
    panic::set_hook(Box::new(|info| {
        let at = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
        PANIC_AT.with(|cell| *cell.borrow_mut() = at);
    }));
    // Seeded, so every run damages the same bytes.
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    let mut failures = Vec::new();
    let mut failed = 0usize;
    let mut fed = 0usize;
    let recordings = recordings();
    assert!(recordings.len() > 100, "only {} recordings found", recordings.len());
    for recording in &recordings {
        for (file_name, bytes) in &recording.files {
            for (n, (damage, damaged)) in damages(bytes, &mut rng).into_iter().enumerate() {
                let mut files: BTreeMap<String, String> = recording
                    .files
                    .iter()
                    .filter(|(name, _)| !name.is_empty())
                    .map(|(name, text)| (name.clone(), String::from_utf8_lossy(text).into_owned()))
                    .collect();
                let text = String::from_utf8_lossy(&damaged).into_owned();
                if !file_name.is_empty() {
                    files.insert(file_name.clone(), text.clone());
                }
                let main = if file_name == &recording.main {
                    text
                } else {
                    files.get(&recording.main).cloned().unwrap_or_default()
                };
                let input = ParseInput { main: &main, files };
                // Every twentieth damage also goes to every other parser: a wrong program must be refused too.
                let parsers = if n % CROSS_FEED_EVERY == 0 { registry() } else { recording.parsers.as_slice() };
                for parser in parsers {
                    fed += 1;
                    if let Err(failure) = check(*parser, &input) {
                        failed += 1;
                        if failures.len() < MAX_LISTED {
                            let file = if file_name.is_empty() { String::new() } else { format!("/{file_name}") };
                            let (name, parser) = (&recording.name, parser.name());
                            failures.push(format!("{name}{file}, {damage}, as {parser}: {failure}"));
                        }
                    }
                }
            }
        }
    }
    let _ = panic::take_hook();
    assert!(fed > 10_000, "only {fed} damaged inputs were fed");
    assert!(failures.is_empty(), "{} failures among {fed} damaged inputs:\n{}", failed, failures.join("\n"));
}

/// Every recording with its lines ended CRLF (captured through a terminal), and with a byte order mark before it
/// (saved by an editor on Windows), parses exactly as the recording itself, or fails as it does.
#[test]
fn crlf_line_ends_and_a_byte_order_mark_read_as_plain_text() {
    let mut failures = Vec::new();
    for recording in recordings() {
        let text = |bytes: &Vec<u8>| String::from_utf8_lossy(bytes).into_owned();
        let main = recording.files.get(&recording.main).map(text).unwrap_or_default();
        let files: BTreeMap<String, String> =
            recording.files.iter().filter(|(name, _)| !name.is_empty()).map(|(n, b)| (n.clone(), text(b))).collect();
        for parser in &recording.parsers {
            let render = |main: &str, files: BTreeMap<String, String>| {
                parser.parse(&ParseInput { main, files }).map(|out| out.render()).map_err(|e| e.to_string())
            };
            let want = render(&main, files.clone());
            for damage in ["CRLF line ends", "a byte order mark"] {
                let change = |t: &str| match damage {
                    "a byte order mark" => format!("\u{feff}{t}"),
                    _ => t.replace('\n', "\r\n"),
                };
                let changed: BTreeMap<String, String> = files.iter().map(|(n, t)| (n.clone(), change(t))).collect();
                let got = render(&change(&main), changed);
                if got.is_ok() != want.is_ok() || (got.is_ok() && got != want) {
                    let name = &recording.name;
                    failures.push(format!("{name} with {damage}, as {}: {got:?}\nwithout: {want:?}", parser.name()));
                }
            }
        }
    }
    failures.truncate(MAX_LISTED);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `text` with `pad` added at the end of every line, the last one too when it has no line end, as output pasted from
/// a terminal or captured through a tool that pads its lines carries it.
fn pad_lines(text: &str, pad: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for line in text.split_inclusive('\n') {
        match line.strip_suffix('\n') {
            Some(line) => {
                out.push_str(line);
                out.push_str(pad);
                out.push('\n');
            }
            None => {
                out.push_str(line);
                out.push_str(pad);
            }
        }
    }
    out
}

/// Every recording with spaces, a tab, or both added at the end of every line parses to exactly the key/value lines
/// of the recording itself, or fails as it does. Trailing whitespace is never part of a benchmark's figures, but read
/// as it was it renamed stress-ng's metrics and lost perf-stat's per-unit ones, so no parser may see it.
#[test]
fn trailing_spaces_and_tabs_on_every_line_change_nothing() {
    let mut failures = Vec::new();
    let mut compared = 0usize;
    for recording in recordings() {
        let text = |bytes: &Vec<u8>| String::from_utf8_lossy(bytes).into_owned();
        let main = recording.files.get(&recording.main).map(text).unwrap_or_default();
        let files: BTreeMap<String, String> =
            recording.files.iter().filter(|(name, _)| !name.is_empty()).map(|(n, b)| (n.clone(), text(b))).collect();
        for parser in &recording.parsers {
            let render = |main: &str, files: BTreeMap<String, String>| {
                parser.parse(&ParseInput { main, files }).map(|out| out.render()).map_err(|e| e.to_string())
            };
            let want = render(&main, files.clone());
            for (damage, pad) in [("two spaces", "  "), ("a tab", "\t"), ("spaces and tabs", " \t \t")] {
                let changed: BTreeMap<String, String> =
                    files.iter().map(|(n, t)| (n.clone(), pad_lines(t, pad))).collect();
                let got = render(&pad_lines(&main, pad), changed);
                compared += 1;
                if got.is_ok() != want.is_ok() || (got.is_ok() && got != want) {
                    let name = &recording.name;
                    failures.push(format!(
                        "{name} with {damage} after every line, as {}: {got:?}\nwithout: {want:?}",
                        parser.name()
                    ));
                }
            }
        }
    }
    assert!(compared > 300, "only {compared} padded recordings were compared");
    let count = failures.len();
    failures.truncate(MAX_LISTED);
    assert!(failures.is_empty(), "{count} padded recordings differ:\n{}", failures.join("\n"));
}

#[test]
fn pad_lines_pads_every_line_and_an_unended_last_one() {
    assert_eq!(pad_lines("a\nb\n", " "), "a \nb \n");
    assert_eq!(pad_lines("a\n\nb", "\t"), "a\t\n\t\nb\t");
    assert_eq!(pad_lines("", " "), "");
}

/// An output cut inside a number (a run killed while it printed, `Time: 0.1` of `Time: 0.110`) never yields that
/// number: the parse of the output cut there is an error, or what the output without its unfinished last line gives.
#[test]
fn a_number_cut_short_in_the_last_line_is_never_read() {
    let mut failures = Vec::new();
    let mut compared = 0usize;
    for recording in recordings() {
        let Some(bytes) = recording.files.get(&recording.main) else { continue };
        let files: BTreeMap<String, String> = recording
            .files
            .iter()
            .filter(|(name, _)| !name.is_empty() && **name != recording.main)
            .map(|(n, b)| (n.clone(), String::from_utf8_lossy(b).into_owned()))
            .collect();
        // After the first digit of every number of two digits or more that is not the last thing on its line's
        // digits: `0.110` cut to `0.1`, `1234` to `1`.
        let cuts: Vec<usize> = (1..bytes.len())
            .filter(|&i| bytes[i - 1].is_ascii_digit() && (bytes[i].is_ascii_digit() || bytes[i] == b'.'))
            .filter(|&i| i < 2 || !(bytes[i - 2].is_ascii_digit() || bytes[i - 2] == b'.'))
            .collect();
        for parser in &recording.parsers {
            let parse = |main: &str| {
                parser
                    .parse(&ParseInput { main, files: files.clone() })
                    .map(|out| out.metrics(parser.name()))
                    .map_err(|e| e.to_string())
            };
            for &cut in &thin(&cuts, 60) {
                let line_start = bytes[..cut].iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
                let Ok(got) = parse(&String::from_utf8_lossy(&bytes[..cut])) else { continue };
                compared += 1;
                let without = parse(&String::from_utf8_lossy(&bytes[..line_start]));
                if without.as_ref().ok() != Some(&got) {
                    let line_end = bytes[cut..].iter().position(|b| *b == b'\n').map_or(bytes.len(), |i| cut + i);
                    let line = String::from_utf8_lossy(&bytes[line_start..line_end]);
                    let differing: Vec<String> = got
                        .iter()
                        .filter(|(k, v)| without.as_ref().ok().and_then(|w| w.get(*k)) != Some(v))
                        .take(3)
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect();
                    failures.push(format!(
                        "{} as {}: cut at byte {cut} in {:?}: {:?}",
                        recording.name,
                        parser.name(),
                        line.trim(),
                        differing
                    ));
                }
            }
        }
    }
    assert!(compared > 100, "only {compared} cut recordings were compared");
    let count = failures.len();
    failures.truncate(200);
    assert!(failures.is_empty(), "{count} cut recordings read a cut number:\n{}", failures.join("\n"));
}
