//! Finds the line of a key in a job file's text, so errors about a key can name its line.
//!
//! serde_yaml's values carry no positions, so this scans the text itself: good enough for the block-style YAML job
//! files are written in. When a key cannot be found (flow style, anchors), callers report the file without a line.
//! In text with lkp's includes pasted in, a line is reported in the file it came from ([`SourceMap::place`]).

use crate::include::Origin;
use crate::Place;

/// The source text of a job file, split into lines, with the line where each YAML document starts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct SourceMap {
    lines: Vec<String>,
    /// 0-based index of each document's first line; the end of document `i` is the start of `i + 1`.
    doc_starts: Vec<usize>,
    /// Where each line came from when the text is a job file with lkp's includes pasted in; empty when every line
    /// is the job file's own.
    origins: Vec<Origin>,
}

fn is_content(line: &str) -> bool {
    let trimmed = line.trim();
    !trimmed.is_empty() && !trimmed.starts_with('#') && !trimmed.starts_with('%')
}

fn is_doc_marker(line: &str) -> bool {
    line == "---" || line.starts_with("--- ") || line.starts_with("---\t")
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// Whether `line` (already without indentation) starts with the mapping key `key`.
fn starts_with_key(line: &str, key: &str) -> bool {
    after_key(line, key).is_some()
}

/// What follows `key:` on a `key: value` line (already without indentation), when the line starts with that key.
fn after_key<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let line = line.strip_prefix("- ").unwrap_or(line).trim_start();
    let rest = [("", ""), ("'", "'"), ("\"", "\"")].iter().find_map(|(open, close)| {
        line.strip_prefix(open).and_then(|l| l.strip_prefix(key)).and_then(|l| l.strip_prefix(close))
    })?;
    rest.trim_start().strip_prefix(':')
}

impl SourceMap {
    pub(crate) fn new(text: &str) -> Self {
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        let mut doc_starts = vec![0];
        let mut seen_content = false;
        for (index, line) in lines.iter().enumerate() {
            if is_doc_marker(line) {
                if seen_content {
                    doc_starts.push(index + 1);
                } else if let Some(first) = doc_starts.last_mut() {
                    // A leading '---' opens the first document rather than ending an empty one.
                    *first = index + 1;
                }
                seen_content = true;
            } else if is_content(line) {
                seen_content = true;
            }
        }
        SourceMap { lines, doc_starts, origins: Vec::new() }
    }

    /// The map of merged job text whose lines came from `origins` (one per line).
    pub(crate) fn with_origins(text: &str, origins: Vec<Origin>) -> Self {
        SourceMap { origins, ..SourceMap::new(text) }
    }

    /// The place of 1-based `line` of the text, in the job file `file` unless the line came from an included file.
    pub(crate) fn place(&self, file: &str, line: Option<usize>) -> Place {
        match line.and_then(|line| self.origins.get(line.checked_sub(1)?)) {
            Some(origin) => Place { file: origin.file.to_string(), line: Some(origin.line) },
            None => Place { file: file.to_string(), line },
        }
    }

    /// The file and 1-based line where `line` of the text was written, for messages that give both apart.
    pub(crate) fn origin_of(&self, file: &str, line: usize) -> (String, usize) {
        let place = self.place(file, Some(line));
        (place.file, place.line.unwrap_or(line))
    }

    /// The 1-based line where document `document` (0-based) starts, if known.
    pub(crate) fn document_line(&self, document: usize) -> Option<usize> {
        self.doc_starts.get(document).map(|start| start + 1)
    }

    /// The 1-based line of the key path `path` (outermost key first) within document `document`, or of the deepest
    /// part of it that could be found.
    pub(crate) fn locate(&self, document: usize, path: &[&str]) -> Option<usize> {
        self.locate_depth(document, path).map(|(line, _)| line)
    }

    /// The 1-based line of the whole key path `path` within document `document`, only if every part was found.
    pub(crate) fn locate_exact(&self, document: usize, path: &[&str]) -> Option<usize> {
        self.locate_depth(document, path)
            .filter(|(_, depth)| *depth == path.len())
            .map(|(line, _)| line)
    }

    /// The line of the deepest part of `path` found, and how many parts were found. A top-level key that is not at
    /// the top of the text is looked for in lkp's role hashes (`if role client:`), whose keys the loader lifts to
    /// the top of the job: there the user wrote them, one level down.
    fn locate_depth(&self, document: usize, path: &[&str]) -> Option<(usize, usize)> {
        self.locate_written(document, path).or_else(|| {
            self.role_keys(document).into_iter().find_map(|role| {
                let within: Vec<&str> = std::iter::once(role).chain(path.iter().copied()).collect();
                let (line, depth) = self.locate_written(document, &within)?;
                (depth >= 2).then_some((line, depth - 1))
            })
        })
    }

