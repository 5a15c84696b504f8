//! lkp-tests' own change rules (`culprit compare --lkp-rules`), ported in behaviour from `__get_changed_stats`
//! in lkp's `lib/stats.rb` so users can see what the robot would have reported for the same runs.
//!
//! The rules, per stat, with `a` the new side and `b` the base:
//! - Summaries are over *trimmed* sorted samples (n >> 5 values cut from each end, at most 3, at most 1 when the
//!   base has 3 runs or fewer, none for pass/fail stats); lkp's "mean" is the element at index n/2 of the
//!   trimmed samples (the upper median).
//! - Pass/fail stats (`dmesg.*`, `*.fail`, ...) changed when the maxima differ. Other stats changed when the
//!   ranges do not overlap the other side's median (default), or by the `gap`, `variance` or `distance` option.
//! - Then the ratio of the larger to the smaller median must exceed 1.01, and 1.05 for metrics that are not
//!   performance metrics, and per-metric minimum magnitudes must be met (`perf-metrics-threshold.yaml`).
//! - At least 3 runs on one side, unless `whole`; with `regression-only`, failures that went away are not
//!   reported, nor kmsg lines after a boot fix.
//!
//! Known upstream quirks kept on purpose so results match lkp: the latency classification never fires (its
//! predicate has no return value), and `gap_distance: 2` is echoed in records only from the first stat judged
//! by the default rule on. Not ported: lkp's full deny list of dmesg patterns (only its prefix entries are
//! here), `DmesgKillPattern`, and the Ruby type check on the `perf-profile` threshold.

use super::direction::glob_match;
use super::{is_pass_fail_metric, metric_of_key};
use super::printf;
use crate::model::MetricClass;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A stat matrix as lkp keeps it: stat name → one value per run, in the order stats were recorded.
pub type Matrix = Vec<(String, Vec<f64>)>;

/// lkp's options for `__get_changed_stats` that Culprit supports, named as lkp names them (`gap`, ...).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LkpOptions {
    /// `more`: also consider stats lkp normally hides (its deny list).
    pub more: bool,
    /// `gap`: changed when the ranges are apart by more than `gap` times the difference of medians.
    pub gap: Option<f64>,
    /// `variance`: changed when one side's spread relative to its median exceeds the other's by this factor;
    /// needs at least 10 runs a side.
    pub variance: Option<f64>,
    /// `distance`: the bisect rule, ranges apart by more than 1/gap_distance of the median difference.
    pub distance: Option<f64>,
    /// `regression-only`: skip pass/fail stats that disappeared on the new side.
    pub regression_only: bool,
    /// `all-critical`: like regression-only for stats outside the kill patterns.
    pub all_critical: bool,
    /// `perf-profile`: perf-profile stats are changed when either median exceeds this threshold.
    pub perf_profile: Option<f64>,
    /// `resize`: keep only the first N runs of the new side.
    pub resize: Option<usize>,
    /// `whole`: do not require 3 runs on a side.
    pub whole: bool,
    /// `perf`: only performance metrics.
    pub perf: bool,
    /// `force_<stat>`: report these stats whatever their change.
    pub force: Vec<String>,
    /// `tbox_group`: `vh-*` hosts are skipped, `vm-*` hosts skip memory stats.
    pub tbox_group: Option<String>,
    pub is_perf_test_vm: bool,
}

