//! A throwaway MariaDB server for one run, as lkp's `mysql-setup` starts MySQL for its `oltp`: found, made in the
//! run's scratch directory, started, and stopped. The PostgreSQL counterpart is [`super::postgres`].
//!
//! 1. (as root) `chown mysql <scratch>`, and the server's commands run as `mysql` through `runuser -u mysql --`
//!    (lkp starts `mysqld --user=mysql`; the mechanism is PostgreSQL's, [`super::postgres::as_account`]);
//! 2. `mariadb-install-db --no-defaults --datadir=<scratch>/data --tmpdir=<scratch>
//!    --auth-root-authentication-method=normal --skip-test-db`: MariaDB's `root` then logs in without a password
//!    from any account, so sysbench's `--mysql-user=root` needs no socket authentication and no
//!    `--skip-grant-tables`; the temporary files stay in the scratch directory, the server's too;
//! 3. `setsid mariadbd --no-defaults --datadir=... --socket=<scratch>/mysqld.sock --skip-networking ...` in the
//!    background, then `mariadb-admin ping` until it answers (120 s at most, its log on stderr if it dies first).
//!    When the scratch path is too long for a socket address, the server listens on 127.0.0.1 at a free port
//!    instead, with its socket under the temp directory. `--no-defaults` keeps `/etc/mysql`'s settings (the system
//!    server's socket and port) out of it;
//! 4. `mariadb -e 'CREATE DATABASE sbtest'`, sysbench's default database;
//!
//! then the program's own setup and measured command, and in cleanup `mariadb-admin shutdown`, which returns once
//! the server is gone. `setsid` takes the server out of the setup step's process group, which is killed when the step
//! ends; the server still carries the run's step token in its environment, so a culprit killed with `kill -9` leaves
//! it for the next culprit to take up the work to kill (`step_record::reap`), as it does PostgreSQL's postmaster.

use super::postgres::{as_account, hand_over};
use super::{ProgramContext, ProgramError};
use crate::process::{find_in_path, shell_quote, Invocation};
use std::path::{Path, PathBuf};

/// What to install for the server.
pub const SERVER_INSTALL_HINT: &str =
    "install it with: apt-get install mariadb-server (oltp runs sysbench against a throwaway MariaDB server when the \
     job has lkp's mysql-setup or db_driver: mysql)";

/// The account the server runs as under root, which Debian's server package creates.
pub const ACCOUNT: &str = "mysql";

/// The MariaDB user clients log in as (`mariadb-install-db` makes it, without a password).
pub const SUPERUSER: &str = "root";

/// The database clients use: sysbench's default, made once the server is up.
pub const DATABASE: &str = "sbtest";

/// How long the server gets to accept connections, as `pg_ctl -t 120` gives PostgreSQL.
const START_LIMIT_SECS: u32 = 120;

/// The four programs of a MariaDB (or MySQL) installation the throwaway server needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tools {
    /// `mariadbd`, or MySQL's `mysqld`.
    pub server: PathBuf,
    /// `mariadb-install-db`, or `mysql_install_db`.
    pub install_db: PathBuf,
    /// `mariadb-admin`, or `mysqladmin`: pings and stops the server.
    pub admin: PathBuf,
    /// `mariadb`, or `mysql`: creates the database.
    pub client: PathBuf,
}

/// What the throwaway server needs from this machine, found once per plan (and given by hand in tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MariadbHost {
    /// The server's programs; `Err` names the first one missing.
    pub tools: Result<Tools, &'static str>,
    /// Whether Culprit runs as root, so the server runs as `mysql`.
    pub as_root: bool,
    /// Whether the `mysql` account exists.
    pub mysql_user: bool,
}

impl MariadbHost {
    /// This machine's MariaDB programs and account.
    pub fn detect() -> Self {
        let as_root = crate::process::effective_uid() == 0;
        MariadbHost { tools: find_tools(), as_root, mysql_user: crate::process::user_exists(ACCOUNT) }
    }
}

