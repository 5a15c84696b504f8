//! QA 51's findings on `culprit track` and `culprit serve`, end to end: the text, the chart and the dashboard name a
//! change point's 90% location interval where it is wider than the pair of commits the change line names; a later
//! `track --follow` pass names the session that bisected a change in its text as its JSON does; the compare page's
//! note says `all=1` where the command says `--all`.

use crate::common;

use crate::common::{culprit, git, html_escape, serve, stdout, write};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The QA's series: one run a point, a step of about 1% whose place the runs pin down only to a few points.
fn wide_csv() -> PathBuf {
    root().join("crates/culprit/tests/data/track/qa51-wide.csv")
}

/// The one change point of a `track --json` answer (of a series file, or of the one series of a stored history).
fn only_change(json: &serde_json::Value) -> serde_json::Value {
    let changes = json["change_points"].as_array().or_else(|| json["series"][0]["change_points"].as_array());
    let changes = changes.unwrap_or_else(|| panic!("no change points: {json:#}"));
    assert_eq!(changes.len(), 1, "{json:#}");
    changes[0].clone()
}

/// The first 12 characters of a full SHA, as the text names commits; a label as it is.
fn short(label: &str) -> &str {
    if label.len() == 40 {
        &label[..12]
    } else {
        label
    }
}

/// QA 51 1: the text of `track --series` said only "between c28 and c29" where the 90% interval of `--json` was
/// c25..c31 (the true step was c29 -> c30); the text now says the interval, and the chart shades it.
#[test]
fn qa51_1_the_series_text_and_chart_name_the_location_interval() {
    let _machine = common::shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let csv = wide_csv();
    let csv = csv.to_str().unwrap();
    let json = stdout(&culprit("unused.db", &["track", "--series", csv, "--json"], dir.path()));
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let change = only_change(&json);
    let (before, after) = (change["before"].as_str().unwrap(), change["after"].as_str().unwrap());
    let (low, high) = (change["before_low"].as_str().unwrap(), change["after_high"].as_str().unwrap());
    // The premise: the interval is wider than the pair on both sides.
    assert!(low != before && high != after, "{change:#}");
    let points = change["index_high"].as_u64().unwrap() - change["before_index_low"].as_u64().unwrap();
    let text = stdout(&culprit("unused.db", &["track", "--series", csv], dir.path()));
    let pair = format!("between {before} (last before) and {after} (first after)");
    let interval = format!("\n    90% interval: the change is somewhere between {low} and {high} ({points} commits)\n");
    assert!(text.contains(&pair) && text.contains(&interval), "{text}");

    let svg = dir.path().join("wide.svg");
    stdout(&culprit("unused.db", &["track", "--series", csv, "--plot", svg.to_str().unwrap()], dir.path()));
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.contains(&format!("(shaded, 90%: from {low} to {high})")), "{svg}");
    // The band: one faint rectangle in the colour of a change without a known direction, behind the runs.
    assert_eq!(bands(&svg), 1, "{svg}");
    // A change placed to its pair has no band and no interval line.
    let csv = root().join("crates/culprit/tests/data/track/hackbench-history.csv");
    let narrow = dir.path().join("narrow.svg");
    let args = ["track", "--series", csv.to_str().unwrap(), "--plot", narrow.to_str().unwrap()];
    let text = stdout(&culprit("unused.db", &args, dir.path()));
    let svg = std::fs::read_to_string(&narrow).unwrap();
    assert!(!text.contains("90% interval") && !svg.contains("shaded") && bands(&svg) == 0, "{text}\n{svg}");
}

/// The faint rectangles of an SVG chart: the location intervals' bands.
fn bands(svg: &str) -> usize {
    svg.split("<rect").skip(1).filter(|r| r.split('>').next().is_some_and(|a| a.contains("opacity=\"0.15\""))).count()
}

/// A repository of one commit per line of the QA's series, each commit's `level` file holding its value as a
/// throughput, and the job that prints it; every commit measured once into `dir/t.db`. Returns the repository and
/// its SHAs, oldest first.
fn stored_wide_history(dir: &Path) -> (PathBuf, Vec<String>) {
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "user.email", "robot@culprit.invalid"]);
    git(&repo, &["config", "user.name", "Culprit Test"]);
    let job = write(dir, "job.yaml", "suite: command\ntestcase: wide\ncommand:\n  cmd: cat level\n  capture:\n    \
                                      throughput: 'throughput: ([0-9.]+)'\n");
    let csv = std::fs::read_to_string(wide_csv()).unwrap();
    let mut shas = Vec::new();
    for (i, line) in csv.lines().skip(1).enumerate() {
        let (_, value) = line.split_once(',').unwrap();
        std::fs::write(repo.join("level"), format!("throughput: {value}\n")).unwrap();
        git(&repo, &["add", "level"]);
        git(&repo, &["commit", "-q", "-m", &format!("c{i}")]);
        let sha = git(&repo, &["rev-parse", "HEAD"]);
        let db = dir.join("t.db");
        let run = ["run", job.to_str().unwrap(), "-n", "1", "--commit", &sha, "--monitors", "none"];
        stdout(&culprit(&db, &run, &repo));
        shas.push(sha);
    }
    (repo, shas)
}