impl LkpOptions {
    /// The options as lkp merges them into every reported record (only those that are set).
    fn echo(&self) -> BTreeMap<String, serde_json::Value> {
        use serde_json::json;
        let mut m = BTreeMap::new();
        let mut flag = |k: &str, on: bool| {
            if on {
                m.insert(k.to_string(), json!(true));
            }
        };
        flag("more", self.more);
        flag("regression-only", self.regression_only);
        flag("all-critical", self.all_critical);
        flag("whole", self.whole);
        flag("perf", self.perf);
        flag("is_perf_test_vm", self.is_perf_test_vm);
        for (k, v) in [("gap", self.gap), ("variance", self.variance), ("distance", self.distance), ("perf-profile", self.perf_profile)] {
            if let Some(v) = v {
                m.insert(k.to_string(), json!(v));
            }
        }
        if let Some(r) = self.resize {
            m.insert("resize".to_string(), json!(r));
        }
        if let Some(t) = &self.tbox_group {
            m.insert("tbox_group".to_string(), json!(t));
        }
        for f in &self.force {
            m.insert(format!("force_{f}"), json!(true));
        }
        m
    }

    fn forced(&self, stat: &str) -> bool {
        self.force.iter().any(|f| f == stat)
    }
}

/// One reported stat, with lkp's field names and meanings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LkpChange {
    pub stat: String,
    /// `[ min_a - max_a ] -- [ min_b - max_b ]` with `%-10.5g` numbers.
    pub interval: String,
    /// Trimmed sorted samples of the new side and of the base.
    pub a: Vec<f64>,
    pub b: Vec<f64>,
    pub is_function_stat: bool,
    pub is_latency: bool,
    /// Larger median over smaller, capped at 5 (5 when the smaller is not positive).
    pub ratio: f64,
    /// Larger median minus smaller.
    pub delta: f64,
    /// lkp's "means": the upper medians of the trimmed samples.
    pub mean_a: f64,
    pub mean_b: f64,
    /// Spread of a (max - min), or of b when a has at most 2 values and less spread.
    pub x: f64,
    /// The gap between the ranges (0 when they overlap).
    pub y: f64,
    /// Spread of b.
    pub z: f64,
    pub min_a: f64,
    pub max_a: f64,
    pub min_b: f64,
    pub max_b: f64,
    pub max: f64,
    pub nr_run: usize,
    /// The options merged into the record, as lkp does (`more`, `gap`, `gap_distance`, `has_boot_fix`, ...).
    #[serde(flatten)]
    pub options: BTreeMap<String, serde_json::Value>,
}

/// lkp's StatSummary: trimmed sorted samples and their min, upper median and max.
#[derive(Debug, Clone)]
struct Summary {
    sorted: Vec<f64>,
    min: f64,
    mean: f64,
    max: f64,
}

impl Summary {
    fn new(values: &[f64], max_margin: usize) -> Summary {
        let mut s = values.to_vec();
        s.sort_by(f64::total_cmp);
        let margin = (s.len() >> 5).min(max_margin);
        let trimmed: Vec<f64> = if s.len() > 2 * margin { s[margin..s.len() - margin].to_vec() } else { Vec::new() };
        let (min, mean, max) = match (trimmed.first(), trimmed.get(trimmed.len() / 2), trimmed.last()) {
            (Some(&a), Some(&m), Some(&b)) => (a, m, b),
            _ => (0.0, 0.0, 0.0),
        };
        Summary { sorted: trimmed, min, mean, max }
    }

    fn len(&self) -> f64 {
        self.max - self.min
    }
}

/// The number of runs in a matrix as lkp counts it: the longer of its first and last stat.
fn matrix_cols(m: &Matrix) -> usize {
    match (m.first(), m.last()) {
        (Some(f), Some(l)) => f.1.len().max(l.1.len()),
        _ => 0,
    }
}

/// Prefix entries of lkp's stat deny list that its report allow list does not re-allow: stats hidden unless
/// `more` is set.
const HIDDEN_UNLESS_MORE: &[&str] = &[
    "aim7.cpu", "aim7.jobs-per-min-per-task", "aim7.jti", "aim7.real", "buddyinfo.", "diskstats.", "interrupts.",
    "max_iostat.", "pagetypeinfo.", "slabinfo.", "softirqs.", "tcrypt.", "zoneinfo.", "dmesg.boot_failures",
    "dmesg.boot_successes", "dmesg.backtrace", "dmesg.bootstage", "last_state.exit_fail", "last_state.post_run",
    "last_state.soft_timeout", "last_state.OOM",
];

