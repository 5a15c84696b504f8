//! Real end-to-end bisects: a throwaway git repository of a small C program with a real slowdown at one commit and
//! a commit that does not build, bisected with real builds and runs by the `culprit` binary.

use crate::common;

use crate::common::score_job;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const COMMITS: usize = 24;
const SLOW_AT: usize = 15;
const BROKEN_AT: usize = 12;

fn make_repo(dir: &Path, slow_at: usize, slowdown: i32) -> (PathBuf, Vec<String>) {
    common::make_slowdown_repo(dir, COMMITS, slow_at, BROKEN_AT, slowdown)
}

/// `culprit bisect` of the test repository's `./bench` built with make, measuring `metric`.
fn bisect_command(db: &Path, repo: &Path, good: &str, bad: &str, metric: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_culprit"));
    command
        .arg("--db")
        .arg(db)
        .args(["bisect", "--repo", repo.to_str().unwrap(), "--good", good, "--bad", bad])
        .args(["--run", "./bench", "--build", "make -s", "--metric", metric]);
    command
}

fn bisect(db: &Path, repo: &Path, good: &str, bad: &str, extra: &[&str]) -> Output {
    bisect_command(db, repo, good, bad, "command.user_time").arg("--json").args(extra).output().unwrap()
}

/// The JSON outcome of a bisect that exited successfully. A failed exit with a JSON outcome (an inconclusive bisect)
/// is shown with its measurements first (see [`Shown`]), as a failed assertion on the outcome would show it.
fn json(out: &Output) -> Shown {
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let shown = match serde_json::from_slice(&out.stdout) {
        Ok(value) => Shown(value),
        Err(e) => panic!("the outcome is not JSON ({e}), {}:\n{stdout}\n{stderr}", out.status),
    };
    assert!(out.status.success(), "{}: {shown:#}\n{stderr}", out.status);
    shown
}

/// A bisect's JSON outcome, read as the JSON it is. Shown with `{:#}` in a failed assertion, it leads with a few
/// lines of what the runs measured (status, each culprit and each tested commit's runs), then the whole JSON: CI
/// shows only the start of a failure's output, and a bisect of real runs that went wrong there is understood from
/// the measurements, which come last in the JSON.
struct Shown(serde_json::Value);

impl std::ops::Deref for Shown {
    type Target = serde_json::Value;
    fn deref(&self) -> &serde_json::Value {
        &self.0
    }
}

impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let value = &self.0;
        if !f.alternate() {
            return write!(f, "{value}");
        }
        let short = |v: &serde_json::Value| v.as_str().map_or_else(|| v.to_string(), |s| s.chars().take(10).collect());
        let number = |v: &serde_json::Value| v.as_f64().map_or_else(|| "-".to_string(), |x| format!("{x:.4}"));
        let (status, runs, builds) = (&value["status"], &value["runs"], &value["builds"]);
        writeln!(f, "status {status} after {runs} runs, {builds} builds: {}", value["reason"])?;
        for c in value["culprits"].as_array().into_iter().flatten() {
            let (sha, after, share) = (short(&c["sha"]), short(&c["after"]), number(&c["share"]));
            let confidence = number(&c["confidence"]);
            writeln!(f, "culprit {after}..{sha} located {} share {share} confidence {confidence}", c["located"])?;
        }
        for e in value["evidence"].as_array().into_iter().flatten() {
            let (sha, mean, stddev) = (short(&e["sha"]), number(&e["mean"]), number(&e["stddev"]));
            let subject = e["subject"].as_str().unwrap_or_default();
            writeln!(f, "  {sha} {:>3} runs mean {mean} sd {stddev} {subject}", e["runs"])?;
        }
        write!(f, "{value:#}")
    }
}

