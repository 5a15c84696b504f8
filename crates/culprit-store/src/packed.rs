//! Packed metrics: all metric values of one run in one row of `run_metric_packs`, and the assembly of
//! comparison samples from such rows. Both back ends store and read metrics only through this module.
//!
//! Why packed: a perf-profile-heavy run has 20,000 metrics, and `culprit compare` of 2 sides x 20 runs read
//! 800,000 rows of a normalized `(run_id, metric_id, value)` table, one row step (and on PostgreSQL one
//! foreign-key check per saved row) at a time. One row per run turns that into 40 blob reads, and saving into one
//! insert. Metric names stay interned in `metric_names`, so a pack holds only ids and values:
//!
//! - `metric_ids`: the run's metric ids in increasing order, each as the unsigned LEB128 varint of its difference
//!   to the previous id (the first against 0). Ids of a job's metrics are mostly consecutive, so most take one
//!   byte.
//! - `metric_values`: one little-endian IEEE 754 double per id, in the same order. Exact, NaN and infinities
//!   included (NaN no longer needs a NULL stand-in, and -0.0 stays -0.0).
//! - `metric_count`: the number of ids, so listing runs never touches the blobs.
//!
//! The ids are not foreign keys any more (they sit inside a blob); the save guarantees they exist, since it
//! resolves every name to a committed or same-transaction `metric_names` row, and names are never deleted.
//! Decoding checks everything it reads and reports a damaged pack as [`StoreError::BadStoredValue`].

use crate::{RevisionSamples, RunSummary, StoreError};
use culprit_core::model::Revision;
use std::collections::{BTreeMap, HashMap};

/// One run's metrics, encoded for `run_metric_packs`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pack {
    pub metric_count: i64,
    pub metric_ids: Vec<u8>,
    pub metric_values: Vec<u8>,
}

/// Encodes `(metric id, value)` pairs; the pairs are sorted by id here. Ids must be positive and distinct, which
/// `metric_names` ids are.
pub(crate) fn pack(mut pairs: Vec<(i64, f64)>) -> Pack {
    pairs.sort_unstable_by_key(|(id, _)| *id);
    let mut metric_ids = Vec::with_capacity(pairs.len() * 2);
    let mut metric_values = Vec::with_capacity(pairs.len() * 8);
    let mut previous: u64 = 0;
    for (id, value) in &pairs {
        let id = u64::try_from(*id).unwrap_or(0);
        write_varint(&mut metric_ids, id.wrapping_sub(previous));
        previous = id;
        metric_values.extend_from_slice(&value.to_le_bytes());
    }
    Pack { metric_count: pairs.len() as i64, metric_ids, metric_values }
}

/// Decodes a pack into `(metric id, value)` pairs in increasing id order, appending to `into` (cleared first).
/// The error is the reason the pack is unreadable.
pub(crate) fn unpack_into(metric_ids: &[u8], metric_values: &[u8], into: &mut Vec<(i64, f64)>) -> Result<(), String> {
    into.clear();
    if !metric_values.len().is_multiple_of(8) {
        return Err(format!("{} value bytes are not a whole number of doubles", metric_values.len()));
    }
    into.reserve(metric_values.len() / 8);
    let mut values = metric_values.chunks_exact(8);
    let mut position = 0usize;
    let mut previous: u64 = 0;
    while position < metric_ids.len() {
        let (delta, used) = read_varint(metric_ids.get(position..).unwrap_or_default())
            .ok_or_else(|| format!("metric id at byte {position} is truncated or too long"))?;
        position += used;
        if delta == 0 && !into.is_empty() {
            return Err(format!("metric ids repeat or go backwards at byte {position}"));
        }
        let id = previous.checked_add(delta).filter(|id| *id <= i64::MAX as u64).ok_or("metric id overflows")?;
        previous = id;
        let bytes = values.next().ok_or("fewer values than metric ids")?;
        let mut array = [0u8; 8];
        array.copy_from_slice(bytes);
        into.push((id as i64, f64::from_le_bytes(array)));
    }
    if values.next().is_some() {
        return Err("more values than metric ids".into());
    }
    Ok(())
}

