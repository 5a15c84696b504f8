//! End-to-end tests of `culprit serve`: the dashboard started on a small real store (a command job run by
//! `culprit run` under ten labels, its throughput stepping down 10% at the sixth), read over plain HTTP/1.1, each page
//! checked against what the matching command prints; its error pages; Ctrl-C; and the same on a PostgreSQL store.

use crate::common;

use crate::common::{culprit, html_escape, serve, stdout, Server};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Labels `l01` to `l10`; from `l06` on, the throughput is 10% lower.
const LABELS: usize = 10;
const STEP_AT: usize = 6;

/// A label that needs escaping in HTML, stored by a job of its own.
const ODD_LABEL: &str = "<i>x&y</i>";

fn label(i: usize) -> String {
    format!("l{i:02}")
}

/// The job: each run prints the level the test sets, plus 0, 5 or 10 in turn, as its throughput.
const JOB: &str = "suite: serve-test\ncommand:\n  cmd: |\n    n=$(cat \"$SERVE_COUNTER\" 2>/dev/null || echo 0); echo $((n + 1)) > \"$SERVE_COUNTER\"; echo \"ops: $((SERVE_LEVEL + n % 3 * 5))\"\n  executions: 1\n  capture:\n    throughput: 'ops: ([0-9.]+)'\n";

/// Runs the job 3 times at `label` with the throughput around `level`.
fn run_at(db: &str, dir: &Path, label: &str, level: u32) {
    let job = dir.join("job.yaml");
    std::fs::write(&job, JOB).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_culprit"))
        .current_dir(dir)
        .env("SERVE_LEVEL", level.to_string())
        .env("SERVE_COUNTER", dir.join("counter"))
        .arg("--db")
        .arg(db)
        .args(["run", job.to_str().unwrap(), "-n", "3", "--label", label, "--monitors", "none"])
        .output()
        .unwrap();
    stdout(&out);
}

/// The store of the tests: the ten labels, and one run of another job under [`ODD_LABEL`].
fn make_store(dir: &Path) -> PathBuf {
    let db = dir.join("serve.db");
    let db_arg = db.to_str().unwrap();
    for i in 1..=LABELS {
        run_at(db_arg, dir, &label(i), if i >= STEP_AT { 900 } else { 1000 });
    }
    let odd = dir.join("odd.yaml");
    std::fs::write(&odd, "suite: odd\ncommand:\n  cmd: \"echo 'ops: 1'\"\n  capture:\n    ops: 'ops: ([0-9]+)'\n")
        .unwrap();
    stdout(&culprit(
        db_arg,
        &["run", odd.to_str().unwrap(), "-n", "1", "--label", ODD_LABEL, "--monitors", "none"],
        dir,
    ));
    db
}

/// The text of a page's first `<pre>` block (still escaped).
fn first_pre(body: &str) -> &str {
    let start = body.find("<pre").and_then(|i| body[i..].find('>').map(|j| i + j + 1)).expect("a <pre> block");
    let end = body[start..].find("</pre>").expect("the end of the <pre> block");
    &body[start..start + end]
}

