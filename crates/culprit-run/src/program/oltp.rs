//! lkp's `oltp`: sysbench's OLTP tests (Debian: `sysbench`, whose `/usr/share/sysbench/oltp_*.lua` they are),
//! run against a throwaway database server of the run's own: MariaDB ([`super::server::mariadb`]) when the job has
//! lkp's `mysql-setup` (as lkp's `programs/oltp/setup` runs them against the MySQL server its `mysql-setup` starts)
//! or `db_driver: mysql`, else PostgreSQL ([`super::server::postgres`]). A job of lkp's (`jobs/oltp.yaml`:
//! `mysql-setup:`, `setup-oltp: {table_size: 1000000}`, `oltp:`) thus runs on the engine lkp's does, InnoDB's I/O included; the
//! transactions are the same Lua scripts either way, so a change between two kernels shows on both, but their
//! absolute numbers are the engine's.
//!
//! Setup: the throwaway server, then `sysbench <test> <connection> --tables=N --table-size=M prepare`, which creates
//! and fills the tables. Measured: `sysbench <test> <connection> --tables=N --table-size=M --threads=T --time=S
//! --events=0 run`, as lkp's. Cleanup: the server stops, and its data goes with the scratch directory.
//!
//! | param | sysbench option | default |
//! |---|---|---|
//! | `db_driver` | `--db-driver`: `mysql` (a throwaway MariaDB) or `pgsql` (a throwaway PostgreSQL) | `mysql` under lkp's `mysql-setup`, else `pgsql` |
//! | `nr_threads` | `--threads` (count or share of CPUs) | 1 |
//! | `runtime` | `--time` | 600 (lkp's) |
//! | `table_size` | `--table-size`: rows per table | 10000 (sysbench's) |
//! | `tables` | `--tables` (Culprit's) | 1 |
//! | `test` | the Lua test: `oltp_read_only`, `oltp_read_write`, `oltp_write_only`, `oltp_point_select`, `oltp_update_index`, `oltp_update_non_index`, `oltp_insert`, `oltp_delete` (Culprit's) | `oltp_read_only` (lkp's) |
//!
//! Every sysbench thread holds a connection: past 100 threads MariaDB's `max_connections` is twice the threads, as
//! lkp's `mysql-setup` sets it; PostgreSQL's is raised likewise when its 100 (3 kept for superusers) do not suffice.
//! The job layer gives `db_driver: mysql` for `mysql-setup` (`culprit_job::table::SCRIPTS_APPLIED_BY_PROGRAMS`), before
//! the job's own params, so `oltp: {db_driver: pgsql}` still chooses PostgreSQL. Metrics are parsed by
//! `culprit_parse::oltp` with lkp's names: `oltp.transactions/s`, `oltp.queries/s`, `oltp.latency_95th_ms`, ...
//!
//! The engines' numbers differ, so runs of one must not be compared with runs of the other: on the 2-CPU development
//! VM (Debian 12: MariaDB 10.11.19, PostgreSQL 15, sysbench 1.0.20), `culprit run bench.yaml -n 3 --monitors none`
//! of `{suite: oltp, runtime: 30s, nr_threads: 2, mysql-setup: , setup-oltp: {table_size: 100000}, oltp: {db_driver:
//! [mysql, pgsql], test: [oltp_read_only, oltp_read_write]}}` measured, in transactions/s (mean of 3 runs, ± the
//! runs' relative stddev): `oltp_read_only` 1891 ± 9.9% on MariaDB and 2483 ± 9.6% on PostgreSQL,
//! `oltp_read_write` 657 ± 8.7% and 610 ± 5.8%. A job of lkp's that ran on PostgreSQL before oltp started MariaDB
//! for `mysql-setup` keeps its job id, so its older runs are PostgreSQL's.

use super::server::mariadb::MariadbHost;
use super::server::postgres::{Connection, PostgresHost};
use super::server::throwaway;
use super::{ParamKind, ParamSpec, Params, Program, ProgramContext, ProgramError, ProgramPlan};
use crate::process::{Finished, Invocation};

pub struct Oltp;

const PROGRAM: &str = "oltp";

const INSTALL_HINT: &str = "install it with: apt-get install sysbench (oltp runs sysbench's OLTP tests against a \
                            throwaway MariaDB or PostgreSQL server)";

