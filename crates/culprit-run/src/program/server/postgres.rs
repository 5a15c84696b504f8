//! A throwaway PostgreSQL server for one run, shared by the programs that measure a database (pgbench, and
//! sysbench's OLTP tests as lkp's `oltp` when not on MariaDB): PostgreSQL's parts of the steps every throwaway
//! server goes through ([`super`]).
//!
//! 1. (as root) `chown postgres <scratch>`, because PostgreSQL refuses to run as root, so the cluster's commands
//!    run as `postgres` through `runuser -u postgres --`;
//! 2. `initdb -D <scratch>/data -U postgres -A trust --no-sync -E UTF8 --locale=C` (trust: nothing but this run can
//!    reach it; the superuser is `postgres` whoever runs it, so clients name one user in every case);
//! 3. `pg_ctl -D <scratch>/data -l <scratch>/postgres.log -w start`, listening only on a Unix socket in the
//!    scratch directory (port 5432 then only names the socket file, so runs never collide); when the scratch path
//!    is too long for a socket address or holds unusual characters, on 127.0.0.1 at a free port instead;
//!
//! then the program's own setup and measured command, and in cleanup `pg_ctl -m fast -w stop`. Should the run layer
//! skip the cleanup (a failed or interrupted setup), the server still goes: the scratch directory is removed after
//! every run, and a postmaster whose `postmaster.pid` has vanished shuts itself down within a minute. A culprit
//! killed with `kill -9` removes nothing: the postmaster, which `pg_ctl start` puts in a session of its own, carries
//! the run's step token, so the next culprit to take up the work kills it with the step it finds left running
//! (`step_record::reap`).

use super::{Engine, Host, Listen, Parts, Start, START_LIMIT_SECS};
use crate::process::{find_in_path, shell_quote};
use std::path::{Path, PathBuf};

/// What to install for the server, for every program that starts one: on Debian, initdb and pg_ctl come with the
/// server package.
pub const SERVER_INSTALL_HINT: &str =
    "install it with: apt-get install postgresql postgresql-client (Debian keeps pgbench, initdb and pg_ctl in /usr/lib/postgresql/<version>/bin)";

/// The throwaway cluster's superuser, whoever starts it.
pub const SUPERUSER: &str = "postgres";

/// The database clients of the throwaway cluster use (initdb creates it).
pub const DATABASE: &str = "postgres";

/// PostgreSQL's server programs: the directory that holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tools {
    /// The newest `/usr/lib/postgresql/<version>/bin` holding initdb and pg_ctl, where pgbench lives too.
    pub bin_dir: PathBuf,
}

/// What the throwaway cluster needs from this machine.
pub type PostgresHost = Host<Tools>;

/// The PostgreSQL version of a Debian `/usr/lib/postgresql/<version>` directory name, for ordering (`9.6` < `15`).
fn version_key(name: &str) -> Vec<u32> {
    name.split('.').map(|part| part.parse().unwrap_or(0)).collect()
}

/// The newest `<root>/<version>/bin` that holds both initdb and pg_ctl, else the directory of an `initdb` in
/// `PATH` (distributions that install the server binaries there).
pub fn server_bin_dir(root: &Path) -> Option<PathBuf> {
    let has_server = |dir: &Path| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file();
    let mut versions: Vec<(Vec<u32>, PathBuf)> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| (version_key(&entry.file_name().to_string_lossy()), entry.path().join("bin")))
        .filter(|(_, bin)| has_server(bin))
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Some(bin);
    }
    find_in_path("initdb").and_then(|initdb| initdb.parent().map(Path::to_path_buf)).filter(|dir| has_server(dir))
}

/// Whether the server can put its socket in `dir`: the socket address (`<dir>/.s.PGSQL.5432`) must fit in
/// `sun_path` (108 bytes with its NUL; a margin is kept), and the path must survive pg_ctl's shell and PostgreSQL's
/// list syntax unquoted.
pub fn socket_dir_usable(dir: &Path) -> bool {
    let Some(text) = dir.to_str() else {
        return false;
    };
    text.starts_with('/')
        && text.len() + "/.s.PGSQL.5432".len() <= 100
        && text.chars().all(|c| c.is_ascii_alphanumeric() || "/-_.".contains(c))
}

/// Where clients connect: a host name or socket directory, a port, a user, a database.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Connection {
    pub host: Option<String>,
    pub port: Option<u64>,
    pub user: Option<String>,
    pub dbname: Option<String>,
}

