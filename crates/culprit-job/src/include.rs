//! lkp's includes: a `<<: FILE` line, or `<<: {file: FILE, key: value, ignore: [keys]}`, replaced by the text of
//! FILE before the YAML is read, as lkp-tests' `yaml_merge_included_files` does (lib/yaml.rb).
//!
//! lkp's rules, kept here:
//! - The include is textual and one level deep: the line becomes the included file's lines, each indented by what
//!   preceded `<<` on the line. An included file of several documents (`---`) brings them into the including one,
//!   so keys written after the include land in its last document, as in lkp.
//! - Beside `file:`, `ignore:` drops the included file's top-level lines of those keys, and every other key replaces
//!   that top-level key's one-line value in each document of the included file, or is appended to each document that
//!   lacks it (`<<: {file: fsmark.yaml, disk: '1SSD'}`).
//! - lkp reads the result with Ruby's YAML, where a key given twice in a hash takes the later value at the earlier
//!   key's place: a job that includes a file and then sets one of its keys (`disk:` after `<<: fsmark.yaml`)
//!   overrides it. The same is done here where either occurrence came from an included file; a key given twice in
//!   the job file itself is still the mistake [`crate::JobError::DuplicateKey`] reports.
//!
//! Finding the file is the caller's (it reads files; this module does not), given the name as written. Every line
//! of the result keeps where it came from ([`Origin`]), so a message about a key names the file and line the user
//! can open.

use crate::{JobError, Place};
use serde_yaml::Value;
use std::sync::Arc;

/// Where a line of merged job text came from: a file and its 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub file: Arc<str>,
    pub line: usize,
}

/// An included file as the caller found it: the name to show in messages (its path) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundInclude {
    pub name: String,
    pub text: String,
}

/// Job text with its includes merged, and the origin of each of its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    pub text: String,
    pub origins: Vec<Origin>,
    /// The included files, in the order of their `<<:` lines, as the caller named them.
    pub included: Vec<String>,
}

/// One `<<:` include of a job file, read from its line.
#[derive(Debug, Clone, PartialEq)]
struct Include {
    /// The text before `<<` on the line, whose width indents the included lines.
    prefix: String,
    file: String,
    ignore: Vec<String>,
    overrides: Vec<(String, String)>,
}

/// Merges the includes of `text` (the job file `file_name`). `find` is given each included name as written and
/// returns the file, or why it could not (where it looked). Text without includes comes back as it is.
pub fn merge_includes(
    text: &str,
    file_name: &str,
    find: &mut dyn FnMut(&str) -> Result<FoundInclude, String>,
) -> Result<Merged, JobError> {
    let own: Arc<str> = Arc::from(file_name);
    let mut lines: Vec<(String, Origin)> = Vec::new();
    let mut included = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let origin = Origin { file: own.clone(), line: index + 1 };
        let place = || Place { file: file_name.to_string(), line: Some(index + 1) };
        let Some(include) = include_of(line).map_err(|reason| include_error(place(), line, reason))? else {
            lines.push((line.to_string(), origin));
            continue;
        };
        let found = find(&include.file).map_err(|reason| JobError::Include {
            place: place(),
            file: include.file.clone(),
            reason,
        })?;
        included.push(found.name.clone());
        let name: Arc<str> = Arc::from(found.name.as_str());
        let indent: String = include.prefix.chars().map(|_| ' ').collect();
        // lkp's merged text keeps the prefix on a line of its own where the `<<:` line was.
        lines.push((include.prefix.clone(), origin.clone()));
        for (text, from) in included_lines(&include, &found.text) {
            let origin = match from {
                Some(line) => Origin { file: name.clone(), line },
                // A key written beside `file:` is placed at the include line that gave it.
                None => origin.clone(),
            };
            lines.push((format!("{indent}{text}"), origin));
        }
    }
    if included.is_empty() {
        let origins = lines.iter().map(|(_, origin)| origin.clone()).collect();
        return Ok(Merged { text: text.to_string(), origins, included });
    }
    later_keys_win(&mut lines, &own);
    let mut merged: String = lines.iter().map(|(line, _)| format!("{line}\n")).collect();
    if !text.ends_with('\n') {
        merged.pop();
    }
    Ok(Merged { text: merged, origins: lines.into_iter().map(|(_, origin)| origin).collect(), included })
}

fn include_error(place: Place, line: &str, reason: String) -> JobError {
    let written = line.trim().trim_start_matches("<<").trim_start_matches([' ', ':']);
    JobError::Include { place, file: written.to_string(), reason }
}

