//! A throwaway MariaDB server for one run, as lkp's `mysql-setup` starts MySQL for its `oltp`: MariaDB's parts of
//! the steps every throwaway server goes through ([`super`]). The PostgreSQL counterpart is [`super::postgres`].
//!
//! 1. (as root) `chown mysql <scratch>`, and the server's commands run as `mysql` through `runuser -u mysql --`
//!    (lkp starts `mysqld --user=mysql`);
//! 2. `mariadb-install-db --no-defaults --datadir=<scratch>/data --tmpdir=<scratch>
//!    --auth-root-authentication-method=normal --skip-test-db`: MariaDB's `root` then logs in without a password
//!    from any account, so sysbench's `--mysql-user=root` needs no socket authentication and no
//!    `--skip-grant-tables`; the temporary files stay in the scratch directory, the server's too;
//! 3. `setsid mariadbd --no-defaults --datadir=... --socket=<scratch>/mysqld.sock --skip-networking ...` in the
//!    background, then `mariadb-admin ping` until it answers (120 s at most, its log on stderr if it dies first).
//!    When the scratch path is too long for a socket address, the server listens on 127.0.0.1 at a free port
//!    instead, for sysbench, and makes its socket in its data directory, where it runs (`--socket=mysqld.sock`, a
//!    name the path is not too long for). `--no-defaults` keeps `/etc/mysql`'s settings (the system server's socket
//!    and port) out of it;
//! 4. `mariadb -e 'CREATE DATABASE sbtest'`, sysbench's default database;
//!
//! then the program's own setup and measured command, and in cleanup `mariadb-admin shutdown`, which returns once
//! the server is gone. Culprit's own clients (the ping, the database's creation, the shutdown) reach the server by
//! its socket whichever way sysbench does: by the port, another server that took the port first would answer the
//! ping, and be shut down. `setsid` takes the server out of the setup step's process group,
//! which is killed when the step ends; the server still carries the run's step token in its environment, so a culprit
//! killed with `kill -9` leaves it for the next culprit to take up the work to kill (`step_record::reap`), as it does
//! PostgreSQL's postmaster.

use super::{Command, Engine, Host, Listen, Parts, Start};
use crate::process::{find_in_path, Invocation};
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

/// The server's socket file: in the scratch directory when the server listens on it, else (on a port) a name relative
/// to its data directory, where it runs.
const SOCKET: &str = "mysqld.sock";

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

/// What the throwaway server needs from this machine.
pub type MariadbHost = Host<Tools>;

/// The first of `names` in `PATH`, else in `/usr/sbin` or `/usr/libexec`, where Debian and RHEL keep the server and
/// which a user's `PATH` often lacks (`find_in_path` of a name with a slash checks that it is an executable file).
fn find_tool(names: &[&str]) -> Option<PathBuf> {
    names.iter().find_map(|name| {
        let elsewhere = || ["/usr/sbin", "/usr/libexec"].iter().find_map(|dir| find_in_path(&format!("{dir}/{name}")));
        find_in_path(name).or_else(elsewhere)
    })
}

/// Where clients reach the server: its Unix socket, or 127.0.0.1 at a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    Socket(String),
    Tcp(u16),
}

impl Endpoint {
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

impl Engine for Tools {
    type Connection = Endpoint;
    const INSTALL_HINT: &'static str = SERVER_INSTALL_HINT;
    const ACCOUNT: &'static str = ACCOUNT;
    const MISSING_ACCOUNT: &'static str =
        "the 'mysql' user (the throwaway MariaDB server runs as mysql, not as root)";

