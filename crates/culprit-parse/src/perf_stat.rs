//! Parser for `perf stat -a -I <ms> -x ,` interval output, printing what lkp-tests' perf-stat parser prints.
//!
//! # Input
//! The log lkp's perf-stat monitor writes: optionally `perf version ...`, the echoed command line
//! (`perf stat -a --scale -I 1000 -x , -e <events> --log-fd 1 ...`), then one line per event and interval:
//! `<time>,<value>,<unit>,<event>,<run time>,<percent>,<metric value>,<metric unit>` (CSV, as `-x ,` prints) or the
//! same fields separated by blanks (old logs). Hybrid CPUs name events `cpu_core/cpu-cycles/`; the part between the
//! last two slashes is kept. Per-socket logs (`--per-socket`) carry `S0,<cpus>,` after the time.
//!
//! The echoed command line lists the events lkp asked for, and lkp stops at the first sample line that names none
//! of them. A bare CSV from `perf stat` with no command line before it (what a user gets by running perf by hand)
//! is accepted too: every event in it is then taken. This is Culprit's only departure from lkp here, with one
//! more: a raw PMU event with a `name=` term is known by that name (lkp's split of the list at commas keeps
//! `name=X/`, so it stops at the first such sample).
//!
//! # Output
//! Per complete interval (a new interval starts when the time moves by more than 10 ms; the last interval is
//! dropped because perf was stopped before it ran out, unless it is the only one; see below):
//! - `time: <end of the interval, seconds since perf started>`
//! - `i.<event>: <count / interval length>`: a per-second rate within the interval (for `cpu-clock` and
//!   `task-clock`, whose unit is msec, that is CPU milliseconds per second);
//! - derived ratios with the `i.` prefix (`ipc`, `cpi`, `<x>-miss-rate%`, `MPKI`, ...) when their inputs exist;
//! - `i.metric.<unit>: <sum of perf's own metric column>` for the metric units that start with a capital
//!   (`GHz`, `M/sec`, `K/sec`).
//!
//! Then once for the run: `ps.<event>: <total count of the kept intervals / run time>` (run time = the time of the
//! last sample), `total.instructions` when counted, and the same derived ratios over the run with `overall.`.
//!
//! A log whose only interval is the last one (a run shorter than perf's interval: perf prints the counts of the
//! partial interval when it is stopped, with the time it ran) is read as one interval of that length, rather than
//! as nothing, which is what lkp prints for it. Its rates are exact, since perf's time column is the interval's
//! true end; they are only noisier than those of a full interval.
//!
//! Event counters (perf prints deltas per interval) are thus reduced to per-second rates, as lkp does, so runs of
//! different lengths compare; a per-run metric is `perf-stat.ps.<event>` (and `perf-stat.i.<event>`, the mean of
//! the per-interval rates, through [`run_metrics`]).
//!
//! # Per-run metrics
//! [`run_metrics`] reduces the output as lkp's `dump-stat` and `create_stats_matrix` reduce it: `ps.*`, `total.*`
//! and `overall.*` keep their value, and every per-interval key is summed over the intervals that print it and
//! divided by the number of intervals. An interval that lacks a derived ratio (its inputs counted zero, or its event
//! group was not scheduled and perf printed `<not counted>`) thus counts as zero, because lkp pads such gaps with
//! zeros; the mean over only the intervals that have the ratio would be another number than lkp's for the same log.
//! The ratio of the run is `overall.*`, from the run's totals, which no zero enters.

use crate::rubyfmt::float;
use crate::{Kind, Line, ParseError, ParseInput, ParseOutput, Parser};
use regex::Regex;
use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

const PROGRAM: &str = "perf-stat";

pub struct PerfStat;

impl Parser for PerfStat {
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

/// Sums in first-seen order, because lkp (a Ruby hash) prints keys in the order they first appeared.
#[derive(Default)]
struct OrderedSums {
    keys: Vec<String>,
    index: HashMap<String, usize>,
    sums: Vec<f64>,
    counts: Vec<u64>,
}

impl OrderedSums {
    fn add(&mut self, key: &str, value: f64, count: u64) {
        let at = match self.index.get(key) {
            Some(&at) => at,
            None => {
                self.keys.push(key.to_string());
                self.sums.push(0.0);
                self.counts.push(0);
                self.index.insert(key.to_string(), self.keys.len() - 1);
                self.keys.len() - 1
            }
        };
        if let (Some(sum), Some(n)) = (self.sums.get_mut(at), self.counts.get_mut(at)) {
            *sum += value;
            *n += count;
        }
    }

