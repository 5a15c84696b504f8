//! Loading a job file: YAML documents, checked and normalized, and lkp's multi-document rule.
//!
//! A file `hash0 --- hash1 --- ... --- hashN` stands for the jobs `hash0`, `hash0 + hash1`, ..., `hash0 + hashN`,
//! as lkp-tests' `Job#each_jobs` and its jobs/README.md describe it; each is then expanded into atomic jobs. `+`
//! follows lkp's `revise_hash`: a later document's top-level key replaces the same key of `hash0`, keeping its
//! position; a key `a.b.c` sets a nested key; `key+` adds to a list, `key-` removes a key (or, given values, some of
//! its entries); and the accumulative keys (`mail_to`, `mail_cc`, `constraints`, `need_*`) add up instead of being
//! replaced. Empty documents after the first (a trailing `---`) add nothing and are skipped. A first document that
//! names no program (neither one Culprit runs nor another of lkp's), followed by others, holds what they share and is
//! no job of its own (lkp runs it as one that runs no benchmark).

use crate::include::{self, FoundInclude};
use crate::locate::SourceMap;
use crate::table::{is_lkp_program_not_run, key_role, KeyRole};
use crate::template;
use crate::{JobError, Place};
use serde::Deserialize;
use serde_yaml::{Mapping, Value};
use std::sync::Arc;

/// A loaded job file: its documents, each a hash with text keys in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct JobFile {
    file_name: String,
    pub(crate) source: Arc<SourceMap>,
    documents: Vec<Mapping>,
    included: Vec<String>,
    merged_text: Option<String>,
    /// Per document, the first of lkp's role keys it gave (`if role server`), merged as one machine plays every
    /// role: each job made with such a document must be on lkp's `cs-localhost` cluster, whichever document gives
    /// it; the key places the refusal of a job without a cluster.
    role_documents: Vec<Option<String>>,
}

/// One job of a file before expansion: which documents made it, and its hash.
#[derive(Debug, Clone, PartialEq)]
pub struct MergedJob {
    /// 0-based indexes of the documents merged into it (`[0]` or `[0, k]`).
    pub documents: Vec<usize>,
    pub params: Mapping,
}

/// What kind of YAML value something is, for messages.
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "empty",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a scalar",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a hash",
        Value::Tagged(_) => "a tagged value",
    }
}

/// The text of a scalar key or value (`None` for lists, hashes, tagged values and null).
pub(crate) fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The file name without directories and without a `.yaml`/`.yml` extension.
pub(crate) fn file_stem(file_name: &str) -> String {
    let base = file_name.rsplit(['/', '\\']).next().unwrap_or(file_name);
    let stem = base.strip_suffix(".yaml").or_else(|| base.strip_suffix(".yml")).unwrap_or(base);
    stem.to_string()
}

impl JobFile {
    /// Parses a job file's text. `file_name` is used in messages and for the job's name (its stem). lkp's includes
    /// (`<<: FILE`) are refused, since finding files is no business of this crate; see
    /// [`JobFile::parse_with_includes`].
    pub fn parse(text: &str, file_name: &str) -> Result<JobFile, JobError> {
        let text = template::quote_unquoted(without_byte_order_mark(text));
        JobFile::from_source(&text, file_name, SourceMap::new(&text), Vec::new())
    }

    /// Parses a job file's text after pasting in lkp's includes (`<<: FILE`, `<<: {file: FILE, ...}`; see
    /// [`crate::include`]), each found by `find` from the name as written. Messages name the file and line each key
    /// came from.
    pub fn parse_with_includes(
        text: &str,
        file_name: &str,
        find: &mut dyn FnMut(&str) -> Result<FoundInclude, String>,
    ) -> Result<JobFile, JobError> {
        let text = without_byte_order_mark(text);
        let merged = include::merge_includes(text, file_name, find)?;
        // Quoting keeps every line where it was, so the lines' origins stay true.
        let text = template::quote_unquoted(&merged.text);
        let source = SourceMap::with_origins(&text, merged.origins);
        let mut file = JobFile::from_source(&text, file_name, source, merged.included)?;
        if !file.included.is_empty() {
            file.merged_text = Some(text);
        }
        Ok(file)
    }

