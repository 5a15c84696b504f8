//! Parser for fio's JSON output (`--output-format=json`), from a single file or an lkp result root.
//!
//! Format read: the JSON document fio writes, as lkp-tests runs it (`programs/fio/run`):
//!
//! ```text
//! echo "$task" | fio --output-format=json - > $RESULT_ROOT/fio.output          # one instance
//! echo "$task" | fio --output-format=json - > $RESULT_ROOT/fio.output.$id      # nr_instances > 1
//! ```
//!
//! Text before the first `{` (fio's `note:` lines) is skipped. Only the first job is read (lkp's jobs use
//! `group_reporting`, which folds all jobs into one); a report of several jobs gets a note saying so.
//!
//! Where the JSON comes from, as lkp decides it: given a result root ([`ParseInput::files`] non-empty), the file
//! `fio.output` wins; without it, every `fio.output.<N>` is one instance; the result root's `fio` file (the echoed
//! command line) is never parsed. Given no result root, [`ParseInput::main`] is the JSON.
//!
//! Metrics (lkp names, prefix `fio.`), printed with Ruby's number formatting (JSON integers stay integers):
//! - per direction `read` and `write`: `<op>_bw_MBps` (fio's KiB/s `bw` / 1024), `<op>_iops`,
//!   `<op>_clat_mean_ns`, `<op>_clat_stddev`, `<op>_clat_90%_ns`, `<op>_clat_95%_ns`, `<op>_clat_99%_ns`
//!   (those present in fio's percentile list), `<op>_slat_mean_us`, `<op>_slat_stddev`.
//!   Units: bandwidth in MiB/s; `clat_*` and `slat_*` (means, stddevs and percentiles) in nanoseconds, as fio 3
//!   reports them (`clat_ns`, `slat_ns`), whatever the key's suffix says: `<op>_slat_mean_us` is lkp's name for
//!   fio's `slat_ns.mean`, kept so results compare with lkp's, and holds nanoseconds (lkp's parser does the same).
//!   Only JSON from fio before 3.0, which has `clat` and `slat` in microseconds, gives microseconds under the
//!   same names; runs of the two fio generations do not compare.
//! - `latency_<N>us%` and `latency_<N>ms%` for each bucket of fio's `latency_us` / `latency_ms` maps;
//! - `workload`: total I/Os (read + write `total_ios`).
//! - With several instances: first the combined view under the same names (iops, bandwidth and workload summed,
//!   the rest averaged over instances), then every instance's metrics with a `.instance<N>` suffix.

use crate::dbench::ruby_num;
use crate::rubyfmt;
use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

pub struct Fio;

const PROGRAM: &str = "fio";

impl Parser for Fio {
    fn name(&self) -> &'static str {
        PROGRAM
    }
    fn kind(&self) -> Kind {
        Kind::Benchmark
    }
    fn read_output(&self, input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        let mut out = ParseOutput::default();
        if input.files.is_empty() {
            let stats = parse_document(input.main, "the input", &mut out)?.ok_or_else(|| no_json("the input"))?;
            print_stats(&mut out, &stats, "");
            return Ok(out);
        }
        if let Some(single) = input.files.get("fio.output") {
            let stats = parse_document(single, "fio.output", &mut out)?.ok_or_else(|| no_json("fio.output"))?;
            print_stats(&mut out, &stats, "");
            return Ok(out);
        }
        let mut instance_files: Vec<(i128, &String, &String)> = input
            .files
            .iter()
            .filter_map(|(name, text)| name.strip_prefix("fio.output.").map(|suffix| (instance_id(suffix), name, text)))
            .collect();
        if instance_files.is_empty() {
            return Err(ParseError::NoResults {
                program: PROGRAM,
                hint: format!(
                    "the result root has no `fio.output` or `fio.output.<N>` file (it has: {}); fio's JSON goes \
                     there from `fio --output-format=json - > $RESULT_ROOT/fio.output`",
                    input.files.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            });
        }
        instance_files.sort_by_key(|(id, _, _)| *id);
        let mut per_instance: Vec<(i128, Stats)> = Vec::new();
        for (id, name, text) in instance_files {
            // lkp skips an instance file holding no JSON at all (e.g. an instance that died before writing).
            if let Some(stats) = parse_document(text, name, &mut out)? {
                match per_instance.iter_mut().find(|(existing, _)| *existing == id) {
                    Some(slot) => slot.1 = stats,
                    None => per_instance.push((id, stats)),
                }
            }
        }
        if per_instance.is_empty() {
            return Err(no_json("every fio.output.<N> file"));
        }
        print_stats(&mut out, &combine(&per_instance), "");
        per_instance.sort_by_key(|(id, _)| *id);
        for (id, stats) in &per_instance {
            print_stats(&mut out, stats, &format!(".instance{id}"));
        }
        Ok(out)
    }
}

