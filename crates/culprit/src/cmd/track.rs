//! `culprit track`: change points over a branch's history (or over a plain series), decided by
//! `culprit_core::changepoint` and THE compare verdict, with an optional bisect of each regression.
//!
//! Stored results: each (job, machine, metric) becomes a series along `git rev-list --first-parent --reverse
//! BRANCH`, one point per tested commit with all its successful runs. Treatments, documented in
//! `docs/statistics.md` (`## Track`): commits not on the branch are skipped with a note; labels are ordered by
//! the time of their first run, and only used when the job has no commit on the branch; a commit without the
//! metric is skipped for that metric; a series too short to split is skipped with a note.

use crate::cli::{BisectArgs, TimedCommandArgs, TrackArgs};
use crate::cmd::compare::Filters;
use crate::output;
use anyhow::{bail, Context, Result};
use culprit_core::changepoint::{analyze, decide, Analysis, ChangePoint, TrackOptions};
use culprit_core::compare::{printf, Verdict};
use culprit_core::model::{prose_short, Revision};
use culprit_run::git;
use culprit_store::{
    BisectSession, Build, RunFilter, RunId, RunKind, RunStatus, RunSummary, SampleQuery, Store, NEW_SESSION_STATUS,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// One analysed series and where its points come from.
pub(crate) struct Series {
    pub job_id: String,
    pub job_name: String,
    pub machine: String,
    /// The build whose runs the series reads, when the job's runs on the machine are of several (its name then ends
    /// with the build); `None` when they are of one.
    pub build: Option<Build>,
    pub metric: String,
    /// One label per point: a full SHA or a label.
    pub labels: Vec<String>,
    /// Position of each point on the branch (for "more than one commit apart"); None for labels.
    pub positions: Vec<Option<usize>>,
    /// The successful runs' values of each point.
    pub points: Vec<Vec<f64>>,
}

/// Which stored runs a history is made of.
pub(crate) struct HistoryFilter {
    pub job: Option<String>,
    pub testcase: Option<String>,
    pub machine: Option<String>,
    pub metric: Option<String>,
    /// Runs left out of the history: `track --follow` leaves out the bisects' runs (see `follow::bisect_runs`).
    pub excluded_runs: BTreeSet<RunId>,
}

/// How the tested revisions of a history are put in order.
pub(crate) enum Order<'a> {
    /// Along the first-parent history of `branch` in `repo`: commits by their place on it, labels (by the time of
    /// their first run) only for a job without a commit on it. This is `culprit track`.
    Branch { repo: &'a Path, branch: &'a str },
    /// What the store alone can order: labels by the time of their first run. Commits are skipped with a note,
    /// since only their repository knows their order; the dashboard uses this unless it is given a repository.
    Labels,
}

/// Every series of a branch's stored history, analysed and decided together (one BH family).
pub(crate) struct History {
    pub series: Vec<Series>,
    pub analyses: Vec<(String, Analysis)>,
    pub notes: Vec<String>,
    /// The branch's first-parent history as SHA to position (empty for labels), read once for the analysis and
    /// kept for what places other commits on the branch (the ends of stored bisect sessions).
    pub branch_positions: HashMap<String, usize>,
}

pub fn run(db: Option<PathBuf>, args: &TrackArgs) -> Result<ExitCode> {
    // The chart's name is checked before the analysis, which takes seconds on a long history (and, with --follow,
    // a pass's builds and runs) and whose results a bad name would otherwise lose after the fact.
    if let Some(path) = &args.plot {
        crate::cmd::plot::check_path(path)?;
    }
    if let Some(reference) = &args.follow {
        return crate::cmd::follow::run(db, args, reference);
    }
    if let Some(file) = &args.series {
        return series_file(file, args.json, args.plot.as_deref(), &track_options(args));
    }
    // Tracking only reads the history, so a mistyped --db is an error, not a new store; a bisect adds runs to it,
    // so with --bisect a read-only store is refused before the first build rather than when a run is saved.
    let mut store =
        if args.bisect { crate::cmd::open_existing_writable_store(db)? } else { crate::cmd::open_existing_store(db)? };
    stored(&mut store, args)
}

/// What a `--min-change` above the default leaves out, for the notes under the change points: a reader of "no change
/// point" must know that a smaller one would not have been shown.
fn floor_note(options: &TrackOptions) -> Option<String> {
    let floor = options.min_change_pct;
    (floor > TrackOptions::default().min_change_pct)
        .then(|| format!("a change under {} is not counted (--min-change)", printf::percent_of_fraction(floor / 100.0)))
}

/// The change-point analysis as the command line asks for it: `--min-change` (a fraction) is its floor in percent.
pub(crate) fn track_options(args: &TrackArgs) -> TrackOptions {
    let defaults = TrackOptions::default();
    TrackOptions { min_change_pct: args.min_change.map_or(defaults.min_change_pct, |f| f * 100.0), ..defaults }
}

/// A parsed series CSV.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesCsv {
    /// The metric's name, when a header line gives one (the value column's header).
    pub name: Option<String>,
    /// One label per point: the commit column, or the point's 0-based index without one.
    pub labels: Vec<String>,
    /// Each point's runs.
    pub points: Vec<Vec<f64>>,
    /// The 1-based numbers of the lines whose value is NaN or infinite (`nan`, `inf`, `1e999`), which the analysis
    /// drops; the caller says which they are.
    pub non_finite_lines: Vec<usize>,
    /// Whether the rows are `commit,value` (the labels name commits) rather than values alone (numbered labels).
    pub has_commit_column: bool,
}

/// Whether a header field can name a column: it starts with a letter or `_` and holds no `;`, tab or `|`, which
/// would mean the file separates its columns with something else than the commas this reader splits on.
fn is_column_name(field: &str) -> bool {
    field.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_') && !field.contains([';', '\t', '|'])
}

/// A plain series CSV as points: one value per line, or `commit,value` rows (the rows of one commit are one point,
/// wherever they are, in the order the commits first appear: runs written a round of every commit at a time, as
/// they are taken against drift, are the commits' runs, not a point per row (QA 58: 12 commits measured in three
/// rounds read as 36 points); without a commit column a point's label is its 0-based index). An optional header line names the
/// metric (the value column's header), which gives the direction of the verdict. Every line has the columns of the
/// first; a line with other columns, a first line that is neither numbers nor column names, or a value that is not
/// a number is an error naming `source` and the line.
pub fn parse_series(text: &str, source: &str) -> Result<SeriesCsv> {
    let mut csv = SeriesCsv {
        name: None,
        labels: Vec::new(),
        points: Vec::new(),
        non_finite_lines: Vec::new(),
        has_commit_column: false,
    };
    // The number of columns, set by the first line that is not blank or a comment.
    let mut columns: Option<usize> = None;
    // The point of each commit label seen.
    let mut point_of: HashMap<String, usize> = HashMap::new();
    // Excel's "CSV UTF-8" starts the file with a byte-order mark, which is no part of the first cell.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        // Spreadsheets quote cells (`"commit","value"`); the quotes are no part of the names or numbers.
        let fields: Vec<&str> = line.split(',').map(|f| unquote(f.trim())).collect();
        if fields.len() > 2 {
            bail!(
                "{source}:{number}: {} comma-separated columns in {line:?}; a series has one column (`value`) or two \
                 (`commit,value`)",
                fields.len()
            );
        }
        let (label, value) = match fields.as_slice() {
            [label, value] => (Some(*label), *value),
            _ => (None, unquote(line)),
        };
        let parsed = value.parse::<f64>();
        let Some(expected) = columns else {
            columns = Some(fields.len());
            csv.has_commit_column = fields.len() == 2;
            if parsed.is_err() {
                // The first line is a header only when it names columns; anything else is more likely a file in
                // another format than a header to skip.
                if !is_column_name(value) || label.is_some_and(|l| !l.is_empty() && !is_column_name(l)) {
                    bail!(
                        "{source}:{number}: {line:?} is neither a number nor a header; the first line is a value, a \
                         `commit,value` row, or a header naming the columns (e.g. `commit,command.elapsed_time`), \
                         with commas between columns"
                    );
                }
                csv.name = Some(value.to_string());
                continue;
            }
            push_value(&mut csv, &mut point_of, source, number, label, value, parsed)?;
            continue;
        };
        if fields.len() != expected {
            bail!(
                "{source}:{number}: {} column(s) in {line:?}, but the first line has {expected}; every line is `value` \
                 or every line is `commit,value`",
                fields.len()
            );
        }
        push_value(&mut csv, &mut point_of, source, number, label, value, parsed)?;
    }
    Ok(csv)
}