    fn from_source(
        text: &str,
        file_name: &str,
        source: SourceMap,
        included: Vec<String>,
    ) -> Result<JobFile, JobError> {
        let source = Arc::new(source);
        let mut documents = Vec::new();
        let mut role_documents = Vec::new();
        for (index, document) in serde_yaml::Deserializer::from_str(text).enumerate() {
            let value = Value::deserialize(document)
                .map_err(|e| in_origin_file(yaml_error(file_name, text, &e), &source, file_name))?;
            let place = |path: &[&str]| {
                source.place(file_name, source.locate(index, path).or_else(|| source.document_line(index)))
            };
            let typed = |path: &[&str]| source.plain_value(index, path).map(str::to_string);
            let mapping = match value {
                Value::Null => {
                    role_documents.push(None);
                    Mapping::new()
                }
                Value::Mapping(mapping) => {
                    let mut normalized = normalize_mapping(mapping, &mut Vec::new(), &place, &typed)
                        .map_err(|error| nested_include(error, file_name))?;
                    apply_merge_keys(&mut normalized, &place(&[]))?;
                    role_documents.push(first_role_key(&normalized));
                    merge_localhost_roles(normalized, &place)?
                }
                other => {
                    return Err(JobError::NotAHash { place: place(&[]), document: index + 1, found: kind_of(&other) })
                }
            };
            documents.push(mapping);
        }
        if documents.iter().all(Mapping::is_empty) {
            return Err(JobError::Empty { file: file_name.to_string() });
        }
        Ok(JobFile { file_name: file_name.to_string(), source, documents, included, merged_text: None, role_documents })
    }

    /// The files lkp's includes pasted in, in order, as the finder named them (none for [`JobFile::parse`]).
    pub fn included(&self) -> &[String] {
        &self.included
    }

    /// The job file's text with its includes pasted in, when it has any: a text that reads as the same jobs without
    /// the included files, for keeping with results (a bisect session's job, a report's reproduce steps).
    pub fn merged_text(&self) -> Option<&str> {
        self.merged_text.as_deref()
    }

    /// The refusal of a matrix point of the job made of `documents` that gave role keys, unless it is on lkp's
    /// `cs-localhost` cluster: on a cluster of several machines, or on none. The cluster may come from another
    /// document than the roles (a shared first document), or from a list, which the check of each document as it is
    /// read does not see.
    ///
    /// Without a cluster lkp runs no role's part: it writes `if role server:` into the job's script as the shell's
    /// `if role server; then ... fi` (lib/job2sh.rb, a hash under an `if` key), whose `role` (lib/env.sh) asks
    /// `$node_roles`, and sbin/split-job sets `node_roles = 'server client'` only `if jobs['cluster']`. Merged here
    /// and run, such a job measured what lkp never runs.
    pub(crate) fn refuse_roles_off_localhost(&self, documents: &[usize], point: &Mapping) -> Result<(), JobError> {
        let Some((role_document, role_key)) = documents
            .iter()
            .find_map(|&d| self.role_documents.get(d).and_then(Option::as_ref).map(|key| (d, key)))
        else {
            return Ok(());
        };
        let Some(cluster) = point.get("cluster").filter(|c| !c.is_null()) else {
            let place = self.source.place(self.file_name(), self.source.locate(role_document, &[role_key.as_str()]));
            return Err(JobError::Unsupported {
                place,
                what: format!(
                    "lkp's '{role_key}' part in a job without a cluster, where lkp runs no role's part (its \
                     split-job gives the machine roles only on a cluster)"
                ),
                todo: "add 'cluster: cs-localhost' to run every role on this machine, as lkp's cs-localhost cluster \
                       does",
            });
        };
        if scalar_text(cluster).as_deref() == Some(LOCALHOST_CLUSTER) {
            return Ok(());
        }
        let mut documents = documents.to_vec();
        documents.reverse();
        let place = self.source.place(self.file_name(), self.source.locate_any(&documents, &["cluster"]));
        match scalar_text(cluster).filter(|name| !name.trim().is_empty()) {
            Some(name) => Err(several_machines(place, &name)),
            // An empty cluster or a hash names no cluster file of lkp's (lkp's split-job fails to read one), so it
            // is not called a cluster of several machines.
            None => Err(JobError::Unsupported {
                place,
                what: format!("a 'cluster' that is {}, which names no lkp cluster", match scalar_text(cluster) {
                    Some(_) => "empty".to_string(),
                    None => kind_of(cluster).to_string(),
                }),
                todo: "give 'cluster: cs-localhost' to run every role on this machine, as lkp's cs-localhost \
                       cluster does",
            }),
        }
    }

    /// The file name as given to [`JobFile::parse`].
    pub fn file_name(&self) -> &str {
        &self.file_name
    }

    /// The file name without directories and extension: the prefix of every atomic job's name.
    pub fn stem(&self) -> String {
        file_stem(&self.file_name)
    }

    /// The documents as written (normalized: text keys, YAML merge keys applied).
    pub fn documents(&self) -> &[Mapping] {
        &self.documents
    }