    /// The sum for a key, or 0 for a key never seen (Ruby's `Hash.new(0)`).
    fn sum(&self, key: &str) -> f64 {
        self.index.get(key).and_then(|&at| self.sums.get(at)).copied().unwrap_or(0.0)
    }

    fn count(&self, key: &str) -> u64 {
        self.index.get(key).and_then(|&at| self.counts.get(at)).copied().unwrap_or(0)
    }

    fn contains(&self, key: &str) -> bool {
        self.index.contains_key(key)
    }

    fn iter(&self) -> impl Iterator<Item = (&str, f64)> {
        self.keys.iter().map(String::as_str).zip(self.sums.iter().copied())
    }

    fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    fn clear(&mut self) {
        *self = OrderedSums::default();
    }
}

/// The patterns lkp matches derived-metric keys with. Greedy `(.*)` picks the last occurrence, which the
/// regex crate's leftmost-first semantics reproduce.
struct Patterns {
    misses: Regex,
    itlb_misses: Regex,
    cache_misses: Regex,
    uncore_inserts: Regex,
    cpu_cycles: Regex,
    command_line: Regex,
}

fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        // These literals are fixed and valid; a failure here is a programming error caught by every test.
        let compile = |re: &str| Regex::new(re).unwrap_or_else(|e| panic!("perf-stat pattern {re}: {e}"));
        Patterns {
            misses: compile(r"(.*)-misses"),
            itlb_misses: compile(r"(.*)iTLB-load-misses"),
            cache_misses: compile(r"(.*)cache-misses"),
            uncore_inserts: compile(r"(.*)UNC_M_(.*)_INSERTS"),
            cpu_cycles: compile(r"(.*)cpu-cycles"),
            command_line: compile(r"perf stat .+ -e ([^ ]+) "),
        }
    })
}

struct State {
    out: ParseOutput,
    results: OrderedSums,
    interval_results: OrderedSums,
    /// Metric sums of the current interval (`metric.GHz`), in first-seen order.
    interval_metrics: OrderedSums,
    interval_count: u64,
    stats_begin: f64,
    stats_end: f64,
    /// The last printed latency per key, as text: lkp reprints it when an interval had no inserts, and prints the
    /// integer `0` when there was none yet.
    latency_prev: HashMap<String, String>,
}

