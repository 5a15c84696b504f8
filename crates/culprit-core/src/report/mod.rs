//! The report a maintainer acts on: the kernel test robot's mail (subject, greeting, the commit, the test, the
//! machine, the params, how to reproduce, the table), rendered from values as plain text, Markdown, HTML or JSON.
//!
//! Pure: the caller gathers a [`ReportInput`] (the comparison of base against the blamed commit, already decided
//! by `culprit_core::compare`, and for a bisect its outcome) and gets text back. Nothing here decides whether a
//! metric changed: every "regression" or "improvement" is the word of the verdict stored in the comparison. What
//! this module does choose is *which* rows to show (the headline, the changed monitors, the biggest perf-profile
//! moves), always among the rows the verdict called changed.

mod fix;
mod html;
pub(crate) mod markdown;
mod text;

pub use fix::{fix_verdict, FixVerdict};
/// The HTML report's escaping, for other HTML made of the same values (the dashboard of `culprit serve`).
pub use html::escape as escape_html;
/// The Markdown report's escaping, for prose `culprit compare --format markdown` prints beside its table.
pub use markdown::escape as escape_markdown;

use crate::bisect::Status;
use crate::compare::{printf, Change, CompareResult, InconclusiveReason, MetricRow, Verdict};
use crate::model::{HostFacts, Machine, MetricClass, ScratchFilesystem};
use crate::words::{counted, noun};
use serde::{Deserialize, Serialize};

/// Most monitor rows a report shows (the ones with the largest changes); JSON always carries them all.
pub const MAX_MONITOR_ROWS: usize = 30;
/// Most perf-profile rows a report shows, by the size of their move in percentage points.
pub const MAX_PROFILE_MOVES: usize = 15;
/// The width prose lines are wrapped to, so mail clients show them unbroken.
pub const LINE_WIDTH: usize = 90;

/// Why a report cannot be rendered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReportError {
    #[error(
        "the comparison has {got} column(s); a report needs the base and the blamed commit (and optionally the fix)"
    )]
    TooFewColumns { got: usize },
    #[error("the headline metric {metric} is not in the comparison; metrics compared: {available}")]
    MetricMissing { metric: String, available: String },
}

/// A commit (full SHA) or a label, with its subject when known.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CommitRef {
    pub sha: String,
    pub subject: Option<String>,
}

impl CommitRef {
    pub fn new(sha: impl Into<String>, subject: Option<String>) -> CommitRef {
        CommitRef { sha: sha.into(), subject }
    }

    /// Whether this is a git commit (a full SHA) rather than a label.
    pub fn is_commit(&self) -> bool {
        crate::model::is_full_sha(&self.sha)
    }

    /// lkp's short form: 10 hex digits of a commit, the whole label otherwise.
    pub fn short(&self) -> String {
        crate::model::table_short(&self.sha).to_string()
    }

    /// `sha ("subject")` as the robot's `commit:` line has it, or the bare SHA/label.
    pub fn with_subject(&self, short: bool) -> String {
        let id = if short { self.short() } else { self.sha.clone() };
        match &self.subject {
            Some(s) if !s.is_empty() => format!("{id} (\"{s}\")"),
            _ => id,
        }
    }
}

/// One commit (or range) a bisect blamed, with its share of the good-to-bad change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contributor {
    pub commit: CommitRef,
    /// The commit it was compared against (its parent for a located culprit; the range start otherwise).
    pub after: CommitRef,
    /// Narrowed to this commit, rather than a range the budget did not allow to narrow.
    pub located: bool,
    /// Share of the change, with its 90% interval.
    pub share: f64,
    pub share_low: f64,
    pub share_high: f64,
    /// Posterior probability that the change is at this commit (or its untestable suspects).
    pub confidence: f64,
    /// Untestable commits that cannot be told apart from `commit`.
    pub untestable_suspects: Vec<CommitRef>,
    /// The parents of `commit` that are goods given with a second `--good`, taken as good without being measured:
    /// the culprit was then confirmed against `after`, the first good, not against its parent. Left out of the JSON
    /// when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmeasured_good_parents: Vec<CommitRef>,
}

impl Contributor {
    /// Whether the change cannot be placed on this commit alone: it was located next to untestable commits (whose
    /// build, deploy or run failed), and no run tells a change at one of them from a change at the commit.
    pub fn is_set(&self) -> bool {
        self.located && !self.untestable_suspects.is_empty()
    }

    /// The commits the change may be at, oldest first, each with whether it is untestable: the untestable suspects,
    /// then the commit itself (the first testable commit after them).
    pub fn candidates(&self) -> Vec<(&CommitRef, bool)> {
        self.untestable_suspects.iter().map(|c| (c, true)).chain([(&self.commit, false)]).collect()
    }

    /// The candidates as one phrase, `a (untestable) or b`, each named by `name`, as git bisect's "The first bad
    /// commit could be any of" lists them.
    pub fn candidates_text(&self, name: impl Fn(&CommitRef) -> String) -> String {
        let named: Vec<String> = self
            .candidates()
            .into_iter()
            .map(|(c, untestable)| if untestable { format!("{} (untestable)", name(c)) } else { name(c) })
            .collect();
        or_list(&named)
    }
}

/// "a", "a or b", "a, b or c": alternatives as a sentence lists them, for the report's and the bisect summary's
/// sets of commits that cannot be told apart.
pub fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [only] => only.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// The reported contributor when its change cannot be placed on its commit alone ([`Contributor::is_set`]): the
/// subject, the opening and the commit block then name every commit it may be at, not the testable one alone, which
/// would send the mail to the author of what may be an innocent commit (often the one that fixed the build).
pub(crate) fn reported_set(input: &ReportInput) -> Option<&Contributor> {
    let b = input.bisect.as_ref()?;
    b.contributors.get(b.reported).filter(|c| c.is_set() && c.commit.sha == input.commit.sha)
}

/// What a bisect concluded, as the report needs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BisectSummary {
    pub session: i64,
    pub status: Status,
    /// Whether the blamed commit was confirmed (located and verified against its parent). An unconfirmed culprit
    /// is named as "most likely", never blamed as the cause.
    pub confirmed: bool,
    pub good: CommitRef,
    pub bad: CommitRef,
    pub runs: usize,
    pub builds: usize,
    /// Whether a build command ran at each commit; without one the commits were only checked out, and the report
    /// says so rather than count builds that did not happen (reports stored before this field read true).
    #[serde(default = "built_by_default")]
    pub built: bool,
    pub contributors: Vec<Contributor>,
    /// Which contributor this report is about (an index into `contributors`): its table is that commit against the
    /// commit before it. With several, the robot sends one mail per commit; this is one of them.
    #[serde(default)]
    pub reported: usize,
    /// The bisect's own sentence on why it ended where it did.
    pub reason: String,
    /// The bisect's caution when the commits it put at one level differ by more than their runs explain
    /// ([`crate::bisect::Outcome::caveat`]); reports stored before it read none.
    #[serde(default)]
    pub caveat: Option<String>,
    /// What the runs say about the commits outside the named ones ([`crate::bisect::Outcome::outside_words`]);
    /// reports stored before it read none.
    #[serde(default)]
    pub outside: Option<String>,
    /// Whether the bisect ended because bad differed from good the other way than it searched
    /// ([`crate::bisect::Outcome::improved`]): better than good for a regression's bisect, worse for an improvement's.
    /// The change did reproduce, the other way, and the mail says so instead of "did not reproduce".
    #[serde(default)]
    pub improved: bool,
    /// Whether the bisect searched an improvement (`culprit bisect --improvement`) rather than a regression: the
    /// mail words a change the other way from it. Reports stored before it read false, a regression's bisect.
    #[serde(default)]
    pub improvement: bool,
    /// Set when the bisect ended because good and bad surely differ by less than `--min-change`
    /// ([`crate::bisect::Outcome::below_min_change`]): the user's bar, as a fraction of good's level. The change may
    /// be real, so the mail must not say that it did not reproduce.
    #[serde(default)]
    pub below_min_change: Option<f64>,
    /// For a change that did not reproduce: how noisy the runs at good and bad were and the smallest change they would
    /// have caught ([`crate::bisect::Outcome::sensitivity`]). Where they could have missed a change worth a report,
    /// the mail says "not confirmed", not "did not reproduce". Reports stored before it read none.
    #[serde(default)]
    pub sensitivity: Option<crate::bisect::Sensitivity>,
}

fn built_by_default() -> bool {
    true
}

/// The metric at one tested commit, oldest first, for the trend line and the tested-commits list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrendPoint {
    pub commit: CommitRef,
    pub runs: usize,
    /// `None` when the commit could not be tested (build or run failed).
    pub mean: Option<f64>,
    /// The sample standard deviation (n - 1) of its runs, in the metric's unit, as the bisect's evidence gives it: the
    /// text list's `99.74 ±2.5` beside the table's `99.74 ± 2%`, which is lkp's population stddev over the mean.
    pub stddev: Option<f64>,
}

/// The sentence after the mail's params that marks those Culprit recorded but did not apply
/// ([`ReportInput::not_applied`]), if any.
pub(crate) fn not_applied_sentence(input: &ReportInput) -> Option<String> {
    match input.not_applied.is_empty() {
        true => None,
        false => Some(format!("recorded with the runs, not applied by Culprit: {}", input.not_applied.join(", "))),
    }
}

/// The filesystems one side's runs had their benchmark files on ([`ReportInput::scratch`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideScratch {
    /// The side's revision as the table names it (10 hex digits of a commit, or the label).
    pub revision: String,
    /// The distinct filesystems (and scratch directories) its runs recorded, in run order.
    pub filesystems: Vec<ScratchFilesystem>,
    /// Whether the directories are where a `command` job ran (it runs where culprit starts, or in the bisect's
    /// worktree), not scratch directories `--scratch` places.
    #[serde(default)]
    pub working_directory: bool,
}

/// The parameter-like lines that say where the benchmark's files were, for the mail's block after the parameters:
/// one `fs: ext4 (/dev/vda1), scratch /tmp/culprit-scratch` when every side's runs were in the same place, else one
/// per side (`fs at shm: tmpfs, scratch /dev/shm/x`), as `(key, value)`. Empty when no side recorded one.
pub(crate) fn scratch_lines(input: &ReportInput) -> Vec<(String, String)> {
    let side_text = |side: &SideScratch| {
        let named: Vec<String> = side
            .filesystems
            .iter()
            .map(|f| match (f.path.is_empty(), side.working_directory) {
                (true, _) => f.describe(),
                (false, false) => format!("{}, scratch {}", f.describe(), f.path),
                (false, true) => format!("{}, directory {}", f.describe(), f.path),
            })
            .collect();
        and_list(&named)
    };
    let texts: Vec<(&str, String)> = input
        .scratch
        .iter()
        .filter(|side| !side.filesystems.is_empty())
        .map(|side| (side.revision.as_str(), side_text(side)))
        .collect();
    match texts.first() {
        None => Vec::new(),
        Some((_, first)) if texts.iter().all(|(_, text)| text == first) => vec![("fs".to_string(), first.clone())],
        Some(_) => texts.into_iter().map(|(revision, text)| (format!("fs at {revision}"), text)).collect(),
    }
}

/// The line that leads the mail's block of [`scratch_lines`]: where `--scratch` put the benchmark's files, or for a
/// `command` job the directory it ran in, which `--scratch` does not move.
pub(crate) fn scratch_lead(input: &ReportInput) -> &'static str {
    match input.scratch.iter().any(|side| side.working_directory) {
        true => "the command ran in (its working directory):",
        false => "the benchmark's files were on (culprit run --scratch):",
    }
}

/// The mail's commit block, one `noun: value` line each: the blamed commits, and for a comparison of labels (which
/// name runs, not commits) the base too, so that the opening's "between the runs of:" reads on into both.
pub(crate) fn commit_block(input: &ReportInput) -> Vec<(&'static str, String)> {
    let blamed = blamed_commits(input);
    let noun = |c: &CommitRef| if c.is_commit() { "commit" } else { "label" };
    let mut block = Vec::new();
    if names_the_base(input) {
        let base_noun = if input.base.is_commit() { "base commit" } else { "base label" };
        block.push((base_noun, input.base.with_subject(false)));
    }
    // Two commits that are not parent and child: the block names both ends, neither blamed.
    let noun = |c: &CommitRef| match c.is_commit() && input.bisect.is_none() && input.span.is_some() {
        true => "bad commit",
        false => noun(c),
    };
    block.extend(blamed.iter().map(|(c, untestable)| {
        let marked = if *untestable { " (untestable)" } else { "" };
        (noun(c), format!("{}{marked}", c.with_subject(false)))
    }));
    block
}