    /// The jobs before expansion: `hash0`, then `hash0 + hashK` for every later non-empty document. A `hash0` that
    /// names no program (Culprit's or another of lkp's), followed by documents, is only what they share and no job of
    /// its own.
    pub fn merged_jobs(&self) -> Vec<MergedJob> {
        let Some((first, rest)) = self.documents.split_first() else {
            return Vec::new();
        };
        // lkp makes `hash0` alone a job too, which with no program runs nothing there; here it would be refused as
        // a job that selects no program (or clash by name with a later document's job of no params), although the
        // file is the layout of shared params first and one program a document that the refusal of a job of two
        // programs advises.
        // A program of lkp's that Culprit does not run (unixbench, will-it-scale) counts too: lkp's `each_jobs`
        // always makes hash0 a job, and a file whose first document runs such a program lost every job of it (QA 47:
        // unixbench.yaml split into 1 job where lkp writes 30).
        let selects_program = first.keys().any(|k| {
            let key = k.as_str().unwrap_or_default();
            matches!(key_role(key), KeyRole::Program(..)) || is_lkp_program_not_run(key)
        });
        let shared_only = !selects_program && rest.iter().any(|document| !document.is_empty());
        let mut jobs = Vec::new();
        if !shared_only {
            jobs.push(MergedJob { documents: vec![0], params: first.clone() });
        }
        for (offset, document) in rest.iter().enumerate() {
            if document.is_empty() {
                continue;
            }
            let mut params = first.clone();
            revise(&mut params, document);
            jobs.push(MergedJob { documents: vec![0, offset + 1], params });
        }
        jobs
    }
}

/// An include refused in a file that was itself included: lkp pastes includes one level deep, so the included
/// file's own `<<:` line is no include there either, and pasting by hand is the way.
fn nested_include(error: JobError, file_name: &str) -> JobError {
    match error {
        JobError::Unsupported { place, what, .. } if place.file != file_name && what.contains("include") => {
            JobError::Unsupported {
                place,
                what: format!("{what} inside an included file"),
                todo: "lkp pastes includes one level deep, so paste that file's keys into the file that includes it",
            }
        }
        other => other,
    }
}

/// A byte order mark, which editors on Windows write, may open a YAML stream; the parser took it for content and
/// refused the file with "did not find expected <document start> at line 2 column 1".
fn without_byte_order_mark(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// `error`, whose lines are those of the text read, with each line given in the file it came from (the job file,
/// or a file lkp's include pasted in).
fn in_origin_file(error: JobError, source: &SourceMap, file_name: &str) -> JobError {
    let moved = |place: Place| source.place(&place.file, place.line);
    match error {
        JobError::Yaml { file, line, column, reason } => {
            let (file, line) = source.origin_of(&file, line);
            JobError::Yaml { file, line, column, reason }
        }
        JobError::TabIndent { file, line, column } => {
            let (file, line) = source.origin_of(&file, line);
            JobError::TabIndent { file, line, column }
        }
        JobError::ColonInValue { file, line, key } => {
            let (file, line) = source.origin_of(&file, line);
            JobError::ColonInValue { file, line, key }
        }
        JobError::DuplicateKey { place, key, first_line } => {
            let first_line = source.origin_of(file_name, first_line).1;
            JobError::DuplicateKey { place: moved(place), key, first_line }
        }
        JobError::OutOfRange { place, key, value } => JobError::OutOfRange { place: moved(place), key, value },
        JobError::Unsupported { place, what, todo } => JobError::Unsupported { place: moved(place), what, todo },
        other => other,
    }
}

fn yaml_error(file_name: &str, text: &str, error: &serde_yaml::Error) -> JobError {
    let reason = error.to_string();
    // serde_yaml says `[path: ]duplicate entry with key "K"[ at line L column C]`, with no error kind to match.
    let marker = "duplicate entry with key \"";
    if let Some(key) = reason.find(marker).and_then(|at| reason[at + marker.len()..].split('"').next()) {
        if let Some((first_line, line)) = duplicate_key_lines(text, key) {
            // Two `<<:` lines are two of lkp's includes (hackbench-cgroup2's `<<: cgroup2.yaml`, `<<: hackbench.yaml`),
            // not a key given twice by mistake: merging them into one, as that message advised, is no job file.
            if key == "<<" {
                return JobError::Unsupported {
                    place: Place { file: file_name.to_string(), line: Some(first_line) },
                    what: "lkp's '<< : FILE' include".to_string(),
                    todo: "paste the included files' keys into this job file, in the order of their '<<:' lines",
                };
            }
            let place = Place { file: file_name.to_string(), line: Some(line) };
            return JobError::DuplicateKey { place, key: key.to_string(), first_line };
        }
    }
    if let Some((key, value)) = out_of_range_integer(&reason) {
        return JobError::OutOfRange {
            place: Place { file: file_name.to_string(), line: error.location().map(|location| location.line()) },
            key,
            value,
        };
    }
    // An lkp `{{ expression }}` template that does not close is left unquoted, and reads as a flow mapping that does
    // not close; the parser's words would send the user to fix a syntax that is lkp's on purpose.
    let flow = "while parsing a flow mapping at line ";
    if let Some(line) = reason.find(flow).and_then(|at| {
        reason[at + flow.len()..].split(|c: char| !c.is_ascii_digit()).next().and_then(|n| n.parse::<usize>().ok())
    }) {
        if let Some(column) = text.lines().nth(line.saturating_sub(1)).and_then(|l| l.find("{{")) {
            return JobError::Yaml {
                file: file_name.to_string(),
                line,
                column: column + 1,
                reason: "lkp's '{{ expression }}' template opened here has no closing '}}'".to_string(),
            };
        }
    }
    match error.location() {
        Some(location) => {
            let line = text.lines().nth(location.line().saturating_sub(1)).unwrap_or_default();
            let indent = &line[..line.len() - line.trim_start().len()];
            if let Some(tab) = indent.find('\t') {
                return JobError::TabIndent { file: file_name.to_string(), line: location.line(), column: tab + 1 };
            }
            if let Some(key) = colon_in_plain_value(line, &reason) {
                return JobError::ColonInValue { file: file_name.to_string(), line: location.line(), key };
            }
            JobError::Yaml { file: file_name.to_string(), line: location.line(), column: location.column(), reason }
        }
        None => JobError::YamlNoPosition { file: file_name.to_string(), reason },
    }
}

/// The key of a `key: value` line (or `- key: value` list item) whose unquoted value holds `: `, when the parser
/// refused the line with `mapping values are not allowed`: the colon in the value is what it tripped on.
fn colon_in_plain_value(line: &str, reason: &str) -> Option<String> {
    if !reason.contains("mapping values are not allowed") {
        return None;
    }
    let entry = line.trim_start().trim_start_matches("- ");
    let (key, value) = entry.split_once(": ")?;
    let value = value.trim_start();
    let plain = !value.starts_with(['"', '\'', '[', '{', '|', '>']);
    (plain && value.contains(": ") && !key.is_empty() && !key.contains(' ')).then(|| key.to_string())
}

/// The lines (1-based) of the first and second occurrence of `key` in one hash: two `key:` lines at the same
/// indentation in one document with no line between them indented less (which would start another hash). serde_yaml
/// names only the key and the start of the hash; `None` when the text does not show the pair plainly (flow style).
fn duplicate_key_lines(text: &str, key: &str) -> Option<(usize, usize)> {
    let forms = [format!("{key}:"), format!("\"{key}\":"), format!("'{key}':")];
    // Per indentation, the line of a first occurrence still open (no shallower line since).
    let mut open: Vec<(usize, usize)> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.starts_with("---") {
            open.clear();
            continue;
        }
        let body = line.trim_start();
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        let indent = line.len() - body.len();
        open.retain(|&(depth, _)| depth <= indent);
        if forms.iter().any(|form| body.starts_with(form.as_str())) {
            if let Some(&(_, first)) = open.iter().find(|&&(depth, _)| depth == indent) {
                return Some((first, index + 1));
            }
            open.push((indent, index + 1));
        }
    }
    None
}

