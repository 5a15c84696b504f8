//! Writes an atomic job as block-style YAML the way lkp's job files look (`fio:` for an empty value, nested hashes
//! indented by two), readable back by both serde_yaml and Ruby's YAML.
//!
//! serde_yaml's own writer prints `fio: null` and leaves words such as `yes` or `on` unquoted, which Ruby's YAML 1.1
//! reader would take for booleans; so the structure is written here and only plain one-line scalars are delegated
//! to serde_yaml for quoting.

use serde_yaml::{Mapping, Value};

/// Words that YAML 1.1 readers (Ruby's, lkp's) take for booleans or null, so they must be quoted to stay text.
const YAML11_SPECIAL: &[&str] = &[
    "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off",
    "OFF", "true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL", "~", "",
];

/// One scalar (or a list/hash written inline) as YAML text.
fn scalar(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string(s),
        other => inline(other),
    }
}

fn string(text: &str) -> String {
    if text.contains(['\n', '\r', '\t']) || text.chars().any(char::is_control) {
        // A JSON string is a valid YAML double-quoted scalar, and keeps newlines on one line.
        return serde_json::to_string(text).unwrap_or_else(|_| format!("{text:?}"));
    }
    if YAML11_SPECIAL.contains(&text) {
        return format!("'{text}'");
    }
    match serde_yaml::to_string(&Value::String(text.to_string())) {
        Ok(out) => out.trim_end_matches('\n').to_string(),
        Err(_) => format!("'{}'", text.replace('\'', "''")),
    }
}

/// A list or hash in flow style (`[a, b]`, `{k: v}`), for values nested inside lists.
fn inline(value: &Value) -> String {
    match value {
        Value::Sequence(items) => format!(
            "[{}]",
            items.iter().map(inline).collect::<Vec<_>>().join(", ")
        ),
        Value::Mapping(mapping) => format!(
            "{{{}}}",
            mapping
                .iter()
                .map(|(k, v)| format!("{}: {}", scalar(k), inline(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Null => "~".to_string(),
        Value::String(s) => {
            // Flow context also forbids unquoted ',', '[', ']', '{', '}'.
            if s.contains([',', '[', ']', '{', '}']) {
                serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
            } else {
                string(s)
            }
        }
        other => scalar(other),
    }
}

/// The words YAML 1.1 reads as booleans that the job file had plain (unquoted), by key path: they are written plain
/// again, so that lkp's Ruby reads the written file as it read the job file (`wal_compression: on` is true to it, and
/// its split-job names the job `...-true-...`), and Culprit names the written job as it named the one it came from.
pub(crate) type PlainWords<'a> = &'a dyn Fn(&[&str], &str) -> bool;

/// Words YAML 1.1 reads as booleans and YAML 1.2 as text, which a job file may have plain or quoted.
const YAML11_BOOLEAN_WORDS: &[&str] = &["yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF"];

/// A scalar at key path `path`: a YAML 1.1 boolean word the job file had plain is written plain.
fn scalar_at(value: &Value, path: &[&str], plain_words: PlainWords<'_>) -> String {
    match value {
        Value::String(word) if YAML11_BOOLEAN_WORDS.contains(&word.as_str()) && plain_words(path, word) => {
            word.clone()
        }
        other => scalar(other),
    }
}

fn write_mapping(out: &mut String, mapping: &Mapping, indent: usize, path: &mut Vec<String>, plain: PlainWords<'_>) {
    let pad = " ".repeat(indent);
    for (key, value) in mapping {
        path.push(key.as_str().unwrap_or_default().to_string());
        let path_refs: Vec<&str> = path.iter().map(String::as_str).collect();
        let key = scalar(key);
        match value {
            Value::Null => out.push_str(&format!("{pad}{key}:\n")),
            Value::Mapping(inner) if inner.is_empty() => {
                out.push_str(&format!("{pad}{key}: {{}}\n"))
            }
            Value::Mapping(inner) => {
                out.push_str(&format!("{pad}{key}:\n"));
                write_mapping(out, inner, indent + 2, path, plain);
            }
            Value::Sequence(items) if items.is_empty() => {
                out.push_str(&format!("{pad}{key}: []\n"))
            }
            Value::Sequence(items) => {
                out.push_str(&format!("{pad}{key}:\n"));
                for item in items {
                    match item {
                        Value::Null => out.push_str(&format!("{pad}-\n")),
                        Value::Mapping(_) | Value::Sequence(_) => {
                            out.push_str(&format!("{pad}- {}\n", inline(item)))
                        }
                        other => out.push_str(&format!("{pad}- {}\n", scalar_at(other, &path_refs, plain))),
                    }
                }
            }
            other => out.push_str(&format!("{pad}{key}: {}\n", scalar_at(other, &path_refs, plain))),
        }
        path.pop();
    }
}

/// The YAML text of a job hash, every YAML 1.1 boolean word quoted.
#[cfg(test)]
pub(crate) fn to_yaml(mapping: &Mapping) -> String {
    to_yaml_keeping_plain_words(mapping, &|_, _| false)
}

/// The YAML text of a job hash, the YAML 1.1 boolean words `plain` names written plain and the others quoted.
pub(crate) fn to_yaml_keeping_plain_words(mapping: &Mapping, plain: PlainWords<'_>) -> String {
    let mut out = String::new();
    write_mapping(&mut out, mapping, 0, &mut Vec::new(), plain);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_lkp_style_and_reads_back() {
        let text = "suite: fio\nfio-setup-basic:\n  rw: randwrite\n  bs: 4k\n  testfile: 'y'\n  note: \"a\\nb\"\n  flag: 'on'\n  n: 1\n  ratio: 0.5\nfio:\nlist:\n- a\n- 'null'\n-\n- [x, 'y,z']\n- {k: v}\nempty: {}\nnone: []\nquoted: '#not a comment'\ncolon: 'a: b'\n";
        let original: Mapping = serde_yaml::from_str(text).unwrap();
        let written = to_yaml(&original);
        assert!(written.contains("\nfio:\n"), "{written}");
        assert!(written.contains("testfile: 'y'"), "{written}");
        assert!(written.contains("flag: 'on'"), "{written}");
        let reread: Mapping = serde_yaml::from_str(&written).unwrap();
        assert_eq!(reread, original, "{written}");
    }
}