/// Whether the mail compares stored runs whose reported side is a label: nothing is "due to" a label, which names
/// runs (a setup, a configuration), not a commit.
fn compares_labels(input: &ReportInput) -> bool {
    input.bisect.is_none() && !input.commit.is_commit()
}

/// Whether the commit block names the base as well as the bad side: for labels ([`compares_labels`]), and for two
/// commits that are not parent and child ([`CommitSpan`]), where the mail blames neither.
fn names_the_base(input: &ReportInput) -> bool {
    compares_labels(input) || (input.bisect.is_none() && input.span.is_some())
}

/// How the two commits of `report --compare BASE BAD` lie in the repository's history, when they are not parent and
/// child: the table then holds the change of several commits, or of history read backwards, and "due to commit: BAD"
/// blamed a commit the comparison says nothing about (QA 51: a 32.1% step nine commits before BAD was mailed as
/// BAD's). `None` for a bisect's culprit and its parent, for labels, for a BAD whose one parent is BASE, and when
/// the repository is not known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum CommitSpan {
    /// BAD is a descendant of BASE (or on a branch of its own since they forked), `commits` commits after it: the
    /// commits reachable from BAD and not from BASE (`git rev-list --count BASE..BAD`), BAD included.
    Range { commits: usize },
    /// BAD is an ancestor of BASE, `commits` commits before it (`git rev-list --count BAD..BASE`): the sides are
    /// swapped, and the table reads history backwards.
    Swapped { commits: usize },
}

/// The warning a mail of swapped sides carries after its opening, which `report` also prints on standard error.
pub fn swapped_warning(base: &CommitRef, bad: &CommitRef, commits: usize) -> String {
    format!(
        "warning: the bad side {} is an ancestor of the base {} ({} older), so this table reads history backwards: \
         a change from base to bad here is the opposite change in the order the commits were made. Give the older \
         commit first: culprit report --compare {} {}",
        bad.short(),
        base.short(),
        counted(commits, "commit"),
        bad.short(),
        base.short()
    )
}

/// The sentence that says how many runs of each side failed, when some did and every side still has a successful
/// one (a side whose every run failed leads the mail instead): the table reads the successful runs only, and "fewer
/// than 3 runs a side (4 vs 1)" hid that three of the four runs at one side had failed (QA 51).
///
/// A mail that leads with runs taken together ([`Pooled`]: a bisect's confirmation, try-fix's runs) counts the failures
/// among every stored run of its sides, where they are: the runs taken together are the ones that succeeded (QA 57:
/// a culprit that failed one run in six was mailed as if none had).
pub fn failed_runs_sentence(input: &ReportInput) -> Option<String> {
    let columns = input.pooled.as_ref().map_or(&input.comparison.columns, |pooled| &pooled.comparison.columns);
    if failed_side(input).is_some() || columns.iter().all(|c| c.failed_runs == 0) {
        return None;
    }
    let labels = column_labels(input);
    let each: Vec<String> = columns
        .iter()
        .zip(&labels)
        .map(|(c, label)| format!("{} of {} at {label}", c.failed_runs, c.ok_runs + c.failed_runs))
        .collect();
    let command = input.failures_command.as_deref().unwrap_or("culprit results --failures");
    let (among, tables) = match input.pooled {
        Some(_) => (" among every stored run", "The tables read"),
        None => ("", "The table reads"),
    };
    Some(format!(
        "Runs failed{among}: {}. {tables} the successful runs only; `{command}` lists each failed run with its \
         reason.",
        and_list(&each)
    ))
}

/// The paragraphs that follow the mail's opening: the warning of swapped sides, and how many runs failed.
pub(crate) fn after_opening(input: &ReportInput) -> Vec<String> {
    let swapped = match (&input.bisect, input.span) {
        (None, Some(CommitSpan::Swapped { commits })) => Some(swapped_warning(&input.base, &input.commit, commits)),
        _ => None,
    };
    swapped.into_iter().chain(failed_runs_sentence(input)).collect()
}

/// The machines each side of a comparison ran on ([`ReportInput::machines`]), named by the table's column label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideMachines {
    /// The side's revision as the table names it (10 hex digits of a commit, or the label).
    pub revision: String,
    /// The distinct machine names (`CULPRIT_MACHINE`, else the host name) its runs were stored under.
    pub machines: Vec<String>,
}

/// The line after the machine line when the sides ran on different machines ([`ReportInput::machines`]):
/// `machine: vm (a) and box2 (m2): the two sides ran on different machines, so the change may be the machines'`.
pub fn machines_line(input: &ReportInput) -> Option<String> {
    if input.machines.is_empty() {
        return None;
    }
    let each: Vec<String> =
        input.machines.iter().map(|side| format!("{} ({})", and_list(&side.machines), side.revision)).collect();
    let sides = if input.machines.len() == 2 { "the two sides" } else { "the sides" };
    Some(format!(
        "machine: {}: {sides} ran on different machines, so the change may be the machines', not the revisions'",
        and_list(&each)
    ))
}

/// The name the reproduce steps give the job file.
pub const JOB_FILE: &str = "job.yaml";

/// The job file's text to print at the end of the report: only when it is not written next to it.
pub(crate) fn inline_job(input: &ReportInput) -> Option<&str> {
    input.job_yaml.as_deref().filter(|_| input.job_file.is_none()).filter(|yaml| !yaml.trim().is_empty())
}

/// The tag lines a regression's mail asks the fix to carry, as the robot's mails do ("If you fix the issue, kindly
/// add following tag" then "Reported-by: kernel test robot <...>"), so that the fix credits whoever found the
/// regression: only with a reporter ([`ReportInput::reported_by`]) and when the headline is a regression (an
/// improvement, or no significant change, is nothing to fix).
pub(crate) fn reported_by_tag(input: &ReportInput, h: &Headline) -> Option<[String; 2]> {
    let reporter = input.reported_by.as_deref().map(str::trim).filter(|r| !r.is_empty())?;
    (h.verdict == Verdict::Regression)
        .then(|| ["If you fix the issue, kindly add following tag".to_string(), format!("Reported-by: {reporter}")])
}

/// The name the reproduce steps give the patch of a try-fix's fix column, saved beside [`JOB_FILE`].
pub const PATCH_FILE: &str = "fix.patch";

/// The fix's patch to print at the end of the report, after the job: only when it is not written next to it.
pub(crate) fn inline_patch(input: &ReportInput) -> Option<&str> {
    input.fix_patch.as_deref().filter(|_| input.patch_file.is_none())
}

/// Everything a report is rendered from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportInput {
    /// The headline metric; its row in `comparison` gives the change and the verdict.
    pub metric: String,
    /// The base column (the blamed commit's parent, or the good side of a comparison).
    pub base: CommitRef,
    /// The blamed (or bad) commit: column 1 of `comparison`.
    pub commit: CommitRef,
    /// The fix under test: column 2 of `comparison` when present.
    pub fix: Option<CommitRef>,
    pub testcase: String,
    pub machine: Machine,
    /// What an lkp host file said of the machine beyond its facts (sockets, the CPU's model name), for the machine
    /// line as the robot writes it (`96 threads 2 sockets Ice Lake with 256G memory`): an imported run's job.yaml
    /// carries it. Reports stored before it read none, and it is left out of the JSON when there is none.
    #[serde(default, skip_serializing_if = "HostFacts::is_empty")]
    pub host: HostFacts,
    /// When the sides' runs differ in machine facts (`Machine::differences`: CPUs, memory, kernel, CPU model), the
    /// sentence that says so after the machine line, which describes the bad side's machine only: a mail of runs
    /// with 2 CPUs against runs under `taskset -c 0` named one thread (QA 46). Left out of the JSON when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machines_differ: Option<String>,
    /// When the sides' runs were stored under different machine names (`CULPRIT_MACHINE`, else the host name), each
    /// side's: the mail says so after the machine line ([`machines_line`]), which describes the bad side's machine.
    /// A table of two machines named only the base's in its tbox_group, and the warning was on standard error only
    /// (QA 51). Empty, and left out of the JSON, when every run is of one machine.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub machines: Vec<SideMachines>,
    /// How BASE and BAD of `report --compare` lie in history when BAD is not BASE's child ([`CommitSpan`]): the mail
    /// then names both and blames neither. Left out of the JSON when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<CommitSpan>,
    /// The command that lists the failed runs, with the store named (`culprit results --db STORE --failures`), for
    /// [`failed_runs_sentence`]; without it the sentence names the command without a store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failures_command: Option<String>,
    /// The job's params in job order, as `key: value`.
    pub params: Vec<(String, String)>,
    /// The filesystems each side's benchmark files were on (its runs' `--scratch`), for the sides whose runs
    /// recorded one, in the table's column order: the mail states them under the parameters, as lkp's mails carry
    /// `fs:` and `disk:`. An fio mail of ext4 against tmpfs said neither (QA 46). Left out of the JSON when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scratch: Vec<SideScratch>,
    /// When the sides' filesystems differ (`ScratchFilesystem::differences`), the sentence that says so, as compare
    /// says it under its table. Left out of the JSON when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystems_differ: Option<String>,
    /// The params among `params` that are lkp's settings of the test box (`disk`, `fs`, `cpufreq_governor`), which
    /// Culprit records with the runs but does not apply, as `culprit run` says: the mail marks them, so that it does
    /// not give "disk: 2pmem, fs: ext4" as the setup of a run on tmpfs. Reports stored before it read none, and it is
    /// left out of the JSON when there is none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_applied: Vec<String>,
    /// The exact commands that reproduce the result, one per line (comments start with `#`).
    pub reproduce: Vec<String>,
    /// The file name the job is written to next to the report, when it is.
    pub job_file: Option<String>,
    /// The text of the job file the reproduce steps run ([`JOB_FILE`]). A report that has no job file written next
    /// to it (`job_file` is None: a report on standard output, pasted into a mail) ends with it, as the robot's
    /// mails carry it attached, so the steps can be followed from the report alone.
    pub job_yaml: Option<String>,
    /// The file name the fix's patch is written to next to the report, when it is ([`PATCH_FILE`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_file: Option<String>,
    /// The text of the patch a recorded `culprit try-fix` applied to make the fix column's tree, which the reproduce
    /// steps apply (`git apply`). A report without it written next to it (`patch_file` is None) ends with it, after
    /// the job: the path try-fix was given names nothing on the machine the mail is read on. `None` without a fix
    /// column of a try-fix, and for a try-fix stored without the text (before schema version 9, or a patch that is
    /// not UTF-8), whose steps name the patch by that path. Left out of the JSON when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix_patch: Option<String>,
    /// Who the mail credits for the report, `Name <email>` (`culprit report --reported-by`, `$CULPRIT_REPORTED_BY`):
    /// a regression's mail asks the fix to carry the tag ([`reported_by_tag`]). Left out of the JSON when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_by: Option<String>,
    /// Base, commit and optionally fix, decided by `culprit_core::compare`.
    pub comparison: CompareResult,
    pub bisect: Option<BisectSummary>,
    /// The metric over the tested commits (a bisect's evidence, or the compared columns).
    pub trend: Vec<TrendPoint>,
    /// When every run of the base or of the commit failed: which run failed first and why (`run 12: ...`), so the
    /// report can lead with the failure and say where to look rather than with a change nothing measured. Reports
    /// stored before it read none, and it is left out of the JSON when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// Which runs the table's rows come from, when some of its columns' revisions also have profiling runs (perf
    /// attached, `culprit bisect --profile`). Reports stored before it read none, and it is left out of the JSON
    /// when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<RunSources>,
    /// The fix's verdict ([`fix_verdict`], as `culprit try-fix` gives it) when the table has a fix column: the
    /// sentence under the table ends with it, so the mail and try-fix never answer the same runs in two ways (the
    /// column's own word said "still a regression" where try-fix said "made worse"). Left out of the JSON when
    /// there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix_verdict: Option<FixVerdict>,
    /// For a bisect's culprit, the table of the fresh interleaved runs that confirmed it against the commit before
    /// it ([`Confirmation`]), which the mail leads with ([`lead_with_confirmation`]). Reports stored before it read
    /// none, and it is left out of the JSON (whose comparison it then is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<Confirmation>,
    /// When the main table is of runs taken together rather than of every stored run ([`Pooled`]): the table of
    /// every stored run, shown after it. A bisect's report gets it when rendered ([`lead_with_confirmation`]);
    /// `report --compare --fix` sets it for try-fix's runs. Left out of the JSON when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pooled: Option<Pooled>,
}

