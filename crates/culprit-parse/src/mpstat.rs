//! Parser for mpstat monitor output, the import format of lkp-tests' `programs/mpstat/parse`.
//!
//! Input: sysstat's JSON report, `LC_ALL=C S_TIME_FORMAT=ISO mpstat [-P CPUS | -N NODES] -o JSON 1` as lkp's mpstat
//! monitor runs it: `{"sysstat": {"hosts": [{"date": "2019-03-08", "statistics": [{"timestamp": "17:15:02",
//! "cpu-load": [{"cpu": "all", "usr": 10.66, ...}]}, ...]}]}}`. mpstat is stopped with SIGINT, so the document is
//! often cut short; it is repaired the way lkp repairs it (close the JSON after the last complete sample).
//!
//! Output: per sample a record starting with `time: <epoch>` (date and timestamp read as UTC), then
//! `cpu.<cpu>.<field>%` for `cpu-load` entries, `node.<node>.<field>%` for `node-load` entries and
//! `<section>.<name>.<field>` for other arrays (for example `cpu.all.usr%`, `cpu.all.idle%`). As in lkp each record
//! reprints every key seen so far. After the last record: `max_utilization_pct` (the busiest sample's
//! `100 - idle - iowait`, times the number of samples) and `max_utilization.seconds` (its 1-based position times the
//! number of samples), which lkp multiplies so that averaging over the samples gives the plain figure.
//! A report with no samples gives no output, as in lkp. mpstat's plain-text report is an error (lkp skips it).

use crate::iperf::json::{self, Json};
use crate::vm_scalability::ruby::Num;
use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};
use std::collections::HashMap;

const PROGRAM: &str = "mpstat";

/// What lkp appends to close a report cut after a sample (`statistics` array, host, `hosts` array, `sysstat`).
const CLOSING: &str = "\n\t\t\t]\n\t\t}\n\t]\n}}\n";

pub struct Mpstat;

impl Parser for Mpstat {
    fn name(&self) -> &'static str {
        PROGRAM
    }
    fn kind(&self) -> Kind {
        Kind::Monitor
    }
    fn read_output(&self, input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        parse_text(input.main)
    }
}

/// Whether the first line is the banner of mpstat's text report, `Linux 5.0.0-rc4 (host) \t2019-02-23 \t_x86_64_\t(48 CPU)`.
fn is_text_banner(first_line: &str) -> bool {
    first_line.starts_with("Linux") && first_line.contains(" CPU)") && first_line.contains("\t_")
}

/// Parses the report, repairing a cut-off end as lkp does: drop a trailing `,\n` or complete after `\t}`, and
/// failing that, cut after the last complete sample (`\n\t\t\t\t}`) and close the document.
fn parse_report(text: &str) -> Result<Json, ParseError> {
    let first_error = match json::parse(text) {
        Ok(doc) => return Ok(doc),
        Err(e) => e,
    };
    let fail = |detail: String| ParseError::Json { program: PROGRAM, detail };
    if text.len() < 2 {
        return Err(fail(format!("expected mpstat's `-o JSON` report: {first_error}")));
    }
    let amended = if let Some(head) = text.strip_suffix(",\n") {
        format!("{head}{CLOSING}")
    } else if text.ends_with("\t}") {
        format!("{text}{CLOSING}")
    } else {
        text.to_string()
    };
    if let Ok(doc) = json::parse(&amended) {
        return Ok(doc);
    }
    const LAST_SAMPLE_END: &str = "\n\t\t\t\t}";
    let Some(pos) = amended.rfind(LAST_SAMPLE_END) else {
        return Err(fail(format!("expected mpstat's `-o JSON` report, and found no complete sample: {first_error}")));
    };
    let repaired = format!("{}{CLOSING}", amended.get(..pos + LAST_SAMPLE_END.len()).unwrap_or(""));
    json::parse(&repaired).map_err(|_| {
        fail(format!("not valid JSON even after closing it after the last complete sample: {first_error}"))
    })
}

