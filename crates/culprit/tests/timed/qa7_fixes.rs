//! End-to-end regressions of the seventh QA pass: build and deploy timeouts, profiling runs, the place of an
//! inconclusive change, and the locks of bisect sessions, used as a kernel developer would.

use crate::common;

use crate::common::{culprit, lock_files, make_slowdown_repo, quiet_machine, slowdown, write_script};
use std::process::Command;

#[test]
fn qa_33_a_session_resumed_after_kill_9_leaves_no_lock_file_when_done() {
    // A bisect killed with `kill -9` while a build hung left its start lock's file (start-HASH.lock) beside the
    // session's; `bisect --resume ID` finished the session and removed the session's lock file but not the start
    // lock's, which stayed in the repository for good, as if a bisect had stopped before it was done.
    let _machine = quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_slowdown_repo(dir.path(), 12, 8, 3, 30);
    let (hang, pid) = (dir.path().join("HANG"), dir.path().join("build.pid"));
    std::fs::write(&hang, "").unwrap();
    let build = dir.path().join("build.sh");
    let body = format!(
        "#!/bin/sh\nif [ -e {hang} ] && [ \"$CULPRIT_COMMIT\" != {good} ] && [ \"$CULPRIT_COMMIT\" != {bad} ]; then\n  \
         echo $$ > {pid}.tmp && mv {pid}.tmp {pid}\n  exec sleep 1000\nfi\nexec make -s\n",
        hang = hang.display(),
        good = shas[0],
        bad = shas[11],
        pid = pid.display()
    );
    write_script(&build, &body);
    let db = dir.path().join("b.db");
    let args = ["bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", "HEAD", "--run", "./bench"];
    let args = [&args[..], &["--build", build.to_str().unwrap(), "--metric", "command.user_time"]].concat();
    let mut first = Command::new(env!("CARGO_BIN_EXE_culprit"))
        .current_dir(dir.path())
        .arg("--db")
        .arg(&db)
        .args(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let begun = std::time::Instant::now();
    while !pid.exists() {
        assert!(begun.elapsed().as_secs() < 300, "no build of a commit between good and bad started");
        assert!(first.try_wait().unwrap().is_none(), "the bisect ended before it built a commit between");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    first.kill().unwrap();
    first.wait().unwrap();
    let hung = std::fs::read_to_string(&pid).unwrap();
    Command::new("kill").arg(hung.trim()).status().unwrap();
    assert_eq!(lock_files(&repo).len(), 2, "the killed bisect's start and session locks: {:?}", lock_files(&repo));

    std::fs::remove_file(&hang).unwrap();
    let out = culprit(&db, &["bisect", "--resume", "1"], dir.path());
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(lock_files(&repo), Vec::<String>::new(), "a finished session leaves no lock file");
}

#[test]
fn qa_33_track_follow_measures_no_commit_alone_in_its_block() {
    // `track --follow main --every 4` of 16 commits measured the grid (commits 1, 5, 9 and 13) in a block of four,
    // one run of each in turn, and then REF alone: its four runs in a row, one moment's machine state as its level,
    // what the blocks are there to prevent. Five commits are now measured as blocks of three and two.
    let _machine = quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_slowdown_repo(dir.path(), 16, 10, 4, 30);
    let job = dir.path().join("job.yaml");
    std::fs::write(&job, "suite: bench\ntestcase: bench\ncommand:\n  cmd: ./bench\nvmstat:\n").unwrap();
    let db = dir.path().join("t.db");
    let args = ["track", "--follow", "main", "--repo", repo.to_str().unwrap(), "--job", job.to_str().unwrap()];
    let args = [&args[..], &["--every", "4", "--build", "make -s", "--reports", dir.path().to_str().unwrap()]].concat();
    let out = culprit(&db, &args, dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let mut order = Vec::new();
    for id in 1.. {
        let out = culprit(&db, &["results", "--run", &id.to_string(), "--json"], dir.path());
        if !out.status.success() {
            break;
        }
        let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        order.push(run["revision"]["sha"].as_str().unwrap().to_string());
    }
    let grid = [&shas[0], &shas[4], &shas[8], &shas[12], &shas[15]];
    let first: Vec<&String> = order.iter().take(20).collect();
    for sha in grid {
        assert_eq!(first.iter().filter(|s| **s == sha).count(), 4, "4 runs of each grid commit first: {order:?}");
    }
    for (at, window) in first.windows(2).enumerate() {
        assert_ne!(window[0], window[1], "run {} and the next measure the same commit: {first:?}", at + 1);
    }
}

#[test]
fn qa_33_results_tell_profiling_runs_from_plain_ones() {
    // After `bisect --profile 3`, `culprit results` listed the culprit and its parent with 8 ok runs while compare
    // and the report's table read 5 a side (the plain ones), and `results --run ID` showed a profiling run, its
    // elapsed time doubled by perf, as any other. The listing now counts the profiling runs and a run says its kind.
    let _machine = quiet_machine();
    let (dir, repo, shas, db) = slowdown(8, 5, 3);
    let args = ["bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", "HEAD", "--run", "./bench"];
    let args = [&args[..], &["--build", "make -s", "--metric", "command.user_time", "--profile", "2"]].concat();
    let out = culprit(&db, &args, dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let listing = common::stdout(&culprit(&db, &["results"], dir.path()));
    let header: Vec<&str> = listing.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["job", "revision", "machine", "ok", "failed", "profiling", "last", "run"], "{listing}");
    let profiled = |sha: &str| {
        let line = listing.lines().find(|line| line.contains(&sha[..12])).unwrap_or_else(|| panic!("{listing}"));
        line.split_whitespace().nth(5).unwrap().to_string()
    };
    assert_eq!(profiled(&shas[4]), "2", "the culprit's profiling runs: {listing}");
    assert_eq!(profiled(&shas[3]), "2", "its parent's: {listing}");
    assert_eq!(profiled(&shas[0]), "0", "good has none: {listing}");

    let summary = common::stdout(&culprit(&db, &["results", "--json"], dir.path()));
    let groups: serde_json::Value = serde_json::from_str(&summary).unwrap();
    // Run ids count every stored run, the failed ones too (the commit that does not build, when the bisect tried it).
    let count = |g: &serde_json::Value| g["ok_runs"].as_u64().unwrap() + g["failed_runs"].as_u64().unwrap();
    let runs: u64 = groups.as_array().unwrap().iter().map(count).sum();
    let last_run = common::stdout(&culprit(&db, &["results", "--run", &runs.to_string(), "--json"], dir.path()));
    let run: serde_json::Value = serde_json::from_str(&last_run).unwrap();
    assert_eq!(run["kind"], "profiling", "the last run stored is a profiling run");
    let text = common::stdout(&culprit(&db, &["results", "--run", &runs.to_string()], dir.path()));
    assert!(text.contains("kind: profiling run (`culprit bisect --profile`)"), "{text}");
    let first = common::stdout(&culprit(&db, &["results", "--run", "1"], dir.path()));
    assert!(!first.contains("kind:"), "a plain run says nothing of its kind: {first}");
}
