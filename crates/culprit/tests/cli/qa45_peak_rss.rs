//! QA 45: a run's peak RSS (`command.max_resident_set_size`, `time.maximum_resident_set_size`) is its benchmark's,
//! not culprit's memory copied into the child at fork, which read 10 MB for `true` and grew with every run.

use crate::common::{culprit, write};
use std::path::Path;

/// The stored `command.max_resident_set_size` of run `id`, in KiB.
fn peak_rss(db: &Path, cwd: &Path, id: usize) -> f64 {
    let out = culprit(db, &["results", "--run", &id.to_string()], cwd);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let line = text.lines().find(|l| l.trim_start().starts_with("command.max_resident_set_size:"));
    line.and_then(|l| l.rsplit(' ').next()?.parse().ok()).unwrap_or_else(|| panic!("run {id}: {text}"))
}

#[test]
fn the_peak_rss_of_a_run_is_the_benchmark_s_own() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    // `true` holds about 1 MB; dd holds its 40 MiB buffer, which it fills from /dev/zero.
    let small = write(dir.path(), "small.yaml", "suite: small\ncommand:\n  cmd: \"true\"\n");
    let large =
        write(dir.path(), "large.yaml", "suite: large\ncommand:\n  cmd: dd if=/dev/zero of=/dev/null bs=40M count=1\n");
    for job in [&small, &large] {
        let args = ["run", job.to_str().unwrap(), "-n", "4", "--label", "a", "--monitors", "none"];
        let out = culprit(&db, &args, dir.path());
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    // Culprit itself holds 10 MB and more by the time it runs a benchmark, which every run read before.
    for id in 1..=4 {
        let kib = peak_rss(&db, dir.path(), id);
        assert!(kib > 0.0 && kib < 4096.0, "run {id} of `true`: {kib} KiB");
    }
    for id in 5..=8 {
        let kib = peak_rss(&db, dir.path(), id);
        assert!((40960.0..40960.0 + 4096.0).contains(&kib), "run {id} of dd's 40 MiB buffer: {kib} KiB");
    }
}