/// lkp's `etc/perf-metrics-prefixes`: monitor metrics that count as performance metrics.
const PERF_METRIC_PREFIXES: &[&str] = &[
    "boot-meminfo.", "boot-memory.", "boot-slabinfo.", "boot-time.", "energy.", "interrupts.CAL:Function_call_interrupts",
    "iostat.", "perf-c2c.HITM.total", "perf-profile.children.cycles-pp.native_queued_spin_lock_slowpath",
    "perf-stat.", "pmeter.", "proc-vmstat.", "turbostat.", "vmstat.cpu.", "vmstat.io.", "vmstat.swap.",
    "vmstat.system.",
];

/// Whether lkp treats the stat as a performance metric: a benchmark program's metric, one of the monitor
/// prefixes above, or a match of lkp's `etc/perf-metrics-patterns`. (lkp derives the program list from its test
/// suites; Culprit's metric classes say the same.)
fn perf_metric(stat: &str) -> bool {
    if PERF_METRIC_PREFIXES.iter().any(|p| stat.starts_with(p)) || perf_metrics_pattern(stat) {
        return true;
    }
    MetricClass::of(stat) == MetricClass::Program && !is_pass_fail_metric(stat)
}

/// lkp's `etc/perf-metrics-patterns`, `^(.*\.)?time..*` and `^lock_stat..*..contentions`: a `time` stat at the
/// start of the name or after a dot with at least one character after it (the time monitor's `time.elapsed_time`
/// and a suite's `<suite>.time.elapsed_time` alike), and lock_stat's contention counts.
fn perf_metrics_pattern(stat: &str) -> bool {
    let time_stat = |s: &str| s.strip_prefix("time").is_some_and(|rest| !rest.is_empty());
    let time = time_stat(stat) || stat.match_indices('.').any(|(i, _)| time_stat(&stat[i + 1..]));
    let contentions =
        stat.strip_prefix("lock_stat").and_then(|rest| rest.get(2..)).is_some_and(|rest| rest.contains("contentions"));
    time || contentions
}

