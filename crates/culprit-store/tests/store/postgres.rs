//! Integration tests of the PostgreSQL store against a real server: the shared store contract (run against SQLite
//! too, so both back ends are held to the same behaviour), migrations, a failed save, read-only sessions,
//! connection errors, and machines saving at the same time.
//!
//! The server comes from `CULPRIT_TEST_PG_URL` (`eval "$(bash scripts/postgres-test-server.sh)"` starts one;
//! `scripts/test.sh` does it). Without it these tests fail, unless `CULPRIT_SKIP_POSTGRES=1` says to skip them.
//! Each test works in its own schema of that database, dropped at the end, so tests run in parallel.

use crate::{contract, v1_fixture};

use crate::common::*;
use contract::{SHA_A, SHA_B};
use culprit_store::{
    migrations, PostgresStore, RunFilter, SampleQuery, SaveOptions, Saved, SessionClaim, SqliteStore, Store, StoreError,
};
use ::postgres::{Client, NoTls};
use std::path::Path;

const URL_VAR: &str = "CULPRIT_TEST_PG_URL";
const SKIP_VAR: &str = "CULPRIT_SKIP_POSTGRES";

/// The test server's URL, `None` when the user explicitly skips PostgreSQL; any other absence is a failure,
/// because CI always provides the server and a silently skipped back end is an untested one.
fn server_url() -> Option<String> {
    match std::env::var(URL_VAR) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var(SKIP_VAR).as_deref() == Ok("1") => {
            eprintln!("{SKIP_VAR}=1: skipping a PostgreSQL test");
            None
        }
        _ => panic!(
            "{URL_VAR} is not set, so the PostgreSQL store cannot be tested. Start a throwaway server with \
             `eval \"$(bash scripts/postgres-test-server.sh)\"` (as root it installs postgresql if needed), or run \
             scripts/test.sh, which does it; set {SKIP_VAR}=1 to skip these tests explicitly"
        ),
    }
}

fn connect_raw(url: &str) -> Client {
    match Client::connect(url, NoTls) {
        Ok(client) => client,
        Err(e) => panic!("cannot connect to {URL_VAR}: {e}"),
    }
}

/// A schema of its own in the test database; the store finds its tables through `search_path`.
struct TestSchema {
    server: String,
    schema: String,
    url: String,
}

impl TestSchema {
    fn new(test: &str) -> Option<TestSchema> {
        let server = server_url()?;
        let schema = format!("culprit_test_{}_{}", std::process::id(), test);
        connect_raw(&server)
            .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"))
            .unwrap_or_else(|e| panic!("cannot create schema {schema}: {e}"));
        let url = with_options(&server, &[&format!("search_path={schema}")]);
        Some(TestSchema { server, schema, url })
    }

    fn open(&self) -> PostgresStore {
        PostgresStore::connect(&self.url).unwrap_or_else(|e| panic!("connect failed: {e}"))
    }

    fn raw(&self) -> Client {
        connect_raw(&self.url)
    }

    fn count(&self, table: &str) -> i64 {
        self.raw().query_one(&format!("SELECT COUNT(*) FROM {table}"), &[]).map(|r| r.get(0)).unwrap_or(-1)
    }
}

impl Drop for TestSchema {
    fn drop(&mut self) {
        if let Ok(mut client) = Client::connect(&self.server, NoTls) {
            let _ = client.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.schema));
        }
    }
}

/// The URL with server settings (`name=value`) passed as its `options` parameter, percent-encoded.
fn with_options(url: &str, settings: &[&str]) -> String {
    let separator = if url.contains('?') { '&' } else { '?' };
    let options: Vec<String> = settings.iter().map(|s| format!("-c{}", s.replace('=', "%3D"))).collect();
    format!("{url}{separator}options={}", options.join("%20"))
}