/// Ruby's `"#{value}"` for a JSON scalar; compound values are refused (lkp would print Ruby's inspect form).
fn ruby_to_s(value: &Json, context: &str) -> Result<String, ParseError> {
    Ok(match value {
        Json::Null => String::new(),
        Json::Bool(b) => b.to_string(),
        Json::Int(i) => i.to_string(),
        Json::Float(f) => crate::rubyfmt::float(*f),
        Json::Str(s) => s.clone(),
        Json::Array(_) | Json::Object(_) => {
            return Err(ParseError::Malformed {
                program: PROGRAM,
                line: 0,
                detail: format!("{context} holds a nested JSON value; expected a number or string"),
            })
        }
    })
}

fn as_num(value: &Json, what: &str) -> Result<Num, ParseError> {
    match value {
        Json::Int(i) => Ok(Num::Int(*i)),
        Json::Float(f) => Ok(Num::Float(*f)),
        _ => Err(ParseError::Malformed { program: PROGRAM, line: 0, detail: format!("{what} is not a number") }),
    }
}

/// The running result table: every key seen so far, in first-seen order, with its latest value. The index keeps
/// updates cheap: a many-CPU machine has thousands of keys, each set once per sample.
#[derive(Default)]
struct Results {
    pairs: Vec<(String, String)>,
    index: HashMap<String, usize>,
}

impl Results {
    fn set(&mut self, key: String, value: String) {
        match self.index.get(&key).and_then(|&i| self.pairs.get_mut(i)) {
            Some(slot) => slot.1 = value,
            None => {
                self.index.insert(key.clone(), self.pairs.len());
                self.pairs.push((key, value));
            }
        }
    }
}

#[derive(Default)]
struct Utilization {
    idle: Vec<Json>,
    iowait: Vec<Json>,
}

/// lkp's `get_array_result`: every entry of an array such as `cpu-load` is named by its first field.
fn array_result(prefix: &str, items: &[Json], results: &mut Results, util: &mut Utilization) -> Result<(), ParseError> {
    for item in items {
        let Json::Object(fields) = item else { continue };
        let Some((first_key, first_value)) = fields.first() else {
            continue;
        };
        let name = ruby_to_s(first_value, &format!("{prefix} entry `{first_key}`"))?;
        for (field, value) in fields {
            if field == first_key {
                continue;
            }
            let key = if prefix.contains("node-load") {
                format!("node.{name}.{field}%")
            } else if prefix.contains("cpu-load") {
                format!("cpu.{name}.{field}%")
            } else {
                format!("{prefix}.{name}.{field}")
            };
            match field.as_str() {
                "idle" => util.idle.push(value.clone()),
                "iowait" => util.iowait.push(value.clone()),
                _ => {}
            }
            results.set(key.clone(), ruby_to_s(value, &key)?);
        }
    }
    Ok(())
}

fn structure_error(detail: &str) -> ParseError {
    ParseError::Malformed { program: PROGRAM, line: 0, detail: format!("expected {detail}") }
}

