//! `culprit parse PROGRAM FILE`: print the `key: value` lines lkp-tests' own parser prints for a raw output.
//!
//! Those alone go to standard output; the keys Culprit's parser reads besides (PostgreSQL 14's `tps`, oltp's
//! `ignored_errors`, ...: [`culprit_parse::ParseOutput::own`]) are named in one note on standard error.
//!
//! FILE is a raw output, an lkp result root (a directory), or `-` for standard input. An input is read to at most
//! [`MAX_FILE_BYTES`] and refused at its first NUL byte, so `/dev/zero` or a runaway log is refused with a message
//! rather than read until memory runs out.

use crate::output;
use anyhow::{bail, Context, Result};
use culprit_parse::ParseInput;
use culprit_store::result_root::{read_limited, Limited, MAX_FILE_BYTES};
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// The FILE that names standard input, as it does for most Unix tools (`/dev/stdin` is read as any file).
const STDIN: &str = "-";

pub fn run(program: &str, file: &Path) -> Result<()> {
    let Some(parser) = culprit_parse::lookup(program) else {
        bail!("no parser for '{program}'; culprit parses: {}", culprit_parse::names().join(", "));
    };
    let label = if file == Path::new(STDIN) { "standard input".to_string() } else { file.display().to_string() };
    let (main, files) = if file == Path::new(STDIN) {
        (read_text(std::io::stdin().lock(), &label)?, BTreeMap::new())
    } else if file.is_dir() {
        // A result root: the file named after the program is the main input, as lkp's run-stats does, and fio's
        // parser is offered the root's `fio.output.N` too.
        let mut paths = BTreeMap::new();
        for entry in fs::read_dir(file).with_context(|| format!("cannot read directory {}", file.display()))? {
            let path = entry?.path();
            if path.is_file() {
                paths.insert(path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(), path);
            }
        }
        // A family's parser (`sysbench`, which tells the test from the output) reads the file of the one member
        // program the root holds: lkp names a sysbench run's output after its program, `sysbench-cpu`.
        let mut main_name = parser.name().to_string();
        if !paths.contains_key(&main_name) {
            let prefix = format!("{main_name}-");
            let members: Vec<&str> = paths
                .keys()
                .map(String::as_str)
                .filter(|name| name.starts_with(&prefix) && culprit_parse::lookup(name).is_some())
                .collect();
            match members.as_slice() {
                [] => {}
                [only] => {
                    eprintln!(
                        "culprit: reading {}, the {program} output of that result root",
                        file.join(only).display()
                    );
                    main_name = only.to_string();
                }
                several => bail!(
                    "{} is a directory, read as an lkp result root, and it holds the outputs of {} programs of \
                     {program} ({}); name the one to parse, e.g. culprit parse {} {}",
                    file.display(),
                    several.len(),
                    several.join(", "),
                    several[0],
                    file.display()
                ),
            }
        }
        // Only fio's parser reads a result root's other files (its `fio.output.N`); for any other program a root
        // without the program's file holds nothing to parse, and saying "no results" would blame an output that
        // was never read. A root holding none of fio's files is refused the same way: handed no file at all, fio's
        // parser reads the empty main input and said "the input holds no JSON object" of a directory.
        let is_fio = parser.name() == "fio";
        let fio_file = |name: &str| name == "fio" || name == "fio.output" || name.starts_with("fio.output.");
        let (holds_output, output_name) = if is_fio {
            (paths.keys().any(|name| fio_file(name)), "`fio.output` (one per instance: `fio.output.<N>`)".to_string())
        } else {
            (paths.contains_key(&main_name), format!("`{}`", parser.name()))
        };
        if !holds_output {
            let names: Vec<&str> = paths.keys().map(String::as_str).collect();
            // A few names say what kind of directory it is; all of them, of a directory of thousands, buried the
            // advice (QA 58).
            const SHOWN: usize = 8;
            let has = match names.len() {
                0 => "no files".to_string(),
                n if n <= SHOWN => format!("only {}", names.join(", ")),
                n => format!("{n} files ({}, ...), none of that name", names[..SHOWN].join(", ")),
            };
            // Other programs' outputs there mean the program was probably misnamed.
            let others: Vec<&str> =
                names.iter().copied().filter(|name| culprit_parse::lookup(name).is_some()).collect();
            let instead = match others.first() {
                Some(other) => format!(
                    "; it holds the raw output of {}: culprit parse {other} {}",
                    others.join(", "),
                    file.display()
                ),
                None => String::new(),
            };
            bail!(
                "{} is a directory, read as an lkp result root, which keeps {program}'s raw output in a file named \
                 {output_name}, and it has {has}; give that file, or the raw output file itself{instead}",
                file.display(),
            );
        }
        // Only the files the parser reads are read: a root also keeps large files of other kinds (perf.data, a
        // compressed kmsg), which are no text output and would only take memory and time.
        let mut files = BTreeMap::new();
        for (name, path) in paths.into_iter().filter(|(name, _)| *name == main_name || (is_fio && fio_file(name))) {
            let opened = fs::File::open(&path).with_context(|| format!("cannot read {}", path.display()))?;
            files.insert(name, read_text(opened, &path.display().to_string())?);
        }
        (files.get(&main_name).cloned().unwrap_or_default(), files)
    } else {
        let opened = fs::File::open(file).with_context(|| format!("cannot read {}", file.display()))?;
        (read_text(opened, &label)?, BTreeMap::new())
    };
    let input = ParseInput { main: &main, files };
    let parsed = parser.parse(&input).with_context(|| format!("{label}: cannot parse as {program} output"))?;
    for note in &parsed.notes {
        crate::note!("culprit: {label}: {note}");
    }
    // Standard output is what lkp's parser prints, byte for byte; the figures Culprit reads besides (and stores with
    // its runs) are named on standard error, so that neither is mistaken for the other.
    let own = parsed.own_lines();
    if !own.is_empty() {
        crate::note!(
            "culprit: {label}: Culprit's own keys, which lkp's {program} parser does not print for this output \
             (Culprit's runs store them beside lkp's): {}",
            own.join(", ")
        );
    }
    let text = parsed.render_lkp();
    if text.is_empty() {
        return Ok(());
    }
    output::println(&text)
}

/// An output read as text, at most [`MAX_FILE_BYTES`] of it and refused at its first NUL byte, so that an endless or
/// enormous input (`/dev/zero`, a runaway log, a pipe that never ends) ends with a message rather than reading on
/// until memory runs out. `label` names the input in the message.
fn read_text(reader: impl std::io::Read, label: &str) -> Result<String> {
    match read_limited(reader, MAX_FILE_BYTES, true).with_context(|| format!("cannot read {label}"))? {
        Limited::Whole(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Limited::TooLarge => bail!(
            "{label} is larger than {} MiB, the most culprit parse reads of one output (the largest real benchmark \
             outputs, perf-profile reports, are tens of MB); it is not the output of one run, or the benchmark ran \
             away: give the output of one run, or cut out the part to parse (with head or tail) and parse that",
            MAX_FILE_BYTES >> 20
        ),
        Limited::Nul(at) => bail!(
            "{label} holds a NUL byte at byte {at}, so it is not a benchmark's text output (it is a binary file, or a \
             device such as /dev/zero); give the raw text output the program printed (a log that a crash padded \
             with NUL bytes reads again once `tr -d '\\000'` has removed them)"
        ),
    }
}
