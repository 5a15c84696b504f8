//! lkp's `{{ expression }}` templates: a param whose value is computed, per matrix point, from the job's other params.
//!
//! lkp's jobs/README.md: "`{{ Ruby expression }}` ... expanded during job matrix expansion", and its `Job#each_job`
//! evaluates the expression with the job's hash as the receiver (lib/hashugar.rb: `fs` is the param `fs`,
//! `fsmark.filesize` the `filesize` key of the `fsmark` hash, an unknown name raises `KeyError`). What the
//! expression gives replaces the value, with any text written around the braces kept around it; when it gives `nil`
//! the matrix point is no job at all (aim7-fs-raid.yaml's `- {{ fs == 'f2fs' ? nil : 'disk_src' }}` drops that test
//! on f2fs).
//!
//! Culprit has no Ruby, so it reads the part of Ruby that templates are written in, and says so of the rest: params
//! by name and dotted path, string (single or double quoted, with `#{}`), integer, float, `nil`, `true`, `false`,
//! `/regex/` literals; `== != =~ !~ < <= > >= + - * / %`, `! && || not and or`, `cond ? a : b`,
//! `if/elsif/else/end`, `unless/else/end`, `case [subject] when a, b [then] x ... else y end` (a regex `when`
//! matches), and the methods `to_s to_i to_f size length empty? nil? include? start_with? end_with? upcase downcase`.
//! As in Ruby, a line that completes an expression ends it: an operator opening the next line does not continue it.
//!
//! Two differences from lkp, both documented where users read about job files: every list of the point is expanded
//! before any template is computed, so a template may read a list written after it (lkp would see the whole list
//! there); and the YAML is made readable by quoting the braces in place rather than by lkp's block literal, so that
//! every line keeps its number for messages.

use regex::Regex;
use crate::expand::slot_mut;
use serde_yaml::{Mapping, Value};

/// Quotes every unquoted template written as a value (`key: {{ ... }}` or `- {{ ... }}`, over as many lines as it
/// takes) so that YAML reads it as text: the braces and what they hold become one double-quoted scalar, each of whose
/// line breaks is escaped so that YAML keeps it (a Ruby comment ends at its line) while it drops the lines'
/// indentation, which means nothing to the evaluator below. The number of lines is kept, so every key stays on its
/// line; the text of a block scalar (`cmd: |`) is left as it is. A template that does not close is left as written,
/// for the YAML parser to refuse at its line. This is lkp's `literal_double_braces`, which wraps the same spans in a
/// block literal.
pub fn quote_unquoted(text: &str) -> String {
    let in_block = block_scalar_lines(text);
    let mut out = String::with_capacity(text.len() + 16);
    let mut done = 0;
    while let Some(open) = next_unquoted_open(text, done, &in_block) {
        let Some(close) = text[open..].find("}}").map(|at| open + at + 2) else {
            break;
        };
        // Text after the braces on their last line belongs to the value as lkp reads it (its block literal takes
        // the rest of that line), up to a comment.
        let line_end = text[close..].find('\n').map_or(text.len(), |at| close + at);
        let tail = &text[close..line_end];
        let tail_end = close + tail.find(" #").unwrap_or(tail.len());
        let tail_end = close + text[close..tail_end].trim_end().len();
        out.push_str(&text[done..open]);
        out.push('"');
        for line in text[open..tail_end].split_inclusive('\n') {
            let body = line.trim_end_matches(['\r', '\n']);
            for c in body.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '"' => out.push_str("\\\""),
                    other => out.push(other),
                }
            }
            // Each line break is written as an escaped `\n` and an escaped break, which YAML reads as one line feed,
            // where a plain break would be folded into a space: a Ruby comment ends at its line's end, as in lkp's
            // block literal, instead of taking the rest of the template with it.
            if body.len() < line.len() {
                out.push_str("\\n\\");
                out.push_str(&line[body.len()..]);
            }
        }
        out.push('"');
        done = tail_end;
    }
    out.push_str(&text[done..]);
    out
}

/// For each line of `text` (0-based), whether it is the text of a YAML block scalar: the blank lines and the lines
/// indented deeper than the key that opened it ([`block_scalar_parent`]). Braces there are that text's (a shell
/// here-document in a command's `cmd: |`); quoting a `key: {{` line of it would put quotes into it.
fn block_scalar_lines(text: &str) -> Vec<bool> {
    let mut inside = Vec::new();
    let mut parent: Option<usize> = None;
    for line in text.lines() {
        let body = line.trim_start_matches(' ');
        if let Some(key_column) = parent {
            if body.trim().is_empty() || line.len() - body.len() > key_column {
                inside.push(true);
                continue;
            }
        }
        inside.push(false);
        parent = block_scalar_parent(line);
    }
    inside
}

/// The byte offset of the next `{{` at or after `from` that opens a value: after `key:` or `-` and a blank on its
/// line, outside a comment line, outside quotes (`key: "{{ ... }}"` is text YAML reads as it is) and outside a block
/// scalar's lines (`in_block`, by line).
fn next_unquoted_open(text: &str, from: usize, in_block: &[bool]) -> Option<usize> {
    let mut line_start = 0;
    for (number, line) in text.split_inclusive('\n').enumerate() {
        let line_end = line_start + line.len();
        if line_end <= from || in_block.get(number).copied().unwrap_or(false) || line.trim_start().starts_with('#') {
            line_start = line_end;
            continue;
        }
        let mut at_least = from.saturating_sub(line_start);
        while let Some(at) = line.get(at_least..).and_then(|rest| rest.find("{{")).map(|at| at_least + at) {
            let before = line[..at].trim_end_matches([' ', '\t']);
            let blank_before = before.len() < at;
            if blank_before && opens_value(before) {
                return Some(line_start + at);
            }
            at_least = at + 2;
        }
        line_start = line_end;
    }
    None
}

/// The indentation of the key (or list dash) whose value a line opens as a block scalar (`key: |`, `- >-`, `key: |2
/// # comment`): the lines after it that are indented deeper, and blank lines, are that scalar's text.
fn block_scalar_parent(line: &str) -> Option<usize> {
    let body = line.trim_start_matches(' ');
    let mut parent = line.len() - body.len();
    let mut rest = body.trim_end();
    let mut column = parent;
    while let Some(item) = rest.strip_prefix('-').filter(|r| r.is_empty() || r.starts_with([' ', '\t'])) {
        parent = column;
        let trimmed = item.trim_start();
        column += 1 + item.len() - trimmed.len();
        rest = trimmed;
    }
    let value = match rest.find(": ").or_else(|| rest.find(":\t")) {
        Some(at) if !rest.starts_with('#') && (rest.starts_with(['"', '\'']) || !rest[..at].contains(' ')) => {
            parent = column;
            rest[at + 1..].trim_start()
        }
        _ => rest,
    };
    let value = value.split(" #").next().unwrap_or_default().trim_end();
    let indicator = value.strip_prefix(['|', '>'])?;
    indicator.chars().all(|c| matches!(c, '-' | '+' | '0'..='9')).then_some(parent)
}

/// Whether the text of a line before a `{{` (blanks after it removed) leaves the braces at the start of a YAML
/// value: a `key:`, list item dashes, or both (`- key:`). Braces inside a value (`cmd: ls - {{x}}`) are that value's
/// text, which quoting would change.
fn opens_value(before: &str) -> bool {
    let mut rest = before.trim_start();
    while let Some(item) = rest.strip_prefix('-').filter(|r| r.is_empty() || r.starts_with([' ', '\t'])) {
        rest = item.trim_start();
    }
    match rest.strip_suffix(':') {
        Some(key) => {
            let plain = !key.is_empty() && !key.contains(char::is_whitespace) && !key.contains(['"', '\'', '#']);
            // A quoted key (`'bs':`, `"a b":`) is one piece, blanks and all.
            let quoted = |q: char| {
                key.len() >= 2 && key.starts_with(q) && key.ends_with(q) && !key[1..key.len() - 1].contains(q)
            };
            plain || quoted('"') || quoted('\'')
        }
        None => rest.is_empty(),
    }
}

/// Why a template could not be computed: what in the expression, in words for the job's author.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TemplateError(pub String);

/// A failed template of a matrix point: the key path of its value, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PointError {
    pub path: Vec<String>,
    /// The text that held the template, as the matrix point had it.
    pub text: String,
    pub error: TemplateError,
}

