//! Golden tests of the ncompare table against the robot's real mails: seed 001 (fio, three columns: base, bad
//! commit, test patch) and seed 003 (a perf-profile row), copied to `tests/data/compare/seed00*_table.txt`.
//!
//! The samples are synthetic, built to have exactly the means and relative stddevs the mails show, so the
//! rendered rows must match the mails' rows token for token (mail clients re-wrapped the lines and replaced some
//! spaces, so spacing is checked separately against lkp's printf layout).

use culprit_core::compare::render::{headlines, render_table, RenderOptions};
use culprit_core::compare::{compare, Column, CompareOptions, Comparison, Verdict};
use culprit_core::compare::direction::is_kpi;
use std::path::PathBuf;

const BASE: &str = "361a2a229fa31ab7f2b236b5946e434964d00762";
const BAD: &str = "8cc621d2f45ddd3dc664024a647ee7adf48d79a5";
const PATCH: &str = "7bafb1c4e72a5e8d40cd0681b80b1ffeb31a064c";

fn read_data(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/compare").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).replace('\u{a0}', " ")
}

/// Six samples with exactly `mean` and population stddev `rel_pct`% of it (lkp's `%stddev` divides by n): mean ± a,
/// alternating, where a = sd. For integral means the deviation is rounded to an integer so the mean stays exact
/// (lkp truncates such means to `%d`).
fn samples(mean: f64, rel_pct: f64) -> Vec<f64> {
    let sd = mean.abs() * rel_pct / 100.0;
    let mut a = sd;
    if mean.fract() == 0.0 && mean.abs() >= 1000.0 {
        a = a.round();
    }
    (0..6).map(|i| if i % 2 == 0 { mean + a } else { mean - a }).collect()
}

/// Seed 001's rows: (metric, [(mean, relative stddev %)] for base, bad, patch). Cells the mail shows without
/// `±` get 1% (below lkp's 2% cut-off); `± N%` cells get N + 0.5%. Means that print as 0.27 in two columns get
/// slightly different values because the mail shows a change of -0.0 between them.
fn seed001_rows() -> Vec<(&'static str, [(f64, f64); 3])> {
    vec![
        ("fio.latency_1000ms%", [(0.01, 1.0), (0.0, 0.0), (0.01, 1.0)]),
        ("fio.latency_10ms%", [(0.274, 5.5), (0.24, 7.5), (0.271, 5.5)]),
        ("fio.latency_2000ms%", [(0.01, 1.0), (0.0, 0.0), (0.01, 1.0)]),
        ("fio.latency_20ms%", [(0.33, 8.5), (0.44, 7.5), (0.36, 9.5)]),
        ("fio.latency_500ms%", [(0.01, 1.0), (0.0, 0.0), (0.01, 1.0)]),
        ("fio.latency_50ms%", [(13.99, 1.0), (19.96, 1.0), (14.52, 4.5)]),
        ("fio.latency_750ms%", [(0.01, 1.0), (0.0, 0.0), (0.01, 1.0)]),
        ("fio.latency_750us%", [(3.40, 44.5), (1.17, 46.5), (2.59, 35.5)]),
        ("fio.workload", [(62087973.0, 1.0), (48559860.0, 1.0), (60364160.0, 3.5)]),
        ("fio.write_bw_MBps", [(1212.0, 1.0), (948.29, 1.0), (1177.0, 3.5)]),
        ("fio.write_clat_95%_us", [(33073834.0, 1.0), (29229056.0, 1.0), (32636928.0, 4.5)]),
        ("fio.write_clat_99%_us", [(34865152.0, 1.0), (31675733.0, 1.0), (34760294.0, 1.0)]),
        ("fio.write_clat_mean_us", [(4794125.0, 1.0), (6129631.0, 1.0), (4936772.0, 3.5)]),
        ("fio.write_clat_stddev", [(13179671.0, 6.5), (11842274.0, 1.0), (12665456.0, 5.5)]),
        ("fio.write_iops", [(310403.0, 1.0), (242761.0, 1.0), (301531.0, 3.5)]),
        ("fio.write_slat_mean_us", [(152653.0, 1.0), (196759.0, 1.0), (157562.0, 3.5)]),
        ("fio.write_slat_stddev", [(2139749.0, 1.0), (2338598.0, 1.0), (2179116.0, 1.0)]),
    ]
}

