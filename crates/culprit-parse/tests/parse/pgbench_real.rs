//! Golden and robustness tests of the pgbench parser on outputs recorded from real PostgreSQL 15 runs on this
//! machine (`tests/data/real/pgbench/`, whose README records the commands), and on bad input: a killed run, a run
//! without a server, every prefix of every real output, and random bytes.

use culprit_parse::{lookup, ParseError, ParseInput, Parser};
use std::fs;
use std::path::{Path, PathBuf};

fn case_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/real/pgbench")
}

fn parser() -> &'static dyn Parser {
    lookup("pgbench").expect("pgbench parser is registered")
}

fn read(path: &Path) -> String {
    String::from_utf8_lossy(&fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).into_owned()
}

fn render(text: &str) -> Result<String, ParseError> {
    parser().parse(&ParseInput::text(text)).map(|o| o.render())
}

/// Every recorded output that has an expected text, as (raw path, expected text).
fn good_cases() -> Vec<(PathBuf, String)> {
    let mut cases: Vec<(PathBuf, String)> = fs::read_dir(case_dir())
        .expect("pgbench case directory")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "expected"))
        .map(|p| (p.with_extension(""), read(&p)))
        .collect();
    cases.sort();
    cases
}

#[test]
fn real_outputs_parse_to_their_expected_text() {
    let cases = good_cases();
    assert_eq!(cases.len(), 5, "expected five recorded good cases, found {cases:?}");
    for (raw, expected) in cases {
        let got = render(&read(&raw));
        assert_eq!(got.as_deref(), Ok(expected.as_str()), "{}", raw.display());
    }
}

#[test]
fn real_outputs_give_tps_and_latency_metrics_matching_the_raw_numbers() {
    let text = read(&case_dir().join("tpcb-like-2-clients-3s"));
    let metrics = parser().parse(&ParseInput::text(&text)).expect("parses").metrics("pgbench");
    assert_eq!(metrics.get("pgbench.tps"), Some(&302.595078));
    assert_eq!(metrics.get("pgbench.latency_ms"), Some(&6.609));
    assert_eq!(metrics.get("pgbench.transactions"), Some(&907.0));
    assert_eq!(metrics.get("pgbench.failed_transactions"), Some(&0.0));
    // pgbench's own arithmetic: latency = clients / tps (2 / 302.595078 s = 6.609 ms).
    let implied_ms: f64 = 2.0 / 302.595078 * 1000.0;
    assert!((implied_ms - 6.609).abs() < 0.001, "{implied_ms}");
}

#[test]
fn select_only_is_much_faster_than_tpcb_like() {
    // A sanity check of the recordings themselves: read-only transactions need no WAL flush.
    let tps = |case: &str| {
        let text = read(&case_dir().join(case));
        parser().parse(&ParseInput::text(&text)).expect("parses").metrics("pgbench")["pgbench.tps"]
    };
    assert!(tps("select-only-2-clients-3s") > 10.0 * tps("tpcb-like-2-clients-3s"));
}

#[test]
fn killed_run_is_truncated_and_connection_failure_has_no_results() {
    match render(&read(&case_dir().join("tpcb-like-killed"))) {
        Err(ParseError::Truncated { program: "pgbench", detail }) => assert!(detail.contains("tps"), "{detail}"),
        other => panic!("killed run: {other:?}"),
    }
    match render(&read(&case_dir().join("no-server"))) {
        Err(ParseError::NoResults { program: "pgbench", hint }) => assert!(hint.contains("tps ="), "{hint}"),
        other => panic!("no server: {other:?}"),
    }
}

#[test]
fn every_prefix_of_a_real_output_parses_or_fails_with_a_reason() {
    for (raw, _) in good_cases() {
        let text = read(&raw);
        let tps_line_end = text.find("tps = ").expect("tps line");
        for cut in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            let prefix = &text[..cut];
            match render(prefix) {
                Ok(out) => {
                    assert!(cut > tps_line_end, "{}: parsed before the tps line at {cut}", raw.display());
                    assert!(out.contains("tps: "), "{out}");
                }
                Err(ParseError::Truncated { .. } | ParseError::NoResults { .. }) => {}
                // A cut inside the tps number can leave `tps = 302.` which is no number.
                Err(ParseError::Malformed { line, .. }) => assert!(line > 1, "{}: {cut}", raw.display()),
                Err(e) => panic!("{}: cut at {cut}: {e:?}", raw.display()),
            }
        }
    }
}

#[test]
fn random_bytes_never_panic() {
    // A fixed xorshift stream: the same inputs every run, biased towards the characters pgbench prints.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let alphabet: Vec<u8> = b"tps = 0123456789.() ms us\nlatency average=number of transactions actually processed: \xff\x00"
        .to_vec();
    for round in 0..2000 {
        let len = (next() % 400) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                let r = next();
                if round % 2 == 0 {
                    alphabet[(r % alphabet.len() as u64) as usize]
                } else {
                    r as u8
                }
            })
            .collect();
        let text = String::from_utf8_lossy(&bytes);
        if let Ok(out) = parser().parse(&ParseInput::text(&text)) {
            assert!(out.render().contains("tps"), "{text:?}");
        }
    }
}