#[test]
fn pages_show_the_store_as_the_commands_print_it() {
    let _machine = common::shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let db = make_store(dir.path());
    let db_arg = db.to_str().unwrap();
    let stored_bytes = std::fs::read(&db).unwrap();
    let server = serve(db_arg, dir.path());

    // The overview: where the store is, what it holds as `culprit results` prints it, forms for compare and track.
    let page = server.get("/");
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.header("content-type"), Some("text/html; charset=utf-8"));
    assert!(page.body.contains(&html_escape(db_arg)), "{}", page.body);
    let results = stdout(&culprit(db_arg, &["results"], dir.path()));
    assert!(results.contains("label:l01") && results.contains("label:l10"), "{results}");
    assert_eq!(first_pre(&page.body), html_escape(&results));
    assert!(page.body.contains("No bisect session is stored."), "{}", page.body);
    assert!(page.body.contains("<form action=\"/compare\"") && page.body.contains("<form action=\"/track\""));
    // Text from the store is escaped: the odd label is shown, never taken as markup.
    assert!(page.body.contains("label:&lt;i&gt;x&amp;y&lt;/i&gt;"), "{}", page.body);
    assert!(!page.body.contains(ODD_LABEL));

    // Compare: the robot's table and headlines, byte for byte what `culprit compare` prints.
    let page = server.get("/compare?rev=l01&rev=l10");
    assert_eq!(page.status, 200, "{}", page.body);
    let table = stdout(&culprit(db_arg, &["compare", "l01", "l10"], dir.path()));
    assert!(table.contains("%change") && table.contains("command.throughput"), "{table}");
    // Byte for byte but for the footnote's way to every row: a query parameter here, a flag there.
    assert!(table.contains("; --all shows every row"), "{table}");
    assert_eq!(first_pre(&page.body), html_escape(&table.replace("--all shows", "all=1 shows")));
    let throughput_row = table.lines().find(|l| l.ends_with("command.throughput")).unwrap();
    assert!(throughput_row.contains("-10.0%"), "{throughput_row}");
    assert!(page.body.contains("<a href=\"/compare?rev=l01&amp;rev=l10&amp;all=1\">every row</a>"), "{}", page.body);
    // Every row, as --all prints them: the unchanged ones too.
    let page = server.get("/compare?rev=l01&rev=l10&all=1");
    assert_eq!(page.status, 200, "{}", page.body);
    let every_row = stdout(&culprit(db_arg, &["compare", "l01", "l10", "--all"], dir.path()));
    assert!(every_row.contains("command.max_resident_set_size") && !table.contains("command.max_resident_set_size"));
    assert_eq!(first_pre(&page.body), html_escape(&every_row));
    // Revisions that need escaping in a URL and in HTML, in the error pages: the odd label's job is not l01's, and
    // one revision twice is refused as the command refuses it.
    let page = server.get("/compare?rev=l01&rev=%3Ci%3Ex%26y%3C%2Fi%3E");
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(page.body.contains("l01, &lt;i&gt;x&amp;y&lt;/i&gt;") && !page.body.contains(ODD_LABEL), "{}", page.body);
    let page = server.get("/compare?rev=%3Ci%3Ex%26y%3C%2Fi%3E&rev=%3Ci%3Ex%26y%3C%2Fi%3E");
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(page.body.contains("is given twice") && page.body.contains("&lt;i&gt;x&amp;y&lt;/i&gt;"), "{}", page.body);
    assert!(!page.body.contains(ODD_LABEL), "{}", page.body);

    // Track: without a repository the labels are ordered by their first run, and the step is found between l05 and
    // l06, as `culprit track` prints it in a repository where the job has no commit.
    let page = server.get("/track?metric=throughput");
    assert_eq!(page.status, 200, "{}", page.body);
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    for args in [
        &["init", "-q"][..],
        &["-c", "user.email=t@culprit.invalid", "-c", "user.name=T", "commit", "-q", "--allow-empty", "-m", "x"],
    ] {
        assert!(Command::new("git").arg("-C").arg(&repo).args(args).status().unwrap().success());
    }
    let tracked =
        stdout(&culprit(db_arg, &["track", "--repo", repo.to_str().unwrap(), "--metric", "throughput"], dir.path()));
    assert!(tracked.contains("command.throughput") && tracked.contains("regression"), "{tracked}");
    assert!(
        tracked.contains(&format!("between {} (last before) and {} (first after)", label(STEP_AT - 1), label(STEP_AT))),
        "{tracked}"
    );
    // Along a branch the command says the job's points are labels, which the page without repo= need not say.
    let labels_note = format!("no tested commit on HEAD; its {LABELS} label(s) are tracked");
    let (notes, rest): (Vec<&str>, Vec<&str>) = tracked.lines().partition(|l| l.starts_with("note: "));
    assert!(notes.len() == 1 && notes[0].contains(&labels_note), "{tracked}");
    assert_eq!(first_pre(&page.body), html_escape(&(rest.join("\n") + "\n")));
    assert!(page.body.contains("repo=DIR"), "the page says how to order commits: {}", page.body);
    // One chart for the one series, drawn as `track --plot` draws it, with the change point marked.
    assert_eq!(page.body.matches("<svg").count(), 1, "{}", page.body);
    let svg = &page.body[page.body.find("<svg").unwrap()..page.body.find("</svg>").unwrap()];
    assert!(svg.contains("command.throughput") && svg.contains("between l05 and l06"), "{svg}");

    // Several clients at once each get their page.
    let pages: Vec<u16> = std::thread::scope(|scope| {
        let addr = server.addr.as_str();
        let handles: Vec<_> =
            (0..8).map(|_| scope.spawn(move || common::get(addr, "/compare?rev=l01&rev=l10").status)).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(pages, vec![200; 8]);

    // The dashboard never wrote to the store.
    assert!(std::fs::read(&db).unwrap() == stored_bytes, "the store file changed while being served");
    // Each request opens the store anew, so a run stored meanwhile shows at once.
    run_at(db_arg, dir.path(), "l11", 900);
    let page = server.get("/");
    assert!(page.body.contains("label:l11"), "{}", page.body);
}

/// Asserts that `path` answers with `status` and a page saying `says`.
fn expect_page(server: &Server, path: &str, status: u16, says: &str) {
    let page = server.get(path);
    assert_eq!(page.status, status, "{path}: {}", page.body);
    assert!(page.body.contains(says), "{path}: {}", page.body);
}

#[test]
fn bad_requests_get_the_commands_messages() {
    let _machine = common::shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let db = make_store(dir.path());
    let db_arg = db.to_str().unwrap();
    let server = serve(db_arg, dir.path());

    expect_page(&server, "/no/such/page", 404, "there is no page /no/such/page");

    // An unknown revision: 404, with the message `culprit compare` prints.
    let page = server.get("/compare?rev=l01&rev=nosuch");
    assert_eq!(page.status, 404, "{}", page.body);
    let out = culprit(db_arg, &["compare", "l01", "nosuch"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(message.contains("no stored results for revision `nosuch`"), "{message}");
    assert_eq!(first_pre(&page.body), html_escape(&message));

    // A bad regex: 400, the store's message.
    expect_page(&server, "/track?metric=(", 400, "invalid metric regex `(`");
    let page = server.get("/compare?rev=l01&rev=l10&metric=%28");
    assert_eq!(page.status, 400, "{}", page.body);

    // A missing session: 404 for its page and its report; an id that is not a number: 400.
    for path in ["/bisect/7", "/bisect/7/report"] {
        expect_page(&server, path, 404, "bisect session 7 does not exist in the result store");
    }
    expect_page(&server, "/bisect/x%3Cy", 400, "&#39;x&lt;y&#39; is not a bisect session id");
    expect_page(&server, "/bisect/7/report?culprit=0", 400, "culprit=0 is not a culprit&#39;s number");

    // Parameters missing or contradicting: 400 saying what to give.
    expect_page(&server, "/compare?rev=l01", 400, "give a second revision");
    expect_page(&server, "/track?metric=throughput&branch=main", 400, "repo=DIR");
    expect_page(&server, "/track?metric=throughput&repo=/nonexistent/repo", 400, "/nonexistent/repo");
    // Revisions that exist but share no job: the message `culprit compare` prints.
    expect_page(&server, "/compare?rev=l01&rev=%3Ci%3Ex%26y%3C%2Fi%3E", 400, "no job has runs at every one of");

    // The server is still serving after all that.
    assert_eq!(server.get("/").status, 200);
}

#[test]
fn a_culprit_a_session_did_not_name_is_a_missing_report() {
    // QA: `/bisect/1/report?culprit=2` on a session that named one culprit answered 400, as if the address were
    // malformed; the report does not exist (404), and the page says which culprits there are.
    let _machine = common::quiet_machine();
    let (dir, repo, shas, db) = common::slowdown(6, 4, 2);
    let db_arg = db.to_str().unwrap();
    let args = ["bisect", "--repo", repo.to_str().unwrap(), "--good", &shas[0], "--bad", "HEAD", "--json"];
    let how = ["--run", "./bench", "--build", "make -s", "--metric", "command.user_time"];
    let result: serde_json::Value =
        serde_json::from_str(&stdout(&culprit(db_arg, &[&args[..], &how].concat(), dir.path()))).unwrap();
    assert_eq!(result["culprits"].as_array().map(Vec::len), Some(1), "{result:#}");
    // The farm's reporter: the report page of the regression credits it, as `culprit report` does.
    let server = common::serve_with(db_arg, dir.path(), &[("CULPRIT_REPORTED_BY", "Farm Robot <robot@example.org>")]);
    expect_page(&server, "/bisect/1/report?culprit=2", 404, "bisect session 1 has no culprit 2: it named one culprit");
    expect_page(&server, "/bisect/1/report?culprit=2", 404, "culprit= takes only 1");
    let page = server.get("/bisect/1/report?culprit=1");
    assert_eq!(page.status, 200);
    assert!(page.body.contains("<pre>Reported-by: Farm Robot &lt;robot@example.org&gt;</pre>"), "{}", page.body);
    // The command says it in its own words.
    let out = culprit(db_arg, &["report", "1", "--culprit", "2"], dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bisect session 1 has no culprit 2: it named one culprit; --culprit takes only 1"), "{err}");
}

#[test]
fn ctrl_c_stops_the_server_cleanly() {
    let _machine = common::shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let db = make_store(dir.path());
    let server = serve(db.to_str().unwrap(), dir.path());
    assert_eq!(server.get("/").status, 200);
    let (exit, lines) = server.interrupt(Duration::from_secs(20));
    assert!(exit.success(), "{exit:?}: {lines:?}");
    assert!(lines.iter().any(|l| l == "culprit: stopped serving"), "{lines:?}");
}

#[test]
fn a_missing_store_is_refused_at_start() {
    let _machine = common::shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("missing.db");
    let out = culprit(db.to_str().unwrap(), &["serve", "--listen", "127.0.0.1:0"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(message.contains("there is no result store at") && message.contains("missing.db"), "{message}");
    // Read-only: nothing was created.
    assert!(!db.exists());
}

/// A store of an older schema (the recorded real.db, at version 1) is not upgraded by the dashboard, which only
/// reads: it refuses to start, says how to upgrade, and leaves the file as it was; once upgraded, it is served.
#[test]
fn an_old_store_is_refused_until_upgraded() {
    let _machine = common::shared_machine();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("real.db");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/report/real.db"), &db).unwrap();
    let db_arg = db.to_str().unwrap();
    let before = std::fs::read(&db).unwrap();
    let out = culprit(db_arg, &["serve", "--listen", "127.0.0.1:0"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(message.contains("cannot upgrade its schema") && message.contains("`culprit results`"), "{message}");
    assert!(std::fs::read(&db).unwrap() == before, "the refused store was changed");

    stdout(&culprit(db_arg, &["results"], dir.path()));
    let server = serve(db_arg, dir.path());
    let page = server.get("/");
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("label:a9ecb5c3d0+revert"), "{}", page.body);
    assert!(page.body.contains("<a href=\"/bisect/1\">1</a>"), "{}", page.body);
    // Without repo= the runs at commits are skipped; a metric the one label lacks says so and how to add them,
    // rather than that the metric matches nothing.
    let page = server.get("/track?metric=nothing_like_it");
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(page.body.contains("run(s) at commits in this store are skipped"), "{}", page.body);
    assert!(page.body.contains("add repo=DIR"), "{}", page.body);
}

/// The PostgreSQL server of the tests, as in postgres_cli.rs: `CULPRIT_TEST_PG_URL`, or a skip only when
/// `CULPRIT_SKIP_POSTGRES=1` says so.
fn pg_url() -> Option<String> {
    match std::env::var("CULPRIT_TEST_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CULPRIT_SKIP_POSTGRES").as_deref() == Ok("1") => None,
        _ => panic!(
            "CULPRIT_TEST_PG_URL is not set, so the dashboard on a PostgreSQL store cannot be tested. Start a \
             throwaway server with `eval \"$(bash scripts/postgres-test-server.sh)\"`, or run scripts/test.sh; set \
             CULPRIT_SKIP_POSTGRES=1 to skip this test explicitly"
        ),
    }
}

/// PostgreSQL's blocking client runs a runtime of its own, which must not start inside the server's: every page
/// here uses the store, so a page made on the wrong thread would fail (or kill the server).
#[test]
fn pages_of_a_postgresql_store() {
    let _machine = common::shared_machine();
    let Some(url) = pg_url() else { return };
    let dir = tempfile::tempdir().unwrap();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let (base, other) = (
        format!("serve-pg-{}-{nanos}-base", std::process::id()),
        format!("serve-pg-{}-{nanos}-other", std::process::id()),
    );
    run_at(&url, dir.path(), &base, 1000);
    run_at(&url, dir.path(), &other, 900);
    let server = serve(&url, dir.path());

    let page = server.get("/");
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains(&format!("label:{base}")), "{}", page.body);
    // The store is named without its password.
    let password =
        url.split_once("://").and_then(|(_, rest)| rest.split_once('@')).and_then(|(user, _)| user.split_once(':'));
    if let Some((_, password)) = password {
        assert!(!page.body.contains(&format!(":{password}@")), "{}", page.body);
    }

    let page = server.get(&format!("/compare?rev={base}&rev={other}"));
    assert_eq!(page.status, 200, "{}", page.body);
    let table = stdout(&culprit(&url, &["compare", &base, &other], dir.path()));
    assert!(table.contains("%change") && table.contains("-10.0%"), "{table}");
    assert_eq!(first_pre(&page.body), html_escape(&table.replace("--all shows", "all=1 shows")));

    let page = server.get("/bisect/999999999");
    assert_eq!(page.status, 404, "{}", page.body);
    let page = server.get(&format!("/compare?rev={base}&rev=nosuch-{nanos}"));
    assert_eq!(page.status, 404, "{}", page.body);
    assert_eq!(server.get("/").status, 200, "the server still serves");
}