/// lkp's `etc/perf-metrics-threshold.yaml` as globs, in the file's order, since lkp takes the first entry whose
/// regex matches the whole name: (pattern, minimum magnitude, whether the threshold is an integer, which also
/// requires delta >= threshold / 2). A leading `?` stands for the one character at least that lkp's `.*.` wants
/// before `time`: its `time` rows apply to `<prefix>.time.*` stats, never to the time monitor's own `time.*`. A
/// `[rw]` of lkp's is written out as its two entries.
const PERF_THRESHOLDS: &[(&str, f64, bool)] = &[
    ("?*time.elapsed_time*", 10.0, true),
    ("?*time.file_system_inputs", 10000.0, true),
    ("?*time.file_system_outputs", 10000.0, true),
    ("?*time.involuntary_context_switches", 1000.0, true),
    ("?*time.major_page_faults", 1000.0, true),
    ("?*time.minor_page_faults", 1000.0, true),
    ("?*time.socket_messages_received", 10000.0, true),
    ("?*time.socket_messages_sent", 10000.0, true),
    ("?*time.swaps", 1000.0, true),
    ("?*time.system_time", 10.0, true),
    ("?*time.user_time", 10.0, true),
    ("?*time.voluntary_context_switches", 1000.0, true),
    ("*vmstat*nr_*", 100.0, true),
    ("dd.kill_time", 10.0, true),
    ("dd.startup_time", 10.0, true),
    ("interrupts.*", 100.0, true),
    ("iostat.*.avgrq-sz", 200.0, true),
    ("iostat.*.await", 50.0, true),
    ("iostat.*.util", 10.0, true),
    ("iostat.*.r/s", 50.0, true),
    ("iostat.*.w/s", 50.0, true),
    ("iostat.*.rkB/s", 100.0, true),
    ("iostat.*.wkB/s", 100.0, true),
    ("iostat.*.r_await", 50.0, true),
    ("iostat.*.w_await", 50.0, true),
    ("perf-c2c.HITM.total", 3000.0, true),
    ("perf-profile.*", 1.0, true),
    // After `perf-profile.*`, as in lkp's file, so this 2.00 never decides there either.
    ("perf-profile.children.cycles-pp.native_queued_spin_lock_slowpath", 2.0, false),
    ("proc-vmstat.allocstall", 100.0, true),
    ("proc-vmstat.compact_fail", 100.0, true),
    ("proc-vmstat.compact_stall", 100.0, true),
    ("proc-vmstat.htlb_buddy_alloc_fail", 100.0, true),
    ("proc-vmstat.kswapd_high_wmark_hit_quickly", 100.0, true),
    ("proc-vmstat.kswapd_low_wmark_hit_quickly", 100.0, true),
    ("proc-vmstat.nr_vmscan_immediate_reclaim", 100.0, true),
    ("proc-vmstat.nr_vmscan_write", 100.0, true),
    ("proc-vmstat.pgmigrate_fail", 100.0, true),
    ("sysbench-fileio.latency_95th_ms", 10.0, true),
    ("vmstat.cpu.id", 10.0, true),
    ("vmstat.cpu.st", 10.0, true),
    ("vmstat.cpu.sy", 50.0, true),
    ("vmstat.cpu.us", 10.0, true),
    ("vmstat.cpu.wa", 10.0, true),
    ("vmstat.io.bi", 100.0, true),
    ("vmstat.io.bo", 100.0, true),
    ("vmstat.system.cs", 100.0, true),
    ("vmstat.system.in", 100.0, true),
    ("xfstests.*.seconds", 10.0, true),
];

/// Whether `stat` matches a [`PERF_THRESHOLDS`] pattern: a glob, after one character of any kind for a leading `?`.
fn threshold_match(pattern: &str, stat: &str) -> bool {
    match pattern.strip_prefix('?') {
        Some(rest) => stat.chars().next().is_some_and(|c| glob_match(rest, &stat[c.len_utf8()..])),
        None => glob_match(pattern, stat),
    }
}

/// lkp's `reasonable_perf_change?`: minimum magnitudes that keep tiny absolute changes out of reports.
fn reasonable_perf_change(stat: &str, delta: f64, max: f64) -> bool {
    if let Some(&(_, v, integer)) = PERF_THRESHOLDS.iter().find(|(p, _, _)| threshold_match(p, stat)) {
        if max < v {
            return false;
        }
        return !(integer && delta < v / 2.0);
    }
    if stat.starts_with("iostat") {
        max > 1.0
    } else if ["pagetypeinfo", "buddyinfo", "slabinfo"].iter().any(|p| stat.starts_with(p)) {
        delta > 100.0
    } else if stat.starts_with("proc-vmstat") || stat.contains("meminfo") {
        max > 1000.0
    } else if stat.starts_with("lock_stat") {
        delta > if stat.contains("time") { 1_000.0 } else { 10_000.0 }
    } else if stat.starts_with("interrupts") || stat.starts_with("softirqs") {
        max > 10_000.0
    } else {
        true
    }
}

fn memory_stat(stat: &str) -> bool {
    ["boot-meminfo.", "boot-memory.", "proc-vmstat.", "numa-vmstat.", "meminfo.", "memmap.", "numa-meminfo."]
        .iter()
        .any(|p| stat.starts_with(p))
}

/// Mutable state lkp keeps in its options hash while walking the stats.
#[derive(Default)]
struct WalkState {
    gap_distance_set: bool,
    has_boot_fix: bool,
}

