//! Parser for iperf3 JSON output, the import format of lkp-tests' `programs/iperf/parse`.
//!
//! Input: what `iperf3 -c <server> -J` prints: one JSON document per session, several sessions simply concatenated
//! (`}{` or `}\n{` between them), as lkp's iperf runner writes them. Each session's rate is read from
//! `end.sum.bits_per_second` (UDP) or else `end.sum_sent.bits_per_second` and `end.sum_received.bits_per_second`
//! (TCP). A session that is not valid JSON or has no rate is skipped, as lkp does, with a note that names it and
//! why (the rates are then the mean of fewer sessions than ran, which lkp does not say); when no session is left the
//! output is an error.
//!
//! Output: `tcp.sender.bps`, `tcp.receiver.bps` and `udp.bps`, each the mean over the sessions that report it
//! (integer division when iperf printed integers, as Ruby does), printed as Ruby prints numbers.
//!
//! The private `json` module is a small JSON reader that keeps what lkp's Ruby `JSON.parse` keeps and serde_json
//! does not guarantee: Integer versus Float, correctly rounded floats, and key order with Ruby's duplicate-key rule.

use crate::vm_scalability::ruby::{self, Num};
use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};
use json::Json;

const PROGRAM: &str = "iperf";

pub struct Iperf;

impl Parser for Iperf {
    fn name(&self) -> &'static str {
        PROGRAM
    }
    fn kind(&self) -> Kind {
        Kind::Benchmark
    }
    fn read_output(&self, input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        parse_text(input.main)
    }
}