/// The cell without one pair of surrounding double quotes.
fn unquote(cell: &str) -> &str {
    cell.strip_prefix('"').and_then(|c| c.strip_suffix('"')).map_or(cell, str::trim)
}

/// Adds one value line to the series: to the point of its commit when there is one (`point_of`), else as a new point.
fn push_value(
    csv: &mut SeriesCsv,
    point_of: &mut HashMap<String, usize>,
    source: &str,
    number: usize,
    label: Option<&str>,
    text: &str,
    parsed: Result<f64, std::num::ParseFloatError>,
) -> Result<()> {
    let value = parsed
        .with_context(|| format!("{source}:{number}: {text:?} is not a number (expected `value` or `commit,value`)"))?;
    if label == Some("") {
        bail!("{source}:{number}: the commit column is empty; give each `commit,value` row its commit or label");
    }
    if !value.is_finite() {
        csv.non_finite_lines.push(number);
    }
    match label.and_then(|label| point_of.get(label)).and_then(|&index| csv.points.get_mut(index)) {
        Some(point) => point.push(value),
        None => {
            if let Some(label) = label {
                point_of.insert(label.to_string(), csv.points.len());
            }
            csv.labels.push(label.map(str::to_string).unwrap_or_else(|| csv.points.len().to_string()));
            csv.points.push(vec![value]);
        }
    }
    Ok(())
}

/// The warning for values the analysis drops: which lines hold them (up to ten), so they can be found and fixed.
fn non_finite_warning(source: &str, lines: &[usize]) -> Option<String> {
    const SHOWN: usize = 10;
    if lines.is_empty() {
        return None;
    }
    let mut listed: Vec<String> = lines.iter().take(SHOWN).map(usize::to_string).collect();
    if lines.len() > SHOWN {
        listed.push(format!("... ({} lines)", lines.len()));
    }
    let (noun, verb) = if lines.len() == 1 { ("line", "holds") } else { ("lines", "hold") };
    Some(format!(
        "{source}: {noun} {} {verb} no finite value (NaN, infinite, or too large for a double); they are left out of the analysis",
        listed.join(", ")
    ))
}

