//! `culprit parse PROGRAM FILE`: print the `key: value` lines lkp-tests' own parser prints for a raw output.

use crate::output;
use anyhow::{bail, Context, Result};
use culprit_parse::ParseInput;
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

pub fn run(program: &str, file: &Path) -> Result<()> {
    let Some(parser) = culprit_parse::lookup(program) else {
        bail!("no parser for '{program}'; culprit parses: {}", culprit_parse::names().join(", "));
    };
    let (main, files) = if file.is_dir() {
        // A result root: every file is offered to the parser (fio reads fio.output.N), the one named after the
        // program is the main input, as lkp's run-stats does.
        let mut files = BTreeMap::new();
        for entry in fs::read_dir(file).with_context(|| format!("cannot read directory {}", file.display()))? {
            let path = entry?.path();
            if path.is_file() {
                let text = fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
                files.insert(
                    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
                    String::from_utf8_lossy(&text).into_owned(),
                );
            }
        }
        // A family's parser (`sysbench`, which tells the test from the output) reads the file of the one member
        // program the root holds: lkp names a sysbench run's output after its program, `sysbench-cpu`.
        let mut main_name = parser.name().to_string();
        if !files.contains_key(&main_name) {
            let prefix = format!("{main_name}-");
            let members: Vec<&str> = files
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
        let (holds_output, output_name) = if parser.name() == "fio" {
            let fio_file = |name: &str| name == "fio" || name == "fio.output" || name.starts_with("fio.output.");
            (files.keys().any(|name| fio_file(name)), "`fio.output` (one per instance: `fio.output.<N>`)".to_string())
        } else {
            (files.contains_key(&main_name), format!("`{}`", parser.name()))
        };
        if !holds_output {
            let names: Vec<&str> = files.keys().map(String::as_str).collect();
            bail!(
                "{} is a directory, read as an lkp result root, which keeps {program}'s raw output in a file named \
                 {output_name}, and it has {}; give that file, or the raw output file itself",
                file.display(),
                if names.is_empty() { "no files".to_string() } else { format!("only {}", names.join(", ")) }
            );
        }
        (files.get(&main_name).cloned().unwrap_or_default(), files)
    } else {
        let bytes = fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
        (String::from_utf8_lossy(&bytes).into_owned(), BTreeMap::new())
    };
    let input = ParseInput { main: &main, files };
    let parsed =
        parser.parse(&input).with_context(|| format!("{}: cannot parse as {program} output", file.display()))?;
    for note in &parsed.notes {
        crate::note!("culprit: {}: {note}", file.display());
    }
    let text = parsed.render();
    if text.is_empty() {
        return Ok(());
    }
    output::println(&text)
}