#[test]
fn finds_the_slowdown_commit_with_real_builds_and_never_blames_the_broken_one() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_repo(dir.path(), SLOW_AT, 30);
    let db = dir.path().join("b.db");
    let result = json(&bisect(&db, &repo, &shas[0], "HEAD", &[]));
    assert_eq!(result["status"], "found", "{result:#}");
    let culprits = result["culprits"].as_array().unwrap();
    assert_eq!(culprits.len(), 1, "{result:#}");
    assert_eq!(culprits[0]["sha"], shas[SLOW_AT - 1], "{result:#}");
    assert_eq!(culprits[0]["subject"], "bench: hash more rounds per element");
    // The one slowdown explains the whole change: its share's 90% interval reaches into 70%..130%. The interval, not
    // the point alone, because this host's CI is shared and under load the point has been read above 1.3; the
    // point is still held to 50%..160%.
    let share = |field: &str| culprits[0][field].as_f64().unwrap();
    assert!(share("share_low") < 1.3 && share("share_high") > 0.7, "{result:#}");
    assert!(share("share") > 0.5 && share("share") < 1.6, "{result:#}");
    assert!(result["runs"].as_u64().unwrap() >= 8);
    assert!(result["builds"].as_u64().unwrap() >= 3);
    // A commit that failed to build is evidence of nothing: it is untestable, never a culprit.
    for e in result["evidence"].as_array().unwrap() {
        if e["sha"] == shas[BROKEN_AT - 1] {
            assert_eq!(e["untestable"], true, "{result:#}");
        }
    }
    // The user's checkout was never touched and no worktree is left behind.
    let status = Command::new("git").arg("-C").arg(&repo).args(["status", "--porcelain"]).output().unwrap();
    assert!(String::from_utf8_lossy(&status.stdout).trim().is_empty());
    let worktrees = Command::new("git").arg("-C").arg(&repo).args(["worktree", "list"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&worktrees.stdout).lines().count(), 1);

    // The log replays the stored runs into the same decisions.
    let log = Command::new(env!("CARGO_BIN_EXE_culprit"))
        .arg("--db")
        .arg(&db)
        .args(["bisect", "log", &result["session"].to_string()])
        .output()
        .unwrap();
    let log_text = String::from_utf8_lossy(&log.stdout);
    assert!(log.status.success(), "{log_text}");
    assert!(log_text.contains(shas[SLOW_AT - 1].as_str()), "{log_text}");
    assert!(log_text.contains("because"), "{log_text}");
    // The steps name commits by position; the legend gives each position's SHA (the culprit is position SLOW_AT - 1
    // from the good end at 0, which the shas list starts with).
    let legend = &log_text[log_text.find("commits in the steps").expect(&log_text)..];
    let culprit_line = format!("{}  {}  bench: hash more rounds per element\n", SLOW_AT - 1, &shas[SLOW_AT - 1][..12]);
    assert!(legend.contains(&culprit_line), "{legend}");
    assert!(legend.contains(&format!("{}  bench: revision 1 (good)", &shas[0][..12])), "{legend}");
    // The failed build is stored as a run of its own, told apart from the measured runs the outcome counts.
    let tried_broken = result["evidence"].as_array().unwrap().iter().any(|e| e["untestable"] == true);
    let measured = format!("{} measured, ", result["runs"]);
    assert_eq!(log_text.contains(&measured) && log_text.contains("failed builds or runs"), tried_broken, "{log_text}");
    if tried_broken {
        // The failed build's log is its raw output and its stderr alike, and `results --run` prints it once.
        let results = |args: &[&str]| common::stdout(&common::culprit(&db, args, dir.path()));
        let failures = results(&["results", "--failures"]);
        let id = failures.split_whitespace().nth(1).expect("a failed run's id").to_string();
        let shown = results(&["results", "--run", &id]);
        assert!(shown.contains("raw output build.log") && shown.contains("stderr: the same as build.log"), "{shown}");
        assert_eq!(shown.matches("make: ***").count(), 1, "{shown}");
    }

    // The range is stored with the session: with the repository gone, the log and the report still replay.
    std::fs::rename(&repo, dir.path().join("gone")).unwrap();
    let session = result["session"].to_string();
    let mut printed = Vec::new();
    for args in [vec!["bisect", "log", session.as_str()], vec!["report", session.as_str(), "--format", "html"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_culprit")).arg("--db").arg(&db).args(&args).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{args:?}: {text}\n{}", String::from_utf8_lossy(&out.stderr));
        assert!(text.contains("bench: hash more rounds per element"), "{args:?}: {text}");
        printed.push(text);
    }

    // So does the dashboard: the session listed with a link to its page, which shows the log as `bisect log`
    // prints it and links to the report, served as `report ID --format html` writes it.
    let server = common::serve(db.to_str().unwrap(), dir.path());
    let overview = server.get("/");
    assert_eq!(overview.status, 200, "{}", overview.body);
    assert!(overview.body.contains(&format!("<a href=\"/bisect/{session}\">{session}</a>")), "{}", overview.body);
    let page = server.get(&format!("/bisect/{session}"));
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains(&common::html_escape(&printed[0])), "{}", page.body);
    assert!(page.body.contains(&format!("<a href=\"/bisect/{session}/report\">")), "{}", page.body);
    let report = server.get(&format!("/bisect/{session}/report"));
    assert_eq!(report.status, 200, "{}", report.body);
    assert_eq!(report.body, printed[1]);
}

#[test]
fn bisect_of_a_commit_range_without_change_blames_nobody() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    // The slowdown is after the range: good..bad has no change.
    let (repo, shas) = make_repo(dir.path(), COMMITS + 1, 30);
    let db = dir.path().join("b.db");
    let out = bisect(&db, &repo, &shas[0], &shas[10], &[]);
    let result: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    // The reproduce test's false-alarm bound is 5%, on purpose (docs/statistics.md): one no-change range in twenty
    // goes on to locating, which then finds no step and ends inconclusive. Either way nobody is blamed; this test
    // asserted "not-reproduced" alone and so failed by design about once in twenty runs, more on a loaded host.
    // An inconclusive bisect exits 1 (a script must not read it as an answer), a not-reproduced one 0.
    let status = result["status"].as_str().unwrap_or_default();
    match status {
        "not-reproduced" => assert_eq!(out.status.code(), Some(0), "{result:#}"),
        "inconclusive" => assert_eq!(out.status.code(), Some(1), "{result:#}"),
        _ => panic!("a range without change ended {status}: {result:#}"),
    }
    let culprits = result["culprits"].as_array().unwrap();
    assert!(culprits.iter().all(|c| c["located"] == false), "a commit was blamed for noise: {result:#}");
    if status == "not-reproduced" {
        assert!(culprits.is_empty(), "{result:#}");
    }
}

