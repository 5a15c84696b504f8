//! pgbench, PostgreSQL's TPC-B-like benchmark (Debian: `postgresql`, whose `postgresql-<version>` package holds
//! pgbench, initdb and pg_ctl under `/usr/lib/postgresql/<version>/bin`; `postgresql-client` adds the `pgbench`
//! wrapper in `PATH`), run as lkp's `pgbench-setup` does: initialise with `pgbench -i`, then measure `pgbench -n`.
//!
//! The server: a job either names one (`host`, and optionally `port`, `dbname`, `user`), or, by default, each run
//! gets a throwaway cluster of its own in the run's scratch directory ([`super::server::postgres`]: initdb, pg_ctl
//! start on a socket in the scratch directory, pg_ctl stop in cleanup), into whose `postgres` database setup runs
//! `pgbench -i -s <scale_factor> -q`; then the measured `pgbench -n ...`.
//!
//! With a named server, setup is `pgbench -i -s <scale_factor> -q` against it (which DROPS and recreates the
//! `pgbench_*` tables there), and cleanup `pgbench -i -I d` drops them again. Passwords come from libpq's usual
//! places (`PGPASSWORD`, `~/.pgpass`), never from the job file, which is stored with every run.
//!
//! Param mapping (lkp's `pgbench-setup` names and defaults; `mode` and the server keys are Culprit's):
//!
//! | param | pgbench option / server setting | default |
//! |---|---|---|
//! | `scale_factor` | `pgbench -i -s` | 1 |
//! | `nr_task` | `-c` clients (count or share of CPUs, `50%`) | 1 |
//! | `worker_threads` | `-j` threads (count or share of CPUs), at most the clients | 1 |
//! | `runtime` | `-T` seconds | 300 (lkp's) |
//! | `transcations` (lkp's spelling) or `transactions` | `-t` per client, when no `runtime` is given | |
//! | `latency_limit` | `-L` milliseconds | |
//! | `mode` | `-b tpcb-like` / `simple-update` (`-N`) / `select-only` (`-S`) | `tpcb-like` |
//! | `max_wal_size`, `wal_compression`, `checkpoint_timeout`, `checkpoint_completion_target` | the throwaway server's `-c name=value` | PostgreSQL's |
//! | `host` | `-h` (a host name or a socket directory): use this server, no throwaway cluster | |
//! | `port`, `dbname`, `user` | `-p`, the database argument, `-U` (with `host` only) | libpq's |
//!
//! Like lkp, the measured run passes `-n` (no vacuum before the test: `-i` has just vacuumed). Metrics are parsed by
//! `culprit_parse::pgbench`: `pgbench.tps`, `pgbench.latency_ms`, `pgbench.transactions`, ...

use super::server::postgres::{Connection, PostgresHost, SERVER_INSTALL_HINT};
use super::server::throwaway;
use super::{ParamKind, ParamSpec, Params, Program, ProgramContext, ProgramError, ProgramPlan};
use crate::process::{find_in_path, Finished, Invocation};
use std::path::{Path, PathBuf};

pub struct Pgbench;

const PROGRAM: &str = "pgbench";

/// What to install, for every missing piece: on Debian, pgbench, initdb and pg_ctl come with the server package.
const INSTALL_HINT: &str = SERVER_INSTALL_HINT;

/// The builtin scripts pgbench runs, by their `-b` names.
const MODES: &[&str] = &["tpcb-like", "simple-update", "select-only"];

/// Server settings a job may give the throwaway cluster (lkp's `pgbench-setup` keys).
const SERVER_SETTINGS: &[&str] = &["max_wal_size", "wal_compression", "checkpoint_timeout", "checkpoint_completion_target"];