/// Parses a perf-stat log into lkp's `key: value` lines.
pub fn parse_text(text: &str) -> Result<ParseOutput, ParseError> {
    let mut state = State {
        out: ParseOutput::default(),
        results: OrderedSums::default(),
        interval_results: OrderedSums::default(),
        interval_metrics: OrderedSums::default(),
        interval_count: 0,
        // lkp reads the stats window from the environment (`stats_part_begin/end`); unset means the whole run.
        stats_begin: 0.0,
        stats_end: 0.0,
        latency_prev: HashMap::new(),
    };
    let mut events: Option<Vec<String>> = None;
    let mut prev_prev_time = 0.0;
    let mut prev_time = 0.0;
    let mut time = 0.0;
    let mut metric_val = 0.0;
    let mut samples = 0usize;
    let mut stopped_at_unknown_event = None;

    for (number, line) in text.split_inclusive('\n').enumerate() {
        let line_number = number + 1;
        if let Some(caps) = patterns().command_line.captures(line) {
            let list = caps.get(1).map_or("", |m| m.as_str());
            let mut listed: Vec<String> = list.replace(['{', '}'], "").split(',').map(str::to_string).collect();
            // A raw PMU event (`uncore_imc_0/event=0xe3,umask=0,name=UNC_M_PMM_RPQ_INSERTS_IMC0/`, as lkp's jobs
            // pass in `revents`) is printed under its `name=` term, which the split above leaves as `name=X/`.
            let names: Vec<String> = listed
                .iter()
                .filter_map(|item| item.strip_prefix("name=").map(|name| name.trim_end_matches('/').to_string()))
                .collect();
            listed.extend(names);
            events = Some(listed);
        }
        if !is_sample_line(line) {
            continue;
        }
        let comma = line.contains(',');
        let (stime, mut fields): (&str, Vec<Option<String>>) = if comma {
            let mut parts = ruby_split_comma(line);
            if parts.is_empty() {
                continue;
            }
            let stime = parts.remove(0);
            if parts.len() < 7 {
                continue;
            }
            (stime, parts.into_iter().map(|p| Some(p.to_string())).collect())
        } else {
            let mut parts = line.split(is_ruby_space).filter(|p| !p.is_empty());
            let stime = parts.next().unwrap_or("");
            (stime, parts.map(|p| Some(p.to_string())).collect())
        };

        let Some(Some(event_field)) = fields.get(2).cloned() else {
            return Err(ParseError::Malformed {
                program: PROGRAM,
                line: line_number,
                detail: "a sample line needs at least a value, a unit or event, and an event field".into(),
            });
        };
        if event_field.contains('/') {
            // `cpu_atom/cpu-cycles/` names the PMU and the event; lkp keeps the event.
            if let Some(slot) = fields.get_mut(2) {
                *slot = between_last_two_slashes(&event_field).map(str::to_string);
            }
        }

        if let Some(events) = &events {
            let known = fields.iter().flatten().any(|f| events.iter().any(|e| e == f));
            if !known {
                // lkp gives up here (its parser exits with status 1), keeping what it already printed.
                stopped_at_unknown_event = Some(line_number);
                break;
            }
        }
        samples += 1;

        prev_time = time;
        time = ruby_to_f(stime);
        if time - prev_time > 0.01 {
            output_interval(&mut state, prev_prev_time, prev_time);
            prev_prev_time = prev_time;
        }

        let socket = take_socket(&mut fields);
        let unit = match fields.get(1) {
            Some(Some(u)) if u == "Bytes" => Some(u.clone()),
            _ => None,
        };
        if comma && fields.len() > 1 {
            // CSV has an extra unit column the blank-separated form lacks.
            fields.remove(1);
        }
        let metric_key = metric_key(&fields, socket.as_deref());
        if metric_key.is_some() {
            metric_val = fields.get(4).cloned().flatten().map_or(0.0, |v| ruby_to_f(&v));
        }
        let value = fields.first().cloned().flatten().map_or(0.0, |v| ruby_to_f(&v));
        let Some(Some(mut key)) = fields.get(1).cloned() else {
            return Err(ParseError::Malformed {
                program: PROGRAM,
                line: line_number,
                detail: "no event name after the value".into(),
            });
        };
        if let Some(at) = key.find("_IMC") {
            key.truncate(at);
        }
        if let Some(unit) = unit {
            key = format!("{key}_{unit}");
        }
        state.interval_results.add(&key, value, 1);
        if let Some(socket) = &socket {
            state.interval_results.add(&format!("{socket}.{key}"), value, 1);
        }
        if let Some(metric_key) = metric_key {
            state.interval_metrics.add(&metric_key, metric_val, 1);
        }
    }

    if samples == 0 {
        let hint = match stopped_at_unknown_event {
            Some(line) => format!("line {line} counts an event that the `perf stat ... -e` command line does not list"),
            None => "expected `perf stat -I <ms> -x ,` interval lines such as \
                     `1.001034186,2002.94,msec,cpu-clock,2002939554,100.00,2.003,CPUs utilized`"
                .into(),
        };
        return Err(ParseError::NoResults { program: PROGRAM, hint });
    }

    if stopped_at_unknown_event.is_none() && state.out.lines.is_empty() {
        // The only interval is the last, partial one: the run was shorter than perf's interval. Dropped as lkp drops
        // a last interval, it would leave the run without counts, and its counts are the whole run's.
        output_interval(&mut state, prev_prev_time, time);
        prev_time = time;
    }

    if stopped_at_unknown_event.is_none() {
        // The last interval is left out: perf was stopped before it ran out.
        let end_time = if state.stats_end == 0.0 { prev_time } else { state.stats_end };
        let run_time = end_time - state.stats_begin;
        if run_time.is_nan() || run_time <= 0.0 {
            // A zero run time would turn every `ps.<event>` into an infinity (or NaN for a zero count).
            return Err(ParseError::Malformed {
                program: PROGRAM,
                line: 0,
                detail: format!(
                    "the samples span a run time of {run_time} seconds; the interval times in the first column must \
                     increase (as `perf stat -I <ms>` prints them)"
                ),
            });
        }
        let totals: Vec<(String, f64)> = state.results.iter().map(|(k, v)| (k.to_string(), v)).collect();
        for (key, value) in totals {
            state.out.push(format!("ps.{key}"), float(value / run_time));
        }
        let instructions = state.results.sum("instructions");
        if instructions != 0.0 {
            state.out.push("total.instructions", float(instructions));
        }
        let interval_count = state.interval_count as f64;
        let results = std::mem::take(&mut state.results);
        derived_metrics(&mut state, &results, run_time, interval_count, "overall.");
    }

    if state.out.lines.is_empty() {
        // Only a stop at an unlisted event leaves nothing: a log's single interval is read as the run.
        let stop = stopped_at_unknown_event.map_or_else(String::new, |line| {
            format!(", and line {line} counts an event that the `perf stat ... -e` command line does not list")
        });
        return Err(ParseError::Truncated {
            program: PROGRAM,
            detail: format!("{samples} sample line(s) of one interval that never ended{stop}"),
        });
    }
    // The monitor calls this function directly rather than through `Parser::parse`, so the check is made here too.
    state.out.check_finite(PROGRAM)
}