/// The include a line holds: lkp's `<< *: +` followed by a file name or a flow hash with `file:` (not a YAML merge
/// of an anchor, `<<: *a`, or of anchors, `<<: [*a, *b]`, nor a hash without `file:`, which YAML merges itself).
/// Only indentation and list dashes (`- <<: FILE`, an include as a list item, which lkp's own tests use) may precede
/// `<<`, so a comment or a quoted value mentioning `<<: ` is left alone.
fn include_of(line: &str) -> Result<Option<Include>, String> {
    let body = line.trim_start_matches([' ', '-']);
    let prefix = &line[..line.len() - body.len()];
    // Indentation, then list dashes each followed by a space: `  - - <<:` nests lists; `-<<:` is no list item.
    let indentation = prefix.split(' ').all(|word| word.is_empty() || word == "-");
    if !indentation || !(prefix.is_empty() || prefix.ends_with(' ')) {
        return Ok(None);
    }
    let Some(rest) = body.strip_prefix("<<") else { return Ok(None) };
    let Some(rest) = rest.trim_start_matches(' ').strip_prefix(':') else { return Ok(None) };
    if !rest.starts_with(' ') {
        return Ok(None);
    }
    let content = rest.trim();
    if content.is_empty() || content.starts_with(['*', '[', '#']) {
        return Ok(None);
    }
    if content.starts_with('{') {
        let Ok(Value::Mapping(hash)) = serde_yaml::from_str::<Value>(content) else {
            return Err(format!("'{content}' is not a hash lkp reads as an include ({{file: FILE, key: value}})"));
        };
        let Some(file) = hash.get("file") else { return Ok(None) };
        let file = crate::load::scalar_text(file).ok_or_else(|| "its 'file:' is not a file name".to_string())?;
        let mut ignore = Vec::new();
        let mut overrides = Vec::new();
        for (key, value) in &hash {
            let key =
                crate::load::scalar_text(key).ok_or_else(|| "a key beside 'file:' is not plain text".to_string())?;
            match key.as_str() {
                "file" => {}
                "ignore" => match value {
                    Value::Sequence(items) => ignore.extend(items.iter().filter_map(crate::load::scalar_text)),
                    other => ignore.extend(crate::load::scalar_text(other)),
                },
                _ => overrides.push((key.clone(), override_text(&key, value)?)),
            }
        }
        return Ok(Some(Include { prefix: prefix.to_string(), file, ignore, overrides }));
    }
    // A plain name, perhaps quoted; a trailing comment is not part of it.
    let name = content.find(" #").map_or(content, |comment| content[..comment].trim_end());
    let name = ['"', '\'']
        .iter()
        .find_map(|quote| name.strip_prefix(*quote).and_then(|n| n.strip_suffix(*quote)))
        .unwrap_or(name);
    Ok(Some(Include { prefix: prefix.to_string(), file: name.to_string(), ignore: Vec::new(), overrides: Vec::new() }))
}

/// A key's value given beside `file:`, as YAML text for one line (lkp dumps it with Ruby's YAML).
fn override_text(key: &str, value: &Value) -> Result<String, String> {
    match value {
        Value::Null => Ok(String::new()),
        Value::String(_) | Value::Number(_) | Value::Bool(_) => serde_yaml::to_string(value)
            .map(|text| text.trim_end().to_string())
            .map_err(|e| format!("'{key}' cannot be written back as YAML: {e}")),
        _ => Err(format!("'{key}' beside 'file:' must be one value (a word, number or quoted text), as lkp writes it")),
    }
}