fn write_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The value and the number of bytes used, or `None` for a truncated or over-long varint.
fn read_varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value: u64 = 0;
    for (index, byte) in bytes.iter().enumerate().take(10) {
        let part = u64::from(byte & 0x7f);
        let shift = 7 * index as u32;
        if shift == 63 && part > 1 {
            return None;
        }
        value |= part << shift;
        if byte & 0x80 == 0 {
            return Some((value, index + 1));
        }
    }
    None
}

/// The stored packs of a sample query, decoded, by run id.
pub(crate) type Unpacked = HashMap<i64, Vec<(i64, f64)>>;

/// Decodes the `(run id, metric_ids, metric_values)` rows of a query, naming the damaged run on failure.
pub(crate) fn unpack_rows<'a>(
    location: &str,
    rows: impl IntoIterator<Item = (i64, &'a [u8], &'a [u8])>,
) -> Result<Unpacked, StoreError> {
    let mut unpacked = HashMap::new();
    for (run, ids, values) in rows {
        let mut pairs = Vec::new();
        unpack_into(ids, values, &mut pairs).map_err(|reason| damaged(location, run, reason))?;
        unpacked.insert(run, pairs);
    }
    Ok(unpacked)
}

pub(crate) fn damaged(location: &str, run: i64, reason: String) -> StoreError {
    StoreError::BadStoredValue { location: location.to_string(), what: format!("the metrics of run {run}"), reason }
}

/// The one place where a run stored before QA 47 gets lkp's names for its time monitor's rows.
///
/// Culprit stored them as `time.elapsed_time`, `time.user_time`, ...; lkp's stats name them after the program
/// (`stress-ng.time.user_time`, see `culprit_core::model::time_field`), and so does every run Culprit stores now.
/// Rewriting the packed blobs of every old run in a migration would read and write every run of a store; instead
/// both back ends read every run's metrics through this function (a run's own, and the samples of a comparison), and
/// a run's `time.<field>` comes back as `<program>.time.<field>`. The program is the one prefix of the run's own
/// metrics (`stress-ng` of `stress-ng.xattr.ops_per_sec`, `command` of `command.elapsed_time`): a run of one program
/// has no other. A run without such a metric (one that failed before its program printed any) or with two keeps its
/// bare names, as there is no program to name them by.
///
/// `unpacked` holds each run's `(metric id, value)` pairs and `ids` with `names` the names of every id they use,
/// in the same order ([`union_of_ids`]). Aliased names get ids of their own: the id of the same name among `names`
/// when there is one, so that an old run's values join a new run's row, else a negative id no stored metric has.
/// The result is the new `ids` and `names` (again sorted by id), the pairs renumbered and re-sorted in place.
pub(crate) fn lkp_time_names(unpacked: &mut Unpacked, ids: Vec<i64>, names: Vec<String>) -> (Vec<i64>, Vec<String>) {
    // Almost every query has no old run: the names tell, without touching a pack.
    if !names.iter().any(|name| name.starts_with("time.")) {
        return (ids, names);
    }
    let mut by_name: HashMap<String, i64> = names.iter().cloned().zip(ids.iter().copied()).collect();
    let mut name_of: HashMap<i64, String> = ids.iter().copied().zip(names).collect();
    let mut next_alias_id = -1i64;
    for pairs in unpacked.values_mut() {
        let bare = |id: &i64, name_of: &HashMap<i64, String>| name_of.get(id).is_some_and(|n| n.starts_with("time."));
        if !pairs.iter().any(|(id, _)| bare(id, &name_of)) {
            continue;
        }
        let Some(program) = run_program(pairs.iter().filter_map(|(id, _)| name_of.get(id).map(String::as_str))) else {
            continue;
        };
        let has: std::collections::HashSet<i64> = pairs.iter().map(|(id, _)| *id).collect();
        let mut renamed = Vec::with_capacity(pairs.len());
        for (id, value) in pairs.drain(..) {
            let Some(field) = name_of.get(&id).and_then(|n| n.strip_prefix("time.")) else {
                renamed.push((id, value));
                continue;
            };
            let alias = culprit_core::model::time_metric(&program, field);
            let alias_id = match by_name.get(&alias) {
                Some(known) => *known,
                None => {
                    let fresh = next_alias_id;
                    next_alias_id -= 1;
                    by_name.insert(alias.clone(), fresh);
                    name_of.insert(fresh, alias);
                    fresh
                }
            };
            // A run that somehow holds both names keeps the one under lkp's name.
            if !has.contains(&alias_id) {
                renamed.push((alias_id, value));
            }
        }
        renamed.sort_unstable_by_key(|(id, _)| *id);
        *pairs = renamed;
    }
    let ids = union_of_ids(unpacked);
    let names = ids.iter().map(|id| name_of.get(id).cloned().unwrap_or_default()).collect();
    (ids, names)
}