/// The keys lkp sums over a run's records instead of averaging them (its `etc/independent-counter-prefixes` for
/// perf-stat): they are printed once, after the last interval.
const ONCE_PRINTED_PREFIXES: [&str; 3] = ["ps.", "total.", "overall."];

/// The per-run metrics of a parsed perf-stat log, named `perf-stat.<key>`, as lkp's `stats.json` holds them (see the
/// module docs): once-printed keys keep their value; a per-interval key is the sum of its values over the number of
/// intervals (`time` records), an interval without it counting as zero. lkp pads a key's series with zeros only up
/// to its last value and takes a series of one value as that value, so a key printed by the first interval alone
/// keeps that value; this follows it there too.
pub fn run_metrics(parsed: &ParseOutput) -> BTreeMap<String, f64> {
    let mut records = 0usize;
    // Per key: the sum of its values, how many there were, and the record of the last one.
    let mut interval_keys: BTreeMap<&str, (f64, usize, usize)> = BTreeMap::new();
    let mut once: BTreeMap<&str, f64> = BTreeMap::new();
    for line in &parsed.lines {
        let Line::Pair { key, value } = line else { continue };
        if key == "time" {
            records += 1;
            continue;
        }
        let Ok(value) = value.trim().parse::<f64>() else { continue };
        if ONCE_PRINTED_PREFIXES.iter().any(|prefix| key.starts_with(prefix)) {
            *once.entry(key).or_default() += value;
        } else {
            let entry = interval_keys.entry(key).or_default();
            *entry = (entry.0 + value, entry.1 + 1, records);
        }
    }
    let mut metrics: BTreeMap<String, f64> =
        once.into_iter().map(|(key, value)| (format!("{PROGRAM}.{key}"), value)).collect();
    for (key, (sum, count, last_record)) in interval_keys {
        let value = if count == 1 && last_record <= 1 { sum } else { sum / records.max(1) as f64 };
        metrics.insert(format!("{PROGRAM}.{key}"), value);
    }
    metrics
}

fn output_interval(state: &mut State, prev_time: f64, time: f64) {
    if state.interval_results.is_empty() {
        return;
    }
    let interval = time - prev_time;
    state.out.push("time", float(time));
    let lines: Vec<(String, String)> =
        state.interval_results.iter().map(|(k, v)| (format!("i.{k}"), float(v / interval))).collect();
    for (key, value) in lines {
        state.out.push(key, value);
    }
    let interval_results = std::mem::take(&mut state.interval_results);
    derived_metrics(state, &interval_results, interval, 1.0, "i.");
    let metrics: Vec<(String, f64)> = state.interval_metrics.iter().map(|(k, v)| (k.to_string(), v)).collect();
    for (key, value) in metrics {
        state.out.push(format!("i.{key}"), float(value));
    }
    if !ignore_interval(state, prev_time, time) {
        for (key, value) in interval_results.iter() {
            state.results.add(key, value, interval_results.count(key));
        }
        state.interval_count += 1;
    }
    state.interval_metrics.clear();
}