/// The lines an include brings, each with its line in the included file (`None` for an appended override): its
/// ignored keys' lines dropped, then its overrides applied to each document.
fn included_lines(include: &Include, text: &str) -> Vec<(String, Option<usize>)> {
    let is_key_line = |line: &str, key: &str| {
        line.strip_prefix(key).is_some_and(|rest| rest.trim_start_matches([' ', '\t']).starts_with(':'))
    };
    let kept: Vec<(String, Option<usize>)> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !include.ignore.iter().any(|key| is_key_line(line, key)))
        .map(|(index, line)| (line.to_string(), Some(index + 1)))
        .collect();
    if include.overrides.is_empty() {
        return kept;
    }
    // Per document, as lkp: each gets every override, replacing the key's one-line value or appended at its end.
    let mut documents: Vec<Vec<(String, Option<usize>)>> = vec![Vec::new()];
    for line in kept {
        if is_document_marker(&line.0) {
            documents.push(vec![line]);
        } else if let Some(document) = documents.last_mut() {
            document.push(line);
        }
    }
    let mut out = Vec::new();
    for mut document in documents {
        let has_content = document.iter().any(|(line, _)| !line.trim().is_empty() && !is_document_marker(line));
        if has_content {
            for (key, value) in &include.overrides {
                let with_value = |line: &str| {
                    line.strip_prefix(key.as_str()).is_some_and(|rest| {
                        let rest = rest.trim_start_matches([' ', '\t']);
                        let value = rest.strip_prefix(':');
                        value.is_some_and(|value| value.starts_with([' ', '\t']) && !value.trim().is_empty())
                    })
                };
                let written = format!("{key}: {value}");
                let mut replaced = false;
                for (line, from) in document.iter_mut().filter(|(line, _)| with_value(line)) {
                    *line = written.clone();
                    *from = None;
                    replaced = true;
                }
                if !replaced {
                    while document.last().is_some_and(|(line, _)| line.trim().is_empty()) {
                        document.pop();
                    }
                    document.push((written, None));
                }
            }
        }
        out.extend(document);
    }
    out
}

fn is_document_marker(line: &str) -> bool {
    line == "---" || line.strip_prefix("---").is_some_and(|rest| rest.trim().is_empty())
}

/// Ruby's YAML reading of a key given twice in one hash, where either occurrence came from an included file: the
/// later block of lines takes the earlier one's place, and the later place is dropped.
fn later_keys_win(lines: &mut Vec<(String, Origin)>, own: &Arc<str>) {
    // Each pass resolves one pair; a job file has a few dozen lines, so rescanning is cheap.
    while let Some((first, second)) = included_duplicate(lines, own) {
        let later: Vec<(String, Origin)> = lines.drain(second.clone()).collect();
        lines.splice(first, later);
    }
}

/// The line ranges of the first key given twice in one hash where either occurrence came from an included file.
fn included_duplicate(
    lines: &[(String, Origin)],
    own: &Arc<str>,
) -> Option<(std::ops::Range<usize>, std::ops::Range<usize>)> {
    // The open hashes: the indentation of their keys and the keys seen there, with their lines.
    let mut open: Vec<(usize, Vec<(String, usize)>)> = Vec::new();
    let mut skip_deeper_than: Option<usize> = None;
    for (index, (line, _)) in lines.iter().enumerate() {
        if is_document_marker(line) {
            open.clear();
            skip_deeper_than = None;
            continue;
        }
        let body = line.trim_start();
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        let indent = line.len() - body.len();
        if let Some(depth) = skip_deeper_than {
            if indent > depth {
                continue;
            }
            skip_deeper_than = None;
        }
        open.retain(|(depth, _)| *depth <= indent);
        let Some((key, value)) = key_of(body) else { continue };
        // A block scalar's lines are text, not keys.
        if value.starts_with(['|', '>']) {
            skip_deeper_than = Some(indent);
        }
        if open.last().is_none_or(|(depth, _)| *depth < indent) {
            open.push((indent, Vec::new()));
        }
        let Some((_, keys)) = open.last_mut() else { continue };
        if let Some(&(_, earlier)) = keys.iter().find(|(seen, _)| *seen == key) {
            let from_include = |at: usize| lines.get(at).is_some_and(|(_, origin)| !Arc::ptr_eq(&origin.file, own));
            if from_include(earlier) || from_include(index) {
                return Some((block(lines, earlier), block(lines, index)));
            }
        }
        keys.push((key, index));
    }
    None
}

/// The key of a `key: value` line (without its indentation) and what follows the colon; list items and flow lines
/// are not keys of the hash they sit in.
fn key_of(body: &str) -> Option<(String, &str)> {
    if body.starts_with(['-', '[', '{', '"', '\'']) {
        return None;
    }
    let colon = body.find(':')?;
    let (key, rest) = (&body[..colon], &body[colon + 1..]);
    (!key.is_empty() && !key.contains(' ') && (rest.is_empty() || rest.starts_with([' ', '\t'])))
        .then(|| (key.to_string(), rest.trim_start()))
}