/// The first of `names` in `PATH`, else in `/usr/sbin` or `/usr/libexec`, where Debian and RHEL keep the server and
/// which a user's `PATH` often lacks (`find_in_path` of a name with a slash checks that it is an executable file).
fn find_tool(names: &[&str]) -> Option<PathBuf> {
    names.iter().find_map(|name| {
        let elsewhere = || ["/usr/sbin", "/usr/libexec"].iter().find_map(|dir| find_in_path(&format!("{dir}/{name}")));
        find_in_path(name).or_else(elsewhere)
    })
}

/// MariaDB's programs, by their MariaDB names first and MySQL's after; the error names the first one missing.
fn find_tools() -> Result<Tools, &'static str> {
    let find = |names: &'static [&'static str]| find_tool(names).ok_or(names[0]);
    Ok(Tools {
        server: find(&["mariadbd", "mysqld"])?,
        install_db: find(&["mariadb-install-db", "mysql_install_db"])?,
        admin: find(&["mariadb-admin", "mysqladmin"])?,
        client: find(&["mariadb", "mysql"])?,
    })
}

/// Where clients reach the server: its Unix socket, or 127.0.0.1 at a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    Socket(String),
    Tcp(u16),
}

impl Endpoint {
    /// The MariaDB clients' options (`mariadb`, `mariadb-admin`) to reach it, after their `--no-defaults`.
    fn client_options(&self) -> Vec<String> {
        match self {
            Endpoint::Socket(path) => vec![format!("--socket={path}")],
            Endpoint::Tcp(port) => {
                ["--protocol=tcp".into(), "--host=127.0.0.1".into(), format!("--port={port}")].to_vec()
            }
        }
    }

    /// sysbench's options for the connection, its user and database included.
    pub fn sysbench_options(&self) -> Vec<String> {
        let mut options = vec!["--db-driver=mysql".to_string()];
        match self {
            Endpoint::Socket(path) => options.push(format!("--mysql-socket={path}")),
            Endpoint::Tcp(port) => options.extend(["--mysql-host=127.0.0.1".into(), format!("--mysql-port={port}")]),
        }
        options.extend([format!("--mysql-user={SUPERUSER}"), format!("--mysql-db={DATABASE}")]);
        options
    }
}

/// A throwaway server's commands, and where its clients connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThrowawayServer {
    /// The commands that make and start it and create the database, before the program's own setup.
    pub setup: Vec<Invocation>,
    /// The command that stops it.
    pub cleanup: Vec<Invocation>,
    pub endpoint: Endpoint,
}

/// The socket path `dir` gives, when it fits in `sun_path` (108 bytes with its NUL; a margin is kept).
fn socket_in(dir: &Path) -> Option<String> {
    let path = dir.join("mysqld.sock");
    let text = path.to_str()?;
    (text.starts_with('/') && text.len() <= 100).then(|| text.to_string())
}