/// The fewest fresh runs a side for which the report shows the bisect's confirmation as a table of its own: with
/// fewer, no verdict of `compare` could call the step a change, and the table would only seem to contradict the
/// sequential test the bisect passed on them.
pub const CONFIRMATION_MIN_RUNS: usize = 3;

/// The evidence a bisect blamed its culprit on: the runs of the culprit and of the commit it was compared against
/// taken from the start of the verification that confirmed it, interleaved (one of each after the other), so that
/// load on the machine fell on both alike. The table of every stored run of the two pools runs from hours apart,
/// and on a loaded machine can read a step as noise that these runs, taken side by side, show; the mail shows both.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Confirmation {
    /// The metric the bisect searched, which the confirmation tested.
    pub metric: String,
    /// The base (the commit confirmed against) and the culprit, over the fresh runs only, decided by
    /// `culprit_core::compare` as the main table is.
    pub comparison: CompareResult,
}

/// Which runs lead a report whose main table is not of every stored run of its revisions ([`Pooled`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lead {
    /// The bisect's confirmation ([`Confirmation`]): the culprit and the commit before it, interleaved.
    Confirmation,
    /// The runs `culprit try-fix` took of base, bad and the fix, interleaved.
    TryFix,
}

/// The table of every stored run of the report's revisions, when the main table is of the runs that were taken
/// together ([`Lead`]): the mail shows it after the main table, cut to the rows of the headline metric and of
/// `metric`. Pooled, runs from hours apart, some on a loaded machine, read a 37.8% step as 17.5% at p = 0.04, and
/// the subject line a maintainer acts on is read from the main table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pooled {
    /// What the main table's runs are.
    pub lead: Lead,
    /// The metric the runs of the main table were taken to test (the bisect's, try-fix's).
    pub metric: String,
    /// Every stored run of the revisions, in the main table's columns, decided by `culprit_core::compare`.
    pub comparison: CompareResult,
}

/// The report as it is rendered: a bisect's report that confirmed its culprit on at least
/// [`CONFIRMATION_MIN_RUNS`] fresh runs a side leads with those runs ([`Lead::Confirmation`]): the headline and the
/// main table are theirs, and the table of every stored run follows as [`Pooled`]. The perf rows the pooled table
/// read from profiling runs (`bisect --profile`, taken at the end of the bisect) are kept in the main table, which
/// the fresh plain runs lack. `None` when the report leads with every stored run as it is.
pub fn lead_with_confirmation(input: &ReportInput) -> Option<ReportInput> {
    let confirmation = input.confirmation.as_ref()?;
    if input.pooled.is_some() || !input.bisect.as_ref().is_some_and(|b| b.confirmed) || failed_side(input).is_some() {
        return None;
    }
    let [base, commit] = confirmation.comparison.columns.as_slice() else {
        return None;
    };
    if base.ok_runs.min(commit.ok_runs) < CONFIRMATION_MIN_RUNS {
        return None;
    }
    // Without the headline metric's row the fresh runs cannot give the headline; the stored runs then lead.
    if !confirmation.comparison.rows.iter().any(|row| row.metric == input.metric) {
        return None;
    }
    let mut main = confirmation.comparison.clone();
    let profiled: Vec<&str> =
        input.sources.iter().flat_map(|s| s.profiled_monitors.iter().map(String::as_str)).collect();
    let from_profiling = input.comparison.rows.iter().filter(|row| {
        crate::compare::profiled::profiling_monitor(&row.metric).is_some_and(|m| profiled.contains(&m))
            && !main.rows.iter().any(|fresh| fresh.metric == row.metric)
    });
    main.rows.extend(from_profiling.cloned().collect::<Vec<_>>());
    let sources = input.sources.clone().map(|sources| RunSources {
        plain_runs: main.columns.iter().map(|c| c.ok_runs).collect(),
        ..sources
    });
    let pooled =
        Pooled { lead: Lead::Confirmation, metric: confirmation.metric.clone(), comparison: input.comparison.clone() };
    Some(ReportInput { comparison: main, pooled: Some(pooled), confirmation: None, sources, ..input.clone() })
}

/// The runs of each column of `comparison` in words: "5 interleaved runs of each", or "5 interleaved runs of A and 6
/// of B" (`labels` naming the columns).
fn interleaved_runs(comparison: &CompareResult, labels: &[String]) -> String {
    let counts: Vec<usize> = comparison.columns.iter().map(|c| c.ok_runs).collect();
    match counts.as_slice() {
        [n, rest @ ..] if rest.iter().all(|m| m == n) => format!("{n} interleaved runs of each"),
        _ => {
            let each: Vec<String> = counts.iter().zip(labels).map(|(n, label)| format!("{n} of {label}")).collect();
            format!("{} interleaved runs: {}", counts.iter().sum::<usize>(), and_list(&each))
        }
    }
}

/// The labels of the report's columns: base, commit and the fix when there is one.
fn column_labels(input: &ReportInput) -> Vec<String> {
    [Some(&input.base), Some(&input.commit), input.fix.as_ref()].into_iter().flatten().map(CommitRef::short).collect()
}

/// The sentence under the main table that says which runs it is of, when they are not every stored run
/// ([`Pooled`]).
pub(crate) fn lead_sentence(input: &ReportInput) -> Option<String> {
    let pooled = input.pooled.as_ref()?;
    let runs = interleaved_runs(&input.comparison, &column_labels(input));
    Some(match pooled.lead {
        Lead::Confirmation => format!(
            "This table is of the bisect's confirmation: {runs}, taken one after the other, so that load on the \
             machine fell on both alike. The table of every stored run of the two follows."
        ),
        Lead::TryFix => format!(
            "This table is of the runs culprit try-fix took: {runs}, taken in turn, so that load on the machine fell \
             on each alike. The table of every stored run of them follows."
        ),
    })
}

/// The table of every stored run ([`Pooled`]) as the report shows it after the main one, with its title: the rows
/// of the report's metric and of the metric the main table's runs were taken to test.
pub(crate) fn pooled_table(input: &ReportInput) -> Option<(String, CompareResult)> {
    let pooled = input.pooled.as_ref()?;
    let mut shown = pooled.comparison.clone();
    shown.rows.retain(|row| row.metric == input.metric || row.metric == pooled.metric);
    if shown.rows.is_empty() {
        return None;
    }
    let counts: Vec<usize> = shown.columns.iter().map(|c| c.ok_runs).collect();
    let runs = runs_text(&counts, &column_labels(input));
    let title = format!(
        "Every stored run, pooled ({runs}): runs taken at other times too, when the load on the machine may have \
         differed, so it can read another change than the table above, which the headline is from:"
    );
    Some((title, shown))
}

/// Which runs a table's rows come from when its revisions have profiling runs besides the plain ones: perf slows
/// the benchmark, so the profiling runs give only the rows of the perf monitors the plain runs lack
/// (`compare::profiled`), and every other row is read from the plain runs. Counts are per column, in the
/// comparison's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSources {
    /// Successful plain runs: every row but the profiled monitors' reads them.
    pub plain_runs: Vec<usize>,
    /// Successful profiling runs.
    pub profiling_runs: Vec<usize>,
    /// The monitors whose rows read the profiling runs (`perf-profile`, `perf-stat`); empty when the plain runs carry
    /// them all or perf gave none.
    pub profiled_monitors: Vec<String>,
    /// The perf monitors that gave no data in any run, profiling or plain (`compare::profiled::silent_monitors`):
    /// the table has none of their rows because perf recorded nothing, which the mail says rather than let the
    /// reader think the profiling runs found nothing new.
    #[serde(default)]
    pub silent_monitors: Vec<String>,
}

/// Which of the base and the commit had no successful run: then no metric of the two can be compared, and the
/// report leads with the failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailedSide {
    Base,
    Commit,
    Both,
}

/// The side of the comparison (base or commit) every run of which failed, if any.
pub(crate) fn failed_side(input: &ReportInput) -> Option<FailedSide> {
    let all_failed = |i: usize| input.comparison.columns.get(i).is_some_and(|c| c.ok_runs == 0 && c.failed_runs > 0);
    match (all_failed(0), all_failed(1)) {
        (true, true) => Some(FailedSide::Both),
        (true, false) => Some(FailedSide::Base),
        (false, true) => Some(FailedSide::Commit),
        (false, false) => None,
    }
}

/// `3 of 3 runs` for the column at `index`.
fn failed_runs_text(input: &ReportInput, index: usize) -> String {
    let n = input.comparison.columns.get(index).map_or(0, |c| c.failed_runs);
    format!("{n} of {}", counted(n, "run"))
}

/// The report's first sentence when every run of a side failed: what failed, that nothing is compared, and where
/// the reasons are.
fn failure_opening(input: &ReportInput, side: FailedSide) -> String {
    let (base, commit) = (input.base.short(), input.commit.short());
    let what = match side {
        FailedSide::Commit => format!(
            "FYI, every run of {} at {commit} failed ({}), so nothing of it can be compared with {base}.",
            input.testcase,
            failed_runs_text(input, 1)
        ),
        FailedSide::Base => format!(
            "FYI, every run of {} at the base {base} failed ({}), so nothing of {commit} can be compared with it.",
            input.testcase,
            failed_runs_text(input, 0)
        ),
        FailedSide::Both => format!(
            "FYI, every run of {} failed, at the base {base} ({}) and at {commit} ({}), so nothing can be compared.",
            input.testcase,
            failed_runs_text(input, 0),
            failed_runs_text(input, 1)
        ),
    };
    let first = input.failure.as_deref().map(|f| format!(" The first failed {f}.")).unwrap_or_default();
    format!("{what}{first} `culprit results --failures` lists every failed run with its reason.")
}

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    Text,
    Markdown,
    Html,
    Json,
}

impl Format {
    /// The file extension of a report written to a directory.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Text => "txt",
            Format::Markdown => "md",
            Format::Html => "html",
            Format::Json => "json",
        }
    }
}

/// The headline's facts, read from the comparison: the change of the headline metric in the commit's column and
/// the verdict the compare engine gave it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Headline {
    pub metric: String,
    pub change: f64,
    pub absolute: bool,
    pub verdict: Verdict,
    /// The change of the fix column against the base, when there is a fix.
    pub fix_change: Option<f64>,
}

impl Headline {
    /// The change as the robot prints it: `-21.8%` or `58.4%` (no plus sign), `-25.6` for absolute metrics.
    pub fn amount(&self) -> String {
        amount(self.change, self.absolute)
    }

    /// The noun after the amount: `regression`, `improvement`, `change`, ...
    pub fn noun(&self) -> &'static str {
        match self.verdict {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::Changed => "change",
            Verdict::Unchanged => "non-significant change",
            Verdict::Inconclusive { .. } => "undecided change",
        }
    }
}

/// A change as the robot's headlines print it: one decimal, a minus sign only.
pub fn amount(change: f64, absolute: bool) -> String {
    if change.is_infinite() {
        return crate::compare::render::infinite_change(change).to_string();
    }
    let number = printf::fixed(change, 1, false);
    if absolute {
        number
    } else {
        format!("{number}%")
    }
}

/// The change of `metric` in column `column` (1 = the commit) of a comparison, or `None` when the row or column
/// is absent.
pub fn change_of<'a>(result: &'a CompareResult, metric: &str, column: usize) -> Option<(&'a MetricRow, &'a Change)> {
    let row = result.rows.iter().find(|r| r.metric == metric)?;
    let change = row.changes.iter().find(|c| c.column == column)?;
    Some((row, change))
}

/// The headline of a report: the input metric's change and verdict in the commit's column.
pub fn headline(input: &ReportInput) -> Result<Headline, ReportError> {
    let got = input.comparison.columns.len();
    if got < 2 {
        return Err(ReportError::TooFewColumns { got });
    }
    let Some((_, change)) = change_of(&input.comparison, &input.metric, 1) else {
        let mut names: Vec<&str> = input.comparison.rows.iter().map(|r| r.metric.as_str()).take(12).collect();
        if input.comparison.rows.len() > names.len() {
            names.push("...");
        }
        return Err(ReportError::MetricMissing { metric: input.metric.clone(), available: names.join(", ") });
    };
    let fix_change =
        if input.fix.is_some() { change_of(&input.comparison, &input.metric, 2).map(|(_, c)| c.change) } else { None };
    Ok(Headline {
        metric: input.metric.clone(),
        change: change.change,
        absolute: change.absolute,
        verdict: change.verdict,
        fix_change,
    })
}

