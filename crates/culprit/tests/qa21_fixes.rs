//! Regression tests for the defects QA 21 found acting out the mailing-list threads, through the real binary: a
//! change late in a tracked history that went unseen.

mod common;

#[test]
fn track_finds_a_regression_and_its_fix_six_commits_before_the_end_of_a_series() {
    // fs_mark's files/s, one run a commit with 3% noise: 220k, 180k from c12 (the regression), 247k from c24 (the
    // fix), as in the thread's 3.11+xfsdev / 3.12-git / 3.12-git-fix table. `track --series` said "no change point":
    // the fix's six commits were clipped towards the running median of the ten commits before, the regressed level.
    let files_per_sec = [
        228502.0, 229566.3, 220437.8, 214954.0, 212791.7, 220206.8, 213254.1, 210516.9, 221315.5, 220880.3, 223606.7,
        213967.8, 180027.0, 179650.4, 171868.5, 182905.2, 181731.8, 192901.2, 181096.0, 179218.6, 186656.9, 181073.5,
        184908.8, 178026.1, 248616.7, 254590.0, 252159.2, 247952.0, 238980.1, 250299.1,
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("commit,fsmark.files_per_sec\n");
    for (i, v) in files_per_sec.iter().enumerate() {
        csv.push_str(&format!("c{i:02},{v}\n"));
    }
    common::write(dir.path(), "series.csv", &csv);
    let out = common::culprit("t.db", &["track", "--series", "series.csv"], dir.path());
    let said = common::stdout(&out);
    assert!(!said.contains("no change point"), "{said}");
    let regression = said.lines().find(|l| l.starts_with("regression")).unwrap_or_else(|| panic!("{said}"));
    assert!(regression.contains("between c11 (last before) and c12 (first after)"), "{said}");
    let improvement = said.lines().find(|l| l.starts_with("improvement")).unwrap_or_else(|| panic!("{said}"));
    assert!(improvement.contains("between c23 (last before) and c24 (first after)"), "{said}");
}
