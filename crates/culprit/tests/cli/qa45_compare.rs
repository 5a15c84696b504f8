//! Regression tests for the `culprit compare` defects QA 45 found (items 4, 8a and 8c), through the real binary:
//! `--by PARAM` refused the whole comparison when the revisions had also run a job without the param, and named the
//! refused param among those to give instead; the scaling view printed rows of `0.00 +0.0% 0.00` for the bandwidth
//! of the fio direction a job never used; and the Markdown table of a job with nothing changed was a header alone,
//! an empty grid on GitLab and GitHub.

use crate::common;

use std::path::Path;

const BASE: &str = "361a2a229fa31ab7f2b236b5946e434964d00762";
const BAD: &str = "8cc621d2f45ddd3dc664024a647ee7adf48d79a5";

/// Writes three runs of a job at `commit` into the lkp result root `dir/rr`, each with `job` as its job.yaml and
/// `stats` (metric, value) as its stats.json, the value shifted by a small amount per run so that it has a spread.
fn write_runs(dir: &Path, testcase: &str, path_params: &str, commit: &str, job: &str, stats: &[(&str, f64)]) {
    for run in 0..3 {
        let path = dir.join(format!("rr/{testcase}/{path_params}/box/{commit}/{run}"));
        std::fs::create_dir_all(&path).unwrap();
        // A value of 0 stays 0 in every run: fio's bandwidth of a direction the job never used is exactly 0.
        let shifted = |v: f64| if v == 0.0 { 0.0 } else { v + f64::from(run) };
        let stats: serde_json::Map<String, serde_json::Value> =
            stats.iter().map(|(k, v)| (k.to_string(), serde_json::json!(shifted(*v)))).collect();
        std::fs::write(path.join("stats.json"), serde_json::Value::Object(stats).to_string()).unwrap();
        std::fs::write(path.join("job.yaml"), job).unwrap();
    }
}

/// Imports a store `dir/s.db` holding, at BASE and BAD, a fio matrix over rw (randwrite, randread) and bs (4k, 8k),
/// whose runs report both directions' bandwidth as fio does (0 for the direction the job does not use), and a
/// hackbench job beside it, without a bs. At BAD the randread job at 8k measured a read bandwidth of 0.
fn store_fio_matrix_and_hackbench(dir: &Path) {
    for rw in ["randwrite", "randread"] {
        for (bs, scale) in [("4k", 1.0), ("8k", 2.0)] {
            let job = format!(
                "suite: fio-basic\ntestcase: fio-basic\nruntime: 5s\nnr_task: 1\nfio-setup-basic:\n  rw: {rw}\n  \
                 bs: {bs}\n  ioengine: psync\n  test_size: 16M\nfio:\n"
            );
            for (commit, factor) in [(BASE, 1.0), (BAD, 0.8)] {
                let bw = 100.0 * scale * factor;
                let (read, write) = if rw == "randread" { (bw, 0.0) } else { (0.0, bw) };
                let read = if rw == "randread" && bs == "8k" && commit == BAD { 0.0 } else { read };
                let stats = [("fio.read_bw_MBps", read), ("fio.write_bw_MBps", write)];
                write_runs(dir, "fio-basic", &format!("1-{rw}-{bs}"), commit, &job, &stats);
            }
        }
    }
    let job = "suite: hackbench\ntestcase: hackbench\nnr_threads: 1\nhackbench:\n  mode: process\n";
    for commit in [BASE, BAD] {
        write_runs(dir, "hackbench", "1-process", commit, job, &[("hackbench.throughput", 5000.0)]);
    }
    common::stdout(&common::culprit("s.db", &["import", "rr"], dir));
}

/// The titles of a scaling view's sweeps, in order.
fn titles(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.contains(" by ")).collect()
}