#[test]
fn a_killed_bisect_resumes_from_its_stored_runs() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_repo(dir.path(), SLOW_AT, 30);
    let db = dir.path().join("b.db");
    // Start, let it record some runs, then kill -9 it mid-flight.
    let mut child = bisect_command(&db, &repo, &shas[0], "HEAD", "command.user_time")
        .arg("--json")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let list =
            Command::new(env!("CARGO_BIN_EXE_culprit")).arg("--db").arg(&db).args(["bisect", "list"]).output().unwrap();
        if String::from_utf8_lossy(&list.stdout).lines().count() > 1 || std::time::Instant::now() > deadline {
            std::thread::sleep(std::time::Duration::from_millis(600));
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    // The same command again (here without --json, for the summary a person reads) continues the session and
    // reaches the right answer; its time is this command's, and the summary says so. It asks for another budget,
    // which the session does not take: it says which limits hold.
    let out =
        bisect_command(&db, &repo, &shas[0], "HEAD", "command.user_time").args(["--max-runs", "300"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stdout}\n{stderr}");
    if !stderr.contains("continuing bisect session 1") {
        // The first process finished before it was killed; then the session was already done and a new one ran.
        panic!("expected the session to be continued: {stderr}");
    }
    let kept = "session 1 keeps the limits it started with (--max-runs 600, no --min-change), not this command's \
                (--max-runs 300, no --min-change)";
    assert!(stderr.contains(kept), "{stderr}");
    assert!(stdout.contains(&format!("culprit: {} ", shas[SLOW_AT - 1])), "{stdout}");
    let spent = stdout.lines().find(|l| l.starts_with("spent: ")).unwrap_or_default();
    assert!(spent.contains("in this command, which continued after"), "{stdout}");
    // The runs are the session's; the ones this command took are told apart from the stored ones it continued after.
    let numbers: Vec<usize> = spent
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|word| word.parse().ok())
        .collect();
    let (total, here, stored) = (numbers[0], numbers[1], *numbers.last().unwrap());
    assert!(spent.starts_with(&format!("spent: {total} runs ({here} in this command), ")), "{spent}");
    assert_eq!(total, here + stored, "{spent}");
}

#[test]
fn git_bisect_run_with_culprit_check_finds_the_slowdown_and_skips_the_broken_build() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_repo(dir.path(), SLOW_AT, 30);
    let db = dir.path().join("b.db");
    let git = |args: &[&str]| Command::new("git").arg("-C").arg(&repo).args(args).output().unwrap();
    assert!(git(&["bisect", "start", "HEAD", &shas[0]]).status.success());
    let out = git(&[
        "bisect",
        "run",
        env!("CARGO_BIN_EXE_culprit"),
        "--db",
        db.to_str().unwrap(),
        "check",
        "--good",
        &shas[0],
        "--bad",
        "main",
        "--run",
        "./bench",
        "--build",
        "make -s",
        "--metric",
        "command.user_time",
    ]);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // Each check's verdict and its evidence are on stderr: a wrong step is explained there.
    assert!(stdout.contains(&format!("{} is the first bad commit", shas[SLOW_AT - 1])), "{stdout}\n{stderr}");
    let _ = git(&["bisect", "reset"]);
}

#[test]
fn a_run_that_fails_once_per_commit_is_retried_not_taken_as_untestable() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_repo(dir.path(), SLOW_AT, 30);
    let db = dir.path().join("b.db");
    let marks = dir.path().join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    // The first run at every commit fails (a flaky boot, say); later ones measure.
    let flaky = format!(
        "if [ -e {m}/$CULPRIT_COMMIT ]; then ./bench; else touch {m}/$CULPRIT_COMMIT; exit 1; fi",
        m = marks.display()
    );
    let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
        .arg("--db")
        .arg(&db)
        .args(["bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", "HEAD"])
        .args(["--run", &flaky, "--build", "make -s", "--metric", "command.user_time", "--json"])
        .output()
        .unwrap();
    let result = json(&out);
    assert_eq!(result["status"], "found", "{result:#}");
    assert_eq!(result["culprits"][0]["sha"], shas[SLOW_AT - 1], "{result:#}");
    // QA 59: a failed run is said as it happens, with what comes of it.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said = format!("culprit: a run of {} failed; it is tried again (`culprit results --failures`", &shas[0][..10]);
    assert!(stderr.contains(&said), "{stderr}");
    // The failed first attempts are kept as evidence: `results --failures` lists them.
    let failures = Command::new(env!("CARGO_BIN_EXE_culprit"))
        .arg("--db")
        .arg(&db)
        .args(["results", "--failures"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&failures.stdout).contains("exit status 1"));
}

fn culprit_in(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_culprit")).arg("--db").arg(db).args(args).output().unwrap()
}

#[test]
fn a_metric_the_job_does_not_produce_is_refused_before_any_session() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_repo(dir.path(), SLOW_AT, 30);
    let db = dir.path().join("b.db");
    let out = bisect_command(&db, &repo, &shas[0], "HEAD", "command.no_such_time").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // It used to mark good and bad untestable and store a session that ended as "not reproduced".
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("command.no_such_time") && stderr.contains("command.user_time"), "{stderr}");
    let list = culprit_in(&db, &["bisect", "list"]);
    assert_eq!(String::from_utf8_lossy(&list.stdout).lines().count(), 1, "no session: {list:?}");
}