/// The commands of a throwaway MariaDB server in `ctx`'s scratch directory for `program`, with extra server
/// `settings` given as `mariadbd --<name>=<value>` options (`max-connections`, values already checked), on `host`;
/// `free_port` is asked only when a socket cannot be used.
pub fn throwaway_server(
    program: &'static str,
    ctx: &ProgramContext,
    host: &MariadbHost,
    free_port: &dyn Fn() -> Option<u16>,
    settings: &[(String, String)],
) -> Result<ThrowawayServer, ProgramError> {
    let tools = host.tools.as_ref().map_err(|missing| ProgramError::MissingBinary {
        program,
        binary: missing.to_string(),
        hint: SERVER_INSTALL_HINT,
    })?;
    if host.as_root && !host.mysql_user {
        return Err(ProgramError::MissingBinary {
            program,
            binary: "the 'mysql' user (the throwaway MariaDB server runs as mysql, not as root)".into(),
            hint: SERVER_INSTALL_HINT,
        });
    }
    let as_server_user = |argv: Vec<String>| as_account(ACCOUNT, host.as_root, argv);
    let scratch = &ctx.scratch_dir;
    let in_scratch = |name: &str| scratch.join(name).display().to_string();
    let tool = |path: &PathBuf| path.display().to_string();

    let (endpoint, listen) = match socket_in(scratch) {
        Some(socket) => {
            let listen = vec![format!("--socket={socket}"), "--skip-networking".into()];
            (Endpoint::Socket(socket), listen)
        }
        None => {
            let port = free_port().ok_or_else(|| ProgramError::BadParam {
                program,
                key: "host".into(),
                value: String::new(),
                reason: "no free TCP port on 127.0.0.1 for the throwaway server".into(),
            })?;
            // The server always makes a socket; a name of its port's keeps it off the system server's.
            let socket = std::env::temp_dir().join(format!("culprit-mariadb-{port}.sock")).display().to_string();
            (
                Endpoint::Tcp(port),
                vec![format!("--socket={socket}"), "--bind-address=127.0.0.1".into(), format!("--port={port}")],
            )
        }
    };

    let mut setup = Vec::new();
    if host.as_root {
        setup.push(hand_over(scratch, ACCOUNT));
    }
    let data = in_scratch("data");
    // The temporary files go to the scratch directory too: two servers made at once in the same /tmp collided on
    // their temporary tables' names, and mariadb-install-db failed ("Unknown table 'mysql.tmp_user_sys'").
    let tmpdir = format!("--tmpdir={}", scratch.display());
    setup.push(as_server_user(vec![
        tool(&tools.install_db),
        "--no-defaults".into(),
        format!("--datadir={data}"),
        tmpdir.clone(),
        "--auth-root-authentication-method=normal".into(),
        "--skip-test-db".into(),
    ]));

    let log = in_scratch("mariadbd.log");
    let mut server = vec![
        tool(&tools.server),
        "--no-defaults".into(),
        format!("--datadir={data}"),
        tmpdir,
        format!("--pid-file={}", in_scratch("mariadbd.pid")),
        format!("--log-error={log}"),
    ];
    server.extend(listen);
    server.extend(settings.iter().map(|(name, value)| format!("--{name}={value}")));
    let quoted = |argv: &[String]| argv.iter().map(|w| shell_quote(w)).collect::<Vec<_>>().join(" ");
    let mut ping = vec![tool(&tools.admin), "--no-defaults".into()];
    ping.extend(endpoint.client_options());
    ping.extend([format!("--user={SUPERUSER}"), "ping".into()]);
    // The server's own log says why it did not start, and the log goes with the scratch directory, so a failed
    // start copies it to stderr, which the failed run keeps. Output goes to the log, not the step's pipes, which
    // would otherwise stay open for as long as the server runs.
    let log = shell_quote(&log);
    let tries = START_LIMIT_SECS * 10;
    let start = format!(
        "setsid {server} </dev/null >/dev/null 2>&1 & pid=$!; tries=0; \
         until {ping} >/dev/null 2>&1; do \
         if ! kill -0 $pid 2>/dev/null; then echo 'mariadbd exited:' >&2; cat {log} >&2; exit 1; fi; \
         tries=$((tries + 1)); \
         if [ $tries -ge {tries} ]; then echo 'mariadbd did not answer in {START_LIMIT_SECS} s:' >&2; \
         cat {log} >&2; kill $pid; exit 1; fi; \
         sleep 0.1; done",
        server = quoted(&server),
        ping = quoted(&ping),
    );
    setup.push(as_server_user(vec!["sh".into(), "-c".into(), start]));

    let mut create = vec![tool(&tools.client), "--no-defaults".into()];
    create.extend(endpoint.client_options());
    create.extend([format!("--user={SUPERUSER}"), "-e".into(), format!("CREATE DATABASE {DATABASE}")]);
    setup.push(Invocation::new(create));

    let mut stop = vec![tool(&tools.admin), "--no-defaults".into()];
    stop.extend(endpoint.client_options());
    stop.extend([format!("--user={SUPERUSER}"), "shutdown".into()]);
    Ok(ThrowawayServer { setup, cleanup: vec![Invocation::new(stop)], endpoint })
}