/// The servers sysbench's tests run against, by sysbench's `--db-driver` names.
const DRIVERS: &[&str] = &["mysql", "pgsql"];

/// sysbench's OLTP tests, which run on either server, by the names of their Lua scripts.
const TESTS: &[&str] = &[
    "oltp_read_only",
    "oltp_read_write",
    "oltp_write_only",
    "oltp_point_select",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_insert",
    "oltp_delete",
];

const SPECS: &[ParamSpec] = &[
    ParamSpec {
        name: "db_driver",
        kind: ParamKind::OneOf(DRIVERS),
        doc: "the throwaway server: mysql (MariaDB; lkp's mysql-setup gives it) or pgsql (PostgreSQL, the default)",
    },
    ParamSpec { name: "nr_threads", kind: ParamKind::CountOrShare, doc: "threads (--threads), or a share of the CPUs" },
    ParamSpec { name: "runtime", kind: ParamKind::Duration, doc: "run time (--time)" },
    ParamSpec { name: "table_size", kind: ParamKind::Positive, doc: "rows per table (--table-size)" },
    ParamSpec { name: "tables", kind: ParamKind::Positive, doc: "tables (--tables)" },
    ParamSpec { name: "test", kind: ParamKind::OneOf(TESTS), doc: "sysbench's OLTP test" },
];

/// PostgreSQL's default `max_connections`, of which it keeps 3 for superusers; sysbench opens one per thread.
const DEFAULT_MAX_CONNECTIONS: u64 = 100;

/// The threads past which lkp's `mysql-setup` gives MySQL `--max-connections` of twice the threads (MariaDB's own
/// default, 151, would do up to 150).
const LKP_MYSQL_THREADS: u64 = 100;

/// sysbench's options for a PostgreSQL connection.
fn connection_options(conn: &Connection) -> Vec<String> {
    let mut options = vec!["--db-driver=pgsql".to_string()];
    if let Some(host) = &conn.host {
        options.push(format!("--pgsql-host={host}"));
    }
    if let Some(port) = conn.port {
        options.push(format!("--pgsql-port={port}"));
    }
    if let Some(user) = &conn.user {
        options.push(format!("--pgsql-user={user}"));
    }
    if let Some(dbname) = &conn.dbname {
        options.push(format!("--pgsql-db={dbname}"));
    }
    options
}

impl Oltp {
    /// The plan on a machine described by `host` (PostgreSQL's) and `mariadb`; `free_port` is asked only when a
    /// socket cannot be used.
    pub fn plan_on(
        &self,
        p: &Params,
        ctx: &ProgramContext,
        host: &PostgresHost,
        mariadb: &MariadbHost,
        free_port: &dyn Fn() -> Option<u16>,
    ) -> Result<ProgramPlan, ProgramError> {
        let threads = p.count_or_share("nr_threads", ctx.nr_cpu)?.unwrap_or(1).max(1);
        let secs = p.run_time_secs("runtime", "reads --time=0 as no time limit")?.unwrap_or(600);
        let test = p.one_of("test", TESTS)?.unwrap_or_else(|| "oltp_read_only".to_string());
        let tables = p.positive_count("tables")?.unwrap_or(1);
        let table_size = p.positive_count("table_size")?.unwrap_or(10_000);

        let driver = p.one_of("db_driver", DRIVERS)?.unwrap_or_else(|| "pgsql".to_string());

        // Every sysbench thread holds a connection; past the default, the server is started with room for twice
        // the threads, as lkp's mysql-setup does for MySQL.
        let room = threads.saturating_mul(2).to_string();
        let (mut setup, cleanup, retry, connection) = if driver == "mysql" {
            let mut settings = Vec::new();
            if threads > LKP_MYSQL_THREADS {
                settings.push(("max-connections".to_string(), room));
            }
            let server = throwaway(PROGRAM, ctx, mariadb, free_port, &settings)?;
            (server.setup, server.cleanup, server.retry, server.connection.sysbench_options())
        } else {
            let mut settings = Vec::new();
            if threads.saturating_add(3) > DEFAULT_MAX_CONNECTIONS {
                settings.push(("max_connections".to_string(), room));
            }
            let server = throwaway(PROGRAM, ctx, host, free_port, &settings)?;
            (server.setup, server.cleanup, server.retry, connection_options(&server.connection))
        };
        let mut common = vec!["sysbench".to_string(), test];
        common.extend(connection);
        common.extend([format!("--tables={tables}"), format!("--table-size={table_size}")]);

        let mut prepare = common.clone();
        prepare.push("prepare".into());
        let mut run = common;
        run.extend([format!("--threads={threads}"), format!("--time={secs}"), "--events=0".into(), "run".into()]);

        setup.push(Invocation::new(prepare));
        Ok(ProgramPlan { setup, main: Invocation::new(run), executions: 1, warmups: 0, cleanup, retry })
    }
}

