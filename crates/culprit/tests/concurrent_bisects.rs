//! Two identical `culprit bisect` commands started together: the second is refused while the first probes, before
//! any session exists, instead of bisecting the same range beside it.

mod common;

use common::{culprit, make_slowdown_repo, quiet_machine, refused};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn an_identical_bisect_started_while_the_first_probes_is_refused_and_a_different_one_is_not() {
    let _machine = quiet_machine();
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = make_slowdown_repo(dir.path(), 6, 4, 2, 30);
    let db = dir.path().join("b.db");
    // Each run sleeps, so the first command is still probing good and bad (no session stored yet) when the second
    // one starts.
    let bisect = |good: &str| {
        let repo = repo.to_str().unwrap().to_string();
        [
            "bisect", "--repo", &repo, "--good", good, "--bad", "HEAD", "--run", "sleep 0.5; ./bench", "--build",
            "make -s", "--metric", "command.elapsed_time",
        ]
        .map(str::to_string)
    };
    let mut first = Command::new(env!("CARGO_BIN_EXE_culprit"))
        .current_dir(dir.path())
        .arg("--db")
        .arg(&db)
        .args(bisect(&shas[0]))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The first command holds its start lock from before its first build.
    let culprit_dir = repo.join(".git/culprit");
    let begun = Instant::now();
    let start_lock = loop {
        let found = std::fs::read_dir(&culprit_dir).ok().and_then(|entries| {
            entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).find(|n| n.starts_with("start-"))
        });
        if let Some(name) = found {
            break name;
        }
        assert!(begun.elapsed() < Duration::from_secs(60), "the first bisect took no start lock");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(start_lock.ends_with(".lock"), "{start_lock}");

    let args = bisect(&shas[0]);
    let second = culprit(&db, &args.iter().map(String::as_str).collect::<Vec<_>>(), dir.path());
    let message = refused(&second);
    assert!(message.contains("the same bisect"), "{message}");
    assert!(message.contains("culprit bisect list"), "{message}");

    // A bisect of another range is not the same bisect: it gets past the start lock (and is stopped here, while
    // probing, to keep the test short).
    let other = bisect(&shas[2]);
    let mut different = Command::new(env!("CARGO_BIN_EXE_culprit"))
        .current_dir(dir.path())
        .arg("--db")
        .arg(&db)
        .args(&other)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let still_running = different.try_wait().unwrap().is_none();
    different.kill().ok();
    let output = different.wait_with_output().unwrap();
    assert!(still_running, "a bisect of another range stopped: {}", String::from_utf8_lossy(&output.stderr));

    // Once the first command is gone (killed here, as kill -9 would), its lock goes with it and the same bisect
    // starts.
    first.kill().unwrap();
    first.wait().unwrap();
    let mut again = Command::new(env!("CARGO_BIN_EXE_culprit"))
        .current_dir(dir.path())
        .arg("--db")
        .arg(&db)
        .args(bisect(&shas[0]))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let running = again.try_wait().unwrap().is_none();
    again.kill().ok();
    let output = again.wait_with_output().unwrap();
    assert!(running, "the same bisect was refused after the first ended: {}", String::from_utf8_lossy(&output.stderr));
}