#[test]
fn a_machine_failure_or_a_missing_repository_stops_the_bisect_resumably() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_repo(dir.path(), SLOW_AT, 30);
    let db = dir.path().join("b.db");
    // The benchmark lives outside the repository and stops working after its sixth run: at good or bad, which
    // already ran, so the failure is the machine's and must not make them untestable.
    let counter = dir.path().join("count");
    let bench = format!(
        "n=$(cat {c} 2>/dev/null || echo 0); echo $((n + 1)) > {c}; [ $n -lt 6 ] || exit 127; ./bench",
        c = counter.display()
    );
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_culprit"))
            .arg("--db")
            .arg(&db)
            .arg("bisect")
            .args(extra)
            .arg("--json")
            .output()
            .unwrap()
    };
    let start = ["--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", "HEAD", "--build", "make -s"];
    let out = run(&[&start[..], &["--run", &bench, "--metric", "command.user_time"]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("exit status 127") && stderr.contains("--resume 1"), "{stderr}");
    let status = || String::from_utf8_lossy(&culprit_in(&db, &["bisect", "list"]).stdout).into_owned();
    // Stored as running, but no process holds its lock: `bisect list` says it was stopped (it said "running").
    assert!(status().contains(" stopped "), "{}", status());

    // With the repository moved away, resuming says so and keeps the session.
    let moved = dir.path().join("moved");
    std::fs::rename(&repo, &moved).unwrap();
    let out = run(&["--resume", "1"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(repo.to_str().unwrap()) && stderr.contains("gone"), "{stderr}");
    // With its repository gone nothing drives it: listed stopped, as `bisect forget` takes it (QA 57: "running").
    assert!(status().contains(" stopped "), "{}", status());

    // Both fixed, the session finishes with the right culprit.
    std::fs::rename(&moved, &repo).unwrap();
    std::fs::write(&counter, "-100000\n").unwrap();
    let result = json(&run(&["--resume", "1"]));
    assert_eq!(result["status"], "found", "{result:#}");
    assert_eq!(result["culprits"][0]["sha"], shas[SLOW_AT - 1], "{result:#}");
}

/// Without --metric, the probe runs at good and bad choose the metric, so they are kept out of the session: the
/// metric picked is the one whose probe runs happened to differ most, and the test of the regression must not read
/// them again. They stay in the store. With --metric (or --run) they are the session's first runs.
#[test]
fn probe_runs_that_chose_the_metric_are_not_evidence_for_it() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_repo(dir.path(), SLOW_AT, 30);
    let job = dir.path().join("bench.yaml");
    std::fs::write(&job, "suite: bench\ncommand:\n  cmd: ./bench\n").unwrap();
    let args = ["bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", "HEAD", "--build", "make -s"];
    // (runs at good in the session, runs at good in the store) after a bisect with these flags.
    let good_runs = |db: &Path, flags: &[&str]| {
        let out = culprit_in(db, &[&args[..], &["--job", job.to_str().unwrap(), "--json"], flags].concat());
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{stderr}"));
        let evidence = result["evidence"].as_array().unwrap();
        let in_session = evidence.iter().find(|e| e["sha"] == shas[0]).unwrap()["runs"].as_u64().unwrap();
        let results = common::stdout(&culprit_in(db, &["results", "--json"]));
        let stored: serde_json::Value = serde_json::from_str(&results).unwrap();
        let rows = stored.as_array().unwrap();
        let row = rows.iter().find(|row| row["revision"]["sha"] == shas[0]).unwrap_or_else(|| panic!("{results}"));
        (in_session, row["ok_runs"].as_u64().unwrap(), stderr, result["metric_choice_runs"].as_u64())
    };
    let (in_session, stored, stderr, choosing) = good_runs(&dir.path().join("chosen.db"), &[]);
    // The metric was chosen by the probe runs (3 a side, often but not always enough for the slowdown to be
    // significant among all the job's metrics, and the message says which it was).
    let chosen = ["the most significant change between good and bad", "the closest to a change"];
    assert!(chosen.iter().any(|said| stderr.contains(said)), "{stderr}");
    assert_eq!(stored, in_session + 3, "the 3 probe runs at good are stored but not the session's");
    // They are counted beside the session's runs, as runs the bisect cost (QA 50: 21 reported where 27 were made).
    assert_eq!(choosing, Some(6), "{stderr}");
    let log = common::stdout(&culprit_in(&dir.path().join("chosen.db"), &["bisect", "log", "1"]));
    let spent = log.lines().find(|line| line.starts_with("spent: ")).unwrap_or_else(|| panic!("{log}"));
    assert!(spent.contains(" runs (and 6 that chose the metric), "), "{spent}");
    let (in_session, stored, _, choosing) =
        good_runs(&dir.path().join("given.db"), &["--metric", "command.user_time"]);
    assert_eq!(stored, in_session, "the one probe run at good is the session's first");
    assert_eq!(choosing, Some(0));
}