const SPECS: &[ParamSpec] = &[
    ParamSpec { name: "scale_factor", kind: ParamKind::Count, doc: "pgbench -i -s: 100,000 accounts per unit" },
    ParamSpec { name: "nr_task", kind: ParamKind::CountOrShare, doc: "clients (-c), or a share of the CPUs" },
    ParamSpec { name: "worker_threads", kind: ParamKind::CountOrShare, doc: "pgbench threads (-j), or a share of the CPUs" },
    ParamSpec { name: "runtime", kind: ParamKind::Duration, doc: "run time (-T)" },
    ParamSpec { name: "transcations", kind: ParamKind::Count, doc: "transactions per client (-t), lkp's spelling" },
    ParamSpec { name: "transactions", kind: ParamKind::Count, doc: "transactions per client (-t)" },
    ParamSpec { name: "latency_limit", kind: ParamKind::Text, doc: "latency limit in ms (-L)" },
    ParamSpec { name: "mode", kind: ParamKind::OneOf(MODES), doc: "builtin script (-b)" },
    ParamSpec { name: "max_wal_size", kind: ParamKind::Text, doc: "throwaway server setting" },
    ParamSpec { name: "wal_compression", kind: ParamKind::Text, doc: "throwaway server setting" },
    ParamSpec { name: "checkpoint_timeout", kind: ParamKind::Text, doc: "throwaway server setting" },
    ParamSpec { name: "checkpoint_completion_target", kind: ParamKind::Text, doc: "throwaway server setting" },
    ParamSpec { name: "host", kind: ParamKind::Text, doc: "an existing server's host or socket directory" },
    ParamSpec { name: "port", kind: ParamKind::Count, doc: "the existing server's port" },
    ParamSpec { name: "dbname", kind: ParamKind::Text, doc: "the existing server's database" },
    ParamSpec { name: "user", kind: ParamKind::Text, doc: "the existing server's user" },
];

/// pgbench in one of `root`'s `<version>/bin` directories or in `PATH` (`in_path`), else what to install.
fn pgbench_installed(root: &Path, in_path: Option<PathBuf>) -> Result<(), ProgramError> {
    let in_bin_dir = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .any(|entry| entry.path().join("bin/pgbench").is_file());
    if in_bin_dir || in_path.is_some() {
        Ok(())
    } else {
        Err(ProgramError::MissingBinary { program: PROGRAM, binary: "pgbench".into(), hint: INSTALL_HINT })
    }
}

/// A pgbench command line: the program, the connection's options, `middle`, and the database last.
fn pgbench(conn: &Connection, program: &str, middle: &[String]) -> Invocation {
    let mut argv = vec![program.to_string()];
    argv.extend(conn.libpq_options());
    argv.extend(middle.iter().cloned());
    argv.extend(conn.dbname.clone());
    Invocation::new(argv)
}

fn bad(key: &str, value: &str, reason: impl Into<String>) -> ProgramError {
    ProgramError::BadParam { program: PROGRAM, key: key.into(), value: value.into(), reason: reason.into() }
}

/// A server setting's value: letters, digits and dots only (`60GB`, `on`, `60min`, `0.9`), since it passes
/// through pg_ctl's shell.
fn setting_value<'a>(key: &str, value: &'a str) -> Result<&'a str, ProgramError> {
    if !value.is_empty() && value.chars().all(|c| c.is_ascii_alphanumeric() || c == '.') {
        Ok(value)
    } else {
        Err(bad(key, value, "expected a PostgreSQL setting value such as 60GB, on, 60min or 0.9"))
    }
}

/// The measured command's options (everything but the connection).
fn run_options(p: &Params, ctx: &ProgramContext) -> Result<Vec<String>, ProgramError> {
    let clients = p.count_or_share("nr_task", ctx.nr_cpu)?.unwrap_or(1).max(1);
    // pgbench cannot use more threads than clients; lkp's job file asks for 16 threads whatever the clients.
    let threads = p.count_or_share("worker_threads", ctx.nr_cpu)?.unwrap_or(1).clamp(1, clients);
    let mut args = vec!["-n".to_string(), "-c".into(), clients.to_string(), "-j".into(), threads.to_string()];
    let transactions = match p.count("transcations")? {
        Some(t) => Some(t),
        None => p.count("transactions")?,
    };
    match (p.run_time_secs("runtime", "refuses -T 0 (its run time must be 1 s or more)")?, transactions) {
        (Some(secs), _) => args.extend(["-T".to_string(), secs.to_string()]),
        (None, Some(t)) => args.extend(["-t".to_string(), t.max(1).to_string()]),
        (None, None) => args.extend(["-T".to_string(), "300".to_string()]),
    }
    if let Some(limit) = p.get("latency_limit") {
        let ok = limit.trim().parse::<f64>().is_ok_and(|ms| ms.is_finite() && ms > 0.0);
        if !ok {
            return Err(bad("latency_limit", limit, "expected a latency in milliseconds such as 10 or 2.5"));
        }
        args.extend(["-L".to_string(), limit.trim().to_string()]);
    }
    let mode = p.one_of("mode", MODES)?.unwrap_or_else(|| "tpcb-like".to_string());
    args.extend(["-b".to_string(), mode]);
    Ok(args)
}