/// Computes every template of one matrix point, in file order, each seeing the values computed before it, as lkp's
/// `each_job` does. `Ok(None)` when a template gives `nil`: lkp makes no job of that point.
pub fn compute_point(mut point: Mapping) -> Result<Option<Mapping>, PointError> {
    let mut paths = Vec::new();
    template_paths(&point, &mut Vec::new(), &mut paths);
    for path in paths {
        let Some(Value::String(text)) = slot_mut(&mut point, &path).cloned() else {
            continue;
        };
        let computed = compute_value(&text, &point)
            .map_err(|error| PointError { path: path.clone(), text: text.clone(), error })?;
        let Some(computed) = computed else {
            return Ok(None);
        };
        if let Some(slot) = slot_mut(&mut point, &path) {
            *slot = computed;
        }
    }
    Ok(Some(point))
}

/// The key paths of the text values holding a template, depth first in file order (lists are not entered: the
/// lists of a point are those lkp does not expand, whose items it does not compute either). Culprit's own `command`
/// program is left out: its `cmd` is shell text, where braces are the shell's or another tool's (`docker inspect -f
/// '{{.State.Status}}'`, a Go template), and lkp, which has no such program, wrote no template there.
fn template_paths(mapping: &Mapping, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    for (key, value) in mapping {
        if path.is_empty() && key.as_str() == Some(COMMAND_PROGRAM) {
            continue;
        }
        path.push(key.as_str().unwrap_or_default().to_string());
        match value {
            Value::String(text) if holds_template(text) => out.push(path.clone()),
            Value::Mapping(inner) => template_paths(inner, path, out),
            _ => {}
        }
        path.pop();
    }
}

/// The key of Culprit's program that runs any shell command (see [`crate::table::PROGRAMS`]).
const COMMAND_PROGRAM: &str = "command";

/// Whether a text value holds a template: `{{` with `}}` after it.
pub fn holds_template(text: &str) -> bool {
    text.find("{{").is_some_and(|open| text[open + 2..].contains("}}"))
}

/// The value of one text holding a template, computed against `job`: the expression's value alone when nothing is
/// written around the braces, else the text with the braces replaced by the value's text (lkp's
/// `"#{head}#{expr}#{tail}"`, with the head's leading and the tail's trailing blanks dropped). `None` for `nil`.
///
/// A text of several templates (`{{ a }}x{{ b }}`) has them computed last first, as lkp's greedy match and its
/// rescan of the new text do, each into the text; a text whose templates keep making templates is refused after
/// [`MAX_TEMPLATES_IN_A_VALUE`] of them, where lkp would recurse until its stack overflowed.
pub fn compute_value(text: &str, job: &Mapping) -> Result<Option<Value>, TemplateError> {
    let mut current = text.to_string();
    for _ in 0..MAX_TEMPLATES_IN_A_VALUE {
        let Some(open) = current.rfind("{{") else {
            return Ok(Some(Value::String(current)));
        };
        let Some(close) = current.rfind("}}").filter(|&close| close >= open + 2) else {
            return Ok(Some(Value::String(current)));
        };
        let head = current[..open].trim_start();
        let tail = current[close + 2..].trim_end();
        let value = evaluate(&current[open + 2..close], job)?;
        if head.is_empty() && tail.is_empty() {
            return value.into_yaml();
        }
        match value {
            Ruby::Nil => return Ok(None),
            other => current = format!("{head}{}{tail}", other.to_text()?),
        }
    }
    Err(TemplateError(format!(
        "its text still holds a template after {MAX_TEMPLATES_IN_A_VALUE} were computed (does a param's value hold \
         the template that reads it?)"
    )))
}

/// The most templates computed in one value, those its templates' values bring included.
const MAX_TEMPLATES_IN_A_VALUE: usize = 16;

/// Evaluates one expression (the text between the braces) against `job`.
pub fn evaluate(expression: &str, job: &Mapping) -> Result<Ruby, TemplateError> {
    if expression.len() > MAX_TEMPLATE_BYTES {
        return Err(TemplateError(format!("the template is longer than {MAX_TEMPLATE_BYTES} characters")));
    }
    let (tokens, breaks) = tokenize_lines(expression, 0)?;
    if tokens.len() > MAX_TOKENS {
        return Err(TemplateError(format!("the template has more than {MAX_TOKENS} words and signs")));
    }
    let mut parser = Parser { tokens, breaks, at: 0, depth: 0 };
    let tree = parser.expression()?;
    if let Some(token) = parser.peek() {
        return Err(TemplateError(format!("unexpected {} after a complete expression", token.describe())));
    }
    eval(&tree, job)
}

/// A value of the expression language: the Ruby values templates use.
#[derive(Debug, Clone, PartialEq)]
pub enum Ruby {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Regex(String),
    Hash(Mapping),
    List(Vec<Value>),
}

impl Ruby {
    fn from_yaml(value: &Value) -> Ruby {
        match value {
            Value::Null => Ruby::Nil,
            Value::Bool(b) => Ruby::Bool(*b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Ruby::Int(i),
                None => Ruby::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => Ruby::Str(s.clone()),
            Value::Sequence(items) => Ruby::List(items.clone()),
            Value::Mapping(m) => Ruby::Hash(m.clone()),
            Value::Tagged(tagged) => Ruby::from_yaml(&tagged.value),
        }
    }

    fn into_yaml(self) -> Result<Option<Value>, TemplateError> {
        Ok(Some(match self {
            Ruby::Nil => return Ok(None),
            Ruby::Bool(b) => Value::Bool(b),
            Ruby::Int(i) => Value::Number(i.into()),
            Ruby::Float(f) => Value::Number(f.into()),
            Ruby::Str(s) => Value::String(s),
            Ruby::Hash(m) => Value::Mapping(m),
            Ruby::List(items) => Value::Sequence(items),
            Ruby::Regex(_) => {
                return Err(TemplateError("it gives a regular expression, which is no param value".into()))
            }
        }))
    }

    fn truthy(&self) -> bool {
        !matches!(self, Ruby::Nil | Ruby::Bool(false))
    }

    fn class(&self) -> &'static str {
        match self {
            Ruby::Nil => "nil",
            Ruby::Bool(true) => "true",
            Ruby::Bool(false) => "false",
            Ruby::Int(_) => "Integer",
            Ruby::Float(_) => "Float",
            Ruby::Str(_) => "String",
            Ruby::Regex(_) => "Regexp",
            Ruby::Hash(_) => "Hash",
            Ruby::List(_) => "Array",
        }
    }

    /// Ruby's `to_s`.
    fn to_text(&self) -> Result<String, TemplateError> {
        Ok(match self {
            Ruby::Nil => String::new(),
            Ruby::Bool(b) => b.to_string(),
            Ruby::Int(i) => i.to_string(),
            Ruby::Float(f) => float_text(*f),
            Ruby::Str(s) => s.clone(),
            Ruby::Regex(r) => format!("(?-mix:{r})"),
            other => return Err(TemplateError(format!("a {} has no text to put in a param", other.class()))),
        })
    }
}