fn seed001_comparison() -> Comparison {
    let mut cols = vec![Column::new(BASE), Column::new(BAD), Column::new(PATCH)];
    for (metric, cells) in seed001_rows() {
        for (col, (mean, rel)) in cols.iter_mut().zip(cells) {
            col.metrics.insert(metric.to_string(), samples(mean, rel));
        }
    }
    let keys = "tbox_group/testcase/rootfs/kconfig/compiler/disk/fs/runtime/nr_task/time_based/rw/bs/ioengine/test_size/cpufreq_governor/ucode";
    let values = "lkp-csl-2sp6/fio-basic/debian-10.4-x86_64-20200603.cgz/x86_64-rhel-8.3/gcc-9/2pmem/ext4/200s/50%/tb/randwrite/4k/libaio/200G/performance/0x5003006";
    Comparison {
        axes: keys.split('/').zip(values.split('/')).map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        compare_axis: "commit".to_string(),
        columns: cols,
    }
}

/// Splits the text after the `\  |  \` header line into rows: tokens up to and including a metric name.
fn rows_of(text: &str, metric_prefix: &str) -> Vec<Vec<String>> {
    let start = text.lines().position(|l| l.trim_start_matches('>').trim_start().starts_with('\\')).map(|i| i + 1).unwrap_or(0);
    let mut rows = Vec::new();
    let mut current = Vec::new();
    for line in text.lines().skip(start) {
        // Culprit's footnotes (`# ...`) follow the rows; the mail has none.
        if line.starts_with('#') {
            break;
        }
        // The mail elides rows with a "....." line.
        for token in line.trim_start_matches('>').split_whitespace().filter(|t| !t.chars().all(|c| c == '.')) {
            current.push(token.to_string());
            if token.starts_with(metric_prefix) {
                rows.push(std::mem::take(&mut current));
            }
        }
    }
    rows
}

#[test]
fn seed001_rows_match_the_robot_mail_token_for_token() {
    let result = compare(&seed001_comparison(), &CompareOptions::default()).expect("comparison runs");
    let table = render_table(&result, RenderOptions { all: true });
    let ours = rows_of(&table, "fio.");
    let mail = rows_of(&read_data("seed001_table.txt"), "fio.");
    assert_eq!(mail.len(), 17, "all 17 rows of the mail parsed");
    assert_eq!(ours, mail, "\n{table}");
}

#[test]
fn seed001_header_matches_the_mail_and_lkp_layout() {
    let result = compare(&seed001_comparison(), &CompareOptions::default()).expect("comparison runs");
    let table = render_table(&result, RenderOptions { all: true });
    let lines: Vec<&str> = table.lines().collect();
    // Exact layout, from lkp's printf formats: 89 '=', axes, `commit: ` list, 16/27-wide labels and dashes.
    assert_eq!(lines[0], "=".repeat(89));
    assert_eq!(lines[4], "commit: ");
    assert_eq!(lines[5], format!("  {BASE}"));
    assert_eq!(lines[9], "361a2a229fa31ab7 8cc621d2f45ddd3dc664024a647 7bafb1c4e72a5e8d40cd0681b80 ");
    assert_eq!(lines[10], format!("{} {} {} ", "-".repeat(16), "-".repeat(27), "-".repeat(27)));
    assert_eq!(lines[11], "         %stddev     %change         %stddev     %change         %stddev");
    assert_eq!(lines[12], "             \\          |                \\          |                \\  ");
    // A measurement row: mean `%10d`, 6 blanks (stddev <= 2%), change `%+10.1f%% `, ..., `  metric`.
    let iops = lines.iter().find(|l| l.ends_with("fio.write_iops")).copied().unwrap_or("");
    assert_eq!(iops, "    310403           -21.8%     242761            -2.9%     301531 ±  3%  fio.write_iops");
    let pct = lines.iter().find(|l| l.ends_with("fio.latency_50ms%")).copied().unwrap_or("");
    assert_eq!(pct, "     13.99            +6.0       19.96            +0.5       14.52 ±  4%  fio.latency_50ms%");
    // The same header lines, token for token, as the mail shows them.
    let mail = read_data("seed001_table.txt");
    let mail_lines: Vec<&str> = mail.lines().collect();
    for (i, (ours, theirs)) in lines.iter().zip(mail_lines.iter()).take(13).enumerate() {
        let a: Vec<&str> = ours.split_whitespace().collect();
        let b: Vec<&str> = theirs.split_whitespace().collect();
        // The mail's author annotated the patch commit with "(the test patch)".
        let b = if b.len() > 1 && b[1].starts_with('(') { b[..1].to_vec() } else { b };
        assert_eq!(a, b, "header line {i}");
    }
}