impl Program for Oltp {
    fn name(&self) -> &'static str {
        PROGRAM
    }
    fn binary(&self) -> &'static str {
        "sysbench"
    }
    fn install_hint(&self) -> &'static str {
        INSTALL_HINT
    }
    fn params(&self) -> &'static [ParamSpec] {
        SPECS
    }
    fn plan(&self, p: &Params, ctx: &ProgramContext) -> Result<ProgramPlan, ProgramError> {
        self.plan_on(p, ctx, &PostgresHost::detect(), &MariadbHost::detect(), &super::free_local_port)
    }
    fn failure_line<'a>(&self, finished: &'a Finished) -> Option<&'a str> {
        super::sysbench::sysbench_failure_line(finished)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::{Exit, Usage};
    use crate::program::server::mariadb::test_host as mariadb;
    use crate::program::server::no_port;
    use crate::program::server::postgres::test_host as host;
    use crate::program::{ctx, params};
    use std::path::Path;

    #[test]
    fn lkps_job_prepares_the_tables_on_a_throwaway_server_and_runs_read_only() {
        // lkp's jobs/oltp.yaml: nr_threads 100%, runtime 600s, setup-oltp's table_size 1000000.
        let p = params("oltp", &[("nr_threads", "100%"), ("runtime", "600s"), ("table_size", "1000000")]);
        let plan = Oltp.plan_on(&p, &ctx(), &host(true), &mariadb(true), &no_port).unwrap();
        let setup: Vec<String> = plan.setup.iter().map(Invocation::display).collect();
        assert_eq!(plan.setup[0].summary(), "chown postgres /tmp/culprit-scratch");
        assert!(setup[1].contains("initdb -D /tmp/culprit-scratch/data -U postgres"), "{}", setup[1]);
        assert!(setup[2].contains("pg_ctl -D /tmp/culprit-scratch/data"), "{}", setup[2]);
        let connection = "--db-driver=pgsql --pgsql-host=/tmp/culprit-scratch --pgsql-port=5432 --pgsql-user=postgres \
                          --pgsql-db=postgres";
        assert_eq!(setup[3], format!("sysbench oltp_read_only {connection} --tables=1 --table-size=1000000 prepare"));
        assert_eq!(
            plan.main.display(),
            format!(
                "sysbench oltp_read_only {connection} --tables=1 --table-size=1000000 --threads=4 --time=600 --events=0 \
                 run"
            )
        );
        assert!(plan.cleanup[0].display().ends_with("pg_ctl -D /tmp/culprit-scratch/data -m fast -w stop"));
        assert!(!setup[2].contains("max_connections"), "4 threads fit the default: {}", setup[2]);
    }

    #[test]
    fn db_driver_mysql_runs_the_same_tests_on_a_throwaway_mariadb() {
        // What lkp's jobs/oltp.yaml gets through its mysql-setup key, under root.
        let p = params("oltp", &[("db_driver", "mysql"), ("nr_threads", "100%"), ("table_size", "1000000")]);
        let plan = Oltp.plan_on(&p, &ctx(), &host(true), &mariadb(true), &no_port).unwrap();
        let setup: Vec<String> = plan.setup.iter().map(Invocation::display).collect();
        assert_eq!(plan.setup[0].summary(), "chown mysql /tmp/culprit-scratch");
        assert!(setup[1].contains("mariadb-install-db --no-defaults"), "{}", setup[1]);
        assert!(setup[2].contains("setsid /usr/sbin/mariadbd"), "{}", setup[2]);
        assert!(setup[3].ends_with("-e 'CREATE DATABASE sbtest'"), "{}", setup[3]);
        let connection = "--db-driver=mysql --mysql-socket=/tmp/culprit-scratch/mysqld.sock --mysql-user=root \
                          --mysql-db=sbtest";
        assert_eq!(setup[4], format!("sysbench oltp_read_only {connection} --tables=1 --table-size=1000000 prepare"));
        assert_eq!(
            plan.main.display(),
            format!("sysbench oltp_read_only {connection} --tables=1 --table-size=1000000 --threads=4 --time=600 \
                     --events=0 run")
        );
        assert!(plan.cleanup[0].display().ends_with("--user=root shutdown"), "{}", plan.cleanup[0].display());
        assert!(!setup[2].contains("max-connections"), "4 threads fit MariaDB's default: {}", setup[2]);
        // lkp's mysql-setup gives twice the threads past 100, and only then.
        for (threads, room) in [("100", None), ("101", Some("--max-connections=202 ")), ("256", Some("=512 "))] {
            let p = params("oltp", &[("db_driver", "mysql"), ("nr_threads", threads)]);
            let plan = Oltp.plan_on(&p, &ctx(), &host(false), &mariadb(false), &no_port).unwrap();
            let start = plan.setup[1].display();
            match room {
                Some(room) => assert!(start.contains(room), "{threads}: {start}"),
                None => assert!(!start.contains("max-connections"), "{threads}: {start}"),
            }
        }
        // Without MariaDB, the job is refused before it runs, whether or not PostgreSQL is there.
        let without = MariadbHost { tools: Err("mariadbd"), ..mariadb(true) };
        let err = Oltp.plan_on(&p, &ctx(), &host(true), &without, &no_port).unwrap_err();
        let said = "'mariadbd' is not installed; install it with: apt-get install mariadb-server";
        assert!(err.to_string().contains(said), "{err}");
    }

    #[test]
    fn many_threads_get_room_for_their_connections() {
        let p = params("oltp", &[("nr_threads", "256"), ("runtime", "5"), ("test", "oltp_read_write")]);
        let plan = Oltp.plan_on(&p, &ctx(), &host(false), &mariadb(false), &no_port).unwrap();
        assert!(plan.setup[1].display().contains("-c max_connections=512"), "{}", plan.setup[1].display());
        assert!(plan.main.display().starts_with("sysbench oltp_read_write "), "{}", plan.main.display());
        assert!(plan.main.display().contains("--threads=256 --time=5 "), "{}", plan.main.display());
    }

    #[test]
    fn a_failed_run_is_said_by_sysbenchs_first_fatal_line() {
        // sysbench's words when the server is gone (recorded; crates/culprit-parse/tests/data/bad/oltp-no-server).
        let recorded = Path::new(env!("CARGO_MANIFEST_DIR")).join("../culprit-parse/tests/data/bad/oltp-no-server");
        let stdout = std::fs::read_to_string(recorded).unwrap();
        let finished = Finished { exit: Exit::Code(1), stdout, stderr: String::new(), usage: Usage::default() };
        let line = Oltp.failure_line(&finished).unwrap_or_default();
        assert!(line.starts_with("FATAL: Connection to database failed: connection to server on socket"), "{line}");
    }

    #[test]
    fn bad_params_and_a_missing_server_are_reported_before_running() {
        for (pairs, needle) in [
            (vec![("runtime", "0")], "give at least 1s"),
            (vec![("tables", "0")], "0 would run nothing"),
            (vec![("test", "tpcc")], "oltp_read_write"),
            (vec![("nr_threads", "0")], "0 would run nothing"),
            (vec![("db_driver", "oracle")], "mysql"),
        ] {
            let p = params("oltp", &pairs);
            let err = Oltp.plan_on(&p, &ctx(), &host(false), &mariadb(false), &no_port).unwrap_err();
            assert!(err.to_string().contains(needle), "{pairs:?}: {err}");
        }
        let no_server = PostgresHost { tools: Err("initdb"), as_root: false, account: false };
        let err = Oltp.plan_on(&params("oltp", &[]), &ctx(), &no_server, &mariadb(false), &no_port).unwrap_err();
        let said = "oltp: 'initdb' is not installed; install it with: apt-get install postgresql";
        assert!(err.to_string().contains(said), "{err}");
    }
}