    /// MariaDB's programs, by their MariaDB names first and MySQL's after; the error names the first one missing.
    fn find() -> Result<Tools, &'static str> {
        let find = |names: &'static [&'static str]| find_tool(names).ok_or(names[0]);
        Ok(Tools {
            server: find(&["mariadbd", "mysqld"])?,
            install_db: find(&["mariadb-install-db", "mysql_install_db"])?,
            admin: find(&["mariadb-admin", "mysqladmin"])?,
            client: find(&["mariadb", "mysql"])?,
        })
    }

    /// `<scratch>/mysqld.sock`, when it fits in `sun_path` (108 bytes with its NUL; a margin is kept).
    fn socket_in(scratch: &Path) -> Option<String> {
        let path = scratch.join(SOCKET);
        let text = path.to_str()?;
        (text.starts_with('/') && text.len() <= 100).then(|| text.to_string())
    }

    /// mariadb-install-db, then mariadbd with the listening options and the job's settings as
    /// `mariadbd --<name>=<value>` options (`max-connections`), pinged until it answers; once it is up, sysbench's
    /// database; `mariadb-admin shutdown` to stop it.
    fn parts(&self, scratch: &Path, listen: &Listen, settings: &[(String, String)]) -> Parts<Endpoint> {
        let in_scratch = |name: &str| scratch.join(name).display().to_string();
        let tool = |path: &PathBuf| path.display().to_string();
        let data = in_scratch("data");
        let (endpoint, listening, own_socket) = match listen {
            Listen::Socket(socket) => (
                Endpoint::Socket(socket.clone()),
                vec![format!("--socket={socket}"), "--skip-networking".into()],
                socket.clone(),
            ),
            // The server always makes a socket. Named relative to the data directory, where the server runs, it
            // goes with the scratch directory however the server ends: one under the temp directory stayed there
            // for good when the server was killed with SIGKILL (after a kill -9 of culprit, the next culprit's
            // reap escalates to it).
            Listen::Tcp(port) => (
                Endpoint::Tcp(*port),
                vec![format!("--socket={SOCKET}"), "--bind-address=127.0.0.1".into(), format!("--port={port}")],
                SOCKET.to_string(),
            ),
        };

        // The temporary files go to the scratch directory too: two servers made at once in the same /tmp collided
        // on their temporary tables' names, and mariadb-install-db failed ("Unknown table 'mysql.tmp_user_sys'").
        let tmpdir = format!("--tmpdir={}", scratch.display());
        let make = vec![
            tool(&self.install_db),
            "--no-defaults".into(),
            format!("--datadir={data}"),
            tmpdir.clone(),
            "--auth-root-authentication-method=normal".into(),
            "--skip-test-db".into(),
        ];

        let log = in_scratch("mariadbd.log");
        let mut server = vec![
            tool(&self.server),
            "--no-defaults".into(),
            format!("--datadir={data}"),
            tmpdir,
            format!("--pid-file={}", in_scratch("mariadbd.pid")),
            format!("--log-error={log}"),
        ];
        server.extend(listening);
        server.extend(settings.iter().map(|(name, value)| format!("--{name}={value}")));
        // Culprit's own clients reach this server by its socket, run in its data directory, which a socket in TCP
        // mode is named relative to: by the port, a ping would be answered by another server that took the port
        // first (the start then passed and the run's sysbench went to that server), and a shutdown would stop it.
        let data_dir = PathBuf::from(&data);
        let own = |client: &PathBuf, args: &[&str]| {
            let mut argv = vec![tool(client), "--no-defaults".into(), format!("--socket={own_socket}")];
            argv.push(format!("--user={SUPERUSER}"));
            argv.extend(args.iter().map(|arg| arg.to_string()));
            argv
        };
        let create = Invocation::new(own(&self.client, &["-e", &format!("CREATE DATABASE {DATABASE}")]));
        let ping = own(&self.admin, &["ping"]);
        Parts {
            make,
            start: Start::Detached { name: "mariadbd", server, ping, dir: data_dir.clone() },
            log,
            once_up: vec![create.in_dir(&data_dir)],
            stop: Command::AsCaller(Invocation::new(own(&self.admin, &["shutdown"])).in_dir(&data_dir)),
            connection: endpoint,
        }
    }
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
    Host { tools: Ok(tools), as_root, account: true }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::ctx;
    use crate::program::server::{no_port, throwaway};
    use crate::program::ProgramContext;

    #[test]
    fn under_root_the_server_is_made_and_run_as_mysql_on_a_socket_of_the_scratch_directory() {
        let server = throwaway("oltp", &ctx(), &test_host(true), &no_port, &[]).unwrap();
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
                ": > /tmp/culprit-scratch/mariadbd.log; setsid /usr/sbin/mariadbd --no-defaults --datadir=/tmp/culprit-scratch/data \
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
            server.connection.sysbench_options().join(" "),
            "--db-driver=mysql --mysql-socket=/tmp/culprit-scratch/mysqld.sock --mysql-user=root --mysql-db=sbtest"
        );
    }

    #[test]
    fn a_long_scratch_path_listens_on_a_free_port_and_settings_reach_the_server() {
        let long = ProgramContext { nr_cpu: 2, scratch_dir: PathBuf::from(format!("/tmp/{}", "x".repeat(100))) };
        let settings = [("max-connections".to_string(), "512".to_string())];
        let server = throwaway("oltp", &long, &test_host(false), &|| Some(40001), &settings).unwrap();
        assert_eq!(server.connection, Endpoint::Tcp(40001));
        assert!(!server.setup[0].display().starts_with("chown"), "not root: {}", server.setup[0].display());
        let start = &server.setup[1].argv[2];
        assert!(start.contains("--bind-address=127.0.0.1 --port=40001 --max-connections=512 <"), "{start}");
        // Its socket is in its data directory, where its own clients run, and which goes with the scratch directory.
        assert!(start.contains(" --socket=mysqld.sock --bind-address=127.0.0.1 "), "{start}");
        assert!(start.contains("until /usr/bin/mariadb-admin --no-defaults --socket=mysqld.sock --user=root ping"));
        let data = long.scratch_dir.join("data");
        assert_eq!(server.setup[1].cwd.as_ref(), Some(&data));
        let stop = &server.cleanup[0];
        assert!(stop.display().ends_with(" --socket=mysqld.sock --user=root shutdown"), "{}", stop.display());
        assert_eq!((server.setup[2].cwd.as_ref(), stop.cwd.as_ref()), (Some(&data), Some(&data)));
        let err = throwaway("oltp", &long, &test_host(false), &no_port, &[]).unwrap_err();
        assert!(err.to_string().contains("no free TCP port"), "{err}");
    }

    #[test]
    fn a_machine_without_mariadb_or_its_account_is_told_what_to_install() {
        let missing = MariadbHost { tools: Err("mariadbd"), as_root: false, account: false };
        let err = throwaway("oltp", &ctx(), &missing, &no_port, &[]).unwrap_err();
        assert!(err.to_string().starts_with("oltp: 'mariadbd' is not installed; install it with: apt-get install \
                                             mariadb-server"), "{err}");
        let no_account = MariadbHost { account: false, ..test_host(true) };
        let err = throwaway("oltp", &ctx(), &no_account, &no_port, &[]).unwrap_err();
        assert!(err.to_string().contains("the 'mysql' user"), "{err}");
    }
}