    /// The top-level lkp role keys (`if role server`) of document `document`, as written.
    fn role_keys(&self, document: usize) -> Vec<&str> {
        let Some(&start) = self.doc_starts.get(document) else { return Vec::new() };
        let end = self.doc_starts.get(document + 1).copied().unwrap_or(self.lines.len()).min(self.lines.len());
        self.lines[start.min(end)..end]
            .iter()
            .filter(|line| line.starts_with(crate::load::ROLE_PREFIX))
            .filter_map(|line| line.split_once(':').map(|(key, _)| key.trim_end()))
            .collect()
    }

    /// [`SourceMap::locate_depth`] for `path` exactly as written in the text, from the top level down.
    fn locate_written(&self, document: usize, path: &[&str]) -> Option<(usize, usize)> {
        let start = *self.doc_starts.get(document)?;
        let end = self
            .doc_starts
            .get(document + 1)
            .copied()
            .unwrap_or(self.lines.len());
        let mut found: Option<(usize, usize)> = None; // (line index, indentation)
        let mut cursor = start;
        let mut depth = 0;
        for key in path {
            let parent_indent = found.map(|(_, indent)| indent);
            let mut hit = None;
            for index in cursor..end {
                let Some(line) = self.lines.get(index) else {
                    break;
                };
                if !is_content(line) || is_doc_marker(line) {
                    continue;
                }
                let indent = indent_of(line);
                if let Some(parent) = parent_indent {
                    if indent <= parent {
                        break;
                    }
                } else if indent != 0 {
                    continue;
                }
                if starts_with_key(&line[indent..], key) {
                    hit = Some((index, indent));
                    break;
                }
            }
            match hit {
                Some((index, indent)) => {
                    found = Some((index, indent));
                    cursor = index + 1;
                    depth += 1;
                }
                None => break,
            }
        }
        found.map(|(index, _)| (index + 1, depth))
    }

    /// The text of the value written on the line of the whole key path `path` in document `document`, as typed:
    /// without a trailing comment, and only when it is a plain one-line scalar (not quoted, not a flow list or
    /// hash, not a block scalar, anchor, alias or tag). Callers check that it reads as the value they hold.
    pub(crate) fn plain_value(&self, document: usize, path: &[&str]) -> Option<&str> {
        let line = self.lines.get(self.locate_exact(document, path)? - 1)?;
        let value = after_key(line.trim_start(), path.last()?)?;
        let value = value.find(" #").map_or(value, |comment| &value[..comment]).trim();
        let plain = !value.is_empty() && !value.starts_with(['\'', '"', '[', '{', '|', '>', '&', '*', '!', '#']);
        plain.then_some(value)
    }

    /// Whether `word` is written quoted (`'on'`, `"on"`) as the value of the whole key path `path` in the first of
    /// `documents` that has the key: on the key's own line (`key: 'on'`, `key: [on, 'off']`), or as an item of a
    /// block list below it (`- 'on'`). YAML 1.1, which lkp's Ruby reads job files with, takes only the plain words
    /// for booleans, so only the text can tell a quoted one, which stays text, from a plain one.
    pub(crate) fn word_is_quoted(&self, documents: &[usize], path: &[&str], word: &str) -> bool {
        let Some(line_number) = documents.iter().find_map(|document| self.locate_exact(*document, path)) else {
            return false;
        };
        let quoted = [format!("'{word}'"), format!("\"{word}\"")];
        let holds_quoted = |text: &str| {
            let text = text.find(" #").map_or(text, |comment| &text[..comment]);
            quoted.iter().any(|q| text.contains(q.as_str()))
        };
        let Some(line) = self.lines.get(line_number - 1) else { return false };
        let Some(value) = path.last().and_then(|key| after_key(line.trim_start(), key)) else { return false };
        if !value.trim().is_empty() {
            return holds_quoted(value);
        }
        // A block list: its items follow, each `- item`, indented at least as far as the key.
        let key_indent = indent_of(line);
        self.lines[line_number..]
            .iter()
            .filter(|line| is_content(line))
            .take_while(|line| indent_of(line) >= key_indent && line.trim_start().starts_with('-'))
            .any(|line| holds_quoted(line.trim_start().trim_start_matches('-')))
    }