/// The stats lkp reports as changed between `a` (new runs) and `b` (base runs), in `a`'s order followed by
/// stats only `b` has. `is_incomplete_run` restricts the walk to dmesg/last_state/stderr stats, as lkp does for
/// runs that did not complete.
pub fn changed_stats(a: &Matrix, b: &Matrix, is_incomplete_run: bool, options: &LkpOptions) -> Vec<LkpChange> {
    let cols_a = matrix_cols(a);
    let cols_b = matrix_cols(b);
    if options.variance.is_some() && (cols_a < 10 || cols_b < 10) {
        return Vec::new();
    }
    let b_map: BTreeMap<&str, &Vec<f64>> = b.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let mut walk: Vec<(String, Vec<f64>)> = a.clone();
    for (k, _) in b {
        if !walk.iter().any(|(ak, _)| ak == k) {
            walk.push((k.clone(), vec![0.0; cols_a]));
        }
    }
    let b_has_profile = b.iter().any(|(k, _)| k.split('.').next() == Some("perf-profile"));
    let b_has_lock_stat = b.iter().any(|(k, _)| k.split('.').next() == Some("lock_stat"));
    let mut state = WalkState::default();
    let mut out = Vec::new();
    for (key, a_k) in walk {
        let k = metric_of_key(&key);
        let ctx = StatContext { key: &key, k, b: &b_map, cols_a, cols_b, options, is_incomplete_run };
        let monitored = (k.starts_with("perf-profile.") && b_has_profile) || (k.starts_with("lock_stat.") && b_has_lock_stat);
        if let Some(change) = ctx.process(a_k, monitored, &mut state) {
            out.push(change);
        }
    }
    out
}

struct StatContext<'a> {
    /// The stat's key in the matrices, which names it in the result.
    key: &'a str,
    /// The metric name the key holds (the whole key, but for a sweep's point), which lkp's rules read.
    k: &'a str,
    b: &'a BTreeMap<&'a str, &'a Vec<f64>>,
    cols_a: usize,
    cols_b: usize,
    options: &'a LkpOptions,
    is_incomplete_run: bool,
}

