//! `culprit results`: what the store holds, one line per job, revision, machine and build.

use crate::cli::ResultsArgs;
use crate::cmd::compare::Filters;
use crate::output;
use anyhow::Result;
use culprit_core::model::{abbreviate, nul_shown, Revision};
use culprit_store::{result_group_key, Build, ResultGroupKey, RunFilter, Store};
use std::collections::HashMap;

pub fn run(store: &dyn Store, args: &ResultsArgs) -> Result<()> {
    let filter = RunFilter {
        job: args.job.clone(),
        testcase: args.testcase.clone(),
        hostname: args.machine.clone(),
        ..RunFilter::default()
    };
    if let Some(id) = args.run {
        return one_run(store, culprit_store::RunId(id), args.json);
    }
    if args.failures {
        return failures(store, filter, args.json);
    }
    if args.json {
        return output::println(&serde_json::to_string_pretty(&summary_json(store, &filter)?)?);
    }
    output::print(&summary_text(store, &filter)?)
}

/// The summary as JSON: each job, revision and machine with the ids of its runs (`run_ids`, in the order they were
/// stored), which `culprit results --run ID` shows in full. Without them only a failed run's id could be found
/// (`--failures`), while the notes of compare and report send the reader to `--run ID` for runs that succeeded.
fn summary_json(store: &dyn Store, filter: &RunFilter) -> Result<serde_json::Value> {
    let runs = store.list_runs(filter)?;
    let mut ids: HashMap<ResultGroupKey, Vec<i64>> = HashMap::new();
    for run in &runs {
        ids.entry(result_group_key(run)).or_default().push(run.id.0);
    }
    let mut groups = Vec::new();
    for group in culprit_store::summarize(&runs) {
        let key = group.key();
        let mut value = serde_json::to_value(&group)?;
        if let Some(object) = value.as_object_mut() {
            object.insert("run_ids".into(), ids.remove(&key).unwrap_or_default().into());
        }
        groups.push(value);
    }
    Ok(serde_json::Value::Array(groups))
}

/// The summary `culprit results` prints (and the dashboard shows): one line per job, revision and machine, or a
/// line saying that nothing matches.
pub fn summary_text(store: &dyn Store, filter: &RunFilter) -> Result<String> {
    // One listing of the runs serves the lines and the names: the store's summary is this very grouping of it.
    let runs = store.list_runs(filter)?;
    let groups = culprit_store::summarize(&runs);
    if groups.is_empty() {
        return Ok(match filters_text(filter).as_str() {
            "" => format!(
                "no results in {}: the store holds no runs yet (culprit run or culprit import adds them)\n",
                store.location()
            ),
            flags => format!("no results in {} match{flags}\n", store.location()),
        });
    }
    // Profiling runs (`bisect --profile`) are counted in ok and failed, as stored runs, but compare and the report
    // read them apart from the plain ones: a column says how many there are, so that "8 ok" is not read as the runs
    // a table of that revision stands on.
    let profiling_filter = RunFilter { kind: Some(culprit_store::RunKind::Profiling), ..filter.clone() };
    let mut profiling: HashMap<ResultGroupKey, u64> = HashMap::new();
    for run in store.list_runs(&profiling_filter)? {
        *profiling.entry(result_group_key(&run)).or_default() += 1;
    }
    // The build column is there when the runs listed are of several builds (lkp's rootfs/kconfig/compiler), which
    // compare reads as tables of their own; one build throughout says nothing a line needs.
    let builds: std::collections::BTreeSet<&Build> = groups.iter().map(|g| &g.build).collect();
    let show_builds = builds.len() > 1;
    let mut header = vec!["job".to_string(), "revision".into(), "machine".into()];
    if show_builds {
        header.push("build".into());
    }
    header.extend(["ok".into(), "failed".into(), "last run".into()]);
    if !profiling.is_empty() {
        let failed = header.len() - 2;
        header[failed] = "failed  profiling".into();
    }
    let mut rows = vec![header];
    // A job is listed under one name, its newest; two jobs of one name are told apart by their ids (QA 45).
    // The names are compare's, from the runs in the store's order: a group's own name is of its newest run, while a
    // job's is of the newest run of all its groups (QA 46: results named a job by its oldest runs).
    let names = crate::cmd::compare::job_names(&runs);
    for g in &groups {
        let revision = match &g.revision {
            Revision::Commit { sha, describe, .. } => match describe {
                Some(d) if !sha.starts_with(d.as_str()) => format!("{} ({d})", abbreviate(sha, 12)),
                _ => abbreviate(sha, 12).to_string(),
            },
            Revision::Label { name } => format!("label:{name}"),
        };
        let mut row = vec![
            names.get(g.job_id.as_str()).cloned().unwrap_or_else(|| g.job_name.clone()),
            revision,
            g.hostname.clone(),
        ];
        if show_builds {
            row.push(g.build.label());
        }
        row.extend([
            g.ok_runs.to_string(),
            match profiling.get(&g.key()) {
                _ if profiling.is_empty() => g.failed_runs.to_string(),
                count => format!("{:<6}  {}", g.failed_runs, count.copied().unwrap_or(0)),
            },
            format_time(g.last_ended_at),
        ]);
        rows.push(row);
    }
    Ok(render_columns(&rows))
}