fn with_sqlite(case: fn(contract::Opener<'_>)) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("culprit.db");
    case(&|| Box::new(SqliteStore::open(&path).unwrap()) as Box<dyn Store>);
}

fn with_postgres(test: &str, case: fn(contract::Opener<'_>)) {
    let Some(schema) = TestSchema::new(test) else { return };
    case(&|| Box::new(schema.open()) as Box<dyn Store>);
}

/// Runs each contract case against both back ends, as `sqlite::<case>` and `postgres::<case>`.
macro_rules! contract_tests {
    ($($case:ident),* $(,)?) => {
        mod sqlite {
            $( #[test] fn $case() { super::with_sqlite(super::contract::$case) } )*
        }
        mod postgres {
            $( #[test] fn $case() { super::with_postgres(stringify!($case), super::contract::$case) } )*
        }
    };
}

contract_tests!(
    every_field_round_trips,
    huge_metric_sets_round_trip,
    unknown_run_is_not_found,
    run_facts_are_the_machine_and_params_of_each_run,
    filters_select_the_right_runs,
    a_job_glob_selects_every_run_of_the_jobs_it_names,
    results_summary_groups_by_job_revision_and_machine,
    samples_per_revision_per_metric,
    revisions_resolve_from_what_users_type,
    linking_to_a_missing_session_rolls_the_run_back,
    import_keys_make_saves_idempotent,
    former_import_keys_find_only_runs_of_the_same_job_yaml,
    bisect_sessions_keep_their_runs_in_link_order,
    a_sessions_config_is_replaced_and_nothing_else_of_it,
    invalid_records_are_refused_before_any_write,
    stored_names_are_found_by_new_handles,
    run_kinds_keep_profiling_runs_apart,
    scratch_filesystems_round_trip,
    nul_bytes_in_text_round_trip,
    builds_keep_one_kconfigs_runs_apart,
    follow_sessions_are_recorded_per_machine_and_marked_reported,
    try_fixes_keep_their_own_runs_by_side,
    a_deleted_session_leaves_its_runs_and_the_other_sessions,
);

#[test]
fn metric_names_are_shared_between_runs() {
    let Some(schema) = TestSchema::new("shared_names") else { return };
    let mut store = schema.open();
    store.save_run(&profile_run(commit(SHA_A), 20_000, 1.0)).unwrap();
    store.save_run(&profile_run(commit(SHA_B), 20_000, 2.0)).unwrap();
    // A second handle starts with an empty name cache and must find the stored names, not duplicate them.
    schema.open().save_run(&profile_run(commit(SHA_B), 20_000, 3.0)).unwrap();
    assert_eq!(schema.count("metric_names"), 20_001);
    // One packed row per run holds its metrics.
    assert_eq!(schema.count("run_metric_packs"), 3);
}

#[test]
fn migrations_apply_once_and_reconnect_is_idempotent() {
    let Some(schema) = TestSchema::new("migrations") else { return };
    let mut store = schema.open();
    assert_eq!(store.schema_version().unwrap(), migrations::latest_version());
    store.save_run(&run("j", commit(SHA_A), "h", &[("m", 1.0)])).unwrap();
    drop(store);
    for _ in 0..3 {
        let store = schema.open();
        assert_eq!(store.schema_version().unwrap(), migrations::latest_version());
        assert_eq!(store.list_runs(&RunFilter::default()).unwrap().len(), 1);
    }
    assert_eq!(schema.count("schema_version"), migrations::latest_version());
    // The tables are in the test's schema, which is how several stores can share one database.
    let tables: i64 = schema
        .raw()
        .query_one("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = $1", &[&schema.schema])
        .map(|r| r.get(0))
        .unwrap_or(0);
    // The eleven tables of migration 1, plus run_metric_packs (version 2), minus run_metrics (version 3), plus
    // bisect_range_commits (version 4), follow_sessions (version 6), try_fixes and try_fix_runs (version 8), and
    // schema_version.
    assert_eq!(tables, 16);
}

/// QA 22: a mistyped --db naming another application's PostgreSQL database had culprit's twelve tables written into
/// it by any command (`culprit results` included), where a SQLite file of another application is refused; and
/// one with a table of a name culprit uses (`machines`) failed halfway as "cannot upgrade ... relation already
/// exists".
#[test]
fn another_applications_database_is_refused_and_left_untouched() {
    for (test, table) in [("foreign_app", "invoices"), ("foreign_clash", "machines")] {
        let Some(schema) = TestSchema::new(test) else { return };
        schema.raw().batch_execute(&format!("CREATE TABLE {table} (id BIGINT); INSERT INTO {table} VALUES (7)")).unwrap();
        match PostgresStore::connect(&schema.url) {
            Err(error @ StoreError::NotACulpritStore { .. }) => {
                assert!(error.to_string().contains(table), "the message names what the database holds: {error}");
                assert!(error.to_string().contains("PostgreSQL database of something else"), "{error}");
            }
            Err(other) => panic!("wrong error: {other}"),
            Ok(_) => panic!("culprit's schema was written into another application's database"),
        }
        let tables: Vec<String> = schema
            .raw()
            .query("SELECT table_name::TEXT FROM information_schema.tables WHERE table_schema = $1", &[&schema.schema])
            .map(|rows| rows.iter().map(|r| r.get(0)).collect())
            .unwrap_or_default();
        assert_eq!(tables, [table], "only the other application's table is there");
        assert_eq!(schema.count(table), 1);
    }
    // An empty schema is a new store, as before.
    let Some(schema) = TestSchema::new("foreign_empty") else { return };
    assert_eq!(schema.open().schema_version().unwrap(), migrations::latest_version());
}

/// QA 22: a store in a schema of its own (`options=-c search_path=...`) was named by its database alone, so two
/// stores sharing a database read as one: a mail's reproduce lines (`--db LOCATION`) pointed at the other store,
/// and the two stores' bisect sessions of the same id shared one lock (its tag is made from the location), the
/// second refused as driven by another culprit.
#[test]
fn stores_in_two_schemas_of_one_database_are_named_apart() {
    let Some(first) = TestSchema::new("named_first") else { return };
    let Some(second) = TestSchema::new("named_second") else { return };
    let (one, other) = (first.open().location(), second.open().location());
    assert_ne!(one, other);
    for (schema, location) in [(&first, &one), (&second, &other)] {
        assert!(location.contains(&format!("search_path%3D{}", schema.schema)), "{location}");
        assert!(!location.contains("culprit:"), "no password: {location}");
    }
}

/// One bisect session is driven by one process. Its lock file beside the repository could not tell a second culprit
/// that reached the same store under another spelling of its address (`localhost` and `127.0.0.1`), or on another
/// machine of the farm: both drove the session, their runs mixed into one bisect. The store keeps the claim: a
/// second connection is refused and told who holds it, until the first one closes; the same session id of a store
/// in another schema is another session.
#[test]
fn a_bisect_session_is_claimed_by_one_connection_at_a_time() {
    let Some(schema) = TestSchema::new("claims") else { return };
    let Some(elsewhere) = TestSchema::new("claims_elsewhere") else { return };
    let session = culprit_store::SessionId(1);
    let mut driver = schema.open();
    assert_eq!(driver.bisect_session_claim(session).unwrap(), SessionClaim::Free);
    assert_eq!(driver.claim_bisect_session(session).unwrap(), SessionClaim::Free);
    // Claiming again from the same store (a session resumed within one process) keeps it.
    assert_eq!(driver.claim_bisect_session(session).unwrap(), SessionClaim::Free);
    let mut second = schema.open();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let named = format!("culprit@{} pid {}", host.trim(), std::process::id());
    for claim in [second.claim_bisect_session(session).unwrap(), second.bisect_session_claim(session).unwrap()] {
        match claim {
            SessionClaim::HeldBy(holder) => assert!(holder.starts_with(&named), "{holder}"),
            other => panic!("the second connection got {other:?}"),
        }
    }
    assert_eq!(second.claim_bisect_session(culprit_store::SessionId(2)).unwrap(), SessionClaim::Free);
    assert_eq!(elsewhere.open().claim_bisect_session(session).unwrap(), SessionClaim::Free);
    // Given up once the session is no longer driven, the claim is free for others at once, though the connection
    // stays (a process driving several bisects one after another): two claims of one store are one.
    driver.release_bisect_session(session).unwrap();
    assert_eq!(second.bisect_session_claim(session).unwrap(), SessionClaim::Free);
    assert_eq!(driver.claim_bisect_session(session).unwrap(), SessionClaim::Free);
    drop(driver);
    // The server frees the lock when the connection ends, as when its process is killed.
    let mut claim = second.claim_bisect_session(session).unwrap();
    for _ in 0..100 {
        if claim == SessionClaim::Free {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        claim = second.claim_bisect_session(session).unwrap();
    }
    assert_eq!(claim, SessionClaim::Free);
}

#[test]
fn a_newer_schema_is_refused_clearly() {
    let Some(schema) = TestSchema::new("newer") else { return };
    drop(schema.open());
    schema.raw().execute("INSERT INTO schema_version (version, applied_at) VALUES (999, 0)", &[]).unwrap();
    match PostgresStore::connect(&schema.url) {
        Err(error @ StoreError::SchemaTooNew { found: 999, .. }) => {
            assert!(error.to_string().contains("upgrade culprit"), "{error}");
            assert!(error.to_string().contains("postgresql://"), "{error}");
        }
        Err(other) => panic!("wrong error: {other}"),
        Ok(_) => panic!("a newer schema was accepted"),
    }
}

#[test]
fn a_save_that_fails_midway_leaves_nothing() {
    let Some(schema) = TestSchema::new("midway") else { return };
    let mut store = schema.open();
    let kept = store.save_run(&run("kept", commit(contract::SHA_C), "host-0", &[("kept.metric", 1.0)])).unwrap();
    // Make the insert of raw outputs (after the run row, params, 20,000 metrics and monitors) fail.
    schema
        .raw()
        .batch_execute(
            "CREATE FUNCTION fail_raw() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN RAISE EXCEPTION 'injected'; END $$; \
             CREATE TRIGGER fail_raw BEFORE INSERT ON run_raw_outputs FOR EACH ROW EXECUTE FUNCTION fail_raw();",
        )
        .unwrap();
    let mut doomed = everything_run();
    doomed.metrics.extend(profile_run(commit(SHA_A), 20_000, 3.0).metrics);
    let error = store.save_run(&doomed).unwrap_err();
    assert!(error.to_string().contains("injected"), "{error}");
    for (table, expected) in [
        ("runs", 1),
        ("run_metric_packs", 1),
        ("metric_names", 1),
        ("run_params", 1),
        ("run_monitors", 0),
        ("run_monitor_series", 0),
        ("run_raw_outputs", 0),
        ("machines", 1),
        ("revisions", 1),
    ] {
        assert_eq!(schema.count(table), expected, "{table}");
    }
    // The rolled-back metric names must not linger in the store's name cache.
    schema.raw().batch_execute("DROP TRIGGER fail_raw ON run_raw_outputs;").unwrap();
    let id = store.save_run(&doomed).unwrap();
    assert_eq!(store.run(id).unwrap().metrics.len(), doomed.metrics.len());
    assert_eq!(store.run(kept).unwrap().metrics["kept.metric"], 1.0);
}

#[test]
fn a_read_only_session_reads_but_refuses_writes() {
    let Some(schema) = TestSchema::new("read_only") else { return };
    let id = schema.open().save_run(&everything_run()).unwrap();
    // What a hot standby or a read-only role looks like to the store.
    let read_only_url = with_options(
        &schema.server,
        &[&format!("search_path={}", schema.schema), "default_transaction_read_only=on"],
    );
    let mut store = PostgresStore::connect(&read_only_url).unwrap();
    contract::assert_same_record(&store.run(id).unwrap(), &everything_run());
    let error = store.save_run(&run("j", commit(SHA_A), "h", &[("m", 1.0)])).unwrap_err();
    assert!(matches!(error, StoreError::ReadOnly { .. }), "{error}");
    // Its words are PostgreSQL's case, not a file's permissions.
    let said = error.to_string();
    let words = "Connect to the primary server as a role that may write";
    assert!(said.contains(words) && !said.contains("file"), "{said}");
    assert_eq!(schema.count("runs"), 1);
}

#[test]
fn connection_problems_are_explained_without_the_password() {
    let Some(url) = server_url() else { return };
    let cases = [
        // Nothing listens on port 1 of the loopback interface.
        ("postgresql://culprit:secret@127.0.0.1:1/culprit", "scripts/postgres-test-server.sh"),
        ("postgresql://culprit:secret@127.0.0.1:notaport/culprit", "postgresql://user:password@host"),
    ];
    for (bad, hint) in cases {
        match PostgresStore::connect(bad) {
            Err(error @ StoreError::Open { .. }) => {
                let text = error.to_string();
                assert!(text.contains(hint), "{text}");
                assert!(!text.contains("secret"), "the password leaked: {text}");
            }
            Err(other) => panic!("{bad}: wrong error {other}"),
            Ok(_) => panic!("{bad}: connected"),
        }
    }
    // The right server with a wrong password.
    let config: ::postgres::Config = url.parse().unwrap();
    let host = match config.get_hosts().first() {
        Some(::postgres::config::Host::Tcp(host)) => host.clone(),
        _ => "127.0.0.1".to_string(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().unwrap_or("culprit");
    let database = config.get_dbname().unwrap_or("culprit");
    let wrong_url = format!("postgresql://{user}:certainly-not-the-password@{host}:{port}/{database}");
    match PostgresStore::connect(&wrong_url) {
        Err(error @ StoreError::Open { .. }) => {
            let text = error.to_string();
            assert!(text.contains("password") && !text.contains("certainly-not"), "{text}");
        }
        Err(other) => panic!("wrong error {other}"),
        Ok(_) => panic!("a wrong password was accepted"),
    }
    let store = PostgresStore::connect(&url).unwrap();
    let location = store.location();
    assert!(location.starts_with("postgresql://") && location.contains(&format!(":{port}/")), "{location}");
    if let Some(password) = config.get_password() {
        let secret = format!(":{}@", String::from_utf8_lossy(password));
        assert!(!location.contains(&secret), "the password leaked: {location}");
    }
}

#[test]
fn two_machines_saving_at_once_do_not_conflict() {
    let Some(schema) = TestSchema::new("concurrent") else { return };
    const RUNS: usize = 50;
    let barrier = std::sync::Barrier::new(2);
    let results: Vec<Vec<(Saved, culprit_core::model::RunRecord)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|machine| {
                let (barrier, url) = (&barrier, &schema.url);
                scope.spawn(move || {
                    // Both connect to an empty schema at once: the migration must happen exactly once.
                    barrier.wait();
                    let mut store = PostgresStore::connect(url).unwrap_or_else(|e| panic!("machine {machine}: {e}"));
                    barrier.wait();
                    let mut saved = Vec::new();
                    for index in 0..RUNS {
                        // Shared and new metric names, a shared revision and a per-machine one, shared import keys.
                        let revision = if index % 2 == 0 { commit(SHA_A) } else { commit(SHA_B) };
                        let mut record = profile_run(revision, 300 + index, (machine * 1000 + index) as f64);
                        record.machine = machine_named(&format!("farm-{machine}"));
                        record.metrics.insert(format!("machine{machine}.only_{index}"), index as f64);
                        let options = SaveOptions {
                            import_key: (index % 10 == 0).then(|| format!("lkp:shared/{index}")),
                            ..Default::default()
                        };
                        let result = store
                            .save_run_with(&record, &options)
                            .unwrap_or_else(|e| panic!("machine {machine} run {index}: {e}"));
                        saved.push((result, record));
                    }
                    saved
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_default()).collect()
    });
    assert_eq!(results.len(), 2);
    assert_eq!(schema.count("schema_version"), migrations::latest_version());
    let store = schema.open();
    let mut inserted = 0;
    let mut already = 0;
    for (saved, record) in results.iter().flatten() {
        match saved {
            Saved::Inserted(id) => {
                inserted += 1;
                assert_eq!(&store.run(*id).unwrap(), record);
            }
            Saved::AlreadyStored(id) => {
                already += 1;
                // The run the other machine stored under the same import key.
                assert_eq!(store.run(*id).unwrap().job_id, record.job_id);
            }
        }
    }
    // Runs 0, 10, 20, 30, 40 carry the same import key on both machines: each is stored once.
    assert_eq!((inserted, already), (2 * RUNS - 5, 5));
    assert_eq!(store.list_runs(&RunFilter::default()).unwrap().len(), 2 * RUNS - 5);
    assert_eq!(schema.count("machines"), 2);
    assert_eq!(schema.count("revisions"), 2);
    // 300 + 49 profile names, fio.write_iops, and one per machine and run that was stored (not already there).
    assert_eq!(schema.count("metric_names"), (300 + RUNS as i64 - 1) + 1 + (2 * RUNS as i64 - 5));
    let samples = store.samples(&SampleQuery { revision_keys: vec![SHA_A.into()], ..Default::default() }).unwrap();
    // Even runs are on SHA_A, and all five shared import keys are even runs.
    assert_eq!(samples[0].metrics["fio.write_iops"].len(), 2 * (RUNS / 2) - 5);
}

fn machine_named(hostname: &str) -> culprit_core::model::Machine {
    culprit_core::model::Machine { hostname: hostname.to_string(), ..machine("x") }
}

/// Text as the version-1 PostgreSQL store wrote it: NUL as U+FFFE `0`, U+FFFE doubled.
fn escaped(text: &str) -> String {
    text.replace('\u{FFFE}', "\u{FFFE}\u{FFFE}").replace('\0', "\u{FFFE}0")
}

/// Builds a version-1 PostgreSQL store holding exactly the rows of the version-1 SQLite fixture: the schema of
/// migration 1, then every table copied row by row, ids included.
fn version_1_store_from_fixture(schema: &TestSchema) {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("culprit.db");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/schema_v1/store.sqlite3"), &copy).unwrap();
    let sqlite = rusqlite::Connection::open(&copy).unwrap();
    let mut pg = schema.raw();
    pg.batch_execute(&migrations::render(migrations::SCHEMA_VERSION_TABLE, migrations::Dialect::Postgres)).unwrap();
    pg.batch_execute(&migrations::render(migrations::MIGRATIONS[0], migrations::Dialect::Postgres)).unwrap();
    pg.execute("INSERT INTO schema_version (version, applied_at) VALUES (1, 0)", &[]).unwrap();
    let tables = [
        "machines",
        "revisions",
        "bisect_sessions",
        "runs",
        "run_params",
        "metric_names",
        "run_metrics",
        "run_monitors",
        "run_monitor_series",
        "run_raw_outputs",
        "bisect_session_runs",
    ];
    for table in tables {
        let mut select = sqlite.prepare(&format!("SELECT * FROM {table}")).unwrap();
        let columns: Vec<String> = select.column_names().iter().map(|c| c.to_string()).collect();
        let placeholders: Vec<String> = (1..=columns.len()).map(|i| format!("${i}")).collect();
        let insert = pg
            .prepare(&format!("INSERT INTO {table} ({}) VALUES ({})", columns.join(", "), placeholders.join(", ")))
            .unwrap();
        let types = insert.params().to_vec();
        let mut rows = select.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            let mut values: Vec<Box<dyn ::postgres::types::ToSql + Sync>> = Vec::new();
            for (index, ty) in types.iter().enumerate() {
                let value = row.get_ref(index).unwrap();
                let null = matches!(value, rusqlite::types::ValueRef::Null);
                values.push(match ty.name() {
                    "int8" => Box::new((!null).then(|| value.as_i64().unwrap())),
                    "float8" => Box::new((!null).then(|| value.as_f64().unwrap())),
                    "text" => Box::new((!null).then(|| escaped(value.as_str().unwrap()))),
                    "bytea" => Box::new((!null).then(|| value.as_blob().unwrap().to_vec())),
                    other => panic!("{table}: unexpected column type {other}"),
                });
            }
            let parameters: Vec<&(dyn ::postgres::types::ToSql + Sync)> = values.iter().map(|v| v.as_ref()).collect();
            pg.execute(&insert, &parameters).unwrap();
        }
        if columns.first().map(String::as_str) == Some("id") {
            pg.execute(&format!("SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT MAX(id) FROM {table}))"), &[])
                .unwrap();
        }
    }
}

#[test]
fn a_version_1_store_upgrades_in_place_and_reads_back_identically() {
    let Some(schema) = TestSchema::new("upgrade_v1") else { return };
    version_1_store_from_fixture(&schema);
    let metrics: usize = v1_fixture::runs().iter().map(|(record, _)| record.metrics.len()).sum();
    assert_eq!(schema.count("run_metrics"), metrics as i64);
    let expected = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/schema_v1/expected.txt"))
        .unwrap();

    let mut store = schema.open();
    assert_eq!(store.schema_version().unwrap(), migrations::latest_version());
    assert_eq!(v1_fixture::dump(&store), expected);
    v1_fixture::assert_every_run_plain(&store);
    let gone: bool = schema.raw().query_one("SELECT to_regclass('run_metrics') IS NULL", &[]).unwrap().get(0);
    assert!(gone, "run_metrics should be dropped");
    assert_eq!(schema.count("run_metric_packs"), v1_fixture::runs().len() as i64 - 1);

    // The upgraded store takes new runs, reusing the stored names and continuing the id sequences.
    let names_before = schema.count("metric_names");
    let runs = v1_fixture::runs();
    let again = store.save_run(&runs[2].0).unwrap();
    assert_eq!(again.0, runs.len() as i64 + 1);
    contract::assert_same_record(&store.run(again).unwrap(), &runs[2].0);
    assert_eq!(schema.count("metric_names"), names_before);
    assert_eq!(schema.open().list_runs(&RunFilter::default()).unwrap().len(), runs.len() + 1);
}