/// The rows a headline may name: the program's own metrics, not monitors, profiles or Culprit's bookkeeping rows
/// (`culprit.failed_runs`).
fn headline_candidates(result: &CompareResult) -> impl Iterator<Item = &MetricRow> {
    result.rows.iter().filter(|r| r.class.is_benchmarks_own(&r.metric))
}

/// The metric a `command` job measures when it captures none: its wall time, what `--run` bisects.
pub const COMMAND_ELAPSED_TIME: &str = "command.elapsed_time";

/// The metrics a robot follows a job by when none was named (`track --follow` bisects and mails their changes
/// only), among the `metrics` its runs have: the job's KPIs, by the rule headlines lead with
/// (`compare::direction::is_kpi`: a benchmark's rate, a number a `command` job captures), else a `command` job's
/// wall time; sorted, and empty when the job has neither (a benchmark of no known KPI). A fixed choice, not the
/// most significant change of the moment: that one flipped between passes and machines (QA 45b 9: one regression
/// mailed as user time by one machine and as wall time by another) and picked timer-resolution noise such as a
/// command's system time.
pub fn primary_metrics<'a>(metrics: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut leading: Vec<&str> = metrics.into_iter().filter(|m| MetricClass::of(m).is_benchmarks_own(m)).collect();
    leading.sort_unstable();
    leading.dedup();
    let kpis: Vec<&str> = leading.iter().copied().filter(|m| crate::compare::direction::is_kpi(m)).collect();
    if !kpis.is_empty() {
        return kpis;
    }
    leading.into_iter().filter(|m| *m == COMMAND_ELAPSED_TIME).collect()
}

/// The metric a comparison's report should lead with when none was named: among program metrics whose verdict in
/// column 1 is a regression or an improvement (or, for a KPI, a change of no known direction), a KPI first
/// (`compare::direction::is_kpi`: `fio.write_iops`, not `fio.workload`, which moves with it), then a regression,
/// then the most significant change (smallest q), then the largest; else the first program metric with any change;
/// else `None`. Significance before size, as the report picks its job (`Strength`): a command's user time +29.4% at
/// q 4e-10 is the clearer finding than its wall time +40.1% ± 27% at q 0.04, which the largest change led with once
/// both counted.
pub fn headline_metric(result: &CompareResult) -> Option<String> {
    // (a KPI, a regression, -q, |change|): larger is the better headline.
    type Rank = (bool, bool, f64, f64);
    let mut best: Option<(Rank, &str)> = None;
    for row in headline_candidates(result) {
        let Some(c) = row.changes.iter().find(|c| c.column == 1) else { continue };
        let is_kpi = crate::compare::direction::is_kpi(&row.metric);
        // A KPI of no known direction (a number a `command` job captures) that changed is still what the job
        // measures: it leads over the wall time of the command around it, whose regression under a loaded machine
        // headed a mail whose captured ops had moved 30%.
        let leads = match c.verdict {
            Verdict::Regression | Verdict::Improvement => true,
            Verdict::Changed => is_kpi,
            Verdict::Unchanged | Verdict::Inconclusive { .. } => false,
        };
        if !leads {
            continue;
        }
        // Two constant sides apart are decided by their zero-width ratio interval, not q (see `compare::verdict`):
        // every resample agrees, as certain as a change gets.
        let constant = c.ratio_ci.is_some_and(|ci| ci.is_point());
        let q = if constant { 0.0 } else { c.q.unwrap_or(1.0) };
        let key = (is_kpi, c.verdict == Verdict::Regression, -q, c.change.abs());
        if best.is_none_or(|(b, _)| key > b) {
            best = Some((key, &row.metric));
        }
    }
    if let Some((_, m)) = best {
        return Some(m.to_string());
    }
    headline_candidates(result)
        .find(|r| r.changes.iter().any(|c| c.column == 1 && c.verdict.is_change()))
        .map(|r| r.metric.clone())
}

/// The metric a report leads with when [`headline_metric`] finds none (nothing changed, or only rows of no known
/// direction): the test's KPI, first in table order, so a "no significant change" mail speaks of what the test
/// measures (`fio.read_iops`, not `fio.latency_1000ms%`, a latency bucket that is 0 on both sides); else the first
/// program metric; else `None`. A metric that is 0 on every side comes after those that are not: fio reports
/// `read_iops` of 0 for a write-only job, and a randwrite mail led with "no significant change of fio.read_iops".
pub fn quiet_headline_metric(result: &CompareResult) -> Option<String> {
    let measured = |r: &&MetricRow| r.sides.iter().any(|side| side.mean != 0.0);
    let kpi = |r: &&MetricRow| crate::compare::direction::is_kpi(&r.metric);
    headline_candidates(result)
        .find(|r| kpi(r) && measured(r))
        .or_else(|| headline_candidates(result).find(measured))
        .or_else(|| headline_candidates(result).find(kpi))
        .or_else(|| headline_candidates(result).next())
        .map(|r| r.metric.clone())
}

/// Whether a row changed in the commit's column or the fix's, by the stored verdicts.
fn changed(row: &MetricRow) -> bool {
    row.any_change()
}

/// Size of a row's change in the commit's column, for ordering (infinite sorts first, a side without samples last).
fn size(row: &MetricRow) -> f64 {
    row.changes.iter().find(|c| c.column == 1).map(|c| c.change.abs()).filter(|s| !s.is_nan()).unwrap_or(0.0)
}

/// The q-value of a row's most significant change (in the commit's column or the fix's), for ordering the monitor
/// rows: 1 for a row without one, and 0 for two constant sides apart, decided by their zero-width interval.
fn least_q(row: &MetricRow) -> f64 {
    let q = |c: &Change| if c.ratio_ci.is_some_and(|ci| ci.is_point()) { 0.0 } else { c.q.unwrap_or(1.0) };
    row.changes.iter().filter(|c| c.verdict.is_change()).map(q).fold(1.0, f64::min)
}

/// The rows of the report's table: program metrics that changed (and the headline metric always), the monitor
/// metrics that changed (the most significant first, then the largest, at most [`MAX_MONITOR_ROWS`]: by size alone,
/// system-wide counters that drift ±60-300% between runs filled the mail's 30 rows), and the biggest perf-profile moves
/// (`perf-profile.calltrace.*`, `children.*`, `self.*`, largest in absolute percentage points, at most
/// [`MAX_PROFILE_MOVES`]). Returns the rows and how many changed rows were left out.
pub fn report_rows<'a>(result: &'a CompareResult, headline_metric: &str) -> (Vec<&'a MetricRow>, usize) {
    let mut program: Vec<&MetricRow> = Vec::new();
    let mut monitors: Vec<&MetricRow> = Vec::new();
    let mut profile: Vec<&MetricRow> = Vec::new();
    for row in &result.rows {
        let wanted = changed(row) || row.metric == headline_metric;
        if !wanted {
            continue;
        }
        match row.class {
            MetricClass::Program => program.push(row),
            MetricClass::Monitor => monitors.push(row),
            MetricClass::Profile => profile.push(row),
        }
    }
    let by_size = |a: &&MetricRow, b: &&MetricRow| size(b).total_cmp(&size(a)).then_with(|| a.metric.cmp(&b.metric));
    monitors.sort_by(|a, b| least_q(a).total_cmp(&least_q(b)).then_with(|| by_size(a, b)));
    profile.sort_by(by_size);
    let left_out = monitors.len().saturating_sub(MAX_MONITOR_ROWS) + profile.len().saturating_sub(MAX_PROFILE_MOVES);
    monitors.truncate(MAX_MONITOR_ROWS);
    profile.truncate(MAX_PROFILE_MOVES);
    // The largest moves are chosen, then shown in the comparison's own order, the order of the `culprit compare`
    // the mail tells the reader to run: sorted by size, "numbers matching compare" had to be checked row by row
    // (QA 45b). The rows are the comparison's own, so their addresses give that order.
    let place = |row: &&MetricRow| result.rows.iter().position(|r| std::ptr::eq(r, *row)).unwrap_or(usize::MAX);
    monitors.sort_by_key(place);
    profile.sort_by_key(place);
    let mut rows = program;
    rows.extend(monitors);
    rows.extend(profile);
    (rows, left_out)
}

/// A copy of the comparison holding only the report's rows, in the report's order, for the table renderers.
pub fn report_table(result: &CompareResult, headline_metric: &str) -> (CompareResult, usize) {
    let (rows, left_out) = report_rows(result, headline_metric);
    let mut shown = result.clone();
    shown.rows = rows.into_iter().cloned().collect();
    (shown, left_out)
}

/// Renders a report in `format`.
pub fn render(input: &ReportInput, format: Format) -> Result<String, ReportError> {
    let led = lead_with_confirmation(input);
    let input = led.as_ref().unwrap_or(input);
    match format {
        Format::Text => text::render_text(input),
        Format::Markdown => markdown::render_markdown(input),
        Format::Html => html::render_html(input),
        Format::Json => render_json(input),
    }
}

/// The subject line: `[culprit] <short sha> <subject>: <metric> <change> regression|improvement`, and for a
/// bisect that could not confirm its culprit, or found nothing, the subject says so.
pub fn subject_line(input: &ReportInput) -> Result<String, ReportError> {
    let h = headline(input)?;
    let commit = match (reported_set(input), &input.commit.subject) {
        (Some(set), _) => format!("one of {}", set.candidates_text(CommitRef::short)),
        (None, Some(s)) if !s.is_empty() => format!("{} {s}", input.commit.short()),
        _ => input.commit.short(),
    };
    // Two commits that are not parent and child: the subject names the range, not BAD as if it were the culprit.
    let (base, bad) = (input.base.short(), input.commit.short());
    let commit = match (&input.bisect, input.span) {
        (None, Some(CommitSpan::Range { commits })) => format!("{base}..{bad} ({})", counted(commits, "commit")),
        (None, Some(CommitSpan::Swapped { .. })) => format!("{base}..{bad} SWAPPED (bad is older than base)"),
        _ => commit,
    };
    let what = format!("{} {} {}", h.metric, h.amount(), h.noun());
    // A side without a successful run has no value to give a change of, so the subject says what failed instead.
    let failed = |side: &str, index: usize| {
        format!("every run of {}{side} failed ({})", input.testcase, failed_runs_text(input, index))
    };
    if let Some(side) = failed_side(input) {
        let what = match side {
            FailedSide::Commit => failed("", 1),
            FailedSide::Base => failed(&format!(" at the base {}", input.base.short()), 0),
            FailedSide::Both => format!("every run of {} failed, at the base and here", input.testcase),
        };
        return Ok(format!("[culprit] {commit}: {what}"));
    }
    if let Some(idle) = idle_stressor(input) {
        let sides = match (idle.base, idle.commit) {
            (true, true) => format!("at {} and {}", input.base.short(), input.commit.short()),
            (true, false) => format!("at the base {}", input.base.short()),
            _ => "here".to_string(),
        };
        let stressor = idle.stressor;
        return Ok(format!(
            "[culprit] {commit}: stress-ng's {stressor} stressor did no work (skipped by stress-ng) {sides}"
        ));
    }
    Ok(match &input.bisect {
        Some(b) if b.status == Status::NotReproduced && b.improved => format!(
            "[culprit] {}..{}: {} {}; no commit blamed",
            b.good.short(),
            b.bad.short(),
            h.metric,
            if b.improvement { "regressed, not improved" } else { "improved, not regressed" }
        ),
        Some(b) if b.status == Status::NotReproduced => match b.below_min_change {
            Some(bar) => format!(
                "[culprit] {}..{}: {} changed less than --min-change {}, no commit blamed",
                b.good.short(),
                b.bad.short(),
                h.metric,
                printf::percent_of_fraction(bar)
            ),
            None => format!(
                "[culprit] {}..{}: {} {}, no commit blamed",
                b.good.short(),
                b.bad.short(),
                h.metric,
                match b.sensitivity.filter(|s| s.could_miss()) {
                    Some(s) => format!(
                        "change not confirmed (the runs rule out only changes above ~{})",
                        s.detectable_percent()
                    ),
                    None => "did not reproduce".to_string(),
                }
            ),
        },
        // No commit was narrowed to: the subject names the range, not bad as if it were the likely culprit.
        Some(b) if b.contributors.is_empty() => {
            format!("[culprit] NOT LOCATED {}..{}: {what}, no commit blamed", b.good.short(), b.bad.short())
        }
        // The runs placed the change (or the reported part of a series) in a range, no commit of it: the subject
        // names that range, not its last commit.
        Some(b) if reported_range(b).is_some() => {
            let range = &b.contributors[b.reported];
            format!("[culprit] NOT LOCATED {}..{}: {what}, no commit blamed", range.after.short(), range.commit.short())
        }
        Some(b) if !b.confirmed => format!("[culprit] NOT CONFIRMED {commit}: {what}"),
        // Confirmed on the bisect's interleaved runs while the pooled table is not significant (see `opening`): the
        // subject says both, not a bare "non-significant change" of the commit the mail blames.
        Some(_) if !h.verdict.is_change() => format!(
            "[culprit] {commit}: {} {} change confirmed by bisect ({}: {})",
            h.metric,
            h.amount(),
            if input.pooled.is_some() { "compare on its runs" } else { "the pooled runs" },
            h.noun()
        ),
        // A comparison with nothing significant blames nothing: the subject says so, as the opening does, rather
        // than a change with "non-significant" after it that reads as a finding in a list of subjects.
        None if h.verdict == Verdict::Unchanged => {
            format!("[culprit] {commit}: no significant change of {} ({})", h.metric, h.amount())
        }
        _ => format!("[culprit] {commit}: {what}"),
    })
}