/// Ruby's text of a float (`2.0`, `1.0e-05`, `Infinity`), so a computed value reads as Ruby wrote it: lkp's parsers'
/// own `Float#to_s`, which printed `1e16` as `10000000000000000` and infinity as `inf` when this kept its own.
fn float_text(f: f64) -> String {
    culprit_parse::rubyfmt::float(f)
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Int(i64),
    Float(f64),
    Str(Vec<StrPart>),
    Regex(String),
    Name(String),
    Op(&'static str),
}

#[derive(Debug, Clone, PartialEq)]
enum StrPart {
    Text(String),
    Code(Vec<Token>),
}

impl Token {
    fn describe(&self) -> String {
        match self {
            Token::Int(i) => format!("the number {i}"),
            Token::Float(f) => format!("the number {}", float_text(*f)),
            Token::Str(_) => "a string".to_string(),
            Token::Regex(r) => format!("the regex /{r}/"),
            Token::Name(n) => format!("'{n}'"),
            Token::Op(op) => format!("'{op}'"),
        }
    }
}

const KEYWORDS: &[&str] =
    &["if", "elsif", "else", "end", "unless", "case", "when", "then", "and", "or", "not", "nil", "true", "false"];

/// Operators, longest first so that `==` is not read as `=` and `=`.
const OPERATORS: &[&str] = &[
    "==", "!=", "=~", "!~", "<=", ">=", "&&", "||", "<", ">", "+", "-", "*", "/", "%", "!", "?", ":", "(", ")", ",",
    ".",
];

/// Bounds on a template's size. lkp's longest template has 40 words and signs; the bounds keep a runaway one (a
/// generated file, a paste gone wrong) from recursing the evaluator, or dropping its tree, off the stack.
const MAX_TEMPLATE_BYTES: usize = 10_000;
const MAX_TOKENS: usize = 1_000;
/// How deeply `#{}` inside strings may nest.
const MAX_INTERPOLATION_DEPTH: usize = 8;

fn tokenize(text: &str, interpolation_depth: usize) -> Result<Vec<Token>, TemplateError> {
    tokenize_lines(text, interpolation_depth).map(|(tokens, _)| tokens)
}

/// The tokens of `text`, and for each whether a line break comes before it: Ruby ends an expression at the end of
/// a line that completes one, so that an operator opening the next line (`when 'a'` and then `-1`) starts anew.
fn tokenize_lines(text: &str, interpolation_depth: usize) -> Result<(Vec<Token>, Vec<bool>), TemplateError> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut breaks = Vec::new();
    let mut line_break = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        while breaks.len() < tokens.len() {
            breaks.push(std::mem::take(&mut line_break));
        }
        // An operand just read on this line makes `/` a division; anywhere else it opens a regex.
        let after_operand = !line_break && matches!(
            tokens.last(),
            Some(Token::Int(_) | Token::Float(_) | Token::Str(_) | Token::Regex(_) | Token::Op(")"))
        ) || matches!(tokens.last(), Some(Token::Name(n))
            if !KEYWORDS.contains(&n.as_str()) || matches!(n.as_str(), "end" | "nil" | "true" | "false"));
        if c.is_whitespace() {
            line_break |= c == '\n';
            i += 1;
        } else if c == '#' {
            // A Ruby comment runs to the end of its line.
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '_') {
                i += 1;
            }
            let is_float = i + 1 < chars.len() && chars[i] == '.' && chars[i + 1].is_ascii_digit();
            if is_float {
                i += 1;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            let digits: String = chars[start..i].iter().filter(|c| **c != '_').collect();
            tokens.push(if is_float {
                Token::Float(digits.parse().map_err(|_| TemplateError(format!("cannot read the number {digits}")))?)
            } else {
                Token::Int(digits.parse().map_err(|_| TemplateError(format!("the number {digits} is too large")))?)
            });
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            // A method name may end in `?` or `!` (`empty?`), written right after a dot and its name.
            let after_dot = matches!(tokens.last(), Some(Token::Op(".")));
            if after_dot && i < chars.len() && (chars[i] == '?' || chars[i] == '!') {
                i += 1;
            }
            tokens.push(Token::Name(chars[start..i].iter().collect()));
        } else if c == '\'' {
            let (text, next) = single_quoted(&chars, i + 1)?;
            tokens.push(Token::Str(vec![StrPart::Text(text)]));
            i = next;
        } else if c == '"' {
            let (parts, next) = double_quoted(&chars, i + 1, interpolation_depth)?;
            tokens.push(Token::Str(parts));
            i = next;
        } else if c == '/' && !after_operand {
            let (pattern, next) = regex_literal(&chars, i + 1)?;
            tokens.push(Token::Regex(pattern));
            i = next;
        } else if let Some(op) = OPERATORS.iter().find(|op| chars[i..].starts_with(&op.chars().collect::<Vec<_>>())) {
            tokens.push(Token::Op(op));
            i += op.len();
        } else {
            let reason = format!("cannot read '{c}' (Culprit reads the part of Ruby lkp's templates use)");
            return Err(TemplateError(reason));
        }
    }
    while breaks.len() < tokens.len() {
        breaks.push(std::mem::take(&mut line_break));
    }
    Ok((tokens, breaks))
}

fn single_quoted(chars: &[char], mut i: usize) -> Result<(String, usize), TemplateError> {
    let mut text = String::new();
    while i < chars.len() {
        match chars[i] {
            '\'' => return Ok((text, i + 1)),
            '\\' if matches!(chars.get(i + 1), Some('\'' | '\\')) => {
                text.push(chars[i + 1]);
                i += 2;
            }
            other => {
                text.push(other);
                i += 1;
            }
        }
    }
    Err(TemplateError("a string opened with ' does not close".into()))
}

fn double_quoted(chars: &[char], mut i: usize, depth: usize) -> Result<(Vec<StrPart>, usize), TemplateError> {
    let mut parts = Vec::new();
    let mut text = String::new();
    while i < chars.len() {
        match chars[i] {
            '"' => {
                if !text.is_empty() || parts.is_empty() {
                    parts.push(StrPart::Text(text));
                }
                return Ok((parts, i + 1));
            }
            '\\' => {
                let escaped = chars.get(i + 1).copied().unwrap_or('\\');
                text.push(match escaped {
                    'n' => '\n',
                    't' => '\t',
                    other => other,
                });
                i += 2;
            }
            '#' if chars.get(i + 1) == Some(&'{') => {
                if depth >= MAX_INTERPOLATION_DEPTH {
                    return Err(TemplateError(format!("'#{{}}' nests deeper than {MAX_INTERPOLATION_DEPTH} levels")));
                }
                let mut open = 1;
                let mut j = i + 2;
                while j < chars.len() && open > 0 {
                    match chars[j] {
                        '{' => open += 1,
                        '}' => open -= 1,
                        _ => {}
                    }
                    j += 1;
                }
                if open > 0 {
                    return Err(TemplateError("a '#{' in a string does not close".into()));
                }
                let code: String = chars[i + 2..j - 1].iter().collect();
                if !text.is_empty() {
                    parts.push(StrPart::Text(std::mem::take(&mut text)));
                }
                parts.push(StrPart::Code(tokenize(&code, depth + 1)?));
                i = j;
            }
            other => {
                text.push(other);
                i += 1;
            }
        }
    }
    Err(TemplateError("a string opened with \" does not close".into()))
}

/// A `/regex/flags` literal, as a pattern for the regex crate (`i`, `m` and `x` become its inline flags; Ruby's `m`
/// is the regex crate's `s`).
fn regex_literal(chars: &[char], mut i: usize) -> Result<(String, usize), TemplateError> {
    let mut pattern = String::new();
    while i < chars.len() && chars[i] != '/' {
        if chars[i] == '\\' && chars.get(i + 1) == Some(&'/') {
            pattern.push('/');
            i += 2;
            continue;
        }
        if chars[i] == '\\' {
            if let Some(next) = chars.get(i + 1) {
                pattern.push('\\');
                pattern.push(*next);
                i += 2;
                continue;
            }
        }
        pattern.push(chars[i]);
        i += 1;
    }
    if i >= chars.len() {
        return Err(TemplateError("a regex opened with / does not close".into()));
    }
    i += 1;
    let mut flags = String::new();
    while i < chars.len() && chars[i].is_ascii_alphabetic() {
        match chars[i] {
            'i' => flags.push('i'),
            'm' => flags.push('s'),
            'x' => flags.push('x'),
            other => return Err(TemplateError(format!("the regex flag '{other}' is not read"))),
        }
        i += 1;
    }
    let pattern = if flags.is_empty() { pattern } else { format!("(?{flags}){pattern}") };
    Ok((pattern, i))
}