/// A machine with Debian's MariaDB, as root or not, for the plans' tests.
#[cfg(test)]
pub(crate) fn test_host(as_root: bool) -> MariadbHost {
    let tools = Tools {
        server: PathBuf::from("/usr/sbin/mariadbd"),
        install_db: PathBuf::from("/usr/bin/mariadb-install-db"),
        admin: PathBuf::from("/usr/bin/mariadb-admin"),
        client: PathBuf::from("/usr/bin/mariadb"),
    };
    MariadbHost { tools: Ok(tools), as_root, mysql_user: true }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::ctx;
    use crate::program::postgres::no_port;

    #[test]
    fn under_root_the_server_is_made_and_run_as_mysql_on_a_socket_of_the_scratch_directory() {
        let server = throwaway_server("oltp", &ctx(), &test_host(true), &no_port, &[]).unwrap();
        let setup: Vec<String> = server.setup.iter().map(Invocation::display).collect();
        assert_eq!(server.setup[0].summary(), "chown mysql /tmp/culprit-scratch");
        assert_eq!(
            setup[1],
            "runuser -u mysql -- /usr/bin/mariadb-install-db --no-defaults --datadir=/tmp/culprit-scratch/data \
             --tmpdir=/tmp/culprit-scratch --auth-root-authentication-method=normal --skip-test-db"
        );
        assert!(setup[2].starts_with("runuser -u mysql -- sh -c "), "{}", setup[2]);
        let start = &server.setup[2].argv[6];
        assert!(
            start.starts_with(
                "setsid /usr/sbin/mariadbd --no-defaults --datadir=/tmp/culprit-scratch/data \
                 --tmpdir=/tmp/culprit-scratch --pid-file=/tmp/culprit-scratch/mariadbd.pid \
                 --log-error=/tmp/culprit-scratch/mariadbd.log --socket=/tmp/culprit-scratch/mysqld.sock \
                 --skip-networking </dev/null"
            ),
            "{start}"
        );
        assert!(start.contains("until /usr/bin/mariadb-admin --no-defaults --socket=/tmp/culprit-scratch/mysqld.sock"));
        assert!(start.contains("cat /tmp/culprit-scratch/mariadbd.log >&2"), "{start}");
        assert_eq!(
            setup[3],
            "/usr/bin/mariadb --no-defaults --socket=/tmp/culprit-scratch/mysqld.sock --user=root -e 'CREATE DATABASE \
             sbtest'"
        );
        assert_eq!(
            server.cleanup[0].display(),
            "/usr/bin/mariadb-admin --no-defaults --socket=/tmp/culprit-scratch/mysqld.sock --user=root shutdown"
        );
        assert_eq!(
            server.endpoint.sysbench_options().join(" "),
            "--db-driver=mysql --mysql-socket=/tmp/culprit-scratch/mysqld.sock --mysql-user=root --mysql-db=sbtest"
        );
    }

    #[test]
    fn a_long_scratch_path_listens_on_a_free_port_and_settings_reach_the_server() {
        let long = ProgramContext { nr_cpu: 2, scratch_dir: PathBuf::from(format!("/tmp/{}", "x".repeat(100))) };
        let settings = [("max-connections".to_string(), "512".to_string())];
        let server = throwaway_server("oltp", &long, &test_host(false), &|| Some(40001), &settings).unwrap();
        assert_eq!(server.endpoint, Endpoint::Tcp(40001));
        assert!(!server.setup[0].display().starts_with("chown"), "not root: {}", server.setup[0].display());
        let start = &server.setup[1].argv[2];
        assert!(start.contains("--bind-address=127.0.0.1 --port=40001 --max-connections=512 <"), "{start}");
        assert!(start.contains("culprit-mariadb-40001.sock"), "{start}");
        let stop = server.cleanup[0].display();
        assert!(stop.ends_with("--protocol=tcp --host=127.0.0.1 --port=40001 --user=root shutdown"), "{stop}");
        let err = throwaway_server("oltp", &long, &test_host(false), &no_port, &[]).unwrap_err();
        assert!(err.to_string().contains("no free TCP port"), "{err}");
    }

    #[test]
    fn a_machine_without_mariadb_or_its_account_is_told_what_to_install() {
        let missing = MariadbHost { tools: Err("mariadbd"), as_root: false, mysql_user: false };
        let err = throwaway_server("oltp", &ctx(), &missing, &no_port, &[]).unwrap_err();
        assert!(err.to_string().starts_with("oltp: 'mariadbd' is not installed; install it with: apt-get install \
                                             mariadb-server"), "{err}");
        let no_account = MariadbHost { mysql_user: false, ..test_host(true) };
        let err = throwaway_server("oltp", &ctx(), &no_account, &no_port, &[]).unwrap_err();
        assert!(err.to_string().contains("the 'mysql' user"), "{err}");
    }
}