/// The key path and the number of serde_yaml's error for an integer beyond 64 bits. serde_yaml reads such a number
/// as a 128-bit one, which a YAML value cannot hold, and says `<path>: invalid type: integer `<n>` as u128, expected
/// any YAML value`; said as it stands, under "malformed YAML", it sends the user looking for a syntax error that is not
/// there. serde_yaml has no error kind to match, so its text is read; a change of that text leaves the plain YAML
/// message, which the test `a_huge_number_is_out_of_range_not_malformed` then catches.
fn out_of_range_integer(reason: &str) -> Option<(String, String)> {
    let (before, rest) = reason.split_once("invalid type: integer `")?;
    let (value, rest) = rest.split_once('`')?;
    if !(rest.starts_with(" as u128") || rest.starts_with(" as i128")) {
        return None;
    }
    let key = before.trim_end().trim_end_matches(':').trim();
    let key = if key.is_empty() { "the value" } else { key };
    Some((key.to_string(), value.to_string()))
}

/// Makes every key text (numbers and booleans become their text) and rejects what Culprit cannot read: lists or
/// hashes as keys (which is how lkp's `{{ }}` templates parse), YAML tags, and lkp's `<< : FILE` includes.
///
/// A number whose text YAML would not write back as typed (`ucode: 0x5003006` reads as 83898374, `kernel: 5.10` as
/// 5.1) keeps its text, as a string: it is a job's param, passed to a program and shown in job names as the user
/// wrote it, and its text is what the user searches for. An exponent (`loops: 1e2`) is the exception: it is written
/// for its value, which programs parsing whole numbers read from `100` and not from `1e2`. `typed` gives the text
/// of a key path's value when it is a plain one-line scalar; lists and flow values keep YAML's reading.
fn normalize_mapping(
    mapping: Mapping,
    path: &mut Vec<String>,
    place: &dyn Fn(&[&str]) -> Place,
    typed: &dyn Fn(&[&str]) -> Option<String>,
) -> Result<Mapping, JobError> {
    let mut out = Mapping::with_capacity(mapping.len());
    for (key, value) in mapping {
        let key_text = match &key {
            Value::Null => "~".to_string(),
            other => scalar_text(other).unwrap_or_default(),
        };
        let parent = path.clone();
        let path_refs: Vec<&str> = parent.iter().map(String::as_str).collect();
        if key_text.is_empty() && !matches!(key, Value::String(_)) {
            let hint = if matches!(key, Value::Mapping(_)) {
                "; an lkp '{{ expression }}' template inside a flow hash or list ('{...}', '[...]') reads as a hash: \
                 give it a 'key: {{ ... }}' line of its own, or quote it"
            } else {
                "; write keys as plain words"
            };
            return Err(JobError::BadKey { place: place(&path_refs), key: kind_of(&key).to_string(), hint });
        }
        if matches!(key, Value::Null) {
            return Err(JobError::BadKey {
                place: place(&path_refs),
                key: "~ (null)".into(),
                hint: "; write keys as plain words",
            });
        }
        path.push(key_text.clone());
        let value = match value {
            Value::Number(number) => {
                let path_refs: Vec<&str> = path.iter().map(String::as_str).collect();
                number_as_typed(number, typed(&path_refs))
            }
            other => normalize_value(other, path, place, typed)?,
        };
        path.pop();
        // lkp also includes a file with keys of its own (`<<: {file: stress-ng-part6-1hdd.yaml, disk: '1SSD'}`);
        // merged as a YAML hash it left a job of `file` and `disk` alone, refused as one that selects no program.
        let file_include = matches!(&value, Value::Mapping(m) if m.contains_key("file"));
        if key_text == "<<" && (file_include || !matches!(value, Value::Mapping(_) | Value::Sequence(_))) {
            let mut with_key = path_refs.clone();
            with_key.push("<<");
            let (what, todo) = if file_include {
                (
                    "lkp's '<<: {file: FILE, ...}' include",
                    "paste the included file's keys into this job file, and after them the keys given beside `file:` \
                     (they override the included file's)",
                )
            } else {
                ("lkp's '<< : FILE' include", "paste the included file's keys into this job file")
            };
            return Err(JobError::Unsupported { place: place(&with_key), what: what.to_string(), todo });
        }
        out.insert(Value::String(key_text), value);
    }
    Ok(out)
}