/// Seed 002's series for real: two commits each add 30% of work (about 10 noise sigmas of user time each). Both are
/// named, each with about half of the change; before, the bisect reported two ranges of tested commits. The steps
/// were 15% until CI twice read the second as a fraction of the first (once 1.5% against 16.6%: the bad commit's
/// four runs were 10% under what its work predicts, where this machine reads the work within 2%). The CI host's
/// builds read levels of their own (once 7% apart for two builds of one source), for causes not found; each step is
/// now several times that, so the test checks the naming of a series and not the host.
#[test]
fn a_series_of_two_slowdowns_names_both_commits() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/make-slowdown-repo.sh");
    let status = Command::new("bash").arg(&script).arg(&repo).args(["24", "8", "12", "30", "17"]).status().unwrap();
    assert!(status.success());
    let log = Command::new("git").arg("-C").arg(&repo).args(["log", "--reverse", "--format=%H"]).output().unwrap();
    let shas: Vec<String> = String::from_utf8_lossy(&log.stdout).lines().map(str::to_string).collect();
    let db = dir.path().join("b.db");
    let result = json(&bisect(&db, &repo, &shas[0], "HEAD", &[]));
    // The timings come from a machine shared with other work: a failure shows each step's decision and evidence.
    let steps = || String::from_utf8_lossy(&culprit_in(&db, &["bisect", "log", "1"]).stdout).into_owned();
    assert_eq!(result["status"], "multiple", "{result:#}\n{}", steps());
    let culprits = result["culprits"].as_array().unwrap();
    let named: Vec<&str> = culprits.iter().filter(|c| c["located"] == true).filter_map(|c| c["sha"].as_str()).collect();
    assert_eq!(named, [shas[7].as_str(), shas[16].as_str()], "{result:#}\n{}", steps());
    // Each explains about half: its share's 90% interval reaches into 25%..80% (the bounds the point was held to
    // before, so every share that passed then passes), and the point is within 15%..85% (a loaded host once read
    // 81% for one of them).
    for c in culprits {
        let share = |field: &str| c[field].as_f64().unwrap();
        let about_half = share("share_low") < 0.8 && share("share_high") > 0.25;
        assert!(about_half && (0.15..0.85).contains(&share("share")), "{result:#}\n{}", steps());
    }
    // One mail per commit, as the robot sends them: the second's subject and table are that commit against its
    // parent, and each mail says how to make the other.
    let session = result["session"].to_string();
    let first = culprit_in(&db, &["report", &session]);
    let second = culprit_in(&db, &["report", &session, "--culprit", "2"]);
    let (first, second) = (String::from_utf8_lossy(&first.stdout), String::from_utf8_lossy(&second.stdout));
    let subject = |mail: &str| mail.lines().next().unwrap_or_default().to_string();
    assert!(subject(&first).contains(&shas[7][..10]), "{first}");
    assert!(subject(&second).contains(&shas[16][..10]), "{second}");
    // The mail wraps its lines where the words fall; the sentences are checked with the wrapping undone.
    let flat = |mail: &str| mail.split_whitespace().collect::<Vec<_>>().join(" ");
    let (first, second) = (flat(&first), flat(&second));
    assert!(second.contains("at the second of 2 commits that share the change"), "{second}");
    // The store is not the default one, so the printed command names it.
    let compare = format!("culprit compare --db {} \\ {} \\ {}", db.display(), shas[15], shas[16]);
    assert!(second.contains(&compare), "{second}");
    // So does the command that measures the pair again, which stored into ./culprit.db while the compare line read
    // the session's store (QA pass 15).
    let unwrapped: String = second.split(' ').filter(|word| *word != "\\").collect::<Vec<_>>().join(" ");
    assert!(unwrapped.contains(&format!("culprit bisect --db {} --repo", db.display())), "{second}");
    assert!(first.contains(&format!("`culprit report {session} --culprit N` makes the mail of the other (N = 2)")));
    let third = culprit_in(&db, &["report", &session, "--culprit", "3"]);
    assert!(String::from_utf8_lossy(&third.stderr).contains("named 2 culprits; --culprit takes 1 to 2"));

    // The robot's loop mails only the bisects it started (QA 45b 4: it mailed every finished session of its job, a
    // maintainer's included). Its job file is the job `--run ./bench` stands for, so the session above is one of its
    // job; the loop's own two commits (0 and REF, 4 runs each) cannot show a change point, so it starts no bisect.
    std::fs::write(dir.path().join("job.yaml"), "suite: command\ntestcase: bisect-run\ncommand:\n  cmd: ./bench\n").unwrap();
    let follow = Command::new(env!("CARGO_BIN_EXE_culprit"))
        .current_dir(dir.path())
        .arg("--db")
        .arg(&db)
        .args(["track", "--follow", "main", "--job", "job.yaml", "--every", "100", "--repo", repo.to_str().unwrap()])
        .args(["--build", "make -s", "--metric", "command.user_time", "--json"])
        .output()
        .unwrap();
    let pass = json(&follow);
    assert!(pass["bisects"].as_array().unwrap().is_empty(), "{pass:#}");
    assert!(pass["reports"].as_array().unwrap().is_empty(), "{pass:#}");
    assert!(!dir.path().join("culprit-reports").exists(), "{pass:#}");

    // The dashboard links each mail, and serves the second.
    let server = common::serve(db.to_str().unwrap(), dir.path());
    let page = server.get(&format!("/bisect/{session}"));
    assert!(page.body.contains(&format!("href=\"/bisect/{session}/report?culprit=2\"")), "{}", page.body);
    let report = server.get(&format!("/bisect/{session}/report?culprit=2"));
    assert_eq!(report.status, 200, "{}", report.body);
    assert!(report.body.contains("at the second of 2 commits that share the change"), "{}", report.body);
}