/// The JSON report: the subject, the headline, and the input with the comparison cut to the rows shown.
pub fn render_json(input: &ReportInput) -> Result<String, ReportError> {
    let subject = subject_line(input)?;
    let headline = headline(input)?;
    // The comparison is cut to the report's rows: a tracker wants what the mail shows, not every unchanged
    // counter (`culprit compare --format json --all` has those).
    let (table, left_out) = report_table(&input.comparison, &input.metric);
    // The pooled table too is cut to what the mail shows; the confirmation, when it leads, is the comparison.
    let pooled = pooled_table(input).and_then(|(_, table)| {
        input.pooled.as_ref().map(|p| Pooled { lead: p.lead, metric: p.metric.clone(), comparison: table })
    });
    let shown = ReportInput { comparison: table, pooled, confirmation: None, ..input.clone() };
    let mut value = serde_json::json!({
        "subject": subject,
        "headline": headline,
        "confirmed": input.bisect.as_ref().is_none_or(|b| b.confirmed),
        "left_out": left_out,
        "report": shown,
    });
    name_machine(&mut value["report"]);
    // The headline's change is 0 with an inconclusive verdict when a side has no successful run; a tracker reads
    // the failure here rather than taking that for a measurement.
    if let Some(side) = failed_side(input) {
        value["failed"] = serde_json::Value::String(failure_opening(input, side));
    }
    // The paragraphs the mail carries after its opening, and its line of the sides' machines, as the mail words them.
    if let (None, Some(CommitSpan::Swapped { commits })) = (&input.bisect, input.span) {
        value["warning"] = serde_json::Value::String(swapped_warning(&input.base, &input.commit, commits));
    }
    if let Some(sentence) = failed_runs_sentence(input) {
        value["runs_failed"] = serde_json::Value::String(sentence);
    }
    if let Some(line) = machines_line(input) {
        value["machines_sentence"] = serde_json::Value::String(line);
    }
    Ok(serde_json::to_string_pretty(&value).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}")) + "\n")
}

/// The report's `machine` as every command's JSON has it, the machine's name (`results`, `compare`, `track` and
/// `bisect log` name it so), with the facts the mail's machine line reads under `machine_facts` (QA 45b).
fn name_machine(report: &mut serde_json::Value) {
    let Some(object) = report.as_object_mut() else { return };
    let Some(place) = object.keys().position(|key| key == "machine") else { return };
    let facts = object.shift_remove("machine").unwrap_or_default();
    let name = facts.get("hostname").cloned().unwrap_or_default();
    object.shift_insert(place, "machine".to_string(), name);
    object.shift_insert(place + 1, "machine_facts".to_string(), facts);
}

/// Wraps prose to [`LINE_WIDTH`] at spaces; a word longer than the width stays whole on its own line.
pub fn wrap(text: &str, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent.len() + line.len() + 1 + word.len() > LINE_WIDTH {
            out.push_str(indent);
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(indent);
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// A stress-ng stressor that did no work at the base, the commit or both: the stressor of the headline metric
/// (`stress-ng.<stressor>.fail` of a skipped stressor), and the sides where every run stored nothing else of it.
pub(crate) struct IdleStressor<'a> {
    stressor: &'a str,
    base: bool,
    commit: bool,
}

/// The [`IdleStressor`] of the headline metric of a comparison report (no bisect), by the one rule of
/// [`crate::compare::idle::idle_stressors_among`] read at each side: a side holds a metric when some run of it stored
/// the metric (a pass/fail row's filled-in zeros are no run's).
pub(crate) fn idle_stressor(input: &ReportInput) -> Option<IdleStressor<'_>> {
    if input.bisect.is_some() {
        return None;
    }
    let stressor = input.metric.strip_prefix("stress-ng.")?.split('.').next()?;
    let rows = &input.comparison.rows;
    let idle_at = |column: usize| {
        let stored = |row: &MetricRow| {
            row.sides.get(column).is_some_and(|side| side.n > 0 && side.fails.is_none_or(|fails| fails > 0))
        };
        let names = rows.iter().filter(|row| stored(row)).map(|row| row.metric.as_str());
        let has = |name: &str| rows.iter().any(|row| row.metric == name && stored(row));
        crate::compare::idle::idle_stressors_among(names, has).contains(&stressor)
    };
    let (base, commit) = (idle_at(0), idle_at(1));
    (base || commit).then_some(IdleStressor { stressor, base, commit })
}

/// The opening of a report whose headline stressor did no work: stress-ng skipped it, at which side, and that its
/// `.fail` row is no measurement of the test.
fn idle_stressor_opening(input: &ReportInput, idle: &IdleStressor) -> String {
    let (base, commit) = (input.base.short(), input.commit.short());
    let sides = match (idle.base, idle.commit) {
        (true, true) => format!("in every run at the base {base} and at {commit}"),
        (true, false) => format!("in every run at the base {base} (at {commit} it did work)"),
        _ => format!("in every run at {commit} (at the base {base} it did work)"),
    };
    let stressor = idle.stressor;
    let compared = if idle.base && idle.commit {
        "nothing of the test can be compared"
    } else {
        "the runs there measured nothing of the test"
    };
    format!(
        "FYI, stress-ng's {stressor} stressor did no work (skipped by stress-ng) {sides}: stress-ng exits 0 for a \
         stressor it skips, and its runs store only stress-ng.{stressor}.fail, as lkp's parser does, so \
         {compared}. `culprit results --run ID` shows what stress-ng said."
    )
}

/// The sentence that opens the report, after the greeting: what changed, and who is blamed, in the robot's words.
/// For runs of a label, "due to commit:" and "at commit:" read "between the runs of:", leading into the commit block,
/// which names the base and the label ([`commit_block`]).
pub(crate) fn opening(input: &ReportInput, h: &Headline) -> String {
    let said = commit_opening(input, h);
    if reported_set(input).is_some() {
        return set_opening(said);
    }
    if let (None, Some(span)) = (&input.bisect, input.span) {
        return span_opening(input, h, span, said);
    }
    if !compares_labels(input) {
        return said;
    }
    for tail in [" due to commit:", " at commit:"] {
        if let Some(head) = said.strip_suffix(tail) {
            return format!("{head} between the runs of:");
        }
    }
    said
}

/// [`opening`] for two commits that are not parent and child ([`CommitSpan`]): the words that lead into the commit
/// block name both ends and blame neither, and for a change, say that `culprit bisect` finds its commit.
fn span_opening(input: &ReportInput, h: &Headline, span: CommitSpan, said: String) -> String {
    let (base, bad) = (input.base.short(), input.commit.short());
    let Some(head) = [" due to commit:", " at commit:"].iter().find_map(|tail| said.strip_suffix(tail)) else {
        return said;
    };
    match span {
        CommitSpan::Range { commits } if h.verdict.is_change() => format!(
            "{head} between {base} and {bad} ({}). {bad} is not {base}'s child, so the change may be in any of those \
             commits, not only in {bad}; `culprit bisect --good {base} --bad {bad}` (the last step below) finds the \
             one. The two ends:",
            counted(commits, "commit")
        ),
        CommitSpan::Range { commits } => {
            format!("{head} between {base} and {bad} ({}). The two ends:", counted(commits, "commit"))
        }
        CommitSpan::Swapped { commits } => format!(
            "{head} from {base} back to {bad}, {} older: {bad} is an ancestor of {base}, so the sides are swapped and \
             no commit is blamed. The two:",
            counted(commits, "commit")
        ),
    }
}

/// [`opening`] for a change that may be at any of several commits ([`reported_set`]): the words that lead into the
/// commit block say that it lists commits one of which made the change.
fn set_opening(said: String) -> String {
    let tails = [
        (" due to commit:", " due to one of the commits:"),
        (" at commit:", " at one of the commits:"),
        (" The commit:", " One of the commits:"),
        (
            " The most likely commit, NOT confirmed, is:",
            " The most likely culprit, NOT confirmed, is one of the commits:",
        ),
    ];
    for (tail, set_tail) in tails {
        if let Some(head) = said.strip_suffix(tail) {
            return format!("{head}{set_tail}");
        }
    }
    said
}

/// The opening of a mail whose change did not reproduce: with the runs' sensitivity, what they rule out, and "not
/// confirmed" where they could have missed a change worth a report (QA 48: a real slowdown on a noisy metric was
/// mailed as "did not reproduce", and a developer closes the report on that).
pub(crate) fn not_reproduced_opening(b: &BisectSummary, metric: &str) -> String {
    let (good, bad) = (b.good.short(), b.bad.short());
    match b.sensitivity {
        Some(s) if s.could_miss() => {
            let advice = s.advice(metric).map(|a| format!(" {}{}.", a[..1].to_uppercase(), &a[1..]));
            format!(
                "FYI, the change of {metric} between {good} and {bad} was not confirmed when measured again: {}, so \
                 no commit is blamed, though a smaller change may be there.{}",
                s.describe(),
                advice.unwrap_or_default()
            )
        }
        Some(s) => format!(
            "FYI, the change of {metric} between {good} and {bad} did not reproduce when measured again ({}), so no \
             commit is blamed.",
            s.describe()
        ),
        None => format!(
            "FYI, the change of {metric} between {good} and {bad} did not reproduce when measured again, so no commit \
             is blamed."
        ),
    }
}