impl StatContext<'_> {
    fn is_function_stat(&self) -> bool {
        is_pass_fail_metric(self.k)
    }

    fn process(&self, mut a_k: Vec<f64>, monitored_by_b: bool, state: &mut WalkState) -> Option<LkpChange> {
        let k = self.k;
        let o = self.options;
        let function_stat = self.is_function_stat();
        // lkp's latency predicate never returns true (see the module docs), so latency rules never apply.
        let latency_stat = false;
        if self.skip_stat(function_stat) {
            return None;
        }
        if !(self.b.contains_key(self.key) || function_stat || monitored_by_b) {
            return None;
        }
        // calculate_matrix_values
        let mut max_margin = if function_stat || latency_stat { 0 } else { 3 };
        let mut b_k: Vec<f64> = self.b.get(self.key).map(|v| v.to_vec()).unwrap_or_else(|| vec![0.0; self.cols_b]);
        b_k.resize(b_k.len().max(self.cols_b), 0.0);
        a_k.resize(a_k.len().max(self.cols_a), 0.0);
        let sb = Summary::new(&b_k, max_margin);
        if sb.sorted.is_empty() {
            return None;
        }
        if let Some(r) = o.resize {
            a_k.truncate(r);
        }
        if b_k.len() <= 3 && max_margin > 1 {
            max_margin = 1;
        }
        let sa = Summary::new(&a_k, max_margin);
        if sa.sorted.is_empty() {
            return None;
        }
        let forced = o.forced(k);
        if !forced && !self.changed(&sa, &sb, function_stat, state) {
            return None;
        }
        if self.skip_critical(&sa, function_stat, state) {
            return None;
        }
        // calc_stats_metrics
        let max = sb.max.max(sa.max);
        let mut x = sa.len();
        let z = sb.len();
        if sa.sorted.len() <= 2 && x < z {
            x = z;
        }
        let (high, low) = if sa.mean > sb.mean { (&sa, &sb) } else { (&sb, &sa) };
        let y = (high.min - low.max).max(0.0);
        let delta = high.mean - low.mean;
        let ratio = if low.mean > 0.0 { (high.mean / low.mean).min(5.0) } else { 5.0 };
        if self.skip_small_change(ratio, delta, max) {
            return None;
        }
        let mut echoed = o.echo();
        if state.gap_distance_set {
            echoed.insert("gap_distance".to_string(), serde_json::json!(2));
        }
        if state.has_boot_fix {
            echoed.insert("has_boot_fix".to_string(), serde_json::json!(true));
        }
        Some(LkpChange {
            stat: self.key.to_string(),
            interval: format!(
                "[ {:<10} - {:<10} ] -- [ {:<10} - {:<10} ]",
                printf::general(sa.min, 5, false),
                printf::general(sa.max, 5, false),
                printf::general(sb.min, 5, false),
                printf::general(sb.max, 5, false)
            ),
            is_function_stat: function_stat,
            is_latency: latency_stat,
            ratio,
            delta,
            mean_a: sa.mean,
            mean_b: sb.mean,
            x,
            y,
            z,
            min_a: sa.min,
            max_a: sa.max,
            min_b: sb.min,
            max_b: sb.max,
            max,
            nr_run: a_k.len(),
            a: sa.sorted,
            b: sb.sorted,
            options: echoed,
        })
    }

    fn skip_stat(&self, function_stat: bool) -> bool {
        let k = self.k;
        let o = self.options;
        if o.perf && !perf_metric(k) {
            return true;
        }
        if self.is_incomplete_run && !["dmesg.", "last_state.", "stderr."].iter().any(|p| k.starts_with(p)) {
            return true;
        }
        if !o.more && HIDDEN_UNLESS_MORE.iter().any(|p| k.starts_with(p)) {
            return true;
        }
        if function_stat {
            self.skip_function_stat()
        } else {
            self.skip_regular_stat()
        }
    }

    fn skip_function_stat(&self) -> bool {
        let k = self.k;
        if self.options.forced(k) || ["dmesg.", "kmsg.", "last_state.", "stderr."].iter().any(|p| k.starts_with(p)) {
            return false;
        }
        let base = k.rsplit_once('.').map(|(b, _)| b).unwrap_or(k);
        let last = k.rsplit('.').next().unwrap_or("");
        // The sibling stat of a sweep's point is the sibling metric at the same point.
        let point = &self.key[k.len()..];
        if ["error", "warn", "fail"].contains(&last) && !self.b.contains_key(format!("{base}.pass{point}").as_str()) {
            return true;
        }
        if last == "pass" && !["error", "warn", "fail"].iter().any(|s| self.b.contains_key(format!("{base}.{s}{point}").as_str())) {
            return true;
        }
        false
    }

    fn skip_regular_stat(&self) -> bool {
        let o = self.options;
        if !o.forced(self.k) && self.cols_a < 3 && self.cols_b < 3 && !o.whole {
            return true;
        }
        match o.tbox_group.as_deref() {
            Some(t) if t.starts_with("vh-") => true,
            Some(t) if t.starts_with("vm-") => !o.is_perf_test_vm && memory_stat(self.k),
            _ => false,
        }
    }

    fn changed(&self, a: &Summary, b: &Summary, function_stat: bool, state: &mut WalkState) -> bool {
        let o = self.options;
        if let (Some(t), true) = (o.perf_profile, self.k.starts_with("perf-profile.")) {
            return a.mean > t || b.mean > t;
        }
        if function_stat {
            return a.max != b.max;
        }
        if let Some(v) = o.variance {
            return a.len() * b.mean > v * b.len() * a.mean || b.len() * a.mean > v * a.len() * b.mean;
        }
        if let Some(g) = o.gap {
            return gap(a, b, g);
        }
        // The default and `distance` rules (lkp's ChangedStat), which also set gap_distance for good.
        state.gap_distance_set = true;
        let gap_distance = 2.0;
        if let Some(distance) = o.distance {
            let integral = [a.max, a.min, b.max, b.min].iter().all(|v| v.fract() == 0.0);
            if integral && (a.min - b.max == 1.0 || b.min - a.max == 1.0) {
                return false;
            }
            if a.sorted.len() < 3 || b.sorted.len() < 3 {
                let min_gap = a.len().max(b.len()) * distance;
                return b.min - a.max > min_gap || a.min - b.max > min_gap;
            }
            return (b.min > a.max && (b.min - a.max) > (b.mean - a.mean) / gap_distance)
                || (a.min > b.max && (a.min - b.max) > (a.mean - b.mean) / gap_distance);
        }
        (b.min > a.mean && b.mean > a.max) || (a.min > b.mean && a.mean > b.max)
    }

    fn skip_critical(&self, a: &Summary, function_stat: bool, state: &mut WalkState) -> bool {
        let o = self.options;
        if !((o.regression_only || o.all_critical) && function_stat) {
            return false;
        }
        if a.max == 0.0 {
            if self.k.starts_with("dmesg.") {
                state.has_boot_fix = true;
            }
            // lkp keeps stats matching its dmesg kill patterns under all-critical; that list is not ported,
            // so under all-critical every vanished failure is skipped.
            if o.regression_only || o.all_critical {
                return true;
            }
        }
        state.has_boot_fix && self.k.starts_with("kmsg.")
    }

    fn skip_small_change(&self, ratio: f64, delta: f64, max: f64) -> bool {
        let k = self.k;
        if self.options.forced(k) || (self.options.perf_profile.is_some() && k.starts_with("perf-profile.")) {
            return false;
        }
        // time.elapsed_time has a 0.01 s resolution, hence the 1% floor for everything.
        if ratio <= 1.01 {
            return true;
        }
        if ratio <= 1.05 && !perf_metric(k) {
            return true;
        }
        !reasonable_perf_change(k, delta, max)
    }
}