#[test]
fn qa45_compare_by_sweeps_the_jobs_that_have_the_param_and_names_the_others() {
    // The revisions also ran hackbench, which has no bs: `--by bs` was refused outright ("job hackbench-... has no
    // param 'bs'"), so a developer who runs several job files per commit into one store could not draw the curve
    // without a --job glob.
    let dir = tempfile::tempdir().unwrap();
    store_fio_matrix_and_hackbench(dir.path());
    let by = ["compare", BASE, BAD, "--by", "bs", "--metric", "fio.write_bw_MBps$"];
    let out = common::culprit("s.db", &by, dir.path());
    let sweep = common::stdout(&out);
    assert_eq!(titles(&sweep), ["fio.write_bw_MBps by bs (fio-setup-basic.rw=randwrite)"], "{sweep}");
    let row = sweep.lines().find(|l| l.trim_start().starts_with("8k")).unwrap_or_else(|| panic!("{sweep}"));
    assert!(row.contains("201.00") && row.contains("-19.9%") && row.contains("161.00"), "{sweep}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("left out of the sweep by bs, having no param 'bs': job-process-1"),
        "the job without the param is named: {err}"
    );
    // The program option's full name takes the same jobs.
    let full = ["compare", BASE, BAD, "--by", "fio-setup-basic.bs", "--metric", "fio.write_bw_MBps$"];
    let again = common::stdout(&common::culprit("s.db", &full, dir.path()));
    let rows = |text: &str| text.lines().skip(2).map(|l| l.trim().to_string()).collect::<Vec<_>>();
    assert_eq!(titles(&again), ["fio.write_bw_MBps by fio-setup-basic.bs (fio-setup-basic.rw=randwrite)"]);
    assert_eq!(rows(&again), rows(&sweep));
    // Without --metric the sweep is of the program's KPI, with the same note.
    let out = common::culprit("s.db", &["compare", BASE, BAD, "--by", "bs"], dir.path());
    let sweep = common::stdout(&out);
    assert!(titles(&sweep).iter().all(|t| t.starts_with("fio.")) && !titles(&sweep).is_empty(), "{sweep}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("having no param 'bs': job-process-1"));
}

#[test]
fn qa45_a_param_no_job_has_is_refused_naming_only_params_that_would_sweep() {
    // The refusal said "give one of those to --by" over a list holding the refused param itself, and params that
    // differ only because some jobs lack them (hackbench.mode, nr_threads), each of which has one value.
    let dir = tempfile::tempdir().unwrap();
    store_fio_matrix_and_hackbench(dir.path());
    let err = common::refused(&common::culprit("s.db", &["compare", BASE, BAD, "--by", "nosuch"], dir.path()));
    assert!(err.contains("no job compared has a param 'nosuch'"), "{err}");
    let suggested = err
        .split("The jobs compared differ in ")
        .nth(1)
        .and_then(|rest| rest.split("; give one of those to --by").next())
        .unwrap_or_else(|| panic!("{err}"));
    let mut suggested: Vec<&str> = suggested.split(", ").collect();
    suggested.sort_unstable();
    assert_eq!(suggested, ["fio-setup-basic.bs", "fio-setup-basic.rw"], "{err}");
    // Each suggestion works.
    for param in suggested {
        let args = ["compare", BASE, BAD, "--by", param, "--metric", "fio.write_bw_MBps$"];
        assert!(!titles(&common::stdout(&common::culprit("s.db", &args, dir.path()))).is_empty());
    }
    // A param that only one job has, at one value, has nothing to sweep, and says of which jobs.
    let err = common::refused(&common::culprit("s.db", &["compare", BASE, BAD, "--by", "nr_threads"], dir.path()));
    assert!(err.contains("every job with nr_threads has nr_threads = 1, so there is nothing to sweep"), "{err}");
    // A --metric only the jobs without the param have is named as theirs, not as a metric no run has.
    let args = ["compare", BASE, BAD, "--by", "bs", "--metric", "hackbench"];
    let err = common::refused(&common::culprit("s.db", &args, dir.path()));
    assert!(err.contains("--metric hackbench matches no metric of the jobs that have bs"), "{err}");
}

#[test]
fn qa45_compare_by_leaves_out_sweeps_that_read_zero_everywhere_but_keeps_a_measured_zero() {
    // fio reports the bandwidth of the direction a job never used as 0: the read bandwidth of the randwrite jobs
    // and the write bandwidth of the randread ones were printed as sweeps of `0.00 +0.0% 0.00` rows.
    let dir = tempfile::tempdir().unwrap();
    store_fio_matrix_and_hackbench(dir.path());
    let args = ["compare", BASE, BAD, "--by", "bs", "--metric", "fio.(read|write)_bw_MBps$"];
    let out = common::culprit("s.db", &args, dir.path());
    let sweep = common::stdout(&out);
    let expected = [
        "fio.read_bw_MBps by bs (fio-setup-basic.rw=randread)",
        "fio.write_bw_MBps by bs (fio-setup-basic.rw=randwrite)",
    ];
    assert_eq!(titles(&sweep), expected, "{sweep}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("left out 2 sweep(s) that read 0 at every point at every revision (--all shows them)")
            && err.contains("fio.read_bw_MBps by bs (fio-setup-basic.rw=randwrite)")
            && err.contains("fio.write_bw_MBps by bs (fio-setup-basic.rw=randread)"),
        "{err}"
    );
    // The randread job at 8k measured 0 at BAD: a point of a curve, shown with its fall.
    let read = sweep.split("\n\n").next().unwrap_or_default();
    let row = read.lines().find(|l| l.trim_start().starts_with("8k")).unwrap_or_else(|| panic!("{sweep}"));
    assert!(row.contains("-100.0%") && row.trim_end().contains(" 0.00"), "{sweep}");
    // The other formats leave out the same sweeps.
    let csv = common::stdout(&common::culprit("s.db", &[&args[..], &["--format", "csv"]].concat(), dir.path()));
    assert_eq!(csv.lines().count(), 1 + 2 * 2, "a line per point of the two sweeps: {csv}");
    assert!(!csv.contains("fio.read_bw_MBps,randwrite,") && csv.contains("fio.read_bw_MBps,randread,"), "{csv}");
    let json = common::stdout(&common::culprit("s.db", &[&args[..], &["--json"]].concat(), dir.path()));
    let blocks: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(blocks.as_array().map(Vec::len), Some(2), "{json}");
    // --all shows every sweep, zeros included, and says nothing is left out.
    let out = common::culprit("s.db", &[&args[..], &["--all"]].concat(), dir.path());
    assert_eq!(titles(&common::stdout(&out)).len(), 4);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("read 0 at every point"));
    // A sweep of zeros that is all the --metric asks for is shown rather than nothing.
    let args = ["compare", BASE, BAD, "--by", "bs", "--job", "*randwrite*", "--metric", "fio.read_bw_MBps$"];
    let sweep = common::stdout(&common::culprit("s.db", &args, dir.path()));
    assert_eq!(titles(&sweep), ["fio.read_bw_MBps by bs"], "{sweep}");
}

