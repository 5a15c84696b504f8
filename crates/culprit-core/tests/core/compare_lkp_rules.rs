//! Golden test of `--lkp-rules`: every case of lkp-tests' `spec/fixtures/stats_changed_stats/` (copied to
//! `tests/data/compare/`) must report exactly the expected stats with the expected fields (floats within
//! ±0.05, `mean_a`/`mean_b` exact, `ttl` ignored), as lkp's own `__get_changed_stats` does.

use culprit_core::compare::lkp_rules::{changed_stats, LkpOptions, Matrix};
use serde_yaml::Value;
use std::path::PathBuf;

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/compare")
}

fn number(v: &Value) -> Option<f64> {
    v.as_f64().or_else(|| v.as_i64().map(|i| i as f64)).or_else(|| v.as_u64().map(|u| u as f64))
}

fn matrix(v: &Value) -> Matrix {
    let mut m = Matrix::new();
    if let Some(map) = v.as_mapping() {
        for (k, vals) in map {
            let name = k.as_str().unwrap_or_default().to_string();
            let xs = vals.as_sequence().map(|s| s.iter().filter_map(number).collect()).unwrap_or_default();
            m.push((name, xs));
        }
    }
    m
}

fn options(v: &Value) -> LkpOptions {
    let get = |k: &str| v.get(k);
    let flag = |k: &str| get(k).and_then(Value::as_bool).unwrap_or(false);
    let num = |k: &str| get(k).and_then(number);
    LkpOptions {
        more: flag("more"),
        gap: num("gap"),
        variance: num("variance"),
        distance: num("distance"),
        regression_only: flag("regression-only"),
        all_critical: flag("all-critical"),
        perf_profile: num("perf-profile"),
        whole: flag("whole"),
        perf: flag("perf"),
        ..LkpOptions::default()
    }
}

/// Compares one expected field with what we produced; returns a description of the mismatch, if any.
fn field_mismatch(key: &str, want: &Value, got: Option<&serde_json::Value>) -> Option<String> {
    let Some(got) = got else { return Some(format!("{key}: missing, want {want:?}")) };
    let tol = if key == "mean_a" || key == "mean_b" { 0.0 } else { 0.05 };
    match want {
        Value::Number(_) => {
            let w = number(want)?;
            match got.as_f64() {
                Some(g) if (g - w).abs() <= tol => None,
                _ => Some(format!("{key}: got {got}, want {w}")),
            }
        }
        Value::String(s) => (got.as_str() != Some(s.as_str())).then(|| format!("{key}: got {got}, want {s:?}")),
        Value::Bool(b) => (got.as_bool() != Some(*b)).then(|| format!("{key}: got {got}, want {b}")),
        Value::Sequence(items) => {
            let g = got.as_array().cloned().unwrap_or_default();
            let ok = g.len() == items.len()
                && items.iter().zip(g.iter()).all(|(w, g)| match (number(w), g.as_f64()) {
                    (Some(w), Some(g)) => (w - g).abs() <= tol,
                    _ => false,
                });
            (!ok).then(|| format!("{key}: got {got}, want {items:?}"))
        }
        other => Some(format!("{key}: unsupported expected value {other:?}")),
    }
}

#[test]
fn every_lkp_changed_stats_case_passes() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .expect("tests/data/compare exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 7, "the 7 lkp cases are copied into tests/data/compare");
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        let text = std::fs::read_to_string(path).expect("readable fixture");
        let doc: Value = serde_yaml::from_str(&text).expect("valid YAML fixture");
        let a = matrix(&doc["matrix_a"]);
        let b = matrix(&doc["matrix_b"]);
        let opts = options(&doc["options"]);
        let got = changed_stats(&a, &b, false, &opts);
        let expected = doc["expected"].as_mapping().cloned().unwrap_or_default();
        let got_names: Vec<&str> = got.iter().map(|c| c.stat.as_str()).collect();
        let want_names: Vec<&str> = expected.keys().filter_map(Value::as_str).collect();
        if got_names != want_names {
            failures.push(format!("{name}: reported {got_names:?}, want {want_names:?}"));
            continue;
        }
        for change in &got {
            let json = serde_json::to_value(change).expect("serializable");
            let want = &expected[change.stat.as_str()];
            let Some(fields) = want.as_mapping() else { continue };
            for (k, v) in fields {
                let key = k.as_str().unwrap_or_default();
                if key == "ttl" {
                    continue;
                }
                if let Some(m) = field_mismatch(key, v, json.get(key)) {
                    failures.push(format!("{name}: {}: {m}", change.stat));
                }
            }
        }
    }
    assert!(failures.is_empty(), "lkp-rules mismatches:\n{}", failures.join("\n"));
}