/// The lines of the key at `start`: its line, and the following ones indented deeper (or list items at its
/// indentation, which YAML allows under a key), without trailing blank or comment lines.
fn block(lines: &[(String, Origin)], start: usize) -> std::ops::Range<usize> {
    let indent_of = |line: &str| line.len() - line.trim_start().len();
    let depth = lines.get(start).map_or(0, |(line, _)| indent_of(line));
    let mut end = start + 1;
    let mut last_content = start + 1;
    while let Some((line, _)) = lines.get(end) {
        let body = line.trim_start();
        if is_document_marker(line) {
            break;
        }
        if body.is_empty() || body.starts_with('#') {
            end += 1;
            continue;
        }
        let indent = indent_of(line);
        if indent > depth || (indent == depth && (body == "-" || body.starts_with("- "))) {
            end += 1;
            last_content = end;
        } else {
            break;
        }
    }
    start..last_content
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A finder over files held in memory, recording the names asked for.
    fn files(pairs: &[(&str, &str)]) -> impl FnMut(&str) -> Result<FoundInclude, String> {
        let files: BTreeMap<String, String> = pairs.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect();
        move |name: &str| {
            files
                .get(name)
                .map(|text| FoundInclude { name: format!("lkp/jobs/{name}"), text: text.clone() })
                .ok_or_else(|| "not found in lkp/jobs".to_string())
        }
    }

    fn merged(text: &str, pairs: &[(&str, &str)]) -> Merged {
        merge_includes(text, "job.yaml", &mut files(pairs)).expect("merges")
    }

    #[test]
    fn two_includes_are_pasted_in_order_with_their_origins() {
        // lkp's jobs/hackbench/hackbench-cgroup2.yaml is exactly these two lines.
        let cgroup = "cgroup2:\n  pids.max: 10000\n\nkernel_cmdline: systemd.unified_cgroup_hierarchy=1\n";
        let hackbench = "suite: hackbench\nhackbench:\n  mode: process\n";
        let both = [("cgroup2.yaml", cgroup), ("hackbench.yaml", hackbench)];
        let out = merged("<<: cgroup2.yaml\n<<: hackbench.yaml\n", &both);
        assert_eq!(out.text, format!("\n{cgroup}\n{hackbench}"));
        assert_eq!(out.included, ["lkp/jobs/cgroup2.yaml", "lkp/jobs/hackbench.yaml"]);
        let origin_of = |line: usize| {
            let origin = &out.origins[line - 1];
            format!("{}:{}", origin.file, origin.line)
        };
        assert_eq!(origin_of(3), "lkp/jobs/cgroup2.yaml:2");
        assert_eq!(origin_of(6), "job.yaml:2");
        assert_eq!(origin_of(9), "lkp/jobs/hackbench.yaml:3");
        assert_eq!(out.origins.len(), out.text.lines().count());
    }

    #[test]
    fn a_key_set_after_the_include_overrides_it_in_place() {
        // lkp's fsmark-1brd.yaml: `<<: fsmark.yaml` then `disk: 1BRD_48G` over fsmark.yaml's `disk: 1HDD`.
        let fsmark = "suite: fsmark\ndisk: 1HDD\nfs:\n  - ext4\n  - xfs\nfsmark:\n  filesize: 8K\n";
        let out = merged("<<: fsmark.yaml\n\ndisk: 1BRD_48G\nfs:\n- btrfs\n", &[("fsmark.yaml", fsmark)]);
        assert_eq!(out.text, "\nsuite: fsmark\ndisk: 1BRD_48G\nfs:\n- btrfs\nfsmark:\n  filesize: 8K\n\n");
        assert_eq!(out.origins[2].line, 3, "disk's line is the job file's");
        assert_eq!(&*out.origins[2].file, "job.yaml");
        // A key given twice in the job file itself is left for the YAML reader to refuse.
        let own = merged("<<: fsmark.yaml\nruntime: 1\nruntime: 2\n", &[("fsmark.yaml", fsmark)]);
        assert_eq!(own.text.matches("runtime:").count(), 2);
    }

    #[test]
    fn keys_beside_file_replace_or_append_in_every_document_and_ignore_drops_lines() {
        // lkp's sysbench-fileio-1ssd.yaml and its rules for a file of two documents, one without the key.
        let base = "suite: s\ndisk: 1HDD\nnr_task: 1\n---\ns:\n  size: 1G\n\n";
        let out = merged("<<: {file: base.yaml, disk: '1SSD', ignore: [nr_task]}\n", &[("base.yaml", base)]);
        assert_eq!(out.text, "\nsuite: s\ndisk: 1SSD\n---\ns:\n  size: 1G\ndisk: 1SSD\n");
        assert_eq!(out.origins[2].line, 1, "an override is placed at the include line");
        let quoted = merged("<<: {file: base.yaml, media: 'ssd: fast'}\n", &[("base.yaml", "suite: s\n")]);
        assert_eq!(quoted.text, "\nsuite: s\nmedia: 'ssd: fast'\n");
    }

    #[test]
    fn an_indented_include_is_indented_and_yaml_merges_are_left_alone() {
        let options = [("opts.yaml", "rw: read\nsize: 1G\n")];
        let out = merged("fio:\n  <<: 'opts.yaml'  # lkp's options\n  bs: 4k\n", &options);
        assert_eq!(out.text, "fio:\n  \n  rw: read\n  size: 1G\n  bs: 4k\n");
        for text in ["a: &a {x: 1}\nb:\n  <<: *a\n", "b:\n  <<: [*a]\n", "c:\n  <<: {x: 1}\n", "# <<: x.yaml\n"] {
            assert_eq!(merged(text, &[]).text, text);
        }
    }

    /// lkp's own cases (spec/unit/lib/yaml_spec.rb, "yaml_merge_included_files"), with its borrow-1d.yaml: read by
    /// Ruby, each include gives what `<<: *borrow-1d` gives there, where a merge or a later key overrides an
    /// earlier one at the earlier one's place.
    #[test]
    fn lkps_own_include_cases_read_as_in_lkp() {
        let borrow = "suite: borrow\ntestcase: borrow\n\nruntime: 1d\ntimeout: 1d\n\nsleep:\n";
        let read = |text: &str| -> Value {
            let out = merged(text, &[("jobs/borrow/borrow-1d.yaml", borrow)]);
            serde_yaml::from_str(&out.text).unwrap_or_else(|e| panic!("{e}:\n{}", out.text))
        };
        let expected = |text: &str| -> Value { serde_yaml::from_str(text).expect("expected YAML") };
        let whole = "{suite: borrow, testcase: borrow, runtime: 1d, timeout: 1d, sleep: null}";
        let cases = [
            // merge project path: a list item that is the included file.
            ("- <<: jobs/borrow/borrow-1d.yaml\n", format!("[{whole}]")),
            // merge into hash: the item `a:` (empty) beside the included keys.
            ("- a:\n  <<: jobs/borrow/borrow-1d.yaml\n", "[{a: null, suite: borrow, testcase: borrow, \
              runtime: 1d, timeout: 1d, sleep: null}]".to_string()),
            // merge hash and update: keys after the include override it in place.
            ("- a:\n  <<: jobs/borrow/borrow-1d.yaml\n  runtime: 1\n  b: c\n", "[{a: null, suite: borrow, \
              testcase: borrow, runtime: 1, timeout: 1d, sleep: null, b: c}]".to_string()),
            // merge update hash: the include after the keys overrides them, at their place.
            ("- a:\n  b: c\n  runtime: 1\n  <<: jobs/borrow/borrow-1d.yaml\n", "[{a: null, b: c, runtime: 1d, \
              suite: borrow, testcase: borrow, timeout: 1d, sleep: null}]".to_string()),
        ];
        for (text, want) in cases {
            let got = read(text);
            assert_eq!(got, expected(&want), "{text}");
            // In order, as Ruby's hash keeps it.
            let keys = |value: &Value| -> Vec<String> {
                let item = value.as_sequence().and_then(|items| items.first()).and_then(Value::as_mapping);
                item.map(|m| m.keys().filter_map(crate::load::scalar_text).collect()).unwrap_or_default()
            };
            assert_eq!(keys(&got), keys(&expected(&want)), "{text}");
        }
    }

    #[test]
    fn a_missing_file_names_the_line_and_where_it_was_looked_for() {
        let error = merge_includes("suite: x\n<<: gone.yaml\n", "job.yaml", &mut files(&[])).err();
        let text = error.map(|e| e.to_string()).unwrap_or_default();
        assert!(text.starts_with("job.yaml:2: cannot include 'gone.yaml': not found in lkp/jobs"), "{text}");
        let bad = merge_includes("<<: {file: x.yaml, fs: [a, b]}\n", "job.yaml", &mut files(&[("x.yaml", "")]));
        let text = bad.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(text.contains("job.yaml:1:") && text.contains("'fs' beside 'file:' must be one value"), "{text}");
    }
}
