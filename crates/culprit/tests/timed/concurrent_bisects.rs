//! Two identical `culprit bisect` commands started together: the second is refused while the first probes, before
//! any session exists, instead of bisecting the same range beside it.

use crate::common;

use crate::common::{culprit, quiet_machine, refused, slowdown, spawn_culprit};
use std::process::Child;
use std::time::Duration;

/// Whether `child` is still running two seconds on (past its start lock); it is stopped then, to keep the test
/// short. Its standard error, for the failure message.
fn still_running_after_its_start(mut child: Child) -> (bool, String) {
    std::thread::sleep(Duration::from_secs(2));
    let running = child.try_wait().unwrap().is_none();
    child.kill().ok();
    let output = child.wait_with_output().unwrap();
    (running, String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn an_identical_bisect_started_while_the_first_probes_is_refused_and_a_different_one_is_not() {
    let _machine = quiet_machine();
    let (dir, repo, shas, db) = slowdown(6, 4, 2);
    // Each run sleeps, so the first command is still probing good and bad (no session stored yet) when the second
    // one starts.
    let repo_arg = repo.to_str().unwrap();
    let bisect = |good: &str| -> Vec<String> {
        [
            "bisect", "--repo", repo_arg, "--good", good, "--bad", "HEAD", "--run", "sleep 0.5; ./bench", "--build",
            "make -s", "--metric", "command.elapsed_time",
        ]
        .map(str::to_string)
        .to_vec()
    };
    let start = |good: &str| {
        let args = bisect(good);
        spawn_culprit(&db, &args.iter().map(String::as_str).collect::<Vec<_>>(), dir.path())
    };
    let mut first = start(&shas[0]);
    // The first command holds its start lock from before its first build.
    let culprit_dir = repo.join(".git/culprit");
    common::wait_until("the first bisect took no start lock", || {
        std::fs::read_dir(&culprit_dir).is_ok_and(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                // Beside it, while a build runs, lies the build's step record (`start-<hash>.step`).
                .any(|n| n.starts_with("start-") && n.ends_with(".lock"))
        })
    });

    let args = bisect(&shas[0]);
    let second = culprit(&db, &args.iter().map(String::as_str).collect::<Vec<_>>(), dir.path());
    let message = refused(&second);
    assert!(message.contains("the same bisect"), "{message}");
    assert!(message.contains("culprit bisect list"), "{message}");

    // A bisect of another range is not the same bisect: it gets past the start lock.
    let (running, stderr) = still_running_after_its_start(start(&shas[2]));
    assert!(running, "a bisect of another range stopped: {stderr}");

    // Once the first command is gone (killed here, as kill -9 would), its lock goes with it and the same bisect
    // starts.
    first.kill().unwrap();
    first.wait().unwrap();
    let (running, stderr) = still_running_after_its_start(start(&shas[0]));
    assert!(running, "the same bisect was refused after the first ended: {stderr}");
}