/// [`opening`] in the robot's words for a commit.
fn commit_opening(input: &ReportInput, h: &Headline) -> String {
    if let Some(side) = failed_side(input) {
        return failure_opening(input, side);
    }
    if let Some(idle) = idle_stressor(input) {
        return idle_stressor_opening(input, &idle);
    }
    let noticed = format!("a {} {} of {}", h.amount(), h.noun(), h.metric);
    match &input.bisect {
        Some(b) if b.status == Status::NotReproduced && b.improved && b.improvement => format!(
            "FYI, {} measured worse at {} than at {}: a regression, not an improvement, so the bisect of an \
             improvement (--improvement) blames no commit; bisect it without --improvement to find the commit that \
             caused it.",
            h.metric,
            b.bad.short(),
            b.good.short()
        ),
        Some(b) if b.status == Status::NotReproduced && b.improved => format!(
            "FYI, {} measured better at {} than at {}: an improvement, not a regression, so the bisect blames no \
             commit; bisect it with --improvement to find the commit that made it better.",
            h.metric,
            b.bad.short(),
            b.good.short()
        ),
        Some(b) if b.status == Status::NotReproduced => match b.below_min_change {
            // The change may be real: it is only smaller than the bar the bisect was given.
            Some(bar) => format!(
                "FYI, {} differs between {} and {} by less than the {} asked for (--min-change), so the bisect \
                 blames no commit.",
                h.metric,
                b.good.short(),
                b.bad.short(),
                printf::percent_of_fraction(bar)
            ),
            None => not_reproduced_opening(b, &h.metric),
        },
        Some(b) if b.contributors.is_empty() => format!(
            "FYI, we noticed {noticed} between {} and {}, but the bisect ended before it narrowed the change down to \
             a commit or a range of commits, so no commit is blamed.",
            b.good.short(),
            b.bad.short()
        ),
        // A part of a series placed in a range (QA 57: it was mailed with the range's last commit as "the most likely
        // commit", beside the series' confirmed commit): the range, the part it is, and that no commit is blamed.
        Some(b) if reported_range(b).is_some() && b.contributors.len() > 1 => format!(
            "FYI, the bisect of {}..{} placed {noticed} after {} up to {}, the {} of {} parts that share the \
             change, but did not narrow that part down to a commit, so no commit is blamed for it (the share of each \
             part is below).",
            b.good.short(),
            b.bad.short(),
            b.contributors[b.reported].after.short(),
            b.contributors[b.reported].commit.short(),
            ordinal(b.reported + 1),
            b.contributors.len()
        ),
        // The table is of the range's two ends, which is where the amount comes from.
        Some(b) if is_lone_range(b) => format!(
            "FYI, the bisect of {}..{} placed {noticed} after {} up to {}, but ended before it narrowed the change \
             down to a commit, so no commit is blamed.",
            b.good.short(),
            b.bad.short(),
            b.contributors[0].after.short(),
            b.contributors[0].commit.short()
        ),
        // The amount is the table's, of the reported contributor against the commit before it, so the sentence
        // names those two: "between good and bad" gave a range's -1.6% (good against the range's end) to a bisect
        // whose good and bad differed by 60% (QA 49).
        Some(b) if !b.confirmed => format!(
            "FYI, we noticed {noticed} between {} and {}, but the bisect could not confirm the commit that caused \
             it. The most likely commit, NOT confirmed, is:",
            input.base.short(),
            input.commit.short()
        ),
        Some(b) if b.contributors.len() > 1 => {
            // Every located contributor is listed next; the table (and so the amount) is the reported one's against
            // its parent. Parts placed only in a range are no commit to list, and the sentence counts them apart.
            let ranges = b.contributors.iter().filter(|c| !c.located).count();
            let parts = match ranges {
                0 => format!("{} commits that share the change", b.contributors.len()),
                _ => format!(
                    "{} parts that share the change, {} and {} not narrowed down to a commit",
                    b.contributors.len(),
                    counted(b.contributors.len() - ranges, "commit"),
                    counted(ranges, "range")
                ),
            };
            format!(
                "FYI, we noticed {noticed} at the {} of {parts} (the share of each is below):",
                ordinal(b.reported + 1)
            )
        }
        // The bisect confirmed the commit on fresh runs of it and its parent, interleaved, so that the machine's
        // load fell on both alike; the table pools every run of the two, taken at other times too, and a metric
        // that moves with the load (wall time on a shared machine) can leave its test short of significance. The
        // mail said "we found no significant change" of the commit its bisect section blamed; it says both now.
        // Led by the confirmation's own runs (`lead_with_confirmation`), the sequential test the bisect passed on
        // them can still be short of the compare engine's verdict, which needs more runs for a step this size.
        Some(b) if b.confirmed && !h.verdict.is_change() && input.pooled.is_some() => format!(
            "FYI, the bisect confirmed a {} change of {} on interleaved runs of the commit below and its parent, \
             though compare does not call it significant on those runs ({}); more runs of the two would tell. The \
             commit:",
            h.amount(),
            h.metric,
            h.noun()
        ),
        Some(b) if b.confirmed && !h.verdict.is_change() => format!(
            "FYI, the bisect confirmed a {} change of {} on interleaved runs of the commit below and its parent, but \
             the table's runs, pooled, do not show it significant ({}): the machine's load varied between runs, and \
             a steadier metric (user time, for a command that computes) may show it better. The commit:",
            h.amount(),
            h.metric,
            h.noun()
        ),
        // A verdict the runs could not reach (one run at the commit, a metric missing on a side) is no finding:
        // "we found no significant change" read as if the test had been made and passed.
        _ if matches!(h.verdict, Verdict::Inconclusive { .. }) => {
            let why = match h.verdict {
                Verdict::Inconclusive { reason } => format!("; {reason}"),
                _ => String::new(),
            };
            format!("FYI, we could not decide whether {} changed ({}{why}) at commit:", h.metric, h.amount())
        }
        // Nothing significant is nothing to blame: say what was measured without "due to".
        _ if !h.verdict.is_change() => {
            let more = change_of(&input.comparison, &h.metric, 1)
                .and_then(|(row, change)| crate::compare::runs_to_tell(&input.comparison, row, change))
                .map(|runs| {
                    format!("; about {} runs a side, not {}, would show a change this size", runs.needed, runs.counts())
                });
            // "no significant change of X (-0.1%, non-significant change)" said it twice (QA 59).
            format!(
                "FYI, we found no significant change of {} ({}{}) at commit:",
                h.metric,
                h.amount(),
                more.unwrap_or_default()
            )
        }
        _ => format!("FYI, we noticed {noticed} due to commit:"),
    }
}

/// The bisect section's lines (without indentation): status, spend, and each contributor's share.
pub(crate) fn bisect_lines(b: &BisectSummary) -> Vec<String> {
    // A culprit whose parent is untestable was confirmed against the last testable commit before it, which is not
    // its parent: "against its parent" would say that the untestable commits were ruled out, which they were not.
    // One whose parent is a good given with a second --good was confirmed against the first good's runs (QA 57: the
    // mail said "against its parent", where the bisect's own summary said what was compared).
    let against = match b.contributors.get(b.reported) {
        Some(c) if !c.unmeasured_good_parents.is_empty() => format!(
            "confirmed against good {}'s runs: its parent {} is a good given with --good, taken as good without \
             being measured",
            c.after.short(),
            and_list(&c.unmeasured_good_parents.iter().map(CommitRef::short).collect::<Vec<_>>())
        ),
        Some(c) if c.is_set() => format!(
            "one of {} commits that cannot be told apart, confirmed against {}, the last testable commit before them",
            c.candidates().len(),
            c.after.short()
        ),
        Some(c) if !c.untestable_suspects.is_empty() => {
            format!("confirmed against {}, the last testable commit before it", c.after.short())
        }
        _ => "confirmed against its parent".to_string(),
    };
    let found_commit_of_improvement = format!("found the commit of the improvement, {against}");
    let found_culprit = format!("found the culprit, {against}");
    let status = match b.status {
        // A commit that made the metric better is no culprit: a bisect of an improvement names what it found.
        Status::Found if b.confirmed && b.improvement => found_commit_of_improvement.as_str(),
        Status::Found if b.improvement => "found the likely commit of the improvement, not confirmed",
        Status::Found if b.confirmed => found_culprit.as_str(),
        Status::Found => "found a likely culprit, not confirmed",
        Status::Multiple if b.improvement => "several commits share the improvement",
        Status::Multiple => "several commits share the change",
        Status::NotReproduced if b.improved => opposite_change(b.improvement),
        Status::NotReproduced if b.below_min_change.is_some() => {
            "good and bad differ by less than --min-change; no commit is blamed"
        }
        Status::NotReproduced if b.sensitivity.is_some_and(|s| s.could_miss()) => {
            "the change was not confirmed; no commit is blamed"
        }
        Status::NotReproduced => "the change did not reproduce; no commit is blamed",
        Status::Inconclusive if b.contributors.is_empty() => "inconclusive; the change was not narrowed down",
        Status::Inconclusive if is_lone_range(b) => "inconclusive; the change was placed in a range, not in a commit",
        Status::Inconclusive => "inconclusive; no commit is blamed with confidence",
    };
    let mut lines = vec![
        format!("bisect session {}: {status}", b.session),
        format!(
            "spent {} runs and {} {} between {} and {}",
            b.runs,
            b.builds,
            if b.built { "builds" } else { "commits checked out" },
            b.good.short(),
            b.bad.short()
        ),
    ];
    for c in &b.contributors {
        let place = if c.is_set() {
            format!("one of {}", c.candidates_text(|commit| commit.with_subject(true)))
        } else if c.located {
            c.commit.with_subject(true)
        } else {
            format!("a commit after {} up to {}", c.after.short(), c.commit.with_subject(true))
        };
        let from_good_to_bad = c.located && c.after.sha == b.good.sha && c.commit.sha == b.bad.sha;
        lines.push(format!(
            "{place} explains {}{}",
            share_words((c.share, c.share_low, c.share_high), from_good_to_bad, "the change"),
            confidence_words(c.located, c.confidence)
        ));
        if !c.untestable_suspects.is_empty() {
            // The confidence is the engine's for the set: the probability that the change is at one of them.
            let list: Vec<String> = c.untestable_suspects.iter().map(CommitRef::short).collect();
            lines.push(format!(
                "the confidence is that of the set: no run could be made of the untestable commit(s) {}, so the runs \
                 cannot tell which of the {} commits made the change",
                list.join(", "),
                c.candidates().len()
            ));
        }
    }
    if b.contributors.len() > 1 {
        let others: Vec<String> =
            (1..=b.contributors.len()).filter(|&n| n != b.reported + 1).map(|n| n.to_string()).collect();
        lines.push(format!(
            "the table above is of the {} of them, {}; `culprit report {} --culprit N` makes the mail of the {} \
             (N = {})",
            ordinal(b.reported + 1),
            b.contributors
                .get(b.reported)
                .map(|c| match c.located {
                    true => c.commit.short(),
                    false => format!("{}..{}", c.after.short(), c.commit.short()),
                })
                .unwrap_or_default(),
            b.session,
            noun(others.len(), "other"),
            others.join(", ")
        ));
    }
    lines.extend(b.caveat.clone());
    lines.extend(b.outside.clone());
    lines.push(format!("why: {}", b.reason));
    lines
}

/// How sure a bisect is of a contributor, as the words that follow its share: a located commit's posterior
/// confidence; for an unlocated range, the probability that the change lies in it when the bisect measured one
/// (a series' ranges), else nothing (a range's confidence of 0 means "not measured", not "surely elsewhere").
pub fn confidence_words(located: bool, confidence: f64) -> String {
    if located {
        format!(", confidence {confidence:.3}")
    } else if confidence > 0.0 {
        format!(", in this range with probability {confidence:.2}")
    } else {
        String::new()
    }
}

/// The width of a share's 90% interval (as a fraction: 3 is 300 percentage points) beyond which the share is said
/// not to be measured. The simulator's intervals average 0.7 wide for a lone 1.5 sigma step and 2.0 for a step that
/// a later one partly takes back (docs/statistics.md); QA 50's unreadable one was 61 wide.
pub const UNMEASURED_SHARE_WIDTH: f64 = 3.0;

/// A contributor's share of the good-to-bad change, which `change` names ("the change", "the good-to-bad change"),
/// with its 90% interval, in whole percents, as the mail's bisect section and the bisect's summary say it after
/// "explains". `from_good_to_bad` says that the contributor's step is read from good to bad themselves: its parent
/// is good and it is bad (it alone, or with the untestable commits between them), so no other tested commit lies
/// between them.
///
/// Two readings puzzled (QA 48, 9d), and are worded so that they do not:
/// - A share above 100% (a step read larger than good to bad) says why it can be: within the noise when its
///   interval holds 100%; else something between good and bad may offset part of it, or the machine's state changed.
/// - An interval whose ends round to the same percent is not printed as `100%..100%`. For a step from good to bad
///   it is exactly the whole change by construction (`Bisect::lone_step_levels` then reads the step and the levels
///   it is divided by on the same runs, good's and bad's), and is said so; otherwise it is said to be less than a
///   percent wide.
///
/// A share the runs could not measure (NaN) is printed as it was. One whose interval is more than
/// [`UNMEASURED_SHARE_WIDTH`] wide is said to be unmeasured, with the reason: good-to-bad, which it is divided by, was
/// measured too poorly (QA 50: "608% (90% interval -2477%..3694%; above 100%: ... within the noise)" read as if the
/// runs had said something).
pub fn share_words(share: (f64, f64, f64), from_good_to_bad: bool, change: &str) -> String {
    let (estimate, low, high) = share;
    let whole_percent = |fraction: f64| format!("{:.0}", 100.0 * fraction);
    let (said, said_low, said_high) = (whole_percent(estimate), whole_percent(low), whole_percent(high));
    if !(estimate.is_finite() && low.is_finite() && high.is_finite()) {
        return format!("{said}% of {change} (90% interval {said_low}%..{said_high}%)");
    }
    if high - low > UNMEASURED_SHARE_WIDTH {
        return format!(
            "{said}% of {change}, a share these runs do not measure (90% interval {said_low}%..{said_high}%: good's \
             and bad's runs pin down the change it is a share of too poorly)"
        );
    }
    let degenerate = said_low == said_high;
    if degenerate && from_good_to_bad && said == "100" {
        return format!("all of {change} (by construction: good and bad are the step's two sides)");
    }
    let interval = if degenerate {
        "90% interval less than a percent wide".to_string()
    } else {
        format!("90% interval {said_low}%..{said_high}%")
    };
    // Compared as printed, so that a share shown as 100% gets no clause about being above it.
    let printed = |text: &str| text.parse::<f64>().unwrap_or(f64::NAN);
    let above = if printed(&said) <= 100.0 {
        ""
    } else if printed(&said_low) <= 100.0 {
        "; above 100%: the step measured larger than good to bad, within the noise"
    } else {
        // A second step that undoes part of the first is one reason; on a machine whose load came and went, the
        // step's fresh pairs and good's and bad's runs measured under different conditions is another (QA 59: 170%
        // of a single 8% step, the pairs taken while a build loaded the machine).
        "; above 100%: the step measured larger than good to bad beyond the noise, so something between them may \
         offset part of it, or the machine measured the two differently than good and bad (load that came and went)"
    };
    format!("{said}% of {change} ({interval}{above})")
}