/// QA 51 1: over stored results along a branch, `track` and the dashboard's /track page (text and chart) say where
/// the change may lie, counting the branch's commits there, which is the range `track --bisect` hands the bisect.
#[test]
fn qa51_1_track_and_the_dashboard_name_the_location_interval_of_a_stored_history() {
    let _machine = common::shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = stored_wide_history(dir.path());
    let db = dir.path().join("t.db");
    let track = ["track", "--repo", repo.to_str().unwrap(), "--branch", "main", "--metric", "throughput$"];
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&culprit(&db, &[&track[..], &["--json"]].concat(), dir.path()))).unwrap();
    let change = only_change(&json);
    let (low, high) = (change["before_low"].as_str().unwrap(), change["after_high"].as_str().unwrap());
    assert!(low != change["before"] || high != change["after"], "{change:#}");
    let position = |sha: &str| shas.iter().position(|s| s == sha).unwrap();
    let commits = position(high) - position(low);
    let (low, high) = (short(low), short(high));
    let interval = format!("    90% interval: the change is somewhere between {low} and {high} ({commits} commits)\n");
    let text = stdout(&culprit(&db, &track, dir.path()));
    assert!(text.contains(&interval), "{text}");

    let server = serve(db.to_str().unwrap(), dir.path());
    let page = server.get(&format!("/track?repo={}&branch=main&metric=throughput%24", repo.display()));
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains(&html_escape(&text)), "the page's text is the command's: {}", page.body);
    assert!(page.body.contains(&format!("(shaded, 90%: from {low} to {high})")), "{}", page.body);
}

/// A repository whose commits print a throughput of 100 (80 from `slow_at` on) plus a fixed run-to-run noise, and a
/// job that captures it, in `dir`.
fn stepping_repo(dir: &Path, commits: usize, slow_at: usize) -> (PathBuf, Vec<String>) {
    let steps: Vec<common::ScoreCommit> = (0..commits)
        .map(|i| common::ScoreCommit {
            level: if i >= slow_at { -20.0 } else { 0.0 },
            build: None,
            subject: format!("rev {i}"),
        })
        .collect();
    let script = |counter: &Path| {
        format!(
            "n=$(cat {counter} 2>/dev/null || echo 0)\necho $((n + 1)) > {counter}\n\
             awk -v n=\"$n\" -v level=\"$(cat level)\" 'BEGIN {{ split(\"0.8 -1.1 0.3 -0.4 1.2 -0.9 0.1 -0.2\", z, \
             \" \"); printf \"throughput: %.4f\\n\", 100 + level + z[n % 8 + 1] }}'\n",
            counter = counter.display()
        )
    };
    write(dir, "job.yaml", "suite: command\ntestcase: step\ncommand:\n  cmd: sh score.sh\n  capture:\n    \
                            throughput: 'throughput: ([0-9.]+)'\n");
    common::score_repo_with(dir, &steps, script)
}

/// QA 51 2: the pass that bisected a change says "bisect session 1" under it, and so does every later pass, as its
/// `--json` gives `"bisect_session": 1`: a second pass listed the change without it.
#[test]
fn qa51_2_a_later_follow_pass_names_the_session_that_bisected_a_change() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = stepping_repo(dir.path(), 8, 5);
    let pass = ["track", "--follow", "main", "--job", "job.yaml", "--every", "3", "--repo", repo.to_str().unwrap()];
    let first = stdout(&culprit("f.db", &pass, dir.path()));
    assert!(first.contains("1 bisect(s)") && first.contains("bisect session 1 (`culprit bisect log 1`)"), "{first}");
    let change_line = format!("  regression command.throughput: {} .. {}\n", shas[4], shas[5]);
    assert!(first.contains(&change_line), "{first}");
    for later in 0..2 {
        let text = stdout(&culprit("f.db", &pass, dir.path()));
        assert!(text.contains("0 bisect(s)"), "pass {later}: {text}");
        assert!(text.contains(&format!("{change_line}    bisect session 1 (`culprit bisect log 1`)\n")), "{text}");
        assert_eq!(text.matches("bisect session").count(), 1, "named once: {text}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&culprit("f.db", &[&pass[..], &["--json"]].concat(), dir.path()))).unwrap();
    let sessions: Vec<&serde_json::Value> =
        json["change_points"].as_array().unwrap().iter().map(|c| &c["bisect_session"]).collect();
    assert_eq!(sessions, [&serde_json::json!(1)], "{json:#}");
}

/// QA 51 3: the note of a comparison without a changed row told the dashboard's reader to pass "--all", a flag of the
/// command; the page takes `all=1`.
#[test]
fn qa51_3_the_compare_page_note_says_all_1() {
    let _machine = common::shared_machine();
    let dir = tempfile::tempdir().unwrap();
    common::store_ops_runs(dir.path(), &[10.0, 11.0, 12.0, 10.0, 11.0, 12.0], [3, 3]);
    // The job's own metric only: the same values on both sides, where the runs' times may differ by chance.
    let compare = culprit("q.db", &["compare", "a", "b", "--metric", "ops$"], dir.path());
    let said = String::from_utf8_lossy(&compare.stderr);
    assert!(said.contains("--all shows every row"), "the premise: the command's note names its flag: {said}");
    let server = serve(dir.path().join("q.db").to_str().unwrap(), dir.path());
    let page = server.get("/compare?rev=a&rev=b&metric=ops%24");
    assert_eq!(page.status, 200, "{}", page.body);
    let notes: Vec<&str> = page.body.split("<p class=\"note\">").skip(1).collect();
    assert!(notes.iter().any(|n| n.contains("all=1 shows every row")), "{}", page.body);
    assert!(!page.body.contains("--all"), "{}", page.body);
}