/// Whether an interval falls outside the stats window; moves the window's edges to interval boundaries as lkp does.
fn ignore_interval(state: &mut State, prev_time: f64, time: f64) -> bool {
    if time <= state.stats_begin {
        return true;
    }
    if prev_time <= state.stats_begin {
        state.stats_begin = prev_time;
    }
    if state.stats_end != 0.0 && time > state.stats_end {
        if prev_time <= state.stats_end {
            state.stats_end = prev_time;
        }
        true
    } else {
        false
    }
}

/// The ratios lkp derives from counter sums: miss rates, cache misses per kilo-instruction, IPC/CPI, and memory
/// controller latency and throughput from uncore `UNC_M_*` events.
fn derived_metrics(state: &mut State, sums: &OrderedSums, interval: f64, interval_count: f64, prefix: &str) {
    let p = patterns();
    for (key, value) in sums.iter() {
        if let Some(caps) = p.misses.captures(key) {
            let stem = caps.get(1).map_or("", |m| m.as_str());
            miss_rate(&mut state.out, sums, stem, value, prefix);
            if value == 0.0 {
                continue;
            }
            if let Some(caps) = p.itlb_misses.captures(key) {
                let stem = caps.get(1).map_or("", |m| m.as_str());
                let instructions = sums.sum(&format!("{stem}instructions"));
                if instructions != 0.0 {
                    state.out.push(format!("{prefix}{stem}instructions-per-iTLB-miss"), float(instructions / value));
                }
            } else if let Some(caps) = p.cache_misses.captures(key) {
                let stem = caps.get(1).map_or("", |m| m.as_str());
                let cycles = sums.sum(&format!("{stem}cpu-cycles"));
                if cycles != 0.0 {
                    state.out.push(format!("{prefix}{stem}cycles-between-cache-misses"), float(cycles / value));
                }
                let instructions = sums.sum(&format!("{stem}instructions"));
                if instructions != 0.0 {
                    state.out.push(format!("{prefix}{stem}MPKI"), float(value / instructions * 1000.0));
                }
            }
        } else if let Some(caps) = p.uncore_inserts.captures(key) {
            let before = caps.get(1).map_or("", |m| m.as_str());
            let middle = caps.get(2).map_or("", |m| m.as_str());
            let stem = format!("{before}UNC_M_{middle}");
            uncore_latency(state, sums, &stem, before, value, interval, interval_count, prefix);
            state.out.push(format!("{prefix}{stem}_throughput_MBps"), float(value * 64.0 / 1024.0 / 1024.0 / interval));
        } else if let Some(caps) = p.cpu_cycles.captures(key) {
            let stem = caps.get(1).map_or("", |m| m.as_str());
            let instructions = sums.sum(&format!("{stem}instructions"));
            if instructions == 0.0 {
                continue;
            }
            state.out.push(format!("{prefix}{stem}ipc"), float(instructions / value));
            state.out.push(format!("{prefix}{stem}cpi"), float(value / instructions));
        }
    }
}

/// `<stem>-miss-rate%`: misses over hits plus misses (`dTLB-loads`), or over references or instructions.
fn miss_rate(out: &mut ParseOutput, sums: &OrderedSums, stem: &str, misses: f64, prefix: &str) {
    for suffix in ["s", "-references", "-instructions"] {
        let base = sums.sum(&format!("{stem}{suffix}"));
        if base == 0.0 {
            continue;
        }
        let total = if suffix == "s" { base + misses } else { base };
        out.push(format!("{prefix}{stem}-miss-rate%"), float(misses * 100.0 / total));
        break;
    }
}

#[allow(clippy::too_many_arguments)]
fn uncore_latency(
    state: &mut State,
    sums: &OrderedSums,
    stem: &str,
    before: &str,
    inserts: f64,
    interval: f64,
    interval_count: f64,
    prefix: &str,
) {
    let occupancy_key = format!("{stem}_OCCUPANCY");
    let ticks_key = format!("{before}UNC_M_CLOCKTICKS");
    let ticks_sum = sums.sum(&ticks_key);
    let ticks_count = sums.count(&ticks_key) as f64;
    if !sums.contains(&occupancy_key) || ticks_sum == 0.0 {
        return;
    }
    let latency_key = format!("{prefix}{stem}_latency_ns");
    let latency = if inserts == 0.0 {
        state.latency_prev.get(&latency_key).cloned().unwrap_or_else(|| "0".to_string())
    } else {
        let occupancy = sums.sum(&occupancy_key);
        float(occupancy / inserts / (ticks_sum / (ticks_count / interval_count)) * 1e9 * interval)
    };
    state.latency_prev.insert(latency_key.clone(), latency.clone());
    state.out.push(latency_key, latency);
}

