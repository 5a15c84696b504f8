//! End-to-end regressions of the forty-eighth QA pass (QA 47's D10 leftovers): lkp runs without stats.json imported
//! from their raw outputs, lkp's softirqs made counts during the run, and `culprit parse` printing lkp's lines alone.

mod common;

use common::{culprit, stdout};
use std::path::Path;

fn real(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../culprit-parse/tests/data/real").join(path)
}

#[test]
fn qa48_parse_prints_lkp_s_lines_alone_and_names_culprit_s_own_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let input = real("pgbench/tpcb-like-2-clients-3s");
    let out = culprit(dir.path().join("t.db"), &["parse", "pgbench", input.to_str().unwrap()], dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // What lkp-tests' programs/pgbench/parse prints for this PostgreSQL 15 output.
    assert_eq!(stdout(&out), "transactions: 907\nlatency_ms: 6.609\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    for own in ["tps: 302.595078", "failed_transactions: 0", "initial_connection_time_ms: 11.319"] {
        assert!(stderr.contains(own) && stderr.contains("Culprit's own keys"), "{own}: {stderr}");
    }
}