    /// The first of `paths` found whole in any of `documents` (tried in order).
    pub(crate) fn locate_first_exact(
        &self,
        documents: &[usize],
        paths: &[Vec<&str>],
    ) -> Option<usize> {
        paths.iter().find_map(|path| {
            documents
                .iter()
                .find_map(|doc| self.locate_exact(*doc, path))
        })
    }

    /// The 1-based line, from 1-based `from` on within its document, whose text holds `needle`: the line of a list
    /// item under the key found at `from` (a value of a list has no key of its own to be found by).
    pub(crate) fn line_holding(&self, from: usize, needle: &str) -> Option<usize> {
        let start = from.checked_sub(1)?;
        let end = self.doc_starts.iter().copied().find(|&doc| doc > start).unwrap_or(self.lines.len());
        (start..end.min(self.lines.len())).find(|&index| self.lines[index].contains(needle)).map(|index| index + 1)
    }

    /// Like [`SourceMap::locate`], but tries each document in `documents` in turn.
    pub(crate) fn locate_any(&self, documents: &[usize], path: &[&str]) -> Option<usize> {
        // Prefer a document where the whole path's first key is present at top level.
        documents.iter().find_map(|doc| {
            path.first().and_then(|first| self.locate(*doc, &[first]))?;
            self.locate(*doc, path)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "suite: fio\n\nfio-setup-basic:\n  rw:\n    - randread\n  bs: 4k\nfio:\n---\nruntime: 5s\nfio-setup-basic:\n  'bs': 1M\n";

    #[test]
    fn finds_keys_per_document() {
        let map = SourceMap::new(TEXT);
        assert_eq!(map.locate(0, &["suite"]), Some(1));
        assert_eq!(map.locate(0, &["fio-setup-basic", "bs"]), Some(6));
        assert_eq!(map.locate(0, &["fio-setup-basic", "rw"]), Some(4));
        assert_eq!(map.locate(0, &["fio"]), Some(7));
        assert_eq!(map.locate(1, &["runtime"]), Some(9));
        assert_eq!(map.locate(1, &["fio-setup-basic", "bs"]), Some(11));
        assert_eq!(map.locate(0, &["runtime"]), None);
        // A nested key that is missing falls back to its parent's line.
        assert_eq!(map.locate(0, &["fio-setup-basic", "iodepth"]), Some(3));
        assert_eq!(map.locate_any(&[1, 0], &["suite"]), Some(1));
        assert_eq!(map.document_line(1), Some(9));
        assert_eq!(map.locate_exact(0, &["fio-setup-basic", "iodepth"]), None);
        assert_eq!(map.locate_exact(0, &["fio-setup-basic", "bs"]), Some(6));
        assert_eq!(
            map.locate_first_exact(&[0], &[vec!["fio", "bs"], vec!["fio-setup-basic", "bs"]]),
            Some(6)
        );
    }

    #[test]
    fn plain_values_are_read_as_typed() {
        let map = SourceMap::new("ucode: 0x5003006  # microcode\nkernel: '5.10'\nfio:\n  size: 1e3\n  rw: [a, b]\n");
        assert_eq!(map.plain_value(0, &["ucode"]), Some("0x5003006"));
        assert_eq!(map.plain_value(0, &["kernel"]), None);
        assert_eq!(map.plain_value(0, &["fio", "size"]), Some("1e3"));
        assert_eq!(map.plain_value(0, &["fio", "rw"]), None);
        assert_eq!(map.plain_value(0, &["fio"]), None);
        assert_eq!(map.plain_value(0, &["fio", "bs"]), None);
    }

    #[test]
    fn keys_given_in_an_lkp_role_hash_are_found_there() {
        // The loader lifts a role's keys to the top of the job, so messages ask for them by top-level paths.
        let text = "cluster: cs-localhost\nif role server:\n  iperf-server:\nif role client:\n  iperf:\n    - tcp\n";
        let map = SourceMap::new(text);
        assert_eq!(map.locate(0, &["iperf"]), Some(5));
        assert_eq!(map.locate(0, &["iperf-server"]), Some(3));
        assert_eq!(map.locate_exact(0, &["iperf", "protocol"]), None);
        assert_eq!(map.locate(0, &["cluster"]), Some(1));
        assert_eq!(map.locate(0, &["runtime"]), None);
        assert_eq!(map.locate(0, &[]), None);
    }

    #[test]
    fn leading_marker_opens_the_first_document() {
        let map = SourceMap::new("---\n\n# note\na: 1\n---\nb: 2\n");
        assert_eq!(map.document_line(0), Some(2));
        assert_eq!(map.locate(0, &["a"]), Some(4));
        assert_eq!(map.locate(1, &["b"]), Some(6));
    }
}