#[test]
fn a_benchmark_that_is_not_in_the_worktree_points_to_build() {
    let _machine = common::quiet_machine();
    // The worktree of a commit holds its sources: ./bench exists only once `make` has run there.
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_repo(dir.path(), SLOW_AT, 30);
    let out = culprit_in(
        &dir.path().join("b.db"),
        &["bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", "HEAD", "--run", "./bench"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("exit status 127") && stderr.contains("give the build command with --build"), "{stderr}");
}

/// A repository whose commits print a score: 100, plus `step` from commit 15 on, plus each commit's own offset (as
/// a build's code layout would add), plus run-to-run noise ([`common::score_repo`]). Returns the repository and its
/// commit SHAs, oldest first.
fn make_score_repo(dir: &Path, step: f64, offsets: &[f64; 24]) -> (PathBuf, Vec<String>) {
    let commits: Vec<common::ScoreCommit> = offsets
        .iter()
        .enumerate()
        .map(|(i, offset)| common::ScoreCommit {
            level: if i + 1 >= 15 { step } else { 0.0 } + offset,
            build: None,
            subject: format!("score: revision {}", i + 1),
        })
        .collect();
    common::score_repo(dir, &commits)
}

/// Builds that differ, end to end, on numbers that do not depend on the machine: a step of 4 noise sigmas over
/// commits whose own offsets are about 3 noise sigmas. The search comes to revision 6, one of the offsets (its build
/// sits 4 above revision 5's); the tested commits already differ by more than their runs explain, so before blaming
/// it the bisect measures the builds beside it, revisions 7 and 8 against 3 and 4, whose offsets do not line up
/// into a step, and it ends inconclusive with the caution instead of naming revision 6 (which session 15's engine
/// did). The same step over steady commits is found without either.
#[test]
fn commits_whose_levels_differ_on_each_side_of_the_step_get_the_caution_and_steady_ones_do_not() {
    let _machine = common::quiet_machine();
    // Offsets (good's and bad's are 0), then none at all.
    let layout = [
        0.0, 3.0, -2.4, 1.6, -3.2, 2.2, -0.6, 3.4, -2.8, 1.2, -1.8, 2.6, -3.6, 0.8, 0.0, 3.2, -2.2, 1.4, -3.0, 2.4,
        -1.2, 2.8, -2.0, 0.0,
    ];
    for (offsets, cautioned) in [(layout, true), ([0.0; 24], false)] {
        let dir = tempfile::tempdir().unwrap();
        let (repo, shas) = make_score_repo(dir.path(), 3.0, &offsets);
        let job = score_job(dir.path());
        let db = dir.path().join("b.db");
        let args = ["bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", "HEAD"];
        let args = [&args[..], &["--job", job.to_str().unwrap(), "--metric", "command.score"]].concat();
        let out = culprit_in(&db, &[&args[..], &["--json"]].concat());
        // An inconclusive bisect exits 1; its JSON is printed all the same.
        assert_eq!(out.status.code(), Some(if cautioned { 1 } else { 0 }), "{}", String::from_utf8_lossy(&out.stderr));
        let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(result["build_spread"].is_object(), cautioned, "{result:#}");
        if cautioned {
            assert_eq!(result["status"], "inconclusive", "{result:#}");
            assert_eq!(result["culprits"].as_array().map(Vec::len), Some(0), "{result:#}");
            let reason = result["reason"].as_str().unwrap_or_default();
            assert!(reason.contains("does not stand out from how much builds differ"), "{result:#}");
        } else {
            assert_eq!(result["status"], "found", "{result:#}");
            assert_eq!(result["culprits"][0]["sha"], shas[14], "{result:#}");
        }
        // The summary of the stored session says the same, and so do the log and the mail.
        let session = result["session"].to_string();
        let summary = culprit_in(&db, &["bisect", "--resume", &session]);
        let summary = String::from_utf8_lossy(&summary.stdout);
        let log = common::stdout(&culprit_in(&db, &["bisect", "log", &session]));
        let flat = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(flat(&summary).contains("differ by more than their runs explain"), cautioned, "{summary}");
        assert_eq!(log.contains("does not hold across builds"), cautioned, "{log}");
        let mail = common::stdout(&culprit_in(&db, &["report", &session]));
        assert_eq!(flat(&mail).contains("differ by more than their runs explain"), cautioned, "{mail}");
    }
}

/// Builds whose levels alternate (odd revisions 0.75 up, even ones 0.75 down, a build layout that flips with every
/// commit) around a step of 3 at revision 15: good (revision 1) sits up and bad (revision 24) down, so good-to-bad
/// is 1.5 while revision 15 (up) sits 4.5 above revision 14 (down), three times the whole change. Such a share once
/// made the bisect end inconclusive (the sanity rule against shares above 150%, meant for bursts of load); the
/// builds beside it, revisions 16 and 17 against 13 and 12, show the step, so it is blamed, with the caution.
#[test]
fn a_step_between_alternating_builds_is_blamed_when_the_builds_beside_it_show_it() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let offsets: [f64; 24] = std::array::from_fn(|i| if i % 2 == 0 { 0.75 } else { -0.75 });
    let (repo, shas) = make_score_repo(dir.path(), 3.0, &offsets);
    let job = score_job(dir.path());
    let db = dir.path().join("b.db");
    let args = ["bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", "HEAD", "--json"];
    let args = [&args[..], &["--job", job.to_str().unwrap(), "--metric", "command.score"]].concat();
    let result = json(&culprit_in(&db, &args));
    assert_eq!(result["status"], "found", "{result:#}");
    assert_eq!(result["culprits"][0]["sha"], shas[14], "{result:#}");
    assert!(result["culprits"][0]["share"].as_f64().is_some_and(|share| share > 1.5), "{result:#}");
    assert!(result["build_spread"].is_object(), "the caution: {result:#}");
    let log = common::stdout(&culprit_in(&db, &["bisect", "log", &result["session"].to_string()]));
    assert!(log.contains("holds across builds; the ends' builds explain its share"), "{log}");
}