impl Pgbench {
    /// The plan on a machine described by `host`; `free_port` is asked only when a socket cannot be used.
    pub fn plan_on(
        &self,
        p: &Params,
        ctx: &ProgramContext,
        host: &PostgresHost,
        free_port: &dyn Fn() -> Option<u16>,
    ) -> Result<ProgramPlan, ProgramError> {
        let scale = p.count("scale_factor")?.unwrap_or(1);
        if scale == 0 {
            return Err(bad("scale_factor", "0", "must be at least 1"));
        }
        let run = run_options(p, ctx)?;
        let init = vec!["-i".to_string(), "-s".into(), scale.to_string(), "-q".into()];

        if let Some(server) = p.get("host") {
            for key in SERVER_SETTINGS {
                if let Some(value) = p.get(key) {
                    return Err(bad(key, value, format!("server settings apply only to the throwaway server; set it on {server} yourself, or drop 'host'")));
                }
            }
            let conn = Connection {
                host: Some(server.to_string()),
                port: p.count("port")?,
                user: p.get("user").map(str::to_string),
                dbname: p.get("dbname").map(str::to_string),
            };
            let program = host
                .tools
                .as_ref()
                .ok()
                .map(|tools| tools.bin_dir.join("pgbench"))
                .filter(|path| path.is_file())
                .map(|path| path.display().to_string())
                .unwrap_or_else(|| PROGRAM.to_string());
            let mut plan = ProgramPlan::single(pgbench(&conn, &program, &run));
            plan.setup.push(pgbench(&conn, &program, &init));
            plan.cleanup.push(pgbench(&conn, &program, &["-i".to_string(), "-I".into(), "d".into()]));
            return Ok(plan);
        }
        for key in ["port", "dbname", "user"] {
            if let Some(value) = p.get(key) {
                return Err(bad(key, value, "applies to a server named by 'host'; without 'host' each run gets a throwaway server"));
            }
        }

        let mut settings = Vec::new();
        for key in SERVER_SETTINGS {
            if let Some(value) = p.get(key) {
                settings.push((key.to_string(), setting_value(key, value)?.to_string()));
            }
        }
        let server = throwaway(PROGRAM, ctx, host, free_port, &settings)?;
        let program = server.tools.bin_dir.join("pgbench").display().to_string();
        let mut setup = server.setup;
        setup.push(pgbench(&server.connection, &program, &init));
        let main = pgbench(&server.connection, &program, &run);
        Ok(ProgramPlan { setup, main, executions: 1, warmups: 0, cleanup: server.cleanup, retry: server.retry })
    }
}

/// The first line of pgbench's stderr that quotes a server's `FATAL:` error, else its last line.
fn pgbench_failure_line(stderr: &str) -> Option<&str> {
    let fatal = stderr.lines().map(str::trim).find(|line| line.contains("FATAL:"));
    fatal.or_else(|| super::last_line(stderr))
}