#[test]
fn qa45_a_markdown_comparison_with_nothing_changed_has_no_empty_table() {
    // `--format markdown` printed the table's header and rule with no row under them when nothing changed.
    let dir = tempfile::tempdir().unwrap();
    store_fio_matrix_and_hackbench(dir.path());
    let args = ["compare", BASE, BAD, "--job", "job-process*", "--format", "markdown"];
    let md = common::stdout(&common::culprit("s.db", &args, dir.path()));
    assert_eq!(md, "### job-process-1\n\nNo metric changed among 1 compared (`--all` shows every row).\n\n");
    // With --all the row is there, under its header.
    let md = common::stdout(&common::culprit("s.db", &[&args[..], &["--all"]].concat(), dir.path()));
    let lines: Vec<&str> = md.lines().collect();
    assert!(lines[2].starts_with("| metric |") && lines[4].starts_with("| `hackbench.throughput` |"), "{md}");
    // A job with a change keeps its table beside one without.
    let args = ["compare", BASE, BAD, "--format", "markdown", "--metric", "(write_bw|throughput)"];
    let md = common::stdout(&common::culprit("s.db", &args, dir.path()));
    assert_eq!(md.matches("| metric |").count(), 2, "the two randwrite jobs' tables: {md}");
    assert_eq!(md.matches("No metric changed among 1 compared").count(), 3, "{md}");
}