/// One run's metrics by name, from its pairs and the names of their ids in the same order, with lkp's names for the
/// time monitor's rows of a run stored before QA 47 ([`lkp_time_names`]).
pub(crate) fn run_metrics(pairs: Vec<(i64, f64)>, names: Vec<String>) -> BTreeMap<String, f64> {
    let ids: Vec<i64> = pairs.iter().map(|(id, _)| *id).collect();
    let mut unpacked = Unpacked::from([(0, pairs)]);
    let (_, names) = lkp_time_names(&mut unpacked, ids, names);
    // One run's ids are the union of its own: `names` follows its pairs' order.
    let pairs = unpacked.remove(&0).unwrap_or_default();
    names.into_iter().zip(pairs).map(|(name, (_, value))| (name, value)).collect()
}

/// The program of a run from its metric names: the one first part of its program metrics' names, leaving out
/// Culprit's bookkeeping rows and lkp's marks of an imported run (`dmesg.`, `last_state.`, ...), which are no
/// program's. `None` when there is none or more than one.
fn run_program<'a>(names: impl Iterator<Item = &'a str>) -> Option<String> {
    const NO_PROGRAMS: [&str; 4] = ["dmesg", "kmsg", "last_state", "stderr"];
    let mut program: Option<&str> = None;
    for name in names {
        let own = culprit_core::model::MetricClass::of(name).is_benchmarks_own(name);
        let Some((prefix, _)) = name.split_once('.').filter(|(p, _)| own && !NO_PROGRAMS.contains(p)) else { continue };
        match program {
            Some(known) if known != prefix => return None,
            _ => program = Some(prefix),
        }
    }
    program.map(str::to_string)
}

/// The names of `ids` that the metric filter keeps (`None` for the ones it drops), in the same order.
pub(crate) fn kept_names(names: Vec<String>, metric_filter: Option<&regex::Regex>) -> Vec<Option<String>> {
    names.into_iter().map(|name| metric_filter.is_none_or(|re| re.is_match(&name)).then_some(name)).collect()
}

/// Every metric id the packs mention, sorted and distinct.
pub(crate) fn union_of_ids(unpacked: &Unpacked) -> Vec<i64> {
    let mut ids: Vec<i64> = Vec::new();
    let mut runs = unpacked.values();
    // Runs of one job mostly share one metric set: start from the first and add only what others have beyond it.
    if let Some(first) = runs.next() {
        ids.extend(first.iter().map(|(id, _)| *id));
    }
    for pairs in runs {
        if pairs.len() == ids.len() && pairs.iter().zip(&ids).all(|((a, _), b)| a == b) {
            continue;
        }
        ids.extend(pairs.iter().map(|(id, _)| *id));
        ids.sort_unstable();
        ids.dedup();
    }
    ids
}

/// The metric names of `ids` (sorted, distinct) from `(id, name)` rows in any order; an id without a name is
/// a damaged store.
pub(crate) fn names_in_order(
    location: &str,
    ids: &[i64],
    rows: impl IntoIterator<Item = (i64, String)>,
) -> Result<Vec<String>, StoreError> {
    let mut names: Vec<Option<String>> = vec![None; ids.len()];
    for (id, name) in rows {
        if let Ok(index) = ids.binary_search(&id) {
            if let Some(slot) = names.get_mut(index) {
                *slot = Some(name);
            }
        }
    }
    ids.iter()
        .zip(names)
        .map(|(id, name)| {
            name.ok_or_else(|| StoreError::BadStoredValue {
                location: location.to_string(),
                what: format!("metric id {id}"),
                reason: "a stored run refers to it but metric_names has no such id".into(),
            })
        })
        .collect()
}

/// Whether reading names by an id range (one scan) beats looking each id up: when the ids fill a good part of
/// their range, as the metrics of one job do.
pub(crate) fn dense(ids: &[i64]) -> bool {
    match (ids.first(), ids.last()) {
        (Some(first), Some(last)) => (last - first).saturating_add(1) <= (ids.len() as i64).saturating_mul(4),
        _ => false,
    }
}