/// A number as its typed text, when that text reads as this very number but YAML would write it otherwise.
fn number_as_typed(number: serde_yaml::Number, typed: Option<String>) -> Value {
    match typed {
        Some(text)
            if text != number.to_string()
                && !text.contains(['e', 'E'])
                && serde_yaml::from_str::<Value>(&text).is_ok_and(|read| read == Value::Number(number.clone())) =>
        {
            Value::String(text)
        }
        _ => Value::Number(number),
    }
}

fn normalize_value(
    value: Value,
    path: &mut Vec<String>,
    place: &dyn Fn(&[&str]) -> Place,
    typed: &dyn Fn(&[&str]) -> Option<String>,
) -> Result<Value, JobError> {
    // Items of a list have no key of their own to find their text by, so they keep YAML's reading of numbers.
    let in_list = |_: &[&str]| None;
    Ok(match value {
        Value::Mapping(mapping) => Value::Mapping(normalize_mapping(mapping, path, place, typed)?),
        Value::Sequence(items) => Value::Sequence(
            items.into_iter().map(|item| normalize_value(item, path, place, &in_list)).collect::<Result<_, _>>()?,
        ),
        Value::Tagged(tagged) => {
            let path_refs: Vec<&str> = path.iter().map(String::as_str).collect();
            return Err(JobError::Unsupported {
                place: place(&path_refs),
                what: format!("the YAML tag {}", tagged.tag),
                todo: "remove the tag and write the plain value",
            });
        }
        scalar => scalar,
    })
}

/// The prefix of lkp's role keys (`if role server:`, `if role client:`): the params of the machines of one role of
/// the job's `cluster`.
pub(crate) const ROLE_PREFIX: &str = "if role ";

/// lkp's only cluster of one machine, whose `localhost` plays every role (lkp-tests' `cluster/cs-localhost`).
const LOCALHOST_CLUSTER: &str = "cs-localhost";

/// The first of lkp's role keys (`if role server`) a document gives, if any.
fn first_role_key(mapping: &Mapping) -> Option<String> {
    mapping.keys().filter_map(Value::as_str).find(|key| key.starts_with(ROLE_PREFIX)).map(str::to_string)
}

/// The refusal of a job whose roles are played on `cluster`, a cluster of several machines.
fn several_machines(place: Place, cluster: &str) -> JobError {
    JobError::Unsupported {
        place,
        what: format!("lkp's cluster '{cluster}' of several machines, each playing its 'if role' part"),
        todo: "Culprit measures on one machine, which plays every role as on lkp's cs-localhost: give \
               'cluster: cs-localhost'",
    }
}

