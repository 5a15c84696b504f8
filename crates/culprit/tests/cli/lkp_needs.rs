//! lkp's `need_memory`, `need_cpu` and `need_node` (95 of lkp's job files give `need_memory`): lkp's scheduler runs
//! a job only where they are met, and `culprit run` runs it here whatever they say, so it names those this machine
//! lacks, with what it has, and says nothing of those it meets.

use crate::common;

#[test]
fn culprit_run_names_the_needs_this_machine_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let job = "suite: x\nneed_memory: 100T\nneed_cpu: 100000\nneed_node: 1\ncommand:\n  cmd: 'true'\n";
    common::write(dir.path(), "needs.yaml", job);
    let run = |file: &str, label: &str| {
        common::culprit("r.db", &["run", file, "-n", "1", "--label", label, "--monitors", "none"], dir.path())
    };
    let out = run("needs.yaml", "a");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let note = stderr.lines().find(|l| l.starts_with("culprit: the job asks for "));
    let note = note.unwrap_or_else(|| panic!("{stderr}"));
    assert!(note.contains("need_cpu: 100000 (here ") && note.contains("need_memory: 100T (here "), "{note}");
    assert!(note.contains("lkp's scheduler would not run it on this machine"), "{note}");
    // Every machine has a NUMA node, so one is no need to speak of.
    assert!(!note.contains("need_node"), "{note}");
    // A job that asks for what the machine has runs without a word of it.
    common::write(dir.path(), "met.yaml", "suite: x\nneed_memory: 1M\nneed_cpu: 1\ncommand:\n  cmd: 'true'\n");
    let out = run("met.yaml", "b");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success() && !stderr.contains("the job asks for"), "{stderr}");
}
