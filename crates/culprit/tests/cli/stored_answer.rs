//! A finished bisect session whose runs this culprit's engine replays to another answer than the one the session
//! stored when it ended (the engine of an older culprit, whose mail named that answer): `report`, `bisect log` and
//! its JSON say so, and a session the engine would not have ended yet is not reported as if it had.

use crate::common::{self, culprit, stdout};
use culprit_store::{SessionId, SqliteStore, Store};
use serde_json::Value;

fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn a_session_replayed_to_another_answer_says_which_it_stored() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, shas) = common::make_slowdown_repo(dir.path(), 6, 4, 99, 30);
    let (good, bad) = (shas[0].as_str(), shas[5].as_str());
    let r = repo.to_str().unwrap();
    // A budget of 8 runs ends the session before it can locate anything.
    let args = ["bisect", "--repo", r, "--good", good, "--bad", bad, "--run", "./bench", "--build", "make -s"];
    let out = culprit("s.db", &[&args[..], &["--max-runs", "8", "--json"]].concat(), dir.path());
    let result: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    let id = result["session"].as_i64().unwrap();
    let ended = result["status"].as_str().unwrap().to_string();
    let id_text = id.to_string();
    // As it ended, the replay agrees with the stored answer: nothing is said.
    let log = stdout(&culprit("s.db", &["bisect", "log", &id_text], dir.path()));
    assert!(!log.contains("note: bisect session"), "{log}");
    let report = culprit("s.db", &["report", &id_text], dir.path());
    assert!(report.status.success() && report.stderr.is_empty(), "{report:?}");

    // The answer stored is not the replay's: an older engine called the change not reproduced and named nothing.
    let mut store = SqliteStore::open(dir.path().join("s.db")).unwrap();
    let stored = store.bisect_session(SessionId(id)).unwrap();
    let mut kept: Value = serde_json::from_str(stored.result_json.as_deref().unwrap()).unwrap();
    let other = if ended == "not-reproduced" { "inconclusive" } else { "not-reproduced" };
    kept["status"] = Value::from(other);
    kept["culprits"] = Value::Array(Vec::new());
    store.update_bisect_session(SessionId(id), other, Some(&kept.to_string()), 1.0).unwrap();
    let said = format!("bisect session {id} ended as {other} under the culprit that ran it (its mail named that)");
    let log = flat(&stdout(&culprit("s.db", &["bisect", "log", &id_text], dir.path())));
    assert!(log.contains(&format!("note: {said}; this culprit's engine, replaying its runs, gives {ended}")), "{log}");
    let json: Value =
        serde_json::from_str(&stdout(&culprit("s.db", &["bisect", "log", &id_text, "--json"], dir.path()))).unwrap();
    assert!(json["stored_answer_differs"].as_str().is_some_and(|s| s.starts_with(&said)), "{json:#}");
    let report = culprit("s.db", &["report", &id_text], dir.path());
    let err = flat(&String::from_utf8_lossy(&report.stderr));
    assert!(report.status.success() && err.starts_with(&format!("culprit: note: {said}")), "{report:?}");

    // An engine that would take more runs before it decides (here the session's budget raised, as a later culprit's
    // default might be) has not ended the session: the report says so instead of an answer the replay never reached.
    let mut config: Value = serde_json::from_str(&stored.config_json).unwrap();
    config["bisect"]["max_runs"] = Value::from(600);
    store.update_bisect_session_config(SessionId(id), &config.to_string()).unwrap();
    let report = culprit("s.db", &["report", &id_text], dir.path());
    let err = flat(&String::from_utf8_lossy(&report.stderr));
    assert!(!report.status.success() && err.contains(&said), "{report:?}");
    let resume = format!("wants more runs before it decides: `culprit bisect --resume {id}` lets it finish");
    assert!(err.contains(&resume), "{err}");
    let log = flat(&stdout(&culprit("s.db", &["bisect", "log", &id_text], dir.path())));
    assert!(log.contains(&resume), "{log}");
}