/// The expression tree. Branches are kept unevaluated so that a branch not taken may name params the job lacks, as
/// in Ruby.
#[derive(Debug, Clone, PartialEq)]
enum Expr {
    Literal(Ruby),
    Interpolated(Vec<Interpolation>),
    Param(String),
    Call { receiver: Box<Expr>, name: String, args: Vec<Expr> },
    Not(Box<Expr>),
    Negate(Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    If { condition: Box<Expr>, then: Box<Expr>, otherwise: Box<Expr> },
    Case { subject: Option<Box<Expr>>, arms: Vec<(Vec<Expr>, Expr)>, otherwise: Box<Expr> },
}

#[derive(Debug, Clone, PartialEq)]
enum Interpolation {
    Text(String),
    Code(Expr),
}

struct Parser {
    tokens: Vec<Token>,
    /// Per token, whether a line break comes before it (none are known inside a string's `#{}`).
    breaks: Vec<bool>,
    at: usize,
    /// How deeply the expression being read nests, bounded so that a template of ten thousand `(` is refused
    /// rather than overflowing the stack.
    depth: usize,
}

/// The deepest nesting of parentheses, branches and prefix operators a template may have; lkp's own nest three.
const MAX_DEPTH: usize = 64;

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        token
    }

    fn at_op(&self, op: &str) -> bool {
        matches!(self.peek(), Some(Token::Op(o)) if *o == op)
    }

    /// Whether the next token is the binary operator `op` continuing the expression: not when it opens a line, where
    /// Ruby has ended the expression at the line before.
    fn at_binary(&self, op: &str) -> bool {
        self.at_op(op) && !self.breaks.get(self.at).copied().unwrap_or(false)
    }

    fn eat_binary(&mut self, op: &str) -> bool {
        let found = self.at_binary(op);
        if found {
            self.at += 1;
        }
        found
    }

    fn at_word(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Token::Name(n)) if n == word)
    }

    fn eat_op(&mut self, op: &str) -> bool {
        let found = self.at_op(op);
        if found {
            self.at += 1;
        }
        found
    }

    fn eat_word(&mut self, word: &str) -> bool {
        let found = self.at_word(word);
        if found {
            self.at += 1;
        }
        found
    }

    fn expect_word(&mut self, word: &str, context: &str) -> Result<(), TemplateError> {
        if self.eat_word(word) {
            return Ok(());
        }
        Err(TemplateError(format!("expected '{word}' {context}, found {}", self.found())))
    }

    fn found(&self) -> String {
        self.peek().map_or_else(|| "the end of the template".to_string(), Token::describe)
    }

    fn expression(&mut self) -> Result<Expr, TemplateError> {
        self.nested(Parser::word_or)
    }

    fn nested(&mut self, read: fn(&mut Parser) -> Result<Expr, TemplateError>) -> Result<Expr, TemplateError> {
        if self.depth >= MAX_DEPTH {
            return Err(TemplateError(format!("the expression nests deeper than {MAX_DEPTH} levels")));
        }
        self.depth += 1;
        let read = read(self);
        self.depth -= 1;
        read
    }

    /// `not`, `and` and `or`: Ruby's low-precedence spellings. Unlike `&&` and `||`, `and` and `or` bind equally
    /// and from the left (`true or true and false` is `(true or true) and false`, false).
    fn word_or(&mut self) -> Result<Expr, TemplateError> {
        let (base, mut left) = (self.depth, self.word_not()?);
        loop {
            let or = self.eat_word("or");
            if !or && !self.eat_word("and") {
                break;
            }
            self.link()?;
            let right = Box::new(self.word_not()?);
            left = if or { Expr::Or(Box::new(left), right) } else { Expr::And(Box::new(left), right) };
        }
        self.depth = base;
        Ok(left)
    }

    /// One more link of a chain (`a + b + c`, `a || b || c`): the tree grows a level deeper on the left, so each
    /// link counts as nesting and the whole tree stays within [`MAX_DEPTH`], however it nests.
    fn link(&mut self) -> Result<(), TemplateError> {
        if self.depth >= MAX_DEPTH {
            return Err(TemplateError(format!("the expression nests deeper than {MAX_DEPTH} levels")));
        }
        self.depth += 1;
        Ok(())
    }

    fn word_not(&mut self) -> Result<Expr, TemplateError> {
        if self.eat_word("not") {
            return Ok(Expr::Not(Box::new(self.nested(Parser::word_not)?)));
        }
        self.ternary()
    }

    fn ternary(&mut self) -> Result<Expr, TemplateError> {
        let condition = self.or()?;
        if !self.eat_op("?") {
            return Ok(condition);
        }
        let then = self.nested(Parser::ternary)?;
        if !self.eat_op(":") {
            return Err(TemplateError(format!("expected ':' of 'condition ? a : b', found {}", self.found())));
        }
        let otherwise = self.nested(Parser::ternary)?;
        Ok(Expr::If { condition: Box::new(condition), then: Box::new(then), otherwise: Box::new(otherwise) })
    }

    fn or(&mut self) -> Result<Expr, TemplateError> {
        let (base, mut left) = (self.depth, self.and()?);
        while self.eat_binary("||") {
            self.link()?;
            left = Expr::Or(Box::new(left), Box::new(self.and()?));
        }
        self.depth = base;
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, TemplateError> {
        let (base, mut left) = (self.depth, self.equality()?);
        while self.eat_binary("&&") {
            self.link()?;
            left = Expr::And(Box::new(left), Box::new(self.equality()?));
        }
        self.depth = base;
        Ok(left)
    }

    fn equality(&mut self) -> Result<Expr, TemplateError> {
        let left = self.comparison()?;
        for op in ["==", "!=", "=~", "!~"] {
            if self.eat_binary(op) {
                return Ok(Expr::Binary(op_name(op), Box::new(left), Box::new(self.comparison()?)));
            }
        }
        Ok(left)
    }

    fn comparison(&mut self) -> Result<Expr, TemplateError> {
        let left = self.additive()?;
        for op in ["<=", ">=", "<", ">"] {
            if self.eat_binary(op) {
                return Ok(Expr::Binary(op_name(op), Box::new(left), Box::new(self.additive()?)));
            }
        }
        Ok(left)
    }

    fn additive(&mut self) -> Result<Expr, TemplateError> {
        let (base, mut left) = (self.depth, self.multiplicative()?);
        while let Some(op) = ["+", "-"].into_iter().find(|op| self.at_binary(op)) {
            self.at += 1;
            self.link()?;
            left = Expr::Binary(op_name(op), Box::new(left), Box::new(self.multiplicative()?));
        }
        self.depth = base;
        Ok(left)
    }

    fn multiplicative(&mut self) -> Result<Expr, TemplateError> {
        let (base, mut left) = (self.depth, self.unary()?);
        while let Some(op) = ["*", "/", "%"].into_iter().find(|op| self.at_binary(op)) {
            self.at += 1;
            self.link()?;
            left = Expr::Binary(op_name(op), Box::new(left), Box::new(self.unary()?));
        }
        self.depth = base;
        Ok(left)
    }

    fn unary(&mut self) -> Result<Expr, TemplateError> {
        if self.eat_op("!") {
            return Ok(Expr::Not(Box::new(self.nested(Parser::unary)?)));
        }
        if self.eat_op("-") {
            return Ok(Expr::Negate(Box::new(self.nested(Parser::unary)?)));
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Result<Expr, TemplateError> {
        let mut receiver = self.primary()?;
        while self.eat_op(".") {
            let Some(Token::Name(name)) = self.next() else {
                return Err(TemplateError("expected a name after '.'".into()));
            };
            let mut args = Vec::new();
            if self.eat_op("(") && !self.eat_op(")") {
                loop {
                    args.push(self.expression()?);
                    if self.eat_op(")") {
                        break;
                    }
                    if !self.eat_op(",") {
                        return Err(TemplateError(format!("expected ',' or ')', found {}", self.found())));
                    }
                }
            }
            receiver = Expr::Call { receiver: Box::new(receiver), name, args };
        }
        Ok(receiver)
    }

    fn primary(&mut self) -> Result<Expr, TemplateError> {
        let Some(token) = self.next() else {
            return Err(TemplateError("the template ends where a value was expected".into()));
        };
        Ok(match token {
            Token::Int(i) => Expr::Literal(Ruby::Int(i)),
            Token::Float(f) => Expr::Literal(Ruby::Float(f)),
            Token::Regex(r) => Expr::Literal(Ruby::Regex(r)),
            Token::Str(parts) => {
                let mut pieces = Vec::new();
                for part in parts {
                    pieces.push(match part {
                        StrPart::Text(text) => Interpolation::Text(text),
                        StrPart::Code(tokens) => {
                            let mut inner = Parser { tokens, breaks: Vec::new(), at: 0, depth: self.depth };
                            let expr = inner.expression()?;
                            if let Some(token) = inner.peek() {
                                return Err(TemplateError(format!("unexpected {} in '#{{}}'", token.describe())));
                            }
                            Interpolation::Code(expr)
                        }
                    });
                }
                match pieces.as_slice() {
                    [Interpolation::Text(text)] => Expr::Literal(Ruby::Str(text.clone())),
                    _ => Expr::Interpolated(pieces),
                }
            }
            Token::Op("(") => {
                let inner = self.expression()?;
                if !self.eat_op(")") {
                    return Err(TemplateError(format!("expected ')', found {}", self.found())));
                }
                inner
            }
            Token::Name(name) => match name.as_str() {
                "nil" => Expr::Literal(Ruby::Nil),
                "true" => Expr::Literal(Ruby::Bool(true)),
                "false" => Expr::Literal(Ruby::Bool(false)),
                "if" => self.if_rest(false)?,
                "unless" => self.if_rest(true)?,
                "case" => self.case_rest()?,
                word if KEYWORDS.contains(&word) => {
                    return Err(TemplateError(format!("unexpected '{word}' where a value was expected")))
                }
                _ => Expr::Param(name),
            },
            other => return Err(TemplateError(format!("unexpected {} where a value was expected", other.describe()))),
        })
    }

    /// After `if` (or `unless`): `condition [then] value (elsif condition [then] value)* [else value] end`.
    fn if_rest(&mut self, negated: bool) -> Result<Expr, TemplateError> {
        let condition = self.expression()?;
        self.eat_word("then");
        let then = self.expression()?;
        let otherwise = if !negated && self.eat_word("elsif") {
            // The `elsif` chain closes with the one `end` of its `if`.
            let otherwise = Box::new(self.nested(|parser| parser.if_rest(false))?);
            return Ok(Expr::If { condition: Box::new(condition), then: Box::new(then), otherwise });
        } else if self.eat_word("else") {
            self.expression()?
        } else {
            Expr::Literal(Ruby::Nil)
        };
        self.expect_word("end", "to close 'if'")?;
        let condition = if negated { Expr::Not(Box::new(condition)) } else { condition };
        Ok(Expr::If { condition: Box::new(condition), then: Box::new(then), otherwise: Box::new(otherwise) })
    }

    /// After `case`: `[subject] (when a, b [then] value)+ [else value] end`.
    fn case_rest(&mut self) -> Result<Expr, TemplateError> {
        let subject = if self.at_word("when") { None } else { Some(Box::new(self.expression()?)) };
        let mut arms = Vec::new();
        while self.eat_word("when") {
            let mut patterns = vec![self.expression()?];
            while self.eat_op(",") {
                patterns.push(self.expression()?);
            }
            self.eat_word("then");
            arms.push((patterns, self.expression()?));
        }
        if arms.is_empty() {
            return Err(TemplateError(format!("expected 'when' after 'case', found {}", self.found())));
        }
        let otherwise = if self.eat_word("else") { self.expression()? } else { Expr::Literal(Ruby::Nil) };
        self.expect_word("end", "to close 'case'")?;
        Ok(Expr::Case { subject, arms, otherwise: Box::new(otherwise) })
    }
}

/// The operator's text with a `'static` lifetime from the table (the parser matches against literals).
fn op_name(op: &str) -> &'static str {
    OPERATORS.iter().find(|known| **known == op).copied().unwrap_or("?")
}

fn eval(expr: &Expr, job: &Mapping) -> Result<Ruby, TemplateError> {
    Ok(match expr {
        Expr::Literal(value) => value.clone(),
        Expr::Interpolated(pieces) => {
            let mut text = String::new();
            for piece in pieces {
                match piece {
                    Interpolation::Text(t) => text.push_str(t),
                    Interpolation::Code(code) => text.push_str(&eval(code, job)?.to_text()?),
                }
            }
            Ruby::Str(text)
        }
        Expr::Param(name) => match job.get(name.as_str()) {
            Some(value) => Ruby::from_yaml(value),
            None => return Err(unknown_param(name, job)),
        },
        Expr::Call { receiver, name, args } => {
            let receiver_value = eval(receiver, job)?;
            let args = args.iter().map(|arg| eval(arg, job)).collect::<Result<Vec<_>, _>>()?;
            call(receiver_value, name, &args, &|| describe_path(receiver))?
        }
        Expr::Not(inner) => Ruby::Bool(!eval(inner, job)?.truthy()),
        Expr::Negate(inner) => match eval(inner, job)? {
            Ruby::Int(i) => Ruby::Int(i.checked_neg().ok_or_else(|| TemplateError("a number overflows".into()))?),
            Ruby::Float(f) => Ruby::Float(-f),
            other => return Err(TemplateError(format!("cannot negate {}", other.class()))),
        },
        Expr::And(left, right) => {
            let left = eval(left, job)?;
            if left.truthy() {
                eval(right, job)?
            } else {
                left
            }
        }
        Expr::Or(left, right) => {
            let left = eval(left, job)?;
            if left.truthy() {
                left
            } else {
                eval(right, job)?
            }
        }
        Expr::Binary(op, left, right) => binary(op, eval(left, job)?, eval(right, job)?)?,
        Expr::If { condition, then, otherwise } => {
            if eval(condition, job)?.truthy() {
                eval(then, job)?
            } else {
                eval(otherwise, job)?
            }
        }
        Expr::Case { subject, arms, otherwise } => {
            let subject = subject.as_ref().map(|s| eval(s, job)).transpose()?;
            for (patterns, value) in arms {
                for pattern in patterns {
                    let pattern = eval(pattern, job)?;
                    let hit = match &subject {
                        Some(subject) => case_matches(&pattern, subject)?,
                        None => pattern.truthy(),
                    };
                    if hit {
                        return eval(value, job);
                    }
                }
            }
            eval(otherwise, job)?
        }
    })
}

/// The dotted name of a param path (`fsmark.filesize`), for messages about it.
fn describe_path(expr: &Expr) -> String {
    match expr {
        Expr::Param(name) => name.clone(),
        Expr::Call { receiver, name, .. } => format!("{}.{name}", describe_path(receiver)),
        _ => "the value".to_string(),
    }
}

fn unknown_param(name: &str, job: &Mapping) -> TemplateError {
    let known: Vec<&str> = job.keys().filter_map(Value::as_str).filter(|k| is_name(k)).collect();
    TemplateError(format!(
        "the job has no param '{name}' (lkp raises KeyError there); the names it has: {}",
        if known.is_empty() { "none".to_string() } else { known.join(", ") }
    ))
}

/// Whether a key can be named in an expression (`fio-setup-basic` cannot: Ruby reads its `-` as a minus).
fn is_name(key: &str) -> bool {
    key.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// `when pattern` against the case's subject: Ruby's `===`, which for a regex is a match and otherwise `==`.
fn case_matches(pattern: &Ruby, subject: &Ruby) -> Result<bool, TemplateError> {
    match (pattern, subject) {
        (Ruby::Regex(pattern), Ruby::Str(text)) => Ok(compile(pattern)?.is_match(text)),
        (Ruby::Regex(_), _) => Ok(false),
        _ => Ok(equal(pattern, subject)),
    }
}

fn compile(pattern: &str) -> Result<Regex, TemplateError> {
    Regex::new(pattern).map_err(|e| TemplateError(format!("cannot read the regex /{pattern}/: {e}")))
}

/// Ruby's `==`: numbers by value across Integer and Float, everything else only within its own class.
fn equal(a: &Ruby, b: &Ruby) -> bool {
    match (a, b) {
        (Ruby::Int(x), Ruby::Float(y)) | (Ruby::Float(y), Ruby::Int(x)) => (*x as f64) == *y,
        _ => a == b,
    }
}

fn binary(op: &str, left: Ruby, right: Ruby) -> Result<Ruby, TemplateError> {
    let mismatch = |left: &Ruby, right: &Ruby| {
        TemplateError(format!("cannot apply '{op}' to {} and {}", left.class(), right.class()))
    };
    Ok(match op {
        "==" => Ruby::Bool(equal(&left, &right)),
        "!=" => Ruby::Bool(!equal(&left, &right)),
        "=~" | "!~" => {
            let matched = match (&left, &right) {
                (Ruby::Str(text), Ruby::Regex(pattern)) | (Ruby::Regex(pattern), Ruby::Str(text)) => {
                    compile(pattern)?.find(text).map(|m| text[..m.start()].chars().count())
                }
                // `nil =~ /x/` is nil in Ruby: a param left empty matches nothing.
                (Ruby::Nil, Ruby::Regex(_)) => None,
                _ => return Err(mismatch(&left, &right)),
            };
            match (op, matched) {
                ("=~", Some(at)) => Ruby::Int(at as i64),
                ("=~", None) => Ruby::Nil,
                (_, found) => Ruby::Bool(found.is_none()),
            }
        }
        "<" | "<=" | ">" | ">=" => {
            let ordering = match (&left, &right) {
                (Ruby::Str(a), Ruby::Str(b)) => Some(a.cmp(b)),
                _ => match (number(&left), number(&right)) {
                    (Some(a), Some(b)) => a.partial_cmp(&b),
                    _ => None,
                },
            };
            let Some(ordering) = ordering else {
                return Err(TemplateError(format!(
                    "comparison of {} with {} failed",
                    left.class(),
                    right.class()
                )));
            };
            Ruby::Bool(match op {
                "<" => ordering.is_lt(),
                "<=" => ordering.is_le(),
                ">" => ordering.is_gt(),
                _ => ordering.is_ge(),
            })
        }
        "+" | "-" | "*" | "/" | "%" => match (&left, &right) {
            (Ruby::Str(a), Ruby::Str(b)) if op == "+" => Ruby::Str(format!("{a}{b}")),
            (Ruby::Int(a), Ruby::Int(b)) => Ruby::Int(integer_arithmetic(op, *a, *b)?),
            _ => match (number(&left), number(&right)) {
                (Some(a), Some(b)) => Ruby::Float(match op {
                    "+" => a + b,
                    "-" => a - b,
                    "*" => a * b,
                    "/" => a / b,
                    _ => a - b * (a / b).floor(),
                }),
                _ => return Err(mismatch(&left, &right)),
            },
        },
        _ => return Err(TemplateError(format!("the operator '{op}' is not read"))),
    })
}

/// Integer arithmetic as Ruby does it: division and modulo round toward minus infinity.
fn integer_arithmetic(op: &str, a: i64, b: i64) -> Result<i64, TemplateError> {
    let overflow = || TemplateError(format!("{a} {op} {b} overflows"));
    if matches!(op, "/" | "%") && b == 0 {
        return Err(TemplateError("divided by 0".into()));
    }
    match op {
        "+" => a.checked_add(b).ok_or_else(overflow),
        "-" => a.checked_sub(b).ok_or_else(overflow),
        "*" => a.checked_mul(b).ok_or_else(overflow),
        "/" => {
            let (quotient, remainder) = (a.checked_div(b).ok_or_else(overflow)?, a % b);
            Ok(if remainder != 0 && (remainder < 0) != (b < 0) { quotient - 1 } else { quotient })
        }
        _ => {
            let remainder = a.checked_rem(b).ok_or_else(overflow)?;
            Ok(if remainder != 0 && (remainder < 0) != (b < 0) { remainder + b } else { remainder })
        }
    }
}

fn number(value: &Ruby) -> Option<f64> {
    match value {
        Ruby::Int(i) => Some(*i as f64),
        Ruby::Float(f) => Some(*f),
        _ => None,
    }
}

/// A method call, or a hash key read by name (`fsmark.filesize`): Hashugar's keys come before methods.
fn call(receiver: Ruby, name: &str, args: &[Ruby], path: &dyn Fn() -> String) -> Result<Ruby, TemplateError> {
    if let Ruby::Hash(hash) = &receiver {
        if args.is_empty() {
            if let Some(value) = hash.get(name) {
                return Ok(Ruby::from_yaml(value));
            }
        }
    }
    let arity = |n: usize| {
        if args.len() == n {
            Ok(())
        } else {
            Err(TemplateError(format!("'{name}' takes {n} argument(s), given {}", args.len())))
        }
    };
    let text_arg = || match args.first() {
        Some(Ruby::Str(s)) => Ok(s.clone()),
        other => Err(TemplateError(format!(
            "'{name}' takes a String, given {}",
            other.map_or("nothing", Ruby::class)
        ))),
    };
    Ok(match (name, &receiver) {
        ("nil?", _) => Ruby::Bool(matches!(receiver, Ruby::Nil)),
        ("to_s", _) => Ruby::Str(receiver.to_text()?),
        ("to_i", Ruby::Int(i)) => Ruby::Int(*i),
        ("to_i", Ruby::Float(f)) => Ruby::Int(f.trunc() as i64),
        ("to_i", Ruby::Str(s)) => Ruby::Int(leading_integer(s)),
        ("to_i", Ruby::Nil) => Ruby::Int(0),
        ("to_f", Ruby::Int(i)) => Ruby::Float(*i as f64),
        ("to_f", Ruby::Float(f)) => Ruby::Float(*f),
        ("to_f", Ruby::Str(s)) => Ruby::Float(leading_float(s)),
        ("size" | "length", Ruby::Str(s)) => Ruby::Int(s.chars().count() as i64),
        ("size" | "length", Ruby::List(items)) => Ruby::Int(items.len() as i64),
        ("size" | "length", Ruby::Hash(hash)) => Ruby::Int(hash.len() as i64),
        ("empty?", Ruby::Str(s)) => Ruby::Bool(s.is_empty()),
        ("empty?", Ruby::List(items)) => Ruby::Bool(items.is_empty()),
        ("empty?", Ruby::Hash(hash)) => Ruby::Bool(hash.is_empty()),
        ("upcase", Ruby::Str(s)) => Ruby::Str(s.to_uppercase()),
        ("downcase", Ruby::Str(s)) => Ruby::Str(s.to_lowercase()),
        ("include?", Ruby::Str(s)) => {
            arity(1)?;
            Ruby::Bool(s.contains(&text_arg()?))
        }
        ("include?", Ruby::List(items)) => {
            arity(1)?;
            let wanted = &args[0];
            Ruby::Bool(items.iter().any(|item| equal(&Ruby::from_yaml(item), wanted)))
        }
        ("start_with?", Ruby::Str(s)) => {
            arity(1)?;
            Ruby::Bool(s.starts_with(&text_arg()?))
        }
        ("end_with?", Ruby::Str(s)) => {
            arity(1)?;
            Ruby::Bool(s.ends_with(&text_arg()?))
        }
        (_, Ruby::Hash(_)) => {
            return Err(TemplateError(format!("'{}' has no key '{name}' (lkp raises KeyError there)", path())))
        }
        _ => {
            return Err(TemplateError(format!(
                "'{}' is {} {}, whose method '{name}' Culprit does not read",
                path(),
                if matches!(receiver, Ruby::Int(_)) { "an" } else { "a" },
                receiver.class()
            )))
        }
    })
}

/// Ruby's `String#to_i`: the whole number the text starts with (after blanks), else 0.
fn leading_integer(text: &str) -> i64 {
    let text = text.trim_start();
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, text.strip_prefix('+').unwrap_or(text)),
    };
    let digits: String = digits.chars().take_while(|c| c.is_ascii_digit() || *c == '_').filter(|c| *c != '_').collect();
    digits.parse::<i64>().map_or(0, |n| sign * n)
}