fn series_file(file: &Path, json: bool, plot: Option<&Path>, options: &TrackOptions) -> Result<ExitCode> {
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read the series {}", file.display()))?;
    let source = file.display().to_string();
    let SeriesCsv { name, labels, points, non_finite_lines, has_commit_column } = parse_series(&text, &source)?;
    if let Some(warning) = non_finite_warning(&source, &non_finite_lines) {
        eprintln!("culprit: warning: {warning}");
    }
    if points.is_empty() {
        bail!("{source} holds no values; give one value a line, or `commit,value` rows");
    }
    let metric = name.unwrap_or_default();
    let analysis = analyze(&points, options).with_context(|| format!("cannot analyse {}", file.display()))?;
    let mut all = vec![(metric.clone(), analysis)];
    decide(&mut all, options);
    if let Some(path) = plot {
        let series = Series {
            job_id: String::new(),
            job_name: file.display().to_string(),
            machine: String::new(),
            build: None,
            metric: if metric.is_empty() { "value".to_string() } else { metric.clone() },
            positions: vec![None; labels.len()],
            labels: labels.clone(),
            points: points.clone(),
        };
        crate::cmd::plot::write_track(path, std::slice::from_ref(&series), &all)?;
    }
    let analysis = &all[0].1;
    let changes: Vec<&ChangePoint> = analysis.change_points.iter().filter(|c| c.verdict.is_change()).collect();
    if json {
        let value = serde_json::json!({
            // The name the text and the chart give a series without a header.
            "metric": if metric.is_empty() { "value" } else { metric.as_str() },
            "points": analysis.points,
            "skipped_points": analysis.skipped_points,
            "runs": analysis.runs,
            "dropped_values": analysis.dropped_values,
            "scale": analysis.scale,
            "note": analysis.note,
            // As in the JSON of stored results and the text: a reader of no change point must know about the floor.
            "notes": floor_note(options).into_iter().collect::<Vec<_>>(),
            "change_points": changes.iter().map(|c| change_json(c, &labels, None)).collect::<Vec<_>>(),
        });
        output::println(&serde_json::to_string_pretty(&value)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = format!(
        "{}: {} points, {} runs, noise scale {}{}\n",
        file.display(),
        analysis.points,
        analysis.runs,
        printf::general(analysis.scale, 6, false),
        dropped_text(analysis)
    );
    if let Some(note) = &analysis.note {
        out.push_str(&format!("note: {note}\n"));
    }
    if changes.is_empty() {
        out.push_str("no change point\n");
    }
    // The file's first column names commits; a series without one is numbered by its points.
    let noun = if has_commit_column { "commits" } else { "points" };
    for c in changes {
        out.push_str(&change_line(c, &labels, if metric.is_empty() { "value" } else { &metric }));
        out.extend(interval_line(c, &labels, &[], noun));
    }
    if let Some(note) = floor_note(options) {
        out.push_str(&format!("note: {note}\n"));
    }
    output::print(&out)?;
    Ok(ExitCode::SUCCESS)
}

fn dropped_text(a: &Analysis) -> String {
    let mut parts = Vec::new();
    if a.dropped_values > 0 {
        parts.push(format!("{} NaN/infinite values dropped", a.dropped_values));
    }
    if a.skipped_points > 0 {
        parts.push(format!("{} points without a usable value skipped", a.skipped_points));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}


fn pct(x: Option<f64>) -> String {
    x.map_or("-".to_string(), |v| format!("{v:+.1}%"))
}

/// The robot-like line of one change point.
fn change_line(c: &ChangePoint, labels: &[String], metric: &str) -> String {
    let label = |i: usize| labels.get(i).map(String::as_str).unwrap_or("?");
    format!(
        "{:<11} {metric}: {} [{} .. {}] ({} -> {}), between {} (last before) and {} (first after), q={:.2e}, confidence {:.4}\n",
        c.verdict.word(),
        pct(c.change_pct),
        pct(c.change_pct_low),
        pct(c.change_pct_high),
        printf::general(c.mean_before, 6, false),
        printf::general(c.mean_after, 6, false),
        prose_short(label(c.before_index)),
        prose_short(label(c.index)),
        c.q.unwrap_or(1.0),
        c.confidence.unwrap_or(0.0),
    )
}

/// Whether a change point's 90% location interval (`before_low ..= after_high` in `--json`) is wider than the pair
/// of points its change line names, so that the change may lie outside that pair.
pub(crate) fn interval_is_wider(c: &ChangePoint) -> bool {
    c.before_index_low < c.before_index || c.index_high > c.index
}

/// The line under a change point saying where it may lie, when its 90% location interval is wider than the pair the
/// change line names (the most likely place): the interval's outer points, which are the good and bad ends `track
/// --bisect` and `track --follow` bisect, and how many commits (or points) lie between them. Without it the text
/// named only "between c28 and c29" while the change could as well be three commits earlier, and a reader comparing
/// it with the bisect's range saw two different answers (QA 51). `positions` places the points on a branch (empty or
/// `None` for labels and a file's points), which counts the branch's commits between them, tested or not; otherwise
/// the points between them are counted as `noun`.
pub(crate) fn interval_line(
    c: &ChangePoint,
    labels: &[String],
    positions: &[Option<usize>],
    noun: &str,
) -> Option<String> {
    if !interval_is_wider(c) {
        return None;
    }
    let label = |i: usize| labels.get(i).map_or("?", String::as_str);
    let place = |i: usize| positions.get(i).copied().flatten();
    let (count, noun) = match (place(c.before_index_low), place(c.index_high)) {
        (Some(low), Some(high)) => (high.saturating_sub(low), "commits"),
        _ => (c.index_high - c.before_index_low, noun),
    };
    Some(format!(
        "    90% interval: the change is somewhere between {} and {} ({count} {noun})\n",
        prose_short(label(c.before_index_low)),
        prose_short(label(c.index_high)),
    ))
}

/// Each change point's [`interval_line`] in the order of [`change_points_json`].
pub(crate) fn interval_lines(history: &History) -> Vec<Option<String>> {
    let mut lines = Vec::new();
    for (s, (_, a)) in history.series.iter().zip(&history.analyses) {
        let noun = series_noun(s);
        for c in a.change_points.iter().filter(|c| c.verdict.is_change()) {
            lines.push(interval_line(c, &s.labels, &s.positions, noun));
        }
    }
    lines
}

/// What a stored series' points are, as its header says: tested commits along a branch, or labels.
fn series_noun(s: &Series) -> &'static str {
    if s.positions.iter().any(Option::is_some) {
        "commits"
    } else {
        "labels"
    }
}

/// One change point in the JSON of `track`, `track --follow` and the series of a CSV file (`docs/json.md`): `change`
/// is the percentage (`absolute` false) as in compare's rows and the report's headline, or, for a level that starts
/// at 0 (no percentage of it), the difference in the metric's unit (`absolute` true); `difference` is always the
/// difference in the metric's unit. `bisect_session` is the session that bisected (or is bisecting) the change.
pub(crate) fn change_json(c: &ChangePoint, labels: &[String], bisect_session: Option<i64>) -> serde_json::Value {
    let absolute = c.change_pct.is_none();
    let (change, change_low, change_high) = if absolute {
        (Some(c.change), Some(c.change_low), Some(c.change_high))
    } else {
        (c.change_pct, c.change_pct_low, c.change_pct_high)
    };
    serde_json::json!({
        "index": c.index,
        "before_index": c.before_index,
        "before": labels.get(c.before_index),
        "after": labels.get(c.index),
        "index_low": c.index_low,
        "index_high": c.index_high,
        "before_index_low": c.before_index_low,
        "before_low": labels.get(c.before_index_low),
        "after_high": labels.get(c.index_high),
        "verdict": c.verdict.word(),
        "mean_before": c.mean_before,
        "mean_after": c.mean_after,
        "change": change,
        "change_low": change_low,
        "change_high": change_high,
        "absolute": absolute,
        "difference": c.change,
        "difference_low": c.change_low,
        "difference_high": c.change_high,
        "p": c.p,
        "q": c.q,
        "confidence": c.confidence,
        "runs_before": c.runs_before,
        "runs_after": c.runs_after,
        "bisect_session": bisect_session,
    })
}

/// The change points of every series of a history in JSON, each naming its job and machine as the series do
/// (`track --follow --json` lists them flat, where `track --json` nests them in their series).
pub(crate) fn change_points_json(history: &History, sessions: &HashMap<(usize, usize), i64>) -> Vec<serde_json::Value> {
    let mut points = Vec::new();
    for (k, (s, (_, a))) in history.series.iter().zip(&history.analyses).enumerate() {
        for (j, c) in a.change_points.iter().enumerate().filter(|(_, c)| c.verdict.is_change()) {
            let mut value = serde_json::json!({
                "job_id": s.job_id, "job": s.job_name, "machine": s.machine, "metric": s.metric,
            });
            if let (Some(object), serde_json::Value::Object(fields)) =
                (value.as_object_mut(), change_json(c, &s.labels, sessions.get(&(k, j)).copied()))
            {
                object.extend(fields);
            }
            points.push(value);
        }
    }
    points
}

/// The runs a history is made of: the successful ones `filter` selects, as the job ran them (perf-attached
/// profiling runs are read by no series).
fn history_runs(store: &dyn Store, filter: &HistoryFilter) -> Result<Vec<RunSummary>> {
    let mut runs = store.list_runs(&RunFilter {
        job: filter.job.clone(),
        testcase: filter.testcase.clone(),
        hostname: filter.machine.clone(),
        status: Some(RunStatus::Ok),
        kind: Some(RunKind::Plain),
        ..RunFilter::default()
    })?;
    runs.retain(|run| !filter.excluded_runs.contains(&run.id));
    Ok(runs)
}

/// The branch's first-parent history, oldest first, as SHA to position.
fn branch_positions(repo: &Path, branch: &str) -> Result<HashMap<String, usize>> {
    let list = git::git(repo, &["rev-list", "--first-parent", "--reverse", branch])
        .with_context(|| format!("cannot list the first-parent history of {branch} in {}", repo.display()))?;
    Ok(list.lines().enumerate().map(|(i, sha)| (sha.to_string(), i)).collect())
}

fn stored(store: &mut dyn Store, args: &TrackArgs) -> Result<ExitCode> {
    if (args.build.is_some() || args.deploy.is_some()) && !args.bisect {
        bail!("--build and --deploy are for the commits a bisect or a follow builds: add --bisect (or use --follow)");
    }
    if args.no_checkout && !args.bisect {
        bail!("--no-checkout is for the commits a bisect or a follow builds: add --bisect (or use --follow)");
    }
    if args.improvements && !args.bisect {
        bail!("--improvements says which changes a bisect or a follow bisects: add --bisect (or use --follow)");
    }
    if args.timeouts.any_given() && !args.bisect {
        bail!(
            "--build-timeout and --deploy-timeout are for the commits a bisect or a follow builds: add --bisect (or \
             use --follow)"
        );
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let repo = git::toplevel(args.repo.as_deref().unwrap_or(&cwd));
    let branch = args.branch.as_deref().unwrap_or("HEAD");
    let filter = HistoryFilter {
        job: args.job.clone(),
        testcase: args.testcase.clone(),
        machine: args.machine.clone(),
        metric: args.metric.clone(),
        excluded_runs: BTreeSet::new(),
    };
    let options = track_options(args);
    // Labels need no repository (their order is that of their runs): outside one, without --repo or --bisect, the
    // store's labels are tracked, and the repository is asked for only when the store holds no label series.
    let by_labels = repo.is_err();
    let (repo, History { series, analyses, mut notes, branch_positions: positions }) = match repo {
        Ok(repo) => {
            let history = history(store, &Order::Branch { repo: &repo, branch }, &filter, &options)?;
            (repo, history)
        }
        Err(e) if args.repo.is_none() && !args.bisect => {
            // A store whose runs are all at commits has no label to track: the repository is what is missing. Asked
            // of the labels, `--metric command.elapsed_time` was answered "matches no metric of the runs; they have
            // command.elapsed_time, ...", since the runs it had looked at were none.
            let runs = history_runs(store, &filter)?;
            let holds_labels = runs.iter().any(|r| matches!(r.revision, Revision::Label { .. }));
            if !holds_labels && !runs.is_empty() {
                return Err(e.into());
            }
            let history = history_with(store, &Order::Labels, &filter, &options, Some(runs))?;
            // Label runs too few to analyse are tracked all the same, so that the notes say why no series came of
            // them: asking for a repository (or to store runs under --label) would send the user the wrong way.
            if history.series.is_empty() && !holds_labels {
                return Err(e.into());
            }
            (cwd.clone(), history)
        }
        Err(e) => return Err(e.into()),
    };
    notes.extend(floor_note(&options));
    let labels_only =
        by_labels || (!series.is_empty() && series.iter().all(|s| s.positions.iter().all(Option::is_none)));
    let along = if labels_only { "the labels' run order" } else { branch };

    // Bisect each regression whose gap no finished session of its job and machine covers yet (see `needs_bisect`);
    // each change names the session that covers it.
    let stored_sessions = store.bisect_sessions()?;
    let history = History { series, analyses, notes: Vec::new(), branch_positions: positions };
    let mut sessions = covering_sessions(store, &stored_sessions, &repo, &history)?;
    let History { series, analyses, branch_positions: positions, .. } = history;
    if args.bisect {
        let placed = session_machines(store, &stored_sessions)?;
        for (k, (s, (_, a))) in series.iter().zip(&analyses).enumerate() {
            let position = |sha: &str| positions.get(sha).copied();
            let spans = session_spans(sessions_of_machine(&placed, &s.machine), &repo, &s.job_id, position);
            for (j, c) in a.change_points.iter().enumerate() {
                if !bisected(c.verdict, args) {
                    continue;
                }
                let Some(range) = bisect_range(s, c) else {
                    notes.push(format!("{}: a change between labels cannot be bisected", s.metric));
                    continue;
                };
                if !needs_bisect(range.before, range.after, &spans) {
                    // Said, not done silently: the change is listed, and a reader of `--bisect` must know why no
                    // bisect ran for it (QA 45b).
                    let by = sessions.get(&(k, j)).map_or_else(
                        || "a finished session".to_string(),
                        |id| format!("session {id} (`culprit bisect log {id}`, `culprit report {id}`)"),
                    );
                    notes.push(format!(
                        "{}: the change between {} and {} is bisected already, by {by}",
                        s.metric,
                        prose_short(s.labels.get(c.before_index).map_or("?", String::as_str)),
                        prose_short(s.labels.get(c.index).map_or("?", String::as_str))
                    ));
                    continue;
                }
                match output::to_stderr(|| bisect_change(store, &repo, s, &range.change, args, None)) {
                    Ok(Some(id)) => {
                        sessions.insert((k, j), id);
                    }
                    Ok(None) => notes.push(format!("{}: the bisect left no session", s.metric)),
                    Err(e) => notes.push(format!("{}: bisect failed: {e:#}", s.metric)),
                }
            }
        }
    }

    if let Some(path) = &args.plot {
        crate::cmd::plot::write_track(path, &series, &analyses)?;
    }
    if args.json {
        // Labels are ordered by their runs, not along a branch: outside a repository the JSON named the current
        // directory as the repository and HEAD as the branch the points were ordered along.
        let value = serde_json::json!({
            "branch": (!labels_only).then_some(branch),
            "repo": (!labels_only).then_some(&repo),
            "notes": notes,
            "series": series.iter().zip(&analyses).enumerate().map(|(k, (s, (_, a)))| serde_json::json!({
                "job_id": s.job_id, "job": s.job_name, "machine": s.machine, "metric": s.metric,
                "points": a.points, "skipped_points": a.skipped_points, "runs": a.runs,
                "dropped_values": a.dropped_values, "scale": a.scale, "note": a.note,
                "change_points": a.change_points.iter().enumerate().filter(|(_, c)| c.verdict.is_change())
                    .map(|(j, c)| change_json(c, &s.labels, sessions.get(&(k, j)).copied())).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        });
        output::println(&serde_json::to_string_pretty(&value)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    output::print(&history_text(&series, &analyses, &sessions, &notes, along))?;
    Ok(ExitCode::SUCCESS)
}

/// The text of `culprit track` over stored results, which the dashboard shows too: each series' change points,
/// with the bisect session started for one (`sessions`, by series and change point index), then the notes.
/// `along` names the order of the points for the line saying there is no change point.
pub(crate) fn history_text(
    series: &[Series],
    analyses: &[(String, Analysis)],
    sessions: &HashMap<(usize, usize), i64>,
    notes: &[String],
    along: &str,
) -> String {
    let mut out = String::new();
    let mut found = 0;
    // Series come grouped by job and machine; each group gets one header, not one per metric.
    let mut last_header = String::new();
    for (k, (s, (_, a))) in series.iter().zip(analyses).enumerate() {
        let changes: Vec<(usize, &ChangePoint)> =
            a.change_points.iter().enumerate().filter(|(_, c)| c.verdict.is_change()).collect();
        if changes.is_empty() {
            continue;
        }
        // A series without a place on a branch is of labels (ordered by their first run), not of commits.
        let noun = if s.positions.iter().any(Option::is_some) { "tested commits" } else { "labels" };
        let header = format!("{} on {} ({} {noun}):\n", s.job_name, s.machine, a.points);
        if header != last_header {
            out.push_str(&header);
            last_header = header;
        }
        for (j, c) in changes {
            found += 1;
            out.push_str("  ");
            out.push_str(&change_line(c, &s.labels, &s.metric));
            out.extend(interval_line(c, &s.labels, &s.positions, series_noun(s)));
            if let Some(id) = sessions.get(&(k, j)) {
                out.push_str(&format!("    bisect session {id} (`culprit bisect log {id}`)\n"));
            }
        }
    }
    if found == 0 && series.is_empty() {
        // Every series was left out for a reason the notes give (one point, say); "no change point in 0 series"
        // beside a note naming a series read as a contradiction.
        out.push_str(&format!("no series along {along} could be analysed\n"));
    } else if found == 0 {
        out.push_str(&format!("no change point in {} series along {along}\n", series.len()));
    }
    for note in notes {
        out.push_str(&format!("note: {note}\n"));
    }
    // A series' own note (a possible change its runs are too few to test, all values equal) was in the JSON alone
    // (QA 59: a -56% dip at one label, left untested, and the text said only what it found elsewhere). Of a job's
    // many monitor metrics, only the benchmark's primary ones are noted, unless a few series were asked for.
    let primary = culprit_core::report::primary_metrics(series.iter().map(|s| s.metric.as_str()));
    for (s, (_, a)) in series.iter().zip(analyses) {
        let Some(note) = &a.note else { continue };
        if series.len() <= MAX_NOTED_SERIES || primary.contains(&s.metric.as_str()) {
            out.push_str(&format!("note: {} on {}, {}: {note}\n", s.job_name, s.machine, s.metric));
        }
    }
    out
}

/// Up to this many series, every series' own note is printed; beyond, only those of the primary metrics.
const MAX_NOTED_SERIES: usize = 5;

/// The stored history in `order` (along a branch: each (job, machine, metric) as a series of tested commits in
/// first-parent order), analysed with `options`, with the verdicts decided over all series together.
pub(crate) fn history(
    store: &dyn Store,
    order: &Order<'_>,
    filter: &HistoryFilter,
    options: &TrackOptions,
) -> Result<History> {
    history_with(store, order, filter, options, None)
}

/// [`history`] of the runs `filter` selects, given when the caller has listed them already.
fn history_with(
    store: &dyn Store,
    order: &Order<'_>,
    filter: &HistoryFilter,
    options: &TrackOptions,
    listed: Option<Vec<RunSummary>>,
) -> Result<History> {
    // --job is a glob only here (with --follow it names a job file), so it is checked here rather than when parsed;
    // the dashboard's job= and machine= come here unparsed too, and must get the command's answer, not "no run
    // matches".
    crate::cmd::compare::check_globs(&[
        ("--job", filter.job.as_deref()),
        ("--testcase", filter.testcase.as_deref()),
        ("--machine", filter.machine.as_deref()),
    ])?;
    let positions = match order {
        Order::Branch { repo, branch } => branch_positions(repo, branch)?,
        Order::Labels => HashMap::new(),
    };
    let runs = match listed {
        Some(runs) => runs,
        None => history_runs(store, filter)?,
    };
    if runs.is_empty() {
        let flags = Filters {
            job: filter.job.as_deref(),
            testcase: filter.testcase.as_deref(),
            machine: filter.machine.as_deref(),
        }
        .flags();
        if flags.is_empty() {
            bail!(
                "the store holds no successful run; `culprit run` stores some, `culprit results` lists what there is"
            );
        }
        bail!("no successful stored run matches {flags}; see `culprit results` for the jobs and machines there are");
    }
    // Group the runs by (job, machine, build); order each group's revisions along the branch. A job's runs on one
    // machine of two builds (lkp's kconfigs of one commit) are two series, as compare draws them as two tables:
    // pooled, the builds' difference would read as noise, or as a change where one build's runs stop.
    let mut groups: BTreeMap<(String, String, Build), Vec<&RunSummary>> = BTreeMap::new();
    for r in &runs {
        groups.entry((r.job_id.clone(), r.hostname.clone(), r.build.clone())).or_default().push(r);
    }
    let mut builds_on: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (job_id, machine, _) in groups.keys() {
        *builds_on.entry((job_id, machine)).or_default() += 1;
    }
    let mut notes = Vec::new();
    let mut series: Vec<Series> = Vec::new();
    let mut analyses: Vec<(String, Analysis)> = Vec::new();
    // Whether --metric matched a metric of any group's runs; when it never does, the history says so.
    let mut metric_matched = false;
    for ((job_id, machine, build), group) in &groups {
        // A job of one build on this machine is named and read as it always was; of several, each series is named
        // by its build and reads that build's runs only.
        let split = builds_on.get(&(job_id.as_str(), machine.as_str())).is_some_and(|n| *n > 1);
        let mut job_name = group.first().map(|r| r.job_name.clone()).unwrap_or_default();
        if split {
            job_name.push_str(&format!(" ({})", build.label()));
        }
        let mut on_branch: Vec<(usize, String)> = Vec::new();
        let mut labels: Vec<(f64, String)> = Vec::new();
        let mut off_branch = std::collections::BTreeSet::new();
        for r in group {
            match &r.revision {
                Revision::Commit { sha, .. } => match positions.get(sha) {
                    Some(&p) if !on_branch.iter().any(|(_, s)| s == sha) => on_branch.push((p, sha.clone())),
                    Some(_) => {}
                    None => {
                        off_branch.insert(sha.clone());
                    }
                },
                Revision::Label { name } => match labels.iter_mut().find(|(_, l)| l == name) {
                    Some(entry) => entry.0 = entry.0.min(r.started_at),
                    None => labels.push((r.started_at, name.clone())),
                },
            }
        }
        if !off_branch.is_empty() {
            notes.push(match order {
                Order::Branch { branch, .. } => format!(
                    "{job_name} on {machine}: {} tested commit(s) not on the first-parent history of {branch} skipped",
                    off_branch.len()
                ),
                Order::Labels => format!(
                    "{job_name} on {machine}: {} tested commit(s) skipped (ordering commits needs their repository)",
                    off_branch.len()
                ),
            });
        }
        // Along a branch, a job with labels only is still tracked, as labels: the text and its charts must not read as
        // if its points were commits of the branch (the dashboard's /track with repo= drew such charts under a text
        // that spoke only of the branch). Said of a job with a metric asked for only.
        let mut labels_only = None;
        let ordered: Vec<(Option<usize>, String)> = if !on_branch.is_empty() {
            // Only a branch puts commits on it, so only then are labels left out.
            if let (false, Order::Branch { branch, .. }) = (labels.is_empty(), order) {
                notes.push(format!(
                    "{job_name} on {machine}: {} label(s) skipped (the job has commits on {branch})",
                    labels.len()
                ));
            }
            on_branch.sort();
            on_branch.into_iter().map(|(p, s)| (Some(p), s)).collect()
        } else {
            if let (false, Order::Branch { branch, .. }) = (labels.is_empty(), order) {
                labels_only = Some(format!(
                    "{job_name} on {machine}: no tested commit on {branch}; its {} label(s) are tracked in the order \
                     of their first run",
                    labels.len()
                ));
            }
            labels.sort_by(|a, b| a.0.total_cmp(&b.0));
            labels.into_iter().map(|(_, l)| (None, l)).collect()
        };
        let keys: Vec<String> = ordered.iter().map(|(_, k)| k.clone()).collect();
        let samples = store.samples(&SampleQuery {
            revision_keys: keys.clone(),
            job: Some(job_id.clone()),
            testcase: filter.testcase.clone(),
            hostname: Some(machine.clone()),
            metric_regex: filter.metric.clone(),
            build: split.then(|| build.clone()),
            excluded_runs: filter.excluded_runs.clone(),
            ..SampleQuery::default()
        })?;
        let by_key: HashMap<&str, _> = samples.iter().map(|s| (s.revision.key(), s)).collect();
        let metrics: std::collections::BTreeSet<&String> = samples.iter().flat_map(|s| s.metrics.keys()).collect();
        metric_matched |= !metrics.is_empty();
        if !metrics.is_empty() {
            notes.extend(labels_only);
        }
        // One note per reason a job's series cannot be analysed, not one per metric: a short history would
        // otherwise repeat the same sentence for each of a job's 140 monitor metrics.
        let mut unanalysed: BTreeMap<String, Vec<&String>> = BTreeMap::new();
        for metric in metrics {
            let points: Vec<Vec<f64>> = keys
                .iter()
                .map(|k| by_key.get(k.as_str()).and_then(|s| s.metrics.get(metric)).cloned().unwrap_or_default())
                .collect();
            match analyze(&points, options) {
                Ok(a) => {
                    analyses.push((metric.clone(), a));
                    series.push(Series {
                        job_id: job_id.clone(),
                        job_name: job_name.clone(),
                        machine: machine.clone(),
                        build: split.then(|| build.clone()),
                        metric: metric.clone(),
                        labels: keys.clone(),
                        positions: ordered.iter().map(|(p, _)| *p).collect(),
                        points,
                    });
                }
                Err(e) => unanalysed.entry(e.to_string()).or_default().push(metric),
            }
        }
        for (e, names) in unanalysed {
            let which = match names.as_slice() {
                [] => continue,
                [first, second, _, ..] => format!("{} metrics ({first}, {second}, ...)", names.len()),
                _ => culprit_core::report::and_list(&names),
            };
            notes.push(format!("{job_name} on {machine}, {which}: {e}"));
        }
    }
    if let (Some(pattern), false) = (&filter.metric, metric_matched) {
        // The metrics the runs do have, so the error can list them; one query over the runs listed above.
        let keys: Vec<String> = {
            let mut keys: Vec<String> = runs.iter().map(|r| r.revision.key().to_string()).collect();
            keys.sort();
            keys.dedup();
            keys
        };
        let every = store.samples(&SampleQuery {
            revision_keys: keys,
            job: filter.job.clone(),
            testcase: filter.testcase.clone(),
            hostname: filter.machine.clone(),
            metric_regex: None,
            ..SampleQuery::default()
        })?;
        let names: std::collections::BTreeSet<String> = every.iter().flat_map(|s| s.metrics.keys().cloned()).collect();
        if !names.is_empty() {
            bail!(crate::cmd::compare::no_metric_matches(pattern, &names));
        }
    }
    decide(&mut analyses, options);
    Ok(History { series, analyses, notes, branch_positions: positions })
}

/// Where a change point's bisect runs: the change with its location interval as its ends, and their positions on
/// the branch.
pub(crate) struct BisectRange {
    pub change: ChangePoint,
    pub before: usize,
    pub after: usize,
}

/// The range a change point's bisect covers: its whole location interval (`before_index_low..index_high`), not only
/// its most likely place, since a good end that is in fact after the change would end the bisect "not reproduced"
/// (or send it after the wrong commit). `None` when an end is a label, which has no place on the branch.
/// `track --bisect` and `track --follow` both bisect what this says.
pub(crate) fn bisect_range(s: &Series, c: &ChangePoint) -> Option<BisectRange> {
    let change = ChangePoint { before_index: c.before_index_low, index: c.index_high, ..c.clone() };
    let (Some(Some(before)), Some(Some(after))) = (s.positions.get(change.before_index), s.positions.get(change.index))
    else {
        return None;
    };
    Some(BisectRange { before: *before, after: *after, change })
}

/// The branch positions of good and bad of every finished bisect session of job `job_id` in `repo` among `sessions`
/// (`position` places a commit on the branch), for [`needs_bisect`]. An unfinished one (stopped by Ctrl-C or `kill
/// -9`) covers nothing: it has neither confirmed the commit nor given it a report, and the next bisect of the pair
/// resumes it. The caller gives the sessions of the series' machine only ([`sessions_of_machine`]): another
/// machine's session pinned the change on that machine, and this one's runs still need their own.
pub(crate) fn session_spans<'a>(
    sessions: impl IntoIterator<Item = &'a BisectSession>,
    repo: &Path,
    job_id: &str,
    position: impl Fn(&str) -> Option<usize>,
) -> Vec<(usize, usize)> {
    let repo = repo.display().to_string();
    sessions
        .into_iter()
        .filter(|b| b.job_id.as_deref() == Some(job_id) && b.repo == repo && b.status != NEW_SESSION_STATUS)
        .filter_map(|b| Some((position(&b.good)?, position(&b.bad)?)))
        .collect()
}

/// Each of `sessions` with the machine it measures on (`bisect::machine_of`, a store query for a session stored
/// before sessions named their machine), read once for every series that needs the sessions of one machine.
pub(crate) fn session_machines<'a>(
    store: &dyn Store,
    sessions: &'a [BisectSession],
) -> Result<Vec<(&'a BisectSession, Option<String>)>> {
    sessions.iter().map(|b| Ok((b, crate::cmd::bisect::machine_of(store, b)?))).collect()
}

/// The sessions of [`session_machines`] that measure on `machine` (one whose machine is unknown, an old session
/// without runs, counts as every machine's).
pub(crate) fn sessions_of_machine<'a, 'b>(
    placed: &'b [(&'a BisectSession, Option<String>)],
    machine: &'b str,
) -> impl Iterator<Item = &'a BisectSession> + 'b {
    placed.iter().filter(move |(_, there)| there.as_deref().is_none_or(|there| there == machine)).map(|(b, _)| *b)
}

/// The bisect session of each change point of `history` (by series and change point index): among the sessions of
/// the series' job and machine in `repo` whose good..bad holds the change (its last point before and first after),
/// a finished one before an unfinished one, then one of the series' own metric, then the narrowest, then the newest.
/// `track --json` said `"bisect_session": null` for a change `track --follow` had bisected, since only a session
/// started by the same command was named (QA 45b).
pub(crate) fn covering_sessions(
    store: &dyn Store,
    stored: &[BisectSession],
    repo: &Path,
    history: &History,
) -> Result<HashMap<(usize, usize), i64>> {
    let repo = repo.display().to_string();
    let place = |sha: &str| history.branch_positions.get(sha).copied();
    // Each stored session placed on the branch once, with its machine (a store query for old sessions).
    let mut placed = Vec::new();
    for b in stored.iter().filter(|b| b.repo == repo) {
        if let (Some(good), Some(bad)) = (place(&b.good), place(&b.bad)) {
            placed.push((b, good, bad, crate::cmd::bisect::machine_of(store, b)?));
        }
    }
    let mut found = HashMap::new();
    for (k, (s, (_, a))) in history.series.iter().zip(&history.analyses).enumerate() {
        for (j, c) in a.change_points.iter().enumerate().filter(|(_, c)| c.verdict.is_change()) {
            let (Some(Some(before)), Some(Some(after))) = (s.positions.get(c.before_index), s.positions.get(c.index))
            else {
                continue;
            };
            let best = placed
                .iter()
                .filter(|(b, good, bad, machine)| {
                    b.job_id.as_deref() == Some(s.job_id.as_str())
                        && machine.as_deref().is_none_or(|m| m == s.machine)
                        && *good <= *before
                        && *after <= *bad
                })
                .min_by_key(|(b, good, bad, _)| {
                    let other_metric = b.metric.as_deref() != Some(s.metric.as_str());
                    (b.status == NEW_SESSION_STATUS, other_metric, bad - good, -b.id.0)
                });
            if let Some((b, ..)) = best {
                found.insert((k, j), b.id.0);
            }
        }
    }
    Ok(found)
}

/// Whether `track --bisect` and `track --follow` bisect a change between the tested commits at branch positions
/// `before` and `after`: unless a finished session in `spans` covers them (its good at or before `before`, its bad at
/// or after `after`), of any metric. A covering session has searched that range already: between two adjacent
/// commits it confirmed the commit against its parent and gave it a report; over a wider range it found the change
/// (or found none to reproduce). A new bisect with other ends inside it would spend its runs on the same commits
/// again (QA 45b 2: every follow pass bisected another range inside the last one, 120 runs and a mail each). An
/// unfinished session is in no span: the bisect of its pair finds and continues it.
pub(crate) fn needs_bisect(before: usize, after: usize, spans: &[(usize, usize)]) -> bool {
    after > before && !spans.iter().any(|&(good, bad)| good <= before && after <= bad)
}

/// The stem of the job file `track --bisect` writes a stored run's job to, so that the bisect's runs keep the job's
/// name: the stem lkp's split naming reads the name back from (`AtomicJob::stem_named`: the name without the path
/// params it appends). The file was named `<job_name>.yaml`, which read back as `<job_name>-<path_params>` whenever
/// the job's job_origin did not start its name (lkp's job.yaml of an imported run: `fsmark-1x-16d-...` from
/// `fsmark-generic-brd.yaml`), its params twice. A job whose name is not of that form is named after its id.
fn job_file_stem(job_yaml: &str, job_name: &str, job_id: &str) -> String {
    let probe = "job.yaml";
    let jobs = crate::job_file::parse(job_yaml, probe).ok().and_then(|file| file.expand().ok()).unwrap_or_default();
    let stem = match jobs.as_slice() {
        [job] if !job_name.is_empty() => job.stem_named(job_name),
        _ => None,
    };
    file_safe(&stem.unwrap_or_else(|| job_id.to_string()))
}

/// `text` as one file name: every character but ASCII letters, digits and `-_.+=:%,` mapped to `_`, and a leading
/// dot too, so that an id or name (`lkp:fsmark/1x-...`) names a file in the directory it is joined to.
fn file_safe(text: &str) -> String {
    let safe: String = text
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "-_.+=:%,".contains(c) { c } else { '_' })
        .collect();
    match safe.strip_prefix('.') {
        Some(rest) => format!("_{rest}"),
        None => safe,
    }
}

/// Whether `track --bisect` and `track --follow` bisect a change point of this verdict: a regression, and an
/// improvement with `--improvements`.
pub(crate) fn bisected(verdict: Verdict, args: &TrackArgs) -> bool {
    verdict == Verdict::Regression || (args.improvements && verdict == Verdict::Improvement)
}

/// Starts (or continues) a bisect between the tested commits around a regression (or an improvement, bisected as
/// one) with the job of its runs, through `culprit bisect`'s own entry point, and returns the session id.
/// `for_follow_on`: the machine of the `track --follow` pass that bisects, which records the session as its own as
/// soon as it is stored.
pub(crate) fn bisect_change(
    store: &mut dyn Store,
    repo: &Path,
    s: &Series,
    c: &ChangePoint,
    args: &TrackArgs,
    for_follow_on: Option<&str>,
) -> Result<Option<i64>> {
    let good = s.labels.get(c.before_index).context("no commit before the change")?.clone();
    let bad = s.labels.get(c.index).context("no commit after the change")?.clone();
    // The job file is that of the series' own build, when the job has runs of several.
    let runs = store.list_runs(&RunFilter {
        job: Some(s.job_id.clone()),
        revision_keys: vec![bad.clone()],
        status: Some(RunStatus::Ok),
        build: s.build.clone(),
        ..RunFilter::default()
    })?;
    let run = runs.first().context("no stored run of the job at the first commit after the change")?;
    let record = store.run(run.id)?;
    // One directory per job: a job file is named after its job, and jobs of one testcase may share that name.
    let dir = crate::cmd::bisect::worktree_root(repo, "track-jobs").join(file_safe(&s.job_id));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let job_file = dir.join(format!("{}.yaml", job_file_stem(&record.job_yaml, &record.job_name, &s.job_id)));
    std::fs::write(&job_file, &record.job_yaml).with_context(|| format!("cannot write {}", job_file.display()))?;
    eprintln!("culprit: bisecting {} between {} and {}", s.metric, prose_short(&good), prose_short(&bad));
    let bisect_args = BisectArgs {
        action: None,
        repo: Some(repo.to_path_buf()),
        good: vec![good.clone()],
        bad: Some(bad.clone()),
        job: Some(job_file),
        command: TimedCommandArgs { run: None, warmup: None },
        metric: Some(s.metric.clone()),
        build: args.build.clone(),
        deploy: args.deploy.clone(),
        timeouts: args.timeouts,
        scratch: args.scratch.clone(),
        no_checkout: args.no_checkout,
        max_runs: args.max_runs,
        min_change: args.min_change,
        improvement: c.verdict == Verdict::Improvement,
        resume: None,
        json: false,
        profile: 0,
        for_follow_on: for_follow_on.map(str::to_string),
    };
    crate::cmd::bisect::run(store, &bisect_args)?;
    // The series' machine's session: another machine of a farm may bisect the same pair into the same store, and
    // `track --follow` records (and mails) the session it gets here as its own.
    let mut id = None;
    for b in store.bisect_sessions()? {
        let same_pair = b.good == good && b.bad == bad && b.metric.as_deref() == Some(s.metric.as_str());
        if same_pair && crate::cmd::bisect::machine_of(store, &b)?.is_none_or(|there| there == s.machine) {
            id = id.max(Some(b.id.0));
        }
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qa59_a_series_own_note_is_printed_for_the_metrics_followed() {
        let series = |metric: &str| Series {
            job_id: "j".to_string(),
            job_name: "sb".to_string(),
            machine: "vm".to_string(),
            build: None,
            metric: metric.to_string(),
            labels: vec!["quiet".to_string(), "hog".to_string()],
            positions: vec![None, None],
            points: vec![vec![1.0], vec![2.0]],
        };
        let analysis = |note: Option<&str>| Analysis {
            change_points: Vec::new(),
            points: 2,
            skipped_points: 0,
            runs: 2,
            dropped_values: 0,
            scale: 1.0,
            note: note.map(str::to_string),
        };
        let untested = "a possible change before point 2 is not tested: 4 run(s) against 4 cannot reach p <= 0.01";
        let mut all = vec![series("sysbench-cpu.workload")];
        let mut analyses = vec![("sysbench-cpu.workload".to_string(), analysis(Some(untested)))];
        for k in 0..6 {
            let metric = format!("vmstat.key{k}");
            all.push(series(&metric));
            analyses.push((metric, analysis(Some("all values are equal"))));
        }
        let text = history_text(&all, &analyses, &HashMap::new(), &[], "the labels");
        assert!(text.contains(&format!("note: sb on vm, sysbench-cpu.workload: {untested}\n")), "{text}");
        // Of 7 series, the monitors' notes are left out; of a few, each is printed.
        assert!(!text.contains("vmstat.key0"), "{text}");
        let text = history_text(&all[1..3], &analyses[1..3], &HashMap::new(), &[], "the labels");
        assert!(text.contains("note: sb on vm, vmstat.key1: all values are equal"), "{text}");
    }

    #[test]
    fn a_history_of_no_analysable_series_does_not_count_zero_series() {
        // QA 58: every series of the metric had one point, and the page said "no change point in 0 series" above
        // the note naming that series.
        let notes = ["fio on box, write_iops: 1 point; a change point needs at least 2".to_string()];
        let text = history_text(&[], &[], &HashMap::new(), &notes, "main");
        assert_eq!(text.lines().next(), Some("no series along main could be analysed"), "{text}");
        assert!(!text.contains("0 series"), "{text}");
    }

    #[test]
    fn a_change_between_adjacent_commits_is_bisected_until_a_session_covers_them() {
        /// Before, after, the sessions' good and bad positions, and whether it is bisected.
        type Case = (usize, usize, &'static [(usize, usize)], bool);
        let cases: &[Case] = &[
            (3, 7, &[], true),
            (3, 7, &[(3, 7)], false),
            (4, 6, &[(3, 7)], false), // other ends inside a finished session's range
            (2, 6, &[(3, 7)], true),  // reaching out of it
            (3, 4, &[], true),
            (3, 4, &[(3, 4)], false),
            (3, 4, &[(0, 9)], false),
            (3, 4, &[(4, 9)], true),
            (3, 4, &[(0, 3), (5, 9)], true),
            (4, 4, &[], false),
        ];
        for &(before, after, spans, want) in cases {
            assert_eq!(needs_bisect(before, after, spans), want, "{before}..{after} with {spans:?}");
        }
    }

    #[test]
    fn a_regressions_bisect_covers_its_whole_location_interval() {
        // Follow bisected only between the tested commits around a change's most likely place; when its location
        // interval reaches further back, the true step can lie before that good end, the bisect then ends "not
        // reproduced", and the stored session is never tried again. `track --bisect` covered the interval.
        let levels = [100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 80.0, 80.0, 80.0, 80.0, 80.0, 80.0];
        let points: Vec<Vec<f64>> = levels.iter().map(|&l| vec![l - 1.0, l, l + 1.0, l + 0.5]).collect();
        let analysis = analyze(&points, &TrackOptions::default()).unwrap();
        let found = analysis.change_points.first().expect("the step").clone();
        let wide = ChangePoint { before_index_low: found.before_index - 2, index_high: found.index + 1, ..found };
        let series = Series {
            job_id: "j".into(),
            job_name: "j".into(),
            machine: "m".into(),
            build: None,
            metric: "ops".into(),
            labels: (0..levels.len()).map(|i| format!("c{i}")).collect(),
            // Every third commit of the branch was tested.
            positions: (0..levels.len()).map(|i| Some(3 * i)).collect(),
            points,
        };
        let range = bisect_range(&series, &wide).expect("commits on the branch");
        assert_eq!((range.change.before_index, range.change.index), (wide.before_index_low, wide.index_high));
        assert_eq!((range.before, range.after), (3 * wide.before_index_low, 3 * wide.index_high));
        // A label has no place on the branch to bisect from.
        let labels = Series { positions: vec![None; levels.len()], ..series };
        assert!(bisect_range(&labels, &wide).is_none());
    }

    fn error_of(text: &str) -> String {
        format!("{:#}", parse_series(text, "s.csv").unwrap_err())
    }

    #[test]
    fn series_with_a_header_and_commit_rows() {
        let csv = parse_series("# a comment\ncommit,ops\nc1,1\nc1,2\n\nc2,3\n", "s.csv").unwrap();
        assert_eq!(csv.name.as_deref(), Some("ops"));
        assert_eq!(csv.labels, ["c1", "c2"]);
        assert_eq!(csv.points, vec![vec![1.0, 2.0], vec![3.0]]);
        assert!(csv.non_finite_lines.is_empty());
        // QA 58: runs written a round of every commit at a time are each commit's runs, in first-seen order.
        let rounds = parse_series("commit,ops\nc1,1\nc2,5\nc3,9\nc1,2\nc2,6\nc3,10\nc1,3\n", "s.csv").unwrap();
        assert_eq!(rounds.labels, ["c1", "c2", "c3"]);
        assert_eq!(rounds.points, vec![vec![1.0, 2.0, 3.0], vec![5.0, 6.0], vec![9.0, 10.0]]);
        let plain = parse_series("1\n2.5\n", "s.csv").unwrap();
        assert_eq!(
            (plain.name, plain.labels, plain.points),
            (None, vec!["0".to_string(), "1".into()], vec![vec![1.0], vec![2.5]])
        );
    }

    #[test]
    fn a_byte_order_mark_and_quoted_cells_are_read() {
        let csv = parse_series("\u{feff}value\n1\n2\n", "s.csv").unwrap();
        assert_eq!((csv.name.as_deref(), csv.points), (Some("value"), vec![vec![1.0], vec![2.0]]));
        let csv = parse_series("\"commit\",\"ops\"\n\"c1\",\"1.5\"\n\"c2\", 2\n\"3\"x\n", "s.csv");
        let err = format!("{:#}", csv.unwrap_err());
        assert!(err.starts_with("s.csv:4: 1 column(s)"), "{err}");
        let csv = parse_series("\"commit\",\"ops\"\n\"c1\",\"1.5\"\n\"c2\", 2\n", "s.csv").unwrap();
        assert_eq!((csv.name.as_deref(), csv.labels), (Some("ops"), vec!["c1".to_string(), "c2".into()]));
        assert_eq!(csv.points, vec![vec![1.5], vec![2.0]]);
        let plain = parse_series("\"1\"\n\"2\"\n", "s.csv").unwrap();
        assert_eq!(plain.points, vec![vec![1.0], vec![2.0]]);
    }

    #[test]
    fn a_wrong_column_count_names_the_line() {
        let err = error_of("c1,10.3,999\n");
        assert!(err.starts_with("s.csv:1: 3 comma-separated columns"), "{err}");
        let err = error_of("a,1\nb,2,3\n");
        assert!(err.starts_with("s.csv:2: 3 comma-separated columns"), "{err}");
        let err = error_of("1\n2\nc3,3\n");
        assert!(err.starts_with("s.csv:3: 2 column(s)") && err.contains("the first line has 1"), "{err}");
        let err = error_of("value\nc1,3\n");
        assert!(err.starts_with("s.csv:2: 2 column(s)"), "{err}");
        let err = error_of("c1,1\n,2\n");
        assert!(err.starts_with("s.csv:2: the commit column is empty"), "{err}");
    }

    #[test]
    fn a_garbage_first_line_is_not_taken_as_a_header() {
        for garbage in ["1;2", "1;2;3", "3 4", "value;x", "a\tb", "1e3x", "commit,1;2"] {
            let err = error_of(&format!("{garbage}\n1\n2\n"));
            assert!(err.starts_with("s.csv:1: ") && err.contains("neither a number nor a header"), "{garbage}: {err}");
        }
        // Only the first line can be a header.
        let err = error_of("x\nx\n1\n");
        assert!(err.starts_with("s.csv:2: \"x\" is not a number"), "{err}");
        for header in ["value", "command.elapsed_time", "_x", "ops/s", "commit,hackbench.throughput", ",ops"] {
            let columns = header.matches(',').count() + 1;
            let row = if columns == 2 { "c,1" } else { "1" };
            assert!(parse_series(&format!("{header}\n{row}\n"), "s.csv").is_ok(), "{header}");
        }
    }

    #[test]
    fn non_finite_values_are_kept_for_the_analysis_and_their_lines_named() {
        let csv = parse_series("value\n1\nnan\ninf\n-inf\n1e999\n2\n", "s.csv").unwrap();
        assert_eq!(csv.non_finite_lines, [3, 4, 5, 6]);
        assert_eq!(csv.points.len(), 6);
        let warning = non_finite_warning("s.csv", &csv.non_finite_lines).unwrap();
        assert!(warning.starts_with("s.csv: lines 3, 4, 5, 6 hold no finite value"), "{warning}");
        assert_eq!(non_finite_warning("s.csv", &[]), None);
        assert!(non_finite_warning("s.csv", &[7]).unwrap().starts_with("s.csv: line 7 holds no finite value"));
        let many: Vec<usize> = (1..=12).collect();
        assert!(non_finite_warning("s.csv", &many).unwrap().contains("10, ... (12 lines)"));
    }
}