/// `--failures`: every failed run with its reason, oldest first.
fn failures(store: &dyn Store, filter: RunFilter, json: bool) -> Result<()> {
    let runs = store.list_runs(&RunFilter { status: Some(culprit_store::RunStatus::Failed), ..filter.clone() })?;
    if json {
        return output::println(&serde_json::to_string_pretty(&runs)?);
    }
    if runs.is_empty() {
        return output::println(&match filters_text(&filter).as_str() {
            "" => format!("no failed runs in {}", store.location()),
            flags => format!("no failed runs in {} match{flags}", store.location()),
        });
    }
    let mut out = String::new();
    for r in &runs {
        out.push_str(&format!(
            "run {}  {}  {}  {}  {}\n    {}\n",
            r.id,
            format_time(r.started_at),
            r.job_name,
            match &r.revision {
                Revision::Commit { sha, .. } => abbreviate(sha, 12).to_string(),
                Revision::Label { name } => format!("label:{name}"),
            },
            r.hostname,
            // A reason stored before reasons showed their NULs is shown as a new one is.
            nul_shown(r.failure_reason.as_deref().unwrap_or("")).replace('\n', "\n    ")
        ));
    }
    output::print(&out)
}

/// `results --run ID`: everything stored about one run, raw outputs included, so that a failure's reason ("see the
/// run's raw output") can be followed without an lkp result root or sqlite3. Raw outputs that are not UTF-8 are
/// shown with the invalid bytes replaced, and the NUL bytes of the text (a crashed program's garbage, which a
/// terminal prints as nothing) as U+2400; `--json` gives the stored text as it is.
fn one_run(store: &dyn Store, id: culprit_store::RunId, json: bool) -> Result<()> {
    let record = store.run(id)?;
    // A profiling run's benchmark numbers carry perf's overhead: the run says what it was.
    let of_its_revision = RunFilter {
        job: Some(record.job_id.clone()),
        revision_keys: vec![record.revision.key().to_string()],
        ..RunFilter::default()
    };
    let kind = store.list_runs(&of_its_revision)?.into_iter().find(|run| run.id == id).map(|run| run.kind);
    let kind = kind.unwrap_or_default();
    if json {
        let raw: Vec<serde_json::Value> = record
            .raw_outputs
            .iter()
            .map(|r| serde_json::json!({ "name": r.name, "content": String::from_utf8_lossy(&r.content) }))
            .collect();
        let mut value = serde_json::to_value(&record)?;
        output::common_names(&mut value);
        if let Some(object) = value.as_object_mut() {
            object.insert("raw_outputs".to_string(), serde_json::Value::Array(raw));
            object.insert("id".to_string(), serde_json::Value::from(id.0));
            object.insert("kind".to_string(), serde_json::Value::from(kind.as_str()));
        }
        return output::println(&serde_json::to_string_pretty(&value)?);
    }
    let mut out = format!(
        "run {}  {}  {}  {}  {}\n",
        id.0,
        format_time(record.started_at),
        record.job_name,
        match &record.revision {
            Revision::Commit { sha, .. } => abbreviate(sha, 12).to_string(),
            Revision::Label { name } => format!("label:{name}"),
        },
        record.machine.hostname
    );
    out.push_str(&match &record.outcome {
        culprit_core::model::RunOutcome::Ok => format!("outcome: ok, {:.2} s\n", record.ended_at - record.started_at),
        culprit_core::model::RunOutcome::Failed { reason } => format!("outcome: failed: {}\n", nul_shown(reason)),
    });
    out.push_str(&format!("scratch filesystem: {}\n", scratch_text(record.scratch.as_ref())));
    if kind == culprit_store::RunKind::Profiling {
        out.push_str(
            "kind: profiling run (`culprit bisect --profile`): perf attached, so its benchmark numbers are not \
             comparable with a plain run's (compare and the report read its perf rows only)\n",
        );
    }
    out.push_str(&format!("metrics ({}):\n", record.metrics.len()));
    for (name, value) in &record.metrics {
        out.push_str(&format!("  {name}: {value}\n"));
    }
    for raw in &record.raw_outputs {
        let text = String::from_utf8_lossy(&raw.content);
        out.push_str(&format!("raw output {} ({} bytes):\n", raw.name, raw.content.len()));
        out.push_str(&nul_shown(&text));
        if !text.ends_with('\n') {
            out.push('\n');
        }
    }
    // A failed build keeps its log as a raw output and as the run's stderr: the same text is not printed twice.
    if !record.stderr.is_empty() {
        match record.raw_outputs.iter().find(|raw| raw.content == record.stderr.as_bytes()) {
            Some(raw) => out.push_str(&format!("stderr: the same as {}\n", raw.name)),
            None => {
                out.push_str("stderr:\n");
                out.push_str(&nul_shown(&record.stderr));
                if !record.stderr.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
    }
    output::print(&out)
}

/// A run's scratch filesystem as `results --run` prints it: its type, the mount's source and the directory
/// (`ext4 (source /dev/vda1), directory /tmp/culprit-scratch`), each part the run recorded; an imported lkp run knows
/// its job's `fs` and `disk` only.
fn scratch_text(scratch: Option<&culprit_core::model::ScratchFilesystem>) -> String {
    let Some(scratch) = scratch else {
        return "not recorded (a run stored before Culprit recorded it, or imported without an fs)".to_string();
    };
    let mut text = scratch.fs_type.clone();
    if !scratch.source.is_empty() {
        text.push_str(&format!(" (source {})", scratch.source));
    }
    if !scratch.path.is_empty() {
        text.push_str(&format!(", directory {}", nul_shown(&scratch.path)));
    }
    text
}

/// The job, testcase and machine filters of `filter` as the flags that set them, after a space; empty without any,
/// so that "no results match" says which filters matched nothing.
fn filters_text(filter: &RunFilter) -> String {
    let flags = Filters {
        job: filter.job.as_deref(),
        testcase: filter.testcase.as_deref(),
        machine: filter.hostname.as_deref(),
    }
    .flags();
    if flags.is_empty() {
        flags
    } else {
        format!(" {flags}")
    }
}

/// Left-aligned columns separated by two spaces, for plain-text mail. Rows are arrays or vectors of cells; a row
/// shorter than the longest leaves its missing cells out.
pub fn render_columns<Row: AsRef<[String]>>(rows: &[Row]) -> String {
    let mut widths: Vec<usize> = Vec::new();
    for row in rows {
        for (i, cell) in row.as_ref().iter().enumerate() {
            let width = cell.chars().count();
            match widths.get_mut(i) {
                Some(w) => *w = (*w).max(width),
                None => widths.push(width),
            }
        }
    }
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, (cell, w)) in row.as_ref().iter().zip(&widths).enumerate() {
            if i + 1 == widths.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<w$}  "));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// UTC time as `YYYY-MM-DD HH:MM:SS`, computed without a date library.
pub fn format_time(epoch: f64) -> String {
    let secs = epoch.max(0.0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc_times() {
        assert_eq!(format_time(0.0), "1970-01-01 00:00:00");
        assert_eq!(format_time(1_421_007_515.0), "2015-01-11 20:18:35");
        assert_eq!(format_time(951_782_400.0), "2000-02-29 00:00:00");
    }

    #[test]
    fn columns_align() {
        let rows = [["a".to_string(), "bb".into()], ["ccc".into(), "d".into()]];
        assert_eq!(render_columns(&rows), "a    bb\nccc  d\n");
    }
}
