//! Matrix expansion: every list in a job becomes one atomic job per value, as lkp-tests' `Job#each_job` does.
//!
//! Which lists expand: every list under a parameter or program key, at top level or nested in a program's hash
//! (`fio-setup-basic: {rw: [randread, randwrite]}`), and the result-path axes among the metadata (`commit`,
//! `kconfig`, `rootfs`, `*_commit`). Other metadata lists (`need_kconfig`, `queue_cmdline_keys`) and monitor options
//! (perf-stat's event list) stay lists, as in lkp.
//!
//! Order, as in lkp: the first list in file order (depth first) is the outermost loop, so for
//! `{group: [g1, g2], test: [t1, t2]}` the jobs come as g1-t1, g1-t2, g2-t1, g2-t2. A value that is itself a hash or
//! a list is substituted and then expanded in turn, so the number of jobs is the product over keys of the sum over
//! each list's values of what each value expands to; for lists of scalars that is the product of the lengths.

use crate::atomic::AtomicJob;
use crate::load::{JobFile, MergedJob};
use crate::table::{is_expanded_metadata_key, key_role, KeyRole};
use crate::template;
use crate::JobError;
use serde_yaml::mapping::Index;
use serde_yaml::{Mapping, Value};
use std::collections::BTreeMap;

/// The most atomic jobs one file may expand to; more is almost surely a mistake (and would take days to run).
pub const MAX_ATOMIC_JOBS: usize = 10_000;

/// Whether the lists under a top-level key expand, and whether to look inside its hash for more.
fn top_level_expands(key: &str) -> bool {
    match key_role(key) {
        KeyRole::Monitor(_) => false,
        KeyRole::Metadata => is_expanded_metadata_key(key),
        KeyRole::Program(..) | KeyRole::Setup(_) | KeyRole::Param => true,
    }
}

/// A list found while counting: its key path and length.
struct ListSeen {
    path: String,
    len: usize,
}

/// Counts the atomic jobs `job` expands to (saturating), noting every list, and rejects empty lists.
fn count_mapping(
    mapping: &Mapping,
    top: bool,
    path: &mut Vec<String>,
    lists: &mut Vec<ListSeen>,
) -> Result<u128, Vec<String>> {
    let mut product: u128 = 1;
    for (key, value) in mapping {
        let key = key.as_str().unwrap_or_default();
        if top && !top_level_expands(key) {
            continue;
        }
        path.push(key.to_string());
        let count = count_value(value, path, lists)?;
        path.pop();
        product = product.saturating_mul(count);
    }
    Ok(product)
}

fn count_value(
    value: &Value,
    path: &mut Vec<String>,
    lists: &mut Vec<ListSeen>,
) -> Result<u128, Vec<String>> {
    match value {
        Value::Mapping(inner) => count_mapping(inner, false, path, lists),
        Value::Sequence(items) => {
            if items.is_empty() {
                return Err(path.clone());
            }
            lists.push(ListSeen {
                path: path.join("."),
                len: items.len(),
            });
            let mut sum: u128 = 0;
            for item in items {
                sum = sum.saturating_add(count_value(item, path, lists)?);
            }
            Ok(sum)
        }
        _ => Ok(1),
    }
}

/// The key path of the first list to expand, depth first in file order.
fn first_list(mapping: &Mapping, top: bool) -> Option<Vec<Value>> {
    for (key, value) in mapping {
        if top && !top_level_expands(key.as_str().unwrap_or_default()) {
            continue;
        }
        match value {
            Value::Sequence(_) => return Some(vec![key.clone()]),
            Value::Mapping(inner) => {
                if let Some(mut rest) = first_list(inner, false) {
                    rest.insert(0, key.clone());
                    return Some(rest);
                }
            }
            _ => {}
        }
    }
    None
}

/// The value at key path `path` (outermost key first, as YAML values or as text) of nested hashes, to read or set.
pub(crate) fn slot_mut<'a, K: Index>(mapping: &'a mut Mapping, path: &[K]) -> Option<&'a mut Value> {
    let (first, rest) = path.split_first()?;
    let value = mapping.get_mut(first)?;
    if rest.is_empty() {
        Some(value)
    } else {
        slot_mut(value.as_mapping_mut()?, rest)
    }
}