/// Per-socket lines carry `S<n>,<cpus>,` before the value; returns the socket and drops those two fields.
fn take_socket(fields: &mut Vec<Option<String>>) -> Option<String> {
    let socket = match fields.first() {
        Some(Some(first)) if first.starts_with('S') => first.clone(),
        _ => return None,
    };
    if fields.len() > 1 {
        fields.remove(1);
    }
    fields.remove(0);
    Some(socket)
}

/// `metric.<unit>` when perf's metric unit (field 5) is one word starting with a capital (`GHz`, `M/sec`).
fn metric_key(fields: &[Option<String>], socket: Option<&str>) -> Option<String> {
    let unit = fields.get(5).cloned().flatten()?;
    if !is_capitalized_word(&unit) {
        return None;
    }
    let key = format!("metric.{}", ruby_chomp(&unit));
    Some(match socket {
        Some(socket) => format!("{socket}.{key}"),
        None => key,
    })
}

/// Ruby's `/^[A-Z][^ ]+$/` on a string that may end in a newline: `^` and `$` also match around line breaks.
fn is_capitalized_word(text: &str) -> bool {
    let bytes = text.as_bytes();
    (0..bytes.len()).any(|start| {
        let at_line_start = start == 0 || bytes.get(start - 1) == Some(&b'\n');
        if !at_line_start || !bytes.get(start).is_some_and(u8::is_ascii_uppercase) {
            return false;
        }
        // One or more non-space characters, ending at the end of the text or before a newline.
        let run_end = bytes.iter().skip(start + 1).position(|&b| b == b' ').map_or(bytes.len(), |p| start + 1 + p);
        (start + 2..=run_end).any(|end| end == bytes.len() || bytes.get(end) == Some(&b'\n'))
    })
}

fn ruby_chomp(text: &str) -> &str {
    text.strip_suffix("\r\n").or_else(|| text.strip_suffix('\n')).or_else(|| text.strip_suffix('\r')).unwrap_or(text)
}

/// lkp's `/^\s*\d+\.\d+\W+/`: a sample line starts with a time in seconds followed by a separator.
fn is_sample_line(line: &str) -> bool {
    let rest = line.trim_start_matches(is_ruby_space);
    let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    if int_len == 0 || rest.as_bytes().get(int_len) != Some(&b'.') {
        return false;
    }
    let after_dot = rest.get(int_len + 1..).unwrap_or("");
    let frac_len = after_dot.bytes().take_while(u8::is_ascii_digit).count();
    if frac_len == 0 {
        return false;
    }
    after_dot[frac_len..].chars().next().is_some_and(|c| !(c.is_ascii_alphanumeric() || c == '_'))
}

fn is_ruby_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// Ruby's `String#split(',')`: trailing empty fields are dropped (a field holding only the newline is not empty).
fn ruby_split_comma(line: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = line.split(',').collect();
    while parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    parts
}

/// The text between the last two slashes (`cpu_core/instructions/` gives `instructions`), as lkp's
/// `[/.*\/(.*)\//, 1]` picks it; `None` when there are fewer than two.
fn between_last_two_slashes(text: &str) -> Option<&str> {
    let line = text.split('\n').next().unwrap_or("");
    let last = line.rfind('/')?;
    let before = line.get(..last)?;
    let open = before.rfind('/')?;
    line.get(open + 1..last)
}