#[test]
fn seed001_verdicts_and_headlines() {
    let result = compare(&seed001_comparison(), &CompareOptions::default()).expect("comparison runs");
    let verdict = |metric: &str, column: usize| {
        result.rows.iter().find(|r| r.metric == metric).and_then(|r| r.changes.get(column - 1)).map(|c| c.verdict)
    };
    assert_eq!(verdict("fio.write_iops", 1), Some(Verdict::Regression));
    assert_eq!(verdict("fio.write_bw_MBps", 1), Some(Verdict::Regression));
    assert_eq!(verdict("fio.write_clat_mean_us", 1), Some(Verdict::Regression));
    assert_eq!(verdict("fio.latency_50ms%", 1), Some(Verdict::Changed));
    // The patch's -2.9% with 3.5% noise on 6 runs is not distinguishable from no change.
    assert_eq!(verdict("fio.write_iops", 2), Some(Verdict::Unchanged));
    let lines = headlines(&result);
    let iops = lines.iter().find(|l| l.starts_with("fio.write_iops ")).cloned().unwrap_or_default();
    assert!(iops.starts_with("fio.write_iops -21.8% regression on 8cc621d2f4 (6 vs 6 runs, p="), "{iops}");
    // QA 54: the KPIs' lines lead, whatever their names sort after.
    let first_other = lines.iter().position(|l| !is_kpi(l.split(' ').next().unwrap_or_default()));
    let last_kpi = lines.iter().rposition(|l| is_kpi(l.split(' ').next().unwrap_or_default()));
    assert!(last_kpi.is_some() && first_other.is_some(), "{lines:?}");
    assert!(last_kpi < first_other, "{lines:?}");
    // A change of a metric with no known good direction has a headline that gives its size and calls it a change,
    // neither a regression nor an improvement.
    let latency: Vec<&String> = lines.iter().filter(|l| l.starts_with("fio.latency_50ms% ")).collect();
    assert_eq!(latency.len(), 1, "{lines:?}");
    assert!(latency[0].starts_with("fio.latency_50ms% +6.0 change on 8cc621d2f4 (6 vs 6 runs, p="), "{lines:?}");
}

#[test]
fn lkp_rules_headlines_name_the_rules_not_a_p_value() {
    let options = CompareOptions {
        rule: culprit_core::compare::DecisionRule::Lkp(Default::default()),
        ..CompareOptions::default()
    };
    let result = compare(&seed001_comparison(), &options).expect("comparison runs");
    let lines = headlines(&result);
    let iops = lines.iter().find(|l| l.starts_with("fio.write_iops ")).cloned().unwrap_or_default();
    assert!(iops.contains("regression") && iops.ends_with("by lkp's rules)"), "{lines:?}");
    assert!(lines.iter().all(|l| !l.contains("p=")), "{lines:?}");
}

#[test]
fn seed003_perf_profile_row_matches_the_mail() {
    let metric = "perf-profile.calltrace.cycles-pp.native_queued_spin_lock_slowpath._raw_spin_lock.xlog_cil_insert_items.xlog_cil_commit.__xfs_trans_commit";
    let base = Column::new("df7a4a2134b0a201f3bd8d5b6d1de0d3c7dfb8b1").with_metric(metric, samples(25.64, 8.5));
    let other = Column::new("016a23388cdcb2740deb1379dc408f21c84efb11").with_metric(metric, vec![0.0; 6]);
    let result = compare(&Comparison::new(vec![base, other]), &CompareOptions::default()).expect("comparison runs");
    let table = render_table(&result, RenderOptions::default());
    let ours = rows_of(&table, "perf-profile.");
    let mail = rows_of(&read_data("seed003_table.txt"), "perf-profile.");
    assert_eq!(mail.len(), 1);
    assert_eq!(ours, mail, "\n{table}");
    // The header of a two-column table, as the mail shows it.
    assert!(table.contains("df7a4a2134b0a201 016a23388cdcb2740deb1379dc4 \n"), "\n{table}");
    let row = result.rows.first().and_then(|r| r.changes.first()).map(|c| (c.absolute, c.verdict));
    assert_eq!(row, Some((true, Verdict::Changed)));
}