/// `--min-change`: a real 3% step (score 100 to 103, noise about 0.8) is significant after 4 runs a side, but
/// surely below a bar of 10%, so the bisect ends not reproduced there, naming nothing and saying why; the session
/// stores the bar, so resuming it says the same.
#[test]
fn a_step_surely_below_min_change_ends_not_reproduced_at_the_ends() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_score_repo(dir.path(), 3.0, &[0.0; 24]);
    let job = score_job(dir.path());
    let db = dir.path().join("b.db");
    let args = ["bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", "HEAD", "--json"];
    let metric = ["--metric", "command.score", "--min-change", "10%"];
    let args = [&args[..], &["--job", job.to_str().unwrap()], &metric[..]].concat();
    let result = json(&culprit_in(&db, &args));
    assert_eq!(result["status"], "not-reproduced", "{result:#}");
    assert_eq!(result["culprits"].as_array().map(Vec::len), Some(0), "{result:#}");
    assert!(result["runs"].as_u64().is_some_and(|runs| runs <= 16), "stopped at the ends: {result:#}");
    assert_eq!(result["builds"], 2, "good and bad only: {result:#}");
    let session = result["session"].to_string();
    let log = common::stdout(&culprit_in(&db, &["bisect", "log", &session]));
    assert!(log.contains("--min-change") && log.contains("10% of good's level"), "{log}");
}

/// A history with merges (tests/fixtures/make-merge-repo.sh): two topic branches merged into main, a commit on main
/// that does not build, and a 30% slowdown made either by a commit of the second topic branch or by the merge that
/// brings that branch in (resolved by hand). Git's own ordering of the range is what the bisect reads.
fn make_merge_repo(dir: &Path, mode: &str) -> (PathBuf, String, Vec<(String, String)>) {
    let repo = dir.join(format!("repo-{mode}"));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/make-merge-repo.sh");
    assert!(Command::new("bash").arg(&script).arg(&repo).arg(mode).status().unwrap().success());
    let git = |args: &[&str]| {
        let out = Command::new("git").arg("-C").arg(&repo).args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let good = git(&["rev-list", "--max-parents=0", "HEAD"]);
    let commits = git(&["log", "--format=%H %s"])
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(sha, subject)| (sha.to_string(), subject.to_string())))
        .collect();
    (repo, good, commits)
}

#[test]
fn a_slowdown_on_a_merged_branch_is_blamed_on_its_commit_and_an_evil_merge_on_the_merge() {
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    for (mode, want) in
        [("branch", "topic-b: hash more rounds per element"), ("merge", "Merge branch 'topic-b' (resolved by hand)")]
    {
        let (repo, good, commits) = make_merge_repo(dir.path(), mode);
        let sha_of = |subject: &str| commits.iter().find(|(_, s)| s == subject).map(|(sha, _)| sha.clone()).unwrap();
        let db = dir.path().join(format!("{mode}.db"));
        let result = json(&bisect(&db, &repo, &good, "HEAD", &[]));
        let steps = || String::from_utf8_lossy(&culprit_in(&db, &["bisect", "log", "1"]).stdout).into_owned();
        assert_eq!(result["status"], "found", "{mode}: {result:#}\n{}", steps());
        let culprits = result["culprits"].as_array().unwrap();
        assert_eq!(culprits.len(), 1, "{mode}: {result:#}");
        assert_eq!(culprits[0]["sha"], sha_of(want).as_str(), "{mode}: {result:#}\n{}", steps());
        // The merge is blamed only once its branch was searched and ruled out.
        if mode == "merge" {
            let log = steps();
            assert!(log.contains("search the merged branch") && log.contains("made the step itself"), "{log}");
        }
        let broken = sha_of("main: add a stray file (does not build)");
        assert_ne!(culprits[0]["sha"], broken.as_str());
    }
}

#[test]
fn a_series_split_across_two_merged_branches_names_both_commits() {
    // Two 25% slowdowns that add, one on each topic branch: main holds neither until topic-a is merged, and the
    // commits of topic-b hold their own without topic-a's, so they read between good and bad. Whichever way the
    // search takes on the machine's timings (a staircase of two changes that add, a residual after the first
    // culprit, the merged branch searched behind topic-b's merge), each step must be accounted for and nothing
    // else blamed. Each is named as a rule (11 of 12 real bisects named both); a step whose commit reads far off
    // the builds beside it when the machine's level moves between visits fails the replication check and is
    // reported as the range that holds it instead (1 of 12), which a maintainer can act on too. A commit named
    // twice (b2, on CI, in place of a2), a merge or another commit blamed, or a step in no reported range fails.
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, good, commits) = make_merge_repo(dir.path(), "series");
    let sha_of = |subject: &str| commits.iter().find(|(_, s)| s == subject).map(|(sha, _)| sha.clone()).unwrap();
    let db = dir.path().join("series.db");
    let result = json(&bisect(&db, &repo, &good, "HEAD", &[]));
    let steps = || String::from_utf8_lossy(&culprit_in(&db, &["bisect", "log", "1"]).stdout).into_owned();
    assert_eq!(result["status"], "multiple", "{result:#}\n{}", steps());
    let culprits = result["culprits"].as_array().unwrap();
    let field = |c: &serde_json::Value, key: &str| c[key].as_str().unwrap_or_default().to_string();
    let named: Vec<String> = culprits.iter().filter(|c| c["located"] == true).map(|c| field(c, "sha")).collect();
    let want =
        [sha_of("topic-a: hash more rounds per element"), sha_of("topic-b: hash even more rounds per element")];
    let mut distinct = named.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), named.len(), "a commit named twice: {result:#}\n{}", steps());
    assert!(named.iter().all(|sha| want.contains(sha)), "a commit blamed that is not a step: {result:#}\n{}", steps());
    assert!(!named.is_empty(), "{result:#}\n{}", steps());
    for step in want.iter().filter(|sha| !named.contains(sha)) {
        let in_a_range = culprits.iter().filter(|c| c["located"] == false).any(|c| {
            let range = format!("{}..{}", field(c, "after"), field(c, "sha"));
            let listed = Command::new("git").arg("-C").arg(&repo).args(["rev-list", &range]).output().unwrap();
            String::from_utf8_lossy(&listed.stdout).lines().any(|line| line == step)
        });
        assert!(in_a_range, "step {step} neither named nor in a reported range: {result:#}\n{}", steps());
    }
    // Each explains about half, read as in the linear series above: the 90% interval reaches into 25%..75% (the
    // point's bounds before; CI read 61% with an interval above 50% for the second, which requiring 50% refused).
    for c in culprits {
        let share = |field: &str| c[field].as_f64().unwrap();
        let about_half = share("share_low") < 0.75 && share("share_high") > 0.25;
        assert!(about_half && (0.15..0.85).contains(&share("share")), "{result:#}\n{}", steps());
    }
}