/// lkp's role keys, merged as lkp's `cs-localhost` cluster runs them: one machine plays every role, so the keys of
/// each `if role <name>:` hash become the job's own, at its place, in file order (iperf.yaml's client `iperf:` and
/// server `iperf-server:`). A job on a cluster of several machines, or on none, is refused for each of its matrix
/// points ([`JobFile::refuse_roles_off_localhost`]), wherever its cluster is given.
fn merge_localhost_roles(mapping: Mapping, place: &dyn Fn(&[&str]) -> Place) -> Result<Mapping, JobError> {
    if first_role_key(&mapping).is_none() {
        return Ok(mapping);
    }
    let mut merged = Mapping::with_capacity(mapping.len());
    // A key and the role that gave it, so that a key a role gives is refused when it is given again, before or after.
    let mut from_role: Vec<(Value, String)> = Vec::new();
    let twice = |name: &str, role: &str, at: Place| JobError::Unsupported {
        place: at,
        what: format!("'{name}' given both by the '{role}' role and elsewhere in the job"),
        todo: "one machine plays every role here, so give each key once",
    };
    for (key, value) in mapping {
        let text = key.as_str().unwrap_or_default().to_string();
        let Some(role) = text.strip_prefix(ROLE_PREFIX) else {
            if let Some((_, role)) = from_role.iter().find(|(given, _)| *given == key) {
                return Err(twice(&text, role, place(&[&text])));
            }
            merged.insert(key, value);
            continue;
        };
        match value {
            Value::Mapping(inner) => {
                for (inner_key, inner_value) in inner {
                    if merged.contains_key(&inner_key) {
                        let name = inner_key.as_str().unwrap_or_default().to_string();
                        return Err(twice(&name, role, place(&[&text, &name])));
                    }
                    from_role.push((inner_key.clone(), role.to_string()));
                    merged.insert(inner_key, inner_value);
                }
            }
            Value::Null => {}
            other => {
                return Err(JobError::NeedsHash {
                    place: place(&[&text]),
                    key: text.clone(),
                    what: format!("lkp's part of the job for the machines of role '{role}'"),
                    found: kind_of(&other).to_string(),
                })
            }
        }
    }
    Ok(merged)
}

/// Applies YAML `<<: *anchor` merge keys.
fn apply_merge_keys(mapping: &mut Mapping, place: &Place) -> Result<(), JobError> {
    let mut value = Value::Mapping(std::mem::take(mapping));
    value.apply_merge().map_err(|e| JobError::Unsupported {
        place: place.clone(),
        what: format!("this YAML merge key ({e})"),
        todo: "merge only hashes ('<<: *anchor' of a hash)",
    })?;
    if let Value::Mapping(merged) = value {
        *mapping = merged;
    }
    Ok(())
}

/// lkp's accumulative keys: they add up across documents instead of being replaced.
fn is_accumulative(key: &str) -> bool {
    matches!(key, "mail_to" | "mail_cc" | "constraints")
        || (key.starts_with("need_") && !matches!(key, "need_memory" | "need_cpu" | "need_modules"))
}

/// lkp's `merge_accumulative`: combine two values into a list (or a hash, when the old one is a hash).
fn accumulate(old: Value, new: Value) -> Value {
    match (old, new) {
        (old, Value::Null) => old,
        (Value::Null, new) => new,
        (Value::Sequence(mut items), Value::Sequence(more)) => {
            items.extend(more);
            Value::Sequence(items)
        }
        (Value::Sequence(mut items), new) => {
            items.push(new);
            Value::Sequence(items)
        }
        (Value::Mapping(mut hash), Value::Mapping(more)) => {
            for (k, v) in more {
                hash.insert(k, v);
            }
            Value::Mapping(hash)
        }
        (Value::Mapping(mut hash), new) => {
            hash.insert(new, Value::Null);
            Value::Mapping(hash)
        }
        (old, Value::Sequence(more)) => {
            let mut items = vec![old];
            items.extend(more);
            Value::Sequence(items)
        }
        (old, new) => Value::Sequence(vec![old, new]),
    }
}

/// The hash that holds the last part of a dotted path, creating missing hashes; `None` when a part of the path is
/// a scalar that cannot hold keys.
fn parent_for_path<'a>(root: &'a mut Mapping, dotted: &str) -> Option<(&'a mut Mapping, String)> {
    let mut parts: Vec<&str> = dotted.split('.').collect();
    let last = parts.pop()?.to_string();
    let mut current = root;
    for part in parts {
        let key = Value::String(part.to_string());
        let entry = current.entry(key).or_insert(Value::Null);
        if entry.is_null() {
            *entry = Value::Mapping(Mapping::new());
        }
        current = entry.as_mapping_mut()?;
    }
    Some((current, last))
}

/// lkp's `revise_hash(original, revisions, overwrite_top_keys: true)`.
pub(crate) fn revise(original: &mut Mapping, revisions: &Mapping) {
    for (key, value) in revisions {
        let Some(key_text) = key.as_str() else {
            continue;
        };
        if key_text.len() > 1 && key_text.ends_with('+') {
            let target = &key_text[..key_text.len() - 1];
            if let Some((hash, last)) = parent_for_path(original, target) {
                let slot = Value::String(last);
                let old = hash.get(&slot).cloned().unwrap_or(Value::Null);
                let mut merged = accumulate(old, value.clone());
                if let Value::Sequence(items) = &mut merged {
                    let mut unique: Vec<Value> = Vec::with_capacity(items.len());
                    for item in items.drain(..) {
                        if !unique.contains(&item) {
                            unique.push(item);
                        }
                    }
                    *items = unique;
                }
                hash.insert(slot, merged);
            }
        } else if key_text.len() > 1 && key_text.ends_with('-') {
            let target = &key_text[..key_text.len() - 1];
            remove_path(original, target, value);
        } else if key_text.contains('.') && !original.contains_key(key) {
            if let Some((hash, last)) = parent_for_path(original, key_text) {
                hash.insert(Value::String(last), value.clone());
            }
        } else if is_accumulative(key_text) {
            let old = original.get(key).cloned().unwrap_or(Value::Null);
            original.insert(key.clone(), accumulate(old, value.clone()));
        } else {
            original.insert(key.clone(), value.clone());
        }
    }
}