impl Connection {
    /// libpq's client options (`-h`, `-p`, `-U`) for what is given, as pgbench and psql take them.
    pub fn libpq_options(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(host) = &self.host {
            args.extend(["-h".to_string(), host.clone()]);
        }
        if let Some(port) = self.port {
            args.extend(["-p".to_string(), port.to_string()]);
        }
        if let Some(user) = &self.user {
            args.extend(["-U".to_string(), user.clone()]);
        }
        args
    }
}

impl Engine for Tools {
    type Connection = Connection;
    const INSTALL_HINT: &'static str = SERVER_INSTALL_HINT;
    const ACCOUNT: &'static str = "postgres";
    const MISSING_ACCOUNT: &'static str = "the 'postgres' user (PostgreSQL will not run as root)";

    fn find() -> Result<Tools, &'static str> {
        server_bin_dir(Path::new("/usr/lib/postgresql")).map(|bin_dir| Tools { bin_dir }).ok_or("initdb")
    }

    fn socket_in(scratch: &Path) -> Option<String> {
        socket_dir_usable(scratch).then(|| scratch.display().to_string())
    }

    /// initdb, then `pg_ctl -w start` with the listening settings and the job's (`max_wal_size=60GB`), and
    /// `pg_ctl -m fast -w stop`.
    fn parts(&self, scratch: &Path, listen: &Listen, settings: &[(String, String)]) -> Parts<Connection> {
        let data = scratch.join("data").display().to_string();
        let tool = |name: &str| self.bin_dir.join(name).display().to_string();
        let (listening, connection) = match listen {
            Listen::Socket(dir) => (
                [
                    ("listen_addresses", String::new()),
                    ("unix_socket_directories", dir.clone()),
                    ("port", "5432".into()),
                ],
                Connection { host: Some(dir.clone()), port: Some(5432), ..Connection::default() },
            ),
            Listen::Tcp(port) => (
                [
                    ("listen_addresses", "127.0.0.1".into()),
                    ("unix_socket_directories", String::new()),
                    ("port", port.to_string()),
                ],
                Connection { host: Some("127.0.0.1".into()), port: Some((*port).into()), ..Connection::default() },
            ),
        };
        let connection =
            Connection { user: Some(SUPERUSER.to_string()), dbname: Some(DATABASE.to_string()), ..connection };
        let mut server_options: Vec<String> = Vec::new();
        for (name, value) in &listening {
            server_options.extend(["-c".to_string(), shell_quote(&format!("{name}={value}"))]);
        }
        for (name, value) in settings {
            server_options.extend(["-c".to_string(), format!("{name}={value}")]);
        }

        let mut make = vec![tool("initdb"), "-D".into(), data.clone(), "-U".into(), SUPERUSER.into()];
        make.extend(["-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C"].map(String::from));
        let log = scratch.join("postgres.log").display().to_string();
        let start = [
            tool("pg_ctl"),
            "-D".into(),
            data.clone(),
            "-l".into(),
            log.clone(),
            "-w".into(),
            "-t".into(),
            START_LIMIT_SECS.to_string(),
            "-o".into(),
            server_options.join(" "),
            "start".into(),
        ];
        let stop = [tool("pg_ctl"), "-D".into(), data, "-m".into(), "fast".into(), "-w".into(), "stop".into()];
        Parts {
            make,
            start: Start::Returning(start.to_vec()),
            log,
            once_up: Vec::new(),
            stop: super::Command::AsAccount(stop.to_vec()),
            connection,
        }
    }
}

/// A machine with PostgreSQL 15's server binaries, as root or not, for the plans' tests.
#[cfg(test)]
pub(crate) fn test_host(as_root: bool) -> PostgresHost {
    Host { tools: Ok(Tools { bin_dir: PathBuf::from("/usr/lib/postgresql/15/bin") }), as_root, account: true }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_server_version_wins() {
        let root = tempfile::tempdir().unwrap();
        for version in ["9.6", "15", "13"] {
            let bin = root.path().join(version).join("bin");
            std::fs::create_dir_all(&bin).unwrap();
            for tool in ["initdb", "pg_ctl"] {
                std::fs::write(bin.join(tool), "").unwrap();
            }
        }
        // A newer version without the server binaries (client only) is skipped.
        std::fs::create_dir_all(root.path().join("17/bin")).unwrap();
        assert_eq!(server_bin_dir(root.path()), Some(root.path().join("15/bin")));
    }

    #[test]
    fn a_socket_needs_a_short_plain_path() {
        assert!(socket_dir_usable(Path::new("/tmp/culprit-scratch/pg.1.0")));
        assert!(!socket_dir_usable(Path::new("/tmp/with space")));
        assert!(!socket_dir_usable(Path::new(&format!("/tmp/{}", "x".repeat(90)))));
        assert!(!socket_dir_usable(Path::new("relative/dir")));
    }
}