/// The instance number of `fio.output.<suffix>`: its trailing digits, or 0 as lkp's `nil.to_i` gives.
fn instance_id(suffix: &str) -> i128 {
    let digits: String =
        suffix.chars().rev().take_while(|c| c.is_ascii_digit()).collect::<Vec<_>>().into_iter().rev().collect();
    let starts_after_dot = suffix.len() == digits.len() || suffix[..suffix.len() - digits.len()].ends_with('.');
    if digits.is_empty() || !starts_after_dot {
        0
    } else {
        ruby_num::to_i(&digits)
    }
}

fn no_json(what: &str) -> ParseError {
    ParseError::NoResults {
        program: PROGRAM,
        hint: format!("{what} holds no JSON object; expected the output of `fio --output-format=json`"),
    }
}

/// A JSON value that keeps object keys in document order and integers apart from floats, as Ruby's JSON does.
#[derive(Debug, Clone, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Text(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct JsonVisitor;
        impl<'de> Visitor<'de> for JsonVisitor {
            type Value = Json;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Json, E> {
                Ok(Json::Bool(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Json, E> {
                Ok(Json::Int(v.into()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Json, E> {
                Ok(Json::Int(v.into()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Json, E> {
                Ok(Json::Float(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Json, E> {
                Ok(Json::Text(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Json, E> {
                Ok(Json::Text(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Json::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
                let mut entries: Vec<(String, Json)> = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Json>()? {
                    // Ruby's Hash: a repeated key keeps its first position and takes the last value.
                    match entries.iter_mut().find(|(k, _)| *k == key) {
                        Some(slot) => slot.1 = value,
                        None => entries.push((key, value)),
                    }
                }
                Ok(Json::Object(entries))
            }
        }
        deserializer.deserialize_any(JsonVisitor)
    }
}

/// A metric value as Ruby holds it, printed with Ruby's `to_s`.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Nil,
    Int(i128),
    Float(f64),
    Text(String),
}

impl Value {
    fn from_json(json: Option<&Json>) -> Value {
        match json {
            None | Some(Json::Null) => Value::Nil,
            Some(Json::Int(i)) => Value::Int(*i),
            Some(Json::Float(f)) => Value::Float(*f),
            Some(Json::Bool(b)) => Value::Text(b.to_string()),
            Some(Json::Text(s)) => Value::Text(s.clone()),
            // Ruby would print the array/hash inspect form; fio never puts one where a number belongs.
            Some(Json::Array(_)) | Some(Json::Object(_)) => Value::Text(String::new()),
        }
    }

    fn render(&self) -> String {
        match self {
            Value::Nil => String::new(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => rubyfmt::float(*f),
            Value::Text(s) => s.clone(),
        }
    }

    /// The value as a number for combining instances; `None` for nil, as Ruby's `filter_map` drops it.
    fn number(&self) -> Option<Value> {
        match self {
            Value::Nil => None,
            Value::Int(_) | Value::Float(_) => Some(self.clone()),
            Value::Text(s) => Some(Value::Float(ruby_num::to_f(s))),
        }
    }
}

/// Ordered `key -> value` stats of one fio document.
type Stats = Vec<(String, Value)>;

fn set(stats: &mut Stats, key: String, value: Value) {
    match stats.iter_mut().find(|(k, _)| *k == key) {
        Some(slot) => slot.1 = value,
        None => stats.push((key, value)),
    }
}

/// Parses one fio JSON document. `Ok(None)` when the text has no `{` at all (lkp logs and skips such a file). A
/// document of several jobs gets a note in `out`: only the first is read, as lkp reads it.
fn parse_document(text: &str, source: &str, out: &mut ParseOutput) -> Result<Option<Stats>, ParseError> {
    let Some(start) = text.find('{') else {
        return Ok(None);
    };
    let document: Json = serde_json::from_str(&text[start..]).map_err(|e| ParseError::Json {
        program: PROGRAM,
        detail: format!(
            "{source}: {e} (expected the complete output of `fio --output-format=json`; a cut-off \
                         document means fio was killed)"
        ),
    })?;
    let malformed = |what: &str| ParseError::Json { program: PROGRAM, detail: format!("{source}: {what}") };
    let job = match document.get("jobs") {
        Some(Json::Array(jobs)) => {
            // fio without group_reporting (or with several groups: new_group, stonewall) reports each job apart,
            // and the first job's iops then stood for the whole run's, a fraction of it, without a word.
            if jobs.len() > 1 {
                out.note(format!(
                    "{source}: fio reported {} jobs apart (run without --group_reporting, or in several groups); \
                     only the first is read, as lkp's parser reads it, so its numbers are that job's, not the run's: \
                     run fio with --group_reporting to have the jobs of a group counted together",
                    jobs.len()
                ));
            }
            jobs.first().ok_or_else(|| malformed("`jobs` is empty; fio ran no job"))?
        }
        _ => return Err(malformed("no `jobs` array; expected fio's JSON report")),
    };
    let mut stats = Stats::new();
    let mut workload: i128 = 0;
    for op in ["read", "write"] {
        let section = job
            .get(op)
            .filter(|s| matches!(s, Json::Object(_)))
            .ok_or_else(|| malformed(&format!("job 0 has no `{op}` object")))?;
        workload = workload.saturating_add(op_stats(&mut stats, op, section).map_err(|e| malformed(&e))?);
    }
    for (field, unit) in [("latency_us", "us"), ("latency_ms", "ms")] {
        match job.get(field) {
            None | Some(Json::Null) => {}
            Some(Json::Object(buckets)) => {
                for (bucket, share) in buckets {
                    set(&mut stats, format!("latency_{bucket}{unit}%"), Value::from_json(Some(share)));
                }
            }
            Some(_) => return Err(malformed(&format!("`{field}` is not an object of latency buckets"))),
        }
    }
    set(&mut stats, "workload".into(), Value::Int(workload));
    Ok(Some(stats))
}

/// One direction's stats; returns its `total_ios`.
fn op_stats(stats: &mut Stats, op: &str, section: &Json) -> Result<i128, String> {
    let bw = match section.get("bw") {
        Some(Json::Int(i)) => *i as f64,
        Some(Json::Float(f)) => *f,
        Some(Json::Text(s)) if ruby_num::number(s).is_some() => ruby_num::to_f(s),
        // lkp would read a missing or non-numeric bandwidth as 0, a plausible but invented measurement.
        other => {
            return Err(format!(
                "`{op}.bw` is {}, not a number; expected fio's bandwidth in KiB/s",
                match other {
                    None | Some(Json::Null) => "missing".to_string(),
                    Some(Json::Text(s)) => crate::excerpt(s),
                    Some(_) => "a JSON array, object or boolean".to_string(),
                }
            ))
        }
    };
    set(stats, format!("{op}_bw_MBps"), Value::Float(bw / 1024.0));
    set(stats, format!("{op}_iops"), Value::from_json(section.get("iops")));

    let clat = section
        .get("clat")
        .filter(|v| !matches!(v, Json::Null))
        .or_else(|| section.get("clat_ns"))
        .filter(|v| matches!(v, Json::Object(_)))
        .ok_or_else(|| format!("`{op}` has no `clat_ns` (or `clat`) object"))?;
    set(stats, format!("{op}_clat_mean_ns"), Value::from_json(clat.get("mean")));
    set(stats, format!("{op}_clat_stddev"), Value::from_json(clat.get("stddev")));
    if let Some(Json::Object(percentiles)) = clat.get("percentile") {
        for (percentile, value) in percentiles {
            let short = match percentile.as_str() {
                "90.000000" => "90",
                "95.000000" => "95",
                "99.000000" => "99",
                _ => continue,
            };
            set(stats, format!("{op}_clat_{short}%_ns"), Value::from_json(Some(value)));
        }
    }

    let slat = section
        .get("slat")
        .filter(|v| !matches!(v, Json::Null))
        .or_else(|| section.get("slat_ns"))
        .filter(|v| matches!(v, Json::Object(_)))
        .ok_or_else(|| format!("`{op}` has no `slat_ns` (or `slat`) object"))?;
    set(stats, format!("{op}_slat_mean_us"), Value::from_json(slat.get("mean")));
    set(stats, format!("{op}_slat_stddev"), Value::from_json(slat.get("stddev")));

    Ok(match section.get("total_ios") {
        Some(Json::Int(i)) => *i,
        Some(Json::Float(f)) if f.is_finite() => f.trunc() as i128,
        Some(Json::Text(s)) => ruby_num::to_i(s),
        _ => 0,
    })
}

/// lkp's combined view of several instances: the first instance's keys; iops, bandwidth and workload summed,
/// everything else averaged (as a float) over the instances that have the key.
fn combine(per_instance: &[(i128, Stats)]) -> Stats {
    let mut combined = Stats::new();
    let Some((_, first)) = per_instance.first() else {
        return combined;
    };
    for (key, _) in first {
        let values: Vec<Value> = per_instance
            .iter()
            .filter_map(|(_, stats)| stats.iter().find(|(k, _)| k == key).and_then(|(_, v)| v.number()))
            .collect();
        if values.is_empty() {
            continue;
        }
        let additive = key == "workload" || key.ends_with("_iops") || key.ends_with("_bw_MBps");
        let total = ruby_sum(&values);
        let value = if additive {
            total
        } else {
            let as_float = match total {
                Value::Int(i) => i as f64,
                Value::Float(f) => f,
                _ => 0.0,
            };
            Value::Float(as_float / values.len() as f64)
        };
        set(&mut combined, key.clone(), value);
    }
    combined
}

/// Ruby's `Array#sum` over integers and floats: exact while all are integers, then compensated float summation.
fn ruby_sum(values: &[Value]) -> Value {
    let mut integer_total: i128 = 0;
    let mut floats: Vec<f64> = Vec::new();
    for value in values {
        match value {
            Value::Int(i) if floats.is_empty() => integer_total = integer_total.saturating_add(*i),
            Value::Int(i) => floats.push(*i as f64),
            Value::Float(f) => {
                if floats.is_empty() {
                    floats.push(integer_total as f64);
                }
                floats.push(*f);
            }
            Value::Nil | Value::Text(_) => {}
        }
    }
    if floats.is_empty() {
        Value::Int(integer_total)
    } else {
        Value::Float(ruby_num::sum(&floats))
    }
}

fn print_stats(out: &mut ParseOutput, stats: &Stats, suffix: &str) {
    for (key, value) in stats {
        out.push(format!("{key}{suffix}"), value.render());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_ids_follow_lkp() {
        assert_eq!(instance_id("1"), 1);
        assert_eq!(instance_id("12"), 12);
        assert_eq!(instance_id("bak"), 0);
        assert_eq!(instance_id("x1"), 0);
    }

    #[test]
    fn ruby_sum_keeps_integers_exact() {
        assert_eq!(ruby_sum(&[Value::Int(2), Value::Int(3)]), Value::Int(5));
        assert_eq!(ruby_sum(&[Value::Int(2), Value::Float(0.5)]), Value::Float(2.5));
    }

    #[test]
    fn json_keeps_key_order_and_number_kinds() {
        let json: Result<Json, _> = serde_json::from_str(r#"{"b": 1, "a": 1.0, "b": 2}"#);
        assert_eq!(json.ok(), Some(Json::Object(vec![("b".into(), Json::Int(2)), ("a".into(), Json::Float(1.0))])));
    }
}