/// lkp's gap rule: the ranges are apart, by more than `gap` times the difference of the means (lkp-tests' `gap?`).
fn gap(a: &Summary, b: &Summary, gap: f64) -> bool {
    (b.min > a.max && (b.min - a.max) > (b.mean - a.mean) * gap)
        || (a.min > b.max && (a.min - b.max) > (a.mean - b.mean) * gap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimming_follows_lkp() {
        // 64 runs: 64 >> 5 = 2 values trimmed from each end.
        let xs: Vec<f64> = (0..64).map(f64::from).collect();
        let s = Summary::new(&xs, 3);
        assert_eq!((s.min, s.max, s.sorted.len()), (2.0, 61.0, 60));
        assert_eq!(s.mean, 32.0);
        // No trimming for pass/fail stats.
        assert_eq!(Summary::new(&xs, 0).sorted.len(), 64);
    }

    #[test]
    fn small_changes_of_non_perf_metrics_are_skipped() {
        let opts = LkpOptions { more: true, ..LkpOptions::default() };
        let a = vec![("cpu.usage".to_string(), vec![10.4, 10.4, 10.4])];
        let b = vec![("cpu.usage".to_string(), vec![10.0, 10.0, 10.0])];
        // Ratio 1.04: below 1.05 for a monitor metric.
        assert!(changed_stats(&a, &b, false, &opts).is_empty());
        let a = vec![("fio.write_iops".to_string(), vec![10.4, 10.4, 10.4])];
        let b = vec![("fio.write_iops".to_string(), vec![10.0, 10.0, 10.0])];
        assert_eq!(changed_stats(&a, &b, false, &opts).len(), 1);
    }

    #[test]
    fn review_12_minimum_magnitudes_match_as_lkps_regexes_do_in_its_file_order() {
        // lkp matches `^.*.time.elapsed_time.*$`: a character at least before `time`, so the time monitor's own
        // `time.elapsed_time` has no minimum and a 2 s job that took 2.4 s is reported; the ported glob matched it
        // and wanted 10 s. Its minor faults likewise have no minimum of 1000 there.
        let opts = LkpOptions { more: true, ..LkpOptions::default() };
        let report = |stat: &str, a: Vec<f64>, b: Vec<f64>| {
            changed_stats(&vec![(stat.to_string(), a)], &vec![(stat.to_string(), b)], false, &opts).len()
        };
        assert_eq!(report("time.elapsed_time", vec![2.4, 2.41, 2.39], vec![2.0, 2.01, 1.99]), 1);
        assert_eq!(report("time.minor_page_faults", vec![240.0; 3], vec![200.0; 3]), 1);
        assert!(reasonable_perf_change("time.elapsed_time", 0.4, 2.4));
        assert!(!reasonable_perf_change("kbuild.time.elapsed_time", 0.4, 2.4));
        // Culprit's own runs name the rows as lkp does since QA 47, so lkp's minimum magnitudes apply to them.
        assert!(!reasonable_perf_change("stress-ng.time.user_time", 1.0, 5.0));
        assert!(!reasonable_perf_change("stress-ng.time.minor_page_faults", 400.0, 900.0));
        // `perf-profile.*: 1` comes before the spin lock's 2.00 in lkp's file, so the integer 1 (and its delta of
        // at least 0.5) decides: 1.2 -> 1.8 is reported, 3.0 -> 3.4 is not.
        let spin = "perf-profile.children.cycles-pp.native_queued_spin_lock_slowpath";
        assert!(reasonable_perf_change(spin, 0.6, 1.8));
        assert!(!reasonable_perf_change(spin, 0.4, 3.4));
        // Entries the port had left out: iostat's per-direction rates and waits, and five proc-vmstat counters.
        assert!(!reasonable_perf_change("iostat.sda.r/s", 20.0, 40.0));
        assert!(!reasonable_perf_change("iostat.sda.wkB/s", 60.0, 90.0));
        assert!(reasonable_perf_change("proc-vmstat.kswapd_low_wmark_hit_quickly", 60.0, 500.0));
    }

    #[test]
    fn review_12_time_stats_are_performance_metrics_as_lkps_patterns_say() {
        // lkp's perf-metrics-patterns make every `time.*` stat a performance metric, whose change needs a ratio above
        // 1.01 only: a 20 s job that took 20.6 s in each of 3 runs is reported, where the port wanted 1.05.
        let opts = LkpOptions { more: true, ..LkpOptions::default() };
        let a = vec![("time.elapsed_time".to_string(), vec![20.6, 20.61, 20.59])];
        let b = vec![("time.elapsed_time".to_string(), vec![20.0, 20.01, 19.99])];
        assert_eq!(changed_stats(&a, &b, false, &opts).len(), 1);
        for stat in ["time.user_time", "hackbench.time.elapsed_time", "lock_stat.x.contentions"] {
            assert!(perf_metrics_pattern(stat) && perf_metric(stat), "{stat}");
        }
        for stat in ["time", "meminfo.runtime_x", "interrupts.time", "lock_stat.contentions", "meminfo.Active"] {
            assert!(!perf_metrics_pattern(stat), "{stat}");
        }
        assert!(!perf_metric("meminfo.runtime_x"));
    }

    #[test]
    fn two_runs_a_side_are_not_enough_unless_whole() {
        let a = vec![("fio.write_iops".to_string(), vec![20.0, 20.0])];
        let b = vec![("fio.write_iops".to_string(), vec![10.0, 10.0])];
        assert!(changed_stats(&a, &b, false, &LkpOptions::default()).is_empty());
        let whole = LkpOptions { whole: true, ..LkpOptions::default() };
        assert_eq!(changed_stats(&a, &b, false, &whole).len(), 1);
    }
}