/// Ruby's `String#to_f`: the longest leading decimal number (after blanks), 0.0 when there is none.
pub(crate) fn ruby_to_f(text: &str) -> f64 {
    let s = text.trim_start_matches(is_ruby_space).as_bytes();
    let mut number = String::new();
    let mut i = 0;
    if let Some(&sign) = s.first().filter(|&&b| b == b'+' || b == b'-') {
        number.push(sign as char);
        i += 1;
    }
    let digits = |i: &mut usize, number: &mut String| -> usize {
        let mut n = 0;
        while let Some(&b) = s.get(*i) {
            if b.is_ascii_digit() {
                number.push(b as char);
                n += 1;
            } else if b == b'_' && n > 0 && s.get(*i + 1).is_some_and(u8::is_ascii_digit) {
                // Ruby allows underscores between digits.
            } else {
                break;
            }
            *i += 1;
        }
        n
    };
    let int_digits = digits(&mut i, &mut number);
    let mut frac_digits = 0;
    if s.get(i) == Some(&b'.') && s.get(i + 1).is_some_and(u8::is_ascii_digit) {
        number.push('.');
        i += 1;
        frac_digits = digits(&mut i, &mut number);
    }
    if int_digits == 0 && frac_digits == 0 {
        return 0.0;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        let mut exponent = String::from("e");
        if let Some(&sign) = s.get(j).filter(|&&b| b == b'+' || b == b'-') {
            exponent.push(sign as char);
            j += 1;
        }
        if digits(&mut j, &mut exponent) > 0 {
            number.push_str(&exponent);
        }
    }
    number.parse().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raw_event_is_known_by_its_name_term() {
        // Recorded on this machine: `perf stat -a --scale -I 100 -x , -e 'software/config=3,name=cs3/,
        // sched:sched_switch' --log-fd 1 -- sleep 0.35`, behind the command line the monitor writes first.
        let log = "/usr/bin/perf stat -a --scale -I 100 -x , -e software/config=3,name=cs3/,sched:sched_switch \
                   --log-fd 1
     0.100153708,50,,cs3,206631252,100.00,,
     0.100153708,50,,sched:sched_switch,206631703,100.00,,
     0.203547967,29,,cs3,200809420,100.00,,
     0.203547967,26,,sched:sched_switch,200808759,100.00,,
     0.303908992,20,,cs3,200717925,100.00,,
     0.303908992,20,,sched:sched_switch,200718584,100.00,,
     0.351444721,12,,cs3,94947306,100.00,,
     0.351444721,12,,sched:sched_switch,94946596,100.00,,
";
        let metrics = parse_text(log).expect("parses").metrics("perf-stat");
        // Three intervals are kept (the last is dropped as perf was stopped in it), 50 + 29 + 20 switches, over the
        // run time, the time of the last sample.
        let switches = metrics.get("perf-stat.ps.cs3").copied().expect("cs3 counted");
        assert!((switches - 99.0 / 0.351444721).abs() < 1e-6, "{metrics:?}");
        assert!(metrics.contains_key("perf-stat.ps.sched:sched_switch"), "{metrics:?}");
    }

    #[test]
    fn ruby_to_f_cases() {
        for (text, want) in [
            ("1.5", 1.5),
            ("  2.25\n", 2.25),
            ("12abc", 12.0),
            ("abc", 0.0),
            ("", 0.0),
            ("-3e2", -300.0),
            ("1e", 1.0),
            ("1_000.5", 1000.5),
            ("<not supported>", 0.0),
            (".5", 0.5),
            ("5.", 5.0),
        ] {
            assert_eq!(ruby_to_f(text), want, "{text:?}");
        }
    }

    #[test]
    fn sample_line_detection() {
        for (line, want) in [
            ("     1.000659830,4100064372,,cpu-cycles\n", true),
            ("1.012763890 3969592418  cpu-cycles", true),
            ("1.5\n", true),
            ("1.5", false),
            ("1.5x", false),
            ("perf version 6.1", false),
            ("# time counts", false),
            ("1,2", false),
        ] {
            assert_eq!(is_sample_line(line), want, "{line:?}");
        }
    }

    #[test]
    fn capitalized_word_like_ruby() {
        for (text, want) in [
            ("GHz\n", true),
            ("M/sec", true),
            ("CPUs utilized\n", false),
            ("insn", false),
            ("G", false),
            ("/sec\n", false),
            ("x\nKB", true),
        ] {
            assert_eq!(is_capitalized_word(text), want, "{text:?}");
        }
    }

    #[test]
    fn slashes() {
        assert_eq!(between_last_two_slashes("cpu_atom/cpu-cycles/"), Some("cpu-cycles"));
        assert_eq!(between_last_two_slashes("a/b/c/"), Some("c"));
        assert_eq!(between_last_two_slashes("a/b"), None);
    }
}