/// Why a bisect that found bad differing from good the other way than searched blames nothing, and what to do
/// instead: the engine only knows the direction it searched, so the words come from the session's `--improvement`.
/// The bisect's summary and the mail's bisect section say it alike.
pub fn opposite_change(improvement: bool) -> &'static str {
    if improvement {
        "bad is worse than good, a regression: no commit is blamed; bisect it without --improvement"
    } else {
        "bad is better than good, an improvement: no commit is blamed; bisect it with --improvement"
    }
}

/// Whether an inconclusive bisect's one contributor is a range it did not narrow (the runs placed the change there
/// when the budget ended): it names no commit, and the last commit of the range is no likelier than the others.
fn is_lone_range(b: &BisectSummary) -> bool {
    b.status == Status::Inconclusive && matches!(b.contributors.as_slice(), [only] if !only.located)
}

/// The reported contributor when the runs placed it in a range, not narrowed to a commit: the lone range of an
/// inconclusive end ([`is_lone_range`]), or a part of a series. A mail of it blames no commit.
fn reported_range(b: &BisectSummary) -> Option<&Contributor> {
    b.contributors.get(b.reported).filter(|c| !c.located && (b.contributors.len() > 1 || is_lone_range(b)))
}

/// The commits the mail's commit block names: every located contributor of a series, none when the bisect blamed
/// nothing (the change did not reproduce, was not narrowed down at all, or only to a range) or the reported part is a
/// range, else the reported commit.
/// A reported change that may be at untestable commits too ([`reported_set`]) names each of them, oldest first, marked
/// untestable (the `bool`).
pub(crate) fn blamed_commits(input: &ReportInput) -> Vec<(CommitRef, bool)> {
    match &input.bisect {
        Some(b) if reported_range(b).is_some() => Vec::new(),
        Some(b) if b.contributors.len() > 1 => {
            b.contributors.iter().filter(|c| c.located).map(|c| (c.commit.clone(), false)).collect()
        }
        Some(b) if b.status == Status::NotReproduced || b.contributors.is_empty() => Vec::new(),
        _ => match reported_set(input) {
            Some(set) => set.candidates().into_iter().map(|(c, untestable)| (c.clone(), untestable)).collect(),
            None => vec![(input.commit.clone(), false)],
        },
    }
}

/// "first", "second", ... for the commits of a series (counted from 1).
fn ordinal(n: usize) -> String {
    match n {
        1 => "first".into(),
        2 => "second".into(),
        3 => "third".into(),
        4 => "fourth".into(),
        5 => "fifth".into(),
        _ => {
            let suffix = match (n % 100, n % 10) {
                (11..=13, _) => "th",
                (_, 1) => "st",
                (_, 2) => "nd",
                (_, 3) => "rd",
                _ => "th",
            };
            format!("{n}{suffix}")
        }
    }
}

/// A value as the tested-commits list and the trend print it: whole numbers from 1000 up, else four significant
/// digits, so a 46 ms user time reads 0.04615 rather than the table's 0.05.
pub(crate) fn value_text(x: f64) -> String {
    if x.abs() >= 1000.0 {
        printf::fixed(x, 0, false)
    } else {
        printf::general(x, 4, false)
    }
}

/// Splits a shell command line into words, keeping single- and double-quoted parts whole.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (None, ' ') => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                continue;
            }
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
        word.push(c);
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// A command wider than the mail, broken at word boundaries (never inside quotes) with ` \` continuations, the
/// continuation lines indented by four more spaces. Comments and short commands come back as they are.
pub fn break_command(line: &str, indent: &str) -> String {
    if indent.len() + line.len() <= LINE_WIDTH || line.starts_with('#') {
        return format!("{indent}{line}\n");
    }
    let mut out = String::new();
    let mut current = String::from(indent);
    let continuation = format!("{indent}    ");
    for word in shell_words(line) {
        let fresh = current.trim().is_empty();
        if !fresh && current.len() + 1 + word.len() + 2 > LINE_WIDTH {
            out.push_str(&current);
            out.push_str(" \\\n");
            current = continuation.clone();
        } else if !fresh {
            current.push(' ');
        }
        current.push_str(&word);
    }
    out.push_str(&current);
    out.push('\n');
    out
}

/// The sentence under the table that says which runs its rows come from, when its revisions have profiling runs
/// ([`RunSources`]). It names only the profiled monitors with a row in the table `shown`: a mail whose table shows
/// no perf-stat row would send the reader looking for one.
pub(crate) fn sources_sentence(input: &ReportInput, shown: &CompareResult) -> Option<String> {
    let columns = [Some(&input.base), Some(&input.commit), input.fix.as_ref()];
    let labels: Vec<String> = columns.into_iter().flatten().map(CommitRef::short).collect();
    let sources = input.sources.as_ref()?;
    let has_rows = |monitor: &String| {
        shown.rows.iter().any(|row| crate::compare::profiled::profiling_monitor(&row.metric) == Some(monitor.as_str()))
    };
    let (in_table, unchanged): (Vec<String>, Vec<String>) =
        sources.profiled_monitors.iter().cloned().partition(|monitor| has_rows(monitor));
    if in_table.is_empty() && !unchanged.is_empty() {
        let (plain, profiling) = (runs_text(&sources.plain_runs, &labels), runs_text(&sources.profiling_runs, &labels));
        // Fewer profiling runs than a verdict needs (`--profile 2`) decide none of the perf rows: "none of which
        // changed" would tell the maintainer that the profile is flat when it was never read.
        let needed = too_few_to_decide(&input.comparison, &unchanged);
        let outcome = match (needed, &input.bisect) {
            (Some(needed), Some(bisect)) => format!(
                "too few to decide any of them (a verdict needs {needed} runs a side: `culprit bisect --resume {} \
                 --profile {needed}` takes the missing ones)",
                bisect.session
            ),
            (Some(needed), None) => format!("too few to decide any of them (a verdict needs {needed} runs a side)"),
            (None, _) => "none of which changed (the json format has them)".to_string(),
        };
        let mut text = format!(
            "The {profiling} with perf attached (`culprit bisect --profile`) gave the {} rows, {outcome}; every row \
             here is from {plain} without it.",
            unchanged.join(" and ")
        );
        if !sources.silent_monitors.is_empty() {
            text.push_str(&silent_sentence(&sources.silent_monitors.join(" or ")));
        }
        return Some(text);
    }
    Some(sources_text(&RunSources { profiled_monitors: in_table, ..sources.clone() }, &labels))
}

/// The runs a side a verdict needs, when every row of the profiled `monitors` in `comparison` is inconclusive for
/// too few runs (so nothing about them was decided); `None` when some row was decided.
fn too_few_to_decide(comparison: &CompareResult, monitors: &[String]) -> Option<usize> {
    let mut needed = None;
    let rows = comparison.rows.iter().filter(|row| {
        crate::compare::profiled::profiling_monitor(&row.metric).is_some_and(|m| monitors.iter().any(|n| n == m))
    });
    for change in rows.flat_map(|row| &row.changes) {
        match change.verdict {
            Verdict::Inconclusive { reason: InconclusiveReason::TooFewRuns { needed: n, .. } } => needed = Some(n),
            _ => return None,
        }
    }
    needed
}

/// A count of runs per column in words, with `labels` naming the columns: "3 runs a side", or "8 runs of A, 9 of B
/// and 5 of C" when the columns differ.
fn runs_text(counts: &[usize], labels: &[String]) -> String {
    match counts {
        [n, rest @ ..] if rest.iter().all(|m| m == n) => format!("{} a side", counted(*n, "run")),
        _ => {
            let mut each: Vec<String> = counts.iter().zip(labels).map(|(n, label)| format!("{n} of {label}")).collect();
            if let (Some(first), Some(n), Some(label)) = (each.first_mut(), counts.first(), labels.first()) {
                *first = format!("{} of {label}", counted(*n, "run"));
            }
            and_list(&each)
        }
    }
}

/// `a`, `a and b`, `a, b and c`: a list of names or counts as a sentence reads it.
pub fn and_list<S: AsRef<str>>(items: &[S]) -> String {
    match items {
        [] => String::new(),
        [one] => one.as_ref().to_string(),
        [init @ .., last] => {
            let init: Vec<&str> = init.iter().map(AsRef::as_ref).collect();
            format!("{} and {}", init.join(", "), last.as_ref())
        }
    }
}

/// The sentence that says perf recorded nothing for the `silent` monitors ("perf-profile or perf-stat").
fn silent_sentence(silent: &str) -> String {
    format!(" Perf recorded no {silent} data in those runs ({SILENT_WHY}).")
}

/// Which runs a table's rows come from, in words, with `labels` naming its columns: "The perf-profile and perf-stat
/// rows are from 3 runs a side with perf attached (`culprit bisect --profile`); every other row is from 8 runs of
/// 3dab4c1c6c and 9 of a9ecb5c3d0 without it." `culprit compare` says the same under its table.
pub fn sources_text(sources: &RunSources, labels: &[String]) -> String {
    let (plain, profiling) = (runs_text(&sources.plain_runs, labels), runs_text(&sources.profiling_runs, labels));
    let silent = sources.silent_monitors.join(" or ");
    match (sources.profiled_monitors.is_empty(), silent.is_empty()) {
        (true, true) => format!(
            "The {profiling} with perf attached (`culprit bisect --profile`) are left out of this table: perf's \
             overhead skews their benchmark numbers, and they add no perf row the {plain} without it lack."
        ),
        // Perf failed in every run: saying they add nothing new would read as a profile without a change.
        (true, false) => format!(
            "The {profiling} with perf attached (`culprit bisect --profile`) are left out of this table: perf \
             recorded no {silent} data in them ({SILENT_WHY}), and its overhead skews their benchmark numbers; every \
             row here is from {plain} without it."
        ),
        (false, _) => {
            let mut text = format!(
                "The {} rows are from {profiling} with perf attached (`culprit bisect --profile`); every other row is \
                 from {plain} without it.",
                sources.profiled_monitors.join(" and ")
            );
            if !silent.is_empty() {
                text.push_str(&silent_sentence(&silent));
            }
            text
        }
    }
}

/// Where the reader of a table without a perf monitor's rows finds why perf recorded nothing.
const SILENT_WHY: &str = "each run's stderr says why: `culprit results --run ID`";