#[test]
fn qa45_compare_by_with_a_command_job_beside_the_matrix_as_the_report_ran_it() {
    // The report's reproduction, with command jobs: a matrix over executions, and `cmd: true` run at the same
    // labels. `--by executions` said "job other-true has no param" and suggested command.executions itself.
    let dir = tempfile::tempdir().unwrap();
    let matrix = "suite: sweep\ncommand:\n  cmd: \"echo 'ops: 42'\"\n  executions: [1, 2]\n  capture:\n    \
                  ops: 'ops: ([0-9]+)'\n";
    std::fs::write(dir.path().join("sweep.yaml"), matrix).unwrap();
    std::fs::write(dir.path().join("other.yaml"), "suite: other\ncommand:\n  cmd: true\n").unwrap();
    for label in ["a", "b"] {
        for job in ["sweep.yaml", "other.yaml"] {
            let run = ["run", job, "-n", "2", "--label", label, "--monitors", "none"];
            common::stdout(&common::culprit("r.db", &run, dir.path()));
        }
    }
    let out = common::culprit("r.db", &["compare", "a", "b", "--by", "executions", "--metric", "ops$"], dir.path());
    let sweep = common::stdout(&out);
    assert_eq!(titles(&sweep), ["command.ops by executions"], "{sweep}");
    assert_eq!(sweep.lines().filter(|l| l.trim_start().starts_with(['1', '2'])).count(), 2, "{sweep}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("having no param 'executions': other-true"), "{err}");
}

#[test]
fn qa46_compare_by_of_one_revision_draws_its_scaling_curve() {
    // QA 46: `compare --by` needed two revisions, so one kernel's scaling curve (a matrix over threads or block sizes
    // run at one commit) could not be shown at all. One revision is its means and spreads, with no change column.
    let dir = tempfile::tempdir().unwrap();
    store_fio_matrix_and_hackbench(dir.path());
    let args = ["compare", BASE, "--by", "bs", "--metric", "fio.write_bw_MBps$"];
    let sweep = common::stdout(&common::culprit("s.db", &args, dir.path()));
    assert_eq!(titles(&sweep), ["fio.write_bw_MBps by bs (fio-setup-basic.rw=randwrite)"], "{sweep}");
    let row = |value: &str| {
        let line = sweep.lines().find(|l| l.trim_start().starts_with(value)).unwrap_or_else(|| panic!("{sweep}"));
        line.split_whitespace().map(str::to_string).collect::<Vec<_>>()
    };
    // The three runs at 4k read 100, 101 and 102 (200 to 202 at 8k): the mean, and no change or verdict after it.
    assert_eq!(row("4k")[..2], ["4k", "101.00"], "{sweep}");
    assert_eq!(row("8k")[..2], ["8k", "201.00"], "{sweep}");
    for value in ["4k", "8k"] {
        assert!(row(value)[2..].iter().all(|cell| cell.starts_with('±')), "only a spread may follow: {sweep}");
    }
    // CSV has a line per point with the base's statistics and no change.
    let csv = common::stdout(&common::culprit("s.db", &[&args[..], &["--format", "csv"]].concat(), dir.path()));
    let lines: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(lines.len(), 2, "{csv}");
    assert!(lines.iter().all(|l| l.contains(",101,") || l.contains(",201,")), "{csv}");
    // The JSON has one side per row and no change.
    let json = common::stdout(&common::culprit("s.db", &[&args[..], &["--json"]].concat(), dir.path()));
    let blocks: serde_json::Value = serde_json::from_str(&json).unwrap();
    let rows = blocks[0]["rows"].as_array().unwrap_or_else(|| panic!("{json}"));
    assert!(rows.iter().all(|r| r["sides"].as_array().unwrap().len() == 1), "{json}");
    assert!(rows.iter().all(|r| r["changes"].as_array().unwrap().is_empty()), "{json}");
    // Without --by, a comparison still needs something to compare the base with.
    let err = common::refused(&common::culprit("s.db", &["compare", BASE], dir.path()));
    assert!(err.contains("--by") || err.contains("OTHERS"), "{err}");
}