/// Expands one job into its matrix points, in lkp's order. The caller has bounded the count.
fn expand_mapping(job: Mapping) -> Vec<Mapping> {
    let mut done = Vec::new();
    // An explicit stack instead of recursion: a file may hold thousands of one-value lists.
    let mut pending = vec![job];
    while let Some(job) = pending.pop() {
        let Some(path) = first_list(&job, true) else {
            done.push(job);
            continue;
        };
        let mut template = job;
        let items = match slot_mut(&mut template, &path) {
            Some(slot) => match std::mem::take(slot) {
                Value::Sequence(items) => items,
                other => vec![other],
            },
            None => continue,
        };
        for item in items.into_iter().rev() {
            let mut point = template.clone();
            if let Some(slot) = slot_mut(&mut point, &path) {
                *slot = item;
            }
            pending.push(point);
        }
    }
    done
}

impl JobFile {
    /// The number of atomic jobs this file expands to (saturating at `u128::MAX`), without expanding it.
    pub fn count_atomic_jobs(&self) -> Result<u128, JobError> {
        self.count_and_lists().map(|(count, _)| count)
    }

    fn count_and_lists(&self) -> Result<(u128, Vec<ListSeen>), JobError> {
        let mut total: u128 = 0;
        let mut lists = Vec::new();
        for job in self.merged_jobs() {
            let count = count_mapping(&job.params, true, &mut Vec::new(), &mut lists)
                .map_err(|path| self.empty_list_error(&job, &path))?;
            total = total.saturating_add(count);
        }
        Ok((total, lists))
    }

    fn empty_list_error(&self, job: &MergedJob, path: &[String]) -> JobError {
        let refs: Vec<&str> = path.iter().map(String::as_str).collect();
        let mut documents = job.documents.clone();
        documents.reverse();
        JobError::EmptyList {
            place: self.source.place(self.file_name(), self.source.locate_any(&documents, &refs)),
            key: path.join("."),
        }
    }