fn parse_text(text: &str) -> Result<ParseOutput, ParseError> {
    let first_line = text.split_inclusive('\n').next().unwrap_or("");
    if is_text_banner(first_line) {
        return Err(ParseError::NoResults {
            program: PROGRAM,
            hint: "this is mpstat's text report; lkp reads the JSON one, `mpstat -o JSON 1`".into(),
        });
    }
    if text.trim().is_empty() {
        return Err(ParseError::NoResults {
            program: PROGRAM,
            hint: "the output is empty; expected `mpstat -o JSON 1`".into(),
        });
    }
    let doc = parse_report(text)?;
    let host = doc
        .get("sysstat")
        .and_then(|s| s.get("hosts"))
        .and_then(|h| match h {
            Json::Array(hosts) => hosts.first(),
            _ => None,
        })
        .ok_or_else(|| structure_error("{\"sysstat\": {\"hosts\": [{...}]}}"))?;
    let date = host.get("date");
    let Some(Json::Array(statistics)) = host.get("statistics") else {
        return Err(structure_error("a `statistics` array in sysstat.hosts[0]"));
    };

    let mut out = ParseOutput::default();
    let mut results = Results::default();
    let mut util = Utilization::default();
    for item in statistics {
        let Json::Object(fields) = item else {
            return Err(structure_error("every entry of `statistics` to be an object"));
        };
        for (key, value) in fields {
            match value {
                Json::Array(items) => array_result(key, items, &mut results, &mut util)?,
                Json::Object(inner) => {
                    for (inner_key, inner_value) in inner {
                        match inner_value {
                            Json::Array(items) => array_result(inner_key, items, &mut results, &mut util)?,
                            Json::Object(pairs) => {
                                for (k, v) in pairs {
                                    let name = format!("{inner_key}.{k}");
                                    let shown = ruby_to_s(v, &name)?;
                                    results.set(name, shown);
                                }
                            }
                            scalar => {
                                let name = format!("{key}.{inner_key}");
                                let shown = ruby_to_s(scalar, &name)?;
                                results.set(name, shown);
                            }
                        }
                    }
                }
                Json::Str(clock) if key == "timestamp" => {
                    let Some(Json::Str(date)) = date else {
                        return Err(structure_error("a `date` string (YYYY-MM-DD) in sysstat.hosts[0]"));
                    };
                    let epoch = crate::vm_scalability::ruby::utc_epoch(date, clock).ok_or_else(|| {
                        structure_error(&format!(
                            "an ISO date and time (S_TIME_FORMAT=ISO), found {} {}",
                            crate::excerpt(date),
                            crate::excerpt(clock)
                        ))
                    })?;
                    results.set("time".into(), epoch.to_string());
                }
                _ if key == "timestamp" => return Err(structure_error("`timestamp` to be a string")),
                _ => {}
            }
        }
        for (key, value) in &results.pairs {
            if !key.is_empty() {
                out.push(key.clone(), value.clone());
            }
        }
    }
    max_utilization(&util, &mut out)?;
    Ok(out)
}

/// lkp's `display_max_util`: the busiest sample over every `idle`/`iowait` pair, first one on ties.
fn max_utilization(util: &Utilization, out: &mut ParseOutput) -> Result<(), ParseError> {
    if util.idle.is_empty() {
        return Ok(());
    }
    let mut best: Option<(Num, usize)> = None;
    for (index, idle) in util.idle.iter().enumerate() {
        let iowait = util.iowait.get(index).ok_or_else(|| ParseError::Malformed {
            program: PROGRAM,
            line: 0,
            detail: format!("sample entry {} has `idle` but no `iowait`", index + 1),
        })?;
        let used =
            subtract(subtract(Num::Int(100), as_num(idle, "an `idle` value")?), as_num(iowait, "an `iowait` value")?);
        let better = match best {
            None => true,
            Some((top, _)) => used.compare(top) == Some(std::cmp::Ordering::Greater),
        };
        if better {
            best = Some((used, index));
        }
    }
    let Some((top, index)) = best else {
        return Ok(());
    };
    let count = util.idle.len();
    let scaled = match top {
        Num::Int(i) => Num::Int(i.saturating_mul(count as i128)),
        Num::Float(f) => Num::Float(f * count as f64),
    };
    out.push("max_utilization_pct", scaled.to_ruby_string());
    out.push("max_utilization.seconds", ((index + 1) * count).to_string());
    Ok(())
}

/// Ruby's `a - b` on numbers.
fn subtract(a: Num, b: Num) -> Num {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => Num::Int(x.saturating_sub(y)),
        (x, y) => Num::Float(x.to_f64() - y.to_f64()),
    }
}