/// Ruby's `String#to_f`: the number the text starts with, else 0.0.
fn leading_float(text: &str) -> f64 {
    let text = text.trim_start();
    let end = text
        .char_indices()
        .take_while(|(i, c)| c.is_ascii_digit() || *c == '.' || (*i == 0 && (*c == '-' || *c == '+')))
        .map(|(i, c)| i + c.len_utf8())
        .last()
        .unwrap_or(0);
    (0..=end).rev().find_map(|cut| text[..cut].parse::<f64>().ok()).unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(yaml: &str) -> Mapping {
        serde_yaml::from_str(yaml).unwrap()
    }

    fn value(expression: &str, params: &str) -> Result<Ruby, TemplateError> {
        evaluate(expression, &job(params))
    }

    #[test]
    fn lkps_own_templates_compute_what_ruby_computes() {
        // The templates of lkp's jobs/ (fsmark.yaml, fsmark-1hdd-400m.yaml, fsmark-4hdd-raid.yaml, aim7-fs-1brd.yaml,
        // aim7-fs-raid.yaml, postmark.yaml), with the values Ruby gives for the points named.
        let fsmark =
            "case fsmark.filesize\n when '9B' then '256M'\n when '8K' then '1G'\n when '16MB' then '16G'\n end\n";
        let fsmark_400m = "case fs\n when 'ext4' then fs2 == 'nfsv4' ? '50M' : '100M'\n when 'xfs' then fs2 == \
                           'nfsv4' ? '50M' : '100M'\n else fs2 == 'nfsv4' ? '200M' : '400M'\n end";
        let aim7 = "if fs == 'btrfs'\n if aim7.test == 'disk_src' || aim7.test == 'disk_rr'\n 500\n elsif aim7.test \
                    == 'disk_rw'\n 100\n else\n 1500\n end\n else\n 3000\n end";
        let cases: &[(&str, &str, Ruby)] = &[
            (fsmark, "fsmark: {filesize: 9B}", Ruby::Str("256M".into())),
            (fsmark, "fsmark: {filesize: 8K}", Ruby::Str("1G".into())),
            // lkp's file says '16MB' for the filesize 16M: no `when` matches, the value is nil and lkp drops the job.
            (fsmark, "fsmark: {filesize: 16M}", Ruby::Nil),
            (fsmark_400m, "{fs: ext4, fs2: nfsv4}", Ruby::Str("50M".into())),
            (fsmark_400m, "{fs: xfs, fs2: null}", Ruby::Str("100M".into())),
            (fsmark_400m, "{fs: btrfs, fs2: null}", Ruby::Str("400M".into())),
            (fsmark_400m, "{fs: btrfs, fs2: nfsv4}", Ruby::Str("200M".into())),
            (" md == 'BRAID6' ? '24G': '130G' ", "md: BRAID6", Ruby::Str("24G".into())),
            (" md == 'BRAID6' ? '24G': '130G' ", "md: BRAID5", Ruby::Str("130G".into())),
            (aim7, "{fs: btrfs, aim7: {test: disk_rr}}", Ruby::Int(500)),
            (aim7, "{fs: btrfs, aim7: {test: disk_rw}}", Ruby::Int(100)),
            (aim7, "{fs: btrfs, aim7: {test: disk_cp}}", Ruby::Int(1500)),
            (aim7, "{fs: xfs, aim7: {test: disk_cp}}", Ruby::Int(3000)),
            ("case fs\n when 'btrfs' then 20\n when 'xfs'   then 300\n else 600\n end", "fs: xfs", Ruby::Int(300)),
            (" fs == 'f2fs' ? nil : 'disk_src' ", "fs: f2fs", Ruby::Nil),
            (" fs == 'f2fs' ? nil : 'disk_src' ", "fs: ext4", Ruby::Str("disk_src".into())),
            (" fs =~ /ext4|xfs/ ? '1000n' : '4000n' ", "fs: xfs", Ruby::Str("1000n".into())),
            (" fs =~ /ext4|xfs/ ? '1000n' : '4000n' ", "fs: btrfs", Ruby::Str("4000n".into())),
        ];
        for (expression, params, expected) in cases {
            assert_eq!(&value(expression, params).unwrap(), expected, "{expression:?} with {params}");
        }
    }

    #[test]
    fn operators_follow_ruby() {
        let cases: &[(&str, Ruby)] = &[
            ("7 / 2", Ruby::Int(3)),
            ("-7 / 2", Ruby::Int(-4)),
            ("-7 % 3", Ruby::Int(2)),
            ("7 % -3", Ruby::Int(-2)),
            ("7 / -3", Ruby::Int(-3)),
            ("6 / -3", Ruby::Int(-2)),
            ("1 + 2 * 3", Ruby::Int(7)),
            ("(1 + 2) * 3", Ruby::Int(9)),
            ("1 == 1.0", Ruby::Bool(true)),
            ("'1' == 1", Ruby::Bool(false)),
            ("nil || 'x'", Ruby::Str("x".into())),
            ("false && missing", Ruby::Bool(false)),
            ("not true or true", Ruby::Bool(true)),
            ("!nil", Ruby::Bool(true)),
            ("'ab' =~ /b/", Ruby::Int(1)),
            ("'ab' =~ /c/", Ruby::Nil),
            ("'ab' !~ /c/", Ruby::Bool(true)),
            ("'AB' =~ /b/i", Ruby::Int(1)),
            ("n * 2 > 10", Ruby::Bool(true)),
            ("\"#{n * 2}G\"", Ruby::Str("16G".into())),
            ("'16G'.to_i * 2", Ruby::Int(32)),
            ("size.to_f / 2", Ruby::Float(0.75)),
            ("'ext4'.start_with?('ext') ? 1 : 2", Ruby::Int(1)),
            ("tags.include?('x')", Ruby::Bool(true)),
            ("unless n > 10 then 'small' else 'large' end", Ruby::Str("small".into())),
            ("if n > 100 then 1 end", Ruby::Nil),
            ("case n when 1, 8 then 'one or eight' end", Ruby::Str("one or eight".into())),
            ("case when n > 5 then 'big' else 'small' end", Ruby::Str("big".into())),
            ("case fs when /^ext/ then 'extN' end", Ruby::Str("extN".into())),
            ("fio.bs.upcase", Ruby::Str("4K".into())),
            ("fio.empty?", Ruby::Bool(false)),
            ("# a comment\n 1", Ruby::Int(1)),
        ];
        let params = "{n: 8, size: 1.5, fs: ext4, tags: [x, y], fio: {bs: 4k}}";
        for (expression, expected) in cases {
            assert_eq!(&value(expression, params).unwrap(), expected, "{expression}");
        }
    }

    #[test]
    fn what_cannot_be_computed_says_why() {
        let cases: &[(&str, &str)] = &[
            ("fstype == 'xfs'", "no param 'fstype' (lkp raises KeyError there); the names it has: fs, fio"),
            ("fio.rw", "'fio' has no key 'rw'"),
            ("fs < 3", "comparison of String with Integer failed"),
            ("fs + 1", "cannot apply '+' to String and Integer"),
            ("1 / 0", "divided by 0"),
            ("if fs == 'x' then 1", "expected 'end' to close 'if', found the end of the template"),
            ("fs ==", "ends where a value was expected"),
            ("'open", "does not close"),
            ("fs.frobnicate", "'fs' is a String, whose method 'frobnicate' Culprit does not read"),
            ("fs =~ /(?<=e)x/", "cannot read the regex"),
            ("1 2", "unexpected the number 2 after a complete expression"),
            (&"(".repeat(500), "nests deeper than 64 levels"),
            (&"!".repeat(500), "nests deeper than 64 levels"),
            (&"1 ? ".repeat(200), "nests deeper than 64 levels"),
            (&"if 1 then 1 elsif ".repeat(100), "nests deeper than 64 levels"),
            (&format!("{}1{}", "\"#{".repeat(1_000), "}\"".repeat(1_000)), "'#{}' nests deeper than 8 levels"),
            (&"1+".repeat(4_000), "more than 1000 words and signs"),
            (&"1+".repeat(400), "nests deeper than 64 levels"),
            (&"(".repeat(100_000), "longer than 10000 characters"),
            ("fs @ 1", "cannot read '@'"),
        ];
        for (expression, said) in cases {
            let error = value(expression, "{fs: ext4, fio: {bs: 4k}}").unwrap_err();
            let shown: String = expression.chars().take(40).collect();
            assert!(error.0.contains(said), "{shown}: {}", error.0.chars().take(300).collect::<String>());
        }
    }

    #[test]
    fn the_longest_template_allowed_is_computed() {
        // The deepest trees the bounds let through, in a chain and in nesting; one level more is refused.
        let chain = |links: usize| format!("{}1", "1+".repeat(links));
        assert_eq!(value(&chain(63), "{}").unwrap(), Ruby::Int(64));
        assert!(value(&chain(64), "{}").unwrap_err().0.contains("nests deeper than 64 levels"));
        let nested = |levels: usize| format!("{}1{}", "(".repeat(levels), ")".repeat(levels));
        assert_eq!(value(&nested(63), "{}").unwrap(), Ruby::Int(1));
        assert!(value(&nested(64), "{}").unwrap_err().0.contains("nests deeper than 64 levels"));
    }

    #[test]
    fn a_branch_not_taken_may_name_what_the_job_lacks() {
        assert_eq!(value("fs == 'ext4' ? 1 : missing", "fs: ext4").unwrap(), Ruby::Int(1));
        assert!(value("fs == 'xfs' ? 1 : missing", "fs: ext4").is_err());
    }

    #[test]
    fn text_around_the_braces_is_kept_and_nil_drops_the_point() {
        let params = job("{n: 4, fs: xfs}");
        assert_eq!(compute_value("{{ n * 2 }}", &params).unwrap(), Some(Value::Number(8.into())));
        assert_eq!(compute_value(" x{{ n * 2 }}G ", &params).unwrap(), Some(Value::String("x8G".into())));
        assert_eq!(compute_value("{{ 1.0 * 2 }}", &params).unwrap(), Some(Value::Number(2.0.into())));
        assert_eq!(compute_value("{{ 2.0 }}s", &params).unwrap(), Some(Value::String("2.0s".into())));
        for (template, ruby) in [("{{ 1.0 * 10000000000000000 }}G", "1.0e+16G"), ("{{ 1.0 / 0 }}x", "Infinityx")] {
            assert_eq!(compute_value(template, &params).unwrap(), Some(Value::String(ruby.into())), "{template}");
        }
        assert_eq!(compute_value("{{ n / 100000.0 }}s", &params).unwrap(), Some(Value::String("4.0e-05s".into())));
        assert_eq!(compute_value("a{{ nil }}", &params).unwrap(), None);
        assert_eq!(compute_value("{{ n }}x{{ fs }}", &params).unwrap(), Some(Value::String("4xxfs".into())));
        let looping = job("{a: 'x{{ a }}'}");
        let error = compute_value("x{{ a }}", &looping).unwrap_err();
        assert!(error.0.contains("still holds a template after 16"), "{error}");
        let point =
            job("fs: xfs\nfsmark:\n  test_size: \"{{ fs == 'xfs' ? '1G' : nil }}\"\n  n: '{{ fsmark.test_size }}'\n");
        let computed = compute_point(point).unwrap().unwrap();
        assert_eq!(computed, job("fs: xfs\nfsmark:\n  test_size: 1G\n  n: 1G\n"), "the second sees the first's value");
        let dropped = job("fs: ext4\nfsmark:\n  test_size: \"{{ fs == 'xfs' ? '1G' : nil }}\"\n");
        assert_eq!(compute_point(dropped).unwrap(), None);
        let failed = compute_point(job("fsmark:\n  test_size: '{{ nope }}'\n")).unwrap_err();
        assert_eq!(failed.path, ["fsmark", "test_size"]);
        // A command job's shell text keeps its braces.
        let shell = job("command:\n  cmd: docker inspect -f '{{.State.Status}}' db\n");
        assert_eq!(compute_point(shell.clone()).unwrap(), Some(shell));
    }

    #[test]
    fn a_comment_in_a_template_of_several_lines_ends_at_its_line() {
        // QA 18: YAML folded the quoted template's line breaks into spaces, so a Ruby comment on its own line took
        // the rest of the template with it ("the template ends where a value was expected").
        let text = "n: 2\nsize: {{\n  # twice n, in G\n  \"#{n * 2}G\" # a comment after the value\n}}\nm: 1\n";
        let quoted = quote_unquoted(text);
        assert_eq!(quoted.lines().count(), text.lines().count(), "{quoted}");
        let read: Mapping = serde_yaml::from_str(&quoted).unwrap();
        let size = read.get("size").and_then(Value::as_str).unwrap().to_string();
        assert_eq!(compute_value(&size, &read).unwrap(), Some(Value::String("4G".into())), "{size:?}");
        assert_eq!(read.get("m"), Some(&Value::Number(1.into())));
        // Lines ended by CR LF are read the same.
        let read: Mapping = serde_yaml::from_str(&quote_unquoted(&text.replace('\n', "\r\n"))).unwrap();
        let size = read.get("size").and_then(Value::as_str).unwrap().to_string();
        assert_eq!(compute_value(&size, &read).unwrap(), Some(Value::String("4G".into())), "{size:?}");
    }

    #[test]
    fn a_block_scalars_text_is_not_quoted() {
        // QA 18: a `key: {{` line inside a block scalar (a here-document in a command's shell text) got quotes put
        // into that text.
        let text =
            "command:\n  cmd: |\n    cat <<EOF\n    image: {{ .Tag }}\n    - {{ .Item }}\n\n    EOF\n  n: {{ x }}\n";
        assert_eq!(
            quote_unquoted(text),
            "command:\n  cmd: |\n    cat <<EOF\n    image: {{ .Tag }}\n    - {{ .Item }}\n\n    EOF\n  n: \"{{ x }}\"\n"
        );
        for (block, parent) in [("- |\n", Some(0)), ("  - k: >-\n", Some(4)), ("a: |2 # c\n", Some(0))] {
            assert_eq!(block_scalar_parent(block), parent, "{block:?}");
        }
        for plain in ["a: b | c\n", "a: '|'\n", "# a: |\n", "cmd: echo a: |x\n"] {
            assert_eq!(block_scalar_parent(plain), None, "{plain:?}");
        }
        // The key after the block, at the block's key's own indentation, is quoted again.
        let listed = "- cmd: |\n    echo {{ y }}\n  n: {{ x }}\n";
        assert_eq!(quote_unquoted(listed), "- cmd: |\n    echo {{ y }}\n  n: \"{{ x }}\"\n");
    }

    #[test]
    fn an_operator_opening_a_line_starts_anew() {
        // QA 18: now that a template keeps its lines, a line that completes an expression ends it, as in Ruby:
        // `when 8` and then `-1` on the next line was read as `8 - 1`.
        let cases: &[(&str, Ruby)] = &[
            ("case n\nwhen 8\n  -1\nelse\n  1\nend", Ruby::Int(-1)),
            ("if n > 1\n  -1\nelse\n  1\nend", Ruby::Int(-1)),
            ("if n > 1\n  /x/ =~ 'ax'\nend", Ruby::Int(1)),
            ("n ==\n 8", Ruby::Bool(true)),
            ("n * 2 +\n 1", Ruby::Int(17)),
            ("fs\n  .upcase", Ruby::Str("EXT4".into())),
        ];
        for (expression, expected) in cases {
            assert_eq!(&value(expression, "{n: 8, fs: ext4}").unwrap(), expected, "{expression}");
        }
        let error = value("n\n== 8", "{n: 8}").unwrap_err();
        assert!(error.0.contains("unexpected '==' after a complete expression"), "{error}");
    }

    #[test]
    fn and_and_or_bind_equally_from_the_left() {
        // QA 18: `and` bound tighter than `or`, as `&&` does than `||`; in Ruby the words bind equally.
        let cases: &[(&str, Ruby)] = &[
            ("true or true and false", Ruby::Bool(false)),
            ("false and false or true", Ruby::Bool(true)),
            ("true || true && false", Ruby::Bool(true)),
            ("not false and false", Ruby::Bool(false)),
        ];
        for (expression, expected) in cases {
            assert_eq!(&value(expression, "{}").unwrap(), expected, "{expression}");
        }
    }

    /// Pieces of job texts around templates: keys, list dashes, block scalars, braces, a template's Ruby, comments,
    /// quotes, backslashes, line ends and document markers.
    const HOSTILE_JOB_TEXT: &str = "(fs: [a-z]{1,3}\n|fio:\n|  bs: |  cmd: [|>][-+]?\n|- |\\{\\{ |\\}\\}|\
                                    fs == 'a' \\? 1 : nil|#|\"|'|\\\\|\n|  |\r\n|---\n){0,40}";

    proptest::proptest! {
        /// A job text of templates, block scalars, quotes, comments and lists, however mangled, is read or refused,
        /// never a panic, and every line of the quoted text is where it was.
        #[test]
        fn hostile_job_texts_are_read_or_refused(text in HOSTILE_JOB_TEXT) {
            let quoted = quote_unquoted(&text);
            proptest::prop_assert_eq!(quoted.matches('\n').count(), text.matches('\n').count());
            if let Ok(file) = crate::JobFile::parse(&text, "p.yaml") {
                let _ = file.expand();
            }
        }

        /// Quoting never moves a line (messages name lines of the text as written) and leaves text without a
        /// template as it is.
        #[test]
        fn quoting_keeps_every_line(text in "[a-z: \\-\"'#{}\n]{0,80}") {
            let quoted = quote_unquoted(&text);
            proptest::prop_assert_eq!(quoted.matches('\n').count(), text.matches('\n').count());
            if !text.contains("{{") {
                proptest::prop_assert_eq!(quoted, text);
            }
        }
    }

    #[test]
    fn unquoted_templates_are_quoted_in_place() {
        let text = "a:\n  size: {{\n    case fs\n    when 'x' then \"1\"\n    end\n  }}\n  list:\n    - {{ fs }}G # c\n\
                    b: '{{ kept }}'\nc: \"x: {{ kept }}\"\n# d: {{ comment }}\ne: text{{ not a value }}\n";
        let quoted = quote_unquoted(text);
        assert_eq!(quoted.lines().count(), text.lines().count(), "{quoted}");
        let read: Mapping = serde_yaml::from_str(&quoted).unwrap();
        let a = read.get("a").unwrap();
        let size = a.get("size").and_then(Value::as_str).unwrap();
        assert_eq!(size, "{{\ncase fs\nwhen 'x' then \"1\"\nend\n}}", "the template keeps its lines");
        assert_eq!(a.get("list").unwrap()[0].as_str(), Some("{{ fs }}G"));
        assert_eq!(read.get("b").and_then(Value::as_str), Some("{{ kept }}"));
        assert_eq!(read.get("c").and_then(Value::as_str), Some("x: {{ kept }}"));
        assert_eq!(read.get("e").and_then(Value::as_str), Some("text{{ not a value }}"));
        assert!(quoted.contains("# d: {{ comment }}"));
        // Braces inside a value are its text; those of a value in a list of hashes open it.
        assert_eq!(quote_unquoted("cmd: ls - {{x}}\n"), "cmd: ls - {{x}}\n");
        assert_eq!(quote_unquoted("a: b: {{x}}\n"), "a: b: {{x}}\n");
        let in_lists = "- - k: {{ x }}\n- {{ y }}\n'b c': {{ z }}\n";
        assert_eq!(quote_unquoted(in_lists), "- - k: \"{{ x }}\"\n- \"{{ y }}\"\n'b c': \"{{ z }}\"\n");
        // A block scalar's lines are text, braces and all, and a template after it is quoted again.
        let block = "cmd: |\n  echo {{ x }}\n  - {{ y }}\n  a: {{ z }}\n\nnext: {{ w }}\n";
        assert_eq!(quote_unquoted(block), "cmd: |\n  echo {{ x }}\n  - {{ y }}\n  a: {{ z }}\n\nnext: \"{{ w }}\"\n");
        let folded = "- k: >-\n    x: {{ y }}\n- {{ z }}\n";
        assert_eq!(quote_unquoted(folded), "- k: >-\n    x: {{ y }}\n- \"{{ z }}\"\n");
        // A template that does not close is left for YAML to refuse.
        assert_eq!(quote_unquoted("a: {{ open\n"), "a: {{ open\n");
        // Quoting twice changes nothing: kept job texts are read again.
        assert_eq!(quote_unquoted(&quoted), quoted);
    }
}