impl Program for Pgbench {
    fn name(&self) -> &'static str {
        PROGRAM
    }
    fn binary(&self) -> &'static str {
        "pgbench"
    }
    fn install_hint(&self) -> &'static str {
        INSTALL_HINT
    }
    fn params(&self) -> &'static [ParamSpec] {
        SPECS
    }

    /// The server's `FATAL:` line when there is one (a server that died under the run: "terminating connection due
    /// to unexpected postmaster exit"), not pgbench's last line, which only says the results are incomplete.
    fn failure_line<'a>(&self, finished: &'a Finished) -> Option<&'a str> {
        pgbench_failure_line(&finished.stderr)
    }

    /// pgbench in a PostgreSQL bin directory or in `PATH`. The server binaries (initdb, pg_ctl), which only a job
    /// without `host` needs, are checked when the job is planned, which also happens before anything runs.
    fn check_installed(&self) -> Result<(), ProgramError> {
        pgbench_installed(Path::new("/usr/lib/postgresql"), find_in_path("pgbench"))
    }

    fn plan(&self, p: &Params, ctx: &ProgramContext) -> Result<ProgramPlan, ProgramError> {
        self.plan_on(p, ctx, &PostgresHost::detect(), &super::free_local_port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::server::no_port;
    use crate::program::server::postgres::test_host as host;
    use crate::program::{ctx, params};

    #[test]
    fn throwaway_server_as_root_runs_as_postgres_on_a_socket_in_scratch() {
        let p = params("pgbench", &[("scale_factor", "1"), ("nr_task", "2"), ("runtime", "3s"), ("mode", "select-only")]);
        let plan = Pgbench.plan_on(&p, &ctx(), &host(true), &no_port).unwrap();
        let lines: Vec<String> = plan.setup.iter().map(Invocation::display).collect();
        assert_eq!(plan.setup[0].summary(), "chown postgres /tmp/culprit-scratch");
        assert_eq!(
            lines[1],
            "runuser -u postgres -- /usr/lib/postgresql/15/bin/initdb -D /tmp/culprit-scratch/data -U postgres -A trust --no-sync -E UTF8 --locale=C"
        );
        // The log is emptied first, so that a start tried again is told by its own words.
        let start = "runuser -u postgres -- sh -c ': > /tmp/culprit-scratch/postgres.log; /usr/lib/postgresql/15/bin/\
                     pg_ctl -D /tmp/culprit-scratch/data -l /tmp/culprit-scratch/postgres.log -w";
        assert!(lines[2].starts_with(start), "{}", lines[2]);
        assert!(lines[2].ends_with(" start || { status=$?; cat /tmp/culprit-scratch/postgres.log >&2; exit $status; }'"), "{}", lines[2]);
        assert!(lines[2].contains("-c listen_addresses= -c unix_socket_directories=/tmp/culprit-scratch -c port=5432"), "{}", lines[2]);
        assert_eq!(lines[3], "/usr/lib/postgresql/15/bin/pgbench -h /tmp/culprit-scratch -p 5432 -U postgres -i -s 1 -q postgres");
        assert_eq!(
            plan.main.display(),
            "/usr/lib/postgresql/15/bin/pgbench -h /tmp/culprit-scratch -p 5432 -U postgres -n -c 2 -j 1 -T 3 -b select-only postgres"
        );
        assert_eq!(plan.cleanup.len(), 1);
        assert!(plan.cleanup[0].display().ends_with("pg_ctl -D /tmp/culprit-scratch/data -m fast -w stop"));
    }

    #[test]
    fn not_root_runs_the_server_as_the_caller_with_the_same_superuser() {
        let p = params("pgbench", &[("nr_task", "100%"), ("worker_threads", "16"), ("transcations", "500"), ("max_wal_size", "60GB")]);
        let plan = Pgbench.plan_on(&p, &ctx(), &host(false), &no_port).unwrap();
        assert!(plan.setup.iter().all(|i| i.argv[0] != "runuser" && i.argv[0] != "chown"));
        assert!(plan.setup[1].display().contains("-c max_wal_size=60GB"), "{}", plan.setup[1].display());
        // 100% of 4 CPUs is 4 clients; 16 threads are capped at the clients; lkp's transcations gives -t.
        assert!(plan.main.display().ends_with("-p 5432 -U postgres -n -c 4 -j 4 -t 500 -b tpcb-like postgres"), "{}", plan.main.display());
        assert!(plan.setup[0].display().contains("initdb -D /tmp/culprit-scratch/data -U postgres "), "{}", plan.setup[0].display());
    }

    #[test]
    fn long_scratch_path_falls_back_to_a_local_tcp_port() {
        let mut context = ctx();
        context.scratch_dir = PathBuf::from(format!("/tmp/{}", "x".repeat(90)));
        let plan = Pgbench.plan_on(&params("pgbench", &[]), &context, &host(false), &|| Some(54321)).unwrap();
        let start = plan.setup[1].display();
        assert!(start.contains("-c listen_addresses=127.0.0.1 -c unix_socket_directories= -c port=54321"), "{start}");
        assert!(plan.main.display().contains("-h 127.0.0.1 -p 54321"), "{}", plan.main.display());
        assert!(plan.main.display().contains("-T 300"), "lkp's default runtime: {}", plan.main.display());
        let err = Pgbench.plan_on(&params("pgbench", &[]), &context, &host(false), &no_port).unwrap_err();
        assert!(err.to_string().contains("free TCP port"), "{err}");
    }

    #[test]
    fn named_server_is_initialised_measured_and_cleaned_without_a_cluster() {
        let p = params("pgbench", &[("host", "db.example"), ("port", "5433"), ("dbname", "bench"), ("user", "me"), ("scale_factor", "10")]);
        let no_bin = PostgresHost { tools: Err("initdb"), as_root: true, account: false };
        let plan = Pgbench.plan_on(&p, &ctx(), &no_bin, &no_port).unwrap();
        assert_eq!(plan.setup.len(), 1);
        assert_eq!(plan.setup[0].display(), "pgbench -h db.example -p 5433 -U me -i -s 10 -q bench");
        assert_eq!(plan.main.display(), "pgbench -h db.example -p 5433 -U me -n -c 1 -j 1 -T 300 -b tpcb-like bench");
        assert_eq!(plan.cleanup[0].display(), "pgbench -h db.example -p 5433 -U me -i -I d bench");
    }

    #[test]
    fn bad_params_and_missing_server_are_reported_before_running() {
        let no_bin = PostgresHost { tools: Err("initdb"), as_root: false, account: false };
        let err = Pgbench.plan_on(&params("pgbench", &[]), &ctx(), &no_bin, &no_port).unwrap_err();
        assert!(matches!(&err, ProgramError::MissingBinary { binary, .. } if binary == "initdb"), "{err}");
        assert!(err.to_string().contains("apt-get install postgresql"), "{err}");
        let no_user = PostgresHost { account: false, ..host(true) };
        let err = Pgbench.plan_on(&params("pgbench", &[]), &ctx(), &no_user, &no_port).unwrap_err();
        assert!(err.to_string().contains("'postgres' user"), "{err}");
        for (pairs, needle) in [
            (vec![("port", "5433")], "host"),
            (vec![("host", "h"), ("wal_compression", "on")], "throwaway"),
            (vec![("max_wal_size", "1GB; rm -rf /")], "setting value"),
            (vec![("latency_limit", "soon")], "milliseconds"),
            (vec![("scale_factor", "0")], "at least 1"),
        ] {
            let err = Pgbench.plan_on(&params("pgbench", &pairs), &ctx(), &host(false), &no_port).unwrap_err();
            assert!(err.to_string().contains(needle), "{pairs:?}: {err}");
        }
        let p = params("pgbench", &[("mode", "tpcc")]);
        assert!(p.validate(Pgbench.params(), 4).unwrap_err().to_string().contains("select-only"));
        let p = params("pgbench", &[("clients", "2")]);
        assert!(p.validate(Pgbench.params(), 4).unwrap_err().to_string().contains("nr_task"));
    }

    #[test]
    fn missing_pgbench_names_the_debian_packages() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("15/bin")).unwrap();
        let err = pgbench_installed(root.path(), None).unwrap_err();
        assert!(err.to_string().contains("'pgbench' is not installed"), "{err}");
        assert!(err.to_string().contains("apt-get install postgresql postgresql-client"), "{err}");
        assert_eq!(pgbench_installed(root.path(), Some(PathBuf::from("/usr/bin/pgbench"))), Ok(()));
        std::fs::write(root.path().join("15/bin/pgbench"), "").unwrap();
        assert_eq!(pgbench_installed(root.path(), None), Ok(()));
    }

    #[test]
    fn a_failed_runs_reason_is_the_servers_fatal_error() {
        // pgbench's stderr after the server was killed under it (QA 46), as PostgreSQL 15's pgbench prints it.
        let stderr = "pgbench: error: client 0 aborted in command 1 (SQL) of script 0; perhaps the backend died while \
                      processing\nFATAL:  terminating connection due to unexpected postmaster exit\n\
                      pgbench: error: Run was aborted; the above results are incomplete.\n";
        assert_eq!(
            pgbench_failure_line(stderr),
            Some("FATAL:  terminating connection due to unexpected postmaster exit")
        );
        assert_eq!(pgbench_failure_line("pgbench: error: boom\n"), Some("pgbench: error: boom"));
    }
}