/// lkp's `key-`: without a value, removes the key; with values, removes those entries from the hash it holds.
fn remove_path(original: &mut Mapping, dotted: &str, value: &Value) {
    let Some((hash, last)) = parent_for_path(original, dotted) else {
        return;
    };
    let slot = Value::String(last);
    if value.is_null() {
        hash.remove(&slot);
        return;
    }
    let entries: Vec<Value> = match value {
        Value::Mapping(m) => m.keys().cloned().collect(),
        Value::Sequence(items) => items.clone(),
        other => vec![other.clone()],
    };
    if let Some(Value::Mapping(inner)) = hash.get_mut(&slot) {
        for entry in &entries {
            let entry = scalar_text(entry).map(Value::String).unwrap_or_else(|| entry.clone());
            inner.remove(&entry);
        }
        if inner.is_empty() {
            hash.insert(slot, Value::Null);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> Mapping {
        match serde_yaml::from_str(text) {
            Ok(Value::Mapping(m)) => m,
            other => panic!("test YAML is not a hash: {other:?}"),
        }
    }

    #[test]
    fn a_duplicate_key_is_placed_at_its_second_occurrence() {
        let text = "suite: x\nhackbench:\n  loops: 100\nhackbench:\n  loops: 200\n";
        let error = JobFile::parse(text, "dup.yaml").expect_err("a duplicate key is refused");
        assert_eq!(
            error.to_string(),
            "dup.yaml:4: 'hackbench' is given a second time in the same hash (first at line 2); a key can appear \
             once, so merge the two into one 'hackbench:' or remove one"
        );
        // A key repeated in two different hashes is not a duplicate; the nested one is found under its parent.
        let nested = "fio:\n  bs: 4k\nfsmark:\n  bs: 8k\n  nr_threads: 1\n  bs: 16k\n";
        let text = JobFile::parse(nested, "n.yaml").expect_err("a duplicate key is refused").to_string();
        assert!(text.starts_with("n.yaml:6: 'bs' is given a second time in the same hash (first at line 4)"), "{text}");
    }

    #[test]
    fn revise_follows_lkp() {
        let cases: &[(&str, &str, &str)] = &[
            ("a: 1\nb: 2\n", "a: 3\nc: 4\n", "a: 3\nb: 2\nc: 4\n"),
            ("fio: {bs: 4k, rw: read}\n", "fio: {rw: write}\n", "fio: {rw: write}\n"),
            ("fio: {bs: 4k, rw: read}\n", "fio.rw: write\n", "fio: {bs: 4k, rw: write}\n"),
            ("x: 1\n", "fio.rw: write\n", "x: 1\nfio: {rw: write}\n"),
            ("need_kconfig: A\n", "need_kconfig: B\n", "need_kconfig: [A, B]\n"),
            ("need_memory: 1G\n", "need_memory: 2G\n", "need_memory: 2G\n"),
            ("l: [a, b]\n", "l+: [b, c]\n", "l: [a, b, c]\n"),
            ("a: 1\nb: 2\n", "a-:\n", "b: 2\n"),
            ("h: {x: 1, y: 2}\n", "h-: x\n", "h: {y: 2}\n"),
            ("h: {x: 1}\n", "h-: [x]\n", "h: null\n"),
        ];
        for (base, revision, want) in cases {
            let mut got = yaml(base);
            revise(&mut got, &yaml(revision));
            assert_eq!(got, yaml(want), "{base} + {revision}");
        }
    }

    #[test]
    fn revise_keeps_key_positions() {
        let mut job = yaml("a: 1\nb: 2\nc: 3\n");
        revise(&mut job, &yaml("b: 9\nd: 4\n"));
        let keys: Vec<&str> = job.keys().filter_map(Value::as_str).collect();
        assert_eq!(keys, ["a", "b", "c", "d"]);
    }

    #[test]
    fn multi_document_rule() {
        let shapes = |text: &str| -> Vec<(Vec<usize>, Mapping)> {
            let file = JobFile::parse(text, "t.yaml").unwrap();
            file.merged_jobs().into_iter().map(|j| (j.documents, j.params)).collect()
        };
        assert_eq!(
            shapes("a: 1\nx: 0\nfio:\n---\nb: 2\n---\n---\nb: 3\nx: 9\n"),
            vec![
                (vec![0], yaml("a: 1\nx: 0\nfio:\n")),
                (vec![0, 1], yaml("a: 1\nx: 0\nfio:\nb: 2\n")),
                (vec![0, 3], yaml("a: 1\nx: 9\nfio:\nb: 3\n")),
            ]
        );
        // A first document of no program is what the later ones share, not a job of its own; alone, it stays one.
        assert_eq!(
            shapes("a: 1\n---\nfio:\n---\ndbench:\n"),
            vec![(vec![0, 1], yaml("a: 1\nfio:\n")), (vec![0, 2], yaml("a: 1\ndbench:\n"))]
        );
        assert_eq!(shapes("a: 1\n---\n"), vec![(vec![0], yaml("a: 1\n"))]);
    }

    #[test]
    fn a_byte_order_mark_opens_the_file_unseen() {
        let file = JobFile::parse("\u{feff}suite: x\r\ncommand:\r\n  cmd: true\r\n", "bom.yaml").unwrap();
        assert_eq!(file.documents()[0], yaml("suite: x\ncommand:\n  cmd: true\n"));
    }

    #[test]
    fn keys_become_text() {
        let file = JobFile::parse("1: one\ntrue: yes\nfio:\n  4: k\n", "t.yaml").unwrap();
        assert_eq!(file.documents()[0], yaml("'1': one\n'true': yes\nfio:\n  '4': k\n"));
    }

    #[test]
    fn numbers_keep_the_text_they_were_typed_in() {
        let text = "ucode: 0x5003006  # microcode\nkernel: 5.10\nn: 8\nf: 1.5\nx: 1e3\nl: [0x10]\nfio:\n  mask: 0xff\n";
        let file = JobFile::parse(text, "t.yaml").unwrap();
        let want = yaml(
            "ucode: '0x5003006'\nkernel: '5.10'\nn: 8\nf: 1.5\nx: 1000.0\nl: [16]\nfio:\n  mask: '0xff'\n",
        );
        assert_eq!(file.documents()[0], want);
        // A later document's value keeps its text too, and replaces the first's.
        let file = JobFile::parse("ucode: 0x1\nhackbench:\n---\nucode: 0x0a\n", "t.yaml").unwrap();
        assert_eq!(file.merged_jobs()[1].params.get("ucode"), Some(&Value::String("0x0a".into())));
    }

    #[test]
    fn anchors_merge() {
        let file = JobFile::parse("base: &b {bs: 4k}\nfio:\n  <<: *b\n  rw: read\n", "t.yaml").unwrap();
        assert_eq!(file.documents()[0], yaml("base: {bs: 4k}\nfio: {bs: 4k, rw: read}\n"));
    }

    #[test]
    fn a_huge_number_is_out_of_range_not_malformed() {
        let text = "suite: x\ncommand:\n  cmd: true\n  executions: 99999999999999999999\n";
        let error = JobFile::parse(text, "huge.yaml").unwrap_err();
        assert_eq!(
            error,
            JobError::OutOfRange {
                place: Place { file: "huge.yaml".into(), line: Some(4) },
                key: "command.executions".into(),
                value: "99999999999999999999".into(),
            }
        );
        let message = error.to_string();
        assert!(
            message.starts_with("huge.yaml:4: 'command.executions' = 99999999999999999999 is out of range"),
            "{message}"
        );
        assert!(!message.contains("malformed") && !message.contains("syntax"), "{message}");
        let negative = JobFile::parse("suite: x\nnr_threads: -99999999999999999999\n", "neg.yaml").unwrap_err();
        assert!(
            matches!(&negative, JobError::OutOfRange { key, value, .. } if key == "nr_threads" && value.starts_with('-')),
            "{negative:?}"
        );
        // A number that fits stays a number, and real syntax errors stay syntax errors.
        assert!(JobFile::parse("suite: x\nn: 18446744073709551615\n", "max.yaml").is_ok());
        assert!(matches!(JobFile::parse("suite: [x\n", "bad.yaml"), Err(JobError::Yaml { .. })));
        // A command with `: ` in it, unquoted: the message says to quote the value, on its line.
        let error = JobFile::parse("suite: x\ncommand:\n  cmd: echo 'ops/s: 1'\n", "c.yaml").unwrap_err();
        assert_eq!(error, JobError::ColonInValue { file: "c.yaml".into(), line: 3, key: "cmd".into() });
        assert!(error.to_string().contains("quote the whole value (cmd: \"...\""), "{error}");
        // An indentation mistake is still the parser's own words.
        assert!(matches!(JobFile::parse("suite: x\n  bad indent: 1\n", "i.yaml"), Err(JobError::Yaml { .. })));
    }

    #[test]
    fn stems() {
        for (name, want) in
            [("jobs/fio-basic.yaml", "fio-basic"), ("a.yml", "a"), ("plain", "plain"), ("d\\x.yaml", "x")]
        {
            assert_eq!(file_stem(name), want);
        }
    }
}
