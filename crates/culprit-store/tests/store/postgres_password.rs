//! The PostgreSQL store opened from a URL without a password, as in the commands Culprit prints: it must take the
//! password from `PGPASSWORD` or libpq's password file, and say where to give it when neither has it.
//!
//! This is a test binary of its own because it changes the process's environment (`PGPASSWORD`, `PGPASSFILE`),
//! which the parallel tests of `postgres.rs` would otherwise see; its one test changes it step by step.
//! The throwaway server of `scripts/postgres-test-server.sh` asks for a password over TCP (scram-sha-256), so each
//! step really authenticates, or really fails to.

use culprit_store::PostgresStore;
use std::os::unix::fs::PermissionsExt;
use std::str::FromStr;

#[test]
fn a_url_without_password_takes_it_from_pgpassword_or_the_password_file() {
    let server = match std::env::var("CULPRIT_TEST_PG_URL") {
        Ok(url) if !url.is_empty() => url,
        _ if std::env::var("CULPRIT_SKIP_POSTGRES").as_deref() == Ok("1") => {
            eprintln!("CULPRIT_SKIP_POSTGRES=1: skipping a PostgreSQL test");
            return;
        }
        _ => panic!("CULPRIT_TEST_PG_URL is not set; eval \"$(bash scripts/postgres-test-server.sh)\" starts a server"),
    };
    let config = postgres::Config::from_str(&server).expect("the test server's URL parses");
    let password = String::from_utf8(config.get_password().expect("the test URL has a password").to_vec()).unwrap();
    let user = config.get_user().expect("the test URL names its user").to_string();
    let database = config.get_dbname().unwrap_or(&user).to_string();
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(host)) => host.clone(),
        other => panic!("the test server is reached over TCP, not {other:?}"),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);

    // The store works in a schema of its own, so it leaves the database's public schema alone.
    let schema = format!("culprit_test_{}_password", std::process::id());
    let mut admin = postgres::Client::connect(&server, postgres::NoTls).expect("the test server accepts its URL");
    admin.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}")).unwrap();
    let options = format!("?options=-csearch_path%3D{schema}");
    let without_password = format!("postgresql://{user}@{host}:{port}/{database}{options}");

    let dir = tempfile::tempdir().unwrap();
    let pgpass = dir.path().join("pgpass");
    std::env::remove_var("PGPASSWORD");
    std::env::set_var("PGPASSFILE", &pgpass);

    // Neither place has the password: the error says where to give it, naming the file it looked in.
    let error = match PostgresStore::connect(&without_password) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("the server accepted a connection without a password"),
    };
    assert!(error.contains("password missing"), "{error}");
    assert!(error.contains("PGPASSWORD"), "{error}");
    assert!(error.contains(&pgpass.display().to_string()), "{error}");
    assert!(error.contains("does not exist"), "{error}");

    // PGPASSWORD gives it.
    std::env::set_var("PGPASSWORD", &password);
    let store = PostgresStore::connect(&without_password).unwrap_or_else(|e| panic!("with PGPASSWORD: {e}"));
    drop(store);

    // A password in the URL wins over PGPASSWORD, as in libpq.
    std::env::set_var("PGPASSWORD", "certainly-not-the-password");
    let with_password = format!("postgresql://{user}:{password}@{host}:{port}/{database}{options}");
    PostgresStore::connect(&with_password).unwrap_or_else(|e| panic!("the URL's password was not used: {e}"));
    std::env::remove_var("PGPASSWORD");

    // The password file: the first matching line gives it; a line for another port and a comment do not.
    let escaped = password.replace('\\', "\\\\").replace(':', "\\:");
    let other_port = port.wrapping_add(1);
    std::fs::write(
        &pgpass,
        format!("# the test server\n{host}:{other_port}:*:*:wrong\n{host}:{port}:{database}:*:{escaped}\n"),
    )
    .unwrap();
    // Readable by others, it is ignored, as libpq ignores it, and the error says why.
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
    let error = match PostgresStore::connect(&without_password) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a password file others may read was used"),
    };
    assert!(error.contains("group or others"), "{error}");
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    PostgresStore::connect(&without_password).unwrap_or_else(|e| panic!("with the password file: {e}"));

    // A file whose only line is for another database gives nothing.
    std::fs::write(&pgpass, format!("{host}:{port}:not_{database}:{user}:{escaped}\n")).unwrap();
    assert!(PostgresStore::connect(&without_password).is_err(), "a line for another database matched");

    admin.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE")).unwrap();
}
