//! Regression tests for the defects QA 22 found running a farm on a PostgreSQL store, through the real binary: a URL
//! asking for TLS (`sslmode=require`), which culprit's client cannot give, told the user to check that the server
//! was running; the dashboard's /track charts (and `track --plot`'s) of labels named their points "tested commits,
//! oldest first"; and a directory holding several machines' result roots imported each run under the path_params
//! as its machine (and the root's name as its testcase), pooling the machines; and a job of labels only, tracked
//! along a branch, was not said to be of labels. Another application's PostgreSQL database getting culprit's tables
//! written into it, and two stores in schemas of one database named as one, need SQL to set up and are tested where
//! it lives, in crates/culprit-store/tests/postgres.rs.

use std::path::Path;
use std::process::{Command, Output};

fn culprit(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_culprit"))
        .args(args)
        .current_dir(cwd)
        .env_remove("CULPRIT_DB")
        .output()
        .unwrap_or_else(|e| panic!("cannot start culprit: {e}"))
}

fn text(output: &Output) -> String {
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    format!("stdout:\n{stdout}\nstderr:\n{stderr}")
}

#[test]
fn a_url_asking_for_tls_says_culprit_does_not_encrypt_rather_than_that_the_server_is_down() {
    // A managed server's URL carries sslmode=require. The answer was "error performing TLS handshake: no TLS
    // implementation configured; check that the server is running and reachable", which sent the user after a
    // server that was up. No server is needed to tell: the URL alone says what cannot be done.
    let dir = tempfile::tempdir().unwrap();
    let url = "postgresql://culprit:hunter2@127.0.0.1:1/culprit?sslmode=require";
    for args in [vec!["--db", url, "results"], vec!["--db", url, "serve", "--listen", "127.0.0.1:0"]] {
        let output = culprit(&args, dir.path());
        let all = text(&output);
        assert!(!output.status.success(), "{all}");
        assert!(all.contains("sslmode=require") && all.contains("does not encrypt"), "{all}");
        assert!(!all.contains("check that the server is running"), "{all}");
        assert!(!all.contains("hunter2"), "the password is never shown: {all}");
    }
    assert!(!dir.path().join("culprit.db").exists(), "nothing went to a SQLite file");
}

/// Writes `dir/ops.yaml`, a `command` job whose one metric, `command.ops`, is always 42, and returns its path.
fn write_ops_job(dir: &Path) -> std::path::PathBuf {
    let job = dir.join("ops.yaml");
    let text = "suite: command\ncommand:\n  cmd: \"echo 'ops: 42'\"\n  capture:\n    ops: 'ops: ([0-9]+)'\n";
    std::fs::write(&job, text).unwrap();
    job
}

/// Stores four runs of the ops job (see [`write_ops_job`]) under each of the labels `before` and `after` in
/// `dir/culprit.db`, and returns the store's path.
fn store_labelled_ops_runs(dir: &Path) -> std::path::PathBuf {
    let job = write_ops_job(dir);
    let db = dir.join("culprit.db");
    let (db_arg, job) = (db.to_str().unwrap(), job.to_str().unwrap());
    for label in ["before", "after"] {
        let run = culprit(&["--db", db_arg, "run", job, "-n", "4", "--label", label, "--monitors", "none"], dir);
        assert!(run.status.success(), "{}", text(&run));
    }
    db
}

#[test]
fn a_chart_of_labels_says_its_points_are_labels_not_tested_commits() {
    // A farm's store of labelled runs (no commits): the dashboard's /track and `track --plot` drew each series with
    // the axis "tested commits, oldest first", while the page above it said the points were labels in the order of
    // their first run.
    let dir = tempfile::tempdir().unwrap();
    let db = store_labelled_ops_runs(dir.path());
    let db = db.to_str().unwrap();
    let svg = dir.path().join("ops.svg");
    let track = culprit(
        &["--db", db, "track", "--metric", "^command\\.ops$", "--plot", svg.to_str().unwrap()],
        dir.path(),
    );
    assert!(track.status.success(), "{}", text(&track));
    let drawn = std::fs::read_to_string(&svg).unwrap_or_else(|e| panic!("no chart: {e}; {}", text(&track)));
    assert!(drawn.contains("labels, in the order of their first run"), "{drawn}");
    assert!(!drawn.contains("tested commits"), "{drawn}");
}

#[test]
fn a_directory_of_several_result_roots_imports_each_run_under_its_own_machine() {
    // A farm collects each machine's `--result-root` in a directory of its own (`results/<box>/`) and imports the
    // lot. The place was read from the top of the given directory: the box's directory became the testcase and the
    // job's path_params the machine, so every box's runs were stored as one machine's, pooled in every table.
    let dir = tempfile::tempdir().unwrap();
    let job = write_ops_job(dir.path());
    let (runs_db, job) = (dir.path().join("runs.db"), job.to_str().unwrap());
    for (root, label) in [("results/box1", "base"), ("results/box2", "new")] {
        let root = dir.path().join(root);
        let args = ["--db", runs_db.to_str().unwrap(), "run", job, "-n", "2", "--label", label, "--monitors", "none"];
        let run = culprit(&[&args[..], &["--result-root", root.to_str().unwrap()]].concat(), dir.path());
        assert!(run.status.success(), "{}", text(&run));
    }
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim().to_string();
    let imported = dir.path().join("imported.db");
    let import = culprit(&["--db", imported.to_str().unwrap(), "import", "results"], dir.path());
    assert!(import.status.success(), "{}", text(&import));
    let listed = culprit(&["--db", imported.to_str().unwrap(), "results", "--json"], dir.path());
    let groups: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap_or_default();
    let groups = groups.as_array().cloned().unwrap_or_default();
    assert_eq!(groups.len(), 2, "{}", text(&listed));
    for group in &groups {
        assert_eq!(group["machine"], hostname.as_str(), "{}", text(&listed));
        assert_eq!(group["testcase"], "command", "{}", text(&listed));
        assert_eq!(group["ok_runs"], 2, "{}", text(&listed));
    }
}

#[test]
fn a_job_of_labels_only_tracked_along_a_branch_says_its_points_are_labels() {
    // Along a branch (`track --repo`, the dashboard's /track with repo=), a job whose runs carry labels only is
    // tracked as labels in the order of their first run, and its chart says so; the text said only "no change point
    // in 1 series along HEAD", as if its points were the branch's commits.
    let dir = tempfile::tempdir().unwrap();
    let db = store_labelled_ops_runs(dir.path());
    let db = db.to_str().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let commit = ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"];
    for args in [&["init", "-q"][..], &commit] {
        assert!(Command::new("git").arg("-C").arg(&repo).args(args).status().unwrap().success());
    }
    let repo = repo.to_str().unwrap();
    let track = culprit(&["--db", db, "track", "--repo", repo, "--metric", "^command\\.ops$"], dir.path());
    assert!(track.status.success(), "{}", text(&track));
    let stdout = String::from_utf8_lossy(&track.stdout);
    let note = "no tested commit on HEAD; its 2 label(s) are tracked in the order of their first run";
    assert!(stdout.contains(note), "{stdout}");
}