/// The verdict sentence under a table that has a fix column, e.g. `with the fix, fio.write_iops is -2.9% from
/// base (was -21.8%)`.
pub(crate) fn fix_sentence(input: &ReportInput, h: &Headline) -> Option<String> {
    let fix = input.fix.as_ref()?;
    if input.comparison.columns.get(2).is_some_and(|c| c.ok_runs == 0 && c.failed_runs > 0) {
        return Some(format!(
            "With {}, every run of {} failed ({}).",
            fix.short(),
            input.testcase,
            failed_runs_text(input, 2)
        ));
    }
    // With no value at the base or the commit, there is no change for the fix to be read against.
    if failed_side(input).is_some() {
        return None;
    }
    let (_, c) = change_of(&input.comparison, &input.metric, 2)?;
    if c.change.is_nan() {
        // A side has no samples of the metric (the verdict says which): there is no amount to state.
        let why = match c.verdict {
            Verdict::Inconclusive { reason } => format!(" ({reason})"),
            _ => String::new(),
        };
        return Some(format!("With {}, {} has no change to state{why}.", fix.short(), h.metric));
    }
    let word = match c.verdict {
        Verdict::Regression => "still a regression",
        Verdict::Improvement => "an improvement",
        Verdict::Changed => "a change",
        // docs/report.md: a change the test could not tell from the noise is "not significant", never "within the
        // noise", which a large move over a few noisy runs is not.
        Verdict::Unchanged => "not significant",
        Verdict::Inconclusive { .. } => "undecided",
    };
    let verdict = input.fix_verdict.as_ref().map(|v| format!(" Verdict: {}.", v.word())).unwrap_or_default();
    Some(format!(
        "With {}, {} is {} from the base ({word}); {} had {}.{verdict}",
        fix.short(),
        h.metric,
        amount(c.change, c.absolute),
        input.commit.short(),
        h.amount()
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_followed_job_is_followed_by_its_kpi_else_a_commands_wall_time() {
        use super::primary_metrics;
        let command = ["command.user_time", "command.system_time", "command.elapsed_time", "meminfo.Active"];
        assert_eq!(primary_metrics(command), ["command.elapsed_time"]);
        // A number the command captures is its KPI, and the times beside it are not followed.
        assert_eq!(primary_metrics(command.into_iter().chain(["command.ops"])), ["command.ops"]);
        let fio = ["fio.write_iops", "fio.write_clat_mean_us", "fio.read_iops", "vmstat.cpu.us", "culprit.failed_runs"];
        assert_eq!(primary_metrics(fio), ["fio.read_iops", "fio.write_iops"]);
        // A benchmark of no known KPI has no primary metric (follow then falls back to all of its own metrics).
        assert!(primary_metrics(["mystery.score", "meminfo.Active"]).is_empty());
    }

    use super::*;

    #[test]
    fn a_range_says_how_probably_it_holds_its_change_and_nothing_when_unmeasured() {
        let cases = [
            (true, 0.99741, ", confidence 0.997"),
            (true, 0.0, ", confidence 0.000"),
            (false, 0.934, ", in this range with probability 0.93"),
            (false, 0.0, ""),
        ];
        for (located, confidence, want) in cases {
            assert_eq!(confidence_words(located, confidence), want);
        }
    }

    #[test]
    fn the_most_significant_monitor_rows_lead_not_the_largest_noisy_ones() {
        use crate::compare::{compare, Column, CompareOptions, Comparison};
        // System-wide counters that drift a lot between runs (large, barely separated moves), as many as the table
        // holds, against a steady one that moved a little in every run: by size alone the drifting ones filled the
        // table and cut the steady one out. The rows chosen are shown in the comparison's order.
        let noisy_base = vec![100.0, 300.0, 150.0, 400.0, 120.0, 380.0, 90.0, 500.0];
        let noisy_commit = vec![450.0, 900.0, 480.0, 1000.0, 450.0, 950.0, 420.0, 380.0];
        let steady_base = vec![100.0, 101.0, 99.0, 100.0, 101.0, 99.0, 100.0, 100.5];
        let steady_commit = vec![110.0, 111.0, 109.0, 110.0, 111.0, 109.0, 110.0, 110.5];
        let ops = vec![10.0, 10.1, 9.9, 10.0, 10.1, 9.9, 10.0, 10.0];
        let mut a = Column::new("a").with_metric("command.ops", ops.clone()).with_metric("vmstat.cs", steady_base);
        let mut b = Column::new("b").with_metric("command.ops", ops).with_metric("vmstat.cs", steady_commit);
        for i in 0..MAX_MONITOR_ROWS {
            a = a.with_metric(format!("meminfo.Anon{i:02}"), noisy_base.clone());
            b = b.with_metric(format!("meminfo.Anon{i:02}"), noisy_commit.clone());
        }
        let result = compare(&Comparison::new(vec![a, b]), &CompareOptions::default()).unwrap();
        for metric in ["meminfo.Anon00", "vmstat.cs"] {
            let (row, change) = change_of(&result, metric, 1).unwrap();
            assert!(change.verdict.is_change(), "{metric}: {change:?}");
            assert_eq!(row.class, MetricClass::Monitor);
        }
        let size_of = |metric: &str| size(change_of(&result, metric, 1).unwrap().0);
        assert!(size_of("meminfo.Anon00") > size_of("vmstat.cs"), "the noisy move is the larger");
        let (rows, left_out) = report_rows(&result, "command.ops");
        let names: Vec<&str> = rows.iter().map(|r| r.metric.as_str()).collect();
        assert!(names.contains(&"vmstat.cs"), "{names:?}");
        assert_eq!((names.len(), left_out), (1 + MAX_MONITOR_ROWS, 1), "{names:?}");
        let in_compare_order: Vec<&str> =
            result.rows.iter().map(|r| r.metric.as_str()).filter(|m| names.contains(m)).collect();
        assert_eq!(names, in_compare_order);
    }

    #[test]
    fn alternatives_read_as_a_sentence_lists_them() {
        let cases: [(&[&str], &str); 4] =
            [(&[], ""), (&["a"], "a"), (&["a", "b"], "a or b"), (&["a", "b", "c"], "a, b or c")];
        for (items, expected) in cases {
            let items: Vec<String> = items.iter().map(|s| s.to_string()).collect();
            assert_eq!(or_list(&items), expected, "{items:?}");
        }
    }

    #[test]
    fn a_share_above_all_of_the_change_says_why_it_can_be() {
        let noise = "above 100%: the step measured larger than good to bad, within the noise";
        let beyond = "above 100%: the step measured larger than good to bad beyond the noise, so something between \
                      them may offset part of it, or the machine measured the two differently than good and bad (load \
                      that came and went)";
        let cases = [
            // The interval holds 100%: within the noise, whether or not the step is from good to bad.
            ((1.25, 0.82, 1.69), false, format!("125% of the change (90% interval 82%..169%; {noise})")),
            ((1.25, 0.82, 1.69), true, format!("125% of the change (90% interval 82%..169%; {noise})")),
            // Its low end as printed is 100%: still within the noise as the reader sees it.
            ((1.2, 1.004, 1.4), false, format!("120% of the change (90% interval 100%..140%; {noise})")),
            ((1.3, 1.1, 1.5), false, format!("130% of the change (90% interval 110%..150%; {beyond})")),
            // Printed as 100% or less: nothing to explain.
            ((1.004, 0.9, 1.1), false, "100% of the change (90% interval 90%..110%)".to_string()),
            ((0.98, 0.88, 1.08), false, "98% of the change (90% interval 88%..108%)".to_string()),
        ];
        for (share, from_good_to_bad, expected) in cases {
            assert_eq!(share_words(share, from_good_to_bad, "the change"), expected, "{share:?}");
        }
    }

    #[test]
    fn qa50_4_a_share_whose_interval_spans_hundreds_of_percents_is_said_to_be_unmeasured() {
        let unmeasured = |said: &str, interval: &str| {
            format!(
                "{said} of the change, a share these runs do not measure (90% interval {interval}: good's and \
                 bad's runs pin down the change it is a share of too poorly)"
            )
        };
        let cases = [
            // QA 50's sw2: bad measured barely above good under load, so the step was six times "the change".
            ((6.08, -24.77, 36.94), false, unmeasured("608%", "-2477%..3694%")),
            ((2.08, -0.16, 4.31), false, unmeasured("208%", "-16%..431%")),
            ((0.5, -1.6, 2.6), true, unmeasured("50%", "-160%..260%")),
            // Up to three hundred points wide, the share is read as before.
            ((2.08, 1.46, 2.70), false, "208% of the change (90% interval 146%..270%; above 100%: the step measured \
                                         larger than good to bad beyond the noise, so something between them may \
                                         offset part of it, or the machine measured the two differently than good \
                                         and bad (load that came and went))".to_string()),
            ((1.0, -0.4, 2.5), false, "100% of the change (90% interval -40%..250%)".to_string()),
        ];
        for (share, from_good_to_bad, expected) in cases {
            assert_eq!(share_words(share, from_good_to_bad, "the change"), expected, "{share:?}");
        }
    }

    #[test]
    fn an_interval_whose_ends_round_alike_is_not_printed_as_a_range() {
        let whole = "all of the good-to-bad change (by construction: good and bad are the step's two sides)";
        let narrow = |share: &str| format!("{share} of the good-to-bad change (90% interval less than a percent wide)");
        let cases = [
            // A step from good to bad is the whole change by construction, exactly or up to rounding.
            ((1.0, 1.0, 1.0), true, whole.to_string()),
            ((1.0, 1.0 - 1e-12, 1.0 + 1e-12), true, whole.to_string()),
            // Otherwise a narrow interval is said to be narrow, not printed as 100%..100%.
            ((1.0, 0.998, 1.003), false, narrow("100%")),
            ((0.42, 0.418, 0.423), true, narrow("42%")),
            // Ends that round apart are printed.
            ((1.0, 0.99, 1.01), true, "100% of the good-to-bad change (90% interval 99%..101%)".to_string()),
            // A share the runs could not measure is printed as it was.
            ((f64::NAN, f64::NAN, f64::NAN), true, "NaN% of the good-to-bad change (90% interval NaN%..NaN%)".into()),
        ];
        for (share, from_good_to_bad, expected) in cases {
            assert_eq!(share_words(share, from_good_to_bad, "the good-to-bad change"), expected, "{share:?}");
        }
    }

    #[test]
    fn ordinals_read_as_english() {
        let cases = [(1, "first"), (5, "fifth"), (6, "6th"), (11, "11th"), (12, "12th"), (21, "21st"), (22, "22nd")];
        for (n, want) in cases {
            assert_eq!(ordinal(n), want);
        }
        assert_eq!(ordinal(113), "113th");
        assert_eq!(ordinal(103), "103rd");
    }

    #[test]
    fn amounts_print_as_the_robot_does() {
        assert_eq!(amount(-21.84, false), "-21.8%");
        assert_eq!(amount(58.44, false), "58.4%");
        assert_eq!(amount(-25.64, true), "-25.6");
        assert_eq!(amount(f64::INFINITY, false), "+inf%");
    }

    #[test]
    fn wrap_keeps_lines_short_and_words_whole() {
        let long = "word ".repeat(60);
        let wrapped = wrap(&long, "  ");
        assert!(wrapped.lines().count() > 2);
        assert!(wrapped.lines().all(|l| l.len() <= LINE_WIDTH && l.starts_with("  ")));
        assert_eq!(wrapped.split_whitespace().count(), 60);
        let giant = "x".repeat(120);
        assert_eq!(wrap(&giant, ""), format!("{giant}\n"));
    }

    #[test]
    fn long_commands_break_outside_quotes_and_rejoin_to_the_same_words() {
        let line = "culprit bisect --repo /tmp/rep/repo --good 1b582f951d54038b3dab7b6f56a50e76eb63e771 \
                    --bad cd5775dba69cdd63c36b7b69ed766a25b513f6fb --job job.yaml --build 'make -s -j 2'";
        let broken = break_command(line, "        ");
        assert!(broken.lines().count() > 1);
        assert!(broken.lines().all(|l| l.len() <= LINE_WIDTH), "{broken}");
        assert!(broken.contains("'make -s -j 2'"));
        let rejoined = broken.replace(" \\\n", " ");
        assert_eq!(shell_words(rejoined.trim_end()), shell_words(line));
        assert_eq!(break_command("# a comment", "  "), "  # a comment\n");
    }

    #[test]
    fn short_forms_of_commits_and_labels() {
        let c = CommitRef::new("8cc621d2f45ddd3dc664024a647ee7adf48d79a5", Some("mm: fs".into()));
        assert_eq!(c.short(), "8cc621d2f4");
        assert_eq!(c.with_subject(false), "8cc621d2f45ddd3dc664024a647ee7adf48d79a5 (\"mm: fs\")");
        let l = CommitRef::new("patched", None);
        assert!(!l.is_commit());
        assert_eq!(l.short(), "patched");
    }

    #[test]
    fn a_culprit_next_to_untestable_commits_is_named_with_each_of_them_oldest_first() {
        let commit = |sha: char| CommitRef::new(sha.to_string().repeat(40), None);
        let mut culprit = Contributor {
            commit: commit('c'),
            after: commit('0'),
            located: true,
            share: 1.0,
            share_low: 0.9,
            share_high: 1.1,
            confidence: 1.0,
            untestable_suspects: vec![commit('a'), commit('b')],
            unmeasured_good_parents: Vec::new(),
        };
        assert!(culprit.is_set());
        let named = culprit.candidates_text(CommitRef::short);
        assert_eq!(named, "aaaaaaaaaa (untestable), bbbbbbbbbb (untestable) or cccccccccc");
        culprit.untestable_suspects.clear();
        assert!(!culprit.is_set());
        assert_eq!(culprit.candidates_text(CommitRef::short), "cccccccccc");
    }
}