    /// Expands every job of the file into atomic jobs, in lkp's order, each with its structure checked (program and
    /// monitor keys hold a hash or nothing). Fails on an empty list, on more than [`MAX_ATOMIC_JOBS`] jobs (naming
    /// the lists responsible), and when two atomic jobs would get the same name.
    pub fn expand(&self) -> Result<Vec<AtomicJob>, JobError> {
        let (total, lists) = self.count_and_lists()?;
        if total > MAX_ATOMIC_JOBS as u128 {
            // Name each list once, longest first: those are the ones to shorten.
            let mut lengths: BTreeMap<String, usize> = BTreeMap::new();
            for list in lists {
                let entry = lengths.entry(list.path).or_default();
                *entry = (*entry).max(list.len);
            }
            let mut named: Vec<(String, usize)> = lengths.into_iter().collect();
            named.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            let keys = named
                .iter()
                .map(|(path, len)| format!("{path} ({len} values)"))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(JobError::Explosion {
                file: self.file_name().to_string(),
                count: total.to_string(),
                limit: MAX_ATOMIC_JOBS,
                keys,
            });
        }
        let mut atomic_jobs = Vec::new();
        let mut names: BTreeMap<String, usize> = BTreeMap::new();
        let mut written: std::collections::HashSet<String> = std::collections::HashSet::new();
        for job in self.merged_jobs() {
            let last_document = job.documents.last().copied().unwrap_or(0);
            for params in expand_mapping(job.params) {
                // lkp makes no job of a point whose template gives nil.
                let Some(params) = template::compute_point(params).map_err(|failed| {
                    let refs: Vec<&str> = failed.path.iter().map(String::as_str).collect();
                    let mut documents = job.documents.clone();
                    documents.reverse();
                    let key_line = self.source.locate_any(&documents, &refs);
                    // A template that is an item of a list is placed at its own line, below its key's, where its
                    // first line's text is (quoting kept each line's text after the indentation).
                    let first_line = failed.text.lines().next().unwrap_or_default().trim();
                    let line = key_line
                        .filter(|_| !first_line.is_empty())
                        .and_then(|from| self.source.line_holding(from, first_line))
                        .or(key_line);
                    JobError::Template {
                        place: self.source.place(self.file_name(), line),
                        key: failed.path.join("."),
                        reason: failed.error.to_string(),
                    }
                })?
                else {
                    continue;
                };
                self.refuse_roles_off_localhost(&job.documents, &params)?;
                let atomic = AtomicJob::new(
                    self.file_name(),
                    self.source.clone(),
                    job.documents.clone(),
                    params,
                );
                atomic.check_structure()?;
                let name = atomic.name();
                // Two documents may give one job twice (lkp's fio-basic-1ssd-write.yaml gives ext4, io_uring and
                // write in its first document and again in its fourth): lkp's split-job writes the same file twice,
                // so the job is taken once. Only jobs that differ but share a name are refused.
                if !written.insert(atomic.to_yaml()) {
                    continue;
                }
                if let Some(first) = names.get(&name) {
                    let programs: Vec<String> = atomic.programs().iter().map(|p| p.key.clone()).collect();
                    if programs.len() > 1 {
                        return Err(JobError::InheritedProgram {
                            file: self.file_name().to_string(),
                            document: last_document + 1,
                            count: programs.len(),
                            programs: programs.join(", "),
                        });
                    }
                    return Err(JobError::DuplicateName {
                        file: self.file_name().to_string(),
                        name,
                        first: first + 1,
                        second: last_document + 1,
                    });
                }
                names.insert(name, last_document);
                atomic_jobs.push(atomic);
            }
        }
        Ok(atomic_jobs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        JobFile::parse(text, "t.yaml")
            .unwrap()
            .expand()
            .unwrap()
            .iter()
            .map(AtomicJob::path_params)
            .collect()
    }

    #[test]
    fn first_list_is_the_outer_loop() {
        assert_eq!(
            names("a: [1, 2]\nb: [x, y]\n"),
            ["1-x", "1-y", "2-x", "2-y"]
        );
        assert_eq!(
            names("b: [x, y]\na: [1, 2]\n"),
            ["1-x", "2-x", "1-y", "2-y"]
        );
    }

    #[test]
    fn nested_lists_expand_depth_first() {
        assert_eq!(
            names("fio-setup-basic:\n  rw: [r, w]\n  bs: [4k, 1M]\nruntime: [5s, 9s]\nfio:\n"),
            names_in_order()
        );
    }

    fn names_in_order() -> Vec<String> {
        // rw outermost, then bs, then runtime; path_params sorts values by key (bs, runtime, rw).
        let mut out = Vec::new();
        for rw in ["r", "w"] {
            for bs in ["4k", "1M"] {
                for runtime in ["5s", "9s"] {
                    out.push(format!("{bs}-{runtime}-{rw}"));
                }
            }
        }
        out
    }

    #[test]
    fn lists_of_hashes_and_lists_expand_in_turn() {
        assert_eq!(
            names("fs: [{fs: ext4, opt: [a, b]}, {fs: xfs}]\n"),
            ["ext4-a", "ext4-b", "xfs"]
        );
        assert_eq!(names("k: [[a, b], c]\n"), ["a", "b", "c"]);
        let file = JobFile::parse(
            "fs: [{fs: ext4, opt: [a, b]}, {fs: xfs}]\nn: [1, 2]\n",
            "t.yaml",
        )
        .unwrap();
        assert_eq!(file.count_atomic_jobs().unwrap(), 6);
    }

    #[test]
    fn metadata_and_monitor_lists_stay_lists() {
        let file = JobFile::parse(
            "need_kconfig: [A, B]\nqueue_cmdline_keys: [x, y]\nperf-stat:\n  events: [a, b]\ncommit: [c1, c2]\nhackbench:\n",
            "t.yaml",
        )
        .unwrap();
        let jobs = file.expand().unwrap();
        assert_eq!(jobs.len(), 2, "only commit expands");
        let first = &jobs[0];
        assert!(
            matches!(first.params().get("need_kconfig"), Some(Value::Sequence(items)) if items.len() == 2)
        );
        assert_eq!(
            first.params().get("commit").and_then(Value::as_str),
            Some("c1")
        );
        assert_eq!(first.name(), "t-defaults-c1");
    }
}