/// Splits concatenated sessions the way lkp does: on `}` whitespace `{`, giving the braces back to the pieces.
fn sessions(raw: &str) -> Vec<String> {
    let mut chunks: Vec<&str> = Vec::new();
    let bytes = raw.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'}' {
            let mut j = i + 1;
            while j < bytes.len() && matches!(bytes[j], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
                j += 1;
            }
            if j < bytes.len() && bytes[j] == b'{' {
                chunks.push(raw.get(start..i).unwrap_or(""));
                start = j + 1;
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    chunks.push(raw.get(start..).unwrap_or(""));
    // Ruby's String#split drops trailing empty pieces.
    while chunks.last().is_some_and(|c| c.is_empty()) {
        chunks.pop();
    }
    if chunks.len() == 1 {
        return vec![raw.to_string()];
    }
    let last = chunks.len().saturating_sub(1);
    chunks
        .iter()
        .enumerate()
        .map(|(idx, chunk)| {
            if idx == 0 {
                format!("{chunk}}}")
            } else if idx == last {
                format!("{{{chunk}")
            } else {
                format!("{{{chunk}}}")
            }
        })
        .collect()
}

/// The number at `path` in a session, as Ruby's `Hash#dig` finds it. `Ok(None)` when a step is missing or null;
/// an error where Ruby's `dig` would raise (a step into a non-object) or where the value is not a number.
fn dig(doc: &Json, path: &[&str], session: usize) -> Result<Option<Num>, ParseError> {
    let mut node = doc;
    for (depth, key) in path.iter().enumerate() {
        let Json::Object(_) = node else {
            return Err(ParseError::Malformed {
                program: PROGRAM,
                line: 0,
                detail: format!("session {session}: `{}` is not a JSON object", path[..depth].join(".")),
            });
        };
        match node.get(key) {
            None | Some(Json::Null) => return Ok(None),
            Some(next) => node = next,
        }
    }
    match node {
        Json::Int(i) => Ok(Some(Num::Int(*i))),
        Json::Float(f) => Ok(Some(Num::Float(*f))),
        Json::Bool(false) => Ok(None),
        _ => Err(ParseError::Malformed {
            program: PROGRAM,
            line: 0,
            detail: format!("session {session}: `{}` is not a number", path.join(".")),
        }),
    }
}

/// Ruby's `values.sum / values.size`: Integer division (rounding down) when every value is an Integer.
fn mean(values: &[Num]) -> Num {
    let count = values.len().max(1);
    match ruby::sum(values) {
        Num::Int(total) => Num::Int(total.div_euclid(count as i128)),
        Num::Float(total) => Num::Float(total / count as f64),
    }
}

fn parse_text(text: &str) -> Result<ParseOutput, ParseError> {
    let raw = text.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\u{0b}' | '\u{0c}' | '\r' | '\0'));
    let mut sender = Vec::new();
    let mut receiver = Vec::new();
    let mut udp = Vec::new();
    let mut problems = Vec::new();
    let sessions = sessions(raw);
    for (idx, session) in sessions.iter().enumerate() {
        let number = idx + 1;
        let doc = match json::parse(session) {
            Ok(doc) => doc,
            Err(e) => {
                problems.push(format!("session {number} is not valid JSON ({e})"));
                continue;
            }
        };
        let bps_udp = dig(&doc, &["end", "sum", "bits_per_second"], number)?;
        let (bps_sender, bps_receiver) = if bps_udp.is_none() {
            (
                dig(&doc, &["end", "sum_sent", "bits_per_second"], number)?,
                dig(&doc, &["end", "sum_received", "bits_per_second"], number)?,
            )
        } else {
            (None, None)
        };
        if bps_udp.is_none() && bps_sender.is_none() && bps_receiver.is_none() {
            problems.push(format!("session {number} has no end.sum*.bits_per_second"));
            continue;
        }
        sender.extend(bps_sender);
        receiver.extend(bps_receiver);
        udp.extend(bps_udp);
    }
    if sender.is_empty() && receiver.is_empty() && udp.is_empty() {
        let detail = if problems.is_empty() { "the output is empty".to_string() } else { problems.join("; ") };
        return Err(ParseError::NoResults {
            program: PROGRAM,
            hint: format!("expected `iperf3 -J` JSON with end.sum_sent/sum_received (TCP) or end.sum (UDP): {detail}"),
        });
    }
    let mut out = ParseOutput::default();
    if !problems.is_empty() {
        out.note(format!(
            "{} of the {} iperf sessions left out: {}; the rates are the mean of the other sessions, as lkp reads \
             them",
            problems.len(),
            sessions.len(),
            problems.join("; ")
        ));
    }
    if !sender.is_empty() {
        out.push("tcp.sender.bps", mean(&sender).to_ruby_string());
    }
    if !receiver.is_empty() {
        out.push("tcp.receiver.bps", mean(&receiver).to_ruby_string());
    }
    if !udp.is_empty() {
        out.push("udp.bps", mean(&udp).to_ruby_string());
    }
    Ok(out)
}

/// A JSON reader with Ruby's `JSON.parse` semantics for the parts lkp's parsers observe.
pub(crate) mod json {
    use std::collections::HashMap;
    use std::fmt;

    /// Ruby's `JSON::NestingError` limit.
    const MAX_NESTING: usize = 100;

    #[derive(Debug, Clone, PartialEq)]
    pub(crate) enum Json {
        Null,
        Bool(bool),
        Int(i128),
        Float(f64),
        Str(String),
        Array(Vec<Json>),
        /// Keys in first-appearance order; a repeated key replaces the value in place, as a Ruby Hash does.
        Object(Vec<(String, Json)>),
    }

    impl Json {
        pub(crate) fn get(&self, key: &str) -> Option<&Json> {
            match self {
                Json::Object(pairs) => pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v),
                _ => None,
            }
        }
    }

    /// Where and why a document is not JSON.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub(crate) struct JsonError {
        pub line: usize,
        pub column: usize,
        pub reason: String,
    }

    impl fmt::Display for JsonError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "line {}, column {}: {}", self.line, self.column, self.reason)
        }
    }

    pub(crate) fn parse(text: &str) -> Result<Json, JsonError> {
        let mut reader = Reader { text, bytes: text.as_bytes(), pos: 0 };
        reader.skip_space();
        let value = reader.value(0)?;
        reader.skip_space();
        if reader.pos < reader.bytes.len() {
            return Err(reader.error("unexpected text after the JSON document"));
        }
        Ok(value)
    }

    struct Reader<'a> {
        text: &'a str,
        bytes: &'a [u8],
        pos: usize,
    }

    impl Reader<'_> {
        fn error(&self, reason: &str) -> JsonError {
            let before = self.text.get(..self.pos).unwrap_or(self.text);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map(|l| l.chars().count()).unwrap_or(0) + 1;
            JsonError { line, column, reason: reason.to_string() }
        }

        fn peek(&self) -> Option<u8> {
            self.bytes.get(self.pos).copied()
        }

        fn skip_space(&mut self) {
            while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
                self.pos += 1;
            }
        }

        fn expect_literal(&mut self, literal: &str, value: Json) -> Result<Json, JsonError> {
            if self.bytes.get(self.pos..self.pos + literal.len()) == Some(literal.as_bytes()) {
                self.pos += literal.len();
                Ok(value)
            } else {
                Err(self.error("unexpected token"))
            }
        }

        fn value(&mut self, depth: usize) -> Result<Json, JsonError> {
            match self.peek() {
                None => Err(self.error("unexpected end of input")),
                Some(b'{') => self.object(depth + 1),
                Some(b'[') => self.array(depth + 1),
                Some(b'"') => Ok(Json::Str(self.string()?)),
                Some(b't') => self.expect_literal("true", Json::Bool(true)),
                Some(b'f') => self.expect_literal("false", Json::Bool(false)),
                Some(b'n') => self.expect_literal("null", Json::Null),
                Some(b'-' | b'0'..=b'9') => self.number(),
                Some(_) => Err(self.error("unexpected token")),
            }
        }

        fn object(&mut self, depth: usize) -> Result<Json, JsonError> {
            if depth > MAX_NESTING {
                return Err(self.error("nesting deeper than 100"));
            }
            self.pos += 1;
            let mut pairs: Vec<(String, Json)> = Vec::new();
            let mut index: HashMap<String, usize> = HashMap::new();
            self.skip_space();
            if self.peek() == Some(b'}') {
                self.pos += 1;
                return Ok(Json::Object(pairs));
            }
            loop {
                self.skip_space();
                if self.peek() != Some(b'"') {
                    return Err(self.error("expected a string key"));
                }
                let key = self.string()?;
                self.skip_space();
                if self.peek() != Some(b':') {
                    return Err(self.error("expected `:` after a key"));
                }
                self.pos += 1;
                self.skip_space();
                let value = self.value(depth)?;
                match index.get(&key) {
                    Some(&i) => {
                        if let Some(slot) = pairs.get_mut(i) {
                            slot.1 = value;
                        }
                    }
                    None => {
                        index.insert(key.clone(), pairs.len());
                        pairs.push((key, value));
                    }
                }
                self.skip_space();
                match self.peek() {
                    Some(b',') => self.pos += 1,
                    Some(b'}') => {
                        self.pos += 1;
                        return Ok(Json::Object(pairs));
                    }
                    None => return Err(self.error("unexpected end of input inside an object")),
                    Some(_) => return Err(self.error("expected `,` or `}` in an object")),
                }
            }
        }

        fn array(&mut self, depth: usize) -> Result<Json, JsonError> {
            if depth > MAX_NESTING {
                return Err(self.error("nesting deeper than 100"));
            }
            self.pos += 1;
            let mut items = Vec::new();
            self.skip_space();
            if self.peek() == Some(b']') {
                self.pos += 1;
                return Ok(Json::Array(items));
            }
            loop {
                self.skip_space();
                items.push(self.value(depth)?);
                self.skip_space();
                match self.peek() {
                    Some(b',') => self.pos += 1,
                    Some(b']') => {
                        self.pos += 1;
                        return Ok(Json::Array(items));
                    }
                    None => return Err(self.error("unexpected end of input inside an array")),
                    Some(_) => return Err(self.error("expected `,` or `]` in an array")),
                }
            }
        }

        fn hex4(&mut self) -> Result<u32, JsonError> {
            let digits = self.text.get(self.pos..self.pos + 4).ok_or_else(|| self.error("short \\u escape"))?;
            let value = u32::from_str_radix(digits, 16).map_err(|_| self.error("bad \\u escape"))?;
            self.pos += 4;
            Ok(value)
        }

        fn string(&mut self) -> Result<String, JsonError> {
            self.pos += 1;
            let mut out = String::new();
            loop {
                let rest = self.text.get(self.pos..).unwrap_or("");
                let Some(c) = rest.chars().next() else {
                    return Err(self.error("unterminated string"));
                };
                self.pos += c.len_utf8();
                match c {
                    '"' => return Ok(out),
                    '\\' => {
                        let Some(escape) = self.peek() else {
                            return Err(self.error("unterminated string"));
                        };
                        self.pos += 1;
                        match escape {
                            b'"' => out.push('"'),
                            b'\\' => out.push('\\'),
                            b'/' => out.push('/'),
                            b'b' => out.push('\u{08}'),
                            b'f' => out.push('\u{0c}'),
                            b'n' => out.push('\n'),
                            b'r' => out.push('\r'),
                            b't' => out.push('\t'),
                            b'u' => {
                                let first = self.hex4()?;
                                let code = if (0xD800..0xDC00).contains(&first)
                                    && self.bytes.get(self.pos..self.pos + 2) == Some(b"\\u")
                                {
                                    self.pos += 2;
                                    let second = self.hex4()?;
                                    0x10000 + ((first - 0xD800) << 10) + second.wrapping_sub(0xDC00)
                                } else {
                                    first
                                };
                                out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                            }
                            _ => return Err(self.error("bad escape in string")),
                        }
                    }
                    c if (c as u32) < 0x20 => return Err(self.error("control character in string")),
                    c => out.push(c),
                }
            }
        }

        fn number(&mut self) -> Result<Json, JsonError> {
            let start = self.pos;
            if self.peek() == Some(b'-') {
                self.pos += 1;
            }
            let int_start = self.pos;
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.pos += 1;
            }
            let int_digits = self.pos - int_start;
            if int_digits == 0 {
                return Err(self.error("expected digits"));
            }
            if int_digits > 1 && self.bytes.get(int_start) == Some(&b'0') {
                return Err(self.error("leading zero in a number"));
            }
            let mut is_float = false;
            if self.peek() == Some(b'.') {
                self.pos += 1;
                let frac_start = self.pos;
                while matches!(self.peek(), Some(b'0'..=b'9')) {
                    self.pos += 1;
                }
                if self.pos == frac_start {
                    return Err(self.error("expected digits after `.`"));
                }
                is_float = true;
            }
            if matches!(self.peek(), Some(b'e' | b'E')) {
                self.pos += 1;
                if matches!(self.peek(), Some(b'+' | b'-')) {
                    self.pos += 1;
                }
                let exp_start = self.pos;
                while matches!(self.peek(), Some(b'0'..=b'9')) {
                    self.pos += 1;
                }
                if self.pos == exp_start {
                    return Err(self.error("expected exponent digits"));
                }
                is_float = true;
            }
            let literal = self.text.get(start..self.pos).unwrap_or("");
            if is_float {
                literal.parse::<f64>().map(Json::Float).map_err(|_| self.error("bad number"))
            } else {
                literal.parse::<i128>().map(Json::Int).map_err(|_| self.error("integer too large"))
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn keeps_integer_float_order_and_duplicate_rule() {
            let doc = parse(r#"{"b": 1, "a": 2.50, "b": 3, "s": "x\u00e9\n"}"#).unwrap();
            assert_eq!(
                doc,
                Json::Object(vec![
                    ("b".into(), Json::Int(3)),
                    ("a".into(), Json::Float(2.5)),
                    ("s".into(), Json::Str("x\u{e9}\n".into())),
                ])
            );
            assert_eq!(parse("23548652092.780964").unwrap(), Json::Float(23548652092.780964));
        }

        #[test]
        fn rejects_what_ruby_rejects() {
            for bad in ["", "{", "[1,]", "01", "{\"a\" 1}", "tru", "1.", "\"a", "{} x", "NaN"] {
                assert!(parse(bad).is_err(), "{bad:?}");
            }
            let deep = "[".repeat(101) + &"]".repeat(101);
            assert!(parse(&deep).is_err());
            let ok = "[".repeat(100) + &"]".repeat(100);
            assert!(parse(&ok).is_ok());
        }
    }
}