#[test]
fn qa_29_an_improvement_ends_after_the_first_runs_and_says_so() {
    // QA of session 29: a real 25% speed-up between good and bad spent the whole reproduce budget (120 runs) and
    // ended saying that good and bad do not differ.
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_repo(dir.path(), SLOW_AT, -25);
    let db = dir.path().join("i.db");
    let out = bisect(&db, &repo, &shas[0], &shas[COMMITS - 1], &[]);
    let result = json(&out);
    assert_eq!(result["status"], "not-reproduced", "{result:#}");
    assert_eq!(result["improved"], true, "{result:#}");
    assert!(result["runs"].as_u64().unwrap() <= 16, "{result:#}");
    assert!(result["reason"].as_str().unwrap().contains("bad differs from good the other way"), "{result:#}");
    // The summary (as the log ends with it) says it is an improvement and how to find the commit that made it.
    let summary = common::stdout(&culprit_in(&db, &["bisect", "log", &result["session"].to_string()]));
    let advice = "bad is better than good, an improvement: no commit is blamed; bisect it with --improvement";
    assert!(summary.contains(advice), "{summary}");
    // Session 30: the mail of that session said the change "did not reproduce when measured again".
    let mail = common::stdout(&culprit_in(&db, &["report", &result["session"].to_string()]));
    assert!(mail.contains("improved, not regressed") && mail.contains("an improvement"), "{mail}");
    assert!(mail.contains("bisect it with --improvement"), "{mail}");
    assert!(!mail.contains("did not reproduce"), "{mail}");
}

#[test]
fn an_improvement_bisected_with_improvement_names_the_commit_that_sped_it_up() {
    // The repository above, where bad is 25% faster than good: with --improvement the speed-up is the change
    // searched for, and the commit that made it is named like a slowdown's culprit.
    let _machine = common::quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_repo(dir.path(), SLOW_AT, -25);
    let db = dir.path().join("i.db");
    let result = json(&bisect(&db, &repo, &shas[0], &shas[COMMITS - 1], &["--improvement"]));
    let session = result["session"].to_string();
    let steps = || common::stdout(&culprit_in(&db, &["bisect", "log", &session]));
    assert_eq!(result["status"], "found", "{result:#}\n{}", steps());
    let culprits = result["culprits"].as_array().unwrap();
    assert_eq!(culprits.len(), 1, "{result:#}");
    assert_eq!(culprits[0]["sha"], shas[SLOW_AT - 1], "{result:#}\n{}", steps());
    assert_eq!((&result["improvement"], &result["improved"]), (&true.into(), &false.into()), "{result:#}");
    // The log says which change the session searched, since its steps speak only of "the change".
    assert!(steps().lines().next().unwrap().contains("(an improvement, --improvement)"), "{}", steps());
    assert!(steps().contains("bisect 1: found the commit of the improvement\n"), "{}", steps());
    // The mail opens with an improvement, in the subject and the sentence that names the commit, and never calls it
    // a regression; its reproduce command bisects it the same way.
    let mail = common::stdout(&culprit_in(&db, &["report", &session]));
    let opening: String = mail.lines().take(6).collect::<Vec<_>>().join("\n");
    assert!(opening.contains("improvement") && !opening.to_lowercase().contains("regression"), "{mail}");
    assert!(mail.lines().next().unwrap().contains(&shas[SLOW_AT - 1][..10]), "{mail}");
    assert!(mail.contains("--improvement"), "{mail}");
    assert!(mail.contains("bisect session 1: found the commit of the improvement, confirmed"), "{mail}");
}

#[test]
fn qa_29_a_good_end_that_does_not_build_is_an_error_not_a_result() {
    let _machine = common::shared_machine();
    // QA of session 29: good failing to build ended "not reproduced" with exit 0, and the mail said the change had
    // been measured again.
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_repo(dir.path(), SLOW_AT, 30);
    let db = dir.path().join("g.db");
    let build = format!("test \"$CULPRIT_COMMIT\" != {} && make -s", shas[0]);
    let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
        .arg("--db")
        .arg(&db)
        .args(["bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", &shas[COMMITS - 1]])
        .args(["--run", "./bench", "--build", &build, "--metric", "command.user_time"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("good (") && stderr.contains("could not be built and run"), "{stderr}");
    assert!(stderr.contains(" results --failures`"), "{stderr}");
}