/// A revision's runs as a sample query selected them (filtered, in run-id order).
pub(crate) struct RevisionRuns {
    pub revision: Revision,
    pub runs: Vec<RunSummary>,
}

impl RevisionRuns {
    /// The ids of the successful runs, whose metrics are samples.
    pub fn ok_run_ids(&self) -> impl Iterator<Item = i64> + '_ {
        self.runs.iter().filter(|run| run.failure_reason.is_none()).map(|run| run.id.0)
    }
}

/// Builds one revision's samples. `ids` is [`union_of_ids`] of the packs and `names` their names in the same
/// order, `None` for a metric the query's regex excludes. A run without a pack (no metrics) adds no values, and
/// a metric some runs lack gets fewer values than there are ok runs.
pub(crate) fn revision_samples(
    selected: RevisionRuns,
    unpacked: &Unpacked,
    ids: &[i64],
    names: &[Option<String>],
) -> RevisionSamples {
    let mut ok_runs = Vec::new();
    let mut failed_runs = 0usize;
    let mut failure_reasons: Vec<String> = Vec::new();
    for run in &selected.runs {
        match &run.failure_reason {
            Some(reason) => {
                failed_runs += 1;
                if !failure_reasons.contains(reason) {
                    failure_reasons.push(reason.clone());
                }
            }
            None => ok_runs.push(run.id),
        }
    }
    let mut columns: Vec<Vec<f64>> = vec![Vec::new(); ids.len()];
    for run in &ok_runs {
        let Some(pairs) = unpacked.get(&run.0) else { continue };
        // Both the run's ids and `ids` are increasing, so one forward walk finds every column without hashing.
        let mut index = 0usize;
        for (id, value) in pairs {
            while ids.get(index).is_some_and(|known| known < id) {
                index += 1;
            }
            let kept = ids.get(index) == Some(id) && names.get(index).is_some_and(Option::is_some);
            if let (true, Some(column)) = (kept, columns.get_mut(index)) {
                if column.capacity() == 0 {
                    column.reserve_exact(ok_runs.len());
                }
                column.push(*value);
            }
        }
    }
    let metrics: BTreeMap<String, Vec<f64>> = names
        .iter()
        .zip(columns)
        .filter_map(|(name, column)| match name {
            Some(name) if !column.is_empty() => Some((name.clone(), column)),
            _ => None,
        })
        .collect();
    RevisionSamples { revision: selected.revision, ok_runs, failed_runs, failure_reasons, metrics }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_round_trip_exactly_in_id_order() {
        let cases: Vec<Vec<(i64, f64)>> = vec![
            vec![],
            vec![(1, 1.5)],
            vec![(300, -0.0), (2, f64::INFINITY), (1, f64::NEG_INFINITY), (i64::MAX, f64::MAX)],
            (1..=20_000).map(|id| (id * 3, id as f64 / 7.0)).collect(),
        ];
        for pairs in cases {
            let packed = pack(pairs.clone());
            let mut expected = pairs.clone();
            expected.sort_by_key(|(id, _)| *id);
            let mut decoded = Vec::new();
            assert_eq!(unpack_into(&packed.metric_ids, &packed.metric_values, &mut decoded), Ok(()));
            assert_eq!(packed.metric_count, expected.len() as i64);
            let bits = |v: &[(i64, f64)]| v.iter().map(|(id, x)| (*id, x.to_bits())).collect::<Vec<_>>();
            assert_eq!(bits(&decoded), bits(&expected));
        }
        let nan = pack(vec![(7, f64::NAN)]);
        let mut decoded = Vec::new();
        assert_eq!(unpack_into(&nan.metric_ids, &nan.metric_values, &mut decoded), Ok(()));
        assert!(decoded.len() == 1 && decoded.iter().all(|(id, v)| *id == 7 && v.is_nan()));
    }

    #[test]
    fn consecutive_ids_take_one_byte_each() {
        let packed = pack((1000..3000).map(|id| (id, 0.0)).collect());
        assert_eq!(packed.metric_ids.len(), 2 + 1999);
    }

    #[test]
    fn damaged_packs_are_errors_never_panics() {
        let good = pack(vec![(1, 1.0), (2, 2.0), (200, 3.0)]);
        let mut decoded = Vec::new();
        let cases: Vec<(Vec<u8>, Vec<u8>)> = vec![
            (good.metric_ids.clone(), good.metric_values[..23].to_vec()),
            (good.metric_ids.clone(), good.metric_values[..16].to_vec()),
            (good.metric_ids[..good.metric_ids.len() - 1].to_vec(), good.metric_values.clone()),
            (vec![0x80], vec![0; 8]),
            (vec![0xff; 11], vec![0; 8]),
            (vec![1, 0], vec![0; 16]),
            (vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x05], vec![0; 16]),
            (vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x7f], vec![0; 16]),
        ];
        for (ids, values) in cases {
            assert!(unpack_into(&ids, &values, &mut decoded).is_err(), "{ids:?} / {} value bytes", values.len());
        }
        // Arbitrary bytes: an answer either way, never a panic.
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for length in 0..200usize {
            let bytes: Vec<u8> = (0..length)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect();
            let _ = unpack_into(&bytes, &bytes, &mut decoded);
        }
    }

    #[test]
    fn qa47_old_runs_time_rows_read_under_lkps_names_and_join_new_runs_rows() {
        let names: Vec<String> = ["stress-ng.cpu.ops", "time.user_time", "stress-ng.time.user_time", "fio.write_iops"]
            .iter()
            .map(|n| n.to_string())
            .collect();
        let mut unpacked = Unpacked::new();
        // An old stress-ng run, a new one, an old fio run and an old run that failed before its program printed.
        unpacked.insert(1, vec![(1, 10.0), (2, 0.5)]);
        unpacked.insert(2, vec![(1, 11.0), (3, 0.6)]);
        unpacked.insert(3, vec![(2, 0.7), (4, 99.0)]);
        unpacked.insert(4, vec![(2, 0.8)]);
        let (ids, names) = lkp_time_names(&mut unpacked, vec![1, 2, 3, 4], names);
        let named = |run: i64| -> Vec<(String, f64)> {
            let pairs = unpacked.get(&run).cloned().unwrap_or_default();
            pairs.iter().map(|(id, v)| (names[ids.binary_search(id).unwrap_or(0)].clone(), *v)).collect()
        };
        assert_eq!(named(1), [("stress-ng.cpu.ops".to_string(), 10.0), ("stress-ng.time.user_time".to_string(), 0.5)]);
        assert_eq!(named(2), [("stress-ng.cpu.ops".to_string(), 11.0), ("stress-ng.time.user_time".to_string(), 0.6)]);
        assert!(named(3).contains(&("fio.time.user_time".to_string(), 0.7)), "{:?}", named(3));
        assert_eq!(named(4), [("time.user_time".to_string(), 0.8)]);
        // The old and new stress-ng runs share one id: one row of a comparison.
        assert_eq!(unpacked[&1][1].0, unpacked[&2][1].0);
        let one = run_metrics(vec![(1, 1.0), (2, 2.0)], vec!["command.elapsed_time".into(), "time.swaps".into()]);
        assert_eq!(one.keys().collect::<Vec<_>>(), ["command.elapsed_time", "command.time.swaps"]);
    }

    #[test]
    fn id_unions_and_name_lookups() {
        let mut unpacked = Unpacked::new();
        unpacked.insert(1, vec![(2, 0.0), (5, 0.0), (9, 0.0)]);
        unpacked.insert(2, vec![(2, 0.0), (5, 0.0), (9, 0.0)]);
        unpacked.insert(3, vec![(1, 0.0), (5, 0.0), (10, 0.0)]);
        let ids = union_of_ids(&unpacked);
        assert_eq!(ids, vec![1, 2, 5, 9, 10]);
        let rows = vec![(10, "j".to_string()), (3, "unused".to_string()), (1, "a".into()), (2, "b".into()), (5, "e".into()), (9, "i".into())];
        assert_eq!(names_in_order("db", &ids, rows.clone()).ok(), Some(vec!["a".into(), "b".into(), "e".into(), "i".into(), "j".into()]));
        let missing = names_in_order("db", &ids, rows.into_iter().filter(|(id, _)| *id != 9));
        assert!(matches!(missing, Err(StoreError::BadStoredValue { what, .. }) if what == "metric id 9"));
        for (ids, expected) in [(vec![], false), (vec![5], true), (vec![1, 2, 3, 4], true), (vec![1, 100], false)] {
            assert_eq!(dense(&ids), expected, "{ids:?}");
        }
    }
}
